/*
 * Saving and loading an index (docs/format.md): the common header, then per
 * document in ascending id order its LE64 id and k LE32 values, then the
 * metadata section and the trailer. Buckets are not stored; load rebuilds
 * them, so the same documents always give the same bytes.
 */
#include "lsh.h"

/* The live ids, ascending, in a new array of ix->count entries. */
static int minlsh__sorted_ids(const minlsh_index *ix, uint64_t **out) {
    uint64_t *ids;
    *out = NULL;
    ids = (uint64_t *)minlsh__malloc(&ix->alloc, (ix->count > 0 ? ix->count : 1) * sizeof *ids);
    if (ids == NULL) return MINLSH_E_NOMEM;
    (void)minlsh_index_copy_ids(ix, ids, ix->count, NULL);
    *out = ids;
    return 0;
}

/* What minlsh__index_write needs: the index and its ids, ascending. */
typedef struct minlsh__index_out {
    const minlsh_index *ix;
    const uint64_t *ids;
} minlsh__index_out;

void minlsh__lsh_put_record(uint64_t id, const uint32_t *sig, uint32_t k,
                            void (*put)(void *ctx, const void *p, size_t n), void *ctx) {
    uint8_t piece[8 + 4 * MINLSH__K_STACK], *at = piece + 8;
    uint32_t v;
    minlsh__store64le(piece, id);
    for (v = 0; v < k; v++) {
        if (at == piece + sizeof piece) {
            put(ctx, piece, sizeof piece);
            at = piece;
        }
        minlsh__store32le(at, sig[v]);
        at += 4;
    }
    put(ctx, piece, (size_t)(at - piece));
}

static void minlsh__index_put(void *w, const void *p, size_t n) {
    minlsh__writer_put((minlsh__writer *)w, p, n);
}

static void minlsh__index_write(const void *ctx, minlsh__writer *w) {
    const minlsh_index *ix = ((const minlsh__index_out *)ctx)->ix;
    const uint64_t *ids = ((const minlsh__index_out *)ctx)->ids;
    minlsh__header h;
    size_t i;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MINLSH__MAGIC_INDEX, 8);
    h.version = MINLSH__FORMAT_VERSION;
    h.k = ix->k;
    h.bands = ix->bands;
    h.rows = ix->rows;
    h.flags = ix->scheme;
    h.seed = ix->seed;
    h.config_id = ix->config_id;
    h.count = ix->count;
    minlsh__header_write(w, &h);
    for (i = 0; i < ix->count; i++) {
        uint32_t slot = minlsh__lsh_find_id(ix, ids[i]);
        const uint32_t *sig = minlsh__lsh_gsig(ix, minlsh__lsh_doc_at(ix, slot)->group);
        minlsh__lsh_put_record(ids[i], sig, ix->k, minlsh__index_put, w);
    }
    minlsh__metadata_write(w, ix->meta.data, ix->meta.len);
    minlsh__trailer_write(w);
}

int minlsh_index_save(const minlsh_index *index, const char *path) {
    minlsh__index_out o;
    minlsh_index *tmp;
    uint64_t *ids;
    int rc;
    if (index == NULL || path == NULL) return MINLSH_E_NULL;
    if ((rc = minlsh__lsh_unmapped(index, &tmp)) != 0) return rc;
    if (tmp != NULL) index = tmp;
    rc = minlsh__sorted_ids(index, &ids);
    if (rc == 0) {
        o.ix = index;
        o.ids = ids;
        rc = minlsh__save_path(&index->alloc, path, NULL, minlsh__index_write, &o);
        minlsh__free(&index->alloc, ids);
    }
    minlsh_index_free(tmp);
    return rc;
}

int minlsh_index_save_buffer(const minlsh_index *index, void *buf, size_t cap,
                             size_t *n_out) {
    minlsh__index_out o;
    uint64_t *ids;
    int rc;
    minlsh_index *tmp;
    if (index == NULL || (buf == NULL && cap > 0)) return MINLSH_E_NULL;
    if ((rc = minlsh__lsh_unmapped(index, &tmp)) != 0) return rc;
    if (tmp != NULL) index = tmp;
    rc = minlsh__sorted_ids(index, &ids);
    if (rc == 0) {
        o.ix = index;
        o.ids = ids;
        rc = minlsh__save_buffer(buf, cap, n_out, minlsh__index_write, &o);
        minlsh__free(&index->alloc, ids);
    }
    minlsh_index_free(tmp);
    return rc;
}

int minlsh__lsh_from_records(minlsh_index **out, const minlsh__header *h,
                             const uint8_t *payload, const uint8_t *meta, size_t meta_len,
                             const minlsh__load *ld) {
    const minlsh_family *family = ld->family;
    minlsh_index *ix;
    size_t item = 8 + 4 * (size_t)h->k, i, n;
    uint32_t v;
    uint32_t stack[MINLSH__K_STACK], *sig;
    minlsh__lsh_batch bt;
    int rc;
    if (h->bands == 0 || h->rows == 0 || (uint64_t)h->bands * h->rows > h->k)
        return MINLSH_E_CORRUPT;
    if (h->count > MINLSH__LSH_MAX_DOCS) return MINLSH_E_TOOBIG;
    n = (size_t)h->count;
    for (i = 1; i < n; i++)
        if (minlsh__load64le(payload + i * item) <= minlsh__load64le(payload + (i - 1) * item))
            return MINLSH_E_CORRUPT;
    if (family != NULL &&
        (minlsh_family_k(family) != h->k || minlsh_family_seed(family) != h->seed ||
         minlsh_family_scheme(family) != h->flags ||
         ld->config_id != h->config_id))
        return MINLSH_E_MISMATCH;
    rc = minlsh__lsh_index_create(&ix, h->k, h->flags, h->seed, h->config_id, h->bands, h->rows,
                                  &ld->alloc);
    if (rc != 0) return rc;
    sig = (uint32_t *)minlsh__kbuf_get(&ix->alloc, stack, MINLSH__K_STACK, h->k, sizeof *sig);
    rc = sig == NULL ? MINLSH_E_NOMEM : minlsh__lsh_reserve(ix, n);
    if (rc == 0) rc = minlsh__metadata_set(&ix->meta, &ix->alloc, meta, meta_len);
    minlsh__lsh_batch_begin(ix, &bt);
    for (i = 0; i < n && rc == 0; i++) {
        const uint8_t *p = payload + i * item;
        for (v = 0; v < h->k; v++) sig[v] = minlsh__load32le(p + 8 + 4 * (size_t)v);
        rc = minlsh__lsh_insert(ix, minlsh__load64le(p), sig);
        if (rc == 0) minlsh__lsh_batch_sample(ix, &bt, i + 1, n);
    }
    if (sig != NULL) minlsh__kbuf_put(&ix->alloc, stack, sig);
    if (rc != 0) {
        minlsh_index_free(ix);
        return rc;
    }
    *out = ix;
    return 0;
}

int minlsh__lsh_parse(void *out, const void *buf, size_t len,
                               const minlsh__load *ld) {
    const uint8_t *payload, *meta;
    minlsh__header h;
    size_t meta_len;
    int rc = minlsh__header_parse(buf, len, MINLSH__MAGIC_INDEX, MINLSH__INDEX_VERSION_MAPPED,
                                  &h);
    if (rc != 0) return rc;
    if (h.version == MINLSH__INDEX_VERSION_MAPPED) {
        rc = minlsh__lsh_parse_v2((minlsh_index **)out, buf, len, ld);
    } else {
        rc = minlsh__header_read_meta(buf, len, MINLSH__MAGIC_INDEX, 8, 4, &h, &payload, &meta,
                                      &meta_len);
        if (rc == 0)
            rc = minlsh__lsh_from_records((minlsh_index **)out, &h, payload, meta, meta_len, ld);
    }
    if (rc == 0) {
        /* Where it came from: a journal beside the file names it. */
        minlsh_index *ix = *(minlsh_index **)out;
        ix->file_tag = minlsh__load64le((const uint8_t *)buf + len - 8);
        ix->file_bytes = len;
    }
    return rc;
}

int minlsh_index_load_buffer(minlsh_index **out, const void *buf, size_t len,
                             const minlsh_load_options *opts) {
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    return minlsh__load_buffer(out, buf, len, opts, minlsh__lsh_parse);
}

int minlsh__lsh_note_file(minlsh_index **out, const char *path) {
    minlsh_index *ix = *out;
    if (minlsh__path_resolve(&ix->alloc, path, &ix->file_path) != 0) {
        minlsh_index_free(ix);
        *out = NULL;
        return MINLSH_E_NOMEM;
    }
    return 0;
}

int minlsh_index_load(minlsh_index **out, const char *path,
                      const minlsh_load_options *opts) {
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    rc = minlsh__load_path(out, path, opts, minlsh__lsh_parse);
    return rc == 0 ? minlsh__lsh_note_file(out, path) : rc;
}
