/*
 * SipHash lanes with AVX2: four messages at once, one 64-bit lane of each of
 * the four state vectors per message, the key shared. Compiled with -mavx2
 * only (mk/simd.mk) and reached only through the dispatcher after CPUID and
 * XGETBV said yes, so everything here is static but the kernel table entry.
 *
 * Same bits as minlsh__siphash24_u64 (the specification); tests/test_kernels.c
 * compares them directly. The scheme is siphash_avx512.c's, with two sets
 * of 4 lanes (8 messages) interleaved: full words by masked gathers (never
 * outside a message), the last word from the scalar helper, lanes that are
 * done kept by a blend once the lengths differ, the finalisation in all
 * lanes at once. The round itself is common/siphash_x4.h's.
 */
#include "shingle.h"

#if MINLSH__WITH_AVX2

#if !defined(__AVX2__)
#error "siphash_avx2.c needs -mavx2 (mk/simd.mk)"
#endif

#include "common/siphash_x4.h"

/* The lanes of one set of 4 messages. */
typedef struct sip256_set {
    minlsh__sip_x4 st;
    __m256i idx;  /* byte offset of the next full word from base */
    __m256i nw;   /* full words per lane (len / 8) */
    __m256i last; /* the last word of each lane */
    __m256i live; /* all ones in the lanes that hold a message */
    size_t minw, maxw;
} sip256_set;

MINLSH__INLINE void sip256_set_init(sip256_set *s, uint64_t k0, uint64_t k1,
                                    const uint8_t *base, const uint8_t *const *msg,
                                    const size_t *len, unsigned lanes) {
    uint64_t f[4], o[4], n[4];
    unsigned l;
    minlsh__sip_x4_init(&s->st, _mm256_set1_epi64x((long long)k0),
                        _mm256_set1_epi64x((long long)k1));
    s->minw = lanes > 0 ? SIZE_MAX : 0;
    s->maxw = 0;
    for (l = 0; l < 4; l++) {
        if (l < lanes) {
            n[l] = len[l] >> 3;
            s->minw = n[l] < s->minw ? n[l] : s->minw;
            s->maxw = n[l] > s->maxw ? n[l] : s->maxw;
            f[l] = minlsh__sip_last_word(msg[l], len[l]);
            /* 64-bit address arithmetic: base + o is the message. */
            o[l] = (uint64_t)((uintptr_t)msg[l] - (uintptr_t)base);
        } else {
            f[l] = o[l] = n[l] = 0;
        }
    }
    /* Built from registers, not stored and reloaded (a vector load of
     * just-written scalars would wait for the stores). */
    s->last = _mm256_set_epi64x((long long)f[3], (long long)f[2], (long long)f[1], (long long)f[0]);
    s->idx = _mm256_set_epi64x((long long)o[3], (long long)o[2], (long long)o[1], (long long)o[0]);
    s->nw = _mm256_set_epi64x((long long)n[3], (long long)n[2], (long long)n[1], (long long)n[0]);
    s->live = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)lanes),
                                 _mm256_setr_epi64x(0, 1, 2, 3));
}

/* Step w, as in siphash_avx512.c: full words by masked gathers, the last
 * word at w = len / 8, lanes past it kept by a blend. Word counts are far
 * below 2^63, so the signed compares are exact. */
MINLSH__INLINE void sip256_set_step(sip256_set *s, const long long *base, size_t w) {
    const __m256i wv = _mm256_set1_epi64x((long long)w);
    const __m256i full = _mm256_and_si256(s->live, _mm256_cmpgt_epi64(s->nw, wv));
    __m256i m = _mm256_testz_si256(full, full)
                    ? s->last
                    : _mm256_mask_i64gather_epi64(s->last, base, s->idx, full, 1);
    minlsh__sip_x4 t = s->st;
    s->idx = _mm256_add_epi64(s->idx, _mm256_set1_epi64x(8));
    minlsh__sip_x4_absorb(&t, m);
    if (w <= s->minw) {
        s->st = t;
    } else {
        const __m256i busy = _mm256_andnot_si256(_mm256_cmpgt_epi64(wv, s->nw), s->live);
        s->st.v0 = _mm256_blendv_epi8(s->st.v0, t.v0, busy);
        s->st.v1 = _mm256_blendv_epi8(s->st.v1, t.v1, busy);
        s->st.v2 = _mm256_blendv_epi8(s->st.v2, t.v2, busy);
        s->st.v3 = _mm256_blendv_epi8(s->st.v3, t.v3, busy);
    }
}

MINLSH__INLINE void sip256_set_final(sip256_set *s, unsigned lanes, uint64_t *out) {
    uint64_t res[4];
    __m256i v0 = minlsh__sip_x4_final(&s->st);
    unsigned l;
    if (lanes == 4) {
        _mm256_storeu_si256((__m256i *)(void *)out, v0);
    } else {
        _mm256_storeu_si256((__m256i *)(void *)res, v0);
        for (l = 0; l < lanes; l++) out[l] = res[l];
    }
}

/* Up to 8 messages as two independent sets of 4 lanes, interleaved step by
 * step so that one set's rounds fill the other's latencies. */
static void sip256_group(uint64_t k0, uint64_t k1, const uint8_t *const *msg,
                         const size_t *len, unsigned lanes, uint64_t *out) {
    const uint8_t *base = msg[0];
    const long long *gbase = (const long long *)(const void *)base;
    sip256_set a, b;
    size_t w, maxw;
    unsigned la = lanes >= 4 ? 4u : lanes, lb = lanes - la;
    sip256_set_init(&a, k0, k1, base, msg, len, la);
    sip256_set_init(&b, k0, k1, base, msg + la, len + la, lb);
    maxw = a.maxw > b.maxw ? a.maxw : b.maxw;
    for (w = 0; w <= maxw; w++) {
        if (w <= a.maxw) sip256_set_step(&a, gbase, w);
        if (lb > 0 && w <= b.maxw) sip256_set_step(&b, gbase, w);
    }
    sip256_set_final(&a, la, out);
    if (lb > 0) sip256_set_final(&b, lb, out + la);
}

static void sip256_many(uint64_t k0, uint64_t k1, const uint8_t *const *msg,
                        const size_t *len, size_t n, uint64_t *out) {
    size_t i;
    for (i = 0; i < n; i += 8)
        sip256_group(k0, k1, msg + i, len + i, n - i >= 8 ? 8u : (unsigned)(n - i), out + i);
}

const minlsh__siphash_many_kernel minlsh__siphash_many_avx2 = {"avx2", sip256_many};

#else
/* Compiled out (MINLSH_NO_AVX2 or not x86-64): ISO C wants a declaration. */
typedef int minlsh__siphash_avx2_unused;
#endif
