/* Benchmark glue for vit_tiny.nn (see src/harness.h): f32[N, 3, 32, 32]
 * images. */
#include "vit_tiny.h"
#include "harness.h"

/* Forward GEMM FLOPs per example (T = 64 patches, d = 96):
 *   patch embedding, 96 x 48 x 64                   589,824
 *   each block: 24 T d^2 (q, k, v, out, the MLP)  14,155,776
 *             + 4 T^2 d (scores, P V)              1,572,864
 *   fc 96 -> 10                                        1,920
 * = 63,506,304 per example (4 blocks; LayerNorm, GELU and softmax count
 * nothing). */
#define VIT_TINY_FWD_FLOPS \
    (2.0 * VIT_TINY_DIM * 48 * 64 + \
     VIT_TINY_LAYERS * (24.0 * 64 * VIT_TINY_DIM * VIT_TINY_DIM + 4.0 * 64 * 64 * VIT_TINY_DIM) + \
     2.0 * VIT_TINY_DIM * VIT_TINY_CLASSES)

BENCH_CLASSIFIER(vit_tiny, VIT_TINY, [3][32][32], 3 * 32 * 32, VIT_TINY_CLASSES, 32, VIT_TINY_FWD_FLOPS);
