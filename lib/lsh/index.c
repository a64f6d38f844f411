/*
 * The band index: documents, the id table, the per-band bucket tables, and
 * insert / remove / query / get. lsh.h describes the layout.
 *
 * Every mutation first makes room (growing arrays and tables only copies
 * what is there, so a growth that succeeds leaves the index logically
 * unchanged) and only then links the document in, a step that cannot fail.
 */
#include "lsh.h"

/* ---- open-addressing tables --------------------------------------------- */

#define MINLSH__TAB_MIN 16
#define MINLSH__TAB_MAX UINT64_C(0x100000000) /* homes come from 32-bit tags */

MINLSH__INLINE size_t minlsh__tab_home(const minlsh__lsh_table *t, uint32_t tag) {
    return (size_t)(tag >> t->shift);
}

static void minlsh__tab_put(minlsh__lsh_entry *e, size_t mask, unsigned shift,
                            minlsh__lsh_entry x) {
    size_t p = (size_t)(x.tag >> shift);
    while (e[p].val != MINLSH__LSH_NIL) p = (p + 1) & mask;
    e[p] = x;
}

static int minlsh__tab_grow(const minlsh_allocator *a, minlsh__lsh_table *t) {
    minlsh__lsh_entry *e;
    size_t ncap, i;
    unsigned shift;
    if (t->cap == 0) {
        ncap = MINLSH__TAB_MIN;
    } else {
        if ((uint64_t)t->cap >= MINLSH__TAB_MAX ||
            t->cap > SIZE_MAX / (2 * sizeof(minlsh__lsh_entry)))
            return MINLSH_E_TOOBIG;
        ncap = t->cap * 2;
    }
    e = (minlsh__lsh_entry *)minlsh__malloc(a, ncap * sizeof *e);
    if (e == NULL) return MINLSH_E_NOMEM;
    for (i = 0; i < ncap; i++) e[i].val = MINLSH__LSH_NIL;
    for (shift = 32, i = ncap; i > 1; i >>= 1) shift--;
    for (i = 0; i < t->cap; i++)
        if (t->e[i].val != MINLSH__LSH_NIL) minlsh__tab_put(e, ncap - 1, shift, t->e[i]);
    minlsh__free(a, t->e);
    t->e = e;
    t->cap = ncap;
    t->shift = shift;
    return 0;
}

/* Room for one more entry. Load stays at most 3/4; a table already at the
 * largest size may fill further (it always keeps an empty entry, since it
 * holds fewer than 2^32 - 1). */
static int minlsh__tab_make_room(const minlsh_allocator *a, minlsh__lsh_table *t) {
    int rc;
    if (t->cap != 0 && t->used + 1 <= t->cap / 4 * 3) return 0;
    rc = minlsh__tab_grow(a, t);
    if (rc == MINLSH_E_TOOBIG && t->cap != 0 && t->used + 1 < t->cap) return 0;
    return rc;
}

/* Backward-shift deletion: no tombstones, so lookups never slow down. */
static void minlsh__tab_delete(minlsh__lsh_table *t, size_t p) {
    size_t mask = t->cap - 1, i = p, j = p;
    for (;;) {
        size_t h;
        t->e[i].val = MINLSH__LSH_NIL;
        for (;;) {
            j = (j + 1) & mask;
            if (t->e[j].val == MINLSH__LSH_NIL) {
                t->used--;
                return;
            }
            h = minlsh__tab_home(t, t->e[j].tag);
            /* The entry at j may move to i unless its home lies cyclically
             * in (i, j]. */
            if (i <= j ? (i < h && h <= j) : (i < h || h <= j)) continue;
            break;
        }
        t->e[i] = t->e[j];
        i = j;
    }
}

/* ---- lookups ------------------------------------------------------------ */

/* Position of (band j, key) in its table: *found = 1 and the bucket's
 * entry, or *found = 0 and the empty entry where it would go. */
static size_t minlsh__band_pos(const minlsh_index *ix, uint32_t j, uint64_t key,
                               int *found) {
    const minlsh__lsh_table *t = &ix->band[j];
    uint32_t tag = (uint32_t)(key >> 32), lo = (uint32_t)key;
    size_t mask, p;
    *found = 0;
    if (t->cap == 0) return 0;
    mask = t->cap - 1;
    for (p = minlsh__tab_home(t, tag);; p = (p + 1) & mask) {
        minlsh__lsh_entry e = t->e[p];
        if (e.val == MINLSH__LSH_NIL) return p;
        /* The tag is a filter; the head's prev completes the 64-bit key. */
        if (e.tag == tag && minlsh__lsh_link_at(ix, e.val, j)->prev == lo) {
            *found = 1;
            return p;
        }
    }
}

uint32_t minlsh__lsh_bucket_head(const minlsh_index *ix, uint32_t j, uint64_t key) {
    int found;
    size_t p = minlsh__band_pos(ix, j, key, &found);
    return found ? ix->band[j].e[p].val : MINLSH__LSH_NIL;
}

static uint32_t minlsh__id_tag(uint64_t id) {
    return (uint32_t)(minlsh__mix64(id) >> 32);
}

static size_t minlsh__id_pos(const minlsh_index *ix, uint64_t id, int *found) {
    const minlsh__lsh_table *t = &ix->idt;
    uint32_t tag = minlsh__id_tag(id);
    size_t mask, p;
    *found = 0;
    if (t->cap == 0) return 0;
    mask = t->cap - 1;
    for (p = minlsh__tab_home(t, tag);; p = (p + 1) & mask) {
        minlsh__lsh_entry e = t->e[p];
        if (e.val == MINLSH__LSH_NIL) return p;
        if (e.tag == tag && ix->ids[e.val] == id) {
            *found = 1;
            return p;
        }
    }
}

uint32_t minlsh__lsh_find_id(const minlsh_index *ix, uint64_t id) {
    int found;
    size_t p = minlsh__id_pos(ix, id, &found);
    return found ? ix->idt.e[p].val : MINLSH__LSH_NIL;
}

/* ---- bucket lists ------------------------------------------------------- */

static void minlsh__bucket_link(minlsh_index *ix, uint32_t j, uint64_t key,
                                uint32_t slot) {
    minlsh__lsh_table *t = &ix->band[j];
    minlsh__lsh_link *s = minlsh__lsh_link_at(ix, slot, j);
    int found;
    size_t p = minlsh__band_pos(ix, j, key, &found);
    if (found) {
        /* Second place: the head keeps the key, and no tail is needed. */
        uint32_t head = t->e[p].val;
        minlsh__lsh_link *h = minlsh__lsh_link_at(ix, head, j);
        s->next = h->next;
        s->prev = head;
        if (h->next != MINLSH__LSH_NIL) minlsh__lsh_link_at(ix, h->next, j)->prev = slot;
        h->next = slot;
    } else {
        t->e[p].tag = (uint32_t)(key >> 32);
        t->e[p].val = slot;
        t->used++;
        s->next = MINLSH__LSH_NIL;
        s->prev = (uint32_t)key;
    }
}

static void minlsh__bucket_unlink(minlsh_index *ix, uint32_t j, uint64_t key,
                                  uint32_t slot) {
    minlsh__lsh_table *t = &ix->band[j];
    minlsh__lsh_link *s = minlsh__lsh_link_at(ix, slot, j);
    int found;
    size_t p = minlsh__band_pos(ix, j, key, &found);
    if (!found) return; /* cannot happen: the slot is linked under this key */
    if (t->e[p].val == slot) {
        if (s->next == MINLSH__LSH_NIL) {
            minlsh__tab_delete(t, p);
        } else {
            t->e[p].val = s->next;
            minlsh__lsh_link_at(ix, s->next, j)->prev = (uint32_t)key;
        }
    } else {
        minlsh__lsh_link_at(ix, s->prev, j)->next = s->next;
        if (s->next != MINLSH__LSH_NIL) minlsh__lsh_link_at(ix, s->next, j)->prev = s->prev;
    }
}

/* ---- slots -------------------------------------------------------------- */

static int minlsh__slots_grow(minlsh_index *ix, size_t need) {
    const minlsh_allocator *a = &ix->alloc;
    size_t ncap = ix->slot_cap != 0 ? ix->slot_cap : 16;
    size_t b_sig, b_ids, b_links;
    uint64_t *ids;
    uint32_t *sigs;
    uint8_t *state;
    minlsh__lsh_link *links;
    if (need <= ix->slot_cap) return 0;
    if ((uint64_t)need > MINLSH__LSH_MAX_DOCS) return MINLSH_E_TOOBIG;
    while (ncap < need) ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if ((uint64_t)ncap > MINLSH__LSH_MAX_DOCS) ncap = (size_t)MINLSH__LSH_MAX_DOCS;
    if (minlsh__mul_size(&b_ids, ncap, sizeof *ids) != 0 ||
        minlsh__mul_size(&b_sig, ncap, (size_t)ix->k * sizeof *sigs) != 0 ||
        minlsh__mul_size(&b_links, ncap, (size_t)ix->bands * sizeof *links) != 0)
        return MINLSH_E_TOOBIG;
    ids = (uint64_t *)minlsh__malloc(a, b_ids);
    sigs = (uint32_t *)minlsh__malloc(a, b_sig);
    state = (uint8_t *)minlsh__malloc(a, ncap);
    links = (minlsh__lsh_link *)minlsh__malloc(a, b_links);
    if (ids == NULL || sigs == NULL || state == NULL || links == NULL) {
        minlsh__free(a, ids);
        minlsh__free(a, sigs);
        minlsh__free(a, state);
        minlsh__free(a, links);
        return MINLSH_E_NOMEM;
    }
    if (ix->n_slots > 0) {
        memcpy(ids, ix->ids, ix->n_slots * sizeof *ids);
        memcpy(sigs, ix->sigs, ix->n_slots * (size_t)ix->k * sizeof *sigs);
        memcpy(state, ix->state, ix->n_slots);
        memcpy(links, ix->links, ix->n_slots * (size_t)ix->bands * sizeof *links);
    }
    minlsh__free(a, ix->ids);
    minlsh__free(a, ix->sigs);
    minlsh__free(a, ix->state);
    minlsh__free(a, ix->links);
    ix->ids = ids;
    ix->sigs = sigs;
    ix->state = state;
    ix->links = links;
    ix->slot_cap = ncap;
    return 0;
}

int minlsh__lsh_reserve(minlsh_index *ix, size_t n) {
    int rc = minlsh__slots_grow(ix, n);
    while (rc == 0 && (ix->idt.cap == 0 || n > ix->idt.cap / 4 * 3))
        rc = minlsh__tab_grow(&ix->alloc, &ix->idt);
    return rc;
}

/* ---- create / free / accessors ------------------------------------------ */

int minlsh__lsh_index_create(minlsh_index **out, uint32_t k, uint64_t seed,
                             uint64_t config_id, uint32_t bands, uint32_t rows,
                             const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_index *ix;
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
    ix->bands = bands;
    ix->rows = rows;
    ix->seed = seed;
    ix->config_id = config_id;
    ix->free_head = MINLSH__LSH_NIL;
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
    return minlsh__lsh_index_create(out, k, minlsh_family_seed(family), config_id,
                                    bands, rows, alloc);
}

void minlsh_index_free(minlsh_index *index) {
    minlsh_allocator al;
    uint32_t j;
    if (index == NULL) return;
    al = index->alloc;
    for (j = 0; j < index->bands; j++) minlsh__free(&al, index->band[j].e);
    minlsh__free(&al, index->band);
    minlsh__free(&al, index->idt.e);
    minlsh__free(&al, index->ids);
    minlsh__free(&al, index->sigs);
    minlsh__free(&al, index->state);
    minlsh__free(&al, index->links);
    minlsh__free(&al, index->meta);
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
uint64_t minlsh_index_config_id(const minlsh_index *index) {
    return index != NULL ? index->config_id : 0;
}

/* ---- insert / remove ---------------------------------------------------- */

int minlsh__lsh_insert(minlsh_index *ix, uint64_t id, const uint32_t *sig) {
    uint64_t keys[MINLSH_FAMILY_K_MAX];
    uint32_t j, slot;
    int empty, found, rc;
    size_t p;
    if (ix->count >= MINLSH__LSH_MAX_DOCS) return MINLSH_E_TOOBIG;
    empty = minlsh_signature_is_empty(sig, ix->k) == 1;
    /* Make room first: every step below may fail, none changes content. */
    if (ix->free_head == MINLSH__LSH_NIL) {
        rc = minlsh__slots_grow(ix, ix->n_slots + 1);
        if (rc != 0) return rc;
    }
    rc = minlsh__tab_make_room(&ix->alloc, &ix->idt);
    if (rc != 0) return rc;
    if (!empty) {
        /* Conservative: room in every band, even where the key exists. */
        for (j = 0; j < ix->bands; j++) {
            rc = minlsh__tab_make_room(&ix->alloc, &ix->band[j]);
            if (rc != 0) return rc;
        }
        minlsh__lsh_band_keys(sig, ix->bands, ix->rows, keys);
    }
    /* Link: nothing can fail from here on. */
    if (ix->free_head != MINLSH__LSH_NIL) {
        slot = ix->free_head;
        ix->free_head = (uint32_t)ix->ids[slot];
    } else {
        slot = (uint32_t)ix->n_slots++;
    }
    ix->ids[slot] = id;
    memcpy(ix->sigs + (size_t)slot * ix->k, sig, (size_t)ix->k * sizeof *sig);
    ix->state[slot] = empty ? MINLSH__LSH_EMPTYSIG : MINLSH__LSH_BUCKETED;
    p = minlsh__id_pos(ix, id, &found);
    ix->idt.e[p].tag = minlsh__id_tag(id);
    ix->idt.e[p].val = slot;
    ix->idt.used++;
    if (!empty)
        for (j = 0; j < ix->bands; j++) minlsh__bucket_link(ix, j, keys[j], slot);
    ix->count++;
    return 0;
}

int minlsh_index_insert(minlsh_index *index, uint64_t id, const uint32_t *sig,
                        size_t k_sig) {
    if (index == NULL || sig == NULL) return MINLSH_E_NULL;
    if (k_sig != index->k) return MINLSH_E_PARAM;
    if (minlsh__lsh_find_id(index, id) != MINLSH__LSH_NIL) return MINLSH_E_EXISTS;
    return minlsh__lsh_insert(index, id, sig);
}

int minlsh_index_remove(minlsh_index *index, uint64_t id) {
    uint64_t keys[MINLSH_FAMILY_K_MAX];
    uint32_t j, slot;
    int found;
    size_t p;
    if (index == NULL) return MINLSH_E_NULL;
    p = minlsh__id_pos(index, id, &found);
    if (!found) return MINLSH_E_NOTFOUND;
    slot = index->idt.e[p].val;
    if (index->state[slot] == MINLSH__LSH_BUCKETED) {
        /* Keys are recomputed rather than stored: 8 bytes per (document,
         * band) saved for b SipHash calls per remove. */
        minlsh__lsh_band_keys(minlsh__lsh_sig(index, slot), index->bands, index->rows, keys);
        for (j = 0; j < index->bands; j++) minlsh__bucket_unlink(index, j, keys[j], slot);
    }
    minlsh__tab_delete(&index->idt, p);
    index->state[slot] = MINLSH__LSH_FREE;
    index->ids[slot] = index->free_head;
    index->free_head = slot;
    index->count--;
    return 0;
}

int minlsh_index_contains(const minlsh_index *index, uint64_t id) {
    if (index == NULL) return MINLSH_E_NULL;
    return minlsh__lsh_find_id(index, id) != MINLSH__LSH_NIL;
}

int minlsh_index_get(const minlsh_index *index, uint64_t id, uint32_t *sig,
                     size_t cap, size_t *n_out) {
    uint32_t slot;
    if (index == NULL) return MINLSH_E_NULL;
    slot = minlsh__lsh_find_id(index, id);
    if (slot == MINLSH__LSH_NIL) return MINLSH_E_NOTFOUND;
    if (n_out != NULL) *n_out = index->k;
    if (cap < index->k) return MINLSH_E_BUFSIZE;
    if (sig == NULL) return MINLSH_E_NULL;
    memcpy(sig, minlsh__lsh_sig(index, slot), (size_t)index->k * sizeof *sig);
    return 0;
}

/* ---- query -------------------------------------------------------------- */

#define MINLSH__QUERY_STACK 256

int minlsh_index_query(const minlsh_index *index, const uint32_t *sig,
                       size_t k_sig, uint64_t *ids, double *similarity, size_t cap,
                       size_t *n_out) {
    uint64_t keys[MINLSH_FAMILY_K_MAX];
    uint64_t small[MINLSH__QUERY_STACK];
    uint64_t *got = small;
    size_t n = 0, got_cap = MINLSH__QUERY_STACK, i;
    uint32_t j;
    int rc = 0;
    if (index == NULL || sig == NULL) return MINLSH_E_NULL;
    if (k_sig != index->k) return MINLSH_E_PARAM;
    if (ids == NULL && cap > 0) return MINLSH_E_NULL;
    if (index->count == 0 || minlsh_signature_is_empty(sig, index->k) == 1) {
        if (n_out != NULL) *n_out = 0; /* empty documents are never candidates */
        return 0;
    }
    minlsh__lsh_band_keys(sig, index->bands, index->rows, keys);
    /* Collect the members of every matching bucket, then sort and drop
     * repeats: a per-call dedup that needs no mutable state in the index,
     * so concurrent readers are safe. */
    for (j = 0; j < index->bands && rc == 0; j++) {
        uint32_t s = minlsh__lsh_bucket_head(index, j, keys[j]);
        for (; s != MINLSH__LSH_NIL; s = minlsh__lsh_link_at(index, s, j)->next) {
            if (n == got_cap) {
                uint64_t *bigger;
                size_t bytes;
                if (minlsh__mul_size(&bytes, got_cap, 2 * sizeof *got) != 0) {
                    rc = MINLSH_E_TOOBIG;
                    break;
                }
                bigger = (uint64_t *)minlsh__malloc(&index->alloc, bytes);
                if (bigger == NULL) {
                    rc = MINLSH_E_NOMEM;
                    break;
                }
                memcpy(bigger, got, n * sizeof *got);
                if (got != small) minlsh__free(&index->alloc, got);
                got = bigger;
                got_cap *= 2;
            }
            got[n++] = s;
        }
    }
    if (rc == 0) {
        minlsh__lsh_sort_u64(got, n);
        n = minlsh__lsh_unique_u64(got, n);
        if (n_out != NULL) *n_out = n;
        if (cap < n) rc = MINLSH_E_BUFSIZE;
    }
    if (rc == 0) {
        /* Slots are not in id order: sort the ids themselves, in the
         * caller's buffer, and find each slot again for the estimate. */
        for (i = 0; i < n; i++) ids[i] = index->ids[got[i]];
        minlsh__lsh_sort_u64(ids, n);
        if (similarity != NULL)
            for (i = 0; i < n; i++) {
                uint32_t s = minlsh__lsh_find_id(index, ids[i]);
                (void)minlsh_signature_estimate(&similarity[i], sig,
                                                minlsh__lsh_sig(index, s), index->k);
            }
    }
    if (got != small) minlsh__free(&index->alloc, got);
    return rc;
}

/* ---- metadata ----------------------------------------------------------- */

int minlsh_index_set_metadata(minlsh_index *index, const void *data, size_t len) {
    uint8_t *copy = NULL;
    if (index == NULL || (data == NULL && len > 0)) return MINLSH_E_NULL;
    if ((uint64_t)len > MINLSH__METADATA_MAX) return MINLSH_E_TOOBIG;
    if (len > 0) {
        copy = (uint8_t *)minlsh__malloc(&index->alloc, len);
        if (copy == NULL) return MINLSH_E_NOMEM;
        memcpy(copy, data, len);
    }
    minlsh__free(&index->alloc, index->meta);
    index->meta = copy;
    index->meta_len = len;
    return 0;
}

int minlsh_index_metadata(const minlsh_index *index, void *buf, size_t cap,
                          size_t *n_out) {
    if (index == NULL) return MINLSH_E_NULL;
    if (n_out != NULL) *n_out = index->meta_len;
    if (cap < index->meta_len) return MINLSH_E_BUFSIZE;
    if (index->meta_len > 0) {
        if (buf == NULL) return MINLSH_E_NULL;
        memcpy(buf, index->meta, index->meta_len);
    }
    return 0;
}

int minlsh_index_ids(const minlsh_index *index, uint64_t *ids, size_t cap,
                     size_t *n_out) {
    size_t s, n = 0;
    if (index == NULL) return MINLSH_E_NULL;
    if (n_out != NULL) *n_out = index->count;
    if (cap < index->count) return MINLSH_E_BUFSIZE;
    if (ids == NULL && index->count > 0) return MINLSH_E_NULL;
    /* Written straight into the caller's buffer and sorted there: no
     * allocation, so this cannot fail for lack of memory. */
    for (s = 0; s < index->n_slots; s++)
        if (index->state[s] != MINLSH__LSH_FREE) ids[n++] = index->ids[s];
    minlsh__lsh_sort_u64(ids, n);
    return 0;
}
