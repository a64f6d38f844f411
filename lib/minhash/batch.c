/*
 * minlsh_family_sign_batch: sign many documents with a pool of threads.
 *
 * The only place the library creates threads. Each document is signed by
 * minlsh_family_sign_text straight into its own k entries of the caller's
 * array, so a document's result never depends on which thread signed it or
 * when: the output is the same for every thread count by construction.
 *
 * Work is handed out in chunks of consecutive documents through an atomic
 * counter (documents vary in size, so a static split would leave a thread
 * idle). The calling thread is worker 0 and always takes part; if a thread
 * cannot be created the call goes on with the ones it has (at worst with the
 * calling thread alone), which changes the speed and never the result. All
 * threads are joined before the call returns. Nothing is allocated here:
 * thread handles live in a fixed array on the stack, and each document's
 * scratch is sign_text's own (its signature copy on the stack, the
 * shingler's engine per call).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "minhash.h"

#if !defined(MINLSH_NO_THREADS)
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#endif

/* More threads than this are never started (the rest of the request is
 * served by the ones that exist). */
#define MINLSH__BATCH_MAX_THREADS 256
/* Documents per chunk: at most this many, and small enough that every
 * thread gets several chunks. */
#define MINLSH__BATCH_CHUNK_MAX 32

typedef struct minlsh__batch {
    const minlsh_family *family;
    const minlsh_shingler *shingler;
    const void *const *texts;
    const size_t *lens;
    size_t n, chunk;
    uint32_t k;
    uint32_t *sigs;
    int32_t *status; /* may be NULL */
#if !defined(MINLSH_NO_THREADS)
    atomic_size_t next; /* first document of the next chunk */
#endif
} minlsh__batch;

/* One worker: the shared job and the lowest-numbered failure it saw. */
typedef struct minlsh__batch_worker {
    minlsh__batch *bt;
    size_t err_at; /* n: none */
    int err;
} minlsh__batch_worker;

/* Sign documents [begin, end). A failed document gets the empty signature
 * and its code. Chunks of one worker come in increasing order, so the first
 * failure a worker sees is its lowest. */
static void minlsh__batch_range(minlsh__batch_worker *w, size_t begin, size_t end) {
    const minlsh__batch *bt = w->bt;
    size_t i;
    uint32_t v;
    for (i = begin; i < end; i++) {
        uint32_t *sig = bt->sigs + i * bt->k;
        int rc = minlsh_family_sign_text(bt->family, bt->shingler, bt->texts[i],
                                         bt->lens[i], sig, bt->k, NULL);
        if (rc != 0) {
            for (v = 0; v < bt->k; v++) sig[v] = MINLSH_EMPTY_VALUE;
            if (i < w->err_at) {
                w->err_at = i;
                w->err = rc;
            }
        }
        if (bt->status != NULL) bt->status[i] = (int32_t)rc;
    }
}

#if !defined(MINLSH_NO_THREADS)
static void minlsh__batch_work(minlsh__batch_worker *w) {
    minlsh__batch *bt = w->bt;
    for (;;) {
        size_t begin = atomic_fetch_add_explicit(&bt->next, bt->chunk, memory_order_relaxed);
        if (begin >= bt->n) return;
        minlsh__batch_range(w, begin, bt->n - begin > bt->chunk ? begin + bt->chunk : bt->n);
    }
}

static void *minlsh__batch_thread(void *arg) {
    minlsh__batch_work((minlsh__batch_worker *)arg);
    return NULL;
}

static uint32_t minlsh__online_cpus(void) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    if (c < 1) return 1;
    if (c > MINLSH__BATCH_MAX_THREADS) return MINLSH__BATCH_MAX_THREADS;
    return (uint32_t)c;
}
#endif

int minlsh_family_sign_batch(const minlsh_family *family,
                             const minlsh_shingler *shingler,
                             const void *const *texts, const size_t *lens,
                             size_t n, uint32_t threads, uint32_t *sigs,
                             size_t cap, size_t *n_out, int32_t *status) {
    minlsh__batch bt;
    minlsh__batch_worker w[MINLSH__BATCH_MAX_THREADS];
    size_t need, per, err_at;
    uint32_t k, used = 1, t;
    int err = 0;
    if (family == NULL || shingler == NULL) return MINLSH_E_NULL;
    k = minlsh_family_k(family);
    if (minlsh__mul_size(&need, n, k) != 0) return MINLSH_E_PARAM;
    if (n_out != NULL) *n_out = need;
    if (cap < need) return MINLSH_E_BUFSIZE;
    if (n > 0 && (sigs == NULL || texts == NULL || lens == NULL)) return MINLSH_E_NULL;
#if defined(MINLSH_NO_THREADS)
    if (threads > 1) return MINLSH_E_UNSUPPORTED;
    threads = 1;
#else
    if (threads == 0) threads = minlsh__online_cpus();
    if (threads > MINLSH__BATCH_MAX_THREADS) threads = MINLSH__BATCH_MAX_THREADS;
#endif
    if (n == 0) return 0;
    if ((size_t)threads > n) threads = (uint32_t)n;
    bt.family = family;
    bt.shingler = shingler;
    bt.texts = texts;
    bt.lens = lens;
    bt.n = n;
    bt.k = k;
    bt.sigs = sigs;
    bt.status = status;
    /* Chunks: about 8 per thread, capped, at least one document. */
    per = n / ((size_t)threads * 8);
    bt.chunk = per < 1 ? 1 : (per > MINLSH__BATCH_CHUNK_MAX ? MINLSH__BATCH_CHUNK_MAX : per);
    for (t = 0; t < threads; t++) {
        w[t].bt = &bt;
        w[t].err_at = n;
        w[t].err = 0;
    }
#if defined(MINLSH_NO_THREADS)
    minlsh__batch_range(&w[0], 0, n);
#else
    atomic_init(&bt.next, 0);
    if (threads == 1) {
        minlsh__batch_range(&w[0], 0, n);
    } else {
        pthread_t tid[MINLSH__BATCH_MAX_THREADS];
        uint32_t started = 0;
        for (t = 1; t < threads; t++) {
            if (pthread_create(&tid[started], NULL, minlsh__batch_thread, &w[t]) != 0)
                break; /* go on with the threads we have */
            started++;
        }
        used = started + 1;
        minlsh__batch_work(&w[0]);
        for (t = 0; t < started; t++) (void)pthread_join(tid[t], NULL);
    }
#endif
    /* The lowest-numbered failure over all workers. */
    err_at = n;
    for (t = 0; t < used; t++)
        if (w[t].err_at < err_at) {
            err_at = w[t].err_at;
            err = w[t].err;
        }
    return err;
}
