/*
 * Band keys, an interchange format (docs/lsh.md): key j is SipHash-2-4 with
 * the 16-byte key LE64(j) || "mlshband" over the r values
 * sig[j*r .. j*r+r-1], each as 4 little-endian bytes.
 */
#include "lsh.h"

#include "shingle/shingle.h"

/* "mlshband" read as a little-endian 64-bit integer: the second key word. */
#define MINLSH__BAND_KEY_SALT UINT64_C(0x646e616268736c6d)

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) &&             \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MINLSH__LSH_NATIVE_LE 1
#else
#define MINLSH__LSH_NATIVE_LE 0
#endif

void minlsh__lsh_band_keys(const uint32_t *sig, uint32_t bands, uint32_t rows,
                           uint64_t *keys) {
    uint32_t j;
    for (j = 0; j < bands; j++) {
        const uint32_t *band = sig + (size_t)j * rows;
#if MINLSH__LSH_NATIVE_LE
        /* The values in memory already are the message bytes. */
        keys[j] = minlsh__siphash24_u64(j, MINLSH__BAND_KEY_SALT, band, (size_t)rows * 4);
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
        keys[j] = minlsh__siphash_final64(&s);
#endif
    }
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
