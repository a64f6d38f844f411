/*
 * bench/bench.c: the minlsh benchmarks (make bench, bench-scale, bench-hot).
 *
 *   bench all    every stage, in one run, on a corpus generated from a seed;
 *                ends with the summary lines ("key: value")
 *   bench scale  1,000,000 documents of ~3 KB, deduplicated end to end
 *   bench hot    100,000 identical / empty / repeated-paragraph documents
 *                against 100,000 distinct ones
 *   bench dedup  the dedup section of `all` alone: `minlsh dedup` on short
 *                generated documents (bench/gen_docs) as fresh processes at
 *                1 and 2 threads, wall time, peak RSS, recall
 *   bench huge   gen_docs N | minlsh dedup - for each N of --sizes (default
 *                1M, 10M, 100M): wall time, peak RSS, docs/s, temp disk,
 *                recall, growth exponent (make bench-huge; not in CI)
 *   bench components  minlsh dedup on 5,000 near-identical 300-word files (one
 *                cluster) and on 5,000 unrelated ones (bench/gen_near.py),
 *                fresh processes interleaved, best of 3: the time ratio
 *                near/unrelated and each one's peak RSS, also under
 *                --memory 8M and 1M (make bench-components; not in CI)
 *   bench crawler  the index as a crawler uses it, for each N of --sizes
 *                (default 1M): build an index of N generated documents, add
 *                1,000 more, query one, as fresh `minlsh index` processes
 *                (wall time, peak RSS) side by side, and the two ratios to
 *                the build (make bench-index; not in CI)
 * Options: --words FILE (vocabulary from a word list, e.g.
 * /usr/share/dict/words, instead of the built-in one), --seed N, --quick
 * (smaller sizes, to try the program out), --dedup-docs N (documents for
 * the dedup section: 1,000,000, or 100,000 with --quick), --minlsh PATH
 * and --gen-docs PATH (the programs that section runs; by default
 * ../minlsh and gen_docs beside this program, as the build tree has them).
 *
 * The machine is shared, so absolute times are noise: every figure is the
 * best of several runs, rates per core use the thread's CPU time, and the
 * numbers that matter are the ratios measured within one run. The program
 * includes internal headers (the kernel table, the shingle engine, the
 * index's memory accounting); it is never installed.
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_index_query_limited */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1 /* wait4: the child's own peak RSS */
#include "minlsh.h"

#include "corpus.h"
#include "recall.h"
#include "lsh/lsh.h"
#include "minhash/kernel.h"
#include "shingle/shingle.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- utilities -------------------------------------------------------------- */

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n > 0 ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

static void check(int rc, const char *what) {
    if (rc != 0) {
        fprintf(stderr, "bench: %s: %s\n", what, minlsh_strerror(rc));
        exit(1);
    }
}

static unsigned online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : (unsigned)n;
}

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

static uint64_t rng_state = 1;
static uint64_t rnd(void) { return corpus_mix(rng_state++); }

typedef struct options {
    uint64_t seed;
    const char *words;
    int quick;
    uint64_t dedup_docs; /* 0: the default for the mode */
    const char *minlsh, *gen_docs;
    const char *gen_near; /* bench components: bench/gen_near.py */
    const char *sizes; /* bench huge: document counts, e.g. "1000000 10000000" */
    const char *threads_list; /* bench threads: thread counts, e.g. "1 2 4" */
    int reps;                 /* bench threads: runs per count (0: 1) */
} options;

static corpus_vocab vocab;

/* ---- the corpus in memory ---------------------------------------------------- */

typedef struct corpus {
    char *buf;
    const char **text;
    size_t *len;
    size_t n, bytes;
} corpus;

typedef struct gen_job {
    corpus *c;
    uint64_t seed, first;
    size_t doc_bytes, begin, end;
    size_t *offs; /* start of each document in buf */
} gen_job;

static void *gen_thread(void *arg) {
    gen_job *g = (gen_job *)arg;
    size_t i;
    for (i = g->begin; i < g->end; i++) {
        char *out = g->c->buf + g->offs[i];
        g->c->len[i] = corpus_doc(&vocab, g->seed, g->first + i, g->doc_bytes, out);
        g->c->text[i] = out;
    }
    return NULL;
}

/* Documents first .. first+n-1 of the corpus, generated by all CPUs. */
static void corpus_make(corpus *c, uint64_t seed, uint64_t first, size_t n, size_t doc_bytes) {
    unsigned t, nt = online_cpus();
    pthread_t tid[64];
    gen_job job[64];
    size_t *offs = (size_t *)xmalloc(n * sizeof *offs), i, room = doc_bytes + 2 * CORPUS_WORD_MAX;
    if (nt > 64) nt = 64;
    c->buf = (char *)xmalloc(n * room);
    c->text = (const char **)xmalloc(n * sizeof *c->text);
    c->len = (size_t *)xmalloc(n * sizeof *c->len);
    c->n = n;
    for (i = 0; i < n; i++) offs[i] = i * room;
    for (t = 0; t < nt; t++) {
        job[t].c = c;
        job[t].seed = seed;
        job[t].first = first;
        job[t].doc_bytes = doc_bytes;
        job[t].begin = n * t / nt;
        job[t].end = n * (t + 1) / nt;
        job[t].offs = offs;
        if (t > 0 && pthread_create(&tid[t], NULL, gen_thread, &job[t]) != 0) gen_thread(&job[t]);
        else if (t > 0) continue;
    }
    gen_thread(&job[0]);
    for (t = 1; t < nt; t++) pthread_join(tid[t], NULL);
    c->bytes = 0;
    for (i = 0; i < n; i++) c->bytes += c->len[i];
    free(offs);
}

static void corpus_free(corpus *c) {
    free(c->buf);
    free((void *)c->text);
    free(c->len);
    memset(c, 0, sizeof *c);
}

/* ---- 1. memory-read rate ------------------------------------------------------ */

#define MEM_BYTES ((size_t)256 << 20)

typedef struct mem_job {
    const uint64_t *p;
    size_t n;
    uint64_t sum;
} mem_job;

static void *mem_thread(void *arg) {
    mem_job *m = (mem_job *)arg;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i;
    for (i = 0; i + 4 <= m->n; i += 4) {
        s0 += m->p[i];
        s1 += m->p[i + 1];
        s2 += m->p[i + 2];
        s3 += m->p[i + 3];
    }
    m->sum = s0 ^ s1 ^ s2 ^ s3;
    return NULL;
}

/* Best-of-reps read rate in MB/s over a 256 MiB array with nt threads. */
static double mem_rate(const uint64_t *a, unsigned nt, int reps) {
    double best = 0.0;
    int r;
    for (r = 0; r < reps; r++) {
        pthread_t tid[64];
        mem_job job[64];
        unsigned t;
        size_t words = MEM_BYTES / 8;
        double t0 = wall_now(), dt;
        for (t = 0; t < nt; t++) {
            job[t].p = a + words * t / nt;
            job[t].n = words / nt;
            if (t > 0) pthread_create(&tid[t], NULL, mem_thread, &job[t]);
        }
        mem_thread(&job[0]);
        for (t = 1; t < nt; t++) pthread_join(tid[t], NULL);
        dt = wall_now() - t0;
        if (job[0].sum == 42) fprintf(stderr, "."); /* keep the sums */
        if ((double)MEM_BYTES / dt / 1e6 > best) best = (double)MEM_BYTES / dt / 1e6;
    }
    return best;
}

/* ---- 2. shingling ------------------------------------------------------------- */

static int count_emit(void *ctx, const uint64_t *h, size_t n) {
    (void)h;
    *(uint64_t *)ctx += n;
    return 0;
}

/* ---- the all-stages run -------------------------------------------------------- */

typedef struct summary {
    double ns_per_shingle, simd_over_portable, threads_over_one;
    double oph_signing, oph_end_to_end, oph_end_to_end_short; /* OPH over classic, k = 128 */
    double bytes_per_doc_band, inserts, queries, exponent;
    int have_simd;
    /* the dedup section: wall seconds and peak RSS (MiB) at 1 and 2
     * threads, recall; have_dedup = 0 when it could not run */
    double dedup_t1, dedup_t2, dedup_rss1, dedup_rss2, dedup_recall;
    uint64_t dedup_docs;
    int have_dedup;
} summary;

static const minlsh_shingler *g_sh;

static void bench_memory(double *one, double *all, unsigned nt) {
    uint64_t *a = (uint64_t *)xmalloc(MEM_BYTES);
    size_t i;
    for (i = 0; i < MEM_BYTES / 8; i++) a[i] = i * UINT64_C(0x9E3779B97F4A7C15);
    *one = mem_rate(a, 1, 5);
    *all = mem_rate(a, nt, 5);
    free(a);
    printf("\n== Memory-read rate (sum of a 256 MiB array, best of 5) ==\n");
    printf("  1 thread      %9.0f MB/s\n", *one);
    printf("  %u threads     %9.0f MB/s\n", nt, *all);
}

static void bench_shingling(const corpus *c, uint64_t *shingles) {
    double best = 1e30, best_set = 1e30;
    minlsh_shingleset *set = NULL;
    size_t i;
    int r;
    check(minlsh_shingleset_new(&set, NULL), "shingleset");
    for (r = 0; r < 3; r++) {
        double t0 = cpu_now();
        uint64_t n = 0;
        for (i = 0; i < c->n; i++)
            check(minlsh__shingler_each(g_sh, c->text[i], c->len[i], count_emit, &n), "shingle");
        t0 = cpu_now() - t0;
        if (t0 < best) best = t0;
        *shingles = n;
        t0 = cpu_now();
        for (i = 0; i < c->n; i++) check(minlsh_shingler_hash(g_sh, c->text[i], c->len[i], set, NULL), "hash");
        t0 = cpu_now() - t0;
        if (t0 < best_set) best_set = t0;
    }
    minlsh_shingleset_free(set);
    printf("\n== Shingling (word:5, %zu documents, %.1f MB, one thread) ==\n", c->n,
           (double)c->bytes / 1e6);
    printf("  hashes only (the signing path)   %8.1f MB/s   %6.1f M shingles/s\n",
           (double)c->bytes / best / 1e6, (double)*shingles / best / 1e6);
    printf("  sorted set (minlsh_shingler_hash) %7.1f MB/s\n", (double)c->bytes / best_set / 1e6);
    printf("  %.1f shingles per document, %.2f bytes per shingle\n",
           (double)*shingles / (double)c->n, (double)c->bytes / (double)*shingles);
}

/* Every MinHash kernel at k = 128 and 1024, side by side with its speed-up
 * over the portable kernel (the numbers tests/test_kernels.c and
 * tests/test_minhash.c used to print). */
static void bench_minhash(summary *sm) {
    static const uint32_t kv[] = {128, 1024};
    const minlsh__minhash_kernel *ks[16];
    size_t nk = minlsh__minhash_kernels(ks, 16), i, ki, n = (size_t)1 << 16;
    uint64_t *h = (uint64_t *)xmalloc(n * sizeof *h), a[1024], b[1024];
    uint32_t sig[1024];
    double best_simd = 0.0;
    const char *best_name = "";
    for (i = 0; i < n; i++) h[i] = rnd();
    printf("\n== MinHash kernels (%zu shingles per call, one thread, best of 5) ==\n", n);
    printf("  active kernel: %s\n", minlsh_simd_kernel_name());
    printf("  %-14s %6s %12s %12s %10s\n", "kernel", "k", "ns/shingle", "ns/sh x fn",
           "x portable");
    for (ki = 0; ki < sizeof kv / sizeof kv[0]; ki++) {
        uint32_t k = kv[ki];
        minlsh_family *fam = NULL;
        double portable = 0.0;
        check(minlsh_family_new(&fam, k, 1, NULL), "family");
        check(minlsh_family_copy_coefficients(fam, a, b, k, NULL), "coefficients");
        for (i = 0; i < nk && i < 16; i++) {
            double best = 1e30, rate;
            int r;
            for (r = 0; r < 5; r++) {
                double t0 = cpu_now();
                memset(sig, 0xFF, k * sizeof *sig);
                ks[i]->update(a, b, k, h, n, sig);
                t0 = cpu_now() - t0;
                if (t0 < best) best = t0;
            }
            rate = (double)n / best;
            if (strcmp(ks[i]->name, "portable") == 0) portable = rate;
            printf("  %-14s %6u %12.2f %12.3f %9.2fx\n", ks[i]->name, (unsigned)k, 1e9 / rate,
                   1e9 / rate / k, portable > 0.0 ? rate / portable : 1.0);
            if (k == 128 && strncmp(ks[i]->name, "portable", 8) != 0 && rate > best_simd) {
                best_simd = rate;
                best_name = ks[i]->name;
            }
            if (k == 128 && best_simd > 0.0 && portable > 0.0)
                sm->simd_over_portable = best_simd / portable;
        }
        minlsh_family_free(fam);
    }
    sm->have_simd = sm->simd_over_portable > 0.0;
    if (sm->have_simd)
        printf("  best SIMD at k = 128 (%s) over portable: %.2fx\n", best_name,
               sm->simd_over_portable);
    else
        printf("  no SIMD kernel in this build or on this CPU: ratio n/a\n");
    free(h);
}

typedef struct level_sign {
    const minlsh__minhash_kernel *kern;
    const uint64_t *a, *b;
    uint32_t *sig;
    size_t n;
} level_sign;

static int level_sign_emit(void *ctx, const uint64_t *hashes, size_t n) {
    level_sign *c = (level_sign *)ctx;
    c->kern->update(c->a, c->b, 128, hashes, n, c->sig);
    c->n += n;
    return 0;
}

/* Shingle + sign (the work of minlsh_family_sign_text) with each SIMD
 * level's pair of kernels (SipHash lanes and MinHash), word 5-shingles,
 * k = 128, one thread, side by side with the portable level. */
static void bench_levels(const corpus *c) {
    uint64_t a[128], b[128];
    uint32_t sig[128];
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    size_t docs = c->n < 2000 ? c->n : 2000;
    double portable = 0.0;
    int l;
    o.unit = MINLSH_UNIT_WORD;
    o.k = 5;
    check(minlsh_family_new(&fam, 128, 1, NULL), "family");
    check(minlsh_family_copy_coefficients(fam, a, b, 128, NULL), "coefficients");
    check(minlsh_shingler_new(&sh, &o, NULL), "shingler");
    printf("\n== Shingle + sign per SIMD level (word 5-shingles, k = 128, %zu documents, "
           "one thread, best of 3) ==\n", docs);
    for (l = 0; l <= minlsh__cpu_simd_level(); l++) {
        level_sign ls;
        double best = 1e30, ns;
        int r;
        if (!minlsh__simd_level_compiled(l)) continue;
        ls.kern = minlsh__minhash_kernel_for_level(l);
        ls.a = a;
        ls.b = b;
        ls.sig = sig;
        for (r = 0; r < 3; r++) {
            double t0 = cpu_now();
            size_t d;
            ls.n = 0;
            for (d = 0; d < docs; d++) {
                memset(sig, 0xFF, sizeof sig);
                check(minlsh__shingler_each_kernel(sh, c->text[d], c->len[d], level_sign_emit, &ls,
                                                   minlsh__siphash_many_for_level(l)),
                      "shingle");
            }
            t0 = cpu_now() - t0;
            if (t0 < best) best = t0;
        }
        ns = best * 1e9 / (double)(ls.n ? ls.n : 1);
        if (l == MINLSH__SIMD_PORTABLE) portable = ns;
        printf("  %-10s %8.1f ns per shingle  %6.2fx portable\n", minlsh__simd_level_name(l), ns,
               portable > 0.0 ? portable / ns : 1.0);
    }
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
}

/* Shingle + sign (minlsh_family_sign_batch, one thread) and + insert
 * (b = 18, r = 5) of the first docs documents of c with both schemes at
 * k = 128, runs interleaved, best of 5, thread CPU time, printed as ns per
 * shingle; returns classic's end-to-end time over OPH's. */
static double scheme_e2e(const corpus *c, size_t docs, const char *what) {
    static const char *names[] = {"classic", "oph"};
    uint64_t *ids = (uint64_t *)xmalloc(docs * 8), shingles = 0;
    uint32_t *sigs = (uint32_t *)xmalloc(docs * 128 * sizeof *sigs), s;
    double e2e[2] = {1e30, 1e30}, sign_only[2] = {1e30, 1e30};
    minlsh_family *f[2];
    size_t i, done;
    int r;
    for (i = 0; i < docs; i++) ids[i] = i;
    for (i = 0; i < docs; i++)
        check(minlsh__shingler_each(g_sh, c->text[i], c->len[i], count_emit, &shingles),
              "shingle");
    for (s = 0; s < 2; s++) check(minlsh_family_new_scheme(&f[s], 128, 1, s, NULL), "family");
    for (r = 0; r < 5; r++)
        for (s = 0; s < 2; s++) {
            minlsh_index *ix = NULL;
            double t0 = cpu_now(), t1, t2;
            check(minlsh_family_sign_batch(f[s], g_sh, (const void *const *)c->text, c->len,
                                           docs, 1, sigs, docs * 128, NULL, NULL),
                  "sign_batch");
            t1 = cpu_now();
            check(minlsh_index_new(&ix, f[s], 0, 18, 5, NULL), "index");
            check(minlsh_index_insert_many(ix, ids, sigs, docs, 128, &done), "insert");
            t2 = cpu_now();
            minlsh_index_free(ix);
            if (t1 - t0 < sign_only[s]) sign_only[s] = t1 - t0;
            if (t2 - t0 < e2e[s]) e2e[s] = t2 - t0;
        }
    for (s = 0; s < 2; s++) minlsh_family_free(f[s]);
    printf("  end to end, k = 128, %s: %zu documents, %.0f shingles each\n", what, docs,
           (double)shingles / (double)docs);
    printf("  %-8s %22s %28s\n", "", "shingle + sign ns/sh", "+ insert (b=18, r=5) ns/sh");
    for (s = 0; s < 2; s++)
        printf("  %-8s %22.1f %28.1f\n", names[s], sign_only[s] * 1e9 / (double)shingles,
               e2e[s] * 1e9 / (double)shingles);
    printf("  oph over classic: shingle + sign %.2fx, end to end %.2fx\n",
           sign_only[0] / sign_only[1], e2e[0] / e2e[1]);
    free(ids);
    free(sigs);
    return e2e[0] / e2e[1];
}

/* The two signing schemes side by side, one thread: minlsh_family_sign on
 * random hashes (OPH's densification included) at k = 64, 128, 256, then
 * end to end (scheme_e2e) on c and on short documents of about 50 words,
 * fewer shingles than k (where OPH densifies most of the bins). */
static void bench_schemes(const corpus *c, uint64_t seed, summary *sm) {
    static const uint32_t kv[] = {64, 128, 256};
    size_t n = (size_t)1 << 16, i, ki;
    uint64_t *h = (uint64_t *)xmalloc(n * sizeof *h);
    uint32_t sig[256], s;
    corpus shorts;
    for (i = 0; i < n; i++) h[i] = rnd();
    printf("\n== Signing schemes: classic (kernel %s) and OPH, one thread, best of 5 ==\n",
           minlsh_simd_kernel_name());
    printf("  minlsh_family_sign, %zu random hashes per call\n", n);
    printf("  %6s %14s %14s %12s\n", "k", "classic ns/sh", "oph ns/sh", "oph speed-up");
    for (ki = 0; ki < sizeof kv / sizeof kv[0]; ki++) {
        double best[2] = {1e30, 1e30};
        minlsh_family *f[2];
        int r;
        for (s = 0; s < 2; s++) check(minlsh_family_new_scheme(&f[s], kv[ki], 1, s, NULL), "family");
        for (r = 0; r < 5; r++)
            for (s = 0; s < 2; s++) {
                double t0 = cpu_now();
                check(minlsh_family_sign(f[s], h, n, sig, kv[ki], NULL), "sign");
                t0 = cpu_now() - t0;
                if (t0 < best[s]) best[s] = t0;
            }
        printf("  %6u %14.2f %14.2f %11.1fx\n", (unsigned)kv[ki], best[0] * 1e9 / (double)n,
               best[1] * 1e9 / (double)n, best[0] / best[1]);
        if (kv[ki] == 128) sm->oph_signing = best[0] / best[1];
        for (s = 0; s < 2; s++) minlsh_family_free(f[s]);
    }
    /* Small sets: densification's work per empty bin grows as k / (filled
     * bins), so below about k/4 shingles OPH is the slower scheme. */
    printf("  minlsh_family_sign of small sets, ns per set (best of 5 runs of 2000 sets)\n");
    printf("  %6s %6s %14s %14s %12s\n", "k", "n", "classic ns", "oph ns", "oph speed-up");
    for (ki = 0; ki < 2; ki++) {
        static const uint32_t kk[] = {128, 1024};
        static const size_t nn[] = {5, 20, 50, 200};
        size_t ni;
        minlsh_family *f[2];
        for (s = 0; s < 2; s++) check(minlsh_family_new_scheme(&f[s], kk[ki], 1, s, NULL), "family");
        for (ni = 0; ni < sizeof nn / sizeof nn[0]; ni++) {
            double best[2] = {1e30, 1e30};
            int r;
            uint32_t big[1024];
            for (r = 0; r < 5; r++)
                for (s = 0; s < 2; s++) {
                    double t0 = cpu_now();
                    size_t d;
                    for (d = 0; d < 2000; d++)
                        check(minlsh_family_sign(f[s], h + (d * 31) % (n - nn[ni]), nn[ni], big,
                                                 kk[ki], NULL),
                              "sign");
                    t0 = cpu_now() - t0;
                    if (t0 < best[s]) best[s] = t0;
                }
            printf("  %6u %6zu %14.0f %14.0f %11.2fx\n", (unsigned)kk[ki], nn[ni],
                   best[0] * 1e9 / 2000, best[1] * 1e9 / 2000, best[0] / best[1]);
        }
        for (s = 0; s < 2; s++) minlsh_family_free(f[s]);
    }
    free(h);
    sm->oph_end_to_end = scheme_e2e(c, c->n < 5000 ? c->n : 5000, "the corpus");
    corpus_make(&shorts, seed + 1, 0, 20000, 300);
    sm->oph_end_to_end_short = scheme_e2e(&shorts, shorts.n, "300-byte documents");
    corpus_free(&shorts);
}

/* Shingle + sign with the batch call, then insert: end to end. */
static void bench_end_to_end(const corpus *c, const minlsh_family *fam, uint64_t shingles,
                             double mem_all, unsigned nt, summary *sm) {
    uint32_t *sigs = (uint32_t *)xmalloc(c->n * 128 * sizeof *sigs);
    uint64_t *ids = (uint64_t *)xmalloc(c->n * sizeof *ids);
    double t1 = 1e30, tn = 1e30, ti = 1e30, mb = (double)c->bytes / 1e6;
    size_t i, done;
    int r;
    for (i = 0; i < c->n; i++) ids[i] = i;
    for (r = 0; r < 9; r++) {
        double t0;
        minlsh_index *ix = NULL;
        t0 = wall_now();
        check(minlsh_family_sign_batch(fam, g_sh, (const void *const *)c->text, c->len, c->n, 1,
                                       sigs, c->n * 128, NULL, NULL),
              "sign_batch");
        t0 = wall_now() - t0;
        if (t0 < t1) t1 = t0;
        t0 = wall_now();
        check(minlsh_family_sign_batch(fam, g_sh, (const void *const *)c->text, c->len, c->n, 0,
                                       sigs, c->n * 128, NULL, NULL),
              "sign_batch");
        t0 = wall_now() - t0;
        if (t0 < tn) tn = t0;
        check(minlsh_index_new(&ix, fam, 0, 9, 13, NULL), "index");
        t0 = wall_now();
        check(minlsh_index_insert_many(ix, ids, sigs, c->n, 128, &done), "insert");
        t0 = wall_now() - t0;
        if (t0 < ti) ti = t0;
        minlsh_index_free(ix);
    }
    sm->threads_over_one = t1 / tn;
    sm->ns_per_shingle = (t1 + ti) / (double)shingles * 1e9;
    printf("\n== End to end: shingle + sign (minlsh_family_sign_batch) + insert (b = 9, r = 13) ==\n");
    printf("  %zu documents, %.1f MB, %.0f shingles; wall time, best of 9 (runs interleaved)\n",
           c->n, mb,
           (double)shingles);
    printf("  %-28s %8s %10s %12s\n", "", "seconds", "MB/s", "documents/s");
    printf("  %-28s %8.3f %10.2f %12.0f\n", "sign, 1 thread", t1, mb / t1, (double)c->n / t1);
    printf("  %-28s %8.3f %10.2f %12.0f\n", "sign, all threads", tn, mb / tn, (double)c->n / tn);
    printf("  %-28s %8.3f %10.2f %12.0f\n", "insert (one writer)", ti, mb / ti, (double)c->n / ti);
    printf("  %-28s %8.3f %10.2f %12.0f\n", "end to end, 1 thread", t1 + ti, mb / (t1 + ti),
           (double)c->n / (t1 + ti));
    printf("  %-28s %8.3f %10.2f %12.0f\n", "end to end, all threads", tn + ti, mb / (tn + ti),
           (double)c->n / (tn + ti));
    printf("  signing, %u threads over 1: %.2fx; %.1f ns per shingle end to end (1 thread)\n", nt,
           sm->threads_over_one, sm->ns_per_shingle);
    printf("  pipeline at all threads reads text at %.2f%% of the machine's memory-read rate "
           "(%.0f MB/s)\n",
           100.0 * mb / (tn + ti) / mem_all, mem_all);
    free(sigs);
    free(ids);
}

/* The band index at n documents of random (distinct) signatures. */
typedef struct index_result {
    double ins, ins_many, q, q_many, q_new, steady, rm, band_bytes, other_bytes, total;
} index_result;

static void bench_index_at(size_t n, const minlsh_family *fam, index_result *res) {
    const uint32_t K = 128, B = 9, R = 13;
    uint32_t *sigs = (uint32_t *)xmalloc(n * K * sizeof *sigs);
    uint32_t *qs = (uint32_t *)xmalloc(n * K * sizeof *qs);
    uint64_t *ids = (uint64_t *)xmalloc(n * sizeof *ids), *out = (uint64_t *)xmalloc(2 * n * 8);
    double *sim = (double *)xmalloc(2 * n * sizeof *sim);
    size_t *off = (size_t *)xmalloc((n + 1) * sizeof *off), i, got;
    minlsh__lsh_memory mem;
    int r;
    for (i = 0; i < n * K; i++) sigs[i] = (uint32_t)rnd();
    for (i = 0; i < n; i++) {
        ids[i] = corpus_mix(i);
        memcpy(qs + i * K, sigs + ((i * 7919) % n) * K, K * sizeof *qs);
    }
    memset(res, 0, sizeof *res);
    for (r = 0; r < 3; r++) {
        minlsh_index *ix = NULL;
        double t0;
        uint64_t one[8];
        double s1[8];
        check(minlsh_index_new(&ix, fam, 0, B, R, NULL), "index");
        t0 = cpu_now();
        for (i = 0; i < n; i++) check(minlsh_index_insert(ix, ids[i], sigs + i * K, K), "insert");
        t0 = cpu_now() - t0;
        if ((double)n / t0 > res->ins) res->ins = (double)n / t0;
        minlsh__lsh_index_memory(ix, &mem);
        t0 = cpu_now();
        for (i = 0; i < n; i++) {
            check(minlsh_index_query(ix, qs + i * K, K, one, s1, 8, &got), "query");
            if (got != 1) check(MINLSH_E_STATE, "query result");
        }
        t0 = cpu_now() - t0;
        if ((double)n / t0 > res->q) res->q = (double)n / t0;
        t0 = cpu_now();
        check(minlsh_index_query_many(ix, qs, n, K, off, out, sim, 2 * n, &got), "query_many");
        t0 = cpu_now() - t0;
        if (got != n) check(MINLSH_E_STATE, "query_many result");
        if ((double)n / t0 > res->q_many) res->q_many = (double)n / t0;
        /* New signatures: no candidates (the table lookups alone). */
        {
            uint32_t q[128];
            size_t m = n < 200000 ? n : 200000, v;
            double tq = 0.0;
            for (i = 0; i < m; i++) {
                for (v = 0; v < K; v++) q[v] = (uint32_t)rnd();
                t0 = cpu_now();
                check(minlsh_index_query(ix, q, K, one, s1, 8, &got), "query");
                tq += cpu_now() - t0;
            }
            if ((double)m / tq > res->q_new) res->q_new = (double)m / tq;
        }
        t0 = cpu_now();
        for (i = 0; i < n; i++) check(minlsh_index_remove(ix, ids[i]), "remove");
        t0 = cpu_now() - t0;
        if ((double)n / t0 > res->rm) res->rm = (double)n / t0;
        /* Steady state: the memory is there already. */
        t0 = cpu_now();
        check(minlsh_index_insert_many(ix, ids, sigs, n, K, &got), "insert_many");
        t0 = cpu_now() - t0;
        if ((double)n / t0 > res->steady) res->steady = (double)n / t0;
        minlsh_index_free(ix);
        ix = NULL;
        check(minlsh_index_new(&ix, fam, 0, B, R, NULL), "index");
        t0 = cpu_now();
        check(minlsh_index_insert_many(ix, ids, sigs, n, K, &got), "insert_many");
        t0 = cpu_now() - t0;
        if ((double)n / t0 > res->ins_many) res->ins_many = (double)n / t0;
        minlsh_index_free(ix);
    }
    res->band_bytes = (double)(mem.band_tables + mem.band_links) / (double)n / B;
    res->other_bytes = (double)mem.other / (double)n;
    res->total = (double)(mem.band_tables + mem.band_links + mem.other) / (double)n / B;
    free(sigs);
    free(qs);
    free(ids);
    free(out);
    free(sim);
    free(off);
}

static void bench_index(const minlsh_family *fam, int quick, summary *sm) {
    static const size_t sizes[] = {100000, 1000000};
    index_result res[2];
    size_t s, ns = quick ? 1 : 2;
    for (s = 0; s < ns; s++) bench_index_at(quick ? 20000 : sizes[s], fam, &res[s]);
    printf("\n== Band index: k = 128, b = 9, r = 13, distinct random signatures ==\n");
    printf("  rates are documents per second of one core's CPU time (best of 3); one insert\n"
           "  is one document with all 9 of its bands, one query one signature\n");
    printf("  %-44s", "");
    for (s = 0; s < ns; s++) printf(" %12zu", quick ? (size_t)20000 : sizes[s]);
    printf("\n");
#define ROW(label, field, scale, fmt)                                                      \
    do {                                                                                   \
        printf("  %-44s", label);                                                          \
        for (s = 0; s < ns; s++) printf(" " fmt, res[s].field * (scale));                  \
        printf("\n");                                                                      \
    } while (0)
    ROW("insert, new index (growth included) M/s", ins, 1e-6, "%12.2f");
    ROW("insert_many, new index M/s", ins_many, 1e-6, "%12.2f");
    ROW("insert_many, memory already there M/s", steady, 1e-6, "%12.2f");
    ROW("remove M/s", rm, 1e-6, "%12.2f");
    ROW("query, stored signature (1 result) M/s", q, 1e-6, "%12.2f");
    ROW("query_many, stored signatures M/s", q_many, 1e-6, "%12.2f");
    ROW("query, new signature (0 results) M/s", q_new, 1e-6, "%12.2f");
    ROW("bytes per (document, band): band structures", band_bytes, 1.0, "%12.2f");
    ROW("bytes per document: everything else", other_bytes, 1.0, "%12.1f");
    ROW("bytes per (document, band): all but signatures", total, 1.0, "%12.2f");
#undef ROW
    printf("  (band structures = the 9 bucket tables and the chain nodes of shared buckets;\n"
           "  everything else = ids, slots, the id and signature tables, group headers;\n"
           "  signatures: 512 B/doc)\n");
    /* The headline figures: the largest size measured, fastest call. */
    s = ns - 1;
    sm->bytes_per_doc_band = res[s].band_bytes;
    sm->inserts = res[s].ins_many > res[s].ins ? res[s].ins_many : res[s].ins;
    sm->queries = res[s].q_many > res[s].q ? res[s].q_many : res[s].q;
}

/* Signatures with planted near-duplicates, generated directly: document i
 * is random, except every tenth, which copies an earlier one and changes
 * each value with probability 0.1 (estimated Jaccard about 0.9). */
static void planted_signatures(uint32_t *sigs, size_t n, uint32_t k) {
    size_t i, v;
    for (i = 0; i < n; i++) {
        uint32_t *s = sigs + i * k;
        if (i % 10 == 9) {
            memcpy(s, sigs + (i - 1 - (i / 10) % 5) * k, k * sizeof *s);
            for (v = 0; v < k; v++)
                if (rnd() % 10 == 0) s[v] = (uint32_t)rnd();
        } else {
            for (v = 0; v < k; v++) s[v] = (uint32_t)rnd();
        }
    }
}

static void bench_allpairs(const minlsh_family *fam, int quick, summary *sm) {
    static const size_t sizes[] = {10000, 100000, 1000000};
    double t[3], sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t s, ns = quick ? 2 : 3, np[3], nc[3];
    printf("\n== All pairs, sort-based (minlsh_pairs_from_matrix), k = 128, b = 9, r = 13 ==\n");
    printf("  signatures generated directly (10%% planted near-duplicates at ~0.9), not from\n"
           "  text: 1M texts would take minutes to sign; this measures the pairs stage alone\n");
    printf("  %10s %10s %12s %12s %14s\n", "documents", "seconds", "pairs", "clusters",
           "ns/document");
    for (s = 0; s < ns; s++) {
        size_t n = sizes[s], i;
        uint32_t *sigs = (uint32_t *)xmalloc(n * 128 * sizeof *sigs);
        minlsh_sigmatrix *mx = NULL;
        double best = 1e30;
        int r, reps = 3;
        planted_signatures(sigs, n, 128);
        check(minlsh_sigmatrix_new(&mx, fam, 0, NULL), "matrix");
        for (i = 0; i < n; i++) check(minlsh_sigmatrix_append(mx, sigs + i * 128, 128, NULL), "append");
        free(sigs);
        for (r = 0; r < reps; r++) {
            minlsh_pairs *p = NULL;
            minlsh_clusters *c = NULL;
            double t0 = cpu_now();
            check(minlsh_pairs_from_matrix(&p, mx, 9, 13, 0.0, 0, NULL), "pairs");
            t0 = cpu_now() - t0;
            if (t0 < best) best = t0;
            np[s] = minlsh_pairs_count(p);
            minlsh_pairs_free(p);
            check(minlsh_clusters_from_matrix(&c, mx, 9, 13, 0.8, NULL), "clusters");
            nc[s] = minlsh_clusters_count(c);
            minlsh_clusters_free(c);
        }
        t[s] = best;
        printf("  %10zu %10.3f %12zu %12zu %14.0f\n", n, best, np[s], nc[s],
               best / (double)n * 1e9);
        minlsh_sigmatrix_free(mx);
    }
    for (s = 0; s < ns; s++) {
        double x = log((double)sizes[s]), y = log(t[s]);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    sm->exponent = ((double)ns * sxy - sx * sy) / ((double)ns * sxx - sx * sx);
    printf("  growth exponent (least squares on log time vs log n): %.3f\n", sm->exponent);
}

/* The planner at the largest k, every mode: the brute-force modes search
 * every (b, r) with b*r <= k, so this is their worst case. */
static void bench_plan(void) {
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    const char *names[] = {"", "rule", "balanced", "recall"};
    uint32_t mode, b = 0, r = 0;
    printf("\n== Planner at k = 1024 ==\n");
    po.k = 1024;
    for (mode = MINLSH_PLAN_RULE; mode <= MINLSH_PLAN_RECALL; mode++) {
        double t0 = wall_now();
        po.mode = mode;
        check(minlsh_plan_compute(&b, &r, NULL, NULL, &po), "plan");
        printf("  %-8s (%u, %u) in %.3f ms\n", names[mode], b, r, (wall_now() - t0) * 1e3);
    }
}

/* ---- minlsh dedup on short documents: fresh processes ------------------------ */

/* Starts argv (argv[0] a path) with standard input from fd_in and standard
 * output to fd_out (-1: inherited) and, if tmpdir is not NULL, TMPDIR set
 * to it. Descriptors the caller opened are expected to be close-on-exec. */
static pid_t start(char *const argv[], int fd_in, int fd_out, const char *tmpdir) {
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        if (fd_in >= 0 && dup2(fd_in, 0) < 0) _exit(126);
        if (fd_out >= 0 && dup2(fd_out, 1) < 0) _exit(126);
        if (tmpdir != NULL && setenv("TMPDIR", tmpdir, 1) != 0) _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Runs argv with standard input from the file `in` and standard output to
 * the file `out` (NULL: inherited): its wall time and its own peak RSS
 * (wait4 gives the child's, not the largest over all children). 0 if it
 * exited with status 0. */
static int spawn_ru(char *const argv[], const char *in, const char *out, double *wall,
                    struct rusage *usage);

static int spawn(char *const argv[], const char *in, const char *out, double *wall,
                 double *rss_mib) {
    struct rusage ru;
    int rc = spawn_ru(argv, in, out, wall, &ru);
    *rss_mib = (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
    return rc;
}

/* spawn, with the child's whole resource usage (CPU times, peak RSS). */
static int spawn_ru(char *const argv[], const char *in, const char *out, double *wall,
                    struct rusage *usage) {
    struct rusage ru;
    int st = 0, fi = -1, fo = -1;
    double t0 = wall_now();
    pid_t pid;
    if (in != NULL && (fi = open(in, O_RDONLY | O_CLOEXEC)) < 0) return -1;
    if (out != NULL && (fo = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
        if (fi >= 0) close(fi);
        return -1;
    }
    pid = start(argv, fi, fo, NULL);
    if (fi >= 0) close(fi);
    if (fo >= 0) close(fo);
    memset(usage, 0, sizeof *usage);
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid) return -1;
    *wall = wall_now() - t0;
    *usage = ru;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* A new empty file under $TMPDIR (or /tmp): its path in buf. */
static int temp_file(char *buf, size_t cap, const char *what) {
    const char *dir = getenv("TMPDIR");
    int fd;
    if (dir == NULL || dir[0] == '\0') dir = "/tmp";
    if ((size_t)snprintf(buf, cap, "%s/minlsh-bench-%s-XXXXXX", dir, what) >= cap) return -1;
    fd = mkstemp(buf);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

/* `minlsh dedup --jsonl -q --output decisions` as a user runs it: a fresh
 * process per run, on one file of short documents generated once by
 * bench/gen_docs, at --threads 1 and 2 (interleaved, best of 3 wall times;
 * the peak RSS is the largest of the runs), output to /dev/null. Then one
 * more run at 2 threads with --format tsv, whose decisions give the recall
 * of the planted pairs (bench/recall.h). */
static void bench_dedup(const options *o, summary *sm) {
    uint64_t n = o->dedup_docs ? o->dedup_docs : o->quick ? 100000 : 1000000;
    char docs[512], truth[512], dec[512], nbuf[32], seed[32];
    double t[2] = {1e30, 1e30}, rss[2] = {0, 0}, bytes = 0;
    const int reps = 3;
    recall_check rc;
    FILE *f;
    int r, k, ok = 1;
    sm->have_dedup = 0;
    printf("\n== minlsh dedup on short documents (fresh processes, best of %d, runs interleaved) "
           "==\n", reps);
    if (access(o->minlsh, X_OK) != 0 || access(o->gen_docs, X_OK) != 0) {
        printf("  skipped: %s or %s is not there (make program %s)\n", o->minlsh, o->gen_docs,
               "build/bench/gen_docs");
        return;
    }
    if (temp_file(docs, sizeof docs, "docs") != 0 || temp_file(truth, sizeof truth, "truth") != 0 ||
        temp_file(dec, sizeof dec, "decisions") != 0) {
        printf("  skipped: cannot make temporary files\n");
        return;
    }
    snprintf(nbuf, sizeof nbuf, "%llu", (unsigned long long)n);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    {
        char *gen[] = {(char *)o->gen_docs, nbuf, "--seed", seed, "--truth", truth, NULL};
        double w, m;
        if (spawn(gen, NULL, docs, &w, &m) != 0) ok = 0;
        f = fopen(docs, "rb");
        if (f != NULL && fseek(f, 0, SEEK_END) == 0) bytes = (double)ftell(f);
        if (f != NULL) fclose(f);
    }
    printf("  %llu documents of 30-80 words (bench/gen_docs, %.0f MB), 5%% near-duplicates and "
           "1%% exact copies planted\n",
           (unsigned long long)n, bytes / 1e6);
    printf("  minlsh dedup --jsonl -q --output decisions --threads T FILE > /dev/null\n");
    for (r = 0; r < reps && ok; r++) {
        for (k = 0; k < 2 && ok; k++) {
            char *cmd[] = {(char *)o->minlsh, "dedup", "--jsonl", "-q", "--output", "decisions",
                           "--threads", k == 0 ? "1" : "2", docs, NULL};
            double w, m;
            if (spawn(cmd, NULL, "/dev/null", &w, &m) != 0) ok = 0;
            if (w < t[k]) t[k] = w;
            if (m > rss[k]) rss[k] = m;
        }
    }
    if (ok) {
        char *cmd[] = {(char *)o->minlsh, "dedup", "--jsonl", "-q", "--output", "decisions",
                       "--format", "tsv", "--threads", "2", docs, NULL};
        double w, m;
        if (spawn(cmd, NULL, dec, &w, &m) != 0) ok = 0;
    }
    if (ok && recall_open(&rc, truth, 0.8) == 0) {
        char line[4096];
        f = fopen(dec, "r");
        while (f != NULL && fgets(line, sizeof line, f) != NULL)
            if (recall_line(&rc, line) != 0) break;
        if (f == NULL || rc.error[0] != '\0' || recall_finish(&rc) != 0) ok = 0;
        if (f != NULL) fclose(f);
        if (!ok) printf("  recall: %s\n", rc.error);
        recall_close(&rc);
    } else if (ok) {
        printf("  recall: %s\n", rc.error);
        ok = 0;
    }
    remove(docs);
    remove(truth);
    remove(dec);
    if (!ok) {
        printf("  failed: a run did not succeed (see above)\n");
        return;
    }
    printf("  %-10s %10s %12s %14s\n", "threads", "seconds", "docs/s", "peak RSS MiB");
    for (k = 0; k < 2; k++)
        printf("  %-10d %10.3f %12.0f %14.0f\n", k + 1, t[k], (double)n / t[k], rss[k]);
    printf("  2 threads over 1 (speed-up): %.2fx\n", t[0] / t[1]);
    printf("  planted pairs with Jaccard >= 0.8 in one cluster: %llu of %llu (recall %.4f);\n"
           "  below 0.8, joined through others: %llu of %llu; exact copies: %llu of %llu\n",
           (unsigned long long)rc.at_found, (unsigned long long)rc.at, recall_value(&rc),
           (unsigned long long)rc.below_found, (unsigned long long)rc.below,
           (unsigned long long)rc.exact_found, (unsigned long long)rc.exact_n);
    sm->have_dedup = 1;
    sm->dedup_docs = n;
    sm->dedup_t1 = t[0];
    sm->dedup_t2 = t[1];
    sm->dedup_rss1 = rss[0];
    sm->dedup_rss2 = rss[1];
    sm->dedup_recall = recall_value(&rc);
}

static void print_dedup_summary(const summary *sm) {
    if (!sm->have_dedup) {
        printf("dedup_threads2_over_1: n/a\n");
        return;
    }
    printf("dedup_threads2_over_1: %.2f\n", sm->dedup_t1 / sm->dedup_t2);
    printf("dedup_documents: %llu\n", (unsigned long long)sm->dedup_docs);
    printf("dedup_seconds_threads1: %.3f\n", sm->dedup_t1);
    printf("dedup_seconds_threads2: %.3f\n", sm->dedup_t2);
    printf("dedup_peak_rss_mib_threads1: %.0f\n", sm->dedup_rss1);
    printf("dedup_peak_rss_mib_threads2: %.0f\n", sm->dedup_rss2);
    printf("dedup_recall_planted: %.4f\n", sm->dedup_recall);
}

static int run_all(const options *o) {
    summary sm;
    corpus c;
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    uint64_t shingles = 0;
    unsigned nt = online_cpus();
    double mem1, memn, t0 = wall_now();
    size_t ndocs = o->quick ? 2000 : 20000;
    memset(&sm, 0, sizeof sm);
    check(minlsh_family_new(&fam, 128, 1, NULL), "family");
    check(minlsh_shingler_new(&sh, NULL, NULL), "shingler");
    g_sh = sh;
    printf("minlsh %s benchmark: %u online CPUs, MinHash kernel %s, vocabulary %s (%u words), "
           "seed %llu\n",
           minlsh_version_string(), nt, minlsh_simd_kernel_name(), vocab.source, vocab.n,
           (unsigned long long)o->seed);
    bench_memory(&mem1, &memn, nt);
    corpus_make(&c, o->seed, 0, ndocs, 3000);
    bench_shingling(&c, &shingles);
    bench_minhash(&sm);
    bench_levels(&c);
    bench_schemes(&c, o->seed, &sm);
    bench_end_to_end(&c, fam, shingles, memn, nt, &sm);
    corpus_free(&c);
    bench_index(fam, o->quick, &sm);
    bench_allpairs(fam, o->quick, &sm);
    bench_plan();
    bench_dedup(o, &sm);
    printf("\n(total %.0f s; peak RSS %.0f MiB)\n", wall_now() - t0, peak_rss_mib());
    printf("\n== Summary ==\n");
    printf("ns_per_shingle_end_to_end: %.2f\n", sm.ns_per_shingle);
    if (sm.have_simd) printf("minhash_simd_over_portable: %.2f\n", sm.simd_over_portable);
    else printf("minhash_simd_over_portable: n/a\n");
    printf("signatures_threads_over_one: %.2f\n", sm.threads_over_one);
    printf("oph_signing_over_classic: %.2f\n", sm.oph_signing);
    printf("oph_end_to_end_over_classic: %.2f\n", sm.oph_end_to_end);
    printf("oph_end_to_end_short_docs_over_classic: %.2f\n", sm.oph_end_to_end_short);
    printf("index_bytes_per_doc_band: %.2f\n", sm.bytes_per_doc_band);
    printf("index_inserts_per_sec_per_core: %.0f\n", sm.inserts);
    printf("index_queries_per_sec_per_core: %.0f\n", sm.queries);
    printf("allpairs_growth_exponent: %.3f\n", sm.exponent);
    print_dedup_summary(&sm);
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
    return 0;
}

/* ---- bench index: the band index section alone ------------------------------ */

static int run_index(const options *o) {
    summary sm;
    minlsh_family *fam = NULL;
    memset(&sm, 0, sizeof sm);
    check(minlsh_family_new(&fam, 128, 1, NULL), "family");
    bench_index(fam, o->quick, &sm);
    printf("\nindex_bytes_per_doc_band: %.2f\n", sm.bytes_per_doc_band);
    printf("index_inserts_per_sec_per_core: %.0f\n", sm.inserts);
    printf("index_queries_per_sec_per_core: %.0f\n", sm.queries);
    minlsh_family_free(fam);
    return 0;
}

/* ---- bench dedup: the dedup section alone ------------------------------------ */

static int run_dedup(const options *o) {
    summary sm;
    memset(&sm, 0, sizeof sm);
    bench_dedup(o, &sm);
    printf("\n");
    print_dedup_summary(&sm);
    return sm.have_dedup ? 0 : 1;
}

/* ---- bench threads: one corpus at every thread count -------------------------- */

static double tv_seconds(const struct timeval *tv) {
    return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6;
}

/* A 64-bit FNV-1a of a whole file (0 if it cannot be read): runs at every
 * thread count must write the same decisions. */
static uint64_t file_fnv(const char *path) {
    uint64_t h = UINT64_C(1469598103934665603);
    unsigned char buf[1 << 16];
    size_t n, i;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (i = 0; i < n; i++) h = (h ^ buf[i]) * UINT64_C(1099511628211);
    fclose(f);
    return h;
}

/* `minlsh dedup --jsonl -q --output decisions --threads T` as fresh
 * processes on one generated corpus (default 5M documents, --dedup-docs),
 * for each T of --threads-list (default "1 2 4 8 16"), best wall time of
 * --reps runs (default 1) each, interleaved: wall, user and system CPU,
 * peak RSS and speed-up over the first count; every run's decisions must
 * be the same bytes. For many-core machines (make bench-threads). */
static int run_threads(const options *o) {
    uint64_t n = o->dedup_docs ? o->dedup_docs : o->quick ? 200000 : 5000000;
    const char *list = o->threads_list ? o->threads_list : "1 2 4 8 16";
    char docs[512], dec[512], nbuf[32], seed[32], tbuf[16][16];
    double wall[16], user[16], sys[16], rss[16], bytes = 0;
    uint64_t sum0 = 0;
    int nt = 0, r, k, ok = 1, reps = o->reps > 0 ? o->reps : 1;
    const char *p = list;
    while (*p != '\0' && nt < 16) {
        char *end;
        unsigned long t = strtoul(p, &end, 10);
        if (end == p) {
            p++;
            continue;
        }
        snprintf(tbuf[nt], sizeof tbuf[nt], "%lu", t);
        wall[nt] = 1e30;
        user[nt] = sys[nt] = rss[nt] = 0;
        nt++;
        p = end;
    }
    if (nt == 0 || access(o->minlsh, X_OK) != 0 || access(o->gen_docs, X_OK) != 0 ||
        temp_file(docs, sizeof docs, "docs") != 0 || temp_file(dec, sizeof dec, "dec") != 0) {
        printf("bench threads: needs %s, %s and a thread list\n", o->minlsh, o->gen_docs);
        return 1;
    }
    snprintf(nbuf, sizeof nbuf, "%llu", (unsigned long long)n);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    {
        char *gen[] = {(char *)o->gen_docs, nbuf, "--seed", seed, NULL};
        double w, m;
        FILE *f;
        if (spawn(gen, NULL, docs, &w, &m) != 0) ok = 0;
        f = fopen(docs, "rb");
        if (f != NULL && fseek(f, 0, SEEK_END) == 0) bytes = (double)ftell(f);
        if (f != NULL) fclose(f);
    }
    printf("== minlsh dedup at each thread count (fresh processes, best of %d, interleaved) ==\n"
           "  %llu documents (bench/gen_docs, %.0f MB), %u online CPUs\n"
           "  minlsh dedup --jsonl -q --output decisions --threads T FILE > decisions\n",
           reps, (unsigned long long)n, bytes / 1e6, online_cpus());
    for (r = 0; r < reps && ok; r++) {
        for (k = 0; k < nt && ok; k++) {
            char *cmd[] = {(char *)o->minlsh, "dedup", "--jsonl", "-q", "--output", "decisions",
                           "--threads", tbuf[k], docs, NULL};
            struct rusage ru;
            double w;
            uint64_t h;
            if (spawn_ru(cmd, NULL, dec, &w, &ru) != 0) {
                printf("  --threads %s failed\n", tbuf[k]);
                ok = 0;
                break;
            }
            h = file_fnv(dec);
            if (r == 0 && k == 0) sum0 = h;
            else if (h != sum0) {
                printf("  --threads %s wrote other decisions than --threads %s\n", tbuf[k],
                       tbuf[0]);
                ok = 0;
            }
            if (w < wall[k]) {
                wall[k] = w;
                user[k] = tv_seconds(&ru.ru_utime);
                sys[k] = tv_seconds(&ru.ru_stime);
            }
            if ((double)ru.ru_maxrss / 1024.0 > rss[k]) rss[k] = (double)ru.ru_maxrss / 1024.0;
        }
    }
    remove(docs);
    remove(dec);
    if (!ok) return 1;
    printf("  %-8s %9s %9s %9s %12s %9s %9s\n", "threads", "wall s", "user s", "sys s",
           "docs/s", "speed-up", "RSS MiB");
    for (k = 0; k < nt; k++)
        printf("  %-8s %9.2f %9.2f %9.2f %12.0f %8.2fx %9.0f\n", tbuf[k], wall[k], user[k],
               sys[k], (double)n / wall[k], wall[0] / wall[k], rss[k]);
    printf("\n");
    for (k = 1; k < nt; k++)
        printf("dedup_threads%s_over_%s: %.2f\n", tbuf[k], tbuf[0], wall[0] / wall[k]);
    printf("dedup_decisions_identical: yes\n");
    return 0;
}

/* ---- bench components: one cluster against no cluster ------------------------ */

/* In components mode a candidate pair inside one component is not
 * verified, so a corpus that is one big cluster (every pair a candidate)
 * should cost about what a corpus without any does. Both corpora are
 * written by bench/gen_near.py into a temporary folder; each row runs
 * `minlsh dedup -q --output decisions DIR > /dev/null` as a fresh process,
 * the rows interleaved, best of 3 wall times, largest peak RSS. */
static int run_components(const options *o) {
    static const char *const kinds[2] = {"near", "unrelated"};
    static const char *const budgets[3] = {NULL, "8M", "1M"};
    char dir[512], sub[2][600], ndocs[32], seed[32];
    double t[2][3], rss[2][3];
    unsigned docs = o->quick ? 1000 : 5000;
    int k, b, r, ok = 1;
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
    snprintf(dir, sizeof dir, "%s/minlsh-bench-components-XXXXXX", tmp);
    if (access(o->minlsh, X_OK) != 0 || mkdtemp(dir) == NULL) {
        printf("skipped: %s is not there (make program) or no temporary folder\n", o->minlsh);
        return 1;
    }
    snprintf(ndocs, sizeof ndocs, "%u", docs);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    for (k = 0; k < 2 && ok; k++) {
        char *gen[] = {"/usr/bin/python3", (char *)o->gen_near, "--kind", (char *)kinds[k],
                       "--docs", ndocs, "--words", "300", "--seed", seed, "--out", sub[k], NULL};
        double w, m;
        snprintf(sub[k], sizeof sub[k], "%s/%s", dir, kinds[k]);
        if (spawn(gen, NULL, NULL, &w, &m) != 0) {
            printf("failed: /usr/bin/python3 %s did not write %s\n", o->gen_near, sub[k]);
            ok = 0;
        }
    }
    printf("== minlsh dedup, components mode: %u near-identical 300-word files (one cluster) "
           "against %u unrelated ones ==\n", docs, docs);
    printf("  minlsh dedup -q --output decisions [--memory M] DIR > /dev/null; fresh processes, "
           "interleaved, best of 3\n");
    for (k = 0; k < 2; k++)
        for (b = 0; b < 3; b++) {
            t[k][b] = 1e30;
            rss[k][b] = 0;
        }
    for (r = 0; r < 3 && ok; r++)
        for (b = 0; b < 3 && ok; b++)
            for (k = 0; k < 2 && ok; k++) {
                char *cmd[] = {(char *)o->minlsh, "dedup", "-q", "--output", "decisions", sub[k],
                               NULL, NULL, NULL};
                double w, m;
                if (budgets[b] != NULL) {
                    cmd[5] = "--memory";
                    cmd[6] = (char *)budgets[b];
                    cmd[7] = sub[k];
                }
                if (spawn(cmd, NULL, "/dev/null", &w, &m) != 0) {
                    printf("failed: minlsh dedup on %s\n", sub[k]);
                    ok = 0;
                }
                if (w < t[k][b]) t[k][b] = w;
                if (m > rss[k][b]) rss[k][b] = m;
            }
    {
        char *rm[] = {"/bin/rm", "-rf", dir, NULL};
        double w, m;
        (void)spawn(rm, NULL, NULL, &w, &m);
    }
    if (!ok) return 1;
    printf("  %-10s %-10s %10s %14s\n", "corpus", "--memory", "seconds", "peak RSS MiB");
    for (b = 0; b < 3; b++)
        for (k = 0; k < 2; k++)
            printf("  %-10s %-10s %10.3f %14.1f\n", kinds[k], budgets[b] ? budgets[b] : "default",
                   t[k][b], rss[k][b]);
    printf("\ncomponents_near_over_unrelated: %.2f\n", t[0][0] / t[1][0]);
    printf("components_near_seconds: %.3f\n", t[0][0]);
    printf("components_unrelated_seconds: %.3f\n", t[1][0]);
    printf("components_near_peak_rss_mib: %.1f\n", rss[0][0]);
    printf("components_unrelated_peak_rss_mib: %.1f\n", rss[1][0]);
    printf("components_near_peak_rss_mib_memory_8M: %.1f\n", rss[0][1]);
    printf("components_near_peak_rss_mib_memory_1M: %.1f\n", rss[0][2]);
    return 0;
}

/* ---- bench huge: generated documents streamed through minlsh dedup ------------ */

/* Whether `minlsh dedup --help` mentions opt. */
static int help_has(const char *minlsh, const char *opt) {
    char *cmd[] = {(char *)minlsh, "dedup", "--help", NULL};
    char buf[16384];
    size_t len = 0;
    ssize_t got;
    int fd[2], st;
    pid_t pid;
    if (pipe(fd) != 0) return 0;
    fcntl(fd[0], F_SETFD, FD_CLOEXEC);
    fcntl(fd[1], F_SETFD, FD_CLOEXEC);
    pid = start(cmd, -1, fd[1], NULL);
    close(fd[1]);
    while (len + 1 < sizeof buf && (got = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)got;
    close(fd[0]);
    if (pid > 0) waitpid(pid, &st, 0);
    buf[len] = '\0';
    return strstr(buf, opt) != NULL;
}

/* Bytes on disk under path (files and directories, recursively). */
/* Bytes in use on the file system that holds path. minlsh's temporary files
 * are unlinked as soon as they are made, so they are seen here, not in the
 * directory: the spill is the rise of this over the run. */
static uint64_t disk_bytes(const char *path) {
    struct statvfs sv;
    if (statvfs(path, &sv) != 0) return 0;
    return (uint64_t)(sv.f_blocks - sv.f_bfree) * sv.f_frsize;
}

typedef struct huge_result {
    uint64_t n;
    double wall, rss_mib, disk_mib, recall;
    int have_disk, ok;
    recall_check rc;
} huge_result;

/* gen_docs N | minlsh dedup --jsonl -q --output decisions --format tsv -,
 * the decisions read here as they come and checked against the planted
 * pairs (bench/recall.h, constant memory). The truth file is opened at
 * the first decision, after gen_docs has exited: minlsh decides nothing
 * before it has read all its input, so waiting for gen_docs then cannot
 * block the pipeline. With --memory in `minlsh dedup --help`, the run gets
 * --memory 4G (and --tmpdir if it has one, else TMPDIR) pointing at a
 * fresh directory; the space in use on its file system is sampled every
 * 0.2 s (other writers there would add to the figure). */
static void huge_run(const options *o, uint64_t n, int spill, int has_tmpdir, huge_result *hr) {
    char truth[512], dir[512], nbuf[32], seed[32], buf[1 << 16];
    char *gen[] = {(char *)o->gen_docs, nbuf, "--seed", seed, "--truth", truth, NULL};
    char *cmd[16];
    const char *tmp = getenv("TMPDIR");
    int a[2], b[2], k = 0, st, gen_done = 0, opened = 0;
    size_t len = 0;
    pid_t pg, pm;
    struct rusage ru;
    double t0;
    uint64_t peak = 0, base = 0;
    memset(hr, 0, sizeof *hr);
    hr->n = n;
    hr->have_disk = spill;
    if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
    snprintf(nbuf, sizeof nbuf, "%llu", (unsigned long long)n);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    snprintf(dir, sizeof dir, "%s/minlsh-bench-spill-XXXXXX", tmp);
    if (temp_file(truth, sizeof truth, "truth") != 0 || (spill && mkdtemp(dir) == NULL)) {
        printf("  cannot make temporary files\n");
        return;
    }
    cmd[k++] = (char *)o->minlsh;
    cmd[k++] = "dedup";
    cmd[k++] = "--jsonl";
    cmd[k++] = "-q";
    cmd[k++] = "--output";
    cmd[k++] = "decisions";
    cmd[k++] = "--format";
    cmd[k++] = "tsv";
    if (spill) {
        cmd[k++] = "--memory";
        cmd[k++] = "4G";
        if (has_tmpdir) {
            cmd[k++] = "--tmpdir";
            cmd[k++] = dir;
        }
    }
    cmd[k++] = "-";
    cmd[k] = NULL;
    if (pipe(a) != 0 || pipe(b) != 0) {
        printf("  cannot make pipes\n");
        return;
    }
    for (k = 0; k < 2; k++) {
        fcntl(a[k], F_SETFD, FD_CLOEXEC);
        fcntl(b[k], F_SETFD, FD_CLOEXEC);
    }
    if (spill) base = peak = disk_bytes(dir);
    t0 = wall_now();
    pg = start(gen, -1, a[1], NULL);
    pm = start(cmd, a[0], b[1], spill ? dir : NULL);
    close(a[0]);
    close(a[1]);
    close(b[1]);
    hr->ok = pg > 0 && pm > 0;
    for (;;) {
        struct pollfd pf;
        ssize_t got;
        char *p, *nl;
        pf.fd = b[0];
        pf.events = POLLIN;
        if (spill) {
            uint64_t now = disk_bytes(dir);
            if (now > peak) peak = now;
            if (poll(&pf, 1, 200) == 0) continue;
        }
        got = read(b[0], buf + len, sizeof buf - 1 - len);
        if (got <= 0) break;
        len += (size_t)got;
        buf[len] = '\0';
        if (!opened) {
            /* gen_docs has written the whole truth file before minlsh says anything */
            if (waitpid(pg, &st, 0) == pg) gen_done = 1;
            if (!gen_done || !WIFEXITED(st) || WEXITSTATUS(st) != 0) hr->ok = 0;
            if (recall_open(&hr->rc, truth, 0.8) != 0) hr->ok = 0;
            opened = 1;
        }
        for (p = buf; hr->ok && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
            *nl = '\0';
            if (recall_line(&hr->rc, p) != 0) hr->ok = 0;
        }
        if (!hr->ok) break;
        len -= (size_t)(p - buf);
        memmove(buf, p, len);
        if (len + 1 >= sizeof buf) hr->ok = 0;
    }
    close(b[0]);
    if (pm <= 0 || wait4(pm, &st, 0, &ru) != pm || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        hr->ok = 0;
    hr->wall = wall_now() - t0;
    hr->rss_mib = (double)ru.ru_maxrss / 1024.0;
    if (!gen_done && pg > 0) waitpid(pg, &st, 0);
    if (spill) {
        uint64_t now = disk_bytes(dir);
        if (now > peak) peak = now;
        hr->disk_mib = (double)(peak - base) / 1048576.0;
        rmdir(dir); /* minlsh cleans up after itself; a leftover is left to see */
    }
    if (!opened) {
        hr->ok = 0;
        snprintf(hr->rc.error, sizeof hr->rc.error, "no decisions");
    } else {
        if (hr->ok && recall_finish(&hr->rc) != 0) hr->ok = 0;
        hr->recall = recall_value(&hr->rc);
        recall_close(&hr->rc);
    }
    remove(truth);
}

static int run_huge(const options *o) {
    const char *sizes = o->sizes != NULL ? o->sizes : "1000000 10000000 100000000";
    const char *p = sizes;
    int spill = help_has(o->minlsh, "--memory"), has_tmpdir = help_has(o->minlsh, "--tmpdir");
    int ok = 1, count = 0;
    huge_result prev, cur;
    memset(&prev, 0, sizeof prev);
    if (access(o->minlsh, X_OK) != 0 || access(o->gen_docs, X_OK) != 0) {
        fprintf(stderr, "bench: %s or %s is not there\n", o->minlsh, o->gen_docs);
        return 1;
    }
    printf("minlsh %s huge benchmark: %u CPUs; per size N:\n", minlsh_version_string(),
           online_cpus());
    printf("  gen_docs N | minlsh dedup --jsonl -q --output decisions --format tsv%s -\n",
           spill ? (has_tmpdir ? " --memory 4G --tmpdir DIR" : " --memory 4G") : "");
    printf("  (short documents of 30-80 words, 5%% near-duplicates and 1%% exact copies planted;\n"
           "  the decisions are checked against the planted pairs as they come; temp disk: %s)\n\n",
           spill ? "peak size of the spill directory" : "n/a, minlsh dedup has no --memory");
    printf("  %12s %10s %12s %14s %12s %10s %9s\n", "documents", "seconds", "docs/s",
           "peak RSS MiB", "temp MiB", "recall", "exponent");
    while (*p != '\0') {
        char *end;
        unsigned long long n = strtoull(p, &end, 10);
        if (end == p) break;
        p = end;
        while (*p == ' ' || *p == ',') p++;
        huge_run(o, (uint64_t)n, spill, has_tmpdir, &cur);
        if (!cur.ok) {
            printf("  %12llu failed: %s\n", n, cur.rc.error[0] ? cur.rc.error : "minlsh or gen_docs");
            ok = 0;
            break;
        }
        printf("  %12llu %10.2f %12.0f %14.0f ", n, cur.wall, (double)n / cur.wall, cur.rss_mib);
        if (spill) printf("%12.0f", cur.disk_mib);
        else printf("%12s", "n/a");
        printf(" %10.4f", cur.recall);
        if (count > 0 && cur.n != prev.n)
            printf(" %9.3f\n", log(cur.wall / prev.wall) / log((double)cur.n / (double)prev.n));
        else printf(" %9s\n", "-");
        printf("  %12s recall: %llu of %llu planted pairs >= 0.8 in one cluster; exact copies "
               "%llu of %llu\n",
               "", (unsigned long long)cur.rc.at_found, (unsigned long long)cur.rc.at,
               (unsigned long long)cur.rc.exact_found, (unsigned long long)cur.rc.exact_n);
        prev = cur;
        count++;
    }
    return ok && count > 0 ? 0 : 1;
}

/* ---- bench crawler: build, add 1,000, query one ------------------------------- */

/* Lines [from, to) of the file src into the file dst. */
static int copy_lines(const char *src, const char *dst, uint64_t from, uint64_t to) {
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    uint64_t line = 0;
    int c, ok = in != NULL && out != NULL;
    while (ok && line < to && (c = getc(in)) != EOF) {
        if (line >= from) putc(c, out);
        if (c == '\n') line++;
    }
    if (in != NULL) fclose(in);
    if (out != NULL && fclose(out) != 0) ok = 0;
    return ok && line == to ? 0 : -1;
}

static uint64_t file_bytes(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

typedef struct crawler_result {
    double build, add, query, open, compact, rss_build, rss_add, rss_query;
    uint64_t file, journal;
} crawler_result;

/* One size: everything in a fresh directory, removed at the end. Queries
 * and opens are the best of 3 runs (each a fresh process). */
static int crawler_run(const options *o, uint64_t n, crawler_result *r) {
    char dir[512], all[600], base[600], add[600], one[600], none[600], ix[600], jr[700],
        nbuf[32], seed[32], cmdbuf[1400];
    char *gen[] = {(char *)o->gen_docs, nbuf, "--seed", seed, NULL};
    char *create[] = {(char *)o->minlsh, "index", "create", "-q", ix, NULL};
    char *addc[] = {(char *)o->minlsh, "index", "add", "-q", "--jsonl", ix, base, NULL};
    char *add1k[] = {(char *)o->minlsh, "index", "add", "-q", "--jsonl", ix, add, NULL};
    char *query[] = {(char *)o->minlsh, "index", "query", "-q", "--jsonl", ix, one, NULL};
    char *open0[] = {(char *)o->minlsh, "index", "query", "-q", "--jsonl", ix, none, NULL};
    char *compact[] = {(char *)o->minlsh, "index", "compact", "-q", ix, NULL};
    const char *tmp = getenv("TMPDIR");
    double w, rss;
    int i, ok;
    memset(r, 0, sizeof *r);
    if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
    snprintf(dir, sizeof dir, "%s/minlsh-bench-crawler-XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) return -1;
    snprintf(all, sizeof all, "%s/all.jsonl", dir);
    snprintf(base, sizeof base, "%s/base.jsonl", dir);
    snprintf(add, sizeof add, "%s/add.jsonl", dir);
    snprintf(one, sizeof one, "%s/one.jsonl", dir);
    snprintf(none, sizeof none, "%s/none.jsonl", dir);
    snprintf(ix, sizeof ix, "%s/index.mlsh", dir);
    snprintf(jr, sizeof jr, "%s.journal", ix);
    snprintf(nbuf, sizeof nbuf, "%llu", (unsigned long long)(n + 1000));
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    ok = spawn(gen, NULL, all, &w, &rss) == 0 && copy_lines(all, base, 0, n) == 0 &&
         copy_lines(all, add, n, n + 1000) == 0 && copy_lines(all, one, n / 2, n / 2 + 1) == 0 &&
         copy_lines(all, none, 0, 0) == 0;
    remove(all);
    /* Build: create and add N (what a first crawl does). */
    if (ok) ok = spawn(create, NULL, NULL, &w, &rss) == 0;
    if (ok) ok = spawn(addc, NULL, NULL, &r->build, &r->rss_build) == 0;
    r->file = file_bytes(ix);
    if (ok) ok = spawn(add1k, NULL, NULL, &r->add, &r->rss_add) == 0;
    r->journal = file_bytes(jr);
    r->query = r->open = 1e30;
    for (i = 0; ok && i < 3; i++) {
        ok = spawn(query, NULL, "/dev/null", &w, &rss) == 0;
        if (w < r->query) r->query = w;
        if (rss > r->rss_query) r->rss_query = rss;
        if (ok) ok = spawn(open0, NULL, "/dev/null", &w, &rss) == 0;
        if (w < r->open) r->open = w;
    }
    if (ok) ok = spawn(compact, NULL, NULL, &r->compact, &rss) == 0;
    snprintf(cmdbuf, sizeof cmdbuf, "rm -rf '%s'", dir);
    if (system(cmdbuf) != 0) ok = 0;
    return ok ? 0 : -1;
}

static int run_crawler(const options *o) {
    const char *p = o->sizes != NULL ? o->sizes : "1000000";
    crawler_result prev, cur;
    uint64_t prev_n = 0;
    int ok = 1;
    if (access(o->minlsh, X_OK) != 0 || access(o->gen_docs, X_OK) != 0) {
        fprintf(stderr, "bench: %s or %s is not there\n", o->minlsh, o->gen_docs);
        return 1;
    }
    printf("minlsh %s crawler benchmark: %u CPUs; per size N, fresh processes, wall time:\n",
           minlsh_version_string(), online_cpus());
    printf("  build   minlsh index create + index add --jsonl of N generated documents\n"
           "  add     index add --jsonl of 1,000 more (into INDEX.journal)\n"
           "  query   index query --jsonl of one document (best of 3)\n"
           "  open    index query of no document: the mapping, names and journal (best of 3)\n"
           "  compact index compact: the 1,000 folded into the file\n\n");
    printf("  %10s %9s %8s %8s %8s %9s %10s %10s %9s %9s\n", "documents", "build s", "add s",
           "query s", "open s", "compact s", "add/build", "query/bld", "file MiB",
           "RSS MiB");
    memset(&prev, 0, sizeof prev);
    while (*p != '\0') {
        char *end;
        unsigned long long n = strtoull(p, &end, 10);
        if (end == p) break;
        p = end;
        while (*p == ' ' || *p == ',') p++;
        if (crawler_run(o, (uint64_t)n, &cur) != 0) {
            printf("  %10llu failed\n", n);
            ok = 0;
            break;
        }
        printf("  %10llu %9.2f %8.3f %8.3f %8.3f %9.2f %10.4f %10.4f %9.0f %9.0f\n", n, cur.build,
               cur.add, cur.query, cur.open, cur.compact, cur.add / cur.build,
               cur.query / cur.build, (double)cur.file / 1048576.0, cur.rss_build);
        printf("  %10s ratios: add 1,000 = 1/%.0f of the build, query one = 1/%.0f (goals: "
               "1/20 each); journal %.0f KiB; peak RSS add %.0f MiB, query %.0f MiB; "
               "%.0f bytes of file per document\n",
               "", cur.build / cur.add, cur.build / cur.query, (double)cur.journal / 1024.0,
               cur.rss_add, cur.rss_query, (double)cur.file / (double)n);
        if (prev_n > 0 && prev_n != n)
            printf("  %10s growth exponents from %llu: build %.2f, add %.2f, query %.2f, "
                   "open %.2f\n",
                   "", (unsigned long long)prev_n,
                   log(cur.build / prev.build) / log((double)n / (double)prev_n),
                   log(cur.add / prev.add) / log((double)n / (double)prev_n),
                   log(cur.query / prev.query) / log((double)n / (double)prev_n),
                   log(cur.open / prev.open) / log((double)n / (double)prev_n));
        prev = cur;
        prev_n = n;
    }
    return ok ? 0 : 1;
}

/* ---- bench kernels: the kernel sections alone --------------------------------- */

static int run_kernels(const options *o) {
    summary sm;
    corpus c;
    minlsh_shingler *sh = NULL;
    memset(&sm, 0, sizeof sm);
    check(minlsh_shingler_new(&sh, NULL, NULL), "shingler");
    corpus_make(&c, o->seed, 0, 2000, 3000);
    bench_minhash(&sm);
    bench_levels(&c);
    g_sh = sh;
    bench_schemes(&c, o->seed, &sm);
    corpus_free(&c);
    minlsh_shingler_free(sh);
    printf("\noph_signing_over_classic: %.2f\n", sm.oph_signing);
    printf("oph_end_to_end_over_classic: %.2f\n", sm.oph_end_to_end);
    printf("oph_end_to_end_short_docs_over_classic: %.2f\n", sm.oph_end_to_end_short);
    if (sm.have_simd) printf("\nminhash_simd_over_portable: %.2f\n", sm.simd_over_portable);
    else printf("\nminhash_simd_over_portable: n/a\n");
    return 0;
}

/* ---- bench scale: 1M documents of ~3 KB ---------------------------------------- */

static int run_scale(const options *o) {
    const size_t N = o->quick ? 50000 : 1000000, BATCH = 20000;
    const double threshold = 0.8;
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    minlsh_sigmatrix *mx = NULL;
    minlsh_pairs *pairs = NULL;
    minlsh_clusters *cl = NULL;
    uint32_t *sigs = (uint32_t *)xmalloc(BATCH * 128 * sizeof *sigs), bands, rows;
    uint64_t bytes = 0, planted = 0, found = 0;
    double t0 = wall_now(), t_gen = 0, t_sign = 0, t_pairs, t_clusters, total, rss;
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    size_t first, i;
    int pass;
    check(minlsh_family_new(&fam, 128, 1, NULL), "family");
    check(minlsh_shingler_new(&sh, NULL, NULL), "shingler");
    check(minlsh_sigmatrix_new(&mx, fam, 0, NULL), "matrix");
    po.threshold = threshold;
    check(minlsh_plan_compute(&bands, &rows, NULL, NULL, &po), "plan");
    printf("minlsh %s scale benchmark: %zu generated documents of ~3 KB, %u CPUs, kernel %s\n",
           minlsh_version_string(), N, online_cpus(), minlsh_simd_kernel_name());
    printf("  shingle word:5, k = 128, b = %u, r = %u (balanced plan for t = %.1f)\n", bands, rows,
           threshold);
    for (first = 0; first < N; first += BATCH) {
        size_t n = N - first < BATCH ? N - first : BATCH;
        corpus c;
        double ts = wall_now();
        corpus_make(&c, o->seed, first, n, 3000);
        t_gen += wall_now() - ts;
        bytes += c.bytes;
        ts = wall_now();
        check(minlsh_family_sign_batch(fam, sh, (const void *const *)c.text, c.len, n, 0, sigs,
                                       n * 128, NULL, NULL),
              "sign_batch");
        for (i = 0; i < n; i++) check(minlsh_sigmatrix_append(mx, sigs + i * 128, 128, NULL), "append");
        t_sign += wall_now() - ts;
        corpus_free(&c);
        if ((first / BATCH) % 10 == 9) {
            printf("  %zu documents signed, %.0f s\n", first + n, wall_now() - t0);
            fflush(stdout);
        }
    }
    free(sigs);
    {
        double ts = wall_now();
        check(minlsh_pairs_from_matrix(&pairs, mx, bands, rows, threshold, 0, NULL), "pairs");
        t_pairs = wall_now() - ts;
        ts = wall_now();
        check(minlsh_clusters_from_matrix(&cl, mx, bands, rows, threshold, NULL), "clusters");
        t_clusters = wall_now() - ts;
    }
    total = wall_now() - t0;
    rss = peak_rss_mib();
    /* Recall of the planted near-duplicate pairs. */
    for (i = 10; i < N; i++)
        if (corpus_source(i) != i) planted++;
    for (i = 0; i < minlsh_pairs_count(pairs); i++) {
        uint64_t a, b;
        check(minlsh_pairs_copy_pair(&a, &b, NULL, pairs, i), "pairs_get");
        if (corpus_source(b) == a) found++;
    }
    pass = total < 120.0 && rss < 8192.0;
    printf("\n  %-34s %10.1f s\n", "generate text (all threads)", t_gen);
    printf("  %-34s %10.1f s  (%.1f MB/s)\n", "shingle + sign (all threads)", t_sign,
           (double)bytes / 1e6 / t_sign);
    printf("  %-34s %10.1f s  (%zu pairs >= %.1f)\n", "verified pairs (sort-based)", t_pairs,
           minlsh_pairs_count(pairs), threshold);
    printf("  %-34s %10.1f s  (%zu clusters)\n", "clusters (union-find)", t_clusters,
           minlsh_clusters_count(cl));
    printf("  planted near-duplicates found: %llu of %llu (%.2f%%)\n", (unsigned long long)found,
           (unsigned long long)planted, planted ? 100.0 * (double)found / (double)planted : 0.0);
    printf("\n== Summary ==\n");
    printf("scale_documents: %zu\n", N);
    printf("scale_megabytes: %.0f\n", (double)bytes / 1e6);
    printf("scale_wall_seconds: %.1f\n", total);
    printf("scale_peak_rss_mib: %.0f\n", rss);
    printf("scale_megabytes_per_sec: %.1f\n", (double)bytes / 1e6 / total);
    printf("scale_recall_planted: %.4f\n", planted ? (double)found / (double)planted : 0.0);
    printf("scale_target: %s (under 120 s and 8192 MiB)\n", pass ? "pass" : "FAIL");
    minlsh_pairs_free(pairs);
    minlsh_clusters_free(cl);
    minlsh_sigmatrix_free(mx);
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
    return pass || o->quick ? 0 : 1;
}

/* ---- bench hot: hot buckets ------------------------------------------------------- */

/* Paragraphs from a pool of 12; each document is 4 of them, drawn with
 * repetition (so many documents are identical and most of the rest share
 * most of their text). */
static void corpus_paragraphs(corpus *c, size_t n, uint64_t seed) {
    char para[12][700];
    size_t plen[12], i, p, room = 4 * 700 + 8;
    uint64_t s = corpus_mix(seed ^ 0xABCDEF) | 1;
    for (p = 0; p < 12; p++) plen[p] = corpus_base(&vocab, seed * 977 + p, 600, para[p]);
    c->buf = (char *)xmalloc(n * room);
    c->text = (const char **)xmalloc(n * sizeof *c->text);
    c->len = (size_t *)xmalloc(n * sizeof *c->len);
    c->n = n;
    c->bytes = 0;
    for (i = 0; i < n; i++) {
        char *out = c->buf + i * room;
        size_t len = 0, q;
        for (q = 0; q < 4; q++) {
            size_t pick = (size_t)(corpus_next(&s) % 12);
            memcpy(out + len, para[pick], plen[pick]);
            len += plen[pick];
            out[len++] = '\n';
        }
        c->text[i] = out;
        c->len[i] = len;
        c->bytes += len;
    }
}

typedef struct hot_result {
    double sign, dedup, index, total;
    size_t clusters, largest, capped_n;
    uint32_t capped_bands;
} hot_result;

static void hot_run(const corpus *c, const minlsh_family *fam, const minlsh_shingler *sh,
                    hot_result *hr) {
    uint32_t *sigs = (uint32_t *)xmalloc(c->n * 128 * sizeof *sigs);
    uint64_t *ids = (uint64_t *)xmalloc(c->n * sizeof *ids), *got = (uint64_t *)xmalloc(c->n * 8);
    minlsh_sigmatrix *mx = NULL;
    minlsh_clusters *cl = NULL;
    minlsh_index *ix = NULL;
    size_t i, n;
    double t0;
    memset(hr, 0, sizeof *hr);
    t0 = wall_now();
    check(minlsh_family_sign_batch(fam, sh, (const void *const *)c->text, c->len, c->n, 0,
                                   sigs, c->n * 128, NULL, NULL),
          "sign_batch");
    hr->sign = wall_now() - t0;
    /* Batch dedup: matrix, then linear clustering. */
    t0 = wall_now();
    check(minlsh_sigmatrix_new(&mx, fam, 0, NULL), "matrix");
    for (i = 0; i < c->n; i++) check(minlsh_sigmatrix_append(mx, sigs + i * 128, 128, NULL), "append");
    check(minlsh_clusters_from_matrix(&cl, mx, 9, 13, 0.8, NULL), "clusters");
    hr->dedup = wall_now() - t0;
    hr->clusters = minlsh_clusters_count(cl);
    for (i = 0; i < hr->clusters; i++) {
        check(minlsh_clusters_copy_members(cl, i, NULL, 0, &n) == MINLSH_E_BUFSIZE ? 0 : -1, "members");
        if (n > hr->largest) hr->largest = n;
    }
    /* Incremental: an index, and a query of the first document bounded to
     * 1000 bucket members (reported, never silently cut). */
    t0 = wall_now();
    for (i = 0; i < c->n; i++) ids[i] = i;
    check(minlsh_index_new(&ix, fam, 0, 9, 13, NULL), "index");
    check(minlsh_index_insert_many(ix, ids, sigs, c->n, 128, NULL), "insert");
    check(minlsh_index_query_limited(ix, sigs, 128, 1000, got, NULL, c->n, &hr->capped_n,
                                     &hr->capped_bands),
          "query_limited");
    hr->index = wall_now() - t0;
    hr->total = hr->sign + hr->dedup + hr->index;
    minlsh_index_free(ix);
    minlsh_clusters_free(cl);
    minlsh_sigmatrix_free(mx);
    free(sigs);
    free(ids);
    free(got);
}

static int run_hot(const options *o) {
    const size_t N = o->quick ? 20000 : 100000;
    static const char *names[4] = {"distinct", "identical", "empty", "repeated paragraphs"};
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    hot_result hr[4];
    int which, ok = 1;
    check(minlsh_family_new(&fam, 128, 1, NULL), "family");
    check(minlsh_shingler_new(&sh, NULL, NULL), "shingler");
    printf("minlsh %s hot-bucket benchmark: %zu documents per case, %u CPUs, kernel %s\n",
           minlsh_version_string(), N, online_cpus(), minlsh_simd_kernel_name());
    printf("  per case: sign (batch, all threads), then clusters from the matrix (t = 0.8,\n"
           "  union-find), then an index with a query bounded to 1000 bucket members\n\n");
    for (which = 0; which < 4; which++) {
        corpus c;
        size_t i;
        memset(&c, 0, sizeof c);
        if (which == 0) {
            corpus_make(&c, o->seed, 0, N, 2000);
        } else if (which == 1) {
            corpus one;
            corpus_make(&one, o->seed, 12345, 1, 2000);
            c.text = (const char **)xmalloc(N * sizeof *c.text);
            c.len = (size_t *)xmalloc(N * sizeof *c.len);
            c.buf = one.buf;
            one.buf = NULL;
            for (i = 0; i < N; i++) {
                c.text[i] = c.buf;
                c.len[i] = one.len[0];
            }
            c.n = N;
            c.bytes = N * one.len[0];
            corpus_free(&one);
        } else if (which == 2) {
            c.text = (const char **)xmalloc(N * sizeof *c.text);
            c.len = (size_t *)xmalloc(N * sizeof *c.len);
            for (i = 0; i < N; i++) {
                c.text[i] = "";
                c.len[i] = 0;
            }
            c.n = N;
        } else {
            corpus_paragraphs(&c, N, o->seed);
        }
        {
            int r;
            hot_result best;
            for (r = 0; r < 3; r++) {
                hot_run(&c, fam, sh, &best);
                if (r == 0 || best.total < hr[which].total) hr[which] = best;
            }
        }
        printf("  %-20s %6.1f MB  sign %6.3f s  dedup %6.3f s  index %6.3f s  total %6.3f s\n",
               names[which], (double)c.bytes / 1e6, hr[which].sign, hr[which].dedup,
               hr[which].index, hr[which].total);
        printf("  %-20s %zu clusters, largest %zu; bounded query: %zu candidates from %u of 9 "
               "bands%s\n",
               "", hr[which].clusters, hr[which].largest, hr[which].capped_n,
               hr[which].capped_bands, hr[which].capped_bands < 9 ? " (cut, reported)" : "");
        if (which == 1 || which == 2) {
            free(c.text == NULL ? NULL : (void *)c.text);
            free(c.len);
            free(c.buf);
        } else {
            corpus_free(&c);
        }
    }
    printf("\n  ratios to distinct (each must be <= 2): total, and the dedup stage alone\n");
    for (which = 1; which < 4; which++) {
        double r = hr[which].total / hr[0].total, rd = hr[which].dedup / hr[0].dedup;
        printf("  %-20s %6.2f   %6.2f\n", names[which], r, rd);
        if (r > 2.0) ok = 0;
    }
    printf("\n== Summary ==\n");
    printf("hot_identical_over_distinct: %.2f\n", hr[1].total / hr[0].total);
    printf("hot_empty_over_distinct: %.2f\n", hr[2].total / hr[0].total);
    printf("hot_paragraphs_over_distinct: %.2f\n", hr[3].total / hr[0].total);
    printf("hot_target: %s (each <= 2)\n", ok ? "pass" : "FAIL");
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
    return ok ? 0 : 1;
}

/* ---- main ---------------------------------------------------------------------- */

int main(int argc, char **argv) {
    options o;
    const char *what = "all";
    int i;
    o.seed = 20260101;
    o.words = NULL;
    o.quick = 0;
    o.dedup_docs = 0;
    o.minlsh = NULL;
    o.gen_docs = NULL;
    o.gen_near = "bench/gen_near.py";
    o.sizes = NULL;
    o.threads_list = NULL;
    o.reps = 0;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--words") == 0 && i + 1 < argc) o.words = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            o.seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--quick") == 0) o.quick = 1;
        else if (strcmp(argv[i], "--dedup-docs") == 0 && i + 1 < argc)
            o.dedup_docs = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--minlsh") == 0 && i + 1 < argc) o.minlsh = argv[++i];
        else if (strcmp(argv[i], "--gen-docs") == 0 && i + 1 < argc) o.gen_docs = argv[++i];
        else if (strcmp(argv[i], "--gen-near") == 0 && i + 1 < argc) o.gen_near = argv[++i];
        else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) o.sizes = argv[++i];
        else if (strcmp(argv[i], "--threads-list") == 0 && i + 1 < argc)
            o.threads_list = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) o.reps = atoi(argv[++i]);
        else if (argv[i][0] != '-') what = argv[i];
        else {
            fprintf(stderr, "usage: bench [all|scale|hot|index|kernels|dedup|threads|huge|crawler]\n"
                            "             [--words FILE] [--seed N] [--quick] [--dedup-docs N]\n"
                            "             [--sizes \"N1 N2 ...\"] [--threads-list \"T1 T2 ...\"]\n"
                            "             [--reps N] [--minlsh PATH] [--gen-docs PATH]\n");
            fprintf(stderr, "usage: bench [all|scale|hot|index|kernels|dedup|huge|crawler|components]\n"
                            "             [--words FILE] [--seed N] [--quick] [--dedup-docs N]\n"
                            "             [--sizes \"N1 N2 ...\"] [--minlsh PATH] [--gen-docs PATH]\n"
                            "             [--gen-near PATH]\n");
            return 2;
        }
    }
    if (o.words == NULL || corpus_vocab_file(&vocab, o.words, 6000) != 0) {
        if (o.words != NULL) fprintf(stderr, "bench: cannot use %s; built-in words\n", o.words);
        corpus_vocab_builtin(&vocab, 5000, o.seed);
    }
    /* The programs the dedup section runs: beside this one by default
     * (build/bench/bench, build/bench/gen_docs, build/minlsh). */
    {
        static char mpath[4096], gpath[4096];
        const char *slash = strrchr(argv[0], '/');
        int dir = slash != NULL ? (int)(slash - argv[0]) : 1;
        const char *base = slash != NULL ? argv[0] : ".";
        if (o.minlsh == NULL) {
            snprintf(mpath, sizeof mpath, "%.*s/../minlsh", dir, base);
            o.minlsh = mpath;
        }
        if (o.gen_docs == NULL) {
            snprintf(gpath, sizeof gpath, "%.*s/gen_docs", dir, base);
            o.gen_docs = gpath;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(what, "all") == 0) return run_all(&o);
    if (strcmp(what, "scale") == 0) return run_scale(&o);
    if (strcmp(what, "hot") == 0) return run_hot(&o);
    if (strcmp(what, "index") == 0) return run_index(&o);
    if (strcmp(what, "kernels") == 0) return run_kernels(&o);
    if (strcmp(what, "dedup") == 0) return run_dedup(&o);
    if (strcmp(what, "huge") == 0) return run_huge(&o);
    if (strcmp(what, "threads") == 0) return run_threads(&o);
    if (strcmp(what, "crawler") == 0) return run_crawler(&o);
    if (strcmp(what, "components") == 0) return run_components(&o);
    fprintf(stderr, "bench: unknown benchmark %s\n", what);
    return 2;
}
