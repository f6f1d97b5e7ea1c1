/* The model linked through nnc_add_model(... MPI): its runtime is
 * nnc::runtime_mpi, so under `mpirun -np 2` there are two processes. */
#include <stdio.h>
#include <string.h>
#include "tiny_mpi.h"

int main(int argc, char **argv)
{
    if (nnc_dist_init(&argc, &argv) != 0) {
        fprintf(stderr, "app_mpi: %s\n", nnc_error());
        return 1;
    }
    tiny_mpi m;
    if (tiny_mpi_init(&m, 2, 1) != 0)
        return 1;
    const float x[2][3] = {{1, 2, 3}, {-1, 0, 1}};
    float out[2][2], sum[2][2];
    tiny_mpi_forward(&m, 2, x, out);
    /* the same weights (seed 1) and inputs on each rank: the sum of two is twice one */
    memcpy(sum, out, sizeof out);
    nnc_dist_sum_f32(&sum[0][0], 4);
    int ok = nnc_dist_size() == 2;
    for (int i = 0; i < 4; i++)
        ok &= (&sum[0][0])[i] == 2 * (&out[0][0])[i];
    printf("app_mpi: rank %d of %d: ok=%d\n", nnc_dist_rank(), nnc_dist_size(), ok);
    tiny_mpi_release(&m);
    nnc_dist_finalize();
    return ok ? 0 : 1;
}
