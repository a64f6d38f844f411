/*
 * Scratch files (minlsh_scratch in minlsh.h): appends read back at the
 * offsets they reported, threads appending at once land in disjoint ranges
 * that tile the file, the file never shows in its folder, a folder that
 * cannot hold one fails with MINLSH_E_IO and the errno that says why, the
 * first failure's errno stays readable from another thread, and every
 * pointer argument is checked.
 */
#define _DEFAULT_SOURCE 1 /* mkdtemp, seteuid */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

/* A fresh folder for one test, under the run's temporary folder. */
static char *make_dir(const char *name) {
    const char *root = getenv("MINLSH_TEST_TMP");
    char *path = (char *)malloc(4096);
    if (path == NULL) return NULL;
    snprintf(path, 4096, "%s/scratch-%s-XXXXXX", root != NULL && root[0] ? root : "/tmp", name);
    if (mkdtemp(path) == NULL) {
        TL_FAIL("mkdtemp %s: %s", path, strerror(errno));
        free(path);
        return NULL;
    }
    return path;
}

/* Entries of a folder, "." and ".." aside. */
static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static void test_round_trip(void) {
    static const char a[] = "first record", b[] = "second, longer record";
    char got[64], *dir = make_dir("rt");
    minlsh_scratch *s = NULL;
    uint64_t off = 99;
    if (dir == NULL) return;
    EXPECT_OK(minlsh_scratch_open(&s, dir, NULL));
    if (s == NULL) goto done;
    EXPECT_EQ_INT(count_entries(dir), 0); /* unlinked at once */
    EXPECT_EQ_U64(minlsh_scratch_size(s), 0);
    EXPECT_OK(minlsh_scratch_append(&off, s, a, sizeof a - 1));
    EXPECT_EQ_U64(off, 0);
    EXPECT_OK(minlsh_scratch_append(&off, s, b, sizeof b - 1));
    EXPECT_EQ_U64(off, sizeof a - 1);
    EXPECT_OK(minlsh_scratch_append(NULL, s, "!", 1));  /* no offset wanted */
    EXPECT_OK(minlsh_scratch_append(&off, s, NULL, 0)); /* where the next one goes */
    EXPECT_EQ_U64(off, sizeof a - 1 + sizeof b - 1 + 1);
    EXPECT_EQ_U64(minlsh_scratch_size(s), off);
    EXPECT_OK(minlsh_scratch_read(s, sizeof a - 1, got, sizeof b - 1));
    EXPECT(memcmp(got, b, sizeof b - 1) == 0);
    EXPECT_OK(minlsh_scratch_read(s, 0, got, sizeof a - 1));
    EXPECT(memcmp(got, a, sizeof a - 1) == 0);
    EXPECT_OK(minlsh_scratch_read(s, 3, got, 5)); /* inside one append */
    EXPECT(memcmp(got, "st re", 5) == 0);
    EXPECT_OK(minlsh_scratch_read(s, off - 1, got, 1));
    EXPECT_EQ_INT(got[0], '!');
    EXPECT_OK(minlsh_scratch_read(s, off, NULL, 0)); /* empty, at the end */
    /* ranges past the end */
    EXPECT_ERR(minlsh_scratch_read(s, off - 1, got, 2), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_scratch_read(s, off + 1, got, 0), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_scratch_read(s, UINT64_MAX, got, 1), MINLSH_E_PARAM);
    EXPECT_EQ_INT(minlsh_scratch_errno(s), 0); /* none of that was an I/O failure */
    EXPECT_EQ_INT(count_entries(dir), 0);
done:
    minlsh_scratch_free(s);
    rmdir(dir);
    free(dir);
}

/* NULL or "" is $TMPDIR, else /tmp: a missing $TMPDIR shows it was used. */
static void test_default_dir(void) {
    char *dir = make_dir("env"), *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    minlsh_scratch *s = NULL;
    int i;
    if (dir == NULL) return;
    for (i = 0; i < 2; i++) {
        const char *arg = i == 0 ? NULL : "";
        setenv("TMPDIR", dir, 1);
        EXPECT_OK(minlsh_scratch_open(&s, arg, NULL));
        EXPECT_OK(minlsh_scratch_append(NULL, s, "x", 1));
        EXPECT_EQ_INT(count_entries(dir), 0);
        minlsh_scratch_free(s);
        s = NULL;
        setenv("TMPDIR", "/nonexistent-minlsh-scratch", 1);
        errno = 0;
        EXPECT_ERR(minlsh_scratch_open(&s, arg, NULL), MINLSH_E_IO);
        EXPECT_EQ_INT(errno, ENOENT);
        EXPECT(s == NULL);
        setenv("TMPDIR", "", 1); /* empty: /tmp */
        EXPECT_OK(minlsh_scratch_open(&s, arg, NULL));
        minlsh_scratch_free(s);
        s = NULL;
    }
    if (old != NULL) setenv("TMPDIR", old, 1);
    else unsetenv("TMPDIR");
    free(old);
    rmdir(dir);
    free(dir);
}

#define THREADS 8
#define APPENDS 400

typedef struct appender {
    minlsh_scratch *s;
    unsigned t;
    uint64_t off[APPENDS];
    size_t len[APPENDS];
    int failures;
} appender;

/* Append i of thread t: its own length and bytes, so that a read shows
 * whose bytes landed where. */
static size_t piece_len(unsigned t, unsigned i) { return 1 + (i * 7u + t * 13u) % 257u; }
static unsigned char piece_byte(unsigned t, unsigned i, size_t j) {
    return (unsigned char)(t * 31u + i * 5u + (unsigned)j);
}

static void *append_many(void *arg) {
    appender *a = (appender *)arg;
    unsigned char buf[300], back[300];
    unsigned i;
    for (i = 0; i < APPENDS; i++) {
        size_t n = piece_len(a->t, i), j;
        for (j = 0; j < n; j++) buf[j] = piece_byte(a->t, i, j);
        a->len[i] = n;
        if (minlsh_scratch_append(&a->off[i], a->s, buf, n) != 0) a->failures++;
        /* read back at once, while the other threads append */
        else if (minlsh_scratch_read(a->s, a->off[i], back, n) != 0 || memcmp(back, buf, n) != 0)
            a->failures++;
    }
    return NULL;
}

static int by_offset(const void *x, const void *y) {
    const uint64_t *a = (const uint64_t *)x, *b = (const uint64_t *)y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

static void test_concurrent_appends(void) {
    static appender ap[THREADS];
    static uint64_t ranges[THREADS * APPENDS][3]; /* offset, length, thread*APPENDS+i */
    pthread_t th[THREADS];
    minlsh_scratch *s = NULL;
    uint64_t total = 0, at = 0;
    unsigned t, i;
    size_t r, bad = 0;
    EXPECT_OK(minlsh_scratch_open(&s, getenv("MINLSH_TEST_TMP"), NULL));
    if (s == NULL) return;
    for (t = 0; t < THREADS; t++) {
        memset(&ap[t], 0, sizeof ap[t]);
        ap[t].s = s;
        ap[t].t = t;
        for (i = 0; i < APPENDS; i++) total += piece_len(t, i);
        EXPECT_EQ_INT(pthread_create(&th[t], NULL, append_many, &ap[t]), 0);
    }
    for (t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (t = 0; t < THREADS; t++) EXPECT_EQ_INT(ap[t].failures, 0);
    EXPECT_EQ_U64(minlsh_scratch_size(s), total);
    for (t = 0; t < THREADS; t++)
        for (i = 0; i < APPENDS; i++) {
            r = (size_t)t * APPENDS + i;
            ranges[r][0] = ap[t].off[i];
            ranges[r][1] = ap[t].len[i];
            ranges[r][2] = r;
        }
    /* Sorted by offset, each range starts where the one before ended: no
     * overlap, no gap, and the last ends at the size. */
    qsort(ranges, THREADS * APPENDS, sizeof ranges[0], by_offset);
    for (r = 0; r < THREADS * APPENDS; r++) {
        unsigned char back[300];
        size_t j;
        unsigned tt = (unsigned)(ranges[r][2] / APPENDS), ii = (unsigned)(ranges[r][2] % APPENDS);
        if (ranges[r][0] != at) {
            EXPECT_MSG(0, "range %zu starts at %llu, expected %llu", r,
                       (unsigned long long)ranges[r][0], (unsigned long long)at);
            break;
        }
        at += ranges[r][1];
        EXPECT_OK(minlsh_scratch_read(s, ranges[r][0], back, (size_t)ranges[r][1]));
        for (j = 0; j < ranges[r][1]; j++)
            if (back[j] != piece_byte(tt, ii, j)) bad++;
    }
    EXPECT_EQ_U64(at, total);
    EXPECT_EQ_U64(bad, 0);
    EXPECT_EQ_INT(minlsh_scratch_errno(s), 0);
    minlsh_scratch_free(s);
}

/* A folder that cannot hold the file: missing, not a folder, not writable.
 * Root writes anywhere, so as root the not-writable case runs as nobody. */
static void test_open_errors(void) {
    char *dir = make_dir("err"), path[4200];
    minlsh_scratch *s = (minlsh_scratch *)&s; /* set to NULL by the failure */
    int fd, cwd;
    if (dir == NULL) return;
    snprintf(path, sizeof path, "%s/missing", dir);
    errno = 0;
    EXPECT_ERR(minlsh_scratch_open(&s, path, NULL), MINLSH_E_IO);
    EXPECT_EQ_INT(errno, ENOENT);
    EXPECT(s == NULL);

    snprintf(path, sizeof path, "%s/file", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    EXPECT(fd >= 0);
    if (fd >= 0) close(fd);
    s = (minlsh_scratch *)&s;
    errno = 0;
    EXPECT_ERR(minlsh_scratch_open(&s, path, NULL), MINLSH_E_IO);
    EXPECT_EQ_INT(errno, ENOTDIR);
    EXPECT(s == NULL);
    unlink(path);

    snprintf(path, sizeof path, "%s/ro", dir);
    EXPECT_OK(mkdir(path, 0555));
    chmod(path, 0555); /* whatever the umask */
    cwd = open(".", O_RDONLY | O_DIRECTORY);
    if (geteuid() != 0) {
        s = (minlsh_scratch *)&s;
        errno = 0;
        EXPECT_ERR(minlsh_scratch_open(&s, path, NULL), MINLSH_E_IO);
        EXPECT_EQ_INT(errno, EACCES);
        EXPECT(s == NULL);
    } else if (chmod(dir, 0711) == 0 && chdir(dir) == 0 && seteuid(65534) == 0) {
        /* by a relative path: nobody need not reach dir through its parents */
        int rc, err;
        s = (minlsh_scratch *)&s;
        errno = 0;
        rc = minlsh_scratch_open(&s, "ro", NULL);
        err = errno;
        EXPECT_OK(seteuid(0));
        EXPECT_EQ_INT(rc, MINLSH_E_IO);
        EXPECT_EQ_INT(err, EACCES);
        EXPECT(s == NULL);
        minlsh_scratch_free(rc == 0 ? s : NULL);
    } else {
        printf("skipped not_writable: running as root and cannot act as uid 65534 (%s)\n",
               strerror(errno));
    }
    if (cwd >= 0) {
        EXPECT_OK(fchdir(cwd));
        close(cwd);
    }
    EXPECT_EQ_INT(count_entries(path), 0);
    rmdir(path);
    rmdir(dir);
    free(dir);
}

typedef struct failer {
    minlsh_scratch *s;
    int rc, err;
} failer;

static void *append_too_much(void *arg) {
    failer *f = (failer *)arg;
    static unsigned char block[1 << 16];
    int i;
    errno = 0;
    for (i = 0; i < 32 && f->rc == 0; i++)
        f->rc = minlsh_scratch_append(NULL, f->s, block, sizeof block);
    f->err = errno;
    return NULL;
}

/* A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes appends fail
 * with EFBIG on a worker thread; the main thread reads that errno from the
 * handle, and it stays the first failure's. */
static void test_first_errno_kept(void) {
    struct rlimit old, lim;
    failer f;
    pthread_t th;
    void (*old_handler)(int);
    minlsh_scratch *s = NULL;
    EXPECT_OK(minlsh_scratch_open(&s, getenv("MINLSH_TEST_TMP"), NULL));
    if (s == NULL) return;
    EXPECT_OK(getrlimit(RLIMIT_FSIZE, &old));
    lim = old;
    lim.rlim_cur = 1 << 20; /* 16 appends of 64 KiB fit, the 17th does not */
    old_handler = signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) {
        TL_FAIL("setrlimit: %s", strerror(errno));
    } else {
        memset(&f, 0, sizeof f);
        f.s = s;
        EXPECT_EQ_INT(pthread_create(&th, NULL, append_too_much, &f), 0);
        pthread_join(th, NULL);
        EXPECT_OK(setrlimit(RLIMIT_FSIZE, &old));
        EXPECT_EQ_INT(f.rc, MINLSH_E_IO);
        EXPECT_EQ_INT(f.err, EFBIG);
        errno = 0;
        EXPECT_EQ_INT(minlsh_scratch_errno(s), EFBIG);
        /* The failed append took its range; later appends and reads go on. */
        EXPECT_EQ_U64(minlsh_scratch_size(s), 17u << 16);
        EXPECT_OK(minlsh_scratch_append(NULL, s, "x", 1));
        EXPECT_EQ_INT(minlsh_scratch_errno(s), EFBIG);
    }
    signal(SIGXFSZ, old_handler);
    minlsh_scratch_free(s);
}

static void test_null_arguments_and_allocator(void) {
    minlsh_scratch *s = NULL;
    minlsh_allocator bad = {NULL, NULL, NULL};
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    uint64_t off;
    char c;
    int n, first_ok = 0;
    EXPECT_ERR(minlsh_scratch_open(NULL, NULL, NULL), MINLSH_E_NULL);
    s = (minlsh_scratch *)&s;
    EXPECT_ERR(minlsh_scratch_open(&s, NULL, &bad), MINLSH_E_PARAM);
    EXPECT(s == NULL);
    EXPECT_ERR(minlsh_scratch_append(&off, NULL, "x", 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_scratch_read(NULL, 0, &c, 1), MINLSH_E_NULL);
    EXPECT_EQ_U64(minlsh_scratch_size(NULL), 0);
    EXPECT_EQ_INT(minlsh_scratch_errno(NULL), 0);
    minlsh_scratch_free(NULL);

    /* Every allocation failing in turn: NOMEM, no handle, nothing leaked. */
    for (n = 1; n < 10 && first_ok == 0; n++) {
        int rc;
        ta_fail_nth(&ta, n);
        s = (minlsh_scratch *)&s;
        rc = minlsh_scratch_open(&s, NULL, &al);
        if (rc == 0) {
            long calls = ta_calls(&ta);
            first_ok = n;
            EXPECT(s != NULL);
            EXPECT(ta_blocks(&ta) > 0); /* the handle is the allocator's */
            /* only open allocates */
            EXPECT_OK(minlsh_scratch_append(&off, s, "abc", 3));
            EXPECT_OK(minlsh_scratch_read(s, 1, &c, 1));
            EXPECT_EQ_INT(c, 'b');
            EXPECT_EQ_U64(minlsh_scratch_size(s) + (uint64_t)minlsh_scratch_errno(s), 3);
            EXPECT_EQ_INT(ta_calls(&ta), calls);
            EXPECT_ERR(minlsh_scratch_append(&off, s, NULL, 1), MINLSH_E_NULL);
            EXPECT_ERR(minlsh_scratch_read(s, 0, NULL, 1), MINLSH_E_NULL);
            EXPECT_EQ_U64(minlsh_scratch_size(s), 3); /* a refused append took nothing */
            minlsh_scratch_free(s);
        } else {
            EXPECT_EQ_INT(rc, MINLSH_E_NOMEM);
            EXPECT(s == NULL);
        }
        EXPECT_EQ_INT(ta_blocks(&ta), 0);
    }
    ta_fail_nth(&ta, 0);
    EXPECT_EQ_INT(first_ok, 2); /* one allocation, the handle; the 2nd is never made */
}

int main(void) {
    RUN(test_round_trip);
    RUN(test_default_dir);
    RUN(test_concurrent_appends);
    RUN(test_open_errors);
    RUN(test_first_errno_kept);
    RUN(test_null_arguments_and_allocator);
    return TL_SUMMARY("scratch");
}
