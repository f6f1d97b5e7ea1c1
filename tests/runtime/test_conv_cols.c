/* test_conv_cols.c — the convolution by columns (runtime/conv_cols.c), in
 * float and double, against plain convolution loops in double: the
 * forward pass (with a bias, and a bias and relu), the data gradient (with
 * an addend) and the kernel's gradient summed over the examples, on
 * shapes that take every path: 1x1 kernels at stride 1 without padding
 * (no columns: the image is the GEMM's operand) and with padding or at
 * stride 2, 3x3 and 5x5 kernels, rectangular ones, strides 1 and 2,
 * padding wider than K - 1, 'same' convolutions on short rows (one shifted
 * copy per column row) and long ones (row by row), channel counts off
 * multiples of 16, batches of 1 and 3.  Inputs are floats (also in the
 * double runs), so that one reference serves both precisions.
 * The work buffer is exactly the size nnc_conv.h gives, NaN-filled (a
 * read of stale work shows), with guard values after it that must stay
 * untouched; one element less must abort with a message (in a child
 * process).
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "nnc_runtime.h"
#include "isa_skip.h"

static double urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xFFFF) / 32768.0 - 1.0;
}

typedef struct {
    int N, C, H, W, F, KH, KW, S, p;
} shape;

static int out_h(const shape *s) { return (s->H + 2 * s->p - s->KH) / s->S + 1; }
static int out_w(const shape *s) { return (s->W + 2 * s->p - s->KW) / s->S + 1; }

/* The seven loops, in double: y = conv(x, w) (+ bias, relu), dx = the
 * data gradient (+ add), dw = the kernel's gradient summed over n. */
static void ref(const shape *s, const double *x, const double *w, const double *bias, int relu, const double *dy,
                const double *add, double *y, double *dx, double *dw)
{
    const int N = s->N, C = s->C, H = s->H, W = s->W, F = s->F, KH = s->KH, KW = s->KW, S = s->S, p = s->p;
    const int OH = out_h(s), OW = out_w(s);
    memset(dx, 0, sizeof(double) * (size_t)(N * C * H * W));
    memset(dw, 0, sizeof(double) * (size_t)(F * C * KH * KW));
    for (int n = 0; n < N; n++)
        for (int f = 0; f < F; f++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    const int yi = ((n * F + f) * OH + oh) * OW + ow;
                    double acc = 0;
                    for (int c = 0; c < C; c++)
                        for (int ky = 0; ky < KH; ky++)
                            for (int kx = 0; kx < KW; kx++) {
                                const int ih = S * oh + ky - p, iw = S * ow + kx - p;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                const int xi = ((n * C + c) * H + ih) * W + iw, wi = ((f * C + c) * KH + ky) * KW + kx;
                                acc += w[wi] * x[xi];
                                dx[xi] += w[wi] * dy[yi];
                                dw[wi] += dy[yi] * x[xi];
                            }
                    if (bias)
                        acc += bias[f];
                    y[yi] = relu && !(acc > 0) ? 0 : acc;
                }
    if (add)
        for (int i = 0; i < N * C * H * W; i++)
            dx[i] += add[i];
}

/* max |got - want| / (max |want| + tiny), NaN as infinite */
static double rel_err(const double *got, const double *want, size_t n)
{
    double e = 0, m = 1e-30;
    for (size_t i = 0; i < n; i++) {
        if (fabs(want[i]) > m)
            m = fabs(want[i]);
        const double d = got[i] != got[i] ? INFINITY : fabs(got[i] - want[i]);
        if (d > e)
            e = d;
    }
    return e / m;
}

enum { GUARD = 64 };

/* The runs in one precision: the three functions on the inputs (given in
 * double, each value a float), their results back in double; 0 if a run
 * wrote past its work buffer. */
typedef struct {
    const double *x, *w, *bias, *dy, *add;
    int relu;
    double *y, *dx, *dw;
} io;

#define DEFINE_RUN(R, sfx) \
    static R *sfx##_copy(const double *v, size_t n) \
    { \
        R *r = malloc(sizeof(R) * (n ? n : 1)); \
        for (size_t i = 0; i < n; i++) \
            r[i] = (R)v[i]; \
        return r; \
    } \
    static R *sfx##_work(int64_t n) \
    { \
        R *r = malloc(sizeof(R) * (size_t)(n + GUARD)); \
        for (int64_t i = 0; i < n + GUARD; i++) \
            r[i] = i < n ? (R)NAN : (R)12345; \
        return r; \
    } \
    static int sfx##_guard(const R *r, int64_t n) \
    { \
        for (int i = 0; i < GUARD; i++) \
            if (r[n + i] != (R)12345) \
                return 0; \
        return 1; \
    } \
    static int run_##sfx(const shape *s, io *o) \
    { \
        const size_t nx = (size_t)s->N * s->C * s->H * s->W, nw = (size_t)s->F * s->C * s->KH * s->KW, \
                     ny = (size_t)s->N * s->F * out_h(s) * out_w(s); \
        R *x = sfx##_copy(o->x, nx), *w = sfx##_copy(o->w, nw), *dy = sfx##_copy(o->dy, ny); \
        R *bias = o->bias ? sfx##_copy(o->bias, (size_t)s->F) : NULL, *add = o->add ? sfx##_copy(o->add, nx) : NULL; \
        R *y = sfx##_work((int64_t)ny), *dx = sfx##_work((int64_t)nx), *dw = sfx##_work((int64_t)nw); \
        int ok = 1; \
        int64_t nwk = nnc_conv2d_cols_work(s->C, s->H, s->W, s->F, s->KH, s->KW, s->S, s->p); \
        R *wk = sfx##_work(nwk); \
        nnc_conv2d_cols_##sfx(s->N, x, w, y, s->C, s->H, s->W, s->F, s->KH, s->KW, s->S, s->p, bias, o->relu, wk, \
                              nwk); \
        ok &= sfx##_guard(wk, nwk) && sfx##_guard(y, (int64_t)ny); \
        nnc_conv2d_cols_bwd_data_##sfx(s->N, dy, w, dx, add, s->C, s->H, s->W, s->F, s->KH, s->KW, s->S, s->p, wk, \
                                       nwk); \
        ok &= sfx##_guard(wk, nwk) && sfx##_guard(dx, (int64_t)nx); \
        free(wk); \
        nwk = nnc_conv2d_cols_bwd_filter_work(s->C, s->H, s->W, s->F, s->KH, s->KW, s->S, s->p); \
        wk = sfx##_work(nwk); \
        nnc_conv2d_cols_bwd_filter_##sfx(s->N, dy, x, dw, s->C, s->H, s->W, s->F, s->KH, s->KW, s->S, s->p, wk, nwk); \
        ok &= sfx##_guard(wk, nwk) && sfx##_guard(dw, (int64_t)nw); \
        for (size_t i = 0; i < ny; i++) \
            o->y[i] = (double)y[i]; \
        for (size_t i = 0; i < nx; i++) \
            o->dx[i] = (double)dx[i]; \
        for (size_t i = 0; i < nw; i++) \
            o->dw[i] = (double)dw[i]; \
        free(wk), free(x), free(w), free(dy), free(bias), free(add), free(y), free(dx), free(dw); \
        return ok; \
    }
DEFINE_RUN(float, f32)
DEFINE_RUN(double, f64)

/* Each input value a float (double's runs see the same numbers). */
static double *rand_vals(unsigned *seed, size_t n)
{
    double *v = malloc(sizeof(double) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(float)urand(seed);
    return v;
}

/* The shape three times: plain, with a bias, with a bias and relu (the
 * data gradient with an addend in the latter two), in both precisions. */
static void cols_case(unsigned *seed, int N, int C, int H, int W, int F, int KH, int KW, int S, int p)
{
    const shape s = {N, C, H, W, F, KH, KW, S, p};
    const size_t nx = (size_t)N * C * H * W, nw = (size_t)F * C * KH * KW, ny = (size_t)N * F * out_h(&s) * out_w(&s);
    double *x = rand_vals(seed, nx), *w = rand_vals(seed, nw), *dy = rand_vals(seed, ny), *bias = rand_vals(seed, F),
           *add = rand_vals(seed, nx);
    double *y = malloc(sizeof(double) * ny), *dx = malloc(sizeof(double) * nx), *dw = malloc(sizeof(double) * nw);
    double *yr = malloc(sizeof(double) * ny), *dxr = malloc(sizeof(double) * nx), *dwr = malloc(sizeof(double) * nw);
    for (int variant = 0; variant < 3; variant++) {
        io o = {x, w, variant ? bias : NULL, dy, variant ? add : NULL, variant == 2, y, dx, dw};
        ref(&s, x, w, o.bias, o.relu, dy, o.add, yr, dxr, dwr);
        static const char *const names[] = {"", " +bias +add", " +bias relu +add"};
        for (int dbl = 0; dbl < 2; dbl++) {
            const int ok = dbl ? run_f64(&s, &o) : run_f32(&s, &o);
            /* float: sums of up to C K K products of numbers within 1 */
            const double tol = dbl ? 1e-13 : 1e-5;
            const double ey = rel_err(y, yr, ny), edx = rel_err(dx, dxr, nx), edw = rel_err(dw, dwr, nw);
            CHECKF(ey < tol && edx < tol && edw < tol,
                   "%s%s N%d C%d %dx%d F%d k%dx%d s%d p%d: relative errors forward %g, data %g, kernel %g",
                   dbl ? "f64" : "f32", names[variant], N, C, H, W, F, KH, KW, S, p, ey, edx, edw);
            CHECKF(ok, "%s N%d C%d %dx%d F%d k%dx%d s%d p%d: wrote past its work buffer or its output",
                   dbl ? "f64" : "f32", N, C, H, W, F, KH, KW, S, p);
        }
    }
    free(x), free(w), free(dy), free(bias), free(add), free(y), free(dx), free(dw), free(yr), free(dxr), free(dwr);
}

/* The kernel's gradient of no examples: all 0 (not the work's NaNs). */
static void no_examples(void)
{
    const int C = 3, F = 5, K = 3;
    float x[1] = {0}, dy[1] = {0}, dw[5 * 3 * 3 * 3];
    double xd[1] = {0}, dyd[1] = {0}, dwd[5 * 3 * 3 * 3];
    for (int i = 0; i < F * C * K * K; i++)
        dw[i] = NAN, dwd[i] = NAN;
    const int64_t n = nnc_conv2d_cols_bwd_filter_work(C, 6, 6, F, K, K, 1, 1);
    float *wk = f32_work(n);
    double *wkd = f64_work(n);
    nnc_conv2d_cols_bwd_filter_f32(0, dy, x, dw, C, 6, 6, F, K, K, 1, 1, wk, n);
    nnc_conv2d_cols_bwd_filter_f64(0, dyd, xd, dwd, C, 6, 6, F, K, K, 1, 1, wkd, n);
    int ok = 1;
    for (int i = 0; i < F * C * K * K; i++)
        ok &= dw[i] == 0.0f && dwd[i] == 0.0;
    CHECKF(ok, "kernel gradient of no examples: all 0");
    free(wk), free(wkd);
}

/* A work buffer one element too short: the call must abort, saying so
 * (run in a child; its stderr read through a pipe). */
static void short_work(int which)
{
    const shape s = {2, 3, 6, 7, 4, 3, 3, which == 2 ? 2 : 1, 1};
    int fd[2];
    if (pipe(fd) != 0) {
        CHECKF(0, "pipe failed");
        return;
    }
    fflush(stdout), fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        const size_t nx = (size_t)s.N * s.C * s.H * s.W, nw = (size_t)s.F * s.C * s.KH * s.KW,
                     ny = (size_t)s.N * s.F * out_h(&s) * out_w(&s);
        if (which == 1) { /* the kernel's gradient in double */
            const int64_t n = nnc_conv2d_cols_bwd_filter_work(s.C, s.H, s.W, s.F, s.KH, s.KW, s.S, s.p) - 1;
            double *x = calloc(nx, sizeof(double)), *dy = calloc(ny, sizeof(double)), *dw = calloc(nw, sizeof(double)),
                   *wk = calloc((size_t)n, sizeof(double));
            nnc_conv2d_cols_bwd_filter_f64(s.N, dy, x, dw, s.C, s.H, s.W, s.F, s.KH, s.KW, s.S, s.p, wk, n);
        } else { /* the forward pass (0) or the data gradient at stride 2 (2), in float */
            const int64_t n = nnc_conv2d_cols_work(s.C, s.H, s.W, s.F, s.KH, s.KW, s.S, s.p) - 1;
            float *x = calloc(nx, sizeof(float)), *w = calloc(nw, sizeof(float)), *y = calloc(ny, sizeof(float)),
                  *wk = calloc((size_t)n, sizeof(float));
            if (which == 0)
                nnc_conv2d_cols_f32(s.N, x, w, y, s.C, s.H, s.W, s.F, s.KH, s.KW, s.S, s.p, NULL, 0, wk, n);
            else
                nnc_conv2d_cols_bwd_data_f32(s.N, y, w, x, NULL, s.C, s.H, s.W, s.F, s.KH, s.KW, s.S, s.p, wk, n);
        }
        _exit(0); /* not reached if the check works */
    }
    close(fd[1]);
    char msg[512] = {0};
    size_t got = 0;
    ssize_t r;
    while (got < sizeof msg - 1 && (r = read(fd[0], msg + got, sizeof msg - 1 - got)) > 0)
        got += (size_t)r;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    static const char *const names[] = {"nnc_conv2d_cols_f32", "nnc_conv2d_cols_bwd_filter_f64",
                                        "nnc_conv2d_cols_bwd_data_f32"};
    CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "%s with a work buffer one element short: no abort",
           names[which]);
    CHECKF(strstr(msg, names[which]) && strstr(msg, "work buffer of") && strstr(msg, "internal error in nnc"),
           "%s with a work buffer one element short: message \"%s\"", names[which], msg);
}

int main(void)
{
    if (isa_skip("test_conv_cols"))
        return ISA_SKIP;
    unsigned seed = 5;
    /* 1x1: no columns at stride 1 without padding; at stride 2; with
     * padding (wider than K - 1 = 0) */
    cols_case(&seed, 3, 5, 7, 9, 17, 1, 1, 1, 0);
    cols_case(&seed, 1, 20, 9, 8, 3, 1, 1, 2, 0);
    cols_case(&seed, 3, 6, 8, 8, 10, 1, 1, 2, 0);
    cols_case(&seed, 1, 3, 5, 4, 6, 1, 1, 1, 1);
    /* 3x3, padding 1, stride 1: 'same' on short rows (W < 24: 8x8, a
     * non-square 6x23), row by row on long ones (24 and 30), and stride 2 */
    cols_case(&seed, 3, 17, 8, 8, 33, 3, 3, 1, 1);
    cols_case(&seed, 1, 4, 6, 23, 5, 3, 3, 1, 1);
    cols_case(&seed, 1, 3, 5, 24, 7, 3, 3, 1, 1);
    cols_case(&seed, 3, 2, 10, 30, 18, 3, 3, 1, 1);
    cols_case(&seed, 3, 6, 11, 12, 20, 3, 3, 2, 1);
    cols_case(&seed, 1, 19, 16, 16, 9, 3, 3, 2, 1);
    /* 5x5: unpadded, 'same' (padding 2), stride 2 */
    cols_case(&seed, 1, 6, 14, 14, 19, 5, 5, 1, 0);
    cols_case(&seed, 3, 2, 6, 7, 5, 5, 5, 1, 2);
    cols_case(&seed, 1, 3, 13, 11, 4, 5, 5, 2, 2);
    /* rectangular kernels */
    cols_case(&seed, 3, 4, 9, 10, 7, 3, 1, 1, 1);
    cols_case(&seed, 1, 5, 6, 13, 9, 1, 3, 1, 0);
    cols_case(&seed, 1, 3, 9, 7, 6, 3, 1, 2, 0);
    cols_case(&seed, 3, 2, 7, 26, 3, 1, 3, 2, 1);
    /* padding wider than K - 1: beyond 3x3 and 2x2 kernels, and a 'same'
     * 7x7 on an image smaller than its padding */
    cols_case(&seed, 1, 3, 5, 6, 4, 3, 3, 1, 3);
    cols_case(&seed, 3, 2, 5, 5, 3, 2, 2, 2, 2);
    cols_case(&seed, 1, 2, 2, 2, 3, 7, 7, 1, 3);
    cols_case(&seed, 3, 2, 3, 1, 2, 3, 3, 1, 1);
    /* the benchmark's and the models' layers */
    cols_case(&seed, 1, 3, 32, 32, 16, 3, 3, 1, 1);
    cols_case(&seed, 3, 16, 16, 16, 32, 1, 1, 2, 0);
    cols_case(&seed, 1, 1, 8, 8, 8, 3, 3, 1, 1);
    /* small images, G to a GEMM (nnc_conv_cols_group): more examples
     * than a group, the last group short (4x4: G 16, 21 = 16 + 5; 8x8:
     * G 4, 9 = 4 + 4 + 1), a 1x1 kernel whose image is no longer its own
     * columns, stride 2 onto a 3x3 grid */
    cols_case(&seed, 21, 5, 4, 4, 7, 3, 3, 1, 1);
    cols_case(&seed, 9, 3, 8, 8, 6, 3, 3, 1, 1);
    cols_case(&seed, 20, 7, 4, 4, 5, 1, 1, 1, 0);
    cols_case(&seed, 30, 4, 6, 6, 3, 3, 3, 2, 1);
    /* the vector permutes of channels of at most 16 pixels (64 at
     * AVX-512) into at most 16 columns (conv_cols_tmpl.h): resnet18's
     * 8x8 -> 4x4 at stride 2, channels of 15 and 25 pixels and of 9 and
     * 12 columns (vectors part full), a 7x7 kernel's 49 taps, and a
     * 4x4 grid with a 1x1 kernel at stride 2 */
    cols_case(&seed, 18, 5, 8, 8, 6, 3, 3, 2, 1);
    cols_case(&seed, 19, 3, 3, 5, 4, 3, 3, 1, 1);
    cols_case(&seed, 17, 2, 5, 5, 3, 3, 3, 2, 1);
    cols_case(&seed, 17, 3, 4, 3, 2, 3, 3, 1, 1);
    cols_case(&seed, 5, 2, 4, 4, 3, 7, 7, 1, 3);
    cols_case(&seed, 20, 3, 8, 8, 4, 1, 1, 2, 0);
    no_examples();
    for (int which = 0; which < 3; which++)
        short_work(which);
    return check_summary("test_conv_cols");
}
