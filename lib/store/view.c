/*
 * What a front end reads of a store beside its decisions: every candidate
 * of a signature (the command's 'index query' prints them all), the band
 * index itself (its parameters and statistics) and whether the handle's
 * key is the store's; a copy of the store at another path (the command's
 * 'index merge' starts from its first shard); the lock timeout
 * (include/minlsh.h, "Store").
 */
#include "store.h"

#include <stdio.h>

int minlsh_store_candidates(const minlsh_store *s, const uint32_t *sig, uint32_t k,
                            uint64_t *ids, double *sims, size_t cap, size_t *n_out) {
    size_t n = 0, i, m = 0;
    int rc;
    if (s == NULL || sig == NULL || n_out == NULL) return MINLSH_E_NULL;
    *n_out = 0;
    if (cap > 0 && (ids == NULL || sims == NULL)) return MINLSH_E_NULL;
    if (s->stale) return MINLSH_E_STATE;
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

int minlsh_store_set_lock_timeout(minlsh_store *s, uint32_t ms) {
    if (s == NULL) return MINLSH_E_NULL;
    s->lock_timeout = ms;
    return 0;
}

int minlsh_store_copy_to(const minlsh_store *s, const char *path, uint32_t flags) {
    minlsh_store dst;
    minlsh_filelock *lock = NULL;
    minlsh_index *copy = NULL;
    uint8_t *meta = NULL;
    size_t meta_len = 0;
    uint64_t id;
    int rc, exists;
    if (s == NULL || path == NULL) return MINLSH_E_NULL;
    if (flags != MINLSH_STORE_EXCL && flags != MINLSH_STORE_TRUNCATE) return MINLSH_E_PARAM;
    if (s->stale) return MINLSH_E_STATE;
    if (s->cfg.flags & MINLSH_STORE_SETS) return MINLSH_E_STATE; /* PATH.sets is not copied */
    /* dst: the paths of the new store; the rest is s's view */
    memcpy(&dst, s, sizeof dst);
    dst.path = dst.journal_path = dst.sets_path = NULL;
    rc = minlsh__path_resolve(&s->alloc, path, &dst.path);
    if (rc != 0) return rc;
    dst.journal_path = (char *)minlsh__malloc(&s->alloc, strlen(dst.path) + 9);
    dst.sets_path = (char *)minlsh__malloc(&s->alloc, strlen(dst.path) + 6);
    if (dst.journal_path == NULL || dst.sets_path == NULL) rc = MINLSH_E_NOMEM;
    if (rc == 0) {
        snprintf(dst.journal_path, strlen(dst.path) + 9, "%s.journal", dst.path);
        snprintf(dst.sets_path, strlen(dst.path) + 6, "%s.sets", dst.path);
        dst.lock = NULL;
        dst.open_flags = s->open_flags & MINLSH_STORE_NO_LOCK;
        rc = minlsh__store_lock(&dst, MINLSH_LOCK_EXCLUSIVE);
        lock = dst.lock;
    }
    if (rc == 0) {
        exists = minlsh__file_exists(dst.path);
        if (exists < 0) rc = exists;
        else if (exists && flags == MINLSH_STORE_EXCL) rc = MINLSH_E_EXISTS;
    }
    /* the view without its removed documents, and no journal yet */
    if (rc == 0) rc = minlsh__lsh_unmapped(s->ix, &copy);
    if (rc == 0 && copy == NULL) {
        /* a loaded view (an older command file): its live documents anew */
        uint32_t k = minlsh_family_k(s->family), *sig;
        sig = (uint32_t *)minlsh__malloc(&s->alloc, (size_t)k * sizeof *sig);
        rc = sig == NULL ? MINLSH_E_NOMEM
                         : minlsh_index_new(&copy, s->family, s->cfg.config_id,
                                            minlsh_index_bands(s->ix), minlsh_index_rows(s->ix),
                                            &s->alloc);
        for (id = 0; rc == 0 && id < s->next_id; id++) {
            if (!s->docs[id].live) continue;
            rc = minlsh_index_copy_signature(s->ix, id, sig, k, NULL);
            if (rc == 0) rc = minlsh_index_insert(copy, id, sig, k);
        }
        minlsh__free(&s->alloc, sig);
    } else {
        for (id = 0; rc == 0 && id < s->next_id; id++) {
            if (s->docs[id].live) continue;
            rc = minlsh_index_remove(copy, id);
            if (rc == MINLSH_E_NOTFOUND) rc = 0;
        }
    }
    if (rc == 0) rc = minlsh__store_meta_encode(s, 0, 0, &meta, &meta_len);
    if (rc == 0) rc = minlsh_index_set_metadata(copy, meta, meta_len);
    /* the journal and sets of a store replaced here are not this one's */
    if (rc == 0 && minlsh__file_exists(dst.journal_path) == 1 && remove(dst.journal_path) != 0)
        rc = MINLSH_E_IO;
    if (rc == 0 && minlsh__file_exists(dst.sets_path) == 1 && remove(dst.sets_path) != 0)
        rc = MINLSH_E_IO;
    if (rc == 0) rc = minlsh_index_save_mapped(copy, dst.path);
    minlsh__free(&s->alloc, meta);
    minlsh_index_free(copy);
    minlsh_filelock_free(lock);
    minlsh__free(&s->alloc, dst.path);
    minlsh__free(&s->alloc, dst.journal_path);
    minlsh__free(&s->alloc, dst.sets_path);
    return rc;
}
