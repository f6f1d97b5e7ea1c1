/* test_bn.c — batch norm's channel sums (runtime/bn.c) against plain
 * double-precision loops: rows L of 1 to 1030 (below one vector, whole
 * vectors, vectors and a tail, more than one channel per block), C of 1
 * to 130 (a last block shorter than the others, more than the 64-channel
 * block limit), data with a large mean (the two-pass variance), and the
 * relu mask: a select, so dy of inf or NaN where the mask is 0 (or -0,
 * or NaN) must contribute nothing.  Where the kernels are built per
 * instruction set (NNC_TEST_ISA_VARIANTS), every build the CPU runs must
 * give the same bits (bn.c: the same 16 lanes, summed in the same order,
 * whether in one 16-float vector or two of 8).  The passes of the
 * statistics alone (nnc_bn_moment_f32) give the statistics' bits, and
 * every thread count the same bits (bn_threads_case).
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

/* relative error against the scale of the terms summed */
static int close_to(double got, double want, double scale) { return fabs(got - want) <= 2e-6 * scale + 1e-30; }

#if defined(NNC_TEST_ISA_VARIANTS)
#define BN_VARIANTS(s) \
    void nnc_bn_stats_f32_serial_##s(int64_t, int64_t, int64_t, const float *, double *, int64_t, int64_t); \
    void nnc_bn_grads_f32_serial_##s(int64_t, int64_t, int64_t, const float *, const float *, const float *, \
                                     const float *, double *, int64_t, int64_t);
BN_VARIANTS(generic)
BN_VARIANTS(avx2)
BN_VARIANTS(avx512)

/* each build the CPU has against the generic one, bit for bit, on the
 * channels [1, C) (a range not starting at 0), masked and not; st holds
 * the means the gradients' sums take */
static void same_bits(int64_t N, int64_t C, int64_t L, const float *x, const float *dy, const float *m, const float *st)
{
    typedef void stats_fn(int64_t, int64_t, int64_t, const float *, double *, int64_t, int64_t);
    typedef void grads_fn(int64_t, int64_t, int64_t, const float *, const float *, const float *, const float *,
                          double *, int64_t, int64_t);
    static stats_fn *const stats[3] = {nnc_bn_stats_f32_serial_generic, nnc_bn_stats_f32_serial_avx2,
                                       nnc_bn_stats_f32_serial_avx512};
    static grads_fn *const grads[3] = {nnc_bn_grads_f32_serial_generic, nnc_bn_grads_f32_serial_avx2,
                                       nnc_bn_grads_f32_serial_avx512};
    __builtin_cpu_init();
    const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    const int64_t c0 = 1 < C ? 1 : 0;
    const size_t n3 = (size_t)(3 * (C - c0)), n2 = (size_t)(2 * (C - c0));
    double *p[3], *g[3], *gm[3];
    for (int k = 0; k < 3; k++)
        p[k] = calloc(n3, sizeof(double)), g[k] = calloc(n2, sizeof(double)), gm[k] = calloc(n2, sizeof(double));
    for (int k = 0; k < 1 + v3 + v4; k++) {
        stats[k](N, C, L, x, p[k], c0, C);
        grads[k](N, C, L, dy, x, NULL, st, g[k], c0, C);
        grads[k](N, C, L, dy, x, m, st, gm[k], c0, C);
        CHECKF(!memcmp(p[k], p[0], n3 * sizeof(double)) && !memcmp(g[k], g[0], n2 * sizeof(double)) &&
                   !memcmp(gm[k], gm[0], n2 * sizeof(double)),
               "N%lld C%lld L%lld: build %d's sums differ from the generic build's", (long long)N, (long long)C,
               (long long)L, k);
    }
    for (int k = 0; k < 3; k++)
        free(p[k]), free(g[k]), free(gm[k]);
}
#endif

static void check_case(int64_t N, int64_t C, int64_t L, double offset, unsigned seed)
{
    const int64_t n = N * C * L;
    float *x = calloc((size_t)n, sizeof(float)), *dy = calloc((size_t)n, sizeof(float)),
          *m = calloc((size_t)n, sizeof(float)), *st = malloc(sizeof(float) * (size_t)(2 * C)),
          *g = malloc(sizeof(float) * (size_t)(2 * C)), *gm = malloc(sizeof(float) * (size_t)(2 * C));
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(offset + urand(&seed));
        const double r = urand(&seed);
        /* the mask: positive, 0, -0 or NaN (relu(NaN) is 0 here, but the
         * kernel must treat any non-positive value as "off") */
        m[i] = r > 0 ? (float)r : r > -0.5 ? 0.0f : r > -0.8 ? -0.0f : NAN;
        /* where the mask is off, dy is sometimes inf or NaN */
        const double q = urand(&seed);
        dy[i] = m[i] > 0 || q < 0.6 ? (float)urand(&seed) : q < 0.8 ? INFINITY : NAN;
    }
    nnc_bn_stats_f32(N, C, L, x, st);
    const double eps = 1e-5;
    for (int64_t c = 0; c < C; c++) {
        double s = 0, s2 = 0, sa = 0;
        for (int64_t b = 0; b < N; b++)
            for (int64_t k = 0; k < L; k++)
                s += x[(b * C + c) * L + k], sa += fabs(x[(b * C + c) * L + k]);
        const double mu = s / (double)(N * L);
        for (int64_t b = 0; b < N; b++)
            for (int64_t k = 0; k < L; k++) {
                const double d = x[(b * C + c) * L + k] - mu;
                s2 += d * d;
            }
        const double var = s2 / (double)(N * L);
        CHECKF(close_to(st[c], mu, sa / (double)(N * L)), "N%lld C%lld L%lld c%lld: mean %.9g want %.9g", (long long)N,
               (long long)C, (long long)L, (long long)c, st[c], mu);
        CHECKF(close_to(st[C + c], var, var), "N%lld C%lld L%lld c%lld: var %.9g want %.9g", (long long)N, (long long)C,
               (long long)L, (long long)c, st[C + c], var);
    }
    /* the two passes alone (nnc_bn_stats_global_f32's, between its sums
     * across processes): the same sums in the same order, so the same bits */
    float *mo = malloc(sizeof(float) * (size_t)(2 * C));
    nnc_bn_moment_f32(N, C, L, x, NULL, (double)(N * L), mo);
    nnc_bn_moment_f32(N, C, L, x, st, (double)(N * L), mo + C);
    CHECKF(!memcmp(mo, st, sizeof(float) * (size_t)(2 * C)), "N%lld C%lld L%lld: the moments differ from the stats",
           (long long)N, (long long)C, (long long)L);
    nnc_bn_stats_global_f32(N, N, C, L, x, mo); /* one process: the stats */
    CHECKF(!memcmp(mo, st, sizeof(float) * (size_t)(2 * C)), "N%lld C%lld L%lld: global stats of one process",
           (long long)N, (long long)C, (long long)L);
    free(mo);
    /* the sums, unmasked (dy with inf and NaN excluded: finite copy) and
     * masked */
    float *df = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        df[i] = isfinite(dy[i]) ? dy[i] : 0.5f;
    nnc_bn_grads_f32(N, C, L, df, x, NULL, st, eps, g);
    nnc_bn_grads_f32(N, C, L, dy, x, m, st, eps, gm);
    for (int64_t c = 0; c < C; c++) {
        const double mu = st[c], rstd = 1.0 / sqrt((double)st[C + c] + eps);
        double sx = 0, sd = 0, ax = 0, ad = 0, mx = 0, md = 0, amx = 0, amd = 0;
        for (int64_t b = 0; b < N; b++)
            for (int64_t k = 0; k < L; k++) {
                const int64_t i = (b * C + c) * L + k;
                const double xh = ((double)x[i] - mu) * rstd;
                sx += df[i] * xh, ax += fabs(df[i] * xh);
                sd += df[i], ad += fabs(df[i]);
                if (m[i] > 0) {
                    mx += dy[i] * xh, amx += fabs(dy[i] * xh);
                    md += dy[i], amd += fabs(dy[i]);
                }
            }
        CHECKF(close_to(g[c], sx, ax), "N%lld C%lld L%lld c%lld: sum dy xhat %.9g want %.9g", (long long)N,
               (long long)C, (long long)L, (long long)c, g[c], sx);
        CHECKF(close_to(g[C + c], sd, ad), "N%lld C%lld L%lld c%lld: sum dy %.9g want %.9g", (long long)N, (long long)C,
               (long long)L, (long long)c, g[C + c], sd);
        CHECKF(close_to(gm[c], mx, amx), "N%lld C%lld L%lld c%lld: masked sum dy xhat %.9g want %.9g", (long long)N,
               (long long)C, (long long)L, (long long)c, gm[c], mx);
        CHECKF(close_to(gm[C + c], md, amd), "N%lld C%lld L%lld c%lld: masked sum dy %.9g want %.9g", (long long)N,
               (long long)C, (long long)L, (long long)c, gm[C + c], md);
    }
#if defined(NNC_TEST_ISA_VARIANTS)
    same_bits(N, C, L, x, df, m, st);
#endif
    free(x), free(dy), free(m), free(st), free(g), free(gm), free(df);
}

/* nnc_channel_sum_f32 (a convolution's bias gradient; threads.c, bn.c):
 * each channel's sum against a double loop, and the same bits at 1, 2 and
 * 3 threads (its items are ranges of examples, fixed by the shape).  C
 * of 300 takes two groups of 256 channels; N of 0 gives zeros. */
static void sum_case(int64_t N, int64_t C, int64_t L, unsigned seed)
{
    const size_t nx = (size_t)(N * C * L);
    float *x = malloc(sizeof(float) * (nx ? nx : 1)), *y[3];
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)urand(&seed);
    /* channel 0 starts each row with +-2^40, alternating by example: in
     * double the small terms beside them survive or not depending on how
     * the examples are grouped, so a split that followed the threads would
     * show in the float result */
    for (int64_t n = 0; n < N && L > 1; n++)
        x[n * C * L] = n % 2 ? -0x1p40f : 0x1p40f;
    for (int t = 0; t < 3; t++) {
        y[t] = malloc(sizeof(float) * (size_t)C);
        for (int64_t c = 0; c < C; c++)
            y[t][c] = NAN;
        nnc_set_threads(t + 1);
        nnc_channel_sum_f32(N, C, L, x, y[t]);
    }
    nnc_set_threads(0);
    int ok = 1;
    for (int64_t c = 0; c < C; c++) {
        double want = 0, scale = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t l = 0; l < L; l++)
                want += x[(n * C + c) * L + l], scale += fabs(x[(n * C + c) * L + l]);
        ok &= c == 0 && L > 1 ? isfinite(y[0][c]) : close_to(y[0][c], want, scale);
    }
    CHECKF(ok, "channel sums N%lld C%lld L%lld: against double", (long long)N, (long long)C, (long long)L);
    CHECKF(!memcmp(y[0], y[1], sizeof(float) * (size_t)C) && !memcmp(y[0], y[2], sizeof(float) * (size_t)C),
           "channel sums N%lld C%lld L%lld: bits differ between 1, 2 and 3 threads", (long long)N, (long long)C,
           (long long)L);
    free(x), free(y[0]), free(y[1]), free(y[2]);
}

/* batch norm's statistics and sums at 1, 2 and 3 threads: the same bits
 * (items of examples fixed by the shape, added in item order).  As in
 * sum_case, channel 0's rows start with +-2^40 by example, so that the
 * double sums depend on how the examples are grouped. */
static void bn_threads_case(int64_t N, int64_t C, int64_t L, unsigned seed)
{
    const size_t nx = (size_t)(N * C * L), n2 = (size_t)(2 * C);
    float *x = malloc(sizeof(float) * nx), *dy = malloc(sizeof(float) * nx), *m = malloc(sizeof(float) * nx);
    for (size_t i = 0; i < nx; i++) {
        x[i] = (float)urand(&seed);
        dy[i] = (float)urand(&seed);
        m[i] = (float)urand(&seed);
    }
    for (int64_t n = 0; n < N; n++)
        x[n * C * L] = n % 2 ? -0x1p40f : 0x1p40f;
    float *st[3], *g[3], *gm[3];
    for (int t = 0; t < 3; t++) {
        st[t] = malloc(sizeof(float) * n2), g[t] = malloc(sizeof(float) * n2), gm[t] = malloc(sizeof(float) * n2);
        nnc_set_threads(t + 1);
        nnc_bn_stats_f32(N, C, L, x, st[t]);
        nnc_bn_grads_f32(N, C, L, dy, x, NULL, st[0], 1e-5, g[t]);
        nnc_bn_grads_f32(N, C, L, dy, x, m, st[0], 1e-5, gm[t]);
    }
    nnc_set_threads(0);
    for (int t = 1; t < 3; t++)
        CHECKF(!memcmp(st[t], st[0], sizeof(float) * n2) && !memcmp(g[t], g[0], sizeof(float) * n2) &&
                   !memcmp(gm[t], gm[0], sizeof(float) * n2),
               "batch norm N%lld C%lld L%lld: bits differ between 1 and %d threads", (long long)N, (long long)C,
               (long long)L, t + 1);
    /* channel 0: mean ~0 (the +-2^40 cancel in pairs, an odd N leaves
     * 2^40 / (N L)), variance ~2^80 / L */
    const double v0 = 0x1p80 / (double)L - (N % 2 ? pow(0x1p40 / (double)(N * L), 2) : 0);
    CHECKF(fabs(st[0][C] - v0) <= 1e-3 * v0, "batch norm N%lld C%lld L%lld: channel 0's variance %g want %g",
           (long long)N, (long long)C, (long long)L, st[0][C], v0);
    for (int t = 0; t < 3; t++)
        free(st[t]), free(g[t]), free(gm[t]);
    free(x), free(dy), free(m);
}

int main(void)
{
    if (isa_skip("test_bn"))
        return ISA_SKIP;
    static const int64_t sums[][3] = {{64, 6, 784}, {64, 16, 100}, {3, 300, 5}, {0, 4, 7}, {17, 1, 1}, {9, 3, 33}};
    for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++)
        sum_case(sums[i][0], sums[i][1], sums[i][2], 40u + (unsigned)i);
    static const int64_t shapes[][3] = {
        {4, 3, 1},   {5, 130, 1}, {3, 7, 15},  {2, 5, 16},   {3, 6, 17},   {2, 70, 16},
        {4, 16, 64}, {3, 65, 64}, {2, 9, 100}, {2, 4, 1024}, {2, 3, 1030}, {32, 64, 64},
        {1, 1, 33},  {3, 5, 49},  {2, 3, 169}, {2, 2, 4096}, {4, 24, 784},
    };
    static const int64_t threaded[][3] = {{16, 24, 1024}, {9, 5, 4000}, {3, 300, 100}, {64, 16, 64}};
    for (size_t i = 0; i < sizeof threaded / sizeof threaded[0]; i++)
        bn_threads_case(threaded[i][0], threaded[i][1], threaded[i][2], 60u + (unsigned)i);
    unsigned seed = 7;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        check_case(shapes[i][0], shapes[i][1], shapes[i][2], 0.0, seed++);
        check_case(shapes[i][0], shapes[i][1], shapes[i][2], 300.0, seed++);
    }
    return check_summary("test_bn");
}
