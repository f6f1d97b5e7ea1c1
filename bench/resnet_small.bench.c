/* Benchmark glue for resnet_small.nn (see src/harness.h): f32[N, 3, 32, 32]
 * images. */
#include "resnet_small.h"
#include "harness.h"

/* 2 * filters * C*K*K * OH*OW: the forward FLOPs of one convolution per
 * example, counted as the GEMM nnc lowers it to (padding's zero products
 * included). */
#define CONV(f, c, k, hw) (2.0 * (f) * (c) * (k) * (k) * (hw) * (hw))

/* Forward GEMM FLOPs per example:
 *   stem   3 -> 16, 3x3 at 32x32                              884,736
 *   stage1 4 convs 16 -> 16, 3x3 at 32x32                  18,874,368
 *   stage2 16 -> 32 3x3 stride 2, 3 convs 32 -> 32 3x3,
 *          1x1 projection 16 -> 32, all at 16x16           16,777,216
 *   stage3 the same at 64 channels and 8x8                 16,777,216
 *   fc     64 -> 10                                             1,280
 * = 53,314,816 per example.  BatchNorm, relu, the residual adds and the
 * global average pooling count nothing. */
#define RESNET_SMALL_FWD_FLOPS                                                          \
    (CONV(16, 3, 3, 32) + 4 * CONV(16, 16, 3, 32) +                                     \
     CONV(32, 16, 3, 16) + 3 * CONV(32, 32, 3, 16) + CONV(32, 16, 1, 16) +              \
     CONV(64, 32, 3, 8) + 3 * CONV(64, 64, 3, 8) + CONV(64, 32, 1, 8) +                 \
     2.0 * 64 * RESNET_SMALL_CLASSES)

BENCH_CLASSIFIER(resnet_small, RESNET_SMALL, [3][32][32], 3 * 32 * 32, RESNET_SMALL_CLASSES, 32,
                 RESNET_SMALL_FWD_FLOPS);
