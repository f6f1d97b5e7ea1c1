/* emit.c — prints the planned graphs as C (emit_*).
 *
 * Per model: <prefix>.h (typed structs and the API of generated-c.md),
 * <prefix>.c (init, forward, train_forward, backward, eval, save/load,
 * reflection) and, with --emit=driver, <prefix>_main.c (a main() that
 * hands the model to the runtime's driver).  Every size is a constant
 * except the batch: a dim that holds it is printed as `k * n`.
 *
 * Inside a function, each stored tensor is a pointer `tK` (K its node id)
 * into the arena, the params, the state or the caller's arrays; a fused
 * elementwise chain is one loop with one local per node, so a value used
 * twice is computed once.  GEMMs go to cblas_sgemm.  The body of each
 * function is written to memory first, so that only the pointers it uses
 * are declared (no unused-variable warnings at -Wall -Wextra).
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "nnc_conv.h"
#include "plan.h"

static const Model *M;
static const Graph *G;
static const EmitOptions *O;
static FILE *out;           /* the stream being written */
static char *used;          /* per node: its pointer is referenced in this function */
static int in_backward;     /* inputs come from m->in_ (saved by train_forward) */

static char *xs(const char *f, ...)
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

#define P(...) fprintf(out, __VA_ARGS__)

static const char *R(void) { return O->f64 ? "double" : "float"; }
/* a libm function for the real type: "expf" or "exp" */
static const char *fn(const char *name) { return O->f64 ? name : xs("%sf", name); }

static const char *lit(double v)
{
    if (isnan(v))
        return "NAN";
    if (isinf(v))
        return v > 0 ? "INFINITY" : "-INFINITY";
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", v);
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    return xs("%s%s", buf, O->f64 ? "" : "f");
}

/* ---- sizes ----------------------------------------------------------------- */

static const char *dim(Shape s, int i)
{
    if (i == s.bd)
        return s.d[i] == 1 ? "n" : xs("%lld * n", (long long)s.d[i]);
    return xs("%lld", (long long)s.d[i]);
}

static const char *numel(Shape s)
{
    int64_t k = ir_numel(s);
    if (s.bd < 0)
        return xs("%lld", (long long)k);
    return k == 1 ? "(int64_t)n" : xs("%lld * (int64_t)n", (long long)k);
}

/* product of dims [a, b) */
static const char *prod(Shape s, int a, int b)
{
    int64_t k = 1;
    int batch = 0;
    for (int i = a; i < b; i++) {
        k *= s.d[i];
        batch |= i == s.bd;
    }
    if (!batch)
        return xs("%lld", (long long)k);
    return k == 1 ? "(int64_t)n" : xs("%lld * (int64_t)n", (long long)k);
}

/* ---- pointers ---------------------------------------------------------------- */

static const IrNode *nd(int t) { return &G->nodes[t]; }

static char *merged;        /* per node: already computed along with an earlier one */
static char *loop_used;     /* inside a loop block: roots it reads or writes */
static char *loop_wr;       /* ... and the ones it writes besides its own (fused = 2) */

static const char *ref(int t)
{
    int r = plan_storage_root(G, t);
    used[r] = 1;
    if (loop_used) {
        loop_used[r] = 1;
        return xs("r%d", r);
    }
    return xs("t%d", r);
}

/* A loop block gets `restrict` copies of the pointers it uses: tensors
 * live in one loop never overlap (plan.c), so the compiler may vectorize.
 * (Function-wide restrict would be wrong: buffers reuse arena space.) */
static FILE *loop_saved;
static char *loop_text;
static size_t loop_len;

static void loop_begin(void)
{
    loop_used = calloc((size_t)G->n + 1, 1);
    loop_wr = calloc((size_t)G->n + 1, 1);
    loop_saved = out;
    out = open_memstream(&loop_text, &loop_len);
    if (!loop_used || !out)
        abort();
}

static void loop_end(int written)
{
    fclose(out);
    out = loop_saved;
    int w = plan_storage_root(G, written);
    P("    {\n");
    for (int r = 0; r < G->n; r++)
        if (loop_used[r]) {
            const char *ty = nd(r)->dt == DT_I32 ? "int32_t" : R();
            P("    %s%s *restrict const r%d = t%d;\n", r == w || loop_wr[r] ? "" : "const ", ty, r, r);
        }
    fwrite(loop_text, 1, loop_len, out);
    P("    }\n");
    free(loop_text);
    free(loop_used);
    free(loop_wr);
    loop_used = NULL;
    loop_wr = NULL;
}

/* The declaration of a used pointer, at the top of the function, with
 * the tensor's shape (and name, for leaves) in a comment. */
static void declare(int r)
{
    const IrNode *n = nd(r);
    const char *ty = n->dt == DT_I32 ? "int32_t" : R();
    char sb[160];
    const char *shape = ir_shape_str(n->shape, "N", sb, sizeof sb);
    switch (n->op) {
    case IR_PARAM:
        P("    const %s *const t%d = P + %lld; /* %s %s */\n", ty, r, (long long)M->params[n->ival].offset,
          M->params[n->ival].path, shape);
        return;
    case IR_STATE:
        P("    const %s *const t%d = S + %lld; /* %s %s */\n", ty, r, (long long)M->state[n->ival].offset,
          M->state[n->ival].path, shape);
        return;
    case IR_INPUT:
    case IR_LABEL: {
        int lab = n->op == IR_LABEL;
        const IoDecl *io = lab ? &M->labels[n->ival] : &M->inputs[n->ival];
        if (in_backward)
            P("    const %s *const t%d = (const %s *)m->%s_[%d]; /* %s %s */\n", ty, r, ty, lab ? "lab" : "in",
              n->ival, io->name, shape);
        else
            P("    const %s *const t%d = (const %s *)%s; /* %s */\n", ty, r, ty, io->name, shape);
        return;
    }
    default:
        break;
    }
    const Buffer *b = &G->bufs[n->buf];
    if (b->param_grad >= 0)
        P("    %s *const t%d = G + %lld; /* d %s %s */\n", ty, r, (long long)M->params[b->param_grad].offset,
          M->params[b->param_grad].path, shape);
    else if (b->batched)
        P("    %s *const t%d = (%s *)(A + SB + %lld * MB); /* %s */\n", ty, r, ty, (long long)b->off, shape);
    else
        P("    %s *const t%d = (%s *)(A + %lld); /* %s */\n", ty, r, ty, (long long)b->off, shape);
}

/* ---- comments ---------------------------------------------------------------- */

static void comment(const IrNode *n)
{
    if (!n->loc.file) {
        P("    /* %s%s */\n", ir_op_name(n->op), n->backward ? " (backward)" : "");
        return;
    }
    int line, col;
    diag_linecol(n->loc, &line, &col);
    const char *base = strrchr(n->loc.file->path, '/');
    base = base ? base + 1 : n->loc.file->path;
    P("    /* %s:%d  %s%s */\n", base, line, n->what ? n->what : ir_op_name(n->op), n->backward ? " (backward)" : "");
}

/* ---- elementwise loops ---------------------------------------------------------- */

typedef struct Loop {
    Shape s;            /* the loop's shape */
    int nested;         /* index variables i0..i{nd-1} are needed */
    char *seen;         /* nodes already given a local */
    int root;           /* the node the loop computes */
} Loop;

/* The offset of an operand of shape l, aligned right to the first nl dims
 * of the loop shape s (index variables i0..), each position of l's first
 * ll dims counting `unit` elements.  Broadcast dims (size 1 in l) add
 * nothing; the batch dim's extent is n times its multiplier. */
static const char *bcast_offset(Shape s, int nl, Shape l, int ll, const char *unit)
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
            const char *st = kb ? xs("%lld * (int64_t)n", (long long)k) : xs("%lld", (long long)k);
            if (strcmp(unit, "1"))
                st = xs("%s * %s", st, unit);
            idx = xs("%s%si%d * %s", idx, *idx ? " + " : "", i, st);
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
    return bcast_offset(lp->s, lp->s.nd, l, l.nd, "1");
}

static int needs_nested(const Loop *lp, int t)
{
    const IrNode *n = nd(t);
    if ((n->fused == 1 || (n->fused == 2 && lp->root == n->home)) && n->op != IR_CONST) {
        for (int k = 0; k < n->nin; k++)
            if (needs_nested(lp, n->in[k]))
                return 1;
        return 0;
    }
    if (n->op == IR_CONST)
        return 0;
    Shape l = n->shape;
    return !(ir_numel(l) == 1 && l.bd < 0) && !ir_shape_eq(l, lp->s);
}

/* tanh: libm's in double code (the finite-difference checks), else the
 * inline rational one (nnc_tanh_float, below), which vectorizes. */
static const char *tanh_fn(void) { return O->f64 ? "tanh" : "nnc_tanh_float"; }
/* exp where the argument is <= 0 (softmax, cross-entropy): nnc_exp_float */
static const char *exp_fn(void) { return O->f64 ? "exp" : "nnc_exp_float"; }

/* relu of the expression a (0 for NaN), wherever the emitted code applies
 * one: the elementwise op and the relus folded into other ops */
static const char *relu_of(const char *a) { return xs("%s > %s ? %s : %s", a, lit(0), a, lit(0)); }

static const char *unary_expr(const IrNode *n, const char *a)
{
    const char *one = lit(1), *zero = lit(0);
    switch (n->op) {
    case IR_NEG: return xs("-%s", a);
    case IR_RELU: return relu_of(a);
    case IR_SIGMOID: return xs("%s / (%s + %s(-%s))", one, one, fn("exp"), a);
    case IR_TANH: return xs("%s(%s)", tanh_fn(), a);
    case IR_GELU:
        return xs("%s * %s * (%s + %s(%s * (%s + %s * %s * %s * %s)))", lit(0.5), a, one, tanh_fn(),
                  lit(0.7978845608028654), a, lit(0.044715), a, a, a);
    case IR_DGELU:
        return xs("nnc_dgelu_%s(%s)", R(), a);
    case IR_SILU: return xs("%s / (%s + %s(-%s))", a, one, fn("exp"), a);
    case IR_DSILU: return xs("nnc_dsilu_%s(%s)", R(), a);
    case IR_EXP: return xs("%s(%s)", fn("exp"), a);
    case IR_LOG: return xs("%s(%s)", fn("log"), a);
    case IR_SQRT: return xs("%s(%s)", fn("sqrt"), a);
    case IR_RSQRT: return xs("%s / %s(%s)", one, fn("sqrt"), a);
    case IR_ABS: return xs("%s(%s)", fn("fabs"), a);
    case IR_SQUARE: return xs("%s * %s", a, a);
    case IR_POWC:
        if (n->fval == 2)
            return xs("%s * %s", a, a);
        return xs("%s(%s, %s)", fn("pow"), a, lit(n->fval));
    case IR_STEP: return xs("%s > %s ? %s : %s", a, zero, one, zero);
    case IR_SIGN: return xs("(%s)((%s > %s) - (%s < %s))", R(), a, zero, a, zero);
    case IR_EXPAND: return a;
    default: abort();
    }
}

static const char *binary_expr(IrOp op, const char *a, const char *b)
{
    switch (op) {
    case IR_ADD: return xs("%s + %s", a, b);
    case IR_SUB: return xs("%s - %s", a, b);
    case IR_MUL: return xs("%s * %s", a, b);
    case IR_DIV: return xs("%s / %s", a, b);
    case IR_MAXIMUM: return xs("%s >= %s ? %s : %s", a, b, a, b);
    case IR_MINIMUM: return xs("%s <= %s ? %s : %s", a, b, a, b);
    case IR_MAXGRAD: return xs("%s > %s ? %s : %s == %s ? %s : %s", a, b, lit(1), a, b, lit(0.5), lit(0));
    case IR_EQMASK: return xs("%s == %s ? %s : %s", a, b, lit(1), lit(0));
    default: abort();
    }
}

/* Emits locals for t and what it inlines; returns the local's name.  The
 * loop's own node (root) and fused nodes are computed from their operands;
 * anything else is a stored tensor read at the loop position. */
static const char *ew_value(Loop *lp, int t, int root)
{
    const IrNode *n = nd(t);
    if (n->op == IR_CONST) {
        if (n->ival2 == -1)
            return xs("(%s)(%s / (double)n)", R(), lit(n->fval));
        if (n->ival2 == 1)
            return xs("(%s)(%s * (double)n)", R(), lit(n->fval));
        return lit(n->fval);
    }
    if (lp->seen[t])
        return xs("v%d", t);
    lp->seen[t] = 1;
    if (!root && (n->fused < 1 || (n->fused == 2 && lp->root != n->home))) {
        P("        const %s v%d = %s[%s];\n", R(), t, ref(t), leaf_index(lp, n->shape));
        return xs("v%d", t);
    }
    const char *e;
    int st = n->op == IR_MUL ? (nd(n->in[1])->op == IR_STEP && nd(n->in[1])->fused == 1 ? 1
                                : nd(n->in[0])->op == IR_STEP && nd(n->in[0])->fused == 1 ? 0 : -1) : -1;
    if (st >= 0) {
        /* dy * step(x) as a select: no branch on the data, vectorizable */
        const char *x = ew_value(lp, nd(n->in[st])->in[0], 0);
        const char *dy = ew_value(lp, n->in[1 - st], 0);
        lp->seen[n->in[st]] = 1;
        e = xs("%s > %s ? %s : %s", x, lit(0), dy, lit(0));
    } else if (ir_op_class(n->op) == OC_UNARY) {
        e = unary_expr(n, ew_value(lp, n->in[0], 0));
    } else {
        const char *a = ew_value(lp, n->in[0], 0);
        const char *b = ew_value(lp, n->in[1], 0);
        e = binary_expr(n->op, a, b);
    }
    P("        const %s v%d = %s;\n", R(), t, e);
    if (!root && n->fused == 2) {
        /* read again later: stored from here */
        const char *dst = ref(t);
        loop_wr[plan_storage_root(G, t)] = 1;
        P("        %s[i] = v%d;\n", dst, t);
    }
    return xs("v%d", t);
}

static void emit_elementwise(int t)
{
    const IrNode *n = nd(t);
    loop_begin();
    Loop lp;
    lp.s = n->shape;
    lp.seen = calloc((size_t)G->n + 1, 1);
    lp.root = t;
    lp.nested = 0;
    for (int k = 0; k < n->nin; k++)
        lp.nested |= needs_nested(&lp, n->in[k]);
    if (lp.nested) {
        for (int k = 0; k < n->shape.nd; k++)
            P("    %sfor (int64_t i%d = 0; i%d < %s; i%d++)\n", "", k, k, dim(n->shape, k), k);
        P("    {\n");
        const char *flat = "0";
        for (int k = 0; k < n->shape.nd; k++)
            flat = k == 0 ? "i0" : xs("(%s) * %s + i%d", flat, dim(n->shape, k), k);
        P("        const int64_t i = %s;\n", flat);
    } else {
        P("    for (int64_t i = 0; i < %s; i++) {\n", numel(n->shape));
    }
    const char *v = ew_value(&lp, t, 1);
    P("        %s[i] = %s;\n", ref(t), v);
    P("    }\n");
    free(lp.seen);
    loop_end(t);
}

/* ---- contractions and structure ------------------------------------------------ */

static const char *gemm(void) { return O->f64 ? "cblas_dgemm" : "cblas_sgemm"; }

static void loops(Shape s, int upto, const char *indent)
{
    for (int k = 0; k < upto; k++)
        P("%sfor (int64_t i%d = 0; i%d < %s; i%d++)\n", indent, k, k, dim(s, k), k);
}

/* The runtime's kernel for a batched matmul plan.c marked causal (attn.c),
 * or NULL for a GEMM: float only, [T, T] matrices with T a multiple of 16,
 * and the sizes the kernels take. */
static const char *causal_kernel(const IrNode *n)
{
    const Shape so = n->shape, sa = nd(n->in[0])->shape, sb = nd(n->in[1])->shape;
    const int64_t T = so.d[so.nd - 2], N = so.d[so.nd - 1];
    if (O->f64 || !n->causal || T % 16 || sa.bd >= sa.nd - 2 || sb.bd >= sb.nd - 2)
        return NULL;
    if ((n->causal & 2) && !n->tb && N % 16 == 0)
        return n->ta ? "nnc_matmul_lower_tn_f32" : "nnc_matmul_lower_nn_f32";
    const int64_t K = sa.d[sa.nd - 1];
    if ((n->causal & 1) && !n->ta && n->tb && N == T && T * K <= NNC_CAUSAL_NT_MAX)
        return "nnc_matmul_causal_nt_f32";
    return NULL;
}

static void emit_matmul(int t)
{
    const IrNode *n = nd(t);
    Shape so = n->shape, sa = nd(n->in[0])->shape, sb = nd(n->in[1])->shape;
    int no = so.nd;
    const char *M = dim(so, no - 2), *N = dim(so, no - 1);
    const char *K = n->ta ? dim(sa, sa.nd - 2) : dim(sa, sa.nd - 1);
    const char *lda = dim(sa, sa.nd - 1), *ldb = dim(sb, sb.nd - 1);
    const char *TA = n->ta ? "CblasTrans" : "CblasNoTrans", *TB = n->tb ? "CblasTrans" : "CblasNoTrans";
    const char *a = ref(n->in[0]), *b = ref(n->in[1]), *c = ref(t);
    if (sb.nd == 2 && (sa.nd == 2 || !n->ta)) {
        /* one GEMM: the leading dims of A are more rows */
        const char *rows = sa.nd == 2 ? M : prod(so, 0, no - 1);
        P("    %s(CblasRowMajor, %s, %s, (int)(%s), (int)(%s), (int)(%s), %s, %s, (int)(%s), %s, (int)(%s), %s, %s, (int)(%s));\n",
          gemm(), TA, TB, rows, N, K, lit(n->alpha), a, lda, b, ldb, lit(0), c, N);
        return;
    }
    /* batched: one GEMM per matrix of the output, operands broadcast */
    const char *ma = prod(sa, sa.nd - 2, sa.nd), *mb = prod(sb, sb.nd - 2, sb.nd), *mc = prod(so, no - 2, no);
    loops(so, no - 2, "    ");
    P("    {\n");
    const char *flat = "0";
    for (int k = 0; k < no - 2; k++)
        flat = k == 0 ? "i0" : xs("(%s) * %s + i%d", flat, dim(so, k), k);
    P("        const int64_t ic = %s;\n", flat);
    const char *ao = bcast_offset(so, no - 2, sa, sa.nd - 2, ma), *bo = bcast_offset(so, no - 2, sb, sb.nd - 2, mb);
    const char *kernel = causal_kernel(n);
    if (kernel)
        /* plan.c's marks: the products of causal attention, by the triangle */
        P("        %s(%lld, %s, %s, %s + %s, %s, %s + %s, %s, %s + ic * %s, %s);\n", kernel,
          (long long)so.d[no - 2], !strcmp(kernel, "nnc_matmul_causal_nt_f32") ? K : N, lit(n->alpha), a, ao, lda, b,
          bo, ldb, c, mc, N);
    else
        P("        %s(CblasRowMajor, %s, %s, (int)(%s), (int)(%s), (int)(%s), %s, %s + %s, (int)(%s), %s + %s, (int)(%s), %s, %s + ic * %s, (int)(%s));\n",
          gemm(), TA, TB, M, N, K, lit(n->alpha), a, ao, lda, b, bo, ldb, lit(0), c, mc, N);
    P("    }\n");
}

/* stride of dim i of a row-major tensor s */
static const char *stride(Shape s, int i)
{
    return prod(s, i + 1, s.nd);
}

static void emit_permute(int t)
{
    const IrNode *n = nd(t);
    Shape so = n->shape, si = nd(n->in[0])->shape;
    const char *idx = "";
    for (int k = 0; k < so.nd; k++)
        idx = xs("%s%si%d * %s", idx, k ? " + " : "", k, stride(si, n->perm[k]));
    P("    {\n        int64_t o = 0;\n");
    loops(so, so.nd, "        ");
    P("            %s[o++] = %s[%s];\n    }\n", ref(t), ref(n->in[0]), idx);
}

static void emit_concat(int t)
{
    const IrNode *n = nd(t);
    Shape so = n->shape;
    int ax = n->axis;
    const char *outer = prod(so, 0, ax), *ochunk = prod(so, ax, so.nd), *inner = prod(so, ax + 1, so.nd);
    int64_t off = 0;
    for (int k = 0; k < n->nin; k++) {
        Shape si = nd(n->in[k])->shape;
        const char *chunk = prod(si, ax, si.nd);
        P("    for (int64_t o = 0; o < %s; o++)\n", outer);
        P("        memcpy(%s + o * %s + %lld * %s, %s + o * %s, sizeof(%s) * (size_t)(%s));\n", ref(t), ochunk,
          (long long)off, inner, ref(n->in[k]), chunk, R(), chunk);
        off += si.d[ax];
    }
}

/* slice (out = in[start:end] on axis) and pad (its adjoint) */
static void emit_slice(int t, int pad)
{
    const IrNode *n = nd(t);
    Shape big = pad ? n->shape : nd(n->in[0])->shape, small = pad ? nd(n->in[0])->shape : n->shape;
    int ax = n->axis;
    const char *outer = prod(big, 0, ax), *bchunk = prod(big, ax, big.nd), *schunk = prod(small, ax, small.nd);
    const char *skip = xs("%lld * %s", (long long)n->start, prod(big, ax + 1, big.nd));
    if (pad) {
        P("    memset(%s, 0, sizeof(%s) * (size_t)(%s));\n", ref(t), R(), numel(big));
        P("    for (int64_t o = 0; o < %s; o++)\n", outer);
        P("        memcpy(%s + o * %s + %s, %s + o * %s, sizeof(%s) * (size_t)(%s));\n", ref(t), bchunk, skip,
          ref(n->in[0]), schunk, R(), schunk);
    } else {
        P("    for (int64_t o = 0; o < %s; o++)\n", outer);
        P("        memcpy(%s + o * %s, %s + o * %s + %s, sizeof(%s) * (size_t)(%s));\n", ref(t), schunk,
          ref(n->in[0]), bchunk, skip, R(), schunk);
    }
}

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
static void lanes_store(const char *ind, const char *total, const char *store, const char *len, const char *expr)
{
    P("%s{\n", ind);
    P("%s    %s l_[16] = {0};\n%s    int64_t k0_ = 0;\n", ind, R(), ind);
    P("%s    for (; k0_ + 16 <= %s; k0_ += 16)\n", ind, len);
    P("%s        for (int64_t k = k0_; k < k0_ + 16; k++) l_[k - k0_] += %s;\n", ind, expr);
    P("%s    %s s_ = 0;\n%s    for (int64_t k = k0_; k < %s; k++) s_ += %s;\n", ind, total, ind, len, expr);
    P("%s    for (int j = 0; j < 16; j++) s_ += l_[j];\n%s    %s s_;\n%s}\n", ind, ind, store, ind);
}

/* Reductions: loops over the kept dims outside, the reduced dims inside,
 * accumulating in double (a BatchNorm mean runs over N*H*W elements). */
static void emit_reduce(int t)
{
    const IrNode *n = nd(t);
    loop_begin();
    Shape si = nd(n->in[0])->shape;
    const char *y = ref(t), *x = ref(n->in[0]);
    uint32_t axes = collapse_dims(&si, n->axes);
    int lead = 0;                      /* reduced dims [0, lead), kept dims after */
    while (lead < si.nd && (axes & (1u << lead)))
        lead++;
    int prefix = lead > 0 && lead < si.nd && (axes >> lead) == 0 && n->op == IR_SUM;
    if (prefix) {
        /* a sum over leading dims (a bias gradient): row by row into the
         * output, so the inner loop is contiguous and vectorizes */
        P("    {\n        const int64_t rows = %s, K = %s;\n", prod(si, 0, lead), prod(si, lead, si.nd));
        P("        memset(%s, 0, sizeof(%s) * (size_t)K);\n", y, R());
        P("        for (int64_t r = 0; r < rows; r++)\n");
        P("            for (int64_t k = 0; k < K; k++)\n                %s[k] += %s[r * K + k];\n    }\n", y, x);
        loop_end(t);
        return;
    }
    const char *xidx = "";
    for (int i = 0; i < si.nd; i++)
        xidx = xs("%s%si%d * %s", xidx, i ? " + " : "", i, stride(si, i));
    if (!*xidx)
        xidx = "0";
    int last = si.nd - 1;
    /* a sum over a contiguous last dim: 16 float lanes per row, row totals
     * in double, so the adds are not one serial chain */
    int lanes = n->op != IR_MAX && (axes & (1u << last)) && last != si.bd;
    P("    {\n        int64_t o = 0;\n");
    for (int i = 0; i < si.nd; i++)
        if (!(axes & (1u << i)))
            P("        for (int64_t i%d = 0; i%d < %s; i%d++)\n", i, i, dim(si, i), i);
    P("        {\n            double acc = %s;\n", n->op == IR_MAX ? "-INFINITY" : "0");
    for (int i = 0; i < (lanes ? last : si.nd); i++)
        if (axes & (1u << i))
            P("            for (int64_t i%d = 0; i%d < %s; i%d++)\n", i, i, dim(si, i), i);
    if (lanes) {
        const char *rowbase = "";
        for (int i = 0; i < last; i++)
            rowbase = xs("%s%si%d * %s", rowbase, i ? " + " : "", i, stride(si, i));
        P("            {\n                const %s *row = %s + %s;\n", R(), x, *rowbase ? rowbase : "0");
        lanes_store("                ", "double", "acc +=", xs("%lld", (long long)si.d[last]), "row[k]");
        P("            }\n");
    } else if (n->op == IR_MAX)
        P("                { const double v = %s[%s]; if (v > acc) acc = v; }\n", x, xidx);
    else
        P("                acc += %s[%s];\n", x, xidx);
    if (n->op == IR_MEAN) {
        double c = 1;
        int npow = 0;
        for (int i = 0; i < si.nd; i++)
            if (axes & (1u << i)) {
                c *= (double)si.d[i];
                npow |= i == si.bd;
            }
        P("            %s[o++] = (%s)(acc / (%s%s));\n", y, R(), lit(c), npow ? " * (double)n" : "");
    } else {
        P("            %s[o++] = (%s)acc;\n", y, R());
    }
    P("        }\n    }\n");
    loop_end(t);
}

/* `name` = the sum of expr over k in [0, len), in the element type */
static void lanes_sum(const char *ind, const char *name, const char *len, const char *expr)
{
    P("%s%s %s;\n", ind, R(), name);
    lanes_store(ind, R(), xs("%s =", name), len, expr);
}

/* Softmax and its backward over a contiguous last dim, row by row: lane
 * reductions and a branch-free exp, so each pass vectorizes.  `alpha`
 * scales the input (forward) or dx (backward); a causal op handles row i of
 * each [T, T] matrix as its first i + 1 entries and writes zeros after. */
static void emit_softmax_rows(int t)
{
    const IrNode *n = nd(t);
    Shape s = n->shape;
    int64_t L = s.d[s.nd - 1];
    const char *y = ref(t), *a = n->alpha != 1 ? xs("%s * ", lit(n->alpha)) : "";
    P("    for (int64_t r = 0; r < %s; r++) {\n", prod(s, 0, s.nd - 1));
    P("        const int64_t len = %s;\n", n->causal ? xs("r %% %lld + 1", (long long)L) : xs("%lld", (long long)L));
    P("        %s *restrict yr = %s + r * %lld;\n", R(), y, (long long)L);
    if (n->op == IR_SOFTMAX) {
        P("        const %s *restrict xr = %s + r * %lld;\n", R(), ref(n->in[0]), (long long)L);
        P("        %s mx;\n        {\n            %s l_[16];\n", R(), R());
        P("            for (int j = 0; j < 16; j++) l_[j] = -INFINITY;\n            int64_t k0_ = 0;\n");
        P("            for (; k0_ + 16 <= len; k0_ += 16)\n");
        P("                for (int j = 0; j < 16; j++) { const %s v = %sxr[k0_ + j]; l_[j] = v > l_[j] ? v : l_[j]; }\n", R(), a);
        P("            mx = -INFINITY;\n");
        P("            for (int64_t k = k0_; k < len; k++) { const %s v = %sxr[k]; mx = v > mx ? v : mx; }\n", R(), a);
        P("            for (int j = 0; j < 16; j++) mx = l_[j] > mx ? l_[j] : mx;\n        }\n");
        P("        for (int64_t k = 0; k < len; k++) yr[k] = %s(%sxr[k] - mx);\n", exp_fn(), a);
        lanes_sum("        ", "sum", "len", "yr[k]");
        P("        const %s inv = %s / sum;\n", R(), lit(1));
        P("        for (int64_t k = 0; k < len; k++) yr[k] *= inv;\n");
    } else {
        const char *dy = ref(n->in[0]), *yy = ref(n->in[1]);
        P("        const %s *restrict dr = %s + r * %lld, *restrict pr = %s + r * %lld;\n", R(), dy, (long long)L, yy,
          (long long)L);
        lanes_sum("        ", "dot", "len", "dr[k] * pr[k]");
        P("        for (int64_t k = 0; k < len; k++) yr[k] = %spr[k] * (dr[k] - dot);\n", a);
    }
    if (n->causal)
        P("        for (int64_t k = len; k < %lld; k++) yr[k] = %s;\n", (long long)L, lit(0));
    P("    }\n");
}

/* Row-wise ops over `axis`: outer x len x inner, rows strided by inner. */
static void row_loops(Shape s, int ax)
{
    P("    for (int64_t o = 0; o < %s; o++)\n", prod(s, 0, ax));
    P("    for (int64_t j = 0; j < %s; j++) {\n", prod(s, ax + 1, s.nd));
    P("        const int64_t base = o * %s + j, st = %s, len = %s;\n", prod(s, ax, s.nd), prod(s, ax + 1, s.nd),
      dim(s, ax));
}

static void emit_rowop(int t)
{
    const IrNode *n = nd(t);
    Shape s = nd(n->in[0])->shape;
    const char *y = ref(t);
    if (ir_softmax_by_rows(n)) {
        emit_softmax_rows(t);
        return;
    }
    switch (n->op) {
    case IR_SOFTMAX:
    case IR_LOG_SOFTMAX: {
        const char *x = ref(n->in[0]);
        row_loops(s, n->axis);
        P("        %s mx = -INFINITY;\n", R());
        P("        for (int64_t k = 0; k < len; k++) if (%s[base + k * st] > mx) mx = %s[base + k * st];\n", x, x);
        P("        double sum = 0;\n");
        if (n->op == IR_SOFTMAX) {
            P("        for (int64_t k = 0; k < len; k++) { const %s e = %s(%s[base + k * st] - mx); %s[base + k * st] = e; sum += e; }\n",
              R(), fn("exp"), x, y);
            P("        const %s inv = (%s)(1.0 / sum);\n", R(), R());
            P("        for (int64_t k = 0; k < len; k++) %s[base + k * st] *= inv;\n", y);
        } else {
            P("        for (int64_t k = 0; k < len; k++) sum += %s(%s[base + k * st] - mx);\n", fn("exp"), x);
            P("        const %s lse = mx + (%s)log(sum);\n", R(), R());
            P("        for (int64_t k = 0; k < len; k++) %s[base + k * st] = %s[base + k * st] - lse;\n", y, x);
        }
        P("    }\n");
        break;
    }
    case IR_SOFTMAX_BWD:
    case IR_LOG_SOFTMAX_BWD: {
        const char *dy = ref(n->in[0]), *yy = ref(n->in[1]);
        row_loops(s, n->axis);
        P("        double dot = 0;\n");
        if (n->op == IR_SOFTMAX_BWD) {
            P("        for (int64_t k = 0; k < len; k++) dot += (double)%s[base + k * st] * %s[base + k * st];\n", dy, yy);
            P("        for (int64_t k = 0; k < len; k++) %s[base + k * st] = %s[base + k * st] * (%s[base + k * st] - (%s)dot);\n",
              y, yy, dy, R());
        } else {
            P("        for (int64_t k = 0; k < len; k++) dot += %s[base + k * st];\n", dy);
            P("        for (int64_t k = 0; k < len; k++) %s[base + k * st] = %s[base + k * st] - %s(%s[base + k * st]) * (%s)dot;\n",
              y, dy, fn("exp"), yy, R());
        }
        P("    }\n");
        break;
    }
    case IR_ARGMAX: {
        const char *x = ref(n->in[0]);
        row_loops(s, n->axis);
        P("        int32_t best = 0;\n");
        P("        for (int64_t k = 1; k < len; k++) if (%s[base + k * st] > %s[base + best * st]) best = (int32_t)k;\n", x, x);
        P("        %s[o * st + j] = best;\n    }\n", y);
        break;
    }
    default:
        abort();
    }
}

/* A scalar operand: a constant is inlined, anything else read at [0]. */
static const char *scalar(int t)
{
    const IrNode *n = nd(t);
    if (n->op == IR_CONST && n->fused == 1)
        return n->ival2 ? xs("(%s)(%s %s (double)n)", R(), lit(n->fval), n->ival2 < 0 ? "/" : "*") : lit(n->fval);
    return xs("%s[0]", ref(t));
}

static void emit_loss(int t)
{
    const IrNode *n = nd(t);
    const char *y = ref(t);
    Shape s = nd(n->in[n->op == IR_CE_BWD ? 1 : 0])->shape;
    switch (n->op) {
    case IR_CROSS_ENTROPY:
    case IR_ACCURACY:
    case IR_CE_BWD: {
        int li = n->op == IR_CE_BWD ? 1 : 0;
        const char *x = ref(n->in[li]), *lab = ref(n->in[li + 1]);
        int64_t C = s.d[s.nd - 1];
        const char *rows = prod(s, 0, s.nd - 1);
        P("    {\n        const int64_t rows = %s, C = %lld;\n", rows, (long long)C);
        if (n->op == IR_ACCURACY) {
            P("        int64_t hits = 0;\n");
            P("        for (int64_t r = 0; r < rows; r++) {\n");
            P("            const %s *row = %s + r * C;\n            int64_t best = 0;\n", R(), x);
            P("            for (int64_t c = 1; c < C; c++) if (row[c] > row[best]) best = c;\n");
            P("            hits += best == %s[r];\n        }\n", lab);
            P("        %s[0] = (%s)((double)hits / (double)rows);\n    }\n", y, R());
            return;
        }
        /* ignore_index -100; another out-of-range id makes the loss NaN */
        P("        int64_t count = 0;\n        int bad = 0;\n");
        P("        for (int64_t r = 0; r < rows; r++) {\n");
        P("            const int32_t c = %s[r];\n", lab);
        P("            if (c == -100) continue;\n            if (c < 0 || c >= C) bad = 1; else count++;\n        }\n");
        if (n->op == IR_CROSS_ENTROPY) {
            P("        double total = 0;\n");
            P("        for (int64_t r = 0; r < rows; r++) {\n");
            P("            const int32_t c = %s[r];\n            if (c < 0 || c >= C) continue;\n", lab);
            P("            const %s *row = %s + r * C;\n            %s mx = row[0];\n", R(), x, R());
            P("            for (int64_t k = 1; k < C; k++) if (row[k] > mx) mx = row[k];\n");
            lanes_sum("            ", "sum", "C", xs("%s(row[k] - mx)", exp_fn()));
            P("            total += log((double)sum) + (double)mx - (double)row[c];\n        }\n");
            P("        %s[0] = bad ? (%s)NAN : (%s)(total / (double)count);\n    }\n", y, R(), R());
        } else {
            P("        const %s scale = bad ? (%s)NAN : (%s)((double)%s / (double)count);\n", R(), R(), R(), scalar(n->in[0]));
            P("        for (int64_t r = 0; r < rows; r++) {\n");
            P("            const int32_t c = %s[r];\n            const %s *row = %s + r * C;\n            %s *d = %s + r * C;\n",
              lab, R(), x, R(), y);
            P("            if (c == -100) { memset(d, 0, sizeof(%s) * (size_t)C); continue; }\n", R());
            P("            %s mx = row[0];\n            for (int64_t k = 1; k < C; k++) if (row[k] > mx) mx = row[k];\n", R());
            P("            for (int64_t k = 0; k < C; k++) d[k] = %s(row[k] - mx);\n", exp_fn());
            lanes_sum("            ", "sum", "C", "d[k]");
            P("            const %s inv = scale / sum;\n", R());
            P("            for (int64_t k = 0; k < C; k++) d[k] *= inv;\n");
            P("            if (c >= 0 && c < C) d[c] -= scale;\n        }\n    }\n");
        }
        return;
    }
    case IR_MSE:
    case IR_BCE_LOGITS: {
        const char *a = ref(n->in[0]), *b = ref(n->in[1]);
        P("    {\n        double total = 0;\n");
        P("        for (int64_t i = 0; i < %s; i++) {\n", numel(s));
        if (n->op == IR_MSE)
            P("            const double d = (double)%s[i] - (double)%s[i];\n            total += d * d;\n", a, b);
        else
            P("            const double x = %s[i], z = %s[i];\n            total += (x > 0 ? x : 0) - x * z + log1p(exp(-fabs(x)));\n",
              a, b);
        P("        }\n        %s[0] = (%s)(total / (double)(%s));\n    }\n", y, R(), numel(s));
        return;
    }
    default:
        abort();
    }
}

/* A later node computing `op` from the same dy (and x) as layer norm's
 * backward t, whose result goes straight to a param's gradient (so its
 * buffer exists at t's position too): layer norm's dweight, or the sum of
 * dy over rows that is its dbias.  Such nodes are computed in t's row loop;
 * -1 if there is none. */
static int ln_partner(int t, IrOp op)
{
    const IrNode *n = nd(t);
    int D = (int)n->shape.d[n->shape.nd - 1];
    for (int j = t + 1; j < G->n; j++) {
        const IrNode *c = nd(j);
        if (c->op != op || c->fused < 0 || c->in[0] != n->in[0] || c->buf < 0 || G->bufs[c->buf].param_grad < 0)
            continue;
        if (op == IR_LAYER_NORM_WGRAD && c->in[1] == n->in[1] && c->fval == n->fval)
            return j;
        Shape si = nd(c->in[0])->shape;
        if (op == IR_SUM && ir_numel(c->shape) == D && c->axes == (1u << (si.nd - 1)) - 1)
            return j;
    }
    return -1;
}

/* Embeddings, layer norm and the causal mask (sequence models). */
static void emit_seq_op(int t)
{
    const IrNode *n = nd(t);
    const char *y = ref(t);
    switch (n->op) {
    case IR_EMBEDDING:
    case IR_EMBEDDING_BWD: {
        int bwd = n->op == IR_EMBEDDING_BWD;
        Shape tab = bwd ? n->shape : nd(n->in[1])->shape;
        const char *ids = ref(n->in[bwd ? 1 : 0]), *src = ref(n->in[bwd ? 0 : 1]);
        int64_t V = tab.d[0], D = tab.d[1];
        P("    {\n        const int64_t rows = %s, V = %lld, D = %lld;\n", numel(nd(n->in[bwd ? 1 : 0])->shape),
          (long long)V, (long long)D);
        if (bwd)
            P("        memset(%s, 0, sizeof(%s) * (size_t)(V * D));\n", y, R());
        P("        for (int64_t r = 0; r < rows; r++) {\n            const int32_t id = %s[r];\n", ids);
        if (bwd) {
            P("            if (id < 0 || id >= V) continue;\n");
            P("            for (int64_t k = 0; k < D; k++) %s[id * D + k] += %s[r * D + k];\n", y, src);
        } else {
            /* an out-of-range id reads nothing: its row is NaN (spec section 7) */
            P("            if (id < 0 || id >= V) { for (int64_t k = 0; k < D; k++) %s[r * D + k] = (%s)NAN; continue; }\n", y, R());
            P("            memcpy(%s + r * D, %s + id * D, sizeof(%s) * (size_t)D);\n", y, src, R());
        }
        P("        }\n    }\n");
        return;
    }
    case IR_LAYER_NORM:
    case IR_LAYER_NORM_BWD:
    case IR_LAYER_NORM_WGRAD: {
        /* each pass recomputes the row's statistics (two lane-summed passes
         * over a row in cache) instead of keeping them: cheaper than the
         * extra outputs, and the same numbers forward and backward */
        int xi = n->op == IR_LAYER_NORM ? 0 : 1;
        Shape s = nd(n->in[xi])->shape;
        const char *x = ref(n->in[xi]);
        /* dx, dweight and dbias in one pass over the rows */
        int wg = n->op == IR_LAYER_NORM_BWD ? ln_partner(t, IR_LAYER_NORM_WGRAD) : -1;
        int bg = n->op == IR_LAYER_NORM_BWD ? ln_partner(t, IR_SUM) : -1;
        P("    {\n        const int64_t rows = %s, D = %lld;\n", prod(s, 0, s.nd - 1), (long long)s.d[s.nd - 1]);
        if (n->op == IR_LAYER_NORM_WGRAD)
            P("        memset(%s, 0, sizeof(%s) * (size_t)D);\n", y, R());
        if (wg >= 0)
            P("        memset(%s, 0, sizeof(%s) * (size_t)D);\n", ref(wg), R());
        if (bg >= 0)
            P("        memset(%s, 0, sizeof(%s) * (size_t)D);\n", ref(bg), R());
        P("        for (int64_t r = 0; r < rows; r++) {\n");
        P("            const %s *restrict xr = %s + r * D;\n", R(), x);
        lanes_sum("            ", "sx", "D", "xr[k]");
        P("            const %s mu = sx / (%s)D;\n", R(), R());
        lanes_sum("            ", "sd", "D", "(xr[k] - mu) * (xr[k] - mu)");
        P("            const %s rstd = %s / %s(sd / (%s)D + %s);\n", R(), lit(1), fn("sqrt"), R(), lit(n->fval));
        if (n->op == IR_LAYER_NORM) {
            const char *w = ref(n->in[1]), *b = ref(n->in[2]);
            P("            for (int64_t k = 0; k < D; k++) %s[r * D + k] = (xr[k] - mu) * rstd * %s[k] + %s[k];\n", y, w, b);
        } else if (n->op == IR_LAYER_NORM_BWD) {
            /* dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w */
            const char *dy = ref(n->in[0]), *w = ref(n->in[2]);
            P("            const %s *restrict dr = %s + r * D;\n", R(), dy);
            lanes_sum("            ", "sg", "D", xs("dr[k] * %s[k]", w));
            lanes_sum("            ", "sgx", "D", xs("dr[k] * %s[k] * (xr[k] - mu)", w));
            P("            const %s mg = sg / (%s)D, mgx = sgx * rstd / (%s)D;\n", R(), R(), R());
            P("            for (int64_t k = 0; k < D; k++) %s[r * D + k] = rstd * (dr[k] * %s[k] - mg - (xr[k] - mu) * rstd * mgx);\n", y, w);
            if (wg >= 0) {
                merged[wg] = 1;
                P("            for (int64_t k = 0; k < D; k++) %s[k] += dr[k] * (xr[k] - mu) * rstd;\n", ref(wg));
            }
            if (bg >= 0) {
                merged[bg] = 1;
                P("            for (int64_t k = 0; k < D; k++) %s[k] += dr[k];\n", ref(bg));
            }
        } else {
            const char *dy = ref(n->in[0]);
            P("            for (int64_t k = 0; k < D; k++) %s[k] += %s[r * D + k] * (xr[k] - mu) * rstd;\n", y, dy);
        }
        P("        }\n    }\n");
        return;
    }
    case IR_CAUSAL_MASK: {
        Shape s = n->shape;
        int64_t T = s.d[s.nd - 1];
        P("    {\n        const int64_t mats = %s, T = %lld;\n", prod(s, 0, s.nd - 2), (long long)T);
        P("        for (int64_t b = 0; b < mats; b++)\n        for (int64_t i = 0; i < T; i++)\n        for (int64_t j = 0; j < T; j++)\n");
        P("            %s[(b * T + i) * T + j] = j > i ? %s : %s[(b * T + i) * T + j];\n    }\n", y,
          n->ival ? lit(0) : "-INFINITY", ref(n->in[0]));
        return;
    }
    default:
        abort();
    }
}

/* 2x2 windows at stride 2 in float: runtime/pool.c's vector code */
static int maxpool2(const IrNode *n)
{
    return !O->f64 && n->kh == 2 && n->kw == 2 && n->stride == 2;
}

static int maxpool_tiles(const IrNode *n)
{
    return n->op == IR_MAXPOOL_BWD && n->stride == n->kh && n->stride == n->kw && !maxpool2(n);
}

/* (NC, H, W, x, [dy,] y or dx[, relu]) */
static void emit_maxpool2(int t)
{
    const IrNode *n = nd(t);
    Shape x = n->op == IR_MAXPOOL ? nd(n->in[0])->shape : n->shape;
    const char *nc = xs("%s * %lld", dim(x, 0), (long long)x.d[1]);
    if (n->op == IR_MAXPOOL)
        P("    nnc_maxpool2_f32(%s, %lld, %lld, %s, %s);\n", nc, (long long)x.d[2], (long long)x.d[3], ref(n->in[0]),
          ref(t));
    else /* with relu's gradient where plan.c folded it (fold_relu_pool) */
        P("    nnc_maxpool2_bwd_f32(%s, %lld, %lld, %s, %s, %s, %d);\n", nc, (long long)x.d[2], (long long)x.d[3],
          ref(n->in[1]), ref(n->in[0]), ref(t), n->ival ? 1 : 0);
}

/* Max-pool backward when the windows tile the image (stride == size):
 * each input element is in at most one window, so every element of a
 * window is written once, dy at the window's first maximum and 0
 * elsewhere, and only the elements no window covers are cleared: no
 * memset of dx and no scattered read-modify-write. */
static void emit_maxpool_bwd_tiled(int t)
{
    const IrNode *n = nd(t);
    Shape x = n->shape, o = nd(n->in[0])->shape;
    const char *dx = ref(t), *dy = ref(n->in[0]), *xp = ref(n->in[1]);
    P("    {\n        const int64_t N = %s, C = %lld, H = %lld, W = %lld, OH = %lld, OW = %lld, K = %d;\n", dim(x, 0),
      (long long)x.d[1], (long long)x.d[2], (long long)x.d[3], (long long)o.d[2], (long long)o.d[3], n->kh);
    P("        for (int64_t bc = 0; bc < N * C; bc++) {\n");
    P("            const %s *img = %s + bc * H * W;\n            %s *dimg = %s + bc * H * W;\n", R(), xp, R(), dx);
    P("            for (int64_t oh = 0; oh < OH; oh++) {\n");
    P("                for (int64_t ow = 0; ow < OW; ow++) {\n");
    P("                    const %s *win = img + oh * K * W + ow * K;\n", R());
    /* PyTorch's rule: the first maximum in scan order, or the last NaN (a
     * NaN replaces the running maximum, and only a later NaN replaces it);
     * selected with integer masks, not branches (compilers turn `c ? g :
     * 0` into jumps, which random data mispredicts: lenet5's pool1
     * backward took 1.2 ms, 0.25 ms this way) */
    P("                    %s m = win[0];\n                    int64_t best = 0;\n", R());
    P("                    for (int64_t ki = 0; ki < K; ki++)\n                    for (int64_t kj = 0; kj < K; kj++) {\n");
    P("                        const %s v = win[ki * W + kj];\n                        const int64_t s = (v > m) | (v != v);\n", R());
    P("                        m = s ? v : m;\n                        best ^= (best ^ (ki * K + kj)) & -s;\n                    }\n");
    P("                    const %s g = %s[(bc * OH + oh) * OW + ow];\n", R(), dy);
    P("                    %s *dwin = dimg + oh * K * W + ow * K;\n", R());
    P("                    for (int64_t ki = 0; ki < K; ki++)\n                    for (int64_t kj = 0; kj < K; kj++)\n");
    if (n->ival) /* and relu's gradient (plan.c fold_relu_pool): step(x), x its output */
        P("                        dwin[ki * W + kj] = nnc_keep_%s(g, (ki * K + kj == best) & (win[ki * W + kj] > %s));\n",
          R(), lit(0));
    else
        P("                        dwin[ki * W + kj] = nnc_keep_%s(g, ki * K + kj == best);\n", R());
    P("                }\n");
    if (x.d[3] > o.d[3] * n->kh) {
        P("                for (int64_t r = oh * K; r < oh * K + K; r++)\n");
        P("                    for (int64_t c = OW * K; c < W; c++) dimg[r * W + c] = %s;\n", lit(0));
    }
    P("            }\n");
    if (x.d[2] > o.d[2] * n->kh)
        P("            memset(dimg + OH * K * W, 0, sizeof(%s) * (size_t)((H - OH * K) * W));\n", R());
    P("        }\n    }\n");
}

/* im2col/col2im and the pools, NCHW.  im2col lays each example's patches
 * out as [C*KH*KW, OH*OW], the right operand of one GEMM per example. */
static void emit_vision_op(int t)
{
    const IrNode *n = nd(t);
    const char *y = ref(t);
    int bwd = n->op == IR_COL2IM || n->op == IR_MAXPOOL_BWD || n->op == IR_AVGPOOL_BWD;
    Shape x = bwd ? n->shape : nd(n->in[0])->shape;        /* the image side */
    Shape o = bwd ? nd(n->in[0])->shape : n->shape;        /* the patch side */
    const char *src = ref(n->in[0]);
    int64_t C = x.d[1], H = x.d[2], W = x.d[3];
    int64_t OH, OW;
    if (n->op == IR_IM2COL || n->op == IR_COL2IM) {
        OH = (H + 2 * n->pad - n->kh) / n->stride + 1;
        OW = (W + 2 * n->pad - n->kw) / n->stride + 1;
    } else {
        OH = o.d[2], OW = o.d[3];
    }
    P("    {\n        const int64_t N = %s, C = %lld, H = %lld, W = %lld, OH = %lld, OW = %lld;\n", dim(x, 0),
      (long long)C, (long long)H, (long long)W, (long long)OH, (long long)OW);
    P("        const int64_t KH = %d, KW = %d, S = %d, PD = %d;\n        (void)PD;\n", n->kh, n->kw, n->stride, n->pad);
    if (bwd)
        P("        memset(%s, 0, sizeof(%s) * (size_t)(N * C * H * W));\n", y, R());
    switch (n->op) {
    case IR_IM2COL:
    case IR_COL2IM:
        P("        for (int64_t b = 0; b < N; b++)\n        for (int64_t c = 0; c < C; c++)\n");
        P("        for (int64_t ki = 0; ki < KH; ki++)\n        for (int64_t kj = 0; kj < KW; kj++) {\n");
        /* col is [C*KH*KW, N*OH*OW]: row (c, ki, kj), column (b, oh, ow) */
        P("            const int64_t row = (c * KH + ki) * KW + kj, cols = N * OH * OW, col0 = b * OH * OW;\n");
        /* the in-bounds columns of each row are a range [lo, hi): no test
         * per element, and at stride 1 a contiguous copy or add */
        P("            const int64_t lo = kj < PD ? (PD - kj + S - 1) / S : 0;\n");
        P("            int64_t hi = W - 1 + PD - kj >= 0 ? (W - 1 + PD - kj) / S + 1 : 0;\n");
        P("            if (hi > OW) hi = OW;\n");
        P("            for (int64_t oh = 0; oh < OH; oh++) {\n");
        P("                const int64_t ih = oh * S - PD + ki;\n");
        P("                %s *crow = %s + row * cols + col0 + oh * OW;\n", n->op == IR_IM2COL ? R() : xs("const %s", R()),
          n->op == IR_IM2COL ? y : src);
        P("                const int64_t base = ((b * C + c) * H + ih) * W - PD + kj;\n");
        if (n->op == IR_IM2COL) {
            P("                if (ih < 0 || ih >= H) { memset(crow, 0, sizeof(%s) * (size_t)OW); continue; }\n", R());
            P("                for (int64_t ow = 0; ow < lo && ow < OW; ow++) crow[ow] = %s;\n", lit(0));
            P("                for (int64_t ow = lo; ow < hi; ow++) crow[ow] = %s[base + ow * S];\n", src);
            P("                for (int64_t ow = hi > lo ? hi : lo; ow < OW; ow++) crow[ow] = %s;\n", lit(0));
        } else {
            P("                if (ih < 0 || ih >= H) continue;\n");
            P("                for (int64_t ow = lo; ow < hi; ow++) %s[base + ow * S] += crow[ow];\n", y);
        }
        P("            }\n        }\n    }\n");
        return;
    default:
        break;
    }
    /* pools: one window per output position */
    P("        for (int64_t bc = 0; bc < N * C; bc++)\n        for (int64_t oh = 0; oh < OH; oh++)\n");
    P("        for (int64_t ow = 0; ow < OW; ow++) {\n");
    P("            const int64_t op = (bc * OH + oh) * OW + ow;\n");
    if (n->op != IR_AVGPOOL_BWD)
        P("            const %s *win = %s + (bc * H + oh * S) * W + ow * S;\n", R(),
          n->op == IR_MAXPOOL_BWD ? ref(n->in[1]) : src);
    switch (n->op) {
    case IR_MAXPOOL:
        /* the maximum, or NaN if the window has one, as PyTorch: a select
         * without a branch (the index form below, with its branch
         * mispredicted on real data, took 3-4x as long) */
        P("            %s m = win[0];\n", R());
        P("            for (int64_t ki = 0; ki < KH; ki++)\n            for (int64_t kj = 0; kj < KW; kj++) {\n");
        P("                const %s v = win[ki * W + kj];\n                m = ((v > m) | (v != v)) ? v : m;\n            }\n", R());
        P("            %s[op] = m;\n", y);
        break;
    case IR_MAXPOOL_BWD:
        /* the first maximum in scan order, or the last NaN, as PyTorch */
        P("            int64_t best = 0;\n");
        P("            for (int64_t ki = 0; ki < KH; ki++)\n            for (int64_t kj = 0; kj < KW; kj++)\n");
        P("                if (win[ki * W + kj] > win[best] || win[ki * W + kj] != win[ki * W + kj]) best = ki * W + kj;\n");
        P("            %s[(bc * H + oh * S) * W + ow * S + best] += %s[op];\n", y, src);
        break;
    case IR_AVGPOOL:
        P("            double acc = 0;\n");
        P("            for (int64_t ki = 0; ki < KH; ki++)\n            for (int64_t kj = 0; kj < KW; kj++) acc += win[ki * W + kj];\n");
        P("            %s[op] = (%s)(acc / (double)(KH * KW));\n", y, R());
        break;
    case IR_AVGPOOL_BWD:
        P("            const %s g = %s[op] / (%s)(KH * KW);\n", R(), src, R());
        P("            for (int64_t ki = 0; ki < KH; ki++)\n            for (int64_t kj = 0; kj < KW; kj++)\n");
        P("                %s[(bc * H + oh * S + ki) * W + ow * S + kj] += g;\n", y);
        break;
    default:
        abort();
    }
    P("        }\n    }\n");
}

/* BatchNorm (elab.c's batch_norm_prim) over x [N, C, ...] as [N, C, L]:
 * channel c is N rows of L contiguous elements.  The channel sums are
 * runtime/bn.c's in float (vector code over blocks of channels in memory
 * order); in double (the finite-difference checks' precision) they stay
 * plain loops that walk the channels one by one, 16 lanes per row with
 * row totals in double.  The elementwise ops run in memory order. */
static void emit_bn_op(int t)
{
    const IrNode *n = nd(t);
    Shape s = nd(n->in[n->op == IR_BN_STATS || n->op == IR_BN_NORM ? 0 : 1])->shape;
    loop_begin();
    const char *y = ref(t);
    P("    {\n        const int64_t N = %s, C = %lld, L = %s;\n", dim(s, 0), (long long)s.d[1], prod(s, 2, s.nd));
    P("        const double M = (double)N * (double)L;   /* elements per channel */\n");
    switch (n->op) {
    case IR_BN_STATS: {
        const char *x = ref(n->in[0]);
        if (!O->f64) { /* runtime/bn.c: the same sums as vectors */
            P("        (void)M;\n        nnc_bn_stats_f32(N, C, L, %s, %s);\n", x, y);
            break;
        }
        /* two passes (the mean, then squared deviations), as PyTorch, so no
         * cancellation in E[x^2] - E[x]^2 */
        P("        for (int64_t c = 0; c < C; c++) {\n            double sum = 0, sq = 0;\n");
        P("            for (int64_t b = 0; b < N; b++) {\n                const %s *row = %s + (b * C + c) * L;\n", R(), x);
        lanes_store("                ", "double", "sum +=", "L", "row[k]");
        P("            }\n            const %s mu = (%s)(sum / M);\n", R(), R());
        P("            for (int64_t b = 0; b < N; b++) {\n                const %s *row = %s + (b * C + c) * L;\n", R(), x);
        lanes_store("                ", "double", "sq +=", "L", "(row[k] - mu) * (row[k] - mu)");
        P("            }\n            %s[c] = mu;\n            %s[C + c] = (%s)(sq / M);\n        }\n", y, y, R());
        break;
    }
    case IR_BN_NORM: {
        const char *x = ref(n->in[0]), *st = ref(n->in[1]), *w = ref(n->in[2]), *b = ref(n->in[3]);
        P("        (void)M;\n");
        P("        for (int64_t b = 0; b < N; b++)\n        for (int64_t c = 0; c < C; c++) {\n");
        P("            const %s mu = %s[c], sc = (%s)(1.0 / sqrt((double)%s[C + c] + %.17g)) * %s[c], sh = %s[c];\n", R(),
          st, R(), st, n->fval, w, b);
        P("            const %s *xr = %s + (b * C + c) * L;\n            %s *yr = %s + (b * C + c) * L;\n", R(), x, R(), y);
        /* plus a residual and a relu that plan.c folded in */
        const char *res = n->nin > 4 ? ref(n->in[4]) : NULL;
        const char *v = res ? "(xr[k] - mu) * sc + sh + rr[k]" : "(xr[k] - mu) * sc + sh";
        if (res)
            P("            const %s *rr = %s + (b * C + c) * L;\n", R(), res);
        if (n->ival)
            P("            for (int64_t k = 0; k < L; k++) {\n                const %s v = %s;\n                yr[k] = %s;\n            }\n        }\n",
              R(), v, relu_of("v"));
        else
            P("            for (int64_t k = 0; k < L; k++) yr[k] = %s;\n        }\n", v);
        break;
    }
    case IR_BN_GRADS: {
        /* row 0: sum of dy * xhat (d weight), row 1: sum of dy (d bias) */
        const char *dy = ref(n->in[0]), *x = ref(n->in[1]), *st = ref(n->in[2]);
        /* dy masked by a relu's output (plan.c's fold_relu_bn_grad): a
         * select in runtime/bn.c (float); in the loops below a product
         * with the mask, not `mr[k] > 0 ? dr[k] : 0`, which gcc 12 at -O3
         * miscompiles in these lane sums (docs/decisions.md, "gcc 12 and
         * conditional lane sums") */
        const char *mask = n->nin > 3 ? ref(n->in[3]) : NULL;
        const char *d = mask ? xs("dr[k] * (%s)(mr[k] > %s)", R(), lit(0)) : "dr[k]";
        P("        (void)M;\n");
        if (!O->f64) {
            P("        nnc_bn_grads_f32(N, C, L, %s, %s, %s, %s, %.17g, %s);\n", dy, x, mask ? mask : "NULL", st,
              n->fval, y);
            break;
        }
        P("        for (int64_t c = 0; c < C; c++) {\n            double sdx = 0, sd = 0;\n");
        P("            const %s mu = %s[c];\n", R(), st);
        P("            for (int64_t b = 0; b < N; b++) {\n");
        P("                const %s *xr = %s + (b * C + c) * L, *dr = %s + (b * C + c) * L;\n", R(), x, dy);
        if (mask)
            P("                const %s *mr = %s + (b * C + c) * L;\n", R(), mask);
        lanes_store("                ", "double", "sdx +=", "L", xs("%s * (xr[k] - mu)", d));
        lanes_store("                ", "double", "sd +=", "L", d);
        P("            }\n");
        P("            %s[c] = (%s)(sdx / sqrt((double)%s[C + c] + %.17g));\n            %s[C + c] = (%s)sd;\n        }\n",
          y, R(), st, n->fval, y, R());
        break;
    }
    case IR_BN_BWD: {
        /* dx = w rstd (dy - mean(dy)) - (x - mean) w rstd^2 mean(dy xhat) */
        const char *dy = ref(n->in[0]), *x = ref(n->in[1]), *st = ref(n->in[2]), *w = ref(n->in[3]),
                   *gr = ref(n->in[4]);
        P("        for (int64_t b = 0; b < N; b++)\n        for (int64_t c = 0; c < C; c++) {\n");
        P("            const double rstd = 1.0 / sqrt((double)%s[C + c] + %.17g), k1 = (double)%s[c] * rstd;\n", st,
          n->fval, w);
        P("            const %s mu = %s[c], a = (%s)k1, mdy = (%s)((double)%s[C + c] / M),\n", R(), st, R(), R(), gr);
        P("                  k2 = (%s)(k1 * rstd * (double)%s[c] / M);\n", R(), gr);
        P("            const %s *xr = %s + (b * C + c) * L, *dr = %s + (b * C + c) * L;\n", R(), x, dy);
        P("            %s *yr = %s + (b * C + c) * L;\n", R(), y);
        const char *mask = n->nin > 5 ? ref(n->in[5]) : NULL;
        if (mask)
            P("            const %s *mr = %s + (b * C + c) * L;\n", R(), mask);
        P("            for (int64_t k = 0; k < L; k++) yr[k] = a * (%s - mdy) - (xr[k] - mu) * k2;\n        }\n",
          mask ? xs("(mr[k] > %s ? dr[k] : %s)", lit(0), lit(0)) : "dr[k]");
        break;
    }
    default:
        abort();
    }
    P("    }\n");
    loop_end(t);
}

/* Convolution one example at a time (elab.c's conv2d): the example's
 * columns [C*KH*KW, OH*OW] go to a work buffer that stays in cache (the
 * whole batch's, tens of MB, were written to memory and read back), and
 * its GEMM writes [F, OH*OW], the example's part of NCHW, so no permute.
 * A 1x1 convolution of stride 1 without padding reads the image as its
 * columns.  Backward makes the columns again for dW instead of keeping
 * them. */
/* A stride-1 convolution whose output has the image's size ("same"
 * padding, KH = KW = 2 PD + 1 here): column row (c, ki, kj) is channel c
 * shifted by d = (ki - PD) W + (kj - PD), so it is one contiguous copy
 * (or add) over the rows inside the image, and only the columns that
 * wrapped around a row edge are fixed up.  Rows of 8 or 16 floats made the
 * per-row loops mostly overhead: stage-3 columns of resnet_small took
 * 0.60 ms a batch that way and 0.25 ms this way, stage 2's 1.0 and 0.5. */
static void conv_cols_same(int add, const char *img, const char *col)
{
    P("            for (int64_t c = 0; c < C; c++)\n            for (int64_t ki = 0; ki < KH; ki++)\n");
    P("            for (int64_t kj = 0; kj < KW; kj++) {\n");
    P("                %s *crow = %s + ((c * KH + ki) * KW + kj) * P;\n", R(), col);
    P("                %s%s *ic = %s + c * H * W;\n", add ? "" : "const ", R(), img);
    P("                const int64_t d = (ki - PD) * W + (kj - PD);\n");
    /* [a, e): the positions whose image row is inside the image and whose
     * shifted index is inside the channel */
    P("                int64_t a = (ki < PD ? PD - ki : 0) * W, e = (ki > PD ? H - (ki - PD) : H) * W;\n");
    P("                if (a < -d) a = -d;\n                if (e > H * W - d) e = H * W - d;\n");
    P("                if (a > P) a = P;\n                if (e < a) e = a;\n");
    if (!add) {
        P("                for (int64_t p = 0; p < a; p++) crow[p] = %s;\n", lit(0));
        P("                for (int64_t p = a; p < e; p++) crow[p] = ic[p + d];\n");
        P("                for (int64_t p = e; p < P; p++) crow[p] = %s;\n", lit(0));
    }
    /* columns that wrapped to the previous or next image row: 0 in the
     * columns, and so (zeroed before the add) nothing added by col2im */
    /* (clamped to [0, OW], so that padding wider than the image never
     * reaches a neighbouring row) */
    P("                const int64_t wl = PD - kj < OW ? PD - kj : OW, wr = OW - (kj - PD) > 0 ? OW - (kj - PD) : 0;\n");
    P("                for (int64_t oh = 0; oh < OH; oh++) {\n");
    P("                    for (int64_t ow = 0; ow < wl; ow++) crow[oh * OW + ow] = %s;\n", lit(0));
    P("                    for (int64_t ow = wr; ow < OW; ow++) crow[oh * OW + ow] = %s;\n", lit(0));
    P("                }\n");
    if (add)
        P("                for (int64_t p = a; p < e; p++) ic[p + d] += crow[p];\n");
    P("            }\n");
}

static void conv_cols(int add, int same, const char *img, const char *col)
{
    /* add 0: im2col, img -> col; add 1: col2im, img += col.  The in-bounds
     * columns of each row are a range [lo, hi): no test per element */
    if (same) {
        conv_cols_same(add, img, col);
        return;
    }
    P("            for (int64_t c = 0; c < C; c++)\n            for (int64_t ki = 0; ki < KH; ki++)\n");
    P("            for (int64_t kj = 0; kj < KW; kj++) {\n");
    P("                int64_t lo = kj < PD ? (PD - kj + S - 1) / S : 0;\n");
    P("                int64_t hi = W - 1 + PD - kj >= 0 ? (W - 1 + PD - kj) / S + 1 : 0;\n");
    P("                if (lo > OW) lo = OW;\n                if (hi > OW) hi = OW;\n                if (hi < lo) hi = lo;\n");
    P("                for (int64_t oh = 0; oh < OH; oh++) {\n");
    P("                    const int64_t ih = oh * S - PD + ki, base = (c * H + ih) * W - PD + kj;\n");
    P("                    %s%s *crow = %s + ((c * KH + ki) * KW + kj) * P + oh * OW;\n", add ? "const " : "", R(), col);
    if (!add) {
        P("                    if (ih < 0 || ih >= H) { memset(crow, 0, sizeof(%s) * (size_t)OW); continue; }\n", R());
        P("                    for (int64_t ow = 0; ow < lo; ow++) crow[ow] = %s;\n", lit(0));
        P("                    for (int64_t ow = lo; ow < hi; ow++) crow[ow] = %s[base + ow * S];\n", img);
        P("                    for (int64_t ow = hi; ow < OW; ow++) crow[ow] = %s;\n", lit(0));
    } else {
        P("                    if (ih < 0 || ih >= H) continue;\n");
        P("                    for (int64_t ow = lo; ow < hi; ow++) %s[base + ow * S] += crow[ow];\n", img);
    }
    P("                }\n            }\n");
}

static void emit_conv_op(int t)
{
    const IrNode *n = nd(t);
    int fwd = n->op == IR_CONV2D, data = n->op == IR_CONV2D_BWD_DATA;
    /* x: the image side, yv: the output side [N, F, OH, OW] */
    Shape x = fwd || !data ? nd(n->in[fwd ? 0 : 1])->shape : n->shape;
    Shape yv = fwd ? n->shape : nd(n->in[0])->shape;
    Shape w = fwd || data ? nd(n->in[1])->shape : n->shape;
    int direct = n->kh == 1 && n->kw == 1 && n->stride == 1 && n->pad == 0;
    /* short rows only: at 32 floats the per-row loops were as fast (0.61
     * ms against 0.70 for resnet_small's stage-1 columns, whose fix-ups of
     * wrapped columns are more stores) */
    int same = n->stride == 1 && yv.d[2] == x.d[2] && yv.d[3] == x.d[3] && x.d[3] < 24;
    /* float: the runtime's direct kernels (conv.c), which beat the columns
     * and OpenBLAS's GEMM on the benchmarks' layers (resnet_small's 3x3
     * ones ~1.4x, lenet5's 5x5 ones 1.3-2x): the forward pass at stride 1
     * and 2 (not 1x1 at stride 2, a quarter of the image: its 4 phases cost
     * more than the columns' subsample, 0.6 against 0.3 ms), the kernel's
     * gradient at any stride but for 1x1 kernels (a GEMM of the columns,
     * the subsample at stride 2: resnet_small's two projections took 1.7 ms
     * in the kernel, whose generic 1-tap rows run at ~10 GFLOP/s).  The
     * backward pass for the data at stride 1 correlates dy padded by K - 1 -
     * pad, so it needs pad <= K - 1, and its multiply-adds are H W / (OH OW)
     * times the forward pass's: only for 'same'-like convolutions (lenet5's
     * unpadded 5x5 took 0.85 ms that way, 2x its share of the GEMM path).
     * At stride 2 (not 1x1: 3 of its 4 phases are zeros) it runs by dx's 4
     * phases, each a stride-1 correlation of dy with its taps: ~1.1 ms for
     * each of resnet_small's two layers, against ~2.3 for the columns
     * (Wᵀ dy and a col2im of 9 scattered adds per value). */
    const int s2 = n->stride == 2 && n->kh * n->kw > 1; /* stride 2 by phases, not for 1x1 */
    int kernel = !O->f64 && !direct && n->kh * n->kw <= 4096 && /* conv.c's tap table */
             ((n->op == IR_CONV2D && (n->stride == 1 || s2)) ||
              (n->op == IR_CONV2D_BWD_DATA &&
               (s2 || (n->stride == 1 && n->pad < n->kh && n->pad < n->kw &&
                       4 * x.d[2] * x.d[3] <= 5 * yv.d[2] * yv.d[3]))));
    /* The kernels are fast only where the runtime was built for AVX-512
     * (their 16-float accumulators fill its 32 registers; with 16 AVX2
     * registers they spill and ran at 4-7 GFLOP/s, against ~50 for the
     * columns): the generated code asks the runtime it is linked with and
     * keeps the columns (below) for the other case.  The work buffer holds
     * either (elab.c, grad.c). */
    /* the call's common tail: (..., C, H, W, F, KH, KW) and the work buffer */
    const char *dims = xs("%lld, %lld, %lld, %lld, %d, %d", (long long)x.d[1], (long long)x.d[2], (long long)x.d[3],
                          (long long)w.d[0], n->kh, n->kw);
    const int filter = !O->f64 && !direct && n->op == IR_CONV2D_BWD_FILTER && n->kh * n->kw > 1;
    /* (ref() declares the buffer it names: only for a kernel's call) */
    const char *work =
        filter || kernel ? xs("%s, %lld", ref(n->in[2]), (long long)ir_numel(nd(n->in[2])->shape)) : NULL;
    /* a bias (and a relu) that plan.c folded into the forward pass; the
     * other gradient of x that plan.c folded into the data gradient
     * (fold_conv_add: dx = conv's + add, summed as dx is stored) */
    const char *bias = fwd && n->nin > 3 ? ref(n->in[3]) : NULL;
    const char *add = n->op == IR_CONV2D_BWD_DATA && n->nin > 3 ? ref(n->in[3]) : NULL;
    const char *call = NULL;
    if (filter)
        /* (N, dy, x, dw, C, H, W, F, KH, KW, stride, pad, work, work floats) */
        call = xs("nnc_conv2d_bwd_filter_f32(%s, %s, %s, %s, %s, %d, %d, %s)", dim(x, 0), ref(n->in[0]),
                  ref(n->in[1]), ref(t), dims, n->stride, n->pad, work);
    else if (kernel && fwd)
        /* (N, x, w, y, C, H, W, F, KH, KW, pad, bias, relu, work, work floats) */
        call = xs("nnc_conv2d_s%d_f32(%s, %s, %s, %s, %s, %d, %s, %d, %s)", n->stride, dim(x, 0), ref(n->in[0]),
                  ref(n->in[1]), ref(t), dims, n->pad, bias ? bias : "NULL", n->ival, work);
    else if (kernel)
        /* (N, dy, w, dx, add, C, H, W, F, KH, KW, pad, work, work floats) */
        call = xs("nnc_conv2d_s%d_bwd_data_f32(%s, %s, %s, %s, %s, %s, %d, %s)", n->stride, dim(x, 0), ref(n->in[0]),
                  ref(n->in[1]), ref(t), add ? add : "NULL", dims, n->pad, work);
    if (call)
        P("    if (nnc_conv_direct_ok())\n        %s;\n    else\n", call);
    P("    {\n        const int64_t N = %s, C = %lld, H = %lld, W = %lld, F = %lld, OH = %lld, OW = %lld;\n",
      dim(x, 0), (long long)x.d[1], (long long)x.d[2], (long long)x.d[3], (long long)w.d[0], (long long)yv.d[2],
      (long long)yv.d[3]);
    P("        const int64_t KH = %d, KW = %d, S = %d, PD = %d, P = OH * OW, CKK = C * KH * KW;\n", n->kh, n->kw,
      n->stride, n->pad);
    P("        (void)KH, (void)KW, (void)S, (void)PD;\n");
    const char *scr = direct ? NULL : ref(n->in[2]);
    switch (n->op) {
    case IR_CONV2D: {
        const char *xp = ref(n->in[0]), *wp = ref(n->in[1]), *y = ref(t);
        P("        for (int64_t b = 0; b < N; b++) {\n");
        P("            const %s *img = %s + b * C * H * W;\n", R(), xp);
        if (!direct)
            conv_cols(0, same, "img", scr);
        P("            %s(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)F, (int)P, (int)CKK, %s, %s, (int)CKK, %s, (int)P, %s, %s + b * F * P, (int)P);\n",
          gemm(), lit(1), wp, direct ? "img" : scr, lit(0), y);
        if (bias) {
            P("            for (int64_t f = 0; f < F; f++)\n                for (int64_t p = 0; p < P; p++) {\n");
            P("                    const %s v = %s[(b * F + f) * P + p] + %s[f];\n", R(), y, bias);
            P("                    %s[(b * F + f) * P + p] = %s;\n                }\n", y,
              n->ival ? relu_of("v") : "v");
        }
        P("        }\n");
        break;
    }
    case IR_CONV2D_BWD_DATA: {
        /* dcol = Wᵀ dy (the example's), then col2im */
        const char *dy = ref(n->in[0]), *wp = ref(n->in[1]), *dx = ref(t);
        P("        for (int64_t b = 0; b < N; b++) {\n");
        P("            %s *img = %s + b * C * H * W;\n", R(), dx);
        P("            %s(CblasRowMajor, CblasTrans, CblasNoTrans, (int)CKK, (int)P, (int)F, %s, %s, (int)CKK, %s + b * F * P, (int)P, %s, %s, (int)P);\n",
          gemm(), lit(1), wp, dy, lit(0), direct ? "img" : scr);
        if (!direct) {
            P("            memset(img, 0, sizeof(%s) * (size_t)(C * H * W));\n", R());
            conv_cols(1, same, "img", scr);
        }
        if (add)
            P("            for (int64_t i = 0; i < C * H * W; i++)\n                img[i] += %s[b * C * H * W + i];\n", add);
        P("        }\n");
        break;
    }
    case IR_CONV2D_BWD_FILTER: {
        /* dW = sum over the examples of dy colᵀ (n >= 1: the first one sets
         * it), computed as dWᵀ [CKK, F] += col dyᵀ in the work buffer after
         * the columns and transposed at the end: OpenBLAS runs this shape
         * 10-30% faster (M = CKK rather than F: 16x144x1024 took 3.6 ms
         * per batch, 144x16x1024 2.6 ms) */
        const char *dy = ref(n->in[0]), *xp = ref(n->in[1]), *dw = ref(t);
        const char *sp = ref(n->in[2]);
        P("        %s *const dwt = %s + CKK * P;\n", R(), sp);
        P("        for (int64_t b = 0; b < N; b++) {\n");
        P("            const %s *img = %s + b * C * H * W;\n", R(), xp);
        if (!direct)
            conv_cols(0, same, "img", scr);
        P("            %s(CblasRowMajor, CblasNoTrans, CblasTrans, (int)CKK, (int)F, (int)P, %s, %s, (int)P, %s + b * F * P, (int)P, b ? %s : %s, dwt, (int)F);\n",
          gemm(), lit(1), direct ? "img" : scr, dy, lit(1), lit(0));
        P("        }\n");
        P("        for (int64_t f = 0; f < F; f++)\n            for (int64_t k = 0; k < CKK; k++)\n");
        P("                %s[f * CKK + k] = dwt[k * F + f];\n", dw);
        break;
    }
    default:
        abort();
    }
    P("    }\n");
}

static void emit_node(int t)
{
    const IrNode *n = nd(t);
    if (n->fused || merged[t] || n->op == IR_RESHAPE || (ir_op_class(n->op) == OC_LEAF && n->op != IR_RNG_MASK))
        return;
    if (n->op == IR_CONV_SCRATCH)
        return;                         /* storage only: the conv op fills it */
    comment(n);
    if (ir_is_elementwise(n->op)) {
        emit_elementwise(t);
        return;
    }
    switch (n->op) {
    case IR_RNG_MASK: {
        double keep = 1 - n->fval;
        P("    for (int64_t i = 0; i < %s; i++)\n", numel(n->shape));
        P("        %s[i] = nnc_rng_uniform(&m->rng_) < %.17g ? %s : %s;\n", ref(t), keep, lit(1 / keep), lit(0));
        break;
    }
    case IR_MATMUL: emit_matmul(t); break;
    case IR_PERMUTE: emit_permute(t); break;
    case IR_CONCAT: emit_concat(t); break;
    case IR_SLICE: emit_slice(t, 0); break;
    case IR_PAD: emit_slice(t, 1); break;
    case IR_SUM: case IR_MEAN: case IR_MAX: emit_reduce(t); break;
    case IR_SOFTMAX: case IR_LOG_SOFTMAX: case IR_SOFTMAX_BWD: case IR_LOG_SOFTMAX_BWD: case IR_ARGMAX:
        emit_rowop(t);
        break;
    case IR_CROSS_ENTROPY: case IR_CE_BWD: case IR_MSE: case IR_BCE_LOGITS: case IR_ACCURACY:
        emit_loss(t);
        break;
    case IR_EMBEDDING: case IR_EMBEDDING_BWD: case IR_LAYER_NORM: case IR_LAYER_NORM_BWD:
    case IR_LAYER_NORM_WGRAD: case IR_CAUSAL_MASK:
        emit_seq_op(t);
        break;
    case IR_MAXPOOL: case IR_MAXPOOL_BWD:
        if (maxpool2(n)) {
            emit_maxpool2(t);
            break;
        }
        if (maxpool_tiles(n)) {
            emit_maxpool_bwd_tiled(t);
            break;
        }
        emit_vision_op(t);
        break;
    case IR_IM2COL: case IR_COL2IM: case IR_AVGPOOL: case IR_AVGPOOL_BWD:
        emit_vision_op(t);
        break;
    case IR_BN_STATS: case IR_BN_NORM: case IR_BN_GRADS: case IR_BN_BWD:
        emit_bn_op(t);
        break;
    case IR_CONV2D: case IR_CONV2D_BWD_DATA: case IR_CONV2D_BWD_FILTER:
        emit_conv_op(t);
        break;
    default:
        fprintf(stderr, "nnc: internal error: no emitter for op '%s'\n", ir_op_name(n->op));
        abort();
    }
}

/* ---- functions ---------------------------------------------------------------- */

static char *body_text;
static size_t body_len;
static FILE *file_out;

static void begin_body(const Graph *g, int backward)
{
    G = g;
    free(used);
    used = calloc((size_t)g->n + 1, 1);
    free(merged);
    merged = calloc((size_t)g->n + 1, 1);
    in_backward = backward;
    file_out = out;
    out = open_memstream(&body_text, &body_len);
    if (!out)
        abort();
}

static int64_t arena_static(void)
{
    int64_t s = 0;
    const Graph *gs[3] = {M->train, M->infer, M->eval};
    for (int i = 0; i < 3; i++)
        if (gs[i] && gs[i]->static_size > s)
            s = gs[i]->static_size;
    return s;
}

static int64_t arena_batched(void)
{
    int64_t s = 0;
    const Graph *gs[3] = {M->train, M->infer, M->eval};
    for (int i = 0; i < 3; i++)
        if (gs[i] && gs[i]->batched_size > s)
            s = gs[i]->batched_size;
    return s;
}

/* Prints the standard locals and the used pointers, then the body. */
static void end_body(void)
{
    fclose(out);
    out = file_out;
    P("    %s *const A = m->arena_;\n", R());
    P("    const int64_t MB = m->max_batch, SB = %lld;\n", (long long)arena_static());
    P("    const %s *const P = (const %s *)m->params;\n", R(), R());
    P("    %s *const G = (%s *)m->grads;\n", R(), R());
    if (M->nstate)
        P("    %s *const S = (%s *)m->state;\n    (void)S;\n", R(), R());
    P("    (void)A, (void)MB, (void)SB, (void)P, (void)G;\n");
    for (int i = 0; i < G->n; i++)
        if (used[i])
            declare(i);
    fwrite(body_text, 1, body_len, out);
    free(body_text);
    body_text = NULL;
}

static const char *model_type(void) { return M->prefix; }

/* `const float (*x)[8][8]` for an input [N, 8, 8]. */
/* With name "", the type alone, for a cast: `const float (*)[64]`. */
static const char *io_decl(const IoDecl *io, int is_const, const char *name)
{
    const char *ty = io->dt == DT_I32 ? "int32_t" : R();
    const char *dims = "";
    for (int i = 1; i < io->shape.nd; i++)
        dims = xs("%s[%lld]", dims, (long long)io->shape.d[i]);
    if (!*dims)
        return xs("%s%s *%s", is_const ? "const " : "", ty, name);
    return xs("%s%s (*%s)%s", is_const ? "const " : "", ty, name, dims);
}

static const char *io_param(const IoDecl *io, int is_const)
{
    return io_decl(io, is_const, io->name);
}

static const char *out_param(void)
{
    const IrNode *o = &M->infer->nodes[M->infer->output];
    IoDecl io;
    memset(&io, 0, sizeof io);
    io.name = "out";
    io.dt = DT_F32;
    io.shape = o->shape;
    return io_param(&io, 0);
}

static const char *sig_inputs(int labels)
{
    const char *s = "";
    for (int i = 0; i < M->ninputs; i++)
        s = xs("%s, %s", s, io_param(&M->inputs[i], 1));
    for (int i = 0; labels && i < M->nlabels; i++)
        s = xs("%s, %s", s, io_param(&M->labels[i], 1));
    return s;
}

static const char *sig_forward(void)
{
    return xs("void %s_forward(%s *m, int n%s, %s)", M->prefix, model_type(), sig_inputs(0), out_param());
}

static const char *sig_train(void)
{
    return xs("%s %s_train_forward(%s *m, int n%s)", R(), M->prefix, model_type(), sig_inputs(1));
}

static const char *sig_eval(void)
{
    return xs("void %s_eval(%s *m, int n%s, %s *loss, %s *metrics)", M->prefix, model_type(), sig_inputs(1), R(), R());
}

/* Inputs a pass does not read are still parameters: mark them used. */
static void void_params(int labels)
{
    for (int i = 0; i < M->ninputs; i++)
        P("    (void)%s;\n", M->inputs[i].name);
    for (int i = 0; labels && i < M->nlabels; i++)
        P("    (void)%s;\n", M->labels[i].name);
}

static void emit_range(const Graph *g, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        if (g->nodes[i].fused >= 0)
            emit_node(i);
}

static void emit_forward(void)
{
    const Graph *g = M->infer;
    P("%s\n{\n", sig_forward());
    begin_body(g, 0);
    void_params(0);
    emit_range(g, 0, g->n);
    P("    memcpy(out, %s, sizeof(%s) * (size_t)(%s));\n", ref(g->output), R(), numel(g->nodes[g->output].shape));
    end_body();
    P("}\n\n");
}

static void emit_train(void)
{
    const Graph *g = M->train;
    P("%s\n{\n", sig_train());
    begin_body(g, 0);
    P("    m->n_ = n;\n");
    for (int i = 0; i < M->ninputs; i++)
        P("    m->in_[%d] = %s;\n", i, M->inputs[i].name);
    for (int i = 0; i < M->nlabels; i++)
        P("    m->lab_[%d] = %s;\n", i, M->labels[i].name);
    emit_range(g, 0, g->fwd_end);
    for (int i = 0; i < g->nupdates; i++) {
        const Tensor *t = &M->state[g->update_state[i]];
        P("    /* update %s */\n", t->path);
        P("    memmove(S + %lld, %s, sizeof(%s) * %lld);\n", (long long)t->offset, ref(g->update_value[i]), R(),
          (long long)ir_numel(t->shape));
    }
    for (int i = 0; i < g->nsummaries; i++)
        P("    m->summary_[%d] = %s;\n", i, scalar(g->summary_value[i]));
    P("    return %s;\n", scalar(g->loss));
    end_body();
    P("}\n\n");
}

static void emit_backward(void)
{
    const Graph *g = M->train;
    P("void %s_backward(%s *m)\n{\n", M->prefix, model_type());
    begin_body(g, 1);
    P("    const int n = m->n_;\n    (void)n;\n");
    /* frozen and unreachable params: their gradient is 0 */
    for (int p = 0; p < M->nparams; p++)
        if (g->param_grad[p] < 0)
            P("    memset(G + %lld, 0, sizeof(%s) * %lld); /* %s */\n", (long long)M->params[p].offset, R(),
              (long long)ir_numel(M->params[p].shape), M->params[p].path);
    emit_range(g, g->fwd_end, g->n);
    for (int p = 0; p < M->nparams; p++) {
        int t = g->param_grad[p];
        if (t < 0)
            continue;
        const IrNode *r = &g->nodes[plan_storage_root(g, t)];
        if (r->buf >= 0 && g->bufs[r->buf].param_grad == p)
            continue;
        P("    /* d %s */\n", M->params[p].path);
        if (r->op == IR_CONST || (r->fused == 1))
            P("    for (int64_t i = 0; i < %lld; i++) G[%lld + i] = %s;\n", (long long)ir_numel(M->params[p].shape),
              (long long)M->params[p].offset, scalar(t));
        else
            P("    memcpy(G + %lld, %s, sizeof(%s) * %lld);\n", (long long)M->params[p].offset, ref(t), R(),
              (long long)ir_numel(M->params[p].shape));
    }
    end_body();
    P("}\n\n");
}

static void emit_eval(void)
{
    const Graph *g = M->eval;
    P("%s\n{\n", sig_eval());
    begin_body(g, 0);
    void_params(1);
    emit_range(g, 0, g->n);
    P("    *loss = %s;\n", scalar(g->loss));
    for (int i = 0; i < g->nmetrics; i++)
        P("    metrics[%d] = %s;\n", i, g->metrics[i] >= 0 ? scalar(g->metrics[i]) : "NAN");
    if (!g->nmetrics)
        P("    (void)metrics;\n");
    end_body();
    P("}\n\n");
}

/* ---- the header's structs ------------------------------------------------------- */

static int is_index(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

static char *struct_body(const Tensor *ts, int lo, int hi, int depth, int indent);

static void doc_comment(FILE *f, const char *doc, int indent)
{
    if (!doc)
        return;
    fprintf(f, "%*s/** ", indent, "");
    for (const char *p = doc; *p; p++) {
        if (*p == '\n')
            fprintf(f, "\n%*s * ", indent, "");
        else if (*p == '*' && p[1] == '/')
            fputc('.', f);
        else
            fputc(*p, f);
    }
    fprintf(f, " */\n");
}

/* The `///` comment of the field whose path is t's first depth+1 parts. */
static const char *field_doc(const Tensor *t, int depth)
{
    const char *path = t->parts[0];
    for (int k = 1; k <= depth; k++)
        path = xs("%s.%s", path, t->parts[k]);
    for (int r = 0; r < M->nrows; r++)
        if (!strcmp(M->rows[r].path, path))
            return M->rows[r].doc;
    return NULL;
}

/* Members for tensors [lo, hi) sharing parts[0..depth). */
static char *struct_body(const Tensor *ts, int lo, int hi, int depth, int indent)
{
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    for (int i = lo; i < hi;) {
        const Tensor *t = &ts[i];
        const char *name = t->parts[depth];
        if (t->npart == depth + 1) {
            doc_comment(f, t->doc, indent);
            fprintf(f, "%*s%s %s", indent, "", R(), name);
            for (int k = 0; k < t->shape.nd; k++)
                fprintf(f, "[%lld]", (long long)t->shape.d[k]);
            fprintf(f, ";\n");
            i++;
            continue;
        }
        int j = i;
        while (j < hi && ts[j].npart > depth + 1 && !strcmp(ts[j].parts[depth], name))
            j++;
        if (is_index(ts[i].parts[depth + 1])) {
            /* a sequence: an array when every copy has the same layout */
            int nitems = 0, contiguous = 1, same = 1;
            char *first = NULL;
            for (int a = i; a < j;) {
                int b = a;
                while (b < j && !strcmp(ts[b].parts[depth + 1], ts[a].parts[depth + 1]))
                    b++;
                char *body = struct_body(ts, a, b, depth + 2, indent + 4);
                if (atoi(ts[a].parts[depth + 1]) != nitems)
                    contiguous = 0;
                if (!first)
                    first = body;
                else {
                    if (strcmp(first, body))
                        same = 0;
                    free(body);
                }
                nitems++;
                a = b;
            }
            doc_comment(f, field_doc(t, depth), indent);
            if (contiguous && same) {
                fprintf(f, "%*sstruct {\n%s%*s} %s[%d];\n", indent, "", first, indent, "", name, nitems);
            } else {
                fprintf(f, "%*sstruct {\n", indent, "");
                for (int a = i; a < j;) {
                    int b = a;
                    while (b < j && !strcmp(ts[b].parts[depth + 1], ts[a].parts[depth + 1]))
                        b++;
                    char *body = struct_body(ts, a, b, depth + 2, indent + 8);
                    fprintf(f, "%*sstruct {\n%s%*s} _%s;\n", indent + 4, "", body, indent + 4, "",
                            ts[a].parts[depth + 1]);
                    free(body);
                    a = b;
                }
                fprintf(f, "%*s} %s;\n", indent, "", name);
            }
            free(first);
        } else {
            char *body = struct_body(ts, i, j, depth + 1, indent + 4);
            doc_comment(f, field_doc(t, depth), indent);
            fprintf(f, "%*sstruct {\n%s%*s} %s;\n", indent, "", body, indent, "", name);
            free(body);
        }
        i = j;
    }
    fclose(f);
    return text;
}

static const char *upper(const char *s)
{
    char *u = xs("%s", s);
    for (char *p = u; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return u;
}

static void banner(const char *what)
{
    P("/* %s: generated by nnc from %s; do not edit. */\n", what, M->source);
}

static void emit_header(const char *fname)
{
    const char *U = upper(M->prefix);
    banner(fname);
    if (M->doc) {
        P("\n");
        doc_comment(out, M->doc, 0);
    }
    P("#ifndef %s_H\n#define %s_H\n\n", U, U);
    P("#include <stddef.h>\n#include <stdint.h>\n\n#include \"nnc_runtime.h\"\n\n");
    P("#if NNC_RUNTIME_VERSION != 1\n#error \"%s was generated for nnc runtime version 1; regenerate it with the nnc that matches your runtime\"\n#endif\n\n", fname);
    P("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    P("enum {\n");
    for (int i = 0; i < M->nhparams; i++) {
        if (M->hparams[i].doc)
            doc_comment(out, M->hparams[i].doc, 4);
        P("    %s_%s = %lld,\n", U, upper(M->hparams[i].name), M->hparams[i].ival);
    }
    P("    %s_NUM_PARAMS = %lld, /* %ss in %s_params */\n", U, (long long)M->num_params, R(), M->prefix);
    P("    %s_NUM_STATE = %lld, /* %ss in %s_state */\n", U, (long long)M->num_state, R(), M->prefix);
    P("    %s_NUM_METRICS = %d,\n", U, M->nmetrics);
    P("};\n\n");
    if (M->nparams) {
        P("/* Trainable parameters: nested structs mirror the model's fields; the\n"
          "   struct is also a %s[%s_NUM_PARAMS]. */\n", R(), U);
        char *body = struct_body(M->params, 0, M->nparams, 0, 4);
        P("typedef struct %s_params {\n%s} %s_params;\n\n", M->prefix, body, M->prefix);
        free(body);
    } else {
        P("/* This model has no trainable parameters. */\ntypedef struct %s_params { %s none_; } %s_params;\n\n", M->prefix, R(), M->prefix);
    }
    if (M->nstate) {
        P("/* Non-trainable state, saved in checkpoints; also a %s[%s_NUM_STATE]. */\n", R(), U);
        char *body = struct_body(M->state, 0, M->nstate, 0, 4);
        P("typedef struct %s_state {\n%s} %s_state;\n\n", M->prefix, body, M->prefix);
        free(body);
    }
    P("typedef struct %s {\n", M->prefix);
    P("    %s_params *params;      /* trainable weights */\n", M->prefix);
    P("    %s_params *grads;       /* d loss / d params, same layout */\n", M->prefix);
    if (M->nstate)
        P("    %s_state *state;        /* non-trainable tensors */\n", M->prefix);
    else
        P("    struct %s_state *state; /* this model has no state: NULL */\n", M->prefix);
    P("    int max_batch;\n");
    P("    /* private members follow */\n");
    P("    %s *arena_;\n    nnc_rng rng_;\n    int n_;\n", R());
    P("    const void *in_[%d];\n", M->ninputs);
    if (M->nlabels)
        P("    const void *lab_[%d];\n", M->nlabels);
    if (M->train && M->train->nsummaries)
        P("    %s summary_[%d];\n", R(), M->train->nsummaries);
    P("} %s;\n\n", M->prefix);
    const char *p = M->prefix;
    P("/* Allocates everything the model will ever need and initializes params\n"
      "   and state, deterministically for a seed; 0, or -1 with errno set. */\n");
    P("int %s_init(%s *m, int max_batch, uint64_t seed);\n", p, p);
    P("void %s_release(%s *m);\n", p, p);
    P("/* Inference (training false), 1 <= n <= max_batch. */\n%s;\n", sig_forward());
    if (M->has_loss) {
        P("/* Training pass: returns the loss and keeps what backward needs, including\n"
          "   pointers to the inputs and labels: keep them alive until backward. */\n%s;\n", sig_train());
        P("/* d loss / d params of the last training pass into m->grads (overwritten). */\n");
        P("void %s_backward(%s *m);\n", p, p);
        P("/* Loss and every metric (declaration order), in inference mode. */\n%s;\n", sig_eval());
        if (M->train->nsummaries) {
            P("/* The summaries of the last training pass: names and values. */\n");
            P("enum { %s_NUM_SUMMARIES = %d };\n", U, M->train->nsummaries);
            P("extern const char *const %s_summary_names[%d];\n", p, M->train->nsummaries);
        }
    }
    if (!O->f64) {
        P("/* Params and state as safetensors, atomically; 0, or -1 (nnc_error()). */\n");
        P("int %s_save(const %s *m, const char *path);\n", p, p);
        P("/* Loads params and state; on error -1 and m is unchanged. */\n");
        P("int %s_load(%s *m, const char *path);\n", p, p);
    }
    P("/* Reflection: every param and state tensor. */\n");
    P("const nnc_tensor_info *%s_tensors(size_t *count);\n", p);
    if (M->nmetrics) {
        P("extern const char *const %s_metric_names[%d];\n", p, M->nmetrics);
    }
    P("\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

static const char *init_enum(InitKind k)
{
    static const char *names[] = {"ZEROS", "ONES", "CONSTANT", "NORMAL", "UNIFORM", "GLOROT_UNIFORM",
                                  "GLOROT_NORMAL", "HE_UNIFORM", "HE_NORMAL"};
    return xs("NNC_INIT_%s", names[k]);
}

static void emit_tensor_table(void)
{
    int n = M->nparams + M->nstate;
    P("static const nnc_tensor_info tensor_info_[%d] = {\n", n ? n : 1);
    for (int s = 0; s < 2; s++) {
        const Tensor *ts = s ? M->state : M->params;
        int cnt = s ? M->nstate : M->nparams;
        for (int i = 0; i < cnt; i++) {
            const Tensor *t = &ts[i];
            P("    {\"%s\", %d, {", t->path, t->shape.nd);
            for (int k = 0; k < t->shape.nd; k++)
                P("%s%lld", k ? ", " : "", (long long)t->shape.d[k]);
            if (!t->shape.nd)
                P("0");
            P("}, %lld, %lld, %d, %d},\n", (long long)t->offset, (long long)ir_numel(t->shape), !s, t->frozen);
        }
    }
    if (!n)
        P("    {\"\", 0, {0}, 0, 0, 0, 0},\n");
    P("};\n\n");
    P("const nnc_tensor_info *%s_tensors(size_t *count)\n{\n    if (count)\n        *count = %d;\n    return tensor_info_;\n}\n\n",
      M->prefix, n);
}

/* A C string literal's contents for s (quotes, backslashes, controls escaped). */
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
static void emit_from_loads(void)
{
    int total = M->nparams + M->nstate;
    char *done = calloc((size_t)total + 1, 1);
    for (int k = 0; k < total; k++) {
        const Tensor *t = k < M->nparams ? &M->params[k] : &M->state[k - M->nparams];
        if (!t->from || done[k])
            continue;
        size_t plen = strlen(t->from_prefix);
        int cnt = 0;
        P("    {\n        static const nnc_tensor_info from_[] = {\n");
        for (int j = k; j < total; j++) {
            const Tensor *u = j < M->nparams ? &M->params[j] : &M->state[j - M->nparams];
            if (!u->from || strcmp(u->from_prefix, t->from_prefix) || strcmp(u->from, t->from))
                continue;
            done[j] = 1;
            cnt++;
            const char *rel = plen && !strncmp(u->path, t->from_prefix, plen) && u->path[plen] == '.'
                                  ? u->path + plen + 1 : u->path;
            P("            {\"%s\", %d, {", rel, u->shape.nd);
            for (int d = 0; d < u->shape.nd; d++)
                P("%s%lld", d ? ", " : "", (long long)u->shape.d[d]);
            if (!u->shape.nd)
                P("0");
            P("}, %lld, %lld, %d, %d},\n", (long long)u->offset, (long long)ir_numel(u->shape), !u->state, u->frozen);
        }
        P("        };\n");
        P("        if (nnc_st_load(\"%s\", from_, %d, (float *)m->params, (float *)m->state) != 0) {\n", cstr(t->from), cnt);
        P("            %s_release(m);\n            errno = EINVAL;\n            return -1;\n        }\n    }\n", M->prefix);
    }
    free(done);
}

static void emit_init(void)
{
    const char *p = M->prefix;
    int64_t sb = arena_static(), bb = arena_batched();
    P("int %s_init(%s *m, int max_batch, uint64_t seed)\n{\n", p, p);
    P("    memset(m, 0, sizeof *m);\n");
    P("    if (max_batch < 1) {\n        errno = EINVAL;\n        return -1;\n    }\n");
    P("    const size_t arena = %lldu + %lldu * (size_t)max_batch;\n", (long long)sb, (long long)bb);
    P("    m->params = calloc(1, sizeof(%s_params));\n", p);
    P("    m->grads = calloc(1, sizeof(%s_params));\n", p);
    if (M->nstate)
        P("    m->state = calloc(1, sizeof(%s_state));\n", p);
    P("    m->arena_ = calloc(arena ? arena : 1, sizeof(%s));\n", R());
    P("    if (!m->params || !m->grads || !m->arena_%s) {\n", M->nstate ? " || !m->state" : "");
    P("        %s_release(m);\n        errno = ENOMEM;\n        return -1;\n    }\n", p);
    P("    m->max_batch = max_batch;\n    nnc_rng_seed(&m->rng_, seed);\n");
    for (int s = 0; s < 2; s++) {
        const Tensor *ts = s ? M->state : M->params;
        int cnt = s ? M->nstate : M->nparams;
        for (int i = 0; i < cnt; i++) {
            const Tensor *t = &ts[i];
            P("    nnc_init_%s((%s *)m->%s + %lld, %d, (const int[]){", O->f64 ? "f64" : "f32", R(),
              s ? "state" : "params", (long long)t->offset, t->shape.nd);
            for (int k = 0; k < t->shape.nd; k++)
                P("%s%lld", k ? ", " : "", (long long)t->shape.d[k]);
            if (!t->shape.nd)
                P("0");
            P("}, %s, %.17g, %.17g, &m->rng_); /* %s */\n", init_enum(t->init), t->init_a, t->init_b, t->path);
        }
    }
    emit_from_loads();
    P("    return 0;\n}\n\n");
    P("void %s_release(%s *m)\n{\n", p, p);
    P("    free(m->params);\n    free(m->grads);\n    free(m->state);\n    free(m->arena_);\n");
    P("    memset(m, 0, sizeof *m);\n}\n\n");
    if (!O->f64) {
        P("int %s_save(const %s *m, const char *path)\n{\n", p, p);
        P("    return nnc_st_save(path, tensor_info_, %d, (const float *)m->params, (const float *)m->state);\n}\n\n",
          M->nparams + M->nstate);
        P("int %s_load(%s *m, const char *path)\n{\n", p, p);
        P("    return nnc_st_load(path, tensor_info_, %d, (float *)m->params, (float *)m->state);\n}\n\n",
          M->nparams + M->nstate);
    }
}

/* Helpers the elementwise loops call: derivatives too long to inline. */
/* Whether a live node of some graph has this op (and, with pred, passes
 * it): the helper functions a model needs. */
static int uses_node(IrOp op, int (*pred)(const IrNode *))
{
    const Graph *gs[3] = {M->train, M->infer, M->eval};
    for (int k = 0; k < 3; k++)
        for (int i = 0; gs[k] && i < gs[k]->n; i++) {
            const IrNode *n = &gs[k]->nodes[i];
            if (n->op == op && n->fused >= 0 && (!pred || pred(n)))
                return 1;
        }
    return 0;
}

static int uses_op(IrOp op) { return uses_node(op, NULL); }

static void emit_helpers(void)
{
    const char *r = R();
    const int need_tanh = !O->f64 && (uses_op(IR_TANH) || uses_op(IR_GELU) || uses_op(IR_DGELU));
    const int need_exp =
        !O->f64 && (uses_node(IR_SOFTMAX, ir_softmax_by_rows) || uses_op(IR_CROSS_ENTROPY) || uses_op(IR_CE_BWD));
    if (need_tanh || need_exp) {
        /* a * b + c in one rounding where the target has a fast fused
         * multiply-add (C99's FP_FAST_FMAF, e.g. -march=native on x86-64
         * since Haswell): -std=c11 turns off GCC's contraction of a * b + c,
         * and the polynomials below are most of the work of GELU and
         * softmax (measured on gpt_mini's 1024x512 GELU: 0.85 -> 0.68 ms,
         * its gradient 1.16 -> 0.80 ms; the step's own loops outside
         * sgemm 20.4 -> 19.1 ms).  Elsewhere fmaf would be a library call,
         * so a multiply and an add. */
        P("#ifdef FP_FAST_FMAF\nstatic inline float nnc_fmaf(float a, float b, float c) { return fmaf(a, b, c); }\n");
        P("#else\nstatic inline float nnc_fmaf(float a, float b, float c) { return a * b + c; }\n#endif\n\n");
    }
    if (need_tanh) {
        /* Eigen's rational approximation of tanh for floats (max abs error
         * about 4e-7), clamped where it saturates: no libm call and no
         * branch, so loops over it vectorize */
        P("static inline float nnc_tanh_float(float x)\n{\n");
        P("    x = x < -7.90531110763549805f ? -7.90531110763549805f : x > 7.90531110763549805f ? 7.90531110763549805f : x;\n");
        P("    const float x2 = x * x;\n");
        P("    float p = nnc_fmaf(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);\n");
        P("    p = nnc_fmaf(x2, p, -8.60467152213735e-11f);\n    p = nnc_fmaf(x2, p, 5.12229709037114e-08f);\n");
        P("    p = nnc_fmaf(x2, p, 1.48572235717979e-05f);\n    p = nnc_fmaf(x2, p, 6.37261928875436e-04f);\n");
        P("    p = nnc_fmaf(x2, p, 4.89352455891786e-03f);\n    p = x * p;\n");
        P("    float q = nnc_fmaf(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);\n");
        P("    q = nnc_fmaf(x2, q, 2.26843463243900e-03f);\n    q = nnc_fmaf(x2, q, 4.89352518554385e-03f);\n");
        P("    return p / q;\n}\n\n");
    }
    if (need_exp) {
        /* exp for softmax (arguments <= 0): Cephes' expf, 2^n * p(r) with
         * r = x - n ln 2, about 1 ulp; the rounding uses the 1.5 * 2^23 trick
         * and 2^n is built in the exponent bits, so there is no libm call
         * and no branch and the loop vectorizes.  Below -87 (where expf
         * nears the subnormals) it gives 0, as for exp(-inf) */
        P("static inline float nnc_exp_float(float x)\n{\n");
        P("    const float xc = x >= -87.0f ? (x <= 88.0f ? x : 88.0f) : -87.0f;   /* NaN: -87, no undefined cast */\n");
        P("    const float t = xc * 1.44269504088896341f + 12582912.0f, fn = t - 12582912.0f;\n");
        P("    const float r = xc - fn * 0.693359375f + fn * 2.12194440e-4f, r2 = r * r;\n");
        P("    float p = nnc_fmaf(1.9875691500e-4f, r, 1.3981999507e-3f);\n");
        P("    p = nnc_fmaf(p, r, 8.3334519073e-3f);\n    p = nnc_fmaf(p, r, 4.1665795894e-2f);\n");
        P("    p = nnc_fmaf(p, r, 1.6666665459e-1f);\n    p = nnc_fmaf(p, r, 5.0000001201e-1f);\n");
        P("    p = nnc_fmaf(p, r2, r) + 1.0f;\n");
        P("    const int32_t e = ((int32_t)fn + 127) << 23;\n    float s;\n    memcpy(&s, &e, sizeof s);\n");
        P("    return x >= -87.0f ? p * s : x < -87.0f ? 0.0f : x;   /* NaN stays NaN */\n}\n\n");
    }
    if (uses_op(IR_DGELU)) {
    P("static inline %s nnc_dgelu_%s(%s x)\n{\n", r, r, r);
    P("    const %s k = %s, u = k * (x + %s * x * x * x), t = %s(u);\n", r, lit(0.7978845608028654), lit(0.044715), tanh_fn());
    P("    return %s * (%s + t) + %s * x * (%s - t * t) * k * (%s + %s * x * x);\n}\n\n", lit(0.5), lit(1), lit(0.5),
      lit(1), lit(1), lit(3 * 0.044715));
    }
    if (uses_node(IR_MAXPOOL_BWD, maxpool_tiles)) {
    /* g where keep is 1, +0 where it is 0, without a branch */
    const char *u = O->f64 ? "uint64_t" : "uint32_t";
    P("static inline %s nnc_keep_%s(%s g, int keep)\n{\n    %s u;\n    memcpy(&u, &g, sizeof u);\n", r, r, r, u);
    P("    u &= (%s)0 - (%s)keep;\n    memcpy(&g, &u, sizeof g);\n    return g;\n}\n\n", u, u);
    }
    if (uses_op(IR_DSILU)) {
    P("static inline %s nnc_dsilu_%s(%s x)\n{\n", r, r, r);
    P("    const %s s = %s / (%s + %s(-x));\n    return s * (%s + x * (%s - s));\n}\n\n", r, lit(1), lit(1), fn("exp"),
      lit(1), lit(1));
    }
}

static void emit_source(const char *hname, const char *fname)
{
    banner(fname);
    P("#include \"%s\"\n\n", hname);
    P("#include <errno.h>\n#include <math.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
    P("_Static_assert(sizeof(%s_params) == sizeof(%s) * %s, \"params must be a flat %s array\");\n\n", M->prefix, R(),
      M->nparams ? xs("%s_NUM_PARAMS", upper(M->prefix)) : "1", R());
    emit_helpers();
    if (M->nmetrics) {
        P("const char *const %s_metric_names[%d] = {", M->prefix, M->nmetrics);
        for (int i = 0; i < M->nmetrics; i++)
            P("%s\"%s\"", i ? ", " : "", M->metric_names[i]);
        P("};\n\n");
    }
    if (M->train && M->train->nsummaries) {
        P("const char *const %s_summary_names[%d] = {", M->prefix, M->train->nsummaries);
        for (int i = 0; i < M->train->nsummaries; i++)
            P("%s\"%s\"", i ? ", " : "", M->train->summary_name[i]);
        P("};\n\n");
    }
    emit_tensor_table();
    emit_init();
    emit_forward();
    if (M->has_loss) {
        emit_train();
        emit_backward();
        emit_eval();
    }
}

/* ---- the driver ------------------------------------------------------------------ */

static void io_desc(const IoDecl *io)
{
    P("    {\"%s\", %s, %d, {", io->name, io->dt == DT_I32 ? "NNC_I32" : "NNC_F32", io->shape.nd);
    for (int k = 0; k < io->shape.nd; k++)
        P("%s%lld", k ? ", " : "", k == 0 && io->shape.bd == 0 ? 0LL : (long long)io->shape.d[k]);
    P("}, %d, %d, %d},\n", io->shape.bd == 0, io->limit, io->ignore_ok);
}

static double flops(void)
{
    const Graph *g = M->infer;
    double f = 0;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].fused >= 0)
            f += ir_node_flops(g, i);
    return f;
}

static void emit_driver(const char *hname, const char *fname)
{
    const char *p = M->prefix;
    banner(fname);
    P("#include \"%s\"\n\n", hname);
    P("/* Thin wrappers from the driver's generic calls to the typed API. */\n");
    /* C11 needs the casts: a pointer to an array of const is not const */
    const char *args = "";
    for (int i = 0; i < M->ninputs; i++)
        args = xs("%s, (%s)in[%d]", args, io_decl(&M->inputs[i], 1, ""), i);
    const char *largs = "";
    for (int i = 0; i < M->nlabels; i++)
        largs = xs("%s, (%s)lab[%d]", largs, io_decl(&M->labels[i], 1, ""), i);
    P("static int init_(void *m, int max_batch, uint64_t seed) { return %s_init(m, max_batch, seed); }\n", p);
    P("static void release_(void *m) { %s_release(m); }\n", p);
    IoDecl oio;
    memset(&oio, 0, sizeof oio);
    oio.dt = DT_F32;
    oio.shape = M->infer->nodes[M->infer->output].shape;
    const char *ocast = io_decl(&oio, 0, "");
    P("static void forward_(void *m, int n, const void *const *in, void *out)\n{\n    %s_forward(m, n%s, (%s)out);\n}\n", p, args, ocast);
    if (M->has_loss) {
        P("static float train_forward_(void *m, int n, const void *const *in, const void *const *lab)\n{\n    return %s_train_forward(m, n%s%s);\n}\n",
          p, args, largs);
        P("static void backward_(void *m) { %s_backward(m); }\n", p);
        P("static void eval_(void *m, int n, const void *const *in, const void *const *lab, float *loss, float *metrics)\n{\n    %s_eval(m, n%s%s, loss, metrics);\n}\n",
          p, args, largs);
    }
    int ns = M->train ? M->train->nsummaries : 0;
    if (ns)
        P("static const float *summaries_(const void *m) { return ((const %s *)m)->summary_; }\n", p);
    P("static int save_(const void *m, const char *path) { return %s_save(m, path); }\n", p);
    P("static int load_(void *m, const char *path) { return %s_load(m, path); }\n\n", p);
    P("static const nnc_io_desc inputs_[%d] = {\n", M->ninputs);
    for (int i = 0; i < M->ninputs; i++)
        io_desc(&M->inputs[i]);
    P("};\n\n");
    if (M->nlabels) {
        P("static const nnc_io_desc labels_[%d] = {\n", M->nlabels);
        for (int i = 0; i < M->nlabels; i++)
            io_desc(&M->labels[i]);
        P("};\n\n");
    }
    P("int main(int argc, char **argv)\n{\n");
    P("    static const nnc_model_desc desc = {\n");
    P("        .name = \"%s\",\n        .model_size = sizeof(%s),\n", p, p);
    P("        .num_inputs = %d,\n        .num_labels = %d,\n        .num_metrics = %d,\n", M->ninputs, M->nlabels, M->nmetrics);
    P("        .inputs = inputs_,\n        .labels = %s,\n", M->nlabels ? "labels_" : "NULL");
    const IrNode *o = &M->infer->nodes[M->infer->output];
    P("        .output = ");
    {
        P("{\"output\", NNC_F32, %d, {", o->shape.nd);
        for (int k = 0; k < o->shape.nd; k++)
            P("%s%lld", k ? ", " : "", k == 0 ? 0LL : (long long)o->shape.d[k]);
        P("}, 1, 0, 0},\n");
    }
    P("        .metric_names = %s,\n", M->nmetrics ? xs("%s_metric_names", p) : "NULL");
    P("        .num_params = %s_NUM_PARAMS,\n        .num_state = %s_NUM_STATE,\n", upper(p), upper(p));
    P("        .flops_per_example = %.17g,\n", flops());
    P("        .has_loss = %d,\n", M->has_loss);
    P("        .tensors = %s_tensors,\n        .init = init_,\n        .release = release_,\n        .forward = forward_,\n", p);
    if (M->has_loss)
        P("        .train_forward = train_forward_,\n        .backward = backward_,\n        .eval = eval_,\n");
    if (ns)
        P("        .num_summaries = %d,\n        .summary_names = %s_summary_names,\n        .summaries = summaries_,\n", ns, p);
    P("        .save = save_,\n        .load = load_,\n    };\n");
    P("    return nnc_driver_main(argc, argv, &desc);\n}\n");
}

static void finish_file(EmitFile *f, const char *name, char *text, size_t len)
{
    f->name = xs("%s", name);
    f->text = text;
    f->len = len;
}

int emit_model(const Model *m, const EmitOptions *opt, EmitFile *files)
{
    M = m;
    O = opt;
    int nf = 0;
    if (opt->f64)
        for (int k = 0; k < m->nparams + m->nstate; k++) {
            const Tensor *t = k < m->nparams ? &m->params[k] : &m->state[k - m->nparams];
            if (t->from) {
                diag_error(t->loc, "'from' loads float files and cannot be used with --precision=f64");
                return 0;
            }
        }
    const char *hname = xs("%s.h", m->prefix), *cname = xs("%s.c", m->prefix), *dname = xs("%s_main.c", m->prefix);
    char *text;
    size_t len;
    out = open_memstream(&text, &len);
    emit_header(hname);
    fclose(out);
    finish_file(&files[nf++], hname, text, len);
    out = open_memstream(&text, &len);
    emit_source(hname, cname);
    fclose(out);
    finish_file(&files[nf++], cname, text, len);
    if (opt->driver && !opt->f64) {
        out = open_memstream(&text, &len);
        emit_driver(hname, dname);
        fclose(out);
        finish_file(&files[nf++], dname, text, len);
    }
    return nf;
}
