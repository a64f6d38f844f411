/*
 * json.c: just enough JSON for JSON Lines input. Each line must be one JSON
 * object (RFC 8259, checked in full); from it we take the id field as its
 * raw token (so it is printed back exactly as written) and the text field
 * decoded to UTF-8 (escapes, \uXXXX and surrogate pairs included). Strings
 * must be valid UTF-8 (utf8.c decides) and may not contain unpaired
 * surrogates. Also: JSON string escaping for output.
 */
#include "cli.h"

#include <string.h>

#define JSON_MAX_DEPTH 256

/* ---- the parser --------------------------------------------------------- */

typedef struct jparser {
    const unsigned char *start, *p, *end;
    char *err;
    size_t errcap;
    int failed;
} jparser;

static int fail(jparser *j, const char *what) {
    if (!j->failed) {
        size_t col = (size_t)(j->p - j->start) + 1;
        if (j->p >= j->end)
            snprintf(j->err, j->errcap, "invalid JSON: %s at the end of the line", what);
        else if (*j->p >= 0x20 && *j->p < 0x7F)
            snprintf(j->err, j->errcap, "invalid JSON at column %zu: %s (found '%c')",
                     col, what, *j->p);
        else
            snprintf(j->err, j->errcap, "invalid JSON at column %zu: %s", col, what);
        j->failed = 1;
    }
    return -1;
}

static void skip_ws(jparser *j) {
    while (j->p < j->end &&
           (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
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

static int parse_escape(jparser *j, cli_buf *out) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e;
    j->p++; /* the backslash */
    if (j->p >= j->end) return fail(j, "unterminated string");
    if (*j->p == 'u') return parse_u_escape(j, out);
    e = strchr(from, *j->p);
    if (*j->p == '\0' || e == NULL) return fail(j, "invalid escape in string");
    if (out) buf_addc(out, to[e - from]);
    j->p++;
    return 0;
}

/* A string at j->p (the opening quote); decoded into out if not NULL. */
static int parse_string(jparser *j, cli_buf *out) {
    j->p++;
    for (;;) {
        const unsigned char *run = j->p;
        int l;
        /* Copy plain ASCII runs in one go. */
        while (j->p < j->end && *j->p >= 0x20 && *j->p < 0x80 && *j->p != '"' &&
               *j->p != '\\')
            j->p++;
        if (out && j->p > run) buf_add(out, run, (size_t)(j->p - run));
        if (j->p >= j->end) return fail(j, "unterminated string");
        if (*j->p == '"') {
            j->p++;
            return 0;
        }
        if (*j->p == '\\') {
            if (parse_escape(j, out) != 0) return -1;
            continue;
        }
        if (*j->p < 0x20) return fail(j, "control character in string");
        l = utf8_decode(j->p, (size_t)(j->end - j->p), NULL);
        if (l <= 0) return fail(j, "invalid UTF-8 in string");
        if (out) buf_add(out, j->p, (size_t)l);
        j->p += l;
    }
}

static int digits(jparser *j) {
    const unsigned char *s = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
    return j->p > s ? 0 : fail(j, "digit expected in number");
}

static int parse_number(jparser *j) {
    if (*j->p == '-') j->p++;
    if (j->p < j->end && *j->p == '0') j->p++;
    else if (digits(j) != 0) return -1;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (digits(j) != 0) return -1;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
        if (digits(j) != 0) return -1;
    }
    return 0;
}

static int parse_literal(jparser *j, const char *word) {
    size_t n = strlen(word);
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
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        if (object) {
            skip_ws(j);
            if (j->p >= j->end || *j->p != '"') return fail(j, "string expected as object key");
            if (parse_string(j, NULL) != 0) return -1;
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':') return fail(j, "':' expected");
            j->p++;
        }
        if (parse_value(j, depth + 1) != 0) return -1;
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        return fail(j, object ? "',' or '}' expected" : "',' or ']' expected");
    }
}

static int parse_value(jparser *j, int depth) {
    skip_ws(j);
    if (j->p >= j->end) return fail(j, "value expected");
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
    const unsigned char *key = j->p, *val;
    size_t key_len;
    int is_id, is_text;
    if (j->p >= j->end || *j->p != '"') return fail(j, "string expected as object key");
    if (parse_string(j, NULL) != 0) return -1;
    key_len = (size_t)(j->p - key);
    skip_ws(j);
    if (j->p >= j->end || *j->p != ':') return fail(j, "':' expected");
    j->p++;
    skip_ws(j);
    is_id = key_is(key, key_len, id_field, scratch);
    is_text = key_is(key, key_len, text_field, scratch);
    val = j->p;
    if (is_text && j->p < j->end && *j->p == '"') {
        buf_clear(text);
        if (parse_string(j, text) != 0) return -1;
    } else if (parse_value(j, 1) != 0)
        return -1;
    if (is_id) { /* the last occurrence wins, as in most JSON readers */
        ms->have_id = 1;
        ms->id_ok = *val == '"' || *val == '-' || (*val >= '0' && *val <= '9');
        rec->id = (const char *)val;
        rec->id_len = (size_t)(j->p - val);
    }
    if (is_text) {
        ms->have_text = 1;
        ms->text_ok = *val == '"';
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

int json_extract(const char *line, size_t len, const char *id_field,
                 const char *text_field, json_record *rec, cli_buf *text,
                 char *err, size_t errcap) {
    jparser j;
    member_state ms = {0, 0, 0, 0};
    cli_buf scratch = {NULL, 0, 0};
    int rc = -1;
    j.start = j.p = (const unsigned char *)line;
    j.end = j.start + len;
    j.err = err;
    j.errcap = errcap;
    j.failed = 0;
    rec->id = NULL;
    rec->id_len = 0;
    buf_clear(text);
    skip_ws(&j);
    if (j.p >= j.end || *j.p != '{') {
        snprintf(err, errcap, "not a JSON object");
        return -1;
    }
    j.p++;
    skip_ws(&j);
    if (j.p < j.end && *j.p == '}') j.p++;
    else {
        for (;;) {
            skip_ws(&j);
            if (parse_member(&j, id_field, text_field, rec, text, &ms, &scratch) != 0)
                goto done;
            skip_ws(&j);
            if (j.p < j.end && *j.p == ',') {
                j.p++;
                continue;
            }
            if (j.p < j.end && *j.p == '}') {
                j.p++;
                break;
            }
            fail(&j, "',' or '}' expected");
            goto done;
        }
    }
    skip_ws(&j);
    if (j.p < j.end) {
        fail(&j, "text after the object");
        goto done;
    }
    rc = check_fields(&j, &ms, id_field, text_field);
    if (rc == 0) buf_add(text, "", 0); /* an empty text is "", not NULL */
done:
    buf_free(&scratch);
    return rc;
}

int json_token_valid(const char *s, size_t len) {
    char err[8];
    jparser j;
    j.start = j.p = (const unsigned char *)s;
    j.end = j.start + len;
    j.err = err;
    j.errcap = sizeof err;
    j.failed = 0;
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
    j.start = j.p = (const unsigned char *)tok;
    j.end = j.start + len;
    j.err = err;
    j.errcap = sizeof err;
    j.failed = 0;
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
