/*
 * What every stage of the engine stands on: the temporary files (opened on
 * first use) and their errors, the budget's shares, the engine's pool with
 * the spare record chunks it makes in the background, and the records read
 * back, from memory or from the data file. Writing the records is the
 * adding side's (engine.c).
 *
 * Memory: the spare chunks, within the records' share of the budget. Time:
 * a record in memory is read in place; one in the data file costs a read
 * (none while it is still in the write buffer).
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

void minlsh__dedup_touch_pages(uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i += 4096) p[i] = 0;
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
        uint8_t *p = (uint8_t *)minlsh__malloc(&d->alloc, MINLSH__DEDUP_CHUNK_BYTES);
        if (p == NULL) break; /* only a head start: the adding thread will try */
        minlsh__dedup_touch_pages(p, MINLSH__DEDUP_CHUNK_BYTES);
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
