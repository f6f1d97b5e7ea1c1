/* emit.c — prints the planned graphs as C (emit_*).
 *
 * Per model: <prefix>.h (typed structs and the API of generated-c.md),
 * <prefix>.c (init, forward, train_forward, backward, eval, save/load,
 * reflection) and, with --emit=driver, <prefix>_main.c (a main() that
 * hands the model to the runtime's driver).  Every size is a constant
 * except the batch: a dim that holds it is printed as `k * n`.
 *
 * Inside a function, each stored tensor is a pointer `tK` (K its node id)
 * into the arena, the params, the state or the caller's arrays; a fused
 * elementwise chain is one loop with one local per node, so a value used
 * twice is computed once.  GEMMs go to cblas_sgemm.  The body of each
 * function is written to memory first, so that only the pointers it uses
 * are declared (no unused-variable warnings at -Wall -Wextra).
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emitter.h"
#include "plan.h"

char *emit_fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    if (!s)
        abort();
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
}

/* a libm function for the real type: "expf" or "exp" */
const char *emit_libm(Emitter *e, const char *name) { return e->opt->f64 ? name : emit_fmt("%sf", name); }

const char *emit_lit(Emitter *e, double v)
{
    if (isnan(v))
        return "NAN";
    if (isinf(v))
        return v > 0 ? "INFINITY" : "-INFINITY";
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", v);
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    return emit_fmt("%s%s", buf, e->opt->f64 ? "" : "f");
}

/* ---- the real type's functions ------------------------------------------------ */

/* tanh: libm's in double code (the finite-difference checks), else the
 * inline rational one (nnc_tanh_float, emitted with the model), which
 * vectorizes. */
const char *emit_tanh_fn(Emitter *e) { return e->opt->f64 ? "tanh" : "nnc_tanh_float"; }
/* exp where the argument is <= 0 (softmax, cross-entropy): nnc_exp_float */
const char *emit_exp_fn(Emitter *e) { return e->opt->f64 ? "exp" : "nnc_exp_float"; }

/* relu of the expression a (0 for NaN), wherever the emitted code applies
 * one: the elementwise op and the relus folded into other ops */
const char *emit_relu_of(Emitter *e, const char *a)
{
    return emit_fmt("%s > %s ? %s : %s", a, emit_lit(e, 0), a, emit_lit(e, 0));
}

const char *emit_gemm(Emitter *e) { return e->opt->f64 ? "cblas_dgemm" : "cblas_sgemm"; }

/* ---- sizes ----------------------------------------------------------------- */

const char *emit_dim(Shape s, int i)
{
    if (i == s.bd)
        return s.d[i] == 1 ? "n" : emit_fmt("%lld * n", (long long)s.d[i]);
    return emit_fmt("%lld", (long long)s.d[i]);
}

const char *emit_numel(Shape s)
{
    int64_t k = ir_numel(s);
    if (s.bd < 0)
        return emit_fmt("%lld", (long long)k);
    return k == 1 ? "(int64_t)n" : emit_fmt("%lld * (int64_t)n", (long long)k);
}

/* product of dims [a, b) */
const char *emit_prod(Shape s, int a, int b)
{
    int64_t k = 1;
    int batch = 0;
    for (int i = a; i < b; i++) {
        k *= s.d[i];
        batch |= i == s.bd;
    }
    if (!batch)
        return emit_fmt("%lld", (long long)k);
    return k == 1 ? "(int64_t)n" : emit_fmt("%lld * (int64_t)n", (long long)k);
}

/* stride of dim i of a row-major tensor s */
const char *emit_stride(Shape s, int i)
{
    return emit_prod(s, i + 1, s.nd);
}

/* ---- pointers ---------------------------------------------------------------- */

const IrNode *emit_nd(Emitter *e, int t) { return &e->g->nodes[t]; }

const char *emit_ref(Emitter *e, int t)
{
    int r = plan_storage_root(e->g, t);
    e->used[r] = 1;
    if (e->loop_used) {
        e->loop_used[r] = 1;
        return emit_fmt("r%d", r);
    }
    return emit_fmt("t%d", r);
}

/* A scalar operand: a constant is inlined, anything else read at [0]. */
const char *emit_scalar(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    if (n->op == IR_CONST && n->fused == 1)
        return n->ival2 ? emit_fmt("(%s)(%s %s (double)n)", e->real, emit_lit(e, n->fval), n->ival2 < 0 ? "/" : "*")
                        : emit_lit(e, n->fval);
    return emit_fmt("%s[0]", emit_ref(e, t));
}

/* A loop block gets `restrict` copies of the pointers it uses: tensors
 * live in one loop never overlap (plan.c), so the compiler may vectorize.
 * (Function-wide restrict would be wrong: buffers reuse arena space.) */
void emit_loop_begin(Emitter *e)
{
    e->loop_used = calloc((size_t)e->g->n + 1, 1);
    e->loop_wr = calloc((size_t)e->g->n + 1, 1);
    e->loop_saved = e->out;
    e->out = open_memstream(&e->loop_text, &e->loop_len);
    if (!e->loop_used || !e->out)
        abort();
}

void emit_loop_end(Emitter *e, int written)
{
    fclose(e->out);
    e->out = e->loop_saved;
    int w = plan_storage_root(e->g, written);
    P(e, "    {\n");
    for (int r = 0; r < e->g->n; r++)
        if (e->loop_used[r]) {
            const char *ty = emit_nd(e, r)->dt == DT_I32 ? "int32_t" : e->real;
            P(e, "    %s%s *restrict const r%d = t%d;\n", r == w || e->loop_wr[r] ? "" : "const ", ty, r, r);
        }
    fwrite(e->loop_text, 1, e->loop_len, e->out);
    P(e, "    }\n");
    free(e->loop_text);
    free(e->loop_used);
    free(e->loop_wr);
    e->loop_used = NULL;
    e->loop_wr = NULL;
}

/* The declaration of a used pointer, at the top of the function, with
 * the tensor's shape (and name, for leaves) in a comment. */
void emit_declare(Emitter *e, int r)
{
    const IrNode *n = emit_nd(e, r);
    const char *ty = n->dt == DT_I32 ? "int32_t" : e->real;
    char sb[160];
    const char *shape = ir_shape_str(n->shape, "N", sb, sizeof sb);
    switch (n->op) {
    case IR_PARAM:
        P(e, "    const %s *const t%d = P + %lld; /* %s %s */\n", ty, r, (long long)e->m->params[n->ival].offset,
          e->m->params[n->ival].path, shape);
        return;
    case IR_STATE:
        P(e, "    const %s *const t%d = S + %lld; /* %s %s */\n", ty, r, (long long)e->m->state[n->ival].offset,
          e->m->state[n->ival].path, shape);
        return;
    case IR_INPUT:
    case IR_LABEL: {
        int lab = n->op == IR_LABEL;
        const IoDecl *io = lab ? &e->m->labels[n->ival] : &e->m->inputs[n->ival];
        if (e->in_backward)
            P(e, "    const %s *const t%d = (const %s *)m->%s_[%d]; /* %s %s */\n", ty, r, ty, lab ? "lab" : "in",
              n->ival, io->name, shape);
        else
            P(e, "    const %s *const t%d = (const %s *)%s; /* %s */\n", ty, r, ty, io->name, shape);
        return;
    }
    default:
        break;
    }
    const Buffer *b = &e->g->bufs[n->buf];
    if (b->param_grad >= 0)
        P(e, "    %s *const t%d = G + %lld; /* d %s %s */\n", ty, r, (long long)e->m->params[b->param_grad].offset,
          e->m->params[b->param_grad].path, shape);
    else if (b->batched)
        P(e, "    %s *const t%d = (%s *)(A + SB + %lld * MB); /* %s */\n", ty, r, ty, (long long)b->off, shape);
    else
        P(e, "    %s *const t%d = (%s *)(A + %lld); /* %s */\n", ty, r, ty, (long long)b->off, shape);
}

/* ---- comments ---------------------------------------------------------------- */

void emit_comment(Emitter *e, const IrNode *n)
{
    if (!n->loc.file) {
        P(e, "    /* %s%s */\n", ir_op_name(n->op), n->backward ? " (backward)" : "");
        return;
    }
    int line, col;
    diag_linecol(n->loc, &line, &col);
    const char *base = strrchr(n->loc.file->path, '/');
    base = base ? base + 1 : n->loc.file->path;
    P(e, "    /* %s:%d  %s%s */\n", base, line, n->what ? n->what : ir_op_name(n->op), n->backward ? " (backward)" : "");
}

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
    return emit_io_decl(e, io, is_const, io->name);
}

static const char *out_param(Emitter *e)
{
    const IrNode *o = &e->m->infer->nodes[e->m->infer->output];
    IoDecl io;
    memset(&io, 0, sizeof io);
    io.name = "out";
    io.dt = DT_F32;
    io.shape = o->shape;
    return io_param(e, &io, 0);
}

static const char *sig_inputs(Emitter *e, int labels)
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
    return emit_fmt("void %s_forward(%s *m, int n%s, %s)", e->m->prefix, emit_model_type(e), sig_inputs(e, 0),
                    out_param(e));
}

const char *emit_sig_train(Emitter *e)
{
    return emit_fmt("%s %s_train_forward(%s *m, int n%s)", e->real, e->m->prefix, emit_model_type(e), sig_inputs(e, 1));
}

const char *emit_sig_eval(Emitter *e)
{
    return emit_fmt("void %s_eval(%s *m, int n%s, %s *loss, %s *metrics)", e->m->prefix, emit_model_type(e),
                    sig_inputs(e, 1), e->real, e->real);
}

/* ---- the header's structs ------------------------------------------------------- */

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
        const char *name = t->parts[depth];
        if (t->npart == depth + 1) {
            doc_comment(f, t->doc, indent);
            fprintf(f, "%*s%s %s", indent, "", e->real, name);
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
                fprintf(f, "%*sstruct {\n%s%*s} %s[%d];\n", indent, "", first, indent, "", name, nitems);
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
                fprintf(f, "%*s} %s;\n", indent, "", name);
            }
            free(first);
        } else {
            char *body = struct_body(e, ts, i, j, depth + 1, indent + 4);
            doc_comment(f, field_doc(e, t, depth), indent);
            fprintf(f, "%*sstruct {\n%s%*s} %s;\n", indent, "", body, indent, "", name);
            free(body);
        }
        i = j;
    }
    fclose(f);
    return text;
}

const char *emit_upper(const char *s)
{
    char *u = emit_fmt("%s", s);
    for (char *p = u; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return u;
}

void emit_banner(Emitter *e, const char *what)
{
    P(e, "/* %s: generated by nnc from %s; do not edit. */\n", what, e->m->source);
}

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
    P(e, "#if NNC_RUNTIME_VERSION != 1\n#error \"%s was generated for nnc runtime version 1; regenerate it with the nnc that matches your runtime\"\n#endif\n\n", fname);
    P(e, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    P(e, "enum {\n");
    for (int i = 0; i < e->m->nhparams; i++) {
        if (e->m->hparams[i].doc)
            doc_comment(e->out, e->m->hparams[i].doc, 4);
        P(e, "    %s_%s = %lld,\n", U, emit_upper(e->m->hparams[i].name), e->m->hparams[i].ival);
    }
    P(e, "    %s_NUM_PARAMS = %lld, /* %ss in %s_params */\n", U, (long long)e->m->num_params, e->real, e->m->prefix);
    P(e, "    %s_NUM_STATE = %lld, /* %ss in %s_state */\n", U, (long long)e->m->num_state, e->real, e->m->prefix);
    P(e, "    %s_NUM_METRICS = %d,\n", U, e->m->nmetrics);
    P(e, "};\n\n");
    if (e->m->nparams) {
        P(e, "/* Trainable parameters: nested structs mirror the model's fields; the\n"
          "   struct is also a %s[%s_NUM_PARAMS]. */\n", e->real, U);
        char *body = struct_body(e, e->m->params, 0, e->m->nparams, 0, 4);
        P(e, "typedef struct %s_params {\n%s} %s_params;\n\n", e->m->prefix, body, e->m->prefix);
        free(body);
    } else {
        P(e, "/* This model has no trainable parameters. */\ntypedef struct %s_params { %s none_; } %s_params;\n\n", e->m->prefix, e->real, e->m->prefix);
    }
    if (e->m->nstate) {
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
    P(e, "    const void *in_[%d];\n", e->m->ninputs);
    if (e->m->nlabels)
        P(e, "    const void *lab_[%d];\n", e->m->nlabels);
    if (e->m->train && e->m->train->nsummaries)
        P(e, "    %s summary_[%d];\n", e->real, e->m->train->nsummaries);
    P(e, "} %s;\n\n", e->m->prefix);
    const char *p = e->m->prefix;
    P(e, "/* Allocates everything the model will ever need and initializes params\n"
      "   and state, deterministically for a seed; 0, or -1 with errno set. */\n");
    P(e, "int %s_init(%s *m, int max_batch, uint64_t seed);\n", p, p);
    P(e, "void %s_release(%s *m);\n", p, p);
    P(e, "/* Inference (training false), 1 <= n <= max_batch. */\n%s;\n", emit_sig_forward(e));
    if (e->m->has_loss) {
        P(e, "/* Training pass: returns the loss and keeps what backward needs, including\n"
          "   pointers to the inputs and labels: keep them alive until backward. */\n%s;\n", emit_sig_train(e));
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
    }
    P(e, "/* Reflection: every param and state tensor. */\n");
    P(e, "const nnc_tensor_info *%s_tensors(size_t *count);\n", p);
    if (e->m->nmetrics) {
        P(e, "extern const char *const %s_metric_names[%d];\n", p, e->m->nmetrics);
    }
    P(e, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

/* ---- the driver ------------------------------------------------------------------ */

static void io_desc(Emitter *e, const IoDecl *io)
{
    P(e, "    {\"%s\", %s, %d, {", io->name, io->dt == DT_I32 ? "NNC_I32" : "NNC_F32", io->shape.nd);
    for (int k = 0; k < io->shape.nd; k++)
        P(e, "%s%lld", k ? ", " : "", k == 0 && io->shape.bd == 0 ? 0LL : (long long)io->shape.d[k]);
    P(e, "}, %d, %d, %d},\n", io->shape.bd == 0, io->limit, io->ignore_ok);
}

static double flops(Emitter *e)
{
    const Graph *g = e->m->infer;
    double f = 0;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].fused >= 0)
            f += ir_node_flops(g, i);
    return f;
}

void emit_driver(Emitter *e, const char *hname, const char *fname)
{
    const char *p = e->m->prefix;
    emit_banner(e, fname);
    P(e, "#include \"%s\"\n\n", hname);
    P(e, "/* Thin wrappers from the driver's generic calls to the typed API. */\n");
    /* C11 needs the casts: a pointer to an array of const is not const */
    const char *args = "";
    for (int i = 0; i < e->m->ninputs; i++)
        args = emit_fmt("%s, (%s)in[%d]", args, emit_io_decl(e, &e->m->inputs[i], 1, ""), i);
    const char *largs = "";
    for (int i = 0; i < e->m->nlabels; i++)
        largs = emit_fmt("%s, (%s)lab[%d]", largs, emit_io_decl(e, &e->m->labels[i], 1, ""), i);
    P(e, "static int init_(void *m, int max_batch, uint64_t seed) { return %s_init(m, max_batch, seed); }\n", p);
    P(e, "static void release_(void *m) { %s_release(m); }\n", p);
    IoDecl oio;
    memset(&oio, 0, sizeof oio);
    oio.dt = DT_F32;
    oio.shape = e->m->infer->nodes[e->m->infer->output].shape;
    const char *ocast = emit_io_decl(e, &oio, 0, "");
    P(e, "static void forward_(void *m, int n, const void *const *in, void *out)\n{\n    %s_forward(m, n%s, (%s)out);\n}\n", p, args, ocast);
    if (e->m->has_loss) {
        P(e, "static float train_forward_(void *m, int n, const void *const *in, const void *const *lab)\n{\n    return %s_train_forward(m, n%s%s);\n}\n",
          p, args, largs);
        P(e, "static void backward_(void *m) { %s_backward(m); }\n", p);
        P(e, "static void eval_(void *m, int n, const void *const *in, const void *const *lab, float *loss, float *metrics)\n{\n    %s_eval(m, n%s%s, loss, metrics);\n}\n",
          p, args, largs);
    }
    int ns = e->m->train ? e->m->train->nsummaries : 0;
    if (ns)
        P(e, "static const float *summaries_(const void *m) { return ((const %s *)m)->summary_; }\n", p);
    P(e, "static int save_(const void *m, const char *path) { return %s_save(m, path); }\n", p);
    P(e, "static int load_(void *m, const char *path) { return %s_load(m, path); }\n\n", p);
    P(e, "static const nnc_io_desc inputs_[%d] = {\n", e->m->ninputs);
    for (int i = 0; i < e->m->ninputs; i++)
        io_desc(e, &e->m->inputs[i]);
    P(e, "};\n\n");
    if (e->m->nlabels) {
        P(e, "static const nnc_io_desc labels_[%d] = {\n", e->m->nlabels);
        for (int i = 0; i < e->m->nlabels; i++)
            io_desc(e, &e->m->labels[i]);
        P(e, "};\n\n");
    }
    P(e, "int main(int argc, char **argv)\n{\n");
    P(e, "    static const nnc_model_desc desc = {\n");
    P(e, "        .name = \"%s\",\n        .model_size = sizeof(%s),\n", p, p);
    P(e, "        .num_inputs = %d,\n        .num_labels = %d,\n        .num_metrics = %d,\n", e->m->ninputs, e->m->nlabels, e->m->nmetrics);
    P(e, "        .inputs = inputs_,\n        .labels = %s,\n", e->m->nlabels ? "labels_" : "NULL");
    const IrNode *o = &e->m->infer->nodes[e->m->infer->output];
    P(e, "        .output = ");
    {
        P(e, "{\"output\", NNC_F32, %d, {", o->shape.nd);
        for (int k = 0; k < o->shape.nd; k++)
            P(e, "%s%lld", k ? ", " : "", k == 0 ? 0LL : (long long)o->shape.d[k]);
        P(e, "}, 1, 0, 0},\n");
    }
    P(e, "        .metric_names = %s,\n", e->m->nmetrics ? emit_fmt("%s_metric_names", p) : "NULL");
    P(e, "        .num_params = %s_NUM_PARAMS,\n        .num_state = %s_NUM_STATE,\n", emit_upper(p), emit_upper(p));
    P(e, "        .flops_per_example = %.17g,\n", flops(e));
    P(e, "        .has_loss = %d,\n", e->m->has_loss);
    P(e, "        .tensors = %s_tensors,\n        .init = init_,\n        .release = release_,\n        .forward = forward_,\n", p);
    if (e->m->has_loss)
        P(e, "        .train_forward = train_forward_,\n        .backward = backward_,\n        .eval = eval_,\n");
    if (ns)
        P(e, "        .num_summaries = %d,\n        .summary_names = %s_summary_names,\n        .summaries = summaries_,\n", ns, p);
    P(e, "        .save = save_,\n        .load = load_,\n    };\n");
    P(e, "    return nnc_driver_main(argc, argv, &desc);\n}\n");
}

static void finish_file(EmitFile *f, const char *name, char *text, size_t len)
{
    f->name = emit_fmt("%s", name);
    f->text = text;
    f->len = len;
}

int emit_model(const Model *m, const EmitOptions *opt, EmitFile *files)
{
    Emitter em = {.m = m, .opt = opt, .real = opt->f64 ? "double" : "float"};
    Emitter *e = &em;
    int nf = 0;
    if (opt->f64)
        for (int k = 0; k < m->nparams + m->nstate; k++) {
            const Tensor *t = k < m->nparams ? &m->params[k] : &m->state[k - m->nparams];
            if (t->from) {
                diag_error(t->loc, "'from' loads float files and cannot be used with --precision=f64");
                return 0;
            }
        }
    const char *hname = emit_fmt("%s.h", m->prefix), *cname = emit_fmt("%s.c", m->prefix),
               *dname = emit_fmt("%s_main.c", m->prefix);
    char *text;
    size_t len;
    e->out = open_memstream(&text, &len);
    emit_header(e, hname);
    fclose(e->out);
    finish_file(&files[nf++], hname, text, len);
    e->out = open_memstream(&text, &len);
    emit_source(e, hname, cname);
    fclose(e->out);
    finish_file(&files[nf++], cname, text, len);
    if (opt->driver && !opt->f64) {
        e->out = open_memstream(&text, &len);
        emit_driver(e, hname, dname);
        fclose(e->out);
        finish_file(&files[nf++], dname, text, len);
    }
    free(e->used);
    free(e->merged);
    return nf;
}
