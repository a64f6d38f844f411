/*
 * Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/) with
 * the library itself, so the loaders start from valid files and the other
 * targets from inputs that reach their interesting paths. Deterministic:
 * running it again rewrites the same bytes.
 *   make fuzz-corpus      (runs build/fuzz/mkcorpus fuzz/corpus)
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_family_new_scheme */
#include <minlsh.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *root;
static int failed;

static void put(const char *target, const char *name, const void *data, size_t len) {
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "mkcorpus: cannot write %s (does %s/%s exist?)\n", path, root, target);
        failed = 1;
    }
}

/* A saved file as a loader target's input: one leading byte, odd (load as
 * is; fuzz.h), then the file. */
static void put_file(const char *target, const char *name, const void *data, size_t len) {
    static uint8_t buf[1 + 16384];
    if (len > sizeof buf - 1) {
        failed = 1;
        return;
    }
    buf[0] = 1;
    memcpy(buf + 1, data, len);
    put(target, name, buf, len + 1);
}

static uint64_t rng(uint64_t *s) {
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static void random_bytes(const char *target, int count, size_t max_len, uint64_t seed) {
    static uint8_t buf[4096];
    char name[32];
    int i;
    for (i = 0; i < count; i++) {
        size_t len = 1 + (size_t)(rng(&seed) % max_len), j;
        for (j = 0; j < len; j++) buf[j] = (uint8_t)rng(&seed);
        snprintf(name, sizeof name, "random-%02d", i);
        put(target, name, buf, len);
    }
}

/* fuzz_shingle: unit, k byte, flags, option bits (none), 8 split-seed bytes,
 * then the text. */
static void shingle_seed(const char *name, uint8_t unit, uint8_t k, uint8_t flags,
                         const char *text, size_t len) {
    uint8_t buf[2048];
    size_t n = 0;
    buf[n++] = (uint8_t)(unit - 1);
    buf[n++] = k;
    buf[n++] = flags;
    buf[n++] = 0;
    memcpy(buf + n, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
    n += 8;
    if (len > sizeof buf - n) len = sizeof buf - n;
    memcpy(buf + n, text, len);
    put("fuzz_shingle", name, buf, n + len);
}

static void shingle_corpus(void) {
    static const char html[] =
        "<!DOCTYPE html><html><head><title>A &amp; B</title><style>p{color:red}</style>"
        "<script>var x = '</scr' + 'ipt>'; if (a < b) {}</script></head><body>"
        "<!-- a comment -- with dashes --><p class=\"x\" data-y='1 > 0'>Caf&eacute; "
        "&#233;&#xE9; &lt;tag&gt; &nbsp; &unknown; &#0; &#x110000; & amp</p></body></html>";
    static const char utf8[] = "na\xc3\xafve caf\xc3\xa9 \xe2\x82\xac 100 \xf0\x9f\x98\x80 "
                               "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e text";
    static const char bad_utf8[] = "ok \xc3 \x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80 "
                                   "\xe2\x82 \xf0\x9f\x98 \xc0\xaf \xff\xfe end";
    static const char words[] = "The quick brown fox jumps over the lazy dog. It was the "
                                "best of times, it was the worst of times; and THE END!";
    static const char nul[] = "a\0b\0\0c d\0e f g\0\0\0 h i j";
    uint8_t u;
    char name[32];
    for (u = 1; u <= 4; u++) {
        snprintf(name, sizeof name, "words-u%u", u);
        shingle_seed(name, u, 3, 0x7, words, sizeof words - 1);
        snprintf(name, sizeof name, "html-u%u", u);
        shingle_seed(name, u, 2, 0xF, html, sizeof html - 1);
        snprintf(name, sizeof name, "utf8-u%u", u);
        shingle_seed(name, u, 2, 0x3, utf8, sizeof utf8 - 1);
        snprintf(name, sizeof name, "badutf8-u%u", u);
        shingle_seed(name, u, 1, 0x0, bad_utf8, sizeof bad_utf8 - 1);
        snprintf(name, sizeof name, "nul-u%u", u);
        shingle_seed(name, u, 4, 0x2, nul, sizeof nul - 1);
    }
    shingle_seed("empty", 3, 5, 0, "", 0);
    {
        /* Custom stop words, a size limit and a key. */
        static const char cfg[] = "\x03\x02\x09\x07\x0bthe of and\x00\x04"
                                  "0123456789abcdef" "\x01\x02\x03\x04\x05\x06\x07\x08"
                                  "and then the end of the story of the web";
        put("fuzz_shingle", "options", cfg, sizeof cfg - 1);
    }
}

static void matrix_corpus(void) {
    minlsh_family *fam;
    minlsh_sigmatrix *m;
    uint32_t sig[128];
    uint8_t buf[8192];
    size_t len, i, v;
    uint64_t s = 7;
    static const struct {
        uint32_t k, scheme;
        size_t docs;
        const char *meta, *name;
    } shapes[] = {
        {1, MINLSH_SCHEME_CLASSIC, 0, "", "k1-empty"},
        {4, MINLSH_SCHEME_CLASSIC, 3, "names: a b c", "k4-3docs-meta"},
        {16, MINLSH_SCHEME_CLASSIC, 5, "", "k16-5docs"},
        {128, MINLSH_SCHEME_CLASSIC, 2, "x", "k128-2docs"},
        {16, MINLSH_SCHEME_OPH, 3, "", "k16-oph-3docs"},
    };
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (minlsh_family_new_scheme(&fam, shapes[i].k, 42 + i, shapes[i].scheme, NULL) != 0 ||
            minlsh_sigmatrix_new(&m, fam, i * 1000, NULL) != 0) {
            failed = 1;
            return;
        }
        for (v = 0; v < shapes[i].docs; v++) {
            size_t j;
            for (j = 0; j < shapes[i].k; j++)
                sig[j] = v == 1 ? MINLSH_EMPTY_VALUE : (uint32_t)(rng(&s) % 5);
            minlsh_sigmatrix_append(m, sig, shapes[i].k, NULL);
        }
        minlsh_sigmatrix_set_metadata(m, shapes[i].meta, strlen(shapes[i].meta));
        if (minlsh_sigmatrix_save_buffer(m, buf, sizeof buf, &len) != 0) failed = 1;
        else put_file("fuzz_load_matrix", shapes[i].name, buf, len);
        minlsh_sigmatrix_free(m);
        minlsh_family_free(fam);
    }
}

static void index_corpus(void) {
    minlsh_family *fam;
    minlsh_index *ix;
    uint32_t sig[128];
    uint8_t buf[16384];
    size_t len, i, v;
    uint64_t s = 9;
    static const struct { uint32_t k, b, r; size_t docs; const char *meta; const char *name; } shapes[] = {
        {1, 1, 1, 0, "", "k1-empty"},
        {8, 4, 2, 6, "", "k8-b4r2-6docs"},
        {12, 3, 3, 10, "names\n", "k12-b3r3-10docs"},
        {128, 16, 6, 3, "minlsh index 1\nshingle word:5\n", "k128-b16r6-3docs"},
    };
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (minlsh_family_new(&fam, shapes[i].k, 1 + i, NULL) != 0 ||
            minlsh_index_new(&ix, fam, i, shapes[i].b, shapes[i].r, NULL) != 0) {
            failed = 1;
            return;
        }
        for (v = 0; v < shapes[i].docs; v++) {
            size_t j;
            for (j = 0; j < shapes[i].k; j++)
                sig[j] = v == 2 ? MINLSH_EMPTY_VALUE : (uint32_t)(rng(&s) % 3);
            minlsh_index_insert(ix, v * 7 + 1, sig, shapes[i].k);
        }
        minlsh_index_set_metadata(ix, shapes[i].meta, strlen(shapes[i].meta));
        if (minlsh_index_save_buffer(ix, buf, sizeof buf, &len) != 0) failed = 1;
        else put_file("fuzz_load_index", shapes[i].name, buf, len);
        minlsh_index_free(ix);
        minlsh_family_free(fam);
    }
}

/* fuzz_json: a selector byte (0: fields "id" and "text"), then one line. */
static void json_seed(const char *name, const char *line, size_t len) {
    static uint8_t buf[1 + 512];
    if (len > sizeof buf - 1) {
        failed = 1;
        return;
    }
    buf[0] = 0;
    memcpy(buf + 1, line, len);
    put("fuzz_json", name, buf, len + 1);
}

static void json_corpus(void) {
    static const struct {
        const char *name, *line;
    } seeds[] = {
        {"plain", "{\"id\": \"a\", \"text\": \"hello world\"}"},
        {"number-id", "{\"id\": -12.5e+3, \"text\": \"x\"}"},
        {"escapes", "{\"id\": \"\\\"q\\\"\", \"text\": \"a\\n\\t\\\\\\/\\b\\f\\r\\u00e9\"}"},
        {"surrogates", "{\"id\": 1, \"text\": \"\\ud83d\\ude00 \\uDBFF\\uDFFF\"}"},
        {"lone-surrogate", "{\"id\": 1, \"text\": \"\\ud800x\"}"},
        {"utf8", "{\"id\": \"\xC3\xA9\", \"text\": \"\xE2\x82\xAC \xF0\x9F\x98\x80\"}"},
        {"bad-utf8", "{\"id\": 1, \"text\": \"\xED\xA0\x80 \xC0\xAF\"}"},
        {"nested", "{\"meta\": {\"a\": [1, 2.0, true, false, null, {\"b\": []}]}, \"id\": 3, "
                   "\"text\": \"t\"}"},
        {"duplicates", "{\"id\": 1, \"text\": \"a\", \"id\": \"2\", \"text\": \"b\"}"},
        {"escaped-key", "{\"\\u0069d\": 1, \"te\\u0078t\": \"k\"}"},
        {"missing", "{\"id\": 1}"},
        {"not-string", "{\"id\": 1, \"text\": 5}"},
        {"deep", "{\"id\": 1, \"text\": \"d\", \"x\": [[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]}"},
        {"truncated", "{\"id\": 1, \"text\": \"abc"},
        {"trailing", "{\"id\": 1, \"text\": \"a\"} x"},
        {"crlf", "{\"id\": 1, \"text\": \"a\"}\r"},
    };
    size_t i;
    for (i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        json_seed(seeds[i].name, seeds[i].line, strlen(seeds[i].line));
    json_seed("nul", "{\"id\": 1, \"text\": \"a\0b\"}", 24);
}

/* Journal records (docs/format.md, "Index journal") after fuzz_journal's
 * choice byte 0: its header, checksums recomputed (so they may be left 0
 * here), the loaded index. */
static size_t journal_record(uint8_t *p, uint32_t op, uint64_t id, uint32_t v, const char *data) {
    size_t d = strlen(data), len = 20 + 4 * (size_t)v + d, at = 0, i;
    uint32_t words[3];
    words[0] = (uint32_t)len;
    words[1] = op;
    for (i = 0; i < 2; i++, at += 4) memcpy(p + at, &words[i], 4);
    for (i = 0; i < 8; i++) p[at++] = (uint8_t)(id >> (8 * i));
    words[2] = v;
    memcpy(p + at, &words[2], 4);
    at += 4;
    for (i = 0; i < v; i++, at += 4) {
        uint32_t x = (uint32_t)(i * 7 + id);
        memcpy(p + at, &x, 4);
    }
    words[2] = (uint32_t)d;
    memcpy(p + at, &words[2], 4);
    at += 4;
    memcpy(p + at, data, d);
    at += d;
    memset(p + at, 0, 8);
    return at + 8;
}

static void journal_corpus(void) {
    uint8_t buf[1024];
    size_t n = 0;
    uint32_t probe = 1;
    uint8_t little;
    memcpy(&little, &probe, 1);
    if (!little) return; /* the records above are written in host order */
    buf[n++] = 0;
    put("fuzz_journal", "empty", buf, n);
    n += journal_record(buf + n, 1, 100, 8, "doc-100");
    n += journal_record(buf + n, 3, 0, 0, "");
    put("fuzz_journal", "insert-commit", buf, n);
    n += journal_record(buf + n, 2, 2, 0, "");
    n += journal_record(buf + n, 1, 101, 8, "");
    n += journal_record(buf + n, 3, 0, 0, "");
    put("fuzz_journal", "remove-insert-commit", buf, n);
    n += journal_record(buf + n, 1, 102, 8, "uncommitted");
    put("fuzz_journal", "uncommitted-tail", buf, n);
    buf[0] = 4; /* the same on a mapped index */
    put("fuzz_journal", "uncommitted-tail-mapped", buf, n);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: mkcorpus CORPUS_DIR\n");
        return 2;
    }
    root = argv[1];
    shingle_corpus();
    matrix_corpus();
    index_corpus();
    json_corpus();
    journal_corpus();
    random_bytes("fuzz_roundtrip", 12, 1500, 1);
    random_bytes("fuzz_api_model", 16, 2048, 2);
    random_bytes("fuzz_params", 12, 600, 3);
    if (failed) return 1;
    printf("mkcorpus: seeds written under %s\n", root);
    return 0;
}
