/*
 * stream.c: an input as a stream of bytes, whatever its compression.
 *
 * The first bytes decide, never the file name: gzip (1f 8b) and zstd
 * (28 b5 2f fd, or a skippable frame 5? 2a 4d 18) are decompressed as they
 * are read, one buffer at a time, so memory does not grow with the input;
 * anything else is passed through as it is. Concatenated gzip members and
 * zstd frames read as one stream, as gzip -d and zstd -d see them. Data that
 * ends inside a member or frame is "truncated", data the decoder rejects is
 * "corrupt"; both are errors, with the position in the compressed input.
 *
 * A stream is reused from one input to the next (one per worker), so the
 * buffers and decoder states are allocated once.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define STREAM_IN_BYTES (64u << 10)

enum { KIND_PLAIN, KIND_GZIP, KIND_ZSTD };

const char *stream_kind_name(const cli_stream *s) {
    return s->kind == KIND_GZIP ? "gzip" : s->kind == KIND_ZSTD ? "zstd" : "plain";
}

static int fail(cli_stream *s, const char *fmt, const char *a) {
    snprintf(s->err, sizeof s->err, fmt, a);
    s->failed = 1;
    return -1;
}

/* Read the next raw bytes into the input buffer (when it is used up).
 * Returns the number of bytes now available, 0 at the end, -1 on error. */
static ssize_t fill(cli_stream *s) {
    ssize_t got;
    if (s->in_pos < s->in_len) return (ssize_t)(s->in_len - s->in_pos);
    if (s->eof) return 0;
    do got = read(s->fd, s->in, STREAM_IN_BYTES);
    while (got < 0 && errno == EINTR);
    if (got < 0) return fail(s, "read error: %s", strerror(errno));
    if (got == 0) s->eof = 1;
    s->in_pos = 0;
    s->in_len = (size_t)got;
    s->raw_bytes += (uint64_t)got;
    return got;
}

static int is_zstd(const unsigned char *p, size_t n) {
    if (n < 4) return 0;
    if (p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) return 1;
    return (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18;
}

int stream_open(cli_stream *s, const char *path, int is_stdin) {
    s->fd = is_stdin ? 0 : open(path, O_RDONLY);
    s->own_fd = !is_stdin;
    s->kind = KIND_PLAIN;
    s->in_pos = s->in_len = 0;
    s->eof = s->failed = s->ended = s->pending = 0;
    s->raw_bytes = 0;
    s->err[0] = '\0';
    if (s->fd < 0) {
        s->own_fd = 0;
        return fail(s, "cannot open: %s", strerror(errno));
    }
    if (s->in == NULL) s->in = xmalloc(STREAM_IN_BYTES);
    /* The magic bytes: read until there are 4 (a pipe may give fewer). */
    while (s->in_len < 4 && !s->eof) {
        ssize_t got;
        do got = read(s->fd, s->in + s->in_len, STREAM_IN_BYTES - s->in_len);
        while (got < 0 && errno == EINTR);
        if (got < 0) return fail(s, "read error: %s", strerror(errno));
        if (got == 0) s->eof = 1;
        s->in_len += (size_t)got;
        s->raw_bytes += (uint64_t)got;
    }
    if (s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b) {
        z_stream *z = s->gz;
        if (z == NULL) {
            z = s->gz = xcalloc(1, sizeof *z);
            /* 16 + 15: gzip wrapper only, the largest window. */
            if (inflateInit2(z, 16 + MAX_WBITS) != Z_OK) cli_die_nomem();
        } else if (inflateReset(z) != Z_OK)
            cli_die_nomem();
        s->kind = KIND_GZIP;
    } else if (is_zstd(s->in, s->in_len)) {
        if (s->zd == NULL && (s->zd = ZSTD_createDCtx()) == NULL) cli_die_nomem();
        ZSTD_DCtx_reset(s->zd, ZSTD_reset_session_only);
        s->kind = KIND_ZSTD;
        s->zret = 1;
    }
    return 0;
}

static ssize_t read_plain(cli_stream *s, void *buf, size_t n) {
    ssize_t got;
    if (s->in_pos < s->in_len) {
        size_t k = s->in_len - s->in_pos < n ? s->in_len - s->in_pos : n;
        memcpy(buf, s->in + s->in_pos, k);
        s->in_pos += k;
        return (ssize_t)k;
    }
    if (s->eof) return 0;
    do got = read(s->fd, buf, n);
    while (got < 0 && errno == EINTR);
    if (got < 0) return fail(s, "read error: %s", strerror(errno));
    if (got == 0) s->eof = 1;
    s->raw_bytes += (uint64_t)got;
    return got;
}

static int truncated(cli_stream *s) {
    snprintf(s->err, sizeof s->err,
             "truncated %s data: the input ends after %llu bytes, inside a %s",
             stream_kind_name(s), (unsigned long long)s->raw_bytes,
             s->kind == KIND_GZIP ? "member" : "frame");
    s->failed = 1;
    return -1;
}

static int corrupt(cli_stream *s, const char *why) {
    snprintf(s->err, sizeof s->err, "corrupt %s data: %s", stream_kind_name(s), why);
    s->failed = 1;
    return -1;
}

static ssize_t read_gzip(cli_stream *s, void *buf, size_t n) {
    z_stream *z = s->gz;
    if (n > UINT_MAX) n = UINT_MAX;
    z->next_out = buf;
    z->avail_out = (uInt)n;
    for (;;) {
        int rc;
        if (s->in_pos == s->in_len && !s->pending) {
            ssize_t got = fill(s);
            if (got < 0) return -1;
            if (got == 0) {
                if (s->ended) return (ssize_t)(n - z->avail_out);
                return truncated(s);
            }
        }
        if (s->ended) {
            /* Another member follows the one that ended. */
            if (inflateReset(z) != Z_OK) cli_die_nomem();
            s->ended = 0;
        }
        z->next_in = s->in + s->in_pos;
        z->avail_in = (uInt)(s->in_len - s->in_pos);
        rc = inflate(z, Z_NO_FLUSH);
        s->in_pos = s->in_len - z->avail_in;
        s->pending = z->avail_out == 0;
        if (rc == Z_STREAM_END) {
            s->ended = 1;
            s->pending = 0;
        } else if (rc == Z_MEM_ERROR)
            cli_die_nomem();
        else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR)
            return corrupt(s, z->msg ? z->msg : "invalid data");
        if (z->avail_out < n) return (ssize_t)(n - z->avail_out);
    }
}

static ssize_t read_zstd(cli_stream *s, void *buf, size_t n) {
    ZSTD_outBuffer out;
    out.dst = buf;
    out.size = n;
    out.pos = 0;
    for (;;) {
        ZSTD_inBuffer in;
        size_t r;
        if (s->in_pos == s->in_len && !s->pending) {
            ssize_t got = fill(s);
            if (got < 0) return -1;
            if (got == 0) {
                if (s->zret == 0) return 0;
                return truncated(s);
            }
        }
        in.src = s->in;
        in.size = s->in_len;
        in.pos = s->in_pos;
        r = ZSTD_decompressStream(s->zd, &out, &in);
        s->in_pos = in.pos;
        if (ZSTD_isError(r)) {
            if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation) cli_die_nomem();
            return corrupt(s, ZSTD_getErrorName(r));
        }
        s->zret = r;
        /* A full buffer may hide more output, unless the frame has ended
         * (0: decoded and flushed): called again with no input, the decoder
         * would start on a next frame and ask for its header, which reads as
         * truncated data when the input ends there. */
        s->pending = out.pos == out.size && r != 0;
        if (out.pos > 0) return (ssize_t)out.pos;
    }
}

ssize_t stream_read(cli_stream *s, void *buf, size_t n) {
    if (s->failed) return -1;
    if (n == 0) return 0;
    switch (s->kind) {
    case KIND_GZIP: return read_gzip(s, buf, n);
    case KIND_ZSTD: return read_zstd(s, buf, n);
    default: return read_plain(s, buf, n);
    }
}

void stream_close(cli_stream *s) {
    if (s->own_fd) close(s->fd);
    s->own_fd = 0;
    s->fd = -1;
}

void stream_free(cli_stream *s) {
    stream_close(s);
    if (s->gz != NULL) {
        inflateEnd(s->gz);
        free(s->gz);
    }
    ZSTD_freeDCtx(s->zd);
    free(s->in);
    memset(s, 0, sizeof *s);
}
