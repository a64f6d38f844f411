/*
 * The dedup stages over whole partitions (lib/dedup/stages.c) against the
 * one-at-a-time calls they stand for: signatures, fingerprints and set
 * sizes against minlsh_shingler_hash and minlsh_family_sign; band keys
 * against minlsh_band_keys; CSR sets and their Jaccard against
 * minlsh_jaccard_sorted; candidate pairs of band records against a
 * brute-force reading of the bucket rule, with and without the cap; the
 * short-buffer protocol and argument errors.
 */
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#define N_TEXTS 6

static const char *texts_src[N_TEXTS] = {
    "the quick brown fox jumps over the lazy dog again and again",
    "the quick brown fox jumps over the lazy dog again and once more",
    "",
    "a b c",
    "completely unrelated words that share nothing with the others here",
    "the quick brown fox jumps over the lazy dog again and again",
};

static void texts_of(const void *texts[N_TEXTS], size_t lens[N_TEXTS]) {
    size_t i;
    for (i = 0; i < N_TEXTS; i++) {
        texts[i] = texts_src[i];
        lens[i] = strlen(texts_src[i]);
    }
}

static void test_sign_texts(void) {
    minlsh_shingler *sh = NULL;
    minlsh_family *fam = NULL;
    minlsh_shingleset *set = NULL;
    const void *texts[N_TEXTS];
    size_t lens[N_TEXTS], got = 0, i;
    uint32_t sigs[N_TEXTS * 64], one[64];
    uint8_t fps[N_TEXTS * 16], fp[16];
    uint64_t counts[N_TEXTS];
    int32_t status[N_TEXTS];
    texts_of(texts, lens);
    EXPECT_EQ_INT(minlsh_shingler_new(&sh, NULL, NULL), 0);
    EXPECT_EQ_INT(minlsh_family_new(&fam, 64, 7, NULL), 0);
    EXPECT_EQ_INT(minlsh_shingleset_new(&set, NULL), 0);
    EXPECT_EQ_INT(minlsh_family_sign_texts(fam, sh, texts, lens, N_TEXTS, sigs, 10, &got, NULL,
                                           NULL, NULL, NULL),
                  MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(got, N_TEXTS * 64);
    EXPECT_EQ_INT(minlsh_family_sign_texts(fam, sh, texts, lens, N_TEXTS, sigs,
                                           N_TEXTS * 64, &got, fps, counts, status, NULL),
                  0);
    for (i = 0; i < N_TEXTS; i++) {
        EXPECT_EQ_INT(minlsh_shingler_hash(sh, texts[i], lens[i], set, fp), 0);
        EXPECT_EQ_INT(minlsh_family_sign(fam, minlsh_shingleset_view_hashes(set),
                                         minlsh_shingleset_count(set), one, 64, NULL),
                      0);
        EXPECT(memcmp(one, sigs + i * 64, sizeof one) == 0);
        EXPECT(memcmp(fp, fps + i * 16, 16) == 0);
        EXPECT_EQ_U64(counts[i], minlsh_shingleset_count(set));
        EXPECT_EQ_INT(status[i], 0);
    }
    EXPECT_EQ_U64(counts[2], 0);
    EXPECT(memcmp(fps, fps + 5 * 16, 16) == 0);
    EXPECT(memcmp(fps, fps + 16, 16) != 0);
    EXPECT_EQ_INT(minlsh_family_sign_texts(NULL, sh, texts, lens, N_TEXTS, sigs, N_TEXTS * 64,
                                           NULL, NULL, NULL, NULL, NULL),
                  MINLSH_E_NULL);
    minlsh_shingleset_free(set);
    minlsh_family_free(fam);
    minlsh_shingler_free(sh);
}

static void test_sign_texts_too_big(void) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    minlsh_family *fam = NULL;
    const void *texts[N_TEXTS];
    size_t lens[N_TEXTS], i;
    uint32_t sigs[N_TEXTS * 16];
    uint64_t counts[N_TEXTS];
    int32_t status[N_TEXTS];
    texts_of(texts, lens);
    o.max_document_bytes = 10;
    EXPECT_EQ_INT(minlsh_shingler_new(&sh, &o, NULL), 0);
    EXPECT_EQ_INT(minlsh_family_new(&fam, 16, 1, NULL), 0);
    EXPECT_EQ_INT(minlsh_family_sign_texts(fam, sh, texts, lens, N_TEXTS, sigs, N_TEXTS * 16,
                                           NULL, NULL, counts, status, NULL),
                  MINLSH_E_TOOBIG);
    EXPECT_EQ_INT(status[0], MINLSH_E_TOOBIG);
    EXPECT_EQ_INT(status[3], 0);
    EXPECT_EQ_U64(counts[3], 1);
    for (i = 0; i < 16; i++) EXPECT_EQ_U64(sigs[i], MINLSH_EMPTY_VALUE);
    minlsh_family_free(fam);
    minlsh_shingler_free(sh);
}

static void test_band_keys(void) {
    uint32_t sigs[5 * 24];
    uint64_t keys[5 * 4], one[4];
    size_t i, got = 0;
    for (i = 0; i < 5 * 24; i++) sigs[i] = (uint32_t)(i * 2654435761u);
    EXPECT_EQ_INT(minlsh_signatures_band_keys(sigs, 5, 24, 4, 6, keys, 19, &got),
                  MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(got, 20);
    EXPECT_EQ_INT(minlsh_signatures_band_keys(sigs, 5, 24, 4, 6, keys, 20, &got), 0);
    for (i = 0; i < 5; i++) {
        EXPECT_EQ_INT(minlsh_band_keys(sigs + i * 24, 24, 4, 6, one, 4, NULL), 0);
        EXPECT(memcmp(one, keys + i * 4, sizeof one) == 0);
    }
    EXPECT_EQ_INT(minlsh_signatures_band_keys(sigs, 5, 24, 5, 5, keys, 25, NULL), MINLSH_E_PARAM);
    EXPECT_EQ_INT(minlsh_signatures_band_keys(NULL, 5, 24, 4, 6, keys, 20, NULL), MINLSH_E_NULL);
}

static void test_sets_and_jaccard(void) {
    minlsh_shingler *sh = NULL;
    minlsh_shingleset *x = NULL, *y = NULL;
    const void *texts[N_TEXTS];
    size_t lens[N_TEXTS], got = 0, i;
    uint64_t offsets[N_TEXTS + 1], hashes[200], a[4] = {0, 0, 2, 1}, b[4] = {1, 5, 3, 4};
    double sim[4], want;
    texts_of(texts, lens);
    EXPECT_EQ_INT(minlsh_shingler_new(&sh, NULL, NULL), 0);
    EXPECT_EQ_INT(minlsh_shingleset_new(&x, NULL), 0);
    EXPECT_EQ_INT(minlsh_shingleset_new(&y, NULL), 0);
    EXPECT_EQ_INT(minlsh_shingler_hash_texts(sh, texts, lens, N_TEXTS, offsets, hashes, 3, &got,
                                             NULL, NULL),
                  MINLSH_E_BUFSIZE);
    EXPECT(got > 3 && got <= 200);
    EXPECT_EQ_INT(minlsh_shingler_hash_texts(sh, texts, lens, N_TEXTS, offsets, hashes, got,
                                             &got, NULL, NULL),
                  0);
    EXPECT_EQ_U64(offsets[N_TEXTS], got);
    EXPECT_EQ_U64(offsets[3], offsets[2]); /* the empty text */
    EXPECT_EQ_INT(minlsh_sets_jaccard(offsets, hashes, N_TEXTS, a, b, 4, sim), 0);
    for (i = 0; i < 4; i++) {
        EXPECT_EQ_INT(minlsh_shingler_hash(sh, texts[a[i]], lens[a[i]], x, NULL), 0);
        EXPECT_EQ_INT(minlsh_shingler_hash(sh, texts[b[i]], lens[b[i]], y, NULL), 0);
        EXPECT_EQ_INT(minlsh_shingleset_jaccard(&want, x, y), 0);
        EXPECT_MSG(sim[i] == want, "pair %zu: %.17g, expected %.17g", i, sim[i], want);
    }
    EXPECT(sim[1] == 1.0 && sim[0] > 0.5 && sim[0] < 1.0);
    b[3] = N_TEXTS;
    EXPECT_EQ_INT(minlsh_sets_jaccard(offsets, hashes, N_TEXTS, a, b, 4, sim), MINLSH_E_NOTFOUND);
    b[3] = 4;
    hashes[1] = hashes[0]; /* set 0 no longer strictly increasing */
    EXPECT_EQ_INT(minlsh_sets_jaccard(offsets, hashes, N_TEXTS, a, b, 1, sim), MINLSH_E_PARAM);
    minlsh_shingleset_free(x);
    minlsh_shingleset_free(y);
    minlsh_shingler_free(sh);
}

/* Brute force: is (x, y) in some bucket of at most cap members? */
#define NREC 400
static int brute_pair(const uint32_t *bands, const uint64_t *keys, const uint64_t *docs,
                      uint64_t x, uint64_t y, uint64_t cap) {
    size_t i, j;
    for (i = 0; i < NREC; i++) {
        if (docs[i] != x) continue;
        for (j = 0; j < NREC; j++) {
            size_t l, m;
            uint64_t members[NREC];
            size_t n_members = 0;
            if (docs[j] != y || bands[j] != bands[i] || keys[j] != keys[i]) continue;
            for (l = 0; l < NREC; l++) {
                if (bands[l] != bands[i] || keys[l] != keys[i]) continue;
                for (m = 0; m < n_members && members[m] != docs[l]; m++) {
                }
                if (m == n_members) members[n_members++] = docs[l];
            }
            if (cap == 0 || n_members <= cap) return 1;
        }
    }
    return 0;
}

static void test_buckets_pair(void) {
    uint32_t bands[NREC];
    uint64_t keys[NREC], docs[NREC], a[NREC * NREC / 2], b[NREC * NREC / 2], capped[300];
    size_t i, n = 0, n_capped = 0, x, y, found;
    uint64_t cap;
    uint32_t state = 12345;
    for (i = 0; i < NREC; i++) {
        state = state * 1103515245u + 12345u;
        bands[i] = (state >> 16) % 3;
        state = state * 1103515245u + 12345u;
        keys[i] = (state >> 16) % 9 == 0 ? UINT64_C(0xFFFFFFFFFFFFFFF0) : (state >> 16) % 40;
        state = state * 1103515245u + 12345u;
        docs[i] = (state >> 16) % 60;
    }
    for (cap = 0; cap <= 8; cap += 4) {
        EXPECT_EQ_INT(minlsh_buckets_pair(bands, keys, docs, NREC, cap, a, b, 0, &n, capped, 0,
                                          &n_capped, NULL),
                      n > 0 || n_capped > 0 ? MINLSH_E_BUFSIZE : 0);
        EXPECT_EQ_INT(minlsh_buckets_pair(bands, keys, docs, NREC, cap, a, b, NREC * NREC / 2,
                                          &n, capped, 300, &n_capped, NULL),
                      0);
        EXPECT(n > 0);
        EXPECT_EQ_U64(n_capped > 0, cap != 0);
        for (i = 0; i < n; i++) {
            EXPECT(a[i] < b[i]);
            if (i > 0) EXPECT(a[i - 1] < a[i] || (a[i - 1] == a[i] && b[i - 1] < b[i]));
        }
        for (i = 0; i < n_capped; i++) EXPECT(capped[3 * i + 2] > cap);
        found = 0;
        for (x = 0; x < 60; x++)
            for (y = x + 1; y < 60; y++) {
                int want = brute_pair(bands, keys, docs, x, y, cap) ||
                           brute_pair(bands, keys, docs, y, x, cap);
                int got = 0;
                for (i = 0; i < n && !got; i++) got = a[i] == x && b[i] == y;
                EXPECT_MSG(got == want, "cap %u pair (%zu, %zu): %d, expected %d",
                           (unsigned)cap, x, y, got, want);
                found += (size_t)got;
            }
        EXPECT_EQ_U64(found, n);
    }
    EXPECT_EQ_INT(minlsh_buckets_pair(NULL, keys, docs, NREC, 0, a, b, 10, &n, NULL, 0, NULL,
                                      NULL),
                  MINLSH_E_NULL);
    EXPECT_EQ_INT(minlsh_buckets_pair(bands, keys, docs, 0, 0, NULL, NULL, 0, &n, NULL, 0,
                                      &n_capped, NULL),
                  0);
    EXPECT_EQ_U64(n, 0);
}

/* Every allocation of the three calls that allocate, failed in turn: the
 * call returns MINLSH_E_NOMEM and leaks nothing; once no failure is
 * injected, the result equals the reference. */
static void test_allocation_failures(void) {
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_shingler *sh = NULL;
    minlsh_family *fam = NULL;
    const void *texts[N_TEXTS];
    size_t lens[N_TEXTS], n = 0, n_capped = 0;
    uint32_t sigs[N_TEXTS * 16], want_sigs[N_TEXTS * 16];
    uint64_t offsets[N_TEXTS + 1], hashes[200], want_hashes[200];
    uint32_t bands[64];
    uint64_t keys[64], docs[64], a[2100], b[2100], want_a[2100], capped[30];
    size_t i, want_n = 0;
    int which;
    texts_of(texts, lens);
    EXPECT_EQ_INT(minlsh_shingler_new(&sh, NULL, NULL), 0);
    EXPECT_EQ_INT(minlsh_family_new(&fam, 16, 3, NULL), 0);
    for (i = 0; i < 64; i++) {
        bands[i] = (uint32_t)(i % 2);
        keys[i] = i % 5;
        docs[i] = i;
    }
    EXPECT_EQ_INT(minlsh_family_sign_texts(fam, sh, texts, lens, N_TEXTS, want_sigs,
                                           N_TEXTS * 16, NULL, NULL, NULL, NULL, NULL),
                  0);
    EXPECT_EQ_INT(minlsh_shingler_hash_texts(sh, texts, lens, N_TEXTS, offsets, want_hashes, 200,
                                             NULL, NULL, NULL),
                  0);
    EXPECT_EQ_INT(minlsh_buckets_pair(bands, keys, docs, 64, 0, want_a, b, 2100, &want_n,
                                      capped, 30, &n_capped, NULL),
                  0);
    for (which = 0; which < 3; which++) {
        long nth, failures = 0;
        for (nth = 1; nth < 1000; nth++) {
            int rc;
            ta_fail_nth(&ta, nth);
            if (which == 0)
                rc = minlsh_family_sign_texts(fam, sh, texts, lens, N_TEXTS, sigs, N_TEXTS * 16,
                                              NULL, NULL, NULL, NULL, &al);
            else if (which == 1)
                rc = minlsh_shingler_hash_texts(sh, texts, lens, N_TEXTS, offsets, hashes, 200,
                                                NULL, NULL, &al);
            else
                rc = minlsh_buckets_pair(bands, keys, docs, 64, 0, a, b, 2100, &n, capped, 30,
                                         &n_capped, &al);
            EXPECT_MSG(ta_blocks(&ta) == 0, "call %d, allocation %ld: %ld blocks leaked", which,
                       nth, (long)ta_blocks(&ta));
            if (ta_failed(&ta) == 0) {
                EXPECT_EQ_INT(rc, 0);
                if (which == 0) EXPECT(memcmp(sigs, want_sigs, sizeof sigs) == 0);
                if (which == 1) EXPECT(memcmp(hashes, want_hashes, offsets[N_TEXTS] * 8) == 0);
                if (which == 2) {
                    EXPECT_EQ_U64(n, want_n);
                    EXPECT(memcmp(a, want_a, n * sizeof *a) == 0);
                }
                break;
            }
            failures++;
            EXPECT_MSG(rc == MINLSH_E_NOMEM, "call %d, allocation %ld: %d", which, nth, rc);
        }
        EXPECT_MSG(failures > 0, "call %d never allocated", which);
    }
    ta_fail_nth(&ta, 0);
    minlsh_family_free(fam);
    minlsh_shingler_free(sh);
}

/* alloc NULL: the temporaries come from the shingler's allocator, as
 * minlsh_family_sign_batch's do: the same allocations as when the
 * shingler's allocator is passed explicitly. */
static void test_null_allocator_is_the_shinglers(void) {
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_shingler *sh = NULL;
    minlsh_family *fam = NULL;
    const char *texts[2] = {"one two three four five six seven", "a b c d e f g h"};
    size_t lens[2] = {33, 15}, n = 0, cap = 64;
    uint32_t sigs[2 * 16];
    uint64_t offsets[3], hashes[64];
    long given, null;
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, &al));
    EXPECT_OK(minlsh_family_new(&fam, 16, 1, NULL));
    given = atomic_load(&ta.calls);
    EXPECT_OK(minlsh_family_sign_texts(fam, sh, (const void *const *)texts, lens, 2, sigs,
                                       2 * 16, &n, NULL, NULL, NULL, &al));
    given = atomic_load(&ta.calls) - given;
    null = atomic_load(&ta.calls);
    EXPECT_OK(minlsh_family_sign_texts(fam, sh, (const void *const *)texts, lens, 2, sigs,
                                       2 * 16, &n, NULL, NULL, NULL, NULL));
    null = atomic_load(&ta.calls) - null;
    EXPECT_MSG(given > 0 && null == given, "sign_texts: %ld allocations from the shingler's "
               "allocator with alloc NULL, %ld with it given", null, given);
    given = atomic_load(&ta.calls);
    EXPECT_OK(minlsh_shingler_hash_texts(sh, (const void *const *)texts, lens, 2, offsets,
                                         hashes, cap, &n, NULL, &al));
    given = atomic_load(&ta.calls) - given;
    null = atomic_load(&ta.calls);
    EXPECT_OK(minlsh_shingler_hash_texts(sh, (const void *const *)texts, lens, 2, offsets,
                                         hashes, cap, &n, NULL, NULL));
    null = atomic_load(&ta.calls) - null;
    EXPECT_MSG(given > 0 && null == given, "hash_texts: %ld allocations from the shingler's "
               "allocator with alloc NULL, %ld with it given", null, given);
    minlsh_family_free(fam);
    minlsh_shingler_free(sh);
    EXPECT_MSG(ta_blocks(&ta) == 0, "%ld blocks leaked", (long)ta_blocks(&ta));
}

int main(void) {
    RUN(test_sign_texts);
    RUN(test_sign_texts_too_big);
    RUN(test_band_keys);
    RUN(test_sets_and_jaccard);
    RUN(test_buckets_pair);
    RUN(test_allocation_failures);
    RUN(test_null_allocator_is_the_shinglers);
    return TL_SUMMARY("stages");
}
