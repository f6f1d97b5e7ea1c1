/* optim_step.c — the optimizers' update loops over the flat float view of
 * params and grads (optim.c holds their state), and gradient clipping.
 *
 * The update rules are PyTorch 1.13's torch.optim.SGD, Adam and AdamW
 * (single-tensor, non-fused code paths) operation for operation, including
 * where float32 rounding happens, so that a training run here tracks the
 * PyTorch run to float precision; tests/runtime compares them step by step.
 * The loops are compiled once per instruction set (nnc_isa.h): they
 * vectorize, and without contraction or reassociation every width rounds
 * alike, so each gives the same bits.  Nothing here allocates.
 */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>

#include "nnc_isa.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

/* Whether the CPU has PREFETCHW (cpuid 0x80000001 ECX bit 8: Broadwell,
 * Zen and every AVX-512 CPU), asked once. */
static int has_prefetchw(void)
{
    static _Atomic int known = -1;
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0) {
        unsigned a, b, c, d;
        k = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c >> 8 & 1u);
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k;
}
#define PREFETCHW(a) __asm__ volatile("prefetchw %0" ::"m"(*(const char *)(a)))
#else
static int has_prefetchw(void) { return 0; }
#define PREFETCHW(a) ((void)(a))
#endif

/* The updates run in blocks of 64 params, each first asking for the
 * cache lines of params 256 ahead in the exclusive state (PREFETCHW).
 * With threads, the forward pass left every param's line shared with the
 * other cores, and each store had to invalidate their copies first: Adam
 * over lenet5's 61706 params, read by both threads before each step, took
 * 0.045-0.052 ms at 2 threads, 0.034 with the prefetch (medians of 400
 * steps, two runs).  Elementwise, so the blocks change no bits. */
#define PF_BLOCK 64
#define PF_AHEAD 256
/* the end of the block of n params from i0, after asking for the lines
 * PF_AHEAD on (pw: has_prefetchw()) */
static inline size_t pf_block(const float *p, size_t i0, size_t n, int pw)
{
    if (pw && i0 + PF_BLOCK + PF_AHEAD <= n)
        for (int l = 0; l < PF_BLOCK; l += 16)
            PREFETCHW(p + i0 + PF_AHEAD + l);
    return n - i0 < PF_BLOCK ? n : i0 + PF_BLOCK;
}

__attribute__((noinline)) static void sgd_step(nnc_optim *o, float *p, const float *g)
{
    const float lr = o->lr, wd = o->weight_decay, mu = o->momentum;
    const int first = o->step == 0, pw = has_prefetchw();
    for (size_t i0 = 0; i0 < o->n; i0 += PF_BLOCK) {
        const size_t i1 = pf_block(p, i0, o->n, pw);
        for (size_t i = i0; i < i1; i++) {
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
}

__attribute__((noinline)) static void adam_step(nnc_optim *o, float *p, const float *g, int decoupled)
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
    const int pw = has_prefetchw();
    for (size_t i0 = 0; i0 < o->n; i0 += PF_BLOCK) {
        const size_t i1 = pf_block(p, i0, o->n, pw);
        for (size_t i = i0; i < i1; i++) {
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
}

/* The updates run with subnormal floats taken and given as zero (x86's
 * MXCSR DAZ and FTZ, this thread's, put back after).  Where a param's
 * gradient vanishes, Adam's m decays by beta1 every step into the
 * subnormals, and every operation on one then costs a microcode assist:
 * lenet5's benchmark, whose loss reaches ~1e-5 on its one batch, ran
 * Adam in 0.06 ms a step for ~1200 steps and in 0.28-0.30 ms from ~2200
 * on.  The results differ from the subnormal arithmetic's (PyTorch's)
 * only where m, v or a product falls below FLT_MIN (1.2e-38): such an m
 * moves its param by less than lr * 1e-38 / eps = 1e-33 here. */
#if defined(__x86_64__)
#include <xmmintrin.h>
#define CSR_FLUSH 0x8040u /* FTZ (bit 15) | DAZ (bit 6) */
#endif

void NNC_ISA_FN(nnc_optim_step)(nnc_optim *o, float *params, const float *grads)
{
#if defined(__x86_64__)
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | CSR_FLUSH);
#endif
    switch (o->kind) { /* (noinline: no float operation moves across the MXCSR writes) */
    case NNC_SGD: sgd_step(o, params, grads); break;
    case NNC_ADAM: adam_step(o, params, grads, 0); break;
    case NNC_ADAMW: adam_step(o, params, grads, 1); break;
    }
#if defined(__x86_64__)
    _mm_setcsr(csr);
#endif
    o->step++;
}

float NNC_ISA_FN(nnc_clip_grad_norm)(float *g, size_t n, float max_norm)
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
