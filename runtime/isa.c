/* isa.c — which instruction set the runtime's kernels, and the generated
 * code's loops, run with: chosen once per process at run time.
 *
 * One build serves every x86-64 machine: the kernels are compiled once per
 * instruction set (CMakeLists.txt) and each call goes to the variant that
 * nnc_isa() names.  By default that is the best the CPU has, read with
 * cpuid (__builtin_cpu_supports): AVX-512 (x86-64-v4: F, BW, CD, DQ, VL),
 * AVX2 with FMA (x86-64-v3), or portable code.  NNC_ISA=avx512|avx2|generic
 * in the environment forces a path, never one the CPU lacks (that would
 * die on an illegal instruction): it is lowered to what the CPU has, with
 * one line on stderr, as is an unknown value.  Elsewhere than x86-64 it is
 * always generic.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnc_runtime.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

static nnc_isa_kind cpu_isa(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return NNC_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return NNC_ISA_AVX2;
#endif
    return NNC_ISA_GENERIC;
}

const char *nnc_isa_name(nnc_isa_kind k)
{
    static const char *const names[] = {"generic", "avx2", "avx512"};
    return k >= NNC_ISA_GENERIC && k <= NNC_ISA_AVX512 ? names[k] : "?";
}

/* The choice, made on the first call and read by every kernel call: an
 * atomic int, relaxed (a plain load on x86), because the first call may
 * come from several threads at once (generated code built without the
 * ISA copies first calls it inside a parallel region).  The first call
 * to store its choice prints the NNC_ISA message, once. */
static _Atomic int chosen = -1;

nnc_isa_kind nnc_isa(void)
{
    const int c = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (c >= 0)
        return (nnc_isa_kind)c;
    nnc_isa_kind cpu = cpu_isa(), k = cpu;
    const char *env = getenv("NNC_ISA");
    int why = 0; /* 1: not a name, 2: more than the CPU has */
    if (env && *env) {
        int want = -1;
        for (int i = NNC_ISA_GENERIC; i <= NNC_ISA_AVX512; i++)
            if (!strcmp(env, nnc_isa_name((nnc_isa_kind)i)))
                want = i;
        if (want < 0)
            why = 1;
        else if (want > (int)cpu)
            why = 2;
        else
            k = (nnc_isa_kind)want;
    }
    int none = -1;
    if (atomic_compare_exchange_strong(&chosen, &none, (int)k) && why)
        fprintf(stderr,
                why == 1 ? "nnc: NNC_ISA=%s is not avx512, avx2 or generic; using %s\n"
                         : "nnc: NNC_ISA=%s: this CPU has only %s; using it\n",
                env, nnc_isa_name(cpu));
    return (nnc_isa_kind)atomic_load_explicit(&chosen, memory_order_relaxed);
}

/* CPUs whose AVX-512 FMAs give no more floats a cycle than AVX2's.
 * AMD's Zen 4 (family 0x19) runs each 512-bit FMA as two 256-bit halves:
 * one a cycle (this project's EPYC measured 117.5 GFLOP/s a core with zmm
 * or ymm alike); Zen 5 (0x1a) and later have full-width units.  Intel's
 * client cores with AVX-512 (family 6: Cannon Lake 0x66, Ice Lake 0x7d
 * and 0x7e, Tiger Lake 0x8c and 0x8d, Rocket Lake 0xa7) have one 512-bit
 * FMA unit, ports 0 and 1 fused, where AVX2 has two 256-bit ones (Intel's
 * optimization manual); not measured here.  Intel's server cores have
 * two 512-bit FMA ports (some low Xeon SKUs one, which cpuid does not
 * tell: they count as wide).  Read once, like nnc_isa(). */
enum { VENDOR_OTHER, VENDOR_AMD, VENDOR_INTEL };

/* The CPU's maker, by cpuid's vendor string */
static int cpu_vendor(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return VENDOR_OTHER;
    if (b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u) /* "AuthenticAMD" */
        return VENDOR_AMD;
    if (b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu) /* "GenuineIntel" */
        return VENDOR_INTEL;
#endif
    return VENDOR_OTHER;
}

static int fma512_narrow_cpu(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    const int vendor = cpu_vendor(), amd = vendor == VENDOR_AMD;
    unsigned a, b, c, d;
    if (vendor == VENDOR_OTHER || !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    const unsigned base = a >> 8 & 0xfu, family = base == 0xfu ? base + (a >> 20 & 0xffu) : base,
                   model = base == 0xfu || base == 0x6u ? (a >> 4 & 0xfu) | (a >> 12 & 0xf0u) : (a >> 4 & 0xfu);
    if (amd)
        return family == 0x19;
    return family == 0x6 &&
        (model == 0x66 || model == 0x7d || model == 0x7e || model == 0x8c || model == 0x8d || model == 0xa7);
#else
    return 0;
#endif
}

static int amd_cpu(void) { return cpu_vendor() == VENDOR_AMD; }

/* fn(), the first time; *known holds it (-1: not yet) */
static int read_once(_Atomic int *known, int (*fn)(void))
{
    int k = atomic_load_explicit(known, memory_order_relaxed);
    if (k < 0) {
        k = fn();
        atomic_store_explicit(known, k, memory_order_relaxed);
    }
    return k;
}

/* Is the CPU AMD's?  Read once, for the choices below that measured
 * differently on AMD's cores */
static int is_amd(void)
{
    static _Atomic int amd = -1;
    return read_once(&amd, amd_cpu);
}

int nnc_isa_wino_early(void) { return nnc_isa_fma_narrow() || (nnc_isa() == NNC_ISA_AVX512 && is_amd()); }

int nnc_isa_pack_at(void) { return nnc_isa() != NNC_ISA_GENERIC && !is_amd(); }

int nnc_isa_conv_rows(void) { return nnc_isa() == NNC_ISA_AVX512 && !is_amd(); }

int nnc_isa_fma_narrow(void)
{
    static _Atomic int narrow = -1;
    const int k = read_once(&narrow, fma512_narrow_cpu);
    return nnc_isa() == NNC_ISA_AVX2 || (nnc_isa() == NNC_ISA_AVX512 && k);
}
