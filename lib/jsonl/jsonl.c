/*
 * jsonl.c: the JSON Lines reader every front end shares (the command's
 * --jsonl, the bindings' bulk readers). Each line must be one JSON object
 * (RFC 8259, checked in full); from it we take the id field as its raw
 * token (so it is printed back exactly as written) and the text field
 * decoded to UTF-8 (escapes, \uXXXX and surrogate pairs included). Strings
 * must be valid UTF-8 and may not contain unpaired surrogates.
 *
 * One parser serves a line held in memory and a line too long to hold: the
 * latter comes in pieces (minlsh_jsonl_parse_stream), the parser looks at a
 * window of it and asks for the next piece when it reaches the window's
 * end, keeping only the bytes a token still needs (a key, the id, the 12
 * bytes of a surrogate pair), and hands the decoded text on as it goes. So
 * both give the same fields and the same messages, columns included.
 *
 * Memory: a held line decodes into the caller's buffer (decoding never
 * lengthens a string, so the line's length suffices) and allocates
 * nothing; a streamed line holds its window (about 128 KiB, more only for
 * a longer key or id) and its id. Time: one pass over the bytes.
 */

#include "common/common.h"
#include "shingle/unicode.h"

#include <stdio.h>
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

/* ---- buffers ------------------------------------------------------------ */

/* Bytes written by the parser: into the caller's room (grow = 0, where the
 * room is known to suffice) or a buffer of our own that grows. */
typedef struct jbuf {
    uint8_t *p;
    size_t n, cap;
    int grow;
    const uint8_t *expect; /* not NULL: compare with expect[0..cap), write nothing */
} jbuf;

/* ---- the parser --------------------------------------------------------- */

typedef struct jparser {
    const unsigned char *start, *p, *end; /* the window */
    uint64_t consumed; /* bytes of the line before start */
    const minlsh_jsonl_source *src; /* NULL: the window is the whole line */
    jbuf *window;      /* the streamed line's bytes being parsed */
    jbuf *id;          /* the streamed line's id token */
    uint64_t keep;     /* the first byte a refill must keep (NO_MARK: none) */
    int src_done;      /* the line has no more pieces */
    int sinking;       /* the string being parsed is the text: hand it on */
    const minlsh_allocator *alloc;
    char *err;
    size_t errcap;
    int failed;
    int rc; /* the code to return once failed: MINLSH_E_FORMAT unless set */
} jparser;

static void jp_init(jparser *j, const void *s, size_t len, char *err, size_t errcap) {
    memset(j, 0, sizeof *j);
    j->start = j->p = s != NULL ? (const unsigned char *)s : (const unsigned char *)"";
    j->end = j->start + len;
    j->keep = NO_MARK;
    j->src_done = 1;
    j->err = err;
    j->errcap = errcap;
    j->rc = MINLSH_E_FORMAT;
}

/* Stop the parse with code rc (not a format error: no message). */
static int stop(jparser *j, int rc) {
    if (!j->failed) {
        j->failed = 1;
        j->rc = rc;
    }
    return -1;
}

static int jb_add(jparser *j, jbuf *b, const void *data, size_t n) {
    if (b->expect != NULL) {
        if (n > b->cap - b->n || memcmp(b->expect + b->n, data, n) != 0)
            return stop(j, MINLSH_E_FORMAT);
        b->n += n;
        return 0;
    }
    if (n > b->cap - b->n) {
        int rc;
        if (!b->grow) return stop(j, MINLSH_E_BUFSIZE);
        rc = minlsh__reserve(j->alloc, (void **)&b->p, &b->cap, b->n, b->n + n, 1);
        if (rc != 0) return stop(j, rc);
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
    return 0;
}

static void jb_free(const minlsh_allocator *a, jbuf *b) {
    minlsh__free(a, b->p);
    b->p = NULL;
    b->n = b->cap = 0;
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
 * j->p (or the keep mark, if earlier) on. 0 when the line has no more (or
 * the source stopped the parse). */
static int refill(jparser *j) {
    const minlsh_jsonl_source *s = j->src;
    const unsigned char *piece;
    size_t n = 0, from, kept, at;
    int got;
    if (j->src_done) return 0;
    do
        got = s->next(s->ctx, &piece, &n);
    while (got > 0 && n == 0);
    if (got <= 0) {
        j->src_done = 1;
        if (got < 0) stop(j, got);
        return 0;
    }
    from = (size_t)(j->p - j->start);
    if (j->keep != NO_MARK && j->keep - j->consumed < from) from = (size_t)(j->keep - j->consumed);
    kept = (size_t)(j->end - j->start) - from;
    at = (size_t)(j->p - j->start) - from;
    if (kept > 0) memmove(j->window->p, j->window->p + from, kept);
    j->window->n = kept;
    if (jb_add(j, j->window, piece, n) != 0) {
        j->src_done = 1;
        return 0;
    }
    j->consumed += from;
    j->start = j->window->p;
    j->p = j->start + at;
    j->end = j->start + j->window->n;
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

/* The length of the UTF-8 sequence at p[0..n) (1 to 4), or 0 if it is not
 * a valid one (RFC 3629: no overlong forms, surrogates or values above
 * U+10FFFF). */
static size_t utf8_length(const unsigned char *p, size_t n) {
    uint8_t lo, hi;
    size_t len, i;
    if (n == 0) return 0;
    if (p[0] < 0x80) return 1;
    len = minlsh__utf8_lead(p[0], &lo, &hi);
    if (len == 0 || n < len || p[1] < lo || p[1] > hi) return 0;
    for (i = 2; i < len; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return len;
}

/* \uXXXX at j->p (pointing at the 'u'), with a following low surrogate if
 * the first is a high one. */
static int parse_u_escape(jparser *j, jbuf *out) {
    const unsigned char *esc = j->p - 1; /* the backslash */
    unsigned cp, lo;
    uint8_t b[4];
    if (j->end - j->p < 5 || hex4(j->p + 1, &cp) != 0)
        return fail(j, "invalid \\u escape");
    if (cp >= 0xDC80 && cp <= 0xDCFF) {
        /* A lone low surrogate of U+DC80..U+DCFF stands for the byte
         * cp - 0xDC00 that is not UTF-8 (the command's JSON output writes
         * them; Python reads them back with surrogateescape, PEP 383). */
        j->p += 5;
        b[0] = (uint8_t)(cp - 0xDC00);
        return out ? jb_add(j, out, b, 1) : 0;
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
    return out ? jb_add(j, out, b, minlsh__utf8_put(cp, b)) : 0;
unpaired:
    j->p = esc;
    return fail(j, "unpaired surrogate in \\u escape");
}

/* An escape at j->p (the backslash). The window holds all of it: the
 * longest, a surrogate pair, is 12 bytes. */
static int parse_escape(jparser *j, jbuf *out) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e;
    need(j, 12);
    j->p++; /* the backslash */
    if (j->p >= j->end) return fail(j, "unterminated string");
    if (*j->p == 'u') return parse_u_escape(j, out);
    e = strchr(from, *j->p);
    if (*j->p == '\0' || e == NULL) return fail(j, "invalid escape in string");
    j->p++;
    return out ? jb_add(j, out, &to[e - from], 1) : 0;
}

/* Hand the decoded text gathered in out to the source's consumer. */
static int hand_on(jparser *j, jbuf *out) {
    const minlsh_jsonl_source *s = j->src;
    int rc = out->n > 0 ? s->text(s->ctx, (const char *)out->p, out->n) : 0;
    out->n = 0;
    return rc != 0 ? stop(j, rc) : 0;
}

/* The first byte at or after p, before end, that is not plain: a control
 * byte, '"', '\\' or a byte past ASCII (signed, those are below 0x20). */
static const unsigned char *plain_end(const unsigned char *p, const unsigned char *end) {
#if JSON_PLAIN_SSE2
    const __m128i ctl = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'),
                  bslash = _mm_set1_epi8('\\');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i stop_at = _mm_or_si128(_mm_cmplt_epi8(v, ctl),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
        unsigned m = (unsigned)_mm_movemask_epi8(stop_at);
        if (m != 0) return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
    return p;
}

/* A string at j->p (the opening quote); decoded into out if not NULL. */
static int parse_string(jparser *j, jbuf *out) {
    j->p++;
    for (;;) {
        const unsigned char *run = j->p;
        size_t l;
        /* sinking is set only with an out to sink */
        if (j->sinking && out != NULL && out->n >= JSON_TEXT_PIECE && hand_on(j, out) != 0)
            return -1;
        /* Copy plain ASCII runs in one go. */
        j->p = plain_end(j->p, j->end);
        if (out && j->p > run && jb_add(j, out, run, (size_t)(j->p - run)) != 0) return -1;
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
        l = utf8_length(j->p, (size_t)(j->end - j->p));
        if (l == 0) return fail(j, "invalid UTF-8 in string");
        if (out && jb_add(j, out, j->p, l) != 0) return -1;
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

/* 1 if the key token (quotes included, valid) decodes to name: decoded
 * and compared as it goes, nothing written. */
static int key_is(const unsigned char *tok, size_t len, const char *name) {
    size_t nl = strlen(name);
    jparser k;
    jbuf same = {NULL, 0, 0, 0, NULL};
    char err[8];
    if (memchr(tok, '\\', len) == NULL)
        return len == nl + 2 && memcmp(tok + 1, name, nl) == 0;
    jp_init(&k, tok, len, err, sizeof err);
    same.cap = nl;
    same.expect = (const uint8_t *)name;
    return parse_string(&k, &same) == 0 && same.n == nl;
}

/* What a member value turned out to be, for the fields we want. */
typedef struct member_state {
    int have_id, id_ok, have_text, text_ok;
    uint64_t id_at;   /* the id token: its line position (held line) */
    size_t id_len;
} member_state;

/* One "key": value member of the top-level object. */
static int parse_member(jparser *j, const char *id_field, const char *text_field,
                        jbuf *text, member_state *ms) {
    uint64_t key = jp_pos(j), val;
    size_t key_len;
    int is_id, is_text, first, id_kind;
    if (!more(j) || *j->p != '"') return fail(j, "string expected as object key");
    j->keep = key;
    if (parse_string(j, NULL) != 0) return -1;
    key_len = (size_t)(jp_pos(j) - key);
    is_id = key_is(jp_at(j, key), key_len, id_field);
    is_text = key_is(jp_at(j, key), key_len, text_field);
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
        text->n = 0;
        if (j->src != NULL && j->src->restart != NULL) j->src->restart(j->src->ctx);
        j->sinking = j->src != NULL;
        if (parse_string(j, text) != 0) return -1;
        j->sinking = 0;
    } else if (parse_value(j, 1) != 0)
        return -1;
    if (is_id) { /* the last occurrence wins, as in most JSON readers */
        ms->have_id = 1;
        ms->id_ok = id_kind;
        ms->id_at = val;
        ms->id_len = (size_t)(jp_pos(j) - val);
        if (j->src != NULL && ms->id_ok) {
            /* The window moves on: the id goes to a buffer of its own. */
            j->id->n = 0;
            if (jb_add(j, j->id, jp_at(j, val), ms->id_len) != 0) return -1;
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
    j->failed = 1;
    return -1;
}

/* The record in j: MINLSH_OK, MINLSH_JSONL_BLANK or an error (a format
 * error's message in j->err). */
static int extract(jparser *j, const char *id_field, const char *text_field, jbuf *text,
                   member_state *ms) {
    memset(ms, 0, sizeof *ms);
    text->n = 0;
    skip_ws(j);
    if (!more(j)) return j->failed ? j->rc : MINLSH_JSONL_BLANK;
    if (*j->p != '{') {
        snprintf(j->err, j->errcap, "not a JSON object");
        return MINLSH_E_FORMAT;
    }
    j->p++;
    skip_ws(j);
    if (more(j) && *j->p == '}') j->p++;
    else {
        for (;;) {
            skip_ws(j);
            if (parse_member(j, id_field, text_field, text, ms) != 0) return j->rc;
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
            return j->rc;
        }
    }
    skip_ws(j);
    if (more(j)) fail(j, "text after the object");
    if (j->failed) return j->rc;
    return check_fields(j, ms, id_field, text_field) == 0 ? MINLSH_OK : j->rc;
}

/* ---- the API ------------------------------------------------------------ */

static void no_message(char *msg, size_t msgcap) {
    if (msg != NULL && msgcap > 0) msg[0] = '\0';
}

/* The parse of one held line into text (cap bytes, which need not be more
 * than len); the id's place in the line. */
static int parse_held(const void *line, size_t len, const char *id_field, const char *text_field,
                      uint8_t *text, size_t cap, size_t *text_len, size_t *id_offset,
                      size_t *id_len, char *msg, size_t msgcap) {
    char scratch[8];
    jparser j;
    jbuf out;
    member_state ms;
    int rc;
    if (msg == NULL || msgcap == 0) {
        msg = scratch;
        msgcap = sizeof scratch;
    }
    msg[0] = '\0';
    jp_init(&j, line, len, msg, msgcap);
    out.p = text;
    out.n = 0;
    out.cap = cap;
    out.grow = 0;
    out.expect = NULL;
    rc = extract(&j, id_field, text_field, &out, &ms);
    *text_len = rc == MINLSH_OK ? out.n : 0;
    *id_offset = rc == MINLSH_OK ? (size_t)ms.id_at : 0;
    *id_len = rc == MINLSH_OK ? ms.id_len : 0;
    return rc;
}

int minlsh_jsonl_parse_line(const void *line, size_t len, const char *id_field,
                            const char *text_field, void *text, size_t cap, size_t *text_len,
                            size_t *id_offset, size_t *id_len, char *msg, size_t msgcap) {
    int rc;
    if ((line == NULL && len > 0) || id_field == NULL || text_field == NULL ||
        (text == NULL && cap > 0) || text_len == NULL || id_offset == NULL || id_len == NULL) {
        no_message(msg, msgcap);
        return MINLSH_E_NULL;
    }
    rc = parse_held(line != NULL ? line : "", len, id_field, text_field, text, cap, text_len,
                    id_offset, id_len, msg, msgcap);
    if (rc != MINLSH_E_FORMAT) no_message(msg, msgcap);
    return rc;
}

/* 1 if the line holds only spaces, tabs and carriage returns. */
static int blank_line(const unsigned char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

int minlsh_jsonl_parse_block(const void *block, size_t len, uint32_t flags,
                             const char *id_field, const char *text_field, void *texts,
                             size_t texts_cap, uint64_t *text_offsets, uint64_t *id_offsets,
                             uint64_t *id_lengths, uint64_t *line_offsets, int32_t *status,
                             size_t cap, size_t *n_out) {
    const unsigned char *p = block, *end;
    size_t n = 0, used = 0;
    int rc = MINLSH_OK;
    if (n_out == NULL) return MINLSH_E_NULL;
    *n_out = 0;
    if ((block == NULL && len > 0) || id_field == NULL || text_field == NULL ||
        (texts == NULL && texts_cap > 0) || text_offsets == NULL ||
        (cap > 0 && (id_offsets == NULL || id_lengths == NULL || status == NULL)))
        return MINLSH_E_NULL;
    if (flags & ~(uint32_t)MINLSH_JSONL_INPUT_START) return MINLSH_E_PARAM;
    text_offsets[0] = 0;
    if (len == 0) return MINLSH_OK;
    end = p + len;
    if ((flags & MINLSH_JSONL_INPUT_START) && len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a byte-order mark, as the command leaves it out */
    while (p < end) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        const unsigned char *next = nl != NULL ? nl + 1 : end;
        size_t l = (size_t)((nl != NULL ? nl : end) - p);
        size_t tl = 0, io = 0, il = 0;
        int st;
        if (l > 0 && p[l - 1] == '\r') l--;
        if (blank_line(p, l)) {
            p = next;
            continue;
        }
        if (n >= cap) {
            rc = MINLSH_E_BUFSIZE;
            n++;
            p = next;
            continue;
        }
        st = parse_held(p, l, id_field, text_field, (uint8_t *)texts + used, texts_cap - used,
                        &tl, &io, &il, NULL, 0);
        if (st != MINLSH_OK && st != MINLSH_E_FORMAT) return st; /* BUFSIZE: texts too short */
        used += tl;
        text_offsets[n + 1] = used;
        id_offsets[n] = st == MINLSH_OK ? (uint64_t)(p - (const unsigned char *)block) + io : 0;
        id_lengths[n] = il;
        if (line_offsets != NULL) line_offsets[n] = (uint64_t)(p - (const unsigned char *)block);
        status[n] = st;
        n++;
        p = next;
    }
    *n_out = n;
    return rc;
}

int minlsh_jsonl_parse_stream(const minlsh_jsonl_source *src, const char *id_field,
                              const char *text_field, char *msg, size_t msgcap,
                              const minlsh_allocator *alloc) {
    char scratch[8];
    jparser j;
    jbuf window = {NULL, 0, 0, 1, NULL}, id = {NULL, 0, 0, 1, NULL},
         decoded = {NULL, 0, 0, 1, NULL};
    member_state ms;
    minlsh_allocator al;
    int rc;
    if (src == NULL || src->next == NULL || src->text == NULL || src->id == NULL ||
        id_field == NULL || text_field == NULL) {
        no_message(msg, msgcap);
        return MINLSH_E_NULL;
    }
    if (minlsh__alloc_setup(&al, alloc) != 0) {
        no_message(msg, msgcap);
        return MINLSH_E_PARAM;
    }
    if (msg == NULL || msgcap == 0) {
        msg = scratch;
        msgcap = sizeof scratch;
    }
    msg[0] = '\0';
    jp_init(&j, NULL, 0, msg, msgcap);
    j.alloc = &al;
    j.src = src;
    j.src_done = 0;
    j.window = &window;
    j.id = &id;
    rc = minlsh__reserve(&al, (void **)&window.p, &window.cap, 0, JSON_TEXT_PIECE, 1);
    if (rc == 0) rc = extract(&j, id_field, text_field, &decoded, &ms);
    if (rc == MINLSH_OK) {
        int got = src->id(src->ctx, (const char *)id.p, id.n);
        if (got != 0) rc = got;
    }
    if (rc != MINLSH_E_FORMAT) msg[0] = '\0';
    jb_free(&al, &window);
    jb_free(&al, &id);
    jb_free(&al, &decoded);
    return rc;
}

int minlsh_json_string_decode(const void *token, size_t len, void *out, size_t cap,
                              size_t *n_out) {
    char err[8];
    jparser j;
    jbuf b;
    int rc;
    if (n_out == NULL) return MINLSH_E_NULL;
    *n_out = 0;
    if ((token == NULL && len > 0) || (out == NULL && cap > 0)) return MINLSH_E_NULL;
    if (len < 2 || ((const char *)token)[0] != '"') return MINLSH_E_FORMAT;
    jp_init(&j, token, len, err, sizeof err);
    b.p = out;
    b.n = 0;
    b.cap = cap;
    b.grow = 0;
    b.expect = NULL;
    rc = parse_string(&j, &b);
    if (rc != 0) return j.rc;
    if (j.p != j.end) return MINLSH_E_FORMAT;
    *n_out = b.n;
    return MINLSH_OK;
}
