/*
 * pipeline.c: the document pipeline shared by dedup, index add, index query
 * and sig.
 *
 * The calling thread fills a batch of jobs (file names, or JSON Lines lines
 * and standard input read into one buffer; a line longer than a batch's
 * byte budget is parsed and shingled as it is read instead, alone in its
 * batch, so that it is never held whole). With cfg->on_batch (dedup), per
 * batch, everything per document on the pool:
 *  1. the pool reads, parses and shingles every job, in the background
 *     while the calling thread reads the next batch;
 *  2. the pool signs every good document and describes it to the
 *     subcommand (cfg->describe, into the subcommand's per-document slot);
 *  3. the subcommand hands the batch over at once (cfg->on_batch: the
 *     engine's bulk intake, on the same pool);
 *  4. the calling thread reports, in input order, what went wrong: a walk
 *     over the batch's statuses.
 * Otherwise (index, sig), per batch:
 *  1. the pool reads, parses and shingles every job in parallel, each worker
 *     with its own stream and set, writing only into the job's own slot and
 *     its own arena;
 *  2. the calling thread walks the batch in input order, reports what went
 *     wrong and asks the subcommand which documents it wants (select);
 *  3. the pool signs the selected documents in parallel;
 *  4. the calling thread hands them to the subcommand in input order (on_doc).
 * With cfg->overlap, step 4 of a batch waits until the pool signs the next
 * one: the calling thread delivers the previous batch, and reads the batch
 * after, while the pool's threads sign, so its own serial work does not
 * leave the other cores idle.
 * Two batches alternate for that. So messages and results come out in the
 * same order whatever the number of threads, and dedup signs each distinct
 * text only once. Every input goes through a cli_stream (stream.c), so gzip
 * and zstd inputs are decompressed as they are read, by the worker for
 * files, by the calling thread for JSON Lines and standard input.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define BATCH_MAX_JOBS 1024
#define BATCH_MAX_BYTES (8u << 20)      /* text held in memory per batch */
#define BATCH_MAX_FILE_BYTES (8u << 20) /* bytes of files per batch */
#define READ_CHUNK (64u << 10)
#define SELECT_AHEAD 8 /* documents between will_select and select */
/* A longer JSON Lines line is parsed as it is read (jsonstream.c), not
 * held: it could not share a batch anyway. */
#define LINE_HOLD_MAX BATCH_MAX_BYTES

/* JOB_TOOBIG: a JSON Lines line or standard input past --max-doc-size,
 * already skipped by the reader; it only keeps the message in order. */
/* JOB_MSG: an input that could not be read; it only keeps its message in
 * order with the documents' (the batch before may not be reported yet). */
enum { JOB_FILE, JOB_TEXT, JOB_JSON, JOB_TOOBIG, JOB_MSG };
enum { ST_OK, ST_EMPTY, ST_FAIL, ST_TOOBIG };
/* How a JOB_JSON line was read: held in the batch buffer, or streamed
 * (pl->big: its text shingled, its id at off, len in the batch buffer, its
 * record in pl->big's file) and found good or refused (msg says why). */
enum { LINE_HELD, LINE_STREAMED, LINE_STREAMED_REFUSED };

typedef struct job {
    int kind;
    size_t file;     /* index in the input list */
    uint64_t line;   /* JSON Lines line number */
    size_t off, len; /* JOB_TEXT, JOB_JSON: the bytes in the batch buffer */
    int line_read;   /* JOB_JSON: LINE_* */
    uint64_t record_at, record_n; /* LINE_STREAMED: the record in pl->big */
    uint64_t bytes;  /* input bytes this job stands for */
    uint64_t text_bytes; /* its text's: JSON decoded, files decompressed */
    uint64_t name_hash;  /* names_hash of its name */
    /* results */
    int status;
    int utf8_bad;
    uint64_t utf8_at;
    char msg[200];
    const char *msg_kind; /* ST_FAIL: the kind of message (cli_input_error_as) */
    uint8_t fp[MINLSH_FINGERPRINT_BYTES];
    size_t id_off, id_len; /* JOB_JSON: the id token in the batch buffer */
    unsigned worker;
    size_t set_off, set_n; /* in the worker's arena */
    size_t sig_slot;       /* its signature's row in the batch's sigs */
} job;

typedef struct worker_state {
    cli_stream in;
    minlsh_shinglestream *stream;
    minlsh_shingleset *set;
    cli_buf text; /* decoded JSON text */
    unsigned char *rbuf;
    double shingle_cpu, sign_cpu; /* this thread's CPU seconds in each stage */
    double sign_end;              /* when it last finished a chunk of signing */
    double shingle_begin, shingle_end; /* its first and last chunk of the
                                          current shingling (0: none) */
    char pad[64]; /* the next worker's fields on other cache lines */
} worker_state;

/* One worker's shingle sets of a batch. 128 bytes apart, so that workers
 * bumping their own counts never write to a cache line another reads. */
typedef struct arena {
    uint64_t *v;
    size_t n, cap;
    char pad[128 - sizeof(uint64_t *) - 2 * sizeof(size_t)];
} arena;

/* A batch of jobs and all that their documents point into. */
typedef struct batch {
    job *jobs;
    size_t n_jobs, cap_jobs;
    size_t *sel; /* the selected jobs of the batch, in order */
    size_t n_sel, cap_sel;
    size_t *sign; /* the jobs to sign, in order: signature i is sign[i]'s */
    size_t n_sign, cap_sign;
    cli_buf data;
    uint64_t file_bytes;
    size_t n_files; /* jobs that are files */
    uint32_t *sigs;
    size_t sigs_cap;
    arena *arenas; /* per worker */
    int pending;   /* selected and signed, not yet delivered */
} batch;

typedef struct pipeline {
    const pipeline_cfg *cfg;
    const input_list *in;
    batch b[2];
    batch *fill, *busy; /* being filled (and shingled), being signed */
    batch *shingling;   /* the batch the workers shingle */
    int shingle_bg;     /* shingling runs in the background (on_batch) */
    cli_stream rd;  /* JSON Lines and standard input */
    cli_buf line;   /* the JSON Lines line being read */
    jsonl_streamer big; /* a line past LINE_HOLD_MAX */
    uint64_t line_bytes; /* its length, even past --max-doc-size */
    unsigned char *chunk;
    uint32_t k;
    worker_state *ws;
    unsigned n_ws;
    uint64_t docs, bytes;
    uint64_t empty, too_large;
    int signing; /* the pool signs busy in the background (overlap) */
    int expected; /* cfg->expect has been called */
    double sign_started; /* when the signing under way began */
    pipeline_stats time; /* the timing fields, summed over the batches */
} pipeline;

/* ---- the workers -------------------------------------------------------- */

static void job_failed(job *j, const char *msg) {
    j->status = ST_FAIL;
    j->msg_kind = "unreadable input";
    snprintf(j->msg, sizeof j->msg, "%s", msg);
}

/* Stream a file through the shingler. Returns 0 (the job's status says how
 * it went) or a negative library error. */
static int feed_file(pipeline *pl, worker_state *w, job *j) {
    const char *path = pl->in->v[j->file].path;
    utf8_check u;
    int rc = 0;
    if (stream_open(&w->in, path, 0) != 0) {
        job_failed(j, w->in.err);
        stream_close(&w->in);
        return 0;
    }
    utf8_check_init(&u);
    j->text_bytes = 0;
    for (;;) {
        ssize_t got = stream_read(&w->in, w->rbuf, READ_CHUNK);
        if (got < 0) {
            job_failed(j, w->in.err);
            break;
        }
        if (got == 0) break;
        j->text_bytes += (uint64_t)got; /* decompressed */
        utf8_check_feed(&u, w->rbuf, (size_t)got);
        rc = minlsh_shinglestream_feed(w->stream, w->rbuf, (size_t)got);
        if (rc == MINLSH_E_TOOBIG) {
            /* Past --max-doc-size: stop reading (it may never end). */
            j->status = ST_TOOBIG;
            rc = 0;
            break;
        }
        if (rc != 0) break;
    }
    j->bytes = w->in.raw_bytes;
    stream_close(&w->in);
    utf8_check_end(&u);
    j->utf8_bad = u.bad;
    j->utf8_at = u.bad_at;
    return rc;
}

static int feed_text(pipeline *pl, worker_state *w, job *j) {
    utf8_check u;
    utf8_check_init(&u);
    utf8_check_feed(&u, pl->shingling->data.p + j->off, j->len);
    utf8_check_end(&u);
    j->utf8_bad = u.bad;
    j->utf8_at = u.bad_at;
    return minlsh_shinglestream_feed(w->stream, pl->shingling->data.p + j->off, j->len);
}

/* The id's canonical form, kept in the worker's arena (the record itself
 * stays as read, for --output kept): j->id_off counts 8-byte words there. */
static int canonical_id(arena *a, job *j, const json_record *rec, const char *id_field) {
    size_t words = (rec->id_len + 32) / 8 + 1, got = 0;
    void *v = a->v;
    xgrow(&v, &a->cap, a->n + words, sizeof *a->v);
    a->v = v;
    if (minlsh_dedup_canonical_id(rec->id, rec->id_len, (char *)(a->v + a->n), words * 8,
                                  &got) != 0) {
        snprintf(j->msg, sizeof j->msg, "field \"%s\" is not a string or a number", id_field);
        j->status = ST_FAIL;
        j->msg_kind = "invalid JSON Lines record";
        return -1;
    }
    j->id_off = a->n;
    j->id_len = got;
    a->n += (got + 7) / 8;
    return 0;
}

static int feed_json(pipeline *pl, worker_state *w, arena *a, job *j) {
    const cli_opts *o = pl->cfg->o;
    /* A batch of refused streamed lines alone holds no bytes at all. */
    const char *line = pl->shingling->data.p != NULL ? pl->shingling->data.p + j->off : "";
    json_record rec;
    if (j->line_read == LINE_STREAMED) {
        rec.id = line;
        rec.id_len = j->len;
    } else if (j->line_read == LINE_STREAMED_REFUSED ||
               json_extract(line, j->len, o->id_field, o->text_field, &rec, &w->text,
                            j->msg, sizeof j->msg) != 0) {
        j->status = ST_FAIL;
        j->msg_kind = "invalid JSON Lines record";
        return 0;
    }
    if (pl->cfg->canonical_ids) {
        if (canonical_id(a, j, &rec, o->id_field) != 0) return 0;
    } else {
        j->id_off = (size_t)(rec.id - pl->shingling->data.p);
        j->id_len = rec.id_len;
    }
    if (j->line_read == LINE_STREAMED) {
        /* Its text is in pl->big's stream already: this worker finishes
         * that one and leaves its own, empty, for the next long line. */
        minlsh_shinglestream *filled = pl->big.stream;
        pl->big.stream = w->stream;
        w->stream = filled;
        return 0;
    }
    j->text_bytes = w->text.n;
    return minlsh_shinglestream_feed(w->stream, w->text.p, w->text.n);
}

/* End the document and keep its set in the worker's arena. */
static int finish_job(worker_state *w, arena *a, job *j) {
    const uint64_t *data;
    size_t n;
    void *v;
    int rc = minlsh_shinglestream_finish(w->stream, w->set, j->fp);
    if (rc != 0) return rc;
    n = minlsh_shingleset_count(w->set);
    data = minlsh_shingleset_view_hashes(w->set);
    if (n == 0) {
        j->status = ST_EMPTY;
        return 0;
    }
    v = a->v;
    xgrow(&v, &a->cap, a->n + n, sizeof *a->v);
    a->v = v;
    memcpy(a->v + a->n, data, n * sizeof *data);
    j->set_off = a->n;
    j->set_n = n;
    a->n += n;
    return 0;
}

static void view_job(const pipeline *pl, const batch *b, const job *j, doc_view *d);

static int run_job(pipeline *pl, worker_state *w, unsigned wid, size_t idx) {
    batch *b = pl->shingling;
    job *j = &b->jobs[idx];
    int rc;
    j->utf8_bad = 0;
    j->worker = wid;
    j->set_n = 0;
    if (j->kind == JOB_MSG) return 0; /* ST_FAIL, its message made by the reader */
    j->status = ST_OK;
    if (j->kind == JOB_TOOBIG) {
        j->status = ST_TOOBIG;
        return 0;
    }
    if (j->kind == JOB_FILE) {
        j->bytes = 0;
        rc = feed_file(pl, w, j);
    } else if (j->kind == JOB_TEXT)
        rc = feed_text(pl, w, j);
    else
        rc = feed_json(pl, w, &b->arenas[wid], j);
    if (rc == 0 && j->status == ST_OK) {
        if (pl->cfg->select != NULL) {
            doc_view d;
            view_job(pl, b, j, &d); /* the name, hashed here for select */
            j->name_hash = names_hash(d.name.s, d.name.n, d.name.json);
        }
        return finish_job(w, &b->arenas[wid], j);
    }
    minlsh_shinglestream_reset(w->stream);
    return rc;
}

/* CPU seconds of the calling thread, with --stats only: reading the
 * thread's clock is a system call, 1 to 2% of a run when done per chunk. */
static double thread_cpu(const pipeline *pl) {
    struct timespec ts;
    if (!pl->cfg->o->stats || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int shingle_range(void *ctx, uint32_t worker, size_t begin, size_t end) {
    pipeline *pl = ctx;
    worker_state *w = &pl->ws[worker];
    double cpu = thread_cpu(pl);
    size_t i;
    int rc = 0;
    if (pl->shingle_bg && w->shingle_begin == 0) w->shingle_begin = cli_now();
    for (i = begin; i < end && rc == 0; i++) rc = run_job(pl, w, worker, i);
    w->shingle_cpu += thread_cpu(pl) - cpu;
    if (pl->shingle_bg) w->shingle_end = cli_now();
    return rc;
}

static int sign_range(void *ctx, uint32_t worker, size_t begin, size_t end) {
    pipeline *pl = ctx;
    const batch *b = pl->busy;
    worker_state *w = &pl->ws[worker];
    double cpu = thread_cpu(pl);
    size_t i;
    int rc = 0;
    for (i = begin; i < end && rc == 0; i++) {
        const job *j = &b->jobs[b->sign[i]];
        const uint64_t *set = j->set_n > 0 ? b->arenas[j->worker].v + j->set_off : NULL;
        rc = minlsh_family_sign_prefix(pl->cfg->family, set, j->set_n, b->sigs + i * pl->k,
                                       pl->k);
        if (rc == 0 && pl->cfg->describe != NULL) {
            doc_view d;
            view_job(pl, b, j, &d);
            d.sig = b->sigs + i * pl->k;
            pl->cfg->describe(pl->cfg->ctx, worker, i, &d);
        }
    }
    w->sign_cpu += thread_cpu(pl) - cpu;
    w->sign_end = cli_now();
    return rc;
}

/* ---- the calling thread ------------------------------------------------- */

static void view_job(const pipeline *pl, const batch *b, const job *j, doc_view *d) {
    const input_file *f = &pl->in->v[j->file];
    if (j->kind == JOB_JSON) {
        d->name.s = pl->cfg->canonical_ids ? (const char *)(b->arenas[j->worker].v + j->id_off)
                                           : b->data.p + j->id_off;
        d->name.n = j->id_len;
        d->name.json = 1;
    } else {
        d->name.s = f->path;
        d->name.n = strlen(f->path);
        d->name.json = 0;
    }
    d->where = input_where(f);
    d->line = j->line;
    d->set = j->set_n > 0 ? b->arenas[j->worker].v + j->set_off : NULL;
    d->set_n = j->set_n;
    d->fp = j->fp;
    d->sig = NULL;
    d->bytes = j->bytes;
    d->length = j->kind == JOB_JSON || j->kind == JOB_FILE ? j->text_bytes : j->bytes;
    d->name_hash = j->name_hash;
    d->record = j->kind == JOB_JSON && j->line_read == LINE_HELD ? b->data.p + j->off : NULL;
    d->record_n = j->kind != JOB_JSON ? 0 : j->line_read == LINE_HELD ? j->len : j->record_n;
    d->record_file = j->kind == JOB_JSON && j->line_read == LINE_STREAMED ? pl->big.record
                                                                           : NULL;
    d->record_at = j->record_at;
}

/* A job's messages, in input order, and its counts: 1 if it is a document
 * to offer to the subcommand, 0 if it was reported and skipped. */
static int job_report(pipeline *pl, const job *j) {
    const char *where = input_where(&pl->in->v[j->file]);
    pl->bytes += j->bytes;
    if (j->status == ST_FAIL) {
        cli_input_error_as(j->msg_kind, where, j->line, "%s", j->msg);
        return 0;
    }
    if (j->status == ST_TOOBIG) {
        char lim[32];
        opts_describe_size(lim, pl->cfg->o->max_doc_size);
        cli_doc_warning(CLI_W_TOOBIG, where, j->line,
                        "larger than --max-doc-size %s, skipped", lim);
        pl->too_large++;
        return 0;
    }
    if (j->utf8_bad)
        cli_doc_warning(CLI_W_UTF8, where, 0, "invalid UTF-8 at byte %llu; read as bytes",
                        (unsigned long long)j->utf8_at);
    if (j->status == ST_EMPTY) {
        pl->empty++;
        if (!pl->cfg->offer_empty) {
            cli_doc_warning(CLI_W_EMPTY, where, j->line, "empty document, skipped");
            return 0;
        }
        cli_doc_warning(CLI_W_EMPTY, where, j->line, "empty document, kept as it is");
    }
    pl->docs++;
    return 1;
}

/* Step 2 for one job: report it, or offer it to the subcommand. Returns 1
 * if selected, 0 if not, or the subcommand's negative "stop". */
static int select_job(pipeline *pl, const job *j) {
    doc_view d;
    if (!job_report(pl, j)) return 0;
    if (pl->cfg->select == NULL) return 1;
    view_job(pl, pl->fill, j, &d);
    return pl->cfg->select(pl->cfg->ctx, &d);
}

/* Step 4: the selected documents of b to on_doc, in order. */
static int deliver(pipeline *pl, batch *b) {
    size_t i;
    int rc = 0;
    for (i = 0; i < b->n_sel && rc == 0; i++) {
        doc_view d;
        view_job(pl, b, &b->jobs[b->sel[i]], &d);
        if (pl->cfg->family != NULL) d.sig = b->sigs + b->jobs[b->sel[i]].sig_slot * pl->k;
        rc = pl->cfg->on_doc(pl->cfg->ctx, &d);
    }
    b->pending = 0;
    return rc;
}

/* Wait for the background signing of the busy batch, if any. */
static void sign_wait(pipeline *pl) {
    double end;
    unsigned i;
    int rc;
    if (!pl->signing) return;
    pl->signing = 0;
    if ((rc = minlsh_pool_wait(pl->cfg->pool)) != 0) cli_die_lib("signing", rc);
    /* The pool was busy until its last chunk ended; a caller that came
     * later worked alone meanwhile. */
    for (i = 0, end = pl->sign_started; i < pl->n_ws; i++)
        if (pl->ws[i].sign_end > end) end = pl->ws[i].sign_end;
    pl->time.sign_busy += end - pl->sign_started;
}

/* Start signing b's jobs that are selected (only_selected) or may be:
 * every good document, before select has seen them. sign_wait finishes. */
static void sign_start(pipeline *pl, batch *b, int only_selected) {
    size_t i, n = only_selected ? b->n_sel : b->n_jobs;
    void *v;
    b->n_sign = 0;
    for (i = 0; i < n; i++) {
        size_t at = only_selected ? b->sel[i] : i;
        job *j = &b->jobs[at];
        if (!only_selected &&
            !(j->status == ST_OK || (j->status == ST_EMPTY && pl->cfg->offer_empty)))
            continue;
        v = b->sign;
        xgrow(&v, &b->cap_sign, b->n_sign + 1, sizeof *b->sign);
        b->sign = v;
        j->sig_slot = b->n_sign;
        b->sign[b->n_sign++] = at;
    }
    pl->busy = b;
    if (b->n_sign == 0) return;
    v = b->sigs;
    xgrow(&v, &b->sigs_cap, b->n_sign * pl->k, sizeof *b->sigs);
    b->sigs = v;
    pl->sign_started = cli_now();
    if (pl->cfg->pool == NULL) { /* nothing to start: sign now */
        int rc = minlsh_pool_run(NULL, b->n_sign, 16, sign_range, pl);
        if (rc != 0) cli_die_lib("signing", rc);
        pl->time.sign_busy += cli_now() - pl->sign_started;
        return;
    }
    if (minlsh_pool_start(pl->cfg->pool, b->n_sign, 16, sign_range, pl) != 0)
        cli_die_lib("signing", MINLSH_E_STATE);
    pl->signing = 1;
}

/* Steps 1 to 3 for the batch being filled, and step 4 for it or (with
 * overlap) for the batch before it. With overlap the pool signs this
 * batch in the background, every good document of it (a document select
 * refuses is signed for nothing, which is rare): the calling thread
 * selects, delivers the batch before and reads the next one meanwhile,
 * and the next flush waits for the signing. Then the other batch is the
 * one to fill. */
static int flush_batched(pipeline *pl);

static int flush(pipeline *pl) {
    batch *b = pl->fill, *prev = b == &pl->b[0] ? &pl->b[1] : &pl->b[0];
    int background = pl->cfg->family != NULL && pl->cfg->pool != NULL && pl->cfg->overlap;
    size_t i;
    int rc;
    void *v;
    double t;
    if (pl->cfg->on_batch != NULL) return flush_batched(pl);
    if (b->n_jobs == 0) return 0;
    sign_wait(pl); /* prev is signed, and the pool free */
    for (i = 0; i < pl->n_ws; i++) b->arenas[i].n = 0;
    /* Files one at a time (their sizes vary widely); lines and texts a few
     * at a time, so that claiming them costs little and two workers seldom
     * write to neighbouring jobs. */
    t = cli_now();
    pl->shingling = b;
    rc = minlsh_pool_run(pl->cfg->pool, b->n_jobs, b->n_files > 0 ? 1 : 8, shingle_range, pl);
    if (rc != 0) cli_die_lib("shingling", rc);
    pl->time.shingle_wall += cli_now() - t;
    if (background) sign_start(pl, b, 0);
    t = cli_now();
    b->n_sel = 0;
    for (i = 0; i < b->n_jobs; i++) {
        /* Random lookups in a large table: asked for ahead, they arrive
         * while the documents before are selected. */
        if (pl->cfg->will_select != NULL && i + SELECT_AHEAD < b->n_jobs)
            pl->cfg->will_select(pl->cfg->ctx, b->jobs[i + SELECT_AHEAD].name_hash);
        if ((rc = select_job(pl, &b->jobs[i])) < 0) break;
        if (rc == 0) continue;
        v = b->sel;
        xgrow(&v, &b->cap_sel, b->n_sel + 1, sizeof *b->sel);
        b->sel = v;
        b->sel[b->n_sel++] = i;
    }
    rc = rc < 0 ? rc : 0;
    if (pl->cfg->expect != NULL && !pl->expected && pl->docs > 0 && pl->in->total_known) {
        /* Files: one document each. JSON Lines: as many as the first
         * batch's bytes per document say (compressed input: fewer). */
        uint64_t per = pl->bytes / pl->docs;
        pl->expected = 1;
        if (!pl->cfg->o->jsonl) pl->cfg->expect(pl->cfg->ctx, pl->in->n);
        else if (per > 0) pl->cfg->expect(pl->cfg->ctx, pl->in->total_bytes / per);
    }
    pl->time.select_wall += cli_now() - t;
    if (!background && pl->cfg->family != NULL) {
        sign_start(pl, b, 1);
        sign_wait(pl);
    }
    t = cli_now();
    if (rc == 0 && prev->pending) rc = deliver(pl, prev);
    b->pending = 1;
    if (rc == 0 && !pl->cfg->overlap) rc = deliver(pl, b);
    pl->time.deliver_wall += cli_now() - t;
    progress_update(pl->cfg->progress, pl->docs, pl->bytes);
    /* The other batch is delivered: it is the one to fill now. */
    pl->fill = prev;
    prev->n_jobs = 0;
    prev->file_bytes = 0;
    prev->n_files = 0;
    buf_clear(&prev->data);
    return rc;
}

/* ---- batches handed over whole (cfg->on_batch) -------------------------- */

/* Step 4 for one job: its messages, in input order. status: what on_batch
 * said of it, if it was offered. */
static void report_job(pipeline *pl, const batch *b, const job *j, const int32_t *status) {
    if (!job_report(pl, j)) return;
    if (status != NULL && status[j->sig_slot] != 0) {
        doc_view d;
        view_job(pl, b, j, &d);
        pl->cfg->report(pl->cfg->ctx, &d, status[j->sig_slot]);
    }
}

/* Steps 1 (its end) to 4 for b, whose shingling is under way. */
static int finish_batch(pipeline *pl, batch *b) {
    const int32_t *status = NULL;
    double t, end;
    size_t i;
    unsigned w;
    int rc = minlsh_pool_wait(pl->cfg->pool);
    if (rc != 0) cli_die_lib("shingling", rc);
    /* The pool was busy from the first chunk any worker began (the caller
     * may have read the next batch alone before it joined) to the last. */
    for (w = 0, t = 0, end = 0; w < pl->n_ws; w++) {
        worker_state *ws = &pl->ws[w];
        if (ws->shingle_begin != 0 && (t == 0 || ws->shingle_begin < t)) t = ws->shingle_begin;
        if (ws->shingle_end > end) end = ws->shingle_end;
        ws->shingle_begin = ws->shingle_end = 0;
    }
    if (end > t) pl->time.shingle_wall += end - t;
    pl->shingle_bg = 0;
    /* Every good document, described as it is signed. */
    if (pl->cfg->reserve != NULL) pl->cfg->reserve(pl->cfg->ctx, b->n_jobs);
    sign_start(pl, b, 0);
    sign_wait(pl);
    t = cli_now();
    if (b->n_sign > 0) rc = pl->cfg->on_batch(pl->cfg->ctx, b->n_sign, &status);
    pl->time.deliver_wall += cli_now() - t;
    for (i = 0; i < b->n_jobs; i++) {
        const job *j = &b->jobs[i];
        int offered = j->status == ST_OK || (j->status == ST_EMPTY && pl->cfg->offer_empty);
        report_job(pl, b, j, offered ? status : NULL);
    }
    progress_update(pl->cfg->progress, pl->docs, pl->bytes);
    return rc;
}

/* The batch being filled is full (or the input ended): its shingling
 * starts in the background, so that the calling thread reads the next
 * batch meanwhile, and the batch before it is finished. */
static int flush_batched(pipeline *pl) {
    batch *b = pl->fill, *prev = b == &pl->b[0] ? &pl->b[1] : &pl->b[0];
    size_t i;
    int rc = 0;
    if (prev->pending) {
        prev->pending = 0;
        rc = finish_batch(pl, prev);
    }
    if (rc != 0 || b->n_jobs == 0) return rc;
    for (i = 0; i < pl->n_ws; i++) b->arenas[i].n = 0;
    pl->shingling = b;
    pl->shingle_bg = 1;
    b->pending = 1;
    if ((rc = minlsh_pool_start(pl->cfg->pool, b->n_jobs, b->n_files > 0 ? 1 : 8, shingle_range,
                                pl)) != 0)
        cli_die_lib("shingling", rc);
    pl->fill = prev;
    prev->n_jobs = 0;
    prev->file_bytes = 0;
    prev->n_files = 0;
    buf_clear(&prev->data);
    return 0;
}

/* A reader's failure, as a job so that its message keeps its place. */
static int job_msg(pipeline *pl, size_t file, uint64_t line, const char *msg);

static job *new_job(pipeline *pl, int kind, size_t file) {
    batch *b = pl->fill;
    void *v = b->jobs;
    job *j;
    xgrow(&v, &b->cap_jobs, b->n_jobs + 1, sizeof *b->jobs);
    b->jobs = v;
    j = &b->jobs[b->n_jobs++];
    memset(j, 0, sizeof *j);
    j->kind = kind;
    j->file = file;
    return j;
}

static int batch_full(const pipeline *pl) {
    const batch *b = pl->fill;
    return b->n_jobs >= BATCH_MAX_JOBS || b->data.n >= BATCH_MAX_BYTES ||
           b->file_bytes >= BATCH_MAX_FILE_BYTES;
}

static int job_msg(pipeline *pl, size_t file, uint64_t line, const char *msg) {
    int rc = batch_full(pl) ? flush(pl) : 0;
    job *j = new_job(pl, JOB_MSG, file);
    j->line = line;
    job_failed(j, msg);
    return rc;
}

static int blank(const char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

/* One line of a JSON Lines file (with its newline, if any): a job unless
 * it is blank. */
static int jsonl_line(pipeline *pl, size_t file, uint64_t lineno, const cli_buf *l) {
    size_t len = l->n, skip = 0;
    uint64_t limit = pl->cfg->o->max_doc_size;
    job *j;
    int rc = 0;
    if (limit != 0 && pl->line_bytes > limit) {
        /* The reader kept only the beginning of the line. */
        if (batch_full(pl)) rc = flush(pl);
        j = new_job(pl, JOB_TOOBIG, file);
        j->line = lineno;
        j->bytes = pl->line_bytes;
        return rc;
    }
    if (len > 0 && l->p[len - 1] == '\n') len--;
    if (len > 0 && l->p[len - 1] == '\r') len--;
    if (lineno == 1 && len >= 3 && memcmp(l->p, "\xEF\xBB\xBF", 3) == 0) skip = 3;
    if (blank(l->p + skip, len - skip)) {
        pl->bytes += l->n;
        return 0;
    }
    if (batch_full(pl)) rc = flush(pl);
    j = new_job(pl, JOB_JSON, file);
    j->line = lineno;
    j->off = pl->fill->data.n;
    j->len = len - skip;
    j->bytes = l->n;
    buf_add(&pl->fill->data, l->p + skip, len - skip);
    return rc;
}

/* Append part of a line, keeping no more than --max-doc-size (plus the line
 * end) of it: a longer line is skipped, and must not fill the memory. */
static void line_add(pipeline *pl, const unsigned char *p, size_t n) {
    uint64_t limit = pl->cfg->o->max_doc_size, room;
    pl->line_bytes += n;
    if (limit != 0) {
        room = limit + 2 > pl->line.n ? limit + 2 - pl->line.n : 0;
        if (n > room) n = (size_t)room;
    }
    buf_add(&pl->line, p, n);
}

/* 1 if the line being read is to be streamed: past LINE_HOLD_MAX and not
 * already past --max-doc-size (the reader cut it short). */
static int line_streams(const pipeline *pl) {
    uint64_t limit = pl->cfg->o->max_doc_size;
    return pl->line.n > LINE_HOLD_MAX && (limit == 0 || pl->line_bytes <= limit);
}

/* The rest of a line too long to hold, parsed as it is read; then its job,
 * in a batch of its own as far as the streamer's state goes (flushed at
 * once). *p, *end: where the chunk goes on after the line; *failed: the
 * input failed (reported), read no further. Returns 0 or flush's stop. */
static int streamed_line(pipeline *pl, size_t file, uint64_t lineno, const unsigned char **p,
                         const unsigned char **end, int *failed) {
    const input_file *f = &pl->in->v[file];
    jsonl_long_line r;
    job *j;
    int rc = 0;
    jsonl_read_long_line(&pl->big, &r, pl->line.p, pl->line.n, lineno == 1, &pl->rd, pl->chunk,
                         READ_CHUNK, p, end);
    buf_free(&pl->line); /* LINE_HOLD_MAX bytes: not kept for the lines after */
    pl->line_bytes = 0;
    if (r.status == JSONL_LINE_UNREADABLE) {
        cli_input_error_as("unreadable input", input_where(f), lineno, "%s", pl->rd.err);
        *failed = 1;
        return 0;
    }
    if (r.status == JSONL_LINE_BLANK) {
        pl->bytes += r.bytes;
        return 0;
    }
    if (batch_full(pl) && (rc = flush(pl)) != 0) return rc;
    j = new_job(pl, r.status == JSONL_LINE_TOOBIG ? JOB_TOOBIG : JOB_JSON, file);
    j->line = lineno;
    j->bytes = r.bytes;
    if (r.status == JSONL_LINE_INVALID) {
        j->line_read = LINE_STREAMED_REFUSED;
        snprintf(j->msg, sizeof j->msg, "%s", r.msg);
    } else if (r.status == JSONL_LINE_OK) {
        j->line_read = LINE_STREAMED;
        j->off = pl->fill->data.n;
        j->len = pl->big.js.id.n;
        buf_add(&pl->fill->data, pl->big.js.id.p, pl->big.js.id.n);
        j->text_bytes = r.text_bytes;
        j->record_at = r.record_at;
        j->record_n = r.record_n;
    }
    /* Selected (its record copied) and its stream taken before the next
     * long line. */
    rc = flush(pl);
    /* Handed over whole, a batch is finished only by the next flush: this
     * one's, now, for the same reasons. */
    if (rc == 0 && pl->cfg->on_batch != NULL) rc = flush(pl);
    jsonl_streamer_records_done(&pl->big);
    return rc;
}

/* One JSON Lines file: every non-blank line is a job. */
static int read_jsonl(pipeline *pl, size_t file) {
    const input_file *f = &pl->in->v[file];
    cli_stream *s = &pl->rd;
    uint64_t lineno = 0;
    int rc = 0, failed = 0;
    buf_clear(&pl->line);
    pl->line_bytes = 0;
    if (stream_open(s, f->path, f->is_stdin) != 0) {
        rc = job_msg(pl, file, 0, s->err);
        stream_close(s);
        return rc;
    }
    while (rc == 0) {
        ssize_t got = stream_read(s, pl->chunk, READ_CHUNK);
        const unsigned char *p = pl->chunk, *end, *nl;
        if (got < 0) {
            rc = job_msg(pl, file, lineno + 1, s->err);
            break;
        }
        if (got == 0) {
            if (pl->line.n > 0) rc = jsonl_line(pl, file, ++lineno, &pl->line);
            break;
        }
        end = p + got;
        while (rc == 0 && p < end) {
            nl = memchr(p, '\n', (size_t)(end - p));
            if (nl == NULL) {
                line_add(pl, p, (size_t)(end - p));
                if (!line_streams(pl)) break;
                rc = streamed_line(pl, file, ++lineno, &p, &end, &failed);
                if (failed) goto done;
                continue;
            }
            if (pl->line.n == 0 && pl->line_bytes == 0) {
                /* The whole line is in the chunk: no copy to the line
                 * buffer first. */
                cli_buf view;
                view.p = (char *)p;
                view.n = view.cap = (size_t)(nl + 1 - p);
                pl->line_bytes = view.n;
                rc = jsonl_line(pl, file, ++lineno, &view);
            } else {
                line_add(pl, p, (size_t)(nl + 1 - p));
                rc = jsonl_line(pl, file, ++lineno, &pl->line);
                buf_clear(&pl->line);
            }
            pl->line_bytes = 0;
            p = nl + 1;
        }
    }
done:
    stream_close(s);
    return rc;
}

/* Standard input as one plain-text document; past --max-doc-size it is
 * skipped and not read further. */
static int read_stdin_text(pipeline *pl, size_t file) {
    cli_stream *s = &pl->rd;
    size_t off = pl->fill->data.n;
    uint64_t limit = pl->cfg->o->max_doc_size;
    job *j;
    if (stream_open(s, "-", 1) != 0) {
        int rc = job_msg(pl, file, 0, s->err);
        stream_close(s);
        return rc;
    }
    for (;;) {
        ssize_t got;
        buf_reserve(&pl->fill->data, READ_CHUNK);
        got = stream_read(s, pl->fill->data.p + pl->fill->data.n, READ_CHUNK);
        if (got < 0) {
            int rc;
            pl->fill->data.n = off;
            rc = job_msg(pl, file, 0, s->err);
            stream_close(s);
            return rc;
        }
        if (got == 0) break;
        pl->fill->data.n += (size_t)got;
        if (limit != 0 && pl->fill->data.n - off > limit) {
            stream_close(s);
            j = new_job(pl, JOB_TOOBIG, file);
            j->bytes = pl->fill->data.n - off;
            pl->fill->data.n = off;
            return 0;
        }
    }
    stream_close(s);
    j = new_job(pl, JOB_TEXT, file);
    j->off = off;
    j->len = pl->fill->data.n - off;
    j->bytes = j->len;
    return 0;
}

static void workers_init(pipeline *pl) {
    unsigned i;
    pl->n_ws = minlsh_pool_threads(pl->cfg->pool);
    pl->ws = xcalloc(pl->n_ws, sizeof *pl->ws);
    for (i = 0; i < pl->n_ws; i++) {
        worker_state *w = &pl->ws[i];
        int rc = minlsh_shinglestream_new(&w->stream, pl->cfg->shingler, NULL);
        if (rc == 0) rc = minlsh_shingleset_new(&w->set, NULL);
        if (rc != 0) cli_die_lib("shingler", rc);
        w->rbuf = xmalloc(READ_CHUNK);
    }
    for (i = 0; i < 2; i++) pl->b[i].arenas = xcalloc(pl->n_ws, sizeof *pl->b[i].arenas);
    pl->fill = &pl->b[0];
}

static void workers_free(pipeline *pl) {
    unsigned i, k;
    for (i = 0; i < pl->n_ws; i++) {
        worker_state *w = &pl->ws[i];
        stream_free(&w->in);
        minlsh_shinglestream_free(w->stream);
        minlsh_shingleset_free(w->set);
        buf_free(&w->text);
        free(w->rbuf);
    }
    for (k = 0; k < 2; k++) {
        batch *b = &pl->b[k];
        for (i = 0; b->arenas != NULL && i < pl->n_ws; i++) free(b->arenas[i].v);
        free(b->arenas);
        free(b->jobs);
        free(b->sel);
        free(b->sign);
        free(b->sigs);
        buf_free(&b->data);
    }
    free(pl->ws);
}

int pipeline_run(const pipeline_cfg *cfg, const input_list *in,
                 pipeline_stats *st) {
    pipeline pl;
    size_t i;
    double start = cli_now();
    int rc = 0;
    memset(&pl, 0, sizeof pl);
    pl.cfg = cfg;
    pl.in = in;
    pl.k = !cfg->family        ? 0
           : cfg->sign_values ? cfg->sign_values
                              : minlsh_family_k(cfg->family);
    workers_init(&pl);
    jsonl_streamer_init(&pl.big, cfg->o, cfg->shingler, cfg->keep_records);
    pl.chunk = xmalloc(READ_CHUNK);
    for (i = 0; i < in->n && rc == 0; i++) {
        if (cfg->o->jsonl) rc = read_jsonl(&pl, i);
        else if (in->v[i].is_stdin) rc = read_stdin_text(&pl, i);
        else {
            if (batch_full(&pl) && (rc = flush(&pl)) != 0) break;
            new_job(&pl, JOB_FILE, i);
            pl.fill->file_bytes += in->v[i].size;
            pl.fill->n_files++;
        }
    }
    if (rc == 0) rc = flush(&pl);
    if (cfg->on_batch != NULL) {
        /* The last batch, shingling in the background. */
        for (i = 0; i < 2; i++)
            if (pl.b[i].pending) {
                int r;
                pl.b[i].pending = 0;
                r = finish_batch(&pl, &pl.b[i]);
                if (rc == 0) rc = r;
            }
    }
    sign_wait(&pl);
    /* The last batch, kept back for the next one that never came. */
    if (cfg->on_batch == NULL) {
        double t = cli_now();
        for (i = 0; i < 2 && rc == 0; i++)
            if (pl.b[i].pending) rc = deliver(&pl, &pl.b[i]);
        pl.time.deliver_wall += cli_now() - t;
    }
    *st = pl.time;
    st->docs = pl.docs;
    st->bytes = pl.bytes;
    st->empty = pl.empty;
    st->too_large = pl.too_large;
    st->seconds = cli_now() - start;
    for (i = 0; i < pl.n_ws; i++) {
        st->shingle_cpu += pl.ws[i].shingle_cpu;
        st->sign_cpu += pl.ws[i].sign_cpu;
    }
    /* Whatever the caller did outside the pool's runs: reading, selecting,
     * delivering while no signing was left. */
    st->serial = st->seconds - st->shingle_wall - st->sign_busy -
                 (cfg->on_batch != NULL ? st->deliver_wall : 0.0);
    if (st->serial < 0) st->serial = 0;
    workers_free(&pl);
    jsonl_streamer_free(&pl.big);
    buf_free(&pl.line);
    stream_free(&pl.rd);
    free(pl.chunk);
    return rc;
}

int pipeline_run_paths(pipeline_cfg *cfg, char **paths, int n, const char *what,
                       pipeline_stats *st) {
    input_list in;
    progress pr;
    int rc;
    input_walk(&in, paths, n, cfg->o);
    progress_init(&pr, cfg->o, &in, what);
    cfg->progress = &pr;
    rc = pipeline_run(cfg, &in, st);
    progress_done(&pr);
    cfg->progress = NULL;
    input_free(&in);
    return rc;
}
