/*
 * names.c: the names of the documents (paths, or JSON ids as written),
 * numbered in insertion order and unique. Lookups hash with keyed SipHash
 * (the library's), so hostile ids cannot force collisions; the table keeps
 * only name numbers and 8 bits of hash (5 bytes a slot, at most 3/4 full)
 * and compares a stored name when those bits match.
 *
 * Storage: chunks that never move, each name a varint (length * 2 + json +
 * 1) then its bytes; a 0 byte where a name would start means "the next
 * name starts the next chunk" (every chunk has a byte spare for it). Only
 * the position of every NAMES_GROUP-th name is kept; the others are found
 * by skipping from it.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define NAMES_CHUNK ((size_t)1 << 20)
#define NAMES_GROUP 16
#define NAMES_OFF_MASK ((UINT64_C(1) << 40) - 1)

uint64_t names_hash(const char *s, size_t n, int json) {
    uint64_t h = 0;
    if (n > UINT32_MAX) n = UINT32_MAX; /* as names_add stores it */
    minlsh_siphash24(&h, minlsh_default_key(), s, n);
    return h ^ (uint64_t)json;
}

/* The name at position *p (chunk << 40 | offset); *p moves past it. */
static cli_name name_next(const name_table *t, uint64_t *p) {
    uint64_t c = *p >> 40, v = 0;
    const unsigned char *base = (const unsigned char *)t->chunks[c];
    const unsigned char *q = base + (*p & NAMES_OFF_MASK);
    int shift = 0;
    cli_name nm;
    if (*q == 0) {
        base = (const unsigned char *)t->chunks[++c];
        q = base;
    }
    do {
        v |= (uint64_t)(*q & 0x7f) << shift;
        shift += 7;
    } while (*q++ & 0x80);
    v--;
    nm.s = (const char *)q;
    nm.n = (size_t)(v >> 1);
    nm.json = (int)(v & 1);
    *p = c << 40 | (uint64_t)(q + nm.n - base);
    return nm;
}

uint64_t names_at(const name_table *t, size_t i) {
    uint64_t p = t->pos[i / NAMES_GROUP];
    size_t k;
    for (k = 0; k < i % NAMES_GROUP; k++) (void)name_next(t, &p);
    return p;
}

cli_name names_step(const name_table *t, uint64_t *at) {
    return name_next(t, at);
}

cli_name names_get(const name_table *t, size_t i) {
    uint64_t p = names_at(t, i);
    return name_next(t, &p);
}

/* Slots for want names at most 3/4 full (names_append may have stored many
 * without slots), and all the names there are put in them. */
static void rehash(name_table *t, size_t want) {
    size_t size = t->mask ? (t->mask + 1) * 2 : 64, i;
    uint64_t p = 0;
    if (want < t->n + 1) want = t->n + 1;
    while (want * 4 > size * 3) size *= 2;
    free(t->slots);
    free(t->tags);
    t->slots = xcalloc(size, sizeof *t->slots);
    t->tags = xmalloc(size);
    t->mask = size - 1;
    for (i = 0; i < t->n; i++) {
        cli_name nm;
        uint64_t h;
        size_t s;
        if (i % NAMES_GROUP == 0) p = t->pos[i / NAMES_GROUP];
        nm = name_next(t, &p);
        h = names_hash(nm.s, nm.n, nm.json);
        s = (size_t)h & t->mask;
        while (t->slots[s] != 0) s = (s + 1) & t->mask;
        t->slots[s] = (uint32_t)(i + 1);
        t->tags[s] = (uint8_t)(h >> 56);
    }
}

/* Store name number t->n: its varint and its bytes, in the last chunk or
 * a new one (the old one then ends with the 0 that says so). */
static void store(name_table *t, const char *s, size_t n, int json) {
    unsigned char head[10];
    uint64_t v = (uint64_t)n * 2 + (uint64_t)(json != 0) + 1;
    size_t h = 0;
    char *at;
    do {
        head[h] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) head[h] |= 0x80;
        h++;
    } while (v);
    if (t->n_chunks == 0 || t->size - t->used < h + n) {
        size_t size = h + n > NAMES_CHUNK ? h + n : NAMES_CHUNK;
        void *c = t->chunks;
        if (t->n_chunks > 0) t->chunks[t->n_chunks - 1][t->used] = 0;
        xgrow(&c, &t->cap_chunks, t->n_chunks + 1, sizeof *t->chunks);
        t->chunks = c;
        t->chunks[t->n_chunks++] = xmalloc(size + 1); /* + the spare byte */
        t->used = 0;
        t->size = size;
    }
    if (t->n % NAMES_GROUP == 0) {
        void *v2 = t->pos;
        xgrow(&v2, &t->cap, t->n / NAMES_GROUP + 1, sizeof *t->pos);
        t->pos = v2;
        t->pos[t->n / NAMES_GROUP] = (uint64_t)(t->n_chunks - 1) << 40 | t->used;
    }
    at = t->chunks[t->n_chunks - 1] + t->used;
    memcpy(at, head, h);
    memcpy(at + h, s, n);
    t->used += h + n;
}

void names_prefetch(const name_table *t, uint64_t h) {
#if defined(__GNUC__) || defined(__clang__)
    if (t->mask == 0) return;
    __builtin_prefetch(&t->slots[h & t->mask]);
    __builtin_prefetch(&t->tags[h & t->mask]);
#else
    (void)t;
    (void)h;
#endif
}

void names_reserve(name_table *t, size_t n) {
    /* A table of names without slots stays so until names_add. */
    if (t->mask == 0 && t->n > 0) return;
    if (n > SIZE_MAX / 8) n = SIZE_MAX / 8;
    if (n * 4 > (t->mask + 1) * 3) rehash(t, n);
}

int names_find(const name_table *t, const char *s, size_t n, int json, size_t *i) {
    uint64_t h;
    size_t slot;
    if (t->mask == 0) {
        /* Only names_append has filled it (no hash slots): look at each. */
        uint64_t at = 0;
        size_t k;
        for (k = 0; k < t->n; k++) {
            cli_name nm;
            if (k % NAMES_GROUP == 0) at = t->pos[k / NAMES_GROUP];
            nm = name_next(t, &at);
            if (nm.n == n && nm.json == json && memcmp(nm.s, s, n) == 0) {
                if (i) *i = k;
                return 1;
            }
        }
        return 0;
    }
    if (n > UINT32_MAX) n = UINT32_MAX;
    h = names_hash(s, n, json);
    for (slot = (size_t)h & t->mask; t->slots[slot] != 0; slot = (slot + 1) & t->mask) {
        if (t->tags[slot] == (uint8_t)(h >> 56)) {
            cli_name nm = names_get(t, t->slots[slot] - 1);
            if (nm.n == n && nm.json == json && memcmp(nm.s, s, n) == 0) {
                if (i) *i = t->slots[slot] - 1;
                return 1;
            }
        }
    }
    return 0;
}

void names_append(name_table *t, const char *s, size_t n, int json) {
    if (n > UINT32_MAX) n = UINT32_MAX;
    if (t->n >= UINT32_MAX - 1) cli_die_lib("names", MINLSH_E_TOOBIG);
    /* Slots made before would miss this name: the next names_add rebuilds
     * them from every name. */
    free(t->slots);
    free(t->tags);
    t->slots = NULL;
    t->tags = NULL;
    t->mask = 0;
    store(t, s, n, json);
    t->n++;
}

int names_add(name_table *t, const char *s, size_t n, int json, size_t *dup_of) {
    return names_add_hashed(t, s, n, json, names_hash(s, n, json), dup_of);
}

int names_add_hashed(name_table *t, const char *s, size_t n, int json, uint64_t h,
                     size_t *dup_of) {
    size_t slot;
    if (n > UINT32_MAX) n = UINT32_MAX; /* names are never that long */
    if (t->n >= UINT32_MAX - 1) cli_die_lib("names", MINLSH_E_TOOBIG); /* 2^32 - 2 at most */
    if (t->mask == 0 || (t->n + 1) * 4 > (t->mask + 1) * 3) rehash(t, 0);
    slot = (size_t)h & t->mask;
    while (t->slots[slot] != 0) {
        if (t->tags[slot] == (uint8_t)(h >> 56)) {
            cli_name nm = names_get(t, t->slots[slot] - 1);
            if (nm.n == n && nm.json == json && memcmp(nm.s, s, n) == 0) {
                if (dup_of) *dup_of = t->slots[slot] - 1;
                return 0;
            }
        }
        slot = (slot + 1) & t->mask;
    }
    store(t, s, n, json);
    t->slots[slot] = (uint32_t)++t->n;
    t->tags[slot] = (uint8_t)(h >> 56);
    return 1;
}

void names_free(name_table *t) {
    size_t i;
    for (i = 0; i < t->n_chunks; i++) free(t->chunks[i]);
    free(t->chunks);
    free(t->pos);
    free(t->slots);
    free(t->tags);
    memset(t, 0, sizeof *t);
}
