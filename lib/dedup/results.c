/*
 * What the run gives: decisions, estimates, statistics, and the verified
 * pairs and the clusters as the pair and cluster handles of lib/lsh.
 */
#include "dedup.h"

#include "lsh/lsh.h" /* struct minlsh_pairs */

int minlsh_dedup_copy_decisions(const minlsh_dedup *d, uint64_t first,
                                minlsh_dedup_decision *decisions, size_t cap, size_t *n_out) {
    size_t n;
    if (n_out != NULL) *n_out = 0;
    if (d == NULL || (decisions == NULL && cap > 0)) return MINLSH_E_NULL;
    if (!d->ran) return MINLSH_E_STATE;
    if (first > d->n_docs) return MINLSH_E_NOTFOUND;
    n = d->n_docs - (size_t)first;
    if (n > cap) n = cap;
    if (n > 0) memcpy(decisions, d->decisions + first, n * sizeof *decisions);
    if (n_out != NULL) *n_out = n;
    return 0;
}

int minlsh_dedup_estimate(double *out, const minlsh_dedup *d, uint64_t a, uint64_t b) {
    uint32_t ga, gb;
    if (out == NULL || d == NULL) return MINLSH_E_NULL;
    if (a >= d->n_docs || b >= d->n_docs) return MINLSH_E_NOTFOUND;
    ga = d->docs[a].group;
    gb = d->docs[b].group;
    /* Exact copies are the same text, even when it has no shingle. */
    if (ga == gb) {
        *out = 1.0;
        return 0;
    }
    {
        uint32_t ba[MINLSH_FAMILY_K_MAX], bb[MINLSH_FAMILY_K_MAX];
        const uint32_t *sa = minlsh__dedup_sig(d, ga, ba), *sb = minlsh__dedup_sig(d, gb, bb);
        if (sa == NULL || sb == NULL) return MINLSH_E_IO;
        return minlsh_signature_estimate(out, sa, sb, d->k);
    }
}

int minlsh_dedup_copy_stats(minlsh_dedup_stats *s, const minlsh_dedup *d) {
    if (s == NULL || d == NULL) return MINLSH_E_NULL;
    memset(s, 0, sizeof *s);
    s->documents = d->n_docs;
    s->empty = d->empty;
    s->exact_groups = d->exact_groups;
    s->bands = d->bands;
    s->rows = d->rows;
    s->bytes = sizeof *d + d->cap_docs * sizeof *d->docs +
               (d->fp_mask ? (d->fp_mask + 1) * sizeof *d->fps : 0) +
               d->cap_groups * sizeof *d->groups + d->chunks.bytes + d->wcap +
               d->pend_cap * (size_t)d->k * 4 +
               d->n_edges * sizeof *d->edges +
               (d->decisions != NULL ? d->n_docs * sizeof *d->decisions : 0);
    {
        size_t j, i;
        for (j = 0; j < d->bands; j++)
            for (i = 0; i < d->band_runs[j].n; i++)
                if (d->band_runs[j].r[i].v != NULL)
                    s->bytes += d->band_runs[j].r[i].n * sizeof(minlsh__kv);
    }
    s->temp_bytes = d->temp_peak;
    if (d->ran) {
        s->candidates = d->candidates;
        s->verified = d->n_edges;
        s->capped_buckets = d->capped;
        s->kept = d->n_kept;
        s->dropped = d->n_docs - d->n_kept;
    }
    return 0;
}

/* The documents of every group, in order: members[off[g] .. off[g+1]). */
static int minlsh__dedup_members(const minlsh_dedup *d, const minlsh_allocator *a,
                                 size_t **off_out, uint64_t **members_out) {
    size_t *off = (size_t *)minlsh__calloc(a, d->n_groups + 2, sizeof *off);
    size_t *fill = (size_t *)minlsh__calloc(a, d->n_groups + 1, sizeof *fill);
    uint64_t *m = (uint64_t *)minlsh__calloc(a, d->n_docs + 1, sizeof *m);
    size_t i;
    if (off == NULL || fill == NULL || m == NULL) {
        minlsh__free(a, off);
        minlsh__free(a, fill);
        minlsh__free(a, m);
        return MINLSH_E_NOMEM;
    }
    for (i = 0; i < d->n_docs; i++) off[d->docs[i].group + 1]++;
    for (i = 0; i < d->n_groups; i++) off[i + 1] += off[i];
    for (i = 0; i < d->n_docs; i++) {
        uint32_t g = d->docs[i].group;
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
    if ((rc = minlsh__alloc_setup(&al, alloc)) != 0) return rc;
    /* Counted first, so that too many pairs builds nothing. */
    for (i = 0; i < d->n_groups; i++) total += d->groups[i].size * (d->groups[i].size - 1) / 2;
    for (i = 0; i < d->n_edges; i++)
        total += d->groups[d->edges[i].ga].size * d->groups[d->edges[i].gb].size;
    if (max_pairs != 0 && total > max_pairs) return MINLSH_E_TOOBIG;
    if (total > SIZE_MAX / sizeof(minlsh__pair)) return MINLSH_E_TOOBIG;
    rc = minlsh__dedup_members(d, &d->alloc, &off, &m);
    if (rc == 0) {
        pr = (minlsh_pairs *)minlsh__calloc(&al, 1, sizeof *pr);
        if (pr != NULL) {
            pr->alloc = al;
            pr->v = (minlsh__pair *)minlsh__calloc(&al, (size_t)total + 1, sizeof *pr->v);
        }
        if (pr == NULL || pr->v == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) {
        for (i = 0; i < d->n_groups; i++)
            for (x = off[i]; x < off[i + 1]; x++)
                for (y = x + 1; y < off[i + 1]; y++) {
                    pr->v[n].a = m[x];
                    pr->v[n].b = m[y];
                    pr->v[n++].sim = 1.0;
                }
        for (i = 0; i < d->n_edges; i++) {
            uint32_t ga = d->edges[i].ga, gb = d->edges[i].gb;
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
    uint64_t *ea, *eb;
    size_t i, n = 0;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (d == NULL) return MINLSH_E_NULL;
    if (!d->ran) return MINLSH_E_STATE;
    a = &d->alloc;
    ea = (uint64_t *)minlsh__calloc(a, d->n_docs + 1, sizeof *ea);
    eb = (uint64_t *)minlsh__calloc(a, d->n_docs + 1, sizeof *eb);
    rc = ea != NULL && eb != NULL ? 0 : MINLSH_E_NOMEM;
    /* Each dropped document joined to its representative: in COMPONENTS
     * mode the components, in STRICT mode each kept document's group. */
    for (i = 0; i < d->n_docs && rc == 0; i++)
        if (!d->decisions[i].kept) {
            ea[n] = i;
            eb[n++] = d->decisions[i].representative;
        }
    if (rc == 0) rc = minlsh_clusters_from_edges(out, ea, eb, n, alloc);
    minlsh__free(a, ea);
    minlsh__free(a, eb);
    return rc;
}
