/* Trains mlp.nn on a made-up task (the class is the brightest of the
 * first 10 pixels) through the generated header, then saves the weights.
 *   nnc mlp.nn -o out && cc -O2 -Iout train_mlp.c out/mlp.c \
 *       $(pkg-config --cflags --libs nnc) -o train_mlp */
#include <stdio.h>
#include <stdlib.h>

#include "mlp.h"

enum { BATCH = 32, STEPS = 300 };

static void make_batch(float x[BATCH][64], int32_t y[BATCH])
{
    for (int i = 0; i < BATCH; i++) {
        y[i] = 0;
        for (int j = 0; j < 64; j++)
            x[i][j] = (float)rand() / (float)RAND_MAX;
        for (int k = 1; k < MLP_CLASSES; k++)
            if (x[i][k] > x[i][y[i]])
                y[i] = k;
    }
}

int main(void)
{
    static float x[BATCH][64];
    static int32_t y[BATCH];
    mlp m;
    nnc_optim adam;
    if (mlp_init(&m, BATCH, 1) != 0 || nnc_optim_init(&adam, NNC_ADAM, MLP_NUM_PARAMS, 1e-2f) != 0) {
        perror("mlp");
        return 1;
    }
    m.params->fc2.bias[0] = 0.0f; /* every weight is a typed field */
    srand(1);
    for (int step = 0; step < STEPS; step++) {
        make_batch(x, y);
        float loss = mlp_train_forward(&m, BATCH, (const float (*)[64])x, y);
        mlp_backward(&m);
        /* the params and grads structs are also flat float arrays */
        nnc_optim_step(&adam, (float *)m.params, (const float *)m.grads);
        if (step % 100 == 0)
            printf("step %d loss %.4f\n", step, loss);
    }
    float loss, metrics[MLP_NUM_METRICS];
    make_batch(x, y);
    mlp_eval(&m, BATCH, (const float (*)[64])x, y, &loss, metrics);
    printf("fresh batch: loss %.4f %s %.2f\n", loss, mlp_metric_names[0], metrics[0]);
    int rc = mlp_save(&m, "mlp.safetensors");
    if (rc != 0)
        fprintf(stderr, "%s\n", nnc_error());
    nnc_optim_free(&adam);
    mlp_release(&m);
    return rc == 0 ? 0 : 1;
}
