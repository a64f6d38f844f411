/*
 * Insert if novel (minlsh_index_insert_novel) and the file lock
 * (minlsh_filelock_*): the decision against a plain query-then-insert loop
 * written here, the best match and its ties, a caller's verifier (order of
 * the calls, early stop, errors passed through, min_estimate), every
 * argument error leaving the index unchanged, allocation failures, and
 * shared and exclusive locks that survive a save renaming the file.
 */
#define _DEFAULT_SOURCE 1 /* flock, to show the trap the lock file avoids */
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define K 64
#define B 16
#define R 4

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void random_sig(uint32_t *sig) {
    int i;
    for (i = 0; i < K; i++) sig[i] = rnd() & 0x7FFFFFFF;
}

/* A copy of src with `changed` positions (the first ones) altered. */
static void near_sig(uint32_t *dst, const uint32_t *src, int changed) {
    int i;
    memcpy(dst, src, K * sizeof *dst);
    for (i = 0; i < changed; i++) dst[i] = src[i] ^ 0x40000000u;
}

static minlsh_index *new_index(const minlsh_allocator *al) {
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    if (minlsh_family_new(&fam, K, 1, NULL) != 0) return NULL;
    (void)minlsh_index_new(&ix, fam, 0, B, R, al);
    minlsh_family_free(fam);
    return ix;
}

static void test_decisions(void) {
    minlsh_index *ix = new_index(NULL);
    minlsh_novel_options o;
    minlsh_novel_result res;
    uint32_t a[K], a2[K], c[K], empty[K];
    int i;
    EXPECT(ix != NULL);
    EXPECT_OK(minlsh_novel_options_init(&o, MINLSH_NOVEL_OPTIONS_VERSION));
    EXPECT(o.threshold == 0.8 && o.verify == NULL && o.min_estimate == 0.0);
    EXPECT_ERR(minlsh_novel_options_init(&o, 0), MINLSH_E_VERSION);
    random_sig(a);
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 1, a, K, NULL));
    EXPECT(res.novel == 1 && res.has_match == 0 && res.candidates == 0 && res.match == 0);
    EXPECT_EQ_U64(minlsh_index_count(ix), 1);
    /* 6 of 64 values differ: estimate 58/64 = 0.906 >= 0.8. */
    near_sig(a2, a, 6);
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 2, a2, K, NULL));
    EXPECT(res.novel == 0 && res.has_match == 1 && res.match == 1);
    EXPECT(res.similarity == 58.0 / 64.0 && res.candidates == 1 && res.verified == 0);
    EXPECT_EQ_U64(minlsh_index_count(ix), 1);
    EXPECT(minlsh_index_contains(ix, 2) == 0);
    /* At a higher threshold the same document is novel, with its nearest
     * candidate reported. */
    o.threshold = 0.95;
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 2, a2, K, &o));
    EXPECT(res.novel == 1 && res.has_match == 1 && res.match == 1 &&
           res.similarity == 58.0 / 64.0);
    EXPECT(minlsh_index_contains(ix, 2) == 1);
    /* The best candidate wins: a copy of a2 is 1.0 to id 2, 0.906 to 1. */
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 3, a2, K, NULL));
    EXPECT(res.novel == 0 && res.match == 2 && res.similarity == 1.0 && res.candidates == 2);
    /* Equal similarities: the smallest id. c is 63/64 to 1 (novel at
     * threshold 1.0, so inserted as 4), then a copy of c is 1.0 to 4 only,
     * and a copy of a is 1.0 to 1 and 63/64 to 4. */
    o.threshold = 1.0;
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 4, a, K, &o));
    EXPECT(res.novel == 0 && res.match == 1 && res.similarity == 1.0);
    for (i = 0; i < K; i++) c[i] = a[i];
    c[K - 1] ^= 1u;
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 4, c, K, &o)); /* 63/64 < 1.0 */
    EXPECT(res.novel == 1 && res.match == 1 && res.similarity == 63.0 / 64.0);
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 5, c, K, NULL));
    EXPECT(res.novel == 0 && res.match == 4 && res.similarity == 1.0);
    /* The empty signature is never a near-duplicate: inserted, twice. */
    for (i = 0; i < K; i++) empty[i] = MINLSH_EMPTY_VALUE;
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 10, empty, K, NULL));
    EXPECT(res.novel == 1 && res.has_match == 0);
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 11, empty, K, NULL));
    EXPECT(res.novel == 1 && minlsh_index_count(ix) == 5);
    minlsh_index_free(ix);
}

static void test_errors(void) {
    minlsh_index *ix = new_index(NULL);
    minlsh_novel_options o = MINLSH_NOVEL_OPTIONS_INIT;
    minlsh_novel_result res;
    uint32_t a[K];
    random_sig(a);
    EXPECT_OK(minlsh_index_insert(ix, 7, a, K));
    EXPECT_ERR(minlsh_index_insert_novel(NULL, ix, 1, a, K, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_insert_novel(&res, NULL, 1, a, K, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 1, NULL, K, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 1, a, K - 1, NULL), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 7, a, K, NULL), MINLSH_E_EXISTS);
    o.threshold = 0.0;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 1, a, K, &o), MINLSH_E_PARAM);
    o.threshold = 1.5;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 1, a, K, &o), MINLSH_E_PARAM);
    o.threshold = NAN;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 1, a, K, &o), MINLSH_E_PARAM);
    o.threshold = 0.8;
    o.min_estimate = -0.1;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 1, a, K, &o), MINLSH_E_PARAM);
    o.min_estimate = 0;
    o.reserved = 1;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 1, a, K, &o), MINLSH_E_PARAM);
    o.reserved = 0;
    o.version = 2;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 1, a, K, &o), MINLSH_E_VERSION);
    EXPECT_EQ_U64(minlsh_index_count(ix), 1);
    EXPECT(minlsh_index_contains(ix, 1) == 0);
    minlsh_index_free(ix);
}

/* The same decisions as the loop a caller would write with a query. */
static void test_against_loop(void) {
    minlsh_index *a = new_index(NULL), *b = new_index(NULL);
    uint32_t base[20][K], sig[K];
    uint64_t ids[4096];
    double sims[4096];
    int i, novel = 0, dups = 0;
    for (i = 0; i < 20; i++) random_sig(base[i]);
    for (i = 0; i < 2000; i++) {
        minlsh_novel_result res;
        size_t n = 0, c;
        double best = -1;
        uint64_t best_id = 0;
        near_sig(sig, base[rnd() % 20], (int)(rnd() % 40));
        sig[K - 1] = rnd(); /* distinct signatures */
        EXPECT_OK(minlsh_index_insert_novel(&res, a, (uint64_t)i, sig, K, NULL));
        EXPECT_OK(minlsh_index_query(b, sig, K, ids, sims, 4096, &n));
        for (c = 0; c < n; c++)
            if (sims[c] > best) best = sims[c], best_id = ids[c];
        if (best >= 0.8) {
            EXPECT_MSG(res.novel == 0 && res.match == best_id && res.similarity == best,
                       "document %d: novel %u match %" PRIu64 ", loop %" PRIu64, i,
                       (unsigned)res.novel, res.match, best_id);
            dups++;
        } else {
            EXPECT_MSG(res.novel == 1, "document %d: novel %u, loop best %g", i,
                       (unsigned)res.novel, best);
            EXPECT_OK(minlsh_index_insert(b, (uint64_t)i, sig, K));
            novel++;
        }
        EXPECT(res.candidates == n);
    }
    EXPECT(novel > 20 && dups > 100); /* both kinds of decision were made */
    EXPECT_EQ_U64(minlsh_index_count(a), minlsh_index_count(b));
    minlsh_index_free(a);
    minlsh_index_free(b);
}

/* A verifier with a similarity per id, recording the calls. */
typedef struct verifier {
    double sim[16];
    uint64_t calls[16];
    int n_calls;
    int fail; /* return this when non-zero */
} verifier;

static int verify_cb(void *opaque, uint64_t id, double estimate, double *similarity) {
    verifier *v = (verifier *)opaque;
    (void)estimate;
    if (v->n_calls < 16) v->calls[v->n_calls] = id;
    v->n_calls++;
    if (v->fail) return v->fail;
    *similarity = v->sim[id];
    return 0;
}

static void test_verify(void) {
    minlsh_index *ix = new_index(NULL);
    minlsh_novel_options o = MINLSH_NOVEL_OPTIONS_INIT;
    minlsh_novel_result res;
    verifier v;
    uint32_t a[K], s[K], q[K];
    random_sig(a);
    /* ids 1..4 at estimates 60, 58, 58, 52 (of 64) to the query a. */
    near_sig(s, a, 4);
    EXPECT_OK(minlsh_index_insert(ix, 1, s, K));
    near_sig(s, a, 6);
    EXPECT_OK(minlsh_index_insert(ix, 3, s, K));
    near_sig(s, a, 6);
    s[K - 1] ^= 2u; /* another signature, the same estimate but one */
    s[6] ^= 1u;     /* (7 changes): 57 */
    EXPECT_OK(minlsh_index_insert(ix, 2, s, K));
    near_sig(s, a, 12);
    EXPECT_OK(minlsh_index_insert(ix, 4, s, K));
    memcpy(q, a, sizeof q);
    memset(&v, 0, sizeof v);
    v.sim[1] = 0.5;
    v.sim[2] = 0.85;
    v.sim[3] = 0.7;
    v.sim[4] = 0.99;
    o.verify = verify_cb;
    o.opaque = &v;
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 9, q, K, &o));
    /* Checked best estimate first (1: 60, 3: 58, 2: 57), stopping at 2. */
    EXPECT_EQ_INT(v.n_calls, 3);
    EXPECT(v.calls[0] == 1 && v.calls[1] == 3 && v.calls[2] == 2);
    EXPECT(res.novel == 0 && res.match == 2 && res.similarity == 0.85 && res.verified == 3);
    EXPECT(res.candidates == 4 && minlsh_index_contains(ix, 9) == 0);
    /* Nothing passes: every candidate checked, the best reported, inserted. */
    memset(&v, 0, sizeof v);
    v.sim[1] = 0.1;
    v.sim[4] = 0.3;
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 9, q, K, &o));
    EXPECT(v.n_calls == 4 && res.novel == 1 && res.match == 4 && res.similarity == 0.3);
    EXPECT_OK(minlsh_index_remove(ix, 9));
    /* min_estimate: 4 (estimate 52/64 = 0.81) is never checked. */
    memset(&v, 0, sizeof v);
    v.sim[4] = 1.0;
    o.min_estimate = 0.85;
    EXPECT_OK(minlsh_index_insert_novel(&res, ix, 9, q, K, &o));
    EXPECT(v.n_calls == 3 && res.novel == 1 && res.verified == 3);
    EXPECT_OK(minlsh_index_remove(ix, 9));
    o.min_estimate = 0;
    /* The verifier's error comes back; nothing is inserted. */
    memset(&v, 0, sizeof v);
    v.fail = -42;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 9, q, K, &o), -42);
    EXPECT_EQ_INT(v.n_calls, 1);
    EXPECT(minlsh_index_contains(ix, 9) == 0 && minlsh_index_count(ix) == 4);
    /* A similarity outside [0, 1] is the caller's mistake. */
    memset(&v, 0, sizeof v);
    v.sim[1] = 1.5;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 9, q, K, &o), MINLSH_E_PARAM);
    v.sim[1] = NAN;
    EXPECT_ERR(minlsh_index_insert_novel(&res, ix, 9, q, K, &o), MINLSH_E_PARAM);
    EXPECT(minlsh_index_count(ix) == 4);
    minlsh_index_free(ix);
}

/* Allocation failures, on the path with more candidates than the stack
 * holds: the index is unchanged and nothing leaks. */
static void test_nomem(void) {
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_index *ix = new_index(&al);
    minlsh_novel_result res;
    uint32_t a[K], s[K];
    long nth;
    int i, ok = 0;
    random_sig(a);
    for (i = 0; i < 100; i++) { /* 100 candidates, all below 0.8 */
        near_sig(s, a, 20);
        s[K - 1] = (uint32_t)i;
        s[K - 2] = (uint32_t)i * 7u;
        EXPECT_OK(minlsh_index_insert(ix, (uint64_t)i, s, K));
    }
    for (nth = 1; nth < 200 && !ok; nth++) {
        long blocks = ta_blocks(&ta);
        int rc;
        ta_fail_nth(&ta, nth);
        rc = minlsh_index_insert_novel(&res, ix, 1000, a, K, NULL);
        ta_fail_nth(&ta, 0);
        if (rc == 0) {
            ok = 1;
            EXPECT(res.novel == 1 && res.candidates == 100);
            EXPECT(minlsh_index_contains(ix, 1000) == 1);
        } else {
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            EXPECT_EQ_U64(minlsh_index_count(ix), 100);
            EXPECT(minlsh_index_contains(ix, 1000) == 0);
            EXPECT_EQ_INT(ta_blocks(&ta), blocks);
        }
    }
    EXPECT(ok && nth > 2); /* at least two failures were injected and survived */
    minlsh_index_free(ix);
    EXPECT_EQ_INT(ta_blocks(&ta), 0);
    EXPECT_EQ_INT(ta_bad_frees(&ta), 0);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void test_filelock(void) {
    const char *dir = getenv("MINLSH_TEST_TMP");
    char path[512], lockpath[520];
    minlsh_filelock *x = NULL, *y = NULL, *z = NULL;
    minlsh_index *ix = new_index(NULL);
    struct stat st;
    double t0;
    snprintf(path, sizeof path, "%s/test_novel.%ld.mlsh", dir ? dir : "/tmp", (long)getpid());
    snprintf(lockpath, sizeof lockpath, "%s.lock", path);
    (void)unlink(lockpath);
    EXPECT_ERR(minlsh_filelock_new(NULL, path, MINLSH_LOCK_SHARED, 0, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_filelock_new(&x, NULL, MINLSH_LOCK_SHARED, 0, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_filelock_new(&x, path, 3, 0, NULL), MINLSH_E_PARAM);
    EXPECT(x == NULL);
    EXPECT_ERR(minlsh_filelock_new(&x, "/nonexistent-dir/x.mlsh", MINLSH_LOCK_SHARED, 0, NULL),
               MINLSH_E_IO);
    /* Shared locks coexist; an exclusive one waits for them. */
    EXPECT_OK(minlsh_filelock_new(&x, path, MINLSH_LOCK_SHARED, 0, NULL));
    EXPECT(stat(lockpath, &st) == 0 && st.st_size == 0);
    EXPECT_OK(minlsh_filelock_new(&y, path, MINLSH_LOCK_SHARED, 0, NULL));
    EXPECT_ERR(minlsh_filelock_new(&z, path, MINLSH_LOCK_EXCLUSIVE, 0, NULL), MINLSH_E_BUSY);
    EXPECT(z == NULL);
    t0 = now_ms();
    EXPECT_ERR(minlsh_filelock_new(&z, path, MINLSH_LOCK_EXCLUSIVE, 120, NULL), MINLSH_E_BUSY);
    EXPECT_MSG(now_ms() - t0 >= 115 && now_ms() - t0 < 2000, "waited %.0f ms for 120",
               now_ms() - t0);
    minlsh_filelock_free(x);
    minlsh_filelock_free(y);
    /* An exclusive lock excludes everyone, saves of the file
     * notwithstanding (they rename a new file over it). */
    EXPECT_OK(minlsh_filelock_new(&x, path, MINLSH_LOCK_EXCLUSIVE, 0, NULL));
    EXPECT_OK(minlsh_index_save(ix, path));
    EXPECT_OK(minlsh_index_save(ix, path));
    EXPECT_ERR(minlsh_filelock_new(&y, path, MINLSH_LOCK_SHARED, 0, NULL), MINLSH_E_BUSY);
    EXPECT_ERR(minlsh_filelock_new(&y, path, MINLSH_LOCK_EXCLUSIVE, 30, NULL), MINLSH_E_BUSY);
    minlsh_filelock_free(x);
    EXPECT_OK(minlsh_filelock_new(&y, path, MINLSH_LOCK_EXCLUSIVE, MINLSH_LOCK_WAIT_FOREVER,
                                  NULL));
    minlsh_filelock_free(y);
    {
        /* The trap: a lock on the index file itself is on the inode the
         * next save replaces, so a second "exclusive" lock succeeds. */
        int fd1 = open(path, O_RDONLY), fd2;
        EXPECT(fd1 >= 0 && flock(fd1, LOCK_EX | LOCK_NB) == 0);
        EXPECT_OK(minlsh_index_save(ix, path));
        fd2 = open(path, O_RDONLY);
        EXPECT_MSG(fd2 >= 0 && flock(fd2, LOCK_EX | LOCK_NB) == 0,
                   "a lock on the saved file itself was expected to be lost to the rename");
        if (fd2 >= 0) close(fd2);
        if (fd1 >= 0) close(fd1);
    }
    minlsh_filelock_free(NULL);
    {
        /* Allocation failures: nothing held, nothing leaked. */
        testalloc ta;
        minlsh_allocator al = ta_allocator(&ta);
        long nth;
        int rc = -1;
        for (nth = 1; nth < 10 && rc != 0; nth++) {
            ta_fail_nth(&ta, nth);
            rc = minlsh_filelock_new(&x, path, MINLSH_LOCK_EXCLUSIVE, 0, &al);
            ta_fail_nth(&ta, 0);
            if (rc != 0) {
                EXPECT_ERR(rc, MINLSH_E_NOMEM);
                EXPECT(x == NULL && ta_blocks(&ta) == 0);
            }
        }
        EXPECT(rc == 0 && nth > 2);
        EXPECT_ERR(minlsh_filelock_new(&y, path, MINLSH_LOCK_EXCLUSIVE, 0, NULL), MINLSH_E_BUSY);
        minlsh_filelock_free(x);
        EXPECT_EQ_INT(ta_blocks(&ta), 0);
    }
    (void)unlink(path);
    (void)unlink(lockpath);
    minlsh_index_free(ix);
}

int main(void) {
    RUN(test_decisions);
    RUN(test_errors);
    RUN(test_against_loop);
    RUN(test_verify);
    RUN(test_nomem);
    RUN(test_filelock);
    return TL_SUMMARY("test_novel");
}
