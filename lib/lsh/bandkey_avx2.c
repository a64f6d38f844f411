/*
 * Band keys with AVX2: eight bands at once in two vectors of four 64-bit
 * SipHash-2-4 states (two independent chains keep the vector units busy).
 * All b messages of a signature have the same length (4r bytes), so the
 * lanes go through the same rounds in lockstep; only the key (LE64(j) ||
 * "mlshband") and the message differ per lane. Compiled with -mavx2 only
 * (mk/simd.mk) and reached only through the dispatcher in bandkey.c after
 * CPUID and XGETBV said yes, so everything here is static but the one entry
 * point.
 *
 * The SipHash round and finalisation are common/siphash_x4.h's, shared with
 * the shingler. Same bits as the scalar SipHash (the specification,
 * docs/lsh.md section 3); tests/test_kernels.c compares every implementation
 * with it directly.
 */
#include "lsh.h"

#if MINLSH__WITH_AVX2

#if !defined(__AVX2__)
#error "bandkey_avx2.c needs -mavx2 (mk/simd.mk)"
#endif

#include "common/siphash_x4.h"
#include "shingle/shingle.h"

/* The lanes of bands j0 .. j0+n-1 (n in 1..8): a in lanes 0-3, b in 4-7.
 * Lanes past n are masked off: their messages are never read. */
static void bk2_lanes(const uint32_t *sig, uint32_t rows, uint32_t j0, uint32_t n,
                      uint64_t *keys) {
    const long long len = (long long)rows * 4;
    const size_t words = (size_t)len / 8;
    const __m256i la = _mm256_setr_epi64x(j0, j0 + 1, j0 + 2, j0 + 3);
    const __m256i lb = _mm256_setr_epi64x(j0 + 4, j0 + 5, j0 + 6, j0 + 7);
    const __m256i ma = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)(j0 + n)), la);
    const __m256i mb = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)(j0 + n)), lb);
    const __m256i salt = _mm256_set1_epi64x((long long)MINLSH__BAND_KEY_SALT);
    const __m256i eight = _mm256_set1_epi64x(8);
    __m256i oa = _mm256_setr_epi64x(0, len, 2 * len, 3 * len);
    __m256i ob = _mm256_add_epi64(oa, _mm256_set1_epi64x(4 * len));
    minlsh__sip_x4 a, b;
    __m256i xa, xb, ka, kb;
    const long long *base = (const long long *)(const void *)(sig + (size_t)j0 * rows);
    size_t w;
    uint32_t l;
    minlsh__sip_x4_init(&a, la, salt);
    minlsh__sip_x4_init(&b, lb, salt);
    for (w = 0; w < words; w++) {
        xa = _mm256_mask_i64gather_epi64(_mm256_setzero_si256(), base, oa, ma, 1);
        xb = _mm256_mask_i64gather_epi64(_mm256_setzero_si256(), base, ob, mb, 1);
        oa = _mm256_add_epi64(oa, eight);
        ob = _mm256_add_epi64(ob, eight);
        minlsh__sip_x4_absorb(&a, xa);
        minlsh__sip_x4_absorb(&b, xb);
    }
    xa = xb = _mm256_set1_epi64x((long long)((uint64_t)len << 56));
    if (len & 4) {
        const int *base32 = (const int *)(const void *)base;
        __m128i ta = _mm256_mask_i64gather_epi32(_mm_setzero_si128(), base32, oa,
                                                 _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                                                     ma, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6))),
                                                 1);
        __m128i tb = _mm256_mask_i64gather_epi32(_mm_setzero_si128(), base32, ob,
                                                 _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                                                     mb, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6))),
                                                 1);
        xa = _mm256_or_si256(xa, _mm256_cvtepu32_epi64(ta));
        xb = _mm256_or_si256(xb, _mm256_cvtepu32_epi64(tb));
    }
    minlsh__sip_x4_absorb(&a, xa);
    minlsh__sip_x4_absorb(&b, xb);
    ka = minlsh__sip_x4_final(&a);
    kb = minlsh__sip_x4_final(&b);
    {
        uint64_t out[8];
        _mm256_storeu_si256((__m256i *)(void *)out, ka);
        _mm256_storeu_si256((__m256i *)(void *)(out + 4), kb);
        for (l = 0; l < n; l++) keys[l] = out[l];
    }
}

void minlsh__lsh_band_keys_avx2(const uint32_t *sig, uint32_t bands, uint32_t rows,
                                uint64_t *keys) {
    uint32_t j = 0;
    for (; j + 8 <= bands; j += 8) bk2_lanes(sig, rows, j, 8, keys + j);
    if (bands - j > 2) {
        bk2_lanes(sig, rows, j, bands - j, keys + j);
        return;
    }
    for (; j < bands; j++)
        keys[j] = minlsh__siphash24_u64(j, MINLSH__BAND_KEY_SALT, sig + (size_t)j * rows,
                                        (size_t)rows * 4);
}

/* minlsh__lsh_sig_hash (bandkey.c has the definition): the sum of the pair
 * products is a sum mod 2^64, so any grouping of the terms gives the same
 * bits. Four pairs per vector, as in the AVX-512 file. */
uint64_t minlsh__lsh_sig_hash_avx2(const uint32_t *sig, uint32_t k) {
    const uint32_t c0 = UINT32_C(0x9E3779B9), c1 = UINT32_C(0x85EBCA77);
    __m256i off = _mm256_setr_epi32((int)(c0 * 1), (int)(c1 * 2), (int)(c0 * 3), (int)(c1 * 4),
                                    (int)(c0 * 5), (int)(c1 * 6), (int)(c0 * 7), (int)(c1 * 8));
    const __m256i step = _mm256_set1_epi64x((long long)(((uint64_t)(c1 * 8) << 32) | (c0 * 8)));
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    uint64_t lanes[4], sum;
    uint32_t i = 0, pairs = k & ~UINT32_C(1);
    for (; i + 16 <= pairs; i += 16) {
        const __m256i *in = (const __m256i *)(const void *)(sig + i);
        __m256i a = _mm256_add_epi32(_mm256_loadu_si256(in), off);
        __m256i b;
        off = _mm256_add_epi32(off, step);
        b = _mm256_add_epi32(_mm256_loadu_si256(in + 1), off);
        off = _mm256_add_epi32(off, step);
        acc0 = _mm256_add_epi64(acc0, _mm256_mul_epu32(a, _mm256_srli_epi64(a, 32)));
        acc1 = _mm256_add_epi64(acc1, _mm256_mul_epu32(b, _mm256_srli_epi64(b, 32)));
    }
    _mm256_storeu_si256((__m256i *)(void *)lanes, _mm256_add_epi64(acc0, acc1));
    sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    /* The last pairs (fewer than eight) one by one, with their offsets. */
    for (; i < pairs; i += 2) {
        uint32_t x = sig[i] + c0 * (i + 1), y = sig[i + 1] + c1 * (i + 2);
        sum += (uint64_t)x * y;
    }
    if (k & 1) sum += (uint64_t)(sig[k - 1] + UINT32_C(0x632BE5AB)) * UINT32_C(0xC2B2AE3D);
    return minlsh__mix64(sum ^ ((uint64_t)k << 32));
}

/* Positions where a and b agree (the estimate's numerator): eight
 * comparisons per instruction, the tail one by one. */
uint32_t minlsh__lsh_equal_count_avx2(const uint32_t *a, const uint32_t *b, uint32_t k) {
    uint32_t i = 0, n = 0;
    for (; i + 8 <= k; i += 8) {
        __m256i eq = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(a + i)),
                                        _mm256_loadu_si256((const __m256i *)(const void *)(b + i)));
        n += (uint32_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq)));
    }
    for (; i < k; i++) n += a[i] == b[i];
    return n;
}

#else
typedef int minlsh__bandkey_avx2_unused; /* ISO C wants a declaration */
#endif
