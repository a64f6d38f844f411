/*
 * lib/dedup: the dedup engine, the layer above lib/lsh. It owns the policy
 * every front end used to write for itself (docs/dedup.md): exact groups by
 * fingerprint, signing on threads, band keys, candidates with a hot-bucket
 * cap, verification, connected components or strict attribution, and a keep
 * or drop decision for every document.
 *
 * Storage, per document: its exact group and its length (16 bytes). Per
 * exact group (distinct text): its first document, size and set (32), its
 * signature (4k), and with exact verification its shingle set (8 bytes a
 * shingle, copied once, into one arena). After the run, a decision per
 * document (32) and the verified pairs (16 each). Time: adding is linear; the run sorts the
 * (band key, group) records of each band (linear radix passes) and verifies
 * each distinct candidate pair once.
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
    uint64_t first;          /* its first document */
    uint64_t size;           /* its documents */
    uint64_t set_off, set_n; /* its shingle set in the arena (exact only) */
} minlsh__dedup_group;

struct minlsh_dedup {
    minlsh_allocator alloc;
    minlsh_dedup_options opts;
    minlsh_shingler *shingler; /* private copies */
    minlsh_family *family;
    uint32_t k, bands, rows;
    minlsh__pool *pool; /* made on first use */
    int ran;

    minlsh__dedup_doc *docs;
    size_t n_docs, cap_docs;

    /* exact groups: fingerprint table, first document, signature, set */
    minlsh__dedup_fp *fps;
    size_t fp_mask; /* table size - 1; 0: no table yet */
    minlsh__dedup_group *groups;
    uint32_t *sigs; /* k values per group, cap_sigs groups */
    size_t n_groups, cap_groups, cap_sigs;
    uint64_t *arena;
    size_t arena_n, arena_cap;
    uint64_t empty;        /* documents with an empty set */
    uint64_t exact_groups; /* groups of two or more */

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

/* run.c */
int minlsh__dedup_plan(minlsh_dedup *d);
/* The verified similarity of exact groups ga and gb: exact Jaccard of their
 * sets, or the signature estimate. */
double minlsh__dedup_similarity(const minlsh_dedup *d, uint32_t ga, uint32_t gb);
/* The engine's pool, made on first use (NULL if it cannot be: then the
 * calling thread does everything). */
minlsh__pool *minlsh__dedup_pool(minlsh_dedup *d);

#endif /* MINLSH_DEDUP_H */
