/*
 * minlsh_family_sign_batch: sign many documents with a pool of threads.
 *
 * The one call of the library that creates threads, through the pool of
 * lib/common/pool.h: the calling thread is worker 0 and always takes part,
 * documents are handed out in chunks through the pool's atomic counter
 * (documents vary in size, so a static split would leave a thread idle),
 * and all threads are joined before the call returns. Each document is
 * signed by minlsh_family_sign_text straight into its own k entries of the
 * caller's array, so a document's result never depends on which thread
 * signed it or when: the output is the same for every thread count by
 * construction. If the pool or a thread cannot be had the call goes on with
 * what it has (at worst the calling thread alone), which changes the speed
 * and never the result. Each document's scratch is sign_text's own (its
 * signature copy on the stack, the shingler's engine per call).
 */
#include "minhash.h"

#include "common/pool.h"
#include "shingle/shingle.h"

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
} minlsh__batch;

/* One worker's lowest-numbered failure. */
typedef struct minlsh__batch_worker {
    size_t err_at; /* n: none */
    int err;
} minlsh__batch_worker;

typedef struct minlsh__batch_run {
    const minlsh__batch *bt;
    minlsh__batch_worker *w; /* one per pool worker */
} minlsh__batch_run;

/* Sign documents [begin, end). A failed document gets the empty signature
 * and its code. Chunks of one worker come in increasing order, so the first
 * failure a worker sees is its lowest. */
static int minlsh__batch_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    const minlsh__batch_run *run = (const minlsh__batch_run *)ctx;
    const minlsh__batch *bt = run->bt;
    minlsh__batch_worker *w = &run->w[worker];
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
    return 0; /* failures are per document: the run goes on */
}

int minlsh_family_sign_batch(const minlsh_family *family,
                             const minlsh_shingler *shingler,
                             const void *const *texts, const size_t *lens,
                             size_t n, uint32_t threads, uint32_t *sigs,
                             size_t cap, size_t *n_out, int32_t *status) {
    minlsh__batch bt;
    minlsh__batch_worker w[MINLSH__POOL_MAX_THREADS];
    minlsh__batch_run run;
    minlsh__pool *pool = NULL;
    size_t need, per, err_at;
    uint32_t k, used, t;
    int err = 0;
    if (family == NULL || shingler == NULL) return MINLSH_E_NULL;
    k = minlsh_family_k(family);
    if (minlsh__mul_size(&need, n, k) != 0) return MINLSH_E_PARAM;
    if (n_out != NULL) *n_out = need;
    if (cap < need) return MINLSH_E_BUFSIZE;
    if (n > 0 && (sigs == NULL || texts == NULL || lens == NULL)) return MINLSH_E_NULL;
#if defined(MINLSH_NO_THREADS)
    if (threads > 1) return MINLSH_E_UNSUPPORTED;
#endif
    if (threads == 0) threads = minlsh__pool_default_threads();
    if (threads > MINLSH__POOL_MAX_THREADS) threads = MINLSH__POOL_MAX_THREADS;
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
    /* No pool (one thread, or no memory for one): the calling thread alone. */
    if (threads > 1)
        (void)minlsh__pool_new(&pool, minlsh__shingler_allocator(shingler), threads);
    used = minlsh__pool_size(pool);
    for (t = 0; t < used; t++) {
        w[t].err_at = n;
        w[t].err = 0;
    }
    run.bt = &bt;
    run.w = w;
    (void)minlsh__pool_run(pool, n, bt.chunk, minlsh__batch_range, &run);
    minlsh__pool_free(pool);
    /* The lowest-numbered failure over all workers. */
    err_at = n;
    for (t = 0; t < used; t++)
        if (w[t].err_at < err_at) {
            err_at = w[t].err_at;
            err = w[t].err;
        }
    return err;
}
