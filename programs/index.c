/*
 * index.c: minlsh index create | add | query | stats | merge | compact |
 * remove: the command's I/O around a store (minlsh_store_*, lib/store),
 * which keeps the configuration, the names, the journal, the lock and
 * compaction. Names are kept as JSON tokens (a path as a JSON string, a
 * JSON Lines id as written), so that query prints them as they came.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    "INDEX.journal, which is synced at the end, once for the whole run: from\n"
    "then on they survive a crash or kill -9, and a run that fails or is killed\n"
    "before adds none of them. INDEX.lock is held exclusively from the first\n"
    "document to that sync, so concurrent adds all keep their documents; what\n"
    "other processes committed meanwhile is read from the journal. When the\n"
    "journal passes 1/32 of the index file (at least 1 MiB), the run then folds\n"
    "it into a new INDEX written with the lock released and renamed over INDEX\n"
    "under it, so other writers go on meanwhile ('index compact' does it at\n"
    "once). A journal damaged before records it acknowledged stops the run and\n"
    "is left as it is. An index made by an earlier minlsh is read as it is and\n"
    "gets the current format at its first compaction.\n"
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
    "                          as for 'index add' (a shared lock, for the open)\n"
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
    "id, shingling options, key (default or custom: the default key gives the\n"
    "config id, or not), the histogram of band bucket sizes and the file size.\n"
    "\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add' (a shared lock, for the open)\n"
    "  -h, --help              show this help\n";

/* ---- opening a store ---------------------------------------------------- */

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

/* The message for a store call that failed (err: errno after it);
 * CLI_FAILED. */
static int store_error(const char *path, int rc, const cli_opts *o, int writer, int err) {
    if (rc == MINLSH_E_NOMEM) cli_die_lib(path, rc);
    if (rc == MINLSH_E_BUSY) {
        cli_msg("%s: gave up waiting for the %s lock on %s.lock after %g s: another process "
                "is %s the index (--lock-timeout sets the wait)", path,
                writer ? "exclusive" : "shared", path, o->lock_timeout_ms / 1000.0,
                writer ? "using" : "writing");
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
    int made_custom;
    (void)minlsh_store_options_init(&so, MINLSH_STORE_OPTIONS_VERSION);
    so.flags = MINLSH_STORE_READONLY | MINLSH_STORE_ANY_KEY | MINLSH_STORE_NO_LOCK;
    if (minlsh_store_open(&st, path, &so) != 0)
        return store_error(path, MINLSH_E_MISMATCH, o, 0, 0);
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

/* The store's lock timeout for --lock-timeout (its 0 is "no limit"). */
static uint32_t store_timeout(uint32_t ms) {
    return ms == MINLSH_LOCK_WAIT_FOREVER ? 0 : ms > 0 ? ms : 1;
}

/* Open INDEX through the store with flags (MINLSH_STORE_*) and --key,
 * waiting for its lock as --lock-timeout says and saying so when the wait
 * is long. A reader that cannot create INDEX.lock (a read-only folder)
 * reads without it: every write of a store is a rename or a committed
 * append. so: creation options, or NULL. */
static int store_open(minlsh_store **out, const char *path, const cli_opts *o,
                      uint32_t flags, minlsh_store_options *so) {
    minlsh_store_options plain;
    uint32_t wait = o->lock_timeout_ms, first = wait < 1000 ? wait : 1000;
    int writer = !(flags & MINLSH_STORE_READONLY), rc, err;
    *out = NULL;
    if (!(flags & MINLSH_STORE_CREATE)) {
        if ((rc = index_check_path(path)) != 0) return rc;
        cli_guard_mapped(path);
    }
    if (so == NULL) {
        (void)minlsh_store_options_init(&plain, MINLSH_STORE_OPTIONS_VERSION);
        so = &plain;
    }
    so->flags |= flags | (o->no_lock ? MINLSH_STORE_NO_LOCK : 0u);
    so->key = o->custom_key ? o->key : NULL;
    so->max_document_bytes = o->max_doc_size;
    so->lock_timeout_ms = store_timeout(first);
    errno = 0;
    rc = minlsh_store_open(out, path, so);
    if (rc == MINLSH_E_BUSY && wait > first) {
        if (!o->quiet)
            cli_msg("%s: waiting for the lock on %s.lock (another process holds it)", path,
                    path);
        so->lock_timeout_ms = wait == MINLSH_LOCK_WAIT_FOREVER ? 0 : wait - first;
        rc = minlsh_store_open(out, path, so);
    }
    err = errno;
    if (rc == MINLSH_E_IO && !writer && !o->no_lock &&
        (err == EACCES || err == EROFS || err == EPERM)) {
        so->flags |= MINLSH_STORE_NO_LOCK;
        errno = 0;
        rc = minlsh_store_open(out, path, so);
        err = errno;
    }
    if (rc == MINLSH_E_MISMATCH && !(flags & MINLSH_STORE_CREATE))
        return store_key_error(path, o);
    if (rc == 0) (void)minlsh_store_set_lock_timeout(*out, store_timeout(wait));
    return rc == 0 ? 0 : store_error(path, rc, o, writer, err);
}

/* Take INDEX.lock for a change (minlsh_store_begin), announcing a long
 * wait as store_open does. */
static int store_begin(minlsh_store *st, const char *path, const cli_opts *o) {
    uint32_t wait = o->lock_timeout_ms, first = wait < 1000 ? wait : 1000;
    int rc;
    (void)minlsh_store_set_lock_timeout(st, store_timeout(first));
    errno = 0;
    rc = minlsh_store_begin(st);
    if (rc == MINLSH_E_BUSY && wait > first) {
        if (!o->quiet)
            cli_msg("%s: waiting for the lock on %s.lock (another process holds it)", path,
                    path);
        (void)minlsh_store_set_lock_timeout(
            st, wait == MINLSH_LOCK_WAIT_FOREVER ? 0 : wait - first);
        rc = minlsh_store_begin(st);
    }
    (void)minlsh_store_set_lock_timeout(st, store_timeout(wait));
    return rc == 0 ? 0 : store_error(path, rc, o, 1, errno);
}

/* Make the change durable and release the lock; then compact when the
 * journal is due (quietly skipped while another process compacts). */
static int store_commit(minlsh_store *st, const char *path, int compact) {
    int rc;
    errno = 0;
    rc = minlsh_store_commit(st);
    if (rc != 0) {
        int err = errno;
        cli_msg("%s: cannot write the journal: %s (%s)%s%s", path, minlsh_strerror(rc),
                minlsh_error_name(rc), rc == MINLSH_E_IO && err ? ": " : "",
                rc == MINLSH_E_IO && err ? strerror(err) : "");
        return CLI_FAILED;
    }
    if (!compact && minlsh_store_compact_due(st) != 1) return 0;
    errno = 0;
    rc = minlsh_store_compact(st);
    if (rc == MINLSH_E_BUSY && !compact) return 0;
    if (rc != 0) {
        int err = errno;
        cli_msg("%s: cannot save the index: %s (%s)%s%s", path, minlsh_strerror(rc),
                minlsh_error_name(rc), rc == MINLSH_E_IO && err ? ": " : "",
                rc == MINLSH_E_IO && err ? strerror(err) : "");
        return CLI_FAILED;
    }
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

/* The family the store signs with (k, seed, scheme of its index). */
static minlsh_family *store_family(const minlsh_store *st) {
    const minlsh_index *ix = minlsh_store_view_index(st);
    return cli_family_new(minlsh_index_k(ix), minlsh_index_seed(ix), minlsh_index_scheme(ix));
}

/* Read the documents of o's PATHs through the pipeline, shingled and signed
 * as the store does, into select and on_doc. */
static int run_docs(const cli_opts *o, const minlsh_store *st, const minlsh_family *family,
                    int (*select)(void *, const doc_view *),
                    int (*on_doc)(void *, const doc_view *), void *ctx, const char *what,
                    pipeline_stats *ps) {
    pipeline_cfg cfg;
    int rc;
    memset(&cfg, 0, sizeof cfg);
    cfg.o = o;
    cfg.shingler = minlsh_store_view_shingler(st);
    cfg.family = family;
    cfg.pool = cli_pool_new(o->threads);
    cfg.select = select;
    cfg.on_doc = on_doc;
    cfg.ctx = ctx;
    rc = pipeline_run_paths(&cfg, o->args + 1, o->n_args - 1, what, ps);
    minlsh_pool_free(cfg.pool);
    return rc;
}

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

/* ---- index create ------------------------------------------------------- */

int cmd_index_create(cli_opts *o) {
    minlsh_store_options so;
    minlsh_shingler_options sho;
    minlsh_store *st = NULL;
    struct stat fs;
    uint32_t bands, rows;
    const char *plan, *path = o->args[0];
    cli_buf desc = {NULL, 0, 0};
    int rc;
    if ((rc = opts_plan(o, "index create", 1, &bands, &rows, &plan)) != 0) return rc;
    if (!o->force && lstat(path, &fs) == 0) {
        cli_msg("%s: already exists; use --force to overwrite it", path);
        return CLI_FAILED;
    }
    (void)minlsh_shingler_options_init(&sho, MINLSH_SHINGLER_OPTIONS_VERSION);
    sho.unit = o->unit;
    sho.k = o->shingle_k;
    sho.flags = o->flags;
    (void)minlsh_store_options_init(&so, MINLSH_STORE_OPTIONS_VERSION);
    so.shingler = &sho;
    so.num_perm = o->num_perm;
    so.scheme = o->scheme;
    so.seed = o->seed;
    so.threshold = o->threshold;
    so.bands = bands;
    so.rows = rows;
    /* Checked again under the lock: another create may have won. */
    rc = store_open(&st, path, o,
                    MINLSH_STORE_CREATE | (o->force ? MINLSH_STORE_TRUNCATE : MINLSH_STORE_EXCL),
                    &so);
    if (rc != 0 && !o->force && lstat(path, &fs) == 0) {
        cli_msg("%s: already exists; use --force to overwrite it", path);
        return CLI_FAILED;
    }
    if (rc != 0) return rc;
    if (!o->quiet) {
        opts_describe_shingle(&desc, o->unit, o->shingle_k);
        buf_adds(&desc, ", normalize ");
        opts_describe_flags(&desc, o->flags);
        cli_msg("created %s: k=%u, b=%u, r=%u (%s), threshold %g, shingle %s, %s key", path,
                (unsigned)o->num_perm, (unsigned)bands, (unsigned)rows, plan, o->threshold,
                desc.p, o->custom_key ? "custom" : "default");
    }
    buf_free(&desc);
    minlsh_store_free(st);
    return 0;
}

/* ---- index add ---------------------------------------------------------- */

typedef struct add_ctx {
    const cli_opts *o;
    const char *path;
    minlsh_store *st;
    uint32_t k;
    uint64_t inserted; /* documents inserted by this run */
    cli_buf token, match_name;
    name_table seen;   /* every name selected in this run */
    /* --novel-only */
    double threshold;
    int own_threshold; /* --threshold: the run's, not the store's */
    const minlsh_family *family;
    minlsh_index *held;    /* the run's near-duplicates, so that a document
                              near one of them is a duplicate too */
    name_table held_names; /* name i: held document i */
    uint64_t *ids;
    double *sims;
    size_t cap;
    uint64_t duplicates;
} add_ctx;

static void add_skipped(add_ctx *c, const doc_view *d, cli_name nm, int in_index) {
    if (in_index && d->name.json)
        cli_input_error(d->where, d->line, "id %.*s is already in %s, skipped",
                        (int)nm.n, nm.s, c->path);
    else if (in_index)
        cli_input_error(d->where, 0, "already in %s, skipped", c->path);
    else if (d->name.json)
        cli_input_error(d->where, d->line, "duplicate id %.*s, skipped", (int)nm.n,
                        nm.s);
    else
        cli_input_error(d->where, 0, "listed more than once, skipped");
}

/* A name the store or this run has already is skipped, with a message. */
static int add_select(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    cli_name nm = token_name(&c->token, d->name);
    uint64_t id;
    if (minlsh_store_find_name(&id, c->st, nm.s, nm.n) == 0) {
        add_skipped(c, d, nm, 1);
        return 0;
    }
    if (!names_add(&c->seen, nm.s, nm.n, 1, NULL)) {
        add_skipped(c, d, nm, 0);
        return 0;
    }
    return 1;
}

static int add_on_doc(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    cli_name nm = token_name(&c->token, d->name);
    int rc = minlsh_store_add_signature(NULL, c->st, d->sig, c->k, nm.s, nm.n,
                                        MINLSH_STORE_ADD_ALWAYS);
    if (rc != 0) cli_die_lib(c->path, rc);
    c->inserted++;
    return 0;
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
            char num[32];
            out_name_json(&line, *match);
            buf_adds(&line, ", \"similarity\": ");
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

/* The most similar of the run's held near-duplicates (estimate; ties: the
 * first held), if one shares a band with sig. */
static int held_match(add_ctx *c, const uint32_t *sig, uint64_t *best, double *sim) {
    size_t n = 0, i;
    int rc, found = 0;
    if (c->held == NULL) return 0;
    rc = minlsh_index_query(c->held, sig, c->k, c->ids, c->sims, c->cap, &n);
    if (rc == MINLSH_E_BUFSIZE) {
        void *v = c->ids;
        xgrow(&v, &c->cap, n, sizeof *c->ids);
        c->ids = v;
        c->sims = xreallocarray(c->sims, c->cap, sizeof *c->sims);
        rc = minlsh_index_query(c->held, sig, c->k, c->ids, c->sims, c->cap, &n);
    }
    if (rc != 0) cli_die_lib(c->path, rc);
    for (i = 0; i < n; i++)
        if (!found || c->sims[i] > *sim) {
            found = 1;
            *best = c->ids[i];
            *sim = c->sims[i];
        }
    return found;
}

/* --novel-only: the store decides (check-and-insert) at its threshold;
 * with --threshold, its best match is compared with the run's. */
static int novel_on_doc(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    cli_name nm = token_name(&c->token, d->name), match;
    minlsh_store_result r;
    uint64_t held = 0;
    double held_sim = 0, sim;
    int rc;
    if (held_match(c, d->sig, &held, &held_sim) && held_sim >= c->threshold) {
        /* A near-duplicate of the run's own duplicates: reported against
         * whichever is closer, an indexed document or that one. */
        rc = minlsh_store_query_signature(&r, c->st, d->sig, c->k);
        if (rc != 0) cli_die_lib(c->path, rc);
        if (r.has_match && r.similarity >= held_sim) {
            match = store_name(c->st, r.match, &c->match_name, c->path);
            sim = r.similarity;
        } else {
            match = names_get(&c->held_names, (size_t)held);
            sim = held_sim;
        }
    } else {
        if (!c->own_threshold) {
            rc = minlsh_store_add_signature(&r, c->st, d->sig, c->k, nm.s, nm.n, 0);
        } else {
            rc = minlsh_store_query_signature(&r, c->st, d->sig, c->k);
            r.inserted = 0;
            if (rc == 0 && !(r.has_match && r.similarity >= c->threshold)) {
                rc = minlsh_store_add_signature(&r, c->st, d->sig, c->k, nm.s, nm.n,
                                                MINLSH_STORE_ADD_ALWAYS);
                r.inserted = 1;
            }
        }
        if (rc != 0) cli_die_lib(c->path, rc);
        if (r.inserted) {
            c->inserted++;
            novel_print(c, nm, NULL, 0);
            return 0;
        }
        match = store_name(c->st, r.match, &c->match_name, c->path);
        sim = r.similarity;
    }
    novel_print(c, nm, &match, sim);
    c->duplicates++;
    if (c->held == NULL) {
        const minlsh_index *ix = minlsh_store_view_index(c->st);
        if ((rc = minlsh_index_new(&c->held, c->family, minlsh_index_config_id(ix),
                                   minlsh_index_bands(ix), minlsh_index_rows(ix), NULL)) != 0)
            cli_die_lib(c->path, rc);
    }
    /* The match's name is in a table that this may grow: printed first. */
    (void)names_add(&c->held_names, nm.s, nm.n, 1, NULL);
    rc = minlsh_index_insert(c->held, minlsh_index_count(c->held), d->sig, c->k);
    if (rc != 0) cli_die_lib(c->path, rc);
    return 0;
}

int cmd_index_add(cli_opts *o) {
    minlsh_store *st;
    minlsh_family *family;
    add_ctx c;
    pipeline_stats ps;
    const char *path = o->args[0];
    int rc;
    if (!o->novel_only && (o->given & (OPT(O_FORMAT) | OPT(O_THRESHOLD))))
        return cli_usage_error("index add", "--%s needs --novel-only",
                               (o->given & OPT(O_FORMAT)) ? "format" : "threshold");
    if ((rc = store_open(&st, path, o, 0, NULL)) != 0) return rc;
    /* Exclusive from the first document to the sync: the run's names and
     * decisions see every document committed before it. */
    if ((rc = store_begin(st, path, o)) != 0) {
        minlsh_store_free(st);
        return rc;
    }
    family = store_family(st);
    memset(&c, 0, sizeof c);
    c.o = o;
    c.path = path;
    c.st = st;
    c.k = minlsh_index_k(minlsh_store_view_index(st));
    c.family = family;
    c.own_threshold = (o->given & OPT(O_THRESHOLD)) != 0;
    c.threshold = c.own_threshold ? o->threshold : minlsh_store_threshold(st);
    if (o->novel_only && o->format == FORMAT_TSV) fputs("id\tdecision\tmatch\tsimilarity\n", stdout);
    run_docs(o, st, family, add_select, o->novel_only ? novel_on_doc : add_on_doc, &c,
             "index add:", &ps);
    rc = store_commit(st, path, 0);
    if (rc == 0 && !o->quiet) {
        fflush(stdout);
        if (o->novel_only)
            cli_msg("%s: added %llu novel document%s, %llu near-duplicate%s not added "
                    "(threshold %g; %.1f MB in %.2f s), %llu in the index",
                    path, (unsigned long long)c.inserted, cli_plural(c.inserted),
                    (unsigned long long)c.duplicates, cli_plural(c.duplicates), c.threshold,
                    (double)ps.bytes / 1e6, ps.seconds,
                    (unsigned long long)minlsh_store_count(st));
        else
            cli_msg("%s: added %llu document%s (%.1f MB in %.2f s), %llu in the index", path,
                    (unsigned long long)c.inserted, cli_plural(c.inserted),
                    (double)ps.bytes / 1e6, ps.seconds,
                    (unsigned long long)minlsh_store_count(st));
    }
    buf_free(&c.token);
    buf_free(&c.match_name);
    names_free(&c.seen);
    names_free(&c.held_names);
    minlsh_index_free(c.held);
    free(c.ids);
    free(c.sims);
    minlsh_family_free(family);
    minlsh_store_free(st);
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
    minlsh_family *family;
    query_ctx c;
    pipeline_stats ps;
    const char *path = o->args[0];
    int rc = store_open(&st, path, o, MINLSH_STORE_READONLY, NULL);
    if (rc != 0) return rc;
    family = store_family(st);
    memset(&c, 0, sizeof c);
    c.o = o;
    c.path = path;
    c.st = st;
    c.k = minlsh_index_k(minlsh_store_view_index(st));
    c.threshold = (o->given & OPT(O_THRESHOLD)) ? o->threshold : minlsh_store_threshold(st);
    out_pairs_header(stdout, o->format, 0);
    run_docs(o, st, family, NULL, query_on_doc, &c, "index query:", &ps);
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

const char cli_help_index_merge[] =
    "Usage: minlsh index merge [OPTIONS] OUT SHARD...\n"
    "\n"
    "Merge index files built separately (in parallel, on other machines) into\n"
    "one index OUT that answers like an index built in one piece. Every SHARD\n"
    "must come from 'minlsh index create' with the same options: shingling,\n"
    "key (checked through the config id), threshold, k, seed, bands and rows.\n"
    "A shard that differs is named and nothing is written. OUT starts as a copy\n"
    "of the first shard (written atomically; it may be one of the shards), and\n"
    "the documents of the others follow in order; a name an earlier shard has is\n"
    "reported and skipped, as by 'index add'. OUT is compacted at the end.\n"
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

const char cli_help_index_compact[] =
    "Usage: minlsh index compact [OPTIONS] INDEX\n"
    "\n"
    "Fold INDEX.journal (the documents 'index add' appended since INDEX was last\n"
    "written) into INDEX, atomically, and start an empty journal. 'index add'\n"
    "compacts by itself when the journal passes 1/32 of the index file (at\n"
    "least 1 MiB). The new INDEX is written with INDEX.lock released and renamed\n"
    "over INDEX under it: other processes add and query meanwhile, and what they\n"
    "add is carried into the new journal. Removed documents leave INDEX here.\n"
    "\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add'\n"
    "  -q, --quiet             no summary on stderr\n"
    "  -h, --help              show this help\n";

const char cli_help_index_remove[] =
    "Usage: minlsh index remove [OPTIONS] INDEX ID...\n"
    "\n"
    "Remove documents from INDEX, named as 'index query' prints them: a path as\n"
    "it was added, or a JSON Lines id (a string without its quotes, or a number\n"
    "as written). The removals are journaled and synced as by 'index add', and\n"
    "INDEX is then compacted without them; the other documents keep their\n"
    "numbers. An ID that is not in the index is reported (exit status 1); the\n"
    "others are removed.\n"
    "\n"
    "      --lock-timeout S, --no-lock\n"
    "                          as for 'index add'\n"
    "  -q, --quiet             no summary on stderr\n"
    "  -h, --help              show this help\n";

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
    /* No --key: opened with any, the default key's config id telling which. */
    int rc = store_open(&st, path, o, MINLSH_STORE_READONLY | MINLSH_STORE_ANY_KEY, NULL);
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
    printf("key                  %s\n", minlsh_store_key_matches(st) == 1 ? "default" : "custom");
    printf("threshold            %g\n", minlsh_store_threshold(st));
    print_histogram(ix, path);
    if (stat(path, &fs) == 0) printf("bytes                %llu\n", (unsigned long long)fs.st_size);
    buf_free(&desc);
    minlsh_store_free(st);
    return cli_finish_stdout(CLI_OK);
}

/* ---- index merge -------------------------------------------------------- */

/* The first difference between shard s and the first shard f that makes
 * them impossible to merge, written into why; 0 if there is none. */
static int merge_mismatch(const char *f_path, const minlsh_store *f, const minlsh_store *s,
                          cli_buf *why) {
    const minlsh_index *a = minlsh_store_view_index(f), *b = minlsh_store_view_index(s);
    const minlsh_shingler *fa = minlsh_store_view_shingler(f), *sb = minlsh_store_view_shingler(s);
    uint32_t fu = minlsh_shingler_unit(fa), fk = minlsh_shingler_k(fa);
    uint32_t su = minlsh_shingler_unit(sb), sk = minlsh_shingler_k(sb);
    uint32_t ff = minlsh_shingler_flags(fa), sf = minlsh_shingler_flags(sb);
    if (minlsh_index_k(a) != minlsh_index_k(b)) {
        buf_printf(why, "num-perm %u, %s has %u", (unsigned)minlsh_index_k(b), f_path,
                   (unsigned)minlsh_index_k(a));
    } else if (minlsh_index_seed(a) != minlsh_index_seed(b)) {
        buf_printf(why, "seed %llu, %s has %llu", (unsigned long long)minlsh_index_seed(b),
                   f_path, (unsigned long long)minlsh_index_seed(a));
    } else if (minlsh_index_scheme(a) != minlsh_index_scheme(b)) {
        buf_printf(why, "scheme %s, %s has %s", opts_scheme_name(minlsh_index_scheme(b)),
                   f_path, opts_scheme_name(minlsh_index_scheme(a)));
    } else if (minlsh_index_bands(a) != minlsh_index_bands(b) ||
               minlsh_index_rows(a) != minlsh_index_rows(b)) {
        buf_printf(why, "b=%u, r=%u, %s has b=%u, r=%u", (unsigned)minlsh_index_bands(b),
                   (unsigned)minlsh_index_rows(b), f_path, (unsigned)minlsh_index_bands(a),
                   (unsigned)minlsh_index_rows(a));
    } else if (fu != su || fk != sk) {
        buf_adds(why, "shingle ");
        opts_describe_shingle(why, su, sk);
        buf_printf(why, ", %s has ", f_path);
        opts_describe_shingle(why, fu, fk);
    } else if (ff != sf) {
        buf_adds(why, "normalize ");
        opts_describe_flags(why, sf);
        buf_printf(why, ", %s has ", f_path);
        opts_describe_flags(why, ff);
        /* The likely cause since the default changed: a shard of minlsh 0.1
         * (no flag) beside one made with today's defaults. */
        if ((ff ^ sf) == MINLSH_NORM_CJK_WORDS)
            buf_adds(why, " (cjk-words is on by default after minlsh 0.1; "
                          "'index create --no-cjk-words' makes a shard like 0.1's)");
    } else if (minlsh_store_threshold(f) != minlsh_store_threshold(s)) {
        char x[32], y[32];
        cli_format_double(x, minlsh_store_threshold(s));
        cli_format_double(y, minlsh_store_threshold(f));
        buf_printf(why, "threshold %s, %s has %s", x, f_path, y);
    } else if (minlsh_index_config_id(a) != minlsh_index_config_id(b)) {
        int fc = minlsh_store_key_matches(f) != 1, sc = minlsh_store_key_matches(s) != 1;
        buf_printf(why, "config id %016llx (%s key), %s has %016llx (%s key)",
                   (unsigned long long)minlsh_index_config_id(b), sc ? "a custom" : "the default",
                   f_path, (unsigned long long)minlsh_index_config_id(a),
                   fc ? "a custom" : "the default");
    } else {
        return 0;
    }
    return 1;
}

/* The documents of shard s into out, in id order, under names out does not
 * have yet (the others reported); how many were skipped. */
static size_t merge_add(minlsh_store *out, const char *out_path, const minlsh_store *s,
                        const char *s_path) {
    const minlsh_index *ix = minlsh_store_view_index(s);
    uint32_t k = minlsh_index_k(ix), *sig = xcalloc(k, sizeof *sig);
    uint64_t id, left = minlsh_store_count(s), taken;
    cli_buf name = {NULL, 0, 0};
    size_t skipped = 0;
    int rc;
    for (id = 0; left > 0; id++) {
        cli_name nm;
        size_t n = 0;
        /* ids a removal left unused have no name */
        if (minlsh_store_copy_name(s, id, NULL, 0, &n) == MINLSH_E_NOTFOUND) continue;
        left--;
        nm = store_name(s, id, &name, s_path);
        if (minlsh_store_find_name(&taken, out, nm.s, nm.n) == 0) {
            cli_input_error(s_path, 0, "id %.*s is already in an earlier shard, skipped",
                            (int)(nm.n > 200 ? 200 : nm.n), nm.s);
            skipped++;
            continue;
        }
        if ((rc = minlsh_index_copy_signature(ix, id, sig, k, NULL)) != 0 ||
            (rc = minlsh_store_add_signature(NULL, out, sig, k, nm.s, nm.n,
                                             MINLSH_STORE_ADD_ALWAYS)) != 0)
            cli_die_lib(out_path, rc);
    }
    buf_free(&name);
    free(sig);
    return skipped;
}

int cmd_index_merge(cli_opts *o) {
    const char *out_path = o->args[0];
    int n = o->n_args - 1, i, rc = 0, in_place;
    minlsh_store **shard = xcalloc((size_t)n, sizeof *shard), *out = NULL;
    struct stat st, sst;
    size_t skipped = 0;
    if (!o->force && lstat(out_path, &st) == 0) {
        cli_msg("%s: already exists; use --force to overwrite it", out_path);
        free(shard);
        return CLI_FAILED;
    }
    /* Every shard opened (its view kept) before OUT is written: OUT may be
     * one of them. No key: the config ids are compared. */
    for (i = 0; i < n && rc == 0; i++) {
        rc = store_open(&shard[i], o->args[i + 1], o,
                        MINLSH_STORE_READONLY | MINLSH_STORE_ANY_KEY, NULL);
        if (rc == 0 && i > 0) {
            cli_buf why = {NULL, 0, 0};
            if (merge_mismatch(o->args[1], shard[0], shard[i], &why)) {
                cli_msg("%s: %s (%s): it has %s; shards must be made by 'minlsh index "
                        "create' with the same options", o->args[i + 1],
                        minlsh_strerror(MINLSH_E_MISMATCH),
                        minlsh_error_name(MINLSH_E_MISMATCH), why.p);
                rc = CLI_FAILED;
            }
            buf_free(&why);
        }
    }
    /* OUT: the first shard itself, or a copy of it. */
    in_place = rc == 0 && lstat(out_path, &st) == 0 && stat(o->args[1], &sst) == 0 &&
               st.st_dev == sst.st_dev && st.st_ino == sst.st_ino;
    if (rc == 0 && !in_place) {
        errno = 0;
        rc = minlsh_store_copy_to(shard[0], out_path,
                                  o->force ? MINLSH_STORE_TRUNCATE : MINLSH_STORE_EXCL);
        if (rc == MINLSH_E_EXISTS) {
            cli_msg("%s: already exists; use --force to overwrite it", out_path);
            rc = CLI_FAILED;
        } else if (rc != 0) {
            rc = store_error(out_path, rc, o, 1, errno);
        }
    }
    if (rc == 0) rc = store_open(&out, out_path, o, MINLSH_STORE_ANY_KEY, NULL);
    if (rc == 0) rc = store_begin(out, out_path, o);
    if (rc == 0) {
        for (i = 1; i < n; i++) skipped += merge_add(out, out_path, shard[i], o->args[i + 1]);
        rc = store_commit(out, out_path, 1);
    }
    if (rc == 0 && !o->quiet)
        cli_msg("%s: merged %d shard%s, %llu document%s%s", out_path, n, n == 1 ? "" : "s",
                (unsigned long long)minlsh_store_count(out), cli_plural(minlsh_store_count(out)),
                skipped ? " (names already taken were skipped)" : "");
    minlsh_store_free(out);
    for (i = 0; i < n; i++) minlsh_store_free(shard[i]);
    free(shard);
    if (rc != 0) return rc;
    return cli_input_failures() ? CLI_FAILED : CLI_OK;
}

/* ---- index compact ------------------------------------------------------ */

int cmd_index_compact(cli_opts *o) {
    minlsh_store *st;
    const char *path = o->args[0];
    int rc = store_open(&st, path, o, 0, NULL);
    if (rc != 0) return rc;
    errno = 0;
    rc = minlsh_store_compact(st);
    if (rc == MINLSH_E_BUSY) {
        cli_msg("%s: another process is compacting the index; its compaction does this one's "
                "work", path);
        rc = 0;
    } else if (rc != 0) {
        int err = errno;
        cli_msg("%s: cannot save the index: %s (%s)%s%s", path, minlsh_strerror(rc),
                minlsh_error_name(rc), rc == MINLSH_E_IO && err ? ": " : "",
                rc == MINLSH_E_IO && err ? strerror(err) : "");
        rc = CLI_FAILED;
    } else if (!o->quiet) {
        cli_msg("%s: journal folded in, %llu document%s in the index", path,
                (unsigned long long)minlsh_store_count(st), cli_plural(minlsh_store_count(st)));
    }
    minlsh_store_free(st);
    return rc;
}

/* ---- index remove ------------------------------------------------------- */

int cmd_index_remove(cli_opts *o) {
    minlsh_store *st;
    const char *path = o->args[0];
    cli_buf tok = {NULL, 0, 0};
    size_t removed = 0;
    int i, rc = store_open(&st, path, o, 0, NULL);
    if (rc != 0) return rc;
    if ((rc = store_begin(st, path, o)) != 0) {
        minlsh_store_free(st);
        return rc;
    }
    for (i = 1; i < o->n_args; i++) {
        /* as a JSON string (how paths and string ids are stored), else as a
         * token written as given (numeric ids) */
        const char *id = o->args[i];
        buf_clear(&tok);
        json_escape(&tok, id, strlen(id));
        rc = minlsh_store_remove_name(st, tok.p, tok.n);
        if (rc == MINLSH_E_NOTFOUND) rc = minlsh_store_remove_name(st, id, strlen(id));
        if (rc == MINLSH_E_NOTFOUND) {
            /* named twice: the first removed it */
            int again = 0, j;
            for (j = 1; j < i; j++) again |= strcmp(o->args[j], id) == 0;
            if (!again) cli_input_error(id, 0, "not in %s", path);
            rc = 0;
        } else if (rc == 0) {
            removed++;
        } else {
            cli_die_lib(path, rc);
        }
    }
    buf_free(&tok);
    /* Removed documents leave INDEX at once: it is compacted. */
    rc = store_commit(st, path, removed > 0);
    if (rc == 0 && removed > 0 && !o->quiet)
        cli_msg("%s: removed %zu document%s, %llu in the index", path, removed,
                cli_plural(removed), (unsigned long long)minlsh_store_count(st));
    minlsh_store_free(st);
    if (rc != 0) return rc;
    return cli_input_failures() ? CLI_FAILED : CLI_OK;
}
