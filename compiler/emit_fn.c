/* emit_fn.c — the functions of the model's C file (emit_*): the tensor
 * table, init, release, save and load, the passes forward,
 * train_forward, backward and eval.  The math the loops call (a tanh
 * and an exp that vectorize, derivatives too long to inline) is the
 * runtime's header nnc_math.h.
 *
 * A pass's body is printed to memory first (begin_body), so that the
 * declarations at its top are only those of the pointers it used
 * (end_body): nothing is unused at -Wall -Wextra.
 *
 * With --check-numerics, node_range follows each node's code with a call
 * of the runtime's nnc_check_finite on every float tensor the code wrote;
 * a failed check ends the pass (docs/generated-c.md, "Checking numerics").
 * Without it, the passes are printed exactly as before.
 *
 * In float, each pass's code is printed three times, the same text: a
 * function compiled for AVX-512, one for AVX2 and one for the file's own
 * target, and the pass itself picks one of them by nnc_isa()
 * (isa_variants).  So a file built for baseline x86-64 still runs vector
 * code where the CPU has it.  (One always-inline body called from the
 * three would be shorter, but OpenMP outlines a parallel loop from the
 * function it is written in before inlining: the loops of such a body
 * ran at the baseline target in every variant, resnet_small's step 30%
 * slower than a -march=native build.)
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emitter.h"
#include "plan.h"

/* ---- the passes ------------------------------------------------------------------ */

static void begin_body(Emitter *e, const Graph *g, int backward)
{
    e->g = g;
    free(e->used);
    e->used = calloc((size_t)g->n + 1, 1);
    free(e->merged);
    e->merged = calloc((size_t)g->n + 1, 1);
    e->in_backward = backward;
    e->mask_seq = 0;
    e->file_out = e->out;
    e->out = open_memstream(&e->body_text, &e->body_len);
    if (!e->out)
        abort();
}

/* The model's memory, the largest over the graphs that share it: the
 * arena's static part, its part per example, the kernels' work per
 * thread (plan.c). */
typedef struct Sizes {
    int64_t fixed, batched, work;
} Sizes;

static Sizes arena_sizes(Emitter *e)
{
    Sizes z = {0, 0, 0};
    const Graph *gs[2] = {e->m->train, e->m->infer};
    for (int i = 0; i < 2; i++) {
        if (!gs[i])
            continue;
        z.fixed = gs[i]->static_size > z.fixed ? gs[i]->static_size : z.fixed;
        z.batched = gs[i]->batched_size > z.batched ? gs[i]->batched_size : z.batched;
        z.work = gs[i]->work_max > z.work ? gs[i]->work_max : z.work;
    }
    return z;
}

/* Prints the standard locals and the used pointers, then the body. */
static void end_body(Emitter *e)
{
    fclose(e->out);
    e->out = e->file_out;
    emit_names(e);
    P(e, "    %s *const A = m->arena_;\n", e->real);
    P(e, "    const int64_t MB = m->max_batch, SB = %lld;\n", (long long)arena_sizes(e).fixed);
    P(e, "    const %s *const P = (const %s *)m->params;\n", e->real, e->real);
    P(e, "    %s *const G = (%s *)m->grads;\n", e->real, e->real);
    if (e->m->nstate)
        P(e, "    %s *const S = (%s *)m->state;\n    (void)S;\n", e->real, e->real);
    P(e, "    (void)A, (void)MB, (void)SB, (void)P, (void)G;\n");
    for (int i = 0; i < e->g->n; i++)
        if (e->used[i])
            emit_declare(e, i);
    fwrite(e->body_text, 1, e->body_len, e->out);
    free(e->body_text);
    e->body_text = NULL;
}

/* Inputs a pass does not read are still parameters: mark them used; so
 * is n in a fixed-shape model, whose passes have no batch to size. */
static void void_params(Emitter *e, int labels)
{
    if (e->m->fixed_shape)
        P(e, "    (void)n;\n");
    for (int i = 0; i < e->m->ninputs; i++)
        P(e, "    (void)%s;\n", e->m->inputs[i].cname);
    for (int i = 0; labels && i < e->m->nlabels; i++)
        P(e, "    (void)%s;\n", e->m->labels[i].cname);
}

/* A C string literal's contents for s (quotes, backslashes, controls escaped). */
static const char *cstr(const char *s);

/* --check-numerics: the check of node j's values, just written, with the
 * statement that ends the pass when one is not finite (e->nf_fail). */
static void numerics_check(Emitter *e, int j)
{
    const IrNode *n = emit_nd(e, j);
    const char *where = e->m->source;
    if (n->loc.file) {
        int line, col;
        diag_linecol(n->loc, &line, &col);
        where = emit_fmt("%s:%d:%d", n->loc.file->path, line, col);
    }
    const char *dims = "NULL";
    if (n->shape.nd) {
        dims = "(const int64_t[]){";
        for (int k = 0; k < n->shape.nd; k++)
            dims = emit_fmt("%s%s%s", dims, k ? ", " : "", emit_dim(n->shape, k));
        dims = emit_fmt("%s}", dims);
    }
    P(e, "    if (nnc_check_finite(m->numerics_, sizeof m->numerics_, %s, %d, %s, \"%s\", \"%s\", \"%s\", \"%s\"))\n",
      emit_ref(e, j), n->shape.nd, dims, cstr(where), cstr(n->name ? n->name : ir_op_name(n->op)), ir_op_name(n->op),
      e->nf_pass);
    P(e, "        %s\n", e->nf_fail);
}

/* Node j's values are checked: a float tensor that an op writes, except
 * the ones that hold infinities by design (a causal mask's -inf) or NaN
 * as an answer (accuracy over no labels). */
static int numerics_checked(const IrNode *n)
{
    return n->dt == DT_F32 && emit_op_prints(n->op) && n->op != IR_CAUSAL_MASK && n->op != IR_ACCURACY;
}

/* After node i of the backward pass: the gradient buckets whose last
 * param is final now start their sums across the processes, and the sums
 * under way move on (emit_grad_sums). */
static void after_node(Emitter *e, int i)
{
    if (!e->buckets)
        return;
    int started = 0;
    for (int b = 0; b < e->nbuckets; b++)
        if (!e->buckets[b].started && e->buckets[b].fin <= i) {
            e->buckets[b].started = 1;
            P(e, "    if (dist)\n        nnc_dist_sum_start(G + %lld, %lld);\n", (long long)e->buckets[b].lo,
              (long long)(e->buckets[b].hi - e->buckets[b].lo));
            started = 1;
        }
    /* MPI moves a sum on only inside its calls: between the heavy ops */
    const IrNode *n = i < e->g->n ? &e->g->nodes[i] : NULL;
    if (n && n->group >= 0 && n->group != i) /* computed in its group's loop, the progress after it */
        n = NULL;
    if (!started && e->in_flight && n &&
        (n->op == IR_MATMUL || n->op == IR_CONV2D || n->op == IR_CONV2D_BWD_DATA || n->op == IR_CONV2D_BWD_FILTER))
        P(e, "    if (dist)\n        nnc_dist_progress();\n");
    e->in_flight |= started;
}

static void node_range(Emitter *e, const Graph *g, int lo, int hi)
{
    if (!e->opt->check_numerics) {
        for (int i = lo; i < hi; i++)
            if (g->nodes[i].fused >= 0) {
                emit_node(e, i);
                after_node(e, i);
            }
        return;
    }
    /* after each node's code, the checks of what it wrote: itself, the
     * nodes stored in its loop (fused 2) and the ones it computed along
     * (merged), each once */
    char *done = calloc((size_t)(hi - lo) + 1, 1);
    if (!done)
        abort();
    for (int i = lo; i < hi; i++) {
        if (g->nodes[i].fused < 0)
            continue;
        emit_node(e, i);
        after_node(e, i);
        for (int j = lo; j < hi; j++) {
            const IrNode *n = &g->nodes[j];
            if (done[j - lo] || n->fused < 0 || !numerics_checked(n))
                continue;
            if ((j == i && !n->fused) || (n->fused == 2 && n->home == i) || (j != i && e->merged[j])) {
                done[j - lo] = 1;
                numerics_check(e, j);
            }
        }
    }
    free(done);
}

/* One body per pass, compiled for each instruction set. */

/* A pass's C function in pieces, which its body, the body's variants and
 * the function that picks one share. */
typedef struct Sig {
    const char *ret;    /* "void", "float" */
    const char *name;   /* "digits_train_forward" */
    const char *params; /* "digits *m, int n, const float (*x)[64], const int32_t *y" */
    const char *args;   /* "m, n, x, y" */
    int is_static;      /* the inference pass, which forward and eval call */
} Sig;

/* inputs: it takes n and the inputs, and the labels if labels; results:
 * the loss and the metrics' arrays (eval) */
static Sig pass_sig(Emitter *e, const char *ret, const char *pass, int inputs, int labels, int results)
{
    const char *params = emit_fmt("%s *m", emit_model_type(e)), *args = "m";
    if (inputs) {
        params = emit_fmt("%s, int n%s", params, emit_sig_inputs(e, labels));
        args = "m, n";
        for (int i = 0; i < e->m->ninputs; i++)
            args = emit_fmt("%s, %s", args, e->m->inputs[i].cname);
        for (int i = 0; labels && i < e->m->nlabels; i++)
            args = emit_fmt("%s, %s", args, e->m->labels[i].cname);
    }
    if (results) {
        params = emit_fmt("%s, %s *loss, %s *metrics", params, e->real, e->real);
        args = emit_fmt("%s, loss, metrics", args);
    }
    return (Sig){ret, emit_fmt("%s_%s", e->m->prefix, pass), params, args, !strcmp(pass, "infer")};
}

/* Float code compiles each pass three times (nnc_runtime.h, NNC_MULTI_ISA);
 * double code, for the finite-difference checks, once. */
static int multi_isa(Emitter *e) { return !e->opt->f64; }

/* Opens the function that holds a pass's code: in float, the code goes
 * to memory, for isa_variants to print once per instruction set; in
 * double, the pass itself. */
static void open_pass(Emitter *e, Sig s)
{
    if (multi_isa(e)) {
        e->pass_out = e->out;
        e->out = open_memstream(&e->pass_text, &e->pass_len);
        if (!e->out)
            abort();
    } else {
        P(e, "%s%s %s(%s)\n{\n", s.is_static ? "static " : "", s.ret, s.name, s.params);
    }
}

/* nnc_math.h's float functions that have an `_fma` twin (nnc_math_float.h),
 * which the AVX2 and AVX-512 passes call: their polynomials then run as
 * fused multiply-adds (gpt_mini's tanh GELUs and their gradients: the
 * step's median of 5 runs 56.2 -> 55.2 ms at 1 thread on Zen 4). */
static const char *const fma_fns[] = {"nnc_tanh_float", "nnc_exp_float",   "nnc_dgelu_tanh_float", "nnc_normcdf_float",
                                      "nnc_gelu_float", "nnc_dgelu_float", "nnc_sigmoid_float",    "nnc_dsilu_float"};

/* The pass's code with each call of a function of fma_fns renamed to its
 * `_fma` twin */
static void write_fma_text(FILE *out, const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t k = 0;
        const int at_word = i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_');
        for (; at_word && k < sizeof fma_fns / sizeof *fma_fns; k++) {
            const size_t n = strlen(fma_fns[k]);
            if (i + n < len && !strncmp(s + i, fma_fns[k], n) && s[i + n] == '(')
                break;
        }
        if (at_word && k < sizeof fma_fns / sizeof *fma_fns) {
            fprintf(out, "%s_fma", fma_fns[k]);
            i += strlen(fma_fns[k]);
        } else
            fputc(s[i++], out);
    }
}

/* After a pass's code: the code as `<name>_generic`, compiled for the
 * file's own target, then the same as `<name>_avx512` and `<name>_avx2`,
 * each vectorized for that target, then the pass, which runs `first`
 * (eval's inference pass) and the variant nnc_isa() names. */
static void isa_variants(Emitter *e, Sig s, const char *first)
{
    if (!multi_isa(e))
        return;
    fclose(e->out);
    e->out = e->pass_out;
    const char *ret = strcmp(s.ret, "void") ? "return " : "";
    P(e, "static %s %s_generic(%s)\n{\n", s.ret, s.name, s.params);
    fwrite(e->pass_text, 1, e->pass_len, e->out);
    P(e, "#if NNC_MULTI_ISA\n/* %s_generic's code, compiled for AVX-512 */\n", s.name);
    P(e, "static NNC_TARGET_AVX512 %s %s_avx512(%s)\n{\n", s.ret, s.name, s.params);
    write_fma_text(e->out, e->pass_text, e->pass_len);
    P(e, "/* %s_generic's code, compiled for AVX2 */\n", s.name);
    P(e, "static NNC_TARGET_AVX2 %s %s_avx2(%s)\n{\n", s.ret, s.name, s.params);
    write_fma_text(e->out, e->pass_text, e->pass_len);
    P(e, "#endif\n\n");
    free(e->pass_text);
    e->pass_text = NULL;
    P(e, "%s%s %s(%s)\n{\n%s", s.is_static ? "static " : "", s.ret, s.name, s.params, first ? first : "");
    P(e, "#if NNC_MULTI_ISA\n");
    P(e, "    if (nnc_isa() == NNC_ISA_AVX512)\n        %s%s_avx512(%s);\n", ret, s.name, s.args);
    P(e, "    else if (nnc_isa() == NNC_ISA_AVX2)\n        %s%s_avx2(%s);\n", ret, s.name, s.args);
    P(e, "    else\n#endif\n        %s%s_generic(%s);\n}\n\n", ret, s.name, s.args);
}

/* The start of a pass over nodes [lo, hi) of g: the global batch (gn
 * examples over all processes, g0 the first of this one's; n and 0 in
 * one process), which `fresh` passes ask the processes for and the others
 * take from the pass before; and the key of the pass's dropout masks. */
static void pass_batch(Emitter *e, const Graph *g, int lo, int hi, int fresh)
{
    if (fresh)
        P(e, "    nnc_dist_batch(n, &m->gn_, &m->g0_);\n");
    P(e, "    const int64_t gn = m->gn_, g0 = m->g0_;\n    (void)gn, (void)g0;\n");
    for (int i = lo; i < hi; i++)
        if (g->nodes[i].op == IR_RNG_MASK && g->nodes[i].fused >= 0) {
            P(e, "    const uint64_t dkey = nnc_rng_next(&m->rng_);\n");
            break;
        }
}

/* The inference pass up to the output, a function of its own that forward
 * and eval both call: the infer graph's nodes [0, core_end). */
static void infer_fn(Emitter *e)
{
    const Graph *g = e->m->infer;
    Sig s = pass_sig(e, "void", "infer", 1, 0, 0);
    P(e, "/* The inference pass (training false) up to the output, for forward and eval. */\n");
    open_pass(e, s);
    begin_body(e, g, 0);
    void_params(e, 0);
    e->nf_pass = "forward", e->nf_fail = "return;";
    if (e->opt->check_numerics)
        P(e, "    m->numerics_[0] = 0;\n");
    pass_batch(e, g, 0, g->core_end, 1);
    node_range(e, g, 0, g->core_end);
    end_body(e);
    P(e, "}\n\n");
    isa_variants(e, s, NULL);
}

/* A call of infer_fn's function. */
static const char *call_infer(Emitter *e)
{
    const char *s = emit_fmt("    %s_infer(m, n", e->m->prefix);
    for (int i = 0; i < e->m->ninputs; i++)
        s = emit_fmt("%s, %s", s, e->m->inputs[i].cname);
    return emit_fmt("%s);\n", s);
}

static void forward_fn(Emitter *e)
{
    const Graph *g = e->m->infer;
    P(e, "%s\n{\n", emit_sig_forward(e));
    begin_body(e, g, 0);
    P(e, "%s", call_infer(e));
    if (e->opt->check_numerics) /* the output is left as it was */
        P(e, "    if (m->numerics_[0])\n        return;\n");
    P(e, "    memcpy(out, %s, sizeof(%s) * (size_t)(%s));\n", emit_ref(e, g->output),
      g->nodes[g->output].dt == DT_I32 ? "int32_t" : e->real, emit_numel(g->nodes[g->output].shape));
    end_body(e);
    P(e, "}\n\n");
}

static void train_fn(Emitter *e)
{
    const Graph *g = e->m->train;
    Sig s = pass_sig(e, e->real, "train_forward", 1, 1, 0);
    open_pass(e, s);
    begin_body(e, g, 0);
    P(e, "    m->n_ = n;\n");
    pass_batch(e, g, 0, g->fwd_end, 1);
    e->nf_pass = "forward", e->nf_fail = emit_fmt("return %s;", emit_lit(e, NAN));
    if (e->opt->check_numerics)
        P(e, "    m->numerics_[0] = 0;\n");
    for (int i = 0; i < e->m->ninputs; i++)
        P(e, "    m->in_[%d] = %s;\n", i, e->m->inputs[i].cname);
    for (int i = 0; i < e->m->nlabels; i++)
        P(e, "    m->lab_[%d] = %s;\n", i, e->m->labels[i].cname);
    node_range(e, g, 0, g->fwd_end);
    for (int i = 0; i < g->nupdates; i++) {
        const Tensor *t = &e->m->state[g->update_state[i]];
        P(e, "    /* update %s */\n", t->path);
        P(e, "    memmove(S + %lld, %s, sizeof(%s) * %lld);\n", (long long)t->offset, emit_ref(e, g->update_value[i]),
          e->real, (long long)ir_numel(t->shape));
    }
    for (int i = 0; i < g->ncounts; i++) { /* an i64 counter, 8-byte aligned */
        const Tensor *t = &e->m->state[g->count_state[i]];
        P(e, "    ((int64_t *)(void *)(S + %lld))[0] += %lld; /* %s */\n", (long long)t->offset, g->count_by[i],
          t->path);
    }
    for (int i = 0; i < g->nsummaries; i++)
        P(e, "    m->summary_[%d] = %s;\n", i, emit_scalar(e, g->summary_value[i]));
    P(e, "    return %s;\n", emit_scalar(e, g->loss));
    end_body(e);
    P(e, "}\n\n");
    isa_variants(e, s, NULL);
}

/* The gradients summed across the processes (dist.c's dist_grads), in
 * buckets of at most NNC_BUCKET floats that are contiguous in m->grads:
 * each starts its sum as soon as the backward pass has written all its
 * params (fin: the last one's node, or g->n for the gradients copied at
 * the end), so the sums overlap the rest of the pass.  The pass goes back
 * through the layers, finishing params roughly from the last in m->grads
 * to the first, so the buckets are cut in that order: neighbours in
 * memory, whichever of them finishes first (a layer's bias may finish
 * before its weight, or after).  Each bucket costs a latency per sum
 * across the network: few large ones, not one per layer (the cost model
 * in docs/scaling.md). */
#define NNC_BUCKET (1 << 18) /* 1 MiB of floats: docs/scaling.md, "Bucket size" */

static int bucket_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] < y[0]) - (x[0] > y[0]); /* by offset, from the last */
}

static void grad_buckets(Emitter *e, const Graph *g)
{
    const Model *m = e->m;
    int64_t(*ps)[3] = malloc(sizeof(int64_t[3]) * (size_t)(m->nparams + 1)); /* lo, hi, fin */
    int np = 0;
    for (int p = 0; g->dist_grads && p < m->nparams; p++) {
        int t = g->param_grad[p];
        if (t < 0 || !g->dist_grads[p])
            continue;
        int r = plan_storage_root(g, t), at = g->n;
        const IrNode *rn = &g->nodes[r];
        if (rn->buf >= 0 && g->bufs[rn->buf].param_grad == p) { /* written in place: final after t, r, r's loop */
            at = t > r ? t : r;
            if (rn->fused == 2 && rn->home > at)
                at = rn->home;
        }
        ps[np][0] = m->params[p].offset, ps[np][1] = m->params[p].offset + ir_numel(m->params[p].shape);
        ps[np][2] = at, np++;
    }
    qsort(ps, (size_t)np, sizeof ps[0], bucket_cmp);
    e->buckets = calloc((size_t)np + 1, sizeof(Bucket));
    e->nbuckets = 0;
    for (int k = 0; k < np; k++) {
        Bucket *b = e->nbuckets ? &e->buckets[e->nbuckets - 1] : NULL;
        if (b && b->lo == ps[k][1] && b->hi - ps[k][0] <= NNC_BUCKET) {
            b->lo = ps[k][0];
            b->fin = ps[k][2] > b->fin ? (int)ps[k][2] : b->fin;
            continue;
        }
        e->buckets[e->nbuckets++] = (Bucket){ps[k][0], ps[k][1], (int)ps[k][2], 0};
    }
    if (!e->nbuckets) {
        free(e->buckets);
        e->buckets = NULL;
    }
    e->in_flight = 0;
    free(ps);
}

static void backward_fn(Emitter *e)
{
    const Graph *g = e->m->train;
    Sig s = pass_sig(e, "void", "backward", 0, 0, 0);
    open_pass(e, s);
    begin_body(e, g, 1);
    P(e, "    const int n = m->n_;\n    (void)n;\n");
    pass_batch(e, g, g->fwd_end, g->n, 0);
    P(e, "    const int dist = nnc_dist_size() > 1;\n    (void)dist;\n");
    grad_buckets(e, g);
    e->nf_pass = "backward", e->nf_fail = "return;";
    if (e->opt->check_numerics) /* the training pass stopped: nothing to go back through */
        P(e, "    if (m->numerics_[0])\n        return;\n");
    /* frozen and unreachable params: their gradient is 0 */
    for (int p = 0; p < e->m->nparams; p++)
        if (g->param_grad[p] < 0)
            P(e, "    memset(G + %lld, 0, sizeof(%s) * %lld); /* %s */\n", (long long)e->m->params[p].offset, e->real,
              (long long)ir_numel(e->m->params[p].shape), e->m->params[p].path);
    node_range(e, g, g->fwd_end, g->n);
    for (int p = 0; p < e->m->nparams; p++) {
        int t = g->param_grad[p];
        if (t < 0)
            continue;
        const IrNode *r = &g->nodes[plan_storage_root(g, t)];
        if (r->buf >= 0 && g->bufs[r->buf].param_grad == p)
            continue;
        P(e, "    /* d %s */\n", e->m->params[p].path);
        if (r->op == IR_CONST || (r->fused == 1))
            P(e, "    for (int64_t i = 0; i < %lld; i++) G[%lld + i] = %s;\n",
              (long long)ir_numel(e->m->params[p].shape), (long long)e->m->params[p].offset, emit_scalar(e, t));
        else
            P(e, "    memcpy(G + %lld, %s, sizeof(%s) * %lld);\n", (long long)e->m->params[p].offset, emit_ref(e, t),
              e->real, (long long)ir_numel(e->m->params[p].shape));
    }
    after_node(e, g->n); /* the buckets of the gradients copied above, and any left */
    if (e->buckets)
        P(e, "    if (dist)\n        nnc_dist_wait_all();\n");
    free(e->buckets);
    e->buckets = NULL;
    e->nbuckets = e->in_flight = 0;
    end_body(e);
    P(e, "}\n\n");
    isa_variants(e, s, NULL);
}

/* The inference pass, then the loss and the metrics: the infer graph's
 * nodes from core_end on.  With variants, the body holds only the
 * latter, and the pass calls the inference pass's own dispatch first. */
static void eval_fn(Emitter *e)
{
    const Graph *g = e->m->eval;
    Sig s = pass_sig(e, "void", "eval", 1, 1, 1);
    /* a failed check: the loss and the metrics NaN */
    const char *fail = emit_fmt("*loss = %s;", emit_lit(e, NAN));
    for (int i = 0; i < g->nmetrics; i++)
        fail = emit_fmt("%s metrics[%d] = %s;", fail, i, emit_lit(e, NAN));
    e->nf_pass = "eval", e->nf_fail = emit_fmt("{ %s return; }", fail);
    const char *after_infer =
        e->opt->check_numerics ? emit_fmt("    if (m->numerics_[0])\n        %s\n", e->nf_fail) : "";
    if (multi_isa(e))
        P(e, "/* eval after the inference pass: the loss and the metrics. */\n");
    open_pass(e, s);
    begin_body(e, g, 0);
    void_params(e, 1);
    if (!multi_isa(e))
        P(e, "%s%s", call_infer(e), after_infer);
    pass_batch(e, g, g->core_end, g->n, 0);
    node_range(e, g, g->core_end, g->n);
    P(e, "    *loss = %s;\n", emit_scalar(e, g->loss));
    for (int i = 0; i < g->nmetrics; i++)
        P(e, "    metrics[%d] = %s;\n", i, g->metrics[i] >= 0 ? emit_scalar(e, g->metrics[i]) : "NAN");
    if (!g->nmetrics)
        P(e, "    (void)metrics;\n");
    end_body(e);
    P(e, "}\n\n");
    isa_variants(e, s, emit_fmt("%s%s", call_infer(e), after_infer));
}

/* ---- the tensor table, init, release, save, load --------------------------------- */

static const char *init_enum(InitKind k)
{
    static const char *const names[] = {"ZEROS",          "ONES",          "CONSTANT",   "NORMAL",   "UNIFORM",
                                        "GLOROT_UNIFORM", "GLOROT_NORMAL", "HE_UNIFORM", "HE_NORMAL"};
    return emit_fmt("NNC_INIT_%s", names[k]);
}

/* One row of a tensor table (nnc_tensor_info) for t, named `name`. */
static void info_row(Emitter *e, const Tensor *t, const char *name, const char *indent)
{
    P(e, "%s{\"%s\", %d, {", indent, name, t->shape.nd);
    for (int k = 0; k < t->shape.nd; k++)
        P(e, "%s%lld", k ? ", " : "", (long long)t->shape.d[k]);
    if (!t->shape.nd)
        P(e, "0");
    P(e, "}, %lld, %lld, %d, %d, %s},\n", (long long)t->offset, (long long)ir_numel(t->shape), !t->state, t->frozen,
      t->counter ? "NNC_I64" : "NNC_F32");
}

static void tensor_table(Emitter *e)
{
    int n = e->m->nparams + e->m->nstate;
    if (e->m->nstate) /* the offsets below are the struct's layout (sort_tensors) */
        P(e, "_Static_assert(sizeof(%s_state) == sizeof(%s) * %s_NUM_STATE, \"state layout\");\n", e->m->prefix,
          e->real, emit_upper(e->m->prefix));
    P(e, "static const nnc_tensor_info tensor_info_[%d] = {\n", n ? n : 1);
    for (int s = 0; s < 2; s++) {
        const Tensor *ts = s ? e->m->state : e->m->params;
        int cnt = s ? e->m->nstate : e->m->nparams;
        for (int i = 0; i < cnt; i++)
            info_row(e, &ts[i], ts[i].path, "    ");
    }
    if (!n)
        P(e, "    {\"\", 0, {0}, 0, 0, 0, 0, NNC_F32},\n");
    P(e, "};\n\n");
    P(e,
      "const nnc_tensor_info *%s_tensors(size_t *count)\n{\n    if (count)\n        *count = %d;\n    return "
      "tensor_info_;\n}\n\n",
      e->m->prefix, n);
}

static const char *cstr(const char *s)
{
    char *o = malloc(strlen(s) * 4 + 1), *q = o;
    if (!o)
        abort();
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            *q++ = '\\', *q++ = (char)c;
        else if (c < 32 || c == 127)
            q += sprintf(q, "\\%03o", c);
        else
            *q++ = (char)c;
    }
    *q = 0;
    return o;
}

/* `from "file"` fields: after the initializers, each such field's params
 * and state are loaded from a safetensors file whose names are relative to
 * the field (the state_dict of that sub-module).  The file must hold
 * exactly those tensors; a failure makes init fail with errno EINVAL and
 * nnc_error() saying why. */
static void from_loads(Emitter *e)
{
    int total = e->m->nparams + e->m->nstate;
    char *done = calloc((size_t)total + 1, 1);
    for (int k = 0; k < total; k++) {
        const Tensor *t = k < e->m->nparams ? &e->m->params[k] : &e->m->state[k - e->m->nparams];
        if (!t->from || done[k])
            continue;
        size_t plen = strlen(t->from_prefix);
        int cnt = 0;
        P(e, "    {\n        static const nnc_tensor_info from_[] = {\n");
        for (int j = k; j < total; j++) {
            const Tensor *u = j < e->m->nparams ? &e->m->params[j] : &e->m->state[j - e->m->nparams];
            if (!u->from || strcmp(u->from_prefix, t->from_prefix) || strcmp(u->from, t->from))
                continue;
            done[j] = 1;
            cnt++;
            const char *rel =
                plen && !strncmp(u->path, t->from_prefix, plen) && u->path[plen] == '.' ? u->path + plen + 1 : u->path;
            info_row(e, u, rel, "            ");
        }
        P(e, "        };\n");
        P(e, "        if (nnc_st_load(\"%s\", from_, %d, (float *)m->params, (float *)m->state) != 0) {\n",
          cstr(t->from), cnt);
        P(e, "            %s_release(m);\n            errno = EINVAL;\n            return -1;\n        }\n    }\n",
          e->m->prefix);
    }
    free(done);
}

/* The most elements one example puts in a batched tensor of the model:
 * max_batch times it must fit in one tensor (IR_LIMIT_ELEMS), as the
 * GEMMs take int sizes. */
static int64_t per_example_max(const Model *m)
{
    int64_t most = 1;
    const Graph *gs[2] = {m->train, m->infer};
    for (int k = 0; k < 2; k++)
        for (int i = 0; gs[k] && i < gs[k]->n; i++) {
            const IrNode *n = &gs[k]->nodes[i];
            if (n->fused >= 0 && n->shape.bd >= 0 && ir_numel(n->shape) > most)
                most = ir_numel(n->shape);
        }
    return most;
}

/* FNV-1a of the model's graphs as --dump prints them: ops, shapes and
 * constants, so two processes whose models differ in anything they
 * compute disagree (nnc_dist_check). */
static uint64_t model_hash(const Model *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        abort();
    fprintf(f, "%s %lld %lld\n", m->prefix, (long long)m->num_params, (long long)m->num_state);
    const Graph *gs[2] = {m->infer, m->train};
    for (int k = 0; k < 2; k++)
        if (gs[k])
            ir_dump(m, gs[k], f, 0);
    fclose(f);
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)text[i]) * UINT64_C(0x100000001b3);
    free(text);
    return h;
}

/* s as the inside of a C string literal */
static const char *c_escape(const char *s)
{
    const char *r = "";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            r = emit_fmt("%s\\%c", r, c);
        else if (c < 32 || c > 126)
            r = emit_fmt("%s\\%03o", r, c);
        else
            r = emit_fmt("%s%c", r, c);
    }
    return r;
}

/* On several processes: a model that cannot split its batch refuses to
 * start; the processes check that they run the same model; the runtime
 * reserves the scratch of its sums (the gradients, the largest value
 * completed at once). */
static void dist_init(Emitter *e)
{
    const Model *m = e->m;
    if (e->opt->f64)
        return;
    int64_t small = 4; /* a loss's total, count and flag */
    const Graph *gs[2] = {m->infer, m->train};
    for (int k = 0; k < 2; k++)
        for (int i = 0; gs[k] && i < gs[k]->n; i++) {
            const IrNode *n = &gs[k]->nodes[i];
            if ((n->global || n->op == IR_ALLREDUCE) && n->fused >= 0) {
                int64_t c = n->op == IR_BN_STATS ? 2 * gs[k]->nodes[n->in[0]].shape.d[1] : ir_numel(n->shape);
                small = c > small ? c : small;
            }
        }
    P(e, "    if (nnc_dist_size() > 1) {\n");
    if (m->dist_refuse)
        P(e,
          "        nnc_fail(\"%%s\", \"model %s cannot run on several processes: %s\");\n        %s_release(m);\n      "
          "  errno = "
          "EINVAL;\n        return -1;\n",
          m->name, c_escape(m->dist_refuse), m->prefix);
    else
        P(e,
          "        if (nnc_dist_check(\"model %s\", UINT64_C(0x%016llx)) != 0) {\n            %s_release(m);\n         "
          "   "
          "errno = EINVAL;\n            return -1;\n        }\n"
          "        if (nnc_dist_reserve(%lld, %lld) != 0) {\n            %s_release(m);\n            errno = ENOMEM;\n "
          " "
          "          return -1;\n        }\n",
          m->name, (unsigned long long)model_hash(m), m->prefix, (long long)m->num_params, (long long)small, m->prefix);
    P(e, "    }\n");
}

static void init_fns(Emitter *e)
{
    const char *p = e->m->prefix;
    const Sizes z = arena_sizes(e);
    P(e, "int %s_init(%s *m, int max_batch, uint64_t seed)\n{\n", p, p);
    P(e, "    memset(m, 0, sizeof *m);\n");
    P(e, "    if (max_batch < 1) {\n        errno = EINVAL;\n        return -1;\n    }\n");
    /* the kernels' work after the arena, one slice per thread: the
     * threads it has now are the most the model will use (threads.c) */
    P(e, "    const uint64_t work = %lldu * (uint64_t)nnc_threads();\n", (long long)z.work);
    /* sizes in 64 bits, checked before anything is allocated: a tensor
     * of max_batch examples holds at most IR_LIMIT_ELEMS elements, the
     * arena at most IR_LIMIT_TOTAL floats (or what size_t can count) */
    const int64_t most = per_example_max(e->m), mb = IR_LIMIT_ELEMS / most;
    P(e,
      "    /* sizes in 64 bits, checked before anything is allocated: a tensor holds at most %lld elements, the "
      "arena at most %lld floats */\n",
      (long long)IR_LIMIT_ELEMS, (long long)IR_LIMIT_TOTAL);
    P(e,
      "    const uint64_t limit = (uint64_t)SIZE_MAX / sizeof(%s) < %lldu ? (uint64_t)SIZE_MAX / sizeof(%s) : %lldu;\n",
      e->real, (long long)IR_LIMIT_TOTAL, e->real, (long long)IR_LIMIT_TOTAL);
    P(e, "    if (%s%lldu + work > limit",
      mb < 2147483647 ? emit_fmt("(uint64_t)max_batch > %lldu || ", (long long)mb) : "", (long long)z.fixed);
    if (z.batched)
        P(e, " ||\n        (uint64_t)max_batch > (limit - %lldu - work) / %lldu", (long long)z.fixed,
          (long long)z.batched);
    P(e, ") {\n        errno = EOVERFLOW;\n        return -1;\n    }\n");
    P(e, "    const size_t arena = (size_t)(%lldu + %lldu * (uint64_t)max_batch + work);\n", (long long)z.fixed,
      (long long)z.batched);
    P(e, "    m->params = nnc_alloc_zeroed(1, sizeof(%s_params));\n", p);
    P(e, "    m->grads = nnc_alloc_zeroed(1, sizeof(%s_params));\n", p);
    if (e->m->nstate)
        P(e, "    m->state = nnc_alloc_zeroed(1, sizeof(%s_state));\n", p);
    P(e, "    m->arena_ = nnc_alloc_zeroed(arena, sizeof(%s));\n", e->real);
    P(e, "    if (!m->params || !m->grads || !m->arena_%s) {\n", e->m->nstate ? " || !m->state" : "");
    P(e, "        %s_release(m);\n        errno = ENOMEM;\n        return -1;\n    }\n", p);
    P(e, "    m->max_batch = max_batch;\n    nnc_rng_seed(&m->rng_, seed);\n");
    P(e, "    m->work_ = m->arena_ + (arena - (size_t)work);\n    m->work_len_ = (int64_t)work;\n");
    for (int s = 0; s < 2; s++) {
        const Tensor *ts = s ? e->m->state : e->m->params;
        int cnt = s ? e->m->nstate : e->m->nparams;
        for (int i = 0; i < cnt; i++) {
            const Tensor *t = &ts[i];
            if (t->counter) { /* int64_t, 8-byte aligned (sort_tensors) */
                P(e, "    ((int64_t *)(void *)((%s *)m->state + %lld))[0] = %lld; /* %s */\n", e->real,
                  (long long)t->offset,
                  t->init == INIT_ONES           ? 1LL
                      : t->init == INIT_CONSTANT ? (long long)t->init_a
                                                 : 0LL,
                  t->path);
                continue;
            }
            P(e, "    nnc_init_%s((%s *)m->%s + %lld, %d, (const int[]){", e->opt->f64 ? "f64" : "f32", e->real,
              s ? "state" : "params", (long long)t->offset, t->shape.nd);
            for (int k = 0; k < t->shape.nd; k++)
                P(e, "%s%lld", k ? ", " : "", (long long)t->shape.d[k]);
            if (!t->shape.nd)
                P(e, "0");
            P(e, "}, %s, %.17g, %.17g, &m->rng_); /* %s */\n", init_enum(t->init), t->init_a, t->init_b, t->path);
        }
    }
    from_loads(e);
    dist_init(e);
    P(e, "    return 0;\n}\n\n");
    P(e, "void %s_release(%s *m)\n{\n", p, p);
    P(e, "    free(m->params);\n    free(m->grads);\n    free(m->state);\n    free(m->arena_);\n");
    P(e, "    memset(m, 0, sizeof *m);\n}\n\n");
    if (!e->opt->f64) {
        P(e, "int %s_save(const %s *m, const char *path)\n{\n", p, p);
        P(e,
          "    return nnc_st_save(path, tensor_info_, %d, (const float *)m->params, (const float *)m->state);\n}\n\n",
          e->m->nparams + e->m->nstate);
        P(e, "int %s_load(%s *m, const char *path)\n{\n", p, p);
        P(e, "    return nnc_st_load(path, tensor_info_, %d, (float *)m->params, (float *)m->state);\n}\n\n",
          e->m->nparams + e->m->nstate);
        P(e, "int %s_load_non_strict(%s *m, const char *path)\n{\n", p, p);
        P(e, "    return nnc_st_load_non_strict(path, tensor_info_, %d, (float *)m->params, (float *)m->state);\n}\n\n",
          e->m->nparams + e->m->nstate);
    }
}

/* ---- the C file ------------------------------------------------------------------ */

void emit_source(Emitter *e, const char *hname, const char *fname)
{
    emit_banner(e, fname);
    P(e, "#include \"%s\"\n\n", hname);
    /* nnc_math.h: the tanh and exp polynomials and the derivatives the
     * loops call, as static inline functions */
    P(e,
      "#include <errno.h>\n#include <math.h>\n#include <stdlib.h>\n#include <string.h>\n\n#include \"nnc_math.h\"\n\n");
    P(e, "_Static_assert(sizeof(%s_params) == sizeof(%s) * %s, \"params must be a flat %s array\");\n\n", e->m->prefix,
      e->real, e->m->nparams ? emit_fmt("%s_NUM_PARAMS", emit_upper(e->m->prefix)) : "1", e->real);
    if (e->m->nmetrics) {
        P(e, "const char *const %s_metric_names[%d] = {", e->m->prefix, e->m->nmetrics);
        for (int i = 0; i < e->m->nmetrics; i++)
            P(e, "%s\"%s\"", i ? ", " : "", e->m->metric_names[i]);
        P(e, "};\n\n");
    }
    if (e->m->train && e->m->train->nsummaries) {
        P(e, "const char *const %s_summary_names[%d] = {", e->m->prefix, e->m->train->nsummaries);
        for (int i = 0; i < e->m->train->nsummaries; i++)
            P(e, "%s\"%s\"", i ? ", " : "", e->m->train->summary_name[i]);
        P(e, "};\n\n");
    }
    tensor_table(e);
    init_fns(e);
    if (e->opt->check_numerics)
        P(e, "const char *%s_numerics_error(const %s *m) { return m->numerics_[0] ? m->numerics_ : NULL; }\n\n",
          e->m->prefix, e->m->prefix);
    infer_fn(e);
    forward_fn(e);
    if (e->m->has_loss) {
        train_fn(e);
        backward_fn(e);
        eval_fn(e);
    }
}
