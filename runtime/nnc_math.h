/* nnc_math.h — the scalar math that generated loops inline.
 *
 * Generated C calls these in its elementwise loops and row passes (every
 * generated .c file includes this header).  They are static inline so
 * that the loops around them vectorize: no libm call and no branch on the
 * data in the float versions of tanh and exp.  tests/runtime/test_math.c
 * measures each against libm over its range.
 *
 * nnc_fmaf is a * b + c in one rounding where the target has a fast fused
 * multiply-add (C99's FP_FAST_FMAF, e.g. -march=haswell and later), and a
 * multiply and an add elsewhere (where fmaf would be a library call):
 * -std=c11 turns off GCC's own contraction of a * b + c, and these
 * polynomials are most of the work of GELU and softmax (gpt_mini's
 * 1024x512 tanh GELU: 0.85 -> 0.68 ms with FMA, its gradient 1.16 -> 0.80 ms).
 * The header is compiled in the user's translation unit, so the choice
 * follows the flags the generated code is built with.
 */
#ifndef NNC_MATH_H
#define NNC_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef FP_FAST_FMAF
static inline float nnc_fmaf(float a, float b, float c) { return fmaf(a, b, c); }
#else
static inline float nnc_fmaf(float a, float b, float c) { return a * b + c; }
#endif

/* The float functions built on multiply-adds (nnc_math_float.h): as they
 * are, and as name_fma with fused multiply-adds for the AVX2 and AVX-512
 * passes.  __builtin_fmaf is an FMA instruction in a function compiled
 * for a target that has one (gcc and clang), and a call of fmaf
 * elsewhere: the _fma functions round alike wherever they run. */
#define NNC_MF(name) name
#define NNC_FMA(a, b, c) nnc_fmaf(a, b, c)
#include "nnc_math_float.h"
#undef NNC_MF
#undef NNC_FMA
#define NNC_MF(name) name##_fma
#if defined(__GNUC__)
#define NNC_FMA(a, b, c) __builtin_fmaf(a, b, c)
#else
#define NNC_FMA(a, b, c) fmaf(a, b, c)
#endif
#include "nnc_math_float.h"
#undef NNC_MF
#undef NNC_FMA

static inline double nnc_dgelu_tanh_double(double x)
{
    const double k = 0.797884561, u = k * (x + 0.044715 * x * x * x), t = tanh(u);
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 0.134145 * x * x);
}

static inline double nnc_gelu_double(double x) { return x * 0.5 * erfc(-x * 0.70710678118654752440); }

static inline double nnc_dgelu_double(double x)
{
    return 0.5 * erfc(-x * 0.70710678118654752440) + x * 0.39894228040143267794 * exp(-0.5 * x * x);
}

static inline double nnc_sigmoid_double(double x) { return 1.0 / (1.0 + exp(-x)); }

static inline double nnc_dsilu_double(double x)
{
    const double s = 1.0 / (1.0 + exp(-x));
    return s * (1.0 + x * (1.0 - s));
}

/* hard_sigmoid, max(0, min(1, alpha x + beta)), and its derivative:
 * alpha strictly inside (0 < alpha x + beta < 1), as PyTorch's
 * hardsigmoid_backward (whose defaults are alpha 1/6, beta 1/2; ONNX's
 * HardSigmoid is the same formula).  NaN gives NaN. */
static inline float nnc_hard_sigmoid_float(float x, float alpha, float beta)
{
    const float t = alpha * x + beta;
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

static inline double nnc_hard_sigmoid_double(double x, double alpha, double beta)
{
    const double t = alpha * x + beta;
    return t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
}

static inline float nnc_dhard_sigmoid_float(float x, float alpha, float beta)
{
    const float t = alpha * x + beta;
    return t > 0.0f && t < 1.0f ? alpha : 0.0f;
}

static inline double nnc_dhard_sigmoid_double(double x, double alpha, double beta)
{
    const double t = alpha * x + beta;
    return t > 0.0 && t < 1.0 ? alpha : 0.0;
}

/* hard_swish, x min(max(x + 3, 0), 6) / 6 in PyTorch's order of
 * operations, and its derivative as PyTorch's vectorized
 * hardswish_backward: 0 below -3, x / 3 + 1/2 on [-3, 3), 1 from 3 on
 * (PyTorch 1.13's scalar path, which only takes the tail of a tensor,
 * gives 3/2 at exactly 3).  NaN gives NaN. */
static inline float nnc_hard_swish_float(float x)
{
    const float t = x + 3.0f, c = t < 0.0f ? 0.0f : t > 6.0f ? 6.0f : t;
    return x * c / 6.0f;
}

static inline double nnc_hard_swish_double(double x)
{
    const double t = x + 3.0, c = t < 0.0 ? 0.0 : t > 6.0 ? 6.0 : t;
    return x * c / 6.0;
}

static inline float nnc_dhard_swish_float(float x) { return x < -3.0f ? 0.0f : x >= 3.0f ? 1.0f : x / 3.0f + 0.5f; }

static inline double nnc_dhard_swish_double(double x) { return x < -3.0 ? 0.0 : x >= 3.0 ? 1.0 : x / 3.0 + 0.5; }

/* softplus as PyTorch's: x where beta x > threshold (the linear regime,
 * where log1p(exp(beta x)) / beta equals x to the float), else
 * log1p(exp(beta x)) / beta; its derivative as softplus_backward, from
 * the input: 1 above the threshold, else z / (z + 1), z = exp(beta x).
 * NaN gives NaN. */
static inline float nnc_softplus_float(float x, float beta, float threshold)
{
    const float t = x * beta;
    return t > threshold ? x : log1pf(expf(t)) / beta;
}

static inline double nnc_softplus_double(double x, double beta, double threshold)
{
    const double t = x * beta;
    return t > threshold ? x : log1p(exp(t)) / beta;
}

static inline float nnc_dsoftplus_float(float x, float beta, float threshold)
{
    const float t = x * beta, z = expf(t);
    return t > threshold ? 1.0f : z / (z + 1.0f);
}

static inline double nnc_dsoftplus_double(double x, double beta, double threshold)
{
    const double t = x * beta, z = exp(t);
    return t > threshold ? 1.0 : z / (z + 1.0);
}

/* mish, x tanh(softplus(x)) with PyTorch's softplus without a threshold,
 * and its derivative as mish_backward: tanh(sp) + x sigmoid(x) (1 -
 * tanh(sp)²).  libm's tanh: these are not on a hot path. */
static inline float nnc_mish_float(float x) { return x * tanhf(log1pf(expf(x))); }

static inline double nnc_mish_double(double x) { return x * tanh(log1p(exp(x))); }

static inline float nnc_dmish_float(float x)
{
    const float s = 1.0f / (1.0f + expf(-x)), t = tanhf(log1pf(expf(x)));
    return t + x * s * (1.0f - t * t);
}

static inline double nnc_dmish_double(double x)
{
    const double s = 1.0 / (1.0 + exp(-x)), t = tanh(log1p(exp(x)));
    return t + x * s * (1.0 - t * t);
}

/* g where keep is 1, +0 where it is 0, without a branch (max-pool
 * backward: compilers turn `keep ? g : 0` into jumps, which random data
 * mispredicts). */
static inline float nnc_keep_float(float g, int keep)
{
    uint32_t u;
    memcpy(&u, &g, sizeof u);
    u &= (uint32_t)0 - (uint32_t)keep;
    memcpy(&g, &u, sizeof g);
    return g;
}

static inline double nnc_keep_double(double g, int keep)
{
    uint64_t u;
    memcpy(&u, &g, sizeof u);
    u &= (uint64_t)0 - (uint64_t)keep;
    memcpy(&g, &u, sizeof g);
    return g;
}

/* int(x): truncated toward zero, as a C cast where that is defined; a NaN
 * or a value outside [-2^31, 2^31) gives -2^31, x86's "integer
 * indefinite" and so PyTorch's x.int() there, where C leaves the cast
 * undefined.  2147483648.0f is exact in float (2^31). */
static inline int32_t nnc_to_i32_float(float x)
{
    return x >= -2147483648.0f && x < 2147483648.0f ? (int32_t)x : INT32_MIN;
}

static inline int32_t nnc_to_i32_double(double x)
{
    return x > -2147483649.0 && x < 2147483648.0 ? (int32_t)x : INT32_MIN;
}

#endif
