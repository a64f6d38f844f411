/*
 * Fuzz target: the band-index loader on arbitrary bytes.
 *
 * Input: one byte saying whether to repair the checksums (fuzz.h), then the
 * file. Every input is refused with a documented status or loaded. A loaded index
 * saves back to exactly the input bytes (the format is canonical), lists its
 * ids in ascending order, finds every stored document by its own signature
 * (unless that is the empty-set signature), and yields pairs and clusters
 * that are consistent with each other.
 */
#include "fuzz.h"

static void load_one(const uint8_t *data, size_t size) {
    minlsh_index *ix = NULL;
    minlsh_pairs *pairs = NULL;
    minlsh_clusters *cl = NULL;
    uint8_t *out;
    uint64_t *ids, *cand;
    uint32_t sig[MINLSH_FAMILY_K_MAX];
    size_t need = 0, n, i, j, k, nc;
    int rc = minlsh_index_load_buffer(&ix, data, size, NULL);
    FUZZ_CHECK(rc == 0 || rc == MINLSH_E_FORMAT || rc == MINLSH_E_CORRUPT ||
               rc == MINLSH_E_TOOBIG || rc == MINLSH_E_NOMEM);
    if (rc != 0) {
        FUZZ_CHECK(ix == NULL);
        return;
    }
    k = minlsh_index_k(ix);
    FUZZ_CHECK(k >= 1 && k <= MINLSH_FAMILY_K_MAX);
    FUZZ_CHECK(minlsh_index_bands(ix) >= 1 && minlsh_index_rows(ix) >= 1 &&
               (uint64_t)minlsh_index_bands(ix) * minlsh_index_rows(ix) <= k);
    FUZZ_CHECK(minlsh_index_save_buffer(ix, NULL, 0, &need) == MINLSH_E_BUFSIZE);
    FUZZ_CHECK(need == size);
    out = (uint8_t *)malloc(need);
    FUZZ_CHECK(out != NULL);
    FUZZ_OK(minlsh_index_save_buffer(ix, out, need, NULL));
    FUZZ_CHECK(memcmp(out, data, size) == 0);
    free(out);

    n = (size_t)minlsh_index_count(ix);
    ids = (uint64_t *)malloc((n + 1) * sizeof *ids);
    cand = (uint64_t *)malloc((n + 1) * sizeof *cand);
    FUZZ_CHECK(ids != NULL && cand != NULL);
    FUZZ_OK(minlsh_index_copy_ids(ix, ids, n, NULL));
    for (i = 0; i < n; i++) {
        if (i > 0) FUZZ_CHECK(ids[i - 1] < ids[i]);
        if (i >= 32) continue; /* bounded work per input */
        FUZZ_CHECK(minlsh_index_contains(ix, ids[i]) == 1);
        FUZZ_OK(minlsh_index_copy_signature(ix, ids[i], sig, k, NULL));
        FUZZ_OK(minlsh_index_query(ix, sig, k, cand, NULL, n, &nc));
        if (minlsh_signature_is_empty(sig, k) == 1) {
            FUZZ_CHECK(nc == 0);
        } else {
            for (j = 0; j < nc && cand[j] != ids[i]; j++) continue;
            FUZZ_CHECK(j < nc);
        }
    }
    if (n <= 256) {
        size_t np;
        FUZZ_OK(minlsh_pairs_from_index(&pairs, ix, 0.0, 0, NULL));
        np = minlsh_pairs_count(pairs);
        for (i = 0; i < np; i++) {
            uint64_t a, b;
            double s;
            FUZZ_OK(minlsh_pairs_copy_pair(&a, &b, &s, pairs, i));
            FUZZ_CHECK(a < b && s >= 0.0 && s <= 1.0);
            FUZZ_CHECK(minlsh_index_contains(ix, a) == 1 && minlsh_index_contains(ix, b) == 1);
        }
        FUZZ_OK(minlsh_clusters_from_index(&cl, ix, 0.0, NULL));
        /* Every pair's ends are in one cluster, so there are no more
         * clusters than pairs. */
        FUZZ_CHECK(minlsh_clusters_count(cl) <= np);
        minlsh_clusters_free(cl);
        minlsh_pairs_free(pairs);
    }
    free(ids);
    free(cand);
    minlsh_index_free(ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf;
    size_t len;
    fuzz_file_input(data, size, &buf, &len);
    load_one(buf, len);
    free(buf);
    return 0;
}
