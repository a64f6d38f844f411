/*
 * The band index, checked against brute force written from the definitions
 * (tests/lshmodel.h: two documents are candidates iff they share
 * (j, band key j) for some band j): band keys against an independent
 * reference, inserts, removes and queries in any order, batches, bounded
 * queries, hot buckets, empty signatures, the S-curve measured with a real
 * MinHash family, save/load with every truncation and bit flip, the table
 * internals and memory budget, and allocation failure at every step.
 * Pairs and clusters are in test_pairs_clusters.c, the band-index kernels
 * in test_kernels.c.
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_index_query_limited, minlsh_index_copy_stats */
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"
#include "lshmodel.h"

#include "common/common.h" /* minlsh__sum64, to craft inconsistent files */
#include "lsh/lsh.h"       /* band-key implementations, table internals */

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
    double *sim = (double *)malloc(N * sizeof *sim);
    size_t i, n;
    for (i = 0; i < 128; i++) {
        sig[i] = (uint32_t)tl_rand(&st);
        other[i] = (uint32_t)tl_rand(&st);
    }
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 20, 5, NULL));
    for (i = 0; i < N; i++) EXPECT_OK(minlsh_index_insert(ix, (uint64_t)(N - i) * 3, sig, 128));
    EXPECT_OK(minlsh_index_insert(ix, 1, other, 128));
    EXPECT_OK(minlsh_index_query(ix, sig, 128, ids, sim, N, &n));
    EXPECT_EQ_INT(n, N);
    for (i = 0; i < n; i++)
        if (ids[i] != (uint64_t)(i + 1) * 3 || sim[i] != 1.0) {
            TL_FAIL("hot query result %zu", i);
            break;
        }
    EXPECT_OK(minlsh_clusters_from_index(&c, ix, 0.0, NULL));
    EXPECT_EQ_INT(minlsh_clusters_count(c), 1);
    EXPECT_OK(minlsh_clusters_copy_members(c, 0, ids, N, &n));
    EXPECT(n == N && ids[0] == 3 && ids[N - 1] == 3 * (uint64_t)N);
    minlsh_clusters_free(c);
    EXPECT_OK(minlsh_clusters_from_index(&c, ix, 0.8, NULL));
    EXPECT_EQ_INT(minlsh_clusters_count(c), 1);
    EXPECT_ERR(minlsh_clusters_copy_members(c, 0, NULL, 0, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, N);
    minlsh_clusters_free(c);
    /* Removing from the middle of a 100,000-member bucket is O(1). */
    for (i = 0; i < N; i += 2) EXPECT_OK(minlsh_index_remove(ix, (uint64_t)(i + 1) * 3));
    EXPECT_EQ_U64(minlsh_index_count(ix), N / 2 + 1);
    EXPECT_OK(minlsh_index_query(ix, sig, 128, ids, NULL, N, &n));
    EXPECT(n == N / 2 && ids[0] == 6);
    for (i = 0; i < N; i += 2) EXPECT_OK(minlsh_index_remove(ix, (uint64_t)(i + 2) * 3));
    EXPECT_EQ_U64(minlsh_index_count(ix), 1);
    /* All pairs of a smaller hot bucket: n(n-1)/2 exactly once each, though
     * every pair shares all 20 bands. (100,000 would be 5e9 pairs.) */
    for (i = 0; i < NP; i++) EXPECT_OK(minlsh_index_insert(ix, 1000 + i, sig, 128));
    EXPECT_OK(minlsh_pairs_from_index(&p, ix, 0.0, 0, NULL));
    EXPECT_EQ_INT(minlsh_pairs_count(p), NP * (NP - 1) / 2);
    {
        uint64_t a, b;
        EXPECT_OK(minlsh_pairs_copy_pair(&a, &b, NULL, p, 0));
        EXPECT(a == 1000 && b == 1001);
        EXPECT_OK(minlsh_pairs_copy_pair(&a, &b, NULL, p, NP * (NP - 1) / 2 - 1));
        EXPECT(a == 1000 + NP - 2 && b == 1000 + NP - 1);
    }
    minlsh_pairs_free(p);
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
    testalloc fs;
    minlsh_allocator fa = ta_allocator(&fs);
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
        ta_fail_from(&fs, nfail);
        rc = minlsh_index_new(&ix, fam, 77, MB, MR, &fa);
        ta_fail_from(&fs, 0);
        if (rc == 0) break;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT(ix == NULL && ta_blocks(&fs) == 0);
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
                ta_fail_from(&fs, nfail);
                rc = minlsh_index_insert(ix, m.id[n0], m.sig + n0 * MK, MK);
                ta_fail_from(&fs, 0);
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
    ta_fail_from(&fs, 1);
    EXPECT_OK(minlsh_index_remove(ix, m.id[5]));
    ta_fail_from(&fs, 0);
    m.live[5] = 0;
    EXPECT(check_queries(ix, &m));
    /* query with 300+ candidates */
    {
        uint64_t ids[400], want[400];
        size_t n = 0, nw = model_query(&m, 100, NULL, 0, want);
        EXPECT(nw > 256);
        for (nfail = 1;; nfail++) {
            long live = ta_blocks(&fs);
            ta_fail_from(&fs, nfail);
            rc = minlsh_index_query(ix, m.sig + 100 * MK, MK, ids, NULL, 400, &n);
            ta_fail_from(&fs, 0);
            EXPECT(ta_blocks(&fs) == live);
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
            long live = ta_blocks(&fs);
            ta_fail_from(&fs, nfail);
            rc = minlsh_pairs_from_index(&p, ix, 0.5, 0, NULL);
            ta_fail_from(&fs, 0);
            if (rc == 0) break;
            EXPECT(rc == MINLSH_E_NOMEM && p == NULL && ta_blocks(&fs) == live);
            if (rc != MINLSH_E_NOMEM) break;
        }
        EXPECT(nfail > 1 && pairs_equal(p, want, nw));
        minlsh_pairs_free(p);
        free(want);
        for (which = 0; which < 2; which++) {
            double ms = which ? 0.5 : 0.0;
            EXPECT_OK(minlsh_clusters_from_index(&c0, ix, ms, NULL)); /* reference, no failures */
            for (nfail = 1;; nfail++) {
                long live = ta_blocks(&fs);
                ta_fail_from(&fs, nfail);
                rc = minlsh_clusters_from_index(&c, ix, ms, NULL);
                ta_fail_from(&fs, 0);
                if (rc == 0) break;
                EXPECT(rc == MINLSH_E_NOMEM && c == NULL && ta_blocks(&fs) == live);
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
            ta_fail_from(&fs, nfail);
            rc = minlsh_clusters_from_edges(&c, ea, eb, 50, &fa);
            ta_fail_from(&fs, 0);
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
            ta_fail_from(&fs, nfail);
            rc = minlsh_index_save_buffer(ix, buf, len, &n);
            ta_fail_from(&fs, 0);
            if (rc == 0) EXPECT(memcmp(buf, bytes, len) == 0);
            free(buf);
            if (rc == 0) break;
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            if (rc != MINLSH_E_NOMEM) break;
        }
        remove(path);
        for (nfail = 1;; nfail++) {
            FILE *f;
            ta_fail_from(&fs, nfail);
            rc = minlsh_index_save(ix, path);
            ta_fail_from(&fs, 0);
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
            ta_fail_from(&fs, nfail);
            rc = minlsh_index_set_metadata(ix, "new meta", 8);
            ta_fail_from(&fs, 0);
            if (rc == 0) break;
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            EXPECT_OK(minlsh_index_copy_metadata(ix, meta, sizeof meta, &n));
            EXPECT_EQ_INT(n, 0); /* the old (empty) metadata is kept */
        }
        for (nfail = 1;; nfail++) {
            ta_fail_from(&fs, nfail);
            rc = minlsh_index_load_buffer(&b, bytes, len, LOAD_OPTS(fam, 77, &fa));
            ta_fail_from(&fs, 0);
            if (rc == 0) break;
            EXPECT(rc == MINLSH_E_NOMEM && b == NULL);
            if (rc != MINLSH_E_NOMEM) break;
        }
        EXPECT(nfail > 5 && b != NULL && check_queries(b, &m));
        minlsh_index_free(b);
        b = NULL;
        for (nfail = 1;; nfail++) {
            ta_fail_from(&fs, nfail);
            rc = minlsh_index_load(&b, path, LOAD_OPTS(fam, 77, &fa));
            ta_fail_from(&fs, 0);
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
    EXPECT_EQ_INT(ta_blocks(&fs), 0);
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

/* ---- batches, limits, table internals ------------------------------------- */

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

/* The memory budget of docs/lsh.md ("Memory per (document, band)"): at most 16 bytes for
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

/* Statistics against a count of our own: per band, the band keys of every
 * stored document (copies included, empty ones left out) sorted, runs of
 * equal keys being buckets. */
static void test_stats(void) {
    minlsh_family *fam = make_family(MK, 7);
    model m;
    minlsh_index *ix;
    minlsh_index_stats st;
    uint64_t *keys, *run_sig, hist[MINLSH_INDEX_HIST_CLASSES];
    size_t i, j, n_docs = 0, c;
    uint64_t buckets = 0, largest = 0, shared = 0, empty = 0, distinct = 0;
    model_init(&m, 600, MK, MB, MR);
    model_generate(&m, 51, 8, 6);
    model_finish(&m);
    ix = build(fam, &m, NULL, NULL);
    /* Copies of every fifth document: one signature, several documents. */
    for (i = 0; i < m.n; i += 5)
        EXPECT_OK(minlsh_index_insert(ix, m.id[i] ^ UINT64_C(0x8000000000000000),
                                      m.sig + i * MK, MK));
    EXPECT_ERR(minlsh_index_copy_stats(NULL, ix), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_copy_stats(&st, NULL), MINLSH_E_NULL);
    EXPECT_OK(minlsh_index_copy_stats(&st, ix));
    /* The expected numbers: (key, document number) per band. */
    keys = (uint64_t *)malloc(2 * m.n * sizeof *keys);
    run_sig = (uint64_t *)malloc(2 * m.n * sizeof *run_sig);
    memset(hist, 0, sizeof hist);
    for (i = 0; i < m.n; i++) {
        int copied = i % 5 == 0;
        if (m.empty[i]) empty += 1 + (uint64_t)copied;
    }
    for (j = 0; j < MB; j++) {
        n_docs = 0;
        for (i = 0; i < m.n; i++) {
            if (m.empty[i]) continue;
            keys[n_docs] = m.key[i * MB + j];
            run_sig[n_docs++] = i;
            if (i % 5 == 0) {
                keys[n_docs] = m.key[i * MB + j];
                run_sig[n_docs++] = i;
            }
        }
        /* Sort (key, doc) pairs by key with a simple insertion sort. */
        for (i = 1; i < n_docs; i++) {
            uint64_t k = keys[i], d = run_sig[i];
            size_t p = i;
            while (p > 0 && keys[p - 1] > k) {
                keys[p] = keys[p - 1];
                run_sig[p] = run_sig[p - 1];
                p--;
            }
            keys[p] = k;
            run_sig[p] = d;
        }
        for (i = 0; i < n_docs;) {
            size_t e = i + 1, q;
            int multi = 0;
            while (e < n_docs && keys[e] == keys[i]) e++;
            for (q = i + 1; q < e; q++)
                if (memcmp(m.sig + run_sig[q] * MK, m.sig + run_sig[i] * MK, MK * 4) != 0)
                    multi = 1;
            for (c = 0; c + 1 < MINLSH_INDEX_HIST_CLASSES && ((uint64_t)1 << c) < e - i; c++)
                continue;
            hist[c]++;
            buckets++;
            shared += (uint64_t)multi;
            if (e - i > largest) largest = e - i;
            i = e;
        }
    }
    for (i = 0; i < m.n; i++) {
        size_t q;
        int seen = 0;
        for (q = 0; q < i && !seen; q++) seen = memcmp(m.sig + q * MK, m.sig + i * MK, MK * 4) == 0;
        distinct += !seen;
    }
    EXPECT_EQ_U64(st.documents, minlsh_index_count(ix));
    EXPECT_EQ_U64(st.empty, empty);
    EXPECT_EQ_U64(st.signatures, distinct);
    EXPECT_EQ_U64(st.buckets, buckets);
    EXPECT_EQ_U64(st.largest_bucket, largest);
    EXPECT_EQ_U64(st.shared_buckets, shared);
    EXPECT(memcmp(st.hist, hist, sizeof hist) == 0);
    EXPECT(st.bands == MB && st.rows == MR);
    EXPECT(st.bytes > st.signature_bytes + st.band_bytes && st.signature_bytes >= distinct * MK * 4);
    EXPECT(largest > 2 && shared > 0 && hist[1] > 0); /* the data exercise the cases */
    /* After removing everything: nothing left in any bucket. */
    for (i = 0; i < m.n; i++) {
        EXPECT_OK(minlsh_index_remove(ix, m.id[i]));
        if (i % 5 == 0) EXPECT_OK(minlsh_index_remove(ix, m.id[i] ^ UINT64_C(0x8000000000000000)));
    }
    EXPECT_OK(minlsh_index_copy_stats(&st, ix));
    EXPECT(st.documents == 0 && st.buckets == 0 && st.signatures == 0 && st.empty == 0 &&
           st.largest_bucket == 0);
    free(keys);
    free(run_sig);
    minlsh_index_free(ix);
    model_free(&m);
    minlsh_family_free(fam);
}

int main(void) {
    RUN(test_band_keys);
    RUN(test_basic);
    RUN(test_ids);
    RUN(test_metadata);
    RUN(test_query_order_independent);
    RUN(test_empty_signatures);
    RUN(test_churn);
    RUN(test_truncation_and_bitflips);
    RUN(test_save_load);
    RUN(test_nomem);
    RUN(test_hot_bucket);
    RUN(test_s_curve);
    RUN(test_ordered_table);
    RUN(test_many);
    RUN(test_query_limited);
    RUN(test_group_limit);
    RUN(test_band_memory_budget);
    RUN(test_stats);
    return TL_SUMMARY("test_index");
}
