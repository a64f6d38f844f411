/*
 * The index journal (minlsh_journal_*): records replayed in order into a
 * mapped or loaded index, with their bytes; a journal cut at every length
 * replays exactly its complete records and is cut back on open for
 * writing; a damaged record ends the replay; compaction folds it into the
 * file; a journal beside a file saved since is stale and never replayed;
 * foreign and mismatched journals are refused; allocation failures leak
 * nothing; and kill -9 at any moment, during appends or compaction, loses
 * no synced record and leaves files that open.
 *
 * MINLSH_KILL_RUNS sets the number of kill runs (default 60).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#include <dirent.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define K 32
#define B 8
#define R 4

/* The signature of document id: a function of the id, with near copies. */
static void sig_of(uint64_t id, uint32_t *sig) {
    uint64_t st = (id / 3) * 0x9E3779B97F4A7C15u + 1;
    int i;
    for (i = 0; i < K; i++) sig[i] = (uint32_t)tl_rand(&st);
    sig[id % K] ^= (uint32_t)id; /* members of a trio differ a little */
}

static minlsh_index *new_index(const minlsh_allocator *al, uint32_t bands) {
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    if (minlsh_family_new(&fam, K, 3, NULL) != 0) return NULL;
    (void)minlsh_index_new(&ix, fam, 9, bands, R, al);
    minlsh_family_free(fam);
    return ix;
}

static int add_doc(minlsh_index *ix, minlsh_journal *j, uint64_t id) {
    uint32_t sig[K];
    char name[32];
    int rc, n = snprintf(name, sizeof name, "doc-%llu", (unsigned long long)id);
    sig_of(id, sig);
    rc = minlsh_index_insert(ix, id, sig, K);
    if (rc == 0 && j != NULL) rc = minlsh_journal_append(j, MINLSH_JOURNAL_INSERT, id, sig, K,
                                                          name, (size_t)n);
    return rc;
}

typedef struct seen {
    uint64_t n, ids_sum, bad;
} seen;

static int on_record(void *opaque, uint32_t op, uint64_t id, const void *data, size_t len) {
    seen *s = (seen *)opaque;
    char name[32];
    int n = snprintf(name, sizeof name, "doc-%llu", (unsigned long long)id);
    if (op == MINLSH_JOURNAL_INSERT && (len != (size_t)n || memcmp(data, name, len) != 0))
        s->bad++;
    if (op == MINLSH_JOURNAL_REMOVE && len != 3) s->bad++;
    s->n++;
    s->ids_sum += id;
    return 0;
}

/* Two paths at once (tl_tmp_path has one buffer). */
static char ibuf[4000], jbuf[4100];
static void paths(const char *base, const char **ip, const char **jp) {
    const char *t = tl_tmp_path(base);
    size_t n = strlen(t);
    if (n >= 4000) n = 3999;
    memcpy(ibuf, t, n);
    ibuf[n] = '\0';
    memcpy(jbuf, t, n);
    memcpy(jbuf + n, ".journal", 9);
    *ip = ibuf;
    *jp = jbuf;
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    long n;
    if (f == NULL) return -1;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fclose(f);
    return n;
}

/* Same documents, same answers: count, ids, and a query of each. */
static int same_index(const minlsh_index *a, const minlsh_index *b) {
    static uint64_t ia[4096], ib[4096];
    size_t na = 0, nb = 0, i, qa, qb;
    uint32_t sig[K];
    if (minlsh_index_count(a) != minlsh_index_count(b)) return 0;
    if (minlsh_index_copy_ids(a, ia, 4096, &na) != 0 || minlsh_index_copy_ids(b, ib, 4096, &nb))
        return 0;
    if (na != nb || memcmp(ia, ib, na * sizeof *ia) != 0) return 0;
    for (i = 0; i < na; i++) {
        uint64_t ra[64], rb[64];
        sig_of(ia[i], sig);
        if (minlsh_index_query(a, sig, K, ra, NULL, 64, &qa) != 0 ||
            minlsh_index_query(b, sig, K, rb, NULL, 64, &qb) != 0 || qa != qb ||
            memcmp(ra, rb, qa * sizeof *ra) != 0)
            return 0;
    }
    return 1;
}

static void test_replay(void) {
    const char *ipath, *jpath;
    paths("journal.ix", &ipath, &jpath);
    minlsh_index *mem = new_index(NULL, B), *ix = NULL;
    minlsh_journal *j = NULL;
    seen s;
    uint64_t id;
    unlink(jpath);
    for (id = 1; id <= 300; id++) EXPECT_OK(add_doc(mem, NULL, id));
    EXPECT_OK(minlsh_index_save_mapped(mem, ipath));
    /* A writer: mapped file, journal created, 100 inserts and a removal. */
    EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
    EXPECT_EQ_INT(file_size(jpath), 64);
    for (id = 301; id <= 400; id++) {
        EXPECT_OK(add_doc(ix, j, id));
        EXPECT_OK(add_doc(mem, NULL, id));
    }
    EXPECT_OK(minlsh_index_remove(ix, 350));
    EXPECT_OK(minlsh_journal_append(j, MINLSH_JOURNAL_REMOVE, 350, NULL, 0, "rm!", 3));
    EXPECT_OK(minlsh_index_remove(mem, 350));
    EXPECT_EQ_U64(minlsh_journal_records(j), 101);
    EXPECT_EQ_INT(file_size(jpath), 64); /* nothing written before the sync */
    EXPECT_OK(minlsh_journal_sync(j));
    EXPECT_EQ_U64((uint64_t)file_size(jpath), minlsh_journal_bytes(j));
    EXPECT_EQ_INT(minlsh_journal_compact_due(j, ix), 0);
    EXPECT_ERR(minlsh_journal_append(j, 7, 1, NULL, 0, NULL, 0), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_journal_append(j, MINLSH_JOURNAL_INSERT, 1, NULL, K, NULL, 0),
               MINLSH_E_NULL);
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    /* Readers, mapped and loaded: the same index as the one in memory. */
    ix = NULL;
    memset(&s, 0, sizeof s);
    EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, on_record, &s));
    EXPECT_EQ_U64(s.n, 101);
    EXPECT_EQ_U64(s.bad, 0);
    EXPECT(same_index(ix, mem));
    EXPECT_ERR(minlsh_journal_append(j, MINLSH_JOURNAL_REMOVE, 1, NULL, 0, NULL, 0),
               MINLSH_E_STATE);
    EXPECT_ERR(minlsh_journal_sync(j), MINLSH_E_STATE);
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    ix = NULL;
    EXPECT_OK(minlsh_index_load(&ix, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, NULL, NULL));
    EXPECT(same_index(ix, mem));
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    /* Compaction: the file holds everything, the journal nothing; the
     * file is what a save of the index in memory gives. */
    ix = NULL;
    EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
    EXPECT_OK(add_doc(ix, j, 401));
    EXPECT_OK(add_doc(mem, NULL, 401));
    EXPECT_OK(minlsh_journal_compact(j, ix, ipath));
    EXPECT_EQ_INT(file_size(jpath), 64);
    EXPECT_EQ_U64(minlsh_journal_records(j), 0);
    EXPECT_OK(add_doc(ix, j, 402)); /* appends go on after a compaction */
    EXPECT_OK(add_doc(mem, NULL, 402));
    EXPECT_OK(minlsh_journal_sync(j));
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    ix = NULL;
    memset(&s, 0, sizeof s);
    EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, on_record, &s));
    EXPECT_EQ_U64(s.n, 1);
    EXPECT(same_index(ix, mem));
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    minlsh_index_free(mem);
    unlink(ipath);
    unlink(jpath);
}

/* The journal cut at every length, and damaged. */
static void test_torn(void) {
    const char *ipath, *jpath;
    paths("journal_torn.ix", &ipath, &jpath);
    minlsh_index *mem = new_index(NULL, B), *ix = NULL;
    minlsh_journal *j = NULL;
    size_t len = 0, cut, rec, last_good = 0;
    unsigned char *full;
    uint64_t id, expect_n = 0;
    seen s;
    int bad = 0;
    unlink(jpath);
    for (id = 1; id <= 20; id++) EXPECT_OK(add_doc(mem, NULL, id));
    EXPECT_OK(minlsh_index_save_mapped(mem, ipath));
    EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
    /* A sync per document: each record then its commit record. */
    for (id = 21; id <= 30; id++) {
        EXPECT_OK(add_doc(ix, j, id));
        EXPECT_OK(minlsh_journal_sync(j));
    }
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    full = tl_read_file(jpath, &len);
    if (full == NULL) return;
    rec = (len - 64) / 10; /* every record and commit have the same size here */
    for (cut = 64; cut <= len; cut++) {
        tl_write_file(jpath, full, cut);
        ix = NULL;
        memset(&s, 0, sizeof s);
        if (minlsh_index_map(&ix, ipath, NULL) != 0) {
            bad++;
            continue;
        }
        expect_n = (cut - 64) / rec;
        if (minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, on_record, &s) != 0 ||
            s.n != expect_n || minlsh_index_count(ix) != 20 + expect_n)
            bad++;
        minlsh_journal_free(j);
        minlsh_index_free(ix);
        /* Opened for writing, the torn tail is cut off. */
        ix = NULL;
        if (minlsh_index_map(&ix, ipath, NULL) != 0 ||
            minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL) != 0 ||
            file_size(jpath) != (long)(64 + expect_n * rec))
            bad++;
        minlsh_journal_free(j);
        minlsh_index_free(ix);
        if (cut == len) last_good = expect_n;
    }
    EXPECT_EQ_INT(bad, 0);
    EXPECT_EQ_U64(last_good, 10);
    /* A sync of 5 documents cut anywhere adds none of them. */
    {
        size_t one;
        unsigned char *five;
        ix = NULL;
        EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
        tl_write_file(jpath, full, 64);
        EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
        for (id = 21; id <= 25; id++) EXPECT_OK(add_doc(ix, j, id));
        EXPECT_OK(minlsh_journal_sync(j));
        minlsh_journal_free(j);
        minlsh_index_free(ix);
        five = tl_read_file(jpath, &one);
        for (cut = 64, bad = 0; five != NULL && cut <= one; cut++) {
            tl_write_file(jpath, five, cut);
            ix = NULL;
            if (minlsh_index_map(&ix, ipath, NULL) != 0 ||
                minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, NULL, NULL) != 0 ||
                minlsh_index_count(ix) != (cut == one ? 25u : 20u))
                bad++;
            minlsh_journal_free(j);
            minlsh_index_free(ix);
        }
        EXPECT_EQ_INT(bad, 0);
        free(five);
    }
    /* A flipped bit in the record of sync 4, with the commits of syncs 4 to
     * 9 after it: synced records lie past the damage, so it is no torn
     * tail. Both modes refuse, and the file is left whole. */
    full[64 + 4 * rec + 30] ^= 1;
    {
        uint32_t mode;
        for (mode = MINLSH_JOURNAL_READ; mode <= MINLSH_JOURNAL_WRITE; mode++) {
            tl_write_file(jpath, full, len);
            ix = NULL;
            EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
            EXPECT_ERR(minlsh_journal_open(&j, ix, jpath, mode, NULL, NULL), MINLSH_E_CORRUPT);
            EXPECT(j == NULL);
            EXPECT_EQ_INT(file_size(jpath), (long)len);
            minlsh_index_free(ix);
        }
        /* The same damage in the last sync's commit record, with nothing
         * after it, cannot be told from a sync that never returned: that
         * sync alone is dropped. */
        full[64 + 4 * rec + 30] ^= 1;
        full[len - 12] ^= 1;
        tl_write_file(jpath, full, len);
        ix = NULL;
        memset(&s, 0, sizeof s);
        EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
        EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, on_record, &s));
        EXPECT_EQ_U64(s.n, 9);
        EXPECT_EQ_INT(file_size(jpath), (long)(64 + 9 * rec));
        minlsh_journal_free(j);
        minlsh_index_free(ix);
        full[len - 12] ^= 1;
    }
    /* A damaged header is refused, a foreign file too. */
    full[20] ^= 1;
    tl_write_file(jpath, full, len);
    ix = NULL;
    EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
    EXPECT_ERR(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, NULL, NULL),
               MINLSH_E_CORRUPT);
    EXPECT(j == NULL);
    tl_write_file(jpath, (const unsigned char *)"hello, world", 12);
    EXPECT_ERR(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL),
               MINLSH_E_FORMAT);
    minlsh_index_free(ix);
    free(full);
    minlsh_index_free(mem);
    unlink(ipath);
    unlink(jpath);
}

/* Two handles on one index and journal, as two processes sharing them
 * (each holding the lock in turn): each catches up with the other's synced
 * records by reading only the new bytes, never by mapping and replaying
 * again. */
static void test_refresh(void) {
    const char *ipath, *jpath;
    minlsh_index *mem = new_index(NULL, B), *a = NULL, *b = NULL, *c = NULL;
    minlsh_journal *ja = NULL, *jb = NULL, *jc = NULL;
    unsigned char *bytes;
    size_t len = 0;
    long before;
    uint64_t id;
    seen s;
    FILE *f;
    paths("journal_refresh.ix", &ipath, &jpath);
    unlink(jpath);
    for (id = 1; id <= 40; id++) EXPECT_OK(add_doc(mem, NULL, id));
    EXPECT_OK(minlsh_index_save_mapped(mem, ipath));
    EXPECT_OK(minlsh_index_map(&a, ipath, NULL));
    EXPECT_OK(minlsh_index_map(&b, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&ja, a, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
    EXPECT_OK(minlsh_journal_open(&jb, b, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
    EXPECT_OK(minlsh_journal_refresh(jb, b, NULL, NULL)); /* nothing new */
    for (id = 41; id <= 50; id++) EXPECT_OK(add_doc(a, ja, id));
    EXPECT_OK(minlsh_journal_sync(ja));
    memset(&s, 0, sizeof s);
    EXPECT_OK(minlsh_journal_refresh(jb, b, on_record, &s));
    EXPECT_EQ_U64(s.n, 10);
    EXPECT_EQ_U64(s.bad, 0);
    EXPECT_EQ_U64(minlsh_index_count(b), 50);
    EXPECT(same_index(a, b));
    /* b appends after a's records; records not yet synced come first. */
    for (id = 51; id <= 55; id++) EXPECT_OK(add_doc(b, jb, id));
    EXPECT_ERR(minlsh_journal_refresh(jb, b, NULL, NULL), MINLSH_E_STATE);
    EXPECT_OK(minlsh_journal_sync(jb));
    memset(&s, 0, sizeof s);
    EXPECT_OK(minlsh_journal_refresh(ja, a, on_record, &s));
    EXPECT_EQ_U64(s.n, 5);
    EXPECT(same_index(a, b));
    /* A newcomer replaying the whole journal sees the same. */
    EXPECT_OK(minlsh_index_map(&c, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&jc, c, jpath, MINLSH_JOURNAL_READ, NULL, NULL));
    EXPECT(same_index(a, c));
    minlsh_journal_free(jc);
    minlsh_index_free(c);
    /* A dead writer's torn tail: cut by the next writer's refresh, which
     * then appends where it was. */
    before = file_size(jpath);
    f = fopen(jpath, "ab");
    if (f != NULL) {
        static const unsigned char torn[30];
        fwrite(torn, 1, sizeof torn, f);
        fclose(f);
    }
    EXPECT_OK(minlsh_journal_refresh(jb, b, NULL, NULL));
    EXPECT_EQ_INT(file_size(jpath), before);
    EXPECT_OK(add_doc(b, jb, 56));
    EXPECT_OK(minlsh_journal_sync(jb));
    EXPECT_OK(minlsh_journal_refresh(ja, a, NULL, NULL));
    EXPECT_EQ_U64(minlsh_index_count(a), 56);
    /* Damage in records b has not read yet, with a commit after them. */
    before = file_size(jpath);
    for (id = 57; id <= 58; id++) EXPECT_OK(add_doc(a, ja, id));
    EXPECT_OK(minlsh_journal_sync(ja));
    bytes = tl_read_file(jpath, &len);
    if (bytes != NULL && len > (size_t)before + 40) {
        bytes[before + 30] ^= 8;
        tl_write_file(jpath, bytes, len);
        EXPECT_ERR(minlsh_journal_refresh(jb, b, NULL, NULL), MINLSH_E_CORRUPT);
        EXPECT_EQ_INT(file_size(jpath), (long)len); /* nothing cut */
        bytes[before + 30] ^= 8;
        tl_write_file(jpath, bytes, len);
    }
    free(bytes);
    EXPECT_OK(minlsh_journal_refresh(jb, b, NULL, NULL));
    EXPECT_EQ_U64(minlsh_index_count(b), 58);
    /* The n-th allocation of a refresh failing: MINLSH_E_NOMEM, no leak. */
    {
        testalloc ta;
        minlsh_allocator al = ta_allocator(&ta);
        int i, rc = MINLSH_E_NOMEM;
        for (i = 1; i < 200 && rc == MINLSH_E_NOMEM; i++) {
            c = NULL;
            jc = NULL;
            EXPECT_OK(minlsh_index_map(&c, ipath, LOAD_OPTS(NULL, 0, &al)));
            EXPECT_OK(minlsh_journal_open(&jc, c, jpath, MINLSH_JOURNAL_READ, NULL, NULL));
            EXPECT_OK(add_doc(a, ja, 1000 + (uint64_t)i));
            EXPECT_OK(minlsh_journal_sync(ja));
            ta_fail_nth(&ta, 1 + i / 2);
            rc = minlsh_journal_refresh(jc, c, NULL, NULL);
            ta_fail_nth(&ta, 0);
            EXPECT(rc == 0 || rc == MINLSH_E_NOMEM);
            if (rc == 0) EXPECT(same_index(a, c));
            minlsh_journal_free(jc);
            minlsh_index_free(c);
            EXPECT_EQ_INT(ta_blocks(&ta), 0);
        }
        EXPECT_EQ_INT(rc, 0);
        EXPECT_OK(minlsh_journal_refresh(jb, b, NULL, NULL));
    }
    /* A compaction replaces the journal: the other handle must start over. */
    EXPECT_OK(minlsh_journal_compact(ja, a, ipath));
    EXPECT_ERR(minlsh_journal_refresh(jb, b, NULL, NULL), MINLSH_E_STATE);
    EXPECT_OK(minlsh_journal_refresh(ja, a, NULL, NULL));
    minlsh_journal_free(ja);
    minlsh_journal_free(jb);
    minlsh_index_free(a);
    minlsh_index_free(b);
    minlsh_index_free(mem);
    unlink(ipath);
    unlink(jpath);
}

/* A journal extends a file: an index that came from none has nothing for
 * it to name, and a first save would make its synced records stale. */
static void test_needs_file(void) {
    minlsh_index *ix = new_index(NULL, B);
    minlsh_journal *j = NULL;
    const char *jpath = tl_tmp_path("journal_nofile.ix.journal");
    unlink(jpath);
    EXPECT_ERR(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL),
               MINLSH_E_STATE);
    EXPECT(j == NULL);
    EXPECT(file_size(jpath) < 0); /* nothing created */
    minlsh_index_free(ix);
}

/* A compaction killed between its save and the new journal: the old
 * journal names the old file, so it is not applied twice. */
static void test_stale(void) {
    const char *ipath, *jpath;
    paths("journal_stale.ix", &ipath, &jpath);
    minlsh_index *ix = new_index(NULL, B), *other = new_index(NULL, B - 1);
    minlsh_journal *j = NULL;
    uint64_t id;
    seen s;
    unlink(jpath);
    for (id = 1; id <= 50; id++) EXPECT_OK(add_doc(ix, NULL, id));
    EXPECT_OK(minlsh_index_save_mapped(ix, ipath));
    minlsh_index_free(ix);
    ix = NULL;
    EXPECT_OK(minlsh_index_load(&ix, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
    for (id = 51; id <= 60; id++) EXPECT_OK(add_doc(ix, j, id));
    EXPECT_OK(minlsh_journal_sync(j));
    EXPECT_OK(minlsh_index_save_mapped(ix, ipath)); /* the save, and no reset */
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    ix = NULL;
    memset(&s, 0, sizeof s);
    EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, on_record, &s));
    EXPECT_EQ_U64(s.n, 0);
    EXPECT_EQ_U64(minlsh_index_count(ix), 60);
    minlsh_journal_free(j);
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
    EXPECT_EQ_INT(file_size(jpath), 64); /* replaced by an empty one */
    minlsh_journal_free(j);
    /* Another banding: not this index's journal. */
    {
        const char *opath = tl_tmp_path("journal_stale_other.ix");
        EXPECT_OK(minlsh_index_save_mapped(other, opath));
        minlsh_index_free(other);
        other = NULL;
        EXPECT_OK(minlsh_index_map(&other, opath, NULL));
        unlink(opath);
    }
    EXPECT_ERR(minlsh_journal_open(&j, other, jpath, MINLSH_JOURNAL_READ, NULL, NULL),
               MINLSH_E_MISMATCH);
    EXPECT_ERR(minlsh_journal_open(&j, ix, jpath, 5, NULL, NULL), MINLSH_E_PARAM);
    /* No journal at all: nothing to replay, and a reader creates none. */
    unlink(jpath);
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, NULL, NULL));
    EXPECT_EQ_INT(file_size(jpath), -1);
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    minlsh_index_free(other);
    unlink(ipath);
    unlink(jpath);
}

static void test_nomem(void) {
    const char *ipath, *jpath;
    paths("journal_nomem.ix", &ipath, &jpath);
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_index *ix = new_index(&al, B);
    minlsh_journal *j = NULL;
    uint64_t id;
    int i, rc, done = 0;
    unlink(jpath);
    for (id = 1; id <= 50; id++) EXPECT_OK(add_doc(ix, NULL, id));
    EXPECT_OK(minlsh_index_save_mapped(ix, ipath));
    minlsh_index_free(ix);
    ix = NULL;
    EXPECT_OK(minlsh_index_map(&ix, ipath, LOAD_OPTS(NULL, 0, &al)));
    EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL));
    for (id = 51; id <= 80; id++) EXPECT_OK(add_doc(ix, j, id));
    EXPECT_OK(minlsh_journal_sync(j));
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    for (i = 1; i < 60 && !done; i++) {
        ix = NULL;
        EXPECT_OK(minlsh_index_map(&ix, ipath, LOAD_OPTS(NULL, 0, &al)));
        ta_fail_nth(&ta, i);
        rc = minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, NULL, NULL);
        ta_fail_nth(&ta, 0);
        EXPECT(rc == 0 || rc == MINLSH_E_NOMEM);
        if (rc == 0) {
            done = 1;
            EXPECT_EQ_U64(minlsh_index_count(ix), 80);
            /* An append that cannot grow its buffer changes nothing. */
            minlsh_journal_free(j);
        }
        minlsh_index_free(ix);
    }
    EXPECT(done);
    /* A writer whose n-th allocation fails (open, appends or compaction):
     * an error or success, no leak, and the files still hold every synced
     * document. */
    for (i = 1, done = 0; i < 400 && !done; i++) {
        uint64_t before;
        ix = NULL;
        j = NULL;
        EXPECT_OK(minlsh_index_map(&ix, ipath, LOAD_OPTS(NULL, 0, &al)));
        ta_fail_nth(&ta, i);
        rc = minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL);
        before = minlsh_index_count(ix);
        for (id = before + 1; rc == 0 && id <= before + 20; id++) rc = add_doc(ix, j, id);
        if (rc == 0) rc = minlsh_journal_compact(j, ix, ipath);
        ta_fail_nth(&ta, 0);
        EXPECT(rc == 0 || rc == MINLSH_E_NOMEM);
        done = rc == 0;
        minlsh_journal_free(j);
        minlsh_index_free(ix);
        EXPECT_EQ_INT(ta_blocks(&ta), 0);
        ix = NULL;
        j = NULL;
        EXPECT_OK(minlsh_index_map(&ix, ipath, NULL));
        EXPECT_OK(minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, NULL, NULL));
        /* The 20 are all in (the compaction's save happened) or none. */
        EXPECT(minlsh_index_count(ix) == 80 || minlsh_index_count(ix) == 100);
        if (minlsh_index_count(ix) == 100) done = 1; /* the next sweep would start at 100 */
        minlsh_journal_free(j);
        minlsh_index_free(ix);
    }
    EXPECT(done);
    EXPECT_EQ_INT(ta_blocks(&ta), 0);
    unlink(ipath);
    unlink(jpath);
}

/* ---- kill -9 -------------------------------------------------------------- */

/* The child: open, append batches of documents with the next ids, sync,
 * report the last synced id on fd, compact every third batch; forever. */
static void writer(const char *ipath, const char *jpath, int fd) {
    minlsh_index *ix = NULL;
    minlsh_journal *j = NULL;
    uint64_t next, batch = 0;
    if (minlsh_index_map(&ix, ipath, NULL) != 0 ||
        minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_WRITE, NULL, NULL) != 0)
        _exit(3);
    next = minlsh_index_count(ix) + 1;
    for (;;) {
        int i;
        for (i = 0; i < 20; i++)
            if (add_doc(ix, j, next++) != 0) _exit(4);
        if (minlsh_journal_sync(j) != 0) _exit(5);
        {
            uint64_t acked = next - 1;
            if (write(fd, &acked, sizeof acked) != (ssize_t)sizeof acked) _exit(6);
        }
        if (++batch % 3 == 0 && minlsh_journal_compact(j, ix, ipath) != 0) _exit(7);
        if (minlsh_index_count(ix) > 3000) _exit(0); /* enough: start again */
    }
}

/* Remove the temporaries of saves a kill cut short: *ix those of the
 * index (killed in a compaction's save), *jr those of the journal (killed
 * while the empty journal replaced the old one). */
static void remove_temps(const char *ipath, long *ix, long *jr) {
    const char *slash = strrchr(ipath, '/');
    char dir[4000], full[8200];
    size_t dn = slash != NULL ? (size_t)(slash - ipath) : 1;
    const char *base = slash != NULL ? slash + 1 : ipath;
    struct dirent *e;
    DIR *d;
    memcpy(dir, slash != NULL ? ipath : ".", dn);
    dir[dn] = '\0';
    d = opendir(dir);
    while (d != NULL && (e = readdir(d)) != NULL) {
        size_t bn = strlen(base);
        if (strncmp(e->d_name, base, bn) != 0) continue;
        if (strncmp(e->d_name + bn, ".tmp-", 5) == 0) (*ix)++;
        else if (strncmp(e->d_name + bn, ".journal.tmp-", 13) == 0) (*jr)++;
        else continue;
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        unlink(full);
    }
    if (d != NULL) closedir(d);
}

static void test_kill(void) {
    const char *ipath, *jpath;
    paths("journal_kill.ix", &ipath, &jpath);
    const char *env = getenv("MINLSH_KILL_RUNS");
    long runs = env != NULL ? atol(env) : 60, r, killed_mid = 0, tmp_ix = 0, tmp_jr = 0;
    uint64_t acked_total = 0;
    uint64_t st = 77;
    minlsh_index *ix = new_index(NULL, B);
    unlink(jpath);
    EXPECT_OK(minlsh_index_save_mapped(ix, ipath));
    minlsh_index_free(ix);
    for (r = 0; r < runs; r++) {
        int p[2], status;
        uint64_t acked = 0, v;
        pid_t pid;
        minlsh_journal *j = NULL;
        struct timespec ts;
        if (pipe(p) != 0) {
            TL_FAIL("pipe");
            return;
        }
        pid = fork();
        if (pid == 0) {
            close(p[0]);
            writer(ipath, jpath, p[1]);
        }
        close(p[1]);
        ts.tv_sec = 0;
        ts.tv_nsec = (long)(tl_rand(&st) % 20000000); /* up to 20 ms */
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        while (read(p[0], &v, sizeof v) == (ssize_t)sizeof v) acked = v;
        close(p[0]);
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            TL_FAIL("run %ld: the writer failed with %d", r, WEXITSTATUS(status));
            break;
        }
        if (WIFSIGNALED(status)) killed_mid++;
        /* Every synced document is there, with its signature; the ids are
         * 1..count (no record applied twice, none out of place). */
        ix = NULL;
        if (minlsh_index_map(&ix, ipath, NULL) != 0 ||
            minlsh_journal_open(&j, ix, jpath, MINLSH_JOURNAL_READ, NULL, NULL) != 0) {
            TL_FAIL("run %ld: the index or its journal does not open", r);
            minlsh_index_free(ix);
            break;
        }
        if (minlsh_index_count(ix) < acked) {
            TL_FAIL("run %ld: %llu documents, %llu acknowledged", r,
                    (unsigned long long)minlsh_index_count(ix), (unsigned long long)acked);
        } else {
            uint64_t id, n = minlsh_index_count(ix);
            uint32_t a[K], b[K];
            int bad = 0;
            for (id = 1; id <= n; id++) {
                sig_of(id, a);
                if (minlsh_index_copy_signature(ix, id, b, K, NULL) != 0 ||
                    memcmp(a, b, sizeof a) != 0)
                    bad++;
            }
            EXPECT_MSG(bad == 0, "run %ld: %d of %llu documents wrong", r, bad,
                       (unsigned long long)n);
        }
        acked_total += acked;
        remove_temps(ipath, &tmp_ix, &tmp_jr);
        minlsh_journal_free(j);
        if (minlsh_index_count(ix) > 3000) { /* start again from empty */
            minlsh_index_free(ix);
            ix = new_index(NULL, B);
            EXPECT_OK(minlsh_index_save_mapped(ix, ipath));
        }
        minlsh_index_free(ix);
    }
    printf("  %ld kill -9 runs (%ld killed while writing; %ld in a compaction's save, %ld in "
           "its journal reset): every synced document kept, %llu acknowledged in all\n",
           runs, killed_mid, tmp_ix, tmp_jr, (unsigned long long)acked_total);
    unlink(ipath);
    unlink(jpath);
}

int main(void) {
    RUN(test_replay);
    RUN(test_torn);
    RUN(test_needs_file);
    RUN(test_refresh);
    RUN(test_stale);
    RUN(test_nomem);
    RUN(test_kill);
    return TL_SUMMARY("journal");
}
