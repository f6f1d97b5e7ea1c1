/* optlevels.c — the generated code of models/resnet.nn (BatchNorm, relu,
 * residual adds, strided and 1x1 convolutions, pooling) must train the
 * same whatever it is compiled with, and must never read memory the step
 * did not write.
 *
 *   optlevels OUT [--poison]     3 SGD steps on fixed data, then eval; writes
 *                                the losses, every gradient of every step,
 *                                the state and the eval results to OUT
 *   optlevels --compare A B TOL  per tensor: max|a - b| <= TOL * max|a|
 *
 * run.sh builds this at -O0 (the reference) and at -O3 -march=native with
 * the runtime's AVX-512 kernels, with and without ASan/UBSan, and compares.
 * Why: gcc 12 at -O3 miscompiled a conditional in a generated 16-lane sum
 * (docs/decisions.md) into gradients of 1e30 that the -O1 parity tests
 * could not see.  --poison fills every calloc'd block, and every block of
 * nnc_alloc_zeroed (the arena's), with 0xFF bytes (NaN
 * floats) before the model sees it, so a read of arena memory the step has
 * not written turns into NaN (the bit-identical check in run.sh), where a
 * zeroed arena would hide it. */
#include "res_net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 4, STEPS = 3 };

#ifdef OPTLEVELS_WRAP_CALLOC
static int poison;
static void *poisoned(void *p, size_t bytes)
{
    if (p && poison)
        memset(p, 0xFF, bytes);
    return p;
}
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size) { return poisoned(__real_calloc(n, size), n * size); }
/* the model's params, grads, state and arena (runtime/alloc.c): zeroed
 * there, on huge pages when big, so poisoned here, after the zeroing */
void *__real_nnc_alloc_zeroed(size_t n, size_t size);
void *__wrap_nnc_alloc_zeroed(size_t n, size_t size);
void *__wrap_nnc_alloc_zeroed(size_t n, size_t size) { return poisoned(__real_nnc_alloc_zeroed(n, size), n * size); }
#endif

/* The record: for each step the loss, then the gradients (params layout);
 * then the state, the eval loss and metric, and the eval outputs. */
enum {
    REC_STEP = 1 + RES_NET_NUM_PARAMS,
    REC_LEN = STEPS * REC_STEP + RES_NET_NUM_STATE + 2 + BATCH * RES_NET_CLASSES,
};

static int run(const char *out)
{
    static float x[BATCH][3][32][32], rec[REC_LEN];
    const float(*cx)[3][32][32] = (const float(*)[3][32][32])x; /* C11 wants the cast */
    int32_t y[BATCH];
    uint64_t s = 12345; /* an LCG: the same data for every build */
    for (size_t i = 0; i < sizeof x / sizeof(float); i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        ((float *)x)[i] = (float)((double)(s >> 40) / 16777216.0 - 0.5);
    }
    for (int i = 0; i < BATCH; i++)
        y[i] = (3 * i + 1) % RES_NET_CLASSES;
    res_net m;
    if (res_net_init(&m, BATCH, 7) != 0) {
        fprintf(stderr, "optlevels: res_net_init failed\n");
        return 1;
    }
    float *r = rec;
    for (int k = 0; k < STEPS; k++) {
        *r++ = res_net_train_forward(&m, BATCH, cx, y);
        res_net_backward(&m);
        const float *g = (const float *)m.grads;
        float *p = (float *)m.params;
        memcpy(r, g, sizeof(float) * RES_NET_NUM_PARAMS);
        r += RES_NET_NUM_PARAMS;
        for (size_t i = 0; i < RES_NET_NUM_PARAMS; i++)
            p[i] -= 0.05f * g[i];
    }
    memcpy(r, m.state, sizeof(float) * RES_NET_NUM_STATE);
    r += RES_NET_NUM_STATE;
    res_net_eval(&m, BATCH, cx, y, r, r + 1);
    r += 2;
    res_net_forward(&m, BATCH, cx, (float(*)[RES_NET_CLASSES])r);
    res_net_release(&m);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(rec, sizeof rec, 1, f) != 1 || fclose(f) != 0) {
        fprintf(stderr, "optlevels: cannot write %s\n", out);
        return 1;
    }
    printf("optlevels: losses %.6f %.6f %.6f, eval loss %.6f\n", rec[0], rec[REC_STEP], rec[2 * REC_STEP],
           rec[REC_LEN - 2 - BATCH * RES_NET_CLASSES]);
    return 0;
}

static int load(const char *path, float *rec)
{
    FILE *f = fopen(path, "rb");
    int ok = f && fread(rec, sizeof(float) * REC_LEN, 1, f) == 1 && fgetc(f) == EOF;
    if (f)
        fclose(f);
    if (!ok)
        fprintf(stderr, "optlevels: %s is not a record of %d floats\n", path, (int)REC_LEN);
    return ok;
}

/* Compares one named range; NaN anywhere fails. */
static int close_enough(const char *what, int step, const float *a, const float *b, size_t n, double tol)
{
    double scale = 0, diff = 0;
    for (size_t i = 0; i < n; i++) {
        scale = fmax(scale, fabs((double)a[i]));
        const double d = fabs((double)a[i] - (double)b[i]);
        diff = d > diff || d != d ? d : diff;
    }
    if (diff <= tol * fmax(scale, 1e-30))
        return 1;
    fprintf(stderr, "optlevels: %s (step %d): max |a - b| = %g against max |a| = %g\n", what, step, diff, scale);
    return 0;
}

static int compare(const char *pa, const char *pb, double tol)
{
    static float a[REC_LEN], b[REC_LEN];
    if (!load(pa, a) || !load(pb, b))
        return 2;
    size_t count;
    const nnc_tensor_info *t = res_net_tensors(&count);
    int ok = 1, checked = 0;
    for (int k = 0; k < STEPS; k++) {
        const float *ra = a + k * REC_STEP, *rb = b + k * REC_STEP;
        ok &= close_enough("loss", k, ra, rb, 1, tol);
        for (size_t i = 0; i < count; i++)
            if (t[i].trainable) {
                ok &= close_enough(t[i].name, k, ra + 1 + t[i].offset, rb + 1 + t[i].offset, t[i].size, tol);
                checked++;
            }
    }
    const size_t st = STEPS * REC_STEP;
    for (size_t i = 0; i < count; i++)
        if (!t[i].trainable) {
            ok &= close_enough(t[i].name, STEPS, a + st + t[i].offset, b + st + t[i].offset, t[i].size, tol);
            checked++;
        }
    const size_t ev = st + RES_NET_NUM_STATE;
    ok &= close_enough("eval loss", STEPS, a + ev, b + ev, 1, tol);
    ok &= close_enough("eval accuracy", STEPS, a + ev + 1, b + ev + 1, 1, tol);
    ok &= close_enough("eval outputs", STEPS, a + ev + 2, b + ev + 2, BATCH * RES_NET_CLASSES, tol);
    printf("optlevels: %s vs %s: %d tensors, %s (relative tolerance %g)\n", pa, pb, checked + 3 + STEPS,
           ok ? "all within" : "DIFFERENT", tol);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--compare") == 0)
        return compare(argv[2], argv[3], atof(argv[4]));
    if (argc == 3 && strcmp(argv[2], "--poison") == 0) {
#ifdef OPTLEVELS_WRAP_CALLOC
        poison = 1;
#else
        fprintf(stderr, "optlevels: built without the calloc wrapper\n");
        return 2;
#endif
    } else if (argc != 2) {
        fprintf(stderr, "usage: optlevels OUT [--poison] | optlevels --compare A B TOL\n");
        return 2;
    }
    return run(argv[1]);
}
