/*
 * Fuzz target: the JSON Lines reader (lib/jsonl/jsonl.c, through the
 * command's wrappers in programs/json.c), which reads untrusted input. It
 * is linked with the few command sources it needs (mk/fuzz.mk,
 * FUZZ_SRC_fuzz_json).
 *
 * The first input byte chooses the field names and how the UTF-8 checks are
 * chunked; the rest is one line. Checked: json_extract accepts or refuses
 * with a message, never reading past the line; an accepted record's id is a
 * string or number token inside the line, and its text and decoded id are
 * valid UTF-8 unless the line has a \udcXX escape (a byte that is not
 * UTF-8); the text, escaped with json_escape and read back, is the same
 * bytes; any bytes escaped read back as the same bytes; the one-shot and
 * the incremental UTF-8 checks agree, whatever the chunks; the line read in
 * pieces (json_extract_stream) gives the same fields or the same message,
 * and read in a block of lines (minlsh_jsonl_parse_block) the same record.
 */
#include "fuzz.h"

#include "../programs/cli.h"

static const char *const field_names[8] = {"id", "text", "", "a\"b", "\xC3\xA9", "x", "0", "t\\u"};

static cli_buf text, text2, esc, dec, streamed;

/* The line in pieces of `step` bytes, for json_extract_stream. */
typedef struct pieces {
    const char *p;
    size_t n, at, step;
} pieces;

static int pieces_next(void *ctx, const unsigned char **p, size_t *n) {
    pieces *ps = ctx;
    if (ps->at >= ps->n) return 0;
    *p = (const unsigned char *)ps->p + ps->at;
    *n = ps->n - ps->at < ps->step ? ps->n - ps->at : ps->step;
    ps->at += *n;
    return 1;
}

static int pieces_text(void *ctx, const char *p, size_t n) {
    (void)ctx;
    buf_add(&streamed, p, n);
    return 0;
}

static void pieces_restart(void *ctx) {
    (void)ctx;
    buf_clear(&streamed);
}

/* The same line read in pieces: the same id and text, or the same message. */
static void check_streamed(const char *line, size_t len, const char *id_field,
                           const char *text_field, int rc, const json_record *rec,
                           const char *err, uint8_t sel) {
    json_stream s;
    pieces ps = {line, len, 0, 1 + (size_t)(sel >> 4)};
    char got_err[200] = "";
    int got;
    memset(&s, 0, sizeof s);
    s.next = pieces_next;
    s.text = pieces_text;
    s.restart = pieces_restart;
    s.ctx = &ps;
    buf_clear(&streamed);
    got = json_extract_stream(&s, id_field, text_field, got_err, sizeof got_err);
    if (got == JSON_BLANK) {
        got = -1;
        snprintf(got_err, sizeof got_err, "not a JSON object");
    }
    FUZZ_CHECK(got == rc);
    if (rc != 0) FUZZ_CHECK(strcmp(got_err, err) == 0);
    else {
        FUZZ_CHECK(s.id.n == rec->id_len && memcmp(s.id.p, rec->id, rec->id_len) == 0);
        FUZZ_CHECK(streamed.n == text.n && (text.n == 0 || memcmp(streamed.p, text.p, text.n) == 0));
    }
    json_stream_free(&s);
}

/* A JSON number token as json_extract keeps it: -?digits[.digits][e[+-]digits]. */
static int number_chars(const char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '+' || s[i] == '.' ||
              s[i] == 'e' || s[i] == 'E'))
            return 0;
    return n > 0;
}

/* Whether s[0..n) has a \uDCxx escape (either case), which stands for a
 * byte that is not UTF-8. */
static int has_byte_escape(const char *s, size_t n) {
    size_t i;
    for (i = 0; i + 3 < n; i++)
        if (s[i] == '\\' && s[i + 1] == 'u' && (s[i + 2] == 'd' || s[i + 2] == 'D') &&
            (s[i + 3] == 'c' || s[i + 3] == 'C'))
            return 1;
    return 0;
}

/* Escape s[0..n), wrap it in a record and read the text back into out. */
static void roundtrip(const char *s, size_t n, cli_buf *out) {
    json_record rec;
    char err[200];
    buf_clear(&esc);
    buf_adds(&esc, "{\"id\": 7, \"text\": ");
    json_escape(&esc, s, n);
    buf_addc(&esc, '}');
    FUZZ_CHECK(json_extract(esc.p, esc.n, "id", "text", &rec, out, err, sizeof err) == 0);
    FUZZ_CHECK(rec.id_len == 1 && rec.id[0] == '7');
    FUZZ_CHECK(out->n == n && (n == 0 || memcmp(out->p, s, n) == 0));
}

static void check_utf8(const char *s, size_t n, uint8_t sel) {
    utf8_check whole, parts;
    size_t off = 0, step = 1 + (size_t)(sel >> 4);
    int valid = utf8_valid(s, n);
    utf8_check_init(&whole);
    utf8_check_feed(&whole, s, n);
    utf8_check_end(&whole);
    FUZZ_CHECK(whole.bad == !valid);
    if (whole.bad) {
        FUZZ_CHECK(whole.bad_at < n);
        FUZZ_CHECK(utf8_valid(s, (size_t)whole.bad_at)); /* the first bad sequence */
    }
    utf8_check_init(&parts);
    while (off < n) {
        size_t c = n - off < step ? n - off : step;
        utf8_check_feed(&parts, s + off, c);
        off += c;
    }
    utf8_check_end(&parts);
    FUZZ_CHECK(parts.bad == whole.bad && (!whole.bad || parts.bad_at == whole.bad_at));
}

/* The line read in a block (minlsh_jsonl_parse_block), after a blank line
 * and twice over, gives what it gave alone: the same status, text and id
 * token; a line with a newline in it is not one line, and a blank one is no
 * record (the block skips it; alone it is refused). */
static void check_block(const char *line, size_t len, const char *id_field,
                        const char *text_field, int rc, const json_record *rec) {
    static uint64_t offs[4], ids[3], lens[3], lines[3];
    static int32_t status[3];
    cli_buf block = {NULL, 0, 0};
    char *texts;
    size_t n = 0, i, l = len;
    int got;
    if (memchr(line, '\n', len) != NULL) return;
    while (l > 0 && (line[l - 1] == '\r')) l--; /* the block drops one; keep it simple */
    if (l != len) return;
    buf_adds(&block, " \t\n");
    for (i = 0; i < 2; i++) {
        buf_add(&block, line, len);
        buf_addc(&block, '\n');
    }
    texts = xmalloc(block.n + 1);
    got = minlsh_jsonl_parse_block(block.p, block.n, 0, id_field, text_field, texts, block.n,
                                   offs, ids, lens, lines, status, 3, &n);
    FUZZ_CHECK(got == MINLSH_OK);
    for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'); i++) {
    }
    if (i == len) {
        FUZZ_CHECK(n == 0); /* blank */
    } else {
        FUZZ_CHECK(n == 2);
        for (i = 0; i < n; i++) {
            FUZZ_CHECK(lines[i] == 3 + i * (len + 1));
            FUZZ_CHECK(status[i] == (rc == 0 ? MINLSH_OK : MINLSH_E_FORMAT));
            if (rc != 0) continue;
            FUZZ_CHECK(offs[i + 1] - offs[i] == text.n &&
                       (text.n == 0 || memcmp(texts + offs[i], text.p, text.n) == 0));
            FUZZ_CHECK(lens[i] == rec->id_len &&
                       memcmp(block.p + ids[i], rec->id, rec->id_len) == 0);
        }
    }
    free(texts);
    buf_free(&block);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t sel = fuzz_u8(&in);
    const char *line = (const char *)in.p, *id_field = "id", *text_field = "text";
    size_t len = in.n;
    json_record rec;
    char err[200];
    int rc;
    if (sel & 1) id_field = field_names[(sel >> 1) & 7];
    if (sel & 16) text_field = field_names[(sel >> 5) & 7];
    memset(err, 'x', sizeof err);
    rc = json_extract(line, len, id_field, text_field, &rec, &text, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc != 0) {
        FUZZ_CHECK(memchr(err, '\0', sizeof err) != NULL && err[0] != '\0');
        FUZZ_CHECK(rec.id == NULL || (rec.id >= line && rec.id + rec.id_len <= line + len));
    } else {
        FUZZ_CHECK(rec.id != NULL && rec.id >= line && rec.id_len > 0 &&
                   rec.id + rec.id_len <= line + len);
        FUZZ_CHECK(text.n == 0 || has_byte_escape(line, len) || utf8_valid(text.p, text.n));
        if (rec.id[0] == '"') {
            FUZZ_CHECK(rec.id_len >= 2 && rec.id[rec.id_len - 1] == '"');
            buf_clear(&dec);
            json_decode_string(&dec, rec.id, rec.id_len);
            FUZZ_CHECK(dec.n == 0 || has_byte_escape(line, len) || utf8_valid(dec.p, dec.n));
        } else {
            FUZZ_CHECK(number_chars(rec.id, rec.id_len));
        }
        /* The text escaped and read back is the same bytes. */
        roundtrip(text.p, text.n, &text2);
        FUZZ_CHECK(text2.n == text.n && (text.n == 0 || memcmp(text.p, text2.p, text.n) == 0));
    }
    check_streamed(line, len, id_field, text_field, rc, &rec, err, sel);
    check_block(line, len, id_field, text_field, rc, &rec);
    /* Any bytes escaped read back as the same bytes. */
    roundtrip(line, len, &text2);
    check_utf8(line, len, sel);
    buf_free(&text);
    buf_free(&text2);
    buf_free(&esc);
    buf_free(&dec);
    buf_free(&streamed);
    return 0;
}
