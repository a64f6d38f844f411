/*
 * minlsh_index_merge: shards built separately (here: from a random corpus
 * split 2 and 3 ways, contiguously and interleaved, through saved buffers as
 * if on other machines) merge into an index that answers every query, pair
 * and cluster call exactly like the index built in one piece, and saves to
 * the same bytes. Refusals (parameters, ids that exist or overflow, NULL,
 * dst == src) and running out of memory at every allocation leave dst
 * unchanged, byte for byte, and leak nothing.
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_index_query_limited */
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#define K 32
#define B 8
#define R 4
#define N 900
#define CONFIG UINT64_C(0x0123456789abcdef)
#define SEED 4242

/* ---- the corpus ------------------------------------------------------------ */

/* N signatures: families of near-duplicates (each band copied from the
 * family's base or one of a few shared variants, or noise), some exact
 * copies, and a few empty-set signatures. Document i has id i. */
static uint32_t corpus[N][K];

static void make_corpus(uint64_t seed) {
    uint64_t st = seed;
    uint32_t base[40][K], variant[B][3][R];
    size_t i, f, j, v;
    for (f = 0; f < 40; f++)
        for (v = 0; v < K; v++) base[f][v] = (uint32_t)tl_rand(&st);
    for (j = 0; j < B; j++)
        for (f = 0; f < 3; f++)
            for (v = 0; v < R; v++) variant[j][f][v] = (uint32_t)tl_rand(&st);
    for (i = 0; i < N; i++) {
        uint32_t *s = corpus[i];
        if (i % 97 == 5) {
            for (v = 0; v < K; v++) s[v] = MINLSH_EMPTY_VALUE;
            continue;
        }
        if (i % 13 == 7 && i > 20) { /* an exact copy of an earlier document */
            memcpy(s, corpus[i - 1 - (size_t)(tl_rand(&st) % 20)], sizeof corpus[i]);
            continue;
        }
        f = (size_t)(tl_rand(&st) % 40);
        for (j = 0; j < B; j++) {
            unsigned c = (unsigned)(tl_rand(&st) % 10);
            size_t w = (size_t)(tl_rand(&st) % 3);
            for (v = j * R; v < (j + 1) * R; v++) {
                if (c < 5) s[v] = base[f][v];
                else if (c < 7) s[v] = variant[j][w][v - j * R];
                else s[v] = (uint32_t)tl_rand(&st);
            }
        }
    }
}

static minlsh_family *family(uint32_t k, uint64_t seed) {
    minlsh_family *fam = NULL;
    EXPECT_OK(minlsh_family_new(&fam, k, seed, NULL));
    return fam;
}

/* An index of documents [lo, hi) whose id is (i - lo) + shift, or, with
 * stride > 1, of the documents i with i % stride == rest under id i. */
static minlsh_index *build(size_t lo, size_t hi, uint64_t shift, size_t stride,
                           size_t rest, const minlsh_allocator *alloc) {
    minlsh_family *fam = family(K, SEED);
    minlsh_index *ix = NULL;
    size_t i;
    EXPECT_OK(minlsh_index_new(&ix, fam, CONFIG, B, R, alloc));
    for (i = lo; i < hi && ix != NULL; i++) {
        if (stride > 1 && i % stride != rest) continue;
        EXPECT_OK(minlsh_index_insert(ix, stride > 1 ? i : i - lo + shift, corpus[i], K));
    }
    minlsh_family_free(fam);
    return ix;
}

/* The saved bytes of an index (malloc'ed; *len). */
static uint8_t *save(const minlsh_index *ix, size_t *len) {
    size_t n = 0;
    uint8_t *buf;
    EXPECT_ERR(minlsh_index_save_buffer(ix, NULL, 0, &n), MINLSH_E_BUFSIZE);
    buf = (uint8_t *)malloc(n + 1);
    EXPECT_OK(minlsh_index_save_buffer(ix, buf, n, &n));
    *len = n;
    return buf;
}

static int same_bytes(const minlsh_index *x, const minlsh_index *y) {
    size_t nx, ny;
    uint8_t *bx = save(x, &nx), *by = save(y, &ny);
    int same = nx == ny && memcmp(bx, by, nx) == 0;
    free(bx);
    free(by);
    return same;
}

/* A copy through the file format, as a shard arrives from another machine. */
static minlsh_index *ship(minlsh_index *ix) {
    size_t n;
    uint8_t *buf = save(ix, &n);
    minlsh_index *out = NULL;
    minlsh_family *fam = family(K, SEED);
    EXPECT_OK(minlsh_index_load_buffer(&out, buf, n, LOAD_OPTS(fam, CONFIG, NULL)));
    minlsh_family_free(fam);
    free(buf);
    minlsh_index_free(ix);
    return out;
}

/* ---- comparing two indexes through every read call -------------------------- */

static int same_query(const minlsh_index *x, const minlsh_index *y, const uint32_t *sig) {
    static uint64_t ix_[N + 1], iy[N + 1];
    static double sx[N + 1], sy[N + 1];
    size_t nx = 0, ny = 0;
    uint32_t bx = 0, by = 0;
    if (minlsh_index_query(x, sig, K, ix_, sx, N + 1, &nx) != 0) return 0;
    if (minlsh_index_query(y, sig, K, iy, sy, N + 1, &ny) != 0) return 0;
    if (nx != ny || memcmp(ix_, iy, nx * sizeof *ix_) != 0 ||
        memcmp(sx, sy, nx * sizeof *sx) != 0)
        return 0;
    if (minlsh_index_query_limited(x, sig, K, 40, ix_, sx, N + 1, &nx, &bx) != 0) return 0;
    if (minlsh_index_query_limited(y, sig, K, 40, iy, sy, N + 1, &ny, &by) != 0) return 0;
    return bx == by && nx == ny && memcmp(ix_, iy, nx * sizeof *ix_) == 0 &&
           memcmp(sx, sy, nx * sizeof *sx) == 0;
}

static int same_pairs(const minlsh_index *x, const minlsh_index *y, double t) {
    minlsh_pairs *px = NULL, *py = NULL;
    size_t i, n;
    int same = minlsh_pairs_from_index(&px, x, t, 0, NULL) == 0 && minlsh_pairs_from_index(&py, y, t, 0, NULL) == 0 &&
               minlsh_pairs_count(px) == minlsh_pairs_count(py);
    n = same ? minlsh_pairs_count(px) : 0;
    for (i = 0; i < n && same; i++) {
        uint64_t a1, b1, a2, b2;
        double s1, s2;
        same = minlsh_pairs_copy_pair(&a1, &b1, &s1, px, i) == 0 &&
               minlsh_pairs_copy_pair(&a2, &b2, &s2, py, i) == 0 && a1 == a2 && b1 == b2 &&
               memcmp(&s1, &s2, sizeof s1) == 0;
    }
    minlsh_pairs_free(px);
    minlsh_pairs_free(py);
    return same;
}

static int same_clusters(const minlsh_index *x, const minlsh_index *y, double t) {
    static uint64_t mx[N], my[N];
    minlsh_clusters *cx = NULL, *cy = NULL;
    size_t i, n, nx, ny;
    int same = minlsh_clusters_from_index(&cx, x, t, NULL) == 0 && minlsh_clusters_from_index(&cy, y, t, NULL) == 0 &&
               minlsh_clusters_count(cx) == minlsh_clusters_count(cy);
    n = same ? minlsh_clusters_count(cx) : 0;
    for (i = 0; i < n && same; i++)
        same = minlsh_clusters_copy_members(cx, i, mx, N, &nx) == 0 &&
               minlsh_clusters_copy_members(cy, i, my, N, &ny) == 0 && nx == ny &&
               memcmp(mx, my, nx * sizeof *mx) == 0;
    minlsh_clusters_free(cx);
    minlsh_clusters_free(cy);
    return same;
}

/* Everything a reader can ask, plus queries with signatures from outside. */
static void expect_same_answers(const minlsh_index *x, const minlsh_index *y,
                                const char *what) {
    size_t i, bad_q = 0;
    uint64_t st = 99;
    uint32_t q[K];
    EXPECT_EQ_U64(minlsh_index_count(x), minlsh_index_count(y));
    for (i = 0; i < N; i++) bad_q += !same_query(x, y, corpus[i]);
    for (i = 0; i < 200; i++) { /* a mutated document: partly known, partly new */
        size_t v, d = (size_t)(tl_rand(&st) % N);
        memcpy(q, corpus[d], sizeof q);
        for (v = 0; v < K; v++)
            if (tl_rand(&st) % 3 == 0) q[v] = (uint32_t)tl_rand(&st);
        bad_q += !same_query(x, y, q);
    }
    EXPECT_MSG(bad_q == 0, "%s: %zu queries differ", what, bad_q);
    EXPECT_MSG(same_pairs(x, y, 0.0), "%s: candidate pairs differ", what);
    EXPECT_MSG(same_pairs(x, y, 0.6), "%s: verified pairs differ", what);
    EXPECT_MSG(same_clusters(x, y, 0.0), "%s: clusters (0) differ", what);
    EXPECT_MSG(same_clusters(x, y, 0.6), "%s: clusters (0.6) differ", what);
}

/* ---- the tests ------------------------------------------------------------ */

/* Contiguous shards with ids 0..n_s-1 each, merged with running offsets:
 * the same ids as the whole, so the same bytes too. */
static void merge_contiguous(size_t parts, int into_first) {
    minlsh_index *whole = build(0, N, 0, 1, 0, NULL), *merged = NULL, *shard;
    minlsh_family *fam = family(K, SEED);
    size_t p, lo = 0;
    char what[64];
    snprintf(what, sizeof what, "%zu contiguous shards%s", parts,
             into_first ? " (into the first)" : "");
    if (!into_first) EXPECT_OK(minlsh_index_new(&merged, fam, CONFIG, B, R, NULL));
    for (p = 0; p < parts; p++) {
        size_t hi = p + 1 == parts ? N : N * (p + 1) / parts + 3 * p;
        shard = ship(build(lo, hi, 0, 1, 0, NULL));
        if (merged == NULL) {
            merged = shard; /* the first shard becomes dst */
        } else {
            EXPECT_OK(minlsh_index_merge(merged, shard, lo));
            minlsh_index_free(shard);
        }
        lo = hi;
    }
    expect_same_answers(whole, merged, what);
    EXPECT_MSG(same_bytes(whole, merged), "%s: saved bytes differ", what);
    minlsh_index_free(whole);
    minlsh_index_free(merged);
    minlsh_family_free(fam);
}

static void test_two_shards(void) {
    merge_contiguous(2, 0);
    merge_contiguous(2, 1);
}

static void test_three_shards(void) {
    merge_contiguous(3, 0);
    merge_contiguous(3, 1);
}

/* Shards that keep the global ids (document i in shard i % 3), offset 0:
 * ids interleave between shards. */
static void test_interleaved_shards(void) {
    minlsh_index *whole = build(0, N, 0, 1, 0, NULL), *merged = NULL;
    minlsh_family *fam = family(K, SEED);
    size_t p;
    EXPECT_OK(minlsh_index_new(&merged, fam, CONFIG, B, R, NULL));
    for (p = 3; p-- > 0;) { /* in reverse order: the order of merges is irrelevant */
        minlsh_index *shard = ship(build(0, N, 0, 3, p, NULL));
        EXPECT_OK(minlsh_index_merge(merged, shard, 0));
        minlsh_index_free(shard);
    }
    expect_same_answers(whole, merged, "interleaved shards");
    EXPECT(same_bytes(whole, merged));
    minlsh_index_free(whole);
    minlsh_index_free(merged);
    minlsh_family_free(fam);
}

/* Shifted ids: the answers are the whole's with every id shifted. */
static void test_offset(void) {
    const uint64_t off = UINT64_C(1) << 40;
    minlsh_index *shifted = build(0, N, off, 1, 0, NULL), *src = build(0, N, 0, 1, 0, NULL);
    minlsh_index *dst = NULL;
    minlsh_family *fam = family(K, SEED);
    uint64_t ids[4];
    size_t n = 0;
    EXPECT_OK(minlsh_index_new(&dst, fam, CONFIG, B, R, NULL));
    EXPECT_OK(minlsh_index_merge(dst, src, off));
    expect_same_answers(shifted, dst, "offset 2^40");
    EXPECT(same_bytes(shifted, dst));
    EXPECT_EQ_INT(minlsh_index_contains(dst, off), 1);
    EXPECT_EQ_INT(minlsh_index_contains(dst, 0), 0);
    /* the largest offset that fits: the last id lands on 2^64 - 1 */
    minlsh_index_free(dst);
    dst = NULL;
    EXPECT_OK(minlsh_index_new(&dst, fam, CONFIG, B, R, NULL));
    EXPECT_OK(minlsh_index_merge(dst, src, UINT64_MAX - (N - 1)));
    EXPECT_EQ_U64(minlsh_index_count(dst), N);
    EXPECT_EQ_INT(minlsh_index_contains(dst, UINT64_MAX), 1);
    EXPECT_ERR(minlsh_index_copy_ids(dst, ids, 4, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, N);
    minlsh_index_free(dst);
    minlsh_index_free(shifted);
    minlsh_index_free(src);
    minlsh_family_free(fam);
}

/* Metadata: dst keeps its own; src's is not merged. Empty src: nothing. */
static void test_metadata_and_empty(void) {
    minlsh_index *dst = build(0, 100, 0, 1, 0, NULL), *src = build(0, 50, 0, 1, 0, NULL);
    minlsh_index *empty = build(0, 0, 0, 1, 0, NULL);
    uint8_t *before;
    size_t n_before, n = 0, after_len;
    char meta[16];
    EXPECT_OK(minlsh_index_set_metadata(dst, "dst", 3));
    EXPECT_OK(minlsh_index_set_metadata(src, "source", 6));
    before = save(dst, &n_before);
    EXPECT_OK(minlsh_index_merge(dst, empty, 12345));
    {
        uint8_t *after = save(dst, &after_len);
        EXPECT(after_len == n_before && memcmp(before, after, n_before) == 0);
        free(after);
    }
    EXPECT_OK(minlsh_index_merge(dst, src, 100));
    EXPECT_EQ_U64(minlsh_index_count(dst), 150);
    EXPECT_OK(minlsh_index_copy_metadata(dst, meta, sizeof meta, &n));
    EXPECT(n == 3 && memcmp(meta, "dst", 3) == 0);
    EXPECT_EQ_U64(minlsh_index_count(src), 50); /* src is only read */
    free(before);
    minlsh_index_free(dst);
    minlsh_index_free(src);
    minlsh_index_free(empty);
}

/* A refused merge: the error, and dst byte-identical and answering alike. */
static void expect_refused(minlsh_index *dst, const minlsh_index *src, uint64_t off,
                           int code, const char *what) {
    size_t n0, n1;
    uint8_t *b0 = save(dst, &n0), *b1;
    uint64_t count = minlsh_index_count(dst);
    int rc = minlsh_index_merge(dst, src, off);
    EXPECT_MSG(rc == code, "%s: got %s, expected %s", what, minlsh_error_name(rc),
               minlsh_error_name(code));
    b1 = save(dst, &n1);
    EXPECT_MSG(n0 == n1 && memcmp(b0, b1, n0) == 0, "%s: dst changed", what);
    EXPECT_EQ_U64(minlsh_index_count(dst), count);
    free(b0);
    free(b1);
}

static void test_mismatch(void) {
    minlsh_index *dst = build(0, 200, 0, 1, 0, NULL), *src;
    struct {
        uint32_t k, b, r;
        uint64_t seed, config;
        const char *what;
    } cases[] = {
        {K + 1, B, R, SEED, CONFIG, "k"},
        {K, B, R, SEED + 1, CONFIG, "seed"},
        {K, B, R, SEED, CONFIG ^ 1, "config id"},
        {K, B - 1, R, SEED, CONFIG, "bands"},
        {K, B, R - 1, SEED, CONFIG, "rows"},
        {K, 4, 8, SEED, CONFIG, "bands and rows with the same product"},
    };
    size_t c, i;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        minlsh_family *fam = family(cases[c].k, cases[c].seed);
        uint32_t sig[K + 1];
        src = NULL;
        EXPECT_OK(minlsh_index_new(&src, fam, cases[c].config, cases[c].b, cases[c].r, NULL));
        for (i = 0; i < 20; i++) {
            memcpy(sig, corpus[300 + i], sizeof corpus[i]);
            sig[K] = 7;
            EXPECT_OK(minlsh_index_insert(src, 1000 + i, sig, cases[c].k));
        }
        expect_refused(dst, src, 0, MINLSH_E_MISMATCH, cases[c].what);
        minlsh_index_free(src);
        minlsh_family_free(fam);
    }
    minlsh_index_free(dst);
}

static void test_exists_overflow_args(void) {
    minlsh_index *dst = build(0, 300, 0, 1, 0, NULL);           /* ids 0..299 */
    minlsh_index *src = build(300, 600, 1000, 1, 0, NULL);      /* ids 1000..1299 */
    minlsh_index *big = NULL;
    minlsh_family *fam = family(K, SEED);
    EXPECT_OK(minlsh_index_insert(dst, 1304, corpus[5], K));
    /* With offset 5 only the last id collides: every check must come before
     * the first insert. */
    expect_refused(dst, src, 5, MINLSH_E_EXISTS, "last id exists");
    expect_refused(dst, src, 304, MINLSH_E_EXISTS, "first id exists");
    EXPECT_OK(minlsh_index_new(&big, fam, CONFIG, B, R, NULL));
    EXPECT_OK(minlsh_index_insert(big, 5000, corpus[1], K));
    EXPECT_OK(minlsh_index_insert(big, UINT64_MAX - 3, corpus[2], K));
    expect_refused(dst, big, 4, MINLSH_E_TOOBIG, "id + offset overflows");
    expect_refused(dst, big, UINT64_MAX, MINLSH_E_TOOBIG, "offset 2^64 - 1");
    EXPECT_OK(minlsh_index_merge(dst, big, 3)); /* UINT64_MAX exactly: fine */
    EXPECT_EQ_INT(minlsh_index_contains(dst, UINT64_MAX), 1);
    EXPECT_EQ_INT(minlsh_index_contains(dst, 5003), 1);
    EXPECT_ERR(minlsh_index_merge(NULL, src, 0), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_merge(dst, NULL, 0), MINLSH_E_NULL);
    expect_refused(dst, dst, 1000, MINLSH_E_PARAM, "dst == src");
    minlsh_index_free(dst);
    minlsh_index_free(src);
    minlsh_index_free(big);
    minlsh_family_free(fam);
}

/* Allocation failure at every allocation of dst's allocator, into a dst that
 * already holds documents: MINLSH_E_NOMEM, dst unchanged (bytes and
 * answers), nothing leaked; then the merge that succeeds is right. */
static void test_nomem(void) {
    testalloc fa;
    minlsh_allocator al = ta_allocator(&fa);
    minlsh_index *src = ship(build(0, 400, 0, 1, 0, NULL));
    minlsh_index *want = build(0, 600, 0, 1, 0, NULL);
    long fail_at, failures = 0;
    int done = 0, bad_unchanged = 0, bad_code = 0;
    for (fail_at = 1; !done && fail_at < 200000; fail_at++) {
        long blocks0 = ta_blocks(&fa); /* a leak is reported once, not again later */
        minlsh_index *dst = build(400, 600, 400, 1, 0, &al); /* ids 400..599 */
        size_t n0, n1;
        uint8_t *b0, *b1;
        int rc;
        b0 = save(dst, &n0);
        ta_fail_from(&fa, fail_at);
        rc = minlsh_index_merge(dst, src, 0);
        ta_fail_from(&fa, 0);
        if (rc == 0) {
            done = 1;
            expect_same_answers(want, dst, "after the failures");
            EXPECT(same_bytes(want, dst));
        } else {
            failures++;
            bad_code += rc != MINLSH_E_NOMEM;
            b1 = save(dst, &n1);
            bad_unchanged += !(n0 == n1 && memcmp(b0, b1, n0) == 0) ||
                             minlsh_index_count(dst) != 200;
            free(b1);
            if (fail_at % 17 == 1) { /* the answers too, now and then */
                minlsh_index *cmp = build(400, 600, 400, 1, 0, NULL);
                expect_same_answers(cmp, dst, "after a failed merge");
                minlsh_index_free(cmp);
            }
        }
        free(b0);
        minlsh_index_free(dst);
        EXPECT_MSG(ta_blocks(&fa) == blocks0, "fail at %ld: %ld blocks leaked", fail_at,
                   ta_blocks(&fa) - blocks0);
    }
    EXPECT(done);
    EXPECT(failures > 0);
    EXPECT_MSG(bad_code == 0, "%d failed merges returned another error than NOMEM", bad_code);
    EXPECT_MSG(bad_unchanged == 0, "%d failed merges changed dst", bad_unchanged);
    printf("  %ld allocation failures injected, each refused cleanly\n", failures);
    minlsh_index_free(src);
    minlsh_index_free(want);
}

int main(void) {
    make_corpus(20260101);
    RUN(test_two_shards);
    RUN(test_three_shards);
    RUN(test_interleaved_shards);
    RUN(test_offset);
    RUN(test_metadata_and_empty);
    RUN(test_mismatch);
    RUN(test_exists_overflow_args);
    RUN(test_nomem);
    return TL_SUMMARY("test_merge");
}
