/*
 * minlsh_family_sign_batch: the same signatures as minlsh_family_sign_text
 * document by document, for every thread count (1, 2, 3, 8, 0 = online
 * CPUs) and every batch size (0, 1, 2, 1000); per-document failures
 * (documents over max_document_bytes) get the empty signature and their
 * code, and the lowest-numbered failure is returned; argument errors; an
 * allocator that fails.
 */
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#define NDOC 1000
#define K 64

/* Documents of varied length from a few hundred words. */
static char *make_docs(const char **texts, size_t *lens, size_t n, uint64_t seed) {
    static const char *words[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta",
                                  "eta", "theta", "iota", "kappa", "lambda", "mu",
                                  "nu", "xi", "omicron", "pi", "rho", "sigma", "tau",
                                  "upsilon", "phi", "chi", "psi", "omega"};
    size_t total = 0, i, w, cap = n * 2200 + 1;
    char *buf = (char *)malloc(cap);
    uint64_t st = seed;
    for (i = 0; i < n; i++) {
        size_t nw = (size_t)(tl_rand(&st) % 300); /* some empty, some short */
        texts[i] = buf + total;
        lens[i] = 0;
        for (w = 0; w < nw; w++) {
            const char *x = words[tl_rand(&st) % (sizeof words / sizeof words[0])];
            size_t l = strlen(x);
            memcpy(buf + total + lens[i], x, l);
            lens[i] += l;
            buf[total + lens[i]++] = ' ';
        }
        total += lens[i];
    }
    return buf;
}

static void test_equals_sign_text(void) {
    static const uint32_t threads[] = {1, 2, 3, 8, 0};
    static const size_t sizes[] = {0, 1, 2, NDOC};
    const char *texts[NDOC];
    size_t lens[NDOC], ti, si, i, n_out = 0;
    char *buf = make_docs(texts, lens, NDOC, 11);
    uint32_t *want = (uint32_t *)malloc((size_t)NDOC * K * sizeof *want);
    uint32_t *got = (uint32_t *)malloc((size_t)NDOC * K * sizeof *got);
    int32_t status[NDOC];
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    EXPECT_OK(minlsh_family_new(&fam, K, 42, NULL));
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, NULL));
    for (i = 0; i < NDOC; i++)
        EXPECT_OK(minlsh_family_sign_text(fam, sh, texts[i], lens[i], want + i * K, K, NULL));
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
            size_t n = sizes[si];
            memset(got, 0xAB, (size_t)NDOC * K * sizeof *got);
            for (i = 0; i < NDOC; i++) status[i] = 12345;
            EXPECT_OK(minlsh_family_sign_batch(fam, sh, (const void *const *)texts, lens, n, threads[ti],
                                               got, (size_t)NDOC * K, &n_out, status));
            EXPECT_EQ_INT(n_out, n * K);
            EXPECT_MSG(n == 0 || memcmp(got, want, n * K * sizeof *got) == 0,
                       "n=%zu threads=%u: signatures differ", n, (unsigned)threads[ti]);
            for (i = 0; i < n; i++) EXPECT_EQ_INT(status[i], 0);
            /* Nothing past n is touched. */
            for (i = n; i < NDOC; i++) EXPECT_EQ_INT(status[i], 12345);
            if (n < NDOC) EXPECT_EQ_U64(got[n * K], 0xABABABABu);
        }
    /* status may be NULL. */
    EXPECT_OK(minlsh_family_sign_batch(fam, sh, (const void *const *)texts, lens, NDOC, 2,
                                       got, (size_t)NDOC * K, NULL, NULL));
    EXPECT(memcmp(got, want, (size_t)NDOC * K * sizeof *got) == 0);
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
    free(want);
    free(got);
    free(buf);
}

static void test_per_document_errors(void) {
    static const uint32_t threads[] = {1, 2, 3, 8, 0};
    const char *texts[NDOC];
    size_t lens[NDOC], ti, i, first_big = NDOC;
    char *buf = make_docs(texts, lens, NDOC, 12);
    uint32_t *want = (uint32_t *)malloc((size_t)NDOC * K * sizeof *want);
    uint32_t *got = (uint32_t *)malloc((size_t)NDOC * K * sizeof *got);
    int32_t status[NDOC];
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    o.max_document_bytes = 1000; /* about a third of the documents are longer */
    EXPECT_OK(minlsh_family_new(&fam, K, 43, NULL));
    EXPECT_OK(minlsh_shingler_new(&sh, &o, NULL));
    for (i = 0; i < NDOC; i++) {
        int rc = minlsh_family_sign_text(fam, sh, texts[i], lens[i], want + i * K, K, NULL);
        if (rc == MINLSH_E_TOOBIG) {
            uint32_t v;
            for (v = 0; v < K; v++) want[i * K + v] = MINLSH_EMPTY_VALUE;
            if (first_big == NDOC) first_big = i;
        } else {
            EXPECT_OK(rc);
        }
    }
    EXPECT(first_big > 0 && first_big < NDOC);
    for (ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
        memset(got, 0, (size_t)NDOC * K * sizeof *got);
        EXPECT_ERR(minlsh_family_sign_batch(fam, sh, (const void *const *)texts, lens, NDOC, threads[ti],
                                            got, (size_t)NDOC * K, NULL, status),
                   MINLSH_E_TOOBIG);
        EXPECT(memcmp(got, want, (size_t)NDOC * K * sizeof *got) == 0);
        for (i = 0; i < NDOC; i++)
            EXPECT_EQ_INT(status[i], lens[i] > 1000 ? MINLSH_E_TOOBIG : 0);
        /* Without status the code still comes back. */
        EXPECT_ERR(minlsh_family_sign_batch(fam, sh, (const void *const *)texts, lens, NDOC, threads[ti],
                                            got, (size_t)NDOC * K, NULL, NULL),
                   MINLSH_E_TOOBIG);
    }
    /* A NULL text with a nonzero length fails that document only. */
    {
        const void *t2[3];
        size_t l2[3] = {5, 3, 0};
        int32_t st2[3];
        uint32_t s2[3 * K];
        t2[0] = "a b c";
        t2[1] = NULL;
        t2[2] = NULL; /* length 0: the empty document */
        EXPECT_ERR(minlsh_family_sign_batch(fam, sh, t2, l2, 3, 2, s2, 3 * K, NULL, st2),
                   MINLSH_E_NULL);
        EXPECT(st2[0] == 0 && st2[1] == MINLSH_E_NULL && st2[2] == 0);
        EXPECT_EQ_INT(minlsh_signature_is_empty(s2 + K, K), 1);
        EXPECT_EQ_INT(minlsh_signature_is_empty(s2 + 2 * K, K), 1);
        EXPECT_EQ_INT(minlsh_signature_is_empty(s2, K), 0);
    }
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
    free(want);
    free(got);
    free(buf);
}

static void test_arguments(void) {
    const void *texts[2] = {"one two three four five six", "x"};
    size_t lens[2] = {27, 1}, n = 0;
    uint32_t sigs[2 * K];
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    EXPECT_OK(minlsh_family_new(&fam, K, 1, NULL));
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, NULL));
    EXPECT_ERR(minlsh_family_sign_batch(NULL, sh, texts, lens, 2, 1, sigs, 2 * K, &n, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_batch(fam, NULL, texts, lens, 2, 1, sigs, 2 * K, &n, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_batch(fam, sh, NULL, lens, 2, 1, sigs, 2 * K, &n, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_batch(fam, sh, texts, NULL, 2, 1, sigs, 2 * K, &n, NULL),
               MINLSH_E_NULL);
    /* Size query, short buffer, NULL buffer with room claimed. */
    n = 0;
    EXPECT_ERR(minlsh_family_sign_batch(fam, sh, texts, lens, 2, 1, NULL, 0, &n, NULL),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, 2 * K);
    EXPECT_ERR(minlsh_family_sign_batch(fam, sh, texts, lens, 2, 2, sigs, 2 * K - 1, &n, NULL),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n, 2 * K);
    EXPECT_ERR(minlsh_family_sign_batch(fam, sh, texts, lens, 2, 1, NULL, 2 * K, &n, NULL),
               MINLSH_E_NULL);
    /* n = 0 needs nothing at all. */
    EXPECT_OK(minlsh_family_sign_batch(fam, sh, NULL, NULL, 0, 4, NULL, 0, &n, NULL));
    EXPECT_EQ_INT(n, 0);
    /* n * k that cannot be represented. */
    EXPECT_ERR(minlsh_family_sign_batch(fam, sh, texts, lens, SIZE_MAX / 2, 1, sigs, 2 * K,
                                        &n, NULL),
               MINLSH_E_PARAM);
    /* Absurd thread counts are capped, not refused. */
    EXPECT_OK(minlsh_family_sign_batch(fam, sh, texts, lens, 2, UINT32_MAX, sigs, 2 * K, NULL,
                                       NULL));
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
}

static void test_failing_allocator(void) {
    static const uint32_t threads[] = {1, 2, 8};
    testalloc ta; /* atomic: the shingler's engine allocates from every worker */
    minlsh_allocator fa = ta_allocator(&ta);
    const char *texts[64];
    size_t lens[64], ti, i;
    char *buf = make_docs(texts, lens, 64, 13);
    uint32_t want[64 * K], got[64 * K];
    int32_t status[64];
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    EXPECT_OK(minlsh_family_new(&fam, K, 44, NULL));
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, &fa));
    EXPECT_OK(minlsh_family_sign_batch(fam, sh, (const void *const *)texts, lens, 64, 1,
                                       want, 64 * K, NULL, NULL));
    for (ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
        int rc;
        /* Every allocation fails: every document with text fails with
         * NOMEM and gets the empty signature; the lowest is returned. */
        ta_fail_from(&ta, 1);
        rc = minlsh_family_sign_batch(fam, sh, (const void *const *)texts, lens, 64, threads[ti], got,
                                      64 * K, NULL, status);
        ta_fail_from(&ta, 0);
        EXPECT_ERR(rc, MINLSH_E_NOMEM);
        for (i = 0; i < 64; i++) {
            if (status[i] == 0) {
                EXPECT(memcmp(got + i * K, want + i * K, K * sizeof *got) == 0);
            } else {
                EXPECT_EQ_INT(status[i], MINLSH_E_NOMEM);
                EXPECT_EQ_INT(minlsh_signature_is_empty(got + i * K, K), 1);
            }
        }
        /* The first failure is the lowest-numbered one, whatever thread saw it. */
        for (i = 0; i < 64 && status[i] == 0; i++) {
        }
        EXPECT(i < 64);
        /* Failures from some point on: whatever succeeded is right. */
        ta_fail_from(&ta, 20);
        rc = minlsh_family_sign_batch(fam, sh, (const void *const *)texts, lens, 64, threads[ti], got,
                                      64 * K, NULL, status);
        ta_fail_from(&ta, 0);
        for (i = 0; i < 64; i++) {
            if (status[i] == 0)
                EXPECT(memcmp(got + i * K, want + i * K, K * sizeof *got) == 0);
            else
                EXPECT_EQ_INT(status[i], MINLSH_E_NOMEM);
        }
        {
            size_t first = 64;
            for (i = 0; i < 64; i++)
                if (status[i] != 0 && first == 64) first = i;
            EXPECT_EQ_INT(rc, first == 64 ? 0 : status[first]);
        }
    }
    minlsh_shingler_free(sh);
    EXPECT_EQ_INT(ta_blocks(&ta), 0);
    minlsh_family_free(fam);
    free(buf);
}

int main(void) {
    RUN(test_equals_sign_text);
    RUN(test_per_document_errors);
    RUN(test_arguments);
    RUN(test_failing_allocator);
    return TL_SUMMARY("test_batch");
}
