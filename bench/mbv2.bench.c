/* Benchmark glue for mbv2.nn (see src/harness.h): f32[N, 3, 40, 40]
 * images. */
#include "mbv2.h"
#include "harness.h"

/* Forward FLOPs per example, every convolution as its direct sum (a
 * depthwise k x k: 2 * C * k * k * OH * OW; a 1x1: 2 * F * C * OH * OW):
 *   stem 3 -> 24, 3x3 at 40x40                 2,073,600
 *   b1 24 -> 72 -> dw 3x3 -> 24 at 40x40       5,529,600 + 2,073,600 + 5,529,600
 *   b2 24 -> 72 at 40x40, dw 5x5 stride 2, -> 40 at 20x20
 *                                              5,529,600 + 1,440,000 + 2,304,000
 *   b3 40 -> 120 -> dw 5x5 -> 40 at 20x20      3,840,000 + 2,400,000 + 3,840,000
 *   b4 40 -> 120 at 20x20, dw 3x3 stride 2, -> 80 at 10x10
 *                                              3,840,000 +   216,000 + 1,920,000
 *   b5 80 -> 240 -> dw 3x3 -> 80 at 10x10      3,840,000 +   432,000 + 3,840,000
 *   fc 80 -> 10                                    1,600
 * = 48,649,600 per example. */
#define DWK(c, k, hw) (2.0 * (c) * (k) * (k) * (hw) * (hw))
#define PW(f, c, hw) (2.0 * (f) * (c) * (hw) * (hw))
#define MBV2_FWD_FLOPS \
    (2.0 * 24 * 3 * 9 * 40 * 40 + PW(72, 24, 40) + DWK(72, 3, 40) + PW(24, 72, 40) + PW(72, 24, 40) + DWK(72, 5, 20) + \
     PW(40, 72, 20) + PW(120, 40, 20) + DWK(120, 5, 20) + PW(40, 120, 20) + PW(120, 40, 20) + DWK(120, 3, 10) + \
     PW(80, 120, 10) + PW(240, 80, 10) + DWK(240, 3, 10) + PW(80, 240, 10) + 2.0 * 80 * MBV2_CLASSES)

BENCH_CLASSIFIER(mbv2, MBV2, [3][40][40], 3 * 40 * 40, MBV2_CLASSES, 16, MBV2_FWD_FLOPS);
