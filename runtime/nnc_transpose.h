/* nnc_transpose.h — dst[p][f] = src[f][p] by vector blocks, for the kernel
 * sources of one instruction set's build (conv.c's kernel gradient,
 * gemm.c's packing of a transposed B): 16x16 blocks by permutes at
 * AVX-512, 8x8 by shuffles at AVX2, one value at a time elsewhere. */
#ifndef NNC_TRANSPOSE_H
#define NNC_TRANSPOSE_H

#include <stdint.h>
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#define NNC_TRANSPOSE_AVX2 1
#else
#define NNC_TRANSPOSE_AVX2 0
#endif

#if defined(__AVX512F__)
/* dst[p][f] = src[f][p], p and f < 16: the butterfly transposition, which
 * swaps the off-diagonal b x b blocks of every 2b x 2b block for b = 8, 4,
 * 2, 1; one two-source permute per row and step, 64 in all for 256 values
 * that the scalar loop stored one at a time (a cache line each), a fifth
 * of a 16-channel layer's kernel gradient. */
static const int32_t bfly[4][2][16] = {
#define LO(b, j) ((j) & (b) ? 16 + (j) - (b) : (j))
#define HI(b, j) ((j) & (b) ? 16 + (j) : (j) + (b))
#define ROW(M, b) \
    { \
        M(b, 0), M(b, 1), M(b, 2), M(b, 3), M(b, 4), M(b, 5), M(b, 6), M(b, 7), M(b, 8), M(b, 9), M(b, 10), M(b, 11), \
            M(b, 12), M(b, 13), M(b, 14), M(b, 15) \
    }
    {ROW(LO, 8), ROW(HI, 8)},
    {ROW(LO, 4), ROW(HI, 4)},
    {ROW(LO, 2), ROW(HI, 2)},
    {ROW(LO, 1), ROW(HI, 1)},
#undef ROW
#undef HI
#undef LO
};
static inline void transpose16(float *dst, int64_t ds, const float *src, int64_t ss)
{
    __m512 r[16];
    _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * ss);
    _Pragma("GCC unroll 4") for (int s = 0; s < 4; s++)
    {
        const int b = 8 >> s;
        const __m512i lo = _mm512_loadu_si512(bfly[s][0]), hi = _mm512_loadu_si512(bfly[s][1]);
        _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) if (!(i & b))
        {
            const __m512 u = r[i], v = r[i + b];
            r[i] = _mm512_permutex2var_ps(u, lo, v);
            r[i + b] = _mm512_permutex2var_ps(u, hi, v);
        }
    }
    _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ds, r[i]);
}
#elif NNC_TRANSPOSE_AVX2
/* the same for 8x8 at AVX2: unpack pairs, then pairs of pairs, then the
 * 128-bit halves (24 shuffles for 64 values) */
static inline void transpose8(float *dst, int64_t ds, const float *src, int64_t ss)
{
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(src + i * ss);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4)
        for (int j = 0; j < 2; j++) {
            r[i + j] = _mm256_shuffle_ps(t[i + j], t[i + j + 2], 0x44);
            r[i + j + 2] = _mm256_shuffle_ps(t[i + j], t[i + j + 2], 0xEE);
        }
    /* r[0..3]: rows 0-3's columns (0, 2, 1, 3) in the low half and (4, 6, 5, 7)
     * in the high one; r[4..7] rows 4-7's */
    static const int col[4] = {0, 2, 1, 3};
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_ps(dst + col[j] * ds, _mm256_permute2f128_ps(r[j], r[j + 4], 0x20));
        _mm256_storeu_ps(dst + (col[j] + 4) * ds, _mm256_permute2f128_ps(r[j], r[j + 4], 0x31));
    }
}
#endif

/* dst[p][f] = src[f][p] for f < F, p < np: dst rows of pitch ds, src rows
 * of pitch ss; 16x16 blocks where AVX-512 is (8x8 at AVX2), one value at a
 * time for the rest */
static inline void transpose(float *dst, int64_t ds, const float *src, int64_t ss, int64_t F, int64_t np)
{
    int64_t f16 = 0, p16 = 0; /* the blocks cover f < f16, p < p16 */
#if defined(__AVX512F__)
    f16 = F / 16 * 16, p16 = np / 16 * 16;
    for (int64_t f0 = 0; f0 < f16; f0 += 16)
        for (int64_t p = 0; p < p16; p += 16)
            transpose16(dst + p * ds + f0, ds, src + f0 * ss + p, ss);
#elif NNC_TRANSPOSE_AVX2
    f16 = F / 8 * 8, p16 = np / 8 * 8;
    for (int64_t f0 = 0; f0 < f16; f0 += 8)
        for (int64_t p = 0; p < p16; p += 8)
            transpose8(dst + p * ds + f0, ds, src + f0 * ss + p, ss);
#endif
    for (int64_t f = 0; f < F; f++)
        for (int64_t p = f < f16 ? p16 : 0; p < np; p++)
            dst[p * ds + f] = src[f * ss + p];
}

#endif
