/* fuzz_alloc.c — the compiler's allocations, recorded so that one input's
 * leftovers can be freed (fuzz_alloc.h says why).  An open-addressing set
 * of live pointers: no header before the blocks, so AddressSanitizer's
 * red zones stay right at their edges. */
#define NNC_FUZZ_ALLOC_IMPL
#include "fuzz_alloc.h"

#include <stdint.h>

/* the real ones here (the build force-includes fuzz_alloc.h everywhere) */
#undef malloc
#undef calloc
#undef realloc
#undef free

#define TOMB ((void *)1)

static void **set;
static size_t cap, used, live; /* slots; slots not empty (incl. tombstones); live pointers */

static size_t slot_of(const void *p)
{
    uintptr_t h = (uintptr_t)p;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    return (size_t)h & (cap - 1);
}

static void insert(void *p);

static void grow(void)
{
    void **old = set;
    size_t oc = cap;
    cap = cap ? (live * 4 > cap ? cap * 2 : cap) : 1024;
    set = calloc(cap, sizeof *set);
    if (!set)
        abort();
    used = live = 0;
    for (size_t i = 0; i < oc; i++)
        if (old[i] && old[i] != TOMB)
            insert(old[i]);
    free(old);
}

static void insert(void *p)
{
    if (!p)
        return;
    if ((used + 1) * 2 > cap)
        grow();
    size_t i = slot_of(p);
    while (set[i] && set[i] != TOMB)
        i = (i + 1) & (cap - 1);
    if (!set[i])
        used++;
    set[i] = p;
    live++;
}

/* 1 when p was recorded (and now is not) */
static int take(void *p)
{
    if (!cap || !p)
        return 0;
    for (size_t i = slot_of(p); set[i]; i = (i + 1) & (cap - 1))
        if (set[i] == p) {
            set[i] = TOMB;
            live--;
            return 1;
        }
    return 0;
}

void *nnc_fuzz_malloc(size_t n)
{
    void *p = malloc(n);
    insert(p);
    return p;
}

void *nnc_fuzz_calloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    insert(p);
    return p;
}

void *nnc_fuzz_realloc(void *p, size_t n)
{
    int mine = take(p);
    void *q = realloc(p, n);
    if (q)
        insert(q);
    else if (mine && n)
        insert(p); /* realloc failed: p is still live */
    return q;
}

void nnc_fuzz_free(void *p)
{
    take(p);
    free(p);
}

void nnc_fuzz_free_all(void)
{
    for (size_t i = 0; i < cap; i++)
        if (set[i] && set[i] != TOMB)
            free(set[i]);
    free(set);
    set = NULL;
    cap = used = live = 0;
}

size_t nnc_fuzz_live(void) { return live; }
