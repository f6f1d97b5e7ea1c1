/* rt_probe.c — a command-line window onto the runtime for the Python tests.
 *
 * The Python scripts in this directory compare the runtime with PyTorch and
 * NumPy (optimizer steps, fan computation, files written by np.save or by a
 * hand-written safetensors writer).  They drive this program, which exposes
 * one runtime function per subcommand, reading and writing .npy files.
 * Errors go to stderr as one line and exit status 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_runtime.h"

static int fail(void)
{
    fprintf(stderr, "rt_probe: %s\n", nnc_error());
    return 2;
}

/* rng SEED COUNT: COUNT raw outputs, then 5 below(1000), 3 uniforms, 3 normals. */
static int cmd_rng(char **a)
{
    nnc_rng r;
    nnc_rng_seed(&r, strtoull(a[0], NULL, 10));
    long n = strtol(a[1], NULL, 10);
    for (long i = 0; i < n; i++)
        printf("%llu\n", (unsigned long long)nnc_rng_next(&r));
    for (int i = 0; i < 5; i++)
        printf("%u\n", nnc_rng_below(&r, 1000));
    for (int i = 0; i < 3; i++)
        printf("%.17g\n", nnc_rng_uniform(&r));
    for (int i = 0; i < 3; i++)
        printf("%.17g\n", nnc_rng_normal(&r));
    return 0;
}

/* fans D0 D1 ...: "fan_in fan_out". */
static int cmd_fans(int argc, char **a)
{
    int shape[NNC_MAX_DIMS];
    for (int i = 0; i < argc; i++)
        shape[i] = atoi(a[i]);
    double fi, fo;
    nnc_fans(argc, shape, &fi, &fo);
    printf("%.17g %.17g\n", fi, fo);
    return 0;
}

/* optim KIND LR MOMENTUM WD CLIP P0.npy GRADS.npy OUT.npy NORMS.npy
 * KIND sgd|adam|adamw; WD "default" keeps the optimizer's default; CLIP 0
 * for none.  GRADS is [steps, P]; OUT gets the params after each step and
 * NORMS the pre-clip norm of each step. */
static int cmd_optim(char **a)
{
    nnc_optim_kind kind = !strcmp(a[0], "sgd") ? NNC_SGD : !strcmp(a[0], "adam") ? NNC_ADAM
                                                                                 : NNC_ADAMW;
    float lr = strtof(a[1], NULL), mom = strtof(a[2], NULL), clip = strtof(a[4], NULL);
    nnc_array p0, g;
    if (nnc_npy_read(a[5], &p0) || nnc_npy_read(a[6], &g))
        return fail();
    int64_t steps = g.shape[0], n = g.shape[1];
    float *p = malloc((size_t)n * sizeof *p);
    float *gs = malloc((size_t)n * sizeof *gs);
    float *out = malloc((size_t)(steps * n) * sizeof *out);
    float *norms = malloc((size_t)steps * sizeof *norms);
    memcpy(p, p0.data, (size_t)n * sizeof *p);
    nnc_optim o;
    if (nnc_optim_init(&o, kind, (size_t)n, lr))
        return fail();
    o.momentum = mom;
    if (strcmp(a[3], "default") != 0)
        o.weight_decay = strtof(a[3], NULL);
    for (int64_t s = 0; s < steps; s++) {
        memcpy(gs, (float *)g.data + s * n, (size_t)n * sizeof *gs);
        norms[s] = clip > 0 ? nnc_clip_grad_norm(gs, (size_t)n, clip) : 0.0f;
        nnc_optim_step(&o, p, gs);
        memcpy(out + s * n, p, (size_t)n * sizeof *p);
    }
    int64_t shape[2] = {steps, n};
    int rc = nnc_npy_write(a[7], NNC_F32, 2, shape, out) ||
             nnc_npy_write(a[8], NNC_F32, 1, shape, norms);
    nnc_optim_free(&o);
    nnc_array_free(&p0);
    nnc_array_free(&g);
    free(p);
    free(gs);
    free(out);
    free(norms);
    return rc ? fail() : 0;
}

/* The model layout used by st-write/st-load: params w [3,4] and b [3],
 * state s [2]. */
static const nnc_tensor_info probe_infos[3] = {
    {"w", 2, {3, 4}, 0, 12, 1, 0, NNC_F32},
    {"b", 1, {3}, 12, 3, 1, 0, NNC_F32},
    {"s", 1, {2}, 0, 2, 0, 0, NNC_F32},
};

static int cmd_st_write(char **a)
{
    float params[15], state[2] = {7.0f, 8.0f};
    for (int i = 0; i < 12; i++)
        params[i] = (float)i * 0.5f - 1.0f;
    params[12] = 1.5f;
    params[13] = -2.0f;
    params[14] = 0.25f;
    return nnc_st_save(a[0], probe_infos, 3, params, state) ? fail() : 0;
}

/* st-load PATH OUT.npy: the 15 params then the 2 state floats. */
static int cmd_st_load(char **a)
{
    float all[17];
    for (int i = 0; i < 17; i++)
        all[i] = -99.0f;
    if (nnc_st_load(a[0], probe_infos, 3, all, all + 15))
        return fail();
    int64_t n = 17;
    return nnc_npy_write(a[1], NNC_F32, 1, &n, all) ? fail() : 0;
}

/* npy-copy IN OUT: read and write back; prints "dtype ndim d0 d1 ...". */
static int cmd_npy_copy(char **a)
{
    nnc_array x;
    if (nnc_npy_read(a[0], &x))
        return fail();
    printf("%s %d", x.dtype == NNC_F32 ? "f32" : "i32", x.ndim);
    for (int i = 0; i < x.ndim; i++)
        printf(" %lld", (long long)x.shape[i]);
    printf("\n");
    int rc = nnc_npy_write(a[1], x.dtype, x.ndim, x.shape, x.data);
    nnc_array_free(&x);
    return rc ? fail() : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "rng"))
        return cmd_rng(argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "fans"))
        return cmd_fans(argc - 2, argv + 2);
    if (argc == 11 && !strcmp(argv[1], "optim"))
        return cmd_optim(argv + 2);
    if (argc == 3 && !strcmp(argv[1], "st-write"))
        return cmd_st_write(argv + 2);
    if (argc == 4 && !strcmp(argv[1], "st-load"))
        return cmd_st_load(argv + 2);
    if (argc == 4 && !strcmp(argv[1], "npy-copy"))
        return cmd_npy_copy(argv + 2);
    if (argc == 2 && !strcmp(argv[1], "isa")) {
        printf("%s\n", nnc_isa_name(nnc_isa()));
        return 0;
    }
    fprintf(stderr, "usage: rt_probe rng|fans|optim|st-write|st-load|npy-copy|isa ...\n");
    return 1;
}
