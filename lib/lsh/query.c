/*
 * Reading the band index (lsh.h has the layout; index.c builds it): query,
 * query_limited and query_many with their similarity estimates, contains,
 * copy_signature and copy_ids. Nothing here changes the index, so any
 * number of threads may read one index at once.
 *
 * A query runs in three stages (prepare, probe, finish) so that
 * query_many can overlap the cache misses of a few documents (prefetch.h).
 */
#include "lsh.h"
#include "prefetch.h"

/* ---- documents ---------------------------------------------------------- */

int minlsh_index_contains(const minlsh_index *index, uint64_t id) {
    if (index == NULL) return MINLSH_E_NULL;
    if (minlsh__lsh_is_mapped(index)) {
        int rc = minlsh__lsh_map_contains(index, id);
        if (rc == 0 && index->delta != NULL) rc = minlsh_index_contains(index->delta, id);
        return rc;
    }
    return minlsh__lsh_find_id(index, id) != MINLSH__LSH_NIL;
}

int minlsh_index_copy_signature(const minlsh_index *index, uint64_t id, uint32_t *sig,
                     size_t cap, size_t *n_out) {
    uint32_t slot;
    if (index == NULL) return MINLSH_E_NULL;
    if (minlsh__lsh_is_mapped(index)) {
        uint32_t stack[MINLSH__K_STACK], *own;
        int rc;
        own = (uint32_t *)minlsh__kbuf_get(&index->alloc, stack, MINLSH__K_STACK, index->k,
                                           sizeof *own);
        if (own == NULL) return MINLSH_E_NOMEM;
        rc = minlsh__lsh_map_copy_signature(index, id, own);
        if (rc == MINLSH_E_NOTFOUND && index->delta != NULL)
            rc = minlsh_index_copy_signature(index->delta, id, sig, cap, n_out);
        else if (rc == 0) {
            if (n_out != NULL) *n_out = index->k;
            if (cap < index->k) rc = MINLSH_E_BUFSIZE;
            else if (sig == NULL) rc = MINLSH_E_NULL;
            else memcpy(sig, own, (size_t)index->k * sizeof *sig);
        }
        minlsh__kbuf_put(&index->alloc, stack, own);
        return rc;
    }
    slot = minlsh__lsh_find_id(index, id);
    if (slot == MINLSH__LSH_NIL) return MINLSH_E_NOTFOUND;
    if (n_out != NULL) *n_out = index->k;
    if (cap < index->k) return MINLSH_E_BUFSIZE;
    if (sig == NULL) return MINLSH_E_NULL;
    memcpy(sig, minlsh__lsh_gsig(index, minlsh__lsh_doc_at(index, slot)->group),
           (size_t)index->k * sizeof *sig);
    return 0;
}

/* ---- query -------------------------------------------------------------- */

int minlsh__lsh_scratch_push(minlsh__lsh_scratch *s, const void *x) {
    if (s->n == s->cap) {
        size_t bytes;
        void *bigger;
        if (minlsh__mul_size(&bytes, s->cap, 2 * s->elem) != 0) return MINLSH_E_TOOBIG;
        bigger = minlsh__malloc(s->a, bytes);
        if (bigger == NULL) return MINLSH_E_NOMEM;
        memcpy(bigger, s->p, s->n * s->elem);
        if (s->p != s->stack) minlsh__free(s->a, s->p);
        s->p = bigger;
        s->cap *= 2;
    }
    memcpy((unsigned char *)s->p + s->n * s->elem, x, s->elem);
    s->n++;
    return 0;
}

void minlsh__lsh_scratch_free(minlsh__lsh_scratch *s) {
    if (s->p != s->stack) minlsh__free(s->a, s->p);
    s->p = s->stack;
}

/* A query in three stages, so that a batch can overlap the cache misses
 * of several: prepare (band keys, prefetch of the table entries), probe
 * (find each band's first entry with the key's tag, prefetch the group it
 * names), finish (verify, collect, sort, estimate). keys and pos point to
 * room for b values each. */
typedef struct minlsh__q_prep {
    int empty;
    uint64_t *keys;
    size_t *pos; /* per band: the first entry with the key's tag, or SIZE_MAX */
} minlsh__q_prep;

/* keys and pos of qp: the caller's stack arrays (MINLSH__K_STACK each) or,
 * for more bands, the heap. */
static int minlsh__q_prep_get(const minlsh_index *ix, uint64_t *keys, size_t *pos,
                              minlsh__q_prep *qp) {
    qp->keys = (uint64_t *)minlsh__kbuf_get(&ix->alloc, keys, MINLSH__K_STACK, ix->bands,
                                            sizeof *keys);
    qp->pos = (size_t *)minlsh__kbuf_get(&ix->alloc, pos, MINLSH__K_STACK, ix->bands,
                                         sizeof *pos);
    if (qp->keys != NULL && qp->pos != NULL) return 0;
    if (qp->keys != NULL) minlsh__kbuf_put(&ix->alloc, keys, qp->keys);
    if (qp->pos != NULL) minlsh__kbuf_put(&ix->alloc, pos, qp->pos);
    return MINLSH_E_NOMEM;
}

static void minlsh__q_prep_put(const minlsh_index *ix, const uint64_t *keys, const size_t *pos,
                               minlsh__q_prep *qp) {
    minlsh__kbuf_put(&ix->alloc, keys, qp->keys);
    minlsh__kbuf_put(&ix->alloc, pos, qp->pos);
}

static void minlsh__query_prepare(const minlsh_index *index, const uint32_t *sig,
                                  minlsh__q_prep *qp) {
    uint32_t j;
    qp->empty = index->count == 0 || minlsh_signature_is_empty(sig, index->k) == 1;
    if (qp->empty) return;
    minlsh__lsh_band_keys(sig, index->bands, index->rows, qp->keys);
    for (j = 0; j < index->bands; j++)
        minlsh__prefetch_home(&index->band[j], (uint32_t)(qp->keys[j] >> 32), 0);
}

static void minlsh__query_probe(const minlsh_index *index, minlsh__q_prep *qp) {
    uint32_t j, last = MINLSH__LSH_NIL;
    if (qp->empty) return;
    for (j = 0; j < index->bands; j++) {
        const minlsh__lsh_table *t = &index->band[j];
        uint32_t tag = (uint32_t)(qp->keys[j] >> 32);
        size_t p;
        qp->pos[j] = SIZE_MAX;
        if (t->cap == 0) continue;
        p = minlsh__tab_seek(t, tag);
        if (t->e[p].val != MINLSH__LSH_NIL && t->e[p].tag == tag) {
            qp->pos[j] = p;
            /* The whole group: the band check reads its band's values, the
             * estimate all k of them. Most bands of a near-duplicate name
             * the same group: fetch it once. */
            if (t->e[p].val != last) {
                last = t->e[p].val;
                if (last & MINLSH__LSH_CHAIN) { /* a shared bucket: its first node */
                    MINLSH__PREFETCH(minlsh__lsh_node_at(index, last & ~MINLSH__LSH_CHAIN));
                } else {
                    minlsh__prefetch_range(minlsh__lsh_group_at(index, last),
                                           index->groups.elem, 0);
                    minlsh__prefetch_range(minlsh__lsh_gsig(index, last), index->sigs.elem, 0);
                }
            }
        }
    }
}

static void minlsh__scratch_init(minlsh__lsh_scratch *s, void *stack, size_t elem,
                                 const minlsh_allocator *a) {
    s->p = s->stack = stack;
    s->n = 0;
    s->cap = MINLSH__QUERY_STACK;
    s->elem = elem;
    s->a = a;
}

/* Band j in memory: the groups of sig's bucket (band key key; pos the
 * first table entry with its tag, or SIZE_MAX) pushed to gs, their members
 * counted in *band_members; the walk stops at the first group that takes
 * the count past room, as the caller then leaves the band out whole. */
static int minlsh__mem_band(const minlsh_index *index, const uint32_t *sig, uint64_t key,
                            size_t pos, uint32_t j, uint64_t room, minlsh__lsh_scratch *gs,
                            uint64_t *band_members) {
    const minlsh__lsh_table *t = &index->band[j];
    const uint32_t *vals = sig + (size_t)j * index->rows;
    uint32_t tag = (uint32_t)(key >> 32), it = MINLSH__LSH_NIL, g;
    size_t band_start = gs->n, p;
    int rc = 0;
    *band_members = 0;
    if (pos != SIZE_MAX)
        for (p = pos; t->e[p].val != MINLSH__LSH_NIL && t->e[p].tag == tag; p++)
            if (minlsh__lsh_band_match(index, minlsh__lsh_bucket_first(index, t->e[p].val), j,
                                       key, vals)) {
                it = t->e[p].val;
                break;
            }
    while (rc == 0 && (g = minlsh__lsh_bucket_next(index, &it)) != MINLSH__LSH_NIL) {
        uint64_t gg = g;
        *band_members += minlsh__lsh_group_at(index, g)->count;
        if (*band_members > room) break;
        /* Most bands of a near-duplicate name the group the band before
         * named: skip the repeat here rather than sort it out below. */
        if (gs->n > band_start || gs->n == 0 || ((const uint64_t *)gs->p)[gs->n - 1] != gg)
            rc = minlsh__lsh_scratch_push(gs, &gg);
    }
    return rc;
}

/* The bands a query takes under max_members (0: no limit), over a mapped
 * file (file, or NULL), an index in memory (mem, or NULL: a mapped
 * handle's delta, or the index itself), or both: bands in order, each
 * bucket's members counted on both sides, stopping before the first band
 * that would pass the limit and leaving it out whole, so the answer is the
 * loaded index's. The file's document numbers go to ds, the groups in
 * memory to gs (ds may be NULL without a file, gs without mem); *done
 * gets the bands taken. */
static int minlsh__collect(const minlsh_index *file, const minlsh_index *mem,
                           const uint32_t *sig, const uint64_t *keys, const size_t *pos,
                           uint64_t max_members, minlsh__lsh_scratch *ds,
                           minlsh__lsh_scratch *gs, uint32_t *done) {
    uint32_t j, bands = file != NULL ? file->bands : mem != NULL ? mem->bands : 0;
    uint64_t members = 0;
    size_t start[MINLSH__MAP_SEEK_GROUP];
    int rc = 0;
    *done = 0;
    for (j = 0; j < bands; j++) {
        uint64_t room = max_members == 0 ? UINT64_MAX : max_members - members, fm = 0, gm = 0;
        size_t d0 = ds != NULL ? ds->n : 0, g0 = gs != NULL ? gs->n : 0;
        if (file != NULL && j % MINLSH__MAP_SEEK_GROUP == 0)
            minlsh__lsh_map_seek(file, keys, j,
                                 bands - j < MINLSH__MAP_SEEK_GROUP ? bands - j
                                                                    : MINLSH__MAP_SEEK_GROUP,
                                 start);
        if (file != NULL)
            rc = minlsh__lsh_map_band(file, sig, keys[j], j, start[j % MINLSH__MAP_SEEK_GROUP],
                                      room, ds, &fm);
        if (rc == 0 && mem != NULL && fm <= room)
            rc = minlsh__mem_band(mem, sig, keys[j], pos[j], j, room - fm, gs, &gm);
        if (rc != 0) return rc;
        if (fm + gm > room) {
            if (ds != NULL) ds->n = d0;
            if (gs != NULL) gs->n = g0;
            break;
        }
        members += fm + gm;
        *done = j + 1;
    }
    return 0;
}

/* The groups in gs (any order, repeats allowed; sorted and made unique
 * here) expanded to their members: ids ascending, with the estimates.
 * *n_out gets the count; MINLSH_E_BUFSIZE if cap is short. */
static int minlsh__mem_emit(const minlsh_index *index, const uint32_t *sig,
                            minlsh__lsh_scratch *gs, uint64_t *ids, double *similarity,
                            size_t cap, size_t *n_out) {
    minlsh__kv rstack[MINLSH__QUERY_STACK];
    minlsh__lsh_scratch rs;
    uint64_t *gv = (uint64_t *)gs->p;
    size_t i, n = 0, ng;
    int rc = 0;
    minlsh__scratch_init(&rs, rstack, sizeof *rstack, &index->alloc);
    minlsh__sort_u64(gv, gs->n);
    ng = gs->n = minlsh__unique_u64(gv, gs->n);
    /* Expand the groups to their members: (id, index of the group). */
    for (i = 0; i < ng && rc == 0; i++) {
        const minlsh__lsh_group *gr = minlsh__lsh_group_at(index, (size_t)gv[i]);
        minlsh__kv r;
        uint32_t s;
        r.val = i;
        if (gr->count == 1) { /* the usual case: no slot to visit */
            r.key = gr->head_id;
            rc = minlsh__lsh_scratch_push(&rs, &r);
            continue;
        }
        for (s = gr->head; s != MINLSH__LSH_NIL && rc == 0; s = minlsh__lsh_doc_at(index, s)->next) {
            r.key = *minlsh__lsh_id_at(index, s);
            rc = minlsh__lsh_scratch_push(&rs, &r);
        }
    }
    if (rc == 0) {
        n = rs.n;
        if (n_out != NULL) *n_out = n;
        if (cap < n) rc = MINLSH_E_BUFSIZE;
    }
    if (rc == 0) {
        minlsh__kv *rv = (minlsh__kv *)rs.p;
        minlsh__sort_kv(rv, n);
        for (i = 0; i < n; i++) ids[i] = rv[i].key;
        if (similarity != NULL) {
            /* One estimate per group, for all its members: the group
             * numbers are no longer needed, so their array holds it. */
            for (i = 0; i < ng; i++) {
                double est = minlsh__lsh_estimate(sig, minlsh__lsh_gsig(index, (size_t)gv[i]),
                                                  index->k);
                memcpy(&gv[i], &est, sizeof est);
            }
            for (i = 0; i < n; i++) memcpy(&similarity[i], &gv[rv[i].val], sizeof(double));
        }
    }
    minlsh__lsh_scratch_free(&rs);
    return rc;
}

/* max_members 0: no limit. */
static int minlsh__query_finish(const minlsh_index *index, const uint32_t *sig,
                                const minlsh__q_prep *qp, uint64_t max_members, uint64_t *ids,
                                double *similarity, size_t cap, size_t *n_out,
                                uint32_t *bands_searched) {
    uint64_t gstack[MINLSH__QUERY_STACK];
    minlsh__lsh_scratch gs;
    uint32_t done;
    int rc;
    if (qp->empty) {
        if (n_out != NULL) *n_out = 0; /* empty documents are never candidates */
        if (bands_searched != NULL) *bands_searched = index->bands;
        return 0;
    }
    minlsh__scratch_init(&gs, gstack, sizeof *gstack, &index->alloc);
    rc = minlsh__collect(NULL, index, sig, qp->keys, qp->pos, max_members, NULL, &gs, &done);
    if (rc == 0) {
        rc = minlsh__mem_emit(index, sig, &gs, ids, similarity, cap, n_out);
        if (bands_searched != NULL && (rc == 0 || rc == MINLSH_E_BUFSIZE))
            *bands_searched = done;
    }
    minlsh__lsh_scratch_free(&gs);
    return rc;
}

/* A query of a mapped handle: the file's bands and its delta's (if any)
 * taken together under the limit, in place; the two answers (disjoint
 * ids) merged in id order. bands_searched may be NULL. */
static int minlsh__query_mapped(const minlsh_index *ix, const uint32_t *sig,
                                uint64_t max_members, uint64_t *ids, double *similarity,
                                size_t cap, size_t *n_out, uint32_t *bands_searched) {
    const minlsh_index *delta = ix->delta != NULL && ix->delta->count > 0 ? ix->delta : NULL;
    uint64_t *keys, dstack[MINLSH__QUERY_STACK], gstack[MINLSH__QUERY_STACK];
    size_t *pos, nb = 0, nd = 0, i;
    minlsh__lsh_scratch ds, gs;
    uint64_t qp_keys[MINLSH__K_STACK];
    size_t qp_pos[MINLSH__K_STACK];
    minlsh__q_prep qp;
    uint64_t *di = NULL;
    double *dsim = NULL;
    uint32_t done;
    int rc, rcb = 0;
    if (ix->count == 0 || minlsh_signature_is_empty(sig, ix->k) == 1) {
        if (n_out != NULL) *n_out = 0; /* empty documents are never candidates */
        if (bands_searched != NULL) *bands_searched = ix->bands;
        return 0;
    }
    rc = minlsh__q_prep_get(ix, qp_keys, qp_pos, &qp);
    if (rc != 0) return rc;
    keys = qp.keys;
    pos = qp.pos;
    if (delta != NULL) {
        /* The delta's table positions; its band keys are the file's. */
        minlsh__query_prepare(delta, sig, &qp);
        minlsh__query_probe(delta, &qp);
    } else {
        minlsh__lsh_band_keys(sig, ix->bands, ix->rows, keys);
    }
    minlsh__scratch_init(&ds, dstack, sizeof *dstack, &ix->alloc);
    minlsh__scratch_init(&gs, gstack, sizeof *gstack, &ix->alloc);
    rc = minlsh__collect(ix, delta, sig, keys, pos, max_members, &ds, &gs, &done);
    if (rc == 0) {
        rcb = minlsh__lsh_map_emit(ix, sig, &ds, ids, similarity, cap, &nb);
        if (rcb != 0 && rcb != MINLSH_E_BUFSIZE) rc = rcb;
    }
    if (rc == 0) {
        uint64_t *gv = (uint64_t *)gs.p;
        minlsh__sort_u64(gv, gs.n);
        gs.n = minlsh__unique_u64(gv, gs.n);
        for (i = 0; i < gs.n; i++) nd += minlsh__lsh_group_at(delta, (size_t)gv[i])->count;
        if (n_out != NULL) *n_out = nb + nd;
        if (bands_searched != NULL) *bands_searched = done;
        if (nd == 0) rc = rcb;
        else if (cap < nb + nd) rc = MINLSH_E_BUFSIZE;
        else {
            di = (uint64_t *)minlsh__malloc(&ix->alloc, nd * sizeof *di);
            if (similarity != NULL)
                dsim = (double *)minlsh__malloc(&ix->alloc, nd * sizeof *dsim);
            rc = di == NULL || (similarity != NULL && dsim == NULL)
                     ? MINLSH_E_NOMEM
                     : minlsh__mem_emit(delta, sig, &gs, di, dsim, nd, &nd);
        }
    }
    if (rc == 0 && di != NULL) {
        /* Both lists ascend and share no id: merge from the back. */
        size_t a = nb, b = nd, o = nb + nd;
        while (b > 0) {
            o--;
            if (a > 0 && ids[a - 1] > di[b - 1]) {
                a--;
                ids[o] = ids[a];
                if (similarity != NULL) similarity[o] = similarity[a];
            } else {
                b--;
                ids[o] = di[b];
                if (similarity != NULL) similarity[o] = dsim[b];
            }
        }
    }
    minlsh__free(&ix->alloc, di);
    minlsh__free(&ix->alloc, dsim);
    minlsh__lsh_scratch_free(&ds);
    minlsh__lsh_scratch_free(&gs);
    minlsh__q_prep_put(ix, qp_keys, qp_pos, &qp);
    return rc;
}

static int minlsh__query(const minlsh_index *index, const uint32_t *sig, size_t k_sig,
                         uint64_t max_members, uint64_t *ids, double *similarity,
                         size_t cap, size_t *n_out, uint32_t *bands_searched) {
    uint64_t keys[MINLSH__K_STACK];
    size_t pos[MINLSH__K_STACK];
    minlsh__q_prep qp;
    int rc;
    if (index == NULL || sig == NULL) return MINLSH_E_NULL;
    if (k_sig != index->k) return MINLSH_E_PARAM;
    if (ids == NULL && cap > 0) return MINLSH_E_NULL;
    if (minlsh__lsh_is_mapped(index))
        return minlsh__query_mapped(index, sig, max_members, ids, similarity, cap, n_out,
                                    bands_searched);
    rc = minlsh__q_prep_get(index, keys, pos, &qp);
    if (rc != 0) return rc;
    minlsh__query_prepare(index, sig, &qp);
    minlsh__query_probe(index, &qp);
    rc = minlsh__query_finish(index, sig, &qp, max_members, ids, similarity, cap, n_out,
                              bands_searched);
    minlsh__q_prep_put(index, keys, pos, &qp);
    return rc;
}

int minlsh__lsh_query_keys(const minlsh_index *ix, const uint32_t *sig, uint64_t *keys,
                           int *keyed, uint64_t *ids, double *similarity, size_t cap,
                           size_t *n_out) {
    size_t stack[MINLSH__K_STACK];
    minlsh__q_prep qp;
    int rc;
    qp.keys = keys;
    qp.pos = (size_t *)minlsh__kbuf_get(&ix->alloc, stack, MINLSH__K_STACK, ix->bands,
                                        sizeof *stack);
    if (qp.pos == NULL) return MINLSH_E_NOMEM;
    minlsh__query_prepare(ix, sig, &qp);
    *keyed = !qp.empty;
    minlsh__query_probe(ix, &qp);
    rc = minlsh__query_finish(ix, sig, &qp, 0, ids, similarity, cap, n_out, NULL);
    minlsh__kbuf_put(&ix->alloc, stack, qp.pos);
    return rc;
}

int minlsh_index_query(const minlsh_index *index, const uint32_t *sig,
                       size_t k_sig, uint64_t *ids, double *similarity, size_t cap,
                       size_t *n_out) {
    return minlsh__query(index, sig, k_sig, 0, ids, similarity, cap, n_out, NULL);
}

int minlsh_index_query_limited(const minlsh_index *index, const uint32_t *sig,
                               size_t k_sig, uint64_t max_members, uint64_t *ids,
                               double *similarity, size_t cap, size_t *n_out,
                               uint32_t *bands_searched) {
    if (bands_searched == NULL) return MINLSH_E_NULL;
    return minlsh__query(index, sig, k_sig, max_members, ids, similarity, cap, n_out,
                         bands_searched);
}

int minlsh_index_query_many(const minlsh_index *index, const uint32_t *sigs, size_t n,
                            size_t k_sig, size_t *offsets, uint64_t *ids, double *similarity,
                            size_t cap, size_t *n_out) {
    minlsh__q_prep qp[MINLSH__AHEAD];
    uint64_t *keys;
    size_t *pos, i, k, total = 0;
    uint32_t b;
    int rc = 0, short_buf = 0;
    if (index == NULL || (sigs == NULL && n > 0) || offsets == NULL) return MINLSH_E_NULL;
    if (k_sig != index->k) return MINLSH_E_PARAM;
    if (ids == NULL && cap > 0) return MINLSH_E_NULL;
    offsets[0] = 0;
    if (n == 0) {
        if (n_out != NULL) *n_out = 0;
        return 0;
    }
    k = index->k;
    b = index->bands;
    if (minlsh__lsh_is_mapped(index)) {
        /* In place, one after another: the file's pages are the cache. */
        for (i = 0; i < n && rc == 0; i++) {
            size_t got = 0, room = !short_buf && cap > total ? cap - total : 0;
            rc = minlsh__query_mapped(index, sigs + i * k, 0, room > 0 ? ids + total : NULL,
                                      similarity != NULL && room > 0 ? similarity + total : NULL,
                                      room, &got, NULL);
            if (rc == MINLSH_E_BUFSIZE) {
                short_buf = 1;
                rc = 0;
            }
            total += got;
            offsets[i + 1] = total;
        }
        if (rc != 0) return rc;
        if (n_out != NULL) *n_out = total;
        return short_buf ? MINLSH_E_BUFSIZE : 0;
    }
    keys = (uint64_t *)minlsh__malloc(&index->alloc, MINLSH__AHEAD * (size_t)b * sizeof *keys);
    pos = (size_t *)minlsh__malloc(&index->alloc, MINLSH__AHEAD * (size_t)b * sizeof *pos);
    if (keys == NULL || pos == NULL) {
        minlsh__free(&index->alloc, keys);
        minlsh__free(&index->alloc, pos);
        return MINLSH_E_NOMEM;
    }
    for (i = 0; i < MINLSH__AHEAD; i++) {
        qp[i].keys = keys + i * b;
        qp[i].pos = pos + i * b;
    }
    /* Four documents in flight: query i finishes while i+1 and i+2 have
     * their groups on the way (probed) and i+3 its table entries. */
    for (i = 0; i < n && i < MINLSH__AHEAD; i++) minlsh__query_prepare(index, sigs + i * k, &qp[i]);
    for (i = 0; i < n && i < MINLSH__PROBE_AHEAD; i++) minlsh__query_probe(index, &qp[i]);
    for (i = 0; i < n && rc == 0; i++) {
        minlsh__q_prep *cur = &qp[i % MINLSH__AHEAD];
        size_t got = 0, room = !short_buf && cap > total ? cap - total : 0;
        if (i + MINLSH__PROBE_AHEAD < n)
            minlsh__query_probe(index, &qp[(i + MINLSH__PROBE_AHEAD) % MINLSH__AHEAD]);
        if (i + 2 * MINLSH__AHEAD < n) minlsh__prefetch_sig(sigs + (i + 2 * MINLSH__AHEAD) * k, k);
        rc = minlsh__query_finish(index, sigs + i * k, cur, 0, room > 0 ? ids + total : NULL,
                                  similarity != NULL && room > 0 ? similarity + total : NULL,
                                  room, &got, NULL);
        if (rc == MINLSH_E_BUFSIZE) {
            /* Go on counting: the caller learns the size needed. */
            short_buf = 1;
            rc = 0;
        }
        total += got;
        offsets[i + 1] = total;
        if (i + MINLSH__AHEAD < n)
            minlsh__query_prepare(index, sigs + (i + MINLSH__AHEAD) * k, cur);
    }
    minlsh__free(&index->alloc, keys);
    minlsh__free(&index->alloc, pos);
    if (rc != 0) return rc;
    if (n_out != NULL) *n_out = total;
    return short_buf ? MINLSH_E_BUFSIZE : 0;
}

int minlsh_index_copy_ids(const minlsh_index *index, uint64_t *ids, size_t cap,
                     size_t *n_out) {
    size_t s, n = 0;
    if (index == NULL) return MINLSH_E_NULL;
    if (n_out != NULL) *n_out = index->count;
    if (cap < index->count) return MINLSH_E_BUFSIZE;
    if (ids == NULL && index->count > 0) return MINLSH_E_NULL;
    if (minlsh__lsh_is_mapped(index)) {
        int rc = minlsh__lsh_map_copy_ids(index, ids);
        size_t nb = index->count - (index->delta != NULL ? index->delta->count : 0);
        if (rc != 0 || index->delta == NULL || index->delta->count == 0) return rc;
        (void)minlsh_index_copy_ids(index->delta, ids + nb, index->delta->count, NULL);
        minlsh__sort_u64(ids, index->count);
        return 0;
    }
    /* Written straight into the caller's buffer and sorted there: no
     * allocation, so this cannot fail for lack of memory. */
    for (s = 0; s < index->n_slots; s++)
        if (minlsh__lsh_doc_at(index, s)->group != MINLSH__LSH_NIL)
            ids[n++] = *minlsh__lsh_id_at(index, s);
    minlsh__sort_u64(ids, n);
    return 0;
}

