/* onnx_fold.c — the shapes and constants of an ONNX graph (fold_*): the
 * second stage of `nnc import`.
 *
 * Every value gets a shape whose axes are sizes or multiples of the batch
 * size N (the first axis of an input that the file leaves symbolic).  A
 * node whose inputs are all known is evaluated here when its op is one
 * of the exporter's shape and constant ops: PyTorch writes `x.view(B, T,
 * h, d)` as Shape, Gather, Unsqueeze and Concat nodes feeding a Reshape,
 * and all of them vanish at import, leaving reshape(x, [N, 8, 4, 8]).
 * Integer elements may themselves be multiples of N (a Shape's first
 * element), which is what lets that arithmetic fold with a symbolic
 * batch.
 *
 * The rules are ONNX's (onnx.ai/onnx/operators), at the opsets the import
 * reads (13 to 17): where an op's inputs changed between those opsets (the
 * axes of Squeeze, Unsqueeze, ReduceSum; Split's sizes) both forms are
 * read.  A shape that does not agree with the op, or that depends on
 * anything but N, is the contract's one-line error (exit 2); attributes
 * the mapping does not cover are "unsupported" (exit 1).
 */
#include "onnx_import.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

enum { FOLD_MAX = 1 << 24 }; /* elements of a constant folded here */

struct FoldMap {
    size_t cap;
    int *slot; /* value index + 1, 0 when empty */
};

typedef struct Ctx {
    Fold *f;
    const OnnxModel *m;
    const OnnxNode *n; /* the node being folded, for messages */
    FoldStatus status;
} Ctx;

/* ---- messages ------------------------------------------------------------ */

void fold_report(const OnnxModel *m, const OnnxNode *n, FoldStatus st, const char *msg)
{
    char where[400], path[1400];
    onnx_path_str(m->path, path, sizeof path); /* as the reader's messages name it */
    if (n && st == FOLD_UNSUPPORTED)
        diag_error((Loc){0}, "%s: unsupported %s at %s", path, msg, onnx_node_label(n, where, sizeof where));
    else if (n)
        diag_error((Loc){0}, "%s: %s: %s", path, onnx_node_label(n, where, sizeof where), msg);
    else
        diag_error((Loc){0}, "%s: %s", path, msg);
}

static int fail(Ctx *c, FoldStatus st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fold_report(c->m, c->n, st, msg);
    c->status = st;
    return -1;
}

const char *fold_dim_str(FDim d, char *buf, size_t cap)
{
    if (!d.b)
        snprintf(buf, cap, "%lld", (long long)d.c);
    else if (d.c == 1)
        snprintf(buf, cap, "N");
    else
        snprintf(buf, cap, "%lld * N", (long long)d.c);
    return buf;
}

const char *fold_shape_str(const FoldVal *v, char *buf, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "[");
    for (int d = 0; d < v->rank && k < cap; d++) {
        char t[48];
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", d ? ", " : "", fold_dim_str(v->dims[d], t, sizeof t));
    }
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
    return buf;
}

static const char *type_str(int t) { return onnx_type_name(t) ? onnx_type_name(t) : "?"; }

/* ---- attributes ---------------------------------------------------------- */

const OnnxAttr *fold_attr(const OnnxNode *n, const char *name)
{
    for (int k = 0; k < n->nattrs; k++)
        if (!strcmp(n->attrs[k].name, name))
            return &n->attrs[k];
    return NULL;
}

int64_t fold_attr_int(const OnnxNode *n, const char *name, int64_t def)
{
    const OnnxAttr *a = fold_attr(n, name);
    return a && a->kind == ONNX_ATTR_INT ? a->i : def;
}

float fold_attr_float(const OnnxNode *n, const char *name, float def)
{
    const OnnxAttr *a = fold_attr(n, name);
    return a && a->kind == ONNX_ATTR_FLOAT ? a->f : def;
}

const char *fold_attr_str(const OnnxNode *n, const char *name, const char *def)
{
    const OnnxAttr *a = fold_attr(n, name);
    return a && a->kind == ONNX_ATTR_STRING ? a->s : def;
}

/* ---- values -------------------------------------------------------------- */

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

FoldVal *fold_val(const Fold *f, const char *name)
{
    if (!name || !name[0])
        return NULL;
    for (size_t k = hash(name) & (f->map->cap - 1);; k = (k + 1) & (f->map->cap - 1)) {
        int s = f->map->slot[k];
        if (!s)
            return NULL;
        if (!strcmp(f->vals[s - 1].name, name))
            return &f->vals[s - 1];
    }
}

static FoldVal *add_val(Fold *f, const char *name)
{
    FoldVal *v = &f->vals[f->nvals];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->init = v->node = -1;
    v->input = -1;
    for (size_t k = hash(name) & (f->map->cap - 1);; k = (k + 1) & (f->map->cap - 1))
        if (!f->map->slot[k]) {
            f->map->slot[k] = ++f->nvals;
            break;
        }
    return v;
}

/* The elements of a value per example (the batch's factors left out):
 * -1 when an axis is negative or the product overflows. */
static int64_t count_of(const FoldVal *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d].c < 0 || __builtin_mul_overflow(n, v->dims[d].c, &n))
            return -1;
    return n;
}

static int is_float_type(int t) { return onnx_type_is_float(t); }

/* A constant's element k as a double (an integer's must not depend on N). */
static int elem_f(Ctx *c, const FoldVal *v, int64_t k, double *out)
{
    if (v->f) {
        *out = v->f[k];
        return 0;
    }
    if (v->i) {
        if (v->i[k].b)
            return fail(c, FOLD_MALFORMED, "the batch size is used as a number");
        *out = (double)v->i[k].c;
        return 0;
    }
    if (v->kind == FV_PARAM && v->init >= 0 && c->m->inits[v->init].f) {
        *out = c->m->inits[v->init].f[k];
        return 0;
    }
    return fail(c, FOLD_UNSUPPORTED, "input '%s' that is not a constant", v->name);
}

/* A float as an integer (ONNX leaves a value out of the integer's range
 * undefined; C too). */
static int to_int(Ctx *c, double v, int64_t *out)
{
    if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0))
        return fail(c, FOLD_UNSUPPORTED, "value %g as a 64-bit integer", v);
    *out = (int64_t)v;
    return 0;
}

/* A constant integer list (axes, pads, a shape) of at most `max` elements. */
static int int_list(Ctx *c, const FoldVal *v, FDim *out, int max, int *n)
{
    if (!v)
        return fail(c, FOLD_MALFORMED, "an integer list input is missing");
    /* a shape, axes, pads or bounds computed at run time make the shape
     * of the result depend on more than the batch size */
    if (v->kind == FV_NODE || v->kind == FV_INPUT)
        return fail(c, FOLD_MALFORMED, "a shape that is dynamic beyond the batch: '%s' is known only at run time",
                    v->name);
    if (!v->i)
        return fail(c, FOLD_MALFORMED, "'%s' is %s, not an integer list", v->name, type_str(v->type));
    if (v->count > max)
        return fail(c, FOLD_MALFORMED, "'%s' has %lld elements (at most %d)", v->name, (long long)v->count, max);
    for (int64_t k = 0; k < v->count; k++)
        out[k] = v->i[k];
    *n = (int)v->count;
    return 0;
}

static int plain_list(Ctx *c, const FoldVal *v, int64_t *out, int max, int *n)
{
    FDim d[ONNX_MAX_RANK * 2 + 2];
    if (int_list(c, v, d, max, n))
        return -1;
    for (int k = 0; k < *n; k++) {
        if (d[k].b)
            return fail(c, FOLD_MALFORMED, "'%s' depends on the batch size", v->name);
        out[k] = d[k].c;
    }
    return 0;
}

/* Integer list from an attribute (ints) or, at the opsets that moved it,
 * an input. */
static int axes_of(Ctx *c, const OnnxNode *n, FoldVal *in, int64_t *axes, int *naxes)
{
    const OnnxAttr *a = fold_attr(n, "axes");
    if (a && a->kind == ONNX_ATTR_INTS) {
        if (a->n > ONNX_MAX_RANK)
            return fail(c, FOLD_MALFORMED, "%d axes", a->n);
        for (int k = 0; k < a->n; k++)
            axes[k] = a->ints[k];
        *naxes = a->n;
        return 0;
    }
    if (in)
        return plain_list(c, in, axes, ONNX_MAX_RANK, naxes);
    *naxes = -1; /* none given */
    return 0;
}

static int norm_axis(Ctx *c, int64_t axis, int rank, int *out)
{
    *out = 0;
    if (axis < -rank || axis >= rank)
        return fail(c, FOLD_MALFORMED, "axis %lld is out of range for rank %d", (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 0;
}

/* ---- symbolic arithmetic ------------------------------------------------- */

static int dim_eq(FDim a, FDim b) { return a.c == b.c && a.b == b.b; }

static int dyn(Ctx *c) { return fail(c, FOLD_MALFORMED, "a shape that is dynamic beyond the batch"); }

static int overflow(Ctx *c) { return fail(c, FOLD_MALFORMED, "an integer overflows 64 bits"); }

static int sym_arith(Ctx *c, const char *op, FDim a, FDim b, FDim *out)
{
    if (!strcmp(op, "Add") || !strcmp(op, "Sub")) {
        int64_t r;
        if (!strcmp(op, "Add") ? __builtin_add_overflow(a.c, b.c, &r) : __builtin_sub_overflow(a.c, b.c, &r))
            return overflow(c);
        if (a.b == b.b)
            *out = (FDim){r, r ? a.b : 0};
        else if (!a.c || !b.c)
            *out = a.c ? (FDim){a.c, a.b} : (FDim){r, b.b}; /* 0 + b, 0 - b */
        else
            return dyn(c);
    } else if (!strcmp(op, "Mul")) {
        int64_t r;
        if (__builtin_mul_overflow(a.c, b.c, &r))
            return overflow(c);
        if (a.b + b.b > 1)
            return dyn(c);
        *out = (FDim){r, r ? a.b + b.b : 0};
    } else if (!strcmp(op, "Div")) {
        if (!b.c)
            return fail(c, FOLD_MALFORMED, "an integer division by zero");
        if (a.c == INT64_MIN && b.c == -1)
            return overflow(c);
        if (a.b == b.b)
            *out = (FDim){a.c / b.c, 0};
        else if (a.b && a.c % b.c == 0)
            *out = (FDim){a.c / b.c, 1};
        else
            return dyn(c);
    } else if (!strcmp(op, "Max") || !strcmp(op, "Min")) {
        if (a.b != b.b)
            return dyn(c);
        *out = (!strcmp(op, "Max")) == (a.c > b.c) ? a : b;
    } else {
        return fail(c, FOLD_UNSUPPORTED, "integer op %s on the batch size", op);
    }
    return 0;
}

/* a < b, a == b for integers that may be multiples of N >= 1 */
static int sym_cmp(Ctx *c, FDim a, FDim b, int *lt, int *eq)
{
    *lt = *eq = 0;
    if (a.b == b.b) {
        *lt = a.c < b.c, *eq = a.c == b.c;
        return 0;
    }
    /* c1 N against c2 with c1 > 0: N >= 1 decides only when c2 < c1 */
    FDim s = a.b ? a : b, k = a.b ? b : a;
    if (s.c > 0 && k.c < s.c) {
        *eq = 0;
        *lt = !a.b; /* the constant is the smaller */
        return 0;
    }
    return dyn(c);
}

/* ---- broadcasting -------------------------------------------------------- */

static int broadcast(Ctx *c, FoldVal **in, int nin, FoldVal *out)
{
    int rank = 0;
    for (int k = 0; k < nin; k++)
        if (in[k]->rank > rank)
            rank = in[k]->rank;
    out->rank = rank;
    for (int d = 0; d < rank; d++) {
        FDim r = {1, 0};
        for (int k = 0; k < nin; k++) {
            int o = d - (rank - in[k]->rank);
            if (o < 0)
                continue;
            FDim x = in[k]->dims[o];
            if (x.c == 1 && !x.b)
                continue;
            if (r.c == 1 && !r.b)
                r = x;
            else if (!dim_eq(r, x)) {
                char s1[200], s2[200];
                return fail(c, FOLD_MALFORMED, "shapes %s and %s do not broadcast",
                            fold_shape_str(in[0], s1, sizeof s1), fold_shape_str(in[k], s2, sizeof s2));
            }
        }
        out->dims[d] = r;
    }
    return 0;
}

/* The flat index into `v` of output element k of shape `o` (broadcast). */
static int64_t bindex(const FoldVal *v, const FoldVal *o, int64_t k)
{
    int64_t idx = 0, stride = 1;
    for (int d = o->rank - 1; d >= 0; d--) {
        int64_t q = k % o->dims[d].c;
        k /= o->dims[d].c;
        int vd = d - (o->rank - v->rank);
        if (vd < 0)
            continue;
        if (v->dims[vd].c != 1)
            idx += q * stride;
        stride *= v->dims[vd].c;
    }
    return idx;
}

/* ---- constants ----------------------------------------------------------- */

static int alloc_const(Ctx *c, FoldVal *v, int isfloat)
{
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d].b)
            return fail(c, FOLD_UNSUPPORTED, "constant whose shape depends on the batch size");
    int64_t n = count_of(v);
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d].c < 0)
            return fail(c, FOLD_MALFORMED, "a constant with a negative axis, %lld", (long long)v->dims[d].c);
    if (n < 0 || n > FOLD_MAX)
        return fail(c, FOLD_MALFORMED, "a constant of more than %d elements", FOLD_MAX);
    v->kind = FV_CONST;
    v->count = n;
    if (isfloat)
        v->f = calloc((size_t)(n ? n : 1), sizeof(double));
    else
        v->i = calloc((size_t)(n ? n : 1), sizeof(FDim));
    if (!v->f && !v->i)
        abort();
    return 0;
}

/* o (shape set) as a constant of x's element type. */
static int alloc_like(Ctx *c, FoldVal *o, const FoldVal *x)
{
    o->type = x->type;
    return alloc_const(c, o, x->f != NULL);
}

static int from_tensor(Ctx *c, FoldVal *v, const OnnxTensor *t)
{
    if (!t->supported)
        return fail(c, FOLD_UNSUPPORTED, "constant of type %s",
                    onnx_type_name(t->type) ? onnx_type_name(t->type) : "unknown");
    v->type = is_float_type(t->type) ? ONNX_FLOAT : t->type;
    v->rank = t->rank;
    for (int d = 0; d < t->rank; d++)
        v->dims[d] = (FDim){t->dims[d], 0};
    if (alloc_const(c, v, is_float_type(t->type)))
        return -1;
    for (int64_t k = 0; k < v->count; k++) {
        if (v->f)
            v->f[k] = t->f[k];
        else
            v->i[k] = (FDim){t->i[k], 0};
    }
    return 0;
}

/* Is the op one fold_const evaluates when its inputs are all known? */
static const char *const foldable[] = {
    "Constant",   "Identity",
    "Cast",       "Shape",
    "Size",       "Gather",
    "Concat",     "Unsqueeze",
    "Squeeze",    "Reshape",
    "Flatten",    "Range",
    "Add",        "Sub",
    "Mul",        "Div",
    "Equal",      "Less",
    "Greater",    "Where",
    "Not",        "And",
    "Or",         "Neg",
    "Sqrt",       "Exp",
    "Log",        "Pow",
    "Max",        "Min",
    "Abs",        "Floor",
    "Ceil",       "Slice",
    "Transpose",  "Expand",
    "Trilu",      "ConstantOfShape",
    "Reciprocal", "CastLike",
    NULL,
};

static int is_foldable(const char *op)
{
    for (int k = 0; foldable[k]; k++)
        if (!strcmp(foldable[k], op))
            return 1;
    return 0;
}

static int elementwise_fold(Ctx *c, const char *op, FoldVal **in, int nin, FoldVal *o)
{
    if (broadcast(c, in, nin, o))
        return -1;
    int anyfloat = 0;
    for (int k = 0; k < nin; k++)
        anyfloat |= in[k]->f != NULL;
    int cmp = !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater");
    int logic = !strcmp(op, "Not") || !strcmp(op, "And") || !strcmp(op, "Or");
    int where = !strcmp(op, "Where");
    if (where)
        anyfloat = in[1]->f != NULL;
    o->type = cmp || logic ? ONNX_BOOL : where ? in[1]->type : in[0]->type;
    if (alloc_const(c, o, !cmp && !logic && anyfloat))
        return -1;
    for (int64_t k = 0; k < o->count; k++) {
        if (where) {
            FDim cond = in[0]->i ? in[0]->i[bindex(in[0], o, k)] : (FDim){0, 0};
            if (in[0]->f)
                cond.c = in[0]->f[bindex(in[0], o, k)] != 0;
            FoldVal *src = cond.c ? in[1] : in[2];
            int64_t j = bindex(src, o, k);
            if (o->f) {
                if (elem_f(c, src, j, &o->f[k]))
                    return -1;
            } else {
                o->i[k] = src->i[j];
            }
            continue;
        }
        if (o->f) { /* float arithmetic */
            double a, b = 0;
            if (elem_f(c, in[0], bindex(in[0], o, k), &a) || (nin > 1 && elem_f(c, in[1], bindex(in[1], o, k), &b)))
                return -1;
            double r;
            if (!strcmp(op, "Add"))
                r = a + b;
            else if (!strcmp(op, "Sub"))
                r = a - b;
            else if (!strcmp(op, "Mul"))
                r = a * b;
            else if (!strcmp(op, "Div"))
                r = a / b;
            else if (!strcmp(op, "Pow"))
                r = pow(a, b);
            else if (!strcmp(op, "Max"))
                r = a > b ? a : b;
            else if (!strcmp(op, "Min"))
                r = a < b ? a : b;
            else if (!strcmp(op, "Neg"))
                r = -a;
            else if (!strcmp(op, "Sqrt"))
                r = sqrt(a);
            else if (!strcmp(op, "Exp"))
                r = exp(a);
            else if (!strcmp(op, "Log"))
                r = log(a);
            else if (!strcmp(op, "Abs"))
                r = fabs(a);
            else if (!strcmp(op, "Floor"))
                r = floor(a);
            else if (!strcmp(op, "Ceil"))
                r = ceil(a);
            else if (!strcmp(op, "Reciprocal"))
                r = 1 / a;
            else
                return fail(c, FOLD_UNSUPPORTED, "op %s on constants", op);
            /* ONNX computes in the tensor's type: round as float does */
            o->f[k] = (float)r;
            continue;
        }
        if (logic && anyfloat) /* (a unary op's types are not checked before it folds) */
            return fail(c, FOLD_MALFORMED, "%s of a float tensor, not bool", op);
        if (cmp && anyfloat) { /* compared as floats */
            double fa, fb;
            if (elem_f(c, in[0], bindex(in[0], o, k), &fa) || elem_f(c, in[1], bindex(in[1], o, k), &fb))
                return -1;
            o->i[k] = (FDim){!strcmp(op, "Equal") ? fa == fb : !strcmp(op, "Less") ? fa < fb : fa > fb, 0};
            continue;
        }
        FDim a = in[0]->i[bindex(in[0], o, k)], b = nin > 1 ? in[1]->i[bindex(in[1], o, k)] : (FDim){0, 0};
        if (cmp) {
            int lt, eq;
            if (sym_cmp(c, a, b, &lt, &eq))
                return -1;
            o->i[k] = (FDim){!strcmp(op, "Equal") ? eq : !strcmp(op, "Less") ? lt : (!lt && !eq), 0};
        } else if (logic) {
            int64_t r = !strcmp(op, "Not") ? !a.c : !strcmp(op, "And") ? (a.c && b.c) : (a.c || b.c);
            o->i[k] = (FDim){r, 0};
        } else if (!strcmp(op, "Neg") || !strcmp(op, "Abs")) {
            if (a.c == INT64_MIN)
                return overflow(c);
            o->i[k] = (FDim){!strcmp(op, "Abs") && a.c >= 0 ? a.c : -a.c, a.b};
        } else if (!strcmp(op, "Floor") || !strcmp(op, "Ceil")) {
            o->i[k] = a;
        } else if (!strcmp(op, "Pow")) {
            if (a.b || b.b || b.c < 0 || b.c > 62)
                return dyn(c);
            int64_t r = 1;
            for (int64_t e = 0; e < b.c; e++)
                if (__builtin_mul_overflow(r, a.c, &r))
                    return overflow(c);
            o->i[k] = (FDim){r, 0};
        } else if (sym_arith(c, op, a, b, &o->i[k])) {
            return -1;
        }
    }
    return 0;
}

/* Copies in's elements (same count) into o, whose shape is set. */
static int copy_const(Ctx *c, const FoldVal *in, FoldVal *o)
{
    if (alloc_like(c, o, in))
        return -1;
    if (o->count != in->count)
        return fail(c, FOLD_MALFORMED, "%lld elements cannot take a shape of %lld", (long long)in->count,
                    (long long)o->count);
    if (in->f)
        memcpy(o->f, in->f, (size_t)in->count * sizeof *o->f);
    else
        memcpy(o->i, in->i, (size_t)in->count * sizeof *o->i);
    return 0;
}

static void put_elem(FoldVal *o, int64_t k, const FoldVal *in, int64_t j)
{
    if (o->f)
        o->f[k] = in->f[j];
    else
        o->i[k] = in->i[j];
}

/* ---- shapes of the ops (and the constant folds that share them) ---------- */

typedef struct FOp {
    const OnnxNode *n;
    FoldVal **in; /* NULL for an omitted optional input */
    int nin;
    FoldVal **out;
    int nout;
    int known; /* every input is FV_CONST: fold it */
} FOp;

static FoldVal *IN(FOp *o, int k) { return k < o->nin ? o->in[k] : NULL; }

static int need(Ctx *c, FOp *o, int k)
{
    if (!IN(o, k))
        return fail(c, FOLD_MALFORMED, "input %d is missing", k);
    return 0;
}

static void same_shape(FoldVal *o, const FoldVal *x)
{
    o->rank = x->rank;
    memcpy(o->dims, x->dims, sizeof o->dims);
}

/* Reshape's target: 0 copies the input's axis (unless allowzero), one -1
 * is inferred. */
static int reshape_dims(Ctx *c, const FoldVal *x, const FDim *sh, int n, int allowzero, FoldVal *o)
{
    o->rank = n;
    int infer = -1;
    FDim known = {1, 0};
    for (int k = 0; k < n; k++) {
        FDim d = sh[k];
        if (!d.b && d.c == 0 && !allowzero) {
            if (k >= x->rank)
                return fail(c, FOLD_MALFORMED, "reshape copies axis %d of a rank-%d tensor", k, x->rank);
            d = x->dims[k];
        }
        if (!d.b && d.c == -1) {
            if (infer >= 0)
                return fail(c, FOLD_MALFORMED, "reshape has two -1 axes");
            infer = k;
            continue;
        }
        if (!d.b && d.c < 0)
            return fail(c, FOLD_MALFORMED, "reshape to a negative size");
        o->dims[k] = d;
        if (sym_arith(c, "Mul", known, d, &known))
            return -1;
    }
    FDim total = {1, 0};
    for (int k = 0; k < x->rank; k++)
        if (sym_arith(c, "Mul", total, x->dims[k], &total))
            return -1;
    if (infer >= 0) {
        if (!known.c)
            return fail(c, FOLD_MALFORMED, "reshape infers an axis next to a zero");
        if (known.b > total.b || total.c % known.c)
            return fail(c, FOLD_MALFORMED, "reshape of %lld elements cannot infer its -1 axis", (long long)total.c);
        o->dims[infer] = (FDim){total.c / known.c, total.b - known.b};
    } else if (!dim_eq(known, total)) {
        char a[200], b[48];
        return fail(c, FOLD_MALFORMED, "reshape of %s to %s elements", fold_shape_str(x, a, sizeof a),
                    fold_dim_str(known, b, sizeof b));
    }
    return 0;
}

static int op_reshape(Ctx *c, FOp *o)
{
    FDim sh[ONNX_MAX_RANK];
    int n;
    if (need(c, o, 0) || need(c, o, 1) || int_list(c, o->in[1], sh, ONNX_MAX_RANK, &n))
        return -1;
    if (reshape_dims(c, o->in[0], sh, n, (int)fold_attr_int(o->n, "allowzero", 0), o->out[0]))
        return -1;
    return o->known ? copy_const(c, o->in[0], o->out[0]) : 0;
}

static int op_flatten(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0];
    int axis;
    int64_t a = fold_attr_int(o->n, "axis", 1);
    if (a == x->rank)
        axis = x->rank;
    else if (norm_axis(c, a, x->rank, &axis))
        return -1;
    FDim p = {1, 0}, q = {1, 0};
    for (int d = 0; d < x->rank; d++)
        if (sym_arith(c, "Mul", d < axis ? p : q, x->dims[d], d < axis ? &p : &q))
            return -1;
    FoldVal *y = o->out[0];
    y->rank = 2;
    y->dims[0] = p, y->dims[1] = q;
    return o->known ? copy_const(c, x, y) : 0;
}

static int op_squeeze(Ctx *c, FOp *o, int un)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    int64_t axes[ONNX_MAX_RANK];
    int n;
    if (axes_of(c, o->n, IN(o, 1), axes, &n))
        return -1;
    int rank = un ? x->rank + (n < 0 ? 0 : n) : x->rank;
    unsigned char mark[ONNX_MAX_RANK + 1] = {0};
    if (un && n < 0)
        return fail(c, FOLD_MALFORMED, "Unsqueeze without axes");
    if (rank > ONNX_MAX_RANK)
        return fail(c, FOLD_MALFORMED, "rank %d", rank);
    for (int k = 0; k < n; k++) {
        int a;
        if (norm_axis(c, axes[k], rank, &a))
            return -1;
        if (mark[a])
            return fail(c, FOLD_MALFORMED, "axis %d given twice", a);
        mark[a] = 1;
    }
    y->rank = 0;
    if (un) {
        for (int d = 0, j = 0; d < rank; d++)
            y->dims[y->rank++] = mark[d] ? (FDim){1, 0} : x->dims[j++];
    } else {
        for (int d = 0; d < x->rank; d++) {
            int drop = n < 0 ? (x->dims[d].c == 1 && !x->dims[d].b) : mark[d];
            if (drop && (x->dims[d].c != 1 || x->dims[d].b))
                return fail(c, FOLD_MALFORMED, "squeezes axis %d, which is not 1", d);
            if (!drop)
                y->dims[y->rank++] = x->dims[d];
        }
    }
    return o->known ? copy_const(c, x, y) : 0;
}

static int op_transpose(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    const OnnxAttr *p = fold_attr(o->n, "perm");
    int perm[ONNX_MAX_RANK];
    unsigned char seen[ONNX_MAX_RANK] = {0};
    if (p && p->n != x->rank)
        return fail(c, FOLD_MALFORMED, "perm has %d axes for rank %d", p->n, x->rank);
    for (int d = 0; d < x->rank; d++) {
        int64_t a = p ? p->ints[d] : x->rank - 1 - d;
        if (a < 0 || a >= x->rank || seen[a])
            return fail(c, FOLD_MALFORMED, "perm is not a permutation");
        seen[a] = 1;
        perm[d] = (int)a;
    }
    y->rank = x->rank;
    for (int d = 0; d < x->rank; d++)
        y->dims[d] = x->dims[perm[d]];
    if (!o->known)
        return 0;
    if (alloc_like(c, y, x))
        return -1;
    for (int64_t k = 0; k < y->count; k++) {
        int64_t r = k, src = 0;
        int64_t idx[ONNX_MAX_RANK];
        for (int d = y->rank - 1; d >= 0; d--)
            idx[d] = r % y->dims[d].c, r /= y->dims[d].c;
        for (int d = 0; d < x->rank; d++) {
            int od = 0;
            for (int e = 0; e < y->rank; e++)
                if (perm[e] == d)
                    od = e;
            src = src * x->dims[d].c + idx[od];
        }
        put_elem(y, k, x, src);
    }
    return 0;
}

static int op_concat(Ctx *c, FOp *o)
{
    FoldVal *y = o->out[0], *x0 = NULL;
    for (int k = 0; k < o->nin; k++)
        if (o->in[k] && !x0)
            x0 = o->in[k];
    if (!x0)
        return fail(c, FOLD_MALFORMED, "Concat of nothing");
    int axis;
    if (norm_axis(c, fold_attr_int(o->n, "axis", 0), x0->rank, &axis))
        return -1;
    same_shape(y, x0);
    y->type = x0->type;
    y->dims[axis] = (FDim){0, 0};
    for (int k = 0; k < o->nin; k++) {
        FoldVal *x = o->in[k];
        if (!x)
            continue;
        if (x->rank != x0->rank)
            return fail(c, FOLD_MALFORMED, "Concat of ranks %d and %d", x0->rank, x->rank);
        if (x->type != x0->type)
            return fail(c, FOLD_MALFORMED, "Concat of %s and %s", type_str(x0->type), type_str(x->type));
        for (int d = 0; d < x->rank; d++)
            if (d != axis && !dim_eq(x->dims[d], x0->dims[d]))
                return fail(c, FOLD_MALFORMED, "Concat of shapes that differ off axis %d", axis);
        if (sym_arith(c, "Add", y->dims[axis], x->dims[axis], &y->dims[axis]))
            return -1;
    }
    if (!o->known)
        return 0;
    if (alloc_like(c, y, x0))
        return -1;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= y->dims[d].c;
    for (int d = axis + 1; d < y->rank; d++)
        inner *= y->dims[d].c;
    int64_t k = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int j = 0; j < o->nin; j++) {
            FoldVal *x = o->in[j];
            if (!x)
                continue;
            int64_t run = x->dims[axis].c * inner;
            for (int64_t e = 0; e < run; e++)
                put_elem(y, k++, x, a * run + e);
        }
    return 0;
}

/* Gather along `axis`: data[..., idx, ...]. */
static int op_gather(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *idx = o->in[1], *y = o->out[0];
    int axis;
    if (norm_axis(c, fold_attr_int(o->n, "axis", 0), x->rank, &axis))
        return -1;
    if (x->rank - 1 + idx->rank > ONNX_MAX_RANK)
        return fail(c, FOLD_MALFORMED, "rank over %d", ONNX_MAX_RANK);
    if (idx->type != ONNX_INT32 && idx->type != ONNX_INT64)
        return fail(c, FOLD_MALFORMED, "Gather's indices are %s, not int32 or int64", type_str(idx->type));
    y->rank = 0;
    for (int d = 0; d < axis; d++)
        y->dims[y->rank++] = x->dims[d];
    for (int d = 0; d < idx->rank; d++)
        y->dims[y->rank++] = idx->dims[d];
    for (int d = axis + 1; d < x->rank; d++)
        y->dims[y->rank++] = x->dims[d];
    y->type = x->type;
    if (!o->known)
        return 0;
    if (x->dims[axis].b)
        return dyn(c);
    if (alloc_like(c, y, x))
        return -1;
    int64_t outer = 1, inner = 1, len = x->dims[axis].c;
    for (int d = 0; d < axis; d++)
        outer *= x->dims[d].c;
    for (int d = axis + 1; d < x->rank; d++)
        inner *= x->dims[d].c;
    int64_t k = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int64_t j = 0; j < idx->count; j++) {
            FDim q = idx->i[j];
            if (q.b)
                return dyn(c);
            int64_t i = q.c < 0 ? q.c + len : q.c;
            if (i < 0 || i >= len)
                return fail(c, FOLD_MALFORMED, "index %lld out of range for %lld", (long long)q.c, (long long)len);
            for (int64_t e = 0; e < inner; e++)
                put_elem(y, k++, x, (a * len + i) * inner + e);
        }
    return 0;
}

void fold_clamp_slice(int64_t len, int64_t step, int64_t *b, int64_t *e)
{
    if (*b < 0)
        *b += len;
    if (*e < 0)
        *e += len;
    if (step > 0) {
        *b = *b < 0 ? 0 : *b > len ? len : *b;
        *e = *e < 0 ? 0 : *e > len ? len : *e;
    } else {
        *b = *b < 0 ? -1 : *b > len - 1 ? len - 1 : *b;
        *e = *e < -1 ? -1 : *e > len - 1 ? len - 1 : *e;
    }
}

/* Slice's starts, ends, axes, steps, normalized per axis of x. */
typedef struct Slices {
    int64_t start[ONNX_MAX_RANK], end[ONNX_MAX_RANK], step[ONNX_MAX_RANK];
    int sliced[ONNX_MAX_RANK];
} Slices;

static int slices_of(Ctx *c, FOp *o, Slices *s)
{
    FoldVal *x = o->in[0];
    FDim st[ONNX_MAX_RANK], en[ONNX_MAX_RANK];
    int64_t ax[ONNX_MAX_RANK], sp[ONNX_MAX_RANK];
    int n, ne, na = -1, ns = -1;
    if (need(c, o, 1) || need(c, o, 2) || int_list(c, o->in[1], st, ONNX_MAX_RANK, &n) ||
        int_list(c, o->in[2], en, ONNX_MAX_RANK, &ne))
        return -1;
    if (IN(o, 3) && plain_list(c, o->in[3], ax, ONNX_MAX_RANK, &na))
        return -1;
    if (IN(o, 4) && plain_list(c, o->in[4], sp, ONNX_MAX_RANK, &ns))
        return -1;
    if (ne != n || (na >= 0 && na != n) || (ns >= 0 && ns != n))
        return fail(c, FOLD_MALFORMED, "Slice's lists differ in length");
    for (int d = 0; d < x->rank; d++)
        s->start[d] = 0, s->end[d] = x->dims[d].c, s->step[d] = 1, s->sliced[d] = 0;
    for (int k = 0; k < n; k++) {
        int a;
        if (norm_axis(c, na >= 0 ? ax[k] : k, x->rank, &a))
            return -1;
        int64_t step = ns >= 0 ? sp[k] : 1;
        if (!step)
            return fail(c, FOLD_MALFORMED, "Slice step 0");
        FDim len = x->dims[a];
        /* a symbolic axis may only be sliced whole: 0 (or -N) to a huge end */
        if (len.b) {
            if (step != 1 || st[k].b || st[k].c != 0 || !(en[k].b ? dim_eq(en[k], len) : en[k].c >= INT32_MAX))
                return dyn(c);
            continue;
        }
        if (st[k].b || en[k].b)
            return dyn(c);
        int64_t b = st[k].c, e = en[k].c;
        fold_clamp_slice(len.c, step, &b, &e);
        s->start[a] = b, s->end[a] = e, s->step[a] = step, s->sliced[a] = 1;
    }
    return 0;
}

/* b and e clamped (fold_clamp_slice), step any non-zero int64 */
static int64_t slice_len(int64_t b, int64_t e, int64_t step)
{
    int64_t below = step > 0 ? step - 1 : -(step + 1); /* |step| - 1, for INT64_MIN too */
    uint64_t a = (uint64_t)below + 1;
    if (step > 0)
        return e > b ? (int64_t)((uint64_t)(e - b - 1) / a) + 1 : 0;
    return b > e ? (int64_t)((uint64_t)(b - e - 1) / a) + 1 : 0;
}

static int op_slice(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    Slices s;
    if (slices_of(c, o, &s))
        return -1;
    same_shape(y, x);
    for (int d = 0; d < x->rank; d++)
        if (s.sliced[d])
            y->dims[d] = (FDim){slice_len(s.start[d], s.end[d], s.step[d]), 0};
    if (!o->known)
        return 0;
    if (alloc_like(c, y, x))
        return -1;
    for (int64_t k = 0; k < y->count; k++) {
        int64_t r = k, src = 0, mul = 1;
        for (int d = y->rank - 1; d >= 0; d--) {
            int64_t q = r % y->dims[d].c;
            r /= y->dims[d].c;
            src += (s.start[d] + q * s.step[d]) * mul;
            mul *= x->dims[d].c;
        }
        put_elem(y, k, x, src);
    }
    return 0;
}

static int op_split(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0];
    int axis;
    if (norm_axis(c, fold_attr_int(o->n, "axis", 0), x->rank, &axis))
        return -1;
    if (x->dims[axis].b)
        return dyn(c);
    int64_t sizes[64];
    int n = 0;
    const OnnxAttr *sa = fold_attr(o->n, "split");
    if (o->nout > 64)
        return fail(c, FOLD_UNSUPPORTED, "Split into %d", o->nout);
    if (o->nout < 1)
        return fail(c, FOLD_MALFORMED, "Split without outputs");
    if (sa && sa->kind == ONNX_ATTR_INTS) {
        if (sa->n != o->nout)
            return fail(c, FOLD_MALFORMED, "Split has %d sizes for %d outputs", sa->n, o->nout);
        for (int k = 0; k < sa->n; k++)
            sizes[k] = sa->ints[k];
        n = sa->n;
    } else if (IN(o, 1)) {
        if (plain_list(c, o->in[1], sizes, 64, &n))
            return -1;
        if (n != o->nout)
            return fail(c, FOLD_MALFORMED, "Split has %d sizes for %d outputs", n, o->nout);
    } else {
        int64_t L = x->dims[axis].c, per = (L + o->nout - 1) / o->nout;
        for (int k = 0; k < o->nout; k++, n++)
            sizes[k] = L - per * k < per ? L - per * k : per;
    }
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        if (sizes[k] < 0 || __builtin_add_overflow(total, sizes[k], &total))
            return fail(c, FOLD_MALFORMED, "Split size %lld", (long long)sizes[k]);
    }
    if (total != x->dims[axis].c)
        return fail(c, FOLD_MALFORMED, "Split sizes sum to %lld, not %lld", (long long)total,
                    (long long)x->dims[axis].c);
    for (int k = 0; k < o->nout; k++) {
        same_shape(o->out[k], x);
        o->out[k]->dims[axis] = (FDim){sizes[k], 0};
        o->out[k]->type = x->type;
    }
    if (o->known)
        return fail(c, FOLD_UNSUPPORTED, "Split of a constant");
    return 0;
}

static int op_shape(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    int64_t r = x->rank, b = fold_attr_int(o->n, "start", 0), e = fold_attr_int(o->n, "end", r);
    b = b < 0 ? b + r : b;
    e = e < 0 ? e + r : e;
    b = b < 0 ? 0 : b > r ? r : b;
    e = e < 0 ? 0 : e > r ? r : e;
    y->rank = 1;
    y->dims[0] = (FDim){e > b ? e - b : 0, 0};
    y->type = ONNX_INT64;
    if (alloc_const(c, y, 0))
        return -1;
    for (int64_t k = b; k < e; k++)
        y->i[k - b] = x->dims[k];
    return 0;
}

static int op_constant(Ctx *c, FOp *o)
{
    FoldVal *y = o->out[0];
    const OnnxAttr *a = o->n->nattrs == 1 ? &o->n->attrs[0] : NULL;
    if (!a)
        return fail(c, FOLD_MALFORMED, "a Constant needs one attribute");
    if (!strcmp(a->name, "value") && a->kind == ONNX_ATTR_TENSOR)
        return from_tensor(c, y, a->t);
    y->rank = 0;
    if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
        y->type = a->kind == ONNX_ATTR_FLOAT ? ONNX_FLOAT : ONNX_INT64;
        if (alloc_const(c, y, a->kind == ONNX_ATTR_FLOAT))
            return -1;
        if (y->f)
            y->f[0] = a->f;
        else
            y->i[0] = (FDim){a->i, 0};
        return 0;
    }
    if (!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) {
        y->rank = 1;
        y->dims[0] = (FDim){a->n, 0};
        y->type = a->kind == ONNX_ATTR_FLOATS ? ONNX_FLOAT : ONNX_INT64;
        if (alloc_const(c, y, a->kind == ONNX_ATTR_FLOATS))
            return -1;
        for (int k = 0; k < a->n; k++)
            if (y->f)
                y->f[k] = a->floats[k];
            else
                y->i[k] = (FDim){a->ints[k], 0};
        return 0;
    }
    return fail(c, FOLD_UNSUPPORTED, "Constant attribute '%s'", a->name);
}

static int op_constant_of_shape(Ctx *c, FOp *o)
{
    FoldVal *y = o->out[0];
    FDim sh[ONNX_MAX_RANK];
    int n;
    if (int_list(c, o->in[0], sh, ONNX_MAX_RANK, &n))
        return -1;
    y->rank = n;
    memcpy(y->dims, sh, (size_t)n * sizeof *sh);
    const OnnxAttr *a = fold_attr(o->n, "value");
    double v = 0;
    int64_t iv = 0;
    int isfloat = 1;
    y->type = ONNX_FLOAT;
    if (a && a->kind == ONNX_ATTR_TENSOR) {
        if (!a->t->supported || a->t->count != 1)
            return fail(c, FOLD_UNSUPPORTED, "ConstantOfShape value");
        isfloat = a->t->f != NULL;
        if (isfloat)
            v = a->t->f[0];
        else
            iv = a->t->i[0];
        y->type = isfloat ? ONNX_FLOAT : a->t->type;
    }
    for (int d = 0; d < n; d++)
        if (sh[d].b)
            return 0; /* batch-sized (an RNN's zero state): computed, not folded */
    if (alloc_const(c, y, isfloat))
        return -1;
    for (int64_t k = 0; k < y->count; k++)
        if (y->f)
            y->f[k] = v;
        else
            y->i[k] = (FDim){iv, 0};
    return 0;
}

static int op_range(Ctx *c, FOp *o)
{
    FoldVal *y = o->out[0];
    double s, l, d;
    if (need(c, o, 0) || need(c, o, 1) || need(c, o, 2) || elem_f(c, o->in[0], 0, &s) || elem_f(c, o->in[1], 0, &l) ||
        elem_f(c, o->in[2], 0, &d))
        return -1;
    if (d == 0)
        return fail(c, FOLD_MALFORMED, "Range with delta 0");
    double n = ceil((l - s) / d);
    if (n < 0)
        n = 0;
    if (!(n <= FOLD_MAX))
        return fail(c, FOLD_MALFORMED, "Range of %g elements", n);
    y->rank = 1;
    y->dims[0] = (FDim){(int64_t)n, 0};
    y->type = o->in[0]->type;
    if (alloc_const(c, y, o->in[0]->f != NULL))
        return -1;
    for (int64_t k = 0; k < y->count; k++)
        if (y->f)
            y->f[k] = s + (double)k * d;
        else if (to_int(c, s + (double)k * d, &y->i[k].c))
            return -1;
    return 0;
}

static int op_expand(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    FDim sh[ONNX_MAX_RANK];
    int n;
    if (need(c, o, 1) || int_list(c, o->in[1], sh, ONNX_MAX_RANK, &n))
        return -1;
    FoldVal t = {0};
    t.rank = n;
    memcpy(t.dims, sh, (size_t)n * sizeof *sh);
    FoldVal *both[2] = {x, &t};
    if (broadcast(c, both, 2, y))
        return -1;
    if (!o->known)
        return 0;
    if (alloc_like(c, y, x))
        return -1;
    for (int64_t k = 0; k < y->count; k++)
        put_elem(y, k, x, bindex(x, y, k));
    return 0;
}

static int op_trilu(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    if (x->rank < 2)
        return fail(c, FOLD_MALFORMED, "Trilu of rank %d", x->rank);
    same_shape(y, x);
    y->type = x->type;
    if (!o->known)
        return 0;
    double kf = 0;
    int64_t kk = 0;
    if (IN(o, 1) && (elem_f(c, o->in[1], 0, &kf) || to_int(c, kf, &kk)))
        return -1;
    int upper = (int)fold_attr_int(o->n, "upper", 1);
    if (alloc_like(c, y, x))
        return -1;
    int64_t R = x->dims[x->rank - 2].c, C = x->dims[x->rank - 1].c;
    for (int64_t k = 0; k < y->count; k++) {
        int64_t j = k % C, i = (k / C) % R;
        int keep = upper ? j - i >= kk : j - i <= kk;
        if (y->f)
            y->f[k] = keep ? x->f[k] : 0;
        else
            y->i[k] = keep ? x->i[k] : (FDim){0, 0};
    }
    return 0;
}

static int op_cast(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    /* CastLike: to the type of input 1 */
    int to = !strcmp(o->n->op_type, "CastLike") ? o->in[1]->type : (int)fold_attr_int(o->n, "to", 0);
    if (!onnx_type_supported(to))
        return fail(c, FOLD_UNSUPPORTED, "Cast to type %s", onnx_type_name(to) ? onnx_type_name(to) : "unknown");
    same_shape(y, x);
    y->type = is_float_type(to) ? ONNX_FLOAT : to;
    if (!o->known)
        return 0;
    if (alloc_const(c, y, is_float_type(to)))
        return -1;
    for (int64_t k = 0; k < y->count; k++) {
        if (y->f) {
            if (elem_f(c, x, k, &y->f[k]))
                return -1;
            y->f[k] = (float)y->f[k];
        } else if (x->i) {
            y->i[k] = to == ONNX_BOOL ? (FDim){x->i[k].c != 0, 0} : x->i[k];
        } else {
            double v = x->f[k];
            y->i[k] = (FDim){v != 0, 0};
            if (to != ONNX_BOOL && to_int(c, v, &y->i[k].c))
                return -1;
        }
    }
    return 0;
}

/* GatherElements: the indices' shape, the data's type */
static int op_gather_elements(Ctx *c, FOp *o)
{
    const FoldVal *x = o->in[0], *i = o->in[1];
    if (x->rank != i->rank || x->rank < 1)
        return fail(c, FOLD_MALFORMED, "GatherElements of data of rank %d by indices of rank %d", x->rank, i->rank);
    if (i->type != ONNX_INT32 && i->type != ONNX_INT64)
        return fail(c, FOLD_MALFORMED, "GatherElements' indices are %s, not int32 or int64", type_str(i->type));
    int axis;
    if (norm_axis(c, fold_attr_int(o->n, "axis", 0), x->rank, &axis))
        return -1;
    /* off the axis, the indices' dims are at most the data's (PyTorch's
     * gather; the language's gather_elements): the batch's where either
     * has it */
    for (int d = 0; d < x->rank; d++) {
        const FDim xd = x->dims[d], id = i->dims[d];
        if (d == axis)
            continue;
        if (xd.b != id.b)
            return fail(c, FOLD_UNSUPPORTED, "GatherElements whose axis %d is the batch in one operand only", d);
        if (xd.b ? !dim_eq(xd, id) : id.c > xd.c)
            return fail(c, FOLD_MALFORMED, "GatherElements indices' axis %d is larger than the data's", d);
    }
    same_shape(o->out[0], i);
    o->out[0]->type = x->type;
    return 0;
}

/* ONNX's type constraints of the elementwise ops: one element type T for
 * the operands (Pow's exponent aside), bool for the logical ops and
 * Where's condition.  fold tells the float types apart from none other
 * (they are all ONNX_FLOAT here). */
static int elementwise_types(Ctx *c, const char *op, FoldVal **in, int nin)
{
    int logic = !strcmp(op, "Not") || !strcmp(op, "And") || !strcmp(op, "Or");
    int where = !strcmp(op, "Where"), first = where ? 1 : 0, last = !strcmp(op, "Pow") ? 1 : nin;
    if (where && in[0]->type != ONNX_BOOL)
        return fail(c, FOLD_MALFORMED, "Where's condition is %s, not bool", type_str(in[0]->type));
    for (int k = first; k < last; k++) {
        if (logic && in[k]->type != ONNX_BOOL)
            return fail(c, FOLD_MALFORMED, "%s of %s, not bool", op, type_str(in[k]->type));
        if (in[k]->type != in[first]->type)
            return fail(c, FOLD_MALFORMED, "%s of %s and %s: its operands have one element type", op,
                        type_str(in[first]->type), type_str(in[k]->type));
    }
    return 0;
}

static int op_elementwise(Ctx *c, FOp *o)
{
    FoldVal *ins[16];
    int nin = 0;
    for (int k = 0; k < o->nin && nin < 16; k++) {
        if (!o->in[k])
            return fail(c, FOLD_MALFORMED, "input %d is missing", k);
        ins[nin++] = o->in[k];
    }
    if (!nin)
        return fail(c, FOLD_MALFORMED, "no inputs");
    const char *op = o->n->op_type;
    if (elementwise_types(c, op, ins, nin))
        return -1;
    if (o->known) {
        if (nin > 2 && strcmp(op, "Where")) { /* variadic Max, Min, Sum: fold pairwise */
            return fail(c, FOLD_UNSUPPORTED, "%s of %d constants", op, nin);
        }
        return elementwise_fold(c, op, ins, nin, o->out[0]);
    }
    if (broadcast(c, ins, nin, o->out[0]))
        return -1;
    int cmp = !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "Not") ||
        !strcmp(op, "And") || !strcmp(op, "Or");
    o->out[0]->type = cmp ? ONNX_BOOL : !strcmp(op, "Where") ? ins[1]->type : ins[0]->type;
    return 0;
}

/* Unary ops of the same shape (the second output of Dropout is its mask). */
static int op_same(Ctx *c, FOp *o)
{
    if (need(c, o, 0))
        return -1;
    for (int k = 0; k < o->nout; k++) {
        same_shape(o->out[k], o->in[0]);
        o->out[k]->type = k ? ONNX_BOOL : o->in[0]->type;
    }
    if (o->known && !strcmp(o->n->op_type, "Identity"))
        return copy_const(c, o->in[0], o->out[0]);
    if (o->known)
        return elementwise_fold(c, o->n->op_type, o->in, 1, o->out[0]);
    return 0;
}

static int op_size(Ctx *c, FOp *o)
{
    FoldVal *y = o->out[0];
    FDim n = {1, 0};
    for (int d = 0; d < o->in[0]->rank; d++)
        if (sym_arith(c, "Mul", n, o->in[0]->dims[d], &n))
            return -1;
    y->rank = 0;
    y->type = ONNX_INT64;
    if (alloc_const(c, y, 0))
        return -1;
    y->i[0] = n;
    return 0;
}

static int op_matmul(Ctx *c, FOp *o)
{
    FoldVal *a = o->in[0], *b = o->in[1], *y = o->out[0];
    if (a->rank < 1 || b->rank < 1)
        return fail(c, FOLD_MALFORMED, "MatMul of a scalar");
    FoldVal A = *a, B = *b;
    if (A.rank == 1) {
        A.rank = 2, A.dims[1] = a->dims[0], A.dims[0] = (FDim){1, 0};
    }
    if (B.rank == 1) {
        B.rank = 2, B.dims[1] = (FDim){1, 0};
    }
    if (!dim_eq(A.dims[A.rank - 1], B.dims[B.rank - 2])) {
        char s1[200], s2[200];
        return fail(c, FOLD_MALFORMED, "MatMul of %s and %s", fold_shape_str(a, s1, sizeof s1),
                    fold_shape_str(b, s2, sizeof s2));
    }
    FoldVal ba = A, bb = B;
    ba.rank -= 2, bb.rank -= 2;
    FoldVal *both[2] = {&ba, &bb};
    if (broadcast(c, both, 2, y))
        return -1;
    if (a->rank > 1)
        y->dims[y->rank++] = A.dims[A.rank - 2];
    if (b->rank > 1)
        y->dims[y->rank++] = B.dims[B.rank - 1];
    y->type = ONNX_FLOAT;
    return 0;
}

static int op_gemm(Ctx *c, FOp *o)
{
    FoldVal *a = o->in[0], *b = o->in[1], *y = o->out[0];
    if (a->rank != 2 || b->rank != 2)
        return fail(c, FOLD_MALFORMED, "Gemm of ranks %d and %d", a->rank, b->rank);
    int ta = (int)fold_attr_int(o->n, "transA", 0), tb = (int)fold_attr_int(o->n, "transB", 0);
    FDim m = a->dims[ta ? 1 : 0], k1 = a->dims[ta ? 0 : 1], k2 = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
    if (!dim_eq(k1, k2))
        return fail(c, FOLD_MALFORMED, "Gemm's inner sizes differ");
    y->rank = 2;
    y->dims[0] = m, y->dims[1] = n;
    y->type = ONNX_FLOAT;
    if (IN(o, 2)) {
        FoldVal *both[2] = {y, o->in[2]}, t;
        if (broadcast(c, both, 2, &t))
            return -1;
        if (t.rank != 2 || !dim_eq(t.dims[0], m) || !dim_eq(t.dims[1], n))
            return fail(c, FOLD_MALFORMED, "Gemm's C does not broadcast to the result");
    }
    return 0;
}

/* Window sizes of Conv, ConvTranspose and the pools over the spatial axes. */
typedef struct Window {
    int nsp;
    int64_t k[3], s[3], d[3], pb[3], pe[3], op[3];
} Window;

int fold_window_pads(const OnnxNode *n, const FoldVal *x, int nsp, const int64_t *k, int64_t *st, int64_t *di,
                     int64_t *pb, int64_t *pe)
{
    const OnnxAttr *sa = fold_attr(n, "strides"), *da = fold_attr(n, "dilations"), *pa = fold_attr(n, "pads");
    const char *ap = fold_attr_str(n, "auto_pad", "NOTSET");
    int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    if (!same && strcmp(ap, "VALID") && strcmp(ap, "NOTSET"))
        return -1;
    for (int i = 0; i < nsp; i++) {
        st[i] = sa ? sa->ints[i] : 1;
        di[i] = da ? da->ints[i] : 1;
        pb[i] = pa ? pa->ints[i] : 0;
        pe[i] = pa ? pa->ints[i + nsp] : 0;
        if (same) {
            int64_t in = x->dims[2 + i].c, out = (in + st[i] - 1) / st[i];
            int64_t total = (out - 1) * st[i] + (k[i] - 1) * di[i] + 1 - in;
            if (total < 0)
                total = 0;
            pb[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            pe[i] = total - pb[i];
        } else if (!strcmp(ap, "VALID")) {
            pb[i] = pe[i] = 0;
        }
    }
    return 0;
}

static int window(Ctx *c, FOp *o, const int64_t *kernel, int nsp, Window *w, int transposed)
{
    FoldVal *x = o->in[0];
    w->nsp = nsp;
    const OnnxAttr *st = fold_attr(o->n, "strides"), *di = fold_attr(o->n, "dilations"), *pa = fold_attr(o->n, "pads"),
                   *opad = fold_attr(o->n, "output_padding");
    if ((st && st->n != nsp) || (di && di->n != nsp) || (pa && pa->n != 2 * nsp) || (opad && opad->n != nsp))
        return fail(c, FOLD_MALFORMED, "strides, dilations or pads of the wrong length");
    const char *ap = fold_attr_str(o->n, "auto_pad", "NOTSET");
    /* the attributes as written, before auto_pad replaces the pads */
    for (int i = 0; i < nsp; i++) {
        w->k[i] = kernel[i];
        w->op[i] = opad ? opad->ints[i] : 0;
        /* each at most 2^31 - 1, so that the sizes below fit in int64 */
        const int64_t M = ONNX_MAX_ELEMENTS;
        if (w->k[i] < 1 || w->k[i] > M || (st && (st->ints[i] < 1 || st->ints[i] > M)) ||
            (di && (di->ints[i] < 1 || di->ints[i] > M)) ||
            (pa && (pa->ints[i] < 0 || pa->ints[i] > M || pa->ints[i + nsp] < 0 || pa->ints[i + nsp] > M)) ||
            w->op[i] < 0 || w->op[i] > M)
            return fail(c, FOLD_MALFORMED, "a window size, stride, dilation or pad out of range");
        if (x->dims[2 + i].b)
            return dyn(c);
    }
    if (transposed && (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")))
        return fail(c, FOLD_UNSUPPORTED, "auto_pad %s of ConvTranspose", ap);
    if (fold_window_pads(o->n, x, nsp, w->k, w->s, w->d, w->pb, w->pe))
        return fail(c, FOLD_MALFORMED, "auto_pad '%s'", ap);
    return 0;
}

static int op_conv(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *wt = o->in[1], *y = o->out[0];
    if (x->rank < 3 || x->rank > 5 || wt->rank != x->rank)
        return fail(c, FOLD_MALFORMED, "Conv of ranks %d and %d", x->rank, wt->rank);
    int nsp = x->rank - 2, transposed = !strcmp(o->n->op_type, "ConvTranspose");
    int64_t g = fold_attr_int(o->n, "group", 1), k[3];
    for (int i = 0; i < nsp; i++)
        k[i] = wt->dims[2 + i].c;
    const OnnxAttr *ks = fold_attr(o->n, "kernel_shape");
    if (ks && (ks->n != nsp || memcmp(ks->ints, k, (size_t)nsp * sizeof *k)))
        return fail(c, FOLD_MALFORMED, "kernel_shape differs from the weight's");
    Window w;
    if (g < 1 || window(c, o, k, nsp, &w, transposed))
        return -1;
    int64_t C = x->dims[1].c, F = transposed ? wt->dims[1].c * g : wt->dims[0].c;
    if ((transposed ? wt->dims[0].c : wt->dims[1].c * g) != C || F % g)
        return fail(c, FOLD_MALFORMED, "Conv weight does not match %lld channels in %lld groups", (long long)C,
                    (long long)g);
    y->rank = x->rank;
    y->dims[0] = x->dims[0];
    y->dims[1] = (FDim){F, 0};
    const OnnxAttr *os = fold_attr(o->n, "output_shape");
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->dims[2 + i].c, ext = w.d[i] * (w.k[i] - 1) + 1, out;
        if (transposed) {
            if (os)
                return fail(c, FOLD_UNSUPPORTED, "ConvTranspose output_shape");
            out = (in - 1) * w.s[i] - w.pb[i] - w.pe[i] + ext + w.op[i];
        } else {
            out = (in + w.pb[i] + w.pe[i] - ext) / w.s[i] + 1;
        }
        if (out < 1)
            return fail(c, FOLD_MALFORMED, "the window is larger than the padded input");
        y->dims[2 + i] = (FDim){out, 0};
    }
    y->type = ONNX_FLOAT;
    if (IN(o, 2) && (o->in[2]->rank != 1 || o->in[2]->dims[0].c != F))
        return fail(c, FOLD_MALFORMED, "Conv bias of the wrong shape");
    return 0;
}

static int op_pool(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0];
    if (x->rank < 3 || x->rank > 5)
        return fail(c, FOLD_MALFORMED, "pool of rank %d", x->rank);
    int nsp = x->rank - 2;
    if (!strncmp(o->n->op_type, "Global", 6)) {
        for (int k = 0; k < o->nout; k++) {
            same_shape(o->out[k], x);
            for (int i = 0; i < nsp; i++)
                o->out[k]->dims[2 + i] = (FDim){1, 0};
            o->out[k]->type = ONNX_FLOAT;
        }
        return 0;
    }
    const OnnxAttr *ks = fold_attr(o->n, "kernel_shape");
    if (!ks || ks->n != nsp)
        return fail(c, FOLD_MALFORMED, "kernel_shape of the wrong length");
    Window w;
    if (window(c, o, ks->ints, nsp, &w, 0))
        return -1;
    int ceil_mode = (int)fold_attr_int(o->n, "ceil_mode", 0);
    FoldVal *y = o->out[0];
    same_shape(y, x);
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->dims[2 + i].c, ext = w.d[i] * (w.k[i] - 1) + 1, span = in + w.pb[i] + w.pe[i] - ext;
        if (span < 0)
            return fail(c, FOLD_MALFORMED, "the window is larger than the padded input");
        int64_t out = (ceil_mode ? (span + w.s[i] - 1) / w.s[i] : span / w.s[i]) + 1;
        /* ceil mode: the last window must start inside the input or its left padding */
        if (ceil_mode && (out - 1) * w.s[i] >= in + w.pb[i])
            out--;
        y->dims[2 + i] = (FDim){out, 0};
    }
    y->type = ONNX_FLOAT;
    for (int k = 1; k < o->nout; k++) {
        same_shape(o->out[k], y);
        o->out[k]->type = ONNX_INT64;
    }
    return 0;
}

static int op_batchnorm(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0];
    if (x->rank < 2)
        return fail(c, FOLD_MALFORMED, "BatchNormalization of rank %d", x->rank);
    for (int k = 1; k < 5; k++)
        if (need(c, o, k) || o->in[k]->rank != 1 || !dim_eq(o->in[k]->dims[0], x->dims[1]))
            return fail(c, FOLD_MALFORMED, "BatchNormalization input %d is not [C]", k);
    same_shape(o->out[0], x);
    o->out[0]->type = ONNX_FLOAT;
    for (int k = 1; k < o->nout; k++) {
        o->out[k]->rank = 1;
        o->out[k]->dims[0] = x->dims[1];
        o->out[k]->type = ONNX_FLOAT;
    }
    return 0;
}

static int op_layernorm(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0];
    int axis;
    if (need(c, o, 1) || norm_axis(c, fold_attr_int(o->n, "axis", -1), x->rank, &axis))
        return -1;
    same_shape(o->out[0], x);
    o->out[0]->type = ONNX_FLOAT;
    for (int k = 1; k < o->nout; k++) {
        same_shape(o->out[k], x);
        for (int d = axis; d < x->rank; d++)
            o->out[k]->dims[d] = (FDim){1, 0};
        o->out[k]->type = ONNX_FLOAT;
    }
    return 0;
}

static int op_reduce(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    int64_t axes[ONNX_MAX_RANK];
    int n;
    if (axes_of(c, o->n, IN(o, 1), axes, &n))
        return -1;
    int keep = (int)fold_attr_int(o->n, "keepdims", 1);
    unsigned char mark[ONNX_MAX_RANK] = {0};
    if (n < 0 || n == 0) {
        if (n == 0 && fold_attr_int(o->n, "noop_with_empty_axes", 0)) {
            /* an empty axes list with noop_with_empty_axes is the identity */
            same_shape(y, x);
            y->type = x->type;
            return 0;
        }
        for (int d = 0; d < x->rank; d++)
            mark[d] = 1;
    }
    for (int k = 0; k < n; k++) {
        int a;
        if (norm_axis(c, axes[k], x->rank, &a))
            return -1;
        if (mark[a]) /* ONNX's axes are unique; the language refuses a repeat */
            return fail(c, FOLD_MALFORMED, "%s's axis %d given twice", o->n->op_type, a);
        mark[a] = 1;
    }
    y->rank = 0;
    for (int d = 0; d < x->rank; d++)
        if (!mark[d])
            y->dims[y->rank++] = x->dims[d];
        else if (keep)
            y->dims[y->rank++] = (FDim){1, 0};
    y->type = x->type;
    return 0;
}

/* ArgMax and ArgMin: int64 indices along one axis, kept as 1 with
 * keepdims (the default); the language's argmax is i32 (onnx_lift.c). */
static int op_argmax(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    int axis;
    if (norm_axis(c, fold_attr_int(o->n, "axis", 0), x->rank, &axis))
        return -1;
    if (x->type != ONNX_FLOAT)
        return fail(c, FOLD_UNSUPPORTED, "%s of an integer tensor", o->n->op_type);
    const int keep = fold_attr_int(o->n, "keepdims", 1) != 0;
    y->rank = 0;
    for (int d = 0; d < x->rank; d++)
        if (d != axis)
            y->dims[y->rank++] = x->dims[d];
        else if (keep)
            y->dims[y->rank++] = (FDim){1, 0};
    y->type = ONNX_INT64;
    return 0;
}

static int op_softmax(Ctx *c, FOp *o)
{
    int axis;
    if (norm_axis(c, fold_attr_int(o->n, "axis", -1), o->in[0]->rank, &axis))
        return -1;
    same_shape(o->out[0], o->in[0]);
    o->out[0]->type = ONNX_FLOAT;
    return 0;
}

static int op_pad(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    int64_t pads[2 * ONNX_MAX_RANK];
    int n;
    if (need(c, o, 1) || plain_list(c, o->in[1], pads, 2 * ONNX_MAX_RANK, &n))
        return -1;
    if (n != 2 * x->rank)
        return fail(c, FOLD_MALFORMED, "Pad has %d pads for rank %d", n, x->rank);
    same_shape(y, x);
    for (int d = 0; d < x->rank; d++) {
        if (!pads[d] && !pads[d + x->rank])
            continue;
        if (x->dims[d].b)
            return dyn(c);
        if (pads[d] < -ONNX_MAX_ELEMENTS || pads[d] > ONNX_MAX_ELEMENTS || pads[d + x->rank] < -ONNX_MAX_ELEMENTS ||
            pads[d + x->rank] > ONNX_MAX_ELEMENTS)
            return fail(c, FOLD_MALFORMED, "Pad of more than %lld", (long long)ONNX_MAX_ELEMENTS);
        y->dims[d].c += pads[d] + pads[d + x->rank];
        if (y->dims[d].c < 0)
            return fail(c, FOLD_MALFORMED, "Pad makes axis %d negative", d);
    }
    y->type = x->type;
    return 0;
}

static int op_resize(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    same_shape(y, x);
    y->type = ONNX_FLOAT;
    FoldVal *scales = IN(o, 2), *sizes = IN(o, 3);
    if (sizes && sizes->count) {
        int64_t sz[ONNX_MAX_RANK];
        int n;
        if (plain_list(c, sizes, sz, ONNX_MAX_RANK, &n))
            return -1;
        if (n != x->rank)
            return fail(c, FOLD_MALFORMED, "Resize sizes of length %d for rank %d", n, x->rank);
        for (int d = 0; d < n; d++)
            if (!x->dims[d].b)
                y->dims[d].c = sz[d];
        return 0;
    }
    if (!scales || scales->count != x->rank)
        return fail(c, FOLD_MALFORMED, "Resize needs scales or sizes for every axis");
    for (int d = 0; d < x->rank; d++) {
        double s;
        if (elem_f(c, scales, d, &s))
            return -1;
        if (x->dims[d].b) {
            if (s != 1)
                return dyn(c);
            continue;
        }
        if (!(s > 0))
            return fail(c, FOLD_MALFORMED, "Resize scale %g", s);
        if (to_int(c, floor((double)x->dims[d].c * s), &y->dims[d].c))
            return -1;
    }
    return 0;
}

static int op_rnn(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *w = o->in[1];
    int64_t H = fold_attr_int(o->n, "hidden_size", 0), layout = fold_attr_int(o->n, "layout", 0);
    if (x->rank != 3 || w->rank != 3)
        return fail(c, FOLD_MALFORMED, "%s of ranks %d and %d", o->n->op_type, x->rank, w->rank);
    if (H <= 0)
        return fail(c, FOLD_MALFORMED, "hidden_size %lld", (long long)H);
    FDim T = x->dims[layout ? 1 : 0], B = x->dims[layout ? 0 : 1], D = w->dims[0];
    if (o->nout > 0 && o->out[0]) { /* Y: [T, D, B, H], layout 1: [B, T, D, H] */
        FoldVal *y = o->out[0];
        y->rank = 4;
        y->dims[0] = layout ? B : T, y->dims[1] = layout ? T : D, y->dims[2] = layout ? D : B;
        y->dims[3] = (FDim){H, 0};
        y->type = ONNX_FLOAT;
    }
    for (int k = 1; k < o->nout; k++) { /* Y_h, Y_c: [D, B, H], layout 1: [B, D, H] */
        FoldVal *y = o->out[k];
        y->rank = 3;
        y->dims[0] = layout ? B : D, y->dims[1] = layout ? D : B, y->dims[2] = (FDim){H, 0};
        y->type = ONNX_FLOAT;
    }
    return 0;
}

/* DepthToSpace [N, C, H, W] -> [N, C / b², H b, W b]; SpaceToDepth the
 * inverse (b the blocksize). */
static int op_depth_space(Ctx *c, FOp *o)
{
    FoldVal *x = o->in[0], *y = o->out[0];
    int64_t b = fold_attr_int(o->n, "blocksize", 0);
    int d2s = !strcmp(o->n->op_type, "DepthToSpace");
    if (x->rank != 4 || b < 1 || b > 4096) /* (C b² stays in range) */
        return fail(c, FOLD_MALFORMED, "%s of rank %d with blocksize %lld", o->n->op_type, x->rank, (long long)b);
    for (int d = 1; d < 4; d++)
        if (x->dims[d].b)
            return dyn(c);
    int64_t C = x->dims[1].c, H = x->dims[2].c, W = x->dims[3].c;
    if (d2s ? C % (b * b) : H % b || W % b)
        return fail(c, FOLD_MALFORMED, "%s with blocksize %lld of [%lld, %lld, %lld]", o->n->op_type, (long long)b,
                    (long long)C, (long long)H, (long long)W);
    same_shape(y, x);
    y->dims[1].c = d2s ? C / (b * b) : C * b * b;
    y->dims[2].c = d2s ? H * b : H / b;
    y->dims[3].c = d2s ? W * b : W / b;
    y->type = x->type;
    return 0;
}

typedef struct OpRule {
    const char *op;
    int (*fn)(Ctx *, FOp *);
    int min_in; /* inputs that must be given */
} OpRule;

static int op_squeeze1(Ctx *c, FOp *o) { return op_squeeze(c, o, 0); }
static int op_unsqueeze1(Ctx *c, FOp *o) { return op_squeeze(c, o, 1); }

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: input [N, C,
 * d1, ...], integer target [N, d1, ...], optional weight [C]; the loss
 * of the target's shape (reduction none) or a scalar; SCE's second
 * output, log_prob, is the input's shape. */
static int op_class_loss(Ctx *c, FOp *o)
{
    const FoldVal *x = o->in[0], *t = o->in[1], *w = o->nin > 2 ? o->in[2] : NULL;
    const char *op = o->n->op_type, *red = fold_attr_str(o->n, "reduction", "mean");
    if (o->known)
        return fail(c, FOLD_UNSUPPORTED, "%s of constants", op);
    if (x->rank < 2 || t->rank != x->rank - 1 || x->type != ONNX_FLOAT || t->type == ONNX_FLOAT)
        return fail(c, FOLD_MALFORMED, "%s of a %s input of rank %d and a %s target of rank %d", op, type_str(x->type),
                    x->rank, type_str(t->type), t->rank);
    for (int d = 0; d < t->rank; d++)
        if (!dim_eq(t->dims[d], x->dims[d ? d + 1 : 0]))
            return fail(c, FOLD_MALFORMED, "%s target axis %d differs from the input's", op, d);
    if (w && (w->rank != 1 || !dim_eq(w->dims[0], x->dims[1]) || w->type != ONNX_FLOAT))
        return fail(c, FOLD_MALFORMED, "%s weight is not a float [C]", op);
    if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
        return fail(c, FOLD_MALFORMED, "%s reduction '%s'", op, red);
    if (strcmp(red, "none"))
        o->out[0]->rank = 0;
    else
        same_shape(o->out[0], t);
    o->out[0]->type = ONNX_FLOAT;
    if (o->nout > 1) {
        same_shape(o->out[1], x);
        o->out[1]->type = ONNX_FLOAT;
    }
    return 0;
}

static const OpRule rules[] = {
    {"Constant", op_constant, 0},
    {"ConstantOfShape", op_constant_of_shape, 1},
    {"Shape", op_shape, 1},
    {"Size", op_size, 1},
    {"Range", op_range, 3},
    {"Reshape", op_reshape, 2},
    {"Flatten", op_flatten, 1},
    {"Squeeze", op_squeeze1, 1},
    {"Unsqueeze", op_unsqueeze1, 1},
    {"Transpose", op_transpose, 1},
    {"Concat", op_concat, 1},
    {"Gather", op_gather, 2},
    {"Slice", op_slice, 3},
    {"Split", op_split, 1},
    {"Expand", op_expand, 2},
    {"Trilu", op_trilu, 1},
    {"Cast", op_cast, 1},
    {"ArgMax", op_argmax, 1},
    {"ArgMin", op_argmax, 1},
    {"CastLike", op_cast, 2},
    {"GatherElements", op_gather_elements, 2},
    {"MatMul", op_matmul, 2},
    {"Gemm", op_gemm, 2},
    {"Conv", op_conv, 2},
    {"ConvTranspose", op_conv, 2},
    {"MaxPool", op_pool, 1},
    {"AveragePool", op_pool, 1},
    {"GlobalAveragePool", op_pool, 1},
    {"GlobalMaxPool", op_pool, 1},
    {"BatchNormalization", op_batchnorm, 5},
    {"LayerNormalization", op_layernorm, 2},
    {"ReduceMean", op_reduce, 1},
    {"ReduceSum", op_reduce, 1},
    {"ReduceMax", op_reduce, 1},
    {"ReduceMin", op_reduce, 1},
    {"ReduceL1", op_reduce, 1},
    {"ReduceL2", op_reduce, 1},
    {"ReduceSumSquare", op_reduce, 1},
    {"ReduceLogSum", op_reduce, 1},
    {"ReduceLogSumExp", op_reduce, 1},
    {"ReduceProd", op_reduce, 1},
    {"DepthToSpace", op_depth_space, 1},
    {"SpaceToDepth", op_depth_space, 1},
    {"Softmax", op_softmax, 1},
    {"LogSoftmax", op_softmax, 1},
    {"Pad", op_pad, 2},
    {"Resize", op_resize, 1},
    {"NegativeLogLikelihoodLoss", op_class_loss, 2},
    {"SoftmaxCrossEntropyLoss", op_class_loss, 2},
    {"LSTM", op_rnn, 3},
    {"GRU", op_rnn, 3},
    /* elementwise, NumPy broadcasting */
    {"Add", op_elementwise, 2},
    {"Sub", op_elementwise, 2},
    {"Mul", op_elementwise, 2},
    {"Div", op_elementwise, 2},
    {"Pow", op_elementwise, 2},
    {"Max", op_elementwise, 1},
    {"Min", op_elementwise, 1},
    {"Sum", op_elementwise, 1},
    {"Mean", op_elementwise, 1},
    {"Equal", op_elementwise, 2},
    {"Less", op_elementwise, 2},
    {"Greater", op_elementwise, 2},
    {"And", op_elementwise, 2},
    {"Or", op_elementwise, 2},
    {"Where", op_elementwise, 3},
    {NULL, op_same, 1}, /* the rest: same shape as input 0 */
};

/* The attributes fold and lift read, by kind: ONNX gives each name one
 * kind in every op that has it.  A hostile file's `perm` of floats must
 * not be read as ints. */
static const struct {
    const char *name;
    OnnxAttrKind kind;
} attr_kinds[] = {
    {"activations", ONNX_ATTR_STRINGS},
    {"axes", ONNX_ATTR_INTS},
    {"clip", ONNX_ATTR_FLOAT},
    {"dilations", ONNX_ATTR_INTS},
    {"kernel_shape", ONNX_ATTR_INTS},
    {"output_padding", ONNX_ATTR_INTS},
    {"output_shape", ONNX_ATTR_INTS},
    {"pads", ONNX_ATTR_INTS},
    {"perm", ONNX_ATTR_INTS},
    {"split", ONNX_ATTR_INTS},
    {"strides", ONNX_ATTR_INTS},
    {"alpha", ONNX_ATTR_FLOAT},
    {"beta", ONNX_ATTR_FLOAT},
    {"epsilon", ONNX_ATTR_FLOAT},
    {"momentum", ONNX_ATTR_FLOAT},
    {"axis", ONNX_ATTR_INT},
    {"keepdims", ONNX_ATTR_INT},
    {"group", ONNX_ATTR_INT},
    {"to", ONNX_ATTR_INT},
    {"auto_pad", ONNX_ATTR_STRING},
    {"mode", ONNX_ATTR_STRING},
    {"reduction", ONNX_ATTR_STRING},
    {"ignore_index", ONNX_ATTR_INT},
    {"select_last_index", ONNX_ATTR_INT},
};

static const char *attr_kind_str(OnnxAttrKind k)
{
    static const char *const names[] = {
        "float",   "int",     "string", "tensor",        "graph",          "floats",     "ints",
        "strings", "tensors", "graphs", "sparse_tensor", "sparse_tensors", "type_proto", "type_protos"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

static int check_attrs(Ctx *c, const OnnxNode *n)
{
    for (int k = 0; k < n->nattrs; k++)
        for (size_t j = 0; j < sizeof attr_kinds / sizeof *attr_kinds; j++)
            if (!strcmp(n->attrs[k].name, attr_kinds[j].name) && n->attrs[k].kind != attr_kinds[j].kind)
                return fail(c, FOLD_MALFORMED, "attribute '%s' is of kind %s, not %s", attr_kinds[j].name,
                            attr_kind_str(n->attrs[k].kind), attr_kind_str(attr_kinds[j].kind));
    return 0;
}

/* The language computes in f32: a run-time integer (an integer input, or
 * an integer a node computes) can only be the ids of an embedding,
 * Gather's and GatherElements' indices, Where's condition (float() of
 * it), the target of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * (float() of it), or pass through Identity, Cast and CastLike (lift maps those)
 * or give its shape.  A bool a node computes (Equal, Less, ...) is an f32
 * mask in the language; a bool input is an i32 like the integers, which
 * Not, And and Or read as float() of it, exactly. */
static int check_int_reads(Ctx *c, const OnnxNode *n, FoldVal **in)
{
    const char *op = n->op_type;
    if (!strcmp(op, "Identity") || !strcmp(op, "Cast") || !strcmp(op, "CastLike") || !strcmp(op, "Shape") ||
        !strcmp(op, "Size"))
        return 0;
    for (int k = 0; k < n->ninputs; k++) {
        const FoldVal *v = in[k];
        if (!v || v->type == ONNX_FLOAT || (v->kind != FV_INPUT && v->kind != FV_NODE) ||
            (v->kind == FV_NODE && v->type == ONNX_BOOL) || (!strcmp(op, "Gather") && k == 1) ||
            (!strcmp(op, "GatherElements") && k == 1) || (!strcmp(op, "Where") && k == 0) ||
            (k == 1 && (!strcmp(op, "NegativeLogLikelihoodLoss") || !strcmp(op, "SoftmaxCrossEntropyLoss"))) ||
            (v->type == ONNX_BOOL && (!strcmp(op, "Not") || !strcmp(op, "And") || !strcmp(op, "Or"))))
            continue;
        return fail(c, FOLD_UNSUPPORTED,
                    "%s reading the %s tensor '%s' at run time (the language computes in f32; its only integer "
                    "tensors are an embedding's ids)",
                    op, type_str(v->type), v->name);
    }
    return 0;
}

/* The outputs an op defines (ONNX's schemas at opsets 13-17: 5 for a
 * BatchNormalization-9, 3 from opset 14; Split's are as many as its
 * parts): a hostile node that names more would leave values that no
 * rule computes. */
static int max_outputs(const char *op)
{
    static const struct {
        const char *op;
        int n;
    } more[] = {
        {"BatchNormalization", 5},      {"Dropout", 2}, {"MaxPool", 2}, {"LSTM", 3}, {"GRU", 2},
        {"SoftmaxCrossEntropyLoss", 2}, {"Split", 64},
    };
    for (size_t k = 0; k < sizeof more / sizeof more[0]; k++)
        if (!strcmp(op, more[k].op))
            return more[k].n;
    return 1;
}

static int run_node(Ctx *c, int idx)
{
    Fold *f = c->f;
    const OnnxNode *n = &c->m->nodes[idx];
    c->n = n;
    FoldVal *in[64], *out[64];
    if (n->ninputs > 64 || n->noutputs > 64)
        return fail(c, FOLD_UNSUPPORTED, "node with %d inputs and %d outputs", n->ninputs, n->noutputs);
    if (n->noutputs > max_outputs(n->op_type))
        return fail(c, FOLD_MALFORMED, "%s with %d outputs (it has %d)", n->op_type, n->noutputs,
                    max_outputs(n->op_type));
    if (check_attrs(c, n))
        return -1;
    int known = 1;
    for (int k = 0; k < n->ninputs; k++) {
        in[k] = fold_val(f, n->inputs[k]);
        if (n->inputs[k][0] && !in[k])
            return fail(c, FOLD_MALFORMED, "input '%s' is not defined", n->inputs[k]);
        if (in[k] && in[k]->kind != FV_CONST)
            known = 0;
    }
    f->node_out[idx] = f->nvals;
    for (int k = 0; k < n->noutputs; k++) {
        /* an omitted optional output still takes a slot, under a name no
         * value can have */
        out[k] = add_val(f, n->outputs[k][0] ? n->outputs[k] : "");
        out[k]->kind = FV_NODE;
        out[k]->node = idx;
        /* the type of input 0 unless the op's rule says otherwise: the
         * shape ops (Reshape, Transpose, ...) keep an integer tensor's */
        out[k]->type = n->ninputs > 0 && in[0] ? in[0]->type : ONNX_FLOAT;
    }
    FOp o = {n, in, n->ninputs, out, n->noutputs, known && is_foldable(n->op_type)};
    const OpRule *r = rules;
    while (r->op && strcmp(r->op, n->op_type))
        r++;
    for (int k = 0; k < r->min_in; k++)
        if (need(c, &o, k))
            return -1;
    if (!strcmp(n->op_type, "Constant"))
        o.known = 1;
    /* after the op's rule, whose checks (a type ONNX does not allow)
     * come first */
    if (r->fn(c, &o) || (!known && check_int_reads(c, n, in)))
        return -1;
    int all = n->noutputs > 0;
    for (int k = 0; k < n->noutputs; k++) {
        if (out[k]->kind != FV_CONST)
            all = 0;
        for (int d = 0; d < out[k]->rank; d++)
            if (out[k]->dims[d].c < 0 || out[k]->dims[d].c > ONNX_MAX_ELEMENTS)
                return fail(c, FOLD_MALFORMED, "an axis of %lld", (long long)out[k]->dims[d].c);
        /* the language's limit, as the reader's on inputs */
        int64_t e = count_of(out[k]);
        if (e < 0 || e > ONNX_MAX_ELEMENTS) {
            char sh[400];
            return fail(c, FOLD_MALFORMED, "'%s' of shape %s: more than %lld elements per example", out[k]->name,
                        fold_shape_str(out[k], sh, sizeof sh), (long long)ONNX_MAX_ELEMENTS);
        }
    }
    f->folded[idx] = (unsigned char)all;
    return 0;
}

Fold *fold_run(const OnnxModel *m, FoldStatus *status)
{
    Fold *f = calloc(1, sizeof *f);
    int total = m->ninputs + m->ninits;
    for (int k = 0; k < m->nnodes; k++)
        total += m->nodes[k].noutputs;
    f->m = m;
    f->vals = calloc((size_t)total + 1, sizeof *f->vals);
    f->node_out = calloc((size_t)m->nnodes + 1, sizeof *f->node_out);
    f->folded = calloc((size_t)m->nnodes + 1, 1);
    f->map = calloc(1, sizeof *f->map);
    size_t cap = 16;
    while (cap < 2 * (size_t)total + 2)
        cap *= 2;
    f->map->cap = cap;
    f->map->slot = calloc(cap, sizeof *f->map->slot);
    if (!f->vals || !f->node_out || !f->folded || !f->map->slot)
        abort();
    Ctx c = {f, m, NULL, FOLD_OK};
    for (int k = 0; k < m->ninputs; k++) {
        const OnnxValue *iv = &m->inputs[k];
        FoldVal *v = add_val(f, iv->name);
        v->kind = FV_INPUT;
        v->input = k;
        v->type = is_float_type(iv->type) ? ONNX_FLOAT : iv->type;
        v->rank = iv->rank;
        if (iv->rank < 0) {
            fail(&c, FOLD_MALFORMED, "input '%s' has no shape", iv->name);
            goto bad;
        }
        for (int d = 0; d < iv->rank; d++) {
            if (iv->dims[d].value == 0) { /* valid ONNX, but no tensor of the language is empty */
                fail(&c, FOLD_UNSUPPORTED, "input '%s' with an axis of size 0 (the language's dims are positive)",
                     iv->name);
                goto bad;
            }
            if (iv->dims[d].value > 0)
                v->dims[d] = (FDim){iv->dims[d].value, 0};
            else if (d == 0)
                v->dims[d] = (FDim){1, 1};
            else {
                fail(&c, FOLD_MALFORMED, "input '%s' has a dynamic axis %d that is not the batch", iv->name, d);
                goto bad;
            }
        }
    }
    for (int k = 0; k < m->ninits; k++) {
        const OnnxTensor *t = &m->inits[k];
        FoldVal *v = add_val(f, t->name);
        v->init = k;
        if (onnx_type_is_float(t->type) && t->rank > 0) {
            v->kind = FV_PARAM;
            v->type = ONNX_FLOAT;
            v->rank = t->rank;
            v->count = t->count;
            for (int d = 0; d < t->rank; d++)
                v->dims[d] = (FDim){t->dims[d], 0};
        } else if (from_tensor(&c, v, t)) {
            goto bad;
        }
    }
    for (int k = 0; k < m->nnodes; k++)
        if (run_node(&c, k))
            goto bad;
    c.n = NULL;
    /* uses: by the nodes that remain, and by the graph's outputs */
    for (int k = 0; k < m->nnodes; k++) {
        if (f->folded[k])
            continue;
        for (int j = 0; j < m->nodes[k].ninputs; j++) {
            FoldVal *v = fold_val(f, m->nodes[k].inputs[j]);
            /* Resize's roi, scales and sizes are read at import time
             * (onnx_lift.c's resize_expr): no param of the model */
            if (v && !(j > 0 && !strcmp(m->nodes[k].op_type, "Resize")))
                v->uses++;
        }
    }
    /* a param becomes a `param` of the model: the language's dims are positive */
    for (int k = 0; k < f->nvals; k++)
        if (f->vals[k].kind == FV_PARAM && f->vals[k].uses && !f->vals[k].count) {
            fail(&c, FOLD_UNSUPPORTED, "initializer '%s' without elements (the language's dims are positive)",
                 f->vals[k].name);
            goto bad;
        }
    for (int k = 0; k < m->noutputs; k++) {
        FoldVal *v = fold_val(f, m->outputs[k].name);
        if (!v) {
            fail(&c, FOLD_MALFORMED, "output '%s' is not computed", m->outputs[k].name);
            goto bad;
        }
        v->uses++;
    }
    *status = FOLD_OK;
    return f;
bad:
    *status = c.status;
    return NULL;
}

void fold_dump(const Fold *f, FILE *out)
{
    static const char *kinds[] = {"input", "param", "const", "node"};
    for (int k = 0; k < f->nvals; k++) {
        const FoldVal *v = &f->vals[k];
        if (!v->name[0])
            continue;
        char s[400];
        fprintf(out, "%-5s %s %s %s", kinds[v->kind], v->name, onnx_type_name(v->type) ? onnx_type_name(v->type) : "?",
                fold_shape_str(v, s, sizeof s));
        if (v->kind == FV_CONST) {
            fputs(" =", out);
            for (int64_t e = 0; e < v->count && e < 16; e++) {
                char t[48];
                if (v->f)
                    fprintf(out, " %.9g", v->f[e]);
                else
                    fprintf(out, " %s", fold_dim_str(v->i[e], t, sizeof t));
            }
            if (v->count > 16)
                fputs(" ...", out);
        }
        if (v->node >= 0 && f->folded[v->node])
            fputs(" (folded)", out);
        fprintf(out, " uses %d\n", v->uses);
    }
}
