/* dist_crash.c — a job that goes wrong, for check_dist.py.
 *
 *   dist_crash hello DIR   every rank sums, then all end normally
 *   dist_crash abort DIR   the last rank calls nnc_dist_abort(5) mid-run
 *   dist_crash kill DIR    the last rank dies of SIGKILL mid-run
 *
 * Each rank first writes its pid to DIR/pid.<rank>, so that the script
 * can check that no process outlives the job.  The other ranks go on
 * summing: they wait in a collective that the lost rank never joins, and
 * only the job's end (MPI_Abort, or mpirun noticing the death) stops them. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnc_runtime.h"

int main(int argc, char **argv)
{
    if (nnc_dist_init(&argc, &argv) != 0) {
        fprintf(stderr, "dist_crash: %s\n", nnc_error());
        return 1;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: dist_crash hello|abort|kill DIR\n");
        nnc_dist_abort(2);
    }
    const char *mode = argv[1];
    int me = nnc_dist_rank(), np = nnc_dist_size();
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%d", argv[2], me);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
        fprintf(stderr, "dist_crash: cannot write %s\n", path);
        nnc_dist_abort(2);
    }
    static float x[1000];
    for (long step = 0;; step++) {
        for (int i = 0; i < 1000; i++)
            x[i] = 1.0f;
        nnc_dist_sum_f32(x, 1000);
        if (x[999] != (float)np) {
            fprintf(stderr, "dist_crash: rank %d: sum %g, want %d\n", me, x[999], np);
            nnc_dist_abort(3);
        }
        if (strcmp(mode, "hello") == 0 && step == 20) {
            printf("dist_crash: rank %d of %d: hello\n", me, np);
            nnc_dist_finalize();
            return 0;
        }
        if (step == 20 && me == np - 1) {
            if (strcmp(mode, "abort") == 0) {
                fprintf(stderr, "dist_crash: rank %d aborts\n", me);
                nnc_dist_abort(5);
            }
            fprintf(stderr, "dist_crash: rank %d is killed\n", me);
            raise(SIGKILL);
        }
    }
}
