/* attn.c — the products of causal attention, by the triangle.
 *
 * In causal attention every [T, T] matrix is lower triangular: the scores
 * S = α Q Kᵀ are read only on and below the diagonal (a causal softmax
 * reads row i's first i + 1 entries), and the probabilities P, like the
 * gradient dS of the scores, are zero above it.  The products with them
 * (S = α Q Kᵀ, O = P V and, backward, dP = dO Vᵀ, dV = Pᵀ dO, dQ = α dS K,
 * dK = α dSᵀ Q) need about half the multiplies of a full GEMM, and they are
 * small (gpt_mini: 64 x 64 x 32, 1,536 calls a step), where a BLAS call
 * also costs its packing: these kernels skip the zero triangle and keep a
 * block of rows x 16-float column vectors in registers.  plan.c marks the
 * products (IrNode.causal on an IR_MATMUL), emit_ops.c calls them for float
 * when the sizes fit (T a multiple of 16, the other dim too or small).
 *
 * Vectors are GCC/clang vector extensions of 16 floats, AVX-512 in the
 * runtime's avx512 build of this file (x86-64-v4, nnc_isa.h); this file is
 * compiled with -ffp-contract=fast (CMakeLists.txt) so that a * b + acc is
 * one FMA. */
#include <stdint.h>
#include <string.h>

#include "nnc_isa.h"

/* OpenBLAS's full products, which satisfy the same contracts (the zeros
 * of a are multiplied, all of c is written): in the builds for other
 * instruction sets than AVX-512, whose 32 registers the kernels' 4 x 4
 * blocks of 16-float accumulators need (at -O2 for SSE they spilled: 92
 * us per 64 x 64 x 32 product against 6.7 for OpenBLAS), and for sizes
 * the kernels do not take. */
static void full_nt(int64_t T, int64_t K, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                    float *c, int64_t ldc)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)K, alpha, a, (int)lda, b, (int)ldb, 0.0f,
                c, (int)ldc);
}

static void full_nn(int ta, int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                    float *c, int64_t ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)T, (int)N, (int)T, alpha, a, (int)lda,
                b, (int)ldb, 0.0f, c, (int)ldc);
}

#if !defined(__AVX512F__)
void NNC_ISA_FN(nnc_matmul_causal_nt_f32)(int64_t T, int64_t K, float alpha, const float *a, int64_t lda,
                                          const float *b, int64_t ldb, float *c, int64_t ldc)
{
    full_nt(T, K, alpha, a, lda, b, ldb, c, ldc);
}

void NNC_ISA_FN(nnc_matmul_lower_nn_f32)(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                                         int64_t ldb, float *c, int64_t ldc)
{
    full_nn(0, T, N, alpha, a, lda, b, ldb, c, ldc);
}

void NNC_ISA_FN(nnc_matmul_lower_tn_f32)(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                                         int64_t ldb, float *c, int64_t ldc)
{
    full_nn(1, T, N, alpha, a, lda, b, ldb, c, ldc);
}
#else

typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4), may_alias));
enum { VL = 16, MR = 4, NVMAX = 4 };

/* c[MR rows from r0][nv vectors from col] = alpha * sum over k in [k0, K)
 * of a(r, k) b[k][col ..], where a(r, k) = a[r sr + k sk]: a as it is
 * (sr = lda, sk = 1) or transposed (sr = 1, sk = lda) */
static inline __attribute__((always_inline)) void block(const float *a, int64_t sr, int64_t sk, const float *b,
                                                        int64_t ldb, float *c, int64_t ldc, int64_t r0, int64_t col,
                                                        int64_t k0, int64_t K, float alpha, int nv)
{
    v16 acc[MR][NVMAX];
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < nv; v++)
            acc[r][v] = (v16){0};
    for (int64_t k = k0; k < K; k++) {
        v16 bv[NVMAX];
        for (int v = 0; v < nv; v++)
            bv[v] = *(const v16u *)(b + k * ldb + col + VL * v);
        for (int r = 0; r < MR; r++) {
            const float s = a[(r0 + r) * sr + k * sk];
            for (int v = 0; v < nv; v++)
                acc[r][v] += bv[v] * s;
        }
    }
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < nv; v++)
            *(v16u *)(c + (r0 + r) * ldc + col + VL * v) = acc[r][v] * alpha;
}

typedef void block_fn(const float *, int64_t, int64_t, const float *, int64_t, float *, int64_t, int64_t, int64_t,
                      int64_t, int64_t, float);
#define BLOCK(nv) \
    static void block##nv(const float *a, int64_t sr, int64_t sk, const float *b, int64_t ldb, float *c, int64_t ldc, \
                          int64_t r0, int64_t col, int64_t k0, int64_t K, float alpha) \
    { \
        block(a, sr, sk, b, ldb, c, ldc, r0, col, k0, K, alpha, nv); \
    }
BLOCK(1)
BLOCK(2)
BLOCK(3)
BLOCK(4)
static block_fn *const blocks[NVMAX + 1] = {NULL, block1, block2, block3, block4};

/* the column vectors [0, nvec) of rows r0.. of c, in blocks of NVMAX */
static void row_strip(const float *a, int64_t sr, int64_t sk, const float *b, int64_t ldb, float *c, int64_t ldc,
                      int64_t r0, int64_t nvec, int64_t k0, int64_t K, float alpha)
{
    for (int64_t v = 0; v < nvec; v += NVMAX)
        blocks[nvec - v < NVMAX ? nvec - v : NVMAX](a, sr, sk, b, ldb, c, ldc, r0, VL * v, k0, K, alpha);
}

void NNC_ISA_FN(nnc_matmul_causal_nt_f32)(int64_t T, int64_t K, float alpha, const float *a, int64_t lda,
                                          const float *b, int64_t ldb, float *c, int64_t ldc)
{
    if (T % VL || T * K > NNC_CAUSAL_NT_MAX) {
        full_nt(T, K, alpha, a, lda, b, ldb, c, ldc);
        return;
    }
    /* bᵀ [K][T], so that a row of the output is a run of vectors */
    float bt[NNC_CAUSAL_NT_MAX];
    for (int64_t j = 0; j < T; j++)
        for (int64_t k = 0; k < K; k++)
            bt[k * T + j] = b[j * ldb + k];
    /* rows r0..r0+3 need the columns up to r0 + 3: its vector and those
     * before */
    for (int64_t r0 = 0; r0 < T; r0 += MR)
        row_strip(a, lda, 1, bt, T, c, ldc, r0, (r0 + MR - 1) / VL + 1, 0, K, alpha);
}

void NNC_ISA_FN(nnc_matmul_lower_nn_f32)(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                                         int64_t ldb, float *c, int64_t ldc)
{
    if (T % VL || N % VL) {
        full_nn(0, T, N, alpha, a, lda, b, ldb, c, ldc);
        return;
    }
    /* row i sums a[i][j] b[j] over j <= i: rows r0..r0+3 over j < r0 + 4
     * (a is zero above the diagonal, so the block's shorter rows add
     * zeros) */
    for (int64_t r0 = 0; r0 < T; r0 += MR)
        row_strip(a, lda, 1, b, ldb, c, ldc, r0, N / VL, 0, r0 + MR, alpha);
}

void NNC_ISA_FN(nnc_matmul_lower_tn_f32)(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                                         int64_t ldb, float *c, int64_t ldc)
{
    if (T % VL || N % VL) {
        full_nn(1, T, N, alpha, a, lda, b, ldb, c, ldc);
        return;
    }
    /* row j of aᵀ b sums a[i][j] b[i] over i >= j: rows r0..r0+3 over
     * i >= r0 */
    for (int64_t r0 = 0; r0 < T; r0 += MR)
        row_strip(a, 1, lda, b, ldb, c, ldc, r0, N / VL, r0, T, alpha);
}
#endif
