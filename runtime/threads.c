/* threads.c — the runtime's threads, and the public kernels of kernels.def
 * split across them.
 *
 * Determinism at any thread count comes from one rule: a call is split
 * into a fixed list of work items, chosen from the shapes alone (never
 * from the thread count, except where any split gives the same bits:
 * gemm.c's blocks, max pools' planes), and each item computes the same
 * outputs with the same code whichever thread runs it.  The threads only
 * decide who runs which item.  Where items would add into one output (a
 * kernel's gradient, summed over the batch), each computes its own
 * partial and the partials are added in item order (run_ordered), never
 * one partial per thread.  So 1, 2, 3 or 8 threads give the same bits.
 *
 * Threads are OpenMP's (libgomp).  The count is nnc_set_threads()'s, or
 * by default omp_get_max_threads(): OMP_NUM_THREADS, else every CPU the
 * process may run on.  OpenBLAS runs on one thread inside nnc: nnc splits
 * its GEMMs itself (nnc_sgemm), so that BLAS's threads neither compete
 * with nnc's nor decide a summation order.  Built without OpenMP, all of
 * this runs serially, with the same items and so the same bits.
 *
 * Work buffers: a kernel that needs one is given `work` of `work_len`
 * floats (the compiler sizes it from nnc_conv.h's formula times the
 * threads the model was initialized for); the items' threads take slices
 * of one item's need each, and a call runs on as many threads as there
 * are slices.  Extra threads therefore add only their slices of scratch.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if defined(_OPENMP)
#include <omp.h>
#endif
#include <cblas.h>

#include "nnc_conv.h"
#include "nnc_isa.h"
#include "nnc_kernels.h"
#include "nnc_runtime.h"

/* ---- the thread count -------------------------------------------------------- */

static atomic_int threads_; /* 0 until chosen */

static void blas_one_thread(void)
{
#if defined(OPENBLAS_VERSION)
    static atomic_int done;
    if (!atomic_exchange(&done, 1))
        openblas_set_num_threads(1);
#endif
}

int nnc_set_threads(int n)
{
    blas_one_thread();
#if defined(_OPENMP)
    if (n < 1)
        n = omp_get_max_threads();
#else
    n = 1;
#endif
    if (n > NNC_MAX_THREADS)
        n = NNC_MAX_THREADS;
    atomic_store(&threads_, n);
    return n;
}

int nnc_threads(void)
{
    int n = atomic_load(&threads_);
    return n > 0 ? n : nnc_set_threads(0);
}

/* A GEMM's blocks (gemm_run): about one per GEMM_BLOCK_FLOPS, so that
 * threads taking each other's blocks (run_items) even out a thread that
 * the machine slows, but never less than GEMM_MIN_BLOCK_FLOPS each
 * (~10 us of products: a block repacks its panels of B and wakes a
 * thread). */
#define GEMM_BLOCK_FLOPS 8.0e6
#define GEMM_MIN_BLOCK_FLOPS 1.0e6

/* ---- fixed items ------------------------------------------------------------- */

/* [begin, end) of part i of n parts of [0, total), as even as can be */
static int64_t part(int64_t total, int64_t n, int64_t i) { return total * i / n; }

#if defined(_OPENMP)
/* Which thread runs which item.  Each thread first runs its own share of
 * the items, in order: thread t of T the items [t I / T, (t + 1) I / T),
 * as generated loops' static schedules give it about the same part of
 * the batch (the same where T divides both), so that an image a thread
 * wrote in one call is mostly read by the same thread, from its own
 * cache, in the next.  (With a dynamic schedule, half of lenet5's pool
 * after conv1 came from the other core's cache and did not scale.)  A
 * thread that has run out takes items from the end of the others'
 * shares, so that one the machine slows holds no one up.
 * A share is [next, end) in one atomic word: the owner takes `next`, a
 * thief `end - 1`, each by compare-and-swap. */
#define SHARES_MAX 64
typedef struct {
    _Alignas(64) _Atomic uint64_t w; /* next | end << 32, a cache line each */
} share;

static int64_t share_take(share *s, int own)
{
    uint64_t v = atomic_load(&s->w);
    for (;;) {
        const uint64_t next = v & 0xffffffffu, end = v >> 32;
        if (next >= end)
            return -1;
        const uint64_t nv = own ? (next + 1) | end << 32 : next | (end - 1) << 32;
        if (atomic_compare_exchange_weak(&s->w, &v, nv))
            return (int64_t)(own ? next : end - 1);
    }
}
#endif

/* Runs fn(ctx, item, slot) for item in [0, items) on at most `threads`
 * threads; slot < threads names the thread's scratch.  Inside another
 * parallel region (nested regions are inactive) it runs serially on slot
 * 0, which the caller must then own. */
static void run_items(int64_t items, int threads, void (*fn)(void *, int64_t, int), void *ctx)
{
    if (threads > items)
        threads = (int)items;
#if defined(_OPENMP)
    if (threads > 1 && !omp_in_parallel() && threads <= SHARES_MAX && items <= 0xffffffff) {
        share sh[SHARES_MAX];
        for (int t = 0; t < threads; t++)
            atomic_init(&sh[t].w, (uint64_t)part(items, threads, t) | (uint64_t)part(items, threads, t + 1) << 32);
#pragma omp parallel num_threads(threads)
        {
            const int me = omp_get_thread_num();
            int64_t i;
            while ((i = share_take(&sh[me], 1)) >= 0)
                fn(ctx, i, me);
            /* then the others' (every share, should the team be smaller) */
            for (int k = 1; k < threads; k++)
                while ((i = share_take(&sh[(me + k) % threads], 0)) >= 0)
                    fn(ctx, i, me);
        }
        return;
    }
    if (threads > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (int64_t i = 0; i < items; i++)
            fn(ctx, i, omp_get_thread_num());
        return;
    }
#else
    (void)threads;
#endif
    for (int64_t i = 0; i < items; i++)
        fn(ctx, i, 0);
}

/* The same, where item i > 0 then adds its partial into the result:
 * add(ctx, i, slot) runs for i = 1, 2, ... in that order, each after
 * fn(ctx, i, slot) and after add for i - 1. */
static void run_ordered(int64_t items, int threads, void (*fn)(void *, int64_t, int), void (*add)(void *, int64_t, int),
                        void *ctx)
{
    if (threads > items)
        threads = (int)items;
#if defined(_OPENMP)
    if (threads > 1 && !omp_in_parallel()) {
#pragma omp parallel for ordered schedule(static, 1) num_threads(threads)
        for (int64_t i = 0; i < items; i++) {
            fn(ctx, i, omp_get_thread_num());
#pragma omp ordered
            if (i > 0)
                add(ctx, i, omp_get_thread_num());
        }
        return;
    }
#else
    (void)threads;
#endif
    for (int64_t i = 0; i < items; i++) {
        fn(ctx, i, 0);
        if (i > 0)
            add(ctx, i, 0);
    }
}

/* the items a loop of `total` units of `unit_cost` each is split into:
 * one per NNC_ITEM_COST of cost, at most NNC_MAX_ITEMS and `total` */
static int64_t items_for(int64_t total, double unit_cost)
{
    double k = (double)total * unit_cost / NNC_ITEM_COST;
    int64_t n = k < 1 ? 1 : k > NNC_MAX_ITEMS ? NNC_MAX_ITEMS : (int64_t)k;
    return n < total ? n : total > 0 ? total : 1;
}

/* the threads a call may use: its scratch slices of `need` floats each in
 * `work_len` (a kernel without work passes need 0) */
static int threads_for(int64_t need, int64_t work_len)
{
    int t = nnc_threads();
    if (need > 0 && work_len / need < t)
        t = work_len / need > 0 ? (int)(work_len / need) : 1;
    return t;
}

/* ---- channel sums (a convolution's bias gradient): items of examples ------------- */

/* The generated reduction went by channels, each reading all N examples'
 * rows: at 2 threads half of them from the other core's cache, which had
 * just written them (lenet5's two bias gradients: 0.062 ms a step at 1
 * thread, 0.064 at 2).  Here items are ranges of examples, a number fixed
 * by the shape (about one per 16384 floats, at most CSUM_ITEMS), each
 * summing its rows per channel in double; then each channel's item sums
 * are added in item order.  Channels go CSUM_C at a time, so that the
 * items' sums fit on the caller's stack. */
enum { CSUM_ITEMS = 8, CSUM_C = 256 };

/* the items of a sum over x[N][C][L] (batch norm's too) */
static int64_t example_items(int64_t N, int64_t C, int64_t L)
{
    int64_t items = N * C * L / 16384;
    items = items < 1 ? 1 : items > CSUM_ITEMS ? CSUM_ITEMS : items;
    return items < N ? items : N > 0 ? N : 1;
}

typedef struct {
    int64_t N, C, L, items, c0, c1;
    const float *x;
    double *part; /* [items][CSUM_C] */
} csum_job;

static void csum_item(void *p, int64_t i, int slot)
{
    const csum_job *j = p;
    (void)slot;
    const int64_t a = part(j->N, j->items, i), b = part(j->N, j->items, i + 1);
    nnc_channel_sum_f32_serial(b - a, j->C, j->L, j->x + a * j->C * j->L, j->part + i * CSUM_C, j->c0, j->c1);
}

void nnc_channel_sum_f32(int64_t N, int64_t C, int64_t L, const float *x, float *y)
{
    double sums[CSUM_ITEMS * CSUM_C];
    const int64_t items = example_items(N, C, L);
    for (int64_t c0 = 0; c0 < C; c0 += CSUM_C) {
        csum_job j = {N, C, L, items, c0, c0 + CSUM_C < C ? c0 + CSUM_C : C, x, sums};
        run_items(items, nnc_threads(), csum_item, &j);
        for (int64_t c = j.c0; c < j.c1; c++) {
            double acc = 0;
            for (int64_t i = 0; i < items; i++)
                acc += sums[i * CSUM_C + c - c0];
            y[c] = (float)acc;
        }
    }
}

/* ---- batch norm's sums: items of examples --------------------------------------- */

/* They went by channels, as the bias gradient did (above), and for the
 * same reason each thread read every example's rows, half of them from
 * the other core's cache: the layer before and the normalization after
 * split by examples.  Now the items are ranges of examples, as many as
 * nnc_channel_sum_f32's (fixed by the shape), and each channel's item sums
 * are added in item order in double: the same bits at any thread count.
 * BN_C channels at a time, so that the items' sums fit on the caller's
 * stack (8 items x 128 channels x 3 doubles: 24 KB). */
enum { BN_C = 128 };

typedef struct {
    int64_t N, C, L, items, c0, c1;
    const float *x, *dy, *mask, *st;
    double *part; /* [items][BN_C][3] (the statistics) or [2] (the gradients) */
} bn_job;

static void bn_stats_item(void *p, int64_t i, int slot)
{
    const bn_job *j = p;
    (void)slot;
    const int64_t a = part(j->N, j->items, i), b = part(j->N, j->items, i + 1);
    nnc_bn_stats_f32_serial(b - a, j->C, j->L, j->x + a * j->C * j->L, j->part + i * 3 * BN_C, j->c0, j->c1);
}

/* mean[c] = (float)(the sum of x's rows of channel c / M) and var[c] =
 * (float)(the sum of (x - centre)^2 / M), centre = mu[c] or, mu NULL,
 * mean[c]; either output may be NULL.  Item i's sums (s_i, q_i about its
 * own float mean m_i, over n_i elements) give the squared deviations from
 * the centre exactly as q_i - 2 (centre - m_i)(s_i - n_i m_i) + n_i
 * (centre - m_i)^2: the second pass stays inside each item, while its
 * rows are in cache, and the double terms beside q_i are of the order of
 * the float rounding of m_i. */
static void bn_sums(int64_t N, int64_t C, int64_t L, const float *x, const float *mu, double M, float *mean, float *var)
{
    double sums[CSUM_ITEMS * 3 * BN_C];
    const int64_t items = example_items(N, C, L);
    for (int64_t c0 = 0; c0 < C; c0 += BN_C) {
        bn_job j = {N, C, L, items, c0, c0 + BN_C < C ? c0 + BN_C : C, x, NULL, NULL, NULL, sums};
        run_items(items, nnc_threads(), bn_stats_item, &j);
        for (int64_t c = j.c0; c < j.c1; c++) {
            const double *q = sums + 3 * (c - c0);
            double s = 0;
            for (int64_t i = 0; i < items; i++)
                s += q[i * 3 * BN_C];
            const float m = (float)(s / M);
            const double centre = mu ? mu[c] : m;
            double d = 0;
            for (int64_t i = 0; i < items; i++) {
                const double *qi = q + i * 3 * BN_C, off = centre - qi[2];
                const double n = (double)(part(N, items, i + 1) - part(N, items, i)) * (double)L;
                d += qi[1] - 2 * off * (qi[0] - n * qi[2]) + n * off * off;
            }
            if (mean)
                mean[c] = m;
            if (var)
                var[c] = (float)((d > 0 || d != d ? d : 0) / M); /* (NaN kept, rounding below 0 not) */
        }
    }
}

void nnc_bn_stats_f32(int64_t N, int64_t C, int64_t L, const float *x, float *st)
{
    bn_sums(N, C, L, x, NULL, (double)N * (double)L, st, st + C);
}

void nnc_bn_moment_f32(int64_t N, int64_t C, int64_t L, const float *x, const float *mu, double M, float *out)
{
    bn_sums(N, C, L, x, mu, M, mu ? NULL : out, mu ? out : NULL);
}

void nnc_bn_stats_global_f32(int64_t N, int64_t gN, int64_t C, int64_t L, const float *x, float *st)
{
    if (nnc_dist_size() == 1) {
        nnc_bn_stats_f32(N, C, L, x, st);
        return;
    }
    /* each process's share of the mean, summed; then its share of the
     * squared deviations from that global mean, summed: the two passes of
     * nnc_bn_stats_f32 over the joined batch */
    const double M = (double)gN * (double)L;
    nnc_bn_moment_f32(N, C, L, x, NULL, M, st);
    nnc_dist_sum_f32(st, C);
    nnc_bn_moment_f32(N, C, L, x, st, M, st + C);
    nnc_dist_sum_f32(st + C, C);
}

static void bn_grads_item(void *p, int64_t i, int slot)
{
    const bn_job *j = p;
    (void)slot;
    const int64_t a = part(j->N, j->items, i), b = part(j->N, j->items, i + 1), o = a * j->C * j->L;
    nnc_bn_grads_f32_serial(b - a, j->C, j->L, j->dy + o, j->x + o, j->mask ? j->mask + o : NULL, j->st,
                            j->part + i * 2 * BN_C, j->c0, j->c1);
}

void nnc_bn_grads_f32(int64_t N, int64_t C, int64_t L, const float *dy, const float *x, const float *mask,
                      const float *st, double eps, float *g)
{
    double sums[CSUM_ITEMS * 2 * BN_C];
    const int64_t items = example_items(N, C, L);
    for (int64_t c0 = 0; c0 < C; c0 += BN_C) {
        bn_job j = {N, C, L, items, c0, c0 + BN_C < C ? c0 + BN_C : C, x, dy, mask, st, sums};
        run_items(items, nnc_threads(), bn_grads_item, &j);
        for (int64_t c = j.c0; c < j.c1; c++) {
            double sx = 0, sd = 0;
            for (int64_t i = 0; i < items; i++) {
                sx += sums[i * 2 * BN_C + 2 * (c - c0)];
                sd += sums[i * 2 * BN_C + 2 * (c - c0) + 1];
            }
            g[c] = (float)(sx / sqrt((double)st[C + c] + eps));
            g[C + c] = (float)sd;
        }
    }
}

/* ---- max pooling: items of images ----------------------------------------------- */

typedef struct {
    int64_t NC, H, W, items;
    const float *x, *dy;
    float *y;
    int relu;
} pool_job;

/* Both passes cost about 2 H W a plane (lenet5's pool after conv2, 1024
 * planes of 10x10, took 39 us at one thread as one item).  Any split
 * gives the same bits, so the items are a multiple of the threads: each
 * thread's share is then the part of the batch it wrote before. */
static int64_t plane_items(int64_t NC, double plane_cost)
{
    const int64_t n = items_for(NC, plane_cost), t = nnc_threads();
    const int64_t r = n > 1 && n % t ? (n + t - 1) / t * t : n;
    return r < NC ? r : NC;
}
static int64_t pool_items(int64_t NC, int64_t H, int64_t W) { return plane_items(NC, 2.0 * (double)(H * W)); }

static void pool_item(void *p, int64_t i, int slot)
{
    const pool_job *j = p;
    const int64_t a = part(j->NC, j->items, i), b = part(j->NC, j->items, i + 1);
    (void)slot;
    nnc_maxpool2_f32_serial(b - a, j->H, j->W, j->x + a * j->H * j->W, j->y + a * (j->H / 2) * (j->W / 2));
}

void nnc_maxpool2_f32(int64_t NC, int64_t H, int64_t W, const float *x, float *y)
{
    pool_job j = {NC, H, W, pool_items(NC, H, W), x, NULL, y, 0};
    run_items(j.items, nnc_threads(), pool_item, &j);
}

static void pool_bwd_item(void *p, int64_t i, int slot)
{
    const pool_job *j = p;
    const int64_t a = part(j->NC, j->items, i), b = part(j->NC, j->items, i + 1);
    (void)slot;
    nnc_maxpool2_bwd_f32_serial(b - a, j->H, j->W, j->x + a * j->H * j->W, j->dy + a * (j->H / 2) * (j->W / 2),
                                j->y + a * j->H * j->W, j->relu);
}

void nnc_maxpool2_bwd_f32(int64_t NC, int64_t H, int64_t W, const float *x, const float *dy, float *dx, int relu)
{
    pool_job j = {NC, H, W, pool_items(NC, H, W), x, dy, dx, relu};
    run_items(j.items, nnc_threads(), pool_bwd_item, &j);
}

/* Any square pool, max or average: items of images, each about K² OH OW
 * taps (any split gives the same bits) */
typedef struct {
    int64_t NC, H, W, OH, OW, K, S, P, items;
    int avg, exclude;
    const float *x, *dy;
    float *y;
} gpool_job;

static void gpool_item(void *p, int64_t i, int slot)
{
    const gpool_job *j = p;
    const int64_t a = part(j->NC, j->items, i), b = part(j->NC, j->items, i + 1), hw = j->H * j->W, ohw = j->OH * j->OW;
    (void)slot;
    if (j->avg && j->dy)
        nnc_avgpool_bwd_f32_serial(b - a, j->H, j->W, j->OH, j->OW, j->K, j->S, j->P, j->exclude, j->dy + a * ohw,
                                   j->y + a * hw);
    else if (j->avg)
        nnc_avgpool_f32_serial(b - a, j->H, j->W, j->OH, j->OW, j->K, j->S, j->P, j->exclude, j->x + a * hw,
                               j->y + a * ohw);
    else if (j->dy)
        nnc_maxpool_bwd_f32_serial(b - a, j->H, j->W, j->OH, j->OW, j->K, j->S, j->P, j->x + a * hw, j->dy + a * ohw,
                                   j->y + a * hw);
    else
        nnc_maxpool_f32_serial(b - a, j->H, j->W, j->OH, j->OW, j->K, j->S, j->P, j->x + a * hw, j->y + a * ohw);
}

static void gpool_run(gpool_job j)
{
    j.items = plane_items(j.NC, (double)(j.K * j.K * j.OH * j.OW));
    run_items(j.items, nnc_threads(), gpool_item, &j);
}

void nnc_maxpool_f32(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S, int64_t P,
                     const float *x, float *y)
{
    gpool_run((gpool_job){NC, H, W, OH, OW, K, S, P, 0, 0, 0, x, NULL, y});
}

void nnc_maxpool_bwd_f32(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S, int64_t P,
                         const float *x, const float *dy, float *dx)
{
    gpool_run((gpool_job){NC, H, W, OH, OW, K, S, P, 0, 0, 0, x, dy, dx});
}

void nnc_avgpool_f32(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S, int64_t P,
                     int exclude, const float *x, float *y)
{
    gpool_run((gpool_job){NC, H, W, OH, OW, K, S, P, 0, 1, exclude, x, NULL, y});
}

void nnc_avgpool_bwd_f32(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S, int64_t P,
                         int exclude, const float *dy, float *dx)
{
    gpool_run((gpool_job){NC, H, W, OH, OW, K, S, P, 0, 1, exclude, NULL, dy, dx});
}

/* ---- causal products: one matrix, serial (generated code runs the heads
 * of a batch on the threads) ------------------------------------------------------ */

void nnc_matmul_causal_nt_f32(int64_t T, int64_t K, float alpha, const float *a, int64_t lda, const float *b,
                              int64_t ldb, float *c, int64_t ldc)
{
    nnc_matmul_causal_nt_f32_serial(T, K, alpha, a, lda, b, ldb, c, ldc);
}

void nnc_matmul_lower_nn_f32(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                             int64_t ldb, float *c, int64_t ldc)
{
    nnc_matmul_lower_nn_f32_serial(T, N, alpha, a, lda, b, ldb, c, ldc);
}

void nnc_matmul_lower_tn_f32(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                             int64_t ldb, float *c, int64_t ldc)
{
    nnc_matmul_lower_tn_f32_serial(T, N, alpha, a, lda, b, ldb, c, ldc);
}

void nnc_matmul_full_nt_f32(int64_t T, int64_t K, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                            float *c, int64_t ldc)
{
    nnc_matmul_full_nt_f32_serial(T, K, alpha, a, lda, b, ldb, c, ldc);
}

void nnc_matmul_full_nn_f32(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                            float *c, int64_t ldc)
{
    nnc_matmul_full_nn_f32_serial(T, N, alpha, a, lda, b, ldb, c, ldc);
}

void nnc_matmul_full_tn_f32(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                            float *c, int64_t ldc)
{
    nnc_matmul_full_tn_f32_serial(T, N, alpha, a, lda, b, ldb, c, ldc);
}

/* ---- softmax rows: serial (generated code runs blocks of rows on the
 * threads) ------------------------------------------------------------------------ */

void nnc_softmax_rows_f32(int64_t rows, int64_t L, int64_t r0, int causal, float alpha, const float *x, float *y)
{
    nnc_softmax_rows_f32_serial(rows, L, r0, causal, alpha, x, y);
}

void nnc_softmax_rows_bwd_f32(int64_t rows, int64_t L, int64_t r0, int causal, float alpha, const float *dy,
                              const float *p, float *dx)
{
    nnc_softmax_rows_bwd_f32_serial(rows, L, r0, causal, alpha, dy, p, dx);
}

/* ---- transposes: serial (generated code runs blocks of rows on the threads) ------- */

void nnc_transpose_f32(int64_t R, int64_t C, const float *x, int64_t ldx, float *y, int64_t ldy)
{
    nnc_transpose_f32_serial(R, C, x, ldx, y, ldy);
}

/* ---- the optimizer: items of parameters (elementwise) ----------------------------- */

typedef struct {
    nnc_optim *o;
    float *p;
    const float *g;
    int64_t items;
} optim_job;

static void optim_item(void *q, int64_t i, int slot)
{
    const optim_job *j = q;
    const int64_t n = (int64_t)j->o->n, a = part(n, j->items, i), b = part(n, j->items, i + 1);
    nnc_optim o = *j->o; /* the same update on a range of the flat view */
    (void)slot;
    o.n = (size_t)(b - a);
    o.m = o.m ? o.m + a : NULL;
    o.v = o.v ? o.v + a : NULL;
    nnc_optim_step_serial(&o, j->p + a, j->g + a);
}

void nnc_optim_step(nnc_optim *o, float *params, const float *grads)
{
    optim_job j = {o, params, grads, items_for((int64_t)o->n, 8.0)};
    run_items(j.items, nnc_threads(), optim_item, &j);
    o->step++;
}

float nnc_clip_grad_norm(float *g, size_t n, float max_norm) { return nnc_clip_grad_norm_serial(g, n, max_norm); }

/* ---- convolutions ------------------------------------------------------------------ */

int nnc_conv_direct_ok(void) { return nnc_conv_direct_ok_serial(); }

/* One job type for every convolution: items of examples.  The forward
 * pass and the data gradient write each example's output alone, so an
 * item is a range of examples and any split gives the same bits; the
 * kernel gradient sums over the examples, so its items are fixed by
 * nnc_conv_filter_items and their partial sums added in item order. */
typedef struct {
    int pass;              /* NNC_CONV_FWD, _DATA or _FILTER (nnc_conv.h) */
    int f64, relu, direct; /* direct: conv.c's kernels, else conv_cols.c's */
    int64_t N, C, H, W, F, KH, KW, stride, pad, OH, OW, items, need;
    int64_t len;                     /* the work length each call is given: need, or a caller's shorter one */
    const void *in, *w, *bias, *add; /* in: x, or dy for the gradients */
    const void *x;                   /* the kernel gradient's x */
    void *out, *work;
} conv_job;

/* the call of one item: examples [a, b) with the thread's work `wk` */
static void conv_call(const conv_job *j, int64_t a, int64_t b, void *out, void *wk)
{
    const int64_t n = b - a, xs = j->C * j->H * j->W, ys = j->F * j->OH * j->OW;
    const int64_t C = j->C, H = j->H, W = j->W, F = j->F, KH = j->KH, KW = j->KW, S = j->stride, P = j->pad;
    if (j->f64) {
        const double *in = j->in;
        double *o = out;
        if (j->pass == NNC_CONV_FWD)
            nnc_conv2d_cols_f64_serial(n, in + a * xs, j->w, o + a * ys, C, H, W, F, KH, KW, S, P, j->bias, j->relu, wk,
                                       j->len);
        else if (j->pass == NNC_CONV_DATA)
            nnc_conv2d_cols_bwd_data_f64_serial(n, in + a * ys, j->w, o + a * xs,
                                                j->add ? (const double *)j->add + a * xs : NULL, C, H, W, F, KH, KW, S,
                                                P, wk, j->len);
        else
            nnc_conv2d_cols_bwd_filter_f64_serial(n, in + a * ys, (const double *)j->x + a * xs, o, C, H, W, F, KH, KW,
                                                  S, P, wk, j->len);
        return;
    }
    const float *in = j->in, *add = j->add ? (const float *)j->add + a * xs : NULL;
    float *o = out;
    if (j->pass == NNC_CONV_FWD && !j->direct)
        nnc_conv2d_cols_f32_serial(n, in + a * xs, j->w, o + a * ys, C, H, W, F, KH, KW, S, P, j->bias, j->relu, wk,
                                   j->len);
    else if (j->pass == NNC_CONV_FWD && S == 1)
        nnc_conv2d_s1_f32_serial(n, in + a * xs, j->w, o + a * ys, C, H, W, F, KH, KW, P, j->bias, j->relu, wk, j->len);
    else if (j->pass == NNC_CONV_FWD)
        nnc_conv2d_s2_f32_serial(n, in + a * xs, j->w, o + a * ys, C, H, W, F, KH, KW, P, j->bias, j->relu, wk, j->len);
    else if (j->pass == NNC_CONV_DATA && !j->direct)
        nnc_conv2d_cols_bwd_data_f32_serial(n, in + a * ys, j->w, o + a * xs, add, C, H, W, F, KH, KW, S, P, wk,
                                            j->len);
    else if (j->pass == NNC_CONV_DATA && S == 1)
        nnc_conv2d_s1_bwd_data_f32_serial(n, in + a * ys, j->w, o + a * xs, add, C, H, W, F, KH, KW, P, wk, j->len);
    else if (j->pass == NNC_CONV_DATA)
        nnc_conv2d_s2_bwd_data_f32_serial(n, in + a * ys, j->w, o + a * xs, add, C, H, W, F, KH, KW, P, wk, j->len);
    else if (!j->direct)
        nnc_conv2d_cols_bwd_filter_f32_serial(n, in + a * ys, (const float *)j->x + a * xs, o, C, H, W, F, KH, KW, S, P,
                                              wk, j->len);
    else
        nnc_conv2d_bwd_filter_f32_serial(n, in + a * ys, (const float *)j->x + a * xs, o, C, H, W, F, KH, KW, S, P, wk,
                                         j->len);
}

static size_t conv_elem(const conv_job *j) { return j->f64 ? sizeof(double) : sizeof(float); }

/* thread `slot`'s work: the kernel's `need`, then (kernel gradients) a
 * partial dW */
static void *conv_slot(const conv_job *j, int slot)
{
    const int64_t per =
        j->pass == NNC_CONV_FILTER ? nnc_conv_filter_item_work(j->need, j->C, j->F, j->KH, j->KW) : j->need;
    return (char *)j->work + (size_t)(slot * per) * conv_elem(j);
}

static void conv_item(void *p, int64_t i, int slot)
{
    const conv_job *j = p;
    void *wk = conv_slot(j, slot);
    const int64_t a = part(j->N, j->items, i), b = part(j->N, j->items, i + 1);
    if (j->pass != NNC_CONV_FILTER)
        conv_call(j, a, b, j->out, wk);
    else /* item 0 into dW itself, the others into their partial */
        conv_call(j, a, b, i == 0 ? j->out : (char *)wk + (size_t)j->need * conv_elem(j), wk);
}

/* dw[0, n) += part[0, n), in float or double: a kernel gradient's item
 * partial, added in item order (run_ordered) */
static void add_partial(void *dw, const void *part, int64_t n, int f64)
{
    if (f64) {
        const double *q = part;
        for (int64_t k = 0; k < n; k++)
            ((double *)dw)[k] += q[k];
    } else {
        const float *q = part;
        for (int64_t k = 0; k < n; k++)
            ((float *)dw)[k] += q[k];
    }
}

static void conv_add(void *p, int64_t i, int slot)
{
    const conv_job *j = p;
    (void)i;
    add_partial(j->out, (const char *)conv_slot(j, slot) + (size_t)j->need * conv_elem(j), j->F * j->C * j->KH * j->KW,
                j->f64);
}

/* Winograd (conv.c) transforms a block of 64 tiles at a time (4
 * examples of 8x8, 16 of 4x4) and the weights once a call (the kernel
 * gradient: its dU back into dW, and each item's partial dW is added):
 * items of 2 examples of 8x8 (8 at batch 16) ran half-empty blocks and
 * transformed the weights 8 times.  Such layers take items of at least 4
 * examples of 8x8 and 8 of 4x4 (half a block: two vectors of tiles to
 * each product), the kernel gradient's of 4x4 16 (a whole block: its
 * weights' share is larger, 192 channels of 4x4 took ~0.15 ms a call to
 * transform dU into dW and ~0.1 to add the partial); and no more items
 * than threads for the forward pass and the data gradient, whose bits do
 * not depend on the split */
static int64_t wino_examples(const conv_job *j)
{
    /* (not where the direct kernels fall back to the columns, the generic
     * build: its items must be the columns' own, because OpenBLAS's sums
     * may depend on a GEMM's width, the examples an item groups, as its
     * Haswell kernels' do) */
    if (j->f64 || !j->direct || j->stride != 1 || !nnc_conv_wino(j->C, j->H, j->W, j->F, j->KH, j->KW, j->pad) ||
        !nnc_conv_direct_ok())
        return 1;
    if (!nnc_conv_wino_special(j->H, j->W, j->pad)) {
        /* the other sizes: a whole block of tiles an item (the tiles of
         * the pass's output: dx, of H x W, for the data gradient) */
        const int64_t oh = j->pass == NNC_CONV_DATA ? j->H : j->OH, ow = j->pass == NNC_CONV_DATA ? j->W : j->OW;
        const int64_t tiles = (oh + 1) / 2 * ((ow + 1) / 2);
        return tiles >= 64 ? 1 : (64 + tiles - 1) / tiles;
    }
    return j->OH == 4 ? (j->pass == NNC_CONV_FILTER ? 16 : 8) : j->OH == 8 ? 4 : 1;
}

/* at most N / that many items (at least one: an empty batch still zeroes dW) */
static int64_t wino_cap(const conv_job *j, int64_t items, int threads)
{
    const int64_t e = wino_examples(j);
    int64_t cap = j->N > e ? (j->N + e - 1) / e : 1;
    if (e > 1 && j->pass != NNC_CONV_FILTER && cap > threads)
        cap = threads;
    return e > 1 && items > cap ? cap : items;
}

/* Winograd's 4x4 layers go by channels of the output, in items of 16
 * (nnc_conv2d_wino_part_f32, conv.c), one per thread */
static int wino_by_channels(const conv_job *j)
{
    return !j->f64 && j->direct && j->stride == 1 && j->OH == 4 && j->N > 0 &&
        nnc_conv_wino(j->C, j->H, j->W, j->F, j->KH, j->KW, j->pad) && nnc_conv_wino_special(j->H, j->W, j->pad) &&
        nnc_conv_direct_ok();
}

static int64_t wino_channels(const conv_job *j) { return j->pass == NNC_CONV_DATA ? j->C : j->F; }

/* a call split by channels: its job, and whether an item met an infinity */
typedef struct {
    const conv_job *j;
    int inf;
} wino_split;

static void conv_wino_item(void *p, int64_t i, int slot)
{
    wino_split *s = p;
    const conv_job *j = s->j;
    const int64_t nch = wino_channels(j), n16 = (nch + 15) / 16, a = part(n16, j->items, i) * 16,
                  e = part(n16, j->items, i + 1) * 16, b = e < nch ? e : nch;
    if (nnc_conv2d_wino_part_f32_serial(j->pass, j->N, j->in, j->w, j->x, j->out, j->add, j->C, j->H, j->F, a, b,
                                        j->bias, j->relu, conv_slot(j, slot), j->len))
        __atomic_store_n(&s->inf, 1, __ATOMIC_RELAXED);
}

static void conv_run(conv_job *j, int64_t work_len)
{
    j->OH = (j->H + 2 * j->pad - j->KH) / j->stride + 1;
    j->OW = (j->W + 2 * j->pad - j->KW) / j->stride + 1;
    j->need = nnc_conv_kernel_work(j->pass, j->direct, j->C, j->H, j->W, j->F, j->KH, j->KW, j->stride, j->pad);
    j->len = j->need;
    if (work_len < j->need) { /* the kernel aborts with its message */
        j->len = work_len;
        j->items = 1;
        run_items(1, 1, conv_item, j);
        return;
    }
    if (wino_by_channels(j)) {
        const int t = threads_for(j->need, work_len);
        const int64_t n16 = (wino_channels(j) + 15) / 16;
        j->items = t < n16 ? t : n16;
        wino_split s = {j, 0};
        run_items(j->items, t, conv_wino_item, &s);
        if (!s.inf)
            return;
        /* an infinity: again by examples below, whose kernels take the
         * direct sums for it */
    }
    const double flops = 2.0 * (double)(j->F * j->C * j->KH * j->KW * j->OH * j->OW);
    const int64_t G = nnc_conv_cols_group(j->OH, j->OW);
    if ((!j->direct || !nnc_conv_direct_ok()) && G > 1 && flops * (double)G >= 2 * GEMM_BLOCK_FLOPS) {
        /* small images by the columns, G to a GEMM (conv_cols.c; also the
         * direct kernels' own fallback, which must give the columns'
         * bits), whose GEMMs are large enough for nnc_sgemm to split over
         * the threads: one item.  Smaller ones split by examples below,
         * each item grouping its own (lenet5's 10x10 data gradient, 1.4
         * MFLOP a group, ran on one thread: 1.83 -> 1.97 ms a step at 2) */
        j->items = 1;
        run_items(1, 1, conv_item, j);
        return;
    }
    if (j->pass == NNC_CONV_FILTER) {
        const int64_t per = nnc_conv_filter_item_work(j->need, j->C, j->F, j->KH, j->KW);
        /* a caller's work without room for a partial dW (not generated
         * code's: kernel.c reserves it) runs as one item */
        /* (wino_cap: fixed by the shapes, so the same bits at any thread count) */
        j->items = work_len < per ? 1 : wino_cap(j, nnc_conv_filter_items(j->N, j->OH, j->OW, NNC_MAX_ITEMS), 0);
        /* (one item needs no partial: a work of `need` is enough) */
        run_ordered(j->items, j->items > 1 ? threads_for(per, work_len) : 1, conv_item, conv_add, j);
    } else {
        const int t = threads_for(j->need, work_len);
        j->items = wino_cap(j, items_for(j->N, flops), t);
        run_items(j->items, t, conv_item, j);
    }
}

void nnc_conv2d_s1_f32(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H, int64_t W, int64_t F,
                       int64_t KH, int64_t KW, int64_t pad, const float *bias, int relu, float *work, int64_t work_len)
{
    conv_job j = {NNC_CONV_FWD, 0,    relu, 1, N,   C, H, W, F, KH, KW, 1, pad, 0, 0, 0, 0, 0, x, w,
                  bias,         NULL, NULL, y, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_s2_f32(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H, int64_t W, int64_t F,
                       int64_t KH, int64_t KW, int64_t pad, const float *bias, int relu, float *work, int64_t work_len)
{
    conv_job j = {NNC_CONV_FWD, 0,    relu, 1, N,   C, H, W, F, KH, KW, 2, pad, 0, 0, 0, 0, 0, x, w,
                  bias,         NULL, NULL, y, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_s1_bwd_data_f32(int64_t N, const float *dy, const float *w, float *dx, const float *add, int64_t C,
                                int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t pad, float *work,
                                int64_t work_len)
{
    conv_job j = {NNC_CONV_DATA, 0,   0,    1,  N,   C, H, W, F, KH, KW, 1, pad, 0, 0, 0, 0, 0, dy, w,
                  NULL,          add, NULL, dx, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_s2_bwd_data_f32(int64_t N, const float *dy, const float *w, float *dx, const float *add, int64_t C,
                                int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t pad, float *work,
                                int64_t work_len)
{
    conv_job j = {NNC_CONV_DATA, 0,   0,    1,  N,   C, H, W, F, KH, KW, 2, pad, 0, 0, 0, 0, 0, dy, w,
                  NULL,          add, NULL, dx, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_bwd_filter_f32(int64_t N, const float *dy, const float *x, float *dw, int64_t C, int64_t H, int64_t W,
                               int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad, float *work,
                               int64_t work_len)
{
    conv_job j = {
        NNC_CONV_FILTER, 0, 0, 1, N, C, H, W, F, KH, KW, stride, pad, 0, 0, 0, 0, 0, dy, NULL, NULL, NULL, x, dw, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_cols_f32(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H, int64_t W,
                         int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad, const float *bias, int relu,
                         float *work, int64_t work_len)
{
    conv_job j = {NNC_CONV_FWD, 0,    relu, 0, N,   C, H, W, F, KH, KW, stride, pad, 0, 0, 0, 0, 0, x, w,
                  bias,         NULL, NULL, y, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_cols_bwd_data_f32(int64_t N, const float *dy, const float *w, float *dx, const float *add, int64_t C,
                                  int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad,
                                  float *work, int64_t work_len)
{
    conv_job j = {NNC_CONV_DATA, 0,   0,    0,  N,   C, H, W, F, KH, KW, stride, pad, 0, 0, 0, 0, 0, dy, w,
                  NULL,          add, NULL, dx, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_cols_bwd_filter_f32(int64_t N, const float *dy, const float *x, float *dw, int64_t C, int64_t H,
                                    int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad,
                                    float *work, int64_t work_len)
{
    conv_job j = {
        NNC_CONV_FILTER, 0, 0, 0, N, C, H, W, F, KH, KW, stride, pad, 0, 0, 0, 0, 0, dy, NULL, NULL, NULL, x, dw, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_cols_f64(int64_t N, const double *x, const double *w, double *y, int64_t C, int64_t H, int64_t W,
                         int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad, const double *bias, int relu,
                         double *work, int64_t work_len)
{
    conv_job j = {NNC_CONV_FWD, 1,    relu, 0, N,   C, H, W, F, KH, KW, stride, pad, 0, 0, 0, 0, 0, x, w,
                  bias,         NULL, NULL, y, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_cols_bwd_data_f64(int64_t N, const double *dy, const double *w, double *dx, const double *add,
                                  int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride,
                                  int64_t pad, double *work, int64_t work_len)
{
    conv_job j = {NNC_CONV_DATA, 1,   0,    0,  N,   C, H, W, F, KH, KW, stride, pad, 0, 0, 0, 0, 0, dy, w,
                  NULL,          add, NULL, dx, work};
    conv_run(&j, work_len);
}

void nnc_conv2d_cols_bwd_filter_f64(int64_t N, const double *dy, const double *x, double *dw, int64_t C, int64_t H,
                                    int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad,
                                    double *work, int64_t work_len)
{
    conv_job j = {
        NNC_CONV_FILTER, 1, 0, 0, N, C, H, W, F, KH, KW, stride, pad, 0, 0, 0, 0, 0, dy, NULL, NULL, NULL, x, dw, work};
    conv_run(&j, work_len);
}

/* The general convolution (conv_cols.c's nnc_conv2d_gen_*): items of
 * examples as above; the kernel gradient's items fixed by
 * nnc_conv_filter_items, their partial dW [F][C / groups][KH][KW] after
 * the thread's columns and added in item order. */
typedef struct {
    int pass, f64, relu;
    const nnc_conv2d_geom *g;
    int64_t N, items, need, per, len;
    const void *in, *w, *bias, *add, *x;
    void *out, *work;
} gconv_job;

static void *gconv_slot(const gconv_job *j, int slot)
{
    /* (a depthwise layer's forward pass and data gradient have no work) */
    return j->per > 0 ? (char *)j->work + (size_t)(slot * j->per) * (j->f64 ? sizeof(double) : sizeof(float)) : j->work;
}

static void gconv_item(void *p, int64_t i, int slot)
{
    const gconv_job *j = p;
    const nnc_conv2d_geom *g = j->g;
    const int64_t a = part(j->N, j->items, i), b = part(j->N, j->items, i + 1), n = b - a, xs = g->C * g->H * g->W,
                  ys = g->F * nnc_conv2d_geom_oh(g) * nnc_conv2d_geom_ow(g);
    const size_t el = j->f64 ? sizeof(double) : sizeof(float);
    void *wk = gconv_slot(j, slot);
    /* item 0 of a kernel gradient into dW itself, the others into their partial */
    void *o = j->pass != NNC_CONV_FILTER ? j->out : i == 0 ? j->out : (char *)wk + (size_t)j->need * el;
    if (j->f64) {
        const double *in = j->in, *add = j->add ? (const double *)j->add + a * xs : NULL;
        if (j->pass == NNC_CONV_FWD)
            nnc_conv2d_gen_f64_serial(n, in + a * xs, j->w, (double *)o + a * ys, g, j->bias, j->relu, wk, j->len);
        else if (j->pass == NNC_CONV_DATA)
            nnc_conv2d_gen_bwd_data_f64_serial(n, in + a * ys, j->w, (double *)o + a * xs, add, g, wk, j->len);
        else
            nnc_conv2d_gen_bwd_filter_f64_serial(n, in + a * ys, (const double *)j->x + a * xs, o, g, wk, j->len);
        return;
    }
    const float *in = j->in, *add = j->add ? (const float *)j->add + a * xs : NULL;
    if (j->pass == NNC_CONV_FWD)
        nnc_conv2d_gen_f32_serial(n, in + a * xs, j->w, (float *)o + a * ys, g, j->bias, j->relu, wk, j->len);
    else if (j->pass == NNC_CONV_DATA)
        nnc_conv2d_gen_bwd_data_f32_serial(n, in + a * ys, j->w, (float *)o + a * xs, add, g, wk, j->len);
    else
        nnc_conv2d_gen_bwd_filter_f32_serial(n, in + a * ys, (const float *)j->x + a * xs, o, g, wk, j->len);
}

static void gconv_add(void *p, int64_t i, int slot)
{
    const gconv_job *j = p;
    const nnc_conv2d_geom *g = j->g;
    (void)i;
    add_partial(j->out, (const char *)gconv_slot(j, slot) + (size_t)j->need * (j->f64 ? sizeof(double) : sizeof(float)),
                g->F * (g->C / g->groups) * g->KH * g->KW, j->f64);
}

static void gconv_run(gconv_job *j, int64_t work_len)
{
    const nnc_conv2d_geom *g = j->g;
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g);
    j->need = nnc_conv2d_gen_work(g);
    j->len = j->need;
    j->per = j->need;
    if (work_len < j->need) { /* the kernel aborts with its message */
        j->len = work_len;
        j->items = 1;
        run_items(1, 1, gconv_item, j);
        return;
    }
    const double flops = 2.0 * (double)(g->F * (g->C / g->groups) * g->KH * g->KW * OH * OW);
    if (j->pass == NNC_CONV_FILTER) {
        const int64_t per = nnc_conv2d_gen_filter_item_work(g);
        /* a caller's work without room for a partial dW runs as one item */
        j->items = work_len < per ? 1 : nnc_conv_filter_items(j->N, OH, OW, NNC_MAX_ITEMS);
        j->per = j->items > 1 ? per : j->need;
        run_ordered(j->items, j->items > 1 ? threads_for(per, work_len) : 1, gconv_item, gconv_add, j);
    } else {
        j->items = items_for(j->N, flops);
        run_items(j->items, threads_for(j->need, work_len), gconv_item, j);
    }
}

void nnc_conv2d_gen_f32(int64_t N, const float *x, const float *w, float *y, const nnc_conv2d_geom *g,
                        const float *bias, int relu, float *work, int64_t work_len)
{
    gconv_job j = {NNC_CONV_FWD, 0, relu, g, N, 0, 0, 0, 0, x, w, bias, NULL, NULL, y, work};
    gconv_run(&j, work_len);
}

void nnc_conv2d_gen_bwd_data_f32(int64_t N, const float *dy, const float *w, float *dx, const float *add,
                                 const nnc_conv2d_geom *g, float *work, int64_t work_len)
{
    gconv_job j = {NNC_CONV_DATA, 0, 0, g, N, 0, 0, 0, 0, dy, w, NULL, add, NULL, dx, work};
    gconv_run(&j, work_len);
}

void nnc_conv2d_gen_bwd_filter_f32(int64_t N, const float *dy, const float *x, float *dw, const nnc_conv2d_geom *g,
                                   float *work, int64_t work_len)
{
    gconv_job j = {NNC_CONV_FILTER, 0, 0, g, N, 0, 0, 0, 0, dy, NULL, NULL, NULL, x, dw, work};
    gconv_run(&j, work_len);
}

void nnc_conv2d_gen_f64(int64_t N, const double *x, const double *w, double *y, const nnc_conv2d_geom *g,
                        const double *bias, int relu, double *work, int64_t work_len)
{
    gconv_job j = {NNC_CONV_FWD, 1, relu, g, N, 0, 0, 0, 0, x, w, bias, NULL, NULL, y, work};
    gconv_run(&j, work_len);
}

void nnc_conv2d_gen_bwd_data_f64(int64_t N, const double *dy, const double *w, double *dx, const double *add,
                                 const nnc_conv2d_geom *g, double *work, int64_t work_len)
{
    gconv_job j = {NNC_CONV_DATA, 1, 0, g, N, 0, 0, 0, 0, dy, w, NULL, add, NULL, dx, work};
    gconv_run(&j, work_len);
}

void nnc_conv2d_gen_bwd_filter_f64(int64_t N, const double *dy, const double *x, double *dw, const nnc_conv2d_geom *g,
                                   double *work, int64_t work_len)
{
    gconv_job j = {NNC_CONV_FILTER, 1, 0, g, N, 0, 0, 0, 0, dy, NULL, NULL, NULL, x, dw, work};
    gconv_run(&j, work_len);
}

/* ---- GEMMs: fixed blocks of the output ---------------------------------------------- */

/* C [M, N] = alpha op(A) op(B) + beta C, row-major, in blocks of rows or
 * of columns: each block is one single-threaded GEMM (gemm.c's for
 * floats, BLAS's for doubles and in the generic build), and no output is
 * summed by two blocks (K is never split).  gemm.c's blocks depend on the
 * thread count (gemm_run); BLAS's on the shape alone. */

typedef struct {
    int real8, by_cols;
    CBLAS_TRANSPOSE ta, tb;
    int M, N, K, lda, ldb, ldc, blocks, step;
    double alpha, beta;
    const void *a, *b;
    void *c;
    nnc_gemm_hint next; /* the GEMM expected after this one (gemm_expect) */
    const float *bias;  /* floats: added to every row of C (nnc_sgemm_bias), or NULL */
} gemm_job;

_Thread_local nnc_gemm_hint nnc_gemm_hint_;

static void gemm_item(void *p, int64_t i, int slot)
{
    const gemm_job *j = p;
    const int64_t ext = j->by_cols ? j->N : j->M, lo = i * j->step, hi = lo + j->step < ext ? lo + j->step : ext;
    (void)slot;
    if (hi <= lo)
        return;
    /* the block's operands: rows of op(A) and C, or columns of op(B) and C */
    int64_t ao = 0, bo = 0, co;
    if (j->by_cols) {
        bo = j->tb == CblasNoTrans ? lo : lo * j->ldb;
        co = lo;
    } else {
        ao = j->ta == CblasNoTrans ? lo * j->lda : lo;
        co = lo * j->ldc;
    }
    const int m = j->by_cols ? j->M : (int)(hi - lo), n = j->by_cols ? (int)(hi - lo) : j->N;
    if (j->real8)
        cblas_dgemm(CblasRowMajor, j->ta, j->tb, m, n, j->K, j->alpha, (const double *)j->a + ao, j->lda,
                    (const double *)j->b + bo, j->ldb, j->beta, (double *)j->c + co, j->ldc);
    else { /* gemm.c: nnc's own at AVX2 and AVX-512 */
        nnc_gemm_hint_ = j->next;
        nnc_gemm_hint_.part = i;
        nnc_gemm_hint_.parts = j->blocks;
        if (j->bias) /* (a block of columns: their biases) */
            nnc_gemm_bias_f32_serial(j->ta == CblasTrans, j->tb == CblasTrans, m, n, j->K, (float)j->alpha,
                                     (const float *)j->a + ao, j->lda, (const float *)j->b + bo, j->ldb,
                                     (float *)j->c + co, j->ldc, j->bias + (j->by_cols ? lo : 0));
        else
            nnc_gemm_f32_serial(j->ta == CblasTrans, j->tb == CblasTrans, m, n, j->K, (float)j->alpha,
                                (const float *)j->a + ao, j->lda, (const float *)j->b + bo, j->ldb, (float)j->beta,
                                (float *)j->c + co, j->ldc);
        nnc_gemm_hint_.b = NULL;
    }
}

/* The time of gemm.c's blocks on `threads` threads, in multiply-adds:
 * blocks of `step` rows (or columns) of the output, taken in order each
 * by the least loaded thread (about what run_items's shares and their
 * stealing give threads of one speed).  What a block costs besides its
 * products, measured at one thread by calling the blocks in turn (min of
 * 200, AVX-512, nine shapes): a block of rows packs all of B again, 5 to
 * 13 rows' products (1024 x 512 x 128 in 8 row blocks: +7%; 128 x 128 x
 * 1024 in 8: +52%); a block of columns reads all of A again, 2 to 6
 * columns' products (4 counted), and transposed A (the kernel gradients'
 * dy^T x) about 2 + M / 64 (512 x 128 x 1024 in 4 column blocks: +31%);
 * and every block is a call (~1 us). */
static double gemm_span(const gemm_job *j, int by_cols, int64_t step, int threads)
{
    const double M = j->M, N = j->N, K = j->K, ext = by_cols ? N : M;
    double load[NNC_MAX_ITEMS] = {0}, span = 0;
    for (int64_t lo = 0; lo < ext; lo += step) {
        const double n = ext - (double)lo < (double)step ? ext - (double)lo : (double)step;
        const double t = by_cols ? M * (n + (j->ta == CblasTrans ? 2 + M / 64 : 4)) * K + 7e4 : (n + 10) * N * K + 7e4;
        int least = 0;
        for (int i = 1; i < threads; i++)
            if (load[i] < load[least])
                least = i;
        load[least] += t;
        span = load[least] > span ? load[least] : span;
    }
    return span;
}

/* the step of `blocks` blocks of [0, ext) in whole `unit`s */
static int64_t block_step(int64_t ext, int64_t blocks, int64_t unit)
{
    return ((ext + blocks - 1) / blocks + unit - 1) / unit * unit;
}

static void gemm_run(gemm_job *j)
{
    const double flops = 2.0 * (double)j->K * (double)j->M * (double)j->N;
    const int threads = nnc_threads();
    if (!j->real8 && nnc_isa() != NNC_ISA_GENERIC) {
        /* gemm.c's floats.  Their blocks may depend on the thread count
         * because no output's sum does: each is one FMA chain in k order
         * in whichever block it lies (tests/runtime/test_gemm.c checks
         * row and column splits).  At one thread one call.  Else about
         * one block per GEMM_BLOCK_FLOPS, at least one per thread (and
         * GEMM_MIN_BLOCK_FLOPS each, at most NNC_MAX_ITEMS), by rows in
         * whole 6-row register blocks or by columns in whole 32-column
         * panels, whichever ends sooner on these threads: by the longer
         * side in 48-row steps, a 128 x 128 product ran 48 + 32 rows on
         * one thread against 48 (1.37x at 2 threads), and 1024 rows
         * 4 x 144 against 3 x 144 + 16. */
        double want = flops / GEMM_BLOCK_FLOPS;
        if (want < threads)
            want = threads;
        if (want > flops / GEMM_MIN_BLOCK_FLOPS)
            want = flops / GEMM_MIN_BLOCK_FLOPS;
        const int64_t b = threads <= 1 || want < 1 ? 1 : want > NNC_MAX_ITEMS ? NNC_MAX_ITEMS : (int64_t)want;
        const int tsim = threads < NNC_MAX_ITEMS ? threads : NNC_MAX_ITEMS;
        double best = 0;
        j->by_cols = 0;
        j->step = j->M > 0 ? j->M : 1;
        for (int by_cols = 0; by_cols <= 1 && b > 1; by_cols++) {
            const int64_t ext = by_cols ? j->N : j->M, unit = by_cols ? 32 : 6;
            const int64_t step = block_step(ext, b, unit);
            const double span = gemm_span(j, by_cols, step, tsim);
            if (step < ext && (best == 0 || span < best)) {
                best = span;
                j->by_cols = by_cols;
                j->step = (int)step;
            }
        }
        const int64_t ext = j->by_cols ? j->N : j->M;
        j->blocks = (int)(ext > 0 ? (ext + j->step - 1) / j->step : 1);
        run_items(j->blocks, threads, gemm_item, j);
        return;
    }
    /* BLAS (doubles, and floats in the generic build) promises no such
     * thing, so its blocks depend on the shape alone: one per
     * GEMM_BLOCK_FLOPS, by the longer side (16s of doubles; 48 rows or
     * 32 columns of the generic build's floats). */
    j->by_cols = j->N > j->M;
    const int ext = j->by_cols ? j->N : j->M;
    const double want = flops / GEMM_BLOCK_FLOPS;
    const int64_t blocks = want < 1 ? 1 : want > NNC_MAX_ITEMS ? NNC_MAX_ITEMS : (int64_t)want;
    const int64_t step = block_step(ext, blocks, j->real8 ? 16 : j->by_cols ? 32 : 48);
    j->step = step <= 0 ? 1 : step < ext ? (int)step : ext;
    j->blocks = (int)(((int64_t)ext + j->step - 1) / j->step);
    if (j->blocks <= 1) {
        j->blocks = 1;
        j->step = ext > 0 ? ext : 1;
    }
    run_items(j->blocks, threads, gemm_item, j); /* (nnc_threads() set OpenBLAS to one) */
}

/* The GEMM that will follow this one.  A training step makes the same
 * calls in the same order every time, so each thread remembers, per call,
 * which B the call after it last used, and gemm.c's last block fetches
 * the first block of that B into L2 while it computes (nnc_gemm_hint): a
 * layer's weights are otherwise read from DRAM by the first pack of B of
 * each call, with the core waiting.  A wrong guess (a first step, a full
 * table, an eval between steps) only fetches lines that are not used; the
 * products are the same.  At 1 thread on Zen 4, eight alternated runs,
 * medians: gpt_hd128's step 31.68 -> 31.25 ms (the same hint written by
 * the compiler before each call, from the next call of the same function:
 * 31.31); gpt_mini, mlp_big, lstm_lm and resnet_small unchanged or faster
 * by up to 0.5 ms.
 *
 * A call is its operands and B's transposition: the arena gives a
 * forward's dead temporaries' addresses to the backward's tensors, so a
 * weight's forward product (NT) and its data gradient's (NN) can share B
 * and C (a key of B and C mispredicted those). */
typedef struct {
    const void *a, *b, *c; /* the call (b NULL: a free entry) */
    const float *nb;       /* the B of the call after it, last time */
    int nldb, nN, nK;      /* (its pitch and shape) */
    signed char tb, ntb;
} gemm_seen;
/* calls remembered, per thread: twice the most a step makes before the
 * table starts again (an LSTM's step over 32 positions makes about 130) */
#define GEMM_SEEN 512
static _Thread_local gemm_seen seen_[GEMM_SEEN];
static _Thread_local int seen_n_;
static _Thread_local gemm_seen *last_; /* the previous call's entry */

static nnc_gemm_hint gemm_expect(const gemm_job *j)
{
    const int tb = j->tb == CblasTrans;
    if (last_)
        *last_ = (gemm_seen){last_->a, last_->b, last_->c, j->b, j->ldb, j->N, j->K, last_->tb, (signed char)tb};
    /* open addressing from a hash of the pointers (the arena's tensors
     * start at multiples of large powers of 2: a product's high bits mix
     * them); a table half full starts again empty */
    const uint64_t h = ((uint64_t)(uintptr_t)j->a * 0xff51afd7ed558ccdu) ^
        ((uint64_t)(uintptr_t)j->b * 0x9e3779b97f4a7c15u) ^ ((uint64_t)(uintptr_t)j->c * 0xc2b2ae3d27d4eb4fu) ^
        (uint64_t)tb;
    const unsigned home = (unsigned)(h >> 55) % GEMM_SEEN;
    unsigned i = home;
    for (;; i = (i + 1) % GEMM_SEEN) {
        const gemm_seen *e = &seen_[i];
        if (!e->b || (e->a == j->a && e->b == j->b && e->c == j->c && e->tb == tb))
            break;
    }
    gemm_seen *e = &seen_[i];
    if (!e->b) { /* a new call */
        if (++seen_n_ > GEMM_SEEN / 2) {
            memset(seen_, 0, sizeof seen_);
            seen_n_ = 1;
            e = &seen_[home];
        }
        *e = (gemm_seen){j->a, j->b, j->c, NULL, 0, 0, 0, (signed char)tb, 0};
    }
    last_ = e;
    return (nnc_gemm_hint){e->nb, e->nldb, e->nN, e->nK, 0, 1, e->ntb};
}

/* A float GEMM's job, with the hint of the GEMM after it, on the threads */
static void sgemm_run(gemm_job *j)
{
    if (nnc_isa() != NNC_ISA_GENERIC)
        j->next = gemm_expect(j);
    gemm_run(j);
}

void nnc_sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc)
{
    gemm_job j = {0, 0, ta, tb, M, N, K, lda, ldb, ldc, 0, 0, alpha, beta, a, b, c, {0}, NULL};
    sgemm_run(&j);
}

void nnc_sgemm_bias(int split, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha, const float *a,
                    int lda, const float *b, int ldb, float *c, int ldc, const float *bias)
{
    if (!split) {
        nnc_gemm_bias_f32_serial(ta == CblasTrans, tb == CblasTrans, M, N, K, alpha, a, lda, b, ldb, c, ldc, bias);
        return;
    }
    gemm_job j = {0, 0, ta, tb, M, N, K, lda, ldb, ldc, 0, 0, alpha, 0.0, a, b, c, {0}, bias};
    sgemm_run(&j);
}

void nnc_gemm_bias_f32(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                       const float *b, int64_t ldb, float *c, int64_t ldc, const float *bias)
{
    nnc_sgemm_bias(1, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, alpha, a,
                   (int)lda, b, (int)ldb, c, (int)ldc, bias);
}

void nnc_gemm_f32(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    nnc_sgemm(ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, alpha, a,
              (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

void nnc_cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha,
                     const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    if (order != CblasRowMajor) { /* the generated code's calls are row-major */
        nnc_cblas_sgemm(CblasRowMajor, tb, ta, N, M, K, alpha, b, ldb, a, lda, beta, c, ldc);
        return;
    }
    nnc_gemm_f32_serial(ta == CblasTrans, tb == CblasTrans, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc);
}

void nnc_dgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, double alpha, const double *a, int lda,
               const double *b, int ldb, double beta, double *c, int ldc)
{
    gemm_job j = {1, 0, ta, tb, M, N, K, lda, ldb, ldc, 0, 0, alpha, beta, a, b, c, {0}, NULL};
    gemm_run(&j);
}
