/* Benchmark glue for vgg_small.nn (see src/harness.h): f32[N, 3, 32, 32]
 * images. */
#include "vgg_small.h"
#include "harness.h"

/* 2 * filters * C*K*K * OH*OW: the forward FLOPs of one convolution per
 * example, counted as the GEMM it amounts to (padding's zero products
 * included). */
#define CONV(f, c, k, hw) (2.0 * (f) * (c) * (k) * (k) * (hw) * (hw))

/* Forward GEMM FLOPs per example:
 *   conv1a 3 -> 24, conv1b 24 -> 24, 3x3 at 32x32    1,327,104 + 10,616,832
 *   conv2a 24 -> 48, conv2b 48 -> 48, 3x3 at 16x16   5,308,416 + 10,616,832
 *   conv3a 48 -> 96, conv3b 96 -> 96, 3x3 at 8x8     5,308,416 + 10,616,832
 *   fc1 1536 -> 128, fc2 128 -> 10                     393,216 +      2,560
 * = 44,190,208 per example (pooling, relu, bias adds count nothing). */
#define VGG_SMALL_FWD_FLOPS                                                             \
    (CONV(24, 3, 3, 32) + CONV(24, 24, 3, 32) + CONV(48, 24, 3, 16) + CONV(48, 48, 3, 16) + \
     CONV(96, 48, 3, 8) + CONV(96, 96, 3, 8) + 2.0 * (96 * 4 * 4 * 128 + 128 * VGG_SMALL_CLASSES))

BENCH_CLASSIFIER(vgg_small, VGG_SMALL, [3][32][32], 3 * 32 * 32, VGG_SMALL_CLASSES, 32,
                 VGG_SMALL_FWD_FLOPS);
