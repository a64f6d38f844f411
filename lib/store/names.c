/*
 * The store's per-id records and its name table (store.h): names are
 * copied into one arena; the table is open addressing with linear probing,
 * at most half full, keyed by the mixed sum64 of the name, with
 * backward-shift deletion (no tombstones). A slot holds id + 1 (0: empty)
 * in its low 32 bits and the hash's high 32 bits above, so a probe reads a
 * document's record and name only when the hashes agree: one cache miss a
 * lookup instead of one per slot passed.
 *
 * The table is built the first time a name is looked up, not when a view
 * is loaded: a process that opens a store to query it never pays for it.
 * Until then nothing checks that names are unique; the build does, so a
 * store whose names repeat is found damaged by the first call that needs
 * them. A const lookup (minlsh_store_find_name may run in several threads
 * at once) builds a table of its own and publishes it with one atomic
 * exchange; a thread that loses the race frees its copy.
 */
#include "store.h"

#include "lsh/prefetch.h"

/* Ids with a name fit a slot's 32 bits: the index stops below 2^32 - 1. */
#define MINLSH__NAMES_ID_MAX UINT64_C(0xFFFFFFFE)

static uint64_t minlsh__name_hash(const void *name, size_t len) {
    return minlsh__mix64(minlsh__sum64(name, len));
}

static size_t minlsh__name_home(const minlsh__store_names *t, uint64_t h) {
    return (size_t)(h & (t->cap - 1));
}

static uint64_t minlsh__slot_of(uint64_t id, uint64_t h) {
    return (h & UINT64_C(0xFFFFFFFF00000000)) | (id + 1);
}

static uint64_t minlsh__slot_id(uint64_t v) {
    return (v & UINT64_C(0xFFFFFFFF)) - 1;
}

static const uint8_t *minlsh__name_at(const minlsh_store *s, uint64_t id) {
    return s->arena + s->docs[id].name_off;
}

static int minlsh__name_is(const minlsh_store *s, uint64_t id, const void *name, size_t len) {
    return s->docs[id].name_len == len && memcmp(minlsh__name_at(s, id), name, len) == 0;
}

/* The table as built, or NULL (the writer's own calls need no ordering:
 * they run alone on the handle). */
static minlsh__store_names *minlsh__names_get(const minlsh_store *s) {
    return atomic_load_explicit(&s->names, memory_order_acquire);
}

/* The slot holding name (hash h) in t, or the empty slot that ends its
 * run. */
static size_t minlsh__names_probe(const minlsh_store *s, const minlsh__store_names *t,
                                  const void *name, size_t len, uint64_t h) {
    size_t p;
    for (p = minlsh__name_home(t, h); t->slot[p] != 0; p = (p + 1) & (t->cap - 1))
        if ((t->slot[p] >> 32) == (h >> 32) &&
            minlsh__name_is(s, minlsh__slot_id(t->slot[p]), name, len))
            break;
    return p;
}

/* Documents hashed ahead of their insertion by minlsh__names_make, their
 * home slots prefetched meanwhile. */
#define MINLSH__NAMES_AHEAD 8

/* A table of cap slots (a power of two) holding every live named document;
 * MINLSH_E_CORRUPT if two have one name. The documents are hashed in id
 * order (records and names are read in sequence) a few ahead of their
 * insertion, whose slots are then in cache. */
static int minlsh__names_make(const minlsh_store *s, size_t cap, minlsh__store_names **out) {
    minlsh__store_names *t;
    uint64_t ring_id[MINLSH__NAMES_AHEAD], ring_h[MINLSH__NAMES_AHEAD], id = 0;
    size_t bytes, head = 0, queued = 0;
    *out = NULL;
    if (minlsh__mul_size(&bytes, cap, sizeof t->slot[0]) != 0 ||
        minlsh__add_size(&bytes, bytes, sizeof *t) != 0)
        return MINLSH_E_TOOBIG;
    t = (minlsh__store_names *)minlsh__calloc(&s->alloc, 1, bytes);
    if (t == NULL) return MINLSH_E_NOMEM;
    t->cap = cap;
    for (;;) {
        const minlsh__store_doc *d;
        size_t p;
        uint64_t h, at;
        for (; queued < MINLSH__NAMES_AHEAD && id < s->next_id; id++) {
            d = &s->docs[id];
            if (!d->live || d->name_len == 0) continue;
            if (id > MINLSH__NAMES_ID_MAX) {
                minlsh__free(&s->alloc, t);
                return MINLSH_E_CORRUPT;
            }
            h = minlsh__name_hash(minlsh__name_at(s, id), d->name_len);
            MINLSH__PREFETCH_W(&t->slot[minlsh__name_home(t, h)]);
            ring_id[(head + queued) % MINLSH__NAMES_AHEAD] = id;
            ring_h[(head + queued) % MINLSH__NAMES_AHEAD] = h;
            queued++;
        }
        if (queued == 0) break;
        at = ring_id[head];
        h = ring_h[head];
        head = (head + 1) % MINLSH__NAMES_AHEAD;
        queued--;
        d = &s->docs[at];
        p = minlsh__names_probe(s, t, minlsh__name_at(s, at), d->name_len, h);
        if (t->slot[p] != 0) {
            minlsh__free(&s->alloc, t);
            return MINLSH_E_CORRUPT;
        }
        t->slot[p] = minlsh__slot_of(at, h);
        t->used++;
    }
    *out = t;
    return 0;
}

/* Slots for n names at most half full. */
static int minlsh__names_cap_for(size_t n, size_t *cap) {
    size_t c = 64;
    if (n > SIZE_MAX / 4) return MINLSH_E_TOOBIG;
    while (c < 2 * (n + 1)) c *= 2;
    *cap = c;
    return 0;
}

/* The table, built now if it is not (const: see the top of the file). */
static int minlsh__names_need(const minlsh_store *s, const minlsh__store_names **out) {
    minlsh__store_names *t = minlsh__names_get(s), *none = NULL;
    minlsh_store *w = (minlsh_store *)s; /* only the atomic field is written */
    size_t cap;
    int rc;
    if (t == NULL) {
        rc = minlsh__names_cap_for((size_t)s->named, &cap);
        if (rc == 0) rc = minlsh__names_make(s, cap, &t);
        if (rc != 0) return rc;
        if (!atomic_compare_exchange_strong_explicit(&w->names, &none, t, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            minlsh__free(&s->alloc, t);
            t = none; /* another thread's, as good */
        }
    }
    *out = t;
    return 0;
}

int minlsh__store_name_find(uint64_t *id, const minlsh_store *s, const void *name,
                            size_t len) {
    const minlsh__store_names *t;
    size_t p;
    int rc;
    *id = UINT64_MAX;
    if (len == 0 || s->named == 0) return 0;
    rc = minlsh__names_need(s, &t);
    if (rc != 0) return rc;
    p = minlsh__names_probe(s, t, name, len, minlsh__name_hash(name, len));
    if (t->slot[p] != 0) *id = minlsh__slot_id(t->slot[p]);
    return 0;
}

uint64_t minlsh__store_name_scan(const minlsh_store *s, const void *name, size_t len) {
    uint64_t id;
    if (len == 0) return UINT64_MAX;
    for (id = 0; id < s->next_id; id++)
        if (s->docs[id].live && minlsh__name_is(s, id, name, len)) return id;
    return UINT64_MAX;
}

int minlsh__store_doc_live(const minlsh_store *s, uint64_t id) {
    return id < s->next_id && s->docs[id].live;
}

static void minlsh__names_put(minlsh_store *s, minlsh__store_names *t, uint64_t id) {
    const minlsh__store_doc *d = &s->docs[id];
    uint64_t h = minlsh__name_hash(minlsh__name_at(s, id), d->name_len);
    size_t p = minlsh__name_home(t, h);
    while (t->slot[p] != 0) p = (p + 1) & (t->cap - 1);
    t->slot[p] = minlsh__slot_of(id, h);
    t->used++;
}

/* A built table with room for `more` names past those it has: rebuilt
 * larger when it would pass half full. */
static int minlsh__names_room(minlsh_store *s, size_t more) {
    minlsh__store_names *t = minlsh__names_get(s), *nt;
    size_t cap;
    int rc;
    if (t == NULL || t->used + more <= t->cap / 2) return 0;
    if (more > SIZE_MAX / 4 - t->used) return MINLSH_E_TOOBIG;
    rc = minlsh__names_cap_for(t->used + more, &cap);
    if (rc == 0) rc = minlsh__names_make(s, cap, &nt);
    if (rc != 0) return rc;
    atomic_store_explicit(&s->names, nt, memory_order_release);
    minlsh__free(&s->alloc, t);
    return 0;
}

int minlsh__store_doc_reserve(minlsh_store *s, uint64_t id, size_t name_len) {
    void *p;
    int rc;
    if (id >= (uint64_t)SIZE_MAX / sizeof *s->docs) return MINLSH_E_TOOBIG;
    p = s->docs;
    rc = minlsh__reserve(&s->alloc, &p, &s->docs_cap, (size_t)s->next_id, (size_t)id + 1,
                         sizeof *s->docs);
    if (rc != 0) return rc;
    s->docs = (minlsh__store_doc *)p;
    if (name_len == 0) return 0;
    if (id > MINLSH__NAMES_ID_MAX) return MINLSH_E_TOOBIG;
    p = s->arena;
    if (s->arena_len > SIZE_MAX - name_len) return MINLSH_E_TOOBIG;
    rc = minlsh__reserve(&s->alloc, &p, &s->arena_cap, s->arena_len, s->arena_len + name_len, 1);
    if (rc != 0) return rc;
    s->arena = (uint8_t *)p;
    return minlsh__names_room(s, 1);
}

/* The doc record and the name's bytes, not the name table. */
static void minlsh__store_doc_place(minlsh_store *s, uint64_t id, const void *name,
                                    size_t name_len, uint64_t set_off) {
    minlsh__store_doc *d;
    while (s->next_id <= id) { /* ids a failed or removed add left unused */
        d = &s->docs[s->next_id++];
        memset(d, 0, sizeof *d);
        d->set_off = MINLSH__STORE_NO_SET;
    }
    d = &s->docs[id];
    d->live = 1;
    d->set_off = set_off;
    d->name_len = (uint32_t)name_len;
    d->name_off = s->arena_len;
    if (name_len > 0) {
        memcpy(s->arena + s->arena_len, name, name_len);
        s->arena_len += name_len;
        s->named++;
    }
    s->live++;
}

void minlsh__store_doc_add(minlsh_store *s, uint64_t id, const void *name, size_t name_len,
                           uint64_t set_off) {
    minlsh__store_names *t = minlsh__names_get(s);
    minlsh__store_doc_place(s, id, name, name_len, set_off);
    if (name_len > 0 && t != NULL) minlsh__names_put(s, t, id);
}

void minlsh__store_doc_remove(minlsh_store *s, uint64_t id) {
    minlsh__store_doc *d = &s->docs[id];
    minlsh__store_names *t = minlsh__names_get(s);
    size_t i, j, k, mask;
    if (!d->live) return;
    d->live = 0;
    s->live--;
    if (d->name_len == 0) return;
    s->named--;
    if (t == NULL) return;
    mask = t->cap - 1;
    i = minlsh__name_home(t, minlsh__name_hash(minlsh__name_at(s, id), d->name_len));
    while (minlsh__slot_id(t->slot[i]) != id) i = (i + 1) & mask;
    /* Backward shift: move up every later entry of the run whose home is
     * not between the hole and it (cyclically). */
    for (j = (i + 1) & mask; t->slot[j] != 0; j = (j + 1) & mask) {
        uint64_t v = t->slot[j], other = minlsh__slot_id(v);
        k = minlsh__name_home(
            t, minlsh__name_hash(minlsh__name_at(s, other), s->docs[other].name_len));
        if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
            t->slot[i] = v;
            i = j;
        }
    }
    t->slot[i] = 0;
    t->used--;
}

void minlsh__store_docs_free(minlsh_store *s) {
    minlsh__free(&s->alloc, s->docs);
    minlsh__free(&s->alloc, s->arena);
    minlsh__free(&s->alloc, minlsh__names_get(s));
    s->docs = NULL;
    s->arena = NULL;
    atomic_store_explicit(&s->names, NULL, memory_order_relaxed);
    s->docs_cap = s->arena_cap = s->arena_len = 0;
    s->next_id = s->live = s->named = 0;
}

int minlsh__store_docs_presize(minlsh_store *s, uint64_t last_id, size_t name_bytes) {
    void *p;
    int rc;
    if (last_id >= (uint64_t)SIZE_MAX / sizeof *s->docs) return MINLSH_E_TOOBIG;
    p = s->docs;
    rc = minlsh__reserve(&s->alloc, &p, &s->docs_cap, (size_t)s->next_id, (size_t)last_id + 1,
                         sizeof *s->docs);
    if (rc != 0) return rc;
    s->docs = (minlsh__store_doc *)p;
    if (s->arena_len > SIZE_MAX - name_bytes) return MINLSH_E_TOOBIG;
    p = s->arena;
    rc = minlsh__reserve(&s->alloc, &p, &s->arena_cap, s->arena_len, s->arena_len + name_bytes, 1);
    if (rc != 0) return rc;
    s->arena = (uint8_t *)p;
    return 0;
}

int minlsh__store_doc_load(minlsh_store *s, uint64_t id, const void *name, size_t name_len,
                           uint64_t set_off) {
    int rc = minlsh__store_doc_reserve(s, id, name_len);
    if (rc != 0) return rc;
    minlsh__store_doc_place(s, id, name, name_len, set_off);
    return 0;
}

int minlsh__store_names_check(minlsh_store *s) {
    const minlsh__store_names *t;
    return minlsh__names_need(s, &t);
}

int minlsh__store_name_known(const minlsh_store *s, const void *name, size_t len) {
    const minlsh__store_names *t = minlsh__names_get(s);
    return t != NULL && len > 0 &&
           t->slot[minlsh__names_probe(s, t, name, len, minlsh__name_hash(name, len))] != 0;
}
