/* prims.c — the primitives (prim_*): the built-in functions of spec §7,
 * from relu to batch_norm, each a row of one table.
 *
 * A row names the primitive and the function that checks its arguments
 * and builds its nodes (a handler, named prim_<what> like the functions of
 * Lua's library tables), and the IR op for rows that share a handler:
 * relu and tanh are both prim_unary.  The interpreter (elab.c) finds a
 * primitive by name, and its suggestions for a misspelt name list the
 * table's names in order.
 *
 * Also here, because the primitives are most of their users: the tensor
 * operations they are made of (broadcasting, NumPy's matmul, reshapes and
 * permutations), and binding and checking the values of arguments, which
 * the interpreter uses too (an `if` condition must be a bool as `keepdim:`
 * must).  Errors return poison (VK_NONE) after one diagnostic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elab.h"

/* A row of the table (the table itself is at the end, after the handlers
 * it names). */
struct Prim {
    const char *name;
    Value (*call)(const Prim *p, Args *a);
    IrOp op; /* for the rows that share a handler; else 0 */
};

/* ===================================================================== */
/* tensor operations                                                      */
/* ===================================================================== */

static int mk_const(double v, int npow)
{
    IrNode n = ir_node(IR_CONST, DT_F32, ir_shape(0, NULL, -1), 0, NULL);
    n.fval = v;
    n.ival2 = npow;
    return elab_add(n);
}

int prim_need_tensor(Value v, Loc loc, const char *what)
{
    if (v.k == VK_NONE)
        return 0;
    if (v.k != VK_TENSOR) {
        diag_error(loc, "%s must be a tensor, got %s", what, elab_vk_name(v.k));
        return 0;
    }
    if (node(v.t)->dt != DT_F32) {
        diag_error(loc, "%s must be an f32 tensor, got i32", what);
        return 0;
    }
    return 1;
}

/* A tensor operand or a scalar that becomes a constant. */
int prim_operand(Value v, Loc loc, int *t)
{
    if (v.k == VK_INT) {
        /* the batch size is known at run time: k * n */
        *t = mk_const((double)v.i, v.batch ? 1 : 0);
        return 1;
    }
    if (v.k == VK_FLOAT) {
        *t = mk_const(v.f, 0);
        return 1;
    }
    if (!prim_need_tensor(v, loc, "operand"))
        return 0;
    *t = v.t;
    return 1;
}

Value prim_binary(IrOp op, Value a, Value b, Loc loc)
{
    int ta, tb;
    if (!prim_operand(a, loc, &ta) || !prim_operand(b, loc, &tb))
        return none();
    Shape s;
    if (ir_broadcast(shape_of(ta), shape_of(tb), &s) < 0) {
        diag_error(loc, "cannot broadcast shapes %s and %s", sstr(shape_of(ta)), sstr(shape_of(tb)));
        return none();
    }
    int in[2] = {ta, tb};
    return vtensor(mk(op, s, 2, in));
}

/* Normalizes a possibly negative axis; reports out-of-range axes. */
static int norm_axis(long long axis, int nd, Loc loc, int *out)
{
    if (axis < -nd || axis >= nd) {
        diag_error(loc, "axis %lld is out of range for a tensor of rank %d", axis, nd);
        return 0;
    }
    *out = (int)(axis < 0 ? axis + nd : axis);
    return 1;
}

static int mk_permute(int t, const int *perm)
{
    Shape in = shape_of(t), s = in;
    s.bd = -1;
    for (int i = 0; i < in.nd; i++) {
        s.d[i] = in.d[perm[i]];
        if (perm[i] == in.bd)
            s.bd = i;
    }
    int n = mk(IR_PERMUTE, s, 1, &t);
    memcpy(node(n)->perm, perm, sizeof(int) * (size_t)in.nd);
    return n;
}

static int mk_reshape(int t, Shape s)
{
    IrNode n = ir_node(IR_RESHAPE, node(t)->dt, s, 1, &t);
    return elab_add(n);
}

/* The shape without dim k (a dim of size 1 being removed). */
static Shape drop_dim(Shape s, int k)
{
    for (int i = k; i < s.nd - 1; i++)
        s.d[i] = s.d[i + 1];
    if (s.bd == k)
        s.bd = -1;
    else if (s.bd > k)
        s.bd--;
    s.nd--;
    return s;
}

/* NumPy matmul: 1-D operands are promoted and the added dim removed,
 * leading dims broadcast. */
Value prim_matmul(Value va, Value vb, Loc loc)
{
    if (!prim_need_tensor(va, loc, "left operand of '@'") || !prim_need_tensor(vb, loc, "right operand of '@'"))
        return none();
    int a = va.t, b = vb.t;
    Shape sa = shape_of(a), sb = shape_of(b);
    int pa = 0, pb = 0;
    if (sa.nd == 0 || sb.nd == 0) {
        diag_error(loc, "'@' needs operands of rank 1 or more, got %s and %s", sstr(sa), sstr(sb));
        return none();
    }
    if (sa.nd == 1) {
        Shape t = sa;
        t.nd = 2, t.d[1] = sa.d[0], t.d[0] = 1, t.bd = sa.bd == 0 ? 1 : -1;
        a = mk_reshape(a, t), sa = t, pa = 1;
    }
    if (sb.nd == 1) {
        Shape t = sb;
        t.nd = 2, t.d[1] = 1, t.bd = sb.bd;
        b = mk_reshape(b, t), sb = t, pb = 1;
    }
    int ka = sa.nd - 1, kb = sb.nd - 2;
    if (sa.d[ka] != sb.d[kb] || (sa.bd == ka) != (sb.bd == kb)) {
        diag_error(loc, "'@' shapes %s and %s do not agree: inner dims differ", sstr(sa), sstr(sb));
        return none();
    }
    Shape ba = sa, bb = sb, bs;
    ba.nd -= 2, bb.nd -= 2;
    if (ba.bd >= ba.nd)
        ba.bd = -1;
    if (bb.bd >= bb.nd)
        bb.bd = -1;
    if (ir_broadcast(ba, bb, &bs) < 0) {
        diag_error(loc, "'@' cannot broadcast the leading dims of %s and %s", sstr(sa), sstr(sb));
        return none();
    }
    Shape s = bs;
    s.d[s.nd] = sa.d[sa.nd - 2];
    s.d[s.nd + 1] = sb.d[sb.nd - 1];
    if (sa.bd == sa.nd - 2)
        s.bd = s.nd;
    if (sb.bd == sb.nd - 1)
        s.bd = s.nd + 1;
    s.nd += 2;
    int in[2] = {a, b};
    int r = mk(IR_MATMUL, s, 2, in);
    /* drop the promoted dims again: the last one first */
    Shape t = s;
    if (pb)
        t = drop_dim(t, t.nd - 1);
    if (pa)
        t = drop_dim(t, t.nd - (pb ? 1 : 2));
    if (pa || pb)
        r = mk_reshape(r, t);
    return vtensor(r);
}

/* ===================================================================== */
/* arguments                                                              */
/* ===================================================================== */

/* Binds a primitive's arguments to its declared parameter names.  `spec`
 * lists the names in positional order; a trailing '?' marks optional ones.
 * Returns 0 after reporting when they do not fit. */
int prim_bind_args(Args *a, const char *const *spec, int nspec, Value *out, Loc *locs)
{
    int ok = 1;
    char seen[16] = {0};
    for (int i = 0; i < nspec; i++)
        out[i] = none(), out[i].k = VK_ABSENT, locs[i] = a->loc;
    int pos = 0;
    for (int i = 0; i < a->n; i++) {
        int slot = -1;
        if (!a->names[i]) {
            if (pos >= nspec) {
                diag_error(a->locs[i], "too many arguments to '%s' (it takes %d)", a->callee, nspec);
                return 0;
            }
            slot = pos++;
        } else {
            const char *cands[16];
            for (int k = 0; k < nspec; k++) {
                size_t l = strlen(spec[k]);
                cands[k] = spec[k][l - 1] == '?' ? ast_strndup(spec[k], l - 1) : spec[k];
                if (!strcmp(cands[k], a->names[i]))
                    slot = k;
            }
            if (slot < 0) {
                const char *c = diag_closest(a->names[i], cands, nspec);
                diag_error(a->locs[i], "'%s' has no parameter '%s'", a->callee, a->names[i]);
                if (c)
                    diag_note(a->locs[i], "did you mean '%s'?", c);
                ok = 0;
                continue;
            }
        }
        if (seen[slot]) {
            diag_error(a->locs[i], "argument '%s' of '%s' is given twice", spec[slot], a->callee);
            ok = 0;
        }
        seen[slot] = 1;
        out[slot] = a->vals[i];
        locs[slot] = a->locs[i];
        if (a->vals[i].k == VK_NONE)
            ok = 0;
    }
    for (int k = 0; ok && k < nspec; k++) {
        size_t l = strlen(spec[k]);
        if (!seen[k] && spec[k][l - 1] != '?') {
            diag_error(a->loc, "missing argument '%s' of '%s'", spec[k], a->callee);
            ok = 0;
        }
    }
    return ok;
}

int prim_get_int(Value v, Loc loc, const char *what, long long *out)
{
    if (v.k == VK_NONE)
        return 0;
    if (v.k != VK_INT || v.batch) {
        diag_error(loc, "%s must be an int, got %s", what, v.batch ? "the batch dim" : elab_vk_name(v.k));
        return 0;
    }
    *out = v.i;
    return 1;
}

int prim_get_number(Value v, Loc loc, const char *what, double *out)
{
    if (v.k == VK_FLOAT) {
        *out = v.f;
        return 1;
    }
    if (v.k == VK_INT && !v.batch) {
        *out = (double)v.i;
        return 1;
    }
    if (v.k != VK_NONE)
        diag_error(loc, "%s must be a number, got %s", what, elab_vk_name(v.k));
    return 0;
}

int prim_get_bool(Value v, Loc loc, const char *what, int *out)
{
    if (v.k == VK_NONE)
        return 0;
    if (v.k != VK_BOOL) {
        diag_error(loc, "%s must be a bool, got %s", what, elab_vk_name(v.k));
        return 0;
    }
    *out = (int)v.i;
    return 1;
}

/* Axes given as an int or a list of ints: a bit mask over nd dims. */
static int get_axes(Value v, Loc loc, int nd, uint32_t *mask)
{
    *mask = 0;
    if (v.k == VK_LIST) {
        for (int i = 0; i < v.n; i++) {
            long long ax;
            int a;
            if (!prim_get_int(v.items[i], loc, "an axis", &ax) || !norm_axis(ax, nd, loc, &a))
                return 0;
            if (*mask & (1u << a)) {
                diag_error(loc, "axis %lld is given twice", ax);
                return 0;
            }
            *mask |= 1u << a;
        }
        return 1;
    }
    long long ax;
    int a;
    if (!prim_get_int(v, loc, "axis", &ax) || !norm_axis(ax, nd, loc, &a))
        return 0;
    *mask = 1u << a;
    return 1;
}

/* ===================================================================== */
/* primitives (spec §7)                                                   */
/* ===================================================================== */

static Value unary_tensor(IrOp op, Value x, Loc loc, const char *name)
{
    if (!prim_need_tensor(x, loc, elab_fmt("the argument of '%s'", name)))
        return none();
    if (op == IR_NUM_OPS) /* identity */
        return x;
    return vtensor(mk1(op, x.t));
}

static Value prim_unary(const Prim *p, Args *a)
{
    Value v[1];
    Loc l[1];
    if (!prim_bind_args(a, SPEC("x"), v, l))
        return none();
    double c;
    if ((v[0].k == VK_INT && !v[0].batch) || v[0].k == VK_FLOAT) {
        /* on a number, a compile-time value: 1 / sqrt(head_dim) */
        prim_get_number(v[0], l[0], "x", &c);
        switch (p->op) {
        case IR_SQRT: return vfloat(sqrt(c));
        case IR_RSQRT: return vfloat(1 / sqrt(c));
        case IR_EXP: return vfloat(exp(c));
        case IR_LOG: return vfloat(log(c));
        case IR_ABS: return vfloat(fabs(c));
        case IR_SQUARE: return vfloat(c * c);
        case IR_TANH: return vfloat(tanh(c));
        case IR_SIGMOID: return vfloat(1 / (1 + exp(-c)));
        case IR_RELU: return vfloat(c > 0 ? c : 0);
        case IR_ERF: return vfloat(erf(c));
        case IR_HARD_SWISH: return vfloat(c * fmin(fmax(c + 3, 0), 6) / 6);
        case IR_RECIPROCAL: return vfloat(1 / c);
        case IR_SIGN: return vfloat((c > 0) - (c < 0));
        case IR_NEG: return vfloat(-c);
        case IR_SIN: return vfloat(sin(c));
        case IR_COS: return vfloat(cos(c));
        case IR_TAN: return vfloat(tan(c));
        case IR_ASIN: return vfloat(asin(c));
        case IR_ACOS: return vfloat(acos(c));
        case IR_ATAN: return vfloat(atan(c));
        case IR_SINH: return vfloat(sinh(c));
        case IR_COSH: return vfloat(cosh(c));
        case IR_ASINH: return vfloat(asinh(c));
        case IR_ACOSH: return vfloat(acosh(c));
        case IR_ATANH: return vfloat(atanh(c));
        case IR_FLOOR: return vfloat(floor(c));
        case IR_CEIL: return vfloat(ceil(c));
        case IR_ROUND: return vfloat(nearbyint(c)); /* half to even */
        case IR_SOFTSIGN: return vfloat(c / (1 + fabs(c)));
        case IR_SELU: return vfloat(c <= 0 ? expm1(c) * NNC_SELU_ALPHA * NNC_SELU_SCALE : c * NNC_SELU_SCALE);
        case IR_MISH: return vfloat(c * tanh(log1p(exp(c))));
        case IR_NUM_OPS: return v[0];
        default: break;
        }
    }
    return unary_tensor(p->op, v[0], l[0], p->name);
}

static Value prim_pow(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    double c;
    if (!prim_bind_args(a, SPEC("x", "c"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !prim_get_number(v[1], l[1], "the exponent", &c))
        return none();
    int t = mk1(IR_POWC, v[0].t);
    node(t)->fval = c;
    return vtensor(t);
}

static Value prim_maximum(const Prim *p, Args *a)
{
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("a", "b"), v, l))
        return none();
    return prim_binary(p->op, v[0], v[1], a->loc);
}

/* An optional number argument: *out left as it is when absent. */
static int opt_number(Value v, Loc loc, const char *what, double *out)
{
    return v.k == VK_ABSENT || prim_get_number(v, loc, what, out);
}

/* softplus(x, beta: 1, threshold: 20), elu(x, alpha: 1) and celu(x,
 * alpha: 1), PyTorch's: elementwise with constants, which (their
 * defaults given) are also values of type fn, and evaluated at compile
 * time on a number.  celu is PyTorch's elu with the input scaled by 1 /
 * alpha (fval2), elu's scale 1. */
static Value prim_act(const Prim *p, Args *a)
{
    Value v[3];
    Loc l[3];
    double k1 = 1, k2 = p->op == IR_SOFTPLUS ? 20 : 1;
    int ok = p->op == IR_SOFTPLUS ? prim_bind_args(a, SPEC("x", "beta?", "threshold?"), v, l)
                                  : prim_bind_args(a, SPEC("x", "alpha?"), v, l);
    if (!ok)
        return none();
    const char *n1 = p->op == IR_SOFTPLUS ? "beta" : "alpha";
    if (!opt_number(v[1], l[1], n1, &k1) || (p->op == IR_SOFTPLUS && !opt_number(v[2], l[2], "threshold", &k2)))
        return none();
    if (!isfinite(k1) || isnan(k2) || (k1 == 0 && strcmp(p->name, "elu"))) {
        diag_error(l[isnan(k2) ? 2 : 1], "%s of '%s' must be a finite number%s, got %g", isnan(k2) ? "threshold" : n1,
                   p->name,
                   isnan(k2)                    ? ""
                       : strcmp(p->name, "elu") ? " other than 0"
                                                : "",
                   isnan(k2) ? k2 : k1);
        return none();
    }
    if (!strcmp(p->name, "celu"))
        k2 = 1 / k1;
    double c;
    if ((v[0].k == VK_INT && !v[0].batch) || v[0].k == VK_FLOAT) {
        prim_get_number(v[0], l[0], "x", &c);
        if (p->op == IR_SOFTPLUS)
            return vfloat(c * k1 > k2 ? c : log1p(exp(c * k1)) / k1);
        return vfloat(c <= 0 ? expm1(c * k2) * k1 : c);
    }
    if (!prim_need_tensor(v[0], l[0], elab_fmt("the argument of '%s'", p->name)))
        return none();
    int t = mk1(p->op, v[0].t);
    node(t)->fval = k1;
    node(t)->fval2 = k2;
    return vtensor(t);
}

/* float(x): an i32 tensor as f32, as x.float() (no gradient: the ids of
 * a Cast, a mask for `where`); an f32 tensor is itself, a number its
 * float value */
static Value prim_float(const Prim *p, Args *a)
{
    (void)p;
    Value v[1];
    Loc l[1];
    double c;
    if (!prim_bind_args(a, SPEC("x"), v, l))
        return none();
    if ((v[0].k == VK_INT && !v[0].batch) || v[0].k == VK_FLOAT) {
        prim_get_number(v[0], l[0], "x", &c);
        return vfloat(c);
    }
    if (v[0].k != VK_TENSOR) {
        diag_error(l[0], "the argument of 'float' must be a tensor or a number, got %s",
                   v[0].batch ? "the batch dim" : elab_vk_name(v[0].k));
        return none();
    }
    if (node(v[0].t)->dt == DT_F32)
        return v[0];
    IrNode n = ir_node(IR_TO_F32, DT_F32, shape_of(v[0].t), 1, &v[0].t);
    return vtensor(elab_add(n));
}

/* int(x): an f32 tensor as i32, truncated toward zero as x.int(); a NaN
 * or a value outside the i32 range gives -2^31, as PyTorch on x86 (where C
 * leaves it undefined).  No gradient; an i32 tensor is itself.  It makes
 * an i32 output of a comparison's 0/1 mask (ONNX's bool outputs). */
static Value prim_int(const Prim *p, Args *a)
{
    (void)p;
    Value v[1];
    Loc l[1];
    if (!prim_bind_args(a, SPEC("x"), v, l))
        return none();
    if (v[0].k != VK_TENSOR) {
        diag_error(l[0], "the argument of 'int' must be a tensor, got %s",
                   v[0].batch ? "the batch dim" : elab_vk_name(v[0].k));
        return none();
    }
    if (node(v[0].t)->dt == DT_I32)
        return v[0];
    IrNode n = ir_node(IR_TO_I32, DT_I32, shape_of(v[0].t), 1, &v[0].t);
    return vtensor(elab_add(n));
}

/* leaky_relu(x, slope: 0.01), F.leaky_relu's negative_slope */
static Value prim_leaky_relu(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    double slope = 0.01;
    if (!prim_bind_args(a, SPEC("x", "slope?"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !opt_number(v[1], l[1], "slope", &slope))
        return none();
    int t = mk1(IR_LEAKY_RELU, v[0].t);
    node(t)->fval = slope;
    return vtensor(t);
}

/* hard_sigmoid(x, alpha: 1/6, beta: 0.5): max(0, min(1, alpha x + beta)),
 * F.hardsigmoid with the defaults, ONNX's HardSigmoid with its alpha */
static Value prim_hard_sigmoid(const Prim *p, Args *a)
{
    (void)p;
    Value v[3];
    Loc l[3];
    double alpha = 1.0 / 6, beta = 0.5;
    if (!prim_bind_args(a, SPEC("x", "alpha?", "beta?"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !opt_number(v[1], l[1], "alpha", &alpha) || !opt_number(v[2], l[2], "beta", &beta))
        return none();
    int t = mk1(IR_HARD_SIGMOID, v[0].t);
    node(t)->fval = alpha;
    node(t)->fval2 = beta;
    return vtensor(t);
}

/* clip(x, min:, max:), torch.clamp with number bounds, at least one; an
 * absent bound is an infinite one */
static Value prim_clip(const Prim *p, Args *a)
{
    (void)p;
    Value v[3];
    Loc l[3];
    double lo = -INFINITY, hi = INFINITY;
    if (!prim_bind_args(a, SPEC("x", "min?", "max?"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !opt_number(v[1], l[1], "min", &lo) || !opt_number(v[2], l[2], "max", &hi))
        return none();
    if (v[1].k == VK_ABSENT && v[2].k == VK_ABSENT) {
        diag_error(a->loc, "'clip' needs a bound: min, max or both");
        return none();
    }
    if (isnan(lo) || isnan(hi)) {
        diag_error(l[isnan(lo) ? 1 : 2], "the bounds of 'clip' must not be NaN");
        return none();
    }
    int t = mk1(IR_CLIP, v[0].t);
    node(t)->fval = lo;
    node(t)->fval2 = hi;
    return vtensor(t);
}

/* where(cond, a, b): a where cond is not 0, else b, all three
 * broadcasting; cond is an f32 tensor (a mask such as `greater` makes) */
static Value prim_where(const Prim *p, Args *a)
{
    (void)p;
    Value v[3];
    Loc l[3];
    int in[3];
    if (!prim_bind_args(a, SPEC("cond", "a", "b"), v, l))
        return none();
    if (!prim_need_tensor(v[0], l[0], "cond")) {
        if (v[0].k == VK_TENSOR) /* an i32 mask (ONNX's bool) */
            diag_note(l[0], "float(cond) makes an f32 mask of it");
        return none();
    }
    if (!prim_operand(v[1], l[1], &in[1]) || !prim_operand(v[2], l[2], &in[2]))
        return none();
    in[0] = v[0].t;
    Shape s;
    if (ir_broadcast(shape_of(in[0]), shape_of(in[1]), &s) < 0 || ir_broadcast(s, shape_of(in[2]), &s) < 0) {
        diag_error(a->loc, "'where' cannot broadcast shapes %s, %s and %s", sstr(shape_of(in[0])),
                   sstr(shape_of(in[1])), sstr(shape_of(in[2])));
        return none();
    }
    return vtensor(mk(IR_WHERE, s, 3, in));
}

/* expand(x, shape): x broadcast to shape, as torch's expand: each dim of
 * x (aligned right) is 1 or equals its target, which -1 keeps; the batch
 * dim is written by its name, and a dim of 1 may expand to it */
static Value prim_expand(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("x", "shape"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    Shape in = shape_of(v[0].t), s;
    if (v[1].k != VK_LIST || v[1].n < in.nd || v[1].n > IR_MAXD) {
        diag_error(l[1], "the shape of 'expand' must be a list of %d to %d ints for x %s", in.nd, IR_MAXD, sstr(in));
        return none();
    }
    memset(&s, 0, sizeof s);
    s.nd = v[1].n, s.bd = -1;
    const int lead = s.nd - in.nd;
    for (int i = 0; i < s.nd; i++) {
        Value d = v[1].items[i];
        const int j = i - lead; /* x's dim, or < 0 for a new one */
        if (d.k != VK_INT) {
            diag_error(l[1], "dim %d of the shape must be an int, got %s", i, elab_vk_name(d.k));
            return none();
        }
        const int batch = d.batch || (d.i == -1 && j >= 0 && j == in.bd);
        if (batch && s.bd >= 0) {
            diag_error(l[1], "the batch dim appears twice in the shape");
            return none();
        }
        int ok;
        if (d.batch) {
            s.bd = i, s.d[i] = d.i;
            ok = j < 0 || (j == in.bd ? in.d[j] == d.i : in.d[j] == 1);
        } else if (d.i == -1) {
            ok = j >= 0;
            if (ok)
                s.d[i] = in.d[j], s.bd = batch ? i : s.bd;
        } else {
            s.d[i] = d.i;
            ok = d.i > 0 && (j < 0 || (j != in.bd && (in.d[j] == 1 || in.d[j] == d.i)));
        }
        if (!ok) {
            const char *want = d.batch ? "the batch dim" : elab_fmt("%lld", d.i);
            if (j < 0)
                diag_error(
                    l[1],
                    "cannot expand %s: dim %d of the shape is %s, a new dim, which must be a size or the batch dim",
                    sstr(in), i, want);
            else
                diag_error(l[1], "cannot expand %s: dim %d of the shape is %s where x has %s (only a dim of 1 expands)",
                           sstr(in), i, want, j == in.bd ? "the batch dim" : elab_fmt("%lld", (long long)in.d[j]));
            return none();
        }
    }
    if (ir_shape_eq(s, in))
        return v[0];
    return vtensor(mk(IR_EXPAND, s, 1, &v[0].t));
}

/* tril(x, k: 0) and triu(x, k: 0) over the last two dims, as torch's
 * (k is torch's diagonal) */
static Value prim_tri(const Prim *p, Args *a)
{
    Value v[2];
    Loc l[2];
    long long k = 0;
    if (!prim_bind_args(a, SPEC("x", "k?"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    if (v[1].k != VK_ABSENT && !prim_get_int(v[1], l[1], "k", &k))
        return none();
    Shape s = shape_of(v[0].t);
    if (s.nd < 2 || s.bd >= s.nd - 2) {
        diag_error(l[0], "'%s' needs a tensor of rank 2 or more, its last two dims not the batch, got %s", p->name,
                   sstr(s));
        return none();
    }
    /* past the matrix's edges every k keeps (or clears) the same elements */
    const long long lim = s.d[s.nd - 2] + s.d[s.nd - 1];
    k = k < -lim ? -lim : k > lim ? lim : k;
    int t = mk1(p->op, v[0].t);
    node(t)->ival = (int)k;
    return vtensor(t);
}

/* cumsum(x, axis, exclusive: false, reverse: false): torch.cumsum(x,
 * dim), and ONNX CumSum's exclusive (each position without itself) and
 * reverse (from the end) */
static Value prim_cumsum(const Prim *p, Args *a)
{
    (void)p;
    Value v[4];
    Loc l[4];
    long long ax;
    int axis, excl = 0, rev = 0;
    if (!prim_bind_args(a, SPEC("x", "axis", "exclusive?", "reverse?"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !prim_get_int(v[1], l[1], "axis", &ax) || !norm_axis(ax, shape_of(v[0].t).nd, l[1], &axis) ||
        (v[2].k != VK_ABSENT && !prim_get_bool(v[2], l[2], "exclusive", &excl)) ||
        (v[3].k != VK_ABSENT && !prim_get_bool(v[3], l[3], "reverse", &rev)))
        return none();
    int t = mk1(IR_CUMSUM, v[0].t);
    node(t)->axis = axis;
    node(t)->ival = excl | rev << 1;
    return vtensor(t);
}

static Value prim_transpose(const Prim *p, Args *a)
{
    (void)p;
    Value v[3];
    Loc l[3];
    long long d0, d1;
    int a0, a1;
    if (!prim_bind_args(a, SPEC("x", "a", "b"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !prim_get_int(v[1], l[1], "a dim", &d0) || !prim_get_int(v[2], l[2], "a dim", &d1))
        return none();
    Shape s = shape_of(v[0].t);
    if (!norm_axis(d0, s.nd, l[1], &a0) || !norm_axis(d1, s.nd, l[2], &a1))
        return none();
    int perm[IR_MAXD];
    for (int i = 0; i < s.nd; i++)
        perm[i] = i;
    perm[a0] = a1, perm[a1] = a0;
    return vtensor(mk_permute(v[0].t, perm));
}

static Value prim_permute(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("x", "dims"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    Shape s = shape_of(v[0].t);
    if (v[1].k != VK_LIST || v[1].n != s.nd) {
        diag_error(l[1], "'permute' needs a list of %d dims for a tensor %s", s.nd, sstr(s));
        return none();
    }
    int perm[IR_MAXD], seen = 0;
    for (int i = 0; i < s.nd; i++) {
        long long d;
        if (!prim_get_int(v[1].items[i], l[1], "a dim", &d) || !norm_axis(d, s.nd, l[1], &perm[i]))
            return none();
        if (seen & (1 << perm[i])) {
            diag_error(l[1], "'permute' dims must be a permutation of 0..%d", s.nd - 1);
            return none();
        }
        seen |= 1 << perm[i];
    }
    return vtensor(mk_permute(v[0].t, perm));
}

static Value reduce(IrOp op, Args *a)
{
    Value v[3];
    Loc l[3];
    if (!prim_bind_args(a, SPEC("x", "axis?", "keepdim?"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    Shape in = shape_of(v[0].t);
    uint32_t mask = (1u << in.nd) - 1;
    int keep = 0;
    if (v[1].k != VK_ABSENT && !get_axes(v[1], l[1], in.nd, &mask))
        return none();
    if (v[2].k != VK_ABSENT && !prim_get_bool(v[2], l[2], "keepdim", &keep))
        return none();
    Shape s = in;
    s.nd = 0, s.bd = -1;
    for (int i = 0; i < in.nd; i++) {
        if (mask & (1u << i)) {
            if (keep)
                s.d[s.nd++] = 1;
            continue;
        }
        if (i == in.bd)
            s.bd = s.nd;
        s.d[s.nd++] = in.d[i];
    }
    int t = mk(op, s, 1, &v[0].t);
    node(t)->axes = mask;
    node(t)->keepdim = keep;
    return vtensor(t);
}

static Value prim_reduce(const Prim *p, Args *a) { return reduce(p->op, a); }

static Value minmax_const(Args *a, int is_max)
{
    if (a->n != 2 || a->names[0] || a->names[1]) {
        diag_error(a->loc, "'%s' takes two numbers", a->callee);
        return none();
    }
    Value x = a->vals[0], y = a->vals[1];
    if (x.k == VK_INT && y.k == VK_INT && !x.batch && !y.batch)
        return vint(is_max ? (x.i > y.i ? x.i : y.i) : (x.i < y.i ? x.i : y.i));
    double fx, fy;
    if (!prim_get_number(x, a->locs[0], "the first argument", &fx) ||
        !prim_get_number(y, a->locs[1], "the second argument", &fy))
        return none();
    return vfloat(is_max ? fmax(fx, fy) : fmin(fx, fy));
}

/* min/max of ints are compile-time; max(x, axis:) is a reduction. */
static Value prim_max(const Prim *p, Args *a)
{
    if (a->n >= 1 && a->vals[0].k == VK_TENSOR && p->name[1] == 'a')
        return reduce(IR_MAX, a);
    return minmax_const(a, p->name[1] == 'a');
}

static Value prim_len(const Prim *p, Args *a)
{
    (void)p;
    Value v[1];
    Loc l[1];
    if (!prim_bind_args(a, SPEC("xs"), v, l))
        return none();
    if (v[0].k != VK_LIST) {
        diag_error(l[0], "'len' takes a list, got %s", elab_vk_name(v[0].k));
        return none();
    }
    return vint(v[0].n);
}

/* reshape(x, [dims]): one -1; the batch dim may be written as its name. */
static Value prim_reshape(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("x", "shape"), v, l))
        return none();
    if (!prim_need_tensor(v[0], l[0], "x"))
        return none();
    if (v[1].k != VK_LIST) {
        diag_error(l[1], "the shape of 'reshape' must be a list of ints");
        return none();
    }
    Shape in = shape_of(v[0].t), s;
    memset(&s, 0, sizeof s);
    s.bd = -1;
    int infer = -1;
    int64_t prod = 1;
    if (v[1].n > IR_MAXD || v[1].n == 0) {
        diag_error(l[1], "'reshape' needs 1 to %d dims", IR_MAXD);
        return none();
    }
    for (int i = 0; i < v[1].n; i++) {
        Value d = v[1].items[i];
        if (d.k != VK_INT) {
            diag_error(l[1], "dim %d of the shape must be an int, got %s", i, elab_vk_name(d.k));
            return none();
        }
        if (d.batch) {
            if (s.bd >= 0) {
                diag_error(l[1], "the batch dim appears twice in the shape");
                return none();
            }
            s.bd = i, s.d[i] = d.i;
            prod = ir_numel(ir_shape(2, (int64_t[]){prod, d.i}, -1)); /* saturating */
        } else if (d.i == -1) {
            if (infer >= 0) {
                diag_error(l[1], "only one dim of the shape may be -1");
                return none();
            }
            infer = i;
        } else if (d.i <= 0) {
            diag_error(l[1], "dim %d of the shape is %lld; dims must be positive", i, d.i);
            return none();
        } else {
            s.d[i] = d.i, prod = ir_numel(ir_shape(2, (int64_t[]){prod, d.i}, -1));
        }
        s.nd++;
    }
    int64_t total = ir_numel(in);
    int bad = 0;
    if (in.bd >= 0 && s.bd < 0 && infer < 0)
        bad = 1; /* a batched tensor into a fixed shape */
    else if (in.bd < 0 && s.bd >= 0)
        bad = 1;
    else if (infer >= 0) {
        if (total % prod)
            bad = 1;
        else {
            s.d[infer] = total / prod;
            if (in.bd >= 0 && s.bd < 0)
                s.bd = infer; /* -1 absorbs the batch */
        }
    } else if (prod != total)
        bad = 1;
    if (bad) {
        diag_error(a->loc, "cannot reshape %s into %s", sstr(in), sstr(s));
        return none();
    }
    return vtensor(mk_reshape(v[0].t, s));
}

static Value prim_flatten(const Prim *p, Args *a)
{
    (void)p;
    Value v[1];
    Loc l[1];
    if (!prim_bind_args(a, SPEC("x"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    Shape s = shape_of(v[0].t);
    if (s.nd < 1) {
        diag_error(l[0], "'flatten' needs a tensor of rank 1 or more");
        return none();
    }
    Shape r = ir_shape(2, (int64_t[]){s.d[0], ir_numel(s) / s.d[0]}, s.bd < 0 ? -1 : s.bd == 0 ? 0 : 1);
    if (s.bd > 0)
        r.d[0] = s.d[0], r.d[1] = ir_numel(s) / s.d[0];
    return vtensor(mk_reshape(v[0].t, r));
}

static Value prim_concat(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("xs", "axis?"), v, l))
        return none();
    if (v[0].k != VK_LIST || v[0].n == 0) {
        diag_error(l[0], "'concat' takes a non-empty list of tensors");
        return none();
    }
    int *in = elab_calloc((size_t)v[0].n, sizeof(int));
    for (int i = 0; i < v[0].n; i++) {
        if (!prim_need_tensor(v[0].items[i], l[0], "each element of the list"))
            return none();
        in[i] = v[0].items[i].t;
    }
    Shape s = shape_of(in[0]);
    long long ax = 0;
    int axis;
    if (v[1].k != VK_ABSENT && !prim_get_int(v[1], l[1], "axis", &ax))
        return none();
    if (!norm_axis(ax, s.nd, l[1], &axis))
        return none();
    if (axis == s.bd) {
        diag_error(l[1], "'concat' along the batch dim is not supported");
        return none();
    }
    for (int i = 1; i < v[0].n; i++) {
        Shape si = shape_of(in[i]);
        int ok = si.nd == s.nd && si.bd == s.bd;
        for (int k = 0; ok && k < s.nd; k++)
            if (k != axis && si.d[k] != s.d[k])
                ok = 0;
        if (!ok) {
            diag_error(l[0], "'concat' shapes %s and %s differ outside axis %d", sstr(shape_of(in[0])), sstr(si), axis);
            return none();
        }
        s.d[axis] += si.d[axis];
    }
    int t = mk(IR_CONCAT, s, v[0].n, in);
    node(t)->axis = axis;
    return vtensor(t);
}

static Value prim_slice(const Prim *p, Args *a)
{
    (void)p;
    Value v[6];
    Loc l[6];
    long long ax, st, en;
    int axis;
    if (!prim_bind_args(a, SPEC("x", "axis", "start", "end"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    Shape s = shape_of(v[0].t);
    if (!prim_get_int(v[1], l[1], "axis", &ax) || !norm_axis(ax, s.nd, l[1], &axis) ||
        !prim_get_int(v[2], l[2], "start", &st) || !prim_get_int(v[3], l[3], "end", &en))
        return none();
    if (axis == s.bd) {
        diag_error(l[1], "'slice' along the batch dim is not supported");
        return none();
    }
    int64_t dim = s.d[axis];
    if (st < 0)
        st += dim;
    if (en < 0)
        en += dim;
    if (st < 0 || en > dim || st >= en) {
        diag_error(a->loc, "slice [%lld, %lld) is empty or out of range for dim %d of %s", st, en, axis, sstr(s));
        return none();
    }
    s.d[axis] = en - st;
    int t = mk(IR_SLICE, s, 1, &v[0].t);
    node(t)->axis = axis;
    node(t)->start = st;
    node(t)->end = en;
    return vtensor(t);
}

static Value prim_softmax(const Prim *p, Args *a)
{
    Value v[2];
    Loc l[2];
    long long ax = -1;
    int axis;
    if (!prim_bind_args(a, SPEC("x", "axis?"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    if (v[1].k != VK_ABSENT && !prim_get_int(v[1], l[1], "axis", &ax))
        return none();
    if (!norm_axis(ax, shape_of(v[0].t).nd, l[1], &axis))
        return none();
    int t = mk1(p->op, v[0].t);
    node(t)->axis = axis;
    return vtensor(t);
}

static Value prim_dropout(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    double rate;
    if (!prim_bind_args(a, SPEC("x", "rate"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !prim_get_number(v[1], l[1], "rate", &rate))
        return none();
    if (rate < 0 || rate >= 1) {
        diag_error(l[1], "dropout rate must be in [0, 1), got %g", rate);
        return none();
    }
    if (!E.training || rate == 0)
        return v[0];
    E.m->uses_rng = 1;
    IrNode mask = ir_node(IR_RNG_MASK, DT_F32, shape_of(v[0].t), 0, NULL);
    mask.fval = rate;
    int in[2] = {v[0].t, elab_add(mask)};
    return vtensor(mk(IR_MUL, shape_of(v[0].t), 2, in));
}

/* Marks an i32 label or input as the ids of `limit` classes, so the
 * driver can reject out-of-range files before any pass. */
static void note_id_limit(int t, int64_t limit, int ignore_ok)
{
    IrNode *n = node(t);
    while (n->op == IR_RESHAPE)
        n = node(n->in[0]);
    IoDecl *io = n->op == IR_LABEL ? &E.m->labels[n->ival] : n->op == IR_INPUT ? &E.m->inputs[n->ival] : NULL;
    if (io && (io->limit == 0 || io->limit > limit))
        io->limit = (int32_t)limit, io->ignore_ok = ignore_ok;
}

static Value prim_class_loss(const Prim *p, Args *a)
{
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("logits", "labels"), v, l) || !prim_need_tensor(v[0], l[0], "logits"))
        return none();
    if (v[1].k != VK_TENSOR || node(v[1].t)->dt != DT_I32) {
        if (v[1].k != VK_NONE)
            diag_error(l[1], "labels of '%s' must be an i32 tensor of class ids", a->callee);
        return none();
    }
    Shape s = shape_of(v[0].t), sl = shape_of(v[1].t);
    int ok = s.nd >= 1 && sl.nd == s.nd - 1 && sl.bd == (s.bd == s.nd - 1 ? -2 : s.bd);
    for (int i = 0; ok && i < sl.nd; i++)
        ok = sl.d[i] == s.d[i];
    if (!ok) {
        diag_error(a->loc, "'%s' needs labels shaped like the logits without the class axis: logits %s, labels %s",
                   a->callee, sstr(s), sstr(sl));
        return none();
    }
    note_id_limit(v[1].t, s.d[s.nd - 1], p->op == IR_CROSS_ENTROPY);
    int in[2] = {v[0].t, v[1].t};
    return vtensor(mk(p->op, ir_shape(0, NULL, -1), 2, in));
}

static Value prim_pair_loss(const Prim *p, Args *a)
{
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("a", "b"), v, l) || !prim_need_tensor(v[0], l[0], "the first argument") ||
        !prim_need_tensor(v[1], l[1], "the second argument"))
        return none();
    if (!ir_shape_eq(shape_of(v[0].t), shape_of(v[1].t))) {
        diag_error(a->loc, "'%s' needs operands of one shape, got %s and %s", a->callee, sstr(shape_of(v[0].t)),
                   sstr(shape_of(v[1].t)));
        return none();
    }
    int in[2] = {v[0].t, v[1].t};
    return vtensor(mk(p->op, ir_shape(0, NULL, -1), 2, in));
}

/* prim(x, axis) with a required axis: binds both and normalizes the axis. */
static int tensor_and_axis(Args *a, Value *v, Loc *l, int *axis)
{
    long long ax;
    return prim_bind_args(a, SPEC("x", "axis"), v, l) && prim_need_tensor(v[0], l[0], "x") &&
        prim_get_int(v[1], l[1], "axis", &ax) && norm_axis(ax, shape_of(v[0].t).nd, l[1], axis);
}

/* argmax(x, axis, keepdim: false, last: false) and argmin: the index
 * along axis of the largest (smallest) element, an i32 tensor with no
 * gradient.  As torch.argmax: the first such index (the last with
 * `last: true`, ONNX's select_last_index), a NaN counting as larger and
 * smaller than any number (the first NaN, or the last). */
static Value prim_argmax(const Prim *p, Args *a)
{
    Value v[4];
    Loc l[4];
    int axis, keep = 0, last = 0;
    long long ax;
    if (!prim_bind_args(a, SPEC("x", "axis", "keepdim?", "last?"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !prim_get_int(v[1], l[1], "axis", &ax) || !norm_axis(ax, shape_of(v[0].t).nd, l[1], &axis) ||
        (v[2].k != VK_ABSENT && !prim_get_bool(v[2], l[2], "keepdim", &keep)) ||
        (v[3].k != VK_ABSENT && !prim_get_bool(v[3], l[3], "last", &last)))
        return none();
    Shape r = shape_of(v[0].t);
    if (!keep) {
        r = drop_dim(r, axis);
    } else {
        r.d[axis] = 1;
        if (r.bd == axis) /* one index for the whole batch: no batch dim */
            r.bd = -1;
    }
    IrNode n = ir_node(p->op, DT_I32, r, 1, &v[0].t);
    n.axis = axis;
    n.ival = last;
    return vtensor(elab_add(n));
}

/* An int or a pair [h, w] of ints (a convolution's stride, padding,
 * dilation, output padding): both in out, left as they are if absent;
 * each in [lo, 2^20] */
static int conv_pair(const char *prim, Value v, Loc loc, const char *what, long long lo, long long out[2])
{
    if (v.k == VK_ABSENT)
        return 1;
    if (v.k == VK_LIST) {
        if (v.n != 2) {
            diag_error(loc, "%s of '%s' must be an int or a list [h, w] of two ints, got a list of %d", what, prim,
                       v.n);
            return 0;
        }
        if (!prim_get_int(v.items[0], loc, what, &out[0]) || !prim_get_int(v.items[1], loc, what, &out[1]))
            return 0;
    } else if (!prim_get_int(v, loc, what, &out[0]))
        return 0;
    else
        out[1] = out[0];
    for (int k = 0; k < 2; k++)
        if (out[k] < lo || out[k] > 1 << 20) {
            diag_error(loc, "%s of '%s' must be in [%lld, %d], got %lld", what, prim, lo, 1 << 20, out[k]);
            return 0;
        }
    return 1;
}

/* The arguments shared by conv2d, conv1d and conv_transpose2d: stride,
 * padding, dilation (ints or pairs; conv1d's a pair [1, v] or [0, v]) and
 * groups, at v[3..6] in that order, and conv_transpose2d's output_padding
 * at v[7] */
typedef struct {
    long long st[2], pd[2], dil[2], op[2], groups;
} ConvArgs;

static int conv_args(const char *prim, int one_d, int transposed, Value *v, Loc *l, ConvArgs *c)
{
    *c = (ConvArgs){{1, 1}, {0, 0}, {1, 1}, {0, 0}, 1};
    long long *fields[4] = {c->st, c->pd, c->dil, c->op};
    static const char *const names[4] = {"stride", "padding", "dilation", "output_padding"};
    static const long long lows[4] = {1, 0, 1, 0};
    for (int k = 0; k < (transposed ? 4 : 3); k++) {
        int at = k < 3 ? 3 + k : 7;
        if (one_d && v[at].k == VK_LIST) {
            diag_error(l[at], "%s of '%s' must be an int, got a list", names[k], prim);
            return 0;
        }
        if (!conv_pair(prim, v[at], l[at], names[k], lows[k], fields[k]))
            return 0;
        if (one_d) /* conv1d: [N, C, 1, L], nothing along the rows */
            fields[k][0] = k == 1 || k == 3 ? 0 : 1;
    }
    if (v[6].k != VK_ABSENT && !prim_get_int(v[6], l[6], "groups", &c->groups))
        return 0;
    if (c->groups < 1 || c->groups > 1 << 20) {
        diag_error(l[6], "groups of '%s' must be in [1, %d], got %lld", prim, 1 << 20, c->groups);
        return 0;
    }
    return 1;
}

/* A convolution node and its bias: conv2d and conv1d (op IR_CONV2D, x the
 * image), and conv_transpose2d (IR_CONV2D_BWD_DATA, x in dy's place: a
 * convolution's data gradient).  The fields say the geometry; kernel.c
 * chooses how it is computed and its work memory. */
static int conv_node(IrOp op, Shape out, int x, int w, const ConvArgs *c, Shape ws)
{
    int in[2] = {x, w};
    int t = mk(op, out, 2, in);
    IrNode *n = node(t);
    n->kh = (int)ws.d[2], n->kw = (int)ws.d[3];
    n->stride = (int)c->st[0], n->stride_w = (int)c->st[1], n->pad = (int)c->pd[0], n->pad_w = (int)c->pd[1];
    n->dil_h = (int)c->dil[0], n->dil_w = (int)c->dil[1], n->groups = (int)c->groups;
    return t;
}

/* a bias (a tensor of n elements, or false) added over [n, 1, ...] */
static Value conv_bias(const char *prim, Value out, Value b, Loc lb, int64_t n, int spatial, Loc loc)
{
    if (b.k == VK_ABSENT || (b.k == VK_BOOL && !b.i))
        return out;
    if (!prim_need_tensor(b, lb, "bias") || ir_numel(shape_of(b.t)) != n || shape_of(b.t).bd >= 0) {
        diag_error(lb, "the bias of '%s' must have %lld elements", prim, (long long)n);
        return none();
    }
    int64_t d[3] = {n, 1, 1};
    return prim_binary(IR_ADD, out, vtensor(mk_reshape(b.t, ir_shape(1 + spatial, d, -1))), loc);
}

/* conv2d(x, w, [bias,] stride:, padding:, dilation:, groups:) NCHW and
 * conv1d(...) NCL, as PyTorch's: w [F, C / groups, KH, KW] (conv1d: [F,
 * C / groups, K]); stride, padding and dilation an int or [h, w].  bias
 * (a tensor or false) is our extension, so that Conv2D can be written
 * like Dense.  conv1d is conv2d over [N, C, 1, L]. */
static Value prim_conv2d(const Prim *p, Args *a)
{
    Value v[7];
    Loc l[7];
    ConvArgs c;
    const int one_d = strcmp(p->name, "conv1d") == 0, nd = one_d ? 3 : 4;
    if (!prim_bind_args(a, SPEC("x", "w", "bias?", "stride?", "padding?", "dilation?", "groups?"), v, l) ||
        !prim_need_tensor(v[0], l[0], "x") || !prim_need_tensor(v[1], l[1], "w") ||
        !conv_args(p->name, one_d, 0, v, l, &c))
        return none();
    Shape x = shape_of(v[0].t), w = shape_of(v[1].t);
    if (x.nd != nd || x.bd > 0 || w.nd != nd || w.bd >= 0) {
        diag_error(a->loc,
                   one_d ? "'%s' needs x [N, C, L] and w [F, C / groups, K], got %s and %s"
                         : "'%s' needs x [N, C, H, W] and w [F, C / groups, KH, KW], got %s and %s",
                   p->name, sstr(x), sstr(w));
        return none();
    }
    const long long G = c.groups;
    if (x.d[1] % G || w.d[0] % G || w.d[1] * G != x.d[1]) {
        diag_error(a->loc,
                   "'%s' with groups %lld needs C and F divisible by %lld and w [F, C / %lld, ...], got x %s and w %s",
                   p->name, G, G, G, sstr(x), sstr(w));
        return none();
    }
    if (one_d) { /* as [N, C, 1, L] and [F, C / groups, 1, K] */
        x = ir_shape(4, (int64_t[]){x.d[0], x.d[1], 1, x.d[2]}, x.bd);
        w = ir_shape(4, (int64_t[]){w.d[0], w.d[1], 1, w.d[2]}, -1);
    }
    const int64_t eh = c.dil[0] * (w.d[2] - 1) + 1, ew = c.dil[1] * (w.d[3] - 1) + 1; /* the dilated kernel */
    if (x.d[2] + 2 * c.pd[0] < eh || x.d[3] + 2 * c.pd[1] < ew) {
        diag_error(a->loc, "'%s' kernel %lldx%lld (dilated: %lldx%lld) is larger than the padded input %s", p->name,
                   (long long)w.d[2], (long long)w.d[3], (long long)eh, (long long)ew, sstr(shape_of(v[0].t)));
        return none();
    }
    const int64_t oh = (x.d[2] + 2 * c.pd[0] - eh) / c.st[0] + 1, ow = (x.d[3] + 2 * c.pd[1] - ew) / c.st[1] + 1;
    int xt = one_d ? mk_reshape(v[0].t, x) : v[0].t, wt = one_d ? mk_reshape(v[1].t, w) : v[1].t;
    int ct = conv_node(IR_CONV2D, ir_shape(4, (int64_t[]){x.d[0], w.d[0], oh, ow}, x.bd), xt, wt, &c, w);
    if (one_d)
        ct = mk_reshape(ct, ir_shape(3, (int64_t[]){x.d[0], w.d[0], ow}, x.bd));
    return conv_bias(p->name, vtensor(ct), v[2], l[2], w.d[0], nd - 2, a->loc);
}

/* conv_transpose2d(x, w, [bias,] stride:, padding:, dilation:, groups:,
 * output_padding:) NCHW, as PyTorch's ConvTranspose2d: w [C_in, C_out /
 * groups, KH, KW], out [N, C_out, (H - 1) stride - 2 padding + dilation
 * (KH - 1) + output_padding + 1, ...]: the data gradient of the
 * convolution of that output by w, so the same kernels compute it
 * (grad.c's d_conv2d_bwd_data gives its gradients).  output_padding must
 * be below the stride (so that the convolution maps the output back to
 * x's size) and padding at most dilation (K - 1) (so that no output
 * position is cut off entirely). */
static Value prim_conv_transpose2d(const Prim *p, Args *a)
{
    Value v[8];
    Loc l[8];
    ConvArgs c;
    if (!prim_bind_args(a, SPEC("x", "w", "bias?", "stride?", "padding?", "dilation?", "groups?", "output_padding?"), v,
                        l) ||
        !prim_need_tensor(v[0], l[0], "x") || !prim_need_tensor(v[1], l[1], "w") || !conv_args(p->name, 0, 1, v, l, &c))
        return none();
    Shape x = shape_of(v[0].t), w = shape_of(v[1].t);
    if (x.nd != 4 || x.bd > 0 || w.nd != 4 || w.bd >= 0 || w.d[0] != x.d[1]) {
        diag_error(a->loc, "'%s' needs x [N, C, H, W] and w [C, F / groups, KH, KW], got %s and %s", p->name, sstr(x),
                   sstr(w));
        return none();
    }
    const long long G = c.groups;
    if (x.d[1] % G) {
        diag_error(a->loc, "'%s' with %lld groups needs channels that divide by %lld, got x %s", p->name, G, G,
                   sstr(x));
        return none();
    }
    for (int k = 0; k < 2; k++) {
        const long long K = w.d[2 + k], reach = c.dil[k] * (K - 1);
        if (c.op[k] >= c.st[k]) {
            diag_error(l[7], "output_padding of '%s' must be less than the stride (%lld), got %lld", p->name, c.st[k],
                       c.op[k]);
            return none();
        }
        if (c.pd[k] > reach) {
            diag_error(l[4], "padding of '%s' must be at most dilation * (kernel - 1) = %lld, got %lld", p->name, reach,
                       c.pd[k]);
            return none();
        }
    }
    const int64_t oh = (x.d[2] - 1) * c.st[0] - 2 * c.pd[0] + c.dil[0] * (w.d[2] - 1) + c.op[0] + 1,
                  ow = (x.d[3] - 1) * c.st[1] - 2 * c.pd[1] + c.dil[1] * (w.d[3] - 1) + c.op[1] + 1;
    if (oh < 1 || ow < 1) {
        diag_error(a->loc, "'%s' of %s gives an empty output (%lldx%lld): padding too large", p->name, sstr(x),
                   (long long)oh, (long long)ow);
        return none();
    }
    const int64_t F = w.d[1] * G;
    int t = conv_node(IR_CONV2D_BWD_DATA, ir_shape(4, (int64_t[]){x.d[0], F, oh, ow}, x.bd), v[0].t, v[1].t, &c, w);
    return conv_bias(p->name, vtensor(t), v[2], l[2], F, 2, a->loc);
}

/* ", dilated HxW", for a message (one at a time) */
static const char *dilated_text(const long long k[2], const long long dil[2])
{
    static char buf[64];
    snprintf(buf, sizeof buf, ", dilated %lldx%lld,", dil[0] * (k[0] - 1) + 1, dil[1] * (k[1] - 1) + 1);
    return buf;
}

/* max_pool2d(x, size, stride?, padding: 0, dilation: 1, ceil_mode: false)
 * and avg_pool2d(x, size, stride?, padding: 0, count_include_pad: true,
 * ceil_mode: false) over [N, C, H, W], as PyTorch's: size, stride, padding
 * and dilation an int or [h, w]; padding is -inf for max, zeros counted in
 * the mean unless count_include_pad is false, and at most half the
 * (dilated) window, so that every window holds an element of x.
 * ceil_mode keeps a last partial window when it starts inside x or its
 * left padding (PyTorch's pooling_output_shape).  max_pool1d and
 * avg_pool1d take ints over [N, C, L], pooled as [N, C, 1, L]. */
static Value prim_pool2d(const Prim *p, Args *a)
{
    static const char *const what[4] = {"size", "stride", "padding", "dilation"};
    Value v[6];
    Loc l[6];
    const int avg = p->op == IR_AVGPOOL, one_d = strstr(p->name, "1d") != NULL;
    long long k[2], st[2], pd[2] = {0, 0}, dil[2] = {1, 1};
    int incl = 1, ceil = 0;
    int ok = avg ? prim_bind_args(a, SPEC("x", "size", "stride?", "padding?", "count_include_pad?", "ceil_mode?"), v, l)
                 : prim_bind_args(a, SPEC("x", "size", "stride?", "padding?", "dilation?", "ceil_mode?"), v, l);
    if (!ok || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    for (int i = 1; i <= 4 && one_d; i++)
        if (v[i].k == VK_LIST) {
            diag_error(l[i], "%s of '%s' must be an int, got a list", what[i - 1], p->name);
            return none();
        }
    if (!conv_pair(p->name, v[1], l[1], "size", 1, k))
        return none();
    st[0] = k[0], st[1] = k[1];
    if (!conv_pair(p->name, v[2], l[2], "stride", 1, st) || !conv_pair(p->name, v[3], l[3], "padding", 0, pd) ||
        (!avg && !conv_pair(p->name, v[4], l[4], "dilation", 1, dil)) ||
        (avg && v[4].k != VK_ABSENT && !prim_get_bool(v[4], l[4], "count_include_pad", &incl)) ||
        (v[5].k != VK_ABSENT && !prim_get_bool(v[5], l[5], "ceil_mode", &ceil)))
        return none();
    Shape x = shape_of(v[0].t);
    if (x.nd != (one_d ? 3 : 4) || x.bd > 0) {
        diag_error(a->loc, one_d ? "'%s' needs x [N, C, L], got %s" : "'%s' needs x [N, C, H, W], got %s", p->name,
                   sstr(x));
        return none();
    }
    if (one_d) { /* as [N, C, 1, L]: nothing along the rows */
        x = ir_shape(4, (int64_t[]){x.d[0], x.d[1], 1, x.d[2]}, x.bd);
        k[0] = st[0] = dil[0] = 1, pd[0] = 0;
    }
    int64_t o[2];
    for (int i = 0; i < 2; i++) {
        const int64_t e = dil[i] * (k[i] - 1) + 1, in = x.d[2 + i]; /* the dilated window */
        if (2 * pd[i] > e) {
            diag_error(l[3], "'%s' takes padding at most half the window (%lld), got %lld", p->name, (long long)(e / 2),
                       pd[i]);
            return none();
        }
        if (in + 2 * pd[i] < e) {
            diag_error(a->loc, "'%s' window %lldx%lld%s is larger than the padded input %s", p->name, k[0], k[1],
                       dil[0] > 1 || dil[1] > 1 ? dilated_text(k, dil) : "", sstr(shape_of(v[0].t)));
            return none();
        }
        const int64_t span = in + 2 * pd[i] - e;
        o[i] = (ceil ? span + st[i] - 1 : span) / st[i] + 1;
        if (ceil && (o[i] - 1) * st[i] >= in + pd[i])
            o[i]--;
    }
    int xt = one_d ? mk_reshape(v[0].t, x) : v[0].t;
    IrNode pn = ir_node(p->op, DT_F32, ir_shape(4, (int64_t[]){x.d[0], x.d[1], o[0], o[1]}, x.bd), 1, &xt);
    pn.kh = (int)k[0], pn.kw = (int)k[1], pn.stride = (int)st[0], pn.stride_w = (int)st[1];
    pn.pad = (int)pd[0], pn.pad_w = (int)pd[1], pn.dil_h = (int)dil[0], pn.dil_w = (int)dil[1];
    pn.exclude_pad = !incl;
    int t = elab_add(pn);
    if (one_d)
        t = mk_reshape(t, ir_shape(3, (int64_t[]){x.d[0], x.d[1], o[1]}, x.bd));
    return vtensor(t);
}

/* A `mode:` argument naming one of two modes: *second 1 for the second,
 * left as it is when absent */
static int mode_arg(Value v, Loc loc, const char *prim, const char *first, const char *second, int *is_second)
{
    if (v.k == VK_ABSENT)
        return 1;
    if (v.k != VK_STR || (strcmp(v.s, first) && strcmp(v.s, second))) {
        diag_error(loc, "'%s' takes mode \"%s\" or \"%s\"", prim, first, second);
        return 0;
    }
    *is_second = !strcmp(v.s, second);
    return 1;
}

/* pad(x, [before, after, ...], mode:, value:) as torch.nn.functional.pad:
 * the pairs run from the last dim backwards; "constant" fills with value
 * (a negative amount crops, as PyTorch's), "reflect" mirrors without
 * repeating the edge and needs each amount below the dim, "replicate"
 * repeats the edge element (PyTorch's replicate, ONNX's edge).  One IR node per
 * padded side of each dim (pad, or slice for a crop). */
static Value prim_pad(const Prim *p, Args *a)
{
    (void)p;
    Value v[4];
    Loc l[4];
    if (!prim_bind_args(a, SPEC("x", "pad", "mode?", "value?"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    Shape s = shape_of(v[0].t);
    if (v[1].k != VK_LIST || v[1].n % 2 || v[1].n == 0 || v[1].n > 2 * s.nd) {
        diag_error(l[1], "'pad' needs a list of [before, after] pairs, one pair per dim from the last, for %s",
                   sstr(s));
        return none();
    }
    int reflect = 0, replicate = 0; /* (replicate is reflect's op with ival 1) */
    if (v[2].k == VK_STR && !strcmp(v[2].s, "replicate"))
        reflect = replicate = 1;
    else if (v[2].k == VK_STR && !strcmp(v[2].s, "constant"))
        reflect = 0;
    else if (v[2].k == VK_STR && !strcmp(v[2].s, "reflect"))
        reflect = 1;
    else if (v[2].k != VK_ABSENT) {
        diag_error(l[2], "'pad' takes mode \"constant\", \"reflect\" or \"replicate\"");
        return none();
    }
    double value = 0;
    if (v[3].k != VK_ABSENT && !prim_get_number(v[3], l[3], "value", &value))
        return none();
    if (reflect && v[3].k != VK_ABSENT) {
        diag_error(l[3], "'pad' takes a value only in mode \"constant\"");
        return none();
    }
    int t = v[0].t;
    for (int k = 0; k < v[1].n / 2; k++) {
        const int ax = s.nd - 1 - k;
        long long amt[2];
        if (!prim_get_int(v[1].items[2 * k], l[1], "a padding", &amt[0]) ||
            !prim_get_int(v[1].items[2 * k + 1], l[1], "a padding", &amt[1]))
            return none();
        if (!amt[0] && !amt[1])
            continue;
        Shape cur = shape_of(t);
        const int64_t dim = cur.d[ax];
        if (ax == cur.bd) {
            diag_error(l[1], "'pad' along the batch dim is not supported");
            return none();
        }
        if (replicate && (amt[0] < 0 || amt[1] < 0 || amt[0] > 1 << 30 || amt[1] > 1 << 30)) {
            diag_error(l[1], "'pad' in mode \"replicate\" needs each amount in [0, 2^30], got [%lld, %lld]", amt[0],
                       amt[1]);
            return none();
        }
        if (reflect && !replicate && (amt[0] < 0 || amt[1] < 0 || amt[0] >= dim || amt[1] >= dim)) {
            diag_error(l[1],
                       "'pad' in mode \"reflect\" needs each amount in [0, %lld) for dim %d of %s, got [%lld, %lld]",
                       (long long)dim, ax, sstr(cur), amt[0], amt[1]);
            return none();
        }
        if (!reflect &&
            (amt[0] + amt[1] <= -dim || amt[0] < -dim || amt[1] < -dim || amt[0] > 1 << 30 || amt[1] > 1 << 30)) {
            diag_error(l[1], "'pad' of [%lld, %lld] leaves nothing of dim %d of %s, or is too large", amt[0], amt[1],
                       ax, sstr(cur));
            return none();
        }
        /* crops first (constant mode), then the padding around what is left */
        int64_t lo = amt[0] < 0 ? -amt[0] : 0, hi = dim - (amt[1] < 0 ? -amt[1] : 0);
        if (lo > 0 || hi < dim) {
            cur.d[ax] = hi - lo;
            t = mk(IR_SLICE, cur, 1, &t);
            node(t)->axis = ax, node(t)->start = lo, node(t)->end = hi;
        }
        const int64_t b = amt[0] > 0 ? amt[0] : 0, f = amt[1] > 0 ? amt[1] : 0;
        if (b || f) {
            const int64_t len = cur.d[ax];
            cur.d[ax] = len + b + f;
            t = mk(reflect ? IR_PAD_REFLECT : IR_PAD, cur, 1, &t);
            node(t)->axis = ax, node(t)->start = b, node(t)->end = b + len, node(t)->fval = reflect ? 0 : value;
            node(t)->ival = replicate;
        }
    }
    return vtensor(t);
}

/* upsample(x, scale:, mode:) [N, C, H, W] -> [N, C, H scale, W scale], as
 * torch.nn.Upsample(scale_factor=scale): "nearest" or "bilinear" with
 * align_corners false; integer scales */
static Value prim_upsample(const Prim *p, Args *a)
{
    (void)p;
    Value v[3];
    Loc l[3];
    long long sc;
    if (!prim_bind_args(a, SPEC("x", "scale", "mode?"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !prim_get_int(v[1], l[1], "scale", &sc))
        return none();
    int bilinear = 0;
    if (!mode_arg(v[2], l[2], "upsample", "nearest", "bilinear", &bilinear))
        return none();
    Shape x = shape_of(v[0].t);
    if (x.nd != 4 || x.bd > 0) {
        diag_error(l[0], "'upsample' needs x [N, C, H, W], got %s", sstr(x));
        return none();
    }
    if (sc < 1 || sc > 1024) {
        diag_error(l[1], "'upsample' takes an integer scale from 1 to 1024, got %lld", sc);
        return none();
    }
    Shape s = ir_shape(4, (int64_t[]){x.d[0], x.d[1], x.d[2] * sc, x.d[3] * sc}, x.bd);
    int t = mk(IR_UPSAMPLE, s, 1, &v[0].t);
    node(t)->kh = node(t)->kw = (int)sc, node(t)->ival = bilinear;
    return vtensor(t);
}

/* A string argument naming one of `names` (NULL-terminated): its index in
 * *out, which stays as it is when the argument is absent. */
static int choice_arg(Value v, Loc loc, const char *prim, const char *what, const char *const *names, int *out)
{
    if (v.k == VK_ABSENT)
        return 1;
    for (int k = 0; v.k == VK_STR && names[k]; k++)
        if (!strcmp(v.s, names[k])) {
            *out = k;
            return 1;
        }
    char list[256] = "";
    for (int k = 0; names[k]; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", k ? (names[k + 1] ? ", " : " or ") : "",
                 names[k]);
    diag_error(loc, "'%s' takes %s %s", prim, what, list);
    return 0;
}

/* resize(x, size: | scale_factor:, mode:, coordinates:, rounding:, cubic_a:,
 * exclude_outside:) over the spatial dims of x [N, C, ...], as ONNX's
 * Resize (its attribute values by name): one IR node per resized dim
 * (the op is separable), none where the mapping is the identity. */
#define RESIZE_MAX (1 << 24)
static Value prim_resize(const Prim *p, Args *a)
{
    (void)p;
    Value v[8];
    Loc l[8];
    if (!prim_bind_args(
            a,
            SPEC("x", "size?", "scale_factor?", "mode?", "coordinates?", "rounding?", "cubic_a?", "exclude_outside?"),
            v, l) ||
        !prim_need_tensor(v[0], l[0], "x"))
        return none();
    Shape x = shape_of(v[0].t);
    const int ns = x.nd - 2;
    if (ns < 1 || x.bd > 0) {
        diag_error(l[0], "'resize' needs x [N, C, ...] with at least one dim after C (the batch first), got %s",
                   sstr(x));
        return none();
    }
    IrNode proto = {0};
    proto.ival = RESIZE_NEAREST, proto.ival2 = RESIZE_HALF_PIXEL, proto.stride = RESIZE_ROUND_PREFER_FLOOR;
    proto.fval = -0.75;
    if (!choice_arg(v[3], l[3], "resize", "mode", ir_resize_modes, &proto.ival)) {
        if (v[3].k == VK_STR && (!strcmp(v[3].s, "bilinear") || !strcmp(v[3].s, "trilinear")))
            diag_note(l[3], "PyTorch's \"%s\" is \"linear\" here: the rank of x says how many dims", v[3].s);
        if (v[3].k == VK_STR && !strcmp(v[3].s, "bicubic"))
            diag_note(l[3], "PyTorch's \"bicubic\" is \"cubic\" here: the rank of x says how many dims");
        return none();
    }
    if (!choice_arg(v[4], l[4], "resize", "coordinates", ir_resize_coords, &proto.ival2) ||
        !choice_arg(v[5], l[5], "resize", "rounding", ir_resize_roundings, &proto.stride))
        return none();
    if (v[5].k != VK_ABSENT && proto.ival != RESIZE_NEAREST) {
        diag_error(l[5], "'resize' takes a rounding only in mode \"nearest\"");
        return none();
    }
    for (int k = 6; k < 8; k++)
        if (v[k].k != VK_ABSENT && proto.ival != RESIZE_CUBIC) {
            diag_error(l[k], "'resize' takes %s only in mode \"cubic\"", k == 6 ? "cubic_a" : "exclude_outside");
            return none();
        }
    if ((v[6].k != VK_ABSENT && !prim_get_number(v[6], l[6], "cubic_a", &proto.fval)) ||
        (v[7].k != VK_ABSENT && !prim_get_bool(v[7], l[7], "exclude_outside", &proto.exclude_pad)))
        return none();
    if ((v[1].k == VK_ABSENT) == (v[2].k == VK_ABSENT)) {
        diag_error(a->loc, "'resize' takes either size or scale_factor");
        return none();
    }
    int64_t out[IR_MAXD];
    double scale[IR_MAXD] = {0};
    const int by_size = v[1].k != VK_ABSENT;
    const Value lv = v[by_size ? 1 : 2];
    const Loc ll = l[by_size ? 1 : 2];
    if ((lv.k == VK_LIST ? lv.n != ns : by_size)) {
        diag_error(ll, "'resize' needs %s%s, one per dim after C of %s", by_size ? "a list of " : "a number or ",
                   by_size ? "sizes" : "a list of scales", sstr(x));
        return none();
    }
    for (int k = 0; k < ns; k++) {
        const int64_t in = x.d[2 + k];
        const Value e = lv.k == VK_LIST ? lv.items[k] : lv;
        if (by_size) {
            long long sz;
            if (!prim_get_int(e, ll, "a size", &sz))
                return none();
            out[k] = sz;
        } else {
            if (!prim_get_number(e, ll, "a scale", &scale[k]))
                return none();
            if (!(scale[k] > 0) || scale[k] > RESIZE_MAX) {
                diag_error(ll, "'resize' needs scales above 0, got %g", scale[k]);
                return none();
            }
            out[k] = (int64_t)floor((double)in * scale[k]);
        }
        if (out[k] < 1 || out[k] > RESIZE_MAX) {
            diag_error(ll, "'resize' makes dim %d of %s %lld long; it must be from 1 to %d", 2 + k, sstr(x),
                       (long long)out[k], RESIZE_MAX);
            return none();
        }
    }
    int t = v[0].t;
    for (int k = ns - 1; k >= 0; k--) { /* the last dim first, as ONNX's reference nests them */
        const int ax = 2 + k;
        Shape s = shape_of(t);
        proto.fval2 = scale[k], proto.axis = ax;
        int identity = out[k] == s.d[ax];
        if (identity) {
            int64_t *idx = elab_calloc(4 * (size_t)out[k], sizeof *idx);
            double *w = elab_calloc(4 * (size_t)out[k], sizeof *w);
            const int taps = ir_resize_taps(&proto, s.d[ax], out[k], idx, w);
            for (int64_t i = 0; identity && i < out[k]; i++)
                for (int j = 0; j < taps; j++)
                    identity &= idx[i * taps + j] == i ? w[i * taps + j] == 1 : w[i * taps + j] == 0;
            free(idx);
            free(w);
        }
        if (identity)
            continue;
        s.d[ax] = out[k];
        t = mk(IR_RESIZE, s, 1, &t);
        IrNode *n = node(t);
        n->axis = ax, n->ival = proto.ival, n->ival2 = proto.ival2, n->stride = proto.stride;
        n->fval = proto.fval, n->fval2 = proto.fval2, n->exclude_pad = proto.exclude_pad;
    }
    return vtensor(t);
}

/* size(x, axis): a dim as an int (the batch dim: a run-time int) */
static Value prim_size(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    int axis;
    if (!tensor_and_axis(a, v, l, &axis))
        return none();
    Shape s = shape_of(v[0].t);
    Value r = vint(s.d[axis]);
    r.batch = axis == s.bd;
    return r;
}

static Value prim_reshape_as(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("x", "like"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    if (v[1].k != VK_TENSOR) {
        diag_error(l[1], "'reshape_as' takes the shape of a tensor, got %s", elab_vk_name(v[1].k));
        return none();
    }
    Shape s = shape_of(v[0].t), to = shape_of(v[1].t);
    if (ir_numel(s) != ir_numel(to) || (s.bd >= 0) != (to.bd >= 0)) {
        diag_error(a->loc, "cannot reshape %s into %s", sstr(s), sstr(to));
        return none();
    }
    return vtensor(mk_reshape(v[0].t, to));
}

static Value prim_embedding(const Prim *p, Args *a)
{
    (void)p;
    Value v[2];
    Loc l[2];
    if (!prim_bind_args(a, SPEC("ids", "table"), v, l))
        return none();
    if (v[0].k != VK_TENSOR || node(v[0].t)->dt != DT_I32) {
        diag_error(l[0], "the ids of 'embedding' must be an i32 tensor");
        return none();
    }
    if (!prim_need_tensor(v[1], l[1], "the table of 'embedding'"))
        return none();
    Shape ids = shape_of(v[0].t), tab = shape_of(v[1].t);
    if (tab.nd != 2 || tab.bd >= 0 || ids.nd + 1 > IR_MAXD) {
        diag_error(l[1], "the table of 'embedding' must be a [vocab, dim] tensor, got %s", sstr(tab));
        return none();
    }
    Shape s = ids;
    s.d[s.nd++] = tab.d[1];
    note_id_limit(v[0].t, tab.d[0], 0);
    int in[2] = {v[0].t, v[1].t};
    return vtensor(mk(IR_EMBEDDING, s, 2, in));
}

/* gather_elements(x, index, axis): torch.gather(x, axis, index), ONNX's
 * GatherElements: index (i32) has x's rank, and at each of its positions
 * the result is x's element there with the axis coordinate replaced by
 * the index.  Outside the axis the index's dims are at most x's (the
 * batch dim where x has it); an index outside [0, size) gives NaN. */
static Value prim_gather_elements(const Prim *p, Args *a)
{
    (void)p;
    Value v[3];
    Loc l[3];
    long long ax;
    int axis;
    if (!prim_bind_args(a, SPEC("x", "index", "axis"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    if (v[1].k != VK_TENSOR || node(v[1].t)->dt != DT_I32) {
        diag_error(l[1], "the index of 'gather_elements' must be an i32 tensor, got %s",
                   v[1].k == VK_TENSOR ? "an f32 one" : elab_vk_name(v[1].k));
        return none();
    }
    Shape sx = shape_of(v[0].t), si = shape_of(v[1].t);
    if (!prim_get_int(v[2], l[2], "axis", &ax) || !norm_axis(ax, sx.nd, l[2], &axis))
        return none();
    int ok = si.nd == sx.nd;
    for (int d = 0; ok && d < sx.nd; d++)
        if (d != axis)
            ok = (d == sx.bd) == (d == si.bd) && si.d[d] <= sx.d[d];
    if (!ok) {
        diag_error(a->loc,
                   "'gather_elements' needs an index of x's rank whose dims outside axis %d are at most x's (the "
                   "batch dim where x has it): x %s, index %s",
                   axis, sstr(sx), sstr(si));
        return none();
    }
    if (axis != sx.bd)
        note_id_limit(v[1].t, sx.d[axis], 0);
    int in[2] = {v[0].t, v[1].t};
    int t = mk(IR_GATHER_ELEMENTS, si, 2, in);
    node(t)->axis = axis;
    return vtensor(t);
}

static Value prim_layer_norm(const Prim *p, Args *a)
{
    (void)p;
    Value v[4];
    Loc l[4];
    double eps = 1e-5;
    if (!prim_bind_args(a, SPEC("x", "weight", "bias", "eps?"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !prim_need_tensor(v[1], l[1], "weight") || !prim_need_tensor(v[2], l[2], "bias"))
        return none();
    if (v[3].k != VK_ABSENT && !prim_get_number(v[3], l[3], "eps", &eps))
        return none();
    Shape s = shape_of(v[0].t);
    Shape want = ir_shape(1, (int64_t[]){s.nd ? s.d[s.nd - 1] : 0}, -1);
    if (s.nd < 1 || s.bd == s.nd - 1 || !ir_shape_eq(shape_of(v[1].t), want) || !ir_shape_eq(shape_of(v[2].t), want)) {
        diag_error(a->loc, "'layer_norm' normalizes the last dim: x %s needs weight and bias %s, got %s and %s",
                   sstr(s), sstr(want), sstr(shape_of(v[1].t)), sstr(shape_of(v[2].t)));
        return none();
    }
    int in[3] = {v[0].t, v[1].t, v[2].t};
    int t = mk(IR_LAYER_NORM, s, 3, in);
    node(t)->fval = eps;
    return vtensor(t);
}

static Value prim_causal_mask(const Prim *p, Args *a)
{
    (void)p;
    Value v[1];
    Loc l[1];
    if (!prim_bind_args(a, SPEC("s"), v, l) || !prim_need_tensor(v[0], l[0], "s"))
        return none();
    Shape s = shape_of(v[0].t);
    if (s.nd < 2 || s.d[s.nd - 1] != s.d[s.nd - 2] || s.bd >= s.nd - 2) {
        diag_error(l[0], "'causal_mask' needs a tensor whose last two dims are square, got %s", sstr(s));
        return none();
    }
    return vtensor(mk1(IR_CAUSAL_MASK, v[0].t));
}

/* linear(x, weight, bias): x @ weightᵀ + bias, bias a tensor or
 * false; the standard library's Dense is written with it. */
static Value prim_linear(const Prim *p, Args *a)
{
    (void)p;
    Value v[3];
    Loc l[3];
    if (!prim_bind_args(a, SPEC("x", "weight", "bias?"), v, l))
        return none();
    Value wt = none();
    if (!prim_need_tensor(v[1], l[1], "weight"))
        return none();
    int perm[IR_MAXD] = {1, 0};
    if (shape_of(v[1].t).nd != 2) {
        diag_error(l[1], "the weight of 'linear' must be 2-D, got %s", sstr(shape_of(v[1].t)));
        return none();
    }
    wt = vtensor(mk_permute(v[1].t, perm));
    Value y = prim_matmul(v[0], wt, a->loc);
    if (v[2].k == VK_ABSENT || (v[2].k == VK_BOOL && !v[2].i) || y.k == VK_NONE)
        return y;
    return prim_binary(IR_ADD, y, v[2], a->loc);
}

/* batch_stats(x) and batch_norm(x, stats, weight, bias, eps:), our
 * extension for the std BatchNorm: x is [N, C, ...] with the batch (if
 * any) in dim 0; the statistics run over every dim but 1.  batch_stats
 * gives [2, C] (the mean, then the biased variance), computed channel by
 * channel in one node instead of two reductions and their elementwise
 * passes; batch_norm normalizes x with them.  Its stats must be
 * batch_stats of the same x: its gradient is then the fused BatchNorm
 * backward (two passes over dy and x per channel), which includes the
 * path through the statistics. */
static int bn_shape_ok(Shape s) { return s.nd >= 2 && s.bd <= 0 && s.nd <= IR_MAXD; }

static Value prim_batch_stats(const Prim *p, Args *a)
{
    (void)p;
    Value v[1];
    Loc l[1];
    if (!prim_bind_args(a, SPEC("x"), v, l) || !prim_need_tensor(v[0], l[0], "x"))
        return none();
    Shape s = shape_of(v[0].t);
    if (!bn_shape_ok(s)) {
        diag_error(l[0], "'batch_stats' needs x [N, C, ...] with the batch in dim 0, got %s", sstr(s));
        return none();
    }
    return vtensor(mk(IR_BN_STATS, ir_shape(2, (int64_t[]){2, s.d[1]}, -1), 1, &v[0].t));
}

static Value prim_batch_norm(const Prim *p, Args *a)
{
    (void)p;
    Value v[5];
    Loc l[5];
    double eps = 1e-5;
    if (!prim_bind_args(a, SPEC("x", "stats", "weight", "bias", "eps?"), v, l) || !prim_need_tensor(v[0], l[0], "x") ||
        !prim_need_tensor(v[1], l[1], "stats") || !prim_need_tensor(v[2], l[2], "weight") ||
        !prim_need_tensor(v[3], l[3], "bias"))
        return none();
    if (v[4].k != VK_ABSENT && !prim_get_number(v[4], l[4], "eps", &eps))
        return none();
    if (eps <= 0) {
        diag_error(l[4], "'batch_norm' needs eps > 0, got %g", eps);
        return none();
    }
    Shape s = shape_of(v[0].t);
    if (!bn_shape_ok(s)) {
        diag_error(l[0], "'batch_norm' needs x [N, C, ...] with the batch in dim 0, got %s", sstr(s));
        return none();
    }
    const IrNode *st = node(v[1].t);
    if (st->op != IR_BN_STATS || st->in[0] != v[0].t) {
        diag_error(l[1], "the stats of 'batch_norm' must be batch_stats(x) of the same x");
        return none();
    }
    Shape want = ir_shape(1, (int64_t[]){s.d[1]}, -1);
    if (!ir_shape_eq(shape_of(v[2].t), want) || !ir_shape_eq(shape_of(v[3].t), want)) {
        diag_error(a->loc, "'batch_norm' of x %s needs weight and bias %s, got %s and %s", sstr(s), sstr(want),
                   sstr(shape_of(v[2].t)), sstr(shape_of(v[3].t)));
        return none();
    }
    int in[4] = {v[0].t, v[1].t, v[2].t, v[3].t};
    int t = mk(IR_BN_NORM, s, 4, in);
    node(t)->fval = eps;
    return vtensor(t);
}

/* ===================================================================== */
/* the table                                                              */
/* ===================================================================== */

/* The unary elementwise primitives come first: they, and softplus, elu
 * and celu with their defaults, are also values of type fn
 * (prim_is_unary).  The order is that of the suggestions for a misspelt
 * name, where the first of equally close names wins. */
static const Prim prims[] = {
    {"relu", prim_unary, IR_RELU},
    {"sigmoid", prim_unary, IR_SIGMOID},
    {"tanh", prim_unary, IR_TANH},
    {"gelu", prim_unary, IR_GELU},
    {"gelu_tanh", prim_unary, IR_GELU_TANH},
    {"silu", prim_unary, IR_SILU},
    {"exp", prim_unary, IR_EXP},
    {"log", prim_unary, IR_LOG},
    {"sqrt", prim_unary, IR_SQRT},
    {"rsqrt", prim_unary, IR_RSQRT},
    {"abs", prim_unary, IR_ABS},
    {"square", prim_unary, IR_SQUARE},
    {"identity", prim_unary, IR_NUM_OPS}, /* no node: x itself */
    {"erf", prim_unary, IR_ERF},
    {"hard_swish", prim_unary, IR_HARD_SWISH},
    {"reciprocal", prim_unary, IR_RECIPROCAL},
    {"sign", prim_unary, IR_SIGN},
    {"neg", prim_unary, IR_NEG},
    {"sin", prim_unary, IR_SIN},
    {"cos", prim_unary, IR_COS},
    {"tan", prim_unary, IR_TAN},
    {"asin", prim_unary, IR_ASIN},
    {"acos", prim_unary, IR_ACOS},
    {"atan", prim_unary, IR_ATAN},
    {"sinh", prim_unary, IR_SINH},
    {"cosh", prim_unary, IR_COSH},
    {"asinh", prim_unary, IR_ASINH},
    {"acosh", prim_unary, IR_ACOSH},
    {"atanh", prim_unary, IR_ATANH},
    {"floor", prim_unary, IR_FLOOR},
    {"ceil", prim_unary, IR_CEIL},
    {"round", prim_unary, IR_ROUND},
    {"softsign", prim_unary, IR_SOFTSIGN},
    {"selu", prim_unary, IR_SELU},
    {"mish", prim_unary, IR_MISH},
    {"softplus", prim_act, IR_SOFTPLUS},
    {"elu", prim_act, IR_ELU},
    {"celu", prim_act, IR_ELU},
    {"leaky_relu", prim_leaky_relu, 0},
    {"hard_sigmoid", prim_hard_sigmoid, 0},
    {"clip", prim_clip, 0},
    {"pow", prim_pow, 0},
    {"maximum", prim_maximum, IR_MAXIMUM},
    {"minimum", prim_maximum, IR_MINIMUM},
    {"equal", prim_maximum, IR_EQMASK},
    {"less", prim_maximum, IR_LESS},
    {"greater", prim_maximum, IR_GREATER},
    {"where", prim_where, 0},
    {"expand", prim_expand, 0},
    {"tril", prim_tri, IR_TRIL},
    {"triu", prim_tri, IR_TRIU},
    {"cumsum", prim_cumsum, 0},
    {"gather_elements", prim_gather_elements, 0},
    {"float", prim_float, 0},
    {"int", prim_int, 0},
    {"transpose", prim_transpose, 0},
    {"permute", prim_permute, 0},
    {"sum", prim_reduce, IR_SUM},
    {"mean", prim_reduce, IR_MEAN},
    {"max", prim_max, 0},
    {"reshape", prim_reshape, 0},
    {"flatten", prim_flatten, 0},
    {"concat", prim_concat, 0},
    {"slice", prim_slice, 0},
    {"softmax", prim_softmax, IR_SOFTMAX},
    {"log_softmax", prim_softmax, IR_LOG_SOFTMAX},
    {"dropout", prim_dropout, 0},
    {"cross_entropy", prim_class_loss, IR_CROSS_ENTROPY},
    {"mse", prim_pair_loss, IR_MSE},
    {"bce_with_logits", prim_pair_loss, IR_BCE_LOGITS},
    {"argmax", prim_argmax, IR_ARGMAX},
    {"argmin", prim_argmax, IR_ARGMIN},
    {"accuracy", prim_class_loss, IR_ACCURACY},
    {"linear", prim_linear, 0},
    {"len", prim_len, 0},
    {"min", prim_max, 0},
    {"size", prim_size, 0},
    {"reshape_as", prim_reshape_as, 0},
    {"conv2d", prim_conv2d, 0},
    {"conv1d", prim_conv2d, 0},
    {"conv_transpose2d", prim_conv_transpose2d, 0},
    {"pad", prim_pad, 0},
    {"upsample", prim_upsample, 0},
    {"resize", prim_resize, 0},
    {"max_pool2d", prim_pool2d, IR_MAXPOOL},
    {"avg_pool2d", prim_pool2d, IR_AVGPOOL},
    {"max_pool1d", prim_pool2d, IR_MAXPOOL},
    {"avg_pool1d", prim_pool2d, IR_AVGPOOL},
    {"embedding", prim_embedding, 0},
    {"layer_norm", prim_layer_norm, 0},
    {"causal_mask", prim_causal_mask, 0},
    {"batch_stats", prim_batch_stats, 0},
    {"batch_norm", prim_batch_norm, 0},
};

enum { NPRIMS = sizeof prims / sizeof prims[0] };

const Prim *prim_find(const char *name)
{
    for (int i = 0; i < NPRIMS; i++)
        if (!strcmp(prims[i].name, name))
            return &prims[i];
    return NULL;
}

int prim_is_unary(const Prim *p) { return p->call == prim_unary || p->call == prim_act; }

int prim_names(const char **cands, int n, int cap)
{
    for (int i = 0; i < NPRIMS && n < cap; i++)
        cands[n++] = prims[i].name;
    return n;
}

Value prim_call(const Prim *p, Args *a)
{
    a->callee = p->name;
    for (int i = 0; i < a->n; i++)
        if (a->vals[i].k == VK_NONE)
            return none();
    return p->call(p, a);
}
