/*
 * SipHash-2-4 on four 64-bit lanes with AVX2 (one message per lane): the
 * round, the absorption of one word per lane and the finalisation, shared by
 * the shingler's lanes (lib/shingle/siphash_avx2.c) and the band keys
 * (lib/lsh/bandkey_avx2.c). Include only from a file compiled with -mavx2;
 * everything is static inline. AVX2 has no 64-bit rotate: 32 and 16 are
 * byte shuffles, 13, 17 and 21 two shifts and an or.
 */
#ifndef MINLSH_COMMON_SIPHASH_X4_H
#define MINLSH_COMMON_SIPHASH_X4_H

#include "common/siphash.h"

#if !defined(__AVX2__)
#error "common/siphash_x4.h needs -mavx2 (mk/simd.mk)"
#endif

#include <immintrin.h>

/* The four state vectors of four SipHash states, one per 64-bit lane. */
typedef struct minlsh__sip_x4 {
    __m256i v0, v1, v2, v3;
} minlsh__sip_x4;

#define MINLSH__SIP_X4_ROTL(x, b)                                              \
    _mm256_or_si256(_mm256_slli_epi64((x), (b)), _mm256_srli_epi64((x), 64 - (b)))

/* The states of keys (k0[l], k1[l]) in lane l. */
MINLSH__INLINE void minlsh__sip_x4_init(minlsh__sip_x4 *s, __m256i k0, __m256i k1) {
    s->v0 = _mm256_xor_si256(k0, _mm256_set1_epi64x((long long)MINLSH__SIP_C0));
    s->v1 = _mm256_xor_si256(k1, _mm256_set1_epi64x((long long)MINLSH__SIP_C1));
    s->v2 = _mm256_xor_si256(k0, _mm256_set1_epi64x((long long)MINLSH__SIP_C2));
    s->v3 = _mm256_xor_si256(k1, _mm256_set1_epi64x((long long)MINLSH__SIP_C3));
}

MINLSH__INLINE void minlsh__sip_x4_round(minlsh__sip_x4 *s) {
    /* Rotate each 64-bit lane left by 16 bits: byte i takes byte i - 2. */
    const __m256i rot16 = _mm256_setr_epi8(6, 7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9, 10, 11, 12, 13,
                                           6, 7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9, 10, 11, 12, 13);
    __m256i v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;
    v0 = _mm256_add_epi64(v0, v1);
    v2 = _mm256_add_epi64(v2, v3);
    v1 = MINLSH__SIP_X4_ROTL(v1, 13);
    v3 = _mm256_shuffle_epi8(v3, rot16);
    v1 = _mm256_xor_si256(v1, v0);
    v3 = _mm256_xor_si256(v3, v2);
    v0 = _mm256_shuffle_epi32(v0, 0xB1);
    v2 = _mm256_add_epi64(v2, v1);
    v0 = _mm256_add_epi64(v0, v3);
    v1 = MINLSH__SIP_X4_ROTL(v1, 17);
    v3 = MINLSH__SIP_X4_ROTL(v3, 21);
    v1 = _mm256_xor_si256(v1, v2);
    v3 = _mm256_xor_si256(v3, v0);
    v2 = _mm256_shuffle_epi32(v2, 0xB1);
    s->v0 = v0, s->v1 = v1, s->v2 = v2, s->v3 = v3;
}

/* Absorb word m[l] in lane l: two compression rounds. */
MINLSH__INLINE void minlsh__sip_x4_absorb(minlsh__sip_x4 *s, __m256i m) {
    s->v3 = _mm256_xor_si256(s->v3, m);
    minlsh__sip_x4_round(s);
    minlsh__sip_x4_round(s);
    s->v0 = _mm256_xor_si256(s->v0, m);
}

/* The 64-bit tags of the four lanes (the state is consumed). */
MINLSH__INLINE __m256i minlsh__sip_x4_final(minlsh__sip_x4 *s) {
    s->v2 = _mm256_xor_si256(s->v2, _mm256_set1_epi64x(0xff));
    minlsh__sip_x4_round(s);
    minlsh__sip_x4_round(s);
    minlsh__sip_x4_round(s);
    minlsh__sip_x4_round(s);
    return _mm256_xor_si256(_mm256_xor_si256(s->v0, s->v1), _mm256_xor_si256(s->v2, s->v3));
}

#endif /* MINLSH_COMMON_SIPHASH_X4_H */
