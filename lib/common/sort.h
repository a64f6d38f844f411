/*
 * The sorts of the library, for every layer (sort.c): an in-place introsort
 * of 64-bit keys, of (key, val) records and of pair records, a stable LSD
 * radix sort of records, and an MSD radix sort of 64-bit keys with
 * deduplication.
 * Internal: every name minlsh__*, hidden. No allocation: scratch comes from
 * the caller.
 */
#ifndef MINLSH_COMMON_SORT_H
#define MINLSH_COMMON_SORT_H

#include "common/common.h"

/* Ascending, in place, O(n log n) worst case. */
void minlsh__sort_u64(uint64_t *v, size_t n);
/* Drop adjacent duplicates of a sorted array; returns the new length. */
size_t minlsh__unique_u64(uint64_t *v, size_t n);

/* Records of two 64-bit words, ordered by (key, val). */
typedef struct minlsh__kv {
    uint64_t key, val;
} minlsh__kv;
/* Ascending by (key, val), in place, O(n log n) worst case. */
void minlsh__sort_kv(minlsh__kv *v, size_t n);
/* A pair of 64-bit ids and their similarity: the records of a pair list. */
typedef struct minlsh__pair {
    uint64_t a, b;
    double sim;
} minlsh__pair;
/* Ascending by (a, b), in place, O(n log n) worst case. sim is carried
 * along, not compared: records with equal (a, b) end in an unspecified
 * order, so give them equal sims or drop the repeats. */
void minlsh__sort_pairs(minlsh__pair *v, size_t n);

/* Stable LSD radix sort of n records by bits [lo_bit, hi_bit) of key,
 * using tmp (n records) as scratch; the result ends in v. Linear time. */
void minlsh__radix_kv(minlsh__kv *v, minlsh__kv *tmp, size_t n, int lo_bit, int hi_bit);

/* Sort the n records of src by (key, val) into dst (not overlapping src),
 * for keys spread evenly over [lo, lo + 2^width_bits) (hashes, or a range
 * of them; width_bits <= 64): one pass places each record by its key's top
 * bits there, so that about two share a digit, then each digit's records
 * are finished by insertion sort. Linear time for hashes; any keys in the
 * range are sorted all the same, in O(n log n) at worst. hist: scratch of
 * minlsh__sort_kv_spread_hist(n, width_bits) words, MINLSH__SPREAD_HIST at
 * most. */
#define MINLSH__SPREAD_BITS 16
#define MINLSH__SPREAD_HIST (((size_t)1 << MINLSH__SPREAD_BITS) + 1)
void minlsh__sort_kv_spread(minlsh__kv *dst, const minlsh__kv *src, size_t n, uint32_t *hist,
                            uint64_t lo, unsigned width_bits);
size_t minlsh__sort_kv_spread_hist(size_t n, unsigned width_bits);
/* minlsh__sort_kv_spread, but only the records whose key another of them
 * has go to dst (for callers that want groups of equal keys); returns how
 * many. */
size_t minlsh__sort_kv_spread_shared(minlsh__kv *dst, const minlsh__kv *src, size_t n,
                                     uint32_t *hist, uint64_t lo, unsigned width_bits);

/* Sort a[0..n) ascending (in place; tmp is scratch for n values, distinct
 * from a) and write its distinct values to dst, which may be a or tmp.
 * Returns how many. Linear time (MSD radix sort), no allocation. */
size_t minlsh__sort_unique_u64(uint64_t *dst, uint64_t *a, uint64_t *tmp, size_t n);

#endif /* MINLSH_COMMON_SORT_H */
