/* emit_loops.c — elementwise loops, reductions and lane sums (emit_*).
 *
 * A fused elementwise chain (plan.c) is one loop over the shape of the
 * node it computes, with one local per node, so a value used twice is
 * computed once; operands of other shapes are read at broadcast offsets.
 * Reductions loop over the kept dims outside and the reduced ones inside.
 * A sum that would be one serial chain of float adds is split into 16
 * lanes (emit_lanes_store, emit_lanes_sum), so that it vectorizes; the
 * row ops, losses and batch norm sum that way too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emitter.h"
#include "plan.h"

/* ---- elementwise chains ---------------------------------------------------------- */

typedef struct Loop {
    Shape s;    /* the loop's shape */
    int nested; /* index variables i0..i{nd-1} are needed */
    char *seen; /* nodes already given a local */
    int root;   /* the node the loop computes */
    int *refs;  /* per node: how often the loop's expressions read it */
} Loop;

/* The offset of an operand of shape l, aligned right to the first nl dims
 * of the loop shape s (index variables i0..), each position of l's first
 * ll dims counting `unit` elements.  Broadcast dims (size 1 in l) add
 * nothing; the batch dim's extent is n times its multiplier. */
const char *emit_bcast_offset(Shape s, int nl, Shape l, int ll, const char *unit)
{
    const char *idx = "";
    int64_t k = 1;
    int kb = 0;
    for (int i = nl - 1; i >= 0; i--) {
        int j = i - (nl - ll);
        if (j < 0)
            break;
        int bcast = l.d[j] == 1 && j != l.bd && (s.d[i] != 1 || i == s.bd);
        if (!bcast) {
            const char *st = kb ? emit_fmt("%lld * (int64_t)n", (long long)k) : emit_fmt("%lld", (long long)k);
            if (strcmp(unit, "1"))
                st = emit_fmt("%s * %s", st, unit);
            /* (a stride of 1 is the index alone) */
            idx = strcmp(st, "1") ? emit_fmt("%s%si%d * %s", idx, *idx ? " + " : "", i, st)
                                  : emit_fmt("%s%si%d", idx, *idx ? " + " : "", i);
        }
        k *= l.d[j];
        kb |= j == l.bd;
    }
    return *idx ? idx : "0";
}

/* The index of a leaf of shape l inside the loop over s (broadcasting). */
static const char *leaf_index(const Loop *lp, Shape l)
{
    if (ir_numel(l) == 1 && l.bd < 0)
        return "0";
    if (ir_shape_eq(l, lp->s))
        return "i";
    return emit_bcast_offset(lp->s, lp->s.nd, l, l.nd, "1");
}

static int needs_nested(Emitter *e, const Loop *lp, int t)
{
    const IrNode *n = emit_nd(e, t);
    if ((n->fused == 1 || (n->fused == 2 && lp->root == n->home)) && n->op != IR_CONST) {
        for (int k = 0; k < n->nin; k++)
            if (needs_nested(e, lp, n->in[k]))
                return 1;
        return 0;
    }
    if (n->op == IR_CONST)
        return 0;
    Shape l = n->shape;
    return !(ir_numel(l) == 1 && l.bd < 0) && !ir_shape_eq(l, lp->s);
}

static const char *unary_expr(Emitter *e, const IrNode *n, const char *a)
{
    const char *one = emit_lit(e, 1), *zero = emit_lit(e, 0);
    switch (n->op) {
    case IR_NEG: return emit_fmt("-%s", a);
    case IR_RELU: return emit_relu_of(e, a);
    case IR_SIGMOID: return emit_fmt("nnc_sigmoid_%s(%s)", e->real, a);
    case IR_TANH: return emit_fmt("%s(%s)", emit_tanh_fn(e), a);
    case IR_GELU: return emit_fmt("nnc_gelu_%s(%s)", e->real, a);
    case IR_DGELU: return emit_fmt("nnc_dgelu_%s(%s)", e->real, a);
    case IR_GELU_TANH:
        return emit_fmt("%s * %s * (%s + %s(%s * (%s + %s * %s * %s * %s)))", emit_lit(e, 0.5), a, one, emit_tanh_fn(e),
                        emit_lit(e, 0.7978845608028654), a, emit_lit(e, 0.044715), a, a, a);
    case IR_DGELU_TANH: return emit_fmt("nnc_dgelu_tanh_%s(%s)", e->real, a);
    case IR_SILU: /* x sigmoid(x) with the inline sigmoid where it is float */
        return e->opt->f64 ? emit_fmt("%s / (%s + %s(-%s))", a, one, emit_libm(e, "exp"), a)
                           : emit_fmt("%s * nnc_sigmoid_float(%s)", a, a);
    case IR_DSILU: return emit_fmt("nnc_dsilu_%s(%s)", e->real, a);
    case IR_EXP: return emit_fmt("%s(%s)", emit_libm(e, "exp"), a);
    case IR_LOG: return emit_fmt("%s(%s)", emit_libm(e, "log"), a);
    case IR_SQRT: return emit_fmt("%s(%s)", emit_libm(e, "sqrt"), a);
    case IR_RSQRT: return emit_fmt("%s / %s(%s)", one, emit_libm(e, "sqrt"), a);
    case IR_ABS: return emit_fmt("%s(%s)", emit_libm(e, "fabs"), a);
    case IR_SQUARE: return emit_fmt("%s * %s", a, a);
    case IR_POWC:
        if (n->fval == 2)
            return emit_fmt("%s * %s", a, a);
        return emit_fmt("%s(%s, %s)", emit_libm(e, "pow"), a, emit_lit(e, n->fval));
    case IR_STEP: return emit_fmt("%s > %s ? %s : %s", a, zero, one, zero);
    case IR_SIGN: return emit_fmt("(%s)((%s > %s) - (%s < %s))", e->real, a, zero, a, zero);
    case IR_ERF: return emit_fmt("%s(%s)", emit_libm(e, "erf"), a);
    case IR_RECIPROCAL: return emit_fmt("%s / %s", one, a);
    case IR_LEAKY_RELU: return emit_fmt("%s > %s ? %s : %s * %s", a, zero, a, emit_lit(e, n->fval), a);
    case IR_DLEAKY_RELU: return emit_fmt("%s > %s ? %s : %s", a, zero, one, emit_lit(e, n->fval));
    case IR_HARD_SIGMOID:
    case IR_DHARD_SIGMOID:
        return emit_fmt("nnc_%s_%s(%s, %s, %s)", n->op == IR_HARD_SIGMOID ? "hard_sigmoid" : "dhard_sigmoid", e->real,
                        a, emit_lit(e, n->fval), emit_lit(e, n->fval2));
    case IR_HARD_SWISH: return emit_fmt("nnc_hard_swish_%s(%s)", e->real, a);
    case IR_DHARD_SWISH: return emit_fmt("nnc_dhard_swish_%s(%s)", e->real, a);
    case IR_CLIP: {
        /* min(max(x, lo), hi) with NaN kept, as torch.clamp; lo > hi
         * gives hi everywhere */
        const char *lo = emit_lit(e, n->fval), *hi = emit_lit(e, n->fval2);
        if (n->fval == -INFINITY)
            return emit_fmt("%s > %s ? %s : %s", a, hi, hi, a);
        if (n->fval2 == INFINITY)
            return emit_fmt("%s < %s ? %s : %s", a, lo, lo, a);
        if (n->fval > n->fval2)
            return emit_fmt("%s != %s ? %s : %s", a, a, a, hi);
        return emit_fmt("%s < %s ? %s : %s > %s ? %s : %s", a, lo, lo, a, hi, hi, a);
    }
    case IR_DCLIP: {
        /* PyTorch's clamp backward: 1 on [lo, hi], bounds included */
        const char *lo = emit_fmt("%s >= %s", a, emit_lit(e, n->fval)),
                   *hi = emit_fmt("%s <= %s", a, emit_lit(e, n->fval2));
        const char *in = n->fval == -INFINITY ? hi : n->fval2 == INFINITY ? lo : emit_fmt("%s && %s", lo, hi);
        return emit_fmt("%s ? %s : %s", in, one, zero);
    }
    case IR_SIN:
    case IR_COS:
    case IR_TAN:
    case IR_ASIN:
    case IR_ACOS:
    case IR_ATAN:
    case IR_SINH:
    case IR_COSH:
    case IR_ASINH:
    case IR_ACOSH:
    case IR_ATANH:
    case IR_FLOOR:
    case IR_CEIL:
        return emit_fmt("%s(%s)", emit_libm(e, ir_op_name(n->op)), a); /* libm's, by the op's name */
    /* rint in the default rounding mode: half to even, as torch.round */
    case IR_ROUND: return emit_fmt("%s(%s)", emit_libm(e, "rint"), a);
    case IR_SOFTPLUS:
    case IR_DSOFTPLUS:
        return emit_fmt("nnc_%s_%s(%s, %s, %s)", ir_op_name(n->op), e->real, a, emit_lit(e, n->fval),
                        emit_lit(e, n->fval2));
    case IR_SOFTSIGN: return emit_fmt("%s / (%s + %s(%s))", a, one, emit_libm(e, "fabs"), a);
    case IR_ELU:
    case IR_DELU: {
        /* PyTorch's elu kernel: the left branch from 0 down, 0 included */
        const char *in = n->fval2 == 1 ? a : emit_fmt("%s * %s", a, emit_lit(e, n->fval2));
        const double k = n->op == IR_ELU ? n->fval : n->fval * n->fval2;
        const char *f = emit_fmt("%s(%s)", emit_libm(e, n->op == IR_ELU ? "expm1" : "exp"), in);
        if (k != 1)
            f = emit_fmt("%s * %s", f, emit_lit(e, k));
        return emit_fmt("%s <= %s ? %s : %s", a, zero, f, n->op == IR_ELU ? a : one);
    }
    case IR_SELU:
        return emit_fmt("%s <= %s ? %s(%s) * %s : %s * %s", a, zero, emit_libm(e, "expm1"), a,
                        emit_lit(e, NNC_SELU_ALPHA * NNC_SELU_SCALE), a, emit_lit(e, NNC_SELU_SCALE));
    case IR_DSELU:
        return emit_fmt("%s <= %s ? %s * %s(%s) : %s", a, zero, emit_lit(e, NNC_SELU_ALPHA * NNC_SELU_SCALE),
                        emit_libm(e, "exp"), a, emit_lit(e, NNC_SELU_SCALE));
    case IR_MISH:
    case IR_DMISH: return emit_fmt("nnc_%s_%s(%s)", ir_op_name(n->op), e->real, a);
    case IR_TO_F32: return emit_fmt("(%s)%s", e->real, a);
    case IR_TO_I32: return emit_fmt("nnc_to_i32_%s(%s)", e->real, a);
    case IR_EXPAND: return a;
    default: abort();
    }
}

static const char *binary_expr(Emitter *e, IrOp op, const char *a, const char *b)
{
    switch (op) {
    case IR_ADD: return emit_fmt("%s + %s", a, b);
    case IR_SUB: return emit_fmt("%s - %s", a, b);
    case IR_MUL: return emit_fmt("%s * %s", a, b);
    case IR_DIV: return emit_fmt("%s / %s", a, b);
    case IR_MAXIMUM: return emit_fmt("%s >= %s ? %s : %s", a, b, a, b);
    case IR_MINIMUM: return emit_fmt("%s <= %s ? %s : %s", a, b, a, b);
    case IR_MAXGRAD:
        return emit_fmt("%s > %s ? %s : %s == %s ? %s : %s", a, b, emit_lit(e, 1), a, b, emit_lit(e, 0.5),
                        emit_lit(e, 0));
    case IR_EQMASK: return emit_fmt("%s == %s ? %s : %s", a, b, emit_lit(e, 1), emit_lit(e, 0));
    case IR_LESS: return emit_fmt("%s < %s ? %s : %s", a, b, emit_lit(e, 1), emit_lit(e, 0));
    case IR_GREATER: return emit_fmt("%s > %s ? %s : %s", a, b, emit_lit(e, 1), emit_lit(e, 0));
    default: abort();
    }
}

static const char *ternary_expr(Emitter *e, IrOp op, const char *c, const char *a, const char *b)
{
    switch (op) {
    case IR_WHERE: return emit_fmt("%s != %s ? %s : %s", c, emit_lit(e, 0), a, b);
    default: abort();
    }
}

/* Whether node t is computed in the loop of lp (fused into it), rather
 * than read from storage. */
static int computed_here(Emitter *e, const Loop *lp, int t, int root)
{
    const IrNode *n = emit_nd(e, t);
    return root || n->fused == 1 || (n->fused == 2 && lp->root == n->home);
}

/* The operand of a product dy * step(x) that is the fused step, or -1:
 * such a product is printed as the select x > 0 ? dy : 0. */
static int step_operand(Emitter *e, const IrNode *n)
{
    if (n->op != IR_MUL)
        return -1;
    for (int k = 1; k >= 0; k--)
        if (emit_nd(e, n->in[k])->op == IR_STEP && emit_nd(e, n->in[k])->fused == 1)
            return k;
    return -1;
}

/* Counts in lp->refs how often each node is read by the expressions of
 * the loop's nodes, visiting each computed node's operands once. */
static void count_refs(Emitter *e, Loop *lp, int t, int root)
{
    const IrNode *n = emit_nd(e, t);
    if (n->op == IR_CONST || lp->refs[t]++ || !computed_here(e, lp, t, root))
        return;
    const int st = step_operand(e, n);
    if (st >= 0) {
        /* dy counted twice, so that ew_value loads it into a local before
         * the select: read in one arm only, it is a conditional load,
         * which the baseline build (SSE, no masked loads) compiles to a
         * branch on the data (cnn1d's relu gradients ran scalar under
         * NNC_ISA=generic) */
        count_refs(e, lp, emit_nd(e, n->in[st])->in[0], 0);
        count_refs(e, lp, n->in[1 - st], 0);
        count_refs(e, lp, n->in[1 - st], 0);
        return;
    }
    for (int k = 0; k < n->nin; k++)
        count_refs(e, lp, n->in[k], 0);
}

/* Ops whose expression names an operand more than once (relu's a > 0 ?
 * a : 0): such an operand is a name or a read, never an expression. */
static int repeats_operand(const IrNode *n)
{
    switch (n->op) {
    case IR_RELU:
    case IR_GELU_TANH:
    case IR_SILU:
    case IR_SQUARE:
    case IR_SIGN:
    case IR_LEAKY_RELU:
    case IR_CLIP:
    case IR_DCLIP:
    case IR_SOFTSIGN:
    case IR_ELU:
    case IR_DELU:
    case IR_SELU:
    case IR_DSELU:
    case IR_MAXIMUM:
    case IR_MINIMUM:
    case IR_MAXGRAD: return 1;
    case IR_POWC: return n->fval == 2;
    default: return 0;
    }
}

/* The value of node t at the loop's position, as C: an expression written
 * in place where t is read once, else a local computed once (`v_name`).
 * The loop's own node (root) and fused nodes are computed from their
 * operands; anything else is a stored tensor read at the loop position.
 * atom: the caller names the value more than once, so it must be a name
 * or a read.  Written in place or through locals, the operations and
 * their order are the same (C evaluates each as written, in float). */
static const char *ew_value(Emitter *e, Loop *lp, int t, int root, int atom)
{
    const IrNode *n = emit_nd(e, t);
    if (n->op == IR_CONST)
        return emit_const(e, n);
    const char *v = emit_value(e, t);
    if (lp->seen[t])
        return v;
    lp->seen[t] = 1;
    if (!computed_here(e, lp, t, root)) {
        const char *rd = emit_fmt("%s[%s]", emit_ref(e, t), leaf_index(lp, n->shape));
        if (lp->refs[t] < 2)
            return rd;
        P(e, "        const %s %s = %s;\n", e->real, v, rd);
        return v;
    }
    const char *ex;
    const int st = step_operand(e, n), twice = repeats_operand(n);
    if (st >= 0) {
        /* dy * step(x) as a select: no branch on the data, vectorizable
         * (dy a local: count_refs) */
        const char *x = ew_value(e, lp, emit_nd(e, n->in[st])->in[0], 0, 0);
        const char *dy = ew_value(e, lp, n->in[1 - st], 0, 0);
        lp->seen[n->in[st]] = 1;
        ex = emit_fmt("%s > %s ? %s : %s", x, emit_lit(e, 0), dy, emit_lit(e, 0));
    } else if (ir_op_class(n->op) == OC_UNARY) {
        ex = unary_expr(e, n, ew_value(e, lp, n->in[0], 0, twice));
    } else if (ir_op_class(n->op) == OC_BINARY) {
        const char *a = ew_value(e, lp, n->in[0], 0, twice);
        const char *b = ew_value(e, lp, n->in[1], 0, twice);
        ex = binary_expr(e, n->op, a, b);
    } else {
        const char *c = ew_value(e, lp, n->in[0], 0, twice);
        const char *a = ew_value(e, lp, n->in[1], 0, twice);
        const char *b = ew_value(e, lp, n->in[2], 0, twice);
        ex = ternary_expr(e, n->op, c, a, b);
    }
    if (root)
        return ex;
    if (n->fused != 2 && lp->refs[t] < 2 && !atom)
        return emit_fmt("(%s)", ex);
    P(e, "        const %s %s = %s;\n", e->real, v, ex);
    if (n->fused == 2) {
        /* read again later: stored from here */
        const char *dst = emit_ref(e, t);
        e->loop_wr[plan_storage_root(e->g, t)] = 1;
        P(e, "        %s[i] = %s;\n", dst, v);
    }
    return v;
}

void emit_elementwise(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    emit_loop_begin(e);
    Loop lp;
    lp.s = n->shape;
    lp.seen = calloc((size_t)e->g->n + 1, 1);
    lp.root = t;
    lp.nested = 0;
    lp.refs = calloc((size_t)e->g->n + 1, sizeof(int));
    if (!lp.seen || !lp.refs)
        abort();
    count_refs(e, &lp, t, 1);
    for (int k = 0; k < n->nin; k++)
        lp.nested |= needs_nested(e, &lp, n->in[k]);
    if (lp.nested) {
        /* the threads take the outer loops; the innermost stays a plain
         * loop, which GCC vectorizes (a collapsed one it does not: gpt_mini's
         * GELU over [n, 64, 512] ran scalar, 2.7 ms a layer) */
        const int nd = n->shape.nd, inner = nd >= 2 && n->shape.d[nd - 1] >= 8;
        emit_parallel(e, "    ", inner ? nd - 1 : nd, n->shape, 1.0 + n->nin);
        for (int k = 0; k < n->shape.nd; k++) {
            if (inner && k == nd - 1) /* (not inside the threads' collapsed loops) */
                P(e, "    NNC_VECTOR_LOOP\n");
            P(e, "    %sfor (int64_t i%d = 0; i%d < %s; i%d++)\n", "", k, k, emit_dim(n->shape, k), k);
        }
        P(e, "    {\n");
        const char *flat = "0";
        for (int k = 0; k < n->shape.nd; k++)
            flat = k == 0 ? "i0" : emit_fmt("(%s) * %s + i%d", flat, emit_dim(n->shape, k), k);
        P(e, "        const int64_t i = %s;\n", flat);
    } else {
        emit_parallel(e, "    ", 1, n->shape, 1.0 + n->nin);
        P(e, "    for (int64_t i = 0; i < %s; i++) {\n", emit_numel(n->shape));
    }
    const char *v = ew_value(e, &lp, t, 1, 0);
    P(e, "        %s[i] = %s;\n", emit_ref(e, t), v);
    P(e, "    }\n");
    free(lp.seen);
    free(lp.refs);
    emit_loop_end(e, t);
}

/* ---- reductions and lane sums ---------------------------------------------------- */

/* Merges neighbouring dims of s that are both reduced or both kept (a
 * row-major view of the same data), so that a sum over H and W of
 * [N, C, H, W] runs over rows of H*W, long enough for the 16 lanes below;
 * returns the reduced dims of the new shape. */
static uint32_t collapse_dims(Shape *s, uint32_t axes)
{
    Shape c = *s;
    uint32_t cax = 0;
    c.nd = 0;
    c.bd = -1;
    for (int i = 0; i < s->nd; i++) {
        int red = (axes >> i) & 1;
        if (c.nd > 0 && red == (int)((cax >> (c.nd - 1)) & 1)) {
            c.d[c.nd - 1] *= s->d[i];
        } else {
            c.d[c.nd] = s->d[i];
            cax |= (uint32_t)red << c.nd;
            c.nd++;
        }
        if (i == s->bd)
            c.bd = c.nd - 1;
    }
    *s = c;
    return cax;
}

/* The sum of expr over k in [0, len) in 16 partial sums, so that the adds
 * are not one serial chain and the loop vectorizes (float reductions do
 * not, without -ffast-math); expr reads the index as `k`.  The tail and
 * the lanes are added in `total` (the element type, or double), and the
 * result goes to `store`: "sum =" or "acc +=".  expr holds no `?:`:
 * gcc 12 at -O3 vectorizes this loop nest wrongly when it does
 * (docs/decisions.md, "gcc 12 and conditional lane sums"). */
void emit_lanes_store(Emitter *e, const char *ind, const char *total, const char *store, const char *len,
                      const char *expr)
{
    P(e, "%s{\n", ind);
    P(e, "%s    %s l_[16] = {0};\n%s    int64_t k0_ = 0;\n", ind, e->real, ind);
    P(e, "%s    for (; k0_ + 16 <= %s; k0_ += 16)\n", ind, len);
    P(e, "%s        for (int64_t k = k0_; k < k0_ + 16; k++) l_[k - k0_] += %s;\n", ind, expr);
    P(e, "%s    %s s_ = 0;\n%s    for (int64_t k = k0_; k < %s; k++) s_ += %s;\n", ind, total, ind, len, expr);
    P(e, "%s    for (int j = 0; j < 16; j++) s_ += l_[j];\n%s    %s s_;\n%s}\n", ind, ind, store, ind);
}

/* Column sums dst[j][k] += expr[j] over the rows r in [lo, hi), for the
 * columns k in [k0, k1) of a block at most emit_sum_width() wide (a bias
 * gradient, layer norm's dweight and dbias); `setup` declares what the
 * expressions read of row r.  Each column adds its rows in order, so a
 * split of the columns among threads changes no sum.  A whole block
 * keeps its sums in a local array of constant length, which the compiler
 * keeps in vector registers: the sums in memory (dst[k] += ... per row)
 * cost a load and a store per row and column (gpt_mini's bias gradient
 * of [1024 rows, 128]: 20 us against 5 in registers). */
int emit_sum_width(Emitter *e) { return strcmp(e->real, "float") ? 32 : 64; }

/* setup's lines, each indented by ind and 8 */
static void setup_lines(Emitter *e, const char *ind, const char *setup)
{
    while (*setup) {
        const char *nl = strchr(setup, '\n');
        const int len = nl ? (int)(nl - setup) : (int)strlen(setup);
        P(e, "%s        %.*s\n", ind, len, setup);
        setup += len + (nl != NULL);
    }
}

void emit_column_sums(Emitter *e, const char *ind, const char *lo, const char *hi, const char *setup, int n,
                      const char *const *dst, const char *const *expr)
{
    const int w = emit_sum_width(e);
    P(e, "%sif (k1 - k0 == %d) {\n", ind, w);
    for (int j = 0; j < n; j++)
        P(e, "%s    %s s%d_[%d];\n%s    for (int64_t k = 0; k < %d; k++) s%d_[k] = %s[k0 + k];\n", ind, e->real, j, w,
          ind, w, j, dst[j]);
    P(e, "%s    for (int64_t r = %s; r < %s; r++) {\n", ind, lo, hi);
    setup_lines(e, ind, setup);
    for (int j = 0; j < n; j++)
        P(e, "%s        for (int64_t k = k0; k < k0 + %d; k++) s%d_[k - k0] += %s;\n", ind, w, j, expr[j]);
    P(e, "%s    }\n", ind);
    for (int j = 0; j < n; j++)
        P(e, "%s    for (int64_t k = 0; k < %d; k++) %s[k0 + k] = s%d_[k];\n", ind, w, dst[j], j);
    P(e, "%s} else {\n", ind);
    P(e, "%s    for (int64_t r = %s; r < %s; r++) {\n", ind, lo, hi);
    setup_lines(e, ind, setup);
    for (int j = 0; j < n; j++)
        P(e, "%s        for (int64_t k = k0; k < k1; k++) %s[k] += %s;\n", ind, dst[j], expr[j]);
    P(e, "%s    }\n%s}\n", ind, ind);
}

/* Reductions: loops over the kept dims outside, the reduced dims inside,
 * accumulating in double (a BatchNorm mean runs over N*H*W elements). */
void emit_reduce(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    emit_loop_begin(e);
    Shape si = emit_nd(e, n->in[0])->shape;
    const char *y = emit_ref(e, t), *x = emit_ref(e, n->in[0]);
    uint32_t axes = collapse_dims(&si, n->axes);
    int lead = 0; /* reduced dims [0, lead), kept dims after */
    while (lead < si.nd && (axes & (1u << lead)))
        lead++;
    int prefix = lead > 0 && lead < si.nd && (axes >> lead) == 0 && n->op == IR_SUM;
    if (prefix) {
        /* a sum over leading dims (a bias gradient): row by row into the
         * output, so the inner loop is contiguous and vectorizes */
        P(e, "    {\n        const int64_t rows = %s, K = %s;\n", emit_prod(si, 0, lead), emit_prod(si, lead, si.nd));
        /* on the threads by blocks of emit_sum_width() outputs where it
         * is large enough (a bias of 128 is 2 blocks: at most 2 threads
         * take it; it was 8 blocks of 16 when the sums ran in memory):
         * each output still adds its rows in order */
        emit_parallel(e, "        ", 1, si, 1.0);
        const int w = emit_sum_width(e);
        P(e, "        for (int64_t k0 = 0; k0 < K; k0 += %d) {\n", w);
        P(e, "            const int64_t k1 = k0 + %d < K ? k0 + %d : K;\n", w, w);
        P(e, "            memset(%s + k0, 0, sizeof(%s) * (size_t)(k1 - k0));\n", y, e->real);
        const char *dst[1] = {y}, *ex[1] = {emit_fmt("%s[r * K + k]", x)};
        emit_column_sums(e, "            ", "0", "rows", "", 1, dst, ex);
        P(e, "        }\n    }\n");
        emit_loop_end(e, t);
        return;
    }
    if (n->op == IR_SUM && strcmp(e->real, "float") == 0 && si.nd == 3 && axes == 5) {
        /* per-channel sums of [N, C, L] (a convolution's bias gradient):
         * the runtime's, on the threads by examples (threads.c) */
        P(e, "    nnc_channel_sum_f32(%s, %s, %s, %s, %s);\n", emit_dim(si, 0), emit_dim(si, 1), emit_dim(si, 2), x, y);
        emit_loop_end(e, t);
        return;
    }
    const char *xidx = "";
    for (int i = 0; i < si.nd; i++)
        xidx = emit_fmt("%s%si%d * %s", xidx, i ? " + " : "", i, emit_stride(si, i));
    if (!*xidx)
        xidx = "0";
    int last = si.nd - 1;
    /* a sum over a contiguous last dim: 16 float lanes per row, row totals
     * in double, so the adds are not one serial chain */
    int lanes = n->op != IR_MAX && (axes & (1u << last)) && last != si.bd;
    /* the kept dims outside, on the threads where the whole reduction is
     * large enough: each output is one iteration's sum, so any split
     * gives the same bits; o is its flat index */
    int kept = 0;
    const char *o = "0";
    for (int i = 0; i < si.nd; i++)
        if (!(axes & (1u << i))) {
            o = kept++ ? emit_fmt("(%s) * %s + i%d", o, emit_dim(si, i), i) : emit_fmt("i%d", i);
        }
    P(e, "    {\n");
    emit_parallel(e, "        ", kept, si, 1.0);
    for (int i = 0; i < si.nd; i++)
        if (!(axes & (1u << i)))
            P(e, "        for (int64_t i%d = 0; i%d < %s; i%d++)\n", i, i, emit_dim(si, i), i);
    P(e, "        {\n            const int64_t o = %s;\n", o);
    P(e, "            double acc = %s;\n", n->op == IR_MAX ? "-INFINITY" : "0");
    for (int i = 0; i < (lanes ? last : si.nd); i++)
        if (axes & (1u << i))
            P(e, "            for (int64_t i%d = 0; i%d < %s; i%d++)\n", i, i, emit_dim(si, i), i);
    if (lanes) {
        const char *rowbase = "";
        for (int i = 0; i < last; i++)
            rowbase = emit_fmt("%s%si%d * %s", rowbase, i ? " + " : "", i, emit_stride(si, i));
        P(e, "            {\n                const %s *row = %s + %s;\n", e->real, x, *rowbase ? rowbase : "0");
        emit_lanes_store(e, "                ", "double", "acc +=", emit_fmt("%lld", (long long)si.d[last]), "row[k]");
        P(e, "            }\n");
    } else if (n->op == IR_MAX)
        P(e, "                { const double v = %s[%s]; if (v > acc) acc = v; }\n", x, xidx);
    else
        P(e, "                acc += %s[%s];\n", x, xidx);
    if (n->op == IR_MEAN) {
        double c = 1;
        int npow = 0;
        for (int i = 0; i < si.nd; i++)
            if (axes & (1u << i)) {
                c *= (double)si.d[i];
                npow |= i == si.bd;
            }
        /* the global batch: over several processes each adds its share */
        P(e, "            %s[o] = (%s)(acc / (%s%s));\n", y, e->real, emit_lit(e, c), npow ? " * (double)gn" : "");
    } else {
        P(e, "            %s[o] = (%s)acc;\n", y, e->real);
    }
    P(e, "        }\n    }\n");
    emit_loop_end(e, t);
}

/* `name` = the largest of expr over k in [0, len) (NaNs skipped; -inf
 * for none), in 16 lanes: a comparison chain that GCC vectorizes (a
 * serial `if (x[k] > mx) mx = x[k]` does not: cross-entropy over 256
 * classes spent 1 ns an element on it).  The maximum is exact, so the
 * lanes give the same value as the chain. */
void emit_lanes_max(Emitter *e, const char *ind, const char *name, const char *len, const char *expr)
{
    const char *T = e->real;
    P(e, "%s%s %s;\n%s{\n%s    %s l_[16];\n", ind, T, name, ind, ind, T);
    P(e, "%s    for (int j = 0; j < 16; j++) l_[j] = -INFINITY;\n%s    int64_t k0_ = 0;\n", ind, ind);
    P(e, "%s    for (; k0_ + 16 <= %s; k0_ += 16)\n", ind, len);
    P(e, "%s        for (int64_t k = k0_; k < k0_ + 16; k++) {\n", ind);
    P(e, "%s            const %s v = %s;\n%s            l_[k - k0_] = v > l_[k - k0_] ? v : l_[k - k0_];\n", ind, T,
      expr, ind);
    P(e, "%s        }\n%s    %s = -INFINITY;\n", ind, ind, name);
    P(e, "%s    for (int64_t k = k0_; k < %s; k++) {\n%s        const %s v = %s;\n", ind, len, ind, T, expr);
    P(e, "%s        %s = v > %s ? v : %s;\n%s    }\n", ind, name, name, name, ind);
    P(e, "%s    for (int j = 0; j < 16; j++) %s = l_[j] > %s ? l_[j] : %s;\n%s}\n", ind, name, name, name, ind);
}

/* `name` = the sum of expr over k in [0, len), in the element type */
void emit_lanes_sum(Emitter *e, const char *ind, const char *name, const char *len, const char *expr)
{
    P(e, "%s%s %s;\n", ind, e->real, name);
    emit_lanes_store(e, ind, e->real, emit_fmt("%s =", name), len, expr);
}
