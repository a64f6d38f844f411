/*
 * The engine's handle and its input: options, documents added one by one
 * or by batches shingled and signed on the pool, exact groups by
 * fingerprint.
 */
#include "dedup.h"

#include "shingle/shingle.h"

int minlsh_dedup_options_init(minlsh_dedup_options *opts, uint32_t version) {
    static const minlsh_dedup_options defaults = MINLSH_DEDUP_OPTIONS_INIT;
    if (opts == NULL) return MINLSH_E_NULL;
    if (version != 1) return MINLSH_E_VERSION;
    *opts = defaults;
    return 0;
}

static int minlsh__dedup_check_options(const minlsh_dedup_options *o, uint32_t k) {
    if (o->version != 1) return MINLSH_E_VERSION;
    if (o->keep != MINLSH_KEEP_FIRST && o->keep != MINLSH_KEEP_LONGEST) return MINLSH_E_PARAM;
    if (o->group != MINLSH_GROUP_COMPONENTS && o->group != MINLSH_GROUP_STRICT)
        return MINLSH_E_PARAM;
    if (o->verify != MINLSH_VERIFY_EXACT && o->verify != MINLSH_VERIFY_SIGNATURE)
        return MINLSH_E_PARAM;
    if (!(o->threshold > 0.0 && o->threshold <= 1.0)) return MINLSH_E_PARAM;
    if ((o->bands == 0) != (o->rows == 0)) return MINLSH_E_PARAM;
    if ((uint64_t)o->bands * o->rows > k) return MINLSH_E_PARAM;
    if (o->reserved != 0) return MINLSH_E_PARAM;
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
    if (opts != NULL) o = *opts;
    else minlsh_dedup_options_init(&o, MINLSH_DEDUP_OPTIONS_VERSION);
    rc = minlsh__dedup_check_options(&o, minlsh_family_k(family));
    if (rc != 0) return rc;
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    d = (minlsh_dedup *)minlsh__calloc(&al, 1, sizeof *d);
    if (d == NULL) return MINLSH_E_NOMEM;
    d->alloc = al;
    d->opts = o;
    d->opts.tmpdir = NULL;
    d->k = minlsh_family_k(family);
    d->spill = o.memory != 0;
    minlsh__tmpfile_init(&d->data);
    minlsh__tmpfile_init(&d->band_file);
    minlsh__tmpfile_init(&d->cand_file);
    rc = minlsh__shingler_clone(&d->shingler, shingler, &al);
    if (rc == 0) rc = minlsh_family_new(&d->family, d->k, minlsh_family_seed(family), &al);
    if (rc == 0) rc = minlsh__dedup_plan(d);
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
    if (rc == 0 && d->spill) {
        /* The signatures waiting to be banded take up to half the budget;
         * the write buffer 1 MiB at most. */
        size_t per = (size_t)d->k * sizeof(uint32_t) + 16 * (size_t)d->bands + 64;
        uint64_t want = o.memory / 2 / per;
        d->pend_cap = want < 64 ? 64 : want > (1u << 24) ? (1u << 24) : (size_t)want;
        d->wcap = o.memory / 8 < 4096 ? 4096 : o.memory / 8 > (1u << 20) ? (1u << 20)
                                                                            : (size_t)(o.memory / 8);
        d->pend_sigs = (uint32_t *)minlsh__calloc(&al, d->pend_cap, (size_t)d->k * sizeof(uint32_t));
        d->wbuf = (uint8_t *)minlsh__malloc(&al, d->wcap);
        if (d->pend_sigs == NULL || d->wbuf == NULL) rc = MINLSH_E_NOMEM;
        if (rc == 0) rc = minlsh__tmpfile_open(&d->data, d->tmpdir);
        if (rc == 0) rc = minlsh__tmpfile_open(&d->band_file, d->tmpdir);
        if (rc == 0) rc = minlsh__tmpfile_open(&d->cand_file, d->tmpdir);
    }
    if (rc != 0) {
        minlsh_dedup_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void minlsh_dedup_free(minlsh_dedup *d) {
    minlsh_allocator al;
    size_t i, j;
    if (d == NULL) return;
    al = d->alloc;
    minlsh__pool_free(d->pool);
    minlsh_shingler_free(d->shingler);
    minlsh_family_free(d->family);
    minlsh__free(&al, d->tmpdir);
    minlsh__free(&al, d->docs);
    minlsh__free(&al, d->fps);
    minlsh__free(&al, d->groups);
    for (i = 0; i < d->chunks.n; i++) minlsh__free(&al, d->chunks.v[i]);
    minlsh__free(&al, d->chunks.v);
    minlsh__tmpfile_close(&d->data);
    minlsh__tmpfile_close(&d->band_file);
    minlsh__tmpfile_close(&d->cand_file);
    minlsh__free(&al, d->wbuf);
    minlsh__free(&al, d->pend_sigs);
    if (d->band_runs != NULL)
        for (i = 0; i < d->bands; i++) {
            for (j = 0; j < d->band_runs[i].n; j++) minlsh__free(&al, d->band_runs[i].r[j].v);
            minlsh__free(&al, d->band_runs[i].r);
        }
    minlsh__free(&al, d->band_runs);
    for (i = 0; i < d->batch_cap; i++) minlsh_shingleset_free(d->batch_sets[i]);
    minlsh__free(&al, d->batch_sets);
    minlsh__free(&al, d->edges);
    minlsh__free(&al, d->decisions);
    minlsh__free(&al, d);
}

uint64_t minlsh_dedup_count(const minlsh_dedup *d) { return d != NULL ? d->n_docs : 0; }

minlsh__pool *minlsh__dedup_pool(minlsh_dedup *d) {
    if (d->pool == NULL) (void)minlsh__pool_new(&d->pool, &d->alloc, d->opts.threads);
    return d->pool;
}

/* ---- exact groups ---------------------------------------------------------- */

static size_t minlsh__dedup_fp_slot(const minlsh_dedup *d, const uint8_t *fp) {
    return (size_t)minlsh__load64le(fp) & d->fp_mask;
}

/* Room for one more group in the table (at most half full). */
static int minlsh__dedup_fp_reserve(minlsh_dedup *d) {
    size_t size, old_size = d->fp_mask ? d->fp_mask + 1 : 0, i;
    minlsh__dedup_fp *old = d->fps;
    if (old_size != 0 && (d->n_groups + 1) * 2 <= old_size) return 0;
    if (old_size > SIZE_MAX / 2 / sizeof *old) return MINLSH_E_TOOBIG;
    size = old_size ? old_size * 2 : 1024;
    d->fps = (minlsh__dedup_fp *)minlsh__calloc(&d->alloc, size, sizeof *d->fps);
    if (d->fps == NULL) {
        d->fps = old;
        return MINLSH_E_NOMEM;
    }
    d->fp_mask = size - 1;
    for (i = 0; i < old_size; i++) {
        size_t s;
        if (old[i].group_plus1 == 0) continue;
        s = minlsh__dedup_fp_slot(d, old[i].fp);
        while (d->fps[s].group_plus1 != 0) s = (s + 1) & d->fp_mask;
        d->fps[s] = old[i];
    }
    minlsh__free(&d->alloc, old);
    return 0;
}

/* The slot holding fp, or the free slot where it belongs. */
static size_t minlsh__dedup_fp_find(const minlsh_dedup *d, const uint8_t *fp) {
    size_t s = minlsh__dedup_fp_slot(d, fp);
    while (d->fps[s].group_plus1 != 0 &&
           memcmp(d->fps[s].fp, fp, MINLSH_FINGERPRINT_BYTES) != 0)
        s = (s + 1) & d->fp_mask;
    return s;
}

/* ---- storage ------------------------------------------------------------------- */

#define MINLSH__DEDUP_CHUNK_BYTES ((size_t)4 << 20)

/* n bytes (8-aligned) that stay where they are until the engine is freed. */
static int minlsh__dedup_chunk_take(minlsh_dedup *d, minlsh__dedup_chunks *c, size_t n,
                                    uint8_t **out) {
    n = (n + 7) & ~(size_t)7;
    if (c->n == 0 || c->size - c->used < n) {
        size_t size = n > MINLSH__DEDUP_CHUNK_BYTES ? n : MINLSH__DEDUP_CHUNK_BYTES;
        uint8_t *p;
        void *v = c->v;
        int rc = minlsh__reserve(&d->alloc, &v, &c->cap, c->n, c->n + 1, sizeof *c->v);
        c->v = (uint8_t **)v;
        if (rc != 0) return rc;
        p = (uint8_t *)minlsh__malloc(&d->alloc, size);
        if (p == NULL) return MINLSH_E_NOMEM;
        c->v[c->n++] = p;
        c->used = 0;
        c->size = size;
        c->bytes += size;
    }
    *out = c->v[c->n - 1] + c->used;
    c->used += n;
    return 0;
}

/* ---- the data file (with a budget): sets and signatures --------------------- */

static int minlsh__dedup_wflush(minlsh_dedup *d) {
    int rc = 0;
    if (d->wlen > 0) rc = minlsh__tmpfile_append(&d->data, d->wbuf, d->wlen, NULL);
    if (rc != 0) return rc;
    d->wbase += d->wlen;
    d->wlen = 0;
    return 0;
}

/* Append n bytes to the data file; *off receives where they are. */
static int minlsh__dedup_wput(minlsh_dedup *d, const void *p, size_t n, uint64_t *off) {
    int rc;
    if (d->wlen + n > d->wcap) {
        if ((rc = minlsh__dedup_wflush(d)) != 0) return rc;
        if (n > d->wcap) { /* larger than the buffer: straight to the file */
            rc = minlsh__tmpfile_append(&d->data, p, n, off);
            if (rc == 0) d->wbase += n;
            return rc;
        }
    }
    *off = d->wbase + d->wlen;
    if (n > 0) memcpy(d->wbuf + d->wlen, p, n);
    d->wlen += n;
    return 0;
}

int minlsh__dedup_data_read(const minlsh_dedup *d, uint64_t off, void *p, size_t n) {
    if (n == 0) return 0;
    if (off >= d->wbase) { /* still in the buffer */
        memcpy(p, d->wbuf + (off - d->wbase), n);
        return 0;
    }
    return minlsh__tmpfile_read(&d->data, off, p, n);
}

/* Add one document: all or nothing (every step that can fail comes before
 * the document is counted). hashes (n, strictly increasing) are kept only
 * when the document starts a group and exact verification needs them; sig
 * (k values) only then too. */
static int minlsh__dedup_add(minlsh_dedup *d, const uint64_t *hashes, size_t n,
                             const uint32_t *sig, const uint8_t *fp, uint64_t length) {
    int exact = d->opts.verify == MINLSH_VERIFY_EXACT, rc, empty;
    size_t slot, g;
    void *p;
    p = d->docs;
    rc = minlsh__reserve(&d->alloc, &p, &d->cap_docs, d->n_docs, d->n_docs + 1, sizeof *d->docs);
    d->docs = (minlsh__dedup_doc *)p;
    if (rc != 0) return rc;
    /* A document without a shingle is nobody's copy: it stays a group of
     * its own, kept, like any document with no near-duplicate. */
    empty = n == 0 && (sig == NULL || minlsh_signature_is_empty(sig, d->k) == 1);
    if ((rc = minlsh__dedup_fp_reserve(d)) != 0) return rc;
    slot = empty ? SIZE_MAX : minlsh__dedup_fp_find(d, fp);
    if (!empty && d->fps[slot].group_plus1 != 0) { /* an exact copy */
        g = (size_t)(d->fps[slot].group_plus1 - 1);
        if (++d->groups[g].size == 2) d->exact_groups++;
    } else {
        minlsh__dedup_group gr;
        uint32_t own[MINLSH_FAMILY_K_MAX];
        if (d->n_groups >= MINLSH__DEDUP_MAX_GROUPS) return MINLSH_E_TOOBIG;
        g = d->n_groups;
        p = d->groups;
        rc = minlsh__reserve(&d->alloc, &p, &d->cap_groups, g, g + 1, sizeof *d->groups);
        d->groups = (minlsh__dedup_group *)p;
        if (rc != 0) return rc;
        if (sig == NULL) {
            minlsh_family_sign(d->family, hashes, n, own, d->k, NULL);
            sig = own;
        }
        memset(&gr, 0, sizeof gr);
        gr.first = d->n_docs;
        gr.size = 1;
        gr.empty = minlsh_signature_is_empty(sig, d->k) == 1;
        if (!d->spill) {
            size_t sig_bytes = (size_t)d->k * sizeof *sig, set_bytes = 0;
            uint8_t *at;
            if (exact && n > 0 && minlsh__mul_size(&set_bytes, n, sizeof *hashes) != 0)
                return MINLSH_E_TOOBIG;
            /* The signature first: its 4-byte values keep the set that
             * follows 8-byte aligned only if k is even, so round up. */
            rc = minlsh__dedup_chunk_take(d, &d->chunks, ((sig_bytes + 7) & ~(size_t)7) + set_bytes,
                                          &at);
            if (rc != 0) return rc;
            memcpy(at, sig, sig_bytes);
            gr.sig_off = (uint64_t)(uintptr_t)at;
            at += (sig_bytes + 7) & ~(size_t)7;
            gr.set_off = (uint64_t)(uintptr_t)at;
            if (set_bytes > 0) {
                memcpy(at, hashes, set_bytes);
                gr.set_n = n;
            }
        } else {
            /* Band the waiting texts first if there is no room for this
             * one; then the data file; the group counts only after both. */
            if (d->pend_n == d->pend_cap && (rc = minlsh__dedup_flush_bands(d)) != 0) return rc;
            if (exact && n > 0) {
                if ((rc = minlsh__dedup_wput(d, hashes, n * sizeof *hashes, &gr.set_off)) != 0)
                    return rc;
                gr.set_n = n;
            }
            rc = minlsh__dedup_wput(d, sig, (size_t)d->k * sizeof *sig, &gr.sig_off);
            if (rc != 0) return rc;
            memcpy(d->pend_sigs + d->pend_n * d->k, sig, (size_t)d->k * sizeof *sig);
            d->pend_n++;
        }
        d->groups[g] = gr;
        if (!empty) {
            memcpy(d->fps[slot].fp, fp, MINLSH_FINGERPRINT_BYTES);
            d->fps[slot].group_plus1 = (uint64_t)g + 1;
        }
        d->n_groups++;
    }
    d->docs[d->n_docs].group = (uint32_t)g;
    d->docs[d->n_docs].length = length;
    d->n_docs++;
    d->empty += d->groups[g].empty;
    return 0;
}

int minlsh_dedup_add_set(minlsh_dedup *d, const uint64_t *hashes, size_t n,
                         const uint32_t *sig, size_t k_sig,
                         const uint8_t fp[MINLSH_FINGERPRINT_BYTES], uint64_t length) {
    size_t i;
    if (d == NULL || fp == NULL || (hashes == NULL && n > 0)) return MINLSH_E_NULL;
    if (d->ran) return MINLSH_E_STATE;
    if (sig != NULL && k_sig != d->k) return MINLSH_E_PARAM;
    /* Exact verification compares sets: a signature alone serves only an
     * empty document. */
    if (d->opts.verify == MINLSH_VERIFY_EXACT && hashes == NULL && sig != NULL &&
        minlsh_signature_is_empty(sig, k_sig) != 1)
        return MINLSH_E_NULL;
    for (i = 1; i < n; i++)
        if (hashes[i] <= hashes[i - 1]) return MINLSH_E_PARAM;
    return minlsh__dedup_add(d, hashes, n, sig, fp, length);
}

/* ---- batches of texts ------------------------------------------------------- */

typedef struct minlsh__dedup_batch {
    minlsh_dedup *d;
    const void *const *texts;
    const size_t *lens;
    uint8_t *fps;   /* 16 bytes per text */
    uint32_t *sigs; /* k per text */
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
            rc = minlsh_family_sign(d->family, minlsh_shingleset_view_hashes(set),
                                    minlsh_shingleset_count(set), b->sigs + i * d->k, d->k,
                                    NULL);
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
    if (minlsh__mul_size(&sig_bytes, n, (size_t)d->k * sizeof(uint32_t)) != 0)
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
                                  minlsh_shingleset_count(set), b.sigs + i * d->k,
                                  b.fps + i * MINLSH_FINGERPRINT_BYTES, lens[i]);
        if (r == MINLSH_E_NOMEM) rc = r; /* those before i stay added */
        if (status != NULL) status[i] = r;
        if (r != 0 && first == 0) first = r;
    }
    for (; i < n && status != NULL; i++) status[i] = rc;
    minlsh__free(&d->alloc, b.fps);
    minlsh__free(&d->alloc, b.sigs);
    minlsh__free(&d->alloc, b.rc);
    return rc != 0 ? rc : first;
}
