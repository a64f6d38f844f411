/*
 * The SipHash-2-4 core (Aumasson and Bernstein, 2012), shared by every layer
 * that hashes with it: the shingler's hashes (lib/shingle) and the band keys
 * (lib/lsh). This header holds the constants, the round, the last-word rule
 * and the scalar functions; siphash_x4.h (AVX2) and siphash_x8.h (AVX-512)
 * hold the same round and finalisation on 4 and 8 lanes, for the kernel
 * files compiled with those flags. Everything here is a macro or static
 * inline, so no SIMD copy of a helper can escape its translation unit.
 * The scalar code (siphash.c) is the specification; tests/test_siphash.c
 * checks it against the official vectors and libsodium, tests/test_kernels.c
 * and tests/test_kernels.c every lane kernel against it.
 */
#ifndef MINLSH_COMMON_SIPHASH_H
#define MINLSH_COMMON_SIPHASH_H

#include "common/common.h"

#define MINLSH__SIP_C0 UINT64_C(0x736f6d6570736575) /* "somepseu" */
#define MINLSH__SIP_C1 UINT64_C(0x646f72616e646f6d) /* "dorandom" */
#define MINLSH__SIP_C2 UINT64_C(0x6c7967656e657261) /* "lygenera" */
#define MINLSH__SIP_C3 UINT64_C(0x7465646279746573) /* "tedbytes" */

#define MINLSH__SIP_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

/* One SipRound on four uint64_t lvalues. */
#define MINLSH__SIP_ROUND(v0, v1, v2, v3)                                      \
    do {                                                                       \
        v0 += v1;                                                              \
        v1 = MINLSH__SIP_ROTL(v1, 13);                                         \
        v1 ^= v0;                                                              \
        v0 = MINLSH__SIP_ROTL(v0, 32);                                         \
        v2 += v3;                                                              \
        v3 = MINLSH__SIP_ROTL(v3, 16);                                         \
        v3 ^= v2;                                                              \
        v0 += v3;                                                              \
        v3 = MINLSH__SIP_ROTL(v3, 21);                                         \
        v3 ^= v0;                                                              \
        v2 += v1;                                                              \
        v1 = MINLSH__SIP_ROTL(v1, 17);                                         \
        v1 ^= v2;                                                              \
        v2 = MINLSH__SIP_ROTL(v2, 32);                                         \
    } while (0)

/* Two compression rounds per 8-byte word (the "2" of 2-4). */
#define MINLSH__SIP_ABSORB(v0, v1, v2, v3, m)                                  \
    do {                                                                       \
        v3 ^= (m);                                                             \
        MINLSH__SIP_ROUND(v0, v1, v2, v3);                                     \
        MINLSH__SIP_ROUND(v0, v1, v2, v3);                                     \
        v0 ^= (m);                                                             \
    } while (0)

/* The four finalisation rounds (the "4" of 2-4), after v2 ^= 0xff (64-bit
 * tag) or 0xee (128-bit tag). */
#define MINLSH__SIP_FINAL_ROUNDS(v0, v1, v2, v3)                               \
    do {                                                                       \
        MINLSH__SIP_ROUND(v0, v1, v2, v3);                                     \
        MINLSH__SIP_ROUND(v0, v1, v2, v3);                                     \
        MINLSH__SIP_ROUND(v0, v1, v2, v3);                                     \
        MINLSH__SIP_ROUND(v0, v1, v2, v3);                                     \
    } while (0)

/* The last word SipHash absorbs for a message of len bytes: its 0..7 final
 * bytes, little-endian, with len mod 256 in the top byte. Reads only the
 * message's bytes (overlapping loads inside it, no byte loop); messages of
 * 8 bytes or more, the usual case, take no branch on the length. */
MINLSH__INLINE uint64_t minlsh__sip_last_word(const uint8_t *p, size_t len) {
    uint64_t t;
    if (MINLSH__LIKELY(len >= 8)) {
        /* The 8 bytes ending the message, keeping the top len % 8 of them:
         * >> (64 - 8 rem) in two steps so that rem = 0 gives 0, not UB. */
        t = (minlsh__load64le(p + len - 8) >> 1) >> (63 - 8 * (len & 7));
    } else if (len >= 4) {
        /* The whole message is the tail: two overlapping 4-byte loads. */
        t = (uint64_t)minlsh__load32le(p) |
            ((uint64_t)minlsh__load32le(p + len - 4) << (8 * (len - 4)));
    } else if (len > 0) {
        t = (uint64_t)p[0] | ((uint64_t)p[len / 2] << (8 * (len / 2))) |
            ((uint64_t)p[len - 1] << (8 * (len - 1)));
    } else {
        t = 0; /* p may be NULL: not touched */
    }
    return t | ((uint64_t)len << 56);
}

/* One-shot SipHash-2-4 (64-bit tag) with the key given as its two
 * little-endian words: k0 = LE64(key[0..7]), k1 = LE64(key[8..15]).
 * No argument checks (msg may be NULL only when len is 0). The band-key code
 * and the shingler use this; minlsh_siphash24 is the checked public twin. */
uint64_t minlsh__siphash24_u64(uint64_t k0, uint64_t k1, const void *msg,
                               size_t len);

/* Incremental SipHash-2-4: init, any number of updates, then one final. The
 * result equals the one-shot hash of the concatenated updates. wide = 0
 * gives the 64-bit variant, wide = 1 the 128-bit one; the finals read the
 * state without changing it. */
typedef struct minlsh__siphash {
    uint64_t v0, v1, v2, v3;
    uint64_t total;  /* bytes absorbed so far */
    uint8_t buf[8];  /* the pending partial word */
    size_t nbuf;     /* 0..7 */
} minlsh__siphash;

void minlsh__siphash_init(minlsh__siphash *s, uint64_t k0, uint64_t k1,
                          int wide);
void minlsh__siphash_update(minlsh__siphash *s, const void *data, size_t len);
uint64_t minlsh__siphash_final64(const minlsh__siphash *s);
void minlsh__siphash_final128(const minlsh__siphash *s, uint8_t out[16]);

#endif /* MINLSH_COMMON_SIPHASH_H */
