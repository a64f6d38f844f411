/*
 * dedup.c: minlsh dedup, input and output around the library's dedup
 * engine (lib/dedup, docs/dedup.md), which owns the policy: exact copies,
 * banding, verification, clusters and keep/drop decisions. Here: read,
 * shingle and sign every document on the pool (pipeline.c), hand each one
 * to the engine in input order with its name kept in a name table, run the
 * engine, and print its pairs, clusters or decisions. Documents are
 * numbered in input order and every output is sorted by those numbers, so
 * the output is the same for any number of threads.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const char cli_help_dedup[] =
    "Usage: minlsh dedup [OPTIONS] PATH...\n"
    "\n"
    "Find near-duplicate documents. Each file under PATH (directories are\n"
    "walked; '-' is standard input) is one document, or with --jsonl each line\n"
    "of it is. Exact duplicates are found by fingerprint; the others through\n"
    "MinHash and LSH banding, every candidate confirmed with its exact Jaccard\n"
    "similarity. Prints the groups of near-duplicates (or the pairs).\n"
    "\n"
    "Input:\n"
    "      --jsonl             read each file as JSON Lines, one document per line\n"
    "      --id-field NAME     the id field of a JSON Lines record (default: id)\n"
    "      --text-field NAME   the text field of a JSON Lines record (default: text)\n"
    "Shingling:\n"
    "      --shingle UNIT      word:N, char:N, codepoint:N or stopword[:N]\n"
    "                          (default: word:5)\n"
    "      --lowercase         fold ASCII upper case to lower case\n"
    "      --strip-punct       delete ASCII punctuation\n"
    "      --collapse-space    collapse runs of spaces\n"
    "      --normalize         all three of the above\n"
    "      --html              ignore markup, comments, scripts and styles;\n"
    "                          decode entities\n"
    "      --key HEX           SipHash key: 32 hex digits (default: the library's)\n"
    "Similarity:\n"
    "      --threshold T       Jaccard similarity threshold (default: 0.8)\n"
    "      --num-perm K        MinHash values per signature (default: 128)\n"
    "      --bands B           LSH bands; --rows R rows per band\n"
    "                          (default: planned for recall 0.99 at T)\n"
    "      --seed N            MinHash family seed (default: 1)\n"
    "      --verify MODE       exact: confirm candidates with the exact Jaccard of\n"
    "                          their shingle sets (default); signature: with the\n"
    "                          MinHash estimate (less memory, approximate)\n"
    "      --max-bucket N      leave out (and count) a band bucket of more than N\n"
    "                          distinct documents (default: 0, no cap)\n"
    "      --memory SIZE       memory for the engine's growing data (e.g. 512M,\n"
    "                          4G) before it goes to temporary files; 0 (default):\n"
    "                          no limit\n"
    "      --tmpdir DIR        where those files go (default: $TMPDIR, else /tmp)\n"
    "Decisions:\n"
    "      --keep POLICY       first (default): keep the first document of each\n"
    "                          cluster in input order; longest: the longest\n"
    "      --group MODE        components (default): one kept document per\n"
    "                          connected component; strict: drop a document only\n"
    "                          for a kept near-duplicate at or above T\n"
    "Output:\n"
    "      --output WHAT       clusters (default), pairs, decisions (one record\n"
    "                          per document: kept or dropped, and for whom),\n"
    "                          kept (the deduplicated corpus: the kept JSON Lines\n"
    "                          records as read, or the kept paths, in input\n"
    "                          order) or dropped (the others)\n"
    "      --format FMT        text (default), tsv or jsonl\n"
    "Run:\n"
    "      --threads N         worker threads (default: the number of CPUs)\n"
    "      --progress          show progress even if stderr is not a terminal\n"
    "  -q, --quiet             no progress line and no summary\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 if all went well, 1 if some input failed, 2 for usage errors.\n";

/* With --output kept or dropped: every document read, in input order, with
 * its engine number and where its record (JSON Lines) or path is in the
 * spool, a temporary file. */
typedef struct entry {
    uint64_t doc, off, len;
} entry;

typedef struct dedup {
    const cli_opts *o;
    name_table names;
    minlsh_dedup *engine;
    uint32_t k;
    int keep_records;
    minlsh__tmpfile spool;
    entry *entries;
    size_t n_entries, cap_entries;
} dedup;

/* The engine failed: an I/O error can only be its temporary files. */
CLI_NORETURN static void dedup_die(const cli_opts *o, int rc) {
    if (rc == MINLSH_E_IO) {
        const char *dir = o->tmpdir != NULL ? o->tmpdir : getenv("TMPDIR");
        cli_msg("dedup: cannot write temporary files in %s (disk full, or not writable?); "
                "--tmpdir chooses another directory, --memory 0 keeps everything in memory",
                dir != NULL && dir[0] ? dir : "/tmp");
        exit(1);
    }
    cli_die_lib("dedup", rc);
}

static void report_duplicate_name(const doc_view *d) {
    if (d->name.json)
        cli_input_error(d->where, d->line, "duplicate id %.*s, skipped",
                        (int)(d->name.n > 200 ? 200 : d->name.n), d->name.s);
    else
        cli_input_error(d->where, 0, "listed more than once, skipped");
}

/* Remember where the document goes in the output, its record spooled. */
static void remember(dedup *D, const doc_view *d, uint64_t doc) {
    entry *e;
    void *v = D->entries;
    const char *bytes = d->record != NULL ? d->record : d->name.s;
    size_t n = d->record != NULL ? d->record_n : d->name.n;
    xgrow(&v, &D->cap_entries, D->n_entries + 1, sizeof *D->entries);
    D->entries = v;
    e = &D->entries[D->n_entries++];
    e->doc = doc;
    e->len = n;
    if (minlsh__tmpfile_append(&D->spool, bytes, n, &e->off) != 0) dedup_die(D->o, MINLSH_E_IO);
}

/* Number the document (its name must be new); every document is signed. */
static int dedup_select(void *ctx, const doc_view *d) {
    dedup *D = ctx;
    if (!names_add(&D->names, d->name.s, d->name.n, d->name.json, NULL)) {
        report_duplicate_name(d);
        return 0;
    }
    if (D->keep_records) remember(D, d, D->names.n - 1);
    return 1;
}

/* Hand the document to the engine, in input order: its number is its place
 * in the name table. */
static int dedup_on_doc(void *ctx, const doc_view *d) {
    dedup *D = ctx;
    int rc = minlsh_dedup_add_set(D->engine, d->set, d->set_n, d->sig, D->k, d->fp, d->bytes);
    if (rc != 0) dedup_die(D->o, rc);
    return 0;
}

/* ---- output ----------------------------------------------------------------- */

static size_t print_pairs(const dedup *D) {
    const cli_opts *o = D->o;
    int with_est = o->verify == VERIFY_EXACT;
    minlsh_pairs *p = NULL;
    size_t i, n;
    int rc;
    if ((rc = minlsh_pairs_from_dedup(&p, D->engine, 0, NULL)) != 0) cli_die_lib("pairs", rc);
    n = minlsh_pairs_count(p);
    out_pairs_header(stdout, o->format, with_est);
    for (i = 0; i < n; i++) {
        uint64_t a, b;
        double sim, est = 0;
        minlsh_pairs_copy_pair(&a, &b, &sim, p, i);
        if (with_est) minlsh_dedup_estimate(&est, D->engine, a, b);
        out_pair(stdout, o->format, names_get(&D->names, (size_t)a),
                 names_get(&D->names, (size_t)b), sim, est, with_est);
    }
    minlsh_pairs_free(p);
    return n;
}

/* The clusters (groups of two or more), numbered from 1 in the order of
 * their smallest member; with number[doc] filled in if number is not NULL
 * (0: in no cluster). Prints them when print is set. */
static size_t walk_clusters(const dedup *D, uint64_t *number, int print) {
    minlsh_clusters *cl = NULL;
    uint64_t *ids = NULL;
    cli_name *names = NULL;
    size_t c, i, count, cap = 0, got;
    int rc;
    if ((rc = minlsh_clusters_from_dedup(&cl, D->engine, NULL)) != 0)
        cli_die_lib("clusters", rc);
    count = minlsh_clusters_count(cl);
    if (print) out_clusters_header(stdout, D->o->format);
    for (c = 0; c < count; c++) {
        rc = minlsh_clusters_copy_members(cl, c, ids, cap, &got);
        if (rc == MINLSH_E_BUFSIZE) {
            void *v = ids;
            xgrow(&v, &cap, got, sizeof *ids);
            ids = v;
            names = xreallocarray(names, cap, sizeof *names);
            rc = minlsh_clusters_copy_members(cl, c, ids, cap, &got);
        }
        if (rc != 0) cli_die_lib("clusters", rc);
        for (i = 0; i < got; i++) {
            if (number != NULL) number[ids[i]] = c + 1;
            names[i] = names_get(&D->names, (size_t)ids[i]);
        }
        if (print) out_cluster(stdout, D->o->format, c + 1, names, got);
    }
    free(ids);
    free(names);
    minlsh_clusters_free(cl);
    return count;
}

static void print_decisions(const dedup *D) {
    size_t n = D->names.n, i, got;
    uint64_t *number = xcalloc(n ? n : 1, sizeof *number);
    minlsh_dedup_decision dec[256];
    int rc;
    walk_clusters(D, number, 0);
    out_decisions_header(stdout, D->o->format);
    for (i = 0; i < n; i += got) {
        size_t j;
        if ((rc = minlsh_dedup_copy_decisions(D->engine, i, dec, 256, &got)) != 0)
            cli_die_lib("decisions", rc);
        for (j = 0; j < got; j++)
            out_decision(stdout, D->o->format, names_get(&D->names, i + j), number[i + j],
                         (int)dec[j].kept, names_get(&D->names, (size_t)dec[j].representative),
                         dec[j].similarity, (int)dec[j].exact);
    }
    free(number);
}

/* The kept (or the dropped) documents, in input order: JSON Lines records
 * as read, or file paths. Returns how many. */
static size_t print_corpus(const dedup *D, int kept) {
    minlsh_dedup_decision dec;
    cli_buf b = {0};
    size_t i, n = 0, got;
    int rc;
    for (i = 0; i < D->n_entries; i++) {
        const entry *e = &D->entries[i];
        int is_kept;
        if ((rc = minlsh_dedup_copy_decisions(D->engine, e->doc, &dec, 1, &got)) != 0)
            cli_die_lib("decisions", rc);
        is_kept = (int)dec.kept;
        if (is_kept != kept) continue;
        buf_clear(&b);
        buf_reserve(&b, (size_t)e->len + 1);
        if (minlsh__tmpfile_read(&D->spool, e->off, b.p, (size_t)e->len) != 0)
            dedup_die(D->o, MINLSH_E_IO);
        if (D->o->jsonl) {
            fwrite(b.p, 1, (size_t)e->len, stdout);
            fputc('\n', stdout);
        } else {
            cli_name nm;
            cli_buf line = {0};
            nm.s = b.p;
            nm.n = (size_t)e->len;
            nm.json = 0;
            out_name_text(&line, nm);
            buf_addc(&line, '\n');
            fwrite(line.p, 1, line.n, stdout);
            buf_free(&line);
        }
        n++;
    }
    buf_free(&b);
    return n;
}

/* ---- the command -------------------------------------------------------- */

typedef struct run_info {
    uint32_t k, bands, rows;
    const char *plan;
    pipeline_stats st;
    double start;
} run_info;

static void summary(const dedup *D, const run_info *ri, const minlsh_dedup_stats *s,
                    size_t n_out, const char *what) {
    double secs = cli_now() - ri->start, mb = (double)ri->st.bytes / 1e6;
    cli_msg("%zu document%s, %.1f MB in %.2f s (%.1f MB/s); k=%u, b=%u, r=%u (%s), "
            "threshold %g, verify %s",
            D->names.n, cli_plural(D->names.n), mb, secs, secs > 0 ? mb / secs : 0.0,
            (unsigned)ri->k, (unsigned)ri->bands, (unsigned)ri->rows, ri->plan,
            D->o->threshold, D->o->verify == VERIFY_EXACT ? "exact" : "signature");
    cli_msg("%llu exact-duplicate group%s; %llu candidate pair%s, %llu verified; %zu %s%s",
            (unsigned long long)s->exact_groups, cli_plural(s->exact_groups),
            (unsigned long long)s->candidates, cli_plural(s->candidates),
            (unsigned long long)s->verified, n_out, what, cli_plural(n_out));
    {
        struct rusage ru;
        double peak = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0.0;
        cli_msg("%llu kept, %llu dropped; peak memory %.1f MiB (engine %.1f MiB), temporary "
                "files %.1f MiB",
                (unsigned long long)s->kept, (unsigned long long)s->dropped, peak,
                (double)s->bytes / 1048576.0, (double)s->temp_bytes / 1048576.0);
    }
}

int cmd_dedup(cli_opts *o) {
    minlsh_dedup_options eo = MINLSH_DEDUP_OPTIONS_INIT;
    minlsh_dedup_stats st;
    minlsh_shingler *sh;
    minlsh_family *family;
    pipeline_cfg cfg;
    dedup D;
    run_info ri;
    size_t n_out = 0;
    const char *what = "cluster";
    int rc;
    memset(&D, 0, sizeof D);
    D.o = o;
    D.k = ri.k = o->num_perm;
    ri.start = cli_now();
    if ((rc = opts_plan(o, "dedup", o->verify == VERIFY_EXACT, &ri.bands, &ri.rows,
                        &ri.plan)) != 0)
        return rc;
    sh = cli_shingler_new(o->unit, o->shingle_k, o->flags, o->key, NULL);
    family = cli_family_new(o->num_perm, o->seed);
    eo.keep = o->keep;
    eo.group = o->group;
    eo.verify = o->verify == VERIFY_EXACT ? MINLSH_VERIFY_EXACT : MINLSH_VERIFY_SIGNATURE;
    eo.threshold = o->threshold;
    eo.bands = ri.bands;
    eo.rows = ri.rows;
    eo.threads = o->threads;
    eo.max_bucket = o->max_bucket;
    eo.memory = o->memory;
    eo.tmpdir = o->tmpdir;
    if ((rc = minlsh_dedup_new(&D.engine, sh, family, &eo, NULL)) != 0)
        dedup_die(o, rc);
    memset(&cfg, 0, sizeof cfg);
    cfg.o = o;
    cfg.shingler = sh;
    cfg.family = family;
    cfg.pool = cli_pool_new(o->threads);
    cfg.select = dedup_select;
    cfg.on_doc = dedup_on_doc;
    cfg.offer_empty = 1; /* the engine keeps them, each on its own */
    minlsh__tmpfile_init(&D.spool);
    D.keep_records = o->output == OUTPUT_KEPT || o->output == OUTPUT_DROPPED;
    if (D.keep_records && minlsh__tmpfile_open(&D.spool, o->tmpdir) != 0) dedup_die(o, MINLSH_E_IO);
    cfg.ctx = &D;
    pipeline_run_paths(&cfg, o->args, o->n_args, "dedup:", &ri.st);
    minlsh__pool_free(cfg.pool); /* the engine has threads of its own */
    if ((rc = minlsh_dedup_run(D.engine)) != 0) dedup_die(o, rc);
    minlsh_dedup_copy_stats(&st, D.engine);
    if (st.capped_buckets > 0)
        cli_msg("warning: %llu band bucket%s over --max-bucket %llu left out: pairs in them "
                "may be missed",
                (unsigned long long)st.capped_buckets, cli_plural(st.capped_buckets),
                (unsigned long long)o->max_bucket);
    if (o->output == OUTPUT_PAIRS) {
        n_out = print_pairs(&D);
        what = "pair";
    } else if (D.keep_records) {
        n_out = print_corpus(&D, o->output == OUTPUT_KEPT);
        what = o->output == OUTPUT_KEPT ? "kept document" : "dropped document";
    } else if (o->output == OUTPUT_DECISIONS) {
        print_decisions(&D);
        n_out = (size_t)st.documents;
        what = "decision";
    } else {
        n_out = walk_clusters(&D, NULL, 1);
    }
    if (!o->quiet) {
        fflush(stdout);
        summary(&D, &ri, &st, n_out, what);
    }
    minlsh_dedup_free(D.engine);
    minlsh__tmpfile_close(&D.spool);
    free(D.entries);
    names_free(&D.names);
    minlsh_family_free(family);
    minlsh_shingler_free(sh);
    return cli_finish_stdout(cli_input_failures() ? CLI_FAILED : CLI_OK);
}
