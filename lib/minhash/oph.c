/*
 * One-permutation hashing's densification (docs/minhash.md section 7).
 *
 * Binning (minlsh__oph_update, kernel_portable.c) leaves some of the k bins
 * empty when a set has few elements per bin. An empty bin j borrows the
 * value of a non-empty bin chosen by probes that depend only on (j, seed),
 * not on the set: Shrivastava's optimal densification (ICML 2017). Two sets
 * with bin j empty in both then borrow from the same bin as long as they
 * agree on which bins are empty, so equal positions still estimate Jaccard.
 * The probes of one bin are independent of those of every other bin, which
 * is what brings the variance down from the older rotation schemes.
 *
 * Probes are capped (a set with one element at k = 1024 would otherwise
 * cost a million of them): after MINLSH__OPH_PROBES misses, the next
 * non-empty bin after the last probe, circularly, is taken. That fallback
 * is also a function of (j, seed) and the emptiness pattern, so it keeps
 * the estimator consistent; it is rare unless fewer than about a tenth of
 * the bins are filled.
 *
 * The probe sequences depend on (seed, k) only, so the family computes the
 * first 16 of each bin once (minlsh__oph_probes, 32 bytes per bin, 4 KiB at
 * k = 128, small enough to stay in L1 beside the shingler's work): a probe
 * is then one table load and one bin load. Computing each probe's
 * SplitMix64 step per document made densification 60 % slower on documents
 * of 50 shingles at k = 128, where it is most of the signing work. Probes
 * past the 16th (a set filling fewer than about a sixth of the bins) are
 * computed as needed.
 */
#include "minhash.h"

uint32_t minlsh__oph_probe(uint64_t dkey, uint32_t k, uint32_t j, uint32_t t) {
    uint64_t state = dkey ^ (((uint64_t)j << 32) | t);
    uint64_t z = minlsh__splitmix64(&state);
    return (uint32_t)(((z >> 32) * k) >> 32);
}

void minlsh__oph_probes(uint64_t dkey, uint32_t k, uint16_t *probes) {
    uint32_t j, t;
    for (j = 0; j < k; j++)
        for (t = 0; t < MINLSH__OPH_TABLED; t++)
            probes[(size_t)j * MINLSH__OPH_TABLED + t] = (uint16_t)minlsh__oph_probe(dkey, k, j, t);
}

/* Bins are numbered in 16 bits (the probe table and the lists below). */
_Static_assert(MINLSH_FAMILY_K_MAX <= 65536, "OPH bin numbers are 16-bit");

void minlsh__oph_densify(uint64_t dkey, const uint16_t *probes, uint32_t k,
                         const uint32_t *bins, uint32_t *out, uint16_t *scratch) {
    /* empty[]: the empty bins, listed without a branch (whether a bin is
     * empty is a coin toss the branch predictor loses); next[i]: the first
     * non-empty bin at or after i, circularly, built only if some bin needs
     * the fallback. */
    uint16_t *empty = scratch, *next = scratch + k;
    int have_next = 0;
    uint32_t j, t, e, n_empty = 0, src = 0;
    for (j = 0; j < k; j++) {
        out[j] = bins[j];
        empty[n_empty] = (uint16_t)j;
        n_empty += bins[j] == MINLSH_EMPTY_VALUE;
    }
    if (n_empty == k) return; /* the empty set: the empty signature */
    for (e = 0; e < n_empty; e++) {
        const uint16_t *pr;
        j = empty[e];
        pr = probes + (size_t)j * MINLSH__OPH_TABLED;
        for (t = 0; t < MINLSH__OPH_TABLED; t++) {
            src = pr[t];
            if (bins[src] != MINLSH_EMPTY_VALUE) break;
        }
        /* Past the table (fewer than a sixth of the bins filled). */
        for (; t < MINLSH__OPH_PROBES && bins[src] == MINLSH_EMPTY_VALUE; t++)
            src = minlsh__oph_probe(dkey, k, j, t);
        if (bins[src] == MINLSH_EMPTY_VALUE) {
            if (!have_next) {
                /* Right to left: next[i] is i itself or next[i + 1]; past
                 * the end comes the first non-empty bin. */
                uint32_t nx = 0, i = k;
                while (bins[nx] == MINLSH_EMPTY_VALUE) nx++;
                while (i-- > 0) {
                    if (bins[i] != MINLSH_EMPTY_VALUE) nx = i;
                    next[i] = (uint16_t)nx;
                }
                have_next = 1;
            }
            src = next[src + 1 == k ? 0 : src + 1];
        }
        out[j] = bins[src];
    }
}
