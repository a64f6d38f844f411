/*
 * bench/mapped.c (make bench-mapped): queries of a mapped index with inserts
 * (a delta) against the same queries of the loaded index, side by side in
 * one run: minlsh_index_query and minlsh_index_query_limited, per call, and
 * their ratios. A limited query of a mapped handle with a delta used to load
 * a copy of the whole index per call (some 190 ms at 200,000 documents);
 * it now walks the file and the delta in place, as the plain query does.
 *
 * usage: mapped [DOCUMENTS [QUERIES]]   (default 200000 20000)
 */
#define _POSIX_C_SOURCE 200809L
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define K 128
#define DELTA 2000
#define LIMIT 1000
#define CAP (1 << 16)

static uint64_t rs = 88172645463325252u;

static uint32_t rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)rs;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Seconds per query over nq queries; *sum gets a digest of the answers. */
static double timed(const minlsh_index *ix, const uint32_t *q, size_t nq, int limited,
                    uint64_t *sum) {
    static uint64_t ids[CAP];
    static double sims[CAP];
    size_t i, n, j;
    uint32_t bands;
    double t0 = now();
    *sum = 0;
    for (i = 0; i < nq; i++) {
        int rc = limited ? minlsh_index_query_limited(ix, q + i * K, K, LIMIT, ids, sims, CAP,
                                                      &n, &bands)
                         : minlsh_index_query(ix, q + i * K, K, ids, sims, CAP, &n);
        if (rc != 0) {
            fprintf(stderr, "query: %s\n", minlsh_strerror(rc));
            exit(1);
        }
        for (j = 0; j < n; j++) *sum += ids[j] * 31 + (uint64_t)(sims[j] * 1e6);
        if (limited) *sum += bands;
    }
    return (now() - t0) / (double)nq;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 200000;
    size_t nq = argc > 2 ? (size_t)atol(argv[2]) : 20000, i;
    uint32_t *sigs = (uint32_t *)malloc((n + DELTA) * K * sizeof *sigs);
    uint32_t *q = (uint32_t *)malloc(nq * K * sizeof *q);
    minlsh_family *fam = NULL;
    minlsh_index *mem = NULL, *map = NULL;
    char path[256];
    int limited, v;
    if (sigs == NULL || q == NULL || n == 0 || nq == 0) return 1;
    snprintf(path, sizeof path, "%s/minlsh-bench-mapped-%ld.ix",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", (long)getpid());
    for (i = 0; i < (n + DELTA) * K; i++) sigs[i] = rnd();
    /* Every fourth document a near copy of the one before: shared buckets. */
    for (i = 4; i < n + DELTA; i += 4) {
        memcpy(sigs + i * K, sigs + (i - 1) * K, K * sizeof *sigs);
        for (v = 0; v < 8; v++) sigs[i * K + rnd() % K] = rnd();
    }
    if (minlsh_family_new(&fam, K, 1, NULL) != 0 ||
        minlsh_index_new(&mem, fam, 0, 16, 8, NULL) != 0)
        return 1;
    for (i = 0; i < n; i++)
        if (minlsh_index_insert(mem, i, sigs + i * K, K) != 0) return 1;
    if (minlsh_index_save_mapped(mem, path) != 0 || minlsh_index_map(&map, path, NULL) != 0)
        return 1;
    for (i = n; i < n + DELTA; i++)
        if (minlsh_index_insert(mem, i, sigs + i * K, K) != 0 ||
            minlsh_index_insert(map, i, sigs + i * K, K) != 0)
            return 1;
    for (i = 0; i < nq; i++) {
        memcpy(q + i * K, sigs + (rnd() % (n + DELTA)) * K, K * sizeof *q);
        q[i * K + rnd() % K] ^= 1;
    }
    printf("minlsh mapped-index benchmark: %zu documents in the file, %d in the delta, "
           "%zu queries, k %d, b 16, r 8, limit %d\n", n, DELTA, nq, K, LIMIT);
    for (limited = 0; limited < 2; limited++) {
        uint64_t sa, sb;
        double a, b;
        (void)timed(map, q, nq < 1000 ? nq : 1000, limited, &sa); /* first reads check blocks */
        a = timed(mem, q, nq, limited, &sa);
        b = timed(map, q, nq, limited, &sb);
        printf("%s: loaded %.2f us, mapped+delta %.2f us per query\n",
               limited ? "query_limited" : "query", a * 1e6, b * 1e6);
        printf("%s_mapped_over_loaded: %.2f (answers %s)\n", limited ? "query_limited" : "query",
               b / a, sa == sb ? "equal" : "DIFFER");
        if (sa != sb) return 1;
    }
    minlsh_index_free(map);
    minlsh_index_free(mem);
    minlsh_family_free(fam);
    remove(path);
    free(sigs);
    free(q);
    return 0;
}
