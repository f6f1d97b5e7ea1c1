/* alloc.c — the big blocks a model holds for its life, on huge pages.
 *
 * A training step walks megabytes of activations, parameters, gradients
 * and optimizer moments, in patterns (a GEMM's operand read by rows 2 KB
 * apart, a column of C per tile) that touch more 4 KB pages than the
 * TLBs hold.  On Linux, whose transparent huge pages are often only given
 * where a program asks (enabled = madvise, as on this project's VMs),
 * the blocks of at least NNC_HUGE_MIN bytes are asked for on 2 MB pages:
 * 2 MB-aligned, the size rounded up to 2 MB, madvise(MADV_HUGEPAGE), then
 * zeroed (which is when the kernel maps them).  Measured on the 2-core
 * AMD EPYC (Zen 4) of the tests, gpt_mini's step at 1 thread: see
 * docs/decisions.md, "Huge pages".  Elsewhere, and for small blocks,
 * it is calloc.  Either way the block is released with free().
 */
#if !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise */
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "nnc_runtime.h"

#define NNC_HUGE_PAGE ((size_t)2 << 20)
#define NNC_HUGE_MIN ((size_t)2 << 20)

void *nnc_alloc_zeroed(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    const size_t bytes = n * size;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= NNC_HUGE_MIN && bytes <= SIZE_MAX - NNC_HUGE_PAGE) {
        const size_t whole = (bytes + NNC_HUGE_PAGE - 1) / NNC_HUGE_PAGE * NNC_HUGE_PAGE;
        void *p = aligned_alloc(NNC_HUGE_PAGE, whole);
        if (p) {
            /* advice only: a kernel without THP says EINVAL, and the
             * block is still good on small pages */
            (void)madvise(p, whole, MADV_HUGEPAGE);
            memset(p, 0, bytes);
            return p;
        }
    }
#endif
    return calloc(n ? n : 1, size ? size : 1);
}
