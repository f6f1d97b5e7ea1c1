/* The training step never allocates: the generated code and the runtime
 * are linked with --wrap for the allocator, which counts calls; after
 * init, forward, train_forward, backward, eval and an optimizer step must
 * make none.  (OpenBLAS is a shared library and keeps its own buffers;
 * the claim is about nnc's code.) */
#include <stdio.h>
#include <stdlib.h>

#include "digits.h"

#include "../runtime/count_allocs.h"

int main(void)
{
    enum { B = 16 };
    static float x[B][64], out[B][10];
    static int32_t y[B];
    for (int i = 0; i < B; i++) {
        y[i] = i % 10;
        for (int j = 0; j < 64; j++)
            x[i][j] = (float)((i * 7 + j * 3) % 17) / 16.0f;
    }
    digits m;
    nnc_optim opt;
    if (digits_init(&m, B, 1) != 0 || nnc_optim_init(&opt, NNC_ADAM, DIGITS_NUM_PARAMS, 1e-3f) != 0)
        return 2;
    long before = allocs;
    float loss = 0, metric[1];
    for (int step = 0; step < 5; step++) {
        loss = digits_train_forward(&m, B - step, (const float (*)[64])x, y);
        digits_backward(&m);
        nnc_clip_grad_norm((float *)m.grads, DIGITS_NUM_PARAMS, 1.0f);
        nnc_optim_step(&opt, (float *)m.params, (const float *)m.grads);
        digits_forward(&m, B, (const float (*)[64])x, out);
        digits_eval(&m, B, (const float (*)[64])x, y, &loss, metric);
    }
    long during = allocs - before;
    printf("allocations: %ld in init (must be counted), %ld during training steps (loss %g)\n", before, during,
           loss);
    nnc_optim_free(&opt);
    digits_release(&m);
    /* init's own calloc calls prove that the counting works */
    return before > 0 && during == 0 ? 0 : 1;
}
