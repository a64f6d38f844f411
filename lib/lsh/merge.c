/*
 * Merging index shards: minlsh_index_merge(dst, src, id_offset) inserts every
 * document of src into dst under id + id_offset, all or nothing.
 *
 * Written on the public index API only (getters, minlsh_index_copy_ids, _get,
 * _contains, _insert, _remove), so it does not depend on how the index is
 * laid out inside. Because band keys are a pure function of the signature
 * and every index result is independent of insertion order, the merged
 * index answers exactly like an index that received the same documents in
 * one piece, and saves to the same bytes.
 *
 * The order of the work makes the all-or-nothing promise cheap:
 *  1. parameters: k, seed, config id, b and r must be equal (MISMATCH);
 *  2. the count: dst's plus src's must stay within the index limit (TOOBIG);
 *  3. every shifted id is checked before anything is inserted: no overflow
 *     (TOOBIG), not already in dst (EXISTS). With dst unchanged so far, the
 *     only error left is running out of memory during the inserts;
 *  4. the inserts, in ascending id order. Each insert is itself all or
 *     nothing; if one fails (NOMEM), the documents inserted before it are
 *     removed again (remove allocates nothing and cannot fail for an id
 *     that is present), so dst is as it was: same documents, same answers,
 *     same saved bytes.
 * The one scratch array (src's ids, 8 bytes per document) comes from
 * malloc: the public API does not expose dst's allocator. Its failure is
 * MINLSH_E_NOMEM before anything changes.
 */
#include "common/common.h"

/* The index holds at most 2^32 - 2 documents (minlsh_index_insert). */
#define MINLSH__MERGE_MAX_DOCS UINT64_C(0xFFFFFFFE)

static int minlsh__merge_compatible(const minlsh_index *dst, const minlsh_index *src) {
    if (minlsh_index_k(dst) != minlsh_index_k(src)) return 0;
    if (minlsh_index_seed(dst) != minlsh_index_seed(src)) return 0;
    if (minlsh_index_scheme(dst) != minlsh_index_scheme(src)) return 0;
    if (minlsh_index_config_id(dst) != minlsh_index_config_id(src)) return 0;
    if (minlsh_index_bands(dst) != minlsh_index_bands(src)) return 0;
    if (minlsh_index_rows(dst) != minlsh_index_rows(src)) return 0;
    return 1;
}

/* Remove ids[0..n) + offset from dst (the rollback of a failed merge). */
static void minlsh__merge_undo(minlsh_index *dst, const uint64_t *ids, size_t n,
                               uint64_t offset) {
    while (n > 0) {
        n--;
        (void)minlsh_index_remove(dst, ids[n] + offset);
    }
}

int minlsh_index_merge(minlsh_index *dst, const minlsh_index *src,
                       uint64_t id_offset) {
    uint32_t stack[MINLSH__K_STACK], *sig = NULL;
    minlsh_allocator scratch;
    uint64_t *ids = NULL;
    size_t n = 0, i, got;
    uint32_t k;
    int rc;

    if (dst == NULL || src == NULL) return MINLSH_E_NULL;
    if (dst == src) return MINLSH_E_PARAM;
    if (!minlsh__merge_compatible(dst, src)) return MINLSH_E_MISMATCH;
    if (minlsh_index_count(src) == 0) return 0;
    if (minlsh_index_count(src) > MINLSH__MERGE_MAX_DOCS - minlsh_index_count(dst))
        return MINLSH_E_TOOBIG;

    /* src's ids, ascending. */
    rc = minlsh_index_copy_ids(src, NULL, 0, &n);
    if (rc != MINLSH_E_BUFSIZE) return rc; /* 0: src is empty after all */
    (void)minlsh__alloc_setup(&scratch, NULL);
    ids = (uint64_t *)minlsh__calloc(&scratch, n, sizeof *ids);
    if (ids == NULL) return MINLSH_E_NOMEM;
    rc = minlsh_index_copy_ids(src, ids, n, &got);
    if (rc != 0) goto done;
    n = got;

    /* Every shifted id, before anything changes. */
    for (i = 0; i < n; i++) {
        if (ids[i] > UINT64_MAX - id_offset) {
            rc = MINLSH_E_TOOBIG;
            goto done;
        }
        rc = minlsh_index_contains(dst, ids[i] + id_offset);
        if (rc != 0) {
            if (rc == 1) rc = MINLSH_E_EXISTS;
            goto done;
        }
    }

    /* The inserts; undone if one fails. */
    k = minlsh_index_k(src);
    sig = (uint32_t *)minlsh__kbuf_get(&scratch, stack, MINLSH__K_STACK, k, sizeof *sig);
    if (sig == NULL) {
        rc = MINLSH_E_NOMEM;
        goto done;
    }
    for (i = 0; i < n; i++) {
        rc = minlsh_index_copy_signature(src, ids[i], sig, k, &got);
        if (rc == 0) rc = minlsh_index_insert(dst, ids[i] + id_offset, sig, k);
        if (rc != 0) {
            minlsh__merge_undo(dst, ids, i, id_offset);
            goto done;
        }
    }

done:
    if (sig != NULL) minlsh__kbuf_put(&scratch, stack, sig);
    minlsh__free(&scratch, ids);
    return rc;
}
