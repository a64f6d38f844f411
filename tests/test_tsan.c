/* Concurrency (docs/robustness.md): what the header says
 * may be shared really is shared safely. `make check-tsan` runs this under
 * ThreadSanitizer; `make check` runs it too, and compares results.
 *
 *  - 8 threads shingle and sign documents through ONE shingler and ONE
 *    family at the same time (one-shot hashing, sign, sign_text, their own
 *    streams), starting together so that the first use of the SIMD dispatch
 *    happens concurrently; every result equals the single-threaded one.
 *  - 8 readers query ONE index at the same time (query, query_limited, get,
 *    contains, ids, pairs, clusters, save_buffer) and read ONE matrix and
 *    ONE mapped matrix; no writer runs meanwhile, as the header requires.
 *  - minlsh_family_sign_batch with 4 threads of its own.
 *  - 8 threads look names up in ONE store handle whose name table is not
 *    built yet: they build it at once, and every answer is right.
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_index_query_limited */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "testlib.h"

#include <minlsh.h>

#include <pthread.h>

#define THREADS 8
#define DOCS 64
#define K 64
#define ROUNDS 3

static minlsh_shingler *shared_sh;
static minlsh_family *shared_fam;
static minlsh_index *shared_ix;
static minlsh_sigmatrix *shared_mx, *mapped_mx;
static pthread_barrier_t start;

static char *docs[DOCS];
static size_t lens[DOCS];

/* per thread, per document: the signature from each path */
static uint32_t got_sign[THREADS][DOCS][K], got_text[THREADS][DOCS][K], got_stream[THREADS][DOCS][K];
static uint8_t got_fp[THREADS][DOCS][16];
static int thread_errors[THREADS];

static void make_docs(void) {
    static const char *words[] = {"crawler", "page", "the", "of", "near", "duplicate",
                                  "index", "band", "<p>", "&amp;", "caf\xc3\xa9", "signature"};
    uint64_t s = 42;
    size_t d;
    for (d = 0; d < DOCS; d++) {
        size_t cap = 4000, n = 0;
        char *p = (char *)malloc(cap);
        if (p == NULL) abort();
        while (n + 16 < cap - 1000 * (d % 3)) {
            const char *w = words[tl_rand(&s) % 12];
            size_t l = strlen(w);
            if (d % 5 == 0 && n > 1500) break; /* some short documents */
            memcpy(p + n, w, l);
            n += l;
            p[n++] = ' ';
        }
        docs[d] = p;
        lens[d] = d % 17 == 16 ? 0 : n; /* and an empty one */
    }
}

static void *signer(void *arg) {
    int t = (int)(intptr_t)arg, r;
    minlsh_shingleset *set = NULL;
    minlsh_shinglestream *st = NULL;
    size_t d, off;
    if (minlsh_shingleset_new(&set, NULL) != 0 || minlsh_shinglestream_new(&st, shared_sh, NULL) != 0)
        thread_errors[t]++;
    pthread_barrier_wait(&start);
    (void)minlsh_simd_kernel_name(); /* first use, concurrently */
    for (r = 0; r < ROUNDS; r++) {
        for (d = 0; d < DOCS; d++) {
            size_t i = (d + (size_t)t * 7) % DOCS; /* threads in different orders */
            if (minlsh_shingler_hash(shared_sh, docs[i], lens[i], set, got_fp[t][i]) != 0 ||
                minlsh_family_sign(shared_fam, minlsh_shingleset_view_hashes(set),
                                   minlsh_shingleset_count(set), got_sign[t][i], K, NULL) != 0 ||
                minlsh_family_sign_text(shared_fam, shared_sh, docs[i], lens[i], got_text[t][i],
                                        K, NULL) != 0)
                thread_errors[t]++;
            for (off = 0; off < lens[i]; off += 97)
                if (minlsh_shinglestream_feed(st, docs[i] + off,
                                               lens[i] - off < 97 ? lens[i] - off : 97) != 0)
                    thread_errors[t]++;
            if (minlsh_shinglestream_finish(st, set, NULL) != 0 ||
                minlsh_family_sign(shared_fam, minlsh_shingleset_view_hashes(set),
                                   minlsh_shingleset_count(set), got_stream[t][i], K, NULL) != 0)
                thread_errors[t]++;
        }
    }
    minlsh_shinglestream_free(st);
    minlsh_shingleset_free(set);
    return NULL;
}

static void test_shared_shingler_and_family(void) {
    pthread_t th[THREADS];
    uint32_t want[K];
    uint8_t fp[16];
    minlsh_shingleset *set = NULL;
    int t;
    size_t d;
    pthread_barrier_init(&start, NULL, THREADS);
    for (t = 0; t < THREADS; t++)
        EXPECT(pthread_create(&th[t], NULL, signer, (void *)(intptr_t)t) == 0);
    for (t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&start);
    /* The single-threaded answers, computed afterwards. */
    minlsh_shingleset_new(&set, NULL);
    for (d = 0; d < DOCS; d++) {
        EXPECT_OK(minlsh_shingler_hash(shared_sh, docs[d], lens[d], set, fp));
        EXPECT_OK(minlsh_family_sign(shared_fam, minlsh_shingleset_view_hashes(set),
                                     minlsh_shingleset_count(set), want, K, NULL));
        for (t = 0; t < THREADS; t++) {
            EXPECT_MSG(memcmp(got_sign[t][d], want, sizeof want) == 0 &&
                           memcmp(got_text[t][d], want, sizeof want) == 0 &&
                           memcmp(got_stream[t][d], want, sizeof want) == 0 &&
                           memcmp(got_fp[t][d], fp, 16) == 0,
                       "thread %d, document %zu: a different signature", t, d);
        }
    }
    for (t = 0; t < THREADS; t++) EXPECT_EQ_INT(thread_errors[t], 0);
    minlsh_shingleset_free(set);
}

/* ---- readers of one index and two matrices ------------------------------- */

typedef struct answers {
    uint64_t ids[DOCS][DOCS];
    double sims[DOCS][DOCS];
    size_t n[DOCS];
    size_t pairs, clusters, bytes;
    uint64_t bytes_sum;
    double estimates;
} answers;

static answers ref, got[THREADS];
static uint32_t sigs[DOCS][K];

static void read_everything(answers *a) {
    size_t d, i, n = 0;
    uint64_t ids[DOCS];
    uint32_t sig[K];
    minlsh_pairs *p = NULL;
    minlsh_clusters *c = NULL;
    uint32_t searched = 0;
    uint8_t *buf;
    memset(a, 0, sizeof *a);
    for (d = 0; d < DOCS; d++) {
        size_t m = 0;
        if (minlsh_index_query(shared_ix, sigs[d], K, a->ids[d], a->sims[d], DOCS, &a->n[d]) != 0 ||
            minlsh_index_query_limited(shared_ix, sigs[d], K, 4, ids, NULL, DOCS, &m,
                                       &searched) != 0 ||
            minlsh_index_copy_signature(shared_ix, 1000 + d, sig, K, NULL) != 0 ||
            memcmp(sig, sigs[d], sizeof sig) != 0 || minlsh_index_contains(shared_ix, 1000 + d) != 1)
            a->n[d] = (size_t)-1;
    }
    if (minlsh_index_copy_ids(shared_ix, ids, DOCS, &n) != 0 || n != DOCS) a->pairs = (size_t)-1;
    if (minlsh_pairs_from_index(&p, shared_ix, 0.3, 0, NULL) == 0) a->pairs += minlsh_pairs_count(p);
    if (minlsh_clusters_from_index(&c, shared_ix, 0.3, NULL) == 0) a->clusters = minlsh_clusters_count(c);
    minlsh_pairs_free(p);
    minlsh_clusters_free(c);
    if (minlsh_index_save_buffer(shared_ix, NULL, 0, &a->bytes) == MINLSH_E_BUFSIZE &&
        (buf = (uint8_t *)malloc(a->bytes)) != NULL) {
        if (minlsh_index_save_buffer(shared_ix, buf, a->bytes, NULL) == 0)
            for (i = 0; i < a->bytes; i++) a->bytes_sum = a->bytes_sum * 31 + buf[i];
        free(buf);
    }
    for (d = 0; d < DOCS; d++) {
        double e1 = 0, e2 = 0;
        minlsh_sigmatrix_estimate(&e1, shared_mx, d, DOCS - 1 - d);
        minlsh_sigmatrix_estimate(&e2, mapped_mx, d, DOCS - 1 - d);
        a->estimates += e1 + 2 * e2;
        if (memcmp(minlsh_sigmatrix_view_column(mapped_mx, d), sigs[d], sizeof sigs[d]) != 0)
            a->estimates = -1;
    }
}

static void *reader(void *arg) {
    int t = (int)(intptr_t)arg, r;
    pthread_barrier_wait(&start);
    for (r = 0; r < ROUNDS; r++) read_everything(&got[t]);
    return NULL;
}

static void test_concurrent_readers(void) {
    pthread_t th[THREADS];
    const char *dir = getenv("MINLSH_TEST_TMP");
    char path[4200];
    uint64_t s = 9;
    size_t d, v;
    int t;
    EXPECT_OK(minlsh_index_new(&shared_ix, shared_fam, 0, 16, 4, NULL));
    EXPECT_OK(minlsh_sigmatrix_new(&shared_mx, shared_fam, 0, NULL));
    for (d = 0; d < DOCS; d++) {
        for (v = 0; v < K; v++) sigs[d][v] = (uint32_t)(tl_rand(&s) % 3); /* shared bands */
        EXPECT_OK(minlsh_index_insert(shared_ix, 1000 + d, sigs[d], K));
        EXPECT_OK(minlsh_sigmatrix_append(shared_mx, sigs[d], K, NULL));
    }
    snprintf(path, sizeof path, "%s/tsan.mx", dir != NULL ? dir : "/tmp");
    EXPECT_OK(minlsh_sigmatrix_save(shared_mx, path));
    EXPECT_OK(minlsh_sigmatrix_map(&mapped_mx, path, LOAD_OPTS(shared_fam, 0, NULL)));
    read_everything(&ref);
    pthread_barrier_init(&start, NULL, THREADS);
    for (t = 0; t < THREADS; t++)
        EXPECT(pthread_create(&th[t], NULL, reader, (void *)(intptr_t)t) == 0);
    for (t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&start);
    for (t = 0; t < THREADS; t++)
        EXPECT_MSG(memcmp(&got[t], &ref, sizeof ref) == 0, "reader %d saw different answers", t);
    EXPECT(ref.pairs > 0 && ref.pairs != (size_t)-1 && ref.estimates > 0);
    minlsh_sigmatrix_free(mapped_mx);
    minlsh_sigmatrix_free(shared_mx);
    minlsh_index_free(shared_ix);
    remove(path);
}

static void test_sign_batch_threads(void) {
    static uint32_t one[DOCS * K], four[DOCS * K];
    int32_t st1[DOCS], st4[DOCS];
    const void *texts[DOCS];
    size_t d;
    for (d = 0; d < DOCS; d++) texts[d] = docs[d];
    EXPECT_OK(minlsh_family_sign_batch(shared_fam, shared_sh, texts, lens, DOCS, 1, one,
                                       DOCS * K, NULL, st1));
    EXPECT_OK(minlsh_family_sign_batch(shared_fam, shared_sh, texts, lens, DOCS, 4, four,
                                       DOCS * K, NULL, st4));
    EXPECT(memcmp(one, four, sizeof one) == 0);
    EXPECT(memcmp(st1, st4, sizeof st1) == 0);
    EXPECT(memcmp(one, got_sign[0][0], 4 * K) == 0);
}

#define STORE_DOCS 300
static minlsh_store *shared_store;
static uint64_t store_ids[STORE_DOCS];
static int store_wrong[THREADS];

static void *name_reader(void *arg) {
    int t = (int)(intptr_t)arg, i;
    char name[32];
    uint64_t id;
    pthread_barrier_wait(&start);
    for (i = 0; i < STORE_DOCS; i++) {
        int j = (i + t * 37) % STORE_DOCS; /* each thread from its own place */
        snprintf(name, sizeof name, "page %d", j);
        if (minlsh_store_find_name(&id, shared_store, name, strlen(name)) != 0 ||
            id != store_ids[j])
            store_wrong[t]++;
    }
    if (minlsh_store_find_name(&id, shared_store, "page x", 6) != MINLSH_E_NOTFOUND)
        store_wrong[t]++;
    return NULL;
}

static void test_store_name_lookups(void) {
    pthread_t th[THREADS];
    const char *dir = getenv("MINLSH_TEST_TMP");
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *w = NULL;
    char path[4200], f[4300], name[32];
    static const char *const sfx[] = {"", ".journal", ".lock", ".compact.lock"};
    int i, t;
    snprintf(path, sizeof path, "%s/tsan.st", dir != NULL ? dir : "/tmp");
    o.flags = MINLSH_STORE_CREATE | MINLSH_STORE_TRUNCATE;
    EXPECT_OK(minlsh_store_open(&w, path, &o));
    if (w == NULL) return;
    EXPECT_OK(minlsh_store_begin(w));
    for (i = 0; i < STORE_DOCS; i++) {
        minlsh_store_result r;
        snprintf(name, sizeof name, "page %d", i);
        EXPECT_OK(minlsh_store_add(&r, w, docs[i % DOCS], lens[i % DOCS], name, strlen(name),
                                   MINLSH_STORE_ADD_ALWAYS));
        store_ids[i] = r.id;
        if (i == STORE_DOCS / 2) { /* half in the file, half in the journal */
            EXPECT_OK(minlsh_store_commit(w));
            EXPECT_OK(minlsh_store_compact(w));
            EXPECT_OK(minlsh_store_begin(w));
        }
    }
    EXPECT_OK(minlsh_store_commit(w));
    minlsh_store_free(w);
    o.flags = MINLSH_STORE_READONLY;
    EXPECT_OK(minlsh_store_open(&shared_store, path, &o));
    if (shared_store != NULL) {
        pthread_barrier_init(&start, NULL, THREADS);
        for (t = 0; t < THREADS; t++)
            EXPECT(pthread_create(&th[t], NULL, name_reader, (void *)(intptr_t)t) == 0);
        for (t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
        pthread_barrier_destroy(&start);
        for (t = 0; t < THREADS; t++)
            EXPECT_MSG(store_wrong[t] == 0, "%s: thread %d: %d wrong lookups", path, t,
                       store_wrong[t]);
        minlsh_store_free(shared_store);
    }
    for (i = 0; i < (int)(sizeof sfx / sizeof *sfx); i++) {
        snprintf(f, sizeof f, "%s%s", path, sfx[i]);
        remove(f);
    }
}

int main(void) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    size_t d;
    o.k = 3;
    o.flags = MINLSH_NORM_HTML | MINLSH_NORM_CASEFOLD;
    if (minlsh_shingler_new(&shared_sh, &o, NULL) != 0 ||
        minlsh_family_new(&shared_fam, K, 7, NULL) != 0) {
        printf("tsan: setup failed\ntsan: 0 passed, 1 failed\n");
        return 1;
    }
    make_docs();
    RUN(test_shared_shingler_and_family);
    RUN(test_concurrent_readers);
    RUN(test_sign_batch_threads);
    RUN(test_store_name_lookups);
    for (d = 0; d < DOCS; d++) free(docs[d]);
    minlsh_family_free(shared_fam);
    minlsh_shingler_free(shared_sh);
    return TL_SUMMARY("tsan");
}
