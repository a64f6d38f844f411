/*
 * lib/dedup: the dedup engine, the layer above lib/lsh. It owns the policy
 * every front end used to write for itself (docs/dedup.md): exact groups by
 * fingerprint, signing on threads, band keys, candidates with a hot-bucket
 * cap, verification, connected components or strict attribution, and a keep
 * or drop decision for every document.
 *
 * One algorithm whatever the memory. Each document is one record in the
 * store (its fingerprint, and its set or its signature); band keys and
 * fingerprints are made in batches and kept as sorted runs of (key,
 * document) records; at the run the fingerprint runs are merged into exact
 * groups, each band's runs into buckets and candidate runs, and those into
 * verified edges; the decisions come last, in document order. Every record
 * store, run and the decisions live in memory until the memory budget says
 * otherwise, then in temporary files; runs are merged in a fixed order, so
 * the result is the same for any budget and any thread count.
 *
 * Memory that stays whatever the budget, per document: 8 bytes (where its
 * record is), 16 with KEEP_LONGEST (its length); at the run 4 more (its
 * exact group) and 4 (components) or 12 (strict) while deciding; 16 per
 * verified edge.
 *
 * The files, each calling only those listed before it: policy.c (the
 * plan, the budget, canonical ids), decide.c (decisions from groups and
 * edges), records.c (temporary files, budget shares, the pool, records
 * written and read back), ids.c (the ids' entries and tables), runs.c
 * (sorted runs and their merges), banding.c (batches of pending documents
 * into runs), exact.c (exact groups), verify.c (similarities, candidate
 * runs verified), cands.c (band buckets into candidates, and their
 * rounds), run.c (minlsh_dedup_run and the decisions' sink), intake.c
 * (minlsh_dedup_add_docs), engine.c (the handle, and adding documents one
 * by one or as texts), results.c (what the run gives) and stages.c (the
 * stages as calls over partitions).
 *
 * Internal: every name minlsh__dedup_*; the public functions are in
 * include/minlsh.h (experimental part).
 */
#ifndef MINLSH_DEDUP_H
#define MINLSH_DEDUP_H

#include "common/common.h"
#include "common/pool.h"
#include "common/sort.h"

#include <pthread.h>

/* Documents are union-find nodes of 32 bits. */
#define MINLSH__DEDUP_MAX_DOCS (UINT32_MAX - 1)
#define MINLSH__DEDUP_NONE UINT32_MAX
/* A record address with this bit is an offset in the data file; without
 * it, a pointer (user-space pointers never have it). */
#define MINLSH__DEDUP_IN_FILE (UINT64_C(1) << 63)

/* A verified pair of documents (a < b, each the first of its exact group)
 * and its similarity. */
typedef struct minlsh__dedup_edge {
    uint32_t a, b;
    double sim;
} minlsh__dedup_edge;

/* The head of a document's record; then its set (n hashes, exact
 * verification) or its signature (k values, signature verification). */
typedef struct minlsh__dedup_rec {
    uint8_t fp[MINLSH_FINGERPRINT_BYTES];
    uint64_t n; /* shingles in the set that follows; 0 with a signature */
} minlsh__dedup_rec;

#define MINLSH__DEDUP_CHUNK_BYTES ((size_t)4 << 20)
/* How far ahead of the records written the pages of a chunk are made. */
#define MINLSH__DEDUP_FAULT_AHEAD ((size_t)256 << 10)
#define MINLSH__DEDUP_SPARE 16

/* Storage that only grows, in chunks of at least MINLSH__DEDUP_CHUNK_BYTES.
 * Spare chunks are made and touched by a pool worker in the background
 * after a batch is banded and whenever the spares run out (into
 * `incoming`, taken over when the pool is next used or a chunk is
 * wanted), so that the page faults of fresh memory are neither the adding
 * thread's nor on anyone's way. */
typedef struct minlsh__dedup_chunks {
    uint8_t **v;
    size_t n, cap;
    size_t used, size; /* bytes used and held by the last chunk */
    size_t faulted;    /* bytes of the last chunk whose pages are made */
    uint64_t bytes;    /* held by all, spares included */
    uint8_t *spare[MINLSH__DEDUP_SPARE];
    size_t n_spare;
    uint8_t *incoming[MINLSH__DEDUP_SPARE];
    size_t n_incoming, want_incoming;
    uint64_t batch_bytes; /* records stored in memory since the last batch */
} minlsh__dedup_chunks;

/* A sorted run of records: in memory (v) or in a temporary file (off). */
typedef struct minlsh__dedup_run {
    minlsh__kv *v;
    uint64_t off, n;
} minlsh__dedup_run;

typedef struct minlsh__dedup_runs {
    minlsh__dedup_run *r;
    size_t n, cap;
} minlsh__dedup_runs;

/* A merge's place in one run. */
typedef struct minlsh__dedup_cursor {
    const minlsh__dedup_run *run;
    const minlsh__kv *at; /* current record */
    size_t left;          /* records left in the block, at included */
    uint64_t next;        /* index in the run of the block after this one */
    uint64_t end;         /* index in the run where this merge stops */
    minlsh__kv *block;
} minlsh__dedup_cursor;

/* A tournament tree of losers over the k cursors: node i (0 < i < k) holds
 * the loser of its match, its record copied beside its cursor number, so
 * that the matches compare values at hand instead of following pointers;
 * node i's children are 2i and 2i + 1, and leaf k + j is cursor j. Taking
 * the least record replays the matches on the winner's path only: log2(k)
 * comparisons, one per level, where a binary heap makes two. */
typedef struct minlsh__dedup_entry {
    minlsh__kv rec;
    size_t cursor;
} minlsh__dedup_entry;

/* A k-way merge of sorted runs (runs.c): through the tournament tree, or,
 * when the keys are hashes and every run is in memory, a range of keys at
 * a time (about MINLSH__DEDUP_GATHER records): the runs' records in the
 * range gathered and sorted at once. A tournament is a chain of dependent
 * compares per record; a range sort has no such chain and no branch that
 * depends on the data, which makes it several times faster per record. */
typedef struct minlsh__dedup_merge {
    const minlsh_dedup *d;
    const minlsh__tmpfile *f;
    minlsh__dedup_cursor *c;
    minlsh__dedup_entry *tree; /* tree[0]: the winner */
    size_t k;
    size_t block; /* records per block of a file run */
    /* by ranges of keys */
    int ranges, shared;
    uint64_t lo, hi; /* keys left to gather: [lo, hi), or from lo on */
    int to_end, done;
    unsigned width_bits; /* a range's width: 2^width_bits keys */
    minlsh__kv *sorted, *gathered;
    size_t n_sorted, at_sorted, cap;
    uint32_t *hist;
    size_t cap_hist;
} minlsh__dedup_merge;

/* The ids of the documents (ids.c), once some document has one. Every
 * document from then on (those before are filled in) has an entry, in
 * document order, in chunks that never move: a varint of (length << 2 |
 * kind) + 1, then the id's bytes (JSON ids in canonical form); a 0 byte
 * where an entry would start means "the next entry starts the next chunk".
 * Only every MINLSH__DEDUP_ID_GROUP-th entry's position is kept. Repeated
 * ids are found in MINLSH__DEDUP_ID_SHARDS hash tables, a shard chosen by
 * the id's hash, so that a batch is looked up in parallel, one worker per
 * shard walking its ids of the batch in input order: the first of the
 * equal ids in input order is the one kept, whatever the number of
 * threads. A slot is a document number + 1 and the low 32 bits of the id's
 * hash, which place it (a table has at most 2^32 slots) and tell most
 * different ids apart without reading them; a table is at most 3/4 full
 * (past 2^32 slots, which only ids made to share a shard reach, fuller).
 * Memory per document with an id: its bytes, 1 or 2 of varint, 1/2 of
 * position and 10.7 to 21.3 of slots. */
#define MINLSH__DEDUP_ID_SHARDS 64
#define MINLSH__DEDUP_ID_GROUP 16
#define MINLSH__DEDUP_ID_CHUNK ((size_t)1 << 20)
#define MINLSH__DEDUP_ID_MAX_SLOTS (UINT64_C(1) << 32)

typedef struct minlsh__dedup_id_slot {
    uint32_t doc;  /* document + 1; 0: free */
    uint32_t hash; /* the id's hash, low 32 bits */
} minlsh__dedup_id_slot;

typedef struct minlsh__dedup_id_shard {
    minlsh__dedup_id_slot *slots;
    size_t mask; /* slots - 1; 0: none yet */
    size_t n;    /* ids in the shard */
} minlsh__dedup_id_shard;

typedef struct minlsh__dedup_ids {
    int on;
    uint8_t **chunks;
    size_t n_chunks, cap_chunks;
    size_t used, size; /* bytes used and held by the last chunk */
    uint64_t *pos;     /* per group of entries: chunk << 40 | offset */
    size_t cap_pos;
    uint64_t n;        /* entries: n_docs once on */
    uint64_t k0, k1;   /* the SipHash key of the tables */
    uint64_t repeated; /* documents skipped for a repeated id */
    uint64_t bytes;    /* held by the entries and positions */
    minlsh__dedup_id_shard shard[MINLSH__DEDUP_ID_SHARDS];
} minlsh__dedup_ids;

/* Scratch of one worker: the two records being compared. */
typedef struct minlsh__dedup_scratch {
    uint64_t *a, *b;
    size_t cap_a, cap_b;
} minlsh__dedup_scratch;

/* The decisions of documents first .. first + n, in document order. */
typedef int (*minlsh__dedup_emit)(void *ctx, uint64_t first, minlsh_dedup_decision *v, size_t n);

/* What the policy decides from: n documents, the exact group of each (the
 * first document with its fingerprint), their lengths (NULL: equal), and
 * the verified edges between groups, sorted by (a, b) without repeats. */
typedef struct minlsh__dedup_policy {
    uint64_t n;
    const uint32_t *exact_of;
    const uint64_t *lengths;
    const minlsh__dedup_edge *edges;
    size_t n_edges;
    uint32_t keep, group;
} minlsh__dedup_policy;

struct minlsh_dedup {
    minlsh_allocator alloc;
    minlsh_dedup_options opts;
    char *tmpdir;              /* a copy of opts.tmpdir */
    minlsh_shingler *shingler; /* private copies */
    minlsh_family *family;
    uint32_t k, bands, rows;
    /* The leading values of a signature that are read (the band keys') and
     * kept pending: bands x rows with exact verification, else k. */
    uint32_t sig_values;
    minlsh__pool *pool; /* the caller's (pool_shared), or made on first use */
    int pool_shared;
    int pool_busy;      /* a background run (spare chunks) is under way */
    pthread_mutex_t file_mu;
    int file_mu_made;
    int ran;

    /* per document */
    uint64_t *rec;     /* where its record is */
    uint64_t *lengths; /* KEEP_LONGEST only */
    size_t n_docs, cap_docs;
    uint64_t empty; /* documents with no shingle */

    /* the records: in chunks that never move (a growing array would copy
     * them all at every step) until the budget's share is used, then in
     * the data file, written through a buffer */
    minlsh__dedup_chunks chunks;
    minlsh__tmpfile data, runs_file, cand_file, dec_file;
    uint8_t *wbuf;
    size_t wlen, wcap;
    uint64_t wbase;     /* data-file offset of wbuf[0] */
    uint64_t temp_peak; /* most bytes the temporary files held at once */
    uint64_t run_bytes; /* bytes of band and fingerprint runs in memory */
    int records_in_file; /* the records' share is used: the next go to the file */

    /* The documents not yet banded: their numbers, signatures and
     * fingerprint records. Every batch adds one sorted run to each band and
     * one to the fingerprints. */
    uint32_t *pend_docs, *pend_sigs;
    minlsh__kv *pend_fps;
    size_t pend_n, pend_cap, pend_held; /* pending, a batch, room for */
    minlsh__dedup_runs *band_runs; /* bands of them */
    uint64_t *batch_keys;          /* scratch of a batch: its band keys */
    size_t batch_keys_cap;
    minlsh__kv **sort_tmp;         /* and each worker's sorting space */
    uint32_t *sort_hist;           /* and histogram (MINLSH__SPREAD_HIST each) */
    size_t n_sort_tmp, sort_tmp_cap;
    minlsh__dedup_runs fp_runs;

    minlsh__dedup_ids ids;
    void *intake_scratch; /* minlsh_dedup_add_docs', kept between calls */
    size_t intake_bytes;

    /* scratch of minlsh_dedup_add_texts, kept between calls */
    minlsh_shingleset **batch_sets;
    size_t batch_cap;

    /* results of the run */
    uint32_t *exact_of;        /* the first document of each one's exact group */
    uint64_t *copies;          /* while finding candidates: a bit for each
                                  document that is not its group's first */
    minlsh__dedup_edge *edges; /* verified, sorted by (a, b) */
    size_t n_edges;
    uint64_t exact_groups, candidates, capped, n_kept;
    minlsh_dedup_decision *decisions; /* or in dec_file */
};

/* ids.c */
/* The varint of v written at out; its bytes. */
size_t minlsh__dedup_varint(uint8_t *out, uint64_t v);
size_t minlsh__dedup_varint_size(uint64_t v);
/* Room for entry number ids.n, of bytes bytes: *out is where it goes. */
int minlsh__dedup_id_place(minlsh_dedup *d, size_t bytes, uint8_t **out);
/* Entries with no id for documents ids.n .. upto - 1 (documents added
 * without one once ids are on, or before they were). */
int minlsh__dedup_ids_fill(minlsh_dedup *d, uint64_t upto);
/* Document doc's entry: its kind, bytes and length. */
void minlsh__dedup_id_get(const minlsh__dedup_ids *t, uint64_t doc, uint32_t *kind,
                          const uint8_t **s, size_t *n);
/* The hash of an id: its shard (top bits), its slot and tag (low bits). */
uint64_t minlsh__dedup_id_hash(const minlsh__dedup_ids *t, const void *s, size_t n, uint32_t kind);
#define MINLSH__DEDUP_ID_SHARD(h) ((size_t)((h) >> 58))
/* Slots in shard sh for want ids at most 3/4 full (up to the most a table
 * has); the slots there move over by their stored hashes. Only the
 * shard's owner calls this. */
int minlsh__dedup_id_grow(minlsh_dedup *d, minlsh__dedup_id_shard *sh, uint64_t want);
void minlsh__dedup_ids_free(minlsh_dedup *d);
/* Memory the ids hold. */
uint64_t minlsh__dedup_ids_bytes(const minlsh_dedup *d);

/* policy.c */
/* The engine's bands and rows, planned from its options. */
int minlsh__dedup_plan(minlsh_dedup *d);
/* The budget in bytes for the options' memory field: 0 is the default,
 * MINLSH_DEDUP_MEMORY_UNLIMITED none (then 0 here). */
uint64_t minlsh__dedup_budget(uint64_t memory);
/* 1 if the n bytes at id are a JSON id in minlsh_dedup_canonical_id's form
 * already (a plain string or integer, as the command hands them over):
 * then they are the canonical form, unchanged. 0 means "maybe not". */
int minlsh__dedup_id_is_canonical(const void *id, size_t n);
/* 1 if the n hashes at v are strictly increasing (a valid set). */
int minlsh__dedup_increasing(const uint64_t *v, size_t n);

/* decide.c */
/* The decisions of the policy, emitted in document order in chunks;
 * similarity is NaN for a dropped document that is neither an exact copy
 * nor a verified neighbour of its representative. */
int minlsh__dedup_decide(const minlsh__dedup_policy *p, const minlsh_allocator *a,
                         minlsh__dedup_emit emit, void *ctx);
/* parent[i] for each of n documents: the smallest document of its
 * component of the edges and the exact groups (exact_of; NULL: none). */
void minlsh__dedup_join(uint32_t *parent, uint64_t n, const uint32_t *exact_of,
                        const minlsh__dedup_edge *edges, size_t n_edges);

/* records.c */
/* n bytes (8-aligned) of record memory that stay where they are until the
 * engine is freed. */
int minlsh__dedup_chunk_take(minlsh_dedup *d, size_t n, uint8_t **out);
/* The data file opened and its write buffer made, for the first record
 * past the records' share. */
int minlsh__dedup_data_start(minlsh_dedup *d);
/* Write the data file's buffer out. */
int minlsh__dedup_wflush(minlsh_dedup *d);
/* 1 if a record of bytes bytes goes to the data file: the records' share
 * of the budget is used, or a new chunk for it would pass it (from then
 * on every record does). */
int minlsh__dedup_to_file(minlsh_dedup *d, size_t bytes);
/* Store a document's record (fp, n, then body_bytes of body): in memory
 * while the records' share of the budget allows, then in the data file for
 * good; *at receives its address. */
int minlsh__dedup_store(minlsh_dedup *d, const uint8_t *fp, const void *body, size_t body_bytes,
                        uint64_t n, uint64_t *at);
/* Room for twice as many pending documents, up to a batch. */
int minlsh__dedup_pend_grow(minlsh_dedup *d);
/* Room for m more documents' record addresses (and lengths). */
int minlsh__dedup_docs_reserve(minlsh_dedup *d, size_t m);
/* f, opened if it is not yet. Errors: MINLSH_E_IO. */
int minlsh__dedup_file(minlsh_dedup *d, minlsh__tmpfile *f);
/* rc, as a public call returns it: after MINLSH_E_IO errno is set, on the
 * caller's thread, to the failure of a temporary file (which may have been
 * on a worker), and the files' failures are forgotten for the next call. */
int minlsh__dedup_io_result(minlsh_dedup *d, int rc);
/* Bytes the budget gives to a part, in sixteenths (all of it without a
 * budget): records 1, band and fingerprint runs 1, pending documents 1,
 * candidate buffers 1 and runs 1, decisions 2 (once candidates are gone),
 * so a quarter at most at any time; the rest is left to what grows with
 * the documents (8 to 16 bytes each here, more in the caller). */
uint64_t minlsh__dedup_share(const minlsh_dedup *d, unsigned sixteenths);
/* Note the bytes the temporary files hold now, if the most so far. */
void minlsh__dedup_temp_peak(minlsh_dedup *d);
/* The engine's pool, made on first use (NULL if it cannot be: then the
 * calling thread does everything), once its background work is done. */
minlsh__pool *minlsh__dedup_pool(minlsh_dedup *d);
/* Start making up to want spare chunks for the records to come, in the
 * background on the pool, as far as the records' share of the budget
 * allows (nothing without a second thread). */
void minlsh__dedup_chunks_prepare(minlsh_dedup *d, size_t want);
/* Read n bytes of the data file at off (written or still buffered). */
int minlsh__dedup_data_read(const minlsh_dedup *d, uint64_t off, void *p, size_t n);
/* The head of document i's record. */
int minlsh__dedup_rec_head(const minlsh_dedup *d, uint64_t i, minlsh__dedup_rec *out);
/* Document i's set (head->n hashes, exact verification) or signature (k
 * values, signature verification): in memory, or read into *buf (cap: its
 * 8-byte words). The head goes to *head. */
int minlsh__dedup_rec_body(const minlsh_dedup *d, uint64_t i, minlsh__dedup_rec *head,
                           uint64_t **buf, size_t *cap, const void **out);

/* runs.c */
/* A sorted run of n records: kept in memory (v is taken over) or, with
 * in_file, written to f (v is freed); appended to rs. */
int minlsh__dedup_run_store(minlsh_dedup *d, minlsh__tmpfile *f, int in_file,
                            minlsh__dedup_runs *rs, minlsh__kv *v, size_t n);
/* Free rs's runs and its list (rs itself stays, empty). */
void minlsh__dedup_runs_free(minlsh_dedup *d, minlsh__dedup_runs *rs);
/* What a merge may assume. HASHED: the keys are hashes (spread evenly),
 * which lets a merge of runs in memory go by ranges of keys. SHARED: the
 * caller acts only on keys that two or more records have, so a record
 * whose key no other has may be left out (a merge by ranges leaves them
 * out; a tournament does not). */
#define MINLSH__DEDUP_MERGE_HASHED 1u
#define MINLSH__DEDUP_MERGE_SHARED 2u
/* A merge of the records of the n_runs runs in f whose keys are in [lo,
 * hi), or from lo on when whole_tail is set. Free it with merge_free. */
int minlsh__dedup_merge_init(minlsh__dedup_merge *m, const minlsh_dedup *d,
                             const minlsh__tmpfile *f, const minlsh__dedup_run *runs, size_t n_runs,
                             uint64_t lo, uint64_t hi, int whole_tail, unsigned flags);
/* How many parts a merge is split into by key, for the pool's workers to
 * take one at a time. */
size_t minlsh__dedup_parts(minlsh_dedup *d);
/* The merge of part `part` of `parts`: keys [part * span, (part + 1) *
 * span), the last part to the end. */
int minlsh__dedup_merge_part(minlsh__dedup_merge *m, const minlsh_dedup *d,
                             const minlsh__tmpfile *f, const minlsh__dedup_run *runs, size_t n_runs,
                             uint64_t span, size_t part, size_t parts, unsigned flags);
/* The least record left into *out; 1 if there was one, 0 at the end, or a
 * negative error. */
int minlsh__dedup_merge_next(minlsh__dedup_merge *m, minlsh__kv *out);
void minlsh__dedup_merge_free(minlsh__dedup_merge *m, size_t n_runs);
/* The order of records in runs and merges: by key, then document. */
MINLSH__INLINE int minlsh__dedup_kv_less(const minlsh__kv *x, const minlsh__kv *y) {
    return x->key < y->key || (x->key == y->key && x->val < y->val);
}

/* banding.c */
/* Band the pending documents and sort their fingerprints: one sorted run
 * more per band and one more of fingerprints. more: documents may follow
 * (then memory for their records is made ready in the background). */
int minlsh__dedup_flush(minlsh_dedup *d, int more);
/* Free the scratch kept from batch to batch, once no batch follows. */
void minlsh__dedup_batch_scratch_free(minlsh_dedup *d);

/* exact.c */
/* exact_of (each document's group: the first document with its
 * fingerprint), exact_groups (groups of two or more) and copies. */
int minlsh__dedup_exact(minlsh_dedup *d);

/* verify.c */
/* The verified similarity of documents a and b: exact Jaccard of their
 * sets, or the signature estimate. */
int minlsh__dedup_similarity(const minlsh_dedup *d, minlsh__dedup_scratch *s, uint32_t a,
                             uint32_t b, double *out);
/* The signature of document i into sig (k values): read, or made again
 * from its set. */
int minlsh__dedup_signature(const minlsh_dedup *d, uint64_t i, uint32_t *sig);
/* A scratch for each of the pool's workers (*n of them); NULL without
 * memory. */
minlsh__dedup_scratch *minlsh__dedup_scratch_new(minlsh_dedup *d, size_t *n);
void minlsh__dedup_scratch_free(minlsh_dedup *d, minlsh__dedup_scratch *s, size_t n);
/* Candidate runs merged without repeats (and without those in done) and
 * verified: the edges, sorted by (a, b), into *edges (*n_edges of them);
 * the candidates verified are added to d->candidates. */
int minlsh__dedup_verify_runs(minlsh_dedup *d, const minlsh__dedup_run *all, size_t n_all,
                              const minlsh__dedup_run *done, size_t n_done,
                              minlsh__dedup_edge **edges, size_t *n_edges);

/* cands.c */
/* The verified edges, into d->edges (sorted by (a, b)), with the counts
 * candidates and capped. */
int minlsh__dedup_find(minlsh_dedup *d);

#endif /* MINLSH_DEDUP_H */
