/* Limits and arbitrary input (docs/robustness.md): a document-size limit
 * affects nothing else; NUL bytes and invalid UTF-8 are ordinary input;
 * metadata and ids with NULs and extremes survive a round trip; sizes that
 * cannot be represented are refused; every size constant has a function
 * twin. */
#include "testalloc.h"
#include "testlib.h"

#include <minlsh.h>

#include "common/common.h" /* minlsh__reserve (overflow paths), minlsh__prefault */

/* ---- limits ----------------------------------------------------------------- */

/* A document-size limit refuses only the documents over it: same config id,
 * same sets and fingerprints below it, the caller's buffers untouched above
 * it, and other streams of the same shingler unaffected. */
static void test_size_limit_affects_nothing_else(void) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *lim = NULL, *free_sh = NULL;
    minlsh_shinglestream *s1 = NULL, *s2 = NULL;
    minlsh_shingleset *a = NULL, *b = NULL;
    minlsh_family *fam = NULL;
    uint8_t fa[16], fb[16];
    uint32_t sig[16], sig2[16];
    uint64_t id1 = 0, id2 = 1;
    static const char doc[] = "one two three four five six seven eight nine ten";
    size_t n = sizeof doc - 1, cut;
    o.k = 2;
    o.max_document_bytes = 20;
    EXPECT_OK(minlsh_shingler_new(&lim, &o, NULL));
    o.max_document_bytes = 0;
    EXPECT_OK(minlsh_shingler_new(&free_sh, &o, NULL));
    EXPECT_OK(minlsh_shingler_config_id(&id1, lim));
    EXPECT_OK(minlsh_shingler_config_id(&id2, free_sh));
    EXPECT_EQ_U64(id1, id2);
    minlsh_shingleset_new(&a, NULL);
    minlsh_shingleset_new(&b, NULL);
    EXPECT_OK(minlsh_family_new(&fam, 16, 1, NULL));
    for (cut = 0; cut <= n; cut++) {
        int rc = minlsh_shingler_hash(lim, doc, cut, a, fa);
        EXPECT_OK(minlsh_shingler_hash(free_sh, doc, cut, b, fb));
        if (cut <= 20) {
            EXPECT_OK(rc);
            EXPECT(minlsh_shingleset_count(a) == minlsh_shingleset_count(b) &&
                   memcmp(fa, fb, 16) == 0);
        } else {
            EXPECT_ERR(rc, MINLSH_E_TOOBIG);
        }
        memset(sig, 0xAB, sizeof sig);
        rc = minlsh_family_sign_text(fam, lim, doc, cut, sig, 16, NULL);
        if (cut <= 20) {
            EXPECT_OK(rc);
            EXPECT_OK(minlsh_family_sign_text(fam, free_sh, doc, cut, sig2, 16, NULL));
            EXPECT(memcmp(sig, sig2, sizeof sig) == 0);
        } else {
            EXPECT_ERR(rc, MINLSH_E_TOOBIG);
            EXPECT(sig[0] == 0xABABABABu && sig[15] == 0xABABABABu); /* untouched */
        }
    }
    /* Two streams of the limited shingler: one goes over, the other is fine. */
    EXPECT_OK(minlsh_shinglestream_new(&s1, lim, NULL));
    EXPECT_OK(minlsh_shinglestream_new(&s2, lim, NULL));
    EXPECT_OK(minlsh_shinglestream_feed(s1, doc, 10));
    EXPECT_OK(minlsh_shinglestream_feed(s2, doc, 10));
    EXPECT_ERR(minlsh_shinglestream_feed(s1, doc + 10, 20), MINLSH_E_TOOBIG);
    EXPECT_OK(minlsh_shinglestream_feed(s2, doc + 10, 10));
    EXPECT_OK(minlsh_shinglestream_finish(s2, a, fa));
    EXPECT_OK(minlsh_shingler_hash(free_sh, doc, 20, b, fb));
    EXPECT(memcmp(fa, fb, 16) == 0);
    EXPECT_ERR(minlsh_shinglestream_finish(s1, a, fa), MINLSH_E_TOOBIG);
    minlsh_shinglestream_free(s1);
    minlsh_shinglestream_free(s2);
    minlsh_shingleset_free(a);
    minlsh_shingleset_free(b);
    minlsh_family_free(fam);
    minlsh_shingler_free(lim);
    minlsh_shingler_free(free_sh);
}

/* Arbitrary bytes (all 256 values, NUL and invalid UTF-8 included) give
 * the same answer every time, in every unit and flag combination, one-shot
 * and streamed byte by byte. */
static void test_arbitrary_bytes_deterministic(void) {
    uint8_t text[600];
    uint64_t seed = 17;
    uint32_t unit, flags;
    size_t i;
    for (i = 0; i < sizeof text; i++) text[i] = (uint8_t)tl_rand(&seed);
    for (i = 0; i < 64; i++) text[i * 9] = 0;           /* NULs */
    {
        static const char mix[] = "\xE2\x82\xAC \xF0\x9F\x98 \xC0\xAF &amp; <b>x</b>";
        memcpy(text + 100, mix, sizeof mix - 1);
    }
    for (unit = MINLSH_UNIT_BYTE; unit <= MINLSH_UNIT_STOPWORD; unit++) {
        for (flags = 0; flags <= MINLSH_NORM_ALL; flags++) {
            minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
            minlsh_shingler *sh = NULL;
            minlsh_shinglestream *st = NULL;
            minlsh_shingleset *a = NULL, *b = NULL, *c = NULL;
            uint8_t fa[16], fb[16], fc[16];
            o.unit = unit;
            o.k = 3;
            o.flags = flags;
            if (minlsh_shingler_new(&sh, &o, NULL) != 0) {
                TL_FAIL("unit %u flags %u: shingler_new", unit, flags);
                continue;
            }
            minlsh_shingleset_new(&a, NULL);
            minlsh_shingleset_new(&b, NULL);
            minlsh_shingleset_new(&c, NULL);
            EXPECT_OK(minlsh_shingler_hash(sh, text, sizeof text, a, fa));
            EXPECT_OK(minlsh_shingler_hash(sh, text, sizeof text, b, fb));
            EXPECT_OK(minlsh_shinglestream_new(&st, sh, NULL));
            for (i = 0; i < sizeof text; i++) minlsh_shinglestream_feed(st, text + i, 1);
            EXPECT_OK(minlsh_shinglestream_finish(st, c, fc));
            EXPECT_MSG(minlsh_shingleset_count(a) == minlsh_shingleset_count(b) &&
                           minlsh_shingleset_count(a) == minlsh_shingleset_count(c) &&
                           memcmp(fa, fb, 16) == 0 && memcmp(fa, fc, 16) == 0 &&
                           (minlsh_shingleset_count(a) == 0 ||
                            memcmp(minlsh_shingleset_view_hashes(a), minlsh_shingleset_view_hashes(c),
                                   8 * minlsh_shingleset_count(a)) == 0),
                       "unit %u flags %u differ", unit, flags);
            if (unit != MINLSH_UNIT_STOPWORD) EXPECT(minlsh_shingleset_count(a) > 0);
            minlsh_shinglestream_free(st);
            minlsh_shingleset_free(a);
            minlsh_shingleset_free(b);
            minlsh_shingleset_free(c);
            minlsh_shingler_free(sh);
        }
    }
}

/* Metadata and ids are arbitrary bytes and numbers: NULs and extremes
 * survive a save and a load. */
static void test_nul_metadata_roundtrip(void) {
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL, *ix2 = NULL;
    static const uint8_t meta[] = {0, 1, 0, 0, 255, 0, 'x', 0};
    uint8_t got[16], buf[4096];
    uint32_t sig[4] = {0, 0, 0, 0};
    size_t n = 0, len = 0;
    uint64_t ids[3];
    EXPECT_OK(minlsh_family_new(&fam, 4, 1, NULL));
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 2, 2, NULL));
    EXPECT_OK(minlsh_index_insert(ix, 0, sig, 4));
    EXPECT_OK(minlsh_index_insert(ix, UINT64_MAX, sig, 4));
    EXPECT_OK(minlsh_index_set_metadata(ix, meta, sizeof meta));
    EXPECT_OK(minlsh_index_save_buffer(ix, buf, sizeof buf, &len));
    EXPECT_OK(minlsh_index_load_buffer(&ix2, buf, len, LOAD_OPTS(fam, 0, NULL)));
    EXPECT_OK(minlsh_index_copy_metadata(ix2, got, sizeof got, &n));
    EXPECT(n == sizeof meta && memcmp(got, meta, n) == 0);
    EXPECT_OK(minlsh_index_copy_ids(ix2, ids, 3, &n));
    EXPECT(n == 2 && ids[0] == 0 && ids[1] == UINT64_MAX);
    minlsh_index_free(ix);
    minlsh_index_free(ix2);
    minlsh_family_free(fam);
}

/* ---- sizes that cannot be represented ------------------------------------ */

/* Growth that would overflow size_t falls back to exactly what is needed,
 * and a need that cannot be represented in bytes is MINLSH_E_TOOBIG; either
 * way the array is untouched. */
static void test_reserve_limits(void) {
    testalloc t;
    minlsh_allocator a = ta_allocator(&t);
    void *p = NULL;
    size_t cap = 0;
    ta_refuse_over(&t, (size_t)1 << 30);
    EXPECT_ERR(minlsh__reserve(&a, &p, &cap, 0, SIZE_MAX / 2 + 2, 1), MINLSH_E_NOMEM);
    EXPECT(p == NULL && cap == 0);
    EXPECT_ERR(minlsh__reserve(&a, &p, &cap, 0, SIZE_MAX / 4, 8), MINLSH_E_TOOBIG);
    EXPECT(p == NULL && cap == 0);
    EXPECT_OK(minlsh__reserve(&a, &p, &cap, 0, 3, 8));
    EXPECT(p != NULL && cap >= 3);
    EXPECT_ERR(minlsh__reserve(&a, &p, &cap, 3, SIZE_MAX / 8 + 1, 8), MINLSH_E_TOOBIG);
    EXPECT(p != NULL && cap >= 3);
    a.free(a.opaque, p);
    EXPECT_EQ_INT(ta_blocks(&t), 0);
}

/* minlsh__prefault and minlsh__touch_pages (its fallback) write nothing
 * outside the bytes they are given, whatever their alignment and length
 * (none, less than a page, several pages), and the bytes can be written
 * afterwards. */
static void test_prefault_stays_inside(void) {
    enum { PAGE = 4096, PAGES = 6 };
    static const size_t at[] = {0, 1, 100, PAGE - 1, PAGE};
    static const size_t len[] = {0, 1, 100, PAGE - 1, PAGE, PAGE + 1, 3 * PAGE + 5, 4 * PAGE};
    size_t i, j, b;
    unsigned char *buf = (unsigned char *)malloc(PAGES * PAGE);
    EXPECT(buf != NULL);
    if (buf == NULL) return;
    for (i = 0; i < sizeof at / sizeof at[0]; i++)
        for (j = 0; j < sizeof len / sizeof len[0]; j++) {
            size_t bad = 0;
            memset(buf, 0xAB, PAGES * PAGE);
            minlsh__prefault(buf + at[i], len[j]);
            for (b = 0; b < PAGES * PAGE; b++)
                if ((b < at[i] || b >= at[i] + len[j]) && buf[b] != 0xAB) bad++;
            EXPECT_EQ_U64(bad, 0);
            minlsh__touch_pages(buf + at[i], len[j]);
            for (b = 0; b < PAGES * PAGE; b++)
                if ((b < at[i] || b >= at[i] + len[j]) && buf[b] != 0xAB) bad++;
            EXPECT_EQ_U64(bad, 0);
            memset(buf + at[i], 0x5A, len[j]);
            for (b = 0; b < len[j]; b++) bad += buf[at[i] + b] != 0x5A;
            EXPECT_EQ_U64(bad, 0);
        }
    free(buf);
}

/* Every size constant has a function twin with the same value (FFI). */
static void test_constant_twins(void) {
    EXPECT_EQ_U64(minlsh_key_bytes(), MINLSH_KEY_BYTES);
    EXPECT_EQ_U64(minlsh_fingerprint_bytes(), MINLSH_FINGERPRINT_BYTES);
    EXPECT_EQ_U64(minlsh_shingle_k_max(), MINLSH_SHINGLE_K_MAX);
    EXPECT_EQ_U64(minlsh_family_k_max(), MINLSH_FAMILY_K_MAX);
    EXPECT_EQ_U64(minlsh_prime(), MINLSH_PRIME);
    EXPECT_EQ_U64(minlsh_empty_value(), MINLSH_EMPTY_VALUE);
}

int main(void) {
    RUN(test_size_limit_affects_nothing_else);
    RUN(test_arbitrary_bytes_deterministic);
    RUN(test_nul_metadata_roundtrip);
    RUN(test_reserve_limits);
    RUN(test_prefault_stays_inside);
    RUN(test_constant_twins);
    return TL_SUMMARY("limits");
}
