/* Benchmark glue for cnn48.nn (see src/harness.h): f32[N, 3, 48, 48]
 * images. */
#include "cnn48.h"
#include "harness.h"

/* 2 * filters * C*K*K * OH*OW: a convolution's forward FLOPs per example */
#define CONV(f, c, k, hw) (2.0 * (f) * (c) * (k) * (k) * (hw) * (hw))

/* Forward GEMM FLOPs per example:
 *   conv1 3 -> 32, 5x5 stride 2 to 24x24      2,764,800
 *   conv2 32 -> 40, 3x3 at 24x24             13,271,040
 *   conv3 40 -> 80, conv4 80 -> 80 at 12x12   8,294,400 + 16,588,800
 *   fc 2880 -> 10                                57,600
 * = 40,976,640 per example (the direct sums' count; Winograd computes
 * fewer products; pooling, relu, bias adds count nothing). */
#define CNN48_FWD_FLOPS                                                                                   \
    (CONV(32, 3, 5, 24) + CONV(40, 32, 3, 24) + CONV(80, 40, 3, 12) + CONV(80, 80, 3, 12) +             \
     2.0 * 80 * 6 * 6 * CNN48_CLASSES)

BENCH_CLASSIFIER(cnn48, CNN48, [3][48][48], 3 * 48 * 48, CNN48_CLASSES, 16, CNN48_FWD_FLOPS);
