/* Which MinHash kernel runs. Today only the portable one exists; SIMD
 * kernels (one file each, compiled with their own flags) will be added to
 * the list and chosen here once per process after CPUID and XGETBV checks,
 * the choice published atomically. Every kernel gives identical bits. */
#include "kernel.h"

const minlsh__minhash_kernel *minlsh__minhash_kernel_active(void) {
    return &minlsh__minhash_kernel_portable;
}

size_t minlsh__minhash_kernels(const minlsh__minhash_kernel **out, size_t cap) {
    static const minlsh__minhash_kernel *const all[] = {
        &minlsh__minhash_kernel_portable,
        &minlsh__minhash_kernel_portable_limb,
    };
    size_t n = sizeof all / sizeof all[0], i;
    for (i = 0; i < n && i < cap && out != NULL; i++) out[i] = all[i];
    return n;
}
