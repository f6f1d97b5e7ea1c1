/* test_math.c — the inline math of generated loops (runtime/nnc_math.h)
 * against libm in double precision, over the range each is used on.
 *
 *   nnc_tanh_float   absolute error <= 1e-6 (Eigen's bound is about 4e-7),
 *                    relative <= 4e-6 near 0 where tanh(x) ~ x; |tanh| <= 1,
 *                    odd, within 3e-7 of +-1 when saturated (1 exactly
 *                    without FMA; with it, 1 - 2^-22); NaN stays NaN.  (Not monotonic:
 *                    the rational function wiggles by an ulp.)
 *   nnc_exp_float    [-87, 88], relative error <= 3 ulp (2^-23 each);
 *                    0 below -87 and at -inf; NaN stays NaN;
 *   nnc_exp_nonpos_float  exp's bits on [-87, 0], 0 below and for NaN;
 *   nnc_dgelu_tanh_* the double one against a central difference of GELU's
 *                    tanh form; the float one against the double one on
 *                    [-8, 8] within 3.2e-5: tanh's error (<= 1e-6) times the
 *                    derivative's sensitivity to it, 0.5 |x| k (1 + 0.134 x²)
 *                    <= 31 at |x| = 8;
 *   nnc_normcdf_float, nnc_gelu_*, nnc_dgelu_*  (GELU's erf form)
 *                    Φ against 0.5 erfc(-x / sqrt 2) from libm on [-12, 12],
 *                    relative error <= 5e-7 (1 + x²): the fit's 1.3e-7
 *                    and float rounding (a few ulp), then exp's argument
 *                    -x²/2 rounded (its ulp grows with x²); so the left
 *                    tail keeps its digits (Φ ~ 1e-33 at -12), where
 *                    0.5 (1 + erf) would give 0; 1 beyond 7 and 0 below
 *                    -14; gelu_float relative to gelu_double the same;
 *                    dgelu_double against a central difference of
 *                    gelu_double, dgelu_float against dgelu_double within
 *                    2e-6 absolute; NaN stays NaN;
 *   nnc_sigmoid_float [-87, 87] against 1 / (1 + exp(-x)) in double,
 *                    relative error <= 4 ulp (exp's 3 and the division);
 *                    1 at +inf and from 17 up (within an ulp: it rounds),
 *                    0 at -inf and below -87, 1/2 at 0, NaN stays NaN;
 *   nnc_dsilu_*      against s (1 + x (1 - s)) in double;
 *   nnc_to_i32_*     truncation, -2^31 for NaN and out of range;
 *   nnc_keep_*       g bit for bit (NaN, -0, inf) when kept, +0 when not;
 *   nnc_hard_sigmoid_*, nnc_hard_swish_* and their derivatives: against
 *                    their formulas in double (the float ones within an
 *                    ulp or two), the derivatives against a central
 *                    difference off the kinks and exactly on them
 *                    (PyTorch's rules: hard_sigmoid's open interval,
 *                    hard_swish -0.5 at -3 and 1 at 3); NaN stays NaN;
 *   nnc_softplus_*, nnc_mish_* and their derivatives: the double
 *                    derivatives against central differences (softplus
 *                    with beta 2 and threshold 3, off the threshold), the
 *                    float functions against the double ones within a few
 *                    ulp; softplus at the threshold exactly on the log1p
 *                    side, past it x and 1 (PyTorch's rule); NaN stays NaN.
 *
 * CMake builds it three times: plainly; at -O3 -march=native, where
 * FP_FAST_FMAF makes nnc_fmaf a fused multiply-add (a different rounding
 * of the same polynomials), and where each function must give the same
 * bits as its `_fma` twin (nnc_math_float.h) over [-100, 100] and at
 * the edges (check_twins); and plainly with NNC_TEST_FMA_TWINS, which
 * runs every check above on the twins that the AVX2 and AVX-512 passes
 * call (there __builtin_fmaf is a call of fmaf, which rounds as the
 * instruction does).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "nnc_math.h"

#ifdef NNC_TEST_FMA_TWINS
#define nnc_tanh_float nnc_tanh_float_fma
#define nnc_exp_float nnc_exp_float_fma
#define nnc_exp_nonpos_float nnc_exp_nonpos_float_fma
#define nnc_dgelu_tanh_float nnc_dgelu_tanh_float_fma
#define nnc_normcdf_float nnc_normcdf_float_fma
#define nnc_gelu_float nnc_gelu_float_fma
#define nnc_dgelu_float nnc_dgelu_float_fma
#define nnc_sigmoid_float nnc_sigmoid_float_fma
#define nnc_dsilu_float nnc_dsilu_float_fma
#endif

/* the float after x */
static float up(float x) { return nextafterf(x, INFINITY); }

static void check_tanh(void)
{
    double worst_abs = 0, worst_rel = 0;
    int odd = 1, bounded = 1;
    /* a dense grid over [-12, 12], then every float near 0 on a log grid */
    for (int i = 0; i <= 2400000; i++) {
        const float x = -12.0f + (float)i * 1e-5f;
        const float v = nnc_tanh_float(x);
        const double e = fabs((double)v - tanh((double)x));
        if (e > worst_abs)
            worst_abs = e;
        odd &= nnc_tanh_float(-x) == -v;
        bounded &= fabsf(v) <= 1.0f;
    }
    for (float x = 1e-30f; x < 0.5f; x = up(x * 1.001f)) {
        const double r = fabs((double)nnc_tanh_float(x) - tanh((double)x)) / tanh((double)x);
        if (r > worst_rel)
            worst_rel = r;
    }
    CHECKF(worst_abs <= 1e-6, "tanh: max abs error %.3g", worst_abs);
    CHECKF(worst_rel <= 4e-6, "tanh: max rel error near 0 %.3g", worst_rel);
    CHECK(odd);
    CHECK(bounded);
    CHECK(fabsf(nnc_tanh_float(INFINITY) - 1.0f) <= 3e-7f && fabsf(nnc_tanh_float(-INFINITY) + 1.0f) <= 3e-7f);
    CHECK(fabsf(nnc_tanh_float(1e30f) - 1.0f) <= 3e-7f);
    CHECK(isnan(nnc_tanh_float(NAN)));
    CHECK(nnc_tanh_float(0.0f) == 0.0f);
    printf("tanh: max abs error %.3g, max rel error near 0 %.3g\n", worst_abs, worst_rel);
}

static void check_exp(void)
{
    double worst = 0;
    float at = 0;
    for (int i = 0; i <= 1750000; i++) {
        const float x = -87.0f + (float)i * 1e-4f;
        const double want = exp((double)x), got = nnc_exp_float(x);
        const double ulps = fabs(got - want) / (want * 0x1p-23);
        if (ulps > worst)
            worst = ulps, at = x;
    }
    CHECKF(worst <= 3.0, "exp: max error %.3g ulp at %.9g", worst, (double)at);
    CHECK(nnc_exp_float(0.0f) == 1.0f);
    CHECK(nnc_exp_float(-INFINITY) == 0.0f);
    CHECK(nnc_exp_float(-87.5f) == 0.0f);
    CHECK(nnc_exp_float(-1e30f) == 0.0f);
    CHECK(isnan(nnc_exp_float(NAN)));
    /* the entry for arguments <= 0 (GELU's Φ): nnc_exp_float's bits on
     * [-87, 0], 0 below, and 0 for NaN, which its caller carries by
     * another path */
    long differ = 0;
    for (float x = -87.0f; x <= 0.0f; x += 0.0009765625f) {
        const float a = nnc_exp_float(x), b = nnc_exp_nonpos_float(x);
        differ += memcmp(&a, &b, sizeof a) != 0;
    }
    CHECKF(differ == 0, "exp_nonpos: differs from exp at %ld points of [-87, 0]", differ);
    CHECK(nnc_exp_nonpos_float(-0.0f) == 1.0f && nnc_exp_nonpos_float(-87.0f) == nnc_exp_float(-87.0f));
    CHECK(nnc_exp_nonpos_float(-87.5f) == 0.0f && nnc_exp_nonpos_float(-INFINITY) == 0.0f);
    CHECK(nnc_exp_nonpos_float(NAN) == 0.0f);
    printf("exp: max error %.3g ulp over [-87, 88]\n", worst);
}

static void check_sigmoid(void)
{
    double worst = 0;
    float at = 0;
    for (int i = 0; i <= 1740000; i++) {
        const float x = -87.0f + (float)i * 1e-4f;
        const double want = 1.0 / (1.0 + exp(-(double)x)), got = nnc_sigmoid_float(x);
        const double ulps = fabs(got - want) / (want * 0x1p-23);
        if (ulps > worst)
            worst = ulps, at = x;
    }
    CHECKF(worst <= 4.0, "sigmoid: max error %.3g ulp at %.9g", worst, (double)at);
    CHECK(nnc_sigmoid_float(0.0f) == 0.5f);
    CHECK(nnc_sigmoid_float(INFINITY) == 1.0f && nnc_sigmoid_float(30.0f) == 1.0f);
    CHECK(nnc_sigmoid_float(-INFINITY) == 0.0f && nnc_sigmoid_float(-100.0f) == 0.0f);
    CHECK(isnan(nnc_sigmoid_float(NAN)));
    printf("sigmoid: max error %.3g ulp over [-87, 87]\n", worst);
}

/* GELU's tanh form with the constants the generated forward pass prints */
static double gelu_tanh(double x) { return 0.5 * x * (1.0 + tanh(0.797884561 * (x + 0.044715 * x * x * x))); }

static void check_derivatives(void)
{
    double worst_fd = 0, worst_f = 0, worst_silu = 0, worst_silu_f = 0;
    for (int i = 0; i <= 16000; i++) {
        const double x = -8.0 + (double)i * 1e-3;
        const double h = 1e-5, fd = (gelu_tanh(x + h) - gelu_tanh(x - h)) / (2 * h);
        const double d = nnc_dgelu_tanh_double(x);
        const double e = fabs(d - fd) / (1.0 + fabs(fd));
        if (e > worst_fd)
            worst_fd = e;
        const double ef = fabs((double)nnc_dgelu_tanh_float((float)x) - nnc_dgelu_tanh_double((double)(float)x));
        if (ef > worst_f)
            worst_f = ef;
        const double s = 1.0 / (1.0 + exp(-x)), ds = s * (1.0 + x * (1.0 - s));
        const double es = fabs(nnc_dsilu_double(x) - ds);
        if (es > worst_silu)
            worst_silu = es;
        const double xf = (double)(float)x, sf = 1.0 / (1.0 + exp(-xf));
        const double esf = fabs((double)nnc_dsilu_float((float)x) - sf * (1.0 + xf * (1.0 - sf)));
        if (esf > worst_silu_f)
            worst_silu_f = esf;
    }
    CHECKF(worst_fd <= 1e-8, "dgelu_tanh_double vs central difference: %.3g", worst_fd);
    CHECKF(worst_f <= 3.2e-5, "dgelu_tanh_float vs dgelu_tanh_double: %.3g", worst_f);
    CHECKF(worst_silu <= 1e-15, "dsilu_double: %.3g", worst_silu);
    CHECKF(worst_silu_f <= 1e-6, "dsilu_float: %.3g", worst_silu_f);
    printf("dgelu_tanh: %.3g (double vs difference), %.3g (float); dsilu: %.3g, %.3g\n", worst_fd, worst_f, worst_silu,
           worst_silu_f);
}

/* GELU's erf form: Φ and gelu relative to libm's erfc, both tails */
static void check_gelu_erf(void)
{
    double worst_cdf = 0, worst_gelu = 0, worst_fd = 0, worst_d = 0;
    for (int i = 0; i <= 24000; i++) {
        const float xf = (float)(-12.0 + (double)i * 1e-3);
        const double x = xf, cdf = 0.5 * erfc(-x * 0.70710678118654752440);
        const double ec = fabs((double)nnc_normcdf_float(xf) - cdf) / cdf / (1 + x * x);
        if (ec > worst_cdf)
            worst_cdf = ec;
        const double g = nnc_gelu_double(x);
        CHECKF(fabs(g - x * cdf) <= 1e-15 * fabs(g) + 1e-300, "gelu_double(%g)", x);
        const double eg =
            (g == 0 ? fabs((double)nnc_gelu_float(xf)) : fabs((double)nnc_gelu_float(xf) - g) / fabs(g)) / (1 + x * x);
        if (eg > worst_gelu)
            worst_gelu = eg;
        const double h = 1e-5, fd = (nnc_gelu_double(x + h) - nnc_gelu_double(x - h)) / (2 * h);
        const double ed = fabs(nnc_dgelu_double(x) - fd) / (1.0 + fabs(fd));
        if (ed > worst_fd)
            worst_fd = ed;
        const double ef = fabs((double)nnc_dgelu_float(xf) - nnc_dgelu_double(x));
        if (ef > worst_d)
            worst_d = ef;
    }
    CHECKF(worst_cdf <= 5e-7, "normcdf_float relative error / (1 + x^2) %.3g", worst_cdf);
    CHECKF(worst_gelu <= 5e-7, "gelu_float relative error / (1 + x^2) %.3g", worst_gelu);
    CHECKF(worst_fd <= 1e-8, "dgelu_double vs central difference: %.3g", worst_fd);
    CHECKF(worst_d <= 2e-6, "dgelu_float vs dgelu_double: %.3g", worst_d);
    CHECKF(nnc_normcdf_float(7.0f) == 1.0f && nnc_normcdf_float(40.0f) == 1.0f, "normcdf saturates at 1");
    CHECKF(nnc_normcdf_float(-14.0f) < 1e-43f && nnc_normcdf_float(-40.0f) == 0.0f, "normcdf goes to 0");
    CHECKF(isnan(nnc_normcdf_float(NAN)) && isnan(nnc_gelu_float(NAN)) && isnan(nnc_dgelu_float(NAN)), "NaN stays");
    printf(
        "gelu (erf): normcdf %.3g, gelu %.3g relative / (1 + x^2); dgelu %.3g (double vs difference), %.3g (float)\n",
        worst_cdf, worst_gelu, worst_fd, worst_d);
}

static int same_bits_f(float a, float b) { return !memcmp(&a, &b, sizeof a); }
static int same_bits_d(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static void check_keep(void)
{
    const float fs[6] = {1.5f, -0.0f, 0.0f, INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 6; i++) {
        CHECKF(same_bits_f(nnc_keep_float(fs[i], 1), fs[i]), "keep_float(%g, 1)", (double)fs[i]);
        CHECKF(same_bits_f(nnc_keep_float(fs[i], 0), 0.0f), "keep_float(%g, 0)", (double)fs[i]);
        const double d = fs[i];
        CHECKF(same_bits_d(nnc_keep_double(d, 1), d), "keep_double(%g, 1)", d);
        CHECKF(same_bits_d(nnc_keep_double(d, 0), 0.0), "keep_double(%g, 0)", d);
    }
}

static void check_hard(void)
{
    double worst = 0, worst_fd = 0;
    for (int i = -4000; i <= 4000; i++) {
        const double x = i * 0.00125 + 0.0003; /* [-5, 5], off the kinks */
        const double hs = fmin(fmax(0.2 * x + 0.5, 0), 1), hw = x * fmin(fmax(x + 3, 0), 6) / 6;
        const double e1 = fabs(nnc_hard_sigmoid_double(x, 0.2, 0.5) - hs), e2 = fabs(nnc_hard_swish_double(x) - hw);
        const double e3 = fabs((double)nnc_hard_sigmoid_float((float)x, 0.2f, 0.5f) - hs);
        const double e4 = fabs((double)nnc_hard_swish_float((float)x) - hw) / fmax(1, fabs(hw));
        worst = fmax(worst, fmax(fmax(e1, e2), fmax(e3 / 4, e4 / 4)));
        const double h = 1e-6;
        const double f1 =
            (nnc_hard_sigmoid_double(x + h, 0.2, 0.5) - nnc_hard_sigmoid_double(x - h, 0.2, 0.5)) / (2 * h);
        const double f2 = (nnc_hard_swish_double(x + h) - nnc_hard_swish_double(x - h)) / (2 * h);
        worst_fd = fmax(worst_fd,
                        fmax(fabs(nnc_dhard_sigmoid_double(x, 0.2, 0.5) - f1), fabs(nnc_dhard_swish_double(x) - f2)));
        worst_fd = fmax(worst_fd, fabs((double)nnc_dhard_swish_float((float)x) - nnc_dhard_swish_double((float)x)));
    }
    CHECKF(worst <= 1.2e-7, "hard_sigmoid/hard_swish against their formulas: %g", worst);
    CHECKF(worst_fd <= 1e-6, "their derivatives against central differences: %g", worst_fd);
    /* on the kinks, as PyTorch */
    const double a = 1.0 / 6;
    CHECK(nnc_dhard_sigmoid_double(-3, a, 0.5) == 0 && nnc_dhard_sigmoid_double(3, a, 0.5) == 0);
    CHECK(nnc_dhard_sigmoid_float(-3, 1.0f / 6, 0.5f) == 0 && nnc_dhard_sigmoid_float(3, 1.0f / 6, 0.5f) == 0);
    CHECK(nnc_dhard_sigmoid_double(2.999, a, 0.5) == a);
    CHECK(nnc_dhard_swish_double(-3) == -0.5 && nnc_dhard_swish_double(3) == 1 && nnc_dhard_swish_double(-3.001) == 0);
    CHECK(nnc_dhard_swish_float(-3) == -0.5f && nnc_dhard_swish_float(3) == 1 && nnc_dhard_swish_float(-3.001f) == 0);
    CHECK(isnan(nnc_hard_sigmoid_float(NAN, 0.2f, 0.5f)) && isnan(nnc_hard_swish_float(NAN)) &&
          isnan(nnc_dhard_swish_float(NAN)) && isnan(nnc_hard_sigmoid_double(NAN, 0.2, 0.5)) &&
          isnan(nnc_hard_swish_double(NAN)));
    printf("hard_sigmoid/hard_swish: worst error %.3g, derivatives %.3g\n", worst, worst_fd);
}

static void check_softplus_mish(void)
{
    double worst = 0, worst_fd = 0;
    for (int i = -4000; i <= 4000; i++) {
        const double x = i * 0.005 + 0.0003, h = 1e-6; /* [-20, 20], off 1.5 */
        const double f1 = (nnc_softplus_double(x + h, 2, 3) - nnc_softplus_double(x - h, 2, 3)) / (2 * h);
        const double f2 = (nnc_mish_double(x + h) - nnc_mish_double(x - h)) / (2 * h);
        worst_fd = fmax(worst_fd, fmax(fabs(nnc_dsoftplus_double(x, 2, 3) - f1), fabs(nnc_dmish_double(x) - f2)));
        const float xf = (float)x;
        const double sd = nnc_softplus_double(xf, 2, 3), md = nnc_mish_double(xf);
        const double e1 = fabs(nnc_softplus_float(xf, 2, 3) - sd) / fmax(fabs(sd), 1e-30);
        const double e2 = fabs(nnc_mish_float(xf) - md) / fmax(fabs(md), 1e-30);
        const double e3 = fabs(nnc_dsoftplus_float(xf, 2, 3) - nnc_dsoftplus_double(xf, 2, 3));
        const double e4 = fabs(nnc_dmish_float(xf) - nnc_dmish_double(xf));
        worst = fmax(worst, fmax(fmax(e1, e2), fmax(e3, e4)));
    }
    CHECKF(worst_fd <= 1e-6, "softplus'/mish' against central differences: %g", worst_fd);
    CHECKF(worst <= 1e-6, "the float softplus/mish and derivatives against the double ones: %g", worst);
    /* beta x = threshold takes the log1p side, past it x and 1 */
    const double e3 = exp(3.0);
    CHECK(nnc_softplus_double(1.5, 2, 3) == log1p(e3) / 2 && nnc_dsoftplus_double(1.5, 2, 3) == e3 / (e3 + 1));
    CHECK(nnc_softplus_double(1.5000001, 2, 3) == 1.5000001 && nnc_dsoftplus_double(1.5000001, 2, 3) == 1);
    CHECK(nnc_softplus_float(1.5f, 2, 3) != 1.5f && nnc_dsoftplus_float(1.5f, 2, 3) < 0.96f);
    CHECK(nnc_softplus_float(up(1.5f), 2, 3) == up(1.5f) && nnc_dsoftplus_float(up(1.5f), 2, 3) == 1);
    CHECK(nnc_softplus_float(30, 1, 20) == 30 && nnc_softplus_float(-30, 1, 20) > 0);
    CHECK(isnan(nnc_softplus_float(NAN, 1, 20)) && isnan(nnc_dsoftplus_float(NAN, 1, 20)) &&
          isnan(nnc_mish_float(NAN)) && isnan(nnc_dmish_float(NAN)) && isnan(nnc_softplus_double(NAN, 1, 20)) &&
          isnan(nnc_mish_double(NAN)));
    printf("softplus/mish: worst float error %.3g, derivatives %.3g\n", worst, worst_fd);
}

/* int(x): truncation toward zero inside the i32 range, -2^31 for NaN and
 * outside it (both ends, infinities too), in float and double. */
static void check_to_i32(void)
{
    const float fin[] = {2.7f, -2.7f, 0.5f, -0.5f, -0.0f, 1e9f, -2147483648.0f, 2147483520.0f};
    const int32_t fout[] = {2, -2, 0, 0, 0, 1000000000, INT32_MIN, 2147483520};
    for (size_t i = 0; i < sizeof fin / sizeof *fin; i++)
        CHECKF(nnc_to_i32_float(fin[i]) == fout[i], "to_i32_float(%.9g) = %ld", (double)fin[i],
               (long)nnc_to_i32_float(fin[i]));
    const float fbad[] = {NAN, INFINITY, -INFINITY, 2147483648.0f, -2147483904.0f, 1e30f};
    for (size_t i = 0; i < sizeof fbad / sizeof *fbad; i++)
        CHECKF(nnc_to_i32_float(fbad[i]) == INT32_MIN, "to_i32_float(%g)", (double)fbad[i]);
    CHECK(nnc_to_i32_double(2147483647.9) == INT32_MAX && nnc_to_i32_double(-2147483648.9) == INT32_MIN &&
          nnc_to_i32_double(-2147483647.5) == -2147483647 && nnc_to_i32_double(-3.99) == -3);
    const double dbad[] = {NAN, INFINITY, 2147483648.0, -2147483649.0, -1e300};
    for (size_t i = 0; i < sizeof dbad / sizeof *dbad; i++)
        CHECKF(nnc_to_i32_double(dbad[i]) == INT32_MIN, "to_i32_double(%g)", dbad[i]);
    printf("to_i32: ok\n");
}

#if defined(FP_FAST_FMAF) && !defined(NNC_TEST_FMA_TWINS)
/* With FMA on the command line, nnc_fmaf is fmaf: each function and its
 * _fma twin are the same operations, so the same bits */
static void check_twins(void)
{
    typedef float fn(float);
    static const struct {
        const char *name;
        fn *plain, *twin;
    } f[] = {
        {"tanh", nnc_tanh_float, nnc_tanh_float_fma},
        {"exp", nnc_exp_float, nnc_exp_float_fma},
        {"exp_nonpos", nnc_exp_nonpos_float, nnc_exp_nonpos_float_fma},
        {"dgelu_tanh", nnc_dgelu_tanh_float, nnc_dgelu_tanh_float_fma},
        {"normcdf", nnc_normcdf_float, nnc_normcdf_float_fma},
        {"gelu", nnc_gelu_float, nnc_gelu_float_fma},
        {"dgelu", nnc_dgelu_float, nnc_dgelu_float_fma},
        {"sigmoid", nnc_sigmoid_float, nnc_sigmoid_float_fma},
        {"dsilu", nnc_dsilu_float, nnc_dsilu_float_fma},
    };
    static const float edge[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 88.0f, -87.0f, -87.5f};
    for (size_t k = 0; k < sizeof f / sizeof *f; k++) {
        long differ = 0;
        for (float x = -100.0f; x <= 100.0f; x += 0.0009765625f) {
            const float a = f[k].plain(x), b = f[k].twin(x);
            differ += memcmp(&a, &b, sizeof a) != 0;
        }
        for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
            const float a = f[k].plain(edge[i]), b = f[k].twin(edge[i]);
            differ += memcmp(&a, &b, sizeof a) != 0;
        }
        CHECKF(differ == 0, "nnc_%s_float and its _fma twin differ at %ld points", f[k].name, differ);
    }
}
#endif

int main(void)
{
#ifdef NNC_TEST_FMA_TWINS
    printf("the _fma twins: fused multiply-adds\n");
#elif defined(FP_FAST_FMAF)
    printf("nnc_fmaf: fused multiply-add\n");
#else
    printf("nnc_fmaf: multiply, then add\n");
#endif
    check_tanh();
    check_exp();
    check_sigmoid();
    check_derivatives();
    check_gelu_erf();
    check_keep();
    check_hard();
    check_softplus_mish();
    check_to_i32();
#if defined(FP_FAST_FMAF) && !defined(NNC_TEST_FMA_TWINS)
    check_twins();
#endif
    return check_summary("test_math");
}
