/* nnc_isa.h — the names of the kernels in one instruction set's build.
 *
 * The kernel sources (kernels.def lists their functions) are compiled
 * once per instruction set on x86-64 (CMakeLists.txt): with -march=
 * x86-64-v4, x86-64-v3 and x86-64, and NNC_ISA_SUFFIX=avx512, avx2 or
 * generic.  Each defines its external functions, one thread's work, as
 * NNC_ISA_FN(name): name_serial_avx512, name_serial_avx2,
 * name_serial_generic, so that the three builds of a file sit side by
 * side in the library; dispatch.c defines name_serial, a call of the
 * build that nnc_isa() names, and threads.c the public name, which splits
 * the call into fixed work items and runs them on the threads
 * (nnc_kernels.h).  Compiled without NNC_ISA_SUFFIX (all of runtime/ as
 * one library for one target: a build without the variants, or a test's
 * -march=native copy), the kernel sources define name_serial themselves
 * and dispatch.c is empty.
 *
 * Within a build, a kernel calls the others of its own build
 * (NNC_ISA_FN(nnc_conv2d_cols_f32) in conv.c): the variant that runs is
 * chosen once, at the public function.
 */
#ifndef NNC_ISA_H
#define NNC_ISA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nnc_runtime.h"

/* The B operand of the float GEMM expected next (threads.c), whose first
 * block gemm.c's last block fetches into L2 while it computes: part
 * `part` of `parts` of that block's rows of b.  Set around each block of
 * a split GEMM, on the thread that runs it; b is NULL for none. */
typedef struct {
    const float *b;
    int64_t ldb, N, K, part, parts;
    int tb;
} nnc_gemm_hint;
extern _Thread_local nnc_gemm_hint nnc_gemm_hint_;

#define NNC_ISA_SERIAL_(name) name##_serial
#define NNC_ISA_SERIAL(name) NNC_ISA_SERIAL_(name) /* (name macro-expanded first) */
#if defined(NNC_ISA_SUFFIX)
#define NNC_ISA_CAT_(a, b) a##_##b
#define NNC_ISA_CAT(a, b) NNC_ISA_CAT_(a, b)
#define NNC_ISA_FN(name) NNC_ISA_CAT(NNC_ISA_SERIAL(name), NNC_ISA_SUFFIX)
#else
#define NNC_ISA_FN(name) NNC_ISA_SERIAL(name)
#endif

/* this build's kernels */
#define KERNEL(ret, name, params, args) ret NNC_ISA_FN(name) params;
#define VKERNEL(name, params, args) void NNC_ISA_FN(name) params;
#define VKERNEL_GENERIC_AT_AVX2(name, params, args) VKERNEL(name, params, args)
#define IKERNEL(ret, name, params, args) KERNEL(ret, name, params, args)
#include "kernels.def"
#undef KERNEL
#undef VKERNEL
#undef VKERNEL_GENERIC_AT_AVX2
#undef IKERNEL

/* conv.c's direct forward kernel for a padding of ph rows and pw
 * columns: what conv_cols_tmpl.h's general convolution calls, in its own
 * build, for such ungrouped layers (not a kernel of kernels.def: nothing
 * dispatches to it) */
void NNC_ISA_FN(nnc_conv2d_direct_hw_f32)(int64_t N, const float *x, const float *w, float *y, int64_t C, int64_t H,
                                          int64_t W, int64_t F, int64_t KH, int64_t KW, int64_t S, int64_t ph,
                                          int64_t pw, const float *bias, int relu, float *work, int64_t work_len);

/* conv.c's stride-1 data gradient by the direct kernel alone, for a
 * padding of ph rows and pw columns (plus add): what the general
 * convolution calls for a Conv1D's, in the AVX-512 build */
void NNC_ISA_FN(nnc_conv2d_s1_bwd_data_hw_f32)(int64_t N, const float *dy, const float *w, float *dx, const float *add,
                                               int64_t C, int64_t H, int64_t W, int64_t F, int64_t KH, int64_t KW,
                                               int64_t ph, int64_t pw, float *work, int64_t work_len);

/* Aborts with a message naming `what` when a kernel's work buffer holds
 * fewer than `need` elements of `elem` bytes: the compiler sized it from
 * nnc_conv.h, so that is a bug in nnc (conv.c, conv_cols.c). */
static inline void nnc__conv_check_work(const char *what, int64_t have, int64_t need, size_t elem)
{
    if (have < need) {
        fprintf(stderr, "%s: work buffer of %lld %s, %lld needed (internal error in nnc)\n", what, (long long)have,
                elem == sizeof(double) ? "doubles" : "floats", (long long)need);
        abort();
    }
}

#endif
