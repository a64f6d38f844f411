/*
 * A store's metadata for an index built outside a store
 * (minlsh_store_encode_metadata, minlsh_store_decode_metadata): a saved
 * index with it opens as a store with its names, ids and threshold, and
 * reads back; a journal folded in by a compaction killed before its reset
 * is not applied twice; each refusal; every allocation failure is
 * MINLSH_E_NOMEM and leaks nothing.
 */
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#include <stdio.h>
#include <string.h>

#define K 32

static const uint64_t ids[4] = {0, 1, 3, 5}; /* 2 and 4 were removed */
static const char names[] = "\"a\"7[1,\"b\"]";
static const uint64_t offsets[5] = {0, 3, 3, 4, 11}; /* id 1 has no name */

static void sig_of(const minlsh_family *fam, uint64_t doc, uint32_t *sig) {
    uint64_t h[40], st = doc * 7919 + 1;
    size_t i;
    for (i = 0; i < 40; i++) h[i] = tl_rand(&st);
    EXPECT_OK(minlsh_family_sign(fam, h, 40, sig, K, NULL));
}

static minlsh_index *make_index_with(minlsh_family *fam, const minlsh_allocator *al) {
    minlsh_index *ix = NULL;
    uint32_t sig[K];
    size_t i;
    EXPECT_OK(minlsh_index_new(&ix, fam, 0x1234, 8, 4, al));
    for (i = 0; i < 4; i++) {
        sig_of(fam, ids[i], sig);
        EXPECT_OK(minlsh_index_insert(ix, ids[i], sig, K));
    }
    return ix;
}

static minlsh_index *make_index(minlsh_family *fam) { return make_index_with(fam, NULL); }

/* Encode the names of ix (next id 6; with document 6, the names of
 * with6) and save it to path. */
static const char names6[] = "\"a\"7[1,\"b\"]\"c\"";
static const uint64_t offsets6[6] = {0, 3, 3, 4, 11, 14};
static int save_as_store(minlsh_index *ix, const minlsh_journal *j, const char *path) {
    unsigned char buf[512];
    size_t n = 0;
    int with6 = minlsh_index_contains(ix, 6) == 1;
    int rc = minlsh_store_encode_metadata(ix, j, 0.7, with6 ? 7 : 6, with6 ? names6 : names,
                                          with6 ? offsets6 : offsets, buf, sizeof buf, &n);
    if (rc == 0) rc = minlsh_index_set_metadata(ix, buf, n);
    if (rc == 0) rc = minlsh_index_save_mapped(ix, path);
    return rc;
}

static void test_round_trip(void) {
    minlsh_family *fam = NULL;
    minlsh_index *ix, *back = NULL;
    minlsh_store *st = NULL;
    minlsh_store_options so = MINLSH_STORE_OPTIONS_INIT;
    char path[4096];
    unsigned char out[64];
    uint64_t offs[5], next = 0, id = 0;
    uint32_t flags = 9, sig[K];
    double t = 0;
    size_t n = 0;
    minlsh_store_result r;
    EXPECT_OK(minlsh_family_new(&fam, K, 3, NULL));
    ix = make_index(fam);
    snprintf(path, sizeof path, "%s", tl_tmp_path("store_meta.mlsh"));
    remove(path);
    /* the size query, then the file */
    EXPECT_ERR(minlsh_store_encode_metadata(ix, NULL, 0.7, 6, names, offsets, NULL, 0, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_MSG(n > 89 + 4 * 12 + 10, "metadata of %zu bytes", n);
    EXPECT_OK(save_as_store(ix, NULL, path));

    /* a store: its names, ids and threshold; the key check says the
     * shingling is not the default key's */
    so.flags = MINLSH_STORE_READONLY;
    EXPECT_ERR(minlsh_store_open(&st, path, &so), MINLSH_E_MISMATCH);
    so.flags = MINLSH_STORE_READONLY | MINLSH_STORE_ANY_KEY;
    EXPECT_OK(minlsh_store_open(&st, path, &so));
    EXPECT_EQ_U64(minlsh_store_count(st), 4);
    EXPECT_MSG(minlsh_store_threshold(st) == 0.7, "threshold %g", minlsh_store_threshold(st));
    EXPECT_EQ_INT(minlsh_store_key_matches(st), 0);
    EXPECT_OK(minlsh_store_find_name(&id, st, "[1,\"b\"]", 7));
    EXPECT_EQ_U64(id, 5);
    EXPECT_OK(minlsh_store_copy_name(st, 3, out, sizeof out, &n));
    EXPECT_MSG(n == 1 && out[0] == '7', "name of id 3: %.*s", (int)n, (const char *)out);
    EXPECT_OK(minlsh_store_copy_name(st, 1, out, sizeof out, &n));
    EXPECT_EQ_U64(n, 0);
    EXPECT_ERR(minlsh_store_copy_name(st, 2, out, sizeof out, &n), MINLSH_E_NOTFOUND);
    sig_of(fam, 3, sig);
    EXPECT_OK(minlsh_store_query_signature(&r, st, sig, K));
    EXPECT_MSG(r.has_match && r.match == 3 && r.similarity == 1.0 && !r.novel,
               "query of document 3: match %llu (%d), similarity %g",
               (unsigned long long)r.match, (int)r.has_match, r.similarity);
    minlsh_store_free(st);

    /* and back, from the file as loaded */
    EXPECT_OK(minlsh_index_load(&back, path, NULL));
    EXPECT_ERR(minlsh_store_decode_metadata(&t, &next, &flags, back, offs, out, 4, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, 11);
    EXPECT_OK(minlsh_store_decode_metadata(&t, &next, &flags, back, offs, out, sizeof out, &n));
    EXPECT_MSG(t == 0.7 && next == 6 && flags == 0 && n == 11, "t %g, next %llu, flags %u",
               t, (unsigned long long)next, (unsigned)flags);
    EXPECT_MSG(memcmp(offs, offsets, sizeof offs) == 0 && memcmp(out, names, 11) == 0,
               "names read back: %.11s", (const char *)out);
    /* an index whose documents are no longer the file's */
    sig_of(fam, 6, sig);
    EXPECT_OK(minlsh_index_insert(back, 6, sig, K));
    EXPECT_ERR(minlsh_store_decode_metadata(NULL, NULL, NULL, back, offs, out, sizeof out, &n),
               MINLSH_E_CORRUPT);
    minlsh_index_free(back);

    /* refusals */
    EXPECT_ERR(minlsh_store_encode_metadata(ix, NULL, 0.7, 5, names, offsets, out, 0, &n),
               MINLSH_E_PARAM); /* id 5 is not below next id 5 */
    EXPECT_ERR(minlsh_store_encode_metadata(ix, NULL, 0.0, 6, names, offsets, out, 0, &n),
               MINLSH_E_PARAM);
    {
        static const uint64_t twice[5] = {0, 3, 3, 6, 7}; /* "a" twice */
        EXPECT_ERR(minlsh_store_encode_metadata(ix, NULL, 0.7, 6, "\"a\"\"a\"7", twice, out, 0,
                                                &n),
                   MINLSH_E_PARAM);
    }
    minlsh_index_free(ix);
    ix = make_index(fam); /* no metadata: not a store's */
    EXPECT_ERR(minlsh_store_decode_metadata(NULL, NULL, NULL, ix, offs, out, sizeof out, &n),
               MINLSH_E_FORMAT);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
    remove(path);
}

/* Journal.compact's sequence: the journal's records synced, the metadata
 * made with the journal, the file saved; a kill before the journal's reset
 * leaves a journal naming the old file. The store replays it from where
 * the new file holds it: nothing twice. Without the journal, the store
 * cannot tell and refuses the pair. */
static void test_compaction_killed_before_reset(void) {
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    minlsh_journal *j = NULL;
    minlsh_store *st = NULL;
    minlsh_store_options so = MINLSH_STORE_OPTIONS_INIT;
    char path[4096], jpath[4200];
    uint32_t sig[K];
    int pass;
    EXPECT_OK(minlsh_family_new(&fam, K, 3, NULL));
    snprintf(path, sizeof path, "%s", tl_tmp_path("store_meta_kill.mlsh"));
    snprintf(jpath, sizeof jpath, "%s.journal", path);
    so.flags = MINLSH_STORE_READONLY | MINLSH_STORE_ANY_KEY;
    for (pass = 0; pass < 2; pass++) {
        remove(path);
        remove(jpath);
        ix = make_index(fam);
        EXPECT_OK(save_as_store(ix, NULL, path));
        minlsh_index_free(ix);
        EXPECT_OK(minlsh_index_load(&ix, path, NULL));
        EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
        sig_of(fam, 6, sig);
        EXPECT_OK(minlsh_index_insert(ix, 6, sig, K));
        EXPECT_OK(minlsh_journal_append(j, MINLSH_JOURNAL_INSERT, 6, sig, K, "\"c\"", 3));
        /* not synced yet: the file could not say how much of it it holds */
        EXPECT_ERR(save_as_store(ix, j, path), MINLSH_E_STATE);
        EXPECT_OK(minlsh_journal_sync(j));
        EXPECT_OK(save_as_store(ix, pass == 0 ? j : NULL, path));
        minlsh_journal_free(j); /* killed: the journal still names the old file */
        minlsh_index_free(ix);
        if (pass == 0) {
            EXPECT_OK(minlsh_store_open(&st, path, &so));
            EXPECT_EQ_U64(minlsh_store_count(st), 5); /* document 6 once */
            minlsh_store_free(st);
        } else {
            EXPECT_ERR(minlsh_store_open(&st, path, &so), MINLSH_E_CORRUPT);
        }
    }
    minlsh_family_free(fam);
    remove(path);
    remove(jpath);
}

/* Both calls allocate with the index's allocator: every failure of it is
 * MINLSH_E_NOMEM, with nothing leaked, until the call succeeds. */
static void test_nomem(void) {
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_family *fam = NULL;
    minlsh_index *ix;
    unsigned char buf[512], out[64];
    uint64_t offs[5];
    size_t n = 0;
    long nth, blocks;
    int which, rc, failures;
    EXPECT_OK(minlsh_family_new(&fam, K, 3, NULL));
    ix = make_index_with(fam, &al);
    EXPECT_OK(minlsh_store_encode_metadata(ix, NULL, 0.7, 6, names, offsets, buf, sizeof buf,
                                           &n));
    EXPECT_OK(minlsh_index_set_metadata(ix, buf, n));
    for (which = 0; which < 2; which++) {
        failures = 0;
        for (nth = 1; nth < 1000; nth++) {
            blocks = ta_blocks(&ta);
            ta_fail_nth(&ta, nth);
            rc = which == 0 ? minlsh_store_encode_metadata(ix, NULL, 0.7, 6, names, offsets,
                                                           buf, sizeof buf, &n)
                            : minlsh_store_decode_metadata(NULL, NULL, NULL, ix, offs, out,
                                                           sizeof out, &n);
            EXPECT_MSG(ta_blocks(&ta) == blocks, "call %d, allocation %ld: %ld blocks leaked",
                       which, nth, ta_blocks(&ta) - blocks);
            if (ta_failed(&ta) == 0) {
                EXPECT_MSG(rc == 0, "call %d: %d with no failure", which, rc);
                break;
            }
            failures++;
            EXPECT_MSG(rc == MINLSH_E_NOMEM, "call %d, allocation %ld: %d", which, nth, rc);
        }
        EXPECT_MSG(failures > 0, "call %d never allocated", which);
    }
    ta_fail_nth(&ta, 0);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
    EXPECT_MSG(ta_blocks(&ta) == 0, "%ld blocks leaked", ta_blocks(&ta));
}

int main(void) {
    RUN(test_round_trip);
    RUN(test_compaction_killed_before_reset);
    RUN(test_nomem);
    return TL_SUMMARY("store_meta");
}
