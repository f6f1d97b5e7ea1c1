/* test_conv.c — the direct convolution kernels (runtime/conv.c) against
 * a plain double-precision convolution, on shapes that exercise every
 * path: channel blocks of 4 and the 1-3 channel tails, outputs shorter
 * and longer than one 96-position block and ending in a half block, rows
 * narrower than a vector, kernels 1x1 to 7x7 and non-square, padding 0 to
 * K - 1 (and wider, forward only), batches, and more taps than one run of
 * the tap table; the Winograd path of 8x8 and 16x16 layers (at avx512
 * and avx2: route_case checks that it is taken), infinities there (the
 * direct kernels redo the call) and NaN (kept); stride 2; and the gradient
 * for the kernel at any stride.
 * ctest runs it under each instruction set (runtime.conv.<isa>, NNC_ISA):
 * at avx512 and avx2 the direct kernels run (16-float vectors at avx512,
 * 8-float ones at avx2, each with its own register blocks); at generic
 * their fallback, the columns (conv_cols.c), runs through the same cases,
 * and the test checks that the fallback gives bit for bit what the
 * columns functions give when called themselves.  The -O3 -march=native build
 * (rt_test_conv_native) runs the direct kernels on any machine
 * (NNC_CONV_DIRECT_ALWAYS), compiled as the benchmark compiles them.
 * The work buffer is exactly the size the kernel asks for, with guard
 * floats after it that must stay untouched (ASan sees the rest).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nnc_runtime.h"
#include "isa_skip.h"

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xFFFF) / 32768.0 - 1.0;
}

/* y[n][f][oh][ow] = sum w[f][c][ky][kx] x[n][c][S oh+ky-p][S ow+kx-p] */
static void ref_conv(int N, const float *x, const float *w, double *y, int C, int H, int W, int F, int KH, int KW,
                     int S, int p)
{
    int OH = (H + 2 * p - KH) / S + 1, OW = (W + 2 * p - KW) / S + 1;
    for (int n = 0; n < N; n++)
        for (int f = 0; f < F; f++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    double s = 0;
                    for (int c = 0; c < C; c++)
                        for (int ky = 0; ky < KH; ky++)
                            for (int kx = 0; kx < KW; kx++) {
                                int ih = S * oh + ky - p, iw = S * ow + kx - p;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    s += (double)w[((f * C + c) * KH + ky) * KW + kx] *
                                        x[((n * C + c) * H + ih) * W + iw];
                            }
                    y[((n * F + f) * OH + oh) * OW + ow] = s;
                }
}

/* dx[n][c][ih][iw] = sum over (f, oh, ow, ky, kx) reaching it of w dy, at stride S */
static void ref_bwd_data(int N, const float *dy, const float *w, double *dx, int C, int H, int W, int F, int KH, int KW,
                         int S, int p)
{
    int OH = (H + 2 * p - KH) / S + 1, OW = (W + 2 * p - KW) / S + 1;
    memset(dx, 0, sizeof(double) * (size_t)(N * C * H * W));
    for (int n = 0; n < N; n++)
        for (int f = 0; f < F; f++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++)
                    for (int c = 0; c < C; c++)
                        for (int ky = 0; ky < KH; ky++)
                            for (int kx = 0; kx < KW; kx++) {
                                int ih = S * oh + ky - p, iw = S * ow + kx - p;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    dx[((n * C + c) * H + ih) * W + iw] +=
                                        (double)w[((f * C + c) * KH + ky) * KW + kx] *
                                        dy[((n * F + f) * OH + oh) * OW + ow];
                            }
}

/* max |got - want| / (max |want| + tiny): float sums of up to C K K terms */
static double rel_err(const float *got, const double *want, size_t n)
{
    double e = 0, m = 1e-30;
    for (size_t i = 0; i < n; i++) {
        if (fabs(want[i]) > m)
            m = fabs(want[i]);
        if (fabs(got[i] - want[i]) > e || got[i] != got[i])
            e = got[i] != got[i] ? INFINITY : fabs(got[i] - want[i]);
    }
    return e / m;
}

enum { GUARD = 64 };

static float *work_with_guard(int64_t n)
{
    float *w = malloc(sizeof(float) * (size_t)(n + GUARD));
    for (int64_t i = 0; i < n + GUARD; i++)
        w[i] = i < n ? NAN : 12345.0f; /* NaN: a read of stale work shows */
    return w;
}

/* the same, starting at 64 bytes (conv.c picks some kernels by the
 * work's alignment) */
static float *work_aligned_with_guard(int64_t n)
{
    const size_t bytes = (sizeof(float) * (size_t)(n + GUARD) + 63) / 64 * 64;
    float *w = aligned_alloc(64, bytes);
    for (int64_t i = 0; i < n + GUARD; i++)
        w[i] = i < n ? NAN : 12345.0f;
    return w;
}

static int guard_intact(const float *w, int64_t n)
{
    for (int i = 0; i < GUARD; i++)
        if (w[n + i] != 12345.0f)
            return 0;
    return 1;
}

static void one_case(unsigned *seed, int N, int C, int H, int W, int F, int KH, int KW, int p)
{
    int OH = H + 2 * p - KH + 1, OW = W + 2 * p - KW + 1;
    size_t nx = (size_t)N * C * H * W, nw = (size_t)F * C * KH * KW, ny = (size_t)N * F * OH * OW;
    float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw), *y = malloc(sizeof(float) * ny);
    float *dy = malloc(sizeof(float) * ny), *dx = malloc(sizeof(float) * nx);
    double *yr = malloc(sizeof(double) * ny), *dxr = malloc(sizeof(double) * nx);
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)urand(seed);
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)urand(seed);
    for (size_t i = 0; i < ny; i++)
        dy[i] = (float)urand(seed), y[i] = NAN;

    int64_t nwk = nnc_conv2d_s1_work(C, H, W, F, KH, KW, p);
    float *wk = work_with_guard(nwk);
    nnc_conv2d_s1_f32(N, x, w, y, C, H, W, F, KH, KW, p, NULL, 0, wk, nwk);
    ref_conv(N, x, w, yr, C, H, W, F, KH, KW, 1, p);
    double e = rel_err(y, yr, ny);
    CHECKF(e < 1e-5, "forward N%d C%d %dx%d F%d k%dx%d p%d: relative error %g", N, C, H, W, F, KH, KW, p, e);
    CHECKF(guard_intact(wk, nwk), "forward wrote past its work buffer");
    /* with a bias, and with a bias and relu (alternating by F) */
    {
        float *bias = malloc(sizeof(float) * (size_t)F);
        for (int f = 0; f < F; f++)
            bias[f] = (float)urand(seed);
        const int relu = F % 2;
        nnc_conv2d_s1_f32(N, x, w, y, C, H, W, F, KH, KW, p, bias, relu, wk, nwk);
        for (size_t i = 0; i < ny; i++) {
            const size_t f = i / (size_t)(OH * OW) % (size_t)F;
            yr[i] += bias[f];
            if (relu && yr[i] < 0)
                yr[i] = 0;
        }
        e = rel_err(y, yr, ny);
        CHECKF(e < 1e-5, "forward with bias%s N%d C%d F%d k%dx%d p%d: relative error %g", relu ? " and relu" : "", N, C,
               F, KH, KW, p, e);
        free(bias);
    }
    free(wk);

    if (p <= KH - 1 && p <= KW - 1) {
        nwk = nnc_conv2d_s1_bwd_data_work(C, H, W, F, KH, KW, p);
        wk = work_with_guard(nwk);
        for (size_t i = 0; i < nx; i++)
            dx[i] = NAN;
        nnc_conv2d_s1_bwd_data_f32(N, dy, w, dx, NULL, C, H, W, F, KH, KW, p, wk, nwk);
        ref_bwd_data(N, dy, w, dxr, C, H, W, F, KH, KW, 1, p);
        e = rel_err(dx, dxr, nx);
        CHECKF(e < 1e-5, "backward data N%d C%d %dx%d F%d k%dx%d p%d: relative error %g", N, C, H, W, F, KH, KW, p, e);
        CHECKF(guard_intact(wk, nwk), "backward data wrote past its work buffer");
        /* plus another gradient of x, summed as dx is stored */
        float *add = malloc(sizeof(float) * nx);
        for (size_t i = 0; i < nx; i++)
            add[i] = (float)urand(seed), dxr[i] += add[i], dx[i] = NAN;
        nnc_conv2d_s1_bwd_data_f32(N, dy, w, dx, add, C, H, W, F, KH, KW, p, wk, nwk);
        e = rel_err(dx, dxr, nx);
        CHECKF(e < 1e-5, "backward data + add N%d C%d %dx%d F%d k%dx%d p%d: relative error %g", N, C, H, W, F, KH, KW,
               p, e);
        free(add);
        free(wk);
    }
    free(x), free(w), free(y), free(dy), free(dx), free(yr), free(dxr);
}

/* got against want where want may be ±inf: an inf must come out as the
 * same inf (not NaN), the rest within the usual relative error */
static int inf_close(const float *got, const double *want, size_t n)
{
    double m = 1e-30;
    for (size_t i = 0; i < n; i++)
        if (isfinite(want[i]) && fabs(want[i]) > m)
            m = fabs(want[i]);
    for (size_t i = 0; i < n; i++)
        if (isfinite(want[i]) ? !(fabs(got[i] - want[i]) <= 1e-5 * m) : (double)got[i] != want[i])
            return 0;
    return 1;
}

/* An infinity in x (forward, kernel gradient) or dy (both gradients) of
 * a layer the Winograd path would take: its differences would make inf -
 * inf = NaN where the sums, and PyTorch, give inf (the kernels take the
 * direct path then).  Positive weights and inputs, so that every sum
 * that meets the inf is +inf.  The inf is in the last of N examples: in
 * the last block of 4 8x8 images, or of one 16x16 image, after the
 * blocks before it were written.  And the kernel gradient of no
 * examples: all 0. */
static void inf_case(int S, int N)
{
    const int C = 32, F = 33, K = 3, b = N - 1;
    const size_t nx = (size_t)N * C * S * S, nw = (size_t)F * C * K * K, ny = (size_t)N * F * S * S;
    float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw), *y = malloc(sizeof(float) * ny);
    float *dy = malloc(sizeof(float) * ny), *dx = malloc(sizeof(float) * nx), *dw = malloc(sizeof(float) * nw);
    double *r = malloc(sizeof(double) * (nx > ny ? nx : ny));
    unsigned seed = 11;
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)fabs(urand(&seed));
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)fabs(urand(&seed)) + 0.01f;
    for (size_t i = 0; i < ny; i++)
        dy[i] = (float)fabs(urand(&seed));
    /* x's inf at (3, 4), (2, 1) of 4x4, feeds all 9 taps; 32x32: at (27,
     * 4), in the example's last block, after three were written */
    const size_t xinf = (size_t)(b * C + 3) * S * S +
        (S == 32     ? 27 * S + 4
             : S > 4 ? 3 * S + 4
                     : 2 * S + 1),
                 dyinf = (size_t)(b * F + 5) * S * S + (S == 32 ? 26 * S : 2 * S) + 2;
    x[xinf] = INFINITY;
    dy[dyinf] = INFINITY;
    int64_t nwk = nnc_conv2d_s1_work(C, S, S, F, K, K, 1);
    float *wk = work_with_guard(nwk);
    nnc_conv2d_s1_f32(N, x, w, y, C, S, S, F, K, K, 1, NULL, 0, wk, nwk);
    ref_conv(N, x, w, r, C, S, S, F, K, K, 1, 1);
    CHECKF(inf_close(y, r, ny), "forward N%d %dx%d with an inf in x: inf must stay inf", N, S, S);
    free(wk);
    nwk = nnc_conv2d_s1_bwd_data_work(C, S, S, F, K, K, 1);
    wk = work_with_guard(nwk);
    nnc_conv2d_s1_bwd_data_f32(N, dy, w, dx, NULL, C, S, S, F, K, K, 1, wk, nwk);
    ref_bwd_data(N, dy, w, r, C, S, S, F, K, K, 1, 1);
    CHECKF(inf_close(dx, r, nx), "data gradient N%d %dx%d with an inf in dy: inf must stay inf", N, S, S);
    /* with an addend, the inf in the last block: the blocks before it
     * wrote their dx (the addend added) before the inf was seen; redone */
    float *add = malloc(sizeof(float) * nx);
    for (size_t i = 0; i < nx; i++)
        add[i] = (float)(i % 7) - 3.0f, r[i] += add[i];
    nnc_conv2d_s1_bwd_data_f32(N, dy, w, dx, add, C, S, S, F, K, K, 1, wk, nwk);
    CHECKF(inf_close(dx, r, nx), "data gradient + add N%d %dx%d, inf in dy", N, S, S);
    free(add);
    free(wk);
    nwk = nnc_conv2d_bwd_filter_work(C, S, S, F, K, K, 1, 1);
    wk = work_with_guard(nwk);
    dy[dyinf] = 1.0f; /* the inf in x alone */
    nnc_conv2d_bwd_filter_f32(N, dy, x, dw, C, S, S, F, K, K, 1, 1, wk, nwk);
    int ok = 1;
    for (size_t i = 0; i < nw; i++) {
        /* the inf at (3, 4) (or (2, 1)) of channel 3 meets all its taps
         * (every output it feeds is inside the image) */
        ok &= i / (K * K) % C == 3 ? dw[i] == INFINITY : isfinite(dw[i]);
    }
    CHECKF(ok, "kernel gradient N%d %dx%d with an inf in x: inf in channel 3's taps, finite elsewhere", N, S, S);
    /* the inf in dy alone (dy's transform, Z, looks for it): at (2, 2) of
     * output channel 5, whose taps all read inside the image */
    x[xinf] = 1.0f, dy[dyinf] = INFINITY;
    nnc_conv2d_bwd_filter_f32(N, dy, x, dw, C, S, S, F, K, K, 1, 1, wk, nwk);
    ok = 1;
    for (size_t i = 0; i < nw; i++)
        ok &= i / ((size_t)C * K * K) == 5 ? dw[i] == INFINITY : isfinite(dw[i]);
    CHECKF(ok, "kernel gradient N%d %dx%d with an inf in dy: inf in output channel 5, finite elsewhere", N, S, S);
    CHECKF(guard_intact(wk, nwk), "kernel gradient with an inf wrote past its work buffer");
    for (size_t i = 0; i < nw; i++)
        dw[i] = NAN;
    nnc_conv2d_bwd_filter_f32(0, dy, x, dw, C, S, S, F, K, K, 1, 1, wk, nwk);
    ok = 1;
    for (size_t i = 0; i < nw; i++)
        ok &= dw[i] == 0.0f;
    CHECKF(ok, "kernel gradient %dx%d of no examples: all 0", S, S);
    free(wk);
    free(x), free(w), free(y), free(dy), free(dx), free(dw), free(r);
}

/* got against want where want may be NaN: NaN exactly where want is, the
 * rest within the usual relative error */
static int nan_close(const float *got, const double *want, size_t n)
{
    double m = 1e-30;
    for (size_t i = 0; i < n; i++)
        if (!isnan(want[i]) && fabs(want[i]) > m)
            m = fabs(want[i]);
    for (size_t i = 0; i < n; i++)
        if (isnan(want[i]) ? !isnan(got[i]) : !(fabs(got[i] - want[i]) <= 1e-5 * m))
            return 0;
    return 1;
}

/* A NaN is no infinity: the Winograd path keeps it (its transforms spread
 * a NaN to exactly the outputs whose 3x3 window holds it, as the direct
 * sum does), NaN where the plain loops give NaN and nowhere else.  In the
 * last of N examples, at an image corner (4 outputs a channel) and inside
 * (9). */
static void nan_case(int S, int N)
{
    const int C = 35, F = 40, K = 3, b = N - 1;
    const size_t nx = (size_t)N * C * S * S, nw = (size_t)F * C * K * K, ny = (size_t)N * F * S * S;
    float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw), *y = malloc(sizeof(float) * ny);
    float *dy = malloc(sizeof(float) * ny), *dx = malloc(sizeof(float) * nx), *dw = malloc(sizeof(float) * nw);
    double *r = malloc(sizeof(double) * (nx > ny ? nx : ny)), *rw = calloc(nw, sizeof(double));
    unsigned seed = 13;
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)urand(&seed);
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)urand(&seed);
    for (size_t i = 0; i < ny; i++)
        dy[i] = (float)urand(&seed);
    const size_t corner = (size_t)(b * C + 7) * S * S + (S - 1) * S + S - 1;
    x[(size_t)(b * C + 2) * S * S + (S > 4 ? 5 * S + 6 : 2 * S + 1)] = NAN;
    x[corner] = NAN;
    dy[(size_t)(b * F + 9) * S * S + 0 * S + 0] = NAN;
    dy[(size_t)(b * F + 4) * S * S + (S > 4 ? 6 * S + 3 : 3 * S + 1)] = NAN;
    int64_t nwk = nnc_conv2d_s1_work(C, S, S, F, K, K, 1);
    float *wk = work_with_guard(nwk);
    nnc_conv2d_s1_f32(N, x, w, y, C, S, S, F, K, K, 1, NULL, 0, wk, nwk);
    ref_conv(N, x, w, r, C, S, S, F, K, K, 1, 1);
    CHECKF(nan_close(y, r, ny), "forward N%d %dx%d with NaN in x: NaN where the sums give NaN, only there", N, S, S);
    free(wk);
    nwk = nnc_conv2d_s1_bwd_data_work(C, S, S, F, K, K, 1);
    wk = work_with_guard(nwk);
    nnc_conv2d_s1_bwd_data_f32(N, dy, w, dx, NULL, C, S, S, F, K, K, 1, wk, nwk);
    ref_bwd_data(N, dy, w, r, C, S, S, F, K, K, 1, 1);
    CHECKF(nan_close(dx, r, nx), "data gradient N%d %dx%d with NaN in dy: NaN where the sums give NaN, only there", N,
           S, S);
    free(wk);
    /* the kernel gradient: NaN in every tap of input channel 2 and of
     * output channels 9 and 4.  Here the padding's zeros are multiplied
     * too, as the kernels do (a NaN in dy at a corner makes even the taps
     * that read only padding there NaN).  Not the NaN of x at the corner:
     * there Winograd's adjoint transforms, whose coefficients for the taps
     * that never read it cancel only in exact arithmetic, make every tap
     * of channel 7 NaN, where the direct sum leaves 5 of them finite
     * (conv.c, "Infinities"). */
    x[corner] = 0.5f;
    for (int n = 0; n < N; n++)
        for (int f = 0; f < F; f++)
            for (int c = 0; c < C; c++)
                for (int t = 0; t < K * K; t++)
                    for (int oh = 0; oh < S; oh++)
                        for (int ow = 0; ow < S; ow++) {
                            const int ih = oh + t / K - 1, iw = ow + t % K - 1;
                            const double xv =
                                ih >= 0 && ih < S && iw >= 0 && iw < S ? x[((n * C + c) * S + ih) * S + iw] : 0.0;
                            rw[(f * C + c) * K * K + t] += (double)dy[((n * F + f) * S + oh) * S + ow] * xv;
                        }
    nwk = nnc_conv2d_bwd_filter_work(C, S, S, F, K, K, 1, 1);
    wk = work_with_guard(nwk);
    nnc_conv2d_bwd_filter_f32(N, dy, x, dw, C, S, S, F, K, K, 1, 1, wk, nwk);
    CHECKF(nan_close(dw, rw, nw), "kernel gradient N%d %dx%d with NaN in x and dy: NaN where the sums give NaN", N, S,
           S);
    free(wk);
    free(x), free(w), free(y), free(dy), free(dx), free(dw), free(r), free(rw);
}

/* Whether the layers of Winograd's class (nnc_conv_wino) go by Winograd
 * here: conv.c has it at AVX-512 and at AVX2 + FMA.  The library's builds
 * (NNC_TEST_ISA_VARIANTS): at avx512 and avx2, not at generic (the
 * columns).  conv.c compiled with this file (rt_test_conv_native, the
 * direct kernels forced): where this file's target has those.  Else -1:
 * conv.c was built once, for a target this file does not see. */
static int wino_expected(void)
{
#if defined(NNC_CONV_DIRECT_ALWAYS)
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
    return 1;
#else
    return 0;
#endif
#elif defined(NNC_TEST_ISA_VARIANTS)
    return nnc_isa() != NNC_ISA_GENERIC;
#else
    return -1;
#endif
}

/* Which path each pass of a layer of Winograd's class took.  Its
 * transforms subtract inputs of a tile, so a 1 beside 2^25 in one is lost
 * (1 - 2^25 rounds to -2^25) where the direct sum and the columns, which
 * multiply the 2^25 by a zero weight (or a zero dy), keep it exactly.
 * Channel 0 alone is nonzero: x row 2 holds 1 at column 1 and 2^25 at 3;
 * w[0][0] is 1 at tap (1, 0) alone, so y[0][2][2] = x[0][2][1] = 1.  The
 * data gradient: dy row 2 holds 2^25 at column 2 and 1 at 4, dx[0][2][3] =
 * dy[0][2][4] = 1 (4x4: all two columns to the left, the same places in
 * their tile).  The kernel gradient: dy[0][2][2] = 1 alone, so
 * dw[0][0][1][0] = x[0][2][1] = 1.  Winograd gives 0 for each. */
static void route_case(int S, int C)
{
    const int here = wino_expected(), F = C;
    if (here < 0)
        return;
    /* which passes take Winograd at this ISA and CPU (nnc_conv.h) */
    const int narrow = nnc_isa_wino_early(), fwd = here && C >= nnc_conv_wino_least(NNC_CONV_FWD, narrow, S, S, 1),
              filter = here && C >= nnc_conv_wino_least(NNC_CONV_FILTER, narrow, S, S, 1);
    int wino = fwd;
    const size_t nx = (size_t)C * S * S, ny = (size_t)F * S * S, nw = (size_t)F * C * 9;
    float *x = calloc(nx, sizeof(float)), *w = calloc(nw, sizeof(float)), *y = calloc(ny, sizeof(float));
    float *dy = calloc(ny, sizeof(float)), *dx = calloc(nx, sizeof(float)), *dw = calloc(nw, sizeof(float));
    const float big = 33554432.0f;
    float want = wino ? 0.0f : 1.0f;
    const char *how = wino ? "by Winograd (0)" : "exact (1)";
    x[2 * S + 1] = 1.0f, x[2 * S + 3] = big;
    w[1 * 3 + 0] = 1.0f;
    int64_t nwk = nnc_conv2d_s1_work(C, S, S, F, 3, 3, 1);
    float *wk = work_with_guard(nwk);
    nnc_conv2d_s1_f32(1, x, w, y, C, S, S, F, 3, 3, 1, NULL, 0, wk, nwk);
    CHECKF(y[2 * S + 2] == want, "forward %dx%d C%d: y = %g, %s expected", S, S, C, y[2 * S + 2], how);
    free(wk);
    const int sh = S == 4 ? 2 : 0;
    dy[2 * S + 2 - sh] = big, dy[2 * S + 4 - sh] = 1.0f;
    nwk = nnc_conv2d_s1_bwd_data_work(C, S, S, F, 3, 3, 1);
    wk = work_with_guard(nwk);
    nnc_conv2d_s1_bwd_data_f32(1, dy, w, dx, NULL, C, S, S, F, 3, 3, 1, wk, nwk);
    CHECKF(dx[2 * S + 3 - sh] == want, "data gradient %dx%d C%d: dx = %g, %s expected", S, S, C, dx[2 * S + 3 - sh],
           how);
    free(wk);
    memset(dy, 0, sizeof(float) * ny);
    dy[2 * S + 2] = 1.0f;
    wino = filter, want = wino ? 0.0f : 1.0f, how = wino ? "by Winograd (0)" : "exact (1)";
    nwk = nnc_conv2d_bwd_filter_work(C, S, S, F, 3, 3, 1, 1);
    wk = work_with_guard(nwk);
    nnc_conv2d_bwd_filter_f32(1, dy, x, dw, C, S, S, F, 3, 3, 1, 1, wk, nwk);
    CHECKF(dw[3] == want, "kernel gradient %dx%d C%d: dw = %g, %s expected", S, S, C, dw[3], how);
    free(wk);
    free(x), free(w), free(y), free(dy), free(dx), free(dw);
}

static void s2_case(unsigned *seed, int N, int C, int H, int W, int F, int KH, int KW, int p)
{
    int OH = (H + 2 * p - KH) / 2 + 1, OW = (W + 2 * p - KW) / 2 + 1;
    size_t nx = (size_t)N * C * H * W, nw = (size_t)F * C * KH * KW, ny = (size_t)N * F * OH * OW;
    float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw), *y = malloc(sizeof(float) * ny);
    float *bias = malloc(sizeof(float) * (size_t)F);
    double *yr = malloc(sizeof(double) * ny);
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)urand(seed);
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)urand(seed);
    for (int f = 0; f < F; f++)
        bias[f] = (float)urand(seed);
    int64_t nwk = nnc_conv2d_s2_work(C, H, W, F, KH, KW, p);
    float *wk = work_with_guard(nwk);
    ref_conv(N, x, w, yr, C, H, W, F, KH, KW, 2, p);
    for (int withb = 0; withb < 2; withb++) {
        for (size_t i = 0; i < ny; i++)
            y[i] = NAN;
        nnc_conv2d_s2_f32(N, x, w, y, C, H, W, F, KH, KW, p, withb ? bias : NULL, withb, wk, nwk);
        if (withb)
            for (size_t i = 0; i < ny; i++) {
                yr[i] += bias[i / (size_t)(OH * OW) % (size_t)F];
                yr[i] = yr[i] > 0 ? yr[i] : 0;
            }
        double e = rel_err(y, yr, ny);
        CHECKF(e < 1e-5, "stride 2%s N%d C%d %dx%d F%d k%dx%d p%d: relative error %g", withb ? " +bias relu" : "", N, C,
               H, W, F, KH, KW, p, e);
        CHECKF(guard_intact(wk, nwk), "stride 2 wrote past its work buffer");
    }
    free(wk);
    /* its data gradient by dx's phases: every shape here, padding wider
     * than the kernel included */
    {
        float *dy = malloc(sizeof(float) * ny), *dx = malloc(sizeof(float) * nx);
        double *dxr = malloc(sizeof(double) * nx);
        for (size_t i = 0; i < ny; i++)
            dy[i] = (float)urand(seed);
        for (size_t i = 0; i < nx; i++)
            dx[i] = NAN;
        nwk = nnc_conv2d_s2_bwd_data_work(C, H, W, F, KH, KW, p);
        ref_bwd_data(N, dy, w, dxr, C, H, W, F, KH, KW, 2, p);
        /* with the work at 64 bytes too: its phases of one row of taps
         * once took conv_direct's aligned kernel of one row there, which
         * reads other offsets than theirs */
        wk = work_aligned_with_guard(nwk);
        nnc_conv2d_s2_bwd_data_f32(N, dy, w, dx, NULL, C, H, W, F, KH, KW, p, wk, nwk);
        const double ea = rel_err(dx, dxr, nx);
        CHECKF(ea < 1e-5, "stride 2 backward data (work at 64 bytes) N%d C%d %dx%d F%d k%dx%d p%d: relative error %g",
               N, C, H, W, F, KH, KW, p, ea);
        CHECKF(guard_intact(wk, nwk), "stride 2 backward data wrote past its work buffer");
        free(wk);
        for (size_t i = 0; i < nx; i++)
            dx[i] = NAN;
        wk = work_with_guard(nwk);
        nnc_conv2d_s2_bwd_data_f32(N, dy, w, dx, NULL, C, H, W, F, KH, KW, p, wk, nwk);
        const double e = rel_err(dx, dxr, nx);
        CHECKF(e < 1e-5, "stride 2 backward data N%d C%d %dx%d F%d k%dx%d p%d: relative error %g", N, C, H, W, F, KH,
               KW, p, e);
        CHECKF(guard_intact(wk, nwk), "stride 2 backward data wrote past its work buffer");
        float *add = malloc(sizeof(float) * nx);
        for (size_t i = 0; i < nx; i++)
            add[i] = (float)urand(seed), dxr[i] += add[i], dx[i] = NAN;
        nnc_conv2d_s2_bwd_data_f32(N, dy, w, dx, add, C, H, W, F, KH, KW, p, wk, nwk);
        const double e2 = rel_err(dx, dxr, nx);
        CHECKF(e2 < 1e-5, "stride 2 backward data + add N%d C%d %dx%d F%d k%dx%d p%d: relative error %g", N, C, H, W, F,
               KH, KW, p, e2);
        free(add);
        free(wk), free(dy), free(dx), free(dxr);
    }
    free(x), free(w), free(y), free(bias), free(yr);
}

/* dw[f][c][ky][kx] = sum over n, oh, ow of dy x at stride S */
static void filter_case(unsigned *seed, int N, int C, int H, int W, int F, int KH, int KW, int S, int p)
{
    int OH = (H + 2 * p - KH) / S + 1, OW = (W + 2 * p - KW) / S + 1;
    size_t nx = (size_t)N * C * H * W, nw = (size_t)F * C * KH * KW, ny = (size_t)N * F * OH * OW;
    float *x = malloc(sizeof(float) * nx), *dy = malloc(sizeof(float) * ny), *dw = malloc(sizeof(float) * nw);
    double *dwr = calloc(nw, sizeof(double));
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)urand(seed);
    for (size_t i = 0; i < ny; i++)
        dy[i] = (float)urand(seed);
    for (size_t i = 0; i < nw; i++)
        dw[i] = NAN;
    for (int n = 0; n < N; n++)
        for (int f = 0; f < F; f++)
            for (int c = 0; c < C; c++)
                for (int ky = 0; ky < KH; ky++)
                    for (int kx = 0; kx < KW; kx++)
                        for (int oh = 0; oh < OH; oh++)
                            for (int ow = 0; ow < OW; ow++) {
                                int ih = oh * S + ky - p, iw = ow * S + kx - p;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    dwr[((f * C + c) * KH + ky) * KW + kx] +=
                                        (double)dy[((n * F + f) * OH + oh) * OW + ow] *
                                        x[((n * C + c) * H + ih) * W + iw];
                            }
    int64_t nwk = nnc_conv2d_bwd_filter_work(C, H, W, F, KH, KW, S, p);
    float *wk = work_with_guard(nwk);
    nnc_conv2d_bwd_filter_f32(N, dy, x, dw, C, H, W, F, KH, KW, S, p, wk, nwk);
    double e = rel_err(dw, dwr, nw);
    CHECKF(e < 1e-5, "backward filter N%d C%d %dx%d F%d k%dx%d S%d p%d: relative error %g", N, C, H, W, F, KH, KW, S, p,
           e);
    CHECKF(guard_intact(wk, nwk), "backward filter wrote past its work buffer");
    free(wk), free(x), free(dy), free(dw), free(dwr);
}

/* Each direct kernel against the columns function it falls back to
 * (conv_cols.c), on the same inputs: bit for bit where the runtime runs
 * the fallback (nnc_conv_direct_ok() == 0), within float rounding where
 * it runs the direct kernels.  Stride 1 or 2: the forward pass with a
 * bias and relu, the data gradient with an addend, the kernel's gradient. */
static int same_out(const float *a, const float *b, size_t n)
{
    if (!nnc_conv_direct_ok())
        return memcmp(a, b, sizeof(float) * n) == 0;
    double e = 0, m = 1e-30;
    for (size_t i = 0; i < n; i++) {
        m = fabs(b[i]) > m ? fabs(b[i]) : m;
        e = fabs(a[i] - b[i]) > e || a[i] != a[i] ? (a[i] != a[i] ? INFINITY : fabs(a[i] - b[i])) : e;
    }
    return e / m < 1e-5;
}

static void fallback_case(unsigned *seed, int N, int C, int H, int W, int F, int KH, int KW, int S, int p)
{
    const int OH = (H + 2 * p - KH) / S + 1, OW = (W + 2 * p - KW) / S + 1;
    const size_t nx = (size_t)N * C * H * W, nw = (size_t)F * C * KH * KW, ny = (size_t)N * F * OH * OW;
    float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw), *dy = malloc(sizeof(float) * ny),
          *add = malloc(sizeof(float) * nx), *bias = malloc(sizeof(float) * (size_t)F);
    float *a = malloc(sizeof(float) * (nx > ny ? (nx > nw ? nx : nw) : (ny > nw ? ny : nw))),
          *b = malloc(sizeof(float) * (nx > ny ? (nx > nw ? nx : nw) : (ny > nw ? ny : nw)));
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)urand(seed), add[i] = (float)urand(seed);
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)urand(seed);
    for (size_t i = 0; i < ny; i++)
        dy[i] = (float)urand(seed);
    for (int f = 0; f < F; f++)
        bias[f] = (float)urand(seed);
    const char *how = nnc_conv_direct_ok() ? "direct" : "fallback";

    int64_t nd = S == 1 ? nnc_conv2d_s1_work(C, H, W, F, KH, KW, p) : nnc_conv2d_s2_work(C, H, W, F, KH, KW, p);
    int64_t nc = nnc_conv2d_cols_work(C, H, W, F, KH, KW, S, p);
    float *wd = work_with_guard(nd), *wc = work_with_guard(nc);
    if (S == 1)
        nnc_conv2d_s1_f32(N, x, w, a, C, H, W, F, KH, KW, p, bias, 1, wd, nd);
    else
        nnc_conv2d_s2_f32(N, x, w, a, C, H, W, F, KH, KW, p, bias, 1, wd, nd);
    nnc_conv2d_cols_f32(N, x, w, b, C, H, W, F, KH, KW, S, p, bias, 1, wc, nc);
    CHECKF(same_out(a, b, ny) && guard_intact(wd, nd), "%s forward s%d N%d C%d %dx%d F%d k%dx%d p%d", how, S, N, C, H,
           W, F, KH, KW, p);
    free(wd), free(wc);

    if (p <= KH - 1 && p <= KW - 1) {
        nd = S == 1 ? nnc_conv2d_s1_bwd_data_work(C, H, W, F, KH, KW, p)
                    : nnc_conv2d_s2_bwd_data_work(C, H, W, F, KH, KW, p);
        wd = work_with_guard(nd), wc = work_with_guard(nc);
        if (S == 1)
            nnc_conv2d_s1_bwd_data_f32(N, dy, w, a, add, C, H, W, F, KH, KW, p, wd, nd);
        else
            nnc_conv2d_s2_bwd_data_f32(N, dy, w, a, add, C, H, W, F, KH, KW, p, wd, nd);
        nnc_conv2d_cols_bwd_data_f32(N, dy, w, b, add, C, H, W, F, KH, KW, S, p, wc, nc);
        CHECKF(same_out(a, b, nx) && guard_intact(wd, nd), "%s data gradient s%d N%d C%d %dx%d F%d k%dx%d p%d", how, S,
               N, C, H, W, F, KH, KW, p);
        free(wd), free(wc);
    }

    nd = nnc_conv2d_bwd_filter_work(C, H, W, F, KH, KW, S, p);
    nc = nnc_conv2d_cols_bwd_filter_work(C, H, W, F, KH, KW, S, p);
    wd = work_with_guard(nd), wc = work_with_guard(nc);
    nnc_conv2d_bwd_filter_f32(N, dy, x, a, C, H, W, F, KH, KW, S, p, wd, nd);
    nnc_conv2d_cols_bwd_filter_f32(N, dy, x, b, C, H, W, F, KH, KW, S, p, wc, nc);
    CHECKF(same_out(a, b, nw) && guard_intact(wd, nd), "%s kernel gradient s%d N%d C%d %dx%d F%d k%dx%d p%d", how, S, N,
           C, H, W, F, KH, KW, p);
    free(wd), free(wc);
    free(x), free(w), free(dy), free(add), free(bias), free(a), free(b);
}

int main(void)
{
    if (isa_skip("test_conv"))
        return ISA_SKIP;
    unsigned seed = 7;
    /* the direct kernels against the columns (resnet_small's layers,
     * 'same' on short and long rows, lenet5's, odd shapes) */
    fallback_case(&seed, 2, 16, 32, 32, 16, 3, 3, 1, 1);
    fallback_case(&seed, 3, 32, 8, 8, 32, 3, 3, 1, 1);
    fallback_case(&seed, 2, 16, 32, 32, 32, 3, 3, 2, 1);
    fallback_case(&seed, 2, 6, 14, 14, 16, 5, 5, 1, 0);
    fallback_case(&seed, 1, 5, 9, 7, 3, 2, 3, 1, 1);
    fallback_case(&seed, 3, 3, 11, 10, 17, 3, 1, 2, 0);
    fallback_case(&seed, 1, 3, 4, 4, 2, 3, 3, 1, 4); /* padding wider than K - 1: forward only */
    fallback_case(&seed, 2, 4, 6, 5, 5, 1, 1, 2, 0);
    /* the benchmark's and the models' layers */
    one_case(&seed, 2, 16, 32, 32, 16, 3, 3, 1);
    one_case(&seed, 2, 32, 16, 16, 32, 3, 3, 1);
    one_case(&seed, 3, 64, 8, 8, 64, 3, 3, 1);
    one_case(&seed, 2, 1, 28, 28, 6, 5, 5, 2);
    one_case(&seed, 2, 6, 14, 14, 16, 5, 5, 0);
    one_case(&seed, 2, 1, 8, 8, 8, 3, 3, 1);
    /* Winograd (8x8, 3x3, padding 1, 32+ channels in and out, AVX-512):
     * batches off the blocks of 4 images (1 to 3 vectors of tiles), output
     * channels off the blocks of 6 and off 16 (the kernel's transform),
     * the smallest channel counts taken, and one just below (direct) */
    one_case(&seed, 5, 32, 8, 8, 64, 3, 3, 1);
    one_case(&seed, 6, 64, 8, 8, 32, 3, 3, 1);
    one_case(&seed, 7, 33, 8, 8, 35, 3, 3, 1);
    one_case(&seed, 1, 40, 8, 8, 47, 3, 3, 1);
    one_case(&seed, 4, 31, 8, 8, 32, 3, 3, 1);
    one_case(&seed, 3, 33, 16, 16, 40, 3, 3, 1); /* 16x16: a block is one example */
    one_case(&seed, 1, 48, 16, 16, 32, 3, 3, 1);
    one_case(&seed, 2, 32, 16, 16, 37, 3, 3, 1); /* odd F: with relu */
    one_case(&seed, 2, 40, 8, 8, 33, 3, 3, 1);   /* F off 8: the avx2 kernel transform's last 8 */
    one_case(&seed, 1, 33, 16, 16, 48, 3, 3, 1); /* 16x16, the data gradient's F = 33 */
    /* 4x4: a block is 16 examples (4 a vector at AVX-512, 2 at AVX2):
     * batches of 1, 5, 16 and 17 (a last vector part empty, a second
     * block of one), channels off 6, 8 and 16 */
    one_case(&seed, 17, 32, 4, 4, 40, 3, 3, 1);
    one_case(&seed, 5, 48, 4, 4, 33, 3, 3, 1);
    one_case(&seed, 1, 33, 4, 4, 64, 3, 3, 1);
    one_case(&seed, 16, 64, 4, 4, 37, 3, 3, 1);
    /* 16 to 31 channels (Winograd at avx2 and on Zen 4 from 16, at
     * Intel's avx512 from 24) */
    one_case(&seed, 3, 24, 8, 8, 17, 3, 3, 1);
    one_case(&seed, 2, 16, 16, 16, 26, 3, 3, 1);
    one_case(&seed, 1, 25, 32, 32, 24, 3, 3, 1);
    /* 32x32: a block is a quarter of an example (8 of its rows) */
    one_case(&seed, 2, 32, 32, 32, 33, 3, 3, 1);
    one_case(&seed, 1, 35, 32, 32, 48, 3, 3, 1);
    /* Winograd at the other sizes (tiles loaded a row at a time, blocks
     * across examples): 24x24 (144 tiles an example) and 12x12 (36), odd
     * and non-square images (the last tile row and column cut), padding 0
     * (the data gradient at padding 2), 64x64 and 8x8 at padding 0;
     * channel counts off the blocks, and just below the least (direct) */
    one_case(&seed, 2, 32, 24, 24, 40, 3, 3, 1);
    one_case(&seed, 3, 40, 12, 12, 33, 3, 3, 1);
    one_case(&seed, 2, 37, 13, 11, 39, 3, 3, 1);
    one_case(&seed, 2, 48, 28, 28, 32, 3, 3, 0);
    one_case(&seed, 5, 32, 9, 9, 35, 3, 3, 1);
    one_case(&seed, 3, 33, 8, 10, 32, 3, 3, 0);
    one_case(&seed, 1, 32, 64, 64, 34, 3, 3, 1);
    one_case(&seed, 2, 40, 9, 20, 48, 3, 3, 1);
    one_case(&seed, 2, 32, 8, 8, 32, 3, 3, 0); /* 8x8 at padding 0: not the special 8x8 */
    one_case(&seed, 2, 31, 12, 12, 40, 3, 3, 1);
    filter_case(&seed, 2, 32, 24, 24, 40, 3, 3, 1, 1);
    filter_case(&seed, 3, 35, 12, 12, 33, 3, 3, 1, 1);
    filter_case(&seed, 2, 40, 13, 11, 36, 3, 3, 1, 1);
    filter_case(&seed, 2, 32, 28, 28, 48, 3, 3, 1, 0);
    filter_case(&seed, 5, 32, 9, 9, 35, 3, 3, 1, 1);
    filter_case(&seed, 3, 33, 8, 10, 32, 3, 3, 1, 0);
    filter_case(&seed, 2, 40, 9, 20, 97, 3, 3, 1, 1);
    inf_case(12, 3);
    inf_case(24, 2);
    inf_case(9, 5);
    nan_case(12, 2);
    nan_case(9, 3);
    route_case(12, 32);
    route_case(24, 32);
    route_case(9, 32);
    route_case(24, 48);
    inf_case(32, 2);
    inf_case(8, 2);
    inf_case(8, 6); /* the inf in the second block of 8x8 images */
    inf_case(16, 2);
    inf_case(4, 3);
    inf_case(4, 18); /* the inf in the second block of 4x4 images */
    nan_case(8, 3);
    nan_case(16, 2);
    nan_case(4, 5);
    nan_case(32, 1);
    /* every pass of the class goes by Winograd at avx512 and avx2 */
    route_case(8, 32);
    route_case(16, 32);
    route_case(4, 32);
    route_case(32, 32);
    /* fewer channels: the forward pass and the data gradient from 16
     * where the FMAs are narrow (avx2, avx512 on Zen 4), 24 at wide
     * avx512; the kernel gradient from 24 and 32 */
    route_case(32, 16);
    route_case(8, 24);
    route_case(16, 24);
    /* channel tails, tiny and odd images, non-square kernels, padding */
    for (int F = 1; F <= 9; F++)
        one_case(&seed, 1, 3, 5, 7, F, 3, 3, 1);
    one_case(&seed, 1, 2, 1, 1, 5, 1, 1, 0);
    one_case(&seed, 1, 2, 3, 3, 2, 3, 3, 2);
    one_case(&seed, 2, 3, 9, 4, 5, 2, 3, 1);
    one_case(&seed, 1, 4, 6, 11, 7, 1, 5, 2);
    one_case(&seed, 1, 5, 12, 13, 3, 7, 7, 3);
    one_case(&seed, 1, 3, 4, 4, 2, 3, 3, 4); /* padding wider than K - 1: forward only */
    one_case(&seed, 4, 7, 19, 23, 6, 4, 2, 1);
    /* grids ending in 1 to 5 vectors */
    for (int w = 13; w <= 17; w++)
        one_case(&seed, 2, 3, 5, w, 5, 3, 3, 1);
    one_case(&seed, 1, 2, 2, 5, 3, 1, 3, 1);
    /* the AVX2 blocks (4 channels x 3 vectors of 8: grids ending in 1 or 2
     * vectors): odd channel counts, F off the blocks of 4 and of 8, images
     * 7x7, 13x13 and 64x64, padding 0 to 2, 5x5 kernels */
    one_case(&seed, 2, 5, 7, 7, 12, 3, 3, 1);
    one_case(&seed, 2, 9, 13, 13, 21, 3, 3, 1);
    one_case(&seed, 1, 3, 64, 64, 10, 3, 3, 1);
    one_case(&seed, 2, 7, 13, 13, 11, 5, 5, 2);
    one_case(&seed, 1, 6, 7, 7, 9, 5, 5, 0);
    one_case(&seed, 2, 17, 7, 7, 13, 5, 5, 1);
    one_case(&seed, 1, 24, 13, 13, 19, 3, 3, 0);
    /* more taps than one run of the offset table (4096): C K K = 4608 */
    one_case(&seed, 1, 512, 3, 3, 5, 3, 3, 1);
    /* a grid of more than 4096 vectors (261 x 260 positions): the copy out
     * of the grid instead of the stores straight into y */
    one_case(&seed, 1, 1, 260, 260, 2, 3, 3, 1);
    /* stride 2: resnet_small's layers, odd and even sizes, kernels 1 to 5,
     * padding 0 to 3 */
    s2_case(&seed, 2, 16, 32, 32, 32, 3, 3, 1);
    s2_case(&seed, 2, 32, 16, 16, 64, 3, 3, 1);
    s2_case(&seed, 2, 16, 32, 32, 32, 1, 1, 0);
    s2_case(&seed, 3, 3, 9, 7, 5, 3, 3, 1);
    s2_case(&seed, 1, 2, 10, 11, 7, 5, 5, 2);
    s2_case(&seed, 1, 4, 6, 5, 3, 2, 4, 0);
    s2_case(&seed, 2, 1, 8, 8, 9, 4, 4, 3);
    s2_case(&seed, 1, 5, 1, 1, 2, 1, 1, 0);
    s2_case(&seed, 1, 2, 5, 6, 3, 2, 2, 2); /* padding wider than the kernel */
    /* rows of 32 and more: the vector (de)interleave of a row, with a
     * scalar tail, odd widths, even and odd padding */
    s2_case(&seed, 1, 2, 9, 35, 3, 3, 3, 2);
    s2_case(&seed, 1, 2, 6, 70, 4, 3, 3, 1);
    s2_case(&seed, 1, 2, 5, 67, 3, 3, 3, 1);
    s2_case(&seed, 2, 6, 15, 13, 10, 3, 3, 1);
    s2_case(&seed, 1, 3, 11, 12, 17, 5, 3, 1);
    s2_case(&seed, 2, 7, 13, 13, 9, 3, 3, 1);
    s2_case(&seed, 1, 3, 64, 64, 5, 3, 3, 1); /* rows of 64: whole vectors */
    s2_case(&seed, 2, 8, 6, 27, 8, 3, 3, 1);  /* its data gradient's Lin 64: whole vectors a channel */
    s2_case(&seed, 2, 5, 7, 7, 11, 5, 5, 2);
    s2_case(&seed, 1, 9, 14, 14, 17, 3, 3, 0);
    s2_case(&seed, 1, 520, 4, 4, 3, 3, 3, 1);  /* forward: C K K > 4096 */
    s2_case(&seed, 1, 3, 6, 6, 1100, 2, 2, 0); /* F x 4 taps > 4096: runs of the phase's tap table */
    /* the kernel's gradient: output channels 1 to 80 (vector blocks of 1, 2
     * and 4 and their tails), strides 1 to 3, tap counts off the blocks of
     * 24 taps */
    filter_case(&seed, 2, 16, 32, 32, 16, 3, 3, 1, 1);
    filter_case(&seed, 2, 32, 16, 16, 32, 3, 3, 1, 1);
    filter_case(&seed, 2, 64, 8, 8, 64, 3, 3, 1, 1);
    /* by Winograd (8x8, 3x3, padding 1, 32+ channels): batches off the
     * blocks of 4 images, output channels off 16 (dy's transform padded)
     * and past 64 (two column blocks), input channels off the blocks of 6 */
    filter_case(&seed, 5, 32, 8, 8, 64, 3, 3, 1, 1);
    filter_case(&seed, 3, 40, 8, 8, 35, 3, 3, 1, 1);
    filter_case(&seed, 6, 33, 8, 8, 97, 3, 3, 1, 1);
    filter_case(&seed, 9, 64, 8, 8, 32, 3, 3, 1, 1);
    filter_case(&seed, 3, 35, 16, 16, 33, 3, 3, 1, 1);
    filter_case(&seed, 17, 32, 4, 4, 35, 3, 3, 1, 1); /* 4x4: two blocks, the second of one example */
    filter_case(&seed, 5, 40, 4, 4, 64, 3, 3, 1, 1);
    filter_case(&seed, 3, 33, 4, 4, 97, 3, 3, 1, 1);
    filter_case(&seed, 2, 34, 32, 32, 35, 3, 3, 1, 1); /* 32x32: four blocks an example */
    filter_case(&seed, 2, 24, 32, 32, 25, 3, 3, 1, 1); /* (narrow FMAs: from 24 channels) */
    filter_case(&seed, 5, 26, 8, 8, 24, 3, 3, 1, 1);
    filter_case(&seed, 2, 16, 32, 32, 32, 3, 3, 2, 1);
    filter_case(&seed, 3, 1, 28, 28, 6, 5, 5, 1, 2);
    filter_case(&seed, 3, 6, 14, 14, 16, 5, 5, 1, 0);
    filter_case(&seed, 2, 3, 9, 7, 80, 3, 2, 3, 2);
    filter_case(&seed, 1, 5, 6, 6, 48, 1, 1, 2, 0);
    filter_case(&seed, 2, 2, 5, 5, 17, 4, 4, 1, 3);
    filter_case(&seed, 2, 2, 12, 30, 70, 2, 29, 1, 3); /* generic rows longer than 24 / cv taps */
    filter_case(&seed, 1, 3, 9, 9, 33, 7, 7, 2, 3);
    /* several positions a step (3- and 5-wide kernels, stride 1 and 2) with
     * a tail of positions per row, and channel counts whose transposition
     * ends off the 16 x 16 blocks */
    filter_case(&seed, 2, 5, 15, 13, 16, 3, 3, 2, 1);
    filter_case(&seed, 2, 4, 13, 11, 24, 5, 5, 2, 2);
    filter_case(&seed, 2, 3, 10, 11, 8, 3, 3, 2, 1);
    filter_case(&seed, 2, 3, 9, 9, 40, 5, 5, 1, 2);
    filter_case(&seed, 2, 7, 11, 6, 16, 3, 3, 1, 0);
    /* the last rows of a block in blocks of 1, 2 or 4 (C KH = 9, 3, 12, 18, 18) */
    filter_case(&seed, 2, 3, 12, 12, 16, 3, 3, 1, 1);
    filter_case(&seed, 2, 1, 9, 9, 16, 3, 3, 2, 1);
    filter_case(&seed, 2, 4, 9, 9, 8, 3, 3, 2, 1);
    filter_case(&seed, 2, 6, 8, 8, 5, 3, 3, 2, 1);
    filter_case(&seed, 2, 6, 8, 8, 16, 3, 3, 1, 1);
    /* the constant-width instances for 7-, 4- and 2-wide kernels (stems,
     * patch layers): 1, 2 and 4 channel vectors and their tails, rows (C
     * KH) off the blocks of R, strides 1 (several positions a step, odd
     * widths), 2 and 4, and 8-lane vectors (F <= 8 at stride 2) */
    filter_case(&seed, 2, 3, 17, 17, 32, 7, 7, 2, 3);
    filter_case(&seed, 2, 3, 15, 15, 16, 7, 7, 2, 3);
    filter_case(&seed, 2, 4, 12, 11, 64, 7, 7, 1, 3);
    filter_case(&seed, 2, 2, 13, 13, 17, 7, 7, 1, 2);
    filter_case(&seed, 2, 3, 16, 16, 80, 4, 4, 4, 0);
    filter_case(&seed, 2, 5, 9, 10, 40, 4, 4, 1, 1);
    filter_case(&seed, 2, 7, 11, 9, 16, 4, 4, 2, 1);
    filter_case(&seed, 2, 3, 12, 12, 96, 2, 2, 2, 0);
    filter_case(&seed, 2, 7, 9, 11, 20, 2, 2, 1, 1);
    filter_case(&seed, 2, 5, 10, 9, 16, 2, 2, 1, 0);
    filter_case(&seed, 2, 3, 10, 10, 6, 7, 7, 2, 3);
    filter_case(&seed, 2, 3, 10, 10, 5, 4, 4, 2, 1);
    filter_case(&seed, 1, 3, 10, 10, 6, 2, 2, 2, 0);
    /* F <= 8 at stride 1: by positions, each channel count */
    for (int F = 1; F <= 8; F++)
        filter_case(&seed, 2, 3 - F % 3, 7 + F, 9, F, 1 + F % 5, 5 - F % 3, 1, F % 3);
    /* AVX2's blocks: 1 and 2 channel vectors of 8, their rows' tails
     * (C KH = 3 to 27), F off 8, 7x7, 13x13 and 64x64 images, padding 0
     * to 2, strides 1 and 2 */
    filter_case(&seed, 2, 3, 13, 13, 9, 3, 3, 1, 1);
    filter_case(&seed, 2, 5, 7, 7, 20, 3, 3, 1, 0);
    filter_case(&seed, 2, 9, 13, 13, 27, 3, 3, 2, 1);
    filter_case(&seed, 1, 2, 64, 64, 12, 3, 3, 1, 1);
    filter_case(&seed, 2, 7, 13, 13, 11, 5, 5, 1, 2);
    filter_case(&seed, 2, 4, 7, 7, 19, 5, 5, 2, 2);
    filter_case(&seed, 2, 3, 9, 9, 25, 4, 4, 1, 1);
    /* 8-float vectors: F <= 8 */
    filter_case(&seed, 2, 4, 10, 10, 8, 3, 3, 1, 1);
    filter_case(&seed, 2, 2, 11, 9, 1, 5, 5, 2, 2);
    filter_case(&seed, 1, 3, 7, 13, 5, 2, 30, 1, 9);
    return check_summary("test_conv");
}
