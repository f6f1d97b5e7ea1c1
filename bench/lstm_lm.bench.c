/* Benchmark glue for lstm_lm.nn (see src/harness.h): token ids [N, 32] and
 * per-position labels [N, 32]; AdamW.
 *
 * Forward GEMM FLOPs per sequence (T = 32, E = 64, H = 256, V = 65):
 *   input projection, every step at once  2 * T * E * 4H    4,194,304
 *   recurrent products, steps 1 to T - 1  2 * (T-1) * H * 4H  16,252,928
 *   head                                  2 * T * H * V      1,064,960
 * = 21,512,192 (the gates' elementwise work counts nothing). */
#include "lstm_lm.h"
#include "harness.h"

#define LSTM_LM_FWD_FLOPS \
    (2.0 * LSTM_LM_CTX * LSTM_LM_DIM * 4 * 256 + 2.0 * (LSTM_LM_CTX - 1) * 256 * 4 * 256 + \
     2.0 * LSTM_LM_CTX * 256 * LSTM_LM_VOCAB)

BENCH_SEQ(lstm_lm, LSTM_LM, 16, LSTM_LM_FWD_FLOPS);
