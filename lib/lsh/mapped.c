/*
 * The mapped index (docs/format.md, "Mapped index file"): format version 2
 * stores, beside the documents, every band's entries sorted by band key, so
 * a query reads a few pages of the file in place instead of loading it.
 *
 * Integrity without reading the whole file at open: the header and a
 * directory have their own checksums, and the data after them is cut into
 * 64 KiB blocks, each with a sum64 in a table at the end of the file (the
 * table has its own checksum). minlsh_index_map checks the header, the
 * directory, that the sizes fill the file exactly, the block table, and the
 * blocks of the metadata; every other block is checked the first time a
 * call reads from it (a byte per block remembers the verdict), and every
 * document number read from a band entry is bounds-checked before use. So
 * a query costs its band searches and candidates plus one sum64 over each
 * block it touches for the first time.
 *
 * Writing (minlsh_index_save_mapped): the band entries come from the
 * in-memory tables, which are already in band-key order, so no sort is
 * needed beyond the members of one key.
 */
#include "lsh.h"
#include "prefetch.h"

#include <stdatomic.h>

#define MINLSH__MAP_DIR 64           /* the directory, after the header */
#define MINLSH__MAP_DATA 128         /* where the documents start */
#define MINLSH__MAP_SHIFT 16         /* 64 KiB blocks */
#define MINLSH__MAP_ENTRY 8          /* LE32 tag, LE32 document number */

struct minlsh__lsh_map {
    const uint8_t *data; /* the whole file */
    size_t len;
    int mapped;          /* data is a mapping to unmap */
    size_t n, m, item;   /* documents, banded documents, bytes per document */
    size_t bands_off, meta_off, meta_len, sums_off;
    size_t nblocks;
    unsigned shift;
    _Atomic unsigned char *state; /* per block: 0 unchecked, 1 good, 2 damaged */
};

typedef struct minlsh__lsh_map minlsh__lsh_map;

/* ---- validation --------------------------------------------------------- */

/* Check the blocks that hold bytes [off, off + len) of the file. */
static int minlsh__map_check(const minlsh__lsh_map *mp, size_t off, size_t len) {
    size_t i, last;
    if (len == 0) return 0;
    i = (off - MINLSH__MAP_DATA) >> mp->shift;
    last = (off + len - 1 - MINLSH__MAP_DATA) >> mp->shift;
    for (; i <= last; i++) {
        unsigned char st = atomic_load_explicit(&mp->state[i], memory_order_relaxed);
        size_t start, end;
        if (st == 1) continue;
        if (st == 2) return MINLSH_E_CORRUPT;
        start = MINLSH__MAP_DATA + (i << mp->shift);
        end = start + ((size_t)1 << mp->shift);
        if (end > mp->sums_off) end = mp->sums_off;
        /* Two threads may check one block at once: both reach the same
         * verdict, so the order of their stores does not matter. */
        st = minlsh__sum64(mp->data + start, end - start) ==
                     minlsh__load64le(mp->data + mp->sums_off + 8 * i)
                 ? 1
                 : 2;
        atomic_store_explicit(&mp->state[i], st, memory_order_relaxed);
        if (st == 2) return MINLSH_E_CORRUPT;
    }
    return 0;
}

/* Fill mp from the version 2 file in buf (header already parsed into h):
 * the directory, the sizes, the block table; allocates the block states. */
static int minlsh__map_open(minlsh__lsh_map *mp, const uint8_t *buf, size_t len,
                            const minlsh__header *h, const minlsh__load *ld) {
    const uint8_t *d = buf + MINLSH__HEADER_BYTES;
    uint64_t m, docs_off, bands_off, meta_off, meta_len, sums_off, shift, want;
    size_t bytes, body;
    memset(mp, 0, sizeof *mp);
    if (h->bands == 0 || h->rows == 0 || (uint64_t)h->bands * h->rows > h->k)
        return MINLSH_E_CORRUPT;
    if (h->count > MINLSH__LSH_MAX_DOCS) return MINLSH_E_TOOBIG;
    if (len < MINLSH__MAP_DATA || minlsh__load64le(d + 56) != minlsh__sum64(d, 56))
        return MINLSH_E_CORRUPT;
    m = minlsh__load64le(d);
    docs_off = minlsh__load64le(d + 8);
    bands_off = minlsh__load64le(d + 16);
    meta_off = minlsh__load64le(d + 24);
    meta_len = minlsh__load64le(d + 32);
    sums_off = minlsh__load64le(d + 40);
    shift = minlsh__load32le(d + 48);
    if (minlsh__load32le(d + 52) != 0 || m > h->count || docs_off != MINLSH__MAP_DATA ||
        shift < 12 || shift > 30 || meta_len > MINLSH__METADATA_MAX)
        return MINLSH_E_CORRUPT;
    /* Every offset follows from the counts: (8 + 4k) * count <= 2^32 * 4104
     * and 8 * b * m <= 2^47 cannot overflow 64 bits. */
    mp->item = 8 + 4 * (size_t)h->k;
    want = docs_off + (uint64_t)mp->item * h->count;
    if (bands_off != want) return MINLSH_E_CORRUPT;
    want += (uint64_t)MINLSH__MAP_ENTRY * h->bands * m;
    if (meta_off != want) return MINLSH_E_CORRUPT;
    if (sums_off != want + meta_len) return MINLSH_E_CORRUPT;
    if (sums_off > (uint64_t)len) return MINLSH_E_CORRUPT;
    body = (size_t)sums_off - MINLSH__MAP_DATA;
    mp->shift = (unsigned)shift;
    mp->nblocks = (body + ((size_t)1 << mp->shift) - 1) >> mp->shift;
    if ((uint64_t)len - sums_off != (uint64_t)mp->nblocks * 8 + 8) return MINLSH_E_CORRUPT;
    if (minlsh__load64le(buf + len - 8) !=
        minlsh__sum64(buf + sums_off, mp->nblocks * 8))
        return MINLSH_E_CORRUPT;
    if (ld->family != NULL &&
        (minlsh_family_k(ld->family) != h->k || minlsh_family_seed(ld->family) != h->seed ||
         minlsh_family_scheme(ld->family) != h->flags || ld->config_id != h->config_id))
        return MINLSH_E_MISMATCH;
    mp->data = buf;
    mp->len = len;
    mp->n = (size_t)h->count;
    mp->m = (size_t)m;
    mp->bands_off = (size_t)bands_off;
    mp->meta_off = (size_t)meta_off;
    mp->meta_len = (size_t)meta_len;
    mp->sums_off = (size_t)sums_off;
    bytes = mp->nblocks > 0 ? mp->nblocks : 1;
    mp->state = (_Atomic unsigned char *)minlsh__malloc(&ld->alloc, bytes);
    if (mp->state == NULL) return MINLSH_E_NOMEM;
    memset((void *)mp->state, 0, bytes);
    return minlsh__map_check(mp, mp->meta_off, mp->meta_len);
}

int minlsh__lsh_parse_v2(minlsh_index **out, const void *buf, size_t len,
                         const minlsh__load *ld) {
    minlsh__lsh_map mp;
    minlsh__header h;
    int rc = minlsh__header_parse(buf, len, MINLSH__MAGIC_INDEX, MINLSH__INDEX_VERSION_MAPPED,
                                  &h);
    if (rc != 0) return rc;
    rc = minlsh__map_open(&mp, (const uint8_t *)buf, len, &h, ld);
    /* A load reads everything: every block is checked now. */
    if (rc == 0) rc = minlsh__map_check(&mp, MINLSH__MAP_DATA, mp.sums_off - MINLSH__MAP_DATA);
    if (rc == 0)
        rc = minlsh__lsh_from_records(out, &h, mp.data + MINLSH__MAP_DATA,
                                      mp.data + mp.meta_off, mp.meta_len, ld);
    minlsh__free(&ld->alloc, (void *)mp.state);
    return rc;
}

/* The values of a mapped file are read with little-endian loads, so the
 * file is used in place on any CPU. */
int minlsh_index_map(minlsh_index **out, const char *path, const minlsh_load_options *opts) {
    const uint8_t *data;
    minlsh__lsh_map *mp;
    minlsh__header h;
    minlsh__load ld;
    minlsh_index *ix;
    size_t len;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (path == NULL) return MINLSH_E_NULL;
    rc = minlsh__load_setup(&ld, opts);
    if (rc != 0) return rc;
    rc = minlsh__file_map(path, &data, &len);
    if (rc != 0) return rc;
    rc = minlsh__header_parse(data, len, MINLSH__MAGIC_INDEX, MINLSH__INDEX_VERSION_MAPPED, &h);
    if (rc == 0 && h.version != MINLSH__INDEX_VERSION_MAPPED) {
        /* An older file has no band entries: it is loaded. */
        rc = minlsh__load_buffer(out, data, len, opts, minlsh__lsh_parse);
        minlsh__file_unmap(data, len);
        return rc == 0 ? minlsh__lsh_note_file(out, path) : rc;
    }
    if (rc != 0) {
        minlsh__file_unmap(data, len);
        return rc;
    }
    mp = (minlsh__lsh_map *)minlsh__malloc(&ld.alloc, sizeof *mp);
    if (mp == NULL) {
        minlsh__file_unmap(data, len);
        return MINLSH_E_NOMEM;
    }
    rc = minlsh__map_open(mp, data, len, &h, &ld);
    if (rc == 0)
        rc = minlsh__lsh_index_create(&ix, h.k, h.flags, h.seed, h.config_id, h.bands, h.rows,
                                      &ld.alloc);
    if (rc != 0) {
        minlsh__free(&ld.alloc, (void *)mp->state);
        minlsh__free(&ld.alloc, mp);
        minlsh__file_unmap(data, len);
        return rc;
    }
    mp->mapped = 1;
    ix->map = mp;
    ix->count = mp->n;
    ix->file_tag = minlsh__load64le(data + len - 8);
    ix->file_bytes = len;
    minlsh__metadata_borrow(&ix->meta, &ix->alloc, data + mp->meta_off, mp->meta_len);
    *out = ix;
    return minlsh__lsh_note_file(out, path);
}

void minlsh__lsh_map_free(minlsh_index *ix) {
    minlsh__lsh_map *mp = ix->map;
    if (mp == NULL) return;
    if (mp->mapped) minlsh__file_unmap(mp->data, mp->len);
    minlsh__free(&ix->alloc, (void *)mp->state);
    minlsh__free(&ix->alloc, mp);
    ix->map = NULL;
}

int minlsh__lsh_unmapped(const minlsh_index *ix, minlsh_index **tmp) {
    const minlsh__lsh_map *mp = ix->map;
    uint32_t stack[MINLSH__K_STACK], *sig;
    minlsh_index *copy;
    minlsh__header h;
    minlsh__load ld;
    uint64_t *ids = NULL;
    size_t i, nd;
    int rc;
    *tmp = NULL;
    if (mp == NULL) return 0;
    rc = minlsh__map_check(mp, MINLSH__MAP_DATA, mp->sums_off - MINLSH__MAP_DATA);
    if (rc != 0) return rc;
    memset(&h, 0, sizeof h);
    h.k = ix->k;
    h.flags = ix->scheme;
    h.bands = ix->bands;
    h.rows = ix->rows;
    h.seed = ix->seed;
    h.config_id = ix->config_id;
    h.count = mp->n;
    ld.alloc = ix->alloc;
    ld.family = NULL;
    ld.config_id = 0;
    /* The handle's metadata, which may have been set since the file. */
    rc = minlsh__lsh_from_records(&copy, &h, mp->data + MINLSH__MAP_DATA, ix->meta.data,
                                  ix->meta.len, &ld);
    if (rc != 0) return rc;
    nd = ix->delta != NULL ? ix->delta->count : 0;
    if (nd > 0) {
        ids = (uint64_t *)minlsh__malloc(&ix->alloc, nd * sizeof *ids);
        sig = (uint32_t *)minlsh__kbuf_get(&ix->alloc, stack, MINLSH__K_STACK, ix->k, sizeof *sig);
        if (ids == NULL || sig == NULL) rc = MINLSH_E_NOMEM;
        if (rc == 0) (void)minlsh_index_copy_ids(ix->delta, ids, nd, NULL);
        for (i = 0; i < nd && rc == 0; i++) {
            (void)minlsh_index_copy_signature(ix->delta, ids[i], sig, ix->k, NULL);
            rc = minlsh__lsh_insert(copy, ids[i], sig);
        }
        minlsh__free(&ix->alloc, ids);
        if (sig != NULL) minlsh__kbuf_put(&ix->alloc, stack, sig);
    }
    if (rc != 0) {
        minlsh_index_free(copy);
        return rc;
    }
    *tmp = copy;
    return 0;
}

int minlsh__lsh_map_insert(minlsh_index *ix, uint64_t id, const uint32_t *sig) {
    int rc = minlsh__lsh_map_contains(ix, id);
    if (rc < 0) return rc;
    if (rc == 1) return MINLSH_E_EXISTS;
    if (ix->count >= MINLSH__LSH_MAX_DOCS) return MINLSH_E_TOOBIG;
    if (ix->delta == NULL) {
        rc = minlsh__lsh_index_create(&ix->delta, ix->k, ix->scheme, ix->seed, ix->config_id,
                                      ix->bands, ix->rows, &ix->alloc);
        if (rc != 0) return rc;
    }
    rc = minlsh__lsh_insert(ix->delta, id, sig);
    if (rc == 0) ix->count++;
    return rc;
}

int minlsh__lsh_map_remove(minlsh_index *ix, uint64_t id) {
    int rc;
    if (ix->delta != NULL && minlsh__lsh_find_id(ix->delta, id) != MINLSH__LSH_NIL) {
        rc = minlsh_index_remove(ix->delta, id);
        if (rc == 0) ix->count--;
        return rc;
    }
    rc = minlsh__lsh_map_contains(ix, id);
    if (rc < 0) return rc;
    return rc == 1 ? MINLSH_E_STATE : MINLSH_E_NOTFOUND;
}

/* ---- reading in place ---------------------------------------------------- */

/* Document i's record, its blocks checked; NULL if damaged. */
static const uint8_t *minlsh__map_doc(const minlsh__lsh_map *mp, size_t i) {
    size_t off = MINLSH__MAP_DATA + i * mp->item;
    return minlsh__map_check(mp, off, mp->item) == 0 ? mp->data + off : NULL;
}

/* The document number with this id (*found), or where it would go; a
 * damaged block: MINLSH_E_CORRUPT. */
static int minlsh__map_find(const minlsh__lsh_map *mp, uint64_t id, size_t *pos, int *found) {
    size_t lo = 0, hi = mp->n;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint8_t *r = minlsh__map_doc(mp, mid);
        uint64_t v;
        if (r == NULL) return MINLSH_E_CORRUPT;
        v = minlsh__load64le(r);
        if (v == id) {
            *pos = mid;
            *found = 1;
            return 0;
        }
        if (v < id) lo = mid + 1;
        else hi = mid;
    }
    *pos = lo;
    return 0;
}

int minlsh__lsh_map_contains(const minlsh_index *ix, uint64_t id) {
    size_t pos;
    int found, rc = minlsh__map_find(ix->map, id, &pos, &found);
    return rc != 0 ? rc : found;
}

int minlsh__lsh_map_copy_signature(const minlsh_index *ix, uint64_t id, uint32_t *sig) {
    const uint8_t *r;
    size_t pos;
    uint32_t v;
    int found, rc = minlsh__map_find(ix->map, id, &pos, &found);
    if (rc != 0) return rc;
    if (!found) return MINLSH_E_NOTFOUND;
    r = minlsh__map_doc(ix->map, pos);
    for (v = 0; v < ix->k; v++) sig[v] = minlsh__load32le(r + 8 + 4 * (size_t)v);
    return 0;
}

int minlsh__lsh_map_copy_ids(const minlsh_index *ix, uint64_t *ids) {
    const minlsh__lsh_map *mp = ix->map;
    size_t i;
    int rc = minlsh__map_check(mp, MINLSH__MAP_DATA, mp->n * mp->item);
    if (rc != 0) return rc;
    for (i = 0; i < mp->n; i++) ids[i] = minlsh__load64le(mp->data + MINLSH__MAP_DATA + i * mp->item);
    return 0;
}

/* A band's entries: where they start, and a damage flag for the search. */
typedef struct minlsh__map_band {
    const minlsh__lsh_map *mp;
    size_t off;
    int rc;
} minlsh__map_band;

/* The tag of entry p; a damaged block ends the search (the largest tag). */
static uint32_t minlsh__map_tag(minlsh__map_band *b, size_t p) {
    size_t off = b->off + p * MINLSH__MAP_ENTRY;
    if (b->rc == 0) b->rc = minlsh__map_check(b->mp, off, MINLSH__MAP_ENTRY);
    return b->rc == 0 ? minlsh__load32le(b->mp->data + off) : UINT32_MAX;
}

/* The first entry in [lo, hi) with a tag >= tag, given that the entries
 * before lo are below it and those from hi on are not: galloping from g
 * (lo <= g < hi) outwards, then halving, so a good guess costs a cache
 * line or two. */
static size_t minlsh__map_seek(minlsh__map_band *b, size_t lo, size_t hi, size_t g,
                               uint32_t tag) {
    size_t step = 1;
    if (minlsh__map_tag(b, g) < tag) {
        lo = g + 1;
        for (;;) {
            size_t nx = lo + step - 1;
            if (nx >= hi) break;
            if (minlsh__map_tag(b, nx) >= tag) {
                hi = nx;
                break;
            }
            lo = nx + 1;
            step *= 2;
        }
    } else {
        hi = g;
        for (;;) {
            size_t nx;
            if (hi - lo < step) break;
            nx = hi - step;
            if (minlsh__map_tag(b, nx) < tag) {
                lo = nx + 1;
                break;
            }
            hi = nx;
            step *= 2;
        }
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (minlsh__map_tag(b, mid) < tag) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* One band's search in minlsh__lsh_map_seek: entries before lo have tags
 * below tag, entries from hi on do not; tlo and thi are the tags of entries
 * lo - 1 and hi (0 and 2^32 past the ends). */
typedef struct minlsh__map_search {
    minlsh__map_band b;
    uint32_t tag;
    size_t lo, hi;
    uint64_t tlo, thi;
} minlsh__map_search;

/* Where tag's first entry should be if the tags between tlo and thi are
 * spread evenly (band keys are hashes, so they are): in [lo, hi), lo < hi.
 * The product fits: tag - tlo < 2^32, and a band has under 2^32 entries. */
static size_t minlsh__map_guess(const minlsh__map_search *q) {
    uint64_t d = (uint64_t)q->tag - q->tlo;
    size_t g;
    if (d == 0) return q->lo;
    g = q->lo + (size_t)(d * (uint64_t)(q->hi - q->lo) / (q->thi - q->tlo));
    return g < q->hi ? g : q->hi - 1;
}

/* Interpolation steps taken for all the bands together before each band
 * finishes alone: each step takes the error from about sqrt(m) entries to
 * about its square root, and the bands' cache misses overlap. */
#define MINLSH__MAP_SEEK_STEPS 3

void minlsh__lsh_map_seek(const minlsh_index *ix, const uint64_t *keys, uint32_t first,
                          uint32_t n, size_t *start) {
    const minlsh__lsh_map *mp = ix->map;
    minlsh__map_search q[MINLSH__MAP_SEEK_GROUP];
    size_t g[MINLSH__MAP_SEEK_GROUP];
    uint32_t i, step;
    for (i = 0; i < n; i++) {
        q[i].b.mp = mp;
        q[i].b.off = mp->bands_off + (size_t)(first + i) * mp->m * MINLSH__MAP_ENTRY;
        q[i].b.rc = 0;
        q[i].tag = (uint32_t)(keys[first + i] >> 32);
        q[i].lo = 0;
        q[i].hi = mp->m;
        q[i].tlo = 0;
        q[i].thi = (uint64_t)1 << 32;
    }
    for (step = 0; step < MINLSH__MAP_SEEK_STEPS; step++) {
        for (i = 0; i < n; i++) {
            if (q[i].lo >= q[i].hi) continue;
            g[i] = minlsh__map_guess(&q[i]);
            MINLSH__PREFETCH(mp->data + q[i].b.off + g[i] * MINLSH__MAP_ENTRY);
        }
        for (i = 0; i < n; i++) {
            uint32_t t;
            if (q[i].lo >= q[i].hi) continue;
            t = minlsh__map_tag(&q[i].b, g[i]);
            if (q[i].b.rc != 0) {
                q[i].lo = q[i].hi; /* damaged: the band reports it */
            } else if (t < q[i].tag) {
                q[i].lo = g[i] + 1;
                q[i].tlo = t;
            } else {
                q[i].hi = g[i];
                q[i].thi = t;
            }
        }
    }
    for (i = 0; i < n; i++) {
        if (q[i].lo < q[i].hi)
            q[i].lo = minlsh__map_seek(&q[i].b, q[i].lo, q[i].hi, minlsh__map_guess(&q[i]),
                                       q[i].tag);
        start[i] = q[i].b.rc != 0 ? SIZE_MAX : q[i].lo;
    }
}

/* The k values of a document record. */
static void minlsh__map_sig(const uint8_t *r, uint32_t k, uint32_t *sig) {
    uint32_t v;
    for (v = 0; v < k; v++) sig[v] = minlsh__load32le(r + 8 + 4 * (size_t)v);
}

/* Band j of the file (query.c's minlsh__lsh_query_mapped runs the bands
 * and the limit): the document numbers in sig's bucket, whose band key is
 * key, pushed to ds and counted in *band_members, walking from start (the
 * band's first entry with key's tag, from minlsh__lsh_map_seek); the walk
 * stops at the first member past room, as the caller then leaves the band
 * out whole. */
int minlsh__lsh_map_band(const minlsh_index *ix, const uint32_t *sig, uint64_t key, uint32_t j,
                         size_t start, uint64_t room, minlsh__lsh_scratch *ds,
                         uint64_t *band_members) {
    const minlsh__lsh_map *mp = ix->map;
    const uint32_t *vals = sig + (size_t)j * ix->rows;
    uint32_t tag = (uint32_t)(key >> 32);
    minlsh__map_band b;
    size_t p;
    int rc = 0;
    *band_members = 0;
    if (mp->m == 0) return 0;
    b.mp = mp;
    b.off = mp->bands_off + (size_t)j * mp->m * MINLSH__MAP_ENTRY;
    b.rc = 0;
    if (start == SIZE_MAX) return MINLSH_E_CORRUPT;
    for (p = start; p < mp->m && minlsh__map_tag(&b, p) == tag; p++) {
        uint64_t d = minlsh__load32le(mp->data + b.off + p * MINLSH__MAP_ENTRY + 4);
        const uint8_t *r;
        uint32_t v, diff = 0;
        if (d >= mp->n || (r = minlsh__map_doc(mp, (size_t)d)) == NULL) {
            b.rc = MINLSH_E_CORRUPT;
            break;
        }
        const uint8_t *band = r + 8 + 4 * (size_t)j * ix->rows;
        for (v = 0; v < ix->rows; v++) diff |= minlsh__load32le(band + 4 * (size_t)v) ^ vals[v];
        if (diff != 0) {
            /* Another bucket under the same tag, unless the whole keys
             * collide (as minlsh__lsh_band_match decides). */
            if (minlsh__lsh_band_key_le(band, j, ix->rows) != key) continue;
        }
        if (++*band_members > room) break;
        if ((rc = minlsh__lsh_scratch_push(ds, &d)) != 0) break;
    }
    return rc != 0 ? rc : b.rc;
}

/* The documents numbered in ds (any order, repeats allowed; sorted and
 * made unique here): their ids ascending, with their estimates against
 * sig. *n_out gets the count; MINLSH_E_BUFSIZE if cap is short. */
int minlsh__lsh_map_emit(const minlsh_index *ix, const uint32_t *sig, minlsh__lsh_scratch *ds,
                         uint64_t *ids, double *similarity, size_t cap, size_t *n_out) {
    const minlsh__lsh_map *mp = ix->map;
    uint64_t *dv = (uint64_t *)ds->p;
    uint32_t stack[MINLSH__K_STACK], *own = stack;
    size_t i, n;
    /* Document numbers follow the ids: sorted numbers are sorted ids. */
    minlsh__sort_u64(dv, ds->n);
    n = ds->n = minlsh__unique_u64(dv, ds->n);
    if (n_out != NULL) *n_out = n;
    if (cap < n) return MINLSH_E_BUFSIZE;
    if (similarity != NULL && n > 0) {
        own = (uint32_t *)minlsh__kbuf_get(&ix->alloc, stack, MINLSH__K_STACK, ix->k, sizeof *own);
        if (own == NULL) return MINLSH_E_NOMEM;
    }
    for (i = 0; i < n; i++) {
        /* Every record here was checked when its band entry was read. */
        const uint8_t *r = mp->data + MINLSH__MAP_DATA + (size_t)dv[i] * mp->item;
        ids[i] = minlsh__load64le(r);
        if (similarity != NULL) {
            minlsh__map_sig(r, ix->k, own);
            similarity[i] = minlsh__lsh_estimate(sig, own, ix->k);
        }
    }
    minlsh__kbuf_put(&ix->alloc, stack, own);
    return 0;
}

/* ---- writing ------------------------------------------------------------- */

/* A writer that keeps a sum64 per block of the data. */
typedef struct minlsh__blk_writer {
    minlsh__writer *w;
    uint64_t *sums;
    size_t nsums, fill;
    minlsh__sum cur;
} minlsh__blk_writer;

static void minlsh__blk_put(minlsh__blk_writer *bw, const void *p, size_t n) {
    const uint8_t *s = (const uint8_t *)p;
    const size_t block = (size_t)1 << MINLSH__MAP_SHIFT;
    while (n > 0) {
        size_t take = block - bw->fill;
        if (take > n) take = n;
        minlsh__sum_update(&bw->cur, s, take);
        minlsh__writer_put(bw->w, s, take);
        bw->fill += take;
        s += take;
        n -= take;
        if (bw->fill == block) {
            bw->sums[bw->nsums++] = minlsh__sum_final(&bw->cur);
            minlsh__sum_init(&bw->cur);
            bw->fill = 0;
        }
    }
}

static void minlsh__blk_put_record(void *bw, const void *p, size_t n) {
    minlsh__blk_put((minlsh__blk_writer *)bw, p, n);
}

typedef struct minlsh__mapped_out {
    const minlsh_index *ix;
    const uint64_t *ids;  /* ascending, ix->count */
    const uint32_t *rank;  /* per slot: its document number */
    const uint32_t *order; /* per document number: its slot */
    const uint32_t *grank; /* per group of one: its document number, else NIL */
    uint64_t *run;        /* scratch: room for m entries */
    uint64_t *sums;       /* room for every block */
    size_t m;
    const minlsh__metadata *meta;
} minlsh__mapped_out;

static void minlsh__mapped_write(const void *ctx, minlsh__writer *w) {
    const minlsh__mapped_out *o = (const minlsh__mapped_out *)ctx;
    const minlsh_index *ix = o->ix;
    uint8_t dir[MINLSH__MAP_DIR];
    size_t item = 8 + 4 * (size_t)ix->k, i, p;
    uint64_t bands_off, meta_off;
    minlsh__blk_writer bw;
    minlsh__header h;
    minlsh__sum ss;
    uint32_t j;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MINLSH__MAGIC_INDEX, 8);
    h.version = MINLSH__INDEX_VERSION_MAPPED;
    h.k = ix->k;
    h.flags = ix->scheme;
    h.bands = ix->bands;
    h.rows = ix->rows;
    h.seed = ix->seed;
    h.config_id = ix->config_id;
    h.count = ix->count;
    minlsh__header_write(w, &h);
    bands_off = MINLSH__MAP_DATA + (uint64_t)item * ix->count;
    meta_off = bands_off + (uint64_t)MINLSH__MAP_ENTRY * ix->bands * o->m;
    memset(dir, 0, sizeof dir);
    minlsh__store64le(dir, o->m);
    minlsh__store64le(dir + 8, MINLSH__MAP_DATA);
    minlsh__store64le(dir + 16, bands_off);
    minlsh__store64le(dir + 24, meta_off);
    minlsh__store64le(dir + 32, o->meta->len);
    minlsh__store64le(dir + 40, meta_off + o->meta->len);
    minlsh__store32le(dir + 48, MINLSH__MAP_SHIFT);
    minlsh__store64le(dir + 56, minlsh__sum64(dir, 56));
    minlsh__writer_put(w, dir, sizeof dir);
    bw.w = w;
    bw.sums = o->sums;
    bw.nsums = bw.fill = 0;
    minlsh__sum_init(&bw.cur);
    for (i = 0; i < ix->count; i++) {
        uint32_t slot = o->order[i];
        const uint32_t *sig = minlsh__lsh_gsig(ix, minlsh__lsh_doc_at(ix, slot)->group);
        minlsh__lsh_put_record(o->ids[i], sig, ix->k, minlsh__blk_put_record, &bw);
    }
    /* Each band: its table in tag order; the documents of one tag (one
     * bucket or a few) in document order, so the bytes depend only on the
     * documents. */
    for (j = 0; j < ix->bands; j++) {
        const minlsh__lsh_table *t = &ix->band[j];
        p = 0;
        while (p < t->len) {
            uint32_t tag;
            size_t nrun = 0, q;
            if (t->e[p].val == MINLSH__LSH_NIL) {
                p++;
                continue;
            }
            tag = t->e[p].tag;
            /* Entries of one tag are adjacent (lsh.h: sorted, no gap). */
            for (; p < t->len && t->e[p].val != MINLSH__LSH_NIL && t->e[p].tag == tag; p++) {
                uint32_t it = t->e[p].val, g;
                /* The usual bucket, one group of one document: one look-up
                 * (fetched ahead), not three dependent ones. */
                if (p + 16 < t->len && !(t->e[p + 16].val & MINLSH__LSH_CHAIN))
                    MINLSH__PREFETCH(o->grank + t->e[p + 16].val);
                if (!(it & MINLSH__LSH_CHAIN) && o->grank[it] != MINLSH__LSH_NIL) {
                    o->run[nrun++] = o->grank[it];
                    continue;
                }
                while ((g = minlsh__lsh_bucket_next(ix, &it)) != MINLSH__LSH_NIL) {
                    uint32_t s;
                    for (s = minlsh__lsh_group_at(ix, g)->head; s != MINLSH__LSH_NIL;
                         s = minlsh__lsh_doc_at(ix, s)->next)
                        o->run[nrun++] = o->rank[s];
                }
            }
            minlsh__sort_u64(o->run, nrun);
            for (q = 0; q < nrun; q++) {
                uint8_t e[MINLSH__MAP_ENTRY];
                minlsh__store32le(e, tag);
                minlsh__store32le(e + 4, (uint32_t)o->run[q]);
                minlsh__blk_put(&bw, e, sizeof e);
            }
        }
    }
    minlsh__blk_put(&bw, o->meta->data, o->meta->len);
    if (bw.fill > 0) bw.sums[bw.nsums++] = minlsh__sum_final(&bw.cur);
    minlsh__sum_init(&ss);
    for (i = 0; i < bw.nsums; i++) {
        uint8_t b8[8];
        minlsh__store64le(b8, bw.sums[i]);
        minlsh__sum_update(&ss, b8, 8);
        minlsh__writer_put(w, b8, 8);
    }
    minlsh__writer_put64(w, minlsh__sum_final(&ss));
}

int minlsh_index_save_mapped(const minlsh_index *index, const char *path) {
    return minlsh__index_save_mapped_like(index, path, NULL);
}

int minlsh__index_save_mapped_like(const minlsh_index *index, const char *path,
                                   const char *like) {
    minlsh__mapped_out o;
    minlsh_index *tmp = NULL;
    const minlsh_index *ix;
    uint32_t *rank = NULL, *order = NULL, *grank = NULL;
    uint64_t *ids = NULL, *run = NULL, *sums = NULL, body;
    size_t i, nblocks, bytes;
    int rc;
    if (index == NULL || path == NULL) return MINLSH_E_NULL;
    o.meta = &index->meta;
    if (index->map != NULL && index->map->n == 0 && index->delta != NULL) {
        /* An empty file and its delta (a first add): the delta is the
         * index, no copy needed. */
        ix = index->delta;
    } else {
        rc = minlsh__lsh_unmapped(index, &tmp);
        if (rc != 0) return rc;
        ix = tmp != NULL ? tmp : index;
    }
    o.m = ix->count;
    if (ix->empty_group != MINLSH__LSH_NIL) o.m -= minlsh__lsh_group_at(ix, ix->empty_group)->count;
    body = (uint64_t)(8 + 4 * (size_t)ix->k) * ix->count +
           (uint64_t)MINLSH__MAP_ENTRY * ix->bands * o.m + o.meta->len;
    if (body > (uint64_t)SIZE_MAX / 2) {
        minlsh_index_free(tmp);
        return MINLSH_E_TOOBIG;
    }
    nblocks = (size_t)((body + ((uint64_t)1 << MINLSH__MAP_SHIFT) - 1) >> MINLSH__MAP_SHIFT);
    ids = (uint64_t *)minlsh__malloc(&ix->alloc, (ix->count > 0 ? ix->count : 1) * sizeof *ids);
    run = (uint64_t *)minlsh__malloc(&ix->alloc, (o.m > 0 ? o.m : 1) * sizeof *run);
    sums = (uint64_t *)minlsh__malloc(&ix->alloc, (nblocks > 0 ? nblocks : 1) * sizeof *sums);
    rc = minlsh__mul_size(&bytes, ix->n_slots > 0 ? ix->n_slots : 1, sizeof *rank);
    if (rc == 0) rank = (uint32_t *)minlsh__malloc(&ix->alloc, bytes);
    order = (uint32_t *)minlsh__malloc(&ix->alloc, (ix->count > 0 ? ix->count : 1) * sizeof *order);
    grank = (uint32_t *)minlsh__malloc(&ix->alloc,
                                       (ix->n_groups > 0 ? ix->n_groups : 1) * sizeof *grank);
    if (rc == 0 && (ids == NULL || run == NULL || sums == NULL || rank == NULL ||
                    order == NULL || grank == NULL))
        rc = MINLSH_E_NOMEM;
    if (rc == 0) {
        (void)minlsh_index_copy_ids(ix, ids, ix->count, NULL);
        for (i = 0; i < ix->count; i++) {
            uint32_t s = minlsh__lsh_find_id(ix, ids[i]), g = minlsh__lsh_doc_at(ix, s)->group;
            rank[s] = (uint32_t)i;
            order[i] = s;
            grank[g] = minlsh__lsh_group_at(ix, g)->count == 1 ? (uint32_t)i : MINLSH__LSH_NIL;
        }
        o.order = order;
        o.grank = grank;
        o.ix = ix;
        o.ids = ids;
        o.rank = rank;
        o.run = run;
        o.sums = sums;
        rc = minlsh__save_path(&ix->alloc, path, like, minlsh__mapped_write, &o);
    }
    minlsh__free(&ix->alloc, ids);
    minlsh__free(&ix->alloc, run);
    minlsh__free(&ix->alloc, sums);
    minlsh__free(&ix->alloc, rank);
    minlsh__free(&ix->alloc, order);
    minlsh__free(&ix->alloc, grank);
    minlsh_index_free(tmp);
    return rc;
}
