/*
 * Check-and-insert, query and removal (include/minlsh.h, "Store").
 *
 * An add changes the index and appends the journal record in one call:
 * the record is appended right after the insert and the insert undone if
 * the append fails, and every allocation the name tables need is made
 * before either, so no call returns with one holding the document and
 * the other not. Outside begin/commit an add shingles and signs before it
 * takes the lock; the query, the verification and the insert run under it.
 */
#include "store.h"

#include <stdlib.h>

typedef struct minlsh__store_cand {
    uint64_t id;
    double estimate;
} minlsh__store_cand;

/* Decreasing estimate, then increasing id: the order candidates are
 * verified in, whatever order the index gave them. */
static int minlsh__cand_cmp(const void *a, const void *b) {
    const minlsh__store_cand *x = (const minlsh__store_cand *)a, *y = (const minlsh__store_cand *)b;
    if (x->estimate != y->estimate) return x->estimate > y->estimate ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

/* The decision for a signed document (hashes: its set, for exact
 * verification). */
static int minlsh__store_decide(const minlsh_store *s, const uint32_t *sig, const uint64_t *hashes,
                                size_t n_hashes, minlsh_store_result *r) {
    uint64_t *ids = NULL, *set = NULL;
    double *sims = NULL;
    minlsh__store_cand *c = NULL;
    size_t cap = 64, n = 0, i, m = 0, set_cap = 0, set_n;
    uint32_t k = minlsh_family_k(s->family);
    double thr = s->cfg.threshold;
    int rc;
    memset(r, 0, sizeof *r);
    r->novel = 1;
    for (;;) {
        ids = (uint64_t *)minlsh__malloc(&s->alloc, cap * sizeof *ids);
        sims = (double *)minlsh__malloc(&s->alloc, cap * sizeof *sims);
        rc = ids == NULL || sims == NULL ? MINLSH_E_NOMEM
                                         : minlsh_index_query(s->ix, sig, k, ids, sims, cap, &n);
        if (rc != MINLSH_E_BUFSIZE) break;
        minlsh__free(&s->alloc, ids);
        minlsh__free(&s->alloc, sims);
        cap = n;
    }
    if (rc == 0 && n > 0) {
        c = (minlsh__store_cand *)minlsh__malloc(&s->alloc, n * sizeof *c);
        if (c == NULL) rc = MINLSH_E_NOMEM;
    }
    for (i = 0; rc == 0 && i < n; i++) {
        if (!minlsh__store_doc_live(s, ids[i])) continue; /* removed, still in the file */
        c[m].id = ids[i];
        c[m].estimate = sims[i];
        m++;
    }
    r->candidates = m;
    if (rc == 0 && m > 0 && !(s->cfg.flags & MINLSH_STORE_SETS)) {
        /* the estimate decides: the best, the smallest id among equals */
        size_t best = 0;
        for (i = 1; i < m; i++)
            if (c[i].estimate > c[best].estimate) best = i;
        r->has_match = 1;
        r->match = c[best].id;
        r->similarity = c[best].estimate;
        r->novel = !(c[best].estimate >= thr);
    } else if (rc == 0 && m > 0) {
        double floor_est = thr - MINLSH__STORE_EXACT_MARGIN;
        qsort(c, m, sizeof *c, minlsh__cand_cmp);
        for (i = 0; i < m && c[i].estimate >= floor_est; i++) {
            double j;
            rc = minlsh__store_sets_read(s, s->docs[c[i].id].set_off, &set, &set_cap, &set_n);
            if (rc == 0) rc = minlsh_jaccard_sorted(&j, hashes, n_hashes, set, set_n);
            if (rc == MINLSH_E_PARAM) rc = MINLSH_E_CORRUPT;
            if (rc != 0) break;
            if (!r->has_match || !r->exact || j > r->similarity) {
                r->has_match = 1;
                r->exact = 1;
                r->match = c[i].id;
                r->similarity = j;
            }
            if (j >= thr) {
                r->novel = 0;
                break;
            }
        }
        if (rc == 0 && !r->has_match) { /* none close enough to check */
            r->has_match = 1;
            r->match = c[0].id;
            r->similarity = c[0].estimate;
        }
    }
    minlsh__free(&s->alloc, ids);
    minlsh__free(&s->alloc, sims);
    minlsh__free(&s->alloc, c);
    minlsh__free(&s->alloc, set);
    return rc;
}

/* A document's signature and, for a store with sets, its set. */
typedef struct minlsh__store_doc_in {
    uint32_t stack[MINLSH__K_STACK];
    uint32_t *sig;          /* stack, or the heap above MINLSH__K_STACK values */
    minlsh_shingleset *own; /* the set made here from a text */
    const uint64_t *hashes;
    size_t n;
} minlsh__store_doc_in;

/* Room for the signature; every path ends in minlsh__store_doc_done. */
static int minlsh__store_doc_begin(const minlsh_store *s, minlsh__store_doc_in *in) {
    in->own = NULL;
    in->hashes = NULL;
    in->n = 0;
    in->sig = (uint32_t *)minlsh__kbuf_get(&s->alloc, in->stack, MINLSH__K_STACK,
                                           minlsh_family_k(s->family), sizeof *in->sig);
    return in->sig != NULL ? 0 : MINLSH_E_NOMEM;
}

static void minlsh__store_doc_done(const minlsh_store *s, minlsh__store_doc_in *in) {
    minlsh_shingleset_free(in->own);
    if (in->sig != NULL) minlsh__kbuf_put(&s->alloc, in->stack, in->sig);
    in->sig = NULL;
}

static int minlsh__store_sign_text(const minlsh_store *s, minlsh__store_doc_in *in,
                                   const void *text, size_t len) {
    uint32_t k = minlsh_family_k(s->family);
    int rc;
    if ((rc = minlsh__store_doc_begin(s, in)) != 0) return rc;
    if (text == NULL && len > 0) return MINLSH_E_NULL;
    if (!(s->cfg.flags & MINLSH_STORE_SETS))
        return minlsh_family_sign_text(s->family, s->shingler, text, len, in->sig, k, NULL);
    rc = minlsh_shingleset_new(&in->own, &s->alloc);
    if (rc == 0) rc = minlsh_shingler_hash(s->shingler, text, len, in->own, NULL);
    if (rc == 0) {
        in->hashes = minlsh_shingleset_view_hashes(in->own);
        in->n = minlsh_shingleset_count(in->own);
        rc = minlsh_family_sign(s->family, in->hashes, in->n, in->sig, k, NULL);
    }
    return rc;
}

static int minlsh__store_sign_set(const minlsh_store *s, minlsh__store_doc_in *in,
                                  const minlsh_shingleset *set) {
    int rc;
    if ((rc = minlsh__store_doc_begin(s, in)) != 0) return rc;
    in->hashes = minlsh_shingleset_view_hashes(set);
    in->n = minlsh_shingleset_count(set);
    return minlsh_family_sign(s->family, in->hashes, in->n, in->sig, minlsh_family_k(s->family),
                              NULL);
}

/* Insert the signed document under the next id (inside a change). */
static int minlsh__store_insert(minlsh_store *s, const minlsh__store_doc_in *in, const void *name,
                                size_t name_len, uint64_t *id_out) {
    uint32_t k = minlsh_family_k(s->family);
    uint64_t id = s->next_id, set_off = MINLSH__STORE_NO_SET;
    size_t rec_len = name_len;
    int sets = (s->cfg.flags & MINLSH_STORE_SETS) != 0, rc;
    if (id >= MINLSH__LSH_MAX_DOCS) return MINLSH_E_TOOBIG;
    rc = minlsh__store_doc_reserve(s, id, name_len);
    if (rc == 0 && sets) rec_len += 8;
    if (rc == 0 && rec_len > s->rec_cap) {
        uint8_t *b = (uint8_t *)minlsh__malloc(&s->alloc, rec_len);
        if (b == NULL) {
            rc = MINLSH_E_NOMEM;
        } else {
            minlsh__free(&s->alloc, s->rec);
            s->rec = b;
            s->rec_cap = rec_len;
        }
    }
    if (rc == 0 && sets) rc = minlsh__store_sets_append(s, in->hashes, in->n, &set_off);
    if (rc != 0) return rc;
    if (sets) minlsh__store64le(s->rec, set_off);
    if (name_len > 0) memcpy(s->rec + (sets ? 8 : 0), name, name_len);
    rc = minlsh_index_insert(s->ix, id, in->sig, k);
    if (rc == MINLSH_E_EXISTS) rc = MINLSH_E_CORRUPT; /* the file has ids the store does not */
    if (rc != 0) return rc;
    /* In a bulk change the commit writes the whole view: no record. */
    if (s->bulk == NULL)
        rc = minlsh_journal_append(s->jr, MINLSH_JOURNAL_INSERT, id, in->sig, k, s->rec, rec_len);
    if (rc == 0 && s->bulk == NULL) rc = minlsh__store_bulk_due(s);
    if (rc != 0) {
        (void)minlsh_index_remove(s->ix, id); /* a delta document: always removable */
        return rc;
    }
    minlsh__store_doc_add(s, id, name, name_len, set_off);
    *id_out = id;
    return 0;
}

/* Begin unless the caller did; after the work, commit (or just release
 * when it failed) what this call began. */
static int minlsh__store_enter(minlsh_store *s, int *own) {
    *own = 0;
    if (s->open_flags & MINLSH_STORE_READONLY) return MINLSH_E_STATE;
    if (s->in_tx) return s->stale ? MINLSH_E_STATE : 0;
    *own = 1;
    return minlsh_store_begin(s);
}

static int minlsh__store_leave(minlsh_store *s, int own, int rc) {
    if (!own) return rc;
    if (rc == 0) return minlsh_store_commit(s);
    (void)minlsh_store_commit(s); /* nothing was appended: releases the lock */
    return rc;
}

static int minlsh__store_add_signed(minlsh_store_result *result, minlsh_store *s,
                                    const minlsh__store_doc_in *in, const void *name,
                                    size_t name_len, uint32_t flags) {
    minlsh_store_result r;
    int own, rc;
    if (name_len > ((size_t)1 << 20)) return MINLSH_E_TOOBIG;
    rc = minlsh__store_enter(s, &own);
    if (rc != 0) return rc;
    if (name_len > 0) {
        uint64_t other;
        rc = minlsh__store_name_find(&other, s, name, name_len);
        if (rc == 0 && other != UINT64_MAX) rc = MINLSH_E_EXISTS;
    }
    /* Inserted whatever the decision, and no one to tell it: not made. */
    if (rc == 0 && result == NULL && (flags & MINLSH_STORE_ADD_ALWAYS)) {
        memset(&r, 0, sizeof r);
        r.novel = 1;
    } else if (rc == 0) {
        rc = minlsh__store_decide(s, in->sig, in->hashes, in->n, &r);
    }
    if (rc == 0 && (r.novel || (flags & MINLSH_STORE_ADD_ALWAYS))) {
        rc = minlsh__store_insert(s, in, name, name_len, &r.id);
        if (rc == 0) r.inserted = 1;
    }
    rc = minlsh__store_leave(s, own, rc);
    if (rc == 0 && result != NULL) *result = r;
    return rc;
}

int minlsh_store_add(minlsh_store_result *result, minlsh_store *s, const void *text, size_t len,
                     const void *name, size_t name_len, uint32_t flags) {
    minlsh__store_doc_in in;
    int rc;
    if (s == NULL || (name == NULL && name_len > 0)) return MINLSH_E_NULL;
    if (flags & ~MINLSH_STORE_ADD_ALWAYS) return MINLSH_E_PARAM;
    if (s->open_flags & MINLSH_STORE_READONLY) return MINLSH_E_STATE;
    if (s->key_mismatch) return MINLSH_E_MISMATCH;
    in.sig = NULL;
    in.own = NULL;
    rc = minlsh__store_sign_text(s, &in, text, len);
    if (rc == 0) rc = minlsh__store_add_signed(result, s, &in, name, name_len, flags);
    minlsh__store_doc_done(s, &in);
    return rc;
}

int minlsh_store_add_set(minlsh_store_result *result, minlsh_store *s, const minlsh_shingleset *set,
                         const void *name, size_t name_len, uint32_t flags) {
    minlsh__store_doc_in in;
    int rc;
    if (s == NULL || set == NULL || (name == NULL && name_len > 0)) return MINLSH_E_NULL;
    if (flags & ~MINLSH_STORE_ADD_ALWAYS) return MINLSH_E_PARAM;
    if (s->open_flags & MINLSH_STORE_READONLY) return MINLSH_E_STATE;
    if (s->key_mismatch) return MINLSH_E_MISMATCH;
    in.sig = NULL;
    in.own = NULL;
    rc = minlsh__store_sign_set(s, &in, set);
    if (rc == 0) rc = minlsh__store_add_signed(result, s, &in, name, name_len, flags);
    minlsh__store_doc_done(s, &in);
    return rc;
}

int minlsh_store_query(minlsh_store_result *result, const minlsh_store *s, const void *text,
                       size_t len) {
    minlsh__store_doc_in in;
    int rc;
    if (result == NULL || s == NULL) return MINLSH_E_NULL;
    if (s->stale) return MINLSH_E_STATE;
    if (s->key_mismatch) return MINLSH_E_MISMATCH;
    in.sig = NULL;
    in.own = NULL;
    rc = minlsh__store_sign_text(s, &in, text, len);
    if (rc == 0) rc = minlsh__store_decide(s, in.sig, in.hashes, in.n, result);
    minlsh__store_doc_done(s, &in);
    return rc;
}

int minlsh_store_query_set(minlsh_store_result *result, const minlsh_store *s,
                           const minlsh_shingleset *set) {
    minlsh__store_doc_in in;
    int rc;
    if (result == NULL || s == NULL || set == NULL) return MINLSH_E_NULL;
    if (s->stale) return MINLSH_E_STATE;
    if (s->key_mismatch) return MINLSH_E_MISMATCH;
    in.sig = NULL;
    in.own = NULL;
    rc = minlsh__store_sign_set(s, &in, set);
    if (rc == 0) rc = minlsh__store_decide(s, in.sig, in.hashes, in.n, result);
    minlsh__store_doc_done(s, &in);
    return rc;
}

static int minlsh__store_remove_id(minlsh_store *s, uint64_t id, int by_name, const void *name,
                                   size_t name_len) {
    int own, rc;
    rc = minlsh__store_enter(s, &own);
    if (rc != 0) return rc;
    if (by_name) {
        rc = minlsh__store_name_find(&id, s, name, name_len);
        if (rc == 0 && id == UINT64_MAX) rc = MINLSH_E_NOTFOUND;
    }
    if (rc == 0 && !minlsh__store_doc_live(s, id)) rc = MINLSH_E_NOTFOUND;
    /* The index keeps it until the next compaction; queries skip it. */
    if (rc == 0) rc = minlsh_journal_append(s->jr, MINLSH_JOURNAL_REMOVE, id, NULL, 0, NULL, 0);
    if (rc == 0) minlsh__store_doc_remove(s, id);
    return minlsh__store_leave(s, own, rc);
}

int minlsh_store_remove(minlsh_store *s, uint64_t id) {
    if (s == NULL) return MINLSH_E_NULL;
    return minlsh__store_remove_id(s, id, 0, NULL, 0);
}

int minlsh_store_remove_name(minlsh_store *s, const void *name, size_t name_len) {
    if (s == NULL || (name == NULL && name_len > 0)) return MINLSH_E_NULL;
    return minlsh__store_remove_id(s, 0, 1, name, name_len);
}

/* A caller's signature into in (no set: a store with sets decides exactly). */
static int minlsh__store_take_signature(const minlsh_store *s, minlsh__store_doc_in *in,
                                        const uint32_t *sig, uint32_t k) {
    int rc;
    if (sig == NULL) return MINLSH_E_NULL;
    if (k != minlsh_family_k(s->family)) return MINLSH_E_PARAM;
    if (s->cfg.flags & MINLSH_STORE_SETS) return MINLSH_E_STATE;
    if ((rc = minlsh__store_doc_begin(s, in)) != 0) return rc;
    memcpy(in->sig, sig, (size_t)k * sizeof *sig);
    return 0;
}

int minlsh_store_add_signature(minlsh_store_result *result, minlsh_store *s, const uint32_t *sig,
                               uint32_t k, const void *name, size_t name_len, uint32_t flags) {
    minlsh__store_doc_in in;
    int rc;
    if (s == NULL || (name == NULL && name_len > 0)) return MINLSH_E_NULL;
    if (flags & ~MINLSH_STORE_ADD_ALWAYS) return MINLSH_E_PARAM;
    if (s->open_flags & MINLSH_STORE_READONLY) return MINLSH_E_STATE;
    in.sig = NULL;
    in.own = NULL;
    rc = minlsh__store_take_signature(s, &in, sig, k);
    if (rc == 0) rc = minlsh__store_add_signed(result, s, &in, name, name_len, flags);
    minlsh__store_doc_done(s, &in);
    return rc;
}

int minlsh_store_query_signature(minlsh_store_result *result, const minlsh_store *s,
                                 const uint32_t *sig, uint32_t k) {
    minlsh__store_doc_in in;
    int rc;
    if (result == NULL || s == NULL) return MINLSH_E_NULL;
    if (s->stale) return MINLSH_E_STATE;
    in.sig = NULL;
    in.own = NULL;
    rc = minlsh__store_take_signature(s, &in, sig, k);
    if (rc == 0) rc = minlsh__store_decide(s, in.sig, NULL, 0, result);
    minlsh__store_doc_done(s, &in);
    return rc;
}
