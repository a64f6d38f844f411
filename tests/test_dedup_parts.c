/*
 * Parts of the dedup engine against simple references: the one-pass sort
 * of hashed records (lib/common/sort.c) against the introsort, merges of
 * sorted runs by ranges of keys against the tournament and a plain sort,
 * the canonical-id shortcut against minlsh_dedup_canonical_id, and the id
 * tables at scale (tables that grow, ids repeated within and across
 * calls, in canonical form or not) against a sorted list of the ids.
 */
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "common/sort.h"
#include "dedup/dedup.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>

static minlsh_shingler *sh;
static minlsh_family *fam;

static int kv_cmp(const void *x, const void *y) {
    const minlsh__kv *a = (const minlsh__kv *)x, *b = (const minlsh__kv *)y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->val < b->val ? -1 : a->val > b->val;
}

/* The records of v[0..n) (sorted) whose key another has, to v[0..); how
 * many. */
static size_t only_shared(minlsh__kv *v, size_t n) {
    size_t i, o = 0;
    for (i = 0; i < n; i++)
        if ((i > 0 && v[i - 1].key == v[i].key) || (i + 1 < n && v[i + 1].key == v[i].key))
            v[o++] = v[i];
    return o;
}

/* Keys of kind `shape`: 0 any 64 bits, 1 five values (copies), 2 below
 * 1000, 3 the top 1000 keys (UINT64_MAX included). */
static uint64_t shaped_key(uint64_t *st, int shape) {
    uint64_t r = tl_rand(st);
    if (shape == 1) return (r % 5) * UINT64_C(0x3333333333333333);
    if (shape == 2) return r % 1000;
    if (shape == 3) return UINT64_MAX - r % 1000;
    return r;
}

static void test_spread_sort(void) {
    static const size_t sizes[] = {0, 1, 2, 3, 17, 1000, 70000};
    static const unsigned widths[] = {0, 1, 10, 40, 63, 64};
    uint32_t *hist = (uint32_t *)malloc(MINLSH__SPREAD_HIST * sizeof *hist);
    minlsh__kv *src = (minlsh__kv *)malloc(70000 * sizeof *src);
    minlsh__kv *got = (minlsh__kv *)malloc(70000 * sizeof *got);
    minlsh__kv *kept = (minlsh__kv *)malloc(70000 * sizeof *kept);
    uint64_t st = 7;
    size_t s, w, i, m;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (w = 0; w < sizeof widths / sizeof widths[0]; w++) {
            size_t n = sizes[s];
            unsigned width = widths[w];
            uint64_t mask = width == 64 ? UINT64_MAX : ((uint64_t)1 << width) - 1;
            uint64_t lo = tl_rand(&st) & ~mask; /* the range stays below 2^64 */
            EXPECT(minlsh__sort_kv_spread_hist(n, width) <= MINLSH__SPREAD_HIST);
            for (i = 0; i < n; i++) {
                /* every fourth key repeats the one before it */
                src[i].key = i % 4 == 3 ? src[i - 1].key : lo + (tl_rand(&st) & mask);
                src[i].val = tl_rand(&st) % 100;
            }
            minlsh__sort_kv_spread(got, src, n, hist, lo, width);
            m = minlsh__sort_kv_spread_shared(kept, src, n, hist, lo, width);
            qsort(src, n, sizeof *src, kv_cmp);
            EXPECT_MSG(n == 0 || memcmp(got, src, n * sizeof *src) == 0, "n %zu width %u", n,
                       width);
            n = only_shared(src, n);
            EXPECT_MSG(m == n && (n == 0 || memcmp(kept, src, n * sizeof *src) == 0),
                       "shared: n %zu width %u", n, width);
        }
    free(hist);
    free(src);
    free(got);
    free(kept);
}

/* k sorted runs of about n records each, in memory; every merge of them
 * (tournament or by ranges, whole or in parts) gives their records in
 * (key, val) order; one that may leave out the keys no other record has
 * gives at least the others. */
static void check_merges(minlsh_dedup *d, size_t k, size_t n, int shape) {
    minlsh__dedup_run *runs = (minlsh__dedup_run *)calloc(k + 1, sizeof *runs);
    minlsh__kv *all = (minlsh__kv *)malloc((k * (n + n / 2 + 1) + 1) * sizeof *all), *got, *shared;
    size_t total = 0, j, i, p, n_shared;
    uint64_t st = 1000 * k + (uint64_t)shape;
    static const size_t part_counts[] = {1, 3, 8};
    for (j = 0; j < k; j++) {
        size_t m = n / 2 + (size_t)(tl_rand(&st) % (n + 1));
        runs[j].v = (minlsh__kv *)malloc((m + 1) * sizeof *runs[j].v);
        runs[j].n = m;
        for (i = 0; i < m; i++) {
            runs[j].v[i].key = shaped_key(&st, shape);
            runs[j].v[i].val = j * 100000 + i; /* a document: below 2^32 */
        }
        qsort(runs[j].v, m, sizeof *runs[j].v, kv_cmp);
        memcpy(all + total, runs[j].v, m * sizeof *all);
        total += m;
    }
    qsort(all, total, sizeof *all, kv_cmp);
    got = (minlsh__kv *)malloc((total + 1) * sizeof *got);
    shared = (minlsh__kv *)malloc((total + 1) * sizeof *shared);
    memcpy(shared, all, total * sizeof *all);
    n_shared = only_shared(shared, total);
    for (p = 0; p < sizeof part_counts / sizeof part_counts[0]; p++) {
        size_t parts = part_counts[p];
        uint64_t span = UINT64_MAX / parts + 1;
        unsigned flags;
        for (flags = 0; flags <= 3; flags++) {
            size_t part, n_got = 0;
            int rc = 0, more;
            for (part = 0; part < parts && rc == 0; part++) {
                minlsh__dedup_merge m;
                minlsh__kv rec;
                rc = minlsh__dedup_merge_part(&m, d, NULL, runs, k, span, part, parts, flags);
                if (rc != 0) break;
                while ((more = minlsh__dedup_merge_next(&m, &rec)) > 0 && n_got < total)
                    got[n_got++] = rec;
                if (more < 0) rc = more;
                minlsh__dedup_merge_free(&m, k);
            }
            if (flags & MINLSH__DEDUP_MERGE_SHARED) {
                /* what came is in order, and has every shared key */
                for (i = 1; i < n_got && kv_cmp(&got[i - 1], &got[i]) < 0; i++) {
                }
                EXPECT_MSG(rc == 0 && (n_got == 0 || i == n_got), "k %zu shape %d: out of order", k,
                           shape);
                n_got = only_shared(got, n_got);
                EXPECT_MSG(n_got == n_shared && memcmp(got, shared, n_got * sizeof *got) == 0,
                           "k %zu shape %d parts %zu flags %u: %zu of %zu shared records", k, shape,
                           parts, flags, n_got, n_shared);
                continue;
            }
            EXPECT_MSG(rc == 0 && n_got == total && memcmp(got, all, total * sizeof *all) == 0,
                       "k %zu shape %d parts %zu flags %u: rc %d, %zu of %zu records", k, shape,
                       parts, flags, rc, n_got, total);
        }
    }
    for (j = 0; j < k; j++) free(runs[j].v);
    free(runs);
    free(all);
    free(got);
    free(shared);
}

static void test_merges(void) {
    minlsh_dedup *d = NULL;
    static const size_t ks[] = {1, 2, 5, 16};
    size_t k;
    int shape;
    EXPECT_OK(minlsh_dedup_new(&d, sh, fam, NULL, NULL));
    for (k = 0; k < sizeof ks / sizeof ks[0]; k++)
        for (shape = 0; shape < 4; shape++) {
            check_merges(d, ks[k], 5000, shape);
            check_merges(d, ks[k], 3, shape);
        }
    minlsh_dedup_free(d);
}

static void test_canonical_shortcut(void) {
    static const char *yes[] = {"0",    "7",       "-7",        "123456789012345678901", "-100",
                                "\"\"", "\"abc\"", "\"a b/c\"", "\"\xc3\xa9\""};
    static const char *no[] = {"-0",   "1.0", "01",        "1e3",         "1234567890123456789012",
                               " 1",   "1 ",  "\"a\\nb\"", "\"\\u0041\"", "\"a",
                               "true", "",    "-",         "\"a\"b\""};
    char out[64];
    size_t i, n;
    for (i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        EXPECT_MSG(minlsh__dedup_id_is_canonical(yes[i], strlen(yes[i])) == 1, "%s", yes[i]);
        /* and it is what the full canonical form gives */
        EXPECT_OK(minlsh_dedup_canonical_id(yes[i], strlen(yes[i]), out, sizeof out, &n));
        EXPECT_MSG(n == strlen(yes[i]) && memcmp(out, yes[i], n) == 0, "%s", yes[i]);
    }
    for (i = 0; i < sizeof no / sizeof no[0]; i++)
        EXPECT_MSG(minlsh__dedup_id_is_canonical(no[i], strlen(no[i])) == 0, "%s", no[i]);
}

#define NID 60000

typedef struct id_ref {
    char key[48]; /* kind, then the canonical id */
    size_t doc;
} id_ref;

static int ref_cmp(const void *x, const void *y) {
    const id_ref *a = (const id_ref *)x, *b = (const id_ref *)y;
    int c = strcmp(a->key, b->key);
    return c != 0 ? c : (a->doc > b->doc) - (a->doc < b->doc);
}

/* Ids from 40,000 values in five spellings, some equal to others: the
 * integer v as JSON (canonical already) and as "v.0" (not), the string
 * "sv" as JSON plainly and with an escape, and v as bytes. */
static void make_id(uint64_t *st, char *id, uint32_t *kind, char *canon) {
    unsigned v = (unsigned)(tl_rand(st) % 40000), form = (unsigned)(tl_rand(st) % 5);
    *kind = MINLSH_DEDUP_ID_JSON;
    if (form == 0 || form == 1) {
        sprintf(id, form == 0 ? "%u" : "%u.0", v);
        sprintf(canon, "J%u", v);
    } else if (form == 2 || form == 3) {
        sprintf(id, form == 2 ? "\"s%u\"" : "\"\\u0073%u\"", v);
        sprintf(canon, "J\"s%u\"", v);
    } else {
        sprintf(id, "%u", v);
        sprintf(canon, "B%u", v);
        *kind = MINLSH_DEDUP_ID_BYTES;
    }
}

static void test_ids_at_scale(void) {
    static char ids[NID][24];
    static minlsh_dedup_doc x[NID];
    static int32_t status[NID];
    static id_ref ref[NID];
    static const size_t calls[] = {25000, 1, NID - 25001};
    static const unsigned threads[] = {1, 4};
    uint8_t fp[MINLSH_FINGERPRINT_BYTES] = {0};
    size_t i, t, at, c, repeated = 0;
    uint64_t st = 99;
    for (i = 0; i < NID; i++) {
        memset(&x[i], 0, sizeof x[i]);
        make_id(&st, ids[i], &x[i].id_kind, ref[i].key);
        x[i].id = ids[i];
        x[i].id_n = strlen(ids[i]);
        x[i].fp = fp;
        ref[i].doc = i;
    }
    qsort(ref, NID, sizeof *ref, ref_cmp);
    for (t = 0; t < 2; t++) {
        minlsh_dedup_options o = MINLSH_DEDUP_OPTIONS_INIT;
        minlsh_dedup_stats s;
        minlsh_dedup *d = NULL;
        uint64_t doc = 0;
        int ok = 1;
        o.threads = threads[t];
        EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &o, NULL));
        for (c = 0, at = 0; c < 3; at += calls[c++])
            EXPECT_OK(minlsh_dedup_add_docs(d, x + at, calls[c], status + at));
        /* the first of each id in input order is added, the others not */
        for (i = 0, repeated = 0; i < NID; i++) {
            int first = i == 0 || strcmp(ref[i].key, ref[i - 1].key) != 0;
            repeated += !first;
            if (status[ref[i].doc] != (first ? 0 : MINLSH_DEDUP_REPEATED_ID) && ok) {
                TL_FAIL("threads %u: doc %zu (%s) status %d", threads[t], ref[i].doc,
                        ids[ref[i].doc], (int)status[ref[i].doc]);
                ok = 0;
            }
        }
        EXPECT_OK(minlsh_dedup_copy_stats(&s, d));
        EXPECT_EQ_U64(s.repeated_ids, repeated);
        EXPECT_EQ_U64(minlsh_dedup_count(d), NID - repeated);
        /* each added document's id, in canonical form */
        for (i = 0; i < NID && ok; i++) {
            char got[48], want[48];
            size_t n = 0;
            uint32_t kind = 0;
            if (status[i] != 0) continue;
            EXPECT_OK(minlsh_dedup_copy_id(d, doc++, got, sizeof got - 1, &n, &kind));
            got[n] = 0;
            EXPECT_EQ_U64(kind, x[i].id_kind);
            if (x[i].id_kind == MINLSH_DEDUP_ID_JSON &&
                minlsh_dedup_canonical_id(ids[i], strlen(ids[i]), want, sizeof want, &n) == 0)
                want[n] = 0;
            else strcpy(want, ids[i]);
            if (strcmp(got, want) != 0) {
                TL_FAIL("threads %u: doc %zu id %s, expected %s", threads[t], i, got, want);
                ok = 0;
            }
        }
        minlsh_dedup_free(d);
    }
}

int main(void) {
    minlsh_shingler_options so;
    minlsh_shingler_options_init(&so, MINLSH_SHINGLER_OPTIONS_VERSION);
    EXPECT_OK(minlsh_shingler_new(&sh, &so, NULL));
    EXPECT_OK(minlsh_family_new(&fam, 128, 7, NULL));
    RUN(test_spread_sort);
    RUN(test_merges);
    RUN(test_canonical_shortcut);
    RUN(test_ids_at_scale);
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
    return TL_SUMMARY("dedup_parts");
}
