/* dispatch.c — the one-thread entries of the kernels (kernels.def),
 * name_serial, each a call of the build of its source for the instruction
 * set that nnc_isa() names (threads.c's public functions call them).
 *
 * On x86-64 the kernel sources are compiled three times (CMakeLists.txt,
 * which then defines NNC_ISA_DISPATCH here): for AVX-512 (x86-64-v4),
 * AVX2 with FMA (x86-64-v3) and baseline x86-64, their functions suffixed
 * _avx512, _avx2 and _generic (nnc_isa.h).  The cost is one indirect call
 * per kernel call, and nnc_isa()'s load and compare once it has chosen:
 * the kernels run for microseconds at the least (a 64x64 causal
 * product).  Without NNC_ISA_DISPATCH (a target other than x86-64, a
 * compiler without those -march values, or all of runtime/ compiled as
 * one library, unsuffixed) this file is empty: the kernel sources define
 * the public names themselves.
 */
#include "nnc_isa.h"
#include "nnc_kernels.h"

#if defined(NNC_ISA_DISPATCH)

/* every build's kernels */
#define KERNEL(ret, name, params, args) \
    ret name##_serial_generic params; \
    ret name##_serial_avx2 params; \
    ret name##_serial_avx512 params;
#define VKERNEL(name, params, args) KERNEL(void, name, params, args)
#define VKERNEL_GENERIC_AT_AVX2(name, params, args) VKERNEL(name, params, args)
#define IKERNEL(ret, name, params, args) KERNEL(ret, name, params, args)
#include "kernels.def"
#undef KERNEL
#undef VKERNEL
#undef VKERNEL_GENERIC_AT_AVX2
#undef IKERNEL

/* the public names, through a table of the builds in the order of
 * nnc_isa_kind (kernels.def says which run the generic build at AVX2) */
#define VARIANTS(name, avx2) \
    { \
        name##_serial_generic, avx2, name##_serial_avx512 \
    }
#define KERNEL(ret, name, params, args) \
    ret name##_serial params \
    { \
        static ret(*const variant[]) params = VARIANTS(name, name##_serial_avx2); \
        return variant[nnc_isa()] args; \
    }
#define VOID_KERNEL(name, params, args, avx2) \
    void name##_serial params \
    { \
        static void(*const variant[]) params = VARIANTS(name, avx2); \
        variant[nnc_isa()] args; \
    }
#define VKERNEL(name, params, args) VOID_KERNEL(name, params, args, name##_serial_avx2)
#define VKERNEL_GENERIC_AT_AVX2(name, params, args) VOID_KERNEL(name, params, args, name##_serial_generic)
#define IKERNEL(ret, name, params, args) KERNEL(ret, name, params, args)
#include "kernels.def"
#undef KERNEL
#undef VKERNEL
#undef VKERNEL_GENERIC_AT_AVX2
#undef IKERNEL

_Static_assert(NNC_ISA_GENERIC == 0 && NNC_ISA_AVX2 == 1 && NNC_ISA_AVX512 == 2, "VARIANTS is in nnc_isa_kind's order");

#else
typedef int nnc__dispatch_none; /* (ISO C wants a declaration in every file) */
#endif
