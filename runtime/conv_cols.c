/* conv_cols.c — convolution by columns (NCHW), in float and double: the
 * generated code's kernel for the layers that conv.c's direct kernels do
 * not take (kernel.c: KERNEL_COLUMNS and KERNEL_GEMM, and every
 * convolution in double), and the direct kernels' own path where the
 * instruction set is neither AVX-512 nor AVX2 (nnc_conv_direct_ok).
 * Compiled once per instruction set as they are (nnc_isa.h): the copies
 * of im2col and col2im vectorize, and every build gives the same bits.
 *
 * One example at a time: its columns [C*KH*KW, OH*OW] (im2col) go to the
 * work buffer, which stays in cache (the whole batch's, tens of MB, were
 * written to memory and read back), and one GEMM W [F, CKK] x col writes
 * [F, OH*OW], the example's part of the NCHW output, so no permute.  A
 * 1x1 convolution at stride 1 without padding reads the image as its
 * columns.  The data gradient is dcol = Wᵀ dy, then col2im; the kernel's
 * makes the columns again instead of keeping them, and accumulates dWᵀ
 * [CKK, F] += col dyᵀ after them in the work buffer, transposed into dW
 * at the end: OpenBLAS runs this shape 10-30% faster (M = CKK rather than
 * F: 16x144x1024 took 3.6 ms per batch, 144x16x1024 2.6 ms).
 *
 * Small images (fewer than 256 output positions: nnc_conv_cols_group) go
 * G examples to a GEMM instead, their columns side by side, so that the
 * GEMM is at least 256 wide: resnet18's 4x4 layers (192 channels, batch
 * 16) took 3.1 ms forward, 6.2 ms for the data gradient and 3.4 ms for
 * the kernel's in the direct kernels (whose vectors are mostly the grid's
 * padding there), 2.8 / 2.6 / 3.1 one example at a time, and 2.4 / 2.1 /
 * 2.4 this way (the GEMM alone: 1.8).  Their GEMMs are nnc_sgemm's,
 * split over the threads in blocks fixed by the shapes (threads.c runs
 * such a call as one item).
 *
 * The general convolution (nnc_conv2d_gen_*: groups, dilation, strides
 * and padding that differ between rows and columns) is here too, in the
 * same template: the columns of every channel and one GEMM per group, or
 * a direct loop for depthwise layers, or conv.c's direct kernels a group
 * at a time for groups of several channels in their geometry
 * (docs/decisions.md).
 *
 * The body is conv_cols_tmpl.h, included once per precision.  These are
 * the operations, in the order, that the compiler used to print at every
 * convolution (emit_vision.c), so that results did not change when they
 * moved here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_isa.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

/* One layer's geometry. */
typedef struct {
    int64_t C, H, W, F, KH, KW, S, PD, OH, OW;
    int64_t P, CKK; /* positions OH OW, column rows C KH KW */
    int gemm;       /* 1x1, stride 1, no padding: the image is the columns */
    /* a stride-1 convolution whose output has the image's size ("same"
     * padding, KH = KW = 2 PD + 1 then), on short rows: column row (c, ki,
     * kj) is channel c shifted by d = (ki - PD) W + (kj - PD), so it is one
     * contiguous copy (or add) over the rows inside the image, and only the
     * columns that wrapped around a row edge are fixed up.  Rows of 8 or 16
     * floats made the per-row loops mostly overhead: stage-3 columns of
     * resnet_small took 0.60 ms a batch that way and 0.25 ms this way,
     * stage 2's 1.0 and 0.5; at 32 floats the per-row loops were as fast
     * (0.61 ms against 0.70 for stage 1's columns, whose fix-ups of wrapped
     * columns are more stores): so only below 24 */
    int same;
    int64_t G; /* examples per GEMM (nnc_conv_cols_group) */
} cgeom;

static cgeom cols_geom(int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t S, int64_t PD)
{
    cgeom g = {C, H, W, F, KH, KW, S, PD, (H + 2 * PD - KH) / S + 1, (W + 2 * PD - KW) / S + 1, 0, 0, 0, 0, 1};
    g.P = g.OH * g.OW;
    g.CKK = C * KH * KW;
    g.gemm = KH == 1 && KW == 1 && S == 1 && PD == 0;
    g.same = S == 1 && g.OH == H && g.OW == W && W < 24;
    g.G = nnc_conv_cols_group(g.OH, g.OW);
    return g;
}

/* this build's own GEMM (gemm.c), in cblas_sgemm's signature */
static void gemm_f32(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha,
                     const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    (void)o; /* row-major */
    NNC_ISA_FN(nnc_gemm_f32)(ta == CblasTrans, tb == CblasTrans, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc);
}

#define R float
#define R_F32 1
#define GEMM gemm_f32
#define GEMMT nnc_sgemm
#define NAME(f) f##_f32
#define NAME_STR(f) f "_f32"
#include "conv_cols_tmpl.h"
#undef COLS_PERM
#undef R
#undef R_F32
#undef GEMM
#undef GEMMT
#undef NAME
#undef NAME_STR

#define R double
#define R_F32 0
#define GEMM cblas_dgemm
#define GEMMT nnc_dgemm
#define NAME(f) f##_f64
#define NAME_STR(f) f "_f64"
#include "conv_cols_tmpl.h"
#undef COLS_PERM
#undef R
#undef R_F32
#undef GEMM
#undef GEMMT
#undef NAME
#undef NAME_STR
