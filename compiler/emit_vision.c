/* emit_vision.c — convolution, pooling and batch norm, NCHW (emit_*).
 *
 * A convolution is one call into the runtime: in float its direct kernels
 * (conv.c) where they suit the layer (they take the columns themselves
 * where the runtime lacks AVX-512); otherwise, and in double, the columns
 * (conv_cols.c: im2col and one GEMM per example); groups, dilation and
 * unequal strides or padding, conv_cols.c's general kernel.  Square pools
 * in float call runtime/pool.c (2x2 max pools at stride 2 its own
 * kernels), but for a max pool's backward pass whose windows tile the
 * image, which writes each element once; the other pools (double, or
 * windows that are not square) and the IR's im2col/col2im ops are loops
 * over the windows.  Batch norm's channel
 * sums are runtime/bn.c's in float and lane sums (emit_loops.c) in
 * double.
 */
#include <stdlib.h>
#include <string.h>

#include "emitter.h"
#include "nnc_conv.h"

/* ---- pooling, im2col and col2im -------------------------------------------------- */

/* 2x2 windows at stride 2 in float: runtime/pool.c's vector code */
static void maxpool2_call(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape x = n->op == IR_MAXPOOL ? emit_nd(e, n->in[0])->shape : n->shape;
    const char *nc = emit_fmt("%s * %lld", emit_dim(x, 0), (long long)x.d[1]);
    if (n->op == IR_MAXPOOL)
        P(e, "    nnc_maxpool2_f32(%s, %lld, %lld, %s, %s);\n", nc, (long long)x.d[2], (long long)x.d[3],
          emit_ref(e, n->in[0]), emit_ref(e, t));
    else /* with relu's gradient where plan.c folded it (fold_relu_pool) */
        P(e, "    nnc_maxpool2_bwd_f32(%s, %lld, %lld, %s, %s, %s, %d);\n", nc, (long long)x.d[2], (long long)x.d[3],
          emit_ref(e, n->in[1]), emit_ref(e, n->in[0]), emit_ref(e, t), n->ival ? 1 : 0);
}

/* Any other square pool in float, max or average: runtime/pool.c's
 * general kernels */
static void pool_call(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const int bwd = n->op == IR_MAXPOOL_BWD || n->op == IR_AVGPOOL_BWD;
    const int avg = n->op == IR_AVGPOOL || n->op == IR_AVGPOOL_BWD;
    const Shape x = bwd ? n->shape : emit_nd(e, n->in[0])->shape, o = bwd ? emit_nd(e, n->in[0])->shape : n->shape;
    P(e, "    nnc_%spool%s_f32(%s * %lld, %lld, %lld, %lld, %lld, %d, %d, %d, ", avg ? "avg" : "max", bwd ? "_bwd" : "",
      emit_dim(x, 0), (long long)x.d[1], (long long)x.d[2], (long long)x.d[3], (long long)o.d[2], (long long)o.d[3],
      n->kh, n->stride, n->pad);
    if (avg)
        P(e, "%d, ", n->exclude_pad ? 1 : 0);
    if (n->op == IR_MAXPOOL_BWD) /* x, dy, dx */
        P(e, "%s, %s, %s);\n", emit_ref(e, n->in[1]), emit_ref(e, n->in[0]), emit_ref(e, t));
    else
        P(e, "%s, %s);\n", emit_ref(e, n->in[0]), emit_ref(e, t));
}

/* Max-pool backward when the windows tile the image (stride == size):
 * each input element is in at most one window, so every element of a
 * window is written once, dy at the window's first maximum and 0
 * elsewhere, and only the elements no window covers are cleared: no
 * memset of dx and no scattered read-modify-write. */
static void maxpool_bwd_tiled(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape x = n->shape, o = emit_nd(e, n->in[0])->shape;
    const char *dx = emit_ref(e, t), *dy = emit_ref(e, n->in[0]), *xp = emit_ref(e, n->in[1]);
    P(e, "    {\n        const int64_t N = %s, C = %lld, H = %lld, W = %lld, OH = %lld, OW = %lld, K = %d;\n",
      emit_dim(x, 0), (long long)x.d[1], (long long)x.d[2], (long long)x.d[3], (long long)o.d[2], (long long)o.d[3],
      n->kh);
    emit_parallel(e, "        ", 1, x, 2); /* each image its own dx */
    P(e, "        for (int64_t bc = 0; bc < N * C; bc++) {\n");
    P(e, "            const %s *img = %s + bc * H * W;\n            %s *dimg = %s + bc * H * W;\n", e->real, xp,
      e->real, dx);
    P(e, "            for (int64_t oh = 0; oh < OH; oh++) {\n");
    P(e, "                for (int64_t ow = 0; ow < OW; ow++) {\n");
    P(e, "                    const %s *win = img + oh * K * W + ow * K;\n", e->real);
    /* PyTorch's rule: the first maximum in scan order, or the last NaN (a
     * NaN replaces the running maximum, and only a later NaN replaces it);
     * selected with integer masks, not branches (compilers turn `c ? g :
     * 0` into jumps, which random data mispredicts: lenet5's pool1
     * backward took 1.2 ms, 0.25 ms this way) */
    /* (mx: m is the model) */
    P(e, "                    %s mx = win[0];\n                    int64_t best = 0;\n", e->real);
    P(e,
      "                    for (int64_t ki = 0; ki < K; ki++)\n                    for (int64_t kj = 0; kj < K; kj++) "
      "{\n");
    P(e,
      "                        const %s v = win[ki * W + kj];\n                        const int64_t s = (v > mx) | (v "
      "!= v);\n",
      e->real);
    P(e,
      "                        mx = s ? v : mx;\n                        best ^= (best ^ (ki * K + kj)) & -s;\n        "
      "            }\n");
    P(e, "                    const %s g = %s[(bc * OH + oh) * OW + ow];\n", e->real, dy);
    P(e, "                    %s *dwin = dimg + oh * K * W + ow * K;\n", e->real);
    P(e,
      "                    for (int64_t ki = 0; ki < K; ki++)\n                    for (int64_t kj = 0; kj < K; "
      "kj++)\n");
    if (n->ival) /* and relu's gradient (plan.c fold_relu_pool): step(x), x its output */
        P(e,
          "                        dwin[ki * W + kj] = nnc_keep_%s(g, (ki * K + kj == best) & (win[ki * W + kj] > "
          "%s));\n",
          e->real, emit_lit(e, 0));
    else
        P(e, "                        dwin[ki * W + kj] = nnc_keep_%s(g, ki * K + kj == best);\n", e->real);
    P(e, "                }\n");
    if (x.d[3] > o.d[3] * n->kh) {
        P(e, "                for (int64_t r = oh * K; r < oh * K + K; r++)\n");
        P(e, "                    for (int64_t c = OW * K; c < W; c++) dimg[r * W + c] = %s;\n", emit_lit(e, 0));
    }
    P(e, "            }\n");
    if (x.d[2] > o.d[2] * n->kh)
        P(e, "            memset(dimg + OH * K * W, 0, sizeof(%s) * (size_t)((H - OH * K) * W));\n", e->real);
    P(e, "        }\n    }\n");
}

/* The pools with padding (the loops of window_op, whose header declares
 * N, C, H, W, OH, OW, KH, KW, SD, PD): each window is clipped to the
 * image, [ki0, ki1) x [kj0, kj1), so padding never wins a max (PyTorch's
 * -inf) and adds nothing to a mean, whose divisor is the whole window or,
 * with count_include_pad false (exclude_pad), its in-bounds part.  Every
 * window keeps at least one element (padding <= size / 2, prims.c). */
static void padded_pool(Emitter *e, const IrNode *n, const char *y, const char *src)
{
    P(e, "        for (int64_t bc = 0; bc < N * C; bc++)\n        for (int64_t oh = 0; oh < OH; oh++)\n");
    P(e, "        for (int64_t ow = 0; ow < OW; ow++) {\n");
    P(e, "            const int64_t op = (bc * OH + oh) * OW + ow, h0 = oh * SD - PD, w0 = ow * SD - PD;\n");
    P(e, "            const int64_t ki0 = h0 < 0 ? -h0 : 0, ki1 = h0 + KH > H ? H - h0 : KH;\n");
    P(e, "            const int64_t kj0 = w0 < 0 ? -w0 : 0, kj1 = w0 + KW > W ? W - w0 : KW;\n");
    const char *x = n->op == IR_MAXPOOL_BWD ? emit_ref(e, n->in[1]) : src;
    const char *at = "(bc * H + h0 + ki) * W + w0 + kj";
    switch (n->op) {
    case IR_MAXPOOL:
        P(e, "            %s mx = -INFINITY;\n", e->real);
        P(e,
          "            for (int64_t ki = ki0; ki < ki1; ki++)\n            for (int64_t kj = kj0; kj < kj1; kj++) {\n");
        P(e, "                const %s v = %s[%s];\n                mx = ((v > mx) | (v != v)) ? v : mx;\n", e->real, x,
          at);
        P(e, "            }\n            %s[op] = mx;\n", y);
        break;
    case IR_MAXPOOL_BWD: /* the first maximum in scan order, or the last NaN */
        P(e, "            int64_t best = (bc * H + h0 + ki0) * W + w0 + kj0;\n");
        P(e,
          "            for (int64_t ki = ki0; ki < ki1; ki++)\n            for (int64_t kj = kj0; kj < kj1; kj++) {\n");
        P(e, "                const int64_t k = %s;\n", at);
        P(e, "                if (%s[k] > %s[best] || %s[k] != %s[k]) best = k;\n            }\n", x, x, x, x);
        P(e, "            %s[best] += %s[op];\n", y, src);
        break;
    case IR_AVGPOOL:
        P(e, "            double acc = 0;\n");
        P(e,
          "            for (int64_t ki = ki0; ki < ki1; ki++)\n            for (int64_t kj = kj0; kj < kj1; kj++) acc "
          "+= "
          "%s[%s];\n",
          x, at);
        P(e, "            %s[op] = (%s)(acc / (double)(%s));\n", y, e->real,
          n->exclude_pad ? "(ki1 - ki0) * (kj1 - kj0)" : "KH * KW");
        break;
    case IR_AVGPOOL_BWD:
        P(e, "            const %s g = %s[op] / (%s)(%s);\n", e->real, src, e->real,
          n->exclude_pad ? "(ki1 - ki0) * (kj1 - kj0)" : "KH * KW");
        P(e,
          "            for (int64_t ki = ki0; ki < ki1; ki++)\n            for (int64_t kj = kj0; kj < kj1; kj++) "
          "%s[%s] += g;\n",
          y, at);
        break;
    default: abort();
    }
    P(e, "        }\n    }\n");
}

/* An average pool's divisor for the window of row h0, column w0, whose
 * taps in the image are [ki0, ki1) x [kj0, kj1) (general_pool) */
static const char *pool_divisor(const IrNode *n)
{
    return n->exclude_pad
        ? "(ki1 > ki0 ? ki1 - ki0 : 0) * (kj1 > kj0 ? kj1 - kj0 : 0)"
        : "((h0 + KH < H + PH ? h0 + KH : H + PH) - h0) * ((w0 + KW < W + PW ? w0 + KW : W + PW) - w0)";
}

/* general_pool's windows inside the image, columns [lo, hi) of row h0:
 * every tap in bounds, written out one by one (a loop over the taps, even
 * of constant bounds, kept gcc from vectorizing over the columns), at
 * offset ki DH W + kj DW from the window's first element b. */
static void inside_pool(Emitter *e, const IrNode *n, const char *xs, const char *src, const char *y)
{
    const char *R = e->real;
    const int taps = n->kh * n->kw;
    const char *off[16];
    for (int t = 0; t < taps; t++)
        off[t] = emit_fmt("b + %d * DH * W + %d * DW", t / n->kw, t % n->kw);
    P(e, "            for (int64_t ow = lo; ow < hi; ow++) {\n");
    P(e,
      "                const int64_t w0 = ow * SW - PW, op = (bc * OH + oh) * OW + ow, b = (bc * H + h0) * W + w0;\n");
    if ((n->op == IR_AVGPOOL || n->op == IR_AVGPOOL_BWD) && n->exclude_pad)
        P(e, "                const int64_t ki0 = 0, kj0 = 0, ki1 = KH, kj1 = KW;\n");
    switch (n->op) {
    case IR_MAXPOOL:
        P(e, "                %s mx = -INFINITY;\n", R);
        for (int t = 0; t < taps; t++)
            P(e, "                { const %s v = %s[%s]; mx = ((v > mx) | (v != v)) ? v : mx; }\n", R, xs, off[t]);
        P(e, "                %s[op] = mx;\n", y);
        break;
    case IR_MAXPOOL_BWD: /* the first maximum in scan order, or the last NaN, by its value */
        P(e, "                %s bv = %s[%s];\n                int best = 0;\n", R, xs, off[0]);
        for (int t = 1; t < taps; t++)
            P(e,
              "                { const %s v = %s[%s]; const int take = (v > bv) | (v != v); best = take ? %d : best; "
              "bv = take ? v : bv; }\n",
              R, xs, off[t], t);
        /* (disjoint windows: each tap's input is 0, and gets 0 + dy or
         * stays 0 + 0, as the scatter leaves it) */
        P(e, "                const %s g = %s[op];\n", R, src);
        for (int t = 0; t < taps; t++)
            P(e, "                %s[%s] += best == %d ? g : %s;\n", y, off[t], t, emit_lit(e, 0));
        break;
    case IR_AVGPOOL:
        P(e, "                double acc = 0;\n");
        for (int t = 0; t < taps; t++)
            P(e, "                acc += %s[%s];\n", xs, off[t]);
        P(e, "                %s[op] = (%s)(acc / (double)(%s));\n", y, R, pool_divisor(n));
        break;
    case IR_AVGPOOL_BWD:
        P(e, "                const %s g = %s[op] / (%s)(%s);\n", R, src, R, pool_divisor(n));
        for (int t = 0; t < taps; t++)
            P(e, "                %s[%s] += g;\n", y, off[t]);
        break;
    default: abort();
    }
    P(e, "            }\n");
}

/* The pools outside the plain case (ir_pool_plain: windows that are not
 * square, strides or padding that differ between rows and columns,
 * dilation, ceil_mode's last window past the padded image).  Window tap
 * (ki, kj) reads row h0 + ki DH, column w0 + kj DW; the taps outside the
 * image are skipped, [ki0, ki1) x [kj0, kj1) being those inside.  An
 * average's divisor counting the padding is the window's part inside the
 * padded image, as PyTorch's avg_pool2d; a max over no tap (only possible
 * with dilation) is -inf with no gradient.
 *
 * A row's outputs whose windows lie inside the image, columns [lo, hi),
 * take the same body with constant bounds first, which gcc vectorizes
 * over the columns: the 1-D pools written as a [1, k] window over [N, C,
 * 1, L] (nn.MaxPool1d's) ran a float at a time, 2 ns an output (a 1x2
 * max pool of 64 x 96 x 101, 1.2 ms forward, 1.4 backward).  The same
 * taps in the same order, so the same bits; a backward pass only where
 * the windows are disjoint, since overlapping ones add into an input in
 * the scan order of the outputs. */
static void general_pool(Emitter *e, int t, Shape x, Shape o)
{
    const IrNode *n = emit_nd(e, t);
    const char *y = emit_ref(e, t), *src = emit_ref(e, n->in[0]), *R = e->real;
    const char *xs = n->op == IR_MAXPOOL_BWD ? emit_ref(e, n->in[1]) : src;
    const int bwd = n->op == IR_MAXPOOL_BWD || n->op == IR_AVGPOOL_BWD;
    const int64_t H = x.d[2], W = x.d[3], OW = o.d[3], DH = n->dil_h > 1 ? n->dil_h : 1,
                  DW = n->dil_w > 1 ? n->dil_w : 1;
    /* the columns of windows inside the image, and whether they may go first */
    const int64_t reach = W - 1 + n->pad_w - (n->kw - 1) * DW, wlo = (n->pad_w + n->stride_w - 1) / n->stride_w;
    int64_t whi = reach >= 0 ? reach / n->stride_w + 1 : 0;
    whi = whi < OW ? whi : OW;
    const int disjoint = n->stride >= (n->kh - 1) * DH + 1 && n->stride_w >= (n->kw - 1) * DW + 1;
    const int fast = whi > wlo && n->kh * n->kw <= 16 && (!bwd || disjoint);
    P(e, "    {\n        const int64_t N = %s, C = %lld, H = %lld, W = %lld, OH = %lld, OW = %lld;\n", emit_dim(x, 0),
      (long long)x.d[1], (long long)H, (long long)W, (long long)o.d[2], (long long)OW);
    P(e, "        const int64_t KH = %d, KW = %d, SH = %d, SW = %d, PH = %d, PW = %d, DH = %lld, DW = %lld;\n", n->kh,
      n->kw, n->stride, n->stride_w, n->pad, n->pad_w, (long long)DH, (long long)DW);
    if (bwd)
        P(e, "        memset(%s, 0, sizeof(%s) * (size_t)(N * C * H * W));\n", y, R);
    emit_parallel(e, "        ", 1, x, (double)(n->kh * n->kw));
    P(e, "        for (int64_t bc = 0; bc < N * C; bc++)\n        for (int64_t oh = 0; oh < OH; oh++) {\n");
    P(e, "            const int64_t h0 = oh * SH - PH;\n");
    /* the windows inside the image (columns [lo, hi)) first where they
     * may be, then the others, their taps in bounds */
    if (fast) {
        P(e, "            /* the windows inside the image: columns [lo, hi) */\n");
        P(e,
          "            const int64_t lo = h0 >= 0 && h0 + (KH - 1) * DH < H ? %lld : OW, hi = lo < %lld ? %lld : lo;\n",
          (long long)wlo, (long long)whi, (long long)whi);
        inside_pool(e, n, xs, src, y);
        P(e, "            for (int64_t ow = lo > 0 ? 0 : hi; ow < OW; ow = ow + 1 == lo ? hi : ow + 1) {\n");
    } else
        P(e, "            for (int64_t ow = 0; ow < OW; ow++) {\n");
    P(e, "                const int64_t w0 = ow * SW - PW, op = (bc * OH + oh) * OW + ow;\n");
    P(e, "                const int64_t ki0 = h0 < 0 ? (-h0 + DH - 1) / DH : 0,\n");
    P(e, "                              kj0 = w0 < 0 ? (-w0 + DW - 1) / DW : 0;\n");
    P(e, "                int64_t ki1 = h0 <= H - 1 ? (H - 1 - h0) / DH + 1 : 0,\n");
    P(e, "                        kj1 = w0 <= W - 1 ? (W - 1 - w0) / DW + 1 : 0;\n");
    P(e, "                if (ki1 > KH) ki1 = KH;\n                if (kj1 > KW) kj1 = KW;\n");
    const char *at = "(bc * H + h0 + ki * DH) * W + w0 + kj * DW";
    const char *taps = "                for (int64_t ki = ki0; ki < ki1; ki++)\n"
                       "                for (int64_t kj = kj0; kj < kj1; kj++)";
    switch (n->op) {
    case IR_MAXPOOL:
        P(e, "                %s mx = -INFINITY;\n%s {\n", R, taps);
        P(e, "                    const %s v = %s[%s];\n                    mx = ((v > mx) | (v != v)) ? v : mx;\n", R,
          xs, at);
        P(e, "                }\n                %s[op] = mx;\n", y);
        break;
    case IR_MAXPOOL_BWD: /* the first maximum in scan order, or the last NaN */
        P(e, "                int64_t best = -1;\n%s {\n", taps);
        P(e, "                    const int64_t k = %s;\n", at);
        P(e, "                    if (best < 0 || %s[k] > %s[best] || %s[k] != %s[k]) best = k;\n                }\n",
          xs, xs, xs, xs);
        P(e, "                if (best >= 0) %s[best] += %s[op];\n", y, src);
        break;
    case IR_AVGPOOL:
        P(e, "                double acc = 0;\n%s acc += %s[%s];\n", taps, xs, at);
        P(e, "                %s[op] = (%s)(acc / (double)(%s));\n", y, R, pool_divisor(n));
        break;
    case IR_AVGPOOL_BWD:
        P(e, "                const %s g = %s[op] / (%s)(%s);\n", R, src, R, pool_divisor(n));
        P(e, "%s %s[%s] += g;\n", taps, y, at);
        break;
    default: abort();
    }
    P(e, "            }\n");
    P(e, "        }\n    }\n");
}

/* im2col/col2im and the pools, NCHW.  im2col lays each example's patches
 * out as [C*KH*KW, OH*OW], the right operand of one GEMM per example. */
static void window_op(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const char *y = emit_ref(e, t);
    int bwd = n->op == IR_COL2IM || n->op == IR_MAXPOOL_BWD || n->op == IR_AVGPOOL_BWD;
    Shape x = bwd ? n->shape : emit_nd(e, n->in[0])->shape; /* the image side */
    Shape o = bwd ? emit_nd(e, n->in[0])->shape : n->shape; /* the patch side */
    const char *src = emit_ref(e, n->in[0]);
    if (n->op != IR_IM2COL && n->op != IR_COL2IM && !ir_pool_plain(n, x, o)) {
        general_pool(e, t, x, o);
        return;
    }
    int64_t C = x.d[1], H = x.d[2], W = x.d[3];
    int64_t OH, OW;
    if (n->op == IR_IM2COL || n->op == IR_COL2IM) {
        OH = (H + 2 * n->pad - n->kh) / n->stride + 1;
        OW = (W + 2 * n->pad - n->kw) / n->stride + 1;
    } else {
        OH = o.d[2], OW = o.d[3];
    }
    P(e, "    {\n        const int64_t N = %s, C = %lld, H = %lld, W = %lld, OH = %lld, OW = %lld;\n", emit_dim(x, 0),
      (long long)C, (long long)H, (long long)W, (long long)OH, (long long)OW);
    /* (SD and mx below, not S and m: the function's state pointer and model) */
    P(e, "        const int64_t KH = %d, KW = %d, SD = %d, PD = %d;\n        (void)PD;\n", n->kh, n->kw, n->stride,
      n->pad);
    if (bwd)
        P(e, "        memset(%s, 0, sizeof(%s) * (size_t)(N * C * H * W));\n", y, e->real);
    switch (n->op) {
    case IR_IM2COL:
    case IR_COL2IM:
        P(e, "        for (int64_t b = 0; b < N; b++)\n        for (int64_t c = 0; c < C; c++)\n");
        P(e, "        for (int64_t ki = 0; ki < KH; ki++)\n        for (int64_t kj = 0; kj < KW; kj++) {\n");
        /* col is [C*KH*KW, N*OH*OW]: row (c, ki, kj), column (b, oh, ow) */
        P(e, "            const int64_t row = (c * KH + ki) * KW + kj, cols = N * OH * OW, col0 = b * OH * OW;\n");
        /* the in-bounds columns of each row are a range [lo, hi): no test
         * per element, and at stride 1 a contiguous copy or add */
        P(e, "            const int64_t lo = kj < PD ? (PD - kj + SD - 1) / SD : 0;\n");
        P(e, "            int64_t hi = W - 1 + PD - kj >= 0 ? (W - 1 + PD - kj) / SD + 1 : 0;\n");
        P(e, "            if (hi > OW) hi = OW;\n");
        P(e, "            for (int64_t oh = 0; oh < OH; oh++) {\n");
        P(e, "                const int64_t ih = oh * SD - PD + ki;\n");
        P(e, "                %s *crow = %s + row * cols + col0 + oh * OW;\n",
          n->op == IR_IM2COL ? e->real : emit_fmt("const %s", e->real), n->op == IR_IM2COL ? y : src);
        P(e, "                const int64_t base = ((b * C + c) * H + ih) * W - PD + kj;\n");
        if (n->op == IR_IM2COL) {
            P(e, "                if (ih < 0 || ih >= H) { memset(crow, 0, sizeof(%s) * (size_t)OW); continue; }\n",
              e->real);
            P(e, "                for (int64_t ow = 0; ow < lo && ow < OW; ow++) crow[ow] = %s;\n", emit_lit(e, 0));
            P(e, "                for (int64_t ow = lo; ow < hi; ow++) crow[ow] = %s[base + ow * SD];\n", src);
            P(e, "                for (int64_t ow = hi > lo ? hi : lo; ow < OW; ow++) crow[ow] = %s;\n",
              emit_lit(e, 0));
        } else {
            P(e, "                if (ih < 0 || ih >= H) continue;\n");
            P(e, "                for (int64_t ow = lo; ow < hi; ow++) %s[base + ow * SD] += crow[ow];\n", y);
        }
        P(e, "            }\n        }\n    }\n");
        return;
    default: break;
    }
    /* pools: one window per output position; images on the threads (an
     * average pool's gradient adds overlapping windows within one) */
    emit_parallel(e, "        ", 1, x, (double)(n->kh * n->kw));
    if (n->pad > 0) {
        padded_pool(e, n, y, src);
        return;
    }
    P(e, "        for (int64_t bc = 0; bc < N * C; bc++)\n        for (int64_t oh = 0; oh < OH; oh++)\n");
    P(e, "        for (int64_t ow = 0; ow < OW; ow++) {\n");
    P(e, "            const int64_t op = (bc * OH + oh) * OW + ow;\n");
    if (n->op != IR_AVGPOOL_BWD)
        P(e, "            const %s *win = %s + (bc * H + oh * SD) * W + ow * SD;\n", e->real,
          n->op == IR_MAXPOOL_BWD ? emit_ref(e, n->in[1]) : src);
    switch (n->op) {
    case IR_MAXPOOL:
        /* the maximum, or NaN if the window has one, as PyTorch: a select
         * without a branch (the index form below, with its branch
         * mispredicted on real data, took 3-4x as long) */
        P(e, "            %s mx = win[0];\n", e->real);
        P(e, "            for (int64_t ki = 0; ki < KH; ki++)\n            for (int64_t kj = 0; kj < KW; kj++) {\n");
        P(e,
          "                const %s v = win[ki * W + kj];\n                mx = ((v > mx) | (v != v)) ? v : mx;\n      "
          "      }\n",
          e->real);
        P(e, "            %s[op] = mx;\n", y);
        break;
    case IR_MAXPOOL_BWD:
        /* the first maximum in scan order, or the last NaN, as PyTorch */
        P(e, "            int64_t best = 0;\n");
        P(e, "            for (int64_t ki = 0; ki < KH; ki++)\n            for (int64_t kj = 0; kj < KW; kj++)\n");
        P(e,
          "                if (win[ki * W + kj] > win[best] || win[ki * W + kj] != win[ki * W + kj]) best = ki * W + "
          "kj;\n");
        P(e, "            %s[(bc * H + oh * SD) * W + ow * SD + best] += %s[op];\n", y, src);
        break;
    case IR_AVGPOOL:
        P(e, "            double acc = 0;\n");
        P(e,
          "            for (int64_t ki = 0; ki < KH; ki++)\n            for (int64_t kj = 0; kj < KW; kj++) acc += "
          "win[ki * W + kj];\n");
        P(e, "            %s[op] = (%s)(acc / (double)(KH * KW));\n", y, e->real);
        break;
    case IR_AVGPOOL_BWD:
        P(e, "            const %s g = %s[op] / (%s)(KH * KW);\n", e->real, src, e->real);
        P(e, "            for (int64_t ki = 0; ki < KH; ki++)\n            for (int64_t kj = 0; kj < KW; kj++)\n");
        P(e, "                %s[(bc * H + oh * SD + ki) * W + ow * SD + kj] += g;\n", y);
        break;
    default: abort();
    }
    P(e, "        }\n    }\n");
}

/* upsample and its adjoint, per [H, W] plane (planes on the threads):
 * nearest copies x[oh / S][ow / S]; bilinear (align_corners false) reads
 * source row (oh + 0.5) / S - 0.5, clamped at 0, between rows h0 and h1 =
 * min(h0 + 1, H - 1) with weight lh on h1, as PyTorch's
 * upsample_bilinear2d, and the same across.  The backward pass adds each
 * dy to the elements it was read from, in a fixed order. */
static void resample(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const int bwd = n->op == IR_UPSAMPLE_BWD;
    const Shape x = bwd ? n->shape : emit_nd(e, n->in[0])->shape;
    const char *y = emit_ref(e, t), *src = emit_ref(e, n->in[0]), *R = e->real;
    P(e, "    {\n        const int64_t N = %s, C = %lld, H = %lld, W = %lld, S = %d, OH = H * S, OW = W * S;\n",
      emit_dim(x, 0), (long long)x.d[1], (long long)x.d[2], (long long)x.d[3], n->kh);
    if (n->ival) {
        /* bilinear: each output row's and column's two sources and weights,
         * computed once a call (they hang on the row or the column only),
         * not per element in double, which the loops over the planes took
         * most of their time on */
        const long long OH = x.d[2] * n->kh, OW = x.d[3] * n->kh;
        P(e, "        int64_t ih[%lld];\n        int32_t iw[%lld];\n        %s tab[%lld];\n", 2 * OH, 2 * OW, R,
          2 * (OH + OW));
        P(e, "        for (int64_t i = 0; i < OH + OW; i++) {\n");
        P(e, "            const int64_t o = i < OH ? i : i - OH, L = i < OH ? H : W;\n");
        P(e, "            double sc = ((double)o + 0.5) / (double)S - 0.5;\n            if (sc < 0) sc = 0;\n");
        P(e, "            const int64_t c0 = (int64_t)sc, c1 = c0 + (c0 < L - 1);\n");
        P(e, "            const %s l = (%s)(sc - (double)c0);\n", R, R);
        P(e, "            tab[i * 2] = l;\n            tab[i * 2 + 1] = 1 - l;\n");
        P(e, "            if (i < OH)\n                ih[o * 2] = c0, ih[o * 2 + 1] = c1;\n");
        P(e, "            else\n                iw[o * 2] = (int32_t)c0, iw[o * 2 + 1] = (int32_t)c1;\n        }\n");
    }
    emit_parallel(e, "        ", 1, x, n->ival ? 16.0 * n->kh * n->kw : 1.0 * n->kh * n->kw);
    P(e, "        for (int64_t bc = 0; bc < N * C; bc++) {\n");
    P(e, "            %s%s *xp = %s + bc * H * W;\n", bwd ? "" : "const ", R, bwd ? y : src);
    P(e, "            %s%s *yp = %s + bc * OH * OW;\n", bwd ? "const " : "", R, bwd ? src : y);
    if (bwd)
        P(e, "            memset(xp, 0, sizeof(%s) * (size_t)(H * W));\n", R);
    if (!n->ival) {
        P(e, "            for (int64_t oh = 0; oh < OH; oh++)\n            for (int64_t ow = 0; ow < OW; ow++)\n");
        P(e, "                %s;\n",
          bwd ? "xp[oh / S * W + ow / S] += yp[oh * OW + ow]" : "yp[oh * OW + ow] = xp[oh / S * W + ow / S]");
        P(e, "        }\n    }\n");
        return;
    }
    P(e, "            for (int64_t oh = 0; oh < OH; oh++) {\n");
    P(e, "                const %s *t = tab + oh * 2, *r = tab + OH * 2;\n", R);
    P(e, "                const int64_t h0 = ih[oh * 2], h1 = ih[oh * 2 + 1];\n");
    P(e, "                const %s lh = t[0], mh = t[1];\n", R);
    P(e, "                for (int64_t ow = 0; ow < OW; ow++) {\n");
    P(e, "                    const int32_t w0 = iw[ow * 2], w1 = iw[ow * 2 + 1];\n");
    P(e, "                    const %s lw = r[ow * 2], mw = r[ow * 2 + 1];\n", R);
    if (bwd) {
        P(e, "                    const %s g = yp[oh * OW + ow];\n", R);
        P(e,
          "                    xp[h0 * W + w0] += mh * mw * g;\n                    xp[h0 * W + w1] += mh * lw * g;\n");
        P(e,
          "                    xp[h1 * W + w0] += lh * mw * g;\n                    xp[h1 * W + w1] += lh * lw * g;\n");
    } else {
        P(e, "                    yp[oh * OW + ow] = mh * (mw * xp[h0 * W + w0] + lw * xp[h0 * W + w1]) +\n");
        P(e, "                                       lh * (mw * xp[h1 * W + w0] + lw * xp[h1 * W + w1]);\n");
    }
    P(e, "                }\n            }\n        }\n    }\n");
}

/* a weight of a resize table: all the digits of the double in double,
 * the float's in float */
static const char *table_weight(Emitter *e, double v)
{
    char buf[48];
    snprintf(buf, sizeof buf, e->opt->f64 ? "%.17g" : "%.9g", v);
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    return emit_fmt("%s%s", buf, e->opt->f64 ? "" : "f");
}

/* resize along one axis and its transpose: out is [outer, OL, inner], in
 * [outer, L, inner], and output row i is the weighted sum of the input
 * rows its taps name.  The taps are computed here, once (ir_resize_taps:
 * the shapes are static), and printed as tables; the loops run over rows
 * of `inner` contiguous elements.  The backward pass adds each dy row,
 * weighted, into the rows it was read from, in a fixed order, with the
 * outer blocks (disjoint in dx) on the threads. */
void emit_resize(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const int bwd = n->op == IR_RESIZE_BWD, ax = n->axis;
    const Shape big = bwd ? emit_nd(e, n->in[0])->shape : n->shape,
                small = bwd ? n->shape : emit_nd(e, n->in[0])->shape;
    const int64_t L = small.d[ax], OL = big.d[ax];
    int64_t *idx = malloc(sizeof *idx * (size_t)(OL * 4));
    double *w = malloc(sizeof *w * (size_t)(OL * 4));
    if (!idx || !w)
        abort();
    const int T = ir_resize_taps(n, L, OL, idx, w);
    const char *y = emit_ref(e, t), *x = emit_ref(e, n->in[0]), *R = e->real;
    P(e, "    { /* %s %s along axis %d: %lld -> %lld */\n", ir_resize_modes[n->ival], ir_resize_coords[n->ival2], ax,
      (long long)L, (long long)OL);
    P(e, "        static const int32_t ix[%lld] = {", (long long)(OL * T));
    for (int64_t k = 0; k < OL * T; k++)
        P(e, "%s%s%lld", k ? "," : "", k % 16 ? " " : "\n            ", (long long)idx[k]);
    P(e, "};\n");
    if (T > 1) {
        P(e, "        static const %s wt[%lld] = {", R, (long long)(OL * T));
        for (int64_t k = 0; k < OL * T; k++)
            P(e, "%s%s%s", k ? "," : "", k % 8 ? " " : "\n            ", table_weight(e, w[k]));
        P(e, "};\n");
    }
    free(idx);
    free(w);
    P(e, "        const int64_t L = %lld, OL = %lld, IN = %s;\n", (long long)L, (long long)OL,
      emit_prod(big, ax + 1, big.nd));
    if (bwd)
        P(e, "        memset(%s, 0, sizeof(%s) * (size_t)(%s));\n", y, R, emit_numel(small));
    emit_parallel(e, "        ", 1, n->shape, T > 1 ? 2.0 * T : 1.0);
    P(e, "        for (int64_t o = 0; o < %s; o++)\n", emit_prod(big, 0, ax));
    P(e, "        for (int64_t i = 0; i < OL; i++) {\n");
    if (bwd) {
        P(e, "            const %s *restrict g = %s + (o * OL + i) * IN;\n", R, x);
        P(e, "            for (int j = 0; j < %d; j++) {\n", T);
        P(e, "                %s *restrict d = %s + (o * L + ix[i * %d + j]) * IN;\n", R, y, T);
        if (T > 1)
            P(e,
              "                const %s c = wt[i * %d + j];\n"
              "                for (int64_t k = 0; k < IN; k++) d[k] += c * g[k];\n",
              R, T);
        else
            P(e, "                for (int64_t k = 0; k < IN; k++) d[k] += g[k];\n");
        P(e, "            }\n");
    } else {
        P(e, "            %s *restrict r = %s + (o * OL + i) * IN;\n", R, y);
        for (int j = 0; j < T; j++)
            P(e, "            const %s *restrict s%d = %s + (o * L + ix[i * %d + %d]) * IN;\n", R, j, x, T, j);
        if (T > 1) {
            P(e, "            const %s ", R);
            for (int j = 0; j < T; j++)
                P(e, "%sc%d = wt[i * %d + %d]", j ? ", " : "", j, T, j);
            P(e, ";\n            for (int64_t k = 0; k < IN; k++) r[k] = ");
            for (int j = 0; j < T; j++)
                P(e, "%sc%d * s%d[k]", j ? " + " : "", j, j);
            P(e, ";\n");
        } else
            P(e, "            memcpy(r, s0, sizeof(%s) * (size_t)IN);\n", R);
    }
    P(e, "        }\n    }\n");
}

/* im2col/col2im, the pools and upsample; pools in float by the runtime's
 * kernels (kernel.c), a max pool's backward pass by tiles where it can */
void emit_vision_op(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    if (n->op == IR_UPSAMPLE || n->op == IR_UPSAMPLE_BWD)
        resample(e, t);
    else if ((n->op == IR_MAXPOOL || n->op == IR_MAXPOOL_BWD) && n->kernel == KERNEL_VECTOR && n->kh == 2 &&
             n->stride == 2 && n->pad == 0)
        maxpool2_call(e, t);
    else if (n->kernel == KERNEL_VECTOR)
        pool_call(e, t);
    else if (n->op == IR_MAXPOOL_BWD && n->kernel == KERNEL_TILES)
        maxpool_bwd_tiled(e, t);
    else
        window_op(e, t);
}

/* ---- batch norm ------------------------------------------------------------------ */

/* Whether BatchNorm's per-channel factors go into tables on the stack
 * before the elementwise passes, rather than being computed for each row
 * of L elements: where the rows are short (x [N, C] has rows of one
 * element, where a sqrt and a division per element took 12 ns), for C
 * small enough that the tables (4 C reals at most) fit a stack frame. */
static int64_t bn_row(Shape s)
{
    int64_t L = 1;
    for (int i = 2; i < s.nd; i++)
        L *= s.d[i];
    return L;
}
static int bn_tables(Shape s) { return bn_row(s) < 64 && s.d[1] <= 4096; }

/* The loops the threads split with the tables: the examples alone for
 * rows under 16 elements, so that the channels' loop vectorizes (an
 * example's C L elements, in memory order), else examples and channels. */
static int bn_split(Shape s) { return bn_row(s) < 16 ? 1 : 2; }

/* BatchNorm (elab.c's batch_norm_prim) over x [N, C, ...] as [N, C, L]:
 * channel c is N rows of L contiguous elements.  The channel sums are
 * runtime/bn.c's in float (vector code over blocks of channels in memory
 * order); in double (the finite-difference checks' precision) they stay
 * plain loops that walk the channels one by one, 16 lanes per row with
 * row totals in double.  The elementwise ops run in memory order. */
void emit_bn_op(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    Shape s = emit_nd(e, n->in[n->op == IR_BN_STATS || n->op == IR_BN_NORM ? 0 : 1])->shape;
    emit_loop_begin(e);
    const char *y = emit_ref(e, t);
    P(e, "    {\n        const int64_t N = %s, C = %lld, L = %s;\n", emit_dim(s, 0), (long long)s.d[1],
      emit_prod(s, 2, s.nd));
    /* the global batch's count: the statistics are the joined batch's */
    P(e, "        const double M = (double)(%s) * (double)L;   /* elements per channel */\n", emit_gdim(s, 0));
    switch (n->op) {
    case IR_BN_STATS: {
        const char *x = emit_ref(e, n->in[0]);
        if (n->global) {
            /* on several processes, each adds its share of the mean, then
             * of the squared deviations from the global mean (runtime/
             * threads.c); in one process this is nnc_bn_stats_f32.  Only
             * f32 graphs are split (dist.c). */
            P(e, "        (void)M;\n        nnc_bn_stats_global_f32(N, %s, C, L, %s, %s);\n", emit_gdim(s, 0), x, y);
        } else if (n->kernel == KERNEL_VECTOR) { /* runtime/bn.c: the same sums as vectors */
            P(e, "        (void)M;\n        nnc_bn_stats_f32(N, C, L, %s, %s);\n", x, y);
        } else {
            /* two passes (the mean, then squared deviations), as PyTorch, so no
             * cancellation in E[x^2] - E[x]^2 */
            P(e, "        for (int64_t c = 0; c < C; c++) {\n            double sum = 0, sq = 0;\n");
            P(e,
              "            for (int64_t b = 0; b < N; b++) {\n                const %s *row = %s + (b * C + c) * L;\n",
              e->real, x);
            emit_lanes_store(e, "                ", "double", "sum +=", "L", "row[k]");
            P(e, "            }\n            const %s mu = (%s)(sum / M);\n", e->real, e->real);
            P(e,
              "            for (int64_t b = 0; b < N; b++) {\n                const %s *row = %s + (b * C + c) * L;\n",
              e->real, x);
            emit_lanes_store(e, "                ", "double", "sq +=", "L", "(row[k] - mu) * (row[k] - mu)");
            P(e, "            }\n            %s[c] = mu;\n            %s[C + c] = (%s)(sq / M);\n        }\n", y, y,
              e->real);
        }
        break;
    }
    case IR_BN_NORM: {
        const char *x = emit_ref(e, n->in[0]), *st = emit_ref(e, n->in[1]), *w = emit_ref(e, n->in[2]),
                   *b = emit_ref(e, n->in[3]);
        P(e, "        (void)M;\n");
        /* the channel's factors: into the tables first, or for each row */
        const int tab = bn_tables(s);
        if (tab) {
            const long long C = (long long)s.d[1];
            P(e, "        %s mu_[%lld], sc_[%lld], sh_[%lld];\n", e->real, C, C, C);
            P(e, "        for (int64_t c = 0; c < C; c++) {\n");
        } else {
            emit_parallel(e, "        ", 2, emit_nd(e, n->in[0])->shape, 3);
            P(e, "        for (int64_t b = 0; b < N; b++)\n        for (int64_t c = 0; c < C; c++) {\n");
        }
        P(e, "            const %s mu = %s[c], sc = (%s)(1.0 / sqrt((double)%s[C + c] + %.17g)) * %s[c], sh = %s[c];\n",
          e->real, st, e->real, st, n->fval, w, b);
        if (tab) {
            P(e, "            mu_[c] = mu, sc_[c] = sc, sh_[c] = sh;\n        }\n");
            emit_parallel(e, "        ", bn_split(s), emit_nd(e, n->in[0])->shape, 3);
            P(e, "        for (int64_t b = 0; b < N; b++)\n        for (int64_t c = 0; c < C; c++) {\n");
            P(e, "            const %s mu = mu_[c], sc = sc_[c], sh = sh_[c];\n", e->real);
        }
        P(e, "            const %s *xr = %s + (b * C + c) * L;\n            %s *yr = %s + (b * C + c) * L;\n", e->real,
          x, e->real, y);
        /* plus a residual and a relu that plan.c folded in */
        const char *res = n->nin > 4 ? emit_ref(e, n->in[4]) : NULL;
        const char *v = res ? "(xr[k] - mu) * sc + sh + rr[k]" : "(xr[k] - mu) * sc + sh";
        if (res)
            P(e, "            const %s *rr = %s + (b * C + c) * L;\n", e->real, res);
        if (n->ival)
            P(e,
              "            for (int64_t k = 0; k < L; k++) {\n                const %s v = %s;\n                yr[k] "
              "= %s;\n            }\n        }\n",
              e->real, v, emit_relu_of(e, "v"));
        else
            P(e, "            for (int64_t k = 0; k < L; k++) yr[k] = %s;\n        }\n", v);
        break;
    }
    case IR_BN_GRADS: {
        /* row 0: sum of dy * xhat (d weight), row 1: sum of dy (d bias) */
        const char *dy = emit_ref(e, n->in[0]), *x = emit_ref(e, n->in[1]), *st = emit_ref(e, n->in[2]);
        /* dy masked by a relu's output (plan.c's fold_relu_bn_grad): a
         * select in runtime/bn.c (float); in the loops below a product
         * with the mask, not `mr[k] > 0 ? dr[k] : 0`, which gcc 12 at -O3
         * miscompiles in these lane sums (docs/decisions.md, "gcc 12 and
         * conditional lane sums") */
        const char *mask = n->nin > 3 ? emit_ref(e, n->in[3]) : NULL;
        const char *d = mask ? emit_fmt("dr[k] * (%s)(mr[k] > %s)", e->real, emit_lit(e, 0)) : "dr[k]";
        P(e, "        (void)M;\n");
        if (n->kernel == KERNEL_VECTOR) {
            P(e, "        nnc_bn_grads_f32(N, C, L, %s, %s, %s, %s, %.17g, %s);\n", dy, x, mask ? mask : "NULL", st,
              n->fval, y);
            break;
        }
        P(e, "        for (int64_t c = 0; c < C; c++) {\n            double sdx = 0, sd = 0;\n");
        P(e, "            const %s mu = %s[c];\n", e->real, st);
        P(e, "            for (int64_t b = 0; b < N; b++) {\n");
        P(e, "                const %s *xr = %s + (b * C + c) * L, *dr = %s + (b * C + c) * L;\n", e->real, x, dy);
        if (mask)
            P(e, "                const %s *mr = %s + (b * C + c) * L;\n", e->real, mask);
        emit_lanes_store(e, "                ", "double", "sdx +=", "L", emit_fmt("%s * (xr[k] - mu)", d));
        emit_lanes_store(e, "                ", "double", "sd +=", "L", d);
        P(e, "            }\n");
        P(e,
          "            %s[c] = (%s)(sdx / sqrt((double)%s[C + c] + %.17g));\n            %s[C + c] = (%s)sd;\n        "
          "}\n",
          y, e->real, st, n->fval, y, e->real);
        break;
    }
    case IR_BN_BWD: {
        /* dx = w rstd (dy - mean(dy)) - (x - mean) w rstd^2 mean(dy xhat) */
        const char *dy = emit_ref(e, n->in[0]), *x = emit_ref(e, n->in[1]), *st = emit_ref(e, n->in[2]),
                   *w = emit_ref(e, n->in[3]), *gr = emit_ref(e, n->in[4]);
        const int tab = bn_tables(s);
        if (tab) {
            const long long C = (long long)s.d[1];
            P(e, "        %s mu_[%lld], a_[%lld], mdy_[%lld], k2_[%lld];\n", e->real, C, C, C, C);
            P(e, "        for (int64_t c = 0; c < C; c++) {\n");
        } else {
            emit_parallel(e, "        ", 2, emit_nd(e, n->in[1])->shape, 4);
            P(e, "        for (int64_t b = 0; b < N; b++)\n        for (int64_t c = 0; c < C; c++) {\n");
        }
        P(e, "            const double rstd = 1.0 / sqrt((double)%s[C + c] + %.17g), k1 = (double)%s[c] * rstd;\n", st,
          n->fval, w);
        P(e, "            const %s mu = %s[c], a = (%s)k1, mdy = (%s)((double)%s[C + c] / M),\n", e->real, st, e->real,
          e->real, gr);
        P(e, "                  k2 = (%s)(k1 * rstd * (double)%s[c] / M);\n", e->real, gr);
        if (tab) {
            P(e, "            mu_[c] = mu, a_[c] = a, mdy_[c] = mdy, k2_[c] = k2;\n        }\n");
            emit_parallel(e, "        ", bn_split(s), emit_nd(e, n->in[1])->shape, 4);
            P(e, "        for (int64_t b = 0; b < N; b++)\n        for (int64_t c = 0; c < C; c++) {\n");
            P(e, "            const %s mu = mu_[c], a = a_[c], mdy = mdy_[c], k2 = k2_[c];\n", e->real);
        }
        P(e, "            const %s *xr = %s + (b * C + c) * L, *dr = %s + (b * C + c) * L;\n", e->real, x, dy);
        P(e, "            %s *yr = %s + (b * C + c) * L;\n", e->real, y);
        const char *mask = n->nin > 5 ? emit_ref(e, n->in[5]) : NULL;
        if (mask)
            P(e, "            const %s *mr = %s + (b * C + c) * L;\n", e->real, mask);
        P(e, "            for (int64_t k = 0; k < L; k++) yr[k] = a * (%s - mdy) - (xr[k] - mu) * k2;\n        }\n",
          mask ? emit_fmt("(mr[k] > %s ? dr[k] : %s)", emit_lit(e, 0), emit_lit(e, 0)) : "dr[k]");
        break;
    }
    default: abort();
    }
    P(e, "    }\n");
    emit_loop_end(e, t);
}

/* ---- convolution ----------------------------------------------------------------- */

/* One call into the runtime per convolution, the kernel kernel.c chose:
 * a direct kernel (conv.c; it runs the columns itself where the runtime
 * lacks AVX-512), or the columns (conv_cols.c: im2col and one GEMM per
 * example; for a 1x1 kernel at stride 1 without padding the image is the
 * GEMM's operand), in float or double.  The work memory is what plan.c
 * placed in the arena for the node. */
void emit_conv_op(Emitter *e, int t)
{
    const IrNode *n = emit_nd(e, t);
    const int fwd = n->op == IR_CONV2D, data = n->op == IR_CONV2D_BWD_DATA;
    if (!fwd && !data && n->op != IR_CONV2D_BWD_FILTER)
        abort();
    /* x: the image side [N, C, H, W]; w: the kernel [F, C / groups, KH, KW] */
    const Shape x = fwd || !data ? emit_nd(e, n->in[fwd ? 0 : 1])->shape : n->shape;
    const Shape w = fwd || data ? emit_nd(e, n->in[1])->shape : n->shape;
    const int gen = n->kernel == KERNEL_CONV_GEN, direct = n->kernel == KERNEL_DIRECT;
    /* which kernel, and why (kernel.c) */
    if (gen)
        P(e, "    /* %dx%d, stride %dx%d, padding %dx%d, dilation %dx%d, %d group%s: the general kernel */\n", n->kh,
          n->kw, n->stride, n->stride_w, n->pad, n->pad_w, n->dil_h, n->dil_w, n->groups, n->groups == 1 ? "" : "s");
    else {
        /* (Winograd's class: nnc_conv_wino, at stride 1 in each pass;
         * every pass and CPU from nnc_conv_wino_least's largest count on) */
        const int wino =
            direct && n->stride == 1 && nnc_conv_wino(x.d[1], x.d[2], x.d[3], w.d[0], n->kh, n->kw, n->pad);
        const int64_t all = nnc_conv_wino_least(NNC_CONV_FILTER, 0, x.d[2], x.d[3], n->pad);
        const char *why = wino && x.d[1] >= all && w.d[0] >= all ? "Winograd (the columns without AVX2)"
            : wino                     ? "Winograd or the direct kernel, by CPU (the columns without AVX2)"
            : direct                   ? "direct kernel (the columns without AVX2)"
            : n->kernel == KERNEL_GEMM ? "one GEMM on the image (no columns)"
            : e->opt->f64              ? "columns (double precision)"
                                       : "columns (no direct kernel for this layer)";
        P(e, "    /* %dx%d, stride %d, padding %d: %s */\n", n->kh, n->kw, n->stride, n->pad, why);
    }
    /* (N, in, in, out[, add], geometry[, bias, relu], work, work length).
     * The geometry: the general kernel's nnc_conv2d_geom (nnc_conv.h) as
     * a compound literal; the others' C, H, W, F, KH, KW, [stride,] pad,
     * the direct kernels' stride being in their name but for the kernel
     * gradient's */
    const char *args =
        emit_fmt("%s, %s, %s, %s", emit_dim(x, 0), emit_ref(e, n->in[0]), emit_ref(e, n->in[1]), emit_ref(e, t));
    if (data) /* the other gradient of x that plan.c folded in (fold_conv_add) */
        args = emit_fmt("%s, %s", args, n->nin > 2 ? emit_ref(e, n->in[2]) : "NULL");
    if (gen)
        args = emit_fmt("%s, &(const nnc_conv2d_geom){%lld, %lld, %lld, %lld, %d, %d, %d, %d, %d, %d, %d, %d, %d}",
                        args, (long long)x.d[1], (long long)x.d[2], (long long)x.d[3], (long long)w.d[0], n->kh, n->kw,
                        n->stride, n->stride_w, n->pad, n->pad_w, n->dil_h, n->dil_w, n->groups);
    else {
        args = emit_fmt("%s, %lld, %lld, %lld, %lld, %d, %d", args, (long long)x.d[1], (long long)x.d[2],
                        (long long)x.d[3], (long long)w.d[0], n->kh, n->kw);
        args = direct && n->op != IR_CONV2D_BWD_FILTER ? emit_fmt("%s, %d", args, n->pad)
                                                       : emit_fmt("%s, %d, %d", args, n->stride, n->pad);
    }
    if (fwd) /* a bias (and a relu) that plan.c folded in (fold_conv_bias) */
        args = emit_fmt("%s, %s, %d", args, n->nin > 2 ? emit_ref(e, n->in[2]) : "NULL", n->ival);
    /* the model's work region, a slice per thread (emit_fn.c, threads.c;
     * none where a GEMM on the image is all: KERNEL_GEMM's forward pass
     * and data gradient, and the general kernel's depthwise loop) */
    args = n->work > 0 ? emit_fmt("%s, m->work_, m->work_len_", args) : emit_fmt("%s, NULL, 0", args);
    const char *op = fwd ? "" : data ? "_bwd_data" : "_bwd_filter", *real = e->opt->f64 ? "f64" : "f32";
    if (gen)
        P(e, "    nnc_conv2d_gen%s_%s(%s);\n", op, real, args);
    else if (!direct)
        P(e, "    nnc_conv2d_cols%s_%s(%s);\n", op, real, args);
    else if (n->op == IR_CONV2D_BWD_FILTER)
        P(e, "    nnc_conv2d_bwd_filter_f32(%s);\n", args);
    else
        P(e, "    nnc_conv2d_s%d%s_f32(%s);\n", n->stride, op, args);
}
