/*
 * lib/lsh internal: software prefetch for the band index, shared by its
 * writers (index.c) and readers (query.c).
 *
 * A large index misses the cache on nearly every table entry and group it
 * touches, and one document's misses depend on little but its own hashes.
 * So the batch calls (insert_many, query_many) work on a few documents at
 * once: they hash one document and prefetch what it will touch while
 * finishing another, and the misses overlap instead of queueing. The
 * figures behind the choices here are in docs/lsh.md section 7.
 */
#ifndef MINLSH_LSH_PREFETCH_H
#define MINLSH_LSH_PREFETCH_H

#include "lsh.h"

/* MINLSH__PREFETCH and MINLSH__PREFETCH_W are common.h's. */

/* Documents prepared ahead of the one being inserted or queried, and
 * (queries) probed ahead: the second round of misses, the groups. */
#define MINLSH__AHEAD 4
#define MINLSH__PROBE_AHEAD 2

/* Every cache line of bytes [p, p + n), n > 0. */
MINLSH__INLINE void minlsh__prefetch_range(const void *p, size_t n, int write) {
    const char *c = (const char *)p;
    size_t o;
    for (o = 0; o < n; o += 64) {
        if (write) MINLSH__PREFETCH_W(c + o);
        else MINLSH__PREFETCH(c + o);
    }
    if (write) MINLSH__PREFETCH_W(c + n - 1);
    else MINLSH__PREFETCH(c + n - 1);
}

/* The caller's signatures are read once each, AHEAD documents before their
 * turn: fetch them a further AHEAD ahead so that hashing them does not wait
 * on memory (k values: k/16 cache lines). */
MINLSH__INLINE void minlsh__prefetch_sig(const uint32_t *sig, size_t k) {
    minlsh__prefetch_range(sig, k * sizeof *sig, 0);
}

/* The run an entry's lookup and insertion go through starts at its home
 * and often crosses into the next cache line: fetch both lines at once
 * rather than one miss after the other (fewer or more lines were slower,
 * for inserts and queries alike). */
MINLSH__INLINE void minlsh__prefetch_home(const minlsh__lsh_table *t, uint32_t tag, int write) {
    const char *p;
    if (t->cap == 0) return;
    p = (const char *)&t->e[minlsh__tab_home(t, tag)];
    if (write) {
        MINLSH__PREFETCH_W(p);
        MINLSH__PREFETCH_W(p + 64);
    } else {
        MINLSH__PREFETCH(p);
        MINLSH__PREFETCH(p + 64);
    }
}

#endif /* MINLSH_LSH_PREFETCH_H */
