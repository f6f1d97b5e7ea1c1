/* Benchmark glue for gpt_t256.nn (see src/harness.h): token ids [N, 256] and
 * per-position labels [N, 256], both uniform in [0, 65); AdamW.  Forward GEMM
 * FLOPs per sequence (BENCH_GPT's formula): 272,695,296 (T = 256, D = 128, V = 65, L = 2). */
#include "gpt_t256.h"
#include "harness.h"

BENCH_GPT(gpt_t256, GPT_T256, 4);
