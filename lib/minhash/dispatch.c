/* Which MinHash kernel runs: the one of the process's SIMD level
 * (minlsh__simd_level in lib/common/cpu.c: CPUID and XGETBV, capped by the
 * build and by MINLSH_KERNEL, chosen once and published atomically). The
 * mapping from level to kernel is a constant table, so this file holds no
 * state of its own. Every kernel gives identical bits. */
#include "kernel.h"

const minlsh__minhash_kernel *minlsh__minhash_kernel_for_level(int level) {
    switch (level) {
    case MINLSH__SIMD_PORTABLE:
        return &minlsh__minhash_kernel_portable;
#if MINLSH__WITH_AVX2
    case MINLSH__SIMD_AVX2:
        return &minlsh__minhash_kernel_avx2;
#endif
#if MINLSH__WITH_AVX512
    case MINLSH__SIMD_AVX512:
        return &minlsh__minhash_kernel_avx512;
#endif
    default:
        return NULL;
    }
}

const minlsh__minhash_kernel *minlsh__minhash_kernel_active(void) {
    /* minlsh__simd_level only returns compiled-in levels: never NULL. */
    return minlsh__minhash_kernel_for_level(minlsh__simd_level());
}

#ifdef MINLSH_TESTING
size_t minlsh__minhash_kernels(const minlsh__minhash_kernel **out, size_t cap) {
    const minlsh__minhash_kernel *all[2 + MINLSH__SIMD_LEVELS];
    size_t n = 0, i;
    int level, cpu = minlsh__cpu_simd_level();
    all[n++] = &minlsh__minhash_kernel_portable;
    all[n++] = &minlsh__minhash_kernel_portable_limb;
    for (level = MINLSH__SIMD_PORTABLE + 1; level <= cpu; level++)
        if (minlsh__minhash_kernel_for_level(level) != NULL)
            all[n++] = minlsh__minhash_kernel_for_level(level);
    for (i = 0; i < n && i < cap && out != NULL; i++) out[i] = all[i];
    return n;
}
#endif

const char *minlsh_simd_kernel_name(void) {
    return minlsh__minhash_kernel_active()->name;
}
