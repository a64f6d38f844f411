/*
 * Sorting 64-bit integers in place for queries, pairs and clusters:
 * introsort (quicksort with a median of three, heapsort when the recursion
 * gets too deep, insertion sort for short ranges). In place because query
 * sorts inside the caller's output buffer; O(n log n) in the worst case
 * because inputs (a hot bucket: 100,000 copies of the same slots) can be
 * very repetitive.
 */
#include "lsh.h"

static void minlsh__sort_insertion(uint64_t *v, size_t n) {
    size_t i, j;
    for (i = 1; i < n; i++) {
        uint64_t x = v[i];
        for (j = i; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

static void minlsh__sort_sift(uint64_t *v, size_t root, size_t n) {
    uint64_t x = v[root];
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n) break;
        if (c + 1 < n && v[c + 1] > v[c]) c++;
        if (v[c] <= x) break;
        v[root] = v[c];
        root = c;
    }
    v[root] = x;
}

static void minlsh__sort_heap(uint64_t *v, size_t n) {
    size_t i;
    for (i = n / 2; i > 0; i--) minlsh__sort_sift(v, i - 1, n);
    for (i = n; i > 1; i--) {
        uint64_t t = v[0];
        v[0] = v[i - 1];
        v[i - 1] = t;
        minlsh__sort_sift(v, 0, i - 1);
    }
}

static void minlsh__sort_range(uint64_t *v, size_t n, unsigned depth) {
    while (n > 16) {
        uint64_t a, b, c, pivot;
        size_t i, j;
        if (depth == 0) {
            minlsh__sort_heap(v, n);
            return;
        }
        depth--;
        a = v[0];
        b = v[n / 2];
        c = v[n - 1];
        pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        /* Hoare partition: runs of equal keys split evenly instead of
         * degrading to quadratic time. */
        i = 0;
        j = n - 1;
        for (;;) {
            uint64_t t;
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i >= j) break;
            t = v[i];
            v[i] = v[j];
            v[j] = t;
            i++;
            j--;
        }
        /* [0, j] <= pivot <= [j+1, n): recurse on the smaller side. */
        if (j + 1 < n - (j + 1)) {
            minlsh__sort_range(v, j + 1, depth);
            v += j + 1;
            n -= j + 1;
        } else {
            minlsh__sort_range(v + j + 1, n - (j + 1), depth);
            n = j + 1;
        }
    }
    minlsh__sort_insertion(v, n);
}

void minlsh__lsh_sort_u64(uint64_t *v, size_t n) {
    unsigned depth = 0;
    size_t m;
    for (m = n; m > 1; m >>= 1) depth += 2;
    minlsh__sort_range(v, n, depth);
}

size_t minlsh__lsh_unique_u64(uint64_t *v, size_t n) {
    size_t i, o;
    if (n == 0) return 0;
    for (i = 1, o = 1; i < n; i++)
        if (v[i] != v[o - 1]) v[o++] = v[i];
    return o;
}

/* ---- records of two words ------------------------------------------------- */

MINLSH__INLINE int minlsh__kv_less(const minlsh__lsh_kv *x, const minlsh__lsh_kv *y) {
    return x->key < y->key || (x->key == y->key && x->val < y->val);
}

static void minlsh__kv_insertion(minlsh__lsh_kv *v, size_t n) {
    size_t i, j;
    for (i = 1; i < n; i++) {
        minlsh__lsh_kv x = v[i];
        for (j = i; j > 0 && minlsh__kv_less(&x, &v[j - 1]); j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

static void minlsh__kv_sift(minlsh__lsh_kv *v, size_t root, size_t n) {
    minlsh__lsh_kv x = v[root];
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n) break;
        if (c + 1 < n && minlsh__kv_less(&v[c], &v[c + 1])) c++;
        if (!minlsh__kv_less(&x, &v[c])) break;
        v[root] = v[c];
        root = c;
    }
    v[root] = x;
}

static void minlsh__kv_heap(minlsh__lsh_kv *v, size_t n) {
    size_t i;
    for (i = n / 2; i > 0; i--) minlsh__kv_sift(v, i - 1, n);
    for (i = n; i > 1; i--) {
        minlsh__lsh_kv t = v[0];
        v[0] = v[i - 1];
        v[i - 1] = t;
        minlsh__kv_sift(v, 0, i - 1);
    }
}

static void minlsh__kv_range(minlsh__lsh_kv *v, size_t n, unsigned depth) {
    while (n > 16) {
        minlsh__lsh_kv pivot, a, b, c;
        size_t i, j;
        if (depth == 0) {
            minlsh__kv_heap(v, n);
            return;
        }
        depth--;
        a = v[0];
        b = v[n / 2];
        c = v[n - 1];
        if (minlsh__kv_less(&b, &a)) {
            minlsh__lsh_kv t = a;
            a = b;
            b = t;
        }
        if (minlsh__kv_less(&c, &b)) b = minlsh__kv_less(&c, &a) ? a : c;
        pivot = b;
        i = 0;
        j = n - 1;
        for (;;) {
            minlsh__lsh_kv t;
            while (minlsh__kv_less(&v[i], &pivot)) i++;
            while (minlsh__kv_less(&pivot, &v[j])) j--;
            if (i >= j) break;
            t = v[i];
            v[i] = v[j];
            v[j] = t;
            i++;
            j--;
        }
        if (j + 1 < n - (j + 1)) {
            minlsh__kv_range(v, j + 1, depth);
            v += j + 1;
            n -= j + 1;
        } else {
            minlsh__kv_range(v + j + 1, n - (j + 1), depth);
            n = j + 1;
        }
    }
    minlsh__kv_insertion(v, n);
}

void minlsh__lsh_sort_kv(minlsh__lsh_kv *v, size_t n) {
    unsigned depth = 0;
    size_t m;
    for (m = n; m > 1; m >>= 1) depth += 2;
    minlsh__kv_range(v, n, depth);
}

/* LSD radix sort, 11 bits per pass (a 2048-entry histogram stays in L1);
 * stable, so records equal in the bits looked at keep their order. Passes
 * whose digit is the same for every record are skipped. */
#define MINLSH__RADIX_BITS 11
#define MINLSH__RADIX_SIZE (1u << MINLSH__RADIX_BITS)

void minlsh__lsh_radix_kv(minlsh__lsh_kv *v, minlsh__lsh_kv *tmp, size_t n, int lo_bit,
                          int hi_bit) {
    size_t count[MINLSH__RADIX_SIZE];
    minlsh__lsh_kv *src = v, *dst = tmp;
    int shift;
    if (n < 2) return;
    for (shift = lo_bit; shift < hi_bit; shift += MINLSH__RADIX_BITS) {
        int width = hi_bit - shift < MINLSH__RADIX_BITS ? hi_bit - shift : MINLSH__RADIX_BITS;
        uint64_t mask = ((uint64_t)1 << width) - 1;
        size_t i, sum = 0;
        unsigned d;
        memset(count, 0, sizeof count);
        for (i = 0; i < n; i++) count[(src[i].key >> shift) & mask]++;
        if (count[(src[0].key >> shift) & mask] == n) continue; /* nothing moves */
        for (d = 0; d <= mask; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (i = 0; i < n; i++) dst[count[(src[i].key >> shift) & mask]++] = src[i];
        {
            minlsh__lsh_kv *t = src;
            src = dst;
            dst = t;
        }
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
}
