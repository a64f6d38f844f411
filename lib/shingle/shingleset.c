/*
 * Shingle sets: sorted, distinct 64-bit hashes; sorting and exact Jaccard.
 */
#include "shingle.h"

/* Buckets this small are finished by insertion sort. */
#define SMALL_SORT 32

static void insertion_sort(uint64_t *a, size_t n) {
    size_t i, j;
    for (i = 1; i < n; i++) {
        uint64_t x = a[i];
        for (j = i; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Largest first-level digit, and the scratch histogram it needs (on the
 * stack: 8 KiB, shared by every level). */
#define TOP_BITS_MAX 10

/* MSD radix sort of a[0..n) (tmp: scratch for n values) on the digit of
 * `bits` bits at `shift` and everything below it, the bits above being
 * equal. Shingle hashes are uniformly distributed, so one level with a
 * digit sized to n leaves buckets of a few keys, finished by insertion sort,
 * so most keys are moved once instead of eight times as in an 8-pass LSD
 * sort (docs/shingling.md has the measurement). Worst case linear: at
 * most 8 levels of O(n + 2^bits) each (a level where every key has the same
 * digit is only counted), and insertion sort of at most SMALL_SORT keys per
 * bucket. Recursion depth <= 8; bucket bounds are found again by scanning,
 * so the histogram is free for the next level. */
static void msd_sort(uint64_t *a, uint64_t *tmp, size_t n, unsigned shift,
                     unsigned bits, size_t *hist) {
    size_t nb, i, start, end, c;
    uint64_t mask, d;
    for (;;) {
        if (n <= SMALL_SORT) {
            insertion_sort(a, n);
            return;
        }
        nb = (size_t)1 << bits;
        mask = nb - 1;
        memset(hist, 0, nb * sizeof *hist);
        for (i = 0; i < n; i++) hist[(a[i] >> shift) & mask]++;
        if (hist[(a[0] >> shift) & mask] != n) break;
        if (shift == 0) return; /* all keys equal */
        bits = shift < 8 ? shift : 8;
        shift -= bits;
    }
    for (i = 0, start = 0; i < nb; i++) { /* counts to start offsets */
        c = hist[i];
        hist[i] = start;
        start += c;
    }
    for (i = 0; i < n; i++) {
        uint64_t x = a[i];
        tmp[hist[(x >> shift) & mask]++] = x;
    }
    memcpy(a, tmp, n * sizeof *a);
    if (shift == 0) return;
    bits = shift < 8 ? shift : 8;
    for (start = 0; start < n; start = end) {
        d = (a[start] >> shift) & mask;
        for (end = start + 1; end < n && ((a[end] >> shift) & mask) == d; end++) {
        }
        if (end - start > 1)
            msd_sort(a + start, tmp + start, end - start, shift - bits, bits, hist);
    }
}

size_t minlsh__shingle_sort_unique(uint64_t *dst, uint64_t *a, uint64_t *tmp,
                                   size_t n) {
    size_t hist[(size_t)1 << TOP_BITS_MAX], i, m;
    unsigned bits = 8;
    if (n == 0) return 0;
    /* About 2 to 4 keys per first-level bucket. */
    while (bits < TOP_BITS_MAX && ((size_t)2 << bits) < n) bits++;
    msd_sort(a, tmp, n, 64 - bits, bits, hist);
    /* Forward compaction, safe when dst == a. */
    dst[0] = a[0];
    for (i = 1, m = 1; i < n; i++)
        if (a[i] != dst[m - 1]) dst[m++] = a[i];
    return m;
}

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

const uint64_t *minlsh_shingleset_data(const minlsh_shingleset *set) {
    return set != NULL && set->n > 0 ? set->v : NULL;
}

int minlsh_shingleset_copy(const minlsh_shingleset *set, uint64_t *out,
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
    set->n = minlsh__shingle_sort_unique(set->v, tmp, set->v, n);
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
