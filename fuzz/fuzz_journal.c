/*
 * Fuzz target: an index journal's replay on arbitrary records.
 *
 * Input: one byte of choices, then the journal after its header. The target
 * saves a small index once (4 documents, ids 1..4, k 8, 4 bands of 2 rows)
 * and for each input writes a journal naming that file: the valid header
 * and the input's records, with each record's checksum recomputed where its
 * length field leaves room unless bit 0 is set (random mutations almost
 * never get a checksum right); with bit 1 the input's first 64 bytes are
 * the header instead. Bit 2 opens the index by mapping instead of loading.
 *
 * Checked: every open returns 0 or a documented status; a reader and a
 * writer replay the same records into the same index; after the writer cut
 * the journal to its good records, an appended and synced insert replays
 * after them (the cut left nothing a later record would hide behind).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_journal_*, minlsh_index_map */
#include "fuzz.h"

#include <unistd.h>

#define K 8
#define BASE_DOCS 4

static char dir_path[40], index_path[64], journal_path[80];
static uint8_t header[64];

static int journal_status_ok(int rc) {
    return rc == 0 || rc == MINLSH_E_FORMAT || rc == MINLSH_E_CORRUPT || rc == MINLSH_E_MISMATCH ||
           rc == MINLSH_E_NOMEM;
}

static void write_file(const char *path, const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(fwrite(a, 1, na, f) == na);
    FUZZ_CHECK(nb == 0 || fwrite(b, 1, nb, f) == nb);
    FUZZ_CHECK(fclose(f) == 0);
}

static minlsh_index *open_index(int mapped) {
    minlsh_index *ix = NULL;
    if (mapped) FUZZ_OK(minlsh_index_map(&ix, index_path, NULL));
    else FUZZ_OK(minlsh_index_load(&ix, index_path, NULL));
    return ix;
}

static void cleanup(void) {
    unlink(journal_path);
    unlink(index_path);
    rmdir(dir_path);
}

/* Once per process: the saved index, and the header of its empty journal,
 * in a directory removed at exit. */
static void setup(void) {
    static int done;
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    minlsh_journal *j = NULL;
    uint32_t sig[K];
    uint64_t id;
    FILE *f;
    if (done) return;
    snprintf(dir_path, sizeof dir_path, "/tmp/minlsh-fuzz-journal-XXXXXX");
    FUZZ_CHECK(mkdtemp(dir_path) != NULL);
    snprintf(index_path, sizeof index_path, "%s/index", dir_path);
    snprintf(journal_path, sizeof journal_path, "%s/index.journal", dir_path);
    atexit(cleanup);
    FUZZ_OK(minlsh_family_new(&fam, K, 7, NULL));
    FUZZ_OK(minlsh_index_new(&ix, fam, 11, 4, 2, NULL));
    for (id = 1; id <= BASE_DOCS; id++) {
        size_t i;
        for (i = 0; i < K; i++) sig[i] = (uint32_t)(id * 31 + i % 3);
        FUZZ_OK(minlsh_index_insert(ix, id, sig, K));
    }
    FUZZ_OK(minlsh_index_save(ix, index_path));
    minlsh_index_free(ix);
    ix = open_index(0);
    unlink(journal_path);
    FUZZ_OK(minlsh_journal_open(&j, ix, journal_path, MINLSH_JOURNAL_WRITE, NULL, NULL));
    minlsh_journal_free(j);
    minlsh_index_free(ix);
    f = fopen(journal_path, "rb");
    FUZZ_CHECK(f != NULL && fread(header, 1, sizeof header, f) == sizeof header);
    fclose(f);
    minlsh_family_free(fam);
    done = 1;
}

/* Recompute each record's checksum (docs/format.md, "Index journal") as far
 * as the length fields chain. */
static void repair_records(uint8_t *p, size_t n) {
    size_t pos = 0, i;
    while (n - pos >= 4) {
        uint64_t len = (uint64_t)p[pos] | (uint64_t)p[pos + 1] << 8 | (uint64_t)p[pos + 2] << 16 |
                       (uint64_t)p[pos + 3] << 24;
        uint64_t h;
        if (len > n - pos - 4 || n - pos - 4 - len < 8) return;
        h = minlsh__sum64(p + pos, (size_t)(4 + len));
        for (i = 0; i < 8; i++) p[pos + 4 + len + i] = (uint8_t)(h >> (8 * i));
        pos += (size_t)(4 + len + 8);
    }
}

typedef struct tally {
    uint64_t inserts, removes;
} tally;

static int count_record(void *opaque, uint32_t op, uint64_t id, const void *data, size_t len) {
    tally *t = (tally *)opaque;
    (void)id;
    FUZZ_CHECK(len <= (1u << 20) && (len == 0 || data != NULL));
    FUZZ_CHECK(op == MINLSH_JOURNAL_INSERT || op == MINLSH_JOURNAL_REMOVE);
    if (op == MINLSH_JOURNAL_INSERT) t->inserts++;
    else t->removes++;
    return 0;
}

/* Open the journal on a fresh copy of the index; *count gets the index's
 * count after the replay when it succeeded. With append_one (a writer), one
 * more insert is appended and synced. */
static int replay(int mapped, uint32_t mode, tally *t, uint64_t *count, int append_one) {
    minlsh_index *ix = open_index(mapped);
    minlsh_journal *j = NULL;
    int rc;
    memset(t, 0, sizeof *t);
    rc = minlsh_journal_open(&j, ix, journal_path, mode, count_record, t);
    FUZZ_CHECK(journal_status_ok(rc));
    if (rc == 0) {
        FUZZ_CHECK(j != NULL);
        *count = minlsh_index_count(ix);
        FUZZ_CHECK(*count + t->removes == BASE_DOCS + t->inserts);
        FUZZ_CHECK(minlsh_journal_records(j) >= t->inserts + t->removes);
        if (append_one) {
            uint32_t sig[K] = {1, 2, 3, 4, 5, 6, 7, 8};
            /* An id no replayed insert can have used: above every one so far. */
            uint64_t id = UINT64_MAX;
            while (minlsh_index_contains(ix, id) == 1) id--;
            FUZZ_OK(minlsh_journal_append(j, MINLSH_JOURNAL_INSERT, id, sig, K, "x", 1));
            FUZZ_OK(minlsh_journal_sync(j));
        }
        minlsh_journal_free(j);
    } else {
        FUZZ_CHECK(j == NULL);
    }
    minlsh_index_free(ix);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t choice = size > 0 ? data[0] : 0, *body;
    int mapped = (choice & 4) != 0, rc_read, rc_write, rc;
    tally read_tally, write_tally, again;
    uint64_t read_count = 0, write_count = 0, count = 0;
    size_t n;
    setup();
    if (size > 0) {
        data++;
        size--;
    }
    body = (uint8_t *)malloc(size > 0 ? size : 1);
    FUZZ_CHECK(body != NULL);
    if (size > 0) memcpy(body, data, size);
    n = size;
    if ((choice & 2) && n >= 64) {
        if (!(choice & 1)) repair_records(body + 64, n - 64);
        write_file(journal_path, body, n, NULL, 0);
    } else {
        if (!(choice & 1)) repair_records(body, n);
        write_file(journal_path, header, sizeof header, body, n);
    }
    free(body);

    rc_read = replay(mapped, MINLSH_JOURNAL_READ, &read_tally, &read_count, 0);
    rc_write = replay(mapped, MINLSH_JOURNAL_WRITE, &write_tally, &write_count, 0);
    /* A reader and a writer see the same records. A writer replaces a stale
     * or header-damaged journal, so only compare what both replayed. */
    if (rc_read == 0 && rc_write == 0) {
        FUZZ_CHECK(read_count == write_count);
        FUZZ_CHECK(read_tally.inserts == write_tally.inserts && read_tally.removes == write_tally.removes);
    }
    if (rc_write != 0) return 0;
    /* The writer cut the damaged tail: the same records replay, and one
     * more appended after them is found. */
    rc = replay(mapped, MINLSH_JOURNAL_WRITE, &again, &count, 1);
    FUZZ_CHECK(rc == 0 && count == write_count);
    FUZZ_CHECK(again.inserts == write_tally.inserts && again.removes == write_tally.removes);
    rc = replay(mapped, MINLSH_JOURNAL_READ, &again, &count, 0);
    FUZZ_CHECK(rc == 0 && count == write_count + 1);
    FUZZ_CHECK(again.inserts == write_tally.inserts + 1 && again.removes == write_tally.removes);
    return 0;
}
