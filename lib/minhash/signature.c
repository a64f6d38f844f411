/* Operations on bare signatures (arrays of k uint32_t): merge, estimate,
 * emptiness. Pure functions, thread-safe. */
#include "minhash.h"

int minlsh_signature_merge(uint32_t *dst, const uint32_t *src, size_t k) {
    size_t i;
    if (dst == NULL || src == NULL) return MINLSH_E_NULL;
    if (k == 0) return MINLSH_E_PARAM;
    /* Exact: each value is a monotone function (>> 29) of a minimum, and
     * the empty value 0xFFFFFFFF is the identity. */
    for (i = 0; i < k; i++) dst[i] = src[i] < dst[i] ? src[i] : dst[i];
    return 0;
}

static int minlsh__signature_empty(const uint32_t *sig, size_t k) {
    size_t i;
    for (i = 0; i < k; i++)
        if (sig[i] != MINLSH_EMPTY_VALUE) return 0;
    return 1;
}

int minlsh_signature_is_empty(const uint32_t *sig, size_t k) {
    if (sig == NULL) return MINLSH_E_NULL;
    if (k == 0) return MINLSH_E_PARAM;
    return minlsh__signature_empty(sig, k);
}

int minlsh_signature_estimate(double *out, const uint32_t *a, const uint32_t *b,
                              size_t k) {
    size_t i, equal = 0;
    if (out == NULL || a == NULL || b == NULL) return MINLSH_E_NULL;
    if (k == 0) return MINLSH_E_PARAM;
    /* Two empty documents would otherwise agree everywhere and look
     * identical; empty pages must never cluster together. */
    if (minlsh__signature_empty(a, k) || minlsh__signature_empty(b, k)) {
        *out = 0.0;
        return 0;
    }
    for (i = 0; i < k; i++) equal += a[i] == b[i];
    *out = (double)equal / (double)k;
    return 0;
}
