/* emit_ops.c — the code of the ops that are neither elementwise chains
 * nor convolution, pooling or batch norm (emit_*), and emit_node, which
 * prints one node's code by its op.
 *
 * Matmuls go to cblas_sgemm: one GEMM, or one per matrix of a batched
 * product with broadcast operands (attention's products to
 * runtime/attn.c's kernels).  Permute, concat, slice and pad are copies.
 * Softmax and the other row ops, the losses, embeddings, layer norm and
 * the causal mask loop over rows, summing in lanes (emit_loops.c).
 */
#include <stdlib.h>
#include <string.h>

#include "emitter.h"
#include "plan.h"
#include "nnc_conv.h"

/* ---- contractions and structure -------------------------------------------------- */

static void loops(Emitter *e, Shape s, int upto, const char *indent)
{
    for (int k = 0; k < upto; k++)
        P(e, "%sfor (int64_t i%d = 0; i%d < %s; i%d++)\n", indent, k, k, emit_dim(s, k), k);
}

/* The function of attn.c's products (causal or full attention) that
 * kernel.c chose, or NULL for a GEMM. */
static const char *attn_kernel(const IrNode *n)
{
    switch (n->kernel) {
    case KERNEL_CAUSAL_NT: return "nnc_matmul_causal_nt_f32";
    case KERNEL_LOWER_NN: return "nnc_matmul_lower_nn_f32";
    case KERNEL_LOWER_TN: return "nnc_matmul_lower_tn_f32";
    case KERNEL_FULL_NT: return "nnc_matmul_full_nt_f32";
    case KERNEL_FULL_NN: return "nnc_matmul_full_nn_f32";
    case KERNEL_FULL_TN: return "nnc_matmul_full_tn_f32";
    default: return NULL;
    }
}

/* Matrix (i0, i1) of a product's [b, h, t, d] operand or result that
 * lies in place inside a [b, t, h, d] tensor (plan.c fold_head_permutes;
 * s: the [b, h, t, d] shape): its offset, and its row pitch h d */
static const char *head_offset(Shape s)
{
    return emit_fmt("i0 * %lld + i1 * %lld", (long long)(s.d[1] * s.d[2] * s.d[3]), (long long)s.d[3]);
}
static const char *head_pitch(Shape s) { return emit_fmt("%lld", (long long)(s.d[1] * s.d[3])); }

/* Matrix (i0, i1, ..) of an output's leading dims, flat: `ic` */
static const char *matrix_index(Shape so)
{
    const char *flat = "0";
    for (int k = 0; k < so.nd - 2; k++)
        flat = k == 0 ? "i0" : emit_fmt("(%s) * %s + i%d", flat, emit_dim(so, k), k);
    return flat;
}

/* The address of t's matrix at offset `off` of its storage; a group's
 * local (plan_groups) holds that matrix alone */
static const char *matrix_at(Emitter *e, int t, const char *off)
{
    const int r = plan_storage_root(e->g, t);
    if (e->g->nodes[r].local)
        return emit_local(e, r);
    return emit_fmt("%s + %s", emit_ref(e, t), off);
}

/* One matrix of a batched product, (i0, i1, ..) and its flat index ic
 * declared around it: attn.c's kernel that kernel.c chose, or a GEMM */
static void matmul_matrix(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape so = n->shape, sa = ir_matmul_operand(e->g, n, 0), sb = ir_matmul_operand(e->g, n, 1);
    int no = so.nd;
    const char *M = emit_dim(so, no - 2), *N = emit_dim(so, no - 1);
    const char *K = n->ta ? emit_dim(sa, sa.nd - 2) : emit_dim(sa, sa.nd - 1);
    const char *lda = emit_dim(sa, sa.nd - 1), *ldb = emit_dim(sb, sb.nd - 1);
    const char *TA = n->ta ? "CblasTrans" : "CblasNoTrans", *TB = n->tb ? "CblasTrans" : "CblasNoTrans";
    const char *ma = emit_prod(sa, sa.nd - 2, sa.nd), *mb = emit_prod(sb, sb.nd - 2, sb.nd),
               *mc = emit_prod(so, no - 2, no);
    const char *ao = emit_bcast_offset(so, no - 2, sa, sa.nd - 2, ma),
               *bo = emit_bcast_offset(so, no - 2, sb, sb.nd - 2, mb), *co = emit_fmt("ic * %s", mc), *ldc = N;
    if (n->hperm & 1) {
        ao = head_offset(sa);
        lda = head_pitch(sa);
    }
    if (n->hperm & 2) {
        bo = head_offset(sb);
        ldb = head_pitch(sb);
    }
    if (n->hperm & 4) {
        co = head_offset(so);
        ldc = head_pitch(so);
    }
    const char *a = matrix_at(e, n->in[0], ao), *b = matrix_at(e, n->in[1], bo), *c = matrix_at(e, t, co);
    const char *kernel = attn_kernel(n);
    if (kernel)
        /* kernel.c's choice: attention's products, causal by the triangle */
        P(e, "        %s(%lld, %s, %s, %s, %s, %s, %s, %s, %s);\n", kernel, (long long)so.d[no - 2], n->tb ? K : N,
          emit_lit(e, n->alpha), a, lda, b, ldb, c, ldc);
    else
        P(e,
          "        %s(CblasRowMajor, %s, %s, (int)(%s), (int)(%s), (int)(%s), %s, %s, (int)(%s), %s, (int)(%s), %s, "
          "%s, (int)(%s));\n",
          emit_gemm(e), TA, TB, M, N, K, emit_lit(e, n->alpha), a, lda, b, ldb, emit_lit(e, 0), c, ldc);
}

void emit_matmul(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    /* the operands as the product reads them (hperm: through a head permute) */
    Shape so = n->shape, sa = ir_matmul_operand(e->g, n, 0), sb = ir_matmul_operand(e->g, n, 1);
    int no = so.nd;
    const char *M = emit_dim(so, no - 2), *N = emit_dim(so, no - 1);
    const char *K = n->ta ? emit_dim(sa, sa.nd - 2) : emit_dim(sa, sa.nd - 1);
    const int64_t kdim = n->ta ? sa.d[sa.nd - 2] : sa.d[sa.nd - 1]; /* K's static factor */
    const char *lda = emit_dim(sa, sa.nd - 1), *ldb = emit_dim(sb, sb.nd - 1);
    const char *TA = n->ta ? "CblasTrans" : "CblasNoTrans", *TB = n->tb ? "CblasTrans" : "CblasNoTrans";
    if (sb.nd == 2 && (sa.nd == 2 || !n->ta)) {
        /* one GEMM: the leading dims of A are more rows */
        const char *a = emit_ref(e, n->in[0]), *b = emit_ref(e, n->in[1]), *c = emit_ref(e, t);
        const char *rows = sa.nd == 2 ? M : emit_prod(so, 0, no - 1);
        /* on the threads if large enough (nnc_sgemm: blocks of the output) */
        const double flops = 2.0 * (double)ir_numel(so) * (double)kdim;
        const char *call = emit_gemm_call(e, flops, so.bd >= 0);
        /* in[2]: a linear layer's bias (ival 1, plan.c fold_linear_bias),
         * which float adds as each tile of C is final and double after
         * the GEMM; or an addend (plan.c fold_matmul_acc), which the
         * product accumulates onto, copied into C first */
        const int bias = n->nin > 2 && n->ival == 1, acc = n->nin > 2 && !bias;
        if (bias && !e->opt->f64) {
            P(e,
              "    nnc_sgemm_bias(%d, %s, %s, (int)(%s), (int)(%s), (int)(%s), %s, %s, (int)(%s), %s, (int)(%s), %s, "
              "(int)(%s), %s);\n",
              emit_gemm_splits(flops, so.bd >= 0), TA, TB, rows, N, K, emit_lit(e, n->alpha), a, lda, b, ldb, c, N,
              emit_ref(e, n->in[2]));
            return;
        }
        if (acc)
            P(e, "    memcpy(%s, %s, sizeof(%s) * (size_t)(%s));\n", c, emit_ref(e, n->in[2]), e->real, emit_numel(so));
        P(e, "    %s%s, %s, (int)(%s), (int)(%s), (int)(%s), %s, %s, (int)(%s), %s, (int)(%s), %s, %s, (int)(%s));\n",
          call, TA, TB, rows, N, K, emit_lit(e, n->alpha), a, lda, b, ldb, emit_lit(e, acc), c, N);
        if (bias) {
            P(e, "    for (int64_t r = 0; r < %s; r++)\n        for (int64_t j = 0; j < %s; j++)\n", rows, N);
            P(e, "            %s[r * %s + j] += %s[j];\n", c, N, emit_ref(e, n->in[2]));
        }
        return;
    }
    /* batched: one GEMM per matrix of the output, operands broadcast */
    Shape mats = so;
    mats.d[no - 1] *= kdim * 2; /* ~ its flops per element */
    /* the matrices on the threads: each writes its own output */
    emit_parallel(e, "    ", no - 2, mats, 1);
    loops(e, so, no - 2, "    ");
    P(e, "    {\n");
    if (!(n->hperm & 4))
        P(e, "        const int64_t ic = %s;\n", matrix_index(so));
    matmul_matrix(e, t);
    P(e, "    }\n");
}

/* Layer norm's rows, in chunks of this many where dweight and dbias are
 * summed over them (their statistics kept on the stack meanwhile) */
#define LN_CHUNK 512

/* The body of layer norm's loop over rows r (emit_ops' IR_LAYER_NORM*):
 * the row's mean mu and rstd, then its output row (forward) or its dx
 * row (backward) */
static void ln_row(Emitter *e, const IrNode *n, const char *x, const char *y, const char *ind)
{
    P(e, "%sconst %s *restrict xr = %s + r * D;\n", ind, e->real, x);
    emit_lanes_sum(e, ind, "sx", "D", "xr[k]");
    P(e, "%sconst %s mu = sx / (%s)D;\n", ind, e->real, e->real);
    emit_lanes_sum(e, ind, "sd", "D", "(xr[k] - mu) * (xr[k] - mu)");
    P(e, "%sconst %s rstd = %s / %s(sd / (%s)D + %s);\n", ind, e->real, emit_lit(e, 1), emit_libm(e, "sqrt"), e->real,
      emit_lit(e, n->fval));
    if (n->op == IR_LAYER_NORM) {
        const char *w = emit_ref(e, n->in[1]), *b = emit_ref(e, n->in[2]);
        P(e, "%sfor (int64_t k = 0; k < D; k++) %s[r * D + k] = (xr[k] - mu) * rstd * %s[k] + %s[k];\n", ind, y, w, b);
    } else if (n->op == IR_LAYER_NORM_BWD) {
        /* dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w */
        const char *dy = emit_ref(e, n->in[0]), *w = emit_ref(e, n->in[2]);
        P(e, "%sconst %s *restrict dr = %s + r * D;\n", ind, e->real, dy);
        emit_lanes_sum(e, ind, "sg", "D", emit_fmt("dr[k] * %s[k]", w));
        emit_lanes_sum(e, ind, "sgx", "D", emit_fmt("dr[k] * %s[k] * (xr[k] - mu)", w));
        P(e, "%sconst %s mg = sg / (%s)D, mgx = sgx * rstd / (%s)D;\n", ind, e->real, e->real, e->real);
        P(e,
          "%sfor (int64_t k = 0; k < D; k++) %s[r * D + k] = rstd * (dr[k] * %s[k] - mg - (xr[k] - mu) * rstd * "
          "mgx);\n",
          ind, y, w);
    }
}

/* Whether a permutation is a batch of matrix transposes: the input's
 * axes [0, p) stay first, in order, and the groups [p, q) and [q, nd)
 * trade places, so that the output is [B, C, R] of the input's [B, R,
 * C], B, R and C the products of the groups' dims ([N, T, D] -> [N, D,
 * T], or NCHW's [N, C, H, W] -> [N, H, W, C]). */
static int as_transposes(const IrNode *n, int nd, int *p, int *q)
{
    int a = 0;
    while (a < nd && n->perm[a] == a)
        a++;
    if (a == nd)
        return 0;
    const int b = n->perm[a]; /* > a: the axes before it are taken */
    int k = a;
    for (int j = b; j < nd; j++)
        if (n->perm[k++] != j)
            return 0;
    for (int j = a; j < b; j++)
        if (n->perm[k++] != j)
            return 0;
    *p = a;
    *q = b;
    return 1;
}

void emit_permute(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape so = n->shape, si = emit_nd(e, n->in[0])->shape;
    int p, q;
    if (!e->opt->f64 && as_transposes(n, si.nd, &p, &q)) {
        /* float: runtime/permute.c, TRANSPOSE_ROWS rows of each matrix a
         * call, the calls on the threads (the loop below read a float a
         * column apart for each it stored: 3-3.5x the time) */
        enum { TRANSPOSE_ROWS = 32 };
        const char *B = emit_prod(si, 0, p), *R = emit_prod(si, p, q), *C = emit_prod(si, q, si.nd);
        const char *rows = emit_fmt("%s - r0 < %d ? %s - r0 : %d", R, TRANSPOSE_ROWS, R, TRANSPOSE_ROWS);
        const char *x = emit_fmt("%s + (b * %s + r0) * %s", emit_ref(e, n->in[0]), R, C);
        const char *y = emit_fmt("%s + b * %s * %s + r0", emit_ref(e, t), C, R);
        P(e, "    {\n");
        emit_parallel(e, "        ", 2, so, 1.0);
        P(e, "        for (int64_t b = 0; b < %s; b++)\n", B);
        P(e, "        for (int64_t r0 = 0; r0 < %s; r0 += %d)\n", R, TRANSPOSE_ROWS);
        P(e, "            nnc_transpose_f32(%s, %s, %s, %s, %s, %s);\n", rows, C, x, C, y, R);
        P(e, "    }\n");
        return;
    }
    const char *idx = "";
    for (int k = 0; k < so.nd; k++) {
        const char *st = emit_stride(si, n->perm[k]);
        idx = strcmp(st, "1") ? emit_fmt("%s%si%d * %s", idx, k ? " + " : "", k, st)
                              : emit_fmt("%s%si%d", idx, k ? " + " : "", k);
    }
    /* the output in order, o its flat index; the outer loops on the
     * threads where the copy is large enough (the innermost stays a plain
     * loop) */
    const char *o = "i0";
    for (int k = 1; k < so.nd; k++)
        o = emit_fmt("(%s) * %s + i%d", o, emit_dim(so, k), k);
    P(e, "    {\n");
    emit_parallel(e, "        ", so.nd - 1, so, 1.0);
    loops(e, so, so.nd, "        ");
    P(e, "            %s[%s] = %s[%s];\n    }\n", emit_ref(e, t), so.nd ? o : "0", emit_ref(e, n->in[0]), idx);
}

void emit_concat(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape so = n->shape;
    int ax = n->axis;
    const char *outer = emit_prod(so, 0, ax), *ochunk = emit_prod(so, ax, so.nd), *inner = emit_prod(so, ax + 1, so.nd);
    int64_t off = 0;
    for (int k = 0; k < n->nin; k++) {
        Shape si = emit_nd(e, n->in[k])->shape;
        const char *chunk = emit_prod(si, ax, si.nd);
        P(e, "    for (int64_t o = 0; o < %s; o++)\n", outer);
        P(e, "        memcpy(%s + o * %s + %lld * %s, %s + o * %s, sizeof(%s) * (size_t)(%s));\n", emit_ref(e, t),
          ochunk, (long long)off, inner, emit_ref(e, n->in[k]), chunk, e->real, chunk);
        off += si.d[ax];
    }
}

/* slice (out = in[start:end] on axis) and pad (its adjoint) */
static void slice_pad(Emitter *e, int t, int pad)
{
    const IrNode *n = emit_nd(e, t);
    Shape big = pad ? n->shape : emit_nd(e, n->in[0])->shape, small = pad ? emit_nd(e, n->in[0])->shape : n->shape;
    int ax = n->axis;
    const char *outer = emit_prod(big, 0, ax), *bchunk = emit_prod(big, ax, big.nd),
               *schunk = emit_prod(small, ax, small.nd);
    const char *skip = emit_fmt("%lld * %s", (long long)n->start, emit_prod(big, ax + 1, big.nd));
    if (pad && n->fval != 0) /* pad(mode: "constant", value: v) */
        P(e, "    for (int64_t i = 0; i < %s; i++) %s[i] = %s;\n", emit_numel(big), emit_ref(e, t),
          emit_lit(e, n->fval));
    else if (pad)
        P(e, "    memset(%s, 0, sizeof(%s) * (size_t)(%s));\n", emit_ref(e, t), e->real, emit_numel(big));
    if (pad) {
        P(e, "    for (int64_t o = 0; o < %s; o++)\n", outer);
        P(e, "        memcpy(%s + o * %s + %s, %s + o * %s, sizeof(%s) * (size_t)(%s));\n", emit_ref(e, t), bchunk,
          skip, emit_ref(e, n->in[0]), schunk, e->real, schunk);
    } else {
        P(e, "    for (int64_t o = 0; o < %s; o++)\n", outer);
        P(e, "        memcpy(%s + o * %s, %s + o * %s + %s, sizeof(%s) * (size_t)(%s));\n", emit_ref(e, t), schunk,
          emit_ref(e, n->in[0]), bchunk, skip, e->real, schunk);
    }
}

void emit_slice(Emitter *e, int t) { slice_pad(e, t, 0); }

void emit_pad(Emitter *e, int t) { slice_pad(e, t, 1); }

/* pad(mode: "reflect") along one axis, and its adjoint: output position i
 * of the axis copies input position |i - start| mirrored at both ends
 * (PyTorch's reflect: the edge itself is not repeated; prims.c keeps each
 * side's padding below the dim).  Rows of `inner` contiguous elements. */
void emit_pad_reflect(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const int bwd = n->op == IR_PAD_REFLECT_BWD;
    Shape big = bwd ? emit_nd(e, n->in[0])->shape : n->shape, small = bwd ? n->shape : emit_nd(e, n->in[0])->shape;
    const int ax = n->axis;
    const char *outer = emit_prod(big, 0, ax), *inner = emit_prod(big, ax + 1, big.nd);
    const char *y = emit_ref(e, t), *x = emit_ref(e, n->in[0]);
    P(e, "    {\n        const int64_t LB = %lld, LS = %lld, PB = %lld, IN = %s;\n", (long long)big.d[ax],
      (long long)small.d[ax], (long long)n->start, inner);
    if (bwd)
        P(e, "        memset(%s, 0, sizeof(%s) * (size_t)(%s));\n", y, e->real, emit_numel(small));
    P(e, "        for (int64_t o = 0; o < %s; o++)\n        for (int64_t i = 0; i < LB; i++) {\n", outer);
    if (n->ival) /* replicate: the edge element repeated */
        P(e, "            int64_t j = i - PB;\n            j = j < 0 ? 0 : j >= LS ? LS - 1 : j;\n");
    else
        P(e, "            int64_t j = i - PB;\n            j = j < 0 ? -j : j >= LS ? 2 * (LS - 1) - j : j;\n");
    if (bwd)
        P(e, "            for (int64_t k = 0; k < IN; k++) %s[(o * LS + j) * IN + k] += %s[(o * LB + i) * IN + k];\n",
          y, x);
    else
        P(e, "            memcpy(%s + (o * LB + i) * IN, %s + (o * LS + j) * IN, sizeof(%s) * (size_t)IN);\n", y, x,
          e->real);
    P(e, "        }\n    }\n");
}

/* ---- softmax, row ops, losses ---------------------------------------------------- */

/* Softmax and its backward over a contiguous last dim, row by row: lane
 * reductions and a branch-free exp, so each pass vectorizes.  `alpha`
 * scales the input (forward) or dx (backward); a causal op handles row i of
 * each [T, T] matrix as its first i + 1 entries and writes zeros after. */
/* One [T, L] matrix of a float softmax by rows (or its gradient), the
 * matrix `ic` of a group's loop (emit_group): runtime/softmax.c on its T
 * rows, numbered from ic T (a causal row's length is its number mod L) */
static void softmax_matrix(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape s = n->shape;
    const int64_t T = s.d[s.nd - 2], L = s.d[s.nd - 1];
    const char *mat = emit_fmt("ic * %lld", (long long)(T * L));
    const char *x = matrix_at(e, n->in[0], mat), *y = matrix_at(e, t, mat);
    if (n->op == IR_SOFTMAX)
        P(e, "        nnc_softmax_rows_f32(%lld, %lld, ic * %lld, %d, %s, %s, %s);\n", (long long)T, (long long)L,
          (long long)T, n->causal ? 1 : 0, emit_lit(e, n->alpha), x, y);
    else
        P(e, "        nnc_softmax_rows_bwd_f32(%lld, %lld, ic * %lld, %d, %s, %s, %s, %s);\n", (long long)T,
          (long long)L, (long long)T, n->causal ? 1 : 0, emit_lit(e, n->alpha), x, matrix_at(e, n->in[1], mat), y);
}

void emit_group(Emitter *e, int t)
{
    const Graph *g = e->g;
    const IrNode *f = emit_nd(e, t);
    Shape s = f->shape;
    const int nd = s.nd;
    /* the members' multiply-adds or softmax elements, per output element
     * of the first (the threads' rule, emit_parallel) */
    double cost = 0;
    for (int j = t; j < g->n; j++) {
        const IrNode *n = &g->nodes[j];
        if (n->group != t)
            continue;
        if (n->op == IR_MATMUL) {
            const Shape sa = ir_matmul_operand(g, n, 0);
            cost += (double)ir_numel(n->shape) * 2.0 * (double)(n->ta ? sa.d[sa.nd - 2] : sa.d[sa.nd - 1]);
        } else
            cost += (double)ir_numel(n->shape) * 8.0;
    }
    emit_parallel(e, "    ", nd - 2, s, cost / (double)ir_numel(s));
    loops(e, s, nd - 2, "    ");
    P(e, "    {\n        const int64_t ic = %s;\n        (void)ic;\n", matrix_index(s));
    for (int j = t; j < g->n; j++) {
        const IrNode *n = &g->nodes[j];
        if (n->group == t && n->local)
            P(e, "        _Alignas(64) %s %s[%lld];\n", e->real, emit_local(e, j),
              (long long)(n->shape.d[n->shape.nd - 2] * n->shape.d[n->shape.nd - 1]));
    }
    for (int j = t; j < g->n; j++) {
        const IrNode *n = &g->nodes[j];
        if (n->group != t)
            continue;
        if (j != t)
            emit_comment_in(e, n, "        ");
        if (n->op == IR_MATMUL)
            matmul_matrix(e, j);
        else
            softmax_matrix(e, j);
    }
    P(e, "    }\n");
}

static void softmax_rows(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape s = n->shape;
    int64_t L = s.d[s.nd - 1];
    const char *y = emit_ref(e, t), *a = n->alpha != 1 ? emit_fmt("%s * ", emit_lit(e, n->alpha)) : "";
    if (!e->opt->f64) {
        /* float: runtime/softmax.c, blocks of SOFTMAX_ROWS rows on the
         * threads (the generated loops spent most of a short row outside
         * exp: softmax.c) */
        enum { SOFTMAX_ROWS = 16 };
        const char *rows = emit_prod(s, 0, s.nd - 1);
        emit_parallel(e, "    ", 1, s, 8);
        P(e, "    for (int64_t r0 = 0; r0 < %s; r0 += %d)\n", rows, SOFTMAX_ROWS);
        const char *cnt = emit_fmt("%s - r0 < %d ? %s - r0 : %d", rows, SOFTMAX_ROWS, rows, SOFTMAX_ROWS);
        if (n->op == IR_SOFTMAX)
            P(e, "        nnc_softmax_rows_f32(%s, %lld, r0, %d, %s, %s + r0 * %lld, %s + r0 * %lld);\n", cnt,
              (long long)L, n->causal ? 1 : 0, emit_lit(e, n->alpha), emit_ref(e, n->in[0]), (long long)L, y,
              (long long)L);
        else
            P(e,
              "        nnc_softmax_rows_bwd_f32(%s, %lld, r0, %d, %s, %s + r0 * %lld, %s + r0 * %lld, %s + r0 * "
              "%lld);\n",
              cnt, (long long)L, n->causal ? 1 : 0, emit_lit(e, n->alpha), emit_ref(e, n->in[0]), (long long)L,
              emit_ref(e, n->in[1]), (long long)L, y, (long long)L);
        return;
    }
    emit_parallel(e, "    ", 1, s, 8); /* rows on the threads */
    P(e, "    for (int64_t r = 0; r < %s; r++) {\n", emit_prod(s, 0, s.nd - 1));
    P(e, "        const int64_t len = %s;\n",
      n->causal ? emit_fmt("r %% %lld + 1", (long long)L) : emit_fmt("%lld", (long long)L));
    P(e, "        %s *restrict yr = %s + r * %lld;\n", e->real, y, (long long)L);
    if (n->op == IR_SOFTMAX) {
        P(e, "        const %s *restrict xr = %s + r * %lld;\n", e->real, emit_ref(e, n->in[0]), (long long)L);
        emit_lanes_max(e, "        ", "mx", "len", emit_fmt("%sxr[k]", a));
        P(e, "        for (int64_t k = 0; k < len; k++) yr[k] = %s(%sxr[k] - mx);\n", emit_exp_fn(e), a);
        emit_lanes_sum(e, "        ", "sum", "len", "yr[k]");
        P(e, "        const %s inv = %s / sum;\n", e->real, emit_lit(e, 1));
        P(e, "        for (int64_t k = 0; k < len; k++) yr[k] *= inv;\n");
    } else {
        const char *dy = emit_ref(e, n->in[0]), *yy = emit_ref(e, n->in[1]);
        P(e, "        const %s *restrict dr = %s + r * %lld, *restrict pr = %s + r * %lld;\n", e->real, dy,
          (long long)L, yy, (long long)L);
        emit_lanes_sum(e, "        ", "dot", "len", "dr[k] * pr[k]");
        P(e, "        for (int64_t k = 0; k < len; k++) yr[k] = %spr[k] * (dr[k] - dot);\n", a);
    }
    if (n->causal)
        P(e, "        for (int64_t k = len; k < %lld; k++) yr[k] = %s;\n", (long long)L, emit_lit(e, 0));
    P(e, "    }\n");
}

/* Row-wise ops over `axis`: outer x len x inner, rows strided by inner. */
static void row_loops(Emitter *e, Shape s, int ax)
{
    emit_parallel(e, "    ", 2, s, 8); /* each (o, j) writes its own row */
    P(e, "    for (int64_t o = 0; o < %s; o++)\n", emit_prod(s, 0, ax));
    P(e, "    for (int64_t j = 0; j < %s; j++) {\n", emit_prod(s, ax + 1, s.nd));
    P(e, "        const int64_t base = o * %s + j, st = %s, len = %s;\n", emit_prod(s, ax, s.nd),
      emit_prod(s, ax + 1, s.nd), emit_dim(s, ax));
}

/* The same taken ROW_BLOCK neighbouring rows at a time (j0 .. j0 + jn), so
 * that the loops over them read contiguous floats and vectorize, each
 * row's sums kept in its own lane of small arrays: the same operations
 * in the same order per row.  A row at a time, a softmax over the 21
 * channels of [32, 21, 32, 32] took 18 ns a value (12.5 ms forward, 13.8
 * backward), a cache line for every load. */
enum { ROW_BLOCK = 64 };
static void row_blocks(Emitter *e, Shape s, int ax)
{
    emit_parallel(e, "    ", 2, s, 8); /* each (o, j0) writes its own rows */
    P(e, "    for (int64_t o = 0; o < %s; o++)\n", emit_prod(s, 0, ax));
    P(e, "    for (int64_t j0 = 0; j0 < %s; j0 += %d) {\n", emit_prod(s, ax + 1, s.nd), ROW_BLOCK);
    P(e, "        const int64_t st = %s, len = %s, base = o * %s + j0, jn = st - j0 < %d ? st - j0 : %d;\n",
      emit_prod(s, ax + 1, s.nd), emit_dim(s, ax), emit_prod(s, ax, s.nd), ROW_BLOCK, ROW_BLOCK);
}

void emit_rowop(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape s = emit_nd(e, n->in[0])->shape;
    const char *y = emit_ref(e, t);
    if (ir_softmax_by_rows(n)) {
        softmax_rows(e, t);
        return;
    }
    switch (n->op) {
    case IR_SOFTMAX:
    case IR_LOG_SOFTMAX: {
        const char *x = emit_ref(e, n->in[0]), *T = e->real;
        row_blocks(e, s, n->axis);
        /* r: each row's 1 / sum (softmax) or log-sum-exp (log_softmax) */
        P(e, "        %s mx[%d], r[%d];\n        double sum[%d];\n", T, ROW_BLOCK, ROW_BLOCK, ROW_BLOCK);
        P(e, "        for (int64_t j = 0; j < jn; j++) { mx[j] = -INFINITY; sum[j] = 0; }\n");
        P(e, "        for (int64_t k = 0; k < len; k++) {\n");
        P(e, "            const %s *xr = %s + base + k * st;\n", T, x);
        P(e, "            for (int64_t j = 0; j < jn; j++) mx[j] = xr[j] > mx[j] ? xr[j] : mx[j];\n        }\n");
        P(e, "        for (int64_t k = 0; k < len; k++) {\n");
        P(e, "            const %s *xr = %s + base + k * st;\n", T, x);
        if (n->op == IR_SOFTMAX) {
            P(e, "            %s *yr = %s + base + k * st;\n", T, y);
            P(e,
              "            for (int64_t j = 0; j < jn; j++) { const %s v = %s(xr[j] - mx[j]); yr[j] = v; sum[j] += v; "
              "}\n",
              T, emit_exp_fn(e));
            P(e, "        }\n");
            P(e, "        for (int64_t j = 0; j < jn; j++) r[j] = (%s)(1.0 / sum[j]);\n", T);
            P(e, "        for (int64_t k = 0; k < len; k++) {\n");
            P(e, "            %s *yr = %s + base + k * st;\n", T, y);
            P(e, "            for (int64_t j = 0; j < jn; j++) yr[j] *= r[j];\n        }\n");
        } else {
            P(e, "            for (int64_t j = 0; j < jn; j++) sum[j] += %s(xr[j] - mx[j]);\n        }\n",
              emit_exp_fn(e));
            P(e, "        for (int64_t j = 0; j < jn; j++) r[j] = mx[j] + (%s)log(sum[j]);\n", T);
            P(e, "        for (int64_t k = 0; k < len; k++) {\n");
            P(e, "            const %s *xr = %s + base + k * st;\n            %s *yr = %s + base + k * st;\n", T, x, T,
              y);
            P(e, "            for (int64_t j = 0; j < jn; j++) yr[j] = xr[j] - r[j];\n        }\n");
        }
        P(e, "    }\n");
        break;
    }
    case IR_SOFTMAX_BWD:
    case IR_LOG_SOFTMAX_BWD: {
        const char *dy = emit_ref(e, n->in[0]), *yy = emit_ref(e, n->in[1]), *T = e->real;
        row_blocks(e, s, n->axis);
        P(e, "        double dot[%d];\n", ROW_BLOCK);
        P(e, "        for (int64_t j = 0; j < jn; j++) dot[j] = 0;\n");
        P(e, "        for (int64_t k = 0; k < len; k++) {\n");
        P(e, "            const %s *dr = %s + base + k * st, *pr = %s + base + k * st;\n", T, dy, yy);
        if (n->op == IR_SOFTMAX_BWD)
            P(e, "            for (int64_t j = 0; j < jn; j++) dot[j] += (double)dr[j] * pr[j];\n        }\n");
        else
            P(e, "            (void)pr;\n            for (int64_t j = 0; j < jn; j++) dot[j] += dr[j];\n        }\n");
        P(e, "        for (int64_t k = 0; k < len; k++) {\n");
        P(e, "            const %s *dr = %s + base + k * st, *pr = %s + base + k * st;\n", T, dy, yy);
        P(e, "            %s *yr = %s + base + k * st;\n", T, y);
        if (n->op == IR_SOFTMAX_BWD)
            P(e, "            for (int64_t j = 0; j < jn; j++) yr[j] = pr[j] * (dr[j] - (%s)dot[j]);\n        }\n", T);
        else
            P(e, "            for (int64_t j = 0; j < jn; j++) yr[j] = dr[j] - %s(pr[j]) * (%s)dot[j];\n        }\n",
              emit_exp_fn(e), T);
        P(e, "    }\n");
        break;
    }
    case IR_CUMSUM: {
        /* summed in double, as PyTorch's CPU kernel (acc_type of float) */
        const char *x = emit_ref(e, n->in[0]), *at = "%s[base + k * st]";
        row_loops(e, s, n->axis);
        P(e, "        double acc = 0;\n");
        P(e, "        for (int64_t k%s) {\n", n->ival & 2 ? " = len - 1; k >= 0; k--" : " = 0; k < len; k++");
        if (n->ival & 1)
            P(e, "            %s = (%s)acc;\n            acc += %s;\n", emit_fmt(at, y), e->real, emit_fmt(at, x));
        else
            P(e, "            acc += %s;\n            %s = (%s)acc;\n", emit_fmt(at, x), emit_fmt(at, y), e->real);
        P(e, "        }\n    }\n");
        break;
    }
    case IR_ARGMAX:
    case IR_ARGMIN: {
        /* torch.argmax's order: a NaN above (argmin: below) every number,
         * the first of ties (ival: the last, ONNX's select_last_index) */
        const char *x = emit_ref(e, n->in[0]), *gt = n->op == IR_ARGMAX ? "<" : ">";
        row_loops(e, s, n->axis);
        P(e, "        int32_t best = 0;\n");
        P(e, "        for (int64_t k = 1; k < len; k++) {\n");
        P(e, "            const %s v = %s[base + k * st], b = %s[base + best * st];\n", e->real, x, x);
        if (n->ival)
            P(e, "            if (b == b ? !(v %s b) : v != v)\n", gt);
        else
            P(e, "            if (b == b && !(v %s= b))\n", gt);
        P(e, "                best = (int32_t)k;\n        }\n");
        P(e, "        %s[o * st + j] = best;\n    }\n", y);
        break;
    }
    default: abort();
    }
}

void emit_loss(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const char *y = emit_ref(e, t);
    Shape s = emit_nd(e, n->in[n->op == IR_CE_BWD ? 1 : 0])->shape;
    switch (n->op) {
    case IR_CROSS_ENTROPY:
    case IR_ACCURACY:
    case IR_CE_BWD: {
        int li = n->op == IR_CE_BWD ? 1 : 0;
        const char *x = emit_ref(e, n->in[li]), *lab = emit_ref(e, n->in[li + 1]);
        int64_t C = s.d[s.nd - 1];
        const char *rows = emit_prod(s, 0, s.nd - 1);
        P(e, "    {\n        const int64_t rows = %s, C = %lld;\n", rows, (long long)C);
        if (n->op == IR_ACCURACY) {
            P(e, "        int64_t hits = 0;\n");
            P(e, "        for (int64_t r = 0; r < rows; r++) {\n");
            P(e, "            const %s *row = %s + r * C;\n            int64_t best = 0;\n", e->real, x);
            P(e, "            for (int64_t c = 1; c < C; c++) if (row[c] > row[best]) best = c;\n");
            P(e, "            hits += best == %s[r];\n        }\n", lab);
            P(e, "        double hr[2] = {(double)hits, (double)rows};\n");
            if (n->global)
                P(e, "        if (nnc_dist_size() > 1)\n            nnc_dist_sum_f64(hr, 2);\n");
            P(e, "        %s[0] = (%s)(hr[0] / hr[1]);\n    }\n", y, e->real);
            return;
        }
        /* ignore_index -100; another out-of-range id makes the loss NaN */
        P(e, "        int64_t count = 0;\n        int bad = 0;\n");
        P(e, "        for (int64_t r = 0; r < rows; r++) {\n");
        P(e, "            const int32_t c = %s[r];\n", lab);
        P(e,
          "            if (c == -100) continue;\n            if (c < 0 || c >= C) bad = 1; else count++;\n        }\n");
        /* the count (and a bad label) over every process's examples */
        int glob = n->op == IR_CE_BWD ? emit_nd(e, n->in[1])->shape.bd >= 0 : n->global;
        if (glob && n->op == IR_CE_BWD)
            P(e,
              "        if (nnc_dist_size() > 1) {\n            double cb[2] = {(double)count, (double)bad};\n"
              "            nnc_dist_sum_f64(cb, 2);\n            count = (int64_t)cb[0], bad = cb[1] != 0;\n        "
              "}\n");
        if (n->op == IR_CROSS_ENTROPY) {
            P(e, "        double total = 0;\n");
            P(e, "        for (int64_t r = 0; r < rows; r++) {\n");
            P(e, "            const int32_t c = %s[r];\n            if (c < 0 || c >= C) continue;\n", lab);
            P(e, "            const %s *row = %s + r * C;\n", e->real, x);
            emit_lanes_max(e, "            ", "mx", "C", "row[k]");
            emit_lanes_sum(e, "            ", "sum", "C", emit_fmt("%s(row[k] - mx)", emit_exp_fn(e)));
            P(e, "            total += log((double)sum) + (double)mx - (double)row[c];\n        }\n");
            if (glob)
                P(e,
                  "        if (nnc_dist_size() > 1) {\n            double tcb[3] = {total, (double)count, "
                  "(double)bad};\n"
                  "            nnc_dist_sum_f64(tcb, 3);\n            total = tcb[0], count = (int64_t)tcb[1], bad = "
                  "tcb[2] != 0;\n        }\n");
            P(e, "        %s[0] = bad ? (%s)NAN : (%s)(total / (double)count);\n    }\n", y, e->real, e->real);
        } else {
            P(e, "        const %s scale = bad ? (%s)NAN : (%s)((double)%s / (double)count);\n", e->real, e->real,
              e->real, emit_scalar(e, n->in[0]));
            emit_parallel(e, "        ", 1, s, 8); /* each row its own d */
            P(e, "        for (int64_t r = 0; r < rows; r++) {\n");
            P(e,
              "            const int32_t c = %s[r];\n            const %s *row = %s + r * C;\n            %s *d = %s + "
              "r * C;\n",
              lab, e->real, x, e->real, y);
            P(e, "            if (c == -100) { memset(d, 0, sizeof(%s) * (size_t)C); continue; }\n", e->real);
            emit_lanes_max(e, "            ", "mx", "C", "row[k]");
            P(e, "            for (int64_t k = 0; k < C; k++) d[k] = %s(row[k] - mx);\n", emit_exp_fn(e));
            emit_lanes_sum(e, "            ", "sum", "C", "d[k]");
            P(e, "            const %s inv = scale / sum;\n", e->real);
            P(e, "            for (int64_t k = 0; k < C; k++) d[k] *= inv;\n");
            P(e, "            if (c >= 0 && c < C) d[c] -= scale;\n        }\n    }\n");
        }
        return;
    }
    case IR_MSE:
    case IR_BCE_LOGITS: {
        const char *a = emit_ref(e, n->in[0]), *b = emit_ref(e, n->in[1]);
        P(e, "    {\n        double total = 0;\n");
        P(e, "        for (int64_t i = 0; i < %s; i++) {\n", emit_numel(s));
        if (n->op == IR_MSE)
            P(e, "            const double d = (double)%s[i] - (double)%s[i];\n            total += d * d;\n", a, b);
        else
            P(e,
              "            const double xd = %s[i], zd = %s[i];\n            total += (xd > 0 ? xd : 0) - xd * zd + "
              "log1p(exp(-fabs(xd)));\n",
              a, b);
        P(e, "        }\n        %s[0] = (%s)(total / (double)(%s));\n    }\n", y, e->real, emit_gnumel(s));
        return;
    }
    default: abort();
    }
}

/* ---- sequence models ------------------------------------------------------------- */

/* A later node computing `op` from the same dy (and x) as layer norm's
 * backward t, whose result goes straight to a param's gradient (so its
 * buffer exists at t's position too): layer norm's dweight, or the sum of
 * dy over rows that is its dbias.  Such nodes are computed in t's row loop;
 * -1 if there is none. */
static int ln_partner(Emitter *e, int t, IrOp op)
{
    const IrNode *n = emit_nd(e, t);
    int D = (int)n->shape.d[n->shape.nd - 1];
    for (int j = t + 1; j < e->g->n; j++) {
        const IrNode *c = emit_nd(e, j);
        if (c->op != op || c->fused < 0 || c->in[0] != n->in[0] || c->buf < 0 || e->g->bufs[c->buf].param_grad < 0)
            continue;
        if (op == IR_LAYER_NORM_WGRAD && c->in[1] == n->in[1] && c->fval == n->fval)
            return j;
        Shape si = emit_nd(e, c->in[0])->shape;
        if (op == IR_SUM && ir_numel(c->shape) == D && c->axes == (1u << (si.nd - 1)) - 1)
            return j;
    }
    return -1;
}

/* Embeddings, gather_elements, layer norm, the causal mask, tril and
 * triu (sequence models). */
void emit_seq_op(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const char *y = emit_ref(e, t);
    switch (n->op) {
    case IR_EMBEDDING:
    case IR_EMBEDDING_BWD: {
        int bwd = n->op == IR_EMBEDDING_BWD;
        Shape tab = bwd ? n->shape : emit_nd(e, n->in[1])->shape;
        const char *ids = emit_ref(e, n->in[bwd ? 1 : 0]), *src = emit_ref(e, n->in[bwd ? 0 : 1]);
        int64_t V = tab.d[0], D = tab.d[1];
        P(e, "    {\n        const int64_t rows = %s, V = %lld, D = %lld;\n",
          emit_numel(emit_nd(e, n->in[bwd ? 1 : 0])->shape), (long long)V, (long long)D);
        if (bwd)
            P(e, "        memset(%s, 0, sizeof(%s) * (size_t)(V * D));\n", y, e->real);
        if (!bwd) /* (the gradient adds rows into the table: one thread) */
            emit_parallel(e, "        ", 1, emit_nd(e, t)->shape, 1);
        P(e, "        for (int64_t r = 0; r < rows; r++) {\n            const int32_t id = %s[r];\n", ids);
        if (bwd) {
            P(e, "            if (id < 0 || id >= V) continue;\n");
            P(e, "            for (int64_t k = 0; k < D; k++) %s[id * D + k] += %s[r * D + k];\n", y, src);
        } else {
            /* an out-of-range id reads nothing: its row is NaN (spec section 7) */
            P(e,
              "            if (id < 0 || id >= V) { for (int64_t k = 0; k < D; k++) %s[r * D + k] = (%s)NAN; continue; "
              "}\n",
              y, e->real);
            P(e, "            memcpy(%s + r * D, %s + id * D, sizeof(%s) * (size_t)D);\n", y, src, e->real);
        }
        P(e, "        }\n    }\n");
        return;
    }
    case IR_GATHER_ELEMENTS:
    case IR_GATHER_ELEMENTS_BWD: {
        /* over the index's positions: x's element at the same position
         * with the axis coordinate the index; backward adds dy there (one
         * thread: positions may repeat) */
        int bwd = n->op == IR_GATHER_ELEMENTS_BWD;
        Shape si = emit_nd(e, n->in[1])->shape, sx = bwd ? n->shape : emit_nd(e, n->in[0])->shape;
        const char *idx = emit_ref(e, n->in[1]), *src = emit_ref(e, n->in[0]);
        const char *at = "";
        for (int k = 0; k < sx.nd; k++) {
            const char *st = emit_stride(sx, k), *i = k == n->axis ? "id" : emit_fmt("i%d", k);
            at = emit_fmt("%s%s%s", at, k ? " + " : "", strcmp(st, "1") ? emit_fmt("%s * %s", i, st) : i);
        }
        P(e, "    {\n        const int64_t L = %s;\n        int64_t o = 0;\n", emit_dim(sx, n->axis));
        if (bwd)
            P(e, "        memset(%s, 0, sizeof(%s) * (size_t)(%s));\n", y, e->real, emit_numel(sx));
        loops(e, si, si.nd, "        ");
        P(e, "        {\n            const int64_t id = %s[o];\n", idx);
        if (bwd)
            P(e, "            if (id >= 0 && id < L)\n                %s[%s] += %s[o];\n", y, at, src);
        else /* an out-of-range index reads nothing: NaN (spec section 7) */
            P(e, "            %s[o] = id >= 0 && id < L ? %s[%s] : (%s)NAN;\n", y, src, at, e->real);
        P(e, "            o++;\n        }\n    }\n");
        return;
    }
    case IR_LAYER_NORM:
    case IR_LAYER_NORM_BWD:
    case IR_LAYER_NORM_WGRAD: {
        /* each pass recomputes the row's statistics (two lane-summed passes
         * over a row in cache) instead of keeping them: cheaper than the
         * extra outputs, and the same numbers forward and backward */
        int xi = n->op == IR_LAYER_NORM ? 0 : 1;
        Shape s = emit_nd(e, n->in[xi])->shape;
        const char *x = emit_ref(e, n->in[xi]);
        /* dx, dweight and dbias over the same rows */
        int wg = n->op == IR_LAYER_NORM_BWD ? ln_partner(e, t, IR_LAYER_NORM_WGRAD) : -1;
        int bg = n->op == IR_LAYER_NORM_BWD ? ln_partner(e, t, IR_SUM) : -1;
        P(e, "    {\n        const int64_t rows = %s, D = %lld;\n", emit_prod(s, 0, s.nd - 1),
          (long long)s.d[s.nd - 1]);
        if (n->op == IR_LAYER_NORM || (n->op == IR_LAYER_NORM_BWD && wg < 0 && bg < 0)) {
            /* each row writes only its own: rows on the threads */
            emit_parallel(e, "        ", 1, s, 12);
            P(e, "        for (int64_t r = 0; r < rows; r++) {\n");
            ln_row(e, n, x, y, "            ");
            P(e, "        }\n    }\n");
            return;
        }
        /* dweight and dbias sum over the rows.  In chunks of LN_CHUNK rows:
         * the rows on the threads (their statistics kept, dx written),
         * then dweight and dbias by blocks of columns on the threads, each
         * column adding its rows in order, so the sums are the same at any
         * thread count */
        const char *wsum = n->op == IR_LAYER_NORM_WGRAD ? y : wg >= 0 ? emit_ref(e, wg) : NULL;
        const char *bsum = bg >= 0 ? emit_ref(e, bg) : NULL;
        if (wsum)
            P(e, "        memset(%s, 0, sizeof(%s) * (size_t)D);\n", wsum, e->real);
        if (bsum)
            P(e, "        memset(%s, 0, sizeof(%s) * (size_t)D);\n", bsum, e->real);
        if (wg >= 0)
            e->merged[wg] = 1;
        if (bg >= 0)
            e->merged[bg] = 1;
        const char *dy = emit_ref(e, n->in[0]);
        P(e, "        for (int64_t r0 = 0; r0 < rows; r0 += %d) {\n", LN_CHUNK);
        P(e, "            const int64_t r1 = r0 + %d < rows ? r0 + %d : rows;\n", LN_CHUNK, LN_CHUNK);
        P(e, "            %s mu_[%d], rstd_[%d];\n", e->real, LN_CHUNK, LN_CHUNK);
        emit_parallel_work(e, "            ", 1, emit_fmt("(r1 - r0) * D * %d", n->op == IR_LAYER_NORM_BWD ? 12 : 4));
        P(e, "            for (int64_t r = r0; r < r1; r++) {\n");
        ln_row(e, n, x, y, "                ");
        P(e, "                mu_[r - r0] = mu;\n                rstd_[r - r0] = rstd;\n            }\n");
        emit_parallel_work(e, "            ", 1, "(r1 - r0) * D * 3");
        const int w = emit_sum_width(e);
        P(e, "            for (int64_t k0 = 0; k0 < D; k0 += %d) {\n", w);
        P(e, "                const int64_t k1 = k0 + %d < D ? k0 + %d : D;\n", w, w);
        const char *setup = emit_fmt("const %s *restrict xr = %s + r * D, *restrict dr = %s + r * D;\n"
                                     "const %s mu = mu_[r - r0], rstd = rstd_[r - r0];",
                                     e->real, x, dy, e->real);
        const char *dst[2], *ex[2];
        int ns = 0;
        if (wsum) {
            dst[ns] = wsum;
            ex[ns++] = "dr[k] * (xr[k] - mu) * rstd";
        }
        if (bsum) {
            dst[ns] = bsum;
            ex[ns++] = "dr[k]";
        }
        emit_column_sums(e, "                ", "r0", "r1", setup, ns, dst, ex);
        P(e, "            }\n        }\n    }\n");
        return;
    }
    case IR_CAUSAL_MASK: {
        Shape s = n->shape;
        int64_t T = s.d[s.nd - 1];
        P(e, "    {\n        const int64_t mats = %s, T = %lld;\n", emit_prod(s, 0, s.nd - 2), (long long)T);
        P(e,
          "        for (int64_t b = 0; b < mats; b++)\n        for (int64_t i = 0; i < T; i++)\n        for (int64_t j "
          "= 0; j < T; j++)\n");
        P(e, "            %s[(b * T + i) * T + j] = j > i ? %s : %s[(b * T + i) * T + j];\n    }\n", y,
          n->ival ? emit_lit(e, 0) : "-INFINITY", emit_ref(e, n->in[0]));
        return;
    }
    case IR_TRIL:
    case IR_TRIU: {
        /* element (i, j) of each [R, C] matrix kept where j - i <= k
         * (tril) or >= k (triu), else 0 */
        Shape s = n->shape;
        int64_t R = s.d[s.nd - 2], C = s.d[s.nd - 1];
        P(e, "    {\n        const int64_t mats = %s, R = %lld, C = %lld;\n", emit_prod(s, 0, s.nd - 2), (long long)R,
          (long long)C);
        P(e,
          "        for (int64_t b = 0; b < mats; b++)\n        for (int64_t i = 0; i < R; i++)\n        for (int64_t j "
          "= 0; j < C; j++)\n");
        P(e, "            %s[(b * R + i) * C + j] = j - i %s %d ? %s[(b * R + i) * C + j] : %s;\n    }\n", y,
          n->op == IR_TRIL ? "<=" : ">=", n->ival, emit_ref(e, n->in[0]), emit_lit(e, 0));
        return;
    }
    default: abort();
    }
}

/* ---- dropout, and the per-node dispatch ------------------------------------------ */

/* dropout's mask: 1 / keep with probability keep, else 0 */
void emit_rng_mask(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    double keep = 1 - n->fval;
    /* Each element's draw is a function of the pass's key, this mask's
     * number and the element's index in the global batch (the batch dim's
     * index offset by this process's first example, g0), so the masks are
     * the same whatever the number of processes or threads. */
    Shape s = n->shape;
    int bd = s.bd;
    const char *outer = bd < 0 ? "1" : emit_prod(s, 0, bd), *rows = bd < 0 ? "1" : emit_dim(s, bd),
               *inner = bd < 0 ? emit_numel(s) : emit_prod(s, bd + 1, s.nd);
    const char *grows = bd < 0 ? "1" : s.d[bd] == 1 ? "gn" : emit_fmt("%lld * gn", (long long)s.d[bd]);
    const char *g0 = bd < 0 ? "0" : s.d[bd] == 1 ? "g0" : emit_fmt("%lld * g0", (long long)s.d[bd]);
    P(e, "    {\n        const uint64_t key = nnc_rng_key(dkey, %d);\n", e->mask_seq++);
    P(e, "        const int64_t outer = %s, rows = %s, inner = %s;\n", outer, rows, inner);
    P(e, "        for (int64_t o = 0; o < outer; o++)\n        for (int64_t r = 0; r < rows; r++) {\n");
    P(e, "            const uint64_t base = (uint64_t)((o * (%s) + %s + r) * inner);\n", grows, g0);
    P(e, "            %s *row = %s + (o * rows + r) * inner;\n", e->real, emit_ref(e, t));
    P(e, "            for (int64_t i = 0; i < inner; i++)\n");
    P(e, "                row[i] = nnc_rng_keyed(key, base + (uint64_t)i) < %.17g ? %s : %s;\n        }\n    }\n", keep,
      emit_lit(e, 1 / keep), emit_lit(e, 0));
}

/* ---- processes (dist.c) ------------------------------------------------------------ */

/* allreduce: the whole value of a partial sum; rank0: a whole value kept
 * on rank 0 only, so that a sum over the processes counts it once.  One
 * process: a copy. */
void emit_dist_op(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const IrNode *x = emit_nd(e, n->in[0]);
    const char *y = emit_ref(e, t), *cnt = emit_numel(n->shape);
    if (x->op == IR_CONST && x->fused == 1) /* a scalar constant has no storage */
        P(e, "    %s[0] = %s;\n", y, emit_scalar(e, n->in[0]));
    else
        P(e, "    memcpy(%s, %s, sizeof(%s) * (size_t)(%s));\n", y, emit_ref(e, n->in[0]), e->real, cnt);
    if (n->op == IR_ALLREDUCE)
        P(e, "    if (nnc_dist_size() > 1)\n        nnc_dist_sum_f32(%s, %s);\n", y, cnt);
    else
        P(e, "    if (nnc_dist_rank() != 0)\n        memset(%s, 0, sizeof(%s) * (size_t)(%s));\n", y, e->real, cnt);
}

/* ops.def's emit column: the printer of each op, 0 where an op prints
 * nothing of its own (leaves, views, work buffers) */
static void (*const emitters[IR_NUM_OPS])(Emitter *e, int t) = {
#define OP(en, name, cls, arity, flops, grad, emit) [IR_##en] = emit,
#include "ops.def"
#undef OP
};

int emit_op_prints(IrOp op) { return emitters[op] != 0; }

void emit_node(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    /* fused into a reader's loop, or computed by an earlier node's (or
     * its group's first member's loop, plan_groups) */
    if (n->fused || e->merged[t] || !emitters[n->op] || (n->group >= 0 && n->group != t))
        return;
    emit_comment(e, n);
    if (n->group == t) {
        emit_group(e, t);
        return;
    }
    emitters[n->op](e, t);
    /* a reduction over the batch whose result is each process's share of
     * the global one (a sum, a mean or a loss divided by the global
     * count): added up across the processes (dist.c) */
    if (n->global && n->op != IR_BN_STATS && n->op != IR_CROSS_ENTROPY && n->op != IR_ACCURACY)
        P(e, "    if (nnc_dist_size() > 1)\n        nnc_dist_%s_f32(%s, %s);\n", n->op == IR_MAX ? "max" : "sum",
          emit_ref(e, t), emit_numel(n->shape));
}
