/*
 * The signature matrix: n signatures of k values, each document's k values
 * contiguous, appended in order; and its file format (docs/format.md for
 * the header and checksum, docs/minhash.md for the payload).
 * Readers may share a matrix; append and free need exclusive access.
 *
 * A matrix either owns its storage (new, load) or is a read-only view of a
 * mapped file (minlsh_sigmatrix_map): readers go through values and meta,
 * which point at the owned arrays or into the mapping; only an owning matrix
 * can be modified.
 */
#include "common/common.h"

struct minlsh_sigmatrix {
    minlsh_allocator alloc;
    uint32_t k;
    uint64_t seed;
    uint64_t config_id;
    size_t count; /* documents */
    size_t cap;   /* documents the storage can hold */
    const uint32_t *values; /* count * k values, document after document:
                               store, or inside the mapping */
    const uint8_t *meta;    /* application metadata, meta_len bytes (NULL if
                               0): meta_store, or inside the mapping */
    size_t meta_len;
    uint32_t *store;        /* owned values (cap documents), or NULL */
    uint8_t *meta_store;    /* owned metadata, or NULL */
    int readonly;           /* append and set_metadata refuse (MINLSH_E_STATE) */
    const void *map;        /* the file mapping (NULL if none), map_len bytes */
    size_t map_len;
};

/* Values converted to little-endian bytes per write, so the checksum and
 * the writer see few large pieces instead of one call per value. */
#define MINLSH__MX_CHUNK 1024

static int minlsh__matrix_create(minlsh_sigmatrix **out, uint32_t k,
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
    m->seed = seed;
    m->config_id = config_id;
    m->count = 0;
    m->cap = 0;
    m->values = NULL;
    m->meta = NULL;
    m->meta_len = 0;
    m->store = NULL;
    m->meta_store = NULL;
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
    return minlsh__matrix_create(out, minlsh_family_k(family),
                                 minlsh_family_seed(family), config_id, alloc);
}

void minlsh_sigmatrix_free(minlsh_sigmatrix *matrix) {
    if (matrix != NULL) {
        minlsh_allocator al = matrix->alloc;
        if (matrix->map != NULL) minlsh__file_unmap(matrix->map, matrix->map_len);
        minlsh__free(&al, matrix->store);
        minlsh__free(&al, matrix->meta_store);
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
        minlsh__matrix_fits(matrix->count + 1, matrix->k, matrix->meta_len) != 0)
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
    uint8_t *copy = NULL;
    if (matrix == NULL || (data == NULL && len > 0)) return MINLSH_E_NULL;
    if (matrix->readonly) return MINLSH_E_STATE;
    if ((uint64_t)len > MINLSH__METADATA_MAX ||
        minlsh__matrix_fits(matrix->count, matrix->k, len) != 0)
        return MINLSH_E_TOOBIG;
    if (len > 0) {
        /* Copy before freeing: data may point into the old metadata. */
        copy = (uint8_t *)minlsh__malloc(&matrix->alloc, len);
        if (copy == NULL) return MINLSH_E_NOMEM;
        memcpy(copy, data, len);
    }
    minlsh__free(&matrix->alloc, matrix->meta_store);
    matrix->meta_store = copy;
    matrix->meta = copy;
    matrix->meta_len = len;
    return 0;
}

int minlsh_sigmatrix_copy_metadata(const minlsh_sigmatrix *matrix, void *buf,
                              size_t cap, size_t *n_out) {
    if (matrix == NULL) return MINLSH_E_NULL;
    if (n_out != NULL) *n_out = matrix->meta_len;
    if (cap < matrix->meta_len) return MINLSH_E_BUFSIZE;
    if (matrix->meta_len == 0) return 0;
    if (buf == NULL) return MINLSH_E_NULL;
    memcpy(buf, matrix->meta, matrix->meta_len);
    return 0;
}

/* ---- files ----------------------------------------------------------------- */

static void minlsh__matrix_write(const minlsh_sigmatrix *m, minlsh__writer *w) {
    minlsh__header h;
    uint8_t chunk[MINLSH__MX_CHUNK * 4];
    size_t total = m->count * m->k, done = 0; /* fits: checked on append */
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MINLSH__MAGIC_MATRIX, 8);
    h.version = MINLSH__FORMAT_VERSION;
    h.k = m->k;
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
    minlsh__metadata_write(w, m->meta, m->meta_len);
    minlsh__trailer_write(w);
}

int minlsh_sigmatrix_save(const minlsh_sigmatrix *matrix, const char *path) {
    minlsh__writer w;
    int rc;
    if (matrix == NULL || path == NULL) return MINLSH_E_NULL;
    /* The header promises IO for a path that cannot be written; "" is one
     * (open gives ENOENT), not a range error. */
    if (path[0] == '\0') return MINLSH_E_IO;
    rc = minlsh__writer_init_file(&w, &matrix->alloc, path);
    if (rc != 0) return rc;
    minlsh__matrix_write(matrix, &w);
    return minlsh__writer_finish(&w, NULL);
}

int minlsh_sigmatrix_save_buffer(const minlsh_sigmatrix *matrix, void *buf,
                                 size_t cap, size_t *n_out) {
    minlsh__writer w;
    if (matrix == NULL) return MINLSH_E_NULL;
    if (buf == NULL && cap > 0) return MINLSH_E_NULL;
    minlsh__writer_init_buffer(&w, buf, cap);
    minlsh__matrix_write(matrix, &w);
    return minlsh__writer_finish(&w, n_out);
}

/* Validate a saved matrix (docs/format.md, "Validation on load", every
 * step, checksums included) and, when family is non-NULL, its fingerprint.
 * On success h, *payload and the metadata locate everything inside buf. */
static int minlsh__matrix_parse(const void *buf, size_t len, const minlsh__load *ld,
                                minlsh__header *h,
                                const uint8_t **payload, const uint8_t **meta,
                                size_t *meta_len) {
    const uint8_t *b = (const uint8_t *)buf;
    size_t per_item = 4;
    int rc;
    if (buf == NULL && len > 0) return MINLSH_E_NULL;
    /* The payload item size depends on k, which lives in the header being
     * validated: peek at it here; minlsh__header_read_meta verifies the header
     * checksum before it relies on the size, and rejects any k outside
     * 1..1024, so a damaged k never gets that far. */
    if (len >= MINLSH__HEADER_BYTES) {
        uint32_t k = minlsh__load32le(b + 16);
        if (k >= 1 && k <= MINLSH_FAMILY_K_MAX) per_item = 4 * (size_t)k;
    }
    rc = minlsh__header_read_meta(buf, len, MINLSH__MAGIC_MATRIX, per_item, h, payload,
                                  meta, meta_len);
    if (rc != 0) return rc;
    if (h->bands != 0 || h->rows != 0 || h->flags != 0) return MINLSH_E_CORRUPT;
    if (ld->family != NULL &&
        (h->k != minlsh_family_k(ld->family) || h->seed != minlsh_family_seed(ld->family) ||
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
    int rc = minlsh__matrix_create(&m, h->k, h->seed, h->config_id, alloc);
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
    if (meta_len > 0) {
        rc = minlsh_sigmatrix_set_metadata(m, meta, meta_len);
        if (rc != 0) {
            minlsh_sigmatrix_free(m);
            return rc;
        }
    }
    *out = m;
    return 0;
}

static int minlsh__matrix_load(minlsh_sigmatrix **out, const void *buf, size_t len,
                               const minlsh__load *ld) {
    const uint8_t *payload, *meta;
    minlsh__header h;
    size_t meta_len;
    int rc = minlsh__matrix_parse(buf, len, ld, &h, &payload, &meta, &meta_len);
    if (rc != 0) return rc;
    return minlsh__matrix_from_parsed(out, &h, payload, meta, meta_len, &ld->alloc);
}

int minlsh_sigmatrix_load_buffer(minlsh_sigmatrix **out, const void *buf,
                                 size_t len, const minlsh_load_options *opts) {
    minlsh__load ld;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    rc = minlsh__load_setup(&ld, opts);
    if (rc != 0) return rc;
    return minlsh__matrix_load(out, buf, len, &ld);
}

int minlsh_sigmatrix_load(minlsh_sigmatrix **out, const char *path,
                          const minlsh_load_options *opts) {
    minlsh__load ld;
    uint8_t *data;
    size_t len;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (path == NULL) return MINLSH_E_NULL;
    rc = minlsh__load_setup(&ld, opts);
    if (rc != 0) return rc;
    rc = minlsh__file_read(&ld.alloc, path, &data, &len);
    if (rc != 0) return rc;
    rc = minlsh__matrix_load(out, data, len, &ld);
    minlsh__free(&ld.alloc, data);
    return rc;
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
    if (rc == 0) rc = minlsh__matrix_create(&m, h.k, h.seed, h.config_id, &ld.alloc);
    if (rc != 0) {
        minlsh__file_unmap(data, len);
        return rc;
    }
    /* The payload starts 64 bytes into a page-aligned mapping: its 32-bit
     * values are aligned. */
    m->values = (size_t)h.count > 0 ? (const uint32_t *)(const void *)payload : NULL;
    m->count = (size_t)h.count;
    m->meta = meta_len > 0 ? meta : NULL;
    m->meta_len = meta_len;
    m->readonly = 1;
    m->map = data;
    m->map_len = len;
    *out = m;
    return 0;
}
