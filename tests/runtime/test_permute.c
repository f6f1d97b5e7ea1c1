/* test_permute.c — nnc_transpose_f32 (runtime/permute.c) against the
 * plain loop: every R and C from 1 to 40 (whole 16x16 and 8x8 blocks,
 * rows and columns of them left over, fewer than one block), larger
 * matrices of the shapes emit_permute gives it (blocks of 32 rows of a
 * [64, 128] or [100, 78] matrix), and pitches wider than the rows.  Each
 * output must be its input's float bit for bit (the values include -0,
 * infinities and NaNs of several payloads), and the floats of y around
 * the block (the rest of each row of pitch ldy, and a guard after the
 * last) must stay as they were.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "isa_skip.h"
#include "nnc_runtime.h"

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* x[r][c] for r < R, c < C of pitch ldx, into [C][R] of pitch ldy */
static void check(int64_t R, int64_t C, int64_t ldx, int64_t ldy, unsigned seed)
{
    enum { GUARD = 37 };
    const size_t nx = (size_t)(R * ldx), ny = (size_t)(C * ldy) + GUARD;
    float *x = malloc(sizeof(float) * nx), *y = malloc(sizeof(float) * ny);
    for (size_t i = 0; i < nx; i++) {
        seed = seed * 1103515245u + 12345u;
        const uint32_t u = seed >> 5;
        float v;
        switch (u % 23) {
        case 0: v = -0.0f; break;
        case 1: v = INFINITY; break;
        case 2: v = -INFINITY; break;
        case 3: { /* a NaN whose payload must survive the copy */
            const uint32_t nan = 0x7fc00000u | (u >> 9 & 0x3fffffu);
            memcpy(&v, &nan, sizeof v);
            break;
        }
        default: v = (float)(u & 0xffff) / 1024.0f - 32.0f;
        }
        x[i] = v;
    }
    const float sentinel = -1234.5f;
    for (size_t i = 0; i < ny; i++)
        y[i] = sentinel;
    nnc_transpose_f32(R, C, x, ldx, y, ldy);
    int bad = 0, untouched = 1;
    for (int64_t c = 0; c < C; c++)
        for (int64_t r = 0; r < ldy; r++) {
            const float got = y[c * ldy + r];
            if (r < R)
                bad += bits(got) != bits(x[r * ldx + c]);
            else
                untouched &= bits(got) == bits(sentinel);
        }
    for (size_t i = (size_t)(C * ldy); i < ny; i++)
        untouched &= bits(y[i]) == bits(sentinel);
    CHECKF(bad == 0, "R %lld C %lld ldx %lld ldy %lld: %d floats differ", (long long)R, (long long)C, (long long)ldx,
           (long long)ldy, bad);
    CHECKF(untouched, "R %lld C %lld ldx %lld ldy %lld: wrote outside the block", (long long)R, (long long)C,
           (long long)ldx, (long long)ldy);
    free(x);
    free(y);
}

int main(void)
{
    if (isa_skip("test_permute"))
        return ISA_SKIP;
    unsigned seed = 7;
    for (int64_t R = 1; R <= 40; R++)
        for (int64_t C = 1; C <= 40; C++)
            check(R, C, C, R, seed++);
    /* pitches wider than the rows: a block of rows of a larger matrix */
    static const int64_t shapes[][4] = {
        {32, 128, 128, 64}, {32, 78, 78, 100}, {4, 78, 78, 100}, {17, 33, 40, 19},
        {64, 96, 96, 64},   {16, 16, 20, 24},  {8, 8, 9, 13},    {3, 100, 101, 5},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        check(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], seed++);
    /* nothing at all */
    nnc_transpose_f32(0, 5, NULL, 5, NULL, 1);
    nnc_transpose_f32(5, 0, NULL, 1, NULL, 5);
    return check_summary("test_permute");
}
