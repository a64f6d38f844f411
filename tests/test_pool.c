/*
 * The thread pool (lib/common/pool.h, and the public minlsh_pool): every
 * item is processed exactly once whatever the thread count and chunk size,
 * a failing item stops the run with its code, and a run split into start
 * and wait lets the caller work in between and still gives the whole
 * answer.
 */
#include <stdatomic.h>
#include <string.h>

#define MINLSH_EXPERIMENTAL_API 1
#include "common/pool.h"
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#define N 10007

typedef struct job {
    atomic_int seen[N];
    size_t fail_at; /* N: none */
} job;

static int visit(void *ctx, unsigned worker, size_t begin, size_t end) {
    job *j = (job *)ctx;
    size_t i;
    (void)worker;
    for (i = begin; i < end; i++) {
        if (i == j->fail_at) return MINLSH_E_IO;
        atomic_fetch_add(&j->seen[i], 1);
    }
    return 0;
}

static int all_once(job *j) {
    size_t i;
    for (i = 0; i < N; i++)
        if (atomic_load(&j->seen[i]) != 1) return 0;
    return 1;
}

static void reset(job *j) {
    size_t i;
    for (i = 0; i < N; i++) atomic_store(&j->seen[i], 0);
    j->fail_at = N;
}

static job the_job;

static void test_run_and_split_run(void) {
    unsigned threads[] = {1, 2, 3, 8};
    size_t chunks[] = {0, 1, 7, 5000, 20000};
    size_t t, c;
    for (t = 0; t < 4; t++) {
        minlsh__pool *p = NULL;
        EXPECT_OK(minlsh__pool_new(&p, NULL, threads[t]));
        EXPECT(minlsh__pool_size(p) >= 1 && minlsh__pool_size(p) <= threads[t]);
        for (c = 0; c < 5; c++) {
            volatile uint64_t busy = 0;
            size_t k;
            reset(&the_job);
            EXPECT_OK(minlsh__pool_run(p, N, chunks[c], visit, &the_job));
            EXPECT_MSG(all_once(&the_job), "run: threads %u chunk %zu", threads[t], chunks[c]);
            reset(&the_job);
            minlsh__pool_start(p, N, chunks[c], visit, &the_job);
            for (k = 0; k < 100000; k++) busy += k; /* the caller's own work */
            EXPECT_OK(minlsh__pool_wait(p));
            EXPECT_MSG(all_once(&the_job), "start/wait: threads %u chunk %zu", threads[t],
                       chunks[c]);
            EXPECT(busy > 0);
        }
        /* a failing item stops the run with its code, both ways */
        reset(&the_job);
        the_job.fail_at = 4321;
        EXPECT_ERR(minlsh__pool_run(p, N, 16, visit, &the_job), MINLSH_E_IO);
        reset(&the_job);
        the_job.fail_at = 17;
        minlsh__pool_start(p, N, 1, visit, &the_job);
        EXPECT_ERR(minlsh__pool_wait(p), MINLSH_E_IO);
        /* an empty run, and a wait without a start */
        minlsh__pool_start(p, 0, 1, visit, &the_job);
        EXPECT_OK(minlsh__pool_wait(p));
        EXPECT_OK(minlsh__pool_wait(p));
        minlsh__pool_free(p);
    }
    /* no pool: the caller alone */
    reset(&the_job);
    EXPECT_OK(minlsh__pool_run(NULL, N, 3, visit, &the_job));
    EXPECT(all_once(&the_job));
    EXPECT_OK(minlsh__pool_wait(NULL));
    minlsh__pool_free(NULL);
}

static atomic_uint most_worker;

static int visit_public(void *ctx, uint32_t worker, size_t begin, size_t end) {
    unsigned seen = atomic_load(&most_worker);
    while (worker > seen && !atomic_compare_exchange_weak(&most_worker, &seen, worker)) {
    }
    return visit(ctx, worker, begin, end);
}

/* The public handle: the same runs, worker numbers below its thread count,
 * a second start before the wait refused, and allocation failures leave
 * nothing behind. */
static void test_public_pool(void) {
    uint32_t threads[] = {1, 2, 5};
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    size_t t;
    long nth;
    for (t = 0; t < 3; t++) {
        minlsh_pool *p = NULL;
        EXPECT_OK(minlsh_pool_new(&p, threads[t], NULL));
        EXPECT(minlsh_pool_threads(p) >= 1 && minlsh_pool_threads(p) <= threads[t]);
        reset(&the_job);
        atomic_store(&most_worker, 0);
        EXPECT_OK(minlsh_pool_run(p, N, 7, visit_public, &the_job));
        EXPECT_MSG(all_once(&the_job), "run: threads %u", (unsigned)threads[t]);
        EXPECT(atomic_load(&most_worker) < minlsh_pool_threads(p));
        reset(&the_job);
        EXPECT_OK(minlsh_pool_start(p, N, 3, visit_public, &the_job));
        EXPECT_ERR(minlsh_pool_start(p, N, 3, visit_public, &the_job), MINLSH_E_STATE);
        EXPECT_OK(minlsh_pool_wait(p));
        EXPECT_MSG(all_once(&the_job), "start/wait: threads %u", (unsigned)threads[t]);
        reset(&the_job);
        the_job.fail_at = 99;
        EXPECT_ERR(minlsh_pool_run(p, N, 5, visit_public, &the_job), MINLSH_E_IO);
        EXPECT_OK(minlsh_pool_wait(p)); /* nothing started */
        minlsh_pool_free(p);
    }
    reset(&the_job);
    EXPECT_OK(minlsh_pool_run(NULL, N, 0, visit_public, &the_job));
    EXPECT(all_once(&the_job));
    EXPECT_EQ_INT((int)minlsh_pool_threads(NULL), 1);
    EXPECT_ERR(minlsh_pool_start(NULL, N, 1, visit_public, &the_job), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_pool_run(NULL, N, 1, NULL, &the_job), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_pool_new(NULL, 2, NULL), MINLSH_E_NULL);
    for (nth = 1; nth < 10; nth++) {
        minlsh_pool *p = (minlsh_pool *)&ta;
        int rc;
        ta_fail_nth(&ta, nth);
        rc = minlsh_pool_new(&p, 3, &al);
        EXPECT(rc == 0 || (rc == MINLSH_E_NOMEM && p == NULL));
        minlsh_pool_free(p);
        EXPECT_EQ_INT(ta_blocks(&ta), 0);
    }
}

int main(void) {
    RUN(test_run_and_split_run);
    RUN(test_public_pool);
    return TL_SUMMARY("pool");
}
