/*
 * The AVX-512 MinHash kernel: eight functions at once, one 64-bit lane each,
 * the hash broadcast to all lanes. Compiled with -mavx512f -mavx512dq
 * -mavx512bw -mavx512vl only (mk/simd.mk) and reached only through the
 * dispatcher after CPUID and XGETBV said yes, so everything here is static
 * but the kernel table entry: no generic helper may be emitted with AVX-512
 * instructions in it for the linker to pick up elsewhere.
 *
 * Same bits as the portable kernel (the specification), by the argument
 * below; tests/test_kernels.c checks it directly on random and edge inputs.
 *
 * Exact product from 32x32->64-bit multiplies (vpmuludq) with limbs chosen
 * so that nothing needs a carry: a = ah 2^30 + al (al < 2^30, ah < 2^31),
 * x = xh 2^31 + xl (xl < 2^31, xh < 2^30). Then, with 2^61 = 1 (mod p),
 *   a x = al xl + ah xh 2^61 + (2 al xh + ah xl) 2^30
 *       = lo + hi + m 2^30,   lo, hi < 2^61, m < 2^61 + 2^62 < 2^63,
 * and m 2^30 = (m >> 31) 2^61 + (m mod 2^31) 2^30
 *           = (m >> 31) + ((m << 30) & p)   (mod p).
 * t = lo + hi + (m >> 31) + ((m << 30) & p) + (b + 1) < 2^63 (no wrap), and
 * t = a x + b + 1 (mod p). One Mersenne fold gives f = (t & p) + (t >> 61)
 * in [1, p + 3] (t >= 1, so f = 0 is impossible), f = r + 1 (mod p) where
 * r = h(x) in [0, p). Instead of a conditional subtraction, rotate left by
 * three: for f <= p that is 8 f = 8 (r + 1); for f = 2^61 + r (r <= 2) it is
 * 8 r + 1. Either way w lies in [8 r + 1, 8 r + 8], so w is strictly
 * increasing in r, min w comes from min r, and r_min = (w_min - 1) >> 3.
 * The signature value is r_min >> 29 = (w_min - 1) >> 32, folded into sig
 * with the same element-wise minimum as the portable kernel.
 */
#include "kernel.h"

#if MINLSH__WITH_AVX512

#if !defined(__AVX512F__) || !defined(__AVX512DQ__) || !defined(__AVX512BW__) || \
    !defined(__AVX512VL__)
#error "kernel_avx512.c needs -mavx512f -mavx512dq -mavx512bw -mavx512vl (mk/simd.mk)"
#endif

#include <immintrin.h>

/* Hashes reduced per block: two 2 KiB arrays that stay in L1. */
#define MH512_BLOCK 256

/* The per-function constants of one vector of 8 functions. */
#define MH512_CONSTS(u, i, mask)                                               \
    __m512i a_##u = _mm512_maskz_loadu_epi64((mask), a + (i));                 \
    __m512i al_##u = _mm512_and_si512(a_##u, m30);                             \
    __m512i al2_##u = _mm512_add_epi64(al_##u, al_##u);                        \
    __m512i ah_##u = _mm512_srli_epi64(a_##u, 30);                             \
    __m512i b1_##u = _mm512_add_epi64(_mm512_maskz_loadu_epi64((mask), b + (i)), one); \
    __m512i acc_##u = _mm512_set1_epi64(-1)

/* The limbs are below 2^32, and clang knows it: it turns each vpmuludq
 * into a generic 64-bit multiply and drops the masks, but the instruction
 * selector, which looks at one basic block at a time, no longer sees that
 * the loop-invariant limbs fit in 32 bits and emits a full 64x64 multiply
 * (three vpmuludq, or vpmullq). An empty asm makes the limbs opaque inside
 * the loop, so the 32-bit masks stay next to the multiplies and each stays
 * one vpmuludq. It generates no instruction. */
#define MH_OPAQUE(v) __asm__("" : "+v"(v))

/* One hash (x0 = xl, x1 = xh broadcast) into the running minima of vector u. */
#define MH512_STEP(u)                                                          \
    do {                                                                       \
        MH_OPAQUE(al_##u);                                                     \
        MH_OPAQUE(al2_##u);                                                    \
        MH_OPAQUE(ah_##u);                                                     \
        __m512i lo_ = _mm512_mul_epu32(al_##u, x0);                            \
        __m512i hi_ = _mm512_mul_epu32(ah_##u, x1);                            \
        __m512i m_ = _mm512_add_epi64(_mm512_mul_epu32(al2_##u, x1),           \
                                      _mm512_mul_epu32(ah_##u, x0));           \
        __m512i t_ = _mm512_add_epi64(                                         \
            _mm512_add_epi64(lo_, hi_),                                        \
            _mm512_add_epi64(b1_##u, _mm512_srli_epi64(m_, 31)));              \
        t_ = _mm512_add_epi64(t_, _mm512_and_si512(_mm512_slli_epi64(m_, 30), p)); \
        t_ = _mm512_add_epi64(_mm512_and_si512(t_, p), _mm512_srli_epi64(t_, 61)); \
        acc_##u = _mm512_min_epu64(acc_##u, _mm512_rol_epi64(t_, 3));          \
    } while (0)

/* sig[i..i+8) = min(sig, (w_min - 1) >> 32) on the lanes in mask. */
#define MH512_STORE(u, i, mask)                                                \
    do {                                                                       \
        __m256i v_ = _mm512_cvtepi64_epi32(                                    \
            _mm512_srli_epi64(_mm512_sub_epi64(acc_##u, one), 32));            \
        __m256i s_ = _mm256_maskz_loadu_epi32((mask), sig + (i));              \
        _mm256_mask_storeu_epi32(sig + (i), (mask), _mm256_min_epu32(s_, v_)); \
    } while (0)

/* The lanes of a vector of n functions (1..8): all eight from n = 8 on. */
#define MH512_MASK(n) ((n) >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (n)) - 1))

/* steps once per hash of the block, x0 and x1 its limbs broadcast. */
#define MH512_EACH_HASH(steps)                                                 \
    for (j = 0; j < nb; j++) {                                                 \
        const __m512i x0 = _mm512_set1_epi64((long long)xl[j]);               \
        const __m512i x1 = _mm512_set1_epi64((long long)xh[j]);               \
        steps                                                                  \
    }

static void mh512_update(const uint64_t *a, const uint64_t *b, uint32_t k,
                         const uint64_t *hashes, size_t n, uint32_t *sig) {
    uint64_t xl[MH512_BLOCK] __attribute__((aligned(64)));
    uint64_t xh[MH512_BLOCK] __attribute__((aligned(64)));
    const __m512i p = _mm512_set1_epi64((long long)MINLSH_PRIME);
    const __m512i m30 = _mm512_set1_epi64((1 << 30) - 1);
    const __m512i m31 = _mm512_set1_epi64((1LL << 31) - 1);
    const __m512i one = _mm512_set1_epi64(1);
    const __mmask8 all = 0xFF;
    size_t off, nb, j;
    uint32_t i;
    for (off = 0; off < n; off += nb) {
        nb = n - off < MH512_BLOCK ? n - off : MH512_BLOCK;
        /* x = h mod p exactly (docs/minhash.md 1.2), split into its limbs.
         * The conditional subtraction is an unsigned minimum: t - p wraps
         * to a huge value exactly when t < p. */
        for (j = 0; j < nb; j += 8) {
            __mmask8 mk = nb - j >= 8 ? all : (__mmask8)((1u << (nb - j)) - 1);
            __m512i h = _mm512_maskz_loadu_epi64(mk, hashes + off + j);
            __m512i t = _mm512_add_epi64(_mm512_and_si512(h, p), _mm512_srli_epi64(h, 61));
            __m512i x = _mm512_min_epu64(t, _mm512_sub_epi64(t, p));
            _mm512_store_si512((void *)(xl + j), _mm512_and_si512(x, m31));
            _mm512_store_si512((void *)(xh + j), _mm512_srli_epi64(x, 31));
        }
        /* Functions 32 at a time, four independent chains per hash, while
         * more than 24 remain: the fourth vector masked when fewer than 32
         * do (k need not be a multiple of 32: the dedup engine signs
         * bands x rows values, 90 at its default plan; masked-off lanes
         * load zeros and store nothing). */
        for (i = 0; i + 24 < k; i += 32) {
            const __mmask8 m3 = MH512_MASK(k - i - 24);
            MH512_CONSTS(0, i, all);
            MH512_CONSTS(1, i + 8, all);
            MH512_CONSTS(2, i + 16, all);
            MH512_CONSTS(3, i + 24, m3);
            MH512_EACH_HASH(MH512_STEP(0); MH512_STEP(1); MH512_STEP(2); MH512_STEP(3););
            MH512_STORE(0, i, all);
            MH512_STORE(1, i + 8, all);
            MH512_STORE(2, i + 16, all);
            MH512_STORE(3, i + 24, m3);
        }
        /* The rest, 1 to 24 functions, in one pass of as many chains as
         * they fill, not a pass per vector. */
        switch ((k - i + 7) / 8) {
        case 3: {
            MH512_CONSTS(0, i, all);
            MH512_CONSTS(1, i + 8, all);
            MH512_CONSTS(2, i + 16, MH512_MASK(k - i - 16));
            MH512_EACH_HASH(MH512_STEP(0); MH512_STEP(1); MH512_STEP(2););
            MH512_STORE(0, i, all);
            MH512_STORE(1, i + 8, all);
            MH512_STORE(2, i + 16, MH512_MASK(k - i - 16));
            break;
        }
        case 2: {
            MH512_CONSTS(0, i, all);
            MH512_CONSTS(1, i + 8, MH512_MASK(k - i - 8));
            MH512_EACH_HASH(MH512_STEP(0); MH512_STEP(1););
            MH512_STORE(0, i, all);
            MH512_STORE(1, i + 8, MH512_MASK(k - i - 8));
            break;
        }
        case 1: {
            MH512_CONSTS(0, i, MH512_MASK(k - i));
            MH512_EACH_HASH(MH512_STEP(0););
            MH512_STORE(0, i, MH512_MASK(k - i));
            break;
        }
        default:
            break;
        }
    }
}

/* One-permutation binning, eight hashes per vector (one per lane, the
 * coefficients broadcast): the exact v = (a x + b) mod p with the limbs
 * above (here t = a x + b, not + 1, and fully reduced: f = (t & p) +
 * (t >> 61) lies in [0, p + 4], and v is the unsigned minimum of f and
 * f - p), then v k from v's 32-bit halves as in the portable code:
 * lo = vl k, hi = vh k + (lo >> 32). Each lane leaves bin = hi >> 29 in
 * its high 32 bits (the high half of hi << 3) and value = the low 32 bits
 * of (hi 2^32 + lo mod 2^32) >> 29 in its low 32 bits. The minimum into
 * the bins is a scalar pass over the block: two hashes of a block may share
 * a bin. */
static void oph512_update(uint64_t a, uint64_t b, uint32_t k, const uint64_t *hashes,
                          size_t n, uint32_t *bins) {
    uint64_t packed[MH512_BLOCK] __attribute__((aligned(64)));
    const __m512i p = _mm512_set1_epi64((long long)MINLSH_PRIME);
    const __m512i m31 = _mm512_set1_epi64((1LL << 31) - 1);
    const __m512i al = _mm512_set1_epi64((long long)(a & ((1u << 30) - 1)));
    const __m512i al2 = _mm512_add_epi64(al, al);
    const __m512i ah = _mm512_set1_epi64((long long)(a >> 30));
    const __m512i bv = _mm512_set1_epi64((long long)b);
    const __m512i kv = _mm512_set1_epi64((long long)k);
    const __mmask16 odd = 0xAAAA;
    size_t off, nb, j;
    for (off = 0; off < n; off += nb) {
        nb = n - off < MH512_BLOCK ? n - off : MH512_BLOCK;
        for (j = 0; j < nb; j += 8) {
            __mmask8 mk = nb - j >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (nb - j)) - 1);
            __m512i h = _mm512_maskz_loadu_epi64(mk, hashes + off + j);
            __m512i t = _mm512_add_epi64(_mm512_and_si512(h, p), _mm512_srli_epi64(h, 61));
            __m512i x = _mm512_min_epu64(t, _mm512_sub_epi64(t, p));
            __m512i xl = _mm512_and_si512(x, m31), xh = _mm512_srli_epi64(x, 31);
            __m512i m = _mm512_add_epi64(_mm512_mul_epu32(al2, xh), _mm512_mul_epu32(ah, xl));
            __m512i lo, hi, w;
            t = _mm512_add_epi64(_mm512_add_epi64(_mm512_mul_epu32(al, xl), _mm512_mul_epu32(ah, xh)),
                                 _mm512_add_epi64(bv, _mm512_srli_epi64(m, 31)));
            t = _mm512_add_epi64(t, _mm512_and_si512(_mm512_slli_epi64(m, 30), p));
            t = _mm512_add_epi64(_mm512_and_si512(t, p), _mm512_srli_epi64(t, 61));
            x = _mm512_min_epu64(t, _mm512_sub_epi64(t, p));
            lo = _mm512_mul_epu32(x, kv);
            hi = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(x, 32), kv),
                                  _mm512_srli_epi64(lo, 32));
            w = _mm512_mask_blend_epi32(odd, lo, _mm512_slli_epi64(hi, 32));
            _mm512_store_si512((void *)(packed + j),
                               _mm512_mask_blend_epi32(odd, _mm512_srli_epi64(w, 29),
                                                       _mm512_slli_epi64(hi, 3)));
        }
        for (j = 0; j < nb; j++) {
            uint32_t bin = (uint32_t)(packed[j] >> 32), val = (uint32_t)packed[j];
            minlsh__oph_keep_min(bins, bin, val);
        }
    }
}

const minlsh__minhash_kernel minlsh__minhash_kernel_avx512 = {"avx512", mh512_update, oph512_update};

#else
/* Compiled out (MINLSH_NO_AVX512 or not x86-64): ISO C wants a declaration. */
typedef int minlsh__minhash_avx512_unused;
#endif
