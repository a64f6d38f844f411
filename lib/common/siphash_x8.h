/*
 * SipHash-2-4 on eight 64-bit lanes with AVX-512 (one message per lane): the
 * round, the absorption of one word per lane and the finalisation, shared by
 * the shingler's lanes (lib/shingle/siphash_avx512.c) and the band keys
 * (lib/lsh/bandkey_avx512.c). Include only from a file compiled with
 * -mavx512f -mavx512dq -mavx512bw -mavx512vl; everything is static inline.
 * The rotations by 32 are dword shuffles, which run beside the rotates.
 */
#ifndef MINLSH_COMMON_SIPHASH_X8_H
#define MINLSH_COMMON_SIPHASH_X8_H

#include "common/siphash.h"

#if !defined(__AVX512F__) || !defined(__AVX512DQ__) || !defined(__AVX512BW__) || \
    !defined(__AVX512VL__)
#error "common/siphash_x8.h needs -mavx512f -mavx512dq -mavx512bw -mavx512vl (mk/simd.mk)"
#endif

#include <immintrin.h>

/* The four state vectors of eight SipHash states, one per 64-bit lane. */
typedef struct minlsh__sip_x8 {
    __m512i v0, v1, v2, v3;
} minlsh__sip_x8;

/* The states of keys (k0[l], k1[l]) in lane l. */
MINLSH__INLINE void minlsh__sip_x8_init(minlsh__sip_x8 *s, __m512i k0, __m512i k1) {
    s->v0 = _mm512_xor_si512(k0, _mm512_set1_epi64((long long)MINLSH__SIP_C0));
    s->v1 = _mm512_xor_si512(k1, _mm512_set1_epi64((long long)MINLSH__SIP_C1));
    s->v2 = _mm512_xor_si512(k0, _mm512_set1_epi64((long long)MINLSH__SIP_C2));
    s->v3 = _mm512_xor_si512(k1, _mm512_set1_epi64((long long)MINLSH__SIP_C3));
}

MINLSH__INLINE void minlsh__sip_x8_round(minlsh__sip_x8 *s) {
    __m512i v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;
    v0 = _mm512_add_epi64(v0, v1);
    v2 = _mm512_add_epi64(v2, v3);
    v1 = _mm512_rol_epi64(v1, 13);
    v3 = _mm512_rol_epi64(v3, 16);
    v1 = _mm512_xor_si512(v1, v0);
    v3 = _mm512_xor_si512(v3, v2);
    v0 = _mm512_shuffle_epi32(v0, (_MM_PERM_ENUM)0xB1);
    v2 = _mm512_add_epi64(v2, v1);
    v0 = _mm512_add_epi64(v0, v3);
    v1 = _mm512_rol_epi64(v1, 17);
    v3 = _mm512_rol_epi64(v3, 21);
    v1 = _mm512_xor_si512(v1, v2);
    v3 = _mm512_xor_si512(v3, v0);
    v2 = _mm512_shuffle_epi32(v2, (_MM_PERM_ENUM)0xB1);
    s->v0 = v0, s->v1 = v1, s->v2 = v2, s->v3 = v3;
}

/* Absorb word m[l] in lane l: two compression rounds. */
MINLSH__INLINE void minlsh__sip_x8_absorb(minlsh__sip_x8 *s, __m512i m) {
    s->v3 = _mm512_xor_si512(s->v3, m);
    minlsh__sip_x8_round(s);
    minlsh__sip_x8_round(s);
    s->v0 = _mm512_xor_si512(s->v0, m);
}

/* The 64-bit tags of the eight lanes (the state is consumed). */
MINLSH__INLINE __m512i minlsh__sip_x8_final(minlsh__sip_x8 *s) {
    s->v2 = _mm512_xor_si512(s->v2, _mm512_set1_epi64(0xff));
    minlsh__sip_x8_round(s);
    minlsh__sip_x8_round(s);
    minlsh__sip_x8_round(s);
    minlsh__sip_x8_round(s);
    /* 0x96: three-way exclusive or. */
    return _mm512_ternarylogic_epi64(s->v0, s->v1, _mm512_xor_si512(s->v2, s->v3), 0x96);
}

#endif /* MINLSH_COMMON_SIPHASH_X8_H */
