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
 * build gets the same code (AVX-512 registers in the runtime's avx512
 * build of this file, two AVX or four SSE registers in its avx2 and
 * generic ones: nnc_isa.h).
 *
 * Numerics: each row's elements are summed in 16 float lanes (a lane
 * takes every 16th element: L/16 of them); each lane's row totals are
 * added in double per channel, and the row's tail (L % 16 elements) in
 * double; the channel's total is the double sum of its 17 accumulators.
 * The variance is two-pass (the mean first, then squared deviations from
 * it), as PyTorch, so there is no cancellation in E[x^2] - E[x]^2.
 *
 * Memory order: a block of channels is walked example by example, CB rows
 * of L contiguous floats at a time (CB L >= 1024 floats where C allows):
 * a channel at a time would read 256-byte rows 16 KB apart for an 8x8
 * layer of 64 channels, which the prefetcher does not follow (that loop
 * took 3x as long as batch norm's dx over the same inputs in memory
 * order).  A block's rows (N CB L floats, 128 KB for resnet_small) are
 * still in cache for the variance's second pass. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nnc_isa.h"

typedef float v16 __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
/* unaligned loads: rows start anywhere when L is not a multiple of 16 */
typedef float v16u __attribute__((vector_size(64), aligned(4), may_alias));

enum { CB = 64 }; /* channels per block, at most */

/* per channel of a block: 16 lanes and the tail, in double */
typedef struct {
    v8d lo, hi;
    double tail;
} acc;

static int64_t block(int64_t C, int64_t L)
{
    const int64_t cb = L >= 1024 ? 1 : 1024 / L;
    return cb > CB ? CB : cb < C ? cb : C;
}

/* (vectors go by pointer: as arguments or results their ABI differs
 * between builds with and without AVX-512, which gcc warns about) */
static inline void add_lanes(acc *a, const v16 *lp)
{
    const v16 l = *lp;
    const v8f lo = {l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]};
    const v8f hi = {l[8], l[9], l[10], l[11], l[12], l[13], l[14], l[15]};
    a->lo += __builtin_convertvector(lo, v8d);
    a->hi += __builtin_convertvector(hi, v8d);
}

static inline double total(const acc *a)
{
    double s = a->tail;
    for (int j = 0; j < 8; j++)
        s += a->lo[j] + a->hi[j];
    return s;
}

/* dy where mask > 0, else 0 (relu's gradient through its output: a
 * select, so an infinite or NaN dy under a zero mask gives 0) */
static inline void mask_by(v16 *d, const float *m)
{
    const v16 mv = *(const v16u *)m;
    *d = (v16)((v16i)*d & (mv > 0));
}

void NNC_ISA_FN(nnc_bn_stats_f32)(int64_t N, int64_t C, int64_t L, const float *x, float *st, int64_t c_begin,
                                  int64_t c_end)
{
    const int64_t cb = block(C, L), L16 = L / 16 * 16;
    const double M = (double)N * (double)L;
    acc a[CB];
    float mu[CB];
    for (int64_t c0 = c_begin; c0 < c_end; c0 += cb) {
        const int64_t cn = c_end - c0 < cb ? c_end - c0 : cb;
        memset(a, 0, sizeof a);
        for (int64_t b = 0; b < N; b++)
            for (int64_t cc = 0; cc < cn; cc++) {
                const float *row = x + (b * C + c0 + cc) * L;
                v16 l = {0};
                for (int64_t k = 0; k < L16; k += 16)
                    l += *(const v16u *)(row + k);
                for (int64_t k = L16; k < L; k++)
                    a[cc].tail += row[k];
                add_lanes(&a[cc], &l);
            }
        for (int64_t cc = 0; cc < cn; cc++)
            mu[cc] = (float)(total(&a[cc]) / M);
        memset(a, 0, sizeof a);
        for (int64_t b = 0; b < N; b++)
            for (int64_t cc = 0; cc < cn; cc++) {
                const float *row = x + (b * C + c0 + cc) * L;
                const float m = mu[cc];
                v16 l = {0};
                for (int64_t k = 0; k < L16; k += 16) {
                    const v16 d = *(const v16u *)(row + k) - m;
                    l += d * d;
                }
                for (int64_t k = L16; k < L; k++)
                    a[cc].tail += (row[k] - m) * (row[k] - m);
                add_lanes(&a[cc], &l);
            }
        for (int64_t cc = 0; cc < cn; cc++) {
            st[c0 + cc] = mu[cc];
            st[C + c0 + cc] = (float)(total(&a[cc]) / M);
        }
    }
}

void NNC_ISA_FN(nnc_bn_grads_f32)(int64_t N, int64_t C, int64_t L, const float *dy, const float *x, const float *mask,
                                  const float *st, double eps, float *g, int64_t c_begin, int64_t c_end)
{
    const int64_t cb = block(C, L), L16 = L / 16 * 16;
    acc sx[CB], sd[CB];
    for (int64_t c0 = c_begin; c0 < c_end; c0 += cb) {
        const int64_t cn = c_end - c0 < cb ? c_end - c0 : cb;
        memset(sx, 0, sizeof sx);
        memset(sd, 0, sizeof sd);
        for (int64_t b = 0; b < N; b++)
            for (int64_t cc = 0; cc < cn; cc++) {
                const int64_t o = (b * C + c0 + cc) * L;
                const float *xr = x + o, *dr = dy + o, *mr = mask ? mask + o : NULL;
                const float m = st[c0 + cc];
                v16 lx = {0}, ld = {0};
                for (int64_t k = 0; k < L16; k += 16) {
                    v16 d = *(const v16u *)(dr + k);
                    if (mr)
                        mask_by(&d, mr + k);
                    lx += d * (*(const v16u *)(xr + k) - m);
                    ld += d;
                }
                for (int64_t k = L16; k < L; k++) {
                    const float d = mr && !(mr[k] > 0.0f) ? 0.0f : dr[k];
                    sx[cc].tail += d * (xr[k] - m);
                    sd[cc].tail += d;
                }
                add_lanes(&sx[cc], &lx);
                add_lanes(&sd[cc], &ld);
            }
        for (int64_t cc = 0; cc < cn; cc++) {
            g[c0 + cc] = (float)(total(&sx[cc]) / sqrt((double)st[C + c0 + cc] + eps));
            g[C + c0 + cc] = (float)total(&sd[cc]);
        }
    }
}
