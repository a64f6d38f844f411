/*
 * SipHash lanes: many messages hashed with one key. The portable kernel is
 * the scalar loop (minlsh__siphash24_u64 is the specification); the SIMD
 * kernels (siphash_avx2.c, siphash_avx512.c) give the same bits several
 * messages at a time. Which one the shingle engine uses follows the
 * process's SIMD level, through the kernel-table shape every dispatched
 * mechanism shares (MINLSH__KERNEL_DISPATCH in lib/common/common.h), so
 * this file holds no state.
 */
#include "shingle.h"

static void minlsh__sip_many_portable(uint64_t k0, uint64_t k1,
                                      const uint8_t *const *msg, const size_t *len,
                                      size_t n, uint64_t *out) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = minlsh__siphash24_u64(k0, k1, msg[i], len[i]);
}

const minlsh__siphash_many_kernel minlsh__siphash_many_portable = {
    "portable", minlsh__sip_many_portable
};

static const minlsh__siphash_many_kernel *const minlsh__siphash_many_levels[MINLSH__SIMD_LEVELS] =
    MINLSH__KERNEL_LEVELS(&minlsh__siphash_many_portable, &minlsh__siphash_many_avx2,
                          &minlsh__siphash_many_avx512);

MINLSH__KERNEL_DISPATCH(minlsh__siphash_many_kernel, minlsh__siphash_many,
                        minlsh__siphash_many_levels)
