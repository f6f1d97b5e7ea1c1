/* fma_peak.c — the machine's single-precision FMA peak: the ceiling that no
 * float kernel can pass, beside the sgemm rate (sgemm_peak.c) that the
 * benchmark's GFLOP/s are also compared with.
 *
 *   fma_peak [--min-time S] [THREADS...]        (default: 1 and every core)
 *
 * A loop of independent FMAs (acc[i] = acc[i] * x + y over 16 zmm or 12 ymm
 * accumulators: more chains than FMA latency x FMA ports, so the FMA units
 * never wait) at the widest vector ISA the CPU has: AVX-512 (zmm) if
 * __builtin_cpu_supports says so, else AVX2 + FMA (ymm), else SSE2 (xmm, a
 * multiply and an add).  Each variant is a function with
 * __attribute__((target(...))), so this file needs no -march flag and runs
 * on any x86-64.  On an AVX-512 machine the ymm rate is printed too (some
 * CPUs have only one 512-bit FMA unit, or clock lower with zmm).
 *
 * For each thread count T: T pthreads run the loop at once, started
 * together; GFLOP/s = T x FMAs x lanes x 2 / wall time.  Repeated until S
 * seconds (default 1) and at least 5 repetitions; the best repetition is
 * the peak (other work on the machine can only lower a repetition), the
 * median is printed too.
 *
 * stdout: "FMA isa=... threads=T best_gflops=... median_gflops=..." per
 * variant and thread count, and "FMA_PEAK isa=... threads=T gflops=..." for
 * the widest one.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <immintrin.h>

#include "timing.h"

/* acc = acc * x + y converges to y / (1 - x) = 1: no overflow, no denormals. */
#define X 0.999f
#define Y 0.001f

__attribute__((target("avx512f"))) static float loop_zmm(long n)
{
    const __m512 x = _mm512_set1_ps(X), y = _mm512_set1_ps(Y);
    /* distinct starting values, or the compiler merges identical chains */
#define Z(i) _mm512_set1_ps(0.01f * (i))
    __m512 a0 = Z(0), a1 = Z(1), a2 = Z(2), a3 = Z(3), a4 = Z(4), a5 = Z(5), a6 = Z(6), a7 = Z(7);
    __m512 a8 = Z(8), a9 = Z(9), a10 = Z(10), a11 = Z(11), a12 = Z(12), a13 = Z(13), a14 = Z(14), a15 = Z(15);
#undef Z
    for (long i = 0; i < n; i++) {
        a0 = _mm512_fmadd_ps(a0, x, y), a1 = _mm512_fmadd_ps(a1, x, y);
        a2 = _mm512_fmadd_ps(a2, x, y), a3 = _mm512_fmadd_ps(a3, x, y);
        a4 = _mm512_fmadd_ps(a4, x, y), a5 = _mm512_fmadd_ps(a5, x, y);
        a6 = _mm512_fmadd_ps(a6, x, y), a7 = _mm512_fmadd_ps(a7, x, y);
        a8 = _mm512_fmadd_ps(a8, x, y), a9 = _mm512_fmadd_ps(a9, x, y);
        a10 = _mm512_fmadd_ps(a10, x, y), a11 = _mm512_fmadd_ps(a11, x, y);
        a12 = _mm512_fmadd_ps(a12, x, y), a13 = _mm512_fmadd_ps(a13, x, y);
        a14 = _mm512_fmadd_ps(a14, x, y), a15 = _mm512_fmadd_ps(a15, x, y);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s,
                      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                                    _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15))));
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float loop_ymm(long n)
{
    const __m256 x = _mm256_set1_ps(X), y = _mm256_set1_ps(Y);
#define Z(i) _mm256_set1_ps(0.01f * (i))
    __m256 a0 = Z(0), a1 = Z(1), a2 = Z(2), a3 = Z(3), a4 = Z(4), a5 = Z(5), a6 = Z(6), a7 = Z(7);
    __m256 a8 = Z(8), a9 = Z(9), a10 = Z(10), a11 = Z(11);
#undef Z
    for (long i = 0; i < n; i++) {
        a0 = _mm256_fmadd_ps(a0, x, y), a1 = _mm256_fmadd_ps(a1, x, y);
        a2 = _mm256_fmadd_ps(a2, x, y), a3 = _mm256_fmadd_ps(a3, x, y);
        a4 = _mm256_fmadd_ps(a4, x, y), a5 = _mm256_fmadd_ps(a5, x, y);
        a6 = _mm256_fmadd_ps(a6, x, y), a7 = _mm256_fmadd_ps(a7, x, y);
        a8 = _mm256_fmadd_ps(a8, x, y), a9 = _mm256_fmadd_ps(a9, x, y);
        a10 = _mm256_fmadd_ps(a10, x, y), a11 = _mm256_fmadd_ps(a11, x, y);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    float v[8];
    _mm256_storeu_ps(v, s);
    return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

/* No FMA: a multiply and an add per accumulator (2 FLOPs, as one FMA). */
static float loop_xmm(long n)
{
    const __m128 x = _mm_set1_ps(X), y = _mm_set1_ps(Y);
#define Z(i) _mm_set1_ps(0.01f * (i))
    __m128 a0 = Z(0), a1 = Z(1), a2 = Z(2), a3 = Z(3), a4 = Z(4), a5 = Z(5), a6 = Z(6), a7 = Z(7);
#undef Z
    for (long i = 0; i < n; i++) {
        a0 = _mm_add_ps(_mm_mul_ps(a0, x), y), a1 = _mm_add_ps(_mm_mul_ps(a1, x), y);
        a2 = _mm_add_ps(_mm_mul_ps(a2, x), y), a3 = _mm_add_ps(_mm_mul_ps(a3, x), y);
        a4 = _mm_add_ps(_mm_mul_ps(a4, x), y), a5 = _mm_add_ps(_mm_mul_ps(a5, x), y);
        a6 = _mm_add_ps(_mm_mul_ps(a6, x), y), a7 = _mm_add_ps(_mm_mul_ps(a7, x), y);
    }
    __m128 s = _mm_add_ps(_mm_add_ps(_mm_add_ps(a0, a1), _mm_add_ps(a2, a3)),
                          _mm_add_ps(_mm_add_ps(a4, a5), _mm_add_ps(a6, a7)));
    float v[4];
    _mm_storeu_ps(v, s);
    return v[0] + v[1] + v[2] + v[3];
}

typedef struct variant {
    const char *isa;
    float (*loop)(long n);
    double flops_per_iter; /* accumulators x lanes x 2 */
} variant;

static const variant variants[] = {
    {"avx512", loop_zmm, 16 * 16 * 2},
    {"avx2", loop_ymm, 12 * 8 * 2},
    {"sse2", loop_xmm, 8 * 4 * 2},
};

/* ---- T threads running the loop together ---- */
typedef struct job {
    const variant *v;
    long n;
    pthread_barrier_t *start;
    volatile float sink;
} job;

static void *worker(void *p)
{
    job *j = p;
    pthread_barrier_wait(j->start);
    j->sink = j->v->loop(j->n);
    return NULL;
}

/* Wall seconds for T threads to run n iterations each (the caller is one of
 * them). */
static double run_threads(const variant *v, int threads, long n)
{
    pthread_t tid[256];
    job jobs[256];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (int i = 1; i < threads; i++) {
        jobs[i] = (job){v, n, &start, 0};
        if (pthread_create(&tid[i], NULL, worker, &jobs[i]) != 0)
            perror("pthread_create"), exit(1);
    }
    jobs[0] = (job){v, n, &start, 0};
    pthread_barrier_wait(&start);
    const double t0 = now_s();
    jobs[0].sink = v->loop(n);
    for (int i = 1; i < threads; i++)
        pthread_join(tid[i], NULL);
    const double dt = now_s() - t0;
    pthread_barrier_destroy(&start);
    return dt;
}

/* Best and median GFLOP/s of v on T threads over >= min_time seconds. */
static void measure(const variant *v, int threads, double min_time, double *best, double *median)
{
    long n = 1 << 16;
    while (run_threads(v, 1, n) < 0.02 && n < (1L << 40)) /* calibrate: ~20 ms a repetition */
        n *= 2;
    double g[1000];
    int reps = 0;
    double total = 0;
    while (reps < 1000 && (reps < 5 || total < min_time)) {
        const double dt = run_threads(v, threads, n);
        g[reps++] = threads * (double)n * v->flops_per_iter / dt * 1e-9;
        total += dt;
    }
    qsort(g, (size_t)reps, sizeof *g, cmp_double);
    *best = g[reps - 1];
    *median = reps % 2 ? g[reps / 2] : 0.5 * (g[reps / 2 - 1] + g[reps / 2]);
}

int main(int argc, char **argv)
{
    double min_time = 1.0;
    int counts[16], ncounts = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--min-time") && i + 1 < argc)
            min_time = atof(argv[++i]);
        else if (ncounts < 16 && atoi(argv[i]) > 0 && atoi(argv[i]) <= 256)
            counts[ncounts++] = atoi(argv[i]);
        else {
            fprintf(stderr, "usage: %s [--min-time S] [THREADS...]\n", argv[0]);
            return 1;
        }
    }
    if (ncounts == 0) {
        counts[ncounts++] = 1;
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (cores > 1)
            counts[ncounts++] = (int)(cores < 256 ? cores : 256);
    }
    __builtin_cpu_init();
    const int zmm = __builtin_cpu_supports("avx512f"),
              ymm = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    /* the widest first; on an AVX-512 machine the ymm rate too */
    const variant *run[2];
    int nrun = 0;
    if (zmm)
        run[nrun++] = &variants[0];
    if (ymm)
        run[nrun++] = &variants[1];
    if (nrun == 0)
        run[nrun++] = &variants[2];
    for (int c = 0; c < ncounts; c++) {
        for (int k = 0; k < nrun; k++) {
            double best, median;
            measure(run[k], counts[c], min_time, &best, &median);
            printf("FMA isa=%s threads=%d best_gflops=%.2f median_gflops=%.2f\n", run[k]->isa, counts[c], best, median);
            if (k == 0)
                printf("FMA_PEAK isa=%s threads=%d gflops=%.2f\n", run[k]->isa, counts[c], best);
            fflush(stdout);
        }
    }
    return 0;
}
