/*
 * Insert if novel: one query, a verification of the candidates at a
 * threshold, and an insert when none passes. It lives in the library so
 * that the command, the bindings and the examples share one rule instead of
 * each writing its own loop (they used to: the best estimate against the
 * threshold, with the tie and empty-document cases decided differently).
 *
 * The candidates come from the ordinary query (so the decision is
 * independent of insertion order and table layout); with a caller's
 * verifier they are checked best estimate first, since the most similar
 * candidate is the likeliest to pass and the first pass ends the work.
 */
#include "lsh.h"

#define MINLSH__NOVEL_STACK 64

int minlsh_novel_options_init(minlsh_novel_options *opts, uint32_t version) {
    static const minlsh_novel_options defaults = MINLSH_NOVEL_OPTIONS_INIT;
    if (opts == NULL) return MINLSH_E_NULL;
    if (version != MINLSH_NOVEL_OPTIONS_VERSION) return MINLSH_E_VERSION;
    *opts = defaults;
    return 0;
}

/* Candidate order for a verifier: estimate descending, then id ascending. */
static int minlsh__novel_before(double sa, uint64_t ia, double sb, uint64_t ib) {
    return sa > sb || (sa == sb && ia < ib);
}

/* Insertion sort is enough for the usual handful; a hot bucket gets a
 * heap-free shell sort with the same order (the order is total, so the
 * result does not depend on the algorithm). */
static void minlsh__novel_sort(uint64_t *ids, double *sims, size_t n) {
    static const size_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    size_t gi, i, j;
    for (gi = 0; gi < sizeof gaps / sizeof gaps[0]; gi++) {
        size_t gap = gaps[gi];
        for (i = gap; i < n; i++) {
            uint64_t id = ids[i];
            double s = sims[i];
            for (j = i; j >= gap && minlsh__novel_before(s, id, sims[j - gap], ids[j - gap]);
                 j -= gap) {
                ids[j] = ids[j - gap];
                sims[j] = sims[j - gap];
            }
            ids[j] = id;
            sims[j] = s;
        }
    }
}

static int minlsh__novel_decide(minlsh_novel_result *res, const minlsh_novel_options *o,
                                uint64_t *ids, double *sims, size_t n) {
    size_t i;
    res->candidates = n;
    if (o->verify == NULL) {
        /* Ascending ids: a strict > keeps the smallest id among equals. */
        for (i = 0; i < n; i++)
            if (!res->has_match || sims[i] > res->similarity) {
                res->has_match = 1;
                res->match = ids[i];
                res->similarity = sims[i];
            }
        res->novel = !(res->has_match && res->similarity >= o->threshold);
        return 0;
    }
    minlsh__novel_sort(ids, sims, n);
    for (i = 0; i < n && sims[i] >= o->min_estimate; i++) {
        double s = -1.0;
        int rc = o->verify(o->opaque, ids[i], sims[i], &s);
        res->verified++;
        if (rc < 0) return rc;
        if (!(s >= 0.0 && s <= 1.0)) return MINLSH_E_PARAM;
        if (!res->has_match || s > res->similarity) {
            res->has_match = 1;
            res->match = ids[i];
            res->similarity = s;
        }
        if (s >= o->threshold) break;
    }
    res->novel = !(res->has_match && res->similarity >= o->threshold);
    return 0;
}

int minlsh_index_insert_novel(minlsh_novel_result *result, minlsh_index *index, uint64_t id,
                              const uint32_t *sig, size_t k_sig,
                              const minlsh_novel_options *opts) {
    static const minlsh_novel_options defaults = MINLSH_NOVEL_OPTIONS_INIT;
    uint64_t ids_stack[MINLSH__NOVEL_STACK];
    double sims_stack[MINLSH__NOVEL_STACK];
    uint64_t *ids = ids_stack;
    double *sims = sims_stack;
    uint64_t stack[MINLSH__K_STACK], *keys = stack;
    minlsh_novel_result res;
    size_t n = 0;
    int rc, keyed = 0;
    if (result == NULL || index == NULL || sig == NULL) return MINLSH_E_NULL;
    if (opts == NULL) opts = &defaults;
    if (opts->version != MINLSH_NOVEL_OPTIONS_VERSION) return MINLSH_E_VERSION;
    if (opts->reserved != 0 || !(opts->threshold > 0.0 && opts->threshold <= 1.0) ||
        !(opts->min_estimate >= 0.0 && opts->min_estimate <= 1.0))
        return MINLSH_E_PARAM;
    if (k_sig != index->k) return MINLSH_E_PARAM;
    if (minlsh__lsh_is_mapped(index)) {
        /* The file and its delta, through the public calls. */
        rc = minlsh_index_contains(index, id);
        if (rc != 0) return rc < 0 ? rc : MINLSH_E_EXISTS;
        rc = minlsh_index_query(index, sig, k_sig, ids, sims, MINLSH__NOVEL_STACK, &n);
    } else {
        if (minlsh__lsh_find_id(index, id) != MINLSH__LSH_NIL) return MINLSH_E_EXISTS;
        keys = (uint64_t *)minlsh__kbuf_get(&index->alloc, stack, MINLSH__K_STACK, index->bands,
                                            sizeof *stack);
        if (keys == NULL) return MINLSH_E_NOMEM;
        /* The query's band keys are the insert's too: computed once. */
        rc = minlsh__lsh_query_keys(index, sig, keys, &keyed, ids, sims, MINLSH__NOVEL_STACK,
                                    &n);
    }
    if (rc == MINLSH_E_BUFSIZE) {
        size_t bytes;
        /* A hot bucket: room for all of them, then the same query again. */
        if (minlsh__mul_size(&bytes, n, sizeof *ids) != 0) return MINLSH_E_TOOBIG;
        ids = (uint64_t *)minlsh__malloc(&index->alloc, bytes);
        sims = (double *)minlsh__malloc(&index->alloc, n * sizeof *sims);
        rc = ids == NULL || sims == NULL ? MINLSH_E_NOMEM
             : minlsh__lsh_is_mapped(index)
                 ? minlsh_index_query(index, sig, k_sig, ids, sims, n, &n)
                 : minlsh__lsh_query_keys(index, sig, keys, &keyed, ids, sims, n, &n);
    }
    memset(&res, 0, sizeof res);
    if (rc == 0) rc = minlsh__novel_decide(&res, opts, ids, sims, n);
    if (rc == 0 && res.novel)
        rc = minlsh__lsh_is_mapped(index) ? minlsh__lsh_map_insert(index, id, sig)
             : keyed                      ? minlsh__lsh_insert_keyed(index, id, sig, keys)
                                          : minlsh__lsh_insert(index, id, sig);
    if (ids != ids_stack) {
        minlsh__free(&index->alloc, ids);
        minlsh__free(&index->alloc, sims);
    }
    minlsh__kbuf_put(&index->alloc, stack, keys);
    if (rc == 0) *result = res;
    return rc;
}
