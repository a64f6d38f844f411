/*
 * The run: band keys of every distinct text, candidates from runs of equal
 * keys per band (a bucket over max_bucket left out and counted), each
 * distinct candidate verified once, then the decisions (connected
 * components or strict attribution). Bands, verification and the
 * similarities to representatives run on the pool; every result is written
 * to a per-item slot and merged in a fixed order, so nothing depends on the
 * thread count.
 */
#include "dedup.h"

#include "lsh/lsh.h" /* union-find */

int minlsh__dedup_plan(minlsh_dedup *d) {
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    int rc;
    if (d->opts.bands != 0) {
        d->bands = d->opts.bands;
        d->rows = d->opts.rows;
        return 0;
    }
    po.k = d->k;
    po.mode = MINLSH_PLAN_RECALL;
    po.target_recall = 0.999;
    /* The planner wants t < 1; at t = 1 only identical signatures count,
     * which any plan finds. */
    po.threshold = d->opts.threshold < 0.99 ? d->opts.threshold : 0.99;
    rc = minlsh_plan_compute(&d->bands, &d->rows, NULL, NULL, &po);
    if (rc == MINLSH_E_PARAM) { /* k too small to reach the recall */
        po.mode = MINLSH_PLAN_BALANCED;
        rc = minlsh_plan_compute(&d->bands, &d->rows, NULL, NULL, &po);
    }
    return rc;
}

double minlsh__dedup_similarity(const minlsh_dedup *d, uint32_t ga, uint32_t gb) {
    double s = 0.0;
    if (ga == gb) return 1.0;
    if (d->opts.verify == MINLSH_VERIFY_EXACT) {
        const minlsh__dedup_group *x = &d->groups[ga], *y = &d->groups[gb];
        (void)minlsh_jaccard_sorted(&s, d->arena + x->set_off, (size_t)x->set_n,
                                    d->arena + y->set_off, (size_t)y->set_n);
    } else {
        (void)minlsh_signature_estimate(&s, d->sigs + (size_t)ga * d->k,
                                        d->sigs + (size_t)gb * d->k, d->k);
    }
    return s;
}

static int minlsh__dedup_group_empty(const minlsh_dedup *d, size_t g) {
    return minlsh_signature_is_empty(d->sigs + g * d->k, d->k) == 1;
}

/* ---- candidates ------------------------------------------------------------ */

typedef struct minlsh__dedup_bands {
    minlsh_dedup *d;
    uint64_t *keys; /* bands per group */
    /* per band: its candidate pairs (key ga, val gb), count, capped buckets */
    minlsh__kv **pairs;
    size_t *n_pairs;
    uint64_t *capped;
} minlsh__dedup_bands;

static int minlsh__dedup_keys_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_bands *c = (minlsh__dedup_bands *)ctx;
    const minlsh_dedup *d = c->d;
    size_t g;
    (void)worker;
    for (g = begin; g < end; g++)
        if (!minlsh__dedup_group_empty(d, g))
            (void)minlsh_band_keys(d->sigs + g * d->k, d->k, d->bands, d->rows,
                                   c->keys + g * d->bands, d->bands, NULL);
    return 0;
}

/* One band: sort its (key, group) records and list the pairs of every run
 * of equal keys no larger than max_bucket. */
static int minlsh__dedup_band(minlsh__dedup_bands *c, size_t j) {
    minlsh_dedup *d = c->d;
    const minlsh_allocator *a = &d->alloc;
    minlsh__kv *v, *tmp, *out = NULL;
    size_t m = 0, g, s, e, x, y, n = 0, cap = 0;
    uint64_t max_bucket = d->opts.max_bucket;
    int rc = 0;
    v = (minlsh__kv *)minlsh__calloc(a, d->n_groups + 1, sizeof *v);
    tmp = (minlsh__kv *)minlsh__calloc(a, d->n_groups + 1, sizeof *tmp);
    if (v == NULL || tmp == NULL) rc = MINLSH_E_NOMEM;
    for (g = 0; g < d->n_groups && rc == 0; g++) {
        if (minlsh__dedup_group_empty(d, g)) continue;
        v[m].key = c->keys[g * d->bands + j];
        v[m].val = g;
        m++;
    }
    /* Stable: within a run the groups stay ascending. */
    if (rc == 0) minlsh__radix_kv(v, tmp, m, 0, 64);
    for (s = 0; s < m && rc == 0; s = e) {
        for (e = s + 1; e < m && v[e].key == v[s].key; e++) {
        }
        if (e - s < 2) continue;
        if (max_bucket != 0 && e - s > max_bucket) {
            c->capped[j]++;
            continue;
        }
        for (x = s; x < e && rc == 0; x++)
            for (y = x + 1; y < e && rc == 0; y++) {
                void *p = out;
                rc = minlsh__reserve(a, &p, &cap, n, n + 1, sizeof *out);
                out = (minlsh__kv *)p;
                if (rc != 0) break;
                out[n].key = v[x].val;
                out[n].val = v[y].val;
                n++;
            }
    }
    minlsh__free(a, v);
    minlsh__free(a, tmp);
    if (rc != 0) {
        minlsh__free(a, out);
        return rc;
    }
    c->pairs[j] = out;
    c->n_pairs[j] = n;
    return 0;
}

static int minlsh__dedup_bands_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    size_t j;
    int rc = 0;
    (void)worker;
    for (j = begin; j < end && rc == 0; j++) rc = minlsh__dedup_band((minlsh__dedup_bands *)ctx, j);
    return rc;
}

/* Every distinct candidate pair of groups, ascending, into *out. */
static int minlsh__dedup_candidates(minlsh_dedup *d, minlsh__kv **out, size_t *n_out) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_bands c;
    minlsh__kv *all = NULL;
    size_t j, total = 0, keys_n;
    int rc = 0;
    *out = NULL;
    *n_out = 0;
    memset(&c, 0, sizeof c);
    c.d = d;
    if (minlsh__mul_size(&keys_n, d->n_groups + 1, d->bands) != 0) return MINLSH_E_TOOBIG;
    c.keys = (uint64_t *)minlsh__calloc(a, keys_n, sizeof *c.keys);
    c.pairs = (minlsh__kv **)minlsh__calloc(a, d->bands, sizeof *c.pairs);
    c.n_pairs = (size_t *)minlsh__calloc(a, d->bands, sizeof *c.n_pairs);
    c.capped = (uint64_t *)minlsh__calloc(a, d->bands, sizeof *c.capped);
    if (c.keys == NULL || c.pairs == NULL || c.n_pairs == NULL || c.capped == NULL)
        rc = MINLSH_E_NOMEM;
    if (rc == 0)
        rc = minlsh__pool_run(minlsh__dedup_pool(d), d->n_groups, 256, minlsh__dedup_keys_range,
                              &c);
    if (rc == 0)
        rc = minlsh__pool_run(minlsh__dedup_pool(d), d->bands, 1, minlsh__dedup_bands_range, &c);
    minlsh__free(a, c.keys);
    for (j = 0; j < d->bands && rc == 0; j++) {
        if (total + c.n_pairs[j] < total) rc = MINLSH_E_TOOBIG;
        total += c.n_pairs[j];
    }
    if (rc == 0 && total > 0) {
        all = (minlsh__kv *)minlsh__calloc(a, total, sizeof *all);
        if (all == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) {
        size_t at = 0;
        d->capped = 0;
        for (j = 0; j < d->bands; j++) {
            if (c.n_pairs[j] > 0) memcpy(all + at, c.pairs[j], c.n_pairs[j] * sizeof *all);
            at += c.n_pairs[j];
            d->capped += c.capped[j];
        }
        minlsh__sort_kv(all, total);
        for (j = 1, at = total > 0; j < total; j++)
            if (all[j].key != all[at - 1].key || all[j].val != all[at - 1].val) all[at++] = all[j];
        total = at;
    }
    if (c.pairs != NULL)
        for (j = 0; j < d->bands; j++) minlsh__free(a, c.pairs[j]);
    minlsh__free(a, c.pairs);
    minlsh__free(a, c.n_pairs);
    minlsh__free(a, c.capped);
    if (rc != 0) {
        minlsh__free(a, all);
        return rc;
    }
    *out = all;
    *n_out = total;
    return 0;
}

/* ---- verification ------------------------------------------------------------- */

typedef struct minlsh__dedup_verify {
    const minlsh_dedup *d;
    const minlsh__kv *cand;
    double *sim;
} minlsh__dedup_verify;

static int minlsh__dedup_verify_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_verify *c = (minlsh__dedup_verify *)ctx;
    size_t i;
    (void)worker;
    for (i = begin; i < end; i++)
        c->sim[i] = minlsh__dedup_similarity(c->d, (uint32_t)c->cand[i].key,
                                             (uint32_t)c->cand[i].val);
    return 0;
}

static int minlsh__dedup_verify_all(minlsh_dedup *d, const minlsh__kv *cand, size_t n) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_verify c;
    size_t i, m = 0;
    int rc;
    c.d = d;
    c.cand = cand;
    c.sim = (double *)minlsh__calloc(a, n + 1, sizeof *c.sim);
    if (c.sim == NULL) return MINLSH_E_NOMEM;
    rc = minlsh__pool_run(minlsh__dedup_pool(d), n, 64, minlsh__dedup_verify_range, &c);
    for (i = 0; i < n && rc == 0; i++) m += c.sim[i] >= d->opts.threshold;
    if (rc == 0) {
        d->edges = (minlsh__dedup_edge *)minlsh__calloc(a, m + 1, sizeof *d->edges);
        if (d->edges == NULL) rc = MINLSH_E_NOMEM;
    }
    for (i = 0, m = 0; i < n && rc == 0; i++) {
        if (!(c.sim[i] >= d->opts.threshold)) continue;
        d->edges[m].ga = (uint32_t)cand[i].key;
        d->edges[m].gb = (uint32_t)cand[i].val;
        d->edges[m].sim = c.sim[i];
        m++;
    }
    d->n_edges = m;
    minlsh__free(a, c.sim);
    return rc;
}

/* ---- decisions ------------------------------------------------------------------ */

/* 1 if document x should be kept rather than y (x, y in one cluster). */
static int minlsh__dedup_better(const minlsh_dedup *d, uint64_t x, uint64_t y) {
    if (y == MINLSH__DEDUP_NONE) return 1;
    if (d->opts.keep == MINLSH_KEEP_LONGEST && d->docs[x].length != d->docs[y].length)
        return d->docs[x].length > d->docs[y].length;
    return x < y;
}

typedef struct minlsh__dedup_sims {
    minlsh_dedup *d;
} minlsh__dedup_sims;

/* The similarity of each dropped document to its representative. */
static int minlsh__dedup_sims_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh_dedup *d = ((minlsh__dedup_sims *)ctx)->d;
    size_t i;
    (void)worker;
    for (i = begin; i < end; i++) {
        minlsh_dedup_decision *x = &d->decisions[i];
        uint32_t g = d->docs[i].group, h = d->docs[x->representative].group;
        x->exact = !x->kept && g == h;
        x->similarity = g == h ? 1.0 : minlsh__dedup_similarity(d, g, h);
    }
    return 0;
}

static int minlsh__dedup_components(minlsh_dedup *d) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__lsh_uf uf = {NULL, NULL};
    uint64_t *best = NULL, *low = NULL;
    minlsh__dedup_sims c;
    size_t i;
    int rc = minlsh__lsh_uf_init(&uf, a, d->n_groups + 1);
    if (rc == 0) {
        best = (uint64_t *)minlsh__malloc(a, (d->n_groups + 1) * sizeof *best);
        low = (uint64_t *)minlsh__malloc(a, (d->n_groups + 1) * sizeof *low);
        if (best == NULL || low == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) {
        for (i = 0; i < d->n_edges; i++)
            (void)minlsh__lsh_uf_union(&uf, d->edges[i].ga, d->edges[i].gb);
        for (i = 0; i < d->n_groups; i++) best[i] = low[i] = MINLSH__DEDUP_NONE;
        for (i = 0; i < d->n_docs; i++) {
            uint32_t r = minlsh__lsh_uf_find(&uf, d->docs[i].group);
            if (low[r] == MINLSH__DEDUP_NONE) low[r] = i;
            if (minlsh__dedup_better(d, i, best[r])) best[r] = i;
        }
        for (i = 0; i < d->n_docs; i++) {
            uint32_t r = minlsh__lsh_uf_find(&uf, d->docs[i].group);
            d->decisions[i].cluster = low[r];
            d->decisions[i].representative = best[r];
            d->decisions[i].kept = best[r] == i;
        }
        c.d = d;
        rc = minlsh__pool_run(minlsh__dedup_pool(d), d->n_docs, 256, minlsh__dedup_sims_range,
                              &c);
    }
    minlsh__free(a, best);
    minlsh__free(a, low);
    minlsh__lsh_uf_free(&uf, a);
    return rc;
}

typedef struct minlsh__dedup_adj {
    uint32_t group;
    double sim;
} minlsh__dedup_adj;

/* Documents in keep order: each is kept unless an exact copy or a verified
 * near-duplicate of it is kept already; then it is attributed to that one
 * (the most similar; ties: the lowest number). */
static int minlsh__dedup_strict(minlsh_dedup *d) {
    const minlsh_allocator *a = &d->alloc;
    size_t *off = NULL, *fill = NULL, i, t;
    minlsh__dedup_adj *adj = NULL;
    uint64_t *kept_of = NULL;
    minlsh__kv *order = NULL;
    int rc = 0;
    off = (size_t *)minlsh__calloc(a, d->n_groups + 2, sizeof *off);
    fill = (size_t *)minlsh__calloc(a, d->n_groups + 1, sizeof *fill);
    adj = (minlsh__dedup_adj *)minlsh__calloc(a, 2 * d->n_edges + 1, sizeof *adj);
    kept_of = (uint64_t *)minlsh__malloc(a, (d->n_groups + 1) * sizeof *kept_of);
    if (d->opts.keep == MINLSH_KEEP_LONGEST)
        order = (minlsh__kv *)minlsh__calloc(a, d->n_docs + 1, sizeof *order);
    if (off == NULL || fill == NULL || adj == NULL || kept_of == NULL ||
        (d->opts.keep == MINLSH_KEEP_LONGEST && order == NULL))
        rc = MINLSH_E_NOMEM;
    if (rc == 0) {
        for (i = 0; i < d->n_edges; i++) {
            off[d->edges[i].ga + 1]++;
            off[d->edges[i].gb + 1]++;
        }
        for (i = 0; i < d->n_groups; i++) off[i + 1] += off[i];
        for (i = 0; i < d->n_edges; i++) {
            uint32_t x = d->edges[i].ga, y = d->edges[i].gb;
            adj[off[x] + fill[x]].group = y;
            adj[off[x] + fill[x]++].sim = d->edges[i].sim;
            adj[off[y] + fill[y]].group = x;
            adj[off[y] + fill[y]++].sim = d->edges[i].sim;
        }
        for (i = 0; i < d->n_groups; i++) kept_of[i] = MINLSH__DEDUP_NONE;
        if (order != NULL) {
            /* Longest first (the complement orders lengths descending),
             * then by number. */
            for (i = 0; i < d->n_docs; i++) {
                order[i].key = ~d->docs[i].length;
                order[i].val = i;
            }
            minlsh__sort_kv(order, d->n_docs);
        }
        for (t = 0; t < d->n_docs; t++) {
            uint64_t doc = order != NULL ? order[t].val : t, rep = MINLSH__DEDUP_NONE;
            uint32_t g = d->docs[doc].group;
            minlsh_dedup_decision *x = &d->decisions[doc];
            double best = -1.0;
            size_t e;
            if (kept_of[g] != MINLSH__DEDUP_NONE) {
                rep = kept_of[g];
                best = 1.0;
            } else {
                for (e = off[g]; e < off[g + 1]; e++) {
                    uint64_t r = kept_of[adj[e].group];
                    if (r == MINLSH__DEDUP_NONE) continue;
                    if (adj[e].sim > best || (adj[e].sim == best && r < rep)) {
                        best = adj[e].sim;
                        rep = r;
                    }
                }
            }
            if (rep == MINLSH__DEDUP_NONE) {
                kept_of[g] = doc;
                rep = doc;
                best = 1.0;
            }
            x->representative = rep;
            x->cluster = rep;
            x->kept = rep == doc;
            x->exact = rep != doc && d->docs[rep].group == g;
            x->similarity = best;
        }
    }
    minlsh__free(a, off);
    minlsh__free(a, fill);
    minlsh__free(a, adj);
    minlsh__free(a, kept_of);
    minlsh__free(a, order);
    return rc;
}

int minlsh_dedup_run(minlsh_dedup *d) {
    const minlsh_allocator *a;
    minlsh__kv *cand = NULL;
    size_t n_cand = 0, i;
    int rc;
    if (d == NULL) return MINLSH_E_NULL;
    if (d->ran) return MINLSH_E_STATE;
    a = &d->alloc;
    /* A failed earlier run leaves nothing behind. */
    minlsh__free(a, d->edges);
    minlsh__free(a, d->decisions);
    d->edges = NULL;
    d->decisions = NULL;
    d->n_edges = 0;
    rc = minlsh__dedup_candidates(d, &cand, &n_cand);
    if (rc == 0) rc = minlsh__dedup_verify_all(d, cand, n_cand);
    minlsh__free(a, cand);
    if (rc == 0) {
        d->decisions =
            (minlsh_dedup_decision *)minlsh__calloc(a, d->n_docs + 1, sizeof *d->decisions);
        if (d->decisions == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0)
        rc = d->opts.group == MINLSH_GROUP_STRICT ? minlsh__dedup_strict(d)
                                                  : minlsh__dedup_components(d);
    if (rc != 0) {
        minlsh__free(a, d->edges);
        minlsh__free(a, d->decisions);
        d->edges = NULL;
        d->decisions = NULL;
        d->n_edges = 0;
        return rc;
    }
    d->candidates = n_cand;
    for (i = 0, d->n_kept = 0; i < d->n_docs; i++) d->n_kept += d->decisions[i].kept;
    /* The batch scratch is not needed any more. */
    for (i = 0; i < d->batch_cap; i++) minlsh_shingleset_free(d->batch_sets[i]);
    minlsh__free(a, d->batch_sets);
    d->batch_sets = NULL;
    d->batch_cap = 0;
    d->ran = 1;
    return 0;
}
