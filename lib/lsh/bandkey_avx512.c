/*
 * Band keys with AVX-512: eight bands at once, one SipHash-2-4 state per
 * 64-bit lane, and two such sets interleaved. All b messages of a signature
 * have the same length (4r bytes), so the lanes go through the same rounds
 * in lockstep; only the key (LE64(j) || "mlshband") and the message differ
 * per lane. Short bands' words are put in their lanes by permutes of
 * contiguous loads, long bands' by gathers (bk512_src). Compiled with
 * -mavx512f -mavx512dq -mavx512bw -mavx512vl only (mk/simd.mk) and reached
 * only through the dispatcher in bandkey.c after CPUID and XGETBV said yes,
 * so everything here is static but the one entry point.
 *
 * The SipHash round and finalisation are common/siphash_x8.h's (and
 * common/siphash.h's for the scalar lane), shared with the shingler. Same
 * bits as the scalar SipHash (the specification, docs/lsh.md section 3);
 * tests/test_kernels.c compares every implementation with it directly.
 */
#include "lsh.h"

#if MINLSH__WITH_AVX512

#if !defined(__AVX512F__) || !defined(__AVX512DQ__) || !defined(__AVX512BW__) || \
    !defined(__AVX512VL__)
#error "bandkey_avx512.c needs -mavx512f -mavx512dq -mavx512bw -mavx512vl (mk/simd.mk)"
#endif

#include "common/siphash_x8.h"
#include "shingle/shingle.h"

/* Where the messages of a set of eight bands j0 .. j0+7 are read from.
 * They lie one after the other (4r bytes each) from base. With r <= 6 all
 * eight of a word's 16 dwords are within 48 dwords of its first, so a word
 * is three masked loads and two dword permutes (no dword past the
 * signature's b r is read: the loads are masked, and masked-off elements
 * never fault); longer bands are read with a gather. Lanes past the live
 * ones read what they may and their keys are not stored. */
#define BK512_PERM_ROWS 6

typedef struct bk512_src {
    const uint32_t *base;
    size_t avail;   /* dwords readable from base */
    __m512i idx;    /* permute: dwords l r, l r + 1 of lane l */
    __mmask16 high; /* permute: elements from the third load */
    __m512i off;    /* gather: byte offset of each lane's next word */
    __mmask8 live;
    int perm;
} bk512_src;

MINLSH__INLINE void bk512_src_init(bk512_src *src, const uint32_t *sig, size_t total,
                                   uint32_t rows, uint32_t j0, __mmask8 live) {
    const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    src->base = sig + (size_t)j0 * rows;
    src->avail = total - (size_t)j0 * rows;
    src->live = live;
    src->perm = rows <= BK512_PERM_ROWS;
    if (src->perm) {
        /* Dword 2l of idx is l r, dword 2l + 1 is l r + 1. */
        const __m512i pair = _mm512_setr_epi32(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
        __m512i lr = _mm512_mullo_epi32(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                                          6, 7, 7),
                                        _mm512_set1_epi32((int)rows));
        src->idx = _mm512_add_epi32(lr, pair);
        src->high = _mm512_cmpge_epu32_mask(src->idx, _mm512_set1_epi32(32));
        src->off = _mm512_setzero_si512();
    } else {
        src->off = _mm512_mullo_epi64(lane, _mm512_set1_epi64((long long)rows * 4));
        src->idx = _mm512_setzero_si512();
        src->high = 0;
    }
}

/* The 16 dwords from base + at, as far as they may be read (zeros after). */
MINLSH__INLINE __m512i bk512_load16(const bk512_src *src, size_t at) {
    size_t n = src->avail > at ? src->avail - at : 0;
    __mmask16 m = (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
    return _mm512_maskz_loadu_epi32(m, src->base + (n > 0 ? at : 0));
}

/* Word w (dwords 2w, 2w + 1) of every lane's message, one 64-bit lane each. */
MINLSH__INLINE __m512i bk512_word(const bk512_src *src, size_t w) {
    if (src->perm) {
        size_t at = 2 * w;
        __m512i lo = _mm512_permutex2var_epi32(bk512_load16(src, at), src->idx,
                                               bk512_load16(src, at + 16));
        return _mm512_mask_permutexvar_epi32(lo, src->high, src->idx,
                                             bk512_load16(src, at + 32));
    }
    return _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), src->live,
                                       _mm512_add_epi64(src->off, _mm512_set1_epi64(
                                                                      (long long)(8 * w))),
                                       (const void *)src->base, 1);
}

/* The last word of messages of len bytes: the 4 bytes after the full
 * words when len is odd in dwords, and the length in the top byte. */
MINLSH__INLINE __m512i bk512_last(const bk512_src *src, size_t len) {
    __m512i m = _mm512_set1_epi64((long long)((uint64_t)len << 56));
    __m512i t;
    if (!(len & 4)) return m;
    if (src->perm) {
        /* The word starting at the tail dword (masked loads: nothing past
         * the signature is read); its second dword is dropped. */
        t = _mm512_maskz_mov_epi32((__mmask16)0x5555u, bk512_word(src, len / 8));
    } else {
        /* Only the tail dword is gathered: the last band's is the
         * signature's last. */
        __m512i at = _mm512_add_epi64(src->off, _mm512_set1_epi64((long long)(len & ~(size_t)7)));
        t = _mm512_cvtepu32_epi64(_mm512_mask_i64gather_epi32(_mm256_setzero_si256(), src->live,
                                                              at, (const void *)src->base, 1));
    }
    return _mm512_or_si512(m, t);
}

/* Keys of bands j0 .. j0+n-1 (n in 1..8) into keys[0..n), and, when sj is
 * not 0 (scalar lane wanted), of band sj too, into *skey: one SipHash in
 * general-purpose registers, independent of the vector rounds, so the
 * ninth band of b = 9 costs almost nothing. */
static void bk512_lanes(const uint32_t *sig, size_t total, uint32_t rows, uint32_t j0,
                        uint32_t n, uint64_t *keys, int scalar, uint32_t sj, uint64_t *skey) {
    const __mmask8 live = (__mmask8)((1u << n) - 1u);
    const size_t len = (size_t)rows * 4, words = len / 8;
    const __m512i lane = _mm512_add_epi64(_mm512_set1_epi64((long long)j0),
                                          _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
    const __m512i salt = _mm512_set1_epi64((long long)MINLSH__BAND_KEY_SALT);
    const unsigned char *sm = (const unsigned char *)(sig + (size_t)sj * rows);
    uint64_t s0 = (uint64_t)sj ^ MINLSH__SIP_C0, s1 = MINLSH__BAND_KEY_SALT ^ MINLSH__SIP_C1;
    uint64_t s2 = (uint64_t)sj ^ MINLSH__SIP_C2, s3 = MINLSH__BAND_KEY_SALT ^ MINLSH__SIP_C3, sw;
    minlsh__sip_x8 v;
    bk512_src src;
    size_t w;
    bk512_src_init(&src, sig, total, rows, j0, live);
    minlsh__sip_x8_init(&v, lane, salt);
    for (w = 0; w < words; w++) {
        if (scalar) {
            sw = minlsh__load64le(sm + 8 * w);
            MINLSH__SIP_ABSORB(s0, s1, s2, s3, sw);
        }
        minlsh__sip_x8_absorb(&v, bk512_word(&src, w));
    }
    minlsh__sip_x8_absorb(&v, bk512_last(&src, len));
    _mm512_mask_storeu_epi64(keys, live, minlsh__sip_x8_final(&v));
    if (scalar) {
        sw = (uint64_t)len << 56;
        if (len & 4) sw |= minlsh__load32le(sm + 8 * words);
        MINLSH__SIP_ABSORB(s0, s1, s2, s3, sw);
        s2 ^= 0xff;
        MINLSH__SIP_FINAL_ROUNDS(s0, s1, s2, s3);
        *skey = s0 ^ s1 ^ s2 ^ s3;
    }
}

/* Keys of bands j0 .. j0+7 and j0+8 .. j0+8+nb-1 (nb in 1..8): two sets
 * of lanes whose rounds are interleaved, so that one set's fill the
 * other's latencies (a set's rounds are one chain of dependent
 * instructions). */
static void bk512_two(const uint32_t *sig, size_t total, uint32_t rows, uint32_t j0,
                      uint32_t nb, uint64_t *keys) {
    const __mmask8 live_b = (__mmask8)((1u << nb) - 1u);
    const size_t len = (size_t)rows * 4, words = len / 8;
    const __m512i lane_a = _mm512_add_epi64(_mm512_set1_epi64((long long)j0),
                                            _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
    const __m512i lane_b = _mm512_add_epi64(lane_a, _mm512_set1_epi64(8));
    const __m512i salt = _mm512_set1_epi64((long long)MINLSH__BAND_KEY_SALT);
    minlsh__sip_x8 va, vb;
    bk512_src sa, sb;
    size_t w;
    bk512_src_init(&sa, sig, total, rows, j0, (__mmask8)0xFFu);
    bk512_src_init(&sb, sig, total, rows, j0 + 8, live_b);
    minlsh__sip_x8_init(&va, lane_a, salt);
    minlsh__sip_x8_init(&vb, lane_b, salt);
    for (w = 0; w < words; w++) {
        minlsh__sip_x8_absorb(&va, bk512_word(&sa, w));
        minlsh__sip_x8_absorb(&vb, bk512_word(&sb, w));
    }
    minlsh__sip_x8_absorb(&va, bk512_last(&sa, len));
    minlsh__sip_x8_absorb(&vb, bk512_last(&sb, len));
    _mm512_storeu_si512((void *)keys, minlsh__sip_x8_final(&va));
    _mm512_mask_storeu_epi64(keys + 8, live_b, minlsh__sip_x8_final(&vb));
}

void minlsh__lsh_band_keys_avx512(const uint32_t *sig, uint32_t bands, uint32_t rows,
                                  uint64_t *keys) {
    const size_t total = (size_t)bands * rows;
    uint32_t j = 0;
    /* Two sets at a time (17 left: 8, then 9 with the scalar lane below). */
    for (; bands - j >= 16 && bands - j != 17; j += 16)
        bk512_two(sig, total, rows, j, 8, keys + j);
    if (bands - j >= 10 && bands - j <= 15) {
        bk512_two(sig, total, rows, j, bands - j - 8, keys + j);
        return;
    }
    for (; j + 8 <= bands; j += 8) {
        /* One band left over: hash it beside the last full vector. */
        if (bands - j == 9) {
            bk512_lanes(sig, total, rows, j, 8, keys + j, 1, j + 8, keys + j + 8);
            return;
        }
        bk512_lanes(sig, total, rows, j, 8, keys + j, 0, 0, NULL);
    }
    if (j < bands) bk512_lanes(sig, total, rows, j, bands - j, keys + j, 0, 0, NULL);
}

/* minlsh__lsh_sig_hash (bandkey.c has the definition): the sum of the pair
 * products is a sum mod 2^64, so any grouping of the terms gives the same
 * bits. Here eight pairs per vector: each 64-bit lane holds x (low half)
 * and y (high half) of one pair, once the per-position offsets are added,
 * and VPMULUDQ multiplies them. */
uint64_t minlsh__lsh_sig_hash_avx512(const uint32_t *sig, uint32_t k) {
    /* Offsets of positions 0..15: (p even ? C0 : C1) * (p + 1) mod 2^32. */
    const uint32_t c0 = UINT32_C(0x9E3779B9), c1 = UINT32_C(0x85EBCA77);
    __m512i off = _mm512_setr_epi32(
        (int)(c0 * 1), (int)(c1 * 2), (int)(c0 * 3), (int)(c1 * 4), (int)(c0 * 5),
        (int)(c1 * 6), (int)(c0 * 7), (int)(c1 * 8), (int)(c0 * 9), (int)(c1 * 10),
        (int)(c0 * 11), (int)(c1 * 12), (int)(c0 * 13), (int)(c1 * 14), (int)(c0 * 15),
        (int)(c1 * 16));
    const __m512i step = _mm512_set1_epi64((long long)(((uint64_t)(c1 * 16) << 32) | (c0 * 16)));
    __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    uint32_t i = 0, pairs = k & ~UINT32_C(1);
    uint64_t sum;
    for (; i + 32 <= pairs; i += 32) {
        __m512i a = _mm512_add_epi32(_mm512_loadu_si512((const void *)(sig + i)), off);
        __m512i b;
        off = _mm512_add_epi32(off, step);
        b = _mm512_add_epi32(_mm512_loadu_si512((const void *)(sig + i + 16)), off);
        off = _mm512_add_epi32(off, step);
        acc0 = _mm512_add_epi64(acc0, _mm512_mul_epu32(a, _mm512_srli_epi64(a, 32)));
        acc1 = _mm512_add_epi64(acc1, _mm512_mul_epu32(b, _mm512_srli_epi64(b, 32)));
    }
    for (; i < pairs; i += 16) {
        /* The last 2..30 values of the pairs: lanes past them are masked
         * out of the load and of the sum. */
        uint32_t left = pairs - i < 16 ? pairs - i : 16;
        __mmask16 m = (__mmask16)((1u << left) - 1u);
        __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, sig + i), off);
        off = _mm512_add_epi32(off, step);
        acc0 = _mm512_mask_add_epi64(acc0, (__mmask8)((1u << (left / 2)) - 1u), acc0,
                                     _mm512_mul_epu32(a, _mm512_srli_epi64(a, 32)));
    }
    {
        /* Summed as unsigned: the header's reduce_add adds signed lanes,
         * whose wrap-around is undefined behaviour in C. */
        uint64_t lanes[8];
        int l;
        _mm512_storeu_si512((void *)lanes, _mm512_add_epi64(acc0, acc1));
        for (sum = 0, l = 0; l < 8; l++) sum += lanes[l];
    }
    if (k & 1) sum += (uint64_t)(sig[k - 1] + UINT32_C(0x632BE5AB)) * UINT32_C(0xC2B2AE3D);
    return minlsh__mix64(sum ^ ((uint64_t)k << 32));
}

/* Positions where a and b agree (the estimate's numerator): sixteen
 * comparisons per instruction, the tail under a mask. */
uint32_t minlsh__lsh_equal_count_avx512(const uint32_t *a, const uint32_t *b, uint32_t k) {
    uint32_t i = 0, n = 0;
    for (; i + 16 <= k; i += 16)
        n += (uint32_t)__builtin_popcount(_mm512_cmpeq_epi32_mask(
            _mm512_loadu_si512((const void *)(a + i)), _mm512_loadu_si512((const void *)(b + i))));
    if (i < k) {
        __mmask16 m = (__mmask16)((1u << (k - i)) - 1u);
        n += (uint32_t)__builtin_popcount(_mm512_mask_cmpeq_epi32_mask(
            m, _mm512_maskz_loadu_epi32(m, a + i), _mm512_maskz_loadu_epi32(m, b + i)));
    }
    return n;
}

#else
typedef int minlsh__bandkey_avx512_unused; /* ISO C wants a declaration */
#endif
