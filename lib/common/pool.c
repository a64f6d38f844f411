/*
 * The thread pool (pool.h has the contract). Workers sleep on a condition
 * variable between runs; a run is published by bumping a generation number
 * under the mutex, chunks are claimed with an atomic counter, and the
 * caller waits on a second condition variable for the last thread to
 * finish. No state outlives minlsh__pool_free.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "common/pool.h"

#include "common/common.h"

#include <stdatomic.h>

#if !defined(MINLSH_NO_THREADS)
#include <pthread.h>
#include <unistd.h>
#endif

typedef struct minlsh__pool_worker {
    struct minlsh_pool *pool;
    unsigned id;
} minlsh__pool_worker;

struct minlsh_pool {
    minlsh_allocator alloc;
    unsigned size; /* workers, the caller included */
    /* the current run */
    minlsh__pool_fn fn;
    void *ctx;
    size_t n_items, chunk;
    int started; /* a public start is waiting for its wait */
    /* a run of the public API: its function, called through
     * minlsh__pool_public_range (the worker number's type differs) */
    minlsh_pool_fn public_fn;
    void *public_ctx;
    /* The counters every claim writes get cache lines of their own: a
     * claim by one thread must not evict the run's fields (or the other
     * thread's mutex) from the other threads' caches. */
    char pad_before[64];
    atomic_size_t next; /* first item of the next chunk */
    atomic_int result;  /* first non-zero return of fn */
    char pad_after[64];
#if !defined(MINLSH_NO_THREADS)
    unsigned n_threads; /* threads started: size - 1 */
    pthread_t *threads;
    minlsh__pool_worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t start_cv, done_cv;
    atomic_uint_least64_t generation; /* written under mu; polled without */
    int shutdown;
    atomic_uint active; /* threads still busy with the current run (written under mu) */
#endif
};

/* Claim chunks until none is left or some worker failed. */
static void minlsh__pool_take(minlsh__pool *p, unsigned id) {
    /* The run's fields do not change until it ends: read once. */
    const minlsh__pool_fn fn = p->fn;
    void *const ctx = p->ctx;
    const size_t n = p->n_items, chunk = p->chunk;
    for (;;) {
        size_t begin, end;
        int rc;
        if (atomic_load_explicit(&p->result, memory_order_relaxed) != 0) return;
        begin = atomic_fetch_add_explicit(&p->next, chunk, memory_order_relaxed);
        if (begin >= n) return;
        end = n - begin > chunk ? begin + chunk : n;
        rc = fn(ctx, id, begin, end);
        if (rc != 0) {
            int zero = 0;
            atomic_compare_exchange_strong(&p->result, &zero, rc);
            return;
        }
    }
}

#if !defined(MINLSH_NO_THREADS)
/* Polls before a thread sleeps: runs often follow each other within tens
 * of microseconds (a batch is shingled, then signed), and waking a sleeping
 * thread costs about that much, longer on virtual machines, during which
 * its core idles. About 2000 pause instructions: 10 to 100 microseconds
 * depending on the processor, nothing next to a run. */
#define MINLSH__POOL_SPIN 2000

static void minlsh__pool_relax(void) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void *minlsh__pool_main(void *arg) {
    minlsh__pool_worker *w = (minlsh__pool_worker *)arg;
    minlsh__pool *p = w->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (!p->shutdown && atomic_load_explicit(&p->generation, memory_order_relaxed) == seen) {
            int i;
            pthread_mutex_unlock(&p->mu);
            for (i = 0; i < MINLSH__POOL_SPIN &&
                        atomic_load_explicit(&p->generation, memory_order_relaxed) == seen;
                 i++)
                minlsh__pool_relax();
            pthread_mutex_lock(&p->mu);
        }
        while (!p->shutdown && atomic_load_explicit(&p->generation, memory_order_relaxed) == seen)
            pthread_cond_wait(&p->start_cv, &p->mu);
        if (p->shutdown) break;
        seen = atomic_load_explicit(&p->generation, memory_order_relaxed);
        pthread_mutex_unlock(&p->mu);
        minlsh__pool_take(p, w->id);
        pthread_mutex_lock(&p->mu);
        if (atomic_fetch_sub_explicit(&p->active, 1, memory_order_relaxed) == 1)
            pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}
#endif

unsigned minlsh__pool_default_threads(void) {
#if defined(MINLSH_NO_THREADS)
    return 1;
#else
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    if (c < 1) return 1;
    if (c > MINLSH__POOL_MAX_THREADS) return MINLSH__POOL_MAX_THREADS;
    return (unsigned)c;
#endif
}

int minlsh__pool_new(minlsh__pool **out, const minlsh_allocator *a, unsigned threads) {
    minlsh__pool *p;
    minlsh_allocator al;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if ((rc = minlsh__alloc_setup(&al, a)) != 0) return rc;
    if (threads == 0) threads = minlsh__pool_default_threads();
    if (threads > MINLSH__POOL_MAX_THREADS) threads = MINLSH__POOL_MAX_THREADS;
    p = (minlsh__pool *)minlsh__calloc(&al, 1, sizeof *p);
    if (p == NULL) return MINLSH_E_NOMEM;
    p->alloc = al;
    p->size = 1;
    atomic_init(&p->next, 0);
    atomic_init(&p->result, 0);
#if !defined(MINLSH_NO_THREADS)
    atomic_init(&p->generation, 0);
    atomic_init(&p->active, 0);
    if (threads > 1) {
        unsigned i;
        p->threads = (pthread_t *)minlsh__calloc(&al, threads - 1, sizeof *p->threads);
        p->workers = (minlsh__pool_worker *)minlsh__calloc(&al, threads - 1, sizeof *p->workers);
        if (p->threads == NULL || p->workers == NULL) {
            minlsh__free(&al, p->threads);
            minlsh__free(&al, p->workers);
            minlsh__free(&al, p);
            return MINLSH_E_NOMEM;
        }
        if (pthread_mutex_init(&p->mu, NULL) != 0) goto alone;
        if (pthread_cond_init(&p->start_cv, NULL) != 0) {
            pthread_mutex_destroy(&p->mu);
            goto alone;
        }
        if (pthread_cond_init(&p->done_cv, NULL) != 0) {
            pthread_cond_destroy(&p->start_cv);
            pthread_mutex_destroy(&p->mu);
            goto alone;
        }
        for (i = 0; i + 1 < threads; i++) {
            p->workers[i].pool = p;
            p->workers[i].id = i + 1;
            if (pthread_create(&p->threads[i], NULL, minlsh__pool_main, &p->workers[i]) != 0)
                break; /* go on with the threads we have */
            p->n_threads++;
        }
        p->size = p->n_threads + 1;
        if (p->n_threads == 0) {
            pthread_cond_destroy(&p->done_cv);
            pthread_cond_destroy(&p->start_cv);
            pthread_mutex_destroy(&p->mu);
            goto alone;
        }
    }
    *out = p;
    return 0;
alone:
    /* No synchronisation objects: the caller works alone. */
    minlsh__free(&al, p->threads);
    minlsh__free(&al, p->workers);
    p->threads = NULL;
    p->workers = NULL;
    p->n_threads = 0;
    p->size = 1;
#else
    (void)threads;
#endif
    *out = p;
    return 0;
}

void minlsh__pool_free(minlsh__pool *p) {
    minlsh_allocator al;
    if (p == NULL) return;
    al = p->alloc;
#if !defined(MINLSH_NO_THREADS)
    if (p->n_threads > 0) {
        unsigned i;
        pthread_mutex_lock(&p->mu);
        p->shutdown = 1;
        pthread_cond_broadcast(&p->start_cv);
        pthread_mutex_unlock(&p->mu);
        for (i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
        pthread_cond_destroy(&p->done_cv);
        pthread_cond_destroy(&p->start_cv);
        pthread_mutex_destroy(&p->mu);
    }
    minlsh__free(&al, p->threads);
    minlsh__free(&al, p->workers);
#endif
    minlsh__free(&al, p);
}

unsigned minlsh__pool_size(const minlsh__pool *p) { return p == NULL ? 1 : p->size; }

void minlsh__pool_start(minlsh__pool *p, size_t n, size_t chunk, minlsh__pool_fn fn, void *ctx) {
    if (p == NULL) return;
    if (chunk == 0) chunk = 1;
    p->fn = fn;
    p->ctx = ctx;
    p->n_items = n;
    p->chunk = chunk;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->result, 0, memory_order_relaxed);
#if !defined(MINLSH_NO_THREADS)
    if (p->n_threads > 0 && n > 0) {
        /* The mutex publishes the run's fields to the threads. */
        pthread_mutex_lock(&p->mu);
        atomic_store_explicit(&p->active, p->n_threads, memory_order_relaxed);
        atomic_fetch_add_explicit(&p->generation, 1, memory_order_relaxed);
        pthread_cond_broadcast(&p->start_cv);
        pthread_mutex_unlock(&p->mu);
    }
#endif
}

int minlsh__pool_wait(minlsh__pool *p) {
    if (p == NULL || p->n_items == 0) return 0;
    minlsh__pool_take(p, 0);
#if !defined(MINLSH_NO_THREADS)
    if (p->n_threads > 0) {
        int i;
        /* The threads' last chunks are usually a moment away. The mutex
         * below then makes their writes visible. */
        for (i = 0; i < MINLSH__POOL_SPIN &&
                    atomic_load_explicit(&p->active, memory_order_relaxed) > 0;
             i++)
            minlsh__pool_relax();
        pthread_mutex_lock(&p->mu);
        while (atomic_load_explicit(&p->active, memory_order_relaxed) > 0)
            pthread_cond_wait(&p->done_cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
#endif
    p->n_items = 0;
    return atomic_load_explicit(&p->result, memory_order_relaxed);
}

int minlsh__pool_run(minlsh__pool *p, size_t n, size_t chunk, minlsh__pool_fn fn, void *ctx) {
    if (n == 0) return 0;
    if (chunk == 0) chunk = 1;
    if (p == NULL) {
        /* The calling thread alone, chunk by chunk as a worker would. */
        size_t begin;
        int rc;
        for (begin = 0; begin < n; begin += chunk)
            if ((rc = fn(ctx, 0, begin, n - begin > chunk ? begin + chunk : n)) != 0) return rc;
        return 0;
    }
    minlsh__pool_start(p, n, chunk, fn, ctx);
    return minlsh__pool_wait(p);
}

/* ---- the public handle ------------------------------------------------------ */

static int minlsh__pool_public_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    const minlsh__pool *p = (const minlsh__pool *)ctx;
    return p->public_fn(p->public_ctx, (uint32_t)worker, begin, end);
}

int minlsh_pool_new(minlsh_pool **out, uint32_t threads, const minlsh_allocator *alloc) {
    return minlsh__pool_new(out, alloc, threads);
}

void minlsh_pool_free(minlsh_pool *pool) { minlsh__pool_free(pool); }

uint32_t minlsh_pool_threads(const minlsh_pool *pool) { return minlsh__pool_size(pool); }

int minlsh_pool_run(minlsh_pool *pool, size_t n, size_t chunk, minlsh_pool_fn fn, void *ctx) {
    size_t begin;
    int rc;
    if (fn == NULL) return MINLSH_E_NULL;
    if (chunk == 0) chunk = 1;
    if (pool == NULL) {
        for (begin = 0; begin < n; begin += chunk)
            if ((rc = fn(ctx, 0, begin, n - begin > chunk ? begin + chunk : n)) != 0) return rc;
        return 0;
    }
    if ((rc = minlsh_pool_start(pool, n, chunk, fn, ctx)) != 0) return rc;
    return minlsh_pool_wait(pool);
}

int minlsh_pool_start(minlsh_pool *pool, size_t n, size_t chunk, minlsh_pool_fn fn, void *ctx) {
    if (pool == NULL || fn == NULL) return MINLSH_E_NULL;
    if (pool->started) return MINLSH_E_STATE;
    pool->public_fn = fn;
    pool->public_ctx = ctx;
    pool->started = 1;
    minlsh__pool_start(pool, n, chunk, minlsh__pool_public_range, pool);
    return 0;
}

int minlsh_pool_wait(minlsh_pool *pool) {
    if (pool == NULL || !pool->started) return 0;
    pool->started = 0;
    return minlsh__pool_wait(pool);
}
