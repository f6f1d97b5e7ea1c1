/* test_pool.c — max pooling (runtime/pool.c): the 2x2 kernels against a
 * plain loop written from PyTorch's rule: a window's value is its maximum,
 * or NaN if it holds one; its gradient goes to the first maximum in scan
 * order, or to the last NaN.  Bit for bit (a NaN equals any NaN), over
 * widths below one vector of windows, of exactly one, of several and a
 * tail, odd heights and widths (the uncovered row and column must be 0),
 * data full of ties (+0 against -0 too), NaN and infinities, a dy with
 * inf and NaN, and with and without relu's gradient.  dx starts as
 * garbage: every element must be written.  The general kernels (any
 * square window, stride and padding; max and average) against the
 * generated loops' rules, also bit for bit, check_general and
 * check_general_avg below.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nnc_runtime.h"
#include "isa_skip.h"

static unsigned next(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xFFFF;
}

static int same(float a, float b) { return (a != a && b != b) || !memcmp(&a, &b, sizeof a); }

static void check_case(int64_t NC, int64_t H, int64_t W, unsigned seed)
{
    const int64_t OH = H / 2, OW = W / 2, nx = NC * H * W, ny = NC * OH * OW;
    float *x = malloc(sizeof(float) * (size_t)nx), *dy = malloc(sizeof(float) * (size_t)(ny + 1));
    float *y = malloc(sizeof(float) * (size_t)(ny + 1)), *dx = malloc(sizeof(float) * (size_t)nx);
    const float vals[8] = {0.0f, -0.0f, 1.0f, 2.0f, -1.0f, INFINITY, -INFINITY, NAN};
    for (int64_t i = 0; i < nx; i++) {
        const unsigned r = next(&seed) % 64;
        /* mostly few distinct values (ties), sometimes special ones */
        x[i] = r < 48 ? (float)(r % 5) - 2.0f : vals[r % 8];
    }
    for (int64_t i = 0; i < ny; i++) {
        const unsigned r = next(&seed) % 32;
        dy[i] = r == 0 ? NAN : r == 1 ? -INFINITY : (float)next(&seed) / 65536.0f - 0.5f;
    }
    nnc_maxpool2_f32(NC, H, W, x, y);
    int bad = 0;
    for (int64_t bc = 0; bc < NC; bc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                const float *w = x + (bc * H + 2 * oh) * W + 2 * ow;
                const float v[4] = {w[0], w[1], w[W], w[W + 1]};
                float m = v[0];
                for (int k = 1; k < 4; k++)
                    if (v[k] > m || isnan(v[k]))
                        m = v[k];
                const float got = y[(bc * OH + oh) * OW + ow];
                if (!same(got, m) && bad++ < 3)
                    fprintf(stderr, "NC%lld H%lld W%lld (%lld,%lld,%lld): y %g want %g\n", (long long)NC, (long long)H,
                            (long long)W, (long long)bc, (long long)oh, (long long)ow, got, m);
            }
    CHECKF(!bad, "forward: %d windows differ", bad);
    for (int relu = 0; relu < 2; relu++) {
        memset(dx, 0x7F, sizeof(float) * (size_t)nx);
        nnc_maxpool2_bwd_f32(NC, H, W, x, dy, dx, relu);
        bad = 0;
        for (int64_t bc = 0; bc < NC; bc++)
            for (int64_t i = 0; i < H; i++)
                for (int64_t j = 0; j < W; j++) {
                    /* the want: dy where this element is its window's pick */
                    float want = 0.0f;
                    const int64_t oh = i / 2, ow = j / 2;
                    if (oh < OH && ow < OW) {
                        const float *w = x + (bc * H + 2 * oh) * W + 2 * ow;
                        const float v[4] = {w[0], w[1], w[W], w[W + 1]};
                        int best = 0;
                        for (int k = 1; k < 4; k++)
                            if (v[k] > v[best] || isnan(v[k]))
                                best = k;
                        const int k = (int)(i % 2 * 2 + j % 2);
                        if (k == best && (!relu || v[k] > 0.0f))
                            want = dy[(bc * OH + oh) * OW + ow];
                    }
                    const float got = dx[(bc * H + i) * W + j];
                    if (!same(got, want) && bad++ < 3)
                        fprintf(stderr, "NC%lld H%lld W%lld relu %d (%lld,%lld,%lld): dx %g want %g\n", (long long)NC,
                                (long long)H, (long long)W, relu, (long long)bc, (long long)i, (long long)j, got, want);
                }
        CHECKF(!bad, "backward (relu %d): %d elements differ", relu, bad);
    }
    free(x), free(dy), free(y), free(dx);
}

/* The general kernels (nnc_maxpool_f32, _bwd_f32) against the generated
 * loops' rule, window by window: the taps inside the image in scan order,
 * a tap replacing the running maximum where it is greater or NaN; dx adds
 * each output's dy at its pick, in output order (bit for bit: the same
 * sums in the same order).  Widths past one chunk of 256 outputs too. */
static void check_general(int64_t NC, int64_t H, int64_t W, int64_t K, int64_t S, int64_t P, unsigned seed)
{
    const int64_t OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1, nx = NC * H * W, ny = NC * OH * OW;
    float *x = malloc(sizeof(float) * (size_t)nx), *dy = malloc(sizeof(float) * (size_t)ny);
    float *y = malloc(sizeof(float) * (size_t)ny), *dx = malloc(sizeof(float) * (size_t)nx);
    float *want = calloc((size_t)nx, sizeof(float));
    const float vals[8] = {0.0f, -0.0f, 1.0f, 2.0f, -1.0f, INFINITY, -INFINITY, NAN};
    for (int64_t i = 0; i < nx; i++) {
        const unsigned r = next(&seed) % 64;
        x[i] = r < 40 ? (float)(r % 5) - 2.0f : r < 56 ? (float)next(&seed) / 4096.0f : vals[r % 8];
    }
    for (int64_t i = 0; i < ny; i++) {
        const unsigned r = next(&seed) % 32;
        dy[i] = r == 0 ? NAN : r == 1 ? -INFINITY : (float)next(&seed) / 65536.0f - 0.5f;
    }
    nnc_maxpool_f32(NC, H, W, OH, OW, K, S, P, x, y);
    memset(dx, 0x7F, sizeof(float) * (size_t)nx);
    nnc_maxpool_bwd_f32(NC, H, W, OH, OW, K, S, P, x, dy, dx);
    int bad = 0;
    for (int64_t bc = 0; bc < NC; bc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                const int64_t h0 = oh * S - P, w0 = ow * S - P;
                float m = -INFINITY;
                int64_t best = -1;
                for (int64_t ki = 0; ki < K; ki++)
                    for (int64_t kj = 0; kj < K; kj++) {
                        if (h0 + ki < 0 || h0 + ki >= H || w0 + kj < 0 || w0 + kj >= W)
                            continue;
                        const int64_t k = (bc * H + h0 + ki) * W + w0 + kj;
                        if (best < 0)
                            best = k;
                        if (x[k] > m || isnan(x[k]))
                            m = x[k], best = k;
                    }
                const int64_t o = (bc * OH + oh) * OW + ow;
                want[best] += dy[o];
                if (!same(y[o], m) && bad++ < 3)
                    fprintf(stderr, "NC%lld H%lld W%lld K%lld S%lld P%lld (%lld,%lld,%lld): y %g want %g\n",
                            (long long)NC, (long long)H, (long long)W, (long long)K, (long long)S, (long long)P,
                            (long long)bc, (long long)oh, (long long)ow, y[o], m);
            }
    CHECKF(!bad, "general forward K%lld S%lld P%lld H%lld W%lld: %d windows differ", (long long)K, (long long)S,
           (long long)P, (long long)H, (long long)W, bad);
    bad = 0;
    for (int64_t i = 0; i < nx; i++)
        if (!same(dx[i], want[i]) && bad++ < 3)
            fprintf(stderr, "K%lld S%lld P%lld H%lld W%lld element %lld: dx %g want %g\n", (long long)K, (long long)S,
                    (long long)P, (long long)H, (long long)W, (long long)i, dx[i], want[i]);
    CHECKF(!bad, "general backward K%lld S%lld P%lld H%lld W%lld: %d elements differ", (long long)K, (long long)S,
           (long long)P, (long long)H, (long long)W, bad);
    free(x), free(dy), free(y), free(dx), free(want);
}

/* The general average kernels (nnc_avgpool_f32, _bwd_f32) against the
 * generated loops' rule: each window's taps inside the image summed in
 * double in scan order, over K² or (exclude) their count, rounded once;
 * dx adds each output's dy over its count (in float) at each of its taps,
 * in output order.  Bit for bit. */
static void check_general_avg(int64_t NC, int64_t H, int64_t W, int64_t K, int64_t S, int64_t P, int exclude,
                              unsigned seed)
{
    const int64_t OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1, nx = NC * H * W, ny = NC * OH * OW;
    float *x = malloc(sizeof(float) * (size_t)nx), *dy = malloc(sizeof(float) * (size_t)ny);
    float *y = malloc(sizeof(float) * (size_t)ny), *dx = malloc(sizeof(float) * (size_t)nx);
    float *want = calloc((size_t)nx, sizeof(float));
    for (int64_t i = 0; i < nx; i++) { /* sums whose rounding depends on the order, and -0 */
        const unsigned r = next(&seed) % 64;
        x[i] = r == 0 ? -0.0f : r == 1 ? 1e8f : r == 2 ? INFINITY : (float)next(&seed) / 997.0f - 30.0f;
    }
    for (int64_t i = 0; i < ny; i++)
        dy[i] = i % 41 == 0 ? -0.0f : (float)next(&seed) / 65536.0f - 0.5f;
    nnc_avgpool_f32(NC, H, W, OH, OW, K, S, P, exclude, x, y);
    memset(dx, 0x7F, sizeof(float) * (size_t)nx);
    nnc_avgpool_bwd_f32(NC, H, W, OH, OW, K, S, P, exclude, dy, dx);
    int bad = 0;
    for (int64_t bc = 0; bc < NC; bc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                const int64_t h0 = oh * S - P, w0 = ow * S - P, o = (bc * OH + oh) * OW + ow;
                double acc = 0;
                int64_t n = 0;
                for (int64_t ki = 0; ki < K; ki++)
                    for (int64_t kj = 0; kj < K; kj++)
                        if (h0 + ki >= 0 && h0 + ki < H && w0 + kj >= 0 && w0 + kj < W)
                            acc += x[(bc * H + h0 + ki) * W + w0 + kj], n++;
                const int64_t div = exclude ? n : K * K;
                const float m = (float)(acc / (double)div), g = dy[o] / (float)div;
                for (int64_t ki = 0; ki < K; ki++)
                    for (int64_t kj = 0; kj < K; kj++)
                        if (h0 + ki >= 0 && h0 + ki < H && w0 + kj >= 0 && w0 + kj < W)
                            want[(bc * H + h0 + ki) * W + w0 + kj] += g;
                if (!same(y[o], m) && bad++ < 3)
                    fprintf(stderr, "avg K%lld S%lld P%lld ex%d (%lld,%lld,%lld): y %g want %g\n", (long long)K,
                            (long long)S, (long long)P, exclude, (long long)bc, (long long)oh, (long long)ow, y[o], m);
            }
    CHECKF(!bad, "general avg forward K%lld S%lld P%lld H%lld W%lld exclude %d: %d windows differ", (long long)K,
           (long long)S, (long long)P, (long long)H, (long long)W, exclude, bad);
    bad = 0;
    for (int64_t i = 0; i < nx; i++)
        if (!same(dx[i], want[i]) && bad++ < 3)
            fprintf(stderr, "avg K%lld S%lld P%lld ex%d element %lld: dx %g want %g\n", (long long)K, (long long)S,
                    (long long)P, exclude, (long long)i, dx[i], want[i]);
    CHECKF(!bad, "general avg backward K%lld S%lld P%lld H%lld W%lld exclude %d: %d elements differ", (long long)K,
           (long long)S, (long long)P, (long long)H, (long long)W, exclude, bad);
    free(x), free(dy), free(y), free(dx), free(want);
}

int main(void)
{
    if (isa_skip("test_pool"))
        return ISA_SKIP;
    /* (NC, H, W): lenet5's two pools; W of 2, 15, 16, 17 (a vector of 8
     * windows, 16 minus one, ...), 32, 33, 34 (exactly 16 windows, one
     * more), 66 (several vectors and a tail); for AVX2's vectors of 8
     * windows: rows of 1 to 7 (W 2, 3, 8, 9, 10, 12, 15: the part stores
     * of 1, 2 and 4 floats), 8 (16, 17) and a tail (20, 28: the last
     * vector overlaps the one before); odd H; H or W of 1 (no windows at
     * all: dx all 0) */
    static const int64_t cases[][3] = {{384, 28, 28}, {1024, 10, 10}, {3, 2, 2},  {5, 7, 15},  {2, 16, 16},
                                       {4, 9, 17},    {3, 6, 32},     {2, 5, 33}, {2, 4, 34},  {3, 11, 66},
                                       {2, 1, 8},     {2, 8, 1},      {1, 3, 3},  {6, 64, 64}, {3, 4, 8},
                                       {2, 6, 9},     {3, 5, 12},     {2, 4, 20}, {2, 3, 13}};
    unsigned seed = 7;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(cases[i][0], cases[i][1], cases[i][2], seed += 101);
    /* (NC, H, W, K, S, P): ResNet's stem pool (3, 2, 1) on even and odd
     * images, overlapping windows at stride 1 with and without padding,
     * tiles of 3 and 4 (the forward pass), stride 3 with padding, 5x5 at
     * stride 1 (a YOLO pool), rows past one chunk of 256 outputs, images of
     * one row or column, a window as large as the padded image, a 40x40
     * window (chunks of fewer outputs, to fit 40 rows in the buffer) and
     * strides of 300 and 500 (no chunk fits: the per-tap loops) */
    static const int64_t general[][6] = {{6, 48, 48, 3, 2, 1},   {4, 7, 9, 3, 2, 1},       {3, 8, 8, 2, 1, 0},
                                         {3, 9, 13, 3, 1, 1},    {2, 12, 12, 3, 3, 0},     {2, 13, 17, 4, 4, 0},
                                         {3, 10, 11, 3, 3, 1},   {2, 9, 9, 5, 1, 2},       {2, 3, 600, 3, 2, 1},
                                         {1, 2, 530, 3, 1, 1},   {2, 1, 40, 3, 2, 1},      {2, 40, 1, 3, 1, 1},
                                         {2, 3, 3, 5, 1, 2},     {3, 2, 2, 2, 2, 1},       {2, 17, 19, 7, 3, 3},
                                         {1, 45, 300, 40, 1, 0}, {50, 4, 1200, 2, 300, 0}, {20, 9, 2000, 3, 500, 1}};
    for (size_t i = 0; i < sizeof general / sizeof general[0]; i++) {
        check_general(general[i][0], general[i][1], general[i][2], general[i][3], general[i][4], general[i][5],
                      seed += 101);
        for (int ex = 0; ex < 2; ex++)
            check_general_avg(general[i][0], general[i][1], general[i][2], general[i][3], general[i][4], general[i][5],
                              ex, seed += 101);
    }
    return check_summary("test_pool");
}
