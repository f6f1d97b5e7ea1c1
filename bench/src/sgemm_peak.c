/* sgemm_peak.c — the OpenBLAS sgemm rate on this machine, as the ceiling
 * that the benchmark's GFLOP/s are compared with.
 *
 *   sgemm_peak [--min-time S] [SIZE...]        (default sizes 512 1024 2048)
 *
 * For each size n: C = A·B with A, B, C n×n row-major floats
 * (cblas_sgemm, NoTrans/NoTrans, alpha 1, beta 0), 2 warm-up calls, then
 * calls are timed one by one until at least 5 calls and S seconds (default
 * 1); GFLOP/s = 2n³ / median time.  Threads come from OPENBLAS_NUM_THREADS
 * as in the rest of the benchmark.
 *
 * stdout: one "SGEMM n=... median_gflops=... best_gflops=..." line per size
 * and "SGEMM_PEAK gflops=... n=... threads=..." with the best median, then
 * "SGEMM_CONFIG <openblas_get_config()>" (version, build options) and
 * "SGEMM_CORE <openblas_get_corename()>" (the kernel OpenBLAS chose for
 * this CPU at load time; the benchmark sets no OPENBLAS_CORETYPE).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "timing.h"

int openblas_get_num_threads(void);
char *openblas_get_config(void);
char *openblas_get_corename(void);

int main(int argc, char **argv)
{
    double min_time = 1.0;
    int sizes[16], nsizes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--min-time") && i + 1 < argc)
            min_time = atof(argv[++i]);
        else if (nsizes < 16 && atoi(argv[i]) > 0)
            sizes[nsizes++] = atoi(argv[i]);
        else {
            fprintf(stderr, "usage: %s [--min-time S] [SIZE...]\n", argv[0]);
            return 1;
        }
    }
    if (nsizes == 0) {
        sizes[0] = 512, sizes[1] = 1024, sizes[2] = 2048;
        nsizes = 3;
    }
    double peak = 0;
    int peak_n = 0;
    for (int s = 0; s < nsizes; s++) {
        const int n = sizes[s];
        const size_t nn = (size_t)n * (size_t)n;
        float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
        double *t = malloc(100000 * sizeof *t);
        if (!a || !b || !c || !t)
            return perror("malloc"), 1;
        srand(1);
        for (size_t i = 0; i < nn; i++) {
            a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
            b[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        }
        for (int i = 0; i < 2; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        int iters = 0;
        double total = 0;
        while (iters < 100000 && (iters < 5 || total < min_time)) {
            double t0 = now_s();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            t[iters] = now_s() - t0;
            total += t[iters++];
        }
        qsort(t, (size_t)iters, sizeof *t, cmp_double);
        const double median = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
        const double flops = 2.0 * (double)n * (double)n * (double)n;
        const double g = flops / median * 1e-9, best = flops / t[0] * 1e-9;
        printf("SGEMM n=%d median_gflops=%.2f best_gflops=%.2f iters=%d\n", n, g, best, iters);
        fflush(stdout);
        if (g > peak)
            peak = g, peak_n = n;
        free(a), free(b), free(c), free(t);
    }
    printf("SGEMM_PEAK gflops=%.2f n=%d threads=%d\n", peak, peak_n, openblas_get_num_threads());
    printf("SGEMM_CONFIG %s\n", openblas_get_config());
    printf("SGEMM_CORE %s\n", openblas_get_corename());
    return 0;
}
