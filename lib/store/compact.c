/*
 * Compaction (include/minlsh.h, minlsh_store_compact): the journal folded
 * into a new PATH while other writers go on.
 *
 *   1. Under PATH.compact.lock (one compaction at a time; it also tells an
 *      opening writer that PATH.tmp-* may be in use), begin: the view is
 *      now PATH plus the journal up to offset P of the journal with base X.
 *   2. Lock released: a loaded copy of the view, removed documents taken
 *      out, metadata saying "holds the journal of base X up to P", written
 *      to PATH.tmp-compact (synced).
 *   3. Under the lock again (the journal has grown to P'): rename the new
 *      file over PATH, then replace the journal by one extending the new
 *      file that holds the records of [P, P').
 *
 * Killed before the first rename: PATH and its journal stand. Between the
 * renames: PATH is the new file and the journal still has base X, which
 * the new file names: it is replayed from P (minlsh__journal_open_ex).
 * After both: the new journal extends the new file. Every committed record
 * is applied exactly once in each case.
 */
#include "store.h"

#include <stdio.h>

/* Step 2: the new file at s->tmp_path; its last 8 bytes in *tag. */
static int minlsh__store_write_new(minlsh_store *s, uint64_t base, uint64_t offset,
                                   uint64_t *tag) {
    minlsh_index *copy = NULL;
    const minlsh_index *src;
    uint8_t *meta = NULL;
    size_t meta_len = 0;
    uint64_t id, size;
    int rc;
    rc = minlsh__lsh_unmapped(s->ix, &copy);
    if (rc != 0) return rc;
    /* An older command file (format version 1) is loaded, not mapped: the
     * view itself is written, and loaded again after the swap. */
    if (copy == NULL) copy = s->ix;
    for (id = 0; id < s->next_id && rc == 0; id++) {
        if (s->docs[id].live) continue;
        rc = minlsh_index_remove(copy, id);
        if (rc == MINLSH_E_NOTFOUND) rc = 0; /* an id never inserted */
    }
    if (rc == 0) rc = minlsh__store_meta_encode(s, base, offset, &meta, &meta_len);
    if (rc == 0) rc = minlsh_index_set_metadata(copy, meta, meta_len);
    minlsh__free(&s->alloc, meta);
    src = copy;
    if (rc == 0) rc = minlsh__index_save_mapped_like(src, s->tmp_path, s->path);
    if (copy != s->ix) minlsh_index_free(copy);
    if (rc == 0) rc = minlsh__file_tail64(s->tmp_path, tag, &size);
    return rc;
}

int minlsh_store_compact(minlsh_store *s) {
    minlsh_filelock *cl = NULL;
    uint64_t base, offset, base2, end, tag = 0;
    int rc;
    if (s == NULL) return MINLSH_E_NULL;
    if ((s->open_flags & MINLSH_STORE_READONLY) || s->in_tx) return MINLSH_E_STATE;
    rc = minlsh_filelock_new(&cl, s->compact_path, MINLSH_LOCK_EXCLUSIVE, 0, &s->alloc);
    if (rc != 0) return rc;
    /* 1 */
    rc = minlsh_store_begin(s);
    if (rc != 0) {
        minlsh_filelock_free(cl);
        return rc;
    }
    minlsh__journal_position(s->jr, &base, &offset);
    minlsh__store_unlock(s);
    s->in_tx = 0;
    /* 2 */
    rc = minlsh__store_write_new(s, base, offset, &tag);
    /* 3 */
    if (rc == 0) rc = minlsh_store_begin(s);
    if (rc == 0) {
        minlsh__journal_position(s->jr, &base2, &end);
        if (base2 != base) {
            rc = MINLSH_E_STATE; /* replaced by a writer that takes no compaction lock */
        } else {
            rc = minlsh__file_rename(&s->alloc, s->tmp_path, s->path);
            /* From here PATH holds the journal up to offset: whatever
             * happens next, the records past it are read from there. */
            if (rc == 0) rc = minlsh__journal_rebase(s->jr, tag, offset, s->path);
            if (rc == 0 || minlsh__file_exists(s->tmp_path) != 1) minlsh__store_drop_view(s);
            /* The new file is mapped with the lock released: PATH cannot
             * change meanwhile, this compaction lock being held. */
            if (rc == 0) rc = minlsh__store_reload(s, MINLSH_LOCK_EXCLUSIVE);
        }
        minlsh__store_unlock(s);
        s->in_tx = 0;
    }
    if (minlsh__file_exists(s->tmp_path) == 1) (void)remove(s->tmp_path);
    minlsh_filelock_free(cl);
    (void)end;
    return rc;
}

/* The change under way has journaled more than the journal should hold
 * (max(1 MiB, 1/32 of PATH)): if no compaction is running, keep the rest of
 * it out of the journal and commit it as a new PATH. Without sets only: a
 * set's record names its place in PATH.sets. */
int minlsh__store_bulk_due(minlsh_store *s) {
    uint64_t base, synced, limit, file = s->ix->file_bytes;
    if (!s->in_tx || (s->cfg.flags & MINLSH_STORE_SETS)) return 0;
    minlsh__journal_position(s->jr, &base, &synced);
    limit = file / 32 > ((uint64_t)1 << 20) ? file / 32 : ((uint64_t)1 << 20);
    if (minlsh_journal_bytes(s->jr) - synced <= limit) return 0;
    /* another compaction writes PATH.tmp-compact: journal on */
    if (minlsh_filelock_new(&s->bulk, s->compact_path, MINLSH_LOCK_EXCLUSIVE, 0, &s->alloc) != 0)
        s->bulk = NULL;
    return 0;
}

/* Under PATH.lock: the view (this change included) as a new PATH that
 * holds the journal up to its last sync, renamed over PATH; the journal
 * then starts again from there, without this change's records. Killed
 * before the rename: PATH and the journal as they were (the change never
 * committed); after it: the new file, whose metadata says which journal
 * records it holds. */
int minlsh__store_commit_bulk(minlsh_store *s) {
    uint64_t base, offset, tag = 0, size;
    uint8_t *meta = NULL;
    size_t meta_len = 0;
    int rc;
    minlsh__journal_position(s->jr, &base, &offset);
    if (minlsh_index_count(s->ix) == s->live) {
        /* nothing removed: the view is written as it is, no copy */
        rc = minlsh__store_meta_encode(s, base, offset, &meta, &meta_len);
        if (rc == 0) rc = minlsh_index_set_metadata(s->ix, meta, meta_len);
        minlsh__free(&s->alloc, meta);
        if (rc == 0) rc = minlsh__index_save_mapped_like(s->ix, s->tmp_path, s->path);
        if (rc == 0) rc = minlsh__file_tail64(s->tmp_path, &tag, &size);
    } else {
        rc = minlsh__store_write_new(s, base, offset, &tag);
    }
    if (rc == 0) rc = minlsh__file_rename(&s->alloc, s->tmp_path, s->path);
    if (rc == 0) {
        minlsh__journal_discard(s->jr);
        rc = minlsh__journal_rebase(s->jr, tag, offset, s->path);
    }
    if (minlsh__file_exists(s->tmp_path) == 1) (void)remove(s->tmp_path);
    minlsh_filelock_free(s->bulk);
    s->bulk = NULL;
    /* the new file mapped again (the lock is held: nothing changes it) */
    if (rc == 0) rc = minlsh__store_reload(s, MINLSH_LOCK_EXCLUSIVE);
    return rc;
}
