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

/* the columns of one example, rows of pitch OH OW; the in-bounds output
 * columns of each row are a range [lo, hi), as im2col's */
static void NAME(gen_im2col)(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const R *img, R *col)
{
    const int64_t H = g->H, W = g->W, P = OH * OW;
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t ki = 0; ki < g->KH; ki++)
            for (int64_t kj = 0; kj < g->KW; kj++) {
                R *crow = col + ((c * g->KH + ki) * g->KW + kj) * P;
                const int64_t off = kj * g->dw - g->pw; /* iw = ow sw + off */
                int64_t lo = off < 0 ? (-off + g->sw - 1) / g->sw : 0;
                int64_t hi = W - 1 - off >= 0 ? (W - 1 - off) / g->sw + 1 : 0;
                lo = lo > OW ? OW : lo;
                hi = hi > OW ? OW : hi < lo ? lo : hi;
                for (int64_t oh = 0; oh < OH; oh++) {
                    const int64_t ih = oh * g->sh - g->ph + ki * g->dh, base = (c * H + ih) * W + off;
                    R *row = crow + oh * OW;
                    if (ih < 0 || ih >= H) {
                        memset(row, 0, sizeof(R) * (size_t)OW);
                        continue;
                    }
                    for (int64_t ow = 0; ow < lo; ow++)
                        row[ow] = (R)0;
                    for (int64_t ow = lo; ow < hi; ow++)
                        row[ow] = img[base + ow * g->sw];
                    for (int64_t ow = hi; ow < OW; ow++)
                        row[ow] = (R)0;
                }
            }
}

/* img (cleared by the caller) += the columns, in gen_im2col's order */
static void NAME(gen_col2im)(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const R *col, R *img)
{
    const int64_t H = g->H, W = g->W, P = OH * OW;
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t ki = 0; ki < g->KH; ki++)
            for (int64_t kj = 0; kj < g->KW; kj++) {
                const R *crow = col + ((c * g->KH + ki) * g->KW + kj) * P;
                const int64_t off = kj * g->dw - g->pw;
                int64_t lo = off < 0 ? (-off + g->sw - 1) / g->sw : 0;
                int64_t hi = W - 1 - off >= 0 ? (W - 1 - off) / g->sw + 1 : 0;
                lo = lo > OW ? OW : lo;
                hi = hi > OW ? OW : hi < lo ? lo : hi;
                for (int64_t oh = 0; oh < OH; oh++) {
                    const int64_t ih = oh * g->sh - g->ph + ki * g->dh, base = (c * H + ih) * W + off;
                    if (ih < 0 || ih >= H)
                        continue;
                    for (int64_t ow = lo; ow < hi; ow++)
                        img[base + ow * g->sw] += crow[oh * OW + ow];
                }
            }
}

/* Depthwise layers (one input channel a group; F = C Fg, filter f reads
 * channel f / Fg) go a channel at a time through its padded copy xq, whose
 * rows are split into their sw column phases: padded column j sw + s of a
 * row at [s][j] (nnc_conv2d_gen_work).  Then a tap's products over a row
 * of outputs, at any stride and dilation, read one contiguous run of xq
 * (and the data gradient's adds write one), which the compiler
 * vectorizes.  The tap-by-tap loop over each output's window ran
 * MobileNet-style layers at ~1.2 GFLOP/s, scalar. */
static inline int64_t NAME(dw_q)(const nnc_conv2d_geom *g) { return (g->W + 2 * g->pw + g->sw - 1) / g->sw; }

/* Phase s of a padded row (its columns s, s + S, ...) holds image column
 * q S + s - pw at q in [*q0, *q1) */
static inline void NAME(dw_phase)(const nnc_conv2d_geom *g, int64_t s, int64_t *q0, int64_t *q1)
{
    const int64_t S = g->sw, Wq = NAME(dw_q)(g), e = g->W + g->pw - s;
    *q0 = g->pw > s ? (g->pw - s + S - 1) / S : 0;
    *q1 = e <= 0 ? *q0 : (e + S - 1) / S < Wq ? (e + S - 1) / S : Wq;
}

/* xq [H + 2 ph][sw][dw_q] = channel ic padded, its columns split by phase */
static void NAME(dw_split)(const nnc_conv2d_geom *g, const R *ic, R *xq)
{
    const int64_t S = g->sw, Wq = NAME(dw_q)(g);
    memset(xq, 0, sizeof(R) * (size_t)((g->H + 2 * g->ph) * S * Wq));
    for (int64_t s = 0; s < S; s++) {
        int64_t q0, q1;
        NAME(dw_phase)(g, s, &q0, &q1);
        for (int64_t ih = 0; ih < g->H; ih++) {
            R *restrict row = xq + ((ih + g->ph) * S + s) * Wq;
            const R *restrict src = ic + ih * g->W + s - g->pw;
            for (int64_t q = q0; q < q1; q++)
                row[q] = src[q * S];
        }
    }
}

/* ic [H][W] = the image part of xq (dw_split's inverse) */
static void NAME(dw_unsplit)(const nnc_conv2d_geom *g, const R *xq, R *ic)
{
    const int64_t S = g->sw, Wq = NAME(dw_q)(g);
    for (int64_t s = 0; s < S; s++) {
        int64_t q0, q1;
        NAME(dw_phase)(g, s, &q0, &q1);
        for (int64_t ih = 0; ih < g->H; ih++) {
            const R *restrict row = xq + ((ih + g->ph) * S + s) * Wq;
            R *restrict dst = ic + ih * g->W + s - g->pw;
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
    const int64_t RS = g->sw * NAME(dw_q)(g), Wq = NAME(dw_q)(g);
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
    const int64_t RS = g->sw * NAME(dw_q)(g), Wq = NAME(dw_q)(g);
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
 * dyf times xq: per tap 32 partial sums, output column ow into sum ow %
 * 32 (independent vectors at any width), added in lane order at the end:
 * the same bits at every vector width */
static void NAME(dw_filter)(const nnc_conv2d_geom *g, int64_t OH, int64_t OW, const R *xq, const R *dyf, R *dwf,
                            int first)
{
    const int64_t RS = g->sw * NAME(dw_q)(g), Wq = NAME(dw_q)(g);
    for (int64_t ki = 0; ki < g->KH; ki++)
        for (int64_t kj = 0, ph = 0, q = 0; kj < g->KW; kj++, NAME(dw_next)(g->dw, g->sw, &ph, &q)) {
            R part[32] = {0};
            for (int64_t oh = 0; oh < OH; oh++) {
                const R *restrict src = xq + (oh * g->sh + ki * g->dh) * RS + ph * Wq + q, *restrict gr = dyf + oh * OW;
                int64_t ow = 0;
                for (; ow + 32 <= OW; ow += 32)
                    for (int l = 0; l < 32; l++)
                        part[l] += gr[ow + l] * src[ow + l];
                for (int l = 0; ow + l < OW; l++)
                    part[l] += gr[ow + l] * src[ow + l];
            }
            R sum = part[0];
            for (int l = 1; l < 32; l++)
                sum += part[l];
            R *d = dwf + ki * g->KW + kj;
            *d = first ? sum : *d + sum;
        }
}

void NNC_ISA_FN(NAME(nnc_conv2d_gen))(int64_t N, const R *x, const R *w, R *y, const nnc_conv2d_geom *g, const R *bias,
                                      int relu, R *work, int64_t work_len)
{
    nnc__conv_check_work(NAME_STR("nnc_conv2d_gen"), work_len, nnc_conv2d_gen_work(g), sizeof(R));
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g), P = OH * OW, C = g->C, F = g->F,
                  G = g->groups, Cg = C / G, Fg = F / G, K = Cg * g->KH * g->KW, X = C * g->H * g->W;
    for (int64_t b = 0; b < N; b++) {
        const R *img = x + b * X;
        R *yb = y + b * F * P;
        if (Cg == 1) /* depthwise */
            for (int64_t c = 0; c < C; c++) {
                NAME(dw_split)(g, img + c * g->H * g->W, work);
                for (int64_t f = c * Fg; f < (c + 1) * Fg; f++)
                    NAME(dw_fwd)(g, OH, OW, work, w + f * K, yb + f * P);
            }
        else {
            NAME(gen_im2col)(g, OH, OW, img, work);
            for (int64_t k = 0; k < G; k++)
                GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Fg, (int)P, (int)K, (R)1, w + k * Fg * K, (int)K,
                     work + k * K * P, (int)P, (R)0, yb + k * Fg * P, (int)P);
        }
        /* the bias and relu that plan.c folded in */
        if (bias || relu)
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
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g), P = OH * OW, C = g->C, F = g->F,
                  G = g->groups, Cg = C / G, Fg = F / G, K = Cg * g->KH * g->KW, X = C * g->H * g->W;
    for (int64_t b = 0; b < N; b++) {
        R *img = dx + b * X;
        const R *dyb = dy + b * F * P;
        if (Cg == 1) /* depthwise: into xq's layout, then back into the channel */
            for (int64_t c = 0; c < C; c++) {
                memset(work, 0, sizeof(R) * (size_t)nnc_conv2d_gen_work(g));
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
    const int64_t OH = nnc_conv2d_geom_oh(g), OW = nnc_conv2d_geom_ow(g), P = OH * OW, C = g->C, F = g->F,
                  G = g->groups, Cg = C / G, Fg = F / G, K = Cg * g->KH * g->KW, X = C * g->H * g->W;
    if (N <= 0) { /* no examples: a sum of nothing */
        memset(dw, 0, sizeof(R) * (size_t)(F * K));
        return;
    }
    for (int64_t b = 0; b < N; b++) {
        const R *img = x + b * X, *dyb = dy + b * F * P;
        if (Cg == 1) /* depthwise */
            for (int64_t c = 0; c < C; c++) {
                NAME(dw_split)(g, img + c * g->H * g->W, work);
                for (int64_t f = c * Fg; f < (c + 1) * Fg; f++)
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
