/*
 * Clusters: connected components of a pair graph, by union-find with path
 * halving and union by size. Groups of two or more, members ascending,
 * groups ordered by their smallest member.
 *
 * minlsh_index_clusters never materialises the pairs. With min_similarity
 * 0 every bucket is one clique, so chaining its members is enough: linear
 * however hot the bucket. Otherwise the members of a bucket are grouped by
 * identical signature (identical signatures estimate 1, so they are joined,
 * and they relate to everyone else alike), and only one representative per
 * distinct signature is compared pairwise, skipping pairs already joined.
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

void minlsh__lsh_uf_union(minlsh__lsh_uf *uf, uint32_t x, uint32_t y) {
    x = minlsh__lsh_uf_find(uf, x);
    y = minlsh__lsh_uf_find(uf, y);
    if (x == y) return;
    if (uf->size[x] < uf->size[y]) {
        uint32_t t = x;
        x = y;
        y = t;
    }
    uf->parent[y] = x;
    uf->size[x] += uf->size[y];
}

/* ---- the result handle -------------------------------------------------- */

/* Build the handle from the m nodes that belong to a group of two or more:
 * ids[] ascending and label[i] the (root) label of node i, labels below
 * n_labels. Groups are numbered in order of first appearance, which is the
 * order of their smallest member; a counting pass then places members. */
static int minlsh__clusters_build(minlsh_clusters **out, const minlsh_allocator *a,
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

int minlsh_clusters_members(const minlsh_clusters *clusters, size_t i, uint64_t *ids,
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
    minlsh__lsh_sort_u64(u, m);
    m = minlsh__lsh_unique_u64(u, m);
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
    rc = minlsh__clusters_build(out, &al, u, label, m, m);
done:
    minlsh__free(&al, label);
    minlsh__lsh_uf_free(&uf, &al);
    minlsh__free(&al, u);
    return rc;
}

/* ---- from an index ------------------------------------------------------ */

/* A 64-bit digest of a whole signature, to group identical ones. */
static uint64_t minlsh__sig_digest(const uint32_t *sig, uint32_t k) {
    uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ k;
    uint32_t i;
    for (i = 0; i + 1 < k; i += 2)
        h = minlsh__mix64(h ^ ((uint64_t)sig[i] | ((uint64_t)sig[i + 1] << 32))) + i;
    if (i < k) h = minlsh__mix64(h ^ sig[i]) + i;
    return h;
}

typedef struct minlsh__lsh_member {
    uint64_t digest;
    uint32_t slot;
} minlsh__lsh_member;

static int minlsh__member_cmp(const void *x, const void *y) {
    const minlsh__lsh_member *p = (const minlsh__lsh_member *)x;
    const minlsh__lsh_member *q = (const minlsh__lsh_member *)y;
    if (p->digest != q->digest) return p->digest < q->digest ? -1 : 1;
    if (p->slot != q->slot) return p->slot < q->slot ? -1 : 1;
    return 0;
}

/* Join the members of one bucket (m[0..n), sorted by digest) whose edges
 * pass min_similarity. reps is scratch for n slots. */
static void minlsh__join_bucket(const minlsh_index *ix, minlsh__lsh_uf *uf,
                                const minlsh__lsh_member *m, size_t n,
                                uint32_t *reps, double min_similarity) {
    size_t i, x, y, nr = 0, run = 0;
    size_t bytes = (size_t)ix->k * sizeof(uint32_t);
    for (i = 0; i < n; i++) {
        if (i > 0 && m[i].digest == m[run].digest &&
            memcmp(minlsh__lsh_sig(ix, m[i].slot), minlsh__lsh_sig(ix, m[run].slot),
                   bytes) == 0) {
            minlsh__lsh_uf_union(uf, m[run].slot, m[i].slot);
            continue;
        }
        if (i == 0 || m[i].digest != m[run].digest) run = i;
        reps[nr++] = m[i].slot; /* a new signature (or a digest collision) */
    }
    for (x = 0; x < nr; x++)
        for (y = x + 1; y < nr; y++) {
            double est;
            if (minlsh__lsh_uf_find(uf, reps[x]) == minlsh__lsh_uf_find(uf, reps[y])) continue;
            (void)minlsh_signature_estimate(&est, minlsh__lsh_sig(ix, reps[x]),
                                            minlsh__lsh_sig(ix, reps[y]), ix->k);
            if (est >= min_similarity) minlsh__lsh_uf_union(uf, reps[x], reps[y]);
        }
}

int minlsh_index_clusters(const minlsh_index *index, double min_similarity,
                          minlsh_clusters **out) {
    const minlsh_allocator *a;
    minlsh__lsh_uf uf = {NULL, NULL};
    minlsh__lsh_member *m = NULL;
    uint32_t *reps = NULL, *label = NULL;
    uint64_t *ids = NULL, *digest = NULL;
    size_t m_cap = 0, r_cap = 0, ns, s, p, n, kept;
    uint32_t j;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (index == NULL) return MINLSH_E_NULL;
    if (!(min_similarity >= 0.0 && min_similarity <= 1.0)) return MINLSH_E_PARAM;
    a = &index->alloc;
    ns = index->n_slots;
    rc = minlsh__lsh_uf_init(&uf, a, ns);
    if (rc != 0) return rc;
    if (min_similarity > 0.0) {
        digest = (uint64_t *)minlsh__malloc(a, (ns > 0 ? ns : 1) * sizeof *digest);
        if (digest == NULL) {
            rc = MINLSH_E_NOMEM;
            goto done;
        }
        for (s = 0; s < ns; s++)
            if (index->state[s] == MINLSH__LSH_BUCKETED)
                digest[s] = minlsh__sig_digest(minlsh__lsh_sig(index, s), index->k);
    }
    for (j = 0; j < index->bands && rc == 0; j++) {
        const minlsh__lsh_table *t = &index->band[j];
        for (p = 0; p < t->cap && rc == 0; p++) {
            uint32_t head = t->e[p].val, x;
            if (head == MINLSH__LSH_NIL) continue;
            x = minlsh__lsh_link_at(index, head, j)->next;
            if (x == MINLSH__LSH_NIL) continue;
            if (min_similarity <= 0.0) {
                /* Every pair in a bucket is an edge: a chain joins them all. */
                for (; x != MINLSH__LSH_NIL; x = minlsh__lsh_link_at(index, x, j)->next)
                    minlsh__lsh_uf_union(&uf, head, x);
                continue;
            }
            for (n = 0, x = head; x != MINLSH__LSH_NIL;
                 x = minlsh__lsh_link_at(index, x, j)->next, n++) {
                void *grown = m;
                rc = minlsh__reserve(a, &grown, &m_cap, n, n + 1, sizeof *m);
                m = (minlsh__lsh_member *)grown;
                if (rc != 0) break;
                m[n].digest = digest[x];
                m[n].slot = x;
            }
            if (rc == 0) {
                void *grown = reps;
                rc = minlsh__reserve(a, &grown, &r_cap, 0, n, sizeof *reps);
                reps = (uint32_t *)grown;
            }
            if (rc != 0) break;
            qsort(m, n, sizeof *m, minlsh__member_cmp);
            minlsh__join_bucket(index, &uf, m, n, reps, min_similarity);
        }
    }
    if (rc != 0) goto done;
    /* The grouped documents (only bucketed ones can be), by ascending id,
     * labelled by their root. */
    for (s = 0, n = 0; s < ns; s++)
        if (uf.size[minlsh__lsh_uf_find(&uf, (uint32_t)s)] >= 2) n++;
    ids = (uint64_t *)minlsh__malloc(a, (n > 0 ? n : 1) * sizeof *ids);
    label = (uint32_t *)minlsh__malloc(a, (n > 0 ? n : 1) * sizeof *label);
    if (ids == NULL || label == NULL) {
        rc = MINLSH_E_NOMEM;
        goto done;
    }
    for (s = 0, kept = 0; s < ns; s++)
        if (uf.size[minlsh__lsh_uf_find(&uf, (uint32_t)s)] >= 2) ids[kept++] = index->ids[s];
    minlsh__lsh_sort_u64(ids, n);
    for (s = 0; s < n; s++)
        label[s] = minlsh__lsh_uf_find(&uf, minlsh__lsh_find_id(index, ids[s]));
    rc = minlsh__clusters_build(out, a, ids, label, n, ns);
done:
    minlsh__free(a, m);
    minlsh__free(a, reps);
    minlsh__free(a, ids);
    minlsh__free(a, label);
    minlsh__free(a, digest);
    minlsh__lsh_uf_free(&uf, a);
    return rc;
}
