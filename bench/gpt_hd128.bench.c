/* Benchmark glue for gpt_hd128.nn (see src/harness.h): token ids [N, 40] and
 * per-position labels [N, 40], both uniform in [0, 65); AdamW.  Forward GEMM
 * FLOPs per sequence (BENCH_GPT's formula): 130,437,120 (T = 40, D = 256, V = 65, L = 2). */
#include "gpt_hd128.h"
#include "harness.h"

BENCH_GPT(gpt_hd128, GPT_HD128, 8);
