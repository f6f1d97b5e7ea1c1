/* fuzz_driver_args.c — libFuzzer target: the generated driver's command
 * line (runtime/driver.c), checked by nnc__drv_parse, which stops where
 * the work would start.  The input is the arguments after the program
 * name, separated by NUL bytes ("train\0--epochs\0003\0--lr=0.1").  Each
 * input runs against two models: one with two inputs, two labels and a
 * loss (as tests/runtime/fake_model.c), and one for inference only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_internal.h"
#include "nnc_runtime.h"

enum { MAX_ARGS = 64 };

static const nnc_tensor_info infos[2] = {
    {"w", 2, {2, 3}, 0, 6, 1, 0, NNC_F32},
    {"seen", 1, {1}, 0, 1, 0, 0, NNC_F32},
};

static const nnc_tensor_info *tensors(size_t *count)
{
    *count = 2;
    return infos;
}

static const nnc_io_desc inputs[2] = {
    {"x", NNC_F32, 2, {0, 3}, 1, 0, 0},
    {"k", NNC_I32, 1, {0}, 1, 4, 0},
};
static const nnc_io_desc labels[2] = {
    {"y", NNC_F32, 2, {0, 2}, 1, 0, 0},
    {"c", NNC_I32, 1, {0}, 1, 2, 1},
};
static const char *const metric_names[2] = {"mae", "accuracy"};

static void describe(nnc_model_desc *d, int with_loss)
{
    memset(d, 0, sizeof *d);
    d->name = with_loss ? "fake" : "fake_noloss";
    d->num_inputs = 2;
    d->inputs = inputs;
    d->output = (nnc_io_desc){"p", NNC_F32, 2, {0, 2}, 1, 0, 0};
    d->num_params = 6;
    d->num_state = 1;
    d->tensors = tensors;
    if (with_loss) {
        d->num_labels = 2;
        d->labels = labels;
        d->num_metrics = 2;
        d->metric_names = metric_names;
        d->has_loss = 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy with a final NUL, cut into strings at the NULs */
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "model";
    for (size_t i = 0; i < size + 1 && argc <= MAX_ARGS;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
        if (i >= size)
            break;
    }
    if (size == 0)
        argc = 1;
    argv[argc] = NULL;
    for (int with_loss = 0; with_loss < 2; with_loss++) {
        nnc_model_desc d;
        describe(&d, with_loss);
        int rc = nnc__drv_parse(argc, argv, &d);
        if (rc != 0 && rc != 1)
            __builtin_trap(); /* the parse alone can only accept or refuse */
    }
    free(buf);
    return 0;
}
