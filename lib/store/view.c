/*
 * What a front end reads of a store beside its decisions: every candidate
 * of a signature (the command's 'index query' prints them all), the band
 * index itself (its parameters and statistics) and whether the handle's
 * key is the store's (include/minlsh.h, "Store").
 */
#include "store.h"

int minlsh_store_candidates(const minlsh_store *s, const uint32_t *sig, uint32_t k,
                            uint64_t *ids, double *sims, size_t cap, size_t *n_out) {
    size_t n = 0, i, m = 0;
    int rc;
    if (s == NULL || sig == NULL || n_out == NULL) return MINLSH_E_NULL;
    *n_out = 0;
    if (cap > 0 && (ids == NULL || sims == NULL)) return MINLSH_E_NULL;
    if (s->stale) return MINLSH_E_STATE;
    if (s->key_mismatch) return MINLSH_E_MISMATCH;
    if (k != minlsh_family_k(s->family)) return MINLSH_E_PARAM;
    /* The index's answer, removed documents included, then filtered in
     * place: the caller's buffer must hold the unfiltered answer. */
    rc = minlsh_index_query(s->ix, sig, k, ids, sims, cap, &n);
    if (rc == MINLSH_E_BUFSIZE) {
        *n_out = n;
        return rc;
    }
    if (rc != 0) return rc;
    for (i = 0; i < n; i++) {
        if (!minlsh__store_doc_live(s, ids[i])) continue;
        ids[m] = ids[i];
        sims[m] = sims[i];
        m++;
    }
    *n_out = m;
    return 0;
}

const minlsh_index *minlsh_store_view_index(const minlsh_store *s) {
    return s != NULL ? s->ix : NULL;
}

int minlsh_store_key_matches(const minlsh_store *s) {
    if (s == NULL) return MINLSH_E_NULL;
    return !s->key_mismatch;
}
