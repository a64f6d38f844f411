/*
 * The MinHash family: k functions h_i(x) = (a_i x + b_i) mod p with the
 * coefficients derived from a 64-bit seed (docs/minhash.md), and signing.
 * Two schemes share the handle: classic (k functions, the default) and
 * one-permutation hashing (h_0 picks one of k bins, oph.c). A family is
 * immutable after creation: any number of threads may sign with it at once.
 */
#include "minhash.h"

#include "kernel.h"

struct minlsh_family {
    minlsh_allocator alloc;
    uint32_t k;
    uint32_t scheme; /* MINLSH_SCHEME_* */
    uint64_t seed;
    uint64_t dkey;          /* OPH densification key: a_1 of the seed */
    const uint16_t *probes; /* OPH: k * MINLSH__OPH_TABLED densification probes */
    const uint64_t *a; /* k values in [1, p) */
    const uint64_t *b; /* k values in [0, p) */
    uint64_t coef[];   /* a then b */
};

/* SplitMix64, the published generator: the sequence other languages
 * re-derive the coefficients from. */
uint64_t minlsh__splitmix64(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void minlsh__family_derive(uint64_t seed, uint32_t k, uint64_t *a, uint64_t *b) {
    uint64_t state = seed, v;
    uint32_t i;
    /* Draws interleave a_0, b_0, a_1, b_1, ... so the first k functions do
     * not depend on k: a family is a prefix of any larger one. Rejection
     * (not "mod p") keeps each coefficient exactly uniform. */
    for (i = 0; i < k; i++) {
        do {
            v = minlsh__splitmix64(&state) >> 3;
        } while (v == 0 || v == MINLSH_PRIME);
        a[i] = v;
        do {
            v = minlsh__splitmix64(&state) >> 3;
        } while (v == MINLSH_PRIME);
        b[i] = v;
    }
}

int minlsh_family_new_scheme(minlsh_family **out, uint32_t k, uint64_t seed,
                             uint32_t scheme, const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_family *f;
    uint64_t *a, *b, a2[2], b2[2];
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (k == 0 || k > MINLSH_FAMILY_K_MAX) return MINLSH_E_PARAM;
    if (scheme > MINLSH__SCHEME_MAX) return MINLSH_E_PARAM;
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    /* k <= 1024: the size cannot overflow. An OPH family also holds its
     * probe table (32 bytes per bin) after the coefficients. */
    f = (minlsh_family *)minlsh__malloc(
        &al, sizeof *f + 2 * (size_t)k * sizeof(uint64_t) +
                 (scheme == MINLSH_SCHEME_OPH ? (size_t)k * MINLSH__OPH_TABLED * sizeof(uint16_t)
                                              : 0));
    if (f == NULL) return MINLSH_E_NOMEM;
    f->alloc = al;
    f->k = k;
    f->scheme = scheme;
    f->seed = seed;
    a = f->coef;
    b = f->coef + k;
    minlsh__family_derive(seed, k, a, b);
    f->a = a;
    f->b = b;
    f->probes = NULL;
    f->dkey = 0;
    if (scheme == MINLSH_SCHEME_OPH) {
        /* The key is a_1 of the seed, derived for k = 1 too (one bin never
         * densifies, but the table is defined). */
        uint16_t *probes = (uint16_t *)(void *)(f->coef + 2 * (size_t)k);
        minlsh__family_derive(seed, 2, a2, b2);
        f->dkey = a2[1];
        minlsh__oph_probes(f->dkey, k, probes);
        f->probes = probes;
    }
    *out = f;
    return 0;
}

int minlsh_family_new(minlsh_family **out, uint32_t k, uint64_t seed,
                      const minlsh_allocator *alloc) {
    return minlsh_family_new_scheme(out, k, seed, MINLSH_SCHEME_CLASSIC, alloc);
}

uint32_t minlsh_family_scheme(const minlsh_family *family) {
    return family != NULL ? family->scheme : 0;
}

void minlsh_family_free(minlsh_family *family) {
    if (family != NULL) {
        minlsh_allocator al = family->alloc;
        minlsh__free(&al, family);
    }
}

uint32_t minlsh_family_k(const minlsh_family *family) {
    return family != NULL ? family->k : 0;
}

uint64_t minlsh_family_seed(const minlsh_family *family) {
    return family != NULL ? family->seed : 0;
}

int minlsh_family_copy_coefficients(const minlsh_family *family, uint64_t *a,
                               uint64_t *b, size_t cap, size_t *n_out) {
    if (family == NULL) return MINLSH_E_NULL;
    if (n_out != NULL) *n_out = family->k;
    if (a == NULL && b == NULL) return cap < family->k ? MINLSH_E_BUFSIZE : 0;
    if (cap < family->k) return MINLSH_E_BUFSIZE;
    if (a != NULL) memcpy(a, family->a, family->k * sizeof *a);
    if (b != NULL) memcpy(b, family->b, family->k * sizeof *b);
    return 0;
}

int minlsh__family_check_sig(const minlsh_family *family, const uint32_t *sig,
                             size_t cap, size_t *n_out) {
    if (family == NULL) return MINLSH_E_NULL;
    if (n_out != NULL) *n_out = family->k;
    /* (NULL, 0) is a size query: BUFSIZE with the size, like every buffer. */
    if (cap < family->k) return MINLSH_E_BUFSIZE;
    if (sig == NULL) return MINLSH_E_NULL;
    return 0;
}

void minlsh__family_update_raw(const minlsh_family *family, uint32_t *sig,
                               const uint64_t *hashes, size_t n) {
    if (n == 0) return;
    if (family->scheme == MINLSH_SCHEME_OPH)
        minlsh__oph_update(family->a[0], family->b[0], family->k, hashes, n, sig);
    else
        minlsh__minhash_kernel_active()->update(family->a, family->b, family->k,
                                                hashes, n, sig);
}

const minlsh_allocator *minlsh__family_alloc(const minlsh_family *family) {
    return &family->alloc;
}

uint32_t *minlsh__family_work_get(const minlsh_family *family, uint32_t *stack) {
    if (family->scheme != MINLSH_SCHEME_OPH) return stack;
    return (uint32_t *)minlsh__kbuf_get(&family->alloc, stack, MINLSH__FAMILY_WORK_STACK,
                                        2 * (size_t)family->k, sizeof *stack);
}

void minlsh__family_work_put(const minlsh_family *family, const uint32_t *stack,
                             uint32_t *work) {
    minlsh__kbuf_put(&family->alloc, stack, work);
}

void minlsh__family_finish_raw(const minlsh_family *family, uint32_t *sig, uint32_t *work) {
    if (family->scheme != MINLSH_SCHEME_OPH) return;
    /* The densified values in work[0..k), the densifier's lists after them. */
    minlsh__oph_densify(family->dkey, family->probes, family->k, sig, work,
                        (uint16_t *)(void *)(work + family->k));
    memcpy(sig, work, (size_t)family->k * sizeof *sig);
}

int minlsh_family_sign(const minlsh_family *family, const uint64_t *hashes,
                       size_t n, uint32_t *sig, size_t cap, size_t *n_out) {
    uint32_t stack[MINLSH__FAMILY_WORK_STACK], *work;
    uint32_t i;
    int rc;
    if (family == NULL) return MINLSH_E_NULL;
    if (hashes == NULL && n > 0) return MINLSH_E_NULL;
    rc = minlsh__family_check_sig(family, sig, cap, n_out);
    if (rc != 0) return rc;
    work = minlsh__family_work_get(family, stack);
    if (work == NULL) return MINLSH_E_NOMEM;
    for (i = 0; i < family->k; i++) sig[i] = MINLSH_EMPTY_VALUE;
    minlsh__family_update_raw(family, sig, hashes, n);
    minlsh__family_finish_raw(family, sig, work);
    minlsh__family_work_put(family, stack, work);
    return 0;
}

int minlsh_family_sign_prefix(const minlsh_family *family, const uint64_t *hashes,
                              size_t n, uint32_t *sig, size_t m) {
    uint32_t stack[MINLSH__K_STACK], *whole;
    size_t i;
    int rc;
    if (family == NULL || sig == NULL) return MINLSH_E_NULL;
    if (hashes == NULL && n > 0) return MINLSH_E_NULL;
    if (m == 0 || m > family->k) return MINLSH_E_PARAM;
    if (m == family->k) return minlsh_family_sign(family, hashes, n, sig, m, NULL);
    if (family->scheme == MINLSH_SCHEME_CLASSIC) {
        /* Value i depends only on function i: the first m functions alone. */
        for (i = 0; i < m; i++) sig[i] = MINLSH_EMPTY_VALUE;
        if (n > 0)
            minlsh__minhash_kernel_active()->update(family->a, family->b, (uint32_t)m, hashes,
                                                    n, sig);
        return 0;
    }
    /* One-permutation values depend on every bin (densification): the
     * whole signature, then its first m values. */
    whole = (uint32_t *)minlsh__kbuf_get(&family->alloc, stack, MINLSH__K_STACK, family->k,
                                         sizeof *whole);
    if (whole == NULL) return MINLSH_E_NOMEM;
    rc = minlsh_family_sign(family, hashes, n, whole, family->k, NULL);
    if (rc == 0) memcpy(sig, whole, m * sizeof *sig);
    minlsh__kbuf_put(&family->alloc, stack, whole);
    return rc;
}

int minlsh_family_update(const minlsh_family *family, const uint64_t *hashes,
                         size_t n, uint32_t *sig, size_t k_sig) {
    if (family == NULL || sig == NULL) return MINLSH_E_NULL;
    if (hashes == NULL && n > 0) return MINLSH_E_NULL;
    if (k_sig != family->k) return MINLSH_E_PARAM;
    /* A densified OPH signature no longer says which bins were empty. */
    if (family->scheme != MINLSH_SCHEME_CLASSIC) return MINLSH_E_UNSUPPORTED;
    minlsh__family_update_raw(family, sig, hashes, n);
    return 0;
}
