/* emit_header.c — the model's header, <prefix>.h (emit_*): the hparams
 * as an enum, the params and the state as nested structs that mirror the
 * model's fields (an array for a sequence of items of the same layout;
 * members by their C names, cnames.c, decided in model.c),
 * the model's struct and the API's declarations, the model's `///`
 * comments as doc comments.  The C file and the driver share the API's
 * signatures and parameter types from here.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "emitter.h"

/* ---- the API's signatures -------------------------------------------------------- */

const char *emit_model_type(Emitter *e) { return e->m->prefix; }

/* `const float (*x)[8][8]` for an input [N, 8, 8]. */
/* With name "", the type alone, for a cast: `const float (*)[64]`. */
const char *emit_io_decl(Emitter *e, const IoDecl *io, int is_const, const char *name)
{
    const char *ty = io->dt == DT_I32 ? "int32_t" : e->real;
    const char *dims = "";
    for (int i = 1; i < io->shape.nd; i++)
        dims = emit_fmt("%s[%lld]", dims, (long long)io->shape.d[i]);
    if (!*dims)
        return emit_fmt("%s%s *%s", is_const ? "const " : "", ty, name);
    return emit_fmt("%s%s (*%s)%s", is_const ? "const " : "", ty, name, dims);
}

static const char *io_param(Emitter *e, const IoDecl *io, int is_const)
{
    return emit_io_decl(e, io, is_const, io->cname);
}

static const char *out_param(Emitter *e)
{
    const IrNode *o = &e->m->infer->nodes[e->m->infer->output];
    IoDecl io;
    memset(&io, 0, sizeof io);
    io.dt = o->dt; /* i32 in a model without a loss (model.c) */
    io.shape = o->shape;
    return emit_io_decl(e, &io, 0, "out");
}

const char *emit_sig_inputs(Emitter *e, int labels)
{
    const char *s = "";
    for (int i = 0; i < e->m->ninputs; i++)
        s = emit_fmt("%s, %s", s, io_param(e, &e->m->inputs[i], 1));
    for (int i = 0; labels && i < e->m->nlabels; i++)
        s = emit_fmt("%s, %s", s, io_param(e, &e->m->labels[i], 1));
    return s;
}

const char *emit_sig_forward(Emitter *e)
{
    return emit_fmt("void %s_forward(%s *m, int n%s, %s)", e->m->prefix, emit_model_type(e), emit_sig_inputs(e, 0),
                    out_param(e));
}

const char *emit_sig_train(Emitter *e)
{
    return emit_fmt("%s %s_train_forward(%s *m, int n%s)", e->real, e->m->prefix, emit_model_type(e),
                    emit_sig_inputs(e, 1));
}

const char *emit_sig_eval(Emitter *e)
{
    return emit_fmt("void %s_eval(%s *m, int n%s, %s *loss, %s *metrics)", e->m->prefix, emit_model_type(e),
                    emit_sig_inputs(e, 1), e->real, e->real);
}

/* ---- the structs ----------------------------------------------------------------- */

static int is_index(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

static char *struct_body(Emitter *e, const Tensor *ts, int lo, int hi, int depth, int indent);

static void doc_comment(FILE *f, const char *doc, int indent)
{
    if (!doc)
        return;
    fprintf(f, "%*s/** ", indent, "");
    for (const char *p = doc; *p; p++) {
        if (*p == '\n')
            fprintf(f, "\n%*s * ", indent, "");
        else if (*p == '*' && p[1] == '/')
            fputc('.', f);
        else
            fputc(*p, f);
    }
    fprintf(f, " */\n");
}

/* The `///` comment of the field whose path is t's first depth+1 parts. */
static const char *field_doc(Emitter *e, const Tensor *t, int depth)
{
    const char *path = t->parts[0];
    for (int k = 1; k <= depth; k++)
        path = emit_fmt("%s.%s", path, t->parts[k]);
    for (int r = 0; r < e->m->nrows; r++)
        if (!strcmp(e->m->rows[r].path, path))
            return e->m->rows[r].doc;
    return NULL;
}

/* Members for tensors [lo, hi) sharing parts[0..depth). */
static char *struct_body(Emitter *e, const Tensor *ts, int lo, int hi, int depth, int indent)
{
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    for (int i = lo; i < hi;) {
        const Tensor *t = &ts[i];
        const char *name = t->parts[depth], *cname = t->cparts[depth];
        if (t->npart == depth + 1) {
            doc_comment(f, t->doc, indent);
            fprintf(f, "%*s%s %s", indent, "", t->counter ? "int64_t" : e->real, cname);
            for (int k = 0; k < t->shape.nd; k++)
                fprintf(f, "[%lld]", (long long)t->shape.d[k]);
            fprintf(f, ";\n");
            i++;
            continue;
        }
        int j = i;
        while (j < hi && ts[j].npart > depth + 1 && !strcmp(ts[j].parts[depth], name))
            j++;
        if (is_index(ts[i].parts[depth + 1])) {
            /* a sequence: an array when every copy has the same layout */
            int nitems = 0, contiguous = 1, same = 1;
            char *first = NULL;
            for (int a = i; a < j;) {
                int b = a;
                while (b < j && !strcmp(ts[b].parts[depth + 1], ts[a].parts[depth + 1]))
                    b++;
                char *body = struct_body(e, ts, a, b, depth + 2, indent + 4);
                if (atoi(ts[a].parts[depth + 1]) != nitems)
                    contiguous = 0;
                if (!first)
                    first = body;
                else {
                    if (strcmp(first, body))
                        same = 0;
                    free(body);
                }
                nitems++;
                a = b;
            }
            doc_comment(f, field_doc(e, t, depth), indent);
            if (contiguous && same) {
                fprintf(f, "%*sstruct {\n%s%*s} %s[%d];\n", indent, "", first, indent, "", cname, nitems);
            } else {
                fprintf(f, "%*sstruct {\n", indent, "");
                for (int a = i; a < j;) {
                    int b = a;
                    while (b < j && !strcmp(ts[b].parts[depth + 1], ts[a].parts[depth + 1]))
                        b++;
                    char *body = struct_body(e, ts, a, b, depth + 2, indent + 8);
                    fprintf(f, "%*sstruct {\n%s%*s} _%s;\n", indent + 4, "", body, indent + 4, "",
                            ts[a].parts[depth + 1]);
                    free(body);
                    a = b;
                }
                fprintf(f, "%*s} %s;\n", indent, "", cname);
            }
            free(first);
        } else {
            char *body = struct_body(e, ts, i, j, depth + 1, indent + 4);
            doc_comment(f, field_doc(e, t, depth), indent);
            fprintf(f, "%*sstruct {\n%s%*s} %s;\n", indent, "", body, indent, "", cname);
            free(body);
        }
        i = j;
    }
    fclose(f);
    return text;
}

/* ---- the header ------------------------------------------------------------------ */

void emit_header(Emitter *e, const char *fname)
{
    const char *U = emit_upper(e->m->prefix);
    emit_banner(e, fname);
    if (e->m->doc) {
        P(e, "\n");
        doc_comment(e->out, e->m->doc, 0);
    }
    P(e, "#ifndef %s_H\n#define %s_H\n\n", U, U);
    P(e, "#include <stddef.h>\n#include <stdint.h>\n\n#include \"nnc_runtime.h\"\n\n");
    P(e,
      "#if NNC_RUNTIME_VERSION != 1\n#error \"%s was generated for nnc runtime version 1; regenerate it with the nnc "
      "that matches your runtime\"\n#endif\n\n",
      fname);
    P(e, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    P(e, "enum {\n");
    for (int i = 0; i < e->m->nhparams; i++) {
        if (e->m->hparams[i].doc)
            doc_comment(e->out, e->m->hparams[i].doc, 4);
        P(e, "    %s = %lld,\n", e->m->hparams[i].cname, e->m->hparams[i].ival);
    }
    P(e, "    %s_NUM_PARAMS = %lld, /* %ss in %s_params */\n", U, (long long)e->m->num_params, e->real, e->m->prefix);
    P(e, "    %s_NUM_STATE = %lld, /* %ss in %s_state */\n", U, (long long)e->m->num_state, e->real, e->m->prefix);
    P(e, "    %s_NUM_METRICS = %d,\n", U, e->m->nmetrics);
    P(e, "};\n\n");
    if (e->m->nparams) {
        P(e,
          "/* Trainable parameters: nested structs mirror the model's fields; the\n"
          "   struct is also a %s[%s_NUM_PARAMS]. */\n",
          e->real, U);
        char *body = struct_body(e, e->m->params, 0, e->m->nparams, 0, 4);
        P(e, "typedef struct %s_params {\n%s} %s_params;\n\n", e->m->prefix, body, e->m->prefix);
        free(body);
    } else {
        P(e, "/* This model has no trainable parameters. */\ntypedef struct %s_params { %s none_; } %s_params;\n\n",
          e->m->prefix, e->real, e->m->prefix);
    }
    if (e->m->nstate) {
        int counters = 0;
        for (int i = 0; i < e->m->nstate; i++)
            counters += e->m->state[i].counter;
        if (counters)
            P(e,
              "/* Non-trainable state, saved in checkpoints; as large as a %s[%s_NUM_STATE]: its int64_t\n"
              "   counters (saved as I64) are 8-byte aligned. */\n",
              e->real, U);
        else
            P(e, "/* Non-trainable state, saved in checkpoints; also a %s[%s_NUM_STATE]. */\n", e->real, U);
        char *body = struct_body(e, e->m->state, 0, e->m->nstate, 0, 4);
        P(e, "typedef struct %s_state {\n%s} %s_state;\n\n", e->m->prefix, body, e->m->prefix);
        free(body);
    }
    P(e, "typedef struct %s {\n", e->m->prefix);
    P(e, "    %s_params *params;      /* trainable weights */\n", e->m->prefix);
    P(e, "    %s_params *grads;       /* d loss / d params, same layout */\n", e->m->prefix);
    if (e->m->nstate)
        P(e, "    %s_state *state;        /* non-trainable tensors */\n", e->m->prefix);
    else
        P(e, "    struct %s_state *state; /* this model has no state: NULL */\n", e->m->prefix);
    P(e, "    int max_batch;\n");
    P(e, "    /* private members follow */\n");
    P(e, "    %s *arena_;\n    nnc_rng rng_;\n    int n_;\n", e->real);
    P(e, "    int64_t gn_, g0_;   /* the global batch of the last pass, its first example here */\n");
    P(e, "    %s *work_;        /* the kernels' work: work_len_ floats, a slice per thread */\n", e->real);
    P(e, "    int64_t work_len_;\n");
    P(e, "    const void *in_[%d];\n", e->m->ninputs);
    if (e->m->nlabels)
        P(e, "    const void *lab_[%d];\n", e->m->nlabels);
    if (e->m->train && e->m->train->nsummaries)
        P(e, "    %s summary_[%d];\n", e->real, e->m->train->nsummaries);
    if (e->opt->check_numerics)
        P(e, "    char numerics_[NNC_NUMERICS_MSG]; /* the first non-finite value's message, or \"\" */\n");
    P(e, "} %s;\n\n", e->m->prefix);
    const char *p = e->m->prefix;
    P(e,
      "/* Allocates everything the model will ever need and initializes params\n"
      "   and state, deterministically for a seed; 0, or -1 with errno set.\n"
      "   Threads: the model runs on nnc_threads() threads (OpenMP), by default\n"
      "   OMP_NUM_THREADS or every core; to choose, call nnc_set_threads(n)\n"
      "   before this (each thread gets its slice of work memory here).  The\n"
      "   results are bitwise the same for any count.  Build with -fopenmp\n"
      "   (pkg-config --cflags --libs nnc gives it) for the generated loops to\n"
      "   use the threads too. */\n");
    P(e, "int %s_init(%s *m, int max_batch, uint64_t seed);\n", p, p);
    P(e, "void %s_release(%s *m);\n", p, p);
    if (e->m->fixed_shape) /* one sample per call (model.c) */
        P(e,
          "/* This model has no batch dim: every pass runs on one sample, whole\n"
          "   arrays of the declared shapes; pass n = 1 and max_batch = 1. */\n");
    P(e, "/* Inference (training false), 1 <= n <= max_batch. */\n%s;\n", emit_sig_forward(e));
    if (e->m->has_loss) {
        P(e,
          "/* Training pass: returns the loss and keeps what backward needs, including\n"
          "   pointers to the inputs and labels: keep them alive until backward. */\n%s;\n",
          emit_sig_train(e));
        P(e, "/* d loss / d params of the last training pass into m->grads (overwritten). */\n");
        P(e, "void %s_backward(%s *m);\n", p, p);
        P(e, "/* Loss and every metric (declaration order), in inference mode. */\n%s;\n", emit_sig_eval(e));
        if (e->m->train->nsummaries) {
            P(e, "/* The summaries of the last training pass: names and values. */\n");
            P(e, "enum { %s_NUM_SUMMARIES = %d };\n", U, e->m->train->nsummaries);
            P(e, "extern const char *const %s_summary_names[%d];\n", p, e->m->train->nsummaries);
        }
    }
    if (!e->opt->f64) {
        P(e, "/* Params and state as safetensors, atomically; 0, or -1 (nnc_error()). */\n");
        P(e, "int %s_save(const %s *m, const char *path);\n", p, p);
        P(e, "/* Loads params and state; on error -1 and m is unchanged. */\n");
        P(e, "int %s_load(%s *m, const char *path);\n", p, p);
        P(e,
          "/* The same, ignoring tensors the model lacks and keeping those the file lacks, each\n"
          "   listed on stderr (PyTorch's strict=False). */\n");
        P(e, "int %s_load_non_strict(%s *m, const char *path);\n", p, p);
    }
    if (e->opt->check_numerics) {
        P(e,
          "/* Built with --check-numerics: each pass stops at the first non-finite\n"
          "   value an op writes (train_forward then returns NaN, eval gives NaN).\n"
          "   The message of the last pass that stopped (its op, tensor, shape and\n"
          "   .nn location), or NULL when the last passes ran through. */\n");
        P(e, "const char *%s_numerics_error(const %s *m);\n", p, p);
    }
    P(e, "/* Reflection: every param and state tensor. */\n");
    P(e, "const nnc_tensor_info *%s_tensors(size_t *count);\n", p);
    if (e->m->nmetrics) {
        P(e, "extern const char *const %s_metric_names[%d];\n", p, e->m->nmetrics);
    }
    P(e, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}
