/*
 * The command's JSON Lines reader (programs/json.c), unit by unit: what
 * json_extract accepts, the id token and the decoded text it returns, and
 * the exact message for what it refuses. Linked with the command sources it
 * needs (mk/cli.mk). tests/jsonl.sh checks the same reader through the
 * command (line endings, a last line without a newline, very long lines).
 */
#include "testlib.h"

#include "../programs/cli.h"

static cli_buf text;

/* A line given to json_extract_stream in pieces of `piece` bytes, its text
 * gathered into streamed. */
typedef struct pieces {
    const char *line;
    size_t len, at, piece;
    cli_buf streamed;
} pieces;

static int pieces_next(void *ctx, const unsigned char **p, size_t *n) {
    pieces *ps = ctx;
    if (ps->at >= ps->len) return 0;
    *p = (const unsigned char *)ps->line + ps->at;
    *n = ps->len - ps->at < ps->piece ? ps->len - ps->at : ps->piece;
    ps->at += *n;
    return 1;
}

static int pieces_text(void *ctx, const char *p, size_t n) {
    buf_add(&((pieces *)ctx)->streamed, p, n);
    return 0;
}

static void pieces_restart(void *ctx) {
    buf_clear(&((pieces *)ctx)->streamed);
}

/* The same line through json_extract_stream, a piece at a time: the same
 * id, text or message as json_extract gave (rc, id, err). */
static void check_streamed(int line_no, const char *line, size_t len, size_t piece, int rc,
                           const json_record *rec, const char *err) {
    json_stream s;
    pieces ps;
    char got_err[200] = "";
    int got;
    memset(&s, 0, sizeof s);
    memset(&ps, 0, sizeof ps);
    ps.line = line;
    ps.len = len;
    ps.piece = piece;
    s.next = pieces_next;
    s.text = pieces_text;
    s.restart = pieces_restart;
    s.ctx = &ps;
    got = json_extract_stream(&s, "id", "text", got_err, sizeof got_err);
    if (got == JSON_BLANK) { /* the caller skips a blank line; json_extract refuses it */
        got = -1;
        snprintf(got_err, sizeof got_err, "not a JSON object");
    }
    EXPECT_MSG(got == rc, "line %d, pieces of %zu: streamed %d, held %d (%s)", line_no, piece,
               got, rc, got_err);
    if (got == rc && rc != 0)
        EXPECT_MSG(strcmp(got_err, err) == 0, "line %d, pieces of %zu: streamed '%s', held '%s'",
                   line_no, piece, got_err, err);
    if (got == rc && rc == 0) {
        EXPECT_MSG(s.id.n == rec->id_len && memcmp(s.id.p, rec->id, rec->id_len) == 0,
                   "line %d, pieces of %zu: id '%.*s', held '%.*s'", line_no, piece,
                   (int)s.id.n, s.id.p, (int)rec->id_len, rec->id);
        EXPECT_MSG(ps.streamed.n == text.n &&
                       (text.n == 0 || memcmp(ps.streamed.p, text.p, text.n) == 0),
                   "line %d, pieces of %zu: text of %zu bytes, held %zu", line_no, piece,
                   ps.streamed.n, text.n);
    }
    buf_free(&ps.streamed);
    json_stream_free(&s);
}

/* Extract from line[0..len) with fields "id" and "text"; check the id token
 * and decoded text (want_err NULL), or the error message; and that the line
 * read in pieces of 1, 2, 3, 7 and 4096 bytes gives the same. */
static void check_n(int line_no, const char *line, size_t len, const char *want_id,
                    const char *want_text, size_t want_text_len, const char *want_err) {
    static const size_t piece[] = {1, 2, 3, 7, 4096};
    json_record rec;
    char err[200] = "";
    int rc = json_extract(line, len, "id", "text", &rec, &text, err, sizeof err);
    size_t i;
    for (i = 0; i < sizeof piece / sizeof *piece; i++)
        if (len < 100000 || piece[i] >= 4096)
            check_streamed(line_no, line, len, piece[i], rc, &rec, err);
    if (want_err != NULL) {
        EXPECT_MSG(rc == -1 && strcmp(err, want_err) == 0,
                   "line %d: got %d '%s', expected the error '%s'", line_no, rc, err, want_err);
        return;
    }
    EXPECT_MSG(rc == 0, "line %d: refused: %s", line_no, err);
    if (rc != 0) return;
    EXPECT_MSG(rec.id_len == strlen(want_id) && memcmp(rec.id, want_id, rec.id_len) == 0,
               "line %d: id '%.*s', expected '%s'", line_no, (int)rec.id_len, rec.id, want_id);
    EXPECT_MSG(text.n == want_text_len && (text.n == 0 || memcmp(text.p, want_text, text.n) == 0),
               "line %d: text '%.*s' (%zu bytes), expected '%s'", line_no, (int)text.n,
               text.p ? text.p : "", text.n, want_text);
}

#define OK(line, id, txt) check_n(__LINE__, line, strlen(line), id, txt, strlen(txt), NULL)
#define OK_N(line, len, id, txt, tlen) check_n(__LINE__, line, len, id, txt, tlen, NULL)
#define ERR(line, msg) check_n(__LINE__, line, strlen(line), NULL, NULL, 0, msg)
#define ERR_N(line, len, msg) check_n(__LINE__, line, len, NULL, NULL, 0, msg)

static void test_plain(void) {
    OK("{\"id\": \"a\", \"text\": \"hello\"}", "\"a\"", "hello");
    OK("  {\"text\":\"x\",\"id\":7}  ", "7", "x");
    OK("{\"id\": \"\", \"text\": \"\"}", "\"\"", "");
    OK("{\"id\":1,\"text\":\"a\"}\r", "1", "a"); /* CR is whitespace (CRLF lines) */
    OK("{\"id\":1,\"text\":\"a\"}\r\n", "1", "a");
    OK("\t{ \"id\" : 1 , \"text\" : \"a\" }\t", "1", "a");
}

static void test_escapes(void) {
    OK("{\"id\": 1, \"text\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", "1", "\"\\/\b\f\n\r\t");
    OK("{\"id\": 1, \"text\": \"\\u0041\\u00e9\\u20AC\"}", "1", "A\xC3\xA9\xE2\x82\xAC");
    /* The id is kept as written, escapes and all. */
    OK("{\"id\": \"a\\u0062\\n\", \"text\": \"x\"}", "\"a\\u0062\\n\"", "x");
    /* \u0000 decodes to a NUL byte inside the text. */
    OK_N("{\"id\": 1, \"text\": \"a\\u0000b\"}", 29, "1", "a\0b", 3);
    ERR("{\"id\": 1, \"text\": \"\\x\"}", "invalid JSON at column 21: invalid escape in string (found 'x')");
    ERR("{\"id\": 1, \"text\": \"\\u12G4\"}", "invalid JSON at column 21: invalid \\u escape (found 'u')");
    ERR("{\"id\": 1, \"text\": \"\\u12\"}", "invalid JSON at column 21: invalid \\u escape (found 'u')");
    ERR("{\"id\": 1, \"text\": \"\\", "invalid JSON: unterminated string at the end of the line");
}

static void test_surrogates(void) {
    OK("{\"id\": 1, \"text\": \"\\ud83d\\ude00\"}", "1", "\xF0\x9F\x98\x80");
    OK("{\"id\": 1, \"text\": \"\\uD800\\uDC00\\uDBFF\\uDFFF\"}", "1",
       "\xF0\x90\x80\x80\xF4\x8F\xBF\xBF");
    ERR("{\"id\": 1, \"text\": \"\\ud83d\"}",
        "invalid JSON at column 20: unpaired surrogate in \\u escape (found '\\')");
    ERR("{\"id\": 1, \"text\": \"\\ude00\\ud83d\"}",
        "invalid JSON at column 20: unpaired surrogate in \\u escape (found '\\')");
    ERR("{\"id\": 1, \"text\": \"\\ud83dx\"}",
        "invalid JSON at column 20: unpaired surrogate in \\u escape (found '\\')");
    ERR("{\"id\": 1, \"text\": \"\\ud83d\\u0041\"}",
        "invalid JSON at column 20: unpaired surrogate in \\u escape (found '\\')");
    /* Also in strings that are skipped. */
    ERR("{\"id\": 1, \"text\": \"a\", \"o\": \"\\udc00\"}",
        "invalid JSON at column 30: unpaired surrogate in \\u escape (found '\\')");
}

static void test_utf8(void) {
    OK("{\"id\": \"\xC3\xA9\", \"text\": \"\xE2\x82\xAC \xF0\x9F\x98\x80\"}", "\"\xC3\xA9\"",
       "\xE2\x82\xAC \xF0\x9F\x98\x80");
    ERR("{\"id\": 1, \"text\": \"\xC0\xAF\"}", "invalid JSON at column 20: invalid UTF-8 in string");
    ERR("{\"id\": 1, \"text\": \"\xED\xA0\x80\"}", /* an encoded surrogate */
        "invalid JSON at column 20: invalid UTF-8 in string");
    ERR("{\"id\": 1, \"text\": \"\xF4\x90\x80\x80\"}", /* above U+10FFFF */
        "invalid JSON at column 20: invalid UTF-8 in string");
    ERR("{\"id\": 1, \"text\": \"\xE2\x82\"}", "invalid JSON at column 20: invalid UTF-8 in string");
    ERR("{\"id\": 1, \"text\": \"\xFF\"}", "invalid JSON at column 20: invalid UTF-8 in string");
    ERR("{\"id\": 1, \"text\": \"a\xE2\x82", "invalid JSON at column 21: invalid UTF-8 in string");
    /* Bytes outside strings are not JSON either. */
    ERR("{\"id\": 1, \"text\": \"a\", \xC3\xA9}",
        "invalid JSON at column 24: string expected as object key");
}

static void test_nested_skipped(void) {
    OK("{\"meta\": {\"id\": 9, \"text\": \"inner\", \"l\": [1, [2, {}], [], \"s\"]}, "
       "\"id\": 3, \"text\": \"outer\", \"z\": [true, false, null, -0.5e-3]}",
       "3", "outer");
    ERR("{\"meta\": {\"id\": 9, \"text\": \"inner\"}}", "missing field \"id\"");
    ERR("{\"id\": 1, \"text\": \"a\", \"x\": [1, 2,]}",
        "invalid JSON at column 35: value expected (found ']')");
    ERR("{\"id\": 1, \"text\": \"a\", \"x\": {\"a\" 1}}",
        "invalid JSON at column 34: ':' expected (found '1')");
    ERR("{\"id\": 1, \"text\": \"a\", \"x\": tru}",
        "invalid JSON at column 29: unexpected character (found 't')");
}

static void test_depth(void) {
    cli_buf b = {NULL, 0, 0};
    int i;
    /* 256 levels of arrays inside the top-level object are fine, 257 are not. */
    buf_adds(&b, "{\"id\": 1, \"text\": \"a\", \"x\": ");
    for (i = 0; i < 256; i++) buf_addc(&b, '[');
    for (i = 0; i < 256; i++) buf_addc(&b, ']');
    buf_addc(&b, '}');
    OK_N(b.p, b.n, "1", "a", 1);
    buf_clear(&b);
    buf_adds(&b, "{\"id\": 1, \"text\": \"a\", \"x\": ");
    for (i = 0; i < 257; i++) buf_addc(&b, '[');
    for (i = 0; i < 257; i++) buf_addc(&b, ']');
    buf_addc(&b, '}');
    ERR_N(b.p, b.n, "invalid JSON at column 285: nesting too deep (found '[')");
    buf_free(&b);
}

static void test_duplicate_keys(void) {
    /* The last occurrence wins, for both fields. */
    OK("{\"id\": 1, \"text\": \"a\", \"id\": \"2\", \"text\": \"b\"}", "\"2\"", "b");
    /* Keys are compared decoded. */
    OK("{\"\\u0069d\": 5, \"te\\u0078t\": \"k\", \"Id\": 6, \"TEXT\": \"no\"}", "5", "k");
    /* A later value of the wrong type makes the record wrong. */
    ERR("{\"id\": 1, \"text\": \"a\", \"text\": null}", "field \"text\" is not a string");
    ERR("{\"id\": 1, \"text\": \"a\", \"id\": [1]}",
        "field \"id\" is not a string or a number");
}

static void test_numbers(void) {
    OK("{\"id\": 123456789012345678901234567890, \"text\": \"a\"}",
       "123456789012345678901234567890", "a");
    OK("{\"id\": -1.5E+308, \"text\": \"a\"}", "-1.5E+308", "a");
    OK("{\"id\": 1e999999999999, \"text\": \"a\"}", "1e999999999999", "a");
    OK("{\"id\": -0, \"text\": \"a\"}", "-0", "a");
    ERR("{\"id\": 01, \"text\": \"a\"}", "invalid JSON at column 9: ',' or '}' expected (found '1')");
    ERR("{\"id\": +1, \"text\": \"a\"}", "invalid JSON at column 8: value expected (found '+')");
    ERR("{\"id\": 1., \"text\": \"a\"}",
        "invalid JSON at column 10: digit expected in number (found ',')");
    ERR("{\"id\": -, \"text\": \"a\"}", "invalid JSON at column 9: digit expected in number (found ',')");
    ERR("{\"id\": 1e, \"text\": \"a\"}",
        "invalid JSON at column 10: digit expected in number (found ',')");
    ERR("{\"id\": .5, \"text\": \"a\"}", "invalid JSON at column 8: value expected (found '.')");
}

static void test_fields(void) {
    ERR("{\"id\": 1}", "missing field \"text\"");
    ERR("{\"text\": \"a\"}", "missing field \"id\"");
    ERR("{}", "missing field \"id\"");
    ERR("{\"id\": true, \"text\": \"a\"}", "field \"id\" is not a string or a number");
    ERR("{\"id\": null, \"text\": \"a\"}", "field \"id\" is not a string or a number");
    ERR("{\"id\": {}, \"text\": \"a\"}", "field \"id\" is not a string or a number");
    ERR("{\"id\": 1, \"text\": 5}", "field \"text\" is not a string");
    ERR("{\"id\": 1, \"text\": [\"a\"]}", "field \"text\" is not a string");
    /* Missing is reported before the wrong type. */
    ERR("{\"id\": true}", "missing field \"text\"");
}

static void test_not_objects(void) {
    ERR("", "not a JSON object");
    ERR("   ", "not a JSON object");
    ERR("[1]", "not a JSON object");
    ERR("\"s\"", "not a JSON object");
    ERR("{", "invalid JSON: string expected as object key at the end of the line");
    ERR("{\"id\": 1, \"text\": \"a\"", "invalid JSON: ',' or '}' expected at the end of the line");
    ERR("{\"id\": 1, \"text\": \"a\"} {}", "invalid JSON at column 24: text after the object (found '{')");
    ERR("{\"id\": 1, \"text\": \"a\",}", "invalid JSON at column 23: string expected as object key (found '}')");
    ERR("{'id': 1}", "invalid JSON at column 2: string expected as object key (found ''')");
}

static void test_nul_and_controls(void) {
    /* A NUL byte is a control character inside a string, and not JSON
     * outside one; either way the line is refused, not cut short. */
    ERR_N("{\"id\": 1, \"text\": \"a\0b\"}", 24, "invalid JSON at column 21: control character in string");
    ERR_N("{\"id\": 1, \"text\": \"a\"}\0", 23, "invalid JSON at column 23: text after the object");
    ERR_N("{\"id\": 1,\0 \"text\": \"a\"}", 23, "invalid JSON at column 10: string expected as object key");
    ERR("{\"id\": 1, \"text\": \"a\tb\"}", "invalid JSON at column 21: control character in string");
    ERR("{\"id\": 1, \"text\": \"a\nb\"}", "invalid JSON at column 21: control character in string");
    /* DEL is not a control character in JSON. */
    OK("{\"id\": 1, \"text\": \"a\x7F\"}", "1", "a\x7F");
}

/* Runs of plain bytes are skipped many at a time: every kind of byte that
 * ends a run, at every offset across two 16-byte blocks, and the plain
 * bytes at the edges of the range (space, '!', '#', '[', ']', '~', DEL). */
static void test_plain_runs(void) {
    static const char plain[] = " !#[]~\x7F" "0123456789abcdefghijklmnopqrstuvwxyz";
    static const struct {
        const char *in, *out, *err; /* err: the message's end after the column */
    } ends[] = {
        {"\\n", "\n", NULL},
        {"\\\\", "\\", NULL},
        {"\\\"", "\"", NULL},
        {"\xC3\xA9", "\xC3\xA9", NULL},
        {"\xE2\x82\xAC", "\xE2\x82\xAC", NULL},
        {"\x1F", NULL, "control character in string"},
        {"\xFF", NULL, "invalid UTF-8 in string"},
    };
    char line[256], want[128], err[200];
    size_t off, e;
    for (e = 0; e < sizeof ends / sizeof *ends; e++)
        for (off = 0; off <= 40; off++) {
            size_t n = 0, w = 0, i;
            n += (size_t)sprintf(line, "{\"id\": 1, \"text\": \"");
            for (i = 0; i < off; i++) line[n++] = want[w++] = plain[i % (sizeof plain - 1)];
            n += (size_t)sprintf(line + n, "%s", ends[e].in);
            if (ends[e].out != NULL) w += (size_t)sprintf(want + w, "%s", ends[e].out);
            for (i = 0; i < 20; i++) line[n++] = want[w++] = plain[(off + i) % (sizeof plain - 1)];
            n += (size_t)sprintf(line + n, "\"}");
            if (ends[e].err != NULL) {
                snprintf(err, sizeof err, "invalid JSON at column %zu: %s", 20 + off, ends[e].err);
                check_n(__LINE__, line, n, NULL, NULL, 0, err);
            } else {
                check_n(__LINE__, line, n, "1", want, w, NULL);
            }
        }
}

static void test_truncated(void) {
    ERR("{\"id\": 1, \"text\": \"abc", "invalid JSON: unterminated string at the end of the line");
    ERR("{\"id\": 1, \"text\": ", "invalid JSON: value expected at the end of the line");
    ERR("{\"id\": 1, \"text\"", "invalid JSON: ':' expected at the end of the line");
    ERR("{\"id\": 1, \"te", "invalid JSON: unterminated string at the end of the line");
    ERR("{\"id\": 1, \"text\": \"a\", \"x\": [1, {\"y\": tr",
        "invalid JSON at column 39: unexpected character (found 't')");
    /* The reader never looks past len: the same bytes, cut one short. */
    ERR_N("{\"id\": 1, \"text\": \"a\"}", 21, "invalid JSON: ',' or '}' expected at the end of the line");
}

static void test_long_line(void) {
    size_t n = (size_t)3 << 20, i;
    cli_buf b = {NULL, 0, 0};
    char *want = malloc(n);
    EXPECT(want != NULL);
    if (want == NULL) return;
    for (i = 0; i < n; i++) want[i] = (char)('a' + i % 26);
    buf_adds(&b, "{\"id\": \"long\", \"text\": \"");
    buf_add(&b, want, n);
    buf_adds(&b, "\"}");
    OK_N(b.p, b.n, "\"long\"", want, n);
    free(want);
    buf_free(&b);
}

static void test_other_fields(void) {
    json_record rec;
    char err[200];
    EXPECT_OK(json_extract("{\"k\": \"x\", \"body\": \"t\\u00e9\"}", 29, "k", "body", &rec,
                           &text, err, sizeof err));
    EXPECT(rec.id_len == 3 && memcmp(rec.id, "\"x\"", 3) == 0);
    EXPECT(text.n == 3 && memcmp(text.p, "t\xC3\xA9", 3) == 0);
    /* One field may serve as both. */
    EXPECT_OK(json_extract("{\"t\": \"same\"}", 13, "t", "t", &rec, &text, err, sizeof err));
    EXPECT(rec.id_len == 6 && text.n == 4 && memcmp(text.p, "same", 4) == 0);
    /* A short error buffer is truncated, never overrun. */
    memset(err, 'x', sizeof err);
    EXPECT(json_extract("{}", 2, "identifier", "t", &rec, &text, err, 8) == -1);
    EXPECT(strcmp(err, "missing") == 0 && err[8] == 'x');
}

/* 1 if s[0..len) is exactly one valid JSON string token. */
static int string_token_valid(const char *s, size_t len) {
    char out[64];
    size_t n;
    return minlsh_json_string_decode(s, len, out, sizeof out, &n) == MINLSH_OK;
}

static void test_decode_and_escape(void) {
    cli_buf b = {NULL, 0, 0}, empty = {NULL, 0, 0};
    json_record rec;
    char err[200];
    /* An empty text is an empty string, not NULL (fuzz_json found
     * json_escape doing arithmetic on the NULL of an empty buffer). */
    EXPECT_OK(json_extract("{\"id\": 1, \"text\": \"\"}", 21, "id", "text", &rec, &empty,
                           err, sizeof err));
    EXPECT(empty.p != NULL && empty.n == 0 && empty.p[0] == '\0');
    buf_free(&empty);
    json_escape(&b, NULL, 0);
    EXPECT(b.n == 2 && strcmp(b.p, "\"\"") == 0);
    buf_clear(&b);
    json_decode_string(&b, "\"a\\n\\ud83d\\ude00\\\"\"", 19);
    EXPECT(b.n == 7 && memcmp(b.p, "a\n\xF0\x9F\x98\x80\"", 7) == 0);
    buf_clear(&b);
    json_escape(&b, "a\"\\\n\t\r\b\f\x01\x7F\xC3\xA9", 12);
    EXPECT_MSG(strcmp(b.p, "\"a\\\"\\\\\\n\\t\\r\\b\\f\\u0001\x7F\xC3\xA9\"") == 0, "got %s", b.p);
    buf_clear(&b);
    /* A byte that is not UTF-8 becomes \udcXX, one per bad byte, and
     * decodes back to itself: the round trip gives the bytes. */
    json_escape(&b, "x\xC3(\xED\xA0\x80y", 7);
    EXPECT_MSG(strcmp(b.p, "\"x\\udcc3(\\udced\\udca0\\udc80y\"") == 0, "got %s", b.p);
    {
        cli_buf back = {NULL, 0, 0};
        json_decode_string(&back, b.p, b.n);
        EXPECT(back.n == 7 && memcmp(back.p, "x\xC3(\xED\xA0\x80y", 7) == 0);
        buf_free(&back);
    }
    /* Other lone surrogates are still refused. */
    EXPECT(string_token_valid("\"\\udc80\"", 8));
    EXPECT(!string_token_valid("\"\\udc7f\"", 8));
    EXPECT(!string_token_valid("\"\\ud800\"", 8));
    buf_free(&b);
}

static void test_utf8_checks(void) {
    static const struct {
        const char *s;
        int valid;
        unsigned bad_at;
    } cases[] = {
        {"", 1, 0},
        {"plain", 1, 0},
        {"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF", 1, 0},
        {"ab\xC0\xAF", 0, 2},         /* overlong */
        {"ab\xE0\x80\x80", 0, 2},     /* overlong */
        {"ab\xF0\x80\x80\x80", 0, 2}, /* overlong */
        {"a\xED\xA0\x80", 0, 1},      /* surrogate */
        {"a\xF4\x90\x80\x80", 0, 1},  /* above U+10FFFF */
        {"a\xF5\x80\x80\x80", 0, 1},
        {"\x80", 0, 0},               /* stray continuation */
        {"abc\xE2\x82", 0, 3},        /* truncated at the end */
        {"\xE2\x82x", 0, 0},          /* truncated in the middle */
        {"ok\xFF", 0, 2},
    };
    size_t i, step;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].s);
        EXPECT_MSG(utf8_valid(cases[i].s, n) == cases[i].valid, "case %zu", i);
        for (step = 1; step <= 4; step++) {
            utf8_check u;
            size_t off = 0;
            utf8_check_init(&u);
            while (off < n) {
                size_t c = n - off < step ? n - off : step;
                utf8_check_feed(&u, cases[i].s + off, c);
                off += c;
            }
            utf8_check_end(&u);
            EXPECT_MSG(u.bad == !cases[i].valid, "case %zu, chunks of %zu", i, step);
            if (!cases[i].valid)
                EXPECT_MSG(u.bad_at == cases[i].bad_at, "case %zu, chunks of %zu: at %llu", i,
                           step, (unsigned long long)u.bad_at);
        }
    }
}

/* UTF-8 by its definition: the bits of a 1..4 byte form, valid when the
 * continuation bytes are 10xxxxxx, the form is the shortest, and the value
 * is a scalar value (not a surrogate, at most U+10FFFF). len bytes given. */
static int ref_decode(const unsigned char *p, size_t len, uint32_t *cp) {
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    uint32_t v;
    size_t need, i;
    if (p[0] < 0x80) need = 1, v = p[0];
    else if ((p[0] & 0xE0) == 0xC0) need = 2, v = p[0] & 0x1F;
    else if ((p[0] & 0xF0) == 0xE0) need = 3, v = p[0] & 0x0F;
    else if ((p[0] & 0xF8) == 0xF0) need = 4, v = p[0] & 0x07;
    else return 0;
    if (len < need) return 0;
    for (i = 1; i < need; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v < min[need] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) return 0;
    *cp = v;
    return (int)need;
}

/* 1 if p[0..len) can be completed into a valid sequence (the byte after it
 * is the only one constrained; later ones may be anything in 80..BF). */
static int completes(const unsigned char *p, size_t len) {
    unsigned char q[4];
    uint32_t cp;
    unsigned c;
    size_t i;
    if (len >= 4) return 0;
    for (c = 0x80; c <= 0xBF; c++) {
        memcpy(q, p, len);
        q[len] = (unsigned char)c;
        for (i = len + 1; i < 4; i++) q[i] = 0x80;
        for (i = len + 1; i <= 4; i++)
            if (ref_decode(q, i, &cp) == (int)i) return 1;
    }
    return 0;
}

/* utf8_decode on p[0..len) against the definition, and on every prefix. */
static int decode_agrees(const unsigned char *p, size_t len) {
    uint32_t cp = 0, rcp = 0;
    int got = utf8_decode(p, len, &cp), want = ref_decode(p, len, &rcp), ok = 1;
    size_t k;
    if (want > 0) ok = got == want && cp == rcp;
    else ok = got == (completes(p, len) ? UTF8_SHORT : 0);
    if (want > 0)
        for (k = 1; k < (size_t)want; k++) ok &= utf8_decode(p, k, NULL) == UTF8_SHORT;
    if (!ok)
        printf("  %02x %02x %02x %02x (%zu bytes): got %d U+%04X, expected %d U+%04X\n", p[0],
               len > 1 ? p[1] : 0, len > 2 ? p[2] : 0, len > 3 ? p[3] : 0, len, got,
               (unsigned)cp, want, (unsigned)rcp);
    return ok;
}

static void test_utf8_decode(void) {
    static const unsigned char tails[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
    unsigned char b[4];
    uint32_t cp, got;
    unsigned a, c, d, e, bad = 0;
    char enc[4];
    /* Every scalar value encodes and decodes back. */
    for (cp = 0; cp <= 0x10FFFF; cp++) {
        size_t n;
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        n = utf8_encode(cp, enc);
        got = 0xFFFFFFFF;
        if (utf8_decode(enc, n, &got) != (int)n || got != cp ||
            n != (cp < 0x80 ? 1u : cp < 0x800 ? 2u : cp < 0x10000 ? 3u : 4u))
            bad++;
    }
    EXPECT_EQ_INT(bad, 0);
    /* Every 1- and 2-byte input, every 3-byte input with a 3-byte lead, and
     * 4-byte inputs with every lead and second byte, against the definition. */
    for (a = 0; a < 256; a++) {
        b[0] = (unsigned char)a;
        bad += !decode_agrees(b, 1);
        for (c = 0; c < 256; c++) {
            b[1] = (unsigned char)c;
            bad += !decode_agrees(b, 2);
            if (a >= 0xE0 && a <= 0xEF)
                for (d = 0; d < 256; d++) {
                    b[2] = (unsigned char)d;
                    bad += !decode_agrees(b, 3);
                }
            if (a >= 0xF0)
                for (d = 0; d < sizeof tails; d++)
                    for (e = 0; e < sizeof tails; e++) {
                        b[2] = tails[d];
                        b[3] = tails[e];
                        bad += !decode_agrees(b, 4);
                    }
        }
        if (bad > 10) break;
    }
    EXPECT_EQ_INT(bad, 0);
}

int main(void) {
    RUN(test_plain);
    RUN(test_escapes);
    RUN(test_surrogates);
    RUN(test_utf8);
    RUN(test_nested_skipped);
    RUN(test_depth);
    RUN(test_duplicate_keys);
    RUN(test_numbers);
    RUN(test_fields);
    RUN(test_not_objects);
    RUN(test_nul_and_controls);
    RUN(test_plain_runs);
    RUN(test_truncated);
    RUN(test_long_line);
    RUN(test_other_fields);
    RUN(test_decode_and_escape);
    RUN(test_utf8_checks);
    RUN(test_utf8_decode);
    buf_free(&text);
    return TL_SUMMARY("test_json");
}
