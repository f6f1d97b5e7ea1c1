/* pool.c — 2x2 max pooling at stride 2 (no padding) in float, forward and
 * backward, over NC images of [H][W]: the pool every CNN of this project
 * uses (lenet5's two, digits_cnn's).
 *
 * The generated loops take one window at a time.  Here, with AVX-512, a
 * pair of image rows is read 32 columns (16 windows) at a time, split into
 * its even and odd columns by one two-register permute each, and the four
 * corners of 16 windows are compared as vectors; the backward pass puts
 * the result back together with the inverse permute.  lenet5's first pool
 * (64 x 6 images of 28 x 28) takes a row pair in one masked step.
 *
 * Semantics, as PyTorch and as the generated loops (emit_vision.c): the maximum
 * of a window, or NaN if the window holds one; the gradient goes to the
 * first maximum in scan order (top-left, top-right, bottom-left,
 * bottom-right), or to the last NaN: a NaN replaces the running maximum,
 * and only a later NaN replaces it.  With `relu` (plan.c fold_relu_pool: the
 * pool's input is a relu's output), an element whose x is not > 0 gets 0.
 * Elements no window covers (the last column or row of an odd W or H)
 * get 0.  Without AVX-512 (the runtime's avx2 and generic builds of this
 * file, nnc_isa.h) the same loops run one window at a time. */
#include <stdint.h>
#include <string.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "nnc_isa.h"

#if !defined(__AVX512F__)
/* one window, scalar: the running maximum and the corner it came from
 * (selects, not branches, which random data mispredicts) */
static float win_max(const float *r0, const float *r1, int *best)
{
    const float v[4] = {r0[0], r0[1], r1[0], r1[1]};
    float m = v[0];
    int b = 0;
    for (int k = 1; k < 4; k++) {
        const int s = (v[k] > m) | (v[k] != v[k]);
        m = s ? v[k] : m;
        b = s ? k : b;
    }
    *best = b;
    return m;
}
#endif

#if defined(__AVX512F__)
/* lanes 0-15: the even columns of lo:hi (32 floats); the odd ones */
static const int32_t even_idx[16] = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
static const int32_t odd_idx[16] = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
/* back: e:o interleaved, first and second 16 floats */
static const int32_t lo_idx[16] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
static const int32_t hi_idx[16] = {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};

/* corner s replaces the running maximum m where s > m or s is NaN */
static inline __mmask16 takes(__m512 s, __m512 m)
{
    return _mm512_cmp_ps_mask(s, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(s, s, _CMP_UNORD_Q);
}

/* 2n input columns (n <= 16 windows) of one row, split into even and odd */
static inline void split(const float *r, int n, __m512 ie, __m512 io, __m512 *e, __m512 *o)
{
    const __mmask16 m0 = (__mmask16)(n >= 8 ? 0xFFFF : (1u << 2 * n) - 1);
    const __mmask16 m1 = (__mmask16)(n > 8 ? (1u << (2 * n - 16)) - 1 : 0);
    const __m512 a = _mm512_maskz_loadu_ps(m0, r), b = _mm512_maskz_loadu_ps(m1, r + 16);
    *e = _mm512_permutex2var_ps(a, _mm512_castps_si512(ie), b);
    *o = _mm512_permutex2var_ps(a, _mm512_castps_si512(io), b);
}

/* n <= 16 windows of the row pair r0, r1: their corners v (top-left,
 * top-right, bottom-left, bottom-right), where corners 1-3 took the
 * running maximum (s), and the maximum */
static inline __m512 windows(const float *r0, const float *r1, int n, __m512 ie, __m512 io, __m512 v[4], __mmask16 s[3])
{
    split(r0, n, ie, io, &v[0], &v[1]);
    split(r1, n, ie, io, &v[2], &v[3]);
    __m512 m = v[0];
    for (int k = 1; k < 4; k++) {
        s[k - 1] = takes(v[k], m);
        m = _mm512_mask_mov_ps(m, s[k - 1], v[k]);
    }
    return m;
}
#endif

void NNC_ISA_FN(nnc_maxpool2_f32)(int64_t NC, int64_t H, int64_t W, const float *x, float *y)
{
    const int64_t OH = H / 2, OW = W / 2;
#if defined(__AVX512F__)
    const __m512 ie = _mm512_castsi512_ps(_mm512_loadu_si512(even_idx));
    const __m512 io = _mm512_castsi512_ps(_mm512_loadu_si512(odd_idx));
    for (int64_t i = 0; i < NC * OH; i++) {
        const float *r0 = x + (i / OH * H + i % OH * 2) * W, *r1 = r0 + W;
        float *yr = y + i * OW;
        for (int64_t j = 0; j < OW; j += 16) {
            const int n = OW - j < 16 ? (int)(OW - j) : 16;
            __m512 v[4];
            __mmask16 s[3];
            _mm512_mask_storeu_ps(yr + j, (__mmask16)((1u << n) - 1), windows(r0 + 2 * j, r1 + 2 * j, n, ie, io, v, s));
        }
    }
#else
    for (int64_t i = 0; i < NC * OH; i++) {
        const float *r0 = x + (i / OH * H + i % OH * 2) * W, *r1 = r0 + W;
        for (int64_t j = 0; j < OW; j++) {
            const float v[4] = {r0[2 * j], r0[2 * j + 1], r1[2 * j], r1[2 * j + 1]};
            float m = v[0];
            for (int k = 1; k < 4; k++)
                m = ((v[k] > m) | (v[k] != v[k])) ? v[k] : m;
            y[i * OW + j] = m;
        }
    }
#endif
}

void NNC_ISA_FN(nnc_maxpool2_bwd_f32)(int64_t NC, int64_t H, int64_t W, const float *x, const float *dy, float *dx,
                                      int relu)
{
    const int64_t OH = H / 2, OW = W / 2;
#if defined(__AVX512F__)
    const __m512 ie = _mm512_castsi512_ps(_mm512_loadu_si512(even_idx));
    const __m512 io = _mm512_castsi512_ps(_mm512_loadu_si512(odd_idx));
    const __m512i il = _mm512_loadu_si512(lo_idx), ih = _mm512_loadu_si512(hi_idx);
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t i = 0; i < NC * OH; i++) {
        const int64_t off = (i / OH * H + i % OH * 2) * W;
        const float *r0 = x + off, *r1 = r0 + W;
        float *d0 = dx + off, *d1 = d0 + W;
        for (int64_t j = 0; j < OW; j += 16) {
            const int n = OW - j < 16 ? (int)(OW - j) : 16;
            __m512 v[4];
            __mmask16 s[3];
            windows(r0 + 2 * j, r1 + 2 * j, n, ie, io, v, s);
            /* the last corner that took the maximum is the window's */
            __mmask16 k[4] = {(__mmask16) ~(s[0] | s[1] | s[2]), (__mmask16)(s[0] & ~s[1] & ~s[2]),
                              (__mmask16)(s[1] & ~s[2]), s[2]};
            if (relu)
                for (int q = 0; q < 4; q++)
                    k[q] &= _mm512_cmp_ps_mask(v[q], zero, _CMP_GT_OQ);
            const __mmask16 vn = (__mmask16)((1u << n) - 1);
            const __m512 g = _mm512_maskz_loadu_ps(vn, dy + i * OW + j);
            const __m512 ga = _mm512_maskz_mov_ps(k[0], g), gb = _mm512_maskz_mov_ps(k[1], g);
            const __m512 gc = _mm512_maskz_mov_ps(k[2], g), gd = _mm512_maskz_mov_ps(k[3], g);
            const __mmask16 m0 = (__mmask16)(n >= 8 ? 0xFFFF : (1u << 2 * n) - 1);
            const __mmask16 m1 = (__mmask16)(n > 8 ? (1u << (2 * n - 16)) - 1 : 0);
            _mm512_mask_storeu_ps(d0 + 2 * j, m0, _mm512_permutex2var_ps(ga, il, gb));
            _mm512_mask_storeu_ps(d0 + 2 * j + 16, m1, _mm512_permutex2var_ps(ga, ih, gb));
            _mm512_mask_storeu_ps(d1 + 2 * j, m0, _mm512_permutex2var_ps(gc, il, gd));
            _mm512_mask_storeu_ps(d1 + 2 * j + 16, m1, _mm512_permutex2var_ps(gc, ih, gd));
        }
        if (W & 1)
            d0[W - 1] = d1[W - 1] = 0.0f;
    }
#else
    for (int64_t i = 0; i < NC * OH; i++) {
        const int64_t off = (i / OH * H + i % OH * 2) * W;
        const float *r0 = x + off, *r1 = r0 + W;
        float *d0 = dx + off, *d1 = d0 + W;
        for (int64_t j = 0; j < OW; j++) {
            int best;
            win_max(r0 + 2 * j, r1 + 2 * j, &best);
            const float g = dy[i * OW + j];
            const float v[4] = {r0[2 * j], r0[2 * j + 1], r1[2 * j], r1[2 * j + 1]};
            float o[4];
            for (int k = 0; k < 4; k++)
                o[k] = k == best && (!relu || v[k] > 0.0f) ? g : 0.0f;
            d0[2 * j] = o[0], d0[2 * j + 1] = o[1], d1[2 * j] = o[2], d1[2 * j + 1] = o[3];
        }
        if (W & 1)
            d0[W - 1] = d1[W - 1] = 0.0f;
    }
#endif
    /* an odd H leaves each image's last row to no window */
    if (H & 1)
        for (int64_t bc = 0; bc < NC; bc++)
            memset(dx + (bc * H + H - 1) * W, 0, sizeof(float) * (size_t)W);
}
