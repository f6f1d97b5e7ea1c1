/* nnc_conv.h — the work-buffer sizes of the convolution kernels (conv.c's
 * direct ones, conv_cols.c's columns), and the size limit of attn.c's
 * causal product.  Shared by the runtime and by the compiler, which
 * reserves the buffer in the generated model's arena: one formula, so the
 * two cannot disagree (the convolution kernels also check the length they
 * are given).  A direct kernel's work holds the columns' too: without
 * AVX-512 or AVX2 it runs the columns instead (nnc_conv_direct_ok).
 *
 * A stride-1 convolution pads each image into channels of Lin floats whose
 * rows have pitch Pp = W + pw: a row's pw zeros on the right are the next
 * row's left padding (W + 2 pw when pw > KW - 1, where an output row would
 * be longer than that).  It computes an output grid of Lout positions (OH
 * rows of pitch Pp, up to the last row's last output, rounded up to
 * NNC_CONV_BLOCK, one vector); Lin leaves the slack that the grid's last
 * positions read.  The grid ends at that output, not at the end of the
 * last row's pitch, for images of one row (Conv1D's 1 x W): 128 outputs
 * in a pitch of 130 made a grid of 9 vectors for 8 of outputs.
 */
#ifndef NNC_CONV_H
#define NNC_CONV_H

#include <stdint.h>

#define NNC_CONV_BLOCK 16 /* one vector of floats */

/* The floats of nnc_matmul_causal_nt_f32's copy of bᵀ (attn.c), which
 * lives on the stack and holds the keys a block at a time, at least
 * NNC_CAUSAL_NT_KEYS of them: the compiler uses a GEMM for a K past
 * NNC_CAUSAL_NT_MAX / NNC_CAUSAL_NT_KEYS (512). */
#define NNC_CAUSAL_NT_MAX 8192
#define NNC_CAUSAL_NT_KEYS 16

/* The columns (conv_cols.c) of small images go G examples to a GEMM: a
 * 4x4 layer's [C KH KW][16] columns made GEMMs 16 wide, which OpenBLAS
 * runs at half speed; G examples make them G OH OW wide, at least 256
 * columns (G at most 64).  Images of 256 positions or more go one at a
 * time (G = 1). */
static inline int64_t nnc_conv_cols_group(int64_t OH, int64_t OW)
{
    const int64_t P = OH * OW, g = P > 0 ? (256 + P - 1) / P : 1;
    return P >= 256 ? 1 : g > 64 ? 64 : g;
}

/* Whether conv.c's direct kernels leave an output grid of OH x OW to the
 * columns: below 64 positions a grid row of vectors is mostly padding
 * (a 4x4 layer's 16 outputs fill 2 vectors of 16 lanes with 20 grid
 * positions), and G of them in one GEMM run 1.7x faster (kernel.c). */
static inline int nnc_conv_small_grid(int64_t OH, int64_t OW) { return OH * OW < 64; }

/* The columns' work: one example's im2col [C KH KW][OH OW], none for a
 * 1x1 kernel at stride 1 without padding (the image is the GEMM's
 * operand); grouped (G > 1), G examples' columns and their outputs (or
 * dy's) [F][G OH OW] after them; for the forward pass and the data
 * gradient ... */
static inline int64_t nnc_conv2d_cols_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                           int64_t stride, int64_t pad)
{
    const int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1,
                  G = nnc_conv_cols_group(OH, OW);
    if (G > 1) /* and the taps' table, [KH KW][OH OW] int32 */
        return (C * KH * KW + F) * G * OH * OW + KH * KW * OH * OW;
    if (KH == 1 && KW == 1 && stride == 1 && pad == 0)
        return 0;
    return C * KH * KW * OH * OW;
}

/* ... and for the kernel's gradient, dWᵀ [C KH KW][F] after them (before
 * the table) */
static inline int64_t nnc_conv2d_cols_bwd_filter_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH,
                                                      int64_t KW, int64_t stride, int64_t pad)
{
    return nnc_conv2d_cols_work(C, H, W, F, KH, KW, stride, pad) + C * KH * KW * F;
}

static inline int64_t nnc_conv_max(int64_t a, int64_t b) { return a > b ? a : b; }

/* the positions of a grid of OH rows of pitch Pp to the last row's OW-th
 * output, rounded up to vectors (above) */
static inline int64_t nnc_conv_grid_len(int64_t OH, int64_t OW, int64_t Pp)
{
    const int64_t n = OH > 0 && OW > 0 ? (OH - 1) * Pp + OW : 0;
    return (n + NNC_CONV_BLOCK - 1) / NNC_CONV_BLOCK * NNC_CONV_BLOCK;
}

static inline void nnc_conv_grid(int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t ph, int64_t pw, int64_t *Lin,
                                 int64_t *Lout, int64_t *Pp)
{
    const int64_t Hp = H + 2 * ph, OH = Hp - KH + 1, OW = W + 2 * pw - KW + 1;
    *Pp = pw <= KW - 1 ? W + pw : W + 2 * pw;
    *Lout = nnc_conv_grid_len(OH, OW, *Pp);
    *Lin = *Lout + (KH - 1) * *Pp + KW;
    if (*Lin < Hp * *Pp + pw)
        *Lin = Hp * *Pp + pw;
    if (KH == 1) /* whole vectors a channel, so that conv.c's kernel of one row reads its rows aligned */
        *Lin = (*Lin + NNC_CONV_BLOCK - 1) / NNC_CONV_BLOCK * NNC_CONV_BLOCK;
}

/* Stride 2: the padded image split into its 4 phases (even/odd rows x
 * even/odd columns), each [C][Lin] with rows of pitch Pp = ceil((W + 2 pw)
 * / 2), so that every tap is again a shift within one phase. */
static inline void nnc_conv_grid2(int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t ph, int64_t pw, int64_t *Lin,
                                  int64_t *Lout, int64_t *Pp)
{
    const int64_t Hp = H + 2 * ph, Hq = (Hp + 1) / 2, OH = (Hp - KH) / 2 + 1, OW = (W + 2 * pw - KW) / 2 + 1;
    *Pp = (W + 2 * pw + 1) / 2;
    *Lout = nnc_conv_grid_len(OH, OW, *Pp);
    *Lin = *Lout + (KH - 1) / 2 * *Pp + (KW - 1) / 2 + 1;
    if (*Lin < Hq * *Pp)
        *Lin = Hq * *Pp;
}

/* Floats of slack in the direct kernels' work where conv.c rounds the
 * padded image's start up to 64 bytes: a kernel of one row (KH 1) at
 * stride 1, whose rows it reads as aligned vectors */
static inline int64_t nnc_conv_row_slack(int64_t S, int64_t KH) { return S == 1 && KH == 1 ? 15 : 0; }

/* The direct forward kernel's own work at stride S (1 or 2), padding ph
 * rows and pw columns: the padded image (its 4 phases at stride 2) and
 * the output grid.  The general convolution's ungrouped layers of ph !=
 * pw run it alone (nnc_conv2d_gen_group_work). */
static inline int64_t nnc_conv_direct_fwd_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                               int64_t S, int64_t ph, int64_t pw)
{
    int64_t Lin, Lout, Pp;
    if (S == 1)
        nnc_conv_grid(H, W, KH, KW, ph, pw, &Lin, &Lout, &Pp);
    else
        nnc_conv_grid2(H, W, KH, KW, ph, pw, &Lin, &Lout, &Pp);
    return (S == 1 ? 1 : 4) * C * Lin + F * Lout + nnc_conv_row_slack(S, KH);
}

static inline int64_t nnc_conv2d_s2_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                         int64_t pad)
{
    return nnc_conv_max(nnc_conv_direct_fwd_work(C, H, W, F, KH, KW, 2, pad, pad),
                        nnc_conv2d_cols_work(C, H, W, F, KH, KW, 2, pad));
}

/* A convolution's three passes: the forward pass, the data gradient and
 * the kernel gradient. */
enum { NNC_CONV_FWD, NNC_CONV_DATA, NNC_CONV_FILTER };

/* Whether a stride-1 layer (or its data gradient, C and F swapped) is of
 * Winograd's class: 3x3, and either square images of 4x4, 8x8, 16x16 or
 * 32x32 at padding 1, which have transforms of their own
 * (nnc_conv_wino_special: 16 images of 4x4 a block, 4 of 8x8, one of
 * 16x16, a quarter of one 32x32), with 32 or more channels in and out at
 * 4x4, 16 or more at the others; or any other image of at least 8x8 at
 * padding 0 or 1 with 32 or more channels, whose tiles are loaded a row
 * at a time (conv.c), and whose example of C H W (and F) floats is at
 * most 2^24 (the block's offsets in 32 bits).  Each pass of such a layer
 * goes by Winograd's F(2x2, 3x3) where the runtime has AVX-512 or AVX2 +
 * FMA (conv.c) and both channel counts reach nnc_conv_wino_least, else by
 * the direct kernel; the work holds either.  Winograd's work: the
 * transformed kernel U [16][C][F], a block of 64 tiles' transformed input
 * V [16][C][64] and products M [16][F][64]. */
static inline int nnc_conv_wino_special(int64_t H, int64_t W, int64_t pad)
{
    return pad == 1 && H == W && (H == 4 || H == 8 || H == 16 || H == 32);
}

static inline int nnc_conv_wino(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t pad)
{
    if (KH != 3 || KW != 3)
        return 0;
    if (nnc_conv_wino_special(H, W, pad)) {
        const int64_t least = H == 4 ? 32 : 16;
        return C >= least && F >= least;
    }
    const int64_t most = C > F ? C : F;
    return (pad == 0 || pad == 1) && H >= 8 && W >= 8 && C >= 32 && F >= 32 &&
        most * (H + 2) * (W + 2) <= (int64_t)1 << 24;
}

/* The least channel count, in and out, at which pass `pass` of a layer of
 * the class goes by Winograd, where the CPU's vector FMAs give AVX-512 no
 * more floats a cycle than AVX2 (narrow: nnc_isa_fma_narrow(), at AVX2
 * and on AMD's Zen 4) or twice as many (Intel's AVX-512 server cores;
 * AMD's Zen 5, below).
 * Its transforms cost in proportion to the channels, its products to
 * their square, so the faster the FMAs the later it pays.  On the Xeon
 * (wide), at 16 channels (32 images of 32x32 or 16x16) Winograd ran the
 * forward pass 0.97-1.0x as fast as the direct kernel at AVX-512, 1.16-1.43x
 * at AVX2; at 24, 1.2-1.65x and 1.45-1.8x.  The kernel gradient's
 * products feed 6 FMAs a broadcast for 16 output channels (a vector of
 * them at AVX-512): 0.7-0.85x the direct kernel at 16 and 24 channels
 * there, 0.83x at 16 and 1.2x at 24 with AVX2.  On the EPYC (Zen 4) at
 * AVX-512 the narrow counts took whole steps 4-6% below the wide ones
 * (docs/decisions.md).  The other sizes' row loads cost more than the
 * special sizes' permutes: on the EPYC at AVX-512, 16 batches of 16 or 24
 * channels at 12x12 to 28x28 ran 0.84-1.1x as fast as the direct kernel,
 * of 32 at 9x9 and 28x28 1.0-1.08x, 32 to 40 at 24x24 1.25x, 40 to 80 at
 * 12x12 1.6x: from 32 (narrow), and from 48 where the FMAs are wide (not
 * measured there).  AMD's Zen 5 has wide FMAs but takes the narrow counts
 * (nnc_isa_wino_early()): at 1 thread, whole steps with them against the
 * wide ones, 3 alternated runs, medians: cnn48 9.08 -> 8.14 ms, vgg_small
 * 16.42 -> 15.14, resnet_small 25.85 -> 24.34, resnet18 36.03 -> 34.42. */
static inline int64_t nnc_conv_wino_least(int pass, int narrow, int64_t H, int64_t W, int64_t pad)
{
    if (!nnc_conv_wino_special(H, W, pad))
        return narrow ? 32 : 48;
    if (H == 4)
        return 32;
    if (pass == NNC_CONV_FILTER)
        return narrow ? 24 : 32;
    return narrow ? 16 : 24;
}

#define NNC_WINO_PAD 16 /* floats after each of the 16 planes (conv.c) */
static inline int64_t nnc_conv_wino_work(int64_t C, int64_t F)
{
    return 16 * (C * F + 64 * C + 64 * F + 3 * NNC_WINO_PAD);
}

/* and its kernel gradient's: V [16][C][64], dy's transform Z [16][64][Fp],
 * dU [16][C][Fp] and an example of dy transposed [H W][Fp], Fp = F rounded
 * up to 16 floats, AVX-512's vector (AVX2 rounds up to its 8 within it) */
static inline int64_t nnc_conv_wino_filter_work(int64_t C, int64_t H, int64_t W, int64_t F)
{
    const int64_t Fp = (F + 15) / 16 * 16;
    return 16 * (64 * C + 64 * Fp + C * Fp + 3 * NNC_WINO_PAD) + H * W * Fp;
}

/* floats of work for nnc_conv2d_s1_f32: the padded image, the output grid
 * (or Winograd's, or the columns') */
static inline int64_t nnc_conv2d_s1_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                         int64_t pad)
{
    const int64_t d = nnc_conv_direct_fwd_work(C, H, W, F, KH, KW, 1, pad, pad),
                  wi = nnc_conv_wino(C, H, W, F, KH, KW, pad) ? nnc_conv_wino_work(C, F) : 0;
    return nnc_conv_max(nnc_conv_max(d, wi), nnc_conv2d_cols_work(C, H, W, F, KH, KW, 1, pad));
}

/* for nnc_conv2d_s1_bwd_data_hw_f32: the flipped kernel, then the direct
 * kernel's for dy padded by KH - 1 - ph rows and KW - 1 - pw columns */
static inline int64_t nnc_conv2d_s1_bwd_data_hw_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                                     int64_t ph, int64_t pw)
{
    return F * C * KH * KW +
        nnc_conv_direct_fwd_work(F, H + 2 * ph - KH + 1, W + 2 * pw - KW + 1, C, KH, KW, 1, KH - 1 - ph, KW - 1 - pw);
}

/* for nnc_conv2d_s1_bwd_data_f32: the direct kernel's (above), or
 * Winograd's (dy's F channels in), or the columns' */
static inline int64_t nnc_conv2d_s1_bwd_data_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                                  int64_t pad)
{
    const int64_t d = nnc_conv2d_s1_bwd_data_hw_work(C, H, W, F, KH, KW, pad, pad);
    const int64_t wi = nnc_conv_wino(F, H, W, C, KH, KW, pad) ? nnc_conv_wino_work(F, C) : 0;
    return nnc_conv_max(nnc_conv_max(d, wi), nnc_conv2d_cols_work(C, H, W, F, KH, KW, 1, pad));
}

/* The stride-2 data gradient by dx's 4 phases (even/odd rows x even/odd
 * columns): phase (ry, rx) at (i, j) reads dy at (i + dy, j + dx) for the
 * taps ky = ry + pad - 2 dy (and kx alike), a stride-1 correlation of dy
 * with a kernel of 0 to ceil(K/2) taps a side.  dy is padded once into
 * rows of pitch Pp, pt rows above and pl columns before, so that every
 * phase's grid of Hg = ceil(H/2) rows x Wg = ceil(W/2) columns (rows of
 * pitch Pp, Lout positions to the last row's last column, rounded up to
 * a vector: nnc_conv_grid_len) reads only dy and
 * zeros; Lin leaves the slack its last positions read. */
/* Phase r's taps along one axis (r = 0: the even positions, 1: the odd
 * ones): k = k0, k0 + 2, ... (n of them, those with r + pad - k even);
 * tap t reads dy at offset d0 - t from the phase's position. */
static inline void nnc_conv_phase_taps(int64_t r, int64_t K, int64_t pad, int64_t *k0, int64_t *n, int64_t *d0)
{
    *k0 = (r + pad) % 2;
    *n = K > *k0 ? (K - *k0 + 1) / 2 : 0;
    *d0 = (r + pad - *k0) / 2;
}

/* the least and greatest dy offset over both phases' taps */
static inline void nnc_conv_grid2t_range(int64_t K, int64_t pad, int64_t *dmin, int64_t *dmax)
{
    *dmin = 0, *dmax = 0;
    int first = 1;
    for (int64_t r = 0; r < 2; r++) {
        int64_t k0, n, d0;
        nnc_conv_phase_taps(r, K, pad, &k0, &n, &d0);
        if (n == 0)
            continue;
        if (first || d0 - (n - 1) < *dmin)
            *dmin = d0 - (n - 1);
        if (first || d0 > *dmax)
            *dmax = d0;
        first = 0;
    }
}

static inline void nnc_conv_grid2t(int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t pad, int64_t *Lin,
                                   int64_t *Lout, int64_t *Pp, int64_t *pt, int64_t *pl)
{
    const int64_t OH = (H + 2 * pad - KH) / 2 + 1, OW = (W + 2 * pad - KW) / 2 + 1, Hg = (H + 1) / 2, Wg = (W + 1) / 2;
    int64_t ymin, ymax, xmin, xmax;
    nnc_conv_grid2t_range(KH, pad, &ymin, &ymax);
    nnc_conv_grid2t_range(KW, pad, &xmin, &xmax);
    *pt = ymin < 0 ? -ymin : 0;
    *pl = xmin < 0 ? -xmin : 0;
    const int64_t pb = Hg - 1 + ymax - (OH - 1) > 0 ? Hg - 1 + ymax - (OH - 1) : 0,
                  pr = Wg - 1 + xmax - (OW - 1) > 0 ? Wg - 1 + xmax - (OW - 1) : 0;
    *Pp = *pl + OW + pr;
    *Lout = nnc_conv_grid_len(Hg, Wg, *Pp);
    *Lin = *Lout + (ymax + *pt) * *Pp + xmax + *pl;
    if (*Lin < (*pt + OH + pb) * *Pp)
        *Lin = (*pt + OH + pb) * *Pp;
}

/* for nnc_conv2d_s2_bwd_data_f32: dy padded, the kernel regrouped by
 * phase, the 4 phases' grids of dx (or the columns') */
static inline int64_t nnc_conv2d_s2_bwd_data_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                                  int64_t pad)
{
    int64_t Lin, Lout, Pp, pt, pl;
    nnc_conv_grid2t(H, W, KH, KW, pad, &Lin, &Lout, &Pp, &pt, &pl);
    return nnc_conv_max(F * Lin + F * C * KH * KW + 4 * C * Lout, nnc_conv2d_cols_work(C, H, W, F, KH, KW, 2, pad));
}

/* The kernel gradient by positions (F <= 8, stride 1): the image padded
 * into rows of pitch W + 2 pad, dy on a grid of Lg positions (OH rows of
 * that pitch to the last output, rounded up to a vector:
 * nnc_conv_grid_len), Lin per channel with the slack the
 * grid's last positions read. */
static inline void nnc_conv_filter_grid(int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t pad, int64_t *Lin,
                                        int64_t *Lg)
{
    const int64_t Hp = H + 2 * pad, Pp = W + 2 * pad, reach_base = (KH - 1) * Pp + KW;
    *Lg = nnc_conv_grid_len(Hp - KH + 1, Pp - KW + 1, Pp);
    *Lin = *Lg + reach_base > Hp * Pp ? *Lg + reach_base : Hp * Pp;
}

/* for nnc_conv2d_bwd_filter_f32 (any stride): the padded image, dy
 * transposed to [OH OW][F rounded up to 16], the sums [C KH + 7][KW][F
 * rounded up to 16] (a block of rows may run up to 7 past the end); or
 * the columns' */
static inline int64_t nnc_conv2d_bwd_filter_work(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                                 int64_t stride, int64_t pad)
{
    const int64_t Hp = H + 2 * pad, Pp = W + 2 * pad, OH = (Hp - KH) / stride + 1, OW = (Pp - KW) / stride + 1;
    const int64_t Fp = (F + 15) / 16 * 16, cols = nnc_conv2d_cols_bwd_filter_work(C, H, W, F, KH, KW, stride, pad);
    int64_t by_channels = C * Hp * Pp + OH * OW * Fp + (C * KH + 7) * KW * Fp;
    if (stride == 1 && nnc_conv_wino(C, H, W, F, KH, KW, pad) && nnc_conv_wino_filter_work(C, H, W, F) > by_channels)
        by_channels = nnc_conv_wino_filter_work(C, H, W, F);
    if (stride != 1 || F > 8)
        return nnc_conv_max(by_channels, cols);
    /* F <= 8 at stride 1, by positions: the padded image with the grid's
     * slack, dy on the grid, 16-lane sums for each (f, tap) in blocks of
     * 24 / F taps */
    int64_t Lin, Lg;
    nnc_conv_filter_grid(H, W, KH, KW, pad, &Lin, &Lg);
    const int64_t nt = 24 / F;
    const int64_t by_positions = C * Lin + F * Lg + (C * KH * KW + nt - 1) / nt * F * nt * 16;
    return nnc_conv_max(nnc_conv_max(by_positions, by_channels), cols);
}

/* The work of one call of the kernel kernel.c chose for a convolution:
 * `pass` NNC_CONV_FWD, NNC_CONV_DATA or NNC_CONV_FILTER (the kernel's
 * gradient); `direct`, conv.c's kernels (stride 1, or 2 by phases), else
 * conv_cols.c's columns.  The compiler reserves it, threads.c hands it to
 * each call: one formula, so the two agree. */
static inline int64_t nnc_conv_kernel_work(int pass, int direct, int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH,
                                           int64_t KW, int64_t stride, int64_t pad)
{
    if (pass == NNC_CONV_FILTER)
        return direct ? nnc_conv2d_bwd_filter_work(C, H, W, F, KH, KW, stride, pad)
                      : nnc_conv2d_cols_bwd_filter_work(C, H, W, F, KH, KW, stride, pad);
    if (!direct)
        return nnc_conv2d_cols_work(C, H, W, F, KH, KW, stride, pad);
    if (pass == NNC_CONV_FWD)
        return stride == 1 ? nnc_conv2d_s1_work(C, H, W, F, KH, KW, pad) : nnc_conv2d_s2_work(C, H, W, F, KH, KW, pad);
    return stride == 1 ? nnc_conv2d_s1_bwd_data_work(C, H, W, F, KH, KW, pad)
                       : nnc_conv2d_s2_bwd_data_work(C, H, W, F, KH, KW, pad);
}

/* Threads (threads.c): the kernel gradient sums over the batch, so it is
 * split into items of examples whose partial sums are added in item
 * order; the number of items depends on the shapes alone, never on the
 * threads, so every thread count gives the same bits.  An item adds dW's
 * floats once more in memory; it is worth it where each of dW's floats
 * takes at least ~160 products per item (a late 4x4 layer of resnet18 at
 * batch 16 runs as 2 items, a 2x2 one as 1).  The items after the first
 * keep their partial dW in their thread's work, after the kernel's. */
static inline int64_t nnc_conv_filter_items(int64_t N, int64_t OH, int64_t OW, int64_t max_items)
{
    int64_t k = 1 + N * OH * OW / 160;
    if (k > max_items)
        k = max_items;
    return k < N ? k : N > 0 ? N : 1;
}

/* the work of one thread's item of a kernel gradient: the kernel's (one
 * of the two above) and a partial dW */
static inline int64_t nnc_conv_filter_item_work(int64_t kernel_work, int64_t C, int64_t F, int64_t KH, int64_t KW)
{
    return kernel_work + F * C * KH * KW;
}

/* ---- the general convolution (conv_cols_tmpl.h) ------------------------------
 *
 * What the kernels above do not take: groups (depthwise included),
 * dilation, and strides or padding that differ between rows and columns
 * (PyTorch's Conv2d in full; conv1d and conv_transpose2d reach it
 * through the compiler).  One geometry, passed by pointer: w is
 * [F][C / groups][KH][KW], group k reads channels [k C/G, (k + 1) C/G)
 * and writes filters [k F/G, (k + 1) F/G); tap (ki, kj) of output (oh,
 * ow) reads the image at (oh sh - ph + ki dh, ow sw - pw + kj dw). */
typedef struct nnc_conv2d_geom {
    int64_t C, H, W, F, KH, KW;
    int64_t sh, sw, ph, pw, dh, dw, groups;
} nnc_conv2d_geom;

static inline int64_t nnc_conv2d_geom_oh(const nnc_conv2d_geom *g)
{
    return (g->H + 2 * g->ph - g->dh * (g->KH - 1) - 1) / g->sh + 1;
}

static inline int64_t nnc_conv2d_geom_ow(const nnc_conv2d_geom *g)
{
    return (g->W + 2 * g->pw - g->dw * (g->KW - 1) - 1) / g->sw + 1;
}

/* A depthwise layer's padded channel xq (conv_cols_tmpl.h), its rows
 * split into their sw column phases: a phase's width ceil((W + 2 pw) /
 * sw), and the whole [H + 2 ph][sw][that]. */
static inline int64_t nnc_conv2d_dw_q(const nnc_conv2d_geom *g) { return (g->W + 2 * g->pw + g->sw - 1) / g->sw; }
static inline int64_t nnc_conv2d_dw_xq(const nnc_conv2d_geom *g)
{
    return (g->H + 2 * g->ph) * g->sw * nnc_conv2d_dw_q(g);
}

/* Its data gradient (conv_cols_tmpl.h, dw_data_vec) reads
 * each filter's dy [OH][OW] inside zero margins: (KH - 1) dh / sh rows
 * above, (KW - 1) dw / sw columns to the left, and as many rows and
 * columns as the padded image's rows and column phases reach. */
static inline int64_t nnc_conv2d_dw_pt(const nnc_conv2d_geom *g) { return (g->KH - 1) * g->dh / g->sh; }
static inline int64_t nnc_conv2d_dw_pl(const nnc_conv2d_geom *g) { return (g->KW - 1) * g->dw / g->sw; }
static inline int64_t nnc_conv2d_dw_pitch(const nnc_conv2d_geom *g)
{
    const int64_t OW = nnc_conv2d_geom_ow(g), Wq = nnc_conv2d_dw_q(g);
    return nnc_conv2d_dw_pl(g) + (OW > Wq ? OW : Wq);
}
static inline int64_t nnc_conv2d_dw_rows(const nnc_conv2d_geom *g)
{
    const int64_t OH = nnc_conv2d_geom_oh(g), reach = (g->ph + g->H - 1) / g->sh + 1;
    return nnc_conv2d_dw_pt(g) + (OH > reach ? OH : reach);
}

/* Whether an ungrouped layer of ph != pw is too short for the direct
 * forward kernel: a grid under 64 positions, but for one row (Conv1D)
 * under 16 where `wide` (the kernels' build for vectors of 16).  At
 * AVX-512 the direct kernel beat the columns' G examples to a GEMM from
 * 12 outputs up (1 thread, Zen 5, batch 64, 3 taps, GFLOP/s): 96 -> 128
 * channels over 16 / 24 / 40 / 50 / 63 outputs 124 -> 128, 136 -> 161,
 * 168 -> 202, 174 -> 196, 190 -> 243; 40 -> 64 over 12 and 16 74 -> 92,
 * 98 -> 124; 64 -> 96 of 5 taps over 20 124 -> 138; it lost over 8 (77
 * -> 66).  At AVX2 it won or lost by up to 25% (64 -> 96 of 5 taps over
 * 20: 87 -> 65), so the columns keep those grids there (conv_cols_tmpl.h
 * grp_ok).  The work is sized for either (wide 1 below). */
static inline int nnc_conv1d_short(const nnc_conv2d_geom *g, int wide)
{
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g);
    return OH == 1 && wide ? OW < 16 : nnc_conv_small_grid(OH, OW);
}

/* A layer that runs an example (of a group) at a time through conv.c's
 * direct kernels in the AVX-512 and AVX2 builds (conv_cols_tmpl.h,
 * grp_run): equal strides of 1 or 2, paddings below the kernel's size, no
 * dilation, at least 64 output positions (a Conv1D's row at least 16:
 * nnc_conv1d_short), and either
 *   - groups of several channels each (ResNeXt's), of one padding: each
 *     pass;
 *   - or no groups and a padding that differs between rows and columns
 *     (Conv1D's 1 x W images, padded along W only): the forward pass,
 *     which conv.c's direct kernel takes with ph and pw; and at stride 1
 *     the data gradient, as the convolution of dy by the kernel flipped
 *     along W with F and C swapped, padded by KW - 1 - pw, where conv.c
 *     reads rows aligned (nnc_isa_conv_rows(): Intel at AVX-512; 1
 *     thread, batch 64, an Ice Lake Xeon, columns -> direct, GFLOP/s: 64
 *     -> 64 channels of 5 taps over 128 84 -> 123, 128 -> 128 of 3 over
 *     64 83 -> 126, 64 -> 96 over 101 78 -> 107, 96 -> 128 over 50 81
 *     -> 99).  Elsewhere the gradients keep the columns: on Zen 5
 *     cnn1d's direct data gradients ran as fast as the columns (faster
 *     on 64 channels of 5 taps, slower on 128 of 3), its kernel
 *     gradients 0.35 ms a step slower (docs/decisions.md).
 * Returns the work of one call for `pass` (a grouped kernel gradient's
 * with one example's partial dW_k after it), or -1 where the layer or
 * pass is not such. */
static inline int64_t nnc_conv2d_gen_group_work(const nnc_conv2d_geom *g, int pass)
{
    const int64_t Cg = g->C / g->groups, Fg = g->F / g->groups, KH = g->KH, KW = g->KW, S = g->sh;
    const int grouped = g->groups >= 2 && Cg >= 2 && g->pw == g->ph,
              ungrouped = g->groups == 1 && g->pw != g->ph &&
        (pass == NNC_CONV_FWD || (pass == NNC_CONV_DATA && S == 1 && KH == 1 && g->ph == 0));
    if (!(grouped || ungrouped) || g->sw != S || (S != 1 && S != 2) || g->dh != 1 || g->dw != 1 || KH * KW < 2 ||
        Cg * KH * KW > 4096 || g->ph >= KH || g->pw >= KW ||
        (ungrouped ? nnc_conv1d_short(g, 1) : nnc_conv_small_grid(nnc_conv2d_geom_oh(g), nnc_conv2d_geom_ow(g))))
        return -1;
    if (ungrouped && pass == NNC_CONV_DATA) /* the flipped kernel, then dy's convolution by it */
        return nnc_conv2d_s1_bwd_data_hw_work(g->C, g->H, g->W, g->F, KH, KW, g->ph, g->pw);
    if (ungrouped)
        return nnc_conv_direct_fwd_work(g->C, g->H, g->W, g->F, KH, KW, S, g->ph, g->pw);
    return nnc_conv_kernel_work(pass, 1, Cg, g->H, g->W, Fg, KH, KW, S, g->ph) +
        (pass == NNC_CONV_FILTER ? Fg * Cg * KH * KW : 0);
}

/* Its work, the same for the three passes: one example's columns [C KH
 * KW][OH OW] (every group's rows, a GEMM per group reads its own), or a
 * group's direct kernel's if more (above); where each group has one
 * channel in (depthwise: a GEMM of one row of taps per filter runs at a
 * few GFLOP/s), one channel padded and split into its column phases
 * (nnc_conv2d_dw_xq), and after it one filter's padded dy (above)
 * (conv_cols_tmpl.h). */
static inline int64_t nnc_conv2d_gen_work(const nnc_conv2d_geom *g)
{
    if (g->C == g->groups)
        return nnc_conv2d_dw_xq(g) + nnc_conv2d_dw_rows(g) * nnc_conv2d_dw_pitch(g);
    int64_t w = g->C * g->KH * g->KW * nnc_conv2d_geom_oh(g) * nnc_conv2d_geom_ow(g);
    for (int pass = NNC_CONV_FWD; pass <= NNC_CONV_FILTER; pass++) {
        const int64_t gw = nnc_conv2d_gen_group_work(g, pass);
        w = gw > w ? gw : w;
    }
    return w;
}

/* one thread's work for the kernel gradient: the kernel's and an item's
 * partial dW [F][C / groups][KH][KW] (threads.c, as
 * nnc_conv_filter_item_work) */
static inline int64_t nnc_conv2d_gen_filter_item_work(const nnc_conv2d_geom *g)
{
    return nnc_conv2d_gen_work(g) + g->F * (g->C / g->groups) * g->KH * g->KW;
}

#endif
