/*
 * The AVX2 MinHash kernel: four functions at once, one 64-bit lane each,
 * the hash broadcast to all lanes. Compiled with -mavx2 only (mk/simd.mk)
 * and reached only through the dispatcher after CPUID and XGETBV said yes,
 * so everything here is static but the kernel table entry.
 *
 * Same bits as the portable kernel (the specification); tests/test_kernels.c
 * checks it directly. The product is the carry-free limb form described in
 * kernel_avx512.c: a = ah 2^30 + al, x = xh 2^31 + xl,
 *   t = al xl + ah xh + ((2 al xh + ah xl) >> 31)
 *       + (((2 al xh + ah xl) << 30) & p) + (b + 1)  < 2^63,
 * t = a x + b + 1 (mod p), t >= 1, and f = (t & p) + (t >> 61) lies in
 * [1, p + 3] with f = r + 1 (mod p), r = h(x) in [0, p). AVX2 has no
 * unsigned 64-bit compare or minimum, so the key is w = f << 2 compared as
 * a signed number: for f <= p, f = r + 1 and w = 4 (r + 1) >= 0; for
 * f = 2^61 + r (r <= 2, the rare case where the fold lands above p) w is
 * negative. So the signed minimum of w is either exact (no negative key:
 * r_min = w / 4 - 1) or comes from an element with r <= 2, and then the true
 * minimum is also <= 2 and its signature value r >> 29 is 0. Either way the
 * value stored is exactly (min r) >> 29.
 *
 * k need not be a multiple of 4: the last vector's coefficients are loaded
 * with a mask (zeros beyond k) and only its valid lanes are stored.
 */
#include "kernel.h"

#if MINLSH__WITH_AVX2

#if !defined(__AVX2__)
#error "kernel_avx2.c needs -mavx2 (mk/simd.mk)"
#endif

#include <immintrin.h>

#define MH256_BLOCK 256

#define MH256_CONSTS(u, i, mask)                                               \
    __m256i a_##u = _mm256_maskload_epi64((const long long *)(a + (i)), (mask)); \
    __m256i al_##u = _mm256_and_si256(a_##u, m30);                             \
    __m256i al2_##u = _mm256_add_epi64(al_##u, al_##u);                        \
    __m256i ah_##u = _mm256_srli_epi64(a_##u, 30);                             \
    __m256i b1_##u = _mm256_add_epi64(                                         \
        _mm256_maskload_epi64((const long long *)(b + (i)), (mask)), one);     \
    __m256i acc_##u = smax

/* The limbs are below 2^32, and clang knows it: it turns each vpmuludq
 * into a generic 64-bit multiply and drops the masks, but the instruction
 * selector, which looks at one basic block at a time, no longer sees that
 * the loop-invariant limbs fit in 32 bits and emits a full 64x64 multiply
 * (three vpmuludq, or vpmullq). An empty asm makes the limbs opaque inside
 * the loop, so the 32-bit masks stay next to the multiplies and each stays
 * one vpmuludq. It generates no instruction. */
#define MH_OPAQUE(v) __asm__("" : "+v"(v))

/* acc = signed min(acc, w). */
#define MH256_MIN(acc, w)                                                      \
    _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(acc),             \
                                         _mm256_castsi256_pd(w),               \
                                         _mm256_castsi256_pd(_mm256_cmpgt_epi64((acc), (w)))))

#define MH256_STEP(u)                                                          \
    do {                                                                       \
        MH_OPAQUE(al_##u);                                                     \
        MH_OPAQUE(al2_##u);                                                    \
        MH_OPAQUE(ah_##u);                                                     \
        __m256i lo_ = _mm256_mul_epu32(al_##u, x0);                            \
        __m256i hi_ = _mm256_mul_epu32(ah_##u, x1);                            \
        __m256i m_ = _mm256_add_epi64(_mm256_mul_epu32(al2_##u, x1),           \
                                      _mm256_mul_epu32(ah_##u, x0));           \
        __m256i t_ = _mm256_add_epi64(                                         \
            _mm256_add_epi64(lo_, hi_),                                        \
            _mm256_add_epi64(b1_##u, _mm256_srli_epi64(m_, 31)));              \
        t_ = _mm256_add_epi64(t_, _mm256_and_si256(_mm256_slli_epi64(m_, 30), p)); \
        t_ = _mm256_add_epi64(_mm256_and_si256(t_, p), _mm256_srli_epi64(t_, 61)); \
        acc_##u = MH256_MIN(acc_##u, _mm256_slli_epi64(t_, 2));                \
    } while (0)

/* sig[i + l] = min(sig[i + l], value) for l < lanes, the value decoded from
 * the signed minimum key as explained above. */
#define MH256_STORE(u, i, lanes)                                               \
    do {                                                                       \
        int64_t w_[4];                                                         \
        unsigned l_;                                                           \
        _mm256_storeu_si256((__m256i *)(void *)w_, acc_##u);                   \
        for (l_ = 0; l_ < (lanes); l_++) {                                     \
            uint32_t v_ = w_[l_] < 0 ? 0u : (uint32_t)((((uint64_t)w_[l_] >> 2) - 1) >> 29); \
            if (v_ < sig[(i) + l_]) sig[(i) + l_] = v_;                        \
        }                                                                      \
    } while (0)

static void mh256_update(const uint64_t *a, const uint64_t *b, uint32_t k,
                         const uint64_t *hashes, size_t n, uint32_t *sig) {
    uint64_t xl[MH256_BLOCK] __attribute__((aligned(32)));
    uint64_t xh[MH256_BLOCK] __attribute__((aligned(32)));
    const __m256i p = _mm256_set1_epi64x((long long)MINLSH_PRIME);
    const __m256i m30 = _mm256_set1_epi64x((1 << 30) - 1);
    const __m256i m31 = _mm256_set1_epi64x((1LL << 31) - 1);
    const __m256i all = _mm256_set1_epi64x(-1);
    const __m256i one = _mm256_set1_epi64x(1);
    const __m256i smax = _mm256_set1_epi64x(INT64_MAX);
    size_t off, nb, j;
    uint32_t i;
    for (off = 0; off < n; off += nb) {
        nb = n - off < MH256_BLOCK ? n - off : MH256_BLOCK;
        /* x = h mod p exactly, split into its limbs; the tail of the block
         * is read with a mask, never past the caller's array. */
        for (j = 0; j < nb; j += 4) {
            __m256i mk = nb - j >= 4 ? all
                                     : _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)(nb - j)),
                                                          _mm256_set_epi64x(3, 2, 1, 0));
            __m256i h = _mm256_maskload_epi64((const long long *)(hashes + off + j), mk);
            __m256i t = _mm256_add_epi64(_mm256_and_si256(h, p), _mm256_srli_epi64(h, 61));
            __m256i d = _mm256_sub_epi64(t, p);
            __m256i x = _mm256_castpd_si256(_mm256_blendv_pd(
                _mm256_castsi256_pd(d), _mm256_castsi256_pd(t), _mm256_castsi256_pd(d)));
            _mm256_store_si256((__m256i *)(void *)(xl + j), _mm256_and_si256(x, m31));
            _mm256_store_si256((__m256i *)(void *)(xh + j), _mm256_srli_epi64(x, 31));
        }
        /* Functions 8 at a time (two chains; AVX2 has 16 registers). */
        for (i = 0; i + 8 <= k; i += 8) {
            MH256_CONSTS(0, i, all);
            MH256_CONSTS(1, i + 4, all);
            for (j = 0; j < nb; j++) {
                const __m256i x0 = _mm256_set1_epi64x((long long)xl[j]);
                const __m256i x1 = _mm256_set1_epi64x((long long)xh[j]);
                MH256_STEP(0);
                MH256_STEP(1);
            }
            MH256_STORE(0, i, 4);
            MH256_STORE(1, i + 4, 4);
        }
        for (; i < k; i += 4) {
            unsigned lanes = k - i >= 4 ? 4u : k - i;
            __m256i mk = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)lanes),
                                            _mm256_set_epi64x(3, 2, 1, 0));
            MH256_CONSTS(0, i, mk);
            for (j = 0; j < nb; j++) {
                const __m256i x0 = _mm256_set1_epi64x((long long)xl[j]);
                const __m256i x1 = _mm256_set1_epi64x((long long)xh[j]);
                MH256_STEP(0);
            }
            MH256_STORE(0, i, lanes);
        }
    }
}

/* One-permutation binning, four hashes per vector (one per lane, the
 * coefficients broadcast): the exact v = (a x + b) mod p with the limbs
 * above (here t = a x + b, not + 1, and fully reduced: f = (t & p) +
 * (t >> 61) lies in [0, p + 4], and v = f - p when that is not negative),
 * then v k from v's 32-bit halves as in the portable code: lo = vl k,
 * hi = vh k + (lo >> 32). Each lane leaves bin = hi >> 29 in its high
 * 32 bits (the high half of hi << 3) and value = the low 32 bits of
 * (hi 2^32 + lo mod 2^32) >> 29 in its low 32 bits. The minimum into the
 * bins is a scalar pass over the block: two hashes of a block may share a
 * bin. */
static void oph256_update(uint64_t a, uint64_t b, uint32_t k, const uint64_t *hashes,
                          size_t n, uint32_t *bins) {
    uint64_t packed[MH256_BLOCK] __attribute__((aligned(32)));
    const __m256i p = _mm256_set1_epi64x((long long)MINLSH_PRIME);
    const __m256i m31 = _mm256_set1_epi64x((1LL << 31) - 1);
    const __m256i all = _mm256_set1_epi64x(-1);
    const __m256i al = _mm256_set1_epi64x((long long)(a & ((1u << 30) - 1)));
    const __m256i al2 = _mm256_add_epi64(al, al);
    const __m256i ah = _mm256_set1_epi64x((long long)(a >> 30));
    const __m256i bv = _mm256_set1_epi64x((long long)b);
    const __m256i kv = _mm256_set1_epi64x((long long)k);
    size_t off, nb, j;
    for (off = 0; off < n; off += nb) {
        nb = n - off < MH256_BLOCK ? n - off : MH256_BLOCK;
        for (j = 0; j < nb; j += 4) {
            __m256i mk = nb - j >= 4 ? all
                                     : _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)(nb - j)),
                                                          _mm256_set_epi64x(3, 2, 1, 0));
            __m256i h = _mm256_maskload_epi64((const long long *)(hashes + off + j), mk);
            __m256i t = _mm256_add_epi64(_mm256_and_si256(h, p), _mm256_srli_epi64(h, 61));
            __m256i d = _mm256_sub_epi64(t, p);
            __m256i x = _mm256_castpd_si256(_mm256_blendv_pd(
                _mm256_castsi256_pd(d), _mm256_castsi256_pd(t), _mm256_castsi256_pd(d)));
            __m256i xl = _mm256_and_si256(x, m31), xh = _mm256_srli_epi64(x, 31);
            __m256i m = _mm256_add_epi64(_mm256_mul_epu32(al2, xh), _mm256_mul_epu32(ah, xl));
            __m256i lo, hi, w;
            t = _mm256_add_epi64(_mm256_add_epi64(_mm256_mul_epu32(al, xl), _mm256_mul_epu32(ah, xh)),
                                 _mm256_add_epi64(bv, _mm256_srli_epi64(m, 31)));
            t = _mm256_add_epi64(t, _mm256_and_si256(_mm256_slli_epi64(m, 30), p));
            t = _mm256_add_epi64(_mm256_and_si256(t, p), _mm256_srli_epi64(t, 61));
            d = _mm256_sub_epi64(t, p);
            x = _mm256_castpd_si256(_mm256_blendv_pd(
                _mm256_castsi256_pd(d), _mm256_castsi256_pd(t), _mm256_castsi256_pd(d)));
            lo = _mm256_mul_epu32(x, kv);
            hi = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), kv),
                                  _mm256_srli_epi64(lo, 32));
            w = _mm256_blend_epi32(lo, _mm256_slli_epi64(hi, 32), 0xAA);
            _mm256_store_si256((__m256i *)(void *)(packed + j),
                               _mm256_blend_epi32(_mm256_srli_epi64(w, 29),
                                                  _mm256_slli_epi64(hi, 3), 0xAA));
        }
        for (j = 0; j < nb; j++) {
            uint32_t bin = (uint32_t)(packed[j] >> 32), val = (uint32_t)packed[j];
            minlsh__oph_keep_min(bins, bin, val);
        }
    }
}

const minlsh__minhash_kernel minlsh__minhash_kernel_avx2 = {"avx2", mh256_update, oph256_update};

#else
/* Compiled out (MINLSH_NO_AVX2 or not x86-64): ISO C wants a declaration. */
typedef int minlsh__minhash_avx2_unused;
#endif
