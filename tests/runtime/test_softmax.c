/* test_softmax.c — softmax over rows and its gradient (runtime/softmax.c)
 * against double-precision loops: rows of 1 to 300 floats (whole blocks
 * of 16, a part block, fewer than one vector at AVX2 and SSE), causal
 * rows (row r of [T, T] matrices keeps its first r % T + 1 entries; a
 * call that starts at r0 != 0, as the threads' blocks of rows do), alpha
 * != 1, and rows of large, equal, -inf and NaN entries.  The floats after
 * the last row must stay untouched (the part block is stored under a
 * mask).  With the variants built (NNC_TEST_ISA_VARIANTS), each build the
 * CPU runs gives the generic build's bits.
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

/* got within tol of want, or both NaN (a row of -inf: 0 / 0) */
static int agrees(double got, double want, double tol) { return isnan(want) ? isnan(got) : fabs(got - want) <= tol; }

static int64_t row_len(int64_t r, int64_t L, int64_t r0, int causal) { return causal ? (r0 + r) % L + 1 : L; }

#if defined(NNC_TEST_ISA_VARIANTS)
typedef void fwd_fn(int64_t, int64_t, int64_t, int, float, const float *, float *);
typedef void bwd_fn(int64_t, int64_t, int64_t, int, float, const float *, const float *, float *);
#define SM_VARIANTS(s) \
    fwd_fn nnc_softmax_rows_f32_serial_##s; \
    bwd_fn nnc_softmax_rows_bwd_f32_serial_##s;
SM_VARIANTS(generic)
SM_VARIANTS(avx2)
SM_VARIANTS(avx512)

/* each build the CPU has against the generic one, bit for bit */
static void same_bits(int64_t rows, int64_t L, int64_t r0, int causal, float alpha, const float *x, const float *dy,
                      const float *p)
{
    static fwd_fn *const fwd[3] = {nnc_softmax_rows_f32_serial_generic, nnc_softmax_rows_f32_serial_avx2,
                                   nnc_softmax_rows_f32_serial_avx512};
    static bwd_fn *const bwd[3] = {nnc_softmax_rows_bwd_f32_serial_generic, nnc_softmax_rows_bwd_f32_serial_avx2,
                                   nnc_softmax_rows_bwd_f32_serial_avx512};
    static const char *const name[3] = {"generic", "avx2", "avx512"};
    __builtin_cpu_init();
    const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    const size_t bytes = sizeof(float) * (size_t)(rows * L);
    float *y0 = malloc(bytes), *y = malloc(bytes), *g0 = malloc(bytes), *g = malloc(bytes);
    fwd[0](rows, L, r0, causal, alpha, x, y0);
    bwd[0](rows, L, r0, causal, alpha, dy, p, g0);
    for (int v = 1; v < 3; v++) {
        if (!(v == 1 ? v3 : v4))
            continue;
        fwd[v](rows, L, r0, causal, alpha, x, y);
        bwd[v](rows, L, r0, causal, alpha, dy, p, g);
        CHECKF(!memcmp(y, y0, bytes), "softmax L=%lld causal=%d: %s's bits differ from generic's", (long long)L, causal,
               name[v]);
        CHECKF(!memcmp(g, g0, bytes), "softmax gradient L=%lld causal=%d: %s's bits differ from generic's",
               (long long)L, causal, name[v]);
    }
    free(y0), free(y), free(g0), free(g);
}
#endif

/* rows x L, causal or not, from row r0 of the [L, L] matrices; kind 0:
 * uniform in (-4, 4), 1: large (+-80 around 1e4: exp of the maximum's
 * difference only), 2: all equal, 3: -inf in a few entries */
static void check(int64_t rows, int64_t L, int64_t r0, int causal, float alpha, int kind, unsigned seed)
{
    const int64_t n = rows * L, guard = 16;
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)(n + guard));
    float *dy = malloc(sizeof(float) * (size_t)n), *dx = malloc(sizeof(float) * (size_t)(n + guard));
    for (int64_t i = 0; i < n; i++) {
        const double u = urand(&seed);
        x[i] = kind == 2 ? 0.75f : kind == 1 ? (float)(1e4 + 80 * u) : (float)(4 * u);
        if (kind == 3 && i % 7 == 3)
            x[i] = -INFINITY;
        dy[i] = (float)urand(&seed);
    }
    for (int64_t i = 0; i < n + guard; i++)
        y[i] = dx[i] = 12345.0f;
    nnc_softmax_rows_f32(rows, L, r0, causal, alpha, x, y);
    nnc_softmax_rows_bwd_f32(rows, L, r0, causal, alpha, dy, y, dx);
    int bad = 0, badg = 0, zeros = 0, touched = 0;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t len = row_len(r, L, r0, causal);
        const float *xr = x + r * L, *pr = y + r * L, *dr = dy + r * L;
        double mx = -INFINITY, s = 0, dot = 0, mag = 0;
        /* alpha x rounded to float, as the kernel's input: at x ~ 1e4 its
         * rounding alone moves exp by ~1e-4 */
        for (int64_t k = 0; k < len; k++)
            mx = fmax(mx, (float)(alpha * xr[k]));
        for (int64_t k = 0; k < len; k++)
            s += exp((float)(alpha * xr[k]) - mx);
        for (int64_t k = 0; k < len; k++) {
            const double want = exp((float)(alpha * xr[k]) - mx) / s;
            bad += !agrees(pr[k], want, 4e-6 * want + 1e-9);
        }
        /* the gradient of the floats it was given (p = y) */
        for (int64_t k = 0; k < len; k++) {
            dot += (double)dr[k] * pr[k];
            mag += fabs((double)dr[k] * pr[k]);
        }
        for (int64_t k = 0; k < len; k++) {
            const double want = (double)alpha * pr[k] * (dr[k] - dot);
            const double tol = 4e-6 * fabs(alpha) * pr[k] * (fabs(dr[k]) + mag) + 1e-12;
            badg += !agrees(dx[r * L + k], want, tol);
        }
        for (int64_t k = len; k < L; k++)
            zeros += pr[k] != 0.0f || dx[r * L + k] != 0.0f || signbit(pr[k]) || signbit(dx[r * L + k]);
    }
    for (int64_t i = n; i < n + guard; i++)
        touched += y[i] != 12345.0f || dx[i] != 12345.0f;
    CHECKF(bad == 0, "softmax %lld x %lld causal=%d r0=%lld kind %d: %d entries wrong", (long long)rows, (long long)L,
           causal, (long long)r0, kind, bad);
    CHECKF(badg == 0, "softmax gradient %lld x %lld causal=%d r0=%lld kind %d: %d entries wrong", (long long)rows,
           (long long)L, causal, (long long)r0, kind, badg);
    CHECKF(zeros == 0, "softmax %lld x %lld causal: %d entries past a row's length not +0", (long long)rows,
           (long long)L, zeros);
    CHECKF(touched == 0, "softmax %lld x %lld: %d floats after the last row written", (long long)rows, (long long)L,
           touched);
#if defined(NNC_TEST_ISA_VARIANTS)
    same_bits(rows, L, r0, causal, alpha, x, dy, y);
#endif
    free(x), free(y), free(dy), free(dx);
}

/* NaN in a row makes the row NaN (as PyTorch's softmax); a row of -inf
 * too (0 / 0); the other rows are untouched by them */
static void check_nonfinite(void)
{
    enum { L = 21 };
    float x[3 * L], y[3 * L];
    for (int k = 0; k < 3 * L; k++)
        x[k] = (float)(k % 5) * 0.25f;
    x[5] = NAN;
    for (int k = 0; k < L; k++)
        x[2 * L + k] = -INFINITY;
    nnc_softmax_rows_f32(3, L, 0, 0, 1.0f, x, y);
    int nan0 = 0, nan1 = 0, nan2 = 0;
    for (int k = 0; k < L; k++) {
        nan0 += isnan(y[k]) != 0;
        nan1 += isnan(y[L + k]) != 0;
        nan2 += isnan(y[2 * L + k]) != 0;
    }
    CHECKF(nan0 == L, "softmax: a NaN made %d of its row's %d entries NaN", nan0, L);
    CHECKF(nan1 == 0, "softmax: %d entries of a finite row NaN", nan1);
    CHECKF(nan2 == L, "softmax: a row of -inf gave %d NaN of %d", nan2, L);
}

int main(void)
{
    if (isa_skip("test_softmax"))
        return ISA_SKIP;
    static const int64_t Ls[] = {1, 3, 7, 8, 15, 16, 17, 21, 32, 40, 50, 64, 100, 128, 256, 300};
    unsigned seed = 1;
    for (size_t l = 0; l < sizeof Ls / sizeof *Ls; l++) {
        const int64_t L = Ls[l];
        for (int kind = 0; kind < 4; kind++) {
            check(5, L, 0, 0, kind == 0 ? 0.37f : 1.0f, kind, seed++);
            /* causal: all of one [L, L] matrix and a block of rows that
             * starts inside one and ends inside the next */
            check(L, L, 0, 1, 0.1767767f, kind, seed++);
            check(L + 3, L, L / 2 + 1, 1, 1.0f, kind, seed++);
        }
    }
    check_nonfinite();
    return check_summary("test_softmax");
}
