/* The generated forward and backward of gather_elements with indices out
 * of range: NaN where an index is bad, x's element elsewhere; a backward
 * that adds nothing for a bad index (the test builds this under ASan: no
 * access outside the arena either). */
#include <math.h>
#include <stdio.h>

#include "gather.h"

int main(void)
{
    gather m;
    if (gather_init(&m, 2, 1) != 0)
        return 2;
    const float x[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    const int32_t idx[2][3] = {{3, 0, 3}, {4, -1, 2}};
    const float y[2][3] = {{0}};
    float out[2][3];
    gather_forward(&m, 2, x, idx, out);
    int ok =
        out[0][0] == 4 && out[0][1] == 1 && out[0][2] == 4 && isnan(out[1][0]) && isnan(out[1][1]) && out[1][2] == 7;
    printf("out-of-range indices give NaN, the others x's elements: %s\n", ok ? "yes" : "no");
    /* the backward pass adds dy = 2 out / 6 into the elements read, and
     * nothing for a bad index (its dy is NaN): d w = x * those sums, w 1 */
    const double loss = gather_train_forward(&m, 2, x, idx, y);
    gather_backward(&m);
    const float want[4] = {1.0f / 3, 0, 49.0f / 3, 32.0f / 3};
    int grad_ok = 1;
    for (int k = 0; k < 4; k++)
        grad_ok &= fabsf(m.grads->w[k] - want[k]) <= 1e-5f * (1 + fabsf(want[k]));
    printf("backward over bad indices (loss %g): the gradient of w skips them: %s\n", loss, grad_ok ? "yes" : "no");
    ok &= grad_ok;
    gather_release(&m);
    return ok ? 0 : 1;
}
