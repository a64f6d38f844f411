/*
 * SipHash lanes with AVX-512: eight messages per vector, one 64-bit lane of
 * each of the four state vectors per message, the key shared; two such sets
 * (16 messages) are interleaved so that one set's rounds fill the other's
 * latencies. Compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl only
 * (mk/simd.mk) and reached only through the dispatcher after CPUID and
 * XGETBV said yes, so everything here is static (or static inline) but the
 * kernel table entry.
 *
 * Same bits as minlsh__siphash24_u64 (the specification); tests/test_kernels.c
 * compares them directly on random batches of mixed lengths.
 *
 * A message of len bytes is len / 8 full words, then its last word (0..7
 * tail bytes and len mod 256 in the top byte, computed by the scalar
 * helper, which reads only inside the message), then the finalisation.
 * Full word w of every lane is fetched with one masked gather (lanes without
 * a word w are masked off, so nothing outside a message is ever read). While
 * every lane still has full words, all lanes absorb in lockstep; after that
 * (lengths differ) each step absorbs a full word in some lanes and the last
 * word in others, and lanes already done keep their state through a mask.
 * When all lengths are equal (byte k-grams: every message is k bytes) no
 * lane ever waits and no mask is applied. The finalisation runs in all
 * lanes at once. The round itself is common/siphash_x8.h's.
 */
#include "shingle.h"

#if MINLSH__WITH_AVX512

#if !defined(__AVX512F__) || !defined(__AVX512DQ__) || !defined(__AVX512BW__) || \
    !defined(__AVX512VL__)
#error "siphash_avx512.c needs -mavx512f -mavx512dq -mavx512bw -mavx512vl (mk/simd.mk)"
#endif

#include "common/siphash_x8.h"

/* The lanes of one set of 8 messages. */
typedef struct sip512_set {
    minlsh__sip_x8 st;
    __m512i idx;  /* byte offset of the next full word from base */
    __m512i nw;   /* full words per lane (len / 8) */
    __m512i last; /* the last word of each lane */
    __mmask8 live;
    size_t minw, maxw;
} sip512_set;

MINLSH__INLINE void sip512_set_init(sip512_set *s, uint64_t k0, uint64_t k1,
                                    const uint8_t *base, const uint8_t *const *msg,
                                    const size_t *len, unsigned lanes) {
    uint64_t f[8];
    unsigned l;
    s->live = (__mmask8)(lanes >= 8 ? 0xFFu : (1u << lanes) - 1);
    minlsh__sip_x8_init(&s->st, _mm512_set1_epi64((long long)k0),
                        _mm512_set1_epi64((long long)k1));
    /* 64-bit address arithmetic: base + idx is each message. */
    s->idx = _mm512_sub_epi64(_mm512_maskz_loadu_epi64(s->live, (const void *)msg),
                              _mm512_set1_epi64((long long)(uintptr_t)base));
    s->nw = _mm512_srli_epi64(_mm512_maskz_loadu_epi64(s->live, (const void *)len), 3);
    s->minw = lanes > 0 ? SIZE_MAX : 0;
    s->maxw = 0;
    for (l = 0; l < 8; l++) {
        if (l < lanes) {
            size_t n = len[l] >> 3;
            s->minw = n < s->minw ? n : s->minw;
            s->maxw = n > s->maxw ? n : s->maxw;
            f[l] = minlsh__sip_last_word(msg[l], len[l]);
        } else {
            f[l] = 0;
        }
    }
    /* Built from registers, not stored and reloaded (a vector load of
     * just-written scalars would wait for the stores). */
    s->last = _mm512_set_epi64((long long)f[7], (long long)f[6], (long long)f[5],
                               (long long)f[4], (long long)f[3], (long long)f[2],
                               (long long)f[1], (long long)f[0]);
}

/* Step w: lanes with a full word w absorb it (fetched by a masked gather:
 * nothing outside a message is read), lanes at w = len / 8 absorb their
 * last word, lanes past it keep their state. Up to w = minw every lane is
 * busy and the mask is skipped; once no lane has a full word the gather is
 * too. */
MINLSH__INLINE void sip512_set_step(sip512_set *s, const uint8_t *base, size_t w) {
    const __m512i wv = _mm512_set1_epi64((long long)w);
    const __mmask8 full = _mm512_mask_cmpgt_epu64_mask(s->live, s->nw, wv);
    __m512i m = full == 0 ? s->last
                          : _mm512_mask_i64gather_epi64(s->last, full, s->idx,
                                                        (const void *)base, 1);
    minlsh__sip_x8 t = s->st;
    s->idx = _mm512_add_epi64(s->idx, _mm512_set1_epi64(8));
    minlsh__sip_x8_absorb(&t, m);
    if (w <= s->minw) {
        s->st = t;
    } else {
        const __mmask8 busy = _mm512_mask_cmpge_epu64_mask(s->live, s->nw, wv);
        s->st.v0 = _mm512_mask_mov_epi64(s->st.v0, busy, t.v0);
        s->st.v1 = _mm512_mask_mov_epi64(s->st.v1, busy, t.v1);
        s->st.v2 = _mm512_mask_mov_epi64(s->st.v2, busy, t.v2);
        s->st.v3 = _mm512_mask_mov_epi64(s->st.v3, busy, t.v3);
    }
}

MINLSH__INLINE void sip512_set_final(sip512_set *s, uint64_t *out) {
    _mm512_mask_storeu_epi64((void *)out, s->live, minlsh__sip_x8_final(&s->st));
}

/* Up to 16 messages as two independent sets of 8 lanes, interleaved step
 * by step so that one set's rounds fill the other's latencies. */
static void sip512_group(uint64_t k0, uint64_t k1, const uint8_t *const *msg,
                         const size_t *len, unsigned lanes, uint64_t *out) {
    const uint8_t *base = msg[0];
    sip512_set a, b;
    size_t w, maxw;
    unsigned la = lanes >= 8 ? 8u : lanes, lb = lanes - la;
    sip512_set_init(&a, k0, k1, base, msg, len, la);
    sip512_set_init(&b, k0, k1, base, msg + la, len + la, lb);
    maxw = a.maxw > b.maxw ? a.maxw : b.maxw;
    for (w = 0; w <= maxw; w++) {
        if (w <= a.maxw) sip512_set_step(&a, base, w);
        if (lb > 0 && w <= b.maxw) sip512_set_step(&b, base, w);
    }
    sip512_set_final(&a, out);
    if (lb > 0) sip512_set_final(&b, out + la);
}

static void sip512_many(uint64_t k0, uint64_t k1, const uint8_t *const *msg,
                        const size_t *len, size_t n, uint64_t *out) {
    size_t i;
    for (i = 0; i < n; i += 16)
        sip512_group(k0, k1, msg + i, len + i, n - i >= 16 ? 16u : (unsigned)(n - i), out + i);
}

const minlsh__siphash_many_kernel minlsh__siphash_many_avx512 = {"avx512", sip512_many};

#else
/* Compiled out (MINLSH_NO_AVX512 or not x86-64): ISO C wants a declaration. */
typedef int minlsh__siphash_avx512_unused;
#endif
