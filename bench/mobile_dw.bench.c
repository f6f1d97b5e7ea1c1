/* Benchmark glue for mobile_dw.nn (see src/harness.h): f32[N, 3, 32, 32]
 * images. */
#include "mobile_dw.h"
#include "harness.h"

/* Forward FLOPs per example, every convolution as its direct sum (a
 * depthwise layer: 2 * C * 9 * OH * OW; a 1x1: 2 * F * C * OH * OW):
 *   stem 3 -> 32, 3x3 at 32x32            1,769,472
 *   s1 dw 32 at 32x32, pw 32 -> 64          589,824 + 4,194,304
 *   s2 dw 64 stride 2 to 16x16, pw -> 128   294,912 + 4,194,304
 *   s3 dw 128 at 16x16, pw 128 -> 128       589,824 + 8,388,608
 *   s4 dw 128 stride 2 to 8x8, pw -> 256    147,456 + 4,194,304
 *   fc 256 -> 10                              5,120
 * = 24,368,128 per example. */
#define DW(c, hw) (2.0 * (c) * 9 * (hw) * (hw))
#define PW(f, c, hw) (2.0 * (f) * (c) * (hw) * (hw))
#define MOBILE_DW_FWD_FLOPS                                                                                \
    (2.0 * 32 * 3 * 9 * 32 * 32 + DW(32, 32) + PW(64, 32, 32) + DW(64, 16) + PW(128, 64, 16) + DW(128, 16) + \
     PW(128, 128, 16) + DW(128, 8) + PW(256, 128, 8) + 2.0 * 256 * MOBILE_DW_CLASSES)

BENCH_CLASSIFIER(mobile_dw, MOBILE_DW, [3][32][32], 3 * 32 * 32, MOBILE_DW_CLASSES, 32, MOBILE_DW_FWD_FLOPS);
