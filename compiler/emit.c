/* emit.c — prints the planned graphs as C (emit_*): emit_model, the
 * stage's entry point, and what the other emit files share.
 *
 * Per model: <prefix>.h (typed structs and the API of generated-c.md;
 * emit_header.c), <prefix>.c (init, forward, train_forward, backward,
 * eval, save/load, reflection; emit_fn.c, with each node's code from
 * emit_loops.c, emit_ops.c and emit_vision.c) and, with --emit=driver,
 * <prefix>_main.c (a main() that hands the model to the runtime's
 * driver; emit_driver.c).  Every size is a constant except the batch: a
 * dim that holds it is printed as `k * n`.
 *
 * Inside a function, each stored tensor is a pointer `tK` (K its node id)
 * into the arena, the params, the state or the caller's arrays; a fused
 * elementwise chain is one loop with one local per node, so a value used
 * twice is computed once.  GEMMs go to cblas_sgemm.  The body of each
 * function is written to memory first, so that only the pointers it uses
 * are declared (no unused-variable warnings at -Wall -Wextra).
 *
 * Here: the strings, literals and sizes the printers build, the pointers
 * (emit_ref, a loop block's restrict copies, the declarations at the top
 * of a function), and the comment above each node's code.  All of them
 * take the context that emitter.h declares.
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

/* ---- the entry point ---------------------------------------------------------- */

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
