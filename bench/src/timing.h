/* timing.h — the clock and the median of the benchmark's C programs
 * (harness.c, sgemm_peak.c, sum_cost.c). */
#ifndef NNC_BENCH_TIMING_H
#define NNC_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
