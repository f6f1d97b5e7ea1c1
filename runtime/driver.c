/* driver.c — the command-line driver behind every generated <model>_main.c.
 *
 * A generated model describes itself in an nnc_model_desc (its inputs,
 * labels, output, metrics, tensors and thin wrappers around its typed API)
 * and hands it to nnc_driver_main, which implements the CLI of
 * docs/generated-c.md: info, train, eval, predict and grad over .npy data
 * and safetensors checkpoints.  Keeping the CLI here rather than generating
 * it keeps every model's command line identical and the generated code
 * small.
 *
 * Exit status: 0 ok; 1 usage error (unknown subcommand or option, missing
 * option, bad number); 2 a bad or unreadable file (inputs, labels, weights)
 * or any other run-time failure (out of memory, cannot write the output);
 * 3 a model built with `nnc --check-numerics` met a NaN or an infinity
 * (its message, naming the op, the tensor and the .nn line, on stderr).
 * Every input file is read and validated (dtype, shape, batch size, id
 * ranges) before any pass runs, and outputs are written atomically at the
 * very end, so a failure never leaves an output file behind.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nnc_internal.h"
#include "nnc_runtime.h"

#define EXIT_OK 0
#define EXIT_USAGE 1
#define EXIT_FILE 2
#define EXIT_NUMERICS 3

/* eval and predict run in chunks of at most this many examples, so that a
 * large file does not need activations for all of it at once. */
#define CHUNK 65536

/* The data shuffle draws from its own stream, derived from --seed, so that
 * it does not replay the stream the model's init drew its weights from. */
#define SHUFFLE_SALT UINT64_C(0x53485546464c4521) /* "SHUFFLE!" */

/* ---- options ------------------------------------------------------------------ */

enum sub { SUB_INFO = 1, SUB_TRAIN = 2, SUB_EVAL = 4, SUB_PREDICT = 8, SUB_GRAD = 16 };

enum opt_id {
    O_INPUTS,
    O_LABELS,
    O_WEIGHTS,
    O_SAVE,
    O_OUTPUT,
    O_EPOCHS,
    O_BATCH,
    O_OPTIMIZER,
    O_LR,
    O_SEED,
    O_MOMENTUM,
    O_WD,
    O_CLIP,
    O_VAL_INPUTS,
    O_VAL_LABELS,
    O_QUIET,
    O_THREADS,
    O_LR_SCHEDULE,
    O_WARMUP,
    O_LR_STEP,
    O_LR_GAMMA,
    O_ACCUMULATE,
    O_VAL_SPLIT,
    O_LOG,
    O_LOG_EVERY,
    O_PROGRESS,
    O_SAVE_EVERY,
    O_RESUME,
    O_STOP_AFTER,
    O_NON_STRICT,
    O_COUNT
};

typedef struct optdef {
    const char *name;
    int takes_value;
    unsigned subs;
} optdef;

static const optdef optdefs[O_COUNT] = {
    [O_INPUTS] = {"inputs", 1, SUB_TRAIN | SUB_EVAL | SUB_PREDICT | SUB_GRAD},
    [O_LABELS] = {"labels", 1, SUB_TRAIN | SUB_EVAL | SUB_GRAD},
    [O_WEIGHTS] = {"weights", 1, SUB_TRAIN | SUB_EVAL | SUB_PREDICT | SUB_GRAD},
    [O_SAVE] = {"save", 1, SUB_TRAIN},
    [O_OUTPUT] = {"output", 1, SUB_PREDICT | SUB_GRAD},
    [O_EPOCHS] = {"epochs", 1, SUB_TRAIN},
    [O_BATCH] = {"batch", 1, SUB_TRAIN},
    [O_OPTIMIZER] = {"optimizer", 1, SUB_TRAIN},
    [O_LR] = {"lr", 1, SUB_TRAIN},
    [O_SEED] = {"seed", 1, SUB_TRAIN | SUB_GRAD},
    [O_MOMENTUM] = {"momentum", 1, SUB_TRAIN},
    [O_WD] = {"weight-decay", 1, SUB_TRAIN},
    [O_CLIP] = {"clip", 1, SUB_TRAIN},
    [O_VAL_INPUTS] = {"val-inputs", 1, SUB_TRAIN},
    [O_VAL_LABELS] = {"val-labels", 1, SUB_TRAIN},
    [O_QUIET] = {"quiet", 0, SUB_TRAIN},
    [O_THREADS] = {"threads", 1, SUB_INFO | SUB_TRAIN | SUB_EVAL | SUB_PREDICT | SUB_GRAD},
    [O_LR_SCHEDULE] = {"lr-schedule", 1, SUB_TRAIN},
    [O_WARMUP] = {"warmup", 1, SUB_TRAIN},
    [O_LR_STEP] = {"lr-step-size", 1, SUB_TRAIN},
    [O_LR_GAMMA] = {"lr-gamma", 1, SUB_TRAIN},
    [O_ACCUMULATE] = {"accumulate", 1, SUB_TRAIN},
    [O_VAL_SPLIT] = {"val-split", 1, SUB_TRAIN},
    [O_LOG] = {"log", 1, SUB_TRAIN},
    [O_LOG_EVERY] = {"log-every", 1, SUB_TRAIN},
    [O_PROGRESS] = {"progress", 1, SUB_TRAIN},
    [O_SAVE_EVERY] = {"save-every", 1, SUB_TRAIN},
    [O_RESUME] = {"resume", 1, SUB_TRAIN},
    [O_STOP_AFTER] = {"stop-after", 1, SUB_TRAIN},
    [O_NON_STRICT] = {"non-strict", 0, SUB_TRAIN | SUB_EVAL | SUB_PREDICT | SUB_GRAD},
};

/* ---- messages ----------------------------------------------------------------- */

static const char *dtype_short(nnc_dtype t);
static void fmt_io_shape(char *out, size_t cap, const nnc_io_desc *io, const char *open, const char *close);

static void usage_sub(FILE *out, const char *prog, const nnc_model_desc *d, unsigned sub, int first)
{
    const char *lead = first ? "usage:" : "      ";
    const char *lab = d->num_labels > 0 ? " --labels Y.npy" : "";
    switch (sub) {
    case SUB_INFO: fprintf(out, "%s %s info [--threads N]\n", lead, prog); break;
    case SUB_TRAIN:
        fprintf(out,
                "%s %s train --inputs X.npy%s --save OUT.safetensors\n"
                "          [--epochs E (10)] [--batch B (32)] [--optimizer sgd|adam|adamw (adam)]\n"
                "          [--lr LR (0.001)] [--momentum M (0)] [--weight-decay WD (0; adamw 0.01)]\n"
                "          [--clip MAX_NORM] [--seed S (0)] [--weights IN.safetensors]\n"
                "          [--lr-schedule constant|step|cosine|linear (constant)] [--warmup STEPS (0)]\n"
                "          [--lr-step-size STEPS (an epoch)] [--lr-gamma G (0.1)] [--accumulate K (1)]\n"
                "          [--val-inputs X.npy%s | --val-split FRACTION] [--log FILE.csv|FILE.jsonl]\n"
                "          [--log-every STEPS (1)] [--progress SECONDS (1 on a terminal, else 10; 0 off)]\n"
                "          [--save-every STEPS] [--resume CKPT.safetensors] [--stop-after STEPS]\n"
                "          [--non-strict] [--quiet] [--threads N (every core)]\n",
                lead, prog, lab, d->num_labels > 0 ? " --val-labels Y.npy" : "");
        break;
    case SUB_EVAL:
        fprintf(out, "%s %s eval --weights W.safetensors --inputs X.npy%s [--non-strict] [--threads N]\n", lead, prog,
                lab);
        break;
    case SUB_PREDICT:
        fprintf(out,
                "%s %s predict --weights W.safetensors --inputs X.npy --output OUT.npy [--non-strict] [--threads N]\n",
                lead, prog);
        break;
    case SUB_GRAD:
        fprintf(out,
                "%s %s grad --weights W.safetensors --inputs X.npy%s --output G.safetensors "
                "[--seed S] [--non-strict] [--threads N]\n",
                lead, prog, lab);
        break;
    }
}

static void usage(FILE *out, const char *prog, const nnc_model_desc *d, unsigned only)
{
    int first = 1;
    const unsigned subs[] = {SUB_INFO, SUB_TRAIN, SUB_EVAL, SUB_PREDICT, SUB_GRAD};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (only && subs[i] != only)
            continue;
        if (!d->has_loss && (subs[i] & (SUB_TRAIN | SUB_EVAL | SUB_GRAD)))
            continue;
        usage_sub(out, prog, d, subs[i], first);
        first = 0;
    }
    if (!only || (only & (SUB_TRAIN | SUB_EVAL | SUB_PREDICT | SUB_GRAD))) {
        int batched = d->output.batched;
        for (int i = 0; i < d->num_inputs; i++)
            batched |= d->inputs[i].batched;
        for (int i = 0; i < d->num_labels; i++)
            batched |= d->labels[i].batched;
        fprintf(out,
                "Arrays are .npy files, %s; several inputs or labels are given as "
                "a,b in declaration order.\n",
                batched ? "batch first" : "of exactly these shapes (no batch dim: the files are one sample)");
        char shape[256];
        fprintf(out, "Inputs:");
        for (int i = 0; i < d->num_inputs; i++) {
            fmt_io_shape(shape, sizeof shape, &d->inputs[i], "[", "]");
            fprintf(out, "%s %s %s %s", i ? "," : "", d->inputs[i].name, dtype_short(d->inputs[i].dtype), shape);
        }
        fprintf(out, "\n");
        if (d->num_labels > 0) {
            fprintf(out, "Labels:");
            for (int i = 0; i < d->num_labels; i++) {
                fmt_io_shape(shape, sizeof shape, &d->labels[i], "[", "]");
                fprintf(out, "%s %s %s %s", i ? "," : "", d->labels[i].name, dtype_short(d->labels[i].dtype), shape);
            }
            fprintf(out, "\n");
        }
    }
    if (!only)
        fprintf(out,
                "Environment: NNC_ISA=avx512|avx2|generic runs the kernels for that instruction set\n"
                "(default: the best this CPU has, which info shows; never one it lacks).\n");
}

static int usage_error(const char *prog, const nnc_model_desc *d, unsigned sub, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int usage_error(const char *prog, const nnc_model_desc *d, unsigned sub, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    usage(stderr, prog, d, sub);
    return EXIT_USAGE;
}

static int file_error(const char *prog, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* "<prog>: <file>: <what>", one line: the caller's message already names
 * the file. */
static int file_error(const char *prog, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(stderr, "%s: %s\n", prog, msg);
    return EXIT_FILE;
}

/* Reports a runtime or generated-code failure: its nnc_error() if it left
 * one, else the fallback built from errno. */
static int report_failure(const char *prog, const char *fallback_file, const char *what)
{
    if (nnc__error_isset())
        return file_error(prog, "%s", nnc_error());
    return file_error(prog, "%s: %s%s%s", fallback_file, what, errno ? ": " : "", errno ? strerror(errno) : "");
}

/* A model built with --check-numerics whose last pass stopped at a
 * non-finite value: its message, and EXIT_NUMERICS; else 0. */
static int numerics_failed(const char *prog, const nnc_model_desc *d, const void *m)
{
    const char *msg = d->numerics_error ? d->numerics_error(m) : NULL;
    if (!msg)
        return 0;
    fprintf(stderr, "%s: %s\n", prog, msg);
    return EXIT_NUMERICS;
}

static const char *dtype_name(nnc_dtype t) { return t == NNC_I32 ? "<i4" : "<f4"; }

static const char *dtype_short(nnc_dtype t) { return t == NNC_I32 ? "i32" : "f32"; }

/* "[N, 64]" (batched) or "[3, 4]". */
static void fmt_io_shape(char *out, size_t cap, const nnc_io_desc *io, const char *open, const char *close)
{
    size_t k = (size_t)snprintf(out, cap, "%s", open);
    for (int i = 0; i < io->ndim && k < cap; i++) {
        if (i == 0 && io->batched)
            k += (size_t)snprintf(out + k, cap - k, "N");
        else
            k += (size_t)snprintf(out + k, cap - k, i ? ", %d" : "%d", io->shape[i]);
    }
    if (k < cap && io->ndim == 1 && !strcmp(open, "("))
        k += (size_t)snprintf(out + k, cap - k, ",");
    if (k < cap)
        snprintf(out + k, cap - k, "%s", close);
}

static void fmt_array_shape(char *out, size_t cap, const nnc_array *a)
{
    size_t k = (size_t)snprintf(out, cap, "(");
    for (int i = 0; i < a->ndim && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, i ? ", %lld" : "%lld", (long long)a->shape[i]);
    if (k < cap && a->ndim == 1)
        k += (size_t)snprintf(out + k, cap - k, ",");
    if (k < cap)
        snprintf(out + k, cap - k, ")");
}

/* ---- numbers on the command line ------------------------------------------------- */

static int parse_long(const char *s, long lo, long hi, long *out)
{
    if (!*s || !((*s >= '0' && *s <= '9') || *s == '-' || *s == '+'))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_double(const char *s, double lo, int lo_open, double *out)
{
    if (!*s || !((*s >= '0' && *s <= '9') || *s == '-' || *s == '+' || *s == '.'))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || (lo_open && v == lo))
        return -1;
    *out = v;
    return 0;
}

/* ---- data sets ----------------------------------------------------------------------- */

/* The arrays of one pass: the inputs, then (when used) the labels, each
 * with its descriptor and, for batched arrays, the bytes per example. */
typedef struct dset {
    int count, num_inputs;
    nnc_array *arr;
    const nnc_io_desc **io;
    char **paths;
    size_t *ex_bytes; /* bytes per example; for unbatched arrays the whole array */
    size_t *stride;   /* ex_bytes when batched, 0 when not: row s is at data + s*stride */
    int64_t n;        /* examples */
} dset;

static void dset_free(dset *s)
{
    for (int i = 0; i < s->count; i++) {
        if (s->arr)
            nnc_array_free(&s->arr[i]);
        if (s->paths)
            free(s->paths[i]);
    }
    free(s->arr);
    free(s->io);
    free(s->paths);
    free(s->ex_bytes);
    free(s->stride);
    memset(s, 0, sizeof *s);
}

/* Splits "a.npy,b.npy" into exactly `want` non-empty paths. */
static int split_paths(const char *list, int want, char **out)
{
    const char *p = list;
    for (int i = 0; i < want; i++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || (i == want - 1 && comma) || (i < want - 1 && !comma))
            return -1;
        out[i] = malloc(len + 1);
        if (!out[i])
            return -2;
        memcpy(out[i], p, len);
        out[i][len] = '\0';
        p = comma ? comma + 1 : p + len;
    }
    return 0;
}

typedef struct drv {
    const char *prog;
    const nnc_model_desc *d;
    unsigned sub;
    const char *opt[O_COUNT];
    int parse_only; /* nnc__drv_parse: check the command line, do nothing */
} drv;

static int count_list(const char *list)
{
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    return n;
}

/* Reads and validates the arrays of a pass: the inputs and, when
 * `with_labels`, the labels (`labels` may then be NULL only for a model
 * without labels).  Returns an exit status. */
/* The arrays of a set of `count` arrays, `num_inputs` of them inputs;
 * -1 when out of memory (dset_free frees what was allocated). */
static int dset_alloc(dset *s, int count, int num_inputs)
{
    s->count = count;
    s->num_inputs = num_inputs;
    s->arr = calloc((size_t)count + 1, sizeof *s->arr);
    s->io = calloc((size_t)count + 1, sizeof *s->io);
    s->paths = calloc((size_t)count + 1, sizeof *s->paths);
    s->ex_bytes = calloc((size_t)count + 1, sizeof *s->ex_bytes);
    s->stride = calloc((size_t)count + 1, sizeof *s->stride);
    return s->arr && s->io && s->paths && s->ex_bytes && s->stride ? 0 : -1;
}

static int dset_load(drv *v, dset *s, const char *inputs, int with_labels, const char *labels, const char *in_opt,
                     const char *lab_opt)
{
    const nnc_model_desc *d = v->d;
    memset(s, 0, sizeof *s);
    int nin = d->num_inputs, nlab = with_labels ? d->num_labels : 0;
    if (nlab == 0)
        labels = NULL;
    if (count_list(inputs) != nin)
        return usage_error(v->prog, d, v->sub, "--%s: the model takes %d input%s, got %d", in_opt, nin,
                           nin == 1 ? "" : "s", count_list(inputs));
    if (labels && count_list(labels) != nlab)
        return usage_error(v->prog, d, v->sub, "--%s: the model takes %d label%s, got %d", lab_opt, nlab,
                           nlab == 1 ? "" : "s", count_list(labels));
    int total = nin + nlab;
    if (dset_alloc(s, total, nin))
        return file_error(v->prog, "out of memory");
    int rc = split_paths(inputs, nin, s->paths);
    if (rc == -1)
        return usage_error(v->prog, d, v->sub, "--%s: empty file name in '%s'", in_opt, inputs);
    if (rc == 0 && labels) {
        rc = split_paths(labels, nlab, s->paths + nin);
        if (rc == -1)
            return usage_error(v->prog, d, v->sub, "--%s: empty file name in '%s'", lab_opt, labels);
    }
    if (rc != 0)
        return file_error(v->prog, "out of memory");
    for (int i = 0; i < total; i++)
        s->io[i] = i < nin ? &d->inputs[i] : &d->labels[i - nin];

    /* Read and check each file against its descriptor. */
    const char *first_batched = NULL;
    s->n = -1;
    for (int i = 0; i < total; i++) {
        const nnc_io_desc *io = s->io[i];
        const char *path = s->paths[i];
        const char *kind = i < nin ? "input" : "label";
        nnc_array *a = &s->arr[i];
        if (nnc_npy_read(path, a) != 0)
            return file_error(v->prog, "%s", nnc_error());
        if (a->dtype != io->dtype)
            return file_error(v->prog, "%s: dtype %s, expected %s for %s '%s'", path, dtype_name(a->dtype),
                              dtype_name(io->dtype), kind, io->name);
        int ok = a->ndim == io->ndim;
        for (int k = io->batched ? 1 : 0; ok && k < a->ndim; k++)
            ok = a->shape[k] == io->shape[k];
        if (!ok) {
            char got[256], want[256];
            fmt_array_shape(got, sizeof got, a);
            fmt_io_shape(want, sizeof want, io, "(", ")");
            return file_error(v->prog, "%s: shape %s, expected %s for %s '%s'", path, got, want, kind, io->name);
        }
        size_t ex = 4;
        for (int k = io->batched ? 1 : 0; k < a->ndim; k++)
            ex *= (size_t)a->shape[k];
        s->ex_bytes[i] = ex;
        s->stride[i] = io->batched ? ex : 0;
        if (io->batched) {
            if (a->shape[0] < 1)
                return file_error(v->prog, "%s: no examples (first dimension is 0)", path);
            if (a->shape[0] > INT_MAX)
                return file_error(v->prog, "%s: %lld examples, at most %d supported", path, (long long)a->shape[0],
                                  INT_MAX);
            if (s->n < 0) {
                s->n = a->shape[0];
                first_batched = path;
            } else if (a->shape[0] != s->n) {
                return file_error(v->prog, "%s: %lld examples, but %s has %lld", path, (long long)a->shape[0],
                                  first_batched, (long long)s->n);
            }
        }
        if (a->dtype == NNC_I32 && io->limit > 0) {
            const int32_t *x = a->data;
            for (int64_t k = 0; k < a->count; k++) {
                if ((x[k] >= 0 && x[k] < io->limit) || (io->ignore_ok && x[k] == -100))
                    continue;
                return file_error(v->prog,
                                  "%s: value %ld at index %lld out of range for %s '%s' "
                                  "(expected 0 <= value < %ld%s)",
                                  path, (long)x[k], (long long)k, kind, io->name, (long)io->limit,
                                  io->ignore_ok ? ", or -100" : "");
            }
        }
    }
    /* A model without a batch dimension sees its arrays whole: one example. */
    if (s->n < 0)
        s->n = 1;
    return EXIT_OK;
}

/* ---- the model --------------------------------------------------------------------- */

typedef struct inst {
    void *m;
    int inited;
} inst;

static int model_create(drv *v, inst *x, int max_batch, uint64_t seed)
{
    const nnc_model_desc *d = v->d;
    x->m = calloc(1, d->model_size ? d->model_size : 1);
    x->inited = 0;
    if (!x->m)
        return file_error(v->prog, "out of memory for the model");
    nnc__error_clear();
    errno = 0;
    if (d->init(x->m, max_batch, seed) != 0) {
        char what[128];
        snprintf(what, sizeof what, "cannot initialize the model (max batch %d)", max_batch);
        int rc = report_failure(v->prog, d->name, what);
        free(x->m);
        x->m = NULL;
        return rc;
    }
    x->inited = 1;
    return EXIT_OK;
}

/* --weights (and --resume) into the model; with --non-strict the
 * --weights file may lack tensors or hold others (listed on stderr) */
static int model_load(drv *v, inst *x, const char *path)
{
    nnc__error_clear();
    errno = 0;
    const int loose = v->opt[O_NON_STRICT] && v->opt[O_WEIGHTS] && !strcmp(path, v->opt[O_WEIGHTS]);
    if (loose && !v->d->load_non_strict)
        return file_error(v->prog, "%s: --non-strict: this model has no non-strict load", path);
    if ((loose ? v->d->load_non_strict(x->m, path) : v->d->load(x->m, path)) != 0)
        return report_failure(v->prog, path, "cannot load weights");
    return EXIT_OK;
}

static void model_free(drv *v, inst *x)
{
    if (x->m && x->inited)
        v->d->release(x->m);
    free(x->m);
    x->m = NULL;
    x->inited = 0;
}

/* ---- processes ------------------------------------------------------------------ */

/* Under mpirun every process reads the whole data set and takes its share
 * of each batch: the batch's examples split in rank order, the first
 * (n mod P) processes one more.  The model completes every reduction over
 * the batch across the processes, so each pass computes what one process
 * computes on the whole batch, and the processes stay identical; rank 0
 * alone prints and writes files. */
static void share(int64_t n, int64_t *off, int *cnt)
{
    const int64_t p = nnc_dist_size(), r = nnc_dist_rank(), q = n / p, rem = n % p;
    *cnt = (int)(q + (r < rem));
    *off = r * q + (r < rem ? r : rem);
}

static int is_root(void) { return nnc_dist_rank() == 0; }

/* Rows [s, s+n) of every array, without copying (data is contiguous). */
static void slice(const dset *ds, int64_t s, const void **ptrs)
{
    for (int i = 0; i < ds->count; i++)
        ptrs[i] = (const char *)ds->arr[i].data + (size_t)s * ds->stride[i];
}

/* How much a batch's mean loss weighs: its examples, or, when the first
 * label is i32 (class ids for cross_entropy, which averages over the ids
 * other than -100), its label entries other than -100, so that chunks
 * combine to the mean over the whole set and accumulated batches to one
 * batch of all of them.  `lab` is the batch's first label. */
static double batch_weight(const dset *ds, const void *lab, int n)
{
    if (ds->count == ds->num_inputs || ds->arr[ds->num_inputs].dtype != NNC_I32 || !ds->stride[ds->num_inputs])
        return n;
    const int32_t *y = lab;
    size_t per = ds->ex_bytes[ds->num_inputs] / sizeof(int32_t), count = 0;
    for (size_t k = 0; k < per * (size_t)n; k++)
        count += y[k] != -100;
    return (double)count;
}

/* the same for the batch of rows perm[s .. s + n) */
static double perm_weight(const dset *ds, const uint32_t *perm, int64_t s, int n)
{
    if (ds->count == ds->num_inputs || ds->arr[ds->num_inputs].dtype != NNC_I32 || !ds->stride[ds->num_inputs])
        return n;
    double w = 0;
    for (int r = 0; r < n; r++)
        w += batch_weight(
            ds, (const char *)ds->arr[ds->num_inputs].data + (size_t)perm[s + r] * ds->stride[ds->num_inputs], 1);
    return w;
}

/* The chunks of a set of n examples for eval: at most `max_batch` per
 * process.  One process: max_batch at a time, the last what is left;
 * several: as many chunks as that needs, of equal size (give or take
 * one), so that no process's share is empty.  -1 if some would be. */
static int64_t chunks_of(int64_t n, int max_batch)
{
    const int64_t p = nnc_dist_size(), g = (int64_t)max_batch * p, k = (n + g - 1) / g;
    if (p > 1 && n / k < p)
        return -1;
    return k;
}

static void chunk_at(int64_t n, int max_batch, int64_t k, int64_t c, int64_t *s, int64_t *len)
{
    if (nnc_dist_size() == 1) {
        *s = c * max_batch;
        *len = n - *s < max_batch ? n - *s : max_batch;
    } else {
        *s = n * c / k;
        *len = n * (c + 1) / k - *s;
    }
}

/* the same for rows [s, s + n) of the set */
static double loss_weight(const dset *ds, int64_t s, int n)
{
    const int i = ds->num_inputs;
    return batch_weight(ds, i < ds->count ? (const char *)ds->arr[i].data + (size_t)s * ds->stride[i] : NULL, n);
}

/* Loss and metrics over a whole data set, in chunks of at most max_batch:
 * metrics averaged by example count, the loss by loss_weight.  `ptrs` has
 * room for ds->count pointers and `tmp` for the metrics: nothing is
 * allocated here. */
static void eval_set(drv *v, inst *x, const dset *ds, int max_batch, const void **ptrs, float *tmp, double *loss,
                     double *metrics)
{
    const nnc_model_desc *d = v->d;
    double weight = 0;
    *loss = 0;
    for (int k = 0; k < d->num_metrics; k++)
        metrics[k] = 0;
    const int64_t nc = chunks_of(ds->n, max_batch);
    for (int64_t c = 0; c < nc; c++) {
        int64_t s, len, off;
        int n;
        chunk_at(ds->n, max_batch, nc, c, &s, &len);
        share(len, &off, &n); /* the model's means are over the whole chunk */
        float l = 0;
        slice(ds, s + off, ptrs);
        d->eval(x->m, n, ptrs, ptrs + ds->num_inputs, &l, tmp);
        if (d->numerics_error && d->numerics_error(x->m)) { /* the caller reports it */
            *loss = NAN;
            return;
        }
        n = (int)len;
        const double w = loss_weight(ds, s, n);
        if (w > 0) /* a chunk of ignored labels only: NaN, weight 0 */
            *loss += (double)l * w, weight += w;
        for (int k = 0; k < d->num_metrics; k++)
            metrics[k] += (double)tmp[k] * n;
    }
    *loss = weight > 0 ? *loss / weight : NAN;
    for (int k = 0; k < d->num_metrics; k++)
        metrics[k] /= (double)ds->n;
}

static void print_results(const nnc_model_desc *d, const char *prefix, double loss, const double *metrics)
{
    printf("%sloss=%.9g\n", prefix, loss);
    for (int k = 0; k < d->num_metrics; k++)
        printf("%s%s=%.9g\n", prefix, d->metric_names[k], metrics[k]);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- subcommands ---------------------------------------------------------------------- */

/* An output (--save, --output, --log) that could not be written at the
 * end: a directory, or in a directory that does not exist.  Checked before
 * anything runs, so that such a run fails at once and writes nothing (a
 * log would be created before the save failed).  Called after the
 * options' values are checked.  0 or EXIT_FILE. */
static int check_output(const drv *v, int id)
{
    const char *path = v->opt[id];
    struct stat st;
    if (!path)
        return 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return file_error(v->prog, "%s: cannot create (--%s): it is a directory", path, optdefs[id].name);
    char *dir = nnc__parent_dir(path);
    if (!dir)
        return 0; /* out of memory: left to the write itself */
    int rc = 0;
    if (stat(dir, &st) != 0)
        rc = file_error(v->prog, "%s: cannot create (--%s): %s: %s", path, optdefs[id].name, dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = file_error(v->prog, "%s: cannot create (--%s): %s is not a directory", path, optdefs[id].name, dir);
    free(dir);
    return rc;
}

static int check_outputs(const drv *v)
{
    const int ids[] = {O_SAVE, O_OUTPUT, O_LOG};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        const int rc = check_output(v, ids[k]);
        if (rc)
            return rc;
    }
    return 0;
}

static int cmd_info(drv *v)
{
    const nnc_model_desc *d = v->d;
    size_t nt = 0;
    const nnc_tensor_info *t = d->tensors(&nt);
    char buf[256];
    printf("model %s\n", d->name);
    printf("params %zu floats\n", d->num_params);
    printf("state %zu floats\n", d->num_state);
    printf("flops per example %.0f\n", d->flops_per_example);
    printf("isa %s\n", nnc_isa_name(nnc_isa())); /* the kernels' instruction set: NNC_ISA or the CPU's best */
    printf("tensors %zu\n", nt);
    for (size_t i = 0; i < nt; i++) {
        size_t k = (size_t)snprintf(buf, sizeof buf, "[");
        for (int j = 0; j < t[i].ndim && k < sizeof buf; j++)
            k += (size_t)snprintf(buf + k, sizeof buf - k, j ? ", %d" : "%d", t[i].shape[j]);
        if (k < sizeof buf)
            snprintf(buf + k, sizeof buf - k, "]");
        printf("  %s %s %s\n", t[i].name, buf,
               t[i].trainable              ? "params"
                   : t[i].dtype == NNC_I64 ? "state i64"
                                           : "state");
    }
    for (int i = 0; i < d->num_inputs; i++) {
        fmt_io_shape(buf, sizeof buf, &d->inputs[i], "[", "]");
        printf("input %s %s %s", d->inputs[i].name, dtype_short(d->inputs[i].dtype), buf);
        if (d->inputs[i].limit > 0)
            printf(" values in [0, %ld)", (long)d->inputs[i].limit);
        printf("\n");
    }
    for (int i = 0; i < d->num_labels; i++) {
        fmt_io_shape(buf, sizeof buf, &d->labels[i], "[", "]");
        printf("label %s %s %s", d->labels[i].name, dtype_short(d->labels[i].dtype), buf);
        if (d->labels[i].limit > 0)
            printf(" values in [0, %ld)%s", (long)d->labels[i].limit,
                   d->labels[i].ignore_ok ? " or -100 (ignored)" : "");
        printf("\n");
    }
    fmt_io_shape(buf, sizeof buf, &d->output, "[", "]");
    printf("output %s %s\n", dtype_short(d->output.dtype), buf);
    printf("loss %s\n", d->has_loss ? "yes" : "no (inference only)");
    if (d->numerics_error)
        printf("check-numerics yes\n");
    for (int k = 0; k < d->num_metrics; k++)
        printf("metric %s\n", d->metric_names[k]);
    return EXIT_OK;
}

/* Fisher-Yates from the end over perm[0 .. n), drawing from r: each
 * epoch's order, and --val-split's choice */
static void shuffle_perm(nnc_rng *r, uint32_t *perm, int64_t n)
{
    for (int64_t i = n - 1; i > 0; i--) {
        const uint32_t j = nnc_rng_below(r, (uint32_t)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
}

/* --val-split: moves `nval` examples of `tr`, drawn by a permutation of
 * the seed's own stream, into a new set `va` (copies), keeping the others
 * in `tr` in their file order.  The held-out examples depend on the seed
 * and the file alone, never on the batch or the epochs. */
#define SPLIT_SALT UINT64_C(0x53504c4954564c21) /* "SPLITVL!" */
static int dset_split(drv *v, dset *tr, dset *va, int64_t nval, uint64_t seed)
{
    const int64_t n = tr->n;
    memset(va, 0, sizeof *va);
    unsigned char *held = calloc((size_t)n, 1);
    uint32_t *perm = malloc((size_t)n * sizeof *perm);
    int rc = dset_alloc(va, tr->count, tr->num_inputs) || !held || !perm;
    if (!rc) {
        nnc_rng r;
        nnc_rng_seed(&r, seed ^ SPLIT_SALT);
        for (int64_t i = 0; i < n; i++)
            perm[i] = (uint32_t)i;
        shuffle_perm(&r, perm, n);
        for (int64_t i = 0; i < nval; i++)
            held[perm[i]] = 1;
    }
    for (int i = 0; !rc && i < tr->count; i++) {
        nnc_array *a = &tr->arr[i], *b = &va->arr[i];
        const size_t ex = tr->ex_bytes[i], st = tr->stride[i];
        va->io[i] = tr->io[i];
        va->ex_bytes[i] = ex;
        va->stride[i] = st;
        va->paths[i] = tr->paths[i] ? strdup(tr->paths[i]) : NULL;
        *b = *a;
        b->data = malloc(st ? (size_t)nval * ex : ex);
        if (!b->data || (tr->paths[i] && !va->paths[i])) {
            rc = 1;
            break;
        }
        if (!st) { /* unbatched: the same array in both */
            memcpy(b->data, a->data, ex);
            continue;
        }
        b->shape[0] = nval;
        b->count = a->count / n * nval;
        char *src = a->data, *kept = a->data, *out = b->data;
        for (int64_t k = 0; k < n; k++) { /* in file order, compacting tr in place */
            char *row = src + (size_t)k * ex;
            if (held[k])
                memcpy(out, row, ex), out += ex;
            else {
                if (kept != row)
                    memmove(kept, row, ex);
                kept += ex;
            }
        }
        a->shape[0] = n - nval;
        a->count = a->count / n * (n - nval);
    }
    free(held);
    free(perm);
    if (rc)
        return file_error(v->prog, "out of memory");
    tr->n = n - nval;
    va->n = nval;
    return EXIT_OK;
}

/* Progress within an epoch on stderr: a bar redrawn in place when stderr
 * is a terminal, plain lines otherwise, at most one per `every` seconds. */
typedef struct progress {
    int tty, shown;
    double every, last;
} progress;

static void progress_show(progress *p, long e, long epochs, long b, long nb, double loss, double t0, double now)
{
    if (p->every <= 0 || now - p->last < p->every)
        return;
    p->last = now;
    const double el = now - t0, eta = b > 0 ? el * (double)(nb - b) / (double)b : 0;
    if (p->tty) {
        char bar[31];
        const int w = (int)(30 * b / (nb > 0 ? nb : 1));
        for (int i = 0; i < 30; i++)
            bar[i] = i < w ? '=' : i == w ? '>' : ' ';
        bar[30] = 0;
        fprintf(stderr, "\repoch %ld/%ld [%s] %ld/%ld  loss %.4g  %.1fs  eta %.1fs ", e, epochs, bar, b, nb, loss, el,
                eta);
        p->shown = 1;
    } else {
        fprintf(stderr, "epoch %ld/%ld  batch %ld/%ld (%.0f%%)  loss %.6g  elapsed %.1fs  eta %.1fs\n", e, epochs, b,
                nb, 100.0 * (double)b / (double)(nb > 0 ? nb : 1), loss, el, eta);
    }
    fflush(stderr);
}

static void progress_clear(progress *p)
{
    if (p->tty && p->shown)
        fprintf(stderr, "\r%*s\r", 100, "");
    p->shown = 0;
}

/* ---- training state: --save-every and --resume ------------------------------------------- */

/* A checkpoint of --save-every holds the model's tensors and the training
 * state: the optimizer's moments as NNC_TRAIN_PREFIX tensors, and in
 * __metadata__ the counters, the model's random stream and the settings
 * that decide the bits (docs/generated-c.md, "Saving and resuming").  The
 * data order is not stored: it is the seed's shuffles replayed up to the
 * epoch in progress. */
#define TRAIN_FORMAT "1"
#define TM_M NNC_TRAIN_PREFIX "optimizer.m"
#define TM_V NNC_TRAIN_PREFIX "optimizer.v"

/* what a run's bits depend on, besides the data, the model and --epochs */
typedef struct train_cfg {
    uint64_t seed;
    long batch, accumulate;
    int64_t examples;
    const char *optimizer, *val_split;
} train_cfg;

enum {
    K_FORMAT,
    K_STEP,
    K_EPOCH,
    K_BATCH_INDEX,
    K_OPT_STEP,
    K_RNG,
    K_SEED,
    K_BATCH,
    K_ACCUMULATE,
    K_EXAMPLES,
    K_OPTIMIZER,
    K_VAL_SPLIT,
    K_COUNT
};
static const char *const train_keys[K_COUNT] = {
    "nnc.train.format",         "nnc.train.step",     "nnc.train.epoch",     "nnc.train.batch_index",
    "nnc.train.optimizer_step", "nnc.train.rng",      "nnc.train.seed",      "nnc.train.batch",
    "nnc.train.accumulate",     "nnc.train.examples", "nnc.train.optimizer", "nnc.train.val_split"};

/* The checkpoint's string for setting `key` (K_SEED .. K_VAL_SPLIT) of
 * this run: what save_train writes and load_train compares. */
static void cfg_value(const train_cfg *cfg, int key, char *out, size_t cap)
{
    switch (key) {
    case K_SEED: snprintf(out, cap, "%llu", (unsigned long long)cfg->seed); break;
    case K_BATCH: snprintf(out, cap, "%ld", cfg->batch); break;
    case K_ACCUMULATE: snprintf(out, cap, "%ld", cfg->accumulate); break;
    case K_EXAMPLES: snprintf(out, cap, "%lld", (long long)cfg->examples); break;
    case K_OPTIMIZER: snprintf(out, cap, "%s", cfg->optimizer); break;
    default: snprintf(out, cap, "%s", cfg->val_split ? cfg->val_split : "none"); break;
    }
}

/* Saves the model and its training state to `path`, atomically; the run
 * is at optimizer step `steps`, batch `bi` of epoch `e` next. */
static int save_train(drv *v, inst *x, const char *path, const nnc_optim *opt, const train_cfg *cfg, long steps, long e,
                      long bi)
{
    const nnc_model_desc *d = v->d;
    const nnc_model_head *head = x->m;
    size_t nt = 0;
    const nnc_tensor_info *ti = d->tensors(&nt);
    nnc_st_entry moments[2];
    size_t nm = 0;
    const float *data[2] = {opt->m, opt->v};
    const char *names[2] = {TM_M, TM_V};
    for (int k = 0; k < 2; k++)
        if (data[k])
            moments[nm++] = (nnc_st_entry){names[k], 1, {(int)d->num_params}, data[k]};
    char val[K_COUNT][80];
    const nnc_rng *r = d->rng ? d->rng(x->m) : NULL;
    snprintf(val[K_FORMAT], sizeof val[0], "%s", TRAIN_FORMAT);
    snprintf(val[K_STEP], sizeof val[0], "%ld", steps);
    snprintf(val[K_EPOCH], sizeof val[0], "%ld", e);
    snprintf(val[K_BATCH_INDEX], sizeof val[0], "%ld", bi);
    snprintf(val[K_OPT_STEP], sizeof val[0], "%ld", opt->step);
    if (r)
        snprintf(val[K_RNG], sizeof val[0], "%016llx%016llx%016llx%016llx", (unsigned long long)r->s[0],
                 (unsigned long long)r->s[1], (unsigned long long)r->s[2], (unsigned long long)r->s[3]);
    else
        snprintf(val[K_RNG], sizeof val[0], "none");
    for (int k = K_SEED; k < K_COUNT; k++)
        cfg_value(cfg, k, val[k], sizeof val[k]);
    nnc__kv kv[K_COUNT];
    for (int k = 0; k < K_COUNT; k++)
        kv[k].key = train_keys[k], kv[k].value = val[k];
    nnc__error_clear();
    errno = 0;
    return nnc__st_save_meta(path, ti, nt, head->params, head->state, moments, nm, kv, K_COUNT)
        ? report_failure(v->prog, path, "cannot save")
        : EXIT_OK;
}

static const char *meta_get(const nnc__kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(kv[i].key, key))
            return kv[i].value;
    return NULL;
}

static int parse_hex_rng(const char *s, nnc_rng *r)
{
    if (!s || strlen(s) != 64)
        return -1;
    for (int k = 0; k < 4; k++) {
        uint64_t w = 0;
        for (int i = 0; i < 16; i++) {
            const char c = s[16 * k + i];
            const int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (h < 0)
                return -1;
            w = w << 4 | (uint64_t)h;
        }
        r->s[k] = w;
    }
    return 0;
}

/* --resume: the model from `path` (done by the caller) and here its
 * training state: the moments, the counters and the model's stream,
 * after checking that the run's settings are the checkpoint's. */
static int load_train(drv *v, inst *x, const char *path, nnc_optim *opt, const train_cfg *cfg, long *steps, long *e,
                      long *bi)
{
    const nnc_model_desc *d = v->d;
    nnc__kv *kv = NULL;
    size_t nkv = 0;
    char *keep = NULL;
    const char *names[2];
    float *outs[2];
    size_t sizes[2], nm = 0;
    if (opt->m)
        names[nm] = TM_M, outs[nm] = opt->m, sizes[nm++] = d->num_params;
    if (opt->v)
        names[nm] = TM_V, outs[nm] = opt->v, sizes[nm++] = d->num_params;
    nnc__error_clear();
    const int read = nnc__st_read_state(path, &kv, &nkv, &keep, names, outs, sizes, nm);
    int rc = EXIT_OK;
    /* a checkpoint of weights alone (its tensors read, no training
     * state's format) is told apart from a damaged one */
    const char *fmt = meta_get(kv, nkv, train_keys[K_FORMAT]);
    if (read == -1 || (read != 0 && fmt)) {
        rc = file_error(v->prog, "%s", nnc_error());
        goto out;
    }
    if (!fmt || strcmp(fmt, TRAIN_FORMAT)) {
        rc = file_error(v->prog, "%s: no training state (saved without --save-every or --stop-after)", path);
        goto out;
    }
    /* the flags of the settings K_SEED .. K_VAL_SPLIT */
    static const char *const flags[K_COUNT - K_SEED] = {"--seed",   "--batch",     "--accumulate",
                                                        "examples", "--optimizer", "--val-split"};
    for (int k = K_SEED; k < K_COUNT; k++) {
        char want[80];
        cfg_value(cfg, k, want, sizeof want);
        const char *got = meta_get(kv, nkv, train_keys[k]);
        if (!got || strcmp(got, want)) {
            rc = usage_error(v->prog, d, v->sub, "--resume %s: the run was saved with %s %s, this one has %s", path,
                             flags[k - K_SEED], got ? got : "(none)", want);
            goto out;
        }
    }
    long vals[4];
    const int keys[4] = {K_STEP, K_EPOCH, K_BATCH_INDEX, K_OPT_STEP};
    for (int k = 0; k < 4; k++) {
        const char *s = meta_get(kv, nkv, train_keys[keys[k]]);
        if (!s || parse_long(s, 0, LONG_MAX, &vals[k])) {
            rc = file_error(v->prog, "%s: bad training state '%s'", path, train_keys[keys[k]]);
            goto out;
        }
    }
    const char *rs = meta_get(kv, nkv, train_keys[K_RNG]);
    nnc_rng *r = d->rng ? d->rng(x->m) : NULL;
    if (r && parse_hex_rng(rs, r)) {
        rc = file_error(v->prog, "%s: bad training state '%s'", path, train_keys[K_RNG]);
        goto out;
    }
    *steps = vals[0], *e = vals[1] > 0 ? vals[1] : 1, *bi = vals[2], opt->step = vals[3];
out:
    free(kv);
    free(keep);
    return rc;
}

static int cmd_train(drv *v)
{
    const nnc_model_desc *d = v->d;
    const char *const *o = v->opt;
    long epochs = 10, batch = 32, accumulate = 1, warmup = 0, step_size = 0, log_every = 1;
    double lr = 1e-3, momentum = 0, wd = -1, clip = 0, gamma = 0.1, val_split = 0, every = -1;
    uint64_t seed = 0;
    nnc_optim_kind kind = NNC_ADAM;
    nnc_lr_kind sched_kind = NNC_LR_CONSTANT;
    int quiet = o[O_QUIET] != NULL;

    if (o[O_EPOCHS] && parse_long(o[O_EPOCHS], 0, INT_MAX, &epochs))
        return usage_error(v->prog, d, v->sub, "--epochs: expected an integer >= 0, got '%s'", o[O_EPOCHS]);
    if (o[O_BATCH] && parse_long(o[O_BATCH], 1, INT_MAX, &batch))
        return usage_error(v->prog, d, v->sub, "--batch: expected an integer >= 1, got '%s'", o[O_BATCH]);
    if (o[O_LR] && parse_double(o[O_LR], 0, 0, &lr))
        return usage_error(v->prog, d, v->sub, "--lr: expected a number >= 0, got '%s'", o[O_LR]);
    if (o[O_MOMENTUM] && parse_double(o[O_MOMENTUM], 0, 0, &momentum))
        return usage_error(v->prog, d, v->sub, "--momentum: expected a number >= 0, got '%s'", o[O_MOMENTUM]);
    if (o[O_WD] && parse_double(o[O_WD], 0, 0, &wd))
        return usage_error(v->prog, d, v->sub, "--weight-decay: expected a number >= 0, got '%s'", o[O_WD]);
    if (o[O_CLIP] && parse_double(o[O_CLIP], 0, 1, &clip))
        return usage_error(v->prog, d, v->sub, "--clip: expected a number > 0, got '%s'", o[O_CLIP]);
    if (o[O_SEED] && parse_u64(o[O_SEED], &seed))
        return usage_error(v->prog, d, v->sub, "--seed: expected an unsigned 64-bit integer, got '%s'", o[O_SEED]);
    if (o[O_OPTIMIZER]) {
        if (!strcmp(o[O_OPTIMIZER], "sgd"))
            kind = NNC_SGD;
        else if (!strcmp(o[O_OPTIMIZER], "adam"))
            kind = NNC_ADAM;
        else if (!strcmp(o[O_OPTIMIZER], "adamw"))
            kind = NNC_ADAMW;
        else
            return usage_error(v->prog, d, v->sub, "--optimizer: expected sgd, adam or adamw, got '%s'",
                               o[O_OPTIMIZER]);
    }
    if (o[O_LR_SCHEDULE] && nnc_lr_kind_parse(o[O_LR_SCHEDULE], &sched_kind))
        return usage_error(v->prog, d, v->sub, "--lr-schedule: expected constant, step, cosine or linear, got '%s'",
                           o[O_LR_SCHEDULE]);
    if (o[O_WARMUP] && parse_long(o[O_WARMUP], 0, LONG_MAX, &warmup))
        return usage_error(v->prog, d, v->sub, "--warmup: expected a number of steps >= 0, got '%s'", o[O_WARMUP]);
    if (o[O_LR_STEP] && parse_long(o[O_LR_STEP], 1, LONG_MAX, &step_size))
        return usage_error(v->prog, d, v->sub, "--lr-step-size: expected a number of steps >= 1, got '%s'",
                           o[O_LR_STEP]);
    if (o[O_LR_GAMMA] && parse_double(o[O_LR_GAMMA], 0, 1, &gamma))
        return usage_error(v->prog, d, v->sub, "--lr-gamma: expected a number > 0, got '%s'", o[O_LR_GAMMA]);
    if ((o[O_LR_STEP] || o[O_LR_GAMMA]) && sched_kind != NNC_LR_STEP)
        return usage_error(v->prog, d, v->sub, "--lr-step-size and --lr-gamma apply to --lr-schedule step only");
    if (o[O_ACCUMULATE] && parse_long(o[O_ACCUMULATE], 1, INT_MAX, &accumulate))
        return usage_error(v->prog, d, v->sub, "--accumulate: expected an integer >= 1, got '%s'", o[O_ACCUMULATE]);
    if (o[O_VAL_SPLIT] && (parse_double(o[O_VAL_SPLIT], 0, 1, &val_split) || val_split >= 1))
        return usage_error(v->prog, d, v->sub, "--val-split: expected a fraction > 0 and < 1, got '%s'",
                           o[O_VAL_SPLIT]);
    if (o[O_LOG] && nnc__log_kind(o[O_LOG]) < 0)
        return usage_error(v->prog, d, v->sub, "--log: expected a file name ending in .csv or .jsonl, got '%s'",
                           o[O_LOG]);
    if (o[O_LOG_EVERY] && parse_long(o[O_LOG_EVERY], 1, LONG_MAX, &log_every))
        return usage_error(v->prog, d, v->sub, "--log-every: expected a number of steps >= 1, got '%s'",
                           o[O_LOG_EVERY]);
    if (o[O_PROGRESS] && parse_double(o[O_PROGRESS], 0, 0, &every))
        return usage_error(v->prog, d, v->sub, "--progress: expected a number of seconds >= 0, got '%s'",
                           o[O_PROGRESS]);
    long save_every = 0;
    if (o[O_SAVE_EVERY] && parse_long(o[O_SAVE_EVERY], 1, LONG_MAX, &save_every))
        return usage_error(v->prog, d, v->sub, "--save-every: expected a number of steps >= 1, got '%s'",
                           o[O_SAVE_EVERY]);
    long stop_after = 0;
    if (o[O_STOP_AFTER] && parse_long(o[O_STOP_AFTER], 1, LONG_MAX, &stop_after))
        return usage_error(v->prog, d, v->sub, "--stop-after: expected a number of steps >= 1, got '%s'",
                           o[O_STOP_AFTER]);
    if (o[O_RESUME] && o[O_WEIGHTS])
        return usage_error(v->prog, d, v->sub, "--resume and --weights: a resumed run starts from its checkpoint");
    if (momentum != 0 && kind != NNC_SGD)
        return usage_error(v->prog, d, v->sub, "--momentum applies to --optimizer sgd only");
    int have_val = o[O_VAL_INPUTS] || o[O_VAL_LABELS];
    if (have_val && !o[O_VAL_INPUTS])
        return usage_error(v->prog, d, v->sub, "--val-labels needs --val-inputs");
    if (have_val && d->num_labels > 0 && !o[O_VAL_LABELS])
        return usage_error(v->prog, d, v->sub, "--val-inputs needs --val-labels");
    if (have_val && o[O_VAL_SPLIT])
        return usage_error(v->prog, d, v->sub, "--val-split and --val-inputs: give one validation set");
    if (v->parse_only)
        return EXIT_OK;
    if (check_outputs(v))
        return EXIT_FILE;

    int rc;
    dset tr = {0}, va = {0};
    inst x = {0};
    nnc_optim opt;
    int opt_inited = 0;
    void **gbuf = NULL;
    const void **ptrs = NULL;
    uint32_t *perm = NULL;
    float *mtmp = NULL, *acc = NULL;
    double *mtrain = NULL, *mval = NULL, *row = NULL;
    float *frozen_copy = NULL;
    const char **cols = NULL;
    char **colbuf = NULL;
    unsigned char *present = NULL;
    int ncols = 0;
    nnc__log lg = {0};

    rc = dset_load(v, &tr, o[O_INPUTS], 1, o[O_LABELS], "inputs", "labels");
    if (rc)
        goto out;
    if (have_val) {
        rc = dset_load(v, &va, o[O_VAL_INPUTS], 1, o[O_VAL_LABELS], "val-inputs", "val-labels");
        if (rc)
            goto out;
    }
    if (o[O_VAL_SPLIT]) {
        const int64_t nval = (int64_t)(val_split * (double)tr.n);
        if (nval < 1 || nval >= tr.n) {
            rc = usage_error(v->prog, d, v->sub,
                             "--val-split %s of %lld examples holds out %lld: leave at least one on each side",
                             o[O_VAL_SPLIT], (long long)tr.n, (long long)nval);
            goto out;
        }
        rc = dset_split(v, &tr, &va, nval, seed);
        if (rc)
            goto out;
        have_val = 1;
    }
    const int64_t n_ex = tr.n;
    int max_batch = (int)(batch < n_ex ? batch : n_ex);
    /* several processes: each takes a share of every batch, none empty */
    const int nproc = nnc_dist_size();
    if (nproc > 1) {
        const int64_t tail = n_ex % max_batch;
        if (max_batch < nproc || (tail && tail < nproc)) {
            rc = usage_error(v->prog, d, v->sub,
                             "--batch %d over %lld examples makes a batch of %lld, fewer than the %d processes: each "
                             "needs at least one example of every batch",
                             max_batch, (long long)n_ex, (long long)(max_batch < nproc ? max_batch : tail), nproc);
            goto out;
        }
        if (have_val && chunks_of(va.n, (max_batch + nproc - 1) / nproc) < 0) {
            rc = usage_error(v->prog, d, v->sub,
                             "the validation set's %lld examples cannot be split into batches of at least one example "
                             "for each of the %d processes",
                             (long long)va.n, nproc);
            goto out;
        }
    }
    const int local_batch = (max_batch + nproc - 1) / nproc; /* the most one process takes */
    /* batches per epoch, and optimizer steps: one per `accumulate`
     * batches, the epoch's last taking what is left */
    const long nbatch = (long)((n_ex + max_batch - 1) / max_batch);
    const long per_epoch = (nbatch + accumulate - 1) / accumulate;
    const nnc_lr_schedule sched = {sched_kind, lr, warmup, per_epoch * epochs, step_size ? step_size : per_epoch,
                                   gamma};
    rc = model_create(v, &x, local_batch, seed);
    if (rc)
        goto out;
    if (o[O_WEIGHTS] || o[O_RESUME]) {
        rc = model_load(v, &x, o[O_WEIGHTS] ? o[O_WEIGHTS] : o[O_RESUME]);
        if (rc)
            goto out;
    }
    nnc__error_clear();
    if (nnc_optim_init(&opt, kind, d->num_params, (float)lr) != 0) {
        rc = file_error(v->prog, "%s", nnc_error());
        goto out;
    }
    opt_inited = 1;
    opt.momentum = (float)momentum;
    if (wd >= 0)
        opt.weight_decay = (float)wd;
    const train_cfg cfg = {seed, batch, accumulate, n_ex, o[O_OPTIMIZER] ? o[O_OPTIMIZER] : "adam", o[O_VAL_SPLIT]};
    long e0 = 1, b0 = 0, steps = 0; /* where the run starts: epoch, batch, optimizer steps done */
    if (o[O_RESUME]) {
        rc = load_train(v, &x, o[O_RESUME], &opt, &cfg, &steps, &e0, &b0);
        if (rc)
            goto out;
    }

    /* Everything the loop needs, allocated up front: the loop itself never
     * allocates. */
    int na = tr.count > va.count ? tr.count : va.count;
    gbuf = calloc((size_t)tr.count + 1, sizeof *gbuf);
    ptrs = calloc((size_t)na + 1, sizeof *ptrs);
    perm = malloc((size_t)n_ex * sizeof *perm);
    mtmp = calloc((size_t)d->num_metrics + 1, sizeof *mtmp);
    mtrain = calloc((size_t)d->num_metrics + 1, sizeof *mtrain);
    mval = calloc((size_t)d->num_metrics + 1, sizeof *mval);
    if (!gbuf || !ptrs || !perm || !mtmp || !mtrain || !mval) {
        rc = file_error(v->prog, "out of memory");
        goto out;
    }
    if (accumulate > 1 && !(acc = malloc((d->num_params ? d->num_params : 1) * sizeof *acc))) {
        rc = file_error(v->prog, "out of memory for --accumulate");
        goto out;
    }
    for (int i = 0; i < tr.count; i++) {
        if (!tr.stride[i])
            continue;
        gbuf[i] = malloc((size_t)local_batch * tr.ex_bytes[i]);
        if (!gbuf[i]) {
            rc = file_error(v->prog, "out of memory for a batch of %d", max_batch);
            goto out;
        }
    }
    for (int64_t i = 0; i < n_ex; i++)
        perm[i] = (uint32_t)i;

    /* the log's columns: step, epoch, loss, lr, examples/s, the summaries,
     * and (where there is a validation set) val_loss and val_<metric> */
    enum { C_STEP, C_EPOCH, C_LOSS, C_LR, C_RATE, C_FIXED };
    const int c_val = C_FIXED + d->num_summaries;
    ncols = c_val + (have_val ? 1 + d->num_metrics : 0);
    cols = calloc((size_t)ncols, sizeof *cols);
    colbuf = calloc((size_t)ncols, sizeof *colbuf);
    row = calloc((size_t)ncols, sizeof *row);
    present = calloc((size_t)ncols, 1);
    if (!cols || !colbuf || !row || !present) {
        rc = file_error(v->prog, "out of memory");
        goto out;
    }
    {
        static const char *const fixed[C_FIXED] = {"step", "epoch", "loss", "lr", "examples_per_s"};
        for (int i = 0; i < C_FIXED; i++)
            cols[i] = fixed[i];
        for (int k = 0; k < d->num_summaries; k++)
            cols[C_FIXED + k] = d->summary_names[k];
        if (have_val) {
            cols[c_val] = "val_loss";
            for (int k = 0; k < d->num_metrics; k++) {
                const size_t len = strlen(d->metric_names[k]) + 5;
                if (!(colbuf[c_val + 1 + k] = malloc(len))) {
                    rc = file_error(v->prog, "out of memory");
                    goto out;
                }
                snprintf(colbuf[c_val + 1 + k], len, "val_%s", d->metric_names[k]);
                cols[c_val + 1 + k] = colbuf[c_val + 1 + k];
            }
        }
    }
    if (o[O_LOG] && is_root() && nnc__log_open(&lg, o[O_LOG], cols, ncols, o[O_RESUME] != NULL) != 0) {
        rc = file_error(v->prog, "%s", nnc_error());
        goto out;
    }

    /* Frozen params are never updated: weight decay would still move them
     * (their gradient is 0), so their values are put back after each step. */
    size_t ntensors = 0, nfrozen = 0;
    const nnc_tensor_info *ti = d->tensors(&ntensors);
    for (size_t k = 0; k < ntensors; k++)
        if (ti[k].trainable && ti[k].frozen)
            nfrozen += ti[k].size;
    if (nfrozen) {
        frozen_copy = malloc(nfrozen * sizeof *frozen_copy);
        if (!frozen_copy) {
            rc = file_error(v->prog, "out of memory");
            goto out;
        }
        size_t at = 0;
        for (size_t k = 0; k < ntensors; k++)
            if (ti[k].trainable && ti[k].frozen) {
                memcpy(frozen_copy + at, ((nnc_model_head *)x.m)->params + ti[k].offset, ti[k].size * sizeof(float));
                at += ti[k].size;
            }
    }

    progress pr = {0, 0, 0, 0};
    pr.tty = isatty(fileno(stderr));
    pr.every = quiet || !is_root() ? 0 : every >= 0 ? every : pr.tty ? 1 : 10;
    nnc_rng shuffle;
    nnc_rng_seed(&shuffle, seed ^ SHUFFLE_SALT);
    nnc_model_head *head = x.m;
    double t_row = now_seconds(), ex_row = 0;
    long pos_e = epochs + 1, pos_b = 0; /* where the saved run continues: after the last epoch, or --stop-after's */
    for (long e = 1; e <= epochs; e++) {
        double t0 = now_seconds();
        pr.last = t0;
        shuffle_perm(&shuffle, perm, n_ex);
        if (e < e0) /* resumed: the order of the epochs done, replayed */
            continue;
        double sum = 0;
        long b = e == e0 ? b0 : 0;
        while (b < nbatch) {
            /* one optimizer step: `accumulate` batches (fewer at the
             * epoch's end), their gradients averaged by the examples each
             * mean is over, as one batch that large would */
            const long group = nbatch - b < accumulate ? nbatch - b : accumulate;
            double lsum = 0, wsum = 0;
            for (long k = 0; k < group; k++, b++) {
                const int64_t s = b * (int64_t)max_batch;
                int n = (int)(n_ex - s < max_batch ? n_ex - s : max_batch), mine;
                int64_t off;
                share(n, &off, &mine); /* this process's rows of the batch */
                for (int i = 0; i < tr.count; i++) {
                    if (!tr.stride[i]) {
                        ptrs[i] = tr.arr[i].data;
                        continue;
                    }
                    const size_t ex = tr.ex_bytes[i];
                    const char *src = tr.arr[i].data;
                    char *dst = gbuf[i];
                    for (int r = 0; r < mine; r++)
                        memcpy(dst + (size_t)r * ex, src + (size_t)perm[s + off + r] * ex, ex);
                    ptrs[i] = dst;
                }
                float loss = d->train_forward(x.m, mine, ptrs, ptrs + tr.num_inputs);
                d->backward(x.m);
                if ((rc = numerics_failed(v->prog, d, x.m)))
                    goto out;
                const double w = group > 1 ? perm_weight(&tr, perm, s, n) : n;
                if (group > 1) {
                    const float fw = (float)w;
                    for (size_t q = 0; q < d->num_params; q++)
                        acc[q] = k ? acc[q] + fw * head->grads[q] : fw * head->grads[q];
                }
                lsum += (double)loss * w, wsum += w;
                sum += (double)loss * n;
                ex_row += n;
            }
            if (group > 1) {
                const float inv = wsum > 0 ? (float)(1.0 / wsum) : 0.0f;
                for (size_t q = 0; q < d->num_params; q++)
                    head->grads[q] = acc[q] * inv;
            }
            opt.lr = (float)nnc_lr_at(&sched, steps);
            if (clip > 0)
                nnc_clip_grad_norm(head->grads, d->num_params, (float)clip);
            nnc_optim_step(&opt, head->params, head->grads);
            for (size_t k = 0, at = 0; nfrozen && k < ntensors; k++)
                if (ti[k].trainable && ti[k].frozen) {
                    memcpy(head->params + ti[k].offset, frozen_copy + at, ti[k].size * sizeof(float));
                    at += ti[k].size;
                }
            steps++;
            const double step_loss = wsum > 0 ? lsum / wsum : NAN, now = now_seconds();
            const int last = b == nbatch;
            if (lg.f && (steps % log_every == 0 || last)) {
                memset(present, 0, (size_t)ncols);
                row[C_STEP] = (double)steps, row[C_EPOCH] = (double)e, row[C_LOSS] = step_loss;
                row[C_LR] = (double)opt.lr, row[C_RATE] = now > t_row ? ex_row / (now - t_row) : 0;
                for (int k = 0; k < d->num_summaries; k++)
                    row[C_FIXED + k] = (double)d->summaries(x.m)[k];
                memset(present, 1, (size_t)c_val);
                if (last && have_val) { /* the epoch's validation, on its last row */
                    eval_set(v, &x, &va, local_batch, ptrs, mtmp, &row[c_val], mval);
                    if ((rc = numerics_failed(v->prog, d, x.m)))
                        goto out;
                    for (int k = 0; k < d->num_metrics; k++)
                        row[c_val + 1 + k] = mval[k];
                    memset(present + c_val, 1, (size_t)(ncols - c_val));
                }
                nnc__log_row(&lg, row, present);
                t_row = now_seconds(), ex_row = 0;
            }
            if (save_every && steps % save_every == 0 && is_root()) { /* the state after this step: what comes next */
                rc = save_train(v, &x, o[O_SAVE], &opt, &cfg, steps, last ? e + 1 : e, last ? 0 : b);
                if (rc)
                    goto out;
            }
            if (stop_after && steps >= stop_after) { /* as if stopped here: resumable */
                pos_e = last ? e + 1 : e, pos_b = last ? 0 : b;
                break;
            }
            if (!last)
                progress_show(&pr, e, epochs, b, nbatch, step_loss, t0, now);
        }
        if (pos_e <= epochs) {
            progress_clear(&pr);
            break;
        }
        progress_clear(&pr);
        double dt = now_seconds() - t0;
        double vloss = 0;
        if (have_val) {
            if (lg.f) /* evaluated for the log's row already */
                vloss = row[c_val];
            else
                eval_set(v, &x, &va, local_batch, ptrs, mtmp, &vloss, mval);
            if ((rc = numerics_failed(v->prog, d, x.m)))
                goto out;
        }
        if (!quiet && is_root()) {
            fprintf(stderr, "epoch %ld/%ld  step %ld  loss %.6g  lr %.4g  %.0f ex/s", e, epochs, steps,
                    sum / (double)n_ex, (double)opt.lr, dt > 0 ? (double)n_ex / dt : 0.0);
            for (int k = 0; k < d->num_summaries; k++) /* the epoch's last step */
                fprintf(stderr, "  %s %.6g", d->summary_names[k], (double)d->summaries(x.m)[k]);
            if (have_val) {
                fprintf(stderr, "  val_loss %.6g", vloss);
                for (int k = 0; k < d->num_metrics; k++)
                    fprintf(stderr, "  val_%s %.6g", d->metric_names[k], mval[k]);
            }
            fprintf(stderr, "\n");
        }
    }

    double loss_train, loss_val = 0;
    const double waited = nnc_dist_wait_seconds(); /* training's, not eval's */
    eval_set(v, &x, &tr, local_batch, ptrs, mtmp, &loss_train, mtrain);
    if ((rc = numerics_failed(v->prog, d, x.m)))
        goto out;
    if (have_val)
        eval_set(v, &x, &va, local_batch, ptrs, mtmp, &loss_val, mval);
    if ((rc = numerics_failed(v->prog, d, x.m)))
        goto out;
    /* the weights; with --save-every, --stop-after or --resume the training
     * state too, so that the run can be continued (for more epochs) */
    if (!is_root()) {
        /* rank 0 writes the files */
    } else if (save_every || o[O_RESUME] || stop_after) {
        rc = save_train(v, &x, o[O_SAVE], &opt, &cfg, steps, pos_e, pos_b);
        if (rc)
            goto out;
    } else {
        nnc__error_clear();
        errno = 0;
        if (d->save(x.m, o[O_SAVE]) != 0) {
            rc = report_failure(v->prog, o[O_SAVE], "cannot save");
            goto out;
        }
    }
    if (lg.f && nnc__log_close(&lg) != 0) {
        rc = file_error(v->prog, "%s: cannot write the log", o[O_LOG]);
        goto out;
    }
    if (is_root()) {
        if (nproc > 1 && !quiet)
            fprintf(stderr, "%d processes: %.3f s waiting for the gradients' sums\n", nproc, waited);
        print_results(d, "", loss_train, mtrain);
        if (have_val)
            print_results(d, "val_", loss_val, mval);
    }
    rc = EXIT_OK;
out:
    nnc__log_close(&lg);
    if (gbuf)
        for (int i = 0; i < tr.count; i++)
            free(gbuf[i]);
    free(gbuf);
    free(ptrs);
    free(perm);
    free(mtmp);
    free(acc);
    free(mtrain);
    free(mval);
    free(row);
    free(present);
    free(cols);
    if (colbuf)
        for (int i = 0; i < ncols; i++)
            free(colbuf[i]);
    free(colbuf);
    free(frozen_copy);
    if (opt_inited)
        nnc_optim_free(&opt);
    model_free(v, &x);
    dset_free(&tr);
    dset_free(&va);
    return rc;
}

static int cmd_eval(drv *v)
{
    const nnc_model_desc *d = v->d;
    dset ds = {0};
    inst x = {0};
    const void **ptrs = NULL;
    float *tmp = NULL;
    double *metrics = NULL;
    int rc = dset_load(v, &ds, v->opt[O_INPUTS], 1, v->opt[O_LABELS], "inputs", "labels");
    if (rc)
        goto out;
    const int nproc = nnc_dist_size();
    int max_batch = (int)(ds.n < CHUNK ? ds.n : CHUNK);
    max_batch = (max_batch + nproc - 1) / nproc; /* per process */
    if (chunks_of(ds.n, max_batch) < 0) {
        rc = usage_error(v->prog, d, v->sub, "%lld examples are fewer than the %d processes", (long long)ds.n, nproc);
        goto out;
    }
    rc = model_create(v, &x, max_batch, 0);
    if (rc)
        goto out;
    rc = model_load(v, &x, v->opt[O_WEIGHTS]);
    if (rc)
        goto out;
    ptrs = calloc((size_t)ds.count + 1, sizeof *ptrs);
    tmp = calloc((size_t)d->num_metrics + 1, sizeof *tmp);
    metrics = calloc((size_t)d->num_metrics + 1, sizeof *metrics);
    if (!ptrs || !tmp || !metrics) {
        rc = file_error(v->prog, "out of memory");
        goto out;
    }
    double loss;
    eval_set(v, &x, &ds, max_batch, ptrs, tmp, &loss, metrics);
    if ((rc = numerics_failed(v->prog, d, x.m)))
        goto out;
    if (is_root())
        print_results(d, "", loss, metrics);
    rc = EXIT_OK;
out:
    free(ptrs);
    free(tmp);
    free(metrics);
    model_free(v, &x);
    dset_free(&ds);
    return rc;
}

static int cmd_predict(drv *v)
{
    const nnc_model_desc *d = v->d;
    const nnc_io_desc *od = &d->output;
    dset ds = {0};
    inst x = {0};
    const void **ptrs = NULL;
    char *out = NULL, *mine = NULL;
    if (check_outputs(v))
        return EXIT_FILE;
    int rc = dset_load(v, &ds, v->opt[O_INPUTS], 0, NULL, "inputs", "labels");
    if (rc)
        goto out;
    /* An output without a batch dim cannot be assembled from chunks: run
     * the whole file at once then. */
    int chunk = od->batched ? CHUNK : INT_MAX;
    const int nproc = nnc_dist_size();
    int max_batch = (int)(ds.n < chunk ? ds.n : chunk);
    max_batch = (max_batch + nproc - 1) / nproc; /* per process */
    if (!od->batched)
        max_batch = (int)((ds.n + nproc - 1) / nproc); /* the whole file, in one pass */
    if (chunks_of(ds.n, max_batch) < 0) {
        rc = usage_error(v->prog, d, v->sub, "%lld examples are fewer than the %d processes", (long long)ds.n, nproc);
        goto out;
    }
    rc = model_create(v, &x, max_batch, 0);
    if (rc)
        goto out;
    rc = model_load(v, &x, v->opt[O_WEIGHTS]);
    if (rc)
        goto out;
    int64_t shape[NNC_MAX_DIMS];
    size_t ex = 4;
    for (int k = 0; k < od->ndim; k++) {
        shape[k] = (k == 0 && od->batched) ? ds.n : od->shape[k];
        if (!(k == 0 && od->batched))
            ex *= (size_t)od->shape[k];
    }
    size_t total = od->batched ? ex * (size_t)ds.n : ex;
    ptrs = calloc((size_t)ds.count + 1, sizeof *ptrs);
    out = malloc(total ? total : 1);
    /* several processes: each computes its rows, which rank 0 gathers */
    mine = nproc > 1 && od->batched ? malloc((size_t)max_batch * ex) : NULL;
    if (!ptrs || !out || (nproc > 1 && od->batched && !mine)) {
        rc = file_error(v->prog, "out of memory for the output");
        goto out;
    }
    const int64_t k = chunks_of(ds.n, max_batch);
    for (int64_t c = 0; c < k; c++) {
        int64_t s, len, off;
        int n;
        chunk_at(ds.n, max_batch, k, c, &s, &len);
        share(len, &off, &n);
        slice(&ds, s + off, ptrs);
        char *to = out + (od->batched ? (size_t)s * ex : 0);
        d->forward(x.m, n, ptrs, mine ? mine : to);
        if ((rc = numerics_failed(v->prog, d, x.m)))
            goto out;
        if (mine)
            nnc_dist_gather(mine, (int64_t)((size_t)n * ex), to);
    }
    if (!is_root()) {
        rc = EXIT_OK;
        goto out;
    }
    if (nnc_npy_write(v->opt[O_OUTPUT], od->dtype, od->ndim, shape, out) != 0) {
        rc = file_error(v->prog, "%s", nnc_error());
        goto out;
    }
    rc = EXIT_OK;
out:
    free(ptrs);
    free(out);
    free(mine);
    model_free(v, &x);
    dset_free(&ds);
    return rc;
}

static int cmd_grad(drv *v)
{
    const nnc_model_desc *d = v->d;
    dset ds = {0};
    inst x = {0};
    const void **ptrs = NULL;
    nnc_st_entry *e = NULL;
    uint64_t seed = 0;
    if (v->opt[O_SEED] && parse_u64(v->opt[O_SEED], &seed))
        return usage_error(v->prog, d, v->sub, "--seed: expected an unsigned 64-bit integer, got '%s'", v->opt[O_SEED]);
    if (v->parse_only)
        return EXIT_OK;
    if (check_outputs(v))
        return EXIT_FILE;
    int rc = dset_load(v, &ds, v->opt[O_INPUTS], 1, v->opt[O_LABELS], "inputs", "labels");
    if (rc)
        goto out;
    int64_t off;
    int mine;
    share(ds.n, &off, &mine); /* the batch is the whole file */
    if (mine < 1) {
        rc = usage_error(v->prog, d, v->sub, "%lld examples are fewer than the %d processes", (long long)ds.n,
                         nnc_dist_size());
        goto out;
    }
    rc = model_create(v, &x, mine, seed);
    if (rc)
        goto out;
    rc = model_load(v, &x, v->opt[O_WEIGHTS]);
    if (rc)
        goto out;
    size_t nt = 0;
    const nnc_tensor_info *t = d->tensors(&nt);
    ptrs = calloc((size_t)ds.count + 1, sizeof *ptrs);
    e = calloc(nt + 1, sizeof *e);
    if (!ptrs || !e) {
        rc = file_error(v->prog, "out of memory");
        goto out;
    }
    slice(&ds, off, ptrs);
    float loss = d->train_forward(x.m, mine, ptrs, ptrs + ds.num_inputs);
    d->backward(x.m);
    if ((rc = numerics_failed(v->prog, d, x.m)))
        goto out;
    const nnc_model_head *head = x.m;
    size_t ne = 0;
    for (size_t i = 0; i < nt; i++) {
        if (!t[i].trainable)
            continue;
        e[ne].name = t[i].name;
        e[ne].ndim = t[i].ndim;
        memcpy(e[ne].shape, t[i].shape, sizeof e[ne].shape);
        e[ne].data = head->grads + t[i].offset;
        ne++;
    }
    e[ne].name = "loss";
    e[ne].ndim = 0;
    e[ne].data = &loss;
    ne++;
    if (is_root() && nnc_st_write(v->opt[O_OUTPUT], e, ne) != 0) {
        rc = file_error(v->prog, "%s", nnc_error());
        goto out;
    }
    rc = EXIT_OK;
out:
    free(ptrs);
    free(e);
    model_free(v, &x);
    dset_free(&ds);
    return rc;
}

/* ---- entry point ------------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int drv_main(int argc, char **argv, const nnc_model_desc *desc, int parse_only)
{
    drv v;
    memset(&v, 0, sizeof v);
    v.d = desc;
    v.parse_only = parse_only;
    v.prog = argc > 0 && argv[0] && argv[0][0] ? base_name(argv[0]) : desc->name;

    if (argc < 2)
        return usage_error(v.prog, desc, 0, "missing subcommand");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout, v.prog, desc, 0);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "info"))
        v.sub = SUB_INFO;
    else if (!strcmp(cmd, "train"))
        v.sub = SUB_TRAIN;
    else if (!strcmp(cmd, "eval"))
        v.sub = SUB_EVAL;
    else if (!strcmp(cmd, "predict"))
        v.sub = SUB_PREDICT;
    else if (!strcmp(cmd, "grad"))
        v.sub = SUB_GRAD;
    else
        return usage_error(v.prog, desc, 0, "unknown subcommand '%s'", cmd);

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout, v.prog, desc, v.sub);
            return EXIT_OK;
        }
        if (strncmp(a, "--", 2) != 0 || !a[2])
            return usage_error(v.prog, desc, v.sub, "%s: unexpected argument '%s'", cmd, a);
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int id = -1;
        for (int k = 0; k < O_COUNT; k++)
            if (strlen(optdefs[k].name) == len && !strncmp(optdefs[k].name, name, len))
                id = k;
        if (id < 0 || !(optdefs[id].subs & v.sub))
            return usage_error(v.prog, desc, v.sub, "%s: unknown option '--%.*s'", cmd, (int)len, name);
        if ((id == O_LABELS || id == O_VAL_LABELS) && desc->num_labels == 0)
            return usage_error(v.prog, desc, v.sub, "%s: the model has no labels", cmd);
        if (v.opt[id])
            return usage_error(v.prog, desc, v.sub, "%s: option '--%s' given twice", cmd, optdefs[id].name);
        if (!optdefs[id].takes_value) {
            if (eq)
                return usage_error(v.prog, desc, v.sub, "%s: option '--%s' takes no value", cmd, optdefs[id].name);
            v.opt[id] = "";
        } else if (eq) {
            v.opt[id] = eq + 1;
        } else if (i + 1 < argc) {
            v.opt[id] = argv[++i];
        } else {
            return usage_error(v.prog, desc, v.sub, "%s: option '--%s' needs a value", cmd, optdefs[id].name);
        }
    }

    if (!desc->has_loss && (v.sub & (SUB_TRAIN | SUB_EVAL | SUB_GRAD)))
        return usage_error(v.prog, desc, 0, "%s: model '%s' has no loss: only info and predict are available", cmd,
                           desc->name);

    /* Required options per subcommand. */
    static const struct {
        unsigned subs;
        int id;
    } required[] = {
        {SUB_TRAIN | SUB_EVAL | SUB_PREDICT | SUB_GRAD, O_INPUTS},
        {SUB_TRAIN | SUB_EVAL | SUB_GRAD, O_LABELS},
        {SUB_EVAL | SUB_PREDICT | SUB_GRAD, O_WEIGHTS},
        {SUB_TRAIN, O_SAVE},
        {SUB_PREDICT | SUB_GRAD, O_OUTPUT},
    };
    for (size_t k = 0; k < sizeof required / sizeof required[0]; k++) {
        int id = required[k].id;
        if (!(required[k].subs & v.sub) || v.opt[id])
            continue;
        if (id == O_LABELS && desc->num_labels == 0)
            continue;
        return usage_error(v.prog, desc, v.sub, "%s: missing --%s", cmd, optdefs[id].name);
    }
    for (int id = 0; id < O_COUNT; id++)
        if (optdefs[id].takes_value && v.opt[id] && !v.opt[id][0])
            return usage_error(v.prog, desc, v.sub, "%s: option '--%s' has an empty value", cmd, optdefs[id].name);

    /* the threads: every core the process may use (or OMP_NUM_THREADS)
     * unless --threads says; the results are the same for any count */
    long threads = 0; /* 0: the default */
    if (v.opt[O_THREADS] && parse_long(v.opt[O_THREADS], 1, NNC_MAX_THREADS, &threads))
        return usage_error(v.prog, desc, v.sub, "--threads: expected an integer from 1 to %d, got '%s'",
                           NNC_MAX_THREADS, v.opt[O_THREADS]);
    if (parse_only && !(v.sub & (SUB_TRAIN | SUB_GRAD)))
        return EXIT_OK; /* train and grad check their own options first */
    if (!parse_only)
        nnc_set_threads((int)threads);

    switch (v.sub) {
    case SUB_INFO: return is_root() ? cmd_info(&v) : EXIT_OK;
    case SUB_TRAIN: return cmd_train(&v);
    case SUB_EVAL: return cmd_eval(&v);
    case SUB_PREDICT: return cmd_predict(&v);
    case SUB_GRAD: return cmd_grad(&v);
    }
    return EXIT_USAGE;
}

/* Under mpirun: every process runs the same command; a failure on any of
 * them (a file only one could not read, say) ends them all, since the
 * others would wait for it forever. */
int nnc_driver_main(int argc, char **argv, const nnc_model_desc *desc)
{
    if (nnc_dist_init(&argc, &argv) != 0) {
        fprintf(stderr, "%s: %s\n", argc > 0 ? argv[0] : desc->name, nnc_error());
        return EXIT_FILE;
    }
    int rc = drv_main(argc, argv, desc, 0);
    if (rc != EXIT_OK && nnc_dist_size() > 1) {
        fflush(NULL);
        nnc_dist_abort(rc);
    }
    nnc_dist_finalize();
    return rc;
}

int nnc__drv_parse(int argc, char **argv, const nnc_model_desc *desc) { return drv_main(argc, argv, desc, 1); }
