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

/* ---- names and banners ------------------------------------------------------- */

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
