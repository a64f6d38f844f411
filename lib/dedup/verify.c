/*
 * Verification: the candidate runs merged without repeats, a part of the
 * first documents per pool item, and each candidate's similarity measured
 * (exact Jaccard of the sets, or the signature estimate) in chunks; the
 * pairs at or above the threshold become edges, in (a, b) order.
 *
 * Memory: per worker a chunk of MINLSH__DEDUP_CHUNK candidates (40 bytes
 * each) and the two records being compared; 16 bytes per edge. Time: one
 * merge of the candidate runs and one comparison per distinct candidate
 * (a sorted merge of two sets, or k values).
 */
#include "dedup.h"

int minlsh__dedup_signature(const minlsh_dedup *d, uint64_t i, uint32_t *sig) {
    minlsh__dedup_rec head;
    uint64_t *buf = NULL;
    size_t cap = 0;
    const void *body;
    int rc = minlsh__dedup_rec_body(d, i, &head, &buf, &cap, &body);
    if (rc == 0) {
        if (d->opts.verify == MINLSH_VERIFY_EXACT)
            rc = minlsh_family_sign(d->family, (const uint64_t *)body, (size_t)head.n, sig, d->k,
                                    NULL);
        else memcpy(sig, body, (size_t)d->k * sizeof *sig);
    }
    minlsh__free(&d->alloc, buf);
    return rc;
}

int minlsh__dedup_similarity(const minlsh_dedup *d, minlsh__dedup_scratch *s, uint32_t a,
                             uint32_t b, double *out) {
    minlsh__dedup_rec ha, hb;
    const void *x, *y;
    int rc;
    *out = 0.0;
    if (a == b) {
        *out = 1.0;
        return 0;
    }
    if ((rc = minlsh__dedup_rec_body(d, a, &ha, &s->a, &s->cap_a, &x)) != 0) return rc;
    if ((rc = minlsh__dedup_rec_body(d, b, &hb, &s->b, &s->cap_b, &y)) != 0) return rc;
    if (d->opts.verify == MINLSH_VERIFY_EXACT)
        (void)minlsh_jaccard_sorted(out, (const uint64_t *)x, (size_t)ha.n, (const uint64_t *)y,
                                    (size_t)hb.n);
    else (void)minlsh_signature_estimate(out, (const uint32_t *)x, (const uint32_t *)y, d->k);
    return 0;
}

/* ---- candidate runs, verified ------------------------------------------------- */

minlsh__dedup_scratch *minlsh__dedup_scratch_new(minlsh_dedup *d, size_t *n) {
    *n = minlsh__pool_size(minlsh__dedup_pool(d));
    return (minlsh__dedup_scratch *)minlsh__calloc(&d->alloc, *n, sizeof(minlsh__dedup_scratch));
}

void minlsh__dedup_scratch_free(minlsh_dedup *d, minlsh__dedup_scratch *s, size_t n) {
    size_t i;
    if (s == NULL) return;
    for (i = 0; i < n; i++) {
        minlsh__free(&d->alloc, s[i].a);
        minlsh__free(&d->alloc, s[i].b);
    }
    minlsh__free(&d->alloc, s);
}

#define MINLSH__DEDUP_CHUNK 16384 /* candidates a worker verifies at a time */

/* One worker's verification buffers. */
typedef struct minlsh__dedup_verifier {
    minlsh__dedup_scratch scratch;
    minlsh__kv *cand;  /* the chunk */
    minlsh__kv *order; /* (second document, index): the order to verify in */
    double *sim;
} minlsh__dedup_verifier;

/* One part's verified edges, in candidate order. */
typedef struct minlsh__dedup_part_edges {
    minlsh__dedup_edge *v;
    size_t n, cap;
    uint64_t candidates;
} minlsh__dedup_part_edges;

typedef struct minlsh__dedup_find_parts {
    minlsh_dedup *d;
    const minlsh__dedup_run *all; /* every band's candidate runs */
    size_t n_all, parts;
    const minlsh__dedup_run *done; /* candidates verified already: not again */
    size_t n_done;
    uint64_t span;
    minlsh__dedup_verifier *w;     /* per worker */
    minlsh__dedup_part_edges *out; /* per part */
} minlsh__dedup_find_parts;

/* Verify a chunk of candidates; append those that pass to the part's
 * edges. */
static int minlsh__dedup_verify_chunk(minlsh_dedup *d, minlsh__dedup_verifier *w, size_t n,
                                      minlsh__dedup_part_edges *out) {
    size_t i;
    int rc = 0;
    /* Candidates come sorted by their first document; with the records in
     * the data file, reading the second ones in file order too turns
     * random reads into a forward sweep. Results land in their own slots,
     * so the order changes nothing else. */
    for (i = 0; i < n; i++) {
        w->order[i].key = d->records_in_file ? w->cand[i].val : 0;
        w->order[i].val = i;
    }
    if (d->records_in_file) minlsh__sort_kv(w->order, n);
    for (i = 0; i < n && rc == 0; i++) {
        size_t j = (size_t)w->order[i].val;
        rc = minlsh__dedup_similarity(d, &w->scratch, (uint32_t)w->cand[j].key,
                                      (uint32_t)w->cand[j].val, &w->sim[j]);
    }
    for (i = 0; i < n && rc == 0; i++) {
        void *p;
        if (!(w->sim[i] >= d->opts.threshold)) continue;
        p = out->v;
        rc = minlsh__reserve(&d->alloc, &p, &out->cap, out->n, out->n + 1, sizeof *out->v);
        out->v = (minlsh__dedup_edge *)p;
        if (rc != 0) break;
        out->v[out->n].a = (uint32_t)w->cand[i].key;
        out->v[out->n].b = (uint32_t)w->cand[i].val;
        out->v[out->n].sim = w->sim[i];
        out->n++;
    }
    return rc;
}

/* The candidates whose first document is in one part, merged without
 * repeats (and without those verified already) and verified. */
static int minlsh__dedup_find_part(minlsh__dedup_find_parts *f, unsigned worker, size_t part) {
    minlsh_dedup *d = f->d;
    minlsh__dedup_verifier *w = &f->w[worker];
    minlsh__dedup_part_edges *out = &f->out[part];
    minlsh__dedup_merge m, done;
    minlsh__kv rec, last = {0, 0}, old = {0, 0};
    size_t n = 0;
    int rc, more, have = 0, more_old = 0;
    rc = minlsh__dedup_merge_part(&m, d, &d->cand_file, f->all, f->n_all, f->span, part, f->parts,
                                  0);
    if (rc != 0) return rc;
    rc = minlsh__dedup_merge_part(&done, d, &d->cand_file, f->done, f->n_done, f->span, part,
                                  f->parts, 0);
    if (rc != 0) {
        minlsh__dedup_merge_free(&m, f->n_all);
        return rc;
    }
    if ((more_old = minlsh__dedup_merge_next(&done, &old)) < 0) rc = more_old;
    do {
        more = rc == 0 ? minlsh__dedup_merge_next(&m, &rec) : 0;
        if (more < 0) rc = more;
        if (more > 0 && !(have && rec.key == last.key && rec.val == last.val)) {
            last = rec;
            have = 1;
            while (more_old > 0 && minlsh__dedup_kv_less(&old, &rec))
                more_old = minlsh__dedup_merge_next(&done, &old);
            if (more_old < 0) rc = more_old;
            if (!(more_old > 0 && old.key == rec.key && old.val == rec.val)) {
                w->cand[n++] = rec;
                out->candidates++;
            }
        }
        if (rc == 0 && n > 0 && (n == MINLSH__DEDUP_CHUNK || more == 0)) {
            rc = minlsh__dedup_verify_chunk(d, w, n, out);
            n = 0;
        }
    } while (more > 0 && rc == 0);
    minlsh__dedup_merge_free(&m, f->n_all);
    minlsh__dedup_merge_free(&done, f->n_done);
    return rc;
}

static int minlsh__dedup_find_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    size_t part;
    int rc = 0;
    for (part = begin; part < end && rc == 0; part++)
        rc = minlsh__dedup_find_part((minlsh__dedup_find_parts *)ctx, worker, part);
    return rc;
}

/* Candidate runs merged without repeats (and without those in done) and
 * verified, a part of the first documents per pool item; the parts' edges
 * joined in order into *edges (sorted by (a, b)), *n_edges of them, and
 * the candidates verified added to d->candidates. */
int minlsh__dedup_verify_runs(minlsh_dedup *d, const minlsh__dedup_run *all, size_t n_all,
                              const minlsh__dedup_run *done, size_t n_done,
                              minlsh__dedup_edge **edges, size_t *n_edges) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_find_parts f;
    size_t i, workers = minlsh__pool_size(minlsh__dedup_pool(d)), n = 0;
    int rc = 0;
    memset(&f, 0, sizeof f);
    *edges = NULL;
    *n_edges = 0;
    f.d = d;
    f.all = all;
    f.n_all = n_all;
    f.done = done;
    f.n_done = n_done;
    f.parts = minlsh__dedup_parts(d);
    f.span = d->n_docs / f.parts + 1;
    f.w = (minlsh__dedup_verifier *)minlsh__calloc(a, workers, sizeof *f.w);
    f.out = (minlsh__dedup_part_edges *)minlsh__calloc(a, f.parts, sizeof *f.out);
    if (f.w == NULL || f.out == NULL) rc = MINLSH_E_NOMEM;
    for (i = 0; i < workers && rc == 0; i++) {
        f.w[i].cand = (minlsh__kv *)minlsh__calloc(a, MINLSH__DEDUP_CHUNK, sizeof *f.w[i].cand);
        f.w[i].order = (minlsh__kv *)minlsh__calloc(a, MINLSH__DEDUP_CHUNK, sizeof *f.w[i].order);
        f.w[i].sim = (double *)minlsh__calloc(a, MINLSH__DEDUP_CHUNK, sizeof *f.w[i].sim);
        if (f.w[i].cand == NULL || f.w[i].order == NULL || f.w[i].sim == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0)
        rc = minlsh__pool_run(minlsh__dedup_pool(d), f.parts, 1, minlsh__dedup_find_range, &f);
    for (i = 0; i < f.parts && f.out != NULL; i++) {
        d->candidates += f.out[i].candidates;
        n += f.out[i].n;
    }
    if (rc == 0) {
        *edges = (minlsh__dedup_edge *)minlsh__malloc(a, (n + 1) * sizeof **edges);
        if (*edges == NULL) rc = MINLSH_E_NOMEM;
    }
    for (i = 0; i < f.parts && f.out != NULL; i++) {
        if (rc == 0 && f.out[i].n > 0)
            memcpy(*edges + *n_edges, f.out[i].v, f.out[i].n * sizeof **edges);
        if (rc == 0) *n_edges += f.out[i].n;
        minlsh__free(a, f.out[i].v);
    }
    for (i = 0; i < workers && f.w != NULL; i++) {
        minlsh__free(a, f.w[i].scratch.a);
        minlsh__free(a, f.w[i].scratch.b);
        minlsh__free(a, f.w[i].cand);
        minlsh__free(a, f.w[i].order);
        minlsh__free(a, f.w[i].sim);
    }
    minlsh__free(a, f.w);
    minlsh__free(a, f.out);
    return rc;
}
