/*
 * The thread pool (lib/common/pool.h): every item is processed exactly
 * once whatever the thread count and chunk size, a failing item stops the
 * run with its code, and a run split into start and wait lets the caller
 * work in between and still gives the whole answer.
 */
#include <stdatomic.h>
#include <string.h>

#include "common/pool.h"
#include "minlsh.h"
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

int main(void) {
    RUN(test_run_and_split_run);
    return TL_SUMMARY("pool");
}
