/* Benchmark glue for lenet5.nn (see src/harness.h): f32[N, 1, 28, 28] images. */
#include "lenet5.h"
#include "harness.h"

/* Forward GEMM FLOPs per example, 2 per multiply-add; a convolution counts
 * as the GEMM nnc lowers it to (filters x C*KH*KW by C*KH*KW x OH*OW, the
 * padded border's zero products included, as PyTorch's im2col computes
 * them too):
 *   conv1  6 @ 1x5x5 over 28x28 (padding 2)   2 * 6 * 25 * 784  =  235,200
 *   conv2 16 @ 6x5x5 over 10x10               2 * 16 * 150 * 100 = 480,000
 *   fc1 400 -> 120, fc2 120 -> 84, fc3 84 -> 10                     117,840
 * = 833,040 per example (pooling, relu, bias adds count nothing). */
#define LENET5_FWD_FLOPS                                                        \
    (2.0 * (6.0 * 25 * 28 * 28 + 16.0 * 150 * 10 * 10 + 400.0 * 120 + 120.0 * 84 + \
            84.0 * LENET5_CLASSES))

BENCH_CLASSIFIER(lenet5, LENET5, [1][28][28], 1 * 28 * 28, LENET5_CLASSES, 64, LENET5_FWD_FLOPS);
