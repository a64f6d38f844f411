/*
 * The index journal (docs/format.md, "Index journal"): an append-only file
 * of checksummed records, each an insert or a removal with the caller's
 * bytes, that says what changed since a saved index file. A process makes
 * its changes durable by appending and syncing them, in time proportional
 * to the changes, and folds them into the file (compaction) only when the
 * journal has grown past a fraction of the file.
 *
 * Which file a journal extends is written in its header: the saved file's
 * last 8 bytes (its checksum, so any other content names another file). A
 * compaction saves the new file first (atomically) and then replaces the
 * journal by an empty one naming it; killed between the two, the old
 * journal names a file that is gone, so it is stale: skipped by readers,
 * replaced by writers, and never applied twice.
 *
 * Each sync writes its records and then a commit record; replay applies
 * records up to the last commit. A record that is incomplete or fails its
 * checksum is the tail a dying write leaves only if no commit record
 * follows it anywhere in the file: then the sync it belongs to never
 * returned, it is dropped, and the next open for writing cuts the file
 * back to the last commit. A commit record after it means records that a
 * sync acknowledged lie beyond the damage: the journal is damaged, the open
 * fails with MINLSH_E_CORRUPT and nothing is cut.
 */
#include "lsh.h"

#define MINLSH__MAGIC_JOURNAL "MINLSHJR"
#define MINLSH__JOURNAL_VERSION 1
#define MINLSH__JOURNAL_DATA_MAX ((size_t)1 << 20)
/* The record each sync ends with: the records before it count only once it
 * is there, so a sync is all or nothing even when a kill cuts its write. */
#define MINLSH__JOURNAL_COMMIT 3u
/* A journal is compacted past max(this, 1/32 of the index file). */
#define MINLSH__JOURNAL_MIN_COMPACT ((uint64_t)1 << 20)

struct minlsh_journal {
    minlsh_allocator alloc;
    char *path;
    int fd;           /* -1: read only */
    uint64_t synced;  /* bytes on disk, all of them good and synced */
    uint8_t *buf;     /* appended records not yet written */
    size_t buf_len, buf_cap;
    uint64_t records; /* replayed and appended */
    uint32_t k, scheme, bands, rows;
    uint64_t seed, config_id, base;
    uint64_t dev, ino; /* the file read or written last (refresh's check) */
    int exists;        /* whether there was one (a reader's may be missing) */
    uint32_t flags;    /* MINLSH__JOURNAL_STRICT, _KEEP_REMOVES */
};

typedef struct minlsh__journal_head {
    const minlsh_journal *j;
    const uint8_t *records; /* written after the header (a rebase) */
    size_t len;
} minlsh__journal_head;

static void minlsh__journal_write_head(const void *ctx, minlsh__writer *w) {
    const minlsh_journal *j = ((const minlsh__journal_head *)ctx)->j;
    minlsh__header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MINLSH__MAGIC_JOURNAL, 8);
    h.version = MINLSH__JOURNAL_VERSION;
    h.k = j->k;
    h.flags = j->scheme;
    h.bands = j->bands;
    h.rows = j->rows;
    h.seed = j->seed;
    h.config_id = j->config_id;
    h.count = j->base; /* the file this journal extends */
    minlsh__header_write(w, &h);
    if (((const minlsh__journal_head *)ctx)->len > 0)
        minlsh__writer_put(w, ((const minlsh__journal_head *)ctx)->records,
                           ((const minlsh__journal_head *)ctx)->len);
}

/* Replace the journal by an empty one that extends j->base (atomic), and
 * open it for appending. A new journal takes the mode and group of the
 * index's file (index_path, may be NULL): it holds the same documents. */
static int minlsh__journal_reset(minlsh_journal *j, const char *index_path) {
    minlsh__journal_head hd;
    int rc;
    minlsh__fd_close(j->fd);
    j->fd = -1;
    hd.j = j;
    hd.records = NULL;
    hd.len = 0;
    rc = minlsh__save_path(&j->alloc, j->path, index_path, minlsh__journal_write_head, &hd);
    if (rc == 0) rc = minlsh__file_open_at(j->path, MINLSH__HEADER_BYTES, &j->fd);
    if (rc == 0) j->synced = MINLSH__HEADER_BYTES;
    return rc;
}

/* One record at p (avail bytes): its size, or 0 if it is incomplete or
 * damaged (its checksum checked unless `checked`: read before). */
static size_t minlsh__journal_record(const uint8_t *p, size_t avail, uint32_t k, int checked,
                                     uint32_t *op, uint64_t *id, const uint8_t **vals,
                                     const uint8_t **data, size_t *data_len) {
    size_t body, n, m;
    if (avail < 4) return 0;
    body = minlsh__load32le(p);
    if (body < 20 || body > avail - 4 || avail - 4 - body < 8) return 0;
    if (!checked && minlsh__load64le(p + 4 + body) != minlsh__sum64(p, 4 + body)) return 0;
    *op = minlsh__load32le(p + 4);
    *id = minlsh__load64le(p + 8);
    n = minlsh__load32le(p + 16);
    if (n != (*op == MINLSH_JOURNAL_INSERT ? k : 0) || body < 20 + 4 * n) return 0;
    *vals = p + 20;
    m = minlsh__load32le(p + 20 + 4 * n);
    if (body != 16 + 4 * n + 4 + m) return 0;
    *data = p + 24 + 4 * n;
    *data_len = m;
    return 4 + body + 8;
}

/* The 32 bytes of a commit record: body length 20, the op, id 0, no
 * values, no data, then the sum of the 24 bytes before it. */
#define MINLSH__JOURNAL_COMMIT_BYTES 32

/* 1 if a whole commit record starts anywhere in buf(from..len): found after
 * a damaged record, it proves the damage is not a torn tail. A byte-by-byte
 * search, since the damage may have hidden where records begin; a false
 * match needs 64 bits of checksum to agree. */
static int minlsh__journal_commit_after(const uint8_t *buf, size_t len, size_t from) {
    size_t p;
    for (p = from + 1; p < len && len - p >= MINLSH__JOURNAL_COMMIT_BYTES; p++) {
        if (minlsh__load32le(buf + p) == 20 &&
            minlsh__load32le(buf + p + 4) == MINLSH__JOURNAL_COMMIT &&
            minlsh__load64le(buf + p + 24) == minlsh__sum64(buf + p, 24))
            return 1;
    }
    return 0;
}

/* Apply the committed records of buf[start..len) to index: *good is the end
 * of the last commit record (start if none). MINLSH_E_CORRUPT when a damaged
 * record has a commit record after it (it is not a torn tail). */
static int minlsh__journal_replay(minlsh_journal *j, minlsh_index *index, const uint8_t *buf,
                                  size_t start, size_t len, minlsh_journal_record_fn on_record,
                                  void *opaque, uint64_t *good) {
    uint32_t stack[MINLSH__K_STACK], *sig;
    size_t off = start, step, end = start;
    /* Set by every record read; initialised for compilers that cannot see
     * that the second loop only revisits records the first one read. */
    const uint8_t *vals = NULL, *data = NULL;
    size_t data_len = 0;
    uint64_t id = 0;
    uint32_t op = 0, v;
    int rc = 0;
    /* Where the committed records end. */
    while ((step = minlsh__journal_record(buf + off, len - off, j->k, 0, &op, &id, &vals, &data,
                                          &data_len)) != 0) {
        off += step;
        if (op == MINLSH__JOURNAL_COMMIT) end = off;
    }
    if (off < len && minlsh__journal_commit_after(buf, len, off)) return MINLSH_E_CORRUPT;
    sig = (uint32_t *)minlsh__kbuf_get(&j->alloc, stack, MINLSH__K_STACK, j->k, sizeof *sig);
    if (sig == NULL) return MINLSH_E_NOMEM;
    /* The records before end passed their checksums above. */
    for (off = start; off < end && rc == 0; off += step) {
        step = minlsh__journal_record(buf + off, len - off, j->k, 1, &op, &id, &vals, &data,
                                      &data_len);
        if (op == MINLSH__JOURNAL_COMMIT) continue;
        if (op == MINLSH_JOURNAL_INSERT) {
            for (v = 0; v < j->k; v++) sig[v] = minlsh__load32le(vals + 4 * (size_t)v);
            rc = minlsh_index_insert(index, id, sig, j->k);
        } else if (op == MINLSH_JOURNAL_REMOVE) {
            rc = (j->flags & MINLSH__JOURNAL_KEEP_REMOVES) ? 0 : minlsh_index_remove(index, id);
        } else {
            rc = MINLSH_E_CORRUPT;
        }
        /* A record that does not fit the index: not this index's journal. */
        if (rc == MINLSH_E_EXISTS || rc == MINLSH_E_NOTFOUND) rc = MINLSH_E_CORRUPT;
        if (rc == 0 && on_record != NULL) rc = on_record(opaque, op, id, data, data_len);
        if (rc == 0) j->records++;
    }
    minlsh__kbuf_put(&j->alloc, stack, sig);
    if (rc == 0) *good = end;
    return rc;
}

/* Which file the journal is now (after an open, a reset), so that a refresh
 * tells more records in it from a new journal in its place. */
static int minlsh__journal_note_file(minlsh_journal *j) {
    uint64_t size;
    int rc = minlsh__file_stat(j->path, &j->dev, &j->ino, &size);
    j->exists = rc == 0;
    return rc == MINLSH_E_NOTFOUND ? 0 : rc;
}

int minlsh_journal_open(minlsh_journal **out, minlsh_index *index, const char *path,
                        uint32_t mode, minlsh_journal_record_fn on_record, void *opaque) {
    return minlsh__journal_open_ex(out, index, path, mode, 0, 0, 0, on_record, opaque);
}

int minlsh__journal_open_ex(minlsh_journal **out, minlsh_index *index, const char *path,
                            uint32_t mode, uint32_t flags, uint64_t alt_base,
                            uint64_t alt_offset, minlsh_journal_record_fn on_record,
                            void *opaque) {
    minlsh_journal *j;
    uint8_t *buf = NULL;
    size_t len = 0;
    minlsh__header h;
    uint64_t good = MINLSH__HEADER_BYTES;
    int rc, exists;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (index == NULL || path == NULL) return MINLSH_E_NULL;
    if (mode != MINLSH_JOURNAL_READ && mode != MINLSH_JOURNAL_WRITE) return MINLSH_E_PARAM;
    /* A journal names the file it extends; an index that came from no file
     * would have its records counted stale by the first save. */
    if (index->file_bytes == 0) return MINLSH_E_STATE;
    j = (minlsh_journal *)minlsh__malloc(&index->alloc, sizeof *j);
    if (j == NULL) return MINLSH_E_NOMEM;
    memset(j, 0, sizeof *j);
    j->alloc = index->alloc;
    j->fd = -1;
    j->k = index->k;
    j->scheme = index->scheme;
    j->bands = index->bands;
    j->rows = index->rows;
    j->seed = index->seed;
    j->config_id = index->config_id;
    j->base = index->file_tag;
    j->flags = flags;
    /* Reached through links, the journal is still one file: its reset
     * renames over the file the links name. */
    rc = minlsh__path_resolve(&j->alloc, path, &j->path);
    if (rc != 0) {
        minlsh_journal_free(j);
        return rc;
    }
    path = j->path;
    exists = minlsh__file_exists(path);
    rc = exists < 0 ? exists : 0;
    if (rc == 0 && exists) rc = minlsh__file_read(&j->alloc, path, &buf, &len);
    if (rc == 0 && exists) {
        rc = minlsh__header_parse(buf, len, MINLSH__MAGIC_JOURNAL, MINLSH__JOURNAL_VERSION, &h);
        if (rc == 0 && (h.k != j->k || h.flags != j->scheme || h.bands != j->bands ||
                        h.rows != j->rows ||
                        h.seed != j->seed || h.config_id != j->config_id))
            rc = MINLSH_E_MISMATCH;
        if (rc == 0 && h.count == j->base) {
            rc = minlsh__journal_replay(j, index, buf, MINLSH__HEADER_BYTES, len, on_record,
                                        opaque, &good);
            j->synced = good;
        } else if (rc == 0 && alt_base != 0 && h.count == alt_base) {
            /* The file includes this journal up to alt_offset (a compaction
             * killed before it replaced the journal): the rest is new. */
            if (alt_offset < MINLSH__HEADER_BYTES || alt_offset > len) {
                rc = MINLSH_E_CORRUPT;
            } else {
                j->base = alt_base;
                good = alt_offset;
                rc = minlsh__journal_replay(j, index, buf, (size_t)alt_offset, len, on_record,
                                            opaque, &good);
                j->synced = good;
            }
        } else if (rc == 0 && (flags & MINLSH__JOURNAL_STRICT)) {
            rc = MINLSH_E_STATE; /* it extends another file */
        } else if (rc == 0) {
            exists = 0; /* stale: it extends a file that has been replaced */
        }
    }
    minlsh__free(&j->alloc, buf);
    if (rc == 0 && mode == MINLSH_JOURNAL_WRITE) {
        if (exists)
            rc = minlsh__file_open_at(path, good, &j->fd); /* a torn tail is cut */
        else
            rc = minlsh__journal_reset(j, index->file_path);
    }
    if (!exists) j->synced = MINLSH__HEADER_BYTES;
    if (rc == 0) rc = minlsh__journal_note_file(j);
    if (rc != 0) {
        minlsh_journal_free(j);
        return rc;
    }
    *out = j;
    return 0;
}

int minlsh_journal_refresh(minlsh_journal *j, minlsh_index *index,
                           minlsh_journal_record_fn on_record, void *opaque) {
    uint64_t dev, ino, size, good = 0;
    uint8_t *tail = NULL;
    size_t len = 0;
    int rc;
    if (j == NULL || index == NULL) return MINLSH_E_NULL;
    if (j->buf_len > 0) return MINLSH_E_STATE; /* its own records first */
    rc = minlsh__file_stat(j->path, &dev, &ino, &size);
    /* No file, or another one: a compaction replaced the journal (and the
     * index file with it), so the caller maps the index again. */
    if (rc == MINLSH_E_NOTFOUND || (rc == 0 && (dev != j->dev || ino != j->ino)))
        return j->exists ? MINLSH_E_STATE : (rc == MINLSH_E_NOTFOUND ? 0 : MINLSH_E_STATE);
    if (rc != 0) return rc;
    if (size == j->synced) return 0; /* nothing new: one stat */
    if (size < j->synced) return MINLSH_E_CORRUPT; /* cut below what was committed */
    rc = minlsh__file_read_from(&j->alloc, j->path, j->synced, &tail, &len);
    if (rc == 0)
        rc = minlsh__journal_replay(j, index, tail, 0, len, on_record, opaque, &good);
    minlsh__free(&j->alloc, tail);
    if (rc != 0) return rc;
    j->synced += good;
    /* A writer's next sync goes after the last commit: a torn tail another
     * process left is cut, as an open for writing would. */
    if (j->fd >= 0 && good < len && minlsh__fd_truncate(j->fd, j->synced) != 0)
        return MINLSH_E_IO;
    return 0;
}

/* Buffer one record: n values (0 or k). */
static int minlsh__journal_put(minlsh_journal *j, uint32_t op, uint64_t id, const uint32_t *sig,
                               size_t n, const void *data, size_t len) {
    size_t body, need, i;
    uint8_t *p;
    body = 16 + 4 * n + 4 + len;
    need = j->buf_len + 4 + body + 8;
    if (need > j->buf_cap) {
        size_t cap = j->buf_cap > 0 ? j->buf_cap : 4096;
        uint8_t *nb;
        while (cap < need) cap *= 2;
        nb = (uint8_t *)minlsh__malloc(&j->alloc, cap);
        if (nb == NULL) return MINLSH_E_NOMEM;
        if (j->buf_len > 0) memcpy(nb, j->buf, j->buf_len);
        minlsh__free(&j->alloc, j->buf);
        j->buf = nb;
        j->buf_cap = cap;
    }
    p = j->buf + j->buf_len;
    minlsh__store32le(p, (uint32_t)body);
    minlsh__store32le(p + 4, op);
    minlsh__store64le(p + 8, id);
    minlsh__store32le(p + 16, (uint32_t)n);
    for (i = 0; i < n; i++) minlsh__store32le(p + 20 + 4 * i, sig[i]);
    minlsh__store32le(p + 20 + 4 * n, (uint32_t)len);
    if (len > 0) memcpy(p + 24 + 4 * n, data, len);
    minlsh__store64le(p + 4 + body, minlsh__sum64(p, 4 + body));
    j->buf_len = need;
    return 0;
}

int minlsh_journal_append(minlsh_journal *j, uint32_t op, uint64_t id, const uint32_t *sig,
                          size_t k_sig, const void *data, size_t len) {
    size_t n;
    int rc;
    if (j == NULL || (data == NULL && len > 0)) return MINLSH_E_NULL;
    if (j->fd < 0) return MINLSH_E_STATE;
    if (op == MINLSH_JOURNAL_INSERT) {
        if (sig == NULL) return MINLSH_E_NULL;
        if (k_sig != j->k) return MINLSH_E_PARAM;
        n = j->k;
    } else if (op == MINLSH_JOURNAL_REMOVE) {
        n = 0;
    } else {
        return MINLSH_E_PARAM;
    }
    if (len > MINLSH__JOURNAL_DATA_MAX) return MINLSH_E_TOOBIG;
    rc = minlsh__journal_put(j, op, id, sig, n, data, len);
    if (rc == 0) j->records++;
    return rc;
}

int minlsh_journal_sync(minlsh_journal *j) {
    int rc;
    if (j == NULL) return MINLSH_E_NULL;
    if (j->fd < 0) return MINLSH_E_STATE;
    if (j->buf_len == 0) return 0;
    /* The commit record, written with the records (taken back on failure). */
    rc = minlsh__journal_put(j, MINLSH__JOURNAL_COMMIT, 0, NULL, 0, NULL, 0);
    if (rc != 0) return rc;
    rc = minlsh__fd_write_at(j->fd, j->buf, j->buf_len, j->synced);
    if (rc == 0) rc = minlsh__fd_sync(j->fd);
    if (rc != 0) {
        /* Leave no partial record behind (best effort: replay would stop
         * at it anyway); the records stay buffered for another try. */
        (void)minlsh__fd_truncate(j->fd, j->synced);
        j->buf_len -= 32; /* the commit record: the next sync adds its own */
        return rc;
    }
    j->synced += j->buf_len;
    j->buf_len = 0;
    return 0;
}

uint64_t minlsh_journal_bytes(const minlsh_journal *j) {
    return j != NULL ? j->synced + j->buf_len : 0;
}

uint64_t minlsh_journal_records(const minlsh_journal *j) {
    return j != NULL ? j->records : 0;
}

int minlsh_journal_compact_due(const minlsh_journal *j, const minlsh_index *index) {
    uint64_t limit;
    if (j == NULL || index == NULL) return MINLSH_E_NULL;
    limit = index->file_bytes / 32;
    if (limit < MINLSH__JOURNAL_MIN_COMPACT) limit = MINLSH__JOURNAL_MIN_COMPACT;
    return minlsh_journal_bytes(j) - MINLSH__HEADER_BYTES > limit;
}

int minlsh_journal_compact(minlsh_journal *j, minlsh_index *index, const char *index_path) {
    uint64_t tag, size;
    int rc;
    if (j == NULL || index == NULL || index_path == NULL) return MINLSH_E_NULL;
    if (j->fd < 0) return MINLSH_E_STATE;
    /* No sync first: the new file holds every change the index has, the
     * buffered records' too; killed before its rename, the old file and
     * journal stand, with every record synced before. */
    rc = minlsh_index_save_mapped(index, index_path);
    if (rc == 0) rc = minlsh__file_tail64(index_path, &tag, &size);
    if (rc != 0) return rc;
    index->file_tag = tag;
    index->file_bytes = size;
    j->base = tag;
    j->records = 0;
    j->buf_len = 0;
    rc = minlsh__journal_reset(j, index_path);
    return rc == 0 ? minlsh__journal_note_file(j) : rc;
}

void minlsh__journal_discard(minlsh_journal *j) {
    j->buf_len = 0;
}

void minlsh__journal_position(const minlsh_journal *j, uint64_t *base, uint64_t *offset) {
    *base = j->base;
    *offset = j->synced;
}

size_t minlsh__journal_pending(const minlsh_journal *j) { return j->buf_len; }

int minlsh__journal_rebase(minlsh_journal *j, uint64_t new_base, uint64_t from,
                           const char *like) {
    minlsh__journal_head hd;
    uint8_t *tail = NULL;
    size_t len = 0;
    uint64_t old_base = j->base;
    int rc;
    if (j->fd < 0 || j->buf_len > 0) return MINLSH_E_STATE;
    if (from < MINLSH__HEADER_BYTES || from > j->synced) return MINLSH_E_PARAM;
    rc = minlsh__file_read_from(&j->alloc, j->path, from, &tail, &len);
    if (rc != 0) return rc;
    if (len < j->synced - from) {
        minlsh__free(&j->alloc, tail);
        return MINLSH_E_CORRUPT; /* shorter than what was synced */
    }
    hd.j = j;
    hd.records = tail;
    hd.len = (size_t)(j->synced - from); /* committed records only */
    j->base = new_base;
    rc = minlsh__save_path(&j->alloc, j->path, like, minlsh__journal_write_head, &hd);
    minlsh__free(&j->alloc, tail);
    if (rc != 0) {
        j->base = old_base;
        return rc;
    }
    minlsh__fd_close(j->fd);
    j->fd = -1;
    j->synced = MINLSH__HEADER_BYTES + hd.len;
    rc = minlsh__file_open_at(j->path, j->synced, &j->fd);
    return rc == 0 ? minlsh__journal_note_file(j) : rc;
}

void minlsh_journal_free(minlsh_journal *j) {
    minlsh_allocator a;
    if (j == NULL) return;
    a = j->alloc;
    minlsh__fd_close(j->fd);
    minlsh__free(&a, j->buf);
    minlsh__free(&a, j->path);
    minlsh__free(&a, j);
}
