/*
 * The sorts of the library (sort.h has the contracts), one home for all.
 *
 * Introsort (quicksort with a median of three, heapsort when the recursion
 * gets too deep, insertion sort for short ranges) for queries, pair lists
 * and clusters: in place because a query sorts inside the caller's output
 * buffer; O(n log n) in the worst case because inputs (a hot bucket:
 * 100,000 copies of the same slots) can be very repetitive.
 *
 * An LSD radix sort of (key, val) records for the sort-based band path, a
 * one-level MSD radix sort of records keyed by hashes (the dedup engine's
 * band and fingerprint runs), and an MSD radix sort with deduplication for
 * shingle sets: linear time for their inputs and allocation-free (the
 * caller gives the scratch).
 */
#include "common/sort.h"

/* One introsort, instantiated below for plain 64-bit keys, two-word records
 * and pair records; only the element type and the strict order differ. */
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
#define MINLSH__PAIR_LESS(x, y) ((x)->a < (y)->a || ((x)->a == (y)->a && (x)->b < (y)->b))

MINLSH__INTROSORT(minlsh__introsort_kv, minlsh__kv, MINLSH__KV_LESS)
MINLSH__INTROSORT(minlsh__introsort_pairs, minlsh__pair, MINLSH__PAIR_LESS)

void minlsh__sort_u64(uint64_t *v, size_t n) { minlsh__introsort_u64(v, n); }

size_t minlsh__unique_u64(uint64_t *v, size_t n) {
    size_t i, o;
    if (n == 0) return 0;
    for (i = 1, o = 1; i < n; i++)
        if (v[i] != v[o - 1]) v[o++] = v[i];
    return o;
}

void minlsh__sort_kv(minlsh__kv *v, size_t n) { minlsh__introsort_kv(v, n); }

void minlsh__sort_pairs(minlsh__pair *v, size_t n) { minlsh__introsort_pairs(v, n); }

/* LSD radix sort, 11 bits per pass (a 2048-entry histogram stays in L1);
 * stable, so records equal in the bits looked at keep their order. Passes
 * whose digit is the same for every record are skipped. */
#define MINLSH__RADIX_BITS 11
#define MINLSH__RADIX_SIZE (1u << MINLSH__RADIX_BITS)

void minlsh__radix_kv(minlsh__kv *v, minlsh__kv *tmp, size_t n, int lo_bit, int hi_bit) {
    size_t count[MINLSH__RADIX_SIZE];
    minlsh__kv *src = v, *dst = tmp;
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
            minlsh__kv *t = src;
            src = dst;
            dst = t;
        }
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
}

/* One MSD level for records keyed by hashes: records whose top bits are
 * equal (about 2 of them) are finished by insertion sort; a bucket larger
 * than this (keys that are not spread: copies, or a crafted input) by the
 * introsort, so the worst case stays O(n log n). */
#define MINLSH__SPREAD_SMALL 16

/* The digit's bits: about two records a digit. */
static unsigned minlsh__spread_bits(size_t n, unsigned width_bits) {
    unsigned bits = 0;
    while (bits < MINLSH__SPREAD_BITS && bits < width_bits && ((size_t)1 << bits) < n) bits++;
    return bits;
}

size_t minlsh__sort_kv_spread_hist(size_t n, unsigned width_bits) {
    return ((size_t)1 << minlsh__spread_bits(n, width_bits)) + 1;
}

/* Records of v[0..n), sorted, whose key another of them has, moved to
 * v[0..) in order; how many. */
static size_t minlsh__keep_shared(minlsh__kv *v, size_t n) {
    size_t i, j, o = 0;
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && v[j].key == v[i].key; j++) {
        }
        if (j - i >= 2)
            for (; i < j; i++) v[o++] = v[i];
    }
    return o;
}

/* sort_kv_spread, or with `shared` its _shared variant: their count. */
static size_t minlsh__spread(minlsh__kv *dst, const minlsh__kv *src, size_t n, uint32_t *hist,
                             uint64_t lo, unsigned width_bits, int shared) {
    unsigned bits = minlsh__spread_bits(n, width_bits), shift = width_bits - bits;
    size_t i, start, nb = (size_t)1 << bits, out = 0, most = 0;
    if (n == 0) return 0;
    if (n > UINT32_MAX) { /* the histogram counts in 32 bits */
        memcpy(dst, src, n * sizeof *dst);
        minlsh__introsort_kv(dst, n);
        return shared ? minlsh__keep_shared(dst, n) : n;
    }
#define MINLSH__SPREAD_DIGIT(key) (shift < 64 ? (size_t)(((key) - lo) >> shift) : 0)
    memset(hist, 0, (nb + 1) * sizeof *hist);
    for (i = 0; i < n; i++) hist[MINLSH__SPREAD_DIGIT(src[i].key) + 1]++;
    for (i = 1; i <= nb; i++) { /* hist[d]: where digit d starts */
        if (hist[i] > most) most = hist[i];
        hist[i] += hist[i - 1];
    }
    for (i = 0; i < n; i++) dst[hist[MINLSH__SPREAD_DIGIT(src[i].key)]++] = src[i];
#undef MINLSH__SPREAD_DIGIT
    if (most <= MINLSH__SPREAD_SMALL) {
        /* Every digit small (spread keys): one insertion pass over all of
         * dst finishes them together, each record moving only within its
         * digit, without a branch per digit. */
        minlsh__introsort_kv_insertion(dst, n);
        return shared ? minlsh__keep_shared(dst, n) : n;
    }
    /* Now hist[d] is where digit d ends. A record alone in its digit has a
     * key no other has: with `shared` it is left out. */
    for (i = 0, start = 0; i < nb; start = hist[i++]) {
        size_t m = hist[i] - start;
        minlsh__kv *v = dst + start;
        if (m <= 1) {
            if (m == 1 && !shared) out++;
            continue;
        }
        if (m > MINLSH__SPREAD_SMALL)
            minlsh__introsort_kv(v, m);
        else
            minlsh__introsort_kv_insertion(v, m); /* most digits hold two or three */
        if (!shared) {
            out += m;
            continue;
        }
        m = minlsh__keep_shared(v, m);
        if (m > 0 && dst + out != v) memmove(dst + out, v, m * sizeof *v);
        out += m;
    }
    return out;
}

void minlsh__sort_kv_spread(minlsh__kv *dst, const minlsh__kv *src, size_t n, uint32_t *hist,
                            uint64_t lo, unsigned width_bits) {
    (void)minlsh__spread(dst, src, n, hist, lo, width_bits, 0);
}

size_t minlsh__sort_kv_spread_shared(minlsh__kv *dst, const minlsh__kv *src, size_t n,
                                     uint32_t *hist, uint64_t lo, unsigned width_bits) {
    return minlsh__spread(dst, src, n, hist, lo, width_bits, 1);
}

/* MSD radix sort with deduplication, for shingle sets: buckets this small
 * are finished by the introsort's insertion sort. */
#define MINLSH__MSD_SMALL 32

/* Largest first-level digit, and the scratch histogram it needs (on the
 * stack: 8 KiB, shared by every level). */
#define MINLSH__MSD_TOP_BITS 10

/* MSD radix sort of a[0..n) (tmp: scratch for n values) on the digit of
 * `bits` bits at `shift` and everything below it, the bits above being
 * equal. Shingle hashes are uniformly distributed, so one level with a
 * digit sized to n leaves buckets of a few keys, finished by insertion sort,
 * so most keys move once instead of eight times as in an 8-pass LSD sort
 * (docs/shingling.md has the measurement). Worst case linear: at most 8
 * levels of O(n + 2^bits) each (a level where every key has the same digit
 * is only counted), and insertion sort of at most MINLSH__MSD_SMALL keys per
 * bucket. Recursion depth <= 8; bucket bounds are found again by scanning,
 * so the histogram is free for the next level. */
static void minlsh__msd_sort(uint64_t *a, uint64_t *tmp, size_t n, unsigned shift,
                     unsigned bits, size_t *hist) {
    size_t nb, i, start, end, c;
    uint64_t mask, d;
    for (;;) {
        if (n <= MINLSH__MSD_SMALL) {
            minlsh__introsort_u64_insertion(a, n);
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
            minlsh__msd_sort(a + start, tmp + start, end - start, shift - bits, bits, hist);
    }
}

/* Sets up to this many keys go through one level whose buckets are then
 * finished together (below); larger ones through minlsh__msd_sort. */
#define MINLSH__MSD_ONE_LEVEL_MAX ((size_t)8 << MINLSH__MSD_TOP_BITS)

size_t minlsh__sort_unique_u64(uint64_t *dst, uint64_t *a, uint64_t *tmp, size_t n) {
    size_t hist[(size_t)1 << MINLSH__MSD_TOP_BITS], nb, i, c, start, most = 0, m;
    unsigned bits = 1, shift;
    const uint64_t *s = tmp;
    if (n == 0) return 0;
    /* One or two keys per first-level bucket, 8 at most. */
    while (bits < MINLSH__MSD_TOP_BITS && ((size_t)1 << bits) < n) bits++;
    if (n > MINLSH__MSD_ONE_LEVEL_MAX) {
        minlsh__msd_sort(a, tmp, n, 64 - bits, bits, hist);
        s = a;
    } else {
        /* A typical set (tens to thousands of keys): scattered once into
         * tmp by its top bits, then one insertion pass over the whole array
         * finishes every bucket at once, each key moving only within its
         * own, with no per-bucket calls and no copy back. A bucket past
         * MINLSH__MSD_SMALL (keys that are not spread) sends the set to the
         * recursive sort instead, which keeps the worst case linear. */
        nb = (size_t)1 << bits;
        shift = 64 - bits;
        memset(hist, 0, nb * sizeof *hist);
        for (i = 0; i < n; i++) hist[a[i] >> shift]++;
        for (i = 0, start = 0; i < nb; i++) {
            c = hist[i];
            hist[i] = start;
            start += c;
            if (c > most) most = c;
        }
        if (most <= MINLSH__MSD_SMALL) {
            for (i = 0; i < n; i++) {
                uint64_t x = a[i];
                tmp[hist[x >> shift]++] = x;
            }
            minlsh__introsort_u64_insertion(tmp, n);
        } else {
            minlsh__msd_sort(a, tmp, n, shift, bits, hist);
            s = a;
        }
    }
    /* Forward compaction, safe when dst is s. */
    dst[0] = s[0];
    for (i = 1, m = 1; i < n; i++)
        if (s[i] != dst[m - 1]) dst[m++] = s[i];
    return m;
}
