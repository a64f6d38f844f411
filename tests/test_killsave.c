/* Atomic saves under kill -9 (docs/robustness.md).
 *
 * A child process saves numbered versions of a matrix (or an index) to one
 * path, over and over, each version's number in its metadata; the parent
 * kills it with SIGKILL after a random delay of up to about two saves.
 * After every kill the file must be exactly one complete version (byte for
 * byte what that version serialises to), never older than the version seen
 * after the previous kill, and the only other files allowed are the
 * "<path>.tmp-*" temporaries of interrupted saves (counted, then removed).
 *
 * MINLSH_KILL_RUNS sets the number of runs per file type (default 150, so
 * 300 in all); the delay scale adapts to the measured save time, so the
 * whole test takes a few seconds.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "testlib.h"

#include <minlsh.h>

#include <dirent.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define K 64
#define DOCS 1000 /* 256 KiB of signatures: a save takes a few milliseconds */

static minlsh_family *fam;
static minlsh_sigmatrix *mx[2]; /* even and odd versions differ in content */
static minlsh_index *ix[2];
static char dir[4000], path[4100];

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_us(long us) {
    struct timespec ts;
    ts.tv_sec = us / 1000000;
    ts.tv_nsec = (us % 1000000) * 1000;
    while (nanosleep(&ts, &ts) != 0) continue;
}

static void build(void) {
    uint32_t sig[K];
    uint64_t s = 1;
    int w;
    size_t i, v;
    if (minlsh_family_new(&fam, K, 1, NULL) != 0) abort();
    for (w = 0; w < 2; w++) {
        if (minlsh_sigmatrix_new(&mx[w], fam, 0, NULL) != 0 ||
            minlsh_index_new(&ix[w], fam, 0, 16, 4, NULL) != 0)
            abort();
        for (i = 0; i < DOCS; i++) {
            for (v = 0; v < K; v++) sig[v] = (uint32_t)tl_rand(&s);
            minlsh_sigmatrix_append(mx[w], sig, K, NULL);
            if (i < DOCS / 2) minlsh_index_insert(ix[w], i * 2 + (size_t)w, sig, K);
        }
    }
}

static void set_version(int is_index, uint64_t v) {
    char meta[64];
    snprintf(meta, sizeof meta, "version %" PRIu64 "\n", v);
    if (is_index) minlsh_index_set_metadata(ix[v % 2], meta, strlen(meta));
    else minlsh_sigmatrix_set_metadata(mx[v % 2], meta, strlen(meta));
}

static int save_version(int is_index, uint64_t v) {
    set_version(is_index, v);
    return is_index ? minlsh_index_save(ix[v % 2], path) : minlsh_sigmatrix_save(mx[v % 2], path);
}

/* The bytes version v serialises to. */
static uint8_t *version_bytes(int is_index, uint64_t v, size_t *len) {
    uint8_t *buf;
    set_version(is_index, v);
    *len = 0;
    if (is_index) minlsh_index_save_buffer(ix[v % 2], NULL, 0, len);
    else minlsh_sigmatrix_save_buffer(mx[v % 2], NULL, 0, len);
    buf = (uint8_t *)malloc(*len);
    if (buf == NULL) abort();
    if (is_index) minlsh_index_save_buffer(ix[v % 2], buf, *len, len);
    else minlsh_sigmatrix_save_buffer(mx[v % 2], buf, *len, len);
    return buf;
}

static uint8_t *read_all(size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, n;
    *len = 0;
    if (f == NULL) return NULL;
    for (;;) {
        if (*len == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            buf = (uint8_t *)realloc(buf, cap);
            if (buf == NULL) abort();
        }
        n = fread(buf + *len, 1, cap - *len, f);
        if (n == 0) break;
        *len += n;
    }
    fclose(f);
    return buf;
}

/* Remove the temporaries of interrupted saves; any other stranger is an
 * error (returned as -1). */
static int sweep_leftovers(const char *base) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char prefix[256], p[8200];
    int n = 0, strangers = 0;
    snprintf(prefix, sizeof prefix, "%s.tmp-", base);
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, base, strlen(base)) != 0) continue; /* other tests' files */
        if (strcmp(e->d_name, base) == 0) continue;
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strlen(e->d_name) == strlen(prefix) + 16) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
            n++;
        } else {
            strangers++;
        }
    }
    closedir(d);
    return strangers ? -1 : n;
}

static long runs_total, leftovers_total, saves_total, same_total;

static void kill_runs(int is_index, long runs) {
    const char *base = is_index ? "killsave.ix" : "killsave.mx";
    uint64_t seen = 0, rs = 12345 + (uint64_t)is_index;
    double t0, save_time;
    long r, completed = 0, unchanged = 0, left = 0;
    int i;
    snprintf(path, sizeof path, "%s/%s", dir, base);
    /* Version 0 is there before the first kill; time a few saves. */
    t0 = now();
    for (i = 0; i < 5; i++) EXPECT_OK(save_version(is_index, 0));
    save_time = (now() - t0) / 5;
    for (r = 0; r < runs; r++) {
        uint64_t start = seen + 1, v;
        long delay_us = (long)(tl_rand_unit(&rs) * 2.0 * save_time * 1e6);
        uint8_t *got, *want;
        size_t glen, wlen;
        int status = 0, rc, n;
        pid_t pid = fork();
        if (pid < 0) {
            TL_FAIL("fork failed");
            return;
        }
        if (pid == 0) {
            /* Save versions start, start + 1, ... until killed. */
            for (v = start; v < start + 100000; v++)
                if (save_version(is_index, v) != 0) _exit(3);
            _exit(4);
        }
        sleep_us(delay_us);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
            TL_FAIL("run %ld: the saver ended by itself (status %d)", r, status);
            continue;
        }
        got = read_all(&glen);
        if (got == NULL) {
            TL_FAIL("run %ld (%s): the file is gone", r, base);
            continue;
        }
        /* Which version is it? Load it, read its metadata. */
        {
            char meta[64] = {0};
            size_t mlen = 0;
            if (is_index) {
                minlsh_index *l = NULL;
                rc = minlsh_index_load_buffer(&l, got, glen, LOAD_OPTS(fam, 0, NULL));
                if (rc == 0) minlsh_index_copy_metadata(l, meta, sizeof meta - 1, &mlen);
                minlsh_index_free(l);
            } else {
                minlsh_sigmatrix *l = NULL;
                rc = minlsh_sigmatrix_load_buffer(&l, got, glen, LOAD_OPTS(fam, 0, NULL));
                if (rc == 0) minlsh_sigmatrix_copy_metadata(l, meta, sizeof meta - 1, &mlen);
                minlsh_sigmatrix_free(l);
            }
            if (rc != 0 || sscanf(meta, "version %" SCNu64, &v) != 1) {
                TL_FAIL("run %ld (%s, %zu bytes, killed after %ld us): not a complete file: %s",
                        r, base, glen, delay_us, minlsh_error_name(rc));
                free(got);
                continue;
            }
        }
        want = version_bytes(is_index, v, &wlen);
        EXPECT_MSG(glen == wlen && memcmp(got, want, wlen) == 0,
                   "run %ld: the file claims version %" PRIu64 " but its bytes differ", r, v);
        EXPECT_MSG(v == seen || v >= start, "run %ld: version %" PRIu64 " after %" PRIu64, r,
                   v, seen);
        if (v == seen) unchanged++;
        else completed += (long)(v - seen);
        seen = v;
        free(got);
        free(want);
        n = sweep_leftovers(base);
        if (n < 0) TL_FAIL("run %ld: a file other than the target and its temporaries", r);
        else left += n;
    }
    printf("  %s: %ld kill -9 runs (save ~%.1f ms, delays 0..%.1f ms): every file complete; "
           "%ld saves completed, %ld runs killed before the first rename, "
           "%ld temporaries left behind and removed\n",
           base, runs, save_time * 1e3, 2 * save_time * 1e3, completed, unchanged, left);
    runs_total += runs;
    leftovers_total += left;
    saves_total += completed;
    same_total += unchanged;
    remove(path);
}

static long runs_per_type(void) {
    const char *e = getenv("MINLSH_KILL_RUNS");
    long n = e != NULL ? atol(e) : 150;
    return n > 0 ? n : 150;
}

static void test_kill_matrix_saves(void) { kill_runs(0, runs_per_type()); }
static void test_kill_index_saves(void) { kill_runs(1, runs_per_type()); }

int main(void) {
    const char *t = getenv("MINLSH_TEST_TMP");
    snprintf(dir, sizeof dir, "%s", t != NULL ? t : "/tmp");
    build();
    RUN(test_kill_matrix_saves);
    RUN(test_kill_index_saves);
    printf("killsave: %ld kill -9 runs, every file a complete version; %ld saves completed, "
           "%ld temporaries cleaned\n", runs_total, saves_total, leftovers_total);
    minlsh_sigmatrix_free(mx[0]);
    minlsh_sigmatrix_free(mx[1]);
    minlsh_index_free(ix[0]);
    minlsh_index_free(ix[1]);
    minlsh_family_free(fam);
    return TL_SUMMARY("killsave");
}
