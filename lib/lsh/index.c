/*
 * The band index, its lifetime and its changes: create and free, the
 * documents, groups of identical signatures, the id table, the signature
 * table, the per-band bucket tables, and insert / insert_many / remove
 * (query.c reads it; lsh.h describes the layout).
 *
 * Every mutation first makes room (growing a table or a chunked array only
 * moves what is there, so a growth that succeeds leaves the index logically
 * unchanged) and only then links the document in, a step that cannot fail.
 *
 * Speed: an insert of a new signature computes its b band keys (eight at
 * once with SIMD), then prefetches the home entry of every table it will
 * touch (id, signature, b bands) before looking at any of them, so the b+2
 * cache misses of a large index overlap instead of queueing (prefetch.h).
 */
#include "lsh.h"
#include "prefetch.h"

#if defined(__SSE2__) && (defined(__x86_64__) || defined(_M_X64))
#include <emmintrin.h>
#define MINLSH__HAVE_STREAM 1
#else
#define MINLSH__HAVE_STREAM 0
#endif

/* Copy n bytes to dst with streaming stores when they are whole cache lines
 * (dst 64-aligned, n a multiple of 64), else with memcpy. A new group's
 * values are written once and not read again soon: streaming them spares
 * the read of every line before it is overwritten, and the cache. Streaming
 * stores are weakly ordered: minlsh__stream_fence() before returning. */
static void minlsh__copy_lines(void *dst, const void *src, size_t n) {
#if MINLSH__HAVE_STREAM
    if ((((uintptr_t)dst | n) & 63) == 0) {
        __m128i *d = (__m128i *)dst;
        const __m128i *s = (const __m128i *)src;
        size_t i;
        for (i = 0; i < n / 16; i += 4) {
            _mm_stream_si128(d + i, _mm_loadu_si128(s + i));
            _mm_stream_si128(d + i + 1, _mm_loadu_si128(s + i + 1));
            _mm_stream_si128(d + i + 2, _mm_loadu_si128(s + i + 2));
            _mm_stream_si128(d + i + 3, _mm_loadu_si128(s + i + 3));
        }
        return;
    }
#endif
    memcpy(dst, src, n);
}

MINLSH__INLINE void minlsh__stream_fence(void) {
#if MINLSH__HAVE_STREAM
    _mm_sfence();
#endif
}

/* ---- hashing of ids ----------------------------------------------------- */

MINLSH__INLINE uint32_t minlsh__id_tag(uint64_t id) {
    return (uint32_t)(minlsh__mix64(id) >> 32);
}

MINLSH__INLINE uint32_t minlsh__sig_tag(const uint32_t *sig, uint32_t k) {
    return (uint32_t)(minlsh__lsh_sig_hash(sig, k) >> 32);
}

/* Position of id in the id table (found: *found = 1), else where it goes. */
static size_t minlsh__id_pos(const minlsh_index *ix, uint64_t id, uint32_t tag,
                             int *found) {
    const minlsh__lsh_table *t = &ix->idt;
    size_t p;
    *found = 0;
    if (t->cap == 0) return 0;
    for (p = minlsh__tab_seek(t, tag); t->e[p].val != MINLSH__LSH_NIL && t->e[p].tag == tag;
         p++)
        if (*minlsh__lsh_id_at(ix, t->e[p].val) == id) {
            *found = 1;
            return p;
        }
    return p;
}

uint32_t minlsh__lsh_find_id(const minlsh_index *ix, uint64_t id) {
    int found;
    size_t p = minlsh__id_pos(ix, id, minlsh__id_tag(id), &found);
    return found ? ix->idt.e[p].val : MINLSH__LSH_NIL;
}

/* The group with exactly these k values (not the empty signature), or NIL;
 * *pos is where a new group with this tag would go. */
static uint32_t minlsh__sig_find(const minlsh_index *ix, const uint32_t *sig, uint32_t tag,
                                 size_t *pos) {
    const minlsh__lsh_table *t = &ix->sigt;
    size_t p, bytes = (size_t)ix->k * sizeof *sig;
    *pos = 0;
    if (t->cap == 0) return MINLSH__LSH_NIL;
    for (p = minlsh__tab_seek(t, tag); t->e[p].val != MINLSH__LSH_NIL && t->e[p].tag == tag;
         p++)
        if (memcmp(minlsh__lsh_gsig(ix, t->e[p].val), sig, bytes) == 0) {
            *pos = p;
            return t->e[p].val;
        }
    *pos = p;
    return MINLSH__LSH_NIL;
}

/* ---- buckets ------------------------------------------------------------ */


/* Position of the bucket (band j, key) in its table: *found = 1, or
 * *found = 0 and the position where it would go. */
static size_t minlsh__bucket_pos(const minlsh_index *ix, uint32_t j, uint64_t key,
                                 const uint32_t *vals, int *found) {
    const minlsh__lsh_table *t = &ix->band[j];
    uint32_t tag = (uint32_t)(key >> 32);
    size_t p;
    *found = 0;
    if (t->cap == 0) return 0;
    for (p = minlsh__tab_seek(t, tag); t->e[p].val != MINLSH__LSH_NIL && t->e[p].tag == tag;
         p++)
        if (minlsh__lsh_band_match(ix, minlsh__lsh_bucket_first(ix, t->e[p].val), j, key,
                                   vals)) {
            *found = 1;
            return p;
        }
    return p;
}

/* A chain node from the free list or the end; room is reserved. */
static uint32_t minlsh__take_node(minlsh_index *ix) {
    uint32_t n;
    if (ix->free_node != MINLSH__LSH_NIL) {
        n = ix->free_node;
        ix->free_node = minlsh__lsh_node_at(ix, n)->next;
    } else {
        n = (uint32_t)ix->n_nodes++;
    }
    return n;
}

static void minlsh__drop_node(minlsh_index *ix, uint32_t n) {
    minlsh__lsh_node_at(ix, n)->next = ix->free_node;
    ix->free_node = n;
}

/* Link group g (whose band keys are keys) into every band. Room reserved:
 * a table entry and two nodes per band. */
static void minlsh__group_band(minlsh_index *ix, uint32_t g, const uint64_t *keys) {
    const uint32_t *sig = minlsh__lsh_gsig(ix, g);
    uint32_t j;
    for (j = 0; j < ix->bands; j++) {
        minlsh__lsh_table *t = &ix->band[j];
        int found;
        size_t p = minlsh__bucket_pos(ix, j, keys[j], sig + (size_t)j * ix->rows, &found);
        if (found) {
            /* Second place: the first group stays first. */
            uint32_t v = t->e[p].val, n = minlsh__take_node(ix);
            minlsh__lsh_node *nd = minlsh__lsh_node_at(ix, n);
            nd->group = g;
            if (v & MINLSH__LSH_CHAIN) {
                minlsh__lsh_node *first = minlsh__lsh_node_at(ix, v & ~MINLSH__LSH_CHAIN);
                nd->next = first->next;
                first->next = n;
            } else {
                /* A bucket of one becomes a chain of two. */
                uint32_t f = minlsh__take_node(ix);
                minlsh__lsh_node *first = minlsh__lsh_node_at(ix, f);
                nd->next = MINLSH__LSH_NIL;
                first->group = v;
                first->next = n;
                t->e[p].val = MINLSH__LSH_CHAIN | f;
            }
        } else {
            minlsh__lsh_entry x;
            x.tag = (uint32_t)(keys[j] >> 32);
            x.val = g;
            minlsh__tab_insert_at(t, p, x);
        }
    }
}

/* Unlink group g from every band; keys: room for b band keys, or NULL to
 * compute each key when its band is reached (no prefetch then). */
static void minlsh__group_unband(minlsh_index *ix, uint32_t g, uint64_t *keys) {
    const uint32_t *sig = minlsh__lsh_gsig(ix, g);
    uint32_t j;
    /* Keys are recomputed rather than stored: 8 bytes per (group, band)
     * saved for b SipHashes per removed signature. */
    if (keys != NULL) {
        minlsh__lsh_band_keys(sig, ix->bands, ix->rows, keys);
        for (j = 0; j < ix->bands; j++)
            minlsh__prefetch_home(&ix->band[j], (uint32_t)(keys[j] >> 32), 1);
    }
    for (j = 0; j < ix->bands; j++) {
        minlsh__lsh_table *t = &ix->band[j];
        uint64_t key = keys != NULL ? keys[j] : minlsh__lsh_band_key(sig, j, ix->rows);
        int found;
        size_t p = minlsh__bucket_pos(ix, j, key, sig + (size_t)j * ix->rows, &found);
        uint32_t v, prev, n, next, f;
        minlsh__lsh_node *first;
        if (!found) continue; /* cannot happen: g is linked under this key */
        v = t->e[p].val;
        if (!(v & MINLSH__LSH_CHAIN)) { /* a bucket of g alone */
            minlsh__tab_delete_at(t, p);
            continue;
        }
        /* Walk the chain: short, since identical signatures are one group. */
        prev = MINLSH__LSH_NIL;
        for (n = v & ~MINLSH__LSH_CHAIN; n != MINLSH__LSH_NIL;
             n = minlsh__lsh_node_at(ix, n)->next) {
            if (minlsh__lsh_node_at(ix, n)->group == g) break;
            prev = n;
        }
        if (n == MINLSH__LSH_NIL) continue; /* cannot happen either */
        next = minlsh__lsh_node_at(ix, n)->next;
        if (prev == MINLSH__LSH_NIL) t->e[p].val = MINLSH__LSH_CHAIN | next;
        else minlsh__lsh_node_at(ix, prev)->next = next;
        minlsh__drop_node(ix, n);
        /* A chain of one is a bucket of one again. */
        f = t->e[p].val & ~MINLSH__LSH_CHAIN;
        first = minlsh__lsh_node_at(ix, f);
        if (first->next == MINLSH__LSH_NIL) {
            t->e[p].val = first->group;
            minlsh__drop_node(ix, f);
        }
    }
}

/* ---- create / free / accessors ------------------------------------------ */

int minlsh__lsh_index_create(minlsh_index **out, uint32_t k, uint32_t scheme, uint64_t seed,
                             uint64_t config_id, uint32_t bands, uint32_t rows,
                             const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_index *ix;
    uint32_t j;
    int rc;
    *out = NULL;
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    ix = (minlsh_index *)minlsh__calloc(&al, 1, sizeof *ix);
    if (ix == NULL) return MINLSH_E_NOMEM;
    ix->band = (minlsh__lsh_table *)minlsh__calloc(&al, bands, sizeof *ix->band);
    if (ix->band == NULL) {
        minlsh__free(&al, ix);
        return MINLSH_E_NOMEM;
    }
    ix->alloc = al;
    ix->k = k;
    ix->scheme = scheme;
    ix->bands = bands;
    ix->rows = rows;
    ix->seed = seed;
    ix->config_id = config_id;
    ix->free_slot = ix->free_group = ix->empty_group = MINLSH__LSH_NIL;
    ix->ids.elem = sizeof(uint64_t);
    ix->docs.elem = sizeof(minlsh__lsh_doc);
    ix->groups.elem = sizeof(minlsh__lsh_group);
    ix->nodes.elem = sizeof(minlsh__lsh_node);
    ix->free_node = MINLSH__LSH_NIL;
    for (j = 0; j < bands; j++) ix->band[j].max_load = MINLSH__LSH_BAND_LOAD;
    ix->sigs.elem = (size_t)k * sizeof(uint32_t);
    *out = ix;
    return 0;
}

int minlsh_index_new(minlsh_index **out, const minlsh_family *family,
                     uint64_t config_id, uint32_t bands, uint32_t rows,
                     const minlsh_allocator *alloc) {
    uint32_t k;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (family == NULL) return MINLSH_E_NULL;
    k = minlsh_family_k(family);
    if (bands == 0 || rows == 0 || (uint64_t)bands * rows > k) return MINLSH_E_PARAM;
    return minlsh__lsh_index_create(out, k, minlsh_family_scheme(family),
                                    minlsh_family_seed(family), config_id,
                                    bands, rows, alloc);
}

void minlsh_index_free(minlsh_index *index) {
    minlsh_allocator al;
    uint32_t j;
    if (index == NULL) return;
    al = index->alloc;
    for (j = 0; j < index->bands; j++) minlsh__tab_free(&al, &index->band[j]);
    minlsh__free(&al, index->band);
    minlsh__tab_free(&al, &index->idt);
    minlsh__tab_free(&al, &index->sigt);
    minlsh__store_free(&al, &index->ids);
    minlsh__store_free(&al, &index->docs);
    minlsh__store_free(&al, &index->groups);
    minlsh__store_free(&al, &index->sigs);
    minlsh__store_free(&al, &index->nodes);
    minlsh__metadata_free(&index->meta, &al);
    minlsh__lsh_map_free(index);
    minlsh_index_free(index->delta);
    minlsh__free(&al, index->file_path);
    minlsh__free(&al, index);
}

uint64_t minlsh_index_count(const minlsh_index *index) {
    return index != NULL ? (uint64_t)index->count : 0;
}
uint32_t minlsh_index_bands(const minlsh_index *index) {
    return index != NULL ? index->bands : 0;
}
uint32_t minlsh_index_rows(const minlsh_index *index) {
    return index != NULL ? index->rows : 0;
}
uint32_t minlsh_index_k(const minlsh_index *index) {
    return index != NULL ? index->k : 0;
}
uint64_t minlsh_index_seed(const minlsh_index *index) {
    return index != NULL ? index->seed : 0;
}
uint32_t minlsh_index_scheme(const minlsh_index *index) {
    return index != NULL ? index->scheme : 0;
}
uint64_t minlsh_index_config_id(const minlsh_index *index) {
    return index != NULL ? index->config_id : 0;
}

/* ---- insert / remove ---------------------------------------------------- */

int minlsh__lsh_reserve(minlsh_index *ix, size_t n) {
    const minlsh_allocator *a = &ix->alloc;
    size_t extra = n > ix->count ? n - ix->count : 0;
    int rc;
    if ((uint64_t)n > MINLSH__LSH_MAX_DOCS) return MINLSH_E_TOOBIG;
    if ((rc = minlsh__store_reserve(a, &ix->ids, n)) != 0 ||
        (rc = minlsh__store_reserve(a, &ix->docs, n)) != 0 ||
        (rc = minlsh__tab_reserve(a, &ix->idt, extra)) != 0)
        return rc;
    return 0;
}

static size_t minlsh__band_entries(const minlsh_index *ix) {
    size_t n = 0;
    uint32_t j;
    for (j = 0; j < ix->bands; j++) n += ix->band[j].used;
    return n;
}

void minlsh__lsh_batch_begin(const minlsh_index *ix, minlsh__lsh_batch *bt) {
    bt->groups0 = ix->sigt.used;
    bt->buckets0 = minlsh__band_entries(ix);
}

/* rest documents at rate entries each, one in 64 over; at most one per
 * document (a table never needs more), so it fits a size_t. */
static size_t minlsh__batch_extra(double rest, double rate) {
    double e = rest * rate * 1.016;
    return (size_t)(e < rest ? e : rest);
}

void minlsh__lsh_batch_sample(minlsh_index *ix, const minlsh__lsh_batch *bt, size_t done,
                              size_t n) {
    const minlsh_allocator *a = &ix->alloc;
    double rest = (double)(n - done);
    size_t dg = ix->sigt.used - bt->groups0, db = minlsh__band_entries(ix) - bt->buckets0;
    uint32_t j;
    if (done != MINLSH__LSH_SAMPLE || n - done < MINLSH__LSH_SAMPLE) return;
    /* The rest at the sample's rates: the tables are rebuilt once instead
     * of at every 5/4 step on the way (each a new table to fault in), and
     * a corpus whose buckets are shared does not get tables sized for one
     * bucket per document. Only a hint: on failure the inserts reserve
     * what they need. */
    (void)minlsh__tab_reserve(a, &ix->sigt, minlsh__batch_extra(rest, (double)dg / (double)done));
    for (j = 0; j < ix->bands; j++)
        (void)minlsh__tab_reserve(
            a, &ix->band[j], minlsh__batch_extra(rest, (double)db / ((double)done * ix->bands)));
}

/* Take a slot from the free list or the end; room is reserved. */
static uint32_t minlsh__take_slot(minlsh_index *ix) {
    uint32_t s;
    if (ix->free_slot != MINLSH__LSH_NIL) {
        s = ix->free_slot;
        ix->free_slot = minlsh__lsh_doc_at(ix, s)->next;
    } else {
        s = (uint32_t)ix->n_slots++;
    }
    return s;
}

static uint32_t minlsh__take_group(minlsh_index *ix) {
    uint32_t g;
    if (ix->free_group != MINLSH__LSH_NIL) {
        g = ix->free_group;
        ix->free_group = minlsh__lsh_group_at(ix, g)->head;
    } else {
        g = (uint32_t)ix->n_groups++;
    }
    ix->live_groups++;
    return g;
}

/* Add slot s to group g's member list (at the front). */
static void minlsh__member_add(minlsh_index *ix, uint32_t g, uint32_t s) {
    minlsh__lsh_group *gr = minlsh__lsh_group_at(ix, g);
    minlsh__lsh_doc *d = minlsh__lsh_doc_at(ix, s);
    d->group = g;
    d->prev = MINLSH__LSH_NIL;
    d->next = gr->count > 0 ? gr->head : MINLSH__LSH_NIL;
    if (gr->count > 0) minlsh__lsh_doc_at(ix, gr->head)->prev = s;
    gr->head = s;
    gr->head_id = *minlsh__lsh_id_at(ix, s);
    gr->count++;
}

/* What an insert computes before it looks at the index: the hashes, the
 * band keys, and prefetches of every table entry it will touch. A batch
 * prepares a few documents ahead, so the cache misses of one overlap with
 * the work on the others. keys points to room for b keys. */
typedef struct minlsh__ins_prep {
    uint32_t idtag, sigtag;
    int empty;
    uint64_t *keys;
} minlsh__ins_prep;

/* have_keys: pp->keys holds sig's band keys already (a query computed them). */
static void minlsh__insert_prepare_keys(const minlsh_index *ix, uint64_t id, const uint32_t *sig,
                                        minlsh__ins_prep *pp, int have_keys) {
    uint32_t j;
    pp->idtag = minlsh__id_tag(id);
    minlsh__prefetch_home(&ix->idt, pp->idtag, 1);
    pp->empty = minlsh_signature_is_empty(sig, ix->k) == 1;
    pp->sigtag = 0;
    if (pp->empty) return;
    pp->sigtag = minlsh__sig_tag(sig, ix->k);
    minlsh__prefetch_home(&ix->sigt, pp->sigtag, 1);
    if (!have_keys) minlsh__lsh_band_keys(sig, ix->bands, ix->rows, pp->keys);
    for (j = 0; j < ix->bands; j++)
        minlsh__prefetch_home(&ix->band[j], (uint32_t)(pp->keys[j] >> 32), 1);
}

static void minlsh__insert_prepare(const minlsh_index *ix, uint64_t id, const uint32_t *sig,
                                   minlsh__ins_prep *pp) {
    minlsh__insert_prepare_keys(ix, id, sig, pp, 0);
}

static int minlsh__insert_commit(minlsh_index *ix, uint64_t id, const uint32_t *sig,
                                 const minlsh__ins_prep *pp) {
    const minlsh_allocator *a = &ix->alloc;
    uint32_t j, slot, g;
    int found, rc;
    size_t p, sp = 0, idcap = ix->idt.cap;
    p = minlsh__id_pos(ix, id, pp->idtag, &found);
    if (found) return MINLSH_E_EXISTS;
    if (ix->count >= MINLSH__LSH_MAX_DOCS) return MINLSH_E_TOOBIG;
    g = pp->empty ? ix->empty_group : minlsh__sig_find(ix, sig, pp->sigtag, &sp);
    /* Make room first: every step below may fail, none changes content. */
    if (ix->free_slot == MINLSH__LSH_NIL) {
        if ((rc = minlsh__store_reserve(a, &ix->ids, ix->n_slots + 1)) != 0 ||
            (rc = minlsh__store_reserve(a, &ix->docs, ix->n_slots + 1)) != 0)
            return rc;
    }
    if ((rc = minlsh__tab_reserve1(a, &ix->idt)) != 0) return rc;
    if (g == MINLSH__LSH_NIL) {
        if (ix->free_group == MINLSH__LSH_NIL) {
            /* Group numbers must stay clear of the chain bit. */
            if (ix->n_groups + 1 > MINLSH__LSH_MAX_GROUPS) return MINLSH_E_TOOBIG;
            if ((rc = minlsh__store_reserve(a, &ix->groups, ix->n_groups + 1)) != 0 ||
                (rc = minlsh__store_reserve(a, &ix->sigs, ix->n_groups + 1)) != 0)
                return rc;
        }
        if (!pp->empty) {
            size_t cap = ix->sigt.cap, nodes = ix->n_nodes + 2 * (size_t)ix->bands;
            if ((rc = minlsh__tab_reserve1(a, &ix->sigt)) != 0) return rc;
            /* Conservative: room in every band, even where the key exists,
             * and two chain nodes per band, even where none is needed. */
            for (j = 0; j < ix->bands; j++)
                if ((rc = minlsh__tab_reserve1(a, &ix->band[j])) != 0) return rc;
            if (nodes > MINLSH__LSH_MAX_GROUPS) return MINLSH_E_TOOBIG;
            if ((rc = minlsh__store_reserve(a, &ix->nodes, nodes)) != 0) return rc;
            if (cap != ix->sigt.cap) /* the table moved */
                (void)minlsh__sig_find(ix, sig, pp->sigtag, &sp);
        }
    }
    /* Link: nothing can fail from here on. A rebuilt table of the same
     * size has every entry where it was (the layout is canonical). */
    if (idcap != ix->idt.cap) p = minlsh__id_pos(ix, id, pp->idtag, &found);
    slot = minlsh__take_slot(ix);
    *minlsh__lsh_id_at(ix, slot) = id;
    {
        minlsh__lsh_entry x;
        x.tag = pp->idtag;
        x.val = slot;
        minlsh__tab_insert_at(&ix->idt, p, x);
    }
    if (g == MINLSH__LSH_NIL) {
        minlsh__lsh_group *gr;
        g = minlsh__take_group(ix);
        gr = minlsh__lsh_group_at(ix, g);
        gr->count = 0;
        gr->head = MINLSH__LSH_NIL;
        minlsh__copy_lines(minlsh__lsh_gsig(ix, g), sig, (size_t)ix->k * sizeof *sig);
        if (pp->empty) {
            /* The empty signature is in no bucket: never a candidate. */
            ix->empty_group = g;
        } else {
            minlsh__lsh_entry x;
            x.tag = pp->sigtag;
            x.val = g;
            minlsh__tab_insert_at(&ix->sigt, sp, x);
            minlsh__group_band(ix, g, pp->keys);
        }
    }
    minlsh__member_add(ix, g, slot);
    ix->count++;
    return 0;
}

int minlsh__lsh_insert(minlsh_index *ix, uint64_t id, const uint32_t *sig) {
    uint64_t stack[MINLSH__K_STACK];
    minlsh__ins_prep pp;
    int rc;
    pp.keys = (uint64_t *)minlsh__kbuf_get(&ix->alloc, stack, MINLSH__K_STACK, ix->bands,
                                           sizeof *stack);
    if (pp.keys == NULL) return MINLSH_E_NOMEM;
    minlsh__insert_prepare(ix, id, sig, &pp);
    rc = minlsh__insert_commit(ix, id, sig, &pp);
    minlsh__stream_fence();
    minlsh__kbuf_put(&ix->alloc, stack, pp.keys);
    return rc;
}

int minlsh__lsh_insert_keyed(minlsh_index *ix, uint64_t id, const uint32_t *sig,
                             const uint64_t *keys) {
    uint64_t stack[MINLSH__K_STACK];
    minlsh__ins_prep pp;
    int rc;
    pp.keys = (uint64_t *)minlsh__kbuf_get(&ix->alloc, stack, MINLSH__K_STACK, ix->bands,
                                           sizeof *stack);
    if (pp.keys == NULL) return MINLSH_E_NOMEM;
    memcpy(pp.keys, keys, (size_t)ix->bands * sizeof *pp.keys);
    minlsh__insert_prepare_keys(ix, id, sig, &pp, 1);
    rc = minlsh__insert_commit(ix, id, sig, &pp);
    minlsh__stream_fence();
    minlsh__kbuf_put(&ix->alloc, stack, pp.keys);
    return rc;
}

int minlsh_index_insert(minlsh_index *index, uint64_t id, const uint32_t *sig,
                        size_t k_sig) {
    if (index == NULL || sig == NULL) return MINLSH_E_NULL;
    if (k_sig != index->k) return MINLSH_E_PARAM;
    if (minlsh__lsh_is_mapped(index)) return minlsh__lsh_map_insert(index, id, sig);
    return minlsh__lsh_insert(index, id, sig);
}


/* A run of new documents takes slots and groups from the ends of their
 * stores, one after another: fetch the ones `ahead` inserts from now for
 * writing, so that filling them does not stall on memory (the k values are
 * streamed, not fetched). Only a guess: nothing is fetched when free lists
 * are in use or the chunk does not exist yet. */
static void minlsh__prefetch_new(const minlsh_index *ix, size_t ahead) {
    size_t s = ix->n_slots + ahead, g = ix->n_groups + ahead;
    if (ix->free_slot == MINLSH__LSH_NIL && s < minlsh__store_cap(&ix->ids) &&
        s < minlsh__store_cap(&ix->docs)) {
        MINLSH__PREFETCH_W(minlsh__lsh_id_at(ix, s));
        MINLSH__PREFETCH_W(minlsh__lsh_doc_at(ix, s));
    }
    if (ix->free_group == MINLSH__LSH_NIL && g < minlsh__store_cap(&ix->groups))
        minlsh__prefetch_range(minlsh__lsh_group_at(ix, g), ix->groups.elem, 1);
}

int minlsh_index_insert_many(minlsh_index *index, const uint64_t *ids, const uint32_t *sigs,
                             size_t n, size_t k_sig, size_t *n_done) {
    minlsh__ins_prep pp[MINLSH__AHEAD];
    minlsh__lsh_batch bt;
    uint64_t *keys;
    size_t i, k;
    uint32_t b;
    int rc = 0;
    if (n_done != NULL) *n_done = 0;
    if (index == NULL) return MINLSH_E_NULL;
    if (n > 0 && (ids == NULL || sigs == NULL)) return MINLSH_E_NULL;
    if (k_sig != index->k) return MINLSH_E_PARAM;
    if (n == 0) return 0;
    if (minlsh__lsh_is_mapped(index)) {
        /* One by one into the delta, which a mapped handle keeps small. */
        for (i = 0; i < n && rc == 0; i++)
            if ((rc = minlsh__lsh_map_insert(index, ids[i], sigs + i * k_sig)) == 0 &&
                n_done != NULL)
                *n_done = i + 1;
        return rc;
    }
    k = index->k;
    b = index->bands;
    /* Room for all n ids at once, and for their groups and buckets once
     * the first documents have shown how many they add. Only hints: if
     * they fail, each insert still reserves what it needs (and fails where
     * memory ends). */
    if (n > 1 && (uint64_t)index->count + n <= MINLSH__LSH_MAX_DOCS)
        (void)minlsh__lsh_reserve(index, index->count + n);
    minlsh__lsh_batch_begin(index, &bt);
    keys = (uint64_t *)minlsh__malloc(&index->alloc, MINLSH__AHEAD * (size_t)b * sizeof *keys);
    if (keys == NULL) return MINLSH_E_NOMEM;
    for (i = 0; i < MINLSH__AHEAD; i++) pp[i].keys = keys + i * b;
    for (i = 0; i < n && i < MINLSH__AHEAD; i++)
        minlsh__insert_prepare(index, ids[i], sigs + i * k, &pp[i]);
    for (i = 0; i < n; i++) {
        minlsh__ins_prep *cur = &pp[i % MINLSH__AHEAD];
        if (i + 2 * MINLSH__AHEAD < n) minlsh__prefetch_sig(sigs + (i + 2 * MINLSH__AHEAD) * k, k);
        rc = minlsh__insert_commit(index, ids[i], sigs + i * k, cur);
        if (rc != 0) break;
        minlsh__lsh_batch_sample(index, &bt, i + 1, n);
        minlsh__prefetch_new(index, MINLSH__AHEAD - 1);
        /* The slot is free again: prepare the document AHEAD places on. */
        if (i + MINLSH__AHEAD < n)
            minlsh__insert_prepare(index, ids[i + MINLSH__AHEAD], sigs + (i + MINLSH__AHEAD) * k,
                                   cur);
    }
    minlsh__stream_fence();
    minlsh__free(&index->alloc, keys);
    if (n_done != NULL) *n_done = i;
    return rc;
}

int minlsh_index_remove(minlsh_index *index, uint64_t id) {
    uint64_t stack[MINLSH__K_STACK], *keys;
    minlsh__lsh_doc *d;
    minlsh__lsh_group *gr;
    uint32_t slot, g;
    int found;
    size_t p;
    if (index == NULL) return MINLSH_E_NULL;
    if (minlsh__lsh_is_mapped(index)) return minlsh__lsh_map_remove(index, id);
    p = minlsh__id_pos(index, id, minlsh__id_tag(id), &found);
    if (!found) return MINLSH_E_NOTFOUND;
    /* A removal cannot fail (a merge's rollback relies on it): with more
     * bands than the stack holds, each key is computed where it is used. */
    keys = index->bands <= MINLSH__K_STACK ? stack : NULL;
    slot = index->idt.e[p].val;
    d = minlsh__lsh_doc_at(index, slot);
    g = d->group;
    gr = minlsh__lsh_group_at(index, g);
    /* Out of the member list: O(1) however many copies share the group. */
    if (d->prev != MINLSH__LSH_NIL) minlsh__lsh_doc_at(index, d->prev)->next = d->next;
    else {
        gr->head = d->next;
        if (d->next != MINLSH__LSH_NIL) gr->head_id = *minlsh__lsh_id_at(index, d->next);
    }
    if (d->next != MINLSH__LSH_NIL) minlsh__lsh_doc_at(index, d->next)->prev = d->prev;
    if (--gr->count == 0) {
        if (g == index->empty_group) {
            index->empty_group = MINLSH__LSH_NIL;
        } else {
            const uint32_t *sig = minlsh__lsh_gsig(index, g);
            size_t sp;
            minlsh__group_unband(index, g, keys);
            if (minlsh__sig_find(index, sig, minlsh__sig_tag(sig, index->k), &sp) == g)
                minlsh__tab_delete_at(&index->sigt, sp);
        }
        gr->head = index->free_group;
        index->free_group = g;
        index->live_groups--;
    }
    minlsh__tab_delete_at(&index->idt, p);
    d->group = MINLSH__LSH_NIL;
    d->next = index->free_slot;
    index->free_slot = slot;
    index->count--;
    return 0;
}

/* ---- metadata ----------------------------------------------------------- */

int minlsh_index_set_metadata(minlsh_index *index, const void *data, size_t len) {
    if (index == NULL) return MINLSH_E_NULL;
    return minlsh__metadata_set(&index->meta, &index->alloc, data, len);
}

int minlsh_index_copy_metadata(const minlsh_index *index, void *buf, size_t cap,
                          size_t *n_out) {
    if (index == NULL) return MINLSH_E_NULL;
    return minlsh__metadata_copy(&index->meta, buf, cap, n_out);
}

/* ---- memory accounting (minlsh_index_copy_stats, benches, tests) ------------ */

void minlsh__lsh_index_bytes(const minlsh_index *ix, minlsh__lsh_memory *m) {
    uint32_t j;
    memset(m, 0, sizeof *m);
    m->signatures = minlsh__store_bytes(&ix->sigs);
    m->band_links = minlsh__store_bytes(&ix->nodes);
    for (j = 0; j < ix->bands; j++) m->band_tables += minlsh__tab_bytes(&ix->band[j]);
    m->other = minlsh__store_bytes(&ix->groups) + minlsh__store_bytes(&ix->ids) +
               minlsh__store_bytes(&ix->docs) + minlsh__tab_bytes(&ix->idt) +
               minlsh__tab_bytes(&ix->sigt) + (size_t)ix->bands * sizeof *ix->band +
               sizeof *ix + ix->meta.len;
}

#ifdef MINLSH_TESTING
void minlsh__lsh_index_memory(const minlsh_index *ix, minlsh__lsh_memory *m) {
    minlsh__lsh_index_bytes(ix, m);
}
#endif
