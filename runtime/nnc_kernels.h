/* nnc_kernels.h — the kernels of kernels.def as one thread's call:
 * name_serial, with the params that kernels.def gives.  dispatch.c defines
 * them (a call of the build that nnc_isa() names), or, in a build without
 * the variants, the kernel sources themselves (nnc_isa.h).  Only
 * threads.c, which defines the public names, and the kernels' tests call
 * them. */
#ifndef NNC_KERNELS_H
#define NNC_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "nnc_runtime.h"

#define KERNEL(ret, name, params, args) ret name##_serial params;
#define VKERNEL(name, params, args) void name##_serial params;
#define VKERNEL_GENERIC_AT_AVX2(name, params, args) VKERNEL(name, params, args)
#define IKERNEL(ret, name, params, args) KERNEL(ret, name, params, args)
#include "kernels.def"
#undef KERNEL
#undef VKERNEL
#undef VKERNEL_GENERIC_AT_AVX2
#undef IKERNEL

#endif
