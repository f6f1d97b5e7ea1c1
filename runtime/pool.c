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
 * With AVX2 (the runtime's avx2 build, x86-64-v3), 16 columns (8
 * windows) at a time, split by one in-lane shuffle each (split8()); a
 * row's last vector overlaps the one before, or, in rows of fewer than 8
 * windows, is a masked load and a store in pieces.  Against the scalar
 * loops that build ran before (gcc 12 -O2, the 2-core AMD EPYC (Zen 4) of
 * the tests, shared with other work; one thread, us per call, min of 5;
 * forward / backward / backward with relu):
 *
 *   NC x H x W                       scalar               AVX2             AVX-512
 *   384 x 28 x 28 (lenet5 1)  1129 / 1421 / 1424   41 /  89 / 117    40 /  85 / 108
 *   1024 x 10 x 10 (lenet5 2)  325 /  432 /  425   29 /  58 /  73    35 /  84 / 107
 *   768 x 32 x 32             2983 / 3726 / 3680  101 / 217 / 275    92 / 199 / 251
 *   3072 x 8 x 8               795 /  979 /  974   70 / 139 / 179    84 / 203 / 261
 *   64 x 7 x 15               4.42 / 4.85 / 4.84  1.1 / 2.5 / 3.1   1.3 / 3.4 / 4.2
 *
 * lenet5's training step at NNC_ISA=avx2: 14.4 ms before, 11.5 after.
 * The scalar loops' selects compile to branches, which random data
 * mispredicts.
 *
 * Semantics, as PyTorch and as the generated loops (emit_vision.c): the maximum
 * of a window, or NaN if the window holds one; the gradient goes to the
 * first maximum in scan order (top-left, top-right, bottom-left,
 * bottom-right), or to the last NaN: a NaN replaces the running maximum,
 * and only a later NaN replaces it.  With `relu` (plan.c fold_relu_pool: the
 * pool's input is a relu's output), an element whose x is not > 0 gets 0.
 * Elements no window covers (the last column or row of an odd W or H)
 * get 0.  The generic build (baseline x86-64, nnc_isa.h) runs the same
 * loops one window at a time.  Max and routing are selections, so every
 * build gives the same bits. */
#include <stdint.h>
#include <string.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "nnc_isa.h"

#if !defined(__AVX512F__) && !defined(__AVX2__)
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

#if defined(__AVX2__) && !defined(__AVX512F__)
/* the first n lanes (n <= 8; more: all, fewer than 0: none), for the masked
 * loads of a row's last windows */
static inline __m256i first(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* stores the first n floats of v (n <= 8), in pieces of 4, 2 and 1: a
 * masked store (vmaskmovps) took 7.6 us for the backward pass of 64 7x15
 * images against 5.3 for the scalar loop, being microcoded on AMD */
static inline void store_part(float *p, __m256 v, int n)
{
    if (n == 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    __m128 h = _mm256_castps256_ps128(v);
    if (n & 4) {
        _mm_storeu_ps(p, h);
        p += 4;
        h = _mm256_extractf128_ps(v, 1);
    }
    if (n & 2) {
        _mm_storel_pi((__m64 *)p, h);
        p += 2;
        h = _mm_movehl_ps(h, h);
    }
    if (n & 1)
        _mm_store_ss(p, h);
}

/* corner s replaces the running maximum m where s > m or s is NaN */
static inline __m256 takes8(__m256 s, __m256 m)
{
    return _mm256_or_ps(_mm256_cmp_ps(s, m, _CMP_GT_OQ), _mm256_cmp_ps(s, s, _CMP_UNORD_Q));
}

/* 2n input columns (n <= 8 windows) of one row, split into even and odd:
 * one shuffle each, which leaves the windows in the order 0 1 4 5 | 2 3 6 7
 * (the 128-bit lanes work apart); the maximum is put in order with one
 * permute of 64-bit pairs (D8, its own inverse), and the backward pass's
 * unpacks of even and odd give the columns in order without one */
static inline void split8(const float *r, int n, __m256 *e, __m256 *o)
{
    __m256 a, b;
    if (n == 8) {
        a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
    } else {
        a = _mm256_maskload_ps(r, first(2 * n)), b = _mm256_maskload_ps(r + 8, first(2 * n - 8));
    }
    *e = _mm256_shuffle_ps(a, b, 0x88);
    *o = _mm256_shuffle_ps(a, b, 0xDD);
}

/* n <= 8 windows of the row pair r0, r1, in split8's order: their corners
 * v, where corners 1-3 took the running maximum (s), and the maximum */
static inline __m256 windows8(const float *r0, const float *r1, int n, __m256 v[4], __m256 s[3])
{
    split8(r0, n, &v[0], &v[1]);
    split8(r1, n, &v[2], &v[3]);
    __m256 m = v[0];
    for (int k = 1; k < 4; k++) {
        s[k - 1] = takes8(v[k], m);
        m = _mm256_blendv_ps(m, v[k], s[k - 1]);
    }
    return m;
}

static inline __m256 order8(__m256 x) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(x), 0xD8)); }
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
#elif defined(__AVX2__)
    for (int64_t i = 0; i < NC * OH; i++) {
        const float *r0 = x + (i / OH * H + i % OH * 2) * W, *r1 = r0 + W;
        float *yr = y + i * OW;
        for (int64_t j = 0; j < OW; j += 8) {
            /* a last part vector: the 8 windows that end the row, again
             * some of the ones before (the same values), or a masked one
             * in rows of fewer than 8 */
            const int64_t jj = OW - j >= 8 || OW < 8 ? j : OW - 8;
            const int n = OW - jj < 8 ? (int)(OW - jj) : 8;
            __m256 v[4], s[3];
            const __m256 m = order8(windows8(r0 + 2 * jj, r1 + 2 * jj, n, v, s));
            store_part(yr + jj, m, n);
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
#elif defined(__AVX2__)
    const __m256 zero = _mm256_setzero_ps();
    for (int64_t i = 0; i < NC * OH; i++) {
        const int64_t off = (i / OH * H + i % OH * 2) * W;
        const float *r0 = x + off, *r1 = r0 + W;
        float *d0 = dx + off, *d1 = d0 + W;
        for (int64_t j = 0; j < OW; j += 8) {
            /* as the forward pass: a last vector that overlaps the one
             * before rewrites the same values */
            const int64_t jj = OW - j >= 8 || OW < 8 ? j : OW - 8;
            const int n = OW - jj < 8 ? (int)(OW - jj) : 8;
            __m256 v[4], s[3];
            windows8(r0 + 2 * jj, r1 + 2 * jj, n, v, s);
            /* the last corner that took the maximum is the window's; k[0]
             * is its complement (where corner 0 does not take dy) */
            __m256 k[4] = {_mm256_or_ps(_mm256_or_ps(s[0], s[1]), s[2]),
                           _mm256_andnot_ps(_mm256_or_ps(s[1], s[2]), s[0]), _mm256_andnot_ps(s[2], s[1]), s[2]};
            if (relu) {
                k[0] = _mm256_or_ps(k[0], _mm256_cmp_ps(v[0], zero, _CMP_NGT_UQ));
                for (int q = 1; q < 4; q++)
                    k[q] = _mm256_and_ps(k[q], _mm256_cmp_ps(v[q], zero, _CMP_GT_OQ));
            }
            const float *gr = dy + i * OW + jj;
            const __m256 g = order8(n == 8 ? _mm256_loadu_ps(gr) : _mm256_maskload_ps(gr, first(n)));
            const __m256 ga = _mm256_andnot_ps(k[0], g), gb = _mm256_and_ps(k[1], g);
            const __m256 gc = _mm256_and_ps(k[2], g), gd = _mm256_and_ps(k[3], g);
            const int n0 = 2 * n < 8 ? 2 * n : 8, n1 = 2 * n - n0;
            store_part(d0 + 2 * jj, _mm256_unpacklo_ps(ga, gb), n0);
            store_part(d1 + 2 * jj, _mm256_unpacklo_ps(gc, gd), n0);
            if (n1) {
                store_part(d0 + 2 * jj + 8, _mm256_unpackhi_ps(ga, gb), n1);
                store_part(d1 + 2 * jj + 8, _mm256_unpackhi_ps(gc, gd), n1);
            }
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
