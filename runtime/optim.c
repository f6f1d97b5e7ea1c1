/* optim.c — optimizers over the flat float view of params and grads: their
 * state, with PyTorch's defaults.
 *
 * Generated models lay all trainable params out as one float array (and
 * their gradients likewise), so one elementwise loop serves every model
 * (optim_step.c, compiled once per instruction set).  Nothing allocates
 * after nnc_optim_init: the training loop must not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_runtime.h"

int nnc_optim_init(nnc_optim *o, nnc_optim_kind kind, size_t n, float lr)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->lr = lr;
    o->momentum = 0.0f;
    o->beta1 = 0.9f;
    o->beta2 = 0.999f;
    o->eps = 1e-8f;
    o->weight_decay = kind == NNC_ADAMW ? 0.01f : 0.0f;
    o->step = 0;
    o->n = n;
    /* nnc_alloc_zeroed gives a block for n = 0 too, so NULL means out of
     * memory.  SGD gets its momentum buffer up front even though momentum
     * defaults to 0: callers set o->momentum after init, and step must not
     * allocate. */
    o->m = nnc_alloc_zeroed(n, sizeof(float));
    if (!o->m)
        goto oom;
    if (kind == NNC_ADAM || kind == NNC_ADAMW) {
        o->v = nnc_alloc_zeroed(n, sizeof(float));
        if (!o->v)
            goto oom;
    }
    return 0;
oom:
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
    errno = ENOMEM;
    return nnc_fail("optimizer: out of memory for %zu moment floats", n);
}

void nnc_optim_free(nnc_optim *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}
