/*
 * Candidates: per band, its runs merged into buckets of equal keys, and
 * every bucket of two to max_bucket exact groups giving its pairs as
 * sorted candidate runs (in memory within the band's quota, else in the
 * candidate file); then those verified (verify.c). In COMPONENTS mode
 * (unless every pair is wanted) in two rounds, so that pairs the first
 * round already joined are neither listed nor verified.
 *
 * Memory: the workers' candidate buffers, and the candidate runs kept in
 * memory (16 bytes a pair; 12 in the file), a sixteenth of the budget each
 * in all; between the rounds 4 bytes per document (its component). Time:
 * one merge of each band's runs, and up to n(n - 1)/2 pairs, sorted, per
 * bucket of n exact groups.
 */
#include "dedup.h"

/* A band's pairs in the making: flushed as a sorted run past `limit`
 * records. */
typedef struct minlsh__dedup_cbuf {
    minlsh__kv *v;
    size_t n, cap;
} minlsh__dedup_cbuf;

typedef struct minlsh__dedup_cands {
    minlsh_dedup *d;
    minlsh__dedup_runs *runs;    /* per band: its candidate runs */
    minlsh__dedup_runs *buckets; /* per band, in the first round of COMPONENTS:
                                    its buckets of three or more, as runs
                                    of (key, document) */
    uint64_t *capped;            /* per band */
    size_t limit;                /* candidate records per band before a run */
    uint64_t quota;              /* bytes of runs a band keeps in memory */
    const uint32_t *root;        /* second round: each document's component
                                    after the first (NULL in the first) */
} minlsh__dedup_cands;

/* Sort, drop repeats, store as a run: in memory while the band's quota
 * lasts (*held counts it). */
static int minlsh__dedup_cand_run(minlsh__dedup_cands *c, minlsh__dedup_runs *rs, uint64_t *held,
                                  minlsh__dedup_cbuf *b) {
    minlsh_dedup *d = c->d;
    minlsh__kv *v = b->v;
    size_t i, o, n = b->n;
    int in_file, rc;
    b->v = NULL;
    b->n = b->cap = 0;
    minlsh__sort_kv(v, n);
    for (i = 1, o = n > 0; i < n; i++)
        if (v[i].key != v[o - 1].key || v[i].val != v[o - 1].val) v[o++] = v[i];
    in_file = d->opts.memory != 0 && *held + o * sizeof *v > c->quota;
    if (!in_file) *held += o * sizeof *v;
    else if ((rc = minlsh__dedup_file(d, &d->cand_file)) != 0) {
        minlsh__free(&d->alloc, v);
        return rc;
    }
    return minlsh__dedup_run_store(d, &d->cand_file, in_file, rs, v, o);
}

static int minlsh__dedup_cand_push(minlsh__dedup_cands *c, minlsh__dedup_runs *rs, uint64_t *held,
                                   minlsh__dedup_cbuf *b, uint64_t key, uint64_t val) {
    int rc;
    if (b->n == b->cap && b->n >= c->limit && (rc = minlsh__dedup_cand_run(c, rs, held, b)) != 0)
        return rc;
    if (b->n == b->cap) {
        void *p = b->v;
        rc = minlsh__reserve(&c->d->alloc, &p, &b->cap, b->n, b->n + 1, sizeof *b->v);
        b->v = (minlsh__kv *)p;
        if (rc != 0) return rc;
    }
    b->v[b->n].key = key;
    b->v[b->n++].val = val;
    return 0;
}

/* The pairs of one bucket of nb exact groups (ascending). STRICT, and
 * COMPONENTS with every pair wanted: all of them. COMPONENTS otherwise, in
 * two rounds: first the pairs of its first document and, from a bucket of
 * three or more, the bucket itself, kept for the second round; then the
 * other pairs whose documents the first round's verified pairs did not
 * join (a pair inside a component cannot change a component). */
static int minlsh__dedup_bucket_pairs(minlsh__dedup_cands *c, size_t j, uint64_t *held,
                                      minlsh__dedup_cbuf *out, minlsh__dedup_cbuf *keep,
                                      uint64_t key, const uint64_t *bucket, size_t nb) {
    size_t x, y;
    int rc = 0;
    if (c->root != NULL) {
        const uint32_t *root = c->root;
        uint32_t r = root[bucket[1]];
        for (x = 2; x < nb && root[bucket[x]] == r; x++) {}
        if (x == nb) return 0; /* one component already */
        for (x = 1; x < nb && rc == 0; x++)
            for (y = x + 1; y < nb && rc == 0; y++)
                if (root[bucket[x]] != root[bucket[y]])
                    rc = minlsh__dedup_cand_push(c, &c->runs[j], held, out, bucket[x], bucket[y]);
        return rc;
    }
    if (c->buckets == NULL) {
        for (x = 0; x < nb && rc == 0; x++)
            for (y = x + 1; y < nb && rc == 0; y++)
                rc = minlsh__dedup_cand_push(c, &c->runs[j], held, out, bucket[x], bucket[y]);
        return rc;
    }
    for (y = 1; y < nb && rc == 0; y++)
        rc = minlsh__dedup_cand_push(c, &c->runs[j], held, out, bucket[0], bucket[y]);
    for (x = 0; nb >= 3 && x < nb && rc == 0; x++)
        rc = minlsh__dedup_cand_push(c, &c->buckets[j], held, keep, key, bucket[x]);
    return rc;
}

/* One band: its runs merged (in the second round of COMPONENTS, the
 * buckets the first kept); every bucket of two to max_bucket exact groups
 * gives its pairs. A document whose exact group starts before it stands
 * for nothing: its group's first document is in the same bucket. */
static int minlsh__dedup_band_cands(minlsh__dedup_cands *c, size_t j) {
    minlsh_dedup *d = c->d;
    const minlsh_allocator *a = &d->alloc;
    const minlsh__dedup_runs *in = c->root != NULL ? &c->buckets[j] : &d->band_runs[j];
    const minlsh__tmpfile *f = c->root != NULL ? &d->cand_file : &d->runs_file;
    minlsh__dedup_merge m;
    minlsh__dedup_cbuf out = {NULL, 0, 0}, keep = {NULL, 0, 0};
    minlsh__kv rec;
    uint64_t *bucket = NULL, key = 0, held = 0;
    size_t nb = 0, cap_b = 0;
    uint64_t max_bucket = d->opts.max_bucket;
    int rc, more;
    rc = minlsh__dedup_merge_init(&m, d, f, in->r, in->n, 0, 0, 1,
                                  MINLSH__DEDUP_MERGE_HASHED | MINLSH__DEDUP_MERGE_SHARED);
    if (rc != 0) return rc;
    do {
        more = minlsh__dedup_merge_next(&m, &rec);
        if (more < 0) {
            rc = more;
            break;
        }
        if (nb > 0 && (!more || rec.key != key)) { /* a bucket ends */
            if (max_bucket != 0 && nb > max_bucket) c->capped[j]++;
            else if (nb >= 2)
                rc = minlsh__dedup_bucket_pairs(c, j, &held, &out, &keep, key, bucket, nb);
            nb = 0;
        }
        if (more && rc == 0 && (key = rec.key, !(d->copies[rec.val / 64] >> (rec.val % 64) & 1))) {
            if (nb == cap_b) {
                void *p = bucket;
                rc = minlsh__reserve(a, &p, &cap_b, nb, nb + 1, sizeof *bucket);
                bucket = (uint64_t *)p;
                if (rc != 0) break;
            }
            bucket[nb++] = rec.val; /* ascending within a key */
        }
    } while (more > 0 && rc == 0);
    minlsh__dedup_merge_free(&m, in->n);
    minlsh__free(a, bucket);
    if (rc == 0) rc = minlsh__dedup_cand_run(c, &c->runs[j], &held, &out);
    if (rc == 0 && c->buckets != NULL && c->root == NULL)
        rc = minlsh__dedup_cand_run(c, &c->buckets[j], &held, &keep);
    minlsh__free(a, out.v);
    minlsh__free(a, keep.v);
    return rc;
}

static int minlsh__dedup_bands_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    size_t j;
    int rc = 0;
    (void)worker;
    for (j = begin; j < end && rc == 0; j++)
        rc = minlsh__dedup_band_cands((minlsh__dedup_cands *)ctx, j);
    return rc;
}

/* Every band's pairs of one round; their candidate runs in band order
 * into *all (*n_all of them; the runs stay the bands'). */
static int minlsh__dedup_band_round(minlsh_dedup *d, minlsh__dedup_cands *c,
                                    minlsh__dedup_run **all, size_t *n_all) {
    size_t j, i, n = 0;
    int rc = minlsh__pool_run(minlsh__dedup_pool(d), d->bands, 1, minlsh__dedup_bands_range, c);
    *all = NULL;
    *n_all = 0;
    for (j = 0; j < d->bands && rc == 0; j++) n += c->runs[j].n;
    if (rc == 0) {
        *all = (minlsh__dedup_run *)minlsh__calloc(&d->alloc, n + 1, sizeof **all);
        if (*all == NULL) rc = MINLSH_E_NOMEM;
    }
    for (j = 0; j < d->bands && rc == 0; j++)
        for (i = 0; i < c->runs[j].n; i++) (*all)[(*n_all)++] = c->runs[j].r[i];
    return rc;
}

static void minlsh__dedup_runs_list_free(minlsh_dedup *d, minlsh__dedup_runs *rs) {
    size_t j;
    if (rs == NULL) return;
    for (j = 0; j < d->bands; j++) minlsh__dedup_runs_free(d, &rs[j]);
    minlsh__free(&d->alloc, rs);
}

/* The edges of both rounds, each sorted by (a, b) and without a pair in
 * common (the second verifies no pair the first did), as one sorted list
 * into d->edges. */
static int minlsh__dedup_join_edges(minlsh_dedup *d, const minlsh__dedup_edge *x, size_t nx,
                                    const minlsh__dedup_edge *y, size_t ny) {
    size_t i = 0, j = 0, o = 0;
    d->edges = (minlsh__dedup_edge *)minlsh__malloc(&d->alloc, (nx + ny + 1) * sizeof *d->edges);
    if (d->edges == NULL) return MINLSH_E_NOMEM;
    while (i < nx || j < ny) {
        if (j == ny || (i < nx && (x[i].a < y[j].a || (x[i].a == y[j].a && x[i].b < y[j].b))))
            d->edges[o++] = x[i++];
        else d->edges[o++] = y[j++];
    }
    d->n_edges = o;
    return 0;
}

/* Candidates of every band, verified; in COMPONENTS mode (unless every
 * pair is wanted) in two rounds, so that the pairs a first round already
 * joined are neither listed nor verified: see minlsh__dedup_bucket_pairs. */
int minlsh__dedup_find(minlsh_dedup *d) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_cands c;
    minlsh__dedup_runs *first_runs = NULL;
    minlsh__dedup_run *all = NULL, *again = NULL;
    minlsh__dedup_edge *first = NULL, *second = NULL;
    uint32_t *root = NULL;
    size_t j, n_all = 0, n_again = 0, n_first = 0, n_second = 0, workers, kept = 0;
    uint64_t share = minlsh__dedup_share(d, 1);
    int rc = 0;
    memset(&c, 0, sizeof c);
    c.d = d;
    d->candidates = 0;
    workers = minlsh__pool_size(minlsh__dedup_pool(d));
    /* With a budget: the workers' buffers and the bands' runs in memory
     * take a sixteenth of it each. */
    c.limit = share == UINT64_MAX ? SIZE_MAX : (size_t)(share / 16 / (workers ? workers : 1));
    if (c.limit < 64) c.limit = 64;
    c.quota = share == UINT64_MAX ? UINT64_MAX : share / d->bands;
    c.runs = (minlsh__dedup_runs *)minlsh__calloc(a, d->bands, sizeof *c.runs);
    c.capped = (uint64_t *)minlsh__calloc(a, d->bands, sizeof *c.capped);
    if (c.runs == NULL || c.capped == NULL) rc = MINLSH_E_NOMEM;
    if (rc == 0 && d->opts.group == MINLSH_GROUP_COMPONENTS && !d->opts.all_pairs) {
        c.buckets = (minlsh__dedup_runs *)minlsh__calloc(a, d->bands, sizeof *c.buckets);
        if (c.buckets == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) rc = minlsh__dedup_band_round(d, &c, &all, &n_all);
    d->capped = 0;
    for (j = 0; j < d->bands && c.capped != NULL; j++) d->capped += c.capped[j];
    if (rc == 0) rc = minlsh__dedup_verify_runs(d, all, n_all, NULL, 0, &first, &n_first);
    for (j = 0; j < d->bands && c.buckets != NULL; j++) kept += c.buckets[j].n;
    if (rc == 0 && kept > 0) {
        /* The components of the first round's edges, for the second. */
        root = (uint32_t *)minlsh__malloc(a, ((size_t)d->n_docs + 1) * sizeof *root);
        if (root == NULL) rc = MINLSH_E_NOMEM;
        else minlsh__dedup_join(root, d->n_docs, NULL, first, n_first);
        c.root = root;
        /* Round two lists its own runs; the first round's stay, as the
         * pairs not to verify again. */
        first_runs = c.runs;
        c.runs = (minlsh__dedup_runs *)minlsh__calloc(a, d->bands, sizeof *c.runs);
        if (rc == 0 && c.runs == NULL) rc = MINLSH_E_NOMEM;
        if (rc == 0) rc = minlsh__dedup_band_round(d, &c, &again, &n_again);
        minlsh__free(a, root);
        if (rc == 0)
            rc = minlsh__dedup_verify_runs(d, again, n_again, all, n_all, &second, &n_second);
    }
    if (rc == 0) rc = minlsh__dedup_join_edges(d, first, n_first, second, n_second);
    minlsh__free(a, first);
    minlsh__free(a, second);
    minlsh__free(a, all);
    minlsh__free(a, again);
    minlsh__dedup_runs_list_free(d, first_runs);
    minlsh__dedup_runs_list_free(d, c.runs);
    minlsh__dedup_runs_list_free(d, c.buckets);
    minlsh__free(a, c.capped);
    minlsh__dedup_temp_peak(d);
    return rc;
}
