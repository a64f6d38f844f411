/*
 * The keep/drop policy (docs/dedup.md, "Decisions"): from the exact groups,
 * the lengths and the verified edges, a decision for every document,
 * emitted in document order. The engine and minlsh_dedup_decide (for
 * front ends that find and verify their pairs elsewhere, such as the Dask
 * pipeline) both come here.
 *
 * Memory, per document: 4 bytes of union-find (COMPONENTS, 8 with
 * LONGEST), or 16 (STRICT, 32 with LONGEST, which sorts); 24 per edge in
 * STRICT's adjacency. Time: near-linear (union-find with path halving and
 * the smaller number as root), plus a sort by length for LONGEST.
 */
#include "dedup.h"

#include <math.h>

#define MINLSH__DEDUP_EMIT 65536 /* decisions per emitted chunk */

static uint32_t minlsh__dedup_ex(const minlsh__dedup_policy *p, uint32_t i) {
    return p->exact_of != NULL ? p->exact_of[i] : i;
}

/* 1 if document x should be kept rather than y. */
static int minlsh__dedup_better(const minlsh__dedup_policy *p, uint32_t x, uint32_t y) {
    if (y == MINLSH__DEDUP_NONE) return 1;
    if (p->keep == MINLSH_KEEP_LONGEST && p->lengths != NULL && p->lengths[x] != p->lengths[y])
        return p->lengths[x] > p->lengths[y];
    return x < y;
}

/* The similarity of the verified edge between groups x and y; NaN if
 * there is none. */
static double minlsh__dedup_edge_sim(const minlsh__dedup_policy *p, uint32_t x, uint32_t y) {
    size_t lo = 0, hi = p->n_edges;
    uint32_t a = x < y ? x : y, b = x < y ? y : x;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const minlsh__dedup_edge *e = &p->edges[mid];
        if (e->a < a || (e->a == a && e->b < b)) lo = mid + 1;
        else hi = mid;
    }
    if (lo < p->n_edges && p->edges[lo].a == a && p->edges[lo].b == b) return p->edges[lo].sim;
    return NAN;
}

/* Cluster numbers, in place: key[i] is any member of i's cluster (the
 * same for every member) on entry, its cluster's number on return. A
 * cluster of two or more is numbered from 1 in the order of its first
 * document; one alone gets 0. One array: below 3 a key's slot counts its
 * members (0, 1, 2 or more), from 3 on it holds its number + 2. */
static int minlsh__dedup_number(uint32_t *key, uint64_t n, const minlsh_allocator *a) {
    uint32_t *slot, next = 1;
    uint64_t i;
    slot = (uint32_t *)minlsh__calloc(a, (size_t)n + 1, sizeof *slot);
    if (slot == NULL) return MINLSH_E_NOMEM;
    for (i = 0; i < n; i++)
        if (slot[key[i]] < 2) slot[key[i]]++;
    for (i = 0; i < n; i++) {
        uint32_t *s = &slot[key[i]];
        if (*s == 2) *s = 2 + next++; /* i is the cluster's first document */
        key[i] = *s > 2 ? *s - 2 : 0;
    }
    minlsh__free(a, slot);
    return 0;
}

/* Emit the decisions, given each document's representative (rep) and a
 * member of its cluster (cluster; NULL: the representative). */
static int minlsh__dedup_emit_all(const minlsh__dedup_policy *p, const minlsh_allocator *a,
                                  const uint32_t *rep, const uint32_t *cluster_of,
                                  minlsh__dedup_emit emit, void *ctx) {
    minlsh_dedup_decision *v;
    uint32_t *cluster;
    uint64_t first;
    int rc = 0;
    cluster = (uint32_t *)minlsh__malloc(a, ((size_t)p->n + 1) * sizeof *cluster);
    if (cluster == NULL) return MINLSH_E_NOMEM;
    memcpy(cluster, cluster_of != NULL ? cluster_of : rep, (size_t)p->n * sizeof *cluster);
    if ((rc = minlsh__dedup_number(cluster, p->n, a)) != 0) {
        minlsh__free(a, cluster);
        return rc;
    }
    v = (minlsh_dedup_decision *)minlsh__calloc(a, MINLSH__DEDUP_EMIT, sizeof *v);
    if (v == NULL) {
        minlsh__free(a, cluster);
        return MINLSH_E_NOMEM;
    }
    for (first = 0; first < p->n && rc == 0; first += MINLSH__DEDUP_EMIT) {
        size_t m = p->n - first < MINLSH__DEDUP_EMIT ? (size_t)(p->n - first) : MINLSH__DEDUP_EMIT;
        size_t j;
        for (j = 0; j < m; j++) {
            uint32_t i = (uint32_t)(first + j), r = rep[i];
            minlsh_dedup_decision *x = &v[j];
            x->cluster = cluster[i];
            x->representative = r;
            x->kept = r == i;
            x->exact = !x->kept && minlsh__dedup_ex(p, i) == minlsh__dedup_ex(p, r);
            x->similarity = x->kept || x->exact
                                ? 1.0
                                : minlsh__dedup_edge_sim(p, minlsh__dedup_ex(p, i),
                                                         minlsh__dedup_ex(p, r));
        }
        rc = emit(ctx, first, v, m);
    }
    minlsh__free(a, v);
    minlsh__free(a, cluster);
    return rc;
}

static uint32_t minlsh__dedup_root(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving */
        x = parent[x];
    }
    return x;
}

/* The smaller number is always the root, so every parent is below its
 * child and one ascending pass flattens the forest; the root is then the
 * component's smallest document. */
void minlsh__dedup_join(uint32_t *parent, uint64_t n, const uint32_t *exact_of,
                        const minlsh__dedup_edge *edges, size_t n_edges) {
    size_t i;
    for (i = 0; i < n; i++) parent[i] = exact_of != NULL ? exact_of[i] : (uint32_t)i;
    for (i = 0; i < n_edges; i++) {
        uint32_t x = minlsh__dedup_root(parent, edges[i].a);
        uint32_t y = minlsh__dedup_root(parent, edges[i].b);
        if (x < y) parent[y] = x;
        else if (y < x) parent[x] = y;
    }
    for (i = 0; i < n; i++) parent[i] = parent[parent[i]];
}

/* Connected components of the edges and the exact groups; each keeps its
 * best document. */
static int minlsh__dedup_components(const minlsh__dedup_policy *p, const minlsh_allocator *a,
                                    minlsh__dedup_emit emit, void *ctx) {
    uint32_t *parent, *best = NULL;
    size_t i;
    int rc;
    parent = (uint32_t *)minlsh__malloc(a, ((size_t)p->n + 1) * sizeof *parent);
    if (parent == NULL) return MINLSH_E_NOMEM;
    if (p->keep == MINLSH_KEEP_LONGEST && p->lengths != NULL) {
        best = (uint32_t *)minlsh__malloc(a, ((size_t)p->n + 1) * sizeof *best);
        if (best == NULL) {
            minlsh__free(a, parent);
            return MINLSH_E_NOMEM;
        }
    }
    minlsh__dedup_join(parent, p->n, p->exact_of, p->edges, p->n_edges);
    if (best != NULL)
        for (i = 0; i < p->n; i++) {
            uint32_t r = parent[i];
            if (r == i) best[i] = (uint32_t)i;
            else if (minlsh__dedup_better(p, (uint32_t)i, best[r])) best[r] = (uint32_t)i;
        }
    if (best != NULL)
        for (i = 0; i < p->n; i++) best[i] = best[parent[i]]; /* each one's representative */
    rc = minlsh__dedup_emit_all(p, a, best != NULL ? best : parent, parent, emit, ctx);
    minlsh__free(a, parent);
    minlsh__free(a, best);
    return rc;
}

typedef struct minlsh__dedup_adj {
    uint32_t group;
    double sim;
} minlsh__dedup_adj;

/* Documents in keep order: each is kept unless an exact copy or a verified
 * near-duplicate of it is kept already; then it is attributed to that one
 * (the most similar; ties: the lowest number). */
static int minlsh__dedup_strict(const minlsh__dedup_policy *p, const minlsh_allocator *a,
                                minlsh__dedup_emit emit, void *ctx) {
    size_t n = (size_t)p->n, *off, *fill = NULL, i, t;
    minlsh__dedup_adj *adj = NULL;
    uint32_t *kept_of = NULL, *rep = NULL;
    minlsh__kv *order = NULL;
    int longest = p->keep == MINLSH_KEEP_LONGEST && p->lengths != NULL, rc = 0;
    off = (size_t *)minlsh__calloc(a, n + 2, sizeof *off);
    if (off != NULL) fill = (size_t *)minlsh__calloc(a, n + 1, sizeof *fill);
    if (fill != NULL) adj = (minlsh__dedup_adj *)minlsh__calloc(a, 2 * p->n_edges + 1, sizeof *adj);
    if (adj != NULL) kept_of = (uint32_t *)minlsh__malloc(a, (n + 1) * sizeof *kept_of);
    if (kept_of != NULL) rep = (uint32_t *)minlsh__malloc(a, (n + 1) * sizeof *rep);
    if (rep != NULL && longest) order = (minlsh__kv *)minlsh__calloc(a, n + 1, sizeof *order);
    if (rep == NULL || (longest && order == NULL)) rc = MINLSH_E_NOMEM;
    if (rc == 0) {
        for (i = 0; i < p->n_edges; i++) {
            off[p->edges[i].a + 1]++;
            off[p->edges[i].b + 1]++;
        }
        for (i = 0; i < n; i++) off[i + 1] += off[i];
        for (i = 0; i < p->n_edges; i++) {
            uint32_t x = p->edges[i].a, y = p->edges[i].b;
            adj[off[x] + fill[x]].group = y;
            adj[off[x] + fill[x]++].sim = p->edges[i].sim;
            adj[off[y] + fill[y]].group = x;
            adj[off[y] + fill[y]++].sim = p->edges[i].sim;
        }
        minlsh__free(a, fill);
        fill = NULL;
        for (i = 0; i < n; i++) kept_of[i] = MINLSH__DEDUP_NONE;
        if (order != NULL) {
            /* Longest first (the complement orders lengths descending),
             * then by number. */
            for (i = 0; i < n; i++) {
                order[i].key = ~p->lengths[i];
                order[i].val = i;
            }
            minlsh__sort_kv(order, n);
        }
        for (t = 0; t < n; t++) {
            uint32_t doc = (uint32_t)(order != NULL ? order[t].val : t), r = MINLSH__DEDUP_NONE;
            uint32_t g = minlsh__dedup_ex(p, doc);
            double best = -1.0;
            size_t e;
            if (kept_of[g] != MINLSH__DEDUP_NONE) {
                r = kept_of[g];
            } else {
                for (e = off[g]; e < off[g + 1]; e++) {
                    uint32_t k = kept_of[adj[e].group];
                    if (k == MINLSH__DEDUP_NONE) continue;
                    if (adj[e].sim > best || (adj[e].sim == best && k < r)) {
                        best = adj[e].sim;
                        r = k;
                    }
                }
            }
            if (r == MINLSH__DEDUP_NONE) {
                kept_of[g] = doc;
                r = doc;
            }
            rep[doc] = r;
        }
        minlsh__free(a, order);
        order = NULL;
        rc = minlsh__dedup_emit_all(p, a, rep, NULL, emit, ctx);
    }
    minlsh__free(a, off);
    minlsh__free(a, fill);
    minlsh__free(a, adj);
    minlsh__free(a, kept_of);
    minlsh__free(a, rep);
    minlsh__free(a, order);
    return rc;
}

int minlsh__dedup_decide(const minlsh__dedup_policy *p, const minlsh_allocator *a,
                         minlsh__dedup_emit emit, void *ctx) {
    if (p->n == 0) return 0;
    return p->group == MINLSH_GROUP_STRICT ? minlsh__dedup_strict(p, a, emit, ctx)
                                           : minlsh__dedup_components(p, a, emit, ctx);
}

/* ---- without an engine ------------------------------------------------------- */

static int minlsh__dedup_edge_less(const minlsh__dedup_edge *x, const minlsh__dedup_edge *y) {
    return x->a < y->a || (x->a == y->a && x->b < y->b);
}

static int minlsh__dedup_copy_out(void *ctx, uint64_t first, minlsh_dedup_decision *v, size_t n) {
    memcpy((minlsh_dedup_decision *)ctx + first, v, n * sizeof *v);
    return 0;
}

int minlsh_dedup_decide(const minlsh_dedup_edge *edges, size_t n_edges, uint64_t n_docs,
                        const uint64_t *exact_of, const uint64_t *lengths, uint32_t keep,
                        uint32_t group, minlsh_dedup_decision *decisions,
                        const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh__dedup_policy p;
    minlsh__dedup_edge *e = NULL;
    minlsh__kv *order = NULL;
    uint32_t *ex = NULL;
    size_t i, m = 0;
    int rc;
    if ((edges == NULL && n_edges > 0) || (decisions == NULL && n_docs > 0)) return MINLSH_E_NULL;
    if (keep != MINLSH_KEEP_FIRST && keep != MINLSH_KEEP_LONGEST) return MINLSH_E_PARAM;
    if (group != MINLSH_GROUP_COMPONENTS && group != MINLSH_GROUP_STRICT) return MINLSH_E_PARAM;
    if (n_docs > MINLSH__DEDUP_MAX_DOCS) return MINLSH_E_TOOBIG;
    if ((rc = minlsh__alloc_setup(&al, alloc)) != 0) return rc;
    for (i = 0; exact_of != NULL && i < n_docs; i++)
        if (exact_of[i] > i || exact_of[exact_of[i]] != exact_of[i]) return MINLSH_E_PARAM;
    for (i = 0; i < n_edges; i++) {
        uint64_t x = edges[i].a, y = edges[i].b;
        if (x >= y || y >= n_docs || !(edges[i].similarity >= 0.0 && edges[i].similarity <= 1.0))
            return MINLSH_E_PARAM;
        if (exact_of != NULL && (exact_of[x] != x || exact_of[y] != y)) return MINLSH_E_PARAM;
    }
    if (exact_of != NULL) {
        ex = (uint32_t *)minlsh__malloc(&al, ((size_t)n_docs + 1) * sizeof *ex);
        if (ex == NULL) return MINLSH_E_NOMEM;
        for (i = 0; i < n_docs; i++) ex[i] = (uint32_t)exact_of[i];
    }
    /* Sorted by (a, b) through their positions, repeats dropped (the
     * first one stays). */
    e = (minlsh__dedup_edge *)minlsh__calloc(&al, n_edges + 1, sizeof *e);
    order = (minlsh__kv *)minlsh__calloc(&al, n_edges + 1, sizeof *order);
    rc = e != NULL && order != NULL ? 0 : MINLSH_E_NOMEM;
    if (rc == 0) {
        for (i = 0; i < n_edges; i++) {
            order[i].key = edges[i].a << 32 | edges[i].b;
            order[i].val = i;
        }
        minlsh__sort_kv(order, n_edges);
        for (i = 0; i < n_edges; i++) {
            const minlsh_dedup_edge *s = &edges[order[i].val];
            minlsh__dedup_edge x;
            x.a = (uint32_t)s->a;
            x.b = (uint32_t)s->b;
            x.sim = s->similarity;
            if (m > 0 && !minlsh__dedup_edge_less(&e[m - 1], &x)) continue;
            e[m++] = x;
        }
        p.n = n_docs;
        p.exact_of = ex;
        p.lengths = lengths;
        p.edges = e;
        p.n_edges = m;
        p.keep = keep;
        p.group = group;
        rc = minlsh__dedup_decide(&p, &al, minlsh__dedup_copy_out, decisions);
    }
    minlsh__free(&al, order);
    minlsh__free(&al, e);
    minlsh__free(&al, ex);
    return rc;
}
