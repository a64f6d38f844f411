/*
 * The normalisation flags' names (minlsh_norm_flags_parse and _format in
 * minlsh.h): the one table the command's options, its older index files
 * (read by lib/store/legacy.c) and the bindings share. The order of the
 * table is the order minlsh_norm_flags_format writes them in, which those
 * index files and the command's 'index stats' show: it never changes.
 */
#include "shingle.h"

static const struct {
    const char *name;
    uint32_t flag;
} minlsh__norm_names[] = {{"html", MINLSH_NORM_HTML},
                          {"lowercase", MINLSH_NORM_CASEFOLD},
                          {"strip-punct", MINLSH_NORM_PUNCT},
                          {"collapse-space", MINLSH_NORM_WHITESPACE},
                          {"nfkc", MINLSH_NORM_NFKC},
                          {"casefold", MINLSH_NORM_UCASEFOLD},
                          {"unicode-punct", MINLSH_NORM_UPUNCT},
                          {"unicode-space", MINLSH_NORM_UWHITESPACE},
                          {"fold-digits", MINLSH_NORM_DIGITS},
                          {"cjk-words", MINLSH_NORM_CJK_WORDS}};
#define MINLSH__NORM_NAMES (sizeof minlsh__norm_names / sizeof minlsh__norm_names[0])

int minlsh_norm_flags_parse(uint32_t *flags, const char *text, size_t len) {
    size_t pos = 0;
    if (flags == NULL) return MINLSH_E_NULL;
    *flags = 0;
    if (text == NULL && len > 0) return MINLSH_E_NULL;
    if (len == 4 && memcmp(text, "none", 4) == 0) return 0;
    while (pos < len) {
        const char *comma = (const char *)memchr(text + pos, ',', len - pos);
        size_t w = comma != NULL ? (size_t)(comma - (text + pos)) : len - pos, i;
        for (i = 0; i < MINLSH__NORM_NAMES; i++)
            if (strlen(minlsh__norm_names[i].name) == w &&
                memcmp(text + pos, minlsh__norm_names[i].name, w) == 0)
                break;
        if (i == MINLSH__NORM_NAMES) {
            *flags = 0;
            return MINLSH_E_PARAM;
        }
        *flags |= minlsh__norm_names[i].flag;
        pos += w + (comma != NULL ? 1 : 0);
    }
    return 0;
}

int minlsh_norm_flags_format(uint32_t flags, char *buf, size_t cap, size_t *n_out) {
    size_t n = 0, i;
    if (buf == NULL && cap > 0) return MINLSH_E_NULL;
    for (i = 0; i < MINLSH__NORM_NAMES; i++)
        if (flags & minlsh__norm_names[i].flag)
            n += (n > 0 ? 1 : 0) + strlen(minlsh__norm_names[i].name);
    if (n_out != NULL) *n_out = n > 0 ? n : 4;
    if (cap < (n > 0 ? n : 4)) return MINLSH_E_BUFSIZE;
    if (n == 0) {
        memcpy(buf, "none", 4);
        return 0;
    }
    n = 0;
    for (i = 0; i < MINLSH__NORM_NAMES; i++) {
        size_t w = strlen(minlsh__norm_names[i].name);
        if (!(flags & minlsh__norm_names[i].flag)) continue;
        if (n > 0) buf[n++] = ',';
        memcpy(buf + n, minlsh__norm_names[i].name, w);
        n += w;
    }
    return 0;
}
