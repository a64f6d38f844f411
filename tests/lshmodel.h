/*
 * Shared by the band-index tests (test_index.c, test_pairs_clusters.c): a
 * model of an index (documents, their signatures and band keys) with brute
 * force over it, written from the definitions: two documents are candidates
 * iff they share (j, band key j) for some band j; pairs are the candidates
 * at or above an estimate; clusters are the connected components of the
 * pairs (found by BFS). Plus builders and comparisons of the library's
 * results. Include after testlib.h and minlsh.h; every function is static
 * inline, so a test that uses part of it compiles without warnings.
 */
#ifndef MINLSH_LSHMODEL_H
#define MINLSH_LSHMODEL_H

#include "minlsh.h"
#include "testlib.h"

/* ---- a model of the index: the documents, and brute force over them ------- */

#define MK 32 /* k of the structured tests */
#define MB 8
#define MR 4

typedef struct {
    size_t n;
    uint32_t k, b, r;
    uint64_t *id;
    uint32_t *sig;  /* n * k */
    uint64_t *key;  /* n * b */
    int *empty;
    int *live;
} model;

static inline void model_init(model *m, size_t n, uint32_t k, uint32_t b, uint32_t r) {
    m->n = n;
    m->k = k;
    m->b = b;
    m->r = r;
    m->id = (uint64_t *)calloc(n, sizeof *m->id);
    m->sig = (uint32_t *)calloc(n * k, sizeof *m->sig);
    m->key = (uint64_t *)calloc(n * b, sizeof *m->key);
    m->empty = (int *)calloc(n, sizeof *m->empty);
    m->live = (int *)calloc(n, sizeof *m->live);
}

static inline void model_free(model *m) {
    free(m->id);
    free(m->sig);
    free(m->key);
    free(m->empty);
    free(m->live);
}

static inline void model_finish(model *m) {
    size_t i, nk;
    for (i = 0; i < m->n; i++) {
        EXPECT_OK(minlsh_band_keys(m->sig + i * m->k, m->k, m->b, m->r, m->key + i * m->b,
                                   m->b, &nk));
        m->empty[i] = minlsh_signature_is_empty(m->sig + i * m->k, m->k);
    }
}

static inline int model_share(const model *m, size_t x, size_t y) {
    uint32_t j;
    if (m->empty[x] || m->empty[y]) return 0;
    for (j = 0; j < m->b; j++)
        if (m->key[x * m->b + j] == m->key[y * m->b + j]) return 1;
    return 0;
}

static inline double model_est(const model *m, size_t x, size_t y) {
    double e = -1.0;
    EXPECT_OK(minlsh_signature_estimate(&e, m->sig + x * m->k, m->sig + y * m->k, m->k));
    return e;
}

static inline int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Structured documents: families sharing bands, a global pool of band
 * variants that links families, random noise, and a few empty signatures. */
static inline void model_generate(model *m, uint64_t seed, size_t n_fam, size_t n_empty) {
    uint64_t st = seed;
    uint32_t *base = (uint32_t *)malloc(n_fam * m->k * sizeof *base);
    uint32_t pool[64][4][16];
    size_t i, f, c;
    uint32_t j, v;
    for (i = 0; i < n_fam * m->k; i++) base[i] = (uint32_t)tl_rand(&st);
    for (j = 0; j < 64; j++)
        for (c = 0; c < 4; c++)
            for (v = 0; v < 16; v++) pool[j][c][v] = (uint32_t)tl_rand(&st);
    for (i = 0; i < m->n; i++) {
        uint32_t *s = m->sig + i * m->k;
        m->id[i] = tl_rand(&st);
        if (i % 7 == 3) m->id[i] &= 0xFFFF; /* small ids too */
        if (i < n_empty) {
            for (v = 0; v < m->k; v++) s[v] = MINLSH_EMPTY_VALUE;
            continue;
        }
        f = (size_t)(tl_rand(&st) % n_fam);
        /* Per band: the family's values (50%), one of 4 shared variants
         * (20%) or noise (30%). */
        for (j = 0; j * m->r < m->k; j++) {
            unsigned choice = (unsigned)(tl_rand(&st) % 10);
            c = (size_t)(tl_rand(&st) % 4);
            for (v = j * m->r; v < (j + 1) * m->r && v < m->k; v++) {
                if (choice < 5) s[v] = base[f * m->k + v];
                else if (choice < 7) s[v] = pool[j % 64][c][(v - j * m->r) % 16];
                else s[v] = (uint32_t)tl_rand(&st);
            }
        }
    }
    /* ids must be distinct */
    {
        uint64_t *ids = (uint64_t *)malloc(m->n * sizeof *ids);
        memcpy(ids, m->id, m->n * sizeof *ids);
        qsort(ids, m->n, sizeof *ids, cmp_u64);
        for (i = 1; i < m->n; i++)
            if (ids[i] == ids[i - 1]) m->id[i] ^= UINT64_C(0x8000000000000000) + i;
        free(ids);
    }
    free(base);
    model_finish(m);
}

/* Brute-force candidates of document x (or of an outside signature with
 * keys qk when x == SIZE_MAX), ascending ids. */
static inline size_t model_query(const model *m, size_t x, const uint64_t *qk, int q_empty,
                                 uint64_t *out) {
    size_t i, n = 0;
    uint32_t j;
    for (i = 0; i < m->n; i++) {
        if (!m->live[i] || m->empty[i] || q_empty) continue;
        if (x != SIZE_MAX) {
            if (!model_share(m, x, i)) continue;
        } else {
            for (j = 0; j < m->b; j++)
                if (qk[j] == m->key[i * m->b + j]) break;
            if (j == m->b) continue;
        }
        out[n++] = m->id[i];
    }
    qsort(out, n, sizeof *out, cmp_u64);
    return n;
}

static inline size_t model_index_of(const model *m, uint64_t id) {
    size_t i;
    for (i = 0; i < m->n; i++)
        if (m->id[i] == id) return i;
    return SIZE_MAX;
}

/* Every live document's query must equal brute force, with the estimates. */
static inline int check_queries(const minlsh_index *ix, const model *m) {
    uint64_t *want = (uint64_t *)malloc((m->n + 1) * sizeof *want);
    uint64_t *got = (uint64_t *)malloc((m->n + 1) * sizeof *got);
    double *sim = (double *)malloc((m->n + 1) * sizeof *sim);
    size_t i, t, nw, ng = 0, live = 0;
    int bad = 0;
    for (i = 0; i < m->n && !bad; i++) {
        if (!m->live[i]) continue;
        live++;
        nw = model_query(m, i, NULL, m->empty[i], want);
        if (minlsh_index_query(ix, m->sig + i * m->k, m->k, got, sim, m->n + 1, &ng) != 0 ||
            ng != nw || (nw > 0 && memcmp(got, want, nw * sizeof *got) != 0)) {
            TL_FAIL("query of doc %zu: %zu results, want %zu", i, ng, nw);
            bad = 1;
            break;
        }
        for (t = 0; t < ng; t++)
            if (sim[t] != model_est(m, i, model_index_of(m, got[t]))) {
                TL_FAIL("query of doc %zu: similarity %zu wrong", i, t);
                bad = 1;
                break;
            }
    }
    if (!bad && minlsh_index_count(ix) != live) {
        TL_FAIL("count %llu, want %zu", (unsigned long long)minlsh_index_count(ix), live);
        bad = 1;
    }
    free(want);
    free(got);
    free(sim);
    return !bad;
}

/* ---- pair lists ------------------------------------------------------------ */

typedef struct {
    uint64_t a, b;
    double s;
} tpair;

static inline int cmp_pair(const void *x, const void *y) {
    const tpair *p = (const tpair *)x, *q = (const tpair *)y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return 0;
}

/* All live candidate pairs with estimate >= min, sorted. */
static inline size_t model_pairs(const model *m, double min, tpair **out) {
    size_t x, y, n = 0, cap = 1024;
    tpair *v = (tpair *)malloc(cap * sizeof *v);
    for (x = 0; x < m->n; x++) {
        if (!m->live[x]) continue;
        for (y = x + 1; y < m->n; y++) {
            double e;
            if (!m->live[y] || !model_share(m, x, y)) continue;
            e = model_est(m, x, y);
            if (!(e >= min)) continue;
            if (n == cap) v = (tpair *)realloc(v, (cap *= 2) * sizeof *v);
            v[n].a = m->id[x] < m->id[y] ? m->id[x] : m->id[y];
            v[n].b = m->id[x] < m->id[y] ? m->id[y] : m->id[x];
            v[n].s = e;
            n++;
        }
    }
    qsort(v, n, sizeof *v, cmp_pair);
    *out = v;
    return n;
}

static inline int pairs_equal(const minlsh_pairs *p, const tpair *want, size_t n) {
    size_t i;
    if (minlsh_pairs_count(p) != n) {
        TL_FAIL("pairs count %zu, want %zu", minlsh_pairs_count(p), n);
        return 0;
    }
    for (i = 0; i < n; i++) {
        uint64_t a, b;
        double s;
        if (minlsh_pairs_copy_pair(&a, &b, &s, p, i) != 0 || a != want[i].a || b != want[i].b ||
            s != want[i].s) {
            TL_FAIL("pair %zu differs", i);
            return 0;
        }
    }
    return 1;
}

/* ---- clusters by BFS --------------------------------------------------------- */

/* Groups of the graph on the given edges by BFS over an adjacency matrix
 * of the distinct endpoints: groups[i] lists sorted members, groups sorted
 * by smallest member; returns the number of groups; members in *flat with
 * offsets *off (n_groups + 1). */
static inline size_t bfs_clusters(const uint64_t *ea, const uint64_t *eb, size_t ne,
                                  uint64_t **flat, size_t **off) {
    uint64_t *u = (uint64_t *)malloc((2 * ne + 1) * sizeof *u);
    size_t nu = 0, i, j, ng = 0, nf = 0;
    unsigned char *adj, *seen;
    size_t *queue;
    for (i = 0; i < ne; i++)
        if (ea[i] != eb[i]) {
            u[nu++] = ea[i];
            u[nu++] = eb[i];
        }
    qsort(u, nu, sizeof *u, cmp_u64);
    for (i = 0, j = 0; i < nu; i++)
        if (j == 0 || u[i] != u[j - 1]) u[j++] = u[i];
    nu = j;
    adj = (unsigned char *)calloc(nu * nu + 1, 1);
    seen = (unsigned char *)calloc(nu + 1, 1);
    queue = (size_t *)malloc((nu + 1) * sizeof *queue);
    *flat = (uint64_t *)malloc((nu + 1) * sizeof **flat);
    *off = (size_t *)malloc((nu + 2) * sizeof **off);
    for (i = 0; i < ne; i++) {
        size_t x, y;
        if (ea[i] == eb[i]) continue;
        x = (size_t)((uint64_t *)bsearch(&ea[i], u, nu, sizeof *u, cmp_u64) - u);
        y = (size_t)((uint64_t *)bsearch(&eb[i], u, nu, sizeof *u, cmp_u64) - u);
        adj[x * nu + y] = adj[y * nu + x] = 1;
    }
    (*off)[0] = 0;
    for (i = 0; i < nu; i++) {
        size_t qh = 0, qt = 0, start = nf;
        if (seen[i]) continue;
        seen[i] = 1;
        queue[qt++] = i;
        while (qh < qt) {
            size_t x = queue[qh++];
            (*flat)[nf++] = u[x];
            for (j = 0; j < nu; j++)
                if (adj[x * nu + j] && !seen[j]) {
                    seen[j] = 1;
                    queue[qt++] = j;
                }
        }
        qsort(*flat + start, nf - start, sizeof **flat, cmp_u64);
        (*off)[++ng] = nf;
    }
    free(u);
    free(adj);
    free(seen);
    free(queue);
    return ng; /* every endpoint has a neighbour: all groups have >= 2 */
}

static inline int clusters_equal(const minlsh_clusters *c, const uint64_t *flat,
                                 const size_t *off, size_t ng) {
    size_t g, n;
    uint64_t *buf;
    int ok = 1;
    if (minlsh_clusters_count(c) != ng) {
        TL_FAIL("clusters count %zu, want %zu", minlsh_clusters_count(c), ng);
        return 0;
    }
    buf = (uint64_t *)malloc((off[ng] + 1) * sizeof *buf);
    for (g = 0; g < ng && ok; g++) {
        if (minlsh_clusters_copy_members(c, g, buf, off[ng] + 1, &n) != 0 ||
            n != off[g + 1] - off[g] || memcmp(buf, flat + off[g], n * sizeof *buf) != 0) {
            TL_FAIL("cluster %zu differs", g);
            ok = 0;
        }
    }
    free(buf);
    return ok;
}

static inline minlsh_family *make_family(uint32_t k, uint64_t seed) {
    minlsh_family *f = NULL;
    EXPECT_OK(minlsh_family_new(&f, k, seed, NULL));
    return f;
}

static inline minlsh_index *build(const minlsh_family *fam, model *m, const size_t *order,
                                  const minlsh_allocator *alloc) {
    minlsh_index *ix = NULL;
    size_t i;
    EXPECT_OK(minlsh_index_new(&ix, fam, 77, m->b, m->r, alloc));
    if (ix == NULL) return NULL;
    for (i = 0; i < m->n; i++) {
        size_t d = order != NULL ? order[i] : i;
        EXPECT_OK(minlsh_index_insert(ix, m->id[d], m->sig + d * m->k, m->k));
        m->live[d] = 1;
    }
    return ix;
}

static inline void shuffle(size_t *v, size_t n, uint64_t seed) {
    size_t i;
    for (i = 0; i < n; i++) v[i] = i;
    for (i = n; i > 1; i--) {
        size_t j = (size_t)(tl_rand(&seed) % i), t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

static inline uint8_t *save_bytes(const minlsh_index *ix, size_t *len) {
    uint8_t *buf;
    size_t n = 0;
    EXPECT_ERR(minlsh_index_save_buffer(ix, NULL, 0, &n), MINLSH_E_BUFSIZE);
    buf = (uint8_t *)malloc(n + 1);
    EXPECT_OK(minlsh_index_save_buffer(ix, buf, n, len));
    EXPECT(*len == n);
    return buf;
}

/* A matrix holding the model's signatures in order. */
static inline minlsh_sigmatrix *model_matrix(const minlsh_family *fam, const model *m) {
    minlsh_sigmatrix *mx = NULL;
    size_t i;
    EXPECT_OK(minlsh_sigmatrix_new(&mx, fam, 0, NULL));
    for (i = 0; i < m->n; i++) EXPECT_OK(minlsh_sigmatrix_append(mx, m->sig + i * m->k, m->k, NULL));
    return mx;
}

/* An index holding column i under id i. */
static inline minlsh_index *position_index(const minlsh_family *fam, const model *m) {
    minlsh_index *ix = NULL;
    size_t i;
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, m->b, m->r, NULL));
    for (i = 0; i < m->n; i++) EXPECT_OK(minlsh_index_insert(ix, i, m->sig + i * m->k, m->k));
    return ix;
}

static inline int same_pairs(const minlsh_pairs *x, const minlsh_pairs *y) {
    size_t i;
    if (minlsh_pairs_count(x) != minlsh_pairs_count(y)) {
        TL_FAIL("pairs: %zu vs %zu", minlsh_pairs_count(x), minlsh_pairs_count(y));
        return 0;
    }
    for (i = 0; i < minlsh_pairs_count(x); i++) {
        uint64_t a1, b1, a2, b2;
        double s1, s2;
        EXPECT_OK(minlsh_pairs_copy_pair(&a1, &b1, &s1, x, i));
        EXPECT_OK(minlsh_pairs_copy_pair(&a2, &b2, &s2, y, i));
        if (a1 != a2 || b1 != b2 || s1 != s2) {
            TL_FAIL("pair %zu: (%llu, %llu, %g) vs (%llu, %llu, %g)", i, (unsigned long long)a1,
                    (unsigned long long)b1, s1, (unsigned long long)a2, (unsigned long long)b2, s2);
            return 0;
        }
    }
    return 1;
}

static inline int same_clusters(const minlsh_clusters *x, const minlsh_clusters *y) {
    size_t i, n1, n2;
    static uint64_t m1[4000], m2[4000];
    if (minlsh_clusters_count(x) != minlsh_clusters_count(y)) {
        TL_FAIL("clusters: %zu vs %zu", minlsh_clusters_count(x), minlsh_clusters_count(y));
        return 0;
    }
    for (i = 0; i < minlsh_clusters_count(x); i++) {
        EXPECT_OK(minlsh_clusters_copy_members(x, i, m1, 4000, &n1));
        EXPECT_OK(minlsh_clusters_copy_members(y, i, m2, 4000, &n2));
        if (n1 != n2 || memcmp(m1, m2, n1 * 8) != 0) {
            TL_FAIL("cluster %zu differs", i);
            return 0;
        }
    }
    return 1;
}

#endif
