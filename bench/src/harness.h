/* harness.h — the generic interface between the benchmark harness
 * (harness.c, which owns main()) and one nnc-generated model.
 *
 * Each benchmarked model has a small glue file, bench/<model>.bench.c, that
 * includes the generated header and this one and defines `bench_model_desc`:
 * how many inputs and labels the model takes, their sizes per example, its
 * forward GEMM FLOPs per example, and thin wrappers around the typed API
 * (<p>_init, <p>_train_forward, <p>_backward, <p>_release).  The harness
 * times one training step = <p>_train_forward + <p>_backward +
 * nnc_optim_step (Adam, or AdamW when the model asks for it) over the flat
 * params/grads views, with no allocation in the loop.
 *
 * A single-input classifier (float input rows, one i32 class label per
 * example) needs only BENCH_CLASSIFIER below, a GPT of gpt_mini.nn's form
 * only BENCH_GPT; models with several inputs fill the struct by hand.
 */
#ifndef NNC_BENCH_HARNESS_H
#define NNC_BENCH_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "nnc_runtime.h"

#define BENCH_MAX_IO 8

typedef struct bench_io {
    nnc_dtype dtype;     /* NNC_F32: filled with N(0,1); NNC_I32: uniform in [0, limit) */
    size_t per_example;  /* elements per example (product of the non-batch dims) */
    int32_t limit;       /* NNC_I32 only */
} bench_io;

/* The optimizer of the training step, PyTorch defaults (betas 0.9, 0.999,
 * eps 1e-8; AdamW with weight_decay 0.01 over every param, as
 * torch.optim.AdamW(model.parameters())).  torch_bench.py uses the same. */
typedef enum bench_optimizer {
    BENCH_ADAM = 0, /* the default (a zeroed field) */
    BENCH_ADAMW,
} bench_optimizer;

typedef struct bench_model {
    const char *name;
    int default_batch;
    /* Forward-pass GEMM FLOPs for one example (2*M*N*K per GEMM, divided by
     * the batch).  A training step is counted as 3x this (forward, d input,
     * d weight), the usual convention. */
    double fwd_gemm_flops_per_example;
    size_t model_size;   /* sizeof the generated model struct */
    size_t num_params;   /* <P>_NUM_PARAMS */
    bench_optimizer optimizer;
    int num_inputs, num_labels;
    bench_io inputs[BENCH_MAX_IO];
    bench_io labels[BENCH_MAX_IO];
    int (*init)(void *m, int max_batch, uint64_t seed);
    void (*release)(void *m);
    float (*train_forward)(void *m, int n, const void *const *inputs,
                           const void *const *labels);
    void (*backward)(void *m);
} bench_model;

/* Defined by the model's glue file. */
extern const bench_model bench_model_desc;

/* the glue's wrappers of <p>_init and <p>_release, and of <p>_backward */
#define BENCH_WRAPPERS_(p)                                                       \
    static int bench_init_(void *m, int max_batch, uint64_t seed)                \
    {                                                                            \
        return p##_init((p *)m, max_batch, seed);                                \
    }                                                                            \
    static void bench_release_(void *m) { p##_release((p *)m); }                 \
    static void bench_backward_(void *m) { p##_backward((p *)m); }

/* Glue for a classifier `model P { input x: f32[N, ...]; label y: i32[N] }`:
 *   p, P      the generated prefix in lower and upper case (mlp_big, MLP_BIG)
 *   ROW       the row type's dims in brackets: [784], or [3][32][32]
 *   IN        floats per example (784, 3*32*32)
 *   CLASSES   number of classes (labels are drawn from [0, CLASSES))
 *   BATCH     default batch size
 *   FLOPS     forward GEMM FLOPs per example                                */
#define BENCH_CLASSIFIER(p, P, ROW, IN, CLASSES, BATCH, FLOPS)                   \
    BENCH_WRAPPERS_(p)                                                           \
    static float bench_train_forward_(void *m, int n, const void *const *in,     \
                                      const void *const *lab)                    \
    {                                                                            \
        return p##_train_forward((p *)m, n, (const float(*) ROW)in[0],           \
                                 (const int32_t *)lab[0]);                       \
    }                                                                            \
    const bench_model bench_model_desc = {                                       \
        .name = #p,                                                              \
        .default_batch = (BATCH),                                                \
        .fwd_gemm_flops_per_example = (FLOPS),                                   \
        .model_size = sizeof(p),                                                 \
        .num_params = P##_NUM_PARAMS,                                            \
        .num_inputs = 1,                                                         \
        .num_labels = 1,                                                         \
        .inputs = {{NNC_F32, (IN), 0}},                                          \
        .labels = {{NNC_I32, 1, (CLASSES)}},                                     \
        .init = bench_init_,                                                     \
        .release = bench_release_,                                               \
        .train_forward = bench_train_forward_,                                   \
        .backward = bench_backward_,                                             \
    }

/* A causal transformer of gpt_mini.nn's form (its hparams ctx, dim, vocab
 * and layers as <P>_CTX, _DIM, _VOCAB, _LAYERS): token ids [N, T] and
 * per-position labels [N, T], both uniform in [0, V); AdamW.  Forward GEMM
 * FLOPs per example (one sequence of T tokens), 2 multiply-adds counted as
 * 2 FLOPs, every matmul as computed (the causal mask does not halve the
 * score and value matmuls; the embedding gather counts nothing):
 *   per block: query, key, value, out  4 x 2*T*D*D
 *              fc, proj                2 x 2*T*D*4D
 *              scores q k^T, a v       2 x 2*T*T*D   (all heads: T*T*(D/heads)*heads)
 *   head:                              2*T*D*V
 * = L * (24*T*D*D + 4*T*T*D) + 2*T*D*V. */
#define BENCH_GPT(p, P, BATCH)                                                   \
    BENCH_SEQ(p, P, BATCH,                                                       \
              (double)P##_LAYERS * (24.0 * P##_CTX * P##_DIM * P##_DIM +         \
                                    4.0 * P##_CTX * P##_CTX * P##_DIM) +         \
                  2.0 * P##_CTX * P##_DIM * P##_VOCAB)

/* Any model over token ids [N, T] with per-position labels [N, T] (its
 * hparams ctx and vocab as <P>_CTX, _VOCAB), AdamW, FLOPS forward GEMM
 * FLOPs per sequence. */
#define BENCH_SEQ(p, P, BATCH, FLOPS)                                            \
    BENCH_WRAPPERS_(p)                                                           \
    static float bench_train_forward_(void *m, int n, const void *const *in,     \
                                      const void *const *lab)                    \
    {                                                                            \
        return p##_train_forward((p *)m, n, (const int32_t(*)[P##_CTX])in[0],    \
                                 (const int32_t(*)[P##_CTX])lab[0]);             \
    }                                                                            \
    const bench_model bench_model_desc = {                                       \
        .name = #p,                                                              \
        .default_batch = (BATCH),                                                \
        .fwd_gemm_flops_per_example = (FLOPS),                                   \
        .model_size = sizeof(p),                                                 \
        .num_params = P##_NUM_PARAMS,                                            \
        .optimizer = BENCH_ADAMW,                                                \
        .num_inputs = 1,                                                         \
        .num_labels = 1,                                                         \
        .inputs = {{NNC_I32, P##_CTX, P##_VOCAB}},                               \
        .labels = {{NNC_I32, P##_CTX, P##_VOCAB}},                               \
        .init = bench_init_,                                                     \
        .release = bench_release_,                                               \
        .train_forward = bench_train_forward_,                                   \
        .backward = bench_backward_,                                             \
    }

#endif
