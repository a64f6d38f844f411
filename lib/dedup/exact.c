/*
 * Exact groups: the fingerprint runs merged, a part of the keys per pool
 * item, and every document joined to the first with its fingerprint
 * (exact_of); then a bit per document that is a copy, for the band merges
 * to skip.
 *
 * Memory: 4 bytes per document (exact_of) and 1 bit (the copies), with the
 * merge's blocks per worker. Time: one merge of the fingerprint runs; the
 * documents of a shared key (rare unless they are copies) are compared by
 * their whole fingerprints, read back from their records.
 */
#include "dedup.h"

/* exact_of from the fingerprint runs merged, a part of the keys (the
 * fingerprint's first 8 bytes) per pool item: documents with equal keys
 * come in ascending order; the whole 16 bytes are read back for those
 * only. Each document is in one part, so parts write disjoint entries. */
typedef struct minlsh__dedup_exact_parts {
    minlsh_dedup *d;
    size_t parts;
    uint64_t span;
    uint64_t *groups; /* per part */
} minlsh__dedup_exact_parts;

/* Documents of one key: each joins the first before it with the same
 * fingerprint (a key shared by different fingerprints is rare, so this is
 * quadratic only in theory); a group of two or more counts once. */
static int minlsh__dedup_exact_key(minlsh_dedup *d, const uint32_t *same, size_t n_same,
                                   uint64_t *groups) {
    size_t i, x, y;
    int rc = 0;
    for (i = 1; i < n_same && rc == 0; i++) {
        minlsh__dedup_rec hi, hx;
        if ((rc = minlsh__dedup_rec_head(d, same[i], &hi)) != 0) break;
        for (x = 0; x < i; x++) {
            if (d->exact_of[same[x]] != same[x]) continue;
            if ((rc = minlsh__dedup_rec_head(d, same[x], &hx)) != 0) break;
            if (memcmp(hi.fp, hx.fp, sizeof hi.fp) == 0) {
                d->exact_of[same[i]] = same[x];
                break;
            }
        }
    }
    for (i = 0; i < n_same && n_same > 1 && rc == 0; i++) {
        if (d->exact_of[same[i]] != same[i]) continue;
        for (y = i + 1; y < n_same; y++)
            if (d->exact_of[same[y]] == same[i]) {
                (*groups)++;
                break;
            }
    }
    return rc;
}

static int minlsh__dedup_exact_part(minlsh__dedup_exact_parts *e, size_t part) {
    minlsh_dedup *d = e->d;
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_merge m;
    minlsh__kv rec = {0, 0};
    uint32_t *same = NULL;
    size_t n_same = 0, cap = 0;
    uint64_t key = 0;
    int rc, more;
    rc =
        minlsh__dedup_merge_part(&m, d, &d->runs_file, d->fp_runs.r, d->fp_runs.n, e->span, part,
                                 e->parts, MINLSH__DEDUP_MERGE_HASHED | MINLSH__DEDUP_MERGE_SHARED);
    if (rc != 0) return rc;
    do {
        more = minlsh__dedup_merge_next(&m, &rec);
        if (more < 0) rc = more;
        if (rc == 0 && n_same > 0 && (!more || rec.key != key)) {
            rc = minlsh__dedup_exact_key(d, same, n_same, &e->groups[part]);
            n_same = 0;
        }
        if (more > 0 && rc == 0) {
            if (n_same == cap) {
                void *p = same;
                rc = minlsh__reserve(a, &p, &cap, n_same, n_same + 1, sizeof *same);
                same = (uint32_t *)p;
                if (rc != 0) break;
            }
            key = rec.key;
            same[n_same++] = (uint32_t)rec.val;
        }
    } while (more > 0 && rc == 0);
    minlsh__dedup_merge_free(&m, d->fp_runs.n);
    minlsh__free(a, same);
    return rc;
}

static int minlsh__dedup_exact_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    size_t part;
    int rc = 0;
    (void)worker;
    for (part = begin; part < end && rc == 0; part++)
        rc = minlsh__dedup_exact_part((minlsh__dedup_exact_parts *)ctx, part);
    return rc;
}

int minlsh__dedup_exact(minlsh_dedup *d) {
    const minlsh_allocator *a = &d->alloc;
    minlsh__dedup_exact_parts e;
    size_t i;
    int rc = 0;
    d->exact_groups = 0;
    d->exact_of = (uint32_t *)minlsh__malloc(a, (d->n_docs + 1) * sizeof *d->exact_of);
    if (d->exact_of == NULL) return MINLSH_E_NOMEM;
    for (i = 0; i < d->n_docs; i++) d->exact_of[i] = (uint32_t)i;
    e.d = d;
    e.parts = minlsh__dedup_parts(d);
    e.span = UINT64_MAX / e.parts + 1; /* keys are hashes: evenly spread */
    e.groups = (uint64_t *)minlsh__calloc(a, e.parts, sizeof *e.groups);
    if (e.groups == NULL) return MINLSH_E_NOMEM;
    rc = minlsh__pool_run(minlsh__dedup_pool(d), e.parts, 1, minlsh__dedup_exact_range, &e);
    for (i = 0; i < e.parts; i++) d->exact_groups += e.groups[i];
    minlsh__free(a, e.groups);
    /* The band merges skip copies: a bit per document is cheaper to look
     * up at random than the group array. */
    if (rc == 0) {
        d->copies = (uint64_t *)minlsh__calloc(a, d->n_docs / 64 + 1, sizeof *d->copies);
        if (d->copies == NULL) return MINLSH_E_NOMEM;
        for (i = 0; i < d->n_docs; i++)
            if (d->exact_of[i] != i) d->copies[i / 64] |= UINT64_C(1) << (i % 64);
    }
    return rc;
}
