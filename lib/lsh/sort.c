/*
 * Sorting 64-bit integers in place for queries, pairs and clusters:
 * introsort (quicksort with a median of three, heapsort when the recursion
 * gets too deep, insertion sort for short ranges). In place because query
 * sorts inside the caller's output buffer; O(n log n) in the worst case
 * because inputs (a hot bucket: 100,000 copies of the same slots) can be
 * very repetitive.
 */
#include "lsh.h"

/* One introsort, instantiated below for plain 64-bit keys and for two-word
 * records; only the element type and the strict order differ. */
#define MINLSH__INTROSORT(NAME, T, LESS)                                       \
    static void NAME##_insertion(T *v, size_t n) {                             \
        size_t i, j;                                                           \
        for (i = 1; i < n; i++) {                                              \
            T x = v[i];                                                        \
            for (j = i; j > 0 && LESS(&x, &v[j - 1]); j--) v[j] = v[j - 1];     \
            v[j] = x;                                                          \
        }                                                                      \
    }                                                                          \
    static void NAME##_sift(T *v, size_t root, size_t n) {                     \
        T x = v[root];                                                         \
        for (;;) {                                                             \
            size_t c = 2 * root + 1;                                           \
            if (c >= n) break;                                                 \
            if (c + 1 < n && LESS(&v[c], &v[c + 1])) c++;                      \
            if (!LESS(&x, &v[c])) break;                                       \
            v[root] = v[c];                                                    \
            root = c;                                                          \
        }                                                                      \
        v[root] = x;                                                           \
    }                                                                          \
    static void NAME##_heap(T *v, size_t n) {                                  \
        size_t i;                                                              \
        for (i = n / 2; i > 0; i--) NAME##_sift(v, i - 1, n);                  \
        for (i = n; i > 1; i--) {                                              \
            T t = v[0];                                                        \
            v[0] = v[i - 1];                                                   \
            v[i - 1] = t;                                                      \
            NAME##_sift(v, 0, i - 1);                                          \
        }                                                                      \
    }                                                                          \
    static void NAME##_range(T *v, size_t n, unsigned depth) {                 \
        while (n > 16) {                                                       \
            T pivot, a, b, c;                                                  \
            size_t i, j;                                                       \
            if (depth == 0) {                                                  \
                NAME##_heap(v, n);                                             \
                return;                                                        \
            }                                                                  \
            depth--;                                                           \
            /* median of three */                                              \
            a = v[0];                                                          \
            b = v[n / 2];                                                      \
            c = v[n - 1];                                                      \
            if (LESS(&b, &a)) {                                                \
                T t = a;                                                       \
                a = b;                                                         \
                b = t;                                                         \
            }                                                                  \
            if (LESS(&c, &b)) b = LESS(&c, &a) ? a : c;                        \
            pivot = b;                                                         \
            /* Hoare partition: runs of equal keys split evenly instead of     \
             * degrading to quadratic time. */                                 \
            i = 0;                                                             \
            j = n - 1;                                                         \
            for (;;) {                                                         \
                T t;                                                           \
                while (LESS(&v[i], &pivot)) i++;                               \
                while (LESS(&pivot, &v[j])) j--;                               \
                if (i >= j) break;                                             \
                t = v[i];                                                      \
                v[i] = v[j];                                                   \
                v[j] = t;                                                      \
                i++;                                                           \
                j--;                                                           \
            }                                                                  \
            /* [0, j] <= pivot <= [j+1, n): recurse on the smaller side. */    \
            if (j + 1 < n - (j + 1)) {                                         \
                NAME##_range(v, j + 1, depth);                                 \
                v += j + 1;                                                    \
                n -= j + 1;                                                    \
            } else {                                                           \
                NAME##_range(v + j + 1, n - (j + 1), depth);                   \
                n = j + 1;                                                     \
            }                                                                  \
        }                                                                      \
        NAME##_insertion(v, n);                                                \
    }                                                                          \
    static void NAME(T *v, size_t n) {                                         \
        unsigned depth = 0;                                                    \
        size_t m;                                                              \
        for (m = n; m > 1; m >>= 1) depth += 2;                                \
        NAME##_range(v, n, depth);                                             \
    }

#define MINLSH__U64_LESS(x, y) (*(x) < *(y))
#define MINLSH__KV_LESS(x, y)                                                  \
    ((x)->key < (y)->key || ((x)->key == (y)->key && (x)->val < (y)->val))

MINLSH__INTROSORT(minlsh__introsort_u64, uint64_t, MINLSH__U64_LESS)
MINLSH__INTROSORT(minlsh__introsort_kv, minlsh__lsh_kv, MINLSH__KV_LESS)

void minlsh__lsh_sort_u64(uint64_t *v, size_t n) { minlsh__introsort_u64(v, n); }

size_t minlsh__lsh_unique_u64(uint64_t *v, size_t n) {
    size_t i, o;
    if (n == 0) return 0;
    for (i = 1, o = 1; i < n; i++)
        if (v[i] != v[o - 1]) v[o++] = v[i];
    return o;
}

void minlsh__lsh_sort_kv(minlsh__lsh_kv *v, size_t n) { minlsh__introsort_kv(v, n); }

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
