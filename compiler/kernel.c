/* kernel.c — kernel selection (kernel_*): how each node with a choice is
 * computed (convolutions, max pools, batch norm's sums, causal attention's
 * products), and the work memory that needs.
 *
 * This is the one place that decides.  It runs after autodiff, when every
 * convolution of a graph exists (the forward pass and both gradients), and
 * before planning, which reserves the largest work once per thread after
 * the arena: every kernel's call shares it, a slice per thread
 * (threads.c).  Emission prints the one call the choice names;
 * the sizes are nnc_conv.h's, which the runtime checks.
 *
 *   KERNEL_GEMM     1x1 kernels at stride 1 without padding: the image is
 *                   already the GEMM operand (no columns; conv_cols.c);
 *   KERNEL_DIRECT   the runtime's direct and Winograd kernels (conv.c), in
 *                   float: 16-float accumulators at AVX-512, 12 of 8
 *                   floats at AVX2 (Winograd at both); in the
 *                   generic build they run the columns themselves
 *                   (nnc_conv_direct_ok): their work holds either;
 *   KERNEL_COLUMNS  one example at a time, its columns [C*KH*KW, OH*OW]
 *                   (im2col) and one GEMM (conv_cols.c); images of fewer
 *                   than 256 output positions G at a time, one GEMM of
 *                   G*OH*OW columns (nnc_conv_cols_group).
 *   KERNEL_CONV_GEN the layers none of those take (ir_conv_general:
 *                   groups, dilation, unequal strides or padding):
 *                   conv_cols.c's general kernel, the columns and a GEMM
 *                   per group, or a direct loop for depthwise layers, or
 *                   (groups of several channels in the direct kernels'
 *                   geometry) the direct kernels a group at a time.
 *
 * Where each goes (measured on the benchmarks' layers): the direct kernels
 * beat the columns and OpenBLAS's GEMM on resnet_small's 3x3 layers (~1.4x)
 * and lenet5's 5x5 ones (1.3-2x) for the forward pass at stride 1 and 2,
 * but not for 1x1 at stride 2 (a quarter of the image: its 4 phases cost
 * more than the columns' subsample, 0.6 against 0.3 ms).  The kernel's
 * gradient goes direct at any stride but for 1x1 kernels (a GEMM of the
 * columns: resnet_small's projections took 1.7 ms in the kernel, whose
 * generic 1-tap rows run at ~10 GFLOP/s).  The data gradient at stride 1
 * correlates dy padded by K - 1 - pad, so it needs pad <= K - 1, and its
 * multiply-adds are H W / (OH OW) times the forward pass's: for
 * 'same'-like convolutions, up to 1.5x as many, or F <= 16 (measured with
 * nnc's GEMM, runtime/gemm.c, 1 thread, AVX-512 and AVX2, 2026-11-27: the
 * direct kernel took 0.74 ms for lenet5's unpadded 5x5 6<-16 on 14x14
 * against the columns' 1.70, 5.6 against 15.3 for 24<-24 on 28x28
 * (1.36x the positions), 1.2 against 2.6 for 3x3 32<-32 on 16x16 (1.31x);
 * the columns won or tied from F = 64 at 1.78-1.96x).  At stride 2 it
 * goes by dx's 4 phases (not for 1x1, where 3 of them are zeros): ~1.1 ms
 * for each of resnet_small's two layers against ~2.3 for the columns.
 * Grids under 64 positions go to the columns, but for 3x3 layers of 32+
 * channels on 4x4 images, whose three passes Winograd does 1.4-1.7x as
 * fast (docs/decisions.md).
 * Double precision (the gradient checks) always takes the columns.
 */
#include "kernel.h"
#include "nnc_conv.h"

nnc_conv2d_geom kernel_conv_geom(const Graph *g, const IrNode *n)
{
    const int fwd = n->op == IR_CONV2D, data = n->op == IR_CONV2D_BWD_DATA;
    const Shape x = fwd || !data ? g->nodes[n->in[fwd ? 0 : 1]].shape : n->shape;
    const Shape w = fwd || data ? g->nodes[n->in[1]].shape : n->shape;
    return (nnc_conv2d_geom){x.d[1],      x.d[2], x.d[3],   w.d[0],   n->kh,    n->kw,    n->stride,
                             n->stride_w, n->pad, n->pad_w, n->dil_h, n->dil_w, n->groups};
}

/* The choice for convolution node n of g. */
static void choose(IrNode *n, const Graph *g, int f64)
{
    const int fwd = n->op == IR_CONV2D, data = n->op == IR_CONV2D_BWD_DATA;
    if (ir_conv_general(n)) {
        /* groups, dilation, or unequal strides or padding: the general
         * kernel in either precision (its work: the columns, and a
         * kernel gradient's item keeps a partial dW beside them) */
        const nnc_conv2d_geom cg = kernel_conv_geom(g, n);
        n->kernel = KERNEL_CONV_GEN;
        n->work = fwd || data ? nnc_conv2d_gen_work(&cg) : nnc_conv2d_gen_filter_item_work(&cg);
        return;
    }
    /* x: the image side [N, C, H, W], y: the output side [N, F, OH, OW] */
    const Shape x = fwd || !data ? g->nodes[n->in[fwd ? 0 : 1]].shape : n->shape;
    const Shape y = fwd ? n->shape : g->nodes[n->in[0]].shape;
    const Shape w = fwd || data ? g->nodes[n->in[1]].shape : n->shape;
    const int64_t C = x.d[1], H = x.d[2], W = x.d[3], F = w.d[0], KH = n->kh, KW = n->kw, pad = n->pad;
    const int gemm = KH == 1 && KW == 1 && n->stride == 1 && pad == 0;
    const int s2 = n->stride == 2 && KH * KW > 1; /* stride 2 by phases, not for 1x1 */
    /* conv.c's tap table holds at most 4096 taps */
    const int direct_ok = !f64 && !gemm && KH * KW <= 4096;
    /* whether the direct kernel takes the node */
    int direct;
    switch (n->op) {
    case IR_CONV2D: direct = direct_ok && (n->stride == 1 || s2); break;
    case IR_CONV2D_BWD_DATA:
        /* at stride 1: where dx has at most 1.5x dy's positions, or the
         * columns' GEMM is at most 16 deep (F), too shallow to amortize
         * its tiles' loads and stores, and the columns' col2im */
        direct = direct_ok &&
            (s2 || (n->stride == 1 && pad < KH && pad < KW && (2 * H * W <= 3 * y.d[2] * y.d[3] || F <= 16)));
        break;
    default: direct = direct_ok && KH * KW > 1; break; /* the kernel's gradient */
    }
    /* output grids under 64 positions go to the columns, G images to a
     * GEMM (nnc_conv_small_grid, nnc_conv_cols_group), but for
     * Winograd's 4x4 layers (nnc_conv_wino: each pass, C and F alike) */
    if (nnc_conv_small_grid(y.d[2], y.d[3]) && !(n->stride == 1 && nnc_conv_wino(C, H, W, F, KH, KW, pad)))
        direct = 0;
    n->kernel = gemm ? KERNEL_GEMM : direct ? KERNEL_DIRECT : KERNEL_COLUMNS;
    /* the work of that kernel (the columns': none for gemm's forward pass
     * and data gradient; the direct kernel's holds the columns' too) */
    const int pass = fwd ? NNC_CONV_FWD : data ? NNC_CONV_DATA : NNC_CONV_FILTER;
    n->work = nnc_conv_kernel_work(pass, direct, C, H, W, F, KH, KW, n->stride, pad);
    /* one thread's work: a kernel gradient's item keeps a partial dW
     * beside it (nnc_conv.h, threads.c) */
    if (pass == NNC_CONV_FILTER)
        n->work = nnc_conv_filter_item_work(n->work, C, F, KH, KW);
}

/* Full attention's products, the same kernels without the triangle: a
 * batched float product of [T, T] scores (A Bᵀ, K as the causal one
 * takes it) or of a [T, T] left operand (A B, Aᵀ B), for T and the other
 * dim up to 128, where they beat nnc_gemm's packed product (1 thread,
 * Zen 5, AVX-512, us a call: 64 x 64 x 24 NT 0.87 against 1.10, 64 x 24
 * x 64 NN and TN 1.17 against 1.41; 64 and 128 by 32 and 64 within +-5 %;
 * at T = 256 by 128 the packed product wins, 66 against 83). */
static KernelKind full(const IrNode *n, Shape sa, int64_t T, int64_t N)
{
    if (T > 128 || N > 128)
        return KERNEL_LOOPS;
    const int64_t K = n->ta ? sa.d[sa.nd - 2] : sa.d[sa.nd - 1];
    if (!n->ta && n->tb && N == T && K <= 128 && NNC_CAUSAL_NT_KEYS * K <= NNC_CAUSAL_NT_MAX)
        return KERNEL_FULL_NT;
    if (!n->tb && K == T)
        return n->ta ? KERNEL_FULL_TN : KERNEL_FULL_NN;
    return KERNEL_LOOPS;
}

/* attn.c's kernels for a batched float matmul, or KERNEL_LOOPS (a
 * GEMM).  One that plan.c marked causal (mark_causal_products) goes to
 * the kernels that compute only the triangle that is read or
 * nonzero: float [T, T] matrices of any T (a last partial vector or block
 * of rows is masked), and the sizes the kernels take (the causal Bᵀ
 * product copies bᵀ to the stack, at least NNC_CAUSAL_NT_KEYS keys at a
 * time: K up to NNC_CAUSAL_NT_MAX / NNC_CAUSAL_NT_KEYS); one that is not
 * to full(), above. */
static KernelKind attn_kernel(const IrNode *n, const Graph *g, int f64)
{
    const Shape so = n->shape, sa = ir_matmul_operand(g, n, 0), sb = ir_matmul_operand(g, n, 1);
    if (f64 || so.nd < 3)
        return KERNEL_LOOPS;
    const int64_t T = so.d[so.nd - 2], N = so.d[so.nd - 1];
    if (sa.bd >= sa.nd - 2 || sb.bd >= sb.nd - 2)
        return KERNEL_LOOPS;
    if (!n->causal)
        return full(n, sa, T, N);
    if ((n->causal & 2) && !n->tb)
        return n->ta ? KERNEL_LOWER_TN : KERNEL_LOWER_NN;
    const int64_t K = sa.d[sa.nd - 1];
    if ((n->causal & 1) && !n->ta && n->tb && N == T && NNC_CAUSAL_NT_KEYS * K <= NNC_CAUSAL_NT_MAX)
        return KERNEL_CAUSAL_NT;
    return KERNEL_LOOPS;
}

/* Max pooling: 2x2 windows at stride 2 in float go to pool.c's 2x2
 * kernels; a backward pass whose windows tile the image (stride = size)
 * writes each element once (emit_vision.c), with no memset and no
 * scatter; the other square pools in float go to pool.c's general
 * kernels (nnc_maxpool_f32: a plane's offsets in int32). */
static KernelKind maxpool(const Graph *g, const IrNode *n, int f64)
{
    const int bwd = n->op == IR_MAXPOOL_BWD;
    const Shape x = bwd ? n->shape : g->nodes[n->in[0]].shape;
    if (!ir_pool_plain(n, x, bwd ? g->nodes[n->in[0]].shape : n->shape))
        return KERNEL_LOOPS;
    if (!f64 && n->kh == 2 && n->kw == 2 && n->stride == 2 && n->pad == 0)
        return KERNEL_VECTOR;
    if (n->op == IR_MAXPOOL_BWD && n->stride == n->kh && n->stride == n->kw && n->pad == 0)
        return KERNEL_TILES;
    return !f64 && x.d[2] * x.d[3] < INT32_MAX ? KERNEL_VECTOR : KERNEL_LOOPS;
}

/* Average pooling: square windows in float go to pool.c's general
 * kernels where their rows are long enough to pay: a vector of outputs
 * adds its taps in double one after another (as the loops do, in scan
 * order), so rows of few outputs leave it waiting on the adds.  1
 * thread, AVX-512, kernel / loops: forward 7.6 / 12.1 ms at 32 outputs a
 * row (3584 planes of 32x32, 3x3, stride 1, padding 1), 0.98 / 0.98 at
 * 24, 0.79 / 0.32 at 7; backward 4.7 / 18.7, 0.22 / 0.34 at 14 (2x2
 * tiles), 0.75 / 0.62 at 8. */
static KernelKind avgpool(const Graph *g, const IrNode *n, int f64)
{
    const int bwd = n->op == IR_AVGPOOL_BWD;
    const Shape x = bwd ? n->shape : g->nodes[n->in[0]].shape, o = bwd ? g->nodes[n->in[0]].shape : n->shape;
    if (f64 || !ir_pool_plain(n, x, o) || x.d[2] * x.d[3] >= INT32_MAX)
        return KERNEL_LOOPS;
    return o.d[3] >= (bwd ? 12 : 32) ? KERNEL_VECTOR : KERNEL_LOOPS;
}

void kernel_select(Graph *g, int f64)
{
    for (int i = 0; i < g->n; i++) {
        IrNode *n = &g->nodes[i];
        switch (n->op) {
        case IR_CONV2D:
        case IR_CONV2D_BWD_DATA:
        case IR_CONV2D_BWD_FILTER: choose(n, g, f64); break;
        case IR_MATMUL: n->kernel = attn_kernel(n, g, f64); break;
        case IR_MAXPOOL:
        case IR_MAXPOOL_BWD: n->kernel = maxpool(g, n, f64); break;
        case IR_AVGPOOL:
        case IR_AVGPOOL_BWD: n->kernel = avgpool(g, n, f64); break;
        /* bn.c's channel sums in float; double (the gradient checks)
         * keeps the generated loops */
        case IR_BN_STATS:
        case IR_BN_GRADS: n->kernel = f64 ? KERNEL_LOOPS : KERNEL_VECTOR; break;
        default: break;
        }
    }
}

const char *kernel_name(KernelKind k)
{
    static const char *const names[] = {"loops",    "gemm",     "direct",  "columns", "vector",  "tiles",   "causal_nt",
                                        "lower_nn", "lower_tn", "full_nt", "full_nn", "full_tn", "conv_gen"};
    _Static_assert(sizeof names / sizeof *names == KERNEL_CONV_GEN + 1, "a name for every KernelKind");
    return names[k];
}
