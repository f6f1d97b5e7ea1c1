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
 *   nnc_dgelu_*      the double one against a central difference of GELU's
 *                    tanh form; the float one against the double one on
 *                    [-8, 8] within 3.2e-5: tanh's error (<= 1e-6) times the
 *                    derivative's sensitivity to it, 0.5 |x| k (1 + 0.134 x²)
 *                    <= 31 at |x| = 8;
 *   nnc_dsilu_*      against s (1 + x (1 - s)) in double;
 *   nnc_keep_*       g bit for bit (NaN, -0, inf) when kept, +0 when not.
 *
 * CMake builds it twice: plainly, and at -O3 -march=native, where
 * FP_FAST_FMAF makes nnc_fmaf a fused multiply-add (a different rounding
 * of the same polynomials).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "nnc_math.h"

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
    printf("exp: max error %.3g ulp over [-87, 88]\n", worst);
}

/* GELU's tanh form with the constants the generated forward pass prints */
static double gelu(double x) { return 0.5 * x * (1.0 + tanh(0.797884561 * (x + 0.044715 * x * x * x))); }

static void check_derivatives(void)
{
    double worst_fd = 0, worst_f = 0, worst_silu = 0, worst_silu_f = 0;
    for (int i = 0; i <= 16000; i++) {
        const double x = -8.0 + (double)i * 1e-3;
        const double h = 1e-5, fd = (gelu(x + h) - gelu(x - h)) / (2 * h);
        const double d = nnc_dgelu_double(x);
        const double e = fabs(d - fd) / (1.0 + fabs(fd));
        if (e > worst_fd)
            worst_fd = e;
        const double ef = fabs((double)nnc_dgelu_float((float)x) - nnc_dgelu_double((double)(float)x));
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
    CHECKF(worst_fd <= 1e-8, "dgelu_double vs central difference: %.3g", worst_fd);
    CHECKF(worst_f <= 3.2e-5, "dgelu_float vs dgelu_double: %.3g", worst_f);
    CHECKF(worst_silu <= 1e-15, "dsilu_double: %.3g", worst_silu);
    CHECKF(worst_silu_f <= 1e-6, "dsilu_float: %.3g", worst_silu_f);
    printf("dgelu: %.3g (double vs difference), %.3g (float); dsilu: %.3g, %.3g\n", worst_fd, worst_f, worst_silu,
           worst_silu_f);
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

int main(void)
{
#ifdef FP_FAST_FMAF
    printf("nnc_fmaf: fused multiply-add\n");
#else
    printf("nnc_fmaf: multiply, then add\n");
#endif
    check_tanh();
    check_exp();
    check_derivatives();
    check_keep();
    return check_summary("test_math");
}
