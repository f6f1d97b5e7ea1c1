/* test_init.c — initializers follow PyTorch's fan conventions and scales.
 *
 * Fans are checked on hand-worked shapes here (and against PyTorch itself
 * in check_fans.py); each initializer is checked for its bound or standard
 * deviation on a large tensor, for determinism per seed, and for filling
 * exactly product(shape) values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nnc_runtime.h"

static void stats(const float *x, size_t n, double *mean, double *sd, double *amax)
{
    double s = 0, ss = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
        ss += (double)x[i] * x[i];
        if (fabs(x[i]) > m)
            m = fabs(x[i]);
    }
    *mean = s / (double)n;
    *sd = sqrt(ss / (double)n - *mean * *mean);
    *amax = m;
}

int main(void)
{
    double fi, fo;
    /* 1-D (and 0-D): the element count for both, as the language spec says. */
    nnc_fans(1, (const int[]){7}, &fi, &fo);
    CHECK(fi == 7 && fo == 7);
    nnc_fans(0, (const int[]){0}, &fi, &fo);
    CHECK(fi == 1 && fo == 1);
    /* 2-D Dense weight [out, in]. */
    nnc_fans(2, (const int[]){128, 64}, &fi, &fo);
    CHECK(fi == 64 && fo == 128);
    /* 4-D conv weight [out, in, kh, kw]: receptive field kh*kw. */
    nnc_fans(4, (const int[]){16, 3, 5, 5}, &fi, &fo);
    CHECK(fi == 75 && fo == 400);
    /* 3-D. */
    nnc_fans(3, (const int[]){4, 6, 2}, &fi, &fo);
    CHECK(fi == 12 && fo == 8);

    const int shape[2] = {256, 512}; /* fan_in 512, fan_out 256 */
    const size_t n = 256 * 512;
    float *x = malloc(n * sizeof *x);
    float *y = malloc(n * sizeof *y);
    double mean, sd, amax;
    nnc_rng r;

    struct {
        nnc_init_kind kind;
        int uniform;
        double scale; /* bound for uniform, std for normal */
    } cases[] = {
        {NNC_INIT_GLOROT_UNIFORM, 1, sqrt(6.0 / (512 + 256))},
        {NNC_INIT_GLOROT_NORMAL, 0, sqrt(2.0 / (512 + 256))},
        {NNC_INIT_HE_UNIFORM, 1, sqrt(6.0 / 512)},
        {NNC_INIT_HE_NORMAL, 0, sqrt(2.0 / 512)},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nnc_rng_seed(&r, 100 + c);
        nnc_init_f32(x, 2, shape, cases[c].kind, 0, 0, &r);
        stats(x, n, &mean, &sd, &amax);
        double want_sd = cases[c].uniform ? cases[c].scale / sqrt(3.0) : cases[c].scale;
        CHECKF(fabs(mean) < 0.01 * want_sd * 5, "kind %d mean %g", (int)cases[c].kind, mean);
        CHECKF(fabs(sd / want_sd - 1) < 0.01, "kind %d sd %g want %g", (int)cases[c].kind, sd,
               want_sd);
        if (cases[c].uniform)
            CHECKF(amax <= cases[c].scale * (1 + 1e-6) && amax > 0.999 * cases[c].scale,
                   "kind %d max %g bound %g", (int)cases[c].kind, amax, cases[c].scale);
        else
            CHECKF(amax > 3.5 * want_sd && amax < 7 * want_sd, "kind %d max %g",
                   (int)cases[c].kind, amax);
        /* Same seed, same values. */
        nnc_rng_seed(&r, 100 + c);
        nnc_init_f32(y, 2, shape, cases[c].kind, 0, 0, &r);
        CHECK(memcmp(x, y, n * sizeof *x) == 0);
    }

    /* He on a conv weight uses fan_in = in * kh * kw. */
    {
        const int cs[4] = {64, 32, 3, 3};
        const size_t cn = 64 * 32 * 9;
        nnc_rng_seed(&r, 5);
        nnc_init_f32(x, 4, cs, NNC_INIT_HE_NORMAL, 0, 0, &r);
        stats(x, cn, &mean, &sd, &amax);
        CHECKF(fabs(sd / sqrt(2.0 / (32 * 9)) - 1) < 0.02, "conv he sd %g", sd);
    }

    /* normal(std, mean) and uniform(lo, hi). */
    nnc_rng_seed(&r, 6);
    nnc_init_f32(x, 2, shape, NNC_INIT_NORMAL, 0.5, 3.0, &r);
    stats(x, n, &mean, &sd, &amax);
    CHECKF(fabs(mean - 3.0) < 0.01 && fabs(sd - 0.5) < 0.01, "normal %g %g", mean, sd);
    nnc_init_f32(x, 2, shape, NNC_INIT_UNIFORM, -1.0, 3.0, &r);
    {
        double lo = 1e9, hi = -1e9;
        for (size_t i = 0; i < n; i++) {
            lo = x[i] < lo ? x[i] : lo;
            hi = x[i] > hi ? x[i] : hi;
        }
        stats(x, n, &mean, &sd, &amax);
        CHECK(lo >= -1.0 && hi <= 3.0 && lo < -0.99 && hi > 2.99);
        CHECKF(fabs(mean - 1.0) < 0.02, "uniform mean %g", mean);
    }

    /* Constants fill exactly product(shape) values and draw nothing. */
    for (size_t i = 0; i < n; i++)
        x[i] = -7.0f;
    nnc_rng_seed(&r, 9);
    nnc_rng before = r;
    nnc_init_f32(x, 2, (const int[]){3, 5}, NNC_INIT_ONES, 0, 0, &r);
    CHECK(x[0] == 1.0f && x[14] == 1.0f && x[15] == -7.0f);
    nnc_init_f32(x, 1, (const int[]){4}, NNC_INIT_ZEROS, 0, 0, &r);
    CHECK(x[0] == 0.0f && x[3] == 0.0f && x[4] == 1.0f);
    nnc_init_f32(x, 0, NULL, NNC_INIT_CONSTANT, 2.5, 0, &r);
    CHECK(x[0] == 2.5f && x[1] == 0.0f);
    CHECK(memcmp(&before, &r, sizeof r) == 0);

    /* The f64 variant draws the same stream. */
    {
        double *xd = malloc(1000 * sizeof *xd);
        nnc_rng_seed(&r, 11);
        nnc_init_f64(xd, 1, (const int[]){1000}, NNC_INIT_GLOROT_UNIFORM, 0, 0, &r);
        nnc_rng_seed(&r, 11);
        nnc_init_f32(x, 1, (const int[]){1000}, NNC_INIT_GLOROT_UNIFORM, 0, 0, &r);
        int same = 1;
        for (int i = 0; i < 1000; i++)
            same &= (float)xd[i] == x[i];
        CHECK(same);
        free(xd);
    }
    free(x);
    free(y);
    return check_summary("test_init");
}
