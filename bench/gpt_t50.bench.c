/* Benchmark glue for gpt_t50.nn (see src/harness.h): token ids [N, 50] and
 * per-position labels [N, 50], both uniform in [0, 65); AdamW. */
#include "gpt_t50.h"
#include "harness.h"

enum { T = GPT_T50_CTX, D = GPT_T50_DIM, V = GPT_T50_VOCAB, L = GPT_T50_LAYERS };

/* Forward GEMM FLOPs per example (one sequence of T tokens), 2 multiply-adds
 * counted as 2 FLOPs, every matmul as computed (the causal mask does not
 * halve the score and value matmuls; the embedding gather counts nothing):
 *   per block: query, key, value, out  4 x 2*T*D*D
 *              fc, proj                2 x 2*T*D*4D
 *              scores q k^T, a v       2 x 2*T*T*D   (all heads: T*T*(D/heads)*heads)
 *   head:                              2*T*D*V
 * = 3 * (24*T*D*D + 4*T*T*D) + 2*T*D*V = 25,960,000 per sequence (T = 50, D = 80,
 * V = 65). */
#define GPT_T50_FWD_FLOPS                                                          \
    ((double)L * (24.0 * T * D * D + 4.0 * T * T * D) + 2.0 * T * D * V)

static int init_(void *m, int max_batch, uint64_t seed)
{
    return gpt_t50_init((gpt_t50 *)m, max_batch, seed);
}
static void release_(void *m) { gpt_t50_release((gpt_t50 *)m); }
static float train_forward_(void *m, int n, const void *const *in, const void *const *lab)
{
    return gpt_t50_train_forward((gpt_t50 *)m, n, (const int32_t(*)[T])in[0],
                                  (const int32_t(*)[T])lab[0]);
}
static void backward_(void *m) { gpt_t50_backward((gpt_t50 *)m); }

const bench_model bench_model_desc = {
    .name = "gpt_t50",
    .default_batch = 16,
    .fwd_gemm_flops_per_example = GPT_T50_FWD_FLOPS,
    .model_size = sizeof(gpt_t50),
    .num_params = GPT_T50_NUM_PARAMS,
    .optimizer = BENCH_ADAMW,
    .num_inputs = 1,
    .num_labels = 1,
    .inputs = {{NNC_I32, T, V}},
    .labels = {{NNC_I32, T, V}},
    .init = init_,
    .release = release_,
    .train_forward = train_forward_,
    .backward = backward_,
};
