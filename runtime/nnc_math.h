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

/* tanh for floats: Eigen's rational approximation (max abs error about
 * 4e-7), clamped where it saturates.  Double-precision code calls libm's
 * tanh instead. */
static inline float nnc_tanh_float(float x)
{
    x = x < -7.90531110763549805f ? -7.90531110763549805f : x > 7.90531110763549805f ? 7.90531110763549805f : x;
    const float x2 = x * x;
    float p = nnc_fmaf(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
    p = nnc_fmaf(x2, p, -8.60467152213735e-11f);
    p = nnc_fmaf(x2, p, 5.12229709037114e-08f);
    p = nnc_fmaf(x2, p, 1.48572235717979e-05f);
    p = nnc_fmaf(x2, p, 6.37261928875436e-04f);
    p = nnc_fmaf(x2, p, 4.89352455891786e-03f);
    p = x * p;
    float q = nnc_fmaf(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
    q = nnc_fmaf(x2, q, 2.26843463243900e-03f);
    q = nnc_fmaf(x2, q, 4.89352518554385e-03f);
    return p / q;
}

/* exp for the arguments softmax and cross-entropy give it (<= 0): Cephes'
 * expf, 2^n p(r) with r = x - n ln 2, about 1 ulp.  The rounding uses the
 * 1.5 * 2^23 trick and 2^n is built in the exponent bits.  Below -87
 * (where expf nears the subnormals) it gives 0, as for exp(-inf); NaN
 * stays NaN; above 88 it is not meant to be called. */
static inline float nnc_exp_float(float x)
{
    const float xc = x >= -87.0f ? (x <= 88.0f ? x : 88.0f) : -87.0f; /* NaN: -87, no undefined cast */
    const float t = xc * 1.44269504088896341f + 12582912.0f, fn = t - 12582912.0f;
    const float r = xc - fn * 0.693359375f + fn * 2.12194440e-4f, r2 = r * r;
    float p = nnc_fmaf(1.9875691500e-4f, r, 1.3981999507e-3f);
    p = nnc_fmaf(p, r, 8.3334519073e-3f);
    p = nnc_fmaf(p, r, 4.1665795894e-2f);
    p = nnc_fmaf(p, r, 1.6666665459e-1f);
    p = nnc_fmaf(p, r, 5.0000001201e-1f);
    p = nnc_fmaf(p, r2, r) + 1.0f;
    const int32_t e = ((int32_t)fn + 127) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    return x >= -87.0f ? p * s : x < -87.0f ? 0.0f : x; /* NaN stays NaN */
}

/* The derivative of GELU's tanh form (gelu_tanh), 0.5 x (1 + tanh(k (x +
 * 0.044715 x³))), k = sqrt(2 / pi).  The constants are the ones the
 * forward pass uses, so that forward and backward agree to the digit. */
static inline float nnc_dgelu_tanh_float(float x)
{
    const float k = 0.797884561f, u = k * (x + 0.044715f * x * x * x), t = nnc_tanh_float(u);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 0.134145f * x * x);
}

static inline double nnc_dgelu_tanh_double(double x)
{
    const double k = 0.797884561, u = k * (x + 0.044715 * x * x * x), t = tanh(u);
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 0.134145 * x * x);
}

/* Φ(x), the standard normal CDF, for floats: 0.5 erfc(|x| / sqrt 2) on
 * the left, 1 minus it on the right.  erfc(z) = t exp(g(t) - z²) with t =
 * 1 / (1 + z / 2) and g a degree-9 polynomial in t, a least-squares fit on
 * Chebyshev nodes of (0, 1] (relative error of erfc about 1.3e-7 for every
 * z >= 0, so GELU's left tail keeps its relative accuracy, where 0.5 +
 * 0.5 erf(x) would cancel).  No branch on the data, no libm call: the
 * loops around it vectorize.  NaN gives NaN. */
static inline float nnc_normcdf_float(float x)
{
    const float z = fabsf(x) * 0.707106781f, t = 1.0f / (1.0f + 0.5f * z);
    float g = nnc_fmaf(t, 0.17162308f, -0.82571827f);
    g = nnc_fmaf(t, g, 1.49565314f);
    g = nnc_fmaf(t, g, -1.14301756f);
    g = nnc_fmaf(t, g, 0.28395302f);
    g = nnc_fmaf(t, g, -0.18828899f);
    g = nnc_fmaf(t, g, 0.09724704f);
    g = nnc_fmaf(t, g, 0.37403389f);
    g = nnc_fmaf(t, g, 1.00002700f);
    g = nnc_fmaf(t, g, -1.26551228f);
    const float h = 0.5f * t * nnc_exp_float(g - z * z); /* 0.5 erfc(z) */
    return x >= 0.0f ? 1.0f - h : h;
}

/* GELU, x Φ(x), PyTorch's default (erf) form, and its derivative
 * Φ(x) + x φ(x), φ the normal density. */
static inline float nnc_gelu_float(float x) { return x * nnc_normcdf_float(x); }

static inline float nnc_dgelu_float(float x)
{
    return nnc_normcdf_float(x) + x * 0.398942280f * nnc_exp_float(-0.5f * x * x);
}

static inline double nnc_gelu_double(double x) { return x * 0.5 * erfc(-x * 0.70710678118654752440); }

static inline double nnc_dgelu_double(double x)
{
    return 0.5 * erfc(-x * 0.70710678118654752440) + x * 0.39894228040143267794 * exp(-0.5 * x * x);
}

/* sigmoid for floats, 1 / (1 + e^-x), with the exp above: e = e^-|x|
 * (<= 1, its range), then 1 / (1 + e) from 0 up and e / (1 + e) below.
 * libm's expf is a call a value, which no loop around it vectorizes: an
 * LSTM's gates at batch 16 spent 13 us on each [16, 256] sigmoid.  Below
 * -87 it gives 0 (the true value is subnormal); NaN stays NaN. */
static inline float nnc_sigmoid_float(float x)
{
    const float e = nnc_exp_float(-fabsf(x)), s = 1.0f / (1.0f + e);
    return x >= 0.0f ? s : e * s;
}

static inline double nnc_sigmoid_double(double x) { return 1.0 / (1.0 + exp(-x)); }

/* The derivative of SiLU, x sigmoid(x): s (1 + x (1 - s)). */
static inline float nnc_dsilu_float(float x)
{
    const float s = nnc_sigmoid_float(x);
    return s * (1.0f + x * (1.0f - s));
}

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
