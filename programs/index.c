/*
 * index.c: minlsh index create | add | query | stats | merge, on a
 * persistent index file (minlsh_index_save: atomic, checksummed).
 *
 * The library stores the signatures, k, the seed, (b, r) and the shingler's
 * config id; the command keeps the rest in the index's metadata blob
 * (index_meta.c): how to shingle new documents the same way (never the key),
 * the threshold, and the names of the documents, name number i being the
 * document with index id i.
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
    "      --shingle UNIT, --lowercase, --strip-punct, --collapse-space,\n"
    "      --normalize, --html, --key HEX\n"
    "                          as for minlsh dedup\n"
    "      --force             overwrite an existing file\n"
    "  -q, --quiet             do not describe the new index on stderr\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 on success, 1 if INDEX exists (without --force) or cannot\n"
    "be written, 2 for usage errors.\n";

const char cli_help_index_add[] =
    "Usage: minlsh index add [OPTIONS] INDEX PATH...\n"
    "\n"
    "Add documents (files, or JSON Lines records with --jsonl) to INDEX. Names\n"
    "already in the index are reported and skipped. The index is saved once,\n"
    "atomically, at the end: a failed run leaves it as it was.\n"
    "\n"
    "      --key HEX           the key given to 'index create', if any\n"
    "      --jsonl, --id-field NAME, --text-field NAME\n"
    "                          as for minlsh dedup\n"
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
} cli_index;

static void index_close(cli_index *x) {
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
    rc = index_meta_parse(&x->meta, m.p ? m.p : "", m.n, x->meta_err, sizeof x->meta_err);
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
 * check it against the stored config id. */
static int index_shingler(cli_index *x, const cli_opts *o) {
    uint64_t id = 0;
    x->sh = cli_shingler_new(x->meta.unit, x->meta.shingle_k, x->meta.flags, o->key, &id);
    if (id != minlsh_index_config_id(x->index)) {
        cli_msg("%s: %s (%s): the index was made with %s; %s", x->path,
                minlsh_strerror(MINLSH_E_MISMATCH), minlsh_error_name(MINLSH_E_MISMATCH),
                x->meta.custom_key ? "a custom --key" : "the default key",
                x->meta.custom_key ? "give the same --key as to 'index create'"
                              : "do not give --key");
        return CLI_FAILED;
    }
    x->family = cli_family_new(minlsh_index_k(x->index), minlsh_index_seed(x->index));
    return 0;
}

/* Load INDEX; with o non-NULL also prepare to shingle and sign like it. */
static int index_open(cli_index *x, const char *path, const cli_opts *o) {
    struct stat st;
    int rc;
    memset(x, 0, sizeof *x);
    x->path = path;
    if (stat(path, &st) != 0) {
        cli_msg("%s: cannot open the index: %s%s", path, strerror(errno),
                errno == ENOENT ? " (create it with 'minlsh index create')" : "");
        return CLI_FAILED;
    }
    if ((rc = minlsh_index_load(&x->index, path, NULL)) != 0)
        return load_error(path, rc);
    if (!read_meta(x) && o != NULL) {
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

static int index_save(cli_index *x) {
    cli_buf m = {NULL, 0, 0};
    int rc;
    index_meta_build(&m, &x->meta, minlsh_index_k(x->index), minlsh_index_seed(x->index));
    rc = minlsh_index_set_metadata(x->index, m.p, m.n);
    buf_free(&m);
    if (rc != 0) return load_error(x->path, rc);
    errno = 0;
    rc = minlsh_index_save(x->index, x->path);
    if (rc != 0) {
        int err = errno; /* the failing system call's, if the library left it */
        cli_msg("%s: cannot save the index: %s (%s)%s%s", x->path, minlsh_strerror(rc),
                minlsh_error_name(rc), rc == MINLSH_E_IO && err ? ": " : "",
                rc == MINLSH_E_IO && err ? strerror(err) : "");
        return CLI_FAILED;
    }
    return 0;
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
    x.sh = cli_shingler_new(o->unit, o->shingle_k, o->flags, o->key, &config_id);
    x.family = cli_family_new(o->num_perm, o->seed);
    if ((rc = minlsh_index_new(&x.index, x.family, config_id, bands, rows, NULL)) != 0)
        cli_die_lib("index", rc);
    x.meta.unit = o->unit;
    x.meta.shingle_k = o->shingle_k;
    x.meta.flags = o->flags;
    x.meta.custom_key = o->custom_key;
    x.meta.threshold = o->threshold;
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
    cli_index *x;
    size_t before;   /* names already in the index */
    size_t inserted; /* documents inserted by this run */
    uint32_t k;
    cli_buf token;
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

/* Take the name (so ids follow input order), unless it is taken already. */
static int add_select(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    cli_name nm = token_name(&c->token, d->name);
    size_t dup = 0;
    if (names_add(&c->x->meta.names, nm.s, nm.n, 1, &dup)) return 1;
    if (dup < c->before && d->name.json)
        cli_input_error(d->where, d->line, "id %.*s is already in %s, skipped",
                        (int)nm.n, nm.s, c->x->path);
    else if (dup < c->before)
        cli_input_error(d->where, 0, "already in %s, skipped", c->x->path);
    else if (d->name.json)
        cli_input_error(d->where, d->line, "duplicate id %.*s, skipped", (int)nm.n,
                        nm.s);
    else
        cli_input_error(d->where, 0, "listed more than once, skipped");
    return 0;
}

/* Selected documents arrive in the order add_select numbered them. */
static int add_on_doc(void *ctx, const doc_view *d) {
    add_ctx *c = ctx;
    uint64_t id = c->before + c->inserted++;
    int rc = minlsh_index_insert(c->x->index, id, d->sig, c->k);
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
    int rc = index_open(&x, o->args[0], o);
    if (rc != 0) return rc;
    memset(&c, 0, sizeof c);
    c.x = &x;
    c.before = x.meta.names.n;
    c.k = minlsh_index_k(x.index);
    run_docs(o, &x, add_select, add_on_doc, &c, "index add:", &st);
    buf_free(&c.token);
    added = x.meta.names.n - c.before;
    if (added > 0) rc = index_save(&x);
    if (rc == 0 && !o->quiet)
        cli_msg("%s: added %zu document%s (%.1f MB in %.2f s), %zu in the index",
                x.path, added, cli_plural(added), (double)st.bytes / 1e6, st.seconds,
                x.meta.names.n);
    index_close(&x);
    if (rc != 0) return rc;
    return cli_input_failures() ? CLI_FAILED : CLI_OK;
}

/* ---- index query -------------------------------------------------------- */

typedef struct query_ctx {
    const cli_opts *o;
    cli_index *x;
    uint32_t k;
    double threshold;
    uint64_t *ids;
    double *sims;
    size_t cap;
    uint64_t matches;
} query_ctx;

static int query_on_doc(void *ctx, const doc_view *d) {
    query_ctx *c = ctx;
    size_t n = 0, i;
    int rc = minlsh_index_query(c->x->index, d->sig, c->k, c->ids, c->sims, c->cap, &n);
    if (rc == MINLSH_E_BUFSIZE) {
        void *v = c->ids;
        size_t cap = c->cap;
        xgrow(&v, &cap, n, sizeof *c->ids);
        c->ids = v;
        c->sims = xreallocarray(c->sims, cap, sizeof *c->sims);
        c->cap = cap;
        rc = minlsh_index_query(c->x->index, d->sig, c->k, c->ids, c->sims, c->cap, &n);
    }
    if (rc != 0) cli_die_lib(c->x->path, rc);
    for (i = 0; i < n; i++) {
        if (!c->o->all && c->sims[i] < c->threshold) continue;
        if (c->ids[i] >= c->x->meta.names.n) continue; /* not one of ours */
        out_pair(stdout, c->o->format, d->name, names_get(&c->x->meta.names, (size_t)c->ids[i]),
                 c->sims[i], 0, 0);
        c->matches++;
    }
    return 0;
}

int cmd_index_query(cli_opts *o) {
    cli_index x;
    query_ctx c;
    pipeline_stats st;
    int rc = index_open(&x, o->args[0], o);
    if (rc != 0) return rc;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.x = &x;
    c.k = minlsh_index_k(x.index);
    c.threshold = (o->given & OPT(O_THRESHOLD)) ? o->threshold : x.meta.threshold;
    out_pairs_header(stdout, o->format, 0);
    run_docs(o, &x, NULL, query_on_doc, &c, "index query:", &st);
    if (!o->quiet) {
        fflush(stdout);
        cli_msg("%llu query document%s, %llu match%s in %s (threshold %g%s)",
                (unsigned long long)st.docs, cli_plural(st.docs),
                (unsigned long long)c.matches, c.matches == 1 ? "" : "es", x.path,
                c.threshold, o->all ? ", --all" : "");
    }
    free(c.ids);
    free(c.sims);
    index_close(&x);
    return cli_finish_stdout(cli_input_failures() ? CLI_FAILED : CLI_OK);
}

/* ---- index stats -------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

#define HIST_CLASSES 40

/* Buckets per size class (1, 2, 3-4, 5-8, ...), from the band keys of every
 * stored signature. *n_buckets and *largest describe all bands. */
static void bucket_histogram(const cli_index *x, uint64_t hist[HIST_CLASSES],
                             uint64_t *n_buckets, uint64_t *largest) {
    uint32_t k = minlsh_index_k(x->index), b = minlsh_index_bands(x->index);
    uint32_t r = minlsh_index_rows(x->index);
    size_t n = x->meta.names.n, used = 0, i, j;
    uint64_t *keys = xcalloc(n ? n : 1, (size_t)b * sizeof *keys);
    uint64_t *col = xcalloc(n ? n : 1, sizeof *col);
    uint32_t *sig = xcalloc(k, sizeof *sig);
    int rc;
    for (i = 0; i < n; i++) {
        size_t got;
        if (minlsh_index_copy_signature(x->index, i, sig, k, &got) != 0) continue;
        if (minlsh_signature_is_empty(sig, k) == 1) continue; /* never banded */
        rc = minlsh_band_keys(sig, k, b, r, keys + used * b, b, &got);
        if (rc != 0) cli_die_lib(x->path, rc);
        used++;
    }
    for (j = 0; j < b; j++) {
        for (i = 0; i < used; i++) col[i] = keys[i * b + j];
        qsort(col, used, sizeof *col, cmp_u64);
        for (i = 0; i < used;) {
            size_t e = i + 1, size, c = 0;
            while (e < used && col[e] == col[i]) e++;
            size = e - i;
            while (c + 1 < HIST_CLASSES && ((size_t)1 << c) < size) c++;
            hist[c]++;
            (*n_buckets)++;
            if (size > *largest) *largest = size;
            i = e;
        }
    }
    free(keys);
    free(col);
    free(sig);
}

static void print_histogram(const cli_index *x) {
    uint64_t hist[HIST_CLASSES] = {0}, n_buckets = 0, largest = 0;
    int c, top = 0;
    bucket_histogram(x, hist, &n_buckets, &largest);
    printf("buckets              %llu in %u bands, largest %llu\n",
           (unsigned long long)n_buckets, (unsigned)minlsh_index_bands(x->index),
           (unsigned long long)largest);
    for (c = 0; c < HIST_CLASSES; c++)
        if (hist[c]) top = c;
    printf("bucket size histogram (documents in a bucket: buckets)\n");
    for (c = 0; c <= top && n_buckets > 0; c++) {
        char label[48];
        uint64_t lo = c == 0 ? 1 : ((uint64_t)1 << (c - 1)) + 1, hi = (uint64_t)1 << c;
        if (lo == hi) snprintf(label, sizeof label, "%llu", (unsigned long long)lo);
        else snprintf(label, sizeof label, "%llu-%llu", (unsigned long long)lo,
                      (unsigned long long)hi);
        printf("  %-18s %llu\n", label, (unsigned long long)hist[c]);
    }
}

int cmd_index_stats(cli_opts *o) {
    cli_index x;
    struct stat st;
    uint64_t config_id;
    cli_buf desc = {NULL, 0, 0};
    int rc = index_open(&x, o->args[0], NULL);
    if (rc != 0) return rc;
    config_id = minlsh_index_config_id(x.index);
    printf("index                %s\n", x.path);
    printf("documents            %llu\n", (unsigned long long)minlsh_index_count(x.index));
    printf("signature (k)        %u\n", (unsigned)minlsh_index_k(x.index));
    printf("bands (b)            %u\n", (unsigned)minlsh_index_bands(x.index));
    printf("rows (r)             %u\n", (unsigned)minlsh_index_rows(x.index));
    printf("seed                 %llu\n", (unsigned long long)minlsh_index_seed(x.index));
    printf("config id            %016llx\n", (unsigned long long)config_id);
    if (x.has_meta) {
        opts_describe_shingle(&desc, x.meta.unit, x.meta.shingle_k);
        printf("shingle              %s\n", desc.p);
        buf_clear(&desc);
        opts_describe_flags(&desc, x.meta.flags);
        printf("normalize            %s\n", desc.p);
        printf("key                  %s\n", x.meta.custom_key ? "custom" : "default");
        printf("threshold            %g\n", x.meta.threshold);
        if (x.meta.plan[0]) printf("banding chosen by    %s\n", x.meta.plan);
        print_histogram(&x);
    } else if (x.meta_err[0])
        printf("metadata             damaged: %s; no histogram\n", x.meta_err);
    else
        printf("metadata             none (not made by 'minlsh index create'); "
               "no histogram\n");
    if (stat(x.path, &st) == 0)
        printf("bytes                %llu\n", (unsigned long long)st.st_size);
    buf_free(&desc);
    index_close(&x);
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
    fam = cli_family_new(k, minlsh_index_seed(s->index));
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
    if (!o->force && lstat(out, &st) == 0) {
        cli_msg("%s: already exists; use --force to overwrite it", out);
        return CLI_FAILED;
    }
    for (i = 1; i < o->n_args; i++) {
        cli_index s;
        cli_buf why = {NULL, 0, 0};
        minlsh_index *src;
        size_t skip = 0;
        /* Only the address of s is taken here; index_open fills it before
         * any read (a cppcheck false positive). */
        /* cppcheck-suppress uninitvar */
        cli_index *x = i == 1 ? &m : &s;
        if ((rc = index_open(x, o->args[i], NULL)) != 0) {
            if (i > 1) index_close(&m);
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
            return CLI_FAILED;
        }
        if (i == 1) continue; /* the first shard is where the others go */
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
