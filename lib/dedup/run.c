/*
 * The run: the last batch banded (banding.c), the exact groups (exact.c),
 * the verified edges (cands.c, verify.c), then the decisions of the policy
 * (decide.c), here given the similarities the policy could not and kept in
 * memory or in the decision file. Work goes to the pool in items whose
 * results land in fixed slots and are merged in a fixed order, so nothing
 * depends on the thread count or on the memory budget.
 *
 * Memory: a decision per document, in memory within an eighth of the
 * budget, else in the file. Time: the stages'; here one similarity per
 * dropped document that is not a verified neighbour of its representative.
 */
#include "dedup.h"

/* ---- decisions ------------------------------------------------------------------ */

typedef struct minlsh__dedup_sink {
    minlsh_dedup *d;
    minlsh__dedup_scratch *scratch; /* per worker */
    minlsh_dedup_decision *v;
    uint64_t first;
    uint64_t kept;
    minlsh__kv *todo; /* (representative, index) of those to measure */
    size_t cap_todo;
} minlsh__dedup_sink;

/* The similarity of each dropped document to its representative where the
 * policy could not give it (not a verified neighbour). */
static int minlsh__dedup_sims_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_sink *c = (minlsh__dedup_sink *)ctx;
    size_t t;
    int rc = 0;
    for (t = begin; t < end && rc == 0; t++) {
        size_t i = (size_t)c->todo[t].val;
        minlsh_dedup_decision *x = &c->v[i];
        rc = minlsh__dedup_similarity(c->d, &c->scratch[worker], (uint32_t)(c->first + i),
                                      (uint32_t)x->representative, &x->similarity);
    }
    return rc;
}

/* Decisions in document order: similarities filled in, then kept in
 * memory or appended to the decision file. */
static int minlsh__dedup_sink_emit(void *ctx, uint64_t first, minlsh_dedup_decision *v,
                                   size_t n) {
    minlsh__dedup_sink *s = (minlsh__dedup_sink *)ctx;
    minlsh_dedup *d = s->d;
    size_t i;
    int rc;
    size_t m = 0;
    s->v = v;
    s->first = first;
    if (s->cap_todo < n) {
        void *p = s->todo;
        rc = minlsh__reserve(&d->alloc, &p, &s->cap_todo, 0, n, sizeof *s->todo);
        s->todo = (minlsh__kv *)p;
        if (rc != 0) return rc;
    }
    /* Those to measure (NaN), by representative when the records are in
     * the data file: its reads then go forward through it. */
    for (i = 0; i < n; i++)
        if (v[i].similarity != v[i].similarity) {
            s->todo[m].key = d->records_in_file ? v[i].representative : 0;
            s->todo[m++].val = i;
        }
    if (d->records_in_file) minlsh__sort_kv(s->todo, m);
    rc = minlsh__pool_run(minlsh__dedup_pool(d), m, 64, minlsh__dedup_sims_range, s);
    if (rc != 0) return rc;
    for (i = 0; i < n; i++) s->kept += v[i].kept;
    if (d->decisions != NULL) {
        memcpy(d->decisions + first, v, n * sizeof *v);
        return 0;
    }
    return minlsh__tmpfile_append(&d->dec_file, v, n * sizeof *v, NULL);
}

/* Fault in [p, p + bytes) on every worker: the pages of a large array
 * that one thread would then write are zeroed by the kernel on all cores
 * instead of one, off the serial path (docs/dedup.md, "Threads"). The
 * content is left undefined. */
typedef struct minlsh__dedup_touch {
    uint8_t *p;
    size_t bytes;
} minlsh__dedup_touch;

#define MINLSH__DEDUP_TOUCH_BLOCK ((size_t)2 << 20)

static int minlsh__dedup_touch_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    const minlsh__dedup_touch *t = (const minlsh__dedup_touch *)ctx;
    size_t start = begin * MINLSH__DEDUP_TOUCH_BLOCK, stop = end * MINLSH__DEDUP_TOUCH_BLOCK;
    (void)worker;
    if (stop > t->bytes) stop = t->bytes;
    minlsh__prefault(t->p + start, stop - start);
    return 0;
}

static void minlsh__dedup_prefault(minlsh_dedup *d, void *p, size_t bytes) {
    minlsh__dedup_touch t;
    minlsh__pool *pool = minlsh__dedup_pool(d);
    if (pool == NULL || minlsh__pool_size(pool) < 2 || bytes < 2 * MINLSH__DEDUP_TOUCH_BLOCK)
        return;
    t.p = (uint8_t *)p;
    t.bytes = bytes;
    (void)minlsh__pool_run(pool, (bytes + MINLSH__DEDUP_TOUCH_BLOCK - 1) / MINLSH__DEDUP_TOUCH_BLOCK,
                           1, minlsh__dedup_touch_range, &t);
}

static int minlsh__dedup_decisions(minlsh_dedup *d) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_policy p;
    minlsh__dedup_sink s;
    size_t n_scratch = 0;
    int rc;
    /* In memory if they fit an eighth of the budget; the file is
     * rewritten by a run after a failed one. */
    if ((uint64_t)d->n_docs * sizeof *d->decisions <= minlsh__dedup_share(d, 2)) {
        /* Every entry is written by the emission, once and in order: no
         * zeroing pass, and small pages (minlsh__malloc_plain says why). */
        size_t bytes;
        if (minlsh__mul_size(&bytes, (size_t)d->n_docs + 1, sizeof *d->decisions) != 0)
            return MINLSH_E_NOMEM;
        d->decisions = (minlsh_dedup_decision *)minlsh__malloc_plain(a, bytes);
        if (d->decisions == NULL) return MINLSH_E_NOMEM;
        minlsh__dedup_prefault(d, d->decisions, bytes);
    } else {
        minlsh__tmpfile_close(&d->dec_file);
        if ((rc = minlsh__dedup_file(d, &d->dec_file)) != 0) return rc;
    }
    memset(&s, 0, sizeof s);
    s.d = d;
    s.scratch = minlsh__dedup_scratch_new(d, &n_scratch);
    if (s.scratch == NULL) return MINLSH_E_NOMEM;
    p.n = d->n_docs;
    p.exact_of = d->exact_of;
    p.lengths = d->lengths;
    p.edges = d->edges;
    p.n_edges = d->n_edges;
    p.keep = d->opts.keep;
    p.group = d->opts.group;
    rc = minlsh__dedup_decide(&p, a, minlsh__dedup_sink_emit, &s);
    minlsh__dedup_scratch_free(d, s.scratch, n_scratch);
    minlsh__free(a, s.todo);
    d->n_kept = s.kept;
    minlsh__dedup_temp_peak(d);
    return rc;
}

int minlsh_dedup_run(minlsh_dedup *d) {
    const minlsh_allocator *a;
    size_t i;
    int rc;
    if (d == NULL) return MINLSH_E_NULL;
    if (d->ran) return MINLSH_E_STATE;
    a = &d->alloc;
    /* A failed earlier run leaves its runs (they are complete) and
     * nothing else. */
    minlsh__free(a, d->exact_of);
    minlsh__free(a, d->copies);
    minlsh__free(a, d->edges);
    minlsh__free(a, d->decisions);
    d->exact_of = NULL;
    d->copies = NULL;
    d->edges = NULL;
    d->decisions = NULL;
    d->n_edges = 0;
    rc = minlsh__dedup_flush(d, 0);
    if (rc == 0) minlsh__dedup_batch_scratch_free(d); /* no batch comes after this one */
    if (rc == 0) rc = minlsh__dedup_exact(d);
    if (rc == 0) rc = minlsh__dedup_find(d);
    minlsh__free(a, d->copies);
    d->copies = NULL;
    if (rc == 0) rc = minlsh__dedup_decisions(d);
    if (rc != 0) {
        minlsh__free(a, d->exact_of);
        minlsh__free(a, d->edges);
        minlsh__free(a, d->decisions);
        d->exact_of = NULL;
        d->edges = NULL;
        d->decisions = NULL;
        d->n_edges = 0;
        return minlsh__dedup_io_result(d, rc);
    }
    /* Not needed any more: the candidate file's space, the batch scratch. */
    minlsh__tmpfile_close(&d->cand_file);
    for (i = 0; i < d->batch_cap; i++) minlsh_shingleset_free(d->batch_sets[i]);
    minlsh__free(a, d->batch_sets);
    d->batch_sets = NULL;
    d->batch_cap = 0;
    d->ran = 1;
    return 0;
}
