/* gemm.c — nnc's own single-precision GEMM, one thread's block.
 *
 * C [M, N] = alpha op(A) op(B) + beta C, row-major.  OpenBLAS picks its
 * kernels by CPU model when it loads, and on a CPU that its version does
 * not know it falls back to old ones: OpenBLAS 0.3.21 (Debian 12) runs
 * its SSE3 "Prescott" kernels on the AVX-512 Xeons of this project's
 * machines, 28 GFLOP/s where the FMAs give 164.  So nnc multiplies its
 * float matrices itself where it has a vector build (nnc_isa.h): by the
 * instruction set the CPU has, whatever BLAS believes.  The generic
 * build calls cblas_sgemm.
 *
 * The method is the usual one (Goto; BLIS): B is packed, per block of KC
 * rows and NC columns, into panels of NR = 2 vectors of columns (zeros
 * past N), and a register block of MR = 6 rows x NR columns accumulates
 * over the KC rows: per k, two vector loads of the panel, six broadcasts
 * of A, twelve FMAs (12 + 2 + 1 registers: all 16 of AVX2).  A is read in
 * place, as it is or transposed (a(r, k) = a[r sr + k sk]).
 *
 * Every output is the same sum in the same order whatever block of C it
 * falls in: k from 0 to K - 1, one FMA per k in its lane, the running sum
 * stored into C between blocks of KC (then alpha C's first block + beta
 * C, or C + alpha block); edge blocks compute whole vectors on the zero
 * padding and store the lanes that exist.  So the threads' blocks of C
 * (threads.c) give the same bits at any thread count.  The work buffers
 * are on the stack (KC x NC floats): the training step allocates nothing.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nnc_isa.h"

#if defined(__AVX512F__)
#define GEMM_VL 16
#elif defined(__AVX2__) && defined(__FMA__)
#define GEMM_VL 8
#endif

#if !defined(GEMM_VL)
void NNC_ISA_FN(nnc_gemm_f32)(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                              const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
                alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}
#else
#include "nnc_transpose.h"

typedef float vf __attribute__((vector_size(4 * GEMM_VL)));
typedef float vfu __attribute__((vector_size(4 * GEMM_VL), aligned(4), may_alias));
enum {
    VL = GEMM_VL,
    MR = 6,
    NR = 2 * GEMM_VL,
    KC = 256,     /* a panel of KC x NR: 16 KB (AVX2), 32 KB (AVX-512), in L1 */
    NC = 8 * NR,  /* the packed block: 64 KB (AVX2), 128 KB (AVX-512) */
    MC = 16 * MR, /* A's rows swept per panel: 96 x KC floats, in L2 */
};

/* B's rows [k0, k0 + kc) and columns [j0, j0 + nc) of op(B) into bp:
 * panel p (columns j0 + p NR ...) is kc rows of NR floats. */
static void pack_b(int tb, const float *b, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t nc, float *bp)
{
    int64_t p0 = 0;
    if (!tb) {
        /* B as it is: the whole panels row by row, so that each row's nc
         * floats are read in one contiguous sweep (a panel at a time read
         * two lines of every row 4 * ldb bytes apart, which the cold B of
         * a kernel gradient, x [K, N] from the forward pass, paid for:
         * mlp_big's step 13.46 / 13.25 -> 13.19 / 13.06 ms, gpt_mini
         * 57.7-58.0 -> 57.2-57.5 at 1 thread on Zen 4); the last, partial
         * panel below */
        p0 = nc / NR;
        for (int64_t k = 0; k < kc; k++) {
            const float *src = b + (k0 + k) * ldb + j0;
            for (int64_t p = 0; p < p0; p++) {
                float *dst = bp + p * kc * NR + k * NR;
                *(vfu *)dst = *(const vfu *)(src + p * NR);
                *(vfu *)(dst + VL) = *(const vfu *)(src + p * NR + VL);
            }
        }
    }
    for (int64_t p = p0; p * NR < nc; p++) {
        float *dst = bp + p * kc * NR;
        const int64_t jn = nc - p * NR < NR ? nc - p * NR : NR, j = j0 + p * NR;
        if (!tb) { /* the partial panel: jn < NR, zeros after */
            for (int64_t k = 0; k < kc; k++) {
                memset(dst + k * NR, 0, sizeof(float) * NR);
                memcpy(dst + k * NR, b + (k0 + k) * ldb + j, sizeof(float) * (size_t)jn);
            }
        } else {
            /* op(B)[k][j] = b[j ldb + k]: column jj of the panel is row j + jj
             * of b, by vector blocks (one value at a time, 128 x 1024 x 784
             * and x 1024 products ran at 104 GFLOP/s at best, by blocks 132) */
            if (jn < NR)
                memset(dst, 0, sizeof(float) * (size_t)(kc * NR));
            transpose(dst, NR, b + j * ldb + k0, ldb, jn, kc);
        }
    }
}

/* The register block: t = sum over k < kc of a(r0 + r, k0 + k) bp[k][..],
 * for mr (<= MR) rows; mr is a constant where inlined (tile's switch). */
static inline __attribute__((always_inline)) void block(int mr, const float *a, int64_t sr, int64_t sk, const float *bp,
                                                        int64_t kc, float t[MR][NR])
{
    vf acc[MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++)
        acc[r][0] = acc[r][1] = (vf){0};
    for (int64_t k = 0; k < kc; k++) {
        const vf b0 = *(const vf *)(bp + k * NR), b1 = *(const vf *)(bp + k * NR + VL);
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            const float s = a[r * sr + k * sk];
            acc[r][0] += b0 * s;
            acc[r][1] += b1 * s;
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        *(vfu *)t[r] = acc[r][0];
        *(vfu *)(t[r] + VL) = acc[r][1];
    }
}

static void tile(int mr, const float *a, int64_t sr, int64_t sk, const float *bp, int64_t kc, float t[MR][NR])
{
    switch (mr) {
    case 6: block(6, a, sr, sk, bp, kc, t); break;
    case 5: block(5, a, sr, sk, bp, kc, t); break;
    case 4: block(4, a, sr, sk, bp, kc, t); break;
    case 3: block(3, a, sr, sk, bp, kc, t); break;
    case 2: block(2, a, sr, sk, bp, kc, t); break;
    default: block(1, a, sr, sk, bp, kc, t); break;
    }
}

/* C's block from t: the first block of K sets C (beta 0 reads nothing of
 * it: C may hold NaNs), the later ones add.  One loop for every block, full
 * or edge, with the FMAs written out, so each output rounds alike. */
static void store(float *c, int64_t ldc, float t[MR][NR], int mr, int64_t nr, float alpha, float beta, int first)
{
    for (int r = 0; r < mr; r++) {
        float *cr = c + r * ldc;
        const float *tr = t[r];
        if (!first)
            for (int64_t j = 0; j < nr; j++)
                cr[j] = fmaf(alpha, tr[j], cr[j]);
        else if (beta == 0.0f)
            for (int64_t j = 0; j < nr; j++)
                cr[j] = alpha * tr[j];
        else
            for (int64_t j = 0; j < nr; j++)
                cr[j] = fmaf(beta, cr[j], alpha * tr[j]);
    }
}

void NNC_ISA_FN(nnc_gemm_f32)(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                              const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    /* a(r, k) = a[r sr + k sk] */
    const int64_t sr = ta ? 1 : lda, sk = ta ? lda : 1;
    float bp[KC * NC] __attribute__((aligned(64)));
    float t[MR][NR] __attribute__((aligned(64)));
    for (int64_t j0 = 0; j0 < N; j0 += NC) {
        const int64_t nc = N - j0 < NC ? N - j0 : NC;
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            const int64_t kc = K - k0 < KC ? K - k0 : KC;
            pack_b(tb, b, ldb, k0, kc, j0, nc, bp);
            for (int64_t i0 = 0; i0 < M; i0 += MC) {
                const int64_t i1 = M - i0 < MC ? M : i0 + MC;
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    const int64_t nr = nc - jr < NR ? nc - jr : NR;
                    const float *panel = bp + (jr / NR) * kc * NR;
                    for (int64_t i = i0; i < i1; i += MR) {
                        const int mr = (int)(i1 - i < MR ? i1 - i : MR);
                        /* the next tile's rows of C, for writing: in a
                         * step, C is often a buffer that no core has in
                         * cache, and its lines would otherwise be fetched
                         * at the store, after the tile.  With huge pages
                         * (alloc.c), at 1 thread on Zen 4: gpt_mini's step
                         * 58.3-58.7 -> 57.6-58.1 ms, gpt_h6 63.7-64.2 ->
                         * 63.0-63.5; resnet18 and lenet5 unchanged. */
                        for (int64_t r = i + MR; r < i + 2 * MR && r < i1; r++) {
                            __builtin_prefetch(c + r * ldc + j0 + jr, 1);
                            if (nr > VL)
                                __builtin_prefetch(c + r * ldc + j0 + jr + VL, 1);
                        }
                        tile(mr, a + i * sr + k0 * sk, sr, sk, panel, kc, t);
                        store(c + i * ldc + j0 + jr, ldc, t, mr, nr, alpha, beta, k0 == 0);
                    }
                }
            }
        }
    }
}
#endif
