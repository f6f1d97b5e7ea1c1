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
#include "nnc_conv.h"

static Graph *G;
static int *adj;          /* per forward node: its adjoint, or -1 */
static const IrNode *cur; /* the forward node being differentiated */

static int bw(IrOp op, Shape s, int nin, const int *in)
{
    IrNode n = ir_node(op, DT_F32, s, nin, in);
    n.backward = 1;
    n.loc = cur->loc;
    n.what = cur->what;
    return ir_add(G, n);
}

static Shape shp(int t) { return G->nodes[t].shape; }

static int b1(IrOp op, int a) { return bw(op, shp(a), 1, &a); }

static int b2(IrOp op, int a, int b)
{
    Shape s;
    if (ir_broadcast(shp(a), shp(b), &s) < 0)
        abort();              /* elaboration checked every shape */
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

static void acc(int x, int g)
{
    if (adj[x] < 0) {
        adj[x] = g;
        return;
    }
    int in[2] = {adj[x], g};
    IrNode n = ir_node(IR_ADD, DT_F32, shp(x), 2, in);
    n.backward = 1;
    n.loc = G->nodes[x].loc;
    n.what = G->nodes[x].what;
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
static int inv_count(Shape s, uint32_t mask)
{
    double c = 1;
    int npow = 0;
    for (int i = 0; i < s.nd; i++)
        if (mask & (1u << i)) {
            c *= (double)s.d[i];
            if (i == s.bd)
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

/* batch_stats and batch_norm (elab.c's batch_norm_prim).  batch_norm's
 * stats are batch_stats of its own x, so its dx is the whole BatchNorm
 * backward, dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)): the path
 * through the statistics is in it and nothing is pushed to them.  The
 * stats get an adjoint only from other uses, with the plain rule
 * d/dx of (mean, var) = (1/M, 2 (x - mean) / M). */
static void bn_rule(int y, const IrNode *n, int dy, const int *needs)
{
    int x = n->in[0];
    Shape xs = shp(x), k = xs;
    uint32_t mask = 0;
    for (int i = 0; i < xs.nd; i++)
        if (i != 1) {
            k.d[i] = 1;
            mask |= 1u << i;
        }
    k.bd = -1;
    if (n->op == IR_BN_STATS) {
        int dmean = stats_row(dy, 0, k), dvar = stats_row(dy, 1, k), mean = stats_row(y, 0, k);
        int dv = b2(IR_MUL, b2(IR_MUL, b2(IR_SUB, x, mean), dvar), cst(2, 0));
        acc(x, b2(IR_MUL, b2(IR_ADD, dv, dmean), inv_count(xs, mask)));
        return;
    }
    int w = n->in[2], b = n->in[3];
    int in[5] = {dy, x, n->in[1], w, -1};
    int gr = bw(IR_BN_GRADS, shp(n->in[1]), 3, in);
    G->nodes[gr].fval = n->fval;
    if (needs[w])
        acc(w, reshape(stats_row(gr, 0, ir_shape(2, (int64_t[]){1, xs.d[1]}, -1)), shp(w)));
    if (needs[b])
        acc(b, reshape(stats_row(gr, 1, ir_shape(2, (int64_t[]){1, xs.d[1]}, -1)), shp(b)));
    if (needs[x]) {
        in[4] = gr;
        int r = bw(IR_BN_BWD, xs, 5, in);
        G->nodes[r].fval = n->fval;
        acc(x, r);
    }
}

static void rule(int i, const int *needs)
{
    /* a copy: building backward nodes may move G->nodes */
    static IrNode self;
    self = G->nodes[i];
    const IrNode *n = &self;
    cur = n;
    int dy = adj[i];
    int x = n->nin > 0 ? n->in[0] : -1, b = n->nin > 1 ? n->in[1] : -1;
    int y = i;
#define NEED(k) (needs[n->in[k]])
    switch (n->op) {
    case IR_NEG: acc(x, b1(IR_NEG, dy)); break;
    /* step(y) = step(x) (relu(x) > 0 exactly when x > 0, NaN included):
     * reading y lets x fuse into the loop that makes y (h + skip) */
    case IR_RELU: acc(x, b2(IR_MUL, dy, b1(IR_STEP, y))); break;
    case IR_SIGMOID: acc(x, b2(IR_MUL, dy, b2(IR_MUL, y, b2(IR_SUB, cst(1, 0), y)))); break;
    case IR_TANH: acc(x, b2(IR_MUL, dy, b2(IR_SUB, cst(1, 0), b2(IR_MUL, y, y)))); break;
    case IR_GELU: acc(x, b2(IR_MUL, dy, b1(IR_DGELU, x))); break;
    case IR_SILU: acc(x, b2(IR_MUL, dy, b1(IR_DSILU, x))); break;
    case IR_EXP: acc(x, b2(IR_MUL, dy, y)); break;
    case IR_LOG: acc(x, b2(IR_DIV, dy, x)); break;
    case IR_SQRT: acc(x, b2(IR_DIV, b2(IR_MUL, dy, cst(0.5, 0)), y)); break;
    case IR_RSQRT: acc(x, b2(IR_MUL, dy, b2(IR_MUL, cst(-0.5, 0), b2(IR_MUL, y, b2(IR_MUL, y, y))))); break;
    case IR_ABS: acc(x, b2(IR_MUL, dy, b1(IR_SIGN, x))); break;
    case IR_SQUARE: acc(x, b2(IR_MUL, dy, b2(IR_MUL, x, cst(2, 0)))); break;
    case IR_POWC: {
        double c = n->fval;
        int d;
        if (c == 1)
            d = dy;
        else if (c == 2)
            d = b2(IR_MUL, dy, b2(IR_MUL, x, cst(2, 0)));
        else {
            int p = b1(IR_POWC, x);
            G->nodes[p].fval = c - 1;
            d = b2(IR_MUL, dy, b2(IR_MUL, p, cst(c, 0)));
        }
        acc(x, d);
        break;
    }
    case IR_ADD:
        if (NEED(0)) acc(x, sum_to(dy, shp(x)));
        if (NEED(1)) acc(b, sum_to(dy, shp(b)));
        break;
    case IR_SUB:
        if (NEED(0)) acc(x, sum_to(dy, shp(x)));
        if (NEED(1)) acc(b, sum_to(b1(IR_NEG, dy), shp(b)));
        break;
    case IR_MUL:
        if (NEED(0)) acc(x, sum_to(b2(IR_MUL, dy, b), shp(x)));
        if (NEED(1)) acc(b, sum_to(b2(IR_MUL, dy, x), shp(b)));
        break;
    case IR_DIV:
        if (NEED(0)) acc(x, sum_to(b2(IR_DIV, dy, b), shp(x)));
        if (NEED(1)) acc(b, sum_to(b1(IR_NEG, b2(IR_MUL, dy, b2(IR_DIV, y, b))), shp(b)));
        break;
    case IR_MAXIMUM:
    case IR_MINIMUM: {
        int mx = n->op == IR_MAXIMUM;
        if (NEED(0)) acc(x, sum_to(b2(IR_MUL, dy, mx ? b2(IR_MAXGRAD, x, b) : b2(IR_MAXGRAD, b, x)), shp(x)));
        if (NEED(1)) acc(b, sum_to(b2(IR_MUL, dy, mx ? b2(IR_MAXGRAD, b, x) : b2(IR_MAXGRAD, x, b)), shp(b)));
        break;
    }
    case IR_EXPAND: acc(x, sum_to(dy, shp(x))); break;
    case IR_RESHAPE: acc(x, reshape(dy, shp(x))); break;
    case IR_PERMUTE: {
        int inv[IR_MAXD];
        for (int k = 0; k < n->shape.nd; k++)
            inv[n->perm[k]] = k;
        int r = bw(IR_PERMUTE, shp(x), 1, &dy);
        memcpy(G->nodes[r].perm, inv, sizeof inv);
        acc(x, r);
        break;
    }
    case IR_CONCAT: {
        int64_t off = 0;
        for (int k = 0; k < n->nin; k++) {
            Shape s = shp(n->in[k]);
            if (needs[n->in[k]]) {
                int r = bw(IR_SLICE, s, 1, &dy);
                G->nodes[r].axis = n->axis;
                G->nodes[r].start = off;
                G->nodes[r].end = off + s.d[n->axis];
                acc(n->in[k], r);
            }
            off += s.d[n->axis];
        }
        break;
    }
    case IR_SLICE: {
        int r = bw(IR_PAD, shp(x), 1, &dy);
        G->nodes[r].axis = n->axis;
        G->nodes[r].start = n->start;
        G->nodes[r].end = n->end;
        acc(x, r);
        break;
    }
    case IR_MATMUL: {
        /* C = A @ B: dA = dC @ Bᵀ, dB = Aᵀ @ dC, summed over broadcast dims.
         * A 2-D weight under a batched A is one GEMM over the rows of all
         * batches, the common case of a dense layer on [N, T, C]. */
        if (NEED(0)) {
            int in[2] = {dy, b};
            Shape s = shp(dy);
            s.d[s.nd - 1] = shp(b).d[shp(b).nd - 2];
            if (s.bd == s.nd - 1) s.bd = -1;
            if (shp(b).bd == shp(b).nd - 2) s.bd = s.nd - 1;
            int r = bw(IR_MATMUL, s, 2, in);
            G->nodes[r].tb = 1;
            acc(x, sum_to(r, shp(x)));
        }
        if (NEED(1)) {
            Shape sa = shp(x), sy = shp(dy);
            int a2 = x, d2 = dy;
            if (shp(b).nd == 2 && sa.nd > 2) {
                Shape fa = ir_shape(2, (int64_t[]){ir_numel(sa) / sa.d[sa.nd - 1], sa.d[sa.nd - 1]}, sa.bd >= 0 && sa.bd < sa.nd - 1 ? 0 : -1);
                Shape fy = ir_shape(2, (int64_t[]){ir_numel(sy) / sy.d[sy.nd - 1], sy.d[sy.nd - 1]}, sy.bd >= 0 && sy.bd < sy.nd - 1 ? 0 : -1);
                a2 = reshape(x, fa), d2 = reshape(dy, fy);
            }
            Shape s = shp(d2);
            int nd = s.nd;
            s.d[nd - 2] = shp(a2).d[shp(a2).nd - 1];
            s.bd = -1;
            if (shp(a2).bd == shp(a2).nd - 1) s.bd = nd - 2;
            if (shp(d2).bd == nd - 1) s.bd = nd - 1;
            for (int k = 0; k < nd - 2; k++)
                if (shp(d2).bd == k) s.bd = k;
            int in[2] = {a2, d2};
            int r = bw(IR_MATMUL, s, 2, in);
            G->nodes[r].ta = 1;
            acc(b, sum_to(r, shp(b)));
        }
        break;
    }
    case IR_SUM:
    case IR_MEAN: {
        int r = bw(IR_EXPAND, shp(x), 1, (int[]){reshape(dy, kept(n))});
        if (n->op == IR_MEAN)
            r = b2(IR_MUL, r, inv_count(shp(x), n->axes));
        acc(x, r);
        break;
    }
    case IR_MAX: {
        /* ties share the gradient evenly, as PyTorch's amax */
        Shape k = kept(n);
        int ym = bw(IR_EXPAND, shp(x), 1, (int[]){reshape(y, k)});
        int mask = b2(IR_EQMASK, x, ym);
        int cnt = bw(IR_SUM, k, 1, &mask);
        G->nodes[cnt].axes = n->axes;
        G->nodes[cnt].keepdim = 1;
        int share = b2(IR_DIV, reshape(dy, k), cnt);
        int e = bw(IR_EXPAND, shp(x), 1, &share);
        acc(x, b2(IR_MUL, e, mask));
        break;
    }
    case IR_SOFTMAX:
    case IR_LOG_SOFTMAX: {
        int in[2] = {dy, y};
        int r = bw(n->op == IR_SOFTMAX ? IR_SOFTMAX_BWD : IR_LOG_SOFTMAX_BWD, shp(x), 2, in);
        G->nodes[r].axis = n->axis;
        acc(x, r);
        break;
    }
    case IR_CROSS_ENTROPY: {
        int in[3] = {dy, x, b};
        acc(x, bw(IR_CE_BWD, shp(x), 3, in));
        break;
    }
    case IR_MSE: {
        uint32_t all = (1u << shp(x).nd) - 1;
        int d = b2(IR_MUL, b2(IR_MUL, b2(IR_SUB, x, b), b2(IR_MUL, inv_count(shp(x), all), cst(2, 0))), dy);
        if (NEED(0)) acc(x, d);
        if (NEED(1)) acc(b, b1(IR_NEG, d));
        break;
    }
    case IR_BCE_LOGITS: {
        /* mean of max(x,0) - x t + log(1 + exp(-|x|)): d/dx = sigmoid(x) - t, d/dt = -x */
        uint32_t all = (1u << shp(x).nd) - 1;
        int scale = b2(IR_MUL, inv_count(shp(x), all), dy);
        if (NEED(0)) acc(x, b2(IR_MUL, b2(IR_SUB, b1(IR_SIGMOID, x), b), scale));
        if (NEED(1)) acc(b, b2(IR_MUL, b1(IR_NEG, x), scale));
        break;
    }
    case IR_EMBEDDING: {
        /* only the table has a gradient: the ids are integers */
        Shape tab = shp(b);
        int in[2] = {dy, x};
        acc(b, bw(IR_EMBEDDING_BWD, tab, 2, in));
        break;
    }
    case IR_LAYER_NORM: {
        int w = n->in[1], bb = n->in[2];
        if (NEED(0)) {
            int in[3] = {dy, x, w};
            int r = bw(IR_LAYER_NORM_BWD, shp(x), 3, in);
            G->nodes[r].fval = n->fval;
            acc(x, r);
        }
        if (NEED(1)) {
            int in[2] = {dy, x};
            int r = bw(IR_LAYER_NORM_WGRAD, shp(w), 2, in);
            G->nodes[r].fval = n->fval;
            acc(w, r);
        }
        if (NEED(2))
            acc(bb, sum_to(dy, shp(bb)));
        break;
    }
    case IR_IM2COL:
    case IR_AVGPOOL:
    case IR_MAXPOOL: {
        int in[3] = {dy, x, y};
        IrOp op = n->op == IR_IM2COL ? IR_COL2IM : n->op == IR_AVGPOOL ? IR_AVGPOOL_BWD : IR_MAXPOOL_BWD;
        int r = bw(op, shp(x), op == IR_MAXPOOL_BWD ? 3 : 1, in);
        G->nodes[r].kh = n->kh, G->nodes[r].kw = n->kw, G->nodes[r].stride = n->stride, G->nodes[r].pad = n->pad;
        acc(x, r);
        break;
    }
    case IR_BN_STATS:
    case IR_BN_NORM:
        bn_rule(y, n, dy, needs);
        break;
    case IR_CONV2D: {
        /* per example: dcol = Wᵀ dy and a col2im; dW += dy colᵀ with the
         * columns made again (not kept from the forward pass); the work
         * buffer of dW also holds dWᵀ (see emit_conv_op).  In float, the
         * direct kernels of conv.c instead (dx at stride 1 and 2, dW but for 1x1). */
        Shape xs = shp(n->in[0]), ws = shp(n->in[1]);
        const int64_t ckk = xs.d[1] * ws.d[2] * ws.d[3], cols = ckk * n->shape.d[2] * n->shape.d[3];
        for (int k = 0; k < 2; k++) {
            if (!NEED(k))
                continue;
            int64_t len = cols + (k == 1 ? ckk * ws.d[0] : 0); /* and dWᵀ [CKK, F] after the columns */
            /* or the direct kernels' (conv.c) */
            int64_t d = k == 1 ? nnc_conv2d_bwd_filter_work(xs.d[1], xs.d[2], xs.d[3], ws.d[0], ws.d[2], ws.d[3],
                                                            n->stride, n->pad)
                        : n->stride == 1 && n->pad < ws.d[2] && n->pad < ws.d[3]
                            ? nnc_conv2d_s1_bwd_data_work(xs.d[1], xs.d[2], xs.d[3], ws.d[0], ws.d[2], ws.d[3], n->pad)
                        : n->stride == 2
                            ? nnc_conv2d_s2_bwd_data_work(xs.d[1], xs.d[2], xs.d[3], ws.d[0], ws.d[2], ws.d[3], n->pad)
                            : 0;
            len = d > len ? d : len;
            int sc = bw(IR_CONV_SCRATCH, ir_shape(1, (int64_t[]){len}, -1), 0, NULL);
            int in[3] = {dy, k == 0 ? n->in[1] : x, sc};
            int r = bw(k == 0 ? IR_CONV2D_BWD_DATA : IR_CONV2D_BWD_FILTER, shp(n->in[k]), 3, in);
            G->nodes[r].kh = n->kh, G->nodes[r].kw = n->kw, G->nodes[r].stride = n->stride, G->nodes[r].pad = n->pad;
            acc(n->in[k], r);
        }
        break;
    }
    case IR_CAUSAL_MASK: {
        int r = bw(IR_CAUSAL_MASK, shp(x), 1, &dy);
        G->nodes[r].ival = 1;          /* zeros above the diagonal */
        acc(x, r);
        break;
    }
    default:
        break;        /* leaves, masks, argmax, accuracy: no gradient */
    }
#undef NEED
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
        switch (n->op) {
        case IR_ARGMAX: case IR_ACCURACY: case IR_STEP: case IR_SIGN: case IR_EQMASK:
        case IR_MAXGRAD: case IR_DGELU: case IR_DSILU:
            continue;
        default:
            break;
        }
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
        for (int i = g->loss; i >= 0; i--) {
            if (adj[i] < 0 || !needs[i])
                continue;
            rule(i, needs);
        }
    }
    for (int i = 0; i < nf; i++)
        if (g->nodes[i].op == IR_PARAM && adj[i] >= 0)
            g->param_grad[g->nodes[i].ival] = adj[i];
    free(needs);
    free(adj);
}
