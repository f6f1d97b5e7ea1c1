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
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "nnc_isa.h"
#include "nnc_vec.h"

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
    /* (a row's last windows: the floats that exist, zeros after) */
    const __m256 a = (__m256)nnc_vload_n(r, 2 * n), b = (__m256)nnc_vload_n(r + 8, 2 * n - 8);
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
            const __m256 g = order8((__m256)nnc_vload_n(gr, n));
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

/* ---- pools of any square window, stride and padding ----------------------------- */

/* The pools the 2x2 kernels above do not take (emit_vision.c): a K x K
 * window at stride S with P of padding on each side (P <= K / 2), max
 * (-inf padding) or average (counting the padding or not), as ResNet's
 * 3x3 stride-2 max pool after its stem or an Inception block's 3x3
 * stride-1 average.  The generated loops took a window at a time, its
 * taps clipped to the image: 16 x 32 planes of 48 x 48, a 3x3 max pool
 * at stride 2 with padding 1, took 5.4 ms forward and 6.0 ms backward;
 * Inception's 3x3 average on 32 x 112 planes of 32 x 32, 2.1 and 3.8 ms.
 *
 * Forward, a block of PV outputs of a row is a vector: its running
 * maximum and the pick's offset (or its sum, in double) stay in registers
 * while the window's taps go by in scan order, each a load of PV columns,
 * contiguous at stride 1, the even lanes of two loads at stride 2.  The K
 * input rows of a chunk of outputs are first copied into rows padded on
 * both sides (buf: -inf, which is never taken, or 0, which leaves a sum
 * that never is -0 as it was), so that no lane needs a bound.  (Loops
 * over the outputs with the bounds per tap, which gcc vectorizes, were
 * still 2.6 / 3.2 ms for the max pool above: short rows ran in the
 * scalar tails, whose selects are branches.)
 *
 * Backward, a max pool finds each output's pick as its forward pass does
 * and adds dy there, in output order (1.4 ms for the pool above; adding a
 * run of outputs with the same pick in a register, or each tap's outputs
 * as a vector under a select as below, was no faster at stride 2 and
 * slower at stride 1).  An average's gradient goes to every tap: for each
 * output row, each tap (ki, kj) adds the outputs' dy over their counts to
 * its row of dx as one vector of PV outputs at a time (stride 2: on every
 * other float), under a mask at the row's ends; the taps of one pass fall
 * on distinct elements, and go by with kj from K - 1 down, so that an
 * element gets its terms in output order, as the loops added them.
 *
 * The same rules as the generated loops, so the same bits: the maximum,
 * or NaN where the window holds one (a tap replaces the running maximum
 * where it is greater or NaN); the gradient goes to the tap that last
 * replaced it (the first maximum in scan order, or the last NaN), or to
 * the window's first tap in the image where none did (all -inf); an
 * average is its taps' sum in double, in scan order, over the count
 * (K², or the taps in the image), rounded once; its gradient dy over the
 * count in float.  A chunk whose rows would not fit in buf (a stride or
 * window of hundreds) takes pool_any's loops instead. */
#define PV NNC_VL
typedef nnc_vf pvf;
typedef nnc_vi pvi;
typedef double pvd __attribute__((vector_size(8 * PV)));
typedef nnc_vfu pvfu;
enum { PC = 256, BUFN = 4096 };

static inline pvi pseli(pvi m, pvi a, pvi b) { return (a & m) | (b & ~m); }

/* lanes j: p[j S]; S a constant where inlined */
static inline __attribute__((always_inline)) pvf load_s(const float *p, int64_t S)
{
    if (S == 1)
        return *(const pvfu *)p;
    if (S == 2) {
        const pvf a = *(const pvfu *)p, b = *(const pvfu *)(p + PV);
#if PV == 16
        return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
#elif PV == 8
        return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
#else
        return __builtin_shufflevector(a, b, 0, 2, 4, 6);
#endif
    }
    pvf v;
    for (int j = 0; j < PV; j++)
        v[j] = p[j * S];
    return v;
}

/* output row oh's window rows in the image: [ki0, ki1) from row h0 */
typedef struct {
    int64_t h0, ki0, ki1;
} win_rows;
static inline win_rows rows_of(int64_t H, int64_t K, int64_t S, int64_t P, int64_t oh)
{
    const int64_t h0 = oh * S - P;
    return (win_rows){h0, h0 < 0 ? -h0 : 0, h0 + K > H ? H - h0 : K};
}

/* buf row ki (ld floats) for ki in the window's rows: columns c0 ... c0 +
 * ld - 1 of the image's row h0 + ki, pad outside it */
static void fill_rows(const float *img, int64_t W, win_rows w, int64_t c0, int64_t ld, float pad, float *buf)
{
    for (int64_t ki = w.ki0; ki < w.ki1; ki++) {
        float *b = buf + ki * ld;
        const float *r = img + (w.h0 + ki) * W;
        const int64_t lo = c0 < 0 ? -c0 : 0, hi = W - c0 < ld ? W - c0 : ld;
        for (int64_t c = 0; c < lo; c++)
            b[c] = pad;
        memcpy(b + lo, r + c0 + lo, sizeof(float) * (size_t)(hi - lo));
        for (int64_t c = hi; c < ld; c++)
            b[c] = pad;
    }
}

static inline pvi lanes(void)
{
    pvi l;
    for (int j = 0; j < PV; j++)
        l[j] = j;
    return l;
}

/* Outputs [o0, o0 + ocv) of row oh (ocv whole vectors): their maxima in m
 * and, unless at is NULL, their picks' offsets in the plane */
static inline __attribute__((always_inline)) void max_vec(const float *img, int64_t H, int64_t W, int64_t K, int64_t S,
                                                          int64_t P, int64_t oh, int64_t o0, int64_t ocv, int64_t ld,
                                                          float *buf, float *m, int32_t *at)
{
    const win_rows w = rows_of(H, K, S, P, oh);
    const int64_t c0 = o0 * S - P;
    fill_rows(img, W, w, c0, ld, -INFINITY, buf);
    const pvi zero = {0};
    for (int64_t i = 0; i < ocv; i += PV) {
        pvf mx = (pvf){0} - INFINITY;
        const pvi col = zero + (int32_t)(c0 + i * S) + lanes() * (int32_t)S;         /* the lanes' columns at kj = 0 */
        pvi a = zero + (int32_t)((w.h0 + w.ki0) * W) + pseli(col < zero, zero, col); /* the first tap in the image */
        for (int64_t ki = w.ki0; ki < w.ki1; ki++) {
            const float *b = buf + ki * ld + i * S;
            const pvi rowcol = col + (int32_t)((w.h0 + ki) * W);
            for (int64_t kj = 0; kj < K; kj++) {
                const pvf v = load_s(b + kj, S);
                const pvi take = (v > mx) | (v != v);
                mx = nnc_vsel(take, v, mx);
                if (at)
                    a = pseli(take, rowcol + (int32_t)kj, a);
            }
        }
        *(pvfu *)(m + i) = mx;
        if (at)
            *(pvfu *)(at + i) = (pvf)a;
    }
}

/* The same for an average: the sums in double over the counts, in m */
static inline __attribute__((always_inline)) void avg_vec(const float *img, int64_t H, int64_t W, int64_t K, int64_t S,
                                                          int64_t P, int exclude, int64_t oh, int64_t o0, int64_t ocv,
                                                          int64_t ld, float *buf, float *m)
{
    const win_rows w = rows_of(H, K, S, P, oh);
    const int64_t c0 = o0 * S - P;
    fill_rows(img, W, w, c0, ld, 0.0f, buf);
    const pvi zero = {0}, one = zero + 1, kk = zero + (int32_t)K, ww = zero + (int32_t)W;
    for (int64_t i = 0; i < ocv; i += PV) {
        pvd acc = (pvd){0};
        for (int64_t ki = w.ki0; ki < w.ki1; ki++) {
            const float *b = buf + ki * ld + i * S;
            for (int64_t kj = 0; kj < K; kj++)
                acc += __builtin_convertvector(load_s(b + kj, S), pvd);
        }
        pvi n = kk * kk;
        if (exclude) { /* the taps in the image: rows, times columns [max(0, -c), min(K, W - c)) */
            const pvi col = zero + (int32_t)(c0 + i * S) + lanes() * (int32_t)S;
            const pvi lo = pseli(col < zero, -col, zero), hi = pseli(ww - col < kk, ww - col, kk);
            n = (hi - lo) * (int32_t)(w.ki1 - w.ki0);
            n = pseli(n < one, one, n); /* (lanes past the row's outputs) */
        }
        *(pvfu *)(m + i) = __builtin_convertvector(acc / __builtin_convertvector(n, pvd), pvf);
    }
}

/* The fallback, one output at a time: m (and at) as max_vec's, or
 * avg_vec's where avg */
static void pool_any(const float *img, int64_t H, int64_t W, int64_t K, int64_t S, int64_t P, int avg, int exclude,
                     int64_t oh, int64_t o0, int64_t oc, float *m, int32_t *at)
{
    const win_rows w = rows_of(H, K, S, P, oh);
    for (int64_t i = 0; i < oc; i++) {
        const int64_t c = (o0 + i) * S - P, kj0 = c < 0 ? -c : 0, kj1 = W - c < K ? W - c : K;
        double acc = 0;
        float mx = -INFINITY;
        int64_t t = (w.h0 + w.ki0) * W + c + kj0;
        for (int64_t ki = w.ki0; ki < w.ki1; ki++)
            for (int64_t kj = kj0; kj < kj1; kj++) {
                const int64_t k = (w.h0 + ki) * W + c + kj;
                acc += img[k];
                if (img[k] > mx || img[k] != img[k])
                    mx = img[k], t = k;
            }
        m[i] = avg ? (float)(acc / (double)(exclude ? (w.ki1 - w.ki0) * (kj1 - kj0) : K * K)) : mx;
        if (at)
            at[i] = (int32_t)t;
    }
}

/* outputs per chunk: PC, or fewer where K rows of their columns would not
 * fit in buf; 0: pool_any */
static int64_t chunk_outputs(int64_t K, int64_t S)
{
    const int64_t per_row = BUFN / K - K - PV * S, oc = per_row > 0 ? per_row / S / PV * PV : 0;
    return oc < PC ? oc : PC;
}

/* outputs [o0, o0 + oc) of row oh into m (and at), with the stride a
 * constant for the common ones */
static void pool_chunk(const float *img, int64_t H, int64_t W, int64_t K, int64_t S, int64_t P, int avg, int exclude,
                       int64_t oh, int64_t o0, int64_t oc, int64_t occ, float *buf, float *m, int32_t *at)
{
    if (!occ) {
        pool_any(img, H, W, K, S, P, avg, exclude, oh, o0, oc, m, at);
        return;
    }
    const int64_t ocv = (oc + PV - 1) / PV * PV, ld = ocv * S + K + PV;
    if (avg) {
        if (S == 1)
            avg_vec(img, H, W, K, 1, P, exclude, oh, o0, ocv, ld, buf, m);
        else if (S == 2)
            avg_vec(img, H, W, K, 2, P, exclude, oh, o0, ocv, ld, buf, m);
        else
            avg_vec(img, H, W, K, S, P, exclude, oh, o0, ocv, ld, buf, m);
    } else if (S == 1)
        max_vec(img, H, W, K, 1, P, oh, o0, ocv, ld, buf, m, at);
    else if (S == 2)
        max_vec(img, H, W, K, 2, P, oh, o0, ocv, ld, buf, m, at);
    else
        max_vec(img, H, W, K, S, P, oh, o0, ocv, ld, buf, m, at);
}

/* d[i S + off] += g[i] for i in [lo, hi); S a constant where inlined */
static inline __attribute__((always_inline)) void add_taps(float *d, const float *g, int64_t lo, int64_t hi, int64_t S,
                                                           int64_t off)
{
    if (S > 2) {
        for (int64_t i = lo; i < hi; i++)
            d[i * S + off] += g[i];
        return;
    }
    for (int64_t i = lo; i < hi; i += PV) {
        const int64_t n = hi - i < PV ? hi - i : PV;
        const pvf v = nnc_vload_n(g + i, n);
        float *p = d + i * S + off;
        if (S == 1) {
            nnc_vstore_n(p, nnc_vload_n(p, n) + v, n);
            continue;
        }
        /* stride 2: v's lanes on the even floats of 2n - 1, 0 on the odd */
        const pvf z = {0};
#if PV == 16
        const pvf a = __builtin_shufflevector(v, z, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
                  b = __builtin_shufflevector(v, z, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
#elif PV == 8
        const pvf a = __builtin_shufflevector(v, z, 0, 8, 1, 9, 2, 10, 3, 11),
                  b = __builtin_shufflevector(v, z, 4, 12, 5, 13, 6, 14, 7, 15);
#else
        const pvf a = __builtin_shufflevector(v, z, 0, 4, 1, 5), b = __builtin_shufflevector(v, z, 2, 6, 3, 7);
#endif
        const int64_t span = 2 * n - 1;
        nnc_vstore_n(p, nnc_vload_n(p, span) + a, span);
        nnc_vstore_n(p + PV, nnc_vload_n(p + PV, span - PV) + b, span - PV);
    }
}

/* Output row oh's chunk [o0, o0 + oc) of an average's dy over its counts
 * (g) into the plane d: each tap of the window's rows, kj from K - 1
 * down, over the outputs whose tap is in the image */
static void add_row(float *d, int64_t H, int64_t W, int64_t K, int64_t S, int64_t P, int64_t oh, int64_t o0, int64_t oc,
                    const float *g)
{
    const win_rows w = rows_of(H, K, S, P, oh);
    for (int64_t ki = w.ki0; ki < w.ki1; ki++) {
        float *r = d + (w.h0 + ki) * W;
        for (int64_t kj = K - 1; kj >= 0; kj--) {
            /* outputs o with 0 <= o S - P + kj < W, as chunk indices */
            int64_t lo = kj < P ? (P - kj + S - 1) / S : 0, hi = W - 1 + P - kj >= 0 ? (W - 1 + P - kj) / S + 1 : 0;
            lo = (lo > o0 ? lo : o0) - o0;
            hi = (hi < o0 + oc ? hi : o0 + oc) - o0;
            const int64_t off = o0 * S - P + kj;
            if (lo >= hi)
                continue;
            if (S == 1)
                add_taps(r, g, lo, hi, 1, off);
            else if (S == 2)
                add_taps(r, g, lo, hi, 2, off);
            else
                add_taps(r, g, lo, hi, S, off);
        }
    }
}

/* Both forward passes: y[NC][OH][OW] */
static void pool_fwd(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S, int64_t P, int avg,
                     int exclude, const float *x, float *y)
{
    float buf[BUFN], m[PC];
    const int64_t occ = chunk_outputs(K, S), step = occ ? occ : PC;
    for (int64_t bc = 0; bc < NC; bc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t o0 = 0; o0 < OW; o0 += step) {
                const int64_t oc = OW - o0 < step ? OW - o0 : step;
                pool_chunk(x + bc * H * W, H, W, K, S, P, avg, exclude, oh, o0, oc, occ, buf, m, NULL);
                memcpy(y + (bc * OH + oh) * OW + o0, m, sizeof(float) * (size_t)oc);
            }
}

void NNC_ISA_FN(nnc_maxpool_f32)(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S,
                                 int64_t P, const float *x, float *y)
{
    pool_fwd(NC, H, W, OH, OW, K, S, P, 0, 0, x, y);
}

void NNC_ISA_FN(nnc_avgpool_f32)(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S,
                                 int64_t P, int exclude, const float *x, float *y)
{
    pool_fwd(NC, H, W, OH, OW, K, S, P, 1, exclude, x, y);
}

void NNC_ISA_FN(nnc_maxpool_bwd_f32)(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S,
                                     int64_t P, const float *x, const float *dy, float *dx)
{
    float buf[BUFN], m[PC];
    int32_t at[PC];
    const int64_t occ = chunk_outputs(K, S), step = occ ? occ : PC;
    for (int64_t bc = 0; bc < NC; bc++) {
        float *d = dx + bc * H * W;
        memset(d, 0, sizeof(float) * (size_t)(H * W));
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t o0 = 0; o0 < OW; o0 += step) {
                const int64_t oc = OW - o0 < step ? OW - o0 : step;
                const float *g = dy + (bc * OH + oh) * OW + o0;
                pool_chunk(x + bc * H * W, H, W, K, S, P, 0, 0, oh, o0, oc, occ, buf, m, at);
                for (int64_t i = 0; i < oc; i++) /* in output order, as the loops added */
                    d[at[i]] += g[i];
            }
    }
}

void NNC_ISA_FN(nnc_avgpool_bwd_f32)(int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t K, int64_t S,
                                     int64_t P, int exclude, const float *dy, float *dx)
{
    float g[PC];
    for (int64_t bc = 0; bc < NC; bc++) {
        float *d = dx + bc * H * W;
        memset(d, 0, sizeof(float) * (size_t)(H * W));
        for (int64_t oh = 0; oh < OH; oh++) {
            const win_rows w = rows_of(H, K, S, P, oh);
            for (int64_t o0 = 0; o0 < OW; o0 += PC) {
                const int64_t oc = OW - o0 < PC ? OW - o0 : PC;
                const float *gy = dy + (bc * OH + oh) * OW + o0;
                for (int64_t i = 0; i < oc; i++) { /* dy over the count, in float */
                    const int64_t c = (o0 + i) * S - P, kj0 = c < 0 ? -c : 0, kj1 = W - c < K ? W - c : K;
                    g[i] = gy[i] / (float)(exclude ? (w.ki1 - w.ki0) * (kj1 - kj0) : K * K);
                }
                add_row(d, H, W, K, S, P, oh, o0, oc, g);
            }
        }
    }
}
