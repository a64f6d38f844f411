/*
 * The store's metadata blob (docs/format.md, "Store"): the metadata section
 * of PATH, a mapped index file. Little-endian throughout:
 *
 *   "minlsh store\n"           13 bytes, the magic line
 *   u32 format version         1
 *   u32 store flags            MINLSH_STORE_SETS
 *   u32 unit, u32 k, u32 norm  the shingler's (minlsh_shingler_flags)
 *   u32 custom stop words      0: the built-in list, 1: the bytes below
 *   u32 stop-word bytes, then the bytes
 *   u64 shingler config id     checks the key
 *   u64 threshold              IEEE 754 binary64 bits
 *   u64 next id                the id the next document gets
 *   u64 journal base, u64 journal offset
 *                              this file holds the journal that extends
 *                              the file of that base up to that offset
 *                              (0, 0: none)
 *   u64 documents              then, ascending by id, each live document:
 *     u64 id, u32 name bytes, the name, and with SETS u64 set offset
 */
#include "store.h"

#define MINLSH__STORE_MAGIC "minlsh store\n"
#define MINLSH__STORE_MAGIC_BYTES 13
#define MINLSH__STORE_META_VERSION 1

static uint64_t minlsh__f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double minlsh__bits_f64(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

int minlsh__store_meta_encode(const minlsh_store *s, uint64_t journal_base,
                              uint64_t journal_offset, uint8_t **out, size_t *len) {
    int sets = (s->cfg.flags & MINLSH_STORE_SETS) != 0;
    size_t n = MINLSH__STORE_MAGIC_BYTES + 4 * 7 + s->cfg.stopwords_len + 8 * 6, per, i;
    uint8_t *b, *p;
    uint64_t id;
    per = 12 + (sets ? 8 : 0);
    /* live documents' records */
    if (minlsh__add_size(&n, n, s->arena_len) != 0) return MINLSH_E_TOOBIG;
    for (id = 0; id < s->next_id; id++)
        if (s->docs[id].live && minlsh__add_size(&n, n, per) != 0) return MINLSH_E_TOOBIG;
    b = (uint8_t *)minlsh__malloc(&s->alloc, n);
    if (b == NULL) return MINLSH_E_NOMEM;
    p = b;
    memcpy(p, MINLSH__STORE_MAGIC, MINLSH__STORE_MAGIC_BYTES);
    p += MINLSH__STORE_MAGIC_BYTES;
    minlsh__store32le(p, MINLSH__STORE_META_VERSION);
    minlsh__store32le(p + 4, s->cfg.flags);
    minlsh__store32le(p + 8, s->cfg.unit);
    minlsh__store32le(p + 12, s->cfg.shingle_k);
    minlsh__store32le(p + 16, s->cfg.norm);
    minlsh__store32le(p + 20, s->cfg.custom_stopwords);
    minlsh__store32le(p + 24, (uint32_t)s->cfg.stopwords_len);
    p += 28;
    if (s->cfg.stopwords_len > 0) memcpy(p, s->cfg.stopwords, s->cfg.stopwords_len);
    p += s->cfg.stopwords_len;
    minlsh__store64le(p, s->cfg.config_id);
    minlsh__store64le(p + 8, minlsh__f64_bits(s->cfg.threshold));
    minlsh__store64le(p + 16, s->next_id);
    minlsh__store64le(p + 24, journal_base);
    minlsh__store64le(p + 32, journal_offset);
    minlsh__store64le(p + 40, s->live);
    p += 48;
    for (id = 0; id < s->next_id; id++) {
        const minlsh__store_doc *d = &s->docs[id];
        if (!d->live) continue;
        minlsh__store64le(p, id);
        minlsh__store32le(p + 8, d->name_len);
        p += 12;
        for (i = 0; i < d->name_len; i++) p[i] = s->arena[d->name_off + i];
        p += d->name_len;
        if (sets) {
            minlsh__store64le(p, d->set_off);
            p += 8;
        }
    }
    *out = b;
    *len = (size_t)(p - b);
    return 0;
}

/* The fixed part; *pos past it. */
int minlsh__store_meta_config(const uint8_t *data, size_t len, minlsh__store_config *cfg,
                              uint64_t *journal_base, uint64_t *journal_offset) {
    size_t pos = MINLSH__STORE_MAGIC_BYTES, sw;
    uint64_t bits;
    if (minlsh__store_legacy_is(data, len)) {
        *journal_base = *journal_offset = 0;
        return minlsh__store_legacy_config(data, len, cfg);
    }
    if (len < MINLSH__STORE_MAGIC_BYTES || memcmp(data, MINLSH__STORE_MAGIC, MINLSH__STORE_MAGIC_BYTES) != 0)
        return MINLSH_E_FORMAT; /* an index file, not a store */
    if (len - pos < 28) return MINLSH_E_CORRUPT;
    if (minlsh__load32le(data + pos) != MINLSH__STORE_META_VERSION) return MINLSH_E_FORMAT;
    memset(cfg, 0, sizeof *cfg);
    cfg->flags = minlsh__load32le(data + pos + 4);
    cfg->unit = minlsh__load32le(data + pos + 8);
    cfg->shingle_k = minlsh__load32le(data + pos + 12);
    cfg->norm = minlsh__load32le(data + pos + 16);
    cfg->custom_stopwords = minlsh__load32le(data + pos + 20);
    sw = minlsh__load32le(data + pos + 24);
    pos += 28;
    if ((cfg->flags & ~MINLSH_STORE_SETS) != 0 || cfg->custom_stopwords > 1 ||
        len - pos < sw || len - pos - sw < 48)
        return MINLSH_E_CORRUPT;
    cfg->stopwords = data + pos;
    cfg->stopwords_len = sw;
    pos += sw;
    cfg->config_id = minlsh__load64le(data + pos);
    bits = minlsh__load64le(data + pos + 8);
    cfg->threshold = minlsh__bits_f64(bits);
    if (!(cfg->threshold > 0.0 && cfg->threshold <= 1.0)) return MINLSH_E_CORRUPT;
    *journal_base = minlsh__load64le(data + pos + 24);
    *journal_offset = minlsh__load64le(data + pos + 32);
    return 0;
}

int minlsh__store_meta_docs(minlsh_store *s, const uint8_t *data, size_t len) {
    minlsh__store_config cfg;
    uint64_t base, off, next, n, i, id, prev = 0, set_off = MINLSH__STORE_NO_SET;
    int sets, rc;
    size_t pos;
    if (minlsh__store_legacy_is(data, len)) return minlsh__store_legacy_docs(s, data, len);
    rc = minlsh__store_meta_config(data, len, &cfg, &base, &off);
    if (rc != 0) return rc;
    sets = (cfg.flags & MINLSH_STORE_SETS) != 0;
    pos = MINLSH__STORE_MAGIC_BYTES + 28 + cfg.stopwords_len;
    next = minlsh__load64le(data + pos + 16);
    n = minlsh__load64le(data + pos + 40);
    pos += 48;
    if (n > next) return MINLSH_E_CORRUPT;
    if (n > 0) {
        /* the records fill the rest of the blob: their names are what is
         * left after the fixed part of each */
        uint64_t fixed = sets ? 20 : 12;
        if (n > (len - pos) / fixed) return MINLSH_E_CORRUPT;
        rc = minlsh__store_docs_presize(s, next - 1, (size_t)(len - pos - n * fixed));
        if (rc != 0) return rc;
    }
    for (i = 0; i < n; i++) {
        size_t nl;
        if (len - pos < 12) return MINLSH_E_CORRUPT;
        id = minlsh__load64le(data + pos);
        nl = minlsh__load32le(data + pos + 8);
        pos += 12;
        if (id >= next || (i > 0 && id <= prev) || len - pos < nl ||
            (sets && len - pos - nl < 8))
            return MINLSH_E_CORRUPT;
        if (sets) set_off = minlsh__load64le(data + pos + nl);
        rc = minlsh__store_doc_load(s, id, data + pos, nl, set_off);
        if (rc != 0) return rc;
        pos += nl + (sets ? 8 : 0);
        prev = id;
    }
    if (pos != len) return MINLSH_E_CORRUPT;
    if (next > s->next_id) {
        /* ids up to next were given (to documents since removed) */
        rc = minlsh__store_doc_reserve(s, next - 1, 0);
        if (rc != 0) return rc;
        while (s->next_id < next) {
            minlsh__store_doc *d = &s->docs[s->next_id++];
            memset(d, 0, sizeof *d);
            d->set_off = MINLSH__STORE_NO_SET;
        }
    }
    return 0;
}
