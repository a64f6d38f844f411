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
