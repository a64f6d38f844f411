/*
 * The shingle layer: units, normalisation, HTML, short documents, stop
 * words, fingerprints, config ids, limits, errors and allocation failures,
 * and above all "streaming equals one-shot" at every split point.
 *
 * Expected hashes are computed here from the message bytes the
 * specification (docs/shingling.md) says each shingle has, with
 * minlsh_siphash24; a small reference shingler written independently of
 * lib/shingle (whole-document, no state machine) checks random documents.
 */
#include "testalloc.h"
#include "testlib.h"

#include <minlsh.h>

#include "shingle/shingle.h"

/* ---- helpers ---------------------------------------------------------------- */

#define LIT(s) (s), (sizeof(s) - 1) /* a literal and its length (NULs allowed) */

static uint64_t H(const void *msg, size_t n) {
    uint64_t h = 0;
    minlsh_siphash24(&h, minlsh_default_key(), msg, n);
    return h;
}

static void H128(uint8_t out[16], const void *msg, size_t n) {
    minlsh_siphash24_128(out, minlsh_default_key(), msg, n);
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sort and dedup with qsort: the tests' own, independent of the library. */
static size_t sort_unique(uint64_t *v, size_t n) {
    size_t i, m = 0;
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    for (i = 0; i < n; i++)
        if (m == 0 || v[i] != v[m - 1]) v[m++] = v[i];
    return m;
}

static minlsh_shingler *mk(uint32_t unit, uint32_t k, uint32_t flags) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *s = NULL;
    o.unit = unit;
    o.k = k;
    o.flags = flags;
    if (minlsh_shingler_new(&s, &o, NULL) != 0) return NULL;
    return s;
}

static minlsh_shingler *mk_stop(uint32_t k, uint32_t flags, const char *list) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *s = NULL;
    o.unit = MINLSH_UNIT_STOPWORD;
    o.k = k;
    o.flags = flags;
    o.stopwords = list;
    o.stopwords_len = list ? strlen(list) : 0;
    if (minlsh_shingler_new(&s, &o, NULL) != 0) return NULL;
    return s;
}

static int set_is(const minlsh_shingleset *set, const uint64_t *want, size_t n) {
    const uint64_t *d = minlsh_shingleset_view_hashes(set);
    return minlsh_shingleset_count(set) == n &&
           (n == 0 || memcmp(d, want, n * sizeof *want) == 0);
}

/* The shingles of text must be exactly the n messages (C strings). */
static void check_msgs(int line, const minlsh_shingler *sh, const void *text,
                       size_t len, const char *const *msgs, size_t n) {
    uint64_t want[64];
    minlsh_shingleset *set = NULL;
    size_t i, m;
    int rc;
    for (i = 0; i < n; i++) want[i] = H(msgs[i], strlen(msgs[i]));
    m = sort_unique(want, n);
    minlsh_shingleset_new(&set, NULL);
    rc = minlsh_shingler_hash(sh, text, len, set, NULL);
    if (rc != 0 || !set_is(set, want, m)) {
        TL_FAIL("line %d: rc %d, %zu shingles, expected %zu", line, rc,
                minlsh_shingleset_count(set), m);
        for (i = 0; i < minlsh_shingleset_count(set); i++)
            printf("    got %016" PRIx64 "\n", minlsh_shingleset_view_hashes(set)[i]);
        for (i = 0; i < n; i++)
            printf("    want %016" PRIx64 " \"%s\"\n", H(msgs[i], strlen(msgs[i])), msgs[i]);
    }
    minlsh_shingleset_free(set);
}

#define CHECK(sh, text, ...)                                                   \
    do {                                                                       \
        static const char *const msgs_[] = {__VA_ARGS__};                     \
        check_msgs(__LINE__, (sh), (text), strlen(text), msgs_,                \
                   sizeof msgs_ / sizeof msgs_[0]);                            \
    } while (0)
#define CHECK_EMPTY(sh, text) check_msgs(__LINE__, (sh), (text), strlen(text), NULL, 0)

/* Feed text to a stream in the given pieces, finish, compare with want. */
static int stream_agrees(minlsh_shinglestream *st, const uint8_t *text,
                         const size_t *cuts, size_t ncuts, size_t len,
                         minlsh_shingleset *scratch, const minlsh_shingleset *want,
                         const uint8_t wantfp[16]) {
    uint8_t fp[16];
    size_t prev = 0, i;
    for (i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        if (minlsh_shinglestream_feed(st, text + prev, end - prev) != 0) return 0;
        prev = end;
    }
    if (minlsh_shinglestream_bytes(st) != len) return 0;
    if (minlsh_shinglestream_finish(st, scratch, fp) != 0) return 0;
    if (minlsh_shinglestream_bytes(st) != 0) return 0;
    return set_is(scratch, minlsh_shingleset_view_hashes(want), minlsh_shingleset_count(want)) &&
           memcmp(fp, wantfp, 16) == 0;
}

/* Normalisation seen through BYTE (or CODEPOINT) units with k = 64: the
 * fingerprint is SipHash-128 of the unit stream, and one shorter than 64
 * bytes is one shingle of all of it (none if empty). Also checks the stream,
 * fed one byte at a time. */
static void check_norm(int line, uint32_t unit, uint32_t flags, const char *in,
                       size_t inlen, const char *want, size_t wantlen) {
    minlsh_shingler *sh = mk(unit, 64, flags);
    minlsh_shingleset *set = NULL, *set2 = NULL;
    minlsh_shinglestream *st = NULL;
    uint8_t fp[16], wfp[16];
    uint64_t h = H(want, wantlen);
    size_t i;
    int ok = 1;
    minlsh_shingleset_new(&set, NULL);
    minlsh_shingleset_new(&set2, NULL);
    H128(wfp, want, wantlen);
    if (minlsh_shingler_hash(sh, in, inlen, set, fp) != 0) ok = 0;
    if (memcmp(fp, wfp, 16) != 0) ok = 0;
    if (wantlen == 0 && minlsh_shingleset_count(set) != 0) ok = 0;
    /* fewer than 64 bytes, so fewer than 64 units: one shingle */
    if (wantlen > 0 && wantlen < 64 && !set_is(set, &h, 1)) ok = 0;
    if (minlsh_shinglestream_new(&st, sh, NULL) != 0) ok = 0;
    for (i = 0; st != NULL && i < inlen; i++)
        if (minlsh_shinglestream_feed(st, in + i, 1) != 0) ok = 0;
    if (st == NULL || minlsh_shinglestream_finish(st, set2, fp) != 0) ok = 0;
    if (memcmp(fp, wfp, 16) != 0) ok = 0;
    if (!set_is(set2, minlsh_shingleset_view_hashes(set), minlsh_shingleset_count(set))) ok = 0;
    if (!ok) {
        TL_FAIL("line %d: normalisation of \"%.*s\" (flags %x) is not \"%.*s\"", line,
                (int)inlen, in, flags, (int)wantlen, want);
    }
    minlsh_shinglestream_free(st);
    minlsh_shingleset_free(set);
    minlsh_shingleset_free(set2);
    minlsh_shingler_free(sh);
}

#define NORM(flags, in, want)                                                  \
    check_norm(__LINE__, MINLSH_UNIT_BYTE, (flags), LIT(in), LIT(want))
#define CPNORM(flags, in, want)                                                \
    check_norm(__LINE__, MINLSH_UNIT_CODEPOINT, (flags), LIT(in), LIT(want))

/* ---- options and construction ------------------------------------------------ */

static void test_options_and_defaults(void) {
    minlsh_shingler_options o;
    minlsh_shingler *s = NULL;
    memset(&o, 0xAB, sizeof o);
    EXPECT_ERR(minlsh_shingler_options_init(NULL, 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shingler_options_init(&o, 0), MINLSH_E_VERSION);
    EXPECT_ERR(minlsh_shingler_options_init(&o, 3), MINLSH_E_VERSION);
    EXPECT_EQ_INT(MINLSH_SHINGLER_OPTIONS_VERSION, 2);
    /* version 1's defaults: no flag, as a program built against it has */
    EXPECT_OK(minlsh_shingler_options_init(&o, 1));
    EXPECT_EQ_INT(o.version, 1);
    EXPECT_EQ_INT(o.unit, MINLSH_UNIT_WORD);
    EXPECT_EQ_INT(o.k, 5);
    EXPECT_EQ_INT(o.flags, 0);
    EXPECT(o.key == NULL && o.stopwords == NULL);
    EXPECT_EQ_INT(o.stopwords_len, 0);
    EXPECT_EQ_U64(o.max_document_bytes, 0);
    EXPECT(memcmp(minlsh_default_key(), "minlsh:shingles!", 16) == 0);
    /* version 2's: words of their own for unspaced scripts, else the same */
    memset(&o, 0xAB, sizeof o);
    EXPECT_OK(minlsh_shingler_options_init(&o, 2));
    EXPECT_EQ_INT(o.version, 2);
    EXPECT_EQ_INT(o.unit, MINLSH_UNIT_WORD);
    EXPECT_EQ_INT(o.k, 5);
    EXPECT_EQ_INT(o.flags, MINLSH_NORM_CJK_WORDS);
    EXPECT(o.key == NULL && o.stopwords == NULL);
    EXPECT_EQ_INT(o.stopwords_len, 0);
    EXPECT_EQ_U64(o.max_document_bytes, 0);
    {
        const minlsh_shingler_options init = MINLSH_SHINGLER_OPTIONS_INIT;
        EXPECT(memcmp(&init, &o, sizeof o) == 0);
    }

    /* NULL options: version 1's defaults, so callers that pass NULL keep
     * their hashes */
    EXPECT_OK(minlsh_shingler_new(&s, NULL, NULL));
    EXPECT_EQ_INT(minlsh_shingler_unit(s), MINLSH_UNIT_WORD);
    EXPECT_EQ_INT(minlsh_shingler_k(s), 5);
    EXPECT_EQ_INT(minlsh_shingler_flags(s), 0);
    EXPECT(minlsh__shingler_allocator(s) != NULL);
    minlsh_shingler_free(s);
    EXPECT_EQ_INT(minlsh_shingler_unit(NULL), 0);
    EXPECT_EQ_INT(minlsh_shingler_k(NULL), 0);
    EXPECT_EQ_INT(minlsh_shingler_flags(NULL), 0);
    EXPECT(minlsh__shingler_allocator(NULL) == NULL);
    minlsh_shingler_free(NULL);

    s = mk(MINLSH_UNIT_CODEPOINT, 64, MINLSH_NORM_ALL);
    EXPECT(s != NULL);
    EXPECT_EQ_INT(minlsh_shingler_unit(s), MINLSH_UNIT_CODEPOINT);
    EXPECT_EQ_INT(minlsh_shingler_k(s), 64);
    EXPECT_EQ_INT(minlsh_shingler_flags(s), MINLSH_NORM_ALL);
    minlsh_shingler_free(s);
}

static void test_constructor_errors(void) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *s = (minlsh_shingler *)&o; /* must become NULL */
    testalloc ta;
    minlsh_allocator bad1 = ta_allocator(&ta), bad2 = bad1;
    minlsh_shingleset *set = (minlsh_shingleset *)&o;
    uint64_t id;

    bad1.alloc = NULL; /* one function missing, either one */
    bad2.free = NULL;
    EXPECT_ERR(minlsh_shingler_new(NULL, NULL, NULL), MINLSH_E_NULL);
    o.k = 0;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    EXPECT(s == NULL);
    o.k = 65;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.k = 64;
    EXPECT_OK(minlsh_shingler_new(&s, &o, NULL));
    minlsh_shingler_free(s);
    o.k = 5;
    o.unit = 0;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.unit = 5;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.unit = MINLSH_UNIT_WORD;
    o.flags = 0x400; /* the first bit no flag has */
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.flags = 0x80000000u;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.flags = 0;
    o.version = 0;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_VERSION);
    o.version = 3;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_VERSION);
    o.version = 1; /* one layout: both versions read every field */
    EXPECT_OK(minlsh_shingler_new(&s, &o, NULL));
    minlsh_shingler_free(s);
    o.version = 2;
    EXPECT_OK(minlsh_shingler_new(&s, &o, NULL));
    minlsh_shingler_free(s);
    o.version = 1;
    /* empty stop-word lists, for the STOPWORD unit and any other */
    o.unit = MINLSH_UNIT_STOPWORD;
    o.stopwords = "";
    o.stopwords_len = 0;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.stopwords = " \t\n\v\f\r ";
    o.stopwords_len = strlen(o.stopwords);
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.stopwords = "don't e-mail ,,,";  /* no entry could ever match a word */
    o.stopwords_len = strlen(o.stopwords);
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.unit = MINLSH_UNIT_WORD;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.stopwords = "the";
    o.stopwords_len = 0; /* a length of 0 is an empty list */
    EXPECT_ERR(minlsh_shingler_new(&s, &o, NULL), MINLSH_E_PARAM);
    o.stopwords = NULL;
    EXPECT_ERR(minlsh_shingler_new(&s, &o, &bad1), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_shingler_new(&s, &o, &bad2), MINLSH_E_PARAM);
    EXPECT(s == NULL);
    EXPECT_ERR(minlsh_shingleset_new(&set, &bad1), MINLSH_E_PARAM);
    EXPECT(set == NULL);
    EXPECT_ERR(minlsh_shingleset_new(NULL, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shingler_config_id(&id, NULL), MINLSH_E_NULL);
    EXPECT_OK(minlsh_shingler_new(&s, NULL, NULL));
    EXPECT_ERR(minlsh_shingler_config_id(NULL, s), MINLSH_E_NULL);
    minlsh_shingler_free(s);
}

/* ---- units -------------------------------------------------------------------- */

static void test_word_units(void) {
    minlsh_shingler *w3 = mk(MINLSH_UNIT_WORD, 3, 0);
    minlsh_shingler *w3c = mk(MINLSH_UNIT_WORD, 3, MINLSH_NORM_CASEFOLD);
    minlsh_shingler *w1 = mk(MINLSH_UNIT_WORD, 1, 0);
    minlsh_shingler *w1p = mk(MINLSH_UNIT_WORD, 1, MINLSH_NORM_PUNCT);
    minlsh_shingler *w2 = mk(MINLSH_UNIT_WORD, 2, 0);

    CHECK(w3, "The quick brown fox jumps", "The quick brown", "quick brown fox",
          "brown fox jumps");
    CHECK(w3c, "The quick brown fox jumps", "the quick brown", "quick brown fox",
          "brown fox jumps");
    /* any non-word byte separates; separators never reach a message */
    CHECK(w3, "  The, quick...\tbrown!\n(fox) ", "The quick brown", "quick brown fox");
    /* repeats collapse in the set */
    CHECK(w1, "a b a b a", "a", "b");
    CHECK(w2, "a b a b a", "a b", "b a");
    /* punctuation: a separator without PUNCT, deleted (joining) with it */
    CHECK(w1, "don't e-mail x.y", "don", "t", "e", "mail", "x", "y");
    CHECK(w1p, "don't e-mail x.y", "dont", "email", "xy");
    CHECK(w1p, "a - b", "a", "b");
    /* digits are word bytes; UTF-8 words stay whole (bytes >= 0x80) */
    CHECK(w1, "route 66 caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC", "route", "66",
          "caf\xC3\xA9", "na\xC3\xAFve", "\xE6\x97\xA5\xE6\x9C\xAC");
    /* a lone invalid byte >= 0x80 is a word byte too */
    CHECK(w1, "a\xFF" "b c", "a\xFF" "b", "c");
    minlsh_shingler_free(w3);
    minlsh_shingler_free(w3c);
    minlsh_shingler_free(w1);
    minlsh_shingler_free(w1p);
    minlsh_shingler_free(w2);
}

static void test_nul_bytes(void) {
    minlsh_shingler *w1 = mk(MINLSH_UNIT_WORD, 1, 0);
    minlsh_shingler *b2 = mk(MINLSH_UNIT_BYTE, 2, 0);
    minlsh_shingler *c2 = mk(MINLSH_UNIT_CODEPOINT, 2, 0);
    minlsh_shingleset *set = NULL;
    uint64_t want[3];
    minlsh_shingleset_new(&set, NULL);
    /* word mode: NUL separates */
    EXPECT_OK(minlsh_shingler_hash(w1, LIT("ab\0cd\0\0"), set, NULL));
    want[0] = H("ab", 2);
    want[1] = H("cd", 2);
    EXPECT(set_is(set, want, sort_unique(want, 2)));
    /* byte and code-point modes: NUL is an ordinary unit */
    EXPECT_OK(minlsh_shingler_hash(b2, LIT("a\0b"), set, NULL));
    want[0] = H("a\0", 2);
    want[1] = H("\0b", 2);
    EXPECT(set_is(set, want, sort_unique(want, 2)));
    EXPECT_OK(minlsh_shingler_hash(c2, LIT("a\0b"), set, NULL));
    EXPECT(set_is(set, want, 2));
    NORM(MINLSH_NORM_ALL, "a\0 \0B", "a\0 \0b");
    minlsh_shingleset_free(set);
    minlsh_shingler_free(w1);
    minlsh_shingler_free(b2);
    minlsh_shingler_free(c2);
}

static void test_byte_units(void) {
    minlsh_shingler *b2 = mk(MINLSH_UNIT_BYTE, 2, 0);
    minlsh_shingler *b3w = mk(MINLSH_UNIT_BYTE, 3, MINLSH_NORM_WHITESPACE);
    minlsh_shingler *b1 = mk(MINLSH_UNIT_BYTE, 1, MINLSH_NORM_CASEFOLD);
    CHECK(b2, "abcd", "ab", "bc", "cd");
    CHECK(b2, "abab", "ab", "ba");
    CHECK(b3w, "  a \t b\n\n", "a b");
    CHECK(b3w, "  ab \t cd\n\n", "ab ", "b c", " cd");
    CHECK(b1, "AbA", "a", "b");
    /* bytes are bytes: a multi-byte character is split */
    CHECK(b2, "\xC3\xA9" "a", "\xC3\xA9", "\xA9" "a");
    minlsh_shingler_free(b2);
    minlsh_shingler_free(b3w);
    minlsh_shingler_free(b1);
}

static void test_codepoint_units(void) {
    minlsh_shingler *c2 = mk(MINLSH_UNIT_CODEPOINT, 2, 0);
    minlsh_shingler *c1 = mk(MINLSH_UNIT_CODEPOINT, 1, 0);
    CHECK(c2, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "a\xC3\xA9", "\xC3\xA9\xE2\x82\xAC",
          "\xE2\x82\xAC\xF0\x9F\x98\x80");
    /* invalid bytes become U+FFFD (EF BF BD), one per byte */
    CHECK(c2, "a\xFF" "b", "a\xEF\xBF\xBD", "\xEF\xBF\xBD" "b");
    CHECK(c1, "\xC3(\x80", "\xEF\xBF\xBD", "(");
    minlsh_shingler_free(c2);
    minlsh_shingler_free(c1);
}

/* The exact code-point sequence decoded from invalid UTF-8. */
static void test_invalid_utf8(void) {
    CPNORM(0, "\xC0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD");                 /* overlong NUL */
    CPNORM(0, "\xC1\xBF", "\xEF\xBF\xBD\xEF\xBF\xBD");                 /* overlong */
    CPNORM(0, "\xE0\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* overlong */
    CPNORM(0, "\xE0\xA0\x80", "\xE0\xA0\x80");                         /* U+0800 */
    CPNORM(0, "\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* surrogate */
    CPNORM(0, "\xED\x9F\xBF", "\xED\x9F\xBF");                         /* U+D7FF */
    CPNORM(0, "\xF0\x8F\xBF\xBF", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    CPNORM(0, "\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF");                 /* U+10FFFF */
    CPNORM(0, "\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    CPNORM(0, "\xF5\xFE\xFF", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    CPNORM(0, "\x80\xBF" "a", "\xEF\xBF\xBD\xEF\xBF\xBD" "a");            /* lone continuations */
    CPNORM(0, "\xE2\x82", "\xEF\xBF\xBD\xEF\xBF\xBD");                 /* truncated at end */
    CPNORM(0, "\xE2\x82" "A", "\xEF\xBF\xBD\xEF\xBF\xBD" "A");            /* truncated by ASCII */
    CPNORM(0, "\xF0\x9F\x98\xF0\x9F\x98\x80",
           "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xF0\x9F\x98\x80");
    CPNORM(0, "\xC3\xC3\xA9", "\xEF\xBF\xBD\xC3\xA9");
    CPNORM(0, "\xEF\xBF\xBD", "\xEF\xBF\xBD"); /* a real U+FFFD is kept */
    /* normalisation comes first, then decoding: deleting the '.' joins the
     * bytes of a euro sign; whitespace collapsing cuts a sequence */
    CPNORM(MINLSH_NORM_PUNCT, "\xE2.\x82\xAC", "\xE2\x82\xAC");
    CPNORM(MINLSH_NORM_WHITESPACE, "\xE2  \x82\xAC", "\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD");
    CPNORM(MINLSH_NORM_WHITESPACE, "\xE2\x82  ", "\xEF\xBF\xBD\xEF\xBF\xBD");
}

/* ---- normalisation -------------------------------------------------------------- */

static void test_casefold_punct_whitespace(void) {
    NORM(0, "Hello, World!", "Hello, World!");
    NORM(MINLSH_NORM_CASEFOLD, "ABC xyz \xC3\x80" "B", "abc xyz \xC3\x80" "b");
    NORM(MINLSH_NORM_CASEFOLD, "@[`{", "@[`{"); /* neighbours of A-Z, a-z */
    NORM(MINLSH_NORM_PUNCT, "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~a", "a");
    NORM(MINLSH_NORM_PUNCT, "a\xE2\x80\x94" "b", "a\xE2\x80\x94" "b"); /* non-ASCII kept */
    NORM(MINLSH_NORM_PUNCT, "x 0-9 A_Z", "x 09 AZ");
    NORM(MINLSH_NORM_WHITESPACE, "\t a \n\v\f\r b  ", "a b");
    NORM(MINLSH_NORM_WHITESPACE, "   ", "");
    NORM(MINLSH_NORM_WHITESPACE, "a\xC2\xA0" "b", "a\xC2\xA0" "b"); /* U+00A0 is not ASCII space */
    NORM(0, "\t a \n", "\t a \n");
    /* order: punctuation is deleted before whitespace is collapsed */
    NORM(MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE, "a - b", "a b");
    NORM(MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE, ", a ,", "a");
    NORM(MINLSH_NORM_PUNCT, "a - b", "a  b");
    NORM(MINLSH_NORM_ALL, "  Hello,   WORLD!!  ", "hello world");
    NORM(MINLSH_NORM_ALL & ~MINLSH_NORM_HTML, "<B>Hi</B>", "bhib");
}

static void test_html_tags(void) {
    const uint32_t h = MINLSH_NORM_HTML, hw = MINLSH_NORM_HTML | MINLSH_NORM_WHITESPACE;
    minlsh_shingler *w1 = mk(MINLSH_UNIT_WORD, 1, MINLSH_NORM_HTML);
    NORM(h, "<p>a</p><p>b</p>", " a  b ");
    NORM(hw, "<p>a</p><p>b</p>", "a b");
    CHECK(w1, "<p>a</p><p>b</p>", "a", "b");
    CHECK(w1, "x<br/>y<BR>z", "x", "y", "z");
    NORM(h | MINLSH_NORM_CASEFOLD, "<B>X</B>", " x ");
    NORM(h, "<a href=\"x.html\" title='t'>link</a>", " link ");
    /* a quoted attribute value may contain '>' */
    NORM(h, "a<img alt=\"x>y\">b", "a b");
    NORM(h, "a<img alt = 'x>y'>b", "a b");
    NORM(h, "a<p title=x>y>b", "a y>b");    /* unquoted: the first '>' ends it */
    NORM(h, "a<p \"x>y\">b", "a y\">b");     /* a quote not after '=' is ordinary */
    /* '<' not followed by a letter, '/', '!' or '?' is text */
    NORM(h, "a < b", "a < b");
    NORM(h, "a<3 <=", "a<3 <=");
    NORM(h, "a<", "a<");
    NORM(h, "<<p>", "< ");
    NORM(h, "1<2>3", "1<2>3");
    NORM(h, "</ p>x", " x");
    NORM(h, "</>x", " x");
    NORM(h, "<!DOCTYPE html>a", " a");
    NORM(h, "<?xml version=\"1.0\"?>a", " a");
    NORM(h, "<!x>a<!>b", " a b");
    /* unterminated markup runs to the end */
    NORM(h, "a<p class=\"x", "a ");
    NORM(h, "a<p", "a ");
    NORM(h, "a</", "a ");
    /* without the flag, markup is text */
    NORM(0, "<p>&amp;</p>", "<p>&amp;</p>");
    minlsh_shingler_free(w1);
}

static void test_html_comments_scripts(void) {
    const uint32_t h = MINLSH_NORM_HTML;
    NORM(h, "a<!-- x -->b", "a b");
    NORM(h, "a<!---->b", "a b");
    NORM(h, "a<!-->b", "a b");   /* as in HTML, an empty comment */
    NORM(h, "a<!--->b", "a b");
    NORM(h, "a<!-- <p> -- > --->b", "a b");
    NORM(h, "a<!-- x --!>y -->b", "a b"); /* only "-->" ends it */
    NORM(h, "a<!-- x", "a ");
    NORM(h, "a<!-x>b", "a b");   /* not a comment: a declaration */
    /* script and style content is skipped up to the end tag */
    NORM(h, "a<script>if (a<b) x='</p>';</script>b", "a  b");
    NORM(h, "a<SCRIPT type=\"text/javascript\">x</ScRiPt >b", "a  b");
    NORM(h, "a<style>p{}</style\t>b", "a  b");
    NORM(h, "a<style media=\"x>y\">p{}</STYLE>b", "a  b");
    NORM(h, "<script>a</scriptx>b</script/>c", "  c");
    NORM(h, "<script><!--</script>x", "  x");
    NORM(h, "<script>a</style>b</script>c", "  c");
    NORM(h, "<script>a<</script>c", "  c");
    NORM(h, "<script/>x</script>y", "  y"); /* "/>" does not close a script */
    NORM(h, "a<script>xx", "a ");
    NORM(h, "a<script>xx</scrip", "a ");
    NORM(h, "a<scripts>x</scripts>b", "a x b");
    NORM(h, "a<styles>x</styles>b", "a x b");
    NORM(h, "a</script>b", "a b");
}

static void test_html_entities(void) {
    const uint32_t h = MINLSH_NORM_HTML;
    char buf[128];
    NORM(h, "&amp;&lt;&gt;&quot;&apos;&nbsp;", "&<>\"' ");
    NORM(h, "&#65;&#x42;&#X43;&#0000000068;", "ABCD");
    NORM(h, "caf&#233; &#xe9;&#xE9;", "caf\xC3\xA9 \xC3\xA9\xC3\xA9");
    NORM(h, "&#x1F600;&#x10FFFF;&#x7FF;&#x800;", "\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\xDF\xBF\xE0\xA0\x80");
    NORM(h, "&#0;&#xD800;&#xDFFF;&#x110000;", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    NORM(h, "&#99999999999999999999999;", "\xEF\xBF\xBD");
    NORM(h, "&#4294967361;&#x100000041;", "\xEF\xBF\xBD\xEF\xBF\xBD"); /* 2^32 + 65: no wrap */
    /* unknown, malformed or unterminated: literal */
    NORM(h, "&foo; &AMP; &Amp;", "&foo; &AMP; &Amp;");
    NORM(h, "&amp", "&amp");
    NORM(h, "&amp x", "&amp x");
    NORM(h, "&#; &#x; &#12a; &#xg; &#-1;", "&#; &#x; &#12a; &#xg; &#-1;");
    NORM(h, "&&amp;", "&&");
    NORM(h, "&<p>", "& ");
    NORM(h, "a & b", "a & b");
    NORM(h, "&", "&");
    /* decoded text is not parsed again */
    NORM(h, "&amp;lt; &lt;p&gt;", "&lt; <p>");
    /* entity bodies longer than 32 bytes are literal */
    snprintf(buf, sizeof buf, "&#%s65;", "00000000000000000000000000000");  /* body 32 */
    check_norm(__LINE__, MINLSH_UNIT_BYTE, h, buf, strlen(buf), "A", 1);
    snprintf(buf, sizeof buf, "&#%s65;", "000000000000000000000000000000"); /* body 33 */
    check_norm(__LINE__, MINLSH_UNIT_BYTE, h, buf, strlen(buf), buf, strlen(buf));
    /* decoded characters go through the later stages */
    NORM(h | MINLSH_NORM_CASEFOLD, "&#65;", "a");
    NORM(h | MINLSH_NORM_PUNCT, "a&amp;b&#33;", "ab");
    NORM(h | MINLSH_NORM_WHITESPACE, "a&nbsp;&nbsp; b&#32;", "a b");
    NORM(MINLSH_NORM_ALL, "<P>Caf&#201; &amp; BAR</P>", "caf\xC3\x89 bar");
}

/* ---- short and empty documents ----------------------------------------------------- */

static void test_short_and_empty(void) {
    minlsh_shingler *w3 = mk(MINLSH_UNIT_WORD, 3, 0);
    minlsh_shingler *w3h = mk(MINLSH_UNIT_WORD, 3, MINLSH_NORM_HTML | MINLSH_NORM_PUNCT);
    minlsh_shingler *b5 = mk(MINLSH_UNIT_BYTE, 5, MINLSH_NORM_WHITESPACE);
    minlsh_shingler *c5 = mk(MINLSH_UNIT_CODEPOINT, 5, 0);
    minlsh_shingleset *set = NULL;
    uint8_t fp[16], want[16];
    CHECK(w3, "one two", "one two");
    CHECK(w3, ",one,,two,", "one two");
    CHECK(w3, "one", "one");
    CHECK(w3, "one two three", "one two three");
    CHECK_EMPTY(w3, "");
    CHECK_EMPTY(w3, " ,;- \t\n");
    CHECK_EMPTY(w3h, "<p>...</p><!-- words -->&amp;<script>x y z</script>");
    CHECK(b5, "  ab  c ", "ab c");
    CHECK_EMPTY(b5, " \t ");
    CHECK(c5, "\xC3\xA9t\xC3\xA9", "\xC3\xA9t\xC3\xA9");
    CHECK(c5, "\xFF", "\xEF\xBF\xBD");
    /* the empty document: empty set, fingerprint of the empty message */
    minlsh_shingleset_new(&set, NULL);
    EXPECT_OK(minlsh_shingleset_assign(set, (const uint64_t[]){1, 2}, 2));
    EXPECT_OK(minlsh_shingler_hash(w3, NULL, 0, set, fp));
    EXPECT_EQ_INT(minlsh_shingleset_count(set), 0);
    EXPECT(minlsh_shingleset_view_hashes(set) == NULL);
    H128(want, "", 0);
    EXPECT(memcmp(fp, want, 16) == 0);
    minlsh_shingleset_free(set);
    minlsh_shingler_free(w3);
    minlsh_shingler_free(w3h);
    minlsh_shingler_free(b5);
    minlsh_shingler_free(c5);
}

/* ---- stop words ----------------------------------------------------------------------- */

static void test_stopwords(void) {
    minlsh_shingler *s3 = mk_stop(3, 0, NULL);
    minlsh_shingler *s1 = mk_stop(1, 0, NULL);
    minlsh_shingler *c2 = mk_stop(2, 0, "cat  DOG\n\tdon't");
    minlsh_shingler *c2u = mk_stop(2, MINLSH_NORM_CASEFOLD, "cat dog");
    EXPECT(s3 && s1 && c2 && c2u);
    /* each stop word (any case) and the two words after it */
    CHECK(s3, "The cat sat on the mat with a hat", "The cat sat", "on the mat",
          "the mat with", "with a hat");
    CHECK(s1, "The cat sat on THE mat", "The", "on", "THE");
    /* the built-in list: a sample of what is and is not in it */
    CHECK(s1, "and of is was which would because however cat house green",
          "and", "of", "is", "was", "which", "would", "because");
    /* a custom list replaces it; entries with non-word bytes are ignored */
    CHECK(c2, "The Cat sat; a dog barked at the CAT", "Cat sat", "dog barked");
    CHECK(c2u, "The Cat sat; a dog barked at the CAT", "cat sat", "dog barked");
    /* no stop word at all, or none with k-1 words after it: one shingle of
     * all the words */
    CHECK(s3, "quick brown foxes jump", "quick brown foxes jump");
    CHECK(s3, "quick brown foxes of", "quick brown foxes of");
    CHECK(s3, "quick the fox", "quick the fox");
    minlsh_shingler_free(s3);
    minlsh_shingler_free(s1);
    minlsh_shingler_free(c2);
    minlsh_shingler_free(c2u);
}

/* ---- the reference shingler ------------------------------------------------------------ */

static int ref_is_word(uint8_t c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c >= 0x80;
}
static int ref_is_punct(uint8_t c) {
    return c > 0x20 && c < 0x7F && !ref_is_word(c);
}
static int ref_is_space(uint8_t c) { return c == ' ' || (c >= 9 && c <= 13); }

/* Length of a valid UTF-8 sequence at p (n bytes left), or 0. */
static size_t ref_utf8_len(const uint8_t *p, size_t n) {
    uint8_t c = p[0];
    size_t len, i;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3;
    else if (c >= 0xF0 && c <= 0xF4) len = 4;
    else return 0;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (n < len || p[1] < lo || p[1] > hi) return 0;
    for (i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return len;
}

typedef struct {
    const char *const *words;
    size_t n;
} ref_list;

static int ref_is_stop(const ref_list *l, const uint8_t *w, size_t n) {
    size_t i, j;
    for (i = 0; i < l->n; i++) {
        const char *s = l->words[i];
        if (strlen(s) != n) continue;
        for (j = 0; j < n; j++) {
            uint8_t a = w[j], b = (uint8_t)s[j];
            if (a >= 'A' && a <= 'Z') a = (uint8_t)(a + 32);
            if (b >= 'A' && b <= 'Z') b = (uint8_t)(b + 32);
            if (a != b) break;
        }
        if (j == n) return 1;
    }
    return 0;
}

/* The whole specification without HTML, the simple way: normalise the
 * document, cut it into units, build each shingle's message. Returns the
 * number of distinct hashes in out (which needs len + 1 entries). */
static size_t ref_shingle(uint32_t unit, uint32_t k, uint32_t flags, const ref_list *stop,
                          const uint8_t *in, size_t len, uint64_t *out, uint8_t fp[16]) {
    uint8_t *a = malloc(len + 1), *t = malloc(3 * len + 1);
    size_t *us = malloc((len + 1) * sizeof *us), *ue = malloc((len + 1) * sizeof *ue);
    size_t n = 0, m = 0, nu = 0, i, count = 0;
    /* case folding and punctuation deletion */
    for (i = 0; i < len; i++) {
        uint8_t c = in[i];
        if ((flags & MINLSH_NORM_PUNCT) && ref_is_punct(c)) continue;
        if ((flags & MINLSH_NORM_CASEFOLD) && c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
        a[n++] = c;
    }
    if (unit == MINLSH_UNIT_WORD || unit == MINLSH_UNIT_STOPWORD) {
        for (i = 0; i < n;) {
            size_t j = i;
            if (!ref_is_word(a[i])) {
                i++;
                continue;
            }
            while (j < n && ref_is_word(a[j])) j++;
            if (m > 0) t[m++] = ' ';
            us[nu] = m;
            memcpy(t + m, a + i, j - i);
            m += j - i;
            ue[nu++] = m;
            i = j;
        }
    } else {
        /* whitespace: split on runs, join with one space */
        size_t w = 0;
        if (flags & MINLSH_NORM_WHITESPACE) {
            for (i = 0; i < n;) {
                size_t j = i;
                if (ref_is_space(a[i])) {
                    i++;
                    continue;
                }
                while (j < n && !ref_is_space(a[j])) j++;
                if (w > 0) a[w++] = ' ';
                memmove(a + w, a + i, j - i);
                w += j - i;
                i = j;
            }
            n = w;
        }
        for (i = 0; i < n;) {
            size_t l = unit == MINLSH_UNIT_BYTE ? 1 : ref_utf8_len(a + i, n - i);
            us[nu] = m;
            if (l == 0) {
                memcpy(t + m, "\xEF\xBF\xBD", 3);
                m += 3;
                i++;
            } else {
                memcpy(t + m, a + i, l);
                m += l;
                i += l;
            }
            ue[nu++] = m;
        }
    }
    for (i = 0; i + k <= nu; i++) {
        if (unit == MINLSH_UNIT_STOPWORD && !ref_is_stop(stop, t + us[i], ue[i] - us[i]))
            continue;
        out[count++] = H(t + us[i], ue[i + k - 1] - us[i]);
    }
    if (count == 0 && nu > 0) out[count++] = H(t, m);
    H128(fp, t, m);
    free(a);
    free(t);
    free(us);
    free(ue);
    return sort_unique(out, count);
}

/* Random documents from pieces that exercise every rule. */
static const char *const pieces[] = {
    "the", "The", "THE", "a", "cat", "Cat", "dog", "on", "mat", "with", "hat", "quick",
    "brown", "fox", "of", "and", "don't", "e-mail", "x.y", "caf\xC3\xA9", "na\xC3\xAFve",
    "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80", " ", " ", " ", "  ", "\t", "\n", "\r\n",
    ",", ".", "!", "?", "-", "\xFF", "\xC3", "\xE2\x82", "\x80", "\xED\xA0\x80", "&amp;",
    "<p>", "</p>", "&#233;", "<", "&", "42", "x",
    /* words past 16 and 32 bytes, so runs of letters span whole blocks */
    "Antidisestablishmentarianism", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz",
    "Z0123456789abcdefZ-9876543210ZYXWV", "09AZaz/:@[`{", "aaaaaaaaaaaaaaa[bbbbbbbbbbbbbbbb`c",
};
#define NPIECES (sizeof pieces / sizeof pieces[0])

/* The first PLAIN_PIECES pieces are ASCII words: with `plain`, a document
 * is mostly those, one space apart, with now and then any other piece or
 * no space, as prose is (the word loop's 64-byte path takes such runs). */
#define PLAIN_PIECES 16

static size_t random_doc(uint64_t *st, uint8_t *buf, size_t cap, size_t npieces, int plain) {
    size_t n = 0, i;
    for (i = 0; i < npieces; i++) {
        uint64_t r = tl_rand(st);
        int rare = (r >> 48) % 40 == 0;
        const char *p = pieces[plain && !rare ? r % PLAIN_PIECES : r % NPIECES];
        size_t l = strlen(p);
        int space = plain ? (r >> 56) % 40 != 0 : (r >> 40) % 3 != 0;
        if (!plain && (r >> 32) % 23 == 0) { /* a NUL now and then */
            p = "\0";
            l = 1;
        }
        if (n + l > cap) break;
        memcpy(buf + n, p, l);
        n += l;
        if (space && n < cap) buf[n++] = ' ';
    }
    return n;
}

static const char *const ref_stop_words[] = {"the", "a", "on", "with", "of", "and", "Cat"};

static void test_against_reference(void) {
    static const uint32_t units[] = {MINLSH_UNIT_BYTE, MINLSH_UNIT_CODEPOINT, MINLSH_UNIT_WORD,
                                     MINLSH_UNIT_STOPWORD};
    static const uint32_t flagsets[] = {0, MINLSH_NORM_CASEFOLD, MINLSH_NORM_PUNCT,
                                        MINLSH_NORM_WHITESPACE,
                                        MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE};
    static const uint32_t ks[] = {1, 2, 3, 5, 64};
    ref_list stop = {ref_stop_words, sizeof ref_stop_words / sizeof ref_stop_words[0]};
    uint64_t st = 2024, *want = malloc(4001 * sizeof *want);
    uint8_t *doc = malloc(4000), fp[16], wfp[16];
    minlsh_shingleset *set = NULL;
    size_t u, f, ki, d, bad = 0, total = 0;
    minlsh_shingleset_new(&set, NULL);
    for (u = 0; u < 4; u++)
        for (f = 0; f < 5; f++)
            for (ki = 0; ki < 5; ki++) {
                minlsh_shingler *sh;
                if (units[u] == MINLSH_UNIT_STOPWORD)
                    sh = mk_stop(ks[ki], flagsets[f], "the a on with of and Cat");
                else
                    sh = mk(units[u], ks[ki], flagsets[f]);
                for (d = 0; d < 16; d++) {
                    size_t len = d >= 12 ? random_doc(&st, doc, 4000, 1000, 1)
                                         : random_doc(&st, doc, 4000, d == 0 ? 0 : d < 4 ? d : 60 * d, 0);
                    size_t n = ref_shingle(units[u], ks[ki], flagsets[f], &stop, doc, len, want, wfp);
                    int rc = minlsh_shingler_hash(sh, doc, len, set, fp);
                    total++;
                    if (rc != 0 || !set_is(set, want, n) || memcmp(fp, wfp, 16) != 0) {
                        if (bad++ < 5)
                            TL_FAIL("unit %u k %u flags %x doc %zu (%zu bytes): %zu vs %zu shingles",
                                    units[u], ks[ki], flagsets[f], d, len,
                                    minlsh_shingleset_count(set), n);
                    }
                }
                minlsh_shingler_free(sh);
            }
    EXPECT_EQ_INT(bad, 0);
    EXPECT_EQ_INT(total, 4 * 5 * 5 * 16);
    minlsh_shingleset_free(set);
    free(want);
    free(doc);
}

/* Large documents: buffer growth and compaction, blocks, huge words, the
 * whole-document shingle of a long text without stop words. */
static void test_large_documents(void) {
    size_t len = 600000, i, n;
    int plain;
    uint8_t *doc = malloc(len), fp[16], wfp[16];
    uint64_t *want = malloc((len + 1) * sizeof *want), st = 7;
    ref_list nostop = {NULL, 0};
    ref_list stop = {ref_stop_words, sizeof ref_stop_words / sizeof ref_stop_words[0]};
    minlsh_shingleset *set = NULL;
    minlsh_shingler *sh;
    minlsh_shingleset_new(&set, NULL);

    /* one huge word between two small ones */
    memset(doc, 'w', len);
    memcpy(doc, "aa ", 3);
    memcpy(doc + len - 3, " zz", 3);
    sh = mk(MINLSH_UNIT_WORD, 1, 0);
    n = ref_shingle(MINLSH_UNIT_WORD, 1, 0, &nostop, doc, len, want, wfp);
    EXPECT_EQ_INT(n, 3);
    EXPECT_OK(minlsh_shingler_hash(sh, doc, len, set, fp));
    EXPECT(set_is(set, want, n));
    EXPECT(memcmp(fp, wfp, 16) == 0);
    minlsh_shingler_free(sh);
    sh = mk(MINLSH_UNIT_WORD, 2, 0);
    n = ref_shingle(MINLSH_UNIT_WORD, 2, 0, &nostop, doc, len, want, wfp);
    EXPECT_OK(minlsh_shingler_hash(sh, doc, len, set, fp));
    EXPECT(set_is(set, want, n) && n == 2);
    minlsh_shingler_free(sh);

    /* random text in every unit, and prose-like text: its 64-byte runs
     * across the engine's 16 KiB blocks */
    for (plain = 0; plain < 2; plain++) {
        static const uint32_t units[] = {MINLSH_UNIT_BYTE, MINLSH_UNIT_CODEPOINT,
                                         MINLSH_UNIT_WORD, MINLSH_UNIT_STOPWORD};
        len = random_doc(&st, doc, 600000, plain ? 120000 : 200000, plain);
        for (i = 0; i < 4; i++) {
            uint32_t flags = i % 2 ? MINLSH_NORM_ALL & ~MINLSH_NORM_HTML : 0;
            sh = units[i] == MINLSH_UNIT_STOPWORD ? mk_stop(5, flags, "the a on with of and Cat")
                                                 : mk(units[i], 7, flags);
            n = ref_shingle(units[i], units[i] == MINLSH_UNIT_STOPWORD ? 5 : 7, flags, &stop,
                            doc, len, want, wfp);
            EXPECT_OK(minlsh_shingler_hash(sh, doc, len, set, fp));
            EXPECT_MSG(set_is(set, want, n), "unit %u: %zu vs %zu", units[i],
                       minlsh_shingleset_count(set), n);
            EXPECT(memcmp(fp, wfp, 16) == 0);
            EXPECT(n > 1000);
            minlsh_shingler_free(sh);
        }
    }

    /* no stop word in a long text: one shingle of every word */
    for (i = 0, len = 0; i < 50000; i++) {
        memcpy(doc + len, i % 2 ? "lorem " : "ipsum ", 6);
        len += 6;
    }
    sh = mk_stop(3, 0, NULL);
    n = ref_shingle(MINLSH_UNIT_STOPWORD, 3, 0, &nostop, doc, len, want, wfp);
    EXPECT_EQ_INT(n, 1);
    EXPECT_EQ_U64(want[0], H(doc, len - 1)); /* the words joined by spaces */
    EXPECT_OK(minlsh_shingler_hash(sh, doc, len, set, fp));
    EXPECT(set_is(set, want, 1));
    EXPECT(memcmp(fp, wfp, 16) == 0);
    minlsh_shingler_free(sh);

    minlsh_shingleset_free(set);
    free(doc);
    free(want);
}

/* ---- streaming equals one-shot ------------------------------------------------------------ */

static const char *const samples[] = {
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs!\n"
    "A second line, with\ttabs and   spaces, and a stop word or two of the usual kind.",
    "<html><head><title>T&amp;T</title><style>p { color: red; }</style>"
    "<script type=\"text/javascript\">var s = \"</p>\"; if (a<b) {}</script></head>"
    "<body><!-- comment -- with dashes --><p class='x>y'>Caf&#233; &lt;b&gt; &nbsp; "
    "&#x1F600; &bogus; &amp x</p><br/>a < b <3 &#12a; <!-->tail</SCRIPT></body></html>",
    "Gr\xC3\xBC\xC3\x9F" "e aus K\xC3\xB6ln \xE2\x82\xAC 5 \xF0\x9F\x98\x80 \xE6\x97\xA5\xE6\x9C\xAC"
    " bad\xFF" "byte \xC3 trunc \xE2\x82 end \xED\xA0\x80 sur \xF4\x90\x80\x80 hi \x80\xBF",
    "supercalifragilisticexpialidocious-antidisestablishmentarianism_pneumonoultramicroscopic"
    "silicovolcanoconiosis floccinaucinihilipilification the of and",
    "&#65;&#x42;&#67 &amp;&amp;&amp; <p>x</p><p>y</p><<>><a href=\"q\">l</a>&#0;&#xD800;"
    "<!DOCTYPE html><?pi x?>  \t\n  <!---->.,;:!?",
};

typedef struct {
    uint64_t *v;
    size_t n, cap;
    size_t batches;
    int bad_batch;
} collect;

static int collect_emit(void *ctx, const uint64_t *h, size_t n) {
    collect *c = (collect *)ctx;
    if (n == 0 || n > MINLSH__SHINGLE_BATCH) c->bad_batch = 1;
    if (c->n + n > c->cap) {
        c->cap = (c->n + n) * 2;
        c->v = realloc(c->v, c->cap * sizeof *c->v);
    }
    memcpy(c->v + c->n, h, n * sizeof *h);
    c->n += n;
    c->batches++;
    return 0;
}

/* minlsh__shingler_each emits the set's elements (with repeats) only. */
static int each_agrees(const minlsh_shingler *sh, const uint8_t *text, size_t len,
                       const minlsh_shingleset *want) {
    collect c = {NULL, 0, 0, 0, 0};
    int ok;
    if (minlsh__shingler_each(sh, text, len, collect_emit, &c) != 0) return 0;
    c.n = sort_unique(c.v, c.n);
    ok = !c.bad_batch && set_is(want, c.v, c.n);
    free(c.v);
    return ok;
}

static void check_streaming(const minlsh_shingler *sh, const uint8_t *text, size_t len,
                            int every_split, uint64_t *rs, size_t *bad) {
    minlsh_shingleset *want = NULL, *got = NULL;
    minlsh_shinglestream *st = NULL;
    uint8_t wfp[16];
    size_t cuts[16], s, r, i;
    minlsh_shingleset_new(&want, NULL);
    minlsh_shingleset_new(&got, NULL);
    if (minlsh_shingler_hash(sh, text, len, want, wfp) != 0 ||
        minlsh_shinglestream_new(&st, sh, NULL) != 0) {
        (*bad)++;
        goto done;
    }
    if (!each_agrees(sh, text, len, want)) (*bad)++;
    if (every_split) {
        for (s = 0; s <= len; s++)
            if (!stream_agrees(st, text, &s, 1, len, got, want, wfp)) {
                if ((*bad)++ < 3)
                    TL_FAIL("unit %u k %u flags %x split at %zu", minlsh_shingler_unit(sh),
                            minlsh_shingler_k(sh), minlsh_shingler_flags(sh), s);
            }
    }
    for (r = 0; r < 20; r++) { /* random multi-chunk splits, sorted cut points */
        size_t nc = 1 + (size_t)(tl_rand(rs) % 15);
        for (i = 0; i < nc; i++) cuts[i] = len ? (size_t)(tl_rand(rs) % (len + 1)) : 0;
        qsort(cuts, nc, sizeof cuts[0], cmp_size);
        if (!stream_agrees(st, text, cuts, nc, len, got, want, wfp)) (*bad)++;
    }
    { /* one byte at a time, with empty feeds in between */
        uint8_t fp[16];
        int ok = 1;
        for (i = 0; i < len; i++) {
            if (minlsh_shinglestream_feed(st, text + i, 1) != 0) ok = 0;
            if (minlsh_shinglestream_feed(st, NULL, 0) != 0) ok = 0;
        }
        if (minlsh_shinglestream_finish(st, got, fp) != 0) ok = 0;
        if (!ok || memcmp(fp, wfp, 16) != 0 ||
            !set_is(got, minlsh_shingleset_view_hashes(want), minlsh_shingleset_count(want)))
            (*bad)++;
    }
done:
    minlsh_shinglestream_free(st);
    minlsh_shingleset_free(want);
    minlsh_shingleset_free(got);
}

static void test_streaming_equals_oneshot(void) {
    static const uint32_t units[] = {MINLSH_UNIT_BYTE, MINLSH_UNIT_CODEPOINT, MINLSH_UNIT_WORD,
                                     MINLSH_UNIT_STOPWORD};
    static const uint32_t flagsets[] = {
        0, MINLSH_NORM_ALL, MINLSH_NORM_HTML, MINLSH_NORM_HTML | MINLSH_NORM_WHITESPACE,
        MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE, MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT};
    static const uint32_t ks[] = {1, 3};
    uint64_t rs = 77;
    size_t u, f, ki, d, bad = 0;
    for (u = 0; u < 4; u++)
        for (f = 0; f < sizeof flagsets / sizeof flagsets[0]; f++)
            for (ki = 0; ki < 2; ki++) {
                minlsh_shingler *sh = mk(units[u], ks[ki], flagsets[f]);
                for (d = 0; d < sizeof samples / sizeof samples[0]; d++)
                    check_streaming(sh, (const uint8_t *)samples[d], strlen(samples[d]), 1,
                                    &rs, &bad);
                minlsh_shingler_free(sh);
            }
    EXPECT_EQ_INT(bad, 0);
}

/* Long inputs (words longer than the engine's 16 KiB blocks, many
 * compactions): random splits and byte-at-a-time only. */
static void test_streaming_long(void) {
    size_t len = 70000, bad = 0, i;
    uint8_t *doc = malloc(len);
    uint64_t rs = 5, st = 6;
    static const uint32_t units[] = {MINLSH_UNIT_BYTE, MINLSH_UNIT_CODEPOINT, MINLSH_UNIT_WORD,
                                     MINLSH_UNIT_STOPWORD};
    /* a 40000-byte word inside HTML-ish random text */
    len = random_doc(&st, doc, 30000, 8000, 0);
    memset(doc + len, 'q', 40000);
    len += 40000;
    for (i = 0; i < 4; i++) {
        minlsh_shingler *sh = mk(units[i], 4, i % 2 ? MINLSH_NORM_ALL : 0);
        check_streaming(sh, doc, len, 0, &rs, &bad);
        minlsh_shingler_free(sh);
    }
    EXPECT_EQ_INT(bad, 0);
    free(doc);
}

/* The stream copies the configuration; it is reusable across documents. */
static void test_stream_lifecycle(void) {
    minlsh_shingler *sh = mk(MINLSH_UNIT_WORD, 2, MINLSH_NORM_CASEFOLD);
    minlsh_shinglestream *st = NULL;
    minlsh_shingleset *a = NULL, *b = NULL;
    uint8_t fa[16], fb[16];
    minlsh_shingleset_new(&a, NULL);
    minlsh_shingleset_new(&b, NULL);
    EXPECT_OK(minlsh_shingler_hash(sh, LIT("One Two three"), a, fa));
    EXPECT_OK(minlsh_shinglestream_new(&st, sh, NULL));
    minlsh_shingler_free(sh);
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("One T")));
    EXPECT_EQ_U64(minlsh_shinglestream_bytes(st), 5);
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("wo three")));
    EXPECT_OK(minlsh_shinglestream_finish(st, b, fb));
    EXPECT(set_is(b, minlsh_shingleset_view_hashes(a), minlsh_shingleset_count(a)));
    EXPECT(memcmp(fa, fb, 16) == 0);
    /* reset drops a half-fed document */
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("garbage garbage")));
    EXPECT_OK(minlsh_shinglestream_reset(st));
    EXPECT_EQ_U64(minlsh_shinglestream_bytes(st), 0);
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("One Two three")));
    EXPECT_OK(minlsh_shinglestream_finish(st, NULL, fb)); /* set optional */
    EXPECT(memcmp(fa, fb, 16) == 0);
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("One Two three")));
    EXPECT_OK(minlsh_shinglestream_finish(st, b, NULL)); /* fp optional */
    EXPECT(set_is(b, minlsh_shingleset_view_hashes(a), minlsh_shingleset_count(a)));
    /* an empty document */
    EXPECT_OK(minlsh_shinglestream_finish(st, b, fb));
    EXPECT_EQ_INT(minlsh_shingleset_count(b), 0);
    /* errors */
    EXPECT_ERR(minlsh_shinglestream_new(NULL, NULL, NULL), MINLSH_E_NULL);
    {
        minlsh_shinglestream *x = (minlsh_shinglestream *)&fa;
        EXPECT_ERR(minlsh_shinglestream_new(&x, NULL, NULL), MINLSH_E_NULL);
        EXPECT(x == NULL);
    }
    EXPECT_ERR(minlsh_shinglestream_feed(NULL, "a", 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shinglestream_feed(st, NULL, 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shinglestream_finish(NULL, b, fb), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shinglestream_reset(NULL), MINLSH_E_NULL);
    EXPECT_EQ_U64(minlsh_shinglestream_bytes(NULL), 0);
    minlsh_shinglestream_free(st);
    minlsh_shinglestream_free(NULL);
    minlsh_shingleset_free(a);
    minlsh_shingleset_free(b);
}

static int stop_after_first(void *ctx, const uint64_t *h, size_t n) {
    (void)h;
    (void)n;
    ++*(int *)ctx;
    return 42;
}

static void test_each(void) {
    minlsh_shingler *sh = mk(MINLSH_UNIT_BYTE, 2, 0);
    minlsh_shingleset *want = NULL;
    collect c = {NULL, 0, 0, 0, 0};
    uint8_t doc[5000];
    size_t i;
    int calls = 0;
    for (i = 0; i < sizeof doc; i++) doc[i] = (uint8_t)(i * 7 + i / 13);
    minlsh_shingleset_new(&want, NULL);
    EXPECT_OK(minlsh_shingler_hash(sh, doc, sizeof doc, want, NULL));
    EXPECT_OK(minlsh__shingler_each(sh, doc, sizeof doc, collect_emit, &c));
    EXPECT_EQ_INT(c.n, sizeof doc - 1); /* every shingle, repeats included */
    EXPECT_EQ_INT(c.batches, (sizeof doc - 1 + 255) / 256);
    EXPECT(!c.bad_batch);
    c.n = sort_unique(c.v, c.n);
    EXPECT(set_is(want, c.v, c.n));
    free(c.v);
    /* a non-zero return from emit stops and is returned */
    EXPECT_EQ_INT(minlsh__shingler_each(sh, doc, sizeof doc, stop_after_first, &calls), 42);
    EXPECT_EQ_INT(calls, 1);
    calls = 0;
    EXPECT_EQ_INT(minlsh__shingler_each(sh, LIT("abc"), stop_after_first, &calls), 42);
    EXPECT_EQ_INT(calls, 1);
    /* the empty document emits nothing; a short one its one shingle */
    calls = 0;
    EXPECT_OK(minlsh__shingler_each(sh, NULL, 0, stop_after_first, &calls));
    EXPECT_EQ_INT(calls, 0);
    memset(&c, 0, sizeof c);
    EXPECT_OK(minlsh__shingler_each(sh, LIT("a"), collect_emit, &c));
    EXPECT(c.n == 1 && c.v[0] == H("a", 1));
    free(c.v);
    EXPECT_ERR(minlsh__shingler_each(NULL, "a", 1, collect_emit, &c), MINLSH_E_NULL);
    EXPECT_ERR(minlsh__shingler_each(sh, "a", 1, NULL, &c), MINLSH_E_NULL);
    EXPECT_ERR(minlsh__shingler_each(sh, NULL, 1, collect_emit, &c), MINLSH_E_NULL);
    minlsh_shingleset_free(want);
    minlsh_shingler_free(sh);
}

/* ---- fingerprint and config id ----------------------------------------------------------- */

static void test_fingerprint(void) {
    minlsh_shingler *w = mk(MINLSH_UNIT_WORD, 5, MINLSH_NORM_ALL);
    minlsh_shingler *b = mk(MINLSH_UNIT_BYTE, 5, 0);
    uint8_t f1[16], f2[16], want[16];
    EXPECT_OK(minlsh_shingler_hash(w, LIT("<b>Hello</b>,   WORLD!!"), NULL, f1));
    EXPECT_OK(minlsh_shingler_hash(w, LIT("hello world"), NULL, f2));
    EXPECT(memcmp(f1, f2, 16) == 0);
    H128(want, "hello world", 11); /* the words joined by single spaces */
    EXPECT(memcmp(f1, want, 16) == 0);
    EXPECT_OK(minlsh_shingler_hash(w, LIT("hello world2"), NULL, f2));
    EXPECT(memcmp(f1, f2, 16) != 0);
    EXPECT_OK(minlsh_shingler_hash(w, LIT("helloworld"), NULL, f2));
    EXPECT(memcmp(f1, f2, 16) != 0);
    EXPECT_OK(minlsh_shingler_hash(b, LIT("hello world"), NULL, f2));
    EXPECT(memcmp(want, f2, 16) == 0);
    EXPECT_OK(minlsh_shingler_hash(b, LIT("hello  world"), NULL, f2));
    EXPECT(memcmp(want, f2, 16) != 0);
    /* NULL set and NULL fp are both allowed */
    EXPECT_OK(minlsh_shingler_hash(b, LIT("hello"), NULL, NULL));
    minlsh_shingler_free(w);
    minlsh_shingler_free(b);
}

static uint64_t config_id_of(const minlsh_shingler_options *o) {
    minlsh_shingler *s = NULL;
    uint64_t id = 0;
    if (minlsh_shingler_new(&s, o, NULL) != 0) return 0;
    minlsh_shingler_config_id(&id, s);
    minlsh_shingler_free(s);
    return id;
}

/* The documented bytes: "minlsh-config-1" || LE32 unit || LE32 k ||
 * LE32 flags || LE64 count || each stop word and a 0x00. */
static uint64_t expected_config_id(const uint8_t *key, uint32_t unit, uint32_t k,
                                   uint32_t flags, const char *const *words, size_t n) {
    uint8_t buf[4096];
    size_t len = 15, i;
    uint64_t id;
    memcpy(buf, "minlsh-config-1", 15);
    minlsh__store32le(buf + len, unit);
    minlsh__store32le(buf + len + 4, k);
    minlsh__store32le(buf + len + 8, flags);
    minlsh__store64le(buf + len + 12, (uint64_t)n);
    len += 20;
    for (i = 0; i < n; i++) {
        size_t l = strlen(words[i]) + 1;
        memcpy(buf + len, words[i], l);
        len += l;
    }
    minlsh_siphash24(&id, key, buf, len);
    return id;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_config_id(void) {
    minlsh_shingler_options o;
    static const char *const cd[] = {"cat", "dog"};
    uint8_t key[16];
    uint64_t base, id;
    size_t i;
    memcpy(key, minlsh_default_key(), 16);

    /* The default options (version 2, CJK_WORDS) are another configuration
     * than version 1's (flags 0), whose id stays what 0.1 wrote. */
    EXPECT_OK(minlsh_shingler_options_init(&o, MINLSH_SHINGLER_OPTIONS_VERSION));
    EXPECT_EQ_U64(config_id_of(&o), UINT64_C(0x9146460a92fa52d1));
    EXPECT_OK(minlsh_shingler_options_init(&o, 1));
    EXPECT_EQ_U64(config_id_of(&o), UINT64_C(0x84f6fe21ac593947));

    base = config_id_of(&o);
    EXPECT_EQ_U64(base, expected_config_id(key, 3, 5, 0, NULL, 0));
    EXPECT_EQ_U64(config_id_of(&o), base); /* stable */
    o.k = 4;
    EXPECT(config_id_of(&o) != base);
    EXPECT_EQ_U64(config_id_of(&o), expected_config_id(key, 3, 4, 0, NULL, 0));
    o.k = 5;
    o.unit = MINLSH_UNIT_BYTE;
    EXPECT(config_id_of(&o) != base);
    o.unit = MINLSH_UNIT_WORD;
    o.flags = MINLSH_NORM_CASEFOLD;
    EXPECT(config_id_of(&o) != base);
    EXPECT_EQ_U64(config_id_of(&o), expected_config_id(key, 3, 5, 1, NULL, 0));
    o.flags = 0;
    /* a stop-word list does not change what WORD units produce, so it is
     * not part of their id */
    o.stopwords = "cat dog";
    o.stopwords_len = 7;
    EXPECT_EQ_U64(config_id_of(&o), base);
    o.stopwords = NULL;
    o.stopwords_len = 0;
    /* the key: every bit matters */
    for (i = 0; i < 128; i += 9) {
        key[i / 8] ^= (uint8_t)(1u << (i % 8));
        o.key = key;
        id = config_id_of(&o);
        EXPECT(id != base);
        EXPECT_EQ_U64(id, expected_config_id(key, 3, 5, 0, NULL, 0));
        key[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    o.key = key; /* the same bytes as the default key */
    EXPECT_EQ_U64(config_id_of(&o), base);
    o.key = NULL;

    /* stop words: normalised (lower case, sorted, deduplicated, only usable
     * entries), so equivalent lists have equal ids and others do not */
    o.unit = MINLSH_UNIT_STOPWORD;
    o.stopwords = "Dog cat  CAT\tdon't dog";
    o.stopwords_len = strlen(o.stopwords);
    id = config_id_of(&o);
    EXPECT_EQ_U64(id, expected_config_id(key, 4, 5, 0, cd, 2));
    o.stopwords = "cat dog";
    o.stopwords_len = 7;
    EXPECT_EQ_U64(config_id_of(&o), id);
    o.stopwords = "cat dogs";
    o.stopwords_len = 8;
    EXPECT(config_id_of(&o) != id);
    o.stopwords = "cat dog a";
    o.stopwords_len = 9;
    EXPECT(config_id_of(&o) != id);
    o.stopwords = "cat dog";
    o.stopwords_len = 3; /* the length counts: just "cat" */
    EXPECT(config_id_of(&o) != id);

    /* the built-in list, sorted here with strcmp */
    {
        char *copy = malloc(minlsh__stopwords_en_len + 1), *p;
        const char *words[400];
        size_t n = 0;
        memcpy(copy, minlsh__stopwords_en, minlsh__stopwords_en_len + 1);
        for (p = strtok(copy, " "); p != NULL && n < 400; p = strtok(NULL, " ")) words[n++] = p;
        qsort(words, n, sizeof words[0], cmp_str);
        for (i = 1; i < n; i++) EXPECT_MSG(strcmp(words[i - 1], words[i]) != 0, "duplicate %s", words[i]);
        EXPECT(n >= 100 && n <= 180);
        EXPECT_EQ_INT(n, 178);
        o.stopwords = NULL;
        o.stopwords_len = 0;
        EXPECT_EQ_U64(config_id_of(&o), expected_config_id(key, 4, 5, 0, words, n));
        free(copy);
    }
}

/* The worked example of docs/shingling.md, pinned: these numbers are part
 * of the format (bit-identical everywhere, forever). */
static void test_worked_example(void) {
    static const uint64_t want[5] = {
        UINT64_C(0x0931b3ba3a30fd0b), UINT64_C(0x476649f747025f94), UINT64_C(0x4cf0312e470503f1),
        UINT64_C(0xdba1cf648bb36120), UINT64_C(0xe58354cccefc4c58)};
    static const uint8_t want_fp[16] = {0x5e, 0xb4, 0xd9, 0xd7, 0x06, 0x3f, 0x63, 0x67,
                                        0x57, 0xc4, 0x3b, 0xbe, 0xb3, 0x7c, 0xfe, 0x74};
    minlsh_shingler *sh = mk(MINLSH_UNIT_WORD, 3, MINLSH_NORM_ALL), *def = NULL;
    minlsh_shingleset *set = NULL;
    uint8_t fp[16];
    uint64_t id = 0, hello = UINT64_C(0x0736e8f2d9be47f3);
    minlsh_shingleset_new(&set, NULL);
    EXPECT_OK(minlsh_shingler_hash(sh, LIT("<p>The quick brown fox &amp; the lazy dog.</p>"), set, fp));
    EXPECT(set_is(set, want, 5));
    EXPECT_EQ_U64(H("the quick brown", 15), UINT64_C(0xe58354cccefc4c58));
    EXPECT(memcmp(fp, want_fp, 16) == 0);
    EXPECT_OK(minlsh_shingler_config_id(&id, sh));
    EXPECT_EQ_U64(id, UINT64_C(0x775f76631e0f3720));
    EXPECT_OK(minlsh_shingler_new(&def, NULL, NULL));
    EXPECT_OK(minlsh_shingler_config_id(&id, def));
    EXPECT_EQ_U64(id, UINT64_C(0x84f6fe21ac593947));
    EXPECT_OK(minlsh_shingler_hash(sh, LIT("Hello, world!"), set, NULL));
    EXPECT(set_is(set, &hello, 1));
    minlsh_shingleset_free(set);
    minlsh_shingler_free(sh);
    minlsh_shingler_free(def);
}

/* ---- limits --------------------------------------------------------------------------- */

static void test_max_document_bytes(void) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    minlsh_shinglestream *st = NULL;
    minlsh_shingleset *set = NULL, *want = NULL;
    uint8_t fp[16], wfp[16];
    static const uint64_t sentinel[2] = {5, 9};
    o.k = 2;
    o.max_document_bytes = 10;
    EXPECT_OK(minlsh_shingler_new(&sh, &o, NULL));
    minlsh_shingleset_new(&set, NULL);
    minlsh_shingleset_new(&want, NULL);
    EXPECT_OK(minlsh_shingler_hash(sh, LIT("aaa bbb cc"), want, wfp)); /* exactly 10 */
    EXPECT_EQ_INT(minlsh_shingleset_count(want), 2);
    EXPECT_OK(minlsh_shingleset_assign(set, sentinel, 2));
    EXPECT_ERR(minlsh_shingler_hash(sh, LIT("aaa bbb ccc"), set, fp), MINLSH_E_TOOBIG);
    EXPECT(set_is(set, sentinel, 2)); /* unchanged on error */
    {
        int dummy;
        EXPECT_ERR(minlsh__shingler_each(sh, LIT("aaa bbb ccc"), stop_after_first, &dummy),
                   MINLSH_E_TOOBIG);
    }
    EXPECT_OK(minlsh_shinglestream_new(&st, sh, NULL));
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("aaa bb")));
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("b cc")));
    EXPECT_EQ_U64(minlsh_shinglestream_bytes(st), 10);
    EXPECT_OK(minlsh_shinglestream_feed(st, NULL, 0));
    EXPECT_ERR(minlsh_shinglestream_feed(st, LIT("c")), MINLSH_E_TOOBIG);
    EXPECT_ERR(minlsh_shinglestream_feed(st, NULL, 0), MINLSH_E_TOOBIG); /* keeps refusing */
    EXPECT_ERR(minlsh_shinglestream_feed(st, LIT("c")), MINLSH_E_TOOBIG);
    EXPECT_EQ_U64(minlsh_shinglestream_bytes(st), 10); /* refused bytes not counted */
    EXPECT_ERR(minlsh_shinglestream_finish(st, set, fp), MINLSH_E_TOOBIG);
    EXPECT(set_is(set, sentinel, 2));
    /* finish reset it: the next document works */
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("aaa bbb cc")));
    EXPECT_OK(minlsh_shinglestream_finish(st, set, fp));
    EXPECT(set_is(set, minlsh_shingleset_view_hashes(want), 2) && memcmp(fp, wfp, 16) == 0);
    /* one chunk over the limit at once, then reset */
    EXPECT_ERR(minlsh_shinglestream_feed(st, LIT("0123456789A")), MINLSH_E_TOOBIG);
    EXPECT_OK(minlsh_shinglestream_reset(st));
    EXPECT_OK(minlsh_shinglestream_feed(st, LIT("aaa bbb cc")));
    EXPECT_OK(minlsh_shinglestream_finish(st, set, fp));
    EXPECT(set_is(set, minlsh_shingleset_view_hashes(want), 2) && memcmp(fp, wfp, 16) == 0);
    minlsh_shinglestream_free(st);
    minlsh_shingleset_free(set);
    minlsh_shingleset_free(want);
    minlsh_shingler_free(sh);
}

/* ---- sets ------------------------------------------------------------------------------- */

static void test_shingleset_ops(void) {
    minlsh_shingleset *a = NULL, *b = NULL;
    uint64_t out[8], *big, *ref, st = 3;
    size_t n = 0, i, pat;
    double j = -1;
    static const uint64_t in[] = {5, 3, 9, 3, 5, 1, UINT64_MAX, 0};
    static const uint64_t sorted[] = {0, 1, 3, 5, 9, UINT64_MAX};
    EXPECT_OK(minlsh_shingleset_new(&a, NULL));
    EXPECT_OK(minlsh_shingleset_new(&b, NULL));
    EXPECT_EQ_INT(minlsh_shingleset_count(a), 0);
    EXPECT(minlsh_shingleset_view_hashes(a) == NULL);
    EXPECT_EQ_INT(minlsh_shingleset_count(NULL), 0);
    EXPECT(minlsh_shingleset_view_hashes(NULL) == NULL);
    EXPECT_OK(minlsh_shingleset_assign(a, in, 8));
    EXPECT(set_is(a, sorted, 6));
    /* copy: size query, short buffer, exact buffer */
    EXPECT_ERR(minlsh_shingleset_copy_hashes(a, NULL, 0, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, 6);
    n = 0;
    EXPECT_ERR(minlsh_shingleset_copy_hashes(a, out, 5, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, 6);
    EXPECT_OK(minlsh_shingleset_copy_hashes(a, out, 8, &n));
    EXPECT_EQ_INT(n, 6);
    EXPECT(memcmp(out, sorted, sizeof sorted) == 0);
    EXPECT_ERR(minlsh_shingleset_copy_hashes(NULL, out, 8, &n), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shingleset_copy_hashes(a, NULL, 8, &n), MINLSH_E_NULL);
    EXPECT_OK(minlsh_shingleset_copy_hashes(b, NULL, 0, &n));
    EXPECT_EQ_INT(n, 0);
    /* assign from the set's own data */
    EXPECT_OK(minlsh_shingleset_assign(a, minlsh_shingleset_view_hashes(a), 6));
    EXPECT(set_is(a, sorted, 6));
    EXPECT_ERR(minlsh_shingleset_assign(NULL, in, 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shingleset_assign(a, NULL, 1), MINLSH_E_NULL);
    EXPECT(set_is(a, sorted, 6));
    /* jaccard */
    EXPECT_OK(minlsh_shingleset_assign(a, (const uint64_t[]){1, 2, 3}, 3));
    EXPECT_OK(minlsh_shingleset_assign(b, (const uint64_t[]){4, 3, 2}, 3));
    EXPECT_OK(minlsh_shingleset_jaccard(&j, a, b));
    EXPECT_NEAR(j, 0.5, 1e-15);
    EXPECT_OK(minlsh_shingleset_jaccard(&j, a, a));
    EXPECT_NEAR(j, 1.0, 0);
    EXPECT_OK(minlsh_shingleset_assign(b, NULL, 0));
    EXPECT_OK(minlsh_shingleset_jaccard(&j, a, b));
    EXPECT_NEAR(j, 0.0, 0);
    EXPECT_OK(minlsh_shingleset_assign(a, NULL, 0));
    j = -1;
    EXPECT_OK(minlsh_shingleset_jaccard(&j, a, b));
    EXPECT_NEAR(j, 0.0, 0); /* two empty sets */
    EXPECT_ERR(minlsh_shingleset_jaccard(NULL, a, b), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shingleset_jaccard(&j, NULL, b), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shingleset_jaccard(&j, a, NULL), MINLSH_E_NULL);
    {
        static const uint64_t x[] = {1, 2, 3, 10}, y[] = {2, 3, 4}, dup[] = {1, 1, 2},
                              down[] = {3, 2};
        EXPECT_OK(minlsh_jaccard_sorted(&j, x, 4, y, 3));
        EXPECT_NEAR(j, 2.0 / 5.0, 1e-15);
        EXPECT_OK(minlsh_jaccard_sorted(&j, NULL, 0, NULL, 0));
        EXPECT_NEAR(j, 0.0, 0);
        EXPECT_OK(minlsh_jaccard_sorted(&j, x, 4, NULL, 0));
        EXPECT_NEAR(j, 0.0, 0);
        EXPECT_ERR(minlsh_jaccard_sorted(&j, dup, 3, y, 3), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_jaccard_sorted(&j, x, 4, down, 2), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_jaccard_sorted(NULL, x, 4, y, 3), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_jaccard_sorted(&j, NULL, 1, y, 3), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_jaccard_sorted(&j, x, 4, NULL, 3), MINLSH_E_NULL);
    }
    /* the sort against qsort: random, small values with many repeats,
     * shared prefixes, descending, all equal */
    big = malloc(200000 * sizeof *big);
    ref = malloc(200000 * sizeof *ref);
    for (pat = 0; pat < 6; pat++) {
        /* Both sides of the one-level path's limit (8192) and of its
         * bucket limit (pattern 2 puts every key in one bucket). */
        size_t sizes[] = {0, 1, 2, 32, 33, 51, 100, 1000, 4097, 8192, 8193, 200000}, si;
        for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t m = sizes[si];
            for (i = 0; i < m; i++) {
                uint64_t r = tl_rand(&st);
                switch (pat) {
                case 0: big[i] = r; break;
                case 1: big[i] = r % 97; break;
                case 2: big[i] = UINT64_C(0xABCDEF0000000000) | (r & 0xFFFF); break;
                case 3: big[i] = UINT64_MAX - i; break;
                case 4: big[i] = 12345; break;
                default: big[i] = (r & 0xFF00FF00FF00FF00u) | (i & 1); break;
                }
            }
            memcpy(ref, big, m * sizeof *ref);
            n = sort_unique(ref, m);
            EXPECT_OK(minlsh_shingleset_assign(a, big, m));
            EXPECT_MSG(set_is(a, ref, n), "sort pattern %zu size %zu", pat, m);
        }
    }
    free(big);
    free(ref);
    minlsh_shingleset_free(a);
    minlsh_shingleset_free(b);
    minlsh_shingleset_free(NULL);
}

/* ---- allocation failures ------------------------------------------------------------------ */

static void test_allocation_failures(void) {
    testalloc f;
    minlsh_allocator fa = ta_allocator(&f);
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL, *plain = NULL;
    minlsh_shinglestream *st = NULL;
    minlsh_shingleset *set = NULL, *want = NULL;
    uint8_t *doc, fp[16], wfp[16];
    size_t len = 100000;
    uint64_t rs = 11;
    static const uint64_t sentinel[3] = {1, 2, 3};
    long n, failures;
    int rc;

    doc = malloc(len);
    len = random_doc(&rs, doc, len, 30000, 0);
    o.unit = MINLSH_UNIT_STOPWORD;
    o.k = 3;
    o.flags = MINLSH_NORM_ALL;
    EXPECT_OK(minlsh_shingler_new(&plain, &o, NULL));
    minlsh_shingleset_new(&want, NULL);
    EXPECT_OK(minlsh_shingler_hash(plain, doc, len, want, wfp));

    /* shingler_new */
    for (n = 1, failures = 0;; n++) {
        ta_fail_nth(&f, n);
        sh = (minlsh_shingler *)&f;
        rc = minlsh_shingler_new(&sh, &o, &fa);
        if (rc == 0) break;
        failures++;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT(sh == NULL);
        EXPECT_EQ_INT(ta_blocks(&f), 0);
    }
    EXPECT(failures >= 3); /* handle, temporaries, table */
    ta_fail_nth(&f, 0);

    /* shingleset_new and stream_new */
    for (n = 1, failures = 0;; n++) {
        ta_fail_nth(&f, n);
        rc = minlsh_shingleset_new(&set, &fa);
        if (rc == 0) break;
        failures++;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT(set == NULL);
    }
    EXPECT_EQ_INT(failures, 1);
    for (n = 1, failures = 0;; n++) {
        long before = ta_blocks(&f);
        ta_fail_nth(&f, n);
        rc = minlsh_shinglestream_new(&st, sh, &fa);
        if (rc == 0) break;
        failures++;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT(st == NULL);
        EXPECT_EQ_INT(ta_blocks(&f), before);
    }
    EXPECT(failures >= 2);
    ta_fail_nth(&f, 0);

    /* shingler_hash: NOMEM, the set unchanged, until it succeeds */
    for (n = 1, failures = 0;; n++) {
        minlsh_shingleset_assign(set, sentinel, 3);
        ta_fail_nth(&f, n);
        rc = minlsh_shingler_hash(sh, doc, len, set, fp);
        ta_fail_nth(&f, 0);
        if (rc == 0) break;
        failures++;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT(set_is(set, sentinel, 3));
    }
    EXPECT(failures >= 3);
    EXPECT(set_is(set, minlsh_shingleset_view_hashes(want), minlsh_shingleset_count(want)));
    EXPECT(memcmp(fp, wfp, 16) == 0);

    /* feed: NOMEM leaves the stream refusing (feed keeps failing, finish
     * says MINLSH_E_STATE and resets); after that it works */
    for (n = 1, failures = 0;; n++) {
        ta_fail_nth(&f, n);
        rc = minlsh_shinglestream_feed(st, doc, len);
        ta_fail_nth(&f, 0);
        if (rc == 0) break;
        failures++;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT_ERR(minlsh_shinglestream_feed(st, "a", 1), MINLSH_E_NOMEM);
        EXPECT_ERR(minlsh_shinglestream_finish(st, set, fp), MINLSH_E_STATE);
        /* buffers kept from an earlier attempt make later ones need fewer
         * allocations: start from a fresh stream each time */
        minlsh_shinglestream_free(st);
        st = NULL;
        EXPECT_OK(minlsh_shinglestream_new(&st, sh, &fa));
    }
    EXPECT(failures >= 3);
    EXPECT_OK(minlsh_shinglestream_finish(st, set, fp));
    EXPECT(set_is(set, minlsh_shingleset_view_hashes(want), minlsh_shingleset_count(want)));
    EXPECT(memcmp(fp, wfp, 16) == 0);

    /* finish: NOMEM keeps the document; a retry succeeds */
    for (n = 1, failures = 0;; n++) {
        minlsh_shingleset *fresh = NULL;
        minlsh_shinglestream_free(st);
        st = NULL;
        EXPECT_OK(minlsh_shinglestream_new(&st, sh, &fa));
        EXPECT_OK(minlsh_shinglestream_feed(st, doc, len));
        EXPECT_OK(minlsh_shingleset_new(&fresh, &fa));
        ta_fail_nth(&f, n);
        rc = minlsh_shinglestream_finish(st, fresh, fp);
        ta_fail_nth(&f, 0);
        if (rc == 0) {
            minlsh_shingleset_free(fresh);
            break;
        }
        failures++;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT_EQ_INT(minlsh_shingleset_count(fresh), 0);
        EXPECT_OK(minlsh_shinglestream_finish(st, fresh, fp));
        EXPECT(set_is(fresh, minlsh_shingleset_view_hashes(want), minlsh_shingleset_count(want)));
        EXPECT(memcmp(fp, wfp, 16) == 0);
        minlsh_shingleset_free(fresh);
    }
    EXPECT(failures >= 1);

    /* finish at every fill level of the unit buffer and of the hash array,
     * with something left to flush (an unterminated entity, a truncated
     * UTF-8 sequence, a long word in progress): a failed finish must not
     * lose any of it */
    {
        static const uint32_t cu[3] = {MINLSH_UNIT_CODEPOINT, MINLSH_UNIT_WORD, MINLSH_UNIT_BYTE};
        static const uint32_t ck[3] = {4, 1, 2};
        uint8_t text[400];
        size_t l, i, c;
        int bad = 0, retried = 0;
        for (c = 0; c < 3; c++) {
            minlsh_shingler *cp = NULL;
            minlsh_shinglestream *s2 = NULL;
            o.unit = cu[c];
            o.k = ck[c];
            o.flags = MINLSH_NORM_HTML;
            EXPECT_OK(minlsh_shingler_new(&cp, &o, &fa));
            for (l = 40; l <= 360; l++) {
                minlsh_shingleset *w = NULL, *g = NULL;
                uint8_t wf[16], gf[16];
                for (i = 0; i < l; i++)
                    text[i] = cu[c] == MINLSH_UNIT_WORD ? (i < 3 ? "ab "[i] : 'x')
                                                        : (uint8_t)("ab \xC3\xA9<p>"[i % 8]);
                memcpy(text + l, "\xE2\x82&abcdefghijklmnopqrstuvwxyz01234", 34);
                minlsh_shingleset_new(&w, NULL);
                minlsh_shingleset_new(&g, &fa);
                EXPECT_OK(minlsh_shingler_hash(cp, text, l + 34, w, wf));
                for (n = 1;; n++) {
                    EXPECT_OK(minlsh_shinglestream_new(&s2, cp, NULL));
                    for (i = 0; i < l + 34; i++) minlsh_shinglestream_feed(s2, text + i, 1);
                    ta_fail_nth(&f, n);
                    rc = minlsh_shinglestream_finish(s2, g, gf);
                    ta_fail_nth(&f, 0);
                    if (rc != 0) {
                        retried++;
                        rc = minlsh_shinglestream_finish(s2, g, gf); /* retry */
                    } else {
                        n = -1;
                    }
                    if (rc != 0 || memcmp(gf, wf, 16) != 0 ||
                        !set_is(g, minlsh_shingleset_view_hashes(w), minlsh_shingleset_count(w)))
                        bad++;
                    minlsh_shinglestream_free(s2);
                    if (n < 0) break;
                }
                minlsh_shingleset_free(w);
                minlsh_shingleset_free(g);
            }
            minlsh_shingler_free(cp);
        }
        EXPECT_EQ_INT(bad, 0);
        /* The fresh set at least fails every time. (Feeds reserve room for
         * what their chunk may add, so that a chunk is all or nothing, and
         * finish often needs nothing more for the stream itself.) */
        EXPECT(retried >= 321);
    }

    /* assign: NOMEM leaves the set unchanged */
    for (n = 1, failures = 0;; n++) {
        minlsh_shingleset *fresh = NULL;
        EXPECT_OK(minlsh_shingleset_new(&fresh, &fa));
        EXPECT_OK(minlsh_shingleset_assign(fresh, sentinel, 3));
        ta_fail_nth(&f, n);
        rc = minlsh_shingleset_assign(fresh, minlsh_shingleset_view_hashes(want),
                                      minlsh_shingleset_count(want));
        ta_fail_nth(&f, 0);
        if (rc == 0) {
            EXPECT(set_is(fresh, minlsh_shingleset_view_hashes(want), minlsh_shingleset_count(want)));
            minlsh_shingleset_free(fresh);
            break;
        }
        failures++;
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        EXPECT(set_is(fresh, sentinel, 3));
        minlsh_shingleset_free(fresh);
    }
    EXPECT_EQ_INT(failures, 2);

    minlsh_shinglestream_free(st);
    minlsh_shingleset_free(set);
    minlsh_shingler_free(sh);
    EXPECT_EQ_INT(ta_blocks(&f), 0); /* nothing leaked */
    minlsh_shingleset_free(want);
    minlsh_shingler_free(plain);
    free(doc);
}

/* The engine's memory is bounded by the last k units and its block size,
 * not by the document: each() over 4 MB of text. */
static int count_emit(void *ctx, const uint64_t *h, size_t n) {
    (void)h;
    *(size_t *)ctx += n;
    return 0;
}

/* A long document of few distinct shingles (a phrase repeated 2M times):
 * the collected hashes stay near the distinct count, not one per shingle,
 * streamed or in one call, and the set is the short document's. */
static void test_few_distinct_long(void) {
    static const char phrase[] = "alpha beta gamma delta epsilon zeta eta ";
    const size_t reps = 2000000, plen = sizeof phrase - 1;
    size_t len = reps * plen, i, base;
    char *doc = malloc(len);
    testalloc m;
    minlsh_allocator a = ta_allocator(&m);
    minlsh_shingler *sh = NULL;
    minlsh_shinglestream *stream = NULL;
    minlsh_shingleset *longset = NULL, *shortset = NULL, *streamed = NULL;
    double jac = 0;
    if (doc == NULL) return;
    for (i = 0; i < reps; i++) memcpy(doc + i * plen, phrase, plen);
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, &a)); /* word 5-shingles */
    EXPECT_OK(minlsh_shingleset_new(&longset, &a));
    EXPECT_OK(minlsh_shingleset_new(&shortset, &a));
    EXPECT_OK(minlsh_shingleset_new(&streamed, &a));
    EXPECT_OK(minlsh_shingler_hash(sh, doc, 20 * plen, shortset, NULL));
    base = ta_bytes(&m);
    ta_reset_peak(&m);
    EXPECT_OK(minlsh_shingler_hash(sh, doc, len, longset, NULL));
    /* 14M shingles would take 112 MB at 8 bytes each. */
    EXPECT_MSG(ta_peak(&m) - base < (40u << 20), "peak %zu bytes", ta_peak(&m) - base);
    EXPECT_EQ_INT(minlsh_shingleset_count(longset), 7);
    EXPECT_OK(minlsh_shingleset_jaccard(&jac, longset, shortset));
    EXPECT(jac == 1.0);
    EXPECT_OK(minlsh_shinglestream_new(&stream, sh, &a));
    base = ta_bytes(&m);
    ta_reset_peak(&m);
    for (i = 0; i < len; i += 65536)
        EXPECT_OK(minlsh_shinglestream_feed(stream, doc + i, len - i < 65536 ? len - i : 65536));
    EXPECT_OK(minlsh_shinglestream_finish(stream, streamed, NULL));
    EXPECT_MSG(ta_peak(&m) - base < (40u << 20), "peak %zu bytes", ta_peak(&m) - base);
    EXPECT_OK(minlsh_shingleset_jaccard(&jac, streamed, shortset));
    EXPECT(jac == 1.0);
    minlsh_shinglestream_free(stream);
    minlsh_shingleset_free(longset);
    minlsh_shingleset_free(shortset);
    minlsh_shingleset_free(streamed);
    minlsh_shingler_free(sh);
    EXPECT_EQ_INT(ta_bytes(&m), 0);
    free(doc);
}

static void test_bounded_memory(void) {
    testalloc m;
    minlsh_allocator a = ta_allocator(&m);
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    size_t len = 4u << 20, i, count = 0, base;
    uint8_t *doc = malloc(len);
    uint64_t st = 1;
    len = random_doc(&st, doc, len, len / 3, 0);
    o.unit = MINLSH_UNIT_CODEPOINT;
    o.k = 8;
    o.flags = MINLSH_NORM_ALL;
    EXPECT_OK(minlsh_shingler_new(&sh, &o, &a));
    base = ta_bytes(&m);
    ta_reset_peak(&m);
    EXPECT_OK(minlsh__shingler_each(sh, doc, len, count_emit, &count));
    EXPECT(count > len / 4);
    EXPECT_MSG(ta_peak(&m) - base < 256 * 1024, "peak %zu bytes", ta_peak(&m) - base);
    EXPECT_EQ_INT(ta_bytes(&m), base);
    /* a single word as long as the document needs memory for itself */
    for (i = 0; i < (1u << 20); i++) doc[i] = 'x';
    ta_reset_peak(&m);
    count = 0;
    EXPECT_OK(minlsh__shingler_each(sh, doc, 1u << 20, count_emit, &count));
    EXPECT(ta_peak(&m) - base < 256 * 1024); /* code points: 8 at a time */
    minlsh_shingler_free(sh);
    o.unit = MINLSH_UNIT_WORD;
    o.k = 1;
    EXPECT_OK(minlsh_shingler_new(&sh, &o, &a));
    base = ta_bytes(&m);
    ta_reset_peak(&m);
    count = 0;
    EXPECT_OK(minlsh__shingler_each(sh, doc, 1u << 20, count_emit, &count));
    EXPECT_EQ_INT(count, 1);
    EXPECT(ta_peak(&m) - base >= (1u << 20)); /* the word itself */
    EXPECT(ta_peak(&m) - base < (5u << 20));
    minlsh_shingler_free(sh);
    EXPECT_EQ_INT(ta_bytes(&m), 0);
    free(doc);
}

/* The flag names' one table (minlsh_norm_flags_parse and _format): every
 * flag has a name, every combination reads back as the same flags, and the
 * order and spelling are those the command's older index files hold (a
 * change would make them unreadable). */
static void test_norm_flag_names(void) {
    static const char all[] = "html,lowercase,strip-punct,collapse-space,nfkc,casefold,"
                              "unicode-punct,unicode-space,fold-digits,cjk-words";
    const uint32_t named = MINLSH_NORM_ALL | MINLSH_NORM_UNICODE;
    char text[256], small[8];
    uint32_t flags = 0, bit, combo;
    size_t n = 0;
    EXPECT_OK(minlsh_norm_flags_format(named, text, sizeof text, &n));
    EXPECT_MSG(n == strlen(all) && memcmp(text, all, n) == 0, "all flags: '%.*s' (%zu)",
               (int)n, text, n);
    EXPECT_OK(minlsh_norm_flags_parse(&flags, text, n));
    EXPECT_EQ_U64(flags, named);
    EXPECT_EQ_INT(named, 0x3FF); /* ten named bits, the loop below covers them all */
    for (bit = 1; bit <= MINLSH_NORM_CJK_WORDS; bit <<= 1) {
        EXPECT_OK(minlsh_norm_flags_format(bit, text, sizeof text, &n));
        EXPECT_MSG(!(n == 4 && memcmp(text, "none", 4) == 0), "flag 0x%x has no name",
                   (unsigned)bit);
        EXPECT_MSG(memchr(text, ',', n) == NULL, "flag 0x%x: '%.*s'", (unsigned)bit, (int)n,
                   text);
    }
    /* Every combination round-trips, and its text is the names in table
     * order: the text of the low bits, a comma, the text of the high bits. */
    for (combo = 0; combo <= named; combo++) {
        flags = 0xFFFFFFFFu;
        EXPECT_OK(minlsh_norm_flags_format(combo, text, sizeof text, &n));
        EXPECT_OK(minlsh_norm_flags_parse(&flags, text, n));
        if (flags != combo) {
            EXPECT_MSG(0, "0x%x -> '%.*s' -> 0x%x", (unsigned)combo, (int)n, text,
                       (unsigned)flags);
            break;
        }
    }
    /* Bits without a name are left out; none left is "none". */
    EXPECT_OK(minlsh_norm_flags_format(0x80000000u, text, sizeof text, &n));
    EXPECT_MSG(n == 4 && memcmp(text, "none", 4) == 0, "unnamed bit: '%.*s'", (int)n, text);
    EXPECT_OK(minlsh_norm_flags_format(0x80000000u | MINLSH_NORM_HTML, text, sizeof text, &n));
    EXPECT_MSG(n == 4 && memcmp(text, "html", 4) == 0, "html + unnamed: '%.*s'", (int)n, text);

    EXPECT_OK(minlsh_norm_flags_format(0, text, sizeof text, &n));
    EXPECT_MSG(n == 4 && memcmp(text, "none", 4) == 0, "no flag: '%.*s'", (int)n, text);
    flags = 7;
    EXPECT_OK(minlsh_norm_flags_parse(&flags, "none", 4));
    EXPECT_EQ_U64(flags, 0);
    flags = 7;
    EXPECT_OK(minlsh_norm_flags_parse(&flags, "", 0));
    EXPECT_EQ_U64(flags, 0);
    flags = 7;
    EXPECT_OK(minlsh_norm_flags_parse(&flags, NULL, 0));
    EXPECT_EQ_U64(flags, 0);
    /* one comma at the end is allowed, in any order */
    EXPECT_OK(minlsh_norm_flags_parse(&flags, LIT("lowercase,html,")));
    EXPECT_EQ_U64(flags, MINLSH_NORM_CASEFOLD | MINLSH_NORM_HTML);
    EXPECT_OK(minlsh_norm_flags_parse(&flags, LIT("casefold")));
    EXPECT_EQ_U64(flags, MINLSH_NORM_UCASEFOLD); /* its own bit, not the twin */
    /* the length given is the text's end: "html" is not read as "htmlx" */
    EXPECT_OK(minlsh_norm_flags_parse(&flags, "htmlx", 4));
    EXPECT_EQ_U64(flags, MINLSH_NORM_HTML);
    /* unknown and empty names; *flags is 0 after each */
    {
        static const char *const bad[] = {"htm", "HTML", "html,bogus", "html ", " html",
                                          ",", ",html", "html,,lowercase", "html,,",
                                          "none,", "none,html", "html,none", "nonex"};
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            flags = 7;
            EXPECT_MSG(minlsh_norm_flags_parse(&flags, bad[i], strlen(bad[i])) ==
                               MINLSH_E_PARAM &&
                           flags == 0,
                       "'%s' gave flags 0x%x", bad[i], (unsigned)flags);
        }
    }
    EXPECT_ERR(minlsh_norm_flags_parse(NULL, "html", 4), MINLSH_E_NULL);
    flags = 7;
    EXPECT_ERR(minlsh_norm_flags_parse(&flags, NULL, 4), MINLSH_E_NULL);
    EXPECT_EQ_U64(flags, 0);

    /* A short buffer: BUFSIZE and the length needed (no NUL is written, so
     * the length is the room needed), the buffer untouched. */
    memset(small, 'x', sizeof small);
    n = 0;
    EXPECT_ERR(minlsh_norm_flags_format(MINLSH_NORM_HTML | MINLSH_NORM_NFKC, small, 8, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, 9); /* "html,nfkc" */
    EXPECT_MSG(memcmp(small, "xxxxxxxx", 8) == 0, "short buffer written");
    n = 0;
    EXPECT_ERR(minlsh_norm_flags_format(0, small, 3, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, 4); /* "none" */
    n = 0;
    EXPECT_ERR(minlsh_norm_flags_format(named, NULL, 0, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, strlen(all));
    EXPECT_ERR(minlsh_norm_flags_format(MINLSH_NORM_HTML, NULL, 4, &n), MINLSH_E_NULL);
    /* exactly the length fits, and nothing is written past it */
    memset(small, 'x', sizeof small);
    EXPECT_OK(minlsh_norm_flags_format(MINLSH_NORM_HTML, small, 4, NULL));
    EXPECT_MSG(memcmp(small, "htmlxxxx", 8) == 0, "exact buffer: '%.8s'", small);
}

int main(void) {
    RUN(test_options_and_defaults);
    RUN(test_constructor_errors);
    RUN(test_word_units);
    RUN(test_nul_bytes);
    RUN(test_byte_units);
    RUN(test_codepoint_units);
    RUN(test_invalid_utf8);
    RUN(test_casefold_punct_whitespace);
    RUN(test_html_tags);
    RUN(test_html_comments_scripts);
    RUN(test_html_entities);
    RUN(test_short_and_empty);
    RUN(test_stopwords);
    RUN(test_against_reference);
    RUN(test_large_documents);
    RUN(test_streaming_equals_oneshot);
    RUN(test_streaming_long);
    RUN(test_stream_lifecycle);
    RUN(test_each);
    RUN(test_fingerprint);
    RUN(test_config_id);
    RUN(test_worked_example);
    RUN(test_max_document_bytes);
    RUN(test_shingleset_ops);
    RUN(test_allocation_failures);
    RUN(test_bounded_memory);
    RUN(test_few_distinct_long);
    RUN(test_norm_flag_names);
    return TL_SUMMARY("shingle");
}
