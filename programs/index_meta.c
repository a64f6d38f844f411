/*
 * index_meta.c: the command's metadata in an index file (docs/cli.md,
 * "Index metadata format"). The library stores signatures, k, the seed,
 * (b, r) and the shingler's config id; the command keeps the rest in the
 * index's metadata blob, as text:
 *
 *   minlsh-cli-index 1          the magic and format version
 *   key=value                   shingle, normalize, key, threshold, num-perm,
 *   ...                         seed, verify, plan, documents
 *                               an empty line
 *   NAME                        one line per document, in id order: its name
 *   ...                         as a JSON string or number token
 *
 * The parser is strict: every line ends in a newline, every name is one
 * complete JSON token, names are unique and as many as `documents` says.
 * What is wrong is said in a message, so that a damaged index is told apart
 * from one that another program made.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define META_MAGIC "minlsh-cli-index 1"

void index_meta_build(cli_buf *b, const index_meta *m, uint32_t k, uint64_t seed) {
    char num[32];
    size_t i;
    buf_adds(b, META_MAGIC "\nshingle=");
    opts_describe_shingle(b, m->unit, m->shingle_k);
    buf_adds(b, "\nnormalize=");
    opts_describe_flags(b, m->flags);
    cli_format_double(num, m->threshold);
    buf_printf(b, "\nkey=%s\nthreshold=%s\nnum-perm=%u\nseed=%llu\n",
               m->custom_key ? "custom" : "default", num, (unsigned)k,
               (unsigned long long)seed);
    if (m->scheme != MINLSH_SCHEME_CLASSIC)
        buf_printf(b, "scheme=%s\n", opts_scheme_name(m->scheme));
    buf_printf(b, "verify=signature\nplan=%s\ndocuments=%zu\n\n", m->plan, m->names.n);
    for (i = 0; i < m->names.n; i++) {
        cli_name nm = names_get(&m->names, i);
        buf_add(b, nm.s, nm.n);
        buf_addc(b, '\n');
    }
}

/* The header keys that must be there, as bits of `seen`. */
enum { SEEN_SHINGLE = 1, SEEN_NORMALIZE = 2, SEEN_KEY = 4, SEEN_THRESHOLD = 8,
       SEEN_DOCUMENTS = 16, SEEN_ALL = 31 };
static const char *const required[] = {"shingle", "normalize", "key", "threshold",
                                       "documents"};

/* One "key=value" line of the header (NUL-terminated). 0, or -1 with err. */
static int meta_field(index_meta *m, const char *line, size_t *docs, int *seen,
                      char *err, size_t errcap) {
    const char *eq = strchr(line, '=');
    const char *v = eq ? eq + 1 : "";
    size_t kl = eq ? (size_t)(eq - line) : 0;
    char *end;
    int bad = 0;
#define KEY_IS(s) (kl == strlen(s) && strncmp(line, s, kl) == 0)
    if (eq == NULL) {
        snprintf(err, errcap, "header line '%.40s' is not key=value", line);
        return -1;
    }
    if (KEY_IS("shingle")) {
        *seen |= SEEN_SHINGLE;
        bad = opts_parse_shingle(v, &m->unit, &m->shingle_k) != 0;
    } else if (KEY_IS("normalize")) {
        *seen |= SEEN_NORMALIZE;
        bad = opts_parse_flags(v, &m->flags) != 0;
    } else if (KEY_IS("key")) {
        *seen |= SEEN_KEY;
        m->custom_key = strcmp(v, "custom") == 0;
        bad = !m->custom_key && strcmp(v, "default") != 0;
    } else if (KEY_IS("threshold")) {
        *seen |= SEEN_THRESHOLD;
        m->threshold = strtod(v, &end);
        bad = *v == '\0' || *end != '\0' || !(m->threshold > 0 && m->threshold < 1);
    } else if (KEY_IS("documents")) {
        unsigned long long n;
        *seen |= SEEN_DOCUMENTS;
        n = strtoull(v, &end, 10);
        bad = *v < '0' || *v > '9' || *end != '\0' || n > SIZE_MAX;
        *docs = (size_t)n;
    } else if (KEY_IS("scheme")) {
        bad = opts_parse_scheme(v, &m->scheme) != 0;
    } else if (KEY_IS("plan"))
        snprintf(m->plan, sizeof m->plan, "%s", v);
    /* other keys are informative */
    if (bad) {
        snprintf(err, errcap, "bad value '%.40s' for %.*s", v, (int)kl, line);
        return -1;
    }
    return 0;
#undef KEY_IS
}

int index_meta_parse(index_meta *m, const char *data, size_t n, char *err,
                     size_t errcap) {
    return index_meta_parse_names(m, data, n, 1, err, errcap);
}

int index_meta_parse_names(index_meta *m, const char *data, size_t n, int searchable,
                           char *err, size_t errcap) {
    const char *p = data, *end = data + n, *nl;
    cli_buf line = {NULL, 0, 0};
    size_t docs = 0, lineno = 0, i;
    int seen = 0, rc = -1;
    memset(m, 0, sizeof *m);
    err[0] = '\0';
    if (n < sizeof META_MAGIC || memcmp(data, META_MAGIC "\n", sizeof META_MAGIC) != 0)
        return 1;
    if (memchr(data, '\0', n) != NULL) {
        snprintf(err, errcap, "a NUL byte at byte %zu",
                 (size_t)((const char *)memchr(data, '\0', n) - data));
        return -1;
    }
    p += sizeof META_MAGIC;
    lineno = 1;
    for (;;) { /* the header, up to an empty line */
        lineno++;
        nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
        if (nl == NULL) {
            snprintf(err, errcap, "the header does not end (no empty line)");
            goto done;
        }
        if (nl == p) break;
        buf_clear(&line);
        buf_add(&line, p, (size_t)(nl - p));
        if (meta_field(m, line.p, &docs, &seen, err, errcap) != 0) goto done;
        p = nl + 1;
    }
    p = nl + 1;
    for (i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!(seen & (1 << i))) {
            snprintf(err, errcap, "no %s= in the header", required[i]);
            goto done;
        }
    for (i = 0; p < end; i++) { /* the names */
        size_t len;
        nl = memchr(p, '\n', (size_t)(end - p));
        len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        if (nl == NULL) {
            snprintf(err, errcap, "name %zu (line %zu) is not terminated by a newline", i,
                     lineno);
            goto done;
        }
        if (!json_token_valid(p, len)) {
            snprintf(err, errcap, "name %zu (line %zu) is not a JSON string or number: '%.*s'%s",
                     i, lineno, (int)(len > 40 ? 40 : len), p, len > 40 ? "..." : "");
            goto done;
        }
        if (!searchable) {
            names_append(&m->names, p, len, 1);
        } else if (!names_add(&m->names, p, len, 1, NULL)) {
            snprintf(err, errcap, "name %zu (line %zu) is a duplicate: %.*s%s", i, lineno,
                     (int)(len > 40 ? 40 : len), p, len > 40 ? "..." : "");
            goto done;
        }
        p = nl + 1;
    }
    if (m->names.n != docs) {
        snprintf(err, errcap, "%zu name%s for documents=%zu", m->names.n,
                 cli_plural(m->names.n), docs);
        goto done;
    }
    rc = 0;
done:
    buf_free(&line);
    if (rc != 0) {
        names_free(&m->names);
        memset(&m->names, 0, sizeof m->names);
    }
    return rc;
}

void index_meta_free(index_meta *m) { names_free(&m->names); }
