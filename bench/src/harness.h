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
 * example) needs only BENCH_CLASSIFIER below; models with several inputs,
 * token inputs or per-token labels (a GPT) fill the struct by hand.
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

/* Glue for a classifier `model P { input x: f32[N, ...]; label y: i32[N] }`:
 *   p, P      the generated prefix in lower and upper case (mlp_big, MLP_BIG)
 *   ROW       the row type's dims in brackets: [784], or [3][32][32]
 *   IN        floats per example (784, 3*32*32)
 *   CLASSES   number of classes (labels are drawn from [0, CLASSES))
 *   BATCH     default batch size
 *   FLOPS     forward GEMM FLOPs per example                                */
#define BENCH_CLASSIFIER(p, P, ROW, IN, CLASSES, BATCH, FLOPS)                   \
    static int bench_init_(void *m, int max_batch, uint64_t seed)                \
    {                                                                            \
        return p##_init((p *)m, max_batch, seed);                                \
    }                                                                            \
    static void bench_release_(void *m) { p##_release((p *)m); }                 \
    static float bench_train_forward_(void *m, int n, const void *const *in,     \
                                      const void *const *lab)                    \
    {                                                                            \
        return p##_train_forward((p *)m, n, (const float(*) ROW)in[0],           \
                                 (const int32_t *)lab[0]);                       \
    }                                                                            \
    static void bench_backward_(void *m) { p##_backward((p *)m); }               \
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

#endif
