/* nnc_vec.h — the runtime kernels' float vector, as wide as the build
 * that includes it (nnc_isa.h: 16 floats in the avx512 build, 8 in the
 * avx2 build, 4 in the generic build's SSE), as GCC/clang vector
 * extensions, and the loads and stores of a row's last, partial vector.
 *
 * softmax.c, attn.c and pool.c's general pools each had their own copy
 * of the partial load and store (load_n, load_part, pv_load_n), the same
 * contract at the same width.  pool.c's 2x2 kernels keep their AVX2 store
 * in pieces of 4, 2 and 1 floats: vmaskmovps is microcoded on AMD and
 * cost their backward pass 40% (pool.c). */
#ifndef NNC_VEC_H
#define NNC_VEC_H

#include <stdint.h>
#include <string.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define NNC_VL 16
#elif defined(__AVX2__)
#define NNC_VL 8
#else
#define NNC_VL 4
#endif

typedef float nnc_vf __attribute__((vector_size(4 * NNC_VL)));
typedef int32_t nnc_vi __attribute__((vector_size(4 * NNC_VL)));
/* a vector at any float's address (unaligned loads and stores) */
typedef float nnc_vfu __attribute__((vector_size(4 * NNC_VL), aligned(4), may_alias));

/* m ? a : b, lane by lane (m's lanes all ones or all zeros) */
static inline nnc_vf nnc_vsel(nnc_vi m, nnc_vf a, nnc_vf b) { return (nnc_vf)(((nnc_vi)a & m) | ((nnc_vi)b & ~m)); }

#if NNC_VL == 8
/* lanes j < n all ones (n of any sign or size) */
static inline __m256i nnc_vlanes8(int64_t n)
{
    const int32_t k = (int32_t)(n < 0 ? 0 : n > 8 ? 8 : n);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

/* The first n floats at p, zeros in the lanes after them (n >= NNC_VL:
 * a whole vector; n <= 0: zeros), reading no float past the n-th: a
 * masked load at AVX-512 and AVX2. */
static inline nnc_vf nnc_vload_n(const float *p, int64_t n)
{
    if (n >= NNC_VL)
        return *(const nnc_vfu *)p;
    if (n <= 0)
        return (nnc_vf){0};
#if NNC_VL == 16
    return (nnc_vf)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
#elif NNC_VL == 8
    return (nnc_vf)_mm256_maskload_ps(p, nnc_vlanes8(n));
#else
    nnc_vf v = {0};
    memcpy(&v, p, sizeof(float) * (size_t)n);
    return v;
#endif
}

/* v's first n lanes into p (the same n), touching no float after them */
static inline void nnc_vstore_n(float *p, nnc_vf v, int64_t n)
{
    if (n >= NNC_VL) {
        *(nnc_vfu *)p = v;
        return;
    }
    if (n <= 0)
        return;
#if NNC_VL == 16
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), (__m512)v);
#elif NNC_VL == 8
    _mm256_maskstore_ps(p, nnc_vlanes8(n), (__m256)v);
#else
    memcpy(p, &v, sizeof(float) * (size_t)n);
#endif
}

#endif
