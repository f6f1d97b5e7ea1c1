/* gemm_want.h — the reference of the GEMM tests (test_gemm.c and
 * test_gemm_asan.c): an output of C = alpha op(A) op(B) + beta C0 summed
 * in double, and whether a float result is that sum within the rounding
 * of float sums: |got - want| <= 1e-6 (the magnitudes of its terms,
 * summed) + 1e-6.
 */
#ifndef NNC_TEST_GEMM_WANT_H
#define NNC_TEST_GEMM_WANT_H

#include <math.h>
#include <stdint.h>

/* op(X)[r][k] of a row-major X with pitch ld */
static inline float gemm_at(const float *x, int t, int64_t ld, int64_t r, int64_t k)
{
    return t ? x[k * ld + r] : x[r * ld + k];
}

/* Whether got is C[i][j] within rounding, C0[i][j] being c0 (read only
 * where beta is not 0); *want gets the reference, for messages. */
static inline int gemm_near(int ta, int tb, int64_t K, float alpha, const float *a, int64_t lda, const float *b,
                            int64_t ldb, float beta, float c0, int64_t i, int64_t j, float got, double *want)
{
    double w = 0, scale = 0;
    for (int64_t k = 0; k < K; k++) {
        const double p = (double)gemm_at(a, ta, lda, i, k) * gemm_at(b, !tb, ldb, j, k);
        w += p;
        scale += fabs(p);
    }
    w *= alpha;
    scale *= fabs(alpha);
    if (beta != 0.0f) {
        w += beta * (double)c0;
        scale += fabs(beta * (double)c0);
    }
    *want = w;
    return fabs(got - w) <= 1e-6 * scale + 1e-6;
}

#endif
