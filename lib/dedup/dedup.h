/*
 * lib/dedup: the dedup engine, the layer above lib/lsh. It owns the policy
 * every front end used to write for itself (docs/dedup.md): exact groups by
 * fingerprint, signing on threads, band keys, candidates with a hot-bucket
 * cap, verification, connected components or strict attribution, and a keep
 * or drop decision for every document.
 *
 * One algorithm whatever the memory: band keys are computed in batches of
 * distinct texts and kept per band as sorted runs of (key, group) records;
 * candidates are kept as sorted runs of group pairs. Without a memory budget
 * every band has one run, in memory, and so do the candidates; with one, a
 * run that would pass the budget is written to a temporary file, and so are
 * the shingle sets and signatures, which are read back one at a time when a
 * pair is verified. Runs are merged in a fixed order, so the result is the
 * same for any budget and any thread count.
 *
 * Memory, per document: 16 bytes (group, length). Per distinct text: the
 * group record (48) and 24 bytes of fingerprint table, and, without a
 * budget, its signature (4k), its set (8 bytes a shingle) and its band
 * records (16 per band). With a budget those live in files (temp bytes:
 * 4k + 8 per shingle + 16b per distinct text, plus 16 per candidate pair).
 *
 * Internal: every name minlsh__dedup_*; the public functions are in
 * include/minlsh.h (experimental part).
 */
#ifndef MINLSH_DEDUP_H
#define MINLSH_DEDUP_H

#include "common/common.h"
#include "common/pool.h"
#include "common/sort.h"

#define MINLSH__DEDUP_NONE UINT64_MAX
/* Groups are union-find nodes of 32 bits. */
#define MINLSH__DEDUP_MAX_GROUPS (UINT32_MAX - 1)

/* A verified pair of exact groups (ga < gb) and its similarity. */
typedef struct minlsh__dedup_edge {
    uint32_t ga, gb;
    double sim;
} minlsh__dedup_edge;

/* One fingerprint slot: the 16 bytes and the group plus one (0: free). */
typedef struct minlsh__dedup_fp {
    uint8_t fp[MINLSH_FINGERPRINT_BYTES];
    uint64_t group_plus1;
} minlsh__dedup_fp;

typedef struct minlsh__dedup_doc {
    uint64_t length;
    uint32_t group;
} minlsh__dedup_doc;

typedef struct minlsh__dedup_group {
    uint64_t first;   /* its first document */
    uint64_t size;    /* its documents */
    uint64_t set_off; /* its set and its signature: addresses in memory, or
                         byte offsets in the data file */
    uint64_t set_n;
    uint64_t sig_off;
    uint32_t empty;   /* no shingle: never a near-duplicate */
} minlsh__dedup_group;

/* Storage that only grows, in chunks of at least MINLSH__DEDUP_CHUNK_BYTES. */
typedef struct minlsh__dedup_chunks {
    uint8_t **v;
    size_t n, cap;
    size_t used, size; /* bytes used and held by the last chunk */
    uint64_t bytes;    /* held by all */
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

/* Scratch of one worker: the two sets or signatures being compared. */
typedef struct minlsh__dedup_scratch {
    uint64_t *a, *b;
    size_t cap_a, cap_b;
} minlsh__dedup_scratch;

struct minlsh_dedup {
    minlsh_allocator alloc;
    minlsh_dedup_options opts;
    char *tmpdir;              /* a copy of opts.tmpdir */
    minlsh_shingler *shingler; /* private copies */
    minlsh_family *family;
    uint32_t k, bands, rows;
    int spill;          /* a memory budget is set */
    minlsh__pool *pool; /* made on first use */
    int ran;

    minlsh__dedup_doc *docs;
    size_t n_docs, cap_docs;

    /* exact groups: fingerprint table and records */
    minlsh__dedup_fp *fps;
    size_t fp_mask; /* table size - 1; 0: no table yet */
    minlsh__dedup_group *groups;
    size_t n_groups, cap_groups;
    uint64_t empty;        /* documents with an empty set */
    uint64_t exact_groups; /* groups of two or more */

    /* without a budget: signatures and sets in memory, in chunks that never
     * move (a growing array would copy them all at every step); a group's
     * set_off and sig_off are then their addresses */
    minlsh__dedup_chunks chunks;
    /* with one: sets and signatures in the data file, written through a
     * buffer; band runs and candidate runs in files of their own */
    minlsh__tmpfile data, band_file, cand_file;
    uint8_t *wbuf;
    size_t wlen, wcap;
    uint64_t wbase;     /* data-file offset of wbuf[0] */
    uint64_t temp_peak; /* most bytes the temporary files held at once */

    /* Band keys are made in batches of distinct texts: with a budget, the
     * signatures of the texts not yet banded wait here (pend_n of them,
     * groups pend_first ..), and every batch adds one sorted run to each
     * band; without one, the whole corpus is one batch at the run. */
    uint32_t *pend_sigs;
    size_t pend_n, pend_cap, pend_first;
    minlsh__dedup_runs *band_runs; /* bands of them */

    /* scratch of minlsh_dedup_add_texts, kept between calls */
    minlsh_shingleset **batch_sets;
    size_t batch_cap;

    /* results of the run */
    minlsh__dedup_edge *edges; /* verified, sorted by (ga, gb) */
    size_t n_edges;
    uint64_t candidates, capped;
    minlsh_dedup_decision *decisions;
    uint64_t n_kept;
};

/* engine.c */
/* Read n bytes of the data file at off (written or still buffered). */
int minlsh__dedup_data_read(const minlsh_dedup *d, uint64_t off, void *p, size_t n);

/* run.c */
int minlsh__dedup_plan(minlsh_dedup *d);
/* Band the pending texts: one sorted run more per band (to the band file
 * with a budget). */
int minlsh__dedup_flush_bands(minlsh_dedup *d);
/* The verified similarity of exact groups ga and gb: exact Jaccard of their
 * sets, or the signature estimate. s: the worker's scratch (sets read from
 * the data file go there). */
int minlsh__dedup_similarity(const minlsh_dedup *d, minlsh__dedup_scratch *s, uint32_t ga,
                             uint32_t gb, double *out);
/* The k values of group g: in memory, or read into buf (k entries). */
const uint32_t *minlsh__dedup_sig(const minlsh_dedup *d, uint32_t g, uint32_t *buf);
/* The engine's pool, made on first use (NULL if it cannot be: then the
 * calling thread does everything). */
minlsh__pool *minlsh__dedup_pool(minlsh_dedup *d);

#endif /* MINLSH_DEDUP_H */
