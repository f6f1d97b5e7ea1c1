/* dist_test.c — the processes of nnc_runtime_mpi (runtime/dist.c), run
 * under `mpirun -np P` (P given as argv[1]; argv[2], the size of the
 * large sums, 1000003 by default).
 *
 * Every rank's input is a formula of (rank, index), so each rank computes
 * what the others hold and the expected sum with a plain loop, left to
 * right in rank order.  The values mix magnitudes from 2^-20 to 2^20, so
 * that any other order of three or more terms changes some bits (the test
 * counts them, to show that it would notice).  Results are compared bit
 * for bit with that loop, and across the ranks by gathering them to rank
 * 0 with MPI itself.  The allocator is wrapped (--wrap=malloc): the sums,
 * the buckets and their waits must not allocate (MPI is a shared library
 * with its own; the claim is about nnc's code).
 *
 * The same source is also linked with a copy of dist.c built with tiny
 * pieces (dist_test_pieces), so that every path -- many pieces, buckets
 * that do not fit and end the ones in flight, gathers in several messages
 * -- runs with small data.  Checks never change which collectives a rank
 * calls, so a failure is reported, not a hang. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "nnc_runtime.h"
#include "../runtime/check.h"
#include "../runtime/count_allocs.h"

static int me, np;

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* rank r's value at index i of test `t`: a signed mantissa times 2^-20 .. 2^20 */
static double val(int t, int r, int64_t i)
{
    uint64_t h = mix(((uint64_t)t << 56) ^ ((uint64_t)r << 40) ^ (uint64_t)i);
    double m = (double)((h >> 8) % 2000001) / 1e6 - 1.0;
    return ldexp(m, (int)(h % 41) - 20);
}
static float val32(int t, int r, int64_t i) { return (float)val(t, r, i); }

/* the expected sums: left to right in rank order; and, to show that the
 * data would catch a wrong order, the right-to-left sum's differences */
static float want32(int t, int64_t i)
{
    float s = val32(t, 0, i);
    for (int r = 1; r < np; r++)
        s = s + val32(t, r, i);
    return s;
}
static double want64(int t, int64_t i)
{
    double s = val(t, 0, i);
    for (int r = 1; r < np; r++)
        s = s + val(t, r, i);
    return s;
}
static int64_t order_matters32(int t, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        float s = val32(t, np - 1, i);
        for (int r = np - 2; r >= 0; r--)
            s = s + val32(t, r, i);
        k += s != want32(t, i);
    }
    return k;
}

/* x's bytes are the same on every rank (rank 0 compares, every rank learns) */
static void same_everywhere(const char *what, const void *x, int64_t bytes)
{
    char *all = me == 0 ? malloc((size_t)bytes * (size_t)np) : NULL;
    MPI_Gather(x, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    int differ = -1;
    if (me == 0)
        for (int r = np - 1; r > 0; r--)
            if (memcmp(all, all + (size_t)r * (size_t)bytes, (size_t)bytes) != 0)
                differ = r;
    MPI_Bcast(&differ, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECKF(differ < 0, "%s: rank %d's bits differ from rank 0's", what, differ);
    free(all);
}

static void test_sums(int64_t big, int t0)
{
    int64_t sizes[] = {1, 7, 1000, big};
    for (int k = 0; k < 4; k++) {
        int64_t n = sizes[k];
        int t = t0 + k;
        float *x = malloc((size_t)n * sizeof *x);
        double *y = malloc((size_t)n * sizeof *y);
        for (int64_t i = 0; i < n; i++) {
            x[i] = val32(t, me, i);
            y[i] = val(t, me, i);
        }
        long a0 = allocs;
        nnc_dist_sum_f32(x, n);
        nnc_dist_sum_f64(y, n);
        CHECKF(allocs == a0, "sums of %lld allocated %ld times", (long long)n, allocs - a0);
        int64_t bad32 = 0, bad64 = 0, first = -1;
        for (int64_t i = 0; i < n; i++) {
            float w = want32(t, i);
            double w64 = want64(t, i);
            if (memcmp(&x[i], &w, sizeof w) != 0 && (bad32++, first < 0))
                first = i;
            bad64 += memcmp(&y[i], &w64, sizeof w64) != 0;
        }
        CHECKF(bad32 == 0, "sum_f32 of %lld: %lld elements are not the rank-order sum (first [%lld] %.9g, want %.9g)",
               (long long)n, (long long)bad32, (long long)first, first < 0 ? 0 : x[first],
               first < 0 ? 0 : want32(t, first));
        CHECKF(bad64 == 0, "sum_f64 of %lld: %lld elements are not the rank-order sum", (long long)n, (long long)bad64);
        same_everywhere("sum_f32", x, n * (int64_t)sizeof *x);
        same_everywhere("sum_f64", y, n * (int64_t)sizeof *y);
        if (np >= 3 && n >= 1000)
            CHECKF(order_matters32(t, n) > 0, "the data of %lld would not catch a wrong order", (long long)n);
        free(x);
        free(y);
    }
}

static void nap(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* buckets of odd sizes, started one after the other with progress calls
 * (and naps, and a blocking sum as BatchNorm's backward does) between them,
 * differently on each rank, so that their phases end in different orders */
static void test_buckets(int64_t big, int t, int nb, int64_t each)
{
    int64_t sizes[] = {1, 2, 3, 17, 1000, 4097, 65537, big / 3, 5};
    int64_t total = 0;
    if (each == 0)
        nb = (int)(sizeof sizes / sizeof *sizes);
    for (int b = 0; b < nb; b++)
        total += each ? each : sizes[b];
    float *g = malloc((size_t)total * sizeof *g);
    float bn[7];
    for (int64_t i = 0; i < total; i++)
        g[i] = val32(t, me, i);
    for (int i = 0; i < 7; i++)
        bn[i] = val32(t + 1, me, i);
    long a0 = allocs;
    int64_t off = 0;
    for (int b = 0; b < nb; b++) {
        int64_t n = each ? each : sizes[b];
        nnc_dist_sum_start(g + off, n);
        off += n;
        if (each)
            continue;
        if (me % 2 == 0)
            for (int k = 0; k < 3 + b; k++)
                nnc_dist_progress();
        else
            nap(200 * (b % 3));
        if (b == 4)
            nnc_dist_sum_f32(bn, 7);
    }
    nnc_dist_progress();
    nnc_dist_wait_all();
    CHECKF(allocs == a0, "%d buckets allocated %ld times", nb, allocs - a0);
    int64_t bad = 0;
    for (int64_t i = 0; i < total; i++) {
        float w = want32(t, i);
        bad += memcmp(&g[i], &w, sizeof w) != 0;
    }
    CHECKF(bad == 0, "%d buckets (%lld floats): %lld elements are not the rank-order sum", nb, (long long)total,
           (long long)bad);
    for (int i = 0; i < 7 && each == 0; i++) {
        float w = want32(t + 1, i);
        CHECKF(memcmp(&bn[i], &w, sizeof w) == 0, "the blocking sum between buckets, [%d]", i);
    }
    same_everywhere("buckets", g, total * (int64_t)sizeof *g);
    free(g);
}

static void test_max(void)
{
    enum { N = 1003 };
    static float x[N], w[N];
    for (int i = 0; i < N; i++)
        x[i] = val32(40, me, i);
    /* a NaN on the last rank; infinities; zeros of both signs */
    if (me == np - 1)
        x[5] = NAN;
    x[6] = me % 2 ? 0.0f : -0.0f;
    x[7] = me == np / 2 ? INFINITY : -INFINITY;
    for (int i = 0; i < N; i++) {
        w[i] = val32(40, 0, i);
        for (int r = 0; r < np; r++) {
            float v = val32(40, r, i);
            v = i == 5 && r == np - 1 ? NAN
                : i == 6              ? (r % 2 ? 0.0f : -0.0f)
                : i == 7              ? (r == np / 2 ? INFINITY : -INFINITY)
                                      : v;
            if (r == 0)
                w[i] = v;
            else if (!isnan(w[i]) && (isnan(v) || v > w[i]))
                w[i] = v;
        }
    }
    nnc_dist_max_f32(x, N);
    CHECK(isnan(x[5]));
    CHECK(x[7] == INFINITY);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += i != 5 && memcmp(&x[i], &w[i], sizeof w[i]) != 0;
    CHECKF(bad == 0, "max: %d elements differ", bad);
    same_everywhere("max_f32", x, sizeof x);
}

static void test_gather_bcast(void)
{
    /* rank r sends 3r + 1 bytes, but rank 1 none */
    unsigned char mine[64], all[4096];
    int64_t bytes = me == 1 ? 0 : 3 * me + 1;
    for (int k = 0; k < bytes; k++)
        mine[k] = (unsigned char)(me * 16 + k);
    memset(all, 0xee, sizeof all);
    nnc_dist_gather(mine, bytes, all);
    if (me == 0) {
        int at = 0, bad = 0;
        for (int r = 0; r < np; r++)
            for (int k = 0; k < (r == 1 ? 0 : 3 * r + 1); k++)
                bad += all[at++] != (unsigned char)(r * 16 + k);
        CHECKF(bad == 0, "gather: %d bytes wrong", bad);
        CHECKF(all[at] == 0xee, "gather wrote past the %d bytes", at);
    }
    /* rank 0's own bytes already in place */
    float part[3] = {(float)me, (float)me + 0.5f, 1.0f};
    float every[3 * 64];
    if (me == 0)
        memcpy(every, part, sizeof part);
    nnc_dist_gather(me == 0 ? (const void *)every : part, sizeof part, every);
    if (me == 0)
        for (int r = 0; r < np; r++)
            CHECKF(every[3 * r] == (float)r && every[3 * r + 1] == (float)r + 0.5f, "gather in place, rank %d", r);

    char msg[1000];
    for (int k = 0; k < (int)sizeof msg; k++)
        msg[k] = me == 0 ? (char)(k * 7) : (char)me;
    nnc_dist_bcast(msg, sizeof msg);
    int bad = 0;
    for (int k = 0; k < (int)sizeof msg; k++)
        bad += msg[k] != (char)(k * 7);
    CHECKF(bad == 0, "bcast: %d bytes differ from rank 0's", bad);
}

static void test_check(void)
{
    CHECK(nnc_dist_check("model same", 42) == 0);
    /* the last rank differs (and with 3, rank 1 does not): named */
    int r = nnc_dist_check("model digits", me == np - 1 ? 43 : 42);
    if (np == 1) {
        CHECK(r == 0);
        return;
    }
    char want[32];
    snprintf(want, sizeof want, "rank %d ", np - 1);
    CHECKF(r == -1 && strstr(nnc_error(), want) && strstr(nnc_error(), "model digits"),
           "check: %d, \"%s\" does not name %s", r, nnc_error(), want);
    /* every rank but 0 differs: the first is named */
    r = nnc_dist_check("model digits", me == 0 ? 42 : 44);
    CHECKF(r == -1 && strstr(nnc_error(), "rank 1 "), "check: %d, \"%s\" does not name rank 1", r, nnc_error());
    /* different names: both said */
    r = nnc_dist_check(me == 1 ? "model b" : "model a", me == 1 ? 7 : 8);
    CHECKF(r == -1 && strstr(nnc_error(), "rank 1 has model b, rank 0 has model a"), "check: \"%s\"", nnc_error());
}

static void test_wait_seconds(void)
{
    nnc_dist_wait_seconds();
    if (me == 0)
        nap(500000);
    float x = 1;
    nnc_dist_sum_f32(&x, 1);
    double s = nnc_dist_wait_seconds();
    CHECKF(x == (float)np, "sum of ones: %g", x);
    if (me != 0)
        CHECKF(s > 0.25 && s < 10, "rank %d waited %g s for rank 0's 0.5 s", me, s);
    CHECKF(nnc_dist_wait_seconds() == 0, "wait_seconds does not reset");
}

/* Batch norm's statistics over a batch split across the ranks (uneven
 * shares, C and L not multiples of 16): every rank gets the joined
 * batch's mean and variance, the same bits on each, within rounding of
 * the one-process kernel over the whole batch (other summation order). */
static void test_bn_stats(void)
{
    enum { C = 5, L = 37 };
    int64_t gn = 0, first = 0;
    for (int r = 0; r < np; r++) {
        first += r < me ? 2 + r : 0;
        gn += 2 + r;
    }
    float *x = malloc(sizeof(float) * (size_t)(gn * C * L));
    float st[2 * C], want[2 * C];
    for (int64_t i = 0; i < gn * C * L; i++) /* channel c's values around c - 2, spread 1 + c */
        x[i] = (float)((int64_t)(i / L % C) - 2) + (float)(1 + i / L % C) * (float)val(7, 0, i) * 0x1p-20f;
    nnc_bn_stats_f32(gn, C, L, x, want);
    nnc_bn_stats_global_f32(2 + me, gn, C, L, x + first * C * L, st);
    for (int c = 0; c < 2 * C; c++)
        CHECKF(fabsf(st[c] - want[c]) <= 1e-5f * fabsf(want[c]) + 1e-7f, "bn stats [%d]: %.9g, one process %.9g", c,
               st[c], want[c]);
    same_everywhere("bn stats", st, sizeof st);
    free(x);
}

int main(int argc, char **argv)
{
    if (nnc_dist_init(&argc, &argv) != 0 || nnc_dist_init(&argc, &argv) != 0) {
        fprintf(stderr, "dist_test: %s\n", nnc_error());
        return 1;
    }
    me = nnc_dist_rank();
    np = nnc_dist_size();
    int want_np = argc > 1 ? atoi(argv[1]) : -1;
    int64_t big = argc > 2 ? atoll(argv[2]) : 1000003;
    int mrank, msize;
    MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
    MPI_Comm_size(MPI_COMM_WORLD, &msize);
    CHECKF(np == want_np && np == msize && me == mrank, "rank %d of %d, MPI says %d of %d, mpirun -np %d", me, np,
           mrank, msize, want_np);

    /* the global batch: uneven shares */
    int64_t global = -1, first = -1, n = 3 + 5 * me + (me == 1 ? 11 : 0), wg = 0, wf = 0;
    for (int r = 0; r < np; r++) {
        wf += r < me ? 3 + 5 * r + (r == 1 ? 11 : 0) : 0;
        wg += 3 + 5 * r + (r == 1 ? 11 : 0);
    }
    nnc_dist_batch(n, &global, &first);
    CHECKF(global == wg && first == wf, "batch: global %lld first %lld, want %lld %lld", (long long)global,
           (long long)first, (long long)wg, (long long)wf);

    /* before any reserve (the scratch of init), then reserved */
    test_sums(big, 0);
    test_buckets(big, 10, 0, 0);
    test_buckets(big, 12, 1500, 3); /* more buckets than NNC_DIST_MAX_OPS */
    CHECK(nnc_dist_reserve(2 * big, 1000) == 0);
    test_sums(big, 20);
    test_buckets(big, 30, 0, 0);
    test_max();
    test_gather_bcast();
    test_check();
    test_wait_seconds();
    test_bn_stats();

    int fails = check_failures, all_fails = 0;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    nnc_dist_finalize();
    nnc_dist_finalize();
    char name[64];
    snprintf(name, sizeof name, "dist_test rank %d of %d", me, np);
    int rc = check_summary(name);
    if (me == 0 && all_fails)
        fprintf(stderr, "dist_test: %d checks failed over the ranks\n", all_fails);
    return rc;
}
