/*
 * index.c: minlsh index create | add | query | stats | merge, on a
 * persistent index file (minlsh_index_save: atomic, checksummed).
 *
 * The library stores the signatures, k, the seed, (b, r) and the shingler's
 * config id; the command keeps the rest in the index's metadata blob
 * (index_meta.c): how to shingle new documents the same way (never the key),
 * the threshold, and the names of the documents, name number i being the
 * document with index id i.
 *
 * Several processes may work on one index file at once: every subcommand
 * locks INDEX.lock (minlsh_filelock), exclusively from before the load to
 * after the save for those that write (create, add, merge's OUT), shared
 * for the load of those that read, so no saved document is ever lost to a
 * writer that loaded an older version.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cli_help_index_create[] =
    "Usage: minlsh index create [OPTIONS] INDEX\n"
    "\n"
    "Create an empty index file. The shingling options, the threshold, the\n"
    "MinHash parameters and the banding are fixed here and used by every later\n"
    "'index add' and 'index query'. The key itself is never stored: give the same\n"
    "--key to 'add' and 'query'.\n"
    "\n"
    "      --threshold T       similarity threshold for queries (default: 0.8)\n"
    "      --num-perm K        MinHash values per signature (default: 128)\n"
    "      --bands B, --rows R LSH banding (default: planned for recall 0.999 at T)\n"
    "      --seed N            MinHash family seed (default: 1)\n"
    "      --scheme S          classic (k hash functions per shingle, the\n"
    "                          default) or oph (one-permutation hashing: one per\n"
    "                          shingle, several times faster to sign; a little\n"
    "                          less accurate on documents of fewer than k\n"
    "                          shingles, and slower below about k/4)\n"
    "      --shingle UNIT, --lowercase, --strip-punct, --collapse-space,\n"
    "      --nfkc, --casefold, --unicode-punct, --unicode-space, --fold-digits,\n"
    "      --cjk-words (default), --no-cjk-words, --normalize, --html, --key HEX\n"
    "                          as for minlsh dedup\n"
    "      --force             overwrite an existing file\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add'\n"
    "  -q, --quiet             do not describe the new index on stderr\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 on success, 1 if INDEX exists (without --force) or cannot\n"
    "be written, 2 for usage errors.\n";

const char cli_help_index_add[] =
    "Usage: minlsh index add [OPTIONS] INDEX PATH...\n"
    "\n"
    "Add documents (files, or JSON Lines records with --jsonl) to INDEX. Names\n"
    "already in the index are reported and skipped. The documents go to\n"
    "INDEX.journal, which is synced at the end: from then on they survive a\n"
    "crash or kill -9, and a run that fails or is killed before adds none of\n"
    "them. When the journal passes 1/32 of the index file (at least 1 MiB) it is\n"
    "folded into INDEX, atomically ('index compact' does it at once). INDEX.lock\n"
    "is held exclusively for the whole run, so concurrent adds all keep their\n"
    "documents. A journal damaged before records it acknowledged stops the run\n"
    "and is left as it is.\n"
    "\n"
    "      --novel-only        add only documents with no near-duplicate (estimated\n"
    "                          similarity >= the index's threshold) in the index or\n"
    "                          earlier in the input; print each decision on stdout\n"
    "      --format FMT        the decisions: text (default), tsv or jsonl\n"
    "      --threshold T       with --novel-only: T instead of the index's threshold\n"
    "      --key HEX           the key given to 'index create', if any\n"
    "      --jsonl, --id-field NAME, --text-field NAME\n"
    "                          as for minlsh dedup\n"
    "      --lock-timeout S    wait at most S seconds for INDEX.lock (default: no\n"
    "                          limit; 0: do not wait)\n"
    "      --no-lock           do not lock INDEX.lock: the caller holds it\n"
    "      --threads N, --progress, -q/--quiet\n"
    "  -h, --help              show this help\n";

const char cli_help_index_query[] =
    "Usage: minlsh index query [OPTIONS] INDEX PATH...\n"
    "\n"
    "For each document (file, or JSON Lines record with --jsonl), print the\n"
    "indexed documents whose estimated similarity reaches the index's\n"
    "threshold, as pairs: a = the query document, b = the indexed one.\n"
    "\n"
    "      --all               print every LSH candidate, whatever its similarity\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add' (a shared lock, for the load)\n"
    "      --threshold T       filter at T instead of the index's threshold\n"
    "      --format FMT        text (default), tsv or jsonl\n"
    "      --key HEX           the key given to 'index create', if any\n"
    "      --jsonl, --id-field NAME, --text-field NAME\n"
    "                          as for minlsh dedup\n"
    "      --threads N, --progress, -q/--quiet\n"
    "  -h, --help              show this help\n";

const char cli_help_index_stats[] =
    "Usage: minlsh index stats INDEX\n"
    "\n"
    "Describe an index: documents, signature length, bands, rows, seed, config\n"
    "id, shingling options, the histogram of band bucket sizes and the file size.\n"
    "\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add' (a shared lock, for the load)\n"
    "  -h, --help              show this help\n";

/* An index file opened by the command. */
typedef struct cli_index {
    const char *path;
    minlsh_index *index;
    int has_meta;       /* 0: no usable metadata (see meta_err) */
    char meta_err[200]; /* why the metadata is damaged, or "" if it is not ours */
    index_meta meta;
    minlsh_shingler *sh;
    minlsh_family *family;
    minlsh_filelock *lock; /* held until index_close (writers) */
    minlsh_journal *journal; /* INDEX.journal: what was added since the file */
    int journal_write;       /* opened for appending (under the exclusive lock) */
    int by_number;           /* names are only got by number (query): not hashed */
} cli_index;

static void index_close(cli_index *x) {
    minlsh_journal_free(x->journal);
    x->journal = NULL;
    minlsh_filelock_free(x->lock);
    x->lock = NULL;
    minlsh_index_free(x->index);
    index_meta_free(&x->meta);
    minlsh_shingler_free(x->sh);
    minlsh_family_free(x->family);
}

/* ---- metadata ----------------------------------------------------------- */

static int read_meta(cli_index *x) {
    cli_buf m = {NULL, 0, 0};
    size_t n = 0;
    int rc = minlsh_index_copy_metadata(x->index, NULL, 0, &n);
    if (rc == MINLSH_E_BUFSIZE) {
        buf_reserve(&m, n);
        rc = minlsh_index_copy_metadata(x->index, m.p, n, &n);
        m.n = n;
    }
    if (rc != 0) cli_die_lib(x->path, rc);
    x->has_meta = 0;
    x->meta_err[0] = '\0';
    rc = index_meta_parse_names(&x->meta, m.p ? m.p : "", m.n, !x->by_number, x->meta_err,
                                sizeof x->meta_err);
    if (rc == 0 && x->meta.names.n != minlsh_index_count(x->index)) {
        snprintf(x->meta_err, sizeof x->meta_err, "%zu name%s for %llu document%s",
                 x->meta.names.n, cli_plural(x->meta.names.n),
                 (unsigned long long)minlsh_index_count(x->index),
                 cli_plural(minlsh_index_count(x->index)));
        rc = -1;
    }
    x->has_meta = rc == 0;
    buf_free(&m);
    return x->has_meta;
}

/* Why x cannot be used by add, query or merge. */
static void meta_refused(const cli_index *x) {
    if (x->meta_err[0])
        cli_msg("%s: the index metadata is damaged: %s", x->path, x->meta_err);
    else
        cli_msg("%s: not an index made by 'minlsh index create' (it has no metadata "
                "of this command)", x->path);
}

/* ---- opening, checking and saving --------------------------------------- */

static int load_error(const char *path, int rc) {
    cli_msg("%s: %s (%s)", path, minlsh_strerror(rc), minlsh_error_name(rc));
    return CLI_FAILED;
}

/* Build the shingler the index was made with (key from the command line) and
 * check it against the stored config id. The message names what differs:
 * the key when the metadata says one thing and the command line another,
 * else the stored shingling options (with the key the index expects, they
 * do not give its config id: the metadata does not belong to the file). */
static int index_shingler(cli_index *x, const cli_opts *o) {
    uint64_t id = 0;
    cli_buf desc = {NULL, 0, 0};
    x->sh = cli_shingler_new(x->meta.unit, x->meta.shingle_k, x->meta.flags, o->key, &id);
    if (id != minlsh_index_config_id(x->index)) {
        int key_differs = x->meta.custom_key != o->custom_key;
        opts_describe_shingle(&desc, x->meta.unit, x->meta.shingle_k);
        buf_adds(&desc, ", normalize ");
        opts_describe_flags(&desc, x->meta.flags);
        buf_addc(&desc, '\0');
        if (key_differs)
            cli_msg("%s: %s (%s): the index was made with %s; %s", x->path,
                    minlsh_strerror(MINLSH_E_MISMATCH), minlsh_error_name(MINLSH_E_MISMATCH),
                    x->meta.custom_key ? "a custom --key" : "the default key",
                    x->meta.custom_key ? "give the same --key as to 'index create'"
                                       : "do not give --key");
        else if (x->meta.custom_key)
            cli_msg("%s: %s (%s): the --key given, or the shingling options stored in the "
                    "index (shingle %s), differ from those the index was made with; give the "
                    "same --key as to 'index create'",
                    x->path, minlsh_strerror(MINLSH_E_MISMATCH),
                    minlsh_error_name(MINLSH_E_MISMATCH), desc.p);
        else
            cli_msg("%s: %s (%s): the shingling options stored in the index (shingle %s) are "
                    "not those its signatures were made with (config id %016llx, not "
                    "%016llx): its metadata was changed or written by another program",
                    x->path, minlsh_strerror(MINLSH_E_MISMATCH),
                    minlsh_error_name(MINLSH_E_MISMATCH), desc.p,
                    (unsigned long long)id,
                    (unsigned long long)minlsh_index_config_id(x->index));
        buf_free(&desc);
        return CLI_FAILED;
    }
    if (x->meta.scheme != minlsh_index_scheme(x->index)) {
        cli_msg("%s: the index metadata is damaged: it says scheme %s, the file holds %s "
                "signatures", x->path, opts_scheme_name(x->meta.scheme),
                opts_scheme_name(minlsh_index_scheme(x->index)));
        return CLI_FAILED;
    }
    x->family = cli_family_new(minlsh_index_k(x->index), minlsh_index_seed(x->index),
                               minlsh_index_scheme(x->index));
    return 0;
}

#define LOCK_NONE 0

/* The file path names, its links followed (realpath), so that the journal
 * and the temporaries of an index reached through a link are those beside
 * the file, as its lock is; the path as given when it cannot be resolved
 * (the open that follows reports why). Freed by the caller. */
static char *index_real_path(const char *path) {
    char *real = realpath(path, NULL);
    return real != NULL ? real : xstrdup(path);
}

/* A save writes PATH.tmp-<16 hex digits> and renames it over PATH; a save
 * cut short (kill -9, a crash, a power cut) leaves that file behind. Under
 * the exclusive lock no other save can be under way, so any such file is
 * a leftover: remove them, saying how many. */
static void remove_stale_temps(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    size_t dir_n = slash != NULL ? (size_t)(slash - path) : 0, base_n = strlen(base);
    char *dir = xmalloc(dir_n + 2);
    cli_buf full = {0};
    struct dirent *e;
    unsigned removed = 0;
    DIR *d;
    if (slash != NULL) memcpy(dir, path, dir_n > 0 ? dir_n : 1);
    dir[slash != NULL ? (dir_n > 0 ? dir_n : 1) : 0] = '\0';
    d = opendir(slash != NULL ? dir : ".");
    while (d != NULL && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        size_t i;
        if (strncmp(n, base, base_n) != 0 || strncmp(n + base_n, ".tmp-", 5) != 0 ||
            strlen(n) != base_n + 5 + 16)
            continue;
        for (i = base_n + 5; i < base_n + 21; i++)
            if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f'))) break;
        if (i < base_n + 21) continue;
        buf_clear(&full);
        if (slash != NULL) {
            buf_add(&full, dir, strlen(dir));
            buf_addc(&full, '/');
        }
        buf_add(&full, n, strlen(n));
        buf_addc(&full, '\0');
        if (unlink(full.p) == 0) removed++;
    }
    if (d != NULL) closedir(d);
    if (removed > 0)
        cli_msg("%s: removed %u temporary file%s left by an earlier save that did not finish",
                path, removed, cli_plural(removed));
    buf_free(&full);
    free(dir);
}

/* Lock path.lock in mode (MINLSH_LOCK_*; LOCK_NONE or --no-lock: nothing
 * to do), waiting as --lock-timeout says. A reader that cannot create the
 * lock file (a read-only directory) goes on without it: saves are atomic
 * renames, so an unlocked load still reads one whole version. */
static int index_lock(minlsh_filelock **out, const char *path, uint32_t mode,
                      const cli_opts *o) {
    uint32_t wait = o->lock_timeout_ms, first = wait < 1000 ? wait : 1000;
    int rc, err;
    *out = NULL;
    if (mode == LOCK_NONE || o->no_lock) return 0;
    /* A short try first, so that a long wait is announced, not silent. */
    rc = minlsh_filelock_new(out, path, mode, first, NULL);
    if (rc == MINLSH_E_BUSY && wait > first) {
        if (!o->quiet)
            cli_msg("%s: waiting for the lock on %s.lock (another process holds it)", path,
                    path);
        rc = minlsh_filelock_new(out, path, mode,
                                 wait == MINLSH_LOCK_WAIT_FOREVER ? wait : wait - first, NULL);
    }
    if (rc == 0) {
        if (mode == MINLSH_LOCK_EXCLUSIVE) {
            cli_buf jp = {NULL, 0, 0};
            char *real = index_real_path(path);
            remove_stale_temps(real);
            buf_adds(&jp, real);
            buf_adds(&jp, ".journal");
            buf_addc(&jp, '\0');
            remove_stale_temps(jp.p);
            buf_free(&jp);
            free(real);
        }
        return 0;
    }
    err = errno;
    if (rc == MINLSH_E_BUSY) {
        cli_msg("%s: gave up waiting for the %s lock on %s.lock after %g s: another process "
                "is %s the index (--lock-timeout sets the wait)", path,
                mode == MINLSH_LOCK_SHARED ? "shared" : "exclusive", path, wait / 1000.0,
                mode == MINLSH_LOCK_SHARED ? "writing" : "using");
        return CLI_FAILED;
    }
    if (rc == MINLSH_E_IO && mode == MINLSH_LOCK_SHARED &&
        (err == EACCES || err == EROFS || err == EPERM))
        return 0;
    if (rc == MINLSH_E_NOMEM) cli_die_lib(path, rc);
    cli_msg("%s: cannot lock %s.lock: %s", path, path, strerror(err));
    return CLI_FAILED;
}

/* A journal record replayed: an added document, whose name is the
 * record's bytes and whose id is the next name number. The command appends
 * nothing else (index remove rewrites the file). */
static int journal_record(void *opaque, uint32_t op, uint64_t id, const void *data,
                          size_t len) {
    cli_index *x = opaque;
    if (op != MINLSH_JOURNAL_INSERT || !x->has_meta || id != x->meta.names.n ||
        !json_token_valid(data, len))
        return MINLSH_E_CORRUPT;
    if (x->by_number) names_append(&x->meta.names, data, len, 1);
    else if (!names_add(&x->meta.names, data, len, 1, NULL)) return MINLSH_E_CORRUPT;
    return 0;
}

/* Replay INDEX.journal (under the lock): for writing with the exclusive
 * lock, else for reading. */
static int index_journal(cli_index *x, uint32_t lock) {
    cli_buf jp = {NULL, 0, 0};
    char *real = index_real_path(x->path);
    int rc;
    buf_adds(&jp, real);
    buf_adds(&jp, ".journal");
    buf_addc(&jp, '\0');
    free(real);
    x->journal_write = lock == MINLSH_LOCK_EXCLUSIVE;
    rc = minlsh_journal_open(&x->journal, x->index, jp.p,
                             x->journal_write ? MINLSH_JOURNAL_WRITE : MINLSH_JOURNAL_READ,
                             journal_record, x);
    if (rc == MINLSH_E_CORRUPT)
        cli_msg("%s: %s (%s): a damaged record lies before records that were committed; "
                "the journal was left as it is (copy it aside before repairing it)", jp.p,
                minlsh_strerror(rc), minlsh_error_name(rc));
    else if (rc != 0) {
        int err = errno;
        cli_msg("%s: %s (%s)%s%s", jp.p, minlsh_strerror(rc), minlsh_error_name(rc),
                rc == MINLSH_E_IO ? ": " : "", rc == MINLSH_E_IO ? strerror(err) : "");
    }
    buf_free(&jp);
    return rc == 0 ? 0 : CLI_FAILED;
}

/* Load INDEX; with o non-NULL also prepare to shingle and sign like it.
 * lock: LOCK_NONE, MINLSH_LOCK_SHARED (held for the load only) or
 * MINLSH_LOCK_EXCLUSIVE (held until index_close). */
/* INDEX must be a regular file: a FIFO would block the open, a directory
 * would only say "input/output error". */
static int index_check_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        cli_msg("%s: cannot open the index: %s%s", path, strerror(errno),
                errno == ENOENT ? " (create it with 'minlsh index create')" : "");
        return CLI_FAILED;
    }
    if (!S_ISREG(st.st_mode)) {
        cli_msg("%s: cannot open the index: %s, not an index file", path,
                S_ISDIR(st.st_mode)    ? "a directory"
                : S_ISFIFO(st.st_mode) ? "a FIFO"
                : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                             : "not a regular file");
        return CLI_FAILED;
    }
    return 0;
}

static int index_open(cli_index *x, const char *path, const cli_opts *o,
                      const cli_opts *lo, uint32_t lock) {
    int rc;
    memset(x, 0, sizeof *x);
    x->path = path;
    if ((rc = index_check_path(path)) != 0) return rc;
    if (lo != NULL && (rc = index_lock(&x->lock, path, lock, lo)) != 0) return rc;
    /* add and query read the file in place (a version 2 file is not
     * loaded; add's documents go to the journal); the others need the
     * index in memory. */
    errno = 0;
    if (o != NULL) cli_guard_mapped(path);
    if (o != NULL)
        rc = minlsh_index_map(&x->index, path, NULL);
    else
        rc = minlsh_index_load(&x->index, path, NULL);
    if (rc != 0) {
        minlsh_filelock_free(x->lock);
        x->lock = NULL;
        return load_error(path, rc);
    }
    /* A query gets names by number only: it does not hash a million names
     * to look none of them up. */
    x->by_number = o != NULL && lock == MINLSH_LOCK_SHARED;
    read_meta(x);
    rc = index_journal(x, lock);
    if (lock == MINLSH_LOCK_SHARED) {
        minlsh_filelock_free(x->lock);
        x->lock = NULL;
    }
    if (rc != 0) {
        index_close(x);
        return rc;
    }
    if (!x->has_meta && o != NULL) {
        meta_refused(x);
        index_close(x);
        return CLI_FAILED;
    }
    if (o != NULL && (rc = index_shingler(x, o)) != 0) {
        index_close(x);
        return rc;
    }
    return 0;
}

/* Save the whole index over its file; with the journal open for writing,
 * through a compaction, which also empties the journal. */
static int index_save(cli_index *x) {
    cli_buf m = {NULL, 0, 0};
    int rc;
    index_meta_build(&m, &x->meta, minlsh_index_k(x->index), minlsh_index_seed(x->index));
    rc = minlsh_index_set_metadata(x->index, m.p, m.n);
    buf_free(&m);
    if (rc != 0) return load_error(x->path, rc);
    errno = 0;
    if (x->journal != NULL && x->journal_write)
        rc = minlsh_journal_compact(x->journal, x->index, x->path);
    else
        rc = minlsh_index_save_mapped(x->index, x->path);
    if (rc != 0) {
        int err = errno; /* the failing system call's, if the library left it */
        cli_msg("%s: cannot save the index: %s (%s)%s%s", x->path, minlsh_strerror(rc),
                minlsh_error_name(rc), rc == MINLSH_E_IO && err ? ": " : "",
                rc == MINLSH_E_IO && err ? strerror(err) : "");
        return CLI_FAILED;
    }
    return 0;
}

/* Make the journaled additions durable (they are acknowledged from here),
 * or, when the journal has grown past its bound (compact), fold it and them
 * into the file. */
static int index_commit(cli_index *x, int compact) {
    int rc;
    if (compact || minlsh_journal_compact_due(x->journal, x->index) == 1) return index_save(x);
    errno = 0;
    rc = minlsh_journal_sync(x->journal);
    if (rc != 0) {
        int err = errno;
        cli_msg("%s: cannot write the journal: %s (%s)%s%s", x->path, minlsh_strerror(rc),
                minlsh_error_name(rc), rc == MINLSH_E_IO && err ? ": " : "",
                rc == MINLSH_E_IO && err ? strerror(err) : "");
        return CLI_FAILED;
    }
    return 0;
}

/* ---- reading through the store (query, stats) --------------------------- */

/* Which file a MINLSH_E_CORRUPT is about: 1 when INDEX itself reads as an
 * index file and has a journal beside it (the journal is to blame). */
static int store_file_sound(const char *path) {
    minlsh_index *ix = NULL;
    cli_buf jp = {NULL, 0, 0};
    struct stat st;
    int sound = minlsh_index_map(&ix, path, NULL) == 0;
    minlsh_index_free(ix);
    buf_adds(&jp, path);
    buf_adds(&jp, ".journal");
    buf_addc(&jp, '\0');
    sound = sound && stat(jp.p, &st) == 0;
    buf_free(&jp);
    return sound;
}

/* The message for a store that would not open; CLI_FAILED. */
static int store_open_error(const char *path, int rc, const cli_opts *o, int err) {
    if (rc == MINLSH_E_NOMEM) cli_die_lib(path, rc);
    if (rc == MINLSH_E_BUSY) {
        cli_msg("%s: gave up waiting for the shared lock on %s.lock after %g s: another "
                "process is writing the index (--lock-timeout sets the wait)", path, path,
                o->lock_timeout_ms / 1000.0);
    } else if (rc == MINLSH_E_CORRUPT && store_file_sound(path)) {
        cli_msg("%s.journal: %s (%s): a damaged record lies before records that were "
                "committed, or the journal does not extend %s; it was left as it is (copy "
                "it aside before repairing it)", path, minlsh_strerror(rc),
                minlsh_error_name(rc), path);
    } else if (rc == MINLSH_E_CORRUPT) {
        cli_msg("%s: %s (%s): the index file is damaged; it was left as it is", path,
                minlsh_strerror(rc), minlsh_error_name(rc));
    } else if (rc == MINLSH_E_FORMAT) {
        cli_msg("%s: %s (%s): not an index made by 'minlsh index create'", path,
                minlsh_strerror(rc), minlsh_error_name(rc));
    } else {
        cli_msg("%s: %s (%s)%s%s", path, minlsh_strerror(rc), minlsh_error_name(rc),
                rc == MINLSH_E_IO && err ? ": " : "", rc == MINLSH_E_IO && err ? strerror(err) : "");
    }
    return CLI_FAILED;
}

/* Why the key does not open the store: which key it was made with (the
 * default key gives its config id, or not) and what to give. */
static int store_key_error(const char *path, const cli_opts *o) {
    minlsh_store_options so;
    minlsh_store *st = NULL;
    cli_buf desc = {NULL, 0, 0};
    const minlsh_shingler *sh;
    int made_custom, rc;
    (void)minlsh_store_options_init(&so, MINLSH_STORE_OPTIONS_VERSION);
    so.flags = MINLSH_STORE_READONLY | MINLSH_STORE_ANY_KEY | MINLSH_STORE_NO_LOCK;
    rc = minlsh_store_open(&st, path, &so);
    if (rc != 0) return store_open_error(path, MINLSH_E_MISMATCH, o, 0);
    made_custom = minlsh_store_key_matches(st) != 1;
    sh = minlsh_store_view_shingler(st);
    opts_describe_shingle(&desc, minlsh_shingler_unit(sh), minlsh_shingler_k(sh));
    buf_adds(&desc, ", normalize ");
    opts_describe_flags(&desc, minlsh_shingler_flags(sh));
    buf_addc(&desc, '\0');
    /* The file keeps no key, only the config id: one the default key does
     * not give comes from a custom key or from shingling options changed
     * in the file since. */
    if (made_custom && !o->custom_key)
        cli_msg("%s: %s (%s): the index was made with a custom --key, or the shingling "
                "options stored in the index (shingle %s) were changed since; give the same "
                "key as to 'index create'", path, minlsh_strerror(MINLSH_E_MISMATCH),
                minlsh_error_name(MINLSH_E_MISMATCH), desc.p);
    else if (!made_custom && o->custom_key)
        cli_msg("%s: %s (%s): the index was made with the default key; do not give --key",
                path, minlsh_strerror(MINLSH_E_MISMATCH), minlsh_error_name(MINLSH_E_MISMATCH));
    else
        cli_msg("%s: %s (%s): the --key given, or the shingling options stored in the "
                "index (shingle %s), differ from those the index was made with; give the "
                "same --key as to 'index create'", path, minlsh_strerror(MINLSH_E_MISMATCH),
                minlsh_error_name(MINLSH_E_MISMATCH), desc.p);
    buf_free(&desc);
    minlsh_store_free(st);
    return CLI_FAILED;
}

/* Open INDEX read-only through the store, with --key (any_key: without
 * checking it, to describe the index), waiting for its shared lock as
 * --lock-timeout says and saying so when the wait is long. A reader that
 * cannot create INDEX.lock (a read-only folder) reads without it: every
 * write of a store is a rename or a committed append. */
static int store_open_read(minlsh_store **out, const char *path, const cli_opts *o,
                           int any_key) {
    minlsh_store_options so;
    uint32_t wait = o->lock_timeout_ms, first = wait < 1000 ? wait : 1000;
    int rc, err;
    *out = NULL;
    if ((rc = index_check_path(path)) != 0) return rc;
    cli_guard_mapped(path);
    (void)minlsh_store_options_init(&so, MINLSH_STORE_OPTIONS_VERSION);
    so.flags = MINLSH_STORE_READONLY | (any_key ? MINLSH_STORE_ANY_KEY : 0u) |
               (o->no_lock ? MINLSH_STORE_NO_LOCK : 0u);
    so.key = o->custom_key ? o->key : NULL;
    so.max_document_bytes = o->max_doc_size;
    so.lock_timeout_ms = first > 0 ? first : 1; /* the store's 0 is "no limit" */
    errno = 0;
    rc = minlsh_store_open(out, path, &so);
    if (rc == MINLSH_E_BUSY && wait > first) {
        if (!o->quiet)
            cli_msg("%s: waiting for the lock on %s.lock (another process holds it)", path,
                    path);
        so.lock_timeout_ms = wait == MINLSH_LOCK_WAIT_FOREVER ? 0 : wait - first;
        rc = minlsh_store_open(out, path, &so);
    }
    err = errno;
    if (rc == MINLSH_E_IO && !o->no_lock && (err == EACCES || err == EROFS || err == EPERM)) {
        so.flags |= MINLSH_STORE_NO_LOCK;
        errno = 0;
        rc = minlsh_store_open(out, path, &so);
        err = errno;
    }
    if (rc == MINLSH_E_MISMATCH) return store_key_error(path, o);
    if (rc != 0) return store_open_error(path, rc, o, err);
    return 0;
}

/* A document's name as the store keeps it (a JSON token) into *b. */
static cli_name store_name(const minlsh_store *st, uint64_t id, cli_buf *b, const char *path) {
    cli_name nm;
    size_t n = 0;
    int rc;
    buf_clear(b);
    rc = minlsh_store_copy_name(st, id, b->p, b->cap, &n);
    if (rc == MINLSH_E_BUFSIZE) {
        buf_reserve(b, n);
        rc = minlsh_store_copy_name(st, id, b->p, b->cap, &n);
    }
    if (rc != 0) cli_die_lib(path, rc);
    b->n = n;
    nm.s = b->p;
    nm.n = n;
    nm.json = 1;
    return nm;
}

/* ---- index create ------------------------------------------------------- */

int cmd_index_create(cli_opts *o) {
    cli_index x;
    struct stat st;
    uint32_t bands, rows;
    uint64_t config_id = 0;
    const char *plan;
    cli_buf desc = {NULL, 0, 0};
    int rc;
    memset(&x, 0, sizeof x);
    x.path = o->args[0];
    if ((rc = opts_plan(o, "index create", 1, &bands, &rows, &plan)) != 0) return rc;
    if (!o->force && lstat(x.path, &st) == 0) {
        cli_msg("%s: already exists; use --force to overwrite it", x.path);
        return CLI_FAILED;
    }
    if ((rc = index_lock(&x.lock, x.path, MINLSH_LOCK_EXCLUSIVE, o)) != 0) return rc;
    /* Checked again under the lock: another create may have won. */
    if (!o->force && lstat(x.path, &st) == 0) {
        cli_msg("%s: already exists; use --force to overwrite it", x.path);
        index_close(&x);
        return CLI_FAILED;
    }
    x.sh = cli_shingler_new(o->unit, o->shingle_k, o->flags, o->key, &config_id);
    x.family = cli_family_new(o->num_perm, o->seed, o->scheme);
    if ((rc = minlsh_index_new(&x.index, x.family, config_id, bands, rows, NULL)) != 0)
        cli_die_lib("index", rc);
    x.meta.unit = o->unit;
    x.meta.shingle_k = o->shingle_k;
    x.meta.flags = o->flags;
    x.meta.custom_key = o->custom_key;
    x.meta.threshold = o->threshold;
    x.meta.scheme = o->scheme;
    snprintf(x.meta.plan, sizeof x.meta.plan, "%s", plan);
    rc = index_save(&x);
    if (rc == 0 && !o->quiet) {
        opts_describe_shingle(&desc, x.meta.unit, x.meta.shingle_k);
        buf_adds(&desc, ", normalize ");
        opts_describe_flags(&desc, x.meta.flags);
        cli_msg("created %s: k=%u, b=%u, r=%u (%s), threshold %g, shingle %s, %s key",
                x.path, (unsigned)o->num_perm, (unsigned)bands, (unsigned)rows, plan,
                o->threshold, desc.p, o->custom_key ? "custom" : "default");
    }
    buf_free(&desc);
    index_close(&x);
    return rc;
}

/* ---- index add ---------------------------------------------------------- */

typedef struct add_ctx {
    const cli_opts *o;
    cli_index *x;
    size_t before;   /* names already in the index */
    size_t inserted; /* documents inserted by this run */
    uint32_t k;
    cli_buf token;
    /* --novel-only */
    minlsh_novel_options novel;
    name_table seen;     /* every name selected in this run */
    minlsh_index *held;  /* the run's near-duplicates, so that a document
                            near one of them is a duplicate too */
    name_table held_names; /* name i: held document i */
    uint64_t *ids;
    double *sims;
    size_t cap;
    uint64_t duplicates;
    int compact; /* the journal is due for compaction: the run ends with one */
} add_ctx;

/* The name as a JSON token (how the index stores names). */
static cli_name token_name(cli_buf *tok, cli_name nm) {
    cli_name t;
    if (nm.json) return nm;
    buf_clear(tok);
    json_escape(tok, nm.s, nm.n);
    t.s = tok->p;
    t.n = tok->n;
    t.json = 1;
    return t;
}

static void add_skipped(add_ctx *c, const doc_view *d, cli_name nm, int in_index) {
    if (in_index && d->name.json)
        cli_input_error(d->where, d->line, "id %.*s is already in %s, skipped",
                        (int)nm.n, nm.s, c->x->path);
    else if (in_index)
        cli_input_error(d->where, 0, "already in %s, skipped", c->x->path);
    else if (d->name.json)
        cli_input_error(d->where, d->line, "duplicate id %.*s, skipped", (int)nm.n,
                        nm.s);
    else
        cli_input_error(d->where, 0, "listed more than once, skipped");
}

/* Take the name (so ids follow input order), unless it is taken already. */
static int add_select(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    cli_name nm = token_name(&c->token, d->name);
    size_t dup = 0;
    if (names_add(&c->x->meta.names, nm.s, nm.n, 1, &dup)) return 1;
    add_skipped(c, d, nm, dup < c->before);
    return 0;
}

/* Record an added document (its name is name number id) in the journal;
 * once the journal is due for compaction the run will compact, so the rest
 * need no record (and no memory for one). */
static int journal_add(add_ctx *c, uint64_t id, const uint32_t *sig) {
    cli_name nm = names_get(&c->x->meta.names, (size_t)id);
    if (c->compact) return 0;
    if (minlsh_journal_compact_due(c->x->journal, c->x->index) == 1) {
        c->compact = 1;
        return 0;
    }
    return minlsh_journal_append(c->x->journal, MINLSH_JOURNAL_INSERT, id, sig, c->k, nm.s,
                                 nm.n);
}

/* Selected documents arrive in the order add_select numbered them. */
static int add_on_doc(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    uint64_t id = c->before + c->inserted++;
    int rc = minlsh_index_insert(c->x->index, id, d->sig, c->k);
    if (rc == 0) rc = journal_add(c, id, d->sig);
    if (rc != 0) cli_die_lib(c->x->path, rc);
    return 0;
}

/* --novel-only: a name is taken only when its document is added, so
 * selection checks the index's names and the run's without taking one. */
static int novel_select(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    cli_name nm = token_name(&c->token, d->name);
    if (names_find(&c->x->meta.names, nm.s, nm.n, 1, NULL)) {
        add_skipped(c, d, nm, 1);
        return 0;
    }
    if (!names_add(&c->seen, nm.s, nm.n, 1, NULL)) {
        add_skipped(c, d, nm, 0);
        return 0;
    }
    return 1;
}

static void novel_print(add_ctx *c, cli_name doc, const cli_name *match, double similarity) {
    cli_buf line = {NULL, 0, 0};
    int fmt = c->o->format;
    if (fmt == FORMAT_JSONL) {
        buf_adds(&line, "{\"id\": ");
        out_name_json(&line, doc);
        buf_adds(&line, match ? ", \"decision\": \"duplicate\", \"match\": "
                              : ", \"decision\": \"novel\", \"match\": null, "
                                "\"similarity\": null}\n");
        if (match) {
            out_name_json(&line, *match);
            buf_adds(&line, ", \"similarity\": ");
            char num[32];
            cli_format_double(num, similarity);
            buf_adds(&line, num);
            buf_adds(&line, "}\n");
        }
    } else {
        const char *sep = fmt == FORMAT_TSV ? "\t" : "  ";
        buf_adds(&line, match ? "duplicate" : fmt == FORMAT_TSV ? "novel" : "novel    ");
        buf_adds(&line, sep);
        out_name_text(&line, doc);
        if (match) {
            buf_adds(&line, sep);
            out_name_text(&line, *match);
            buf_printf(&line, "%s%.4f", sep, similarity);
        } else if (fmt == FORMAT_TSV) {
            buf_adds(&line, "\t\t");
        }
        buf_addc(&line, '\n');
    }
    fwrite(line.p, 1, line.n, stdout);
    buf_free(&line);
}

/* The most similar document of index (estimate; ties: the smallest id),
 * if it has a candidate at all. */
/* Every candidate of sig into *ids and *sims (grown to fit; *cap entries). */
static int query_all(const minlsh_index *index, const uint32_t *sig, uint32_t k, uint64_t **ids,
                     double **sims, size_t *cap, size_t *n) {
    int rc = minlsh_index_query(index, sig, k, *ids, *sims, *cap, n);
    if (rc == MINLSH_E_BUFSIZE) {
        void *v = *ids;
        xgrow(&v, cap, *n, sizeof **ids);
        *ids = v;
        *sims = xreallocarray(*sims, *cap, sizeof **sims);
        rc = minlsh_index_query(index, sig, k, *ids, *sims, *cap, n);
    }
    return rc;
}

static int best_match(add_ctx *c, const minlsh_index *index, const uint32_t *sig,
                      uint64_t *best, double *sim) {
    size_t n = 0, i;
    int rc, found = 0;
    if (index == NULL || minlsh_index_count(index) == 0) return 0;
    rc = query_all(index, sig, c->k, &c->ids, &c->sims, &c->cap, &n);
    if (rc != 0) cli_die_lib(c->x->path, rc);
    for (i = 0; i < n; i++)
        if (!found || c->sims[i] > *sim) {
            found = 1;
            *best = c->ids[i];
            *sim = c->sims[i];
        }
    return found;
}

static int novel_on_doc(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    cli_name nm = token_name(&c->token, d->name), match;
    minlsh_novel_result res;
    uint64_t held = 0, best = 0;
    double held_sim = 0, sim = 0;
    int rc;
    if (best_match(c, c->held, d->sig, &held, &held_sim) && held_sim >= c->novel.threshold) {
        /* A near-duplicate of the run's own duplicates: reported against
         * whichever is closer, an indexed document or that one. */
        if (best_match(c, c->x->index, d->sig, &best, &sim) && sim >= held_sim) {
            match = names_get(&c->x->meta.names, (size_t)best);
        } else {
            match = names_get(&c->held_names, (size_t)held);
            sim = held_sim;
        }
    } else {
        rc = minlsh_index_insert_novel(&res, c->x->index, c->before + c->inserted, d->sig,
                                       c->k, &c->novel);
        if (rc != 0) cli_die_lib(c->x->path, rc);
        if (res.novel) {
            uint64_t id = c->before + c->inserted++;
            (void)names_add(&c->x->meta.names, nm.s, nm.n, 1, NULL);
            if ((rc = journal_add(c, id, d->sig)) != 0) cli_die_lib(c->x->path, rc);
            novel_print(c, nm, NULL, 0);
            return 0;
        }
        match = names_get(&c->x->meta.names, (size_t)res.match);
        sim = res.similarity;
    }
    novel_print(c, nm, &match, sim);
    c->duplicates++;
    if (c->held == NULL &&
        (rc = minlsh_index_new(&c->held, c->x->family, minlsh_index_config_id(c->x->index),
                               minlsh_index_bands(c->x->index),
                               minlsh_index_rows(c->x->index), NULL)) != 0)
        cli_die_lib(c->x->path, rc);
    /* The match's name is in a table that this may grow: print first. */
    (void)names_add(&c->held_names, nm.s, nm.n, 1, NULL);
    rc = minlsh_index_insert(c->held, minlsh_index_count(c->held), d->sig, c->k);
    if (rc != 0) cli_die_lib(c->x->path, rc);
    return 0;
}

static int run_docs(const cli_opts *o, cli_index *x,
                    int (*select)(void *, const doc_view *),
                    int (*on_doc)(void *, const doc_view *), void *ctx,
                    const char *what, pipeline_stats *st) {
    pipeline_cfg cfg;
    int rc;
    memset(&cfg, 0, sizeof cfg);
    cfg.o = o;
    cfg.shingler = x->sh;
    cfg.family = x->family;
    cfg.pool = cli_pool_new(o->threads);
    cfg.select = select;
    cfg.on_doc = on_doc;
    cfg.ctx = ctx;
    rc = pipeline_run_paths(&cfg, o->args + 1, o->n_args - 1, what, st);
    minlsh__pool_free(cfg.pool);
    return rc;
}

int cmd_index_add(cli_opts *o) {
    cli_index x;
    add_ctx c;
    pipeline_stats st;
    size_t added;
    int rc;
    if (!o->novel_only && (o->given & (OPT(O_FORMAT) | OPT(O_THRESHOLD))))
        return cli_usage_error("index add", "--%s needs --novel-only",
                               (o->given & OPT(O_FORMAT)) ? "format" : "threshold");
    /* Exclusive from before the load to after the save: a writer that
     * loaded an older version would save over documents others added. */
    rc = index_open(&x, o->args[0], o, o, MINLSH_LOCK_EXCLUSIVE);
    if (rc != 0) return rc;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.x = &x;
    c.before = x.meta.names.n;
    c.k = minlsh_index_k(x.index);
    if (o->novel_only) {
        (void)minlsh_novel_options_init(&c.novel, MINLSH_NOVEL_OPTIONS_VERSION);
        c.novel.threshold = (o->given & OPT(O_THRESHOLD)) ? o->threshold : x.meta.threshold;
        if (o->format == FORMAT_TSV) fputs("id\tdecision\tmatch\tsimilarity\n", stdout);
        run_docs(o, &x, novel_select, novel_on_doc, &c, "index add:", &st);
    } else {
        run_docs(o, &x, add_select, add_on_doc, &c, "index add:", &st);
    }
    buf_free(&c.token);
    added = x.meta.names.n - c.before;
    if (added > 0) rc = index_commit(&x, c.compact);
    if (rc == 0 && !o->quiet) {
        fflush(stdout);
        if (o->novel_only)
            cli_msg("%s: added %zu novel document%s, %llu near-duplicate%s not added "
                    "(threshold %g; %.1f MB in %.2f s), %zu in the index",
                    x.path, added, cli_plural(added), (unsigned long long)c.duplicates,
                    cli_plural(c.duplicates), c.novel.threshold, (double)st.bytes / 1e6,
                    st.seconds, x.meta.names.n);
        else
            cli_msg("%s: added %zu document%s (%.1f MB in %.2f s), %zu in the index",
                    x.path, added, cli_plural(added), (double)st.bytes / 1e6, st.seconds,
                    x.meta.names.n);
    }
    names_free(&c.seen);
    names_free(&c.held_names);
    minlsh_index_free(c.held);
    free(c.ids);
    free(c.sims);
    index_close(&x);
    if (rc != 0) return rc;
    return cli_finish_stdout(cli_input_failures() ? CLI_FAILED : CLI_OK);
}

/* ---- index query -------------------------------------------------------- */

typedef struct query_ctx {
    const cli_opts *o;
    const char *path;
    const minlsh_store *st;
    uint32_t k;
    double threshold;
    uint64_t *ids;
    double *sims;
    size_t cap;
    cli_buf name;
    uint64_t matches;
} query_ctx;

static int query_on_doc(void *ctx, const doc_view *d) {
    query_ctx *c = ctx;
    size_t n = 0, i;
    int rc = minlsh_store_candidates(c->st, d->sig, c->k, c->ids, c->sims, c->cap, &n);
    if (rc == MINLSH_E_BUFSIZE) {
        void *v = c->ids;
        xgrow(&v, &c->cap, n, sizeof *c->ids);
        c->ids = v;
        c->sims = xreallocarray(c->sims, c->cap, sizeof *c->sims);
        rc = minlsh_store_candidates(c->st, d->sig, c->k, c->ids, c->sims, c->cap, &n);
    }
    if (rc != 0) cli_die_lib(c->path, rc);
    for (i = 0; i < n; i++) {
        if (!c->o->all && c->sims[i] < c->threshold) continue;
        out_pair(stdout, c->o->format, d->name, store_name(c->st, c->ids[i], &c->name, c->path),
                 c->sims[i], 0, 0);
        c->matches++;
    }
    return 0;
}

int cmd_index_query(cli_opts *o) {
    minlsh_store *st;
    const minlsh_index *ix;
    minlsh_family *family;
    query_ctx c;
    pipeline_cfg cfg;
    pipeline_stats ps;
    const char *path = o->args[0];
    int rc = store_open_read(&st, path, o, 0);
    if (rc != 0) return rc;
    ix = minlsh_store_view_index(st);
    family = cli_family_new(minlsh_index_k(ix), minlsh_index_seed(ix), minlsh_index_scheme(ix));
    memset(&c, 0, sizeof c);
    c.o = o;
    c.path = path;
    c.st = st;
    c.k = minlsh_index_k(ix);
    c.threshold = (o->given & OPT(O_THRESHOLD)) ? o->threshold : minlsh_store_threshold(st);
    out_pairs_header(stdout, o->format, 0);
    memset(&cfg, 0, sizeof cfg);
    cfg.o = o;
    cfg.shingler = minlsh_store_view_shingler(st);
    cfg.family = family;
    cfg.pool = cli_pool_new(o->threads);
    cfg.on_doc = query_on_doc;
    cfg.ctx = &c;
    pipeline_run_paths(&cfg, o->args + 1, o->n_args - 1, "index query:", &ps);
    minlsh__pool_free(cfg.pool);
    if (!o->quiet) {
        fflush(stdout);
        cli_msg("%llu query document%s, %llu match%s in %s (threshold %g%s)",
                (unsigned long long)ps.docs, cli_plural(ps.docs),
                (unsigned long long)c.matches, c.matches == 1 ? "" : "es", path, c.threshold,
                o->all ? ", --all" : "");
    }
    free(c.ids);
    free(c.sims);
    buf_free(&c.name);
    minlsh_family_free(family);
    minlsh_store_free(st);
    return cli_finish_stdout(cli_input_failures() ? CLI_FAILED : CLI_OK);
}

/* ---- index stats -------------------------------------------------------- */

/* The bucket histogram and memory, from the library's own count over the
 * band tables (minlsh_index_copy_stats). */
static void print_histogram(const minlsh_index *ix, const char *path) {
    minlsh_index_stats st;
    int c, top = 0, rc = minlsh_index_copy_stats(&st, ix);
    if (rc != 0) cli_die_lib(path, rc);
    printf("distinct signatures  %llu\n", (unsigned long long)st.signatures);
    printf("buckets              %llu in %u bands, largest %llu\n",
           (unsigned long long)st.buckets, (unsigned)st.bands,
           (unsigned long long)st.largest_bucket);
    for (c = 0; c < MINLSH_INDEX_HIST_CLASSES; c++)
        if (st.hist[c]) top = c;
    printf("bucket size histogram (documents in a bucket: buckets)\n");
    for (c = 0; c <= top && st.buckets > 0; c++) {
        char label[48];
        uint64_t lo = c == 0 ? 1 : ((uint64_t)1 << (c - 1)) + 1, hi = (uint64_t)1 << c;
        if (lo == hi) snprintf(label, sizeof label, "%llu", (unsigned long long)lo);
        else snprintf(label, sizeof label, "%llu-%llu", (unsigned long long)lo,
                      (unsigned long long)hi);
        printf("  %-18s %llu\n", label, (unsigned long long)st.hist[c]);
    }
    printf("memory when loaded   %llu bytes (signatures %llu, buckets %llu)\n",
           (unsigned long long)st.bytes, (unsigned long long)st.signature_bytes,
           (unsigned long long)st.band_bytes);
}

int cmd_index_stats(cli_opts *o) {
    minlsh_store *st;
    const minlsh_index *ix;
    const minlsh_shingler *sh;
    struct stat fs;
    cli_buf desc = {NULL, 0, 0};
    const char *path = o->args[0];
    int rc = store_open_read(&st, path, o, 1);
    if (rc != 0) return rc;
    ix = minlsh_store_view_index(st);
    sh = minlsh_store_view_shingler(st);
    printf("index                %s\n", path);
    printf("documents            %llu\n", (unsigned long long)minlsh_store_count(st));
    printf("signature (k)        %u\n", (unsigned)minlsh_index_k(ix));
    printf("bands (b)            %u\n", (unsigned)minlsh_index_bands(ix));
    printf("rows (r)             %u\n", (unsigned)minlsh_index_rows(ix));
    printf("seed                 %llu\n", (unsigned long long)minlsh_index_seed(ix));
    printf("scheme               %s\n", opts_scheme_name(minlsh_index_scheme(ix)));
    printf("config id            %016llx\n", (unsigned long long)minlsh_index_config_id(ix));
    opts_describe_shingle(&desc, minlsh_shingler_unit(sh), minlsh_shingler_k(sh));
    printf("shingle              %s\n", desc.p);
    buf_clear(&desc);
    opts_describe_flags(&desc, minlsh_shingler_flags(sh));
    printf("normalize            %s\n", desc.p);
    /* Opened without a key: the default key gives its config id, or not. */
    printf("key                  %s\n", minlsh_store_key_matches(st) == 1 ? "default" : "custom");
    printf("threshold            %g\n", minlsh_store_threshold(st));
    print_histogram(ix, path);
    if (stat(path, &fs) == 0) printf("bytes                %llu\n", (unsigned long long)fs.st_size);
    buf_free(&desc);
    minlsh_store_free(st);
    return cli_finish_stdout(CLI_OK);
}

/* ---- index merge -------------------------------------------------------- */

const char cli_help_index_merge[] =
    "Usage: minlsh index merge [OPTIONS] OUT SHARD...\n"
    "\n"
    "Merge index files built separately (in parallel, on other machines) into\n"
    "one index OUT that answers like an index built in one piece. Every SHARD\n"
    "must come from 'minlsh index create' with the same options: shingling,\n"
    "key (checked through the config id), threshold, k, seed, bands and rows.\n"
    "A shard that differs is named and nothing is written. The documents keep\n"
    "their order (the first shard's, then the second's, ...) and are numbered\n"
    "again; a name an earlier shard has is reported and skipped, as by\n"
    "'index add'. OUT is saved atomically, and may be one of the shards.\n"
    "No --key is needed: the shards' config ids are compared.\n"
    "\n"
    "      --force             overwrite OUT if it exists\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add' (OUT exclusively, shards shared)\n"
    "  -q, --quiet             no summary on stderr\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 on success; 1 if a shard is missing, damaged or does not\n"
    "match the first, if names were skipped (OUT is still written), or if OUT\n"
    "exists (without --force) or cannot be written; 2 for usage errors.\n";

/* The first difference between shard s and the first shard f that makes
 * them impossible to merge, written into why; 0 if there is none. */
static int merge_mismatch(const cli_index *f, const cli_index *s, cli_buf *why) {
    const minlsh_index *a = f->index, *b = s->index;
    if (minlsh_index_k(a) != minlsh_index_k(b)) {
        buf_printf(why, "num-perm %u, %s has %u", (unsigned)minlsh_index_k(b), f->path,
                   (unsigned)minlsh_index_k(a));
    } else if (minlsh_index_seed(a) != minlsh_index_seed(b)) {
        buf_printf(why, "seed %llu, %s has %llu", (unsigned long long)minlsh_index_seed(b),
                   f->path, (unsigned long long)minlsh_index_seed(a));
    } else if (minlsh_index_scheme(a) != minlsh_index_scheme(b)) {
        buf_printf(why, "scheme %s, %s has %s", opts_scheme_name(minlsh_index_scheme(b)),
                   f->path, opts_scheme_name(minlsh_index_scheme(a)));
    } else if (minlsh_index_bands(a) != minlsh_index_bands(b) ||
               minlsh_index_rows(a) != minlsh_index_rows(b)) {
        buf_printf(why, "b=%u, r=%u, %s has b=%u, r=%u", (unsigned)minlsh_index_bands(b),
                   (unsigned)minlsh_index_rows(b), f->path, (unsigned)minlsh_index_bands(a),
                   (unsigned)minlsh_index_rows(a));
    } else if (f->meta.unit != s->meta.unit || f->meta.shingle_k != s->meta.shingle_k) {
        buf_adds(why, "shingle ");
        opts_describe_shingle(why, s->meta.unit, s->meta.shingle_k);
        buf_printf(why, ", %s has ", f->path);
        opts_describe_shingle(why, f->meta.unit, f->meta.shingle_k);
    } else if (f->meta.flags != s->meta.flags) {
        buf_adds(why, "normalize ");
        opts_describe_flags(why, s->meta.flags);
        buf_printf(why, ", %s has ", f->path);
        opts_describe_flags(why, f->meta.flags);
        /* The likely cause since the default changed: a shard of minlsh 0.1
         * (no flag) beside one made with today's defaults. */
        if ((f->meta.flags ^ s->meta.flags) == MINLSH_NORM_CJK_WORDS)
            buf_adds(why, " (cjk-words is on by default after minlsh 0.1; "
                          "'index create --no-cjk-words' makes a shard like 0.1's)");
    } else if (f->meta.threshold != s->meta.threshold) {
        char x[32], y[32];
        cli_format_double(x, s->meta.threshold);
        cli_format_double(y, f->meta.threshold);
        buf_printf(why, "threshold %s, %s has %s", x, f->path, y);
    } else if (f->meta.custom_key != s->meta.custom_key ||
               minlsh_index_config_id(a) != minlsh_index_config_id(b)) {
        buf_printf(why, "config id %016llx (%s key), %s has %016llx (%s key)",
                   (unsigned long long)minlsh_index_config_id(b),
                   s->meta.custom_key ? "a custom" : "the default", f->path,
                   (unsigned long long)minlsh_index_config_id(a),
                   f->meta.custom_key ? "a custom" : "the default");
    } else {
        return 0;
    }
    return 1;
}

/* The documents of shard s whose names are new, renumbered from 0 in
 * shard order, in a new index; the names are added to m's table. Returns
 * s->index itself when every name is new (nothing to renumber). */
static minlsh_index *merge_take_names(cli_index *m, cli_index *s, size_t *skipped) {
    size_t n = s->meta.names.n, j, kept = 0;
    uint32_t k = minlsh_index_k(s->index);
    unsigned char *keep = xcalloc(n ? n : 1, 1);
    minlsh_index *out;
    minlsh_family *fam;
    uint32_t *sig;
    int rc;
    for (j = 0; j < n; j++) {
        cli_name nm = names_get(&s->meta.names, j);
        if (names_add(&m->meta.names, nm.s, nm.n, 1, NULL)) {
            keep[j] = 1;
            kept++;
        } else {
            cli_input_error(s->path, 0, "id %.*s is already in an earlier shard, skipped",
                            (int)(nm.n > 200 ? 200 : nm.n), nm.s);
        }
    }
    *skipped = n - kept;
    if (kept == n) {
        free(keep);
        return s->index;
    }
    fam = cli_family_new(k, minlsh_index_seed(s->index), minlsh_index_scheme(s->index));
    sig = xcalloc(k, sizeof *sig);
    if ((rc = minlsh_index_new(&out, fam, minlsh_index_config_id(s->index),
                               minlsh_index_bands(s->index), minlsh_index_rows(s->index),
                               NULL)) != 0)
        cli_die_lib(s->path, rc);
    for (j = 0, kept = 0; j < n; j++) {
        if (!keep[j]) continue;
        if ((rc = minlsh_index_copy_signature(s->index, j, sig, k, NULL)) != 0 ||
            (rc = minlsh_index_insert(out, kept++, sig, k)) != 0)
            cli_die_lib(s->path, rc);
    }
    free(sig);
    free(keep);
    minlsh_family_free(fam);
    return out;
}

/* 1 if the index's ids are exactly 0..n-1 (name number = id), as
 * 'index create' and 'index add' make them. */
static int ids_are_dense(const cli_index *x) {
    size_t n = (size_t)minlsh_index_count(x->index), got = 0;
    uint64_t *ids;
    int ok;
    if (n == 0) return 1;
    ids = xcalloc(n, sizeof *ids);
    ok = minlsh_index_copy_ids(x->index, ids, n, &got) == 0 && got == n && ids[n - 1] == n - 1;
    free(ids);
    return ok;
}

int cmd_index_merge(cli_opts *o) {
    const char *out = o->args[0];
    cli_index m;
    struct stat st;
    size_t skipped = 0, before;
    int i, rc;
    minlsh_filelock *out_lock = NULL;
    if (!o->force && lstat(out, &st) == 0) {
        cli_msg("%s: already exists; use --force to overwrite it", out);
        return CLI_FAILED;
    }
    /* OUT exclusively for the whole merge (it may be a shard, and another
     * process must not add to it meanwhile); other shards shared, for
     * their loads. */
    if ((rc = index_lock(&out_lock, out, MINLSH_LOCK_EXCLUSIVE, o)) != 0) return rc;
    for (i = 1; i < o->n_args; i++) {
        cli_index s;
        cli_buf why = {NULL, 0, 0};
        minlsh_index *src;
        size_t skip = 0;
        /* Only the address of s is taken here; index_open fills it before
         * any read (a cppcheck false positive). */
        /* cppcheck-suppress uninitvar */
        cli_index *x = i == 1 ? &m : &s;
        struct stat sst;
        /* OUT's lock is held already: a shared one on it would wait for
         * ourselves. */
        int is_out = lstat(out, &st) == 0 && stat(o->args[i], &sst) == 0 &&
                     st.st_dev == sst.st_dev && st.st_ino == sst.st_ino;
        if ((rc = index_open(x, o->args[i], NULL, o,
                             is_out ? LOCK_NONE : MINLSH_LOCK_SHARED)) != 0) {
            if (i > 1) index_close(&m); /* with out_lock */
            else minlsh_filelock_free(out_lock);
            return rc;
        }
        if (!x->has_meta || !ids_are_dense(x)) {
            if (x->has_meta)
                cli_msg("%s: not an index made by 'minlsh index create' (its ids are not "
                        "0..n-1)", x->path);
            else
                meta_refused(x);
            index_close(x);
            if (i > 1) index_close(&m);
            else minlsh_filelock_free(out_lock);
            return CLI_FAILED;
        }
        if (i == 1) { /* the first shard is where the others go */
            m.lock = out_lock; /* released with m, after the save */
            continue;
        }
        if (merge_mismatch(&m, &s, &why)) {
            cli_msg("%s: %s (%s): it has %s; shards must be made by 'minlsh index "
                    "create' with the same options", s.path,
                    minlsh_strerror(MINLSH_E_MISMATCH), minlsh_error_name(MINLSH_E_MISMATCH),
                    why.p);
            buf_free(&why);
            index_close(&s);
            index_close(&m);
            return CLI_FAILED;
        }
        before = (size_t)minlsh_index_count(m.index);
        src = merge_take_names(&m, &s, &skip);
        skipped += skip;
        rc = minlsh_index_merge(m.index, src, before);
        if (src != s.index) minlsh_index_free(src);
        index_close(&s);
        if (rc == MINLSH_E_NOMEM) cli_die_lib(out, rc);
        if (rc != 0) {
            cli_msg("%s: cannot merge %s: %s (%s)", out, o->args[i], minlsh_strerror(rc),
                    minlsh_error_name(rc));
            index_close(&m);
            return CLI_FAILED;
        }
    }
    m.path = out;
    rc = index_save(&m);
    if (rc == 0 && !o->quiet)
        cli_msg("%s: merged %d shard%s, %zu document%s%s", out, o->n_args - 1,
                o->n_args == 2 ? "" : "s", m.meta.names.n, cli_plural(m.meta.names.n),
                skipped ? " (names already taken were skipped)" : "");
    index_close(&m);
    if (rc != 0) return rc;
    return cli_input_failures() ? CLI_FAILED : CLI_OK;
}

/* ---- index compact ------------------------------------------------------ */

const char cli_help_index_compact[] =
    "Usage: minlsh index compact [OPTIONS] INDEX\n"
    "\n"
    "Fold INDEX.journal (the documents 'index add' appended since INDEX was last\n"
    "written) into INDEX, atomically, and start an empty journal. 'index add'\n"
    "compacts by itself when the journal passes 1/32 of the index file (at\n"
    "least 1 MiB). After a compaction INDEX alone holds every document, byte for\n"
    "byte as one 'index add' of them all would have written it.\n"
    "\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add'\n"
    "  -q, --quiet             no summary on stderr\n"
    "  -h, --help              show this help\n";

int cmd_index_compact(cli_opts *o) {
    cli_index x;
    uint64_t folded;
    int rc = index_open(&x, o->args[0], NULL, o, MINLSH_LOCK_EXCLUSIVE);
    if (rc != 0) return rc;
    if (!x.has_meta) {
        meta_refused(&x);
        index_close(&x);
        return CLI_FAILED;
    }
    folded = minlsh_journal_records(x.journal);
    rc = index_save(&x);
    if (rc == 0 && !o->quiet)
        cli_msg("%s: %llu journaled document%s folded in, %zu in the index", x.path,
                (unsigned long long)folded, cli_plural(folded), x.meta.names.n);
    index_close(&x);
    return rc;
}

/* ---- index remove ------------------------------------------------------- */

const char cli_help_index_remove[] =
    "Usage: minlsh index remove [OPTIONS] INDEX ID...\n"
    "\n"
    "Remove documents from INDEX, named as 'index query' prints them: a path as\n"
    "it was added, or a JSON Lines id (a string without its quotes, or a number\n"
    "as written). The documents after them are numbered again, in order, so the\n"
    "file is the one 'index add' would have made without them. An ID that is not\n"
    "in the index is reported (exit status 1); the others are removed. INDEX is\n"
    "saved atomically, under INDEX.lock, as by 'index add'.\n"
    "\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add'\n"
    "  -q, --quiet             no summary on stderr\n"
    "  -h, --help              show this help\n";

/* The index number of ID: as a JSON string (how paths and string ids are
 * stored), else as a token written as given (numeric ids). */
static int find_id(const cli_index *x, const char *id, size_t *i) {
    cli_buf tok = {NULL, 0, 0};
    int found;
    json_escape(&tok, id, strlen(id));
    found = names_find(&x->meta.names, tok.p, tok.n, 1, i) ||
            names_find(&x->meta.names, id, strlen(id), 1, i);
    buf_free(&tok);
    return found;
}

int cmd_index_remove(cli_opts *o) {
    cli_index x;
    size_t n, j, kept = 0, removed = 0;
    unsigned char *drop;
    uint32_t k, *sig;
    minlsh_index *out;
    index_meta fresh;
    int i, rc = index_open(&x, o->args[0], NULL, o, MINLSH_LOCK_EXCLUSIVE);
    if (rc != 0) return rc;
    if (!x.has_meta || !ids_are_dense(&x)) {
        if (x.has_meta)
            cli_msg("%s: not an index made by 'minlsh index create' (its ids are not 0..n-1)",
                    x.path);
        else
            meta_refused(&x);
        index_close(&x);
        return CLI_FAILED;
    }
    n = x.meta.names.n;
    drop = xcalloc(n ? n : 1, 1);
    for (i = 1; i < o->n_args; i++) {
        size_t at = 0;
        if (!find_id(&x, o->args[i], &at)) {
            cli_input_error(o->args[i], 0, "not in %s", x.path);
        } else if (!drop[at]) {
            drop[at] = 1;
            removed++;
        }
    }
    if (removed > 0) {
        /* Rebuilt in order without them: ids stay 0..n-1, name i = id i. */
        k = minlsh_index_k(x.index);
        sig = xcalloc(k, sizeof *sig);
        {
            minlsh_family *fam = cli_family_new(k, minlsh_index_seed(x.index),
                                                minlsh_index_scheme(x.index));
            if ((rc = minlsh_index_new(&out, fam, minlsh_index_config_id(x.index),
                                       minlsh_index_bands(x.index), minlsh_index_rows(x.index),
                                       NULL)) != 0)
                cli_die_lib(x.path, rc);
            minlsh_family_free(fam);
        }
        memset(&fresh, 0, sizeof fresh);
        for (j = 0; j < n; j++) {
            cli_name nm;
            if (drop[j]) continue;
            nm = names_get(&x.meta.names, j);
            if ((rc = minlsh_index_copy_signature(x.index, j, sig, k, NULL)) != 0 ||
                (rc = minlsh_index_insert(out, kept++, sig, k)) != 0)
                cli_die_lib(x.path, rc);
            (void)names_add(&fresh.names, nm.s, nm.n, nm.json, NULL);
        }
        free(sig);
        names_free(&x.meta.names);
        x.meta.names = fresh.names;
        minlsh_index_free(x.index);
        x.index = out;
        rc = index_save(&x);
        if (rc == 0 && !o->quiet)
            cli_msg("%s: removed %zu document%s, %zu in the index", x.path, removed,
                    cli_plural(removed), kept);
    }
    free(drop);
    index_close(&x);
    if (rc != 0) return rc;
    return cli_input_failures() ? CLI_FAILED : CLI_OK;
}
