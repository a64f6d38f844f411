/*
 * The thread pool: the one place minlsh creates threads. Used by the batch
 * signing call (lib/minhash/batch.c), the dedup engine, and through the
 * public handle it is (minlsh_pool, include/minlsh.h) by the minlsh command.
 * Internal: every name minlsh__pool_*, hidden in the shared library.
 *
 * A pool of n workers is the calling thread (worker 0) and n - 1 threads
 * that wait between runs. A run hands items [0, n) out in chunks of
 * consecutive items through an atomic counter (items vary in cost, so a
 * static split would leave workers idle); every worker, the caller
 * included, takes chunks until none is left. Callers write results only
 * into per-item slots or per-worker scratch (indexed by the worker number),
 * so what comes out never depends on the number of threads or on timing.
 * If a thread cannot be created the pool goes on with the ones it has (at
 * worst the caller alone): that changes the speed, never the result.
 */
#ifndef MINLSH_COMMON_POOL_H
#define MINLSH_COMMON_POOL_H

#include <stddef.h>

#include "minlsh.h"

/* More workers than this are never started. */
#define MINLSH__POOL_MAX_THREADS 256

/* The public minlsh_pool is this very struct: no wrapper to allocate. */
typedef struct minlsh_pool minlsh__pool;

/* Process items [begin, end) as worker number `worker` (0..size-1). A
 * non-zero return stops the run (no new chunk is handed out) and is what
 * minlsh__pool_run returns. */
typedef int (*minlsh__pool_fn)(void *ctx, unsigned worker, size_t begin, size_t end);

/* A pool of `threads` workers (0: minlsh__pool_default_threads(); more than
 * MINLSH__POOL_MAX_THREADS: that many), allocated with a (NULL: malloc).
 * Built with -DMINLSH_NO_THREADS every pool has the caller alone.
 * Errors: MINLSH_E_NULL, MINLSH_E_NOMEM (then *out is NULL). */
int minlsh__pool_new(minlsh__pool **out, const minlsh_allocator *a, unsigned threads);
/* Stops and joins the threads. NULL-safe. */
void minlsh__pool_free(minlsh__pool *p);
/* Workers, the caller included (1 for a NULL pool). */
unsigned minlsh__pool_size(const minlsh__pool *p);
/* Run fn over n items in chunks of `chunk` (0 means 1) on every worker and
 * return when all are done: 0, or the first non-zero return of fn. A NULL
 * pool runs everything on the calling thread as worker 0. One run at a time
 * per pool (the caller provides exclusion). */
int minlsh__pool_run(minlsh__pool *p, size_t n, size_t chunk, minlsh__pool_fn fn, void *ctx);
/* minlsh__pool_run in two halves, so that the caller can do other work
 * while the pool's threads start on the items: start hands them out to the
 * threads (a pool without threads does nothing yet), wait makes the caller
 * a worker for whatever is left and returns what run would. A NULL pool is
 * not allowed here (it has no place to keep the run). Every start needs
 * its wait before the next start. */
void minlsh__pool_start(minlsh__pool *p, size_t n, size_t chunk, minlsh__pool_fn fn, void *ctx);
int minlsh__pool_wait(minlsh__pool *p);
/* The number of online processors, 1..MINLSH__POOL_MAX_THREADS. */
unsigned minlsh__pool_default_threads(void);

#endif /* MINLSH_COMMON_POOL_H */
