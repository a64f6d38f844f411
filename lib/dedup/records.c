/*
 * What every stage of the engine stands on: the temporary files (opened on
 * first use) and their errors, the budget's shares, the engine's pool with
 * the spare record chunks it makes in the background, the records written
 * (in chunks, or through a buffer to the data file) with the per-document
 * arrays that point at them, and the records read back.
 *
 * Memory: the spare chunks, within the records' share of the budget; the
 * data file's write buffer (1 MiB at most). Time: a record in memory is
 * read in place; one in the data file costs a read (none while it is
 * still in the write buffer).
 */
#include "dedup.h"

#include <errno.h>

/* Temporary files are made when first needed, so that an engine that never
 * passes its budget never touches tmpdir. Workers (candidate runs) may be
 * the first: the mutex makes that safe. */
int minlsh__dedup_file(minlsh_dedup *d, minlsh__tmpfile *f) {
    int rc = 0;
    pthread_mutex_lock(&d->file_mu);
    if (f->fd < 0) rc = minlsh__tmpfile_open(f, d->tmpdir);
    pthread_mutex_unlock(&d->file_mu);
    return rc;
}

int minlsh__dedup_io_result(minlsh_dedup *d, int rc) {
    minlsh__tmpfile *files[4];
    int err = 0;
    size_t i;
    if (rc != MINLSH_E_IO) return rc;
    files[0] = &d->data;
    files[1] = &d->runs_file;
    files[2] = &d->cand_file;
    files[3] = &d->dec_file;
    for (i = 0; i < 4; i++) {
        if (err == 0) err = minlsh__tmpfile_errno(files[i]);
        files[i]->err = 0;
    }
    if (err != 0) errno = err;
    return rc;
}

uint64_t minlsh__dedup_share(const minlsh_dedup *d, unsigned sixteenths) {
    return d->opts.memory == 0 ? UINT64_MAX : d->opts.memory / 16 * sixteenths;
}

void minlsh__dedup_temp_peak(minlsh_dedup *d) {
    uint64_t now = minlsh__tmpfile_size(&d->data) + minlsh__tmpfile_size(&d->runs_file) +
                   minlsh__tmpfile_size(&d->cand_file) + minlsh__tmpfile_size(&d->dec_file);
    if (now > d->temp_peak) d->temp_peak = now;
}

/* ---- the pool and the spare chunks ---------------------------------------------- */

minlsh__pool *minlsh__dedup_pool(minlsh_dedup *d) {
    minlsh__dedup_chunks *c = &d->chunks;
    if (d->pool_shared) return d->pool; /* never left busy between calls */
    if (d->pool == NULL) (void)minlsh__pool_new(&d->pool, &d->alloc, d->opts.threads);
    if (d->pool_busy) {
        (void)minlsh__pool_wait(d->pool);
        d->pool_busy = 0;
        while (c->n_incoming > 0) {
            uint8_t *p = c->incoming[--c->n_incoming];
            if (c->n_spare < MINLSH__DEDUP_SPARE) {
                c->spare[c->n_spare++] = p;
                c->bytes += MINLSH__DEDUP_CHUNK_BYTES;
            } else {
                minlsh__free(&d->alloc, p);
            }
        }
    }
    return d->pool;
}

/* The background run: only its own fields (incoming) are written. Only
 * worker 0 can be the caller, and it is elsewhere; a pool without threads
 * does it at the wait, which costs the caller what it would have anyway. */
static int minlsh__dedup_prepare_run(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh_dedup *d = (minlsh_dedup *)ctx;
    minlsh__dedup_chunks *c = &d->chunks;
    (void)worker;
    (void)begin;
    (void)end;
    while (c->n_incoming < c->want_incoming) {
        uint8_t *p = (uint8_t *)minlsh__malloc_plain(&d->alloc, MINLSH__DEDUP_CHUNK_BYTES);
        if (p == NULL) break; /* only a head start: the adding thread will try */
        minlsh__prefault(p, MINLSH__DEDUP_CHUNK_BYTES);
        c->incoming[c->n_incoming++] = p;
    }
    return 0;
}

void minlsh__dedup_chunks_prepare(minlsh_dedup *d, size_t want) {
    minlsh__pool *pool = minlsh__dedup_pool(d);
    minlsh__dedup_chunks *c = &d->chunks;
    uint64_t share = minlsh__dedup_share(d, 1);
    /* Within the records' share of the budget, spares included. */
    uint64_t room = share > c->bytes ? (share - c->bytes) / MINLSH__DEDUP_CHUNK_BYTES : 0;
    /* A shared pool is the caller's between the engine's calls: nothing
     * may run on it in the background. */
    if (d->records_in_file || d->pool_shared) return;
    if (want > room) want = (size_t)room;
    if (want > MINLSH__DEDUP_SPARE - c->n_spare) want = MINLSH__DEDUP_SPARE - c->n_spare;
    if (pool == NULL || minlsh__pool_size(pool) < 2 || want == 0) return;
    c->want_incoming = want;
    minlsh__pool_start(pool, 1, 1, minlsh__dedup_prepare_run, d);
    d->pool_busy = 1;
}

/* ---- writing the records ------------------------------------------------------ */

int minlsh__dedup_chunk_take(minlsh_dedup *d, size_t n, uint8_t **out) {
    minlsh__dedup_chunks *c = &d->chunks;
    n = (n + 7) & ~(size_t)7;
    if (c->n == 0 || c->size - c->used < n) {
        size_t size = n > MINLSH__DEDUP_CHUNK_BYTES ? n : MINLSH__DEDUP_CHUNK_BYTES;
        uint8_t *p;
        void *v = c->v;
        int rc = minlsh__reserve(&d->alloc, &v, &c->cap, c->n, c->n + 1, sizeof *c->v);
        c->v = (uint8_t **)v;
        if (rc != 0) return rc;
        /* What the background has made so far is collected first. */
        if (size == MINLSH__DEDUP_CHUNK_BYTES && c->n_spare == 0 && d->pool_busy)
            (void)minlsh__dedup_pool(d);
        if (size == MINLSH__DEDUP_CHUNK_BYTES && c->n_spare > 0) {
            p = c->spare[--c->n_spare];
            c->faulted = size; /* made in the background */
        } else {
            p = (uint8_t *)minlsh__malloc_plain(&d->alloc, size);
            if (p == NULL) return MINLSH_E_NOMEM;
            c->bytes += size;
            c->faulted = 0;
        }
        c->v[c->n++] = p;
        c->used = 0;
        c->size = size;
        /* Out of spares (before the first batch is banded, or when one
         * batch took more than the last): a few more in the background. */
        if (size == MINLSH__DEDUP_CHUNK_BYTES && c->n_spare == 0 && !d->pool_busy)
            minlsh__dedup_chunks_prepare(d, MINLSH__DEDUP_SPARE / 4);
    }
    /* A fresh chunk's pages are made a window ahead of the writer: at once
     * (minlsh__prefault), yet still in the cache when the records land. */
    if (c->used + n > c->faulted) {
        size_t to = c->used + n + MINLSH__DEDUP_FAULT_AHEAD;
        if (to > c->size) to = c->size;
        minlsh__prefault(c->v[c->n - 1] + c->faulted, to - c->faulted);
        c->faulted = to;
    }
    *out = c->v[c->n - 1] + c->used;
    c->used += n;
    c->batch_bytes += n;
    return 0;
}

int minlsh__dedup_wflush(minlsh_dedup *d) {
    int rc = 0;
    if (d->wlen > 0) rc = minlsh__tmpfile_append(&d->data, d->wbuf, d->wlen, NULL);
    if (rc != 0) return rc;
    d->wbase += d->wlen;
    d->wlen = 0;
    return 0;
}

/* Append the n bytes of parts p[0..parts) to the data file, contiguous;
 * *off receives where they start. */
static int minlsh__dedup_wput(minlsh_dedup *d, const void *const *p, const size_t *n, int parts,
                              uint64_t *off) {
    size_t total = 0;
    int i, rc;
    for (i = 0; i < parts; i++) total += n[i];
    if (d->wlen + total > d->wcap && (rc = minlsh__dedup_wflush(d)) != 0) return rc;
    if (total > d->wcap) { /* larger than the buffer: straight to the file */
        *off = d->wbase;
        for (i = 0; i < parts; i++) {
            if ((rc = minlsh__tmpfile_append(&d->data, p[i], n[i], NULL)) != 0) return rc;
            d->wbase += n[i];
        }
        return 0;
    }
    *off = d->wbase + d->wlen;
    for (i = 0; i < parts; i++) {
        if (n[i] > 0) memcpy(d->wbuf + d->wlen, p[i], n[i]);
        d->wlen += n[i];
    }
    return 0;
}

int minlsh__dedup_to_file(minlsh_dedup *d, size_t bytes) {
    /* Past the share the records go to the file for good: a new chunk
     * would pass it (the last one is filled first). */
    if (!d->records_in_file && d->opts.memory != 0 &&
        (d->chunks.n == 0 || d->chunks.size - d->chunks.used < ((bytes + 7) & ~(size_t)7)) &&
        d->chunks.bytes + (bytes > MINLSH__DEDUP_CHUNK_BYTES ? bytes : MINLSH__DEDUP_CHUNK_BYTES) >
            minlsh__dedup_share(d, 1))
        d->records_in_file = 1;
    return d->records_in_file;
}

int minlsh__dedup_data_start(minlsh_dedup *d) {
    uint64_t m = d->opts.memory / 16;
    size_t cap = m < 4096 ? 4096 : m > (1u << 20) ? (1u << 20) : (size_t)m;
    int rc;
    if (d->wbuf != NULL) return 0;
    if ((rc = minlsh__dedup_file(d, &d->data)) != 0) return rc;
    d->wbuf = (uint8_t *)minlsh__malloc(&d->alloc, cap);
    if (d->wbuf == NULL) return MINLSH_E_NOMEM;
    d->wcap = cap;
    return 0;
}

int minlsh__dedup_store(minlsh_dedup *d, const uint8_t *fp, const void *body, size_t body_bytes,
                        uint64_t n, uint64_t *at) {
    minlsh__dedup_rec head;
    size_t bytes = sizeof head + body_bytes;
    int rc;
    memcpy(head.fp, fp, sizeof head.fp);
    head.n = n;
    if (!minlsh__dedup_to_file(d, bytes)) {
        uint8_t *p;
        if ((rc = minlsh__dedup_chunk_take(d, bytes, &p)) != 0) return rc;
        memcpy(p, &head, sizeof head);
        if (body_bytes > 0) memcpy(p + sizeof head, body, body_bytes);
        *at = (uint64_t)(uintptr_t)p;
    } else {
        const void *parts[2];
        size_t lens[2];
        if ((rc = minlsh__dedup_data_start(d)) != 0) return rc;
        uint64_t off;
        parts[0] = &head;
        lens[0] = sizeof head;
        parts[1] = body;
        lens[1] = body_bytes;
        if ((rc = minlsh__dedup_wput(d, parts, lens, 2, &off)) != 0) return rc;
        *at = off | MINLSH__DEDUP_IN_FILE;
    }
    return 0;
}

/* A bigger copy of the n-element array *p (elem bytes each), of m. */
static int minlsh__dedup_regrow(minlsh_dedup *d, void **p, size_t n, size_t m, size_t elem) {
    void *q = minlsh__malloc(&d->alloc, m * elem);
    if (q == NULL) return MINLSH_E_NOMEM;
    if (n > 0) memcpy(q, *p, n * elem);
    minlsh__free(&d->alloc, *p);
    *p = q;
    return 0;
}

/* An engine for a few documents does not hold a batch's worth of
 * signatures: the pending arrays grow by doubling. */
int minlsh__dedup_pend_grow(minlsh_dedup *d) {
    size_t n = d->pend_held, m = n ? n * 2 : 256;
    void *docs = d->pend_docs, *fps = d->pend_fps, *sigs = d->pend_sigs;
    int rc;
    if (m > d->pend_cap) m = d->pend_cap;
    rc = minlsh__dedup_regrow(d, &docs, n, m, sizeof *d->pend_docs);
    d->pend_docs = (uint32_t *)docs;
    if (rc == 0) rc = minlsh__dedup_regrow(d, &fps, n, m, sizeof *d->pend_fps);
    d->pend_fps = (minlsh__kv *)fps;
    if (rc == 0)
        rc = minlsh__dedup_regrow(d, &sigs, n * d->sig_values, m * d->sig_values,
                                  sizeof *d->pend_sigs);
    d->pend_sigs = (uint32_t *)sigs;
    if (rc == 0) d->pend_held = m;
    return rc;
}

int minlsh__dedup_docs_reserve(minlsh_dedup *d, size_t m) {
    size_t cap = d->cap_docs, cap2 = d->cap_docs;
    void *p = d->rec;
    int rc;
    if (d->cap_docs - d->n_docs >= m) return 0;
    rc = minlsh__reserve(&d->alloc, &p, &cap, d->n_docs, d->n_docs + m, sizeof *d->rec);
    d->rec = (uint64_t *)p;
    if (rc != 0) return rc;
    if (d->opts.keep == MINLSH_KEEP_LONGEST) {
        p = d->lengths;
        rc = minlsh__reserve(&d->alloc, &p, &cap2, d->n_docs, cap, sizeof *d->lengths);
        d->lengths = (uint64_t *)p;
        if (rc != 0) return rc;
    }
    d->cap_docs = cap;
    return 0;
}

/* ---- reading the records ------------------------------------------------------ */

int minlsh__dedup_data_read(const minlsh_dedup *d, uint64_t off, void *p, size_t n) {
    if (n == 0) return 0;
    if (off >= d->wbase) { /* still in the buffer */
        memcpy(p, d->wbuf + (off - d->wbase), n);
        return 0;
    }
    return minlsh__tmpfile_read(&d->data, off, p, n);
}

int minlsh__dedup_rec_head(const minlsh_dedup *d, uint64_t i, minlsh__dedup_rec *out) {
    uint64_t at = d->rec[i];
    if (!(at & MINLSH__DEDUP_IN_FILE)) {
        memcpy(out, (const void *)(uintptr_t)at, sizeof *out);
        return 0;
    }
    return minlsh__dedup_data_read(d, at & ~MINLSH__DEDUP_IN_FILE, out, sizeof *out);
}

int minlsh__dedup_rec_body(const minlsh_dedup *d, uint64_t i, minlsh__dedup_rec *head,
                           uint64_t **buf, size_t *cap, const void **out) {
    uint64_t at = d->rec[i];
    size_t words, bytes;
    int rc;
    if (!(at & MINLSH__DEDUP_IN_FILE)) {
        const uint8_t *p = (const uint8_t *)(uintptr_t)at;
        memcpy(head, p, sizeof *head);
        *out = p + sizeof *head;
        return 0;
    }
    at &= ~MINLSH__DEDUP_IN_FILE;
    if ((rc = minlsh__dedup_data_read(d, at, head, sizeof *head)) != 0) return rc;
    bytes = d->opts.verify == MINLSH_VERIFY_EXACT ? (size_t)head->n * 8 : (size_t)d->k * 4;
    words = bytes / 8 + 1;
    if (*cap < words) {
        void *p = *buf;
        rc = minlsh__reserve(&d->alloc, &p, cap, 0, words, 8);
        *buf = (uint64_t *)p;
        if (rc != 0) return rc;
    }
    *out = *buf;
    return minlsh__dedup_data_read(d, at + sizeof *head, *buf, bytes);
}
