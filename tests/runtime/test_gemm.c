/* test_gemm.c — the float GEMM (runtime/gemm.c, through nnc_cblas_sgemm
 * and the threads' nnc_sgemm) against a double-precision product, at the
 * instruction set that NNC_ISA names (ctest runs it once per set).
 *
 * Shapes: M of 1 to 200 (the 6-row register block, its tails 1..5, more
 * than one 96-row sweep), N of 1 to 300 (the 2-vector panels at AVX2 and
 * AVX-512, their tails, more than one packed block of 8 panels), K of 1 to
 * 600 (one and three blocks of 256); A and B as they are and transposed;
 * row pitches wider than the rows (the floats between must stay as they
 * are); alpha != 1; beta 0 over a C of NaNs (it must read none of them),
 * beta 1 and 0.5.  Then the determinism the threads rely on: the rows of
 * C computed in two calls (rows [0, 7) and [7, M)) equal the one call bit
 * for bit (at AVX2 and AVX-512), and so do its rows one call at a time
 * (the turned product against the plain one), and nnc_sgemm gives the same bits at 1, 2 and 3 threads
 * (and, but for OpenBLAS in the generic build, the one call's).  With
 * beta 0, nnc_sgemm_bias gives the product's bits plus the bias's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gemm_want.h"
#include "isa_skip.h"
#include "nnc_runtime.h"

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xFFFF) / 32768.0 - 1.0;
}

static float *filled(int64_t n, unsigned *seed)
{
    float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        p[i] = (float)urand(seed);
    return p;
}

static void check_one(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, float beta, unsigned seed)
{
    const int64_t pad = 3;
    const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
    const int64_t arows = ta ? K : M, brows = tb ? N : K;
    float *a = filled(arows * lda, &seed), *b = filled(brows * ldb, &seed), *c0 = filled(M * ldc, &seed);
    float *c = malloc(sizeof(float) * (size_t)(M * ldc)), *c2 = malloc(sizeof(float) * (size_t)(M * ldc));
    if (beta == 0.0f) /* read nothing of C */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                c0[i * ldc + j] = NAN;
    memcpy(c, c0, sizeof(float) * (size_t)(M * ldc));
    memcpy(c2, c0, sizeof(float) * (size_t)(M * ldc));
    const CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    nnc_cblas_sgemm(CblasRowMajor, TA, TB, (int)M, (int)N, (int)K, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    int bad = 0;
    for (int64_t i = 0; i < M && !bad; i++) {
        for (int64_t j = 0; j < N && !bad; j++) {
            double want;
            const float got = c[i * ldc + j];
            if (!gemm_near(ta, tb, K, alpha, a, lda, b, ldb, beta, c0[i * ldc + j], i, j, got, &want)) {
                bad = 1;
                CHECKF(0, "ta %d tb %d M %lld N %lld K %lld alpha %g beta %g: c[%lld][%lld] = %.9g, want %.9g", ta, tb,
                       (long long)M, (long long)N, (long long)K, alpha, beta, (long long)i, (long long)j, got, want);
            }
        }
        for (int64_t j = N; j < ldc; j++) /* the pitch's padding stays */
            if (memcmp(&c[i * ldc + j], &c0[i * ldc + j], sizeof(float))) {
                bad = 1;
                CHECKF(0, "M %lld N %lld K %lld: c[%lld][%lld], past the row, was written", (long long)M, (long long)N,
                       (long long)K, (long long)i, (long long)j);
            }
    }
    CHECK(!bad);
    /* rows in two calls: the same bits as one (nnc's own GEMM; the generic
     * build's OpenBLAS promises it for the same call only) */
    if (M > 7 && nnc_isa() != NNC_ISA_GENERIC) {
        nnc_cblas_sgemm(CblasRowMajor, TA, TB, 7, (int)N, (int)K, alpha, a, (int)lda, b, (int)ldb, beta, c2, (int)ldc);
        nnc_cblas_sgemm(CblasRowMajor, TA, TB, (int)M - 7, (int)N, (int)K, alpha, ta ? a + 7 : a + 7 * lda, (int)lda, b,
                        (int)ldb, beta, c2 + 7 * ldc, (int)ldc);
        CHECKF(!memcmp(c, c2, sizeof(float) * (size_t)(M * ldc)), "M %lld N %lld K %lld: rows in two calls differ",
               (long long)M, (long long)N, (long long)K);
    }
    /* one row at a time: the same bits again.  A call of one row never
     * takes gemm.c's turned product (it would pad M to a whole vector),
     * so where the whole call turns, this checks the turned sums against
     * the plain ones bit for bit. */
    if (nnc_isa() != NNC_ISA_GENERIC && M <= 400) {
        memcpy(c2, c0, sizeof(float) * (size_t)(M * ldc));
        for (int64_t i = 0; i < M; i++)
            nnc_cblas_sgemm(CblasRowMajor, TA, TB, 1, (int)N, (int)K, alpha, ta ? a + i : a + i * lda, (int)lda, b,
                            (int)ldb, beta, c2 + i * ldc, (int)ldc);
        CHECKF(!memcmp(c, c2, sizeof(float) * (size_t)(M * ldc)),
               "ta %d tb %d M %lld N %lld K %lld: rows one at a "
               "time differ",
               ta, tb, (long long)M, (long long)N, (long long)K);
    }
    /* the threads' blocks: the same bits at 1, 2 and 3 threads, and with
     * nnc's own GEMM the one call's bits.  OpenBLAS (the generic build)
     * may give a block other bits than the whole product: on one thread
     * 0.3.21 sends small products to its sgemm_direct kernel, which sums in
     * another order (seen on an AMD EPYC: rows 16 of 200 x 100 x 600).
     * There the blocks at 1 thread are the reference, within rounding of
     * the one call. */
    float *ref = nnc_isa() == NNC_ISA_GENERIC ? malloc(sizeof(float) * (size_t)(M * ldc)) : c;
    for (int th = 1; th <= 3; th++) {
        memcpy(c2, c0, sizeof(float) * (size_t)(M * ldc));
        nnc_set_threads(th);
        nnc_sgemm(TA, TB, (int)M, (int)N, (int)K, alpha, a, (int)lda, b, (int)ldb, beta, c2, (int)ldc);
        if (th == 1 && ref != c) {
            int near = 1;
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < ldc; j++) {
                    const float u = c[i * ldc + j], v = c2[i * ldc + j];
                    near &= j < N ? fabsf(u - v) <= 1e-5f * (fabsf(u) + 1) : !memcmp(&u, &v, sizeof u);
                }
            CHECKF(near, "M %lld N %lld K %lld: nnc_sgemm's blocks beyond rounding of the one call", (long long)M,
                   (long long)N, (long long)K);
            memcpy(ref, c2, sizeof(float) * (size_t)(M * ldc));
        }
        CHECKF(!memcmp(ref, c2, sizeof(float) * (size_t)(M * ldc)),
               "M %lld N %lld K %lld: nnc_sgemm at %d threads differs", (long long)M, (long long)N, (long long)K, th);
    }
    if (ref != c)
        free(ref);
    /* with a bias (beta 0): C's product, then bias[j] added to each row
     * once, bit for bit, on one thread and on the threads' blocks, whose
     * bits are nnc_sgemm's (the generic build's OpenBLAS blocks too); the
     * pitch's padding stays */
    if (beta == 0.0f) {
        float *bias = filled(N, &seed), *want = malloc(sizeof(float) * (size_t)(M * ldc)),
              *got = malloc(sizeof(float) * (size_t)(M * ldc));
        for (int th = 0; th <= 3; th++) {
            memcpy(want, c0, sizeof(float) * (size_t)(M * ldc));
            nnc_set_threads(th ? th : 1);
            if (th)
                nnc_sgemm(TA, TB, (int)M, (int)N, (int)K, alpha, a, (int)lda, b, (int)ldb, 0.0f, want, (int)ldc);
            else
                nnc_cblas_sgemm(CblasRowMajor, TA, TB, (int)M, (int)N, (int)K, alpha, a, (int)lda, b, (int)ldb, 0.0f,
                                want, (int)ldc);
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++)
                    want[i * ldc + j] += bias[j];
            memcpy(got, c0, sizeof(float) * (size_t)(M * ldc));
            nnc_sgemm_bias(th > 0, TA, TB, (int)M, (int)N, (int)K, alpha, a, (int)lda, b, (int)ldb, got, (int)ldc,
                           bias);
            CHECKF(!memcmp(want, got, sizeof(float) * (size_t)(M * ldc)),
                   "ta %d tb %d M %lld N %lld K %lld: nnc_sgemm_bias (%d threads, split %d) differs from the "
                   "product plus the bias",
                   ta, tb, (long long)M, (long long)N, (long long)K, th ? th : 1, th > 0);
        }
        free(bias);
        free(want);
        free(got);
    }
    nnc_set_threads(1);
    free(a);
    free(b);
    free(c);
    free(c0);
    free(c2);
}

int main(void)
{
    if (isa_skip("test_gemm"))
        return ISA_SKIP;
    static const int64_t Ms[] = {1, 5, 6, 7, 13, 64, 97, 200};
    static const int64_t Ns[] = {1, 7, 16, 17, 33, 64, 100, 300};
    static const int64_t Ks[] = {1, 3, 31, 256, 257, 600};
    unsigned seed = 1;
    for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++)
        for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++)
            for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++) {
                const int t = (int)((m + n + k) % 4);
                check_one(t & 1, t >> 1, Ms[m], Ns[n], Ks[k], 1.0f, 0.0f, seed++);
            }
    /* every transposition with alpha and beta, on shapes with tails */
    for (int t = 0; t < 4; t++) {
        check_one(t & 1, t >> 1, 97, 300, 600, 0.5f, 1.0f, seed++);
        check_one(t & 1, t >> 1, 13, 33, 257, -2.0f, 0.5f, seed++);
        check_one(t & 1, t >> 1, 200, 17, 31, 1.0f, 0.0f, seed++);
        /* alpha with the bias: alpha AB rounded before the bias is
         * added, in one block of K and in several */
        check_one(t & 1, t >> 1, 97, 300, 600, 0.5f, 0.0f, seed++);
        check_one(t & 1, t >> 1, 200, 64, 96, -0.3f, 0.0f, seed++);
    }
    /* shapes that gemm.c turns (C^T = op(B)^T op(A)^T): a recurrent
     * layer's steps at batch 16, its data gradient, a 65-word vocabulary
     * over 320 rows (more than one block of M's columns), 40 rows (panels
     * of one vector at AVX-512); with beta, alpha and every transposition */
    for (int t = 0; t < 4; t++) {
        check_one(t & 1, t >> 1, 16, 1024, 256, 1.0f, 0.0f, seed++);
        check_one(t & 1, t >> 1, 16, 256, 1000, 1.0f, 0.5f, seed++);
        check_one(t & 1, t >> 1, 320, 65, 256, 0.5f, 1.0f, seed++);
        check_one(t & 1, t >> 1, 40, 200, 300, 1.0f, 0.0f, seed++);
    }
    /* threads.c's splits: a square product by columns, many rows by
     * 6-row steps with a tail */
    check_one(1, 0, 128, 128, 1024, 1.0f, 0.0f, seed++);
    check_one(0, 1, 1031, 70, 64, 1.0f, 1.0f, seed++);
    return check_summary("test_gemm");
}
