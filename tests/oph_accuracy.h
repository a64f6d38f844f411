/*
 * tests/oph_accuracy.h: the accuracy experiment of the signing schemes,
 * shared by tests/test_oph.c (small sizes, asserted) and
 * bench/oph_accuracy.c (the full table, make bench-oph).
 *
 * A pair is two sets of random 64-bit shingle hashes with a union of U
 * elements, I of them shared (I drawn so that the exact Jaccard I/U spreads
 * evenly over [0, 1]), the rest split between the two sides. Each pair gets
 * a new family seed, and both schemes sign it with that seed, so classic
 * and OPH are compared on the same pairs. Everything comes from one
 * SplitMix64 stream: the figures are the same on every run.
 */
#ifndef MINLSH_TESTS_OPH_ACCURACY_H
#define MINLSH_TESTS_OPH_ACCURACY_H

#ifndef MINLSH_EXPERIMENTAL_API
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_family_new_scheme */
#endif
#include "minlsh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ACC_SCHEMES 2 /* classic, oph: indexed by MINLSH_SCHEME_* */

typedef struct acc_stats {
    double bias;   /* mean(estimate - J) */
    double rmse;   /* sqrt(mean((estimate - J)^2)) */
    double theory; /* sqrt(mean(J (1 - J) / k)): k independent functions */
    double maxerr; /* max |estimate - J| */
    size_t pairs;
} acc_stats;

static uint64_t acc_next(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* One pair: a and b get na and nb hashes (room for umax each); returns the
 * exact Jaccard. */
static double acc_pair(uint64_t *rng, size_t umin, size_t umax, uint64_t *a, size_t *na,
                       uint64_t *b, size_t *nb) {
    size_t u = umin + (size_t)(acc_next(rng) % (umax - umin + 1)), i, shared, ao;
    double j = (double)(acc_next(rng) >> 11) / 9007199254740992.0;
    shared = (size_t)(j * (double)u + 0.5);
    if (shared > u) shared = u;
    /* Both sides non-empty: at least one element each when nothing is shared. */
    if (shared == 0 && u < 2) u = 2;
    ao = (u - shared) / 2;
    for (i = 0; i < shared; i++) a[i] = b[i] = acc_next(rng);
    for (i = 0; i < ao; i++) a[shared + i] = acc_next(rng);
    for (i = 0; i < u - shared - ao; i++) b[shared + i] = acc_next(rng);
    *na = shared + ao;
    *nb = u - ao;
    return (double)shared / (double)u;
}

/* Bias and RMSE of both schemes at k over n pairs with unions of umin..umax
 * elements. Returns 0 or a MINLSH_E_* code. */
static int acc_measure(acc_stats out[ACC_SCHEMES], uint32_t k, size_t n, size_t umin,
                       size_t umax, uint64_t seed) {
    uint64_t rng = seed, *a = (uint64_t *)malloc(umax * sizeof *a),
             *b = (uint64_t *)malloc(umax * sizeof *b);
    uint32_t sa[MINLSH_FAMILY_K_MAX], sb[MINLSH_FAMILY_K_MAX];
    double sum[ACC_SCHEMES] = {0}, sq[ACC_SCHEMES] = {0}, th = 0;
    size_t p, na, nb;
    uint32_t s;
    int rc = 0;
    memset(out, 0, ACC_SCHEMES * sizeof *out);
    if (a == NULL || b == NULL) rc = MINLSH_E_NOMEM;
    for (p = 0; p < n && rc == 0; p++) {
        double j = acc_pair(&rng, umin, umax, a, &na, b, &nb), est;
        uint64_t fseed = acc_next(&rng);
        th += j * (1 - j) / k;
        for (s = 0; s < ACC_SCHEMES && rc == 0; s++) {
            minlsh_family *f = NULL;
            rc = minlsh_family_new_scheme(&f, k, fseed, s, NULL);
            if (rc == 0) rc = minlsh_family_sign(f, a, na, sa, k, NULL);
            if (rc == 0) rc = minlsh_family_sign(f, b, nb, sb, k, NULL);
            if (rc == 0) rc = minlsh_signature_estimate(&est, sa, sb, k);
            minlsh_family_free(f);
            if (rc != 0) break;
            sum[s] += est - j;
            sq[s] += (est - j) * (est - j);
            if (fabs(est - j) > out[s].maxerr) out[s].maxerr = fabs(est - j);
        }
    }
    for (s = 0; s < ACC_SCHEMES; s++) {
        out[s].pairs = n;
        out[s].bias = sum[s] / (double)n;
        out[s].rmse = sqrt(sq[s] / (double)n);
        out[s].theory = sqrt(th / (double)n);
    }
    free(a);
    free(b);
    return rc;
}

/* The band index's S-curve: over n pairs with Jaccard near j (unions of
 * umin..umax), the fraction of pairs that share at least one of b bands of
 * r rows (equal values in every row of the band: what equal band keys
 * mean, without the 2^-64 chance of a key collision), per scheme. theory is
 * the mean over the pairs of 1 - (1 - J^r)^b at each pair's exact J. */
static int acc_scurve(double got[ACC_SCHEMES], double *theory, uint32_t k, uint32_t bands,
                      uint32_t rows, double j_target, size_t n, size_t umin, size_t umax,
                      uint64_t seed) {
    uint64_t rng = seed, *a = (uint64_t *)malloc(umax * sizeof *a),
             *b = (uint64_t *)malloc(umax * sizeof *b);
    uint32_t sa[MINLSH_FAMILY_K_MAX], sb[MINLSH_FAMILY_K_MAX], s, band, r;
    size_t p, i, hit[ACC_SCHEMES] = {0}, na, nb;
    double psum = 0;
    int rc = 0;
    if (a == NULL || b == NULL) rc = MINLSH_E_NOMEM;
    for (p = 0; p < n && rc == 0; p++) {
        size_t u = umin + (size_t)(acc_next(&rng) % (umax - umin + 1));
        size_t shared = (size_t)(j_target * (double)u + 0.5), ao = (u - shared) / 2;
        uint64_t fseed;
        for (i = 0; i < shared; i++) a[i] = b[i] = acc_next(&rng);
        for (i = 0; i < ao; i++) a[shared + i] = acc_next(&rng);
        for (i = 0; i < u - shared - ao; i++) b[shared + i] = acc_next(&rng);
        na = shared + ao;
        nb = u - ao;
        psum += 1 - pow(1 - pow((double)shared / (double)u, rows), bands);
        fseed = acc_next(&rng);
        for (s = 0; s < ACC_SCHEMES && rc == 0; s++) {
            minlsh_family *f = NULL;
            int any = 0;
            rc = minlsh_family_new_scheme(&f, k, fseed, s, NULL);
            if (rc == 0) rc = minlsh_family_sign(f, a, na, sa, k, NULL);
            if (rc == 0) rc = minlsh_family_sign(f, b, nb, sb, k, NULL);
            minlsh_family_free(f);
            for (band = 0; band < bands && !any && rc == 0; band++) {
                for (r = 0; r < rows && sa[band * rows + r] == sb[band * rows + r]; r++) {
                }
                any = r == rows;
            }
            hit[s] += (size_t)any;
        }
    }
    for (s = 0; s < ACC_SCHEMES; s++) got[s] = (double)hit[s] / (double)n;
    *theory = psum / (double)n;
    free(a);
    free(b);
    return rc;
}

#endif /* MINLSH_TESTS_OPH_ACCURACY_H */
