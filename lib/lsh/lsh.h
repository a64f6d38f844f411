/*
 * lib/lsh internal: the band index structure and the helpers its files
 * share (docs/lsh.md has the design and the memory figures).
 *
 * Layout. Documents live in slots 0..n_slots-1 (recycled through a free
 * list). Per slot: the id, a copy of the k signature values, a state byte
 * and, per band, one link record {next, prev}. Per band, an open-addressing
 * table (linear probing) of buckets {tag, head}: tag is the high 32 bits of
 * the 64-bit band key, head the first member's slot. The low 32 bits of the
 * key are kept in the head member's prev field, which a head does not need,
 * so a bucket costs 8 bytes and the full key is still compared. Members of a
 * bucket form a doubly-linked list through the link records, so insert and
 * remove are O(1) however large the bucket.
 */
#ifndef MINLSH_LSH_H
#define MINLSH_LSH_H

#include "common/common.h"

/* "no slot": list ends and empty table entries. */
#define MINLSH__LSH_NIL UINT32_C(0xFFFFFFFF)
/* Slots are 0..2^32-3, so a slot index never equals NIL. */
#define MINLSH__LSH_MAX_DOCS UINT32_C(0xFFFFFFFE)

#define MINLSH__LSH_FREE 0       /* slot not in use */
#define MINLSH__LSH_BUCKETED 1   /* live, linked into one bucket per band */
#define MINLSH__LSH_EMPTYSIG 2   /* live, empty-set signature: in no bucket */

typedef struct minlsh__lsh_entry {
    uint32_t tag; /* high 32 bits of the key (band table) or of mix64(id) */
    uint32_t val; /* head slot / slot; NIL marks an empty entry */
} minlsh__lsh_entry;

typedef struct minlsh__lsh_link {
    uint32_t next; /* next member of the bucket, or NIL */
    uint32_t prev; /* previous member; for the head: low 32 bits of the key */
} minlsh__lsh_link;

/* An open-addressing table whose home position comes from the tag alone, so
 * it can be rehashed and have entries deleted (backward shift) without
 * looking anything else up. */
typedef struct minlsh__lsh_table {
    minlsh__lsh_entry *e;
    size_t cap;     /* 0 or a power of two, at most 2^32 */
    size_t used;
    unsigned shift; /* 32 - log2(cap): home = tag >> shift */
} minlsh__lsh_table;

struct minlsh_index {
    minlsh_allocator alloc;
    uint32_t k, bands, rows;
    uint64_t seed, config_id;
    size_t count;       /* live documents */
    size_t n_slots;     /* slots ever handed out (high-water mark) */
    size_t slot_cap;
    uint32_t free_head; /* free slots, chained through ids[] */
    uint64_t *ids;      /* slot_cap */
    uint32_t *sigs;     /* slot_cap * k */
    uint8_t *state;     /* slot_cap, MINLSH__LSH_* */
    minlsh__lsh_link *links; /* slot_cap * bands, slot-major */
    minlsh__lsh_table idt;   /* id -> slot */
    minlsh__lsh_table *band; /* bands tables: band key -> bucket */
    uint8_t *meta;
    size_t meta_len;
};

MINLSH__INLINE const uint32_t *minlsh__lsh_sig(const minlsh_index *ix, size_t slot) {
    return ix->sigs + slot * ix->k;
}

MINLSH__INLINE minlsh__lsh_link *minlsh__lsh_link_at(const minlsh_index *ix,
                                                     size_t slot, uint32_t j) {
    return ix->links + slot * ix->bands + j;
}

/* bandkey.c: the b keys of sig, no argument checks (b*r <= length of sig). */
void minlsh__lsh_band_keys(const uint32_t *sig, uint32_t bands, uint32_t rows,
                           uint64_t *keys);

/* index.c */
/* A new empty index; the caller has validated the parameters. */
int minlsh__lsh_index_create(minlsh_index **out, uint32_t k, uint64_t seed,
                             uint64_t config_id, uint32_t bands, uint32_t rows,
                             const minlsh_allocator *alloc);
/* The slot of id, or NIL. */
uint32_t minlsh__lsh_find_id(const minlsh_index *ix, uint64_t id);
/* The head slot of the bucket (band j, key), or NIL. */
uint32_t minlsh__lsh_bucket_head(const minlsh_index *ix, uint32_t j, uint64_t key);
/* Insert a document known to be absent (k values). Leaves the index
 * unchanged on error. */
int minlsh__lsh_insert(minlsh_index *ix, uint64_t id, const uint32_t *sig);
/* Make room for n documents in the slot arrays and the id table. */
int minlsh__lsh_reserve(minlsh_index *ix, size_t n);

/* sort.c: ascending, in place, O(n log n) worst case. */
void minlsh__lsh_sort_u64(uint64_t *v, size_t n);
/* Drop adjacent duplicates of a sorted array; returns the new length. */
size_t minlsh__lsh_unique_u64(uint64_t *v, size_t n);

/* clusters.c: union-find over n nodes (parent/size arrays of n). */
typedef struct minlsh__lsh_uf {
    uint32_t *parent;
    uint32_t *size;
} minlsh__lsh_uf;

int minlsh__lsh_uf_init(minlsh__lsh_uf *uf, const minlsh_allocator *a, size_t n);
void minlsh__lsh_uf_free(minlsh__lsh_uf *uf, const minlsh_allocator *a);
uint32_t minlsh__lsh_uf_find(minlsh__lsh_uf *uf, uint32_t x);
void minlsh__lsh_uf_union(minlsh__lsh_uf *uf, uint32_t x, uint32_t y);

#endif /* MINLSH_LSH_H */
