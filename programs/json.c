/*
 * json.c: just enough JSON for JSON Lines input. Each line must be one JSON
 * object (RFC 8259, checked in full); from it we take the id field as its
 * raw token (so it is printed back exactly as written) and the text field
 * decoded to UTF-8 (escapes, \uXXXX and surrogate pairs included). Strings
 * must be valid UTF-8 (utf8.c decides) and may not contain unpaired
 * surrogates. Also: JSON string escaping for output.
 *
 * One parser serves a line held in memory and a line too long to hold: the
 * latter comes in pieces (json_stream), the parser looks at a window of it
 * and asks for the next piece when it reaches the window's end, keeping
 * only the bytes a token still needs (a key, the id, the 12 bytes of a
 * surrogate pair), and hands the decoded text on as it goes. So both give
 * the same fields and the same messages, columns included.
 */
#include "cli.h"

#include <string.h>

/* A string's plain bytes (printable ASCII but '"' and '\\') are skipped 16
 * at a time with SSE2, part of the x86-64 baseline; elsewhere (and with
 * -DMINLSH_NO_SSE2) one at a time. */
#if defined(__SSE2__) && (defined(__x86_64__) || defined(_M_X64)) && !defined(MINLSH_NO_SSE2)
#include <emmintrin.h>
#define JSON_PLAIN_SSE2 1
#else
#define JSON_PLAIN_SSE2 0
#endif

#define JSON_MAX_DEPTH 256
#define JSON_TEXT_PIECE (64u << 10) /* decoded text handed on at a time */
#define NO_MARK UINT64_MAX

/* ---- the parser --------------------------------------------------------- */

typedef struct jparser {
    const unsigned char *start, *p, *end; /* the window */
    uint64_t consumed; /* bytes of the line before start */
    json_stream *src;  /* NULL: the window is the whole line */
    uint64_t keep;     /* the first byte a refill must keep (NO_MARK: none) */
    int src_done;      /* the line has no more pieces */
    int sinking;       /* the string being parsed is the text: hand it on */
    char *err;
    size_t errcap;
    int failed;
} jparser;

static void jp_init(jparser *j, const void *s, size_t len, char *err, size_t errcap) {
    j->start = j->p = (const unsigned char *)s;
    j->end = j->start + len;
    j->consumed = 0;
    j->src = NULL;
    j->keep = NO_MARK;
    j->src_done = 1;
    j->sinking = 0;
    j->err = err;
    j->errcap = errcap;
    j->failed = 0;
}

/* Where j->p is, counting bytes of the line from 0. */
static uint64_t jp_pos(const jparser *j) {
    return j->consumed + (uint64_t)(j->p - j->start);
}

/* The byte at line position pos, which must be in the window. */
static const unsigned char *jp_at(const jparser *j, uint64_t pos) {
    return j->start + (size_t)(pos - j->consumed);
}

/* The next piece of the line into the window, after the bytes from
 * j->p (or the keep mark, if earlier) on. 0 when the line has no more. */
static int refill(jparser *j) {
    json_stream *s = j->src;
    const unsigned char *piece;
    size_t n = 0, from, kept, at;
    int got;
    if (j->src_done) return 0;
    do
        got = s->next(s->ctx, &piece, &n);
    while (got > 0 && n == 0);
    if (got <= 0) {
        j->src_done = 1;
        if (got < 0) s->stopped = 1;
        return 0;
    }
    from = (size_t)(j->p - j->start);
    if (j->keep != NO_MARK && j->keep - j->consumed < from) from = (size_t)(j->keep - j->consumed);
    kept = (size_t)(j->end - j->start) - from;
    at = (size_t)(j->p - j->start) - from;
    if (kept > 0) memmove(s->window.p, s->window.p + from, kept);
    s->window.n = kept;
    buf_add(&s->window, piece, n);
    j->consumed += from;
    j->start = (const unsigned char *)s->window.p;
    j->p = j->start + at;
    j->end = j->start + s->window.n;
    return 1;
}

/* 1 if there is a byte at j->p (reading the next piece if need be). */
static int more(jparser *j) {
    return j->p < j->end || refill(j);
}

/* At least n bytes from j->p in the window, unless the line ends first. */
static void need(jparser *j, size_t n) {
    while ((size_t)(j->end - j->p) < n && refill(j)) {
    }
}

static int fail(jparser *j, const char *what) {
    if (!j->failed) {
        uint64_t col = jp_pos(j) + 1;
        if (!more(j))
            snprintf(j->err, j->errcap, "invalid JSON: %s at the end of the line", what);
        else if (*j->p >= 0x20 && *j->p < 0x7F)
            snprintf(j->err, j->errcap, "invalid JSON at column %llu: %s (found '%c')",
                     (unsigned long long)col, what, *j->p);
        else
            snprintf(j->err, j->errcap, "invalid JSON at column %llu: %s",
                     (unsigned long long)col, what);
        j->failed = 1;
    }
    return -1;
}

static void skip_ws(jparser *j) {
    while (more(j) && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int hex4(const unsigned char *p, unsigned *out) {
    unsigned v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

static void put_utf8(cli_buf *out, uint32_t cp) {
    char b[4];
    buf_add(out, b, utf8_encode(cp, b));
}

/* \uXXXX at j->p (pointing at the 'u'), with a following low surrogate if
 * the first is a high one. */
static int parse_u_escape(jparser *j, cli_buf *out) {
    const unsigned char *esc = j->p - 1; /* the backslash */
    unsigned cp, lo;
    if (j->end - j->p < 5 || hex4(j->p + 1, &cp) != 0)
        return fail(j, "invalid \\u escape");
    if (cp >= 0xDC80 && cp <= 0xDCFF) {
        /* A lone low surrogate of U+DC80..U+DCFF stands for the byte
         * cp - 0xDC00 that is not UTF-8 (json_escape writes them; Python
         * reads them back with surrogateescape, PEP 383). */
        j->p += 5;
        if (out) buf_addc(out, (char)(cp - 0xDC00));
        return 0;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) goto unpaired;
    j->p += 5;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' ||
            hex4(j->p + 2, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
            goto unpaired;
        j->p += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (out) put_utf8(out, cp);
    return 0;
unpaired:
    j->p = esc;
    return fail(j, "unpaired surrogate in \\u escape");
}

/* An escape at j->p (the backslash). The window holds all of it: the
 * longest, a surrogate pair, is 12 bytes. */
static int parse_escape(jparser *j, cli_buf *out) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e;
    need(j, 12);
    j->p++; /* the backslash */
    if (j->p >= j->end) return fail(j, "unterminated string");
    if (*j->p == 'u') return parse_u_escape(j, out);
    e = strchr(from, *j->p);
    if (*j->p == '\0' || e == NULL) return fail(j, "invalid escape in string");
    if (out) buf_addc(out, to[e - from]);
    j->p++;
    return 0;
}

/* Hand the decoded text gathered in out to the stream's consumer. */
static int hand_on(jparser *j, cli_buf *out) {
    json_stream *s = j->src;
    int rc = out->n > 0 ? s->text(s->ctx, out->p, out->n) : 0;
    buf_clear(out);
    if (rc != 0) {
        s->text_rc = rc;
        s->stopped = 1;
        j->failed = 1;
        return -1;
    }
    return 0;
}

/* The first byte at or after p, before end, that is not plain: a control
 * byte, '"', '\\' or a byte past ASCII (signed, those are below 0x20). */
static const unsigned char *plain_end(const unsigned char *p, const unsigned char *end) {
#if JSON_PLAIN_SSE2
    const __m128i ctl = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'),
                  bslash = _mm_set1_epi8('\\');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i stop = _mm_or_si128(_mm_cmplt_epi8(v, ctl),
                                    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
        unsigned m = (unsigned)_mm_movemask_epi8(stop);
        if (m != 0) return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    return p;
}

/* A string at j->p (the opening quote); decoded into out if not NULL. */
static int parse_string(jparser *j, cli_buf *out) {
    j->p++;
    for (;;) {
        const unsigned char *run = j->p;
        int l;
        /* sinking is set only with an out to sink */
        if (j->sinking && out != NULL && out->n >= JSON_TEXT_PIECE && hand_on(j, out) != 0)
            return -1;
        /* Copy plain ASCII runs in one go. */
        j->p = plain_end(j->p, j->end);
        if (out && j->p > run) buf_add(out, run, (size_t)(j->p - run));
        if (j->p >= j->end) {
            if (refill(j)) continue;
            return fail(j, "unterminated string");
        }
        if (*j->p == '"') {
            j->p++;
            return j->sinking && out != NULL ? hand_on(j, out) : 0;
        }
        if (*j->p == '\\') {
            if (parse_escape(j, out) != 0) return -1;
            continue;
        }
        if (*j->p < 0x20) return fail(j, "control character in string");
        need(j, 4);
        l = utf8_decode(j->p, (size_t)(j->end - j->p), NULL);
        if (l <= 0) return fail(j, "invalid UTF-8 in string");
        if (out) buf_add(out, j->p, (size_t)l);
        j->p += l;
    }
}

static int digits(jparser *j) {
    uint64_t from = jp_pos(j);
    while (more(j) && *j->p >= '0' && *j->p <= '9') j->p++;
    return jp_pos(j) > from ? 0 : fail(j, "digit expected in number");
}

static int parse_number(jparser *j) {
    if (*j->p == '-') j->p++;
    if (more(j) && *j->p == '0') j->p++;
    else if (digits(j) != 0) return -1;
    if (more(j) && *j->p == '.') {
        j->p++;
        if (digits(j) != 0) return -1;
    }
    if (more(j) && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (more(j) && (*j->p == '+' || *j->p == '-')) j->p++;
        if (digits(j) != 0) return -1;
    }
    return 0;
}

static int parse_literal(jparser *j, const char *word) {
    size_t n = strlen(word);
    need(j, n);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return fail(j, "unexpected character");
    j->p += n;
    return 0;
}

static int parse_value(jparser *j, int depth);

/* An array or object body after its opening bracket. */
static int parse_container(jparser *j, int depth, int object) {
    char close = object ? '}' : ']';
    if (depth > JSON_MAX_DEPTH) return fail(j, "nesting too deep");
    j->p++;
    skip_ws(j);
    if (more(j) && *j->p == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        if (object) {
            skip_ws(j);
            if (!more(j) || *j->p != '"') return fail(j, "string expected as object key");
            if (parse_string(j, NULL) != 0) return -1;
            skip_ws(j);
            if (!more(j) || *j->p != ':') return fail(j, "':' expected");
            j->p++;
        }
        if (parse_value(j, depth + 1) != 0) return -1;
        skip_ws(j);
        if (more(j) && *j->p == ',') {
            j->p++;
            continue;
        }
        if (more(j) && *j->p == close) {
            j->p++;
            return 0;
        }
        return fail(j, object ? "',' or '}' expected" : "',' or ']' expected");
    }
}

static int parse_value(jparser *j, int depth) {
    skip_ws(j);
    if (!more(j)) return fail(j, "value expected");
    switch (*j->p) {
    case '"': return parse_string(j, NULL);
    case '{': return parse_container(j, depth, 1);
    case '[': return parse_container(j, depth, 0);
    case 't': return parse_literal(j, "true");
    case 'f': return parse_literal(j, "false");
    case 'n': return parse_literal(j, "null");
    default:
        if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) return parse_number(j);
        return fail(j, "value expected");
    }
}

/* 1 if the key token (quotes included) decodes to name. */
static int key_is(const unsigned char *tok, size_t len, const char *name,
                  cli_buf *scratch) {
    size_t nl = strlen(name);
    if (memchr(tok, '\\', len) == NULL)
        return len == nl + 2 && memcmp(tok + 1, name, nl) == 0;
    buf_clear(scratch);
    json_decode_string(scratch, (const char *)tok, len);
    return scratch->n == nl && memcmp(scratch->p, name, nl) == 0;
}

/* What a member value turned out to be, for the fields we want. */
typedef struct member_state {
    int have_id, id_ok, have_text, text_ok;
} member_state;

/* One "key": value member of the top-level object. */
static int parse_member(jparser *j, const char *id_field, const char *text_field,
                        json_record *rec, cli_buf *text, member_state *ms,
                        cli_buf *scratch) {
    uint64_t key = jp_pos(j), val;
    size_t key_len;
    int is_id, is_text, first, id_kind;
    if (!more(j) || *j->p != '"') return fail(j, "string expected as object key");
    j->keep = key;
    if (parse_string(j, NULL) != 0) return -1;
    key_len = (size_t)(jp_pos(j) - key);
    is_id = key_is(jp_at(j, key), key_len, id_field, scratch);
    is_text = key_is(jp_at(j, key), key_len, text_field, scratch);
    j->keep = NO_MARK;
    skip_ws(j);
    if (!more(j) || *j->p != ':') return fail(j, "':' expected");
    j->p++;
    skip_ws(j);
    val = jp_pos(j);
    first = more(j) ? *j->p : -1;
    id_kind = first == '"' || first == '-' || (first >= '0' && first <= '9');
    if (is_id && id_kind) j->keep = val; /* nothing else can be an id: keep nothing else */
    if (is_text && first == '"') {
        buf_clear(text);
        if (j->src != NULL) j->src->restart(j->src->ctx);
        j->sinking = j->src != NULL;
        if (parse_string(j, text) != 0) return -1;
        j->sinking = 0;
    } else if (parse_value(j, 1) != 0)
        return -1;
    if (is_id) { /* the last occurrence wins, as in most JSON readers */
        ms->have_id = 1;
        ms->id_ok = id_kind;
        rec->id_len = (size_t)(jp_pos(j) - val);
        if (j->src == NULL) rec->id = (const char *)jp_at(j, val);
        else if (ms->id_ok) {
            /* The window moves on: the id goes to a buffer of its own. */
            buf_clear(&j->src->id);
            buf_add(&j->src->id, jp_at(j, val), rec->id_len);
            rec->id = j->src->id.p;
        }
        j->keep = NO_MARK;
    }
    if (is_text) {
        ms->have_text = 1;
        ms->text_ok = first == '"';
    }
    return 0;
}

static int check_fields(jparser *j, const member_state *ms, const char *id_field,
                        const char *text_field) {
    if (!ms->have_id) snprintf(j->err, j->errcap, "missing field \"%s\"", id_field);
    else if (!ms->have_text) snprintf(j->err, j->errcap, "missing field \"%s\"", text_field);
    else if (!ms->id_ok)
        snprintf(j->err, j->errcap, "field \"%s\" is not a string or a number", id_field);
    else if (!ms->text_ok)
        snprintf(j->err, j->errcap, "field \"%s\" is not a string", text_field);
    else return 0;
    return -1;
}

/* The record in j: 0, -1 (the message in j->err) or JSON_BLANK. */
static int extract(jparser *j, const char *id_field, const char *text_field,
                   json_record *rec, cli_buf *text) {
    member_state ms = {0, 0, 0, 0};
    cli_buf scratch = {NULL, 0, 0};
    int rc = -1;
    rec->id = NULL;
    rec->id_len = 0;
    buf_clear(text);
    skip_ws(j);
    if (!more(j)) return JSON_BLANK;
    if (*j->p != '{') {
        snprintf(j->err, j->errcap, "not a JSON object");
        return -1;
    }
    j->p++;
    skip_ws(j);
    if (more(j) && *j->p == '}') j->p++;
    else {
        for (;;) {
            skip_ws(j);
            if (parse_member(j, id_field, text_field, rec, text, &ms, &scratch) != 0)
                goto done;
            skip_ws(j);
            if (more(j) && *j->p == ',') {
                j->p++;
                continue;
            }
            if (more(j) && *j->p == '}') {
                j->p++;
                break;
            }
            fail(j, "',' or '}' expected");
            goto done;
        }
    }
    skip_ws(j);
    if (more(j)) {
        fail(j, "text after the object");
        goto done;
    }
    rc = check_fields(j, &ms, id_field, text_field);
    if (rc == 0) buf_add(text, "", 0); /* an empty text is "", not NULL */
done:
    buf_free(&scratch);
    return rc;
}

int json_extract(const char *line, size_t len, const char *id_field,
                 const char *text_field, json_record *rec, cli_buf *text,
                 char *err, size_t errcap) {
    jparser j;
    int rc;
    jp_init(&j, line, len, err, errcap);
    rc = extract(&j, id_field, text_field, rec, text);
    if (rc == JSON_BLANK) {
        snprintf(err, errcap, "not a JSON object");
        rc = -1;
    }
    return rc;
}

int json_extract_stream(json_stream *s, const char *id_field, const char *text_field,
                        char *err, size_t errcap) {
    jparser j;
    json_record rec;
    int rc;
    buf_reserve(&s->window, JSON_TEXT_PIECE);
    s->window.n = 0;
    buf_clear(&s->id);
    s->stopped = 0;
    s->text_rc = 0;
    jp_init(&j, s->window.p, 0, err, errcap);
    j.src = s;
    j.src_done = 0;
    rc = extract(&j, id_field, text_field, &rec, &s->decoded);
    if (s->stopped) return JSON_STOPPED;
    return rc;
}

void json_stream_free(json_stream *s) {
    buf_free(&s->id);
    buf_free(&s->window);
    buf_free(&s->decoded);
}

int json_token_valid(const char *s, size_t len) {
    char err[8];
    jparser j;
    jp_init(&j, s, len, err, sizeof err);
    if (len == 0) return 0;
    if (*j.p == '"') {
        if (parse_string(&j, NULL) != 0) return 0;
    } else if (*j.p == '-' || (*j.p >= '0' && *j.p <= '9')) {
        if (parse_number(&j) != 0) return 0;
    } else
        return 0;
    return j.p == j.end;
}

void json_decode_string(cli_buf *out, const char *tok, size_t len) {
    char err[8];
    jparser j;
    jp_init(&j, tok, len, err, sizeof err);
    parse_string(&j, out);
}

void json_escape(cli_buf *out, const char *s, size_t n) {
    const unsigned char *p, *end;
    buf_reserve(out, n + 2);
    buf_addc(out, '"');
    if (n == 0) { /* s may be NULL (an empty cli_buf) */
        buf_addc(out, '"');
        return;
    }
    p = (const unsigned char *)s;
    end = p + n;
    while (p < end) {
        const unsigned char *run = p;
        int l;
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        if (p > run) buf_add(out, run, (size_t)(p - run));
        if (p >= end) break;
        switch (*p) {
        case '"': buf_adds(out, "\\\""); break;
        case '\\': buf_adds(out, "\\\\"); break;
        case '\n': buf_adds(out, "\\n"); break;
        case '\t': buf_adds(out, "\\t"); break;
        case '\r': buf_adds(out, "\\r"); break;
        case '\b': buf_adds(out, "\\b"); break;
        case '\f': buf_adds(out, "\\f"); break;
        default:
            if (*p < 0x20) {
                buf_printf(out, "\\u%04x", *p);
                break;
            }
            l = utf8_decode(p, (size_t)(end - p), NULL);
            if (l <= 0) {
                /* A byte that is not UTF-8 keeps its value: \udcXX, the
                 * escape parse_u_escape reads back (names stay distinct). */
                buf_printf(out, "\\udc%02x", *p);
                break;
            }
            buf_add(out, p, (size_t)l);
            p += l;
            continue;
        }
        p++;
    }
    buf_addc(out, '"');
}
