/*
 * The shingler handle: options, validation, byte-class tables, config id.
 * The shingling engine itself is in engine.c.
 */
#include "shingle.h"
#include "unicode.h"

static const uint8_t default_key[16] = {'m', 'i', 'n', 'l', 's', 'h', ':', 's',
                                        'h', 'i', 'n', 'g', 'l', 'e', 's', '!'};

const uint8_t *minlsh_default_key(void) { return default_key; }

int minlsh_shingler_options_init(minlsh_shingler_options *opts,
                                 uint32_t version) {
    static const minlsh_shingler_options init = MINLSH_SHINGLER_OPTIONS_INIT;
    if (opts == NULL) return MINLSH_E_NULL;
    if (version < 1 || version > MINLSH_SHINGLER_OPTIONS_VERSION) return MINLSH_E_VERSION;
    *opts = init;
    opts->version = version;
    /* Version 1's defaults had no Unicode flag: a caller that asks for them
     * keeps its configuration id. */
    if (version == 1) opts->flags = 0;
    return 0;
}

MINLSH__INLINE int is_punct(unsigned c) {
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) ||
           (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

MINLSH__INLINE int is_space(unsigned c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

MINLSH__INLINE int is_word_byte(unsigned c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c >= 0x80;
}

/* Fold case, punctuation and whitespace into per-byte tables once, so the
 * engine's inner loops are a table lookup per byte whatever the flags. */
static void build_tables(minlsh_shingler *s) {
    unsigned c;
    for (c = 0; c < 256; c++) {
        uint8_t folded = (uint8_t)c;
        if ((s->flags & MINLSH_NORM_CASEFOLD) && c >= 'A' && c <= 'Z')
            folded = (uint8_t)(c + 32);
        if (is_word_byte(c))
            s->wclass[c] = folded; /* never 0, 1 or 2: those are not word bytes */
        else if ((s->flags & MINLSH_NORM_PUNCT) && is_punct(c))
            s->wclass[c] = MINLSH__W_DEL;
        else
            s->wclass[c] = MINLSH__W_SEP;
        s->wclass_ascii[c] = c < 0x80 ? s->wclass[c] : MINLSH__W_ESC;
        s->bmap[c] = folded;
        if ((s->flags & MINLSH_NORM_PUNCT) && is_punct(c))
            s->bact[c] = MINLSH__B_DEL;
        else if ((s->flags & MINLSH_NORM_WHITESPACE) && is_space(c))
            s->bact[c] = MINLSH__B_WS;
        else
            s->bact[c] = MINLSH__B_KEEP;
    }
}

/* docs/shingling.md, "Configuration id": SipHash-2-4 with the shingler's key
 * over "minlsh-config-1" || LE32 unit || LE32 k || LE32 flags ||
 * LE64 number of stop words || the normalised stop-word blob. With a
 * Unicode flag, "minlsh-config-2" and LE32 Unicode version after the flags:
 * another version of the tables is another configuration. */
static uint64_t compute_config_id(const minlsh_shingler *s) {
    int uni = (s->flags & MINLSH_NORM_UNICODE) != 0;
    uint8_t hdr[16 + 8];
    size_t n = 12;
    minlsh__siphash h;
    minlsh__siphash_init(&h, s->k0, s->k1, 0);
    minlsh__siphash_update(&h, uni ? "minlsh-config-2" : "minlsh-config-1", 15);
    minlsh__store32le(hdr, s->unit);
    minlsh__store32le(hdr + 4, s->k);
    minlsh__store32le(hdr + 8, s->flags);
    if (uni) {
        minlsh__store32le(hdr + n, MINLSH__UNICODE_VERSION);
        n += 4;
    }
    minlsh__store64le(hdr + n, (uint64_t)s->stop.count);
    minlsh__siphash_update(&h, hdr, n + 8);
    minlsh__siphash_update(&h, s->stop.blob, s->stop.blob_len);
    return minlsh__siphash_final64(&h);
}

int minlsh_shingler_new(minlsh_shingler **out,
                        const minlsh_shingler_options *opts,
                        const minlsh_allocator *alloc) {
    /* NULL has always meant these: flags 0, so callers passing NULL keep
     * their hashes now that the newer version's defaults split CJK words. */
    static const minlsh_shingler_options defaults = {1, MINLSH_UNIT_WORD, 5, 0,
                                                     NULL, NULL, 0, 0};
    minlsh_allocator a;
    minlsh_shingler *s;
    const uint8_t *key;
    int rc;

    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (opts == NULL) opts = &defaults;
    /* Versions 1 and 2 share one layout (only their defaults differ), so
     * every field is read for both. */
    if (opts->version < 1 || opts->version > MINLSH_SHINGLER_OPTIONS_VERSION)
        return MINLSH_E_VERSION;
    if (opts->unit < MINLSH_UNIT_BYTE || opts->unit > MINLSH_UNIT_STOPWORD ||
        opts->k < 1 || opts->k > MINLSH_SHINGLE_K_MAX ||
        (opts->flags & ~(MINLSH_NORM_ALL | MINLSH_NORM_UNICODE)) != 0)
        return MINLSH_E_PARAM;
    if ((rc = minlsh__alloc_setup(&a, alloc)) != 0) return rc;

    s = (minlsh_shingler *)minlsh__calloc(&a, 1, sizeof *s);
    if (s == NULL) return MINLSH_E_NOMEM;
    s->alloc = a;
    key = opts->key != NULL ? opts->key : default_key;
    memcpy(s->key, key, 16);
    s->k0 = minlsh__load64le(s->key);
    s->k1 = minlsh__load64le(s->key + 8);
    s->unit = opts->unit;
    s->k = opts->k;
    s->flags = opts->flags;
    /* A Unicode flag does what its ASCII counterpart does on ASCII (the
     * Unicode stage leaves ASCII to the byte tables), so it brings it. */
    if (s->flags & MINLSH_NORM_UCASEFOLD) s->flags |= MINLSH_NORM_CASEFOLD;
    if (s->flags & MINLSH_NORM_UPUNCT) s->flags |= MINLSH_NORM_PUNCT;
    if (s->flags & MINLSH_NORM_UWHITESPACE) s->flags |= MINLSH_NORM_WHITESPACE;
    /* CJK_WORDS alone does nothing to bytes and code points but send the
     * text through the Unicode stage's decoding, which would turn invalid
     * bytes into U+FFFD. Dropped there, so that the default options give a
     * byte or code-point shingler exactly flags 0's: the hashes and the
     * configuration id it always had. */
    if (s->unit <= MINLSH_UNIT_CODEPOINT &&
        (s->flags & MINLSH_NORM_UNICODE) == MINLSH_NORM_CJK_WORDS)
        s->flags &= ~(uint32_t)MINLSH_NORM_CJK_WORDS;
    s->max_bytes = opts->max_document_bytes;
    build_tables(s);

    if (opts->stopwords != NULL) {
        rc = minlsh__stoplist_build(&s->stop, &a, opts->stopwords,
                                    opts->stopwords_len);
        /* Checked for every unit, kept only where it matters, so config_id
         * depends on the list only when the output does. */
        if (rc == 0 && s->unit != MINLSH_UNIT_STOPWORD)
            minlsh__stoplist_free(&s->stop, &a);
    } else if (s->unit == MINLSH_UNIT_STOPWORD) {
        rc = minlsh__stoplist_build(&s->stop, &a, minlsh__stopwords_en,
                                    minlsh__stopwords_en_len);
    }
    if (rc != 0) {
        minlsh_shingler_free(s);
        return rc;
    }
    s->config_id = compute_config_id(s);
    *out = s;
    return 0;
}

int minlsh__shingler_clone(minlsh_shingler **out, const minlsh_shingler *src,
                           const minlsh_allocator *a) {
    minlsh_shingler *s;
    *out = NULL;
    s = (minlsh_shingler *)minlsh__malloc(a, sizeof *s);
    if (s == NULL) return MINLSH_E_NOMEM;
    *s = *src;
    s->alloc = *a;
    if (minlsh__stoplist_copy(&s->stop, &src->stop, a) != 0) {
        minlsh__secure_zero(s, sizeof *s);
        minlsh__free(a, s);
        return MINLSH_E_NOMEM;
    }
    *out = s;
    return 0;
}

void minlsh_shingler_free(minlsh_shingler *s) {
    minlsh_allocator a;
    if (s == NULL) return;
    a = s->alloc;
    minlsh__stoplist_free(&s->stop, &a);
    minlsh__secure_zero(s, sizeof *s); /* the key, and everything else */
    minlsh__free(&a, s);
}

uint32_t minlsh_shingler_unit(const minlsh_shingler *s) { return s ? s->unit : 0; }
uint32_t minlsh_shingler_k(const minlsh_shingler *s) { return s ? s->k : 0; }
uint32_t minlsh_shingler_flags(const minlsh_shingler *s) { return s ? s->flags : 0; }

int minlsh_shingler_config_id(uint64_t *out, const minlsh_shingler *s) {
    if (s == NULL || out == NULL) return MINLSH_E_NULL;
    *out = s->config_id;
    return 0;
}

const minlsh_allocator *minlsh__shingler_allocator(const minlsh_shingler *s) {
    return s != NULL ? &s->alloc : NULL;
}
