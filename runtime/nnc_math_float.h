/* nnc_math_float.h — the float functions of nnc_math.h whose polynomials
 * are chains of multiply-adds: tanh, exp, Φ and GELU, sigmoid, and the
 * derivatives built on them.  No include guard: nnc_math.h includes this
 * file twice, with NNC_MF(name) the name as it is and NNC_FMA(a, b, c)
 * nnc_fmaf (a multiply and an add, or fmaf where the target has FMA), then
 * with NNC_MF(name) name##_fma and NNC_FMA a fused multiply-add: the
 * functions the AVX2 and AVX-512 passes of generated code call (emit_fn.c
 * isa_variants), which gcc compiles to FMA instructions inside those
 * passes.  Each pass then rounds as its target best can; the plain and
 * the _fma functions differ in the last bits, and both are measured by
 * tests/runtime/test_math.c.
 */

/* tanh for floats: Eigen's rational approximation (max abs error about
 * 4e-7), clamped where it saturates.  Double-precision code calls libm's
 * tanh instead. */
static inline float NNC_MF(nnc_tanh_float)(float x)
{
    x = x < -7.90531110763549805f ? -7.90531110763549805f : x > 7.90531110763549805f ? 7.90531110763549805f : x;
    const float x2 = x * x;
    float p = NNC_FMA(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
    p = NNC_FMA(x2, p, -8.60467152213735e-11f);
    p = NNC_FMA(x2, p, 5.12229709037114e-08f);
    p = NNC_FMA(x2, p, 1.48572235717979e-05f);
    p = NNC_FMA(x2, p, 6.37261928875436e-04f);
    p = NNC_FMA(x2, p, 4.89352455891786e-03f);
    p = x * p;
    float q = NNC_FMA(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
    q = NNC_FMA(x2, q, 2.26843463243900e-03f);
    q = NNC_FMA(x2, q, 4.89352518554385e-03f);
    return p / q;
}

/* exp for the arguments softmax and cross-entropy give it (<= 0): Cephes'
 * expf, 2^n p(r) with r = x - n ln 2, about 1 ulp.  The rounding uses the
 * 1.5 * 2^23 trick and 2^n is built in the exponent bits.  Below -87
 * (where expf nears the subnormals) it gives 0, as for exp(-inf); NaN
 * stays NaN; above 88 it is not meant to be called.  The core takes an
 * argument already in [-87, 88]; the two entries differ only in what
 * they give outside it. */
static inline float NNC_MF(nnc_exp_core_float)(float xc)
{
    const float t = xc * 1.44269504088896341f + 12582912.0f, fn = t - 12582912.0f;
    const float r = xc - fn * 0.693359375f + fn * 2.12194440e-4f, r2 = r * r;
    float p = NNC_FMA(1.9875691500e-4f, r, 1.3981999507e-3f);
    p = NNC_FMA(p, r, 8.3334519073e-3f);
    p = NNC_FMA(p, r, 4.1665795894e-2f);
    p = NNC_FMA(p, r, 1.6666665459e-1f);
    p = NNC_FMA(p, r, 5.0000001201e-1f);
    p = NNC_FMA(p, r2, r) + 1.0f;
    const int32_t e = ((int32_t)fn + 127) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    return p * s;
}

static inline float NNC_MF(nnc_exp_float)(float x)
{
    const float xc = x >= -87.0f ? (x <= 88.0f ? x : 88.0f) : -87.0f; /* NaN: -87, no undefined cast */
    const float y = NNC_MF(nnc_exp_core_float)(xc);
    return x >= -87.0f ? y : x < -87.0f ? 0.0f : x; /* NaN stays NaN */
}

/* The same for an argument known to be <= 0, whose caller carries a NaN
 * by another path (Φ below: its t is NaN too): NaN gives 0 here.  One
 * clamp and one select where nnc_exp_float has two and three: GELU's loop
 * went from 0.38 to 0.32 ns a float (AVX-512, in L1), dy times its
 * derivative from 0.41 to 0.34. */
static inline float NNC_MF(nnc_exp_nonpos_float)(float x)
{
    const float y = NNC_MF(nnc_exp_core_float)(x >= -87.0f ? x : -87.0f);
    return x >= -87.0f ? y : 0.0f;
}

/* The derivative of GELU's tanh form (gelu_tanh), 0.5 x (1 + tanh(k (x +
 * 0.044715 x³))), k = sqrt(2 / pi).  The constants are the ones the
 * forward pass uses, so that forward and backward agree to the digit. */
static inline float NNC_MF(nnc_dgelu_tanh_float)(float x)
{
    const float k = 0.797884561f, u = k * (x + 0.044715f * x * x * x), t = NNC_MF(nnc_tanh_float)(u);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 0.134145f * x * x);
}

/* erfc(z) e^(z²) / t for t = 1 / (1 + z / 2), z >= 0, as a polynomial in
 * t on (0, 1]: degree 10, a least-squares fit weighted by the inverse of
 * the value on Chebyshev nodes (relative error 1.5e-8 in exact
 * arithmetic), evaluated by Estrin's scheme: a chain of 5 multiply-adds
 * where Horner's takes 10, so that the vector loops around it are not
 * latency bound. */
static inline float NNC_MF(nnc_erfcx_poly_float)(float t)
{
    const float t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
    const float p01 = NNC_FMA(t, 2.820936917e-01f, 2.820947960e-01f),
                p23 = NNC_FMA(t, 1.753005152e-01f, 2.468860297e-01f),
                p45 = NNC_FMA(t, -5.952060442e-02f, 9.355194860e-02f),
                p67 = NNC_FMA(t, -4.558734298e-01f, 1.328425082e-01f),
                p89 = NNC_FMA(t, -2.350748573e-01f, 4.944369293e-01f);
    const float q0 = NNC_FMA(p23, t2, p01), q1 = NNC_FMA(p67, t2, p45), q2 = NNC_FMA(4.326247759e-02f, t2, p89);
    return NNC_FMA(q2, t8, NNC_FMA(q1, t4, q0));
}

/* Φ(x), the standard normal CDF, for floats: 0.5 erfc(|x| / sqrt 2) on
 * the left, 1 minus it on the right, with erfc(z) = t e^(-z²) P(t) (P
 * above), and *e = e^(-z²) = e^(-x²/2), which GELU's derivative needs
 * too (so that it costs one exp, not two).  Relative error about 3e-7
 * times 1 + x², so GELU's left tail keeps its relative accuracy, where
 * 0.5 + 0.5 erf(x) would cancel.  No branch on the data, no libm call:
 * the loops around it vectorize.  NaN gives NaN. */
static inline float NNC_MF(nnc_normcdf_e_float)(float x, float *e)
{
    const float z = fabsf(x) * 0.707106781f, t = 1.0f / (1.0f + 0.5f * z);
    *e = NNC_MF(nnc_exp_nonpos_float)(-(z * z));
    const float h = 0.5f * t * NNC_MF(nnc_erfcx_poly_float)(t) * *e; /* 0.5 erfc(z) */
    return x >= 0.0f ? 1.0f - h : h;
}

static inline float NNC_MF(nnc_normcdf_float)(float x)
{
    float e;
    return NNC_MF(nnc_normcdf_e_float)(x, &e);
}

/* GELU, x Φ(x), PyTorch's default (erf) form, and its derivative
 * Φ(x) + x φ(x), φ(x) = e^(-x²/2) / sqrt(2 pi) the normal density. */
static inline float NNC_MF(nnc_gelu_float)(float x) { return x * NNC_MF(nnc_normcdf_float)(x); }

static inline float NNC_MF(nnc_dgelu_float)(float x)
{
    float e;
    const float c = NNC_MF(nnc_normcdf_e_float)(x, &e);
    return NNC_FMA(x * 0.398942280f, e, c);
}

/* sigmoid for floats, 1 / (1 + e^-x), with the exp above: e = e^-|x|
 * (<= 1, its range), then 1 / (1 + e) from 0 up and e / (1 + e) below.
 * libm's expf is a call a value, which no loop around it vectorizes: an
 * LSTM's gates at batch 16 spent 13 us on each [16, 256] sigmoid.  Below
 * -87 it gives 0 (the true value is subnormal); NaN stays NaN. */
static inline float NNC_MF(nnc_sigmoid_float)(float x)
{
    const float e = NNC_MF(nnc_exp_float)(-fabsf(x)), s = 1.0f / (1.0f + e);
    return x >= 0.0f ? s : e * s;
}

/* The derivative of SiLU, x sigmoid(x): s (1 + x (1 - s)). */
static inline float NNC_MF(nnc_dsilu_float)(float x)
{
    const float s = NNC_MF(nnc_sigmoid_float)(x);
    return s * (1.0f + x * (1.0f - s));
}
