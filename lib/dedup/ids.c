/*
 * The ids of the documents (dedup.h has their layout): the entries, in
 * document order, and the shard tables that find repeated ids. This file
 * stores and reads them; the bulk intake (intake.c) walks a batch's ids
 * through the tables.
 *
 * Memory: per document with an id, its bytes, 1 or 2 of varint and 1/2 of
 * position; per id in a table, 8 bytes a slot at 3/8 to 3/4 full. Time: an
 * entry is written once; reading one walks at most MINLSH__DEDUP_ID_GROUP
 * entries from its group's start (only a repeated id, or an id asked for by
 * minlsh_dedup_copy_id, is read); a table that grows moves its slots by
 * their stored hashes, never reading an id back.
 */
#include "dedup.h"

#include "common/siphash.h"

#define MINLSH__DEDUP_ID_OFF_MASK ((UINT64_C(1) << 40) - 1)

/* ---- the entries ---------------------------------------------------------------- */

size_t minlsh__dedup_varint(uint8_t *out, uint64_t v) {
    size_t h = 0;
    do {
        out[h] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) out[h] |= 0x80;
        h++;
    } while (v);
    return h;
}

size_t minlsh__dedup_varint_size(uint64_t v) {
    size_t h = 1;
    while (v >>= 7) h++;
    return h;
}

/* The entry at *p (chunk << 40 | offset): its kind, bytes and length; *p
 * moves past it. */
static void minlsh__dedup_id_next(const minlsh__dedup_ids *t, uint64_t *p, uint32_t *kind,
                                  const uint8_t **s, size_t *n) {
    uint64_t c = *p >> 40, v = 0;
    const uint8_t *base = t->chunks[c], *q = base + (*p & MINLSH__DEDUP_ID_OFF_MASK);
    int shift = 0;
    if (*q == 0) {
        base = t->chunks[++c];
        q = base;
    }
    do {
        v |= (uint64_t)(*q & 0x7f) << shift;
        shift += 7;
    } while (*q++ & 0x80);
    v--;
    *kind = (uint32_t)(v & 3);
    *n = (size_t)(v >> 2);
    *s = q;
    *p = c << 40 | (uint64_t)(q + *n - base);
}

void minlsh__dedup_id_get(const minlsh__dedup_ids *t, uint64_t doc, uint32_t *kind,
                          const uint8_t **s, size_t *n) {
    uint64_t p = t->pos[doc / MINLSH__DEDUP_ID_GROUP];
    uint64_t k;
    for (k = 0; k < doc % MINLSH__DEDUP_ID_GROUP; k++) minlsh__dedup_id_next(t, &p, kind, s, n);
    minlsh__dedup_id_next(t, &p, kind, s, n);
}

int minlsh__dedup_id_place(minlsh_dedup *d, size_t bytes, uint8_t **out) {
    minlsh__dedup_ids *t = &d->ids;
    if (t->n_chunks == 0 || t->size - t->used < bytes) {
        size_t size = bytes > MINLSH__DEDUP_ID_CHUNK ? bytes : MINLSH__DEDUP_ID_CHUNK;
        uint8_t *c;
        void *v = t->chunks;
        int rc = minlsh__reserve(&d->alloc, &v, &t->cap_chunks, t->n_chunks, t->n_chunks + 1,
                                 sizeof *t->chunks);
        t->chunks = (uint8_t **)v;
        if (rc != 0) return rc;
        c = (uint8_t *)minlsh__malloc(&d->alloc, size + 1); /* + the byte that says "next" */
        if (c == NULL) return MINLSH_E_NOMEM;
        if (t->n_chunks > 0) t->chunks[t->n_chunks - 1][t->used] = 0;
        t->chunks[t->n_chunks++] = c;
        t->bytes += size + 1;
        t->used = 0;
        t->size = size;
    }
    if (t->n % MINLSH__DEDUP_ID_GROUP == 0) {
        size_t group = (size_t)(t->n / MINLSH__DEDUP_ID_GROUP), had = t->cap_pos;
        void *v = t->pos;
        int rc = minlsh__reserve(&d->alloc, &v, &t->cap_pos, group, group + 1, sizeof *t->pos);
        t->pos = (uint64_t *)v;
        if (rc != 0) return rc;
        t->bytes += (t->cap_pos - had) * sizeof *t->pos;
        t->pos[group] = (uint64_t)(t->n_chunks - 1) << 40 | t->used;
    }
    *out = t->chunks[t->n_chunks - 1] + t->used;
    t->used += bytes;
    t->n++;
    return 0;
}

int minlsh__dedup_ids_fill(minlsh_dedup *d, uint64_t upto) {
    while (d->ids.n < upto) {
        uint8_t *p;
        int rc = minlsh__dedup_id_place(d, 1, &p);
        if (rc != 0) return rc;
        *p = 1; /* (0 << 2 | MINLSH_DEDUP_ID_NONE) + 1 */
    }
    return 0;
}

void minlsh__dedup_ids_free(minlsh_dedup *d) {
    minlsh__dedup_ids *t = &d->ids;
    size_t i;
    for (i = 0; i < t->n_chunks; i++) minlsh__free(&d->alloc, t->chunks[i]);
    minlsh__free(&d->alloc, t->chunks);
    minlsh__free(&d->alloc, t->pos);
    for (i = 0; i < MINLSH__DEDUP_ID_SHARDS; i++) minlsh__free(&d->alloc, t->shard[i].slots);
}

uint64_t minlsh__dedup_ids_bytes(const minlsh_dedup *d) {
    uint64_t bytes = d->ids.bytes;
    size_t i;
    for (i = 0; i < MINLSH__DEDUP_ID_SHARDS; i++)
        if (d->ids.shard[i].mask != 0)
            bytes += ((uint64_t)d->ids.shard[i].mask + 1) * sizeof(minlsh__dedup_id_slot);
    return bytes;
}

/* ---- the tables ----------------------------------------------------------------- */

uint64_t minlsh__dedup_id_hash(const minlsh__dedup_ids *t, const void *s, size_t n, uint32_t kind) {
    return minlsh__siphash24_u64(t->k0, t->k1, s, n) ^ kind;
}

int minlsh__dedup_id_grow(minlsh_dedup *d, minlsh__dedup_id_shard *sh, uint64_t want) {
    uint64_t size = sh->mask ? ((uint64_t)sh->mask + 1) * 2 : 64;
    size_t i, mask;
    minlsh__dedup_id_slot *slots;
    while (want > size / 4 * 3 && size < MINLSH__DEDUP_ID_MAX_SLOTS) size *= 2;
    if (size > MINLSH__DEDUP_ID_MAX_SLOTS) size = MINLSH__DEDUP_ID_MAX_SLOTS;
    if (sh->mask != 0 && size <= (uint64_t)sh->mask + 1) return 0; /* as large as it gets */
    if (size > SIZE_MAX / sizeof *slots) return MINLSH_E_NOMEM;
    slots = (minlsh__dedup_id_slot *)minlsh__calloc(&d->alloc, (size_t)size, sizeof *slots);
    if (slots == NULL) return MINLSH_E_NOMEM;
    mask = (size_t)(size - 1);
    for (i = 0; sh->mask != 0 && i <= sh->mask; i++) {
        size_t at;
        if (sh->slots[i].doc == 0) continue;
        for (at = sh->slots[i].hash & mask; slots[at].doc != 0; at = (at + 1) & mask) {
        }
        slots[at] = sh->slots[i];
    }
    minlsh__free(&d->alloc, sh->slots);
    sh->slots = slots;
    sh->mask = mask;
    return 0;
}

/* ---- reading them back ---------------------------------------------------------- */

int minlsh_dedup_copy_id(const minlsh_dedup *d, uint64_t doc, void *out, size_t cap, size_t *n_out,
                         uint32_t *kind) {
    uint32_t k = MINLSH_DEDUP_ID_NONE;
    const uint8_t *s = NULL;
    size_t n = 0;
    if (d == NULL || n_out == NULL || (out == NULL && cap > 0)) return MINLSH_E_NULL;
    if (doc >= d->n_docs) return MINLSH_E_NOTFOUND;
    if (d->ids.on && doc < d->ids.n) minlsh__dedup_id_get(&d->ids, doc, &k, &s, &n);
    *n_out = n;
    if (kind != NULL) *kind = k;
    if (n > cap) return MINLSH_E_BUFSIZE;
    if (n > 0) memcpy(out, s, n);
    return 0;
}
