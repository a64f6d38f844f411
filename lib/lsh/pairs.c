/*
 * Candidate and verified pairs of an index: every unordered pair of
 * documents sharing at least one bucket, each exactly once, sorted by (a, b).
 *
 * Members of one group (identical signatures, not empty) share every band:
 * each pair of them is listed once, with estimate 1. Between groups, each
 * band's multi-group buckets are walked, but a pair of groups is taken only
 * from the first band whose r values the two share, so near-duplicates
 * agreeing on many bands do not multiply the memory. Equal values imply
 * equal keys, so that band is also one where they share a bucket. Only a
 * pair whose first shared bucket comes from a 64-bit key collision between
 * different values is taken twice (there, and at its first band of equal
 * values); the final sort and dedup remove the repeat and make the result
 * independent of table layout and insertion order. A pair of groups stands
 * for every pair of their members, all with the same estimate.
 */
#include "lsh.h"

/* 1 if groups x and y have the same values in some band before j. */
static int minlsh__shared_before(const minlsh_index *ix, uint32_t x, uint32_t y,
                                 uint32_t j) {
    const uint32_t *sx = minlsh__lsh_gsig(ix, x), *sy = minlsh__lsh_gsig(ix, y);
    size_t bytes = (size_t)ix->rows * sizeof *sx;
    uint32_t i;
    for (i = 0; i < j; i++) {
        size_t off = (size_t)i * ix->rows;
        if (memcmp(sx + off, sy + off, bytes) == 0) return 1;
    }
    return 0;
}

/* Sort by (a, b) and drop repeats. A repeat is the same two documents,
 * hence the same two groups and the same estimate: which copy stays does
 * not matter. */
static void minlsh__pairs_compact(minlsh_pairs *pr) {
    size_t x, o;
    if (pr->n < 2) return;
    minlsh__sort_pairs(pr->v, pr->n);
    for (x = 1, o = 1; x < pr->n; x++)
        if (pr->v[x].a != pr->v[o - 1].a || pr->v[x].b != pr->v[o - 1].b)
            pr->v[o++] = pr->v[x];
    pr->n = o;
}

/* A pair is listed twice only after a band-key collision, so the list holds
 * at most about max_pairs distinct pairs when it first reaches twice that:
 * compacting then bounds the memory at 2 * max_pairs and decides exactly. */
static int minlsh__push_pair(minlsh_pairs *pr, size_t *cap, uint64_t max_pairs,
                             uint64_t ia, uint64_t ib, double sim) {
    void *grown;
    int rc;
    if (max_pairs != 0 && pr->n >= max_pairs && (uint64_t)pr->n - max_pairs >= max_pairs) {
        minlsh__pairs_compact(pr);
        if (pr->n > max_pairs) return MINLSH_E_TOOBIG;
    }
    grown = pr->v;
    rc = minlsh__reserve(&pr->alloc, &grown, cap, pr->n, pr->n + 1, sizeof *pr->v);
    pr->v = (minlsh__lsh_pair *)grown;
    if (rc != 0) return rc;
    pr->v[pr->n].a = ia < ib ? ia : ib;
    pr->v[pr->n].b = ia < ib ? ib : ia;
    pr->v[pr->n].sim = sim;
    pr->n++;
    return 0;
}

/* Every pair of a member of group x with a member of group y (x == y: every
 * pair within x). */
static int minlsh__push_members(const minlsh_index *ix, minlsh_pairs *pr, size_t *cap,
                                uint64_t max_pairs, uint32_t x, uint32_t y, double sim) {
    uint32_t s, t;
    int rc = 0;
    for (s = minlsh__lsh_group_at(ix, x)->head; s != MINLSH__LSH_NIL && rc == 0;
         s = minlsh__lsh_doc_at(ix, s)->next) {
        uint64_t is = *minlsh__lsh_id_at(ix, s);
        t = x == y ? minlsh__lsh_doc_at(ix, s)->next : minlsh__lsh_group_at(ix, y)->head;
        for (; t != MINLSH__LSH_NIL && rc == 0; t = minlsh__lsh_doc_at(ix, t)->next)
            rc = minlsh__push_pair(pr, cap, max_pairs, is, *minlsh__lsh_id_at(ix, t), sim);
    }
    return rc;
}

/* Gather the groups of the bucket whose table value is v into *m. */
static int minlsh__gather(const minlsh_index *ix, uint32_t v, uint32_t **m, size_t *m_cap,
                          size_t *n) {
    uint32_t g;
    int rc;
    *n = 0;
    while ((g = minlsh__lsh_bucket_next(ix, &v)) != MINLSH__LSH_NIL) {
        void *grown = *m;
        rc = minlsh__reserve(&ix->alloc, &grown, m_cap, *n, *n + 1, sizeof **m);
        *m = (uint32_t *)grown;
        if (rc != 0) return rc;
        (*m)[(*n)++] = g;
    }
    return 0;
}

int minlsh_pairs_from_index(minlsh_pairs **out, const minlsh_index *index,
                            double min_similarity, uint64_t max_pairs,
                            const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_pairs *pr;
    uint32_t *m = NULL;
    size_t m_cap = 0, v_cap = 0, nm, p, x, y, g;
    uint32_t j;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (index == NULL) return MINLSH_E_NULL;
    if (!(min_similarity >= 0.0 && min_similarity <= 1.0)) return MINLSH_E_PARAM;
    if (minlsh__lsh_is_mapped(index)) {
        /* Every bucket is read: load a copy and work on it. */
        minlsh_index *tmp;
        if ((rc = minlsh__lsh_unmapped(index, &tmp)) != 0) return rc;
        rc = minlsh_pairs_from_index(out, tmp, min_similarity, max_pairs, alloc);
        minlsh_index_free(tmp);
        return rc;
    }
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    pr = (minlsh_pairs *)minlsh__calloc(&al, 1, sizeof *pr);
    if (pr == NULL) return MINLSH_E_NOMEM;
    pr->alloc = al;
    /* Identical signatures: estimate 1, which passes any min_similarity. */
    for (g = 0; g < index->n_groups && rc == 0; g++)
        if (minlsh__lsh_group_at(index, g)->count >= 2 && g != index->empty_group)
            rc = minlsh__push_members(index, pr, &v_cap, max_pairs, (uint32_t)g,
                                      (uint32_t)g, 1.0);
    for (j = 0; j < index->bands && rc == 0; j++) {
        const minlsh__lsh_table *t = &index->band[j];
        for (p = 0; p < t->len && rc == 0; p++) {
            uint32_t v = t->e[p].val;
            /* Only chains hold two groups or more. */
            if (v == MINLSH__LSH_NIL || !(v & MINLSH__LSH_CHAIN)) continue;
            rc = minlsh__gather(index, v, &m, &m_cap, &nm);
            for (x = 0; x < nm && rc == 0; x++) {
                for (y = x + 1; y < nm && rc == 0; y++) {
                    double sim;
                    if (minlsh__shared_before(index, m[x], m[y], j)) continue;
                    sim = minlsh__lsh_estimate(minlsh__lsh_gsig(index, m[x]),
                                               minlsh__lsh_gsig(index, m[y]), index->k);
                    if (!(sim >= min_similarity)) continue;
                    rc = minlsh__push_members(index, pr, &v_cap, max_pairs, m[x], m[y], sim);
                }
            }
        }
    }
    minlsh__free(&index->alloc, m);
    if (rc != 0) {
        minlsh_pairs_free(pr);
        return rc;
    }
    minlsh__pairs_compact(pr);
    if (max_pairs != 0 && pr->n > max_pairs) {
        minlsh_pairs_free(pr);
        return MINLSH_E_TOOBIG;
    }
    *out = pr;
    return 0;
}

void minlsh_pairs_free(minlsh_pairs *pairs) {
    minlsh_allocator al;
    if (pairs == NULL) return;
    al = pairs->alloc;
    minlsh__free(&al, pairs->v);
    minlsh__free(&al, pairs);
}

size_t minlsh_pairs_count(const minlsh_pairs *pairs) {
    return pairs != NULL ? pairs->n : 0;
}

int minlsh_pairs_copy_pair(uint64_t *a, uint64_t *b, double *similarity,
                           const minlsh_pairs *pairs, size_t i) {
    if (pairs == NULL) return MINLSH_E_NULL;
    if (i >= pairs->n) return MINLSH_E_NOTFOUND;
    if (a != NULL) *a = pairs->v[i].a;
    if (b != NULL) *b = pairs->v[i].b;
    if (similarity != NULL) *similarity = pairs->v[i].sim;
    return 0;
}
