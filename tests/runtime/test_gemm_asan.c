/* test_gemm_asan.c — one instruction set's build of runtime/gemm.c,
 * compiled with this file under ASan and UBSan (CMakeLists.txt here:
 * runtime.gemm_asan.avx512 and .avx2, x86-64-v4 and -v3): the vector
 * kernels, their packing, the turned product's buffers and transposes,
 * on products whose every dimension crosses a block edge (M over 256,
 * the turned product's blocks of M; K over 256; N over a packed block),
 * every transposition, beta 0 over a C of NaNs and beta 0.5, row pitches
 * wider than the rows (the floats between must stay), A transposed with
 * rows 4 KB apart (which gemm.c copies a block at a time), under both
 * weights of the plain and turned products' costs (full-width and
 * half-rate AVX-512 FMAs: nnc_isa_fma_narrow()) and both answers of
 * nnc_isa_pack_at() (A transposed copied into panels of rows or read in
 * place; N 133 gives a copied block with a one-vector panel), and a hint of the
 * next GEMM (nnc_gemm_hint_) that must change nothing.  Each product
 * against a double-precision one (gemm_want.h, as test_gemm); and the rows one call at a time give
 * the same bits (a single row never turns).  The rest of test_gemm
 * (threads, OpenBLAS) needs the whole runtime and runs unsanitized.
 * Exits 77 (skipped) where the CPU lacks the instruction set.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_want.h"
#include "nnc_isa.h"

#if defined(__AVX512F__)
#define CPU_HAS() \
    (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") && \
     __builtin_cpu_supports("avx512dq"))
#else
#define CPU_HAS() (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
#endif

_Thread_local nnc_gemm_hint nnc_gemm_hint_; /* (threads.c's in the runtime) */

/* isa.c's in the runtime: whether AVX-512's FMAs are half rate, which
 * weighs gemm.c's choice between the plain and the turned product; every
 * product runs under both answers */
static int narrow_;
int nnc_isa_fma_narrow(void) { return narrow_; }
/* and whether A transposed is copied into panels (both, likewise) */
static int pack_at_;
int nnc_isa_pack_at(void) { return pack_at_; }

static float val(int64_t i, int s) { return (float)((i * (7 + 2 * s)) % 13) * 0.25f - 1.5f; }

/* The product under both answers of nnc_isa_fma_narrow() and
 * nnc_isa_pack_at() (w = 0, 1: the two questions are independent), each
 * checked against one reference (the double sums cost most of the test's
 * time under ASan); pitch: A's row pitch, or 0 for its rows plus one
 * float.  The number of products that failed. */
static int check(int ta, int tb, int64_t M, int64_t N, int64_t K, float beta, int64_t pitch)
{
    const int64_t lda = pitch ? pitch : (ta ? M : K) + 1, ldb = (tb ? K : N) + 2, ldc = N + 3;
    const int64_t na = (ta ? K : M) * lda, nb = (tb ? N : K) * ldb;
    float *a = malloc(sizeof(float) * (size_t)na), *b = malloc(sizeof(float) * (size_t)nb);
    float *c[2], *c1[2];
    for (int64_t i = 0; i < na; i++)
        a[i] = val(i, 0);
    for (int64_t i = 0; i < nb; i++)
        b[i] = val(i, 1);
    for (int w = 0; w < 2; w++) {
        narrow_ = pack_at_ = w;
        c[w] = malloc(sizeof(float) * (size_t)(M * ldc)), c1[w] = malloc(sizeof(float) * (size_t)(M * ldc));
        for (int64_t i = 0; i < M * ldc; i++)
            c[w][i] = c1[w][i] = i % ldc >= N ? 7.0f : beta == 0.0f ? NAN : val(i, 2);
        NNC_ISA_FN(nnc_gemm_f32)(ta, tb, M, N, K, 1.0f, a, lda, b, ldb, beta, c[w], ldc);
        /* the rows one at a time, each told that a GEMM with this B (or
         * the transposed B of a K x N product) comes next, as half of a
         * split one: its last block fetches that (threads.c), which
         * changes no bits */
        for (int64_t i = 0; i < M; i++) {
            nnc_gemm_hint_ = (nnc_gemm_hint){b, ldb, i % 3 ? N : K, i % 3 ? K : N, i % 2, 2, i % 3 ? tb : !tb};
            NNC_ISA_FN(nnc_gemm_f32)
            (ta, tb, 1, N, K, 1.0f, ta ? a + i : a + i * lda, lda, b, ldb, beta, c1[w] + i * ldc, ldc);
        }
        nnc_gemm_hint_.b = NULL;
    }
    int bad[2] = {0, 0};
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < ldc; j++) {
            if (j >= N) {
                for (int w = 0; w < 2; w++)
                    bad[w] |= c[w][i * ldc + j] != 7.0f;
                continue;
            }
            double scale;
            const double want = gemm_ref(ta, tb, K, 1.0f, a, lda, b, ldb, beta, val(i * ldc + j, 2), i, j, &scale);
            for (int w = 0; w < 2; w++)
                bad[w] |= !gemm_close(c[w][i * ldc + j], want, scale);
        }
    int fails = 0;
    for (int w = 0; w < 2; w++) {
        if (!bad[w])
            bad[w] = 2 * (memcmp(c[w], c1[w], sizeof(float) * (size_t)(M * ldc)) != 0);
        if (bad[w])
            printf("FAIL ta %d tb %d M %lld N %lld K %lld beta %g (narrow, pack_at %d): %s\n", ta, tb, (long long)M,
                   (long long)N, (long long)K, beta, w, bad[w] == 1 ? "wrong" : "rows one at a time differ");
        fails += bad[w] != 0;
        free(c[w]);
        free(c1[w]);
    }
    free(a);
    free(b);
    return fails;
}

int main(void)
{
    if (!CPU_HAS()) {
        printf("test_gemm_asan: skipped: the CPU lacks this build's instruction set\n");
        return 77;
    }
    static const int64_t Ms[] = {1, 13, 16, 40, 257, 320};
    static const int64_t Ns[] = {5, 16, 65, 133, 300};
    static const int64_t Ks[] = {16, 257, 520};
    int fails = 0, runs = 0; /* two products a check (both answers above) */
    for (int t = 0; t < 4; t++)
        for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++)
            for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++)
                for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++, runs += 2)
                    fails += check(t & 1, t >> 1, Ms[m], Ns[n], Ks[k], (m + n + k) % 2 ? 0.5f : 0.0f, 0);
    /* the shapes the turned product is for (test_gemm's) */
    for (int t = 0; t < 4; t++, runs += 4) {
        fails += check(t & 1, t >> 1, 16, 1024, 256, 0.0f, 0);
        fails += check(t & 1, t >> 1, 16, 256, 1000, 0.5f, 0);
    }
    /* A transposed, its rows 4 KB apart: copied a block at a time (blocks
     * of M and of K crossed, and a part block of each) */
    for (int t = 0; t < 2; t++, runs += 6) {
        fails += check(1, t, 200, 300, 520, 0.0f, 1024);
        fails += check(1, t, 1000, 65, 257, 0.5f, 1024);
        fails += check(1, t, 13, 40, 16, 0.0f, 2048);
    }
    printf("test_gemm_asan: %d products, %d failed\n", runs, fails);
    return fails != 0;
}
