/* Benchmark glue for resnet18.nn (see src/harness.h): f32[N, 3, 64, 64]
 * images, 200 classes. */
#include "resnet18.h"
#include "harness.h"

/* 2 * filters * C*K*K * OH*OW: the forward FLOPs of one convolution per
 * example, counted as the GEMM it amounts to (padding's zero products
 * included). */
#define CONV(f, c, k, hw) (2.0 * (f) * (c) * (k) * (k) * (hw) * (hw))

/* Forward GEMM FLOPs per example:
 *   stem   3 -> 24, 7x7 stride 2, 32x32 out                  7,225,344
 *   stage1 4 convs 24 -> 24, 3x3 at 32x32                   42,467,328
 *   stage2 24 -> 48 3x3 stride 2, 3 convs 48 -> 48 3x3,
 *          1x1 projection 24 -> 48, all at 16x16            37,748,736
 *   stage3 the same at 96 channels and 8x8                  37,748,736
 *   stage4 the same at 192 channels and 4x4                 37,748,736
 *   fc     192 -> 200                                           76,800
 * = 163,015,680 per example.  BatchNorm, relu, the residual adds and the
 * global average pooling count nothing. */
#define RESNET18_FWD_FLOPS                                                              \
    (CONV(24, 3, 7, 32) + 4 * CONV(24, 24, 3, 32) +                                     \
     CONV(48, 24, 3, 16) + 3 * CONV(48, 48, 3, 16) + CONV(48, 24, 1, 16) +              \
     CONV(96, 48, 3, 8) + 3 * CONV(96, 96, 3, 8) + CONV(96, 48, 1, 8) +                 \
     CONV(192, 96, 3, 4) + 3 * CONV(192, 192, 3, 4) + CONV(192, 96, 1, 4) +             \
     2.0 * 192 * RESNET18_CLASSES)

BENCH_CLASSIFIER(resnet18, RESNET18, [3][64][64], 3 * 64 * 64, RESNET18_CLASSES, 16,
                 RESNET18_FWD_FLOPS);
