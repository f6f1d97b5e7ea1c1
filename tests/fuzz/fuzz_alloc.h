/* fuzz_alloc.h — force-included (-include) into the compiler's sources in
 * the fuzz builds only, never into nnc itself.
 *
 * nnc is a short-lived process that frees little: its syntax tree lives in
 * an arena and the rest (graphs, vectors, names) is reclaimed by exit.  A
 * fuzz target compiles thousands of inputs in one process, so here every
 * malloc, calloc and realloc of the compiler is recorded, and
 * nnc_fuzz_free_all() frees whatever an input left behind.  Blocks that
 * libc allocates (realpath, open_memstream) are not recorded: free()
 * passes them through, and LeakSanitizer still reports any that leak.
 */
#ifndef NNC_FUZZ_ALLOC_H
#define NNC_FUZZ_ALLOC_H

/* the declarations first, so that the macros below do not rename them */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *nnc_fuzz_malloc(size_t n);
void *nnc_fuzz_calloc(size_t n, size_t size);
void *nnc_fuzz_realloc(void *p, size_t n);
void nnc_fuzz_free(void *p);
/* Frees every recorded block still live: the end of one input. */
void nnc_fuzz_free_all(void);
/* The recorded blocks still live (fuzz_onnx: the reader frees its own). */
size_t nnc_fuzz_live(void);

#ifndef NNC_FUZZ_ALLOC_IMPL
#define malloc(n) nnc_fuzz_malloc(n)
#define calloc(n, s) nnc_fuzz_calloc(n, s)
#define realloc(p, n) nnc_fuzz_realloc(p, n)
#define free(p) nnc_fuzz_free(p)
#endif

#endif
