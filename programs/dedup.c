/*
 * dedup.c: minlsh dedup, input and output around the library's dedup
 * engine (lib/dedup, docs/dedup.md), which owns the policy: repeated ids,
 * exact copies, banding, verification, clusters and keep/drop decisions.
 * Here: read, shingle and sign every document on the pool (pipeline.c),
 * hand each batch to the engine at once on the same pool (it numbers the
 * documents and keeps their ids), run the engine, and print its pairs,
 * clusters or decisions. Documents are numbered in input order and every
 * output is sorted by those numbers, so the output is the same for any
 * number of threads.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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
    "      --nfkc              Unicode NFKC (ligatures, full-width forms, accents)\n"
    "      --casefold          full Unicode case folding (implies --lowercase)\n"
    "      --unicode-punct     delete Unicode punctuation and symbols (P*, S*;\n"
    "                          implies --strip-punct)\n"
    "      --unicode-space     Unicode White_Space is space (implies\n"
    "                          --collapse-space)\n"
    "      --fold-digits       decimal digits of every script to 0-9\n"
    "      --cjk-words         each Han, kana, Thai, Lao, Khmer, Myanmar character\n"
    "                          is a word (the default)\n"
    "      --no-cjk-words      not: text without spaces is one word (the default\n"
    "                          of minlsh 0.1, and its config id)\n"
    "      --normalize         all of the above (Unicode 15.0.0)\n"
    "      --html              ignore markup, comments, scripts and styles;\n"
    "                          decode entities\n"
    "      --key HEX           SipHash key: 32 hex digits (default: the library's)\n"
    "Similarity:\n"
    "      --preset NAME       the shingling, normalisation, --num-perm, banding\n"
    "                          and threshold of a published pipeline (fineweb,\n"
    "                          refinedweb, lee2022, ...: minlsh params\n"
    "                          --list-presets); options given override its fields\n"
    "      --threshold T       Jaccard similarity threshold in (0, 1] (default: 0.8)\n"
    "      --num-perm K        MinHash values per signature (default: 128)\n"
    "      --bands B           LSH bands; --rows R rows per band\n"
    "                          (default: planned for recall 0.999 at T)\n"
    "      --seed N            MinHash family seed (default: 1)\n"
    "      --scheme S          classic (k hash functions per shingle, the\n"
    "                          default) or oph (one-permutation hashing: one per\n"
    "                          shingle, several times faster to sign; a little\n"
    "                          less accurate on documents of fewer than k\n"
    "                          shingles, and slower below about k/4)\n"
    "      --verify MODE       exact: confirm candidates with the exact Jaccard of\n"
    "                          their shingle sets (default); signature: with the\n"
    "                          MinHash estimate (less memory, approximate)\n"
    "      --max-bucket N      leave out (and count) a band bucket of more than N\n"
    "                          distinct documents (default: 0, no cap)\n"
    "      --memory SIZE       memory for the engine's growing data (e.g. 512M,\n"
    "                          4G) before it goes to temporary files (default:\n"
    "                          half the physical memory, also 0; none: no\n"
    "                          limit)\n"
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
    "      --stats             also say where the time went: each stage's wall and\n"
    "                          CPU time, and the calling thread's serial time\n"
    "  -q, --quiet             no progress line and no summary\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 if all went well, 1 if some input failed, 2 for usage errors.\n";

/* With --output kept or dropped: every document's record (JSON Lines) or
 * path is copied to the spool, a temporary file, in input order, one
 * append a batch; off[i] is where document i's starts (and off[i + 1]
 * where it ends). 8 bytes a document. */
typedef struct dedup {
    const cli_opts *o;
    uint64_t memory; /* the engine's budget (0: none) */
    minlsh_dedup *engine;
    minlsh_pool *pool;
    uint32_t k;
    int keep_records;
    minlsh_scratch *spool;
    uint64_t *off;
    size_t n_off, cap_off;
    /* the batch being handed over: per good document */
    minlsh_dedup_doc *docs;
    const char **rec;  /* its record (or path), for the spool */
    uint64_t *rec_n;
    const minlsh_scratch **rec_file; /* or a long line's record, in this file */
    uint64_t *rec_at;                /* at this offset */
    int32_t *status;
    size_t cap_batch;
    cli_buf spool_buf; /* a batch's records, appended at once */
    size_t *spool_at;  /* per document of the batch: where in spool_buf */
} dedup;

/* A temporary file failed; err is the errno its call left (0: unknown,
 * when the failure was on a worker of the command's own pool). */
CLI_NORETURN static void dedup_die_tmp(const cli_opts *o, int err) {
    const char *dir = o->tmpdir != NULL ? o->tmpdir : getenv("TMPDIR");
    cli_msg("%s: cannot write temporary files: %s; --tmpdir chooses another directory, "
            "--memory none keeps everything in memory",
            dir != NULL && dir[0] ? dir : "/tmp",
            err != 0 ? cli_dir_write_error(err) : "a read or write failed");
    exit(CLI_FAILED);
}

/* The engine failed: an I/O error can only be its temporary files, and
 * errno then says why. */
CLI_NORETURN static void dedup_die(const cli_opts *o, int rc) {
    int err = errno;
    if (rc == MINLSH_E_IO) dedup_die_tmp(o, err);
    cli_die_lib("dedup", rc);
}

static void report_duplicate_name(const doc_view *d) {
    if (d->name.json)
        cli_input_error(d->where, d->line, "duplicate id %.*s, skipped",
                        (int)(d->name.n > 200 ? 200 : d->name.n), d->name.s);
    else
        cli_input_error(d->where, 0, "listed more than once, skipped");
}

/* Room for a batch of n good documents, before they are described. */
static void dedup_reserve(void *ctx, size_t n) {
    dedup *D = ctx;
    size_t cap = D->cap_batch;
    void *v;
    if (n <= cap) return;
    v = D->docs;
    xgrow(&v, &cap, n, sizeof *D->docs);
    D->docs = v;
    D->rec = xreallocarray(D->rec, cap, sizeof *D->rec);
    D->rec_n = xreallocarray(D->rec_n, cap, sizeof *D->rec_n);
    D->rec_file = xreallocarray(D->rec_file, cap, sizeof *D->rec_file);
    D->rec_at = xreallocarray(D->rec_at, cap, sizeof *D->rec_at);
    D->status = xreallocarray(D->status, cap, sizeof *D->status);
    D->spool_at = xreallocarray(D->spool_at, cap, sizeof *D->spool_at);
    D->cap_batch = cap;
}

/* On a worker: the engine's view of a good document. */
static void dedup_describe(void *ctx, uint32_t worker, size_t slot, const doc_view *d) {
    dedup *D = ctx;
    minlsh_dedup_doc *x = &D->docs[slot];
    (void)worker;
    x->hashes = d->set;
    x->n = d->set_n;
    x->sig = d->sig;
    x->k_sig = D->k;
    x->fp = d->fp;
    x->length = d->length;
    x->id = d->name.s;
    x->id_n = d->name.n;
    x->id_kind = d->name.json ? MINLSH_DEDUP_ID_JSON : MINLSH_DEDUP_ID_BYTES;
    D->rec[slot] = d->record != NULL ? d->record : d->name.s;
    D->rec_n[slot] = d->record != NULL || d->record_file != NULL ? d->record_n : d->name.n;
    D->rec_file[slot] = d->record_file;
    D->rec_at[slot] = d->record_at;
}

static int spool_range(void *ctx, uint32_t worker, size_t begin, size_t end) {
    dedup *D = ctx;
    size_t i;
    (void)worker;
    for (i = begin; i < end; i++)
        if (D->status[i] == 0) memcpy(D->spool_buf.p + D->spool_at[i], D->rec[i], (size_t)D->rec_n[i]);
    return 0;
}

/* The records (or paths) of the batch's documents the engine took go to
 * the spool in one append: their places are a prefix sum, the copies are
 * the pool's. */
static void spool_batch(dedup *D, size_t n) {
    uint64_t at = minlsh_scratch_size(D->spool), first;
    size_t i, bytes = 0;
    void *v = D->off;
    int rc;
    xgrow(&v, &D->cap_off, D->n_off + n + 1, sizeof *D->off);
    D->off = v;
    for (i = 0; i < n; i++)
        if (D->status[i] == 0 && D->rec_file[i] != NULL) break;
    if (i < n) { /* a long line's record: every record copied in turn */
        for (i = 0; i < n; i++) {
            if (D->status[i] != 0) continue;
            if (D->rec_file[i] != NULL) {
                doc_view d;
                memset(&d, 0, sizeof d);
                d.record_file = D->rec_file[i];
                d.record_at = D->rec_at[i];
                d.record_n = D->rec_n[i];
                rc = doc_record_copy(D->spool, &d, &first);
            } else {
                rc = minlsh_scratch_append(&first, D->spool, D->rec[i], (size_t)D->rec_n[i]);
            }
            if (rc != 0) dedup_die_tmp(D->o, minlsh_scratch_errno(D->spool));
            D->off[D->n_off++] = first;
            D->off[D->n_off] = first + D->rec_n[i];
        }
        return;
    }
    for (i = 0; i < n; i++) {
        if (D->status[i] != 0) continue;
        D->spool_at[i] = bytes;
        D->off[D->n_off++] = at + bytes;
        bytes += (size_t)D->rec_n[i];
    }
    D->off[D->n_off] = at + bytes;
    buf_clear(&D->spool_buf);
    buf_reserve(&D->spool_buf, bytes + 1);
    if ((rc = minlsh_pool_run(D->pool, n, 64, spool_range, D)) != 0) dedup_die(D->o, rc);
    if (minlsh_scratch_append(&first, D->spool, D->spool_buf.p, bytes) != 0)
        dedup_die_tmp(D->o, minlsh_scratch_errno(D->spool));
    (void)first;
}

/* The batch to the engine, which numbers the documents in input order and
 * skips repeated ids (reported by dedup_report, in order). */
static int dedup_on_batch(void *ctx, size_t n, const int32_t **status) {
    dedup *D = ctx;
    int rc = minlsh_dedup_add_docs(D->engine, D->docs, n, D->status);
    if (rc != 0) dedup_die(D->o, rc);
    if (D->keep_records) spool_batch(D, n);
    *status = D->status;
    return 0;
}

static void dedup_report(void *ctx, const doc_view *d, int32_t status) {
    (void)ctx;
    if (status == MINLSH_DEDUP_REPEATED_ID) report_duplicate_name(d);
}

/* Document doc's name, copied into b. */
static cli_name doc_name(const dedup *D, uint64_t doc, cli_buf *b) {
    cli_name nm;
    size_t n = 0;
    uint32_t kind = 0;
    int rc = minlsh_dedup_copy_id(D->engine, doc, b->p, b->cap, &n, &kind);
    if (rc == MINLSH_E_BUFSIZE) {
        buf_reserve(b, n);
        rc = minlsh_dedup_copy_id(D->engine, doc, b->p, b->cap, &n, &kind);
    }
    if (rc != 0) cli_die_lib("dedup", rc);
    nm.s = b->p;
    nm.n = n;
    nm.json = kind == MINLSH_DEDUP_ID_JSON;
    return nm;
}

/* ---- output ----------------------------------------------------------------- */

static size_t print_pairs(const dedup *D) {
    const cli_opts *o = D->o;
    int with_est = o->verify == VERIFY_EXACT;
    minlsh_pairs *p = NULL;
    cli_buf na = {0}, nb = {0};
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
        out_pair(stdout, o->format, doc_name(D, a, &na), doc_name(D, b, &nb), sim, est,
                 with_est);
    }
    buf_free(&na);
    buf_free(&nb);
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
    cli_buf one = {0}, all = {0};
    size_t *at = NULL;
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
            at = xreallocarray(at, cap, sizeof *at);
            rc = minlsh_clusters_copy_members(cl, c, ids, cap, &got);
        }
        if (rc != 0) cli_die_lib("clusters", rc);
        /* The names one after the other in one buffer (it may move while
         * they are added), then pointed at. */
        buf_clear(&all);
        for (i = 0; i < got; i++) {
            if (number != NULL) number[ids[i]] = c + 1;
            if (!print) continue;
            names[i] = doc_name(D, ids[i], &one);
            at[i] = all.n;
            buf_add(&all, names[i].s, names[i].n);
        }
        for (i = 0; print && i < got; i++) names[i].s = all.p + at[i];
        if (print) out_cluster(stdout, D->o->format, c + 1, names, got);
    }
    buf_free(&one);
    buf_free(&all);
    free(at);
    free(ids);
    free(names);
    minlsh_clusters_free(cl);
    return count;
}

/* ---- every document's output, formatted on the pool, written in order ---- */

#define WRITE_CHUNK 4096 /* documents a worker formats at a time */
#define RECORD_HOLD_MAX (64u << 10) /* a longer record goes from the spool to the
                                       output in pieces, never held whole */

/* Bytes of the spool that go to the output at text byte `at` of a chunk. */
typedef struct spool_copy {
    size_t at;
    uint64_t off, len;
} spool_copy;

/* What a chunk of documents gives: its text, and spool bytes to put in it. */
typedef struct chunk_out {
    cli_buf text;
    spool_copy *copies;
    size_t n_copies, cap_copies;
} chunk_out;

/* Appends what document doc gives (if anything) to out: 1 if it gave a
 * record, 0 if not, or a negative error. Called from several threads at
 * once, with the worker number for per-worker scratch and a buffer of the
 * worker's for a second name. */
typedef int (*doc_writer)(void *ctx, uint32_t worker, chunk_out *out, uint64_t doc,
                          cli_name name, const minlsh_dedup_decision *x, cli_buf *scratch);

typedef struct ordered_write {
    const dedup *D;
    doc_writer fn;
    void *ctx;
    int want_names;              /* fn looks at the names */
    cli_buf *names;              /* two per worker */
    uint64_t first;              /* the round's first document */
    chunk_out *out;              /* per chunk of the round */
    size_t *count;               /* per chunk: records */
    minlsh_dedup_decision *dec;  /* WRITE_CHUNK per worker */
} ordered_write;

static int write_range(void *ctx, uint32_t worker, size_t begin, size_t end) {
    ordered_write *w = ctx;
    minlsh_dedup_decision *dec = w->dec + (size_t)worker * WRITE_CHUNK;
    size_t t, j, got;
    int rc;
    for (t = begin; t < end; t++) {
        uint64_t at = w->first + (uint64_t)t * WRITE_CHUNK;
        /* Formatted into copies on this stack: the buffers of neighbouring
         * chunks share cache lines, and other workers fill those. */
        chunk_out out = w->out[t];
        size_t count = 0;
        if ((rc = minlsh_dedup_copy_decisions(w->D->engine, at, dec, WRITE_CHUNK, &got)) != 0)
            return rc;
        buf_clear(&out.text);
        out.n_copies = 0;
        for (j = 0; j < got && rc >= 0; j++) {
            cli_name name = {NULL, 0, 0};
            if (w->want_names) name = doc_name(w->D, at + j, &w->names[2 * (size_t)worker]);
            if ((rc = w->fn(w->ctx, worker, &out, at + j, name, &dec[j],
                            &w->names[2 * (size_t)worker + 1])) >= 0)
                count += (size_t)rc;
        }
        w->out[t] = out;
        w->count[t] = count;
        if (rc < 0) return rc;
    }
    return 0;
}

/* A chunk's output to standard output, the spool's bytes in their places. */
static void write_chunk(const dedup *D, const chunk_out *c, unsigned char *piece, size_t cap) {
    size_t i, from = 0;
    for (i = 0; i < c->n_copies; i++) {
        const spool_copy *k = &c->copies[i];
        uint64_t done = 0;
        if (k->at > from) fwrite(c->text.p + from, 1, k->at - from, stdout);
        from = k->at;
        while (done < k->len) {
            size_t n = k->len - done < cap ? (size_t)(k->len - done) : cap;
            if (minlsh_scratch_read(D->spool, k->off + done, piece, n) != 0)
                dedup_die_tmp(D->o, minlsh_scratch_errno(D->spool));
            fwrite(piece, 1, n, stdout);
            done += n;
        }
    }
    if (c->text.n > from) fwrite(c->text.p + from, 1, c->text.n - from, stdout);
}

/* fn's output for every document to standard output, in document order,
 * whatever the number of threads: the workers format rounds of chunks
 * into buffers of their own, the calling thread writes a round while the
 * pool formats the next. Returns the number of records. */
static size_t write_in_order(const dedup *D, minlsh_pool *pool, doc_writer fn, void *ctx,
                             int want_names) {
    uint64_t n = minlsh_dedup_count(D->engine);
    size_t workers = minlsh_pool_threads(pool), round = 4 * workers, chunks[2] = {0, 0}, i;
    size_t total = 0, cur = 0;
    cli_buf *names = xcalloc(2 * workers, sizeof *names);
    unsigned char *piece = xmalloc(RECORD_HOLD_MAX);
    ordered_write w[2];
    int rc = 0, h;
    for (h = 0; h < 2; h++) {
        w[h].D = D;
        w[h].fn = fn;
        w[h].ctx = ctx;
        w[h].want_names = want_names;
        w[h].names = names; /* the rounds take turns */
        w[h].out = xcalloc(round, sizeof *w[h].out);
        w[h].count = xcalloc(round, sizeof *w[h].count);
        w[h].dec = xcalloc(workers * WRITE_CHUNK, sizeof *w[h].dec);
    }
    /* Round r is formatted into w[r % 2] while round r - 1 is written. */
    for (w[0].first = 0;; cur ^= 1) {
        ordered_write *now = &w[cur], *prev = &w[cur ^ 1];
        uint64_t left = n - now->first;
        chunks[cur] = (size_t)((left + WRITE_CHUNK - 1) / WRITE_CHUNK);
        if (chunks[cur] > round) chunks[cur] = round;
        if (chunks[cur] > 0 && (rc = minlsh_pool_start(pool, chunks[cur], 1, write_range, now)) != 0)
            dedup_die(D->o, rc);
        for (i = 0; i < chunks[cur ^ 1]; i++) {
            write_chunk(D, &prev->out[i], piece, RECORD_HOLD_MAX);
            total += prev->count[i];
        }
        chunks[cur ^ 1] = 0;
        if (chunks[cur] == 0) break;
        if ((rc = minlsh_pool_wait(pool)) != 0) {
            /* On a worker: errno stayed there; the spool keeps its own. */
            if (rc == MINLSH_E_IO) dedup_die_tmp(D->o, minlsh_scratch_errno(D->spool));
            dedup_die(D->o, rc);
        }
        prev->first = now->first + (uint64_t)chunks[cur] * WRITE_CHUNK;
    }
    for (h = 0; h < 2; h++) {
        for (i = 0; i < round; i++) {
            buf_free(&w[h].out[i].text);
            free(w[h].out[i].copies);
        }
        free(w[h].out);
        free(w[h].count);
        free(w[h].dec);
    }
    for (i = 0; i < 2 * workers; i++) buf_free(&names[i]);
    free(names);
    free(piece);
    return total;
}

static int write_decision(void *ctx, uint32_t worker, chunk_out *out, uint64_t doc,
                          cli_name name, const minlsh_dedup_decision *x, cli_buf *scratch) {
    const dedup *D = ctx;
    cli_name rep = x->representative == doc ? name : doc_name(D, x->representative, scratch);
    (void)worker;
    out_decision(&out->text, D->o->format, name, x->cluster, (int)x->kept, rep, x->similarity,
                 (int)x->exact);
    return 1;
}

static void print_decisions(const dedup *D, minlsh_pool *pool) {
    out_decisions_header(stdout, D->o->format);
    write_in_order(D, pool, write_decision, (void *)D, 1);
}

/* The kept (or the dropped) documents, in input order: JSON Lines records
 * as read, or file paths. */
typedef struct corpus_printer {
    const dedup *D;
    int kept;
    cli_buf *path; /* per worker: a path read back */
} corpus_printer;

static int write_record(void *ctx, uint32_t worker, chunk_out *co, uint64_t doc,
                        cli_name name, const minlsh_dedup_decision *x, cli_buf *scratch) {
    corpus_printer *p = ctx;
    const dedup *D = p->D;
    size_t len = (size_t)(D->off[doc + 1] - D->off[doc]);
    cli_buf *out = &co->text, *b = D->o->jsonl ? out : &p->path[worker];
    (void)name;
    (void)scratch;
    if ((int)x->kept != p->kept) return 0;
    if (b == out && len > RECORD_HOLD_MAX) {
        /* Written from the spool by the calling thread, in its place. */
        void *v = co->copies;
        xgrow(&v, &co->cap_copies, co->n_copies + 1, sizeof *co->copies);
        co->copies = v;
        co->copies[co->n_copies].at = out->n;
        co->copies[co->n_copies].off = D->off[doc];
        co->copies[co->n_copies++].len = len;
        buf_addc(out, '\n');
        return 1;
    }
    if (b != out) buf_clear(b);
    buf_reserve(b, len + 1);
    if (minlsh_scratch_read(D->spool, D->off[doc], b->p + b->n, len) != 0) return MINLSH_E_IO;
    b->n += len;
    if (b != out) {
        cli_name nm;
        nm.s = b->p;
        nm.n = len;
        nm.json = 0;
        out_name_text(out, nm);
    }
    buf_addc(out, '\n');
    return 1;
}

/* Returns how many were printed. */
static size_t print_corpus(const dedup *D, minlsh_pool *pool, int kept) {
    size_t workers = minlsh_pool_threads(pool), i, n;
    corpus_printer p;
    p.D = D;
    p.kept = kept;
    p.path = xcalloc(workers, sizeof *p.path);
    n = write_in_order(D, pool, write_record, &p, 0);
    for (i = 0; i < workers; i++) buf_free(&p.path[i]);
    free(p.path);
    return n;
}

/* ---- the command -------------------------------------------------------- */

typedef struct run_info {
    uint32_t k, bands, rows;
    const char *plan;
    uint64_t memory; /* the engine's budget */
    pipeline_stats st;
    double start;
} run_info;

/* The most memory the process has had resident so far, every part of it
 * (the engine's, the pipeline's, the name table, the allocator's spare). */
static double peak_rss_mib(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0.0;
#if defined(__APPLE__)
    return (double)ru.ru_maxrss / 1048576.0; /* bytes there */
#else
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux and the BSDs */
#endif
}

static void summary(const dedup *D, const run_info *ri, const minlsh_dedup_stats *s,
                    size_t n_out, const char *what) {
    double secs = cli_now() - ri->start, mb = (double)ri->st.bytes / 1e6;
    cli_msg("%zu document%s, %.1f MB in %.2f s (%.1f MB/s); k=%u, b=%u, r=%u (%s), "
            "threshold %g, verify %s",
            (size_t)minlsh_dedup_count(D->engine), cli_plural(minlsh_dedup_count(D->engine)), mb, secs, secs > 0 ? mb / secs : 0.0,
            (unsigned)ri->k, (unsigned)ri->bands, (unsigned)ri->rows, ri->plan,
            D->o->threshold, D->o->verify == VERIFY_EXACT ? "exact" : "signature");
    cli_msg("%llu exact-duplicate group%s; %llu candidate pair%s, %llu verified; %zu %s%s",
            (unsigned long long)s->exact_groups, cli_plural(s->exact_groups),
            (unsigned long long)s->candidates, cli_plural(s->candidates),
            (unsigned long long)s->verified, n_out, what, cli_plural(n_out));
    {
        char budget[32];
        if (ri->memory == 0) snprintf(budget, sizeof budget, "no limit");
        else cli_format_bytes(budget, ri->memory);
        cli_msg("%llu kept, %llu dropped; peak RSS %.1f MiB; engine %.1f MiB at the end "
                "(budget %s); temporary files %.1f MiB at most",
                (unsigned long long)s->kept, (unsigned long long)s->dropped, peak_rss_mib(),
                (double)s->bytes / 1048576.0, budget, (double)s->temp_bytes / 1048576.0);
    }
}

/* CPU seconds of the whole process so far (every thread), user and system. */
static void process_cpu(double *user, double *sys) {
    struct rusage ru;
    *user = *sys = 0;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return;
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* The points between the run's stages: wall seconds and process CPU. */
typedef struct stage_mark {
    double wall, user, sys;
} stage_mark;

static stage_mark stage_now(void) {
    stage_mark m;
    m.wall = cli_now();
    process_cpu(&m.user, &m.sys);
    return m;
}

static double stage_cpu(const stage_mark *a, const stage_mark *b) {
    return (b->user - a->user) + (b->sys - a->sys);
}

/* --stats: where the time went. The input stage is the pipeline (reading,
 * shingling and signing on the pool, the engine taking each batch on the
 * same pool); its serial time is the calling thread's work while the pool
 * had none (reading the input ahead of the workers, reporting), the part
 * that more threads cannot shorten. */
static void print_stats(const pipeline_stats *p, const stage_mark m[4]) {
    double in_cpu = stage_cpu(&m[0], &m[1]);
    double other = in_cpu - p->shingle_cpu - p->sign_cpu;
    cli_msg("stats: input %.2f s wall, %.2f s CPU: shingle %.2f s wall, %.2f s CPU; sign "
            "%.2f s CPU (pool busy %.2f s); engine intake and the calling thread %.2f s CPU",
            m[1].wall - m[0].wall, in_cpu, p->shingle_wall, p->shingle_cpu, p->sign_cpu,
            p->sign_busy, other > 0 ? other : 0.0);
    cli_msg("stats: calling thread: engine intake (batches, on the pool) %.2f s; serial "
            "(working while the pool waits) %.2f s, %.1f%% of the run",
            p->deliver_wall, p->serial,
            m[3].wall > m[0].wall ? 100.0 * p->serial / (m[3].wall - m[0].wall) : 0.0);
    cli_msg("stats: engine run %.2f s wall, %.2f s CPU; output %.2f s wall, %.2f s CPU; "
            "total %.2f s wall, user %.2f s, system %.2f s",
            m[2].wall - m[1].wall, stage_cpu(&m[1], &m[2]), m[3].wall - m[2].wall,
            stage_cpu(&m[2], &m[3]), m[3].wall - m[0].wall, m[3].user - m[0].user,
            m[3].sys - m[0].sys);
}

/* The banding: --bands and --rows as given (either alone: the other from
 * --num-perm), else the library's plan, whose refusal is a usage error. */
static int dedup_plan(const cli_opts *o, const minlsh_dedup_options *eo, run_info *ri) {
    int rc;
    if (o->given & (OPT(O_BANDS) | OPT(O_ROWS)))
        return opts_plan(o, "dedup", o->verify == VERIFY_EXACT, &ri->bands, &ri->rows,
                         &ri->plan);
    rc = minlsh_dedup_plan(&ri->bands, &ri->rows, eo, o->num_perm);
    if (rc != 0)
        return cli_usage_error("dedup",
                               "no banding of %u hash values reaches recall 0.999 at "
                               "threshold %g; use a larger --num-perm or give --bands and "
                               "--rows",
                               (unsigned)o->num_perm, o->threshold);
    ri->plan = "recall";
    return 0;
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
    stage_mark marks[4];
    int rc;
    memset(&D, 0, sizeof D);
    D.o = o;
    D.k = ri.k = o->num_perm;
    ri.start = cli_now();
    eo.keep = o->keep;
    eo.group = o->group;
    eo.verify = o->verify == VERIFY_EXACT ? MINLSH_VERIFY_EXACT : MINLSH_VERIFY_SIGNATURE;
    eo.threshold = o->threshold;
    if ((rc = dedup_plan(o, &eo, &ri)) != 0) return rc;
    sh = cli_shingler_new(o->unit, o->shingle_k, o->flags, o->key, NULL);
    family = cli_family_new(o->num_perm, o->seed, o->scheme);
    eo.bands = ri.bands;
    eo.rows = ri.rows;
    eo.threads = o->threads;
    eo.all_pairs = o->output == OUTPUT_PAIRS;
    eo.max_bucket = o->max_bucket;
    eo.memory = o->memory;
    ri.memory = D.memory = o->memory == MINLSH_DEDUP_MEMORY_UNLIMITED ? 0
                           : o->memory == 0                         ? minlsh_dedup_default_memory()
                                                                    : o->memory;
    eo.tmpdir = o->tmpdir;
    /* One pool for the pipeline and the engine. */
    D.pool = eo.pool = cli_pool_new(o->threads);
    if ((rc = minlsh_dedup_new(&D.engine, sh, family, &eo, NULL)) != 0)
        dedup_die(o, rc);
    memset(&cfg, 0, sizeof cfg);
    cfg.o = o;
    cfg.shingler = sh;
    cfg.family = family;
    /* Only what the engine reads: with exact verification, its band keys'. */
    D.k = cfg.sign_values = minlsh_dedup_signature_values(D.engine);
    cfg.pool = D.pool;
    cfg.reserve = dedup_reserve;
    cfg.describe = dedup_describe;
    cfg.on_batch = dedup_on_batch;
    cfg.report = dedup_report;
    cfg.offer_empty = 1; /* the engine keeps them, each on its own */
    cfg.canonical_ids = 1;
    D.keep_records = o->output == OUTPUT_KEPT || o->output == OUTPUT_DROPPED;
    cfg.keep_records = D.keep_records;
    if (D.keep_records && (rc = minlsh_scratch_open(&D.spool, o->tmpdir, NULL)) != 0)
        dedup_die(o, rc);
    cfg.ctx = &D;
    marks[0] = stage_now();
    pipeline_run_paths(&cfg, o->args, o->n_args, "dedup:", &ri.st);
    marks[1] = stage_now();
    if ((rc = minlsh_dedup_run(D.engine)) != 0) dedup_die(o, rc);
    marks[2] = stage_now();
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
        n_out = print_corpus(&D, cfg.pool, o->output == OUTPUT_KEPT);
        what = o->output == OUTPUT_KEPT ? "kept document" : "dropped document";
    } else if (o->output == OUTPUT_DECISIONS) {
        print_decisions(&D, cfg.pool);
        n_out = (size_t)st.documents;
        what = "decision";
    } else {
        n_out = walk_clusters(&D, NULL, 1);
    }
    marks[3] = stage_now();
    if (!o->quiet) {
        fflush(stdout);
        summary(&D, &ri, &st, n_out, what);
    }
    if (o->stats) print_stats(&ri.st, marks);
    minlsh_dedup_free(D.engine);
    minlsh_pool_free(D.pool);
    minlsh_scratch_free(D.spool);
    free(D.off);
    free(D.docs);
    free(D.rec);
    free(D.rec_n);
    free(D.rec_file);
    free(D.rec_at);
    free(D.status);
    free(D.spool_at);
    buf_free(&D.spool_buf);
    minlsh_family_free(family);
    minlsh_shingler_free(sh);
    return cli_finish_stdout(cli_input_failures() ? CLI_FAILED : CLI_OK);
}
