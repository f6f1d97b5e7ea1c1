/* Trains the XOR model of xor_net.nn with Adam from the runtime, through the
 * generated header: xor_net_train_forward, xor_net_backward, the flat float view
 * of params and grads, xor_net_eval. */
#include <stdio.h>

#include "xor_net.h"

int main(void)
{
    const float x[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
    const int32_t y[4] = {0, 1, 1, 0};
    xor_net m;
    nnc_optim opt;
    if (xor_net_init(&m, 4, 42) != 0 || nnc_optim_init(&opt, NNC_ADAM, XOR_NET_NUM_PARAMS, 0.05f) != 0) {
        perror("init");
        return 1;
    }
    float loss = 0, metrics[XOR_NET_NUM_METRICS];
    for (int step = 0; step < 300; step++) {
        xor_net_train_forward(&m, 4, x, y);
        xor_net_backward(&m);
        nnc_optim_step(&opt, (float *)m.params, (const float *)m.grads);
    }
    xor_net_eval(&m, 4, x, y, &loss, metrics);
    printf("loss=%.4f %s=%.2f\n", loss, xor_net_metric_names[0], metrics[0]);
    nnc_optim_free(&opt);
    xor_net_release(&m);
    return metrics[0] == 1.0f ? 0 : 1;
}
