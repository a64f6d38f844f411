/*
 * stages.c: the dedup engine's stages as calls over whole partitions, for
 * pipelines that spread the stages over machines (minlsh.dask): sign a
 * partition of texts with their fingerprints, band a matrix of signatures,
 * list the candidate pairs of a partition of band records with the
 * hot-bucket cap, shingle texts into one CSR buffer, and compute the exact
 * Jaccard of many pairs of those sets.
 *
 * Why calls per partition: a foreign-function caller pays a fixed cost per
 * call, as much as signing a short document's band keys (docs/dedup.md,
 * "Cost"). One call per partition and numpy-shaped arrays in and out keep
 * that cost out of the per-document path. Each call runs on the calling
 * thread: a distributed worker already has one task per core.
 *
 * The policy they implement is the engine's (docs/dedup.md): a bucket is a
 * run of equal (band, key); its members are distinct texts (the caller
 * gives one record per exact group); a bucket of more than max_bucket of
 * them is left out whole and reported; every other pair in a bucket is a
 * candidate, counted once however many bands it shares.
 */
#include "common/common.h"
#include "common/sort.h"
#include "shingle/shingle.h"

#include <string.h>

/* ---- signing ------------------------------------------------------------- */

int minlsh_family_sign_texts(const minlsh_family *family, const minlsh_shingler *shingler,
                             const void *const *texts, const size_t *lens, size_t n,
                             uint32_t *sigs, size_t cap, size_t *n_out, uint8_t *fps,
                             uint64_t *counts, int32_t *status,
                             const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_shingleset *set = NULL;
    size_t k, need, i;
    int rc, first = 0;
    if (family == NULL || shingler == NULL || ((texts == NULL || lens == NULL) && n > 0))
        return MINLSH_E_NULL;
    /* NULL: the shingler's, as minlsh_family_sign_batch uses */
    if (alloc == NULL) alloc = minlsh__shingler_allocator(shingler);
    if ((rc = minlsh__alloc_setup(&al, alloc)) != 0) return rc;
    k = minlsh_family_k(family);
    if (minlsh__mul_size(&need, n, k) != 0) return MINLSH_E_TOOBIG;
    if (n_out != NULL) *n_out = need;
    if (cap < need) return MINLSH_E_BUFSIZE;
    if (sigs == NULL && need > 0) return MINLSH_E_NULL;
    if (n == 0) return 0;
    if ((rc = minlsh_shingleset_new(&set, &al)) != 0) return rc;
    for (i = 0; i < n; i++) {
        uint32_t *sig = sigs + i * k;
        uint8_t fp[MINLSH_FINGERPRINT_BYTES];
        size_t j;
        rc = texts[i] == NULL && lens[i] > 0
                 ? MINLSH_E_NULL
                 : minlsh_shingler_hash(shingler, texts[i], lens[i], set, fp);
        if (rc == 0)
            rc = minlsh_family_sign(family, minlsh_shingleset_view_hashes(set),
                                    minlsh_shingleset_count(set), sig, k, NULL);
        if (rc == MINLSH_E_NOMEM) {
            /* Nothing after a failed allocation is trustworthy: stop here. */
            for (; i < n && status != NULL; i++) status[i] = rc;
            minlsh_shingleset_free(set);
            return rc;
        }
        if (rc != 0) {
            /* The document alone fails (too big): the empty signature, as
             * minlsh_family_sign_batch gives it. */
            for (j = 0; j < k; j++) sig[j] = MINLSH_EMPTY_VALUE;
            memset(fp, 0, sizeof fp);
            if (first == 0) first = rc;
        }
        if (fps != NULL) memcpy(fps + i * MINLSH_FINGERPRINT_BYTES, fp, sizeof fp);
        if (counts != NULL) counts[i] = rc == 0 ? (uint64_t)minlsh_shingleset_count(set) : 0;
        if (status != NULL) status[i] = rc;
    }
    minlsh_shingleset_free(set);
    return first;
}

int minlsh_signatures_band_keys(const uint32_t *sigs, size_t n, size_t k, uint32_t bands,
                                uint32_t rows, uint64_t *keys, size_t cap, size_t *n_out) {
    size_t need, i;
    if (sigs == NULL && n > 0) return MINLSH_E_NULL;
    if (bands == 0 || rows == 0 || (uint64_t)bands * rows > (uint64_t)k)
        return MINLSH_E_PARAM;
    if (minlsh__mul_size(&need, n, bands) != 0) return MINLSH_E_TOOBIG;
    if (n_out != NULL) *n_out = need;
    if (cap < need) return MINLSH_E_BUFSIZE;
    if (keys == NULL && need > 0) return MINLSH_E_NULL;
    for (i = 0; i < n; i++) {
        /* Cannot fail: the arguments were checked above. */
        (void)minlsh_band_keys(sigs + i * k, k, bands, rows, keys + i * (size_t)bands, bands,
                               NULL);
    }
    return 0;
}

/* ---- shingle sets as one CSR buffer, and their Jaccard ------------------- */

int minlsh_shingler_hash_texts(const minlsh_shingler *shingler, const void *const *texts,
                               const size_t *lens, size_t n, uint64_t *offsets,
                               uint64_t *hashes, size_t cap, size_t *n_out, int32_t *status,
                               const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_shingleset *set = NULL;
    size_t total = 0, i;
    int rc, first = 0;
    if (shingler == NULL || offsets == NULL || ((texts == NULL || lens == NULL) && n > 0))
        return MINLSH_E_NULL;
    /* NULL: the shingler's, as minlsh_family_sign_batch uses */
    if (alloc == NULL) alloc = minlsh__shingler_allocator(shingler);
    if ((rc = minlsh__alloc_setup(&al, alloc)) != 0) return rc;
    if ((rc = minlsh_shingleset_new(&set, &al)) != 0) return rc;
    offsets[0] = 0;
    for (i = 0; i < n; i++) {
        size_t c = 0;
        rc = texts[i] == NULL && lens[i] > 0
                 ? MINLSH_E_NULL
                 : minlsh_shingler_hash(shingler, texts[i], lens[i], set, NULL);
        if (rc == MINLSH_E_NOMEM) {
            for (; i < n && status != NULL; i++) status[i] = rc;
            minlsh_shingleset_free(set);
            return rc;
        }
        if (rc == 0) c = minlsh_shingleset_count(set);
        else if (first == 0) first = rc; /* the document gets the empty set */
        if (status != NULL) status[i] = rc;
        /* Keep counting past a short buffer so the caller learns the size
         * it needs from one call. */
        if (c > 0 && total + c <= cap) {
            if (hashes == NULL) {
                minlsh_shingleset_free(set);
                return MINLSH_E_NULL;
            }
            memcpy(hashes + total, minlsh_shingleset_view_hashes(set), c * sizeof *hashes);
        }
        if (minlsh__add_size(&total, total, c) != 0) {
            minlsh_shingleset_free(set);
            return MINLSH_E_TOOBIG;
        }
        offsets[i + 1] = total;
    }
    minlsh_shingleset_free(set);
    if (n_out != NULL) *n_out = total;
    if (total > cap) return MINLSH_E_BUFSIZE;
    return first;
}

int minlsh_sets_jaccard(const uint64_t *offsets, const uint64_t *hashes, size_t n_sets,
                        const uint64_t *a, const uint64_t *b, size_t n_pairs,
                        double *similarity) {
    size_t i;
    if (offsets == NULL || ((a == NULL || b == NULL || similarity == NULL) && n_pairs > 0))
        return MINLSH_E_NULL;
    if (hashes == NULL && offsets[n_sets] > 0) return MINLSH_E_NULL;
    for (i = 0; i < n_sets; i++)
        if (offsets[i] > offsets[i + 1]) return MINLSH_E_PARAM;
    for (i = 0; i < n_pairs; i++) {
        const uint64_t *x, *y;
        size_t nx, ny;
        int rc;
        if (a[i] >= n_sets || b[i] >= n_sets) return MINLSH_E_NOTFOUND;
        nx = (size_t)(offsets[a[i] + 1] - offsets[a[i]]);
        ny = (size_t)(offsets[b[i] + 1] - offsets[b[i]]);
        x = nx > 0 ? hashes + offsets[a[i]] : NULL;
        y = ny > 0 ? hashes + offsets[b[i]] : NULL;
        if ((rc = minlsh_jaccard_sorted(&similarity[i], x, nx, y, ny)) != 0) return rc;
    }
    return 0;
}

/* ---- candidate pairs of a partition of band records ---------------------- */

/* The records of one run of equal keys, as (band, document), and the pairs
 * and capped buckets found so far. */
typedef struct bucket_state {
    const minlsh_allocator *al;
    minlsh__kv *run;
    size_t run_cap;
    minlsh__pair *pairs;
    size_t n_pairs, pairs_cap;
    uint64_t *capped; /* (band, key, size) triples */
    size_t n_capped, capped_cap;
} bucket_state;

/* One bucket: m distinct documents, ascending. */
static int bucket_emit(bucket_state *s, uint64_t band, uint64_t key, const minlsh__kv *docs,
                       size_t m, uint64_t max_bucket) {
    size_t i, j, more;
    int rc;
    if (m < 2) return 0;
    if (max_bucket != 0 && (uint64_t)m > max_bucket) {
        void *v = s->capped;
        if ((rc = minlsh__reserve(s->al, &v, &s->capped_cap, s->n_capped * 3,
                                  s->n_capped * 3 + 3, sizeof *s->capped)) != 0)
            return rc;
        s->capped = (uint64_t *)v;
        s->capped[s->n_capped * 3] = band;
        s->capped[s->n_capped * 3 + 1] = key;
        s->capped[s->n_capped * 3 + 2] = (uint64_t)m;
        s->n_capped++;
        return 0;
    }
    if (minlsh__mul_size(&more, m, m - 1) != 0) return MINLSH_E_TOOBIG;
    more /= 2;
    if (minlsh__add_size(&more, more, s->n_pairs) != 0) return MINLSH_E_TOOBIG;
    {
        void *v = s->pairs;
        if ((rc = minlsh__reserve(s->al, &v, &s->pairs_cap, s->n_pairs, more,
                                  sizeof *s->pairs)) != 0)
            return rc;
        s->pairs = (minlsh__pair *)v;
    }
    for (i = 0; i < m; i++)
        for (j = i + 1; j < m; j++) {
            minlsh__pair *p = &s->pairs[s->n_pairs++];
            p->a = docs[i].val;
            p->b = docs[j].val;
            p->sim = 0.0;
        }
    return 0;
}

int minlsh_buckets_pair(const uint32_t *bands, const uint64_t *keys, const uint64_t *docs,
                        size_t n, uint64_t max_bucket, uint64_t *a, uint64_t *b, size_t cap,
                        size_t *n_out, uint64_t *capped, size_t capped_cap, size_t *n_capped,
                        const minlsh_allocator *alloc) {
    minlsh_allocator al;
    bucket_state s;
    minlsh__kv *rec = NULL, *tmp = NULL;
    size_t i, start, n_unique = 0;
    int rc;
    if ((bands == NULL || keys == NULL || docs == NULL) && n > 0) return MINLSH_E_NULL;
    if ((rc = minlsh__alloc_setup(&al, alloc)) != 0) return rc;
    memset(&s, 0, sizeof s);
    s.al = &al;
    if (n > 0) {
        rec = (minlsh__kv *)minlsh__calloc(&al, n, sizeof *rec);
        tmp = (minlsh__kv *)minlsh__calloc(&al, n, sizeof *tmp);
        if (rec == NULL || tmp == NULL) {
            rc = MINLSH_E_NOMEM;
            goto done;
        }
    }
    /* By the high half of the key first (a linear radix sort of four
     * passes: band keys are uniform, so runs of an equal high half are
     * almost always single records), then each longer run by the whole key,
     * and each run of equal keys by (band, document). */
    for (i = 0; i < n; i++) {
        rec[i].key = keys[i];
        rec[i].val = i;
    }
    minlsh__radix_kv(rec, tmp, n, 32, 64);
    for (start = 0; start < n;) {
        size_t end = start + 1, sub;
        while (end < n && rec[end].key >> 32 == rec[start].key >> 32) end++;
        if (end - start >= 2) minlsh__sort_kv(rec + start, end - start);
        for (sub = start; sub < end;) {
            size_t sub_end = sub + 1, m, r, bs;
            while (sub_end < end && rec[sub_end].key == rec[sub].key) sub_end++;
            m = sub_end - sub;
            if (m >= 2) {
                if (m > s.run_cap) {
                    void *v = s.run;
                    if ((rc = minlsh__reserve(&al, &v, &s.run_cap, 0, m, sizeof *s.run)) != 0)
                        goto done;
                    s.run = (minlsh__kv *)v;
                }
                for (r = 0; r < m; r++) {
                    s.run[r].key = bands[rec[sub + r].val];
                    s.run[r].val = docs[rec[sub + r].val];
                }
                minlsh__sort_kv(s.run, m);
                /* Drop repeated (band, document) records in place. */
                m = 0;
                for (r = 0; r < sub_end - sub; r++)
                    if (m == 0 || s.run[r].key != s.run[m - 1].key ||
                        s.run[r].val != s.run[m - 1].val)
                        s.run[m++] = s.run[r];
                for (bs = 0; bs < m;) {
                    size_t be = bs + 1;
                    while (be < m && s.run[be].key == s.run[bs].key) be++;
                    if ((rc = bucket_emit(&s, s.run[bs].key, rec[sub].key, s.run + bs, be - bs,
                                          max_bucket)) != 0)
                        goto done;
                    bs = be;
                }
            }
            sub = sub_end;
        }
        start = end;
    }
    minlsh__sort_pairs(s.pairs, s.n_pairs);
    for (i = 0; i < s.n_pairs; i++)
        if (n_unique == 0 || s.pairs[i].a != s.pairs[n_unique - 1].a ||
            s.pairs[i].b != s.pairs[n_unique - 1].b)
            s.pairs[n_unique++] = s.pairs[i];
    if (n_out != NULL) *n_out = n_unique;
    if (n_capped != NULL) *n_capped = s.n_capped;
    if (n_unique > cap || s.n_capped * 3 > capped_cap) {
        rc = MINLSH_E_BUFSIZE;
        goto done;
    }
    if ((n_unique > 0 && (a == NULL || b == NULL)) || (s.n_capped > 0 && capped == NULL)) {
        rc = MINLSH_E_NULL;
        goto done;
    }
    for (i = 0; i < n_unique; i++) {
        a[i] = s.pairs[i].a;
        b[i] = s.pairs[i].b;
    }
    if (s.n_capped > 0) memcpy(capped, s.capped, s.n_capped * 3 * sizeof *capped);
    rc = 0;
done:
    minlsh__free(&al, rec);
    minlsh__free(&al, tmp);
    minlsh__free(&al, s.run);
    minlsh__free(&al, s.pairs);
    minlsh__free(&al, s.capped);
    return rc;
}
