/* test_attn.c — attention's product kernels (runtime/attn.c), causal
 * and full (every row and column, a [T, T] operand with no zeros),
 * against plain double-precision products: T of 1 to 256, inner and
 * outer dims of 1 to 128 (more than one block of 4 column vectors at
 * AVX-512, of 3 at AVX2, and the blocks' tails: N of 8, 16, 24, 40, 56, 80
 * are 1, 2, 3, 5, 7, 10 vectors of 8), T and N that are no multiple of the
 * vector (a partial last vector, loaded and stored masked) or of the
 * 4-row block, an inner dim K of the causal NT product that is no
 * multiple of 8 (its transposition's tail), row pitches wider than the
 * rows, alpha != 1, T K over the stack buffer (the NT kernel's bᵀ in
 * blocks of keys), and a K the NT kernel hands to OpenBLAS.  The
 * lower-triangular operand has garbage (not zeros) nowhere it may be
 * read: its upper triangle is zero, as the causal softmax and its
 * gradient leave it; the output of the causal NT product is checked on
 * and below the diagonal, and the floats after each output row's last
 * read column (pitch padding) must stay untouched.
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

static float *filled(int64_t n, unsigned *seed)
{
    float *p = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        p[i] = (float)urand(seed);
    return p;
}

static int close_to(double got, double want, double scale) { return fabs(got - want) <= 1e-5 * scale + 1e-6; }

/* c = alpha a bᵀ: the lower triangle (causal), or all of it (full) */
static void check_nt(int64_t T, int64_t K, int full, unsigned seed)
{
    const int64_t lda = K + 3, ldb = K + 5, ldc = T + 7;
    const float alpha = 0.37f, guard = 12345.0f;
    float *a = filled(T * lda, &seed), *b = filled(T * ldb, &seed), *c = malloc(sizeof(float) * (size_t)(T * ldc));
    for (int64_t i = 0; i < T * ldc; i++)
        c[i] = guard;
    if (full)
        nnc_matmul_full_nt_f32(T, K, alpha, a, lda, b, ldb, c, ldc);
    else
        nnc_matmul_causal_nt_f32(T, K, alpha, a, lda, b, ldb, c, ldc);
    int bad = 0, touched = 0;
    for (int64_t i = 0; i < T; i++) {
        for (int64_t j = 0; j < (full ? T : i + 1); j++) {
            double s = 0, m = 0;
            for (int64_t k = 0; k < K; k++) {
                s += (double)a[i * lda + k] * b[j * ldb + k];
                m += fabs((double)a[i * lda + k] * b[j * ldb + k]);
            }
            bad += !close_to(c[i * ldc + j], alpha * s, alpha * m);
        }
        for (int64_t j = T; j < ldc; j++)
            touched += c[i * ldc + j] != guard;
    }
    CHECKF(bad == 0, "%s NT T=%lld K=%lld: %d entries wrong", full ? "full" : "causal", (long long)T, (long long)K,
           bad);
    CHECKF(touched == 0, "%s NT T=%lld K=%lld: %d pitch floats written", full ? "full" : "causal", (long long)T,
           (long long)K, touched);
    free(a);
    free(b);
    free(c);
}

/* c = alpha op(a) b with a lower triangular, or (full) any a [T][T];
 * tn: op(a) = aᵀ */
static void check_lower(int64_t T, int64_t N, int tn, int full, unsigned seed)
{
    const int64_t lda = T + 3, ldb = N + 5, ldc = N + 2;
    const float alpha = tn ? 1.0f : -0.5f, guard = 12345.0f;
    float *a = filled(T * lda, &seed), *b = filled(T * ldb, &seed), *c = malloc(sizeof(float) * (size_t)(T * ldc));
    for (int64_t i = 0; i < T && !full; i++)
        for (int64_t j = i + 1; j < T; j++)
            a[i * lda + j] = 0.0f;
    for (int64_t i = 0; i < T * ldc; i++)
        c[i] = guard;
    if (full && tn)
        nnc_matmul_full_tn_f32(T, N, alpha, a, lda, b, ldb, c, ldc);
    else if (full)
        nnc_matmul_full_nn_f32(T, N, alpha, a, lda, b, ldb, c, ldc);
    else if (tn)
        nnc_matmul_lower_tn_f32(T, N, alpha, a, lda, b, ldb, c, ldc);
    else
        nnc_matmul_lower_nn_f32(T, N, alpha, a, lda, b, ldb, c, ldc);
    int bad = 0, touched = 0;
    for (int64_t i = 0; i < T; i++) {
        for (int64_t n = 0; n < N; n++) {
            double s = 0, m = 0;
            for (int64_t j = 0; j < T; j++) {
                const double p = (double)(tn ? a[j * lda + i] : a[i * lda + j]) * b[j * ldb + n];
                s += p;
                m += fabs(p);
            }
            bad += !close_to(c[i * ldc + n], alpha * s, fabs(alpha) * m);
        }
        for (int64_t n = N; n < ldc; n++)
            touched += c[i * ldc + n] != guard;
    }
    CHECKF(bad == 0, "%s %s T=%lld N=%lld: %d entries wrong", full ? "full" : "lower", tn ? "TN" : "NN", (long long)T,
           (long long)N, bad);
    CHECKF(touched == 0, "%s %s T=%lld N=%lld: %d pitch floats written", full ? "full" : "lower", tn ? "TN" : "NN",
           (long long)T, (long long)N, touched);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    if (isa_skip("test_attn"))
        return ISA_SKIP;
    /* T and N of any size: T of 1 to 7 (less than one block of 4 rows),
     * 20, 24, 40 and 50 (no multiple of the vector: the last block of
     * rows, or the last vector of a row, partial), N of 8 to 80 (at
     * AVX-512 8, 24, 40 and 56 end in half a vector) and 1, 5, 13;
     * T K > NNC_CAUSAL_NT_MAX (128 x 80, 256 x 33 and more): the NT
     * kernel's blocks of keys (96 of 128 and then 32 at K = 80, 16 at K =
     * 300); K = 600 > NNC_CAUSAL_NT_MAX / NNC_CAUSAL_NT_KEYS: the full
     * product */
    static const int64_t Ts[] = {1, 3, 5, 7, 16, 20, 24, 32, 40, 48, 50, 64, 96, 128, 256};
    static const int64_t Ks[] = {1, 7, 16, 20, 32, 33, 64, 80, 128, 300, 600};
    static const int64_t Ns[] = {1, 5, 8, 13, 16, 24, 32, 40, 48, 56, 64, 80};
    unsigned seed = 1;
    for (size_t t = 0; t < sizeof Ts / sizeof *Ts; t++) {
        for (int full = 0; full < 2; full++) {
            for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++)
                check_nt(Ts[t], Ks[k], full, seed++);
            for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++) {
                check_lower(Ts[t], Ns[n], 0, full, seed++);
                check_lower(Ts[t], Ns[n], 1, full, seed++);
            }
        }
    }
    return check_summary("test_attn");
}
