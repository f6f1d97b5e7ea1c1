/* test_pool.c — 2x2 max pooling at stride 2 (runtime/pool.c) against a
 * plain loop written from PyTorch's rule: a window's value is its maximum,
 * or NaN if it holds one; its gradient goes to the first maximum in scan
 * order, or to the last NaN.  Bit for bit (a NaN equals any NaN), over
 * widths below one vector of windows, of exactly one, of several and a
 * tail, odd heights and widths (the uncovered row and column must be 0),
 * data full of ties (+0 against -0 too), NaN and infinities, a dy with
 * inf and NaN, and with and without relu's gradient.  dx starts as
 * garbage: every element must be written.
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
    return check_summary("test_pool");
}
