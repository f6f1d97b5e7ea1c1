/* ir.c — shapes, graph construction and the --dump=ir|grad printer.
 *
 * The IR is deliberately small: the ops that the language's primitives
 * lower to, plus the few that autodiff needs (STEP, MAXGRAD, EXPAND, PAD,
 * *_BWD).  Everything that can be said with elementwise ops is, so the
 * fusion in plan.c sees backward chains as ordinary loops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* The FLOP rules of ops.def's flops column: floating-point operations of
 * node n per example (a multiply-add is 2; moves count 0). */
static double flops_none(const Graph *g, const IrNode *n)
{
    (void)g, (void)n;
    return 0;
}

/* one per output element: elementwise ops and most backward ops */
static double flops_out(const Graph *g, const IrNode *n)
{
    (void)g;
    return (double)ir_numel(n->shape);
}

/* one per element read: reductions, softmax, losses */
static double flops_in(const Graph *g, const IrNode *n) { return (double)ir_numel(g->nodes[n->in[0]].shape); }

static double flops_matmul(const Graph *g, const IrNode *n)
{
    Shape a = g->nodes[n->in[0]].shape;
    double k = (double)(n->ta ? a.d[a.nd - 2] : a.d[a.nd - 1]);
    return 2.0 * (double)ir_numel(n->shape) * k;
}

static double flops_conv(const Graph *g, const IrNode *n)
{
    Shape w = g->nodes[n->in[1]].shape;
    return 2.0 * (double)ir_numel(n->shape) * (double)(w.d[1] * w.d[2] * w.d[3]);
}

/* a convolution's data gradient (and conv_transpose2d, prims.c): the
 * forward pass's products, read from dy [N, F, OH, OW] */
static double flops_conv_data(const Graph *g, const IrNode *n)
{
    Shape w = g->nodes[n->in[1]].shape;
    return 2.0 * (double)ir_numel(g->nodes[n->in[0]].shape) * (double)(w.d[1] * w.d[2] * w.d[3]);
}

/* a comparison or an add per window element */
static double flops_window(const Graph *g, const IrNode *n)
{
    (void)g;
    return (double)ir_numel(n->shape) * n->kh * n->kw;
}

/* a multiply-add per tap of each output element (nearest: a copy) */
static double flops_resize(const Graph *g, const IrNode *n)
{
    (void)g;
    return (double)ir_numel(n->shape) * (n->ival == RESIZE_NEAREST ? 1 : n->ival == RESIZE_LINEAR ? 4 : 8);
}

/* a sum, a square and a sum per element */
static double flops_bn_stats(const Graph *g, const IrNode *n) { return 3.0 * flops_in(g, n); }

/* a multiply-add per element */
static double flops_bn_norm(const Graph *g, const IrNode *n) { return 2.0 * flops_out(g, n); }

/* two passes for the statistics, one to normalize, scale and shift */
static double flops_layer_norm(const Graph *g, const IrNode *n) { return 8.0 * flops_out(g, n); }

static const struct {
    const char *name;
    OpClass cls;
    int arity;
    double (*flops)(const Graph *g, const IrNode *n);
} op_table[IR_NUM_OPS] = {
#define OP(e, name, cls, arity, flops, grad, emit) [IR_##e] = {name, OC_##cls, arity, flops},
#include "ops.def"
#undef OP
};

const char *ir_op_name(IrOp op) { return op_table[op].name; }
OpClass ir_op_class(IrOp op) { return op_table[op].cls; }
int ir_op_arity(IrOp op) { return op_table[op].arity; }

/* Elementwise nodes are the ones plan.c may fuse into one loop.  EXPAND
 * counts: a broadcast read is just an index computation. */
int ir_is_elementwise(IrOp op)
{
    return op_table[op].cls == OC_UNARY || op_table[op].cls == OC_BINARY || op_table[op].cls == OC_TERNARY;
}

int ir_softmax_by_rows(const IrNode *n)
{
    int nd = n->shape.nd;
    return (n->op == IR_SOFTMAX || n->op == IR_SOFTMAX_BWD) && nd >= 1 && n->axis == nd - 1 && n->shape.bd != nd - 1;
}

const char *const ir_resize_modes[] = {"nearest", "linear", "cubic", NULL};
const char *const ir_resize_coords[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                        "asymmetric", "tf_half_pixel_for_nn", NULL};
const char *const ir_resize_roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};

/* Keys's cubic convolution kernel at distance d in [0, 2], written as
 * ONNX's reference (onnx/backend/test/case/node/resize.py cubic_coeffs) */
static double cubic_weight(double d, double a)
{
    if (d <= 1)
        return ((a + 2) * d - (a + 3)) * d * d + 1;
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
}

/* ONNX Resize's mapping of one axis (the operator's text and its reference
 * implementation): output i sits at source coordinate x; nearest takes one
 * neighbour by the rounding, linear the two around x, cubic the four, each
 * index clamped into the axis (the reference pads by the edge value).
 * With a scale given (fval2) the coordinates use it, not out / in, and
 * align_corners divides by in * scale - 1, as the reference does. */
int ir_resize_taps(const IrNode *n, int64_t in, int64_t out, int64_t *idx, double *w)
{
    const double scale = n->fval2 > 0 ? n->fval2 : (double)out / (double)in;
    const int taps = n->ival == RESIZE_NEAREST ? 1 : n->ival == RESIZE_LINEAR ? 2 : 4;
    for (int64_t i = 0; i < out; i++) {
        const double o = (double)i;
        double x;
        switch (n->ival2) {
        case RESIZE_PYTORCH_HALF_PIXEL: x = out > 1 ? (o + 0.5) / scale - 0.5 : 0; break;
        case RESIZE_ALIGN_CORNERS: {
            const double len = n->fval2 > 0 ? (double)in * scale : (double)out;
            x = len == 1 ? 0 : o * (double)(in - 1) / (len - 1);
            break;
        }
        case RESIZE_ASYMMETRIC: x = o / scale; break;
        case RESIZE_TF_HALF_PIXEL_FOR_NN: x = (o + 0.5) / scale; break;
        default: x = (o + 0.5) / scale - 0.5; break;
        }
        const double fl = floor(x), t = x - fl;
        int64_t *ip = idx + i * taps;
        double *wp = w + i * taps;
        int64_t base = (int64_t)fl;
        if (n->ival == RESIZE_NEAREST) {
            int up = 0;
            if (t > 0)
                switch (n->stride) {
                case RESIZE_ROUND_PREFER_CEIL: up = t >= 0.5; break;
                case RESIZE_FLOOR: up = 0; break;
                case RESIZE_CEIL: up = 1; break;
                default: up = t > 0.5; break;
                }
            ip[0] = base + up, wp[0] = 1;
        } else if (n->ival == RESIZE_LINEAR) {
            ip[0] = base, ip[1] = base + 1, wp[0] = 1 - t, wp[1] = t;
        } else {
            const double a = n->fval;
            base -= 1;
            for (int k = 0; k < 4; k++)
                ip[k] = base + k;
            wp[0] = cubic_weight(1 + t, a), wp[1] = cubic_weight(t, a), wp[2] = cubic_weight(1 - t, a),
            wp[3] = cubic_weight(2 - t, a);
            if (n->exclude_pad) { /* exclude_outside: the taps off the axis weigh 0, the rest renormalized */
                double sum = 0;
                for (int k = 0; k < 4; k++) {
                    if (ip[k] < 0 || ip[k] >= in)
                        wp[k] = 0;
                    sum += wp[k];
                }
                for (int k = 0; k < 4; k++)
                    wp[k] /= sum;
            }
        }
        for (int k = 0; k < taps; k++)
            ip[k] = ip[k] < 0 ? 0 : ip[k] >= in ? in - 1 : ip[k];
    }
    return taps;
}

double ir_node_flops(const Graph *g, int i) { return op_table[g->nodes[i].op].flops(g, &g->nodes[i]); }

Shape ir_shape(int nd, const int64_t *d, int bd)
{
    Shape s;
    memset(&s, 0, sizeof s);
    s.nd = nd;
    for (int i = 0; i < nd; i++)
        s.d[i] = d[i];
    s.bd = bd;
    return s;
}

int64_t ir_numel(Shape s)
{
    /* saturating: a shape too large for int64 is reported by its maker
     * (elab_check_elems), which must not meet an overflow first */
    int64_t n = 1;
    for (int i = 0; i < s.nd; i++) {
        if (s.d[i] <= 0)
            return 0;
        if (__builtin_mul_overflow(n, s.d[i], &n))
            n = INT64_MAX;
    }
    return n;
}

int ir_shape_eq(Shape a, Shape b)
{
    if (a.nd != b.nd || a.bd != b.bd)
        return 0;
    for (int i = 0; i < a.nd; i++)
        if (a.d[i] != b.d[i])
            return 0;
    return 1;
}

const char *ir_shape_str(Shape s, const char *batch, char *buf, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "[");
    for (int i = 0; i < s.nd && k < cap; i++) {
        const char *sep = i ? ", " : "";
        if (i == s.bd && s.d[i] == 1)
            k += (size_t)snprintf(buf + k, cap - k, "%s%s", sep, batch);
        else if (i == s.bd)
            k += (size_t)snprintf(buf + k, cap - k, "%s%lld*%s", sep, (long long)s.d[i], batch);
        else
            k += (size_t)snprintf(buf + k, cap - k, "%s%lld", sep, (long long)s.d[i]);
    }
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
    return buf;
}

/* NumPy broadcasting, with the batch dim treated as a symbol: it matches
 * itself or 1, never a constant other than 1. */
int ir_broadcast(Shape a, Shape b, Shape *out)
{
    Shape r;
    memset(&r, 0, sizeof r);
    r.nd = a.nd > b.nd ? a.nd : b.nd;
    r.bd = -1;
    for (int i = 0; i < r.nd; i++) {
        int ia = a.nd - r.nd + i, ib = b.nd - r.nd + i;
        int ab = ia >= 0 && ia == a.bd, bb = ib >= 0 && ib == b.bd;
        int64_t da = ia >= 0 ? a.d[ia] : 1, db = ib >= 0 ? b.d[ib] : 1;
        if ((ab || bb) && r.bd >= 0)
            return -1; /* two batch dims in different places */
        if (ab && bb) {
            if (da != db)
                return -1;
            r.d[i] = da, r.bd = i;
        } else if (ab || bb) {
            int64_t other = ab ? db : da;
            if (other != 1)
                return -1;
            r.d[i] = ab ? da : db, r.bd = i;
        } else if (da == db || db == 1) {
            r.d[i] = da;
        } else if (da == 1) {
            r.d[i] = db;
        } else {
            return -1;
        }
    }
    *out = r;
    return 0;
}

Graph *ir_graph_new(const char *name, int training)
{
    Graph *g = calloc(1, sizeof *g);
    if (!g)
        abort();
    g->name = name;
    g->training = training;
    g->output = g->loss = -1;
    g->core_end = -1;
    return g;
}

Shape ir_matmul_operand(const Graph *g, const IrNode *n, int k)
{
    Shape s = g->nodes[n->in[k]].shape;
    if (n->hperm & (1 << k)) {
        const int64_t d1 = s.d[1];
        s.d[1] = s.d[2];
        s.d[2] = d1;
    }
    return s;
}

IrNode ir_node(IrOp op, DType dt, Shape shape, int nin, const int *in)
{
    if (op_table[op].arity >= 0 && nin != op_table[op].arity) {
        fprintf(stderr, "nnc: internal error: op '%s' built with %d operands, it takes %d\n", op_table[op].name, nin,
                op_table[op].arity);
        abort();
    }
    IrNode n;
    memset(&n, 0, sizeof n);
    n.op = op;
    n.dt = dt;
    n.shape = shape;
    n.nin = nin;
    n.in = nin ? malloc(sizeof(int) * (size_t)nin) : NULL;
    if (nin && !n.in)
        abort();
    for (int i = 0; i < nin; i++)
        n.in[i] = in[i];
    n.buf = -1;
    n.alpha = 1;
    return n;
}

int ir_add(Graph *g, IrNode node)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 64;
        g->nodes = realloc(g->nodes, sizeof(IrNode) * (size_t)g->cap);
        if (!g->nodes)
            abort();
    }
    g->nodes[g->n] = node;
    return g->n++;
}

static void dump_attrs(const IrNode *n, FILE *out)
{
    switch (n->op) {
    case IR_CONST:
        fprintf(out, " %.9g", n->fval);
        if (n->ival2)
            fprintf(out, "*n^%d", n->ival2);
        break;
    case IR_LEAKY_RELU:
    case IR_DLEAKY_RELU:
    case IR_POWC:
    case IR_RNG_MASK:
    case IR_BN_NORM:
    case IR_BN_GRADS:
    case IR_BN_BWD:
        fprintf(out, " %.9g", n->fval);
        if (n->op == IR_BN_NORM && (n->nin > 4 || n->ival))
            fprintf(out, "%s%s", n->nin > 4 ? " +residual" : "", n->ival ? " relu" : "");
        break;
    case IR_HARD_SIGMOID:
    case IR_DHARD_SIGMOID: fprintf(out, " alpha=%.9g beta=%.9g", n->fval, n->fval2); break;
    case IR_CLIP:
    case IR_DCLIP:
        if (n->fval != -INFINITY)
            fprintf(out, " min=%.9g", n->fval);
        if (n->fval2 != INFINITY)
            fprintf(out, " max=%.9g", n->fval2);
        break;
    case IR_TRIL:
    case IR_TRIU: fprintf(out, " k=%d", n->ival); break;
    case IR_SOFTPLUS:
    case IR_DSOFTPLUS: fprintf(out, " beta=%.9g threshold=%.9g", n->fval, n->fval2); break;
    case IR_ELU:
    case IR_DELU:
        fprintf(out, " alpha=%.9g", n->fval);
        if (n->fval2 != 1)
            fprintf(out, " input_scale=%.9g", n->fval2);
        break;
    case IR_CUMSUM:
        fprintf(out, " axis=%d%s%s", n->axis, n->ival & 1 ? " exclusive" : "", n->ival & 2 ? " reverse" : "");
        break;
    case IR_GATHER_ELEMENTS:
    case IR_GATHER_ELEMENTS_BWD: fprintf(out, " axis=%d", n->axis); break;
    case IR_PERMUTE:
        fprintf(out, " perm=(");
        for (int i = 0; i < n->shape.nd; i++)
            fprintf(out, "%s%d", i ? "," : "", n->perm[i]);
        fprintf(out, ")");
        break;
    case IR_ARGMAX:
    case IR_ARGMIN: fprintf(out, " axis=%d%s", n->axis, n->ival ? " last" : ""); break;
    case IR_CONCAT:
    case IR_SOFTMAX:
    case IR_LOG_SOFTMAX:
    case IR_SOFTMAX_BWD:
    case IR_LOG_SOFTMAX_BWD:
        fprintf(out, " axis=%d", n->axis);
        if (n->alpha != 1)
            fprintf(out, " scale=%.9g", n->alpha);
        if (n->causal)
            fprintf(out, " causal");
        break;
    case IR_SLICE:
    case IR_PAD:
    case IR_PAD_REFLECT:
    case IR_PAD_REFLECT_BWD:
        fprintf(out, " axis=%d %lld..%lld", n->axis, (long long)n->start, (long long)n->end);
        if (n->op == IR_PAD && n->fval != 0)
            fprintf(out, " value=%g", n->fval);
        if ((n->op == IR_PAD_REFLECT || n->op == IR_PAD_REFLECT_BWD) && n->ival)
            fprintf(out, " replicate");
        break;
    case IR_UPSAMPLE:
    case IR_UPSAMPLE_BWD: fprintf(out, " scale=%dx%d %s", n->kh, n->kw, n->ival ? "bilinear" : "nearest"); break;
    case IR_RESIZE:
    case IR_RESIZE_BWD:
        fprintf(out, " axis=%d %s %s", n->axis, ir_resize_modes[n->ival], ir_resize_coords[n->ival2]);
        if (n->fval2 > 0)
            fprintf(out, " scale=%.17g", n->fval2);
        if (n->ival == RESIZE_NEAREST)
            fprintf(out, " %s", ir_resize_roundings[n->stride]);
        if (n->ival == RESIZE_CUBIC)
            fprintf(out, " a=%g%s", n->fval, n->exclude_pad ? " exclude_outside" : "");
        break;
    case IR_IM2COL:
    case IR_COL2IM:
    case IR_MAXPOOL:
    case IR_MAXPOOL_BWD:
    case IR_AVGPOOL:
    case IR_AVGPOOL_BWD:
    case IR_CONV2D:
    case IR_CONV2D_BWD_DATA:
    case IR_CONV2D_BWD_FILTER:
        fprintf(out, " k=%dx%d stride=%d pad=%d", n->kh, n->kw, n->stride, n->pad);
        if ((n->op == IR_CONV2D || n->op == IR_CONV2D_BWD_DATA || n->op == IR_CONV2D_BWD_FILTER) && ir_conv_general(n))
            fprintf(out, " stride_w=%d pad_w=%d dil=%dx%d groups=%d", n->stride_w, n->pad_w, n->dil_h, n->dil_w,
                    n->groups);
        if (n->op == IR_CONV2D && (n->nin > 2 || n->ival))
            fprintf(out, "%s%s", n->nin > 2 ? " +bias" : "", n->ival ? " relu" : "");
        if ((n->op == IR_MAXPOOL || n->op == IR_MAXPOOL_BWD || n->op == IR_AVGPOOL || n->op == IR_AVGPOOL_BWD) &&
            (n->kh != n->kw || n->stride_w != n->stride || n->pad_w != n->pad || n->dil_h > 1 || n->dil_w > 1))
            fprintf(out, " stride_w=%d pad_w=%d dil=%dx%d", n->stride_w, n->pad_w, n->dil_h, n->dil_w);
        if (n->op == IR_MAXPOOL_BWD && n->ival)
            fprintf(out, " *step(x)");
        if (n->exclude_pad)
            fprintf(out, " exclude_pad");
        break;
    case IR_MATMUL:
        if (n->ta || n->tb)
            fprintf(out, " t=%d%d", n->ta, n->tb);
        if (n->alpha != 1)
            fprintf(out, " alpha=%.9g", n->alpha);
        if (n->hperm)
            fprintf(out, " heads=%d%d%d", n->hperm & 1, (n->hperm >> 1) & 1, (n->hperm >> 2) & 1);
        break;
    case IR_SUM:
    case IR_MEAN:
    case IR_MAX: fprintf(out, " axes=0x%x%s", (unsigned)n->axes, n->keepdim ? " keepdim" : ""); break;
    default: break;
    }
}

void ir_dump(const Model *m, const Graph *g, FILE *out, int backward_only)
{
    char sb[128];
    fprintf(out, "graph %s (%s)\n", g->name, g->training ? "training" : "inference");
    for (int i = 0; i < g->n; i++) {
        const IrNode *n = &g->nodes[i];
        if (backward_only && !n->backward)
            continue;
        if (i == g->core_end && !backward_only)
            fprintf(out, "  // forward ends; eval goes on with the loss and the metrics\n");
        fprintf(out, "  %%%d %s = %s", i, n->name ? n->name : "-", ir_op_name(n->op));
        for (int k = 0; k < n->nin; k++)
            fprintf(out, "%s%%%d", k ? ", " : " ", n->in[k]);
        dump_attrs(n, out);
        if (n->op == IR_PARAM)
            fprintf(out, " %s", m->params[n->ival].path);
        else if (n->op == IR_STATE)
            fprintf(out, " %s", m->state[n->ival].path);
        else if (n->op == IR_INPUT)
            fprintf(out, " %s", m->inputs[n->ival].name);
        else if (n->op == IR_LABEL)
            fprintf(out, " %s", m->labels[n->ival].name);
        fprintf(out, " : %s%s", n->dt == DT_I32 ? "i32" : "f32", ir_shape_str(n->shape, "N", sb, sizeof sb));
        if (n->global)
            fprintf(out, " [global]");
        if (n->what)
            fprintf(out, "   // %s", n->what);
        fprintf(out, "\n");
    }
    if (g->output >= 0)
        fprintf(out, "  output %%%d\n", g->output);
    if (g->loss >= 0)
        fprintf(out, "  loss %%%d\n", g->loss);
    for (int i = 0; i < g->nmetrics; i++)
        fprintf(out, "  metric %s %%%d\n", m->metric_names[i], g->metrics[i]);
    for (int i = 0; i < g->nupdates; i++)
        fprintf(out, "  update %s = %%%d\n", m->state[g->update_state[i]].path, g->update_value[i]);
    for (int i = 0; i < g->ncounts; i++)
        fprintf(out, "  count %s += %lld\n", m->state[g->count_state[i]].path, g->count_by[i]);
    for (int i = 0; i < g->nsummaries; i++)
        fprintf(out, "  summary \"%s\" = %%%d\n", g->summary_name[i], g->summary_value[i]);
    if (g->param_grad)
        for (int i = 0; i < m->nparams; i++)
            if (g->param_grad[i] >= 0)
                fprintf(out, "  grad %s = %%%d%s\n", m->params[i].path, g->param_grad[i],
                        g->dist_grads && g->dist_grads[i] ? " [summed across processes]" : "");
    if (m->dist_refuse && !g->training)
        fprintf(out, "  // one process only: %s\n", m->dist_refuse);
}
