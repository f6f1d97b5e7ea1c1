/* optim.c — optimizers over the flat float view of params and grads.
 *
 * Generated models lay all trainable params out as one float array (and
 * their gradients likewise), so one elementwise loop serves every model.
 * The update rules are PyTorch 1.13's torch.optim.SGD, Adam and AdamW
 * (single-tensor, non-fused code paths) operation for operation, including
 * where float32 rounding happens, so that a training run here tracks the
 * PyTorch run to float precision; tests/runtime compares them step by step.
 * Nothing here allocates after nnc_optim_init: the training loop must not.
 */
#include <errno.h>
#include <math.h>
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
    /* calloc(0) may return NULL; one spare float keeps "NULL means out of
     * memory" unambiguous for empty models. */
    size_t alloc = n > 0 ? n : 1;
    /* SGD gets its momentum buffer up front even though momentum defaults
     * to 0: callers set o->momentum after init, and step must not allocate. */
    o->m = calloc(alloc, sizeof(float));
    if (!o->m)
        goto oom;
    if (kind == NNC_ADAM || kind == NNC_ADAMW) {
        o->v = calloc(alloc, sizeof(float));
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

static void sgd_step(nnc_optim *o, float *p, const float *g)
{
    const float lr = o->lr, wd = o->weight_decay, mu = o->momentum;
    const int first = o->step == 0;
    for (size_t i = 0; i < o->n; i++) {
        float d = g[i];
        if (wd != 0.0f)
            d = d + wd * p[i];
        if (mu != 0.0f) {
            /* PyTorch: the buffer starts as a copy of the first d_p, then
             * buf = momentum * buf + (1 - dampening) * d_p, dampening 0. */
            float buf = first ? d : mu * o->m[i] + d;
            o->m[i] = buf;
            d = buf;
        }
        p[i] = p[i] - lr * d;
    }
}

static void adam_step(nnc_optim *o, float *p, const float *g, int decoupled)
{
    const float lr = o->lr, wd = o->weight_decay;
    const float b1 = o->beta1, b2 = o->beta2, eps = o->eps;
    const double t = (double)(o->step + 1);
    /* Bias corrections in double as PyTorch computes them (Python floats),
     * then used as float scalars by the tensor ops. */
    const double bc1 = 1.0 - pow((double)b1, t);
    const double bc2 = 1.0 - pow((double)b2, t);
    const float step_size = (float)((double)lr / bc1);
    const float bc2_sqrt = (float)sqrt(bc2);
    const float one_minus_b1 = (float)(1.0 - (double)b1);
    const float one_minus_b2 = (float)(1.0 - (double)b2);
    const float decay = (float)(1.0 - (double)lr * (double)wd);
    for (size_t i = 0; i < o->n; i++) {
        float gi = g[i];
        float pi = p[i];
        if (decoupled)
            pi = pi * decay; /* AdamW: p.mul_(1 - lr * wd) */
        else if (wd != 0.0f)
            gi = gi + wd * pi; /* Adam: grad.add(p, alpha=wd) */
        float m = o->m[i] * b1 + gi * one_minus_b1;
        float v = o->v[i] * b2 + gi * gi * one_minus_b2;
        o->m[i] = m;
        o->v[i] = v;
        float denom = sqrtf(v) / bc2_sqrt + eps;
        p[i] = pi - step_size * (m / denom);
    }
}

void nnc_optim_step(nnc_optim *o, float *params, const float *grads)
{
    switch (o->kind) {
    case NNC_SGD: sgd_step(o, params, grads); break;
    case NNC_ADAM: adam_step(o, params, grads, 0); break;
    case NNC_ADAMW: adam_step(o, params, grads, 1); break;
    }
    o->step++;
}

void nnc_optim_free(nnc_optim *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}

float nnc_clip_grad_norm(float *g, size_t n, float max_norm)
{
    /* Accumulate in double: a float sum of squares over millions of params
     * loses digits that PyTorch's pairwise reductions keep. */
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (double)g[i] * (double)g[i];
    float norm = (float)sqrt(ss);
    /* torch.nn.utils.clip_grad_norm_: coef = max_norm / (norm + 1e-6),
     * clamped to 1; a non-finite norm is propagated, as PyTorch does by
     * default (error_if_nonfinite=False). */
    float coef = max_norm / (norm + 1e-6f);
    if (coef < 1.0f || isnan(coef))
        for (size_t i = 0; i < n; i++)
            g[i] *= coef;
    return norm;
}
