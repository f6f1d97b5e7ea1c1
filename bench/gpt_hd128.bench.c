/* Benchmark glue for gpt_hd128.nn (see src/harness.h): token ids [N, 40] and
 * per-position labels [N, 40], both uniform in [0, 65); AdamW. */
#include "gpt_hd128.h"
#include "harness.h"

enum { T = GPT_HD128_CTX, D = GPT_HD128_DIM, V = GPT_HD128_VOCAB, L = GPT_HD128_LAYERS };

/* Forward GEMM FLOPs per example (one sequence of T tokens), 2 multiply-adds
 * counted as 2 FLOPs, every matmul as computed (the causal mask does not
 * halve the score and value matmuls; the embedding gather counts nothing):
 *   per block: query, key, value, out  4 x 2*T*D*D
 *              fc, proj                2 x 2*T*D*4D
 *              scores q k^T, a v       2 x 2*T*T*D   (all heads: T*T*(D/heads)*heads)
 *   head:                              2*T*D*V
 * = 2 * (24*T*D*D + 4*T*T*D) + 2*T*D*V = 130,437,120 per sequence (T = 40, D = 256,
 * V = 65). */
#define GPT_HD128_FWD_FLOPS                                                          \
    ((double)L * (24.0 * T * D * D + 4.0 * T * T * D) + 2.0 * T * D * V)

static int init_(void *m, int max_batch, uint64_t seed)
{
    return gpt_hd128_init((gpt_hd128 *)m, max_batch, seed);
}
static void release_(void *m) { gpt_hd128_release((gpt_hd128 *)m); }
static float train_forward_(void *m, int n, const void *const *in, const void *const *lab)
{
    return gpt_hd128_train_forward((gpt_hd128 *)m, n, (const int32_t(*)[T])in[0],
                                  (const int32_t(*)[T])lab[0]);
}
static void backward_(void *m) { gpt_hd128_backward((gpt_hd128 *)m); }

const bench_model bench_model_desc = {
    .name = "gpt_hd128",
    .default_batch = 8,
    .fwd_gemm_flops_per_example = GPT_HD128_FWD_FLOPS,
    .model_size = sizeof(gpt_hd128),
    .num_params = GPT_HD128_NUM_PARAMS,
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
