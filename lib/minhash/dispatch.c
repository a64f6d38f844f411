/* Which MinHash kernel runs: the one of the process's SIMD level, through
 * the kernel-table shape every dispatched mechanism shares
 * (MINLSH__KERNEL_DISPATCH in lib/common/common.h). This file holds no
 * state of its own. Every kernel gives identical bits. */
#include "kernel.h"

static const minlsh__minhash_kernel *const minlsh__minhash_levels[MINLSH__SIMD_LEVELS] =
    MINLSH__KERNEL_LEVELS(&minlsh__minhash_kernel_portable, &minlsh__minhash_kernel_avx2,
                          &minlsh__minhash_kernel_avx512);

MINLSH__KERNEL_DISPATCH(minlsh__minhash_kernel, minlsh__minhash_kernel, minlsh__minhash_levels)

#ifdef MINLSH_TESTING
size_t minlsh__minhash_kernels(const minlsh__minhash_kernel **out, size_t cap) {
    /* The usable levels' kernels, with the 32-bit-limb portable one second. */
    const minlsh__minhash_kernel *all[1 + MINLSH__SIMD_LEVELS];
    size_t n = minlsh__minhash_kernel_usable(all, MINLSH__SIMD_LEVELS), i;
    for (i = n; i > 1; i--) all[i] = all[i - 1];
    all[1] = &minlsh__minhash_kernel_portable_limb;
    n++;
    for (i = 0; i < n && i < cap && out != NULL; i++) out[i] = all[i];
    return n;
}
#endif

void minlsh__oph_update(uint64_t a, uint64_t b, uint32_t k, const uint64_t *hashes,
                        size_t n, uint32_t *bins) {
    minlsh__minhash_kernel_active()->oph(a, b, k, hashes, n, bins);
}

const char *minlsh_simd_kernel_name(void) {
    return minlsh__minhash_kernel_active()->name;
}
