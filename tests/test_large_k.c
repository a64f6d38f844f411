/* Signatures longer than the per-call stack scratch (MINLSH__K_STACK = 1024
 * values): k = 9,000 (20 bands of 450 rows, the setup of Lee et al. 2022)
 * and k = MINLSH_FAMILY_K_MAX. Signing (classic and OPH, each path), the
 * index (insert, query, insert-if-novel, remove, merge, save and load, the
 * mapped file and its journal), the matrix (save and load) and the dedup
 * engine give the same answers as below the limit, and their heap scratch
 * fails cleanly. */
#define MINLSH_EXPERIMENTAL_API 1
#include "testalloc.h"
#include "testlib.h"

#include <minlsh.h>

#include <stdlib.h>
#include <string.h>

#define BIG_K 9000u

/* n distinct hashes; the first `shared` are the same for every seed. */
static void make_set(uint64_t *h, size_t n, size_t shared, uint64_t seed) {
    uint64_t s = 7, t = seed;
    size_t i;
    for (i = 0; i < n; i++) h[i] = i < shared ? tl_rand(&s) : tl_rand(&t);
}

static uint32_t *sign_new(const minlsh_family *f, const uint64_t *h, size_t n) {
    uint32_t k = minlsh_family_k(f), *sig = (uint32_t *)malloc((size_t)k * sizeof *sig);
    EXPECT(sig != NULL);
    if (sig != NULL) EXPECT_OK(minlsh_family_sign(f, h, n, sig, k, NULL));
    return sig;
}

static void test_limit_and_twin(void) {
    minlsh_family *f = NULL;
    EXPECT_EQ_U64(MINLSH_FAMILY_K_MAX, 16384);
    EXPECT_EQ_U64(minlsh_family_k_max(), MINLSH_FAMILY_K_MAX);
    EXPECT_OK(minlsh_family_new(&f, MINLSH_FAMILY_K_MAX, 1, NULL));
    minlsh_family_free(f);
    f = NULL;
    EXPECT_ERR(minlsh_family_new(&f, MINLSH_FAMILY_K_MAX + 1, 1, NULL), MINLSH_E_PARAM);
    EXPECT(f == NULL);
}

/* Value i of a classic signature depends on (seed, i) only: the first 1024
 * values at k = 9,000 (heap scratch) are the signature at k = 1024 (stack). */
static void test_classic_prefix(void) {
    static uint64_t h[3000];
    minlsh_family *big = NULL, *small = NULL;
    uint32_t *a, *b;
    make_set(h, 3000, 0, 3);
    EXPECT_OK(minlsh_family_new(&big, BIG_K, 42, NULL));
    EXPECT_OK(minlsh_family_new(&small, 1024, 42, NULL));
    a = sign_new(big, h, 3000);
    b = sign_new(small, h, 3000);
    if (a != NULL && b != NULL) EXPECT(memcmp(a, b, 1024 * sizeof *a) == 0);
    free(a);
    free(b);
    minlsh_family_free(big);
    minlsh_family_free(small);
}

/* Every signing path (hashes, text, tokens, delimited) gives the same bits
 * at k = 9,000 for both schemes, and the estimate of two sets of Jaccard
 * 1/3 is within 4 standard errors (sqrt(J(1-J)/k) = 0.005). */
static void test_sign_paths(void) {
    static const uint32_t schemes[] = {MINLSH_SCHEME_CLASSIC, MINLSH_SCHEME_OPH};
    static const char text[] = "alpha beta gamma delta epsilon zeta eta theta";
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    minlsh_shingleset *set = NULL;
    static uint64_t x[4000], y[4000];
    size_t s;
    so.k = 2;
    EXPECT_OK(minlsh_shingler_new(&sh, &so, NULL));
    EXPECT_OK(minlsh_shingleset_new(&set, NULL));
    make_set(x, 4000, 2000, 11);
    make_set(y, 4000, 2000, 12); /* |x & y| = 2000, |x | y| = 6000 */
    for (s = 0; s < 2; s++) {
        minlsh_family *f = NULL;
        uint32_t *a, *b, *t = (uint32_t *)malloc(BIG_K * sizeof *t);
        uint8_t fp[MINLSH_FINGERPRINT_BYTES];
        double est = 0.0;
        EXPECT_OK(minlsh_family_new_scheme(&f, BIG_K, 5, schemes[s], NULL));
        a = sign_new(f, x, 4000);
        b = sign_new(f, y, 4000);
        EXPECT_OK(minlsh_signature_estimate(&est, a, b, BIG_K));
        EXPECT_NEAR(est, 1.0 / 3.0, 4 * 0.005);
        /* The text paths against the hashes of the same text. */
        EXPECT_OK(minlsh_shingler_hash(sh, text, sizeof text - 1, set, fp));
        free(a);
        a = sign_new(f, minlsh_shingleset_view_hashes(set), minlsh_shingleset_count(set));
        EXPECT_OK(minlsh_family_sign_text(f, sh, text, sizeof text - 1, t, BIG_K, NULL));
        if (a != NULL) EXPECT(memcmp(a, t, BIG_K * sizeof *t) == 0);
        {
            /* Tokens: "a","b" and "a","b" joined by a separator. */
            static const size_t offsets[] = {0, 1, 2}, docs[] = {0, 2};
            uint32_t *u = (uint32_t *)malloc(BIG_K * sizeof *u);
            EXPECT_OK(
                minlsh_family_sign_tokens(f, NULL, "ab", offsets, 2, docs, 1, t, BIG_K, NULL));
            EXPECT_OK(
                minlsh_family_sign_delimited(f, NULL, "a\nb", 3, '\n', docs, 1, u, BIG_K, NULL));
            EXPECT(memcmp(t, u, BIG_K * sizeof *t) == 0);
            free(u);
        }
        free(a);
        free(b);
        free(t);
        minlsh_family_free(f);
    }
    minlsh_shingleset_free(set);
    minlsh_shingler_free(sh);
}

/* An OPH family's heap work: a failed allocation is MINLSH_E_NOMEM with the
 * caller's buffer as it was, and the batch call writes nothing. */
static void test_oph_nomem(void) {
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_family *f = NULL;
    static uint64_t h[100];
    static uint32_t sig[BIG_K];
    static const size_t offsets[] = {0, 1}, docs[] = {0, 1};
    size_t i;
    make_set(h, 100, 0, 1);
    EXPECT_OK(minlsh_family_new_scheme(&f, BIG_K, 5, MINLSH_SCHEME_OPH, &al));
    for (i = 0; i < BIG_K; i++) sig[i] = 7;
    ta_fail_nth(&ta, 1);
    EXPECT_ERR(minlsh_family_sign(f, h, 100, sig, BIG_K, NULL), MINLSH_E_NOMEM);
    ta_fail_nth(&ta, 1);
    EXPECT_ERR(minlsh_family_sign_tokens(f, NULL, "a", offsets, 1, docs, 1, sig, BIG_K, NULL),
               MINLSH_E_NOMEM);
    for (i = 0; i < BIG_K && sig[i] == 7; i++) {
    }
    EXPECT_EQ_U64(i, BIG_K);
    ta_fail_nth(&ta, 0);
    EXPECT_OK(minlsh_family_sign(f, h, 100, sig, BIG_K, NULL));
    minlsh_family_free(f);
    EXPECT_EQ_INT(ta_blocks(&ta), 0);
}

/* Documents 0..DOCS-1: document d and d^1 share 1000 of their 1001
 * hashes (J = 1000/1002, a candidate pair even under 20 bands of 450 rows:
 * 1 - (1 - J^450)^20 > 0.9999), and nothing with the others. */
#define DOCS 12
#define SET 1001
#define PAIR_J (1000.0 / 1002.0)
static uint32_t *pair_sigs(const minlsh_family *f) {
    static uint64_t h[SET];
    uint32_t k = minlsh_family_k(f), *sigs = (uint32_t *)malloc((size_t)DOCS * k * sizeof *sigs);
    size_t d;
    EXPECT(sigs != NULL);
    for (d = 0; d < DOCS && sigs != NULL; d++) {
        uint64_t s = 1000 + d / 2, t = 5000 + d;
        size_t i;
        for (i = 0; i < SET; i++) h[i] = i < SET - 1 ? tl_rand(&s) : tl_rand(&t);
        EXPECT_OK(minlsh_family_sign(f, h, SET, sigs + d * k, k, NULL));
    }
    return sigs;
}

/* Each document's candidates are itself and its pair. */
static void check_queries(const minlsh_index *ix, const uint32_t *sigs, uint32_t k,
                          const char *what) {
    size_t d;
    for (d = 0; d < DOCS; d++) {
        uint64_t ids[DOCS];
        size_t n = 0;
        EXPECT_OK(minlsh_index_query(ix, sigs + d * k, k, ids, NULL, DOCS, &n));
        EXPECT_MSG(n == 2 && ids[0] == (d & ~(size_t)1) && ids[1] == (d | 1),
                   "%s: document %zu: %zu candidates", what, d, n);
    }
}

static void check_same_signatures(const minlsh_index *a, const minlsh_index *b, uint32_t k) {
    uint32_t *x = (uint32_t *)malloc((size_t)k * sizeof *x),
             *y = (uint32_t *)malloc((size_t)k * sizeof *y);
    uint64_t id;
    for (id = 0; id < DOCS; id++) {
        EXPECT_OK(minlsh_index_copy_signature(a, id, x, k, NULL));
        EXPECT_OK(minlsh_index_copy_signature(b, id, y, k, NULL));
        EXPECT(memcmp(x, y, (size_t)k * sizeof *x) == 0);
    }
    free(x);
    free(y);
}

/* (b, r) = (20, 450) at k = 9,000, and (9000, 1): more bands than the
 * stack holds keys for. */
static void test_index_roundtrip(void) {
    static const uint32_t shapes[][2] = {{20, 450}, {BIG_K, 1}};
    minlsh_family *f = NULL;
    uint32_t *sigs;
    size_t s;
    EXPECT_OK(minlsh_family_new(&f, BIG_K, 9, NULL));
    sigs = pair_sigs(f);
    for (s = 0; s < 2 && sigs != NULL; s++) {
        minlsh_index *ix = NULL, *back = NULL, *mapped = NULL, *merged = NULL;
        minlsh_novel_options no = MINLSH_NOVEL_OPTIONS_INIT;
        minlsh_novel_result nr;
        minlsh_journal *j = NULL;
        char path[4096], mpath[4096], jpath[4096]; /* tl_tmp_path's buffer is reused */
        uint64_t id;
        snprintf(path, sizeof path, "%s", tl_tmp_path("large_k.idx"));
        snprintf(mpath, sizeof mpath, "%s", tl_tmp_path("large_k.map"));
        snprintf(jpath, sizeof jpath, "%s", tl_tmp_path("large_k.journal"));
        EXPECT_OK(minlsh_index_new(&ix, f, 0, shapes[s][0], shapes[s][1], NULL));
        for (id = 0; id < DOCS; id++)
            EXPECT_OK(minlsh_index_insert(ix, id, sigs + id * BIG_K, BIG_K));
        check_queries(ix, sigs, BIG_K, "in memory");
        /* Insert-if-novel: a copy of document 0 is not novel, and not added. */
        no.threshold = 0.5;
        EXPECT_OK(minlsh_index_insert_novel(&nr, ix, 100, sigs, BIG_K, &no));
        EXPECT(!nr.novel && nr.has_match && nr.match == 0);
        EXPECT_EQ_INT(minlsh_index_contains(ix, 100), 0);
        EXPECT_OK(minlsh_index_save(ix, path));
        EXPECT_OK(minlsh_index_load(&back, path, NULL));
        EXPECT_EQ_U64(minlsh_index_k(back), BIG_K);
        check_queries(back, sigs, BIG_K, "loaded");
        check_same_signatures(ix, back, BIG_K);
        /* Merge, remove: document 1 gone, 0 alone. */
        EXPECT_OK(minlsh_index_new(&merged, f, 0, shapes[s][0], shapes[s][1], NULL));
        EXPECT_OK(minlsh_index_merge(merged, back, 0));
        check_same_signatures(ix, merged, BIG_K);
        EXPECT_OK(minlsh_index_remove(merged, 1));
        {
            uint64_t ids[DOCS];
            size_t n = 0;
            EXPECT_OK(minlsh_index_query(merged, sigs, BIG_K, ids, NULL, DOCS, &n));
            EXPECT(n == 1 && ids[0] == 0);
        }
        /* The mapped file, a document added to it (its delta) through a
         * journal, and the journal replayed into the file mapped again. */
        EXPECT_OK(minlsh_index_save_mapped(ix, mpath));
        EXPECT_OK(minlsh_index_map(&mapped, mpath, NULL));
        check_queries(mapped, sigs, BIG_K, "mapped");
        check_same_signatures(ix, mapped, BIG_K);
        remove(jpath);
        EXPECT_OK(minlsh_journal_open(&j, mapped, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
        EXPECT_OK(minlsh_index_insert(mapped, 200, sigs + 2 * BIG_K, BIG_K));
        EXPECT_OK(
            minlsh_journal_append(j, MINLSH_JOURNAL_INSERT, 200, sigs + 2 * BIG_K, BIG_K, NULL, 0));
        EXPECT_OK(minlsh_journal_sync(j));
        minlsh_journal_free(j);
        j = NULL;
        minlsh_index_free(mapped);
        mapped = NULL;
        EXPECT_OK(minlsh_index_map(&mapped, mpath, NULL));
        EXPECT_OK(minlsh_journal_open(&j, mapped, jpath, MINLSH_JOURNAL_READ, NULL, NULL));
        {
            uint64_t ids[DOCS];
            size_t n = 0;
            EXPECT_EQ_INT(minlsh_index_contains(mapped, 200), 1);
            EXPECT_OK(minlsh_index_query(mapped, sigs + 2 * BIG_K, BIG_K, ids, NULL, DOCS, &n));
            EXPECT(n == 3 && ids[0] == 2 && ids[1] == 3 && ids[2] == 200);
        }
        minlsh_journal_free(j);
        minlsh_index_free(ix);
        minlsh_index_free(back);
        minlsh_index_free(mapped);
        minlsh_index_free(merged);
        remove(path);
        remove(mpath);
        remove(jpath);
    }
    free(sigs);
    minlsh_family_free(f);
}

/* With 9,000 bands the keys are on the heap: a failed allocation leaves
 * the index unchanged, and removal (which a merge's rollback needs) never
 * allocates. */
static void test_index_nomem(void) {
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_family *f = NULL;
    minlsh_index *ix = NULL;
    uint32_t *sigs;
    long before;
    EXPECT_OK(minlsh_family_new(&f, BIG_K, 9, NULL));
    sigs = pair_sigs(f);
    EXPECT_OK(minlsh_index_new(&ix, f, 0, BIG_K, 1, &al));
    if (sigs != NULL && ix != NULL) {
        EXPECT_OK(minlsh_index_insert(ix, 0, sigs, BIG_K));
        ta_fail_from(&ta, 1);
        EXPECT_ERR(minlsh_index_insert(ix, 1, sigs + BIG_K, BIG_K), MINLSH_E_NOMEM);
        EXPECT_EQ_U64(minlsh_index_count(ix), 1);
        EXPECT_ERR(minlsh_index_query(ix, sigs, BIG_K, NULL, NULL, 0, NULL), MINLSH_E_NOMEM);
        before = ta_calls(&ta);
        EXPECT_OK(minlsh_index_remove(ix, 0));
        EXPECT_EQ_INT(ta_calls(&ta), before);
        EXPECT_EQ_U64(minlsh_index_count(ix), 0);
        ta_fail_from(&ta, 0);
    }
    minlsh_index_free(ix);
    free(sigs);
    minlsh_family_free(f);
    EXPECT_EQ_INT(ta_blocks(&ta), 0);
}

static void test_matrix_roundtrip(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m = NULL, *back = NULL;
    const char *path = tl_tmp_path("large_k.sigm");
    uint32_t *sigs, *col = (uint32_t *)malloc(BIG_K * sizeof *col);
    double a = 0.0, b = 0.0;
    uint64_t d;
    EXPECT_OK(minlsh_family_new(&f, BIG_K, 13, NULL));
    sigs = pair_sigs(f);
    EXPECT_OK(minlsh_sigmatrix_new(&m, f, 77, NULL));
    for (d = 0; d < DOCS && sigs != NULL; d++)
        EXPECT_OK(minlsh_sigmatrix_append(m, sigs + d * BIG_K, BIG_K, NULL));
    EXPECT_OK(minlsh_sigmatrix_save(m, path));
    EXPECT_OK(minlsh_sigmatrix_load(&back, path, NULL));
    EXPECT_EQ_U64(minlsh_sigmatrix_k(back), BIG_K);
    EXPECT_EQ_U64(minlsh_sigmatrix_count(back), DOCS);
    for (d = 0; d < DOCS && sigs != NULL; d++) {
        EXPECT_OK(minlsh_sigmatrix_copy_column(back, d, col, BIG_K, NULL));
        EXPECT(memcmp(col, sigs + d * BIG_K, BIG_K * sizeof *col) == 0);
    }
    /* Within 4 standard errors, sqrt(J (1 - J) / k) = 0.00047. */
    EXPECT_OK(minlsh_sigmatrix_estimate(&a, m, 0, 1));
    EXPECT_OK(minlsh_sigmatrix_estimate(&b, back, 0, 1));
    EXPECT(a == b);
    EXPECT_NEAR(a, PAIR_J, 4 * 0.00047);
    minlsh_sigmatrix_free(m);
    minlsh_sigmatrix_free(back);
    remove(path);
    free(col);
    free(sigs);
    minlsh_family_free(f);
}

/* The engine at k = 9,000, signing the sets itself: each pair is one kept
 * and one dropped document. */
static void test_dedup(void) {
    minlsh_shingler *sh = NULL;
    minlsh_family *f = NULL;
    minlsh_dedup *dd = NULL;
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    minlsh_dedup_decision dec[DOCS];
    static uint64_t h[SET];
    size_t d, n = 0, kept = 0;
    double est = 0.0;
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, NULL));
    EXPECT_OK(minlsh_family_new(&f, BIG_K, 9, NULL));
    o.verify = MINLSH_VERIFY_SIGNATURE;
    o.threshold = 0.99;
    o.bands = 20;
    o.rows = 450;
    o.threads = 1;
    EXPECT_OK(minlsh_dedup_new(&dd, sh, f, &o, NULL));
    for (d = 0; d < DOCS && dd != NULL; d++) {
        uint64_t s = 1000 + d / 2, t = 5000 + d;
        uint8_t fp[MINLSH_FINGERPRINT_BYTES];
        size_t i;
        for (i = 0; i < SET; i++) h[i] = i < SET - 1 ? tl_rand(&s) : tl_rand(&t);
        for (i = 1; i < SET; i++) /* the engine takes sets in order */
            if (h[i] < h[i - 1]) {
                uint64_t x = h[i];
                size_t p = i;
                while (p > 0 && h[p - 1] > x) {
                    h[p] = h[p - 1];
                    p--;
                }
                h[p] = x;
            }
        memset(fp, 0, sizeof fp);
        fp[0] = (uint8_t)d;
        EXPECT_OK(minlsh_dedup_add_set(dd, h, SET, NULL, 0, fp, SET));
    }
    EXPECT_OK(minlsh_dedup_run(dd));
    EXPECT_OK(minlsh_dedup_copy_decisions(dd, 0, dec, DOCS, &n));
    EXPECT_EQ_U64(n, DOCS);
    for (d = 0; d < n; d++) kept += dec[d].kept;
    EXPECT_EQ_U64(kept, DOCS / 2);
    EXPECT_OK(minlsh_dedup_estimate(&est, dd, 0, 1));
    EXPECT_NEAR(est, PAIR_J, 4 * 0.00047);
    minlsh_dedup_free(dd);
    minlsh_family_free(f);
    minlsh_shingler_free(sh);
}

int main(void) {
    RUN(test_limit_and_twin);
    RUN(test_classic_prefix);
    RUN(test_sign_paths);
    RUN(test_oph_nomem);
    RUN(test_index_roundtrip);
    RUN(test_index_nomem);
    RUN(test_matrix_roundtrip);
    RUN(test_dedup);
    return TL_SUMMARY("large_k");
}
