/*
 * Clusters: connected components of a pair graph, by union-find with path
 * halving and union by size. Groups of two or more, members ascending,
 * groups ordered by their smallest member.
 *
 * minlsh_clusters_from_index never materialises the pairs. The index already
 * keeps identical signatures as one group (they estimate 1, so they are
 * joined, and they relate to everyone else alike): union-find runs over
 * groups, each weighing its member count. With min_similarity 0 every
 * bucket is one clique, so chaining its groups is enough: linear however hot
 * the bucket. Otherwise the groups of a bucket are compared pairwise,
 * skipping pairs already joined and stopping once the bucket is one
 * component.
 */
#include "lsh.h"

#include <stdlib.h>

struct minlsh_clusters {
    minlsh_allocator alloc;
    size_t n;
    size_t *off;   /* n + 1 offsets into ids */
    uint64_t *ids; /* every member, group after group */
};

/* ---- union-find --------------------------------------------------------- */

int minlsh__lsh_uf_init(minlsh__lsh_uf *uf, const minlsh_allocator *a, size_t n) {
    size_t i, m = n > 0 ? n : 1;
    uf->parent = (uint32_t *)minlsh__calloc(a, m, sizeof *uf->parent);
    uf->size = (uint32_t *)minlsh__calloc(a, m, sizeof *uf->size);
    if (uf->parent == NULL || uf->size == NULL) {
        minlsh__lsh_uf_free(uf, a);
        return MINLSH_E_NOMEM;
    }
    for (i = 0; i < n; i++) {
        uf->parent[i] = (uint32_t)i;
        uf->size[i] = 1;
    }
    return 0;
}

void minlsh__lsh_uf_free(minlsh__lsh_uf *uf, const minlsh_allocator *a) {
    minlsh__free(a, uf->parent);
    minlsh__free(a, uf->size);
    uf->parent = NULL;
    uf->size = NULL;
}

uint32_t minlsh__lsh_uf_find(minlsh__lsh_uf *uf, uint32_t x) {
    while (uf->parent[x] != x) {
        uf->parent[x] = uf->parent[uf->parent[x]]; /* path halving */
        x = uf->parent[x];
    }
    return x;
}

int minlsh__lsh_uf_union(minlsh__lsh_uf *uf, uint32_t x, uint32_t y) {
    x = minlsh__lsh_uf_find(uf, x);
    y = minlsh__lsh_uf_find(uf, y);
    if (x == y) return 0;
    if (uf->size[x] < uf->size[y]) {
        uint32_t t = x;
        x = y;
        y = t;
    }
    uf->parent[y] = x;
    uf->size[x] += uf->size[y];
    return 1;
}

/* ---- the result handle -------------------------------------------------- */

/* Build the handle from the m nodes that belong to a group of two or more:
 * ids[] ascending and label[i] the (root) label of node i, labels below
 * n_labels. Groups are numbered in order of first appearance, which is the
 * order of their smallest member; a counting pass then places members. */
int minlsh__lsh_clusters_build(minlsh_clusters **out, const minlsh_allocator *a,
                               const uint64_t *ids, const uint32_t *label,
                               size_t m, size_t n_labels) {
    minlsh_clusters *c;
    uint32_t *group = NULL;
    size_t *fill = NULL, i, g, ng = 0;
    c = (minlsh_clusters *)minlsh__calloc(a, 1, sizeof *c);
    if (c == NULL) return MINLSH_E_NOMEM;
    c->alloc = *a;
    group = (uint32_t *)minlsh__malloc(a, (n_labels > 0 ? n_labels : 1) * sizeof *group);
    fill = (size_t *)minlsh__calloc(a, m + 1, sizeof *fill);
    c->off = (size_t *)minlsh__calloc(a, m + 1, sizeof *c->off);
    c->ids = (uint64_t *)minlsh__malloc(a, (m > 0 ? m : 1) * sizeof *c->ids);
    if (group == NULL || fill == NULL || c->off == NULL || c->ids == NULL) {
        minlsh__free(a, group);
        minlsh__free(a, fill);
        minlsh_clusters_free(c);
        return MINLSH_E_NOMEM;
    }
    for (i = 0; i < m; i++) group[label[i]] = MINLSH__LSH_NIL;
    for (i = 0; i < m; i++) {
        if (group[label[i]] == MINLSH__LSH_NIL) group[label[i]] = (uint32_t)ng++;
        c->off[group[label[i]] + 1]++;
    }
    for (g = 0; g < ng; g++) c->off[g + 1] += c->off[g];
    for (i = 0; i < m; i++) {
        g = group[label[i]];
        c->ids[c->off[g] + fill[g]++] = ids[i];
    }
    c->n = ng;
    minlsh__free(a, group);
    minlsh__free(a, fill);
    *out = c;
    return 0;
}

void minlsh_clusters_free(minlsh_clusters *clusters) {
    minlsh_allocator al;
    if (clusters == NULL) return;
    al = clusters->alloc;
    minlsh__free(&al, clusters->off);
    minlsh__free(&al, clusters->ids);
    minlsh__free(&al, clusters);
}

size_t minlsh_clusters_count(const minlsh_clusters *clusters) {
    return clusters != NULL ? clusters->n : 0;
}

int minlsh_clusters_copy_members(const minlsh_clusters *clusters, size_t i, uint64_t *ids,
                            size_t cap, size_t *n_out) {
    size_t size;
    if (clusters == NULL) return MINLSH_E_NULL;
    if (i >= clusters->n) return MINLSH_E_NOTFOUND;
    size = clusters->off[i + 1] - clusters->off[i];
    if (n_out != NULL) *n_out = size;
    if (cap < size) return MINLSH_E_BUFSIZE;
    if (ids == NULL) return MINLSH_E_NULL;
    memcpy(ids, clusters->ids + clusters->off[i], size * sizeof *ids);
    return 0;
}

/* ---- from arbitrary edges ----------------------------------------------- */

/* Index of x in the sorted, duplicate-free u[0..n). x is present. */
static uint32_t minlsh__bsearch(const uint64_t *u, size_t n, uint64_t x) {
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (u[mid] <= x) lo = mid;
        else hi = mid;
    }
    return (uint32_t)lo;
}

int minlsh_clusters_from_edges(minlsh_clusters **out, const uint64_t *a,
                               const uint64_t *b, size_t n,
                               const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh__lsh_uf uf = {NULL, NULL};
    uint64_t *u = NULL;
    uint32_t *label = NULL;
    size_t i, m = 0, bytes;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (n > 0 && (a == NULL || b == NULL)) return MINLSH_E_NULL;
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    /* Dense numbering by sorting the endpoints: deterministic, and the
     * ascending order is the output order. */
    if (minlsh__mul_size(&bytes, n, 2 * sizeof *u) != 0) return MINLSH_E_TOOBIG;
    u = (uint64_t *)minlsh__malloc(&al, bytes > 0 ? bytes : sizeof *u);
    if (u == NULL) return MINLSH_E_NOMEM;
    for (i = 0; i < n; i++)
        if (a[i] != b[i]) {
            u[m++] = a[i];
            u[m++] = b[i];
        }
    minlsh__sort_u64(u, m);
    m = minlsh__unique_u64(u, m);
    if ((uint64_t)m > MINLSH__LSH_MAX_DOCS) {
        rc = MINLSH_E_TOOBIG;
        goto done;
    }
    rc = minlsh__lsh_uf_init(&uf, &al, m);
    if (rc != 0) goto done;
    for (i = 0; i < n; i++)
        if (a[i] != b[i])
            minlsh__lsh_uf_union(&uf, minlsh__bsearch(u, m, a[i]), minlsh__bsearch(u, m, b[i]));
    label = (uint32_t *)minlsh__malloc(&al, (m > 0 ? m : 1) * sizeof *label);
    if (label == NULL) {
        rc = MINLSH_E_NOMEM;
        goto done;
    }
    /* Every endpoint has an edge to another node: all are in groups. */
    for (i = 0; i < m; i++) label[i] = minlsh__lsh_uf_find(&uf, (uint32_t)i);
    rc = minlsh__lsh_clusters_build(out, &al, u, label, m, m);
done:
    minlsh__free(&al, label);
    minlsh__lsh_uf_free(&uf, &al);
    minlsh__free(&al, u);
    return rc;
}

/* ---- from an index ------------------------------------------------------ */

/* Join the groups g[0..n) of one bucket whose pairs pass min_similarity,
 * skipping pairs already in one component and stopping as soon as the
 * whole bucket is one component, so a bucket of near-duplicates costs about
 * n estimates, not n^2/2. roots is scratch for n values. */
void minlsh__lsh_join_bucket(minlsh__lsh_uf *uf, const uint32_t *g, size_t n,
                             uint64_t *roots, double min_similarity,
                             minlsh__lsh_sig_of_fn sig_of, const void *ctx, uint32_t k) {
    size_t x, y, distinct;
    if (n < 2) return;
    if (min_similarity <= 0.0) {
        /* Every pair in a bucket is an edge: a chain joins them all. */
        for (x = 1; x < n; x++) (void)minlsh__lsh_uf_union(uf, g[0], g[x]);
        return;
    }
    for (x = 0; x < n; x++) roots[x] = minlsh__lsh_uf_find(uf, g[x]);
    minlsh__sort_u64(roots, n);
    distinct = minlsh__unique_u64(roots, n);
    for (x = 0; x < n && distinct > 1; x++)
        for (y = x + 1; y < n && distinct > 1; y++) {
            double est;
            if (minlsh__lsh_uf_find(uf, g[x]) == minlsh__lsh_uf_find(uf, g[y])) continue;
            est = minlsh__lsh_estimate(sig_of(ctx, g[x]), sig_of(ctx, g[y]), k);
            /* Each join of two of the bucket's components leaves one fewer. */
            if (est >= min_similarity && minlsh__lsh_uf_union(uf, g[x], g[y])) distinct--;
        }
}

static const uint32_t *minlsh__index_sig_of(const void *ctx, uint32_t g) {
    return minlsh__lsh_gsig((const minlsh_index *)ctx, g);
}

int minlsh_clusters_from_index(minlsh_clusters **out, const minlsh_index *index,
                               double min_similarity, const minlsh_allocator *alloc) {
    const minlsh_allocator *a;
    minlsh_allocator result_alloc;
    minlsh__lsh_uf uf = {NULL, NULL};
    uint32_t *m = NULL, *label = NULL;
    uint64_t *ids = NULL, *roots = NULL;
    size_t m_cap = 0, r_cap = 0, ng, g, s, p, n, kept;
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
        rc = minlsh_clusters_from_index(out, tmp, min_similarity, alloc);
        minlsh_index_free(tmp);
        return rc;
    }
    rc = minlsh__alloc_setup(&result_alloc, alloc);
    if (rc != 0) return rc;
    a = &index->alloc;
    ng = index->n_groups;
    /* Union-find over groups, each weighing its member count: members of a
     * group are one component already (identical signatures estimate 1). */
    rc = minlsh__lsh_uf_init(&uf, a, ng);
    if (rc != 0) return rc;
    for (g = 0; g < ng; g++) uf.size[g] = minlsh__lsh_group_at(index, g)->count;
    for (j = 0; j < index->bands && rc == 0; j++) {
        const minlsh__lsh_table *t = &index->band[j];
        for (p = 0; p < t->len && rc == 0; p++) {
            uint32_t v = t->e[p].val, x;
            /* Only chains hold two groups or more. */
            if (v == MINLSH__LSH_NIL || !(v & MINLSH__LSH_CHAIN)) continue;
            for (n = 0; (x = minlsh__lsh_bucket_next(index, &v)) != MINLSH__LSH_NIL; n++) {
                void *grown = m;
                rc = minlsh__reserve(a, &grown, &m_cap, n, n + 1, sizeof *m);
                m = (uint32_t *)grown;
                if (rc != 0) break;
                m[n] = x;
            }
            if (rc == 0) {
                void *grown = roots;
                rc = minlsh__reserve(a, &grown, &r_cap, 0, n, sizeof *roots);
                roots = (uint64_t *)grown;
            }
            if (rc != 0) break;
            minlsh__lsh_join_bucket(&uf, m, n, roots, min_similarity, minlsh__index_sig_of,
                                    index, index->k);
        }
    }
    if (rc != 0) goto done;
    /* The grouped documents (never those of the empty signature), by
     * ascending id, labelled by their root. */
    for (s = 0, n = 0; s < index->n_slots; s++) {
        uint32_t gs = minlsh__lsh_doc_at(index, s)->group;
        if (gs != MINLSH__LSH_NIL && gs != index->empty_group &&
            uf.size[minlsh__lsh_uf_find(&uf, gs)] >= 2)
            n++;
    }
    ids = (uint64_t *)minlsh__malloc(a, (n > 0 ? n : 1) * sizeof *ids);
    label = (uint32_t *)minlsh__malloc(a, (n > 0 ? n : 1) * sizeof *label);
    if (ids == NULL || label == NULL) {
        rc = MINLSH_E_NOMEM;
        goto done;
    }
    for (s = 0, kept = 0; s < index->n_slots; s++) {
        uint32_t gs = minlsh__lsh_doc_at(index, s)->group;
        if (gs != MINLSH__LSH_NIL && gs != index->empty_group &&
            uf.size[minlsh__lsh_uf_find(&uf, gs)] >= 2)
            ids[kept++] = *minlsh__lsh_id_at(index, s);
    }
    minlsh__sort_u64(ids, n);
    for (s = 0; s < n; s++)
        label[s] = minlsh__lsh_uf_find(
            &uf, minlsh__lsh_doc_at(index, minlsh__lsh_find_id(index, ids[s]))->group);
    rc = minlsh__lsh_clusters_build(out, &result_alloc, ids, label, n, ng);
done:
    minlsh__free(a, m);
    minlsh__free(a, roots);
    minlsh__free(a, ids);
    minlsh__free(a, label);
    minlsh__lsh_uf_free(&uf, a);
    return rc;
}
