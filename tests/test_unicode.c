/*
 * The Unicode normalisation flags (docs/shingling.md 3.5): the stage's
 * output for chosen texts, what the shingler makes of it end to end, the
 * config ids, streaming equal to one-shot at every split point, and word
 * splitting for scripts without spaces. tests/unicode_tables.sh checks the
 * tables against Python's unicodedata through "test_unicode --dump".
 */
#include "minlsh.h"
#include "shingle/unicode.h"
#include "testlib.h"

#define LIT(s) (s), (sizeof(s) - 1)

static minlsh_shingler *mk(uint32_t unit, uint32_t k, uint32_t flags) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    o.unit = unit;
    o.k = k;
    o.flags = flags;
    if (minlsh_shingler_new(&sh, &o, NULL) != 0) {
        printf("cannot make a shingler (unit %u k %u flags %x)\n", unit, k, flags);
        exit(1);
    }
    return sh;
}

/* ---- the stage alone ---------------------------------------------------------------------- */

static void check_stage(int line, uint32_t flags, int split, const char *in, size_t n,
                        const char *want, size_t wn) {
    uint8_t out[4096];
    size_t got = 0;
    int rc = minlsh__unicode_normalize(flags, split, (const uint8_t *)in, n, out, sizeof out, &got);
    if (rc != 0 || got != wn || memcmp(out, want, wn) != 0)
        TL_FAIL("line %d: flags %x split %d: \"%.*s\" gave \"%.*s\", expected \"%.*s\"", line,
                flags, split, (int)n, in, (int)got, (const char *)out, (int)wn, want);
}
#define STAGE(flags, split, in, want) check_stage(__LINE__, flags, split, LIT(in), LIT(want))

static void test_nfkc(void) {
    const uint32_t F = MINLSH_NORM_NFKC;
    STAGE(F, 0, "\xef\xac\x81", "fi");                          /* U+FB01 ligature */
    STAGE(F, 0, "\xef\xbc\xa1\xef\xbc\x91", "A1");              /* full-width A 1 */
    STAGE(F, 0, "e\xcc\x81", "\xc3\xa9");                       /* e + acute: é */
    STAGE(F, 0, "\xc3\xa9", "\xc3\xa9");                        /* é stays */
    STAGE(F, 0, "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", "\xea\xb0\x81"); /* jamo: 각 */
    STAGE(F, 0, "\xea\xb0\x81", "\xea\xb0\x81");
    STAGE(F, 0, "\xe3\x89\xbe", "\xec\x9a\xb0");                /* circled 우 */
    /* q + dot above (230) + dot below (220): reordered */
    STAGE(F, 0, "q\xcc\x87\xcc\xa3", "q\xcc\xa3\xcc\x87");
    /* long s with dot above + dot below: U+1E69 */
    STAGE(F, 0, "\xe1\xba\x9b\xcc\xa3", "\xe1\xb9\xa9");
    /* a mark first, a lone mark, then the next starter */
    STAGE(F, 0, "\xcc\x81" "a", "\xcc\x81" "a");
    STAGE(F, 0, "\xe2\x84\xab", "\xc3\x85"); /* Angstrom sign: Å */
    STAGE(F, 0, "x\xc2\xa0y", "x y");        /* no-break space is <noBreak> space */
    STAGE(F, 0, "", "");
}

static void test_casefold(void) {
    const uint32_t F = MINLSH_NORM_UCASEFOLD;
    /* ASCII is left to the byte tables (CASEFOLD comes with UCASEFOLD) */
    STAGE(F, 0, "\xc3\x89" "COLE \xc3\x9c" "BER STRA\xc3\x9f" "E",
          "\xc3\xa9" "COLE \xc3\xbc" "BER STRAssE");
    STAGE(F, 0, "\xe1\xba\x9e", "ss");                          /* capital sharp s */
    /* sigma: capital, small and final all fold to small sigma */
    STAGE(F, 0, "\xce\xa3\xce\xb1\xcf\x82", "\xcf\x83\xce\xb1\xcf\x83");
    STAGE(F, 0, "\xc4\xb0", "i\xcc\x87");                       /* I with dot above */
    STAGE(F, 0, "\xd0\x9f\xd0\xa0\xd0\x98", "\xd0\xbf\xd1\x80\xd0\xb8"); /* ПРИ */
    STAGE(F, 0, "\xef\xac\x81", "fi");                          /* F folding of U+FB01 */
    /* NFKC first, then folding: ℌ is H under NFKC, then h */
    STAGE(F | MINLSH_NORM_NFKC, 0, "\xe2\x84\x8c", "h");
    STAGE(F, 0, "\xe2\x84\x8c", "\xe2\x84\x8c");
}

static void test_classes(void) {
    const uint32_t P = MINLSH_NORM_UPUNCT, W = MINLSH_NORM_UWHITESPACE, D = MINLSH_NORM_DIGITS;
    /* quotes, dashes, guillemets, euro, plus, emoji (So) */
    STAGE(P, 0, "\xe2\x80\x9c" "a\xe2\x80\x94" "b\xe2\x80\x9d \xc2\xab" "c\xc2\xbb \xe2\x82\xac" "5+",
          "ab c 5+"); /* ASCII '+' is left to PUNCT */
    STAGE(P, 0, "x\xf0\x9f\x98\x80y", "xy");
    /* U+FFFD, written or standing for an invalid byte, is kept */
    STAGE(P, 0, "a\xef\xbf\xbd" "b\xff" "c", "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c");
    STAGE(W, 0, "a\xc2\xa0" "b\xe3\x80\x80" "c\xe2\x80\xa8" "d\xc2\x85" "e\tf", "a b c d e\tf");
    STAGE(W, 0, "a\xe2\x80\x8b" "b", "a\xe2\x80\x8b" "b"); /* zero width space is not White_Space */
    /* Arabic-Indic, Devanagari, full-width digits */
    STAGE(D, 0, "\xd9\xa3\xe0\xa5\xaa\xef\xbc\x95", "345");
    STAGE(D, 0, "\xc2\xb2", "\xc2\xb2"); /* superscript two is No, not Nd */
    STAGE(D | MINLSH_NORM_NFKC, 0, "\xc2\xb2", "2");
}

static void test_split(void) {
    const uint32_t S = MINLSH_NORM_CJK_WORDS;
    /* each Han character a word; Latin stays together */
    STAGE(S, 1, "\xe4\xb8\xad\xe6\x96\x87" "abc", " \xe4\xb8\xad \xe6\x96\x87 abc");
    /* Thai: a vowel sign (a mark) stays with its consonant */
    STAGE(S, 1, "\xe0\xb8\x81\xe0\xb8\xb4\xe0\xb8\x99", " \xe0\xb8\x81\xe0\xb8\xb4 \xe0\xb8\x99");
    /* hiragana, katakana; the prolonged sound mark is a word of its own */
    STAGE(S, 1, "\xe3\x81\x82\xe3\x82\xa2\xe3\x83\xbc" "x",
          " \xe3\x81\x82 \xe3\x82\xa2 \xe3\x83\xbc" "x");
    /* Hangul has spaces: untouched; without split nothing happens */
    STAGE(S, 1, "\xed\x95\x9c\xea\xb8\x80", "\xed\x95\x9c\xea\xb8\x80");
    STAGE(S, 0, "\xe4\xb8\xad\xe6\x96\x87", "\xe4\xb8\xad\xe6\x96\x87");
    /* half-width katakana become full-width under NFKC, then split */
    STAGE(S | MINLSH_NORM_NFKC, 1, "\xef\xbd\xb1\xef\xbd\xb2", " \xe3\x82\xa2 \xe3\x82\xa4");
}

/* Ill-formed UTF-8: each byte of an ill-formed sequence is one U+FFFD, the
 * byte that cut it short is read again (the CODEPOINT rule of section 4). */
static void test_invalid(void) {
    STAGE(MINLSH_NORM_NFKC, 0, "\xe2\x82" "A", "\xef\xbf\xbd\xef\xbf\xbd" "A");
    STAGE(MINLSH_NORM_NFKC, 0, "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd");
    STAGE(MINLSH_NORM_NFKC, 0, "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    STAGE(MINLSH_NORM_NFKC, 0, "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    STAGE(MINLSH_NORM_UCASEFOLD, 0, "x\xf0\x9f\x98", "x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

/* ---- end to end ---------------------------------------------------------------------------- */

/* The fingerprint of a WORD shingler is SipHash-128 of its unit stream. */
static void check_stream(int line, uint32_t unit, uint32_t flags, const char *in, size_t n,
                         const char *want, size_t wn) {
    minlsh_shingler *sh = mk(unit, 3, flags);
    uint8_t fp[16], wfp[16];
    EXPECT_OK(minlsh_shingler_hash(sh, in, n, NULL, fp));
    minlsh_siphash24_128(wfp, minlsh_default_key(), want, wn);
    if (memcmp(fp, wfp, 16) != 0)
        TL_FAIL("line %d: flags %x: the unit stream of \"%.*s\" is not \"%.*s\"", line, flags,
                (int)n, in, (int)wn, want);
    minlsh_shingler_free(sh);
}
#define UNITS(unit, flags, in, want) check_stream(__LINE__, unit, flags, LIT(in), LIT(want))

static void test_end_to_end(void) {
    const uint32_t ALL = MINLSH_NORM_ALL | MINLSH_NORM_UNICODE;
    UNITS(MINLSH_UNIT_WORD, ALL, "\xc3\x89" "COLE \xc3\x9c" "BER STRA\xc3\x9f" "E",
          "\xc3\xa9" "cole \xc3\xbc" "ber strasse");
    UNITS(MINLSH_UNIT_WORD, ALL, "\xc3\xa9" "cole \xc3\xbc" "ber stra\xc3\x9f" "e",
          "\xc3\xa9" "cole \xc3\xbc" "ber strasse");
    /* typographic quotes and dashes go, no-break and ideographic spaces split */
    UNITS(MINLSH_UNIT_WORD, ALL, "\xe2\x80\x9c" "Don\xe2\x80\x99t\xe2\x80\x9d\xc2\xa0stop \xe2\x80\x94 \xef\xac\x81" "ne\xe3\x80\x80" "OK",
          "dont stop fine ok");
    /* Chinese with a full-width comma; English around it */
    UNITS(MINLSH_UNIT_WORD, ALL, "\xe4\xb8\xad\xe6\x96\x87\xef\xbc\x8c" "ABC\xe5\xad\x97",
          "\xe4\xb8\xad \xe6\x96\x87 abc \xe5\xad\x97");
    /* code points: whitespace collapsed and trimmed, no splitting */
    UNITS(MINLSH_UNIT_CODEPOINT, ALL, "\xe3\x80\x80 \xe4\xb8\xad\xe6\x96\x87 \xc2\xa0 X ",
          "\xe4\xb8\xad\xe6\x96\x87 x");
    /* HTML first: an entity's code point is normalised */
    UNITS(MINLSH_UNIT_WORD, ALL, "<p>&#xFF21;&#xFB01;&amp;&#x3000;STRA&#223;E</p>", "afi strasse");
    /* a combining mark in an entity composes with the letter before it */
    UNITS(MINLSH_UNIT_WORD, ALL, "e&#x301;t&#xE9;", "\xc3\xa9t\xc3\xa9");
    /* word units without the Unicode stage keep bytes as they are */
    UNITS(MINLSH_UNIT_WORD, MINLSH_NORM_ALL, "\xc3\x89" "COLE", "\xc3\x89" "cole");
}

/* Unicode flags bring their ASCII counterparts, which on ASCII text give
 * the same hashes; the config ids differ (the version is in them). */
static void test_flags_and_ids(void) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *a, *b, *sh = NULL;
    minlsh_shingleset *sa = NULL, *sb = NULL;
    uint64_t ia, ib;
    static const char text[] = "The QUICK, brown fox;\tjumps over  the lazy dog 42 times!";
    a = mk(MINLSH_UNIT_WORD, 3, MINLSH_NORM_UCASEFOLD | MINLSH_NORM_UPUNCT |
                                    MINLSH_NORM_UWHITESPACE | MINLSH_NORM_NFKC |
                                    MINLSH_NORM_DIGITS | MINLSH_NORM_CJK_WORDS);
    b = mk(MINLSH_UNIT_WORD, 3, MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE);
    EXPECT_EQ_U64(minlsh_shingler_flags(a), MINLSH_NORM_UNICODE | MINLSH_NORM_CASEFOLD |
                                                MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE);
    minlsh_shingleset_new(&sa, NULL);
    minlsh_shingleset_new(&sb, NULL);
    EXPECT_OK(minlsh_shingler_hash(a, LIT(text), sa, NULL));
    EXPECT_OK(minlsh_shingler_hash(b, LIT(text), sb, NULL));
    EXPECT_EQ_INT(minlsh_shingleset_count(sa), 9);
    EXPECT(minlsh_shingleset_count(sa) == minlsh_shingleset_count(sb) &&
           memcmp(minlsh_shingleset_view_hashes(sa), minlsh_shingleset_view_hashes(sb),
                  8 * minlsh_shingleset_count(sa)) == 0);
    minlsh_shingler_config_id(&ia, a);
    minlsh_shingler_config_id(&ib, b);
    EXPECT(ia != ib);
    /* pinned: a Unicode id, and the ASCII ids of docs/shingling.md */
    EXPECT_EQ_U64(ia, 0x8f8eaf9e325634bau);
    minlsh_shingler_free(a);
    minlsh_shingler_free(b);
    a = mk(MINLSH_UNIT_WORD, 5, 0);
    b = mk(MINLSH_UNIT_WORD, 3, MINLSH_NORM_ALL);
    minlsh_shingler_config_id(&ia, a);
    minlsh_shingler_config_id(&ib, b);
    EXPECT_EQ_U64(ia, 0x84f6fe21ac593947u);
    EXPECT_EQ_U64(ib, 0x775f76631e0f3720u);
    minlsh_shingler_free(a);
    minlsh_shingler_free(b);
    /* CJK_WORDS alone is dropped for bytes and code points (the default
     * options there are flags 0's shingler, invalid bytes included); with
     * another Unicode flag, or for words, it stays */
    {
        static const char bad[] = "ab \xff\xfe cd \xe4\xb8\xad\xe6\x96\x87 ef";
        static const uint32_t units[] = {MINLSH_UNIT_BYTE, MINLSH_UNIT_CODEPOINT};
        size_t u;
        for (u = 0; u < 2; u++) {
            a = mk(units[u], 3, MINLSH_NORM_CJK_WORDS);
            b = mk(units[u], 3, 0);
            EXPECT_EQ_INT(minlsh_shingler_flags(a), 0);
            minlsh_shingler_config_id(&ia, a);
            minlsh_shingler_config_id(&ib, b);
            EXPECT_EQ_U64(ia, ib);
            EXPECT_OK(minlsh_shingler_hash(a, LIT(bad), sa, NULL));
            EXPECT_OK(minlsh_shingler_hash(b, LIT(bad), sb, NULL));
            EXPECT(minlsh_shingleset_count(sa) > 5 &&
                   minlsh_shingleset_count(sa) == minlsh_shingleset_count(sb) &&
                   memcmp(minlsh_shingleset_view_hashes(sa), minlsh_shingleset_view_hashes(sb),
                          8 * minlsh_shingleset_count(sa)) == 0);
            minlsh_shingler_free(a);
            minlsh_shingler_free(b);
            a = mk(units[u], 3, MINLSH_NORM_CJK_WORDS | MINLSH_NORM_NFKC);
            EXPECT_EQ_INT(minlsh_shingler_flags(a), MINLSH_NORM_CJK_WORDS | MINLSH_NORM_NFKC);
            minlsh_shingler_free(a);
        }
        a = mk(MINLSH_UNIT_STOPWORD, 3, MINLSH_NORM_CJK_WORDS);
        EXPECT_EQ_INT(minlsh_shingler_flags(a), MINLSH_NORM_CJK_WORDS);
        minlsh_shingler_free(a);
    }
    o.flags = 0x400;
    EXPECT_ERR(minlsh_shingler_new(&sh, &o, NULL), MINLSH_E_PARAM);
    EXPECT_EQ_INT(minlsh_unicode_version(), MINLSH_UNICODE_VERSION);
    EXPECT_EQ_INT(MINLSH_UNICODE_VERSION, 150000);
    minlsh_shingleset_free(sa);
    minlsh_shingleset_free(sb);
}

/* The example: two 300-character Chinese texts that differ in one
 * character are similar under the default options (each character a word),
 * and have similarity 0 under version 1's defaults (each text one word). */
static void test_chinese_similarity(void) {
    static const char base[] = "\xe6\x88\x91\xe4\xbb\xac\xe4\xbb\x8a\xe5\xa4\xa9\xe5\x8e\xbb"
                               "\xe5\x85\xac\xe5\x9b\xad\xe7\x9c\x8b\xe8\x8a\xb1\xe5\x92\x8c"
                               "\xe6\xa0\x91\xe6\x9c\xa8\xe5\xa4\xa9\xe6\xb0\x94\xe5\xbe\x88"
                               "\xe5\xa5\xbd"; /* 16 characters */
    uint8_t a[300 * 3], b[300 * 3];
    /* the default options, and version 1's (flags 0) */
    minlsh_shingler_options def = MINLSH_SHINGLER_OPTIONS_INIT, v1;
    minlsh_shingler *on = NULL, *off = NULL;
    minlsh_shingleset *sa = NULL, *sb = NULL;
    minlsh_family *fam = NULL;
    uint32_t ga[128], gb[128];
    double j = -1;
    size_t i;
    uint64_t rs = 3;
    EXPECT_OK(minlsh_shingler_options_init(&v1, 1));
    EXPECT_OK(minlsh_shingler_new(&on, &def, NULL));
    EXPECT_OK(minlsh_shingler_new(&off, &v1, NULL));
    EXPECT_OK(minlsh_family_new(&fam, 128, 1, NULL));
    for (i = 0; i < 300; i++) { /* characters of base in a pseudo-random order */
        size_t c = (size_t)(tl_rand(&rs) % 16);
        memcpy(a + 3 * i, base + 3 * c, 3);
    }
    memcpy(b, a, sizeof a);
    memcpy(b + 3 * 150, "\xe7\x8c\xab", 3); /* one character changed */
    minlsh_shingleset_new(&sa, NULL);
    minlsh_shingleset_new(&sb, NULL);
    EXPECT_OK(minlsh_shingler_hash(on, a, sizeof a, sa, NULL));
    EXPECT_OK(minlsh_shingler_hash(on, b, sizeof b, sb, NULL));
    EXPECT_OK(minlsh_shingleset_jaccard(&j, sa, sb));
    /* 296 shingles each, at most 5 differ: J >= 291 / 301 */
    EXPECT(minlsh_shingleset_count(sa) > 250);
    EXPECT(j >= 291.0 / 301 && j < 1);
    /* the estimate from 128 values: J = 0.967 has a standard error of
     * 0.016, so 0.9 is four of them away */
    EXPECT_OK(minlsh_family_sign_text(fam, on, a, sizeof a, ga, 128, NULL));
    EXPECT_OK(minlsh_family_sign_text(fam, on, b, sizeof b, gb, 128, NULL));
    EXPECT_OK(minlsh_signature_estimate(&j, ga, gb, 128));
    EXPECT(j > 0.9);
    EXPECT_OK(minlsh_shingler_hash(off, a, sizeof a, sa, NULL));
    EXPECT_OK(minlsh_shingler_hash(off, b, sizeof b, sb, NULL));
    EXPECT_OK(minlsh_shingleset_jaccard(&j, sa, sb));
    EXPECT_NEAR(j, 0, 0);
    EXPECT_OK(minlsh_family_sign_text(fam, off, a, sizeof a, ga, 128, NULL));
    EXPECT_OK(minlsh_family_sign_text(fam, off, b, sizeof b, gb, 128, NULL));
    EXPECT_OK(minlsh_signature_estimate(&j, ga, gb, 128));
    EXPECT(j < 0.1);
    minlsh_family_free(fam);
    minlsh_shingleset_free(sa);
    minlsh_shingleset_free(sb);
    minlsh_shingler_free(on);
    minlsh_shingler_free(off);
}

/* docs/shingling.md 10.1, value for value. */
/* Document d of a worked example in docs/shingling.md: its fingerprint (hex)
 * and its n shingle hashes, in order. */
static void expect_hashed(const minlsh_shingler *sh, minlsh_shingleset *set, size_t d,
                          const char *text, const uint64_t *want, size_t n, const char *fp_hex) {
    uint8_t fp[16];
    char hex[33];
    size_t i;
    EXPECT_OK(minlsh_shingler_hash(sh, text, strlen(text), set, fp));
    for (i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", fp[i]);
    EXPECT_MSG(strcmp(hex, fp_hex) == 0, "document %zu: fingerprint %s", d, hex);
    EXPECT_EQ_INT(minlsh_shingleset_count(set), n);
    for (i = 0; i < n && i < minlsh_shingleset_count(set); i++)
        EXPECT_EQ_U64(minlsh_shingleset_view_hashes(set)[i], want[i]);
}

static void test_docs_example(void) {
    static const struct {
        const char *text;
        uint64_t set[7];
        size_t n;
        const char *fp;
    } docs[] = {
        {"\xc3\x89" "COLE \xc3\x9c" "BER STRA\xc3\x9f" "E \xe2\x80\x94 \xe2\x80\x9c" "the "
         "\xef\xac\x81rst\xe2\x80\x9d day",
         {0x51257b998a5824c1u, 0x58cb44ee61dd65cbu, 0x99adce4e90c08dc9u, 0xd80ee2b1768f1a56u}, 4,
         "3b27af74e7101561a8acc4840954f813"},
        {"\xe6\x88\x91\xe4\xbb\xac\xe4\xbb\x8a\xe5\xa4\xa9\xef\xbc\x8c\xe5\x8e\xbb\xe5\x85"
         "\xac\xe5\x9b\xad\xe3\x80\x82\xef\xbc\xa1\xef\xbc\x91 \xd9\xa3",
         {0x4c9ab18847b535eau, 0x57984083c9d04da3u, 0x99cf575b016cb4feu, 0x9e4befb6edb4988cu,
          0xbd7070cc021aa88fu, 0xbddbb9a3734fa1a3u, 0xc639f43e004478aeu}, 7,
         "d33b3ebc17e5d2b75415097db41ee270"},
        {"\xce\xa3\xce\xaf\xcf\x83\xcf\x85\xcf\x86\xce\xbf\xcf\x82 \xce\x9f\xce\x94\xce"
         "\x9f\xce\xa3\xc2\xa0" "cafe\xcc\x81",
         {0x8485f871cb8c3e75u}, 1, "d896cb9ec1e2a26f6d37289e1a3664fd"},
    };
    minlsh_shingler *sh = mk(MINLSH_UNIT_WORD, 3, MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT |
                                                      MINLSH_NORM_WHITESPACE | MINLSH_NORM_UNICODE);
    minlsh_shingleset *set = NULL;
    uint64_t id = 0;
    size_t d;
    minlsh_shingleset_new(&set, NULL);
    minlsh_shingler_config_id(&id, sh);
    EXPECT_EQ_U64(id, 0x8f8eaf9e325634bau);
    for (d = 0; d < sizeof docs / sizeof docs[0]; d++)
        expect_hashed(sh, set, d, docs[d].text, docs[d].set, docs[d].n, docs[d].fp);
    minlsh_shingleset_free(set);
    minlsh_shingler_free(sh);
}

/* docs/shingling.md 10.2: the default options, value for value. */
static void test_docs_default_example(void) {
    static const struct {
        const char *text;
        uint64_t set[6];
        size_t n;
        const char *fp;
    } docs[] = {
        {"\xe6\x88\x91\xe4\xbb\xac\xe4\xbb\x8a\xe5\xa4\xa9\xe5\x8e\xbb\xe5\x85\xac\xe5\x9b"
         "\xad\xe7\x9c\x8b\xe8\x8a\xb1\xe3\x80\x82",
         {0x2b35a6a2dd40265bu, 0x3153da120f9d3c31u, 0x3f996b366644adfcu, 0x83303055d2854ec4u,
          0xdc82f0ff1fcb0389u, 0xe0031283add64c9au},
         6, "91488acaf277b221bfb55aaefaa24528"},
        {"Tokyo \xe3\x82\xbf\xe3\x83\xaf\xe3\x83\xbc \xe8\xa6\x8b\xe7\x89\xa9",
         {0x513a6c019e8fa3c2u, 0x7b0a0f1b28ff17c1u}, 2, "a8cf164f578b8f990b12e2f863197306"},
    };
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL, *old = NULL;
    minlsh_shingleset *set = NULL;
    uint64_t id = 0;
    size_t d;
    EXPECT_OK(minlsh_shingler_new(&sh, &o, NULL));
    EXPECT_OK(minlsh_shingler_options_init(&o, 1));
    EXPECT_OK(minlsh_shingler_new(&old, &o, NULL));
    minlsh_shingleset_new(&set, NULL);
    minlsh_shingler_config_id(&id, sh);
    EXPECT_EQ_U64(id, 0x9146460a92fa52d1u);
    for (d = 0; d < sizeof docs / sizeof docs[0]; d++)
        expect_hashed(sh, set, d, docs[d].text, docs[d].set, docs[d].n, docs[d].fp);
    /* without the flag the Chinese text is one word: one shingle */
    EXPECT_OK(minlsh_shingler_hash(old, docs[0].text, strlen(docs[0].text), set, NULL));
    EXPECT_EQ_INT(minlsh_shingleset_count(set), 1);
    minlsh_shingleset_free(set);
    minlsh_shingler_free(sh);
    minlsh_shingler_free(old);
}

/* ---- streaming equals one-shot --------------------------------------------------------------- */

static const char *const samples[] = {
    /* combining sequences, Hangul jamo, sigma, sharp s, ligatures */
    "\xc3\x89" "COLE e\xcc\x81\xcc\xa3 q\xcc\x87\xcc\xa3 \xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8 "
    "\xce\xa3\xce\xb1\xcf\x82 STRA\xc3\x9f" "E \xef\xac\x81 \xef\xbc\xa1\xef\xbc\x91 \xe2\x84\xab",
    /* CJK, Thai with marks, kana, punctuation, digits, spaces */
    "\xe4\xb8\xad\xe6\x96\x87\xef\xbc\x8c\xe5\xad\x97\xe3\x80\x82 \xe0\xb8\x81\xe0\xb8\xb4\xe0"
    "\xb8\x99\xe0\xb8\x82\xe0\xb9\x89\xe0\xb8\xb2\xe0\xb8\xa7 \xe3\x81\x82\xe3\x82\xa2\xe3\x83"
    "\xbc\xef\xbd\xb1 \xd9\xa3\xe0\xa5\xaa 12 \xe2\x80\x9cq\xe2\x80\x9d\xc2\xa0x\xe3\x80\x80y",
    /* Russian, HTML with entities, invalid bytes */
    "<p>\xd0\x9f\xd0\xa0\xd0\x98\xd0\x92\xd0\x95\xd0\xa2 &#xFB01;&amp;e&#x301; &#xFF21; "
    "\xd0\xbc\xd0\xb8\xd1\x80</p> bad\xff\xc3 x\xe2\x82 \xf0\x9f\x98\x80 \xed\xa0\x80" "e",
    /* a long run of combining marks (longer than the NFKC window) */
    "a\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81"
    "\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81"
    "\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\x81\xcc\xa3\xcc\xa3"
    "\xcc\xa3\xcc\xa3\xcc\xa3 b \xef\xb7\xba",
};

static int same_output(const minlsh_shingler *sh, const uint8_t *t, size_t len,
                       const size_t *cuts, size_t nc, minlsh_shinglestream *st,
                       const minlsh_shingleset *want, const uint8_t wfp[16],
                       minlsh_shingleset *got) {
    uint8_t fp[16];
    size_t prev = 0, i;
    (void)sh;
    for (i = 0; i <= nc; i++) {
        size_t end = i < nc ? cuts[i] : len;
        if (minlsh_shinglestream_feed(st, t + prev, end - prev) != 0) return 0;
        prev = end;
    }
    if (minlsh_shinglestream_finish(st, got, fp) != 0) return 0;
    /* An empty set has no hashes to view (NULL): memcmp must not see it. */
    return memcmp(fp, wfp, 16) == 0 &&
           minlsh_shingleset_count(got) == minlsh_shingleset_count(want) &&
           (minlsh_shingleset_count(want) == 0 ||
            memcmp(minlsh_shingleset_view_hashes(got), minlsh_shingleset_view_hashes(want),
                   8 * minlsh_shingleset_count(want)) == 0);
}

static void test_streaming(void) {
    static const uint32_t units[] = {MINLSH_UNIT_BYTE, MINLSH_UNIT_CODEPOINT, MINLSH_UNIT_WORD,
                                     MINLSH_UNIT_STOPWORD};
    static const uint32_t flagsets[] = {
        MINLSH_NORM_UNICODE | MINLSH_NORM_ALL, MINLSH_NORM_NFKC, MINLSH_NORM_UCASEFOLD,
        MINLSH_NORM_NFKC | MINLSH_NORM_CJK_WORDS | MINLSH_NORM_WHITESPACE,
        MINLSH_NORM_UPUNCT | MINLSH_NORM_UWHITESPACE | MINLSH_NORM_DIGITS | MINLSH_NORM_HTML,
        MINLSH_NORM_CJK_WORDS /* the default */, MINLSH_NORM_CJK_WORDS | MINLSH_NORM_HTML};
    size_t u, f, d, s, bad = 0, runs = 0;
    for (u = 0; u < 4; u++)
        for (f = 0; f < sizeof flagsets / sizeof flagsets[0]; f++) {
            minlsh_shingler *sh = mk(units[u], 2, flagsets[f]);
            minlsh_shinglestream *st = NULL;
            minlsh_shingleset *want = NULL, *got = NULL;
            minlsh_shingleset_new(&want, NULL);
            minlsh_shingleset_new(&got, NULL);
            EXPECT_OK(minlsh_shinglestream_new(&st, sh, NULL));
            for (d = 0; d < sizeof samples / sizeof samples[0]; d++) {
                const uint8_t *t = (const uint8_t *)samples[d];
                size_t len = strlen(samples[d]), cuts[2];
                uint8_t wfp[16];
                EXPECT_OK(minlsh_shingler_hash(sh, t, len, want, wfp));
                for (s = 0; s <= len; s++) {
                    runs++;
                    if (!same_output(sh, t, len, &s, 1, st, want, wfp, got) && bad++ < 3)
                        TL_FAIL("unit %u flags %x sample %zu split at %zu", units[u],
                                flagsets[f], d, s);
                    cuts[0] = s / 2;
                    cuts[1] = s;
                    if (!same_output(sh, t, len, cuts, 2, st, want, wfp, got) && bad++ < 3)
                        TL_FAIL("unit %u flags %x sample %zu split at %zu and %zu", units[u],
                                flagsets[f], d, s / 2, s);
                }
                { /* one byte at a time */
                    size_t one[512], i;
                    for (i = 0; i + 1 < len && i < 512; i++) one[i] = i + 1;
                    if (!same_output(sh, t, len, one, i, st, want, wfp, got) && bad++ < 3)
                        TL_FAIL("unit %u flags %x sample %zu byte by byte", units[u],
                                flagsets[f], d);
                }
            }
            minlsh_shinglestream_free(st);
            minlsh_shingleset_free(want);
            minlsh_shingleset_free(got);
            minlsh_shingler_free(sh);
        }
    EXPECT(runs > 1000);
    EXPECT_EQ_INT(bad, 0);
}

/* Random strings of code points that interact (marks of several classes,
 * jamo, composed and compatibility characters, split scripts, invalid
 * bytes): the stream fed byte by byte, or cut at random, gives what the
 * one-shot call gives, under each flag set (the fingerprint of BYTE units
 * is the hash of the whole normalised text). */
static void test_random_streaming(void) {
    static const char *const pool[] = {
        "a", "E", " ", ".", "\xc3\xa9", "\xc3\x85", "\xc3\x9f", "\xe1\xba\x9b", "\xef\xac\x81",
        "\xcc\x81", "\xcc\x87", "\xcc\xa3", "\xcc\x9b", "\xcd\x85", "\xe1\x84\x80",
        "\xe1\x85\xa1", "\xe1\x86\xa8", "\xea\xb0\x80", "\xea\xb0\x81", "\xe3\x81\x8b",
        "\xe3\x82\x99", "\xef\xbd\xb6", "\xef\xbe\x9e", "\xe4\xb8\xad", "\xe0\xb8\x81",
        "\xe0\xb8\xb4", "\xce\xa3", "\xcf\x82", "\xd9\xa3", "\xe2\x80\x94", "\xc2\xa0",
        "\xe3\x80\x80", "\xef\xb7\xba", "\xff", "\xe2\x82", "\xf0\x9f\x98\x80", "\xe0\xad\x87",
        "\xe0\xac\xbe", "\xd0\x99", "\xd0\xb8", "\xcc\x86"};
    static const uint32_t flagsets[] = {MINLSH_NORM_UNICODE | MINLSH_NORM_ALL, MINLSH_NORM_NFKC,
                                        MINLSH_NORM_NFKC | MINLSH_NORM_UCASEFOLD,
                                        MINLSH_NORM_UNICODE & ~MINLSH_NORM_NFKC,
                                        MINLSH_NORM_CJK_WORDS};
    static const uint32_t units[] = {MINLSH_UNIT_BYTE, MINLSH_UNIT_WORD};
    uint64_t rs = 99;
    size_t f, u, it, bad = 0;
    for (f = 0; f < sizeof flagsets / sizeof *flagsets; f++)
        for (u = 0; u < 2; u++) {
            minlsh_shingler *sh = mk(units[u], 2, flagsets[f]);
            minlsh_shinglestream *st = NULL;
            minlsh_shingleset *want = NULL, *got = NULL;
            minlsh_shingleset_new(&want, NULL);
            minlsh_shingleset_new(&got, NULL);
            EXPECT_OK(minlsh_shinglestream_new(&st, sh, NULL));
            for (it = 0; it < 300; it++) {
                char text[256];
                size_t len = 0, m = 1 + (size_t)(tl_rand(&rs) % 24), i, one[256], cuts[3];
                uint8_t wfp[16];
                for (i = 0; i < m; i++) {
                    const char *x = pool[tl_rand(&rs) % (sizeof pool / sizeof *pool)];
                    memcpy(text + len, x, strlen(x));
                    len += strlen(x);
                }
                EXPECT_OK(minlsh_shingler_hash(sh, text, len, want, wfp));
                for (i = 0; i + 1 < len; i++) one[i] = i + 1;
                if (!same_output(sh, (const uint8_t *)text, len, one, len ? len - 1 : 0, st,
                                 want, wfp, got) &&
                    bad++ < 3)
                    TL_FAIL("flags %x unit %u: \"%.*s\" byte by byte", flagsets[f], units[u],
                            (int)len, text);
                for (i = 0; i < 3; i++) cuts[i] = (size_t)(tl_rand(&rs) % (len + 1));
                if (cuts[0] > cuts[1]) { size_t t = cuts[0]; cuts[0] = cuts[1]; cuts[1] = t; }
                if (cuts[1] > cuts[2]) { size_t t = cuts[1]; cuts[1] = cuts[2]; cuts[2] = t; }
                if (cuts[0] > cuts[1]) { size_t t = cuts[0]; cuts[0] = cuts[1]; cuts[1] = t; }
                if (!same_output(sh, (const uint8_t *)text, len, cuts, 3, st, want, wfp, got) &&
                    bad++ < 3)
                    TL_FAIL("flags %x unit %u: \"%.*s\" cut at %zu %zu %zu", flagsets[f],
                            units[u], (int)len, text, cuts[0], cuts[1], cuts[2]);
            }
            minlsh_shinglestream_free(st);
            minlsh_shingleset_free(want);
            minlsh_shingleset_free(got);
            minlsh_shingler_free(sh);
        }
    EXPECT_EQ_INT(bad, 0);
}

/* Without NFKC, word units take the ASCII text the Unicode stage would
 * pass on straight from the input (the default flags' fast path). What they
 * hash must be what the stage's whole output gives the ASCII stages: the
 * same text shingled without the Unicode flags has the same hashes and
 * fingerprint. Random strings of the pool above, ASCII runs of every
 * length between non-ASCII code points, invalid and cut-off sequences. */
static void test_ascii_direct(void) {
    static const char *const pool[] = {
        "a",  "E", " ", ".", "ab cd", "xyz.", "\t", "\xc3\xa9", "\xe4\xb8\xad", "\xe0\xb8\x81",
        "\xe0\xb8\xb4", "\xe3\x81\x8b", "\xe3\x82\x99", "\xcc\x81", "\xe3\x83\xbc", "\xff",
        "\xe2\x82", "\xe2\x80\x94", "\xc2\xa0", "\xe3\x80\x80", "\xd9\xa3", "\xce\xa3",
        "\xf0\x9f\x98\x80", "\xef\xbc\x8c"};
    static const uint32_t flagsets[] = {
        MINLSH_NORM_CJK_WORDS, MINLSH_NORM_CJK_WORDS | MINLSH_NORM_ALL,
        MINLSH_NORM_UNICODE & ~MINLSH_NORM_NFKC,
        (MINLSH_NORM_UNICODE & ~MINLSH_NORM_NFKC) | MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT};
    static const uint32_t units[] = {MINLSH_UNIT_WORD, MINLSH_UNIT_STOPWORD};
    uint64_t rs = 7;
    size_t f, u, it, bad = 0;
    for (f = 0; f < sizeof flagsets / sizeof *flagsets; f++)
        for (u = 0; u < 2; u++) {
            uint32_t ascii_flags = flagsets[f] & MINLSH_NORM_ALL;
            minlsh_shingler *sh = mk(units[u], 2, flagsets[f]);
            minlsh_shingler *ref = NULL;
            minlsh_shingleset *a = NULL, *b = NULL;
            minlsh_shinglestream *st = NULL;
            /* the ASCII counterparts the Unicode flags bring */
            if (flagsets[f] & MINLSH_NORM_UCASEFOLD) ascii_flags |= MINLSH_NORM_CASEFOLD;
            if (flagsets[f] & MINLSH_NORM_UPUNCT) ascii_flags |= MINLSH_NORM_PUNCT;
            if (flagsets[f] & MINLSH_NORM_UWHITESPACE) ascii_flags |= MINLSH_NORM_WHITESPACE;
            ref = mk(units[u], 2, ascii_flags & ~MINLSH_NORM_HTML);
            minlsh_shingleset_new(&a, NULL);
            minlsh_shingleset_new(&b, NULL);
            EXPECT_OK(minlsh_shinglestream_new(&st, sh, NULL));
            for (it = 0; it < 400; it++) {
                char text[512];
                uint8_t staged[512 * MINLSH__UNICODE_GROW], fa[16], fb[16];
                size_t len = 0, m = 1 + (size_t)(tl_rand(&rs) % 30), i, got = 0, one[512],
                       cuts[2];
                for (i = 0; i < m; i++) {
                    const char *x = pool[tl_rand(&rs) % (sizeof pool / sizeof *pool)];
                    memcpy(text + len, x, strlen(x));
                    len += strlen(x);
                }
                EXPECT_OK(minlsh__unicode_normalize(flagsets[f], 1, (const uint8_t *)text, len,
                                                    staged, sizeof staged, &got));
                EXPECT_OK(minlsh_shingler_hash(sh, text, len, a, fa));
                EXPECT_OK(minlsh_shingler_hash(ref, staged, got, b, fb));
                if ((memcmp(fa, fb, 16) != 0 ||
                     minlsh_shingleset_count(a) != minlsh_shingleset_count(b) ||
                     (minlsh_shingleset_count(a) != 0 &&
                      memcmp(minlsh_shingleset_view_hashes(a), minlsh_shingleset_view_hashes(b),
                             8 * minlsh_shingleset_count(a)) != 0)) &&
                    bad++ < 3)
                    TL_FAIL("flags %x unit %u: \"%.*s\"", flagsets[f], units[u], (int)len, text);
                /* fed in pieces, each piece's leading ASCII goes round the
                 * stage after what the stage holds from the last piece */
                for (i = 0; i + 1 < len; i++) one[i] = i + 1;
                if (!same_output(sh, (const uint8_t *)text, len, one, len ? len - 1 : 0, st, b,
                                 fb, a) &&
                    bad++ < 3)
                    TL_FAIL("flags %x unit %u: \"%.*s\" byte by byte", flagsets[f], units[u],
                            (int)len, text);
                for (i = 0; i < 2; i++) cuts[i] = (size_t)(tl_rand(&rs) % (len + 1));
                if (cuts[0] > cuts[1]) { size_t t = cuts[0]; cuts[0] = cuts[1]; cuts[1] = t; }
                if (!same_output(sh, (const uint8_t *)text, len, cuts, 2, st, b, fb, a) &&
                    bad++ < 3)
                    TL_FAIL("flags %x unit %u: \"%.*s\" cut at %zu %zu", flagsets[f], units[u],
                            (int)len, text, cuts[0], cuts[1]);
            }
            minlsh_shinglestream_free(st);
            minlsh_shingleset_free(a);
            minlsh_shingleset_free(b);
            minlsh_shingler_free(sh);
            minlsh_shingler_free(ref);
        }
    EXPECT_EQ_INT(bad, 0);
}

/* ---- the table dump for tests/unicode_tables.sh ------------------------------------------- */

static void dump_seq(const char *tag, uint32_t flags, uint32_t cp) {
    uint8_t in[4], out[256];
    size_t n = minlsh__utf8_put(cp, in), got = 0, i = 0;
    minlsh__unicode_normalize(flags, 0, in, n, out, sizeof out, &got);
    printf(" %s", tag);
    while (i < got) { /* decode the (well-formed) output */
        uint32_t c = out[i];
        size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        if (len > 1) c &= 0x3Fu >> (len - 1);
        for (size_t k = 1; k < len; k++) c = c << 6 | (out[i + k] & 0x3F);
        printf("%s%X", i ? "," : "", (unsigned)c);
        i += len;
    }
}

/* One line per scalar value: cp, ccc, bits, digit, NFKC of it alone,
 * folding of it alone. */
static int dump(void) {
    uint32_t cp;
    for (cp = 0; cp < 0x110000; cp++) {
        const minlsh__ucd_record *r;
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        r = minlsh__ucd_get(cp);
        printf("%X %u %u %u", (unsigned)cp, r->ccc, r->bits, r->digit);
        dump_seq("N=", MINLSH_NORM_NFKC, cp);
        /* folding from the table: the stage leaves ASCII to the byte tables */
        printf(" F=");
        if (r->fold == 0) {
            printf("%X", (unsigned)cp);
        } else {
            const uint32_t *f = minlsh__ucd_seq + r->fold;
            for (uint32_t i = 1; i <= f[0]; i++) printf("%s%X", i > 1 ? "," : "", (unsigned)f[i]);
        }
        printf("\n");
    }
    return 0;
}

/* Each line of standard input is code points in hex; prints the NFKC of
 * the whole line the same way (for NormalizationTest.txt). */
static int nfkc_lines(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin) != NULL) {
        uint8_t in[1024], out[4096];
        size_t n = 0, got = 0, i = 0;
        char *p = line, *end;
        for (;;) {
            unsigned long v = strtoul(p, &end, 16);
            if (end == p || n + 4 > sizeof in) break;
            n += minlsh__utf8_put((uint32_t)v, in + n);
            p = end;
        }
        if (minlsh__unicode_normalize(MINLSH_NORM_NFKC, 0, in, n, out, sizeof out, &got) != 0)
            return 1;
        while (i < got) {
            uint32_t c = out[i];
            size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            if (len > 1) c &= 0x3Fu >> (len - 1);
            for (size_t k = 1; k < len; k++) c = c << 6 | (out[i + k] & 0x3F);
            printf("%s%04X", i ? " " : "", (unsigned)c);
            i += len;
        }
        printf("\n");
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--dump") == 0) return dump();
    if (argc > 1 && strcmp(argv[1], "--nfkc") == 0) return nfkc_lines();
    RUN(test_nfkc);
    RUN(test_casefold);
    RUN(test_classes);
    RUN(test_split);
    RUN(test_ascii_direct);
    RUN(test_invalid);
    RUN(test_end_to_end);
    RUN(test_flags_and_ids);
    RUN(test_chinese_similarity);
    RUN(test_docs_example);
    RUN(test_docs_default_example);
    RUN(test_streaming);
    RUN(test_random_streaming);
    return TL_SUMMARY("unicode");
}
