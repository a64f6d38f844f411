/*
 * The store's per-id records and its name table (store.h): names are
 * copied into one arena; the table is open addressing with linear probing
 * over id + 1 (0: empty), at most half full, keyed by the sum64 of the
 * name, with backward-shift deletion (no tombstones).
 */
#include "store.h"

static size_t minlsh__name_home(const minlsh_store *s, const void *name, size_t len) {
    return (size_t)(minlsh__mix64(minlsh__sum64(name, len)) & (s->names_cap - 1));
}

static const uint8_t *minlsh__name_at(const minlsh_store *s, uint64_t id) {
    return s->arena + s->docs[id].name_off;
}

uint64_t minlsh__store_name_find(const minlsh_store *s, const void *name, size_t len) {
    size_t p;
    if (len == 0 || s->names_cap == 0) return UINT64_MAX;
    for (p = minlsh__name_home(s, name, len);; p = (p + 1) & (s->names_cap - 1)) {
        uint64_t v = s->names[p];
        if (v == 0) return UINT64_MAX;
        if (s->docs[v - 1].name_len == len && memcmp(minlsh__name_at(s, v - 1), name, len) == 0)
            return v - 1;
    }
}

int minlsh__store_doc_live(const minlsh_store *s, uint64_t id) {
    return id < s->next_id && s->docs[id].live;
}

static void minlsh__names_put(minlsh_store *s, uint64_t id) {
    const minlsh__store_doc *d = &s->docs[id];
    size_t p = minlsh__name_home(s, minlsh__name_at(s, id), d->name_len);
    while (s->names[p] != 0) p = (p + 1) & (s->names_cap - 1);
    s->names[p] = id + 1;
    s->names_used++;
}
/* The name table at cap slots, every name put again (one home for growth). */
static int minlsh__names_rehash(minlsh_store *s, size_t cap) {
    uint64_t *old = s->names, *nt;
    size_t old_cap = s->names_cap, i;
    if (cap > SIZE_MAX / sizeof *nt) return MINLSH_E_TOOBIG;
    nt = (uint64_t *)minlsh__calloc(&s->alloc, cap, sizeof *nt);
    if (nt == NULL) return MINLSH_E_NOMEM;
    s->names = nt;
    s->names_cap = cap;
    s->names_used = 0;
    for (i = 0; i < old_cap; i++)
        if (old[i] != 0) minlsh__names_put(s, old[i] - 1);
    minlsh__free(&s->alloc, old);
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
    p = s->arena;
    if (s->arena_len > SIZE_MAX - name_len) return MINLSH_E_TOOBIG;
    rc = minlsh__reserve(&s->alloc, &p, &s->arena_cap, s->arena_len, s->arena_len + name_len, 1);
    if (rc != 0) return rc;
    s->arena = (uint8_t *)p;
    if (s->names_used + 1 > s->names_cap / 2) {
        int rc2 = minlsh__names_rehash(s, s->names_cap > 0 ? s->names_cap * 2 : 64);
        if (rc2 != 0) return rc2;
    }
    return 0;
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
    }
    s->live++;
}

void minlsh__store_doc_add(minlsh_store *s, uint64_t id, const void *name, size_t name_len,
                           uint64_t set_off) {
    minlsh__store_doc_place(s, id, name, name_len, set_off);
    if (name_len > 0) minlsh__names_put(s, id);
}

void minlsh__store_doc_remove(minlsh_store *s, uint64_t id) {
    minlsh__store_doc *d = &s->docs[id];
    size_t i, j, k, mask = s->names_cap - 1;
    if (!d->live) return;
    d->live = 0;
    s->live--;
    if (d->name_len == 0) return;
    i = minlsh__name_home(s, minlsh__name_at(s, id), d->name_len);
    while (s->names[i] != id + 1) i = (i + 1) & mask;
    /* Backward shift: move up every later entry of the run whose home is
     * not between the hole and it (cyclically). */
    for (j = (i + 1) & mask; s->names[j] != 0; j = (j + 1) & mask) {
        uint64_t v = s->names[j];
        k = minlsh__name_home(s, minlsh__name_at(s, v - 1), s->docs[v - 1].name_len);
        if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
            s->names[i] = v;
            i = j;
        }
    }
    s->names[i] = 0;
    s->names_used--;
}

void minlsh__store_docs_free(minlsh_store *s) {
    minlsh__free(&s->alloc, s->docs);
    minlsh__free(&s->alloc, s->arena);
    minlsh__free(&s->alloc, s->names);
    s->docs = NULL;
    s->arena = NULL;
    s->names = NULL;
    s->docs_cap = s->arena_cap = s->arena_len = s->names_cap = s->names_used = 0;
    s->next_id = s->live = 0;
}

int minlsh__store_docs_presize(minlsh_store *s, uint64_t last_id, size_t n_names,
                               size_t name_bytes) {
    void *p;
    size_t want, cap;
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
    /* at most half full with every name in: one table, no regrowth */
    if (n_names > SIZE_MAX / 4 - s->names_used) return MINLSH_E_TOOBIG;
    want = 2 * (s->names_used + n_names + 1);
    for (cap = s->names_cap > 0 ? s->names_cap : 64; cap < want; cap *= 2) {
    }
    if (cap > s->names_cap) {
        int rc2 = minlsh__names_rehash(s, cap);
        if (rc2 != 0) return rc2;
    }
    return 0;
}

int minlsh__store_doc_add_new(minlsh_store *s, uint64_t id, const void *name, size_t name_len,
                              uint64_t set_off) {
    size_t p = 0;
    int rc = minlsh__store_doc_reserve(s, id, name_len);
    if (rc != 0) return rc;
    if (name_len > 0) {
        /* one probe finds the name or the free slot it will take */
        for (p = minlsh__name_home(s, name, name_len); s->names[p] != 0;
             p = (p + 1) & (s->names_cap - 1)) {
            uint64_t v = s->names[p];
            if (s->docs[v - 1].name_len == name_len &&
                memcmp(minlsh__name_at(s, v - 1), name, name_len) == 0)
                return MINLSH_E_CORRUPT;
        }
    }
    minlsh__store_doc_place(s, id, name, name_len, set_off);
    if (name_len > 0) {
        s->names[p] = id + 1;
        s->names_used++;
    }
    return 0;
}
