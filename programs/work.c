/*
 * work.c: a small pool of POSIX threads. The calling thread is worker 0 and
 * takes part in every run; items are handed out in chunks under a mutex.
 * Callers write results only into per-item slots (or per-worker scratch), so
 * what comes out does not depend on the number of threads or on timing.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct work_pool {
    unsigned size;      /* workers, the caller included */
    unsigned n_threads; /* threads actually started (size - 1 at most) */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t start_cv, done_cv;
    uint64_t generation;
    int shutdown;
    work_fn fn;
    void *ctx;
    size_t n_items, chunk, next;
    unsigned active; /* threads still busy with the current run */
    int result;
};

typedef struct worker_arg {
    work_pool *pool;
    unsigned id;
} worker_arg;

static void run_items(work_pool *p, unsigned id) {
    for (;;) {
        size_t begin, end;
        int rc;
        pthread_mutex_lock(&p->mu);
        if (p->result != 0 || p->next >= p->n_items) {
            pthread_mutex_unlock(&p->mu);
            return;
        }
        begin = p->next;
        end = p->n_items - begin > p->chunk ? begin + p->chunk : p->n_items;
        p->next = end;
        pthread_mutex_unlock(&p->mu);
        rc = p->fn(p->ctx, id, begin, end);
        if (rc != 0) {
            pthread_mutex_lock(&p->mu);
            if (p->result == 0) p->result = rc;
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void *worker_main(void *arg) {
    worker_arg *wa = arg;
    work_pool *p = wa->pool;
    unsigned id = wa->id;
    uint64_t seen = 0;
    free(wa);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->shutdown && p->generation == seen)
            pthread_cond_wait(&p->start_cv, &p->mu);
        if (p->shutdown) break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        run_items(p, id);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0) pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

work_pool *work_pool_new(unsigned n) {
    work_pool *p = xcalloc(1, sizeof *p);
    unsigned i;
    if (n == 0) n = work_default_threads();
    p->threads = xcalloc(n, sizeof *p->threads);
    if (pthread_mutex_init(&p->mu, NULL) != 0 ||
        pthread_cond_init(&p->start_cv, NULL) != 0 ||
        pthread_cond_init(&p->done_cv, NULL) != 0) {
        cli_msg("cannot initialise the thread pool");
        exit(CLI_FAILED);
    }
    for (i = 1; i < n; i++) {
        worker_arg *wa = xmalloc(sizeof *wa);
        wa->pool = p;
        wa->id = i;
        if (pthread_create(&p->threads[p->n_threads], NULL, worker_main, wa) != 0) {
            free(wa); /* run with the threads we have */
            break;
        }
        p->n_threads++;
    }
    p->size = p->n_threads + 1;
    return p;
}

void work_pool_free(work_pool *p) {
    unsigned i;
    if (p == NULL) return;
    pthread_mutex_lock(&p->mu);
    p->shutdown = 1;
    pthread_cond_broadcast(&p->start_cv);
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->start_cv);
    pthread_cond_destroy(&p->done_cv);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}

unsigned work_pool_size(const work_pool *p) { return p->size; }

int work_pool_run(work_pool *p, size_t n, size_t chunk, work_fn fn, void *ctx) {
    int rc;
    if (n == 0) return 0;
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->n_items = n;
    p->chunk = chunk ? chunk : 1;
    p->next = 0;
    p->result = 0;
    p->active = p->n_threads;
    p->generation++;
    pthread_cond_broadcast(&p->start_cv);
    pthread_mutex_unlock(&p->mu);
    run_items(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0) pthread_cond_wait(&p->done_cv, &p->mu);
    rc = p->result;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

unsigned work_default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    if (n > 64) return 64;
    return (unsigned)n;
}
