/*
 * The signature matrix: n signatures of k values, each document's k values
 * contiguous, appended in order; and its file format (docs/format.md for
 * the header and checksum, docs/minhash.md for the payload).
 * Readers may share a matrix; append and free need exclusive access.
 *
 * A matrix either owns its storage (new, load) or is a read-only view of a
 * mapped file (minlsh_sigmatrix_map): readers go through values and
 * meta.data, which point at the owned arrays or into the mapping; only an
 * owning matrix can be modified. Loading, saving and the metadata follow
 * the shape every saved handle shares (lib/common/saved.c).
 */
#include "common/common.h"

struct minlsh_sigmatrix {
    minlsh_allocator alloc;
    uint32_t k;
    uint32_t scheme; /* the family's MINLSH_SCHEME_*: the header's flags */
    uint64_t seed;
    uint64_t config_id;
    size_t count; /* documents */
    size_t cap;   /* documents the storage can hold */
    const uint32_t *values; /* count * k values, document after document:
                               store, or inside the mapping */
    minlsh__metadata meta;  /* owned, or inside the mapping */
    uint32_t *store;        /* owned values (cap documents), or NULL */
    int readonly;           /* append and set_metadata refuse (MINLSH_E_STATE) */
    const void *map;        /* the file mapping (NULL if none), map_len bytes */
    size_t map_len;
};

/* Values converted to little-endian bytes per write, so the checksum and
 * the writer see few large pieces instead of one call per value. */
#define MINLSH__MX_CHUNK 1024

static int minlsh__matrix_create(minlsh_sigmatrix **out, uint32_t k, uint32_t scheme,
                                 uint64_t seed, uint64_t config_id,
                                 const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_sigmatrix *m;
    int rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    m = (minlsh_sigmatrix *)minlsh__malloc(&al, sizeof *m);
    if (m == NULL) return MINLSH_E_NOMEM;
    m->alloc = al;
    m->k = k;
    m->scheme = scheme;
    m->seed = seed;
    m->config_id = config_id;
    m->count = 0;
    m->cap = 0;
    m->values = NULL;
    memset(&m->meta, 0, sizeof m->meta);
    m->store = NULL;
    m->readonly = 0;
    m->map = NULL;
    m->map_len = 0;
    *out = m;
    return 0;
}

int minlsh_sigmatrix_new(minlsh_sigmatrix **out, const minlsh_family *family,
                         uint64_t config_id, const minlsh_allocator *alloc) {
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (family == NULL) return MINLSH_E_NULL;
    return minlsh__matrix_create(out, minlsh_family_k(family), minlsh_family_scheme(family),
                                 minlsh_family_seed(family), config_id, alloc);
}

void minlsh_sigmatrix_free(minlsh_sigmatrix *matrix) {
    if (matrix != NULL) {
        minlsh_allocator al = matrix->alloc;
        if (matrix->map != NULL) minlsh__file_unmap(matrix->map, matrix->map_len);
        minlsh__free(&al, matrix->store);
        minlsh__metadata_free(&matrix->meta, &al);
        minlsh__free(&al, matrix);
    }
}

uint64_t minlsh_sigmatrix_count(const minlsh_sigmatrix *matrix) {
    return matrix != NULL ? (uint64_t)matrix->count : 0;
}

uint32_t minlsh_sigmatrix_k(const minlsh_sigmatrix *matrix) {
    return matrix != NULL ? matrix->k : 0;
}

uint64_t minlsh_sigmatrix_seed(const minlsh_sigmatrix *matrix) {
    return matrix != NULL ? matrix->seed : 0;
}

uint32_t minlsh_sigmatrix_scheme(const minlsh_sigmatrix *matrix) {
    return matrix != NULL ? matrix->scheme : 0;
}

uint64_t minlsh_sigmatrix_config_id(const minlsh_sigmatrix *matrix) {
    return matrix != NULL ? matrix->config_id : 0;
}

/* Whether a matrix of count documents of k values with meta_len bytes of
 * metadata is representable: in memory and as a file (64 + 4 k count + 8 +
 * meta_len + 8 bytes, which must fit a size_t for save_buffer and load). */
static int minlsh__matrix_fits(size_t count, uint32_t k, size_t meta_len) {
    size_t bytes;
    if (minlsh__mul_size(&bytes, count, (size_t)k * sizeof(uint32_t)) != 0 ||
        minlsh__add_size(&bytes, bytes, MINLSH__HEADER_BYTES + 16) != 0 ||
        minlsh__add_size(&bytes, bytes, meta_len) != 0)
        return MINLSH_E_TOOBIG;
    return 0;
}

int minlsh_sigmatrix_append(minlsh_sigmatrix *matrix, const uint32_t *sig,
                            size_t k_sig, uint64_t *pos_out) {
    void *p;
    int rc;
    if (matrix == NULL || sig == NULL) return MINLSH_E_NULL;
    if (k_sig != matrix->k) return MINLSH_E_PARAM;
    if (matrix->readonly) return MINLSH_E_STATE;
    if (matrix->count == SIZE_MAX ||
        minlsh__matrix_fits(matrix->count + 1, matrix->k, matrix->meta.len) != 0)
        return MINLSH_E_TOOBIG;
    p = matrix->store;
    /* reserve leaves store and cap untouched on failure. */
    rc = minlsh__reserve(&matrix->alloc, &p, &matrix->cap, matrix->count,
                         matrix->count + 1, (size_t)matrix->k * sizeof(uint32_t));
    if (rc != 0) return rc;
    matrix->store = (uint32_t *)p;
    matrix->values = matrix->store;
    memcpy(matrix->store + matrix->count * matrix->k, sig,
           (size_t)matrix->k * sizeof(uint32_t));
    if (pos_out != NULL) *pos_out = (uint64_t)matrix->count;
    matrix->count++;
    return 0;
}

const uint32_t *minlsh_sigmatrix_view_column(const minlsh_sigmatrix *matrix,
                                        uint64_t pos) {
    if (matrix == NULL || pos >= (uint64_t)matrix->count) return NULL;
    return matrix->values + (size_t)pos * matrix->k;
}

int minlsh_sigmatrix_copy_column(const minlsh_sigmatrix *matrix, uint64_t pos,
                         uint32_t *sig, size_t cap, size_t *n_out) {
    const uint32_t *col;
    if (matrix == NULL) return MINLSH_E_NULL;
    col = minlsh_sigmatrix_view_column(matrix, pos);
    if (col == NULL) return MINLSH_E_NOTFOUND;
    if (n_out != NULL) *n_out = matrix->k;
    if (cap < matrix->k) return MINLSH_E_BUFSIZE;
    if (sig == NULL) return MINLSH_E_NULL;
    memcpy(sig, col, (size_t)matrix->k * sizeof(uint32_t));
    return 0;
}

int minlsh_sigmatrix_estimate(double *out, const minlsh_sigmatrix *matrix,
                              uint64_t i, uint64_t j) {
    const uint32_t *a, *b;
    if (out == NULL || matrix == NULL) return MINLSH_E_NULL;
    a = minlsh_sigmatrix_view_column(matrix, i);
    b = minlsh_sigmatrix_view_column(matrix, j);
    if (a == NULL || b == NULL) return MINLSH_E_NOTFOUND;
    return minlsh_signature_estimate(out, a, b, matrix->k);
}

int minlsh_sigmatrix_set_metadata(minlsh_sigmatrix *matrix, const void *data,
                                  size_t len) {
    if (matrix == NULL || (data == NULL && len > 0)) return MINLSH_E_NULL;
    if (matrix->readonly) return MINLSH_E_STATE;
    if (minlsh__matrix_fits(matrix->count, matrix->k, len) != 0) return MINLSH_E_TOOBIG;
    return minlsh__metadata_set(&matrix->meta, &matrix->alloc, data, len);
}

int minlsh_sigmatrix_copy_metadata(const minlsh_sigmatrix *matrix, void *buf,
                              size_t cap, size_t *n_out) {
    if (matrix == NULL) return MINLSH_E_NULL;
    return minlsh__metadata_copy(&matrix->meta, buf, cap, n_out);
}

/* ---- files ----------------------------------------------------------------- */

static void minlsh__matrix_write(const void *ctx, minlsh__writer *w) {
    const minlsh_sigmatrix *m = (const minlsh_sigmatrix *)ctx;
    minlsh__header h;
    uint8_t chunk[MINLSH__MX_CHUNK * 4];
    size_t total = m->count * m->k, done = 0; /* fits: checked on append */
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MINLSH__MAGIC_MATRIX, 8);
    h.version = MINLSH__FORMAT_VERSION;
    h.k = m->k;
    h.flags = m->scheme;
    h.seed = m->seed;
    h.config_id = m->config_id;
    h.count = (uint64_t)m->count;
    minlsh__header_write(w, &h);
    while (done < total) {
        size_t n = total - done < MINLSH__MX_CHUNK ? total - done : MINLSH__MX_CHUNK, i;
        for (i = 0; i < n; i++) minlsh__store32le(chunk + 4 * i, m->values[done + i]);
        minlsh__writer_put(w, chunk, 4 * n);
        done += n;
    }
    minlsh__metadata_write(w, m->meta.data, m->meta.len);
    minlsh__trailer_write(w);
}

int minlsh_sigmatrix_save(const minlsh_sigmatrix *matrix, const char *path) {
    if (matrix == NULL) return MINLSH_E_NULL;
    return minlsh__save_path(&matrix->alloc, path, NULL, minlsh__matrix_write, matrix);
}

int minlsh_sigmatrix_save_buffer(const minlsh_sigmatrix *matrix, void *buf,
                                 size_t cap, size_t *n_out) {
    if (matrix == NULL) return MINLSH_E_NULL;
    return minlsh__save_buffer(buf, cap, n_out, minlsh__matrix_write, matrix);
}

/* Validate a saved matrix (docs/format.md, "Validation on load", every
 * step, checksums included) and, when family is non-NULL, its fingerprint.
 * On success h, *payload and the metadata locate everything inside buf. */
static int minlsh__matrix_parse(const void *buf, size_t len, const minlsh__load *ld,
                                minlsh__header *h,
                                const uint8_t **payload, const uint8_t **meta,
                                size_t *meta_len) {
    int rc = minlsh__header_read_meta(buf, len, MINLSH__MAGIC_MATRIX, 0, 4, h, payload, meta,
                                      meta_len);
    if (rc != 0) return rc;
    if (h->bands != 0 || h->rows != 0) return MINLSH_E_CORRUPT;
    if (ld->family != NULL &&
        (h->k != minlsh_family_k(ld->family) || h->seed != minlsh_family_seed(ld->family) ||
         h->flags != minlsh_family_scheme(ld->family) ||
         h->config_id != ld->config_id))
        return MINLSH_E_MISMATCH;
    return 0;
}

/* An owning matrix with a copy of the parsed content. */
static int minlsh__matrix_from_parsed(minlsh_sigmatrix **out, const minlsh__header *h,
                                      const uint8_t *payload, const uint8_t *meta,
                                      size_t meta_len, const minlsh_allocator *alloc) {
    minlsh_sigmatrix *m;
    size_t total, i;
    int rc = minlsh__matrix_create(&m, h->k, h->flags, h->seed, h->config_id, alloc);
    if (rc != 0) return rc;
    /* header_read_meta proved 64 + count * 4k + 8 + meta_len + 8 == len, so
     * nothing overflows and no allocation is larger than the input. */
    total = (size_t)h->count * h->k;
    if (total > 0) {
        m->store = (uint32_t *)minlsh__malloc(&m->alloc, total * sizeof(uint32_t));
        if (m->store == NULL) {
            minlsh_sigmatrix_free(m);
            return MINLSH_E_NOMEM;
        }
        for (i = 0; i < total; i++) m->store[i] = minlsh__load32le(payload + 4 * i);
        m->values = m->store;
        m->count = (size_t)h->count;
        m->cap = m->count;
    }
    rc = minlsh__metadata_set(&m->meta, &m->alloc, meta, meta_len);
    if (rc != 0) {
        minlsh_sigmatrix_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static int minlsh__matrix_load(void *out, const void *buf, size_t len,
                               const minlsh__load *ld) {
    const uint8_t *payload, *meta;
    minlsh__header h;
    size_t meta_len;
    int rc = minlsh__matrix_parse(buf, len, ld, &h, &payload, &meta, &meta_len);
    if (rc != 0) return rc;
    return minlsh__matrix_from_parsed((minlsh_sigmatrix **)out, &h, payload, meta, meta_len,
                                      &ld->alloc);
}

int minlsh_sigmatrix_load_buffer(minlsh_sigmatrix **out, const void *buf,
                                 size_t len, const minlsh_load_options *opts) {
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    return minlsh__load_buffer(out, buf, len, opts, minlsh__matrix_load);
}

int minlsh_sigmatrix_load(minlsh_sigmatrix **out, const char *path,
                          const minlsh_load_options *opts) {
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    return minlsh__load_path(out, path, opts, minlsh__matrix_load);
}

/* The values of a mapped file can be used in place only where the CPU's
 * byte order is the file's. */
static int minlsh__little_endian(void) {
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

int minlsh_sigmatrix_map(minlsh_sigmatrix **out, const char *path,
                         const minlsh_load_options *opts) {
    const uint8_t *data, *payload, *meta;
    minlsh__header h;
    minlsh__load ld;
    minlsh_sigmatrix *m = NULL;
    size_t len, meta_len;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (path == NULL) return MINLSH_E_NULL;
    rc = minlsh__load_setup(&ld, opts);
    if (rc != 0) return rc;
    rc = minlsh__file_map(path, &data, &len);
    if (rc != 0) return rc;
    rc = minlsh__matrix_parse(data, len, &ld, &h, &payload, &meta, &meta_len);
    if (rc == 0 && !minlsh__little_endian()) {
        /* Big-endian: a private converted copy, read-only all the same. */
        rc = minlsh__matrix_from_parsed(&m, &h, payload, meta, meta_len, &ld.alloc);
        minlsh__file_unmap(data, len);
        if (rc != 0) return rc;
        m->readonly = 1;
        *out = m;
        return 0;
    }
    if (rc == 0) rc = minlsh__matrix_create(&m, h.k, h.flags, h.seed, h.config_id, &ld.alloc);
    if (rc != 0) {
        minlsh__file_unmap(data, len);
        return rc;
    }
    /* The payload starts 64 bytes into a page-aligned mapping: its 32-bit
     * values are aligned. */
    m->values = (size_t)h.count > 0 ? (const uint32_t *)(const void *)payload : NULL;
    m->count = (size_t)h.count;
    minlsh__metadata_borrow(&m->meta, &m->alloc, meta, meta_len);
    m->readonly = 1;
    m->map = data;
    m->map_len = len;
    *out = m;
    return 0;
}
