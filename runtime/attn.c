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
 * block of rows x column vectors in registers.  plan.c marks the
 * products (IrNode.causal on an IR_MATMUL), emit_ops.c calls them for float
 * at any T and head dim (kernel.c; the NT product copies bᵀ to a stack
 * buffer, in blocks of keys where all of it does not fit, up to a head
 * dim of NNC_CAUSAL_NT_MAX / NNC_CAUSAL_NT_KEYS).  Where T or N is no
 * multiple of the vector, the last vector of a row is loaded and stored
 * under a mask, and a T that is no multiple of 4 ends in a block of fewer
 * rows (gpt_t50's T = 50: its products had been full GEMMs, 19.8 -> 18.0
 * ms a step).
 *
 * Vectors are GCC/clang vector extensions: of 16 floats (AVX-512) in the
 * runtime's avx512 build of this file (x86-64-v4, nnc_isa.h), of 8 (AVX2)
 * in its avx2 build (x86-64-v3, with FMA); this file is compiled with
 * -ffp-contract=fast (CMakeLists.txt) so that a * b + acc is one FMA.  The
 * generic build (SSE) calls OpenBLAS's full products.
 *
 * Measured (gcc 12 -O2) on the 2-core AMD EPYC (Zen 4) of the tests,
 * shared with other work (figures +-15 %), against the OpenBLAS full
 * product the avx2 build called before, on one thread as the runtime runs
 * it, with the AVX-512 (Cooperlake) kernels OpenBLAS picks here and with
 * OPENBLAS_CORETYPE=Haswell (its AVX2 ones); us per call, min of 5 x 2:
 *
 *   T x T x K (NT), T x N x T (NN, TN)   AVX2 kernel   OpenBLAS   (Haswell)
 *   NT   32 x  32 x  16                         0.34       0.60      0.76
 *   NT   32 x  32 x 128 (the closest)           2.45       2.74      4.60
 *   NT   64 x  64 x  32 (gpt_mini)              2.17       3.42      4.02
 *   NT  128 x 128 x  64                         13.6       32.7      27.8
 *   NT  256 x 256 x  32                         31.7       67.4      58.4
 *   NN   32 x  16 x  32                         0.28       0.40      0.70
 *   NN   64 x  32 x  64 (gpt_mini)              1.88       3.10      3.97
 *   NN  128 x  64 x 128                         11.9       31.2      25.5
 *   NN  256 x 128 x 256                         93.7      232.1     225.7
 *   TN   64 x  32 x  64 (gpt_mini)              1.49       3.02      3.78
 *   TN  256 x 128 x 256                        133.9      189.1     207.0
 *
 * Every shape of T = 32, 48, 64, 96, 128, 256 and K or N = 16, 24, 32, 48,
 * 64, 128 that the kernels take was faster with them, 1.4x to 3.2x (NT at
 * T = 32, K = 128: 1.1x), so no shape goes back to OpenBLAS by speed; a K
 * over NNC_CAUSAL_NT_MAX / NNC_CAUSAL_NT_KEYS stays OpenBLAS's (the compiler does not call
 * the kernel there).  T = 40 with head dim 128 (AVX-512): NT 3.4 us against
 * 5.6 for OpenBLAS's full product, NN and TN 2.2 against 3.7. */
#include <stdint.h>
#include <string.h>

#include "nnc_isa.h"

/* OpenBLAS's full products, which satisfy the same contracts (the zeros
 * of a are multiplied, all of c is written): in the generic build, whose
 * 16 SSE registers of 4 floats the kernels were not written for (their 4 x
 * 4 blocks of 16-float vectors spilled: 92 us per 64 x 64 x 32 product
 * against 6.7 for OpenBLAS), and for sizes the kernels do not take. */
static void full_nt(int64_t T, int64_t K, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                    float *c, int64_t ldc)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)K, alpha, a, (int)lda, b, (int)ldb, 0.0f,
                c, (int)ldc);
}

#if defined(__AVX512F__)
#define ATTN_VL 16
#elif defined(__AVX2__) && defined(__FMA__)
#define ATTN_VL 8
#endif

#if !defined(ATTN_VL)
/* the generic build: the full products, whatever the triangle (causal,
 * lower: the same contracts, below) */
static void scores(int causal, int64_t T, int64_t K, float alpha, const float *a, int64_t lda, const float *b,
                   int64_t ldb, float *c, int64_t ldc)
{
    (void)causal;
    full_nt(T, K, alpha, a, lda, b, ldb, c, ldc);
}

static void by_rows(int tn, int lower, int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                    int64_t ldb, float *c, int64_t ldc)
{
    (void)lower;
    cblas_sgemm(CblasRowMajor, tn ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)T, (int)N, (int)T, alpha, a, (int)lda,
                b, (int)ldb, 0.0f, c, (int)ldc);
}
#else
#include "nnc_vec.h"

/* A block is MR = 4 rows x up to NVMAX vectors of accumulators, the
 * vectors of b one row of k at a time and one broadcast of a: at AVX-512
 * 4 x 4 (16 + 4 + 1 of the 32 registers), at AVX2 4 x 3 (12 + 3 + 1: all
 * 16; 4 x 2 was 5-10 % slower on most shapes, 8 x 1 20-30 %). */
#if ATTN_VL == 16
#define ATTN_NV 4
#else
#define ATTN_NV 3
#endif
typedef nnc_vf vf; /* (NNC_VL = ATTN_VL) */
typedef nnc_vfu vfu;
enum { VL = ATTN_VL, MR = 4, NVMAX = ATTN_NV, MR_WIDE = 8 };

/* Outputs of at most WIDE_NV vectors a row (head dims up to 32 at
 * AVX-512, 8 at AVX2) take blocks of MR_WIDE = 8 rows: 4 rows of 1 or 2
 * vectors are 4 or 8 accumulators, and the FMA's latency (4 cycles, 2 a
 * cycle) wants 8 or more in flight, with room for the loads.  AVX-512 on
 * Zen 5, 1 thread, 64 or 128 products in turn (a layer's), GFLOP/s, 4
 * rows -> 8 (T x N x T):
 *   TN / NN  64 x 24 x 64   152 -> 176 / 157 -> 181
 *            64 x 16 x 64   138 -> 167 / 144 -> 178
 *            64 x 32 x 64   192 -> 232 / 212 -> 245
 *            96 x 32 x 96   161 -> 227 / 174 -> 242
 *   NT       32 x 32 x 32   126 -> 178 (32 keys: one strip of 2 vectors)
 * (AVX2: TN / NN 64 x 8 x 64 71 -> 88 / 74 -> 96)
 * and the same (+-5 %) at 64 x 48 and 40 x 128.  In vit_tiny's step,
 * whose products read their operands from L3, it is within the noise. */
#if ATTN_VL == 16
#define WIDE_NV 2
#else
#define WIDE_NV 1
#endif

/* c[mr rows from r0][nv vectors from col] = alpha * sum over k in [k0, K)
 * of a(r, k) b[k][col ..], where a(r, k) = a[r sr + k sk]: a as it is
 * (sr = lda, sk = 1) or transposed (sr = 1, sk = lda).  Rows past mr (the
 * last block of a T that is no multiple of MR) read a's last row again
 * and are not stored; `part` (0 < part < VL, a compile-time 0 in the
 * common case) is the lanes of the last vector that lie inside the row,
 * loaded with zeros after them and stored without touching the floats
 * after them (the next row's, or past the end of the matrix).
 * The loops over r and v are unrolled by pragma: gcc 12 at -O2 (the
 * default build, RelWithDebInfo) unrolls none of them by itself and then
 * keeps the accumulators in memory; the avx512 build took 5.2 to 6.8 us
 * per 64 x 64 x 32 causal NT product (three runs) against 1.9 to 2.6
 * unrolled and 3.4 for OpenBLAS.  (At -O3 gcc unrolls them itself.) */
static inline __attribute__((always_inline)) void block(const float *a, int64_t sr, int64_t sk, const float *b,
                                                        int64_t ldb, float *c, int64_t ldc, int64_t r0, int mr,
                                                        int64_t col, int64_t k0, int64_t K, float alpha, int rows,
                                                        int nv, int part)
{
    vf acc[MR_WIDE][NVMAX];
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            acc[r][v] = (vf){0};
    for (int64_t k = k0; k < K; k++) {
        vf bv[NVMAX];
#pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            if (part && v == nv - 1)
                bv[v] = nnc_vload_n(b + k * ldb + col + VL * v, part);
            else
                bv[v] = *(const vfu *)(b + k * ldb + col + VL * v);
#pragma GCC unroll 8
        for (int r = 0; r < rows; r++) {
            const float s = a[(r0 + (r < mr ? r : mr - 1)) * sr + k * sk];
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++)
                acc[r][v] += bv[v] * s;
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++)
        if (r < mr)
#pragma GCC unroll 4
            for (int v = 0; v < nv; v++) {
                float *cp = c + (r0 + r) * ldc + col + VL * v;
                if (part && v == nv - 1)
                    nnc_vstore_n(cp, acc[r][v] * alpha, part);
                else
                    *(vfu *)cp = acc[r][v] * alpha;
            }
}

/* block_R_N: R rows of N whole vectors, as the kernels were before they
 * took any T and N; block_R_N_e: the edge, fewer rows or the last vector
 * partial.  Two signatures: the edge's two more arguments cost the common
 * blocks' calls 2-5 % of a 64 x 64 x 32 product. */
typedef void block_fn(const float *, int64_t, int64_t, const float *, int64_t, float *, int64_t, int64_t, int64_t,
                      int64_t, int64_t, float);
typedef void edge_fn(const float *, int64_t, int64_t, const float *, int64_t, float *, int64_t, int64_t, int, int64_t,
                     int64_t, int64_t, float, int);
#define BLOCK(rows, nv) \
    static void block_##rows##_##nv(const float *a, int64_t sr, int64_t sk, const float *b, int64_t ldb, float *c, \
                                    int64_t ldc, int64_t r0, int64_t col, int64_t k0, int64_t K, float alpha) \
    { \
        block(a, sr, sk, b, ldb, c, ldc, r0, rows, col, k0, K, alpha, rows, nv, 0); \
    } \
    static void block_##rows##_##nv##_e(const float *a, int64_t sr, int64_t sk, const float *b, int64_t ldb, float *c, \
                                        int64_t ldc, int64_t r0, int mr, int64_t col, int64_t k0, int64_t K, \
                                        float alpha, int part) \
    { \
        block(a, sr, sk, b, ldb, c, ldc, r0, mr, col, k0, K, alpha, rows, nv, part); \
    }
BLOCK(4, 1)
BLOCK(4, 2)
BLOCK(4, 3)
BLOCK(8, 1)
#if ATTN_NV == 4
BLOCK(4, 4)
BLOCK(8, 2)
static block_fn *const blocks[NVMAX + 1] = {NULL, block_4_1, block_4_2, block_4_3, block_4_4};
static edge_fn *const edges[NVMAX + 1] = {NULL, block_4_1_e, block_4_2_e, block_4_3_e, block_4_4_e};
static block_fn *const wide_blocks[NVMAX + 1] = {NULL, block_8_1, block_8_2, NULL, NULL};
static edge_fn *const wide_edges[NVMAX + 1] = {NULL, block_8_1_e, block_8_2_e, NULL, NULL};
#else
static block_fn *const blocks[NVMAX + 1] = {NULL, block_4_1, block_4_2, block_4_3};
static edge_fn *const edges[NVMAX + 1] = {NULL, block_4_1_e, block_4_2_e, block_4_3_e};
static block_fn *const wide_blocks[NVMAX + 1] = {NULL, block_8_1, NULL, NULL};
static edge_fn *const wide_edges[NVMAX + 1] = {NULL, block_8_1_e, NULL, NULL};
#endif

/* the rows of a strip, for outputs of n columns */
static inline int strip_rows(int64_t n) { return (n + VL - 1) / VL <= WIDE_NV ? MR_WIDE : MR; }

/* one block of nv vectors from vector v of the strip: `rows` rows (MR or
 * MR_WIDE), mr of them stored, the last vector's lanes `part` (0: whole) */
static inline void run_block(const float *a, int64_t sr, int64_t sk, const float *b, int64_t ldb, float *c, int64_t ldc,
                             int64_t r0, int rows, int mr, int64_t v, int nv, int part, int64_t k0, int64_t K,
                             float alpha)
{
    if (rows == MR_WIDE) {
        if (mr == MR_WIDE && !part)
            wide_blocks[nv](a, sr, sk, b, ldb, c, ldc, r0, VL * v, k0, K, alpha);
        else
            wide_edges[nv](a, sr, sk, b, ldb, c, ldc, r0, mr, VL * v, k0, K, alpha, part);
    } else if (mr == MR && !part)
        blocks[nv](a, sr, sk, b, ldb, c, ldc, r0, VL * v, k0, K, alpha);
    else
        edges[nv](a, sr, sk, b, ldb, c, ldc, r0, mr, VL * v, k0, K, alpha, part);
}

/* the columns [0, n) of rows r0.. (mr of them, in a strip of `rows`) of
 * c, in blocks of NVMAX vectors, the last one partial where n is no
 * multiple of VL; but for a last block of one vector: the 4 accumulators
 * of a 1-vector block wait on the FMA's latency (4 cycles, 2 a cycle want
 * 8), so it and the block before become blocks of 2 and NVMAX - 1 (AVX2,
 * N = 32: 5.3 us for 128 x 32 x 128 against 5.9 as 3 + 1) */
static void row_strip(const float *a, int64_t sr, int64_t sk, const float *b, int64_t ldb, float *c, int64_t ldc,
                      int64_t r0, int rows, int mr, int64_t n, int64_t k0, int64_t K, float alpha)
{
    const int64_t nvec = (n + VL - 1) / VL;
    const int part = (int)(n % VL);
    int64_t v = 0;
    if (nvec > NVMAX && nvec % NVMAX == 1) {
        for (; v < nvec - NVMAX - 1; v += NVMAX)
            run_block(a, sr, sk, b, ldb, c, ldc, r0, rows, mr, v, NVMAX, 0, k0, K, alpha);
        run_block(a, sr, sk, b, ldb, c, ldc, r0, rows, mr, v, 2, 0, k0, K, alpha);
        run_block(a, sr, sk, b, ldb, c, ldc, r0, rows, mr, v + 2, NVMAX - 1, part, k0, K, alpha);
        return;
    }
    for (; v < nvec; v += NVMAX) {
        const int nv = nvec - v < NVMAX ? (int)(nvec - v) : NVMAX;
        run_block(a, sr, sk, b, ldb, c, ldc, r0, rows, mr, v, nv, v + nv == nvec ? part : 0, k0, K, alpha);
    }
}

/* bt[K][Tp] = bᵀ (b: [T][K] of pitch ldb), its columns T..Tp zero, in 8 x
 * 8 tiles of AVX (both builds): the scalar copy made the AVX2 NT product
 * 10-15 % slower (64 x 64 x 64: 5.1 us against 4.4) */
static void transpose(int64_t T, int64_t Tp, int64_t K, const float *b, int64_t ldb, float *bt)
{
    const int64_t T8 = T / 8 * 8;
    int64_t k0 = 0;
    for (; k0 + 8 <= K; k0 += 8)
        for (int64_t j = 0; j < T8; j += 8) {
            __m256 r[8], t[8], s[8];
            for (int q = 0; q < 8; q++)
                r[q] = _mm256_loadu_ps(b + (j + q) * ldb + k0);
            for (int q = 0; q < 8; q += 2) {
                t[q] = _mm256_unpacklo_ps(r[q], r[q + 1]);
                t[q + 1] = _mm256_unpackhi_ps(r[q], r[q + 1]);
            }
            for (int q = 0; q < 8; q += 4) {
                s[q] = _mm256_shuffle_ps(t[q], t[q + 2], 0x44);
                s[q + 1] = _mm256_shuffle_ps(t[q], t[q + 2], 0xEE);
                s[q + 2] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0x44);
                s[q + 3] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0xEE);
            }
            for (int q = 0; q < 4; q++) {
                _mm256_storeu_ps(bt + (k0 + q) * Tp + j, _mm256_permute2f128_ps(s[q], s[q + 4], 0x20));
                _mm256_storeu_ps(bt + (k0 + q + 4) * Tp + j, _mm256_permute2f128_ps(s[q], s[q + 4], 0x31));
            }
        }
    if (T8 < Tp) /* the last columns of the tiles' rows */
        for (int64_t k = 0; k < k0; k++)
            for (int64_t j = T8; j < Tp; j++)
                bt[k * Tp + j] = j < T ? b[j * ldb + k] : 0.0f;
    for (int64_t k = k0; k < K; k++) /* the rows after them */
        for (int64_t j = 0; j < Tp; j++)
            bt[k * Tp + j] = j < T ? b[j * ldb + k] : 0.0f;
}

/* The scores' product by blocks of keys: of the causal triangle (causal
 * 1) or of the whole matrix (0). */
static void scores(int causal, int64_t T, int64_t K, float alpha, const float *a, int64_t lda, const float *b,
                   int64_t ldb, float *c, int64_t ldc)
{
    /* bᵀ goes to the stack in blocks of JB columns (keys), a multiple of
     * NNC_CAUSAL_NT_KEYS, all of T where it fits: [K][JB], so that a row of
     * the output is a run of vectors, the last ones zero-padded.  A longer
     * T takes its columns a block at a time, each for the rows on and
     * below its first column (T = 256, K = 64: 128 keys a block; the scores
     * had been a full product). */
    const int64_t Tp = (T + VL - 1) / VL * VL;
    const int64_t JB =
        Tp * K <= NNC_CAUSAL_NT_MAX ? Tp : NNC_CAUSAL_NT_MAX / K / NNC_CAUSAL_NT_KEYS * NNC_CAUSAL_NT_KEYS;
    if (JB <= 0) {
        full_nt(T, K, alpha, a, lda, b, ldb, c, ldc);
        return;
    }
    float bt[NNC_CAUSAL_NT_MAX];
    for (int64_t j0 = 0; j0 < T; j0 += JB) {
        const int64_t jn = T - j0 < JB ? T - j0 : JB, jp = (jn + VL - 1) / VL * VL;
        transpose(jn, jp, K, b + j0 * ldb, ldb, bt);
        /* causal: rows r0..r0+3 need the columns up to r0 + 3: its
         * vector and those before, but none past T; rows before j0 none
         * of these */
        const int R = strip_rows(jn);
        for (int64_t r0 = causal ? j0 : 0; r0 < T; r0 += R) {
            const int mr = T - r0 < R ? (int)(T - r0) : R;
            int64_t n = causal ? ((r0 + mr - 1) / VL + 1) * VL : j0 + jn;
            n = (n < j0 + jn ? n : j0 + jn) - j0;
            row_strip(a, lda, 1, bt, jp, c + j0, ldc, r0, R, mr, n, 0, K, alpha);
        }
    }
}

/* c[T][N] = alpha op(a) b by blocks of MR rows, op(a) = a or (tn) aᵀ:
 * of any a [T][T] (lower 0), or of a zero above its diagonal (lower 1):
 * then row i of a b sums a[i][j] b[j] over j <= i, rows r0..r0+3 over j <
 * r0 + 4 (the block's shorter rows add zeros), and row j of aᵀ b sums
 * a[i][j] b[i] over i >= j, rows r0..r0+3 over i >= r0 */
static void by_rows(int tn, int lower, int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                    int64_t ldb, float *c, int64_t ldc)
{
    const int R = strip_rows(N);
    for (int64_t r0 = 0; r0 < T; r0 += R) {
        const int mr = T - r0 < R ? (int)(T - r0) : R;
        const int64_t k0 = lower && tn ? r0 : 0, k1 = lower && !tn ? r0 + mr : T;
        row_strip(a, tn ? 1 : lda, tn ? lda : 1, b, ldb, c, ldc, r0, R, mr, N, k0, k1, alpha);
    }
}

#endif

/* The products' entries, in every build (kernels.def, threads.c).
 * Causal attention: the scores on and below the diagonal, and the
 * products with a zero above it. */
void NNC_ISA_FN(nnc_matmul_causal_nt_f32)(int64_t T, int64_t K, float alpha, const float *a, int64_t lda,
                                          const float *b, int64_t ldb, float *c, int64_t ldc)
{
    scores(1, T, K, alpha, a, lda, b, ldb, c, ldc);
}

void NNC_ISA_FN(nnc_matmul_lower_nn_f32)(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                                         int64_t ldb, float *c, int64_t ldc)
{
    by_rows(0, 1, T, N, alpha, a, lda, b, ldb, c, ldc);
}

void NNC_ISA_FN(nnc_matmul_lower_tn_f32)(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                                         int64_t ldb, float *c, int64_t ldc)
{
    by_rows(1, 1, T, N, alpha, a, lda, b, ldb, c, ldc);
}

/* Full (non-causal) attention's products: the same blocks over every row
 * and column, with no packing (nnc_gemm's copy of B was 10 % of a small
 * ViT's step). */
void NNC_ISA_FN(nnc_matmul_full_nt_f32)(int64_t T, int64_t K, float alpha, const float *a, int64_t lda, const float *b,
                                        int64_t ldb, float *c, int64_t ldc)
{
    scores(0, T, K, alpha, a, lda, b, ldb, c, ldc);
}

void NNC_ISA_FN(nnc_matmul_full_nn_f32)(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                                        int64_t ldb, float *c, int64_t ldc)
{
    by_rows(0, 0, T, N, alpha, a, lda, b, ldb, c, ldc);
}

void NNC_ISA_FN(nnc_matmul_full_tn_f32)(int64_t T, int64_t N, float alpha, const float *a, int64_t lda, const float *b,
                                        int64_t ldb, float *c, int64_t ldc)
{
    by_rows(1, 0, T, N, alpha, a, lda, b, ldb, c, ldc);
}
