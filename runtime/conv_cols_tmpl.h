/* conv_cols_tmpl.h — the body of conv_cols.c for one precision, included
 * there once for float and once for double with R (the type), GEMM
 * (cblas_sgemm or cblas_dgemm), NAME(f) (f_f32 or f_f64) and NAME_STR(f)
 * (the same as a string) defined.  No include guard: that is the point.
 * Not installed; nothing else includes it.
 */

/* im2col: one example's image img [C][H][W] -> its columns col [CKK][P]
 * in rows of pitch ld (P, or G P when G examples share the rows), row
 * (c, ki, kj), column (oh, ow).  The in-bounds columns of each row are a
 * range [lo, hi): no test per element. */
static void NAME(im2col)(const cgeom *g, const R *img, R *col, int64_t ld)
{
    const int64_t C = g->C, H = g->H, W = g->W, KH = g->KH, KW = g->KW, S = g->S, PD = g->PD, OH = g->OH, OW = g->OW,
                  P = g->P;
    if (g->same) {
        for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < KH; ki++)
                for (int64_t kj = 0; kj < KW; kj++) {
                    R *crow = col + ((c * KH + ki) * KW + kj) * ld;
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
                    R *crow = col + ((c * KH + ki) * KW + kj) * ld + oh * OW;
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

/* col2im: img [C][H][W] (cleared by the caller) += the columns col (rows
 * of pitch ld), row by row in im2col's order.  The 'same' layout zeroes
 * the columns that wrapped around a row edge first (they belong to no
 * pixel), in col. */
static void NAME(col2im)(const cgeom *g, R *col, R *img, int64_t ld)
{
    const int64_t C = g->C, H = g->H, W = g->W, KH = g->KH, KW = g->KW, S = g->S, PD = g->PD, OH = g->OH, OW = g->OW,
                  P = g->P;
    if (g->same) {
        for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < KH; ki++)
                for (int64_t kj = 0; kj < KW; kj++) {
                    R *crow = col + ((c * KH + ki) * KW + kj) * ld;
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
                    const R *crow = col + ((c * KH + ki) * KW + kj) * ld + oh * OW;
                    if (ih < 0 || ih >= H)
                        continue;
                    for (int64_t ow = lo; ow < hi; ow++)
                        img[base + ow * S] += crow[ow];
                }
            }
}

/* ---- small images, G examples to a GEMM (nnc_conv_cols_group) ----------------
 *
 * The columns of examples b0 .. b0 + gn - 1 sit side by side in rows of
 * pitch L = gn P: col [CKK][L], column k P + p for example b0 + k.  The
 * GEMMs are nnc_sgemm's (nnc_dgemm's), split over the threads in blocks
 * fixed by the shapes, so threads.c runs these calls as one item: the
 * groups, and so every sum, are the same at any thread count.  The copies
 * around the GEMMs (im2col, col2im, dy's gather, the output's scatter, dW's
 * transpose) run on the threads too, by examples or rows: each writes its
 * own outputs, so any split gives the same bits.  Left on the calling
 * thread, they kept these layers from scaling: resnet18's 4x4 layers took
 * as long at 2 threads as at 1 (im2col alone was 17% of the 2-thread
 * samples, the other thread spinning meanwhile).  CP_PAR: where a copy of
 * `n` floats is worth a parallel region (~20 us of copies). */
#ifndef CP_PAR
#define CP_PAR(n) ((double)(n) >= NNC_ITEM_COST)
#endif

/* dW [F][CKK] from the kernel gradients' dWᵀ [CKK][F], by blocks of 16 x
 * 16: a whole row of dW at a time read each float of dWᵀ from its own
 * cache line (F floats apart), 2% of resnet18's step at 1 thread */
static void NAME(dw_from_t)(int64_t F, int64_t CKK, const R *dwt, R *dw)
{
    NNC_PARALLEL_FOR_IF(1, CP_PAR(F * CKK))
    for (int64_t f0 = 0; f0 < F; f0 += 16)
        for (int64_t k0 = 0; k0 < CKK; k0 += 16) {
            const int64_t f1 = F - f0 < 16 ? F : f0 + 16, k1 = CKK - k0 < 16 ? CKK : k0 + 16;
            for (int64_t f = f0; f < f1; f++)
                for (int64_t k = k0; k < k1; k++)
                    dw[f * CKK + k] = dwt[k * F + f];
        }
}

/* The source of each column of each tap, tab [KH KW][P]: the pixel's
 * index in its channel, or -1 in the padding.  Small images' rows are a
 * few floats each: im2col's range loops cost more than the copies (0.95
 * ms a batch for a 4x4 layer of resnet18, 0.2 this way). */
static void NAME(tap_table)(const cgeom *g, int32_t *tab)
{
    for (int64_t ki = 0; ki < g->KH; ki++)
        for (int64_t kj = 0; kj < g->KW; kj++)
            for (int64_t oh = 0; oh < g->OH; oh++)
                for (int64_t ow = 0; ow < g->OW; ow++) {
                    const int64_t ih = oh * g->S - g->PD + ki, iw = ow * g->S - g->PD + kj;
                    tab[((ki * g->KW + kj) * g->OH + oh) * g->OW + ow] =
                        ih >= 0 && ih < g->H && iw >= 0 && iw < g->W ? (int32_t)(ih * g->W + iw) : -1;
                }
}

/* ---- small images by vector permutes (float at AVX-512 and AVX2) -----------
 *
 * Where a channel is at most 16 pixels (resnet18's 4x4 layers) it is one
 * AVX-512 vector, or two of AVX2, and a tap's row of at most 16 columns is
 * a permute of it with the padding zeroed; a channel of up to 64 pixels
 * (an 8x8 image to a 4x4 output, stride 2) is four AVX-512 vectors, two
 * two-source permutes and a blend.  col2im is the inverse permute of each
 * tap's row, added into the channel in tap order.  The table loops took a
 * load, a test and a store per float: im2col and col2im were 6.6% of
 * resnet18's step at 1 thread.  The copies are exact and the adds keep
 * the table's order (each pixel's sum starts from +0 and takes its taps in
 * order; adding +0 where a tap has no column leaves any sum that never is
 * -0 as it was), so the bits are the table loops'. */
#if R_F32 && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
#if defined(__AVX512F__)
#define COLS_PIXELS 64 /* a channel's pixels the permutes take */
#else
#define COLS_PIXELS 16
#endif
#define COLS_TAPS 49 /* up to 7x7 kernels */
typedef struct {
    /* im2col: the pixel of column p (0 in the padding); col2im: the
     * column of pixel q; ok: -1 where that is a real one, else 0 */
    int32_t idx[COLS_TAPS][COLS_PIXELS];
    int32_t ok[COLS_TAPS][COLS_PIXELS];
} cols_perm;

static int cols_perm_fits(const cgeom *g)
{
    return g->H * g->W <= COLS_PIXELS && g->P <= 16 && g->KH * g->KW <= COLS_TAPS;
}

/* im2col's (inverse 0) or col2im's (1) permutes from the tap table */
static void cols_perm_make(const cgeom *g, const int32_t *tab, int inverse, cols_perm *pm)
{
    const int64_t P = g->P, T = g->KH * g->KW;
    memset(pm, 0, sizeof *pm);
    for (int64_t t = 0; t < T; t++)
        for (int64_t p = 0; p < P; p++) {
            const int32_t q = tab[t * P + p];
            if (q < 0)
                continue;
            if (inverse)
                pm->idx[t][q] = (int32_t)p, pm->ok[t][q] = -1;
            else
                pm->idx[t][p] = q, pm->ok[t][p] = -1;
        }
}

#if defined(__AVX512F__)
static __mmask16 cols_mask(const int32_t *ok)
{
    return _mm512_cmpneq_epi32_mask(_mm512_loadu_si512(ok), _mm512_setzero_si512());
}
static __mmask16 cols_first(int64_t n) { return (__mmask16)(n >= 16 ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1); }
#else
/* AVX2: the first n of 8 lanes, as maskload/maskstore's mask */
static __m256i cols_first(int64_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
/* lanes i (0-15) of lo:hi, zeroed where ok is 0 */
static __m256 cols_pick(__m256 lo, __m256 hi, const int32_t *idx, const int32_t *ok)
{
    const __m256i i = _mm256_loadu_si256((const __m256i *)idx);
    const __m256 v = _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, i), _mm256_permutevar8x32_ps(hi, i),
                                      _mm256_castsi256_ps(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(7))));
    return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)ok)));
}
#endif

/* the T taps' rows (P columns each, pitch L) of one channel ic */
static void cols_perm_im2col(const cgeom *g, const cols_perm *pm, const float *ic, float *crow, int64_t L)
{
    const int64_t HW = g->H * g->W, P = g->P, T = g->KH * g->KW;
#if defined(__AVX512F__)
    const __m512 X0 = _mm512_maskz_loadu_ps(cols_first(HW), ic),
                 X1 = _mm512_maskz_loadu_ps(cols_first(HW - 16), ic + 16);
    const __m512 X2 = _mm512_maskz_loadu_ps(cols_first(HW - 32), ic + 32);
    const __m512 X3 = _mm512_maskz_loadu_ps(cols_first(HW - 48), ic + 48);
    const __mmask16 out = cols_first(P);
    for (int64_t t = 0; t < T; t++) {
        const __m512i i = _mm512_loadu_si512(pm->idx[t]);
        __m512 v;
        if (HW <= 16)
            v = _mm512_permutexvar_ps(i, X0);
        else /* pixels 0-31 from X0:X1, 32-63 from X2:X3 */
            v = _mm512_mask_blend_ps(_mm512_cmpgt_epi32_mask(i, _mm512_set1_epi32(31)),
                                     _mm512_permutex2var_ps(X0, i, X1), _mm512_permutex2var_ps(X2, i, X3));
        _mm512_mask_storeu_ps(crow + t * L, out, _mm512_maskz_mov_ps(cols_mask(pm->ok[t]), v));
    }
#else
    const __m256 X0 = _mm256_maskload_ps(ic, cols_first(HW)), X1 = _mm256_maskload_ps(ic + 8, cols_first(HW - 8));
    for (int64_t t = 0; t < T; t++)
        for (int64_t h = 0; h < P; h += 8) {
            const __m256 v = cols_pick(X0, X1, pm->idx[t] + h, pm->ok[t] + h);
            if (P - h >= 8)
                _mm256_storeu_ps(crow + t * L + h, v);
            else
                _mm256_maskstore_ps(crow + t * L + h, cols_first(P - h), v);
        }
#endif
}

/* one channel ic (cleared) += its T taps' rows (pitch L) */
static void cols_perm_col2im(const cgeom *g, const cols_perm *pm, const float *crow, int64_t L, float *ic)
{
    const int64_t HW = g->H * g->W, P = g->P, T = g->KH * g->KW;
#if defined(__AVX512F__)
    const __mmask16 in = cols_first(P);
    for (int64_t q0 = 0; q0 < HW; q0 += 16) {
        __m512 acc = _mm512_setzero_ps();
        for (int64_t t = 0; t < T; t++) {
            const __m512 r = _mm512_maskz_loadu_ps(in, crow + t * L);
            acc = _mm512_mask_add_ps(acc, cols_mask(pm->ok[t] + q0), acc,
                                     _mm512_permutexvar_ps(_mm512_loadu_si512(pm->idx[t] + q0), r));
        }
        _mm512_mask_storeu_ps(ic + q0, cols_first(HW - q0), acc);
    }
#else
    const __m256i in0 = cols_first(P), in1 = cols_first(P - 8);
    for (int64_t q0 = 0; q0 < HW; q0 += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int64_t t = 0; t < T; t++) {
            const __m256 r0 = _mm256_maskload_ps(crow + t * L, in0), r1 = _mm256_maskload_ps(crow + t * L + 8, in1);
            acc = _mm256_add_ps(acc, cols_pick(r0, r1, pm->idx[t] + q0, pm->ok[t] + q0));
        }
        if (HW - q0 >= 8)
            _mm256_storeu_ps(ic + q0, acc);
        else
            _mm256_maskstore_ps(ic + q0, cols_first(HW - q0), acc);
    }
#endif
}
#define COLS_PERM 1
#else
#define COLS_PERM 0
#endif

/* im2col of gn examples from img (the first) into col, rows of pitch L */
static void NAME(im2col_group)(const cgeom *g, int64_t gn, const int32_t *tab, const R *img, R *col)
{
    const int64_t P = g->P, T = g->KH * g->KW, L = gn * P;
#if COLS_PERM
    if (cols_perm_fits(g)) {
        cols_perm pm;
        cols_perm_make(g, tab, 0, &pm);
        NNC_PARALLEL_FOR_IF(2, CP_PAR(gn * g->C * T * P))
        for (int64_t k = 0; k < gn; k++)
            for (int64_t c = 0; c < g->C; c++)
                cols_perm_im2col(g, &pm, img + (k * g->C + c) * g->H * g->W, col + c * T * L + k * P, L);
        return;
    }
#endif
    NNC_PARALLEL_FOR_IF(2, CP_PAR(gn * g->C * T * P))
    for (int64_t k = 0; k < gn; k++)
        for (int64_t c = 0; c < g->C; c++) {
            const R *ic = img + (k * g->C + c) * g->H * g->W;
            for (int64_t t = 0; t < T; t++) {
                const int32_t *tr = tab + t * P;
                R *crow = col + (c * T + t) * L + k * P;
                for (int64_t p = 0; p < P; p++) { /* load, then select: a masked gather */
                    const R v = ic[tr[p] >= 0 ? tr[p] : 0];
                    crow[p] = tr[p] >= 0 ? v : (R)0;
                }
            }
        }
}

/* col2im of one example: img [C][H][W] (cleared) += col's rows of pitch L */
static void NAME(col2im_table)(const cgeom *g, const int32_t *tab, const R *col, int64_t L, R *img)
{
    const int64_t P = g->P, T = g->KH * g->KW;
    for (int64_t c = 0; c < g->C; c++) {
        R *ic = img + c * g->H * g->W;
        for (int64_t t = 0; t < T; t++) {
            const int32_t *tr = tab + t * P;
            const R *crow = col + (c * T + t) * L;
            for (int64_t p = 0; p < P; p++) /* a tap's positions read distinct pixels */
                if (tr[p] >= 0)
                    ic[tr[p]] += crow[p];
        }
    }
}

/* dy of gn examples [gn][F][P] -> [F][gn P] */
static void NAME(gather_group)(const cgeom *g, int64_t gn, const R *dy, R *out)
{
    const int64_t F = g->F, P = g->P, L = gn * P;
    NNC_PARALLEL_FOR_IF(2, CP_PAR(gn * F * P))
    for (int64_t k = 0; k < gn; k++)
        for (int64_t f = 0; f < F; f++)
            memcpy(out + f * L + k * P, dy + (k * F + f) * P, sizeof(R) * (size_t)P);
}

static void NAME(cols_fwd_grouped)(const cgeom *g, int64_t N, const R *x, const R *w, R *y, const R *bias, int relu,
                                   R *work)
{
    const int64_t F = g->F, P = g->P, CKK = g->CKK, G = g->G;
    R *const col = work, *const out = work + CKK * G * P; /* [CKK][L], [F][L] */
    int32_t *const tab = (int32_t *)(out + F * G * P);
    NAME(tap_table)(g, tab);
    for (int64_t b0 = 0; b0 < N; b0 += G) {
        const int64_t gn = N - b0 < G ? N - b0 : G, L = gn * P;
        NAME(im2col_group)(g, gn, tab, x + b0 * g->C * g->H * g->W, col);
        GEMMT(CblasNoTrans, CblasNoTrans, (int)F, (int)L, (int)CKK, (R)1, w, (int)CKK, col, (int)L, (R)0, out, (int)L);
        /* back to [gn][F][P], with the bias and relu plan.c folded in */
        NNC_PARALLEL_FOR_IF(2, CP_PAR(gn * F * P))
        for (int64_t k = 0; k < gn; k++)
            for (int64_t f = 0; f < F; f++) {
                const R *o = out + f * L + k * P, bf = bias ? bias[f] : (R)0;
                R *yr = y + ((b0 + k) * F + f) * P;
                if (relu)
                    for (int64_t p = 0; p < P; p++) {
                        const R v = o[p] + bf;
                        yr[p] = v > (R)0 ? v : (R)0;
                    }
                else
                    for (int64_t p = 0; p < P; p++)
                        yr[p] = o[p] + bf;
            }
    }
}

static void NAME(cols_data_grouped)(const cgeom *g, int64_t N, const R *dy, const R *w, R *dx, const R *add, R *work)
{
    const int64_t F = g->F, P = g->P, CKK = g->CKK, G = g->G, X = g->C * g->H * g->W;
    R *const dcol = work, *const dyg = work + CKK * G * P; /* [CKK][L], [F][L] */
    int32_t *const tab = (int32_t *)(dyg + F * G * P);
    NAME(tap_table)(g, tab);
#if COLS_PERM
    cols_perm pm;
    const int perm = cols_perm_fits(g);
    if (perm)
        cols_perm_make(g, tab, 1, &pm);
#endif
    for (int64_t b0 = 0; b0 < N; b0 += G) {
        const int64_t gn = N - b0 < G ? N - b0 : G, L = gn * P;
        NAME(gather_group)(g, gn, dy + b0 * F * P, dyg);
        GEMMT(CblasTrans, CblasNoTrans, (int)CKK, (int)L, (int)F, (R)1, w, (int)CKK, dyg, (int)L, (R)0, dcol, (int)L);
        NNC_PARALLEL_FOR_IF(1, CP_PAR(gn * CKK * P))
        for (int64_t k = 0; k < gn; k++) {
            R *img = dx + (b0 + k) * X;
#if COLS_PERM
            if (perm) {
                const int64_t T = g->KH * g->KW, HW = g->H * g->W;
                for (int64_t c = 0; c < g->C; c++) /* writes every pixel: no clearing */
                    cols_perm_col2im(g, &pm, dcol + c * T * L + k * P, L, img + c * HW);
            } else
#endif
            {
                memset(img, 0, sizeof(R) * (size_t)X);
                NAME(col2im_table)(g, tab, dcol + k * P, L, img);
            }
            if (add)
                for (int64_t i = 0; i < X; i++)
                    img[i] += add[(b0 + k) * X + i];
        }
    }
}

static void NAME(cols_filter_grouped)(const cgeom *g, int64_t N, const R *dy, const R *x, R *dw, R *work)
{
    const int64_t F = g->F, P = g->P, CKK = g->CKK, G = g->G;
    R *const col = work, *const dyg = work + CKK * G * P, *const dwt = dyg + F * G * P; /* [CKK][L], [F][L], [CKK][F] */
    int32_t *const tab = (int32_t *)(dwt + CKK * F);
    NAME(tap_table)(g, tab);
    if (N <= 0) {
        memset(dw, 0, sizeof(R) * (size_t)(F * CKK));
        return;
    }
    for (int64_t b0 = 0; b0 < N; b0 += G) {
        const int64_t gn = N - b0 < G ? N - b0 : G, L = gn * P;
        NAME(im2col_group)(g, gn, tab, x + b0 * g->C * g->H * g->W, col);
        NAME(gather_group)(g, gn, dy + b0 * F * P, dyg);
#if COLS_PERM
        /* gemm.c's (AVX2, AVX-512): dW [F][CKK] = (+=) dyg colᵀ, the
         * first group setting it.  The same products as dWᵀ's below, each
         * output summed in k order either way (so the same bits), ~5%
         * slower, but without dWᵀ's transpose, which read a float per
         * cache line: 2% of resnet18's step at 1 thread. */
        (void)dwt;
        GEMMT(CblasNoTrans, CblasTrans, (int)F, (int)CKK, (int)L, (R)1, dyg, (int)L, col, (int)L, b0 ? (R)1 : (R)0, dw,
              (int)CKK);
#else
        /* BLAS's: dWᵀ [CKK][F] = (+=) col dygᵀ, the shape OpenBLAS runs
         * faster (docs/decisions.md), then one transpose */
        GEMMT(CblasNoTrans, CblasTrans, (int)CKK, (int)F, (int)L, (R)1, col, (int)L, dyg, (int)L, b0 ? (R)1 : (R)0, dwt,
              (int)F);
#endif
    }
#if !COLS_PERM
    NAME(dw_from_t)(F, CKK, dwt, dw);
#endif
}

void NNC_ISA_FN(NAME(nnc_conv2d_cols))(int64_t N, const R *x, const R *w, R *y, int64_t C, int64_t H, int64_t W,
                                       int64_t F, int64_t KH, int64_t KW, int64_t stride, int64_t pad, const R *bias,
                                       int relu, R *work, int64_t work_len)
{
    nnc__conv_check_work(NAME_STR("nnc_conv2d_cols"), work_len, nnc_conv2d_cols_work(C, H, W, F, KH, KW, stride, pad),
                         sizeof(R));
    const cgeom g = cols_geom(C, H, W, F, KH, KW, stride, pad);
    const int64_t P = g.P, CKK = g.CKK;
    if (g.G > 1) {
        NAME(cols_fwd_grouped)(&g, N, x, w, y, bias, relu, work);
        return;
    }
    for (int64_t b = 0; b < N; b++) {
        const R *img = x + b * C * H * W;
        R *yb = y + b * F * P;
        if (!g.gemm)
            NAME(im2col)(&g, img, work, P);
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
    if (g.G > 1) {
        NAME(cols_data_grouped)(&g, N, dy, w, dx, add, work);
        return;
    }
    for (int64_t b = 0; b < N; b++) {
        R *img = dx + b * C * H * W;
        /* dcol = Wᵀ dy (the example's), then col2im */
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)CKK, (int)P, (int)F, (R)1, w, (int)CKK, dy + b * F * P,
             (int)P, (R)0, g.gemm ? img : work, (int)P);
        if (!g.gemm) {
            memset(img, 0, sizeof(R) * (size_t)(C * H * W));
            NAME(col2im)(&g, work, img, P);
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
    if (g.G > 1) {
        NAME(cols_filter_grouped)(&g, N, dy, x, dw, work);
        return;
    }
    /* dWᵀ [CKK, F] after the columns (a 1x1 kernel at stride 1 without
     * padding has none) */
    R *const dwt = work + (g.gemm ? 0 : CKK * P);
    for (int64_t b = 0; b < N; b++) {
        const R *img = x + b * C * H * W;
        if (!g.gemm)
            NAME(im2col)(&g, img, work, P);
        /* the first example sets dWᵀ, the others add to it */
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)CKK, (int)F, (int)P, (R)1, g.gemm ? img : work, (int)P,
             dy + b * F * P, (int)P, b ? (R)1 : (R)0, dwt, (int)F);
    }
    NAME(dw_from_t)(F, CKK, dwt, dw);
}

/* ---- the general convolution: groups, dilation, [h, w] strides and padding ----
 *
 * nnc_conv.h's nnc_conv2d_geom.  One example at a time, as above: its
 * columns [C KH KW][OH OW] for every channel, then one GEMM per group on
 * the group's rows of the columns and of w (group k's rows of both are
 * contiguous: row (c, ki, kj) with c in the group's channels), writing
 * its filters' part of the example's output.  Groups of one channel
 * (depthwise) go a channel at a time instead (dw_split, below). */

/* Tap column kj's in-bounds output columns [lo, hi) and its input column
 * offset off (iw = ow sw + off), alike for every channel and row: worked
 * out once per tap, not per channel (two divisions by the stride, which
 * took longer than a row's copy) */
static inline void NAME(gen_span)(const nnc_conv2d_geom *g, int64_t OW, int64_t kj, int64_t *off, int64_t *lo,
                                  int64_t *hi)
{
    const int64_t o = kj * g->dw - g->pw, W = g->W;
    int64_t l = o < 0 ? (-o + g->sw - 1) / g->sw : 0, h = W - 1 - o >= 0 ? (W - 1 - o) / g->sw + 1 : 0;
    l = l > OW ? OW : l;
    *off = o, *lo = l, *hi = h > OW ? OW : h < l ? l : h;
}

/* the columns of one example, rows of pitch OH OW; the in-bounds output
 * columns of each row are a range [lo, hi), as im2col's */
static void NAME(gen_im2col)(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const R *img, R *col)
{
    const int64_t H = g->H, W = g->W, P = OH * OW;
    for (int64_t ki = 0; ki < g->KH; ki++)
        for (int64_t kj = 0; kj < g->KW; kj++) {
            int64_t off, lo, hi;
            NAME(gen_span)(g, OW, kj, &off, &lo, &hi);
            for (int64_t c = 0; c < g->C; c++) {
                R *crow = col + ((c * g->KH + ki) * g->KW + kj) * P;
                for (int64_t oh = 0; oh < OH; oh++) {
                    const int64_t ih = oh * g->sh - g->ph + ki * g->dh, base = (c * H + ih) * W + off;
                    R *row = crow + oh * OW;
                    if (ih < 0 || ih >= H) {
                        memset(row, 0, sizeof(R) * (size_t)OW);
                        continue;
                    }
                    for (int64_t ow = 0; ow < lo; ow++)
                        row[ow] = (R)0;
                    /* strides 1 and 2 as constants: a loop of unknown stride did not vectorize */
                    const R *restrict src = img + base + lo * g->sw; /* (in the image: base may be < 0) */
                    if (g->sw == 1)                                  /* a run of the row as it is */
                        memcpy(row + lo, src, sizeof(R) * (size_t)(hi - lo));
                    else if (g->sw == 2)
                        for (int64_t k = 0; k < hi - lo; k++)
                            row[lo + k] = src[2 * k];
                    else
                        for (int64_t k = 0; k < hi - lo; k++)
                            row[lo + k] = src[k * g->sw];
                    for (int64_t ow = hi; ow < OW; ow++)
                        row[ow] = (R)0;
                }
            }
        }
}

/* img (cleared by the caller) += the columns.  An image element's adds
 * come from its channel's rows in tap order (ki, then kj), as when the
 * channels were the outer loop: the same bits. */
static void NAME(gen_col2im)(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const R *col, R *img)
{
    const int64_t H = g->H, W = g->W, P = OH * OW;
    for (int64_t ki = 0; ki < g->KH; ki++)
        for (int64_t kj = 0; kj < g->KW; kj++) {
            int64_t off, lo, hi;
            NAME(gen_span)(g, OW, kj, &off, &lo, &hi);
            for (int64_t c = 0; c < g->C; c++) {
                const R *crow = col + ((c * g->KH + ki) * g->KW + kj) * P;
                for (int64_t oh = 0; oh < OH; oh++) {
                    const int64_t ih = oh * g->sh - g->ph + ki * g->dh, base = (c * H + ih) * W + off;
                    if (ih < 0 || ih >= H)
                        continue;
                    /* the same adds; at strides 1 and 2 as constants, they vectorize */
                    R *restrict dst = img + base + lo * g->sw; /* (in the image: base may be < 0) */
                    const R *restrict src = crow + oh * OW + lo;
                    if (g->sw == 1)
                        for (int64_t k = 0; k < hi - lo; k++)
                            dst[k] += src[k];
                    else if (g->sw == 2)
                        for (int64_t k = 0; k < hi - lo; k++)
                            dst[2 * k] += src[k];
                    else
                        for (int64_t k = 0; k < hi - lo; k++)
                            dst[k * g->sw] += src[k];
                }
            }
        }
}

/* ---- depthwise layers in float at AVX2 and AVX-512: sums in registers ----
 *
 * The loops below (dw_fwd, dw_data, dw_filter: every precision and
 * instruction set) go a tap at a time over the whole plane, so every add
 * is a load and a store of memory, and rows shorter than a vector (8 or
 * 16 outputs at 8x8 and 16x16) run as scalar tails: the MobileNet-style
 * model's depthwise layers ran at 2-11 GFLOP/s, 26 of its 50 ms step at
 * one thread.  Here each run of up to a vector of outputs (or of the data
 * gradient's inputs) collects all its taps in a register, DW_UNITS runs
 * side by side, and is stored once.  The sums are the loops' own: the
 * same products (a multiply and an add, never an FMA, as the loops are
 * compiled), in the same order, from the same +0, and the products of
 * padding that the loops skip are +-0, which leave a sum that never is -0
 * as it was.  So these (dw_*_vec, after the loops) give the loops'
 * bits, at either vector width. */
#if R_F32 && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
#define DW_VEC 1
#define DW_TAPS 64 /* up to 8x8 kernels; larger ones take the loops */
#define DW_UNITS 4 /* runs summed side by side */
#if defined(__AVX512F__)
#define DW_L 16
#define DW_TG 9 /* the kernel gradient's taps at a time: 3x3 in one go */
typedef __m512 dwv;
typedef __mmask16 dwm;
static inline dwv dwv_load(const float *p, dwm m) { return _mm512_maskz_loadu_ps(m, p); }
static inline void dwv_store(float *p, dwv v, dwm m, int64_t n)
{
    (void)n;
    _mm512_mask_storeu_ps(p, m, v);
}
static inline dwv dwv_set1(float x) { return _mm512_set1_ps(x); }
static inline dwv dwv_madd(dwv acc, dwv a, dwv b) { return _mm512_add_ps(acc, _mm512_mul_ps(a, b)); }
static inline dwv dwv_zero(void) { return _mm512_setzero_ps(); }
static inline dwv dwv_add(dwv a, dwv b) { return _mm512_add_ps(a, b); }
static inline dwv dwv_relu(dwv a) { return _mm512_max_ps(a, _mm512_setzero_ps()); }
static inline void dwv_spill(float *p, dwv v) { _mm512_storeu_ps(p, v); }
/* the n <= 16 floats p[0], p[2], ..., p[2 (n - 1)] */
static inline dwv dwv_evens(const float *p, int64_t n)
{
    const __m512 a = _mm512_maskz_loadu_ps(cols_first(2 * n - 1), p),
                 b = _mm512_maskz_loadu_ps(cols_first(2 * n - 1 - 16), p + 16);
    return _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
}
/* a0 b0 a1 b1 ... a15 b15, as *lo and *hi */
static inline void dwv_zip(dwv a, dwv b, dwv *lo, dwv *hi)
{
    *lo = _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), b);
    *hi = _mm512_permutex2var_ps(a, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), b);
}
#else
#define DW_L 8
#define DW_TG 5 /* 10 sums in registers, of 16 */
typedef __m256 dwv;
typedef __m256i dwm;
static inline dwv dwv_load(const float *p, dwm m) { return _mm256_maskload_ps(p, m); }
/* (a masked store is slow on AMD: whole runs store plainly) */
static inline void dwv_store(float *p, dwv v, dwm m, int64_t n)
{
    if (n >= DW_L)
        _mm256_storeu_ps(p, v);
    else
        _mm256_maskstore_ps(p, m, v);
}
static inline dwv dwv_set1(float x) { return _mm256_set1_ps(x); }
static inline dwv dwv_madd(dwv acc, dwv a, dwv b) { return _mm256_add_ps(acc, _mm256_mul_ps(a, b)); }
static inline dwv dwv_zero(void) { return _mm256_setzero_ps(); }
static inline dwv dwv_add(dwv a, dwv b) { return _mm256_add_ps(a, b); }
/* (max returns its second operand for NaN and for two zeros: the loops'
 * v > 0 ? v : 0) */
static inline dwv dwv_relu(dwv a) { return _mm256_max_ps(a, _mm256_setzero_ps()); }
static inline void dwv_spill(float *p, dwv v) { _mm256_storeu_ps(p, v); }
static inline dwv dwv_evens(const float *p, int64_t n)
{
    const __m256 a = _mm256_maskload_ps(p, cols_first(2 * n - 1)), b = _mm256_maskload_ps(p + 8, cols_first(2 * n - 9));
    /* a0 a2 b0 b2 a4 a6 b4 b6, then its 64-bit pairs 0 2 1 3 */
    const __m256 e = _mm256_shuffle_ps(a, b, 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}
static inline void dwv_zip(dwv a, dwv b, dwv *lo, dwv *hi)
{
    const __m256 l = _mm256_unpacklo_ps(a, b), h = _mm256_unpackhi_ps(a, b); /* a0 b0 a1 b1 a4 b4 a5 b5; a2 .. */
    *lo = _mm256_permute2f128_ps(l, h, 0x20);
    *hi = _mm256_permute2f128_ps(l, h, 0x31);
}
#endif
#endif

/* Depthwise layers (one input channel a group; F = C Fg, filter f reads
 * channel f / Fg) go a channel at a time through its padded copy xq, whose
 * rows are split into their sw column phases: padded column j sw + s of a
 * row at [s][j] (nnc_conv.h's nnc_conv2d_dw_xq).  Then a tap's products over a row
 * of outputs, at any stride and dilation, read one contiguous run of xq
 * (and the data gradient's adds write one), which the compiler
 * vectorizes.  The tap-by-tap loop over each output's window ran
 * MobileNet-style layers at ~1.2 GFLOP/s, scalar. */
/* Phase s of a padded row (its columns s, s + S, ...) holds image column
 * q S + s - pw at q in [*q0, *q1) */
static inline void NAME(dw_phase)(const nnc_conv2d_geom *g, int64_t s, int64_t *q0, int64_t *q1)
{
    const int64_t S = g->sw, Wq = nnc_conv2d_dw_q(g), e = g->W + g->pw - s;
    *q0 = g->pw > s ? (g->pw - s + S - 1) / S : 0;
    *q1 = e <= 0 ? *q0 : (e + S - 1) / S < Wq ? (e + S - 1) / S : Wq;
}

/* dst [n] = src [n]: at stride 1 the rows of a channel, 8 to 64 floats,
 * where a memcpy call a row was a third of a 16x16 layer's time */
static inline void NAME(dw_copy)(R *dst, const R *src, int64_t n)
{
#if R_F32 && defined(DW_VEC)
    for (int64_t q = 0; q < n; q += DW_L) {
        const dwm m = cols_first(n - q);
        dwv_store(dst + q, dwv_load(src + q, m), m, n - q);
    }
#else
    memcpy(dst, src, sizeof(R) * (size_t)n);
#endif
}

/* xq = 0, its padding for every channel of a call (dw_split writes the
 * image's part only) */
static void NAME(dw_clear)(const nnc_conv2d_geom *g, R *xq) { memset(xq, 0, sizeof(R) * (size_t)nnc_conv2d_dw_xq(g)); }

/* The image part of xq [H + 2 ph][sw][Wq] = channel ic, its columns
 * split by phase (the plain loops, with xq cleared each time, were a
 * third of a depthwise layer's time) */
static void NAME(dw_split)(const nnc_conv2d_geom *g, const R *ic, R *xq)
{
    const int64_t S = g->sw, Wq = nnc_conv2d_dw_q(g);
    for (int64_t s = 0; s < S; s++) {
        int64_t q0, q1;
        NAME(dw_phase)(g, s, &q0, &q1);
        for (int64_t ih = 0; ih < g->H; ih++) {
            R *restrict row = xq + ((ih + g->ph) * S + s) * Wq;
            const R *restrict src = ic + ih * g->W + s - g->pw;
            if (S == 1)
                NAME(dw_copy)(row + q0, src + q0, q1 - q0);
#if R_F32 && defined(DW_VEC)
            else if (S == 2)
                for (int64_t q = q0; q < q1; q += DW_L) {
                    const int64_t n = q1 - q < DW_L ? q1 - q : DW_L;
                    dwv_store(row + q, dwv_evens(src + 2 * q, n), cols_first(n), n);
                }
#endif
            else
                for (int64_t q = q0; q < q1; q++)
                    row[q] = src[q * S];
        }
    }
}

/* ic [H][W] = the image part of xq (dw_split's inverse) */
static void NAME(dw_unsplit)(const nnc_conv2d_geom *g, const R *xq, R *ic)
{
    const int64_t S = g->sw, Wq = nnc_conv2d_dw_q(g);
#if R_F32 && defined(DW_VEC)
    if (S == 2) { /* 2 DW_L columns at a time, zipped from the two phases */
        for (int64_t ih = 0; ih < g->H; ih++)
            for (int64_t iw = 0; iw < g->W; iw += 2 * DW_L) {
                /* column iw + 2k is phase a's q = qa + k, iw + 2k + 1 the other's qa' + k */
                const int64_t p = iw + g->pw, n = g->W - iw < 2 * DW_L ? g->W - iw : 2 * DW_L;
                const float *ra = xq + ((ih + g->ph) * 2 + (p & 1)) * Wq + (p >> 1),
                            *rb = xq + ((ih + g->ph) * 2 + 1 - (p & 1)) * Wq + ((p + 1) >> 1);
                dwv lo, hi;
                dwv_zip(dwv_load(ra, cols_first((n + 1) / 2)), dwv_load(rb, cols_first(n / 2)), &lo, &hi);
                float *dst = ic + ih * g->W + iw;
                dwv_store(dst, lo, cols_first(n), n);
                if (n > DW_L)
                    dwv_store(dst + DW_L, hi, cols_first(n - DW_L), n - DW_L);
            }
        return;
    }
#endif
    for (int64_t s = 0; s < S; s++) {
        int64_t q0, q1;
        NAME(dw_phase)(g, s, &q0, &q1);
        for (int64_t ih = 0; ih < g->H; ih++) {
            const R *restrict row = xq + ((ih + g->ph) * S + s) * Wq;
            R *restrict dst = ic + ih * g->W + s - g->pw;
            if (S == 1)
                NAME(dw_copy)(dst + q0, row + q0, q1 - q0);
            else
                for (int64_t q = q0; q < q1; q++)
                    dst[q * S] = row[q];
        }
    }
}

/* The next tap column's run: column t = kj dw of the padded row is phase
 * t % S at q = t / S (kept as kj steps, without a division). */
static inline void NAME(dw_next)(int64_t dw, int64_t S, int64_t *ph, int64_t *q)
{
    *ph += dw;
    while (*ph >= S)
        *ph -= S, ++*q;
}

/* The loops run a tap at a time over the whole plane: an output (or the
 * data gradient's input) is read, added to and written once a tap, with
 * the rest of the plane between.  (A row at a time, every tap, each add
 * waited on the store of the one before: the depthwise layers of the
 * MobileNet-style model ran 1.6x slower.) */

/* yf [OH][OW] = filter wf [KH][KW] over xq: each output the taps' sum in
 * (ki, kj) order (the padding's products are zeros) */
static void NAME(dw_fwd)(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const R *xq, const R *wf, R *yf)
{
    const int64_t RS = g->sw * nnc_conv2d_dw_q(g), Wq = nnc_conv2d_dw_q(g);
    memset(yf, 0, sizeof(R) * (size_t)(OH * OW));
    for (int64_t ki = 0; ki < g->KH; ki++)
        for (int64_t kj = 0, ph = 0, q = 0; kj < g->KW; kj++, NAME(dw_next)(g->dw, g->sw, &ph, &q)) {
            const R wv = wf[ki * g->KW + kj];
            for (int64_t oh = 0; oh < OH; oh++) {
                const R *restrict src = xq + (oh * g->sh + ki * g->dh) * RS + ph * Wq + q;
                R *restrict yr = yf + oh * OW;
                for (int64_t ow = 0; ow < OW; ow++)
                    yr[ow] += wv * src[ow];
            }
        }
}

/* dxq (+)= dyf [OH][OW] spread by filter wf: the data gradient's sums,
 * in (ki, kj) order for each input (one output row reaches an input row
 * a tap) */
static void NAME(dw_data)(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const R *dyf, const R *wf, R *dxq)
{
    const int64_t RS = g->sw * nnc_conv2d_dw_q(g), Wq = nnc_conv2d_dw_q(g);
    for (int64_t ki = 0; ki < g->KH; ki++)
        for (int64_t kj = 0, ph = 0, q = 0; kj < g->KW; kj++, NAME(dw_next)(g->dw, g->sw, &ph, &q)) {
            const R wv = wf[ki * g->KW + kj];
            for (int64_t oh = 0; oh < OH; oh++) {
                const R *restrict gr = dyf + oh * OW;
                R *restrict dst = dxq + (oh * g->sh + ki * g->dh) * RS + ph * Wq + q;
                for (int64_t ow = 0; ow < OW; ow++)
                    dst[ow] += wv * gr[ow];
            }
        }
}

/* dwf [KH][KW] = (first) or += the sums over the example's positions of
 * dyf times xq: per tap DW_LANES partial sums, output column ow into sum
 * ow % DW_LANES, added in lane order at the end: the same bits at every
 * vector width (dw_filter_vec's).  16, not 32: rows of 16 outputs (16x16
 * layers) filled half of each pair of AVX-512 sums, and the 31 adds at
 * the end were as many as an 8x8 plane's products. */
#ifndef DW_LANES
#define DW_LANES 16
#endif
static void NAME(dw_filter)(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const R *xq, const R *dyf, R *dwf,
                            int first)
{
    const int64_t RS = g->sw * nnc_conv2d_dw_q(g), Wq = nnc_conv2d_dw_q(g);
    for (int64_t ki = 0; ki < g->KH; ki++)
        for (int64_t kj = 0, ph = 0, q = 0; kj < g->KW; kj++, NAME(dw_next)(g->dw, g->sw, &ph, &q)) {
            R part[DW_LANES] = {0};
            for (int64_t oh = 0; oh < OH; oh++) {
                const R *restrict src = xq + (oh * g->sh + ki * g->dh) * RS + ph * Wq + q, *restrict gr = dyf + oh * OW;
                int64_t ow = 0;
                for (; ow + DW_LANES <= OW; ow += DW_LANES)
                    for (int l = 0; l < DW_LANES; l++)
                        part[l] += gr[ow + l] * src[ow + l];
                for (int l = 0; ow + l < OW; l++)
                    part[l] += gr[ow + l] * src[ow + l];
            }
            R sum = part[0];
            for (int l = 1; l < DW_LANES; l++)
                sum += part[l];
            R *d = dwf + ki * g->KW + kj;
            *d = first ? sum : *d + sum;
        }
}

#if R_F32 && defined(DW_VEC)
/* The tap tables of a layer, made once a call (a plane of 8x8 outputs
 * is a few hundred cycles of products): where tap t = (ki, kj) reads xq
 * from its output's first tap (the forward pass, the kernel gradient),
 * and the data gradient's taps by class (r mod sh, phase s), below. */
#define DW_CLASSES 16
typedef struct {
    int64_t off[DW_TAPS];
    int64_t cls[DW_CLASSES + 1]; /* class k: taps [cls[k], cls[k + 1]) of doff, dtap */
    int64_t doff[DW_TAPS];
    int64_t dtap[DW_TAPS];
    /* class k's runs: its first row r0 and row count, columns [q0, q1) */
    int64_t r0[DW_CLASSES], rows[DW_CLASSES], q0[DW_CLASSES], q1[DW_CLASSES];
} dw_plan;

/* Whether a layer takes this code: its taps and classes fit the tables. */
static int dw_vec_fits(const nnc_conv2d_geom *g) { return g->KH * g->KW <= DW_TAPS && g->sh * g->sw <= DW_CLASSES; }

static void dw_plan_make(const nnc_conv2d_geom *g, dw_plan *p)
{
    const int64_t Wq = nnc_conv2d_dw_q(g), RS = g->sw * Wq, D = nnc_conv2d_dw_pitch(g);
    for (int64_t ki = 0, t = 0; ki < g->KH; ki++)
        for (int64_t kj = 0, ph = 0, q = 0; kj < g->KW; kj++, t++, NAME(dw_next)(g->dw, g->sw, &ph, &q))
            p->off[t] = ki * g->dh * RS + ph * Wq + q;
    /* input (r, s, q) took tap (ki, kj) of output ((r - ki dh) / sh, q -
     * q(kj)) where r - ki dh is a multiple of sh and kj is of phase s: for
     * r = rho mod sh, the taps with ki dh = rho mod sh, dy read at -(ki dh
     * - rho) / sh rows and -q(kj) columns from the run's (dw_data_vec) */
    int64_t n = 0;
    for (int64_t rho = 0; rho < g->sh; rho++)
        for (int64_t s = 0; s < g->sw; s++) {
            const int64_t k = rho * g->sw + s, r0 = g->ph + ((rho - g->ph) % g->sh + g->sh) % g->sh;
            p->r0[k] = r0;
            p->rows[k] = r0 < g->ph + g->H ? (g->ph + g->H - r0 + g->sh - 1) / g->sh : 0;
            NAME(dw_phase)(g, s, &p->q0[k], &p->q1[k]);
            p->cls[k] = n;
            for (int64_t ki = 0; ki < g->KH; ki++)
                for (int64_t kj = 0, ph = 0, q = 0; kj < g->KW; kj++, NAME(dw_next)(g->dw, g->sw, &ph, &q))
                    if (ph == s && ki * g->dh % g->sh == rho) {
                        p->doff[n] = -(ki * g->dh - rho) / g->sh * D - q;
                        p->dtap[n++] = ki * g->KW + kj;
                    }
        }
    p->cls[g->sh * g->sw] = n;
}

/* DW_UNITS runs of up to DW_L floats: run u reads its taps at src[u] +
 * off[t] and writes dst[u], n[u] of them (0: an idle slot) */
typedef struct {
    const float *src[DW_UNITS];
    float *dst[DW_UNITS];
    int64_t n[DW_UNITS];
    dwm m[DW_UNITS];
} dw_runs;

static void dw_runs_mask(dw_runs *r)
{
    for (int u = 0; u < DW_UNITS; u++)
        r->m[u] = cols_first(r->n[u]);
}

/* Each run's sum += w[t] * (its input at off[t]), t in order, from +0
 * (or from dst where acc_dst), then + bias and relu where asked (the
 * forward pass's fold: + 0 without a bias, as the loops add). */
static void dw_runs_sum(const dw_runs *r, const int64_t *off, const float *w, int64_t T, int acc_dst, int post,
                        float bias, int relu)
{
    dwv acc[DW_UNITS];
    const float *src[DW_UNITS];
    dwm m[DW_UNITS];
#pragma GCC unroll 8
    for (int u = 0; u < DW_UNITS; u++) {
        src[u] = r->src[u];
        m[u] = r->m[u];
        acc[u] = acc_dst ? dwv_load(r->dst[u], m[u]) : dwv_zero();
    }
    for (int64_t t = 0; t < T; t++) {
        const dwv wv = dwv_set1(w[t]);
#pragma GCC unroll 8
        for (int u = 0; u < DW_UNITS; u++)
            acc[u] = dwv_madd(acc[u], wv, dwv_load(src[u] + off[t], m[u]));
    }
#pragma GCC unroll 8
    for (int u = 0; u < DW_UNITS; u++) {
        dwv v = acc[u];
        if (post)
            v = dwv_add(v, dwv_set1(bias));
        if (relu)
            v = dwv_relu(v);
        dwv_store(r->dst[u], v, r->m[u], r->n[u]);
    }
}

/* yf [OH][OW] = filter wf over xq (+ bias, relu): dw_fwd's sums, then
 * the fold nnc_conv2d_gen does after it */
static void dw_fwd_vec(const nnc_conv2d_geom *g, const dw_plan *pl, int64_t OH, int64_t OW, const float *xq,
                       const float *wf, int post, float bias, int relu, float *yf)
{
    const int64_t RS = g->sw * nnc_conv2d_dw_q(g), nc = (OW + DW_L - 1) / DW_L, runs = OH * nc;
    /* run i is chunk c = i % nc of row oh = i / nc, counted, not divided
     * (two divisions a run were a quarter of an 8x8 layer's time) */
    for (int64_t i0 = 0, oh = 0, c = 0; i0 < runs; i0 += DW_UNITS) {
        dw_runs r;
        for (int u = 0; u < DW_UNITS; u++) {
            r.src[u] = xq + oh * g->sh * RS + c * DW_L;
            r.dst[u] = yf + oh * OW + c * DW_L;
            r.n[u] = i0 + u < runs ? (OW - c * DW_L < DW_L ? OW - c * DW_L : DW_L) : 0;
            if (i0 + u + 1 < runs && ++c == nc) /* (past the last, slots repeat it, idle) */
                c = 0, oh++;
        }
        dw_runs_mask(&r);
        dw_runs_sum(&r, pl->off, wf, g->KH * g->KW, 0, post, bias, relu);
    }
}

/* The data gradient as sums over dy, by dw_plan's classes.  dyp: each
 * filter's dy plane with zero margins, so that the taps that reach no
 * output read zeros (nnc_conv.h's nnc_conv2d_dw_rows). */

/* dyp's inside = dyf [OH][OW] (its margins cleared once a call) */
static void dw_pad_dy(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const float *dyf, float *dyp)
{
    const int64_t D = nnc_conv2d_dw_pitch(g), PT = nnc_conv2d_dw_pt(g), PL = nnc_conv2d_dw_pl(g);
    for (int64_t oh = 0; oh < OH; oh++)
        dw_copy_f32(dyp + (oh + PT) * D + PL, dyf + oh * OW, OW);
}

/* dxq's image part = (first) or += filter wf's share, from dyp */
static void dw_data_vec(const nnc_conv2d_geom *g, const dw_plan *pl, const float *dyp, const float *wf, float *dxq,
                        int first)
{
    const int64_t S = g->sw, Wq = nnc_conv2d_dw_q(g), D = nnc_conv2d_dw_pitch(g), PT = nnc_conv2d_dw_pt(g),
                  PL = nnc_conv2d_dw_pl(g);
    for (int64_t rho = 0; rho < g->sh; rho++) /* rows r = rho mod sh */
        for (int64_t s = 0; s < S; s++) {
            /* the taps of phase s that reach such rows, in (ki, kj) order */
            const int64_t c0 = pl->cls[rho * S + s], T = pl->cls[rho * S + s + 1] - c0;
            float w[DW_TAPS];
            for (int64_t t = 0; t < T; t++)
                w[t] = wf[pl->dtap[c0 + t]];
            const int64_t *off = pl->doff + c0, k = rho * S + s, q0 = pl->q0[k], q1 = pl->q1[k],
                          nc = (q1 - q0 + DW_L - 1) / DW_L, runs = pl->rows[k] * nc;
            /* row r of xq, its dy row dr = (r - rho) / sh (+ PT) */
            for (int64_t i0 = 0, row = pl->r0[k], dr = (pl->r0[k] - rho) / g->sh + PT, q = q0; i0 < runs;
                 i0 += DW_UNITS) {
                dw_runs r;
                for (int u = 0; u < DW_UNITS; u++) {
                    r.src[u] = dyp + dr * D + PL + q;
                    r.dst[u] = dxq + (row * S + s) * Wq + q;
                    r.n[u] = i0 + u < runs ? (q1 - q < DW_L ? q1 - q : DW_L) : 0;
                    if (i0 + u + 1 < runs && (q += DW_L) >= q1)
                        q = q0, row += g->sh, dr++;
                }
                dw_runs_mask(&r);
                dw_runs_sum(&r, off, w, T, !first, 0, 0.0f, 0);
            }
        }
}

/* dwf [KH][KW] = (first) or += dw_filter's sums: each tap's DW_LANES
 * partial sums (output column ow into sum ow % DW_LANES) in registers,
 * DW_TG taps at a time, added in lane order at the end */
static void dw_filter_vec(const nnc_conv2d_geom *g, const dw_plan *pl, int64_t OH, int64_t OW, const float *xq,
                          const float *dyf, float *dwf, int first)
{
    enum { LV = DW_LANES / DW_L };
    const int64_t RS = g->sw * nnc_conv2d_dw_q(g), T = g->KH * g->KW;
    const int64_t *off = pl->off;
    for (int64_t t0 = 0; t0 < T; t0 += DW_TG) {
        /* (past the last tap, slots repeat tap t0, and are dropped) */
        const int64_t tg = T - t0 < DW_TG ? T - t0 : DW_TG;
        int64_t o[DW_TG];
        dwv acc[DW_TG][LV];
#pragma GCC unroll 16
        for (int k = 0; k < DW_TG; k++) {
            o[k] = off[t0 + (k < tg ? k : 0)];
#pragma GCC unroll 4
            for (int v = 0; v < LV; v++)
                acc[k][v] = dwv_zero();
        }
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow += DW_LANES) {
                const float *src = xq + oh * g->sh * RS + ow, *gr = dyf + oh * OW + ow;
                dwm m[LV];
                dwv d[LV];
#pragma GCC unroll 4
                for (int v = 0; v < LV; v++) {
                    m[v] = cols_first(OW - ow - v * DW_L);
                    d[v] = dwv_load(gr + v * DW_L, m[v]);
                }
#pragma GCC unroll 16
                for (int k = 0; k < DW_TG; k++)
#pragma GCC unroll 4
                    for (int v = 0; v < LV; v++)
                        acc[k][v] = dwv_madd(acc[k][v], d[v], dwv_load(src + o[k] + v * DW_L, m[v]));
            }
        for (int k = 0; k < tg; k++) {
            float part[DW_LANES];
            for (int v = 0; v < LV; v++)
                dwv_spill(part + v * DW_L, acc[k][v]);
            float sum = part[0];
            for (int l = 1; l < DW_LANES; l++)
                sum += part[l];
            float *d = dwf + t0 + k;
            *d = first ? sum : *d + sum;
        }
    }
}
#endif

#if R_F32 && defined(DW_VEC)
/* ---- grouped layers by conv.c's direct kernels, a group at a time ----
 *
 * A grouped layer whose groups have several channels (ResNeXt's 3x3
 * layers: 8 groups of 8 or 16) ran one GEMM of Fg rows per group and
 * example, 8 or 16 rows, at 45-70 GFLOP/s, while each group, taken alone,
 * is a convolution of conv.c's own geometry: Cg channels to Fg over the
 * same image, equal strides of 1 or 2 and one padding.  So each example's
 * group goes to the direct kernels as a layer of its own (x's channels of
 * the group are contiguous in the example, and so are y's, dy's and
 * dx's): 1.5-3.8x as fast (1 thread, Zen 5, batch 32, 8 groups, 3x3;
 * docs/decisions.md).  The kernel's gradient sums a group's examples in
 * order, each example's dW_k into a partial after the work.  Grids under
 * 64 positions keep the columns, as kernel.c decides for other layers
 * (nnc_conv2d_gen_group_work, whose work nnc_conv2d_gen_work includes).
 * The choice depends on the shapes only, so the bits do not depend on the
 * threads.
 *
 * The forward pass of an ungrouped layer whose padding differs between
 * rows and columns goes to them too, all its examples in one call
 * (nnc_conv2d_direct_hw_f32): Conv1D's, a 1 x W image padded along W
 * only.  Its columns and one GEMM per example ran cnn1d's layers of 64
 * and 128 channels at 205-232 GFLOP/s (1 thread, Zen 5, batch 64), the
 * direct kernel at 241-252: 0.4 ms of a 17 ms step (the 9-channel first
 * layer: 213 and 209).  At AVX-512 a Conv1D of 16 to 63 outputs takes it
 * too, where the columns had grouped examples (nnc_conv1d_short).  On
 * Intel's AVX-512 (nnc_isa_conv_rows) its stride-1 data gradient goes to
 * conv.c's direct one (nnc_conv2d_s1_bwd_data_hw_f32), whose aligned rows
 * ran cnn1d's layers at 99-126 GFLOP/s, the columns at 78-84 (1 thread,
 * Ice Lake, batch 64).  Its kernel gradient keeps the columns
 * (nnc_conv2d_gen_group_work). */

/* whether pass (NNC_CONV_*) of layer g goes by groups (nnc_conv.h sized
 * the work for it) */
static int grp_ok(const nnc_conv2d_geom *g, int pass, int64_t work_len)
{
    const int64_t need = nnc_conv2d_gen_group_work(g, pass);
#if !defined(__AVX512F__)
    /* the short Conv1D layers that only AVX-512 gives the direct kernel */
    if (g->groups == 1 && nnc_conv1d_short(g, 0))
        return 0;
    if (g->groups == 1 && pass == NNC_CONV_DATA) /* (conv.c's aligned rows are AVX-512's) */
        return 0;
#else
    if (g->groups == 1 && pass == NNC_CONV_DATA && !nnc_isa_conv_rows())
        return 0;
#endif
    return need >= 0 && need <= work_len;
}

/* pass NNC_CONV_FWD: y from x (and bias, relu); NNC_CONV_DATA: dx from dy
 * (in, plus add); NNC_CONV_FILTER: dW from dy (in) and x */
static void grp_run(int pass, int64_t N, const float *in, const float *w, const float *x, float *out, const float *add,
                    const float *bias, int relu, const nnc_conv2d_geom *g, float *work)
{
    const int64_t G = g->groups, Cg = g->C / G, Fg = g->F / G, KH = g->KH, KW = g->KW, S = g->sh, pad = g->ph,
                  HW = g->H * g->W, P = nnc_conv2d_geom_oh(g) * nnc_conv2d_geom_ow(g), Wg = Fg * Cg * KH * KW,
                  X = g->C * HW, Y = g->F * P, len = nnc_conv2d_gen_group_work(g, pass);
    if (G == 1 && pass == NNC_CONV_DATA) { /* a Conv1D's at stride 1: dy by the flipped kernel */
        NNC_ISA_FN(nnc_conv2d_s1_bwd_data_hw_f32)
        (N, in, w, out, add, g->C, g->H, g->W, g->F, KH, KW, g->ph, g->pw, work, len);
        return;
    }
    if (G == 1) { /* the forward pass of a layer of ph != pw */
        NNC_ISA_FN(nnc_conv2d_direct_hw_f32)
        (N, in, w, out, g->C, g->H, g->W, g->F, KH, KW, S, g->ph, g->pw, bias, relu, work, len);
        return;
    }
    if (pass == NNC_CONV_FILTER) {
        float *part = work + len - Wg; /* one example's dW_k */
        for (int64_t k = 0; k < G; k++)
            for (int64_t b = 0; b < N; b++) {
                float *o = b == 0 ? out + k * Wg : part;
                NNC_ISA_FN(nnc_conv2d_bwd_filter_f32)
                (1, in + b * Y + k * Fg * P, x + b * X + k * Cg * HW, o, Cg, g->H, g->W, Fg, KH, KW, S, pad, work,
                 len - Wg);
                if (b > 0)
                    for (int64_t i = 0; i < Wg; i++)
                        out[k * Wg + i] += part[i];
            }
        if (N <= 0)
            memset(out, 0, sizeof(float) * (size_t)(G * Wg));
        return;
    }
    /* conv.c's kernels for the stride: the same parameters at 1 and 2 */
    __typeof__(&NNC_ISA_FN(nnc_conv2d_s1_f32)) const fwd =
        S == 1 ? NNC_ISA_FN(nnc_conv2d_s1_f32) : NNC_ISA_FN(nnc_conv2d_s2_f32);
    __typeof__(&NNC_ISA_FN(nnc_conv2d_s1_bwd_data_f32)) const data =
        S == 1 ? NNC_ISA_FN(nnc_conv2d_s1_bwd_data_f32) : NNC_ISA_FN(nnc_conv2d_s2_bwd_data_f32);
    for (int64_t b = 0; b < N; b++)
        for (int64_t k = 0; k < G; k++) {
            const float *wk = w + k * Wg;
            if (pass == NNC_CONV_FWD)
                fwd(1, in + b * X + k * Cg * HW, wk, out + b * Y + k * Fg * P, Cg, g->H, g->W, Fg, KH, KW, pad,
                    bias ? bias + k * Fg : NULL, relu, work, len);
            else
                data(1, in + b * Y + k * Fg * P, wk, out + b * X + k * Cg * HW, add ? add + b * X + k * Cg * HW : NULL,
                     Cg, g->H, g->W, Fg, KH, KW, pad, work, len);
        }
}
#endif

void NNC_ISA_FN(NAME(nnc_conv2d_gen))(int64_t N, const R *x, const R *w, R *y, const nnc_conv2d_geom *g, const R *bias,
                                      int relu, R *work, int64_t work_len)
{
    nnc__conv_check_work(NAME_STR("nnc_conv2d_gen"), work_len, nnc_conv2d_gen_work(g), sizeof(R));
#if R_F32 && defined(DW_VEC)
    if (grp_ok(g, NNC_CONV_FWD, work_len)) {
        grp_run(NNC_CONV_FWD, N, x, w, NULL, y, NULL, bias, relu, g, work);
        return;
    }
#endif
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g), P = OH * OW, C = g->C, F = g->F,
                  G = g->groups, Cg = C / G, Fg = F / G, K = Cg * g->KH * g->KW, X = C * g->H * g->W;
#if R_F32 && defined(DW_VEC)
    const int vec = Cg == 1 && dw_vec_fits(g);
    dw_plan plan;
    if (vec)
        dw_plan_make(g, &plan);
#else
    const int vec = 0;
#endif
    if (Cg == 1)
        NAME(dw_clear)(g, work);
    for (int64_t b = 0; b < N; b++) {
        const R *img = x + b * X;
        R *yb = y + b * F * P;
        if (Cg == 1) /* depthwise */
            for (int64_t c = 0; c < C; c++) {
                NAME(dw_split)(g, img + c * g->H * g->W, work);
                for (int64_t f = c * Fg; f < (c + 1) * Fg; f++)
#if R_F32 && defined(DW_VEC)
                    if (vec) /* with the bias and relu */
                        dw_fwd_vec(g, &plan, OH, OW, work, w + f * K, bias || relu, bias ? bias[f] : 0.0f, relu,
                                   yb + f * P);
                    else
#endif
                        NAME(dw_fwd)(g, OH, OW, work, w + f * K, yb + f * P);
            }
        else {
            NAME(gen_im2col)(g, OH, OW, img, work);
            for (int64_t k = 0; k < G; k++)
                GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Fg, (int)P, (int)K, (R)1, w + k * Fg * K, (int)K,
                     work + k * K * P, (int)P, (R)0, yb + k * Fg * P, (int)P);
        }
        /* the bias and relu that plan.c folded in */
        if ((bias || relu) && !vec)
            for (int64_t f = 0; f < F; f++)
                for (int64_t p = 0; p < P; p++) {
                    const R v = yb[f * P + p] + (bias ? bias[f] : (R)0);
                    yb[f * P + p] = relu ? (v > (R)0 ? v : (R)0) : v;
                }
    }
}

void NNC_ISA_FN(NAME(nnc_conv2d_gen_bwd_data))(int64_t N, const R *dy, const R *w, R *dx, const R *add,
                                               const nnc_conv2d_geom *g, R *work, int64_t work_len)
{
    nnc__conv_check_work(NAME_STR("nnc_conv2d_gen_bwd_data"), work_len, nnc_conv2d_gen_work(g), sizeof(R));
#if R_F32 && defined(DW_VEC)
    if (grp_ok(g, NNC_CONV_DATA, work_len)) {
        grp_run(NNC_CONV_DATA, N, dy, w, NULL, dx, add, NULL, 0, g, work);
        return;
    }
#endif
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g), P = OH * OW, C = g->C, F = g->F,
                  G = g->groups, Cg = C / G, Fg = F / G, K = Cg * g->KH * g->KW, X = C * g->H * g->W;
#if R_F32 && defined(DW_VEC)
    float *dyp = NULL; /* (depthwise: after xq in the work) */
    dw_plan plan;
    if (Cg == 1 && dw_vec_fits(g)) {
        dyp = work + nnc_conv2d_dw_xq(g);
        memset(dyp, 0, sizeof(float) * (size_t)(nnc_conv2d_dw_rows(g) * nnc_conv2d_dw_pitch(g)));
        dw_plan_make(g, &plan);
    }
#endif
    for (int64_t b = 0; b < N; b++) {
        R *img = dx + b * X;
        const R *dyb = dy + b * F * P;
        if (Cg == 1) /* depthwise: into xq's layout, then back into the channel */
            for (int64_t c = 0; c < C; c++) {
#if R_F32 && defined(DW_VEC)
                if (dyp) { /* (the plan made above) */
                    for (int64_t f = c * Fg; f < (c + 1) * Fg; f++) {
                        dw_pad_dy(g, OH, OW, dyb + f * P, dyp);
                        dw_data_vec(g, &plan, dyp, w + f * K, work, f == c * Fg);
                    }
                    NAME(dw_unsplit)(g, work, img + c * g->H * g->W);
                    continue;
                }
#endif
                memset(work, 0, sizeof(R) * (size_t)nnc_conv2d_dw_xq(g));
                for (int64_t f = c * Fg; f < (c + 1) * Fg; f++)
                    NAME(dw_data)(g, OH, OW, dyb + f * P, w + f * K, work);
                NAME(dw_unsplit)(g, work, img + c * g->H * g->W);
            }
        else {
            /* each group's dcol = w_kᵀ dy_k, then col2im over every channel */
            memset(img, 0, sizeof(R) * (size_t)X);
            for (int64_t k = 0; k < G; k++)
                GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)K, (int)P, (int)Fg, (R)1, w + k * Fg * K, (int)K,
                     dyb + k * Fg * P, (int)P, (R)0, work + k * K * P, (int)P);
            NAME(gen_col2im)(g, OH, OW, work, img);
        }
        if (add) /* the other gradient of x that plan.c folded in */
            for (int64_t i = 0; i < X; i++)
                img[i] += add[b * X + i];
    }
}

void NNC_ISA_FN(NAME(nnc_conv2d_gen_bwd_filter))(int64_t N, const R *dy, const R *x, R *dw, const nnc_conv2d_geom *g,
                                                 R *work, int64_t work_len)
{
    nnc__conv_check_work(NAME_STR("nnc_conv2d_gen_bwd_filter"), work_len, nnc_conv2d_gen_work(g), sizeof(R));
#if R_F32 && defined(DW_VEC)
    if (grp_ok(g, NNC_CONV_FILTER, work_len)) {
        grp_run(NNC_CONV_FILTER, N, dy, NULL, x, dw, NULL, NULL, 0, g, work);
        return;
    }
#endif
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g), P = OH * OW, C = g->C, F = g->F,
                  G = g->groups, Cg = C / G, Fg = F / G, K = Cg * g->KH * g->KW, X = C * g->H * g->W;
    if (N <= 0) { /* no examples: a sum of nothing */
        memset(dw, 0, sizeof(R) * (size_t)(F * K));
        return;
    }
    if (Cg == 1)
        NAME(dw_clear)(g, work);
#if R_F32 && defined(DW_VEC)
    const int vec = Cg == 1 && dw_vec_fits(g);
    dw_plan plan;
    if (vec)
        dw_plan_make(g, &plan);
#endif
    for (int64_t b = 0; b < N; b++) {
        const R *img = x + b * X, *dyb = dy + b * F * P;
        if (Cg == 1) /* depthwise */
            for (int64_t c = 0; c < C; c++) {
                NAME(dw_split)(g, img + c * g->H * g->W, work);
                for (int64_t f = c * Fg; f < (c + 1) * Fg; f++)
#if R_F32 && defined(DW_VEC)
                    if (vec)
                        dw_filter_vec(g, &plan, OH, OW, work, dyb + f * P, dw + f * K, b == 0);
                    else
#endif
                        NAME(dw_filter)(g, OH, OW, work, dyb + f * P, dw + f * K, b == 0);
            }
        else {
            /* dW_k [Fg][K] (+)= dy_k colᵀ_k, the first example setting it */
            NAME(gen_im2col)(g, OH, OW, img, work);
            for (int64_t k = 0; k < G; k++)
                GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Fg, (int)K, (int)P, (R)1, dyb + k * Fg * P, (int)P,
                     work + k * K * P, (int)P, b ? (R)1 : (R)0, dw + k * Fg * K, (int)K);
        }
    }
}
