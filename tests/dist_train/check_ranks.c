/* check_ranks.c — a C program that trains bn_cnn.nn through its typed API
 * under mpirun, as a user's program would, and checks that every rank ends
 * with the same bits: params, state (running statistics, counters) and
 * the last loss, gathered on rank 0 and compared byte for byte.
 *
 *   mpirun -np P check_ranks STEPS
 *
 * The data is made here from a formula, the same on every rank; each rank
 * passes its share of every batch of 20 (rank order, the first 20 mod P
 * ranks one more).  Prints one line on rank 0, and exits non-zero on a
 * difference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bn_cnn.h"

#define EXAMPLES 100
#define BATCH 20

int main(int argc, char **argv)
{
    if (nnc_dist_init(&argc, &argv) != 0) {
        fprintf(stderr, "check_ranks: %s\n", nnc_error());
        return 2;
    }
    const int steps = argc > 1 ? atoi(argv[1]) : 10;
    const int rank = nnc_dist_rank(), size = nnc_dist_size();
    static float x[EXAMPLES][1][8][8];
    static int32_t y[EXAMPLES];
    for (int i = 0; i < EXAMPLES; i++) {
        y[i] = (i * 7) % 10;
        for (int k = 0; k < 64; k++)
            x[i][0][k / 8][k % 8] = (float)sin(0.37 * i + 0.11 * k * (1 + y[i]));
    }
    bn_cnn m;
    if (bn_cnn_init(&m, BATCH, 5) != 0) {
        fprintf(stderr, "check_ranks: init: %s\n", nnc_error());
        nnc_dist_abort(2);
    }
    nnc_optim opt;
    if (nnc_optim_init(&opt, NNC_ADAM, BN_CNN_NUM_PARAMS, 0.01f) != 0)
        nnc_dist_abort(2);
    float loss = 0;
    for (int s = 0; s < steps; s++) {
        const int first = (s * BATCH) % EXAMPLES, q = BATCH / size, rem = BATCH % size;
        const int n = q + (rank < rem), off = rank * q + (rank < rem ? rank : rem);
        loss = bn_cnn_train_forward(&m, n, (const float(*)[1][8][8])x[first + off], y + first + off);
        bn_cnn_backward(&m);
        nnc_optim_step(&opt, (float *)m.params, (const float *)m.grads);
    }
    /* this rank's bits: params, state, the last loss */
    const size_t np = sizeof(bn_cnn_params), ns = sizeof(bn_cnn_state), each = np + ns + sizeof loss;
    unsigned char *mine = malloc(each), *all = malloc(each * (size_t)size);
    if (!mine || !all)
        nnc_dist_abort(2);
    memcpy(mine, m.params, np);
    memcpy(mine + np, m.state, ns);
    memcpy(mine + np + ns, &loss, sizeof loss);
    nnc_dist_gather(mine, (int64_t)each, all);
    int bad = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            if (memcmp(all, all + (size_t)r * each, each) != 0) {
                size_t at = 0;
                while (all[at] == all[(size_t)r * each + at])
                    at++;
                fprintf(stderr, "check_ranks: rank %d differs from rank 0 at byte %zu of %zu\n", r, at, each);
                bad = 1;
            }
        if (!bad)
            printf("%d ranks, %d steps: identical params, state and loss (%.9g)\n", size, steps, (double)loss);
    }
    nnc_dist_bcast(&bad, sizeof bad);
    free(mine);
    free(all);
    nnc_optim_free(&opt);
    bn_cnn_release(&m);
    nnc_dist_finalize();
    return bad;
}
