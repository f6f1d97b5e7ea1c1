/* Benchmark glue for cnn1d.nn (see src/harness.h): f32[N, 9, 128]
 * sequences. */
#include "cnn1d.h"
#include "harness.h"

/* Forward GEMM FLOPs per example, 2 per multiply-add, a convolution as
 * the GEMM it lowers to (filters x C*K by C*K x L_out):
 *   c1  64 @ 9x7 over 128      2 * 64 * 63 * 128   =  1,032,192
 *   c2  64 @ 64x5 over 128     2 * 64 * 320 * 128  =  5,242,880
 *   c3 128 @ 64x5 over 64      2 * 128 * 320 * 64  =  5,242,880
 *   c4 128 @ 128x3 over 64     2 * 128 * 384 * 64  =  6,291,456
 *   fc 128 -> 6                                         1,536
 * = 17,810,944 per example (relu, the mean and bias adds count nothing). */
#define CNN1D_FWD_FLOPS                                                                                   \
    (2.0 * (64.0 * 63 * 128 + 64.0 * 320 * 128 + 128.0 * 320 * 64 + 128.0 * 384 * 64 + 128.0 * CNN1D_CLASSES))

BENCH_CLASSIFIER(cnn1d, CNN1D, [9][128], 9 * 128, CNN1D_CLASSES, 64, CNN1D_FWD_FLOPS);
