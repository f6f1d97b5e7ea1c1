/* Benchmark glue for stem96.nn (see src/harness.h): f32[N, 3, 96, 96]
 * images. */
#include "harness.h"
#include "stem96.h"

/* Forward GEMM FLOPs per example, 2 per multiply-add, a convolution as
 * the GEMM it lowers to (filters x C*K*K by C*K*K x OH*OW):
 *   stem  32 @ 3x7x7 over 48x48     2 * 32 * 147 * 2304  = 21,676,032
 *   c1    48 @ 32x3x3 over 24x24    2 * 48 * 288 * 576   = 15,925,248
 *   c2    64 @ 48x3x3 over 12x12    2 * 64 * 432 * 144   =  7,962,624
 *   fc    64 -> 10                                             1,280
 * = 45,565,184 per example (batch norm, the pool, relu, the mean and the
 * bias adds count nothing). */
#define STEM96_FWD_FLOPS (2.0 * (32.0 * 147 * 2304 + 48.0 * 288 * 576 + 64.0 * 432 * 144 + 64.0 * STEM96_CLASSES))

BENCH_CLASSIFIER(stem96, STEM96, [3][96][96], 3 * 96 * 96, STEM96_CLASSES, 16, STEM96_FWD_FLOPS);
