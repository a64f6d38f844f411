/*
 * bench/store.c (make bench-store): 4 writer processes on one store of
 * DOCS documents (default 200,000; BENCH_STORE_DOCS=1000000 for 1M):
 *   - pages/s with a commit (fdatasync) after every page, and after every 16,
 *     timed from when every writer has opened the store and built its name
 *     table (that time printed beside);
 *   - the cost per page without the fsync (the store on tmpfs, /dev/shm,
 *     where fdatasync returns at once), one writer whose handle has added
 *     WARM pages before (its file's blocks checked), side by side with the
 *     protocol the store replaces: per page, take the lock, map the index,
 *     open and replay its journal, check, insert, append, sync, close;
 *   - shingling and signing alone per page, so the store's own share shows.
 * The costs per page are the thread's CPU time (time the machine gave other
 * processes is not counted), in blocks of BLOCK pages taken in turn with
 * the same pages; each figure is the median over the blocks, and the
 * store's own share the median of the blocks' differences.
 * Ends with "key: value" lines.
 *
 * store --accuracy DIR < docs.jsonl (bench/gen_docs output): the documents
 * added to two stores in DIR, one deciding by the estimate and one with
 * stored sets (exact Jaccard): the estimate's wrong "duplicate" verdicts
 * (exact Jaccard of the pair below the threshold), and each store's bytes
 * per document after a compaction.
 *
 * usage: store [--docs N] [--pages M] [--dir DIR] [--shm DIR]
 */
#define _POSIX_C_SOURCE 200809L
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WRITERS 4
#define WORDS 120
#define WARM 2000 /* pages a handle adds before it is timed */

#define BLOCKS 100    /* blocks of pages timed in turn */
#define BLOCK 20      /* pages a block */
#define OLD_EVERY 5   /* the old protocol (milliseconds a page) in one block of 5 */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n-1] (sorted in place). */
static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Page i: WORDS words; every tenth page is a near copy of an earlier one. */
static size_t page(char *buf, size_t cap, uint64_t i) {
    uint64_t src = (i % 10 == 9) ? i / 2 : i, st = src * 2654435761u + 7, st2 = i + 99;
    size_t n = 0;
    int w;
    for (w = 0; w < WORDS; w++) {
        uint64_t word = rnd(&st) % 30000;
        if (src != i && rnd(&st2) % 60 == 0) word = 30000 + rnd(&st2) % 1000;
        n += (size_t)snprintf(buf + n, cap - n, "w%llu ", (unsigned long long)word);
    }
    return n;
}

static void die(const char *what, int rc) {
    fprintf(stderr, "bench store: %s: %s\n", what, minlsh_strerror(rc));
    exit(1);
}

static void remove_store(const char *p) {
    static const char *const sfx[] = {"", ".journal", ".lock", ".sets", ".compact.lock"};
    char f[4300];
    size_t i;
    for (i = 0; i < sizeof sfx / sizeof *sfx; i++) {
        snprintf(f, sizeof f, "%s%s", p, sfx[i]);
        unlink(f);
    }
}

static void build(const char *p, uint64_t docs) {
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *s = NULL;
    char text[2000], name[32];
    uint64_t i;
    int rc;
    remove_store(p);
    o.flags = MINLSH_STORE_CREATE;
    if ((rc = minlsh_store_open(&s, p, &o)) != 0) die("open", rc);
    if ((rc = minlsh_store_begin(s)) != 0) die("begin", rc);
    for (i = 0; i < docs; i++) {
        size_t n = page(text, sizeof text, i);
        int m = snprintf(name, sizeof name, "b%llu", (unsigned long long)i);
        if ((rc = minlsh_store_add(NULL, s, text, n, name, (size_t)m, 0)) != 0) die("add", rc);
    }
    if ((rc = minlsh_store_commit(s)) != 0) die("commit", rc);
    if ((rc = minlsh_store_compact(s)) != 0) die("compact", rc);
    minlsh_store_free(s);
}

/* One writer: pages first .. first + n - 1, a commit every `group`. It
 * opens the store and looks a name up (which builds its name table) first,
 * says so on `ready` and waits for `go` to close: the pages/s are those of
 * writers that have run a while. */
static void writer(const char *p, uint64_t first, uint64_t n, uint64_t group, int ready, int go) {
    minlsh_store *s = NULL;
    char text[2000], name[32], c = 1;
    uint64_t i, id;
    int rc;
    if ((rc = minlsh_store_open(&s, p, NULL)) != 0) die("open", rc);
    rc = minlsh_store_find_name(&id, s, "ready?", 6);
    if (rc != 0 && rc != MINLSH_E_NOTFOUND) die("find_name", rc);
    if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 0) die("pipe", MINLSH_E_IO);
    for (i = 0; i < n; i++) {
        size_t len = page(text, sizeof text, first + i);
        int m = snprintf(name, sizeof name, "w%llu", (unsigned long long)(first + i));
        if (i % group == 0 && (rc = minlsh_store_begin(s)) != 0) die("begin", rc);
        if ((rc = minlsh_store_add(NULL, s, text, len, name, (size_t)m, 0)) != 0) die("add", rc);
        if ((i + 1) % group == 0 || i + 1 == n)
            if ((rc = minlsh_store_commit(s)) != 0) die("commit", rc);
    }
    minlsh_store_free(s);
}

/* Wall seconds for WRITERS processes adding `pages` pages each, from when
 * all have opened the store (*open_s: the seconds that took). */
static double writers(const char *p, uint64_t base, uint64_t pages, uint64_t group,
                      double *open_s) {
    pid_t pid[WRITERS];
    int w, status, ready[2], go[2];
    char c;
    double t0 = now(), t1;
    if (pipe(ready) != 0 || pipe(go) != 0) die("pipe", MINLSH_E_IO);
    for (w = 0; w < WRITERS; w++) {
        pid[w] = fork();
        if (pid[w] == 0) {
            close(ready[0]);
            close(go[1]);
            writer(p, base + (uint64_t)w * pages, pages, group, ready[1], go[0]);
            _exit(0);
        }
    }
    close(ready[1]);
    close(go[0]);
    for (w = 0; w < WRITERS; w++)
        if (read(ready[0], &c, 1) != 1) die("a writer failed to open", MINLSH_E_IO);
    t1 = now();
    *open_s = t1 - t0;
    close(go[1]); /* go */
    close(ready[0]);
    for (w = 0; w < WRITERS; w++) {
        waitpid(pid[w], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench store: a writer failed\n");
            exit(1);
        }
    }
    return now() - t1;
}

/* The protocol before the store, for one page: lock, map, replay, check
 * and insert, append, sync, close. */
static void old_page(const char *p, const char *jp, const minlsh_family *fam,
                     const minlsh_shingler *sh, uint64_t id, const char *text, size_t len) {
    minlsh_filelock *lk = NULL;
    minlsh_index *ix = NULL;
    minlsh_journal *j = NULL;
    minlsh_novel_result r;
    uint32_t sig[128];
    int rc;
    if ((rc = minlsh_filelock_new(&lk, p, MINLSH_LOCK_EXCLUSIVE, MINLSH_LOCK_WAIT_FOREVER, NULL)) != 0)
        die("lock", rc);
    if ((rc = minlsh_index_map(&ix, p, NULL)) != 0) die("map", rc);
    if ((rc = minlsh_journal_open(&j, ix, jp, MINLSH_JOURNAL_WRITE, NULL, NULL)) != 0)
        die("journal", rc);
    if ((rc = minlsh_family_sign_text(fam, sh, text, len, sig, 128, NULL)) != 0) die("sign", rc);
    if ((rc = minlsh_index_insert_novel(&r, ix, id, sig, 128, NULL)) != 0) die("novel", rc);
    if (r.novel && (rc = minlsh_journal_append(j, MINLSH_JOURNAL_INSERT, id, sig, 128, "x", 1)) != 0)
        die("append", rc);
    if ((rc = minlsh_journal_sync(j)) != 0) die("sync", rc);
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    minlsh_filelock_free(lk);
}

static int copy_file(const char *from, const char *to) {
    FILE *f = fopen(from, "rb"), *g;
    static char buf[1 << 16];
    size_t n;
    if (f == NULL) return -1;
    g = fopen(to, "wb");
    if (g == NULL) {
        fclose(f);
        return -1;
    }
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, g);
    fclose(f);
    return fclose(g);
}

static long file_size(const char *p) {
    FILE *f = fopen(p, "rb");
    long n;
    if (f == NULL) return 0;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fclose(f);
    return n;
}

static int accuracy(const char *dir) {
    static char line[1 << 16];
    char pe[4096], px[4096], sets[4200];
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *se = NULL, *sx = NULL;
    minlsh_shingleset *a = NULL, *b = NULL;
    char **texts = NULL;
    size_t *lens = NULL, n = 0, cap = 0;
    uint64_t dup_est = 0, wrong = 0, dup_exact = 0, i;
    double worst = 1.0;
    int rc;
    snprintf(pe, sizeof pe, "%s/minlsh-acc-estimate.st", dir);
    snprintf(px, sizeof px, "%s/minlsh-acc-exact.st", dir);
    snprintf(sets, sizeof sets, "%s.sets", px);
    remove_store(pe);
    remove_store(px);
    o.flags = MINLSH_STORE_CREATE;
    if ((rc = minlsh_store_open(&se, pe, &o)) != 0) die("open", rc);
    o.flags = MINLSH_STORE_CREATE | MINLSH_STORE_SETS;
    if ((rc = minlsh_store_open(&sx, px, &o)) != 0) die("open", rc);
    if (minlsh_shingleset_new(&a, NULL) != 0 || minlsh_shingleset_new(&b, NULL) != 0) die("set", -3);
    if (minlsh_store_begin(se) != 0 || minlsh_store_begin(sx) != 0) die("begin", -5);
    while (fgets(line, sizeof line, stdin) != NULL) {
        char *t = strstr(line, "\"text\": \""), *e;
        minlsh_store_result r;
        if (t == NULL) continue;
        t += 9;
        e = strchr(t, '"');
        if (e == NULL) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            texts = (char **)realloc(texts, cap * sizeof *texts);
            lens = (size_t *)realloc(lens, cap * sizeof *lens);
            if (texts == NULL || lens == NULL) die("memory", -3);
        }
        lens[n] = (size_t)(e - t);
        texts[n] = (char *)malloc(lens[n] + 1);
        if (texts[n] == NULL) die("memory", -3);
        memcpy(texts[n], t, lens[n]);
        if ((rc = minlsh_store_add(&r, se, t, lens[n], NULL, 0, 0)) != 0) die("add", rc);
        if (!r.inserted) {
            /* the match is store id r.match: the r.match-th document kept */
            double j = 0;
            const minlsh_shingler *sh = minlsh_store_view_shingler(se);
            dup_est++;
            if ((rc = minlsh_shingler_hash(sh, t, lens[n], a, NULL)) != 0 ||
                (rc = minlsh_shingler_hash(sh, texts[r.match], lens[r.match], b, NULL)) != 0 ||
                (rc = minlsh_shingleset_jaccard(&j, a, b)) != 0)
                die("jaccard", rc);
            if (j < minlsh_store_threshold(se)) wrong++;
            if (j < worst) worst = j;
            free(texts[n]);
        } else {
            n++; /* kept: its id is n - 1 */
        }
        if ((rc = minlsh_store_add(&r, sx, t, (size_t)(e - t), NULL, 0, 0)) != 0) die("add", rc);
        if (!r.inserted) dup_exact++;
    }
    if (minlsh_store_commit(se) != 0 || minlsh_store_commit(sx) != 0) die("commit", -5);
    if ((rc = minlsh_store_compact(se)) != 0 || (rc = minlsh_store_compact(sx)) != 0)
        die("compact", rc);
    printf("accuracy (threshold %.2f, k = 128, %llu documents kept by the estimate):\n",
           minlsh_store_threshold(se), (unsigned long long)n);
    printf("  estimate: %llu duplicate verdicts, %llu with exact Jaccard below the threshold "
           "(%.2f%%), the lowest %.3f\n",
           (unsigned long long)dup_est, (unsigned long long)wrong,
           dup_est ? 100.0 * (double)wrong / (double)dup_est : 0.0, worst);
    printf("  exact (stored sets): %llu duplicate verdicts\n", (unsigned long long)dup_exact);
    printf("  bytes per document: %.1f (store file, estimate), %.1f + %.1f sets (with sets)\n",
           (double)file_size(pe) / (double)minlsh_store_count(se),
           (double)file_size(px) / (double)minlsh_store_count(sx),
           (double)file_size(sets) / (double)minlsh_store_count(sx));
    printf("\nstore_estimate_wrong_duplicates: %llu\nstore_estimate_duplicates: %llu\n",
           (unsigned long long)wrong, (unsigned long long)dup_est);
    for (i = 0; i < n; i++) free(texts[i]);
    free(texts);
    free(lens);
    minlsh_shingleset_free(a);
    minlsh_shingleset_free(b);
    minlsh_store_free(se);
    minlsh_store_free(sx);
    remove_store(pe);
    remove_store(px);
    return 0;
}

int main(int argc, char **argv) {
    uint64_t docs = 200000, pages = 500, i;
    const char *dir = "build/bench", *shm = "/dev/shm";
    char p[4096], q[4096], qj[4200], pj[4200];
    double t, t_sync1, t_sync16, t_w4, open1, open16, open4;
    static double b_new[BLOCKS], b_sign[BLOCKS], b_diff[BLOCKS], b_old[BLOCKS];
    size_t n_old = 0;
    long built_bytes;
    minlsh_store *s = NULL;
    minlsh_shingler *sh = NULL;
    minlsh_family *fam = NULL;
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    char text[2000], name[32];
    uint64_t next_page, blocks = BLOCKS, per = BLOCK, b;
    int a, rc;
    if (argc == 3 && strcmp(argv[1], "--accuracy") == 0) return accuracy(argv[2]);
    for (a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--docs") == 0) docs = strtoull(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--pages") == 0) pages = strtoull(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--dir") == 0) dir = argv[a + 1];
        else if (strcmp(argv[a], "--shm") == 0) shm = argv[a + 1];
    }
    snprintf(p, sizeof p, "%s/bench-store.st", dir);
    printf("bench store: %llu documents, %d writer processes, %llu pages each, %d words a page\n",
           (unsigned long long)docs, WRITERS, (unsigned long long)pages, WORDS);
    t = now();
    build(p, docs);
    built_bytes = file_size(p);
    printf("  build (one commit, one compaction): %.2f s; %.1f bytes per document in %s\n",
           now() - t, (double)file_size(p) / (double)docs, p);
    next_page = docs;
    t_sync1 = writers(p, next_page, pages, 1, &open1);
    next_page += WRITERS * pages;
    t_sync16 = writers(p, next_page, pages, 16, &open16);
    next_page += WRITERS * pages;
    printf("  %s: 4 writers, commit every page: %.0f pages/s; every 16 pages: %.0f pages/s"
           " (each writer's open and name table before: %.2f s and %.2f s, 4 at once)\n",
           dir, WRITERS * pages / t_sync1, WRITERS * pages / t_sync16, open1, open16);

    /* Without the fsync: copies on tmpfs, the store and the old protocol
     * interleaved block by block on the same pages. */
    snprintf(q, sizeof q, "%s/minlsh-bench-store-%d.st", shm, (int)getpid());
    snprintf(qj, sizeof qj, "%s.journal", q);
    snprintf(pj, sizeof pj, "%s.journal", p);
    {
        char o[4200], oj[4300];
        snprintf(o, sizeof o, "%s/minlsh-bench-old-%d.ix", shm, (int)getpid());
        snprintf(oj, sizeof oj, "%s.journal", o);
        if (copy_file(p, q) != 0 || copy_file(pj, qj) != 0 || copy_file(p, o) != 0 ||
            copy_file(pj, oj) != 0) {
            fprintf(stderr, "bench store: cannot copy the store to %s\n", shm);
            return 1;
        }
        if ((rc = minlsh_store_open(&s, q, NULL)) != 0) die("open", rc);
        if ((rc = minlsh_shingler_new(&sh, &so, NULL)) != 0) die("shingler", rc);
        if ((rc = minlsh_family_new(&fam, 128, 1, NULL)) != 0) die("family", rc);
        /* A long-running writer has read most of the file's blocks, and
         * checked each once against its checksum: warm the handle first. */
        for (i = 0; i < WARM; i++) {
            uint64_t pg = next_page + blocks * per + i;
            size_t len = page(text, sizeof text, pg);
            int m = snprintf(name, sizeof name, "n%llu", (unsigned long long)pg);
            if ((rc = minlsh_store_add(NULL, s, text, len, name, (size_t)m, 0)) != 0)
                die("add", rc);
        }
        for (b = 0; b < blocks; b++) {
            uint32_t sig[128];
            double t0 = cpu_now();
            for (i = 0; i < per; i++) {
                uint64_t pg = next_page + b * per + i;
                size_t len = page(text, sizeof text, pg);
                int m = snprintf(name, sizeof name, "n%llu", (unsigned long long)pg);
                if ((rc = minlsh_store_add(NULL, s, text, len, name, (size_t)m, 0)) != 0)
                    die("add", rc);
            }
            b_new[b] = (cpu_now() - t0) / (double)per * 1e6;
            if (b % OLD_EVERY == 0) {
                t0 = cpu_now();
                for (i = 0; i < per; i++) {
                    uint64_t pg = next_page + b * per + i;
                    size_t len = page(text, sizeof text, pg);
                    old_page(o, oj, fam, sh, (uint64_t)1 << 40 | pg, text, len);
                }
                b_old[n_old++] = (cpu_now() - t0) / (double)per * 1e6;
            }
            t0 = cpu_now();
            for (i = 0; i < per; i++) {
                size_t len = page(text, sizeof text, next_page + b * per + i);
                if ((rc = minlsh_family_sign_text(fam, sh, text, len, sig, 128, NULL)) != 0)
                    die("sign", rc);
            }
            b_sign[b] = (cpu_now() - t0) / (double)per * 1e6;
            b_diff[b] = b_new[b] - b_sign[b];
        }
        minlsh_store_free(s);
        remove_store(o);
    }
    next_page += blocks * per + WARM;
    t_w4 = writers(q, next_page, pages, 1, &open4);
    remove_store(q);
    {
        double us_new = median(b_new, BLOCKS), us_old = median(b_old, n_old),
               us_sign = median(b_sign, BLOCKS), us_own = median(b_diff, BLOCKS);
        printf("  %s (fsync free), one writer, a commit a page, CPU time, medians of %d blocks of"
               " %d pages: store %.1f us/page, map + replay per lock %.1f us/page (%.1fx);"
               " shingle + sign alone %.1f us/page; the store's own share %.1f us/page\n",
               shm, BLOCKS, BLOCK, us_new, us_old, us_old / us_new, us_sign, us_own);
        printf("  %s, 4 writers, a commit a page: %.0f pages/s (open and name table: %.2f s)\n",
               shm, WRITERS * pages / t_w4, open4);
        printf("\nstore_documents: %llu\n", (unsigned long long)docs);
        printf("store_bytes_per_document: %.1f\n", (double)built_bytes / (double)docs);
        printf("store_sync1_pages_per_s: %.0f\n", WRITERS * pages / t_sync1);
        printf("store_sync16_pages_per_s: %.0f\n", WRITERS * pages / t_sync16);
        printf("store_nofsync_us_per_page: %.1f\n", us_new);
        printf("store_nofsync_overhead_us_per_page: %.1f\n", us_own);
        printf("old_nofsync_us_per_page: %.1f\n", us_old);
        printf("old_over_store: %.2f\n", us_old / us_new);
        printf("store_nofsync_4writers_pages_per_s: %.0f\n", WRITERS * pages / t_w4);
        printf("store_writer_open_s: %.2f\n", open4);
    }
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
    remove_store(p);
    return 0;
}
