/*
 * lib/lsh internal: the band index structure and the helpers its files
 * share (docs/lsh.md section 4 has the design and the memory figures).
 *
 * Layout. A document lives in a slot (its id and its links); documents with
 * identical signatures share one group, which holds the signature once and
 * is the only thing banded, so a million copies of one page cost one bucket
 * entry per band. Per group: its member count and first member, and, in a
 * store of their own, the k values (whole cache lines at the usual k, which
 * insert writes with streaming stores: no line is read only to be
 * overwritten). Per band, an ordered open-addressing table (table.c) of
 * buckets {high 32 bits of the band key, value}; the rest of the key is
 * checked against the bucket's first group (the band's values, or in the
 * rare case they differ, its band key recomputed). The value of a bucket
 * of one group is that group; a bucket of several is a chain of nodes
 * {group, next} (value MINLSH__LSH_CHAIN | first node). Most buckets hold
 * one group, so a (group, band) costs one 8-byte entry and nothing else,
 * which leaves room in the memory budget for tables at a lower load
 * (faster inserts: shorter runs to shift); shared buckets pay 8 bytes per
 * group in them.
 *
 * Slots and groups live in chunked arrays (fixed 4096-element chunks after
 * a first chunk that grows by doubling), so growing never copies a
 * signature and the slack is at most one chunk.
 *
 * Files: index.c creates, frees and changes an index (insert, remove,
 * table growth), query.c reads it, persist.c saves and loads it, table.c
 * and store.c are its tables and chunked arrays, prefetch.h the software
 * prefetch that index.c and query.c share.
 */
#ifndef MINLSH_LSH_H
#define MINLSH_LSH_H

#include "common/common.h"
#include "common/sort.h"

/* "no slot / no group": list ends and empty table entries. */
#define MINLSH__LSH_NIL UINT32_C(0xFFFFFFFF)
/* Slots are 0..2^32-3, so a slot number never equals NIL. */
#define MINLSH__LSH_MAX_DOCS UINT32_C(0xFFFFFFFE)
/* A bucket value with this bit is a chain; groups and nodes are numbered
 * 0..2^31-2, so neither a group nor CHAIN | node equals NIL. */
#define MINLSH__LSH_CHAIN UINT32_C(0x80000000)
#define MINLSH__LSH_MAX_GROUPS UINT32_C(0x7FFFFFFF)
/* Maximum load of the band tables, in 64ths (0.703): between 11.6 and 14.4
 * bytes per (bucket, band) with the tail. */
#define MINLSH__LSH_BAND_LOAD 45

/* "mlshband" read as a little-endian 64-bit integer: the second word of
 * every band key's SipHash key (docs/lsh.md section 3). */
#define MINLSH__BAND_KEY_SALT UINT64_C(0x646e616268736c6d)

/* ---- ordered open-addressing tables (table.c) ----------------------------- */

/* An entry: a 32-bit tag (high half of a 64-bit hash) and a 32-bit value;
 * val == NIL marks an empty entry. */
typedef struct minlsh__lsh_entry {
    uint32_t tag;
    uint32_t val;
} minlsh__lsh_entry;

/* Linear probing with a monotone home, home(tag) = tag * cap / 2^32, and
 * entries kept in tag order (a new entry shifts the rest of its run one
 * place right; a deleted one lets it shift back). Being sorted, the table
 * can be rehashed to any size in one sequential pass, so it grows by 5/4
 * (never by 2) and, as it grows, its load stays between 4/5 of its maximum
 * and the maximum. The maximum is max_load: 7/8 for the id and signature
 * tables (the default; 9.1 to 11.5 bytes per entry), 45/64 for the band
 * tables (MINLSH__LSH_BAND_LOAD; 11.4 to 14.2 bytes per entry, before the
 * tail). Lookups stop at the first larger tag. No wrap-around: entries past cap go into a tail,
 * whose last entry is always kept empty. */
typedef struct minlsh__lsh_table {
    minlsh__lsh_entry *e; /* len entries */
    size_t cap;           /* home positions: 0 or 16..2^32 */
    size_t len;           /* cap plus the tail */
    size_t used;
    unsigned max_load;    /* in 64ths, 1..63; 0 means 56 (7/8) */
} minlsh__lsh_table;

/* used entries fit cap home positions at t's maximum load */
MINLSH__INLINE int minlsh__tab_fits(const minlsh__lsh_table *t, size_t cap, size_t used) {
    uint64_t ml = t->max_load != 0 ? t->max_load : 56;
    return (uint64_t)used <= ((uint64_t)cap * ml) >> 6;
}

MINLSH__INLINE size_t minlsh__tab_home(const minlsh__lsh_table *t, uint32_t tag) {
    return (size_t)(((uint64_t)tag * (uint64_t)t->cap) >> 32);
}

/* The first position at or after tag's home holding an empty entry or an
 * entry with a tag >= tag (entries with this tag follow from there). The
 * table must have cap > 0. */
MINLSH__INLINE size_t minlsh__tab_seek(const minlsh__lsh_table *t, uint32_t tag) {
    size_t p = minlsh__tab_home(t, tag);
    while (t->e[p].val != MINLSH__LSH_NIL && t->e[p].tag < tag) p++;
    return p;
}

/* Room for `extra` more entries (load at most t's max_load) and an empty
 * last entry, which is what one insert needs: call it before every insert.
 * On failure the table is unchanged. 0, MINLSH_E_NOMEM, MINLSH_E_TOOBIG. */
int minlsh__tab_reserve(const minlsh_allocator *a, minlsh__lsh_table *t, size_t extra);
/* minlsh__tab_reserve(a, t, 1) with the usual case inline: room already. */
MINLSH__INLINE int minlsh__tab_reserve1(const minlsh_allocator *a, minlsh__lsh_table *t) {
    if (t->cap != 0 && minlsh__tab_fits(t, t->cap, t->used + 1) &&
        t->e[t->len - 1].val == MINLSH__LSH_NIL)
        return 0;
    return minlsh__tab_reserve(a, t, 1);
}
/* Put x at position p (a position minlsh__tab_seek could give for x.tag,
 * possibly advanced past entries of equal tag). Needs a reserved place. */
void minlsh__tab_insert_at(minlsh__lsh_table *t, size_t p, minlsh__lsh_entry x);
/* Delete the entry at p (backward shift: no tombstones). */
void minlsh__tab_delete_at(minlsh__lsh_table *t, size_t p);
void minlsh__tab_free(const minlsh_allocator *a, minlsh__lsh_table *t);
/* Bytes allocated. */
size_t minlsh__tab_bytes(const minlsh__lsh_table *t);

/* ---- chunked arrays (store.c) --------------------------------------------- */

#define MINLSH__STORE_SHIFT 12
#define MINLSH__STORE_CHUNK ((size_t)1 << MINLSH__STORE_SHIFT)

typedef struct minlsh__lsh_store {
    unsigned char **chunk; /* n_chunks pointers */
    size_t n_chunks, chunk_cap;
    size_t first_cap; /* elements in chunk 0 (grows to MINLSH__STORE_CHUNK) */
    size_t elem;      /* bytes per element */
} minlsh__lsh_store;

MINLSH__INLINE void *minlsh__store_at(const minlsh__lsh_store *s, size_t i) {
    return s->chunk[i >> MINLSH__STORE_SHIFT] + (i & (MINLSH__STORE_CHUNK - 1)) * s->elem;
}
/* Elements that fit without allocating. */
MINLSH__INLINE size_t minlsh__store_cap(const minlsh__lsh_store *s) {
    return s->n_chunks <= 1 ? (s->n_chunks == 0 ? 0 : s->first_cap)
                            : s->n_chunks * MINLSH__STORE_CHUNK;
}
/* Room for at least n elements. On failure the store is unchanged. */
int minlsh__store_reserve(const minlsh_allocator *a, minlsh__lsh_store *s, size_t n);
void minlsh__store_free(const minlsh_allocator *a, minlsh__lsh_store *s);
size_t minlsh__store_bytes(const minlsh__lsh_store *s);

/* ---- the index ------------------------------------------------------------- */

/* A slot's links: its group (NIL: a free slot) and its neighbours in the
 * group's member list (a free slot's next chains the free list). */
typedef struct minlsh__lsh_doc {
    uint32_t group;
    uint32_t next;
    uint32_t prev;
} minlsh__lsh_doc;

/* A group record; the k values are in ix->sigs. count 0: a free group
 * (head chains the free list). head_id saves a query two dependent cache
 * misses for the common group of one. */
typedef struct minlsh__lsh_group {
    uint64_t head_id; /* id of the first member */
    uint32_t count;   /* members */
    uint32_t head;    /* first member slot */
} minlsh__lsh_group;

struct minlsh_index {
    minlsh_allocator alloc;
    uint32_t k, bands, rows;
    uint32_t scheme; /* the family's MINLSH_SCHEME_*: the header's flags */
    uint64_t seed, config_id;
    size_t count;        /* live documents */
    size_t n_slots;      /* slots ever handed out (high-water mark) */
    size_t n_groups;     /* groups ever handed out */
    size_t live_groups;
    uint32_t free_slot;  /* free slots, chained through doc.next */
    uint32_t free_group; /* free groups, chained through group.head */
    uint32_t empty_group; /* the group of the empty signature, or NIL */
    size_t n_nodes;       /* chain nodes ever handed out */
    uint32_t free_node;   /* free nodes, chained through node.next */
    minlsh__lsh_store ids;    /* uint64_t per slot */
    minlsh__lsh_store docs;   /* minlsh__lsh_doc per slot */
    minlsh__lsh_store groups; /* minlsh__lsh_group per group */
    minlsh__lsh_store sigs;   /* k values per group */
    minlsh__lsh_store nodes;  /* minlsh__lsh_node: chains of shared buckets */
    minlsh__lsh_table idt;    /* hash of id -> slot */
    minlsh__lsh_table sigt;   /* hash of the signature -> group */
    minlsh__lsh_table *band;  /* bands tables: band key -> group or chain */
    minlsh__metadata meta;
    struct minlsh__lsh_map *map; /* a mapped file (mapped.c): read in place; NULL if none */
    minlsh_index *delta; /* a mapped handle's inserts since the file (NULL: none yet) */
    uint64_t file_tag;   /* the last 8 bytes of the file it came from (0: none) */
    uint64_t file_bytes; /* that file's size */
    char *file_path;     /* that file, links followed (NULL: a buffer, or none):
                            a journal created for it takes its mode and group */
};

/* Remember path as the file ix came from (index_load, index_map); on
 * failure (MINLSH_E_NOMEM) ix is freed and *out cleared. */
int minlsh__lsh_note_file(minlsh_index **out, const char *path);

MINLSH__INLINE uint64_t *minlsh__lsh_id_at(const minlsh_index *ix, size_t slot) {
    return (uint64_t *)minlsh__store_at(&ix->ids, slot);
}
MINLSH__INLINE minlsh__lsh_doc *minlsh__lsh_doc_at(const minlsh_index *ix, size_t slot) {
    return (minlsh__lsh_doc *)minlsh__store_at(&ix->docs, slot);
}
MINLSH__INLINE minlsh__lsh_group *minlsh__lsh_group_at(const minlsh_index *ix, size_t g) {
    return (minlsh__lsh_group *)minlsh__store_at(&ix->groups, g);
}
/* A link of a shared bucket's chain: the bucket's groups in order, the
 * first one (whose values the bucket's key is checked against) first. */
typedef struct minlsh__lsh_node {
    uint32_t group;
    uint32_t next; /* node, or NIL */
} minlsh__lsh_node;
MINLSH__INLINE minlsh__lsh_node *minlsh__lsh_node_at(const minlsh_index *ix, size_t n) {
    return (minlsh__lsh_node *)minlsh__store_at(&ix->nodes, n);
}
/* The first group of the bucket whose table value is v (not NIL). */
MINLSH__INLINE uint32_t minlsh__lsh_bucket_first(const minlsh_index *ix, uint32_t v) {
    return (v & MINLSH__LSH_CHAIN) ? minlsh__lsh_node_at(ix, v & ~MINLSH__LSH_CHAIN)->group : v;
}
/* The groups of a bucket one by one: start with *it = the table value,
 * call until it returns NIL. */
MINLSH__INLINE uint32_t minlsh__lsh_bucket_next(const minlsh_index *ix, uint32_t *it) {
    uint32_t v = *it;
    const minlsh__lsh_node *nd;
    if (v == MINLSH__LSH_NIL) return MINLSH__LSH_NIL;
    if (!(v & MINLSH__LSH_CHAIN)) {
        *it = MINLSH__LSH_NIL;
        return v;
    }
    nd = minlsh__lsh_node_at(ix, v & ~MINLSH__LSH_CHAIN);
    *it = nd->next == MINLSH__LSH_NIL ? MINLSH__LSH_NIL : (MINLSH__LSH_CHAIN | nd->next);
    return nd->group;
}
/* The k values of group g. */
MINLSH__INLINE uint32_t *minlsh__lsh_gsig(const minlsh_index *ix, size_t g) {
    return (uint32_t *)minlsh__store_at(&ix->sigs, g);
}

/* bandkey.c: the b keys of sig, no argument checks (b*r <= length of sig),
 * with the process's SIMD level. */
void minlsh__lsh_band_keys(const uint32_t *sig, uint32_t bands, uint32_t rows,
                           uint64_t *keys);
/* One band's key. */
uint64_t minlsh__lsh_band_key(const uint32_t *sig, uint32_t j, uint32_t rows);
/* The same key from band j's r values stored as 4r little-endian bytes (a
 * saved record): the bytes are the message, nothing is decoded. */
uint64_t minlsh__lsh_band_key_le(const uint8_t *band, uint32_t j, uint32_t rows);
typedef void (*minlsh__lsh_band_keys_fn)(const uint32_t *sig, uint32_t bands,
                                         uint32_t rows, uint64_t *keys);
void minlsh__lsh_band_keys_portable(const uint32_t *sig, uint32_t bands,
                                    uint32_t rows, uint64_t *keys);
#if MINLSH__WITH_AVX2
void minlsh__lsh_band_keys_avx2(const uint32_t *sig, uint32_t bands,
                                uint32_t rows, uint64_t *keys);
#endif
#if MINLSH__WITH_AVX512
void minlsh__lsh_band_keys_avx512(const uint32_t *sig, uint32_t bands,
                                  uint32_t rows, uint64_t *keys);
#endif

/* 1 if band j of group g has the 64-bit key `key` whose band values are
 * `vals` (r values): the values compare equal, or (a 64-bit key collision)
 * g's band key is `key` all the same. */
MINLSH__INLINE int minlsh__lsh_band_match(const minlsh_index *ix, uint32_t g, uint32_t j,
                                         uint64_t key, const uint32_t *vals) {
    const uint32_t *own = minlsh__lsh_gsig(ix, g) + (size_t)j * ix->rows;
    uint32_t i, diff = 0;
    for (i = 0; i < ix->rows; i++) diff |= own[i] ^ vals[i];
    if (diff == 0) return 1;
    /* Different values under the same 32-bit tag: the same bucket only if
     * the whole 64-bit keys collide. */
    return minlsh__lsh_band_key(minlsh__lsh_gsig(ix, g), j, ix->rows) == key;
}

/* Positions where a and b agree, with the process's SIMD level; every
 * implementation gives the same count. */
uint32_t minlsh__lsh_equal_count(const uint32_t *a, const uint32_t *b, uint32_t k);
typedef uint32_t (*minlsh__lsh_equal_count_fn)(const uint32_t *a, const uint32_t *b, uint32_t k);
uint32_t minlsh__lsh_equal_count_portable(const uint32_t *a, const uint32_t *b, uint32_t k);
#if MINLSH__WITH_AVX2
uint32_t minlsh__lsh_equal_count_avx2(const uint32_t *a, const uint32_t *b, uint32_t k);
#endif
#if MINLSH__WITH_AVX512
uint32_t minlsh__lsh_equal_count_avx512(const uint32_t *a, const uint32_t *b, uint32_t k);
#endif

/* persist.c: a saved record (id, then the k values, little-endian), given
 * to put(ctx, bytes, n) in pieces of at most a few KiB whatever k is. */
void minlsh__lsh_put_record(uint64_t id, const uint32_t *sig, uint32_t k,
                            void (*put)(void *ctx, const void *p, size_t n), void *ctx);

/* minlsh_signature_estimate for two signatures known not to be empty (the
 * same double: equal positions / k). */
MINLSH__INLINE double minlsh__lsh_estimate(const uint32_t *a, const uint32_t *b, uint32_t k) {
    return (double)minlsh__lsh_equal_count(a, b, k) / (double)k;
}

/* A 64-bit hash of a whole signature (internal: only groups identical
 * signatures; any collision is resolved by comparing the values), with the
 * process's SIMD level; every implementation gives the same bits. */
uint64_t minlsh__lsh_sig_hash(const uint32_t *sig, uint32_t k);
typedef uint64_t (*minlsh__lsh_sig_hash_fn)(const uint32_t *sig, uint32_t k);
uint64_t minlsh__lsh_sig_hash_portable(const uint32_t *sig, uint32_t k);
#if MINLSH__WITH_AVX2
uint64_t minlsh__lsh_sig_hash_avx2(const uint32_t *sig, uint32_t k);
#endif
#if MINLSH__WITH_AVX512
uint64_t minlsh__lsh_sig_hash_avx512(const uint32_t *sig, uint32_t k);
#endif

/* The three kernels of one SIMD level: every level gives the portable
 * bits. The kernel table (MINLSH__KERNEL_DISPATCH, lib/common/common.h):
 * the kernels of a level (NULL if this build or this CPU does not have
 * it), those of minlsh__simd_level(), and every usable set; for tests and
 * benches (the functions above pick the process's level themselves). */
typedef struct minlsh__lsh_kernels {
    const char *name;
    minlsh__lsh_band_keys_fn band_keys;
    minlsh__lsh_sig_hash_fn sig_hash;
    minlsh__lsh_equal_count_fn equal_count;
} minlsh__lsh_kernels;
#ifdef MINLSH_TESTING
const minlsh__lsh_kernels *minlsh__lsh_kernels_for_level(int level);
size_t minlsh__lsh_kernels_usable(const minlsh__lsh_kernels **out, size_t cap);
#endif
const minlsh__lsh_kernels *minlsh__lsh_kernels_active(void);

/* index.c */
/* A new empty index; the caller has validated the parameters. */
int minlsh__lsh_index_create(minlsh_index **out, uint32_t k, uint32_t scheme, uint64_t seed,
                             uint64_t config_id, uint32_t bands, uint32_t rows,
                             const minlsh_allocator *alloc);
/* The slot of id, or NIL. */
uint32_t minlsh__lsh_find_id(const minlsh_index *ix, uint64_t id);
/* Insert a document (k values): MINLSH_E_EXISTS if its id is there. Leaves
 * the index unchanged on error. */
int minlsh__lsh_insert(minlsh_index *ix, uint64_t id, const uint32_t *sig);
/* The same with sig's b band keys given (a query of sig computed them). */
int minlsh__lsh_insert_keyed(minlsh_index *ix, uint64_t id, const uint32_t *sig,
                             const uint64_t *keys);
/* query.c: minlsh_index_query (arguments checked by the caller) that also
 * leaves sig's b band keys in keys, unless sig is empty or the index is
 * (then *keyed = 0 and keys is not written). */
int minlsh__lsh_query_keys(const minlsh_index *ix, const uint32_t *sig, uint64_t *keys,
                           int *keyed, uint64_t *ids, double *similarity, size_t cap,
                           size_t *n_out);
/* Make room for n documents in the per-document structures (ids, slots,
 * id table). */
int minlsh__lsh_reserve(minlsh_index *ix, size_t n);
/* A batch of inserts (insert_many, load) sizes the signature and bucket
 * tables after its first MINLSH__LSH_SAMPLE documents, for the rest at the
 * rates those added entries: begin before the first insert, sample after
 * each (it acts once, when done == MINLSH__LSH_SAMPLE). */
#define MINLSH__LSH_SAMPLE 4096
typedef struct minlsh__lsh_batch {
    size_t groups0, buckets0;
} minlsh__lsh_batch;
void minlsh__lsh_batch_begin(const minlsh_index *ix, minlsh__lsh_batch *bt);
void minlsh__lsh_batch_sample(minlsh_index *ix, const minlsh__lsh_batch *bt, size_t done,
                              size_t n);
/* Bytes an index has allocated, by purpose: the signature values (one copy
 * per group), what grows with b (bucket tables and the chain nodes of
 * shared buckets), and
 * the rest (ids, slots, id and signature tables, group headers, chunk
 * slack of the per-document arrays). */
typedef struct minlsh__lsh_memory {
    size_t signatures, band_tables, band_links, other;
} minlsh__lsh_memory;
void minlsh__lsh_index_bytes(const minlsh_index *ix, minlsh__lsh_memory *m);
#ifdef MINLSH_TESTING
/* minlsh__lsh_index_bytes under its older, test-only name. */
void minlsh__lsh_index_memory(const minlsh_index *ix, minlsh__lsh_memory *m);
#endif

/* clusters.c: union-find over n nodes (parent/size arrays of n). */
typedef struct minlsh__lsh_uf {
    uint32_t *parent;
    uint32_t *size;
} minlsh__lsh_uf;

int minlsh__lsh_uf_init(minlsh__lsh_uf *uf, const minlsh_allocator *a, size_t n);
void minlsh__lsh_uf_free(minlsh__lsh_uf *uf, const minlsh_allocator *a);
uint32_t minlsh__lsh_uf_find(minlsh__lsh_uf *uf, uint32_t x);
/* Returns 1 if two components were joined, 0 if x and y were already one. */
int minlsh__lsh_uf_union(minlsh__lsh_uf *uf, uint32_t x, uint32_t y);

/* Join the groups g[0..n) of one bucket whose estimate passes
 * min_similarity (0: all of them, in a chain), skipping pairs already in one
 * component and stopping when the bucket is one component. roots: scratch
 * for n values. sig_of gives a group's k values. */
typedef const uint32_t *(*minlsh__lsh_sig_of_fn)(const void *ctx, uint32_t g);
void minlsh__lsh_join_bucket(minlsh__lsh_uf *uf, const uint32_t *g, size_t n,
                             uint64_t *roots, double min_similarity,
                             minlsh__lsh_sig_of_fn sig_of, const void *ctx, uint32_t k);

/* mapped.c: an index file of format version 2, read in place (docs/format.md,
 * "Mapped index"). A handle whose map is set has only its counts, parameters
 * and metadata filled in; its reads go to the functions below, its changes
 * are refused (MINLSH_E_STATE). */
#define MINLSH__INDEX_VERSION_MAPPED 2
/* 1 if ix is a mapped handle: changes are refused. */
MINLSH__INLINE int minlsh__lsh_is_mapped(const minlsh_index *ix) { return ix->map != NULL; }
/* An index in memory with ix's documents and metadata, for the calls that
 * work on the in-memory layout: *tmp NULL and nothing done if ix is not
 * mapped, else a loaded copy the caller frees. */
int minlsh__lsh_unmapped(const minlsh_index *ix, minlsh_index **tmp);
void minlsh__lsh_map_free(minlsh_index *ix);
/* persist.c: the parser of minlsh_index_load (versions 1 and 2). */
int minlsh__lsh_parse(void *out, const void *buf, size_t len, const minlsh__load *ld);
/* The documents' ids, signatures and metadata of a version 2 file in buf
 * (all of it validated): for the load path. */
int minlsh__lsh_parse_v2(minlsh_index **out, const void *buf, size_t len,
                         const minlsh__load *ld);
/* Build an index from a payload of n (id, k values) records in strictly
 * increasing id order (checked: MINLSH_E_CORRUPT), checking ld's family. */
int minlsh__lsh_from_records(minlsh_index **out, const minlsh__header *h,
                             const uint8_t *payload, const uint8_t *meta, size_t meta_len,
                             const minlsh__load *ld);
/* Insert into a mapped handle (its delta): MINLSH_E_EXISTS if the file or
 * the delta has id. */
int minlsh__lsh_map_insert(minlsh_index *ix, uint64_t id, const uint32_t *sig);
/* Remove from a mapped handle: from its delta; MINLSH_E_STATE for a
 * document of the file. */
int minlsh__lsh_map_remove(minlsh_index *ix, uint64_t id);
int minlsh__lsh_map_contains(const minlsh_index *ix, uint64_t id);
int minlsh__lsh_map_copy_signature(const minlsh_index *ix, uint64_t id, uint32_t *sig);
int minlsh__lsh_map_copy_ids(const minlsh_index *ix, uint64_t *ids);

/* query.c: a growable scratch array that starts on the caller's stack
 * (stack, cap elements of elem bytes; p = stack, n = 0 to begin). */
#define MINLSH__QUERY_STACK 256
typedef struct minlsh__lsh_scratch {
    void *p;
    size_t n, cap, elem;
    void *stack;
    const minlsh_allocator *a;
} minlsh__lsh_scratch;
/* Append one element. 0, MINLSH_E_NOMEM, MINLSH_E_TOOBIG. */
int minlsh__lsh_scratch_push(minlsh__lsh_scratch *s, const void *x);
void minlsh__lsh_scratch_free(minlsh__lsh_scratch *s);

/* mapped.c: one band of a mapped file's query, and the answer from the
 * document numbers collected (the walk and the records: query.c runs the
 * bands, the limit and the merge with the delta). */
int minlsh__lsh_map_band(const minlsh_index *ix, const uint32_t *sig, uint64_t key, uint32_t j,
                         size_t start, uint64_t room, minlsh__lsh_scratch *ds,
                         uint64_t *band_members);
/* Where each of bands first .. first + n - 1 (n <= MINLSH__MAP_SEEK_GROUP)
 * starts the entries with its key's tag (keys: every band's key), in
 * start[0 .. n-1]; SIZE_MAX for a band whose search met a damaged block.
 * The bands are searched together so that their cache misses overlap. */
#define MINLSH__MAP_SEEK_GROUP 32
void minlsh__lsh_map_seek(const minlsh_index *ix, const uint64_t *keys, uint32_t first,
                          uint32_t n, size_t *start);
int minlsh__lsh_map_emit(const minlsh_index *ix, const uint32_t *sig, minlsh__lsh_scratch *ds,
                         uint64_t *ids, double *similarity, size_t cap, size_t *n_out);

/* pairs.c: the pair list handle, shared with the matrix path; its records
 * are common/sort.h's, sorted by minlsh__sort_pairs. */
typedef minlsh__pair minlsh__lsh_pair;

struct minlsh_pairs {
    minlsh_allocator alloc;
    size_t n;
    minlsh__lsh_pair *v;
};

/* clusters.c: build the handle from m nodes in groups of two or more:
 * ids[] ascending and label[i] the (root) label of node i, labels below
 * n_labels. */
int minlsh__lsh_clusters_build(minlsh_clusters **out, const minlsh_allocator *a,
                               const uint64_t *ids, const uint32_t *label,
                               size_t m, size_t n_labels);

/* journal.c: what the store adds to the journal. */
#define MINLSH__JOURNAL_STRICT 1u       /* a journal that extends another file is
                                          MINLSH_E_STATE, never taken for stale */
#define MINLSH__JOURNAL_KEEP_REMOVES 2u /* removals reach on_record only; the
                                          index is left as it is */
/* minlsh_journal_open with flags, and one more file the journal may extend:
 * a journal whose header names alt_base (not 0) is replayed from byte
 * alt_offset (a file that holds that journal up to there). */
int minlsh__journal_open_ex(minlsh_journal **out, minlsh_index *index, const char *path,
                            uint32_t mode, uint32_t flags, uint64_t alt_base,
                            uint64_t alt_offset, minlsh_journal_record_fn on_record,
                            void *opaque);
/* The file the journal extends (its header) and the end of its synced
 * records. */
void minlsh__journal_position(const minlsh_journal *j, uint64_t *base, uint64_t *offset);
/* Bytes of records appended and not yet synced. */
size_t minlsh__journal_pending(const minlsh_journal *j);
/* Drop the appended records not yet synced (their change is written into a
 * new index file instead: the store's bulk commit). */
void minlsh__journal_discard(minlsh_journal *j);
/* Replace the journal (atomically) by one extending new_base that holds
 * the synced records from byte `from` on; mode and group of like (may be
 * NULL). Errors: MINLSH_E_STATE (read only, or records not synced),
 * MINLSH_E_PARAM, MINLSH_E_CORRUPT, MINLSH_E_IO, MINLSH_E_NOMEM. */
int minlsh__journal_rebase(minlsh_journal *j, uint64_t new_base, uint64_t from,
                           const char *like);
/* mapped.c: minlsh_index_save_mapped with the mode and group of like (may
 * be NULL) for a new file. */
int minlsh__index_save_mapped_like(const minlsh_index *index, const char *path,
                                   const char *like);

#endif /* MINLSH_LSH_H */
