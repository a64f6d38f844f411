/*
 * What the run gives: decisions, estimates, statistics, and the verified
 * pairs and the clusters as the pair and cluster handles of lib/lsh.
 */
#include "dedup.h"

#include "lsh/lsh.h" /* struct minlsh_pairs */

int minlsh_dedup_copy_decisions(const minlsh_dedup *d, uint64_t first,
                                minlsh_dedup_decision *decisions, size_t cap, size_t *n_out) {
    size_t n;
    int rc;
    if (n_out != NULL) *n_out = 0;
    if (d == NULL || (decisions == NULL && cap > 0)) return MINLSH_E_NULL;
    if (!d->ran) return MINLSH_E_STATE;
    if (first > d->n_docs) return MINLSH_E_NOTFOUND;
    n = d->n_docs - (size_t)first;
    if (n > cap) n = cap;
    if (n > 0) {
        if (d->decisions != NULL) {
            memcpy(decisions, d->decisions + first, n * sizeof *decisions);
        } else {
            rc = minlsh__tmpfile_read(&d->dec_file, first * sizeof *decisions, decisions,
                                      n * sizeof *decisions);
            if (rc != 0) return rc;
        }
    }
    if (n_out != NULL) *n_out = n;
    return 0;
}

int minlsh_dedup_estimate(double *out, const minlsh_dedup *d, uint64_t a, uint64_t b) {
    minlsh__dedup_rec ha, hb;
    uint32_t stack[2 * MINLSH__K_STACK], *sa;
    int rc;
    if (out == NULL || d == NULL) return MINLSH_E_NULL;
    if (a >= d->n_docs || b >= d->n_docs) return MINLSH_E_NOTFOUND;
    /* Exact copies are the same text, even when it has no shingle. */
    if ((rc = minlsh__dedup_rec_head(d, a, &ha)) != 0) return rc;
    if ((rc = minlsh__dedup_rec_head(d, b, &hb)) != 0) return rc;
    if (a == b || memcmp(ha.fp, hb.fp, sizeof ha.fp) == 0) {
        *out = 1.0;
        return 0;
    }
    sa = (uint32_t *)minlsh__kbuf_get(&d->alloc, stack, 2 * MINLSH__K_STACK, 2 * (size_t)d->k,
                                      sizeof *sa);
    if (sa == NULL) return MINLSH_E_NOMEM;
    if ((rc = minlsh__dedup_signature(d, a, sa)) == 0 &&
        (rc = minlsh__dedup_signature(d, b, sa + d->k)) == 0)
        rc = minlsh_signature_estimate(out, sa, sa + d->k, d->k);
    minlsh__kbuf_put(&d->alloc, stack, sa);
    return rc;
}

int minlsh_dedup_copy_stats(minlsh_dedup_stats *s, const minlsh_dedup *d) {
    size_t j, i;
    if (s == NULL || d == NULL) return MINLSH_E_NULL;
    memset(s, 0, sizeof *s);
    s->documents = d->n_docs;
    s->empty = d->empty;
    s->bands = d->bands;
    s->rows = d->rows;
    s->bytes = sizeof *d + d->cap_docs * sizeof *d->rec +
               (d->lengths != NULL ? d->cap_docs * sizeof *d->lengths : 0) + d->chunks.bytes +
               d->wcap + d->pend_held * ((size_t)d->sig_values * 4 + 4 + sizeof *d->pend_fps) +
               d->n_edges * sizeof *d->edges +
               (d->exact_of != NULL ? d->n_docs * sizeof *d->exact_of : 0) +
               (d->decisions != NULL ? d->n_docs * sizeof *d->decisions : 0);
    for (j = 0; j < d->bands; j++)
        for (i = 0; i < d->band_runs[j].n; i++)
            if (d->band_runs[j].r[i].v != NULL)
                s->bytes += d->band_runs[j].r[i].n * sizeof(minlsh__kv);
    for (i = 0; i < d->fp_runs.n; i++)
        if (d->fp_runs.r[i].v != NULL) s->bytes += d->fp_runs.r[i].n * sizeof(minlsh__kv);
    s->bytes += minlsh__dedup_ids_bytes(d) + d->intake_bytes;
    s->repeated_ids = d->ids.repeated;
    s->temp_bytes = d->temp_peak;
    if (d->ran) {
        s->exact_groups = d->exact_groups;
        s->candidates = d->candidates;
        s->verified = d->n_edges;
        s->capped_buckets = d->capped;
        s->kept = d->n_kept;
        s->dropped = d->n_docs - d->n_kept;
    }
    return 0;
}

/* The documents of every exact group, in order: members[off[g] .. off[g+1])
 * for the group whose first document is g. */
static int minlsh__dedup_members(const minlsh_dedup *d, const minlsh_allocator *a,
                                 size_t **off_out, uint64_t **members_out) {
    size_t *off = (size_t *)minlsh__calloc(a, d->n_docs + 2, sizeof *off);
    size_t *fill = (size_t *)minlsh__calloc(a, d->n_docs + 1, sizeof *fill);
    uint64_t *m = (uint64_t *)minlsh__calloc(a, d->n_docs + 1, sizeof *m);
    size_t i;
    if (off == NULL || fill == NULL || m == NULL) {
        minlsh__free(a, off);
        minlsh__free(a, fill);
        minlsh__free(a, m);
        return MINLSH_E_NOMEM;
    }
    for (i = 0; i < d->n_docs; i++) off[d->exact_of[i] + 1]++;
    for (i = 0; i < d->n_docs; i++) off[i + 1] += off[i];
    for (i = 0; i < d->n_docs; i++) {
        uint32_t g = d->exact_of[i];
        m[off[g] + fill[g]++] = i;
    }
    minlsh__free(a, fill);
    *off_out = off;
    *members_out = m;
    return 0;
}

int minlsh_pairs_from_dedup(minlsh_pairs **out, const minlsh_dedup *d, uint64_t max_pairs,
                            const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_pairs *pr = NULL;
    size_t *off = NULL, i, x, y, n = 0;
    uint64_t *m = NULL, total = 0;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (d == NULL) return MINLSH_E_NULL;
    if (!d->ran) return MINLSH_E_STATE;
    if (d->opts.group == MINLSH_GROUP_COMPONENTS && !d->opts.all_pairs) return MINLSH_E_STATE;
    if ((rc = minlsh__alloc_setup(&al, alloc)) != 0) return rc;
    rc = minlsh__dedup_members(d, &d->alloc, &off, &m);
    if (rc != 0) return rc;
    /* Counted first, so that too many pairs builds nothing. */
    for (i = 0; i < d->n_docs; i++) {
        uint64_t size = off[i + 1] - off[i];
        total += size * (size - (size > 0)) / 2;
    }
    for (i = 0; i < d->n_edges; i++)
        total += (uint64_t)(off[d->edges[i].a + 1] - off[d->edges[i].a]) *
                 (off[d->edges[i].b + 1] - off[d->edges[i].b]);
    if ((max_pairs != 0 && total > max_pairs) || total > SIZE_MAX / sizeof(minlsh__pair))
        rc = MINLSH_E_TOOBIG;
    if (rc == 0) {
        pr = (minlsh_pairs *)minlsh__calloc(&al, 1, sizeof *pr);
        if (pr != NULL) {
            pr->alloc = al;
            pr->v = (minlsh__pair *)minlsh__calloc(&al, (size_t)total + 1, sizeof *pr->v);
        }
        if (pr == NULL || pr->v == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) {
        for (i = 0; i < d->n_docs; i++)
            for (x = off[i]; x < off[i + 1]; x++)
                for (y = x + 1; y < off[i + 1]; y++) {
                    pr->v[n].a = m[x];
                    pr->v[n].b = m[y];
                    pr->v[n++].sim = 1.0;
                }
        for (i = 0; i < d->n_edges; i++) {
            uint32_t ga = d->edges[i].a, gb = d->edges[i].b;
            for (x = off[ga]; x < off[ga + 1]; x++)
                for (y = off[gb]; y < off[gb + 1]; y++) {
                    pr->v[n].a = m[x] < m[y] ? m[x] : m[y];
                    pr->v[n].b = m[x] < m[y] ? m[y] : m[x];
                    pr->v[n++].sim = d->edges[i].sim;
                }
        }
        pr->n = n;
        minlsh__sort_pairs(pr->v, n); /* each (a, b) once: no ties */
    }
    minlsh__free(&d->alloc, off);
    minlsh__free(&d->alloc, m);
    if (rc != 0) {
        minlsh_pairs_free(pr);
        return rc;
    }
    *out = pr;
    return 0;
}

int minlsh_clusters_from_dedup(minlsh_clusters **out, const minlsh_dedup *d,
                               const minlsh_allocator *alloc) {
    const minlsh_allocator *a;
    minlsh_dedup_decision *v = NULL;
    uint64_t *ea = NULL, *eb = NULL, i;
    size_t n = 0, got = 0, j;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (d == NULL) return MINLSH_E_NULL;
    if (!d->ran) return MINLSH_E_STATE;
    a = &d->alloc;
    n = (size_t)(d->n_docs - d->n_kept);
    ea = (uint64_t *)minlsh__calloc(a, n + 1, sizeof *ea);
    eb = (uint64_t *)minlsh__calloc(a, n + 1, sizeof *eb);
    v = (minlsh_dedup_decision *)minlsh__calloc(a, 4096, sizeof *v);
    rc = ea != NULL && eb != NULL && v != NULL ? 0 : MINLSH_E_NOMEM;
    /* Each dropped document joined to its representative: in COMPONENTS
     * mode the components, in STRICT mode each kept document's group. */
    n = 0;
    for (i = 0; i < d->n_docs && rc == 0; i += got) {
        rc = minlsh_dedup_copy_decisions(d, i, v, 4096, &got);
        for (j = 0; j < got && rc == 0; j++)
            if (!v[j].kept) {
                ea[n] = i + j;
                eb[n++] = v[j].representative;
            }
    }
    if (rc == 0) rc = minlsh_clusters_from_edges(out, ea, eb, n, alloc);
    minlsh__free(a, ea);
    minlsh__free(a, eb);
    minlsh__free(a, v);
    return rc;
}
