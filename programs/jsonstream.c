/*
 * jsonstream.c: a JSON Lines line too long to hold, read as it streams.
 *
 * The pipeline holds a line in memory up to a batch's byte budget. The rest
 * of a longer one is parsed as it is read, by the library's JSON Lines
 * reader (json_extract_stream, over minlsh_jsonl_parse_stream): the text
 * field's decoded bytes go straight into a shinglestream, the id is kept,
 * other fields are checked and skipped, and the record is copied to a
 * temporary file when the subcommand copies
 * records (dedup --output kept). So such a line costs the parser's window,
 * its id and its distinct shingles, whatever its length, and gives the
 * fields, fingerprint and messages the held line would have given.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The line as the parser sees it: the bytes held so far (head), then the
 * stream up to the newline, with the byte-order mark and line end left
 * out as pipeline.c leaves them out of a held line. */
typedef struct line_source {
    jsonl_streamer *ls;
    cli_stream *s;
    unsigned char *chunk;
    size_t chunk_cap;
    const unsigned char *head;
    size_t head_n;
    const unsigned char *p, *end; /* the chunk's bytes not yet given */
    uint64_t bytes;               /* of the line read so far, newline included */
    uint64_t limit;               /* --max-doc-size (0: none) */
    uint64_t record_n;            /* bytes copied to the record file */
    int cr;     /* a carriage return held back: it is dropped if the line ends */
    int ended;  /* the newline or the end of the input was reached */
    int failed; /* the stream failed (s->err) */
} line_source;

/* A temporary file failed: the run cannot go on. */
CLI_NORETURN static void die_tmp(const cli_opts *o, int err) {
    const char *dir = o->tmpdir != NULL ? o->tmpdir : getenv("TMPDIR");
    cli_msg("%s: cannot write temporary files: %s; --tmpdir chooses another directory",
            dir != NULL && dir[0] ? dir : "/tmp",
            err != 0 ? cli_dir_write_error(err) : "a read or write failed");
    exit(CLI_FAILED);
}

/* Give the parser a piece, copying it to the record file if asked. */
static int give(line_source *src, const unsigned char *p, size_t n,
                const unsigned char **piece, size_t *n_out) {
    jsonl_streamer *ls = src->ls;
    if (ls->keep_records && minlsh_scratch_append(NULL, ls->record, p, n) != 0)
        die_tmp(ls->o, minlsh_scratch_errno(ls->record));
    src->record_n += n;
    *piece = p;
    *n_out = n;
    return 1;
}

/* More of the chunk: 1, or 0 at the end of the input (ended), -1 if the
 * stream failed. */
static int read_more(line_source *src) {
    ssize_t got = stream_read(src->s, src->chunk, src->chunk_cap);
    if (got < 0) {
        src->failed = 1;
        return -1;
    }
    src->p = src->chunk;
    src->end = src->chunk + got;
    if (got == 0) src->ended = 1;
    return got > 0;
}

/* json_stream's next: the line's next piece. */
static int source_next(void *ctx, const unsigned char **piece, size_t *n) {
    static const unsigned char cr = '\r';
    line_source *src = ctx;
    for (;;) {
        const unsigned char *nl;
        size_t len;
        if (src->head_n > 0) {
            len = src->head_n;
            src->head_n = 0;
            src->cr = src->head[len - 1] == '\r';
            if (len > (size_t)src->cr) return give(src, src->head, len - src->cr, piece, n);
            continue;
        }
        if (src->ended) return 0;
        if (src->p == src->end) {
            int got = read_more(src);
            if (got < 0) return -1;
            if (got == 0) return 0; /* a carriage return held back ends the line */
        }
        nl = memchr(src->p, '\n', (size_t)(src->end - src->p));
        len = (size_t)((nl != NULL ? nl : src->end) - src->p);
        if (src->cr && (len > 0 || nl == NULL)) {
            /* The one held back is not the line's end: give it first. */
            src->cr = 0;
            return give(src, &cr, 1, piece, n);
        }
        src->cr = 0;
        src->bytes += len + (nl != NULL);
        if (src->limit != 0 && src->bytes > src->limit) {
            src->p = nl != NULL ? nl + 1 : src->end;
            src->ended = nl != NULL;
            return -1;
        }
        if (len > 0 && src->p[len - 1] == '\r') {
            /* Before a newline it is the line end; at the end of the chunk
             * it may be. */
            src->cr = nl == NULL;
            len--;
        }
        {
            const unsigned char *from = src->p;
            src->p = nl != NULL ? nl + 1 : src->end;
            src->ended = nl != NULL;
            if (len > 0) return give(src, from, len, piece, n);
        }
    }
}

/* Past an error or --max-doc-size: the rest of the line is only counted. */
static void skip_rest(line_source *src) {
    while (!src->ended && !src->failed) {
        const unsigned char *nl;
        if (src->p == src->end && read_more(src) <= 0) break;
        nl = memchr(src->p, '\n', (size_t)(src->end - src->p));
        src->bytes += (uint64_t)((nl != NULL ? nl + 1 : src->end) - src->p);
        src->p = nl != NULL ? nl + 1 : src->end;
        src->ended = nl != NULL;
    }
}

static int text_feed(void *ctx, const char *p, size_t n) {
    jsonl_streamer *ls = ((line_source *)ctx)->ls;
    ls->text_bytes += n;
    return minlsh_shinglestream_feed(ls->stream, p, n);
}

static void text_restart(void *ctx) {
    jsonl_streamer *ls = ((line_source *)ctx)->ls;
    ls->text_bytes = 0;
    minlsh_shinglestream_reset(ls->stream);
}

void jsonl_streamer_init(jsonl_streamer *ls, const cli_opts *o, const minlsh_shingler *sh,
                         int keep_records) {
    memset(ls, 0, sizeof *ls);
    ls->o = o;
    ls->shingler = sh;
    ls->keep_records = keep_records;
    ls->js.next = source_next;
    ls->js.text = text_feed;
    ls->js.restart = text_restart;
}

void jsonl_read_long_line(jsonl_streamer *ls, jsonl_long_line *out, const char *head,
                          size_t head_n, int first_line, cli_stream *s,
                          unsigned char *chunk, size_t chunk_cap,
                          const unsigned char **rest, const unsigned char **rest_end) {
    line_source src;
    int rc;
    memset(out, 0, sizeof *out);
    memset(&src, 0, sizeof src);
    if (ls->stream == NULL) {
        rc = minlsh_shinglestream_new(&ls->stream, ls->shingler, NULL);
        if (rc != 0) cli_die_lib("shingler", rc);
    }
    minlsh_shinglestream_reset(ls->stream);
    ls->text_bytes = 0;
    if (ls->keep_records && ls->record == NULL &&
        (rc = minlsh_scratch_open(&ls->record, ls->o->tmpdir, NULL)) != 0) {
        if (rc == MINLSH_E_IO) die_tmp(ls->o, errno);
        cli_die_lib("temporary file", rc);
    }
    src.ls = ls;
    src.s = s;
    src.chunk = chunk;
    src.chunk_cap = chunk_cap;
    src.p = src.end = chunk;
    src.bytes = head_n;
    src.limit = ls->o->max_doc_size;
    if (first_line && head_n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0) {
        head += 3;
        head_n -= 3;
    }
    src.head = (const unsigned char *)head;
    src.head_n = head_n;
    out->record_at = minlsh_scratch_size(ls->record);
    ls->js.ctx = &src;
    rc = json_extract_stream(&ls->js, ls->o->id_field, ls->o->text_field, out->msg,
                             sizeof out->msg);
    ls->js.ctx = NULL;
    if (rc == JSON_STOPPED && ls->js.text_rc != 0) cli_die_lib("shingling", ls->js.text_rc);
    skip_rest(&src);
    out->bytes = src.bytes;
    if (src.failed) out->status = JSONL_LINE_UNREADABLE;
    else if (src.limit != 0 && src.bytes > src.limit) out->status = JSONL_LINE_TOOBIG;
    else if (rc == JSON_BLANK) out->status = JSONL_LINE_BLANK;
    else if (rc != 0) out->status = JSONL_LINE_INVALID;
    else {
        out->status = JSONL_LINE_OK;
        out->text_bytes = ls->text_bytes;
        out->record_n = src.record_n;
    }
    if (out->status != JSONL_LINE_OK) minlsh_shinglestream_reset(ls->stream);
    *rest = src.p;
    *rest_end = src.end;
}

int doc_record_copy(minlsh_scratch *to, const doc_view *d, uint64_t *at) {
    unsigned char buf[16384];
    uint64_t done = 0;
    int rc = minlsh_scratch_append(at, to, NULL, 0);
    while (rc == 0 && done < d->record_n) {
        size_t n = d->record_n - done < sizeof buf ? (size_t)(d->record_n - done) : sizeof buf;
        rc = minlsh_scratch_read(d->record_file, d->record_at + done, buf, n);
        if (rc == 0) rc = minlsh_scratch_append(NULL, to, buf, n);
        done += n;
    }
    return rc;
}

void jsonl_streamer_records_done(jsonl_streamer *ls) {
    minlsh_scratch_free(ls->record);
    ls->record = NULL;
}

void jsonl_streamer_free(jsonl_streamer *ls) {
    minlsh_shinglestream_free(ls->stream);
    ls->stream = NULL;
    json_stream_free(&ls->js);
    minlsh_scratch_free(ls->record);
    ls->record = NULL;
}
