/* Benchmark glue for gpt_t50.nn (see src/harness.h): token ids [N, 50] and
 * per-position labels [N, 50], both uniform in [0, 65); AdamW.  Forward GEMM
 * FLOPs per sequence (BENCH_GPT's formula): 25,960,000 (T = 50, D = 80, V = 65, L = 3). */
#include "gpt_t50.h"
#include "harness.h"

BENCH_GPT(gpt_t50, GPT_T50, 16);
