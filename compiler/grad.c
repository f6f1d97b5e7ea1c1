/* grad.c — reverse-mode automatic differentiation over the IR (grad_*).
 *
 * The training graph's forward nodes are walked from the loss back to the
 * leaves in reverse topological order; each node's adjoint is pushed to its
 * operands by the rule of its op, and an operand reached twice (fan-out, a
 * shared weight) has its contributions added.  Backward nodes are ordinary
 * IR appended to the same graph, so the planner fuses and schedules them
 * like the forward pass.  Only nodes that lead to a trainable param get
 * adjoints: a frozen param costs no gradient work at all.
 *
 * Derivatives are written with primitives where that is exact (tanh' =
 * 1 - y², sigmoid' = y(1-y)); ops whose adjoint needs a row-wise pass
 * (softmax, cross-entropy) have their own *_BWD op.
 */
#include <stdlib.h>
#include <string.h>

#include "grad.h"

static Graph *G;
static int *adj;          /* per forward node: its adjoint, or -1 */
static const IrNode *cur; /* the forward node being differentiated */
static int made;          /* the first node its rule made */

/* The adjoints of a node's slices, kept apart until the node's own rule
 * runs (flush_slices): slices of one tensor along one axis that do not
 * overlap (an LSTM's four gates, its T steps of the input projection)
 * then make one concat of their gradients, where a zero-padded copy of
 * the whole tensor per slice and the sum of those would cost T times the
 * tensor, T times over. */
typedef struct Piece {
    int slice; /* the forward slice */
    int dy;    /* its adjoint */
} Piece;
static Piece **pieces; /* per forward node */
static int *npieces, *cappieces;
static int *nslices; /* per forward node: the forward slices that read it */

/* a + b + c, a new string */
static const char *cat(const char *a, const char *b, const char *c)
{
    size_t len = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(len);
    if (!s)
        abort();
    snprintf(s, len, "%s%s%s", a, b, c);
    return s;
}

static const char *name_of(const IrNode *n) { return n->name ? n->name : ir_op_name(n->op); }

/* What a backward node is called until it becomes an adjoint (acc): the
 * forward node's name and its own op, "d_fc1_step". */
static const char *op_name(IrOp op) { return cat("d_", name_of(cur), cat("_", ir_op_name(op), "")); }

static int bw(IrOp op, Shape s, int nin, const int *in)
{
    IrNode n = ir_node(op, DT_F32, s, nin, in);
    n.backward = 1;
    n.loc = cur->loc;
    n.what = cur->what;
    n.name = op_name(op);
    return ir_add(G, n);
}

static Shape shp(int t) { return G->nodes[t].shape; }

static int b1(IrOp op, int a) { return bw(op, shp(a), 1, &a); }

static int b2(IrOp op, int a, int b)
{
    Shape s;
    if (ir_broadcast(shp(a), shp(b), &s) < 0)
        abort(); /* elaboration checked every shape */
    int in[2] = {a, b};
    return bw(op, s, 2, in);
}

static int cst(double v, int npow)
{
    IrNode n = ir_node(IR_CONST, DT_F32, ir_shape(0, NULL, -1), 0, NULL);
    n.fval = v;
    n.ival2 = npow;
    n.backward = 1;
    n.loc = cur->loc;
    n.name = op_name(IR_CONST);
    return ir_add(G, n);
}

static int reshape(int t, Shape s)
{
    if (ir_shape_eq(shp(t), s))
        return t;
    /* a constant is a scalar that broadcasts wherever it is used */
    if (G->nodes[t].op == IR_CONST && ir_numel(s) == 1 && s.bd < 0)
        return t;
    return bw(IR_RESHAPE, s, 1, &t);
}

/* Sums a broadcast gradient back to the shape of the operand it came from. */
static int sum_to(int t, Shape to)
{
    Shape from = shp(t);
    if (ir_shape_eq(from, to))
        return t;
    uint32_t mask = 0;
    int lead = from.nd - to.nd;
    for (int i = 0; i < from.nd; i++) {
        int j = i - lead;
        if (j < 0 || (to.d[j] == 1 && (from.d[i] != 1 || i == from.bd) && j != to.bd))
            mask |= 1u << i;
    }
    if (mask) {
        Shape s = from;
        s.bd = from.bd;
        for (int i = 0; i < from.nd; i++)
            if (mask & (1u << i)) {
                s.d[i] = 1;
                if (i == from.bd)
                    s.bd = -1;
            }
        int r = bw(IR_SUM, s, 1, &t);
        G->nodes[r].axes = mask;
        G->nodes[r].keepdim = 1;
        t = r;
    }
    return reshape(t, to);
}

/* Pushes g to the adjoint of x.  Each contribution the rule made, and
 * their sum, is called d_<x> (and so is what a contribution made by a
 * reshape views, if the rule made that too: a bias's summed gradient). */
static void acc(int x, int g)
{
    const char *name = cat("d_", name_of(&G->nodes[x]), "");
    for (int t = g; t >= made && G->nodes[t].op != IR_CONST; t = G->nodes[t].in[0]) {
        G->nodes[t].name = name;
        if (G->nodes[t].op != IR_RESHAPE)
            break;
    }
    if (adj[x] < 0) {
        adj[x] = g;
        return;
    }
    int in[2] = {adj[x], g};
    IrNode n = ir_node(IR_ADD, DT_F32, shp(x), 2, in);
    n.backward = 1;
    n.loc = G->nodes[x].loc;
    n.what = G->nodes[x].what;
    n.name = name;
    adj[x] = ir_add(G, n);
}

/* The keepdim shape of a reduction's result. */
static Shape kept(const IrNode *n)
{
    Shape in = shp(n->in[0]), s = in;
    for (int i = 0; i < in.nd; i++)
        if (n->axes & (1u << i)) {
            s.d[i] = 1;
            if (i == in.bd)
                s.bd = -1;
        }
    return s;
}

/* 1/count for a mean over `mask` of `s`: the batch dim contributes 1/n. */
static int inv_count(const Shape *s, uint32_t mask)
{
    double c = 1;
    int npow = 0;
    for (int i = 0; i < s->nd; i++)
        if (mask & (1u << i)) {
            c *= (double)s->d[i];
            if (i == s->bd)
                npow = -1;
        }
    return cst(1.0 / c, npow);
}

/* Row r of a [2, C] statistics tensor, shaped as `k` (x with every dim
 * but the channels set to 1) so that it broadcasts against x. */
static int stats_row(int t, int r, Shape k)
{
    Shape s = shp(t);
    s.d[0] = 1;
    int sl = bw(IR_SLICE, s, 1, &t);
    G->nodes[sl].axis = 0;
    G->nodes[sl].start = r;
    G->nodes[sl].end = r + 1;
    return reshape(sl, k);
}

/* ---- the rules ------------------------------------------------------------
 *
 * One function per op (ops.def's grad column): it reads the forward node n,
 * its own id y, its adjoint dy, its operands x = in[0] and b = in[1], and
 * pushes an adjoint to each operand that needs one (acc).  */

typedef struct Rule {
    const IrNode *n;  /* the forward node (a copy: building nodes may move G->nodes) */
    int y;            /* its id */
    int dy;           /* its adjoint */
    int x, b;         /* in[0] and in[1], or -1 */
    const int *needs; /* per node: it leads to a trainable param */
} Rule;

/* operand k of the node needs an adjoint */
static int need(const Rule *r, int k) { return r->needs[r->n->in[k]]; }

static void d_neg(const Rule *r) { acc(r->x, b1(IR_NEG, r->dy)); }

/* step(y) = step(x) (relu(x) > 0 exactly when x > 0, NaN included):
 * reading y lets x fuse into the loop that makes y (h + skip) */
static void d_relu(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b1(IR_STEP, r->y))); }

static void d_sigmoid(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b2(IR_MUL, r->y, b2(IR_SUB, cst(1, 0), r->y)))); }

static void d_tanh(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b2(IR_SUB, cst(1, 0), b2(IR_MUL, r->y, r->y)))); }
static void d_gelu(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b1(IR_DGELU, r->x))); }
static void d_gelu_tanh(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b1(IR_DGELU_TANH, r->x))); }
static void d_silu(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b1(IR_DSILU, r->x))); }
static void d_exp(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, r->y)); }
static void d_log(const Rule *r) { acc(r->x, b2(IR_DIV, r->dy, r->x)); }
static void d_sqrt(const Rule *r) { acc(r->x, b2(IR_DIV, b2(IR_MUL, r->dy, cst(0.5, 0)), r->y)); }

static void d_rsqrt(const Rule *r)
{
    acc(r->x, b2(IR_MUL, r->dy, b2(IR_MUL, cst(-0.5, 0), b2(IR_MUL, r->y, b2(IR_MUL, r->y, r->y)))));
}

static void d_abs(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b1(IR_SIGN, r->x))); }

/* erf' = 2/√π e^(−x²) */
static void d_erf(const Rule *r)
{
    int e = b1(IR_EXP, b1(IR_NEG, b2(IR_MUL, r->x, r->x)));
    acc(r->x, b2(IR_MUL, r->dy, b2(IR_MUL, e, cst(1.12837916709551257390, 0))));
}

/* (1/x)' = −y², PyTorch's −dy y y */
static void d_reciprocal(const Rule *r) { acc(r->x, b1(IR_NEG, b2(IR_MUL, r->dy, b2(IR_MUL, r->y, r->y)))); }

/* dy times the derivative op d of x, with the forward node's constants
 * (leaky_relu's slope, hard_sigmoid's alpha and beta, clip's bounds) */
static void d_by(const Rule *r, IrOp d)
{
    int t = b1(d, r->x);
    G->nodes[t].fval = r->n->fval;
    G->nodes[t].fval2 = r->n->fval2;
    acc(r->x, b2(IR_MUL, r->dy, t));
}

static void d_leaky_relu(const Rule *r) { d_by(r, IR_DLEAKY_RELU); }
static void d_hard_sigmoid(const Rule *r) { d_by(r, IR_DHARD_SIGMOID); }
static void d_hard_swish(const Rule *r) { d_by(r, IR_DHARD_SWISH); }
static void d_clip(const Rule *r) { d_by(r, IR_DCLIP); }
static void d_softplus(const Rule *r) { d_by(r, IR_DSOFTPLUS); }
static void d_elu(const Rule *r) { d_by(r, IR_DELU); }
static void d_selu(const Rule *r) { d_by(r, IR_DSELU); }
static void d_mish(const Rule *r) { d_by(r, IR_DMISH); }

/* The trigonometric and hyperbolic functions, with PyTorch's formulas
 * (derivatives.yaml): sin' = cos, cos' = -sin, tan' = 1 + y²; asin' =
 * rsqrt(1 - x²), acos' its negative, atan' = 1 / (1 + x²); sinh' = cosh,
 * cosh' = sinh; asinh' = rsqrt(x² + 1), acosh' = rsqrt(x² - 1), atanh' =
 * 1 / (1 - x²). */
static void d_sin(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b1(IR_COS, r->x))); }
static void d_cos(const Rule *r) { acc(r->x, b1(IR_NEG, b2(IR_MUL, r->dy, b1(IR_SIN, r->x)))); }
static void d_tan(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b2(IR_ADD, cst(1, 0), b2(IR_MUL, r->y, r->y)))); }
static void d_sinh(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b1(IR_COSH, r->x))); }
static void d_cosh(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b1(IR_SINH, r->x))); }

/* dy rsqrt(a x² + c) */
static int by_rsqrt(const Rule *r, double a, double c)
{
    int x2 = b2(IR_MUL, r->x, r->x);
    return b2(IR_MUL, r->dy, b1(IR_RSQRT, b2(IR_ADD, a == 1 ? x2 : b1(IR_NEG, x2), cst(c, 0))));
}

static void d_asin(const Rule *r) { acc(r->x, by_rsqrt(r, -1, 1)); }
static void d_acos(const Rule *r) { acc(r->x, b1(IR_NEG, by_rsqrt(r, -1, 1))); }
static void d_asinh(const Rule *r) { acc(r->x, by_rsqrt(r, 1, 1)); }
static void d_acosh(const Rule *r) { acc(r->x, by_rsqrt(r, 1, -1)); }
static void d_atan(const Rule *r) { acc(r->x, b2(IR_DIV, r->dy, b2(IR_ADD, b2(IR_MUL, r->x, r->x), cst(1, 0)))); }
static void d_atanh(const Rule *r) { acc(r->x, b2(IR_DIV, r->dy, b2(IR_SUB, cst(1, 0), b2(IR_MUL, r->x, r->x)))); }

/* softsign' = 1 / (1 + |x|)², what autograd makes of PyTorch's x / (1 +
 * |x|) (abs' is 0 at 0, so 1 there too) */
static void d_softsign(const Rule *r)
{
    int d = b2(IR_ADD, cst(1, 0), b1(IR_ABS, r->x));
    acc(r->x, b2(IR_DIV, r->dy, b2(IR_MUL, d, d)));
}
static void d_square(const Rule *r) { acc(r->x, b2(IR_MUL, r->dy, b2(IR_MUL, r->x, cst(2, 0)))); }

static void d_powc(const Rule *r)
{
    double c = r->n->fval;
    int d;
    if (c == 1)
        d = r->dy;
    else if (c == 2)
        d = b2(IR_MUL, r->dy, b2(IR_MUL, r->x, cst(2, 0)));
    else {
        int p = b1(IR_POWC, r->x);
        G->nodes[p].fval = c - 1;
        d = b2(IR_MUL, r->dy, b2(IR_MUL, p, cst(c, 0)));
    }
    acc(r->x, d);
}

static void d_add(const Rule *r)
{
    if (need(r, 0))
        acc(r->x, sum_to(r->dy, shp(r->x)));
    if (need(r, 1))
        acc(r->b, sum_to(r->dy, shp(r->b)));
}

static void d_sub(const Rule *r)
{
    if (need(r, 0))
        acc(r->x, sum_to(r->dy, shp(r->x)));
    if (need(r, 1))
        acc(r->b, sum_to(b1(IR_NEG, r->dy), shp(r->b)));
}

static void d_mul(const Rule *r)
{
    if (need(r, 0))
        acc(r->x, sum_to(b2(IR_MUL, r->dy, r->b), shp(r->x)));
    if (need(r, 1))
        acc(r->b, sum_to(b2(IR_MUL, r->dy, r->x), shp(r->b)));
}

static void d_div(const Rule *r)
{
    if (need(r, 0))
        acc(r->x, sum_to(b2(IR_DIV, r->dy, r->b), shp(r->x)));
    if (need(r, 1))
        acc(r->b, sum_to(b1(IR_NEG, b2(IR_MUL, r->dy, b2(IR_DIV, r->y, r->b))), shp(r->b)));
}

/* maximum and minimum: the gradient goes to the larger (smaller) operand,
 * half to each on a tie (MAXGRAD) */
static void d_minmax(const Rule *r)
{
    int mx = r->n->op == IR_MAXIMUM, x = r->x, b = r->b;
    if (need(r, 0))
        acc(x, sum_to(b2(IR_MUL, r->dy, mx ? b2(IR_MAXGRAD, x, b) : b2(IR_MAXGRAD, b, x)), shp(x)));
    if (need(r, 1))
        acc(b, sum_to(b2(IR_MUL, r->dy, mx ? b2(IR_MAXGRAD, b, x) : b2(IR_MAXGRAD, x, b)), shp(b)));
}

/* where(c, a, b): dy goes to a where c holds and to b elsewhere, each
 * summed back over its broadcast dims; none to c, as PyTorch's bool
 * condition */
static void d_where(const Rule *r)
{
    for (int k = 1; k <= 2; k++)
        if (need(r, k)) {
            int in[3] = {r->n->in[0], k == 1 ? r->dy : cst(0, 0), k == 1 ? cst(0, 0) : r->dy};
            acc(r->n->in[k], sum_to(bw(IR_WHERE, shp(r->dy), 3, in), shp(r->n->in[k])));
        }
}

static void d_expand(const Rule *r) { acc(r->x, sum_to(r->dy, shp(r->x))); }
static void d_reshape(const Rule *r) { acc(r->x, reshape(r->dy, shp(r->x))); }

static void d_permute(const Rule *r)
{
    int inv[IR_MAXD];
    for (int k = 0; k < r->n->shape.nd; k++)
        inv[r->n->perm[k]] = k;
    int p = bw(IR_PERMUTE, shp(r->x), 1, &r->dy);
    memcpy(G->nodes[p].perm, inv, sizeof inv);
    acc(r->x, p);
}

static void d_concat(const Rule *r)
{
    int64_t off = 0;
    for (int k = 0; k < r->n->nin; k++) {
        Shape s = shp(r->n->in[k]);
        if (need(r, k)) {
            int t = bw(IR_SLICE, s, 1, &r->dy);
            G->nodes[t].axis = r->n->axis;
            G->nodes[t].start = off;
            G->nodes[t].end = off + s.d[r->n->axis];
            acc(r->n->in[k], t);
        }
        off += s.d[r->n->axis];
    }
}

/* The adjoints along one axis (axis, [start, end) copied from the node):
 * pad's is dy's slice where x sits, slice's a zero pad, reflect's adds the
 * mirrored positions back (pad_reflect_bwd) */
static void d_along_axis(const Rule *r, IrOp op)
{
    int t = bw(op, shp(r->x), 1, &r->dy);
    G->nodes[t].axis = r->n->axis;
    G->nodes[t].start = r->n->start;
    G->nodes[t].end = r->n->end;
    G->nodes[t].ival = r->n->op == IR_PAD_REFLECT ? r->n->ival : 0; /* replicate */
    acc(r->x, t);
}

static void d_pad(const Rule *r) { d_along_axis(r, IR_SLICE); }
static void d_pad_reflect(const Rule *r) { d_along_axis(r, IR_PAD_REFLECT_BWD); }

/* a lone slice's adjoint is its zero pad at once; several are kept for
 * flush_slices */
static void d_slice(const Rule *r)
{
    int x = r->x;
    if (nslices[x] < 2) {
        d_along_axis(r, IR_PAD);
        return;
    }
    if (npieces[x] == cappieces[x]) {
        cappieces[x] = cappieces[x] ? 2 * cappieces[x] : 4;
        pieces[x] = realloc(pieces[x], sizeof(Piece) * (size_t)cappieces[x]);
        if (!pieces[x])
            abort();
    }
    pieces[x][npieces[x]++] = (Piece){r->y, r->dy};
}

static int by_start(const void *a, const void *b)
{
    int64_t x = G->nodes[((const Piece *)a)->slice].start, y = G->nodes[((const Piece *)b)->slice].start;
    return (x > y) - (x < y);
}

/* Adds the adjoints of x's slices to x's: one concat of them in order,
 * each widened by a zero pad over the gap before it (and the last over
 * the gap after it); or a zero pad each, where the slices overlap or run
 * along different axes, or one is left (the others have no gradient). */
static void flush_slices(int x)
{
    int np = npieces[x];
    if (!np)
        return;
    Piece *p = pieces[x];
    qsort(p, (size_t)np, sizeof *p, by_start);
    int axis = G->nodes[p[0].slice].axis, apart = np > 1;
    for (int k = 1; k < np; k++)
        if (G->nodes[p[k].slice].axis != axis || G->nodes[p[k].slice].start < G->nodes[p[k - 1].slice].end)
            apart = 0;
    /* the nodes are the first slice's backward */
    static IrNode self;
    self = G->nodes[p[0].slice];
    cur = &self;
    made = G->n;
    Shape s = shp(x);
    if (!apart) {
        for (int k = 0; k < np; k++) {
            self = G->nodes[p[k].slice]; /* each pad is its own slice's backward */
            made = G->n;
            int t = bw(IR_PAD, s, 1, &p[k].dy);
            G->nodes[t].axis = self.axis, G->nodes[t].start = self.start, G->nodes[t].end = self.end;
            acc(x, t);
        }
        npieces[x] = 0;
        return;
    }
    int *in = malloc(sizeof(int) * (size_t)np);
    if (!in)
        abort();
    int64_t at = 0;
    for (int k = 0; k < np; k++) {
        int64_t st = G->nodes[p[k].slice].start, en = G->nodes[p[k].slice].end;
        int64_t hi = k == np - 1 ? s.d[axis] : en;
        in[k] = p[k].dy;
        if (at != st || hi != en) {
            Shape ps = s;
            ps.d[axis] = hi - at;
            in[k] = bw(IR_PAD, ps, 1, &p[k].dy);
            G->nodes[in[k]].axis = axis, G->nodes[in[k]].start = st - at, G->nodes[in[k]].end = en - at;
        }
        at = hi;
    }
    int c = bw(IR_CONCAT, s, np, in);
    G->nodes[c].axis = axis;
    free(in);
    npieces[x] = 0;
    acc(x, c);
}

static void d_upsample(const Rule *r)
{
    int t = bw(IR_UPSAMPLE_BWD, shp(r->x), 1, &r->dy);
    G->nodes[t].kh = r->n->kh, G->nodes[t].kw = r->n->kw, G->nodes[t].ival = r->n->ival;
    acc(r->x, t);
}

/* resize is linear in x: its transpose, the same taps read backwards */
static void d_resize(const Rule *r)
{
    int t = bw(IR_RESIZE_BWD, shp(r->x), 1, &r->dy);
    IrNode *b = &G->nodes[t];
    b->axis = r->n->axis, b->ival = r->n->ival, b->ival2 = r->n->ival2, b->stride = r->n->stride;
    b->fval = r->n->fval, b->fval2 = r->n->fval2, b->exclude_pad = r->n->exclude_pad;
    acc(r->x, t);
}

/* C = A @ B: dA = dC @ Bᵀ, dB = Aᵀ @ dC, summed over broadcast dims.  A 2-D
 * weight under a batched A is one GEMM over the rows of all batches, the
 * common case of a dense layer on [N, T, C]. */
static void d_matmul(const Rule *r)
{
    const int x = r->x, b = r->b, dy = r->dy;
    if (need(r, 0)) {
        int in[2] = {dy, b};
        Shape s = shp(dy);
        s.d[s.nd - 1] = shp(b).d[shp(b).nd - 2];
        if (s.bd == s.nd - 1)
            s.bd = -1;
        if (shp(b).bd == shp(b).nd - 2)
            s.bd = s.nd - 1;
        int t = bw(IR_MATMUL, s, 2, in);
        G->nodes[t].tb = 1;
        acc(x, sum_to(t, shp(x)));
    }
    if (need(r, 1)) {
        Shape sa = shp(x), sy = shp(dy);
        int a2 = x, d2 = dy;
        if (shp(b).nd == 2 && sa.nd > 2) {
            Shape fa = ir_shape(2, (int64_t[]){ir_numel(sa) / sa.d[sa.nd - 1], sa.d[sa.nd - 1]},
                                sa.bd >= 0 && sa.bd < sa.nd - 1 ? 0 : -1);
            Shape fy = ir_shape(2, (int64_t[]){ir_numel(sy) / sy.d[sy.nd - 1], sy.d[sy.nd - 1]},
                                sy.bd >= 0 && sy.bd < sy.nd - 1 ? 0 : -1);
            a2 = reshape(x, fa), d2 = reshape(dy, fy);
        }
        Shape s = shp(d2);
        int nd = s.nd;
        s.d[nd - 2] = shp(a2).d[shp(a2).nd - 1];
        s.bd = -1;
        if (shp(a2).bd == shp(a2).nd - 1)
            s.bd = nd - 2;
        if (shp(d2).bd == nd - 1)
            s.bd = nd - 1;
        for (int k = 0; k < nd - 2; k++)
            if (shp(d2).bd == k)
                s.bd = k;
        int in[2] = {a2, d2};
        int t = bw(IR_MATMUL, s, 2, in);
        G->nodes[t].ta = 1;
        acc(b, sum_to(t, shp(b)));
    }
}

/* sum and mean: dy broadcast back over the reduced dims (/ count) */
static void d_sum(const Rule *r)
{
    int t = bw(IR_EXPAND, shp(r->x), 1, (int[]){reshape(r->dy, kept(r->n))});
    if (r->n->op == IR_MEAN)
        t = b2(IR_MUL, t, inv_count(&G->nodes[r->x].shape, r->n->axes));
    acc(r->x, t);
}

/* ties share the gradient evenly, as PyTorch's amax */
static void d_max(const Rule *r)
{
    Shape k = kept(r->n);
    int ym = bw(IR_EXPAND, shp(r->x), 1, (int[]){reshape(r->y, k)});
    int mask = b2(IR_EQMASK, r->x, ym);
    int cnt = bw(IR_SUM, k, 1, &mask);
    G->nodes[cnt].axes = r->n->axes;
    G->nodes[cnt].keepdim = 1;
    int share = b2(IR_DIV, reshape(r->dy, k), cnt);
    int e = bw(IR_EXPAND, shp(r->x), 1, &share);
    acc(r->x, b2(IR_MUL, e, mask));
}

static void d_softmax(const Rule *r)
{
    int in[2] = {r->dy, r->y};
    int t = bw(r->n->op == IR_SOFTMAX ? IR_SOFTMAX_BWD : IR_LOG_SOFTMAX_BWD, shp(r->x), 2, in);
    G->nodes[t].axis = r->n->axis;
    acc(r->x, t);
}

static void d_cross_entropy(const Rule *r)
{
    int in[3] = {r->dy, r->x, r->b};
    acc(r->x, bw(IR_CE_BWD, shp(r->x), 3, in));
}

static void d_mse(const Rule *r)
{
    uint32_t all = (1u << shp(r->x).nd) - 1;
    int d = b2(IR_MUL, b2(IR_MUL, b2(IR_SUB, r->x, r->b), b2(IR_MUL, inv_count(&G->nodes[r->x].shape, all), cst(2, 0))),
               r->dy);
    if (need(r, 0))
        acc(r->x, d);
    if (need(r, 1))
        acc(r->b, b1(IR_NEG, d));
}

/* mean of max(x,0) - x t + log(1 + exp(-|x|)): d/dx = sigmoid(x) - t, d/dt = -x */
static void d_bce_logits(const Rule *r)
{
    uint32_t all = (1u << shp(r->x).nd) - 1;
    int scale = b2(IR_MUL, inv_count(&G->nodes[r->x].shape, all), r->dy);
    if (need(r, 0))
        acc(r->x, b2(IR_MUL, b2(IR_SUB, b1(IR_SIGMOID, r->x), r->b), scale));
    if (need(r, 1))
        acc(r->b, b2(IR_MUL, b1(IR_NEG, r->x), scale));
}

/* only the table has a gradient: the ids are integers */
static void d_embedding(const Rule *r)
{
    int in[2] = {r->dy, r->x};
    acc(r->b, bw(IR_EMBEDDING_BWD, shp(r->b), 2, in));
}

static void d_layer_norm(const Rule *r)
{
    int x = r->x, w = r->n->in[1], bb = r->n->in[2];
    if (need(r, 0)) {
        int in[3] = {r->dy, x, w};
        int t = bw(IR_LAYER_NORM_BWD, shp(x), 3, in);
        G->nodes[t].fval = r->n->fval;
        acc(x, t);
    }
    if (need(r, 1)) {
        int in[2] = {r->dy, x};
        int t = bw(IR_LAYER_NORM_WGRAD, shp(w), 2, in);
        G->nodes[t].fval = r->n->fval;
        acc(w, t);
    }
    if (need(r, 2))
        acc(bb, sum_to(r->dy, shp(bb)));
}

static void d_causal_mask(const Rule *r)
{
    int t = bw(IR_CAUSAL_MASK, shp(r->x), 1, &r->dy);
    G->nodes[t].ival = 1; /* zeros above the diagonal */
    acc(r->x, t);
}

/* cumsum's adjoint is the cumsum of dy the other way round, exclusive
 * when the forward one is */
static void d_cumsum(const Rule *r)
{
    int t = bw(IR_CUMSUM, shp(r->x), 1, &r->dy);
    G->nodes[t].axis = r->n->axis;
    G->nodes[t].ival = r->n->ival ^ 2;
    acc(r->x, t);
}

/* gather_elements: dy added back at the positions it was read from (a
 * scatter-add); none to the index */
static void d_gather_elements(const Rule *r)
{
    int in[2] = {r->dy, r->b};
    int t = bw(IR_GATHER_ELEMENTS_BWD, shp(r->x), 2, in);
    G->nodes[t].axis = r->n->axis;
    acc(r->x, t);
}

/* tril and triu keep the same triangle of dy */
static void d_tri(const Rule *r)
{
    int t = bw(r->n->op, shp(r->x), 1, &r->dy);
    G->nodes[t].ival = r->n->ival;
    acc(r->x, t);
}

/* im2col and the pools: their adjoint ops */
static void d_pool(const Rule *r)
{
    const IrNode *n = r->n;
    int in[3] = {r->dy, r->x, r->y};
    IrOp op = n->op == IR_IM2COL ? IR_COL2IM : n->op == IR_AVGPOOL ? IR_AVGPOOL_BWD : IR_MAXPOOL_BWD;
    int t = bw(op, shp(r->x), op == IR_MAXPOOL_BWD ? 3 : 1, in);
    G->nodes[t].kh = n->kh, G->nodes[t].kw = n->kw, G->nodes[t].stride = n->stride, G->nodes[t].pad = n->pad;
    G->nodes[t].stride_w = n->stride_w, G->nodes[t].pad_w = n->pad_w;
    G->nodes[t].dil_h = n->dil_h, G->nodes[t].dil_w = n->dil_w;
    G->nodes[t].exclude_pad = n->exclude_pad;
    acc(r->x, t);
}

/* batch_stats and batch_norm (elab.c's batch_norm_prim).  batch_norm's
 * stats are batch_stats of its own x, so its dx is the whole BatchNorm
 * backward, dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)): the path
 * through the statistics is in it and nothing is pushed to them.  The
 * stats get an adjoint only from other uses, with the plain rule
 * d/dx of (mean, var) = (1/M, 2 (x - mean) / M). */
static void d_batch_norm(const Rule *r)
{
    const IrNode *n = r->n;
    int x = r->x, dy = r->dy;
    Shape xs = shp(x), k = xs;
    uint32_t mask = 0;
    for (int i = 0; i < xs.nd; i++)
        if (i != 1) {
            k.d[i] = 1;
            mask |= 1u << i;
        }
    k.bd = -1;
    if (n->op == IR_BN_STATS) {
        int dmean = stats_row(dy, 0, k), dvar = stats_row(dy, 1, k), mean = stats_row(r->y, 0, k);
        int dv = b2(IR_MUL, b2(IR_MUL, b2(IR_SUB, x, mean), dvar), cst(2, 0));
        acc(x, b2(IR_MUL, b2(IR_ADD, dv, dmean), inv_count(&xs, mask)));
        return;
    }
    int w = n->in[2], b = n->in[3];
    int in[5] = {dy, x, n->in[1], w, -1};
    int gr = bw(IR_BN_GRADS, shp(n->in[1]), 3, in);
    G->nodes[gr].fval = n->fval;
    if (r->needs[w])
        acc(w, reshape(stats_row(gr, 0, ir_shape(2, (int64_t[]){1, xs.d[1]}, -1)), shp(w)));
    if (r->needs[b])
        acc(b, reshape(stats_row(gr, 1, ir_shape(2, (int64_t[]){1, xs.d[1]}, -1)), shp(b)));
    if (r->needs[x]) {
        in[4] = gr;
        int t = bw(IR_BN_BWD, xs, 5, in);
        G->nodes[t].fval = n->fval;
        acc(x, t);
    }
}

/* a convolution node of op with n's geometry (kernel, strides, padding,
 * dilation, groups) */
static int conv_like(IrOp op, const IrNode *n, Shape s, int a, int b)
{
    int in[2] = {a, b};
    int t = bw(op, s, 2, in);
    IrNode *c = &G->nodes[t];
    c->kh = n->kh, c->kw = n->kw, c->stride = n->stride, c->pad = n->pad;
    c->stride_w = n->stride_w, c->pad_w = n->pad_w, c->dil_h = n->dil_h, c->dil_w = n->dil_w, c->groups = n->groups;
    return t;
}

/* dx = the convolution's adjoint, dW = the sum over examples of dy x's
 * patches; how each is computed is kernel.c's choice */
static void d_conv2d(const Rule *r)
{
    const IrNode *n = r->n;
    for (int k = 0; k < 2; k++)
        if (need(r, k))
            acc(n->in[k],
                conv_like(k == 0 ? IR_CONV2D_BWD_DATA : IR_CONV2D_BWD_FILTER, n, shp(n->in[k]), r->dy,
                          k == 0 ? n->in[1] : r->x));
}

/* conv_transpose2d (prims.c) is a convolution's data gradient of its
 * input x [N, C_in, H, W] by w [C_in, C_out, KH, KW]: its own gradients
 * are the convolution of dy by w (for x) and the convolution's kernel
 * gradient with dy in the image's place (for w) */
static void d_conv2d_bwd_data(const Rule *r)
{
    const IrNode *n = r->n;
    if (need(r, 0))
        acc(n->in[0], conv_like(IR_CONV2D, n, shp(n->in[0]), r->dy, n->in[1]));
    if (need(r, 1))
        acc(n->in[1], conv_like(IR_CONV2D_BWD_FILTER, n, shp(n->in[1]), n->in[0], r->dy));
}

/* ops.def's grad column; 0 where no gradient flows through the op */
static void (*const rules[IR_NUM_OPS])(const Rule *) = {
#define OP(e, name, cls, arity, flops, grad, emit) [IR_##e] = grad,
#include "ops.def"
#undef OP
};

static void rule(int i, const int *needs)
{
    /* a copy: building backward nodes may move G->nodes */
    static IrNode self;
    self = G->nodes[i];
    cur = &self;
    made = G->n;
    if (!rules[self.op])
        return;
    Rule r = {&self, i, adj[i], self.nin > 0 ? self.in[0] : -1, self.nin > 1 ? self.in[1] : -1, needs};
    rules[self.op](&r);
}

/* Which nodes depend on a trainable param (and so need an adjoint). */
static int *needs_grad(const Model *m, const Graph *g)
{
    int *needs = calloc((size_t)g->n + 1, sizeof(int));
    if (!needs)
        abort();
    for (int i = 0; i < g->n; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->op == IR_PARAM) {
            needs[i] = !m->params[n->ival].frozen;
            continue;
        }
        /* no gradient flows through an op without a rule (argmax, the
         * derivative ops such as step): nothing before it needs one */
        if (!rules[n->op])
            continue;
        for (int k = 0; k < n->nin; k++)
            needs[i] |= needs[n->in[k]];
    }
    return needs;
}

void grad_build(const Model *m, Graph *g)
{
    G = g;
    int nf = g->fwd_end;
    adj = malloc(sizeof(int) * (size_t)nf);
    g->param_grad = malloc(sizeof(int) * (size_t)(m->nparams + 1));
    if (!adj || !g->param_grad)
        abort();
    pieces = calloc((size_t)nf + 1, sizeof *pieces);
    npieces = calloc((size_t)nf + 1, sizeof(int));
    cappieces = calloc((size_t)nf + 1, sizeof(int));
    nslices = calloc((size_t)nf + 1, sizeof(int));
    if (!pieces || !npieces || !cappieces || !nslices)
        abort();
    for (int i = 0; i < nf; i++)
        if (g->nodes[i].op == IR_SLICE)
            nslices[g->nodes[i].in[0]]++;
    for (int i = 0; i < nf; i++)
        adj[i] = -1;
    for (int i = 0; i < m->nparams; i++)
        g->param_grad[i] = -1;
    int *needs = needs_grad(m, g);
    if (g->loss >= 0 && needs[g->loss]) {
        static IrNode seed;
        seed = g->nodes[g->loss];
        cur = &seed;
        adj[g->loss] = cst(1, 0);
        g->nodes[adj[g->loss]].name = cat("d_", name_of(&seed), "");
        for (int i = g->loss; i >= 0; i--) {
            flush_slices(i);
            if (adj[i] < 0 || !needs[i])
                continue;
            rule(i, needs);
        }
    }
    for (int i = 0; i < nf; i++)
        if (g->nodes[i].op == IR_PARAM && adj[i] >= 0)
            g->param_grad[g->nodes[i].ival] = adj[i];
    for (int i = 0; i < nf; i++)
        free(pieces[i]);
    free(pieces), free(npieces), free(cappieces), free(nslices);
    free(needs);
    free(adj);
}
