/* count_allocs.h — counts the program's calls of malloc, calloc, realloc
 * and aligned_alloc (nnc_alloc_zeroed's huge pages, runtime/alloc.c) in
 * `allocs`, for tests that a code path does not allocate.  The program
 * links with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=aligned_alloc and includes this header in one file only (it
 * defines the wrappers). */
#ifndef NNC_TEST_COUNT_ALLOCS_H
#define NNC_TEST_COUNT_ALLOCS_H

#include <stddef.h>

static long allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n)
{
    allocs++;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s)
{
    allocs++;
    return __real_calloc(n, s);
}
void *__wrap_realloc(void *p, size_t n)
{
    allocs++;
    return __real_realloc(p, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n)
{
    allocs++;
    return __real_aligned_alloc(a, n);
}

#endif
