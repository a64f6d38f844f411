/*
 * SipHash lanes: many messages hashed with one key. The portable kernel is
 * the scalar loop (minlsh__siphash24_u64 is the specification); the SIMD
 * kernels (siphash_avx2.c, siphash_avx512.c) give the same bits several
 * messages at a time. Which one the shingle engine uses follows the
 * process's SIMD level (lib/common/cpu.c: chosen once, published
 * atomically), so this file holds no state.
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

const minlsh__siphash_many_kernel *minlsh__siphash_many_for_level(int level) {
    switch (level) {
    case MINLSH__SIMD_PORTABLE:
        return &minlsh__siphash_many_portable;
#if MINLSH__WITH_AVX2
    case MINLSH__SIMD_AVX2:
        return &minlsh__siphash_many_avx2;
#endif
#if MINLSH__WITH_AVX512
    case MINLSH__SIMD_AVX512:
        return &minlsh__siphash_many_avx512;
#endif
    default:
        return NULL;
    }
}

const minlsh__siphash_many_kernel *minlsh__siphash_many_active(void) {
    /* minlsh__simd_level only returns compiled-in levels: never NULL. */
    return minlsh__siphash_many_for_level(minlsh__simd_level());
}

#ifdef MINLSH_TESTING
size_t minlsh__siphash_many_kernels(const minlsh__siphash_many_kernel **out,
                                    size_t cap) {
    const minlsh__siphash_many_kernel *all[MINLSH__SIMD_LEVELS];
    size_t n = 0, i;
    int level, cpu = minlsh__cpu_simd_level();
    for (level = MINLSH__SIMD_PORTABLE; level <= cpu; level++)
        if (minlsh__siphash_many_for_level(level) != NULL)
            all[n++] = minlsh__siphash_many_for_level(level);
    for (i = 0; i < n && i < cap && out != NULL; i++) out[i] = all[i];
    return n;
}
#endif
