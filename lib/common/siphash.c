/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012): 64-bit and 128-bit tags,
 * one-shot and incremental (the round and the constants are in siphash.h).
 * Written from the paper's description; checked against the official
 * vectors and libsodium in tests/test_siphash.c.
 */
#include "common/siphash.h"

/* The last word of the incremental form: the 0..7 buffered bytes,
 * little-endian, with the total length mod 256 in the top byte. */
MINLSH__INLINE uint64_t sip_last_word(const uint8_t *p, size_t rem,
                                      uint64_t total) {
    uint64_t b = total << 56;
    size_t i;
    for (i = 0; i < rem; i++) b |= (uint64_t)p[i] << (8 * i);
    return b;
}

uint64_t minlsh__siphash24_u64(uint64_t k0, uint64_t k1, const void *msg,
                               size_t len) {
    const uint8_t *p = (const uint8_t *)msg;
    uint64_t v0 = k0 ^ MINLSH__SIP_C0, v1 = k1 ^ MINLSH__SIP_C1, v2 = k0 ^ MINLSH__SIP_C2,
             v3 = k1 ^ MINLSH__SIP_C3, m;
    size_t n = len;
    while (n >= 8) {
        m = minlsh__load64le(p);
        MINLSH__SIP_ABSORB(v0, v1, v2, v3, m);
        p += 8;
        n -= 8;
    }
    m = sip_last_word(p, n, (uint64_t)len);
    MINLSH__SIP_ABSORB(v0, v1, v2, v3, m);
    v2 ^= 0xff;
    MINLSH__SIP_FINAL_ROUNDS(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

void minlsh__siphash_init(minlsh__siphash *s, uint64_t k0, uint64_t k1,
                          int wide) {
    s->v0 = k0 ^ MINLSH__SIP_C0;
    s->v1 = k1 ^ MINLSH__SIP_C1;
    s->v2 = k0 ^ MINLSH__SIP_C2;
    s->v3 = k1 ^ MINLSH__SIP_C3;
    if (wide) s->v1 ^= 0xee; /* the 128-bit variant's domain separation */
    s->total = 0;
    s->nbuf = 0;
}

void minlsh__siphash_update(minlsh__siphash *s, const void *data, size_t len) {
    const uint8_t *p = (const uint8_t *)data;
    uint64_t v0, v1, v2, v3, m;
    if (len == 0) return;
    s->total += (uint64_t)len;
    if (s->nbuf > 0) {
        size_t take = 8 - s->nbuf;
        if (take > len) take = len;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        len -= take;
        if (s->nbuf < 8) return;
        m = minlsh__load64le(s->buf);
        v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;
        MINLSH__SIP_ABSORB(v0, v1, v2, v3, m);
        s->v0 = v0, s->v1 = v1, s->v2 = v2, s->v3 = v3;
        s->nbuf = 0;
    }
    v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;
    while (len >= 8) {
        m = minlsh__load64le(p);
        MINLSH__SIP_ABSORB(v0, v1, v2, v3, m);
        p += 8;
        len -= 8;
    }
    s->v0 = v0, s->v1 = v1, s->v2 = v2, s->v3 = v3;
    if (len > 0) {
        memcpy(s->buf, p, len);
        s->nbuf = len;
    }
}

uint64_t minlsh__siphash_final64(const minlsh__siphash *s) {
    uint64_t v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;
    uint64_t m = sip_last_word(s->buf, s->nbuf, s->total);
    MINLSH__SIP_ABSORB(v0, v1, v2, v3, m);
    v2 ^= 0xff;
    MINLSH__SIP_FINAL_ROUNDS(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

void minlsh__siphash_final128(const minlsh__siphash *s, uint8_t out[16]) {
    uint64_t v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;
    uint64_t m = sip_last_word(s->buf, s->nbuf, s->total);
    MINLSH__SIP_ABSORB(v0, v1, v2, v3, m);
    v2 ^= 0xee;
    MINLSH__SIP_FINAL_ROUNDS(v0, v1, v2, v3);
    minlsh__store64le(out, v0 ^ v1 ^ v2 ^ v3);
    v1 ^= 0xdd;
    MINLSH__SIP_FINAL_ROUNDS(v0, v1, v2, v3);
    minlsh__store64le(out + 8, v0 ^ v1 ^ v2 ^ v3);
}

int minlsh_siphash24(uint64_t *out, const uint8_t key[16], const void *msg,
                     size_t len) {
    if (out == NULL || key == NULL || (msg == NULL && len > 0))
        return MINLSH_E_NULL;
    *out = minlsh__siphash24_u64(minlsh__load64le(key), minlsh__load64le(key + 8),
                                 msg, len);
    return 0;
}

int minlsh_siphash24_128(uint8_t out[16], const uint8_t key[16], const void *msg,
                         size_t len) {
    minlsh__siphash s;
    if (out == NULL || key == NULL || (msg == NULL && len > 0))
        return MINLSH_E_NULL;
    minlsh__siphash_init(&s, minlsh__load64le(key), minlsh__load64le(key + 8), 1);
    minlsh__siphash_update(&s, msg, len);
    minlsh__siphash_final128(&s, out);
    return 0;
}
