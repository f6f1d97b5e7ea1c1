/* bn.c — batch norm's channel sums in float: the batch statistics of the
 * training forward pass and the two sums of its backward pass, over x
 * [N][C][L] (channel c is N rows of L contiguous floats, C*L apart).
 *
 * Generated code used to write these as loops of 16 float lanes.  What gcc
 * 12 made of them depended on the shape and the surroundings: at -O3 it
 * vectorized some across the lane blocks instead of along the lanes (a
 * 64-float row ran scalar, a sum without a mask ran 2-3x slower than the
 * same sum with one), and with a `?:` in the sum it produced wrong sums
 * (docs/decisions.md).  Here the lanes are written as vectors, so every
 * build gets the same code: one vector of 16 floats (an AVX-512 register
 * in the runtime's avx512 build of this file, four SSE registers in its
 * generic one: nnc_isa.h), and in the avx2 build two vectors of 8 floats,
 * lanes 0-7 and 8-15, each an AVX register.  (The avx2 build of the
 * 16-float code kept its accumulators on the stack, moved through general
 * registers every step, and ran 1.3-3.5x slower than the generic build:
 * the statistics of 32 examples of 16 channels of 1024 floats 0.82 ms
 * against 0.24, the gradients' sums 0.44 against 0.35.)
 *
 * Numerics: each row's elements are summed in 16 float lanes (a lane
 * takes every 16th element: L/16 of them); each lane's row totals are
 * added in double per channel, and the row's tail (L % 16 elements) in
 * double; the channel's total is the double sum of its 17 accumulators.
 * The threads split the examples into items fixed by the shape
 * (threads.c), and add the items' double totals in item order.
 * The avx2 build's two 8-float vectors are the same 16 lanes, each summed
 * in the same order (and no sum contracts to an FMA: this file is
 * compiled without -ffp-contract=fast), so every build gives the same
 * bits.
 * The variance is two-pass, as PyTorch, so there is no cancellation in
 * E[x^2] - E[x]^2: each item sums its rows, then their squared
 * deviations from the item's own mean, and threads.c moves those to the
 * batch's mean exactly (in double, by terms of the order of the float
 * rounding of the item's mean).
 *
 * Memory order: a block of channels is walked example by example, CB rows
 * of L contiguous floats at a time (CB L >= 1024 floats where C allows):
 * a channel at a time would read 256-byte rows 16 KB apart for an 8x8
 * layer of 64 channels, which the prefetcher does not follow (that loop
 * took 3x as long as batch norm's dx over the same inputs in memory
 * order).  A block's rows (N CB L floats, 128 KB for resnet_small) are
 * still in cache for the variance's second pass. */
#include <stdint.h>
#include <string.h>

#include "nnc_isa.h"

/* the avx2 build (two 8-float vectors of lanes) against the others (one
 * of 16) */
#if defined(__AVX2__) && !defined(__AVX512F__)
#define BN_AVX2 1
#include <immintrin.h>
#else
#define BN_AVX2 0
#endif

typedef float v16 __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef double v8d __attribute__((vector_size(64)));
typedef double v4d __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
/* unaligned loads: rows start anywhere when L is not a multiple of 16 */
typedef float v16u __attribute__((vector_size(64), aligned(4), may_alias));
typedef float v8u __attribute__((vector_size(32), aligned(4), may_alias));

enum { CB = 64 }; /* channels per block, at most */

/* per channel of a block: 16 lanes and the tail, in double; at AVX2 in
 * vectors of 4 (lanes 0-3, 4-7, 8-11, 12-15), as gcc 12 moved 8-double
 * vectors there through the stack and general registers */
#if BN_AVX2
typedef struct {
    v4d q[4];
    double tail;
} acc;
static inline double lane(const acc *a, int j) { return a->q[j / 4][j % 4]; }
#else
typedef struct {
    v8d lo, hi;
    double tail;
} acc;
static inline double lane(const acc *a, int j) { return j < 8 ? a->lo[j] : a->hi[j - 8]; }
#endif

static int64_t block(int64_t C, int64_t L)
{
    const int64_t cb = L >= 1024 ? 1 : 1024 / L;
    return cb > CB ? CB : cb < C ? cb : C;
}

/* lanes 0-7 and 8-15 of a row's sum added to a's
 * (vectors go by pointer: as arguments or results their ABI differs
 * between builds with and without AVX-512, which gcc warns about) */
static inline void add_lanes8(acc *a, const v8f *lo, const v8f *hi)
{
#if BN_AVX2
    a->q[0] += (v4d)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)*lo));
    a->q[1] += (v4d)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)*lo, 1));
    a->q[2] += (v4d)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)*hi));
    a->q[3] += (v4d)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)*hi, 1));
#else
    a->lo += __builtin_convertvector(*lo, v8d);
    a->hi += __builtin_convertvector(*hi, v8d);
#endif
}

static inline double total(const acc *a)
{
    double s = a->tail;
    for (int j = 0; j < 8; j++)
        s += lane(a, j) + lane(a, j + 8);
    return s;
}

/* The three sums of a row's first L16 elements (L16 a multiple of 16)
 * into the 16 lanes of their channels' accumulators: the row's sum, its
 * squared deviations from m, and dy (masked by mask where it is not NULL)
 * times the deviations of x from m, with dy's own sum.  d where mask > 0,
 * else 0: relu's gradient through its output, as a select, so that an
 * infinite or NaN dy under a zero mask gives 0. */
#if BN_AVX2
/* AVX2: lanes 0-7 and 8-15 in two registers */
static inline v8f ld8(const float *p) { return *(const v8u *)p; }
static inline v8f masked8(const float *d, const float *m) { return (v8f)((v8i)ld8(d) & (ld8(m) > 0)); }

static inline void row_sum(acc *a, const float *row, int64_t L16)
{
    v8f lo = {0}, hi = {0};
    for (int64_t k = 0; k < L16; k += 16) {
        lo += ld8(row + k);
        hi += ld8(row + k + 8);
    }
    add_lanes8(a, &lo, &hi);
}

static inline void row_sq(acc *a, const float *row, int64_t L16, float m)
{
    v8f lo = {0}, hi = {0};
    for (int64_t k = 0; k < L16; k += 16) {
        const v8f d0 = ld8(row + k) - m, d1 = ld8(row + k + 8) - m;
        lo += d0 * d0;
        hi += d1 * d1;
    }
    add_lanes8(a, &lo, &hi);
}

static inline void row_grads(acc *sx, acc *sd, const float *xr, const float *dr, const float *mr, int64_t L16, float m)
{
    v8f xlo = {0}, xhi = {0}, dlo = {0}, dhi = {0};
    for (int64_t k = 0; k < L16; k += 16) {
        const v8f d0 = mr ? masked8(dr + k, mr + k) : ld8(dr + k);
        const v8f d1 = mr ? masked8(dr + k + 8, mr + k + 8) : ld8(dr + k + 8);
        xlo += d0 * (ld8(xr + k) - m);
        xhi += d1 * (ld8(xr + k + 8) - m);
        dlo += d0;
        dhi += d1;
    }
    add_lanes8(sx, &xlo, &xhi);
    add_lanes8(sd, &dlo, &dhi);
}
#else
/* one 16-float vector */
#define LD16(p) (*(const v16u *)(p))
static inline void add_lanes(acc *a, const v16 *lp)
{
    const v16 l = *lp;
    const v8f lo = {l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]};
    const v8f hi = {l[8], l[9], l[10], l[11], l[12], l[13], l[14], l[15]};
    add_lanes8(a, &lo, &hi);
}

static inline void row_sum(acc *a, const float *row, int64_t L16)
{
    v16 l = {0};
    for (int64_t k = 0; k < L16; k += 16)
        l += LD16(row + k);
    add_lanes(a, &l);
}

static inline void row_sq(acc *a, const float *row, int64_t L16, float m)
{
    v16 l = {0};
    for (int64_t k = 0; k < L16; k += 16) {
        const v16 d = LD16(row + k) - m;
        l += d * d;
    }
    add_lanes(a, &l);
}

static inline void row_grads(acc *sx, acc *sd, const float *xr, const float *dr, const float *mr, int64_t L16, float m)
{
    v16 lx = {0}, ld = {0};
    for (int64_t k = 0; k < L16; k += 16) {
        v16 d = LD16(dr + k);
        if (mr)
            d = (v16)((v16i)d & (LD16(mr + k) > 0));
        lx += d * (LD16(xr + k) - m);
        ld += d;
    }
    add_lanes(sx, &lx);
    add_lanes(sd, &ld);
}
#endif

/* d where m > 0, else +0 (for a d of inf or NaN too), as bits */
static inline float masked(float d, float m)
{
    uint32_t u;
    memcpy(&u, &d, sizeof u);
    u &= -(uint32_t)(m > 0.0f);
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The sums of channels [c0, c0 + cn) over x[N][C][L] into a[0..cn): of
 * x, or (mu not NULL, mu[cc] the channel's mean) of (x - mu)^2.  Both
 * passes of the statistics, in one order whatever calls them. */
static void channel_sums(acc *a, const float *x, int64_t N, int64_t C, int64_t L, int64_t c0, int64_t cn,
                         const float *mu)
{
    const int64_t L16 = L / 16 * 16;
    memset(a, 0, sizeof(acc) * (size_t)cn);
    if (L == 1) {
        /* x [N, C] (BatchNorm over features): each element is its row's
         * tail, so a channel's sum is its N elements added in double in
         * example order, as below; here the channels of a block sit side
         * by side in one row, and the compiler adds them as vectors (the
         * row-wise loop below summed them one scalar chain at a time:
         * 2.3 ns an element) */
        double t[CB] = {0};
        for (int64_t b = 0; b < N; b++) {
            const float *row = x + b * C + c0;
            if (!mu)
                for (int64_t cc = 0; cc < cn; cc++)
                    t[cc] += row[cc];
            else
                for (int64_t cc = 0; cc < cn; cc++) {
                    const float d = row[cc] - mu[cc];
                    t[cc] += d * d;
                }
        }
        for (int64_t cc = 0; cc < cn; cc++)
            a[cc].tail = t[cc];
        return;
    }
    for (int64_t b = 0; b < N; b++)
        for (int64_t cc = 0; cc < cn; cc++) {
            const float *row = x + (b * C + c0 + cc) * L;
            if (!mu) {
                for (int64_t k = L16; k < L; k++)
                    a[cc].tail += row[k];
                row_sum(&a[cc], row, L16);
            } else {
                const float m = mu[cc];
                for (int64_t k = L16; k < L; k++)
                    a[cc].tail += (row[k] - m) * (row[k] - m);
                row_sq(&a[cc], row, L16, m);
            }
        }
}

/* part[c - c_begin] = the sum over examples n < N, in order from 0, of
 * x[n][c]'s row of L floats for c_begin <= c < c_end: each row in 16
 * float lanes, its tail and lanes added in double (the arithmetic of the
 * generated reductions, emit_lanes_store).  One item of
 * nnc_channel_sum_f32 (threads.c). */
void NNC_ISA_FN(nnc_channel_sum_f32)(int64_t N, int64_t C, int64_t L, const float *x, double *part, int64_t c_begin,
                                     int64_t c_end)
{
    for (int64_t c = c_begin; c < c_end; c++)
        part[c - c_begin] = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = c_begin; c < c_end; c++) {
            const float *row = x + (n * C + c) * L;
            float l[16] = {0};
            int64_t k0 = 0;
            for (; k0 + 16 <= L; k0 += 16)
                for (int64_t k = k0; k < k0 + 16; k++)
                    l[k - k0] += row[k];
            double s = 0;
            for (int64_t k = k0; k < L; k++)
                s += row[k];
            for (int j = 0; j < 16; j++)
                s += l[j];
            part[c - c_begin] += s;
        }
}

/* One item of nnc_bn_stats_f32 and nnc_bn_moment_f32 (threads.c: items
 * are ranges of examples; x is the item's first example, N its count),
 * for channels c_begin <= c < c_end, k = c - c_begin: part[3k] = the sum
 * of the channel's rows, part[3k + 2] = m = (float)(that sum / (N L)),
 * the item's own mean, and part[3k + 1] = the sum of (x - m)^2.  Both
 * passes over a block of channels run while its rows are in cache; the
 * caller turns the items' sums into squared deviations from any centre
 * (threads.c, bn_sums). */
void NNC_ISA_FN(nnc_bn_stats_f32)(int64_t N, int64_t C, int64_t L, const float *x, double *part, int64_t c_begin,
                                  int64_t c_end)
{
    const int64_t cb = block(C, L);
    const double n = (double)N * (double)L;
    acc a[CB];
    float mu[CB];
    for (int64_t c0 = c_begin; c0 < c_end; c0 += cb) {
        const int64_t cn = c_end - c0 < cb ? c_end - c0 : cb;
        double *pp = part + 3 * (c0 - c_begin);
        channel_sums(a, x, N, C, L, c0, cn, NULL);
        for (int64_t cc = 0; cc < cn; cc++) {
            pp[3 * cc] = total(&a[cc]);
            mu[cc] = n > 0 ? (float)(pp[3 * cc] / n) : 0.0f;
            pp[3 * cc + 2] = mu[cc];
        }
        channel_sums(a, x, N, C, L, c0, cn, mu);
        for (int64_t cc = 0; cc < cn; cc++)
            pp[3 * cc + 1] = total(&a[cc]);
    }
}

/* One item of nnc_bn_grads_f32 (threads.c: a range of examples, dy, x
 * and mask at its first), channels c_begin <= c < c_end, k = c - c_begin:
 * part[2k] = the sum of d (x - st[c]), part[2k + 1] = the sum of d. */
void NNC_ISA_FN(nnc_bn_grads_f32)(int64_t N, int64_t C, int64_t L, const float *dy, const float *x, const float *mask,
                                  const float *st, double *part, int64_t c_begin, int64_t c_end)
{
    const int64_t cb = block(C, L), L16 = L / 16 * 16;
    acc sx[CB], sd[CB];
    for (int64_t c0 = c_begin; c0 < c_end; c0 += cb) {
        const int64_t cn = c_end - c0 < cb ? c_end - c0 : cb;
        memset(sx, 0, sizeof sx);
        memset(sd, 0, sizeof sd);
        if (L == 1) { /* x [N, C]: the channels as vectors (channel_sums) */
            double tx[CB] = {0}, td[CB] = {0};
            for (int64_t b = 0; b < N; b++) {
                const float *xr = x + b * C + c0, *dr = dy + b * C + c0, *mr = mask ? mask + b * C + c0 : NULL;
                /* two loops, and the mask a bitwise and, so that the
                 * compiler vectorizes both (a `?:` on the mask stayed a
                 * branch: 12x slower on a random mask) */
                if (mask)
                    for (int64_t cc = 0; cc < cn; cc++) {
                        const float d = masked(dr[cc], mr[cc]);
                        tx[cc] += d * (xr[cc] - st[c0 + cc]);
                        td[cc] += d;
                    }
                else
                    for (int64_t cc = 0; cc < cn; cc++) {
                        tx[cc] += dr[cc] * (xr[cc] - st[c0 + cc]);
                        td[cc] += dr[cc];
                    }
            }
            for (int64_t cc = 0; cc < cn; cc++) {
                sx[cc].tail = tx[cc];
                sd[cc].tail = td[cc];
            }
        } else
            for (int64_t b = 0; b < N; b++)
                for (int64_t cc = 0; cc < cn; cc++) {
                    const int64_t o = (b * C + c0 + cc) * L;
                    const float *xr = x + o, *dr = dy + o, *mr = mask ? mask + o : NULL;
                    const float m = st[c0 + cc];
                    for (int64_t k = L16; k < L; k++) {
                        const float d = mr && !(mr[k] > 0.0f) ? 0.0f : dr[k];
                        sx[cc].tail += d * (xr[k] - m);
                        sd[cc].tail += d;
                    }
                    row_grads(&sx[cc], &sd[cc], xr, dr, mr, L16, m);
                }
        for (int64_t cc = 0; cc < cn; cc++) {
            part[2 * (c0 - c_begin + cc)] = total(&sx[cc]);
            part[2 * (c0 - c_begin + cc) + 1] = total(&sd[cc]);
        }
    }
}
