/* dist.c — the processes of a data-parallel run (nnc_runtime.h,
 * "processes").
 *
 * Built twice: into nnc_runtime as one process (rank 0 of 1: a sum over
 * one rank is the value itself, so every call is a no-op), and with
 * -DNNC_MPI into nnc_runtime_mpi over MPI.  Generated code and the driver
 * call the same functions either way, so a build without MPI depends on
 * nothing of it.
 */
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

#else
#error "the MPI variant is not written yet"
#endif
