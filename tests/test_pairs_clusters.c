/*
 * Pairs and clusters, from an index and from a matrix (the sort-based
 * path), checked against brute force (tests/lshmodel.h): pairs are the
 * candidates at or above an estimate, clusters the connected components of
 * the pairs (BFS); both paths give the same answers, whatever the insertion
 * order; clusters from an edge list; hot buckets stay linear; allocation
 * failure at every step of the matrix path.
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_index_query_limited */
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"
#include "lshmodel.h"

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
    testalloc fs;
    minlsh_allocator fa = ta_allocator(&fs);
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
        ta_fail_from(&fs, nfail);
        rc = minlsh_pairs_from_matrix(&p, mx, MB, MR, 0.4, 0, &fa);
        ta_fail_from(&fs, 0);
        if (rc == 0) break;
        EXPECT(rc == MINLSH_E_NOMEM && p == NULL && ta_blocks(&fs) == 0);
        if (rc != MINLSH_E_NOMEM) break;
    }
    EXPECT(nfail > 3 && same_pairs(ref, p));
    minlsh_pairs_free(p);
    for (nfail = 1;; nfail++) {
        ta_fail_from(&fs, nfail);
        rc = minlsh_clusters_from_matrix(&c, mx, MB, MR, 0.4, &fa);
        ta_fail_from(&fs, 0);
        if (rc == 0) break;
        EXPECT(rc == MINLSH_E_NOMEM && c == NULL && ta_blocks(&fs) == 0);
        if (rc != MINLSH_E_NOMEM) break;
    }
    EXPECT(nfail > 3 && same_clusters(cref, c));
    minlsh_clusters_free(c);
    EXPECT_EQ_INT(ta_blocks(&fs), 0);
    minlsh_pairs_free(ref);
    minlsh_clusters_free(cref);
    minlsh_sigmatrix_free(mx);
    model_free(&m);
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
    size_t i, n;
    uint32_t done;
    for (i = 0; i < 64; i++) {
        sig[i] = (uint32_t)tl_rand(&st);
        empty[i] = MINLSH_EMPTY_VALUE;
    }
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 16, 4, NULL));
    EXPECT_OK(minlsh_sigmatrix_new(&mx, fam, 0, NULL));
    for (i = 0; i < N; i++) {
        EXPECT_OK(minlsh_index_insert(ix, i, sig, 64));
        EXPECT_OK(minlsh_index_insert(ix, N + i, empty, 64));
    }
    /* A bounded query of the hot signature: band 0 alone is over the limit. */
    EXPECT_OK(minlsh_index_query_limited(ix, sig, 64, 1000, ids, NULL, N, &n, &done));
    EXPECT(n == 0 && done == 0);
    EXPECT_OK(minlsh_index_query_limited(ix, sig, 64, N, ids, NULL, N, &n, &done));
    EXPECT(n == N && done == 1); /* band 1 would count them again */
    for (i = 0; i < N; i++) {
        EXPECT_OK(minlsh_sigmatrix_append(mx, sig, 64, NULL));
        EXPECT_OK(minlsh_sigmatrix_append(mx, empty, 64, NULL));
    }
    EXPECT_OK(minlsh_clusters_from_matrix(&c, mx, 16, 4, 0.8, NULL));
    EXPECT_EQ_INT(minlsh_clusters_count(c), 1);
    EXPECT_OK(minlsh_clusters_copy_members(c, 0, ids, N, &n));
    EXPECT(n == N && ids[0] == 0 && ids[N - 1] == 2 * (N - 1));
    minlsh_clusters_free(c);
    /* The pairs would be 5e9: refused up front, quickly, when bounded. */
    p = (minlsh_pairs *)(uintptr_t)1;
    EXPECT_ERR(minlsh_pairs_from_matrix(&p, mx, 16, 4, 0.0, 100000000, NULL), MINLSH_E_TOOBIG);
    EXPECT(p == NULL);
    minlsh_index_free(ix);
    minlsh_sigmatrix_free(mx);
    minlsh_family_free(fam);
    free(ids);
}

int main(void) {
    RUN(test_pairs_and_clusters);
    RUN(test_clusters_from_edges);
    RUN(test_matrix_equals_index);
    RUN(test_matrix_nomem);
    RUN(test_hot_linear);
    return TL_SUMMARY("test_pairs_clusters");
}
