/* test_conv_gen.c — the general convolution (runtime/conv_cols.c's
 * nnc_conv2d_gen_*: groups, dilation, [h, w] strides and padding), in
 * float and double, against plain loops in double: the forward pass (with
 * a bias and relu), the data gradient (with an addend) and the kernel's
 * gradient summed over the examples, on geometries that take both paths
 * (the columns with a GEMM per group; depthwise, one channel per group,
 * through its padded, phase-split copy, with a channel multiplier of 1
 * and 2, strides 1 to 3 and kernels to 7x7).  The work
 * buffer is exactly nnc_conv.h's size, NaN-filled, with a guard after it
 * that must stay untouched, and so are the outputs (the vector code's
 * masked stores, which ASan does not see under gcc); the threads give the same bits at 1 and 3
 * (the kernel gradient's items and their partial sums).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "isa_skip.h"
#include "nnc_runtime.h"

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xFFFF) / 32768.0 - 1.0;
}

/* y, dx (+ add) and dw by the definition, in double */
static void ref(int64_t N, const nnc_conv2d_geom *g, const double *x, const double *w, const double *bias,
                const double *dy, const double *add, double *y, double *dx, double *dw)
{
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g), Cg = g->C / g->groups, Fg = g->F / g->groups;
    for (int64_t i = 0; i < N * g->C * g->H * g->W; i++)
        dx[i] = add[i];
    memset(dw, 0, sizeof(double) * (size_t)(g->F * Cg * g->KH * g->KW));
    for (int64_t n = 0; n < N; n++)
        for (int64_t f = 0; f < g->F; f++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    const int64_t yi = ((n * g->F + f) * OH + oh) * OW + ow;
                    double acc = bias[f];
                    for (int64_t cg = 0; cg < Cg; cg++)
                        for (int64_t ki = 0; ki < g->KH; ki++)
                            for (int64_t kj = 0; kj < g->KW; kj++) {
                                const int64_t c = f / Fg * Cg + cg, ih = oh * g->sh - g->ph + ki * g->dh,
                                              iw = ow * g->sw - g->pw + kj * g->dw;
                                if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W)
                                    continue;
                                const int64_t xi = ((n * g->C + c) * g->H + ih) * g->W + iw,
                                              wi = ((f * Cg + cg) * g->KH + ki) * g->KW + kj;
                                acc += w[wi] * x[xi];
                                dx[xi] += w[wi] * dy[yi];
                                dw[wi] += x[xi] * dy[yi];
                            }
                    y[yi] = acc > 0 ? acc : 0;
                }
}

static double rel_err(const double *ref_, const float *a32, const double *a64, int64_t n)
{
    double worst = 0, scale = 1e-6;
    for (int64_t i = 0; i < n; i++)
        scale = fabs(ref_[i]) > scale ? fabs(ref_[i]) : scale;
    for (int64_t i = 0; i < n; i++) {
        const double e = fabs((a32 ? (double)a32[i] : a64[i]) - ref_[i]) / scale;
        worst = e > worst || e != e ? e : worst;
    }
    return worst;
}

#define GUARD 16

/* work of `need` elements NaN-filled, GUARD guard values after it */
static float *work32(int64_t need)
{
    float *p = malloc(sizeof(float) * (size_t)(need + GUARD));
    for (int64_t i = 0; i < need; i++)
        p[i] = NAN;
    for (int i = 0; i < GUARD; i++)
        p[need + i] = 12345.0f;
    return p;
}

static int guard32_ok(const float *p, int64_t need)
{
    for (int i = 0; i < GUARD; i++)
        if (p[need + i] != 12345.0f)
            return 0;
    return 1;
}

static void gen_case(unsigned *seed, int64_t N, nnc_conv2d_geom g)
{
    const int64_t OH = nnc_conv2d_geom_oh(&g), OW = nnc_conv2d_geom_ow(&g), X = N * g.C * g.H * g.W,
                  Y = N * g.F * OH * OW, K = g.F * (g.C / g.groups) * g.KH * g.KW;
    double *x = malloc(sizeof(double) * (size_t)X), *w = malloc(sizeof(double) * (size_t)K),
           *b = malloc(sizeof(double) * (size_t)g.F), *dy = malloc(sizeof(double) * (size_t)Y),
           *add = malloc(sizeof(double) * (size_t)X), *y = malloc(sizeof(double) * (size_t)Y),
           *dx = malloc(sizeof(double) * (size_t)X), *dw = malloc(sizeof(double) * (size_t)K);
    float *xf = malloc(sizeof(float) * (size_t)X), *wf = malloc(sizeof(float) * (size_t)K),
          *bf = malloc(sizeof(float) * (size_t)g.F), *dyf = malloc(sizeof(float) * (size_t)Y),
          *addf = malloc(sizeof(float) * (size_t)X), *yf = work32(Y), *dxf = work32(X), *dwf = work32(K),
          *dw1 = malloc(sizeof(float) * (size_t)K);
    /* float values, so that one reference serves both precisions */
#define FILL(a, af, n) \
    for (int64_t i = 0; i < (n); i++) \
    (a)[i] = (double)((af)[i] = (float)urand(seed))
    FILL(x, xf, X);
    FILL(w, wf, K);
    FILL(b, bf, g.F);
    FILL(dy, dyf, Y);
    FILL(add, addf, X);
    ref(N, &g, x, w, b, dy, add, y, dx, dw);

    const int64_t need = nnc_conv2d_gen_work(&g), fneed = 3 * nnc_conv2d_gen_filter_item_work(&g);
    char what[160];
    snprintf(what, sizeof what, "N %lld C %lld %lldx%lld F %lld k %lldx%lld s %lldx%lld p %lldx%lld d %lldx%lld g %lld",
             (long long)N, (long long)g.C, (long long)g.H, (long long)g.W, (long long)g.F, (long long)g.KH,
             (long long)g.KW, (long long)g.sh, (long long)g.sw, (long long)g.ph, (long long)g.pw, (long long)g.dh,
             (long long)g.dw, (long long)g.groups);
    for (int t = 1; t <= 3; t += 2) {
        nnc_set_threads(t);
        /* room for 3 threads' columns (and below, their partial sums) */
        float *wk = work32(fneed), *wk1 = work32(3 * need);
        nnc_conv2d_gen_f32(N, xf, wf, yf, &g, bf, 1, wk1, 3 * need);
        CHECKF(rel_err(y, yf, NULL, Y) <= 1e-5, "%s: forward, rel err %g", what, rel_err(y, yf, NULL, Y));
        CHECKF(guard32_ok(yf, Y), "%s: forward wrote past y", what);
        nnc_conv2d_gen_bwd_data_f32(N, dyf, wf, dxf, addf, &g, wk1, 3 * need);
        CHECKF(guard32_ok(wk1, 3 * need), "%s: forward or data wrote past its work", what);
        CHECKF(rel_err(dx, dxf, NULL, X) <= 1e-5, "%s: data, rel err %g", what, rel_err(dx, dxf, NULL, X));
        CHECKF(guard32_ok(dxf, X), "%s: data wrote past dx", what);
        free(wk1);
        nnc_conv2d_gen_bwd_filter_f32(N, dyf, xf, dwf, &g, wk, fneed);
        CHECKF(guard32_ok(wk, fneed), "%s: filter wrote past its work", what);
        CHECKF(guard32_ok(dwf, K), "%s: filter wrote past dw", what);
        CHECKF(rel_err(dw, dwf, NULL, K) <= 1e-5, "%s: filter (%d threads), rel err %g", what, t,
               rel_err(dw, dwf, NULL, K));
        if (t == 1)
            memcpy(dw1, dwf, sizeof(float) * (size_t)K);
        else
            CHECKF(memcmp(dw1, dwf, sizeof(float) * (size_t)K) == 0, "%s: filter differs at 1 and 3 threads", what);
        free(wk);
    }
    /* double, one thread's work */
    double *wd = malloc(sizeof(double) * (size_t)(nnc_conv2d_gen_filter_item_work(&g) + 1)),
           *o = malloc(sizeof(double) * (size_t)(X > Y ? (X > K ? X : K) : (Y > K ? Y : K)));
    nnc_set_threads(1);
    nnc_conv2d_gen_f64(N, x, w, o, &g, b, 1, wd, need);
    CHECKF(rel_err(y, NULL, o, Y) <= 1e-12, "%s: f64 forward", what);
    nnc_conv2d_gen_bwd_data_f64(N, dy, w, o, add, &g, wd, need);
    CHECKF(rel_err(dx, NULL, o, X) <= 1e-12, "%s: f64 data", what);
    nnc_conv2d_gen_bwd_filter_f64(N, dy, x, o, &g, wd, need);
    CHECKF(rel_err(dw, NULL, o, K) <= 1e-12, "%s: f64 filter", what);
    free(wd), free(o);
    free(x), free(w), free(b), free(dy), free(add), free(y), free(dx), free(dw);
    free(xf), free(wf), free(bf), free(dyf), free(addf), free(yf), free(dxf), free(dwf), free(dw1);
}

int main(void)
{
    if (isa_skip("test_conv_gen"))
        return ISA_SKIP;
    unsigned seed = 7;
    /* C, H, W, F, KH, KW, sh, sw, ph, pw, dh, dw, groups */
    gen_case(&seed, 5, (nnc_conv2d_geom){6, 9, 7, 6, 3, 3, 1, 1, 2, 2, 2, 2, 3});   /* groups, dilation */
    gen_case(&seed, 4, (nnc_conv2d_geom){12, 11, 8, 6, 3, 2, 2, 1, 1, 0, 1, 1, 3}); /* rectangular */
    gen_case(&seed, 3, (nnc_conv2d_geom){6, 7, 10, 12, 3, 3, 2, 2, 1, 1, 1, 1, 6}); /* depthwise x2 */
    gen_case(&seed, 6, (nnc_conv2d_geom){5, 8, 8, 5, 5, 3, 1, 2, 2, 1, 1, 3, 5});   /* depthwise, dilated */
    gen_case(&seed, 20, (nnc_conv2d_geom){4, 1, 13, 6, 1, 3, 1, 2, 0, 2, 1, 2, 2}); /* conv1d-like, many items */
    /* Conv1D's layers (H = 1, padding along W only): 128 samples padded
     * by 2, at stride 1 and 2 (a 1-D CNN's), 7 taps on 9 channels, and
     * lengths off the vector (100, 37, 64) */
    gen_case(&seed, 3, (nnc_conv2d_geom){8, 1, 128, 12, 1, 5, 1, 1, 0, 2, 1, 1, 1});
    gen_case(&seed, 3, (nnc_conv2d_geom){8, 1, 128, 12, 1, 5, 1, 2, 0, 2, 1, 1, 1});
    gen_case(&seed, 2, (nnc_conv2d_geom){9, 1, 100, 10, 1, 7, 1, 1, 0, 3, 1, 1, 1});
    gen_case(&seed, 2, (nnc_conv2d_geom){5, 1, 37, 7, 1, 3, 1, 2, 0, 1, 1, 1, 1});
    gen_case(&seed, 2, (nnc_conv2d_geom){6, 1, 64, 6, 1, 3, 1, 1, 0, 1, 1, 1, 1});
    /* under 64 outputs, which the direct kernel takes at AVX-512 from 16
     * (nnc_conv1d_short): 50 (a speech CNN's after its pool), 16 exactly,
     * 15 (the columns), and 20 of 5 taps */
    gen_case(&seed, 2, (nnc_conv2d_geom){12, 1, 50, 20, 1, 3, 1, 1, 0, 1, 1, 1, 1});
    gen_case(&seed, 2, (nnc_conv2d_geom){7, 1, 16, 9, 1, 3, 1, 1, 0, 1, 1, 1, 1});
    gen_case(&seed, 2, (nnc_conv2d_geom){7, 1, 15, 9, 1, 3, 1, 1, 0, 1, 1, 1, 1});
    gen_case(&seed, 2, (nnc_conv2d_geom){10, 1, 20, 17, 1, 5, 1, 1, 0, 2, 1, 1, 1});
    /* depthwise by phase-split rows: stride 2 and 3 (odd widths, each
     * phase's run), rows of 8 and 16 outputs and over (the kernel
     * gradient's blocks of 8 and tails), 7x7 with padding 3, a channel
     * multiplier with stride, rectangular strides and dilation */
    gen_case(&seed, 3, (nnc_conv2d_geom){8, 32, 32, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8});
    gen_case(&seed, 2, (nnc_conv2d_geom){6, 33, 31, 6, 3, 3, 2, 2, 1, 1, 1, 1, 6});
    gen_case(&seed, 2, (nnc_conv2d_geom){5, 20, 23, 10, 3, 3, 3, 3, 1, 1, 1, 1, 5});
    gen_case(&seed, 2, (nnc_conv2d_geom){4, 14, 14, 4, 7, 7, 1, 1, 3, 3, 1, 1, 4});
    gen_case(&seed, 3, (nnc_conv2d_geom){3, 17, 19, 6, 3, 5, 2, 1, 1, 2, 2, 1, 3});
    gen_case(&seed, 2, (nnc_conv2d_geom){4, 9, 40, 4, 5, 3, 1, 2, 2, 3, 1, 3, 4});
    /* the vector code's stride-2 copies (even and odd first columns, runs
     * over 2 vectors), its data gradient's dy margins at stride and
     * dilation, and a 9x9 kernel and 5x4 strides, past its tables (the
     * loops) */
    gen_case(&seed, 2, (nnc_conv2d_geom){4, 16, 34, 8, 3, 3, 2, 2, 0, 0, 1, 1, 4});
    gen_case(&seed, 2, (nnc_conv2d_geom){3, 15, 37, 3, 3, 3, 2, 2, 2, 2, 2, 2, 3});
    gen_case(&seed, 2, (nnc_conv2d_geom){2, 12, 13, 2, 9, 9, 1, 1, 4, 4, 1, 1, 2});
    gen_case(&seed, 2, (nnc_conv2d_geom){2, 20, 22, 2, 3, 3, 5, 4, 1, 1, 1, 1, 2}); /* 20 stride classes */
    gen_case(&seed, 2, (nnc_conv2d_geom){3, 5, 5, 4, 2, 2, 3, 3, 0, 0, 2, 2, 1});   /* dilation alone */
    gen_case(&seed, 0, (nnc_conv2d_geom){4, 5, 5, 4, 3, 3, 1, 1, 1, 2, 1, 1, 2});   /* no examples */
    return check_summary("test_conv_gen");
}
