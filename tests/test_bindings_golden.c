/*
 * Golden data shared by the Python and Go bindings: for a few fixed texts,
 * the shingle hashes, fingerprints and config ids of four shinglers, the
 * signatures for seeds 1 and 42 at k = 16 and 128, band keys, the
 * signatures of MinHash.update-style items (SipHash-2-4 under the default
 * key, then minlsh_family_update), SipHash tags and planner answers, all
 * computed here through the public C API.
 *
 *   test_bindings_golden            compare with tests/golden/bindings/golden.json
 *                                   (the test mode; tests/run.sh runs it)
 *   test_bindings_golden --print    write the JSON to standard output
 *
 * Regenerate with `make bindings-golden` (mk/bindings.mk). Any change in the
 * file is an ABI break (docs/design.md, "ABI"), or a change of this
 * program's texts and cases.
 */
#include "minlsh.h"
#include "testlib.h"

#include <stdarg.h>

/* ---- a growing output buffer ----------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
    int failed;
} outbuf;

static void out(outbuf *o, const char *fmt, ...) {
    va_list ap;
    int need;
    if (o->failed) return;
    va_start(ap, fmt);
    need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) {
        o->failed = 1;
        return;
    }
    if (o->n + (size_t)need + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        char *p;
        while (o->n + (size_t)need + 1 > cap) cap *= 2;
        p = (char *)realloc(o->p, cap);
        if (p == NULL) {
            o->failed = 1;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(o->p + o->n, o->cap - o->n, fmt, ap);
    va_end(ap);
    o->n += (size_t)need;
}

static void out_hex(outbuf *o, const void *data, size_t len) {
    const unsigned char *b = (const unsigned char *)data;
    size_t i;
    out(o, "\"");
    for (i = 0; i < len; i++) out(o, "%02x", b[i]);
    out(o, "\"");
}

static void out_u64(outbuf *o, uint64_t v) { out(o, "\"%016" PRIx64 "\"", v); }

static void out_u64s(outbuf *o, const uint64_t *v, size_t n) {
    size_t i;
    out(o, "[");
    for (i = 0; i < n; i++) {
        if (i) out(o, ", ");
        out_u64(o, v[i]);
    }
    out(o, "]");
}

static void out_u32s(outbuf *o, const uint32_t *v, size_t n) {
    size_t i;
    out(o, "[");
    for (i = 0; i < n; i++) out(o, i ? ", %" PRIu32 : "%" PRIu32, v[i]);
    out(o, "]");
}

/* ---- the fixed inputs ----------------------------------------------------------- */

typedef struct {
    const char *p;
    size_t n; /* texts may contain NUL */
} text_case;
#define TEXT(s) {s, sizeof(s) - 1}

static const text_case texts[] = {
    TEXT("The quick brown fox jumps over the lazy dog near the bank of the river "
         "while the farmer watches from the old wooden bridge."),
    /* text 0 with one word changed: a near-duplicate */
    TEXT("The quick brown fox jumps over the lazy cat near the bank of the river "
         "while the farmer watches from the old wooden bridge."),
    /* UTF-8: German, French, Japanese */
    TEXT("Gr\xc3\xb6\xc3\x9f" "e und Ma\xc3\x9f: na\xc3\xafve caf\xc3\xa9 cr\xc3\xa8me "
         "br\xc3\xbbl\xc3\xa9" "e \xe2\x80\x94 \xe6\x9d\xb1\xe4\xba\xac \xe3\x82\xbf"
         "\xe3\x83\xaf\xe3\x83\xbc \xe8\xa6\x8b\xe7\x89\xa9"),
    /* fewer than 5 words: one shingle made of all of them */
    TEXT("tiny doc"),
    /* empty: the empty set and the empty signature */
    TEXT(""),
    /* HTML */
    TEXT("<p>Hello &amp; <b>World</b>!</p><script>var x = 1;</script>"
         "<!-- note --> The   SAME text, again and AGAIN."),
    /* no word at all */
    TEXT("... !!! ???"),
    /* invalid UTF-8 and a NUL byte in the middle */
    TEXT("bytes \xff\xfe and a \x00 NUL inside the document text"),
    /* for the Unicode flags: capitals with accents, sharp s, a ligature,
     * typographic quotes and dashes, no-break and ideographic spaces,
     * full-width letters, Arabic-Indic digits, Greek final sigma, Chinese
     * without spaces, a combining accent */
    TEXT("\xc3\x89" "COLE \xc3\x9c" "BER STRA\xc3\x9f" "E \xe2\x80\x94 \xe2\x80\x9c" "the "
         "\xef\xac\x81rst\xe2\x80\x9d day\xc2\xa0of \xef\xbc\xb4\xef\xbc\xa8\xef\xbc\xa5 year "
         "\xd9\xa2\xd9\xa0\xd9\xa2\xd9\xa6\xe3\x80\x80\xce\x9f\xce\x94\xce\x9f\xce\xa3 "
         "\xe6\x88\x91\xe4\xbb\xac\xe4\xbb\x8a\xe5\xa4\xa9\xe5\x8e\xbb\xe5\x85\xac"
         "\xe5\x9b\xad\xef\xbc\x8c caf" "e\xcc\x81"),
};
#define N_TEXTS (sizeof texts / sizeof texts[0])

typedef struct {
    const char *spec; /* as the bindings' shingle= argument spells it */
    uint32_t unit, k, flags;
    const char *key; /* 16 bytes, or NULL for the default key */
} shingler_case;

static const shingler_case shinglers[] = {
    {"word:5", MINLSH_UNIT_WORD, 5, 0, NULL},
    {"char:4", MINLSH_UNIT_BYTE, 4, 0, NULL}, /* char = bytes, as in the minlsh command */
    /* every normalisation, code points, a caller key */
    {"codepoint:3", MINLSH_UNIT_CODEPOINT, 3, MINLSH_NORM_ALL, "0123456789abcdef"},
    /* every normalisation but HTML, the Unicode ones included (the ASCII
     * flags written out: the shingler reports them with the Unicode ones) */
    {"word:3", MINLSH_UNIT_WORD, 3,
     MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE | MINLSH_NORM_UNICODE, NULL},
    /* the default options since options version 2 (the first case is
     * version 1's): Han and kana characters are words of their own */
    {"word:5", MINLSH_UNIT_WORD, 5, MINLSH_NORM_CJK_WORDS, NULL},
};
#define N_SHINGLERS (sizeof shinglers / sizeof shinglers[0])

static const uint64_t seeds[] = {1, 42};
static const uint32_t ks[] = {16, 128};

typedef struct {
    uint32_t b, r;
} band_case;
static const band_case bands16[] = {{4, 4}, {2, 8}};
static const band_case bands128[] = {{16, 8}, {9, 13}};

/* MinHash.update items: the words of text 0, one item each. */
static const char *const items[] = {"The", "quick", "brown", "fox", "jumps", "over",
                                    "the", "lazy", "dog", "", "\xc3\xa9t\xc3\xa9"};
#define N_ITEMS (sizeof items / sizeof items[0])

typedef struct {
    double threshold;
    uint32_t k, mode;
    double wfp, wfn, recall;
} plan_case;
static const plan_case plans[] = {
    {0.8, 128, MINLSH_PLAN_BALANCED, 0.5, 0.5, 0.99},
    {0.5, 128, MINLSH_PLAN_BALANCED, 0.5, 0.5, 0.99},
    {0.8, 128, MINLSH_PLAN_RECALL, 0.5, 0.5, 0.99},
    {0.7, 256, MINLSH_PLAN_BALANCED, 0.3, 0.7, 0.99},
    {0.9, 64, MINLSH_PLAN_RECALL, 0.5, 0.5, 0.95},
};
#define N_PLANS (sizeof plans / sizeof plans[0])

/* ---- generation -------------------------------------------------------------------- */

static int fail_rc(const char *what, int rc) {
    fprintf(stderr, "%s: %s (%s)\n", what, minlsh_strerror(rc), minlsh_error_name(rc));
    return rc;
}

static int make_shingler(minlsh_shingler **sh, const shingler_case *c) {
    minlsh_shingler_options so;
    int rc = minlsh_shingler_options_init(&so, MINLSH_SHINGLER_OPTIONS_VERSION);
    if (rc != 0) return rc;
    so.unit = c->unit;
    so.k = c->k;
    so.flags = c->flags;
    so.key = (const uint8_t *)c->key;
    return minlsh_shingler_new(sh, &so, NULL);
}

static int gen_shinglers(outbuf *o) {
    size_t s, t;
    int rc = 0;
    minlsh_shingleset *set = NULL;
    if ((rc = minlsh_shingleset_new(&set, NULL)) != 0) return fail_rc("set", rc);
    out(o, "  \"shinglers\": [\n");
    for (s = 0; s < N_SHINGLERS && rc == 0; s++) {
        const shingler_case *c = &shinglers[s];
        minlsh_shingler *sh = NULL;
        uint64_t cid = 0;
        uint8_t fp[MINLSH_FINGERPRINT_BYTES];
        if ((rc = make_shingler(&sh, c)) != 0 ||
            (rc = minlsh_shingler_config_id(&cid, sh)) != 0) {
            minlsh_shingler_free(sh);
            break;
        }
        out(o, "    {\"spec\": \"%s\", \"unit\": %" PRIu32 ", \"k\": %" PRIu32
               ", \"flags\": %" PRIu32 ", \"key\": ", c->spec, c->unit, c->k, c->flags);
        if (c->key) out_hex(o, c->key, 16);
        else out(o, "null");
        out(o, ", \"config_id\": ");
        out_u64(o, cid);
        out(o, ",\n     \"shingles\": [\n");
        for (t = 0; t < N_TEXTS && rc == 0; t++) {
            if ((rc = minlsh_shingler_hash(sh, texts[t].p, texts[t].n, set, NULL)) != 0) break;
            out(o, "       ");
            out_u64s(o, minlsh_shingleset_view_hashes(set), minlsh_shingleset_count(set));
            out(o, t + 1 < N_TEXTS ? ",\n" : "\n");
        }
        out(o, "     ],\n     \"fingerprints\": [");
        for (t = 0; t < N_TEXTS && rc == 0; t++) {
            if ((rc = minlsh_shingler_hash(sh, texts[t].p, texts[t].n, NULL, fp)) != 0) break;
            out(o, t ? ", " : "");
            out_hex(o, fp, sizeof fp);
        }
        out(o, "]}%s\n", s + 1 < N_SHINGLERS ? "," : "");
        minlsh_shingler_free(sh);
    }
    out(o, "  ],\n");
    minlsh_shingleset_free(set);
    return rc ? fail_rc("shinglers", rc) : 0;
}

static int gen_band_keys(outbuf *o, const uint32_t *sigs, uint32_t k) {
    const band_case *bc = k == 16 ? bands16 : bands128;
    size_t nb = k == 16 ? sizeof bands16 / sizeof bands16[0]
                        : sizeof bands128 / sizeof bands128[0];
    size_t i, t;
    uint64_t keys[64];
    int rc = 0;
    out(o, "     \"band_keys\": [\n");
    for (i = 0; i < nb && rc == 0; i++) {
        out(o, "       {\"bands\": %" PRIu32 ", \"rows\": %" PRIu32 ", \"keys\": [\n",
            bc[i].b, bc[i].r);
        for (t = 0; t < N_TEXTS && rc == 0; t++) {
            size_t n = 0;
            rc = minlsh_band_keys(sigs + t * k, k, bc[i].b, bc[i].r, keys, 64, &n);
            if (rc != 0) break;
            out(o, "         ");
            out_u64s(o, keys, n);
            out(o, t + 1 < N_TEXTS ? ",\n" : "\n");
        }
        out(o, "       ]}%s\n", i + 1 < nb ? "," : "");
    }
    out(o, "     ]");
    return rc;
}

static int gen_signatures(outbuf *o) {
    size_t s, si, ki, t, first = 1;
    int rc = 0;
    uint32_t *sigs = (uint32_t *)malloc(N_TEXTS * 128 * sizeof *sigs);
    if (sigs == NULL) return fail_rc("malloc", MINLSH_E_NOMEM);
    out(o, "  \"signatures\": [\n");
    for (s = 0; s < N_SHINGLERS && rc == 0; s++) {
        minlsh_shingler *sh = NULL;
        if ((rc = make_shingler(&sh, &shinglers[s])) != 0) break;
        for (si = 0; si < 2 && rc == 0; si++) {
            for (ki = 0; ki < 2 && rc == 0; ki++) {
                minlsh_family *fam = NULL;
                uint32_t k = ks[ki];
                if ((rc = minlsh_family_new(&fam, k, seeds[si], NULL)) != 0) break;
                for (t = 0; t < N_TEXTS && rc == 0; t++)
                    rc = minlsh_family_sign_text(fam, sh, texts[t].p, texts[t].n,
                                                 sigs + t * k, k, NULL);
                minlsh_family_free(fam);
                if (rc != 0) break;
                out(o, "%s    {\"shingler\": %zu, \"seed\": %" PRIu64 ", \"k\": %" PRIu32
                       ",\n     \"sigs\": [\n",
                    first ? "" : ",\n", s, seeds[si], k);
                first = 0;
                for (t = 0; t < N_TEXTS; t++) {
                    out(o, "       ");
                    out_u32s(o, sigs + t * k, k);
                    out(o, t + 1 < N_TEXTS ? ",\n" : "\n");
                }
                out(o, "     ],\n");
                rc = gen_band_keys(o, sigs, k);
                out(o, "}");
            }
        }
        minlsh_shingler_free(sh);
    }
    out(o, "\n  ],\n");
    free(sigs);
    return rc ? fail_rc("signatures", rc) : 0;
}

static int gen_items(outbuf *o) {
    uint64_t hashes[N_ITEMS];
    uint32_t sig[128];
    size_t i, si, ki;
    int rc = 0;
    out(o, "  \"items\": {\n    \"items\": [");
    for (i = 0; i < N_ITEMS; i++) {
        out(o, i ? ", " : "");
        out_hex(o, items[i], strlen(items[i]));
    }
    out(o, "],\n    \"hashes\": ");
    for (i = 0; i < N_ITEMS && rc == 0; i++)
        rc = minlsh_siphash24(&hashes[i], minlsh_default_key(), items[i], strlen(items[i]));
    out_u64s(o, hashes, N_ITEMS);
    out(o, ",\n    \"signatures\": [\n");
    for (si = 0; si < 2 && rc == 0; si++) {
        for (ki = 0; ki < 2 && rc == 0; ki++) {
            minlsh_family *fam = NULL;
            uint32_t k = ks[ki];
            for (i = 0; i < k; i++) sig[i] = MINLSH_EMPTY_VALUE;
            if ((rc = minlsh_family_new(&fam, k, seeds[si], NULL)) == 0)
                rc = minlsh_family_update(fam, hashes, N_ITEMS, sig, k);
            minlsh_family_free(fam);
            if (rc != 0) break;
            out(o, "      {\"seed\": %" PRIu64 ", \"k\": %" PRIu32 ", \"sig\": ", seeds[si], k);
            out_u32s(o, sig, k);
            out(o, "}%s\n", si == 1 && ki == 1 ? "" : ",");
        }
    }
    out(o, "    ]\n  },\n");
    return rc ? fail_rc("items", rc) : 0;
}

static int gen_siphash(outbuf *o) {
    /* key 00..0f and messages 00..(n-1) (the official vectors' shape), and the
     * default key */
    static const size_t lens[] = {0, 1, 7, 8, 15, 63};
    uint8_t key[16], msg[64];
    uint64_t tag;
    size_t i, j;
    int rc = 0;
    for (i = 0; i < 16; i++) key[i] = (uint8_t)i;
    for (i = 0; i < 64; i++) msg[i] = (uint8_t)i;
    out(o, "  \"siphash\": [\n");
    for (j = 0; j < 2 * (sizeof lens / sizeof lens[0]) && rc == 0; j++) {
        const uint8_t *kk = j % 2 ? minlsh_default_key() : key;
        size_t n = lens[j / 2];
        if ((rc = minlsh_siphash24(&tag, kk, msg, n)) != 0) break;
        out(o, "    {\"key\": ");
        out_hex(o, kk, 16);
        out(o, ", \"msg\": ");
        out_hex(o, msg, n);
        out(o, ", \"tag\": ");
        out_u64(o, tag);
        out(o, "}%s\n", j + 1 < 2 * (sizeof lens / sizeof lens[0]) ? "," : "");
    }
    out(o, "  ],\n");
    return rc ? fail_rc("siphash", rc) : 0;
}

static int gen_plans(outbuf *o) {
    static const double ss[] = {0.0, 0.3, 0.5, 0.8, 1.0};
    static const uint32_t br[][2] = {{20, 5}, {9, 13}, {1, 1}};
    size_t i, j;
    int rc = 0;
    out(o, "  \"plans\": [\n");
    for (i = 0; i < N_PLANS && rc == 0; i++) {
        minlsh_plan_options po;
        uint32_t b = 0, r = 0;
        double fp = 0, fn = 0;
        if ((rc = minlsh_plan_options_init(&po, MINLSH_PLAN_OPTIONS_VERSION)) != 0) break;
        po.threshold = plans[i].threshold;
        po.k = plans[i].k;
        po.mode = plans[i].mode;
        po.weight_fp = plans[i].wfp;
        po.weight_fn = plans[i].wfn;
        po.target_recall = plans[i].recall;
        if ((rc = minlsh_plan_compute(&b, &r, &fp, &fn, &po)) != 0) break;
        out(o, "    {\"threshold\": %.17g, \"k\": %" PRIu32 ", \"mode\": %" PRIu32
               ", \"weight_fp\": %.17g, \"weight_fn\": %.17g, \"target_recall\": %.17g,"
               " \"bands\": %" PRIu32 ", \"rows\": %" PRIu32
               ", \"fp_area\": %.17g, \"fn_area\": %.17g}%s\n",
            po.threshold, po.k, po.mode, po.weight_fp, po.weight_fn, po.target_recall, b,
            r, fp, fn, i + 1 < N_PLANS ? "," : "");
    }
    out(o, "  ],\n  \"probability\": [\n");
    for (i = 0; i < sizeof br / sizeof br[0] && rc == 0; i++) {
        for (j = 0; j < sizeof ss / sizeof ss[0] && rc == 0; j++) {
            double p = 0;
            if ((rc = minlsh_plan_probability(&p, br[i][0], br[i][1], ss[j])) != 0) break;
            out(o, "    {\"s\": %.17g, \"bands\": %" PRIu32 ", \"rows\": %" PRIu32
                   ", \"p\": %.17g}%s\n",
                ss[j], br[i][0], br[i][1], p,
                i + 1 == sizeof br / sizeof br[0] && j + 1 == sizeof ss / sizeof ss[0]
                    ? ""
                    : ",");
        }
    }
    out(o, "  ]\n");
    return rc ? fail_rc("plans", rc) : 0;
}

static int generate(outbuf *o) {
    size_t t;
    int rc;
    out(o, "{\n  \"comment\": \"Generated by tests/test_bindings_golden.c --print from the C "
           "API; checked by it, by bindings/python and by bindings/go. Texts, keys, items "
           "and fingerprints are hex bytes; 64-bit values are 16 hex digits; signatures "
           "are decimal uint32.\",\n");
    out(o, "  \"format\": 1,\n");
    out(o, "  \"default_key\": ");
    out_hex(o, minlsh_default_key(), MINLSH_KEY_BYTES);
    out(o, ",\n  \"texts\": [\n");
    for (t = 0; t < N_TEXTS; t++) {
        out(o, "    ");
        out_hex(o, texts[t].p, texts[t].n);
        out(o, t + 1 < N_TEXTS ? ",\n" : "\n");
    }
    out(o, "  ],\n");
    if ((rc = gen_siphash(o)) != 0 || (rc = gen_shinglers(o)) != 0 ||
        (rc = gen_signatures(o)) != 0 || (rc = gen_items(o)) != 0 ||
        (rc = gen_plans(o)) != 0)
        return rc;
    out(o, "}\n");
    return o->failed ? MINLSH_E_NOMEM : 0;
}

/* ---- test mode --------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    size_t cap = 0, n = 0, got;
    if (f == NULL) return NULL;
    for (;;) {
        if (n + 4096 > cap) {
            char *q = (char *)realloc(p, cap = cap ? 2 * cap : 65536);
            if (q == NULL) break;
            p = q;
        }
        got = fread(p + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = n;
    return p;
}

static outbuf generated;
static int generated_rc;

static void test_generate(void) {
    EXPECT_OK(generated_rc);
    EXPECT(generated.n > 1000);
}

static void test_matches_committed_file(void) {
    const char *path = tl_data_path("golden/bindings/golden.json");
    size_t len = 0, i, line = 1;
    char *want = read_file(path, &len);
    EXPECT_MSG(want != NULL, "cannot read %s", path);
    if (want == NULL || generated_rc != 0) return;
    for (i = 0; i < len && i < generated.n && want[i] == generated.p[i]; i++)
        if (want[i] == '\n') line++;
    EXPECT_MSG(i == len && len == generated.n,
               "%s differs from the library's output at line %zu (byte %zu); "
               "an ABI change, or regenerate with `make bindings-golden`",
               path, line, i);
    free(want);
}

/* The two near-duplicates are near, the rest are not, and the empty text
 * has the empty signature: the data the bindings test is meaningful. */
static void test_data_is_meaningful(void) {
    minlsh_shingler *sh = NULL;
    minlsh_family *fam = NULL;
    uint32_t a[128], b[128], e[128];
    double j = 0;
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, NULL));
    EXPECT_OK(minlsh_family_new(&fam, 128, 1, NULL));
    EXPECT_OK(minlsh_family_sign_text(fam, sh, texts[0].p, texts[0].n, a, 128, NULL));
    EXPECT_OK(minlsh_family_sign_text(fam, sh, texts[1].p, texts[1].n, b, 128, NULL));
    EXPECT_OK(minlsh_family_sign_text(fam, sh, texts[4].p, texts[4].n, e, 128, NULL));
    EXPECT_OK(minlsh_signature_estimate(&j, a, b, 128));
    EXPECT(j > 0.5 && j < 1.0);
    EXPECT_EQ_INT(minlsh_signature_is_empty(e, 128), 1);
    minlsh_family_free(fam);
    minlsh_shingler_free(sh);
}

int main(int argc, char **argv) {
    generated_rc = generate(&generated);
    if (argc > 1 && strcmp(argv[1], "--print") == 0) {
        if (generated_rc != 0) return 1;
        fwrite(generated.p, 1, generated.n, stdout);
        return fflush(stdout) != 0;
    }
    RUN(test_generate);
    RUN(test_matches_committed_file);
    RUN(test_data_is_meaningful);
    free(generated.p);
    return TL_SUMMARY("test_bindings_golden");
}
