/* harness.c — times the training step of one nnc-generated model.
 *
 *   bench_<model> [--batch B] [--warmup W] [--min-iters N] [--min-time S]
 *                 [--max-iters M] [--lr LR] [--seed S] [--share P]
 *
 * One step = train_forward + backward + nnc_optim_step (Adam, or AdamW
 * when the model's glue asks for it; PyTorch defaults), on one fixed batch
 * of random inputs (f32: N(0,1); i32: uniform token ids) and labels.
 * Everything is allocated before the loop.  After W warm-up steps, steps
 * are timed one by one (CLOCK_MONOTONIC) until at least N steps and S
 * seconds have been measured (at most M steps); the median and minimum are
 * reported, with the medians of the three phases (train_forward, backward,
 * optimizer step), each timed within the same steps, and of the time spent
 * inside the float GEMM (runtime/gemm.c) when built with BENCH_WRAP_SGEMM (below).
 * bench/src/torch_bench.py does exactly the same in PyTorch.
 *
 * --share P (one process): the step of rank 0's share of P processes,
 * alone, with no sums: bench/dist.sh runs P of these at once, the most P
 * processes could give on this machine (they compete for its caches and
 * memory as P ranks do).
 *
 * Processes: linked against nnc_runtime_mpi (pkg-config nnc-mpi) and run
 * under `mpirun -np P` (bench/dist.sh), --batch is the global batch; each
 * rank takes its share (rank order, the first B mod P one more) of the
 * same random batch, the generated code sums the gradients across the
 * processes, and every rank runs the same steps: whether to time another
 * is rank 0's decision, broadcast after each step (outside the timing).
 * The time blocked in the sums (nnc_dist_wait_seconds) is reported per
 * step, in the forward pass (BatchNorm's statistics, the loss) and in the
 * backward pass (the gradients' buckets, BatchNorm's gradient sums).  Linked against nnc_runtime, P is 1 and all of this is a no-op.
 *
 * Threads are set through the environment (OMP_NUM_THREADS, see
 * bench/run.sh): nnc's count (nnc_threads), OpenBLAS's kernel
 * (openblas_get_corename) and the instruction set the runtime names
 * (nnc_isa) are printed.  The time inside the GEMM is measured at one
 * thread only (at more, nnc's threads call it concurrently).
 *
 * Output (rank 0): human-readable lines on stderr, and one machine-readable line on
 * stdout:  RESULT side=nnc model=... batch=... median_ms=... min_ms=... ...
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "harness.h"
#include "timing.h"

/* OpenBLAS extensions (declared by OpenBLAS's cblas.h too; repeated here
 * so that the harness does not depend on which cblas.h is found). */
char *openblas_get_config(void);
char *openblas_get_corename(void);

/* The vector ISA this file (and the generated C, compiled with the same
 * flags) was compiled for: what -march gave, as opposed to what the
 * runtime picks at run time (nnc_isa). */
#if defined(__AVX512F__)
#define BUILT_FOR "avx512"
#elif defined(__AVX2__)
#define BUILT_FOR "avx2"
#else
#define BUILT_FOR "baseline"
#endif

/* ---- time spent inside the float GEMM -------------------------------------
 * With -DBENCH_WRAP_SGEMM and -Wl,--wrap=nnc_gemm_f32_serial and
 * --wrap=nnc_gemm_bias_f32_serial (bench/run.sh does all three), the runtime's one-thread float GEMM (runtime/gemm.c through
 * dispatch.c, which the generated code's nnc_cblas_sgemm and nnc_sgemm
 * call; nnc's own at AVX2 and AVX-512, cblas_sgemm in the generic build)
 * lands here: each call is timed and accumulated per step and per shape, so
 * the report can tell the GEMM time from everything else (convolutions,
 * elementwise loops, reductions, loss, optimizer). */
static double sgemm_time; /* seconds inside the GEMM in the current step */
static int sgemm_record;  /* per-shape stats only during timed steps */
typedef struct gemm_stat {
    int ta, tb, m, n, k, calls;
    double total;
} gemm_stat;
static gemm_stat gemm_stats[64];
static int n_gemm_stats;

#ifdef BENCH_WRAP_SGEMM
/* one call's time, to the step's total and its shape's */
static void gemm_account(int ta, int tb, int64_t M, int64_t N, int64_t K, double dt)
{
    sgemm_time += dt;
    if (!sgemm_record)
        return;
    int i;
    for (i = 0; i < n_gemm_stats; i++) {
        gemm_stat *g = &gemm_stats[i];
        if (g->ta == ta && g->tb == tb && g->m == (int)M && g->n == (int)N && g->k == (int)K)
            break;
    }
    if (i == n_gemm_stats) {
        if (n_gemm_stats == 64)
            return;
        gemm_stats[n_gemm_stats++] = (gemm_stat){ta, tb, (int)M, (int)N, (int)K, 0, 0.0};
    }
    gemm_stats[i].calls++;
    gemm_stats[i].total += dt;
}

void __real_nnc_gemm_f32_serial(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                                int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
void __wrap_nnc_gemm_f32_serial(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                                int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
void __wrap_nnc_gemm_f32_serial(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                                int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    if (nnc_threads() > 1) { /* (concurrent calls: not counted) */
        __real_nnc_gemm_f32_serial(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    double t0 = now_s();
    __real_nnc_gemm_f32_serial(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    gemm_account(ta, tb, M, N, K, now_s() - t0);
}

/* (-Wl,--wrap=nnc_gemm_bias_f32_serial: a linear layer's product and bias) */
void __real_nnc_gemm_bias_f32_serial(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                                     int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc,
                                     const float *bias);
void __wrap_nnc_gemm_bias_f32_serial(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                                     int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc,
                                     const float *bias);
void __wrap_nnc_gemm_bias_f32_serial(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                                     int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc, const float *bias)
{
    if (nnc_threads() > 1) {
        __real_nnc_gemm_bias_f32_serial(ta, tb, M, N, K, alpha, A, lda, B, ldb, C, ldc, bias);
        return;
    }
    double t0 = now_s();
    __real_nnc_gemm_bias_f32_serial(ta, tb, M, N, K, alpha, A, lda, B, ldb, C, ldc, bias);
    gemm_account(ta, tb, M, N, K, now_s() - t0);
}
#define HAVE_SGEMM_TIME 1
#else
#define HAVE_SGEMM_TIME 0
#endif

/* Sorts x[0..n) and returns its median. */
static double median_of(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--batch B] [--warmup W] [--min-iters N] [--min-time S]\n"
            "          [--max-iters M] [--lr LR] [--seed S] [--share P]\n",
            argv0);
    exit(1);
}

int main(int argc, char **argv)
{
    const bench_model *d = &bench_model_desc;
    if (nnc_dist_init(&argc, &argv) != 0)
        return fprintf(stderr, "%s\n", nnc_error()), 1;
    const int rank = nnc_dist_rank(), procs = nnc_dist_size();
    int batch = d->default_batch, warmup = 20, min_iters = 50, max_iters = 20000;
    double min_time = 3.0, lr = 1e-3;
    unsigned long long seed = 1;
    int share = procs; /* --share P in one process: rank 0's share of P, alone */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            usage(argv[0]);
        const char *v = argv[++i];
        if (!strcmp(a, "--batch"))
            batch = atoi(v);
        else if (!strcmp(a, "--warmup"))
            warmup = atoi(v);
        else if (!strcmp(a, "--min-iters"))
            min_iters = atoi(v);
        else if (!strcmp(a, "--max-iters"))
            max_iters = atoi(v);
        else if (!strcmp(a, "--min-time"))
            min_time = atof(v);
        else if (!strcmp(a, "--lr"))
            lr = atof(v);
        else if (!strcmp(a, "--share"))
            share = atoi(v);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else
            usage(argv[0]);
    }
    if (batch < share || share < 1 || (share != procs && procs != 1) || warmup < 0 || min_iters < 1 ||
        max_iters < min_iters)
        usage(argv[0]);
    /* this rank's share of the global batch: examples [first, first+local) */
    const int local = batch / share + (rank < batch % share);
    const int first = rank * (batch / share) + (rank < batch % share ? rank : batch % share);

    /* ---- everything allocated up front ----
     * The global batch is drawn in full on every rank (the same numbers
     * as one process) and each keeps its rows. */
    nnc_rng rng;
    nnc_rng_seed(&rng, seed + 1000);
    const void *in[BENCH_MAX_IO], *lab[BENCH_MAX_IO];
    for (int side = 0; side < 2; side++) {
        int count = side ? d->num_labels : d->num_inputs;
        const bench_io *io = side ? d->labels : d->inputs;
        const void **dst = side ? lab : in;
        for (int k = 0; k < count; k++) {
            const size_t n = io[k].per_example * (size_t)batch;
            const size_t lo = io[k].per_example * (size_t)first, hi = lo + io[k].per_example * (size_t)local;
            if (io[k].dtype == NNC_F32) {
                float *p = malloc((hi - lo) * sizeof *p);
                if (!p)
                    return perror("malloc"), 1;
                for (size_t i = 0; i < n; i++) {
                    const float x = (float)nnc_rng_normal(&rng);
                    if (i >= lo && i < hi)
                        p[i - lo] = x;
                }
                dst[k] = p;
            } else {
                int32_t *p = malloc((hi - lo) * sizeof *p);
                if (!p)
                    return perror("malloc"), 1;
                for (size_t i = 0; i < n; i++) {
                    const int32_t x = (int32_t)nnc_rng_below(&rng, (uint32_t)io[k].limit);
                    if (i >= lo && i < hi)
                        p[i - lo] = x;
                }
                dst[k] = p;
            }
        }
    }
    void *m = calloc(1, d->model_size);
    if (!m || d->init(m, local, seed) != 0)
        return fprintf(stderr, "model init: %s\n", nnc_error()), 1;
    nnc_model_head *h = (nnc_model_head *)m;
    nnc_optim opt;
    const int adamw = d->optimizer == BENCH_ADAMW;
    const char *opt_name = adamw ? "AdamW" : "Adam";
    if (nnc_optim_init(&opt, adamw ? NNC_ADAMW : NNC_ADAM, d->num_params, (float)lr) != 0)
        return fprintf(stderr, "%s\n", nnc_error()), 1;
    /* per step: total, then the three phases */
    double *t = malloc((size_t)max_iters * sizeof *t);
    double *tf = malloc((size_t)max_iters * sizeof *tf);
    double *tb = malloc((size_t)max_iters * sizeof *tb);
    double *to = malloc((size_t)max_iters * sizeof *to);
    double *tg = malloc((size_t)max_iters * sizeof *tg);
    double *tw = malloc((size_t)max_iters * sizeof *tw);
    double *twf = malloc((size_t)max_iters * sizeof *twf);
    if (!t || !tf || !tb || !to || !tg || !tw || !twf)
        return perror("malloc"), 1;

    /* ---- warm-up ---- */
    float first_loss = NAN, loss = NAN;
    for (int i = 0; i < warmup; i++) {
        loss = d->train_forward(m, local, in, lab);
        d->backward(m);
        nnc_optim_step(&opt, h->params, h->grads);
        if (i == 0)
            first_loss = loss;
    }

    /* ---- measured steps ---- */
    int iters = 0;
    double total = 0;
    sgemm_record = 1;
    int more = 1;
    nnc_dist_wait_seconds(); /* from here on */
    while (more) {
        sgemm_time = 0;
        double t0 = now_s();
        loss = d->train_forward(m, local, in, lab);
        double t1 = now_s();
        twf[iters] = nnc_dist_wait_seconds(); /* the forward pass's sums */
        d->backward(m);
        double t2 = now_s();
        nnc_optim_step(&opt, h->params, h->grads);
        double t3 = now_s();
        double dt = t3 - t0;
        tf[iters] = t1 - t0;
        tb[iters] = t2 - t1;
        to[iters] = t3 - t2;
        tg[iters] = sgemm_time;
        tw[iters] = nnc_dist_wait_seconds(); /* the backward pass's */
        t[iters++] = dt;
        total += dt;
        if (iters == 1 && warmup == 0)
            first_loss = loss;
        /* rank 0's clock decides for every rank: the same steps on all */
        more = iters < max_iters && (iters < min_iters || total < min_time);
        nnc_dist_bcast(&more, sizeof more);
    }
    double median = median_of(t, iters);
    double med_f = median_of(tf, iters), med_b = median_of(tb, iters), med_o = median_of(to, iters);
    double med_g = HAVE_SGEMM_TIME ? median_of(tg, iters) : NAN;
    double med_w = median_of(tw, iters), med_wf = median_of(twf, iters);
    double mean = total / iters;
    double p90 = t[(size_t)(0.9 * (iters - 1))];
    double step_flops = 3.0 * d->fwd_gemm_flops_per_example * batch;

    if (rank != 0)
        goto done;
    /* the process's peak resident set so far (Linux: ru_maxrss in KB):
     * the arena, the threads' scratch, the weights and the harness's data */
    struct rusage ru;
    const double rss_mb = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : NAN;
    fprintf(stderr,
            "nnc %s: batch %d (%d process(es), %d on rank 0), %zu params, ISA %s (generated C compiled for %s), "
            "nnc threads %d, OpenBLAS core %s (%s)\n"
            "  %d warm-up + %d timed steps in %.2f s: median %.4f ms, min %.4f ms, "
            "mean %.4f ms, p90 %.4f ms; %.2f GFLOP/s at the median\n"
            "  phases (medians): train_forward %.4f ms, backward %.4f ms, %s step %.4f ms; "
            "inside the float GEMM %.4f ms\n"
            "  waiting for the sums across processes (medians): forward %.4f ms, backward %.4f ms\n"
            "  loss %.4f (first step) -> %.4f (last step); peak RSS %.1f MB\n",
            d->name, batch, procs, local, d->num_params, nnc_isa_name(nnc_isa()), BUILT_FOR, nnc_threads(),
            openblas_get_corename(), openblas_get_config(), warmup, iters, total, 1e3 * median, 1e3 * t[0], 1e3 * mean,
            1e3 * p90, step_flops / median * 1e-9, 1e3 * med_f, 1e3 * med_b, opt_name, 1e3 * med_o, 1e3 * med_g,
            1e3 * med_wf, 1e3 * med_w, first_loss, loss, rss_mb);
    for (int i = 0; i < n_gemm_stats; i++) {
        const gemm_stat *g = &gemm_stats[i];
        const double per = g->total / g->calls;
        fprintf(stderr, "  sgemm %c%c M=%d N=%d K=%d: %d calls/step, %.4f ms/call, %.1f GFLOP/s\n", g->ta ? 'T' : 'N',
                g->tb ? 'T' : 'N', g->m, g->n, g->k, (g->calls + iters / 2) / iters, 1e3 * per,
                2.0 * g->m * (double)g->n * g->k / per * 1e-9);
    }
    printf("RESULT side=nnc model=%s batch=%d median_ms=%.6f min_ms=%.6f mean_ms=%.6f "
           "p90_ms=%.6f iters=%d warmup=%d threads=%d step_flops=%.0f params=%zu optim=%s "
           "fwd_ms=%.6f bwd_ms=%.6f opt_ms=%.6f sgemm_ms=%.6f first_loss=%.6f last_loss=%.6f "
           "isa=%s built_for=%s blas_core=%s procs=%d share=%d wait_fwd_ms=%.6f wait_ms=%.6f maxrss_mb=%.1f\n",
           d->name, batch, 1e3 * median, 1e3 * t[0], 1e3 * mean, 1e3 * p90, iters, warmup, nnc_threads(), step_flops,
           d->num_params, adamw ? "adamw" : "adam", 1e3 * med_f, 1e3 * med_b, 1e3 * med_o, 1e3 * med_g, first_loss,
           loss, nnc_isa_name(nnc_isa()), BUILT_FOR, openblas_get_corename(), procs, share, 1e3 * med_wf, 1e3 * med_w,
           rss_mb);

done:
    free(t), free(tf), free(tb), free(to), free(tg), free(tw), free(twf);
    nnc_optim_free(&opt);
    d->release(m);
    free(m);
    for (int k = 0; k < d->num_inputs; k++)
        free((void *)in[k]);
    for (int k = 0; k < d->num_labels; k++)
        free((void *)lab[k]);
    nnc_dist_finalize();
    return 0;
}
