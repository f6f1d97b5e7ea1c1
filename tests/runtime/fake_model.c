/* fake_model.c — a hand-written model on the nnc_model_desc contract, to
 * test the driver without the compiler.
 *
 * It has what the driver must cope with: two inputs (x f32 [N,3] and ids
 * k i32 [N] < 4 selecting a bias row, like an embedding), two labels
 * (y f32 [N,2] and classes c i32 [N] < 2 where -100 is ignored), params in
 * three tensors, one state tensor updated by the training pass, and two
 * metrics.  Output p = x @ w^T + b + e[k]; loss = mean((p - y)^2) +
 * cross_entropy(p, c) (mean over non-ignored rows, 0 if none); metrics mae
 * and accuracy (over non-ignored rows).  The gradient is written by hand;
 * check_driver.py checks it against PyTorch autograd.  Every entry point
 * aborts on a batch size outside [1, max_batch], so a driver bug cannot
 * pass silently.  Built twice: with FAKE_NO_LOSS it is an inference-only
 * model (no labels, no loss) named "fake_noloss".
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_runtime.h"

typedef struct fake_params {
    float w[2][3];
    float b[2];
    float e[4][2];
} fake_params;

typedef struct fake_state {
    float seen[1];
} fake_state;

typedef struct fake {
    nnc_model_head head; /* params, grads, state, max_batch */
    float (*p)[2];       /* activations for max_batch rows */
    float (*dp)[2];
    /* what backward needs from the last training pass */
    int n;
    const float (*x)[3];
    const int32_t *k;
    const float (*y)[2];
    const int32_t *c;
} fake;

#define NUM_PARAMS 16
#define NUM_STATE 1

static const nnc_tensor_info fake_infos[4] = {
    {"w", 2, {2, 3}, 0, 6, 1, 0, NNC_F32},
    {"b", 1, {2}, 6, 2, 1, 0, NNC_F32},
    {"e", 2, {4, 2}, 8, 8, 1, 0, NNC_F32},
    {"seen", 1, {1}, 0, 1, 0, 0, NNC_F32},
};

static const nnc_tensor_info *fake_tensors(size_t *count)
{
    *count = 4;
    return fake_infos;
}

static void check_n(const fake *m, int n, const char *fn)
{
    if (n < 1 || n > m->head.max_batch) {
        fprintf(stderr, "fake_model: %s called with n=%d, max_batch=%d\n", fn, n,
                m->head.max_batch);
        abort();
    }
}

static int fake_init(void *mv, int max_batch, uint64_t seed)
{
    fake *m = mv;
    memset(m, 0, sizeof *m);
    if (max_batch < 1) {
        errno = EINVAL;
        return -1;
    }
    m->head.max_batch = max_batch;
    m->head.params = calloc(NUM_PARAMS, sizeof(float));
    m->head.grads = calloc(NUM_PARAMS, sizeof(float));
    m->head.state = calloc(NUM_STATE, sizeof(float));
    m->p = calloc((size_t)max_batch, sizeof *m->p);
    m->dp = calloc((size_t)max_batch, sizeof *m->dp);
    if (!m->head.params || !m->head.grads || !m->head.state || !m->p || !m->dp) {
        free(m->head.params);
        free(m->head.grads);
        free(m->head.state);
        free(m->p);
        free(m->dp);
        errno = ENOMEM;
        return -1;
    }
    fake_params *P = (fake_params *)m->head.params;
    nnc_rng r;
    nnc_rng_seed(&r, seed);
    nnc_init_f32(&P->w[0][0], 2, (const int[]){2, 3}, NNC_INIT_GLOROT_UNIFORM, 0, 0, &r);
    nnc_init_f32(P->b, 1, (const int[]){2}, NNC_INIT_ZEROS, 0, 0, &r);
    nnc_init_f32(&P->e[0][0], 2, (const int[]){4, 2}, NNC_INIT_NORMAL, 0.1, 0, &r);
    return 0;
}

static void fake_release(void *mv)
{
    fake *m = mv;
    free(m->head.params);
    free(m->head.grads);
    free(m->head.state);
    free(m->p);
    free(m->dp);
}

static void predict_rows(const fake *m, int n, const float (*x)[3], const int32_t *k,
                         float (*p)[2])
{
    const fake_params *P = (const fake_params *)m->head.params;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 2; j++) {
            float v = P->b[j] + P->e[k[i]][j];
            for (int t = 0; t < 3; t++)
                v += x[i][t] * P->w[j][t];
            p[i][j] = v;
        }
}

static void fake_forward(void *mv, int n, const void *const *in, void *out)
{
    fake *m = mv;
    check_n(m, n, "forward");
    predict_rows(m, n, (const float (*)[3])in[0], in[1], out);
}

#ifndef FAKE_NO_LOSS
/* Loss, metrics and (when dp) d loss / d p for rows p. */
static float loss_of(int n, const float (*p)[2], const float (*y)[2], const int32_t *c,
                     float (*dp)[2], float *mae, float *acc)
{
    double mse = 0, ae = 0, ce = 0;
    int counted = 0, correct = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < 2; j++) {
            double d = (double)p[i][j] - y[i][j];
            mse += d * d;
            ae += fabs(d);
        }
        if (c[i] != -100) {
            counted++;
            correct += (p[i][1] > p[i][0] ? 1 : 0) == c[i];
            double mx = p[i][0] > p[i][1] ? p[i][0] : p[i][1];
            double lse = mx + log(exp(p[i][0] - mx) + exp(p[i][1] - mx));
            ce += lse - p[i][c[i]];
        }
    }
    if (dp) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < 2; j++)
                dp[i][j] = (float)(2.0 * ((double)p[i][j] - y[i][j]) / (2.0 * n));
            if (c[i] != -100) {
                double mx = p[i][0] > p[i][1] ? p[i][0] : p[i][1];
                double z = exp(p[i][0] - mx) + exp(p[i][1] - mx);
                for (int j = 0; j < 2; j++)
                    dp[i][j] += (float)((exp(p[i][j] - mx) / z - (j == c[i])) / counted);
            }
        }
    }
    if (mae)
        *mae = (float)(ae / (2.0 * n));
    if (acc)
        *acc = counted ? (float)correct / (float)counted : 0.0f;
    return (float)(mse / (2.0 * n) + (counted ? ce / counted : 0.0));
}

static float fake_train_forward(void *mv, int n, const void *const *in, const void *const *lab)
{
    fake *m = mv;
    check_n(m, n, "train_forward");
    m->n = n;
    /* C11 does not convert const void * to a pointer to an array of const
     * elements implicitly without a qualifier warning: cast. */
    m->x = (const float (*)[3])in[0];
    m->k = in[1];
    m->y = (const float (*)[2])lab[0];
    m->c = lab[1];
    predict_rows(m, n, m->x, m->k, m->p);
    m->head.state[0] += (float)n; /* an `update`: examples seen in training */
    return loss_of(n, (const float (*)[2])m->p, m->y, m->c, m->dp, NULL, NULL);
}

static void fake_backward(void *mv)
{
    fake *m = mv;
    fake_params *G = (fake_params *)m->head.grads;
    memset(G, 0, sizeof *G);
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < 2; j++) {
            float d = m->dp[i][j];
            for (int t = 0; t < 3; t++)
                G->w[j][t] += d * m->x[i][t];
            G->b[j] += d;
            G->e[m->k[i]][j] += d;
        }
}

static void fake_eval(void *mv, int n, const void *const *in, const void *const *lab,
                      float *loss, float *metrics)
{
    fake *m = mv;
    check_n(m, n, "eval");
    predict_rows(m, n, (const float (*)[3])in[0], in[1], m->p);
    *loss = loss_of(n, (const float (*)[2])m->p, (const float (*)[2])lab[0], lab[1], NULL,
                    &metrics[0],
                    &metrics[1]);
}
#endif

static int fake_save(const void *mv, const char *path)
{
    const fake *m = mv;
    return nnc_st_save(path, fake_infos, 4, m->head.params, m->head.state);
}

static int fake_load(void *mv, const char *path)
{
    fake *m = mv;
    return nnc_st_load(path, fake_infos, 4, m->head.params, m->head.state);
}

static int fake_load_non_strict(void *mv, const char *path)
{
    fake *m = mv;
    return nnc_st_load_non_strict(path, fake_infos, 4, m->head.params, m->head.state);
}

static const nnc_io_desc fake_inputs[2] = {
    {"x", NNC_F32, 2, {0, 3}, 1, 0, 0},
    {"k", NNC_I32, 1, {0}, 1, 4, 0},
};
#ifndef FAKE_NO_LOSS
static const nnc_io_desc fake_labels[2] = {
    {"y", NNC_F32, 2, {0, 2}, 1, 0, 0},
    {"c", NNC_I32, 1, {0}, 1, 2, 1},
};
static const char *const fake_metric_names[2] = {"mae", "accuracy"};
#endif

int main(int argc, char **argv)
{
    nnc_model_desc d;
    memset(&d, 0, sizeof d);
    d.model_size = sizeof(fake);
    d.num_inputs = 2;
    d.inputs = fake_inputs;
    d.output = (nnc_io_desc){"p", NNC_F32, 2, {0, 2}, 1, 0, 0};
    d.num_params = NUM_PARAMS;
    d.num_state = NUM_STATE;
    d.flops_per_example = 16;
    d.tensors = fake_tensors;
    d.init = fake_init;
    d.release = fake_release;
    d.forward = fake_forward;
    d.save = fake_save;
    d.load = fake_load;
    d.load_non_strict = fake_load_non_strict;
#ifndef FAKE_NO_LOSS
    d.name = "fake";
    d.num_labels = 2;
    d.num_metrics = 2;
    d.labels = fake_labels;
    d.metric_names = fake_metric_names;
    d.has_loss = 1;
    d.train_forward = fake_train_forward;
    d.backward = fake_backward;
    d.eval = fake_eval;
#else
    d.name = "fake_noloss";
#endif
    return nnc_driver_main(argc, argv, &d);
}
