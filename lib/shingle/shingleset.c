/*
 * Shingle sets: sorted, distinct 64-bit hashes; sorting and exact Jaccard.
 */
#include "shingle.h"

int minlsh_shingleset_new(minlsh_shingleset **out, const minlsh_allocator *alloc) {
    minlsh_allocator a;
    minlsh_shingleset *set;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if ((rc = minlsh__alloc_setup(&a, alloc)) != 0) return rc;
    set = (minlsh_shingleset *)minlsh__calloc(&a, 1, sizeof *set);
    if (set == NULL) return MINLSH_E_NOMEM;
    set->alloc = a;
    *out = set;
    return 0;
}

void minlsh_shingleset_free(minlsh_shingleset *set) {
    minlsh_allocator a;
    if (set == NULL) return;
    a = set->alloc;
    minlsh__free(&a, set->v);
    minlsh__free(&a, set);
}

size_t minlsh_shingleset_count(const minlsh_shingleset *set) {
    return set != NULL ? set->n : 0;
}

const uint64_t *minlsh_shingleset_view_hashes(const minlsh_shingleset *set) {
    return set != NULL && set->n > 0 ? set->v : NULL;
}

int minlsh_shingleset_copy_hashes(const minlsh_shingleset *set, uint64_t *out,
                           size_t cap, size_t *n_out) {
    if (set == NULL || (out == NULL && cap > 0)) return MINLSH_E_NULL;
    if (n_out != NULL) *n_out = set->n;
    if (cap < set->n) return MINLSH_E_BUFSIZE;
    if (set->n > 0) memcpy(out, set->v, set->n * sizeof *out);
    return 0;
}

int minlsh_shingleset_assign(minlsh_shingleset *set, const uint64_t *hashes,
                             size_t n) {
    uint64_t *tmp;
    size_t bytes;
    int rc;
    if (set == NULL || (hashes == NULL && n > 0)) return MINLSH_E_NULL;
    if (n == 0) {
        set->n = 0;
        return 0;
    }
    if ((rc = minlsh__mul_size(&bytes, n, sizeof *tmp)) != 0) return MINLSH_E_NOMEM;
    /* Copy first: hashes may be this set's own data. */
    tmp = (uint64_t *)minlsh__malloc(&set->alloc, bytes);
    if (tmp == NULL) return MINLSH_E_NOMEM;
    memcpy(tmp, hashes, bytes);
    rc = minlsh__reserve(&set->alloc, (void **)&set->v, &set->cap, set->n, n,
                         sizeof *set->v);
    if (rc != 0) {
        minlsh__free(&set->alloc, tmp);
        return MINLSH_E_NOMEM;
    }
    set->n = minlsh__sort_unique_u64(set->v, tmp, set->v, n);
    minlsh__free(&set->alloc, tmp);
    return 0;
}

/* |A & B| by a merge of two ascending arrays. */
static size_t intersect_count(const uint64_t *a, size_t na, const uint64_t *b,
                              size_t nb) {
    size_t i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j]) {
            i++;
        } else if (a[i] > b[j]) {
            j++;
        } else {
            c++;
            i++;
            j++;
        }
    }
    return c;
}

static double jaccard_of(const uint64_t *a, size_t na, const uint64_t *b,
                         size_t nb) {
    size_t inter, uni;
    if (na == 0 && nb == 0) return 0.0;
    inter = intersect_count(a, na, b, nb);
    uni = na - inter + nb; /* no overflow: na - inter + nb <= na + nb - inter */
    return (double)inter / (double)uni;
}

int minlsh_shingleset_jaccard(double *out, const minlsh_shingleset *a,
                              const minlsh_shingleset *b) {
    if (out == NULL || a == NULL || b == NULL) return MINLSH_E_NULL;
    *out = jaccard_of(a->v, a->n, b->v, b->n);
    return 0;
}

static int strictly_increasing(const uint64_t *a, size_t n) {
    size_t i;
    for (i = 1; i < n; i++)
        if (a[i - 1] >= a[i]) return 0;
    return 1;
}

int minlsh_jaccard_sorted(double *out, const uint64_t *a, size_t na,
                          const uint64_t *b, size_t nb) {
    if (out == NULL || (a == NULL && na > 0) || (b == NULL && nb > 0))
        return MINLSH_E_NULL;
    if (!strictly_increasing(a, na) || !strictly_increasing(b, nb))
        return MINLSH_E_PARAM;
    *out = jaccard_of(a, na, b, nb);
    return 0;
}
