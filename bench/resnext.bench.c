/* Benchmark glue for resnext.nn (see src/harness.h): f32[N, 3, 32, 32]
 * images. */
#include "resnext.h"
#include "harness.h"

/* Forward GEMM FLOPs per example, 2 per multiply-add, a convolution as
 * filters x (C / groups) KH KW x OH OW:
 *   stem   64 x 27 x 1024                                   1,769,472
 *   s1     c1 64 x 64 x 1024, c2 64 x 72 x 1024,
 *          c3 128 x 64 x 1024, proj 128 x 64 x 1024         25,690,112
 *   s2     c1 128 x 128 x 1024, c2 128 x 144 x 256,
 *          c3 256 x 128 x 256, proj 256 x 128 x 256         38,273,024
 *   s3     c1 128 x 256 x 256, c2 128 x 144 x 64,
 *          c3 256 x 128 x 64, proj 256 x 256 x 64           15,859,712
 *   fc     256 x 10                                             2,560
 * = 81,594,880 multiply-adds (BatchNorm, relu, the adds and the pool
 * count nothing). */
#define RESNEXT_FWD_FLOPS (2.0 * 81594880.0)

BENCH_CLASSIFIER(resnext, RESNEXT, [3][32][32], 3 * 32 * 32, RESNEXT_CLASSES, 32, RESNEXT_FWD_FLOPS);
