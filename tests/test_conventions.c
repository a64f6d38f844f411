/*
 * The conventions of minlsh.h that span handles: one versioned load-options
 * struct for every loader, max_pairs wherever pairs are produced, an
 * allocator on every call that makes a handle, and outputs first where a call
 * computes scalars.
 */
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#include <stdio.h>

#define K 64
#define BANDS 16
#define ROWS 4

/* n documents in groups of `dup` identical signatures (the rest distinct). */
static void make_sigs(uint32_t *sigs, size_t n, size_t dup) {
    size_t i, v;
    for (i = 0; i < n; i++)
        for (v = 0; v < K; v++)
            sigs[i * K + v] = (uint32_t)((i / dup) * 7919u + v * 104729u + 1u);
}

static minlsh_index *make_index(const minlsh_family *fam, size_t n, size_t dup) {
    static uint32_t sigs[64 * K];
    minlsh_index *ix = NULL;
    size_t i;
    make_sigs(sigs, n, dup);
    EXPECT_OK(minlsh_index_new(&ix, fam, 9, BANDS, ROWS, NULL));
    for (i = 0; ix != NULL && i < n; i++) EXPECT_OK(minlsh_index_insert(ix, i, sigs + i * K, K));
    return ix;
}

static void test_load_options(void) {
    minlsh_family *fam = NULL, *other = NULL;
    minlsh_index *ix, *got = NULL;
    minlsh_sigmatrix *mx = NULL, *gm = NULL;
    minlsh_load_options o;
    static uint8_t buf[1 << 16], mbuf[1 << 16];
    size_t len = 0, mlen = 0;
    testalloc c;
    minlsh_allocator al = ta_allocator(&c);
    long before;
    uint32_t sig[K];

    EXPECT_OK(minlsh_family_new(&fam, K, 3, NULL));
    EXPECT_OK(minlsh_family_new(&other, K, 4, NULL));
    ix = make_index(fam, 8, 1);
    EXPECT_OK(minlsh_index_save_buffer(ix, buf, sizeof buf, &len));
    make_sigs(sig, 1, 1);
    EXPECT_OK(minlsh_sigmatrix_new(&mx, fam, 9, NULL));
    EXPECT_OK(minlsh_sigmatrix_append(mx, sig, K, NULL));
    EXPECT_OK(minlsh_sigmatrix_save_buffer(mx, mbuf, sizeof mbuf, &mlen));

    /* init gives the macro's defaults; unknown versions are refused */
    {
        minlsh_load_options m = MINLSH_LOAD_OPTIONS_INIT;
        memset(&o, 0xAB, sizeof o);
        EXPECT_OK(minlsh_load_options_init(&o, MINLSH_LOAD_OPTIONS_VERSION));
        EXPECT(o.version == m.version && o.reserved == 0 && o.family == NULL &&
               o.config_id == 0 && o.alloc == NULL);
        EXPECT_ERR(minlsh_load_options_init(&o, 2), MINLSH_E_VERSION);
        EXPECT_ERR(minlsh_load_options_init(&o, 0), MINLSH_E_VERSION);
        EXPECT_ERR(minlsh_load_options_init(NULL, 1), MINLSH_E_NULL);
    }

    /* NULL options: any valid file, malloc/free */
    EXPECT_OK(minlsh_index_load_buffer(&got, buf, len, NULL));
    EXPECT_EQ_U64(minlsh_index_count(got), 8);
    minlsh_index_free(got);
    got = NULL;
    EXPECT_OK(minlsh_sigmatrix_load_buffer(&gm, mbuf, mlen, NULL));
    EXPECT_EQ_U64(minlsh_sigmatrix_count(gm), 1);
    minlsh_sigmatrix_free(gm);
    gm = NULL;

    /* the family and config id are checked, by every loader alike */
    minlsh_load_options_init(&o, 1);
    o.family = fam;
    o.config_id = 9;
    EXPECT_OK(minlsh_index_load_buffer(&got, buf, len, &o));
    minlsh_index_free(got);
    got = NULL;
    EXPECT_OK(minlsh_sigmatrix_load_buffer(&gm, mbuf, mlen, &o));
    minlsh_sigmatrix_free(gm);
    gm = NULL;
    o.config_id = 10;
    EXPECT_ERR(minlsh_index_load_buffer(&got, buf, len, &o), MINLSH_E_MISMATCH);
    EXPECT(got == NULL);
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(&gm, mbuf, mlen, &o), MINLSH_E_MISMATCH);
    EXPECT(gm == NULL);
    o.config_id = 9;
    o.family = other;
    EXPECT_ERR(minlsh_index_load_buffer(&got, buf, len, &o), MINLSH_E_MISMATCH);
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(&gm, mbuf, mlen, &o), MINLSH_E_MISMATCH);
    /* config_id alone, without a family, checks nothing (documented) */
    o.family = NULL;
    o.config_id = 12345;
    EXPECT_OK(minlsh_index_load_buffer(&got, buf, len, &o));
    minlsh_index_free(got);
    got = NULL;

    /* a wrong version or a non-zero reserved field is refused before
     * anything is read, on every loader */
    minlsh_load_options_init(&o, 1);
    o.version = 2;
    EXPECT_ERR(minlsh_index_load_buffer(&got, buf, len, &o), MINLSH_E_VERSION);
    EXPECT_ERR(minlsh_index_load(&got, "/nonexistent/x", &o), MINLSH_E_VERSION);
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(&gm, mbuf, mlen, &o), MINLSH_E_VERSION);
    EXPECT_ERR(minlsh_sigmatrix_load(&gm, "/nonexistent/x", &o), MINLSH_E_VERSION);
    EXPECT_ERR(minlsh_sigmatrix_map(&gm, "/nonexistent/x", &o), MINLSH_E_VERSION);
    o.version = 1;
    o.reserved = 1;
    EXPECT_ERR(minlsh_index_load_buffer(&got, buf, len, &o), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_sigmatrix_map(&gm, "/nonexistent/x", &o), MINLSH_E_PARAM);
    EXPECT(got == NULL && gm == NULL);

    /* the allocator in the options becomes the handle's */
    minlsh_load_options_init(&o, 1);
    o.alloc = &al;
    before = ta_calls(&c);
    EXPECT_OK(minlsh_index_load_buffer(&got, buf, len, &o));
    EXPECT(ta_calls(&c) > before && ta_blocks(&c) > 0);
    minlsh_index_free(got);
    EXPECT_EQ_INT(ta_blocks(&c), 0);
    before = ta_calls(&c);
    EXPECT_OK(minlsh_sigmatrix_load_buffer(&gm, mbuf, mlen, &o));
    EXPECT(ta_calls(&c) > before);
    minlsh_sigmatrix_free(gm);
    EXPECT_EQ_INT(ta_blocks(&c), 0);

    minlsh_sigmatrix_free(mx);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
    minlsh_family_free(other);
}

static void test_max_pairs_from_index(void) {
    minlsh_family *fam = NULL;
    minlsh_index *ix;
    minlsh_pairs *p = NULL;
    size_t total;
    EXPECT_OK(minlsh_family_new(&fam, K, 3, NULL));
    /* 4 groups of 6 identical documents: 4 * 15 = 60 pairs */
    ix = make_index(fam, 24, 6);
    EXPECT_OK(minlsh_pairs_from_index(&p, ix, 0.0, 0, NULL));
    total = minlsh_pairs_count(p);
    EXPECT_EQ_U64(total, 60);
    minlsh_pairs_free(p);
    p = NULL;
    /* exactly the count passes; one fewer is refused with nothing built */
    EXPECT_OK(minlsh_pairs_from_index(&p, ix, 0.0, total, NULL));
    EXPECT_EQ_U64(minlsh_pairs_count(p), total);
    minlsh_pairs_free(p);
    p = NULL;
    EXPECT_ERR(minlsh_pairs_from_index(&p, ix, 0.0, total - 1, NULL), MINLSH_E_TOOBIG);
    EXPECT(p == NULL);
    EXPECT_ERR(minlsh_pairs_from_index(&p, ix, 0.0, 1, NULL), MINLSH_E_TOOBIG);
    EXPECT(p == NULL);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
}

static void test_allocator_on_every_maker(void) {
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    minlsh_shinglestream *st = NULL;
    minlsh_index *ix;
    minlsh_pairs *p = NULL;
    minlsh_clusters *cl = NULL;
    testalloc c;
    minlsh_allocator al = ta_allocator(&c);
    minlsh_allocator bad = {NULL, ta_free, &c};
    long before = ta_calls(&c);

    EXPECT_OK(minlsh_family_new(&fam, K, 3, NULL));
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, NULL));
    ix = make_index(fam, 12, 3);

    EXPECT_OK(minlsh_shinglestream_new(&st, sh, &al));
    EXPECT(ta_calls(&c) > before);
    EXPECT_OK(minlsh_shinglestream_feed(st, "the quick brown fox jumps over", 30));
    EXPECT_OK(minlsh_shinglestream_finish(st, NULL, NULL));
    minlsh_shinglestream_free(st);
    st = NULL;
    EXPECT_EQ_INT(ta_blocks(&c), 0);
    EXPECT_ERR(minlsh_shinglestream_new(&st, sh, &bad), MINLSH_E_PARAM);
    EXPECT(st == NULL);

    before = ta_calls(&c);
    EXPECT_OK(minlsh_pairs_from_index(&p, ix, 0.5, 0, &al));
    EXPECT(ta_calls(&c) > before && ta_blocks(&c) > 0);
    minlsh_pairs_free(p);
    p = NULL;
    EXPECT_EQ_INT(ta_blocks(&c), 0);
    EXPECT_ERR(minlsh_pairs_from_index(&p, ix, 0.5, 0, &bad), MINLSH_E_PARAM);

    before = ta_calls(&c);
    EXPECT_OK(minlsh_clusters_from_index(&cl, ix, 0.5, &al));
    EXPECT_EQ_U64(minlsh_clusters_count(cl), 4);
    EXPECT(ta_calls(&c) > before && ta_blocks(&c) > 0);
    minlsh_clusters_free(cl);
    cl = NULL;
    EXPECT_EQ_INT(ta_blocks(&c), 0);
    EXPECT_ERR(minlsh_clusters_from_index(&cl, ix, 0.5, &bad), MINLSH_E_PARAM);
    EXPECT(cl == NULL);

    minlsh_index_free(ix);
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
}

static void test_outputs_first(void) {
    minlsh_family *fam = NULL;
    minlsh_shingler *sh = NULL;
    minlsh_index *ix;
    minlsh_pairs *p = NULL;
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    uint64_t a = 0, b = 0, id = 0;
    double s = 0;
    uint32_t bands = 0, rows = 0;

    EXPECT_OK(minlsh_family_new(&fam, K, 3, NULL));
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, NULL));
    EXPECT_OK(minlsh_shingler_config_id(&id, sh));
    EXPECT(id != 0);
    EXPECT_ERR(minlsh_shingler_config_id(NULL, sh), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_shingler_config_id(&id, NULL), MINLSH_E_NULL);

    EXPECT_OK(minlsh_plan_compute(&bands, &rows, NULL, NULL, &po));
    EXPECT(bands >= 1 && rows >= 1 && bands * rows <= 128);

    ix = make_index(fam, 4, 2);
    EXPECT_OK(minlsh_pairs_from_index(&p, ix, 0.0, 0, NULL));
    EXPECT_EQ_U64(minlsh_pairs_count(p), 2);
    EXPECT_OK(minlsh_pairs_copy_pair(&a, &b, &s, p, 1));
    EXPECT_EQ_U64(a, 2);
    EXPECT_EQ_U64(b, 3);
    EXPECT(s == 1.0);
    EXPECT_ERR(minlsh_pairs_copy_pair(&a, &b, &s, p, 2), MINLSH_E_NOTFOUND);
    EXPECT_OK(minlsh_pairs_copy_pair(NULL, NULL, NULL, p, 0));
    minlsh_pairs_free(p);

    minlsh_index_free(ix);
    minlsh_shingler_free(sh);
    minlsh_family_free(fam);
}

int main(void) {
    RUN(test_load_options);
    RUN(test_max_pairs_from_index);
    RUN(test_allocator_on_every_maker);
    RUN(test_outputs_first);
    return TL_SUMMARY("conventions");
}
