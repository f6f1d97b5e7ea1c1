/* Uses the typed header generated at build time. */
#include <stdio.h>
#include "tiny_mlp_net.h"

_Static_assert(TINY_MLP_NET_HIDDEN == 6, "DEFINE hidden=6 reached nnc");

int main(void)
{
    tiny_mlp_net m;
    if (tiny_mlp_net_init(&m, 2, 1) != 0)
        return 1;
    const float x[2][3] = {{1, 2, 3}, {-1, 0, 1}};
    const int32_t y[2] = {0, 1};
    float out[2][2];
    m.params->fc2.bias[1] = 100.0f; /* typed fields: class 1 wins */
    tiny_mlp_net_forward(&m, 2, x, out);
    float loss = tiny_mlp_net_train_forward(&m, 2, x, y);
    tiny_mlp_net_backward(&m);
    int ok = out[0][1] > out[0][0] && out[1][1] > out[1][0] && loss > 0 &&
             m.grads->fc2.bias[1] > 0.4f && m.grads->fc2.bias[0] < -0.4f;
    printf("params=%d mid.fc.weight=[%zu][%zu] loss=%g ok=%d\n", TINY_MLP_NET_NUM_PARAMS,
           sizeof m.params->mid.fc.weight / sizeof m.params->mid.fc.weight[0],
           sizeof m.params->mid.fc.weight[0] / sizeof(float), loss, ok);
    tiny_mlp_net_release(&m);
    return ok ? 0 : 1;
}
