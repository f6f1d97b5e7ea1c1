/* conv.c — direct convolution kernels for float (NCHW): forward at stride
 * 1 and 2, the data gradient at stride 1, the kernel gradient at any
 * stride.
 *
 * im2col + GEMM, the generic path (conv_cols.c), writes K*K copies of every
 * image and then runs GEMMs whose shapes ([16, 144] x [144, 1024] for a
 * 16-channel 3x3 layer) OpenBLAS takes at 50-80 GFLOP/s; its backward pass
 * (Wᵀ dy, then col2im) is slower still.  A stride-1 convolution is better
 * done in place: pad the image once into a buffer whose rows have pitch
 * Pp = W + pw (the pw zeros after a row are the next row's left padding;
 * nnc_conv.h), and every output position f = oh * Pp + ow of the padded
 * grid is
 *
 *     y[co][f] = sum over c, ky, kx of w[co][c][ky][kx] * xp[c][f + ky * Pp + kx]
 *
 * a one-dimensional correlation per tap, so 16 consecutive outputs are one
 * vector FMA with the tap's weight broadcast, whatever the image width
 * (the Pp - OW positions at the end of each row are computed and thrown
 * away; with the shared padding that is pw of every Pp, 1 in 9 for
 * resnet_small's 8x8 layers, where a pitch of W + 2 pw and blocks of 48
 * computed 96 positions for 64).  The micro-kernel keeps a block of MR
 * output channels x 6 vectors (96 positions) in registers, fewer vectors
 * at the grid's end: per tap 6 loads and MR broadcasts feed 6 MR FMAs.
 * The backward pass for the data is the same kernel: dx is dy,
 * padded by K - 1 - p, correlated with the flipped, channel-transposed
 * kernel.  3x3 layers of enough channels go by Winograd's F(2x2, 3x3)
 * instead (below; nnc_conv_wino), at AVX-512 and at AVX2.
 *
 * The vectors are GCC/clang vector extensions: 16 floats, AVX-512, in
 * the runtime's avx512 build of this file (x86-64-v4, nnc_isa.h), and 8
 * floats in its avx2 build (x86-64-v3, AVX2 + FMA), whose register blocks
 * are cut to its 16 registers (VL, NV; the kernel gradient's WRUN, PACC).
 * The 16-float code compiled for AVX2 split each vector into two
 * registers, spilled, and ran 7-25x slower than the columns; the 8-float
 * blocks run at 75-100 GFLOP/s, near the avx512 build's direct kernels
 * (one thread, 32 examples, the 16-channel 32x32 layer of resnet_small:
 * forward 1.51 ms against 3.77 for the columns, data gradient 1.51
 * against 4.50, kernel gradient 1.46 against 3.86).  Winograd has
 * transforms of its own in each (AVX-512's are two-register permutes and
 * masks, AVX2's in-lane shuffles) and the same drivers; at AVX2 it runs
 * 1.7-2.8x as fast as the direct kernels on every layer of its class
 * measured (below).  The generic build (SSE) runs the columns instead of
 * all of these (nnc_conv_direct_ok, conv_cols.c), in the work buffer
 * that nnc_conv.h sizes for either.
 * This file is compiled with -ffp-contract=fast (CMakeLists.txt) so that
 * x * w + acc is one FMA where the target has it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#include "nnc_isa.h"

/* the avx2 build (AVX2 + FMA without AVX-512): its own register blocks */
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#define CONV_AVX2 1
#else
#define CONV_AVX2 0
#endif

#include "nnc_transpose.h"

typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef int32_t v8i __attribute__((vector_size(32)));
/* the same vector at float alignment: the loads and stores are unaligned
 * (vector types alias their element type in gcc and clang) */
typedef float v16u __attribute__((vector_size(64), aligned(4), may_alias));
typedef float v8u __attribute__((vector_size(32), aligned(4), may_alias));

/* The direct kernels' vector, vf, of VL floats; positions per
 * micro-kernel block: NB, and a last block of fewer vectors where the
 * grid (rounded up to NNC_CONV_BLOCK) ends.  AVX-512: 16 floats, blocks
 * of up to 4 channels x 6 vectors, 24 of the 32 registers.  AVX2: 8
 * floats in 16 registers, blocks of up to 4 channels x 3 vectors: 12
 * accumulators, the 3 vectors of input and a broadcast weight, 7 loads
 * for 12 FMAs (2 channels x 6 vectors, or 6 x 2, take 8 loads or
 * spill). */
#if CONV_AVX2
typedef v8 vf;
typedef v8u vfu;
typedef v8i vfi;
enum { VL = 8, NV = 3, NB = VL * NV };
#else
typedef v16 vf;
typedef v16u vfu;
typedef v16i vfi;
enum { VL = 16, NV = 6, NB = VL * NV };
#endif
_Static_assert(NNC_CONV_BLOCK % VL == 0, "nnc_conv.h rounds the grid up to vectors");

#define LD(v, p) ((v) = *(const vfu *)(p))
#define ST(p, v) (*(vfu *)(p) = (v))

/* Geometry of one padded image and its output grid. */
typedef struct {
    int64_t C, H, W, F, KH, KW, ph, pw;
    int64_t Pp, OH, OW;
    int64_t Lin, Lout; /* nnc_conv.h */
    int64_t S;         /* stride 1, or 2: the image in 4 phases of [C][Lin] */
} geom;

/* pitch and grid lengths from nnc_conv.h, so that the kernels lay out
 * exactly the buffer the compiler sized */
static geom make_geom(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t ph, int64_t pw)
{
    geom g = {C, H, W, F, KH, KW, ph, pw, 0, H + 2 * ph - KH + 1, W + 2 * pw - KW + 1, 0, 0, 1};
    nnc_conv_grid(H, W, KH, KW, ph, pw, &g.Lin, &g.Lout, &g.Pp);
    return g;
}

static geom make_geom2(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t ph, int64_t pw)
{
    geom g = {C, H, W, F, KH, KW, ph, pw, 0, (H + 2 * ph - KH) / 2 + 1, (W + 2 * pw - KW) / 2 + 1, 0, 0, 2};
    nnc_conv_grid2(H, W, KH, KW, ph, pw, &g.Lin, &g.Lout, &g.Pp);
    return g;
}

/* Tap offsets: a run of channels' taps is one flat loop over a table of
 * offsets into the padded image (the same for every run, relative to its
 * first channel), not loops over c, ky, kx: the nested loops (3 trips for
 * a 3x3 kernel) ran the micro-kernel at ~75 GFLOP/s in L1, the flat loop
 * at ~94, near the 105 of FMAs alone.  (Unrolling the taps instead made
 * gcc spill the accumulators.) */
enum { TAB = 4096 };
typedef struct {
    int32_t off[TAB];
    int64_t cc; /* channels per run: cc KH KW <= TAB */
} taps;

/* Where the micro-kernel stores straight into the output y[F][OH][OW]
 * (AVX-512 only): vector v of the grid (positions 16 v ..) holds the
 * valid positions mask[v] (ow < OW, oh < OH), which are consecutive in y
 * from dst[v] on; a compress and a masked store put them there, with the
 * bias and relu applied.  This replaces the grid's copy out, a pass over
 * F Lout floats per example that could not overlap the FMAs (the stores
 * here drain while the next block computes): 5-10% of a layer. */
enum { MAPN = 4096 }; /* grid vectors; larger grids take the copy out */
typedef struct {
    float *y;          /* this example's output */
    const float *add;  /* or NULL: added to it, of y's shape */
    const float *bias; /* or NULL */
    int relu;
    int64_t cs; /* OH OW */
    uint16_t mask[MAPN];
    int32_t dst[MAPN];
} out_map;

/* The block's sums out: into the grid yt, or through om straight into y
 * (bias, relu and the add applied there). */
static inline __attribute__((always_inline)) void micro_out(const geom *g, float *yt, const out_map *om, int64_t co,
                                                            int64_t f0, int mr, int nv, vf acc[4][NV])
{
#if defined(__AVX512F__)
    if (om) {
        for (int r = 0; r < mr; r++) {
            float *yr = om->y + (co + r) * om->cs;
            const float b = om->bias ? om->bias[co + r] : 0.0f;
            for (int j = 0; j < nv; j++) {
                const int64_t v = f0 / VL + j;
                v16 a = acc[r][j];
                if (om->bias)
                    a += b;
                if (om->relu) /* a > 0 ? a : 0, NaN and -0 to +0 */
                    a = (v16)_mm512_maskz_mov_ps(_mm512_cmp_ps_mask((__m512)a, _mm512_setzero_ps(), _CMP_GT_OQ),
                                                 (__m512)a);
                const __mmask16 k = om->mask[v];
                if (om->add)
                    a += (v16)_mm512_maskz_expandloadu_ps(k, om->add + (co + r) * om->cs + om->dst[v]);
                _mm512_mask_storeu_ps(yr + om->dst[v], (__mmask16)((1u << __builtin_popcount(k)) - 1u),
                                      _mm512_maskz_compress_ps(k, (__m512)a));
            }
        }
        return;
    }
#else
    (void)om;
#endif
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nv; j++)
            ST(yt + (co + r) * g->Lout + f0 + VL * j, acc[r][j]);
}

/* MR output channels x nv vectors of positions from f0: acc = sum over c
 * and taps. */
static inline __attribute__((always_inline)) void micro(const geom *g, const taps *tp, const float *xp, const float *w,
                                                        float *yt, const out_map *om, int64_t co, int64_t f0, int mr,
                                                        int nv)
{
    vf acc[4][NV];
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nv; j++)
            acc[r][j] = (vf){0};
    const int64_t KK = g->KH * g->KW, CKK = g->C * KK;
    for (int64_t c0 = 0; c0 < g->C; c0 += tp->cc) {
        const int64_t n = (g->C - c0 < tp->cc ? g->C - c0 : tp->cc) * KK;
        const float *x0 = xp + c0 * g->Lin + f0, *w0 = w + co * CKK + c0 * KK;
        for (int64_t i = 0; i < n; i++) {
            const float *xs = x0 + tp->off[i];
            vf xv[NV];
            for (int j = 0; j < nv; j++)
                LD(xv[j], xs + VL * j);
            for (int r = 0; r < mr; r++) {
                const float ws = w0[r * CKK + i];
                for (int j = 0; j < nv; j++)
                    acc[r][j] += xv[j] * ws;
            }
        }
    }
    micro_out(g, yt, om, co, f0, mr, nv, acc);
}

typedef void micro_fn(const geom *, const taps *, const float *, const float *, float *, const out_map *, int64_t,
                      int64_t);
#define MICRO(mr, nv) \
    static void micro##mr##_##nv(const geom *g, const taps *tp, const float *xp, const float *w, float *yt, \
                                 const out_map *om, int64_t co, int64_t f0) \
    { \
        micro(g, tp, xp, w, yt, om, co, f0, mr, nv); \
    }
MICRO(1, 1)
MICRO(2, 1)
MICRO(3, 1)
MICRO(4, 1)
MICRO(1, 2)
MICRO(2, 2)
MICRO(3, 2)
MICRO(4, 2)
MICRO(1, 3)
MICRO(2, 3)
MICRO(3, 3)
MICRO(4, 3)
#if !CONV_AVX2
MICRO(1, 4)
MICRO(2, 4)
MICRO(3, 4)
MICRO(4, 4)
MICRO(1, 5)
MICRO(2, 5)
MICRO(3, 5)
MICRO(4, 5)
MICRO(1, 6)
MICRO(2, 6)
MICRO(3, 6)
MICRO(4, 6)
#endif
#if defined(__AVX512F__)
/* The same block for a kernel of one row (KH 1, stride 1: Conv1D's) of
 * at most 8 taps, where the rows of the padded image are aligned (Lin a
 * multiple of 16, nnc_conv.h; xp at 64 bytes): per channel, its nv + 1
 * aligned vectors are loaded once and tap kx's vectors are those shifted
 * by kx floats (valignd), not nv loads at xs + kx that each cross a cache
 * line.  On an Ice Lake Xeon those split loads held the kernel to about
 * half of its FMA peak (docs/decisions.md).  The same products, summed
 * in the same order (c, then kx), so the same bits. */
static inline __attribute__((always_inline)) void micro_row(const geom *g, const float *xp, const float *w, float *yt,
                                                            const out_map *om, int64_t co, int64_t f0, int mr, int nv)
{
    vf acc[4][NV];
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nv; j++)
            acc[r][j] = (vf){0};
    const int64_t K = g->KW, CK = g->C * K;
    const float *w0 = w + co * CK;
    for (int64_t c = 0; c < g->C; c++, w0 += K) {
        const float *xs = xp + c * g->Lin + f0;
        __m512i v[NV + 1];
        for (int j = 0; j <= nv; j++)
            v[j] = _mm512_load_si512((const void *)(xs + VL * j));
#define ROW_TAP(kx) \
    if ((kx) < K) { \
        vf xv[NV]; \
        for (int j = 0; j < nv; j++) \
            xv[j] = (vf)_mm512_castsi512_ps((kx) ? _mm512_alignr_epi32(v[j + 1], v[j], (kx)) : v[j]); \
        for (int r = 0; r < mr; r++) { \
            const float ws = w0[r * CK + (kx)]; \
            for (int j = 0; j < nv; j++) \
                acc[r][j] += xv[j] * ws; \
        } \
    }
        ROW_TAP(0)
        ROW_TAP(1)
        ROW_TAP(2)
        ROW_TAP(3)
        ROW_TAP(4)
        ROW_TAP(5)
        ROW_TAP(6)
        ROW_TAP(7)
#undef ROW_TAP
    }
    micro_out(g, yt, om, co, f0, mr, nv, acc);
}

/* micro_row's most taps; its blocks of at most ROW_NV vectors (its nv + 1
 * loaded vectors beside MR nv sums: at 6 gcc spilled, and a Conv1D of 101
 * outputs ran 30% slower than in place) */
enum { ROW_TAPS = 8, ROW_NV = 5 };

#define MICRO_ROW(mr, nv) \
    static void micro_row##mr##_##nv(const geom *g, const taps *tp, const float *xp, const float *w, float *yt, \
                                     const out_map *om, int64_t co, int64_t f0) \
    { \
        (void)tp; \
        micro_row(g, xp, w, yt, om, co, f0, mr, nv); \
    }
MICRO_ROW(1, 1)
MICRO_ROW(2, 1)
MICRO_ROW(3, 1)
MICRO_ROW(4, 1)
MICRO_ROW(1, 2)
MICRO_ROW(2, 2)
MICRO_ROW(3, 2)
MICRO_ROW(4, 2)
MICRO_ROW(1, 3)
MICRO_ROW(2, 3)
MICRO_ROW(3, 3)
MICRO_ROW(4, 3)
MICRO_ROW(1, 4)
MICRO_ROW(2, 4)
MICRO_ROW(3, 4)
MICRO_ROW(4, 4)
MICRO_ROW(1, 5)
MICRO_ROW(2, 5)
MICRO_ROW(3, 5)
MICRO_ROW(4, 5)
static micro_fn *const micro_rows[NV][5] = {
    {NULL, micro_row1_1, micro_row2_1, micro_row3_1, micro_row4_1},
    {NULL, micro_row1_2, micro_row2_2, micro_row3_2, micro_row4_2},
    {NULL, micro_row1_3, micro_row2_3, micro_row3_3, micro_row4_3},
    {NULL, micro_row1_4, micro_row2_4, micro_row3_4, micro_row4_4},
    {NULL, micro_row1_5, micro_row2_5, micro_row3_5, micro_row4_5},
    {NULL}, /* (blocks of at most ROW_NV) */
};
#endif

/* [vectors - 1][channels] */
static micro_fn *const micros[NV][5] = {
    {NULL, micro1_1, micro2_1, micro3_1, micro4_1}, {NULL, micro1_2, micro2_2, micro3_2, micro4_2},
    {NULL, micro1_3, micro2_3, micro3_3, micro4_3},
#if !CONV_AVX2
    {NULL, micro1_4, micro2_4, micro3_4, micro4_4}, {NULL, micro1_5, micro2_5, micro3_5, micro4_5},
    {NULL, micro1_6, micro2_6, micro3_6, micro4_6},
#endif
};

/* n floats; the rows here are 4 to a few hundred floats, where a memcpy
 * call per row cost ~13% of a 32x32 layer.  The last vector overlaps the
 * one before instead of a scalar tail (d and s are distinct buffers): a
 * 28-float row took 1 vector and 12 scalar copies, a third of the time of
 * lenet5's first kernel gradient. */
static inline void copy(float *d, const float *s, int64_t n)
{
    if (n >= VL) {
        vf v;
        for (int64_t i = 0; i + VL <= n; i += VL) {
            LD(v, s + i);
            ST(d + i, v);
        }
        LD(v, s + n - VL);
        ST(d + n - VL, v);
    } else if (n >= 8) {
        v8 v;
        v = *(const v8u *)s;
        *(v8u *)d = v;
        v = *(const v8u *)(s + n - 8);
        *(v8u *)(d + n - 8) = v;
    } else
        for (int64_t i = 0; i < n; i++)
            d[i] = s[i];
}

/* Lanes of two vectors a, b (0 to VL - 1 of a, VL to 2 VL - 1 of b)
 * picked into one: the same operation under clang's and gcc's names. */
#if defined(__clang__)
#define SHUF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define SHUF(a, b, ...) __builtin_shuffle(a, b, (vfi){__VA_ARGS__})
#endif

/* A row's even and odd elements apart: ev[k] = s[2 k], od[k] = s[2 k + 1]
 * for k < n / 2 (and ev[n / 2] = s[n - 1] for odd n).  With vector
 * shuffles, 32 elements a step: the split took a quarter of a stride-2
 * layer's forward pass as two strided loops per row (which gcc
 * vectorized with a prologue and epilogue each), and the shuffles made
 * resnet_small's two such layers 10-13% faster (A/B in one process). */
static inline void deinterleave(float *restrict ev, float *restrict od, const float *restrict s, int64_t n)
{
    int64_t k = 0;
    for (; 2 * k + 2 * VL <= n; k += VL) {
        vf a, b;
        LD(a, s + 2 * k);
        LD(b, s + 2 * k + VL);
#if CONV_AVX2
        const vf e = SHUF(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
        const vf o = SHUF(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
#else
        const vf e = SHUF(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        const vf o = SHUF(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
#endif
        ST(ev + k, e);
        ST(od + k, o);
    }
    for (; 2 * k + 1 < n; k++) {
        ev[k] = s[2 * k];
        od[k] = s[2 * k + 1];
    }
    if (n % 2)
        ev[k] = s[n - 1];
}

/* The reverse: d[2 k] = ev[k], d[2 k + 1] = od[k] for 2 k + 1 < n (and
 * d[n - 1] = ev[n / 2] for odd n). */
static inline void interleave(float *restrict d, const float *restrict ev, const float *restrict od, int64_t n)
{
    int64_t k = 0;
    for (; 2 * k + 2 * VL <= n; k += VL) {
        vf e, o;
        LD(e, ev + k);
        LD(o, od + k);
#if CONV_AVX2
        const vf a = SHUF(e, o, 0, 8, 1, 9, 2, 10, 3, 11);
        const vf b = SHUF(e, o, 4, 12, 5, 13, 6, 14, 7, 15);
#else
        const vf a = SHUF(e, o, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const vf b = SHUF(e, o, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
#endif
        ST(d + 2 * k, a);
        ST(d + 2 * k + VL, b);
    }
    for (; 2 * k + 1 < n; k++) {
        d[2 * k] = ev[k];
        d[2 * k + 1] = od[k];
    }
    if (n % 2)
        d[n - 1] = ev[k];
}

/* One example's image x[C][H][W] into the interior of a zeroed padded
 * buffer: channel c at xp + c cs, rows of pitch Pp, ph rows and pw
 * columns of padding before the image. */
static void pad_image(float *xp, int64_t cs, int64_t Pp, int64_t ph, int64_t pw, const float *x, int64_t C, int64_t H,
                      int64_t W)
{
    for (int64_t c = 0; c < C; c++)
        for (int64_t i = 0; i < H; i++)
            copy(xp + c * cs + (i + ph) * Pp + pw, x + (c * H + i) * W, W);
}

/* n split into blocks of at most `most`, as even as can be (6 by at most
 * 4: 3 + 3, not 4 + 2): how many, and block i's size */
static int64_t even_blocks(int64_t n, int64_t most) { return (n + most - 1) / most; }
static int64_t even_block(int64_t n, int64_t blocks, int64_t i) { return n / blocks + (i < n % blocks); }

/* The output grid yt[F][Lout] of one example from its padded image xp,
 * or its valid positions straight into om->y where om is not NULL.  rows:
 * by micro_row, which reads tap kx of channel c at c Lin + kx from an
 * aligned xp (conv_direct's layout of a one-row kernel), not at tp's
 * offsets (the stride-2 data gradient's phases have rows of one tap too,
 * at other offsets). */
static void grid(const geom *g, const taps *tp, const float *xp, const float *w, float *yt, const out_map *om, int rows)
{
    /* position blocks outside, channel blocks inside: the block's input
     * rows (C x ~NB + (KH-1) Pp floats) stay in L1 for all F */
    /* channel blocks of at most 4, as even as can be (6 = 3 + 3: a block
     * of 2 feeds 12 FMAs with the same 6 loads as 24) */
    const int64_t nblk = even_blocks(g->F, 4);
    micro_fn *const(*table)[5] = micros;
    int64_t nvb = NV; /* vectors a block at most */
#if defined(__AVX512F__)
    if (rows)
        table = micro_rows, nvb = ROW_NV;
#else
    (void)rows;
#endif
    /* blocks of nvb vectors, or as even as can be where row blocks of
     * fewer vectors are taken */
    const int64_t nvec = g->Lout / VL, npos = even_blocks(nvec, nvb);
    for (int64_t p = 0, f0 = 0; p < npos; p++) {
        const int64_t nv = nvb == NV ? (nvec - p * NV < NV ? nvec - p * NV : NV) : even_block(nvec, npos, p);
        micro_fn *const *mk = table[nv - 1];
        for (int64_t k = 0, co = 0; k < nblk; k++) {
            const int64_t mr = even_block(g->F, nblk, k);
            mk[mr](g, tp, xp, w, yt, om, co, f0);
            co += mr;
        }
        f0 += nv * VL;
    }
}

/* y[n][F][OH][OW] = conv(x[n][C][H][W], w[F][C][KH][KW]) (+ bias[F],
 * then relu if relu), stride g->S, zero padding ph, pw; wk: the padded
 * image (its 4 phases at stride 2) then the output grid. */
static void conv_direct(const geom *g, int64_t N, const float *x, const float *w, const float *bias, int relu, float *y,
                        const float *add, float *wk)
{
    /* a kernel of one row reads its padded image by aligned vectors
     * (micro_row): its start rounded up to 64 bytes, in the slack that
     * nnc_conv.h leaves (nnc_conv_row_slack) */
    if (nnc_conv_row_slack(g->S, g->KH))
        wk += (64 - (uintptr_t)wk % 64) % 64 / sizeof(float);
    float *xp = wk, *yt = wk + (g->S == 2 ? 4 : 1) * g->C * g->Lin;
    /* there, its rows are whole vectors too (nnc_conv_grid rounds Lin
     * where KH is 1), and taps c, kx are at c Lin + kx (tp below) */
#if defined(__AVX512F__)
    const int rows = nnc_conv_row_slack(g->S, g->KH) && g->KW <= ROW_TAPS && nnc_isa_conv_rows();
#else
    const int rows = 0;
#endif
    taps tp;
    const int64_t KK = g->KH * g->KW;
    /* the tap offsets are int32: the whole padded image must fit (the
     * compiler uses the column path for kernels of more than TAB taps) */
    const int64_t planes = g->S == 2 ? 4 : 1;
    tp.cc = KK > TAB ? 0 : TAB / KK < g->C ? TAB / KK : g->C;
    if (tp.cc == 0 || planes * g->C * g->Lin > INT32_MAX) {
        fprintf(stderr,
                "nnc_conv2d: a %lldx%lld kernel on %lld channels of %lld floats is too large (internal error in nnc)\n",
                (long long)g->KH, (long long)g->KW, (long long)g->C, (long long)g->Lin);
        abort();
    }
    /* stride 2: tap (ky, kx) reads phase (ky % 2, kx % 2) at (ky / 2, kx / 2) */
    for (int64_t c = 0; c < tp.cc; c++)
        for (int64_t t = 0; t < KK; t++) {
            const int64_t ky = t / g->KW, kx = t % g->KW;
            tp.off[c * KK + t] =
                (int32_t)(g->S == 2 ? ((ky % 2) * 2 + kx % 2) * g->C * g->Lin + c * g->Lin + ky / 2 * g->Pp + kx / 2
                                    : c * g->Lin + ky * g->Pp + kx);
        }
    /* the border and slack stay zero: each example rewrites only the
     * interior rows */
    memset(xp, 0, sizeof(float) * (size_t)(planes * g->C * g->Lin));
    out_map *om = NULL;
#if defined(__AVX512F__)
    out_map map;
    if (g->Lout / VL <= MAPN) {
        om = &map;
        map.bias = bias, map.relu = relu, map.cs = g->OH * g->OW;
        for (int64_t v = 0; v < g->Lout / VL; v++) {
            const int64_t f = v * VL, row = f / g->Pp, col = f % g->Pp;
            map.dst[v] = (int32_t)(row < g->OH ? row * g->OW + (col < g->OW ? col : g->OW) : g->OH * g->OW);
            unsigned k = 0;
            for (int l = 0; l < VL; l++)
                k |= (unsigned)((f + l) / g->Pp < g->OH && (f + l) % g->Pp < g->OW) << l;
            map.mask[v] = (uint16_t)k;
        }
    }
#endif
    for (int64_t b = 0; b < N; b++) {
        const float *xb = x + b * g->C * g->H * g->W;
        if (g->S == 2)
            /* image row i is padded row r = i + ph: phase row r / 2 of the
             * phases (r % 2, 0) and (r % 2, 1), which take its columns q =
             * j + pw of that parity */
            for (int64_t c = 0; c < g->C; c++)
                for (int64_t i = 0; i < g->H; i++) {
                    const int64_t r = i + g->ph;
                    const float *restrict src = xb + (c * g->H + i) * g->W;
                    float *restrict ev = xp + ((r % 2) * 2) * g->C * g->Lin + c * g->Lin + r / 2 * g->Pp;
                    float *restrict od = ev + g->C * g->Lin;
                    /* column j lands in column (j + pw) / 2 of the phase
                     * of parity (j + pw) % 2: the image's even columns
                     * (j = 2 k) at k + pw / 2 of phase pw % 2, its odd ones
                     * at k + (pw + 1) / 2 of the other */
                    float *to_ev = g->pw % 2 ? od : ev, *to_od = g->pw % 2 ? ev : od;
                    deinterleave(to_ev + g->pw / 2, to_od + (g->pw + 1) / 2, src, g->W);
                }
        else
            pad_image(xp, g->Lin, g->Pp, g->ph, g->pw, xb, g->C, g->H, g->W);
        float *yb = y + b * g->F * g->OH * g->OW;
        const float *ab = add ? add + b * g->F * g->OH * g->OW : NULL;
        if (om) {
            om->y = yb;
            om->add = ab;
            grid(g, &tp, xp, w, yt, om, rows);
            continue;
        }
        grid(g, &tp, xp, w, yt, NULL, rows);
        if (bias) {
            /* the bias add and relu in the copy out of the grid */
            for (int64_t f = 0; f < g->F; f++)
                for (int64_t i = 0; i < g->OH; i++) {
                    float *d = yb + (f * g->OH + i) * g->OW;
                    const float *s = yt + f * g->Lout + i * g->Pp, bf = bias[f];
                    if (relu)
                        for (int64_t j = 0; j < g->OW; j++)
                            d[j] = s[j] + bf > 0.0f ? s[j] + bf : 0.0f;
                    else
                        for (int64_t j = 0; j < g->OW; j++)
                            d[j] = s[j] + bf;
                }
        } else
            for (int64_t f = 0; f < g->F; f++)
                for (int64_t i = 0; i < g->OH; i++) {
                    float *d = yb + (f * g->OH + i) * g->OW;
                    copy(d, yt + f * g->Lout + i * g->Pp, g->OW);
                    if (relu)
                        for (int64_t j = 0; j < g->OW; j++)
                            d[j] = d[j] > 0.0f ? d[j] : 0.0f;
                    if (ab) /* (the data gradients': no bias, no relu) */
                        for (int64_t j = 0; j < g->OW; j++)
                            d[j] += ab[(f * g->OH + i) * g->OW + j];
                }
    }
}

/* ---- Winograd F(2x2, 3x3): 4x4, 8x8, 16x16 and 32x32 images ---------------------
 *
 * resnet_small's last two stages (32 channels of 16x16, 64 of 8x8, three
 * 3x3 layers each) cost as much as the first while their images are
 * smaller; there the direct kernel also computes 72 positions for 64.
 * Winograd's minimal filtering does a 2x2 output tile from a 4x4 input
 * tile with 16 products instead of 36:
 *
 *     y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A
 *
 *     Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *     G  = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]
 *     Aᵀ = [1 1 1 0; 0 1 -1 -1]
 *
 * and summed over input channels the ⊙ becomes 16 matrix products, one per
 * transform position xi: M[xi][o][t] = sum over c of U[xi][c][o] V[xi][c][t]
 * (U = G g Gᵀ per (o, c), V = Bᵀ d B per (c, tile t)).  Tiles are vector
 * lanes, 64 of them a block (4 examples of 8x8, or one of 16x16).
 *
 * AVX-512: the products hold 4 vectors x up to 6 output channels in
 * registers.  An 8x8 image is 4 registers; its tiles' elements are picked
 * by two-register permutes (lanes outside the image zeroed by the
 * permute's mask).  A 16x16 image's tile rows are transformed along the
 * rows on whole image rows, then split into even and odd columns by
 * permutes.  The output tiles go back the same way.
 *
 * AVX2 (8 floats, 16 registers; no masks, no two-register permutes, no
 * scatter): a vector of tiles is 2 tile rows x 4 tile columns of one
 * example, in the lane order that in-lane shuffles give (wino_lane).  The
 * input transform goes along the columns first, on an image row's 8
 * columns and the same moved one column either way (one vector each), then
 * along the rows; an in-lane shuffle of two tile rows' results makes a
 * vector of tiles.  The output tiles come apart into image rows by in-lane
 * unpacks.  The products keep 12 accumulators: WMR x WNV below.  The
 * buffers are AVX-512's (nnc_conv.h), the kernel gradient's rows of
 * output channels rounded up to 8 instead of 16.  Measured at AVX2 against
 * its direct kernels (one thread, -O3 as the benchmark builds the
 * runtime, on a Zen 4 shared with other work, so +-10%; batches of 16
 * and 32, 32 to 128 channels): forward and data gradient 2.2-2.5x on 8x8
 * (64 channels, 32 examples: 0.80 against 1.96 ms) and 1.8-2.0x on 16x16
 * (32 channels: 0.84 against 1.55), kernel gradient 1.9-2.5x on 8x8
 * (0.77 against 1.60) and 1.7-2.8x on 16x16 (0.86 against 1.51); 33, 35
 * and 40 channels, and batches of 1 and 2, 1.4-2.5x.  No layer of the
 * class is left to the direct kernels.  AVX-512 runs the same layers
 * 5-14% faster than AVX2 there (Zen 4 does a 512-bit FMA as two halves:
 * the difference is the transforms and the products' broadcasts).
 *
 * The coefficients are 0, ±1 and ±½, exact in float; for finite inputs the
 * result differs from the direct sum by rounding (about 1e-6 relative
 * here); inputs with an infinity take the direct kernel (see "Infinities"
 * below).  The data gradient is the same convolution of dy with the
 * flipped, transposed kernel; the kernel gradient is the adjoint
 * (wino_filter).  Measured alone against the direct kernels at AVX-512, 64
 * channels of 8x8: forward 0.78 against 1.44 ms, kernel gradient 0.95
 * against 1.58; 32 channels of 16x16: forward 1.1 against 1.33, kernel
 * gradient even (1.36 against 1.37-1.48).  A first version that gathered
 * the 16x16 tiles ran slower than the direct kernel; 32x32 layers of 16
 * channels (resnet_small's first stage) are left to the direct kernel,
 * whose products there would be only 16 deep (docs/decisions.md).
 *
 * 4x4 images (resnet18's last stage) are 4 tiles each, 16 examples a
 * block.  At AVX-512 four such images are the 4 registers that an 8x8
 * image is, so wino_in is the same permutes with other tables; an
 * image's output is two permutes and a blend.  At AVX2 a vector of tiles
 * is two examples', each tile element gathered (wino_in4), the outputs
 * unpacked.  Their weights outweigh their tiles (U is 16 C F floats),
 * so threads.c splits them by output channels
 * (nnc_conv2d_wino_part_f32). */
#if defined(__AVX512F__) || CONV_AVX2
/* The 16 planes (one per transform position) of U, V, M and the kernel
 * gradient's buffers are NNC_WINO_PAD floats longer than their contents:
 * at 8 or 16 KB apart, the same offset of every plane fell in one L1 set,
 * and the 16 stores of a transform evicted each other (16x16 layers' input
 * transform took a third of the layer). */
#define PLANE(n) ((n) + NNC_WINO_PAD)

/* Infinities: the transforms take differences of inputs, so an inf in x
 * (or dy) would give inf - inf = NaN where the direct sum, and PyTorch,
 * give ±inf.  The input transforms look for one as they load (wino_in,
 * wino_in16, dy's tiles in wino_filter); the call then stops and is done
 * again by the direct kernels (whose work the buffer also holds), which
 * rewrite every output (the data gradient's addend never overlaps dx:
 * nnc_runtime.h).  A NaN is no infinity: it stays a NaN, in the outputs
 * whose window holds it as in the direct sum.  (The kernel gradient's
 * transforms do take a NaN of x on an image's edge into all 9 taps of its
 * channel, where the direct sum leaves finite the 3, or 5 at a corner,
 * that never read it: their coefficients cancel, a NaN does not.)
 * winf_of(v): where v is ±inf, as a mask (AVX-512's fpclass) or as lanes
 * of all ones (AVX2: |v| == inf, false for NaN); winf_or joins two. */

/* The build's vector for Winograd, wv of VL floats, and the operations
 * that the products and the transforms need besides + - *.  The
 * transforms' arithmetic is written with operators: for both builds the
 * intrinsics are those same operations (gcc's and clang's headers), so
 * the AVX-512 code compiles as it did with _mm512_add_ps and kin.  The
 * products' register blocks: WMR output channels x WNV vectors of tiles
 * (wino_mm), WFMR input channels x WFNV vectors of output channels
 * (wino_fmm). */
#if defined(__AVX512F__)
typedef __m512 wv;
typedef __mmask16 winf;
#define WLOAD(p) _mm512_loadu_ps(p)
#define WSTORE(p, v) _mm512_storeu_ps(p, v)
#define WSET1(s) _mm512_set1_ps(s)
#define WZERO() _mm512_setzero_ps()
#define WFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
static inline winf winf_of(wv v) { return _mm512_fpclass_ps_mask(v, 0x18); }
static inline winf winf_or(winf a, winf b) { return a | b; }
static inline int winf_any(winf a) { return a != 0; }
#define WINF_NONE 0
enum { WMR = 6, WNV = 4, WFMR = 6, WFNV = 4 };
#else
typedef __m256 wv;
typedef __m256 winf;
#define WLOAD(p) _mm256_loadu_ps(p)
#define WSTORE(p, v) _mm256_storeu_ps(p, v)
#define WSET1(s) _mm256_set1_ps(s)
#define WZERO() _mm256_setzero_ps()
#define WFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
static inline winf winf_of(wv v)
{
    return _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), v), _mm256_set1_ps(INFINITY), _CMP_EQ_OQ);
}
static inline winf winf_or(winf a, winf b) { return _mm256_or_ps(a, b); }
static inline int winf_any(winf a) { return _mm256_movemask_ps(a) != 0; }
#define WINF_NONE _mm256_setzero_ps()
enum { WMR = 6, WNV = 2, WFMR = 6, WFNV = 2 };
#endif
_Static_assert(sizeof(wv) == VL * sizeof(float), "Winograd's vector is the build's");

/* The one-dimensional transforms, each applied along the rows and then
 * along the columns of a tile (4 or 16 vectors of lanes side by side). */
static inline void wino_bt(wv d0, wv d1, wv d2, wv d3, wv u[4]) /* Bᵀ d */
{
    u[0] = d0 - d2;
    u[1] = d1 + d2;
    u[2] = d2 - d1;
    u[3] = d1 - d3;
}

static inline void wino_g(wv g0, wv g1, wv g2, wv u[4]) /* G g */
{
    const wv half = WSET1(0.5f), s = g0 + g2;
    u[0] = g0;
    u[1] = half * (s + g1);
    u[2] = half * (s - g1);
    u[3] = g2;
}

static inline void wino_at(wv m0, wv m1, wv m2, wv m3, wv y[2]) /* Aᵀ m */
{
    y[0] = (m0 + m1) + m2;
    y[1] = (m1 - m2) - m3;
}

static inline void wino_a(wv e0, wv e1, wv z[4]) /* A e, the adjoint of Aᵀ */
{
    z[0] = e0;
    z[1] = e0 + e1;
    z[2] = e0 - e1;
    z[3] = WZERO() - e1; /* (not -e1: 0 - 0 is +0) */
}

static inline void wino_gt(wv u0, wv u1, wv u2, wv u3, wv w[3]) /* Gᵀ u, the adjoint of G */
{
    const wv p = WSET1(0.5f) * (u1 + u2);
    w[0] = u0 + p;
    w[1] = WSET1(0.5f) * (u1 - u2);
    w[2] = p + u3;
}

/* bias and relu on a vector of output channel o (as conv_direct: relu
 * takes NaN and -0 to +0) */
static inline wv wino_act(wv r, const float *bias, int64_t o, int relu)
{
    if (bias)
        r = r + WSET1(bias[o]);
#if defined(__AVX512F__)
    if (relu)
        r = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(r, WZERO(), _CMP_GT_OQ), r);
#else
    if (relu) /* maxps gives its second operand for NaN and -0 */
        r = _mm256_max_ps(r, WZERO());
#endif
    return r;
}

/* out[2 i + j] = (Aᵀ M A)[i][j] for a vector of tiles whose M is in the
 * 16 planes (`plane` floats apart) from mp */
static inline void wino_atma(const float *mp, int64_t plane, wv out[4])
{
    wv s[4][2]; /* Aᵀ M by columns: s[k][i] */
    for (int k = 0; k < 4; k++)
        wino_at(WLOAD(mp + k * plane), WLOAD(mp + (4 + k) * plane), WLOAD(mp + (8 + k) * plane),
                WLOAD(mp + (12 + k) * plane), s[k]);
    for (int i = 0; i < 2; i++)
        wino_at(s[0][i], s[1][i], s[2][i], s[3][i], out + 2 * i);
}

/* Bᵀ d B for a vector of tiles whose element (r, k) is d[r][k], into the
 * 16 planes (`plane` floats apart) from vp */
static inline void wino_btdb(wv d[4][4], float *vp, int64_t plane)
{
    wv t[4][4]; /* Bᵀ d by columns: t[k][i] */
    for (int k = 0; k < 4; k++)
        wino_bt(d[0][k], d[1][k], d[2][k], d[3][k], t[k]);
    for (int i = 0; i < 4; i++) {
        wv u[4];
        wino_bt(t[0][i], t[1][i], t[2][i], t[3][i], u);
        for (int j = 0; j < 4; j++)
            WSTORE(vp + (i * 4 + j) * plane, u[j]);
    }
}

/* M[o0 .. o0+mr][64] = sum over c of U[c][o] V[c][..]: nv vectors of tiles
 * (V and M: from the block's first vector) */
static inline __attribute__((always_inline)) void wino_mm(const float *V, const float *U, float *M, int64_t C,
                                                          int64_t F, int64_t o0, int mr, int nv)
{
    wv acc[WMR][WNV];
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nv; j++)
            acc[r][j] = WZERO();
    for (int64_t c = 0; c < C; c++) {
        wv v[WNV];
        for (int j = 0; j < nv; j++)
            v[j] = WLOAD(V + c * 64 + VL * j);
        for (int r = 0; r < mr; r++) {
            const wv u = WSET1(U[c * F + o0 + r]);
            for (int j = 0; j < nv; j++)
                acc[r][j] = WFMA(u, v[j], acc[r][j]);
        }
    }
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nv; j++)
            WSTORE(M + (o0 + r) * 64 + VL * j, acc[r][j]);
}
typedef void wino_mm_fn(const float *, const float *, float *, int64_t, int64_t, int64_t);
#define WINO_MM(mr, nv) \
    static void wino_mm##mr##_##nv(const float *V, const float *U, float *M, int64_t C, int64_t F, int64_t o0) \
    { \
        wino_mm(V, U, M, C, F, o0, mr, nv); \
    }

/* The kernel's gradient, the adjoint of the above: with Z = A dY Aᵀ per
 * output tile (dY its 2x2 of dy), dU[xi][c][o] = sum over examples and
 * tiles of V[xi][c][t] Z[xi][t][o], and dw[o][c] = Gᵀ dU G.  acc[mr][nvo]:
 * mr input channels from c0 x nvo vectors of output channels from o0,
 * over the block's tiles t < nt; dU's rows are Fp (F rounded up to VL)
 * floats, Z's too (the lanes past F are 0). */
static inline __attribute__((always_inline)) void wino_fmm(const float *V, const float *Z, float *dU, int64_t Fp,
                                                           int64_t c0, int64_t o0, int nt, int first, int mr, int nvo)
{
    wv acc[WFMR][WFNV];
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nvo; j++)
            acc[r][j] = first ? WZERO() : WLOAD(dU + (c0 + r) * Fp + o0 + VL * j);
    for (int t = 0; t < nt; t++) {
        wv z[WFNV];
        for (int j = 0; j < nvo; j++)
            z[j] = WLOAD(Z + t * Fp + o0 + VL * j);
        for (int r = 0; r < mr; r++) {
            const wv v = WSET1(V[(c0 + r) * 64 + t]);
            for (int j = 0; j < nvo; j++)
                acc[r][j] = WFMA(v, z[j], acc[r][j]);
        }
    }
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nvo; j++)
            WSTORE(dU + (c0 + r) * Fp + o0 + VL * j, acc[r][j]);
}
typedef void wino_fmm_fn(const float *, const float *, float *, int64_t, int64_t, int64_t, int, int);
#define WINO_FMM(mr, nvo) \
    static void wino_fmm##mr##_##nvo(const float *V, const float *Z, float *dU, int64_t Fp, int64_t c0, int64_t o0, \
                                     int nt, int first) \
    { \
        wino_fmm(V, Z, dU, Fp, c0, o0, nt, first, mr, nvo); \
    }

/* the instances, and their tables [vectors - 1][channels] */
/* clang-format off */
#define WINO_COLS6(M, nv) M(1, nv) M(2, nv) M(3, nv) M(4, nv) M(5, nv) M(6, nv)
#define WINO_ROW6(f, nv) {NULL, f##1_##nv, f##2_##nv, f##3_##nv, f##4_##nv, f##5_##nv, f##6_##nv}
#if defined(__AVX512F__)
/* up to 6 channels x 4 vectors: 24 accumulators of 32 registers */
WINO_COLS6(WINO_MM, 1) WINO_COLS6(WINO_MM, 2) WINO_COLS6(WINO_MM, 3) WINO_COLS6(WINO_MM, 4)
static wino_mm_fn *const wino_mms[WNV][WMR + 1] = {
    WINO_ROW6(wino_mm, 1), WINO_ROW6(wino_mm, 2), WINO_ROW6(wino_mm, 3), WINO_ROW6(wino_mm, 4)};
WINO_COLS6(WINO_FMM, 1) WINO_COLS6(WINO_FMM, 2) WINO_COLS6(WINO_FMM, 3) WINO_COLS6(WINO_FMM, 4)
static wino_fmm_fn *const wino_fmms[WFNV][WFMR + 1] = {
    WINO_ROW6(wino_fmm, 1), WINO_ROW6(wino_fmm, 2), WINO_ROW6(wino_fmm, 3), WINO_ROW6(wino_fmm, 4)};
#else
/* up to 6 channels x 2 vectors: 12 accumulators, the 2 vectors loaded and
 * a broadcast, 15 of the 16 registers.  4 x 3 (16 registers) ran as fast
 * (within 1-2% either way, one thread), but 4 vectors (32 output
 * channels of the kernel gradient) went as 3 + 1 and ran 12-15% slower. */
WINO_COLS6(WINO_MM, 1) WINO_COLS6(WINO_MM, 2)
static wino_mm_fn *const wino_mms[WNV][WMR + 1] = {WINO_ROW6(wino_mm, 1), WINO_ROW6(wino_mm, 2)};
WINO_COLS6(WINO_FMM, 1) WINO_COLS6(WINO_FMM, 2)
static wino_fmm_fn *const wino_fmms[WFNV][WFMR + 1] = {WINO_ROW6(wino_fmm, 1), WINO_ROW6(wino_fmm, 2)};
#endif
/* clang-format on */

#if defined(__AVX512F__)
/* ---- AVX-512: the transforms by two-register permutes ---- */

/* the first n of 16 lanes */
static inline __mmask16 wino_lanes(int64_t n) { return (__mmask16)(n >= 16 ? 0xFFFF : (1u << n) - 1); }

/* U[16][C][F] = G g Gᵀ for g = w[o][c] (flip: g = w[c][o] rotated by 180
 * degrees, w being [C][ldw][3][3], ldw >= F: the data gradient's kernel),
 * 16 output channels at a time */
static void wino_kernel(const float *w, int64_t C, int64_t F, int flip, int64_t ldw, float *U)
{
    const int32_t stride = (int32_t)(flip ? 9 : C * 9);
    int32_t ix[16];
    for (int l = 0; l < 16; l++)
        ix[l] = l * stride;
    const __m512i idx = _mm512_loadu_si512(ix);
    for (int64_t c = 0; c < C; c++)
        for (int64_t o0 = 0; o0 < F; o0 += 16) {
            const __mmask16 k = wino_lanes(F - o0);
            const float *w0 = flip ? w + (c * ldw + o0) * 9 : w + (o0 * C + c) * 9;
            __m512 g[3][3];
            for (int t = 0; t < 9; t++) {
                const int ky = flip ? 2 - t / 3 : t / 3, kx = flip ? 2 - t % 3 : t % 3;
                g[ky][kx] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, idx, w0 + t, 4);
            }
            __m512 r[3][4]; /* G g, by columns: r[j][i] */
            for (int j = 0; j < 3; j++)
                wino_g(g[0][j], g[1][j], g[2][j], r[j]);
            for (int i = 0; i < 4; i++) { /* (G g) Gᵀ */
                __m512 u[4];
                wino_g(r[0][i], r[1][i], r[2][i], u);
                for (int j = 0; j < 4; j++)
                    _mm512_mask_storeu_ps(U + (i * 4 + j) * PLANE(C * F) + c * F + o0, k, u[j]);
            }
        }
}

/* The permutes' tables.  Input: tile lane l = (ty, tx) = (l / 4, l % 4)
 * takes its element (r, k) from the image's e = (2 ty + r - 1) 8 + 2 tx + k
 * - 1 where that is inside: lane e % 32 of X0:X1 (e < 32) or of X2:X3 (X:
 * the image's 4 vectors of 16).  Output: vector m (rows 2m, 2m+1) lane p
 * is tile (m, (p % 8) / 2)'s element (p / 8, p % 2): lane 4 m + tx of the
 * tile vector 2 (p / 8) + p % 2, picked from t0:t1 for p < 8 and t2:t3
 * after. */
typedef struct {
    __m512i in_idx[16], out_idx[4];
    __mmask16 in_lo[16], in_hi[16];
    /* 4x4 (wino_in, wino_out): a vector of tiles is 4 examples' 4 tiles,
     * lane l = 4 g + 2 ty + tx (wino_lane); element (r, k) of example g's
     * tile is its pixel e = (2 ty + r - 1) 4 + 2 tx + k - 1 where that is
     * inside: lane e of X[g], X[0]:X[1] for g < 2 (in4_lo) and X[2]:X[3]
     * after (in4_hi).  Out: example g's pixel (row, col) is element (row %
     * 2, col % 2) of tile (row / 2, col / 2): lane 4 g + 2 (row / 2) + col /
     * 2 of out[2 (row % 2) + col % 2], picked from out[0]:out[1] (rows 0, 2)
     * or out[2]:out[3] (rows 1, 3, lanes 0xF0F0) */
    __m512i in4_idx[16], out4_idx[4];
    __mmask16 in4_lo[16], in4_hi[16];
    /* 16x16 (wino_in16, wino's output): a tile vector is 2 tile rows of 8; a
     * row transform's 16 columns of tile rows a:b split into even columns
     * (ev), odd ones (od), odd ones one tile back (od1: column 2 tx - 1,
     * zero at tx = 0) and even ones one ahead (ev1: 2 tx + 2, zero at tx =
     * 7); and back: image row of tile row a (r0) or b (r1) from the output
     * tile columns j = 0:1 */
    __m512i ev, od, od1, ev1, r0, r1;
    /* 32x32 (wino_in32): a tile vector is one tile row of 16, its row
     * transform's 32 columns the two vectors a:b; the same four splits
     * over both (od1 zero at tx = 0, ev1 at tx = 15).  The output's rows
     * take r0 (columns 0 .. 15) and r1 (16 .. 31) as 16x16's do. */
    __m512i ev2, od2, od12, ev12;
} wino_tab;

static void wino_tables(wino_tab *tb)
{
    for (int rk = 0; rk < 16; rk++) {
        int32_t ix[16];
        unsigned lo = 0, hi = 0;
        for (int l = 0; l < 16; l++) {
            const int R = 2 * (l / 4) + rk / 4 - 1, Cc = 2 * (l % 4) + rk % 4 - 1, e = R * 8 + Cc;
            const int in = R >= 0 && R < 8 && Cc >= 0 && Cc < 8;
            ix[l] = in ? e % 32 : 0;
            lo |= (unsigned)(in && e < 32) << l;
            hi |= (unsigned)(in && e >= 32) << l;
        }
        tb->in_idx[rk] = _mm512_loadu_si512(ix);
        tb->in_lo[rk] = (__mmask16)lo, tb->in_hi[rk] = (__mmask16)hi;
        lo = hi = 0;
        for (int l = 0; l < 16; l++) {
            const int g = l / 4, R = 2 * (l % 4 / 2) + rk / 4 - 1, Cc = 2 * (l % 2) + rk % 4 - 1;
            const int in = R >= 0 && R < 4 && Cc >= 0 && Cc < 4;
            ix[l] = in ? g % 2 * 16 + R * 4 + Cc : 0;
            lo |= (unsigned)(in && g < 2) << l;
            hi |= (unsigned)(in && g >= 2) << l;
        }
        tb->in4_idx[rk] = _mm512_loadu_si512(ix);
        tb->in4_lo[rk] = (__mmask16)lo, tb->in4_hi[rk] = (__mmask16)hi;
    }
    for (int g = 0; g < 4; g++) {
        int32_t ix[16];
        for (int e = 0; e < 16; e++)
            ix[e] = e % 2 * 16 + 4 * g + 2 * (e / 8) + e % 4 / 2;
        tb->out4_idx[g] = _mm512_loadu_si512(ix);
    }
    for (int m = 0; m < 4; m++) {
        int32_t ix[16];
        for (int p = 0; p < 16; p++)
            ix[p] = (p % 2) * 16 + 4 * m + (p % 8) / 2;
        tb->out_idx[m] = _mm512_loadu_si512(ix);
    }
    int32_t ev[16], od[16], od1[16], ev1[16], r0[16], r1[16];
    for (int l = 0; l < 16; l++) {
        const int h = l / 8 * 16, tx = l % 8; /* lanes 8..15: the second tile row, from b */
        ev[l] = h + 2 * tx, od[l] = h + 2 * tx + 1;
        od1[l] = tx ? h + 2 * tx - 1 : 0, ev1[l] = tx < 7 ? h + 2 * tx + 2 : 0;
        r0[l] = (l % 2) * 16 + l / 2, r1[l] = (l % 2) * 16 + 8 + l / 2;
    }
    tb->ev = _mm512_loadu_si512(ev), tb->od = _mm512_loadu_si512(od);
    tb->od1 = _mm512_loadu_si512(od1), tb->ev1 = _mm512_loadu_si512(ev1);
    tb->r0 = _mm512_loadu_si512(r0), tb->r1 = _mm512_loadu_si512(r1);
    for (int l = 0; l < 16; l++) {
        ev[l] = 2 * l, od[l] = 2 * l + 1;
        od1[l] = l ? 2 * l - 1 : 0, ev1[l] = l < 15 ? 2 * l + 2 : 0;
    }
    tb->ev2 = _mm512_loadu_si512(ev), tb->od2 = _mm512_loadu_si512(od);
    tb->od12 = _mm512_loadu_si512(od1), tb->ev12 = _mm512_loadu_si512(ev1);
}

/* V[16][C][64] for one 16x16 example x[C][16][16]: tile vector q is tile
 * rows 2q and 2q+1; Bᵀ over the rows on whole image rows, then Bᵀ over
 * the columns on their even/odd split */
static int wino_in16(const wino_tab *tb, const float *x, int64_t C, float *V)
{
    const __m512 z = _mm512_setzero_ps();
    __mmask16 inf = 0;
    const __mmask16 no_first = 0xFEFE, no_last = 0x7F7F; /* tx > 0, tx < 7 in each half */
    for (int64_t c = 0; c < C; c++) {
        const float *src = x + c * 256;
        for (int q = 0; q < 4; q++) {
            /* image rows 4q - 1 .. 4q + 4 (0 outside) */
            __m512 R[6];
            for (int k = 0; k < 6; k++) {
                const int r = 4 * q - 1 + k;
                R[k] = r >= 0 && r < 16 ? _mm512_loadu_ps(src + r * 16) : z;
                inf |= _mm512_fpclass_ps_mask(R[k], 0x18);
            }
            /* tile row 2q + h reads rows R[2h .. 2h+3]: Bᵀ d over them */
            __m512 t[2][4];
            for (int h = 0; h < 2; h++)
                wino_bt(R[2 * h], R[2 * h + 1], R[2 * h + 2], R[2 * h + 3], t[h]);
            float *vp = V + c * 64 + q * 16;
            for (int i = 0; i < 4; i++) {
                /* a tile's columns 2 tx - 1 .. 2 tx + 2 */
                const __m512 e = _mm512_permutex2var_ps(t[0][i], tb->ev, t[1][i]);
                const __m512 o = _mm512_permutex2var_ps(t[0][i], tb->od, t[1][i]);
                const __m512 o1 = _mm512_maskz_permutex2var_ps(no_first, t[0][i], tb->od1, t[1][i]);
                const __m512 e1 = _mm512_maskz_permutex2var_ps(no_last, t[0][i], tb->ev1, t[1][i]);
                __m512 u[4];
                wino_bt(o1, e, o, e1, u);
                for (int j = 0; j < 4; j++)
                    _mm512_storeu_ps(vp + (i * 4 + j) * PLANE(C * 64), u[j]);
            }
        }
    }
    return inf != 0;
}

/* V[16][C][64] for quarter `part` of one 32x32 example x[C][32][32]: its
 * tile rows 4 part .. 4 part + 3 (image rows 8 part - 1 .. 8 part + 8),
 * tile vector q being tile row 4 part + q; Bᵀ over the rows on whole
 * image rows (two vectors each), then over the columns on their split */
static int wino_in32(const wino_tab *tb, const float *x, int64_t C, int part, float *V)
{
    const __m512 z = _mm512_setzero_ps();
    __mmask16 inf = 0;
    for (int64_t c = 0; c < C; c++) {
        const float *src = x + c * 1024;
        for (int q = 0; q < 4; q++) {
            __m512 R[4][2]; /* image rows 2 ty - 1 .. 2 ty + 2 (0 outside) */
            for (int k = 0; k < 4; k++) {
                const int r = 2 * (4 * part + q) - 1 + k;
                for (int h = 0; h < 2; h++) {
                    R[k][h] = r >= 0 && r < 32 ? _mm512_loadu_ps(src + r * 32 + 16 * h) : z;
                    inf |= _mm512_fpclass_ps_mask(R[k][h], 0x18);
                }
            }
            __m512 t[2][4]; /* Bᵀ d over the rows, each half of the columns */
            for (int h = 0; h < 2; h++)
                wino_bt(R[0][h], R[1][h], R[2][h], R[3][h], t[h]);
            float *vp = V + c * 64 + q * 16;
            for (int i = 0; i < 4; i++) {
                const __m512 e = _mm512_permutex2var_ps(t[0][i], tb->ev2, t[1][i]);
                const __m512 o = _mm512_permutex2var_ps(t[0][i], tb->od2, t[1][i]);
                const __m512 o1 = _mm512_maskz_permutex2var_ps(0xFFFE, t[0][i], tb->od12, t[1][i]);
                const __m512 e1 = _mm512_maskz_permutex2var_ps(0x7FFF, t[0][i], tb->ev12, t[1][i]);
                __m512 u[4];
                wino_bt(o1, e, o, e1, u);
                for (int j = 0; j < 4; j++)
                    _mm512_storeu_ps(vp + (i * 4 + j) * PLANE(C * 64), u[j]);
            }
        }
    }
    return inf != 0;
}

/* V[16][C][64] lanes 16 bi .. for the nb images x[0..nb][C][8][8] (S = 8:
 * X the image's 4 vectors), or for 4 of the nb images x[0..nb][C][4][4]
 * (S = 4: X one vector of each, 0 past nb), all 64 for one x[C][16][16]
 * (S = 16) or for quarter `part` of one x[C][32][32] (S = 32; part is 0
 * for the others): Bᵀ d B.  Returns whether x held an infinity
 * ("Infinities"). */
static int wino_in(const wino_tab *tb, const float *x, int nb, int64_t C, int64_t S, int part, float *V)
{
    if (S == 32)
        return wino_in32(tb, x, C, part, V);
    if (S == 16)
        return wino_in16(tb, x, C, V);
    const int four = S == 4;
    const __m512i *idx = four ? tb->in4_idx : tb->in_idx;
    const __mmask16 *lo = four ? tb->in4_lo : tb->in_lo, *hi = four ? tb->in4_hi : tb->in_hi;
    __mmask16 inf = 0;
    for (int bi = 0; bi < (four ? (nb + 3) / 4 : nb); bi++)
        for (int64_t c = 0; c < C; c++) {
            __m512 X[4];
            for (int g = 0; g < 4; g++) {
                const int64_t e = four ? 4 * bi + g : bi; /* the example */
                X[g] = e < nb ? _mm512_loadu_ps(x + (e * C + c) * S * S + (four ? 0 : 16 * g)) : _mm512_setzero_ps();
                inf |= _mm512_fpclass_ps_mask(X[g], 0x18);
            }
            __m512 d[4][4];
            for (int rk = 0; rk < 16; rk++)
                d[rk / 4][rk % 4] = _mm512_mask_mov_ps(_mm512_maskz_permutex2var_ps(lo[rk], X[0], idx[rk], X[1]),
                                                       hi[rk], _mm512_permutex2var_ps(X[2], idx[rk], X[3]));
            wino_btdb(d, V + c * 64 + bi * 16, PLANE(C * 64));
        }
    return inf != 0;
}

/* y[nb][Fy][S][S] channels 0 .. F (+ bias, relu, + add[nb][Fy][S][S]: as
 * conv_direct) = Aᵀ M A from the block's M [16][F][64]; for S = 32, y (and
 * add) at the block's first row: its 8 rows of each channel */
static void wino_out(const wino_tab *tb, const float *M, int64_t F, int64_t Fy, int64_t S, int nb, float *y,
                     const float *bias, int relu, const float *add)
{
    const int nv = S == 4 ? (nb + 3) / 4 : S == 8 ? nb : 4;
    for (int bi = 0; bi < nv; bi++) /* bi: a tile vector */
        for (int64_t o = 0; o < F; o++) {
            const float *mp = M + o * 64 + bi * 16;
            __m512 out[4];
            wino_atma(mp, PLANE(F * 64), out);
            /* 8x8: example bi, all its 4 vectors; 16x16: rows 4 bi .. 4 bi +
             * 3; 32x32: rows 2 bi, 2 bi + 1, two vectors each; 4x4:
             * examples 4 bi .. 4 bi + 3 (as many as there are) */
            const int64_t at = S == 4 ? (4 * bi * Fy + o) * 16
                : S == 8              ? (bi * Fy + o) * 64
                : S == 16             ? o * 256 + 64 * bi
                                      : o * 1024 + 64 * bi;
            const int nm = S == 4 && nb - 4 * bi < 4 ? nb - 4 * bi : 4;
            for (int m = 0; m < nm; m++) {
                __m512 v;
                if (S == 4)
                    v = _mm512_mask_mov_ps(_mm512_permutex2var_ps(out[0], tb->out4_idx[m], out[1]), 0xF0F0,
                                           _mm512_permutex2var_ps(out[2], tb->out4_idx[m], out[3]));
                else if (S == 8)
                    v = _mm512_mask_mov_ps(_mm512_permutex2var_ps(out[0], tb->out_idx[m], out[1]), 0xFF00,
                                           _mm512_permutex2var_ps(out[2], tb->out_idx[m], out[3]));
                else /* 16x16: row 4 bi + m, tile row 2 bi + m / 2, its row m %
                      * 2: out[2 (m % 2)], out[2 (m % 2) + 1]; 32x32: row 2 bi + m
                      * % 2, columns 16 (m / 2) .. */
                    v = _mm512_permutex2var_ps(out[2 * (m % 2)], m / 2 ? tb->r1 : tb->r0, out[2 * (m % 2) + 1]);
                v = wino_act(v, bias, o, relu);
                /* the example's next output channel, or the next 16 outputs
                 * (32x32: m = 0 .. 3 the row's first half, the next row's, the
                 * second halves) */
                const int64_t p = at + (S == 4 ? Fy * 16 * m : S == 32 ? 32 * (m % 2) + 16 * (m / 2) : 16 * m);
                if (add)
                    v = _mm512_add_ps(v, _mm512_loadu_ps(add + p));
                _mm512_storeu_ps(y + p, v);
            }
        }
}

/* the lane of V (and row of Z) that holds tile (ty, tx) of the block's
 * example bi: tiles in row order, 16 an 8x8 example, 4 a 4x4 one */
static inline int64_t wino_lane(int64_t S, int64_t bi, int64_t ty, int64_t tx)
{
    return bi * (S * S / 4) + ty * (S / 2) + tx;
}

#else
/* ---- AVX2: the transforms by in-lane shuffles ---- */

/* no tables */
typedef struct {
    char none;
} wino_tab;
static void wino_tables(wino_tab *tb) { (void)tb; }

/* A vector of 8 tiles is tile rows 2q, 2q+1 x tile columns 4h .. 4h+3 of
 * one example, lane l the tile (2q + l / 2 % 2, 4h + 2 (l / 4) + l % 2):
 * the order in which _mm256_shuffle_ps takes the even (or odd) lanes of two
 * vectors, a half of each at a time, and _mm256_unpack*_ps puts two apart
 * again.  Vectors in a block: an example's S S / 32 (2 of 8x8, 8 of
 * 16x16), q S / 8 + h among them.  This gives the lane of tile (ty, tx) of
 * the block's example bi, in V and in Z. */
static inline int64_t wino_lane(int64_t S, int64_t bi, int64_t ty, int64_t tx)
{
    if (S == 4) /* 4x4: two examples a vector, each its 4 tiles in row order */
        return 4 * bi + 2 * ty + tx;
    return 8 * (bi * (S * S / 32) + ty / 2 * (S / 8) + tx / 4) + 4 * (tx % 4 / 2) + 2 * (ty % 2) + tx % 2;
}

/* U[16][C][F] = G g Gᵀ for g = w[o][c] (flip: g = w[c][o] rotated by 180
 * degrees, w being [C][ldw][3][3]: the data gradient's kernel), 8 output
 * channels at a time: gathers masked to the F - o0 there are, and so are
 * the stores of the last block only (vmaskmovps stores made the whole
 * transform 3x slower on the Zen 4 measured: 13 against 4 ns per (c, o),
 * 210 us a call for 128 channels) */
static void wino_kernel(const float *w, int64_t C, int64_t F, int flip, int64_t ldw, float *U)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i idx = _mm256_mullo_epi32(iota, _mm256_set1_epi32((int32_t)(flip ? 9 : C * 9)));
    for (int64_t o0 = 0; o0 < F; o0 += 8) {
        const __m256i k = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(F - o0 < 8 ? F - o0 : 8)), iota);
        for (int64_t c = 0; c < C; c++) {
            const float *w0 = flip ? w + (c * ldw + o0) * 9 : w + (o0 * C + c) * 9;
            wv g[3][3];
            for (int t = 0; t < 9; t++) {
                const int ky = flip ? 2 - t / 3 : t / 3, kx = flip ? 2 - t % 3 : t % 3;
                g[ky][kx] = _mm256_mask_i32gather_ps(WZERO(), w0 + t, idx, _mm256_castsi256_ps(k), 4);
            }
            wv r[3][4]; /* G g, by columns: r[j][i] */
            for (int j = 0; j < 3; j++)
                wino_g(g[0][j], g[1][j], g[2][j], r[j]);
            for (int i = 0; i < 4; i++) { /* (G g) Gᵀ */
                wv u[4];
                wino_g(r[0][i], r[1][i], r[2][i], u);
                for (int j = 0; j < 4; j++)
                    if (F - o0 >= 8)
                        WSTORE(U + (i * 4 + j) * PLANE(C * F) + c * F + o0, u[j]);
                    else
                        _mm256_maskstore_ps(U + (i * 4 + j) * PLANE(C * F) + c * F + o0, k, u[j]);
            }
        }
    }
}

/* V[16][C][64] lanes 16 bi .. for the nb images x[0..nb][C][8][8] (S = 8),
 * all 64 for one x[C][16][16] (S = 16): Bᵀ d B.  For each pair of tile
 * rows 2q, 2q+1 (image rows 4q - 1 .. 4q + 4) and 8 columns from 8h: Bᵀ
 * along each row's columns first.  With x the row's columns 8h + k, xl
 * those one to the left (column 8h + k - 1) and xr one to the right, 0
 * outside the image, tile tx (lanes 2 tx, 2 tx + 1 of the 8) has
 *
 *     (Bᵀ d)[0] = xl - xr at 2 tx    (column 2 tx - 1 minus 2 tx + 1)
 *     (Bᵀ d)[3] = xl - xr at 2 tx + 1 (2 tx minus 2 tx + 2)
 *     (Bᵀ d)[1] = x + xr at 2 tx, (Bᵀ d)[2] = x - xl at 2 tx + 1
 *
 * so two vectors, wd = xl - xr and sp (x + xr at the even lanes, x - xl at
 * the odd), hold the row's 16 values; then Bᵀ down the rows on them, and
 * _mm256_shuffle_ps of tile row 2q's and 2q+1's result takes the even or
 * the odd lanes of both into a vector of tiles (wino_lane).  Returns
 * whether x held an infinity ("Infinities"). */
static int wino_in4(const float *x, int nb, int64_t C, float *V);
static int wino_in(const wino_tab *tb, const float *x, int nb, int64_t C, int64_t S, int part, float *V)
{
    (void)tb;
    if (S == 4)
        return wino_in4(x, nb, C, V);
    const __m256i left = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6), right = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
    /* vectors of 8 columns a row; tile row pairs in the block (32x32:
     * part's 2 of the 8, q0 the first), its tile vectors an example */
    const int64_t hw = S / 8, nq = S == 32 ? 2 : S / 4, q0 = S == 32 ? 2 * part : 0, tv = nq * hw;
    winf inf = WINF_NONE;
    for (int bi = 0; bi < nb; bi++)
        for (int64_t c = 0; c < C; c++) {
            const float *src = x + (bi * C + c) * S * S;
            float *vp = V + c * 64 + bi * 8 * tv - 8 * q0 * hw;
            for (int64_t q = q0; q < q0 + nq; q++)
                for (int64_t h = 0; h < hw; h++) {
                    wv wd[6], sp[6]; /* image rows 4q - 1 + k */
                    for (int k = 0; k < 6; k++) {
                        const int64_t r = 4 * q - 1 + k;
                        if (r < 0 || r >= S) {
                            wd[k] = sp[k] = WZERO();
                            continue;
                        }
                        const float *s = src + r * S + 8 * h;
                        const wv xc = WLOAD(s);
                        /* at the image's edges the lane moved in from outside is 0 */
                        const wv xl =
                            h > 0 ? WLOAD(s - 1) : _mm256_blend_ps(_mm256_permutevar8x32_ps(xc, left), WZERO(), 0x01);
                        const wv xr = h < hw - 1 ? WLOAD(s + 1)
                                                 : _mm256_blend_ps(_mm256_permutevar8x32_ps(xc, right), WZERO(), 0x80);
                        inf = winf_or(inf, winf_of(xc));
                        wd[k] = xl - xr;
                        sp[k] = _mm256_blend_ps(xc + xr, xc - xl, 0xAA);
                    }
                    /* Bᵀ down the rows: tile row 2q reads rows k = 0 .. 3, 2q + 1 rows 2 .. 5 */
                    wv wa[4], wb[4], pa[4], pb[4];
                    wino_bt(wd[0], wd[1], wd[2], wd[3], wa);
                    wino_bt(wd[2], wd[3], wd[4], wd[5], wb);
                    wino_bt(sp[0], sp[1], sp[2], sp[3], pa);
                    wino_bt(sp[2], sp[3], sp[4], sp[5], pb);
                    float *vq = vp + 8 * (q * hw + h);
                    for (int i = 0; i < 4; i++) {
                        WSTORE(vq + (i * 4 + 0) * PLANE(C * 64), _mm256_shuffle_ps(wa[i], wb[i], 0x88));
                        WSTORE(vq + (i * 4 + 1) * PLANE(C * 64), _mm256_shuffle_ps(pa[i], pb[i], 0x88));
                        WSTORE(vq + (i * 4 + 2) * PLANE(C * 64), _mm256_shuffle_ps(pa[i], pb[i], 0xDD));
                        WSTORE(vq + (i * 4 + 3) * PLANE(C * 64), _mm256_shuffle_ps(wa[i], wb[i], 0xDD));
                    }
                }
        }
    return winf_any(inf);
}

/* V[16][C][64] for the nb (at most 16) images x[0..nb][C][4][4]: a
 * vector of tiles is examples 2 v and 2 v + 1 (wino_lane), its element
 * (r, k) gathered, tile (ty, tx) of example g taking pixel (2 ty + r - 1,
 * 2 tx + k - 1), masked to 0 outside the image and past nb.  A 4x4 image
 * is two vectors, its tiles 4 lanes: the gathers (16 a vector of tiles)
 * cost little beside the products, whose F FMAs a lane are 24 or more
 * vectors. */
static int wino_in4(const float *x, int nb, int64_t C, float *V)
{
    __m256i idx[16], in[16];
    for (int rk = 0; rk < 16; rk++) {
        int32_t ix[8], m[8];
        for (int l = 0; l < 8; l++) {
            const int g = l / 4, R = 2 * (l % 4 / 2) + rk / 4 - 1, Cc = 2 * (l % 2) + rk % 4 - 1;
            const int inside = R >= 0 && R < 4 && Cc >= 0 && Cc < 4;
            ix[l] = inside ? (int32_t)(g * C * 16) + R * 4 + Cc : 0;
            m[l] = inside ? -1 : 0;
        }
        idx[rk] = _mm256_loadu_si256((const __m256i *)ix), in[rk] = _mm256_loadu_si256((const __m256i *)m);
    }
    const __m256i first = _mm256_setr_epi32(-1, -1, -1, -1, 0, 0, 0, 0); /* example 2 v alone */
    winf inf = WINF_NONE;
    for (int v = 0; 2 * v < nb; v++) {
        const int two = 2 * v + 1 < nb;
        for (int64_t c = 0; c < C; c++) {
            const float *src = x + (2 * v * C + c) * 16;
            for (int g = 0; g <= two; g++)
                inf = winf_or(inf, winf_or(winf_of(WLOAD(src + g * C * 16)), winf_of(WLOAD(src + g * C * 16 + 8))));
            wv d[4][4];
            for (int rk = 0; rk < 16; rk++) {
                const __m256i k = two ? in[rk] : _mm256_and_si256(in[rk], first);
                d[rk / 4][rk % 4] = _mm256_mask_i32gather_ps(WZERO(), src, idx[rk], _mm256_castsi256_ps(k), 4);
            }
            wino_btdb(d, V + c * 64 + 8 * v, PLANE(C * 64));
        }
    }
    return winf_any(inf);
}

/* one vector of y: + bias, relu, + add (as conv_direct) */
static inline void wino_put(float *y, wv r, const float *bias, int64_t o, int relu, const float *add)
{
    r = wino_act(r, bias, o, relu);
    if (add)
        r = r + WLOAD(add);
    WSTORE(y, r);
}

/* y[nb][F][S][S] (+ bias, relu, + add[nb][F][S][S]: as conv_direct) = Aᵀ M
 * A from the block's M [16][F][64]: a vector of tiles gives image rows 4q
 * .. 4q + 3, columns 8h .. 8h + 7, each the unpack of an output row's
 * even and odd columns (out[2 i], out[2 i + 1]): the low lanes of each
 * half for tile row 2q, the high ones for 2q + 1.  For S = 32, y (and
 * add) at the block's first row: its 8 rows of each channel. */
static void wino_out(const wino_tab *tb, const float *M, int64_t F, int64_t Fy, int64_t S, int nb, float *y,
                     const float *bias, int relu, const float *add)
{
    (void)tb;
    const int64_t hw = S / 8, tv = S == 32 ? 8 : S * S / 32, SS = S * S;
    for (int64_t o = 0; o < F; o++)
        for (int64_t v = 0; v < (S == 4 ? (nb + 1) / 2 : nb * tv); v++) {
            const float *mp = M + o * 64 + 8 * v;
            wv out[4];
            wino_atma(mp, PLANE(F * 64), out);
            if (S == 4) {
                /* the unpacks give row 0 (lo of out[0], out[1]), 1 (lo of
                 * out[2], out[3]), 2 and 3 (the his) of example 2 v in the
                 * low half, of 2 v + 1 in the high one */
                const wv lo01 = _mm256_unpacklo_ps(out[0], out[1]), lo23 = _mm256_unpacklo_ps(out[2], out[3]);
                const wv hi01 = _mm256_unpackhi_ps(out[0], out[1]), hi23 = _mm256_unpackhi_ps(out[2], out[3]);
                for (int64_t g = 0; g < 2 && 2 * v + g < nb; g++) {
                    const int64_t at = ((2 * v + g) * Fy + o) * 16;
                    /* (the selector an immediate in each: a variable one
                     * compiles only where the loop is unrolled) */
                    const wv r01 = g ? _mm256_permute2f128_ps(lo01, lo23, 0x31)
                                     : _mm256_permute2f128_ps(lo01, lo23, 0x20),
                             r23 = g ? _mm256_permute2f128_ps(hi01, hi23, 0x31)
                                     : _mm256_permute2f128_ps(hi01, hi23, 0x20);
                    wino_put(y + at, r01, bias, o, relu, add ? add + at : NULL);
                    wino_put(y + at + 8, r23, bias, o, relu, add ? add + at + 8 : NULL);
                }
                continue;
            }
            const int64_t bi = v / tv, q = v % tv / hw, h = v % hw, at = (bi * Fy + o) * SS + 4 * q * S + 8 * h;
            const wv rows[4] = {_mm256_unpacklo_ps(out[0], out[1]), _mm256_unpacklo_ps(out[2], out[3]),
                                _mm256_unpackhi_ps(out[0], out[1]), _mm256_unpackhi_ps(out[2], out[3])};
            for (int m = 0; m < 4; m++)
                wino_put(y + at + m * S, rows[m], bias, o, relu, add ? add + at + m * S : NULL);
        }
}

#endif

/* Z = A dY Aᵀ of an output tile's 2x2 of dy, e00 .. e11 (VL output
 * channels each), into the 16 planes (`plane` floats apart) from zp;
 * where dy held an infinity ("Infinities") */
static inline winf wino_dy_tile(wv e00, wv e01, wv e10, wv e11, float *zp, int64_t plane)
{
    wv z[2][4]; /* A dY by columns: z[b][i]; then (A dY) Aᵀ */
    wino_a(e00, e10, z[0]);
    wino_a(e01, e11, z[1]);
    for (int i = 0; i < 4; i++) {
        wv q[4];
        wino_a(z[0][i], z[1][i], q);
        for (int j = 0; j < 4; j++)
            WSTORE(zp + (i * 4 + j) * plane, q[j]);
    }
    return winf_or(winf_or(winf_of(e00), winf_of(e01)), winf_or(winf_of(e10), winf_of(e11)));
}

/* dw[F][C][3][3] = Gᵀ dU G from dU [16][C][Fp]: VL output channels (the
 * vector's lanes) x 16 input channels at a time, their 144 tap vectors
 * put in tmp in dw's (c, tap) order and transposed into dw's VL rows (16
 * x 16 blocks at AVX-512, 8 x 8 at AVX2; nnc_transpose.h).  The scatter
 * of 9 tap vectors per (c, output channels) that did it took 2.4% of
 * resnet18's step at one thread, ~11 cycles a scatter. */
static void wino_dw(const float *dU, float *dw, int64_t C, int64_t F, int64_t Fp)
{
    float tmp[16 * 9 * VL]; /* [c - c0][tap][o - o0] */
    for (int64_t o0 = 0; o0 < F; o0 += VL)
        for (int64_t c0 = 0; c0 < C; c0 += 16) {
            const int64_t nc = C - c0 < 16 ? C - c0 : 16;
            for (int64_t c = c0; c < c0 + nc; c++) {
                wv u[4][4], r[4][3]; /* Gᵀ dU by columns: r[j][a] */
                for (int xi = 0; xi < 16; xi++)
                    u[xi / 4][xi % 4] = WLOAD(dU + xi * PLANE(C * Fp) + c * Fp + o0);
                for (int j = 0; j < 4; j++)
                    wino_gt(u[0][j], u[1][j], u[2][j], u[3][j], r[j]);
                for (int a = 0; a < 3; a++) {
                    wv q[3];
                    wino_gt(r[0][a], r[1][a], r[2][a], r[3][a], q);
                    for (int b = 0; b < 3; b++)
                        WSTORE(tmp + ((c - c0) * 9 + a * 3 + b) * VL, q[b]);
                }
            }
            transpose(dw + (o0 * C + c0) * 9, C * 9, tmp, VL, nc * 9, F - o0 < VL ? F - o0 : VL);
        }
}

/* y[N][F][S][S] = conv3x3, padding 1, of x[N][C][S][S] for S = 4, 8, 16
 * or 32 (+ bias, relu, + add: as conv_direct), given the transformed
 * kernel U [16][C][F] at wk; then V [16][C][64] and M [16][F][64]
 * (nnc_conv_wino_work): a block of 64 tiles is 16 examples of 4x4, 4 of
 * 8x8, one of 16x16 or a quarter of one 32x32 (8 of its rows), nvec
 * vectors of VL; the products in blocks of up to WMR output channels x WNV
 * vectors, as even as can be */
static void wino_products(const float *V, const float *U, float *M, int64_t C, int64_t F, int nvec)
{
    const int64_t nblk = even_blocks(F, WMR), jblk = even_blocks(nvec, WNV);
    for (int xi = 0; xi < 16; xi++)
        for (int64_t j = 0, j0 = 0; j < jblk; j++) {
            const int64_t nv = even_block(nvec, jblk, j);
            for (int64_t k = 0, o0 = 0; k < nblk; k++) {
                const int64_t mr = even_block(F, nblk, k);
                wino_mms[nv - 1][mr](V + xi * PLANE(C * 64) + VL * j0, U + xi * PLANE(C * F),
                                     M + xi * PLANE(F * 64) + VL * j0, C, F, o0);
                o0 += mr;
            }
            j0 += nv;
        }
}

/* dU [16][C][Fp] (+)= V Z over a block's nt tiles (first: =), in blocks
 * of up to WFMR input channels x WFNV vectors of output channels */
static void wino_fproducts(const float *V, const float *Z, float *dU, int64_t C, int64_t Fp, int nt, int first)
{
    const int64_t nblk = even_blocks(C, WFMR);
    for (int xi = 0; xi < 16; xi++)
        for (int64_t o0 = 0; o0 < Fp; o0 += WFNV * VL) {
            const int nvo = Fp - o0 >= WFNV * VL ? WFNV : (int)((Fp - o0) / VL);
            for (int64_t k = 0, c0 = 0; k < nblk; k++) {
                const int64_t mr = even_block(C, nblk, k);
                wino_fmms[nvo - 1][mr](V + xi * PLANE(C * 64), Z + xi * PLANE(64 * Fp), dU + xi * PLANE(C * Fp), Fp, c0,
                                       o0, nt, first);
                c0 += mr;
            }
        }
}

static int wino(int64_t N, const float *x, float *y, int64_t C, int64_t S, int64_t F, int64_t Fy, const float *bias,
                int relu, const float *add, float *wk)
{
    const float *U = wk;
    float *V = wk + 16 * PLANE(C * F), *M = V + 16 * PLANE(C * 64);
    wino_tab tb;
    wino_tables(&tb);
    const int64_t SS = S * S;
    const int64_t per = SS < 256 ? 256 / SS : 1, parts = SS > 256 ? SS / 256 : 1; /* examples, blocks an example */
    for (int64_t b0 = 0; b0 < N * parts; b0 += per) {
        /* (4x4: a last vector of tiles part empty, its lanes 0) */
        const int64_t e0 = b0 / parts, row = b0 % parts * 8 * S; /* the first example, (32x32) row */
        const int nb = N - e0 < per ? (int)(N - e0) : (int)per, nvec = (int)((nb * SS / parts / 4 + VL - 1) / VL);
        if (wino_in(&tb, x + e0 * C * SS, nb, C, S, (int)(b0 % parts), V))
            return 1; /* an infinity: the caller redoes the whole call directly */
        wino_products(V, U, M, C, F, nvec);
        wino_out(&tb, M, F, Fy, S, nb, y + e0 * Fy * SS + row, bias, relu, add ? add + e0 * Fy * SS + row : NULL);
    }
    return 0;
}

/* dw[F][C][3][3] of the layer above from channels 0 .. F of dy[N][Fdy][S][S]
 * and x[N][C][S][S]; wk: V [16][C][64], Z [16][64][Fp], dU [16][C][Fp], dy
 * transposed [S S][Fp] (nnc_conv_wino_filter_work; Fp = F rounded up to
 * VL, at most its 16) */
static int wino_filter(int64_t N, const float *dy, const float *x, float *dw, int64_t C, int64_t S, int64_t F,
                       int64_t Fdy, float *wk)
{
    const int64_t Fp = (F + VL - 1) / VL * VL, SS = S * S, TW = S / 2;
    const int64_t per = SS < 256 ? 256 / SS : 1, parts = SS > 256 ? SS / 256 : 1, TR = TW / parts; /* TR tile rows */
    float *V = wk, *Z = V + 16 * PLANE(C * 64), *dU = Z + 16 * PLANE(64 * Fp), *dyT = dU + 16 * PLANE(C * Fp);
    wino_tab tb;
    wino_tables(&tb);
    /* lanes F .. Fp stay 0, and so do Z's: their products are never
     * stored, but stale arena contents there could be denormals or NaN */
    memset(dyT, 0, sizeof(float) * (size_t)(SS * Fp));
    winf inf = WINF_NONE; /* in dy: the tiles read each element once */
    for (int64_t b0 = 0; b0 < N * parts; b0 += per) {
        const int64_t e0 = b0 / parts, pt = b0 % parts; /* the first example, its block (32x32) */
        const int nb = N - e0 < per ? (int)(N - e0) : (int)per;
        if (wino_in(&tb, x + e0 * C * SS, nb, C, S, (int)pt, V))
            return 1; /* an infinity: dw not written yet */
        for (int bi = 0; bi < nb; bi++) {
            /* dy's example as [position][Fp], by vector x vector blocks:
             * then a tile's element for VL output channels is one load (by
             * lanes of tiles instead, Z was scattered into [tile][o]: a
             * third of the time) */
            if (pt == 0)
                transpose(dyT, Fp, dy + (e0 + bi) * Fdy * SS, SS, F, SS);
            for (int64_t t = 0; t < TR * TW; t++) /* Z = A dY Aᵀ, into [xi][tile][o] */
                for (int64_t o0 = 0; o0 < Fp; o0 += VL) {
                    const float *e0p = dyT + (2 * (pt * TR + t / TW) * S + 2 * (t % TW)) * Fp + o0;
                    inf = winf_or(inf,
                                  wino_dy_tile(WLOAD(e0p), WLOAD(e0p + Fp), WLOAD(e0p + S * Fp),
                                               WLOAD(e0p + (S + 1) * Fp),
                                               Z + wino_lane(S, bi, t / TW, t % TW) * Fp + o0, PLANE(64 * Fp)));
                }
        }
        if (winf_any(inf))
            return 1;
        wino_fproducts(V, Z, dU, C, Fp, (int)(nb * SS / parts / 4), b0 == 0);
    }
    wino_dw(dU, dw, C, F, Fp);
    return 0;
}

/* ---- Winograd at any other image size --------------------------------------
 *
 * An H x W image at padding 0, 1 or 2 (a layer's padding 0 or 1, and
 * their data gradients' 2 - pad): Ho x Wo = H + 2 pad - 2 outputs, in
 * tiles of 2x2 whose last row and column are cut where Ho or Wo is odd.
 * The tiles of a call's examples are numbered in order (example, tile
 * row, tile column) and a block is 64 consecutive ones, across examples,
 * so that lanes idle only in a call's last block (vectors of one tile row
 * would leave 4 of 16 lanes empty at 24x24, 10 at 12x12).  A vector's
 * tiles are loaded a row of 4 at a time (wino_in_any); its outputs are
 * stored a value at a time.  The products and the kernel gradient's dy
 * transform are the special sizes' own.  Measured alone at AVX-512 on
 * Zen 4, one thread, batch 16, forward pass against the direct kernel's
 * ~100 GFLOP/s (counted as direct FLOPs): 32 -> 40 channels at 24x24 126
 * GFLOP/s, 40 -> 80 at 12x12 164, 80 -> 80 at 12x12 158, 32 -> 32 at
 * 28x28 108 (122 at padding 0); the special 16x16 path 158-164.  Below 32
 * channels the loads and stores cost what the products save
 * (nnc_conv_wino_least). */
typedef struct {
    int64_t H, W, pad, Ho, Wo, Tw, TT; /* Tw tiles a row, TT an example */
} wgeom;

static wgeom wino_geom(int64_t H, int64_t W, int64_t pad)
{
    wgeom g = {H, W, pad, H + 2 * pad - 2, W + 2 * pad - 2, 0, 0};
    g.Tw = (g.Wo + 1) / 2;
    g.TT = (g.Ho + 1) / 2 * g.Tw;
    return g;
}

/* tile number `tile` of a call (counted from its first example): its
 * example, tile row and tile column */
static inline void wino_tile(const wgeom *g, int64_t tile, int64_t *e, int64_t *ty, int64_t *tx)
{
    *e = tile / g->TT;
    *ty = tile % g->TT / g->Tw;
    *tx = tile % g->Tw;
}

/* V [16][C][64] = Bᵀ d B of tiles t0 .. t0 + nt (nt <= 64) of x[.][C][H][W]
 * (lanes past nt 0).  A vector's tiles are loaded, 4 floats a row under a
 * mask (zeros outside the image; a masked-off float is not read), into
 * patch [lane][16], a row of it in one store, which transposes into their
 * 16 elements' vectors (nnc_transpose.h).  Masked gathers, 16 a vector,
 * took 40% of a 24x24 layer's time at AVX-512 on Zen 4, ~34 cycles each;
 * copies branching on each row's edges, 25%.  Returns whether x held an
 * infinity there. */
static int wino_in_any(const wgeom *g, const float *x, int64_t C, int64_t t0, int nt, float *V)
{
    const int64_t HW = g->H * g->W, W = g->W;
    int64_t at[64];          /* the tile's element (0, 0) from its channel's first */
    unsigned char mk[64][4]; /* row r's columns inside the image (none where the row is outside) */
    for (int t = 0; t < 64; t++) {
        at[t] = 0;
        memset(mk[t], 0, 4);
        if (t >= nt)
            continue;
        int64_t e, ty, tx;
        wino_tile(g, t0 + t, &e, &ty, &tx);
        const int64_t r0 = 2 * ty - g->pad, c0 = 2 * tx - g->pad;
        at[t] = e * C * HW + r0 * W + c0;
        unsigned cols = 0;
        for (int k = 0; k < 4; k++)
            cols |= (unsigned)(c0 + k >= 0 && c0 + k < W) << k;
        for (int r = 0; r < 4; r++)
            mk[t][r] = (unsigned char)(r0 + r >= 0 && r0 + r < g->H ? cols : 0);
    }
#if !defined(__AVX512F__)
    static const int32_t lanes[16][4] = {
#define L(m) {-((m)&1), -((m) >> 1 & 1), -((m) >> 2 & 1), -((m) >> 3 & 1)}
        L(0), L(1),  L(2),  L(3),  L(4),  L(5),  L(6), L(7), L(8),
        L(9), L(10), L(11), L(12), L(13), L(14), L(15)
#undef L
    };
#define WROW(r) _mm_maskload_ps(src + (r)*W, _mm_loadu_si128((const __m128i *)lanes[mk[t][r]]))
#else
#define WROW(r) _mm_maskz_loadu_ps(mk[t][r], src + (r)*W)
#endif
    winf inf = WINF_NONE;
    const int nvec = (nt + VL - 1) / VL;
    for (int64_t c = 0; c < C; c++) {
        const float *xc = x + c * HW;
        for (int v = 0; v < nvec; v++) {
            float patch[VL][16] __attribute__((aligned(64))), dt[16][VL] __attribute__((aligned(64)));
            for (int l = 0; l < VL; l++) {
                const int t = v * VL + l;
                const float *src = xc + at[t];
#if defined(__AVX512F__)
                __m512 pr = _mm512_castps128_ps512(WROW(0));
                pr = _mm512_insertf32x4(pr, WROW(1), 1);
                pr = _mm512_insertf32x4(pr, WROW(2), 2);
                _mm512_store_ps(patch[l], _mm512_insertf32x4(pr, WROW(3), 3));
#else
                _mm256_store_ps(patch[l], _mm256_set_m128(WROW(1), WROW(0)));
                _mm256_store_ps(patch[l] + 8, _mm256_set_m128(WROW(3), WROW(2)));
#endif
            }
            transpose(&dt[0][0], VL, &patch[0][0], 16, VL, 16);
            wv d[4][4];
            for (int rk = 0; rk < 16; rk++) {
                d[rk / 4][rk % 4] = WLOAD(dt[rk]);
                inf = winf_or(inf, winf_of(d[rk / 4][rk % 4]));
            }
            wino_btdb(d, V + c * 64 + v * VL, PLANE(C * 64));
        }
    }
#undef WROW
    return winf_any(inf);
}

/* y[.][Fy][Ho][Wo] channels 0 .. F (+ bias, relu, + add[.][Fy][Ho][Wo])
 * of tiles t0 .. t0 + nt of the call = Aᵀ M A from the block's M
 * [16][F][64] */
static void wino_out_any(const wgeom *g, const float *M, int64_t F, int64_t Fy, int64_t t0, int nt, float *y,
                         const float *bias, int relu, const float *add)
{
    const int64_t HWo = g->Ho * g->Wo;
    int64_t at[64];        /* the tile's first output, channel 0 */
    unsigned char cut[64]; /* bit 0: no second column, 1: no second row */
    for (int t = 0; t < nt; t++) {
        int64_t e, ty, tx;
        wino_tile(g, t0 + t, &e, &ty, &tx);
        at[t] = e * Fy * HWo + 2 * ty * g->Wo + 2 * tx;
        cut[t] = (unsigned char)((2 * tx + 1 >= g->Wo) | (2 * ty + 1 >= g->Ho) << 1);
    }
    for (int v = 0; v * VL < nt; v++) {
        const int nl = nt - v * VL < VL ? nt - v * VL : VL;
        for (int64_t o = 0; o < F; o++) {
            const float *mp = M + o * 64 + v * VL;
            wv out[4];
            wino_atma(mp, PLANE(F * 64), out);
            float q[4][VL];
            for (int ij = 0; ij < 4; ij++)
                WSTORE(q[ij], wino_act(out[ij], bias, o, relu));
            for (int l = 0; l < nl; l++) {
                const int t = v * VL + l;
                const int64_t p = at[t] + o * HWo;
                for (int ij = 0; ij < 4; ij++) {
                    if ((ij & 1 && cut[t] & 1) || (ij & 2 && cut[t] & 2))
                        continue;
                    const int64_t pij = p + (ij >> 1) * g->Wo + (ij & 1);
                    y[pij] = add ? q[ij][l] + add[pij] : q[ij][l];
                }
            }
        }
    }
}

/* y[N][Fy][Ho][Wo] = conv3x3 at padding g->pad of x[N][C][H][W] (+ bias,
 * relu, + add), channels 0 .. F, given U [16][C][F] at wk (as wino) */
static int wino_any(int64_t N, const float *x, float *y, int64_t C, const wgeom *g, int64_t F, int64_t Fy,
                    const float *bias, int relu, const float *add, float *wk)
{
    const float *U = wk;
    float *V = wk + 16 * PLANE(C * F), *M = V + 16 * PLANE(C * 64);
    const int64_t total = N * g->TT, HW = g->H * g->W, HWo = g->Ho * g->Wo;
    for (int64_t t0 = 0; t0 < total; t0 += 64) {
        const int nt = total - t0 < 64 ? (int)(total - t0) : 64;
        const int64_t e0 = t0 / g->TT, r0 = t0 - e0 * g->TT; /* the block's first example, its first tile */
        if (wino_in_any(g, x + e0 * C * HW, C, r0, nt, V))
            return 1;
        wino_products(V, U, M, C, F, (nt + VL - 1) / VL);
        wino_out_any(g, M, F, Fy, r0, nt, y + e0 * Fy * HWo, bias, relu, add ? add + e0 * Fy * HWo : NULL);
    }
    return 0;
}

/* dw[F][C][3][3] from channels 0 .. F of dy[N][Fdy][Ho][Wo] and
 * x[N][C][H][W] (as wino_filter; dy transposed an example at a time as
 * the blocks reach it) */
static int wino_filter_any(int64_t N, const float *dy, const float *x, float *dw, int64_t C, const wgeom *g, int64_t F,
                           int64_t Fdy, float *wk)
{
    const int64_t Fp = (F + VL - 1) / VL * VL, HW = g->H * g->W, HWo = g->Ho * g->Wo, total = N * g->TT;
    float *V = wk, *Z = V + 16 * PLANE(C * 64), *dU = Z + 16 * PLANE(64 * Fp), *dyT = dU + 16 * PLANE(C * Fp);
    memset(dyT, 0, sizeof(float) * (size_t)(HWo * Fp)); /* (lanes F .. Fp: as wino_filter) */
    winf inf = WINF_NONE;
    int64_t have = -1; /* the example in dyT */
    for (int64_t t0 = 0; t0 < total; t0 += 64) {
        const int nt = total - t0 < 64 ? (int)(total - t0) : 64;
        const int64_t e0 = t0 / g->TT;
        if (wino_in_any(g, x + e0 * C * HW, C, t0 - e0 * g->TT, nt, V))
            return 1;
        for (int t = 0; t < nt; t++) {
            int64_t e, ty, tx;
            wino_tile(g, t0 + t, &e, &ty, &tx);
            if (e != have)
                transpose(dyT, Fp, dy + e * Fdy * HWo, HWo, F, HWo), have = e;
            const int c1 = 2 * tx + 1 < g->Wo, r1 = 2 * ty + 1 < g->Ho;
            for (int64_t o0 = 0; o0 < Fp; o0 += VL) {
                const float *ep = dyT + (2 * ty * g->Wo + 2 * tx) * Fp + o0;
                /* (a cut tile's outside: zeros) */
                inf = winf_or(
                    inf,
                    wino_dy_tile(WLOAD(ep), c1 ? WLOAD(ep + Fp) : WZERO(), r1 ? WLOAD(ep + g->Wo * Fp) : WZERO(),
                                 r1 && c1 ? WLOAD(ep + (g->Wo + 1) * Fp) : WZERO(), Z + t * Fp + o0, PLANE(64 * Fp)));
            }
        }
        if (winf_any(inf))
            return 1;
        wino_fproducts(V, Z, dU, C, Fp, nt, t0 == 0);
    }
    wino_dw(dU, dw, C, F, Fp);
    return 0;
}

/* the call of a layer's pass by Winograd (the data gradient: x = dy at
 * padding 2 - pad): the special sizes' transforms, or the row loads */
static int wino_call(int64_t N, const float *x, float *y, int64_t C, int64_t H, int64_t W, int64_t pad, int64_t F,
                     int64_t Fy, const float *bias, int relu, const float *add, float *wk)
{
    if (nnc_conv_wino_special(H, W, pad))
        return wino(N, x, y, C, H, F, Fy, bias, relu, add, wk);
    const wgeom g = wino_geom(H, W, pad);
    return wino_any(N, x, y, C, &g, F, Fy, bias, relu, add, wk);
}

static int wino_filter_call(int64_t N, const float *dy, const float *x, float *dw, int64_t C, int64_t H, int64_t W,
                            int64_t pad, int64_t F, float *wk)
{
    if (nnc_conv_wino_special(H, W, pad))
        return wino_filter(N, dy, x, dw, C, H, F, F, wk);
    const wgeom g = wino_geom(H, W, pad);
    return wino_filter_any(N, dy, x, dw, C, &g, F, F, wk);
}
#endif

/* Without AVX-512 or AVX2 + FMA (the generic build, and conv.c compiled
 * alone for another target) the kernels below run the columns instead
 * (conv_cols.c): their work sizes (nnc_conv.h) hold either.  The public
 * nnc_conv_direct_ok() answers for the build that nnc_isa() selects
 * (dispatch.c).  A test builds conv.c with NNC_CONV_DIRECT_ALWAYS to run
 * the direct kernels on any machine. */
int NNC_ISA_FN(nnc_conv_direct_ok)(void)
{
#if defined(__AVX512F__) || CONV_AVX2 || defined(NNC_CONV_DIRECT_ALWAYS)
    return 1;
#else
    return 0;
#endif
}

#if defined(__AVX512F__) || CONV_AVX2
/* whether this pass of a layer goes by Winograd in this build (nnc_conv.h) */
static int wino_here(int pass, int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t pad)
{
    const int64_t least = nnc_conv_wino_least(pass, CONV_AVX2 || nnc_isa_wino_early(), H, W, pad);
    return nnc_conv_wino(C, H, W, F, KH, KW, pad) && C >= least && F >= least;
}
#endif

static void check_work(const char *what, int64_t have, int64_t need)
{
    nnc__conv_check_work(what, have, need, sizeof(float));
}

/* One pass of a Winograd layer (nnc_conv_wino) for channels f0 .. f1 of
 * its output: y's for the forward pass (pass NNC_CONV_FWD; in = x, w
 * [F][C][3][3]), dx's for the data gradient (NNC_CONV_DATA; in = dy, f0
 * .. f1 of the C), dw's rows for the kernel gradient (NNC_CONV_FILTER; in =
 * dy, and x), over all N examples.  threads.c splits 4x4 layers so: their
 * weights (U, dU: 16 C F floats, 2.4 MB at 192 channels) outweigh 16
 * examples' tiles, and items of examples each transformed all of them
 * (two threads ran the forward pass of 192 channels, batch 16, no faster
 * than one).  Each output is the same sum over c (or the examples) in the
 * same order wherever the channels are cut, so any split gives the same
 * bits.  Returns 1 where the input held an infinity (outputs then partly
 * written): the caller redoes the call by the kernels above. */
int NNC_ISA_FN(nnc_conv2d_wino_part_f32)(int pass, int64_t N, const float *in, const float *w, const float *x,
                                         float *out, const float *add, int64_t C, int64_t S, int64_t F, int64_t f0,
                                         int64_t f1, const float *bias, int relu, float *work, int64_t work_len)
{
#if defined(__AVX512F__) || CONV_AVX2
    const int64_t SS = S * S, n = f1 - f0;
    if (pass == NNC_CONV_FWD) {
        check_work("nnc_conv2d_s1_f32", work_len, nnc_conv2d_s1_work(C, S, S, F, 3, 3, 1));
        wino_kernel(w + f0 * C * 9, C, n, 0, 0, work);
        return wino(N, in, out + f0 * SS, C, S, n, F, bias ? bias + f0 : NULL, relu, NULL, work);
    }
    if (pass == NNC_CONV_DATA) {
        check_work("nnc_conv2d_s1_bwd_data_f32", work_len, nnc_conv2d_s1_bwd_data_work(C, S, S, F, 3, 3, 1));
        wino_kernel(w + f0 * 9, F, n, 1, C, work);
        return wino(N, in, out + f0 * SS, F, S, n, C, NULL, 0, add ? add + f0 * SS : NULL, work);
    }
    check_work("nnc_conv2d_bwd_filter_f32", work_len, nnc_conv2d_bwd_filter_work(C, S, S, F, 3, 3, 1, 1));
    return N > 0 ? wino_filter(N, in + f0 * SS, x, out + f0 * C * 9, C, S, n, F, work) : 1;
#else
    (void)pass, (void)N, (void)in, (void)w, (void)x, (void)out, (void)add, (void)C, (void)S, (void)F, (void)f0;
    (void)f1, (void)bias, (void)relu, (void)work, (void)work_len;
    return 1; /* (not called: threads.c asks nnc_conv_direct_ok first) */
#endif
}

void NNC_ISA_FN(nnc_conv2d_s1_f32)(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H, int64_t W,
                                   int64_t F, int64_t KH, int64_t KW, int64_t pad, const float *bias, int relu,
                                   float *work, int64_t work_len)
{
    geom g = make_geom(C, H, W, F, KH, KW, pad, pad);
    check_work("nnc_conv2d_s1_f32", work_len, nnc_conv2d_s1_work(C, H, W, F, KH, KW, pad));
    if (!NNC_ISA_FN(nnc_conv_direct_ok)()) {
        NNC_ISA_FN(nnc_conv2d_cols_f32)(N, x, w, y, C, H, W, F, KH, KW, 1, pad, bias, relu, work, work_len);
        return;
    }
#if defined(__AVX512F__) || CONV_AVX2
    if (wino_here(NNC_CONV_FWD, C, H, W, F, KH, KW, pad)) {
        wino_kernel(w, C, F, 0, 0, work);
        if (!wino_call(N, x, y, C, H, W, pad, F, F, bias, relu, NULL, work))
            return;
    }
#endif
    conv_direct(&g, N, x, w, bias, relu, y, NULL, work);
}

void NNC_ISA_FN(nnc_conv2d_s2_f32)(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H, int64_t W,
                                   int64_t F, int64_t KH, int64_t KW, int64_t pad, const float *bias, int relu,
                                   float *work, int64_t work_len)
{
    geom g = make_geom2(C, H, W, F, KH, KW, pad, pad);
    check_work("nnc_conv2d_s2_f32", work_len, nnc_conv2d_s2_work(C, H, W, F, KH, KW, pad));
    if (!NNC_ISA_FN(nnc_conv_direct_ok)()) {
        NNC_ISA_FN(nnc_conv2d_cols_f32)(N, x, w, y, C, H, W, F, KH, KW, 2, pad, bias, relu, work, work_len);
        return;
    }
    conv_direct(&g, N, x, w, bias, relu, y, NULL, work);
}

/* The forward pass at stride S (1 or 2) of a layer whose padding differs
 * between rows (ph) and columns (pw), by the direct kernel alone (no
 * Winograd, which takes one padding): the general convolution's ungrouped
 * layers of that kind (conv_cols_tmpl.h, nnc_conv2d_gen_group_work),
 * Conv1D's above all, in the AVX-512 and AVX2 builds. */
void NNC_ISA_FN(nnc_conv2d_direct_hw_f32)(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H,
                                          int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t S, int64_t ph,
                                          int64_t pw, const float *bias, int relu, float *work, int64_t work_len)
{
    check_work("nnc_conv2d_direct_hw_f32", work_len, nnc_conv_direct_fwd_work(C, H, W, F, KH, KW, S, ph, pw));
    const geom g = S == 1 ? make_geom(C, H, W, F, KH, KW, ph, pw) : make_geom2(C, H, W, F, KH, KW, ph, pw);
    conv_direct(&g, N, x, w, bias, relu, y, NULL, work);
}

/* dx = dy padded by KH - 1 - ph rows and KW - 1 - pw columns, correlated
 * with w flipped in both spatial dims and with F and C swapped:
 * wt[c][f][KH-1-ky][KW-1-kx] = w[f][c][ky][kx]; plus add.  The direct
 * kernel alone: nnc_conv2d_s1_bwd_data_f32 below at (pad, pad), and the
 * general convolution (conv_cols_tmpl.h) at a Conv1D's (0, pad). */
void NNC_ISA_FN(nnc_conv2d_s1_bwd_data_hw_f32)(int64_t N, const float *dy, const float *w, float *dx, const float *add,
                                               int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                               int64_t ph, int64_t pw, float *work, int64_t work_len)
{
    const int64_t OH = H + 2 * ph - KH + 1, OW = W + 2 * pw - KW + 1;
    const geom g = make_geom(F, OH, OW, C, KH, KW, KH - 1 - ph, KW - 1 - pw);
    check_work("nnc_conv2d_s1_bwd_data_hw_f32", work_len, nnc_conv2d_s1_bwd_data_hw_work(C, H, W, F, KH, KW, ph, pw));
    float *wt = work;
    for (int64_t f = 0; f < F; f++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t ky = 0; ky < KH; ky++)
                for (int64_t kx = 0; kx < KW; kx++)
                    wt[((c * F + f) * KH + (KH - 1 - ky)) * KW + (KW - 1 - kx)] = w[((f * C + c) * KH + ky) * KW + kx];
    conv_direct(&g, N, dy, wt, NULL, 0, dx, add, work + F * C * KH * KW);
}

/* The stride-1 data gradient: Winograd's where it pays, else the direct
 * kernel's (above), else the columns' where the build has no direct
 * kernel. */
void NNC_ISA_FN(nnc_conv2d_s1_bwd_data_f32)(int64_t N, const float *dy, const float *w, float *dx, const float *add,
                                            int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                            int64_t pad, float *work, int64_t work_len)
{
    check_work("nnc_conv2d_s1_bwd_data_f32", work_len, nnc_conv2d_s1_bwd_data_work(C, H, W, F, KH, KW, pad));
    if (!NNC_ISA_FN(nnc_conv_direct_ok)()) {
        NNC_ISA_FN(nnc_conv2d_cols_bwd_data_f32)(N, dy, w, dx, add, C, H, W, F, KH, KW, 1, pad, work, work_len);
        return;
    }
#if defined(__AVX512F__) || CONV_AVX2
    if (wino_here(NNC_CONV_DATA, F, H, W, C, KH, KW, pad)) { /* dy at padding 2 - pad gives dx */
        const int64_t OH = H + 2 * pad - KH + 1, OW = W + 2 * pad - KW + 1;
        wino_kernel(w, F, C, 1, C, work);
        if (!wino_call(N, dy, dx, F, OH, OW, 2 - pad, C, C, NULL, 0, add, work))
            return;
    }
#endif
    NNC_ISA_FN(nnc_conv2d_s1_bwd_data_hw_f32)(N, dy, w, dx, add, C, H, W, F, KH, KW, pad, pad, work, work_len);
}

/* The stride-2 data gradient by dx's 4 phases (nnc_conv.h): phase (ry,
 * rx) is a stride-1 correlation of dy, padded once, with the taps ky = ry +
 * pad - 2 dy, kx = rx + pad - 2 dx (1, 2, 2 and 4 of a 3x3 kernel), on
 * a grid of ceil(H/2) x ceil(W/2); the grids' rows are interleaved into dx
 * at the end.  The columns' path (Wᵀ dy, then col2im) ran resnet_small's
 * two such layers at ~30 GFLOP/s. */
void NNC_ISA_FN(nnc_conv2d_s2_bwd_data_f32)(int64_t N, const float *dy, const float *w, float *dx, const float *add,
                                            int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                            int64_t pad, float *work, int64_t work_len)
{
    check_work("nnc_conv2d_s2_bwd_data_f32", work_len, nnc_conv2d_s2_bwd_data_work(C, H, W, F, KH, KW, pad));
    if (!NNC_ISA_FN(nnc_conv_direct_ok)()) {
        NNC_ISA_FN(nnc_conv2d_cols_bwd_data_f32)(N, dy, w, dx, add, C, H, W, F, KH, KW, 2, pad, work, work_len);
        return;
    }
    const int64_t OH = (H + 2 * pad - KH) / 2 + 1, OW = (W + 2 * pad - KW) / 2 + 1;
    int64_t Lin, Lout, Pp, pt, pl;
    nnc_conv_grid2t(H, W, KH, KW, pad, &Lin, &Lout, &Pp, &pt, &pl);
    float *xp = work, *wp = xp + F * Lin, *yt = wp + F * C * KH * KW;
    /* each axis's taps per phase (nnc_conv.h), each phase's geometry (dy's
     * F channels in, C out) and its kernel wp [C][F][taps], taps in (ky,
     * kx) order */
    int64_t ky0[2], nty[2], dy0[2], kx0[2], ntx[2], dx0[2];
    for (int64_t r = 0; r < 2; r++) {
        nnc_conv_phase_taps(r, KH, pad, &ky0[r], &nty[r], &dy0[r]);
        nnc_conv_phase_taps(r, KW, pad, &kx0[r], &ntx[r], &dx0[r]);
    }
    geom g[4];
    int64_t woff[4];
    for (int64_t ph = 0, at = 0; ph < 4; ph++) {
        const int64_t ry = ph / 2, rx = ph % 2, ny = nty[ry], nx = ntx[rx];
        g[ph] = (geom){F, OH, OW, C, ny, nx, pt, pl, Pp, (H - ry + 1) / 2, (W - rx + 1) / 2, Lin, Lout, 1};
        woff[ph] = at;
        for (int64_t c = 0; c < C; c++)
            for (int64_t f = 0; f < F; f++)
                for (int64_t ty = 0; ty < ny; ty++)
                    for (int64_t tx = 0; tx < nx; tx++)
                        wp[at + ((c * F + f) * ny + ty) * nx + tx] =
                            w[((f * C + c) * KH + ky0[ry] + 2 * ty) * KW + kx0[rx] + 2 * tx];
        at += C * F * ny * nx;
    }
    memset(xp, 0, sizeof(float) * (size_t)(F * Lin));
    taps tp;
    for (int64_t b = 0; b < N; b++) {
        pad_image(xp, Lin, Pp, pt, pl, dy + b * F * OH * OW, F, OH, OW);
        for (int64_t ph = 0; ph < 4; ph++) {
            const int64_t ry = ph / 2, rx = ph % 2, ny = nty[ry], nx = ntx[rx], KK = ny * nx;
            float *yp = yt + ph * C * Lout;
            if (KK == 0) {
                /* no tap of this parity (a 1x1 kernel): those dx are 0 */
                memset(yp, 0, sizeof(float) * (size_t)(C * Lout));
                continue;
            }
            tp.cc = TAB / KK < F ? TAB / KK : F;
            for (int64_t c = 0; c < tp.cc; c++)
                for (int64_t ty = 0; ty < ny; ty++)
                    for (int64_t tx = 0; tx < nx; tx++)
                        tp.off[c * KK + ty * nx + tx] =
                            (int32_t)(c * Lin + (dy0[ry] - ty + pt) * Pp + dx0[rx] - tx + pl);
            grid(&g[ph], &tp, xp, wp + woff[ph], yp, NULL, 0);
        }
        /* dx row ih = 2 i + ry: its even columns from phase (ry, 0), its odd
         * ones from (ry, 1) */
        float *db = dx + b * C * H * W;
        for (int64_t c = 0; c < C; c++)
            for (int64_t ih = 0; ih < H; ih++) {
                const int64_t ry = ih % 2, i = ih / 2;
                const float *e = yt + (2 * ry * C + c) * Lout + i * Pp, *o = e + C * Lout;
                float *d = db + (c * H + ih) * W;
                interleave(d, e, o, W);
                if (add)
                    for (int64_t j = 0; j < W; j++)
                        d[j] += add[b * C * H * W + (c * H + ih) * W + j];
            }
    }
}

/* ---- the gradient for the kernel ------------------------------------------

 * dW[co][c][ky][kx] = sum over examples and output positions (oh, ow) of
 * dy[co][oh][ow] * xp[c][(oh S + ky) Pp + ow S + kx]: a reduction over the
 * positions, so the vectors run over the output channels instead (16 at a
 * time, or 8 for F <= 8; dy transposed per example to [OH OW][Fp], Fp = F
 * rounded up to the vector) and each tap's input value is broadcast.  A block is CV channel vectors
 * x R kernel rows (c, ky) x KW taps, at most 25 accumulators kept in
 * registers over all of an example's positions, then added to a sum
 * [C KH][KW][Fp]; no horizontal sums, and any stride.  The R rows are R
 * pointers and the KW taps constant displacements from them (a table of
 * 24 tap offsets, loaded per tap, ran at a third of the speed), so KW is a
 * constant: instances for 3 and 5, and a generic one with R = 1.  With
 * one channel vector, each tap's broadcast fed one FMA, and the loads,
 * not the FMAs, set the pace; so the instances for 3 and 5 take P
 * positions a step (4 with one channel vector, 2 with two) at stride 1
 * and 2, where input value j of a row serves every (p, kx) with p S + kx
 * = j: 6 broadcasts for 12 FMAs of a 3-wide row at stride 1 (16-channel
 * layers 1.3x faster).  AVX2 (16 registers): vectors of 8 and at most 12
 * accumulators, 2 channel vectors x 2 rows x 3 taps a position, or 1 x 4
 * x 3 two positions a step; of the blocks tried, these were fastest on
 * 16- to 128-channel layers (4 x 1 x 3 and 2 x 2 x 3 at two positions
 * need 17 registers: up to 1.6x slower on 13x13 96-channel layers). */
enum { WACC = 25 };

/* The micro-kernel for vectors of type VT (VN floats; VU: the same at float
 * alignment), as a macro for the 16- and the 8-float one. */
#define DEF_WMICRO(name, VT, VU, VN) \
    static inline __attribute__((always_inline)) void name(const float *const *rows, const float *dyT, float *acc, \
                                                           int64_t OH, int64_t OW, int64_t Pp, int64_t S, int64_t Fp, \
                                                           int cv, int R, int64_t kw, int P) \
    { \
        VT a[WACC]; \
        for (int j = 0; j < R * kw * cv; j++) \
            a[j] = (VT){0}; \
        const float *r[8]; \
        for (int q = 0; q < R; q++) \
            r[q] = rows[q]; \
        for (int64_t oh = 0; oh < OH; oh++) { \
            const float *dr = dyT + oh * OW * Fp; \
            const int64_t g0 = oh * S * Pp; \
            int64_t ow = 0; \
            /* P positions a step: input value g + j serves every (p, kx) \
             * with p S + kx = j, one broadcast for up to kw FMAs */ \
            if (P > 1) \
                for (; ow + P <= OW; ow += P) { \
                    VT d[4][4]; \
                    for (int p = 0; p < P; p++) \
                        for (int k = 0; k < cv; k++) \
                            d[p][k] = *(const VU *)(dr + (ow + p) * Fp + VN * k); \
                    const int64_t g = g0 + ow * S; \
                    _Pragma("GCC unroll 8") for (int q = 0; q < R; q++) \
                        _Pragma("GCC unroll 16") for (int64_t j = 0; j < (P - 1) * S + kw; j++) \
                    { \
                        const float xv = r[q][g + j]; \
                        _Pragma("GCC unroll 8") for (int64_t kx = 0; kx < kw; \
                                                     kx++) if (j >= kx && (j - kx) % S == 0 && \
                                                               (j - kx) / S < P) for (int k = 0; k < cv; k++) \
                            a[(q * kw + kx) * cv + k] += d[(j - kx) / S][k] * xv; \
                    } \
                } \
            for (; ow < OW; ow++) { \
                VT d[4]; \
                for (int k = 0; k < cv; k++) \
                    d[k] = *(const VU *)(dr + ow * Fp + VN * k); \
                const int64_t g = g0 + ow * S; \
                for (int q = 0; q < R; q++) \
                    for (int64_t kx = 0; kx < kw; kx++) { \
                        const float xv = r[q][g + kx]; \
                        for (int k = 0; k < cv; k++) \
                            a[(q * kw + kx) * cv + k] += d[k] * xv; \
                    } \
            } \
        } \
        for (int j = 0; j < R * kw; j++) \
            for (int k = 0; k < cv; k++) \
                *(VU *)(acc + j * Fp + VN * k) += a[j * cv + k]; \
    }
#if !CONV_AVX2
DEF_WMICRO(wmicro, v16, v16u, 16)
#endif
DEF_WMICRO(wmicro8, v8, v8u, 8)

typedef struct {
    int cv, R, kw; /* kw: the instance's constant width, or 0 (the generic one) */
    void (*fn)(const float *const *, const float *, float *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
} wkernel;
/* P: positions a step at stride 1 and 2, where the kernel width is a
 * constant */
#define WMICRO(body, tag, cv, R, kw, P) \
    static void tag##_##cv##_##R##_##kw(const float *const *rows, const float *dyT, float *acc, int64_t OH, \
                                        int64_t OW, int64_t Pp, int64_t S, int64_t Fp, int64_t KW) \
    { \
        (void)KW; \
        if (P > 1 && S == 1) \
            body(rows, dyT, acc, OH, OW, Pp, 1, Fp, cv, R, kw, P); \
        else if (P > 1 && S == 2) \
            body(rows, dyT, acc, OH, OW, Pp, 2, Fp, cv, R, kw, P); \
        else \
            body(rows, dyT, acc, OH, OW, Pp, S, Fp, cv, R, kw, 1); \
    }
#if CONV_AVX2
/* AVX2: 8-float vectors, at most 12 accumulators in its 16 registers */
WMICRO(wmicro8, a8, 1, 4, 3, 2)
WMICRO(wmicro8, a8, 2, 2, 3, 1)
WMICRO(wmicro8, a8, 1, 2, 3, 2)
WMICRO(wmicro8, a8, 1, 1, 3, 2)
WMICRO(wmicro8, a8, 1, 2, 5, 2)
WMICRO(wmicro8, a8, 2, 1, 5, 1)
WMICRO(wmicro8, a8, 1, 1, 7, 2)
WMICRO(wmicro8, a8, 1, 3, 4, 1)
WMICRO(wmicro8, a8, 2, 1, 4, 2)
WMICRO(wmicro8, a8, 1, 4, 2, 2)
WMICRO(wmicro8, a8, 2, 3, 2, 1)
WMICRO(wmicro8, a8, 1, 1, KW, 1)
WMICRO(wmicro8, a8, 2, 1, KW, 1)
enum { WRUN = 12 }; /* the generic instance's accumulators */

/* the instance for KW and the rem channel vectors left (2 or 1) */
static const wkernel *pick(int64_t rem, int64_t KW, int64_t vn)
{
    static const wkernel k3[2] = {{1, 4, 3, a8_1_4_3}, {2, 2, 3, a8_2_2_3}};
    static const wkernel k5[2] = {{1, 2, 5, a8_1_2_5}, {2, 1, 5, a8_2_1_5}};
    static const wkernel k7[2] = {{1, 1, 7, a8_1_1_7}, {1, 1, 7, a8_1_1_7}};
    static const wkernel k4[2] = {{1, 3, 4, a8_1_3_4}, {2, 1, 4, a8_2_1_4}};
    static const wkernel k2[2] = {{1, 4, 2, a8_1_4_2}, {2, 3, 2, a8_2_3_2}};
    static const wkernel kk[2] = {{1, 1, 0, a8_1_1_KW}, {2, 1, 0, a8_2_1_KW}};
    (void)vn;
    const wkernel *t = KW == 3 ? k3 : KW == 5 ? k5 : KW == 7 ? k7 : KW == 4 ? k4 : KW == 2 ? k2 : kk;
    return &t[rem >= 2];
}

/* the last rows (c, ky) of a one-vector 3-wide block: 1 or 2 */
static const wkernel *tail(const wkernel *k, int64_t rem, int64_t KW, int64_t vn)
{
    static const wkernel t8[2] = {{1, 1, 3, a8_1_1_3}, {1, 2, 3, a8_1_2_3}};
    (void)vn;
    if (rem >= k->R || k->cv != 1 || KW != 3)
        return k;
    return rem <= 1 ? &t8[0] : &t8[1];
}
#else
WMICRO(wmicro, w16, 1, 8, 3, 4)
WMICRO(wmicro, w16, 2, 4, 3, 2)
WMICRO(wmicro, w16, 4, 2, 3, 1)
WMICRO(wmicro, w16, 1, 5, 5, 4)
WMICRO(wmicro, w16, 2, 2, 5, 2)
WMICRO(wmicro, w16, 4, 1, 5, 1)
WMICRO(wmicro, w16, 1, 3, 7, 2)
WMICRO(wmicro, w16, 2, 1, 7, 2)
WMICRO(wmicro, w16, 1, 6, 4, 2)
WMICRO(wmicro, w16, 2, 3, 4, 1)
WMICRO(wmicro, w16, 4, 1, 4, 2)
WMICRO(wmicro, w16, 1, 8, 2, 4)
WMICRO(wmicro, w16, 2, 6, 2, 1)
WMICRO(wmicro, w16, 4, 3, 2, 1)
WMICRO(wmicro, w16, 1, 1, KW, 1)
WMICRO(wmicro, w16, 2, 1, KW, 1)
WMICRO(wmicro, w16, 4, 1, KW, 1)
WMICRO(wmicro, w16, 1, 4, 3, 4)
WMICRO(wmicro, w16, 1, 2, 3, 4)
WMICRO(wmicro, w16, 1, 1, 3, 4)
WMICRO(wmicro8, w8, 1, 8, 3, 4)
WMICRO(wmicro8, w8, 1, 4, 3, 4)
WMICRO(wmicro8, w8, 1, 2, 3, 4)
WMICRO(wmicro8, w8, 1, 1, 3, 4)
WMICRO(wmicro8, w8, 1, 5, 5, 4)
WMICRO(wmicro8, w8, 1, 3, 7, 2)
WMICRO(wmicro8, w8, 1, 6, 4, 2)
WMICRO(wmicro8, w8, 1, 1, KW, 1)

/* the instance for KW and the rem channel vectors left (4, 2 or 1 of
 * them), of vn = 16 floats, or of 8 (one vector: F <= 8, where 16 lanes
 * would be half empty; AVX-512 machines run two 8-float FMAs a cycle
 * where they run one of 16) */
enum { WRUN = 24 }; /* the generic instance's accumulators */

static const wkernel *pick(int64_t rem, int64_t KW, int64_t vn)
{
    static const wkernel k3[3] = {{1, 8, 3, w16_1_8_3}, {2, 4, 3, w16_2_4_3}, {4, 2, 3, w16_4_2_3}};
    static const wkernel k5[3] = {{1, 5, 5, w16_1_5_5}, {2, 2, 5, w16_2_2_5}, {4, 1, 5, w16_4_1_5}};
    static const wkernel k7[3] = {{1, 3, 7, w16_1_3_7}, {2, 1, 7, w16_2_1_7}, {2, 1, 7, w16_2_1_7}};
    static const wkernel k4[3] = {{1, 6, 4, w16_1_6_4}, {2, 3, 4, w16_2_3_4}, {4, 1, 4, w16_4_1_4}};
    static const wkernel k2[3] = {{1, 8, 2, w16_1_8_2}, {2, 6, 2, w16_2_6_2}, {4, 3, 2, w16_4_3_2}};
    static const wkernel kk[3] = {{1, 1, 0, w16_1_1_KW}, {2, 1, 0, w16_2_1_KW}, {4, 1, 0, w16_4_1_KW}};
    static const wkernel k8[5] = {
        {1, 8, 3, w8_1_8_3}, {1, 5, 5, w8_1_5_5}, {1, 3, 7, w8_1_3_7}, {1, 6, 4, w8_1_6_4}, {1, 1, 0, w8_1_1_KW}};
    if (vn == 8)
        return KW == 3 ? &k8[0] : KW == 5 ? &k8[1] : KW == 7 ? &k8[2] : KW == 4 ? &k8[3] : &k8[4];
    const wkernel *t = KW == 3 ? k3 : KW == 5 ? k5 : KW == 7 ? k7 : KW == 4 ? k4 : KW == 2 ? k2 : kk;
    if (rem >= 4)
        return &t[2];
    if (rem >= 2)
        return &t[1];
    return &t[0];
}

/* The instance for the last rows (c, ky) of a one-vector 3-wide block: the
 * fewest of 4, 2 or 1 that cover rem, where the 8 of the full blocks would
 * mostly run dropped rows (a 3-channel stem: 9 rows = 8 + 1, of which the
 * second block of 8 wasted 7, a third of the layer's time). */
static const wkernel *tail(const wkernel *k, int64_t rem, int64_t KW, int64_t vn)
{
    static const wkernel t16[3] = {{1, 1, 3, w16_1_1_3}, {1, 2, 3, w16_1_2_3}, {1, 4, 3, w16_1_4_3}};
    static const wkernel t8[3] = {{1, 1, 3, w8_1_1_3}, {1, 2, 3, w8_1_2_3}, {1, 4, 3, w8_1_4_3}};
    if (rem >= k->R || k->cv != 1 || KW != 3)
        return k;
    const wkernel *t = vn == 8 ? t8 : t16;
    return rem <= 1 ? &t[0] : rem <= 2 ? &t[1] : rem <= 4 ? &t[2] : k;
}

#endif

/* The kernel's gradient at stride 1 with few output channels (F <= 8:
 * lenet5's first layer, F = 6, C = 1), where vectors over the channels
 * are mostly empty lanes and dy's transposition costs more than the
 * FMAs: vectors over the positions of the pitched grid instead (dy copied
 * to rows of pitch Pp = W + 2 pad, zero past OW), F channels x NT taps
 * accumulators, 16 lane sums per (f, tap) kept over the batch and added
 * up once at the end.  NT = 24 / F, a constant per instance. */
static inline __attribute__((always_inline)) void pmicro(const float *xp, const float *dyp, float *accv,
                                                         const int64_t *off, int64_t Lg, int64_t ntl, int mr, int nt)
{
    vf a[24];
    for (int j = 0; j < mr * nt; j++)
        a[j] = (vf){0};
    for (int64_t v = 0; v < Lg; v += VL) {
        vf d[8], xv[24];
        for (int r = 0; r < mr; r++)
            LD(d[r], dyp + r * Lg + v);
        for (int t = 0; t < nt; t++)
            LD(xv[t], xp + off[t] + v);
        for (int r = 0; r < mr; r++)
            for (int t = 0; t < nt; t++)
                a[r * nt + t] += d[r] * xv[t];
    }
    /* accv[r][t]: taps t of channel r, of the block's ntl, VL lanes each */
    for (int r = 0; r < mr; r++)
        for (int t = 0; t < nt; t++) {
            vf u;
            LD(u, accv + (r * ntl + t) * VL);
            u += a[r * nt + t];
            ST(accv + (r * ntl + t) * VL, u);
        }
}
typedef void pmicro_fn(const float *, const float *, float *, const int64_t *, int64_t, int64_t);
/* The accumulators of an instance: MR channels x NT = PACC / MR taps, all
 * of a block's 24 / F at AVX-512; at AVX2 (16 registers) 12, so a block
 * of taps goes in PACC / F at a time. */
enum { PACC = CONV_AVX2 ? 12 : 24 };
#define PMICRO(mr) \
    static void pmicro##mr(const float *xp, const float *dyp, float *accv, const int64_t *off, int64_t Lg, \
                           int64_t ntl) \
    { \
        pmicro(xp, dyp, accv, off, Lg, ntl, mr, PACC / (mr)); \
    }
PMICRO(1)
PMICRO(2)
PMICRO(3)
PMICRO(4)
PMICRO(5)
PMICRO(6)
PMICRO(7)
PMICRO(8)

static void filter_by_positions(int64_t N, const float *dy, const float *x, float *dw, int64_t C, int64_t H, int64_t W,
                                int64_t F, int64_t KH, int64_t KW, int64_t pad, float *work)
{
    static pmicro_fn *const fns[9] = {NULL, pmicro1, pmicro2, pmicro3, pmicro4, pmicro5, pmicro6, pmicro7, pmicro8};
    const int64_t Pp = W + 2 * pad, OH = H + 2 * pad - KH + 1, OW = Pp - KW + 1;
    int64_t Lin, Lg;
    nnc_conv_filter_grid(H, W, KH, KW, pad, &Lin, &Lg);
    const int64_t KK = KH * KW, CKK = C * KK, nt = 24 / F, nblk = (CKK + nt - 1) / nt; /* pmicro<F>'s */
    float *xp = work, *dyp = xp + C * Lin, *accv = dyp + F * Lg;
    memset(xp, 0, sizeof(float) * (size_t)(C * Lin));
    memset(dyp, 0, sizeof(float) * (size_t)(F * Lg)); /* positions past OW stay 0 */
    memset(accv, 0, sizeof(float) * (size_t)(nblk * F * nt * VL));
    for (int64_t b = 0; b < N; b++) {
        const float *xb = x + b * C * H * W, *db = dy + b * F * OH * OW;
        pad_image(xp, Lin, Pp, pad, pad, xb, C, H, W);
        for (int64_t f = 0; f < F; f++)
            for (int64_t i = 0; i < OH; i++)
                copy(dyp + f * Lg + i * Pp, db + (f * OH + i) * OW, OW);
        for (int64_t k = 0; k < nblk; k++) {
            /* the block's taps; past CKK, tap 0 again, into sums that are
             * dropped */
            int64_t off[24];
            for (int64_t t = 0; t < nt; t++) {
                const int64_t i = k * nt + t < CKK ? k * nt + t : 0, c = i / KK, q = i % KK;
                off[t] = c * Lin + q / KW * Pp + q % KW;
            }
            /* PACC / F taps a call (24 / F is a multiple of 12 / F for
             * every F <= 8) */
            for (int64_t t0 = 0; t0 < nt; t0 += PACC / F)
                fns[F](xp, dyp, accv + (k * F * nt + t0) * VL, off + t0, Lg, nt);
        }
    }
    for (int64_t k = 0; k < nblk; k++)
        for (int64_t f = 0; f < F; f++)
            for (int64_t t = 0; t < nt && k * nt + t < CKK; t++) {
                const float *u = accv + ((k * F + f) * nt + t) * VL;
                float s = 0;
                for (int l = 0; l < VL; l++)
                    s += u[l];
                dw[f * CKK + k * nt + t] = s;
            }
}

void NNC_ISA_FN(nnc_conv2d_bwd_filter_f32)(int64_t N, const float *dy, const float *x, float *dw, int64_t C, int64_t H,
                                           int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t S, int64_t pad,
                                           float *work, int64_t work_len)
{
    check_work("nnc_conv2d_bwd_filter_f32", work_len, nnc_conv2d_bwd_filter_work(C, H, W, F, KH, KW, S, pad));
    if (!NNC_ISA_FN(nnc_conv_direct_ok)()) {
        NNC_ISA_FN(nnc_conv2d_cols_bwd_filter_f32)(N, dy, x, dw, C, H, W, F, KH, KW, S, pad, work, work_len);
        return;
    }
#if defined(__AVX512F__) || CONV_AVX2
    if (S == 1 && N > 0 && wino_here(NNC_CONV_FILTER, C, H, W, F, KH, KW, pad) &&
        !wino_filter_call(N, dy, x, dw, C, H, W, pad, F, work))
        return;
#endif
    if (S == 1 && F <= 8) {
        filter_by_positions(N, dy, x, dw, C, H, W, F, KH, KW, pad, work);
        return;
    }
    const int64_t Hp = H + 2 * pad, Pp = W + 2 * pad, OH = (Hp - KH) / S + 1, OW = (Pp - KW) / S + 1;
    const int64_t vn = F <= 8 ? 8 : VL, Fp = (F + vn - 1) / vn * vn, CKH = C * KH, CKK = CKH * KW;
    float *xp = work, *dyT = xp + C * Hp * Pp, *acc = dyT + OH * OW * Fp;
    memset(xp, 0, sizeof(float) * (size_t)(C * Hp * Pp));
    memset(dyT, 0, sizeof(float) * (size_t)(OH * OW * Fp)); /* lanes F..Fp stay 0 */
    memset(acc, 0, sizeof(float) * (size_t)((CKH + 7) * KW * Fp));
    for (int64_t b = 0; b < N; b++) {
        const float *xb = x + b * C * H * W, *db = dy + b * F * OH * OW;
        pad_image(xp, Hp * Pp, Pp, pad, pad, xb, C, H, W);
        /* in runs of output rows whose dyT (<= 16 KB) stays in L1: its
         * transposition stores a cache line per value (all of dyT at
         * once, 64 KB for 32x32 outputs, made the stores miss L1 and took
         * longer than a 3-channel layer's FMAs) */
        const int64_t rc = 4096 / (OW * Fp) > 1 ? 4096 / (OW * Fp) : 1;
        for (int64_t oh0 = 0; oh0 < OH; oh0 += rc) {
            const int64_t nr = OH - oh0 < rc ? OH - oh0 : rc, p0 = oh0 * OW, np = nr * OW;
            transpose(dyT, Fp, db + p0, OH * OW, F, np);
            for (int64_t cb = 0; cb < Fp / vn;) {
                /* (gcc 12 at -O3 -march=native miscompiled this choice
                 * written as cv = rem >= 4 ? 4 : rem >= 2 ? 2 : 1 and an
                 * index from cv: a cmov tested the flags of a later inc, so
                 * one vector left ran the 2-vector kernel; the test
                 * runtime.conv_native caught it) */
                const wkernel *k = pick(Fp / vn - cb, KW, vn);
                /* the generic instance (R = 1) takes the row's taps in runs
                 * of at most WRUN / cv, its accumulators */
                const int64_t run = k->kw ? k->kw : WRUN / k->cv;
                for (int64_t q0 = 0; q0 < CKH;) {
                    const wkernel *kq = tail(k, CKH - q0, KW, vn);
                    for (int64_t kx0 = 0; kx0 < KW; kx0 += run) {
                        /* the block's rows; past CKH, row 0 again, into
                         * rows of acc that are dropped */
                        const float *rows[8];
                        for (int q = 0; q < kq->R; q++) {
                            const int64_t row = q0 + q < CKH ? q0 + q : 0;
                            rows[q] = xp + (row / KH * Hp + row % KH + oh0 * S) * Pp + kx0;
                        }
                        kq->fn(rows, dyT + cb * vn, acc + (q0 * KW + kx0) * Fp + cb * vn, nr, OW, Pp, S, Fp,
                               KW - kx0 < run ? KW - kx0 : run);
                    }
                    q0 += kq->R;
                }
                cb += k->cv;
            }
        }
    }
    for (int64_t f = 0; f < F; f++)
        for (int64_t i = 0; i < CKK; i++)
            dw[f * CKK + i] = acc[i * Fp + f];
}
