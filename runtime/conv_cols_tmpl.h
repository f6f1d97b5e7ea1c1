/* conv_cols_tmpl.h — the body of conv_cols.c for one precision, included
 * there once for float and once for double with R (the type), GEMM
 * (cblas_sgemm or cblas_dgemm), NAME(f) (f_f32 or f_f64) and NAME_STR(f)
 * (the same as a string) defined.  No include guard: that is the point.
 * Not installed; nothing else includes it.
 */

/* im2col: one example's image img [C][H][W] -> its columns col [CKK][P],
 * row (c, ki, kj), column (oh, ow).  The in-bounds columns of each row are
 * a range [lo, hi): no test per element. */
static void NAME(im2col)(const cgeom *g, const R *img, R *col)
{
    const int64_t C = g->C, H = g->H, W = g->W, KH = g->KH, KW = g->KW, S = g->S, PD = g->PD, OH = g->OH, OW = g->OW,
                  P = g->P;
    if (g->same) {
        for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < KH; ki++)
                for (int64_t kj = 0; kj < KW; kj++) {
                    R *crow = col + ((c * KH + ki) * KW + kj) * P;
                    const R *ic = img + c * H * W;
                    const int64_t d = (ki - PD) * W + (kj - PD);
                    /* [lo, hi): the positions whose image row is inside the
                     * image and whose shifted index is inside the channel */
                    int64_t lo = (ki < PD ? PD - ki : 0) * W, hi = (ki > PD ? H - (ki - PD) : H) * W;
                    if (lo < -d)
                        lo = -d;
                    if (hi > H * W - d)
                        hi = H * W - d;
                    if (lo > P)
                        lo = P;
                    if (hi < lo)
                        hi = lo;
                    for (int64_t p = 0; p < lo; p++)
                        crow[p] = (R)0;
                    for (int64_t p = lo; p < hi; p++)
                        crow[p] = ic[p + d];
                    for (int64_t p = hi; p < P; p++)
                        crow[p] = (R)0;
                    /* the columns that wrapped to the previous or next image
                     * row: 0 (clamped to [0, OW], so that padding wider than
                     * the image never reaches a neighbouring row) */
                    const int64_t wl = PD - kj < OW ? PD - kj : OW, wr = OW - (kj - PD) > 0 ? OW - (kj - PD) : 0;
                    for (int64_t oh = 0; oh < OH; oh++) {
                        for (int64_t ow = 0; ow < wl; ow++)
                            crow[oh * OW + ow] = (R)0;
                        for (int64_t ow = wr; ow < OW; ow++)
                            crow[oh * OW + ow] = (R)0;
                    }
                }
        return;
    }
    for (int64_t c = 0; c < C; c++)
        for (int64_t ki = 0; ki < KH; ki++)
            for (int64_t kj = 0; kj < KW; kj++) {
                int64_t lo = kj < PD ? (PD - kj + S - 1) / S : 0;
                int64_t hi = W - 1 + PD - kj >= 0 ? (W - 1 + PD - kj) / S + 1 : 0;
                if (lo > OW)
                    lo = OW;
                if (hi > OW)
                    hi = OW;
                if (hi < lo)
                    hi = lo;
                for (int64_t oh = 0; oh < OH; oh++) {
                    const int64_t ih = oh * S - PD + ki, base = (c * H + ih) * W - PD + kj;
                    R *crow = col + ((c * KH + ki) * KW + kj) * P + oh * OW;
                    if (ih < 0 || ih >= H) {
                        memset(crow, 0, sizeof(R) * (size_t)OW);
                        continue;
                    }
                    for (int64_t ow = 0; ow < lo; ow++)
                        crow[ow] = (R)0;
                    for (int64_t ow = lo; ow < hi; ow++)
                        crow[ow] = img[base + ow * S];
                    for (int64_t ow = hi; ow < OW; ow++)
                        crow[ow] = (R)0;
                }
            }
}

/* col2im: img [C][H][W] (cleared by the caller) += the columns col, row by
 * row in im2col's order.  The 'same' layout zeroes the columns that
 * wrapped around a row edge first (they belong to no pixel), in col. */
static void NAME(col2im)(const cgeom *g, R *col, R *img)
{
    const int64_t C = g->C, H = g->H, W = g->W, KH = g->KH, KW = g->KW, S = g->S, PD = g->PD, OH = g->OH, OW = g->OW,
                  P = g->P;
    if (g->same) {
        for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < KH; ki++)
                for (int64_t kj = 0; kj < KW; kj++) {
                    R *crow = col + ((c * KH + ki) * KW + kj) * P;
                    R *ic = img + c * H * W;
                    const int64_t d = (ki - PD) * W + (kj - PD);
                    int64_t lo = (ki < PD ? PD - ki : 0) * W, hi = (ki > PD ? H - (ki - PD) : H) * W;
                    if (lo < -d)
                        lo = -d;
                    if (hi > H * W - d)
                        hi = H * W - d;
                    if (lo > P)
                        lo = P;
                    if (hi < lo)
                        hi = lo;
                    const int64_t wl = PD - kj < OW ? PD - kj : OW, wr = OW - (kj - PD) > 0 ? OW - (kj - PD) : 0;
                    for (int64_t oh = 0; oh < OH; oh++) {
                        for (int64_t ow = 0; ow < wl; ow++)
                            crow[oh * OW + ow] = (R)0;
                        for (int64_t ow = wr; ow < OW; ow++)
                            crow[oh * OW + ow] = (R)0;
                    }
                    for (int64_t p = lo; p < hi; p++)
                        ic[p + d] += crow[p];
                }
        return;
    }
    for (int64_t c = 0; c < C; c++)
        for (int64_t ki = 0; ki < KH; ki++)
            for (int64_t kj = 0; kj < KW; kj++) {
                int64_t lo = kj < PD ? (PD - kj + S - 1) / S : 0;
                int64_t hi = W - 1 + PD - kj >= 0 ? (W - 1 + PD - kj) / S + 1 : 0;
                if (lo > OW)
                    lo = OW;
                if (hi > OW)
                    hi = OW;
                if (hi < lo)
                    hi = lo;
                for (int64_t oh = 0; oh < OH; oh++) {
                    const int64_t ih = oh * S - PD + ki, base = (c * H + ih) * W - PD + kj;
                    const R *crow = col + ((c * KH + ki) * KW + kj) * P + oh * OW;
                    if (ih < 0 || ih >= H)
                        continue;
                    for (int64_t ow = lo; ow < hi; ow++)
                        img[base + ow * S] += crow[ow];
                }
            }
}

void NNC_ISA_FN(NAME(nnc_conv2d_cols))(int64_t N, const R *x, const R *w, R *y, int64_t C, int64_t H, int64_t W,
                                       int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad, const R *bias,
                                       int relu, R *work, int64_t work_len)
{
    nnc__conv_check_work(NAME_STR("nnc_conv2d_cols"), work_len, nnc_conv2d_cols_work(C, H, W, F, KH, KW, stride, pad),
                         sizeof(R));
    const cgeom g = cols_geom(C, H, W, F, KH, KW, stride, pad);
    const int64_t P = g.P, CKK = g.CKK;
    for (int64_t b = 0; b < N; b++) {
        const R *img = x + b * C * H * W;
        R *yb = y + b * F * P;
        if (!g.gemm)
            NAME(im2col)(&g, img, work);
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)F, (int)P, (int)CKK, (R)1, w, (int)CKK,
             g.gemm ? img : work, (int)P, (R)0, yb, (int)P);
        /* the bias and relu that plan.c folded in (relu: v > 0 ? v : 0, so
         * NaN and -0 give +0) */
        if (bias && relu)
            for (int64_t f = 0; f < F; f++)
                for (int64_t p = 0; p < P; p++) {
                    const R v = yb[f * P + p] + bias[f];
                    yb[f * P + p] = v > (R)0 ? v : (R)0;
                }
        else if (bias)
            for (int64_t f = 0; f < F; f++)
                for (int64_t p = 0; p < P; p++)
                    yb[f * P + p] = yb[f * P + p] + bias[f];
        else if (relu)
            for (int64_t p = 0; p < F * P; p++)
                yb[p] = yb[p] > (R)0 ? yb[p] : (R)0;
    }
}

void NNC_ISA_FN(NAME(nnc_conv2d_cols_bwd_data))(int64_t N, const R *dy, const R *w, R *dx, const R *add, int64_t C,
                                                int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride,
                                                int64_t pad, R *work, int64_t work_len)
{
    nnc__conv_check_work(NAME_STR("nnc_conv2d_cols_bwd_data"), work_len,
                         nnc_conv2d_cols_work(C, H, W, F, KH, KW, stride, pad), sizeof(R));
    const cgeom g = cols_geom(C, H, W, F, KH, KW, stride, pad);
    const int64_t P = g.P, CKK = g.CKK;
    for (int64_t b = 0; b < N; b++) {
        R *img = dx + b * C * H * W;
        /* dcol = Wᵀ dy (the example's), then col2im */
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)CKK, (int)P, (int)F, (R)1, w, (int)CKK, dy + b * F * P,
             (int)P, (R)0, g.gemm ? img : work, (int)P);
        if (!g.gemm) {
            memset(img, 0, sizeof(R) * (size_t)(C * H * W));
            NAME(col2im)(&g, work, img);
        }
        /* the other gradient of x that plan.c folded in (fold_conv_add) */
        if (add)
            for (int64_t i = 0; i < C * H * W; i++)
                img[i] += add[b * C * H * W + i];
    }
}

void NNC_ISA_FN(NAME(nnc_conv2d_cols_bwd_filter))(int64_t N, const R *dy, const R *x, R *dw, int64_t C, int64_t H,
                                                  int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t stride,
                                                  int64_t pad, R *work, int64_t work_len)
{
    nnc__conv_check_work(NAME_STR("nnc_conv2d_cols_bwd_filter"), work_len,
                         nnc_conv2d_cols_bwd_filter_work(C, H, W, F, KH, KW, stride, pad), sizeof(R));
    const cgeom g = cols_geom(C, H, W, F, KH, KW, stride, pad);
    const int64_t P = g.P, CKK = g.CKK;
    if (N <= 0) { /* no examples: a sum of nothing */
        memset(dw, 0, sizeof(R) * (size_t)(F * CKK));
        return;
    }
    /* dWᵀ [CKK, F] after the columns (a 1x1 kernel at stride 1 without
     * padding has none) */
    R *const dwt = work + (g.gemm ? 0 : CKK * P);
    for (int64_t b = 0; b < N; b++) {
        const R *img = x + b * C * H * W;
        if (!g.gemm)
            NAME(im2col)(&g, img, work);
        /* the first example sets dWᵀ, the others add to it */
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)CKK, (int)F, (int)P, (R)1, g.gemm ? img : work, (int)P,
             dy + b * F * P, (int)P, b ? (R)1 : (R)0, dwt, (int)F);
    }
    for (int64_t f = 0; f < F; f++)
        for (int64_t k = 0; k < CKK; k++)
            dw[f * CKK + k] = dwt[k * F + f];
}
