/* The generated header's typed fields in use: weights set by path
 * (m.params->fc1.weight[o][i]), a forward output checked against values
 * worked out by hand, and gradients read by path (m.grads->fc2.bias[k])
 * checked against softmax - onehot, averaged over the batch.
 *
 * The program states the shapes it assumes (w1, w2 below and the
 * _Static_asserts): a model whose fc1 is renamed or has another width
 * must make this file fail to compile (tests/typed_fields/CMakeLists.txt). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "typed_fields.h"

static int failures;

static void check(const char *what, double got, double want)
{
    double tol = 1e-5 * (1 + fabs(want));
    if (!(fabs(got - want) <= tol)) {
        printf("FAIL %s: got %.9g, want %.9g\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    typed_fields m;
    if (typed_fields_init(&m, 2, 7) != 0)
        return 1;

    /* fc1: [3, 2] as torch.nn.Linear (out, in) */
    static const float w1[3][2] = {{1, 0}, {0, 1}, {1, -1}};
    static const float w2[2][3] = {{1, 1, 0}, {0, -1, 2}};
    _Static_assert(sizeof m.params->fc1.weight == sizeof w1, "fc1.weight is [3][2]");
    _Static_assert(sizeof m.params->fc2.weight == sizeof w2, "fc2.weight is [2][3]");
    memcpy(m.params->fc1.weight, w1, sizeof w1);
    memcpy(m.params->fc2.weight, w2, sizeof w2);
    m.params->fc1.bias[0] = 0;
    m.params->fc1.bias[1] = 0;
    m.params->fc1.bias[2] = 0.5f;
    m.params->fc2.bias[0] = 0.25f;
    m.params->fc2.bias[1] = 0;

    const float x[2][2] = {{2, 1}, {-1, 3}};
    const int32_t y[2] = {1, 0};

    /* By hand:
     *   x0 = (2, 1):  fc1 = (2, 1, 2-1+0.5 = 1.5), relu keeps all
     *                 fc2 = (2+1+0.25, -1+2*1.5) = (3.25, 2)
     *   x1 = (-1, 3): fc1 = (-1, 3, -1-3+0.5 = -3.5), relu -> (0, 3, 0)
     *                 fc2 = (3+0.25, -3) = (3.25, -3) */
    const float h[2][3] = {{2, 1, 1.5f}, {0, 3, 0}};
    const float logits[2][2] = {{3.25f, 2}, {3.25f, -3}};
    float out[2][2];
    typed_fields_forward(&m, 2, x, out);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            check("forward", out[i][k], logits[i][k]);

    /* Cross-entropy, mean over the batch; d loss / d logits is
     * (softmax - onehot) / n. */
    double loss = 0, dz[2][2];
    for (int i = 0; i < 2; i++) {
        double e0 = exp(logits[i][0]), e1 = exp(logits[i][1]);
        double p[2] = {e0 / (e0 + e1), e1 / (e0 + e1)};
        loss -= log(p[y[i]]) / 2;
        for (int k = 0; k < 2; k++)
            dz[i][k] = (p[k] - (k == y[i])) / 2;
    }
    float got_loss = typed_fields_train_forward(&m, 2, x, y);
    typed_fields_backward(&m);
    check("loss", got_loss, loss);
    for (int k = 0; k < 2; k++)
        check("fc2.bias grad", m.grads->fc2.bias[k], dz[0][k] + dz[1][k]);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            check("fc2.weight grad", m.grads->fc2.weight[k][j], dz[0][k] * h[0][j] + dz[1][k] * h[1][j]);
    /* fc1's third unit: active for x0 only (x1 gives -3.5 before relu) */
    double dh2 = dz[0][0] * w2[0][2] + dz[0][1] * w2[1][2];
    check("fc1.bias[2] grad", m.grads->fc1.bias[2], dh2);
    check("fc1.weight[2][0] grad", m.grads->fc1.weight[2][0], dh2 * x[0][0]);
    check("fc1.weight[2][1] grad", m.grads->fc1.weight[2][1], dh2 * x[0][1]);
    /* its first unit: x1's pre-activation is -1, so only x0 counts */
    double dh0 = dz[0][0] * w2[0][0] + dz[0][1] * w2[1][0];
    check("fc1.weight[0][0] grad", m.grads->fc1.weight[0][0], dh0 * x[0][0]);

    typed_fields_release(&m);
    if (failures)
        return 1;
    printf("typed fields: forward, loss and gradients match the hand computation\n");
    return 0;
}
