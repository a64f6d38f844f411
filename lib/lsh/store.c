/*
 * Chunked arrays (lsh.h): element i lives in chunk i / 4096. Chunk 0 grows
 * by doubling from 16 elements (small indexes stay small); every later chunk
 * is allocated whole. Growing never moves an element past chunk 0, so a
 * million signatures are never copied, pages are touched once, and the
 * slack is at most one chunk.
 */
#include "lsh.h"

#define MINLSH__STORE_FIRST 16

int minlsh__store_reserve(const minlsh_allocator *a, minlsh__lsh_store *s, size_t n) {
    size_t bytes, added = 0, i;
    if (n <= minlsh__store_cap(s)) return 0;
    if (s->n_chunks <= 1 && n <= MINLSH__STORE_CHUNK) {
        /* Chunk 0: a power of two >= n (at least double the old size). */
        size_t cap = s->n_chunks == 0 ? MINLSH__STORE_FIRST : s->first_cap * 2;
        unsigned char *c;
        while (cap < n) cap *= 2;
        if (cap > MINLSH__STORE_CHUNK) cap = MINLSH__STORE_CHUNK;
        if (s->chunk_cap == 0) {
            s->chunk = (unsigned char **)minlsh__malloc(a, 4 * sizeof *s->chunk);
            if (s->chunk == NULL) return MINLSH_E_NOMEM;
            s->chunk_cap = 4;
        }
        if (minlsh__mul_size(&bytes, cap, s->elem) != 0) return MINLSH_E_TOOBIG;
        c = (unsigned char *)minlsh__malloc(a, bytes);
        if (c == NULL) return MINLSH_E_NOMEM;
        if (s->n_chunks == 1) {
            memcpy(c, s->chunk[0], s->first_cap * s->elem);
            minlsh__free(a, s->chunk[0]);
        }
        s->chunk[0] = c;
        s->n_chunks = 1;
        s->first_cap = cap;
        return 0;
    }
    /* Chunk 0 must be whole before later chunks exist. */
    if (s->n_chunks >= 1 && s->first_cap < MINLSH__STORE_CHUNK) {
        int rc = minlsh__store_reserve(a, s, MINLSH__STORE_CHUNK);
        if (rc != 0) return rc;
    } else if (s->n_chunks == 0) {
        int rc = minlsh__store_reserve(a, s, MINLSH__STORE_CHUNK);
        if (rc != 0) return rc;
    }
    {
        size_t need_chunks = (n + MINLSH__STORE_CHUNK - 1) / MINLSH__STORE_CHUNK;
        if (need_chunks > s->chunk_cap) {
            size_t ncap = s->chunk_cap * 2;
            unsigned char **v;
            while (ncap < need_chunks) ncap *= 2;
            if (minlsh__mul_size(&bytes, ncap, sizeof *v) != 0) return MINLSH_E_TOOBIG;
            v = (unsigned char **)minlsh__malloc(a, bytes);
            if (v == NULL) return MINLSH_E_NOMEM;
            memcpy(v, s->chunk, s->n_chunks * sizeof *v);
            minlsh__free(a, s->chunk);
            s->chunk = v;
            s->chunk_cap = ncap;
        }
        if (minlsh__mul_size(&bytes, MINLSH__STORE_CHUNK, s->elem) != 0) return MINLSH_E_TOOBIG;
        while (s->n_chunks + added < need_chunks) {
            unsigned char *c = (unsigned char *)minlsh__malloc(a, bytes);
            if (c == NULL) {
                /* Unchanged on failure: drop what this call added. */
                for (i = 0; i < added; i++) minlsh__free(a, s->chunk[s->n_chunks + i]);
                return MINLSH_E_NOMEM;
            }
            s->chunk[s->n_chunks + added++] = c;
        }
        s->n_chunks += added;
    }
    return 0;
}

void minlsh__store_free(const minlsh_allocator *a, minlsh__lsh_store *s) {
    size_t i;
    for (i = 0; i < s->n_chunks; i++) minlsh__free(a, s->chunk[i]);
    minlsh__free(a, s->chunk);
    s->chunk = NULL;
    s->n_chunks = s->chunk_cap = s->first_cap = 0;
}

size_t minlsh__store_bytes(const minlsh__lsh_store *s) {
    if (s->n_chunks == 0) return 0;
    return s->first_cap * s->elem + (s->n_chunks - 1) * MINLSH__STORE_CHUNK * s->elem +
           s->chunk_cap * sizeof *s->chunk;
}
