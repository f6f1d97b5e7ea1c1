/* dist.c — the processes of a data-parallel run (nnc_runtime.h,
 * "processes").
 *
 * Built twice: into nnc_runtime as one process (rank 0 of 1: a sum over
 * one rank is the value itself, so every call is a no-op), and with
 * -DNNC_MPI into nnc_runtime_mpi over MPI.  Generated code and the driver
 * call the same functions either way, so a build without MPI depends on
 * nothing of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_runtime.h"

#if !defined(NNC_MPI)

int nnc_dist_init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

void nnc_dist_finalize(void) {}
int nnc_dist_rank(void) { return 0; }
int nnc_dist_size(void) { return 1; }
void nnc_dist_abort(int status) { exit(status); }

int nnc_dist_check(const char *what, uint64_t hash)
{
    (void)what, (void)hash;
    return 0;
}

int nnc_dist_reserve(int64_t sum_floats, int64_t small_floats)
{
    (void)sum_floats, (void)small_floats;
    return 0;
}

void nnc_dist_batch(int64_t n, int64_t *global, int64_t *first)
{
    *global = n;
    *first = 0;
}

void nnc_dist_sum_f32(float *x, int64_t count) { (void)x, (void)count; }
void nnc_dist_sum_f64(double *x, int64_t count) { (void)x, (void)count; }
void nnc_dist_max_f32(float *x, int64_t count) { (void)x, (void)count; }
void nnc_dist_sum_start(float *x, int64_t count) { (void)x, (void)count; }
void nnc_dist_progress(void) {}
void nnc_dist_wait_all(void) {}
double nnc_dist_wait_seconds(void) { return 0; }

void nnc_dist_gather(const void *x, int64_t bytes, void *all)
{
    if (bytes > 0 && all != x)
        memcpy(all, x, (size_t)bytes);
}

void nnc_dist_bcast(void *p, int64_t bytes) { (void)p, (void)bytes; }

#else /* NNC_MPI */

/* ---- over MPI ----------------------------------------------------------------
 *
 * Why not MPI_Allreduce: its order of additions is the implementation's
 * (a tree, recursive halving, whichever the message size selects), so the
 * bits of a float sum change with the process count, the message size and
 * the MPI version, and need not even agree between ranks.  Here every sum
 * is x_0 + x_1 + ... + x_{P-1} elementwise, added left to right in rank
 * order by plain C in this file, whichever path carries the values:
 *
 *   small  (n * P <= NNC_DIST_SMALL): MPI_Allgather every rank's x into
 *          the scratch, every rank adds the P copies itself;
 *   large: a reduce-scatter made by hand -- MPI_Alltoallv sends chunk c of
 *          x (chunk sizes differ by at most one) to rank c, which adds its
 *          chunk's P pieces in rank order -- then MPI_Allgatherv of the
 *          summed chunks, in place.  Each element is still added by one
 *          rank in rank order, so the bits are those of the small path.
 *
 * Counts are cut into pieces of at most NNC_DIST_SEG elements (the sum of
 * each element does not depend on its neighbours), so the scratch is of a
 * fixed size and MPI's int counts never overflow.  Which path and how many
 * pieces depend on the count and the process count alone, never on how
 * much scratch a rank has, so every rank issues the same collectives even
 * if their nnc_dist_reserve calls differed.
 *
 * The bucketed sums (_start, _progress, _wait_all) take the large path
 * always, as non-blocking collectives: an op is MPI_Ialltoallv, then the
 * ordered add of its chunk, then MPI_Iallgatherv.  MPI wants every rank to
 * start the collectives of a communicator in the same order, but an op's
 * first phase ends at a different moment on each rank, so the second
 * phases run on their own communicator and are started strictly in the
 * order of the _start calls; the first phases (started by _start) on
 * another, and the blocking calls on a third, so that a blocking sum in
 * the backward pass (BatchNorm's) may run between them.  Open MPI moves
 * non-blocking collectives on only inside MPI calls (no progress thread):
 * _progress, called between the backward pass's ops, is what overlaps the
 * communication with the computation.
 *
 * Memory: the scratch is allocated by nnc_dist_init (a fixed size) and
 * nnc_dist_reserve (grows only); no sum, start, progress or wait call
 * allocates (MPI itself may).  When the buckets in flight would not fit
 * (or more than NNC_DIST_MAX_OPS are), _start first ends those in flight:
 * slower, the same bits, and a local decision that no other rank needs to
 * share.
 *
 * Errors: MPI_COMM_WORLD's handler, MPI_ERRORS_ARE_FATAL, is kept (and
 * inherited by the duplicates), so a failed MPI call ends the job rather
 * than leaving a rank waiting; so does a rank that dies (mpirun ends the
 * others). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include <mpi.h>

#ifndef NNC_VERSION
#define NNC_VERSION "unknown"
#endif
/* overridable so that a test can build this file with tiny pieces and
 * take every path with small data (tests/dist) */
#ifndef NNC_DIST_SEG
#define NNC_DIST_SEG (1 << 18) /* elements per piece of a sum */
#endif
#ifndef NNC_DIST_SMALL
#define NNC_DIST_SMALL (1 << 14) /* n * P at most: the allgather path */
#endif
#ifndef NNC_DIST_BYTES_PIECE
#define NNC_DIST_BYTES_PIECE (1 << 30) /* bytes per message of gather, bcast */
#endif

#define NNC_DIST_STR_(x) #x
#define NNC_DIST_STR(x) NNC_DIST_STR_(x)
/* what nnc_dist_init compares between the ranks */
#define NNC_DIST_RUNTIME "runtime " NNC_DIST_STR(NNC_RUNTIME_VERSION) " of nnc " NNC_VERSION

/* nnc_dist_check's record per rank: the hash and `what` (truncated) */
#define NNC_DIST_WHAT 56
typedef struct dist_said {
    uint64_t hash;
    char what[NNC_DIST_WHAT];
} dist_said;

enum { DIST_F32, DIST_F64 };
enum { DIST_SUM, DIST_MAX };
/* a bucket's state: its first phase (reduce-scatter) in flight, then
 * summed and waiting its turn to start the second (allgather), then that
 * in flight, then done */
enum { OP_SCATTER, OP_SUMMED, OP_GATHER, OP_DONE };

typedef struct dist_op {
    float *x;   /* the bucket, x[0 .. n) */
    int n;      /* at most NNC_DIST_SEG */
    int state;  /* OP_* */
    float *got; /* in the arena: P pieces of this rank's chunk, rank r's at r * cnt[rank] */
    int *plan;  /* 4 P ints: cnt, dsp (chunk c is x[dsp[c] .. + cnt[c])), rcnt, rdsp */
} dist_op;

static int d_ready;   /* between nnc_dist_init and nnc_dist_finalize */
static int d_ended;   /* nnc_dist_finalize ran */
static int d_we_init; /* MPI_Init_thread was ours: so is MPI_Finalize */
static int d_rank, d_size = 1;
/* blocking calls, bucket first phases, bucket second phases */
static MPI_Comm d_comm = MPI_COMM_NULL, d_comm_scatter = MPI_COMM_NULL, d_comm_gather = MPI_COMM_NULL;
static double d_wait; /* seconds blocked since nnc_dist_wait_seconds */

/* the blocking calls' scratch: one piece's P chunks (or P copies of a
 * small x) in double, P check records, P sizes; and one plan */
static void *d_scratch;
static int *d_plan;
/* the buckets: the ops in _start order, their requests (MPI_REQUEST_NULL
 * when none is in flight), the arena their pieces are received into */
static dist_op d_ops[NNC_DIST_MAX_OPS];
static MPI_Request d_reqs[NNC_DIST_MAX_OPS];
static int d_done[NNC_DIST_MAX_OPS]; /* MPI_Testsome's indices */
static int *d_op_plans;              /* NNC_DIST_MAX_OPS * 4 P ints */
static int d_nops;                   /* ops since the last end of all */
static int d_next_gather;            /* first op whose second phase is not started */
static int d_pending;                /* ops not done */
static float *d_arena;
static size_t d_arena_cap, d_arena_used; /* floats */
static int64_t d_reserved;               /* sum_floats asked so far (before init too) */

static size_t scratch_bytes(int p)
{
    size_t elems = NNC_DIST_SMALL > NNC_DIST_SEG + p ? NNC_DIST_SMALL : (size_t)NNC_DIST_SEG + (size_t)p;
    size_t bytes = elems * sizeof(double);
    size_t rec = (size_t)p * sizeof(dist_said);
    return bytes > rec ? bytes : rec;
}

/* the arena that holds every bucket of `sum_floats` floats in flight at
 * once: an op of n takes P * ceil(n / P) <= n + P - 1, and one op of a
 * whole piece must fit */
static size_t arena_floats(int64_t sum_floats)
{
    size_t p = (size_t)d_size;
    size_t want = (size_t)(sum_floats > 0 ? sum_floats : 0) + NNC_DIST_MAX_OPS * (p - 1);
    size_t least = (size_t)NNC_DIST_SEG + p;
    return want > least ? want : least;
}

static void need_ready(const char *fn)
{
    if (d_ready)
        return;
    fprintf(stderr, "nnc: %s: called %s\n", fn, d_ended ? "after nnc_dist_finalize" : "before nnc_dist_init");
    nnc_dist_abort(1);
}

/* chunk c of a piece of n: cnt[c] elements from dsp[c], sizes differing
 * by at most one; this rank receives P pieces of its own chunk */
static void plan(int n, int *pl)
{
    int p = d_size, q = n / p, r = n % p;
    int *cnt = pl, *dsp = pl + p, *rcnt = pl + 2 * p, *rdsp = pl + 3 * p;
    for (int c = 0, off = 0; c < p; c++) {
        cnt[c] = q + (c < r);
        dsp[c] = off;
        off += cnt[c];
    }
    for (int c = 0; c < p; c++) {
        rcnt[c] = cnt[d_rank];
        rdsp[c] = c * cnt[d_rank];
    }
}

/* dst[i] := got[0][i] + got[1][i] + ... in rank order (got[r] = got + r * len,
 * rank r's values): rank-outer, so that each element is added left to right
 * and the inner loop vectorizes.  MAX: the first NaN in rank order, else
 * the largest (the first of equals, so -0 and +0 come out the same
 * everywhere).  COMBINE(T) is its body for element type T, float or double. */
#define COMBINE(T) \
    do { \
        T *d = dst; \
        const T *g = got; \
        memcpy(d, g, (size_t)len * sizeof *d); \
        for (int r = 1; r < d_size; r++) { \
            const T *gr = g + (size_t)r * (size_t)len; \
            if (op == DIST_SUM) \
                for (int i = 0; i < len; i++) \
                    d[i] = d[i] + gr[i]; \
            else \
                for (int i = 0; i < len; i++) \
                    if (!isnan(d[i]) && (isnan(gr[i]) || gr[i] > d[i])) \
                        d[i] = gr[i]; \
        } \
    } while (0)

static void combine(int type, int op, void *dst, const void *got, int len)
{
    if (type == DIST_F32)
        COMBINE(float);
    else
        COMBINE(double);
}
#undef COMBINE

/* the blocking sum or max over ranks of x[0 .. count), piece by piece */
static void reduce(const char *fn, int type, int op, void *x, int64_t count)
{
    need_ready(fn);
    if (d_size == 1 || count <= 0)
        return;
    double t0 = MPI_Wtime();
    MPI_Datatype dt = type == DIST_F32 ? MPI_FLOAT : MPI_DOUBLE;
    size_t es = type == DIST_F32 ? sizeof(float) : sizeof(double);
    int p = d_size;
    for (int64_t base = 0; base < count; base += NNC_DIST_SEG) {
        int n = (int)(count - base < NNC_DIST_SEG ? count - base : NNC_DIST_SEG);
        char *xs = (char *)x + (size_t)base * es;
        if ((int64_t)n * p <= NNC_DIST_SMALL) {
            MPI_Allgather(xs, n, dt, d_scratch, n, dt, d_comm);
            combine(type, op, xs, d_scratch, n);
        } else {
            int *cnt = d_plan, *dsp = d_plan + p;
            plan(n, d_plan);
            MPI_Alltoallv(xs, cnt, dsp, dt, d_scratch, d_plan + 2 * p, d_plan + 3 * p, dt, d_comm);
            combine(type, op, xs + (size_t)dsp[d_rank] * es, d_scratch, cnt[d_rank]);
            MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, xs, cnt, dsp, dt, d_comm);
        }
    }
    d_wait += MPI_Wtime() - t0;
}

void nnc_dist_sum_f32(float *x, int64_t count) { reduce("nnc_dist_sum_f32", DIST_F32, DIST_SUM, x, count); }
void nnc_dist_sum_f64(double *x, int64_t count) { reduce("nnc_dist_sum_f64", DIST_F64, DIST_SUM, x, count); }
void nnc_dist_max_f32(float *x, int64_t count) { reduce("nnc_dist_max_f32", DIST_F32, DIST_MAX, x, count); }

/* ---- buckets ---- */

/* An op's first phase ended: sum its chunk into x, in rank order. */
static void op_scattered(dist_op *o)
{
    int *cnt = o->plan, *dsp = o->plan + d_size;
    combine(DIST_F32, DIST_SUM, o->x + dsp[d_rank], o->got, cnt[d_rank]);
    o->state = OP_SUMMED;
}

/* Starts the second phases that may start: in _start order, so that every
 * rank starts the allgathers of d_comm_gather in the same order, however
 * their first phases ended. */
static void start_gathers(void)
{
    while (d_next_gather < d_nops && d_ops[d_next_gather].state == OP_SUMMED) {
        dist_op *o = &d_ops[d_next_gather];
        MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, o->x, o->plan, o->plan + d_size, MPI_FLOAT, d_comm_gather,
                        &d_reqs[d_next_gather]);
        o->state = OP_GATHER;
        d_next_gather++;
    }
}

/* The requests at d_done[0 .. k) completed. */
static void ops_completed(int k)
{
    for (int j = 0; j < k; j++) {
        dist_op *o = &d_ops[d_done[j]];
        if (o->state == OP_SCATTER) {
            op_scattered(o);
        } else {
            o->state = OP_DONE;
            d_pending--;
        }
    }
    start_gathers();
}

/* Ends every op in flight (a pending op always has a request in flight:
 * its own, or, summed, an earlier op's whose second phase must start
 * first), then frees the arena and the table. */
static void ops_finish(void)
{
    while (d_pending > 0) {
        int k = 0;
        MPI_Waitsome(d_nops, d_reqs, &k, d_done, MPI_STATUSES_IGNORE);
        if (k == MPI_UNDEFINED) {
            fprintf(stderr, "nnc: nnc_dist_wait_all: %d buckets pending, none in flight\n", d_pending);
            nnc_dist_abort(1);
        }
        ops_completed(k);
    }
    d_nops = d_next_gather = 0;
    d_arena_used = 0;
}

static void op_start(float *x, int n)
{
    int p = d_size;
    size_t need = (size_t)p * (size_t)((n + p - 1) / p);
    if (d_nops == NNC_DIST_MAX_OPS || d_arena_used + need > d_arena_cap) {
        double t0 = MPI_Wtime();
        ops_finish();
        d_wait += MPI_Wtime() - t0;
    }
    int i = d_nops++;
    dist_op *o = &d_ops[i];
    o->x = x;
    o->n = n;
    o->got = d_arena + d_arena_used;
    d_arena_used += need;
    o->plan = d_op_plans + (size_t)i * 4 * (size_t)p;
    plan(n, o->plan);
    o->state = OP_SCATTER;
    d_pending++;
    MPI_Ialltoallv(x, o->plan, o->plan + p, MPI_FLOAT, o->got, o->plan + 2 * p, o->plan + 3 * p, MPI_FLOAT,
                   d_comm_scatter, &d_reqs[i]);
}

void nnc_dist_sum_start(float *x, int64_t count)
{
    need_ready("nnc_dist_sum_start");
    if (d_size == 1)
        return;
    for (int64_t base = 0; base < count; base += NNC_DIST_SEG)
        op_start(x + base, (int)(count - base < NNC_DIST_SEG ? count - base : NNC_DIST_SEG));
}

void nnc_dist_progress(void)
{
    if (!d_ready || d_pending == 0)
        return;
    int k = 0;
    MPI_Testsome(d_nops, d_reqs, &k, d_done, MPI_STATUSES_IGNORE);
    if (k != MPI_UNDEFINED)
        ops_completed(k);
}

void nnc_dist_wait_all(void)
{
    if (!d_ready || d_nops == 0)
        return;
    double t0 = MPI_Wtime();
    ops_finish();
    d_wait += MPI_Wtime() - t0;
}

double nnc_dist_wait_seconds(void)
{
    double s = d_wait;
    d_wait = 0;
    return s;
}

/* ---- memory ---- */

static int grow_arena(void)
{
    size_t want = arena_floats(d_reserved);
    if (want <= d_arena_cap)
        return 0;
    if (d_nops > 0)
        nnc_dist_wait_all(); /* the ops in flight point into the old one */
    float *a = malloc(want * sizeof *a);
    if (!a) {
        errno = ENOMEM;
        return -1;
    }
    free(d_arena);
    d_arena = a;
    d_arena_cap = want;
    return 0;
}

int nnc_dist_reserve(int64_t sum_floats, int64_t small_floats)
{
    /* The blocking sums work piece by piece in the scratch nnc_dist_init
     * allocated, whatever the count: small_floats is not needed here. */
    (void)small_floats;
    if (sum_floats > d_reserved)
        d_reserved = sum_floats;
    if (!d_ready || d_size == 1)
        return 0; /* nnc_dist_init allocates for it */
    return grow_arena();
}

static void release(void)
{
    free(d_scratch);
    free(d_plan);
    free(d_op_plans);
    free(d_arena);
    d_scratch = NULL, d_plan = NULL, d_op_plans = NULL, d_arena = NULL;
    d_arena_cap = 0;
}

/* ---- the job ---- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h;
}

int nnc_dist_init(int *argc, char ***argv)
{
    if (d_ready)
        return 0;
    int inited = 0, finalized = 0, level = 0;
    MPI_Finalized(&finalized);
    if (d_ended || finalized)
        return nnc_fail("nnc_dist_init: MPI was finalized (it cannot start twice)");
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &level) != MPI_SUCCESS)
            return nnc_fail("nnc_dist_init: MPI_Init_thread failed");
        d_we_init = 1;
    }
    /* OpenMP threads run the kernels, the main thread alone calls MPI */
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_FUNNELED)
        return nnc_fail("nnc_dist_init: MPI gives thread level %d, nnc needs MPI_THREAD_FUNNELED", level);
    MPI_Comm_rank(MPI_COMM_WORLD, &d_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d_size);
    /* our own communicators: the program's collectives on MPI_COMM_WORLD
     * never match ours */
    MPI_Comm_dup(MPI_COMM_WORLD, &d_comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &d_comm_scatter);
    MPI_Comm_dup(MPI_COMM_WORLD, &d_comm_gather);

    size_t p = (size_t)d_size;
    d_scratch = malloc(scratch_bytes(d_size));
    d_plan = malloc(4 * p * sizeof *d_plan);
    d_op_plans = malloc(NNC_DIST_MAX_OPS * 4 * p * sizeof *d_op_plans);
    d_ready = 1;
    if (!d_scratch || !d_plan || !d_op_plans || grow_arena() != 0) {
        release();
        d_ready = 0;
        errno = ENOMEM;
        return nnc_fail("nnc_dist_init: out of memory for the scratch of %d processes", d_size);
    }

    /* Every rank must run the same runtime: the sums' pieces, the ops'
     * phases and the generated code's calls must match one for one.  Rank
     * 0 says which differs and ends the job; the others wait to be ended
     * (and end it themselves should that not come). */
    if (nnc_dist_check(NNC_DIST_RUNTIME, fnv1a(NNC_DIST_RUNTIME)) != 0) {
        if (d_rank == 0) {
            fprintf(stderr, "nnc: every rank must run the same nnc runtime: %s\n", nnc_error());
            nnc_dist_abort(1);
        }
        sleep(10);
        nnc_dist_abort(1);
    }
    return 0;
}

void nnc_dist_finalize(void)
{
    if (!d_ready)
        return;
    nnc_dist_wait_all();
    MPI_Comm_free(&d_comm);
    MPI_Comm_free(&d_comm_scatter);
    MPI_Comm_free(&d_comm_gather);
    release();
    d_ready = 0;
    d_ended = 1;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (d_we_init && !finalized)
        MPI_Finalize();
}

int nnc_dist_rank(void) { return d_rank; }
int nnc_dist_size(void) { return d_size; }

void nnc_dist_abort(int status)
{
    /* MPI_Abort kills this process too: what it printed must be out */
    fflush(stdout);
    fflush(stderr);
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized)
        MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

int nnc_dist_check(const char *what, uint64_t hash)
{
    need_ready("nnc_dist_check");
    dist_said mine = {hash, {0}};
    snprintf(mine.what, sizeof mine.what, "%s", what ? what : "");
    if (d_size == 1)
        return 0;
    dist_said *all = d_scratch;
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, d_comm);
    for (int r = 1; r < d_size; r++) {
        if (all[r].hash == all[0].hash)
            continue;
        if (strcmp(all[r].what, all[0].what) != 0)
            return nnc_fail("rank %d has %s, rank 0 has %s", r, all[r].what, all[0].what);
        return nnc_fail("%s differs between the ranks: rank %d has %016" PRIx64 ", rank 0 has %016" PRIx64, all[0].what,
                        r, all[r].hash, all[0].hash);
    }
    return 0;
}

void nnc_dist_batch(int64_t n, int64_t *global, int64_t *first)
{
    need_ready("nnc_dist_batch");
    int64_t *all = d_scratch;
    MPI_Allgather(&n, 1, MPI_INT64_T, all, 1, MPI_INT64_T, d_comm);
    int64_t g = 0, f = 0;
    for (int r = 0; r < d_size; r++) {
        if (r == d_rank)
            f = g;
        g += all[r];
    }
    *global = g;
    *first = f;
}

void nnc_dist_gather(const void *x, int64_t bytes, void *all)
{
    need_ready("nnc_dist_gather");
    if (d_size == 1) {
        if (bytes > 0 && all != x)
            memcpy(all, x, (size_t)bytes);
        return;
    }
    /* every rank learns every size, so all take the same way */
    int64_t *sizes = d_scratch;
    MPI_Allgather(&bytes, 1, MPI_INT64_T, sizes, 1, MPI_INT64_T, d_comm);
    int64_t total = 0;
    for (int r = 0; r < d_size; r++)
        total += sizes[r];
    if (total <= NNC_DIST_BYTES_PIECE) {
        int *cnt = d_plan, *dsp = d_plan + d_size;
        for (int r = 0, off = 0; r < d_size; r++) {
            cnt[r] = (int)sizes[r];
            dsp[r] = off;
            off += cnt[r];
        }
        const void *send = d_rank == 0 && x == all ? MPI_IN_PLACE : x;
        MPI_Gatherv(send, (int)bytes, MPI_BYTE, all, cnt, dsp, MPI_BYTE, 0, d_comm);
        return;
    }
    /* more than an int of bytes: rank by rank, in pieces */
    if (d_rank != 0) {
        for (int64_t off = 0; off < bytes; off += NNC_DIST_BYTES_PIECE) {
            int64_t k = bytes - off < NNC_DIST_BYTES_PIECE ? bytes - off : NNC_DIST_BYTES_PIECE;
            MPI_Send((const char *)x + off, (int)k, MPI_BYTE, 0, 0, d_comm);
        }
        return;
    }
    char *at = all;
    if (bytes > 0 && all != x)
        memmove(at, x, (size_t)bytes);
    at += sizes[0];
    for (int r = 1; r < d_size; r++) {
        for (int64_t off = 0; off < sizes[r]; off += NNC_DIST_BYTES_PIECE) {
            int64_t k = sizes[r] - off < NNC_DIST_BYTES_PIECE ? sizes[r] - off : NNC_DIST_BYTES_PIECE;
            MPI_Recv(at + off, (int)k, MPI_BYTE, r, 0, d_comm, MPI_STATUS_IGNORE);
        }
        at += sizes[r];
    }
}

void nnc_dist_bcast(void *p, int64_t bytes)
{
    need_ready("nnc_dist_bcast");
    if (d_size == 1)
        return;
    for (int64_t off = 0; off < bytes; off += NNC_DIST_BYTES_PIECE) {
        int64_t k = bytes - off < NNC_DIST_BYTES_PIECE ? bytes - off : NNC_DIST_BYTES_PIECE;
        MPI_Bcast((char *)p + off, (int)k, MPI_BYTE, 0, d_comm);
    }
}

#endif
