/* numerics.c — the checks of code generated with `nnc --check-numerics`:
 * the first non-finite value of a tensor, and the message that names it.
 *
 * The test is on the bits (an exponent of all ones), not isfinite(): the
 * generated code may be built with -ffast-math, under which the compiler
 * may assume no float is NaN and fold isfinite() to 1.  The scan is in
 * index order on the calling thread, so the value named is the same at
 * any thread count.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nnc_runtime.h"

int64_t nnc_first_nonfinite(const float *p, size_t n)
{
    size_t i = 0;
    /* blocks of 64 without an early exit vectorize; the block that has a
     * bad value is then scanned again for its first */
    for (; i + 64 <= n; i += 64) {
        uint32_t bad = 0;
        for (size_t k = 0; k < 64; k++) {
            uint32_t u;
            memcpy(&u, p + i + k, sizeof u);
            bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
        }
        if (bad)
            break;
    }
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, p + i, sizeof u);
        if ((u & 0x7f800000u) == 0x7f800000u)
            return (int64_t)i;
    }
    return -1;
}

int nnc_check_finite(char *msg, size_t cap, const float *p, int nd, const int64_t *dims, const char *where,
                     const char *tensor, const char *op, const char *pass)
{
    size_t n = 1;
    for (int k = 0; k < nd; k++)
        n *= (size_t)dims[k];
    const int64_t at = nnc_first_nonfinite(p, n);
    if (at < 0)
        return 0;
    const float v = p[at];
    const char *kind = v != v ? "nan" : v > 0 ? "inf" : "-inf";
    /* the index, row-major, and the shape: "[3][17]", "f32[64,128]" */
    char idx[8 * 24 + 1] = "", shape[8 * 24 + 8] = "f32[";
    size_t li = 0, ls = strlen(shape);
    int64_t rest = at;
    for (int k = nd - 1; k >= 0; k--) { /* the index's digits from the last dim */
        char one[24];
        const int64_t d = dims[k] > 0 ? dims[k] : 1;
        snprintf(one, sizeof one, "[%lld]", (long long)(rest % d));
        rest /= d;
        const size_t lo = strlen(one);
        if (li + lo < sizeof idx) {
            memmove(idx + lo, idx, li + 1);
            memcpy(idx, one, lo);
            li += lo;
        }
    }
    for (int k = 0; k < nd && ls + 24 < sizeof shape; k++)
        ls += (size_t)snprintf(shape + ls, sizeof shape - ls, k ? ",%lld" : "%lld", (long long)dims[k]);
    snprintf(shape + ls, sizeof shape - ls, "]");
    if (cap)
        snprintf(msg, cap, "%s: non-finite value (%s)%s%s of %s (%s) from %s, in the %s pass", where, kind,
                 nd ? " at " : "", nd ? idx : "", tensor, shape, op, pass);
    return 1;
}
