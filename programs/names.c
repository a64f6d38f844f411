/*
 * names.c: the names of the documents (paths, or JSON ids as written), kept
 * in one string pool, numbered in insertion order and unique. Lookups hash
 * with keyed SipHash (the library's), so hostile ids cannot force
 * collisions.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static uint64_t name_hash(const char *s, size_t n, int json) {
    uint64_t h = 0;
    minlsh_siphash24(&h, minlsh_default_key(), s, n);
    return h ^ (uint64_t)json;
}

static int same(const name_table *t, size_t i, const char *s, size_t n, int json) {
    const name_entry *e = &t->v[i];
    return e->len == n && e->json == json && memcmp(t->pool.p + e->off, s, n) == 0;
}

static void rehash(name_table *t) {
    size_t size = t->mask ? (t->mask + 1) * 2 : 64, i;
    free(t->slots);
    t->slots = xcalloc(size, sizeof *t->slots);
    t->mask = size - 1;
    for (i = 0; i < t->n; i++) {
        const name_entry *e = &t->v[i];
        size_t s = (size_t)name_hash(t->pool.p + e->off, e->len, e->json) & t->mask;
        while (t->slots[s] != 0) s = (s + 1) & t->mask;
        t->slots[s] = i + 1;
    }
}

int names_add(name_table *t, const char *s, size_t n, int json, size_t *dup_of) {
    size_t slot;
    void *v;
    if (n > UINT32_MAX) n = UINT32_MAX; /* names are never that long */
    if (t->mask == 0 || (t->n + 1) * 2 > t->mask + 1) rehash(t);
    slot = (size_t)name_hash(s, n, json) & t->mask;
    while (t->slots[slot] != 0) {
        if (same(t, t->slots[slot] - 1, s, n, json)) {
            if (dup_of) *dup_of = t->slots[slot] - 1;
            return 0;
        }
        slot = (slot + 1) & t->mask;
    }
    v = t->v;
    xgrow(&v, &t->cap, t->n + 1, sizeof *t->v);
    t->v = v;
    t->v[t->n].off = t->pool.n;
    t->v[t->n].len = (uint32_t)n;
    t->v[t->n].json = (uint8_t)json;
    buf_add(&t->pool, s, n);
    t->slots[slot] = ++t->n;
    return 1;
}

cli_name names_get(const name_table *t, size_t i) {
    cli_name nm;
    nm.s = t->pool.p + t->v[i].off;
    nm.n = t->v[i].len;
    nm.json = t->v[i].json;
    return nm;
}

void names_free(name_table *t) {
    buf_free(&t->pool);
    free(t->v);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
