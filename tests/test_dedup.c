/*
 * The dedup engine against brute force on a planted corpus: every pair it
 * verifies is a true near-duplicate (exact Jaccard recomputed here), it
 * finds the planted ones, its decisions follow the keep and grouping
 * policies, and nothing depends on the thread count or on how documents
 * arrive (texts in batches, or sets one by one).
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define NDOC 400
#define WORDS 60
#define T 0.7

static char *docs[NDOC];
static size_t lens[NDOC];

/* Random texts; every fifth a light edit of an earlier one (J well above
 * T), every 25th an exact copy, a few empty. */
static void make_corpus(void) {
    static const char *vocab[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot",
                                  "golf", "hotel", "india", "juliet", "kilo", "lima", "mike",
                                  "november", "oscar", "papa", "quebec", "romeo", "sierra",
                                  "tango", "uniform", "victor", "whiskey", "xray", "yankee",
                                  "zulu", "one", "two", "three", "four", "five", "six"};
    uint64_t st = 42;
    size_t i, w;
    for (i = 0; i < NDOC; i++) {
        char *p = (char *)malloc(WORDS * 12 + 1);
        size_t n = 0;
        docs[i] = p;
        if (i % 97 == 13) { /* empty */
            p[0] = 0;
            lens[i] = 0;
            continue;
        }
        if (i % 25 == 24) { /* an exact copy */
            size_t src = (size_t)(tl_rand(&st) % i);
            memcpy(p, docs[src], lens[src] + 1);
            lens[i] = lens[src];
            continue;
        }
        if (i % 5 == 4) { /* a near copy: one word in 30 changed */
            size_t src = i - 1 - (size_t)(tl_rand(&st) % 3);
            const char *s = docs[src];
            size_t word = 0;
            for (w = 0; s[w]; w++) {
                if (s[w] == ' ') word++;
                if (word % 30 == 7 && s[w] != ' ') p[n++] = 'Q';
                else p[n++] = s[w];
            }
            p[n] = 0;
            lens[i] = n;
            continue;
        }
        for (w = 0; w < WORDS; w++) {
            const char *v = vocab[tl_rand(&st) % (sizeof vocab / sizeof vocab[0])];
            size_t l = strlen(v);
            if (w) p[n++] = ' ';
            memcpy(p + n, v, l);
            n += l;
        }
        p[n] = 0;
        lens[i] = n;
    }
}

static minlsh_shingler *sh;
static minlsh_family *fam;
static minlsh_shingleset *sets[NDOC];
static double jac[NDOC][NDOC];

static void make_truth(void) {
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    size_t i, j;
    so.k = 3;
    EXPECT_OK(minlsh_shingler_new(&sh, &so, NULL));
    EXPECT_OK(minlsh_family_new(&fam, 128, 7, NULL));
    for (i = 0; i < NDOC; i++) {
        EXPECT_OK(minlsh_shingleset_new(&sets[i], NULL));
        EXPECT_OK(minlsh_shingler_hash(sh, docs[i], lens[i], sets[i], NULL));
    }
    /* Exact copies are similar 1; empty documents are similar to nothing. */
    for (i = 0; i < NDOC; i++)
        for (j = 0; j < NDOC; j++) {
            EXPECT_OK(minlsh_shingleset_jaccard(&jac[i][j], sets[i], sets[j]));
            /* an empty document is nobody's copy */
            if (lens[i] > 0 && lens[i] == lens[j] && memcmp(docs[i], docs[j], lens[i]) == 0)
                jac[i][j] = 1.0;
        }
}

/* The documents through minlsh_dedup_add_docs in uneven batches: with
 * signed_docs 0 the engine signs them; with 1 they come signed, each with a
 * distinct JSON id; with 2 likewise, their signatures cut to the values the
 * engine reads. */
static void add_docs(minlsh_dedup *d, int signed_docs) {
    static minlsh_dedup_doc v[NDOC];
    static uint8_t fps[NDOC][16];
    static uint32_t sigs[NDOC][128];
    static char ids[NDOC][16];
    int32_t status[NDOC];
    size_t i, n;
    for (i = 0; i < NDOC; i++) {
        minlsh_dedup_doc *x = &v[i];
        memset(x, 0, sizeof *x);
        EXPECT_OK(minlsh_shingler_hash(sh, docs[i], lens[i], NULL, fps[i]));
        x->hashes = minlsh_shingleset_view_hashes(sets[i]);
        x->n = minlsh_shingleset_count(sets[i]);
        x->fp = fps[i];
        x->length = lens[i];
        if (signed_docs) {
            uint32_t m = signed_docs == 2 ? minlsh_dedup_signature_values(d) : 128;
            EXPECT_OK(minlsh_family_sign_prefix(fam, x->hashes, x->n, sigs[i], m));
            x->sig = sigs[i];
            x->k_sig = m;
            /* 7, "7" and 7.0 are other ids than "x7": all distinct */
            snprintf(ids[i], sizeof ids[i], i % 2 ? "%zu.0" : "\"x%zu\"", i);
            x->id = ids[i];
            x->id_n = strlen(ids[i]);
            x->id_kind = MINLSH_DEDUP_ID_JSON;
        }
    }
    for (i = 0; i < NDOC; i += n) {
        size_t j;
        n = 1 + (i * 7) % 53;
        if (i + n > NDOC) n = NDOC - i;
        EXPECT_OK(minlsh_dedup_add_docs(d, v + i, n, status));
        for (j = 0; j < n; j++) EXPECT_EQ_INT(status[j], 0);
    }
}

static int visit_nothing(void *ctx, uint32_t worker, size_t begin, size_t end) {
    (void)ctx;
    (void)worker;
    (void)begin;
    (void)end;
    return 0;
}

static minlsh_dedup *run_engine(const minlsh_dedup_options *o, int by_sets) {
    minlsh_dedup *d = NULL;
    size_t i;
    if (by_sets == 2) {
        /* A version-1 caller: what follows tmpdir is not read. */
        minlsh_dedup_options o1 = *o;
        o1.version = 1;
        o1.pool = (minlsh_pool *)(uintptr_t)1;
        EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &o1, NULL));
    } else {
        EXPECT_OK(minlsh_dedup_new(&d, sh, fam, o, NULL));
    }
    if (d == NULL) return NULL;
    if (by_sets >= 2) {
        add_docs(d, by_sets - 2);
    } else if (by_sets) {
        for (i = 0; i < NDOC; i++) {
            uint8_t fp[16];
            EXPECT_OK(minlsh_shingler_hash(sh, docs[i], lens[i], NULL, fp));
            EXPECT_OK(minlsh_dedup_add_set(d, minlsh_shingleset_view_hashes(sets[i]),
                                           minlsh_shingleset_count(sets[i]), NULL, 0, fp,
                                           lens[i]));
        }
    } else {
        /* In uneven batches. */
        for (i = 0; i < NDOC;) {
            size_t n = 1 + i % 37;
            if (i + n > NDOC) n = NDOC - i;
            EXPECT_OK(minlsh_dedup_add_texts(d, (const void *const *)(docs + i), lens + i, n,
                                             NULL));
            i += n;
        }
    }
    EXPECT_EQ_U64(minlsh_dedup_count(d), NDOC);
    EXPECT_OK(minlsh_dedup_run(d));
    return d;
}

static void decisions_of(const minlsh_dedup *d, minlsh_dedup_decision *out) {
    size_t n = 0;
    EXPECT_OK(minlsh_dedup_copy_decisions(d, 0, out, NDOC, &n));
    EXPECT_EQ_U64(n, NDOC);
}

static int same_decisions(const minlsh_dedup_decision *a, const minlsh_dedup_decision *b) {
    size_t i;
    for (i = 0; i < NDOC; i++)
        if (a[i].cluster != b[i].cluster || a[i].representative != b[i].representative ||
            a[i].kept != b[i].kept || a[i].exact != b[i].exact ||
            a[i].similarity != b[i].similarity)
            return 0;
    return 1;
}

/* Verified pairs are true (precision 1) and the planted ones are found. */
static void test_pairs_against_brute_force(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    minlsh_dedup *d;
    minlsh_pairs *p = NULL;
    size_t i, j, found = 0, truth = 0;
    static char seen[NDOC][NDOC];
    o.threshold = T;
    o.threads = 2;
    o.all_pairs = 1;
    d = run_engine(&o, 0);
    EXPECT_OK(minlsh_pairs_from_dedup(&p, d, 0, NULL));
    memset(seen, 0, sizeof seen);
    for (i = 0; i < minlsh_pairs_count(p); i++) {
        uint64_t a, b;
        double s;
        EXPECT_OK(minlsh_pairs_copy_pair(&a, &b, &s, p, i));
        EXPECT(a < b && b < NDOC);
        if (a == b || b >= NDOC) continue;
        seen[a][b] = 1;
        EXPECT_NEAR(s, jac[a][b], 1e-12);
        EXPECT_MSG(s >= T, "pair %llu %llu at %g", (unsigned long long)a,
                   (unsigned long long)b, s);
    }
    for (i = 0; i < NDOC; i++)
        for (j = i + 1; j < NDOC; j++)
            if (jac[i][j] >= T) {
                truth++;
                found += seen[i][j];
            }
    /* The plan puts P(candidate | T) at 0.999; pairs above T only gain. */
    EXPECT(truth >= 80);
    EXPECT_MSG(found * 1000 >= truth * 990, "found %zu of %zu", found, truth);
    printf("  recall %zu/%zu\n", found, truth);
    minlsh_pairs_free(p);
    minlsh_dedup_free(d);
}

/* Components: one kept document per component of the verified pairs, the
 * first (or the longest); everything else attributed to it. */
static void check_components(const minlsh_dedup *d, uint32_t keep) {
    static minlsh_dedup_decision x[NDOC];
    minlsh_clusters *cl = NULL;
    uint64_t ids[NDOC], clustered = 0, alone = 0;
    size_t c, i, got;
    decisions_of(d, x);
    EXPECT_OK(minlsh_clusters_from_dedup(&cl, d, NULL));
    for (c = 0; c < minlsh_clusters_count(cl); c++) {
        uint64_t best = ids[0];
        EXPECT_OK(minlsh_clusters_copy_members(cl, c, ids, NDOC, &got));
        best = ids[0];
        for (i = 1; i < got; i++)
            if (keep == MINLSH_KEEP_LONGEST && lens[ids[i]] > lens[best]) best = ids[i];
        for (i = 0; i < got; i++) {
            EXPECT_EQ_U64(x[ids[i]].representative, best);
            /* numbered from 1 in the order of the clusters' first documents */
            EXPECT_EQ_U64(x[ids[i]].cluster, c + 1);
            EXPECT_EQ_INT(x[ids[i]].kept, ids[i] == best);
            EXPECT_NEAR(x[ids[i]].similarity, ids[i] == best ? 1.0 : jac[ids[i]][best], 1e-12);
        }
        clustered += got;
    }
    for (i = 0; i < NDOC; i++) alone += x[i].cluster == 0;
    EXPECT(clustered > 0);
    EXPECT_EQ_U64(alone, NDOC - clustered);
    minlsh_clusters_free(cl);
}

/* The shared rules: planning, the memory default, canonical ids. */
static void expect_id(const char *in, const char *want, int line) {
    char out[128];
    size_t n = 0;
    int rc = minlsh_dedup_canonical_id(in, strlen(in), out, sizeof out, &n);
    if (want == NULL) {
        EXPECT_MSG(rc == MINLSH_E_PARAM, "line %d: id %s: expected MINLSH_E_PARAM, got %d",
                   line, in, rc);
        return;
    }
    EXPECT_MSG(rc == 0 && n == strlen(want) && memcmp(out, want, n) == 0,
               "line %d: id %s: expected %s, got %.*s (%d)", line, in, want,
               rc == 0 ? (int)n : 0, out, rc);
}

static void test_policy(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    uint32_t b = 0, r = 0, b2 = 0, r2 = 0;
    double p = 0;
    char small[2];
    size_t n = 0;
    /* recall 0.999 at the threshold, and 0.99 for any higher threshold */
    EXPECT_OK(minlsh_dedup_plan(&b, &r, &o, 128));
    EXPECT_OK(minlsh_plan_probability(&p, b, r, 0.8));
    EXPECT(p >= 0.999 && b * r <= 128);
    o.threshold = 0.99;
    EXPECT_OK(minlsh_dedup_plan(&b, &r, &o, 128));
    o.threshold = 1.0;
    EXPECT_OK(minlsh_dedup_plan(&b2, &r2, &o, 128));
    EXPECT(b2 == b && r2 == r);
    o.threshold = 0.999;
    EXPECT_OK(minlsh_dedup_plan(&b2, &r2, &o, 128));
    EXPECT(b2 == b && r2 == r);
    /* out of reach: refused, by the plan and by the engine alike */
    o.threshold = 0.5;
    EXPECT_ERR(minlsh_dedup_plan(&b, &r, &o, 8), MINLSH_E_PARAM);
    o.bands = 3;
    o.rows = 2;
    EXPECT_OK(minlsh_dedup_plan(&b, &r, &o, 8));
    EXPECT(b == 3 && r == 2);
    o.rows = 3;
    EXPECT_ERR(minlsh_dedup_plan(&b, &r, &o, 8), MINLSH_E_PARAM);
    o.rows = 0;
    EXPECT_ERR(minlsh_dedup_plan(&b, &r, &o, 8), MINLSH_E_PARAM);
    o.bands = 0;
    o.threshold = 0.0;
    EXPECT_ERR(minlsh_dedup_plan(&b, &r, &o, 128), MINLSH_E_PARAM);
    o.threshold = 1.5;
    EXPECT_ERR(minlsh_dedup_plan(&b, &r, &o, 128), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_dedup_plan(NULL, &r, &o, 128), MINLSH_E_NULL);
    {
        minlsh_shingler *words = NULL;
        minlsh_family *f = NULL;
        minlsh_dedup *d = NULL;
        minlsh_dedup_options_init(&o, MINLSH_DEDUP_OPTIONS_VERSION);
        o.threshold = 0.5;
        EXPECT_OK(minlsh_shingler_new(&words, NULL, NULL));
        EXPECT_OK(minlsh_family_new(&f, 8, 1, NULL));
        EXPECT_ERR(minlsh_dedup_new(&d, words, f, &o, NULL), MINLSH_E_PARAM);
        EXPECT(d == NULL);
        minlsh_family_free(f);
        minlsh_shingler_free(words);
    }
    EXPECT(minlsh_dedup_default_memory() >= (uint64_t)1 << 20);
    /* ids: strings by their decoded text, numbers by value, nothing else */
    expect_id("\"a\"", "\"a\"", __LINE__);
    expect_id(" \"\\u0061\\/\\n\\u00e9\" ", "\"a/\\n\xc3\xa9\"", __LINE__);
    expect_id("\"\\ud83d\\ude00\\ud800\"", "\"\xf0\x9f\x98\x80\\ud800\"", __LINE__);
    expect_id("\"\\u001f\\\"\"", "\"\\u001f\\\"\"", __LINE__);
    expect_id("1", "1", __LINE__);
    expect_id("1.0", "1", __LINE__);
    expect_id("1e0", "1", __LINE__);
    expect_id("10E-1", "1", __LINE__);
    expect_id("-0.0", "0", __LINE__);
    expect_id("0.000", "0", __LINE__);
    expect_id("1.50", "1.5", __LINE__);
    expect_id("0.0001", "0.0001", __LINE__);
    expect_id("1e-7", "1e-7", __LINE__);
    expect_id("1e20", "100000000000000000000", __LINE__);
    expect_id("1e21", "1e+21", __LINE__);
    expect_id("1e22", "1e+22", __LINE__);
    expect_id("-12.5e3", "-12500", __LINE__);
    expect_id("123456789012345678901234", "1.23456789012345678901234e+23", __LINE__);
    expect_id("9007199254740993", "9007199254740993", __LINE__);
    expect_id("true", NULL, __LINE__);
    expect_id("null", NULL, __LINE__);
    expect_id("[1]", NULL, __LINE__);
    expect_id("{}", NULL, __LINE__);
    expect_id("01", NULL, __LINE__);
    expect_id("1.", NULL, __LINE__);
    expect_id("\"a", NULL, __LINE__);
    expect_id("\"\\x\"", NULL, __LINE__);
    expect_id("1e999999999", NULL, __LINE__);
    expect_id("", NULL, __LINE__);
    EXPECT_ERR(minlsh_dedup_canonical_id("1e3", 3, small, sizeof small, &n), MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, 4);
    /* n_out may be NULL, as everywhere; the size query still needs it */
    EXPECT_OK(minlsh_dedup_canonical_id("1", 1, small, sizeof small, NULL));
    EXPECT_ERR(minlsh_dedup_canonical_id("1e3", 3, small, sizeof small, NULL), MINLSH_E_BUFSIZE);
    EXPECT_ERR(minlsh_dedup_canonical_id(NULL, 1, small, sizeof small, &n), MINLSH_E_NULL);
}

static void test_components_first_and_longest(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    minlsh_dedup_stats st;
    minlsh_dedup *d;
    o.threshold = T;
    d = run_engine(&o, 0);
    check_components(d, MINLSH_KEEP_FIRST);
    EXPECT_OK(minlsh_dedup_copy_stats(&st, d));
    EXPECT_EQ_U64(st.documents, NDOC);
    EXPECT_EQ_U64(st.kept + st.dropped, NDOC);
    printf("  %llu kept, %llu dropped\n", (unsigned long long)st.kept,
           (unsigned long long)st.dropped);
    EXPECT(st.dropped >= NDOC / 6);
    EXPECT(st.verified > 0 && st.candidates >= st.verified);
    EXPECT(st.exact_groups >= 10);
    EXPECT(st.empty >= 4);
    EXPECT_EQ_U64(st.capped_buckets, 0);
    minlsh_dedup_free(d);
    o.keep = MINLSH_KEEP_LONGEST;
    d = run_engine(&o, 0);
    check_components(d, MINLSH_KEEP_LONGEST);
    minlsh_dedup_free(d);
}

/* Strict: a dropped document is an exact copy or a verified near-duplicate
 * (>= T, exactly) of a kept one, and no two kept documents are. */
static void test_strict(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    static minlsh_dedup_decision x[NDOC];
    minlsh_pairs *p = NULL;
    minlsh_dedup *d;
    size_t i;
    uint32_t keep;
    for (keep = MINLSH_KEEP_FIRST; keep <= MINLSH_KEEP_LONGEST; keep++) {
        o.threshold = T;
        o.group = MINLSH_GROUP_STRICT;
        o.keep = keep;
        d = run_engine(&o, 0);
        decisions_of(d, x);
        for (i = 0; i < NDOC; i++) {
            uint64_t r = x[i].representative;
            EXPECT(r < NDOC);
            if (r >= NDOC) continue;
            EXPECT(x[r].kept);
            if (x[i].kept) continue;
            EXPECT(jac[i][r] >= T);
            EXPECT_NEAR(x[i].similarity, jac[i][r], 1e-12);
            if (keep == MINLSH_KEEP_FIRST) EXPECT(r < i);
            else EXPECT(lens[r] > lens[i] || (lens[r] == lens[i] && r < i));
        }
        EXPECT_OK(minlsh_pairs_from_dedup(&p, d, 0, NULL));
        for (i = 0; i < minlsh_pairs_count(p); i++) {
            uint64_t a, b;
            minlsh_pairs_copy_pair(&a, &b, NULL, p, i);
            EXPECT(!(x[a].kept && x[b].kept));
        }
        minlsh_pairs_free(p);
        minlsh_dedup_free(d);
    }
}

/* Threads, batches and the set path give the same bits. */
static void test_invariance(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    static minlsh_dedup_decision a[NDOC], b[NDOC];
    uint32_t threads[] = {1, 3, 8};
    minlsh_dedup *d;
    size_t t;
    uint32_t group;
    for (group = MINLSH_GROUP_COMPONENTS; group <= MINLSH_GROUP_STRICT; group++) {
        o.threshold = T;
        o.group = group;
        o.threads = 1;
        d = run_engine(&o, 1);
        decisions_of(d, a);
        minlsh_dedup_free(d);
        for (t = 0; t < 3; t++) {
            minlsh_pool *pool = NULL;
            o.threads = threads[t];
            d = run_engine(&o, 0);
            decisions_of(d, b);
            EXPECT_MSG(same_decisions(a, b), "group %u threads %u", group, threads[t]);
            minlsh_dedup_free(d);
            /* documents in bulk on a pool the caller shares, which
             * outlives the engine */
            EXPECT_OK(minlsh_pool_new(&pool, threads[t], NULL));
            o.pool = pool;
            d = run_engine(&o, 3);
            decisions_of(d, b);
            EXPECT_MSG(same_decisions(a, b), "group %u shared pool of %u", group, threads[t]);
            minlsh_dedup_free(d);
            /* signed by the caller, only the values the band keys read */
            d = run_engine(&o, 4);
            decisions_of(d, b);
            EXPECT_MSG(same_decisions(a, b), "group %u prefixes, pool of %u", group, threads[t]);
            minlsh_dedup_free(d);
            EXPECT_OK(minlsh_pool_run(pool, 0, 1, NULL == pool ? NULL : visit_nothing, NULL));
            minlsh_pool_free(pool);
            o.pool = NULL;
        }
    }
}

/* Repeated ids: the first in input order stays, the others are skipped
 * with their status and counted, whether the first came in this call or an
 * earlier one, whatever the threads; JSON ids compare by value, paths by
 * bytes, and the two kinds never meet; ids come back in canonical form. */
static void test_repeated_ids(void) {
    static const struct {
        const char *id;
        uint32_t kind;
        int32_t want; /* its status */
    } v[] = {
        {"1", MINLSH_DEDUP_ID_JSON, 0},
        {"1.0", MINLSH_DEDUP_ID_JSON, MINLSH_DEDUP_REPEATED_ID},
        {"\"1\"", MINLSH_DEDUP_ID_JSON, 0},
        {"1", MINLSH_DEDUP_ID_BYTES, 0},
        {"a/b", MINLSH_DEDUP_ID_BYTES, 0},
        {"10E-1", MINLSH_DEDUP_ID_JSON, MINLSH_DEDUP_REPEATED_ID},
        {NULL, MINLSH_DEDUP_ID_NONE, 0},
        {NULL, MINLSH_DEDUP_ID_NONE, 0},
        {"\"\\u0031\"", MINLSH_DEDUP_ID_JSON, MINLSH_DEDUP_REPEATED_ID},
        {"true", MINLSH_DEDUP_ID_JSON, MINLSH_E_PARAM},
        {"a/b", MINLSH_DEDUP_ID_BYTES, MINLSH_DEDUP_REPEATED_ID},
        {"", MINLSH_DEDUP_ID_BYTES, 0},
        {"", MINLSH_DEDUP_ID_BYTES, MINLSH_DEDUP_REPEATED_ID},
        {"x", 7, MINLSH_E_PARAM},
    };
    const size_t n = sizeof v / sizeof v[0];
    uint32_t threads[] = {1, 2, 5};
    size_t t, split;
    for (t = 0; t < 3; t++)
        for (split = 0; split <= n; split += 5) {
            minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
            minlsh_dedup_doc x[sizeof v / sizeof v[0]];
            int32_t status[sizeof v / sizeof v[0]];
            minlsh_dedup_stats st;
            minlsh_dedup *d = NULL;
            uint8_t fp[16] = {0};
            uint64_t doc = 0;
            size_t i, got;
            uint32_t kind;
            char out[32];
            o.threads = threads[t];
            EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &o, NULL));
            for (i = 0; i < n; i++) {
                memset(&x[i], 0, sizeof x[i]);
                x[i].hashes = minlsh_shingleset_view_hashes(sets[i]);
                x[i].n = minlsh_shingleset_count(sets[i]);
                x[i].fp = fp;
                x[i].id = v[i].id;
                x[i].id_n = v[i].id != NULL ? strlen(v[i].id) : 0;
                x[i].id_kind = v[i].kind;
            }
            /* in two calls: repeats of ids of the first one too */
            EXPECT_ERR(minlsh_dedup_add_docs(d, x, split, status), split > 9 ? MINLSH_E_PARAM : 0);
            EXPECT_ERR(minlsh_dedup_add_docs(d, x + split, n - split, status + split),
                       MINLSH_E_PARAM);
            for (i = 0; i < n; i++)
                EXPECT_MSG(status[i] == v[i].want, "threads %u split %zu doc %zu: %d",
                           (unsigned)threads[t], split, i, (int)status[i]);
            EXPECT_EQ_U64(minlsh_dedup_count(d), 7);
            EXPECT_OK(minlsh_dedup_copy_stats(&st, d));
            EXPECT_EQ_U64(st.repeated_ids, 5);
            for (i = 0; i < n; i++) {
                if (v[i].want != 0) continue;
                EXPECT_OK(minlsh_dedup_copy_id(d, doc, out, sizeof out, &got, &kind));
                EXPECT_EQ_U64(kind, v[i].kind);
                /* canonical: the string "1" as written, paths as given */
                EXPECT(got == x[i].id_n && (got == 0 || memcmp(out, v[i].id, got) == 0));
                doc++;
            }
            EXPECT_ERR(minlsh_dedup_copy_id(d, 7, out, sizeof out, &got, &kind),
                       MINLSH_E_NOTFOUND);
            EXPECT_ERR(minlsh_dedup_copy_id(d, 1, out, 1, &got, &kind), MINLSH_E_BUFSIZE);
            EXPECT_EQ_U64(got, 3);
            /* a document added without an id has none */
            EXPECT_OK(minlsh_dedup_add_set(d, NULL, 0, NULL, 0, fp, 0));
            EXPECT_OK(minlsh_dedup_copy_id(d, 7, out, sizeof out, &got, &kind));
            EXPECT(got == 0 && kind == MINLSH_DEDUP_ID_NONE);
            EXPECT_OK(minlsh_dedup_run(d));
            EXPECT_ERR(minlsh_dedup_add_docs(d, x, 1, status), MINLSH_E_STATE);
            minlsh_dedup_free(d);
        }
}

/* Any memory budget, from tiny (many runs in temporary files) to none,
 * gives the same bits, and the files are used when, and only when, the
 * budget is short; with every pair verified or not (then the same
 * decisions, and counts that depend on neither budget nor threads). */
static void test_memory_budgets(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    static minlsh_dedup_decision a[NDOC], b[NDOC];
    uint64_t budgets[] = {1, 20000, 300000, 1 << 26};
    minlsh_dedup_stats st, st0;
    minlsh_dedup *d;
    minlsh_pairs *pa = NULL, *pb = NULL;
    size_t t, i;
    uint32_t verify, all;
    for (verify = MINLSH_VERIFY_EXACT; verify <= MINLSH_VERIFY_SIGNATURE; verify++)
        for (all = 0; all <= 1; all++) {
            o.threshold = T;
            o.verify = verify;
            o.all_pairs = 1;
            o.memory = 0;
            o.threads = 2;
            d = run_engine(&o, 0);
            decisions_of(d, a);
            EXPECT_OK(minlsh_pairs_from_dedup(&pa, d, 0, NULL));
            minlsh_dedup_free(d);
            o.all_pairs = all;
            d = run_engine(&o, 0);
            decisions_of(d, b);
            EXPECT_MSG(same_decisions(a, b), "verify %u all_pairs %u", verify, all);
            EXPECT_OK(minlsh_dedup_copy_stats(&st0, d));
            EXPECT_EQ_U64(st0.temp_bytes, 0);
            minlsh_dedup_free(d);
            for (t = 0; t < sizeof budgets / sizeof budgets[0]; t++) {
                o.memory = budgets[t];
                o.threads = (uint32_t)(1 + t % 3);
                /* every way in: texts, sets, and documents in bulk */
                d = run_engine(&o, (int)((t + verify + all) % 4));
                decisions_of(d, b);
                EXPECT_MSG(same_decisions(a, b), "verify %u all_pairs %u memory %llu", verify,
                           all, (unsigned long long)budgets[t]);
                EXPECT_OK(minlsh_dedup_copy_stats(&st, d));
                EXPECT_EQ_U64(st.candidates, st0.candidates);
                EXPECT_EQ_U64(st.verified, st0.verified);
                /* Files only past the budget: the largest holds everything. */
                if (budgets[t] < (1 << 26))
                    EXPECT_MSG(st.temp_bytes > 0, "memory %llu", (unsigned long long)budgets[t]);
                else
                    EXPECT_EQ_U64(st.temp_bytes, 0);
                if (!all) {
                    EXPECT_ERR(minlsh_pairs_from_dedup(&pb, d, 0, NULL), MINLSH_E_STATE);
                    minlsh_dedup_free(d);
                    continue;
                }
                EXPECT_OK(minlsh_pairs_from_dedup(&pb, d, 0, NULL));
                EXPECT_EQ_U64(minlsh_pairs_count(pb), minlsh_pairs_count(pa));
                for (i = 0; i < minlsh_pairs_count(pa) && i < minlsh_pairs_count(pb); i++) {
                    uint64_t x1, y1, x2, y2;
                    double s1, s2, e1, e2;
                    minlsh_pairs_copy_pair(&x1, &y1, &s1, pa, i);
                    minlsh_pairs_copy_pair(&x2, &y2, &s2, pb, i);
                    EXPECT(x1 == x2 && y1 == y2 && s1 == s2);
                    EXPECT_OK(minlsh_dedup_estimate(&e2, d, x2, y2));
                    e1 = e2;
                    EXPECT(e1 == e2);
                }
                minlsh_pairs_free(pb);
                pb = NULL;
                minlsh_dedup_free(d);
            }
            minlsh_pairs_free(pa);
            pa = NULL;
        }
}

/* The engine on n texts, run; its decisions into x (n of them). */
static minlsh_dedup *run_texts(const minlsh_dedup_options *o, char **texts, const size_t *tl,
                               size_t n, minlsh_dedup_decision *x) {
    minlsh_dedup *d = NULL;
    size_t got = 0;
    EXPECT_OK(minlsh_dedup_new(&d, sh, fam, o, NULL));
    if (d == NULL) return NULL;
    EXPECT_OK(minlsh_dedup_add_texts(d, (const void *const *)texts, tl, n, NULL));
    EXPECT_OK(minlsh_dedup_run(d));
    EXPECT_OK(minlsh_dedup_copy_decisions(d, 0, x, n, &got));
    EXPECT_EQ_U64(got, n);
    return d;
}

/* Components: a candidate pair whose documents verified pairs already
 * joined is not verified, and nothing else changes. NEAR light edits of
 * one text (one cluster) and the test corpus's first documents: every
 * pair of the cluster is a candidate when all are verified; skipping, far
 * fewer are. */
#define NEAR 40
static void test_components_skip_joined(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    static minlsh_dedup_decision a[2 * NEAR], b[2 * NEAR];
    static char *texts[2 * NEAR];
    size_t tl[2 * NEAR], i, w, budget;
    minlsh_dedup_stats all, skip, st;
    minlsh_dedup *d;
    uint32_t threads;
    for (i = 0; i < NEAR; i++) { /* docs[0], then with word 3 + i changed */
        const char *src = docs[0];
        char *p = (char *)malloc(lens[0] + 8);
        size_t word = 0, n = 0;
        for (w = 0; src[w]; w++) {
            if (src[w] == ' ') word++;
            if (word == 3 + i && src[w] != ' ' && i > 0) p[n++] = (char)('A' + i % 26);
            else p[n++] = src[w];
        }
        p[n] = 0;
        texts[2 * i] = p;
        tl[2 * i] = n;
        texts[2 * i + 1] = docs[1 + i]; /* the corpus's own, interleaved */
        tl[2 * i + 1] = lens[1 + i];
    }
    o.threshold = T;
    o.threads = 2;
    o.all_pairs = 1;
    d = run_texts(&o, texts, tl, 2 * NEAR, a);
    EXPECT_OK(minlsh_dedup_copy_stats(&all, d));
    minlsh_dedup_free(d);
    o.all_pairs = 0;
    d = run_texts(&o, texts, tl, 2 * NEAR, b);
    EXPECT_OK(minlsh_dedup_copy_stats(&skip, d));
    minlsh_dedup_free(d);
    EXPECT(memcmp(a, b, sizeof a) == 0);
    printf("  every pair: %llu candidates, %llu verified; skipping: %llu, %llu\n",
           (unsigned long long)all.candidates, (unsigned long long)all.verified,
           (unsigned long long)skip.candidates, (unsigned long long)skip.verified);
    /* The cluster's pairs are candidates when all are verified. */
    EXPECT(all.verified >= NEAR * (NEAR - 1) / 2);
    EXPECT(skip.candidates * 4 < all.candidates && skip.verified * 4 < all.verified);
    EXPECT(skip.verified >= NEAR - 1); /* at least a tree of the cluster */
    EXPECT_EQ_U64(skip.kept, all.kept);
    /* The same counts and decisions whatever the threads and the budget. */
    for (threads = 1; threads <= 3; threads++)
        for (budget = 0; budget <= 1; budget++) {
            o.threads = threads;
            o.memory = budget ? 2000 : 0;
            d = run_texts(&o, texts, tl, 2 * NEAR, b);
            EXPECT_OK(minlsh_dedup_copy_stats(&st, d));
            EXPECT_MSG(memcmp(a, b, sizeof a) == 0, "threads %u budget %zu", threads, budget);
            EXPECT(st.candidates == skip.candidates && st.verified == skip.verified);
            EXPECT(budget == 0 || st.temp_bytes > 0);
            minlsh_dedup_free(d);
        }
    o.all_pairs = 2;
    EXPECT_ERR(minlsh_dedup_new(&d, sh, fam, &o, NULL), MINLSH_E_PARAM);
    for (i = 0; i < NEAR; i++) free(texts[2 * i]);
}

static void test_signature_verification(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    minlsh_dedup *d;
    minlsh_pairs *p = NULL;
    size_t i;
    o.threshold = T;
    o.verify = MINLSH_VERIFY_SIGNATURE;
    o.all_pairs = 1;
    d = run_engine(&o, 0);
    EXPECT_OK(minlsh_pairs_from_dedup(&p, d, 0, NULL));
    EXPECT(minlsh_pairs_count(p) > 0);
    for (i = 0; i < minlsh_pairs_count(p); i++) {
        uint64_t a, b;
        double s, e;
        minlsh_pairs_copy_pair(&a, &b, &s, p, i);
        EXPECT_OK(minlsh_dedup_estimate(&e, d, a, b));
        EXPECT(s == e && s >= T);
    }
    minlsh_pairs_free(p);
    minlsh_dedup_free(d);
}

/* The engine reads bands x rows values of a signature with exact
 * verification, all k with signature verification; a signature cut to that
 * many is taken (one of any other length refused), an empty document's
 * included, and the decisions are those of whole signatures. */
static void test_signature_values(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    static minlsh_dedup_decision a[NDOC], b[NDOC];
    static uint32_t sig[128];
    minlsh_dedup_stats st;
    minlsh_dedup *d = NULL;
    uint32_t m;
    uint8_t fp[16];
    size_t i;
    EXPECT_EQ_U64(minlsh_dedup_signature_values(NULL), 0);
    o.threshold = T;
    d = run_engine(&o, 1);
    EXPECT_OK(minlsh_dedup_copy_stats(&st, d));
    m = minlsh_dedup_signature_values(d);
    EXPECT_EQ_U64(m, (uint64_t)st.bands * st.rows);
    EXPECT(m < 128);
    decisions_of(d, a);
    minlsh_dedup_free(d);
    EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &o, NULL));
    for (i = 0; i < NDOC; i++) {
        const uint64_t *h = minlsh_shingleset_view_hashes(sets[i]);
        size_t n = minlsh_shingleset_count(sets[i]);
        EXPECT_OK(minlsh_shingler_hash(sh, docs[i], lens[i], NULL, fp));
        EXPECT_OK(minlsh_family_sign_prefix(fam, h, n, sig, m));
        EXPECT_ERR(minlsh_dedup_add_set(d, h, n, sig, m + 1, fp, lens[i]), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_dedup_add_set(d, h, n, sig, m - 1, fp, lens[i]), MINLSH_E_PARAM);
        EXPECT_OK(minlsh_dedup_add_set(d, h, n, sig, m, fp, lens[i]));
    }
    EXPECT_OK(minlsh_dedup_run(d));
    decisions_of(d, b);
    EXPECT(same_decisions(a, b));
    EXPECT_OK(minlsh_dedup_copy_stats(&st, d));
    EXPECT(st.empty > 0);
    minlsh_dedup_free(d);
    o.verify = MINLSH_VERIFY_SIGNATURE;
    EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &o, NULL));
    EXPECT_EQ_U64(minlsh_dedup_signature_values(d), 128);
    minlsh_dedup_free(d);
}

/* A bucket over max_bucket is left out and counted, never silently. */
static void test_max_bucket(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    minlsh_dedup_stats st;
    minlsh_dedup *d = NULL;
    uint64_t h[40];
    uint8_t fp[16];
    size_t i, j;
    o.threshold = 0.5;
    o.max_bucket = 5;
    EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &o, NULL));
    /* 12 distinct sets sharing 39 of 40 hashes: one bucket per band */
    for (i = 0; i < 12; i++) {
        for (j = 0; j < 39; j++) h[j] = j + 1;
        h[39] = 1000 + i;
        memset(fp, 0, sizeof fp);
        fp[0] = (uint8_t)i;
        EXPECT_OK(minlsh_dedup_add_set(d, h, 40, NULL, 0, fp, 40));
    }
    EXPECT_OK(minlsh_dedup_run(d));
    EXPECT_OK(minlsh_dedup_copy_stats(&st, d));
    EXPECT(st.capped_buckets > 0);
    EXPECT(st.candidates < 66);
    minlsh_dedup_free(d);
}

static void test_errors_and_states(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *small = NULL;
    minlsh_dedup *d = NULL;
    minlsh_pairs *p = NULL;
    minlsh_dedup_decision x;
    const void *texts[3] = {"a b c d e f", "0123456789 0123456789", "x y z"};
    size_t tl[3] = {11, 21, 5}, n;
    int32_t status[3];
    uint64_t h[2] = {5, 3};
    uint8_t fp[16] = {0};

    EXPECT_ERR(minlsh_dedup_options_init(&o, 9), MINLSH_E_VERSION);
    o.threshold = 0;
    EXPECT_ERR(minlsh_dedup_new(&d, sh, fam, &o, NULL), MINLSH_E_PARAM);
    o.threshold = 0.5;
    o.bands = 100;
    o.rows = 2;
    EXPECT_ERR(minlsh_dedup_new(&d, sh, fam, &o, NULL), MINLSH_E_PARAM);
    o.rows = 0;
    EXPECT_ERR(minlsh_dedup_new(&d, sh, fam, &o, NULL), MINLSH_E_PARAM);
    o.bands = 0;
    o.keep = 7;
    EXPECT_ERR(minlsh_dedup_new(&d, sh, fam, &o, NULL), MINLSH_E_PARAM);
    EXPECT(d == NULL);
    EXPECT_ERR(minlsh_dedup_new(&d, NULL, fam, NULL, NULL), MINLSH_E_NULL);

    /* a text over max_document_bytes is reported and left out */
    so.max_document_bytes = 12;
    EXPECT_OK(minlsh_shingler_new(&small, &so, NULL));
    EXPECT_OK(minlsh_dedup_new(&d, small, fam, NULL, NULL));
    minlsh_shingler_free(small); /* the engine keeps its own copy */
    EXPECT_ERR(minlsh_dedup_add_texts(d, texts, tl, 3, status), MINLSH_E_TOOBIG);
    EXPECT(status[0] == 0 && status[1] == MINLSH_E_TOOBIG && status[2] == 0);
    EXPECT_EQ_U64(minlsh_dedup_count(d), 2);
    EXPECT_ERR(minlsh_dedup_add_set(d, h, 2, NULL, 0, fp, 2), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_dedup_copy_decisions(d, 0, &x, 1, &n), MINLSH_E_STATE);
    EXPECT_ERR(minlsh_pairs_from_dedup(&p, d, 0, NULL), MINLSH_E_STATE);
    EXPECT_OK(minlsh_dedup_run(d));
    EXPECT_ERR(minlsh_dedup_run(d), MINLSH_E_STATE);
    EXPECT_ERR(minlsh_dedup_add_texts(d, texts, tl, 1, NULL), MINLSH_E_STATE);
    EXPECT_ERR(minlsh_dedup_copy_decisions(d, 3, &x, 1, &n), MINLSH_E_NOTFOUND);
    EXPECT_OK(minlsh_dedup_copy_decisions(d, 2, &x, 1, &n));
    EXPECT_EQ_U64(n, 0);
    minlsh_dedup_free(d);
    minlsh_dedup_free(NULL);
}

/* A spill: n texts with a memory budget and the temporary files in dir.
 * Returns the first error code, with *err the errno just after the call
 * that returned it. */
typedef struct spill {
    const char *dir;
    uint32_t threads;
    uint64_t memory;
    char **texts;
    const size_t *lens;
    size_t n;
} spill;

static int spill_run(const spill *sp, int *err) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    minlsh_dedup *d = NULL;
    size_t i;
    int rc;
    o.threshold = T;
    o.memory = sp->memory;
    o.tmpdir = sp->dir;
    o.threads = sp->threads;
    *err = 0;
    if ((rc = minlsh_dedup_new(&d, sh, fam, &o, NULL)) != 0) return rc;
    for (i = 0; i < sp->n && rc == 0; i += 50) {
        size_t k = sp->n - i < 50 ? sp->n - i : 50;
        errno = 0;
        rc = minlsh_dedup_add_texts(d, (const void *const *)(sp->texts + i), sp->lens + i, k,
                                    NULL);
        *err = errno;
    }
    if (rc == 0) {
        errno = 0;
        rc = minlsh_dedup_run(d);
        *err = errno;
    }
    minlsh_dedup_free(d);
    return rc;
}

/* In a child process whose files may not pass limit bytes (SIGXFSZ ignored,
 * so that writes fail with EFBIG): 0 if the spill failed with MINLSH_E_IO
 * and errno EFBIG, 1 if it succeeded, 2 for another code, 3 for another
 * errno. */
static int spill_limited(const spill *sp, rlim_t limit) {
    pid_t pid;
    int status = 0;
    fflush(stdout); /* the child exits through exit(), which flushes */
    pid = fork();
    if (pid == 0) {
        struct rlimit rl, old;
        int rc, err, out;
        signal(SIGXFSZ, SIG_IGN);
        if (getrlimit(RLIMIT_FSIZE, &old) != 0) _exit(100);
        rl = old;
        rl.rlim_cur = limit;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(100);
        rc = spill_run(sp, &err);
        out = rc == 0 ? 1 : rc != MINLSH_E_IO ? 2 : err != EFBIG ? 3 : 0;
        /* exit, not _exit, with the limit lifted: a coverage build writes
         * its counters at exit. */
        setrlimit(RLIMIT_FSIZE, &old);
        exit(out);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 999;
    return WEXITSTATUS(status);
}

/* A temporary file that cannot be made or written gives MINLSH_E_IO with
 * errno saying why, on the calling thread, wherever the call that failed
 * ran. */
static void test_temporary_file_errors(void) {
    char missing[4096], file[4096], dir[4096];
    static char *shorts[NDOC];
    static size_t short_lens[NDOC];
    spill sp;
    FILE *f;
    size_t i;
    int err;
    snprintf(missing, sizeof missing, "%s", tl_tmp_path("dedup-no-such-dir"));
    snprintf(file, sizeof file, "%s", tl_tmp_path("dedup-a-file"));
    snprintf(dir, sizeof dir, "%s", tl_tmp_path("dedup-spill"));
    f = fopen(file, "w");
    EXPECT(f != NULL);
    if (f != NULL) fclose(f);
    EXPECT(mkdir(dir, 0700) == 0 || errno == EEXIST);
    /* Half the corpus, everything past a 1-byte budget: the records file
     * (written on the calling thread) is the first to fail. */
    sp.texts = docs;
    sp.lens = lens;
    sp.n = NDOC / 2;
    sp.memory = 1;
    for (sp.threads = 1; sp.threads <= 3; sp.threads += 2) {
        sp.dir = missing;
        EXPECT_ERR(spill_run(&sp, &err), MINLSH_E_IO);
        EXPECT_MSG(err == ENOENT, "%u threads: errno %d, expected ENOENT", sp.threads, err);
        sp.dir = file;
        EXPECT_ERR(spill_run(&sp, &err), MINLSH_E_IO);
        EXPECT_MSG(err == ENOTDIR, "%u threads: errno %d, expected ENOTDIR", sp.threads, err);
        sp.dir = dir;
        /* 4 KiB per file: the records take about 100 KiB. */
        err = spill_limited(&sp, 4096);
        EXPECT_MSG(err == 0, "%u threads: past the file size limit: %d", sp.threads, err);
    }
    EXPECT_EQ_INT(spill_limited(&sp, RLIM_INFINITY), 1);
    /* Texts of two shingles: 40 bytes of record each, which a 320 KiB
     * budget keeps in memory, but 200 bytes of band keys, which go to the
     * runs file: the pool's threads write it, and past the limit they fail
     * there. */
    for (i = 0; i < NDOC; i++) {
        shorts[i] = (char *)malloc(48);
        EXPECT(shorts[i] != NULL);
        if (shorts[i] == NULL) return;
        short_lens[i] = (size_t)snprintf(shorts[i], 48, "w%u x%u y%u z", (unsigned)i,
                                         (unsigned)(i * 7), (unsigned)(i * 13));
    }
    sp.texts = shorts;
    sp.lens = short_lens;
    sp.n = NDOC;
    sp.memory = 320 << 10;
    sp.threads = 3;
    err = spill_limited(&sp, 4096);
    EXPECT_MSG(err == 0, "band runs past the file size limit: %d", err);
    EXPECT_EQ_INT(spill_limited(&sp, RLIM_INFINITY), 1);
    for (i = 0; i < NDOC; i++) free(shorts[i]);
    remove(file);
    rmdir(dir);
}

/* Every allocation failing in turn: a clean error, no leak, and a retry of
 * the run after the failure gives the full answer. */
static void test_allocation_failures(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    static minlsh_dedup_decision want[NDOC], got[NDOC];
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    minlsh_dedup *d = NULL;
    long nth;
    int failures = 0;
    uint64_t h[3] = {1, 2, 3};
    uint8_t fp[16] = {9};
    o.threshold = T;
    o.threads = 2;
    d = run_engine(&o, 0);
    decisions_of(d, want);
    minlsh_dedup_free(d);
    for (nth = 1;; nth++) {
        int rc;
        size_t i;
        d = NULL;
        ta_fail_nth(&ta, 0);
        rc = minlsh_dedup_new(&d, sh, fam, &o, &al);
        if (rc != 0) break;
        ta_fail_nth(&ta, nth);
        for (i = 0; i < NDOC && rc == 0; i += 50)
            rc = minlsh_dedup_add_texts(d, (const void *const *)(docs + i), lens + i, 50, NULL);
        if (rc == 0) rc = minlsh_dedup_run(d);
        if (rc == 0) {
            minlsh_pairs *p = NULL;
            minlsh_clusters *c = NULL;
            /* Components without all_pairs: the pairs are refused. */
            EXPECT_ERR(minlsh_pairs_from_dedup(&p, d, 0, &al), MINLSH_E_STATE);
            rc = minlsh_clusters_from_dedup(&c, d, &al);
            EXPECT(rc == 0 || c == NULL);
            minlsh_clusters_free(c);
        }
        if (rc == 0 && ta_failed(&ta) == 0) {
            minlsh_dedup_free(d);
            break;
        }
        failures++;
        EXPECT_MSG(rc == MINLSH_E_NOMEM || rc == 0, "nth %ld: %d", nth, rc);
        if (rc == MINLSH_E_NOMEM && minlsh_dedup_count(d) == NDOC) {
            ta_fail_nth(&ta, 0);
            EXPECT_OK(minlsh_dedup_run(d));
            decisions_of(d, got);
            EXPECT(same_decisions(want, got));
        }
        minlsh_dedup_free(d);
        EXPECT_EQ_INT(ta_blocks(&ta), 0);
        if (nth > 2000) break;
    }
    EXPECT(failures > 10);
    /* add_set: all or nothing */
    for (nth = 1; nth < 50; nth++) {
        int rc;
        d = NULL;
        ta_fail_nth(&ta, 0);
        EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &o, &al));
        ta_fail_nth(&ta, nth);
        rc = minlsh_dedup_add_set(d, h, 3, NULL, 0, fp, 3);
        EXPECT(rc == 0 || rc == MINLSH_E_NOMEM);
        EXPECT_EQ_U64(minlsh_dedup_count(d), rc == 0);
        ta_fail_nth(&ta, 0);
        minlsh_dedup_free(d);
        EXPECT_EQ_INT(ta_blocks(&ta), 0);
        if (rc == 0) break;
    }
    /* add_docs: the documents before the failure are added, the others
     * not, with their ids; the decisions of a complete run are the same */
    for (nth = 1;; nth++) {
        static minlsh_dedup_doc x[NDOC];
        static uint8_t fps[NDOC][16];
        static char ids[NDOC][16];
        static int32_t status[NDOC];
        size_t i, added = 0;
        int rc;
        for (i = 0; i < NDOC; i++) {
            memset(&x[i], 0, sizeof x[i]);
            EXPECT_OK(minlsh_shingler_hash(sh, docs[i], lens[i], NULL, fps[i]));
            x[i].hashes = minlsh_shingleset_view_hashes(sets[i]);
            x[i].n = minlsh_shingleset_count(sets[i]);
            x[i].fp = fps[i];
            x[i].length = lens[i];
            snprintf(ids[i], sizeof ids[i], "%zu", i);
            x[i].id = ids[i];
            x[i].id_n = strlen(ids[i]);
            x[i].id_kind = MINLSH_DEDUP_ID_JSON;
        }
        d = NULL;
        ta_fail_nth(&ta, 0);
        EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &o, &al));
        ta_fail_nth(&ta, nth);
        rc = minlsh_dedup_add_docs(d, x, NDOC, status);
        EXPECT(rc == 0 || rc == MINLSH_E_NOMEM);
        for (i = 0; i < NDOC; i++) {
            EXPECT(status[i] == 0 || status[i] == MINLSH_E_NOMEM);
            EXPECT(status[i] != 0 || added == i); /* a prefix */
            added += status[i] == 0;
        }
        EXPECT_EQ_U64(minlsh_dedup_count(d), added);
        if (rc != 0) {
            /* the rest again: ids of the ones added are taken, the others not */
            ta_fail_nth(&ta, 0);
            if (added > 0) {
                EXPECT_OK(minlsh_dedup_add_docs(d, x, 1, status));
                EXPECT_EQ_INT(status[0], MINLSH_DEDUP_REPEATED_ID);
            }
            EXPECT_OK(minlsh_dedup_add_docs(d, x + added, NDOC - added, status));
            for (i = 0; i < NDOC - added; i++) EXPECT_EQ_INT(status[i], 0);
        }
        ta_fail_nth(&ta, 0);
        EXPECT_EQ_U64(minlsh_dedup_count(d), NDOC);
        EXPECT_OK(minlsh_dedup_run(d));
        decisions_of(d, got);
        EXPECT_MSG(same_decisions(want, got), "add_docs nth %ld", nth);
        minlsh_dedup_free(d);
        EXPECT_EQ_INT(ta_blocks(&ta), 0);
        if (rc == 0) break;
        if (nth > 500) break;
    }
}

/* minlsh_dedup_decide on the engine's own verified pairs gives the engine's
 * decisions (similarities where it knows them), for every policy; and a
 * small graph by hand, and its errors. */
static void test_decide(void) {
    minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
    static minlsh_dedup_decision want[NDOC], got[NDOC];
    static uint64_t exact_of[NDOC], lengths[NDOC];
    static uint8_t fps[NDOC][16];
    minlsh_dedup_edge *edges = NULL;
    minlsh_pairs *p = NULL;
    minlsh_dedup *d;
    size_t i, j, n_edges = 0, known = 0;
    uint32_t keep, group;
    for (i = 0; i < NDOC; i++) {
        EXPECT_OK(minlsh_shingler_hash(sh, docs[i], lens[i], NULL, fps[i]));
        exact_of[i] = i;
        lengths[i] = lens[i];
        /* empty documents are nobody's copy */
        for (j = 0; j < i && minlsh_shingleset_count(sets[i]) > 0; j++)
            if (exact_of[j] == j && memcmp(fps[i], fps[j], 16) == 0) {
                exact_of[i] = j;
                break;
            }
    }
    for (keep = MINLSH_KEEP_FIRST; keep <= MINLSH_KEEP_LONGEST; keep++)
        for (group = MINLSH_GROUP_COMPONENTS; group <= MINLSH_GROUP_STRICT; group++) {
            o.threshold = T;
            o.keep = keep;
            o.group = group;
            o.all_pairs = 1;
            d = run_engine(&o, 0);
            decisions_of(d, want);
            EXPECT_OK(minlsh_pairs_from_dedup(&p, d, 0, NULL));
            edges = (minlsh_dedup_edge *)calloc(minlsh_pairs_count(p) + 1, sizeof *edges);
            n_edges = 0;
            for (i = 0; i < minlsh_pairs_count(p); i++) {
                uint64_t a, b;
                double sim;
                minlsh_pairs_copy_pair(&a, &b, &sim, p, i);
                if (exact_of[a] != a || exact_of[b] != b) continue;
                edges[n_edges].a = a;
                edges[n_edges].b = b;
                edges[n_edges++].similarity = sim;
            }
            /* repeated edges count once */
            if (n_edges > 0) edges[n_edges] = edges[0];
            EXPECT_OK(minlsh_dedup_decide(edges, n_edges + (n_edges > 0), NDOC, exact_of,
                                          lengths, keep, group, got, NULL));
            for (i = 0; i < NDOC; i++) {
                EXPECT_MSG(got[i].cluster == want[i].cluster &&
                               got[i].representative == want[i].representative &&
                               got[i].kept == want[i].kept && got[i].exact == want[i].exact,
                           "keep %u group %u doc %zu", keep, group, i);
                if (got[i].similarity == got[i].similarity) {
                    EXPECT(got[i].similarity == want[i].similarity);
                    known++;
                } else {
                    EXPECT(group == MINLSH_GROUP_COMPONENTS && !got[i].kept);
                }
            }
            free(edges);
            minlsh_pairs_free(p);
            p = NULL;
            minlsh_dedup_free(d);
        }
    EXPECT(known > 3 * NDOC);
    {
        /* 0-1 (0.9), 1-2 (0.85), 3 a copy of 0, 4 alone; at threshold
         * they are all verified. Components: {0,1,2,3} kept 0; 2 has no
         * edge to 0, so its similarity is NaN. Strict: 0 kept, 1 and 3
         * dropped for it, 2 kept (its only neighbour, 1, is dropped). */
        minlsh_dedup_edge e[2] = {{1, 2, 0.85}, {0, 1, 0.9}};
        uint64_t ex[5] = {0, 1, 2, 0, 4};
        minlsh_dedup_decision v[5];
        EXPECT_OK(minlsh_dedup_decide(e, 2, 5, ex, NULL, MINLSH_KEEP_FIRST,
                                      MINLSH_GROUP_COMPONENTS, v, NULL));
        EXPECT(v[0].kept && !v[1].kept && !v[2].kept && !v[3].kept && v[4].kept);
        EXPECT(v[1].representative == 0 && v[1].similarity == 0.9 && !v[1].exact);
        EXPECT(v[2].representative == 0 && v[2].similarity != v[2].similarity);
        EXPECT(v[3].exact && v[3].similarity == 1.0);
        EXPECT(v[0].cluster == 1 && v[1].cluster == 1 && v[2].cluster == 1 && v[3].cluster == 1);
        EXPECT(v[4].cluster == 0 && v[4].similarity == 1.0);
        EXPECT_OK(minlsh_dedup_decide(e, 2, 5, ex, NULL, MINLSH_KEEP_FIRST,
                                      MINLSH_GROUP_STRICT, v, NULL));
        EXPECT(v[0].kept && !v[1].kept && v[2].kept && !v[3].kept && v[4].kept);
        EXPECT(v[1].representative == 0 && v[1].similarity == 0.9);
        EXPECT(v[3].representative == 0 && v[3].exact);
        EXPECT(v[0].cluster == 1 && v[1].cluster == 1 && v[3].cluster == 1);
        EXPECT(v[2].cluster == 0 && v[4].cluster == 0);
        /* errors */
        EXPECT_ERR(minlsh_dedup_decide(NULL, 1, 5, ex, NULL, 1, 1, v, NULL), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_dedup_decide(e, 2, 5, ex, NULL, 3, 1, v, NULL), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_dedup_decide(e, 2, 2, ex, NULL, 1, 1, v, NULL), MINLSH_E_PARAM);
        e[1].similarity = 1.5;
        EXPECT_ERR(minlsh_dedup_decide(e, 2, 5, ex, NULL, 1, 1, v, NULL), MINLSH_E_PARAM);
        e[1].similarity = 0.9;
        e[0].a = 3; /* not the first of its exact group */
        e[0].b = 4;
        EXPECT_ERR(minlsh_dedup_decide(e, 2, 5, ex, NULL, 1, 1, v, NULL), MINLSH_E_PARAM);
        ex[3] = 4; /* after itself */
        EXPECT_ERR(minlsh_dedup_decide(e, 0, 5, ex, NULL, 1, 1, v, NULL), MINLSH_E_PARAM);
        EXPECT_OK(minlsh_dedup_decide(NULL, 0, 0, NULL, NULL, 1, 1, NULL, NULL));
    }
}

int main(void) {
    size_t i;
    make_corpus();
    make_truth();
    RUN(test_pairs_against_brute_force);
    RUN(test_components_first_and_longest);
    RUN(test_policy);
    RUN(test_strict);
    RUN(test_invariance);
    RUN(test_repeated_ids);
    RUN(test_memory_budgets);
    RUN(test_components_skip_joined);
    RUN(test_signature_verification);
    RUN(test_signature_values);
    RUN(test_max_bucket);
    RUN(test_decide);
    RUN(test_errors_and_states);
    RUN(test_temporary_file_errors);
    RUN(test_allocation_failures);
    for (i = 0; i < NDOC; i++) {
        minlsh_shingleset_free(sets[i]);
        free(docs[i]);
    }
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
    return TL_SUMMARY("dedup");
}
