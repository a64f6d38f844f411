/*
 * Banding, a batch of pending documents at a time: their band keys, then
 * per band one sorted run of (key, document) records and one sorted run of
 * their fingerprint records, all on the pool; the runs stay in memory
 * within their share of the budget, and go to the runs file past it.
 *
 * Memory: a batch (64K documents at most, fewer under a budget) keeps its
 * band keys (8 bytes per document and band) and each worker's sorting
 * scratch (16 bytes per document, and a 256 KiB histogram) from batch to
 * batch; runs take 16 bytes per document and band and 16 per document of
 * fingerprint in memory, 12 in the file. Time: linear per batch (one
 * radix pass per band: the keys are hashes).
 */
#include "dedup.h"

/* Whether runs of this many more bytes go to the file (*in_file): band
 * and fingerprint runs in memory take a sixteenth of the budget at most. */
static int minlsh__dedup_runs_to_file(minlsh_dedup *d, uint64_t bytes, int *in_file) {
    *in_file = 0;
    if (d->opts.memory == 0 || d->run_bytes + bytes <= minlsh__dedup_share(d, 1)) {
        d->run_bytes += bytes;
        return 0;
    }
    *in_file = 1;
    return minlsh__dedup_file(d, &d->runs_file);
}

typedef struct minlsh__dedup_batchkeys {
    minlsh_dedup *d;
    int in_file;
    size_t spare_chunks; /* to make after the bands are sorted */
    minlsh__kv *fps;     /* the batch's fingerprint records, sorted */
    uint64_t *keys;      /* band by band: band j's key of pending document i
                            at j * n + i; then a row of bands per worker */
    size_t n;
} minlsh__dedup_batchkeys;

static int minlsh__dedup_keys_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_batchkeys *c = (minlsh__dedup_batchkeys *)ctx;
    const minlsh_dedup *d = c->d;
    uint64_t *row = c->keys + c->n * d->bands + (size_t)worker * d->bands;
    size_t i, j;
    /* Written band by band, so that each band's run reads its keys in
     * order instead of one in every row. */
    for (i = begin; i < end; i++) {
        (void)minlsh_band_keys(d->pend_sigs + i * d->sig_values, d->sig_values, d->bands,
                               d->rows, row, d->bands, NULL);
        for (j = 0; j < d->bands; j++) c->keys[j * c->n + i] = row[j];
    }
    return 0;
}

/* One band of the batch: its (key, document) records, sorted by (key,
 * document), into a run; or (item `bands`) the batch's fingerprint
 * records. */
static int minlsh__dedup_band_run(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_batchkeys *c = (minlsh__dedup_batchkeys *)ctx;
    minlsh_dedup *d = c->d;
    const minlsh_allocator *a = &d->alloc;
    size_t j, i, n = d->pend_n;
    uint32_t *hist = d->sort_hist + (size_t)worker * MINLSH__SPREAD_HIST;
    int rc = 0;
    for (j = begin; j < end && rc == 0; j++) {
        minlsh__kv *v, *tmp;
        if (j == d->bands) {
            minlsh__sort_kv_spread(c->fps, d->pend_fps, n, hist, 0, 64);
            continue;
        }
        v = (minlsh__kv *)minlsh__malloc(a, (n + 1) * sizeof *v);
        tmp = d->sort_tmp[worker];
        if (v == NULL) return MINLSH_E_NOMEM;
        minlsh__prefault(v, n * sizeof *v); /* the run's fresh memory, written whole */
        /* Gathered in the worker's scratch, which stays in its cache; the
         * run's fresh memory is written once, in order. */
        for (i = 0; i < n; i++) {
            tmp[i].key = c->keys[j * n + i];
            tmp[i].val = d->pend_docs[i];
        }
        minlsh__sort_kv_spread(v, tmp, n, hist, 0, 64);
        /* Each band's run list has one writer: this item. */
        rc = minlsh__dedup_run_store(d, &d->runs_file, c->in_file, &d->band_runs[j], v, n);
    }
    return rc;
}

/* Room for keys band keys and a row of them per worker and, per worker, n
 * records of sorting scratch. */
static int minlsh__dedup_batch_scratch(minlsh_dedup *d, size_t keys, size_t n) {
    const minlsh_allocator *a = &d->alloc;
    size_t w, workers = minlsh__pool_size(minlsh__dedup_pool(d));
    if (d->sort_tmp != NULL) workers = d->n_sort_tmp;
    if (minlsh__mul_size(&w, workers, d->bands) != 0 || keys + w < keys) return MINLSH_E_TOOBIG;
    keys += w;
    if (keys > d->batch_keys_cap) {
        uint64_t *k = (uint64_t *)minlsh__malloc(a, keys * sizeof *k);
        if (k == NULL) return MINLSH_E_NOMEM;
        minlsh__free(a, d->batch_keys);
        d->batch_keys = k;
        d->batch_keys_cap = keys;
    }
    if (d->sort_tmp == NULL) {
        d->sort_tmp = (minlsh__kv **)minlsh__calloc(a, workers + 1, sizeof *d->sort_tmp);
        if (d->sort_tmp == NULL) return MINLSH_E_NOMEM;
        d->n_sort_tmp = workers;
    }
    if (d->sort_hist == NULL) {
        d->sort_hist =
            (uint32_t *)minlsh__calloc(a, d->n_sort_tmp, MINLSH__SPREAD_HIST * sizeof(uint32_t));
        if (d->sort_hist == NULL) return MINLSH_E_NOMEM;
    }
    if (n > d->sort_tmp_cap) {
        for (w = 0; w < d->n_sort_tmp; w++) {
            minlsh__kv *t = (minlsh__kv *)minlsh__malloc(a, n * sizeof *t);
            if (t == NULL) return MINLSH_E_NOMEM; /* those replaced are bigger: harmless */
            minlsh__free(a, d->sort_tmp[w]);
            d->sort_tmp[w] = t;
        }
        d->sort_tmp_cap = n;
    }
    return 0;
}

void minlsh__dedup_batch_scratch_free(minlsh_dedup *d) {
    size_t i;
    for (i = 0; d->sort_tmp != NULL && i < d->n_sort_tmp; i++)
        minlsh__free(&d->alloc, d->sort_tmp[i]);
    minlsh__free(&d->alloc, d->sort_tmp);
    minlsh__free(&d->alloc, d->sort_hist);
    minlsh__free(&d->alloc, d->batch_keys);
    d->sort_tmp = NULL;
    d->sort_hist = NULL;
    d->batch_keys = NULL;
    d->sort_tmp_cap = d->batch_keys_cap = 0;
}

/* All or nothing: a batch that fails leaves every run list as it was (a
 * run written to the file already only wastes its space) and the pending
 * documents pending. */
int minlsh__dedup_flush(minlsh_dedup *d, int more) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_batchkeys c;
    size_t keys_n, *had, j, n = d->pend_n, had_fp = d->fp_runs.n;
    uint64_t run_bytes = d->run_bytes;
    minlsh__kv *fps = NULL;
    int rc, fp_file = 0;
    if (n == 0) return 0;
    if (minlsh__mul_size(&keys_n, n, d->bands) != 0) return MINLSH_E_TOOBIG;
    had = (size_t *)minlsh__calloc(a, d->bands + 1, sizeof *had);
    if (had == NULL) return MINLSH_E_NOMEM;
    for (j = 0; j < d->bands; j++) had[j] = d->band_runs[j].n;
    c.d = d;
    rc = minlsh__dedup_runs_to_file(d, (uint64_t)keys_n * sizeof(minlsh__kv), &c.in_file);
    if (rc == 0) rc = minlsh__dedup_runs_to_file(d, (uint64_t)n * sizeof(minlsh__kv), &fp_file);
    /* The band keys and each worker's sorting scratch are kept from batch
     * to batch: fresh memory costs a page fault and a zeroed page. */
    if (rc == 0) rc = minlsh__dedup_batch_scratch(d, keys_n, n + 1);
    c.keys = d->batch_keys;
    c.n = n;
    /* As many spare chunks as the last batch's records took, while they
     * stay in memory and within their share. */
    c.spare_chunks = 0;
    if (more && !d->records_in_file)
        c.spare_chunks = (size_t)(d->chunks.batch_bytes / MINLSH__DEDUP_CHUNK_BYTES + 1);
    fps = (minlsh__kv *)minlsh__malloc(a, n * sizeof *fps);
    if (rc == 0 && fps == NULL) rc = MINLSH_E_NOMEM;
    if (fps != NULL) minlsh__prefault(fps, n * sizeof *fps);
    if (rc == 0) rc = minlsh__pool_run(minlsh__dedup_pool(d), n, 256, minlsh__dedup_keys_range, &c);
    c.fps = fps;
    /* One item per band, and one more that sorts the fingerprints. */
    if (rc == 0)
        rc = minlsh__pool_run(minlsh__dedup_pool(d), d->bands + 1, 1, minlsh__dedup_band_run, &c);
    if (rc == 0) {
        rc = minlsh__dedup_run_store(d, &d->runs_file, fp_file, &d->fp_runs, fps, n);
        fps = NULL;
    }
    minlsh__free(a, fps);
    d->chunks.batch_bytes = 0;
    if (rc == 0 && c.spare_chunks > 0) minlsh__dedup_chunks_prepare(d, c.spare_chunks);
    if (rc != 0) {
        for (j = 0; j < d->bands; j++)
            while (d->band_runs[j].n > had[j])
                minlsh__free(a, d->band_runs[j].r[--d->band_runs[j].n].v);
        while (d->fp_runs.n > had_fp) minlsh__free(a, d->fp_runs.r[--d->fp_runs.n].v);
        d->run_bytes = run_bytes;
    } else {
        d->pend_n = 0;
    }
    minlsh__free(a, had);
    return rc;
}
