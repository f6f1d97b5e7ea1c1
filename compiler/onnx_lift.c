/* onnx_lift.c — an ONNX graph lifted to the language (lift_*): the third
 * stage of `nnc import`, after the reader and fold.
 *
 * Four passes:
 *
 * 1. steps: every node that fold did not evaluate becomes a step, one
 *    value each; runs of nodes that are one thing in the language merge
 *    into one step: Transpose + MatMul + Add on a weight (PyTorch's
 *    Linear), the ten nodes of a decomposed LayerNorm, the five of an erf
 *    GELU, and a Where against a constant triangle (a causal mask).
 * 2. modules: the initializers' names give the module tree
 *    (`layer1.0.conv1.weight`: module layer1, its element 0, its field
 *    conv1, a param weight); each step goes to the module its node's
 *    scope names (PyTorch's `/layer1/layer1.0/conv1/Conv`) or whose params
 *    it reads.
 * 3. layers, bottom-up: a module whose steps are one standard-library
 *    layer becomes a field of that layer (Conv2D, BatchNorm, Dense,
 *    LayerNorm, Embedding); a module of numbered children applied in
 *    turn becomes a list; any other becomes a `layer` declaration whose
 *    call is its steps, shared by the siblings that print the same.  A
 *    module can be called as a unit only when its steps read what comes
 *    before them and give one value to what comes after; when one cannot,
 *    or a name cannot be a field path, the model is written flat: every
 *    param at the top, named by the rule of docs/import.md.
 * 4. expressions: each step prints as the language's primitive or
 *    operator; a value read once is written where it is read, others get
 *    a `let`.  Each statement's comment names the ONNX nodes it came from.
 */
#include "onnx_import.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "load.h"
#include "model.h"
#include "source.h"

enum { S_NODE, S_LINEAR, S_LAYERNORM, S_GELU, S_CAUSAL, S_CALL };

typedef struct Module Module;

typedef struct Step {
    int kind;
    int node;   /* the ONNX node it prints (S_NODE), or the first of its run */
    int *nodes; /* every node of the run, for the comment */
    int nnodes;
    FoldVal *in[8]; /* S_LINEAR: x, weight, bias; S_LAYERNORM: x, weight, bias; S_GELU, S_CAUSAL: x */
    int nin;
    FoldVal *out;
    int outk;            /* which output of the node */
    double eps;          /* S_LAYERNORM */
    Module *mod;         /* the module it is in */
    Module *callee;      /* S_CALL */
    int order;           /* position in the graph's order */
    int dead;            /* merged into a call */
    Node *expr;          /* its expression, once printed */
    const char *var;     /* its let name, when it has one */
    int reads;           /* reads of its value inside its module's body */
    int body;            /* the body being built when it was printed */
    const char *comment; /* the node names of what its expression holds */
    int weight;          /* the steps its expression holds */
    int inlined;         /* written inside a later statement of its body */
} Step;

struct Module {
    char *path; /* "layer1.0.conv1"; "" for the root */
    char *name; /* the last component */
    Module *parent;
    Module **kids;
    int nkids;
    FoldVal **params; /* own params, by leaf name */
    const char **pnames;
    int *pstate; /* a `state`, not a `param` */
    int nparams;
    Step **steps; /* own steps, in order (children's as S_CALLs) */
    int nsteps;
    int is_list;
    int chain;  /* a list applied element after element */
    int hidden; /* a list not called as a unit: its elements are called as name[i] */
    FoldVal **ins;
    int nins;
    FoldVal *out;
    Node *field; /* the field's layer expression in the parent */
    Node *decl;  /* its `layer` declaration, before sharing */
    char *text;  /* the declaration printed, for sharing */
    const char *declname;
    int std; /* a standard-library layer */
    int bn;  /* a std BatchNorm: num_batches_tracked in the checkpoint */
};

typedef struct L {
    const Fold *f;
    const OnnxModel *m;
    FoldStatus status;
    Step **steps;
    int nsteps, capsteps;
    Step **of_val; /* per value index: the step that computes it */
    Module *root;
    int flat;
    Node *file;
    NodeVec decls;
    LiftTensor *tensors;
    int ntensors, captensors;
    const char *batch;        /* the batch dim's name in the source */
    int *rd_start;            /* per value index v: its readers are rd[rd_start[v] .. rd_start[v + 1]) */
    int *rd;                  /* the nodes (not folded) that read each value, in the graph's order */
    unsigned char *graph_out; /* per value index: a graph output */
    int *mark, stamp;         /* per value index: signature's scratch, valid when mark[v] == stamp */
} L;

/* ---- messages ------------------------------------------------------------ */

static int fail(L *l, FoldStatus st, const OnnxNode *n, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (l->status != FOLD_OK)
        return -1; /* one error line: the first */
    fold_report(l->m, n, st, msg);
    l->status = st;
    return -1;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

static char *xstrdup(const char *s)
{
    char *p = ast_strndup(s, strlen(s));
    return p;
}

#define PUSH(arr, n, cap, v) \
    do { \
        if ((n) == (cap)) { \
            (cap) = (cap) ? 2 * (cap) : 8; \
            (arr) = realloc((arr), (size_t)(cap) * sizeof *(arr)); \
            if (!(arr)) \
                abort(); \
        } \
        (arr)[(n)++] = (v); \
    } while (0)

/* ---- the tree's nodes ------------------------------------------------------ */

static Node *mk(NodeKind k) { return ast_new(k, (Loc){0}); }

static Node *ident(const char *s)
{
    Node *n = mk(ND_IDENT);
    n->name = xstrdup(s);
    return n;
}

static Node *neg(Node *a)
{
    Node *n = mk(ND_UNARY);
    n->op = OP_NEG;
    n->a = a;
    return n;
}

static Node *num_i(long long v)
{
    if (v < 0)
        return neg(num_i(-v));
    Node *n = mk(ND_INT);
    n->ival = v;
    return n;
}

static Node *num_f(double v)
{
    if (v < 0 || (v == 0 && signbit(v)))
        return neg(num_f(-v));
    Node *n = mk(ND_FLOAT);
    n->fval = v;
    return n;
}

static Node *boolean(int v)
{
    Node *n = mk(ND_BOOL);
    n->ival = v;
    return n;
}

static Node *str(const char *s)
{
    Node *n = mk(ND_STR);
    n->str = xstrdup(s);
    return n;
}

static Node *bin(Op op, Node *a, Node *b)
{
    Node *n = mk(ND_BINARY);
    n->op = op;
    n->a = a, n->b = b;
    return n;
}

static Node *call(const char *fn, Node *x)
{
    Node *n = mk(ND_CALL);
    n->a = ident(fn);
    if (x) {
        Node *arg = mk(ND_ARG);
        arg->a = x;
        ast_push(&n->list, arg);
    }
    return n;
}

static Node *call_on(Node *callee)
{
    Node *n = mk(ND_CALL);
    n->a = callee;
    return n;
}

/* a positional (name NULL) or named argument */
static Node *arg(Node *c, const char *name, Node *v)
{
    Node *a = mk(ND_ARG);
    a->name = name ? xstrdup(name) : NULL;
    a->a = v;
    ast_push(&c->list, a);
    return c;
}

static Node *list_i(const int64_t *v, int n)
{
    Node *l = mk(ND_LIST);
    for (int k = 0; k < n; k++)
        ast_push(&l->list, num_i(v[k]));
    return l;
}

/* ---- values -------------------------------------------------------------- */

static int vidx(const L *l, const FoldVal *v) { return (int)(v - l->f->vals); }

static Step *step_of(const L *l, const FoldVal *v) { return v ? l->of_val[vidx(l, v)] : NULL; }

static const OnnxNode *node_at(const L *l, int k) { return &l->m->nodes[k]; }

static FoldVal *in_val(const L *l, const OnnxNode *n, int k)
{
    return k < n->ninputs ? fold_val(l->f, n->inputs[k]) : NULL;
}

static int is_const(const FoldVal *v) { return v && v->kind == FV_CONST; }

/* A constant's one value (all elements equal), or -1. */
static int uniform(const FoldVal *v, double *out)
{
    if (!is_const(v) || v->count < 1)
        return -1;
    for (int64_t k = 0; k < v->count; k++) {
        double x = v->f ? v->f[k] : (double)v->i[k].c;
        if (v->i && v->i[k].b)
            return -1;
        if (k == 0)
            *out = x;
        else if (x != *out && !(isnan(x) && isnan(*out)))
            return -1;
    }
    return 0;
}

static int scalar_const(const FoldVal *v, double *out) { return is_const(v) && v->count == 1 ? uniform(v, out) : -1; }

/* ---- pass 1: steps --------------------------------------------------------- */

/* The readers of every value, indexed once: the matches of pass 1 ask
 * for them at nearly every node, and a scan of the graph each time made
 * the import quadratic in its nodes. */
static void index_readers(L *l)
{
    const OnnxModel *m = l->m;
    int nv = l->f->nvals;
    l->rd_start = xcalloc((size_t)nv + 2, sizeof *l->rd_start);
    int *last = xcalloc((size_t)nv + 1, sizeof *last); /* the last node counted for a value, + 1 */
    int *fill = NULL;
    for (int pass = 0; pass < 2; pass++) {
        memset(last, 0, ((size_t)nv + 1) * sizeof *last);
        for (int k = 0; k < m->nnodes; k++) {
            if (l->f->folded[k])
                continue;
            const OnnxNode *nd = &m->nodes[k];
            for (int j = 0; j < nd->ninputs; j++) {
                const FoldVal *v = fold_val(l->f, nd->inputs[j]);
                if (!v || last[vidx(l, v)] == k + 1) /* a node that reads v twice reads it once */
                    continue;
                last[vidx(l, v)] = k + 1;
                if (pass == 0)
                    l->rd_start[vidx(l, v) + 2]++;
                else
                    l->rd[fill[vidx(l, v)]++] = k;
            }
        }
        if (pass == 0) {
            for (int v = 0; v < nv; v++)
                l->rd_start[v + 2] += l->rd_start[v + 1];
            l->rd = xcalloc((size_t)l->rd_start[nv + 1] + 1, sizeof *l->rd);
            fill = l->rd_start + 1; /* counts up to each value's end */
        }
    }
    free(last);
}

/* The nodes (not folded) that read value v. */
static int readers(const L *l, const FoldVal *v, int *out, int max)
{
    int b = l->rd_start[vidx(l, v)], n = l->rd_start[vidx(l, v) + 1] - b;
    for (int k = 0; k < n && k < max; k++)
        out[k] = l->rd[b + k];
    return n;
}

/* The one node that reads v, if it has exactly one reader and v is no graph output. */
static int sole_reader(const L *l, const FoldVal *v, const char *op)
{
    int r[2];
    if (v->uses != 1 || readers(l, v, r, 2) != 1)
        return -1;
    return !op || !strcmp(node_at(l, r[0])->op_type, op) ? r[0] : -1;
}

/* Steps in the graph's order (stable: a run sits where its last node was);
 * the lists are sorted but for an appended step, so this is linear then. */
static void sort_steps(Step **v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1]->order > v[j]->order; j--) {
            Step *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

static Step *new_step(L *l, int kind, int node)
{
    Step *s = xcalloc(1, sizeof *s);
    s->kind = kind;
    s->node = node;
    s->order = node;
    PUSH(l->steps, l->nsteps, l->capsteps, s);
    return s;
}

static void cover(Step *s, int node, unsigned char *taken)
{
    s->nodes = realloc(s->nodes, (size_t)(s->nnodes + 1) * sizeof *s->nodes);
    if (!s->nodes)
        abort();
    s->nodes[s->nnodes++] = node;
    taken[node] = 1;
}

static int is_op(const L *l, int k, const char *op) { return k >= 0 && !strcmp(node_at(l, k)->op_type, op); }

static int axes_last(const OnnxNode *n, const FoldVal *x)
{
    const OnnxAttr *a = fold_attr(n, "axes");
    return a && a->n == 1 && (a->ints[0] == -1 || a->ints[0] == x->rank - 1) && fold_attr_int(n, "keepdims", 1);
}

/* Transpose(W) -> MatMul(x, .) [-> Add(., b)] with W a [out, in] param. */
static int match_linear(L *l, int k, unsigned char *taken)
{
    const OnnxNode *t = node_at(l, k);
    FoldVal *w = in_val(l, t, 0);
    if (!w || w->kind != FV_PARAM || w->rank != 2)
        return 0;
    const OnnxAttr *perm = fold_attr(t, "perm");
    if (perm && !(perm->n == 2 && perm->ints[0] == 1 && perm->ints[1] == 0))
        return 0;
    FoldVal *wt = fold_val(l->f, t->outputs[0]);
    int mm = sole_reader(l, wt, "MatMul");
    if (mm < 0 || strcmp(node_at(l, mm)->inputs[1], wt->name))
        return 0;
    FoldVal *x = in_val(l, node_at(l, mm), 0), *y = fold_val(l->f, node_at(l, mm)->outputs[0]);
    if (!x || x->rank < 2)
        return 0;
    int add = sole_reader(l, y, "Add");
    FoldVal *b = NULL;
    if (add >= 0) {
        const OnnxNode *a = node_at(l, add);
        FoldVal *o = in_val(l, a, !strcmp(a->inputs[0], y->name) ? 1 : 0);
        if (o && o->kind == FV_PARAM && o->rank == 1 && o->dims[0].c == w->dims[0].c)
            b = o;
    }
    Step *s = new_step(l, S_LINEAR, mm);
    cover(s, k, taken);
    cover(s, mm, taken);
    s->in[0] = x, s->in[1] = w, s->in[2] = b, s->nin = 3;
    s->out = y;
    if (b) {
        cover(s, add, taken);
        s->out = fold_val(l->f, node_at(l, add)->outputs[0]);
        s->order = add;
    }
    return 1;
}

/* The decomposed LayerNorm PyTorch writes below opset 17:
 * ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul w, Add b. */
static int match_layernorm(L *l, int k, unsigned char *taken)
{
    const OnnxNode *rm = node_at(l, k);
    FoldVal *x = in_val(l, rm, 0), *mu = fold_val(l->f, rm->outputs[0]);
    if (!x || x->kind == FV_CONST || !axes_last(rm, x))
        return 0;
    int sub = sole_reader(l, mu, "Sub");
    if (sub < 0 || strcmp(node_at(l, sub)->inputs[0], x->name))
        return 0;
    FoldVal *d = fold_val(l->f, node_at(l, sub)->outputs[0]);
    int r[3];
    if (d->uses != 2 || readers(l, d, r, 3) != 2)
        return 0;
    int pw = is_op(l, r[0], "Pow") ? r[0] : r[1], dv = pw == r[0] ? r[1] : r[0];
    double e;
    if (!is_op(l, pw, "Pow") || !is_op(l, dv, "Div") || scalar_const(in_val(l, node_at(l, pw), 1), &e) || e != 2)
        return 0;
    int rm2 = sole_reader(l, fold_val(l->f, node_at(l, pw)->outputs[0]), "ReduceMean");
    if (rm2 < 0 || !axes_last(node_at(l, rm2), x))
        return 0;
    int ad = sole_reader(l, fold_val(l->f, node_at(l, rm2)->outputs[0]), "Add");
    double eps;
    if (ad < 0 || scalar_const(in_val(l, node_at(l, ad), 1), &eps))
        return 0;
    int sq = sole_reader(l, fold_val(l->f, node_at(l, ad)->outputs[0]), "Sqrt");
    if (sq < 0 || sole_reader(l, fold_val(l->f, node_at(l, sq)->outputs[0]), "Div") != dv)
        return 0;
    int mul = sole_reader(l, fold_val(l->f, node_at(l, dv)->outputs[0]), "Mul");
    if (mul < 0)
        return 0;
    FoldVal *w = in_val(l, node_at(l, mul), 1);
    int add = sole_reader(l, fold_val(l->f, node_at(l, mul)->outputs[0]), "Add");
    if (add < 0 || !w || w->kind != FV_PARAM || w->rank != 1)
        return 0;
    FoldVal *b = in_val(l, node_at(l, add), 1);
    if (!b || b->kind != FV_PARAM || b->rank != 1)
        return 0;
    Step *s = new_step(l, S_LAYERNORM, k);
    int run[] = {k, sub, pw, rm2, ad, sq, dv, mul, add};
    for (int j = 0; j < 9; j++)
        cover(s, run[j], taken);
    s->in[0] = x, s->in[1] = w, s->in[2] = b, s->nin = 3;
    s->eps = eps;
    s->out = fold_val(l->f, node_at(l, add)->outputs[0]);
    s->order = add;
    return 1;
}

/* erf GELU as PyTorch writes it: Div sqrt2, Erf, Add 1, Mul x, Mul 0.5. */
static int match_gelu(L *l, int k, unsigned char *taken)
{
    const OnnxNode *dv = node_at(l, k);
    double c;
    FoldVal *x = in_val(l, dv, 0);
    if (!x || scalar_const(in_val(l, dv, 1), &c) || fabs(c - sqrt(2.0)) > 1e-6)
        return 0;
    int erf = sole_reader(l, fold_val(l->f, dv->outputs[0]), "Erf");
    if (erf < 0)
        return 0;
    int ad = sole_reader(l, fold_val(l->f, node_at(l, erf)->outputs[0]), "Add");
    if (ad < 0 || scalar_const(in_val(l, node_at(l, ad), 1), &c) || c != 1)
        return 0;
    int m1 = sole_reader(l, fold_val(l->f, node_at(l, ad)->outputs[0]), "Mul");
    if (m1 < 0)
        return 0;
    const OnnxNode *mn = node_at(l, m1);
    if (strcmp(mn->inputs[0], x->name) && strcmp(mn->inputs[1], x->name))
        return 0;
    int m2 = sole_reader(l, fold_val(l->f, mn->outputs[0]), "Mul");
    if (m2 < 0 || scalar_const(in_val(l, node_at(l, m2), 1), &c) || c != 0.5)
        return 0;
    Step *s = new_step(l, S_GELU, k);
    int run[] = {k, erf, ad, m1, m2};
    for (int j = 0; j < 5; j++)
        cover(s, run[j], taken);
    s->in[0] = x, s->nin = 1;
    s->out = fold_val(l->f, node_at(l, m2)->outputs[0]);
    s->order = m2;
    return 1;
}

/* Where(mask, -inf, x) with mask true exactly above the diagonal of the
 * last two (equal) axes: causal_mask(x). */
static int match_causal(L *l, int k, unsigned char *taken)
{
    const OnnxNode *n = node_at(l, k);
    FoldVal *c = in_val(l, n, 0), *a = in_val(l, n, 1), *x = in_val(l, n, 2);
    double v;
    if (!is_const(c) || c->rank < 2 || scalar_const(a, &v) || !(isinf(v) && v < 0) || !x || x->rank < 2)
        return 0;
    int64_t R = c->dims[c->rank - 2].c, C = c->dims[c->rank - 1].c;
    if (R != C || x->dims[x->rank - 1].c != C || x->dims[x->rank - 2].c != R || x->dims[x->rank - 1].b)
        return 0;
    for (int64_t e = 0; e < c->count; e++) {
        int64_t j = e % C, i = (e / C) % R;
        int on = c->f ? c->f[e] != 0 : c->i[e].c != 0;
        if (on != (j > i))
            return 0;
    }
    for (int d = 0; d < c->rank - 2; d++)
        if (c->dims[d].c != 1)
            return 0;
    Step *s = new_step(l, S_CAUSAL, k);
    cover(s, k, taken);
    s->in[0] = x, s->nin = 1;
    s->out = fold_val(l->f, n->outputs[0]);
    return 1;
}

static int build_steps(L *l)
{
    unsigned char *taken = xcalloc((size_t)l->m->nnodes, 1);
    for (int k = 0; k < l->m->nnodes; k++) {
        if (l->f->folded[k] || taken[k])
            continue;
        const OnnxNode *n = node_at(l, k);
        if ((!strcmp(n->op_type, "Transpose") && match_linear(l, k, taken)) ||
            (!strcmp(n->op_type, "ReduceMean") && match_layernorm(l, k, taken)) ||
            (!strcmp(n->op_type, "Div") && match_gelu(l, k, taken)) ||
            (!strcmp(n->op_type, "Where") && match_causal(l, k, taken)))
            continue;
        /* one step per output that something reads (Split's several) */
        int any = 0;
        for (int j = 0; j < n->noutputs; j++) {
            FoldVal *o = n->outputs[j][0] ? &l->f->vals[l->f->node_out[k] + j] : NULL;
            if (!o || (!o->uses && j > 0))
                continue;
            Step *s = new_step(l, S_NODE, k);
            cover(s, k, taken);
            s->out = o;
            s->outk = j;
            for (int i = 0; i < n->ninputs && i < 8; i++)
                s->in[s->nin++] = in_val(l, n, i);
            any = 1;
        }
        if (!any)
            taken[k] = 1;
    }
    free(taken);
    sort_steps(l->steps, l->nsteps);
    l->of_val = xcalloc((size_t)l->f->nvals, sizeof *l->of_val);
    for (int i = 0; i < l->nsteps; i++)
        l->of_val[vidx(l, l->steps[i]->out)] = l->steps[i];
    return 0;
}

/* ---- pass 2: modules --------------------------------------------------------- */

static const char *const keywords[] = {
    "layer", "model",  "fn",    "let",    "param",   "state", "input", "label", "loss",     "metric", "return",  "if",
    "else",  "for",    "in",    "import", "hparams", "true",  "false", "self",  "training", "update", "summary", "from",
    "init",  "frozen", "where", "int",    "float",   "bool",  "f32",   "i32",   "i64",      "call",   NULL,
};

static int is_ident(const char *s, size_t n)
{
    if (!n || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return 0;
    for (size_t k = 1; k < n; k++)
        if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') ||
              s[k] == '_'))
            return 0;
    for (int k = 0; keywords[k]; k++)
        if (strlen(keywords[k]) == n && !strncmp(keywords[k], s, n))
            return 0;
    return !(n == 1 && s[0] == '_');
}

static int is_index(const char *s, size_t n)
{
    if (!n || n > 6 || (n > 1 && s[0] == '0'))
        return 0;
    for (size_t k = 0; k < n; k++)
        if (s[k] < '0' || s[k] > '9')
            return 0;
    return 1;
}

static Module *new_module(Module *parent, const char *name, size_t len)
{
    Module *m = xcalloc(1, sizeof *m);
    m->name = ast_strndup(name, len);
    m->parent = parent;
    if (parent) {
        size_t pl = strlen(parent->path);
        m->path = xcalloc(pl + len + 2, 1);
        if (pl)
            sprintf(m->path, "%s.%s", parent->path, m->name);
        else
            strcpy(m->path, m->name);
        parent->kids = realloc(parent->kids, (size_t)(parent->nkids + 1) * sizeof *parent->kids);
        if (!parent->kids)
            abort();
        parent->kids[parent->nkids++] = m;
    } else {
        m->path = xstrdup("");
    }
    return m;
}

static Module *child(Module *m, const char *name, size_t len)
{
    for (int k = 0; k < m->nkids; k++)
        if (strlen(m->kids[k]->name) == len && !strncmp(m->kids[k]->name, name, len))
            return m->kids[k];
    return NULL;
}

/* Per value index (of loss_states' fold): a state rather than a param,
 * and the f32 elements of a constant that became one. */
static const FoldVal *state_base;
static unsigned char *as_state;
/* Per value index: a state that const_states made of a constant tensor,
 * named by place_const rather than by its ONNX name. */
static unsigned char *const_state;
static float **const_data;

static void add_param(Module *m, FoldVal *v, const char *name)
{
    m->params = realloc(m->params, (size_t)(m->nparams + 1) * sizeof *m->params);
    m->pnames = realloc(m->pnames, (size_t)(m->nparams + 1) * sizeof *m->pnames);
    m->pstate = realloc(m->pstate, (size_t)(m->nparams + 1) * sizeof *m->pstate);
    if (!m->params || !m->pnames || !m->pstate)
        abort();
    m->params[m->nparams] = v;
    m->pstate[m->nparams] = as_state && as_state[v - state_base];
    m->pnames[m->nparams++] = xstrdup(name);
}

/* Puts param v under its module; 0 when its name is no field path. */
static int place_param(L *l, FoldVal *v)
{
    Module *m = l->root;
    const char *s = v->name;
    for (;;) {
        const char *dot = strchr(s, '.');
        size_t len = dot ? (size_t)(dot - s) : strlen(s);
        if (!dot) {
            if (!is_ident(s, len))
                return 0;
            for (int k = 0; k < m->nparams; k++)
                if (!strcmp(m->pnames[k], s))
                    return 0;
            add_param(m, v, s);
            return 1;
        }
        if (!is_ident(s, len) && !is_index(s, len))
            return 0;
        Module *c = child(m, s, len);
        m = c ? c : new_module(m, s, len);
        s = dot + 1;
    }
}

static Module *owner_of_param(const L *l, const FoldVal *v, Module *m)
{
    if (!m)
        m = l->root;
    for (int k = 0; k < m->nparams; k++)
        if (m->params[k] == v)
            return m;
    for (int k = 0; k < m->nkids; k++) {
        Module *r = owner_of_param(l, v, m->kids[k]);
        if (r)
            return r;
    }
    return NULL;
}

static int is_under(const Module *m, const Module *anc)
{
    for (; m; m = m->parent)
        if (m == anc)
            return 1;
    return 0;
}

/* Whether m has children, all of them numbered (a Sequential's) */
static int kids_numbered(const Module *m)
{
    for (int k = 0; k < m->nkids; k++)
        if (!is_index(m->kids[k]->name, strlen(m->kids[k]->name)))
            return 0;
    return m->nkids > 0;
}

/* The module that the dotted path rest[0..rl) ("0.conv1") names below m,
 * or NULL */
static Module *dotted_child(Module *m, const char *rest, size_t rl)
{
    while (m && rl) {
        const char *dot = memchr(rest, '.', rl);
        size_t cl = dot ? (size_t)(dot - rest) : rl;
        m = child(m, rest, cl);
        rest += cl + (dot ? 1 : 0);
        rl -= cl + (dot ? 1 : 0);
    }
    return m;
}

/* The module a node's scope names: PyTorch's node names are
 * /seg/seg/.../Op, each seg a module's name in its parent, except that
 * the elements of a Sequential or ModuleList are written parent.index. */
static Module *scope_module(const L *l, const OnnxNode *n)
{
    const char *s = n->name;
    Module *m = l->root;
    if (s[0] != '/')
        return m;
    s++;
    for (;;) {
        const char *slash = strchr(s, '/');
        if (!slash)
            return m; /* the last segment is the op */
        size_t len = (size_t)(slash - s);
        size_t nl = strlen(m->name);
        Module *c = NULL;
        if (m != l->root && len > nl + 1 && !strncmp(s, m->name, nl) && s[nl] == '.') {
            /* "layer1.0" inside layer1 (and "downsample.0" inside downsample) */
            c = dotted_child(m, s + nl + 1, len - nl - 1);
            /* an element without params of a Sequential (its ReLU): a
             * module of its own, so that the list keeps its numbering */
            if (!c && is_index(s + nl + 1, len - nl - 1) && !child(m, s + nl + 1, len - nl - 1)) {
                if (kids_numbered(m))
                    c = new_module(m, s + nl + 1, len - nl - 1);
            }
        } else {
            /* a top-level ModuleList's element "h.0": walk its dots */
            c = dotted_child(m, s, len);
        }
        if (!c)
            return m; /* a module without params (relu, gelu): its nodes belong to m */
        m = c;
        s = slash + 1;
    }
}

static int param_index(const Module *m, const char *leaf)
{
    for (int k = 0; k < m->nparams; k++)
        if (!strcmp(m->pnames[k], leaf))
            return k;
    return -1;
}

/* A constant tensor made a state (const_states): in the module of the
 * node that computes it, by PyTorch's scope, named constant, constant_2,
 * ...: its ONNX name (/Constant_output_0) names no field. */
static void place_const(L *l, FoldVal *v)
{
    Module *m = v->node >= 0 ? scope_module(l, node_at(l, v->node)) : l->root;
    char buf[32];
    snprintf(buf, sizeof buf, "constant");
    for (int j = 2; param_index(m, buf) >= 0 || child(m, buf, strlen(buf)); j++)
        snprintf(buf, sizeof buf, "constant_%d", j);
    add_param(m, v, xstrdup(buf));
}

static void add_step(Module *m, Step *s)
{
    m->steps = realloc(m->steps, (size_t)(m->nsteps + 1) * sizeof *m->steps);
    if (!m->steps)
        abort();
    m->steps[m->nsteps++] = s;
    s->mod = m;
}

static int params_of_step(const Step *s, FoldVal **out)
{
    int n = 0;
    for (int k = 0; k < s->nin; k++)
        if (s->in[k] && s->in[k]->kind == FV_PARAM)
            out[n++] = s->in[k];
    return n;
}

/* 0: placed; 1: the names do not nest */
static int assign_steps(L *l)
{
    for (int i = 0; i < l->nsteps; i++) {
        Step *s = l->steps[i];
        Module *m = scope_module(l, node_at(l, s->node));
        FoldVal *ps[8];
        int np = params_of_step(s, ps);
        for (int k = 0; k < np; k++) {
            Module *o = owner_of_param(l, ps[k], NULL);
            if (!o)
                return 1;
            if (is_under(o, m))
                m = o; /* deeper than the scope says (or no scope) */
            else if (!is_under(m, o))
                return 1; /* a param of another module (tied weights) */
        }
        for (int k = 0; k < np; k++)
            if (!is_under(m, owner_of_param(l, ps[k], NULL)))
                return 1;
        /* params must be the module's own or its ancestors' own: they
         * are read by name in the module's body only when they are its own */
        for (int k = 0; k < np; k++)
            if (owner_of_param(l, ps[k], NULL) != m)
                return 1;
        add_step(m, s);
    }
    return 0;
}

/* ---- pass 3: layers -------------------------------------------------------------- */

/* Is v computed by a step in module m's subtree (before collapsing: the
 * step's module is under m)? */
static int inside(const L *l, const FoldVal *v, const Module *m)
{
    Step *s = step_of(l, v);
    return s && !s->dead && is_under(s->mod, m);
}

static int is_graph_output(const L *l, const FoldVal *v) { return l->graph_out[vidx(l, v)]; }

/* The steps of m's subtree. */
static void subtree_steps(const L *l, const Module *m, Step ***out, int *n)
{
    *n = 0;
    *out = xcalloc((size_t)l->nsteps, sizeof **out);
    for (int i = 0; i < l->nsteps; i++)
        if (!l->steps[i]->dead && l->steps[i]->mod && is_under(l->steps[i]->mod, m))
            (*out)[(*n)++] = l->steps[i];
}

static int step_reads(const Step *s, FoldVal **out)
{
    if (s->kind == S_CALL) {
        for (int k = 0; k < s->callee->nins; k++)
            out[k] = s->callee->ins[k];
        return s->callee->nins;
    }
    for (int k = 0; k < s->nin; k++)
        out[k] = s->in[k];
    return s->nin;
}

/* m's inputs (values from before it) and its one output; 0 when it can
 * be called as a unit. */
static int signature(L *l, Module *m)
{
    Step **ss;
    int n;
    subtree_steps(l, m, &ss, &n);
    if (!n) {
        free(ss);
        return -1;
    }
    int first = ss[0]->order;
    m->ins = xcalloc(64, sizeof *m->ins);
    m->nins = 0;
    m->out = NULL;
    for (int i = 0; i < n; i++) {
        FoldVal *r[64];
        int nr = step_reads(ss[i], r);
        for (int k = 0; k < nr; k++) {
            FoldVal *v = r[k];
            if (!v || v->kind == FV_PARAM || v->kind == FV_CONST || inside(l, v, m))
                continue;
            Step *p = step_of(l, v);
            if (p && p->order > first)
                return -1; /* reads a value computed after it began */
            int seen = 0;
            for (int j = 0; j < m->nins; j++)
                seen |= m->ins[j] == v;
            if (!seen) {
                if (m->nins == 64)
                    return -1;
                m->ins[m->nins++] = v;
            }
        }
    }
    /* outputs: values read outside, or the graph's (the values the steps
     * outside read, marked in one pass: linear in the steps) */
    l->stamp++;
    for (int j = 0; j < l->nsteps; j++) {
        Step *t = l->steps[j];
        if (t->dead || !t->mod || is_under(t->mod, m))
            continue;
        FoldVal *r[64];
        int nr = step_reads(t, r);
        for (int k = 0; k < nr; k++)
            if (r[k])
                l->mark[vidx(l, r[k])] = l->stamp;
    }
    for (int i = 0; i < n; i++) {
        FoldVal *v = ss[i]->out;
        if (!is_graph_output(l, v) && l->mark[vidx(l, v)] != l->stamp)
            continue;
        if (m->out && m->out != v)
            return -1;
        m->out = v;
    }
    free(ss);
    return m->out ? 0 : -1;
}

/* Replaces m's subtree's steps with one S_CALL in its parent. */
static void collapse(L *l, Module *m)
{
    Step **ss;
    int n;
    subtree_steps(l, m, &ss, &n);
    Step *c = xcalloc(1, sizeof *c);
    c->kind = S_CALL;
    c->callee = m;
    c->out = m->out;
    c->order = ss[n - 1]->order;
    c->node = ss[n - 1]->node;
    for (int i = 0; i < n; i++)
        ss[i]->dead = 1;
    free(ss);
    /* in the global list, where the last of them was */
    PUSH(l->steps, l->nsteps, l->capsteps, c);
    sort_steps(l->steps, l->nsteps);
    l->of_val[vidx(l, c->out)] = c;
    add_step(m->parent, c);
    sort_steps(m->parent->steps, m->parent->nsteps);
}

static const Step *only_step(const Module *m)
{
    const Step *s = NULL;
    for (int k = 0; k < m->nsteps; k++) {
        if (s)
            return NULL;
        s = m->steps[k];
    }
    return s;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-6 * fabs(b) + 1e-12; }

static int dims_equal(const FoldVal *a, const FoldVal *b, int n)
{
    for (int d = 0; d < n; d++)
        if (a->dims[d].c != b->dims[d].c || a->dims[d].b != b->dims[d].b)
            return 0;
    return 1;
}

/* A standard-library layer for a module of one step and its own params:
 * its field expression, or NULL. */
/* A recurrent layer as PyTorch exports it in training mode: its params
 * under their own names (weight_ih_l0, ...), sliced and concatenated into
 * ONNX's gate order, zero initial states, one LSTM or GRU node between a
 * batch-first transpose pair. */
static Node *std_recurrent(L *l, Module *m)
{
    const Step *rnn = NULL;
    for (int k = 0; k < m->nsteps; k++) {
        const OnnxNode *n = node_at(l, m->steps[k]->node);
        if (m->steps[k]->kind == S_CALL)
            return NULL;
        if (!strcmp(n->op_type, "LSTM") || !strcmp(n->op_type, "GRU")) {
            if (rnn)
                return NULL;
            rnn = m->steps[k];
        }
    }
    if (!rnn || m->nkids || m->nparams != 4)
        return NULL;
    const OnnxNode *n = node_at(l, rnn->node);
    static const char *const names[] = {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"};
    for (int k = 0; k < 4; k++)
        if (param_index(m, names[k]) < 0)
            return NULL;
    int64_t H = fold_attr_int(n, "hidden_size", 0);
    const char *dir = fold_attr_str(n, "direction", "forward");
    if (strcmp(dir, "forward") || fold_attr_int(n, "layout", 0) || fold_attr(n, "activations") ||
        fold_attr(n, "clip") || (!strcmp(n->op_type, "GRU") && !fold_attr_int(n, "linear_before_reset", 0)))
        return NULL;
    /* initial states: none, or zeros */
    for (int k = 5; k < 7 && k < n->ninputs; k++) {
        FoldVal *v = in_val(l, n, k);
        double c0;
        if (!v || (uniform(v, &c0) == 0 && c0 == 0)) /* a fixed batch: zeros folded to a constant */
            continue;
        Step *z = step_of(l, v);
        double c;
        if (!z || z->kind != S_NODE || strcmp(node_at(l, z->node)->op_type, "ConstantOfShape"))
            return NULL;
        const OnnxAttr *a = fold_attr(node_at(l, z->node), "value");
        if (a && a->t && a->t->f && a->t->count == 1 && (c = a->t->f[0]) != 0)
            return NULL;
    }
    /* [N, T, I] in, [N, T, H] out: batch first */
    if (m->nins != 1 || m->ins[0]->rank != 3 || !m->out || m->out->rank != 3 || m->out->dims[2].c != H)
        return NULL;
    int batch_first = m->ins[0]->dims[0].b || !m->ins[0]->dims[1].b;
    if (!m->ins[0]->dims[0].b && !m->ins[0]->dims[1].b) {
        /* a fixed batch does not say which axis it is: PyTorch's
         * batch-first export transposes [N, T, I] to the node's [T, N, I] */
        Step *t = step_of(l, in_val(l, n, 0));
        batch_first = t && t->kind == S_NODE && !strcmp(node_at(l, t->node)->op_type, "Transpose");
    }
    if (!dims_equal(m->out, m->ins[0], 2))
        return NULL;
    Node *c = call(!strcmp(n->op_type, "LSTM") ? "LSTM" : "GRU", NULL);
    arg(c, "hidden", num_i(H));
    if (!batch_first)
        arg(c, "batch_first", boolean(0));
    return c;
}

static Node *std_layer(L *l, Module *m)
{
    Node *rec = std_recurrent(l, m);
    if (rec)
        return rec;
    const Step *s = only_step(m);
    if (!s || m->nkids || s->kind == S_CALL)
        return NULL;
    const OnnxNode *n = node_at(l, s->node);
    if (!m->nparams) { /* an activation in a Sequential */
        if (s->kind == S_GELU)
            return ident("GELU");
        if (s->kind != S_NODE)
            return NULL;
        static const char *const acts[][2] = {{"Relu", "ReLU"}, {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}};
        for (size_t k = 0; k < sizeof acts / sizeof *acts; k++)
            if (!strcmp(n->op_type, acts[k][0]))
                return ident(acts[k][1]);
        if (!strcmp(n->op_type, "Softmax") && fold_attr_int(n, "axis", -1) == -1)
            return ident("Softmax");
        return NULL;
    }
    int wi = param_index(m, "weight"), bi = param_index(m, "bias");
    FoldVal *w = wi >= 0 ? m->params[wi] : NULL, *b = bi >= 0 ? m->params[bi] : NULL;
    if (!w || m->nparams != 1 + (b != NULL) + 2 * !strcmp(n->op_type, "BatchNormalization"))
        return NULL;
    if (s->kind == S_LINEAR && s->in[1] == w && s->in[2] == b) {
        Node *c = call("Dense", NULL);
        arg(c, "units", num_i(w->dims[0].c));
        if (!b)
            arg(c, "bias", boolean(0));
        return c;
    }
    /* the layers' hparams have ranges (std.nn's `where`): outside them, the
     * node is written as an expression, or says what is unsupported */
    if (s->kind == S_LAYERNORM && s->in[1] == w && s->in[2] == b && b && s->eps > 0) {
        Node *c = ident("LayerNorm");
        if (!near(s->eps, 1e-5)) {
            c = call("LayerNorm", NULL);
            arg(c, "eps", num_f((float)s->eps));
        }
        return c;
    }
    if (s->kind != S_NODE)
        return NULL;
    if (!strcmp(n->op_type, "Gemm") && s->in[1] == w && (s->nin < 3 || s->in[2] == b) &&
        fold_attr_int(n, "transB", 0) == 1 && !fold_attr_int(n, "transA", 0) && fold_attr_float(n, "alpha", 1) == 1 &&
        fold_attr_float(n, "beta", 1) == 1 && (!b || (b->rank == 1 && b->dims[0].c == w->dims[0].c))) {
        Node *c = call("Dense", NULL);
        arg(c, "units", num_i(w->dims[0].c));
        if (!b)
            arg(c, "bias", boolean(0));
        return c;
    }
    if (!strcmp(n->op_type, "Gather") && s->in[0] == w && w->rank == 2 && !fold_attr_int(n, "axis", 0) && !b &&
        s->in[1] && !is_const(s->in[1]) && s->in[1]->type != ONNX_FLOAT) {
        Node *c = call("Embedding", NULL);
        arg(c, "vocab", num_i(w->dims[0].c));
        arg(c, "dim", num_i(w->dims[1].c));
        return c;
    }
    if (!strcmp(n->op_type, "LayerNormalization") && s->in[1] == w && s->nin > 2 && s->in[2] == b && b &&
        (fold_attr_int(n, "axis", -1) == -1 || fold_attr_int(n, "axis", -1) == s->in[0]->rank - 1) &&
        fold_attr_float(n, "epsilon", 1e-5f) > 0) {
        double eps = fold_attr_float(n, "epsilon", 1e-5f);
        if (near(eps, 1e-5))
            return ident("LayerNorm");
        Node *c = call("LayerNorm", NULL);
        arg(c, "eps", num_f((float)eps));
        return c;
    }
    if (!strcmp(n->op_type, "BatchNormalization") && s->in[1] == w && s->in[2] == b && b) {
        int mi = param_index(m, "running_mean"), vi = param_index(m, "running_var");
        double mom = 1 - (double)fold_attr_float(n, "momentum", 0.9f), eps = fold_attr_float(n, "epsilon", 1e-5f);
        if (mi < 0 || vi < 0 || s->in[3] != m->params[mi] || s->in[4] != m->params[vi] || s->outk ||
            !(mom >= 0 && mom <= 1 && eps > 0))
            return NULL;
        m->pstate[mi] = m->pstate[vi] = 1;
        m->bn = 1;
        Node *c = ident("BatchNorm");
        if (!near(mom, 0.1) || !near(eps, 1e-5)) {
            c = call("BatchNorm", NULL);
            if (!near(mom, 0.1))
                arg(c, "momentum", num_f((float)mom));
            if (!near(eps, 1e-5))
                arg(c, "eps", num_f((float)eps));
        }
        return c;
    }
    if ((!strcmp(n->op_type, "Conv") || !strcmp(n->op_type, "ConvTranspose")) && s->in[1] == w &&
        (s->nin < 3 || s->in[2] == b) && (w->rank == 4 || w->rank == 3)) {
        int tr = !strcmp(n->op_type, "ConvTranspose"), nsp = w->rank - 2;
        const OnnxAttr *st = fold_attr(n, "strides"), *di = fold_attr(n, "dilations"), *pa = fold_attr(n, "pads");
        const char *ap = fold_attr_str(n, "auto_pad", "NOTSET");
        if (strcmp(ap, "NOTSET") || fold_attr(n, "output_shape"))
            return NULL;
        int64_t k = w->dims[2].c, stride = st ? st->ints[0] : 1, dil = di ? di->ints[0] : 1, pad = pa ? pa->ints[0] : 0;
        for (int i = 0; i < nsp; i++) {
            if (w->dims[2 + i].c != k || (st && st->ints[i] != stride) || (di && di->ints[i] != dil))
                return NULL;
            if (pa && (pa->ints[i] != pad || pa->ints[i + nsp] != pad))
                return NULL;
        }
        int64_t g = fold_attr_int(n, "group", 1);
        if (tr) {
            const OnnxAttr *op = fold_attr(n, "output_padding");
            if (nsp != 2 || g != 1 || dil != 1 || (op && (op->ints[0] || op->ints[1])) || pad >= k)
                return NULL;
        }
        Node *c = call(tr ? "ConvTranspose2D" : nsp == 2 ? "Conv2D" : "Conv1D", NULL);
        arg(c, "filters", num_i(tr ? w->dims[1].c : w->dims[0].c));
        arg(c, "kernel", num_i(k));
        if (stride != 1)
            arg(c, "stride", num_i(stride));
        if (pad)
            arg(c, "padding", num_i(pad));
        if (dil != 1)
            arg(c, "dilation", num_i(dil));
        if (g != 1)
            arg(c, "groups", num_i(g));
        if (!b)
            arg(c, "bias", boolean(0));
        return c;
    }
    return NULL;
}

/* ---- pass 4: expressions ---------------------------------------------------------- */

typedef struct Body {
    L *l;
    Module *m;
    NodeVec stmts;
    const char **names; /* taken in this scope */
    int nnames, capnames;
} Body;

static int name_taken(const Body *b, const char *s)
{
    for (int k = 0; k < b->nnames; k++)
        if (!strcmp(b->names[k], s))
            return 1;
    return 0;
}

static const char *fresh(Body *b, const char *base)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", base);
    for (int k = 2; name_taken(b, buf) || !is_ident(buf, strlen(buf)); k++)
        snprintf(buf, sizeof buf, "%s%d", base, k);
    const char *s = xstrdup(buf);
    PUSH(b->names, b->nnames, b->capnames, s);
    return s;
}

/* The batch axis in a shape list, or a size. */
static Node *dim_expr(L *l, FDim d, int *wild)
{
    if (!d.b)
        return num_i(d.c);
    if (d.c == 1)
        return ident(l->batch);
    if (*wild)
        return NULL;
    *wild = 1;
    return num_i(-1);
}

static Node *shape_list(L *l, const FoldVal *v, const OnnxNode *n)
{
    Node *lst = mk(ND_LIST);
    int wild = 0;
    for (int d = 0; d < v->rank; d++) {
        Node *e = dim_expr(l, v->dims[d], &wild);
        if (!e) {
            fail(l, FOLD_UNSUPPORTED, n, "shape with two axes that are multiples of the batch");
            return NULL;
        }
        ast_push(&lst->list, e);
    }
    return lst;
}

static Node *value_expr(Body *b, FoldVal *v, const OnnxNode *n);

/* Whether constant v, an operand of a value shaped out, can be written as
 * a literal *x: one number, or all its elements equal where broadcasting
 * makes that the same (v's shape adds nothing to out's). */
static int const_literal(const FoldVal *v, const FoldVal *out, double *x)
{
    if (scalar_const(v, x) == 0)
        return 1;
    if (uniform(v, x) != 0 || !out || v->rank > out->rank)
        return 0;
    for (int d = 0; d < v->rank; d++) {
        const FDim od = out->dims[out->rank - v->rank + d];
        if (v->dims[d].c != 1 && (od.b || od.c != v->dims[d].c))
            return 0;
    }
    return 1;
}

/* A constant operand: a literal (const_literal).  A float tensor that is
 * not one was made a state by const_states before the body is written. */
static Node *const_expr(Body *b, FoldVal *v, const FoldVal *out, const OnnxNode *n)
{
    double x;
    if (const_literal(v, out, &x)) {
        if (isinf(x) || isnan(x)) {
            fail(b->l, FOLD_UNSUPPORTED, n, "constant %g (the language has no literal for it)", x);
            return NULL;
        }
        return v->f ? num_f(x) : num_i((long long)x);
    }
    fail(b->l, FOLD_UNSUPPORTED, n, "constant tensor '%s' of %lld elements as an operand", v->name,
         (long long)v->count);
    return NULL;
}

static Node *A(Body *b, const Step *s, int k, const OnnxNode *n)
{
    FoldVal *v = k < s->nin ? s->in[k] : NULL;
    if (!v) {
        fail(b->l, FOLD_MALFORMED, n, "input %d is missing", k);
        return NULL;
    }
    if (v->kind == FV_CONST)
        return const_expr(b, v, s->out, n);
    return value_expr(b, v, n);
}

/* 0 when a dim is 0: such an input adds nothing to a Concat */
static int count_nonzero_axis(const FoldVal *v)
{
    for (int d = 0; d < v->rank; d++)
        if (!v->dims[d].b && v->dims[d].c == 0)
            return 0;
    return 1;
}

static Node *int_arg_list(const int64_t *v, int n, int as_int)
{
    if (as_int)
        return num_i(v[0]);
    return list_i(v, n);
}

static int all_same(const int64_t *v, int n)
{
    for (int k = 1; k < n; k++)
        if (v[k] != v[0])
            return 0;
    return 1;
}

/* A Reduce*'s axes, made non-negative: their count, or -1 for all;
 * *noop when an empty axes input with noop_with_empty_axes makes it the
 * identity (as onnx_fold.c's op_reduce). */
static int reduce_axes(const Step *s, const OnnxNode *n, int64_t *axes, int *noop)
{
    FoldVal *in = s->in[0];
    int na = -1;
    *noop = 0;
    const OnnxAttr *a = fold_attr(n, "axes");
    if (a && a->kind == ONNX_ATTR_INTS) {
        na = 0;
        for (int k = 0; k < a->n; k++)
            axes[na++] = a->ints[k] < 0 ? a->ints[k] + in->rank : a->ints[k];
    } else if (s->nin > 1 && s->in[1]) {
        FoldVal *av = s->in[1];
        na = 0;
        for (int64_t k = 0; k < av->count && k < ONNX_MAX_RANK; k++)
            axes[na++] = av->i[k].c < 0 ? av->i[k].c + in->rank : av->i[k].c;
        *noop = !av->count && fold_attr_int(n, "noop_with_empty_axes", 0);
    }
    return na > 0 ? na : -1;
}

static Node *reduce_call(const char *fn, Node *x, const int64_t *axes, int na, int keep)
{
    Node *c = call(fn, x);
    if (na == 1)
        arg(c, "axis", num_i(axes[0]));
    else if (na > 1)
        arg(c, "axis", list_i(axes, na));
    if (keep)
        arg(c, "keepdim", boolean(1));
    return c;
}

static Node *reduce_expr(const Step *s, const OnnxNode *n, const char *fn, Node *x)
{
    int64_t axes[ONNX_MAX_RANK];
    int noop, na = reduce_axes(s, n, axes, &noop);
    if (noop)
        return x;
    return reduce_call(fn, x, axes, na, (int)fold_attr_int(n, "keepdims", 1));
}

static Node *slice_expr(Node *x, int axis, int64_t start, int64_t end)
{
    Node *c = call("slice", x);
    arg(c, "axis", num_i(axis));
    arg(c, "start", num_i(start));
    arg(c, "end", num_i(end));
    return c;
}

/* Whether value v is an i32 tensor in the language: an integer or bool
 * graph input or ArgMax's and ArgMin's indices, through Identity and
 * Casts between such types.  Every other non-float value the mapping
 * writes is an f32 mask (Equal, Not, ...) or a constant. */
static int int_valued(const L *l, const FoldVal *v)
{
    while (v && v->kind == FV_NODE && v->type != ONNX_FLOAT) {
        const char *op = node_at(l, v->node)->op_type;
        if (!strcmp(op, "ArgMax") || !strcmp(op, "ArgMin"))
            return 1;
        if (strcmp(op, "Identity") && strcmp(op, "Cast") && strcmp(op, "CastLike"))
            return 0;
        v = in_val(l, node_at(l, v->node), 0);
    }
    return v && v->kind == FV_INPUT && v->type != ONNX_FLOAT;
}

/* Whether the model's output v, of an integer or bool type, is exactly
 * a tensor the language computes: an f32 mask of 0 and 1 (a bool a node
 * computes; the return converts it with int()), or an i32 tensor of the
 * same values (int_valued) through casts that keep them: bool to bool,
 * or between int32 and int64 (ids and indices; a narrower type would
 * wrap, a cast to bool would need a comparison with 0). */
static int exact_int_output(const L *l, const FoldVal *v)
{
    if (v->kind == FV_NODE && v->type == ONNX_BOOL && !int_valued(l, v))
        return 1;
    if (!int_valued(l, v))
        return 0;
    for (;;) {
        int t = v->type, wide = t == ONNX_INT32 || t == ONNX_INT64;
        if (v->kind == FV_INPUT)
            return 1;
        const OnnxNode *n = node_at(l, v->node);
        if (!strcmp(n->op_type, "ArgMax") || !strcmp(n->op_type, "ArgMin"))
            return wide;
        v = in_val(l, n, 0);
        if (!(t == ONNX_BOOL ? v->type == ONNX_BOOL : wide && (v->type == ONNX_INT32 || v->type == ONNX_INT64)))
            return 0;
    }
}

/* A bool operand of Not, And, Or as an f32 mask: a bool input is i32 */
static Node *mask_operand(Body *b, const Step *s, int k, const OnnxNode *n)
{
    Node *x = A(b, s, k, n);
    return x && int_valued(b->l, s->in[k]) ? call("float", x) : x;
}

/* selu's constants as ONNX's Selu defaults give them: PyTorch's, rounded
 * to float */
static const float onnx_selu_alpha = 1.67326319217681884765625f, onnx_selu_gamma = 1.05070102214813232421875f;
/* A float as the shortest decimal that reads back as the same float: 0.1,
 * not 0.10000000149011612 (an attribute is a float, its literal a double). */
static double shortest(float f)
{
    char buf[32];
    for (int d = 1; d <= 9; d++) { /* 9 significant digits always do */
        snprintf(buf, sizeof buf, "%.*g", d, (double)f);
        if ((float)strtod(buf, NULL) == f)
            return strtod(buf, NULL);
    }
    return f;
}

static Node *num_attr(float v) { return num_f(shortest(v)); }

static double attr_num(const OnnxNode *n, const char *name, float def)
{
    return shortest(fold_attr_float(n, name, def));
}

/* Input k of a formula that reads it more than once: a value that would
 * be written where it is read gets a let first, so that it is computed
 * (and printed) once.  Later reads of it (A) give its name. */
static Node *A_many(Body *b, const Step *s, int k, const OnnxNode *n)
{
    Node *e = A(b, s, k, n);
    Step *p = e && e->kind != ND_IDENT ? step_of(b->l, s->in[k]) : NULL;
    if (!p || p->expr != e || p->var)
        return e;
    Node *let = mk(ND_LET);
    let->name = fresh(b, "h");
    let->a = e;
    let->comment = p->comment;
    p->var = let->name;
    ast_push(&b->stmts, let);
    return ident(p->var);
}

/* A let of a formula's own, for a part it reads more than once. */
static const char *part_let(Body *b, const OnnxNode *n, const char *base, Node *e)
{
    Node *let = mk(ND_LET);
    let->name = fresh(b, base);
    let->a = e;
    let->comment = n->name[0] ? xstrdup(n->name) : NULL;
    ast_push(&b->stmts, let);
    return let->name;
}

/* Input k, a per-channel [C] vector for a [N, C, ...] tensor of rank r,
 * shaped [C, 1, ...] to broadcast; a number when it is a constant of one
 * value, and *is_unit when that is `unit`, which the formula leaves out. */
static Node *per_channel(Body *b, const Step *s, int k, const OnnxNode *n, int r, double unit, int *is_unit)
{
    double u;
    FoldVal *v = s->in[k];
    *is_unit = 0;
    if (is_const(v) && uniform(v, &u) == 0 && !isinf(u) && !isnan(u)) {
        *is_unit = u == unit;
        return v->f ? num_f(u) : num_i((long long)u);
    }
    Node *e = A(b, s, k, n);
    if (!e || v->rank != 1)
        return e;
    int64_t sh[ONNX_MAX_RANK];
    sh[0] = v->dims[0].c;
    for (int d = 1; d < r - 1; d++)
        sh[d] = 1;
    return r > 2 ? arg(call("reshape", e), NULL, list_i(sh, r - 1)) : e;
}

/* x normalized over axes: a let d = x − mean(x), then the expression
 * d * rsqrt(mean(square(d)) + eps), the variance biased, or with
 * `outside` (MeanVarianceNormalization's ε) d / (sqrt(mean(square(d))) + eps). */
static Node *normalize_expr(Body *b, const Step *s, const OnnxNode *n, const int64_t *ax, int na, double eps,
                            int outside)
{
    Node *x = A_many(b, s, 0, n);
    if (!x)
        return NULL;
    const char *d = part_let(b, n, "d", bin(OP_SUB, x, reduce_call("mean", A(b, s, 0, n), ax, na, 1)));
    Node *var = reduce_call("mean", call("square", ident(d)), ax, na, 1);
    if (outside)
        return bin(OP_DIV, ident(d), bin(OP_ADD, call("sqrt", var), num_f(eps)));
    return bin(OP_MUL, ident(d), call("rsqrt", bin(OP_ADD, var, num_f(eps))));
}

/* NegativeLogLikelihoodLoss (x the log-probabilities [N, C, d1, ...]) and
 * SoftmaxCrossEntropyLoss (x = log_softmax(scores, axis: 1)) as formulas,
 * PyTorch's nll_loss and cross_entropy:
 *
 *     let t1 = reshape(float(target), [N, 1, d1, ...])
 *     let o = equal(t1, cumsum(sum(greater(x, x), axis: [0, 2, ...],
 *                                  keepdim: true) + 1, axis: 1, exclusive: true))
 *     -sum(where(o, x * w, 0), axis: 1)                  (reduction none)
 *     -sum(where(o, x * w, 0))                           (sum)
 *     -(sum(where(o, x * w, 0)) / sum(where(o, w, 0)))   (mean)
 *
 * o is the one-hot mask of the target along the class axis, built
 * against the class numbers 0 .. C-1 (the cumsum of ones the shape of
 * x's class axis: greater(x, x) is 0 even where x is NaN), so that a
 * target outside [0, C) — ignore_index's -1 or C, PyTorch's -100 — marks
 * nothing and contributes 0 to the sum and the mean's denominator, where
 * gather_elements would read NaN.  An ignore_index inside [0, C) is
 * masked out of o.  `where` rather than a product keeps a -inf
 * log-probability of another class out of the sum, and sends the
 * gradient to the target's element alone (and to w's, when w is a
 * param).  The mean without weight and ignore_index is mean() of the
 * per-element losses.  SCE's second output, log_prob, is the log_softmax. */
static Node *class_loss_expr(Body *b, const Step *s, const OnnxNode *n)
{
    L *l = b->l;
    const FoldVal *x0 = s->in[0], *t = s->in[1];
    const int r = x0->rank, sce = n->op_type[0] == 'S', has_w = s->nin > 2 && s->in[2];
    const char *red = fold_attr_str(n, "reduction", "mean");
    const OnnxAttr *iia = fold_attr(n, "ignore_index");
    const int64_t C = x0->dims[1].c, ii = iia ? fold_attr_int(n, "ignore_index", 0) : -1;
    if (x0->dims[1].b) {
        fail(l, FOLD_UNSUPPORTED, n, "%s over a class axis that is the batch", n->op_type);
        return NULL;
    }
    Node *x = sce ? A(b, s, 0, n) : A_many(b, s, 0, n);
    const char *lp = NULL;
    if (!x)
        return NULL;
    if (sce) {
        lp = part_let(b, n, "lp", arg(call("log_softmax", x), "axis", num_i(1)));
        if (s->outk == 1)
            return ident(lp);
    }
    /* the target as f32: an i32 input's float(), or the state a constant
     * target became (const_targets) */
    Node *tf;
    if (t->type == ONNX_FLOAT)
        tf = A(b, s, 1, n);
    else if (int_valued(l, t))
        tf = call("float", A(b, s, 1, n));
    else {
        fail(l, FOLD_UNSUPPORTED, n, "%s of a target computed at run time", n->op_type);
        return NULL;
    }
    FoldVal t1v = *t; /* the target's shape with the class axis as 1 */
    t1v.rank = t->rank + 1;
    t1v.dims[0] = t->dims[0];
    t1v.dims[1] = (FDim){1, 0};
    memcpy(t1v.dims + 2, t->dims + 1, (size_t)(t->rank - 1) * sizeof *t->dims);
    Node *sh = tf ? shape_list(l, &t1v, n) : NULL;
    if (!sh)
        return NULL;
    const char *t1 = part_let(b, n, "t1", arg(call("reshape", tf), NULL, sh));
#define XL() (lp ? ident(lp) : A(b, s, 0, n))
    int64_t ax[ONNX_MAX_RANK];
    ax[0] = 0;
    for (int d = 2; d < r; d++)
        ax[d - 1] = d;
    /* the class numbers [1, C, 1, ...]; with a class axis of 1 element, 0 */
    Node *cls = reduce_call("sum", arg(call("greater", XL()), NULL, XL()), ax, r - 1, 1);
    if (C > 1)
        cls = arg(arg(call("cumsum", bin(OP_ADD, cls, num_i(1))), "axis", num_i(1)), "exclusive", boolean(1));
    Node *oh = arg(call("equal", ident(t1)), NULL, cls);
    if (iia && ii >= 0 && ii < C)
        oh = arg(arg(call("where", arg(call("equal", ident(t1)), NULL, num_i(ii))), NULL, num_i(0)), NULL, oh);
    const char *o = part_let(b, n, "o", oh);
    int unit_w = 1;
    Node *w = NULL;
    if (has_w) {
        if (!A_many(b, s, 2, n) || !(w = per_channel(b, s, 2, n, r, 1, &unit_w)))
            return NULL;
        if (unit_w)
            w = NULL;
    }
    Node *xw = w ? bin(OP_MUL, XL(), w) : XL();
    Node *picked = arg(arg(call("where", ident(o)), NULL, xw), NULL, num_i(0));
    if (!strcmp(red, "none"))
        return neg(arg(call("sum", picked), "axis", num_i(1)));
    if (!strcmp(red, "sum"))
        return neg(call("sum", picked));
    if (!w && !iia)
        return neg(call("mean", arg(call("sum", picked), "axis", num_i(1))));
    /* the mean over the weights of the targets not ignored */
    Node *den = w
        ? call("sum", arg(arg(call("where", ident(o)), NULL, per_channel(b, s, 2, n, r, 1, &unit_w)), NULL, num_i(0)))
        : call("sum", ident(o));
    return neg(bin(OP_DIV, call("sum", picked), den));
#undef XL
}

/* Resize other than PyTorch's default: the language's resize over the
 * axes after the first two (which it must keep), by sizes when the node
 * has them and else by its scales, which the coordinates use.  ONNX's
 * exclude_outside changes only cubic: a linear or nearest tap outside the
 * axis reads the edge value the clamped tap reads (the reference gives NaN
 * only where every tap is outside). */
static Node *resize_expr(L *l, const Step *s, const OnnxNode *n, Node *x, const char *mode, const char *ctm,
                         const char *nm)
{
    const FoldVal *x0 = s->in[0], *scales = s->nin > 2 ? s->in[2] : NULL, *sizes = s->nin > 3 ? s->in[3] : NULL;
    const int by_size = sizes && sizes->count, r = x0->rank;
    /* the scales: a folded constant's, or an initializer's */
    const float *initf = scales && scales->kind == FV_PARAM && scales->init >= 0 ? l->m->inits[scales->init].f : NULL;
    double sc[ONNX_MAX_RANK];
    for (int d = 0; !by_size && scales && (scales->f || initf) && d < r && d < scales->count; d++)
        sc[d] = scales->f ? scales->f[d] : initf[d];
    if (!strcmp(ctm, "tf_crop_and_resize")) {
        fail(l, FOLD_UNSUPPORTED, n, "Resize with tf_crop_and_resize (a region of interest)");
        return NULL;
    }
    if (r < 3 || s->out->dims[0].c != x0->dims[0].c || s->out->dims[0].b != x0->dims[0].b ||
        s->out->dims[1].c != x0->dims[1].c ||
        (!by_size && (!scales || !(scales->f || initf) || scales->count != r || sc[0] != 1 || sc[1] != 1))) {
        fail(l, FOLD_UNSUPPORTED, n, "Resize of the first two axes or of fewer than three");
        return NULL;
    }
    if (!x)
        return NULL;
    Node *c = call("resize", x);
    if (by_size) {
        int64_t sz[ONNX_MAX_RANK];
        for (int d = 2; d < r; d++)
            sz[d - 2] = s->out->dims[d].c;
        arg(c, "size", list_i(sz, r - 2));
    } else {
        int same = 1;
        for (int d = 3; d < r; d++)
            same &= sc[d] == sc[2];
        Node *sl = mk(ND_LIST);
        for (int d = 2; d < r; d++)
            ast_push(&sl->list, num_f(sc[d]));
        arg(c, "scale_factor", same ? num_f(sc[2]) : sl);
    }
    if (strcmp(mode, "nearest"))
        arg(c, "mode", str(mode));
    if (strcmp(ctm, "half_pixel"))
        arg(c, "coordinates", str(ctm));
    if (!strcmp(mode, "nearest") && strcmp(nm, "round_prefer_floor"))
        arg(c, "rounding", str(nm));
    if (!strcmp(mode, "cubic")) {
        const double a = fold_attr_float(n, "cubic_coeff_a", -0.75f);
        if (a != -0.75)
            arg(c, "cubic_a", num_f(a));
        if (fold_attr_int(n, "exclude_outside", 0))
            arg(c, "exclude_outside", boolean(1));
    }
    return c;
}

static Node *node_expr(Body *b, const Step *s)
{
    L *l = b->l;
    const OnnxNode *n = node_at(l, s->node);
    const char *op = n->op_type;
    FoldVal *x0 = s->in[0];
#define X(k) A(b, s, k, n)
    /* an integer or bool input to float; a mask is f32 already */
    if ((!strcmp(op, "Cast") || !strcmp(op, "CastLike")) && s->out->type == ONNX_FLOAT && x0->type != ONNX_FLOAT)
        return int_valued(l, x0) ? call("float", X(0)) : X(0);
    if (!strcmp(op, "Identity") || !strcmp(op, "Cast") || !strcmp(op, "CastLike")) {
        if (s->out->type != x0->type && (s->out->type == ONNX_FLOAT) != (x0->type == ONNX_FLOAT)) {
            fail(l, FOLD_UNSUPPORTED, n, "Cast between integer and float tensors");
            return NULL;
        }
        return X(0);
    }
    if (!strcmp(op, "Dropout")) {
        double r = 0.5;
        if (s->nin > 1 && s->in[1] && scalar_const(s->in[1], &r)) {
            fail(l, FOLD_UNSUPPORTED, n, "Dropout ratio that is not a constant");
            return NULL;
        }
        double t = 0;
        if (s->nin > 2 && s->in[2] && scalar_const(s->in[2], &t) == 0 && !t)
            return X(0);
        if (s->outk) {
            fail(l, FOLD_UNSUPPORTED, n, "Dropout mask output");
            return NULL;
        }
        if (r <= 0)
            return X(0);
        if (!(r < 1)) {
            fail(l, FOLD_MALFORMED, n, "Dropout ratio %g, not in [0, 1)", r);
            return NULL;
        }
        Node *c = call("dropout", X(0));
        return arg(c, "rate", num_f(r));
    }
    static const char *const unary[][2] = {
        {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"},
        {"Exp", "exp"},   {"Log", "log"},         {"Sqrt", "sqrt"},
        {"Abs", "abs"},   {"Erf", "erf"},         {"HardSwish", "hard_swish"},
        {"Sign", "sign"},
    };
    for (size_t k = 0; k < sizeof unary / sizeof *unary; k++)
        if (!strcmp(op, unary[k][0]))
            return call(unary[k][1], X(0));
    /* the language's own math, by PyTorch's names (ONNX's Softplus is
     * PyTorch's with its linear threshold 20: the same to the float) */
    static const char *const math[][2] = {
        {"Sin", "sin"},     {"Cos", "cos"},     {"Tan", "tan"},           {"Asin", "asin"},
        {"Acos", "acos"},   {"Atan", "atan"},   {"Sinh", "sinh"},         {"Cosh", "cosh"},
        {"Asinh", "asinh"}, {"Acosh", "acosh"}, {"Atanh", "atanh"},       {"Floor", "floor"},
        {"Ceil", "ceil"},   {"Round", "round"}, {"Softplus", "softplus"}, {"Softsign", "softsign"},
    };
    for (size_t k = 0; k < sizeof math / sizeof *math; k++)
        if (!strcmp(op, math[k][0]))
            return call(math[k][1], X(0));
    if (!strcmp(op, "Elu") || !strcmp(op, "Celu")) {
        const float a = fold_attr_float(n, "alpha", 1.0f);
        if (a == 0 && op[0] == 'C') {
            fail(l, FOLD_UNSUPPORTED, n, "Celu with alpha 0");
            return NULL;
        }
        Node *c = call(op[0] == 'E' ? "elu" : "celu", X(0));
        return a == 1 ? c : arg(c, "alpha", num_attr(a));
    }
    if (!strcmp(op, "Selu")) {
        /* other constants than the defaults: gamma elu(x, alpha) */
        const float a = fold_attr_float(n, "alpha", onnx_selu_alpha), g = fold_attr_float(n, "gamma", onnx_selu_gamma);
        if (a == onnx_selu_alpha && g == onnx_selu_gamma)
            return call("selu", X(0));
        return bin(OP_MUL, num_attr(g), arg(call("elu", X(0)), "alpha", num_attr(a)));
    }
    if (!strcmp(op, "CumSum")) {
        double ax;
        if (s->nin < 2 || scalar_const(s->in[1], &ax)) {
            fail(l, FOLD_UNSUPPORTED, n, "CumSum with an axis that is not a constant");
            return NULL;
        }
        if (s->out->type != ONNX_FLOAT) {
            fail(l, FOLD_UNSUPPORTED, n, "integer CumSum at run time");
            return NULL;
        }
        Node *c = arg(call("cumsum", X(0)), "axis", num_i((long long)ax));
        if (fold_attr_int(n, "exclusive", 0))
            arg(c, "exclusive", boolean(1));
        if (fold_attr_int(n, "reverse", 0))
            arg(c, "reverse", boolean(1));
        return c;
    }
    if (!strcmp(op, "GatherElements")) {
        /* torch.gather: a negative index (ONNX counts it from the end)
         * gives NaN, as an out-of-range one */
        if (s->out->type != ONNX_FLOAT) {
            fail(l, FOLD_UNSUPPORTED, n, "GatherElements of an integer tensor at run time");
            return NULL;
        }
        Node *x = X(0), *i = X(1);
        return x && i ? arg(arg(call("gather_elements", x), NULL, i), "axis", num_i(fold_attr_int(n, "axis", 0)))
                      : NULL;
    }
    if (!strcmp(op, "NegativeLogLikelihoodLoss") || !strcmp(op, "SoftmaxCrossEntropyLoss"))
        return class_loss_expr(b, s, n);
    if (!strcmp(op, "Neg"))
        return neg(X(0));
    if (!strcmp(op, "Reciprocal"))
        return bin(OP_DIV, num_f(1), X(0));
    if (!strcmp(op, "LeakyRelu"))
        return arg(call("leaky_relu", X(0)), "slope", num_f(fold_attr_float(n, "alpha", 0.01f)));
    if (!strcmp(op, "HardSigmoid")) {
        Node *c = call("hard_sigmoid", X(0));
        arg(c, "alpha", num_f(fold_attr_float(n, "alpha", 0.2f)));
        return arg(c, "beta", num_f(fold_attr_float(n, "beta", 0.5f)));
    }
    if (!strcmp(op, "Clip")) {
        double lo = -INFINITY, hi = INFINITY;
        if ((s->nin > 1 && s->in[1] && scalar_const(s->in[1], &lo)) ||
            (s->nin > 2 && s->in[2] && scalar_const(s->in[2], &hi))) {
            fail(l, FOLD_UNSUPPORTED, n, "Clip bounds that are not constants");
            return NULL;
        }
        if (isnan(lo) || isnan(hi)) { /* the language's clip refuses them too */
            fail(l, FOLD_UNSUPPORTED, n, "a NaN bound of Clip");
            return NULL;
        }
        if (isinf(lo) && isinf(hi)) /* no bounds: ONNX's Clip is the identity */
            return X(0);
        if (lo == 0 && isinf(hi))
            return call("relu", X(0));
        Node *x = X(0);
        if (!x)
            return NULL;
        /* PyTorch writes relu6 as Relu then Clip(0, 6): the relu is then
         * no-op, and clip(x, min: 0.0, max: 6.0) reads as relu6 */
        if (lo >= 0 && x->kind == ND_CALL && x->a->kind == ND_IDENT && !strcmp(x->a->name, "relu") && x->list.n == 1)
            x = x->list.v[0]->a;
        Node *c = call("clip", x);
        if (!isinf(lo))
            arg(c, "min", num_f(lo));
        if (!isinf(hi))
            arg(c, "max", num_f(hi));
        return c;
    }
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div")) {
        Op o = op[0] == 'A' ? OP_ADD : op[0] == 'S' ? OP_SUB : op[0] == 'M' ? OP_MUL : OP_DIV;
        if (s->out->type != ONNX_FLOAT) {
            fail(l, FOLD_UNSUPPORTED, n, "integer %s at run time", op);
            return NULL;
        }
        Node *a = X(0), *c = X(1);
        return a && c ? bin(o, a, c) : NULL;
    }
    if (!strcmp(op, "Pow")) {
        double e;
        if (scalar_const(s->in[1], &e)) {
            fail(l, FOLD_UNSUPPORTED, n, "Pow with an exponent that is not a constant");
            return NULL;
        }
        return arg(call("pow", X(0)), NULL, num_f(e));
    }
    if (!strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Sum") || !strcmp(op, "Mean")) {
        Node *acc = X(0);
        for (int k = 1; k < s->nin && acc; k++) {
            Node *v = X(k);
            if (!v)
                return NULL;
            acc = op[1] == 'a' ? arg(call("maximum", acc), NULL, v)
                : op[1] == 'i' ? arg(call("minimum", acc), NULL, v)
                               : bin(OP_ADD, acc, v);
        }
        if (acc && !strcmp(op, "Mean") && s->nin > 1)
            acc = bin(OP_DIV, acc, num_f(s->nin));
        return acc;
    }
    if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater")) {
        Node *a = X(0), *c = X(1);
        return a && c ? arg(call(op[0] == 'E' ? "equal" : op[0] == 'L' ? "less" : "greater", a), NULL, c) : NULL;
    }
    if (!strcmp(op, "Not")) {
        Node *x = mask_operand(b, s, 0, n);
        return x ? bin(OP_SUB, num_f(1), x) : NULL;
    }
    if (!strcmp(op, "And") || !strcmp(op, "Or")) { /* of masks of 0 and 1 */
        Node *a = mask_operand(b, s, 0, n), *c = mask_operand(b, s, 1, n);
        if (!a || !c)
            return NULL;
        return op[0] == 'A' ? bin(OP_MUL, a, c) : arg(call("maximum", a), NULL, c);
    }
    if (!strcmp(op, "ArgMax") || !strcmp(op, "ArgMin")) {
        Node *c = call(!strcmp(op, "ArgMax") ? "argmax" : "argmin", X(0));
        arg(c, "axis", num_i(fold_attr_int(n, "axis", 0)));
        if (fold_attr_int(n, "keepdims", 1))
            arg(c, "keepdim", boolean(1));
        if (fold_attr_int(n, "select_last_index", 0))
            arg(c, "last", boolean(1));
        return c;
    }
    if (!strcmp(op, "Where")) {
        Node *c = X(0), *a = X(1), *e = X(2);
        if (c && int_valued(l, x0)) /* a bool input: its f32 mask */
            c = call("float", c);
        return c && a && e ? arg(arg(call("where", c), NULL, a), NULL, e) : NULL;
    }
    if (!strcmp(op, "MatMul")) {
        Node *a = X(0), *c = X(1);
        return a && c ? bin(OP_MATMUL, a, c) : NULL;
    }
    if (!strcmp(op, "Gemm")) {
        Node *a = X(0), *c = X(1);
        if (!a || !c)
            return NULL;
        if (fold_attr_int(n, "transA", 0))
            a = arg(arg(call("transpose", a), NULL, num_i(0)), NULL, num_i(1));
        if (fold_attr_int(n, "transB", 0))
            c = arg(arg(call("transpose", c), NULL, num_i(0)), NULL, num_i(1));
        Node *y = bin(OP_MATMUL, a, c);
        double al = fold_attr_float(n, "alpha", 1), be = fold_attr_float(n, "beta", 1);
        if (al != 1)
            y = bin(OP_MUL, num_f(al), y);
        if (s->nin > 2 && s->in[2]) {
            Node *cc = X(2);
            if (!cc)
                return NULL;
            if (be != 1)
                cc = bin(OP_MUL, num_f(be), cc);
            y = bin(OP_ADD, y, cc);
        }
        return y;
    }
    if (!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax")) {
        Node *c = call(op[0] == 'S' ? "softmax" : "log_softmax", X(0));
        return arg(c, "axis", num_i(fold_attr_int(n, "axis", -1)));
    }
    if (!strcmp(op, "ReduceMean"))
        return reduce_expr(s, n, "mean", X(0));
    if (!strcmp(op, "ReduceSum"))
        return reduce_expr(s, n, "sum", X(0));
    if (!strcmp(op, "ReduceMax"))
        return reduce_expr(s, n, "max", X(0));
    if (!strcmp(op, "ReduceMin"))
        return neg(reduce_expr(s, n, "max", neg(X(0))));
    if (!strcmp(op, "ReduceL1") || !strcmp(op, "ReduceL2") || !strcmp(op, "ReduceSumSquare") ||
        !strcmp(op, "ReduceLogSum")) {
        Node *x = X(0);
        if (!x)
            return NULL;
        if (!strcmp(op, "ReduceL1"))
            return reduce_expr(s, n, "sum", call("abs", x));
        if (!strcmp(op, "ReduceL2"))
            return call("sqrt", reduce_expr(s, n, "sum", call("square", x)));
        if (!strcmp(op, "ReduceSumSquare"))
            return reduce_expr(s, n, "sum", call("square", x));
        return call("log", reduce_expr(s, n, "sum", x));
    }
    if (!strcmp(op, "ReduceLogSumExp")) {
        /* m + log(sum(exp(x − m))) with m the max: exp cannot overflow */
        int64_t axes[ONNX_MAX_RANK];
        int noop, na = reduce_axes(s, n, axes, &noop), keep = (int)fold_attr_int(n, "keepdims", 1);
        Node *x = A_many(b, s, 0, n);
        if (!x || noop)
            return x;
        int k1 = na < 0 ? keep : 1; /* m keeps its axes to broadcast, unless it is one number */
        const char *m = part_let(b, n, "m", reduce_call("max", x, axes, na, k1));
        Node *se = reduce_call("sum", call("exp", bin(OP_SUB, X(0), ident(m))), axes, na, k1);
        Node *y = bin(OP_ADD, ident(m), call("log", se));
        if (k1 == keep)
            return y;
        Node *sh = shape_list(l, s->out, n);
        return sh ? arg(call("reshape", y), NULL, sh) : NULL;
    }
    if (!strcmp(op, "ReduceProd")) {
        /* the product of the slices along each axis: exact, and so is its
         * gradient, where exp(sum(log(x))) is not for x <= 0 */
        int64_t axes[ONNX_MAX_RANK];
        FDim dims[ONNX_MAX_RANK];
        int noop, na = reduce_axes(s, n, axes, &noop), last = -1;
        Node *x = A_many(b, s, 0, n), *y = x;
        if (!x || noop)
            return x;
        if (na < 0)
            for (na = 0; na < x0->rank; na++)
                axes[na] = na;
        memcpy(dims, x0->dims, sizeof dims);
        for (int k = 0; k < na; k++) {
            if (axes[k] < 0 || axes[k] >= x0->rank) {
                fail(l, FOLD_MALFORMED, n, "axis %lld out of range", (long long)axes[k]);
                return NULL;
            }
            FDim d = dims[axes[k]];
            if (d.b || d.c > 16) {
                fail(l, FOLD_UNSUPPORTED, n, "ReduceProd over %s", d.b ? "the batch axis" : "more than 16 elements");
                return NULL;
            }
            if (d.c > 1)
                last = k;
            dims[axes[k]] = (FDim){1, 0}; /* (an axis given twice is 1 the second time) */
        }
        const char *cur = NULL;
        memcpy(dims, x0->dims, sizeof dims);
        for (int k = 0; k <= last; k++) {
            int64_t len = dims[axes[k]].c;
            dims[axes[k]].c = 1;
            if (len == 1)
                continue;
            y = NULL;
            for (int64_t i = 0; i < len; i++) {
                Node *t = slice_expr(cur ? ident(cur) : X(0), (int)axes[k], i, i + 1);
                y = y ? bin(OP_MUL, y, t) : t;
            }
            if (k < last)
                cur = part_let(b, n, "p", y);
        }
        if (fold_attr_int(n, "keepdims", 1))
            return y;
        if (!s->out->rank) {
            fail(l, FOLD_UNSUPPORTED, n, "ReduceProd to a number");
            return NULL;
        }
        Node *sh = shape_list(l, s->out, n);
        return sh ? arg(call("reshape", y), NULL, sh) : NULL;
    }
    if (!strcmp(op, "PRelu")) {
        /* x where x > 0, else slope · x: the slope's side at 0, as
         * PyTorch's prelu; one slope is leaky_relu */
        double a;
        FoldVal *sl = s->in[1];
        int fits = sl && sl->rank <= x0->rank;
        for (int d = 0; fits && d < sl->rank; d++) {
            FDim sd = sl->dims[sl->rank - 1 - d], xd = x0->dims[x0->rank - 1 - d];
            fits = (sd.c == 1 && !sd.b) || (sd.c == xd.c && sd.b == xd.b);
        }
        if (!fits) { /* (opset 6's per-channel slope the version converter leaves) */
            fail(l, FOLD_MALFORMED, n, "PRelu slope that does not broadcast to the input");
            return NULL;
        }
        if (uniform(sl, &a) == 0 && !isnan(a) && !isinf(a))
            return arg(call("leaky_relu", X(0)), "slope", num_f(a));
        Node *x = A_many(b, s, 0, n), *w = X(1);
        if (!x || !w)
            return NULL;
        Node *pos = arg(call("greater", x), NULL, num_i(0));
        return arg(arg(call("where", pos), NULL, X(0)), NULL, bin(OP_MUL, w, X(0)));
    }
    if (!strcmp(op, "ThresholdedRelu")) {
        /* x where x > alpha, else 0 */
        Node *x = A_many(b, s, 0, n);
        if (!x)
            return NULL;
        Node *c = arg(call("greater", x), NULL, num_f(attr_num(n, "alpha", 1.0f)));
        return arg(arg(call("where", c), NULL, X(0)), NULL, num_i(0));
    }
    if (!strcmp(op, "Shrink")) {
        /* x − bias where x > lambd, x + bias where x < −lambd, else 0 */
        double lambd = attr_num(n, "lambd", 0.5f), bias = attr_num(n, "bias", 0.0f);
        Node *x = A_many(b, s, 0, n);
        if (!x)
            return NULL;
        if (!bias) {
            Node *c = arg(call("greater", call("abs", x)), NULL, num_f(lambd));
            return arg(arg(call("where", c), NULL, X(0)), NULL, num_i(0));
        }
        Node *lo = arg(call("less", x), NULL, num_f(-lambd));
        Node *inner = arg(arg(call("where", lo), NULL, bin(OP_ADD, X(0), num_f(bias))), NULL, num_i(0));
        Node *hi = arg(call("greater", X(0)), NULL, num_f(lambd));
        return arg(arg(call("where", hi), NULL, bin(OP_SUB, X(0), num_f(bias))), NULL, inner);
    }
    if (!strcmp(op, "DepthToSpace") || !strcmp(op, "SpaceToDepth")) {
        /* a reshape that splits the blocks off an axis, a permute that
         * moves them, a reshape that merges them into the others */
        int64_t bs = fold_attr_int(n, "blocksize", 0), C = x0->dims[1].c, H = x0->dims[2].c, W = x0->dims[3].c;
        const char *mode = fold_attr_str(n, "mode", "DCR");
        int d2s = op[0] == 'D', crd = !strcmp(mode, "CRD");
        if (d2s && !crd && strcmp(mode, "DCR")) {
            fail(l, FOLD_MALFORMED, n, "DepthToSpace mode '%s' (DCR or CRD)", mode);
            return NULL;
        }
        Node *x = X(0);
        if (!x || bs == 1)
            return x;
        int64_t mid[6], perm[6];
        if (!d2s) { /* [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b] */
            int64_t m[] = {0, C, H / bs, bs, W / bs, bs}, p[] = {0, 3, 5, 1, 2, 4};
            memcpy(mid, m, sizeof mid), memcpy(perm, p, sizeof perm);
        } else if (crd) { /* [N, C/b², b, b, H, W] -> [N, C/b², H, b, W, b] */
            int64_t m[] = {0, C / (bs * bs), bs, bs, H, W}, p[] = {0, 1, 4, 2, 5, 3};
            memcpy(mid, m, sizeof mid), memcpy(perm, p, sizeof perm);
        } else { /* DCR: [N, b, b, C/b², H, W] -> [N, C/b², H, b, W, b] */
            int64_t m[] = {0, bs, bs, C / (bs * bs), H, W}, p[] = {0, 3, 4, 1, 5, 2};
            memcpy(mid, m, sizeof mid), memcpy(perm, p, sizeof perm);
        }
        int wild = 0;
        Node *lst = mk(ND_LIST), *sh = shape_list(l, s->out, n);
        ast_push(&lst->list, dim_expr(l, x0->dims[0], &wild));
        for (int d = 1; d < 6; d++)
            ast_push(&lst->list, num_i(mid[d]));
        if (!sh)
            return NULL;
        Node *y = arg(call("permute", arg(call("reshape", x), NULL, lst)), NULL, list_i(perm, 6));
        return arg(call("reshape", y), NULL, sh);
    }
    if (!strcmp(op, "InstanceNormalization")) {
        /* per instance and channel over the spatial axes, the variance
         * biased: (x − mean) / √(var + epsilon) · scale + B */
        int64_t ax[ONNX_MAX_RANK];
        int r = x0->rank, unit_s, unit_b;
        if (r < 3 || s->nin < 3 || !s->in[1] || !s->in[2] || s->in[1]->rank != 1 || s->in[2]->rank != 1) {
            fail(l, FOLD_MALFORMED, n, "InstanceNormalization of rank %d or without [C] scale and B", r);
            return NULL;
        }
        for (int d = 2; d < r; d++)
            ax[d - 2] = d;
        Node *y = normalize_expr(b, s, n, ax, r - 2, attr_num(n, "epsilon", 1e-5f), 0);
        Node *sc = y ? per_channel(b, s, 1, n, r, 1, &unit_s) : NULL;
        Node *bb = sc ? per_channel(b, s, 2, n, r, 0, &unit_b) : NULL;
        if (!bb)
            return NULL;
        if (!unit_s)
            y = bin(OP_MUL, y, sc);
        return unit_b ? y : bin(OP_ADD, y, bb);
    }
    if (!strcmp(op, "MeanVarianceNormalization")) {
        /* (x − mean) / (√(E(x − mean)²) + 1e-9), ONNX's function body */
        const OnnxAttr *a = fold_attr(n, "axes");
        int64_t ax[ONNX_MAX_RANK] = {0, 2, 3};
        int na = 3;
        if (a && (a->kind != ONNX_ATTR_INTS || a->n > x0->rank)) {
            fail(l, FOLD_MALFORMED, n, "MeanVarianceNormalization axes for rank %d", x0->rank);
            return NULL;
        }
        if (a)
            for (na = 0; na < a->n; na++)
                ax[na] = a->ints[na] < 0 ? a->ints[na] + x0->rank : a->ints[na];
        for (int k = 0; k < na; k++)
            if (ax[k] < 0 || ax[k] >= x0->rank) {
                fail(l, FOLD_MALFORMED, n, "axis %lld out of range", (long long)ax[k]);
                return NULL;
            }
        return normalize_expr(b, s, n, ax, na, 1e-9, 1);
    }
    if (!strcmp(op, "LRN")) {
        /* x / (bias + alpha / size · Σ x²)^beta, the sum over a window of
         * size channels around each: slices of the squares padded along
         * the channel axis */
        int64_t size = fold_attr_int(n, "size", 0), C = x0->dims[1].c, lo = (size - 1) / 2, hi = size - 1 - lo;
        if (x0->rank < 3 || x0->dims[1].b || size < 1) {
            fail(l, FOLD_MALFORMED, n, "LRN of rank %d, size %lld", x0->rank, (long long)size);
            return NULL;
        }
        if (size > 32) { /* one slice per channel of the window */
            fail(l, FOLD_UNSUPPORTED, n, "LRN window of %lld channels (at most 32)", (long long)size);
            return NULL;
        }
        Node *x = A_many(b, s, 0, n);
        if (!x)
            return NULL;
        Node *sq = call("square", x), *sum = NULL;
        if (size > 1) {
            int64_t pads[2 * ONNX_MAX_RANK] = {0};
            pads[2 * (x0->rank - 2)] = lo, pads[2 * (x0->rank - 2) + 1] = hi;
            const char *sp = part_let(b, n, "sq", arg(call("pad", sq), NULL, list_i(pads, 2 * (x0->rank - 1))));
            for (int64_t i = 0; i < size; i++) {
                Node *t = slice_expr(ident(sp), 1, i, i + C);
                sum = sum ? bin(OP_ADD, sum, t) : t;
            }
        } else {
            sum = sq;
        }
        Node *scale = bin(OP_DIV, num_f(attr_num(n, "alpha", 1e-4f)), num_i(size));
        Node *base = bin(OP_ADD, num_f(attr_num(n, "bias", 1.0f)), bin(OP_MUL, scale, sum));
        return bin(OP_DIV, X(0), arg(call("pow", base), NULL, num_f(attr_num(n, "beta", 0.75f))));
    }
    if (!strcmp(op, "GlobalAveragePool") || !strcmp(op, "GlobalMaxPool")) {
        int64_t ax[3];
        for (int d = 2; d < x0->rank; d++)
            ax[d - 2] = d;
        Node *c = call(op[6] == 'A' ? "mean" : "max", X(0));
        arg(c, "axis", x0->rank == 3 ? num_i(2) : list_i(ax, x0->rank - 2));
        return arg(c, "keepdim", boolean(1));
    }
    if (!strcmp(op, "Flatten") && x0->rank >= 2 && !x0->dims[0].b == !s->out->dims[0].b &&
        fold_attr_int(n, "axis", 1) == 1)
        return call("flatten", X(0));
    if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
        Node *sh = shape_list(l, s->out, n), *x = X(0);
        return sh && x ? arg(call("reshape", x), NULL, sh) : NULL;
    }
    if (!strcmp(op, "Transpose")) {
        const OnnxAttr *p = fold_attr(n, "perm");
        int64_t perm[ONNX_MAX_RANK];
        int r = x0->rank, moved = 0, first = -1, second = -1;
        for (int d = 0; d < r; d++) {
            perm[d] = p ? p->ints[d] : r - 1 - d;
            if (perm[d] != d) {
                moved++;
                if (first < 0)
                    first = d;
                else
                    second = d;
            }
        }
        if (!moved)
            return X(0);
        if (moved == 2 && perm[first] == second)
            return arg(arg(call("transpose", X(0)), NULL, num_i(first)), NULL, num_i(second));
        return arg(call("permute", X(0)), NULL, list_i(perm, r));
    }
    if (!strcmp(op, "Concat")) {
        Node *lst = mk(ND_LIST);
        for (int k = 0; k < s->nin; k++) {
            if (!s->in[k] || (s->in[k]->rank && !count_nonzero_axis(s->in[k])))
                continue;
            Node *v = X(k);
            if (!v)
                return NULL;
            ast_push(&lst->list, v);
        }
        int64_t ax = fold_attr_int(n, "axis", 0);
        if (lst->list.n == 1)
            return lst->list.v[0];
        return arg(arg(call("concat", NULL), NULL, lst), "axis", num_i(ax));
    }
    if (!strcmp(op, "Split")) {
        int axis = (int)fold_attr_int(n, "axis", 0);
        if (axis < 0)
            axis += x0->rank;
        int64_t start = 0;
        for (int k = 0; k < s->outk; k++)
            start += l->f->vals[l->f->node_out[s->node] + k].dims[axis].c;
        return slice_expr(X(0), axis, start, start + s->out->dims[axis].c);
    }
    if (!strcmp(op, "Slice")) {
        /* fold computed the output shape; recompute the starts */
        Node *x = X(0);
        FoldVal *st = s->in[1], *en = s->in[2], *ax = s->nin > 3 ? s->in[3] : NULL, *sp = s->nin > 4 ? s->in[4] : NULL;
        for (int64_t k = 0; x && k < st->count; k++) {
            int64_t a = ax ? ax->i[k].c : k, step = sp ? sp->i[k].c : 1;
            if (a < 0)
                a += x0->rank;
            if (step != 1) {
                fail(l, FOLD_UNSUPPORTED, n, "Slice step %lld", (long long)step);
                return NULL;
            }
            if (x0->dims[a].b)
                continue; /* the whole batch */
            int64_t L0 = x0->dims[a].c, bb = st->i[k].c, ee = en->i[k].c;
            fold_clamp_slice(L0, 1, &bb, &ee);
            if (bb == 0 && ee == L0)
                continue;
            if (ee <= bb) {
                fail(l, FOLD_UNSUPPORTED, n, "empty Slice");
                return NULL;
            }
            x = slice_expr(x, (int)a, bb, ee);
        }
        return x;
    }
    if (!strcmp(op, "Expand")) {
        Node *sh = shape_list(l, s->out, n), *x = X(0);
        return sh && x ? arg(call("expand", x), NULL, sh) : NULL;
    }
    if (!strcmp(op, "Gather")) {
        FoldVal *idx = s->in[1];
        int axis = (int)fold_attr_int(n, "axis", 0);
        if (axis < 0)
            axis += x0->rank;
        if (axis < 0 || axis >= x0->rank) {
            fail(l, FOLD_MALFORMED, n, "axis %lld out of range", (long long)fold_attr_int(n, "axis", 0));
            return NULL;
        }
        if (!is_const(idx)) {
            if (axis != 0 || x0->rank != 2) {
                fail(l, FOLD_UNSUPPORTED, n, "Gather of run-time indices off a table's first axis");
                return NULL;
            }
            Node *ids = X(1), *t = X(0);
            return ids && t ? arg(call("embedding", ids), NULL, t) : NULL;
        }
        /* constant indices: consecutive ones are a slice */
        int64_t L0 = x0->dims[axis].c, first = 0;
        for (int64_t k = 0; k < idx->count; k++) {
            int64_t i = idx->i[k].c < 0 ? idx->i[k].c + L0 : idx->i[k].c;
            if (i < 0 || i >= L0) { /* ONNX: an error; the slice would be one too */
                fail(l, FOLD_MALFORMED, n, "index %lld out of range for %lld", (long long)idx->i[k].c, (long long)L0);
                return NULL;
            }
            if (k == 0)
                first = i;
            else if (i != first + k) {
                fail(l, FOLD_UNSUPPORTED, n, "Gather of indices that are not consecutive");
                return NULL;
            }
        }
        if (x0->dims[axis].b) {
            fail(l, FOLD_UNSUPPORTED, n, "Gather on the batch axis");
            return NULL;
        }
        Node *x = slice_expr(X(0), axis, first, first + (idx->count ? idx->count : 0));
        if (idx->rank == 1)
            return x;
        Node *sh = shape_list(l, s->out, n);
        return sh ? arg(call("reshape", x), NULL, sh) : NULL;
    }
    if (!strcmp(op, "Trilu")) {
        double k = 0;
        if (s->nin > 1 && s->in[1] && scalar_const(s->in[1], &k)) {
            fail(l, FOLD_UNSUPPORTED, n, "Trilu k that is not a constant");
            return NULL;
        }
        Node *c = call(fold_attr_int(n, "upper", 1) ? "triu" : "tril", X(0));
        if (k)
            arg(c, "k", num_i((long long)k));
        return c;
    }
    if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") || !strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) {
        int nsp = x0->rank - 2, conv = op[0] == 'C', tr = !strcmp(op, "ConvTranspose");
        if (nsp != 2 && nsp != 1) {
            fail(l, FOLD_UNSUPPORTED, n, "%s over %d spatial axes", op, nsp);
            return NULL;
        }
        int64_t k[2], st[2], di[2], pb[2], pe[2];
        const OnnxAttr *ka = fold_attr(n, "kernel_shape");
        for (int i = 0; i < nsp; i++)
            k[i] = conv ? s->in[1]->dims[2 + i].c : ka->ints[i];
        fold_window_pads(n, x0, nsp, k, st, di, pb, pe); /* (fold checked auto_pad) */
        Node *x = X(0);
        if (!x)
            return NULL;
        int sym = 1;
        for (int i = 0; i < nsp; i++)
            sym &= pb[i] == pe[i];
        if (!strcmp(op, "MaxPool") && (!sym || fold_attr_int(n, "storage_order", 0) || s->outk)) {
            fail(l, FOLD_UNSUPPORTED, n, "MaxPool attributes (uneven pads, storage_order or indices)");
            return NULL;
        }
        if (!sym) { /* uneven padding first, as its own pad */
            if (tr || !strcmp(op, "MaxPool")) {
                fail(l, FOLD_UNSUPPORTED, n, "%s with uneven pads", op);
                return NULL;
            }
            int64_t pads[4];
            for (int i = 0; i < nsp; i++)
                pads[2 * i] = pb[nsp - 1 - i], pads[2 * i + 1] = pe[nsp - 1 - i];
            x = arg(call("pad", x), NULL, list_i(pads, 2 * nsp));
            if (!strcmp(op, "AveragePool") && !fold_attr_int(n, "count_include_pad", 0)) {
                fail(l, FOLD_UNSUPPORTED, n, "AveragePool with uneven pads not counted");
                return NULL;
            }
            for (int i = 0; i < nsp; i++)
                pb[i] = pe[i] = 0;
        }
        int sq = all_same(k, nsp) && all_same(st, nsp) && all_same(pb, nsp) && all_same(di, nsp);
        if (!conv) {
            /* the language's pools pad by at most half the dilated window
             * (PyTorch's rule): say so here rather than write source
             * that does not compile */
            for (int i = 0; i < nsp; i++)
                if (2 * pb[i] > di[i] * (k[i] - 1) + 1) {
                    fail(l, FOLD_UNSUPPORTED, n, "%s that pads over half of its window", op);
                    return NULL;
                }
            if (op[0] == 'A' && (di[0] != 1 || di[nsp - 1] != 1)) {
                fail(l, FOLD_UNSUPPORTED, n, "AveragePool with dilations");
                return NULL;
            }
            static const char *const fns[2][2] = {{"max_pool1d", "max_pool2d"}, {"avg_pool1d", "avg_pool2d"}};
            Node *c = call(fns[op[0] == 'A'][nsp - 1], x);
            arg(c, "size", int_arg_list(k, nsp, all_same(k, nsp)));
            arg(c, "stride", int_arg_list(st, nsp, all_same(st, nsp)));
            if (pb[0] || pb[nsp - 1])
                arg(c, "padding", int_arg_list(pb, nsp, all_same(pb, nsp)));
            if (di[0] != 1 || di[nsp - 1] != 1)
                arg(c, "dilation", int_arg_list(di, nsp, all_same(di, nsp)));
            if (op[0] == 'A' && !fold_attr_int(n, "count_include_pad", 0) && (pb[0] || pb[nsp - 1]))
                arg(c, "count_include_pad", boolean(0));
            if (fold_attr_int(n, "ceil_mode", 0))
                arg(c, "ceil_mode", boolean(1));
            return c;
        }
        Node *w = X(1);
        if (!w)
            return NULL;
        int64_t g = fold_attr_int(n, "group", 1);
        if (tr) {
            const OnnxAttr *op2 = fold_attr(n, "output_padding");
            if (nsp != 2 || g != 1 || di[0] != 1 || di[1] != 1) {
                fail(l, FOLD_UNSUPPORTED, n, "ConvTranspose with groups or dilations");
                return NULL;
            }
            /* conv_transpose2d's ranges (PyTorch's) */
            for (int i = 0; i < 2; i++)
                if (pb[i] > k[i] - 1 || (op2 && op2->ints[i] >= st[i])) {
                    fail(l, FOLD_UNSUPPORTED, n,
                         "ConvTranspose with pads over kernel - 1 or output_padding not under "
                         "the stride");
                    return NULL;
                }
            Node *c = arg(call("conv_transpose2d", x), NULL, w);
            arg(c, "stride", int_arg_list(st, 2, sq));
            arg(c, "padding", int_arg_list(pb, 2, sq));
            if (op2 && (op2->ints[0] || op2->ints[1]))
                arg(c, "output_padding", int_arg_list(op2->ints, 2, op2->ints[0] == op2->ints[1]));
            if (s->nin > 2 && s->in[2]) {
                Node *bias = X(2);
                int64_t sh[3] = {s->in[2]->dims[0].c, 1, 1};
                return bias ? bin(OP_ADD, c, arg(call("reshape", bias), NULL, list_i(sh, 3))) : NULL;
            }
            return c;
        }
        Node *c = arg(call(nsp == 2 ? "conv2d" : "conv1d", x), NULL, w);
        if (s->nin > 2 && s->in[2]) {
            Node *bias = X(2);
            if (!bias)
                return NULL;
            arg(c, NULL, bias);
        }
        arg(c, "stride", int_arg_list(st, nsp, sq));
        arg(c, "padding", int_arg_list(pb, nsp, sq));
        if (di[0] != 1 || di[nsp - 1] != 1)
            arg(c, "dilation", int_arg_list(di, nsp, sq));
        if (g != 1)
            arg(c, "groups", num_i(g));
        return c;
    }
    if (!strcmp(op, "BatchNormalization")) {
        /* inference with the given statistics (a training export's
         * BatchNorm is the std layer, which needs its names to nest) */
        if (s->outk || fold_attr_int(n, "training_mode", 0) || n->noutputs > 1) {
            fail(l, FOLD_UNSUPPORTED, n,
                 "training-mode BatchNormalization outside a module of its own, or with a momentum outside [0, 1] "
                 "or an epsilon that is not positive");
            return NULL;
        }
        int64_t sh[ONNX_MAX_RANK];
        sh[0] = x0->dims[1].c;
        for (int d = 2; d < x0->rank; d++)
            sh[d - 1] = 1;
        Node *x = X(0), *sc = X(1), *bi = X(2), *mu = X(3), *var = X(4);
        if (!x || !sc || !bi || !mu || !var)
            return NULL;
        double eps = fold_attr_float(n, "epsilon", 1e-5f);
#define RS(e) arg(call("reshape", e), NULL, list_i(sh, x0->rank - 1))
        Node *norm = bin(OP_MUL, bin(OP_SUB, x, RS(mu)), call("rsqrt", bin(OP_ADD, RS(var), num_f((float)eps))));
        return bin(OP_ADD, bin(OP_MUL, norm, RS(sc)), RS(bi));
#undef RS
    }
    if (!strcmp(op, "LayerNormalization")) {
        int axis = (int)fold_attr_int(n, "axis", -1);
        if ((axis != -1 && axis != x0->rank - 1) || s->outk || !s->in[1] || s->in[1]->rank != 1) {
            fail(l, FOLD_UNSUPPORTED, n, "LayerNormalization over more than the last axis");
            return NULL;
        }
        Node *x = X(0), *w = X(1);
        Node *bb = s->nin > 2 && s->in[2] ? X(2) : num_f(0);
        if (!x || !w || !bb)
            return NULL;
        Node *c = arg(arg(call("layer_norm", x), NULL, w), NULL, bb);
        return arg(c, "eps", num_f(fold_attr_float(n, "epsilon", 1e-5f)));
    }
    if (!strcmp(op, "Pad")) {
        const char *mode = fold_attr_str(n, "mode", "constant");
        if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge")) {
            fail(l, FOLD_UNSUPPORTED, n, "Pad mode '%s'", mode);
            return NULL;
        }
        FoldVal *pv = s->in[1];
        int r = x0->rank, last = -1;
        int64_t pads[2 * ONNX_MAX_RANK];
        for (int d = r - 1, j = 0; d >= 0; d--, j += 2) {
            pads[j] = pv->i[d].c, pads[j + 1] = pv->i[d + r].c;
            if (pads[j] || pads[j + 1])
                last = j + 2;
            if (pads[j] < 0 || pads[j + 1] < 0) {
                fail(l, FOLD_UNSUPPORTED, n, "negative Pad");
                return NULL;
            }
        }
        Node *x = X(0);
        if (last < 0 || !x)
            return x;
        Node *c = arg(call("pad", x), NULL, list_i(pads, last));
        if (strcmp(mode, "constant")) /* ONNX's edge is PyTorch's replicate */
            arg(c, "mode", str(strcmp(mode, "edge") ? mode : "replicate"));
        double v = 0;
        if (s->nin > 2 && s->in[2] && scalar_const(s->in[2], &v)) {
            fail(l, FOLD_UNSUPPORTED, n, "Pad value that is not a constant");
            return NULL;
        }
        if (v)
            arg(c, "value", num_f(v));
        return c;
    }
    if (!strcmp(op, "Resize")) {
        const char *mode = fold_attr_str(n, "mode", "nearest"),
                   *ctm = fold_attr_str(n, "coordinate_transformation_mode", "half_pixel"),
                   *nm = fold_attr_str(n, "nearest_mode", "round_prefer_floor");
        int linear = !strcmp(mode, "linear");
        /* PyTorch's default (a whole factor, the same for H and W) stays upsample */
        if (x0->rank == 4 && !(s->out->dims[2].c % x0->dims[2].c) && !(s->out->dims[3].c % x0->dims[3].c) &&
            s->out->dims[2].c / x0->dims[2].c == s->out->dims[3].c / x0->dims[3].c &&
            s->out->dims[1].c == x0->dims[1].c &&
            (linear ? !strcmp(ctm, "half_pixel") || !strcmp(ctm, "pytorch_half_pixel")
                    : !strcmp(mode, "nearest") && !strcmp(ctm, "asymmetric") && !strcmp(nm, "floor"))) {
            Node *c = call("upsample", X(0));
            arg(c, "scale", num_i(s->out->dims[2].c / x0->dims[2].c));
            return arg(c, "mode", str(linear ? "bilinear" : "nearest"));
        }
        return resize_expr(l, s, n, X(0), mode, ctm, nm);
    }
#undef X
    fail(l, FOLD_UNSUPPORTED, n, "use of %s", op);
    return NULL;
}

/* ---- bodies ------------------------------------------------------------------------- */

static char **pname;  /* per value index: a param's name in the body that reads it */
static char **inname; /* per value index: an input's name in the body that reads it */

static Node *callee_expr(Module *c)
{
    if (c->parent && c->parent->hidden) {
        Node *ix = mk(ND_INDEX);
        ix->a = ident(c->parent->name);
        ix->b = num_i(atoll(c->name));
        return ix;
    }
    return ident(c->name);
}

static Node *step_expr(Body *b, Step *s)
{
    L *l = b->l;
    const OnnxNode *n = node_at(l, s->node);
    switch (s->kind) {
    case S_LINEAR: {
        Node *x = A(b, s, 0, n), *w = A(b, s, 1, n);
        if (!x || !w)
            return NULL;
        Node *y = bin(OP_MATMUL, x, arg(arg(call("transpose", w), NULL, num_i(0)), NULL, num_i(1)));
        if (s->in[2]) {
            Node *bb = A(b, s, 2, n);
            return bb ? bin(OP_ADD, y, bb) : NULL;
        }
        return y;
    }
    case S_LAYERNORM: {
        Node *x = A(b, s, 0, n), *w = A(b, s, 1, n), *bb = A(b, s, 2, n);
        if (!x || !w || !bb)
            return NULL;
        return arg(arg(arg(call("layer_norm", x), NULL, w), NULL, bb), "eps", num_f((float)s->eps));
    }
    case S_GELU: {
        Node *x = A(b, s, 0, n);
        return x ? call("gelu", x) : NULL;
    }
    case S_CAUSAL: {
        Node *x = A(b, s, 0, n);
        return x ? call("causal_mask", x) : NULL;
    }
    case S_CALL: {
        Node *c = call_on(callee_expr(s->callee));
        for (int k = 0; k < s->callee->nins; k++) {
            Node *v = value_expr(b, s->callee->ins[k], n);
            if (!v)
                return NULL;
            arg(c, NULL, v);
        }
        return c;
    }
    default: return node_expr(b, s);
    }
}

static char *join_comment(const char *a, const char *b)
{
    if (!a || !a[0])
        return b ? xstrdup(b) : NULL;
    if (!b || !b[0])
        return xstrdup(a);
    char *r = ast_alloc(strlen(a) + strlen(b) + 3);
    sprintf(r, "%s, %s", a, b);
    return r;
}

/* per step: the comment of what it prints, and how many steps it holds */
static int body_id;

static Node *value_expr(Body *b, FoldVal *v, const OnnxNode *n)
{
    L *l = b->l;
    int i = vidx(l, v);
    if (v->kind == FV_PARAM) {
        if (!pname[i]) {
            fail(l, FOLD_UNSUPPORTED, n, "param '%s' read outside its module", v->name);
            return NULL;
        }
        return ident(pname[i]);
    }
    if (v->kind == FV_INPUT || (inname[i] && b->m->parent)) {
        if (!inname[i]) {
            fail(l, FOLD_MALFORMED, n, "input '%s' is not in scope", v->name);
            return NULL;
        }
        return ident(inname[i]);
    }
    if (v->kind == FV_CONST)
        return const_expr(b, v, NULL, n);
    Step *s = step_of(l, v);
    if (!s || !s->expr) {
        fail(l, FOLD_MALFORMED, n, "value '%s' is read before it is computed", v->name);
        return NULL;
    }
    if (s->var)
        return ident(s->var);
    return s->expr;
}

static const char *step_own_comment(const L *l, const Step *s)
{
    if (s->kind == S_CALL) {
        if (!s->callee->std)
            return NULL;
        const Step *in = only_step(s->callee);
        return in ? step_own_comment(l, in) : NULL;
    }
    char *c = NULL;
    for (int k = 0; k < s->nnodes; k++)
        c = join_comment(c, node_at(l, s->nodes[k])->name);
    return c;
}

/* The statements of module m's call (or the model's). */
static int build_body(L *l, Module *m, Step **steps, int nsteps, FoldVal *out, Body *b)
{
    /* a value names the step of this body that computes it (a call's
     * value is also its callee's last step's, in the callee's body) */
    body_id++;
    for (int i = 0; i < nsteps; i++) {
        l->of_val[vidx(l, steps[i]->out)] = steps[i];
        steps[i]->body = body_id;
    }
    /* reads of each value inside this body */
    for (int i = 0; i < nsteps; i++)
        steps[i]->reads = 0;
    for (int i = 0; i < nsteps; i++) {
        FoldVal *r[64];
        int nr = step_reads(steps[i], r);
        for (int k = 0; k < nr; k++) {
            Step *p = step_of(l, r[k]);
            if (p && p->mod == m)
                p->reads++;
        }
    }
    for (int i = 0; i < nsteps; i++) {
        Step *s = steps[i];
        s->var = NULL;
        s->expr = step_expr(b, s);
        if (!s->expr)
            return -1;
        /* what it inlines */
        const char *cm = NULL;
        int weight = 1;
        FoldVal *r[64];
        int nr = step_reads(s, r);
        for (int k = 0; k < nr; k++) {
            Step *p = step_of(l, r[k]);
            if (p && p->body == body_id && !p->var && p->expr && r[k]->kind == FV_NODE && !p->inlined) {
                cm = join_comment(cm, p->comment);
                weight += p->weight;
                p->inlined = 1;
            }
        }
        cm = join_comment(cm, step_own_comment(l, s));
        s->comment = cm;
        s->weight = weight;
        s->inlined = 0;
        if (s->out == out)
            continue;
        if (s->reads == 1 && weight <= 4)
            continue; /* written where it is read */
        char base[64];
        if (s->kind == S_CALL)
            snprintf(base, sizeof base, "%s_out",
                     is_ident(s->callee->name, strlen(s->callee->name)) ? s->callee->name : s->callee->parent->name);
        else
            snprintf(base, sizeof base, "h");
        Node *let = mk(ND_LET);
        let->name = fresh(b, base);
        let->a = s->expr;
        let->comment = cm;
        s->var = let->name;
        ast_push(&b->stmts, let);
    }
    Node *ret = mk(ND_RETURN);
    Step *os = step_of(l, out);
    if (os && os->expr && !os->var) {
        ret->a = os->expr;
        ret->comment = os->inlined ? NULL : os->comment;
    } else {
        ret->a = value_expr(b, out, NULL);
        if (!ret->a)
            return -1;
    }
    /* the model's bool output, an f32 mask in the language, as i32 */
    if (!m->parent && out->type != ONNX_FLOAT && !int_valued(l, out))
        ret->a = call("int", ret->a);
    ast_push(&b->stmts, ret);
    return 0;
}

/* ---- declarations ------------------------------------------------------------------- */

static Node *dims_list(L *l, const FoldVal *v)
{
    Node *lst = mk(ND_LIST);
    for (int d = 0; d < v->rank; d++)
        ast_push(&lst->list, v->dims[d].b ? ident(l->batch) : num_i(v->dims[d].c));
    return lst;
}

static Node *tensor_member(L *l, const char *name, const FoldVal *v, int state)
{
    Node *p = mk(state ? ND_STATE : ND_PARAM);
    p->name = xstrdup(name);
    p->a = dims_list(l, v);
    return p;
}

static void camel(const char *s, char *out, size_t cap)
{
    size_t k = 0;
    int up = 1;
    for (; *s && k + 1 < cap; s++) {
        if (*s == '_' || *s == '.') {
            up = 1;
            continue;
        }
        out[k++] = up && *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
        up = 0;
    }
    out[k] = 0;
    if (!k || !((out[0] >= 'A' && out[0] <= 'Z') || (out[0] >= 'a' && out[0] <= 'z'))) {
        char t[128];
        snprintf(t, sizeof t, "%s", out);
        snprintf(out, cap, "Layer%.100s", t);
    }
}

static const char *const std_names[] = {
    "Dense",
    "Flatten",
    "Dropout",
    "ReLU",
    "GELU",
    "Tanh",
    "Sigmoid",
    "SiLU",
    "Softmax",
    "Residual",
    "Embedding",
    "LayerNorm",
    "MultiHeadAttention",
    "Conv2D",
    "Conv1D",
    "ConvTranspose2D",
    "MaxPool2D",
    "AvgPool2D",
    "Upsample",
    "GlobalAvgPool",
    "BatchNorm",
    "LSTM",
    "GRU",
    NULL,
};

static int decl_name_taken(const L *l, const char *name, const char *model)
{
    for (int k = 0; std_names[k]; k++)
        if (!strcmp(std_names[k], name))
            return 1;
    if (!strcmp(name, model))
        return 1;
    for (int k = 0; k < l->decls.n; k++)
        if (!strcmp(l->decls.v[k]->name, name))
            return 1;
    return 0;
}

/* The fields that name a user layer, for abstract_decls to rewrite. */
static NodeVec layer_uses;

static Node *field_of(Module *k)
{
    if (k->is_list) {
        Node *lst = mk(ND_LIST);
        for (int j = 0; j < k->nkids; j++)
            ast_push(&lst->list, field_of(k->kids[j]));
        return lst;
    }
    if (k->std)
        return k->field;
    Node *u = ident(k->declname);
    ast_push(&layer_uses, u);
    return u;
}

static void seed_names(Body *b, Module *m)
{
    for (int k = 0; k < m->nkids; k++)
        PUSH(b->names, b->nnames, b->capnames, m->kids[k]->name);
    for (int k = 0; k < m->nparams; k++)
        PUSH(b->names, b->nnames, b->capnames, m->pnames[k]);
    PUSH(b->names, b->nnames, b->capnames, b->l->batch);
}

static int members(L *l, Module *m, Node *decl)
{
    for (int k = 0; k < m->nkids; k++) {
        Node *f = mk(ND_FIELD);
        f->name = m->kids[k]->name;
        f->a = field_of(m->kids[k]);
        ast_push(&decl->list, f);
    }
    for (int k = 0; k < m->nparams; k++)
        ast_push(&decl->list, tensor_member(l, m->pnames[k], m->params[k], m->pstate[k]));
    return 0;
}

static Step **own_steps(Module *m, int *n)
{
    Step **ss = xcalloc((size_t)m->nsteps, sizeof *ss);
    *n = 0;
    for (int k = 0; k < m->nsteps; k++) /* (dead once m itself is a call) */
        ss[(*n)++] = m->steps[k];
    return ss;
}

/* A user layer's declaration: fields, params, fn call(ins) { steps }. */
static int declare(L *l, Module *m, const char *model)
{
    for (int k = 0; k < m->nkids; k++)
        if (!m->kids[k]->std && !m->kids[k]->is_list && declare(l, m->kids[k], model))
            return -1;
        else if (m->kids[k]->is_list)
            for (int j = 0; j < m->kids[k]->nkids; j++)
                if (!m->kids[k]->kids[j]->std && declare(l, m->kids[k]->kids[j], model))
                    return -1;
    if (!m->parent || m->std || m->is_list)
        return 0;
    Node *d = mk(ND_LAYER);
    members(l, m, d);
    Body b = {l, m, {0}, NULL, 0, 0};
    seed_names(&b, m);
    Node *fn = mk(ND_FN);
    fn->name = "call";
    char **saved = xcalloc((size_t)m->nins, sizeof *saved);
    int batch_bound = 0;
    for (int k = 0; k < m->nins; k++)
        saved[k] = inname[vidx(l, m->ins[k])];
    for (int k = 0; k < m->nins; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, k ? "x%d" : "x", k + 1);
        Node *p = mk(ND_FNPARAM);
        p->name = fresh(&b, nm);
        inname[vidx(l, m->ins[k])] = (char *)p->name;
        ast_push(&fn->list, p);
        /* the batch axis gets its name in the layer too: x: [N, ...] */
        if (!batch_bound && m->ins[k]->rank > 0 && m->ins[k]->dims[0].b && m->ins[k]->dims[0].c == 1) {
            p->a = mk(ND_LIST);
            ast_push(&p->a->list, ident(l->batch));
            ast_push(&p->a->list, mk(ND_ELLIPSIS));
            batch_bound = 1;
        }
    }
    for (int k = 0; k < m->nparams; k++)
        pname[vidx(l, m->params[k])] = (char *)m->pnames[k];
    int n;
    Step **ss = own_steps(m, &n);
    if (build_body(l, m, ss, n, m->out, &b))
        return -1;
    for (int k = 0; k < m->nins; k++)
        inname[vidx(l, m->ins[k])] = saved[k];
    free(saved);
    fn->b = mk(ND_BLOCK);
    fn->b->list = b.stmts;
    ast_push(&d->list, fn);
    /* share the declaration of a sibling that prints the same */
    d->name = "_";
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    source_print(d, f);
    fclose(f);
    /* compared without the comments (each instance's node names) */
    for (char *p = text, *q = text;; p++) {
        if (p[0] == ' ' && p[1] == '/' && p[2] == '/' && p[3] == ' ')
            while (*p && *p != '\n')
                p++;
        *q++ = *p;
        if (!*p)
            break;
    }
    for (int k = 0; k < l->decls.n; k++) {
        Node *o = l->decls.v[k];
        if (o->str && !strcmp(o->str, text)) {
            m->declname = o->name;
            free(text);
            return 0;
        }
    }
    char base[128], nm[140];
    camel(m->parent && m->parent->is_list ? m->parent->name : m->name, base, sizeof base);
    if (strlen(base) <= 2)
        strcat(base, "Block");
    snprintf(nm, sizeof nm, "%s", base);
    /* Layer1B ... Layer1Z, then Layer1_27, ...: a name for each of any
     * number of siblings that print differently */
    for (int k = 0; decl_name_taken(l, nm, model); k++)
        if (k < 25)
            snprintf(nm, sizeof nm, "%s%c", base, 'B' + k);
        else
            snprintf(nm, sizeof nm, "%s_%d", base, k + 2);
    d->name = xstrdup(nm);
    d->str = text; /* the printed body, for sharing (not printed) */
    m->declname = d->name;
    ast_push(&l->decls, d);
    return 0;
}

/* ---- declarations that differ in literals: one, with hparams ---------------------------- */

/* Siblings such as ResNet's blocks of 16 and of 32 filters print the same
 * but for numbers.  They become one declaration whose differing numbers are
 * hparams named after the argument they are (`filters`), and each field
 * passes its values: `[Layer1(filters: 16), Layer1(filters: 32)]`.  The
 * pass repeats, so that declarations which now differ only in the values
 * they pass down merge too. */

typedef struct Leaf {
    Node **at;         /* per group member: the literal */
    const char *ctx;   /* the argument it is, or NULL */
    const char *field; /* the field or let it sits in, or NULL */
    const char *hp;    /* its hparam, when the members differ */
    int declares;      /* the first leaf of its hparam: the one declared and passed */
} Leaf;

typedef struct Leaves {
    Leaf *v;
    int n, cap;
} Leaves;

static int is_literal(const Node *n) { return n && (n->kind == ND_INT || n->kind == ND_FLOAT || n->kind == ND_BOOL); }

/* Same tree but for literals of the same kind, comments and positions. */
static int same_shape(const Node *a, const Node *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind || a->op != b->op || a->flags != b->flags || a->list.n != b->list.n)
        return 0;
    if (is_literal(a))
        return 1;
    if ((a->name || b->name) && (!a->name || !b->name || strcmp(a->name, b->name)))
        return 0;
    if ((a->str || b->str) && (!a->str || !b->str || strcmp(a->str, b->str)))
        return 0;
    if (a->ival != b->ival || a->fval != b->fval)
        return 0;
    for (int k = 0; k < a->list.n; k++)
        if (!same_shape(a->list.v[k], b->list.v[k]))
            return 0;
    return same_shape(a->a, b->a) && same_shape(a->b, b->b) && same_shape(a->c, b->c);
}

/* Two declarations alike but for their names and literals; one that has
 * hparams already is left as it is. */
static int same_members(const Node *a, const Node *b)
{
    if (a->list.n != b->list.n || (a->list.n && a->list.v[0]->kind == ND_HPARAMS))
        return 0;
    for (int k = 0; k < a->list.n; k++)
        if (!same_shape(a->list.v[k], b->list.v[k]))
            return 0;
    return 1;
}

static int literal_equal(const Node *a, const Node *b)
{
    return a->kind == ND_FLOAT ? a->fval == b->fval : a->ival == b->ival;
}

/* The literals of members[0..n) in step, in tree order. */
static void collect_leaves(Node **ms, int n, const char *ctx, const char *field, Leaves *out)
{
    Node *a = ms[0];
    if (!a)
        return;
    if (is_literal(a)) {
        Leaf f = {xcalloc((size_t)n, sizeof(Node *)), ctx, field, NULL, 0};
        for (int k = 0; k < n; k++)
            f.at[k] = ms[k];
        PUSH(out->v, out->n, out->cap, f);
        return;
    }
    if (a->kind == ND_ARG && a->name)
        ctx = a->name;
    if (a->kind == ND_FIELD || a->kind == ND_LET)
        field = a->name;
    Node **sub = xcalloc((size_t)n, sizeof *sub);
    for (int i = 0; i < a->list.n; i++) {
        for (int k = 0; k < n; k++)
            sub[k] = ms[k]->list.v[i];
        collect_leaves(sub, n, ctx, field, out);
    }
    for (int w = 0; w < 3; w++) {
        for (int k = 0; k < n; k++)
            sub[k] = w == 0 ? ms[k]->a : w == 1 ? ms[k]->b : ms[k]->c;
        collect_leaves(sub, n, ctx, field, out);
    }
    free(sub);
}

/* Every name a declaration uses, so that an hparam does not hide one. */
static int uses_name(const Node *n, const char *name)
{
    if (!n)
        return 0;
    if (n->kind != ND_ARG && n->name && !strcmp(n->name, name)) /* (an argument's name is not in scope) */
        return 1;
    for (int k = 0; k < n->list.n; k++)
        if (uses_name(n->list.v[k], name))
            return 1;
    return uses_name(n->a, name) || uses_name(n->b, name) || uses_name(n->c, name);
}

static int hp_name_free(Node *decl, Leaves *lv, int upto, const char *name)
{
    if (!is_ident(name, strlen(name)) || uses_name(decl, name))
        return 0;
    for (int k = 0; k < upto; k++)
        if (lv->v[k].hp && !strcmp(lv->v[k].hp, name))
            return 0;
    return 1;
}

static int same_values(const Leaf *a, const Leaf *b, int n)
{
    for (int k = 0; k < n; k++)
        if (!literal_equal(a->at[k], b->at[k]))
            return 0;
    return 1;
}

/* Names the differing leaves' hparams: the argument's name, shared by
 * leaves that take the same values everywhere (a block's two convolutions'
 * `filters`), else prefixed by the field.  0 when a leaf has no name. */
static int name_hparams(Node *decl, Leaves *lv, int n)
{
    for (int k = 0; k < lv->n; k++) {
        Leaf *f = &lv->v[k];
        int differs = 0;
        for (int j = 1; j < n; j++)
            differs |= !literal_equal(f->at[0], f->at[j]);
        if (!differs)
            continue;
        if (!f->ctx)
            return 0;
        for (int j = 0; j < k && !f->hp; j++)
            if (lv->v[j].hp && !strcmp(lv->v[j].ctx, f->ctx) && same_values(&lv->v[j], f, n))
                f->hp = lv->v[j].hp;
        if (f->hp)
            continue;
        int clash = 0; /* another leaf of the same argument with other values */
        for (int j = 0; j < lv->n; j++)
            if (j != k && lv->v[j].ctx && !strcmp(lv->v[j].ctx, f->ctx) && !same_values(&lv->v[j], f, n))
                clash = 1;
        char buf[160];
        if (clash && f->field)
            snprintf(buf, sizeof buf, "%s_%s", f->field, f->ctx);
        else
            snprintf(buf, sizeof buf, "%s", f->ctx);
        char cand[176];
        snprintf(cand, sizeof cand, "%s", buf);
        for (int i = 2; !hp_name_free(decl, lv, k, cand); i++)
            snprintf(cand, sizeof cand, "%s%d", buf, i);
        f->hp = xstrdup(cand);
        f->declares = 1;
    }
    return 1;
}

static Node *hparam_type(const Node *lit)
{
    Node *t = mk(ND_TYPE);
    t->name = lit->kind == ND_INT ? "int" : lit->kind == ND_FLOAT ? "float" : "bool";
    return t;
}

/* A use of member `from` becomes a call of `to` with `args` added. */
static void retarget_uses(const char *from, const char *to, Leaves *lv, int member)
{
    for (int k = 0; k < layer_uses.n; k++) {
        Node *u = layer_uses.v[k];
        Node *callee = u->kind == ND_CALL ? u->a : u;
        if (strcmp(callee->name, from))
            continue;
        if (u->kind == ND_IDENT) {
            Node *c = call_on(ident(to));
            *u = *c;
        } else {
            callee->name = to;
        }
        for (int j = 0; j < lv->n; j++) {
            Leaf *f = &lv->v[j];
            if (f->declares) { /* one argument per hparam */
                Node *v = mk(f->at[member]->kind);
                v->ival = f->at[member]->ival;
                v->fval = f->at[member]->fval;
                arg(u, f->hp, v);
            }
        }
    }
}

static void abstract_decls(L *l)
{
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; i < l->decls.n && !again; i++) {
            Node *rep = l->decls.v[i];
            Node *ms[64];
            int n = 0;
            ms[n++] = rep;
            for (int j = i + 1; j < l->decls.n && n < 64; j++)
                if (same_members(rep, l->decls.v[j]))
                    ms[n++] = l->decls.v[j];
            if (n < 2)
                continue;
            Leaves lv = {0};
            collect_leaves(ms, n, NULL, NULL, &lv);
            if (!name_hparams(rep, &lv, n))
                continue;
            Node *hps = mk(ND_HPARAMS);
            for (int k = 0; k < lv.n; k++) {
                Leaf *f = &lv.v[k];
                if (f->declares) {
                    Node *h = mk(ND_HPARAM);
                    h->name = f->hp;
                    h->a = hparam_type(f->at[0]);
                    ast_push(&hps->list, h);
                }
            }
            for (int j = 0; j < n; j++)
                retarget_uses(ms[j]->name, rep->name, &lv, j);
            for (int k = 0; k < lv.n; k++)
                if (lv.v[k].hp) {
                    Node *lit = lv.v[k].at[0];
                    Node *id = ident(lv.v[k].hp);
                    id->comment = lit->comment;
                    *lit = *id;
                }
            ast_push(&rep->list, NULL); /* the hparams come first */
            memmove(rep->list.v + 1, rep->list.v, (size_t)(rep->list.n - 1) * sizeof *rep->list.v);
            rep->list.v[0] = hps;
            int w = 0;
            for (int k = 0; k < l->decls.n; k++) {
                int gone = 0;
                for (int j = 1; j < n; j++)
                    gone |= l->decls.v[k] == ms[j];
                if (!gone)
                    l->decls.v[w++] = l->decls.v[k];
                else { /* merged into rep: its printed body goes */
                    free((char *)l->decls.v[k]->str);
                    l->decls.v[k]->str = NULL;
                }
            }
            l->decls.n = w;
            for (int k = 0; k < lv.n; k++)
                free(lv.v[k].at);
            free(lv.v);
            again = 1;
        }
    }
}

/* ---- modules into layers, bottom-up --------------------------------------------------- */

static int cmp_index(const void *a, const void *b)
{
    return atoi((*(Module *const *)a)->name) - atoi((*(Module *const *)b)->name);
}

/* 0: done; 1: the model does not nest (write it flat) */
static int lift_module(L *l, Module *m)
{
    for (int k = 0; k < m->nkids; k++)
        if (lift_module(l, m->kids[k]))
            return 1;
    if (!m->parent)
        return 0;
    int numbered = !m->nparams && kids_numbered(m);
    for (int k = 0; k < m->nkids && !numbered; k++)
        if (is_index(m->kids[k]->name, strlen(m->kids[k]->name)))
            return 1; /* numbered and named children mixed */
    if (!is_ident(m->name, strlen(m->name)) && !is_index(m->name, strlen(m->name)))
        return 1; /* (a numbered one is checked as its parent's element) */
    if (numbered) {
        qsort(m->kids, (size_t)m->nkids, sizeof *m->kids, cmp_index);
        for (int k = 0; k < m->nkids; k++)
            if (atoi(m->kids[k]->name) != k)
                return 1;
        m->is_list = 1;
        /* its own steps must be its elements' calls: one each, applied in
         * turn (a Sequential) or called one by one (a ModuleList) */
        int n;
        Step **ss = own_steps(m, &n);
        if (n != m->nkids)
            return 1;
        int chain = 1;
        for (int k = 0; k < n; k++) {
            if (ss[k]->kind != S_CALL || ss[k]->callee != m->kids[k])
                return 1;
            if (k && (m->kids[k]->nins != 1 || m->kids[k]->ins[0] != m->kids[k - 1]->out))
                chain = 0;
        }
        if (chain && m->kids[0]->nins == 1 && signature(l, m) == 0) {
            m->chain = 1;
            collapse(l, m);
            return 0;
        }
        /* called one by one: the parent calls name[i] */
        m->hidden = 1;
        for (int k = 0; k < n; k++)
            add_step(m->parent, ss[k]);
        m->nsteps = 0;
        sort_steps(m->parent->steps, m->parent->nsteps);
        free(ss);
        return 0;
    }
    if (signature(l, m))
        return 1;
    m->field = std_layer(l, m);
    m->std = m->field != NULL;
    if (!m->std) /* std_layer's trials leave their marks; a class loss's weight stays a state */
        for (int k = 0; k < m->nparams; k++)
            m->pstate[k] = as_state[m->params[k] - state_base];
    collapse(l, m);
    return 0;
}

static char *sanitize(const char *s)
{
    size_t n = strlen(s);
    char *o = xcalloc(n + 3, 1);
    size_t k = 0;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        o[k++] = 'p', o[k++] = '_';
    for (size_t j = 0; j < n; j++) {
        char ch = s[j];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (!ok && k && o[k - 1] == '_')
            continue;
        o[k++] = ok ? ch : '_';
    }
    while (k > 1 && o[k - 1] == '_')
        k--;
    o[k] = 0;
    return o;
}

static void add_tensor(L *l, const char *name, const FoldVal *v, int i64)
{
    LiftTensor t = {0};
    t.name = name;
    t.i64 = i64;
    if (v) {
        t.rank = v->rank;
        for (int d = 0; d < v->rank; d++)
            t.dims[d] = v->dims[d].c;
        t.count = v->count;
        t.f = const_data[vidx(l, v)] ? const_data[vidx(l, v)] : l->m->inits[v->init].f;
    } else {
        t.count = 1;
    }
    PUSH(l->tensors, l->ntensors, l->captensors, t);
}

static void collect_tensors(L *l, Module *m)
{
    for (int k = 0; k < m->nparams; k++) {
        char *nm = xcalloc(strlen(m->path) + strlen(m->pnames[k]) + 2, 1);
        sprintf(nm, "%s%s%s", m->path, m->path[0] ? "." : "", m->pnames[k]);
        add_tensor(l, nm, m->params[k], 0);
    }
    if (m->bn) {
        char *nm = xcalloc(strlen(m->path) + 24, 1);
        sprintf(nm, "%s.num_batches_tracked", m->path);
        add_tensor(l, nm, NULL, 1);
    }
    for (int k = 0; k < m->nkids; k++)
        collect_tensors(l, m->kids[k]);
}

static void reset(L *l)
{
    l->nsteps = 0;
    for (int k = 0; k < l->decls.n; k++) { /* declare's printed bodies: open_memstream's */
        free((char *)l->decls.v[k]->str);
        l->decls.v[k]->str = NULL;
    }
    l->decls.n = 0;
    l->ntensors = 0;
    free(l->of_val);
    l->of_val = NULL;
}

static int is_class_loss(const L *l, int k)
{
    return is_op(l, k, "NegativeLogLikelihoodLoss") || is_op(l, k, "SoftmaxCrossEntropyLoss");
}

/* 1 when every reader of v is a class loss reading it as input j only. */
static int read_as(const L *l, const FoldVal *v, int j)
{
    int r[64], nr = readers(l, v, r, 64);
    if (nr < 1 || nr > 64 || is_graph_output(l, v))
        return 0;
    for (int k = 0; k < nr; k++) {
        const OnnxNode *n = node_at(l, r[k]);
        if (!is_class_loss(l, r[k]))
            return 0;
        for (int q = 0; q < n->ninputs; q++)
            if (in_val(l, n, q) == v && q != j)
                return 0;
    }
    return 1;
}

/* Whether any dimension of v is the batch's: such a constant is made
 * per batch at run time and cannot be held as a state. */
static int has_batch_dim(const FoldVal *v)
{
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d].b)
            return 1;
    return 0;
}

/* The class losses' weights are states, not params: PyTorch's
 * NLLLoss(weight=) holds a buffer, which training leaves alone.  A
 * constant integer target (ONNX's test files, where every integer input
 * is an initializer) becomes an f32 state of its values too, class ids
 * being exact in f32: the language has no tensor literals, and the loss
 * formula reads the target as float(target) anyway. */
static void loss_states(L *l)
{
    for (int k = 0; k < l->m->nnodes; k++) {
        if (l->f->folded[k] || !is_class_loss(l, k))
            continue;
        const OnnxNode *n = node_at(l, k);
        FoldVal *w = n->ninputs > 2 ? in_val(l, n, 2) : NULL, *t = in_val(l, n, 1);
        if (w && w->kind == FV_PARAM && read_as(l, w, 2))
            as_state[vidx(l, w)] = 1;
        if (!t || t->kind != FV_CONST || t->f || t->rank < 1 || const_data[vidx(l, t)] || !read_as(l, t, 1))
            continue;
        int batched = has_batch_dim(t);
        for (int64_t e = 0; e < t->count; e++)
            batched |= t->i[e].b || t->i[e].c != (float)t->i[e].c;
        if (batched)
            continue;
        float *data = xcalloc((size_t)t->count, sizeof *data);
        for (int64_t e = 0; e < t->count; e++)
            data[e] = (float)t->i[e].c;
        const_data[vidx(l, t)] = data;
        as_state[vidx(l, t)] = 1;
        t->kind = FV_PARAM;
        t->type = ONNX_FLOAT;
    }
}

/* The ops whose every input is an operand, read through A() as a value:
 * a constant tensor there is data, not an attribute in disguise (as
 * Resize's scales or Clip's bounds are). */
static int data_op(const char *op)
{
    static const char *const ops[] = {
        "Add",  "Sub",  "Mul",        "Div",   "Pow",  "Min",   "Max",    "Sum",     "Mean",  "Exp",
        "Log",  "Cos",  "Sin",        "Tan",   "Sqrt", "Abs",   "Neg",    "Sigmoid", "Tanh",  "Erf",
        "Relu", "Sign", "Reciprocal", "Floor", "Ceil", "Round", "MatMul", "Concat",  "Where", "Identity",
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (!strcmp(op, ops[k]))
            return 1;
    return 0;
}

/* A float constant tensor that an operand reads and no literal can write
 * (const_literal) becomes a state of the model holding its values, as
 * an initializer would be: the language has no tensor literals.  A state,
 * not a param, so that training leaves it as the ONNX model has it
 * (PyTorch's PoissonNLLLoss test multiplies by a constant target; the
 * window functions' expanded forms take the cosine of a constant range).
 * A graph output that is a constant is one too: the model returns it. */
static void const_states(L *l)
{
    for (int vi = 0; vi < l->f->nvals; vi++) {
        FoldVal *v = &l->f->vals[vi];
        if (v->kind != FV_CONST || !v->f || v->rank < 1 || const_data[vi])
            continue;
        if (has_batch_dim(v))
            continue;
        int r[64], nr = readers(l, v, r, 64), need = is_graph_output(l, v);
        if (nr > 64)
            continue;
        int all_data = 1;
        for (int k = 0; k < nr; k++)
            all_data &= data_op(node_at(l, r[k])->op_type);
        for (int k = 0; k < nr && all_data && !need; k++) {
            const OnnxNode *n = node_at(l, r[k]);
            const FoldVal *out = n->noutputs > 0 && n->outputs[0][0] ? &l->f->vals[l->f->node_out[r[k]]] : NULL;
            double x;
            need = !const_literal(v, out, &x) || isinf(x) || isnan(x);
        }
        if (!need)
            continue;
        float *data = xcalloc((size_t)v->count, sizeof *data);
        for (int64_t e = 0; e < v->count; e++)
            data[e] = (float)v->f[e];
        const_data[vi] = data;
        as_state[vi] = const_state[vi] = 1;
        v->kind = FV_PARAM;
        v->type = ONNX_FLOAT;
    }
}

Lift *lift_run(const Fold *f, const char *model_name, LiftLoss loss, FoldStatus *status)
{
    L lv, *l = &lv;
    memset(l, 0, sizeof *l);
    l->f = f;
    l->m = f->m;
    l->batch = "N";
    l->status = FOLD_OK;
    layer_uses = (NodeVec){0};
    pname = xcalloc((size_t)f->nvals, sizeof *pname);
    inname = xcalloc((size_t)f->nvals, sizeof *inname);
    state_base = f->vals;
    as_state = xcalloc((size_t)f->nvals, 1);
    const_state = xcalloc((size_t)f->nvals, 1);
    const_data = xcalloc((size_t)f->nvals, sizeof *const_data);
    const OnnxModel *om = f->m;
    index_readers(l);
    l->graph_out = xcalloc((size_t)f->nvals, 1);
    l->mark = xcalloc((size_t)f->nvals, sizeof *l->mark);
    for (int k = 0; k < om->noutputs; k++) {
        FoldVal *v = fold_val(f, om->outputs[k].name);
        if (v)
            l->graph_out[vidx(l, v)] = 1;
    }
    loss_states(l);
    const_states(l);
    if (om->noutputs != 1) {
        fail(l, FOLD_UNSUPPORTED, NULL, "model with %d outputs (nnc models have one)", om->noutputs);
        goto bad;
    }
    int runtime_inputs = 0;
    for (int k = 0; k < om->ninputs; k++)
        runtime_inputs += fold_val(f, om->inputs[k].name)->kind == FV_INPUT;
    if (!runtime_inputs) {
        fail(l, FOLD_UNSUPPORTED, NULL, "model with no input (an nnc model reads at least one)");
        goto bad;
    }
    FoldVal *out = fold_val(f, om->outputs[0].name);
    if (out->type != ONNX_FLOAT && !exact_int_output(l, out)) {
        fail(l, FOLD_UNSUPPORTED, NULL,
             "model whose %s output the language does not compute exactly (its integer outputs: "
             "comparisons and logical ops, ArgMax, ArgMin, integer and bool inputs)",
             onnx_type_name(out->type) ? onnx_type_name(out->type) : "non-float");
        goto bad;
    }
    if (out->type != ONNX_FLOAT && loss != LIFT_LOSS_NONE) { /* an i32 output is for prediction only */
        fail(l, FOLD_UNSUPPORTED, NULL, "--loss of a model whose output is %s (a loss reads a float output)",
             onnx_type_name(out->type) ? onnx_type_name(out->type) : "not float");
        goto bad;
    }
    /* a batched model's output has the batch N as its first axis; a model
     * with no batch at all (a fixed-batch export) is a fixed-shape model,
     * whose output is any shape */
    int batched = 0;
    for (int k = 0; k < om->ninputs; k++) {
        const FoldVal *in = fold_val(f, om->inputs[k].name);
        batched |= in->rank > 0 && in->dims[0].b;
    }
    if (batched && (out->rank < 1 || !out->dims[0].b || out->dims[0].c != 1)) {
        char sh[400];
        fail(l, FOLD_UNSUPPORTED, NULL,
             "model whose output has the shape %s: a model's output has the batch N as its first axis (export "
             "with a dynamic first axis)",
             fold_shape_str(out, sh, sizeof sh));
        goto bad;
    }
    for (int pass = 0; pass < 2; pass++) {
        reset(l);
        if (build_steps(l))
            goto bad;
        l->root = new_module(NULL, "", 0);
        l->flat = pass == 1;
        for (int k = 0; k < f->nvals && !l->flat; k++)
            if (f->vals[k].kind == FV_PARAM && f->vals[k].uses && !const_state[k] && !place_param(l, &f->vals[k]))
                l->flat = 1;
        for (int k = 0; k < f->nvals && !l->flat; k++) /* by the modules the params made */
            if (const_state[k])
                place_const(l, &f->vals[k]);
        if (!l->flat)
            l->flat = assign_steps(l);
        if (!l->flat)
            l->flat = lift_module(l, l->root);
        if (l->status != FOLD_OK)
            goto bad;
        if (!l->flat)
            break;
        if (pass == 0)
            continue;
        /* flat: every param at the top, every step in the model's body */
        l->root = new_module(NULL, "", 0);
        reset(l);
        build_steps(l);
        for (int k = 0; k < l->nsteps; k++)
            add_step(l->root, l->steps[k]);
        for (int k = 0; k < f->nvals; k++) {
            FoldVal *v = &f->vals[k];
            if (v->kind != FV_PARAM || !v->uses)
                continue;
            char *nm = sanitize(v->name);
            char buf[256];
            snprintf(buf, sizeof buf, "%s", nm);
            for (int j = 2; param_index(l->root, buf) >= 0 || !is_ident(buf, strlen(buf)); j++)
                snprintf(buf, sizeof buf, "%s_%d", nm, j);
            add_param(l->root, v, buf);
        }
        /* BatchNorm's statistics are not trained */
        for (int k = 0; k < l->nsteps; k++) {
            Step *s = l->steps[k];
            if (s->kind == S_NODE && !strcmp(node_at(l, s->node)->op_type, "BatchNormalization"))
                for (int j = 3; j < 5 && j < s->nin; j++)
                    for (int q = 0; q < l->root->nparams; q++)
                        if (s->in[j] == l->root->params[q])
                            l->root->pstate[q] = 1;
        }
    }
    if (declare(l, l->root, model_name))
        goto bad;

    /* the model */
    Module *r = l->root;
    Node *model = mk(ND_MODEL);
    model->name = xstrdup(model_name);
    Body b = {l, r, {0}, NULL, 0, 0};
    seed_names(&b, r);
    Node *fn = mk(ND_FN);
    fn->name = "call";
    for (int k = 0; k < om->ninputs; k++) {
        FoldVal *v = fold_val(f, om->inputs[k].name);
        char *nm = sanitize(v->name);
        const char *name = fresh(&b, nm);
        Node *in = mk(ND_INPUT);
        in->name = name;
        in->str = v->type == ONNX_FLOAT ? "f32" : "i32";
        in->a = dims_list(l, v);
        ast_push(&model->list, in);
        inname[vidx(l, v)] = (char *)name;
        Node *p = mk(ND_FNPARAM);
        p->name = name;
        ast_push(&fn->list, p);
    }
    members(l, r, model);
    for (int k = 0; k < r->nparams; k++)
        pname[vidx(l, r->params[k])] = (char *)r->pnames[k];
    int n;
    Step **ss = own_steps(r, &n);
    if (build_body(l, r, ss, n, out, &b))
        goto bad;
    fn->b = mk(ND_BLOCK);
    fn->b->list = b.stmts;
    ast_push(&model->list, fn);
    if (loss != LIFT_LOSS_NONE) {
        Node *lab = mk(ND_LABEL);
        lab->name = fresh(&b, "y");
        lab->str = loss == LIFT_LOSS_MSE ? "f32" : "i32";
        lab->a = dims_list(l, out);
        if (loss == LIFT_LOSS_CROSS_ENTROPY) {
            if (out->rank < 2) {
                fail(l, FOLD_UNSUPPORTED, NULL, "--loss cross_entropy of an output of rank %d", out->rank);
                goto bad;
            }
            lab->a->list.n--;
        }
        /* after the inputs */
        ast_push(&model->list, NULL);
        Node **v = model->list.v;
        memmove(v + om->ninputs + 1, v + om->ninputs, (size_t)(model->list.n - 1 - om->ninputs) * sizeof *v);
        model->list.v[om->ninputs] = lab;
        Node *self = call_on(mk(ND_SELF));
        for (int k = 0; k < om->ninputs; k++)
            arg(self, NULL, ident(model->list.v[k]->name));
        Node *ls = mk(ND_LOSS);
        ls->a = arg(call(loss == LIFT_LOSS_MSE ? "mse" : "cross_entropy", self), NULL, ident(lab->name));
        ast_push(&model->list, ls);
        if (loss == LIFT_LOSS_CROSS_ENTROPY) {
            Node *mt = mk(ND_METRIC);
            mt->name = "accuracy";
            mt->a = arg(call("accuracy", self), NULL, ident(lab->name));
            ast_push(&model->list, mt);
        }
    }
    if (!l->flat)
        abstract_decls(l);
    Node *file = mk(ND_FILE);
    for (int k = 0; k < l->decls.n; k++) {
        free((char *)l->decls.v[k]->str); /* declare's printed body: open_memstream's */
        l->decls.v[k]->str = NULL;
        ast_push(&file->list, l->decls.v[k]);
    }
    ast_push(&file->list, model);
    l->file = file;
    if (l->flat) {
        for (int k = 0; k < r->nparams; k++)
            add_tensor(l, r->pnames[k], r->params[k], 0);
    } else {
        collect_tensors(l, r);
    }
    if (l->status != FOLD_OK) /* an error reported on the way */
        goto bad;
    Lift *res = xcalloc(1, sizeof *res);
    res->file = file;
    res->tensors = l->tensors;
    res->ntensors = l->ntensors;
    res->flat = l->flat;
    *status = FOLD_OK;
    return res;
bad:
    for (int k = 0; k < l->decls.n; k++) { /* declare's printed bodies: open_memstream's */
        free((char *)l->decls.v[k]->str);
        l->decls.v[k]->str = NULL;
    }
    *status = l->status == FOLD_OK ? FOLD_UNSUPPORTED : l->status;
    return NULL;
}

int lift_compiles(const char *path, const char *text, size_t len)
{
    SrcFile mem = {path, text, len};
    ElabOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.memfiles = &mem;
    opt.nmemfiles = 1;
    int before = diag_errors();
    Program *prog = load_program(path, &opt);
    Model **models = NULL;
    if (prog)
        model_elaborate(prog, &opt, &models);
    return prog && diag_errors() == before ? 0 : -1;
}

/* ---- the weights ------------------------------------------------------------------------ */

static void put_json_str(char **p, size_t *len, size_t *cap, const char *s);

static void grow(char **p, size_t *len, size_t *cap, size_t more)
{
    while (*len + more + 1 > *cap) {
        *cap = *cap ? 2 * *cap : 4096;
        *p = realloc(*p, *cap);
        if (!*p)
            abort();
    }
}

static void put(char **p, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    grow(p, len, cap, n);
    memcpy(*p + *len, s, n + 1);
    *len += n;
}

static void put_json_str(char **p, size_t *len, size_t *cap, const char *s)
{
    put(p, len, cap, "\"");
    for (; *s; s++) {
        char e[8];
        if (*s == '"' || *s == '\\')
            snprintf(e, sizeof e, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            snprintf(e, sizeof e, "\\u%04x", *s);
        else
            e[0] = *s, e[1] = 0;
        put(p, len, cap, e);
    }
    put(p, len, cap, "\"");
}

char *lift_safetensors(const Lift *lt, size_t *out_len)
{
    char *h = NULL;
    size_t hl = 0, hc = 0;
    uint64_t off = 0;
    put(&h, &hl, &hc, "{");
    for (int k = 0; k < lt->ntensors; k++) {
        const LiftTensor *t = &lt->tensors[k];
        char buf[96];
        if (k)
            put(&h, &hl, &hc, ",");
        put_json_str(&h, &hl, &hc, t->name);
        put(&h, &hl, &hc, t->i64 ? ":{\"dtype\":\"I64\",\"shape\":[" : ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < t->rank; d++) {
            snprintf(buf, sizeof buf, "%s%lld", d ? "," : "", (long long)t->dims[d]);
            put(&h, &hl, &hc, buf);
        }
        uint64_t size = (uint64_t)t->count * (t->i64 ? 8 : 4);
        snprintf(buf, sizeof buf, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                 (unsigned long long)(off + size));
        put(&h, &hl, &hc, buf);
        off += size;
    }
    put(&h, &hl, &hc, "}");
    while (hl % 8)
        put(&h, &hl, &hc, " ");
    size_t total = 8 + hl + (size_t)off;
    unsigned char *o = malloc(total ? total : 1);
    if (!o)
        abort();
    for (int b = 0; b < 8; b++)
        o[b] = (unsigned char)((uint64_t)hl >> (8 * b));
    memcpy(o + 8, h, hl);
    unsigned char *d = o + 8 + hl;
    for (int k = 0; k < lt->ntensors; k++) {
        const LiftTensor *t = &lt->tensors[k];
        for (int64_t e = 0; e < t->count; e++) {
            uint64_t bits = 0;
            int nb = t->i64 ? 8 : 4;
            if (!t->i64) {
                uint32_t u;
                float x = t->f ? t->f[e] : 0.0f;
                memcpy(&u, &x, 4);
                bits = u;
            }
            for (int b = 0; b < nb; b++)
                *d++ = (unsigned char)(bits >> (8 * b));
        }
    }
    free(h);
    *out_len = total;
    return (char *)o;
}
