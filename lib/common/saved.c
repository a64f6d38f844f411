/*
 * What every saved handle (matrix, index) shares: the load options, the
 * loaders' shape (read the whole file, then parse the buffer), the savers'
 * shape (a file written atomically, or a caller buffer), and the
 * application metadata blob each handle carries. The handles decide what
 * their payload is; these decide everything around it, once.
 */
#include "common.h"

/* ---- load options ------------------------------------------------------- */

int minlsh_load_options_init(minlsh_load_options *opts, uint32_t version) {
    if (opts == NULL) return MINLSH_E_NULL;
    if (version != 1) return MINLSH_E_VERSION;
    memset(opts, 0, sizeof *opts);
    opts->version = version;
    return 0;
}

int minlsh__load_setup(minlsh__load *dst, const minlsh_load_options *opts) {
    if (opts == NULL) {
        dst->family = NULL;
        dst->config_id = 0;
        return minlsh__alloc_setup(&dst->alloc, NULL);
    }
    if (opts->version != 1) return MINLSH_E_VERSION;
    if (opts->reserved != 0) return MINLSH_E_PARAM;
    dst->family = opts->family;
    dst->config_id = opts->config_id;
    return minlsh__alloc_setup(&dst->alloc, opts->alloc);
}

/* ---- loading and saving --------------------------------------------------- */

int minlsh__load_buffer(void *out, const void *buf, size_t len,
                        const minlsh_load_options *opts, minlsh__parse_fn parse) {
    minlsh__load ld;
    int rc;
    if (buf == NULL && len > 0) return MINLSH_E_NULL;
    rc = minlsh__load_setup(&ld, opts);
    if (rc != 0) return rc;
    return parse(out, buf, len, &ld);
}

int minlsh__load_path(void *out, const char *path, const minlsh_load_options *opts,
                      minlsh__parse_fn parse) {
    minlsh__load ld;
    uint8_t *data;
    size_t len;
    int rc;
    if (path == NULL) return MINLSH_E_NULL;
    rc = minlsh__load_setup(&ld, opts);
    if (rc != 0) return rc;
    rc = minlsh__file_read(&ld.alloc, path, &data, &len);
    if (rc != 0) return rc;
    rc = parse(out, data, len, &ld);
    minlsh__free(&ld.alloc, data);
    return rc;
}

int minlsh__save_path(const minlsh_allocator *a, const char *path, const char *like,
                      minlsh__write_fn write, const void *ctx) {
    minlsh__writer w;
    int rc;
    if (path == NULL) return MINLSH_E_NULL;
    rc = minlsh__writer_init_file(&w, a, path, like);
    if (rc != 0) return rc;
    write(ctx, &w);
    return minlsh__writer_finish(&w, NULL);
}

/* minlsh_file_save's writer: the caller's bytes as they are. */
typedef struct minlsh__raw_bytes {
    const void *data;
    size_t len;
} minlsh__raw_bytes;

static void minlsh__raw_write(const void *ctx, minlsh__writer *w) {
    const minlsh__raw_bytes *r = (const minlsh__raw_bytes *)ctx;
    minlsh__writer_put(w, r->data, r->len);
}

int minlsh_file_save(const char *path, const void *data, size_t len,
                     const minlsh_allocator *alloc) {
    minlsh__raw_bytes r;
    minlsh_allocator a;
    int rc;
    if (path == NULL || (data == NULL && len > 0)) return MINLSH_E_NULL;
    if ((rc = minlsh__alloc_setup(&a, alloc)) != 0) return rc;
    r.data = data;
    r.len = len;
    return minlsh__save_path(&a, path, NULL, minlsh__raw_write, &r);
}

int minlsh__save_buffer(void *buf, size_t cap, size_t *n_out, minlsh__write_fn write,
                        const void *ctx) {
    minlsh__writer w;
    if (buf == NULL && cap > 0) return MINLSH_E_NULL;
    minlsh__writer_init_buffer(&w, buf, cap);
    write(ctx, &w);
    return minlsh__writer_finish(&w, n_out);
}

/* ---- metadata ------------------------------------------------------------- */

int minlsh__metadata_set(minlsh__metadata *m, const minlsh_allocator *a, const void *data,
                         size_t len) {
    uint8_t *copy = NULL;
    if (data == NULL && len > 0) return MINLSH_E_NULL;
    if ((uint64_t)len > MINLSH__METADATA_MAX) return MINLSH_E_TOOBIG;
    if (len > 0) {
        /* Copy before freeing: data may point into the old metadata. */
        copy = (uint8_t *)minlsh__malloc(a, len);
        if (copy == NULL) return MINLSH_E_NOMEM;
        memcpy(copy, data, len);
    }
    minlsh__free(a, m->owned);
    m->owned = copy;
    m->data = copy;
    m->len = len;
    return 0;
}

void minlsh__metadata_borrow(minlsh__metadata *m, const minlsh_allocator *a, const void *data,
                             size_t len) {
    minlsh__free(a, m->owned);
    m->owned = NULL;
    m->data = len > 0 ? (const uint8_t *)data : NULL;
    m->len = len;
}

int minlsh__metadata_copy(const minlsh__metadata *m, void *buf, size_t cap, size_t *n_out) {
    if (n_out != NULL) *n_out = m->len;
    if (cap < m->len) return MINLSH_E_BUFSIZE;
    if (m->len == 0) return 0;
    if (buf == NULL) return MINLSH_E_NULL;
    memcpy(buf, m->data, m->len);
    return 0;
}

void minlsh__metadata_free(minlsh__metadata *m, const minlsh_allocator *a) {
    minlsh__free(a, m->owned);
    m->owned = NULL;
    m->data = NULL;
    m->len = 0;
}
