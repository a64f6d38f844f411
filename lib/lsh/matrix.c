/*
 * Batch deduplication over a signature matrix, by sorting instead of an
 * index: minlsh_pairs_from_matrix and minlsh_clusters_from_matrix (ids are
 * column positions). The same candidates as an index (two columns are
 * candidates iff they share (j, band key j) for some band j), found in
 * sequential passes:
 *
 *  1. Group identical signatures: (hash of the column, column) records are
 *     radix-sorted by the hash; columns of one run with equal values form a
 *     group, its smallest column its leader; groups are then numbered in
 *     the order of their leaders, so later passes read the matrix in order.
 *     Empty signatures are never candidates and join no group.
 *  2. The b band keys of each group's leader (eight at once with SIMD).
 *  3. Per band, (key, group) records are radix-sorted by the key's high 32
 *     bits (a run with equal high halves, rarely longer than one, is then
 *     sorted by the whole key), so each run of equal keys is one bucket.
 *
 * Pairs: inside a bucket, a pair of groups is taken only at the first band
 * whose keys the two share (comparing the earlier bands' keys), so every
 * pair of groups comes out exactly once; it stands for every pair of their
 * members, and each group for the pairs of its own members (estimate 1).
 * The output is radix-sorted by (a, b). Clusters: union-find over groups,
 * each weighing its member count, joined bucket by bucket without listing
 * pairs (lsh.h, minlsh__lsh_join_bucket).
 */
#include "lsh.h"

typedef struct minlsh__mx {
    const minlsh_allocator *a;
    const minlsh_sigmatrix *m;
    uint32_t k, bands, rows;
    size_t n;          /* columns */
    size_t ng;         /* groups */
    uint32_t *leader;  /* ng: first column of each group */
    uint32_t *moff;    /* ng + 1: offsets into members */
    uint32_t *members; /* columns of each group, ascending */
    uint32_t *group;   /* n: group of each column, NIL for empty signatures */
    uint64_t *keys;    /* ng * bands */
    minlsh__kv *kv, *tmp; /* scratch, max(n, 1) records each */
} minlsh__mx;

static void minlsh__mx_free(minlsh__mx *x) {
    minlsh__free(x->a, x->leader);
    minlsh__free(x->a, x->moff);
    minlsh__free(x->a, x->members);
    minlsh__free(x->a, x->group);
    minlsh__free(x->a, x->keys);
    minlsh__free(x->a, x->kv);
    minlsh__free(x->a, x->tmp);
}

static const uint32_t *minlsh__mx_sig_of(const void *ctx, uint32_t g) {
    const minlsh__mx *x = (const minlsh__mx *)ctx;
    return minlsh_sigmatrix_view_column(x->m, x->leader[g]);
}

/* Validate, then steps 1 and 2. */
static int minlsh__mx_prepare(minlsh__mx *x, const minlsh_sigmatrix *matrix, uint32_t bands,
                              uint32_t rows, double min_similarity,
                              const minlsh_allocator *a) {
    uint64_t n64;
    size_t i, m = 0, g, bytes, one;
    memset(x, 0, sizeof *x);
    x->a = a;
    if (matrix == NULL) return MINLSH_E_NULL;
    if (!(min_similarity >= 0.0 && min_similarity <= 1.0)) return MINLSH_E_PARAM;
    x->m = matrix;
    x->k = minlsh_sigmatrix_k(matrix);
    if (bands == 0 || rows == 0 || (uint64_t)bands * rows > x->k) return MINLSH_E_PARAM;
    x->bands = bands;
    x->rows = rows;
    n64 = minlsh_sigmatrix_count(matrix);
    if (n64 > MINLSH__LSH_MAX_DOCS || n64 > SIZE_MAX / sizeof(minlsh__kv))
        return MINLSH_E_TOOBIG;
    x->n = (size_t)n64;
    one = x->n > 0 ? x->n : 1;
    x->kv = (minlsh__kv *)minlsh__malloc(a, one * sizeof *x->kv);
    x->tmp = (minlsh__kv *)minlsh__malloc(a, one * sizeof *x->tmp);
    x->group = (uint32_t *)minlsh__malloc(a, one * sizeof *x->group);
    x->leader = (uint32_t *)minlsh__malloc(a, one * sizeof *x->leader);
    x->members = (uint32_t *)minlsh__malloc(a, one * sizeof *x->members);
    x->moff = (uint32_t *)minlsh__calloc(a, one + 1, sizeof *x->moff);
    if (x->kv == NULL || x->tmp == NULL || x->group == NULL || x->leader == NULL ||
        x->members == NULL || x->moff == NULL)
        return MINLSH_E_NOMEM;
    /* Step 1: sort (hash, column) by the hash; stable, so columns ascend
     * within a run. */
    for (i = 0; i < x->n; i++) {
        const uint32_t *sig = minlsh_sigmatrix_view_column(matrix, i);
        x->group[i] = MINLSH__LSH_NIL;
        if (minlsh_signature_is_empty(sig, x->k) == 1) continue;
        x->kv[m].key = minlsh__lsh_sig_hash(sig, x->k);
        x->kv[m].val = i;
        m++;
    }
    minlsh__radix_kv(x->kv, x->tmp, m, 32, 64);
    for (i = 0; i < m;) {
        size_t e = i + 1, t, first = x->ng;
        uint32_t hi = (uint32_t)(x->kv[i].key >> 32);
        while (e < m && (uint32_t)(x->kv[e].key >> 32) == hi) e++;
        /* A run: columns with equal values are one group. Usually one
         * signature (a run of copies, or a run of one); several only on a
         * 32-bit hash collision. */
        for (t = i; t < e; t++) {
            uint32_t col = (uint32_t)x->kv[t].val;
            const uint32_t *sig = minlsh_sigmatrix_view_column(matrix, col);
            size_t h;
            for (h = first; h < x->ng; h++)
                if (memcmp(minlsh_sigmatrix_view_column(matrix, x->leader[h]), sig,
                           (size_t)x->k * sizeof *sig) == 0)
                    break;
            if (h == x->ng) x->leader[x->ng++] = col;
            x->group[col] = (uint32_t)h;
        }
        i = e;
    }
    /* Renumber the groups in the order of their first column, so that the
     * passes below read the matrix sequentially instead of in hash order.
     * members[] and tmp are free scratch at this point. */
    {
        uint32_t *newid = x->members, *lead = (uint32_t *)x->tmp, next = 0;
        for (i = 0; i < x->n; i++) {
            uint32_t gi = x->group[i];
            if (gi != MINLSH__LSH_NIL && x->leader[gi] == i) {
                newid[gi] = next;
                lead[next++] = (uint32_t)i;
            }
        }
        for (i = 0; i < x->n; i++)
            if (x->group[i] != MINLSH__LSH_NIL) x->group[i] = newid[x->group[i]];
        memcpy(x->leader, lead, x->ng * sizeof *x->leader);
    }
    /* Members of each group, ascending (a counting pass over the columns). */
    for (i = 0; i < x->n; i++)
        if (x->group[i] != MINLSH__LSH_NIL) x->moff[x->group[i] + 1]++;
    for (g = 0; g < x->ng; g++) x->moff[g + 1] += x->moff[g];
    {
        uint32_t *fill = (uint32_t *)x->tmp; /* ng <= n counters fit */
        memset(fill, 0, (x->ng > 0 ? x->ng : 1) * sizeof *fill);
        for (i = 0; i < x->n; i++) {
            uint32_t gi = x->group[i];
            if (gi != MINLSH__LSH_NIL) x->members[x->moff[gi] + fill[gi]++] = (uint32_t)i;
        }
    }
    /* Step 2: the band keys of every group. */
    if (minlsh__mul_size(&bytes, x->ng > 0 ? x->ng : 1, (size_t)bands * sizeof *x->keys) != 0)
        return MINLSH_E_TOOBIG;
    x->keys = (uint64_t *)minlsh__malloc(a, bytes);
    if (x->keys == NULL) return MINLSH_E_NOMEM;
    for (g = 0; g < x->ng; g++)
        minlsh__lsh_band_keys(minlsh_sigmatrix_view_column(matrix, x->leader[g]), bands, rows,
                              x->keys + g * bands);
    return 0;
}

/* Step 3 for band j: x->kv[0..ng) sorted by key, so that each bucket is a
 * run of equal keys. */
static void minlsh__mx_band(minlsh__mx *x, uint32_t j) {
    size_t g, i;
    for (g = 0; g < x->ng; g++) {
        x->kv[g].key = x->keys[g * x->bands + j];
        x->kv[g].val = g;
    }
    minlsh__radix_kv(x->kv, x->tmp, x->ng, 32, 64);
    /* Equal high halves with different low halves: order the run by the
     * whole key (rare; runs are short). */
    for (i = 0; i < x->ng;) {
        size_t e = i + 1;
        while (e < x->ng && (x->kv[e].key >> 32) == (x->kv[i].key >> 32)) e++;
        if (e - i > 1) {
            size_t t;
            for (t = i + 1; t < e && x->kv[t].key == x->kv[i].key; t++) {
            }
            if (t < e) minlsh__sort_kv(x->kv + i, e - i);
        }
        i = e;
    }
}

/* 1 if groups p and q share a band key before band j. */
static int minlsh__mx_shared_before(const minlsh__mx *x, size_t p, size_t q, uint32_t j) {
    const uint64_t *kp = x->keys + p * x->bands, *kq = x->keys + q * x->bands;
    uint32_t i;
    for (i = 0; i < j; i++)
        if (kp[i] == kq[i]) return 1;
    return 0;
}

static uint64_t minlsh__mx_size(const minlsh__mx *x, size_t g) {
    return (uint64_t)(x->moff[g + 1] - x->moff[g]);
}

int minlsh_pairs_from_matrix(minlsh_pairs **out, const minlsh_sigmatrix *matrix,
                             uint32_t bands, uint32_t rows, double min_similarity,
                             uint64_t max_pairs, const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh__mx x;
    minlsh_pairs *pr = NULL;
    minlsh__kv *gp = NULL, *ov = NULL, *ot = NULL; /* group pairs; output */
    size_t n_gp = 0, gp_cap = 0, i, g, o;
    uint64_t total = 0;
    uint32_t j;
    int rc, width;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    rc = minlsh__mx_prepare(&x, matrix, bands, rows, min_similarity, &al);
    /* Pairs of groups, each once: at the first band whose keys they share. */
    for (j = 0; j < bands && rc == 0; j++) {
        minlsh__mx_band(&x, j);
        for (i = 0; i < x.ng && rc == 0;) {
            size_t e = i + 1, p, q;
            while (e < x.ng && x.kv[e].key == x.kv[i].key) e++;
            for (p = i; p < e && rc == 0; p++)
                for (q = p + 1; q < e && rc == 0; q++) {
                    size_t gp_ = (size_t)x.kv[p].val, gq = (size_t)x.kv[q].val;
                    double sim;
                    void *grown;
                    if (minlsh__mx_shared_before(&x, gp_, gq, j)) continue;
                    sim = minlsh__lsh_estimate(minlsh__mx_sig_of(&x, (uint32_t)gp_),
                                               minlsh__mx_sig_of(&x, (uint32_t)gq), x.k);
                    if (!(sim >= min_similarity)) continue;
                    total += minlsh__mx_size(&x, gp_) * minlsh__mx_size(&x, gq);
                    if (max_pairs != 0 && total > max_pairs) {
                        rc = MINLSH_E_TOOBIG;
                        break;
                    }
                    grown = gp;
                    rc = minlsh__reserve(&al, &grown, &gp_cap, n_gp, n_gp + 1, sizeof *gp);
                    gp = (minlsh__kv *)grown;
                    if (rc != 0) break;
                    gp[n_gp].key = ((uint64_t)gp_ << 32) | gq;
                    memcpy(&gp[n_gp].val, &sim, sizeof sim);
                    n_gp++;
                }
            i = e;
        }
    }
    /* Pairs inside groups (identical signatures, estimate 1). */
    for (g = 0; g < x.ng && rc == 0; g++) {
        uint64_t s = minlsh__mx_size(&x, g);
        total += s * (s - 1) / 2;
        if (max_pairs != 0 && total > max_pairs) rc = MINLSH_E_TOOBIG;
    }
    if (rc == 0 && total > SIZE_MAX / (2 * sizeof *ov + sizeof *pr->v)) rc = MINLSH_E_TOOBIG;
    if (rc == 0) {
        size_t nt = (size_t)(total > 0 ? total : 1);
        pr = (minlsh_pairs *)minlsh__calloc(&al, 1, sizeof *pr);
        ov = (minlsh__kv *)minlsh__malloc(&al, nt * sizeof *ov);
        ot = (minlsh__kv *)minlsh__malloc(&al, nt * sizeof *ot);
        if (pr != NULL) {
            pr->alloc = al;
            pr->v = (minlsh__lsh_pair *)minlsh__malloc(&al, nt * sizeof *pr->v);
        }
        if (pr == NULL || pr->v == NULL || ov == NULL || ot == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) {
        const double one = 1.0;
        uint64_t one_bits;
        memcpy(&one_bits, &one, sizeof one);
        /* Expand: (a << 32 | b, similarity) for every document pair. */
        o = 0;
        for (g = 0; g < x.ng; g++) {
            size_t s, t;
            for (s = x.moff[g]; s < x.moff[g + 1]; s++)
                for (t = s + 1; t < x.moff[g + 1]; t++) {
                    ov[o].key = ((uint64_t)x.members[s] << 32) | x.members[t];
                    ov[o++].val = one_bits;
                }
        }
        for (i = 0; i < n_gp; i++) {
            size_t p = (size_t)(gp[i].key >> 32), q = (size_t)(uint32_t)gp[i].key, s, t;
            for (s = x.moff[p]; s < x.moff[p + 1]; s++)
                for (t = x.moff[q]; t < x.moff[q + 1]; t++) {
                    uint64_t ca = x.members[s], cb = x.members[t];
                    ov[o].key = ca < cb ? (ca << 32) | cb : (cb << 32) | ca;
                    ov[o++].val = gp[i].val;
                }
        }
        /* Sort by (a, b): only the bits a column number can have. */
        for (width = 1; width < 32 && ((uint64_t)1 << width) < (uint64_t)x.n; width++) {
        }
        minlsh__radix_kv(ov, ot, o, 0, width);
        minlsh__radix_kv(ov, ot, o, 32, 32 + width);
        for (i = 0; i < o; i++) {
            pr->v[i].a = ov[i].key >> 32;
            pr->v[i].b = (uint32_t)ov[i].key;
            memcpy(&pr->v[i].sim, &ov[i].val, sizeof(double));
        }
        pr->n = o;
    }
    minlsh__free(&al, gp);
    minlsh__free(&al, ov);
    minlsh__free(&al, ot);
    minlsh__mx_free(&x);
    if (rc != 0) {
        minlsh_pairs_free(pr);
        return rc;
    }
    *out = pr;
    return 0;
}

int minlsh_clusters_from_matrix(minlsh_clusters **out, const minlsh_sigmatrix *matrix,
                                uint32_t bands, uint32_t rows, double min_similarity,
                                const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh__mx x;
    minlsh__lsh_uf uf = {NULL, NULL};
    uint32_t *bucket = NULL, *label = NULL, j;
    uint64_t *roots = NULL, *ids = NULL;
    size_t g, i, n = 0;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    rc = minlsh__mx_prepare(&x, matrix, bands, rows, min_similarity, &al);
    if (rc == 0) rc = minlsh__lsh_uf_init(&uf, &al, x.ng);
    if (rc == 0) {
        size_t one = x.ng > 0 ? x.ng : 1;
        bucket = (uint32_t *)minlsh__malloc(&al, one * sizeof *bucket);
        roots = (uint64_t *)minlsh__malloc(&al, one * sizeof *roots);
        if (bucket == NULL || roots == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) {
        for (g = 0; g < x.ng; g++) uf.size[g] = (uint32_t)minlsh__mx_size(&x, g);
        for (j = 0; j < bands; j++) {
            minlsh__mx_band(&x, j);
            for (i = 0; i < x.ng;) {
                size_t e = i + 1, t;
                while (e < x.ng && x.kv[e].key == x.kv[i].key) e++;
                if (e - i > 1) {
                    for (t = i; t < e; t++) bucket[t - i] = (uint32_t)x.kv[t].val;
                    minlsh__lsh_join_bucket(&uf, bucket, e - i, roots, min_similarity,
                                            minlsh__mx_sig_of, &x, x.k);
                }
                i = e;
            }
        }
        /* The columns in groups of two or more, ascending, labelled by root. */
        for (i = 0; i < x.n; i++)
            if (x.group[i] != MINLSH__LSH_NIL && uf.size[minlsh__lsh_uf_find(&uf, x.group[i])] >= 2)
                n++;
        ids = (uint64_t *)minlsh__malloc(&al, (n > 0 ? n : 1) * sizeof *ids);
        label = (uint32_t *)minlsh__malloc(&al, (n > 0 ? n : 1) * sizeof *label);
        if (ids == NULL || label == NULL) rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) {
        size_t kept = 0;
        for (i = 0; i < x.n; i++)
            if (x.group[i] != MINLSH__LSH_NIL) {
                uint32_t r = minlsh__lsh_uf_find(&uf, x.group[i]);
                if (uf.size[r] < 2) continue;
                ids[kept] = i;
                label[kept++] = r;
            }
        rc = minlsh__lsh_clusters_build(out, &al, ids, label, n, x.ng);
    }
    minlsh__free(&al, bucket);
    minlsh__free(&al, roots);
    minlsh__free(&al, ids);
    minlsh__free(&al, label);
    minlsh__lsh_uf_free(&uf, &al);
    minlsh__mx_free(&x);
    return rc;
}
