/*
 * CPU feature detection and the one SIMD choice of the process.
 *
 * A CPUID bit says the processor has an instruction set; it does not say the
 * operating system saves the wider registers on a context switch. So, as
 * the Intel SDM prescribes: CPUID.1:ECX.OSXSAVE[27] (the OS has enabled
 * XSAVE and XGETBV) and AVX[28] first, then XGETBV(0) for the state
 * components the OS manages (XCR0): SSE (bit 1) and AVX/YMM (bit 2) for
 * AVX2; in addition opmask (5), ZMM_Hi256 (6) and Hi16_ZMM (7) for
 * AVX-512. Only then the leaf-7 bits: AVX2 = EBX[5]; AVX-512 needs F[16],
 * DQ[17], BW[30] and VL[31] (the flags kernel_avx512.c and
 * siphash_avx512.c are compiled with).
 *
 * The level the library uses is chosen once, on first use: the CPU's level,
 * capped by what this build compiled in and by the environment variable
 * MINLSH_KERNEL. It is published through a C11 atomic int (0 = not chosen
 * yet, else level + 1) with release/acquire ordering. Two threads that race
 * on the first call both compute the choice and store it; they store the
 * same value unless the environment changes in between (which the header
 * documents as unsupported), so the race is benign either way, and the
 * atomic makes it data-race free in the C11 sense. This is the library's only
 * global mutable state.
 */
#include "common.h"

#include <stdatomic.h>
#include <stdlib.h>

#if MINLSH__X86_64
#include <cpuid.h>

/* XGETBV with ECX = 0 as an instruction, so this file needs no -mxsave. Only
 * executed after CPUID said OSXSAVE, else it would fault (#UD). */
static uint64_t minlsh__xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

int minlsh__cpu_simd_level(void) {
    unsigned eax, ebx, ecx, edx;
    uint64_t xcr0;
    const uint64_t ymm_state = (1u << 1) | (1u << 2);
    const uint64_t zmm_state = ymm_state | (1u << 5) | (1u << 6) | (1u << 7);
    const unsigned avx512_bits = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);
    int level = MINLSH__SIMD_PORTABLE;
    if (__get_cpuid_max(0, NULL) < 7) return level;
    __cpuid_count(1, 0, eax, ebx, ecx, edx);
    if (!(ecx & (1u << 27)) || !(ecx & (1u << 28))) return level; /* OSXSAVE, AVX */
    xcr0 = minlsh__xgetbv0();
    if ((xcr0 & ymm_state) != ymm_state) return level;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(ebx & (1u << 5))) return level;
    level = MINLSH__SIMD_AVX2;
    if ((xcr0 & zmm_state) == zmm_state && (ebx & avx512_bits) == avx512_bits)
        level = MINLSH__SIMD_AVX512;
    return level;
}
#else
int minlsh__cpu_simd_level(void) { return MINLSH__SIMD_PORTABLE; }
#endif

int minlsh__simd_level_compiled(int level) {
    switch (level) {
    case MINLSH__SIMD_PORTABLE: return 1;
    case MINLSH__SIMD_AVX2: return MINLSH__WITH_AVX2;
    case MINLSH__SIMD_AVX512: return MINLSH__WITH_AVX512;
    default: return 0;
    }
}

#ifdef MINLSH_TESTING
int minlsh__simd_best_level(void) {
    int level = minlsh__cpu_simd_level();
    while (!minlsh__simd_level_compiled(level)) level--;
    return level;
}
#endif

int minlsh__simd_level_usable(int level) {
    return minlsh__simd_level_compiled(level) && level <= minlsh__cpu_simd_level();
}

const char *minlsh__simd_level_name(int level) {
    switch (level) {
    case MINLSH__SIMD_PORTABLE: return "portable";
    case MINLSH__SIMD_AVX2: return "avx2";
    case MINLSH__SIMD_AVX512: return "avx512";
    default: return "?";
    }
}

/* The choice, computed without looking at the cache. */
static int minlsh__simd_choose(void) {
    int cap = minlsh__cpu_simd_level(), i;
    /* MINLSH_KERNEL may only narrow the choice: a wider, unavailable or
     * unknown name is ignored (the environment must never make the library
     * run an instruction the CPU lacks). */
    const char *env = getenv("MINLSH_KERNEL");
    if (env != NULL) {
        for (i = MINLSH__SIMD_PORTABLE; i < MINLSH__SIMD_LEVELS; i++) {
            if (strcmp(env, minlsh__simd_level_name(i)) == 0) {
                if (i < cap) cap = i;
                break;
            }
        }
    }
    /* The widest level at or below the cap that this build has (AVX-512
     * compiled out still leaves AVX2, and the reverse). */
    while (!minlsh__simd_level_compiled(cap)) cap--;
    return cap;
}

static atomic_int minlsh__simd_choice; /* zero: not chosen yet */

int minlsh__simd_level(void) {
    int c = atomic_load_explicit(&minlsh__simd_choice, memory_order_acquire);
    if (MINLSH__UNLIKELY(c == 0)) {
        c = minlsh__simd_choose() + 1;
        atomic_store_explicit(&minlsh__simd_choice, c, memory_order_release);
    }
    return c - 1;
}
