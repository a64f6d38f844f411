/*
 * The store handle: open or create, the view (mapped file, journal, names),
 * the lock, begin / commit / sync / refresh (include/minlsh.h, "Store").
 *
 * A writer's handle keeps its journal open for appending between lock
 * acquisitions: begin takes PATH.lock and reads only what other writers
 * committed since (minlsh_journal_refresh: one stat when nothing is new).
 * When another process compacted, the journal is a new file: the view is
 * loaded again (map, names, journal), once per compaction.
 */
#include "store.h"

#include <stdio.h>

static const char *const minlsh__store_temps[] = {".tmp-", ".journal.tmp-", ".sets.tmp-"};

int minlsh_store_options_init(minlsh_store_options *opts, uint32_t version) {
    static const minlsh_store_options init = MINLSH_STORE_OPTIONS_INIT;
    if (opts == NULL) return MINLSH_E_NULL;
    if (version != 1) return MINLSH_E_VERSION;
    *opts = init;
    opts->version = version;
    return 0;
}

int minlsh__store_lock(minlsh_store *s, uint32_t mode) {
    uint32_t t = s->lock_timeout != 0 ? s->lock_timeout : MINLSH_LOCK_WAIT_FOREVER;
    int rc;
    if (s->open_flags & MINLSH_STORE_NO_LOCK) return 0; /* the caller holds it */
    /* PATH.lock stays open for the handle's life: a writer takes the lock
     * once a page, and the path lookup, open and close cost more than the
     * flock itself. */
    if (s->lock == NULL && (rc = minlsh__filelock_open(&s->lock, s->path, mode, &s->alloc)) != 0)
        return rc;
    rc = minlsh__filelock_acquire(s->lock, mode, t);
    s->locked = rc == 0;
    return rc;
}

void minlsh__store_unlock(minlsh_store *s) {
    if (s->locked) minlsh__filelock_release(s->lock);
    s->locked = 0;
}

int minlsh__store_on_record(void *opaque, uint32_t op, uint64_t id, const void *data,
                            size_t len) {
    minlsh_store *s = (minlsh_store *)opaque;
    const uint8_t *d = (const uint8_t *)data;
    uint64_t set_off = MINLSH__STORE_NO_SET;
    int rc;
    if (op == MINLSH_JOURNAL_REMOVE) {
        if (!minlsh__store_doc_live(s, id)) return MINLSH_E_CORRUPT;
        minlsh__store_doc_remove(s, id);
        return 0;
    }
    if (minlsh__store_doc_live(s, id) || id == UINT64_MAX) return MINLSH_E_CORRUPT;
    if (s->cfg.flags & MINLSH_STORE_SETS) {
        if (len < 8) return MINLSH_E_CORRUPT;
        set_off = minlsh__load64le(d);
        d += 8;
        len -= 8;
    }
    if (minlsh__store_name_known(s, d, len)) return MINLSH_E_CORRUPT;
    rc = minlsh__store_doc_reserve(s, id, len);
    if (rc != 0) return rc;
    minlsh__store_doc_add(s, id, d, len, set_off);
    return 0;
}

void minlsh__store_drop_view(minlsh_store *s) {
    minlsh_journal_free(s->jr);
    minlsh_index_free(s->ix);
    s->jr = NULL;
    s->ix = NULL;
    minlsh__store_docs_free(s);
    s->stale = 1;
}

int minlsh__store_map_view(minlsh_store *s) {
    minlsh_load_options lo = MINLSH_LOAD_OPTIONS_INIT;
    minlsh__store_config cfg;
    int rc;
    memset(&cfg, 0, sizeof cfg); /* read only once the metadata filled it */
    minlsh__store_drop_view(s);
    lo.family = s->family;
    lo.config_id = s->cfg.config_id;
    lo.alloc = &s->alloc;
    rc = minlsh_index_map(&s->ix, s->path, &lo);
    if (rc == 0)
        rc = minlsh__store_meta_config(s->ix->meta.data, s->ix->meta.len, &cfg, &s->meta_base,
                                       &s->meta_offset);
    if (rc == 0 && cfg.legacy) cfg.config_id = s->ix->config_id;
    if (rc == 0 && (cfg.config_id != s->cfg.config_id || cfg.flags != s->cfg.flags))
        rc = MINLSH_E_MISMATCH;
    if (rc == 0) rc = minlsh__store_meta_docs(s, s->ix->meta.data, s->ix->meta.len);
    /* The command's files number their documents 0 .. n-1, name i for id i. */
    if (rc == 0 && cfg.legacy &&
        (minlsh_index_count(s->ix) != s->live || s->live != s->next_id))
        rc = MINLSH_E_CORRUPT;
    if (rc == 0) s->cfg.legacy = cfg.legacy;
    if (rc != 0) minlsh__store_drop_view(s);
    return rc;
}

int minlsh__store_open_journal(minlsh_store *s) {
    int rc = minlsh__journal_open_ex(
        &s->jr, s->ix, s->journal_path,
        (s->open_flags & MINLSH_STORE_READONLY) ? MINLSH_JOURNAL_READ : MINLSH_JOURNAL_WRITE,
        /* The command's older files were compacted by a save that left a
         * stale journal behind when killed before replacing it. */
        (s->cfg.legacy ? 0u : MINLSH__JOURNAL_STRICT) | MINLSH__JOURNAL_KEEP_REMOVES,
        s->meta_base, s->meta_offset,
        minlsh__store_on_record, s);
    if (rc != 0) {
        minlsh__store_drop_view(s);
        return rc;
    }
    s->stale = 0;
    return 0;
}

int minlsh__store_load_view(minlsh_store *s) {
    int rc = minlsh__store_map_view(s);
    if (rc == 0) rc = minlsh__store_open_journal(s);
    /* A journal that extends neither this file nor the one it names:
     * nothing here can say which records it holds. */
    return rc == MINLSH_E_STATE ? MINLSH_E_CORRUPT : rc;
}

int minlsh__store_reload(minlsh_store *s, uint32_t mode) {
    int rc;
    /* The mapping and the names, the long part, without the lock (PATH is
     * only ever replaced by a rename, so what is mapped is a whole file);
     * the journal under it. Another compaction in between: all under it. */
    minlsh__store_unlock(s);
    rc = minlsh__store_map_view(s);
    if (rc == 0 || rc == MINLSH_E_CORRUPT || rc == MINLSH_E_IO) {
        int rl = minlsh__store_lock(s, mode);
        if (rl != 0) return rl;
    }
    if (rc == 0) rc = minlsh__store_open_journal(s);
    if (rc == MINLSH_E_STATE || rc == MINLSH_E_CORRUPT || rc == MINLSH_E_IO)
        rc = minlsh__store_load_view(s);
    return rc;
}

int minlsh__store_catch_up(minlsh_store *s, uint32_t mode) {
    int rc;
    if (!s->stale) {
        rc = minlsh_journal_refresh(s->jr, s->ix, minlsh__store_on_record, s);
        if (rc == 0) return 0;
        /* replaced by a compaction elsewhere, or half applied: load again */
        if (rc != MINLSH_E_STATE && rc != MINLSH_E_NOMEM) {
            minlsh__store_drop_view(s);
            return rc;
        }
    }
    return minlsh__store_reload(s, mode);
}

/* The configuration a new store gets from opts. */
static int minlsh__store_create(minlsh_store *s, const minlsh_store_options *o) {
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    minlsh_index *ix = NULL;
    uint32_t bands = o->bands, rows = o->rows;
    uint8_t *meta = NULL;
    size_t meta_len = 0;
    int rc;
    if (bands == 0 && rows == 0) {
        po.mode = MINLSH_PLAN_RECALL;
        po.k = minlsh_family_k(s->family);
        po.threshold = s->cfg.threshold < 1.0 ? s->cfg.threshold : 0.99;
        po.target_recall = 0.999;
        rc = minlsh_plan_compute(&bands, &rows, NULL, NULL, &po);
        if (rc != 0) return rc;
    }
    rc = minlsh__lsh_index_create(&ix, minlsh_family_k(s->family), minlsh_family_scheme(s->family),
                                  minlsh_family_seed(s->family), s->cfg.config_id, bands, rows,
                                  &s->alloc);
    if (rc == 0 && ((uint64_t)bands * rows > minlsh_family_k(s->family) || bands == 0 || rows == 0))
        rc = MINLSH_E_PARAM;
    if (rc == 0) rc = minlsh__store_meta_encode(s, 0, 0, &meta, &meta_len);
    if (rc == 0) rc = minlsh_index_set_metadata(ix, meta, meta_len);
    minlsh__free(&s->alloc, meta);
    /* A journal or sets beside no file belong to a store that is gone. */
    if (rc == 0 && (minlsh__file_exists(s->journal_path) == 1 && remove(s->journal_path) != 0))
        rc = MINLSH_E_IO;
    if (rc == 0 && (minlsh__file_exists(s->sets_path) == 1 && remove(s->sets_path) != 0))
        rc = MINLSH_E_IO;
    if (rc == 0) rc = minlsh_index_save_mapped(ix, s->path);
    minlsh_index_free(ix);
    return rc;
}

static char *minlsh__cat(const minlsh_allocator *a, const char *s, const char *suffix) {
    size_t n1 = strlen(s), n2 = strlen(suffix);
    char *out = (char *)minlsh__malloc(a, n1 + n2 + 1);
    if (out != NULL) {
        memcpy(out, s, n1);
        memcpy(out + n1, suffix, n2 + 1);
    }
    return out;
}

/* The shingler and family: from opts for a new store, from the file's
 * configuration otherwise (cfg filled in from whichever). */
static int minlsh__store_make_hashing(minlsh_store *s, const minlsh_store_options *o,
                                      const minlsh__store_config *file, uint32_t k,
                                      uint64_t seed, uint32_t scheme) {
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    int rc;
    if (file != NULL) {
        so.unit = file->unit;
        so.k = file->shingle_k;
        so.flags = file->norm;
        if (file->custom_stopwords) {
            s->stopwords = (uint8_t *)minlsh__malloc(&s->alloc, file->stopwords_len + 1);
            if (s->stopwords == NULL) return MINLSH_E_NOMEM;
            memcpy(s->stopwords, file->stopwords, file->stopwords_len);
            so.stopwords = (const char *)s->stopwords;
            so.stopwords_len = file->stopwords_len;
        }
    } else if (o->shingler != NULL) {
        if (o->shingler->version < 1 || o->shingler->version > MINLSH_SHINGLER_OPTIONS_VERSION)
            return MINLSH_E_VERSION;
        so.unit = o->shingler->unit;
        so.k = o->shingler->k;
        so.flags = o->shingler->flags;
        if (o->shingler->key != NULL) return MINLSH_E_PARAM;
        if (o->shingler->stopwords != NULL) {
            s->stopwords = (uint8_t *)minlsh__malloc(&s->alloc, o->shingler->stopwords_len + 1);
            if (s->stopwords == NULL) return MINLSH_E_NOMEM;
            memcpy(s->stopwords, o->shingler->stopwords, o->shingler->stopwords_len);
            so.stopwords = (const char *)s->stopwords;
            so.stopwords_len = o->shingler->stopwords_len;
        }
    }
    so.key = o->key;
    so.max_document_bytes = o->max_document_bytes;
    rc = minlsh_shingler_new(&s->shingler, &so, &s->alloc);
    if (rc == 0) rc = minlsh_family_new_scheme(&s->family, k, seed, scheme, &s->alloc);
    if (rc != 0) return rc;
    s->cfg.unit = minlsh_shingler_unit(s->shingler);
    s->cfg.shingle_k = minlsh_shingler_k(s->shingler);
    s->cfg.norm = minlsh_shingler_flags(s->shingler);
    s->cfg.custom_stopwords = so.stopwords != NULL;
    s->cfg.stopwords = s->stopwords;
    s->cfg.stopwords_len = so.stopwords != NULL ? so.stopwords_len : 0;
    return minlsh_shingler_config_id(&s->cfg.config_id, s->shingler);
}

/* Read the options the caller's version had; the rest stays default. */
static int minlsh__store_read_options(minlsh_store_options *o, const minlsh_store_options *in) {
    *o = (minlsh_store_options)MINLSH_STORE_OPTIONS_INIT;
    if (in == NULL) return 0;
    if (in->version != 1) return MINLSH_E_VERSION;
    *o = *in;
    if (o->reserved != 0 ||
        (o->flags & ~(MINLSH_STORE_CREATE | MINLSH_STORE_READONLY | MINLSH_STORE_SETS |
                      MINLSH_STORE_EXCL | MINLSH_STORE_TRUNCATE | MINLSH_STORE_ANY_KEY |
                      MINLSH_STORE_NO_LOCK)) != 0)
        return MINLSH_E_PARAM;
    if ((o->flags & MINLSH_STORE_CREATE) && (o->flags & MINLSH_STORE_READONLY))
        return MINLSH_E_PARAM;
    if ((o->flags & (MINLSH_STORE_EXCL | MINLSH_STORE_TRUNCATE)) &&
        (!(o->flags & MINLSH_STORE_CREATE) ||
         (o->flags & (MINLSH_STORE_EXCL | MINLSH_STORE_TRUNCATE)) ==
             (MINLSH_STORE_EXCL | MINLSH_STORE_TRUNCATE)))
        return MINLSH_E_PARAM;
    if ((o->flags & MINLSH_STORE_ANY_KEY) && (o->flags & MINLSH_STORE_CREATE))
        return MINLSH_E_PARAM;
    if (o->threshold != 0.0 && !(o->threshold > 0.0 && o->threshold <= 1.0)) return MINLSH_E_PARAM;
    if (o->num_perm > MINLSH_FAMILY_K_MAX || o->scheme > MINLSH__SCHEME_MAX) return MINLSH_E_PARAM;
    if ((o->bands == 0) != (o->rows == 0)) return MINLSH_E_PARAM;
    return 0;
}

/* Open an existing store's hashing and check the creation options. */
static int minlsh__store_attach(minlsh_store *s, const minlsh_store_options *o) {
    minlsh_index *probe = NULL;
    minlsh__store_config cfg;
    uint64_t base, off;
    int rc;
    /* The header and metadata, before the key can be checked. */
    rc = minlsh_index_map(&probe, s->path, NULL);
    if (rc == 0) rc = minlsh__store_meta_config(probe->meta.data, probe->meta.len, &cfg, &base, &off);
    if (rc == 0 && cfg.legacy) cfg.config_id = probe->config_id;
    if (rc == 0 && ((o->num_perm != 0 && o->num_perm != probe->k) ||
                    (o->seed != 0 && o->seed != probe->seed) ||
                    (o->scheme != 0 && o->scheme != probe->scheme) ||
                    (o->bands != 0 && (o->bands != probe->bands || o->rows != probe->rows)) ||
                    (o->threshold != 0.0 && o->threshold != cfg.threshold) ||
                    ((o->flags & MINLSH_STORE_SETS) && !(cfg.flags & MINLSH_STORE_SETS))))
        rc = MINLSH_E_MISMATCH;
    if (rc == 0) {
        s->cfg.flags = cfg.flags;
        s->cfg.threshold = cfg.threshold;
        rc = minlsh__store_make_hashing(s, o, &cfg, probe->k, probe->seed, probe->scheme);
    }
    if (rc == 0 && probe->config_id != cfg.config_id) rc = MINLSH_E_CORRUPT;
    if (rc == 0 && s->cfg.config_id != cfg.config_id) {
        /* another key: readable, never queried, with ANY_KEY */
        if (o->flags & MINLSH_STORE_ANY_KEY) {
            s->key_mismatch = 1;
            s->cfg.config_id = cfg.config_id;
        } else {
            rc = MINLSH_E_MISMATCH;
        }
    }
    if (rc == 0 && o->shingler != NULL) {
        /* the caller's shingling must be the file's */
        minlsh_store_options o2 = *o;
        minlsh_store tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.alloc = s->alloc;
        rc = minlsh__store_make_hashing(&tmp, &o2, NULL, probe->k, probe->seed, probe->scheme);
        if (rc == 0 && tmp.cfg.config_id != cfg.config_id) rc = MINLSH_E_MISMATCH;
        minlsh_shingler_free(tmp.shingler);
        minlsh_family_free(tmp.family);
        minlsh__free(&tmp.alloc, tmp.stopwords);
    }
    minlsh_index_free(probe);
    return rc;
}

int minlsh_store_open(minlsh_store **out, const char *path, const minlsh_store_options *opts) {
    minlsh_store_options o;
    minlsh_store *s;
    minlsh_allocator al;
    int rc, exists = 0, ro;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (path == NULL) return MINLSH_E_NULL;
    if ((rc = minlsh__store_read_options(&o, opts)) != 0) return rc;
    if ((rc = minlsh__alloc_setup(&al, o.alloc)) != 0) return rc;
    s = (minlsh_store *)minlsh__malloc(&al, sizeof *s);
    if (s == NULL) return MINLSH_E_NOMEM;
    memset(s, 0, sizeof *s);
    s->alloc = al;
    s->sets_fd = -1;
    s->stale = 1;
    s->lock_timeout = o.lock_timeout_ms;
    ro = (o.flags & MINLSH_STORE_READONLY) != 0;
    s->open_flags = o.flags & (MINLSH_STORE_READONLY | MINLSH_STORE_NO_LOCK);
    rc = minlsh__path_resolve(&al, path, &s->path);
    if (rc == 0) {
        s->journal_path = minlsh__cat(&al, s->path, ".journal");
        s->sets_path = minlsh__cat(&al, s->path, ".sets");
        s->compact_path = minlsh__cat(&al, s->path, ".compact");
        s->tmp_path = minlsh__cat(&al, s->path, ".tmp-compact");
        if (s->journal_path == NULL || s->sets_path == NULL || s->compact_path == NULL ||
            s->tmp_path == NULL)
            rc = MINLSH_E_NOMEM;
    }
    if (rc == 0) rc = minlsh__store_lock(s, ro ? MINLSH_LOCK_SHARED : MINLSH_LOCK_EXCLUSIVE);
    if (rc == 0) {
        exists = minlsh__file_exists(s->path);
        if (exists < 0) rc = exists;
        else if (!exists && !(o.flags & MINLSH_STORE_CREATE)) rc = MINLSH_E_NOTFOUND;
        else if (exists && (o.flags & MINLSH_STORE_EXCL)) rc = MINLSH_E_EXISTS;
        else if (exists && (o.flags & MINLSH_STORE_TRUNCATE)) exists = 0;
    }
    if (rc == 0 && !exists) {
        s->cfg.flags = o.flags & MINLSH_STORE_SETS;
        s->cfg.threshold = o.threshold != 0.0 ? o.threshold : 0.8;
        rc = minlsh__store_make_hashing(s, &o, NULL, o.num_perm != 0 ? o.num_perm : 128,
                                        o.seed != 0 ? o.seed : 1, o.scheme);
        if (rc == 0) rc = minlsh__store_create(s, &o);
    } else if (rc == 0) {
        rc = minlsh__store_attach(s, &o);
    }
    if (rc == 0 && !ro) {
        /* Leftovers of writes a kill cut short, only while no compaction
         * (which writes its file outside PATH.lock) can be running. */
        minlsh_filelock *cl = NULL;
        if (minlsh_filelock_new(&cl, s->compact_path, MINLSH_LOCK_EXCLUSIVE, 0, &s->alloc) == 0) {
            rc = minlsh__file_remove_temps(&s->alloc, s->path, minlsh__store_temps,
                                           sizeof minlsh__store_temps / sizeof *minlsh__store_temps,
                                           NULL);
            minlsh_filelock_free(cl);
        }
    }
    if (rc == 0) rc = minlsh__store_load_view(s);
    if (rc == 0 && (s->cfg.flags & MINLSH_STORE_SETS)) {
        if (ro) {
            /* a reader only reads the sets (none yet: no file) */
            if (minlsh__file_exists(s->sets_path) == 1)
                rc = minlsh__file_open_rw(s->sets_path, 0, &s->sets_fd, &s->sets_end);
        } else {
            rc = minlsh__store_sets_open(s);
        }
    }
    minlsh__store_unlock(s);
    if (rc != 0) {
        minlsh_store_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void minlsh_store_free(minlsh_store *s) {
    minlsh_allocator a;
    if (s == NULL) return;
    a = s->alloc;
    minlsh__store_drop_view(s);
    minlsh__store_unlock(s);
    minlsh_filelock_free(s->lock);
    minlsh_filelock_free(s->bulk);
    minlsh__fd_close(s->sets_fd);
    minlsh_shingler_free(s->shingler);
    minlsh_family_free(s->family);
    minlsh__free(&a, s->stopwords);
    minlsh__free(&a, s->rec);
    minlsh__free(&a, s->path);
    minlsh__free(&a, s->journal_path);
    minlsh__free(&a, s->sets_path);
    minlsh__free(&a, s->compact_path);
    minlsh__free(&a, s->tmp_path);
    minlsh__free(&a, s);
}

int minlsh_store_begin(minlsh_store *s) {
    int rc;
    if (s == NULL) return MINLSH_E_NULL;
    if ((s->open_flags & MINLSH_STORE_READONLY) || s->in_tx) return MINLSH_E_STATE;
    rc = minlsh__store_lock(s, MINLSH_LOCK_EXCLUSIVE);
    if (rc != 0) return rc;
    rc = minlsh__store_catch_up(s, MINLSH_LOCK_EXCLUSIVE);
    /* Others may have appended sets since. */
    if (rc == 0 && s->sets_fd >= 0) rc = minlsh__fd_size(s->sets_fd, &s->sets_end);
    if (rc != 0) {
        minlsh__store_unlock(s);
        return rc;
    }
    s->in_tx = 1;
    return 0;
}

/* Sync what was changed since begin; on failure drop it (the view is
 * loaded again at the next begin) and release the lock. */
static int minlsh__store_sync(minlsh_store *s, int release) {
    int rc = 0;
    if (s->bulk != NULL) {
        /* a change past the compaction point: a new PATH, under the lock */
        rc = minlsh__store_commit_bulk(s);
        if (rc != 0) minlsh__store_drop_view(s);
        if (rc != 0 || release) {
            minlsh__store_unlock(s);
            s->in_tx = 0;
        }
        return rc;
    }
    if (s->sets_dirty) {
        rc = minlsh__fd_sync(s->sets_fd);
        if (rc == 0) s->sets_dirty = 0;
    }
    if (rc == 0) rc = minlsh_journal_sync(s->jr);
    if (rc != 0) {
        minlsh__store_drop_view(s);
        release = 1;
    }
    if (release) {
        minlsh__store_unlock(s);
        s->in_tx = 0;
    }
    return rc;
}

int minlsh_store_commit(minlsh_store *s) {
    if (s == NULL) return MINLSH_E_NULL;
    if (!s->in_tx) return MINLSH_E_STATE;
    return minlsh__store_sync(s, 1);
}

int minlsh_store_sync(minlsh_store *s) {
    if (s == NULL) return MINLSH_E_NULL;
    if (!s->in_tx) return 0;
    return minlsh__store_sync(s, 0);
}

int minlsh_store_rollback(minlsh_store *s) {
    int rc;
    if (s == NULL) return MINLSH_E_NULL;
    if (!s->in_tx) return MINLSH_E_STATE;
    /* The records since begin were never synced: dropping the view drops
     * them, as a failed commit does; what reached the files is a tail past
     * the last commit, which the reload cuts (sets past the last committed
     * one are ignored likewise). Reloading while the lock is still held
     * leaves a view the const calls can use at once. */
    minlsh__store_drop_view(s);
    s->sets_dirty = 0;
    rc = minlsh__store_load_view(s);
    minlsh__store_unlock(s);
    s->in_tx = 0;
    return rc;
}

int minlsh_store_refresh(minlsh_store *s) {
    int rc;
    if (s == NULL) return MINLSH_E_NULL;
    if (s->in_tx) return 0;
    rc = minlsh__store_lock(s, MINLSH_LOCK_SHARED);
    if (rc != 0) return rc;
    if ((s->open_flags & MINLSH_STORE_READONLY) || s->stale) {
        rc = minlsh__store_catch_up(s, MINLSH_LOCK_SHARED);
    } else {
        /* A writer's handle appends: a torn tail must be cut under the
         * exclusive lock, so it catches up there. */
        minlsh__store_unlock(s);
        rc = minlsh__store_lock(s, MINLSH_LOCK_EXCLUSIVE);
        if (rc == 0) rc = minlsh__store_catch_up(s, MINLSH_LOCK_EXCLUSIVE);
    }
    minlsh__store_unlock(s);
    return rc;
}

uint64_t minlsh_store_count(const minlsh_store *s) { return s != NULL ? s->live : 0; }

double minlsh_store_threshold(const minlsh_store *s) {
    return s != NULL ? s->cfg.threshold : 0.0;
}

const minlsh_shingler *minlsh_store_view_shingler(const minlsh_store *s) {
    return s != NULL ? s->shingler : NULL;
}

int minlsh_store_find_name(uint64_t *id, const minlsh_store *s, const void *name,
                           size_t name_len) {
    uint64_t v;
    if (id == NULL || s == NULL || (name == NULL && name_len > 0)) return MINLSH_E_NULL;
    /* With no table to be had (no memory for it, or names that repeat,
     * which the calls that change the store report), a scan answers. */
    if (minlsh__store_name_find(&v, s, name, name_len) != 0)
        v = minlsh__store_name_scan(s, name, name_len);
    if (v == UINT64_MAX) return MINLSH_E_NOTFOUND;
    *id = v;
    return 0;
}

int minlsh_store_copy_name(const minlsh_store *s, uint64_t id, void *buf, size_t cap,
                           size_t *n_out) {
    const minlsh__store_doc *d;
    if (s == NULL) return MINLSH_E_NULL;
    if (!minlsh__store_doc_live(s, id)) return MINLSH_E_NOTFOUND;
    d = &s->docs[id];
    if (n_out != NULL) *n_out = d->name_len;
    if (cap < d->name_len) return MINLSH_E_BUFSIZE;
    if (d->name_len > 0) {
        if (buf == NULL) return MINLSH_E_NULL;
        memcpy(buf, s->arena + d->name_off, d->name_len);
    }
    return 0;
}

int minlsh_store_compact_due(const minlsh_store *s) {
    if (s == NULL) return MINLSH_E_NULL;
    if (s->jr == NULL) return 0;
    return minlsh_journal_compact_due(s->jr, s->ix);
}
