/*
 * Band keys, an interchange format (docs/lsh.md): key j is SipHash-2-4 with
 * the 16-byte key LE64(j) || "mlshband" over the r values
 * sig[j*r .. j*r+r-1], each as 4 little-endian bytes.
 *
 * All b messages of a signature have the same length, so the SIMD files
 * (bandkey_avx2.c, bandkey_avx512.c) hash eight bands at once in lockstep;
 * this file has the scalar specification and picks the implementation of
 * the process's SIMD level (lib/common/cpu.c chooses it once). Every
 * implementation gives the same bits.
 */
#include "lsh.h"

#include "shingle/shingle.h"

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) &&             \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MINLSH__LSH_NATIVE_LE 1
#else
#define MINLSH__LSH_NATIVE_LE 0
#endif

uint64_t minlsh__lsh_band_key(const uint32_t *sig, uint32_t j, uint32_t rows) {
    const uint32_t *band = sig + (size_t)j * rows;
#if MINLSH__LSH_NATIVE_LE
    /* The values in memory already are the message bytes. */
    return minlsh__siphash24_u64(j, MINLSH__BAND_KEY_SALT, band, (size_t)rows * 4);
#else
    minlsh__siphash s;
    uint8_t buf[256];
    uint32_t i = 0;
    minlsh__siphash_init(&s, j, MINLSH__BAND_KEY_SALT, 0);
    while (i < rows) {
        size_t n = 0;
        for (; i < rows && n < sizeof buf; i++, n += 4) minlsh__store32le(buf + n, band[i]);
        minlsh__siphash_update(&s, buf, n);
    }
    return minlsh__siphash_final64(&s);
#endif
}

uint64_t minlsh__lsh_band_key_le(const uint8_t *band, uint32_t j, uint32_t rows) {
    return minlsh__siphash24_u64(j, MINLSH__BAND_KEY_SALT, band, (size_t)rows * 4);
}

void minlsh__lsh_band_keys_portable(const uint32_t *sig, uint32_t bands,
                                    uint32_t rows, uint64_t *keys) {
    uint32_t j;
    for (j = 0; j < bands; j++) keys[j] = minlsh__lsh_band_key(sig, j, rows);
}

int minlsh_band_keys(const uint32_t *sig, size_t k, uint32_t bands,
                     uint32_t rows, uint64_t *keys, size_t cap, size_t *n_out) {
    if (sig == NULL) return MINLSH_E_NULL;
    if (bands == 0 || rows == 0 || (uint64_t)bands * rows > (uint64_t)k)
        return MINLSH_E_PARAM;
    if (n_out != NULL) *n_out = bands;
    if (cap < bands) return MINLSH_E_BUFSIZE;
    if (keys == NULL) return MINLSH_E_NULL;
    minlsh__lsh_band_keys(sig, bands, rows, keys);
    return 0;
}

/* NH-style: sum of products of value pairs offset by fixed odd constants,
 * mod 2^64, then a bijective mix. Vectorises well; only used to put
 * identical signatures together (collisions are settled by comparing). */
uint64_t minlsh__lsh_sig_hash_portable(const uint32_t *sig, uint32_t k) {
    /* Four independent sums in registers: four multiplies in flight (an
     * array of sums would be kept in memory, one store-to-load chain). */
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    uint32_t i, c0 = UINT32_C(0x9E3779B9), c1 = UINT32_C(0x85EBCA77) * 2;
    for (i = 0; i + 8 <= k; i += 8) {
        /* x_m = sig[m] + C0*(m+1), y_m = sig[m+1] + C1*(m+2), m = i + 2l */
        a0 += (uint64_t)(sig[i] + c0) * (uint32_t)(sig[i + 1] + c1);
        a1 += (uint64_t)(sig[i + 2] + c0 + UINT32_C(0x9E3779B9) * 2) *
              (uint32_t)(sig[i + 3] + c1 + UINT32_C(0x85EBCA77) * 2);
        a2 += (uint64_t)(sig[i + 4] + c0 + UINT32_C(0x9E3779B9) * 4) *
              (uint32_t)(sig[i + 5] + c1 + UINT32_C(0x85EBCA77) * 4);
        a3 += (uint64_t)(sig[i + 6] + c0 + UINT32_C(0x9E3779B9) * 6) *
              (uint32_t)(sig[i + 7] + c1 + UINT32_C(0x85EBCA77) * 6);
        c0 += UINT32_C(0x9E3779B9) * 8;
        c1 += UINT32_C(0x85EBCA77) * 8;
    }
    for (; i + 1 < k; i += 2) {
        uint32_t x = sig[i] + (uint32_t)(UINT32_C(0x9E3779B9) * (i + 1));
        uint32_t y = sig[i + 1] + (uint32_t)(UINT32_C(0x85EBCA77) * (i + 2));
        a0 += (uint64_t)x * y;
    }
    if (k & 1) a1 += (uint64_t)(sig[k - 1] + UINT32_C(0x632BE5AB)) * UINT32_C(0xC2B2AE3D);
    return minlsh__mix64((a0 + a1 + a2 + a3) ^ ((uint64_t)k << 32));
}

uint32_t minlsh__lsh_equal_count_portable(const uint32_t *a, const uint32_t *b, uint32_t k) {
    uint32_t i, e0 = 0, e1 = 0, e2 = 0, e3 = 0;
    /* Four independent counts (compilers at -O2 leave this loop scalar). */
    for (i = 0; i + 4 <= k; i += 4) {
        e0 += a[i] == b[i];
        e1 += a[i + 1] == b[i + 1];
        e2 += a[i + 2] == b[i + 2];
        e3 += a[i + 3] == b[i + 3];
    }
    for (; i < k; i++) e0 += a[i] == b[i];
    return e0 + e1 + e2 + e3;
}

/* ---- the kernels of each SIMD level, and the dispatch ------------------- */

static const minlsh__lsh_kernels minlsh__lsh_kernels_portable = {
    "portable", minlsh__lsh_band_keys_portable, minlsh__lsh_sig_hash_portable,
    minlsh__lsh_equal_count_portable};
#if MINLSH__WITH_AVX2
static const minlsh__lsh_kernels minlsh__lsh_kernels_avx2 = {
    "avx2", minlsh__lsh_band_keys_avx2, minlsh__lsh_sig_hash_avx2, minlsh__lsh_equal_count_avx2};
#endif
#if MINLSH__WITH_AVX512
static const minlsh__lsh_kernels minlsh__lsh_kernels_avx512 = {
    "avx512", minlsh__lsh_band_keys_avx512, minlsh__lsh_sig_hash_avx512,
    minlsh__lsh_equal_count_avx512};
#endif

static const minlsh__lsh_kernels *const minlsh__lsh_levels[MINLSH__SIMD_LEVELS] =
    MINLSH__KERNEL_LEVELS(&minlsh__lsh_kernels_portable, &minlsh__lsh_kernels_avx2,
                          &minlsh__lsh_kernels_avx512);

MINLSH__KERNEL_DISPATCH(minlsh__lsh_kernels, minlsh__lsh_kernels, minlsh__lsh_levels)

void minlsh__lsh_band_keys(const uint32_t *sig, uint32_t bands, uint32_t rows,
                           uint64_t *keys) {
    /* One or two bands fill too few lanes to pay for the vector setup. */
    if (bands > 2) minlsh__lsh_kernels_active()->band_keys(sig, bands, rows, keys);
    else minlsh__lsh_band_keys_portable(sig, bands, rows, keys);
}

uint64_t minlsh__lsh_sig_hash(const uint32_t *sig, uint32_t k) {
    return minlsh__lsh_kernels_active()->sig_hash(sig, k);
}

uint32_t minlsh__lsh_equal_count(const uint32_t *a, const uint32_t *b, uint32_t k) {
    return minlsh__lsh_kernels_active()->equal_count(a, b, k);
}
