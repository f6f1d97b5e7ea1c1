/* Benchmark glue for speech1d.nn (see src/harness.h): f32[N, 40, 101]
 * feature frames. */
#include "speech1d.h"
#include "harness.h"

/* Forward GEMM FLOPs per example, 2 per multiply-add, a convolution as
 * the GEMM it lowers to (filters x C*K by C*K x L_out):
 *   c1  64 @ 40x3 over 101     2 * 64 * 120 * 101   =  1,551,360
 *   c2  96 @ 64x3 over 101     2 * 96 * 192 * 101   =  3,723,264
 *   c3 128 @ 96x3 over 50      2 * 128 * 288 * 50   =  3,686,400
 *   fc 128 -> 12                                          3,072
 * = 8,964,096 per example (BatchNorm, relu, the pool and the mean count
 * nothing). */
#define SPEECH1D_FWD_FLOPS \
    (2.0 * (64.0 * 120 * 101 + 96.0 * 192 * 101 + 128.0 * 288 * 50 + 128.0 * SPEECH1D_CLASSES))

BENCH_CLASSIFIER(speech1d, SPEECH1D, [40][101], 40 * 101, SPEECH1D_CLASSES, 64, SPEECH1D_FWD_FLOPS);
