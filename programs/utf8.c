/*
 * utf8.c: the command's one UTF-8 decoder, and what is built on it: the
 * validity check of a whole string, the incremental check over a stream of
 * chunks (files are read in pieces; a sequence may straddle two), and the
 * encoder the JSON reader uses for \u escapes.
 *
 * Valid means RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF),
 * nothing above U+10FFFF. The library has its own decoder for code-point
 * shingles but does not export it; the command uses only the public API.
 */
#include "cli.h"

#include <string.h>

int utf8_decode(const void *s, size_t n, uint32_t *cp) {
    const unsigned char *p = s;
    unsigned c, lo = 0x80, hi = 0xBF;
    uint32_t v;
    size_t need, i;
    if (n == 0) return UTF8_SHORT;
    c = p[0];
    if (c < 0x80) {
        if (cp) *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        v = c & 0x0F;
        if (c == 0xE0) lo = 0xA0; /* no overlongs */
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        v = c & 0x07;
        if (c == 0xF0) lo = 0x90; /* no overlongs */
        if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    } else
        return 0;
    for (i = 1; i <= need; i++) {
        if (i >= n) return UTF8_SHORT;
        if (p[i] < lo || p[i] > hi) return 0;
        v = (v << 6) | (p[i] & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    if (cp) *cp = v;
    return (int)need + 1;
}

size_t utf8_encode(uint32_t cp, char out[4]) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int utf8_valid(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int l = utf8_decode(s + i, n - i, NULL);
        if (l <= 0) return 0;
        i += (size_t)l;
    }
    return 1;
}

void utf8_check_init(utf8_check *u) { memset(u, 0, sizeof *u); }

static void check_failed(utf8_check *u) {
    u->bad = 1;
    u->bad_at = u->start;
}

void utf8_check_feed(utf8_check *u, const void *data, size_t n) {
    const unsigned char *p = data;
    size_t i = 0;
    int l;
    if (u->bad) return;
    /* First complete the sequence the previous chunk ended in. */
    while (u->npend > 0 && i < n) {
        u->pend[u->npend++] = p[i++];
        l = utf8_decode(u->pend, u->npend, NULL);
        if (l == 0) {
            check_failed(u);
            return;
        }
        if (l > 0) u->npend = 0;
    }
    while (i < n) {
        if (p[i] < 0x80) { /* ASCII runs, the common case */
            i++;
            continue;
        }
        l = utf8_decode(p + i, n - i, NULL);
        if (l > 0) {
            i += (size_t)l;
            continue;
        }
        u->start = u->pos + i;
        if (l == 0) {
            check_failed(u);
            return;
        }
        /* Cut short by the end of the chunk: keep it for the next one. */
        u->npend = (uint8_t)(n - i);
        memcpy(u->pend, p + i, n - i);
        i = n;
    }
    u->pos += n;
}

void utf8_check_end(utf8_check *u) {
    if (!u->bad && u->npend > 0) check_failed(u);
}
