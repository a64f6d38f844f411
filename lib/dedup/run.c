/*
 * Banding and the run: band keys of the distinct texts in batches, sorted
 * runs per band; at the run, per band, the runs merged and every bucket of
 * equal keys (left out and counted if over max_bucket) giving candidate
 * pairs, themselves kept as sorted runs; all candidate runs merged without
 * repeats and verified in chunks; then the decisions (connected components
 * or strict attribution). Work goes to the pool in items whose results land
 * in fixed slots and are merged in a fixed order, so nothing depends on the
 * thread count or on the memory budget.
 */
#include "dedup.h"

#include "lsh/lsh.h" /* union-find */

int minlsh__dedup_plan(minlsh_dedup *d) {
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    int rc;
    if (d->opts.bands != 0) {
        d->bands = d->opts.bands;
        d->rows = d->opts.rows;
        return 0;
    }
    po.k = d->k;
    po.mode = MINLSH_PLAN_RECALL;
    po.target_recall = 0.999;
    /* The planner wants t < 1; at t = 1 only identical signatures count,
     * which any plan finds. */
    po.threshold = d->opts.threshold < 0.99 ? d->opts.threshold : 0.99;
    rc = minlsh_plan_compute(&d->bands, &d->rows, NULL, NULL, &po);
    if (rc == MINLSH_E_PARAM) { /* k too small to reach the recall */
        po.mode = MINLSH_PLAN_BALANCED;
        rc = minlsh_plan_compute(&d->bands, &d->rows, NULL, NULL, &po);
    }
    return rc;
}

const uint32_t *minlsh__dedup_sig(const minlsh_dedup *d, uint32_t g, uint32_t *buf) {
    if (!d->spill) return (const uint32_t *)(uintptr_t)d->groups[g].sig_off;
    if (minlsh__dedup_data_read(d, d->groups[g].sig_off, buf, (size_t)d->k * sizeof *buf) != 0)
        return NULL;
    return buf;
}

static int minlsh__dedup_scratch_set(const minlsh_dedup *d, const minlsh__dedup_group *x,
                                     uint64_t **buf, size_t *cap, const uint64_t **out) {
    int rc;
    if (!d->spill) {
        *out = (const uint64_t *)(uintptr_t)x->set_off;
        return 0;
    }
    if (*cap < x->set_n + 1) {
        void *p = *buf;
        rc = minlsh__reserve(&d->alloc, &p, cap, 0, (size_t)x->set_n + 1, sizeof **buf);
        *buf = (uint64_t *)p;
        if (rc != 0) return rc;
    }
    *out = *buf;
    return minlsh__dedup_data_read(d, x->set_off, *buf, (size_t)x->set_n * sizeof **buf);
}

int minlsh__dedup_similarity(const minlsh_dedup *d, minlsh__dedup_scratch *s, uint32_t ga,
                             uint32_t gb, double *out) {
    int rc;
    *out = 0.0;
    if (ga == gb) {
        *out = 1.0;
        return 0;
    }
    if (d->opts.verify == MINLSH_VERIFY_EXACT) {
        const minlsh__dedup_group *x = &d->groups[ga], *y = &d->groups[gb];
        const uint64_t *a, *b;
        if ((rc = minlsh__dedup_scratch_set(d, x, &s->a, &s->cap_a, &a)) != 0) return rc;
        if ((rc = minlsh__dedup_scratch_set(d, y, &s->b, &s->cap_b, &b)) != 0) return rc;
        (void)minlsh_jaccard_sorted(out, a, (size_t)x->set_n, b, (size_t)y->set_n);
    } else {
        uint32_t ba[MINLSH_FAMILY_K_MAX], bb[MINLSH_FAMILY_K_MAX];
        const uint32_t *a = minlsh__dedup_sig(d, ga, ba), *b = minlsh__dedup_sig(d, gb, bb);
        if (a == NULL || b == NULL) return MINLSH_E_IO;
        (void)minlsh_signature_estimate(out, a, b, d->k);
    }
    return 0;
}

static int minlsh__dedup_run_push(const minlsh_dedup *d, minlsh__dedup_runs *rs,
                                  minlsh__dedup_run r) {
    void *p = rs->r;
    int rc = minlsh__reserve(&d->alloc, &p, &rs->cap, rs->n, rs->n + 1, sizeof *rs->r);
    rs->r = (minlsh__dedup_run *)p;
    if (rc != 0) return rc;
    rs->r[rs->n++] = r;
    return 0;
}

/* A sorted run: kept in memory (v is taken over) or written to f (v is
 * freed). */
static int minlsh__dedup_run_store(minlsh_dedup *d, minlsh__tmpfile *f, minlsh__dedup_runs *rs,
                                   minlsh__kv *v, size_t n) {
    minlsh__dedup_run r;
    int rc;
    r.v = NULL;
    r.off = 0;
    r.n = n;
    if (n == 0) {
        minlsh__free(&d->alloc, v);
        return 0;
    }
    if (d->spill) {
        rc = minlsh__tmpfile_append(f, v, n * sizeof *v, &r.off);
        minlsh__free(&d->alloc, v);
        if (rc != 0) return rc;
    } else {
        r.v = v;
    }
    rc = minlsh__dedup_run_push(d, rs, r);
    if (rc != 0) minlsh__free(&d->alloc, r.v);
    return rc;
}

/* ---- band keys, in batches of distinct texts ------------------------------------ */

typedef struct minlsh__dedup_batchkeys {
    minlsh_dedup *d;
    const uint32_t *sigs; /* k per text of the batch; NULL: in memory */
    size_t first, n;      /* groups first .. first + n */
    uint64_t *keys;       /* bands per text */
} minlsh__dedup_batchkeys;

static int minlsh__dedup_keys_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_batchkeys *c = (minlsh__dedup_batchkeys *)ctx;
    const minlsh_dedup *d = c->d;
    size_t i;
    (void)worker;
    for (i = begin; i < end; i++)
        if (!d->groups[c->first + i].empty)
            (void)minlsh_band_keys(c->sigs != NULL ? c->sigs + i * d->k
                                                   : minlsh__dedup_sig(d, (uint32_t)(c->first + i), NULL),
                                   d->k, d->bands, d->rows, c->keys + i * d->bands, d->bands,
                                   NULL);
    return 0;
}

/* One band of the batch: its (key, group) records, sorted (stable, so the
 * groups of one key stay ascending), into a run. */
static int minlsh__dedup_band_run(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_batchkeys *c = (minlsh__dedup_batchkeys *)ctx;
    minlsh_dedup *d = c->d;
    const minlsh_allocator *a = &d->alloc;
    size_t j, i, m;
    int rc = 0;
    (void)worker;
    for (j = begin; j < end && rc == 0; j++) {
        minlsh__kv *v = (minlsh__kv *)minlsh__malloc(a, (c->n + 1) * sizeof *v);
        minlsh__kv *tmp = (minlsh__kv *)minlsh__malloc(a, (c->n + 1) * sizeof *tmp);
        if (v == NULL || tmp == NULL) {
            minlsh__free(a, v);
            minlsh__free(a, tmp);
            return MINLSH_E_NOMEM;
        }
        for (i = 0, m = 0; i < c->n; i++) {
            if (d->groups[c->first + i].empty) continue;
            v[m].key = c->keys[i * d->bands + j];
            v[m].val = c->first + i;
            m++;
        }
        minlsh__radix_kv(v, tmp, m, 0, 64);
        minlsh__free(a, tmp);
        /* Each band's run list has one writer: this item. */
        rc = minlsh__dedup_run_store(d, &d->band_file, &d->band_runs[j], v, m);
    }
    return rc;
}

/* All or nothing: a band batch that fails leaves every band's runs as they
 * were (a file run written already only wastes its space). */
static int minlsh__dedup_band_batch(minlsh_dedup *d, const uint32_t *sigs, size_t first,
                                    size_t n) {
    minlsh__dedup_batchkeys c;
    size_t keys_n, *had, j;
    int rc;
    if (n == 0) return 0;
    if (minlsh__mul_size(&keys_n, n, d->bands) != 0) return MINLSH_E_TOOBIG;
    had = (size_t *)minlsh__calloc(&d->alloc, d->bands, sizeof *had);
    if (had == NULL) return MINLSH_E_NOMEM;
    for (j = 0; j < d->bands; j++) had[j] = d->band_runs[j].n;
    c.d = d;
    c.sigs = sigs;
    c.first = first;
    c.n = n;
    c.keys = (uint64_t *)minlsh__calloc(&d->alloc, keys_n, sizeof *c.keys);
    rc = c.keys != NULL ? 0 : MINLSH_E_NOMEM;
    if (rc == 0) rc = minlsh__pool_run(minlsh__dedup_pool(d), n, 256, minlsh__dedup_keys_range, &c);
    if (rc == 0)
        rc = minlsh__pool_run(minlsh__dedup_pool(d), d->bands, 1, minlsh__dedup_band_run, &c);
    minlsh__free(&d->alloc, c.keys);
    for (j = 0; j < d->bands && rc != 0; j++)
        while (d->band_runs[j].n > had[j]) minlsh__free(&d->alloc, d->band_runs[j].r[--d->band_runs[j].n].v);
    minlsh__free(&d->alloc, had);
    return rc;
}

int minlsh__dedup_flush_bands(minlsh_dedup *d) {
    int rc;
    if (!d->spill) return 0; /* banded at the run, in one batch */
    rc = minlsh__dedup_band_batch(d, d->pend_sigs, d->pend_first, d->pend_n);
    if (rc != 0) return rc;
    d->pend_first += d->pend_n;
    d->pend_n = 0;
    return 0;
}

/* ---- merging sorted runs ------------------------------------------------------- */

#define MINLSH__DEDUP_BLOCK 4096 /* records read at once from a file run */

typedef struct minlsh__dedup_cursor {
    const minlsh__dedup_run *run;
    const minlsh__kv *at; /* current record */
    size_t left;          /* records left in the block, at included */
    uint64_t next;        /* index in the run of the block after this one */
    minlsh__kv *block;
} minlsh__dedup_cursor;

typedef struct minlsh__dedup_merge {
    const minlsh_dedup *d;
    const minlsh__tmpfile *f;
    minlsh__dedup_cursor *c;
    size_t *heap; /* cursor numbers, least record first */
    size_t n;     /* cursors still in the heap */
} minlsh__dedup_merge;

static int minlsh__dedup_kv_less(const minlsh__kv *x, const minlsh__kv *y) {
    return x->key < y->key || (x->key == y->key && x->val < y->val);
}

/* Load the next block of c; 0 with c->left 0 at the end. */
static int minlsh__dedup_cursor_load(const minlsh__dedup_merge *m, minlsh__dedup_cursor *c) {
    uint64_t n = c->run->n - c->next;
    if (c->run->v != NULL) { /* in memory: one block */
        c->at = c->run->v + c->next;
        c->left = (size_t)n;
        c->next = c->run->n;
        return 0;
    }
    if (n > MINLSH__DEDUP_BLOCK) n = MINLSH__DEDUP_BLOCK;
    c->at = c->block;
    c->left = (size_t)n;
    if (n == 0) return 0;
    c->next += n;
    return minlsh__tmpfile_read(m->f, c->run->off + (c->next - n) * sizeof(minlsh__kv), c->block,
                                (size_t)n * sizeof(minlsh__kv));
}

static int minlsh__dedup_heap_less(const minlsh__dedup_merge *m, size_t x, size_t y) {
    const minlsh__kv *a = m->c[m->heap[x]].at, *b = m->c[m->heap[y]].at;
    if (minlsh__dedup_kv_less(a, b)) return 1;
    if (minlsh__dedup_kv_less(b, a)) return 0;
    return m->heap[x] < m->heap[y]; /* equal records: the earlier run first */
}

static void minlsh__dedup_heap_down(minlsh__dedup_merge *m, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i, t;
        if (l < m->n && minlsh__dedup_heap_less(m, l, s)) s = l;
        if (r < m->n && minlsh__dedup_heap_less(m, r, s)) s = r;
        if (s == i) return;
        t = m->heap[i];
        m->heap[i] = m->heap[s];
        m->heap[s] = t;
        i = s;
    }
}

static void minlsh__dedup_merge_free(minlsh__dedup_merge *m, size_t n_runs) {
    size_t i;
    if (m->c != NULL)
        for (i = 0; i < n_runs; i++) minlsh__free(&m->d->alloc, m->c[i].block);
    minlsh__free(&m->d->alloc, m->c);
    minlsh__free(&m->d->alloc, m->heap);
}

static int minlsh__dedup_merge_init(minlsh__dedup_merge *m, const minlsh_dedup *d,
                                    const minlsh__tmpfile *f, const minlsh__dedup_run *runs,
                                    size_t n_runs) {
    const minlsh_allocator *a = &d->alloc;
    size_t i;
    int rc = 0;
    m->d = d;
    m->f = f;
    m->n = 0;
    m->c = (minlsh__dedup_cursor *)minlsh__calloc(a, n_runs + 1, sizeof *m->c);
    m->heap = (size_t *)minlsh__calloc(a, n_runs + 1, sizeof *m->heap);
    if (m->c == NULL || m->heap == NULL) rc = MINLSH_E_NOMEM;
    for (i = 0; i < n_runs && rc == 0; i++) {
        minlsh__dedup_cursor *c = &m->c[i];
        c->run = &runs[i];
        if (runs[i].v == NULL) {
            c->block = (minlsh__kv *)minlsh__malloc(a, MINLSH__DEDUP_BLOCK * sizeof *c->block);
            if (c->block == NULL) rc = MINLSH_E_NOMEM;
        }
        if (rc == 0) rc = minlsh__dedup_cursor_load(m, c);
        if (rc == 0 && c->left > 0) m->heap[m->n++] = i;
    }
    for (i = m->n / 2; i-- > 0;) minlsh__dedup_heap_down(m, i);
    if (rc != 0) minlsh__dedup_merge_free(m, n_runs);
    return rc;
}

/* The least record left into *out; 1 if there was one, 0 at the end, or a
 * negative error. */
static int minlsh__dedup_merge_next(minlsh__dedup_merge *m, minlsh__kv *out) {
    minlsh__dedup_cursor *c;
    int rc;
    if (m->n == 0) return 0;
    c = &m->c[m->heap[0]];
    *out = *c->at;
    c->at++;
    if (--c->left == 0 && (rc = minlsh__dedup_cursor_load(m, c)) != 0) return rc;
    if (c->left == 0) m->heap[0] = m->heap[--m->n];
    minlsh__dedup_heap_down(m, 0);
    return 1;
}

/* ---- candidates ------------------------------------------------------------ */

typedef struct minlsh__dedup_cands {
    minlsh_dedup *d;
    minlsh__dedup_runs *runs; /* per band: its candidate runs */
    uint64_t *capped;         /* per band */
    size_t limit;             /* candidate records per band before a run */
} minlsh__dedup_cands;

/* Sort, drop repeats, store as a run. */
static int minlsh__dedup_cand_run(minlsh_dedup *d, minlsh__dedup_runs *rs, minlsh__kv *v,
                                  size_t n) {
    size_t i, o;
    minlsh__sort_kv(v, n);
    for (i = 1, o = n > 0; i < n; i++)
        if (v[i].key != v[o - 1].key || v[i].val != v[o - 1].val) v[o++] = v[i];
    return minlsh__dedup_run_store(d, &d->cand_file, rs, v, o);
}

/* One band: its runs merged; every bucket of two to max_bucket groups gives
 * its pairs. */
static int minlsh__dedup_band_cands(minlsh__dedup_cands *c, size_t j) {
    minlsh_dedup *d = c->d;
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_merge m;
    minlsh__kv rec, *out = NULL;
    uint64_t *bucket = NULL, key = 0;
    size_t nb = 0, cap_b = 0, n = 0, cap = 0, x, y;
    uint64_t max_bucket = d->opts.max_bucket;
    int rc, more;
    rc = minlsh__dedup_merge_init(&m, d, &d->band_file, d->band_runs[j].r, d->band_runs[j].n);
    if (rc != 0) return rc;
    do {
        more = minlsh__dedup_merge_next(&m, &rec);
        if (more < 0) {
            rc = more;
            break;
        }
        if (nb > 0 && (!more || rec.key != key)) { /* a bucket ends */
            if (max_bucket != 0 && nb > max_bucket) {
                c->capped[j]++;
            } else {
                for (x = 0; x < nb && rc == 0; x++)
                    for (y = x + 1; y < nb && rc == 0; y++) {
                        if (n == cap && d->spill && n >= c->limit) {
                            rc = minlsh__dedup_cand_run(d, &c->runs[j], out, n);
                            out = NULL;
                            n = cap = 0;
                            if (rc != 0) break;
                        }
                        if (n == cap) {
                            void *p = out;
                            rc = minlsh__reserve(a, &p, &cap, n, n + 1, sizeof *out);
                            out = (minlsh__kv *)p;
                            if (rc != 0) break;
                        }
                        out[n].key = bucket[x];
                        out[n].val = bucket[y];
                        n++;
                    }
            }
            nb = 0;
        }
        if (more && rc == 0) {
            if (nb == cap_b) {
                void *p = bucket;
                rc = minlsh__reserve(a, &p, &cap_b, nb, nb + 1, sizeof *bucket);
                bucket = (uint64_t *)p;
                if (rc != 0) break;
            }
            key = rec.key;
            bucket[nb++] = rec.val; /* ascending within a key */
        }
    } while (more > 0 && rc == 0);
    minlsh__dedup_merge_free(&m, d->band_runs[j].n);
    minlsh__free(a, bucket);
    if (rc == 0) return minlsh__dedup_cand_run(d, &c->runs[j], out, n);
    minlsh__free(a, out);
    return rc;
}

static int minlsh__dedup_bands_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    size_t j;
    int rc = 0;
    (void)worker;
    for (j = begin; j < end && rc == 0; j++) rc = minlsh__dedup_band_cands((minlsh__dedup_cands *)ctx, j);
    return rc;
}

/* ---- verification ------------------------------------------------------------- */

typedef struct minlsh__dedup_verify {
    minlsh_dedup *d;
    minlsh__dedup_scratch *scratch; /* per worker */
    const minlsh__kv *cand;
    double *sim;
} minlsh__dedup_verify;

static int minlsh__dedup_verify_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_verify *c = (minlsh__dedup_verify *)ctx;
    size_t i;
    int rc = 0;
    for (i = begin; i < end && rc == 0; i++)
        rc = minlsh__dedup_similarity(c->d, &c->scratch[worker], (uint32_t)c->cand[i].key,
                                      (uint32_t)c->cand[i].val, &c->sim[i]);
    return rc;
}

#define MINLSH__DEDUP_CHUNK 65536 /* candidates verified per pool run */

/* Verify a chunk of candidates; append those that pass to the edges. */
static int minlsh__dedup_verify_chunk(minlsh__dedup_verify *v, const minlsh__kv *cand,
                                      size_t n, size_t *cap_edges) {
    minlsh_dedup *d = v->d;
    size_t i;
    int rc;
    v->cand = cand;
    rc = minlsh__pool_run(minlsh__dedup_pool(d), n, 64, minlsh__dedup_verify_range, v);
    for (i = 0; i < n && rc == 0; i++) {
        void *p;
        if (!(v->sim[i] >= d->opts.threshold)) continue;
        p = d->edges;
        rc = minlsh__reserve(&d->alloc, &p, cap_edges, d->n_edges, d->n_edges + 1,
                             sizeof *d->edges);
        d->edges = (minlsh__dedup_edge *)p;
        if (rc != 0) break;
        d->edges[d->n_edges].ga = (uint32_t)cand[i].key;
        d->edges[d->n_edges].gb = (uint32_t)cand[i].val;
        d->edges[d->n_edges].sim = v->sim[i];
        d->n_edges++;
    }
    return rc;
}

static minlsh__dedup_scratch *minlsh__dedup_scratch_new(minlsh_dedup *d, size_t *n) {
    *n = minlsh__pool_size(minlsh__dedup_pool(d));
    return (minlsh__dedup_scratch *)minlsh__calloc(&d->alloc, *n, sizeof(minlsh__dedup_scratch));
}

static void minlsh__dedup_scratch_free(minlsh_dedup *d, minlsh__dedup_scratch *s, size_t n) {
    size_t i;
    if (s == NULL) return;
    for (i = 0; i < n; i++) {
        minlsh__free(&d->alloc, s[i].a);
        minlsh__free(&d->alloc, s[i].b);
    }
    minlsh__free(&d->alloc, s);
}

/* Candidates of every band, merged without repeats, verified in chunks. */
static int minlsh__dedup_find(minlsh_dedup *d) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_cands c;
    minlsh__dedup_verify v;
    minlsh__dedup_run *all = NULL;
    minlsh__dedup_merge m;
    minlsh__kv *chunk = NULL, rec, last = {0, 0};
    size_t j, i, n_all = 0, n = 0, cap_edges = 0, n_scratch = 0, workers;
    int rc = 0, more, have = 0;
    memset(&c, 0, sizeof c);
    memset(&v, 0, sizeof v);
    c.d = d;
    workers = minlsh__pool_size(minlsh__dedup_pool(d));
    c.limit = d->spill ? (size_t)(d->opts.memory / 4 / 16 / workers) : 0;
    if (c.limit < 64) c.limit = 64;
    c.runs = (minlsh__dedup_runs *)minlsh__calloc(a, d->bands, sizeof *c.runs);
    c.capped = (uint64_t *)minlsh__calloc(a, d->bands, sizeof *c.capped);
    if (c.runs == NULL || c.capped == NULL) rc = MINLSH_E_NOMEM;
    if (rc == 0)
        rc = minlsh__pool_run(minlsh__dedup_pool(d), d->bands, 1, minlsh__dedup_bands_range, &c);
    /* Every band's candidate runs, in band order. */
    for (j = 0; j < d->bands && rc == 0; j++) n_all += c.runs[j].n;
    if (rc == 0) {
        all = (minlsh__dedup_run *)minlsh__calloc(a, n_all + 1, sizeof *all);
        if (all == NULL) rc = MINLSH_E_NOMEM;
    }
    for (j = 0, n_all = 0; j < d->bands && rc == 0; j++)
        for (i = 0; i < c.runs[j].n; i++) all[n_all++] = c.runs[j].r[i];
    d->capped = 0;
    for (j = 0; j < d->bands && c.capped != NULL; j++) d->capped += c.capped[j];
    if (rc == 0) {
        v.d = d;
        v.scratch = minlsh__dedup_scratch_new(d, &n_scratch);
        v.sim = (double *)minlsh__calloc(a, MINLSH__DEDUP_CHUNK, sizeof *v.sim);
        chunk = (minlsh__kv *)minlsh__calloc(a, MINLSH__DEDUP_CHUNK, sizeof *chunk);
        if (v.scratch == NULL || v.sim == NULL || chunk == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) rc = minlsh__dedup_merge_init(&m, d, &d->cand_file, all, n_all);
    d->candidates = 0;
    if (rc == 0) {
        do {
            more = minlsh__dedup_merge_next(&m, &rec);
            if (more < 0) rc = more;
            if (more > 0 && !(have && rec.key == last.key && rec.val == last.val)) {
                chunk[n++] = rec;
                last = rec;
                have = 1;
                d->candidates++;
            }
            if (rc == 0 && n > 0 && (n == MINLSH__DEDUP_CHUNK || more == 0)) {
                rc = minlsh__dedup_verify_chunk(&v, chunk, n, &cap_edges);
                n = 0;
            }
        } while (more > 0 && rc == 0);
        minlsh__dedup_merge_free(&m, n_all);
    }
    minlsh__dedup_scratch_free(d, v.scratch, n_scratch);
    minlsh__free(a, v.sim);
    minlsh__free(a, chunk);
    minlsh__free(a, all);
    if (c.runs != NULL)
        for (j = 0; j < d->bands; j++) {
            for (i = 0; i < c.runs[j].n; i++) minlsh__free(a, c.runs[j].r[i].v);
            minlsh__free(a, c.runs[j].r);
        }
    minlsh__free(a, c.runs);
    minlsh__free(a, c.capped);
    {
        uint64_t now = minlsh__tmpfile_size(&d->data) + minlsh__tmpfile_size(&d->band_file) +
                       minlsh__tmpfile_size(&d->cand_file);
        if (now > d->temp_peak) d->temp_peak = now;
    }
    /* The candidate file's space is not needed any more. */
    minlsh__tmpfile_close(&d->cand_file);
    return rc;
}

/* ---- decisions ------------------------------------------------------------------ */

/* 1 if document x should be kept rather than y (x, y in one cluster). */
static int minlsh__dedup_better(const minlsh_dedup *d, uint64_t x, uint64_t y) {
    if (y == MINLSH__DEDUP_NONE) return 1;
    if (d->opts.keep == MINLSH_KEEP_LONGEST && d->docs[x].length != d->docs[y].length)
        return d->docs[x].length > d->docs[y].length;
    return x < y;
}

typedef struct minlsh__dedup_sims {
    minlsh_dedup *d;
    minlsh__dedup_scratch *scratch;
} minlsh__dedup_sims;

/* The similarity of each dropped document to its representative. */
static int minlsh__dedup_sims_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_sims *c = (minlsh__dedup_sims *)ctx;
    minlsh_dedup *d = c->d;
    size_t i;
    int rc = 0;
    for (i = begin; i < end && rc == 0; i++) {
        minlsh_dedup_decision *x = &d->decisions[i];
        uint32_t g = d->docs[i].group, h = d->docs[x->representative].group;
        x->exact = !x->kept && g == h;
        rc = minlsh__dedup_similarity(d, &c->scratch[worker], g, h, &x->similarity);
    }
    return rc;
}

static int minlsh__dedup_components(minlsh_dedup *d) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__lsh_uf uf = {NULL, NULL};
    uint64_t *best = NULL, *low = NULL;
    minlsh__dedup_sims c;
    size_t i, n_scratch = 0;
    int rc = minlsh__lsh_uf_init(&uf, a, d->n_groups + 1);
    c.scratch = NULL;
    if (rc == 0) {
        best = (uint64_t *)minlsh__malloc(a, (d->n_groups + 1) * sizeof *best);
        low = (uint64_t *)minlsh__malloc(a, (d->n_groups + 1) * sizeof *low);
        c.scratch = minlsh__dedup_scratch_new(d, &n_scratch);
        if (best == NULL || low == NULL || c.scratch == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) {
        for (i = 0; i < d->n_edges; i++)
            (void)minlsh__lsh_uf_union(&uf, d->edges[i].ga, d->edges[i].gb);
        for (i = 0; i < d->n_groups; i++) best[i] = low[i] = MINLSH__DEDUP_NONE;
        for (i = 0; i < d->n_docs; i++) {
            uint32_t r = minlsh__lsh_uf_find(&uf, d->docs[i].group);
            if (low[r] == MINLSH__DEDUP_NONE) low[r] = i;
            if (minlsh__dedup_better(d, i, best[r])) best[r] = i;
        }
        for (i = 0; i < d->n_docs; i++) {
            uint32_t r = minlsh__lsh_uf_find(&uf, d->docs[i].group);
            d->decisions[i].cluster = low[r];
            d->decisions[i].representative = best[r];
            d->decisions[i].kept = best[r] == i;
        }
        c.d = d;
        rc = minlsh__pool_run(minlsh__dedup_pool(d), d->n_docs, 256, minlsh__dedup_sims_range,
                              &c);
    }
    minlsh__dedup_scratch_free(d, c.scratch, n_scratch);
    minlsh__free(a, best);
    minlsh__free(a, low);
    minlsh__lsh_uf_free(&uf, a);
    return rc;
}

typedef struct minlsh__dedup_adj {
    uint32_t group;
    double sim;
} minlsh__dedup_adj;

/* Documents in keep order: each is kept unless an exact copy or a verified
 * near-duplicate of it is kept already; then it is attributed to that one
 * (the most similar; ties: the lowest number). */
static int minlsh__dedup_strict(minlsh_dedup *d) {
    const minlsh_allocator *a = &d->alloc;
    size_t *off = NULL, *fill = NULL, i, t;
    minlsh__dedup_adj *adj = NULL;
    uint64_t *kept_of = NULL;
    minlsh__kv *order = NULL;
    int rc = 0;
    off = (size_t *)minlsh__calloc(a, d->n_groups + 2, sizeof *off);
    fill = (size_t *)minlsh__calloc(a, d->n_groups + 1, sizeof *fill);
    adj = (minlsh__dedup_adj *)minlsh__calloc(a, 2 * d->n_edges + 1, sizeof *adj);
    kept_of = (uint64_t *)minlsh__malloc(a, (d->n_groups + 1) * sizeof *kept_of);
    if (d->opts.keep == MINLSH_KEEP_LONGEST)
        order = (minlsh__kv *)minlsh__calloc(a, d->n_docs + 1, sizeof *order);
    if (off == NULL || fill == NULL || adj == NULL || kept_of == NULL ||
        (d->opts.keep == MINLSH_KEEP_LONGEST && order == NULL))
        rc = MINLSH_E_NOMEM;
    if (rc == 0) {
        for (i = 0; i < d->n_edges; i++) {
            off[d->edges[i].ga + 1]++;
            off[d->edges[i].gb + 1]++;
        }
        for (i = 0; i < d->n_groups; i++) off[i + 1] += off[i];
        for (i = 0; i < d->n_edges; i++) {
            uint32_t x = d->edges[i].ga, y = d->edges[i].gb;
            adj[off[x] + fill[x]].group = y;
            adj[off[x] + fill[x]++].sim = d->edges[i].sim;
            adj[off[y] + fill[y]].group = x;
            adj[off[y] + fill[y]++].sim = d->edges[i].sim;
        }
        for (i = 0; i < d->n_groups; i++) kept_of[i] = MINLSH__DEDUP_NONE;
        if (order != NULL) {
            /* Longest first (the complement orders lengths descending),
             * then by number. */
            for (i = 0; i < d->n_docs; i++) {
                order[i].key = ~d->docs[i].length;
                order[i].val = i;
            }
            minlsh__sort_kv(order, d->n_docs);
        }
        for (t = 0; t < d->n_docs; t++) {
            uint64_t doc = order != NULL ? order[t].val : t, rep = MINLSH__DEDUP_NONE;
            uint32_t g = d->docs[doc].group;
            minlsh_dedup_decision *x = &d->decisions[doc];
            double best = -1.0;
            size_t e;
            if (kept_of[g] != MINLSH__DEDUP_NONE) {
                rep = kept_of[g];
                best = 1.0;
            } else {
                for (e = off[g]; e < off[g + 1]; e++) {
                    uint64_t r = kept_of[adj[e].group];
                    if (r == MINLSH__DEDUP_NONE) continue;
                    if (adj[e].sim > best || (adj[e].sim == best && r < rep)) {
                        best = adj[e].sim;
                        rep = r;
                    }
                }
            }
            if (rep == MINLSH__DEDUP_NONE) {
                kept_of[g] = doc;
                rep = doc;
                best = 1.0;
            }
            x->representative = rep;
            x->cluster = rep;
            x->kept = rep == doc;
            x->exact = rep != doc && d->docs[rep].group == g;
            x->similarity = best;
        }
    }
    minlsh__free(a, off);
    minlsh__free(a, fill);
    minlsh__free(a, adj);
    minlsh__free(a, kept_of);
    minlsh__free(a, order);
    return rc;
}

int minlsh_dedup_run(minlsh_dedup *d) {
    const minlsh_allocator *a;
    size_t i;
    int rc;
    if (d == NULL) return MINLSH_E_NULL;
    if (d->ran) return MINLSH_E_STATE;
    a = &d->alloc;
    /* A failed earlier run leaves its band runs (they are complete) and
     * nothing else. */
    minlsh__free(a, d->edges);
    minlsh__free(a, d->decisions);
    d->edges = NULL;
    d->decisions = NULL;
    d->n_edges = 0;
    /* Without a budget the whole corpus is one batch, banded once. */
    if (d->spill) rc = minlsh__dedup_flush_bands(d);
    else rc = minlsh__dedup_band_batch(d, NULL, d->pend_first, d->n_groups - d->pend_first);
    if (rc == 0 && !d->spill) d->pend_first = d->n_groups;
    if (rc == 0 && d->spill && d->cand_file.fd < 0)
        rc = minlsh__tmpfile_open(&d->cand_file, d->tmpdir);
    if (rc == 0) rc = minlsh__dedup_find(d);
    if (rc == 0) {
        d->decisions =
            (minlsh_dedup_decision *)minlsh__calloc(a, d->n_docs + 1, sizeof *d->decisions);
        if (d->decisions == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0)
        rc = d->opts.group == MINLSH_GROUP_STRICT ? minlsh__dedup_strict(d)
                                                  : minlsh__dedup_components(d);
    if (rc != 0) {
        minlsh__free(a, d->edges);
        minlsh__free(a, d->decisions);
        d->edges = NULL;
        d->decisions = NULL;
        d->n_edges = 0;
        return rc;
    }
    for (i = 0, d->n_kept = 0; i < d->n_docs; i++) d->n_kept += d->decisions[i].kept;
    /* The batch scratch is not needed any more. */
    for (i = 0; i < d->batch_cap; i++) minlsh_shingleset_free(d->batch_sets[i]);
    minlsh__free(a, d->batch_sets);
    d->batch_sets = NULL;
    d->batch_cap = 0;
    d->ran = 1;
    return 0;
}
