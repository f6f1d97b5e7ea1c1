/* plan.c — the passes between autodiff and emission (plan_*): peepholes,
 * dead-node removal, elementwise fusion, and the static memory plan.
 *
 * Fusion: an elementwise node whose only consumer is an elementwise node of
 * the same shape and the same pass (forward or backward) is not stored; the
 * emitter inlines its expression into the consumer's loop.  So a chain such
 * as dy * (1 - y*y) becomes one loop, forward or backward alike.
 *
 * Memory: every stored intermediate gets an offset in one arena, planned
 * once at compile time.  A tensor whose shape has the batch dim lives in a
 * region scaled by max_batch, so one plan serves every max_batch chosen at
 * init.  Buffers whose lifetimes do not overlap share space (first fit in
 * order of definition).  The training forward and backward passes are
 * planned as one schedule, so what backward needs stays alive.
 */
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "kernel.h"
#include "plan.h"

#define ALIGN 16 /* floats: 64-byte alignment for vector loads */

static int is_swap_last2(const IrNode *n)
{
    int nd = n->shape.nd;
    if (n->op != IR_PERMUTE || nd < 2 || n->perm[nd - 1] != nd - 2 || n->perm[nd - 2] != nd - 1)
        return 0;
    for (int i = 0; i < nd - 2; i++)
        if (n->perm[i] != i)
            return 0;
    return 1;
}

/* How many operand slots read each node, dead readers included, plus one
 * for a root of the graph (roots: root_mask below; the rewrites may only
 * change a node nothing else reads, and an output with a dead reader is
 * read).  Caller frees. */
static int *use_counts(const Graph *g, const char *roots)
{
    int *uses = calloc((size_t)g->n + 1, sizeof(int));
    if (!uses)
        abort();
    for (int i = 0; i < g->n; i++) {
        for (int k = 0; k < g->nodes[i].nin; k++)
            uses[g->nodes[i].in[k]]++;
        uses[i] += roots[i] != 0;
    }
    return uses;
}

/* The node that reads t, if it is t's only reader; else -1. */
static int only_reader(const Graph *g, const int *uses, int t)
{
    if (uses[t] != 1)
        return -1;
    for (int j = t + 1; j < g->n; j++)
        for (int k = 0; k < g->nodes[j].nin; k++)
            if (g->nodes[j].in[k] == t)
                return j;
    return -1;
}

/* Rewrites that save copies: a matmul reads a transposed operand through
 * its transpose flag, and a transposed matmul result is computed as the
 * product the other way round ((AB)ᵀ = BᵀAᵀ). */
static void peephole(Graph *g, const char *roots)
{
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        if (n->op == IR_MATMUL) {
            for (int k = 0; k < 2; k++) {
                IrNode *p = &g->nodes[n->in[k]];
                if (is_swap_last2(p)) {
                    n->in[k] = p->in[0];
                    if (k == 0)
                        n->ta = !n->ta;
                    else
                        n->tb = !n->tb;
                }
            }
        }
    }
    /* (A @ B)ᵀ with the product used only there: count uses first */
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        if (!is_swap_last2(n))
            continue;
        IrNode *mm = &g->nodes[n->in[0]];
        if (mm->op != IR_MATMUL || uses[n->in[0]] != 1)
            continue;
        /* batched too, when both operands carry the batch dims (a
         * broadcast operand would turn one GEMM into a loop of them) */
        int nd2 = mm->shape.nd;
        if (nd2 != 2 && (g->nodes[mm->in[0]].shape.nd != nd2 || g->nodes[mm->in[1]].shape.nd != nd2))
            continue;
        int a = mm->in[0], b = mm->in[1], ta = mm->ta, tb = mm->tb;
        int in[2] = {b, a};
        IrNode r = ir_node(IR_MATMUL, DT_F32, n->shape, 2, in);
        r.ta = !tb;
        r.tb = !ta;
        r.alpha = mm->alpha;
        r.loc = n->loc;
        r.what = n->what;
        r.name = n->name;
        r.backward = n->backward;
        r.buf = -1;
        free(n->in);
        *n = r;
    }
    free(uses);
}

/* Node n reads t as one more operand (a folded bias or residual). */
static void add_input(IrNode *n, int t)
{
    int *in = realloc(n->in, sizeof(int) * (size_t)(n->nin + 1));
    if (!in)
        abort();
    in[n->nin++] = t;
    n->in = in;
}

/* Node t becomes a view (a reshape to its own shape) of node `of`, which
 * now holds its value: the folds below make the nodes they absorb views. */
static void make_view(Graph *g, int t, int of)
{
    IrNode *n = &g->nodes[t];
    IrNode r = ir_node(IR_RESHAPE, n->dt, n->shape, 1, (int[]){of});
    r.loc = n->loc;
    r.what = n->what;
    r.name = n->name;
    r.backward = n->backward;
    r.buf = -1;
    free(n->in);
    *n = r;
}

/* A 4-D permute (0, 2, 1, 3): attention's heads, [b, t, h, d] <-> [b, h, t, d] */
static int is_swap_12(const Graph *g, const IrNode *n)
{
    if (n->op != IR_PERMUTE || n->shape.nd != 4 || n->perm[0] != 0 || n->perm[1] != 2 || n->perm[2] != 1 ||
        n->perm[3] != 3)
        return 0;
    const Shape s = g->nodes[n->in[0]].shape;
    return n->shape.bd <= 0 && s.bd <= 0;
}

/* A batched matmul over 4-D tensors (its batch dims the first two, none
 * broadcast) */
static int head_matmul(const Graph *g, const IrNode *n)
{
    if (n->op != IR_MATMUL || n->shape.nd != 4 || n->shape.bd > 0)
        return 0;
    for (int k = 0; k < 2; k++) {
        const Shape s = ir_matmul_operand(g, n, k);
        if (s.nd != 4 || s.bd != n->shape.bd || s.d[0] != n->shape.d[0] || s.d[1] != n->shape.d[1])
            return 0;
    }
    return 1;
}

/* Attention's head transposes, transpose(reshape(query(x), [b, t, heads,
 * hd]), 1, 2) and back, cost a copy each way, forward and backward (eight
 * an attention layer).  A batched matmul reads an operand [b, h, t, d]
 * that is such a permute of [b, t, h, d] in place instead, matrix (b, h)
 * at b t h d + h d with rows h d apart (hperm bits 0, 1), and a product
 * whose only reader is such a permute writes its result there (bit 2;
 * the permute becomes a view).  The products are the same, in the same
 * order: the same bits. */
static void fold_head_permutes(Graph *g, const char *roots)
{
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        if (!head_matmul(g, n))
            continue;
        for (int k = 0; k < 2; k++) {
            const IrNode *p = &g->nodes[n->in[k]];
            if (is_swap_12(g, p) && !(n->hperm & (1 << k))) {
                n->in[k] = p->in[0];
                n->hperm |= 1 << k;
            }
        }
    }
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *p = &g->nodes[i];
        if (!is_swap_12(g, p))
            continue;
        const int t = p->in[0];
        IrNode *mm = &g->nodes[t];
        if (!head_matmul(g, mm) || mm->nin != 2 || (mm->hperm & 4) || uses[t] != 1 || roots[t])
            continue;
        mm->hperm |= 4;
        make_view(g, i, t);
    }
    free(uses);
}

/* relu's gradient, dy * step(y), where dy is the gradient of a max pool
 * over y (relu, then pool: lenet5, digits_cnn) and read nowhere else: the
 * pool's backward pass applies the mask as it writes dx (ival 1), and the
 * product becomes a view of it.  Only for the pools whose windows tile the
 * image (emit_vision.c's maxpool_tiles: one write per element);
 * saves a pass over the largest activation (lenet5: ~0.19 ms of ~3.9). */
static void fold_relu_pool(Graph *g, const char *roots)
{
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        if (n->op != IR_MUL || n->nin != 2)
            continue;
        for (int k = 0; k < 2; k++) {
            const int pi = n->in[k], si = n->in[1 - k];
            IrNode *p = &g->nodes[pi];
            const IrNode *st = &g->nodes[si];
            if (p->op != IR_MAXPOOL_BWD || p->ival || uses[pi] != 1 || p->stride != p->kh || p->stride != p->kw ||
                p->pad || !ir_pool_plain(p, p->shape, g->nodes[p->in[0]].shape) || st->op != IR_STEP ||
                st->in[0] != p->in[1] || !ir_shape_eq(n->shape, p->shape) || !ir_shape_eq(st->shape, p->shape))
                continue;
            p->ival = 1;
            make_view(g, i, pi);
            break;
        }
    }
    free(uses);
}

/* relu's gradient dy * step(y) read only by batch norm's backward pair,
 * the sums (BN_GRADS) and dx (BN_BWD) over the same dy (through a reshape:
 * std.nn's BatchNorm works on [N, C, L]): both take dy and the mask's y
 * instead (in[3] of the sums, in[5] of dx) and apply the mask as they read
 * dy, so the product is never written: a pass over the activation saved
 * per BatchNorm followed by a relu whose output nothing else needs the
 * gradient of (resnet_small: relu(bn1(..)) in each block, and the stem's;
 * the relu after the residual add is also read by the skip's gradient). */
static void fold_relu_bn_grad(Graph *g, const char *roots)
{
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *sums = &g->nodes[i];
        if (sums->op != IR_BN_GRADS || sums->nin != 3)
            continue;
        const int d = sums->in[0];
        int dx = -1;
        for (int j = i + 1; j < g->n && dx < 0; j++)
            if (g->nodes[j].op == IR_BN_BWD && g->nodes[j].nin == 5 && g->nodes[j].in[0] == d)
                dx = j;
        if (dx < 0 || uses[d] != 2)
            continue;
        int m = d; /* the product, or the one reshape of it */
        if (g->nodes[m].op == IR_RESHAPE) {
            m = g->nodes[m].in[0];
            if (uses[m] != 1)
                continue;
        }
        const IrNode *mul = &g->nodes[m];
        if (mul->op != IR_MUL || mul->nin != 2 || mul->dt != g->nodes[d].dt)
            continue;
        for (int k = 0; k < 2; k++) {
            const int gi = mul->in[k], si = mul->in[1 - k];
            const IrNode *st = &g->nodes[si];
            if (st->op != IR_STEP || !ir_shape_eq(st->shape, mul->shape) ||
                !ir_shape_eq(g->nodes[gi].shape, mul->shape) || !ir_shape_eq(g->nodes[st->in[0]].shape, mul->shape))
                continue;
            const int y = st->in[0];
            sums->in[0] = gi;
            add_input(sums, y);
            g->nodes[dx].in[0] = gi;
            add_input(&g->nodes[dx], y);
            break;
        }
    }
    free(uses);
}

/* A convolution's bias add, and a relu after it, done by the convolution
 * as it writes its output (runtime/conv.c's copy out of the padded grid,
 * or a loop after each example's GEMM): conv2d(x, w) + b[F, 1, 1] read
 * nowhere else (relu's gradient reads relu's output, the add's none)
 * becomes conv2d(x, w, +b), and relu of it read nowhere else too
 * conv2d(x, w, +b, relu); the add and the relu become views of the
 * convolution.  Saves a pass over the output (lenet5: ~0.18 ms).  A
 * conv1d is a conv2d of one row seen as [N, F, L] (prims.c), with a bias
 * b[F, 1]: the same fold through that view (cnn1d: 4 passes, ~0.2 ms). */
static void fold_conv_bias(Graph *g, const char *roots)
{
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *a = &g->nodes[i];
        if (a->op != IR_ADD || a->nin != 2)
            continue;
        for (int k = 0; k < 2; k++) {
            /* out: the convolution, or conv1d's view of it */
            const int out = a->in[k], bi = a->in[1 - k];
            const IrNode *o = &g->nodes[out];
            const int one_d = o->op == IR_RESHAPE && uses[out] == 1 && g->nodes[o->in[0]].op == IR_CONV2D;
            const int ci = one_d ? o->in[0] : out;
            IrNode *c = &g->nodes[ci];
            const IrNode *b = &g->nodes[bi];
            /* (the bias, through its views, must exist before the
             * convolution that now reads it) */
            if (c->op != IR_CONV2D || c->nin != 2 || uses[ci] != 1 || !ir_shape_eq(a->shape, o->shape) ||
                plan_storage_root(g, bi) > ci || b->shape.nd != (one_d ? 2 : 3) || b->shape.bd >= 0 ||
                b->shape.d[0] != c->shape.d[1] || b->shape.d[1] != 1 || (!one_d && b->shape.d[2] != 1))
                continue;
            if (one_d &&
                (c->shape.d[2] != 1 || o->shape.nd != 3 || o->shape.d[1] != c->shape.d[1] ||
                 o->shape.d[2] != c->shape.d[3]))
                continue;
            add_input(c, bi); /* in[2] */
            /* a relu of the sum, if the sum is read nowhere else */
            int relu = only_reader(g, uses, i);
            if (relu >= 0 && g->nodes[relu].op != IR_RELU)
                relu = -1;
            c->ival = relu >= 0;
            /* the add (and the relu): views of the convolution's output */
            make_view(g, i, out);
            if (relu >= 0)
                make_view(g, relu, out);
            break;
        }
    }
    free(uses);
}

/* A convolution's data gradient summed with another gradient of the same
 * input (grad.c's sum for a value read twice: a residual block's input,
 * read by the convolution and by the skip): add(dconv, g), with the data
 * gradient read nowhere else and g computed before it, becomes the data
 * gradient with in[2] = g, which runtime/conv.c adds as it stores dx (the
 * column path after each example); the add becomes a view.  A pass over
 * the activation less per residual block (resnet_small: 2 MB at the
 * stem, and the skip's read in each relu(h + skip) gradient). */
static void fold_conv_add(Graph *g, const char *roots)
{
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *a = &g->nodes[i];
        if (a->op != IR_ADD || a->nin != 2 || a->in[0] == a->in[1])
            continue;
        for (int k = 0; k < 2; k++) {
            const int di = a->in[k], oi = a->in[1 - k];
            IrNode *d = &g->nodes[di];
            if (d->op != IR_CONV2D_BWD_DATA || d->nin != 2 || uses[di] != 1 || d->dt != a->dt ||
                !ir_shape_eq(a->shape, d->shape) || !ir_shape_eq(g->nodes[oi].shape, d->shape) ||
                plan_storage_root(g, oi) > di)
                continue;
            add_input(d, oi); /* in[2] */
            make_view(g, i, di);
            break;
        }
    }
    free(uses);
}

/* A weight's gradient summed over the matmuls that read the weight (an
 * LSTM's recurrent weight, once per step): add(g, A @ B), with the
 * product unbatched, read nowhere else and one GEMM (emit_matmul), and g
 * computed before it, becomes the GEMM with in[2] = g, which it copies
 * into its output and accumulates onto (beta 1); the add becomes a view.
 * Left alone, the adds fuse into one loop after the last product, which
 * keeps every product alive till then: T buffers of [4 hidden, hidden]
 * for an LSTM of T steps, where this keeps two. */
static void fold_matmul_acc(Graph *g, const char *roots)
{
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *a = &g->nodes[i];
        if (a->op != IR_ADD || a->nin != 2 || a->in[0] == a->in[1] || a->shape.bd >= 0)
            continue;
        for (int k = 0; k < 2; k++) {
            const int mi = a->in[k], oi = a->in[1 - k];
            IrNode *mm = &g->nodes[mi];
            if (mm->op != IR_MATMUL || mm->nin != 2 || uses[mi] != 1 || mm->causal || mm->dt != a->dt ||
                mm->shape.nd != 2 || g->nodes[mm->in[1]].shape.nd != 2 ||
                (g->nodes[mm->in[0]].shape.nd != 2 && mm->ta) || !ir_shape_eq(mm->shape, a->shape) ||
                !ir_shape_eq(g->nodes[oi].shape, a->shape) || plan_storage_root(g, oi) > mi)
                continue;
            add_input(mm, oi); /* in[2] */
            make_view(g, i, mi);
            break;
        }
    }
    free(uses);
}

/* A linear layer's bias: add(A @ B, b), with b a vector over the
 * product's last dim, the product one GEMM (emit_matmul) in float read
 * nowhere else, and b existing before it, becomes the GEMM with in[2] =
 * b and ival 1, which nnc_sgemm_bias adds to each tile of C as the tile
 * is final (in L1); the add becomes a view.  A Dense layer without an
 * activation had a pass of its own for the add (a ViT's query, key and
 * value: 3 x 786 KB read and written a layer), and one with GELU or
 * tanh stored its pre-activation in that pass beside the activation; the
 * activation's pass now reads the GEMM's output.  The add's one rounding
 * after the product's: the same bits. */
static void fold_linear_bias(Graph *g, const char *roots)
{
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *a = &g->nodes[i];
        if (a->op != IR_ADD || a->nin != 2 || a->dt != DT_F32)
            continue;
        for (int k = 0; k < 2; k++) {
            const int mi = a->in[k], bi = a->in[1 - k];
            IrNode *mm = &g->nodes[mi];
            const Shape sb = g->nodes[bi].shape, so = mm->shape;
            if (mm->op != IR_MATMUL || mm->nin != 2 || uses[mi] != 1 || mm->causal || mm->hperm || mm->dt != DT_F32 ||
                !ir_shape_eq(so, a->shape) || g->nodes[mm->in[1]].shape.nd != 2 ||
                (g->nodes[mm->in[0]].shape.nd != 2 && mm->ta) || sb.nd != 1 || sb.bd >= 0 ||
                sb.d[0] != so.d[so.nd - 1] || plan_storage_root(g, bi) > mi)
                continue;
            add_input(mm, bi); /* in[2] */
            mm->ival = 1;
            mm->name = a->name; /* (it holds the layer's output now: `fc1`, not `fc1_matmul`) */
            make_view(g, i, mi);
            break;
        }
    }
    free(uses);
}

/* The same for batch norm's normalization: bn(x) + r (r of the same shape:
 * a residual block's skip) and a relu after either, each read nowhere
 * else, are done in its loop (in[4] = r, ival 1 = relu), and become views
 * of it (its backward pass reads x, not its output; relu's reads relu's
 * output).  Saves one or two passes over the activation per BatchNorm
 * (resnet_small: relu(bn1(..)) and relu(bn2(..) + skip)). */
static void fold_bn_relu(Graph *g, const char *roots)
{
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *bn = &g->nodes[i];
        if (bn->op != IR_BN_NORM || bn->nin != 4 || bn->ival)
            continue;
        /* its one reader, through a reshape (std.nn's BatchNorm works on
         * [N, C, L] and reshapes back): an add of a same-shaped tensor,
         * or a relu */
        int base = i, rd = only_reader(g, uses, i);
        if (rd >= 0 && g->nodes[rd].op == IR_RESHAPE) {
            base = rd;
            rd = only_reader(g, uses, rd);
        }
        if (rd < 0)
            continue;
        const int64_t size = ir_numel(bn->shape);
        int add = -1, relu = -1;
        const IrNode *r = &g->nodes[rd];
        /* the add's other operand, the residual */
        const int res = r->nin == 2 ? (r->in[0] == base ? r->in[1] : r->in[0]) : -1;
        /* (which must exist before the normalization: a projected skip
         * computed after it is not folded) */
        if (r->op == IR_ADD && r->nin == 2 && r->in[0] != r->in[1] && ir_numel(r->shape) == size &&
            ir_shape_eq(g->nodes[r->in[0]].shape, r->shape) && ir_shape_eq(g->nodes[r->in[1]].shape, r->shape) &&
            res < i) {
            add = rd;
            const int rr = only_reader(g, uses, rd);
            if (rr >= 0 && g->nodes[rr].op == IR_RELU)
                relu = rr;
        } else if (r->op == IR_RELU)
            relu = rd;
        if (add < 0 && relu < 0)
            continue;
        if (add >= 0) /* in[4] */
            add_input(bn, res);
        bn->ival = relu >= 0;
        if (add >= 0)
            make_view(g, add, base);
        if (relu >= 0)
            make_view(g, relu, base);
    }
    free(uses);
}

/* The constant c when node t is x * c (c a plain scalar constant, x of the
 * product's own shape, so nothing is broadcast), with x in *x; else 0. */
static int scaled(const Graph *g, int t, int *x, double *c)
{
    const IrNode *n = &g->nodes[t];
    if (n->op != IR_MUL || n->dt != DT_F32)
        return 0;
    for (int k = 0; k < 2; k++) {
        const IrNode *k1 = &g->nodes[n->in[k]], *k0 = &g->nodes[n->in[1 - k]];
        if (k1->op == IR_CONST && k1->ival2 == 0 && k1->shape.nd == 0 && ir_shape_eq(k0->shape, n->shape)) {
            *x = n->in[1 - k];
            *c = k1->fval;
            return 1;
        }
    }
    return 0;
}

/* Scales and masks that ride along with the op next to them, as in
 * attention: softmax(causal_mask((q @ kᵀ) * c)) is one GEMM with alpha = c
 * and one causal softmax, and its backward one softmax_bwd over the causal
 * rows feeding GEMMs with alpha = c.  The nodes left without consumers are
 * dropped as dead code.
 *   - (A @ B) * c, the product used only there: alpha of the GEMM;
 *   - a GEMM operand x * c: the GEMM reads x, alpha *= c;
 *   - softmax(x * c) reads x with scale c; softmax(causal_mask(x)) reads x
 *     and skips the masked part of each row (exp(-inf) = 0 there);
 *   - causal_mask(softmax_bwd(dy, y)), y from a causal softmax, zeroes what
 *     is already zero (y is 0 there): a view of its input. */
static void fold_scales(Graph *g, const char *roots)
{
    int *uses = use_counts(g, roots);
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        int x;
        double c;
        if (scaled(g, i, &x, &c) && g->nodes[x].op == IR_MATMUL && uses[x] == 1) {
            IrNode r = g->nodes[x];
            r.in = malloc(sizeof(int) * 2);
            if (!r.in)
                abort();
            r.in[0] = g->nodes[x].in[0], r.in[1] = g->nodes[x].in[1];
            r.alpha *= c;
            r.loc = n->loc, r.what = n->what, r.backward = n->backward;
            free(n->in);
            *n = r;
            continue;
        }
        if (n->op == IR_MATMUL) {
            for (int k = 0; k < 2; k++)
                if (scaled(g, n->in[k], &x, &c)) {
                    n->in[k] = x;
                    n->alpha *= c;
                }
            continue;
        }
        if (n->op == IR_SOFTMAX && ir_softmax_by_rows(n)) {
            const IrNode *p = &g->nodes[n->in[0]];
            if (p->op == IR_CAUSAL_MASK && p->ival == 0 && !n->causal) {
                n->in[0] = p->in[0];
                n->causal = 1;
            }
            if (scaled(g, n->in[0], &x, &c)) {
                n->in[0] = x;
                n->alpha *= c;
            }
            continue;
        }
        if (n->op == IR_SOFTMAX_BWD && g->nodes[n->in[1]].causal) {
            n->causal = 1;
            continue;
        }
        if (n->op == IR_CAUSAL_MASK && n->ival == 1 && g->nodes[n->in[0]].op == IR_SOFTMAX_BWD &&
            g->nodes[n->in[0]].causal)
            n->op = IR_RESHAPE;
    }
    free(uses);
}

/* What the passes hand out, one list for every pass below: ROOT_FWD marks
 * the forward pass's results (output, loss, metrics, updates, summaries),
 * ROOT_GRAD the params' gradients. */
enum { ROOT_FWD = 1, ROOT_GRAD = 2 };

static char *root_mask(const Graph *g, const Model *m)
{
    char *mask = calloc((size_t)g->n + 1, 1);
    if (!mask)
        abort();
#define MARK(t, k) \
    do { \
        if ((t) >= 0) \
            mask[t] |= (k); \
    } while (0)
    MARK(g->output, ROOT_FWD);
    MARK(g->loss, ROOT_FWD);
    for (int i = 0; i < g->nmetrics; i++)
        MARK(g->metrics[i], ROOT_FWD);
    for (int i = 0; i < g->nupdates; i++)
        MARK(g->update_value[i], ROOT_FWD);
    for (int i = 0; i < g->nsummaries; i++)
        MARK(g->summary_value[i], ROOT_FWD);
    for (int i = 0; g->param_grad && i < m->nparams; i++)
        MARK(g->param_grad[i], ROOT_GRAD);
#undef MARK
    return mask;
}

/* Causal attention's products (runtime/attn.c): a batched matmul whose
 * [T, T] result only causal softmaxes read, as their rows (the scores
 * α Q Kᵀ; backward, dP = dO Vᵀ, which the causal softmax_bwd reads as dy),
 * is needed on and below the diagonal only (causal |= 1); one whose left
 * operand is a causal softmax or its gradient, maybe through a reshape
 * that keeps the [T, T] matrices (P, dS: zeros above the diagonal), can
 * skip that triangle (causal |= 2).  Marks only, on live nodes after the
 * folds: emit_ops.c calls the kernels where the sizes suit them. */
/* A causal softmax or its gradient: row i of each [T, T] matrix holds
 * values in [0, i] and zeros after (emit_ops.c softmax_rows). */
static int causal_rows(const IrNode *n) { return (n->op == IR_SOFTMAX || n->op == IR_SOFTMAX_BWD) && n->causal; }

static void mark_causal_products(Graph *g, const char *roots, const char *live)
{
    for (int t = 0; t < g->n; t++) {
        IrNode *n = &g->nodes[t];
        const int nd = n->shape.nd;
        if (!live[t] || n->op != IR_MATMUL || nd < 3 || n->shape.bd >= nd - 2)
            continue;
        const int64_t T = n->shape.d[nd - 2];
        const Shape sa = ir_matmul_operand(g, n, 0);
        const IrNode *a = &g->nodes[plan_storage_root(g, n->in[0])];
        if (causal_rows(a) && sa.nd >= 3 && sa.bd < sa.nd - 2 && sa.d[sa.nd - 1] == T && sa.d[sa.nd - 2] == T &&
            a->shape.d[a->shape.nd - 1] == T)
            n->causal |= 2;
        if (roots[t] || n->shape.d[nd - 1] != T)
            continue;
        int readers = 0, others = 0;
        for (int j = t + 1; j < g->n; j++) {
            const IrNode *r = &g->nodes[j];
            for (int k = 0; live[j] && k < r->nin; k++)
                if (r->in[k] == t) {
                    const int row_input = k == 0 && causal_rows(r) && r->shape.nd == nd && r->shape.d[nd - 1] == T;
                    readers += row_input;
                    others += !row_input;
                }
        }
        if (readers && !others)
            n->causal |= 1;
    }
}

/* Nodes that something observable depends on. */
static void mark_live(const Graph *g, const char *roots, char *live)
{
    int *stack = malloc(sizeof(int) * (size_t)(g->n + 1));
    int sp = 0;
    for (int i = 0; i < g->n; i++)
        if (roots[i])
            live[i] = 1, stack[sp++] = i;
    while (sp) {
        const IrNode *n = &g->nodes[stack[--sp]];
        for (int k = 0; k < n->nin; k++)
            if (!live[n->in[k]])
                live[n->in[k]] = 1, stack[sp++] = n->in[k];
    }
    free(stack);
}

static int new_buf(Graph *g, int64_t size, int batched, int first)
{
    if (g->nbufs == g->bufcap) {
        g->bufcap = g->bufcap ? g->bufcap * 2 : 32;
        g->bufs = realloc(g->bufs, sizeof(Buffer) * (size_t)g->bufcap);
        if (!g->bufs)
            abort();
    }
    Buffer *b = &g->bufs[g->nbufs];
    memset(b, 0, sizeof *b);
    b->size = (size + ALIGN - 1) / ALIGN * ALIGN;
    b->batched = batched;
    b->first = b->last = first;
    b->param_grad = -1;
    return g->nbufs++;
}

/* First fit: the lowest offset free for the buffer's whole lifetime. */
static void assign_offsets(Graph *g, int batched, int64_t *total)
{
    int *order = malloc(sizeof(int) * (size_t)(g->nbufs + 1));
    int n = 0;
    for (int i = 0; i < g->nbufs; i++)
        if (g->bufs[i].batched == batched && g->bufs[i].param_grad < 0)
            order[n++] = i;
    *total = 0;
    for (int a = 0; a < n; a++) {
        Buffer *b = &g->bufs[order[a]];
        int64_t off = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (int c = 0; c < a; c++) {
                Buffer *o = &g->bufs[order[c]];
                int overlap_time = !(o->last < b->first || b->last < o->first);
                int overlap_space = off < o->off + o->size && o->off < off + b->size;
                if (overlap_time && overlap_space) {
                    off = o->off + o->size;
                    moved = 1;
                }
            }
        }
        b->off = off;
        if (off + b->size > *total)
            *total = off + b->size;
        /* buffers hold at most IR_LIMIT_ELEMS, so no sum here overflows;
         * the one that crosses the limit is the one reported */
        if (*total > IR_LIMIT_TOTAL) {
            diag_error(g->nodes[b->first].loc, "the arena of the %s pass would exceed %lld floats%s here, its limit",
                       g->name, (long long)IR_LIMIT_TOTAL, batched ? " per example" : "");
            break;
        }
    }
    free(order);
}

/* The node whose storage `t` uses: reshapes are views of their input. */
int plan_storage_root(const Graph *g, int t)
{
    while (g->nodes[t].op == IR_RESHAPE)
        t = g->nodes[t].in[0];
    return t;
}

/* Nodes i and j are computed by the same function: forward or backward
 * (train), the inference pass or eval's loss and metrics (infer), so one
 * may be fused into the other's loop. */
static int same_pass(const Graph *g, int i, int j)
{
    if (g->nodes[i].backward != g->nodes[j].backward)
        return 0;
    return g->core_end < 0 || (i < g->core_end) == (j < g->core_end);
}

/* The rewrites, liveness and fusion (kernel.c then chooses the kernels,
 * and plan_memory places the buffers). */
void plan_rewrite(const Model *m, Graph *g)
{
    /* the rewrites keep node ids, so the mask stays valid */
    char *roots = root_mask(g, m);
    peephole(g, roots);
    fold_scales(g, roots);
    fold_relu_pool(g, roots);
    fold_conv_bias(g, roots);
    fold_conv_add(g, roots);
    fold_bn_relu(g, roots);
    fold_relu_bn_grad(g, roots);
    fold_matmul_acc(g, roots);
    fold_linear_bias(g, roots);
    fold_head_permutes(g, roots);
    char *live = calloc((size_t)g->n + 1, 1);
    if (!live)
        abort();
    mark_live(g, roots, live);
    mark_causal_products(g, roots, live);
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        n->uses = 0;
        n->fused = 0;
        n->buf = -1;
    }
    for (int i = 0; i < g->n; i++)
        if (live[i])
            for (int k = 0; k < g->nodes[i].nin; k++)
                g->nodes[g->nodes[i].in[k]].uses++;
    /* dead nodes are kept in the array (ids are stable) but never emitted */
    for (int i = 0; i < g->n; i++)
        if (!live[i])
            g->nodes[i].fused = -1;
    /* fusion */
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        if (!live[i])
            continue;
        if (n->op == IR_CONST) {
            n->fused = 1;
            continue;
        }
        if (!ir_is_elementwise(n->op) || n->uses != 1 || roots[i])
            continue;
        for (int j = i + 1; j < g->n; j++) {
            IrNode *c = &g->nodes[j];
            if (!live[j])
                continue;
            int reads = 0;
            for (int k = 0; k < c->nin; k++)
                reads += c->in[k] == i;
            if (!reads)
                continue;
            if (ir_is_elementwise(c->op) && same_pass(g, i, j) && ir_shape_eq(c->shape, n->shape))
                n->fused = 1;
            break;
        }
    }
    /* An elementwise node with more readers, whose first reader is a loop
     * of the same shape, is computed in that loop and stored from there
     * (fused = 2): x = a @ w + b stays for gelu's backward, but the add
     * is no pass of its own.  Later readers find it stored. */
    int *absorb = malloc(sizeof(int) * (size_t)(g->n + 1));
    if (!absorb)
        abort();
    for (int i = 0; i < g->n; i++)
        absorb[i] = -1;
    for (int i = g->n - 1; i >= 0; i--) { /* last first: a reader's own status is settled */
        IrNode *n = &g->nodes[i];
        if (!live[i] || n->fused || n->op == IR_CONST || !ir_is_elementwise(n->op) || n->uses < 2 || roots[i])
            continue;
        for (int j = i + 1; j < g->n; j++) {
            IrNode *c = &g->nodes[j];
            int reads = 0;
            for (int k = 0; live[j] && k < c->nin; k++)
                reads += c->in[k] == i;
            if (!reads)
                continue;
            if (ir_is_elementwise(c->op) && c->fused == 0 && same_pass(g, i, j) && ir_shape_eq(c->shape, n->shape)) {
                n->fused = 2;
                n->home = absorb[i] = j;
            }
            break;
        }
    }
    free(absorb);
    free(live);
    free(roots);
}

/* ---- matrix groups ------------------------------------------------------------ */

/* A local matrix's floats at most: 64 KB on its thread's stack (T 128) */
#define GROUP_LOCAL_MAX 16384

/* Node n goes matrix by matrix over its [.., T, L] output's leading dims:
 * an attention product (attn.c's kernels) or a float softmax by rows. */
static int by_matrix(const IrNode *n)
{
    const int nd = n->shape.nd;
    if (n->fused != 0 || nd < 3 || n->shape.bd >= nd - 2 || n->dt != DT_F32)
        return 0;
    if (n->op == IR_MATMUL)
        return n->kernel >= KERNEL_CAUSAL_NT && n->kernel <= KERNEL_FULL_TN;
    return ir_softmax_by_rows(n);
}

/* the same matrices: the leading dims (and the batch's place) alike */
static int same_matrices(Shape a, Shape b)
{
    if (a.nd != b.nd || a.bd != b.bd)
        return 0;
    for (int k = 0; k < a.nd - 2; k++)
        if (a.d[k] != b.d[k])
            return 0;
    return 1;
}

/* Whether node i can join the group that starts at node gs: the same
 * pass and matrices, and each of its operands that a member computes
 * read directly, as stored (no view, no head permute either side), so
 * that its matrix (i0, i1, ..) is the member's matrix of the same index,
 * already computed in the same turn of the loop. */
static int joins(const Graph *g, int gs, int i)
{
    const IrNode *n = &g->nodes[i];
    if (!same_pass(g, gs, i) || !same_matrices(n->shape, g->nodes[gs].shape))
        return 0;
    for (int k = 0; k < n->nin; k++) {
        const int r = plan_storage_root(g, n->in[k]);
        if (g->nodes[r].group != gs)
            continue;
        if (r != n->in[k] || (g->nodes[r].op == IR_MATMUL && (g->nodes[r].hperm & 4)) ||
            (n->op == IR_MATMUL && k < 2 && (n->hperm & (1 << k))))
            return 0;
    }
    return 1;
}

/* Attention's ops come in runs that go matrix by matrix: forward S =
 * a Q Kᵀ, P = softmax(S), O = P V, backward dP, dV, dS, dQ and dK.  Op by
 * op, each [T, T] matrix of S, P, dP and dS went out to L3 (2 MB a layer
 * of a ViT at batch 32) and came back for the next op.  A run of them
 * becomes one loop over the matrices, each member's matrix in turn
 * (emit_group), and a member read only by later members of its run,
 * never stored for the backward pass, lives in that loop as a per-thread
 * array (S, dP and dS).  The memory plan then keeps every member's
 * operands alive to the run's end and its outputs from the run's start
 * (plan_memory), since the members' matrices interleave.  Each matrix
 * is the same sum as before: the same bits.  vit_tiny (4 heads of 24, T
 * 64, batch 32), alternated runs on Zen 5: 36.0-36.5 -> 35.5-36.1 ms a
 * step at 1 thread, 22.8-22.9 -> 22.2 at 2; its training arena 3% less. */
void plan_groups(const Model *m, Graph *g, int allow)
{
    for (int i = 0; i < g->n; i++) {
        g->nodes[i].group = -1;
        g->nodes[i].local = 0;
    }
    if (!allow)
        return;
    int gs = -1; /* the open group's first member */
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        if (n->fused != 0 || n->op == IR_RESHAPE || n->op == IR_CONST || ir_op_class(n->op) == OC_LEAF)
            continue; /* no code of its own here */
        if (!by_matrix(n)) {
            gs = -1;
            continue;
        }
        if (gs < 0 || !joins(g, gs, i))
            gs = i; /* a group starts */
        n->group = gs;
    }
    /* locals: every reader a later member of the same group, reading it
     * directly; not a result of the pass */
    char *roots = root_mask(g, m);
    for (int t = 0; t < g->n; t++) {
        IrNode *n = &g->nodes[t];
        const int64_t mat = n->shape.nd >= 2 ? n->shape.d[n->shape.nd - 2] * n->shape.d[n->shape.nd - 1] : 0;
        if (n->group < 0 || roots[t] || mat > GROUP_LOCAL_MAX)
            continue;
        int ok = 1, readers = 0;
        for (int j = t + 1; ok && j < g->n; j++) {
            const IrNode *c = &g->nodes[j];
            if (c->fused < 0)
                continue;
            for (int k = 0; k < c->nin; k++)
                if (c->in[k] == t) {
                    readers++;
                    ok &= c->group == n->group;
                }
        }
        n->local = ok && readers > 0;
    }
    free(roots);
    /* a group with no local is none: a group of one (none of its readers
     * a later member), and one whose matrices would go through the arena
     * all the same (gpt_t256's, T 256: [T, T] matrices too large to be
     * locals, ran 1-2% slower at 1 thread grouped) */
    char *has = calloc((size_t)g->n + 1, 1);
    if (!has)
        abort();
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].local)
            has[g->nodes[i].group] = 1;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].group >= 0 && !has[g->nodes[i].group])
            g->nodes[i].group = -1;
    free(has);
}

/* The memory plan, after kernel.c has sized the work of each kernel:
 * every stored node (fused >= 0 is live) gets a buffer, and the buffers
 * offsets, so that buffers whose lifetimes overlap never overlap. */
void plan_memory(const Model *m, Graph *g)
{
    char *roots = root_mask(g, m);
    char *live = calloc((size_t)g->n + 1, 1);
    if (!live)
        abort();
    for (int i = 0; i < g->n; i++)
        live[i] = g->nodes[i].fused >= 0;
    /* storage: leaves live in the caller's arrays or the model's structs */
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        if (!live[i] || n->fused == 1 || n->op == IR_RESHAPE ||
            (ir_op_class(n->op) == OC_LEAF && n->op != IR_RNG_MASK) || n->local)
            continue;
        /* (a group's member: from the group's start, plan_groups) */
        n->buf = new_buf(g, ir_numel(n->shape), n->shape.bd >= 0, n->group >= 0 ? n->group : i);
    }
    /* work memory (kernel.c): one region after the arena, as many times
     * the largest work as the model has threads (emit_fn.c), which every
     * kernel's call shares (threads.c gives each thread a slice) */
    g->work_max = 0;
    for (int i = 0; i < g->n; i++)
        if (live[i] && g->nodes[i].work > g->work_max) {
            g->work_max = g->nodes[i].work;
            if (g->work_max > IR_LIMIT_TOTAL) {
                diag_error(g->nodes[i].loc, "this convolution would need %lld floats of work memory; the limit is %lld",
                           (long long)g->work_max, (long long)IR_LIMIT_TOTAL);
                break;
            }
        }
    /* a param's gradient is written straight into m->grads */
    for (int p = 0; g->param_grad && p < m->nparams; p++) {
        int t = g->param_grad[p];
        if (t < 0)
            continue;
        int r = plan_storage_root(g, t);
        IrNode *n = &g->nodes[r];
        if (n->buf >= 0 && g->bufs[n->buf].param_grad < 0 && n->uses <= (r == t ? 0 : 1) &&
            ir_op_class(n->op) != OC_LEAF)
            g->bufs[n->buf].param_grad = p;
    }
    /* lifetimes: a buffer lives until its last reader; readers through a
     * fused chain or a view count at the stored node that consumes them */
    int *at = malloc(sizeof(int) * (size_t)(g->n + 1)), *group_end = malloc(sizeof(int) * (size_t)(g->n + 1)),
        *readers_at = malloc(sizeof(int) * (size_t)(g->n + 1));
    if (!at || !group_end || !readers_at)
        abort();
    for (int i = 0; i < g->n; i++) {
        readers_at[i] = -1; /* the latest at[] of node i's later readers, filled as they are passed */
        if (g->nodes[i].group >= 0)
            group_end[g->nodes[i].group] = i; /* (members in order: the last one's) */
    }
    for (int i = g->n - 1; i >= 0; i--) {
        IrNode *n = &g->nodes[i];
        at[i] = n->fused == 2 ? at[n->home] : i; /* computed in its first reader's loop */
        if (n->group >= 0)                       /* a group's member reads its operands till the group's end */
            at[i] = group_end[n->group];
        /* a fused node or a view: its readers' position (each reader
         * comes later, so it is final here; a scan of the later nodes
         * for each made a 5000-step unrolled loop take 10 s) */
        if ((n->fused == 1 || n->op == IR_RESHAPE) && readers_at[i] > at[i])
            at[i] = readers_at[i];
        if (n->fused >= 0)
            for (int k = 0; k < n->nin; k++)
                if (n->in[k] < i && readers_at[n->in[k]] < at[i])
                    readers_at[n->in[k]] = at[i];
    }
    free(readers_at);
    for (int i = 0; i < g->n; i++) {
        const IrNode *c = &g->nodes[i];
        if (c->fused < 0)
            continue;
        for (int k = 0; k < c->nin; k++) {
            int r = plan_storage_root(g, c->in[k]);
            int b = g->nodes[r].buf;
            if (b >= 0 && g->bufs[b].last < at[i])
                g->bufs[b].last = at[i];
        }
    }
    /* what the forward pass hands to its caller or to the end of the pass */
    int end_fwd = g->fwd_end - 1;
    for (int t = 0; t < g->n; t++) {
        if (!(roots[t] & ROOT_FWD))
            continue;
        int b = g->nodes[plan_storage_root(g, t)].buf;
        if (b >= 0 && g->bufs[b].last < end_fwd)
            g->bufs[b].last = end_fwd;
    }
    /* the backward pass starts after the whole forward pass: anything
     * backward reads must outlive the forward pass's end */
    for (int i = g->fwd_end; i < g->n; i++) {
        const IrNode *c = &g->nodes[i];
        if (c->fused < 0)
            continue;
        for (int k = 0; k < c->nin; k++) {
            int b = g->nodes[plan_storage_root(g, c->in[k])].buf;
            if (b >= 0 && g->bufs[b].first < g->fwd_end && g->bufs[b].last < g->fwd_end)
                g->bufs[b].last = g->fwd_end;
        }
    }
    free(at);
    free(group_end);
    assign_offsets(g, 0, &g->static_size);
    assign_offsets(g, 1, &g->batched_size);
    free(live);
    free(roots);
}

void plan_dump(const Model *m, const Graph *g, FILE *out)
{
    char sb[128];
    fprintf(out, "plan %s: arena %lld + %lld*max_batch floats, work %lld per thread\n", g->name,
            (long long)g->static_size, (long long)g->batched_size, (long long)g->work_max);
    for (int i = 0; i < g->n; i++) {
        const IrNode *n = &g->nodes[i];
        if (i == g->core_end)
            fprintf(out, "  // forward ends; eval goes on with the loss and the metrics\n");
        if (n->fused < 0)
            continue;
        fprintf(out, "  %%%d %-14s %-16s", i, ir_op_name(n->op), ir_shape_str(n->shape, "N", sb, sizeof sb));
        if (n->local)
            fprintf(out, " local to group %%%d", n->group);
        else if (n->fused == 1)
            fprintf(out, " fused");
        else if (n->op == IR_RESHAPE)
            fprintf(out, " view of %%%d", plan_storage_root(g, i));
        else if (n->buf >= 0) {
            const Buffer *b = &g->bufs[n->buf];
            if (b->param_grad >= 0)
                fprintf(out, " -> grads.%s", m->params[b->param_grad].path);
            else
                fprintf(out, " @%s%lld live %d..%d", b->batched ? "B+" : "S+", (long long)b->off, b->first, b->last);
            if (n->fused == 2)
                fprintf(out, " (in its reader's loop)");
        }
        if (n->op == IR_MATMUL && n->causal)
            fprintf(out, "%s%s", n->causal & 1 ? " lower-result" : "", n->causal & 2 ? " lower-a" : "");
        if (n->op == IR_MATMUL && n->hperm) /* fold_head_permutes */
            fprintf(out, "%s%s%s", n->hperm & 1 ? " a-heads" : "", n->hperm & 2 ? " b-heads" : "",
                    n->hperm & 4 ? " result-heads" : "");
        if (n->group >= 0 && !n->local)
            fprintf(out, " group %%%d", n->group);
        if (n->global)
            fprintf(out, " [global]");
        if (n->kernel != KERNEL_LOOPS)
            fprintf(out, " kernel=%s", kernel_name(n->kernel));
        if (n->work > 0)
            fprintf(out, " work %lld", (long long)n->work);
        if (n->name)
            fprintf(out, "  %s", n->name);
        fprintf(out, "\n");
    }
}
