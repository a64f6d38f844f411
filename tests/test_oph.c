/* One-permutation hashing (MINLSH_SCHEME_OPH): the scheme as part of the
 * family, of matrix and index files and of merges; every signing path
 * giving the bits of minlsh_family_sign; and the estimator's accuracy and
 * the band index's S-curve against classic on the same pairs, with
 * tolerances from the statistics (tests/oph_accuracy.h; make bench-oph
 * prints the full table). The signatures themselves are pinned by
 * tests/golden/oph_signatures.txt (tests/test_minhash.c). */
#define _POSIX_C_SOURCE 200809L
#define MINLSH_EXPERIMENTAL_API 1
#include "testlib.h"

#include "minlsh.h"
#include "common/common.h"
#include "oph_accuracy.h"

static minlsh_family *family(uint32_t k, uint64_t seed, uint32_t scheme) {
    minlsh_family *f = NULL;
    EXPECT_OK(minlsh_family_new_scheme(&f, k, seed, scheme, NULL));
    return f;
}

static void test_family_scheme(void) {
    minlsh_family *f = NULL, *c = family(64, 3, MINLSH_SCHEME_CLASSIC), *o;
    uint64_t a1[64], a2[64];
    EXPECT_ERR(minlsh_family_new_scheme(&f, 64, 3, 2, NULL), MINLSH_E_PARAM);
    EXPECT(f == NULL);
    EXPECT_ERR(minlsh_family_new_scheme(&f, 0, 3, MINLSH_SCHEME_OPH, NULL), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_new_scheme(NULL, 64, 3, MINLSH_SCHEME_OPH, NULL), MINLSH_E_NULL);
    EXPECT_OK(minlsh_family_new(&f, 64, 3, NULL));
    EXPECT_EQ_INT(minlsh_family_scheme(f), MINLSH_SCHEME_CLASSIC);
    EXPECT_EQ_INT(minlsh_family_scheme(NULL), 0);
    o = family(64, 3, MINLSH_SCHEME_OPH);
    EXPECT_EQ_INT(minlsh_family_scheme(o), MINLSH_SCHEME_OPH);
    /* The same coefficients: the scheme changes how they are used. */
    EXPECT_OK(minlsh_family_copy_coefficients(c, a1, NULL, 64, NULL));
    EXPECT_OK(minlsh_family_copy_coefficients(o, a2, NULL, 64, NULL));
    EXPECT(memcmp(a1, a2, sizeof a1) == 0);
    minlsh_family_free(f);
    minlsh_family_free(c);
    minlsh_family_free(o);
}

/* Text, batch, texts, tokens and delimited signing all give the bits of
 * minlsh_family_sign of the shingler's set (or of the token hashes). */
static void test_signing_paths_agree(void) {
    static const char *texts[] = {
        "", "one", "two words", "a short document of a few words only",
        ("the quick brown fox jumps over the lazy dog and then runs far away into the "
         "woods where nobody will ever find it again, said the old man to the child"),
    };
    enum { N = sizeof texts / sizeof texts[0] };
    static const uint32_t ks[] = {1, 7, 64, 128, 1024};
    minlsh_shingler *sh = NULL;
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingleset *set = NULL;
    size_t lens[N], i, ki;
    so.k = 2;
    EXPECT_OK(minlsh_shingler_new(&sh, &so, NULL));
    EXPECT_OK(minlsh_shingleset_new(&set, NULL));
    for (i = 0; i < N; i++) lens[i] = strlen(texts[i]);
    for (ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        uint32_t k = ks[ki];
        minlsh_family *f = family(k, 11 + k, MINLSH_SCHEME_OPH);
        uint32_t *want = (uint32_t *)calloc((size_t)N * k, 4), *got = (uint32_t *)calloc((size_t)N * k, 4);
        uint8_t buf[1024];
        size_t off[N + 1], doc[N + 1], bytes = 0, t;
        for (i = 0; i < N; i++) {
            EXPECT_OK(minlsh_shingler_hash(sh, texts[i], lens[i], set, NULL));
            EXPECT_OK(minlsh_family_sign(f, minlsh_shingleset_view_hashes(set),
                                         minlsh_shingleset_count(set), want + i * k, k, NULL));
            EXPECT_OK(minlsh_family_sign_text(f, sh, texts[i], lens[i], got + i * k, k, NULL));
        }
        EXPECT(memcmp(want, got, (size_t)N * k * 4) == 0);
        memset(got, 0, (size_t)N * k * 4);
        EXPECT_OK(minlsh_family_sign_batch(f, sh, (const void *const *)texts, lens, N, 2, got,
                                           (size_t)N * k, NULL, NULL));
        EXPECT(memcmp(want, got, (size_t)N * k * 4) == 0);
        memset(got, 0, (size_t)N * k * 4);
        EXPECT_OK(minlsh_family_sign_texts(f, sh, (const void *const *)texts, lens, N, got,
                                           (size_t)N * k, NULL, NULL, NULL, NULL, NULL));
        EXPECT(memcmp(want, got, (size_t)N * k * 4) == 0);
        /* Tokens: each text's bytes as one token per document, and the same
         * joined with a separator. */
        for (i = 0, t = 0; i < N; i++) {
            off[i] = bytes;
            memcpy(buf + bytes, texts[i], lens[i]);
            bytes += lens[i];
            doc[i] = t++;
        }
        off[N] = bytes;
        doc[N] = t;
        EXPECT_OK(minlsh_family_sign_tokens(f, NULL, buf, off, N, doc, N, got, (size_t)N * k,
                                            NULL));
        for (i = 0; i < N; i++) {
            uint64_t h;
            uint32_t one[1024];
            EXPECT_OK(minlsh_siphash24(&h, minlsh_default_key(), texts[i], lens[i]));
            EXPECT_OK(minlsh_family_sign(f, &h, 1, one, k, NULL));
            EXPECT(memcmp(one, got + i * k, (size_t)k * 4) == 0);
        }
        minlsh_family_free(f);
        free(want);
        free(got);
    }
    minlsh_shingleset_free(set);
    minlsh_shingler_free(sh);
}

/* A random hash set's signature under both schemes. */
static void sign_random(const minlsh_family *f, uint64_t seed, size_t n, uint32_t *sig) {
    uint64_t h[300], s = seed;
    size_t i;
    for (i = 0; i < n && i < 300; i++) h[i] = tl_rand(&s);
    EXPECT_OK(minlsh_family_sign(f, h, n, sig, minlsh_family_k(f), NULL));
}

static void test_matrix_files(void) {
    minlsh_family *o = family(32, 5, MINLSH_SCHEME_OPH), *c = family(32, 5, MINLSH_SCHEME_CLASSIC);
    minlsh_sigmatrix *m = NULL, *back = NULL;
    uint32_t sig[32];
    uint8_t buf[4096];
    size_t n = 0;
    uint64_t sum;
    EXPECT_OK(minlsh_sigmatrix_new(&m, o, 77, NULL));
    EXPECT_EQ_INT(minlsh_sigmatrix_scheme(m), MINLSH_SCHEME_OPH);
    sign_random(o, 1, 100, sig);
    EXPECT_OK(minlsh_sigmatrix_append(m, sig, 32, NULL));
    EXPECT_OK(minlsh_sigmatrix_save_buffer(m, buf, sizeof buf, &n));
    EXPECT_EQ_U64(minlsh__load32le(buf + 28), MINLSH_SCHEME_OPH);
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(&back, buf, n, LOAD_OPTS(c, 77, NULL)),
               MINLSH_E_MISMATCH);
    EXPECT(back == NULL);
    EXPECT_OK(minlsh_sigmatrix_load_buffer(&back, buf, n, LOAD_OPTS(o, 77, NULL)));
    minlsh_sigmatrix_free(back);
    back = NULL;
    EXPECT_OK(minlsh_sigmatrix_load_buffer(&back, buf, n, NULL));
    EXPECT_EQ_INT(minlsh_sigmatrix_scheme(back), MINLSH_SCHEME_OPH);
    minlsh_sigmatrix_free(back);
    back = NULL;
    /* An unknown scheme in a file with a valid checksum is damage. */
    minlsh__store32le(buf + 28, 2);
    sum = minlsh__sum64(buf, 56);
    minlsh__store64le(buf + 56, sum);
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(&back, buf, n, NULL), MINLSH_E_CORRUPT);
    minlsh_sigmatrix_free(m);
    /* Classic files keep flags 0. */
    EXPECT_OK(minlsh_sigmatrix_new(&m, c, 77, NULL));
    EXPECT_OK(minlsh_sigmatrix_save_buffer(m, buf, sizeof buf, &n));
    EXPECT_EQ_U64(minlsh__load32le(buf + 28), 0);
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(&back, buf, n, LOAD_OPTS(o, 77, NULL)),
               MINLSH_E_MISMATCH);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(o);
    minlsh_family_free(c);
}

static void test_index_files_and_merge(void) {
    minlsh_family *o = family(64, 9, MINLSH_SCHEME_OPH), *c = family(64, 9, MINLSH_SCHEME_CLASSIC);
    minlsh_index *io = NULL, *io2 = NULL, *ic = NULL, *back = NULL;
    uint32_t sig[64];
    uint64_t ids[4];
    double sim[4];
    size_t n = 0, cap = 1 << 16;
    uint8_t *buf = (uint8_t *)malloc(cap);
    EXPECT_OK(minlsh_index_new(&io, o, 1, 8, 8, NULL));
    EXPECT_OK(minlsh_index_new(&io2, o, 1, 8, 8, NULL));
    EXPECT_OK(minlsh_index_new(&ic, c, 1, 8, 8, NULL));
    EXPECT_EQ_INT(minlsh_index_scheme(io), MINLSH_SCHEME_OPH);
    EXPECT_EQ_INT(minlsh_index_scheme(ic), MINLSH_SCHEME_CLASSIC);
    sign_random(o, 2, 200, sig);
    EXPECT_OK(minlsh_index_insert(io, 0, sig, 64));
    EXPECT_OK(minlsh_index_insert(io2, 0, sig, 64));
    EXPECT_OK(minlsh_index_query(io, sig, 64, ids, sim, 4, &n));
    EXPECT(n == 1 && ids[0] == 0 && sim[0] == 1.0);
    EXPECT_ERR(minlsh_index_merge(ic, io, 10), MINLSH_E_MISMATCH);
    EXPECT_OK(minlsh_index_merge(io, io2, 10));
    EXPECT_EQ_U64(minlsh_index_count(io), 2);
    EXPECT_OK(minlsh_index_save_buffer(io, buf, cap, &n));
    EXPECT_EQ_U64(minlsh__load32le(buf + 28), MINLSH_SCHEME_OPH);
    EXPECT_ERR(minlsh_index_load_buffer(&back, buf, n, LOAD_OPTS(c, 1, NULL)), MINLSH_E_MISMATCH);
    EXPECT_OK(minlsh_index_load_buffer(&back, buf, n, NULL));
    EXPECT_EQ_INT(minlsh_index_scheme(back), MINLSH_SCHEME_OPH);
    minlsh_index_free(back);
    back = NULL;
    EXPECT_OK(minlsh_index_load_buffer(&back, buf, n, LOAD_OPTS(o, 1, NULL)));
    minlsh_index_free(back);
    minlsh_index_free(io);
    minlsh_index_free(io2);
    minlsh_index_free(ic);
    minlsh_family_free(o);
    minlsh_family_free(c);
    free(buf);
}

/* The dedup engine signs with its family's scheme: its estimate of two
 * documents (signature verification) is the estimate of their OPH
 * signatures, which differs from the classic one. */
static void test_dedup_engine_uses_the_scheme(void) {
    static const char *texts[] = {
        "one two three four five six seven eight nine ten eleven twelve thirteen",
        "one two three four five six seven eight nine ten eleven twelve fourteen"};
    size_t lens[2] = {strlen(texts[0]), strlen(texts[1])};
    minlsh_shingler *sh = NULL;
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_dedup_options opts = MINLSH_DEDUP_OPTIONS_INIT;
    double est[ACC_SCHEMES] = {0};
    uint32_t s;
    so.k = 2;
    EXPECT_OK(minlsh_shingler_new(&sh, &so, NULL));
    opts.verify = MINLSH_VERIFY_SIGNATURE;
    opts.threshold = 0.5;
    opts.threads = 1;
    for (s = 0; s < ACC_SCHEMES; s++) {
        minlsh_family *f = family(64, 3, s);
        minlsh_dedup *d = NULL;
        uint32_t sig[2][64];
        double got = -1, want = -2;
        EXPECT_OK(minlsh_dedup_new(&d, sh, f, &opts, NULL));
        EXPECT_OK(minlsh_dedup_add_texts(d, (const void *const *)texts, lens, 2, NULL));
        EXPECT_OK(minlsh_dedup_run(d));
        EXPECT_OK(minlsh_dedup_estimate(&got, d, 0, 1));
        EXPECT_OK(minlsh_family_sign_text(f, sh, texts[0], lens[0], sig[0], 64, NULL));
        EXPECT_OK(minlsh_family_sign_text(f, sh, texts[1], lens[1], sig[1], 64, NULL));
        EXPECT_OK(minlsh_signature_estimate(&want, sig[0], sig[1], 64));
        EXPECT_MSG(got == want, "scheme %u: engine %g, signatures %g", (unsigned)s, got, want);
        est[s] = got;
        minlsh_dedup_free(d);
        minlsh_family_free(f);
    }
    /* Else the test could not tell the schemes apart. */
    EXPECT_MSG(est[0] != est[1], "classic %g, oph %g", est[0], est[1]);
    minlsh_shingler_free(sh);
}

/* Estimator accuracy at k = 128 on 3000 pairs per regime, both schemes on
 * the same pairs. The standard error of a bias over 3000 pairs is about
 * RMSE / 55 = 0.0007, so |bias| < 0.005 is seven of them; RMSE / theory has
 * a standard error of about 0.02. OPH is expected below theory on large
 * sets (sampling without replacement: about 1 - k / U) and a few percent
 * above it on sets smaller than k (densification copies values). */
static void test_estimator_accuracy(void) {
    acc_stats small[ACC_SCHEMES], large[ACC_SCHEMES];
    uint32_t s;
    EXPECT_OK(acc_measure(small, 128, 3000, 8, 127, 101));
    EXPECT_OK(acc_measure(large, 128, 3000, 1024, 2048, 202));
    for (s = 0; s < ACC_SCHEMES; s++) {
        printf("  %-7s k=128  unions 8..127: bias %+.5f RMSE %.5f (x%.3f theory)   "
               "1024..2048: bias %+.5f RMSE %.5f (x%.3f)\n",
               s == 0 ? "classic" : "oph", small[s].bias, small[s].rmse,
               small[s].rmse / small[s].theory, large[s].bias, large[s].rmse,
               large[s].rmse / large[s].theory);
        EXPECT(fabs(small[s].bias) < 0.005);
        EXPECT(fabs(large[s].bias) < 0.005);
    }
    EXPECT(small[0].rmse / small[0].theory > 0.9 && small[0].rmse / small[0].theory < 1.1);
    EXPECT(large[0].rmse / large[0].theory > 0.9 && large[0].rmse / large[0].theory < 1.1);
    EXPECT(small[1].rmse / small[1].theory > 0.95 && small[1].rmse / small[1].theory < 1.2);
    EXPECT(large[1].rmse / large[1].theory > 0.8 && large[1].rmse / large[1].theory < 1.03);
}

/* The band index's S-curve (k = 128, b = 18, r = 5) at J = 0.6 and 0.8 on
 * small and large sets: each scheme within four binomial standard errors
 * of the mean of 1 - (1 - J^r)^b over the pairs' exact J, plus 0.005 (near
 * J = 0.8 the binomial error all but vanishes, while the positions of one
 * band are not quite independent: a few candidates more or less are not a
 * defect). */
static void test_scurve(void) {
    static const double js[] = {0.6, 0.8};
    static const size_t lo[] = {40, 600}, hi[] = {100, 1000};
    size_t ji, ri;
    uint32_t s;
    for (ri = 0; ri < 2; ri++)
        for (ji = 0; ji < 2; ji++) {
            double got[ACC_SCHEMES], th, tol;
            EXPECT_OK(acc_scurve(got, &th, 128, 18, 5, js[ji], 2000, lo[ri], hi[ri], 31 + ji + 2 * ri));
            tol = 4 * sqrt(th * (1 - th) / 2000) + 0.005;
            printf("  J=%.1f unions %zu..%zu: theory %.4f classic %.4f oph %.4f (tolerance %.4f)\n",
                   js[ji], lo[ri], hi[ri], th, got[0], got[1], tol);
            for (s = 0; s < ACC_SCHEMES; s++) EXPECT(fabs(got[s] - th) <= tol);
        }
}

int main(void) {
    RUN(test_family_scheme);
    RUN(test_signing_paths_agree);
    RUN(test_matrix_files);
    RUN(test_index_files_and_merge);
    RUN(test_dedup_engine_uses_the_scheme);
    RUN(test_estimator_accuracy);
    RUN(test_scurve);
    return TL_SUMMARY("test_oph");
}
