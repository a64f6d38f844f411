/*
 * lib/store: the crawler's index in one handle (include/minlsh.h, "Store").
 * Above lsh, shingle and minhash: a mapped index file whose metadata holds
 * the store's configuration and names (meta.c, docs/format.md "Store"),
 * its journal, the file lock, and optional shingle sets (sets.c).
 *
 * What a handle holds of the store, its view, is the mapped file plus the
 * journal replayed into it; names and liveness are kept here per id
 * (ids are dense: 0 .. next_id - 1), since a mapped index cannot remove a
 * document of its file: a removed document stays in the index until the
 * next compaction and is skipped by every query.
 *
 * Memory per document: 24 bytes of doc record, its name, and 16 bytes of
 * name table at most (half full, built at the first lookup of a name),
 * besides the index's own.
 */
#ifndef MINLSH_STORE_H
#define MINLSH_STORE_H

#include "common/common.h"
#include "lsh/lsh.h"

#include <stdatomic.h>

#define MINLSH__STORE_NO_SET UINT64_MAX
/* Exact verification checks candidates whose estimate is at least the
 * threshold minus this: at k = 128 the estimate's standard deviation near
 * 0.8 is 0.035, so a pair whose estimate is this far below is over four
 * deviations from the threshold. */
#define MINLSH__STORE_EXACT_MARGIN 0.15

typedef struct minlsh__store_doc {
    uint64_t name_off; /* in the name arena */
    uint64_t set_off;  /* in PATH.sets; MINLSH__STORE_NO_SET: none */
    uint32_t name_len;
    uint32_t live;     /* 0: never added, or removed */
} minlsh__store_doc;

/* The name table (names.c): a slot holds id + 1 and the name hash's high
 * 32 bits (0: empty). */
typedef struct minlsh__store_names {
    size_t cap, used;
    uint64_t slot[];
} minlsh__store_names;

/* The configuration kept in the file. */
typedef struct minlsh__store_config {
    uint32_t flags; /* MINLSH_STORE_SETS */
    uint32_t unit, shingle_k, norm;
    uint32_t custom_stopwords;
    const uint8_t *stopwords; /* borrowed while parsing; owned in the handle */
    size_t stopwords_len;
    uint64_t config_id;
    double threshold;
    uint32_t legacy; /* the command's text metadata (legacy.c): the config id
                        is the index header's, the journal is not strict */
} minlsh__store_config;

struct minlsh_store {
    minlsh_allocator alloc;
    char *path;          /* PATH, links followed */
    char *journal_path;  /* PATH.journal */
    char *sets_path;     /* PATH.sets */
    char *compact_path;  /* PATH.compact: its lock, PATH.compact.lock */
    char *tmp_path;      /* PATH.tmp-compact: the file a compaction builds */
    uint32_t open_flags; /* MINLSH_STORE_READONLY, _NO_LOCK */
    int key_mismatch;    /* ANY_KEY opened it with another key: no queries */
    uint32_t lock_timeout;
    minlsh__store_config cfg;
    uint8_t *stopwords;
    minlsh_shingler *shingler;
    minlsh_family *family;
    /* the view */
    minlsh_index *ix;
    minlsh_journal *jr;
    int stale;          /* the view must be loaded again before use */
    uint64_t meta_base, meta_offset; /* the journal position PATH holds */
    minlsh__store_doc *docs;
    size_t docs_cap;
    uint64_t next_id;   /* ids below it have a doc record */
    uint64_t live;
    uint64_t named;     /* live documents with a name */
    uint8_t *arena;
    size_t arena_len, arena_cap;
    _Atomic(minlsh__store_names *) names; /* NULL until a name is looked up */
    /* the lock and the change under way */
    minlsh_filelock *lock; /* PATH.lock, open from the first lock to free */
    int locked;            /* whether this handle holds it now */
    int in_tx;
    int sets_fd;
    uint64_t sets_end;   /* where the next set goes */
    int sets_dirty;      /* sets written since the last sync */
    minlsh_filelock *bulk; /* PATH.compact.lock while a change too large for
                              the journal is kept out of it (compact.c) */
    uint8_t *rec;        /* a journal record's bytes */
    size_t rec_cap;
};

/* meta.c: the metadata blob (docs/format.md "Store"). */
int minlsh__store_meta_encode(const minlsh_store *s, uint64_t journal_base,
                              uint64_t journal_offset, uint8_t **out, size_t *len);
/* Parse the configuration only (cfg->stopwords borrowed from data). */
int minlsh__store_meta_config(const uint8_t *data, size_t len, minlsh__store_config *cfg,
                              uint64_t *journal_base, uint64_t *journal_offset);
/* Load the documents of the blob into s's name tables (empty before). */
int minlsh__store_meta_docs(minlsh_store *s, const uint8_t *data, size_t len);

/* legacy.c: the command's text metadata of files made before the store. */
int minlsh__store_legacy_is(const uint8_t *data, size_t len);
int minlsh__store_legacy_config(const uint8_t *data, size_t len, minlsh__store_config *cfg);
int minlsh__store_legacy_docs(minlsh_store *s, const uint8_t *data, size_t len);

/* names.c: the per-id records and the name table. */
/* Room for one more document with a name of name_len bytes: after it,
 * minlsh__store_doc_add cannot fail. */
int minlsh__store_doc_reserve(minlsh_store *s, uint64_t id, size_t name_len);
/* Record document id (room reserved). */
void minlsh__store_doc_add(minlsh_store *s, uint64_t id, const void *name, size_t name_len,
                           uint64_t set_off);
/* Loading a file: room for documents up to last_id and name_bytes of names
 * at once; then each recorded, its name not looked up (the table, when
 * built, checks that names are unique). */
int minlsh__store_docs_presize(minlsh_store *s, uint64_t last_id, size_t name_bytes);
int minlsh__store_doc_load(minlsh_store *s, uint64_t id, const void *name, size_t name_len,
                           uint64_t set_off);
void minlsh__store_doc_remove(minlsh_store *s, uint64_t id);
/* The id of name in *id, UINT64_MAX if none, building the name table if
 * there is none yet (safe in concurrent const calls). Errors:
 * MINLSH_E_NOMEM, MINLSH_E_TOOBIG, MINLSH_E_CORRUPT (two documents have
 * one name). */
int minlsh__store_name_find(uint64_t *id, const minlsh_store *s, const void *name, size_t len);
/* The same answer without a table (the first live document so named), in
 * time proportional to the documents. */
uint64_t minlsh__store_name_scan(const minlsh_store *s, const void *name, size_t len);
/* 1 if a name table is built and holds name: a replayed record checks its
 * name here, leaving a store with no table to the build's check. */
int minlsh__store_name_known(const minlsh_store *s, const void *name, size_t len);
/* Build the name table now (its errors as minlsh__store_name_find's). */
int minlsh__store_names_check(minlsh_store *s);
int minlsh__store_doc_live(const minlsh_store *s, uint64_t id);
void minlsh__store_docs_free(minlsh_store *s);

/* store.c */
/* The journal callback: a replayed record into the name tables. */
int minlsh__store_on_record(void *opaque, uint32_t op, uint64_t id, const void *data,
                            size_t len);
/* Drop the view (index, journal, names). */
void minlsh__store_drop_view(minlsh_store *s);
/* Map PATH into a fresh view (names included; no lock needed), then open
 * its journal (under the lock: exclusive for a writer; MINLSH_E_STATE if
 * the journal extends another file). */
int minlsh__store_map_view(minlsh_store *s);
int minlsh__store_open_journal(minlsh_store *s);
/* Both, under the lock (a journal of another file: MINLSH_E_CORRUPT). */
int minlsh__store_load_view(minlsh_store *s);
/* Load the view again, mapping with the lock (held in mode) released.
 * On error the lock may not be held. */
int minlsh__store_reload(minlsh_store *s, uint32_t mode);
/* Take the lock in mode; release it. */
int minlsh__store_lock(minlsh_store *s, uint32_t mode);
void minlsh__store_unlock(minlsh_store *s);
/* Catch up under the lock held in mode: refresh, or load the view again
 * after a compaction elsewhere. On error the lock may not be held. */
int minlsh__store_catch_up(minlsh_store *s, uint32_t mode);

/* compact.c: a change that alone passes the compaction point (a bulk add)
 * stops journaling its inserts once PATH.compact.lock is had at once, and
 * is committed by writing a new PATH under the lock, as a compaction. */
int minlsh__store_bulk_due(minlsh_store *s);
int minlsh__store_commit_bulk(minlsh_store *s);

/* sets.c: PATH.sets. */
int minlsh__store_sets_open(minlsh_store *s);
/* Append a set at s->sets_end (not synced): its offset in *off. */
int minlsh__store_sets_append(minlsh_store *s, const uint64_t *hashes, size_t n,
                              uint64_t *off);
/* Read the set at off into (*buf, *cap) (grown with s's allocator): n hashes. */
int minlsh__store_sets_read(const minlsh_store *s, uint64_t off, uint64_t **buf,
                            size_t *cap, size_t *n);

#endif /* MINLSH_STORE_H */
