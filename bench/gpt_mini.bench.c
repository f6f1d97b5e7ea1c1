/* Benchmark glue for gpt_mini.nn (see src/harness.h): token ids [N, 64] and
 * per-position labels [N, 64], both uniform in [0, 65); AdamW.  Forward GEMM
 * FLOPs per sequence (BENCH_GPT's formula): 110,116,864 (T = 64, D = 128, V = 65, L = 4). */
#include "gpt_mini.h"
#include "harness.h"

BENCH_GPT(gpt_mini, GPT_MINI, 16);
