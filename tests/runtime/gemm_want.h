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

/* C[i][j] in double, C0[i][j] being c0 (read only where beta is not 0);
 * *scale gets the magnitudes of its terms, summed */
static inline double gemm_ref(int ta, int tb, int64_t K, float alpha, const float *a, int64_t lda, const float *b,
                              int64_t ldb, float beta, float c0, int64_t i, int64_t j, double *scale)
{
    double w = 0, s = 0;
    for (int64_t k = 0; k < K; k++) {
        const double p = (double)gemm_at(a, ta, lda, i, k) * gemm_at(b, !tb, ldb, j, k);
        w += p;
        s += fabs(p);
    }
    w *= alpha;
    s *= fabs(alpha);
    if (beta != 0.0f) {
        w += beta * (double)c0;
        s += fabs(beta * (double)c0);
    }
    *scale = s;
    return w;
}

/* whether got is the reference want within the rounding of float sums */
static inline int gemm_close(float got, double want, double scale) { return fabs(got - want) <= 1e-6 * scale + 1e-6; }

/* Whether got is C[i][j] within rounding; *want gets the reference, for
 * messages. */
static inline int gemm_near(int ta, int tb, int64_t K, float alpha, const float *a, int64_t lda, const float *b,
                            int64_t ldb, float beta, float c0, int64_t i, int64_t j, float got, double *want)
{
    double scale;
    *want = gemm_ref(ta, tb, K, alpha, a, lda, b, ldb, beta, c0, i, j, &scale);
    return gemm_close(got, *want, scale);
}

#endif
