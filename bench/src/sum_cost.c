/* sum_cost.c — what one sum across the processes costs: the α and β of
 * docs/generated-c.md's cost model, measured on this machine.
 *
 *   mpirun -np P sum_cost [--min-time S]
 *
 * Times nnc_dist_sum_f32 (blocking) and nnc_dist_sum_start + _wait_all
 * (a gradient bucket) for counts from 1 to 2^20 floats: per count, calls
 * are repeated until S seconds (default 0.5) have passed, every rank
 * starting each call together (a barrier, by a 1-float sum, before it,
 * outside the timing), and the median call is kept.  Rank 0 prints one
 * line per count and the least-squares fit of time = α + β·n over the
 * counts from 2^12 up (the small ones sit on the latency floor):
 *
 *   SUM kind=blocking n=65536 median_us=...
 *   SUM_FIT kind=blocking alpha_us=... beta_ns_per_float=...
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nnc_runtime.h"

#include "timing.h"

enum { MAX_LOG = 20, MAX_REPS = 4096 };

int main(int argc, char **argv)
{
    if (nnc_dist_init(&argc, &argv) != 0)
        return fprintf(stderr, "sum_cost: %s\n", nnc_error()), 1;
    double min_time = 0.5;
    if (argc == 3 && !strcmp(argv[1], "--min-time"))
        min_time = atof(argv[2]);
    else if (argc != 1)
        return fprintf(stderr, "usage: mpirun -np P sum_cost [--min-time S]\n"), 1;
    const int64_t most = (int64_t)1 << MAX_LOG;
    float *x = calloc((size_t)most, sizeof *x);
    double *t = malloc(MAX_REPS * sizeof *t);
    if (!x || !t || nnc_dist_reserve(most, most) != 0)
        return fprintf(stderr, "sum_cost: out of memory\n"), 1;
    const int rank = nnc_dist_rank();
    for (int kind = 0; kind < 2; kind++) {
        const char *name = kind ? "bucket" : "blocking";
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        int fit = 0;
        for (int lg = 0; lg <= MAX_LOG; lg += 2) {
            const int64_t n = (int64_t)1 << lg;
            int reps = 0, more = 1;
            double total = 0;
            while (more) {
                float one = 1;
                nnc_dist_sum_f32(&one, 1); /* everyone here */
                const double t0 = now_s();
                if (kind) {
                    nnc_dist_sum_start(x, n);
                    nnc_dist_wait_all();
                } else {
                    nnc_dist_sum_f32(x, n);
                }
                t[reps] = now_s() - t0;
                total += t[reps++];
                more = reps < MAX_REPS && (reps < 5 || total < min_time); /* rank 0 decides */
                nnc_dist_bcast(&more, sizeof more);
            }
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            const double us = 1e6 * t[reps / 2];
            if (rank == 0)
                printf("SUM kind=%s procs=%d n=%lld median_us=%.3f reps=%d\n", name, nnc_dist_size(), (long long)n, us,
                       reps);
            if (lg >= 12) {
                sx += (double)n, sy += us, sxx += (double)n * (double)n, sxy += (double)n * us;
                fit++;
            }
        }
        const double beta = (fit * sxy - sx * sy) / (fit * sxx - sx * sx), alpha = (sy - beta * sx) / fit;
        if (rank == 0)
            printf("SUM_FIT kind=%s procs=%d alpha_us=%.3f beta_ns_per_float=%.4f\n", name, nnc_dist_size(), alpha,
                   1e3 * beta);
    }
    free(x);
    free(t);
    nnc_dist_finalize();
    return 0;
}
