/* test_alloc.c — nnc_alloc_zeroed (runtime/alloc.c), the allocator of a
 * model's params, grads, state, arena and optimizer moments.
 *
 *   - small blocks (calloc) and big ones (2 MB-aligned, huge pages) come
 *     back zeroed, also when the memory is a freed block reused: each big
 *     block is filled with 0xFF and freed before the next is asked for;
 *   - on Linux a block of at least 2 MB starts on a 2 MB boundary, and
 *     where the kernel gives huge pages to a program that asks (its
 *     transparent_hugepage setting is not [never]) the block's mapping
 *     holds some (/proc/self/smaps, AnonHugePages);
 *   - n or size 0 gives a block; n * size past SIZE_MAX gives NULL with
 *     errno ENOMEM.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nnc_runtime.h"

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* 1 where /sys says the kernel maps huge pages for madvise(MADV_HUGEPAGE)
 * blocks: "enabled" selects always or madvise */
static int thp_for_madvise(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[256] = {0};
    if (!f)
        return 0;
    const int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    return ok && (strstr(line, "[always]") || strstr(line, "[madvise]"));
}

/* kB of AnonHugePages in the mapping of /proc/self/smaps holding p; -1
 * when not found */
static long huge_kb(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return in ? kb : -1;
}

int main(void)
{
    /* small: calloc */
    float *s = nnc_alloc_zeroed(100, sizeof(float));
    CHECK(s != NULL && all_zero((const unsigned char *)s, 100 * sizeof(float)));
    free(s);
    unsigned char *z = nnc_alloc_zeroed(0, 4), *z2 = nnc_alloc_zeroed(4, 0);
    CHECK(z != NULL && z2 != NULL);
    free(z);
    free(z2);

    /* big: sizes around the 2 MB threshold and past it, odd ones too */
    const size_t sizes[] = {((size_t)2 << 20) - 4, (size_t)2 << 20, ((size_t)5 << 20) + 12, (size_t)33 << 20};
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            const size_t n = sizes[i] / sizeof(float);
            unsigned char *p = nnc_alloc_zeroed(n, sizeof(float));
            CHECKF(p != NULL, "%zu floats", n);
            if (!p)
                continue;
            CHECKF(all_zero(p, n * sizeof(float)), "%zu floats, round %d", n, round);
#if defined(__linux__)
            if (n * sizeof(float) >= ((size_t)2 << 20)) {
                CHECKF((uintptr_t)p % ((uintptr_t)2 << 20) == 0, "%zu floats at %p", n, (void *)p);
                if (thp_for_madvise() && n * sizeof(float) >= ((size_t)5 << 20)) {
                    const long kb = huge_kb(p);
                    CHECKF(kb > 0, "%zu floats: AnonHugePages %ld kB in the block's mapping", n, kb);
                }
            }
#endif
            memset(p, 0xFF, n * sizeof(float)); /* the next block may reuse it */
            free(p);
        }

    /* overflow of n * size */
    errno = 0;
    void *o = nnc_alloc_zeroed(SIZE_MAX / 2, 4);
    CHECK(o == NULL && errno == ENOMEM);
    free(o);
    return check_summary("test_alloc");
}
