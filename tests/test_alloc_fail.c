/* Allocation failure through every public operation that can allocate
 * (docs/robustness.md).
 *
 * A counting allocator fails its Nth allocation, for N = 1, 2, ... until the
 * operation no longer reaches an Nth allocation. At every failure point:
 *  - the call returns MINLSH_E_NOMEM (a constructor also leaves *out NULL
 *    and holds no memory afterwards);
 *  - the handles it works on are observably unchanged (their saved bytes,
 *    query answers, contents and the file on disk are compared before and
 *    after);
 *  - they are still usable: the same call, repeated without a failure,
 *    succeeds and gives exactly what it gives on a fresh setup;
 *  - nothing leaks: once everything is freed, no allocation is live.
 * Only the public API is used, so the test keeps working whatever the
 * internals allocate and in which order. The last line before the summary
 * reports how many failure points were exercised.
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_index_query_limited */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "testalloc.h"
#include "testlib.h"

#include <minlsh.h>

#include <dirent.h>

/* ---- the allocator (tests/testalloc.h; atomic, since sign_batch allocates
 * from its workers) --------------------------------------------------------- */

static testalloc ca;
static const minlsh_allocator AL = {ta_alloc, ta_free, &ca};

static long live(void) { return ta_blocks(&ca); }

/* Fail the nth allocation from now on (0: stop failing). */
static void fail_nth(long n) { ta_fail_nth(&ca, n); }

/* Failures injected since the last fail_nth(n > 0). */
static long failures_injected(void) { return ta_failed(&ca); }

/* ---- observations: byte strings that must compare equal ------------------ */

typedef struct obs {
    uint8_t *p;
    size_t n, cap;
} obs;

static void obs_put(obs *o, const void *data, size_t n) {
    if (o->n + n > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        uint8_t *p;
        while (cap < o->n + n) cap *= 2;
        p = (uint8_t *)realloc(o->p, cap);
        if (p == NULL) abort();
        o->p = p;
        o->cap = cap;
    }
    if (n > 0) memcpy(o->p + o->n, data, n);
    o->n += n;
}

static void obs_u64(obs *o, uint64_t v) { obs_put(o, &v, sizeof v); }
static void obs_tag(obs *o, const char *s) { obs_put(o, s, strlen(s) + 1); }

static int obs_same(const obs *a, const obs *b) {
    return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

/* ---- test data ------------------------------------------------------------- */

#define K 16
#define BANDS 8
#define ROWS 2
#define NDOCS 48
#define DOC_BYTES 6000

static char doc[DOC_BYTES + 1];
static size_t doc_len;
static uint64_t edges_a[64], edges_b[64];

/* Signature i: values from a small alphabet, so that bands are shared;
 * every seventh is the empty-set signature. */
static void sig_of(size_t i, uint32_t *sig) {
    uint64_t s = 1000 + i / 3; /* groups of three similar documents */
    size_t v;
    for (v = 0; v < K; v++) sig[v] = (uint32_t)(tl_rand(&s) % 5);
    if (i % 3 == 1) sig[i % K] ^= 7;
    if (i % 7 == 6)
        for (v = 0; v < K; v++) sig[v] = MINLSH_EMPTY_VALUE;
}

static void make_data(void) {
    static const char *words[] = {"the", "of", "and", "crawler", "page", "near",
                                  "duplicate", "<b>", "&amp;", "caf\xc3\xa9", "\xff",
                                  "Text", "a", "to", "index", "<!-- c -->",
                                  "\xc3\x89" "COLE", "\xef\xac\x81" "ne",
                                  "\xe4\xb8\xad\xe6\x96\x87", "e\xcc\x81\xcc\xa3"};
    uint64_t s = 5;
    size_t i;
    doc_len = 0;
    while (doc_len + 16 < DOC_BYTES) {
        const char *w = words[tl_rand(&s) % (sizeof words / sizeof words[0])];
        size_t n = strlen(w);
        memcpy(doc + doc_len, w, n);
        doc_len += n;
        doc[doc_len++] = (tl_rand(&s) % 9) ? ' ' : '\n';
    }
    doc[doc_len] = '\0';
    for (i = 0; i < 64; i++) {
        edges_a[i] = tl_rand(&s) % 40;
        edges_b[i] = tl_rand(&s) % 40;
    }
}

/* ---- the fixture ------------------------------------------------------------- */

typedef struct fx {
    int v; /* variant */
    minlsh_shingler *sh;
    minlsh_shingleset *set;
    minlsh_shinglestream *st;
    minlsh_family *fam;
    minlsh_sigmatrix *mx;
    minlsh_index *ix;
    minlsh_pairs *pairs;
    minlsh_clusters *cl;
    /* outputs */
    uint32_t sigs[8 * K];
    int32_t status[8];
    uint8_t fp[16];
    uint64_t ids[NDOCS + 8];
    double sims[NDOCS + 8];
    size_t n;
    uint32_t searched;
    minlsh_novel_result novel;
    minlsh_filelock *lock;
    uint64_t pos;
    uint8_t *bytes; /* a serialised file, malloc'ed */
    size_t bytes_len;
    int bad_out; /* a failed constructor left its output non-NULL */
} fx;

static char file_path[4200], tmp_dir[4000];

static minlsh_index *merge_src;

static void fx_free(fx *f) {
    minlsh_index_free(merge_src);
    merge_src = NULL;
    minlsh_clusters_free(f->cl);
    minlsh_pairs_free(f->pairs);
    minlsh_index_free(f->ix);
    minlsh_filelock_free(f->lock);
    minlsh_sigmatrix_free(f->mx);
    minlsh_shinglestream_free(f->st);
    minlsh_shingleset_free(f->set);
    minlsh_family_free(f->fam);
    minlsh_shingler_free(f->sh);
    free(f->bytes);
    memset(f, 0, sizeof *f);
}

/* Handles the operations work on, made with the counting allocator (so
 * that the operation allocates through it) or with malloc (al NULL). */
static minlsh_shingler *mk_shingler(const minlsh_allocator *al, int variant) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    static const char stop[] = "the of and to a in";
    o.k = 3;
    switch (variant % 3) {
    case 0: o.unit = MINLSH_UNIT_WORD; break;
    case 1:
        o.unit = MINLSH_UNIT_CODEPOINT;
        /* the Unicode stage: its reservations keep feeds all or nothing */
        o.flags = MINLSH_NORM_HTML | MINLSH_NORM_CASEFOLD | MINLSH_NORM_UNICODE;
        break;
    default:
        o.unit = MINLSH_UNIT_STOPWORD;
        o.stopwords = stop;
        o.stopwords_len = sizeof stop - 1;
        o.flags = MINLSH_NORM_ALL;
        break;
    }
    if (minlsh_shingler_new(&sh, &o, al) != 0) TL_FAIL("setup: shingler_new");
    return sh;
}

static minlsh_family *mk_family(void) {
    minlsh_family *fam = NULL;
    if (minlsh_family_new(&fam, K, 99, NULL) != 0) TL_FAIL("setup: family_new");
    return fam;
}

static minlsh_sigmatrix *mk_matrix(const minlsh_family *fam, const minlsh_allocator *al,
                                   size_t n) {
    minlsh_sigmatrix *m = NULL;
    uint32_t sig[K];
    size_t i;
    if (minlsh_sigmatrix_new(&m, fam, 7, al) != 0) TL_FAIL("setup: sigmatrix_new");
    for (i = 0; i < n && m != NULL; i++) {
        sig_of(i, sig);
        if (minlsh_sigmatrix_append(m, sig, K, NULL) != 0) TL_FAIL("setup: append");
    }
    if (m != NULL && minlsh_sigmatrix_set_metadata(m, "matrix", 6) != 0)
        TL_FAIL("setup: set_metadata");
    return m;
}

static minlsh_index *mk_index(const minlsh_family *fam, const minlsh_allocator *al,
                              size_t n) {
    minlsh_index *ix = NULL;
    uint32_t sig[K];
    size_t i;
    if (minlsh_index_new(&ix, fam, 7, BANDS, ROWS, al) != 0) TL_FAIL("setup: index_new");
    for (i = 0; i < n && ix != NULL; i++) {
        sig_of(i, sig);
        if (minlsh_index_insert(ix, 3 * i + 1, sig, K) != 0) TL_FAIL("setup: insert");
    }
    if (ix != NULL && minlsh_index_set_metadata(ix, "index", 5) != 0)
        TL_FAIL("setup: index_set_metadata");
    return ix;
}

static void write_path(const void *data, size_t len) {
    FILE *f = fopen(file_path, "wb");
    if (f == NULL || (len > 0 && fwrite(data, 1, len, f) != len)) TL_FAIL("cannot write file");
    if (f != NULL) fclose(f);
}

/* ---- observers ----------------------------------------------------------------- */

static void obs_set(obs *o, const minlsh_shingleset *set) {
    size_t n = minlsh_shingleset_count(set);
    obs_tag(o, set != NULL ? "set" : "no set");
    obs_u64(o, n);
    if (n > 0) obs_put(o, minlsh_shingleset_view_hashes(set), n * sizeof(uint64_t));
}

static void obs_matrix(obs *o, const minlsh_sigmatrix *m) {
    size_t n = 0;
    uint8_t *buf;
    if (m == NULL) {
        obs_tag(o, "no matrix");
        return;
    }
    if (minlsh_sigmatrix_save_buffer(m, NULL, 0, &n) != MINLSH_E_BUFSIZE ||
        (buf = (uint8_t *)malloc(n)) == NULL) {
        TL_FAIL("observe: matrix size");
        return;
    }
    if (minlsh_sigmatrix_save_buffer(m, buf, n, &n) != 0) TL_FAIL("observe: matrix bytes");
    obs_put(o, buf, n);
    free(buf);
}

static void obs_index(obs *o, const minlsh_index *ix) {
    size_t n = 0, i, got;
    uint8_t *buf;
    uint32_t sig[K];
    uint64_t ids[NDOCS + 8];
    double sims[NDOCS + 8];
    if (ix == NULL) {
        obs_tag(o, "no index");
        return;
    }
    if (minlsh_index_save_buffer(ix, NULL, 0, &n) != MINLSH_E_BUFSIZE ||
        (buf = (uint8_t *)malloc(n)) == NULL) {
        TL_FAIL("observe: index size");
        return;
    }
    if (minlsh_index_save_buffer(ix, buf, n, &n) != 0) TL_FAIL("observe: index bytes");
    obs_put(o, buf, n);
    free(buf);
    /* The buckets are not in the file: probe them with queries. */
    for (i = 0; i < 6; i++) {
        sig_of(i * 5, sig);
        if (minlsh_index_query(ix, sig, K, ids, sims, NDOCS + 8, &got) != 0) {
            TL_FAIL("observe: query");
            continue;
        }
        obs_u64(o, got);
        obs_put(o, ids, got * sizeof *ids);
        obs_put(o, sims, got * sizeof *sims);
    }
}

static void obs_pairs(obs *o, const minlsh_pairs *p) {
    size_t n = minlsh_pairs_count(p), i;
    obs_tag(o, p != NULL ? "pairs" : "no pairs");
    obs_u64(o, n);
    for (i = 0; i < n; i++) {
        uint64_t a, b;
        double s;
        if (minlsh_pairs_copy_pair(&a, &b, &s, p, i) != 0) TL_FAIL("observe: pairs_get");
        obs_u64(o, a);
        obs_u64(o, b);
        obs_put(o, &s, sizeof s);
    }
}

static void obs_clusters(obs *o, const minlsh_clusters *c) {
    size_t n = minlsh_clusters_count(c), i, m;
    uint64_t ids[128];
    obs_tag(o, c != NULL ? "clusters" : "no clusters");
    obs_u64(o, n);
    for (i = 0; i < n; i++) {
        if (minlsh_clusters_copy_members(c, i, ids, 128, &m) != 0) TL_FAIL("observe: members");
        obs_u64(o, m);
        obs_put(o, ids, (m < 128 ? m : 128) * sizeof *ids);
    }
}

/* The file at file_path (or its absence) and any temporary left beside it. */
static void obs_file(obs *o) {
    FILE *f = fopen(file_path, "rb");
    DIR *d;
    struct dirent *e;
    int leftovers = 0;
    if (f == NULL) {
        obs_tag(o, "no file");
    } else {
        uint8_t buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) obs_put(o, buf, n);
        fclose(f);
    }
    d = opendir(tmp_dir);
    if (d != NULL) {
        while ((e = readdir(d)) != NULL)
            if (strstr(e->d_name, "af.bin.tmp-") != NULL) leftovers++;
        closedir(d);
    }
    obs_u64(o, (uint64_t)leftovers);
}

static void obs_shingler(obs *o, const minlsh_shingler *sh) {
    minlsh_shingleset *set = NULL;
    uint64_t id = 0;
    if (sh == NULL) {
        obs_tag(o, "no shingler");
        return;
    }
    minlsh_shingler_config_id(&id, sh);
    obs_u64(o, id);
    if (minlsh_shingleset_new(&set, NULL) != 0 ||
        minlsh_shingler_hash(sh, doc, 500, set, NULL) != 0)
        TL_FAIL("observe: shingler_hash");
    obs_set(o, set);
    minlsh_shingleset_free(set);
}

/* ---- the operations -------------------------------------------------------------- */

typedef struct op {
    const char *name;
    int variants;
    void (*setup)(fx *f);
    int (*run)(fx *f);
    /* what must not change when run fails */
    void (*state)(fx *f, obs *o);
    /* after a successful run: compared with a run on a fresh setup */
    void (*result)(fx *f, obs *o);
    /* the documented exception: a failed feed of a chunk over 16 KiB
     * leaves the stream refusing until reset; recover resets it and
     * replays the setup's input */
    void (*recover)(fx *f);
} op;

#define CTOR(out, call)                                                        \
    do {                                                                       \
        int rc_;                                                               \
        (out) = NULL;                                                          \
        rc_ = (call);                                                          \
        if (rc_ != 0 && (out) != NULL) {                                       \
            f->bad_out = 1;                                                    \
            (out) = NULL;                                                      \
        }                                                                      \
        return rc_;                                                            \
    } while (0)

static void setup_none(fx *f) { (void)f; }
static void setup_family(fx *f) { f->fam = mk_family(); }

/* shingler_new */
static int run_shingler_new(fx *f) {
    minlsh_shingler *tmp = mk_shingler(NULL, f->v); /* the options of the variant */
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    static const char stop[] = "the of and to a in";
    int rc;
    o.k = minlsh_shingler_k(tmp);
    o.unit = minlsh_shingler_unit(tmp);
    o.flags = minlsh_shingler_flags(tmp);
    if (o.unit == MINLSH_UNIT_STOPWORD) {
        o.stopwords = stop;
        o.stopwords_len = sizeof stop - 1;
    }
    minlsh_shingler_free(tmp);
    f->sh = NULL;
    rc = minlsh_shingler_new(&f->sh, &o, &AL);
    if (rc != 0 && f->sh != NULL) {
        f->bad_out = 1;
        f->sh = NULL;
    }
    return rc;
}
static void obs_sh(fx *f, obs *o) { obs_shingler(o, f->sh); }

/* shingleset_new / assign */
static int run_set_new(fx *f) { CTOR(f->set, minlsh_shingleset_new(&f->set, &AL)); }
static void obs_the_set(fx *f, obs *o) { obs_set(o, f->set); }

static void setup_set(fx *f) {
    static const uint64_t first[5] = {9, 3, 3, 7, 1};
    if (minlsh_shingleset_new(&f->set, &AL) != 0 ||
        minlsh_shingleset_assign(f->set, first, f->v == 0 ? 0 : 5) != 0)
        TL_FAIL("setup: set");
}
static int run_set_assign(fx *f) {
    uint64_t v[3000], s = 77;
    size_t i, n = f->v == 2 ? 3 : 3000;
    for (i = 0; i < n; i++) v[i] = tl_rand(&s) % 2000; /* duplicates */
    return minlsh_shingleset_assign(f->set, v, n);
}

/* shingler_hash */
static void setup_hash(fx *f) {
    static const uint64_t first[2] = {1, 2};
    f->sh = mk_shingler(&AL, f->v);
    if (minlsh_shingleset_new(&f->set, &AL) != 0 ||
        minlsh_shingleset_assign(f->set, first, 2) != 0)
        TL_FAIL("setup: set");
}
static int run_hash(fx *f) {
    return minlsh_shingler_hash(f->sh, doc, doc_len, f->v >= 3 ? NULL : f->set, f->fp);
}
static void state_hash(fx *f, obs *o) {
    obs_set(o, f->set);
    obs_shingler(o, f->sh);
}
static void result_hash(fx *f, obs *o) {
    state_hash(f, o);
    obs_put(o, f->fp, 16);
}

/* streams */
static void setup_stream_shingler(fx *f) { f->sh = mk_shingler(&AL, f->v); }
static int run_stream_new(fx *f) { CTOR(f->st, minlsh_shinglestream_new(&f->st, f->sh, &AL)); }
static void obs_stream_bytes(fx *f, obs *o) {
    obs_tag(o, f->st != NULL ? "stream" : "no stream");
    obs_u64(o, minlsh_shinglestream_bytes(f->st));
}

#define PREFIX 700
/* variant 0..2: a 3000-byte chunk (all or nothing); 3..5: the whole rest of
 * a long document in one chunk over 16 KiB (the documented exception) */
static char long_doc[40000];
static size_t chunk_len(const fx *f) { return f->v < 3 ? 3000 : sizeof long_doc - PREFIX; }
static const char *chunk_src(const fx *f) { return f->v < 3 ? doc : long_doc; }

static void setup_feed(fx *f) {
    f->sh = mk_shingler(&AL, f->v);
    if (minlsh_shinglestream_new(&f->st, f->sh, &AL) != 0 ||
        minlsh_shinglestream_feed(f->st, chunk_src(f), PREFIX) != 0 ||
        minlsh_shingleset_new(&f->set, NULL) != 0)
        TL_FAIL("setup: stream");
}
static int run_feed(fx *f) {
    return minlsh_shinglestream_feed(f->st, chunk_src(f) + PREFIX, chunk_len(f));
}
static void result_feed(fx *f, obs *o) {
    obs_stream_bytes(f, o);
    /* Finish the document (destructive: only after the run). */
    if (minlsh_shinglestream_finish(f->st, f->set, f->fp) != 0) TL_FAIL("result: finish");
    obs_set(o, f->set);
    obs_put(o, f->fp, 16);
}
static void recover_feed(fx *f) {
    if (f->v < 3) return; /* all or nothing: the plain retry must work */
    /* refusing until reset: feed says NOMEM again, finish says STATE */
    EXPECT_ERR(minlsh_shinglestream_feed(f->st, "a", 1), MINLSH_E_NOMEM);
    EXPECT_ERR(minlsh_shinglestream_finish(f->st, f->set, f->fp), MINLSH_E_STATE);
    EXPECT_EQ_U64(minlsh_shinglestream_bytes(f->st), 0); /* finish reset it */
    EXPECT_OK(minlsh_shinglestream_feed(f->st, chunk_src(f), PREFIX));
}

static void setup_finish(fx *f) {
    static const uint64_t first[2] = {1, 2};
    f->sh = mk_shingler(&AL, f->v);
    if (minlsh_shinglestream_new(&f->st, f->sh, &AL) != 0 ||
        minlsh_shinglestream_feed(f->st, doc, 2000) != 0 ||
        minlsh_shinglestream_feed(f->st, doc + 2000, doc_len - 2000) != 0 ||
        minlsh_shingleset_new(&f->set, &AL) != 0 ||
        minlsh_shingleset_assign(f->set, first, 2) != 0)
        TL_FAIL("setup: stream");
}
static int run_finish(fx *f) { return minlsh_shinglestream_finish(f->st, f->set, f->fp); }
static void state_finish(fx *f, obs *o) {
    obs_stream_bytes(f, o);
    obs_set(o, f->set);
}
static void result_finish(fx *f, obs *o) {
    state_finish(f, o);
    obs_put(o, f->fp, 16);
}

/* family */
static int run_family_new(fx *f) { CTOR(f->fam, minlsh_family_new(&f->fam, K, 5, &AL)); }
static int run_family_new_scheme(fx *f) {
    CTOR(f->fam, minlsh_family_new_scheme(&f->fam, K, 5, MINLSH_SCHEME_OPH, &AL));
}
static void obs_family(fx *f, obs *o) {
    uint64_t a[K], b[K];
    if (f->fam == NULL) {
        obs_tag(o, "no family");
        return;
    }
    minlsh_family_copy_coefficients(f->fam, a, b, K, NULL);
    obs_put(o, a, sizeof a);
    obs_put(o, b, sizeof b);
}

/* sign_text, sign_batch */
static void setup_sign(fx *f) {
    size_t i;
    f->sh = mk_shingler(&AL, f->v);
    f->fam = mk_family();
    for (i = 0; i < 8 * K; i++) f->sigs[i] = 0xABCD0000u + (uint32_t)i;
    for (i = 0; i < 8; i++) f->status[i] = 12345;
}
static int run_sign_text(fx *f) {
    return minlsh_family_sign_text(f->fam, f->sh, doc, doc_len, f->sigs, K, &f->n);
}
static void state_sign_text(fx *f, obs *o) {
    obs_put(o, f->sigs, K * sizeof(uint32_t)); /* the caller's buffer is kept */
    obs_shingler(o, f->sh);
}
static int run_sign_batch(fx *f) {
    const void *texts[8];
    size_t lens[8], i;
    for (i = 0; i < 8; i++) {
        texts[i] = doc + 300 * i;
        lens[i] = i == 5 ? 0 : 1000 + 250 * i;
    }
    return minlsh_family_sign_batch(f->fam, f->sh, texts, lens, 8, f->v < 3 ? 1 : 2, f->sigs, 8 * K,
                                    &f->n, f->status);
}
static void state_sign_batch(fx *f, obs *o) {
    /* The outputs of a failed batch are documented per document (status);
     * the shingler and the family must be untouched. */
    obs_shingler(o, f->sh);
    obs_family(f, o);
}
static void result_sign_batch(fx *f, obs *o) {
    state_sign_batch(f, o);
    obs_put(o, f->sigs, sizeof f->sigs);
    obs_put(o, f->status, sizeof f->status);
}

/* matrix */
static int run_matrix_new(fx *f) { CTOR(f->mx, minlsh_sigmatrix_new(&f->mx, f->fam, 7, &AL)); }
static void obs_mx(fx *f, obs *o) { obs_matrix(o, f->mx); }

static void setup_matrix(fx *f) {
    f->fam = mk_family();
    f->mx = mk_matrix(f->fam, &AL, (size_t)f->v);
}
static int run_append(fx *f) {
    uint32_t sig[K];
    sig_of(1000, sig);
    return minlsh_sigmatrix_append(f->mx, sig, K, &f->pos);
}
static void result_append(fx *f, obs *o) {
    obs_matrix(o, f->mx);
    obs_u64(o, f->pos);
}
static int run_mx_set_metadata(fx *f) {
    static char meta[3000];
    size_t len = f->v == 0 ? 0 : f->v == 1 ? 17 : sizeof meta;
    memset(meta, 'm', sizeof meta);
    return minlsh_sigmatrix_set_metadata(f->mx, meta, len);
}
static void setup_matrix_10(fx *f) {
    f->fam = mk_family();
    f->mx = mk_matrix(f->fam, &AL, 10);
    write_path("old content", 11);
}
static int run_mx_save(fx *f) { return minlsh_sigmatrix_save(f->mx, file_path); }
static void obs_mx_file(fx *f, obs *o) {
    obs_matrix(o, f->mx);
    obs_file(o);
}
static int run_mx_save_buffer(fx *f) {
    size_t n = 0;
    if (minlsh_sigmatrix_save_buffer(f->mx, NULL, 0, &n) != MINLSH_E_BUFSIZE) return -100;
    free(f->bytes);
    f->bytes = (uint8_t *)malloc(n);
    f->bytes_len = n;
    return minlsh_sigmatrix_save_buffer(f->mx, f->bytes, n, &n);
}
static void result_mx_bytes(fx *f, obs *o) {
    obs_matrix(o, f->mx);
    obs_put(o, f->bytes, f->bytes_len);
}
/* load, load_buffer, map: from the bytes of a 20-document matrix */
static void setup_mx_file(fx *f) {
    minlsh_sigmatrix *m;
    f->fam = mk_family();
    m = mk_matrix(f->fam, NULL, 20);
    f->mx = m;
    run_mx_save_buffer(f);
    f->mx = NULL;
    minlsh_sigmatrix_free(m);
    write_path(f->bytes, f->bytes_len);
}
static int run_mx_load(fx *f) {
    CTOR(f->mx, minlsh_sigmatrix_load(&f->mx, file_path, LOAD_OPTS(f->v ? f->fam : NULL, 7, &AL)));
}
static int run_mx_load_buffer(fx *f) {
    CTOR(f->mx, minlsh_sigmatrix_load_buffer(&f->mx, f->bytes, f->bytes_len, LOAD_OPTS(f->v ? f->fam : NULL, 7, &AL)));
}
static int run_mx_map(fx *f) {
    CTOR(f->mx, minlsh_sigmatrix_map(&f->mx, file_path, LOAD_OPTS(f->v ? f->fam : NULL, 7, &AL)));
}

/* matrix to pairs and clusters (the result uses the allocator) */
static void setup_matrix_ro(fx *f) {
    f->fam = mk_family();
    f->mx = mk_matrix(f->fam, NULL, NDOCS);
}
static int run_pairs_from_matrix(fx *f) {
    CTOR(f->pairs, minlsh_pairs_from_matrix(&f->pairs, f->mx, BANDS, ROWS,
                                            f->v ? 0.5 : 0.0, 0, &AL));
}
static void obs_mx_pairs(fx *f, obs *o) {
    obs_matrix(o, f->mx);
    obs_pairs(o, f->pairs);
}
static int run_clusters_from_matrix(fx *f) {
    CTOR(f->cl, minlsh_clusters_from_matrix(&f->cl, f->mx, BANDS, ROWS,
                                            f->v ? 0.5 : 0.0, &AL));
}
static void obs_mx_clusters(fx *f, obs *o) {
    obs_matrix(o, f->mx);
    obs_clusters(o, f->cl);
}

/* index */
static int run_index_new(fx *f) {
    CTOR(f->ix, minlsh_index_new(&f->ix, f->fam, 7, BANDS, ROWS, &AL));
}
static void obs_ix(fx *f, obs *o) { obs_index(o, f->ix); }

static void setup_index_v(fx *f) {
    f->fam = mk_family();
    f->ix = mk_index(f->fam, &AL, (size_t)f->v);
}
static void setup_index_full(fx *f) {
    f->fam = mk_family();
    f->ix = mk_index(f->fam, &AL, NDOCS);
    write_path("old content", 11);
}
static int run_insert(fx *f) {
    uint32_t sig[K];
    sig_of((size_t)f->v + 1, sig); /* shares bands with existing documents */
    return minlsh_index_insert(f->ix, 1000000 + (uint64_t)f->v, sig, K);
}
static int run_remove(fx *f) { return minlsh_index_remove(f->ix, 3 * (uint64_t)(f->v / 2) + 1); }
static void setup_index_remove(fx *f) {
    f->fam = mk_family();
    f->ix = mk_index(f->fam, &AL, (size_t)f->v + 1);
}
static int run_query(fx *f) {
    uint32_t sig[K];
    sig_of((size_t)f->v * 4, sig);
    return minlsh_index_query(f->ix, sig, K, f->ids, f->sims, NDOCS + 8, &f->n);
}
static void result_query(fx *f, obs *o) {
    obs_index(o, f->ix);
    obs_u64(o, f->n);
    obs_put(o, f->ids, f->n * sizeof *f->ids);
    obs_put(o, f->sims, f->n * sizeof *f->sims);
    obs_u64(o, f->searched);
}
static int run_query_limited(fx *f) {
    uint32_t sig[K];
    sig_of((size_t)f->v * 4, sig);
    return minlsh_index_query_limited(f->ix, sig, K, (uint64_t)f->v * 3, f->ids, f->sims,
                                      NDOCS + 8, &f->n, &f->searched);
}
static int run_index_pairs(fx *f) {
    CTOR(f->pairs, minlsh_pairs_from_index(&f->pairs, f->ix, f->v ? 0.5 : 0.0, 0, &AL));
}
static void obs_ix_pairs(fx *f, obs *o) {
    obs_index(o, f->ix);
    obs_pairs(o, f->pairs);
}
static int run_index_clusters(fx *f) {
    CTOR(f->cl, minlsh_clusters_from_index(&f->cl, f->ix, f->v ? 0.5 : 0.0, &AL));
}
static void obs_ix_clusters(fx *f, obs *o) {
    obs_index(o, f->ix);
    obs_clusters(o, f->cl);
}
static int run_ix_set_metadata(fx *f) {
    static char meta[3000];
    size_t len = f->v == 0 ? 0 : f->v == 1 ? 17 : sizeof meta;
    memset(meta, 'i', sizeof meta);
    return minlsh_index_set_metadata(f->ix, meta, len);
}
static int run_ix_save(fx *f) { return minlsh_index_save(f->ix, file_path); }
static void obs_ix_file(fx *f, obs *o) {
    obs_index(o, f->ix);
    obs_file(o);
}
static int run_ix_save_buffer(fx *f) {
    size_t n = 0;
    int rc;
    /* The size query itself may allocate (it sorts the ids). */
    rc = minlsh_index_save_buffer(f->ix, NULL, 0, &n);
    if (rc != MINLSH_E_BUFSIZE) return rc;
    free(f->bytes);
    f->bytes = (uint8_t *)malloc(n);
    f->bytes_len = n;
    return minlsh_index_save_buffer(f->ix, f->bytes, n, &n);
}
static void result_ix_bytes(fx *f, obs *o) {
    obs_index(o, f->ix);
    obs_put(o, f->bytes, f->bytes_len);
}
static void setup_ix_file(fx *f) {
    minlsh_index *ix;
    f->fam = mk_family();
    ix = mk_index(f->fam, NULL, NDOCS);
    f->ix = ix;
    run_ix_save_buffer(f);
    f->ix = NULL;
    minlsh_index_free(ix);
    write_path(f->bytes, f->bytes_len);
}
static int run_ix_load(fx *f) {
    CTOR(f->ix, minlsh_index_load(&f->ix, file_path, LOAD_OPTS(f->v ? f->fam : NULL, 7, &AL)));
}
static int run_ix_load_buffer(fx *f) {
    CTOR(f->ix, minlsh_index_load_buffer(&f->ix, f->bytes, f->bytes_len, LOAD_OPTS(f->v ? f->fam : NULL, 7, &AL)));
}

static int run_ix_save_mapped(fx *f) { return minlsh_index_save_mapped(f->ix, file_path); }
static void setup_ix_file_mapped(fx *f) {
    minlsh_index *ix;
    f->fam = mk_family();
    ix = mk_index(f->fam, NULL, NDOCS);
    if (minlsh_index_save_mapped(ix, file_path) != 0) TL_FAIL("setup: save_mapped");
    minlsh_index_free(ix);
}
static int run_ix_map(fx *f) {
    CTOR(f->ix, minlsh_index_map(&f->ix, file_path, LOAD_OPTS(f->v ? f->fam : NULL, 7, &AL)));
}

static size_t offsets[9];
static uint64_t many_ids[8 * NDOCS];
static double many_sims[8 * NDOCS];
static int run_query_many(fx *f) {
    uint32_t sig[8 * K];
    size_t i;
    for (i = 0; i < 8; i++) sig_of(i * 5 + (size_t)f->v, sig + i * K);
    return minlsh_index_query_many(f->ix, sig, 8, K, offsets, many_ids, many_sims, 8 * NDOCS,
                                   &f->n);
}
/* variants 0-3: a stored signature (a duplicate); 4-7: a new one that
 * shares bands, at threshold 0.99 (novel: inserted) */
static int run_insert_novel(fx *f) {
    minlsh_novel_options o = MINLSH_NOVEL_OPTIONS_INIT;
    uint32_t sig[K];
    sig_of(f->v < 4 ? (size_t)f->v * 4 : (size_t)NDOCS + (size_t)f->v, sig);
    if (f->v >= 4) o.threshold = 0.99;
    return minlsh_index_insert_novel(&f->novel, f->ix, 2000000 + (uint64_t)f->v, sig, K, &o);
}
static void result_insert_novel(fx *f, obs *o) {
    obs_index(o, f->ix);
    obs_u64(o, f->novel.novel);
    obs_u64(o, f->novel.match);
    obs_put(o, &f->novel.similarity, sizeof f->novel.similarity);
    obs_u64(o, f->novel.candidates);
}

static int run_filelock_new(fx *f) {
    CTOR(f->lock, minlsh_filelock_new(&f->lock, file_path, MINLSH_LOCK_EXCLUSIVE, 0, &AL));
}
static void obs_lock(fx *f, obs *o) { obs_u64(o, f->lock != NULL); }

/* over a file already there (v 1) or none (v 0) */
static void setup_file_save(fx *f) {
    (void)f;
    remove(file_path);
    if (f->v == 1 && minlsh_file_save(file_path, "old", 3, NULL) != 0) TL_FAIL("setup: file");
}
static int run_file_save(fx *f) {
    (void)f;
    return minlsh_file_save(file_path, "new bytes", 9, &AL);
}
static void obs_saved_file(fx *f, obs *o) {
    (void)f;
    obs_file(o);
}

static void result_query_many(fx *f, obs *o) {
    obs_index(o, f->ix);
    obs_u64(o, f->n);
    obs_put(o, many_ids, f->n * sizeof *many_ids);
    obs_put(o, many_sims, f->n * sizeof *many_sims);
    obs_put(o, offsets, sizeof offsets);
}

/* merge a shard (made with malloc) into an index made with the allocator */
static void setup_merge(fx *f) {
    f->fam = mk_family();
    f->ix = mk_index(f->fam, &AL, (size_t)f->v * 5);
    merge_src = mk_index(f->fam, NULL, 20);
}
static int run_merge(fx *f) { return minlsh_index_merge(f->ix, merge_src, 1u << 20); }

/* clusters of edges */
static int run_clusters_from_edges(fx *f) {
    size_t n = f->v == 0 ? 0 : f->v == 1 ? 3 : 64;
    CTOR(f->cl, minlsh_clusters_from_edges(&f->cl, edges_a, edges_b, n, &AL));
}
static void obs_cl(fx *f, obs *o) { obs_clusters(o, f->cl); }

static const op ops[] = {
    {"shingler_new", 3, setup_none, run_shingler_new, obs_sh, obs_sh, NULL},
    {"shingleset_new", 1, setup_none, run_set_new, obs_the_set, obs_the_set, NULL},
    {"shingleset_assign", 3, setup_set, run_set_assign, obs_the_set, obs_the_set, NULL},
    {"shingler_hash", 4, setup_hash, run_hash, state_hash, result_hash, NULL},
    {"shinglestream_new", 3, setup_stream_shingler, run_stream_new, obs_stream_bytes,
     obs_stream_bytes, NULL},
    {"shinglestream_feed", 6, setup_feed, run_feed, obs_stream_bytes, result_feed,
     recover_feed},
    {"shinglestream_finish", 3, setup_finish, run_finish, state_finish, result_finish, NULL},
    {"family_new", 1, setup_none, run_family_new, obs_family, obs_family, NULL},
    {"family_new_scheme", 1, setup_none, run_family_new_scheme, obs_family, obs_family, NULL},
    {"family_sign_text", 3, setup_sign, run_sign_text, state_sign_text, state_sign_text, NULL},
    {"family_sign_batch", 6, setup_sign, run_sign_batch, state_sign_batch, result_sign_batch,
     NULL},
    {"sigmatrix_new", 1, setup_family, run_matrix_new, obs_mx, obs_mx, NULL},
    {"sigmatrix_append", 40, setup_matrix, run_append, obs_mx, result_append, NULL},
    {"sigmatrix_set_metadata", 3, setup_matrix, run_mx_set_metadata, obs_mx, obs_mx, NULL},
    {"sigmatrix_save", 1, setup_matrix_10, run_mx_save, obs_mx_file, obs_mx_file, NULL},
    {"sigmatrix_save_buffer", 1, setup_matrix_10, run_mx_save_buffer, obs_mx, result_mx_bytes,
     NULL},
    {"sigmatrix_load", 2, setup_mx_file, run_mx_load, obs_mx, obs_mx, NULL},
    {"sigmatrix_load_buffer", 2, setup_mx_file, run_mx_load_buffer, obs_mx, obs_mx, NULL},
    {"sigmatrix_map", 2, setup_mx_file, run_mx_map, obs_mx, obs_mx, NULL},
    {"pairs_from_matrix", 2, setup_matrix_ro, run_pairs_from_matrix, obs_mx_pairs,
     obs_mx_pairs, NULL},
    {"clusters_from_matrix", 2, setup_matrix_ro, run_clusters_from_matrix, obs_mx_clusters,
     obs_mx_clusters, NULL},
    {"index_new", 1, setup_family, run_index_new, obs_ix, obs_ix, NULL},
    {"index_insert", NDOCS + 24, setup_index_v, run_insert, obs_ix, obs_ix, NULL},
    {"index_remove", 24, setup_index_remove, run_remove, obs_ix, obs_ix, NULL},
    {"index_query", 8, setup_index_full, run_query, obs_ix, result_query, NULL},
    {"index_query_limited", 8, setup_index_full, run_query_limited, obs_ix, result_query,
     NULL},
    {"index_query_many", 3, setup_index_full, run_query_many, obs_ix, result_query_many, NULL},
    {"index_merge", 4, setup_merge, run_merge, obs_ix, obs_ix, NULL},
    {"index_insert_novel", 8, setup_index_full, run_insert_novel, obs_ix, result_insert_novel,
     NULL},
    {"filelock_new", 1, setup_none, run_filelock_new, obs_lock, obs_lock, NULL},
    {"file_save", 2, setup_file_save, run_file_save, obs_saved_file, obs_saved_file, NULL},
    {"pairs_from_index", 2, setup_index_full, run_index_pairs, obs_ix_pairs, obs_ix_pairs, NULL},
    {"clusters_from_index", 2, setup_index_full, run_index_clusters, obs_ix_clusters,
     obs_ix_clusters, NULL},
    {"index_set_metadata", 3, setup_index_full, run_ix_set_metadata, obs_ix, obs_ix, NULL},
    {"index_save", 1, setup_index_full, run_ix_save, obs_ix_file, obs_ix_file, NULL},
    {"index_save_buffer", 1, setup_index_full, run_ix_save_buffer, obs_ix, result_ix_bytes,
     NULL},
    {"index_load", 2, setup_ix_file, run_ix_load, obs_ix, obs_ix, NULL},
    {"index_load_buffer", 2, setup_ix_file, run_ix_load_buffer, obs_ix, obs_ix, NULL},
    {"index_save_mapped", 1, setup_index_full, run_ix_save_mapped, obs_ix_file, obs_ix_file,
     NULL},
    {"index_map", 2, setup_ix_file_mapped, run_ix_map, obs_ix, obs_ix, NULL},
    {"clusters_from_edges", 3, setup_none, run_clusters_from_edges, obs_cl, obs_cl, NULL},
};

/* ---- the sweep ---------------------------------------------------------------------- */

static long total_points, total_ops;

/* Runs one operation (one variant) with its Nth allocation failing, for
 * every N it reaches. Returns the number of failure points. */
static long sweep(const op *o, int v) {
    obs ref = {NULL, 0, 0}, before = {NULL, 0, 0}, after = {NULL, 0, 0};
    fx f;
    long n, points = 0;
    int rc;
    memset(&f, 0, sizeof f);
    f.v = v;
    o->setup(&f);
    rc = o->run(&f);
    if (rc != 0) TL_FAIL("%s/%d: fails without any allocation failure: %s", o->name, v,
                         minlsh_error_name(rc));
    o->result(&f, &ref);
    fx_free(&f);
    if (live() != 0) TL_FAIL("%s/%d: %ld allocations live after a clean run", o->name, v, live());
    for (n = 1; n <= 100000; n++) {
        memset(&f, 0, sizeof f);
        f.v = v;
        o->setup(&f);
        before.n = 0;
        o->state(&f, &before);
        fail_nth(n);
        rc = o->run(&f);
        fail_nth(0);
        if (failures_injected() == 0) {
            /* The call made fewer than n allocations: done. */
            after.n = 0;
            if (rc == 0) o->result(&f, &after);
            EXPECT_MSG(rc == 0 && obs_same(&ref, &after), "%s/%d: clean run differs", o->name,
                       v);
            fx_free(&f);
            break;
        }
        if (rc == 0) {
            /* The failure was absorbed (an optional allocation): the result
             * must be the same all the same. */
            after.n = 0;
            o->result(&f, &after);
            EXPECT_MSG(obs_same(&ref, &after), "%s/%d: allocation %ld failed, call succeeded "
                       "with a different result", o->name, v, n);
            fx_free(&f);
            continue;
        }
        points++;
        EXPECT_MSG(rc == MINLSH_E_NOMEM, "%s/%d: allocation %ld failed, call returned %s",
                   o->name, v, n, minlsh_error_name(rc));
        EXPECT_MSG(!f.bad_out, "%s/%d: allocation %ld: *out not NULL after failure", o->name,
                   v, n);
        after.n = 0;
        o->state(&f, &after);
        EXPECT_MSG(obs_same(&before, &after), "%s/%d: allocation %ld failed and the handle "
                   "changed", o->name, v, n);
        if (o->recover != NULL) o->recover(&f);
        /* Still usable: the same call now succeeds, with the same result. */
        rc = o->run(&f);
        after.n = 0;
        if (rc == 0) o->result(&f, &after);
        EXPECT_MSG(rc == 0 && obs_same(&ref, &after),
                   "%s/%d: after allocation %ld failed, the retry gave %s%s", o->name, v, n,
                   minlsh_error_name(rc), rc == 0 ? " and a different result" : "");
        fx_free(&f);
        EXPECT_MSG(live() == 0, "%s/%d: allocation %ld failed: %ld allocations leaked",
                   o->name, v, n, live());
    }
    if (n > 100000) TL_FAIL("%s/%d: no end to the allocations", o->name, v);
    if (live() != 0) TL_FAIL("%s/%d: %ld allocations leaked", o->name, v, live());
    free(ref.p);
    free(before.p);
    free(after.p);
    return points;
}

static void test_every_operation(void) {
    size_t i;
    int v;
    for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        long points = 0;
        for (v = 0; v < ops[i].variants; v++) points += sweep(&ops[i], v);
        printf("  %-24s %3d variant%s, %5ld failure points\n", ops[i].name, ops[i].variants,
               ops[i].variants == 1 ? " " : "s", points);
        total_points += points;
        total_ops++;
    }
}

/* minlsh_index_insert_many is documented to stop at the first document that
 * fails, keeping those before it: after MINLSH_E_NOMEM the index must hold
 * exactly the setup's documents plus the first *n_done of the batch, and
 * inserting the rest must give the index a clean run gives. */
static void test_insert_many(void) {
    uint64_t ids[40];
    uint32_t sigs[40 * K];
    obs ref = {NULL, 0, 0}, got = {NULL, 0, 0}, want = {NULL, 0, 0};
    long n, points = 0;
    size_t i, done;
    int rc, start;
    for (i = 0; i < 40; i++) {
        ids[i] = 5000 + i;
        sig_of(i + 2, sigs + i * K);
    }
    for (start = 0; start < 20; start += 7) {
        fx f;
        memset(&f, 0, sizeof f);
        f.fam = mk_family();
        f.ix = mk_index(f.fam, &AL, (size_t)start);
        EXPECT_OK(minlsh_index_insert_many(f.ix, ids, sigs, 40, K, &done));
        EXPECT_EQ_U64(done, 40);
        ref.n = 0;
        obs_index(&ref, f.ix);
        fx_free(&f);
        for (n = 1; n < 100000; n++) {
            minlsh_index *prefix;
            memset(&f, 0, sizeof f);
            f.fam = mk_family();
            f.ix = mk_index(f.fam, &AL, (size_t)start);
            done = 999;
            fail_nth(n);
            rc = minlsh_index_insert_many(f.ix, ids, sigs, 40, K, &done);
            fail_nth(0);
            if (failures_injected() == 0) {
                EXPECT_OK(rc);
                fx_free(&f);
                break;
            }
            if (rc == 0) { /* absorbed */
                got.n = 0;
                obs_index(&got, f.ix);
                EXPECT(obs_same(&ref, &got));
                fx_free(&f);
                continue;
            }
            points++;
            EXPECT_MSG(rc == MINLSH_E_NOMEM && done < 40, "insert_many: allocation %ld: %s, "
                       "%zu done", n, minlsh_error_name(rc), done);
            if (done >= 40) done = 0;
            /* exactly the prefix */
            prefix = mk_index(f.fam, NULL, (size_t)start);
            if (done > 0) EXPECT_OK(minlsh_index_insert_many(prefix, ids, sigs, done, K, NULL));
            got.n = 0;
            want.n = 0;
            obs_index(&got, f.ix);
            obs_index(&want, prefix);
            EXPECT_MSG(obs_same(&got, &want), "insert_many: allocation %ld failed after %zu "
                       "documents and the index is not the setup plus those", n, done);
            minlsh_index_free(prefix);
            /* the rest goes in */
            EXPECT_OK(minlsh_index_insert_many(f.ix, ids + done, sigs + done * K, 40 - done, K,
                                               NULL));
            got.n = 0;
            obs_index(&got, f.ix);
            EXPECT(obs_same(&ref, &got));
            fx_free(&f);
            EXPECT_MSG(live() == 0, "insert_many: allocation %ld: %ld allocations leaked", n,
                       live());
        }
    }
    printf("  %-24s %3d variants, %5ld failure points\n", "index_insert_many", 3, points);
    total_points += points;
    total_ops++;
    free(ref.p);
    free(got.p);
    free(want.p);
}

/* ---- the inventory: every public function is swept above or never allocates */

/* Public functions that never call an allocator (the getters and pure
 * functions). test_no_allocation checks the ones that take a handle. */
static const char *const never_allocate[] = {
    "band_keys", "clusters_count", "clusters_free", "clusters_copy_members", "default_key",
    "empty_value", "error_name", "family_copy_coefficients", "family_free", "family_k",
    "family_sign_delimited", "family_sign_tokens", "family_sign_token_array", /* the stack only
                                                        up to k = 1024 (tests/test_large_k.c) */
    "family_k_max", "family_seed", "family_sign", "family_update", "fingerprint_bytes",
    "index_bands", "index_config_id", "index_contains", "index_count", "index_free",
    "index_copy_signature", "index_copy_ids", "index_k", "index_copy_metadata", "index_rows", "index_seed",
    "jaccard_sorted", "key_bytes", "load_options_init", "novel_options_init", "filelock_free", "index_copy_stats", "pairs_count", "pairs_free", "pairs_copy_pair", "plan_areas",
    "plan_compute", "plan_options_init", "plan_probability", "plan_threshold", "prime",
    "shingle_k_max", "shinglestream_bytes", "shinglestream_free", "shinglestream_reset",
    "shingler_config_id", "shingler_flags", "shingler_free", "shingler_k",
    "shingler_options_init", "shingler_unit", "unicode_version", "shingleset_copy_hashes", "shingleset_count",
    "shingleset_view_hashes", "shingleset_free", "shingleset_jaccard", "sigmatrix_view_column",
    "sigmatrix_config_id", "sigmatrix_count", "sigmatrix_estimate", "sigmatrix_free",
    "sigmatrix_copy_column", "sigmatrix_k", "sigmatrix_copy_metadata", "sigmatrix_seed",
    "signature_estimate", "signature_is_empty", "signature_merge", "simd_kernel_name",
    "siphash24", "siphash24_128", "strerror", "version_number", "version_string",
    "signatures_band_keys", "sets_jaccard", "family_scheme", "sigmatrix_scheme", "index_scheme",
    "journal_bytes", "journal_records", "journal_compact_due", "journal_free", "journal_sync",
    "preset_count", "preset_get", "preset_find", /* a static table */
    "norm_flags_parse", "norm_flags_format",
    "jsonl_parse_line", "jsonl_parse_block", "json_string_decode", /* the caller's buffers */
};

static int listed(const char *name) {
    size_t i;
    for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].name, name) == 0) return 1;
    if (strcmp(name, "index_insert_many") == 0) return 1; /* test_insert_many */
    /* the dedup engine's calls: tests/test_dedup.c, test_allocation_failures */
    if (strncmp(name, "dedup_", 6) == 0 || strcmp(name, "pairs_from_dedup") == 0 ||
        strcmp(name, "clusters_from_dedup") == 0)
        return 1;
    /* a one-permutation family's whole signature past k = 1024:
     * tests/test_minhash.c, test_sign_prefix */
    if (strcmp(name, "family_sign_prefix") == 0) return 1;
    /* a streamed JSON Lines record: tests/test_jsonl.c, test_stream_nomem */
    if (strcmp(name, "jsonl_parse_stream") == 0) return 1;
    /* the pool: tests/test_pool.c, test_public_pool (only _new allocates) */
    if (strncmp(name, "pool_", 5) == 0) return 1;
    /* scratch files: tests/test_scratch.c, test_null_arguments_and_allocator
     * (only _open allocates) */
    if (strncmp(name, "scratch_", 8) == 0) return 1;
    /* the index journal: tests/test_journal.c, test_nomem */
    if (strcmp(name, "journal_open") == 0 || strcmp(name, "journal_append") == 0 ||
        strcmp(name, "journal_compact") == 0 ||
        strcmp(name, "journal_refresh") == 0) /* test_refresh */
        return 1;
    /* a store's metadata for an index: tests/test_store_meta.c, test_nomem */
    if (strcmp(name, "store_encode_metadata") == 0 || strcmp(name, "store_decode_metadata") == 0)
        return 1;
    /* the store: tests/test_store.c, test_nomem; the rest allocate nothing */
    if (strncmp(name, "store_", 6) == 0) {
        static const char *const store_fns[] = {
            "store_open", "store_begin", "store_add", "store_add_set", "store_query",
            "store_query_set", "store_remove", "store_remove_name", "store_sync",
            "store_commit", "store_refresh", "store_compact", "store_free",
            "store_options_init", "store_count", "store_threshold", "store_view_shingler",
            "store_find_name", "store_copy_name", "store_compact_due", "store_rollback",
            "store_add_signature", "store_query_signature", "store_candidates",
            "store_view_index", "store_key_matches", "store_copy_to", "store_set_lock_timeout"};
        for (i = 0; i < sizeof store_fns / sizeof store_fns[0]; i++)
            if (strcmp(store_fns[i], name) == 0) return 1;
        return 0;
    }
    /* the dedup stages: tests/test_stages.c, test_allocation_failures */
    if (strcmp(name, "family_sign_texts") == 0 || strcmp(name, "shingler_hash_texts") == 0 ||
        strcmp(name, "buckets_pair") == 0)
        return 1;
    for (i = 0; i < sizeof never_allocate / sizeof never_allocate[0]; i++)
        if (strcmp(never_allocate[i], name) == 0) return 1;
    return 0;
}

/* Every function declared in include/minlsh.h is either swept here or
 * listed as never allocating: a new public function fails this test until
 * it is put in one of the two lists. */
static void test_every_public_function_considered(void) {
    const char *dir = getenv("MINLSH_TEST_DIR");
    char path[4200], line[1024];
    FILE *f;
    int seen = 0;
    snprintf(path, sizeof path, "%s/../include/minlsh.h", dir != NULL ? dir : "tests");
    f = fopen(path, "r");
    if (f == NULL) {
        TL_FAIL("cannot read %s", path);
        return;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        char *q = strchr(line, '('), *p;
        if (strncmp(line, "MINLSH_API ", 11) != 0 || q == NULL) continue;
        for (p = q; p > line && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                 (p[-1] >= '0' && p[-1] <= '9'));
             p--)
            continue;
        *q = '\0';
        if (strncmp(p, "minlsh_", 7) != 0) continue;
        p += 7;
        seen++;
        EXPECT_MSG(listed(p), "minlsh_%s: add it to the sweep (ops[]) if it can allocate, "
                   "else to never_allocate[]", p);
    }
    fclose(f);
    EXPECT_MSG(seen > 100, "only %d functions found in %s", seen, path);
}

/* The handle-taking functions of never_allocate[] really never call the
 * allocator. */
static void test_no_allocation(void) {
    fx f;
    long before;
    uint32_t sig[K], sig2[K];
    uint64_t ids[NDOCS + 8], a[K], b[K], h[4] = {1, 2, 3, 4};
    double e;
    size_t n;
    uint8_t meta[16];
    minlsh_shingleset *set2 = NULL;
    memset(&f, 0, sizeof f);
    f.sh = mk_shingler(&AL, 2);
    f.fam = NULL;
    EXPECT_OK(minlsh_family_new(&f.fam, K, 3, &AL));
    EXPECT_OK(minlsh_shingleset_new(&f.set, &AL));
    EXPECT_OK(minlsh_shingleset_new(&set2, &AL));
    EXPECT_OK(minlsh_shingleset_assign(f.set, h, 4));
    EXPECT_OK(minlsh_shinglestream_new(&f.st, f.sh, &AL));
    EXPECT_OK(minlsh_shinglestream_feed(f.st, doc, 100));
    f.mx = mk_matrix(f.fam, &AL, 10);
    f.ix = mk_index(f.fam, &AL, 20);
    EXPECT_OK(minlsh_pairs_from_index(&f.pairs, f.ix, 0.0, 0, NULL));
    EXPECT_OK(minlsh_clusters_from_index(&f.cl, f.ix, 0.0, NULL));
    before = ta_calls(&ca);
    (void)minlsh_shingler_config_id(a, f.sh);
    (void)minlsh_shingler_k(f.sh);
    (void)minlsh_shingler_unit(f.sh);
    (void)minlsh_shingler_flags(f.sh);
    (void)minlsh_shingleset_copy_hashes(f.set, a, K, &n);
    (void)minlsh_shingleset_count(f.set);
    (void)minlsh_shingleset_view_hashes(f.set);
    (void)minlsh_shingleset_jaccard(&e, f.set, set2);
    (void)minlsh_shinglestream_bytes(f.st);
    (void)minlsh_shinglestream_reset(f.st);
    (void)minlsh_family_copy_coefficients(f.fam, a, b, K, &n);
    (void)minlsh_family_sign(f.fam, h, 4, sig, K, &n);
    (void)minlsh_family_update(f.fam, h, 4, sig, K);
    (void)minlsh_family_k(f.fam);
    (void)minlsh_family_seed(f.fam);
    (void)minlsh_sigmatrix_copy_column(f.mx, 1, sig2, K, &n);
    (void)minlsh_sigmatrix_view_column(f.mx, 2);
    (void)minlsh_sigmatrix_estimate(&e, f.mx, 1, 2);
    (void)minlsh_sigmatrix_copy_metadata(f.mx, meta, sizeof meta, &n);
    (void)minlsh_sigmatrix_count(f.mx);
    (void)minlsh_sigmatrix_k(f.mx);
    (void)minlsh_sigmatrix_seed(f.mx);
    (void)minlsh_sigmatrix_config_id(f.mx);
    {
        minlsh_index_stats ist;
        (void)minlsh_index_copy_stats(&ist, f.ix);
    }
    (void)minlsh_index_copy_signature(f.ix, 4, sig2, K, &n);
    (void)minlsh_index_copy_ids(f.ix, ids, NDOCS + 8, &n);
    (void)minlsh_index_contains(f.ix, 4);
    (void)minlsh_index_copy_metadata(f.ix, meta, sizeof meta, &n);
    (void)minlsh_index_count(f.ix);
    (void)minlsh_index_bands(f.ix);
    (void)minlsh_index_rows(f.ix);
    (void)minlsh_index_k(f.ix);
    (void)minlsh_index_seed(f.ix);
    (void)minlsh_index_config_id(f.ix);
    (void)minlsh_pairs_count(f.pairs);
    (void)minlsh_pairs_copy_pair(a, b, &e, f.pairs, 0);
    (void)minlsh_clusters_count(f.cl);
    (void)minlsh_clusters_copy_members(f.cl, 0, ids, NDOCS + 8, &n);
    EXPECT_EQ_INT(ta_calls(&ca) - before, 0);
    minlsh_shingleset_free(set2);
    fx_free(&f);
    EXPECT_EQ_INT(live(), 0);
}

/* A constructor that fails leaves nothing behind; checked above through
 * the allocator's count. Here: an allocator that fails everything makes
 * every constructor say MINLSH_E_NOMEM, and the library never calls free
 * with NULL or with memory it did not get from the allocator (ASan and the
 * count would see it). */
static void test_allocator_that_always_fails(void) {
    testalloc t;
    minlsh_allocator none = ta_allocator(&t);
    minlsh_shingler *sh = NULL;
    minlsh_shingleset *set = NULL;
    minlsh_family *fam = NULL, *f2 = NULL;
    minlsh_sigmatrix *m = NULL;
    minlsh_index *ix = NULL;
    minlsh_clusters *cl = NULL;
    ta_fail_from(&t, 1);
    EXPECT_ERR(minlsh_shingler_new(&sh, NULL, &none), MINLSH_E_NOMEM);
    EXPECT_ERR(minlsh_shingleset_new(&set, &none), MINLSH_E_NOMEM);
    EXPECT_ERR(minlsh_family_new(&fam, 4, 1, &none), MINLSH_E_NOMEM);
    EXPECT_OK(minlsh_family_new(&f2, 4, 1, NULL));
    EXPECT_ERR(minlsh_sigmatrix_new(&m, f2, 0, &none), MINLSH_E_NOMEM);
    EXPECT_ERR(minlsh_index_new(&ix, f2, 0, 2, 2, &none), MINLSH_E_NOMEM);
    EXPECT_ERR(minlsh_clusters_from_edges(&cl, edges_a, edges_b, 5, &none), MINLSH_E_NOMEM);
    EXPECT(sh == NULL && set == NULL && fam == NULL && m == NULL && ix == NULL && cl == NULL);
    EXPECT_MSG(ta_frees(&t) == 0, "free called %ld times although nothing was allocated",
               ta_frees(&t));
    minlsh_family_free(f2);
}

int main(void) {
    const char *dir = getenv("MINLSH_TEST_TMP");
    size_t i;
    uint64_t s = 3;
    snprintf(tmp_dir, sizeof tmp_dir, "%s", dir != NULL ? dir : "/tmp");
    snprintf(file_path, sizeof file_path, "%s/af.bin", tmp_dir);
    make_data();
    for (i = 0; i < sizeof long_doc; i++) {
        static const char letters[] = "abcdefgh ";
        long_doc[i] = letters[tl_rand(&s) % 9];
    }
    RUN(test_every_operation);
    RUN(test_insert_many);
    RUN(test_every_public_function_considered);
    RUN(test_no_allocation);
    RUN(test_allocator_that_always_fails);
    printf("alloc_fail: %ld allocation-failure points exercised across %ld operations\n",
           total_points, total_ops);
    remove(file_path);
    return TL_SUMMARY("alloc_fail");
}
