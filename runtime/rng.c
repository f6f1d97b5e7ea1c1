/* rng.c — the runtime's random number generator.
 *
 * xoshiro256** (Blackman & Vigna, 2018) with its state filled from the seed
 * by splitmix64, exactly as the authors' reference code recommends.  It is
 * specified bit for bit so that a seed gives the same initial weights,
 * dropout masks and data shuffles on every platform and compiler: nothing
 * here depends on the C library's rand() or on floating-point library
 * functions other than log, sqrt and cos in the normal sampler.
 */
#include <math.h>

#include "nnc_runtime.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void nnc_rng_seed(nnc_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    /* splitmix64 never yields four zero words in a row, so the xoshiro
     * state is never the all-zero fixed point. */
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

uint64_t nnc_rng_next(nnc_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double nnc_rng_uniform(nnc_rng *r)
{
    /* The top 53 bits, scaled: every value k * 2^-53 in [0, 1) is equally
     * likely and 1.0 is never returned. */
    return (double)(nnc_rng_next(r) >> 11) * 0x1.0p-53;
}

double nnc_rng_normal(nnc_rng *r)
{
    /* Box–Muller, using one of the pair.  Keeping no cached second value
     * keeps nnc_rng a plain four-word state that is trivial to copy and
     * reproduce.  u1 is in (0, 1] so the log is finite. */
    const double two_pi = 6.283185307179586476925286766559;
    double u1 = 1.0 - nnc_rng_uniform(r);
    double u2 = nnc_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

uint32_t nnc_rng_below(nnc_rng *r, uint32_t n)
{
    /* Lemire's nearly divisionless method on the top 32 bits of each draw:
     * multiply into 64 bits, keep the high word, and reject the few low
     * words that would make some results more likely than others. */
    if (n == 0)
        return 0;
    uint64_t m = (nnc_rng_next(r) >> 32) * (uint64_t)n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (nnc_rng_next(r) >> 32) * (uint64_t)n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}
