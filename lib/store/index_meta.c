/*
 * A store's metadata for an index built outside a store (a binding's
 * MinHashLSH), and read back from one: the same encoder and parser as the
 * store's own (meta.c, legacy.c), run on a handle that holds only names,
 * so that one format serves every front end (docs/format.md, "Store").
 */
#include "store.h"

/* As for a store's journal record (minlsh_store_add). */
#define MINLSH__STORE_NAME_BYTES_MAX ((uint64_t)1 << 20)

/* A handle with the configuration of an index made elsewhere and no view:
 * what the encoder and the parser use of one. */
static void minlsh__store_bare(minlsh_store *s, const minlsh_index *index, double threshold) {
    memset(s, 0, sizeof *s);
    s->alloc = index->alloc;
    s->sets_fd = -1;
    /* the shingling is not known: MINLSH_SHINGLER_OPTIONS_INIT's, with the
     * index's config id, which a store checks against the key it is given */
    s->cfg.unit = MINLSH_UNIT_WORD;
    s->cfg.shingle_k = 5;
    s->cfg.norm = MINLSH_NORM_CJK_WORDS;
    s->cfg.config_id = index->config_id;
    s->cfg.threshold = threshold;
}

int minlsh_store_encode_metadata(const minlsh_index *index, const minlsh_journal *journal,
                                 double threshold, uint64_t next_id, const void *names,
                                 const uint64_t *name_offsets, void *buf, size_t cap,
                                 size_t *n_out) {
    minlsh_store s;
    uint64_t *ids = NULL, base = 0, offset = 0, found;
    size_t n, i;
    uint8_t *blob = NULL;
    size_t len = 0;
    int rc;
    if (index == NULL || name_offsets == NULL || (buf == NULL && cap > 0)) return MINLSH_E_NULL;
    if (!(threshold > 0.0 && threshold <= 1.0)) return MINLSH_E_PARAM;
    n = (size_t)minlsh_index_count(index);
    if (names == NULL && name_offsets[n] > 0) return MINLSH_E_NULL;
    if (journal != NULL) {
        /* the new file holds the journal up to its synced end */
        if (minlsh__journal_pending(journal) > 0) return MINLSH_E_STATE;
        minlsh__journal_position(journal, &base, &offset);
    }
    minlsh__store_bare(&s, index, threshold);
    if (n > 0) {
        ids = (uint64_t *)minlsh__calloc(&s.alloc, n, sizeof *ids);
        if (ids == NULL) return MINLSH_E_NOMEM;
    }
    rc = minlsh_index_copy_ids(index, ids, n, NULL);
    for (i = 0; rc == 0 && i < n; i++) {
        uint64_t len_i = name_offsets[i + 1] - name_offsets[i];
        /* no arithmetic on a NULL names (all names empty) */
        const uint8_t *name = len_i > 0 ? (const uint8_t *)names + name_offsets[i] : NULL;
        if (name_offsets[i + 1] < name_offsets[i] || ids[i] >= next_id) rc = MINLSH_E_PARAM;
        else if (len_i > MINLSH__STORE_NAME_BYTES_MAX) rc = MINLSH_E_TOOBIG;
        else if (len_i > 0 && (rc = minlsh__store_name_find(&found, &s, name, (size_t)len_i)) != 0)
            break;
        else if (found != UINT64_MAX)
            rc = MINLSH_E_PARAM; /* a name given twice */
        else if ((rc = minlsh__store_doc_reserve(&s, ids[i], (size_t)len_i)) == 0)
            minlsh__store_doc_add(&s, ids[i], name, (size_t)len_i, MINLSH__STORE_NO_SET);
    }
    if (rc == 0 && next_id > s.next_id) {
        /* the ids below next_id were given (to documents since removed) */
        rc = minlsh__store_doc_reserve(&s, next_id - 1, 0);
        while (rc == 0 && s.next_id < next_id) {
            minlsh__store_doc *d = &s.docs[s.next_id++];
            memset(d, 0, sizeof *d);
            d->set_off = MINLSH__STORE_NO_SET;
        }
    }
    if (rc == 0) rc = minlsh__store_meta_encode(&s, base, offset, &blob, &len);
    if (rc == 0) {
        if (n_out != NULL) *n_out = len;
        if (cap < len) rc = MINLSH_E_BUFSIZE;
        else if (len > 0) memcpy(buf, blob, len);
    }
    minlsh__free(&s.alloc, blob);
    minlsh__free(&s.alloc, ids);
    minlsh__store_docs_free(&s);
    return rc;
}

int minlsh_store_decode_metadata(double *threshold, uint64_t *next_id, uint32_t *flags,
                                 const minlsh_index *index, uint64_t *name_offsets,
                                 void *names, size_t cap, size_t *n_out) {
    minlsh_store s;
    minlsh__store_config cfg;
    uint64_t *ids = NULL, base, offset, total = 0;
    size_t n, i;
    int rc;
    if (index == NULL || name_offsets == NULL || (names == NULL && cap > 0)) return MINLSH_E_NULL;
    rc = minlsh__store_meta_config(index->meta.data, index->meta.len, &cfg, &base, &offset);
    if (rc != 0) return rc;
    minlsh__store_bare(&s, index, cfg.threshold);
    n = (size_t)minlsh_index_count(index);
    if (n > 0) {
        ids = (uint64_t *)minlsh__calloc(&s.alloc, n, sizeof *ids);
        if (ids == NULL) return MINLSH_E_NOMEM;
    }
    rc = minlsh_index_copy_ids(index, ids, n, NULL);
    if (rc == 0) rc = minlsh__store_meta_docs(&s, index->meta.data, index->meta.len);
    /* a file's names are its documents' (a compaction drops the removed) */
    if (rc == 0 && s.live != n) rc = MINLSH_E_CORRUPT;
    for (i = 0; rc == 0 && i < n; i++) {
        if (!minlsh__store_doc_live(&s, ids[i])) {
            rc = MINLSH_E_CORRUPT;
            break;
        }
        name_offsets[i] = total;
        total += s.docs[ids[i]].name_len;
    }
    if (rc == 0) {
        name_offsets[n] = total;
        if (n_out != NULL) *n_out = (size_t)total;
        if (cap < total) rc = MINLSH_E_BUFSIZE;
    }
    for (i = 0; rc == 0 && i < n; i++)
        if (name_offsets[i + 1] > name_offsets[i])
            rc = minlsh_store_copy_name(&s, ids[i], (uint8_t *)names + name_offsets[i],
                                        (size_t)(total - name_offsets[i]), NULL);
    if (rc == 0) {
        if (threshold != NULL) *threshold = cfg.threshold;
        if (next_id != NULL) *next_id = s.next_id;
        if (flags != NULL) *flags = cfg.flags;
    }
    minlsh__free(&s.alloc, ids);
    minlsh__store_docs_free(&s);
    return rc;
}
