/* Benchmark glue for gpt_h6.nn (see src/harness.h): token ids [N, 96] and
 * per-position labels [N, 96], both uniform in [0, 256); AdamW.  Forward GEMM
 * FLOPs per sequence (BENCH_GPT's formula): 103,809,024 (T = 96, D = 96, V = 256, L = 4). */
#include "gpt_h6.h"
#include "harness.h"

BENCH_GPT(gpt_h6, GPT_H6, 16);
