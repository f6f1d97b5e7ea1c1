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
 * place, as it is or transposed (a(r, k) = a[r sr + k sk]), or, transposed
 * where that is slow, copied into panels of MR rows first (plain()).
 *
 * A C of few rows or few columns is computed turned: Cᵀ = op(B)ᵀ op(A)ᵀ,
 * with op(A)ᵀ packed and op(B)ᵀ read in place (turned(), turn_pays()).
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

/* bias[j] added to C's rows r0 .. r0 + mr, columns j0 .. j0 + nr, each
 * after its last store: the one rounding of the generated code's
 * `matmul + bias` after its GEMM, so the same bits (a linear layer's
 * bias, plan.c fold_linear_bias) */
static inline void add_bias(float *c, int64_t ldc, int64_t mr, int64_t nr, const float *bias)
{
    for (int64_t r = 0; r < mr; r++)
        for (int64_t j = 0; j < nr; j++)
            c[r * ldc + j] += bias[j];
}

#if !defined(GEMM_VL)
static void gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                 const float *b, int64_t ldb, float beta, float *c, int64_t ldc, const float *bias)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
                alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    if (bias)
        add_bias(c, ldc, M, N, bias);
}
#else
#include "nnc_transpose.h"

typedef float vf __attribute__((vector_size(4 * GEMM_VL)));
typedef float vfu __attribute__((vector_size(4 * GEMM_VL), aligned(4), may_alias));
enum {
    VL = GEMM_VL,
    MR = 6,
    NR = 2 * GEMM_VL,
    MR1 = 12,     /* rows of the one-vector register block (the turned product) */
    KC = 256,     /* a panel of KC x NR: 16 KB (AVX2), 32 KB (AVX-512), in L1 */
    NC = 8 * NR,  /* the packed block: 64 KB (AVX2), 128 KB (AVX-512) */
    MC = 16 * MR, /* A's rows swept per panel: 96 x KC floats, in L2 */
};

/* B's rows [k0, k0 + kc) and columns [j0, j0 + nc) of op(B) into bp:
 * panel p (columns j0 + p w ...) is kc rows of w floats, w = NR or VL. */
static inline __attribute__((always_inline)) void pack_b(int tb, const float *b, int64_t ldb, int64_t k0, int64_t kc,
                                                         int64_t j0, int64_t nc, int64_t w, float *bp)
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
        p0 = nc / w;
        for (int64_t k = 0; k < kc; k++) {
            const float *src = b + (k0 + k) * ldb + j0;
            for (int64_t p = 0; p < p0; p++)
                for (int64_t v = 0; v < w; v += VL)
                    *(vfu *)(bp + p * kc * w + k * w + v) = *(const vfu *)(src + p * w + v);
        }
    }
    for (int64_t p = p0; p * w < nc; p++) {
        float *dst = bp + p * kc * w;
        const int64_t jn = nc - p * w < w ? nc - p * w : w, j = j0 + p * w;
        if (!tb) { /* the partial panel: jn < w, zeros after */
            for (int64_t k = 0; k < kc; k++) {
                memset(dst + k * w, 0, sizeof(float) * (size_t)w);
                memcpy(dst + k * w, b + (k0 + k) * ldb + j, sizeof(float) * (size_t)jn);
            }
        } else {
            /* op(B)[k][j] = b[j ldb + k]: column jj of the panel is row j + jj
             * of b, by vector blocks (one value at a time, 128 x 1024 x 784
             * and x 1024 products ran at 104 GFLOP/s at best, by blocks 132) */
            if (jn < w)
                memset(dst, 0, sizeof(float) * (size_t)(kc * w));
            transpose(dst, w, b + j * ldb + k0, ldb, jn, kc);
        }
    }
}

/* a * b + c in one rounding, a vector at a time (store()'s fmaf) */
#if GEMM_VL == 16
#define VFMA(a, b, c) ((vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define VSET1(x) ((vf)_mm512_set1_ps(x))
#else
#define VFMA(a, b, c) ((vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define VSET1(x) ((vf)_mm256_set1_ps(x))
#endif

/* A whole tile (MR rows, NR columns) into C straight from its registers,
 * with store()'s operations, vector for vector: the same bits without
 * the round trip through t, which a product of small K paid on every
 * tile (1024 x 256 x 16 with beta 1, an LSTM's kernel gradient a step:
 * the store cost more than the tile's 16 k at AVX2). */
static inline __attribute__((always_inline)) void store_acc(float *c, int64_t ldc, vf acc[MR][2], float alpha,
                                                            float beta, int first, const float *bias)
{
    const vf va = VSET1(alpha), vb = VSET1(beta); /* (not 0 + alpha: -0 would become +0) */
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
        for (int h = 0; h < 2; h++) {
            vfu *cr = (vfu *)(c + r * ldc + h * VL);
            vf v;
            if (!first)
                v = VFMA(va, acc[r][h], *cr);
            else if (beta == 0.0f) {
                v = va * acc[r][h];
                /* rounded here, as the store rounds it: -ffp-contract
                 * would otherwise fuse it with the bias's add below */
                __asm__("" : "+v"(v));
            } else
                v = VFMA(vb, *cr, va * acc[r][h]);
            /* a final tile's bias (add_bias's one rounding after the
             * product's), while C's vectors are still in registers */
            if (bias)
                v += *(const vfu *)(bias + h * VL);
            *cr = v;
        }
}

/* acc = the sums over k < kc of a(r, k) bp[k][..] for mr (<= MR) rows;
 * mr is a constant where inlined */
static inline __attribute__((always_inline)) void accumulate(int mr, const float *a, int64_t sr, int64_t sk,
                                                             const float *bp, int64_t kc, vf acc[MR][2])
{
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
}

/* The register block into t (tile()'s switch) */
static inline __attribute__((always_inline)) void block(int mr, const float *a, int64_t sr, int64_t sk, const float *bp,
                                                        int64_t kc, float *t)
{
    vf acc[MR][2];
    accumulate(mr, a, sr, sk, bp, kc, acc);
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) {
        *(vfu *)(t + r * NR) = acc[r][0];
        *(vfu *)(t + r * NR + VL) = acc[r][1];
    }
}

/* A whole block (MR rows, NR columns of C) */
static inline __attribute__((always_inline)) void block_c(const float *a, int64_t sr, int64_t sk, const float *bp,
                                                          int64_t kc, float *c, int64_t ldc, float alpha, float beta,
                                                          int first, const float *bias)
{
    vf acc[MR][2];
    accumulate(MR, a, sr, sk, bp, kc, acc);
    store_acc(c, ldc, acc, alpha, beta, first, bias);
}

static inline __attribute__((always_inline)) void tile(int mr, const float *a, int64_t sr, int64_t sk, const float *bp,
                                                       int64_t kc, float *t)
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

/* The same with panels of one vector (VL columns): mr <= MR1 rows. */
static inline __attribute__((always_inline)) void block1(int mr, const float *a, int64_t sr, int64_t sk,
                                                         const float *bp, int64_t kc, float *t)
{
    vf acc[MR1];
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        acc[r] = (vf){0};
    for (int64_t k = 0; k < kc; k++) {
        const vf b0 = *(const vf *)(bp + k * VL);
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++)
            acc[r] += b0 * a[r * sr + k * sk];
    }
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++)
        *(vfu *)(t + r * NR) = acc[r];
}

static void tile1(int mr, const float *a, int64_t sr, int64_t sk, const float *bp, int64_t kc, float *t)
{
    switch (mr) {
    case 12: block1(12, a, sr, sk, bp, kc, t); break;
    case 11: block1(11, a, sr, sk, bp, kc, t); break;
    case 10: block1(10, a, sr, sk, bp, kc, t); break;
    case 9: block1(9, a, sr, sk, bp, kc, t); break;
    case 8: block1(8, a, sr, sk, bp, kc, t); break;
    case 7: block1(7, a, sr, sk, bp, kc, t); break;
    case 6: block1(6, a, sr, sk, bp, kc, t); break;
    case 5: block1(5, a, sr, sk, bp, kc, t); break;
    case 4: block1(4, a, sr, sk, bp, kc, t); break;
    case 3: block1(3, a, sr, sk, bp, kc, t); break;
    case 2: block1(2, a, sr, sk, bp, kc, t); break;
    default: block1(1, a, sr, sk, bp, kc, t); break;
    }
}

/* C's block from t: the first block of K sets C (beta 0 reads nothing of
 * it: C may hold NaNs), the later ones add.  One loop for every block, full
 * or edge, with the FMAs written out, so each output rounds alike. */
static inline __attribute__((always_inline)) void store(float *c, int64_t ldc, const float *t, int mr, int64_t nr,
                                                        float alpha, float beta, int first)
{
    for (int r = 0; r < mr; r++) {
        float *cr = c + r * ldc;
        const float *tr = t + r * NR;
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

/* The width w of the panels for m columns: NR or, where that pads less,
 * VL; and m padded to whole panels of it. */
static int64_t panel_width(int64_t m) { return (m + VL - 1) / VL * VL < (m + NR - 1) / NR * NR ? VL : NR; }
static int64_t padded(int64_t m)
{
    const int64_t w = panel_width(m);
    return (m + w - 1) / w * w;
}

/* Whether to take the turned product (turned() below), from the shape
 * alone.  It needs op(A)'s columns of K packed whole into the block
 * buffer, and op(B) small enough to stay in cache (at most GEMM_TURN_MAX
 * floats): it reads op(B) in place, MR1 or MR rows at a time, which a
 * cold 48 x 1024 x 1024 product ran at 81 GFLOP/s against the plain
 * one's 87.  Then the cheaper by a count of lane multiply-adds: the
 * plain product pads N to whole panels and packs all of op(B); the
 * turned one pads M and packs op(A), and moves each output through its
 * buffer once more (twice with beta), after a fixed start.  A packed
 * float costs about GEMM_PACK_T lane FMAs where it is transposed,
 * GEMM_PACK_C where it is copied.  Fitted on Zen 4 at AVX-512 (1 thread,
 * M 1-320, N 10-1024, K 16-1024, every transposition): the products that
 * turn run at 100-110 GFLOP/s where the plain ones ran at 23-97, and of
 * those that stay, none would have gained more than 5% but some of K <= 16.
 * Not where op(B)'s rows are a multiple of 4 KB and a block reads across
 * them (op(B) as it is, or MR1 rows at once): they then fall in one set
 * of L1's 8 ways (AVX-512, 48 x 256 x 1024 with B transposed: 79 against
 * 88 GFLOP/s; AVX2, 48 x 1024 x 256 with B as it is: 86 against 101).
 * At AVX2 one-vector blocks cost more (GEMM_ONE_VEC: 24 x 256 x 256, 75
 * against 85 GFLOP/s).
 * Where AVX-512's FMAs are full width (nnc_isa_fma_narrow() 0: Zen 5,
 * Intel's server cores) a lane FMA costs half as much against the packs
 * and transposes (GEMM_FMA_WIDE), and one-vector blocks are loads bound
 * as at AVX2 (GEMM_ONE_VEC_WIDE).  Swept on Zen 5 (the same 448 shapes,
 * each forced plain and forced turned): the pick was 2.8% slower than the
 * better of the two on average with Zen 4's weights, 1.1% with these;
 * gpt_t50's 800 x 80 x 80 and 240 x 200 x 80 had turned, at 204 and 167
 * GFLOP/s, where plain runs at 248 and 244. */
/* GEMM_TURN_INTEL: on Intel's cores at AVX-512 (nnc_isa_pack_at(): an
 * Ice Lake Xeon), where reading across rows in place is slow, the turned
 * product reads op(B)ᵀ so where B is as it is, and lost wherever B had
 * more than 2 panels of columns (96 x 512 x 512 NN: 73 GFLOP/s turned,
 * 104 plain; 64 x 256 x 1024 TN 80 -> 97); where B is transposed its rows
 * stream, and it won past GEMM_TURN_MAX (64 x 1024 x 1024 NT 82 -> 114,
 * 24 x 1024 x 1024 57 -> 69).  Swept as above, each shape forced either
 * way (1 thread, operands cold): on 232 shapes the pick reached 97.6% of
 * the better of the two on average, 29 shapes under 93%; with these two
 * rules 98.7%, 19; on 239 others (held out) 98.0%, 24 -> 99.0%, 11.  At
 * AVX2 the same rules lost (96.9% -> 96.1%): not there. */
#define GEMM_PACK_T 6.0
#define GEMM_PACK_C 4.0
#define GEMM_TURN_MAX (1 << 18)
#if GEMM_VL == 16
#define GEMM_ONE_VEC 1.0
#define GEMM_FMA_WIDE 0.5
#define GEMM_ONE_VEC_WIDE 1.3
#else
#define GEMM_ONE_VEC 1.3 /* 12 broadcasts a k for 12 FMAs of 8 lanes: loads bound */
#define GEMM_FMA_WIDE 1.0
#define GEMM_ONE_VEC_WIDE GEMM_ONE_VEC
#endif
static int turn_pays(int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t ldb, float beta)
{
    const int64_t mc = M < NC ? M : NC, w = panel_width(mc);
    if (ldb % 1024 == 0 && (w == VL || !tb)) /* rows 4 KB apart: one set of L1's 8 ways */
        return 0;
    int64_t most = GEMM_TURN_MAX;
#if GEMM_VL == 16
    if (nnc_isa_pack_at()) { /* Intel's cores: GEMM_TURN_INTEL */
        if (!tb && N > 2 * NR)
            return 0;
        most = tb ? 4 * GEMM_TURN_MAX : GEMM_TURN_MAX;
    }
#endif
    if (padded(mc) * K > (int64_t)KC * NC || N * K > most)
        return 0;
    const int wide = !nnc_isa_fma_narrow();
    const double fma = wide ? GEMM_FMA_WIDE : 1.0, one_vec = wide ? GEMM_ONE_VEC_WIDE : GEMM_ONE_VEC;
    const int64_t mp = M / NC * NC + padded(M % NC);
    const double np = (double)((N + NR - 1) / NR * NR);
    const double plain = fma * (double)M * np * K + (tb ? GEMM_PACK_T : GEMM_PACK_C) * (double)N * K;
    const double turned = fma * (w == VL ? one_vec : 1.0) * (double)N * mp * K +
        (ta ? GEMM_PACK_C : GEMM_PACK_T) * (double)mp * K + (beta == 0.0f ? 8.0 : 12.0) * (double)M * N + 4096.0;
    return turned < plain;
}

/* The turned product, for a C of few rows (a recurrent layer's steps at
 * batch 16: 16 x 1024 x 256, which the plain one ran at 79 GFLOP/s, its
 * time a third packing all of op(B)), or of few columns (a vocabulary
 * of 65 in panels of 32).  Cᵀ [N, M] = op(B)ᵀ op(A)ᵀ: op(B)ᵀ's rows are
 * read in place, op(A)ᵀ is packed into panels of M's columns, and each
 * block of Cᵀ's rows collects in ct and is transposed into C.  Every
 * output is the same sum as in the plain product (k in order, one FMA
 * per k, the same steps between blocks of KC; a product's two factors
 * commute): the same bits, whichever of the two a block of C takes. */
static __attribute__((noinline)) void turned(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                                             const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                                             float *c, int64_t ldc, float *bp, float *t, const float *bias)
{
    float ct[MC * NC] __attribute__((aligned(64)));
    const int64_t sr = tb ? ldb : 1, sk = tb ? 1 : ldb; /* op(B)ᵀ(r, k) = b[r sr + k sk] */
    for (int64_t j0 = 0; j0 < M; j0 += NC) {
        const int64_t mc = M - j0 < NC ? M - j0 : NC, w = panel_width(mc), mp = padded(mc);
        const int rows = w == VL ? MR1 : MR;
        for (int64_t k0 = 0; k0 < K; k0 += KC) { /* all of K: block k0 at bp + k0 mp */
            const int64_t kc = K - k0 < KC ? K - k0 : KC;
            if (w == VL)
                pack_b(!ta, a, lda, k0, kc, j0, mc, VL, bp + k0 * mp);
            else
                pack_b(!ta, a, lda, k0, kc, j0, mc, NR, bp + k0 * mp);
        }
        for (int64_t i0 = 0; i0 < N; i0 += MC) {
            const int64_t rn = N - i0 < MC ? N - i0 : MC;
            if (beta != 0.0f) /* ct[r][j] = C[j0 + j][i0 + r], for the first block's beta C */
                transpose(ct, mp, c + j0 * ldc + i0, ldc, mc, rn);
            for (int64_t k0 = 0; k0 < K; k0 += KC) {
                const int64_t kc = K - k0 < KC ? K - k0 : KC;
                for (int64_t jr = 0; jr < mc; jr += w) {
                    const int64_t nr = mc - jr < w ? mc - jr : w;
                    const float *panel = bp + k0 * mp + (jr / w) * kc * w;
                    for (int64_t i = 0; i < rn; i += rows) {
                        const int mr = (int)(rn - i < rows ? rn - i : rows);
                        const float *ai = b + (i0 + i) * sr + k0 * sk;
                        if (w == NR && mr == MR && nr == NR) {
                            block_c(ai, sr, sk, panel, kc, ct + i * mp + jr, mp, alpha, beta, k0 == 0, NULL);
                            continue;
                        }
                        if (w == VL)
                            tile1(mr, ai, sr, sk, panel, kc, t);
                        else
                            tile(mr, ai, sr, sk, panel, kc, t);
                        store(ct + i * mp + jr, mp, t, mr, nr, alpha, beta, k0 == 0);
                    }
                }
            }
            transpose(c + j0 * ldc + i0, ldc, ct, mp, rn, mc);
            if (bias) /* (C's rows j0.., columns i0..) */
                add_bias(c + j0 * ldc + i0, ldc, mc, rn, bias + i0);
        }
    }
}

/* The part of B that the next pack_b reads (the block after [k0, k0 +
 * KC) x [j0, j0 + NC): the next KC rows, else the next NC columns from
 * row 0), fetched into L2 a few lines at a time while the current block
 * computes: a cold B (a layer's weights, read once a pass) had its whole
 * latency at each pack (mlp_big's 1024 x 784 weights at batch 128).  The
 * last block fetches the first block of the GEMM expected next
 * (nnc_gemm_hint_, threads.c), its thread's share of the rows. */
typedef struct {
    const float *p;               /* its first row; rows ld floats apart */
    int64_t ld, rows, lines, per; /* rows of `lines` cache lines; lines a register block */
    int64_t r, l;                 /* the next line to fetch */
} next_b;

static void next_b_init(next_b *nb, int tb, const float *b, int64_t ldb, int64_t M, int64_t N, int64_t K, int64_t k0,
                        int64_t j0, int64_t nc, int64_t narrow)
{
    int64_t nk = k0 + KC, nj = j0;
    if (nk >= K) {
        nk = 0;
        nj = j0 + NC;
    }
    *nb = (next_b){b, ldb, 0, 0, 0, 0, 0};
    int64_t parts = 1, part = 0;
    if (nj >= N) {
        const nnc_gemm_hint *h = &nnc_gemm_hint_;
        if (!h->b)
            return;
        b = h->b, ldb = h->ldb, tb = h->tb, N = h->N, K = h->K, nk = 0, nj = 0, part = h->part, parts = h->parts;
    }
    const int64_t kc = K - nk < KC ? K - nk : KC, ncn = N - nj < NC ? N - nj : NC;
    nb->p = tb ? b + nj * ldb + nk : b + nk * ldb + nj; /* op(B)'s block, rows of b */
    nb->ld = ldb;
    nb->rows = tb ? ncn : kc;
    if (parts > 1) {
        const int64_t r0 = nb->rows * part / parts;
        nb->rows = nb->rows * (part + 1) / parts - r0;
        nb->p += r0 * ldb;
    }
    nb->lines = ((tb ? kc : ncn) + 15) / 16;
    /* the register blocks of this block: MR rows, or MR1 in a last
     * one-vector panel of `narrow` columns */
    const int64_t blocks = (M + MR - 1) / MR * ((nc - narrow + NR - 1) / NR) + (narrow ? (M + MR1 - 1) / MR1 : 0);
    nb->per = (nb->rows * nb->lines + blocks - 1) / blocks;
}

static inline void next_b_some(next_b *nb)
{
    for (int64_t q = 0; q < nb->per && nb->r < nb->rows; q++) {
        __builtin_prefetch(nb->p + nb->r * nb->ld + nb->l * 16, 0, 2);
        if (++nb->l == nb->lines) {
            nb->l = 0;
            nb->r++;
        }
    }
}

static void plain(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float beta, float *c, int64_t ldc, const float *bias, float *bp,
                  float *t);

/* Whether to compute Aᵀ B swapped, as Cᵀ = Bᵀ A (swapped() below), from
 * the shape alone: a kernel gradient's product whose C has few rows and
 * more columns (a linear layer of 64 to 128 inputs and more outputs, its
 * K the batch's rows).  The plain product packs op(B), K N floats, for
 * M rows each; swapped, it packs A, K M floats, for N rows each.  1
 * thread, AVX-512, Zen 5, operands cold (8 sets in turn), GFLOP/s plain
 * -> swapped: 64 x 256 x 4096 169 -> 222, 96 x 384 x 2048 184 -> 225, 96 x
 * 128 x 2048 193 -> 212, 128 x 512 x 1024 208 -> 217, 64 x 320 x 128
 * 213 -> 229, 32 x 256 x 1024 220 -> 230; AVX2 64 x 256 x 4096 103 ->
 * 118, 96 x 384 x 2048 110 -> 115.  Not where K is one short block (128
 * x 384 x 64: 230 -> 217) nor for larger C (256 x 1024 x 512: 235 ->
 * 190, its transposes and buffer no longer in cache), nor where B's rows
 * are a multiple of 4 KB apart: the swapped product reads them in place,
 * a line of each of KC rows that fall in one set of L1 (the data
 * gradient of a 1x1 convolution on 32x32 images, 64 x 1024 x 128: 183 ->
 * 142; 64 x 1024 x 2048: 167 -> 134; 64 x 1000 x 256 the same either
 * way).  Nor where the plain product copies A into panels (plain(),
 * nnc_isa_pack_at()): the swapped one reads B in place as its transposed
 * A, which those CPUs do slowly (Ice Lake, 1 thread, AVX-512, GFLOP/s
 * swapped -> plain: 77 x 1000 x 300 53 -> 82, 96 x 384 x 2048 66 -> 102,
 * 96 x 128 x 2048 83 -> 99, 128 x 512 x 1024 and 64 x 320 x 128 within
 * the noise). */
static int swap_pays(int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t ldb, const float *bias)
{
    return ta && !tb && !bias && M >= 16 && M <= 128 && M < N && K >= 128 && ldb % 1024 != 0 && !nnc_isa_pack_at();
}

/* C = alpha Aᵀ B + beta C as Cᵀ = alpha Bᵀ A + beta Cᵀ by the plain
 * product, a block of C's columns (Cᵀ's rows) at a time in ct, C's block
 * transposed into it first where beta reads it and out of it after.  Every
 * output is the same sum as in the plain product of C (k in order, one
 * FMA per k, the same steps between blocks of KC, a product's two
 * factors commuting): the same bits. */
static __attribute__((noinline)) void swapped(int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                                              const float *b, int64_t ldb, float beta, float *c, int64_t ldc, float *bp,
                                              float *t)
{
    float ct[MC * NC] __attribute__((aligned(64)));
    const int64_t cols = MC * NC / M / NR * NR; /* (M <= 128: at least 96) */
    for (int64_t j0 = 0; j0 < N; j0 += cols) {
        const int64_t nc = N - j0 < cols ? N - j0 : cols;
        if (beta != 0.0f) /* ct[j][i] = C[i][j0 + j] */
            transpose(ct, M, c + j0, ldc, M, nc);
        plain(1, 0, nc, M, K, alpha, b + j0, ldb, a, lda, beta, ct, M, NULL, bp, t);
        transpose(c + j0, ldc, ct, M, nc, M);
    }
}

static void gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                 const float *b, int64_t ldb, float beta, float *c, int64_t ldc, const float *bias)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        if (bias)
            add_bias(c, ldc, M, N, bias);
        return;
    }
    float bp[KC * NC] __attribute__((aligned(64)));
    float t[MR1 * NR] __attribute__((aligned(64)));
    if (turn_pays(ta, tb, M, N, K, ldb, beta)) {
        turned(ta, tb, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc, bp, t, bias);
        return;
    }
    if (swap_pays(ta, tb, M, N, K, ldb, bias)) {
        swapped(M, N, K, alpha, a, lda, b, ldb, beta, c, ldc, bp, t);
        return;
    }
    plain(ta, tb, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc, bias, bp, t);
}

/* The product by packed blocks of op(B) (above), C's blocks computed in
 * place. */
static void plain(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float beta, float *c, int64_t ldc, const float *bias, float *bp,
                  float *t)
{
    /* a(r, k) = a[r sr + k sk].  Where A is transposed, a register
     * block reads a line of A for each of its KC k's, 6 of its 16 floats,
     * and those KC lines beside the panel's fill L1.  Such a block of
     * A's rows is copied first, MC x KC at a time, into panels of MR
     * rows (a(r, k) = ap[r / MR AP + k MR + r % MR]), each block's KC x
     * MR floats in one run:
     * - where A's rows are a multiple of 4 KB apart, everywhere: their
     *   lines fall in one set of L1's ways, evicted before the next block
     *   reads them again (on Zen 5, a 4x GELU MLP's projection kernel
     *   gradient, 1024 x 256 x 320 with A transposed, 181 GFLOP/s against
     *   251 at 1000 x 256 x 320);
     * - where nnc_isa_pack_at() (Intel's cores: not AMD's, whose Zen 5
     *   ran such products in place at 251) and the block has 4 panels or
     *   more to share the copy.  On an Ice Lake Xeon, 1 thread, GFLOP/s
     *   in place -> packed: AVX-512 512 x 1000 x 256 72 -> 104, 256 x 512
     *   x 256 83 -> 106, 128 x 512 x 1024 67 -> 102, 1024 x 256 x 320 87
     *   -> 105, 512 x 512 x 64 82 -> 101; AVX2 512 x 1000 x 256 49 -> 79,
     *   80 x 80 x 800 48 -> 55.  With fewer panels the copy cost more than
     *   it gave (AVX-512 80 x 80 x 800 73 -> 68, 200 x 24 x 512 55 ->
     *   43). */
    enum { AP = KC * MR }; /* a panel's floats */
    const int ta_4k = ta && lda % 1024 == 0, ta_any = ta && nnc_isa_pack_at();
    float ap[MC / MR * AP] __attribute__((aligned(64))); /* (96 KB at AVX-512, untouched unless packed) */
    const int64_t sr = ta ? 1 : lda, sk = ta ? lda : 1;
    for (int64_t j0 = 0; j0 < N; j0 += NC) {
        const int64_t nc = N - j0 < NC ? N - j0 : NC;
        const int pack_a = ta_4k || (ta_any && nc >= 4 * NR);
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            const int64_t kc = K - k0 < KC ? K - k0 : KC;
            /* At AVX-512 a last panel of at most VL columns is packed one
             * vector wide and computed in blocks of MR1 rows x one vector,
             * not as two vectors of which one is padding: a Dense head of
             * 10 classes at batch 128 (128 x 10 x 1024) 33 -> 51 GFLOP/s,
             * 320 x 1000 x 256 +2%; the same sums, so the same bits.  (At
             * AVX2, whose one-vector blocks cost more, GEMM_ONE_VEC, it
             * was 2-5% slower.) */
            const int64_t rem = nc % NR, narrow = GEMM_VL == 16 && rem > 0 && rem <= VL ? rem : 0;
            if (nc > narrow)
                pack_b(tb, b, ldb, k0, kc, j0, nc - narrow, NR, bp);
            if (narrow)
                pack_b(tb, b, ldb, k0, kc, j0 + nc - narrow, narrow, VL, bp + (nc - narrow) / NR * kc * NR);
            next_b nb;
            next_b_init(&nb, tb, b, ldb, M, N, K, k0, j0, nc, narrow);
            const int final = bias && k0 + kc == K; /* the last block of K adds the bias */
            for (int64_t i0 = 0; i0 < M; i0 += MC) {
                const int64_t i1 = M - i0 < MC ? M : i0 + MC;
                if (pack_a)
                    for (int64_t k = 0; k < kc; k++) {
                        const float *src = a + (k0 + k) * lda + i0;
                        int64_t r = 0;
                        for (; r + MR <= i1 - i0; r += MR)
                            memcpy(ap + r / MR * AP + k * MR, src + r, MR * sizeof(float));
                        if (r < i1 - i0)
                            memcpy(ap + r / MR * AP + k * MR, src + r, (size_t)(i1 - i0 - r) * sizeof(float));
                    }
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    const int64_t nr = nc - jr < NR ? nc - jr : NR;
                    const float *panel = bp + (jr / NR) * kc * NR;
                    const int one = narrow && jr == nc - narrow; /* the one-vector panel */
                    const int rows = one && !pack_a ? MR1 : MR;
                    for (int64_t i = i0; i < i1; i += rows) {
                        const int mr = (int)(i1 - i < rows ? i1 - i : rows);
                        /* the next tile's rows of C, for writing: in a
                         * step, C is often a buffer that no core has in
                         * cache, and its lines would otherwise be fetched
                         * at the store, after the tile.  With huge pages
                         * (alloc.c), at 1 thread on Zen 4: gpt_mini's step
                         * 58.3-58.7 -> 57.6-58.1 ms, gpt_h6 63.7-64.2 ->
                         * 63.0-63.5; resnet18 and lenet5 unchanged. */
                        for (int64_t r = i + rows; r < i + 2 * rows && r < i1; r++) {
                            __builtin_prefetch(c + r * ldc + j0 + jr, 1);
                            if (nr > VL)
                                __builtin_prefetch(c + r * ldc + j0 + jr + VL, 1);
                        }
                        next_b_some(&nb);
                        /* row i's a(i, k0 + k) = ar[k ask] */
                        const float *ar = pack_a ? ap + (i - i0) / MR * AP : a + i * sr + k0 * sk;
                        const int64_t asr = pack_a ? 1 : sr, ask = pack_a ? MR : sk;
                        if (mr == MR && nr == NR) {
                            block_c(ar, asr, ask, panel, kc, c + i * ldc + j0 + jr, ldc, alpha, beta, k0 == 0,
                                    final ? bias + j0 + jr : NULL);
                            continue;
                        }
                        if (one)
                            tile1(mr, ar, asr, ask, panel, kc, t);
                        else
                            tile(mr, ar, asr, ask, panel, kc, t);
                        store(c + i * ldc + j0 + jr, ldc, t, mr, nr, alpha, beta, k0 == 0);
                        if (final) /* the tile is final, and in L1 */
                            add_bias(c + i * ldc + j0 + jr, ldc, mr, nr, bias + j0 + jr);
                    }
                }
            }
        }
    }
}
#endif

/* The kernels' entries (kernels.def): C = alpha op(A) op(B) + beta C, and
 * the same plus bias[j] in every row (plan.c fold_linear_bias) */
void NNC_ISA_FN(nnc_gemm_f32)(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                              const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    gemm(ta, tb, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc, NULL);
}

void NNC_ISA_FN(nnc_gemm_bias_f32)(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a,
                                   int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc, const float *bias)
{
    gemm(ta, tb, M, N, K, alpha, a, lda, b, ldb, 0.0f, c, ldc, bias);
}
