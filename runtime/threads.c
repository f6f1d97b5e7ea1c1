/* threads.c — the runtime's threads, and the public kernels of kernels.def
 * split across them.
 *
 * Determinism at any thread count comes from one rule: a call is split
 * into a fixed list of work items, chosen from the shapes alone (never
 * from the thread count), and each item computes the same outputs with
 * the same code whichever thread runs it.  The threads only decide who
 * runs which item.  Where items would add into one output (a kernel's
 * gradient, summed over the batch), each computes its own partial and the
 * partials are added in item order (nnc_run_ordered), never one partial
 * per thread.  So 1, 2, 3 or 8 threads give the same bits.
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

/* ---- fixed items ------------------------------------------------------------- */

/* Runs fn(ctx, item, slot) for item in [0, items) on at most `threads`
 * threads; slot < threads names the thread's scratch.  Inside another
 * parallel region (nested regions are inactive) it runs serially on slot
 * 0, which the caller must then own. */
static void run_items(int64_t items, int threads, void (*fn)(void *, int64_t, int), void *ctx)
{
    if (threads > items)
        threads = (int)items;
#if defined(_OPENMP)
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

/* [begin, end) of part i of n parts of [0, total), as even as can be */
static int64_t part(int64_t total, int64_t n, int64_t i) { return total * i / n; }

/* the items a loop of `total` units of `unit_cost` each is split into:
 * one per NNC_ITEM_COST of cost, at most NNC_MAX_ITEMS and `total` */
static int64_t items_for(int64_t total, double unit_cost)
{
    double k = (double)total * unit_cost / NNC_ITEM_COST;
    int64_t n = k < 1 ? 1 : k > NNC_MAX_ITEMS ? NNC_MAX_ITEMS : (int64_t)k;
    return n < total ? n : total > 0 ? total : 1;
}

/* ---- batch norm's sums: items of channels --------------------------------------- */

typedef struct {
    int64_t N, C, L, items;
    const float *x, *dy, *mask, *st;
    float *out;
    double eps;
} bn_job;

static void bn_stats_item(void *p, int64_t i, int slot)
{
    const bn_job *j = p;
    (void)slot;
    nnc_bn_stats_f32_serial(j->N, j->C, j->L, j->x, j->out, part(j->C, j->items, i), part(j->C, j->items, i + 1));
}

void nnc_bn_stats_f32(int64_t N, int64_t C, int64_t L, const float *x, float *st)
{
    bn_job j = {N, C, L, items_for(C, 2.0 * (double)N * (double)L), x, NULL, NULL, NULL, st, 0};
    run_items(j.items, nnc_threads(), bn_stats_item, &j);
}

static void bn_grads_item(void *p, int64_t i, int slot)
{
    const bn_job *j = p;
    (void)slot;
    nnc_bn_grads_f32_serial(j->N, j->C, j->L, j->dy, j->x, j->mask, j->st, j->eps, j->out, part(j->C, j->items, i),
                            part(j->C, j->items, i + 1));
}

void nnc_bn_grads_f32(int64_t N, int64_t C, int64_t L, const float *dy, const float *x, const float *mask,
                      const float *st, double eps, float *g)
{
    bn_job j = {N, C, L, items_for(C, 2.0 * (double)N * (double)L), x, dy, mask, st, g, eps};
    run_items(j.items, nnc_threads(), bn_grads_item, &j);
}

/* ---- max pooling: items of images ----------------------------------------------- */

typedef struct {
    int64_t NC, H, W, items;
    const float *x, *dy;
    float *y;
    int relu;
} pool_job;

static void pool_item(void *p, int64_t i, int slot)
{
    const pool_job *j = p;
    const int64_t a = part(j->NC, j->items, i), b = part(j->NC, j->items, i + 1);
    (void)slot;
    nnc_maxpool2_f32_serial(b - a, j->H, j->W, j->x + a * j->H * j->W, j->y + a * (j->H / 2) * (j->W / 2));
}

void nnc_maxpool2_f32(int64_t NC, int64_t H, int64_t W, const float *x, float *y)
{
    pool_job j = {NC, H, W, items_for(NC, (double)(H * W)), x, NULL, y, 0};
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
    pool_job j = {NC, H, W, items_for(NC, 2.0 * (double)(H * W)), x, dy, dx, relu};
    run_items(j.items, nnc_threads(), pool_bwd_item, &j);
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

void nnc_conv2d_s1_f32(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H, int64_t W, int64_t F,
                       int64_t KH, int64_t KW, int64_t pad, const float *bias, int relu, float *work, int64_t work_len)
{
    nnc_conv2d_s1_f32_serial(N, x, w, y, C, H, W, F, KH, KW, pad, bias, relu, work, work_len);
}

void nnc_conv2d_s2_f32(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H, int64_t W, int64_t F,
                       int64_t KH, int64_t KW, int64_t pad, const float *bias, int relu, float *work, int64_t work_len)
{
    nnc_conv2d_s2_f32_serial(N, x, w, y, C, H, W, F, KH, KW, pad, bias, relu, work, work_len);
}

void nnc_conv2d_s1_bwd_data_f32(int64_t N, const float *dy, const float *w, float *dx, const float *add, int64_t C,
                                int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t pad, float *work,
                                int64_t work_len)
{
    nnc_conv2d_s1_bwd_data_f32_serial(N, dy, w, dx, add, C, H, W, F, KH, KW, pad, work, work_len);
}

void nnc_conv2d_s2_bwd_data_f32(int64_t N, const float *dy, const float *w, float *dx, const float *add, int64_t C,
                                int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t pad, float *work,
                                int64_t work_len)
{
    nnc_conv2d_s2_bwd_data_f32_serial(N, dy, w, dx, add, C, H, W, F, KH, KW, pad, work, work_len);
}

void nnc_conv2d_bwd_filter_f32(int64_t N, const float *dy, const float *x, float *dw, int64_t C, int64_t H, int64_t W,
                               int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad, float *work,
                               int64_t work_len)
{
    nnc_conv2d_bwd_filter_f32_serial(N, dy, x, dw, C, H, W, F, KH, KW, stride, pad, work, work_len);
}

void nnc_conv2d_cols_f32(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H, int64_t W,
                         int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad, const float *bias, int relu,
                         float *work, int64_t work_len)
{
    nnc_conv2d_cols_f32_serial(N, x, w, y, C, H, W, F, KH, KW, stride, pad, bias, relu, work, work_len);
}

void nnc_conv2d_cols_bwd_data_f32(int64_t N, const float *dy, const float *w, float *dx, const float *add, int64_t C,
                                  int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad,
                                  float *work, int64_t work_len)
{
    nnc_conv2d_cols_bwd_data_f32_serial(N, dy, w, dx, add, C, H, W, F, KH, KW, stride, pad, work, work_len);
}

void nnc_conv2d_cols_bwd_filter_f32(int64_t N, const float *dy, const float *x, float *dw, int64_t C, int64_t H,
                                    int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad,
                                    float *work, int64_t work_len)
{
    nnc_conv2d_cols_bwd_filter_f32_serial(N, dy, x, dw, C, H, W, F, KH, KW, stride, pad, work, work_len);
}

void nnc_conv2d_cols_f64(int64_t N, const double *x, const double *w, double *y, int64_t C, int64_t H, int64_t W,
                         int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad, const double *bias, int relu,
                         double *work, int64_t work_len)
{
    nnc_conv2d_cols_f64_serial(N, x, w, y, C, H, W, F, KH, KW, stride, pad, bias, relu, work, work_len);
}

void nnc_conv2d_cols_bwd_data_f64(int64_t N, const double *dy, const double *w, double *dx, const double *add,
                                  int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride,
                                  int64_t pad, double *work, int64_t work_len)
{
    nnc_conv2d_cols_bwd_data_f64_serial(N, dy, w, dx, add, C, H, W, F, KH, KW, stride, pad, work, work_len);
}

void nnc_conv2d_cols_bwd_filter_f64(int64_t N, const double *dy, const double *x, double *dw, int64_t C, int64_t H,
                                    int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad,
                                    double *work, int64_t work_len)
{
    nnc_conv2d_cols_bwd_filter_f64_serial(N, dy, x, dw, C, H, W, F, KH, KW, stride, pad, work, work_len);
}
