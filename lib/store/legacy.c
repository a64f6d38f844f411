/*
 * Stores made before the store's own metadata: index files written by the
 * command's 'index create' / 'index add' up to 0.2 (docs/format.md, "Store",
 * "Older command files"), whose metadata is text:
 *
 *   minlsh-cli-index 1
 *   key=value lines (shingle, normalize, threshold; the others are
 *   informative: the index header holds k, seed, scheme, b and r)
 *   an empty line
 *   one name per line, name i being document id i
 *
 * Read here so that every front end opens them; the journal beside one
 * holds inserts whose data is the name, as a store's does. The first
 * compaction writes the store's own metadata.
 */
#include "store.h"

#include <stdlib.h>

#define MINLSH__LEGACY_MAGIC "minlsh-cli-index 1\n"
#define MINLSH__LEGACY_MAGIC_BYTES 19

int minlsh__store_legacy_is(const uint8_t *data, size_t len) {
    return len >= MINLSH__LEGACY_MAGIC_BYTES &&
           memcmp(data, MINLSH__LEGACY_MAGIC, MINLSH__LEGACY_MAGIC_BYTES) == 0;
}

/* 1 if [s, s + n) is the NUL-free text word. */
static int minlsh__legacy_eq(const uint8_t *s, size_t n, const char *word) {
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* A decimal number of at most 9 digits in [s, s + n); -1 if it is not. */
static long minlsh__legacy_uint(const uint8_t *s, size_t n) {
    long v = 0;
    size_t i;
    if (n == 0 || n > 9) return -1;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* "UNIT:K" ("stopword" alone: k 3), as the command wrote it. */
static int minlsh__legacy_shingle(const uint8_t *v, size_t n, minlsh__store_config *cfg) {
    static const struct {
        const char *name;
        uint32_t unit;
    } units[] = {{"word", MINLSH_UNIT_WORD},
                 {"char", MINLSH_UNIT_BYTE},
                 {"byte", MINLSH_UNIT_BYTE},
                 {"codepoint", MINLSH_UNIT_CODEPOINT},
                 {"stopword", MINLSH_UNIT_STOPWORD}};
    const uint8_t *colon = (const uint8_t *)memchr(v, ':', n);
    size_t name_n = colon != NULL ? (size_t)(colon - v) : n, i;
    long k;
    for (i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!minlsh__legacy_eq(v, name_n, units[i].name)) continue;
        cfg->unit = units[i].unit;
        if (colon == NULL) {
            if (units[i].unit != MINLSH_UNIT_STOPWORD) return MINLSH_E_CORRUPT;
            cfg->shingle_k = 3;
            return 0;
        }
        k = minlsh__legacy_uint(colon + 1, n - name_n - 1);
        if (k < 1 || k > MINLSH_SHINGLE_K_MAX) return MINLSH_E_CORRUPT;
        cfg->shingle_k = (uint32_t)k;
        return 0;
    }
    return MINLSH_E_CORRUPT;
}

/* "0.8": digits, one point, digits; the command wrote the shortest text
 * that reads back as the same double. */
static int minlsh__legacy_threshold(const uint8_t *v, size_t n, double *out) {
    char text[40], *end;
    size_t i;
    if (n == 0 || n >= sizeof text) return MINLSH_E_CORRUPT;
    for (i = 0; i < n; i++)
        if (!((v[i] >= '0' && v[i] <= '9') || v[i] == '.' || v[i] == 'e' || v[i] == 'E' ||
              v[i] == '-' || v[i] == '+'))
            return MINLSH_E_CORRUPT;
    memcpy(text, v, n);
    text[n] = '\0';
    *out = strtod(text, &end);
    if (*end != '\0' || !(*out > 0.0 && *out < 1.0)) return MINLSH_E_CORRUPT;
    return 0;
}

/* The header; *names_at: where the names begin, *docs: how many. */
static int minlsh__legacy_header(const uint8_t *data, size_t len, minlsh__store_config *cfg,
                                 size_t *names_at, uint64_t *docs) {
    size_t pos = MINLSH__LEGACY_MAGIC_BYTES;
    int seen = 0, rc;
    memset(cfg, 0, sizeof *cfg);
    cfg->legacy = 1;
    *docs = 0;
    for (;;) {
        const uint8_t *line = data + pos, *nl, *eq;
        size_t n, kn;
        if (pos >= len) return MINLSH_E_CORRUPT; /* no empty line */
        nl = (const uint8_t *)memchr(line, '\n', len - pos);
        if (nl == NULL) return MINLSH_E_CORRUPT;
        n = (size_t)(nl - line);
        pos += n + 1;
        if (n == 0) break;
        eq = (const uint8_t *)memchr(line, '=', n);
        if (eq == NULL) return MINLSH_E_CORRUPT;
        kn = (size_t)(eq - line);
        rc = 0;
        if (minlsh__legacy_eq(line, kn, "shingle")) {
            seen |= 1;
            rc = minlsh__legacy_shingle(eq + 1, n - kn - 1, cfg);
        } else if (minlsh__legacy_eq(line, kn, "normalize")) {
            seen |= 2;
            /* the command's option names (shingle/flagnames.c) */
            rc = minlsh_norm_flags_parse(&cfg->norm, (const char *)(eq + 1), n - kn - 1) == 0
                     ? 0
                     : MINLSH_E_CORRUPT;
        } else if (minlsh__legacy_eq(line, kn, "threshold")) {
            seen |= 4;
            rc = minlsh__legacy_threshold(eq + 1, n - kn - 1, &cfg->threshold);
        } else if (minlsh__legacy_eq(line, kn, "documents")) {
            const uint8_t *v = eq + 1;
            size_t i;
            seen |= 8;
            if (n - kn - 1 == 0 || n - kn - 1 > 15) return MINLSH_E_CORRUPT;
            for (i = 0; i < n - kn - 1; i++) {
                if (v[i] < '0' || v[i] > '9') return MINLSH_E_CORRUPT;
                *docs = *docs * 10 + (uint64_t)(v[i] - '0');
            }
        }
        if (rc != 0) return rc;
    }
    if (seen != 15) return MINLSH_E_CORRUPT;
    *names_at = pos;
    return 0;
}

int minlsh__store_legacy_config(const uint8_t *data, size_t len, minlsh__store_config *cfg) {
    size_t at;
    uint64_t docs;
    if (!minlsh__store_legacy_is(data, len)) return MINLSH_E_FORMAT;
    if (memchr(data, '\0', len) != NULL) return MINLSH_E_CORRUPT;
    return minlsh__legacy_header(data, len, cfg, &at, &docs);
}

int minlsh__store_legacy_docs(minlsh_store *s, const uint8_t *data, size_t len) {
    minlsh__store_config cfg;
    size_t pos;
    uint64_t docs, id;
    int rc = minlsh__legacy_header(data, len, &cfg, &pos, &docs);
    if (rc != 0) return rc;
    if (docs > (len - pos) / 2) return MINLSH_E_CORRUPT; /* a name is 2 bytes at least */
    if (docs > 0 && (rc = minlsh__store_docs_presize(s, docs - 1, len - pos - docs)) != 0)
        return rc;
    for (id = 0; pos < len; id++) {
        const uint8_t *nl = (const uint8_t *)memchr(data + pos, '\n', len - pos);
        size_t n;
        if (nl == NULL || id >= docs) return MINLSH_E_CORRUPT;
        n = (size_t)(nl - (data + pos));
        /* Every name is a JSON token: never empty, and unique. */
        if (n == 0) return MINLSH_E_CORRUPT;
        rc = minlsh__store_doc_load(s, id, data + pos, n, MINLSH__STORE_NO_SET);
        if (rc != 0) return rc;
        pos += n + 1;
    }
    if (id != docs) return MINLSH_E_CORRUPT;
    /* The command's files were written by a program of its own, not the
     * store: their names are checked as they are read. */
    return minlsh__store_names_check(s);
}
