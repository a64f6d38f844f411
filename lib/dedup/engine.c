/*
 * The engine's handle and the adding of documents one by one
 * (minlsh_dedup_add_set) or as texts shingled and signed on the pool
 * (minlsh_dedup_add_texts), each stored as one record (records.c). The top
 * of the layer with results.c: nothing else in lib/dedup calls into this
 * file; the bulk intake (intake.c) stands beside it, on the same lower
 * files.
 *
 * Memory: 8 bytes per document (16 with KEEP_LONGEST), its record, and a
 * batch of pending signatures and fingerprints. Time: constant per
 * document beyond shingling and signing; a batch banded (banding.c) each
 * time the pending documents fill one.
 */
#include "dedup.h"

#include "shingle/shingle.h"

/* The bytes of the options struct each version has: version 1 ends at
 * tmpdir. */
static size_t minlsh__dedup_options_size(uint32_t version) {
    if (version == 1) return offsetof(minlsh_dedup_options, pool);
    if (version == 2) return sizeof(minlsh_dedup_options);
    return 0;
}

int minlsh_dedup_options_init(minlsh_dedup_options *opts, uint32_t version) {
    static const minlsh_dedup_options defaults = MINLSH_DEDUP_OPTIONS_INIT;
    size_t size = minlsh__dedup_options_size(version);
    if (opts == NULL) return MINLSH_E_NULL;
    if (size == 0) return MINLSH_E_VERSION;
    memcpy(opts, &defaults, size);
    opts->version = version;
    return 0;
}

static int minlsh__dedup_check_options(const minlsh_dedup_options *o, uint32_t k) {
    if (minlsh__dedup_options_size(o->version) == 0) return MINLSH_E_VERSION;
    if (o->keep != MINLSH_KEEP_FIRST && o->keep != MINLSH_KEEP_LONGEST) return MINLSH_E_PARAM;
    if (o->group != MINLSH_GROUP_COMPONENTS && o->group != MINLSH_GROUP_STRICT)
        return MINLSH_E_PARAM;
    if (o->verify != MINLSH_VERIFY_EXACT && o->verify != MINLSH_VERIFY_SIGNATURE)
        return MINLSH_E_PARAM;
    if (!(o->threshold > 0.0 && o->threshold <= 1.0)) return MINLSH_E_PARAM;
    if ((o->bands == 0) != (o->rows == 0)) return MINLSH_E_PARAM;
    if ((uint64_t)o->bands * o->rows > k) return MINLSH_E_PARAM;
    if (o->all_pairs > 1) return MINLSH_E_PARAM;
    if (o->max_bucket == 1) return MINLSH_E_PARAM; /* a pair needs two */
    return 0;
}

int minlsh_dedup_new(minlsh_dedup **out, const minlsh_shingler *shingler,
                     const minlsh_family *family, const minlsh_dedup_options *opts,
                     const minlsh_allocator *alloc) {
    minlsh_dedup_options o;
    minlsh_allocator al;
    minlsh_dedup *d;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (shingler == NULL || family == NULL) return MINLSH_E_NULL;
    minlsh_dedup_options_init(&o, MINLSH_DEDUP_OPTIONS_VERSION);
    if (opts != NULL) {
        /* Only as many bytes as the caller's version has: the rest keeps
         * the defaults. */
        size_t size = minlsh__dedup_options_size(opts->version);
        if (size == 0) return MINLSH_E_VERSION;
        memcpy(&o, opts, size);
    }
    rc = minlsh__dedup_check_options(&o, minlsh_family_k(family));
    if (rc != 0) return rc;
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    d = (minlsh_dedup *)minlsh__calloc(&al, 1, sizeof *d);
    if (d == NULL) return MINLSH_E_NOMEM;
    d->alloc = al;
    d->opts = o;
    d->opts.tmpdir = NULL;
    d->opts.pool = NULL;
    d->pool = o.pool;
    d->pool_shared = o.pool != NULL;
    d->opts.memory = minlsh__dedup_budget(o.memory);
    d->k = minlsh_family_k(family);
    minlsh__tmpfile_init(&d->data);
    minlsh__tmpfile_init(&d->runs_file);
    minlsh__tmpfile_init(&d->cand_file);
    minlsh__tmpfile_init(&d->dec_file);
    rc = minlsh__shingler_clone(&d->shingler, shingler, &al);
    if (rc == 0) rc = minlsh_family_new_scheme(&d->family, d->k, minlsh_family_seed(family),
                                             minlsh_family_scheme(family), &al);
    if (rc == 0) rc = minlsh__dedup_plan(d);
    if (rc == 0)
        d->sig_values = d->opts.verify == MINLSH_VERIFY_EXACT ? d->bands * d->rows : d->k;
    if (rc == 0) {
        d->band_runs = (minlsh__dedup_runs *)minlsh__calloc(&al, d->bands, sizeof *d->band_runs);
        if (d->band_runs == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0 && o.tmpdir != NULL) {
        size_t len = strlen(o.tmpdir) + 1;
        d->tmpdir = (char *)minlsh__malloc(&al, len);
        if (d->tmpdir == NULL) rc = MINLSH_E_NOMEM;
        else memcpy(d->tmpdir, o.tmpdir, len);
    }
    if (rc == 0) {
        /* A batch: 64K documents, or fewer if their signatures and band
         * records would take more than a sixteenth of the budget. Bigger
         * batches would mean fewer runs to merge, but more fresh memory
         * (page faults) for every batch. The write buffer: 1 MiB at most. */
        uint64_t per = (uint64_t)d->sig_values * 4 + 16 * (uint64_t)d->bands + 24;
        uint64_t want = minlsh__dedup_share(d, 1) / per;
        uint64_t most = (uint64_t)1 << 16;
        d->pend_cap = want < 64 ? 64 : want > most ? (size_t)most : (size_t)want;
    }
    if (rc == 0 && pthread_mutex_init(&d->file_mu, NULL) != 0) rc = MINLSH_E_NOMEM;
    else if (rc == 0) d->file_mu_made = 1;
    if (rc != 0) {
        minlsh_dedup_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void minlsh_dedup_free(minlsh_dedup *d) {
    minlsh_allocator al;
    size_t i;
    if (d == NULL) return;
    al = d->alloc;
    (void)minlsh__dedup_pool(d); /* the background run, if any, is over */
    if (!d->pool_shared) minlsh__pool_free(d->pool);
    if (d->file_mu_made) pthread_mutex_destroy(&d->file_mu);
    minlsh_shingler_free(d->shingler);
    minlsh_family_free(d->family);
    minlsh__free(&al, d->tmpdir);
    minlsh__free(&al, d->rec);
    minlsh__free(&al, d->lengths);
    for (i = 0; i < d->chunks.n; i++) minlsh__free(&al, d->chunks.v[i]);
    for (i = 0; i < d->chunks.n_spare; i++) minlsh__free(&al, d->chunks.spare[i]);
    for (i = 0; i < d->chunks.n_incoming; i++) minlsh__free(&al, d->chunks.incoming[i]);
    minlsh__free(&al, d->chunks.v);
    minlsh__tmpfile_close(&d->data);
    minlsh__tmpfile_close(&d->runs_file);
    minlsh__tmpfile_close(&d->cand_file);
    minlsh__tmpfile_close(&d->dec_file);
    minlsh__free(&al, d->wbuf);
    minlsh__free(&al, d->pend_docs);
    minlsh__free(&al, d->pend_sigs);
    minlsh__free(&al, d->pend_fps);
    if (d->band_runs != NULL)
        for (i = 0; i < d->bands; i++) minlsh__dedup_runs_free(d, &d->band_runs[i]);
    minlsh__free(&al, d->band_runs);
    minlsh__dedup_runs_free(d, &d->fp_runs);
    minlsh__dedup_batch_scratch_free(d);
    for (i = 0; i < d->batch_cap; i++) minlsh_shingleset_free(d->batch_sets[i]);
    minlsh__free(&al, d->batch_sets);
    minlsh__free(&al, d->exact_of);
    minlsh__free(&al, d->copies);
    minlsh__free(&al, d->edges);
    minlsh__free(&al, d->decisions);
    minlsh__dedup_ids_free(d);
    minlsh__free(&al, d->intake_scratch);
    minlsh__free(&al, d);
}

uint64_t minlsh_dedup_count(const minlsh_dedup *d) { return d != NULL ? d->n_docs : 0; }

uint32_t minlsh_dedup_signature_values(const minlsh_dedup *d) {
    return d != NULL ? d->sig_values : 0;
}

/* Add one document: all or nothing (every step that can fail comes before
 * the document is counted). hashes: its set (n, strictly increasing); sig:
 * its signature, or NULL to make it here. */
static int minlsh__dedup_add_signed(minlsh_dedup *d, const uint64_t *hashes, size_t n,
                                    const uint32_t *sig, const uint8_t *fp, uint64_t length) {
    int exact = d->opts.verify == MINLSH_VERIFY_EXACT, rc, empty;
    uint64_t at;
    size_t body;
    if (d->n_docs >= MINLSH__DEDUP_MAX_DOCS) return MINLSH_E_TOOBIG;
    if ((rc = minlsh__dedup_docs_reserve(d, 1)) != 0) return rc;
    /* A document without a shingle is nobody's copy: it stays alone, kept,
     * like any document with no near-duplicate. */
    empty = n == 0 && minlsh_signature_is_empty(sig, d->sig_values) == 1;
    if (!empty && d->pend_n == d->pend_cap && (rc = minlsh__dedup_flush(d, 1)) != 0) return rc;
    if (!empty && d->pend_n == d->pend_held && (rc = minlsh__dedup_pend_grow(d)) != 0) return rc;
    if (exact && minlsh__mul_size(&body, n, sizeof *hashes) != 0) return MINLSH_E_TOOBIG;
    if (!exact) body = (size_t)d->k * sizeof *sig;
    rc = minlsh__dedup_store(d, fp, exact ? (const void *)hashes : (const void *)sig, body,
                             exact ? n : 0, &at);
    if (rc != 0) return rc;
    /* Once some document has an id every one has an entry (this one none);
     * a failure here only wastes the record's space. */
    if (d->ids.on && (rc = minlsh__dedup_ids_fill(d, d->n_docs + 1)) != 0) return rc;
    if (!empty) {
        d->pend_docs[d->pend_n] = (uint32_t)d->n_docs;
        memcpy(d->pend_sigs + d->pend_n * d->sig_values, sig, (size_t)d->sig_values * sizeof *sig);
        d->pend_fps[d->pend_n].key = minlsh__load64le(fp);
        d->pend_fps[d->pend_n].val = d->n_docs;
        d->pend_n++;
    }
    d->rec[d->n_docs] = at;
    if (d->lengths != NULL) d->lengths[d->n_docs] = length;
    d->n_docs++;
    d->empty += (uint64_t)empty;
    return 0;
}

static int minlsh__dedup_add(minlsh_dedup *d, const uint64_t *hashes, size_t n,
                             const uint32_t *sig, const uint8_t *fp, uint64_t length) {
    uint32_t stack[MINLSH__K_STACK], *own;
    int rc;
    if (sig != NULL) return minlsh__dedup_add_signed(d, hashes, n, sig, fp, length);
    own = (uint32_t *)minlsh__kbuf_get(&d->alloc, stack, MINLSH__K_STACK, d->sig_values,
                                       sizeof *own);
    if (own == NULL) return MINLSH_E_NOMEM;
    rc = minlsh_family_sign_prefix(d->family, hashes, n, own, d->sig_values);
    if (rc == 0) rc = minlsh__dedup_add_signed(d, hashes, n, own, fp, length);
    minlsh__kbuf_put(&d->alloc, stack, own);
    return rc;
}

int minlsh_dedup_add_set(minlsh_dedup *d, const uint64_t *hashes, size_t n, const uint32_t *sig,
                         size_t k_sig, const uint8_t fp[MINLSH_FINGERPRINT_BYTES],
                         uint64_t length) {
    if (d == NULL || fp == NULL || (hashes == NULL && n > 0)) return MINLSH_E_NULL;
    if (d->ran) return MINLSH_E_STATE;
    if (sig != NULL && k_sig != d->k && k_sig != d->sig_values) return MINLSH_E_PARAM;
    /* Exact verification compares sets: a signature alone serves only an
     * empty document. */
    if (d->opts.verify == MINLSH_VERIFY_EXACT && hashes == NULL && sig != NULL &&
        minlsh_signature_is_empty(sig, k_sig) != 1)
        return MINLSH_E_NULL;
    if (!minlsh__dedup_increasing(hashes, n)) return MINLSH_E_PARAM;
    return minlsh__dedup_io_result(d, minlsh__dedup_add(d, hashes, n, sig, fp, length));
}

/* ---- batches of texts ------------------------------------------------------- */

typedef struct minlsh__dedup_batch {
    minlsh_dedup *d;
    const void *const *texts;
    const size_t *lens;
    uint8_t *fps;   /* 16 bytes per text */
    uint32_t *sigs; /* sig_values per text */
    int32_t *rc;
} minlsh__dedup_batch;

static int minlsh__dedup_batch_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_batch *b = (minlsh__dedup_batch *)ctx;
    minlsh_dedup *d = b->d;
    size_t i;
    (void)worker;
    for (i = begin; i < end; i++) {
        minlsh_shingleset *set = d->batch_sets[i];
        int rc;
        if (b->texts[i] == NULL && b->lens[i] > 0) {
            b->rc[i] = MINLSH_E_NULL;
            continue;
        }
        rc = minlsh_shingler_hash(d->shingler, b->texts[i], b->lens[i], set,
                                  b->fps + i * MINLSH_FINGERPRINT_BYTES);
        if (rc == 0)
            rc = minlsh_family_sign_prefix(d->family, minlsh_shingleset_view_hashes(set),
                                           minlsh_shingleset_count(set),
                                           b->sigs + i * d->sig_values, d->sig_values);
        b->rc[i] = rc;
        /* Out of memory stops the batch: nothing of it is added. */
        if (rc == MINLSH_E_NOMEM) return rc;
    }
    return 0;
}

int minlsh_dedup_add_texts(minlsh_dedup *d, const void *const *texts, const size_t *lens,
                           size_t n, int32_t *status) {
    minlsh__dedup_batch b;
    size_t i, sig_bytes;
    int rc = 0, first = 0;
    if (d == NULL || ((texts == NULL || lens == NULL) && n > 0)) return MINLSH_E_NULL;
    if (d->ran) return MINLSH_E_STATE;
    if (n == 0) return 0;
    if (n > d->batch_cap) {
        minlsh_shingleset **v = (minlsh_shingleset **)minlsh__calloc(&d->alloc, n, sizeof *v);
        if (v == NULL) return MINLSH_E_NOMEM;
        if (d->batch_cap > 0) memcpy(v, d->batch_sets, d->batch_cap * sizeof *v);
        minlsh__free(&d->alloc, d->batch_sets);
        d->batch_sets = v;
        d->batch_cap = n;
    }
    for (i = 0; i < n; i++)
        if (d->batch_sets[i] == NULL &&
            minlsh_shingleset_new(&d->batch_sets[i], &d->alloc) != 0)
            return MINLSH_E_NOMEM;
    if (minlsh__mul_size(&sig_bytes, n, (size_t)d->sig_values * sizeof(uint32_t)) != 0)
        return MINLSH_E_TOOBIG;
    b.d = d;
    b.texts = texts;
    b.lens = lens;
    b.fps = (uint8_t *)minlsh__calloc(&d->alloc, n, MINLSH_FINGERPRINT_BYTES);
    b.sigs = (uint32_t *)minlsh__malloc(&d->alloc, sig_bytes);
    b.rc = (int32_t *)minlsh__calloc(&d->alloc, n, sizeof *b.rc);
    if (b.fps == NULL || b.sigs == NULL || b.rc == NULL) rc = MINLSH_E_NOMEM;
    if (rc == 0) rc = minlsh__pool_run(minlsh__dedup_pool(d), n, 16, minlsh__dedup_batch_range, &b);
    /* Added in input order, so numbers never depend on the threads. */
    for (i = 0; i < n && rc == 0; i++) {
        int r = b.rc[i];
        minlsh_shingleset *set = d->batch_sets[i];
        if (r == 0)
            r = minlsh__dedup_add(d, minlsh_shingleset_view_hashes(set),
                                  minlsh_shingleset_count(set), b.sigs + i * d->sig_values,
                                  b.fps + i * MINLSH_FINGERPRINT_BYTES, lens[i]);
        if (r == MINLSH_E_NOMEM) rc = r; /* those before i stay added */
        if (status != NULL) status[i] = r;
        if (r != 0 && first == 0) first = r;
    }
    for (; i < n && status != NULL; i++) status[i] = rc;
    minlsh__free(&d->alloc, b.fps);
    minlsh__free(&d->alloc, b.sigs);
    minlsh__free(&d->alloc, b.rc);
    return minlsh__dedup_io_result(d, rc != 0 ? rc : first);
}
