/*
 * The portable MinHash kernel: the specification of every signature bit.
 *
 * h_i(x) = (a_i x + b_i) mod p, p = 2^61 - 1, computed exactly: the product
 * needs up to 122 bits and is never allowed to wrap at 64 (docs/minhash.md).
 * Two ways to get the product, identical in result:
 *  - wide: one 64x64->128-bit multiply (unsigned __int128);
 *  - limb: four 32x32->64-bit multiplies, for compilers without __int128.
 */
#include "kernel.h"

#define MINLSH__P MINLSH_PRIME
/* Hashes reduced per block; the reduced block (2 KiB) stays in L1. */
#define MINLSH__MH_BLOCK 256

#if defined(__SIZEOF_INT128__)
#define MINLSH__MH_HAVE_INT128 1
__extension__ typedef unsigned __int128 minlsh__mh_u128;
#else
#define MINLSH__MH_HAVE_INT128 0
#endif

/* t mod p for t < 2^64 whose value mod p is wanted: (t & p) + (t >> 61) is
 * congruent (2^61 = 1 mod p) and at most p + 7 < 2p, so one conditional
 * subtract finishes. */
MINLSH__INLINE uint64_t minlsh__mh_fold(uint64_t t) {
    t = (t & MINLSH__P) + (t >> 61);
    return t >= MINLSH__P ? t - MINLSH__P : t;
}

#if MINLSH__MH_HAVE_INT128
/* a8 = a << 3 (a < 2^61 so it fits): then the high word of a8 * x is
 * floor(a x / 2^61) and the low word is (a x mod 2^61) << 3, which saves the
 * shifts and masks of splitting the 128-bit product at bit 61. Sum of the
 * three terms < 3 * 2^61: no overflow. */
MINLSH__INLINE uint64_t minlsh__mh_wide(uint64_t a8, uint64_t x, uint64_t b) {
    minlsh__mh_u128 prod = (minlsh__mh_u128)a8 * x;
    return minlsh__mh_fold((uint64_t)(prod >> 64) + ((uint64_t)prod >> 3) + b);
}
#endif

/* a, x < 2^61 split as a1 2^32 + a0 (a1, x1 < 2^29). With 2^64 = 8 and
 * 2^61 = 1 (mod p):
 *   a x = hi 2^64 + mid 2^32 + lo
 *       = 8 hi + (mid >> 29) + (mid mod 2^29) 2^32 + (lo & p) + (lo >> 61)
 * where hi < 2^58, mid < 2^62, lo < 2^64. Every term is below 2^61 (or far
 * below), so with b the sum stays under 2^63 + 2^34: no overflow. */
MINLSH__INLINE uint64_t minlsh__mh_limb(uint64_t a, uint64_t x, uint64_t b) {
    uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32;
    uint64_t x0 = x & 0xFFFFFFFFu, x1 = x >> 32;
    uint64_t lo = a0 * x0, mid = a0 * x1 + a1 * x0, hi = a1 * x1;
    uint64_t t = (hi << 3) + (mid >> 29) + ((mid & 0x1FFFFFFFu) << 32) +
                 (lo & MINLSH__P) + (lo >> 61) + b;
    return minlsh__mh_fold(t);
}

/* The coefficient as the product routine wants it. */
MINLSH__INLINE uint64_t minlsh__mh_prep(uint64_t a, int wide) {
#if MINLSH__MH_HAVE_INT128
    return wide ? a << 3 : a;
#else
    (void)wide;
    return a;
#endif
}

MINLSH__INLINE uint64_t minlsh__mh_h(uint64_t ap, uint64_t x, uint64_t b, int wide) {
#if MINLSH__MH_HAVE_INT128
    if (wide) return minlsh__mh_wide(ap, x, b);
#else
    (void)wide;
#endif
    return minlsh__mh_limb(ap, x, b);
}

MINLSH__INLINE uint64_t minlsh__mh_min(uint64_t acc, uint64_t v) {
    return v < acc ? v : acc;
}

/* Fold a block's 61-bit minimum into the 32-bit value: exact, because
 * x -> x >> 29 is monotone, so min(sig, m >> 29) = (min of the 61-bit
 * values) >> 29 however the hashes are split into blocks or calls. */
MINLSH__INLINE void minlsh__mh_store(uint32_t *sig, uint64_t m) {
    uint32_t v = (uint32_t)(m >> 29);
    if (v < *sig) *sig = v;
}

/* One body for both product routines; wide is a constant at each call site,
 * so the compiler specialises it. For each block of hashes (reduced once),
 * functions are taken four at a time with the running minima in registers:
 * four independent dependency chains, one load of x per four products. */
MINLSH__INLINE void minlsh__mh_update(const uint64_t *a, const uint64_t *b,
                                      uint32_t k, const uint64_t *hashes,
                                      size_t n, uint32_t *sig, int wide) {
    uint64_t xs[MINLSH__MH_BLOCK];
    size_t off, nb, j;
    uint32_t i;
    for (off = 0; off < n; off += nb) {
        nb = n - off < MINLSH__MH_BLOCK ? n - off : MINLSH__MH_BLOCK;
        for (j = 0; j < nb; j++) xs[j] = minlsh__mh_fold(hashes[off + j]);
        for (i = 0; i + 4 <= k; i += 4) {
            uint64_t a0 = minlsh__mh_prep(a[i], wide), b0 = b[i];
            uint64_t a1 = minlsh__mh_prep(a[i + 1], wide), b1 = b[i + 1];
            uint64_t a2 = minlsh__mh_prep(a[i + 2], wide), b2 = b[i + 2];
            uint64_t a3 = minlsh__mh_prep(a[i + 3], wide), b3 = b[i + 3];
            uint64_t m0 = UINT64_MAX, m1 = UINT64_MAX, m2 = UINT64_MAX, m3 = UINT64_MAX;
            for (j = 0; j < nb; j++) {
                uint64_t x = xs[j];
                m0 = minlsh__mh_min(m0, minlsh__mh_h(a0, x, b0, wide));
                m1 = minlsh__mh_min(m1, minlsh__mh_h(a1, x, b1, wide));
                m2 = minlsh__mh_min(m2, minlsh__mh_h(a2, x, b2, wide));
                m3 = minlsh__mh_min(m3, minlsh__mh_h(a3, x, b3, wide));
            }
            minlsh__mh_store(&sig[i], m0);
            minlsh__mh_store(&sig[i + 1], m1);
            minlsh__mh_store(&sig[i + 2], m2);
            minlsh__mh_store(&sig[i + 3], m3);
        }
        for (; i < k; i++) {
            uint64_t ai = minlsh__mh_prep(a[i], wide), bi = b[i], m = UINT64_MAX;
            for (j = 0; j < nb; j++) m = minlsh__mh_min(m, minlsh__mh_h(ai, xs[j], bi, wide));
            minlsh__mh_store(&sig[i], m);
        }
    }
}

#if MINLSH__MH_HAVE_INT128
static void minlsh__mh_update_wide(const uint64_t *a, const uint64_t *b,
                                   uint32_t k, const uint64_t *hashes, size_t n,
                                   uint32_t *sig) {
    minlsh__mh_update(a, b, k, hashes, n, sig, 1);
}
#endif

static void minlsh__mh_update_limb(const uint64_t *a, const uint64_t *b,
                                   uint32_t k, const uint64_t *hashes, size_t n,
                                   uint32_t *sig) {
    minlsh__mh_update(a, b, k, hashes, n, sig, 0);
}

/* One-permutation binning. v k < k 2^61 <= 2^71 does not fit in 64 bits, so
 * it is formed from v's 32-bit halves: lo = vl k < 2^42 and
 * hi = vh k + (lo >> 32) < 2^40 make v k = hi 2^32 + (lo mod 2^32); then
 * the bin is hi >> 29 and the top 32 of the low 61 bits are
 * (hi mod 2^29) 2^3 + (lo mod 2^32) >> 29. */
MINLSH__INLINE void minlsh__mh_oph(uint64_t a, uint64_t b, uint32_t k, const uint64_t *hashes,
                                   size_t n, uint32_t *bins, int wide) {
    const uint64_t ap = minlsh__mh_prep(a, wide);
    size_t j;
    for (j = 0; j < n; j++) {
        uint64_t v = minlsh__mh_h(ap, minlsh__mh_fold(hashes[j]), b, wide);
        uint64_t lo = (v & 0xFFFFFFFFu) * k;
        uint64_t hi = (v >> 32) * k + (lo >> 32);
        uint32_t bin = (uint32_t)(hi >> 29);
        uint32_t val = (uint32_t)(((hi & 0x1FFFFFFFu) << 3) | ((lo & 0xFFFFFFFFu) >> 29));
        minlsh__oph_keep_min(bins, bin, val);
    }
}

#if MINLSH__MH_HAVE_INT128
static void minlsh__mh_oph_wide(uint64_t a, uint64_t b, uint32_t k, const uint64_t *hashes,
                                size_t n, uint32_t *bins) {
    minlsh__mh_oph(a, b, k, hashes, n, bins, 1);
}
#endif

static void minlsh__mh_oph_limb(uint64_t a, uint64_t b, uint32_t k, const uint64_t *hashes,
                                size_t n, uint32_t *bins) {
    minlsh__mh_oph(a, b, k, hashes, n, bins, 0);
}

const minlsh__minhash_kernel minlsh__minhash_kernel_portable = {
#if MINLSH__MH_HAVE_INT128
    "portable", minlsh__mh_update_wide, minlsh__mh_oph_wide
#else
    "portable", minlsh__mh_update_limb, minlsh__mh_oph_limb
#endif
};

const minlsh__minhash_kernel minlsh__minhash_kernel_portable_limb = {
    "portable-limb", minlsh__mh_update_limb, minlsh__mh_oph_limb
};

#ifdef MINLSH_TESTING
uint64_t minlsh__minhash_reduce(uint64_t h) { return minlsh__mh_fold(h); }

uint64_t minlsh__minhash_apply_wide(uint64_t a, uint64_t b, uint64_t h) {
    return minlsh__mh_h(minlsh__mh_prep(a, 1), minlsh__mh_fold(h), b, 1);
}

uint64_t minlsh__minhash_apply_limb(uint64_t a, uint64_t b, uint64_t h) {
    return minlsh__mh_limb(a, minlsh__mh_fold(h), b);
}

int minlsh__minhash_has_int128(void) { return MINLSH__MH_HAVE_INT128; }
#endif
