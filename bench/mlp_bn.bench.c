/* Benchmark glue for mlp_bn.nn (see src/harness.h): f32[N, 1000]
 * features. */
#include "mlp_bn.h"
#include "harness.h"

/* Forward GEMM FLOPs per example: 2 (1000 512 + 512 256 + 256 20) =
 * 1,296,384 (BatchNorm, relu and Dropout count nothing). */
#define MLP_BN_FWD_FLOPS (2.0 * (1000 * 512 + 512 * 256 + 256 * MLP_BN_CLASSES))

BENCH_CLASSIFIER(mlp_bn, MLP_BN, [1000], 1000, MLP_BN_CLASSES, 256, MLP_BN_FWD_FLOPS);
