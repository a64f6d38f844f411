/*
 * json.c: JSON Lines input through the library's reader
 * (minlsh_jsonl_parse_line and minlsh_jsonl_parse_stream, lib/jsonl/), in
 * the command's buffers and return values, and JSON string escaping for
 * output.
 */
#include "cli.h"

#include <string.h>

int json_extract(const char *line, size_t len, const char *id_field,
                 const char *text_field, json_record *rec, cli_buf *text,
                 char *err, size_t errcap) {
    size_t text_len = 0, id_off = 0, id_len = 0;
    int rc;
    buf_clear(text);
    buf_reserve(text, len);
    rc = minlsh_jsonl_parse_line(line, len, id_field, text_field, text->p, len, &text_len,
                                 &id_off, &id_len, err, errcap);
    rec->id = rc == MINLSH_OK ? line + id_off : NULL;
    rec->id_len = id_len;
    text->n = text_len;
    text->p[text_len] = '\0';
    if (rc == MINLSH_OK) return 0;
    if (rc == MINLSH_JSONL_BLANK) snprintf(err, errcap, "not a JSON object");
    else if (rc != MINLSH_E_FORMAT) cli_die_lib("reading JSON", rc);
    return -1;
}

/* The library's callbacks on the command's: a stop is noted in s. */
static int stream_next(void *ctx, const unsigned char **piece, size_t *n) {
    json_stream *s = ctx;
    int got = s->next(s->ctx, piece, n);
    if (got < 0) {
        s->stopped = 1;
        return MINLSH_E_IO;
    }
    return got;
}

static int stream_text(void *ctx, const char *p, size_t n) {
    json_stream *s = ctx;
    int rc = s->text(s->ctx, p, n);
    if (rc != 0) {
        s->text_rc = rc;
        s->stopped = 1;
        return rc < 0 ? rc : MINLSH_E_STATE;
    }
    return 0;
}

static void stream_restart(void *ctx) {
    json_stream *s = ctx;
    s->restart(s->ctx);
}

static int stream_id(void *ctx, const char *p, size_t n) {
    json_stream *s = ctx;
    buf_clear(&s->id);
    buf_add(&s->id, p, n);
    return 0;
}

int json_extract_stream(json_stream *s, const char *id_field, const char *text_field,
                        char *err, size_t errcap) {
    minlsh_jsonl_source src;
    int rc;
    src.next = stream_next;
    src.text = stream_text;
    src.restart = stream_restart;
    src.id = stream_id;
    src.ctx = s;
    buf_clear(&s->id);
    s->stopped = 0;
    s->text_rc = 0;
    rc = minlsh_jsonl_parse_stream(&src, id_field, text_field, err, errcap, NULL);
    if (s->stopped) return JSON_STOPPED;
    if (rc == MINLSH_OK) return 0;
    if (rc == MINLSH_JSONL_BLANK) return JSON_BLANK;
    if (rc != MINLSH_E_FORMAT) cli_die_lib("reading JSON", rc);
    return -1;
}

void json_stream_free(json_stream *s) { buf_free(&s->id); }

void json_decode_string(cli_buf *out, const char *tok, size_t len) {
    size_t n = 0;
    buf_reserve(out, len);
    if (minlsh_json_string_decode(tok, len, out->p + out->n, len, &n) != MINLSH_OK) n = 0;
    out->n += n;
    out->p[out->n] = '\0';
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
