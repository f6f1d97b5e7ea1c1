/* softmax.c — softmax over rows and its gradient, in float.
 *
 * y[r][k] = exp(alpha x[r][k] - m) / sum over j of exp(alpha x[r][j] - m),
 * m the row's maximum, for contiguous rows of L floats: attention's
 * scores (a causal softmax reads row i of each [T, T] matrix as its first
 * i + 1 entries and writes zeros after them), and any softmax over a last
 * axis.  Generated loops did this before.  Attention's rows are short (32
 * to 256 floats, a causal one 1 to T), and gcc's vector loops of unknown
 * trip count spent most of such a row in their entry, their scalar tail
 * and a 16-step chain of the lanes' totals: gpt_h6's forward softmax took
 * 3.7 ms of its 63 ms step, four times its gradient, with exp itself 20%
 * of it.  Here a row is whole blocks of 16 floats and one part block
 * under a mask, and the lanes' totals add as a tree.
 *
 * Numerics, the same bits in every build: a row's maximum and sum are 16
 * lanes (lane j takes the row's elements j, j + 16, ...), each in row
 * order, then the lanes by a tree (lane j with lane j + 8, then + 4, + 2,
 * + 1).  Lanes past the row's end take -inf for the maximum and 0 for the
 * sum, which change neither.  exp is nnc_math.h's nnc_exp_float with its
 * nnc_fmaf as a multiply, then an add, in every build (this file is
 * compiled without -ffp-contract=fast, and nothing contracts), so
 * the avx512 build (one vector of 16 floats), the avx2 build (two of 8)
 * and the generic one (four of 4) give the same bits, as the generated
 * loops did under every NNC_ISA.  The threads take whole rows: any
 * thread count gives the same bits. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nnc_isa.h"
#include "nnc_vec.h"

#define SM_VL NNC_VL
typedef nnc_vf vf;
typedef nnc_vi vi;
typedef nnc_vfu vfu;
enum { VL = SM_VL, NV = 16 / SM_VL };

static inline vf splat(float x) { return (vf){0} + x; }

/* lane j < n of a vector: all ones */
static inline vi below(int64_t n)
{
    vi iota;
    for (int j = 0; j < VL; j++)
        iota[j] = j;
    return iota < (vi){0} + (int32_t)(n < 0 ? 0 : n > VL ? VL : n);
}

/* nnc_math.h's nnc_exp_float, a vector at a time: the same operations in
 * the same order (nnc_fmaf as a multiply, then an add) */
static inline vf vexp(vf x)
{
    const vf xc = nnc_vsel(x >= -87.0f, nnc_vsel(x <= 88.0f, x, splat(88.0f)), splat(-87.0f));
    const vf t = xc * 1.44269504088896341f + 12582912.0f, fn = t - 12582912.0f;
    const vf r = xc - fn * 0.693359375f + fn * 2.12194440e-4f, r2 = r * r;
    vf p = 1.9875691500e-4f * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r2 + r + 1.0f;
    const vi e = (__builtin_convertvector(fn, vi) + 127) << 23;
    return nnc_vsel(x >= -87.0f, p * (vf)e, nnc_vsel(x < -87.0f, (vf){0}, x));
}

/* lane j + h of v in lane j (the lanes from VL - h on: any) */
static inline vf down(vf v, int h)
{
#if SM_VL == 16
    switch (h) {
    case 8: return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
    case 4: return __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    case 2: return __builtin_shufflevector(v, v, 2, 3, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    default: return __builtin_shufflevector(v, v, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    }
#elif SM_VL == 8
    switch (h) {
    case 4: return __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7);
    case 2: return __builtin_shufflevector(v, v, 2, 3, 2, 3, 4, 5, 6, 7);
    default: return __builtin_shufflevector(v, v, 1, 1, 2, 3, 4, 5, 6, 7);
    }
#else
    return h == 2 ? __builtin_shufflevector(v, v, 2, 3, 2, 3) : __builtin_shufflevector(v, v, 1, 1, 2, 3);
#endif
}

/* The 16 lanes' total by the tree, lane j with lane j + h for h = 8, 4, 2,
 * 1: the NV vectors first (lanes j and j + 8 are vectors v and v + NV / 2),
 * then within the vector, in registers (through memory, each store of a
 * vector and loads of its floats cost more than a block of exp).  `max`:
 * b > a ? b : a, else a + b. */
static inline float lanes_total(vf v[NV], int max)
{
    for (int c = NV / 2; c >= 1; c /= 2)
        for (int j = 0; j < c; j++)
            v[j] = max ? nnc_vsel(v[j + c] > v[j], v[j + c], v[j]) : v[j] + v[j + c];
    vf a = v[0];
    for (int h = VL / 2; h >= 1; h /= 2) {
        const vf b = down(a, h);
        a = max ? nnc_vsel(b > a, b, a) : a + b;
    }
    return a[0];
}

/* row r's length: the first (r0 + r) % L + 1 entries where causal */
static inline int64_t row_len(int64_t r, int64_t L, int64_t r0, int causal) { return causal ? (r0 + r) % L + 1 : L; }

/* A row's maximum (of alpha x over its first len entries): whole blocks
 * of 16, then the part block under a mask */
static inline float row_max(const float *xr, int64_t len, float alpha)
{
    const vf ninf = splat(-INFINITY);
    vf m[NV];
    for (int v = 0; v < NV; v++)
        m[v] = ninf;
    int64_t k = 0;
    for (; k + 16 <= len; k += 16)
        for (int v = 0; v < NV; v++) {
            const vf a = alpha * *(const vfu *)(xr + k + v * VL);
            m[v] = nnc_vsel(a > m[v], a, m[v]);
        }
    if (k < len)
        for (int v = 0; v < NV; v++) {
            const int64_t n = len - k - v * VL;
            const vf a = nnc_vsel(below(n), alpha * nnc_vload_n(xr + k + v * VL, n), ninf);
            m[v] = nnc_vsel(a > m[v], a, m[v]);
        }
    return lanes_total(m, 1);
}

/* exp(alpha x - mx) into yr, and their sum */
static inline float row_exp(const float *xr, float *yr, int64_t len, float alpha, float mx)
{
    vf s[NV];
    for (int v = 0; v < NV; v++)
        s[v] = (vf){0};
    int64_t k = 0;
    for (; k + 16 <= len; k += 16)
        for (int v = 0; v < NV; v++) {
            const vf e = vexp(alpha * *(const vfu *)(xr + k + v * VL) - mx);
            *(vfu *)(yr + k + v * VL) = e;
            s[v] += e;
        }
    if (k < len)
        for (int v = 0; v < NV; v++) {
            const int64_t n = len - k - v * VL;
            const vf e = nnc_vsel(below(n), vexp(alpha * nnc_vload_n(xr + k + v * VL, n) - mx), (vf){0});
            nnc_vstore_n(yr + k + v * VL, e, n);
            s[v] += e;
        }
    return lanes_total(s, 0);
}

/* Rows in groups of G, each pass over the group's rows before the next
 * pass: a row's passes depend on each other (maximum, then exp, then the
 * sum's reciprocal), and exp's polynomial is a chain of 12 operations;
 * the rows of a group are independent.  L = 96, causal, AVX-512, rows in
 * L2, ns a row in one run: the generated loops 98, this file a row at a
 * time 60, by groups of 4 57.5, with whole blocks outside the mask 53-55
 * (the backward pass: 23 -> 15). */
enum { G = 4 };

void NNC_ISA_FN(nnc_softmax_rows_f32)(int64_t rows, int64_t L, int64_t r0, int causal, float alpha, const float *x,
                                      float *y)
{
    for (int64_t g0 = 0; g0 < rows; g0 += G) {
        const int gn = (int)(rows - g0 < G ? rows - g0 : G);
        int64_t len[G];
        float mx[G], inv[G];
        for (int i = 0; i < gn; i++) {
            len[i] = row_len(g0 + i, L, r0, causal);
            mx[i] = row_max(x + (g0 + i) * L, len[i], alpha);
        }
        for (int i = 0; i < gn; i++)
            inv[i] = 1.0f / row_exp(x + (g0 + i) * L, y + (g0 + i) * L, len[i], alpha, mx[i]);
        for (int i = 0; i < gn; i++) {
            float *yr = y + (g0 + i) * L;
            for (int64_t k = 0; k < len[i]; k += VL)
                nnc_vstore_n(yr + k, nnc_vload_n(yr + k, len[i] - k) * inv[i], len[i] - k);
            for (int64_t k = len[i]; k < L; k++)
                yr[k] = 0.0f;
        }
    }
}

void NNC_ISA_FN(nnc_softmax_rows_bwd_f32)(int64_t rows, int64_t L, int64_t r0, int causal, float alpha, const float *dy,
                                          const float *p, float *dx)
{
    for (int64_t r = 0; r < rows; r++) {
        const int64_t len = row_len(r, L, r0, causal);
        const float *dr = dy + r * L, *pr = p + r * L;
        float *xr = dx + r * L;
        vf s[NV];
        for (int v = 0; v < NV; v++)
            s[v] = (vf){0};
        for (int64_t k = 0; k < len; k += 16)
            for (int v = 0; v < NV; v++) {
                const int64_t n = len - k - v * VL;
                s[v] += nnc_vload_n(dr + k + v * VL, n) * nnc_vload_n(pr + k + v * VL, n);
            }
        const float dot = lanes_total(s, 0);
        for (int64_t k = 0; k < len; k += VL) {
            const int64_t n = len - k;
            nnc_vstore_n(xr + k, alpha * nnc_vload_n(pr + k, n) * (nnc_vload_n(dr + k, n) - dot), n);
        }
        for (int64_t k = len; k < L; k++)
            xr[k] = 0.0f;
    }
}
