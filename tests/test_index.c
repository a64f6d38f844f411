/*
 * The band index, pairs and clusters, checked against brute force written
 * from the definitions (two documents are candidates iff they share
 * (j, band key j) for some band j), band keys against an independent
 * reference, the S-curve measured with a real MinHash family, save/load
 * with every truncation and bit flip, and allocation failure at every step.
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_index_query_limited */
#include "minlsh.h"
#include "testlib.h"

#include "common/common.h" /* minlsh__sum64, to craft inconsistent files */
#include "lsh/lsh.h"       /* band-key implementations, table internals */

#include <time.h>

static double now_s(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC); /* C11; wall time, fine for coarse bounds */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- a failing, counting allocator ---------------------------------------- */

typedef struct {
    long live;    /* outstanding blocks */
    long calls;   /* allocations since arming */
    long fail_at; /* 0: never fail; N: the Nth allocation and all later fail */
} fa_state;

static void *fa_alloc(void *opaque, size_t n) {
    fa_state *s = (fa_state *)opaque;
    void *p;
    s->calls++;
    if (s->fail_at > 0 && s->calls >= s->fail_at) return NULL;
    p = malloc(n);
    if (p != NULL) s->live++;
    return p;
}

static void fa_free(void *opaque, void *p) {
    fa_state *s = (fa_state *)opaque;
    s->live--;
    free(p);
}

static void fa_arm(fa_state *s, long n) {
    s->calls = 0;
    s->fail_at = n;
}

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

static void model_init(model *m, size_t n, uint32_t k, uint32_t b, uint32_t r) {
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

static void model_free(model *m) {
    free(m->id);
    free(m->sig);
    free(m->key);
    free(m->empty);
    free(m->live);
}

static void model_finish(model *m) {
    size_t i, nk;
    for (i = 0; i < m->n; i++) {
        EXPECT_OK(minlsh_band_keys(m->sig + i * m->k, m->k, m->b, m->r, m->key + i * m->b,
                                   m->b, &nk));
        m->empty[i] = minlsh_signature_is_empty(m->sig + i * m->k, m->k);
    }
}

static int model_share(const model *m, size_t x, size_t y) {
    uint32_t j;
    if (m->empty[x] || m->empty[y]) return 0;
    for (j = 0; j < m->b; j++)
        if (m->key[x * m->b + j] == m->key[y * m->b + j]) return 1;
    return 0;
}

static double model_est(const model *m, size_t x, size_t y) {
    double e = -1.0;
    EXPECT_OK(minlsh_signature_estimate(&e, m->sig + x * m->k, m->sig + y * m->k, m->k));
    return e;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Structured documents: families sharing bands, a global pool of band
 * variants that links families, random noise, and a few empty signatures. */
static void model_generate(model *m, uint64_t seed, size_t n_fam, size_t n_empty) {
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
static size_t model_query(const model *m, size_t x, const uint64_t *qk, int q_empty,
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

static size_t model_index_of(const model *m, uint64_t id) {
    size_t i;
    for (i = 0; i < m->n; i++)
        if (m->id[i] == id) return i;
    return SIZE_MAX;
}

/* Every live document's query must equal brute force, with the estimates. */
static int check_queries(const minlsh_index *ix, const model *m) {
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

static int cmp_pair(const void *x, const void *y) {
    const tpair *p = (const tpair *)x, *q = (const tpair *)y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return 0;
}

/* All live candidate pairs with estimate >= min, sorted. */
static size_t model_pairs(const model *m, double min, tpair **out) {
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

static int pairs_equal(const minlsh_pairs *p, const tpair *want, size_t n) {
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
static size_t bfs_clusters(const uint64_t *ea, const uint64_t *eb, size_t ne,
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

static int clusters_equal(const minlsh_clusters *c, const uint64_t *flat, const size_t *off,
                          size_t ng) {
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

static minlsh_family *make_family(uint32_t k, uint64_t seed) {
    minlsh_family *f = NULL;
    EXPECT_OK(minlsh_family_new(&f, k, seed, NULL));
    return f;
}

static minlsh_index *build(const minlsh_family *fam, model *m, const size_t *order,
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

static void shuffle(size_t *v, size_t n, uint64_t seed) {
    size_t i;
    for (i = 0; i < n; i++) v[i] = i;
    for (i = n; i > 1; i--) {
        size_t j = (size_t)(tl_rand(&seed) % i), t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

static uint8_t *save_bytes(const minlsh_index *ix, size_t *len) {
    uint8_t *buf;
    size_t n = 0;
    EXPECT_ERR(minlsh_index_save_buffer(ix, NULL, 0, &n), MINLSH_E_BUFSIZE);
    buf = (uint8_t *)malloc(n + 1);
    EXPECT_OK(minlsh_index_save_buffer(ix, buf, n, len));
    EXPECT(*len == n);
    return buf;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_band_keys(void) {
    /* Golden values from an independent SipHash-2-4 in Python (written from
     * the paper; it reproduces the official vector for the empty message). */
    uint32_t sig[12], e4[4];
    uint64_t keys[16], want;
    size_t n, i, j;
    for (i = 0; i < 12; i++) sig[i] = (uint32_t)(i * UINT32_C(0x9E3779B1));
    for (i = 0; i < 4; i++) e4[i] = MINLSH_EMPTY_VALUE;
    EXPECT_OK(minlsh_band_keys(sig, 12, 3, 4, keys, 16, &n));
    EXPECT_EQ_INT(n, 3);
    EXPECT_EQ_U64(keys[0], UINT64_C(0x5b73425f3f71e5b8));
    EXPECT_EQ_U64(keys[1], UINT64_C(0x4f8f65ca250376a6));
    EXPECT_EQ_U64(keys[2], UINT64_C(0x187d6646080fa303));
    EXPECT_OK(minlsh_band_keys(sig, 12, 5, 2, keys, 5, NULL));
    EXPECT_EQ_U64(keys[0], UINT64_C(0x4053d7152a7e023b));
    EXPECT_EQ_U64(keys[1], UINT64_C(0xcc68d7789b9870ae));
    EXPECT_EQ_U64(keys[2], UINT64_C(0xd9349b054d31ee94));
    EXPECT_EQ_U64(keys[3], UINT64_C(0x2ea2a71b8ef69e34));
    EXPECT_EQ_U64(keys[4], UINT64_C(0x575b7c7a216a40ac));
    EXPECT_OK(minlsh_band_keys(sig, 12, 1, 12, keys, 1, NULL));
    EXPECT_EQ_U64(keys[0], UINT64_C(0x8ea082b40c99afcf));
    EXPECT_OK(minlsh_band_keys(e4, 4, 2, 2, keys, 2, NULL));
    EXPECT_EQ_U64(keys[0], UINT64_C(0xc56cb8ae435fb7f7));
    EXPECT_EQ_U64(keys[1], UINT64_C(0x2ed3755d50d3829a));

    /* The definition, byte by byte, through the public SipHash. */
    {
        uint64_t st = 99;
        uint32_t big[1024];
        static const uint32_t shapes[][2] = {{1, 1}, {20, 5}, {9, 13}, {128, 8}, {1, 1024},
                                             {1024, 1}, {7, 3}};
        for (i = 0; i < 1024; i++) big[i] = (uint32_t)tl_rand(&st);
        for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            uint32_t b = shapes[i][0], r = shapes[i][1];
            uint64_t *k2 = (uint64_t *)malloc(b * sizeof *k2);
            EXPECT_OK(minlsh_band_keys(big, 1024, b, r, k2, b, &n));
            for (j = 0; j < b; j++) {
                uint8_t key[16], msg[4096];
                size_t v;
                for (v = 0; v < 8; v++) key[v] = (uint8_t)(j >> (8 * v));
                memcpy(key + 8, "mlshband", 8);
                for (v = 0; v < r; v++) {
                    uint32_t x = big[j * r + v];
                    msg[4 * v] = (uint8_t)x;
                    msg[4 * v + 1] = (uint8_t)(x >> 8);
                    msg[4 * v + 2] = (uint8_t)(x >> 16);
                    msg[4 * v + 3] = (uint8_t)(x >> 24);
                }
                EXPECT_OK(minlsh_siphash24(&want, key, msg, 4 * (size_t)r));
                if (k2[j] != want) {
                    TL_FAIL("b=%u r=%u key %zu", b, r, j);
                    break;
                }
            }
            free(k2);
        }
    }
    /* Only the first b*r values matter. */
    {
        uint64_t k1[5], k2[5];
        uint32_t s2[12];
        memcpy(s2, sig, sizeof s2);
        s2[10] ^= 1;
        s2[11] ^= 1;
        EXPECT_OK(minlsh_band_keys(sig, 12, 5, 2, k1, 5, NULL));
        EXPECT_OK(minlsh_band_keys(s2, 12, 5, 2, k2, 5, NULL));
        EXPECT(memcmp(k1, k2, sizeof k1) == 0);
        s2[9] ^= 1;
        EXPECT_OK(minlsh_band_keys(s2, 12, 5, 2, k2, 5, NULL));
        EXPECT(memcmp(k1, k2, 4 * sizeof *k1) == 0 && k1[4] != k2[4]);
    }
    /* Errors. */
    EXPECT_ERR(minlsh_band_keys(NULL, 12, 3, 4, keys, 16, &n), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_band_keys(sig, 12, 0, 4, keys, 16, &n), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_band_keys(sig, 12, 3, 0, keys, 16, &n), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_band_keys(sig, 12, 4, 4, keys, 16, &n), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_band_keys(sig, 0, 1, 1, keys, 16, &n), MINLSH_E_PARAM);
    n = 0;
    EXPECT_ERR(minlsh_band_keys(sig, 12, 3, 4, keys, 2, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, 3);
    EXPECT_ERR(minlsh_band_keys(sig, 12, 3, 4, NULL, 0, &n), MINLSH_E_BUFSIZE);
    EXPECT_ERR(minlsh_band_keys(sig, 12, 3, 4, NULL, 3, &n), MINLSH_E_NULL);
}

static void test_basic(void) {
    minlsh_family *fam = make_family(MK, 7), *fam2 = make_family(MK, 8);
    minlsh_index *ix = NULL;
    minlsh_allocator bad = {NULL, NULL, NULL};
    uint32_t s1[MK], s2[MK], got[MK];
    uint64_t ids[4];
    size_t i, n;
    for (i = 0; i < MK; i++) {
        s1[i] = (uint32_t)i;
        s2[i] = (uint32_t)(i + 1000);
    }
    EXPECT_ERR(minlsh_index_new(NULL, fam, 0, 8, 4, NULL), MINLSH_E_NULL);
    ix = (minlsh_index *)(uintptr_t)1;
    EXPECT_ERR(minlsh_index_new(&ix, NULL, 0, 8, 4, NULL), MINLSH_E_NULL);
    EXPECT(ix == NULL);
    EXPECT_ERR(minlsh_index_new(&ix, fam, 0, 0, 4, NULL), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_index_new(&ix, fam, 0, 8, 0, NULL), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_index_new(&ix, fam, 0, 9, 4, NULL), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_index_new(&ix, fam, 0, 33, 1, NULL), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_index_new(&ix, fam, 0, 8, 4, &bad), MINLSH_E_PARAM);
    EXPECT(ix == NULL);
    EXPECT_OK(minlsh_index_new(&ix, fam, 0x1234, 5, 6, NULL));
    EXPECT_EQ_INT(minlsh_index_k(ix), MK);
    EXPECT_EQ_INT(minlsh_index_bands(ix), 5);
    EXPECT_EQ_INT(minlsh_index_rows(ix), 6);
    EXPECT_EQ_U64(minlsh_index_seed(ix), 7);
    EXPECT_EQ_U64(minlsh_index_config_id(ix), 0x1234);
    EXPECT_EQ_U64(minlsh_index_count(ix), 0);
    EXPECT_EQ_INT(minlsh_index_k(NULL), 0);
    EXPECT_EQ_INT(minlsh_index_bands(NULL), 0);
    EXPECT_EQ_INT(minlsh_index_rows(NULL), 0);
    EXPECT_EQ_U64(minlsh_index_seed(NULL), 0);
    EXPECT_EQ_U64(minlsh_index_config_id(NULL), 0);
    EXPECT_EQ_U64(minlsh_index_count(NULL), 0);
    minlsh_index_free(NULL);

    /* An empty index answers queries. */
    EXPECT_OK(minlsh_index_query(ix, s1, MK, ids, NULL, 4, &n));
    EXPECT_EQ_INT(n, 0);

    EXPECT_OK(minlsh_index_insert(ix, 10, s1, MK));
    EXPECT_OK(minlsh_index_insert(ix, 0, s2, MK));
    EXPECT_ERR(minlsh_index_insert(ix, 10, s2, MK), MINLSH_E_EXISTS);
    EXPECT_ERR(minlsh_index_insert(ix, 11, s2, MK - 1), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_index_insert(ix, 11, NULL, MK), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_insert(NULL, 11, s2, MK), MINLSH_E_NULL);
    EXPECT_EQ_U64(minlsh_index_count(ix), 2);
    EXPECT_EQ_INT(minlsh_index_contains(ix, 10), 1);
    EXPECT_EQ_INT(minlsh_index_contains(ix, 0), 1);
    EXPECT_EQ_INT(minlsh_index_contains(ix, 11), 0);
    EXPECT_ERR(minlsh_index_contains(NULL, 10), MINLSH_E_NULL);
    EXPECT_OK(minlsh_index_copy_signature(ix, 10, got, MK, &n));
    EXPECT_EQ_INT(n, MK);
    EXPECT(memcmp(got, s1, sizeof s1) == 0);
    EXPECT_OK(minlsh_index_copy_signature(ix, 0, got, MK + 5, NULL));
    EXPECT(memcmp(got, s2, sizeof s2) == 0);
    n = 0;
    EXPECT_ERR(minlsh_index_copy_signature(ix, 10, got, MK - 1, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, MK);
    EXPECT_ERR(minlsh_index_copy_signature(ix, 10, NULL, 0, &n), MINLSH_E_BUFSIZE);
    EXPECT_ERR(minlsh_index_copy_signature(ix, 10, NULL, MK, &n), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_copy_signature(ix, 12, got, MK, &n), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_index_copy_signature(NULL, 10, got, MK, &n), MINLSH_E_NULL);

    /* Query: a document finds itself; the other shares nothing. */
    EXPECT_OK(minlsh_index_query(ix, s1, MK, ids, NULL, 4, &n));
    EXPECT_EQ_INT(n, 1);
    EXPECT_EQ_U64(ids[0], 10);
    {
        double sim = -1;
        EXPECT_OK(minlsh_index_query(ix, s2, MK, ids, &sim, 1, &n));
        EXPECT(n == 1 && ids[0] == 0 && sim == 1.0);
    }
    /* Same first band as s1, different elsewhere: a candidate of s1. */
    {
        uint32_t s3[MK];
        double sim[4];
        memcpy(s3, s2, sizeof s3);
        memcpy(s3, s1, 6 * sizeof *s3);
        EXPECT_OK(minlsh_index_insert(ix, 5, s3, MK));
        EXPECT_OK(minlsh_index_query(ix, s1, MK, ids, sim, 4, &n));
        EXPECT(n == 2 && ids[0] == 5 && ids[1] == 10);
        EXPECT_NEAR(sim[0], 6.0 / MK, 0);
        EXPECT(sim[1] == 1.0);
        /* Values past b*r = 30 take part in estimates only. */
        memcpy(s3, s1, sizeof s3);
        s3[30] = 999999;
        s3[31] = 999998;
        EXPECT_OK(minlsh_index_insert(ix, 6, s3, MK));
        EXPECT_OK(minlsh_index_query(ix, s1, MK, ids, sim, 4, &n));
        EXPECT(n == 3 && ids[2] == 10 && ids[1] == 6);
        EXPECT_NEAR(sim[1], 30.0 / MK, 0);
        n = 0;
        EXPECT_ERR(minlsh_index_query(ix, s1, MK, ids, sim, 2, &n), MINLSH_E_BUFSIZE);
        EXPECT_EQ_INT(n, 3);
        EXPECT_ERR(minlsh_index_query(ix, s1, MK, NULL, NULL, 0, &n), MINLSH_E_BUFSIZE);
        EXPECT_EQ_INT(n, 3);
        EXPECT_ERR(minlsh_index_query(ix, s1, MK, NULL, NULL, 3, &n), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_index_query(ix, s1, MK - 1, ids, NULL, 4, &n), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_index_query(ix, NULL, MK, ids, NULL, 4, &n), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_index_query(NULL, s1, MK, ids, NULL, 4, &n), MINLSH_E_NULL);
        EXPECT_OK(minlsh_index_remove(ix, 6));
        EXPECT_OK(minlsh_index_remove(ix, 5));
    }

    EXPECT_OK(minlsh_index_remove(ix, 10));
    EXPECT_ERR(minlsh_index_remove(ix, 10), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_index_remove(NULL, 10), MINLSH_E_NULL);
    EXPECT_EQ_INT(minlsh_index_contains(ix, 10), 0);
    EXPECT_EQ_U64(minlsh_index_count(ix), 1);
    EXPECT_OK(minlsh_index_query(ix, s1, MK, ids, NULL, 4, &n));
    EXPECT_EQ_INT(n, 0);
    /* The slot is recycled and the id may come back with another signature. */
    EXPECT_OK(minlsh_index_insert(ix, 10, s2, MK));
    EXPECT_OK(minlsh_index_query(ix, s2, MK, ids, NULL, 4, &n));
    EXPECT(n == 2 && ids[0] == 0 && ids[1] == 10);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
    minlsh_family_free(fam2);
}

static void test_metadata(void) {
    minlsh_family *fam = make_family(MK, 7);
    minlsh_index *ix = NULL;
    char buf[16];
    size_t n = 99;
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 8, 4, NULL));
    EXPECT_OK(minlsh_index_copy_metadata(ix, NULL, 0, &n));
    EXPECT_EQ_INT(n, 0);
    EXPECT_OK(minlsh_index_set_metadata(ix, "hello", 5));
    EXPECT_ERR(minlsh_index_copy_metadata(ix, buf, 4, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, 5);
    EXPECT_ERR(minlsh_index_copy_metadata(ix, NULL, 5, &n), MINLSH_E_NULL);
    EXPECT_OK(minlsh_index_copy_metadata(ix, buf, sizeof buf, &n));
    EXPECT(n == 5 && memcmp(buf, "hello", 5) == 0);
    EXPECT_ERR(minlsh_index_set_metadata(ix, NULL, 3), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_set_metadata(NULL, "x", 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_copy_metadata(NULL, buf, 16, &n), MINLSH_E_NULL);
    EXPECT_OK(minlsh_index_set_metadata(ix, NULL, 0));
    EXPECT_OK(minlsh_index_copy_metadata(ix, buf, sizeof buf, &n));
    EXPECT_EQ_INT(n, 0);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
}

static void test_query_order_independent(void) {
    minlsh_family *fam = make_family(MK, 7);
    model m;
    size_t *ord = (size_t *)malloc(600 * sizeof *ord), i;
    minlsh_index *a, *b;
    uint8_t *ba, *bb;
    size_t la = 0, lb = 0;
    model_init(&m, 600, MK, MB, MR);
    model_generate(&m, 1, 60, 10);
    a = build(fam, &m, NULL, NULL);
    shuffle(ord, m.n, 2);
    b = build(fam, &m, ord, NULL);
    /* Churn in b: remove a third and put them back in another order. */
    for (i = 0; i < m.n; i += 3) EXPECT_OK(minlsh_index_remove(b, m.id[ord[i]]));
    for (i = m.n; i > 0; i--) {
        size_t d = ord[i - 1];
        if ((i - 1) % 3 == 0) EXPECT_OK(minlsh_index_insert(b, m.id[d], m.sig + d * MK, MK));
    }
    EXPECT(check_queries(a, &m));
    EXPECT(check_queries(b, &m));
    /* Outside signatures: mixtures of two documents. */
    {
        uint64_t st = 5, want[601], got[601], got2[601], qk[MB];
        uint32_t q[MK];
        size_t t, nw, ng, ng2;
        for (t = 0; t < 200; t++) {
            size_t x = (size_t)(tl_rand(&st) % m.n), y = (size_t)(tl_rand(&st) % m.n), v;
            for (v = 0; v < MK; v++) q[v] = (v / MR) % 2 ? m.sig[x * MK + v] : m.sig[y * MK + v];
            EXPECT_OK(minlsh_band_keys(q, MK, MB, MR, qk, MB, NULL));
            nw = model_query(&m, SIZE_MAX, qk, minlsh_signature_is_empty(q, MK), want);
            EXPECT_OK(minlsh_index_query(a, q, MK, got, NULL, 601, &ng));
            EXPECT_OK(minlsh_index_query(b, q, MK, got2, NULL, 601, &ng2));
            EXPECT(ng == nw && ng2 == nw);
            EXPECT(memcmp(got, want, nw * 8) == 0 && memcmp(got2, want, nw * 8) == 0);
        }
    }
    ba = save_bytes(a, &la);
    bb = save_bytes(b, &lb);
    EXPECT(la == lb && memcmp(ba, bb, la) == 0);
    EXPECT_EQ_INT(la, 64 + 600 * (8 + 4 * MK) + 8 + 8);
    free(ba);
    free(bb);
    minlsh_index_free(a);
    minlsh_index_free(b);
    model_free(&m);
    free(ord);
    minlsh_family_free(fam);
}

static void test_pairs_and_clusters(void) {
    minlsh_family *fam = make_family(MK, 7);
    model m;
    static const double mins[] = {0.0, 0.25, 0.5, 0.75, 1.0};
    size_t *ord = (size_t *)malloc(500 * sizeof *ord), mi;
    minlsh_index *a, *b;
    model_init(&m, 500, MK, MB, MR);
    model_generate(&m, 3, 40, 8);
    /* Exact duplicates, so min_similarity = 1 has something to find. */
    memcpy(m.sig + 100 * MK, m.sig + 101 * MK, MK * 4);
    memcpy(m.sig + 200 * MK, m.sig + 101 * MK, MK * 4);
    memcpy(m.sig + 300 * MK, m.sig + 301 * MK, MK * 4);
    model_finish(&m);
    a = build(fam, &m, NULL, NULL);
    shuffle(ord, m.n, 4);
    b = build(fam, &m, ord, NULL);
    for (mi = 0; mi < sizeof mins / sizeof mins[0]; mi++) {
        tpair *want;
        size_t nw = model_pairs(&m, mins[mi], &want), i, ng;
        minlsh_pairs *pa = NULL, *pb = NULL;
        minlsh_clusters *ca = NULL, *cb = NULL, *ce = NULL;
        uint64_t *ea = (uint64_t *)malloc((nw + 1) * 8), *eb = (uint64_t *)malloc((nw + 1) * 8);
        uint64_t *flat;
        size_t *off;
        EXPECT_OK(minlsh_pairs_from_index(&pa, a, mins[mi], 0, NULL));
        EXPECT_OK(minlsh_pairs_from_index(&pb, b, mins[mi], 0, NULL));
        EXPECT(pairs_equal(pa, want, nw));
        EXPECT(pairs_equal(pb, want, nw));
        if (mi == 0) printf("  %zu candidate pairs among %zu documents\n", nw, m.n);
        if (mi == 0) EXPECT(nw > 1000);
        if (mi == 4) EXPECT_EQ_INT(nw, 4);
        for (i = 0; i < nw; i++) {
            ea[i] = want[i].a;
            eb[i] = want[i].b;
        }
        ng = bfs_clusters(ea, eb, nw, &flat, &off);
        EXPECT_OK(minlsh_clusters_from_index(&ca, a, mins[mi], NULL));
        EXPECT_OK(minlsh_clusters_from_index(&cb, b, mins[mi], NULL));
        EXPECT_OK(minlsh_clusters_from_edges(&ce, ea, eb, nw, NULL));
        EXPECT(clusters_equal(ca, flat, off, ng));
        EXPECT(clusters_equal(cb, flat, off, ng));
        EXPECT(clusters_equal(ce, flat, off, ng));
        if (mi == 4) EXPECT_EQ_INT(ng, 2);
        minlsh_pairs_free(pa);
        minlsh_pairs_free(pb);
        minlsh_clusters_free(ca);
        minlsh_clusters_free(cb);
        minlsh_clusters_free(ce);
        free(want);
        free(ea);
        free(eb);
        free(flat);
        free(off);
    }
    /* API edges. */
    {
        minlsh_pairs *p = NULL;
        minlsh_clusters *c = NULL;
        uint64_t x, y, buf[2];
        double s;
        size_t n = 0;
        EXPECT_ERR(minlsh_pairs_from_index(&p, a, -0.01, 0, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_pairs_from_index(&p, a, 1.01, 0, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_pairs_from_index(&p, a, NAN, 0, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_pairs_from_index(&p, NULL, 0.5, 0, NULL), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_pairs_from_index(NULL, a, 0.5, 0, NULL), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_clusters_from_index(&c, a, NAN, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_clusters_from_index(&c, a, 2.0, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_clusters_from_index(&c, NULL, 0.5, NULL), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_clusters_from_index(NULL, a, 0.5, NULL), MINLSH_E_NULL);
        EXPECT(p == NULL && c == NULL);
        EXPECT_OK(minlsh_pairs_from_index(&p, a, 0.9, 0, NULL));
        EXPECT(minlsh_pairs_count(p) > 0);
        EXPECT_OK(minlsh_pairs_copy_pair(NULL, NULL, NULL, p, 0));
        EXPECT_OK(minlsh_pairs_copy_pair(&x, &y, &s, p, 0));
        EXPECT(x < y && s >= 0.9);
        EXPECT_ERR(minlsh_pairs_copy_pair(&x, &y, &s, p, minlsh_pairs_count(p)), MINLSH_E_NOTFOUND);
        EXPECT_ERR(minlsh_pairs_copy_pair(&x, &y, &s, NULL, 0), MINLSH_E_NULL);
        EXPECT_EQ_INT(minlsh_pairs_count(NULL), 0);
        minlsh_pairs_free(p);
        minlsh_pairs_free(NULL);
        EXPECT_OK(minlsh_clusters_from_index(&c, a, 0.9, NULL));
        EXPECT(minlsh_clusters_count(c) > 0);
        EXPECT_ERR(minlsh_clusters_copy_members(c, 0, buf, 1, &n), MINLSH_E_BUFSIZE);
        EXPECT(n >= 2);
        EXPECT_ERR(minlsh_clusters_copy_members(c, 0, NULL, 0, &n), MINLSH_E_BUFSIZE);
        EXPECT_ERR(minlsh_clusters_copy_members(c, minlsh_clusters_count(c), buf, 2, &n),
                   MINLSH_E_NOTFOUND);
        EXPECT_ERR(minlsh_clusters_copy_members(NULL, 0, buf, 2, &n), MINLSH_E_NULL);
        EXPECT_EQ_INT(minlsh_clusters_count(NULL), 0);
        minlsh_clusters_free(c);
        minlsh_clusters_free(NULL);
    }
    minlsh_index_free(a);
    minlsh_index_free(b);
    model_free(&m);
    free(ord);
    minlsh_family_free(fam);
}

static void test_clusters_from_edges(void) {
    uint64_t pool[300], ea[400], eb[400], st = 11;
    size_t i, ng;
    minlsh_clusters *c = NULL;
    uint64_t *flat;
    size_t *off;
    for (i = 0; i < 300; i++) pool[i] = tl_rand(&st);
    pool[0] = 0;
    pool[1] = UINT64_MAX;
    for (i = 0; i < 400; i++) {
        ea[i] = pool[tl_rand(&st) % 300];
        eb[i] = i % 17 == 0 ? ea[i] : pool[tl_rand(&st) % 300]; /* self-edges */
        if (i % 23 == 0 && i > 0) {                             /* repeats */
            ea[i] = eb[i - 1];
            eb[i] = ea[i - 1];
        }
    }
    ea[5] = 0;
    eb[5] = UINT64_MAX;
    ng = bfs_clusters(ea, eb, 400, &flat, &off);
    EXPECT_OK(minlsh_clusters_from_edges(&c, ea, eb, 400, NULL));
    EXPECT(clusters_equal(c, flat, off, ng));
    printf("  %zu edges over 300 ids: %zu groups, largest first group %zu\n", (size_t)400, ng,
           off[1] - off[0]);
    minlsh_clusters_free(c);
    free(flat);
    free(off);
    /* Only self-edges, or nothing. */
    EXPECT_OK(minlsh_clusters_from_edges(&c, ea, ea, 400, NULL));
    EXPECT_EQ_INT(minlsh_clusters_count(c), 0);
    minlsh_clusters_free(c);
    EXPECT_OK(minlsh_clusters_from_edges(&c, NULL, NULL, 0, NULL));
    EXPECT_EQ_INT(minlsh_clusters_count(c), 0);
    minlsh_clusters_free(c);
    /* A chain given backwards is one group. */
    {
        uint64_t a[5] = {9, 8, 7, 6, 5}, b[5] = {8, 7, 6, 5, 4}, got[6];
        size_t n;
        EXPECT_OK(minlsh_clusters_from_edges(&c, a, b, 5, NULL));
        EXPECT_EQ_INT(minlsh_clusters_count(c), 1);
        EXPECT_OK(minlsh_clusters_copy_members(c, 0, got, 6, &n));
        EXPECT(n == 6 && got[0] == 4 && got[5] == 9);
        minlsh_clusters_free(c);
    }
    c = (minlsh_clusters *)(uintptr_t)1;
    EXPECT_ERR(minlsh_clusters_from_edges(&c, NULL, eb, 3, NULL), MINLSH_E_NULL);
    EXPECT(c == NULL);
    EXPECT_ERR(minlsh_clusters_from_edges(&c, ea, NULL, 3, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_clusters_from_edges(NULL, ea, eb, 3, NULL), MINLSH_E_NULL);
}

static void test_empty_signatures(void) {
    minlsh_family *fam = make_family(MK, 7);
    minlsh_index *ix = NULL;
    uint32_t e[MK], s[MK], got[MK];
    uint64_t ids[8];
    size_t i, n;
    minlsh_pairs *p = NULL;
    minlsh_clusters *c = NULL;
    for (i = 0; i < MK; i++) {
        e[i] = MINLSH_EMPTY_VALUE;
        s[i] = (uint32_t)i;
    }
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 8, 4, NULL));
    EXPECT_OK(minlsh_index_insert(ix, 1, e, MK));
    EXPECT_OK(minlsh_index_insert(ix, 2, e, MK));
    EXPECT_OK(minlsh_index_insert(ix, 3, s, MK));
    /* Almost empty: one band of all-0xFFFFFFFF values, shared with the empty
     * documents' keys, yet they must not be candidates. */
    s[31] = 5;
    EXPECT_OK(minlsh_index_insert(ix, 4, s, MK));
    for (i = 0; i < 28; i++) s[i] = MINLSH_EMPTY_VALUE;
    EXPECT_OK(minlsh_index_insert(ix, 5, s, MK));
    EXPECT_EQ_U64(minlsh_index_count(ix), 5);
    EXPECT_EQ_INT(minlsh_index_contains(ix, 1), 1);
    EXPECT_OK(minlsh_index_copy_signature(ix, 2, got, MK, &n));
    EXPECT(memcmp(got, e, sizeof e) == 0);
    EXPECT_OK(minlsh_index_query(ix, e, MK, ids, NULL, 8, &n));
    EXPECT_EQ_INT(n, 0);
    EXPECT_OK(minlsh_index_query(ix, s, MK, ids, NULL, 8, &n));
    /* 4 shares band 7; the empty documents share bands 0..6 with 5 but sit
     * in no bucket. */
    EXPECT(n == 2 && ids[0] == 4 && ids[1] == 5);
    EXPECT_OK(minlsh_pairs_from_index(&p, ix, 0.0, 0, NULL));
    for (i = 0; i < minlsh_pairs_count(p); i++) {
        uint64_t a, b;
        EXPECT_OK(minlsh_pairs_copy_pair(&a, &b, NULL, p, i));
        EXPECT(a > 2 && b > 2);
    }
    minlsh_pairs_free(p);
    EXPECT_OK(minlsh_clusters_from_index(&c, ix, 0.0, NULL));
    EXPECT_EQ_INT(minlsh_clusters_count(c), 1);
    minlsh_clusters_free(c);
    EXPECT_OK(minlsh_index_remove(ix, 1));
    EXPECT_OK(minlsh_index_remove(ix, 5));
    EXPECT_EQ_U64(minlsh_index_count(ix), 3);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
}

/* Random inserts and removes against the model: slot recycling, bucket
 * heads leaving, backward-shift deletion in crowded tables. */
static void test_churn(void) {
    minlsh_family *fam = make_family(MK, 7);
    minlsh_index *ix = NULL;
    model m;
    uint64_t st = 21;
    size_t step, i;
    model_init(&m, 400, MK, MB, MR);
    model_generate(&m, 9, 5, 10); /* few families: large buckets */
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, MB, MR, NULL));
    for (step = 0; step < 6000; step++) {
        size_t d = (size_t)(tl_rand(&st) % m.n);
        if (m.live[d]) {
            EXPECT_OK(minlsh_index_remove(ix, m.id[d]));
            m.live[d] = 0;
        } else {
            EXPECT_OK(minlsh_index_insert(ix, m.id[d], m.sig + d * MK, MK));
            m.live[d] = 1;
        }
        if (step % 1000 == 999 && !check_queries(ix, &m)) break;
    }
    for (i = 0; i < m.n; i++)
        EXPECT_EQ_INT(minlsh_index_contains(ix, m.id[i]), m.live[i]);
    /* Empty it completely, then refill. */
    for (i = 0; i < m.n; i++)
        if (m.live[i]) {
            EXPECT_OK(minlsh_index_remove(ix, m.id[i]));
            m.live[i] = 0;
        }
    EXPECT_EQ_U64(minlsh_index_count(ix), 0);
    for (i = 0; i < m.n; i += 2) {
        EXPECT_OK(minlsh_index_insert(ix, m.id[i], m.sig + i * MK, MK));
        m.live[i] = 1;
    }
    EXPECT(check_queries(ix, &m));
    minlsh_index_free(ix);
    model_free(&m);
    minlsh_family_free(fam);
}

static void test_hot_bucket(void) {
    const size_t N = 100000, NP = 1500;
    minlsh_family *fam = make_family(128, 3);
    minlsh_index *ix = NULL;
    minlsh_clusters *c = NULL;
    minlsh_pairs *p = NULL;
    uint32_t sig[128], other[128];
    uint64_t *ids = (uint64_t *)malloc(N * sizeof *ids), st = 8;
    double *sim = (double *)malloc(N * sizeof *sim), t0, t_ins, t_q, t_c0, t_c1, t_rm, t_p;
    size_t i, n;
    for (i = 0; i < 128; i++) {
        sig[i] = (uint32_t)tl_rand(&st);
        other[i] = (uint32_t)tl_rand(&st);
    }
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 20, 5, NULL));
    t0 = now_s();
    for (i = 0; i < N; i++) EXPECT_OK(minlsh_index_insert(ix, (uint64_t)(N - i) * 3, sig, 128));
    EXPECT_OK(minlsh_index_insert(ix, 1, other, 128));
    t_ins = now_s() - t0;
    t0 = now_s();
    EXPECT_OK(minlsh_index_query(ix, sig, 128, ids, sim, N, &n));
    t_q = now_s() - t0;
    EXPECT_EQ_INT(n, N);
    for (i = 0; i < n; i++)
        if (ids[i] != (uint64_t)(i + 1) * 3 || sim[i] != 1.0) {
            TL_FAIL("hot query result %zu", i);
            break;
        }
    t0 = now_s();
    EXPECT_OK(minlsh_clusters_from_index(&c, ix, 0.0, NULL));
    t_c0 = now_s() - t0;
    EXPECT_EQ_INT(minlsh_clusters_count(c), 1);
    EXPECT_OK(minlsh_clusters_copy_members(c, 0, ids, N, &n));
    EXPECT(n == N && ids[0] == 3 && ids[N - 1] == 3 * (uint64_t)N);
    minlsh_clusters_free(c);
    t0 = now_s();
    EXPECT_OK(minlsh_clusters_from_index(&c, ix, 0.8, NULL));
    t_c1 = now_s() - t0;
    EXPECT_EQ_INT(minlsh_clusters_count(c), 1);
    EXPECT_ERR(minlsh_clusters_copy_members(c, 0, NULL, 0, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, N);
    minlsh_clusters_free(c);
    /* Removing from the middle of a 100,000-member bucket is O(1). */
    t0 = now_s();
    for (i = 0; i < N; i += 2) EXPECT_OK(minlsh_index_remove(ix, (uint64_t)(i + 1) * 3));
    t_rm = now_s() - t0;
    EXPECT_EQ_U64(minlsh_index_count(ix), N / 2 + 1);
    EXPECT_OK(minlsh_index_query(ix, sig, 128, ids, NULL, N, &n));
    EXPECT(n == N / 2 && ids[0] == 6);
    for (i = 0; i < N; i += 2) EXPECT_OK(minlsh_index_remove(ix, (uint64_t)(i + 2) * 3));
    EXPECT_EQ_U64(minlsh_index_count(ix), 1);
    /* All pairs of a smaller hot bucket: n(n-1)/2 exactly once each, though
     * every pair shares all 20 bands. (100,000 would be 5e9 pairs.) */
    for (i = 0; i < NP; i++) EXPECT_OK(minlsh_index_insert(ix, 1000 + i, sig, 128));
    t0 = now_s();
    EXPECT_OK(minlsh_pairs_from_index(&p, ix, 0.0, 0, NULL));
    t_p = now_s() - t0;
    EXPECT_EQ_INT(minlsh_pairs_count(p), NP * (NP - 1) / 2);
    {
        uint64_t a, b;
        EXPECT_OK(minlsh_pairs_copy_pair(&a, &b, NULL, p, 0));
        EXPECT(a == 1000 && b == 1001);
        EXPECT_OK(minlsh_pairs_copy_pair(&a, &b, NULL, p, NP * (NP - 1) / 2 - 1));
        EXPECT(a == 1000 + NP - 2 && b == 1000 + NP - 1);
    }
    minlsh_pairs_free(p);
    printf("  100,000 identical: insert %.3f s, query %.3f s, clusters(0) %.3f s, "
           "clusters(0.8) %.3f s, remove half %.3f s; %zu pairs in %.3f s\n",
           t_ins, t_q, t_c0, t_c1, t_rm, NP * (NP - 1) / 2, t_p);
    /* Generous bounds (sanitizer builds included): linear work, not n^2. */
    EXPECT(t_ins < 20 && t_q < 5 && t_c0 < 10 && t_c1 < 10 && t_rm < 10 && t_p < 20);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
    free(ids);
    free(sim);
}

/* The S-curve: pairs of sets with exact Jaccard s, signed with a real
 * family, become candidates at the rate 1 - (1 - s^r)^b. */
static void test_s_curve(void) {
    enum { PAIRS = 4000, NS = 9, U = 100 };
    static const uint32_t shapes[2][2] = {{20, 5}, {32, 4}};
    minlsh_family *fam = make_family(128, 12345);
    minlsh_index *ix[2] = {NULL, NULL};
    uint64_t st = 777, set_a[U], set_b[U];
    uint32_t sig[128];
    size_t si, p, sh, i;
    size_t hits[2][NS];
    memset(hits, 0, sizeof hits);
    for (sh = 0; sh < 2; sh++)
        EXPECT_OK(minlsh_index_new(&ix[sh], fam, 0, shapes[sh][0], shapes[sh][1], NULL));
    for (si = 0; si < NS; si++) {
        size_t inter = (si + 1) * U / 10, half = (U - inter) / 2;
        for (p = 0; p < PAIRS; p++) {
            uint64_t id = ((uint64_t)si * PAIRS + p) * 2;
            /* A = I + X, B = I + Y, |I| = 100 s, |X| = |Y|: J = |I| / 100. */
            for (i = 0; i < inter; i++) set_a[i] = set_b[i] = tl_rand(&st);
            for (i = 0; i < half; i++) {
                set_a[inter + i] = tl_rand(&st);
                set_b[inter + i] = tl_rand(&st);
            }
            EXPECT_OK(minlsh_family_sign(fam, set_a, inter + half, sig, 128, NULL));
            for (sh = 0; sh < 2; sh++) EXPECT_OK(minlsh_index_insert(ix[sh], id, sig, 128));
            EXPECT_OK(minlsh_family_sign(fam, set_b, inter + half, sig, 128, NULL));
            for (sh = 0; sh < 2; sh++) EXPECT_OK(minlsh_index_insert(ix[sh], id + 1, sig, 128));
        }
    }
    for (sh = 0; sh < 2; sh++) {
        minlsh_pairs *pr = NULL;
        EXPECT_OK(minlsh_pairs_from_index(&pr, ix[sh], 0.0, 0, NULL));
        for (i = 0; i < minlsh_pairs_count(pr); i++) {
            uint64_t a, b;
            EXPECT_OK(minlsh_pairs_copy_pair(&a, &b, NULL, pr, i));
            if (a % 2 == 0 && b == a + 1) hits[sh][a / 2 / PAIRS]++;
        }
        minlsh_pairs_free(pr);
    }
    printf("  S-curve, %d pairs per s, k = 128:\n", PAIRS);
    printf("     s   P(20,5)  observed   P(32,4)  observed\n");
    for (si = 0; si < NS; si++) {
        double s = (double)(si + 1) / 10.0, want[2], got[2];
        for (sh = 0; sh < 2; sh++) {
            EXPECT_OK(minlsh_plan_probability(&want[sh], shapes[sh][0], shapes[sh][1], s));
            got[sh] = (double)hits[sh][si] / PAIRS;
            EXPECT_MSG(fabs(got[sh] - want[sh]) <= 0.03, "b=%u r=%u s=%.1f: %.4f vs %.4f",
                       shapes[sh][0], shapes[sh][1], s, got[sh], want[sh]);
        }
        printf("   %.1f   %.4f    %.4f    %.4f    %.4f\n", s, want[0], got[0], want[1], got[1]);
    }
    for (sh = 0; sh < 2; sh++) minlsh_index_free(ix[sh]);
    minlsh_family_free(fam);
}

static void test_save_load(void) {
    minlsh_family *fam = make_family(MK, 7), *fam_k = make_family(MK / 2, 7),
                  *fam_s = make_family(MK, 8);
    model m;
    minlsh_index *a, *b = NULL, *c = NULL;
    uint8_t *bytes, *bytes2, *file;
    size_t len, len2, flen, n;
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s", tl_tmp_path("lsh_index.mlx"));
    model_init(&m, 300, MK, MB, MR);
    model_generate(&m, 13, 30, 5);
    a = build(fam, &m, NULL, NULL);
    EXPECT_OK(minlsh_index_set_metadata(a, "names\0and more", 14));
    bytes = save_bytes(a, &len);
    EXPECT_EQ_INT(len, 64 + 300 * (8 + 4 * MK) + 8 + 14 + 8);
    EXPECT(memcmp(bytes, "MINLSHIX", 8) == 0);
    /* Buffer round trip, with and without the family. */
    EXPECT_OK(minlsh_index_load_buffer(&b, bytes, len, LOAD_OPTS(fam, 77, NULL)));
    EXPECT(b != NULL && check_queries(b, &m));
    EXPECT_EQ_INT(minlsh_index_bands(b), MB);
    EXPECT_EQ_INT(minlsh_index_rows(b), MR);
    EXPECT_EQ_U64(minlsh_index_config_id(b), 77);
    EXPECT_EQ_U64(minlsh_index_seed(b), 7);
    {
        char meta[32];
        EXPECT_OK(minlsh_index_copy_metadata(b, meta, sizeof meta, &n));
        EXPECT(n == 14 && memcmp(meta, "names\0and more", 14) == 0);
    }
    bytes2 = save_bytes(b, &len2);
    EXPECT(len2 == len && memcmp(bytes, bytes2, len) == 0);
    free(bytes2);
    minlsh_index_free(b);
    b = NULL;
    EXPECT_OK(minlsh_index_load_buffer(&b, bytes, len, LOAD_OPTS(NULL, 12345, NULL)));
    EXPECT(b != NULL && check_queries(b, &m));
    minlsh_index_free(b);
    b = NULL;
    /* Short buffer. */
    n = 0;
    EXPECT_ERR(minlsh_index_save_buffer(a, bytes, len - 1, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, len);
    EXPECT_ERR(minlsh_index_save_buffer(a, NULL, 5, &n), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_save_buffer(NULL, bytes, len, &n), MINLSH_E_NULL);
    /* File round trip: the same bytes. */
    EXPECT_OK(minlsh_index_save(a, path));
    f = fopen(path, "rb");
    EXPECT(f != NULL);
    file = (uint8_t *)malloc(len + 16);
    flen = f != NULL ? fread(file, 1, len + 16, f) : 0;
    if (f != NULL) fclose(f);
    EXPECT(flen == len && memcmp(file, bytes, len) == 0);
    free(file);
    EXPECT_OK(minlsh_index_load(&c, path, LOAD_OPTS(fam, 77, NULL)));
    EXPECT(c != NULL && check_queries(c, &m));
    minlsh_index_free(c);
    c = NULL;
    EXPECT_ERR(minlsh_index_save(NULL, path), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_save(a, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_save(a, tl_tmp_path("no/such/dir/x.mlx")), MINLSH_E_IO);
    /* Mismatches. */
    EXPECT_ERR(minlsh_index_load_buffer(&b, bytes, len, LOAD_OPTS(fam_k, 77, NULL)), MINLSH_E_MISMATCH);
    EXPECT_ERR(minlsh_index_load_buffer(&b, bytes, len, LOAD_OPTS(fam_s, 77, NULL)), MINLSH_E_MISMATCH);
    EXPECT_ERR(minlsh_index_load_buffer(&b, bytes, len, LOAD_OPTS(fam, 78, NULL)), MINLSH_E_MISMATCH);
    EXPECT_ERR(minlsh_index_load(&c, path, LOAD_OPTS(fam, 78, NULL)), MINLSH_E_MISMATCH);
    EXPECT(b == NULL && c == NULL);
    /* Missing file, NULLs, foreign data. */
    EXPECT_ERR(minlsh_index_load(&c, tl_tmp_path("no-such-index.mlx"), NULL),
               MINLSH_E_IO);
    EXPECT_ERR(minlsh_index_load(&c, NULL, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_load(NULL, path, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_load_buffer(NULL, bytes, len, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_load_buffer(&b, NULL, len, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_load_buffer(&b, NULL, 0, NULL), MINLSH_E_FORMAT);
    {
        /* Pointers before options, as for the matrix: a NULL buffer or
         * path is MINLSH_E_NULL whatever the options say. */
        minlsh_load_options bad_opts = MINLSH_LOAD_OPTIONS_INIT;
        bad_opts.version = 99;
        EXPECT_ERR(minlsh_index_load_buffer(&b, NULL, len, &bad_opts), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_index_load(&b, NULL, &bad_opts), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_index_load_buffer(&b, bytes, len, &bad_opts), MINLSH_E_VERSION);
        EXPECT(b == NULL);
    }
    EXPECT_ERR(minlsh_index_load_buffer(&b, "MINLSHMX", 8, NULL), MINLSH_E_FORMAT);
    EXPECT(b == NULL);
    /* Crafted but checksummed: bad shape, ids out of order. */
    {
        uint8_t *x = (uint8_t *)malloc(len);
        static const uint32_t br[][2] = {{0, 4}, {8, 0}, {9, 4}, {33, 1}};
        size_t t, item = 8 + 4 * MK, body = len - 64 - 8;
        for (t = 0; t < 4; t++) {
            memcpy(x, bytes, len);
            minlsh__store32le(x + 20, br[t][0]);
            minlsh__store32le(x + 24, br[t][1]);
            minlsh__store64le(x + 56, minlsh__sum64(x, 56));
            EXPECT_ERR(minlsh_index_load_buffer(&b, x, len, NULL), MINLSH_E_CORRUPT);
        }
        /* swap documents 10 and 11 */
        memcpy(x, bytes, len);
        memcpy(x + 64 + 10 * item, bytes + 64 + 11 * item, item);
        memcpy(x + 64 + 11 * item, bytes + 64 + 10 * item, item);
        minlsh__store64le(x + 64 + body, minlsh__sum64(x + 64, body));
        EXPECT_ERR(minlsh_index_load_buffer(&b, x, len, NULL), MINLSH_E_CORRUPT);
        /* a repeated id */
        memcpy(x, bytes, len);
        memcpy(x + 64 + 11 * item, x + 64 + 10 * item, 8);
        minlsh__store64le(x + 64 + body, minlsh__sum64(x + 64, body));
        EXPECT_ERR(minlsh_index_load_buffer(&b, x, len, NULL), MINLSH_E_CORRUPT);
        /* damage beats mismatch */
        EXPECT_ERR(minlsh_index_load_buffer(&b, x, len, LOAD_OPTS(fam_s, 0, NULL)), MINLSH_E_CORRUPT);
        free(x);
    }
    minlsh_index_free(a);
    free(bytes);
    model_free(&m);
    minlsh_family_free(fam);
    minlsh_family_free(fam_k);
    minlsh_family_free(fam_s);
}

static void test_truncation_and_bitflips(void) {
    minlsh_family *fam = make_family(8, 1);
    minlsh_index *ix = NULL, *b = NULL;
    uint32_t sig[8];
    uint8_t *bytes, *x;
    size_t len, cut, bit, i, bad = 0;
    EXPECT_OK(minlsh_index_new(&ix, fam, 3, 2, 4, NULL));
    for (i = 0; i < 5; i++) {
        size_t v;
        for (v = 0; v < 8; v++) sig[v] = (uint32_t)(i * 8 + v % 3);
        EXPECT_OK(minlsh_index_insert(ix, 100 - i, sig, 8));
    }
    EXPECT_OK(minlsh_index_set_metadata(ix, "meta", 4));
    bytes = save_bytes(ix, &len);
    EXPECT_EQ_INT(len, 64 + 5 * 40 + 8 + 4 + 8);
    x = (uint8_t *)malloc(len);
    for (cut = 0; cut < len; cut++) {
        int rc = minlsh_index_load_buffer(&b, bytes, cut, NULL);
        if (!(rc == MINLSH_E_CORRUPT || rc == MINLSH_E_FORMAT) || b != NULL) bad++;
        minlsh_index_free(b);
        b = NULL;
    }
    EXPECT_MSG(bad == 0, "%zu truncations accepted or misreported", bad);
    for (bit = 0; bit < 8 * len; bit++) {
        int rc;
        memcpy(x, bytes, len);
        x[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        rc = minlsh_index_load_buffer(&b, x, len, NULL);
        if (!(rc == MINLSH_E_CORRUPT || rc == MINLSH_E_FORMAT) || b != NULL) bad++;
        minlsh_index_free(b);
        b = NULL;
    }
    EXPECT_MSG(bad == 0, "%zu bit flips accepted or misreported", bad);
    /* A file with trailing garbage is not silently accepted either. */
    {
        uint8_t *y = (uint8_t *)malloc(len + 1);
        memcpy(y, bytes, len);
        y[len] = 0;
        EXPECT_ERR(minlsh_index_load_buffer(&b, y, len + 1, NULL), MINLSH_E_CORRUPT);
        free(y);
    }
    EXPECT_OK(minlsh_index_load_buffer(&b, bytes, len, LOAD_OPTS(fam, 3, NULL)));
    minlsh_index_free(b);
    free(x);
    free(bytes);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
}

/* ---- allocation failure ------------------------------------------------------ */

static void test_nomem(void) {
    fa_state fs = {0, 0, 0};
    minlsh_allocator fa = {fa_alloc, fa_free, &fs};
    minlsh_family *fam = make_family(MK, 7);
    minlsh_index *ix = NULL;
    model m;
    long nfail;
    size_t i, n0;
    int rc;
    model_init(&m, 360, MK, MB, MR);
    model_generate(&m, 17, 30, 3);
    /* 300 copies of one signature: a query needs more than the stack. */
    for (i = 40; i < 340; i++) memcpy(m.sig + i * MK, m.sig + 39 * MK, MK * 4);
    model_finish(&m);

    /* index_new */
    for (nfail = 1;; nfail++) {
        fa_arm(&fs, nfail);
        rc = minlsh_index_new(&ix, fam, 77, MB, MR, &fa);
        fa_arm(&fs, 0);
        if (rc == 0) break;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT(ix == NULL && fs.live == 0);
        if (rc != MINLSH_E_NOMEM) break;
    }
    EXPECT(nfail > 1);
    /* insert, at sizes where different structures grow */
    n0 = 0;
    {
        static const size_t stops[] = {0, 12, 16, 24, 48, 200, 359};
        size_t si;
        for (si = 0; si < sizeof stops / sizeof stops[0]; si++) {
            uint8_t *before;
            size_t blen, alen;
            for (; n0 < stops[si]; n0++) {
                EXPECT_OK(minlsh_index_insert(ix, m.id[n0], m.sig + n0 * MK, MK));
                m.live[n0] = 1;
            }
            before = save_bytes(ix, &blen);
            for (nfail = 1;; nfail++) {
                fa_arm(&fs, nfail);
                rc = minlsh_index_insert(ix, m.id[n0], m.sig + n0 * MK, MK);
                fa_arm(&fs, 0);
                if (rc == 0) break;
                EXPECT_ERR(rc, MINLSH_E_NOMEM);
                if (rc != MINLSH_E_NOMEM) break;
                {
                    uint8_t *after = save_bytes(ix, &alen);
                    EXPECT(alen == blen && memcmp(after, before, blen) == 0);
                    free(after);
                }
                EXPECT_EQ_INT(minlsh_index_contains(ix, m.id[n0]), 0);
            }
            m.live[n0] = 1;
            n0++;
            free(before);
            EXPECT(check_queries(ix, &m));
        }
    }
    /* remove needs no memory */
    fa_arm(&fs, 1);
    EXPECT_OK(minlsh_index_remove(ix, m.id[5]));
    fa_arm(&fs, 0);
    m.live[5] = 0;
    EXPECT(check_queries(ix, &m));
    /* query with 300+ candidates */
    {
        uint64_t ids[400], want[400];
        size_t n = 0, nw = model_query(&m, 100, NULL, 0, want);
        EXPECT(nw > 256);
        for (nfail = 1;; nfail++) {
            long live = fs.live;
            fa_arm(&fs, nfail);
            rc = minlsh_index_query(ix, m.sig + 100 * MK, MK, ids, NULL, 400, &n);
            fa_arm(&fs, 0);
            EXPECT(fs.live == live);
            if (rc == 0) break;
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            if (rc != MINLSH_E_NOMEM) break;
        }
        EXPECT(nfail > 1 && n == nw && memcmp(ids, want, nw * 8) == 0);
    }
    /* pairs and clusters */
    {
        tpair *want;
        size_t nw = model_pairs(&m, 0.5, &want);
        minlsh_pairs *p = NULL;
        minlsh_clusters *c = NULL, *c0 = NULL;
        int which;
        for (nfail = 1;; nfail++) {
            long live = fs.live;
            fa_arm(&fs, nfail);
            rc = minlsh_pairs_from_index(&p, ix, 0.5, 0, NULL);
            fa_arm(&fs, 0);
            if (rc == 0) break;
            EXPECT(rc == MINLSH_E_NOMEM && p == NULL && fs.live == live);
            if (rc != MINLSH_E_NOMEM) break;
        }
        EXPECT(nfail > 1 && pairs_equal(p, want, nw));
        minlsh_pairs_free(p);
        free(want);
        for (which = 0; which < 2; which++) {
            double ms = which ? 0.5 : 0.0;
            EXPECT_OK(minlsh_clusters_from_index(&c0, ix, ms, NULL)); /* reference, no failures */
            for (nfail = 1;; nfail++) {
                long live = fs.live;
                fa_arm(&fs, nfail);
                rc = minlsh_clusters_from_index(&c, ix, ms, NULL);
                fa_arm(&fs, 0);
                if (rc == 0) break;
                EXPECT(rc == MINLSH_E_NOMEM && c == NULL && fs.live == live);
                if (rc != MINLSH_E_NOMEM) break;
            }
            EXPECT(nfail > 1 && minlsh_clusters_count(c) == minlsh_clusters_count(c0));
            EXPECT(minlsh_clusters_count(c) > 0);
            for (i = 0; i < minlsh_clusters_count(c); i++) {
                uint64_t g1[400], g2[400];
                size_t n1 = 0, n2 = 0;
                EXPECT_OK(minlsh_clusters_copy_members(c, i, g1, 400, &n1));
                EXPECT_OK(minlsh_clusters_copy_members(c0, i, g2, 400, &n2));
                EXPECT(n1 == n2 && memcmp(g1, g2, n1 * 8) == 0);
            }
            minlsh_clusters_free(c);
            minlsh_clusters_free(c0);
            c = c0 = NULL;
        }
    }
    /* clusters from edges */
    {
        uint64_t ea[50], eb[50];
        minlsh_clusters *c = NULL;
        for (i = 0; i < 50; i++) {
            ea[i] = i * 7 % 31;
            eb[i] = i * 3 % 29;
        }
        for (nfail = 1;; nfail++) {
            fa_arm(&fs, nfail);
            rc = minlsh_clusters_from_edges(&c, ea, eb, 50, &fa);
            fa_arm(&fs, 0);
            if (rc == 0) break;
            EXPECT(rc == MINLSH_E_NOMEM && c == NULL);
            if (rc != MINLSH_E_NOMEM) break;
        }
        EXPECT(nfail > 1 && minlsh_clusters_count(c) >= 1);
        minlsh_clusters_free(c);
    }
    /* save_buffer, save, set_metadata, load_buffer */
    {
        uint8_t *bytes;
        size_t len, n = 0;
        minlsh_index *b = NULL;
        char path[4096];
        snprintf(path, sizeof path, "%s", tl_tmp_path("lsh_nomem.mlx"));
        bytes = save_bytes(ix, &len);
        for (nfail = 1;; nfail++) {
            uint8_t *buf = (uint8_t *)malloc(len);
            fa_arm(&fs, nfail);
            rc = minlsh_index_save_buffer(ix, buf, len, &n);
            fa_arm(&fs, 0);
            if (rc == 0) EXPECT(memcmp(buf, bytes, len) == 0);
            free(buf);
            if (rc == 0) break;
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            if (rc != MINLSH_E_NOMEM) break;
        }
        remove(path);
        for (nfail = 1;; nfail++) {
            FILE *f;
            fa_arm(&fs, nfail);
            rc = minlsh_index_save(ix, path);
            fa_arm(&fs, 0);
            if (rc == 0) break;
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            /* Never a half-written file. (The common writer reports a failed
             * directory fsync, which allocates, after the rename: then the
             * complete file is already in place.) */
            f = fopen(path, "rb");
            if (f != NULL) {
                uint8_t *got = (uint8_t *)malloc(len + 1);
                size_t gl = fread(got, 1, len + 1, f);
                fclose(f);
                EXPECT(gl == len && memcmp(got, bytes, len) == 0);
                free(got);
                remove(path);
            }
            if (rc != MINLSH_E_NOMEM) break;
        }
        EXPECT(nfail > 2);
        for (nfail = 1;; nfail++) {
            char meta[8];
            fa_arm(&fs, nfail);
            rc = minlsh_index_set_metadata(ix, "new meta", 8);
            fa_arm(&fs, 0);
            if (rc == 0) break;
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            EXPECT_OK(minlsh_index_copy_metadata(ix, meta, sizeof meta, &n));
            EXPECT_EQ_INT(n, 0); /* the old (empty) metadata is kept */
        }
        for (nfail = 1;; nfail++) {
            fa_arm(&fs, nfail);
            rc = minlsh_index_load_buffer(&b, bytes, len, LOAD_OPTS(fam, 77, &fa));
            fa_arm(&fs, 0);
            if (rc == 0) break;
            EXPECT(rc == MINLSH_E_NOMEM && b == NULL);
            if (rc != MINLSH_E_NOMEM) break;
        }
        EXPECT(nfail > 5 && b != NULL && check_queries(b, &m));
        minlsh_index_free(b);
        b = NULL;
        for (nfail = 1;; nfail++) {
            fa_arm(&fs, nfail);
            rc = minlsh_index_load(&b, path, LOAD_OPTS(fam, 77, &fa));
            fa_arm(&fs, 0);
            if (rc == 0) break;
            EXPECT(rc == MINLSH_E_NOMEM && b == NULL);
            if (rc != MINLSH_E_NOMEM) break;
        }
        EXPECT(b != NULL && check_queries(b, &m));
        minlsh_index_free(b);
        free(bytes);
    }
    EXPECT(check_queries(ix, &m));
    minlsh_index_free(ix);
    EXPECT_EQ_INT(fs.live, 0);
    model_free(&m);
    minlsh_family_free(fam);
}

/* minlsh_index_copy_ids: every live id, ascending, after inserts and removes in
 * arbitrary order; size query; short buffer. */
static void test_ids(void) {
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    uint64_t want[500], got[500], st = 99;
    uint32_t sig[16];
    size_t n_want = 0, n = 12345, i, j;
    EXPECT_OK(minlsh_family_new(&fam, 16, 3, NULL));
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 4, 4, NULL));
    EXPECT_OK(minlsh_index_copy_ids(ix, NULL, 0, &n));
    EXPECT_EQ_INT(n, 0);
    for (i = 0; i < 500; i++) {
        uint64_t id = tl_rand(&st);
        for (j = 0; j < 16; j++) sig[j] = (uint32_t)tl_rand(&st);
        EXPECT_OK(minlsh_index_insert(ix, id, sig, 16));
        if (i % 3 == 0) {
            EXPECT_OK(minlsh_index_remove(ix, id));
        } else {
            want[n_want++] = id;
        }
    }
    /* reference: insertion sort of the survivors */
    for (i = 1; i < n_want; i++)
        for (j = i; j > 0 && want[j - 1] > want[j]; j--) {
            uint64_t t = want[j];
            want[j] = want[j - 1];
            want[j - 1] = t;
        }
    EXPECT_ERR(minlsh_index_copy_ids(ix, NULL, 0, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, n_want);
    EXPECT_ERR(minlsh_index_copy_ids(ix, got, n_want - 1, &n), MINLSH_E_BUFSIZE);
    EXPECT_ERR(minlsh_index_copy_ids(NULL, got, 500, &n), MINLSH_E_NULL);
    EXPECT_OK(minlsh_index_copy_ids(ix, got, 500, &n));
    EXPECT_EQ_INT(n, n_want);
    EXPECT(memcmp(got, want, n_want * sizeof want[0]) == 0);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
}

/* ---- the speed work: SIMD band keys, batches, limits, the matrix path ------- */

/* Every band-key implementation this CPU and build have gives the bits of
 * the scalar specification, for every (b, r) shape of k = 64 and a few
 * long ones. */
static void test_band_key_kernels(void) {
    uint32_t sig[1024];
    uint64_t want[1024], got[1024], st = 5;
    size_t i;
    int level, tried = 0;
    for (i = 0; i < 1024; i++) sig[i] = (uint32_t)tl_rand(&st);
    for (level = MINLSH__SIMD_PORTABLE; level < MINLSH__SIMD_LEVELS; level++) {
        const minlsh__lsh_kernels *kn = minlsh__lsh_kernels_for_level(level);
        minlsh__lsh_band_keys_fn fn;
        uint32_t b, r;
        if (kn == NULL) continue;
        fn = kn->band_keys;
        tried++;
        for (r = 1; r <= 64; r++)
            for (b = 1; b * r <= 64; b++) {
                minlsh__lsh_band_keys_portable(sig, b, r, want);
                memset(got, 0, sizeof got);
                fn(sig, b, r, got);
                EXPECT_MSG(memcmp(got, want, b * sizeof *got) == 0, "level %d b=%u r=%u", level,
                           (unsigned)b, (unsigned)r);
                EXPECT_EQ_U64(got[b], 0); /* nothing written past b */
            }
        {
            static const uint32_t shapes[][2] = {{9, 13}, {20, 5}, {1024, 1}, {17, 60}, {3, 341}};
            size_t si;
            for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                minlsh__lsh_band_keys_portable(sig, shapes[si][0], shapes[si][1], want);
                fn(sig, shapes[si][0], shapes[si][1], got);
                EXPECT(memcmp(got, want, shapes[si][0] * sizeof *got) == 0);
            }
        }
    }
    EXPECT(tried >= 1);
    printf("  band-key kernels checked: %d (CPU level %s)\n", tried,
           minlsh__simd_level_name(minlsh__cpu_simd_level()));
}

/* Every signature-hash implementation gives the portable bits, at every k
 * from 1 to 300 (tails of every length, odd k) and the maximum, on random
 * values and on the extremes 0 and 0xFFFFFFFF. */
static void test_sig_hash_kernels(void) {
    static uint32_t sig[MINLSH_FAMILY_K_MAX];
    uint64_t st = 11;
    int level, tried = 0, fill;
    for (fill = 0; fill < 3; fill++) {
        size_t i;
        for (i = 0; i < MINLSH_FAMILY_K_MAX; i++)
            sig[i] = fill == 0 ? (uint32_t)tl_rand(&st) : fill == 1 ? 0 : UINT32_C(0xFFFFFFFF);
        for (level = MINLSH__SIMD_PORTABLE; level < MINLSH__SIMD_LEVELS; level++) {
            const minlsh__lsh_kernels *kn = minlsh__lsh_kernels_for_level(level);
            uint32_t k;
            if (kn == NULL) continue;
            if (fill == 0) tried++;
            for (k = 1; k <= MINLSH_FAMILY_K_MAX; k = k < 300 ? k + 1 : k * 2)
                EXPECT_MSG(kn->sig_hash(sig, k) == minlsh__lsh_sig_hash_portable(sig, k),
                           "level %d k=%u fill %d", level, (unsigned)k, fill);
        }
    }
    /* Position matters: swapping two values changes the hash. */
    {
        uint32_t t, v;
        uint64_t h0;
        for (v = 0; v < 128; v++) sig[v] = (uint32_t)tl_rand(&st);
        h0 = minlsh__lsh_sig_hash(sig, 128);
        t = sig[3];
        sig[3] = sig[4];
        sig[4] = t;
        EXPECT(minlsh__lsh_sig_hash(sig, 128) != h0);
    }
    EXPECT(tried >= 1);
}

/* Every equal-count implementation (the estimate's numerator) agrees with
 * the portable one at every k from 1 to 300 and the maximum, for pairs
 * agreeing nowhere, everywhere, and at random places (including the tail
 * past the last whole vector). */
static void test_equal_count_kernels(void) {
    static uint32_t a[MINLSH_FAMILY_K_MAX], b[MINLSH_FAMILY_K_MAX];
    uint64_t st = 12;
    int level, tried = 0, mode;
    for (mode = 0; mode < 3; mode++) {
        size_t i;
        for (i = 0; i < MINLSH_FAMILY_K_MAX; i++) {
            a[i] = (uint32_t)tl_rand(&st);
            b[i] = mode == 0 ? ~a[i] : mode == 1 ? a[i] : (tl_rand(&st) & 1 ? a[i] : a[i] ^ 1u);
        }
        for (level = MINLSH__SIMD_PORTABLE; level < MINLSH__SIMD_LEVELS; level++) {
            const minlsh__lsh_kernels *kn = minlsh__lsh_kernels_for_level(level);
            uint32_t k;
            if (kn == NULL) continue;
            if (mode == 0) tried++;
            for (k = 1; k <= MINLSH_FAMILY_K_MAX; k = k < 300 ? k + 1 : k * 2) {
                uint32_t want = minlsh__lsh_equal_count_portable(a, b, k);
                EXPECT_MSG(kn->equal_count(a, b, k) == want, "level %d k=%u mode %d", level,
                           (unsigned)k, mode);
                if (mode == 0) EXPECT_EQ_INT(want, 0);
                if (mode == 1) EXPECT_EQ_INT(want, k);
            }
        }
    }
    EXPECT(tried >= 1);
}

/* The ordered table keeps its invariants through growth, inserts at every
 * kind of place and deletions (checked against a plain list). */
static void test_ordered_table(void) {
    minlsh_allocator al;
    minlsh__lsh_table t;
    uint32_t *tags = (uint32_t *)malloc(20000 * sizeof *tags);
    size_t n = 0, i, step;
    uint64_t st = 77;
    EXPECT_OK(minlsh__alloc_setup(&al, NULL));
    memset(&t, 0, sizeof t);
    for (step = 0; step < 60000; step++) {
        int del = n > 0 && tl_rand(&st) % 3 == 0;
        if (del) {
            /* Delete a random present tag. */
            size_t which = (size_t)(tl_rand(&st) % n), p;
            uint32_t tag = tags[which];
            p = minlsh__tab_seek(&t, tag);
            while (t.e[p].val != (uint32_t)which && t.e[p].tag == tag) p++;
            EXPECT(t.e[p].tag == tag && t.e[p].val == (uint32_t)which);
            minlsh__tab_delete_at(&t, p);
            /* Keep values = index in tags: move the last one into the hole. */
            if (which != n - 1) {
                uint32_t lt = tags[n - 1];
                p = minlsh__tab_seek(&t, lt);
                while (t.e[p].val != (uint32_t)(n - 1)) p++;
                t.e[p].val = (uint32_t)which;
                tags[which] = lt;
            }
            n--;
        } else if (n < 20000) {
            minlsh__lsh_entry x;
            size_t p;
            /* Clustered tags too: many equal and neighbouring ones. */
            uint32_t tag = tl_rand(&st) % 4 == 0 ? (uint32_t)(tl_rand(&st) % 64) << 26
                                                 : (uint32_t)tl_rand(&st);
            EXPECT_OK(minlsh__tab_reserve(&al, &t, 1));
            p = minlsh__tab_seek(&t, tag);
            x.tag = tag;
            x.val = (uint32_t)n;
            minlsh__tab_insert_at(&t, p, x);
            tags[n++] = tag;
        }
        if (step % 5000 == 4999 || step == 59999) {
            size_t used = 0, last = 0;
            int sorted = 1, homes = 1;
            uint32_t prev = 0;
            for (i = 0; i < t.len; i++) {
                if (t.e[i].val == MINLSH__LSH_NIL) continue;
                used++;
                if (used > 1 && t.e[i].tag < prev) sorted = 0;
                if (minlsh__tab_home(&t, t.e[i].tag) > i) homes = 0;
                /* no empty entry between home and position */
                if (minlsh__tab_home(&t, t.e[i].tag) < i && t.e[i - 1].val == MINLSH__LSH_NIL)
                    homes = 0;
                prev = t.e[i].tag;
                last = i;
            }
            EXPECT(used == n && t.used == n && sorted && homes);
            EXPECT(t.e[t.len - 1].val == MINLSH__LSH_NIL && last < t.len - 1);
            EXPECT((double)t.used <= 0.875 * (double)t.cap + 1);
            /* Every tag is found from its home. */
            for (i = 0; i < n; i++) {
                size_t p = minlsh__tab_seek(&t, tags[i]);
                while (t.e[p].val != MINLSH__LSH_NIL && t.e[p].tag == tags[i] &&
                       t.e[p].val != (uint32_t)i)
                    p++;
                if (t.e[p].val != (uint32_t)i) {
                    TL_FAIL("tag %zu not found", i);
                    break;
                }
            }
        }
    }
    /* Grown by 5/4: the load stays at 0.7 or more once the table is large. */
    EXPECT(t.cap > 1000 && (double)t.used >= 0.5 * (double)t.cap);
    minlsh__tab_free(&al, &t);
    free(tags);
}

/* insert_many / query_many give what the single calls give. */
static void test_many(void) {
    minlsh_family *fam = make_family(MK, 7);
    model m;
    minlsh_index *one = NULL, *many = NULL;
    uint64_t *ids, *got, *want;
    double *gs, *ws;
    size_t *off, i, done = 99, total = 0, n;
    model_init(&m, 600, MK, MB, MR);
    model_generate(&m, 31, 20, 5);
    /* Identical signatures too. */
    for (i = 100; i < 160; i++) memcpy(m.sig + i * MK, m.sig + 99 * MK, MK * 4);
    model_finish(&m);
    ids = (uint64_t *)malloc(m.n * sizeof *ids);
    for (i = 0; i < m.n; i++) ids[i] = m.id[i];
    one = build(fam, &m, NULL, NULL);
    EXPECT_OK(minlsh_index_new(&many, fam, 77, MB, MR, NULL));
    EXPECT_OK(minlsh_index_insert_many(many, ids, m.sig, 300, MK, &done));
    EXPECT_EQ_INT(done, 300);
    EXPECT_OK(minlsh_index_insert_many(many, ids + 300, m.sig + 300 * MK, m.n - 300, MK, NULL));
    EXPECT(check_queries(many, &m));
    {
        size_t la, lb;
        uint8_t *a = save_bytes(one, &la), *b = save_bytes(many, &lb);
        EXPECT(la == lb && memcmp(a, b, la) == 0);
        free(a);
        free(b);
    }
    /* A failure in the middle: those before it are in, it and those after
     * are not. */
    {
        minlsh_index *ix = NULL;
        uint64_t dup[5];
        memcpy(dup, ids, sizeof dup);
        dup[3] = dup[1];
        EXPECT_OK(minlsh_index_new(&ix, fam, 77, MB, MR, NULL));
        EXPECT_ERR(minlsh_index_insert_many(ix, dup, m.sig, 5, MK, &done), MINLSH_E_EXISTS);
        EXPECT_EQ_INT(done, 3);
        EXPECT_EQ_U64(minlsh_index_count(ix), 3);
        EXPECT_EQ_INT(minlsh_index_contains(ix, dup[4]), 0);
        EXPECT_ERR(minlsh_index_insert_many(ix, dup, m.sig, 5, MK + 1, &done), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_index_insert_many(NULL, dup, m.sig, 5, MK, &done), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_index_insert_many(ix, NULL, m.sig, 5, MK, &done), MINLSH_E_NULL);
        EXPECT_OK(minlsh_index_insert_many(ix, NULL, NULL, 0, MK, &done));
        EXPECT_EQ_INT(done, 0);
        minlsh_index_free(ix);
    }
    /* query_many against one query at a time. */
    got = (uint64_t *)malloc(m.n * m.n * sizeof *got / 4 + 1);
    want = (uint64_t *)malloc((m.n + 1) * sizeof *want);
    gs = (double *)malloc(m.n * m.n * sizeof *gs / 4 + 1);
    ws = (double *)malloc((m.n + 1) * sizeof *ws);
    off = (size_t *)malloc((m.n + 1) * sizeof *off);
    EXPECT_ERR(minlsh_index_query_many(many, m.sig, m.n, MK, off, NULL, NULL, 0, &total),
               MINLSH_E_BUFSIZE);
    EXPECT(total > m.n && total < m.n * m.n / 4);
    EXPECT_OK(minlsh_index_query_many(many, m.sig, m.n, MK, off, got, gs, total, &n));
    EXPECT_EQ_INT(n, total);
    EXPECT_EQ_INT(off[0], 0);
    EXPECT_EQ_INT(off[m.n], total);
    for (i = 0; i < m.n; i++) {
        size_t nw = 0;
        EXPECT_OK(minlsh_index_query(many, m.sig + i * MK, MK, want, ws, m.n + 1, &nw));
        if (off[i + 1] - off[i] != nw || memcmp(got + off[i], want, nw * 8) != 0 ||
            memcmp(gs + off[i], ws, nw * sizeof *ws) != 0) {
            TL_FAIL("query_many result %zu differs", i);
            break;
        }
    }
    EXPECT_ERR(minlsh_index_query_many(many, m.sig, m.n, MK, off, got, NULL, total - 1, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, total);
    EXPECT_ERR(minlsh_index_query_many(many, m.sig, 2, MK, NULL, got, NULL, 10, &n), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_query_many(many, m.sig, 2, MK - 1, off, got, NULL, 10, &n),
               MINLSH_E_PARAM);
    EXPECT_OK(minlsh_index_query_many(many, NULL, 0, MK, off, NULL, NULL, 0, &n));
    EXPECT(n == 0 && off[0] == 0);
    free(got);
    free(want);
    free(gs);
    free(ws);
    free(off);
    free(ids);
    minlsh_index_free(one);
    minlsh_index_free(many);
    model_free(&m);
    minlsh_family_free(fam);
}

/* The bounded query: whole bands only, in order, independent of insertion
 * order, and never silent. */
static void test_query_limited(void) {
    minlsh_family *fam = make_family(MK, 7);
    model m;
    minlsh_index *a, *b;
    size_t *ord = (size_t *)malloc(400 * sizeof *ord), n, na, nb;
    uint64_t ga[400], gb[400], full[400];
    double sa[400], sb[400];
    uint32_t done = 99, da, db;
    uint64_t limit;
    model_init(&m, 400, MK, MB, MR);
    model_generate(&m, 41, 3, 4); /* few families: hot buckets */
    a = build(fam, &m, NULL, NULL);
    shuffle(ord, m.n, 9);
    b = build(fam, &m, ord, NULL);
    EXPECT_ERR(minlsh_index_query_limited(a, m.sig + 50 * MK, MK, 10, ga, sa, 400, &n, NULL),
               MINLSH_E_NULL);
    /* No limit: the plain query, all bands searched. */
    EXPECT_OK(minlsh_index_query(a, m.sig + 50 * MK, MK, full, NULL, 400, &n));
    EXPECT_OK(minlsh_index_query_limited(a, m.sig + 50 * MK, MK, 0, ga, sa, 400, &na, &done));
    EXPECT(na == n && done == MB && memcmp(ga, full, n * 8) == 0);
    for (limit = 1; limit < 3000; limit = limit * 3 / 2 + 1) {
        size_t d;
        EXPECT_OK(minlsh_index_query_limited(a, m.sig + 50 * MK, MK, limit, ga, sa, 400, &na, &da));
        EXPECT_OK(minlsh_index_query_limited(b, m.sig + 50 * MK, MK, limit, gb, sb, 400, &nb, &db));
        /* The same answer whatever the insertion order. */
        EXPECT(na == nb && da == db && memcmp(ga, gb, na * 8) == 0 &&
               memcmp(sa, sb, na * sizeof *sa) == 0);
        /* Exactly the documents sharing one of bands 0..da-1. */
        {
            size_t nw = 0, x;
            uint64_t want[400];
            for (x = 0; x < m.n; x++) {
                uint32_t j;
                if (m.empty[x]) continue;
                for (j = 0; j < da; j++)
                    if (m.key[x * MB + j] == m.key[50 * MB + j]) break;
                if (j < da) want[nw++] = m.id[x];
            }
            qsort(want, nw, sizeof *want, cmp_u64);
            EXPECT(nw == na && memcmp(want, ga, na * 8) == 0);
        }
        /* The members counted stay within the limit. */
        for (d = 0, n = 0; d < da; d++) {
            size_t x;
            for (x = 0; x < m.n; x++) n += !m.empty[x] && m.key[x * MB + d] == m.key[50 * MB + d];
        }
        EXPECT(n <= limit);
        if (da == MB) EXPECT(na == minlsh_index_count(a) || na <= limit);
    }
    minlsh_index_free(a);
    minlsh_index_free(b);
    model_free(&m);
    free(ord);
    minlsh_family_free(fam);
}

/* A matrix holding the model's signatures in order. */
static minlsh_sigmatrix *model_matrix(const minlsh_family *fam, const model *m) {
    minlsh_sigmatrix *mx = NULL;
    size_t i;
    EXPECT_OK(minlsh_sigmatrix_new(&mx, fam, 0, NULL));
    for (i = 0; i < m->n; i++) EXPECT_OK(minlsh_sigmatrix_append(mx, m->sig + i * m->k, m->k, NULL));
    return mx;
}

/* An index holding column i under id i. */
static minlsh_index *position_index(const minlsh_family *fam, const model *m) {
    minlsh_index *ix = NULL;
    size_t i;
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, m->b, m->r, NULL));
    for (i = 0; i < m->n; i++) EXPECT_OK(minlsh_index_insert(ix, i, m->sig + i * m->k, m->k));
    return ix;
}

static int same_pairs(const minlsh_pairs *x, const minlsh_pairs *y) {
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

static int same_clusters(const minlsh_clusters *x, const minlsh_clusters *y) {
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

/* The sort-based path finds exactly the index's pairs and clusters: random
 * corpora with planted near-duplicates, identical and empty signatures,
 * several (b, r). */
static void test_matrix_equals_index(void) {
    static const uint32_t shapes[][2] = {{8, 4}, {4, 8}, {16, 2}, {32, 1}, {3, 10}, {1, 32}};
    static const double mins[] = {0.0, 0.3, 0.6, 1.0};
    minlsh_family *fam = make_family(MK, 7);
    size_t si, mi, total = 0;
    for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        model m;
        minlsh_sigmatrix *mx;
        minlsh_index *ix;
        size_t i;
        model_init(&m, 700, MK, shapes[si][0], shapes[si][1]);
        model_generate(&m, 100 + si, 25, 6);
        /* Planted copies and near-copies. */
        for (i = 0; i < 40; i++) memcpy(m.sig + (300 + i) * MK, m.sig + 299 * MK, MK * 4);
        for (i = 0; i < 60; i++) {
            uint64_t st = i;
            memcpy(m.sig + (400 + i) * MK, m.sig + (500 + i % 7) * MK, MK * 4);
            m.sig[(400 + i) * MK + tl_rand(&st) % MK] ^= 1;
        }
        model_finish(&m);
        mx = model_matrix(fam, &m);
        ix = position_index(fam, &m);
        for (mi = 0; mi < sizeof mins / sizeof mins[0]; mi++) {
            minlsh_pairs *pi = NULL, *pm = NULL;
            minlsh_clusters *ci = NULL, *cm = NULL;
            EXPECT_OK(minlsh_pairs_from_index(&pi, ix, mins[mi], 0, NULL));
            EXPECT_OK(minlsh_pairs_from_matrix(&pm, mx, shapes[si][0], shapes[si][1], mins[mi], 0,
                                               NULL));
            EXPECT(same_pairs(pi, pm));
            total += minlsh_pairs_count(pm);
            EXPECT_OK(minlsh_clusters_from_index(&ci, ix, mins[mi], NULL));
            EXPECT_OK(minlsh_clusters_from_matrix(&cm, mx, shapes[si][0], shapes[si][1], mins[mi],
                                                  NULL));
            EXPECT(same_clusters(ci, cm));
            /* max_pairs: exactly enough is fine, one fewer is TOOBIG. */
            if (minlsh_pairs_count(pm) > 0) {
                minlsh_pairs *p2 = NULL;
                EXPECT_OK(minlsh_pairs_from_matrix(&p2, mx, shapes[si][0], shapes[si][1], mins[mi],
                                                   minlsh_pairs_count(pm), NULL));
                minlsh_pairs_free(p2);
                p2 = (minlsh_pairs *)(uintptr_t)1;
                EXPECT_ERR(minlsh_pairs_from_matrix(&p2, mx, shapes[si][0], shapes[si][1],
                                                    mins[mi], minlsh_pairs_count(pm) - 1, NULL),
                           MINLSH_E_TOOBIG);
                EXPECT(p2 == NULL);
            }
            minlsh_pairs_free(pi);
            minlsh_pairs_free(pm);
            minlsh_clusters_free(ci);
            minlsh_clusters_free(cm);
        }
        minlsh_sigmatrix_free(mx);
        minlsh_index_free(ix);
        model_free(&m);
    }
    EXPECT(total > 1000);
    /* Arguments. */
    {
        minlsh_sigmatrix *mx = NULL;
        minlsh_pairs *p = NULL;
        minlsh_clusters *c = NULL;
        minlsh_allocator bad = {NULL, NULL, NULL};
        EXPECT_OK(minlsh_sigmatrix_new(&mx, fam, 0, NULL));
        EXPECT_ERR(minlsh_pairs_from_matrix(NULL, mx, 8, 4, 0.0, 0, NULL), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_pairs_from_matrix(&p, NULL, 8, 4, 0.0, 0, NULL), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_pairs_from_matrix(&p, mx, 0, 4, 0.0, 0, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_pairs_from_matrix(&p, mx, 9, 4, 0.0, 0, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_pairs_from_matrix(&p, mx, 8, 4, 1.5, 0, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_pairs_from_matrix(&p, mx, 8, 4, 0.0, 0, &bad), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_clusters_from_matrix(&c, mx, 8, 0, 0.0, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_clusters_from_matrix(NULL, mx, 8, 4, 0.0, NULL), MINLSH_E_NULL);
        /* An empty matrix has no pairs and no clusters. */
        EXPECT_OK(minlsh_pairs_from_matrix(&p, mx, 8, 4, 0.0, 0, NULL));
        EXPECT_EQ_INT(minlsh_pairs_count(p), 0);
        EXPECT_OK(minlsh_clusters_from_matrix(&c, mx, 8, 4, 0.0, NULL));
        EXPECT_EQ_INT(minlsh_clusters_count(c), 0);
        minlsh_pairs_free(p);
        minlsh_clusters_free(c);
        minlsh_sigmatrix_free(mx);
    }
    minlsh_family_free(fam);
}

/* The matrix calls under allocation failure: NOMEM and nothing leaked,
 * then the right answer. */
static void test_matrix_nomem(void) {
    fa_state fs = {0, 0, 0};
    minlsh_allocator fa = {fa_alloc, fa_free, &fs};
    minlsh_family *fam = make_family(MK, 7);
    model m;
    minlsh_sigmatrix *mx;
    minlsh_pairs *ref = NULL, *p = NULL;
    minlsh_clusters *cref = NULL, *c = NULL;
    long nfail;
    int rc;
    model_init(&m, 300, MK, MB, MR);
    model_generate(&m, 5, 10, 3);
    mx = model_matrix(fam, &m);
    EXPECT_OK(minlsh_pairs_from_matrix(&ref, mx, MB, MR, 0.4, 0, NULL));
    EXPECT_OK(minlsh_clusters_from_matrix(&cref, mx, MB, MR, 0.4, NULL));
    for (nfail = 1;; nfail++) {
        fa_arm(&fs, nfail);
        rc = minlsh_pairs_from_matrix(&p, mx, MB, MR, 0.4, 0, &fa);
        fa_arm(&fs, 0);
        if (rc == 0) break;
        EXPECT(rc == MINLSH_E_NOMEM && p == NULL && fs.live == 0);
        if (rc != MINLSH_E_NOMEM) break;
    }
    EXPECT(nfail > 3 && same_pairs(ref, p));
    minlsh_pairs_free(p);
    for (nfail = 1;; nfail++) {
        fa_arm(&fs, nfail);
        rc = minlsh_clusters_from_matrix(&c, mx, MB, MR, 0.4, &fa);
        fa_arm(&fs, 0);
        if (rc == 0) break;
        EXPECT(rc == MINLSH_E_NOMEM && c == NULL && fs.live == 0);
        if (rc != MINLSH_E_NOMEM) break;
    }
    EXPECT(nfail > 3 && same_clusters(cref, c));
    minlsh_clusters_free(c);
    EXPECT_EQ_INT(fs.live, 0);
    minlsh_pairs_free(ref);
    minlsh_clusters_free(cref);
    minlsh_sigmatrix_free(mx);
    model_free(&m);
    minlsh_family_free(fam);
}

/* Hot buckets that must stay linear: 100,000 identical documents and
 * 100,000 empty ones, through the index and the matrix path. */
/* Group and chain-node numbers stay clear of the chain bit: past 2^31 - 1
 * distinct signatures an insert is refused and changes nothing, while a
 * copy of a stored signature (no new group) still goes in. The counters
 * are set by hand: 2^31 real signatures would take a terabyte. */
static void test_group_limit(void) {
    minlsh_family *fam = make_family(MK, 7);
    minlsh_index *ix = NULL;
    uint32_t a[MK], b[MK];
    uint64_t st = 99;
    size_t i, saved;
    for (i = 0; i < MK; i++) {
        a[i] = (uint32_t)tl_rand(&st);
        b[i] = (uint32_t)tl_rand(&st);
    }
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, MB, MR, NULL));
    EXPECT_OK(minlsh_index_insert(ix, 1, a, MK));
    saved = ix->n_groups;
    ix->n_groups = MINLSH__LSH_MAX_GROUPS;
    EXPECT_ERR(minlsh_index_insert(ix, 2, b, MK), MINLSH_E_TOOBIG);
    EXPECT_EQ_U64(minlsh_index_count(ix), 1);
    EXPECT_OK(minlsh_index_insert(ix, 3, a, MK)); /* a copy: no new group */
    ix->n_groups = saved;
    saved = ix->n_nodes;
    ix->n_nodes = MINLSH__LSH_MAX_GROUPS - 2 * (size_t)MB + 1;
    EXPECT_ERR(minlsh_index_insert(ix, 2, b, MK), MINLSH_E_TOOBIG);
    EXPECT_EQ_U64(minlsh_index_count(ix), 2);
    EXPECT_EQ_INT(minlsh_index_contains(ix, 2), 0);
    ix->n_nodes = saved;
    EXPECT_OK(minlsh_index_insert(ix, 2, b, MK));
    EXPECT_EQ_U64(minlsh_index_count(ix), 3);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
}

/* The memory budget of issue 4: at most 16 bytes per (document, band) for
 * the band structures (tables and chain nodes), whatever the sharing: all
 * buckets of one group, every bucket shared by two groups (copies that
 * differ only past the banded values), and buckets of eight. k = 128,
 * b = 9, r = 13 as in the bench; 24,000 documents. */
static void test_band_memory_budget(void) {
    const uint32_t K = 128, B = 9, R = 13;
    const size_t n = 24000;
    minlsh_family *fam = make_family(K, 3);
    uint32_t *sigs = (uint32_t *)malloc(n * K * sizeof *sigs);
    uint64_t *ids = (uint64_t *)malloc(n * sizeof *ids), st = 5;
    int share;
    EXPECT(sigs != NULL && ids != NULL);
    for (share = 1; share <= 8 && sigs != NULL && ids != NULL; share *= (share == 1 ? 2 : 4)) {
        minlsh_index *ix = NULL;
        minlsh__lsh_memory mem;
        size_t i, v;
        double per;
        for (i = 0; i < n; i++) {
            ids[i] = i + 1;
            if (i % (size_t)share == 0) {
                for (v = 0; v < K; v++) sigs[i * K + v] = (uint32_t)tl_rand(&st);
            } else { /* the base's banded values, a tail of its own */
                size_t base = i - i % (size_t)share;
                memcpy(sigs + i * K, sigs + base * K, K * sizeof *sigs);
                sigs[i * K + K - 1] ^= (uint32_t)(i % (size_t)share);
            }
        }
        EXPECT_OK(minlsh_index_new(&ix, fam, 0, B, R, NULL));
        EXPECT_OK(minlsh_index_insert_many(ix, ids, sigs, n, K, NULL));
        minlsh__lsh_index_memory(ix, &mem);
        per = (double)(mem.band_tables + mem.band_links) / (double)n / B;
        printf("  %zu groups per bucket: %.2f bytes per (document, band)\n", (size_t)share, per);
        EXPECT_MSG(per <= 16.0, "%.2f B per (document, band) with buckets of %d", per, share);
        if (share == 1) EXPECT(mem.band_links <= 1024); /* no chains: one small first chunk */
        minlsh_index_free(ix);
    }
    free(sigs);
    free(ids);
    minlsh_family_free(fam);
}

static void test_hot_linear(void) {
    const size_t N = 100000;
    minlsh_family *fam = make_family(64, 3);
    minlsh_index *ix = NULL;
    minlsh_sigmatrix *mx = NULL;
    minlsh_clusters *c = NULL;
    minlsh_pairs *p = NULL;
    uint32_t sig[64], empty[64];
    uint64_t st = 4, *ids = (uint64_t *)malloc(N * sizeof *ids);
    double t0, t_ix, t_cm, t_pe;
    size_t i, n;
    uint32_t done;
    for (i = 0; i < 64; i++) {
        sig[i] = (uint32_t)tl_rand(&st);
        empty[i] = MINLSH_EMPTY_VALUE;
    }
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 16, 4, NULL));
    EXPECT_OK(minlsh_sigmatrix_new(&mx, fam, 0, NULL));
    t0 = now_s();
    for (i = 0; i < N; i++) {
        EXPECT_OK(minlsh_index_insert(ix, i, sig, 64));
        EXPECT_OK(minlsh_index_insert(ix, N + i, empty, 64));
    }
    /* A bounded query of the hot signature: band 0 alone is over the limit. */
    EXPECT_OK(minlsh_index_query_limited(ix, sig, 64, 1000, ids, NULL, N, &n, &done));
    EXPECT(n == 0 && done == 0);
    EXPECT_OK(minlsh_index_query_limited(ix, sig, 64, N, ids, NULL, N, &n, &done));
    EXPECT(n == N && done == 1); /* band 1 would count them again */
    t_ix = now_s() - t0;
    for (i = 0; i < N; i++) {
        EXPECT_OK(minlsh_sigmatrix_append(mx, sig, 64, NULL));
        EXPECT_OK(minlsh_sigmatrix_append(mx, empty, 64, NULL));
    }
    t0 = now_s();
    EXPECT_OK(minlsh_clusters_from_matrix(&c, mx, 16, 4, 0.8, NULL));
    t_cm = now_s() - t0;
    EXPECT_EQ_INT(minlsh_clusters_count(c), 1);
    EXPECT_OK(minlsh_clusters_copy_members(c, 0, ids, N, &n));
    EXPECT(n == N && ids[0] == 0 && ids[N - 1] == 2 * (N - 1));
    minlsh_clusters_free(c);
    /* The pairs would be 5e9: refused up front, quickly, when bounded. */
    t0 = now_s();
    p = (minlsh_pairs *)(uintptr_t)1;
    EXPECT_ERR(minlsh_pairs_from_matrix(&p, mx, 16, 4, 0.0, 100000000, NULL), MINLSH_E_TOOBIG);
    t_pe = now_s() - t0;
    EXPECT(p == NULL);
    printf("  100,000 identical + 100,000 empty: index %.3f s, matrix clusters %.3f s, "
           "bounded pairs refused in %.3f s\n",
           t_ix, t_cm, t_pe);
    EXPECT(t_ix < 20 && t_cm < 10 && t_pe < 10);
    minlsh_index_free(ix);
    minlsh_sigmatrix_free(mx);
    minlsh_family_free(fam);
    free(ids);
}

int main(void) {
    RUN(test_band_keys);
    RUN(test_basic);
    RUN(test_ids);
    RUN(test_metadata);
    RUN(test_query_order_independent);
    RUN(test_pairs_and_clusters);
    RUN(test_clusters_from_edges);
    RUN(test_empty_signatures);
    RUN(test_churn);
    RUN(test_truncation_and_bitflips);
    RUN(test_save_load);
    RUN(test_nomem);
    RUN(test_hot_bucket);
    RUN(test_s_curve);
    RUN(test_band_key_kernels);
    RUN(test_sig_hash_kernels);
    RUN(test_equal_count_kernels);
    RUN(test_ordered_table);
    RUN(test_many);
    RUN(test_query_limited);
    RUN(test_matrix_equals_index);
    RUN(test_matrix_nomem);
    RUN(test_hot_linear);
    RUN(test_group_limit);
    RUN(test_band_memory_budget);
    return TL_SUMMARY("test_index");
}
