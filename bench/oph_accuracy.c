/*
 * bench/oph_accuracy.c: how accurate the two signing schemes are (make
 * bench-oph; docs/minhash.md section 7.4 has its table).
 *
 *   oph_accuracy [--pairs N]
 *
 * 1. Estimator bias and RMSE against exact Jaccard, classic and OPH on the
 *    same pairs (N, default 3000, per row), at k = 64, 128 and 256, for
 *    unions of 8 to k/4 and of 8 to k - 1 elements (the hard case for
 *    densification), of k to 4k, and of 8k to 16k. "theory" is sqrt(mean J(1-J)/k), the
 *    error of k independent functions.
 * 2. The band index's S-curve at k = 128, b = 18, r = 5 (the command's plan
 *    for threshold 0.8): the fraction of pairs that become candidates
 *    against 1 - (1 - J^r)^b, for unions of 40..100 and 1000..2000.
 * The experiment itself is tests/oph_accuracy.h, which tests/test_oph.c
 * runs at smaller sizes with asserted tolerances.
 */
#include "../tests/oph_accuracy.h"

#include <stdio.h>

static void check(int rc) {
    if (rc != 0) {
        fprintf(stderr, "oph_accuracy: %s\n", minlsh_strerror(rc));
        exit(1);
    }
}

int main(int argc, char **argv) {
    static const uint32_t ks[] = {64, 128, 256};
    static const char *names[] = {"classic", "oph"};
    size_t pairs = 3000, ki, ri;
    uint32_t s;
    int i;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pairs") == 0 && i + 1 < argc) pairs = (size_t)atol(argv[++i]);
        else {
            fprintf(stderr, "usage: oph_accuracy [--pairs N]\n");
            return 2;
        }
    }
    printf("== Estimator accuracy: %zu pairs per row, J uniform on [0, 1] ==\n", pairs);
    printf("%5s %-14s %-8s %9s %8s %8s %10s %8s\n", "k", "union", "scheme", "bias", "RMSE",
           "theory", "RMSE/th", "max err");
    for (ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        uint32_t k = ks[ki];
        size_t lo[4] = {8, 8, k, 8 * (size_t)k};
        size_t hi[4] = {k / 4, k - 1, 4 * (size_t)k, 16 * (size_t)k};
        for (ri = 0; ri < 4; ri++) {
            acc_stats st[ACC_SCHEMES];
            char range[32];
            check(acc_measure(st, k, pairs, lo[ri], hi[ri], 1000 * k + ri));
            snprintf(range, sizeof range, "%zu..%zu", lo[ri], hi[ri]);
            for (s = 0; s < ACC_SCHEMES; s++)
                printf("%5u %-14s %-8s %+9.5f %8.5f %8.5f %10.3f %8.3f\n", (unsigned)k, range,
                       names[s], st[s].bias, st[s].rmse, st[s].theory, st[s].rmse / st[s].theory,
                       st[s].maxerr);
        }
    }
    printf("\n== Band index S-curve: k = 128, b = 18, r = 5; %zu pairs per point ==\n", pairs);
    printf("%6s %-12s %9s %9s %9s %9s\n", "J", "union", "theory", "classic", "oph", "binom sd");
    {
        static const size_t lo[2] = {40, 1000}, hi[2] = {100, 2000};
        double maxdev[2][ACC_SCHEMES] = {{0}};
        for (ri = 0; ri < 2; ri++) {
            double j;
            for (j = 0.5; j < 0.96; j += 0.05) {
                double got[ACC_SCHEMES], th;
                char range[32];
                check(acc_scurve(got, &th, 128, 18, 5, j, pairs, lo[ri], hi[ri],
                                 (uint64_t)(j * 1000) + 7 * ri));
                snprintf(range, sizeof range, "%zu..%zu", lo[ri], hi[ri]);
                printf("%6.2f %-12s %9.4f %9.4f %9.4f %9.4f\n", j, range, th, got[0], got[1],
                       sqrt(th * (1 - th) / (double)pairs));
                for (s = 0; s < ACC_SCHEMES; s++)
                    if (fabs(got[s] - th) > maxdev[ri][s]) maxdev[ri][s] = fabs(got[s] - th);
            }
        }
        for (ri = 0; ri < 2; ri++)
            printf("max |measured - theory|, unions %zu..%zu: classic %.4f, oph %.4f\n", lo[ri],
                   hi[ri], maxdev[ri][0], maxdev[ri][1]);
    }
    return 0;
}
