/*
 * The store (minlsh_store_*): created and opened again with its
 * configuration from the file; a wrong key or a disagreeing option refused;
 * add, query, remove and names; group commit; two handles in one process
 * and two processes on one store; a compaction elsewhere caught up with;
 * the state a kill leaves between a compaction's two renames; kill -9
 * during adds and compactions keeps every committed add; a damaged journal
 * refused and left as it is; exact verdicts with stored sets; every
 * allocation failure leaks nothing.
 *
 * MINLSH_KILL_RUNS sets the number of kill runs (default 30).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#define _DEFAULT_SOURCE 1 /* mkdtemp */
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Document i: 200 words, a few changed from its "family" (i / 4), so the
 * members of a family are near-duplicates of each other. */
static size_t doc_text(char *buf, size_t cap, uint64_t i, int changes) {
    uint64_t fam = i / 4, st = fam * 7919 + 17, st2 = i * 104729 + 3;
    size_t n = 0;
    int w;
    for (w = 0; w < 200; w++) {
        uint64_t word = tl_rand(&st) % 5000;
        if (changes > 0 && (int)(tl_rand(&st2) % 200) < changes) word = 5000 + tl_rand(&st2) % 100000;
        n += (size_t)snprintf(buf + n, cap - n, "w%llu ", (unsigned long long)word);
    }
    return n;
}

static void name_of(char *buf, size_t cap, uint64_t i) {
    snprintf(buf, cap, "https://example.org/page/%llu", (unsigned long long)i);
}

/* The stores live in a folder of /dev/shm where there is one: kill -9
 * safety does not depend on fsync reaching a disk (the page cache outlives
 * the process), and the thousands of syncs of the sweeps would take most
 * of the run on a disk. */
static char sdir[64], spath[4200];
static const char *store_path(const char *base) {
    if (sdir[0] != '\0') {
        snprintf(spath, sizeof spath, "%s/%s", sdir, base);
    } else {
        const char *t = tl_tmp_path(base);
        snprintf(spath, sizeof spath, "%s", t);
    }
    return spath;
}

static void shm_begin(void) {
    snprintf(sdir, sizeof sdir, "/dev/shm/minlsh-store-XXXXXX");
    if (mkdtemp(sdir) == NULL) sdir[0] = '\0';
}

static void shm_end(void) {
    DIR *d;
    struct dirent *e;
    char f[4300];
    if (sdir[0] == '\0') return;
    d = opendir(sdir);
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(f, sizeof f, "%s/%s", sdir, e->d_name);
        unlink(f);
    }
    if (d != NULL) closedir(d);
    rmdir(sdir);
}

static int add_doc(minlsh_store *s, uint64_t i, int changes, minlsh_store_result *r) {
    char text[2000], name[64];
    size_t n = doc_text(text, sizeof text, i, changes);
    name_of(name, sizeof name, i);
    return minlsh_store_add(r, s, text, n, name, strlen(name), 0);
}

static minlsh_store *open_store(const char *p, uint32_t flags) {
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *s = NULL;
    int rc;
    o.flags = flags;
    rc = minlsh_store_open(&s, p, &o);
    EXPECT_MSG(rc == 0, "%s: open: %s", p, minlsh_error_name(rc));
    return s;
}

static void test_create_open(void) {
    const char *p = store_path("store_create.st");
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_store *s = NULL, *t = NULL;
    uint8_t key[16] = {1, 2, 3};
    tl_remove_store(p);
    EXPECT_EQ_INT(minlsh_store_open(&s, p, NULL), MINLSH_E_NOTFOUND);
    EXPECT(s == NULL);
    so.k = 3;
    so.flags |= MINLSH_NORM_CASEFOLD;
    o.flags = MINLSH_STORE_CREATE;
    o.shingler = &so;
    o.num_perm = 64;
    o.seed = 42;
    o.threshold = 0.7;
    o.key = key;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    EXPECT_EQ_U64(minlsh_store_count(s), 0);
    EXPECT(minlsh_store_threshold(s) == 0.7);
    EXPECT_EQ_INT(minlsh_shingler_k(minlsh_store_view_shingler(s)), 3);
    minlsh_store_free(s);
    s = NULL;
    /* a worker gives the path and the key: the rest comes from the file */
    o = (minlsh_store_options)MINLSH_STORE_OPTIONS_INIT;
    o.key = key;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    EXPECT(minlsh_store_threshold(s) == 0.7);
    EXPECT_EQ_INT(minlsh_shingler_k(minlsh_store_view_shingler(s)), 3);
    EXPECT(minlsh_shingler_flags(minlsh_store_view_shingler(s)) & MINLSH_NORM_CASEFOLD);
    minlsh_store_free(s);
    s = NULL;
    /* the default key is not this store's key */
    EXPECT_EQ_INT(minlsh_store_open(&t, p, NULL), MINLSH_E_MISMATCH);
    EXPECT(t == NULL);
    /* creation fields that disagree with the file */
    o.num_perm = 128;
    EXPECT_EQ_INT(minlsh_store_open(&t, p, &o), MINLSH_E_MISMATCH);
    o.num_perm = 64;
    o.threshold = 0.8;
    EXPECT_EQ_INT(minlsh_store_open(&t, p, &o), MINLSH_E_MISMATCH);
    o.threshold = 0.7;
    o.flags = MINLSH_STORE_SETS;
    EXPECT_EQ_INT(minlsh_store_open(&t, p, &o), MINLSH_E_MISMATCH);
    o.flags = 0;
    so.k = 4;
    o.shingler = &so;
    EXPECT_EQ_INT(minlsh_store_open(&t, p, &o), MINLSH_E_MISMATCH);
    so.k = 3;
    EXPECT_OK(minlsh_store_open(&t, p, &o)); /* the same shingling, given again */
    minlsh_store_free(t);
    t = NULL;
    /* bad options */
    o.flags = MINLSH_STORE_CREATE | MINLSH_STORE_READONLY;
    EXPECT_EQ_INT(minlsh_store_open(&t, p, &o), MINLSH_E_PARAM);
    o.flags = 0;
    o.version = 99;
    EXPECT_EQ_INT(minlsh_store_open(&t, p, &o), MINLSH_E_VERSION);
    EXPECT_EQ_INT(minlsh_store_options_init(&o, 1), 0);
    EXPECT_EQ_INT(o.version, 1);
    EXPECT_EQ_INT(minlsh_store_options_init(&o, 2), MINLSH_E_VERSION);
    /* NULL shingler options at creation mean today's defaults (CJK words) */
    tl_remove_store(p);
    s = open_store(p, MINLSH_STORE_CREATE);
    EXPECT_EQ_INT(minlsh_shingler_flags(minlsh_store_view_shingler(s)), MINLSH_NORM_CJK_WORDS);
    minlsh_store_free(s);
    /* an index file that is not a store */
    {
        minlsh_family *f = NULL;
        minlsh_index *ix = NULL;
        EXPECT_OK(minlsh_family_new(&f, 16, 1, NULL));
        EXPECT_OK(minlsh_index_new(&ix, f, 0, 4, 4, NULL));
        EXPECT_OK(minlsh_index_save(ix, p));
        EXPECT_EQ_INT(minlsh_store_open(&t, p, NULL), MINLSH_E_FORMAT);
        minlsh_index_free(ix);
        minlsh_family_free(f);
    }
    tl_remove_store(p);
}

static void test_add_query_remove(void) {
    const char *p = store_path("store_add.st");
    minlsh_store *s;
    minlsh_store_result r;
    char text[2000], name[64], got[64];
    uint64_t id, i;
    size_t n;
    tl_remove_store(p);
    s = open_store(p, MINLSH_STORE_CREATE);
    EXPECT_OK(add_doc(s, 0, 0, &r));
    EXPECT(r.novel && r.inserted && r.id == 0 && !r.has_match);
    EXPECT_OK(add_doc(s, 1, 1, &r)); /* a near-duplicate of 0 */
    EXPECT(!r.novel && !r.inserted && r.has_match && r.match == 0 && !r.exact);
    EXPECT(r.similarity >= 0.8 && r.similarity < 1.0);
    EXPECT_OK(add_doc(s, 4, 0, &r)); /* another family */
    EXPECT(r.novel && r.inserted && r.id == 1);
    EXPECT_EQ_U64(minlsh_store_count(s), 2);
    /* a name is unique */
    n = doc_text(text, sizeof text, 8, 0);
    name_of(name, sizeof name, 4);
    EXPECT_EQ_INT(minlsh_store_add(&r, s, text, n, name, strlen(name), 0), MINLSH_E_EXISTS);
    EXPECT_OK(minlsh_store_find_name(&id, s, name, strlen(name)));
    EXPECT_EQ_U64(id, 1);
    EXPECT_EQ_INT(minlsh_store_copy_name(s, 1, got, 3, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, strlen(name));
    EXPECT_OK(minlsh_store_copy_name(s, 1, got, sizeof got, &n));
    EXPECT(n == strlen(name) && memcmp(got, name, n) == 0);
    /* ALWAYS inserts a near-duplicate too */
    n = doc_text(text, sizeof text, 2, 1);
    EXPECT_OK(minlsh_store_add(&r, s, text, n, "dup", 3, MINLSH_STORE_ADD_ALWAYS));
    EXPECT(!r.novel && r.inserted && r.id == 2);
    /* query decides without inserting */
    n = doc_text(text, sizeof text, 5, 1);
    EXPECT_OK(minlsh_store_query(&r, s, text, n));
    EXPECT(!r.novel && !r.inserted && r.match == 1);
    /* remove by id and by name */
    EXPECT_OK(minlsh_store_remove(s, 1));
    EXPECT_EQ_INT(minlsh_store_remove(s, 1), MINLSH_E_NOTFOUND);
    EXPECT_EQ_INT(minlsh_store_find_name(&id, s, name, strlen(name)), MINLSH_E_NOTFOUND);
    EXPECT_OK(minlsh_store_query(&r, s, text, n));
    EXPECT(r.novel); /* its only near-duplicate is gone */
    EXPECT_OK(minlsh_store_remove_name(s, "dup", 3));
    EXPECT_EQ_INT(minlsh_store_remove_name(s, "dup", 3), MINLSH_E_NOTFOUND);
    EXPECT_EQ_U64(minlsh_store_count(s), 1);
    for (i = 10; i < 60; i++) EXPECT_OK(add_doc(s, i * 4, 0, NULL));
    EXPECT_EQ_U64(minlsh_store_count(s), 51);
    minlsh_store_free(s);
    /* all of it from the journal, ids never given twice */
    s = open_store(p, 0);
    EXPECT_EQ_U64(minlsh_store_count(s), 51);
    EXPECT_EQ_INT(minlsh_store_copy_name(s, 1, got, sizeof got, &n), MINLSH_E_NOTFOUND);
    name_of(name, sizeof name, 40);
    EXPECT_OK(minlsh_store_find_name(&id, s, name, strlen(name)));
    EXPECT_EQ_U64(id, 3);
    EXPECT_OK(add_doc(s, 1000, 0, &r));
    EXPECT_EQ_U64(r.id, 53);
    /* and after a compaction */
    EXPECT_OK(minlsh_store_compact(s));
    EXPECT_EQ_U64(minlsh_store_count(s), 52);
    minlsh_store_free(s);
    s = open_store(p, MINLSH_STORE_READONLY);
    EXPECT_EQ_U64(minlsh_store_count(s), 52);
    EXPECT_OK(minlsh_store_find_name(&id, s, name, strlen(name)));
    EXPECT_EQ_U64(id, 3);
    n = doc_text(text, sizeof text, 0, 1);
    EXPECT_OK(minlsh_store_query(&r, s, text, n));
    EXPECT(!r.novel && r.match == 0);
    EXPECT_EQ_INT(add_doc(s, 2000, 0, NULL), MINLSH_E_STATE);
    EXPECT_EQ_INT(minlsh_store_begin(s), MINLSH_E_STATE);
    EXPECT_EQ_INT(minlsh_store_compact(s), MINLSH_E_STATE);
    minlsh_store_free(s);
    s = open_store(p, 0);
    EXPECT_OK(add_doc(s, 2000, 0, &r));
    EXPECT_EQ_U64(r.id, 54);
    minlsh_store_free(s);
    tl_remove_store(p);
}

static void test_group_commit_and_handles(void) {
    const char *p = store_path("store_group.st");
    minlsh_store *a, *b;
    minlsh_store_result r;
    uint64_t i;
    tl_remove_store(p);
    a = open_store(p, MINLSH_STORE_CREATE);
    b = open_store(p, 0);
    EXPECT_OK(minlsh_store_begin(a));
    EXPECT_EQ_INT(minlsh_store_begin(a), MINLSH_E_STATE);
    for (i = 0; i < 16; i++) EXPECT_OK(add_doc(a, i * 4, 0, NULL));
    EXPECT_OK(minlsh_store_sync(a));
    for (i = 16; i < 20; i++) EXPECT_OK(add_doc(a, i * 4, 0, NULL));
    /* the other handle waits for the lock: none to be had now */
    {
        minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
        minlsh_store *c = NULL;
        o.lock_timeout_ms = 1;
        EXPECT_EQ_INT(minlsh_store_open(&c, p, &o), MINLSH_E_BUSY);
    }
    EXPECT_OK(minlsh_store_commit(a));
    EXPECT_EQ_INT(minlsh_store_commit(a), MINLSH_E_STATE);
    /* b catches up at its next change, reading only the new records */
    EXPECT_EQ_U64(minlsh_store_count(b), 0);
    EXPECT_OK(add_doc(b, 1, 1, &r));
    EXPECT(!r.novel && r.match == 0);
    EXPECT_OK(add_doc(b, 400, 0, &r));
    EXPECT_EQ_U64(r.id, 20);
    EXPECT_EQ_U64(minlsh_store_count(b), 21);
    EXPECT_OK(minlsh_store_refresh(a));
    EXPECT_EQ_U64(minlsh_store_count(a), 21);
    /* a compaction by a, then b goes on */
    EXPECT_OK(minlsh_store_compact(a));
    EXPECT_OK(add_doc(b, 404, 0, &r));
    EXPECT_EQ_U64(r.id, 21);
    EXPECT_OK(add_doc(a, 408, 0, &r));
    EXPECT_EQ_U64(r.id, 22);
    EXPECT_OK(minlsh_store_refresh(b));
    EXPECT_EQ_U64(minlsh_store_count(b), 23);
    EXPECT_EQ_U64(minlsh_store_count(a), 23);
    minlsh_store_free(a);
    minlsh_store_free(b);
    tl_remove_store(p);
}

/* A rollback commits nothing of what was added since begin, releases the
 * lock, and the next transaction of the same handle starts from the
 * committed state. */
static void test_rollback(void) {
    const char *p = store_path("store_rollback.st");
    minlsh_store *a, *b;
    minlsh_store_result r;
    uint64_t id;
    tl_remove_store(p);
    a = open_store(p, MINLSH_STORE_CREATE);
    EXPECT_EQ_INT(minlsh_store_rollback(a), MINLSH_E_STATE);
    EXPECT_EQ_INT(minlsh_store_rollback(NULL), MINLSH_E_NULL);
    EXPECT_OK(add_doc(a, 0, 0, NULL));
    EXPECT_OK(minlsh_store_begin(a));
    EXPECT_OK(add_doc(a, 4, 0, NULL));
    EXPECT_OK(add_doc(a, 8, 0, NULL));
    EXPECT_EQ_U64(minlsh_store_count(a), 3);
    EXPECT_OK(minlsh_store_rollback(a));
    /* the view is the committed one at once: const calls need no reload */
    EXPECT_EQ_U64(minlsh_store_count(a), 1);
    {
        char text[2000];
        size_t n = doc_text(text, sizeof text, 8, 0);
        EXPECT_OK(minlsh_store_query(&r, a, text, n));
        EXPECT(r.novel);
    }
    /* the lock is free: another handle opens at once and sees one document */
    {
        minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
        minlsh_store *c = NULL;
        o.lock_timeout_ms = 1;
        EXPECT_OK(minlsh_store_open(&c, p, &o));
        EXPECT_EQ_U64(minlsh_store_count(c), 1);
        minlsh_store_free(c);
    }
    /* the handle reloads: the names rolled back are free, ids go on from 1 */
    EXPECT_OK(add_doc(a, 4, 0, &r));
    EXPECT_EQ_U64(r.id, 1);
    EXPECT_EQ_U64(minlsh_store_count(a), 2);
    b = open_store(p, 0);
    EXPECT_EQ_U64(minlsh_store_count(b), 2);
    {
        char name[64];
        name_of(name, sizeof name, 8);
        EXPECT_EQ_INT(minlsh_store_find_name(&id, b, name, strlen(name)), MINLSH_E_NOTFOUND);
        name_of(name, sizeof name, 4);
        EXPECT_OK(minlsh_store_find_name(&id, b, name, strlen(name)));
        EXPECT_EQ_U64(id, 1);
    }
    minlsh_store_free(a);
    minlsh_store_free(b);
    tl_remove_store(p);
}

/* Two processes adding at once: every add lands, with its name. */
static void test_two_processes(void) {
    const char *p = store_path("store_procs.st");
    minlsh_store *s;
    pid_t pid;
    int status, bad = 0;
    uint64_t i, id;
    char name[64];
    tl_remove_store(p);
    s = open_store(p, MINLSH_STORE_CREATE);
    minlsh_store_free(s);
    pid = fork();
    if (pid == 0) {
        minlsh_store *c = NULL;
        if (minlsh_store_open(&c, p, NULL) != 0) _exit(2);
        for (i = 0; i < 200; i += 2)
            if (add_doc(c, i * 4, 0, NULL) != 0) _exit(3);
        if (minlsh_store_compact(c) != 0 && 0) _exit(4);
        minlsh_store_free(c);
        _exit(0);
    }
    s = open_store(p, 0);
    for (i = 1; i < 200; i += 2) {
        EXPECT_OK(add_doc(s, i * 4, 0, NULL));
        if (i == 101) {
            int rc = minlsh_store_compact(s);
            EXPECT(rc == 0 || rc == MINLSH_E_BUSY);
        }
    }
    waitpid(pid, &status, 0);
    EXPECT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    EXPECT_OK(minlsh_store_refresh(s));
    EXPECT_EQ_U64(minlsh_store_count(s), 200);
    for (i = 0; i < 200; i++) {
        name_of(name, sizeof name, i * 4);
        if (minlsh_store_find_name(&id, s, name, strlen(name)) != 0) bad++;
    }
    EXPECT_MSG(bad == 0, "%s: %d names missing", p, bad);
    minlsh_store_free(s);
    tl_remove_store(p);
}

static int copy_file(const char *from, const char *to) {
    FILE *f = fopen(from, "rb"), *g;
    char buf[8192];
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

/* Killed between a compaction's two renames: the new file with the old
 * journal. Its records up to the compaction are in the file and are not
 * applied again; records added after it, to that old journal, are. */
static void test_between_renames(void) {
    const char *p = store_path("store_renames.st");
    char jp[4300], saved[4300];
    minlsh_store *s;
    uint64_t i;
    tl_remove_store(p);
    snprintf(jp, sizeof jp, "%s.journal", p);
    snprintf(saved, sizeof saved, "%s.journal.saved", p);
    s = open_store(p, MINLSH_STORE_CREATE);
    for (i = 0; i < 30; i++) EXPECT_OK(add_doc(s, i * 4, 0, NULL));
    EXPECT_OK(minlsh_store_remove(s, 3));
    EXPECT_OK(copy_file(jp, saved) == 0 ? 0 : MINLSH_E_IO);
    EXPECT_OK(minlsh_store_compact(s));
    minlsh_store_free(s);
    EXPECT(rename(saved, jp) == 0); /* the journal the first rename left */
    s = open_store(p, 0);
    EXPECT_EQ_U64(minlsh_store_count(s), 29);
    for (i = 30; i < 40; i++) EXPECT_OK(add_doc(s, i * 4, 0, NULL));
    minlsh_store_free(s);
    s = open_store(p, 0);
    EXPECT_EQ_U64(minlsh_store_count(s), 39);
    EXPECT_OK(minlsh_store_compact(s));
    minlsh_store_free(s);
    s = open_store(p, MINLSH_STORE_READONLY);
    EXPECT_EQ_U64(minlsh_store_count(s), 39);
    minlsh_store_free(s);
    tl_remove_store(p);
}

static void test_damaged_journal(void) {
    const char *p = store_path("store_damaged.st");
    char jp[4300];
    minlsh_store *s, *t = NULL;
    FILE *f;
    long size, size2;
    int c;
    uint64_t i;
    tl_remove_store(p);
    snprintf(jp, sizeof jp, "%s.journal", p);
    s = open_store(p, MINLSH_STORE_CREATE);
    for (i = 0; i < 20; i++) EXPECT_OK(add_doc(s, i * 4, 0, NULL));
    minlsh_store_free(s);
    f = fopen(jp, "r+b");
    EXPECT(f != NULL);
    if (f == NULL) return;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 200, SEEK_SET); /* inside the first record: 19 commits after it */
    c = fgetc(f);
    fseek(f, 200, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
    EXPECT_EQ_INT(minlsh_store_open(&t, p, NULL), MINLSH_E_CORRUPT);
    EXPECT_EQ_INT(minlsh_store_open(&t, p, &(minlsh_store_options){.version = 1, .flags = MINLSH_STORE_READONLY}),
                  MINLSH_E_CORRUPT);
    f = fopen(jp, "rb");
    EXPECT(f != NULL);
    if (f != NULL) {
        fseek(f, 0, SEEK_END);
        size2 = ftell(f);
        fclose(f);
        EXPECT_MSG(size2 == size, "%s: %ld bytes, %ld before the open", jp, size2, size);
    }
    tl_remove_store(p);
}

/* With sets, a verdict is the exact Jaccard: a near-duplicate iff the
 * exact similarity to the match reaches the threshold. */
static void test_exact(void) {
    const char *p = store_path("store_exact.st"), *q = store_path("store_estimate.st");
    minlsh_store *s, *e;
    minlsh_shingleset *a = NULL, *b = NULL;
    minlsh_store_result r, re;
    char text[2000], t2[2000];
    size_t n, n2;
    uint64_t i;
    int checked = 0;
    char qpath[4300];
    snprintf(qpath, sizeof qpath, "%s", q);
    p = store_path("store_exact.st");
    tl_remove_store(p);
    tl_remove_store(qpath);
    s = open_store(p, MINLSH_STORE_CREATE | MINLSH_STORE_SETS);
    e = open_store(qpath, MINLSH_STORE_CREATE);
    EXPECT_OK(minlsh_shingleset_new(&a, NULL));
    EXPECT_OK(minlsh_shingleset_new(&b, NULL));
    for (i = 0; i < 200; i += 4) {
        n = doc_text(text, sizeof text, i, 0);
        EXPECT_OK(minlsh_store_add(&r, s, text, n, NULL, 0, 0));
        EXPECT_OK(minlsh_store_add(&re, e, text, n, NULL, 0, 0));
        EXPECT(r.inserted && re.inserted && r.id == re.id);
    }
    for (i = 1; i < 200; i++) {
        double j;
        if (i % 4 == 0) continue;
        n = doc_text(text, sizeof text, i, (int)(i % 7));
        EXPECT_OK(minlsh_store_query(&r, s, text, n));
        EXPECT_OK(minlsh_store_query(&re, e, text, n));
        EXPECT(!re.exact);
        if (!r.has_match || !r.exact) continue;
        n2 = doc_text(t2, sizeof t2, r.match * 4, 0);
        EXPECT_OK(minlsh_shingler_hash(minlsh_store_view_shingler(s), text, n, a, NULL));
        EXPECT_OK(minlsh_shingler_hash(minlsh_store_view_shingler(s), t2, n2, b, NULL));
        EXPECT_OK(minlsh_shingleset_jaccard(&j, a, b));
        EXPECT_MSG(j == r.similarity, "doc %llu: exact %.4f, store %.4f", (unsigned long long)i, j,
                   r.similarity);
        EXPECT_MSG(r.novel == (j < 0.8), "doc %llu: exact %.4f, novel %u", (unsigned long long)i, j,
                   r.novel);
        checked++;
    }
    EXPECT_MSG(checked > 100, "only %d verdicts checked", checked);
    minlsh_store_free(s);
    /* and after a compaction and a reopen, the sets are still found */
    s = open_store(p, 0);
    EXPECT_OK(minlsh_store_compact(s));
    n = doc_text(text, sizeof text, 5, 1);
    EXPECT_OK(minlsh_store_query(&r, s, text, n));
    EXPECT(r.exact && !r.novel && r.match == 1);
    minlsh_store_free(s);
    minlsh_store_free(e);
    minlsh_shingleset_free(a);
    minlsh_shingleset_free(b);
    tl_remove_store(p);
    tl_remove_store(qpath);
}

/* A writer that adds documents and compacts now and then, reporting each
 * committed add's number on the pipe, until it is killed. */
static void kill_writer(const char *p, int fd, uint64_t first) {
    minlsh_store *s = NULL;
    uint64_t i;
    if (minlsh_store_open(&s, p, NULL) != 0) _exit(2);
    for (i = first;; i++) {
        int rc = add_doc(s, i * 4, 0, NULL);
        if (rc != 0) _exit(3);
        if (write(fd, &i, sizeof i) != (ssize_t)sizeof i) _exit(4);
        if (i % 4 == 0 && minlsh_store_compact(s) != 0) _exit(5);
    }
}

static void test_kill(void) {
    const char *p = store_path("store_kill.st");
    const char *env = getenv("MINLSH_KILL_RUNS");
    long runs = env != NULL ? atol(env) : 30, r, killed = 0;
    uint64_t next = 0, st = 99, acked_total = 0;
    minlsh_store *s;
    tl_remove_store(p);
    s = open_store(p, MINLSH_STORE_CREATE);
    minlsh_store_free(s);
    for (r = 0; r < runs; r++) {
        int fds[2], status, bad = 0;
        uint64_t v, acked = next, i, id, count;
        struct timespec ts;
        char name[64];
        pid_t pid;
        if (pipe(fds) != 0) {
            TL_FAIL("pipe");
            return;
        }
        pid = fork();
        if (pid == 0) {
            close(fds[0]);
            kill_writer(p, fds[1], next);
        }
        close(fds[1]);
        ts.tv_sec = 0;
        ts.tv_nsec = (long)(5000000 + tl_rand(&st) % 40000000);
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        while (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v) acked = v + 1;
        close(fds[0]);
        waitpid(pid, &status, 0);
        if (WIFEXITED(status)) {
            TL_FAIL("run %ld: the writer stopped with %d", r, WEXITSTATUS(status));
            break;
        }
        killed++;
        s = NULL;
        if (minlsh_store_open(&s, p, NULL) != 0) {
            TL_FAIL("run %ld: %s does not open", r, p);
            break;
        }
        /* Every acknowledged add is there; at most the one being committed
         * at the kill besides; ids 0 .. count - 1, each once. */
        count = minlsh_store_count(s);
        for (i = 0; i < acked; i++) {
            name_of(name, sizeof name, i * 4);
            if (minlsh_store_find_name(&id, s, name, strlen(name)) != 0 || id != i) bad++;
        }
        EXPECT_MSG(bad == 0 && (count == acked || count == acked + 1),
                   "run %ld: %d of %llu acknowledged adds missing; %llu documents", r, bad,
                   (unsigned long long)acked, (unsigned long long)count);
        acked_total += acked - next;
        next = count;
        minlsh_store_free(s);
        if (bad != 0) break;
    }
    printf("  %ld kill -9 runs: every committed add kept (%llu in all, %llu documents)\n", killed,
           (unsigned long long)acked_total, (unsigned long long)next);
    tl_remove_store(p);
}

/* Every allocation of open, add, query, remove, compact and free failing
 * in turn: an error, nothing leaked, and the store still opens whole. */
static void test_nomem(void) {
    const char *p = store_path("store_nomem.st");
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    long nth, points = 0;
    int done = 0, sets;
    minlsh_shingleset *set = NULL;
    minlsh_family *fam = NULL; /* the store's default family, outside the sweep */
    EXPECT_OK(minlsh_shingleset_new(&set, NULL));
    EXPECT_OK(minlsh_family_new(&fam, 128, 1, NULL));
    for (sets = 0; sets < 2; sets++) {
        for (nth = 1; !done || nth == 1; nth++) {
            minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
            minlsh_store *s = NULL;
            minlsh_store_result r;
            char text[2000];
            size_t n;
            int rc;
            done = 0;
            tl_remove_store(p);
            al = ta_allocator(&ta);
            o.alloc = &al;
            o.flags = MINLSH_STORE_CREATE | (sets ? MINLSH_STORE_SETS : 0);
            atomic_store(&ta.fail_at, nth);
            rc = minlsh_store_open(&s, p, &o);
            if (rc == 0) rc = minlsh_store_begin(s);
            if (rc == 0) rc = add_doc(s, 0, 0, NULL);
            if (rc == 0) rc = add_doc(s, 4, 0, NULL);
            if (rc == 0) rc = add_doc(s, 1, 1, NULL);
            if (rc == 0) {
                n = doc_text(text, sizeof text, 2, 1);
                rc = minlsh_store_query(&r, s, text, n);
            }
            if (rc == 0) rc = minlsh_store_remove(s, 1);
            if (rc == 0) rc = minlsh_store_sync(s);
            if (rc == 0) {
                n = doc_text(text, sizeof text, 12, 0);
                rc = minlsh_shingler_hash(minlsh_store_view_shingler(s), text, n, set, NULL);
            }
            if (rc == 0) rc = minlsh_store_add_set(&r, s, set, "set", 3, 0);
            if (rc == 0) rc = minlsh_store_query_set(&r, s, set);
            if (rc == 0) rc = minlsh_store_remove_name(s, "set", 3);
            if (rc == 0 && !sets) { /* signed by the caller */
                uint32_t sig[128];
                uint64_t ids[8];
                double sims[8];
                size_t m;
                n = doc_text(text, sizeof text, 5, 1);
                rc = minlsh_family_sign_text(fam, minlsh_store_view_shingler(s), text, n, sig,
                                             128, NULL);
                if (rc == 0) rc = minlsh_store_add_signature(&r, s, sig, 128, "sig", 3, 0);
                if (rc == 0) rc = minlsh_store_query_signature(&r, s, sig, 128);
                if (rc == 0) rc = minlsh_store_candidates(s, sig, 128, ids, sims, 8, &m);
                if (rc == 0) {
                    char copy[4300];
                    snprintf(copy, sizeof copy, "%s.copy", p);
                    rc = minlsh_store_copy_to(s, copy, MINLSH_STORE_TRUNCATE);
                    tl_remove_store(copy);
                }
            }
            if (rc == 0) rc = minlsh_store_commit(s);
            if (rc == 0) rc = minlsh_store_refresh(s);
            if (rc == 0) rc = minlsh_store_compact(s);
            if (rc == 0) rc = add_doc(s, 8, 0, NULL);
            if (rc == 0) rc = minlsh_store_begin(s);
            if (rc == 0) rc = add_doc(s, 16, 0, NULL);
            if (rc == 0) rc = minlsh_store_rollback(s);
            if (rc == 0) rc = add_doc(s, 20, 0, NULL);
            minlsh_store_free(s);
            EXPECT_MSG(rc == 0 || rc == MINLSH_E_NOMEM, "fail at %ld: %s", nth, minlsh_error_name(rc));
            EXPECT_MSG(atomic_load(&ta.blocks) == 0, "fail at %ld: %ld blocks leaked", nth,
                       (long)atomic_load(&ta.blocks));
            if (atomic_load(&ta.failed) == 0) {
                done = 1;
                break;
            }
            points++;
            /* whatever was committed opens */
            s = NULL;
            rc = minlsh_store_open(&s, p, NULL);
            EXPECT_MSG(rc == 0 || rc == MINLSH_E_NOTFOUND, "fail at %ld: reopen %s", nth,
                       minlsh_error_name(rc));
            minlsh_store_free(s);
        }
    }
    minlsh_shingleset_free(set);
    minlsh_family_free(fam);
    printf("  %ld allocation-failure points\n", points);
    EXPECT(points > 50);
    tl_remove_store(p);
}

/* Read a whole small file into buf (NUL-terminated); its length. */
static size_t slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    if (f != NULL) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return n;
}

/* An index the command wrote before the store (tests/golden/legacy_index:
 * text metadata with two names, a journal with three more) opens, answers,
 * takes adds and removals, and after a compaction is a store like any. */
static void test_legacy_command_file(void) {
    static const char *const names[] = {"\"fox.txt\"", "\"board.txt\"", "\"a\\\"quoted\"", "42",
                                        "\"fox2.txt\""};
    const char *p = store_path("legacy.mlsh");
    char jp[4300], text[512], name[64];
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *s = NULL;
    minlsh_store_result r;
    uint64_t id;
    size_t i, n;
    tl_remove_store(p);
    snprintf(jp, sizeof jp, "%s.journal", p);
    EXPECT(copy_file(tl_data_path("golden/legacy_index/legacy.mlsh"), p) == 0);
    EXPECT(copy_file(tl_data_path("golden/legacy_index/legacy.mlsh.journal"), jp) == 0);
    /* its configuration is the file's: word 3-shingles, lowercase, 0.8 */
    o.num_perm = 64;
    EXPECT_ERR(minlsh_store_open(&s, p, &o), MINLSH_E_MISMATCH);
    s = open_store(p, MINLSH_STORE_READONLY);
    if (s == NULL) return;
    EXPECT_EQ_U64(minlsh_store_count(s), 5);
    EXPECT(minlsh_store_threshold(s) == 0.8);
    EXPECT_EQ_INT((int)minlsh_shingler_k(minlsh_store_view_shingler(s)), 3);
    EXPECT_EQ_INT((int)minlsh_shingler_flags(minlsh_store_view_shingler(s)),
                  (int)(MINLSH_NORM_CASEFOLD | MINLSH_NORM_CJK_WORDS));
    EXPECT_EQ_INT((int)minlsh_index_bands(minlsh_store_view_index(s)), 18);
    for (i = 0; i < 5; i++) {
        EXPECT_OK(minlsh_store_find_name(&id, s, names[i], strlen(names[i])));
        EXPECT_EQ_U64(id, i);
    }
    n = slurp(tl_data_path("golden/legacy_index/fox.txt"), text, sizeof text);
    EXPECT_OK(minlsh_store_query(&r, s, text, n));
    EXPECT(!r.novel && r.match == 0 && r.similarity == 1.0);
    minlsh_store_free(s);
    /* a writer adds to the old journal, removes, and compacts */
    s = open_store(p, 0);
    if (s == NULL) return;
    n = slurp(tl_data_path("golden/legacy_index/board.txt"), text, sizeof text);
    EXPECT_OK(minlsh_store_add(&r, s, text, n, "\"again\"", 7, 0));
    EXPECT(!r.inserted && r.match == 1);
    EXPECT_OK(minlsh_store_add(&r, s, "a page of its own about winter", 30, "\"own\"", 5, 0));
    EXPECT(r.inserted && r.id == 5);
    EXPECT_OK(minlsh_store_remove_name(s, "42", 2));
    EXPECT_OK(minlsh_store_compact(s));
    minlsh_store_free(s);
    s = open_store(p, MINLSH_STORE_READONLY);
    if (s == NULL) return;
    EXPECT_EQ_U64(minlsh_store_count(s), 5);
    EXPECT_ERR(minlsh_store_find_name(&id, s, "42", 2), MINLSH_E_NOTFOUND);
    EXPECT_OK(minlsh_store_find_name(&id, s, "\"own\"", 5));
    EXPECT_EQ_U64(id, 5);
    EXPECT_OK(minlsh_store_copy_name(s, 4, name, sizeof name, &n));
    EXPECT(n == 10 && memcmp(name, "\"fox2.txt\"", 10) == 0);
    minlsh_store_free(s);
    /* the compacted file has the store's metadata, not the text */
    n = slurp(p, text, sizeof text);
    EXPECT(n > 0);
    tl_remove_store(p);
}

/* Damaged text metadata is MINLSH_E_CORRUPT, not another format. */
static void test_legacy_damaged(void) {
    const char *p = store_path("legacy_bad.mlsh");
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    minlsh_store *s = NULL;
    uint64_t cid = 0;
    static const char *const metas[] = {
        "minlsh-cli-index 1\nshingle=word:3\nnormalize=none\nthreshold=0.8\ndocuments=1\n\n\"a\"\n",
        "minlsh-cli-index 1\nshingle=word:3\nnormalize=bogus\nthreshold=0.8\ndocuments=0\n\n",
        "minlsh-cli-index 1\nshingle=word:3\nnormalize=none\nthreshold=0.8\ndocuments=2\n\n\"a\"\n\"a\"\n",
        "minlsh-cli-index 1\nshingle=word:3\nnormalize=none\nthreshold=0.8\n",
    };
    size_t i;
    so.k = 3;
    so.flags = 0;
    EXPECT_OK(minlsh_shingler_new(&sh, &so, NULL));
    EXPECT_OK(minlsh_shingler_config_id(&cid, sh));
    EXPECT_OK(minlsh_family_new(&fam, 128, 1, NULL));
    for (i = 0; i < sizeof metas / sizeof *metas; i++) {
        uint32_t sig[128];
        tl_remove_store(p);
        EXPECT_OK(minlsh_index_new(&ix, fam, cid, 16, 8, NULL));
        /* the first names one document the index does not hold */
        if (i == 2) {
            EXPECT_OK(minlsh_family_sign_text(fam, sh, "x y z", 5, sig, 128, NULL));
            EXPECT_OK(minlsh_index_insert(ix, 0, sig, 128));
            EXPECT_OK(minlsh_family_sign_text(fam, sh, "x y w", 5, sig, 128, NULL));
            EXPECT_OK(minlsh_index_insert(ix, 1, sig, 128));
        }
        EXPECT_OK(minlsh_index_set_metadata(ix, metas[i], strlen(metas[i])));
        EXPECT_OK(minlsh_index_save_mapped(ix, p));
        minlsh_index_free(ix);
        ix = NULL;
        {
            int rc = minlsh_store_open(&s, p, NULL);
            EXPECT_MSG(rc == MINLSH_E_CORRUPT, "metadata %zu: %s", i, minlsh_error_name(rc));
        }
        minlsh_store_free(s);
        s = NULL;
    }
    minlsh_family_free(fam);
    minlsh_shingler_free(sh);
    tl_remove_store(p);
}

/* EXCL and TRUNCATE; ANY_KEY reads a store of another key but answers no
 * query; NO_LOCK leaves PATH.lock to the caller; a signature signed
 * elsewhere is added and queried like the text; candidates skip removed
 * documents. */
static void test_front_end_calls(void) {
    const char *p = store_path("store_front.st");
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *s = NULL, *t = NULL;
    minlsh_store_result r, rt;
    minlsh_filelock *lock = NULL;
    uint8_t key[16] = {9, 8, 7};
    uint32_t sig[128];
    uint64_t ids[64];
    double sims[64];
    char text[2000];
    size_t n, m;
    tl_remove_store(p);
    o.flags = MINLSH_STORE_CREATE | MINLSH_STORE_EXCL;
    o.key = key;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    EXPECT_OK(add_doc(s, 0, 0, NULL));
    minlsh_store_free(s);
    EXPECT_ERR(minlsh_store_open(&s, p, &o), MINLSH_E_EXISTS);
    o.flags = MINLSH_STORE_CREATE | MINLSH_STORE_EXCL | MINLSH_STORE_TRUNCATE;
    EXPECT_ERR(minlsh_store_open(&s, p, &o), MINLSH_E_PARAM);
    /* another key: refused, or read with ANY_KEY */
    EXPECT_ERR(minlsh_store_open(&s, p, NULL), MINLSH_E_MISMATCH);
    o.flags = MINLSH_STORE_CREATE | MINLSH_STORE_ANY_KEY;
    o.key = NULL;
    EXPECT_ERR(minlsh_store_open(&s, p, &o), MINLSH_E_PARAM);
    o.flags = MINLSH_STORE_ANY_KEY; /* a writer: signatures only */
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    EXPECT_EQ_INT(minlsh_store_key_matches(s), 0);
    EXPECT_ERR(minlsh_store_add(&r, s, "a b c d e f", 11, "t", 1, 0), MINLSH_E_MISMATCH);
    minlsh_store_free(s);
    o.flags = MINLSH_STORE_READONLY | MINLSH_STORE_ANY_KEY;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    EXPECT_EQ_INT(minlsh_store_key_matches(s), 0);
    EXPECT_EQ_U64(minlsh_store_count(s), 1);
    EXPECT_ERR(minlsh_store_query(&r, s, "a b c d e f", 11), MINLSH_E_MISMATCH);
    minlsh_store_free(s);
    /* TRUNCATE: a new, empty store with the new options */
    o.flags = MINLSH_STORE_CREATE | MINLSH_STORE_TRUNCATE;
    o.key = NULL;
    o.threshold = 0.6;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    EXPECT_EQ_U64(minlsh_store_count(s), 0);
    EXPECT(minlsh_store_threshold(s) == 0.6);
    EXPECT_EQ_INT(minlsh_store_key_matches(s), 1);
    /* signed by the caller: the same decisions as from the text */
    n = doc_text(text, sizeof text, 0, 0);
    {
        minlsh_family *fam = NULL;
        const minlsh_index *ix = minlsh_store_view_index(s);
        EXPECT_OK(minlsh_family_new_scheme(&fam, minlsh_index_k(ix), minlsh_index_seed(ix),
                                           minlsh_index_scheme(ix), NULL));
        EXPECT_OK(minlsh_family_sign_text(fam, minlsh_store_view_shingler(s), text, n, sig,
                                          128, NULL));
        minlsh_family_free(fam);
    }
    EXPECT_ERR(minlsh_store_add_signature(&r, s, sig, 64, "p0", 2, 0), MINLSH_E_PARAM);
    EXPECT_OK(minlsh_store_add_signature(&r, s, sig, 128, "p0", 2, 0));
    EXPECT(r.inserted && r.id == 0);
    EXPECT_ERR(minlsh_store_add_signature(&r, s, sig, 128, "p0", 2, 0), MINLSH_E_EXISTS);
    {   /* a near-duplicate, from the text, added all the same */
        char near[2000];
        size_t nn = doc_text(near, sizeof near, 1, 4);
        EXPECT_OK(minlsh_store_add(&r, s, near, nn, "p1", 2, MINLSH_STORE_ADD_ALWAYS));
        EXPECT(r.inserted && r.id == 1 && !r.novel);
    }
    EXPECT_OK(minlsh_store_add(&r, s, text, n, "p0 again", 8, MINLSH_STORE_ADD_ALWAYS));
    EXPECT(r.inserted && r.id == 2 && r.match == 0 && r.similarity == 1.0);
    EXPECT_OK(minlsh_store_query_signature(&r, s, sig, 128));
    EXPECT_OK(minlsh_store_query(&rt, s, text, n));
    EXPECT(!r.novel && r.match == rt.match && r.similarity == rt.similarity &&
           r.candidates == rt.candidates && r.candidates == 3);
    EXPECT_ERR(minlsh_store_candidates(s, sig, 128, ids, sims, 1, &m), MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(m, 3);
    EXPECT_OK(minlsh_store_candidates(s, sig, 128, ids, sims, 64, &m));
    EXPECT(m == 3 && ids[0] == 0 && ids[1] == 1 && ids[2] == 2 && sims[0] == 1.0 &&
           sims[2] == 1.0 && sims[1] >= 0.6 && sims[1] < 1.0);
    EXPECT_OK(minlsh_store_remove(s, 0));
    EXPECT_OK(minlsh_store_candidates(s, sig, 128, ids, sims, 64, &m));
    EXPECT(m == 2 && ids[0] == 1 && ids[1] == 2);
    {   /* a copy: the live documents under their ids, the next id kept */
        char copy[4300];
        uint64_t id;
        snprintf(copy, sizeof copy, "%s.copy", p);
        tl_remove_store(copy);
        EXPECT_OK(minlsh_store_copy_to(s, copy, MINLSH_STORE_EXCL));
        EXPECT_ERR(minlsh_store_copy_to(s, copy, MINLSH_STORE_EXCL), MINLSH_E_EXISTS);
        EXPECT_ERR(minlsh_store_copy_to(s, copy, 0), MINLSH_E_PARAM);
        EXPECT_OK(minlsh_store_copy_to(s, copy, MINLSH_STORE_TRUNCATE));
        EXPECT_OK(minlsh_store_open(&t, copy, NULL));
        EXPECT_EQ_U64(minlsh_store_count(t), 2);
        EXPECT(minlsh_store_threshold(t) == 0.6);
        EXPECT_OK(minlsh_store_find_name(&id, t, "p0 again", 8));
        EXPECT_EQ_U64(id, 2);
        EXPECT_ERR(minlsh_store_find_name(&id, t, "p0", 2), MINLSH_E_NOTFOUND);
        EXPECT_OK(minlsh_store_add_signature(&r, t, sig, 128, "p3", 2, MINLSH_STORE_ADD_ALWAYS));
        EXPECT_EQ_U64(r.id, 3);
        minlsh_store_free(t);
        t = NULL;
        tl_remove_store(copy);
    }
    EXPECT_OK(minlsh_store_set_lock_timeout(s, 5));
    EXPECT_ERR(minlsh_store_set_lock_timeout(NULL, 5), MINLSH_E_NULL);
    minlsh_store_free(s);
    /* NO_LOCK: the caller's lock is held while the handle writes */
    EXPECT_OK(minlsh_filelock_new(&lock, p, MINLSH_LOCK_EXCLUSIVE, 0, NULL));
    o.flags = MINLSH_STORE_NO_LOCK;
    o.threshold = 0;
    o.lock_timeout_ms = 1;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    EXPECT_OK(add_doc(s, 40, 0, NULL));
    o.flags = 0;
    EXPECT_ERR(minlsh_store_open(&t, p, &o), MINLSH_E_BUSY);
    minlsh_store_free(s);
    minlsh_filelock_free(lock);
    t = open_store(p, MINLSH_STORE_READONLY);
    if (t != NULL) EXPECT_EQ_U64(minlsh_store_count(t), 3);
    minlsh_store_free(t);
    tl_remove_store(p);
}

/* One change past the compaction point (a bulk add) stops journaling and
 * commits as a new PATH: the journal is left empty, every document is
 * there for this handle and another, and a removal in it holds. */
static void test_bulk_change(void) {
    const char *p = store_path("store_bulk.st");
    char jp[4300];
    minlsh_store *s, *t;
    minlsh_store_result r;
    struct stat st;
    uint64_t i, id;
    int rc = 0;
    tl_remove_store(p);
    snprintf(jp, sizeof jp, "%s.journal", p);
    s = open_store(p, MINLSH_STORE_CREATE);
    t = open_store(p, MINLSH_STORE_READONLY);
    if (s == NULL || t == NULL) return;
    EXPECT_OK(add_doc(s, 100000, 0, NULL)); /* committed before, in the journal */
    EXPECT_OK(minlsh_store_begin(s));
    for (i = 0; i < 2500 && rc == 0; i++) {
        char text[2000], name[64];
        size_t n = doc_text(text, sizeof text, i * 4, 0); /* 2,500 families */
        name_of(name, sizeof name, i);
        rc = minlsh_store_add(&r, s, text, n, name, strlen(name), MINLSH_STORE_ADD_ALWAYS);
    }
    EXPECT_OK(rc);
    EXPECT_OK(minlsh_store_remove(s, 1)); /* the first of the change */
    /* past 1 MiB of records, committed as a new file: the journal empty */
    EXPECT_OK(minlsh_store_commit(s));
    EXPECT(stat(jp, &st) == 0 && st.st_size == 64);
    EXPECT_EQ_U64(minlsh_store_count(s), 2500);
    EXPECT_OK(minlsh_store_refresh(t));
    EXPECT_EQ_U64(minlsh_store_count(t), 2500);
    EXPECT_ERR(minlsh_store_find_name(&id, t, "https://example.org/page/0", 26), MINLSH_E_NOTFOUND);
    EXPECT_OK(minlsh_store_find_name(&id, t, "https://example.org/page/2499", 29));
    EXPECT_EQ_U64(id, 2500);
    /* the next small add is journaled again */
    EXPECT_OK(add_doc(s, 200000, 0, &r));
    EXPECT(r.inserted && r.id == 2501);
    EXPECT(stat(jp, &st) == 0 && st.st_size > 64);
    minlsh_store_free(t);
    minlsh_store_free(s);
    s = open_store(p, MINLSH_STORE_READONLY);
    if (s != NULL) EXPECT_EQ_U64(minlsh_store_count(s), 2501);
    minlsh_store_free(s);
    tl_remove_store(p);
}

int main(void) {
    shm_begin();
    RUN(test_create_open);
    RUN(test_add_query_remove);
    RUN(test_group_commit_and_handles);
    RUN(test_rollback);
    RUN(test_two_processes);
    RUN(test_between_renames);
    RUN(test_damaged_journal);
    RUN(test_exact);
    RUN(test_legacy_command_file);
    RUN(test_legacy_damaged);
    RUN(test_front_end_calls);
    RUN(test_bulk_change);
    RUN(test_kill);
    RUN(test_nomem);
    shm_end();
    return TL_SUMMARY("store");
}
