/*
 * The mapped index (minlsh_index_save_mapped, minlsh_index_map): a mapped
 * file answers every query, limited query, batch query, contains, copy of a
 * signature, of the ids and of the metadata exactly as the same index in
 * memory; the file's bytes depend only on the documents; version 2 loads
 * back to the same index; changes are refused; damage anywhere is found (at
 * open for the header, directory and block table, at the first read for a
 * block); version 1 files still open; allocation failures leak nothing.
 */
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#include <unistd.h>

#define K 64
#define B 16
#define R 4
#define N 3000

static uint64_t rng = 0x2545F4914F6CDD1Du;

static void random_sig(uint32_t *sig) {
    int i;
    for (i = 0; i < K; i++) sig[i] = (uint32_t)tl_rand(&rng);
}

/* An index with near-duplicate families, exact copies, empty signatures,
 * ids out of order and holes left by removals. sigs[i] is id ids[i]'s. */
static minlsh_index *build(const minlsh_allocator *al, uint64_t *ids, uint32_t *sigs) {
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    size_t i;
    int v;
    if (minlsh_family_new(&fam, K, 7, NULL) != 0) return NULL;
    if (minlsh_index_new(&ix, fam, 42, B, R, al) != 0) {
        minlsh_family_free(fam);
        return NULL;
    }
    minlsh_family_free(fam);
    for (i = 0; i < N; i++) {
        uint32_t *s = sigs + i * K;
        ids[i] = (tl_rand(&rng) >> 20) * 2 + 1;
        if (i % 97 == 5) {
            for (v = 0; v < K; v++) s[v] = UINT32_MAX; /* empty */
        } else if (i > 10 && i % 7 == 0) {
            memcpy(s, sigs + (i - 3) * K, K * sizeof *s); /* exact copy */
        } else if (i > 10 && i % 3 == 0) {
            memcpy(s, sigs + (i - 1) * K, K * sizeof *s); /* near copy */
            for (v = 0; v < K; v += 9) s[v] = (uint32_t)tl_rand(&rng);
        } else {
            random_sig(s);
        }
        if (minlsh_index_insert(ix, ids[i], s, K) != 0) ids[i] = 0; /* a repeated id */
    }
    for (i = 0; i < N; i += 11)
        if (ids[i] != 0 && minlsh_index_remove(ix, ids[i]) == 0) ids[i] = 0;
    (void)minlsh_index_set_metadata(ix, "some metadata", 13);
    return ix;
}

/* Both handles answer a limited query of sig alike under max_members lim:
 * ids, estimates, bands searched, and the size needed from a short buffer. */
static int same_limited(const minlsh_index *a, const minlsh_index *b, const uint32_t *sig,
                        uint64_t lim) {
    static uint64_t ia[N + 512], ib[N + 512];
    static double sa[N + 512], sb[N + 512];
    size_t na = 0, nb = 0, i;
    uint32_t da = 0, db = 0;
    int ra, rb;
    ra = minlsh_index_query_limited(a, sig, K, lim, ia, sa, N + 512, &na, &da);
    rb = minlsh_index_query_limited(b, sig, K, lim, ib, sb, N + 512, &nb, &db);
    if (ra != 0 || rb != 0 || na != nb || da != db) return 0;
    for (i = 0; i < na; i++)
        if (ia[i] != ib[i] || memcmp(&sa[i], &sb[i], sizeof sa[i]) != 0) return 0;
    if (na > 0) {
        size_t want = na;
        ra = minlsh_index_query_limited(a, sig, K, lim, ia, NULL, na - 1, &na, &da);
        rb = minlsh_index_query_limited(b, sig, K, lim, ib, NULL, nb - 1, &nb, &db);
        if (ra != MINLSH_E_BUFSIZE || rb != MINLSH_E_BUFSIZE || na != want || nb != want ||
            da != db)
            return 0;
    }
    return 1;
}

/* Both handles answer sig alike, for every call that reads (with limited,
 * the limited queries under a range of limits too). */
static int same_answers(const minlsh_index *a, const minlsh_index *b, const uint32_t *sig,
                        int limited) {
    uint64_t ia[N], ib[N], lim;
    double sa[N], sb[N];
    size_t na = 0, nb = 0, i;
    int ra, rb;
    ra = minlsh_index_query(a, sig, K, ia, sa, N, &na);
    rb = minlsh_index_query(b, sig, K, ib, sb, N, &nb);
    if (ra != 0 || rb != 0 || na != nb) return 0;
    for (i = 0; i < na; i++)
        if (ia[i] != ib[i] || memcmp(&sa[i], &sb[i], sizeof sa[i]) != 0) return 0;
    for (lim = 0; limited && lim < 40; lim += lim < 4 ? 1 : 5)
        if (!same_limited(a, b, sig, lim)) return 0;
    /* A short buffer: the size needed, from both. */
    if (na > 0) {
        ra = minlsh_index_query(a, sig, K, ia, NULL, 0, &na);
        rb = minlsh_index_query(b, sig, K, ib, NULL, 0, &nb);
        if (ra != MINLSH_E_BUFSIZE || rb != MINLSH_E_BUFSIZE || na != nb) return 0;
    }
    return 1;
}

static void test_same_answers(void) {
    static uint64_t ids[N];
    static uint32_t sigs[N * K];
    minlsh_index *mem = build(NULL, ids, sigs), *map = NULL, *back = NULL;
    const char *path = tl_tmp_path("mapped.ix"), *path2 = tl_tmp_path("mapped2.ix");
    static uint64_t all_a[N], all_b[N], qa[4 * N], qb[4 * N];
    size_t i, na = 0, nb = 0, offa[9], offb[9];
    uint32_t s[K], t[K];
    unsigned char *f1, *f2;
    size_t l1 = 0, l2 = 0;
    char meta[32];
    int bad = 0;
    EXPECT(mem != NULL);
    if (mem == NULL) return;
    EXPECT_OK(minlsh_index_save_mapped(mem, path));
    EXPECT_OK(minlsh_index_map(&map, path, LOAD_OPTS(NULL, 0, NULL)));
    if (map == NULL) {
        minlsh_index_free(mem);
        return;
    }
    EXPECT_EQ_U64(minlsh_index_count(map), minlsh_index_count(mem));
    EXPECT_EQ_INT(minlsh_index_bands(map), B);
    EXPECT_EQ_INT(minlsh_index_rows(map), R);
    EXPECT_EQ_U64(minlsh_index_config_id(map), 42);
    EXPECT_OK(minlsh_index_copy_ids(mem, all_a, N, &na));
    EXPECT_OK(minlsh_index_copy_ids(map, all_b, N, &nb));
    EXPECT(na == nb && memcmp(all_a, all_b, na * sizeof *all_a) == 0);
    EXPECT_OK(minlsh_index_copy_metadata(map, meta, sizeof meta, &na));
    EXPECT(na == 13 && memcmp(meta, "some metadata", 13) == 0);
    for (i = 0; i < N; i++) {
        if (minlsh_index_contains(map, ids[i] + 1) != 0) bad++; /* ids are odd */
        if (ids[i] == 0) continue;
        if (minlsh_index_contains(map, ids[i]) != 1) bad++;
        if (minlsh_index_copy_signature(map, ids[i], s, K, NULL) != 0 ||
            memcmp(s, sigs + i * K, sizeof s) != 0)
            bad++;
        /* Every stored document, a near copy of it, and a random one. */
        if (!same_answers(mem, map, sigs + i * K, 1)) bad++;
        memcpy(t, sigs + i * K, sizeof t);
        t[i % K] ^= 1;
        t[(i * 7) % K] ^= 2;
        if (!same_answers(mem, map, t, 1)) bad++;
        random_sig(t);
        if (!same_answers(mem, map, t, 1)) bad++;
    }
    EXPECT_EQ_INT(bad, 0);
    EXPECT_ERR(minlsh_index_copy_signature(map, 2, s, K, NULL), MINLSH_E_NOTFOUND);
    /* A batch of 8: the same offsets and ids. */
    EXPECT_OK(minlsh_index_query_many(mem, sigs + 100 * K, 8, K, offa, qa, NULL, 4 * N, &na));
    EXPECT_OK(minlsh_index_query_many(map, sigs + 100 * K, 8, K, offb, qb, NULL, 4 * N, &nb));
    EXPECT(na == nb && memcmp(offa, offb, sizeof offa) == 0 &&
           memcmp(qa, qb, na * sizeof *qa) == 0);
    EXPECT_ERR(minlsh_index_query_many(map, sigs + 100 * K, 8, K, offb, qb, NULL, 1, &nb),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(nb, na);
    /* Inserts go to the handle's delta: the same answers as the index in
     * memory that received them, file and delta merged. */
    EXPECT_ERR(minlsh_index_insert(map, all_b[0], sigs, K), MINLSH_E_EXISTS);
    EXPECT_ERR(minlsh_index_remove(map, all_b[0]), MINLSH_E_STATE);
    EXPECT_ERR(minlsh_index_remove(map, 4), MINLSH_E_NOTFOUND);
    for (i = 0; i < 200; i++) {
        uint64_t id = 2 * (i + 1); /* even: never a file id */
        memcpy(t, sigs + (i * 13 % N) * K, sizeof t);
        if (i % 2) t[i % K] ^= 5;
        if (i % 5 == 4) random_sig(t);
        EXPECT_OK(minlsh_index_insert(mem, id, t, K));
        EXPECT_OK(minlsh_index_insert(map, id, t, K));
    }
    EXPECT_OK(minlsh_index_insert_many(map, all_b, sigs, 0, K, NULL));
    EXPECT_ERR(minlsh_index_insert(map, 2, sigs, K), MINLSH_E_EXISTS);
    EXPECT_OK(minlsh_index_remove(mem, 10));
    EXPECT_OK(minlsh_index_remove(map, 10));
    EXPECT_EQ_U64(minlsh_index_count(map), minlsh_index_count(mem));
    EXPECT_OK(minlsh_index_copy_ids(mem, all_a, N, &na));
    EXPECT_OK(minlsh_index_copy_ids(map, all_b, N, &nb));
    EXPECT(na == nb && memcmp(all_a, all_b, na * sizeof *all_a) == 0);
    EXPECT_EQ_INT(minlsh_index_contains(map, 12), 1);
    EXPECT_EQ_INT(minlsh_index_contains(map, 10), 0);
    EXPECT_OK(minlsh_index_copy_signature(map, 12, s, K, NULL));
    for (i = 0, bad = 0; i < N; i += 3) {
        if (!same_answers(mem, map, sigs + i * K, 1)) bad++;
        random_sig(t);
        if (!same_answers(mem, map, t, 1)) bad++;
    }
    EXPECT_EQ_INT(bad, 0);
    EXPECT_OK(minlsh_index_query_many(mem, sigs + 100 * K, 8, K, offa, qa, NULL, 4 * N, &na));
    EXPECT_OK(minlsh_index_query_many(map, sigs + 100 * K, 8, K, offb, qb, NULL, 4 * N, &nb));
    EXPECT(na == nb && memcmp(offa, offb, sizeof offa) == 0 &&
           memcmp(qa, qb, na * sizeof *qa) == 0);
    {
        minlsh_novel_result ra, rb;
        EXPECT_OK(minlsh_index_insert_novel(&ra, mem, 4000, sigs + 77 * K, K, NULL));
        EXPECT_OK(minlsh_index_insert_novel(&rb, map, 4000, sigs + 77 * K, K, NULL));
        EXPECT(ra.novel == rb.novel && ra.match == rb.match);
    }
    {
        minlsh_index_stats sa, sb;
        minlsh_pairs *pa = NULL, *pb = NULL;
        EXPECT_OK(minlsh_index_copy_stats(&sa, mem));
        EXPECT_OK(minlsh_index_copy_stats(&sb, map));
        EXPECT(sa.buckets == sb.buckets && sa.documents == sb.documents &&
               memcmp(sa.hist, sb.hist, sizeof sa.hist) == 0);
        EXPECT_OK(minlsh_pairs_from_index(&pa, mem, 0.5, 0, NULL));
        EXPECT_OK(minlsh_pairs_from_index(&pb, map, 0.5, 0, NULL));
        EXPECT(pa != NULL && pb != NULL && minlsh_pairs_count(pa) == minlsh_pairs_count(pb));
        minlsh_pairs_free(pa);
        minlsh_pairs_free(pb);
    }
    /* The bytes depend on the documents only: the mapped handle with its
     * delta saves what the index in memory saves. */
    EXPECT_OK(minlsh_index_save_mapped(map, path2));
    f1 = tl_read_file(path2, &l1);
    EXPECT_OK(minlsh_index_save_mapped(mem, path2));
    f2 = tl_read_file(path2, &l2);
    EXPECT(f1 != NULL && f2 != NULL && l1 == l2 && memcmp(f1, f2, l1) == 0);
    free(f1);
    free(f2);
    f1 = tl_read_file(path, &l1);
    EXPECT_OK(minlsh_index_load(&back, path, NULL));
    if (back != NULL) {
        EXPECT_OK(minlsh_index_save_mapped(back, path2));
        f2 = tl_read_file(path2, &l2);
        EXPECT(f2 != NULL && l1 == l2 && memcmp(f1, f2, l1) == 0);
        free(f2);
        /* Loaded from version 2, saved as version 1: as the original. */
        EXPECT_OK(minlsh_index_save(back, path2));
        EXPECT_OK(minlsh_index_save(mem, path));
        f2 = tl_read_file(path2, &l2);
        free(f1);
        f1 = tl_read_file(path, &l1);
        EXPECT(f1 != NULL && f2 != NULL && l1 == l2 && memcmp(f1, f2, l1) == 0);
        free(f2);
        EXPECT_ERR(minlsh_index_insert(back, 2, sigs, K), MINLSH_E_EXISTS);
        minlsh_index_free(back);
    }
    free(f1);
    minlsh_index_free(map);
    /* A version 1 file opens too, loaded (so it can change). */
    map = NULL;
    EXPECT_OK(minlsh_index_map(&map, path, NULL));
    if (map != NULL) {
        EXPECT(same_answers(mem, map, sigs + 4 * K, 1));
        EXPECT_OK(minlsh_index_insert(map, 1u << 30, sigs, K));
        EXPECT_OK(minlsh_index_remove(map, 2)); /* loaded: anything can change */
        minlsh_index_free(map);
    }
    minlsh_index_free(mem);
    unlink(path);
    unlink(path2);
}

/* Hot buckets split between the file and the delta: query_limited on the
 * mapped handle counts both sides band by band and gives the loaded index's
 * answer under every limit, in place (no allocation near the size of the
 * index, where a loaded copy would take hundreds of KiB). */
#define HOT 400
static void test_limited_hot(void) {
    static uint32_t sigs[(HOT + 200) * K];
    static uint64_t fids[HOT];
    const char *path = tl_tmp_path("mapped_hot.ix");
    minlsh_family *fam = NULL;
    minlsh_index *mem = NULL, *map = NULL;
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    uint32_t q[4][K];
    size_t i, before, extra;
    uint64_t lim;
    long calls, checks = 0;
    int v, j, bad = 0;
    EXPECT_OK(minlsh_family_new(&fam, K, 7, NULL));
    EXPECT_OK(minlsh_index_new(&mem, fam, 42, B, R, NULL));
    minlsh_family_free(fam);
    if (mem == NULL) return;
    /* Band 0 shared by every third document, band 1 by every fifth, band 2
     * by every seventh (a small bucket), some exact copies. */
    for (i = 0; i < HOT + 200; i++) {
        uint32_t *s = sigs + i * K;
        random_sig(s);
        if (i % 3 == 0)
            for (v = 0; v < R; v++) s[v] = 1000u + (uint32_t)v;
        if (i % 5 == 0)
            for (v = 0; v < R; v++) s[R + v] = 2000u + (uint32_t)v;
        if (i % 7 == 0)
            for (v = 0; v < R; v++) s[2 * R + v] = 3000u + (uint32_t)v;
        if (i > 20 && i % 11 == 0) memcpy(s, sigs + (i % HOT / 2) * K, K * sizeof *s);
    }
    for (i = 0; i < HOT; i++) {
        fids[i] = 2 * i + 1;
        EXPECT_OK(minlsh_index_insert(mem, fids[i], sigs + i * K, K));
    }
    EXPECT_OK(minlsh_index_save_mapped(mem, path));
    EXPECT_OK(minlsh_index_map(&map, path, LOAD_OPTS(NULL, 0, &al)));
    if (map == NULL) {
        minlsh_index_free(mem);
        return;
    }
    /* The delta: more members of the hot buckets, copies of file documents
     * (one group with them once loaded), ids between the file's. */
    for (i = HOT; i < HOT + 200; i++) {
        uint64_t id = 2 * (i - HOT) + 2;
        EXPECT_OK(minlsh_index_insert(mem, id, sigs + i * K, K));
        EXPECT_OK(minlsh_index_insert(map, id, sigs + i * K, K));
    }
    for (j = 0; j < 4; j++) {
        random_sig(q[j]);
        for (v = 0; v < R && j < 3; v++) q[j][v] = 1000u + (uint32_t)v;
        for (v = 0; v < R && j != 1; v++) q[j][R + v] = 2000u + (uint32_t)v;
        for (v = 0; v < R; v++) q[j][2 * R + v] = 3000u + (uint32_t)v;
    }
    before = ta_bytes(&ta);
    ta_reset_peak(&ta);
    calls = ta_calls(&ta);
    /* Every limit up to past the whole answer (about 200 + 120 + 86). */
    for (lim = 0; lim < 500; lim++)
        for (j = 0; j < 4; j++, checks++)
            if (!same_limited(mem, map, q[j], lim)) bad++;
    for (i = 0; i < HOT + 200; i += 7)
        for (lim = 0; lim < 300; lim += 37, checks++)
            if (!same_limited(mem, map, sigs + i * K, lim)) bad++;
    EXPECT_EQ_INT(bad, 0);
    extra = ta_peak(&ta) - before;
    EXPECT_MSG(extra < 32 * 1024, "query_limited allocated %zu bytes at once", extra);
    /* Scratch past the stack arrays only (a load would make dozens): at
     * most three blocks per query of the mapped handle, two per check. */
    EXPECT_MSG(ta_calls(&ta) - calls <= 3 * 2 * checks, "%ld allocations for %ld checks",
               ta_calls(&ta) - calls, checks);
    {
        /* The limit cut somewhere inside: a query of q[0] under 150 takes
         * band 0 only if band 0 fits. */
        uint64_t ids[HOT + 200];
        size_t n;
        uint32_t searched;
        EXPECT_OK(minlsh_index_query_limited(map, q[0], K, 150, ids, NULL, HOT + 200, &n,
                                             &searched));
        EXPECT_EQ_INT(searched, 0);
        EXPECT_EQ_U64(n, 0);
        EXPECT_OK(minlsh_index_query_limited(map, q[0], K, 0, ids, NULL, HOT + 200, &n,
                                             &searched));
        EXPECT_EQ_INT(searched, B);
        EXPECT(n > 250 && n < HOT + 200);
    }
    minlsh_index_free(map);
    minlsh_index_free(mem);
    EXPECT_EQ_INT(ta_blocks(&ta), 0);
    unlink(path);
}

static void test_family_check(void) {
    static uint64_t ids[N];
    static uint32_t sigs[N * K];
    minlsh_index *mem = build(NULL, ids, sigs), *map = NULL;
    minlsh_family *fam = NULL, *other = NULL;
    const char *path = tl_tmp_path("mapped_fam.ix");
    EXPECT_OK(minlsh_index_save_mapped(mem, path));
    EXPECT_OK(minlsh_family_new(&fam, K, 7, NULL));
    EXPECT_OK(minlsh_family_new(&other, K, 8, NULL));
    EXPECT_OK(minlsh_index_map(&map, path, LOAD_OPTS(fam, 42, NULL)));
    minlsh_index_free(map);
    EXPECT_ERR(minlsh_index_map(&map, path, LOAD_OPTS(other, 42, NULL)), MINLSH_E_MISMATCH);
    EXPECT(map == NULL);
    EXPECT_ERR(minlsh_index_map(&map, path, LOAD_OPTS(fam, 43, NULL)), MINLSH_E_MISMATCH);
    EXPECT_ERR(minlsh_index_load(&map, path, LOAD_OPTS(fam, 43, NULL)), MINLSH_E_MISMATCH);
    minlsh_family_free(fam);
    minlsh_family_free(other);
    minlsh_index_free(mem);
    unlink(path);
}

/* Flip one byte at off: open must fail with open_rc; if it opens, a query
 * of every stored document (and copy_ids) must meet MINLSH_E_CORRUPT, and a
 * load must refuse the file. */
static void damaged(const unsigned char *f, size_t len, size_t off, int open_rc,
                    const uint32_t *sigs, const uint64_t *ids) {
    const char *path = tl_tmp_path("mapped_bad.ix");
    unsigned char *g = (unsigned char *)malloc(len);
    minlsh_index *map = NULL, *ld = NULL;
    uint64_t out[N];
    size_t n, i;
    int seen = 0;
    memcpy(g, f, len);
    g[off] ^= 0x10;
    tl_write_file(path, g, len);
    free(g);
    EXPECT_EQ_INT(minlsh_index_map(&map, path, NULL), open_rc);
    EXPECT_ERR(minlsh_index_load(&ld, path, NULL), open_rc != 0 ? open_rc : MINLSH_E_CORRUPT);
    if (map != NULL) {
        for (i = 0; i < N; i++) {
            int rc;
            if (ids[i] == 0) continue;
            rc = minlsh_index_query(map, sigs + i * K, K, out, NULL, N, &n);
            EXPECT(rc == 0 || rc == MINLSH_E_CORRUPT);
            seen |= rc == MINLSH_E_CORRUPT;
        }
        /* copy_ids reads the blocks of the documents (the last one may
         * hold the first band entries too). */
        EXPECT_ERR(minlsh_index_copy_ids(map, out, N, &n),
                   (off - 128) >> 16 <=
                           (128 + (size_t)minlsh_index_count(map) * (8 + 4 * K) - 1 - 128) >> 16
                       ? MINLSH_E_CORRUPT
                       : 0);
        EXPECT_ERR(minlsh_index_save(map, path), MINLSH_E_CORRUPT);
        EXPECT_MSG(seen, "no query met the damage at %zu", off);
        minlsh_index_free(map);
    }
    unlink(path);
}

static void test_damage(void) {
    static uint64_t ids[N];
    static uint32_t sigs[N * K];
    minlsh_index *mem = build(NULL, ids, sigs), *map = NULL;
    const char *path = tl_tmp_path("mapped_dmg.ix");
    unsigned char *f;
    size_t len = 0, docs_end, bands_end;
    EXPECT_OK(minlsh_index_save_mapped(mem, path));
    f = tl_read_file(path, &len);
    if (f == NULL) return;
    docs_end = 128 + (size_t)minlsh_index_count(mem) * (8 + 4 * K);
    bands_end = len - 13 - 8 - 8 * ((len - 128) / 65536 + 1); /* about: inside the bands */
    damaged(f, len, 3, MINLSH_E_FORMAT, sigs, ids);   /* magic */
    damaged(f, len, 20, MINLSH_E_CORRUPT, sigs, ids); /* header field */
    damaged(f, len, 70, MINLSH_E_CORRUPT, sigs, ids); /* directory */
    damaged(f, len, len - 3, MINLSH_E_CORRUPT, sigs, ids);  /* table checksum */
    damaged(f, len, len - 12, MINLSH_E_CORRUPT, sigs, ids); /* block table */
    damaged(f, len, 200, 0, sigs, ids);                     /* a document */
    damaged(f, len, docs_end + 100, 0, sigs, ids);          /* a band entry */
    damaged(f, len, (docs_end + bands_end) / 2, 0, sigs, ids);
    /* Truncated, or with a byte more. */
    tl_write_file(path, f, len - 1);
    EXPECT_ERR(minlsh_index_map(&map, path, NULL), MINLSH_E_CORRUPT);
    tl_write_file(path, f, 100);
    EXPECT_ERR(minlsh_index_map(&map, path, NULL), MINLSH_E_CORRUPT);
    {
        unsigned char *g = (unsigned char *)malloc(len + 1);
        memcpy(g, f, len);
        g[len] = 0;
        tl_write_file(path, g, len + 1);
        free(g);
        EXPECT_ERR(minlsh_index_map(&map, path, NULL), MINLSH_E_CORRUPT);
    }
    EXPECT(map == NULL);
    free(f);
    minlsh_index_free(mem);
    unlink(path);
}

static void test_nomem(void) {
    static uint64_t ids[N];
    static uint32_t sigs[N * K];
    const char *path = tl_tmp_path("mapped_nomem.ix"), *path2 = tl_tmp_path("mapped_nomem2.ix");
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_index *mem = build(&al, ids, sigs), *map = NULL;
    uint64_t out[N];
    size_t n;
    int i, rc, done = 0;
    EXPECT_OK(minlsh_index_save_mapped(mem, path));
    for (i = 1; i < 40 && !done; i++) {
        long before = ta_blocks(&ta);
        ta_fail_nth(&ta, i);
        rc = minlsh_index_save_mapped(mem, path2);
        ta_fail_nth(&ta, 0);
        EXPECT(rc == 0 || rc == MINLSH_E_NOMEM);
        EXPECT_EQ_INT(ta_blocks(&ta), before);
        done = rc == 0;
    }
    EXPECT(done);
    for (i = 1, done = 0; i < 40 && !done; i++) {
        ta_fail_nth(&ta, i);
        rc = minlsh_index_map(&map, path, LOAD_OPTS(NULL, 0, &al));
        ta_fail_nth(&ta, 0);
        EXPECT(rc == 0 || rc == MINLSH_E_NOMEM);
        if (rc == 0) {
            done = 1;
            /* A query that needs more than its stack scratch may fail. */
            ta_fail_from(&ta, 1);
            rc = minlsh_index_query(map, sigs + 4 * K, K, out, NULL, N, &n);
            ta_fail_nth(&ta, 0);
            EXPECT(rc == 0 || rc == MINLSH_E_NOMEM);
            minlsh_index_free(map);
        }
    }
    EXPECT(done);
    minlsh_index_free(mem);
    EXPECT_EQ_INT(ta_blocks(&ta), 0);
    unlink(path);
    unlink(path2);
}

int main(void) {
    RUN(test_same_answers);
    RUN(test_limited_hot);
    RUN(test_family_check);
    RUN(test_damage);
    RUN(test_nomem);
    return TL_SUMMARY("mapped");
}
