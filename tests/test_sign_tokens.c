/*
 * minlsh_family_sign_tokens: the same bits as hashing every token with
 * minlsh_siphash24 and folding the hashes in with minlsh_family_update, for
 * many random documents (empty ones, empty tokens, long tokens, more tokens
 * than one chunk), with the default key and another key, and for a token
 * buffer whose offsets do not start at 0; pinned values for a small case;
 * every argument error, with the output left untouched. The same for
 * minlsh_family_sign_delimited (tokens joined with a separator byte),
 * against minlsh_family_sign_tokens.
 */
#define MINLSH_EXPERIMENTAL_API
#include "minlsh.h"
#include "testlib.h"

#define K 128
#define NDOC 200

/* The reference: one token at a time through the stable API. */
static void reference(const minlsh_family *fam, const uint8_t *key, const uint8_t *data,
                      const size_t *off, size_t first, size_t last, uint32_t *sig) {
    size_t t;
    size_t i;
    for (i = 0; i < K; i++) sig[i] = MINLSH_EMPTY_VALUE;
    for (t = first; t < last; t++) {
        uint64_t h = 0;
        EXPECT_OK(minlsh_siphash24(&h, key, data + off[t], off[t + 1] - off[t]));
        EXPECT_OK(minlsh_family_update(fam, &h, 1, sig, K));
    }
}

/* NDOC documents of 0..600 tokens of 0..40 random bytes each. */
static void check_random(const uint8_t *key, size_t base) {
    minlsh_family *fam = NULL;
    size_t cap_tok = NDOC * 600, cap_bytes = NDOC * 600 * 40 + base + 1;
    uint8_t *data = (uint8_t *)malloc(cap_bytes);
    size_t *off = (size_t *)malloc((cap_tok + 1) * sizeof *off);
    size_t docs[NDOC + 1];
    uint32_t *sigs = (uint32_t *)malloc((size_t)NDOC * K * sizeof *sigs);
    uint32_t ref[K];
    uint64_t st = 0x5eed + base;
    size_t d, t, n_tok = 0, pos = base, n_out = 0, mismatches = 0;
    if (!data || !off || !sigs) {
        TL_FAIL("out of memory");
        goto done;
    }
    EXPECT_OK(minlsh_family_new(&fam, K, 42, NULL));
    off[0] = pos;
    for (d = 0; d < NDOC; d++) {
        size_t nt = (size_t)(tl_rand(&st) % 601);
        if (d % 17 == 0) nt = 0;
        docs[d] = n_tok;
        for (t = 0; t < nt; t++) {
            size_t len = (size_t)(tl_rand(&st) % 41), b;
            if (t % 50 == 0) len = 0; /* an empty token is a token */
            for (b = 0; b < len; b++) data[pos + b] = (uint8_t)(tl_rand(&st) % 7 + 'a');
            pos += len;
            off[++n_tok] = pos;
        }
    }
    docs[NDOC] = n_tok;
    EXPECT_OK(minlsh_family_sign_tokens(fam, key, data, off, n_tok, docs, NDOC, sigs,
                                        (size_t)NDOC * K, &n_out));
    EXPECT_EQ_U64(n_out, (uint64_t)NDOC * K);
    for (d = 0; d < NDOC; d++) {
        reference(fam, key == NULL ? minlsh_default_key() : key, data, off, docs[d], docs[d + 1],
                  ref);
        if (memcmp(ref, sigs + d * K, sizeof ref) != 0) mismatches++;
        if (docs[d] == docs[d + 1]) EXPECT_EQ_INT(minlsh_signature_is_empty(sigs + d * K, K), 1);
    }
    EXPECT_EQ_U64(mismatches, 0);
done:
    minlsh_family_free(fam);
    free(data);
    free(off);
    free(sigs);
}

static void test_matches_per_token_default_key(void) { check_random(NULL, 0); }

static void test_matches_per_token_other_key_and_offset(void) {
    static const uint8_t key[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    check_random(key, 1234);
}

/* The key matters, and the pinned first values of a tiny case (seed 1):
 * document 0 = {"a", "b"}, document 1 = {"b", "a", "b"} (the same set),
 * document 2 = {""} (one empty token: not the empty set). The values are
 * those of the token-by-token path the tests above compare with. */
static void test_pinned(void) {
    static const uint8_t other[16] = {1};
    const char *data = "abbab";
    size_t off[] = {0, 1, 2, 3, 4, 5, 5};
    size_t docs[] = {0, 2, 5, 6};
    uint32_t sig[3 * K], sig2[3 * K];
    minlsh_family *fam = NULL;
    EXPECT_OK(minlsh_family_new(&fam, K, 1, NULL));
    EXPECT_OK(minlsh_family_sign_tokens(fam, NULL, data, off, 6, docs, 3, sig, 3 * K, NULL));
    EXPECT(memcmp(sig, sig + K, K * sizeof *sig) == 0);
    EXPECT_EQ_INT(minlsh_signature_is_empty(sig + 2 * K, K), 0);
    EXPECT_EQ_U64(sig[0], 0xa305f5c5u);
    EXPECT_EQ_U64(sig[1], 0x47f9ed48u);
    EXPECT_EQ_U64(sig[2 * K], 0x604ce86cu);
    EXPECT_OK(minlsh_family_sign_tokens(fam, other, data, off, 6, docs, 3, sig2, 3 * K, NULL));
    EXPECT(memcmp(sig, sig2, K * sizeof *sig) != 0);
    minlsh_family_free(fam);
}

static void test_errors(void) {
    minlsh_family *fam = NULL;
    const char *data = "abc";
    size_t off[] = {0, 1, 3};
    size_t bad_off[] = {0, 2, 1};
    size_t docs[] = {0, 2};
    size_t bad_docs[] = {0, 3};
    size_t down_docs[] = {0, 2, 1};
    size_t empty_off[] = {5, 5, 5};
    uint32_t sig[2 * K], before[2 * K];
    size_t n = 0, i;
    EXPECT_OK(minlsh_family_new(&fam, K, 1, NULL));
    for (i = 0; i < 2 * K; i++) sig[i] = before[i] = (uint32_t)i;
    EXPECT_ERR(minlsh_family_sign_tokens(NULL, NULL, data, off, 2, docs, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_tokens(fam, NULL, data, NULL, 2, docs, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_tokens(fam, NULL, data, off, 2, NULL, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_tokens(fam, NULL, NULL, off, 2, docs, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_tokens(fam, NULL, data, bad_off, 2, docs, 1, sig, K, NULL),
               MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_sign_tokens(fam, NULL, data, off, 2, bad_docs, 1, sig, K, NULL),
               MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_sign_tokens(fam, NULL, data, off, 2, down_docs, 2, sig, 2 * K, NULL),
               MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_sign_tokens(fam, NULL, data, off, 2, docs, 1, sig, K - 1, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, K);
    n = 0;
    EXPECT_ERR(minlsh_family_sign_tokens(fam, NULL, data, off, 2, docs, 1, NULL, 0, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, K);
    EXPECT(memcmp(sig, before, sizeof sig) == 0);
    /* No document at all: nothing to write, sigs may be NULL. */
    EXPECT_OK(minlsh_family_sign_tokens(fam, NULL, data, off, 2, docs, 0, NULL, 0, &n));
    EXPECT_EQ_U64(n, 0);
    /* Only empty tokens: data may be NULL. */
    EXPECT_OK(minlsh_family_sign_tokens(fam, NULL, NULL, empty_off, 2, docs, 1, sig, K, NULL));
    EXPECT_EQ_INT(minlsh_signature_is_empty(sig, K), 0);
    minlsh_family_free(fam);
}

/* Random documents joined with a separator: the same signatures as
 * minlsh_family_sign_tokens over the same tokens, including documents that
 * start after some unused tokens. Tokens up to max_len - 1 bytes, of any
 * byte value but sep when wide (the separator search works on 64-byte
 * blocks: tokens longer than one, runs of empty ones, and bytes with the
 * high bit set must all split exactly). */
static void delimited_matches_offsets(uint8_t sep, size_t max_len, int wide) {
    enum { ND = 100 };
    minlsh_family *fam = NULL;
    uint8_t *joined = (uint8_t *)malloc(ND * 300 * (max_len + 1) + 1);
    uint8_t *packed = (uint8_t *)malloc(ND * 300 * max_len + 1);
    size_t *off = (size_t *)malloc((ND * 300 + 1) * sizeof *off);
    size_t docs[ND + 1];
    uint32_t *a = (uint32_t *)malloc((size_t)ND * K * sizeof *a);
    uint32_t *b = (uint32_t *)malloc((size_t)ND * K * sizeof *b);
    uint64_t st = 77;
    size_t d, t, n_tok = 0, jl = 0, pl = 0;
    if (!joined || !packed || !off || !a || !b) {
        TL_FAIL("out of memory");
        goto done;
    }
    EXPECT_OK(minlsh_family_new(&fam, K, 9, NULL));
    off[0] = 0;
    for (d = 0; d < ND; d++) {
        size_t nt = d % 10 == 3 ? 0 : (size_t)(tl_rand(&st) % 300);
        docs[d] = n_tok;
        for (t = 0; t < nt; t++) {
            size_t len = (size_t)(tl_rand(&st) % (t % 7 == 0 || max_len < 21 ? max_len : 21)), i;
            if (n_tok > 0) joined[jl++] = sep;
            for (i = 0; i < len; i++) {
                uint8_t c = wide ? (uint8_t)(tl_rand(&st) % 255) : (uint8_t)(tl_rand(&st) % 26 + 'a');
                if (wide && c >= sep) c++; /* any byte but sep */
                joined[jl++] = c;
                packed[pl++] = c;
            }
            off[++n_tok] = pl;
        }
    }
    docs[ND] = n_tok;
    EXPECT_OK(minlsh_family_sign_tokens(fam, NULL, packed, off, n_tok, docs, ND, a, (size_t)ND * K,
                                        NULL));
    EXPECT_OK(minlsh_family_sign_delimited(fam, NULL, joined, jl, sep, docs, ND, b, (size_t)ND * K,
                                           NULL));
    EXPECT(memcmp(a, b, (size_t)ND * K * sizeof *a) == 0);
    /* Documents 10.. only: the tokens of 0..9 are skipped. */
    EXPECT_OK(minlsh_family_sign_delimited(fam, NULL, joined, jl, sep, docs + 10, ND - 10, b,
                                           (size_t)ND * K, NULL));
    EXPECT(memcmp(a + 10 * K, b, (size_t)(ND - 10) * K * sizeof *a) == 0);
done:
    minlsh_family_free(fam);
    free(joined);
    free(packed);
    free(off);
    free(a);
    free(b);
}

static void test_delimited_matches_offsets(void) {
    delimited_matches_offsets('\n', 21, 0);
    delimited_matches_offsets(0, 200, 1);
    delimited_matches_offsets(0xFF, 150, 1);
    delimited_matches_offsets(0x80, 1, 1); /* every token empty: only separators */
}

static void test_delimited_errors(void) {
    minlsh_family *fam = NULL;
    size_t two[] = {0, 2}, none[] = {0, 0}, one[] = {0, 1}, down[] = {0, 2, 1};
    uint32_t sig[2 * K], before[2 * K], empty_token[K];
    size_t n = 0, i;
    EXPECT_OK(minlsh_family_new(&fam, K, 1, NULL));
    for (i = 0; i < 2 * K; i++) sig[i] = before[i] = (uint32_t)i;
    EXPECT_ERR(minlsh_family_sign_delimited(NULL, NULL, "a,b", 3, ',', two, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, NULL, 3, ',', two, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, "a,b", 3, ',', NULL, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, "a,b", 3, 256, two, 1, sig, K, NULL),
               MINLSH_E_PARAM);
    /* Two tokens need exactly one separator. */
    EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, "a,b,c", 5, ',', two, 1, sig, K, NULL),
               MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, "ab", 2, ',', two, 1, sig, K, NULL),
               MINLSH_E_PARAM);
    /* No token is no byte. */
    EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, "a", 1, ',', none, 1, sig, K, NULL),
               MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, "a,b", 3, ',', down, 2, sig, 2 * K, NULL),
               MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, "a,b", 3, ',', two, 1, sig, K - 1, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, K);
    EXPECT(memcmp(sig, before, sizeof sig) == 0);
    /* An empty document, and one empty token (not the empty set). */
    EXPECT_OK(minlsh_family_sign_delimited(fam, NULL, NULL, 0, ',', none, 1, sig, K, NULL));
    EXPECT_EQ_INT(minlsh_signature_is_empty(sig, K), 1);
    EXPECT_OK(minlsh_family_sign_delimited(fam, NULL, "", 0, ',', one, 1, empty_token, K, NULL));
    EXPECT_EQ_INT(minlsh_signature_is_empty(empty_token, K), 0);
    {
        size_t off[] = {0, 0};
        EXPECT_OK(minlsh_family_sign_tokens(fam, NULL, "", off, 1, one, 1, sig, K, NULL));
        EXPECT(memcmp(sig, empty_token, sizeof empty_token) == 0);
    }
    minlsh_family_free(fam);
}

/* Tokens of arbitrary bytes around separators whose value is 0x00, 0x7F,
 * 0x80 or 0xFF: the word-at-a-time separator search must find exactly the
 * separator bytes, whatever the bytes next to them. */
static void test_delimited_any_separator_byte(void) {
    static const unsigned seps[] = {0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF};
    enum { NT = 3000 };
    minlsh_family *fam = NULL;
    uint8_t *joined = (uint8_t *)malloc(NT * 25);
    uint8_t *packed = (uint8_t *)malloc(NT * 25);
    size_t *off = (size_t *)malloc((NT + 1) * sizeof *off);
    uint32_t a[4 * K], b[4 * K];
    size_t docs[5] = {0, 1, 700, 2999, NT}, i;
    uint64_t st = 99;
    if (!joined || !packed || !off) {
        TL_FAIL("out of memory");
        goto done;
    }
    EXPECT_OK(minlsh_family_new(&fam, K, 3, NULL));
    for (i = 0; i < sizeof seps / sizeof seps[0]; i++) {
        uint8_t sep = (uint8_t)seps[i];
        size_t t, jl = 0, pl = 0;
        off[0] = 0;
        for (t = 0; t < NT; t++) {
            size_t len = (size_t)(tl_rand(&st) % 24), c;
            if (t > 0) joined[jl++] = sep;
            for (c = 0; c < len; c++) {
                uint8_t v = (uint8_t)tl_rand(&st);
                if (v == sep) v ^= 1; /* anything but the separator, 0x7F..0x81 included */
                joined[jl++] = v;
                packed[pl++] = v;
            }
            off[t + 1] = pl;
        }
        EXPECT_OK(minlsh_family_sign_tokens(fam, NULL, packed, off, NT, docs, 4, a, 4 * K, NULL));
        EXPECT_OK(
            minlsh_family_sign_delimited(fam, NULL, joined, jl, sep, docs, 4, b, 4 * K, NULL));
        EXPECT_MSG(memcmp(a, b, sizeof a) == 0, "separator 0x%02x", sep);
        /* Another byte as the separator: it does not occur n - 1 times. */
        EXPECT_ERR(minlsh_family_sign_delimited(fam, NULL, joined, jl, sep ^ 0x40u, docs, 4, b,
                                                4 * K, NULL),
                   MINLSH_E_PARAM);
    }
done:
    minlsh_family_free(fam);
    free(joined);
    free(packed);
    free(off);
}

/* minlsh_family_sign_token_array: every token copied to its own
 * allocation of exact size (so ASan sees any read past a token), in both
 * schemes; the same signatures as minlsh_family_sign_tokens over the
 * joined bytes, documents starting after unused tokens included. */
static void test_token_array_matches_offsets(void) {
    enum { ND = 150 };
    static const int schemes[] = {MINLSH_SCHEME_CLASSIC, MINLSH_SCHEME_OPH};
    size_t cap_tok = ND * 400, si;
    uint8_t *data = (uint8_t *)malloc(cap_tok * 40 + 1);
    size_t *off = (size_t *)malloc((cap_tok + 1) * sizeof *off);
    size_t *lens = (size_t *)malloc(cap_tok * sizeof *lens);
    void **toks = (void **)malloc(cap_tok * sizeof *toks);
    uint32_t *want = (uint32_t *)malloc((size_t)ND * K * sizeof *want);
    uint32_t *got = (uint32_t *)malloc((size_t)ND * K * sizeof *got);
    size_t docs[ND + 1], nt = 0, d, t, n_out = 0;
    uint64_t st = 0xa77a;
    off[0] = 0;
    docs[0] = 3; /* three tokens before the first document */
    for (t = 0; t < 3; t++) {
        data[off[t]] = (uint8_t)t;
        off[t + 1] = off[t] + 1;
    }
    nt = 3;
    for (d = 0; d < ND; d++) {
        size_t n = d % 7 == 0 ? 0 : (size_t)(tl_rand(&st) % 400);
        for (t = 0; t < n; t++, nt++) {
            size_t len = (size_t)(tl_rand(&st) % (d % 3 == 0 ? 40 : 16)), b;
            for (b = 0; b < len; b++) data[off[nt] + b] = (uint8_t)tl_rand(&st);
            off[nt + 1] = off[nt] + len;
        }
        docs[d + 1] = nt;
    }
    for (t = 0; t < nt; t++) {
        lens[t] = off[t + 1] - off[t];
        toks[t] = lens[t] > 0 ? malloc(lens[t]) : NULL;
        if (lens[t] > 0) memcpy(toks[t], data + off[t], lens[t]);
    }
    for (si = 0; si < 2; si++) {
        minlsh_family *fam = NULL;
        EXPECT_OK(minlsh_family_new_scheme(&fam, K, 9, schemes[si], NULL));
        EXPECT_OK(minlsh_family_sign_tokens(fam, NULL, data, off, nt, docs, ND, want,
                                            (size_t)ND * K, NULL));
        memset(got, 0, (size_t)ND * K * sizeof *got);
        EXPECT_OK(minlsh_family_sign_token_array(fam, NULL, (const void *const *)toks, lens, nt,
                                                 docs, ND, got, (size_t)ND * K, &n_out));
        EXPECT_EQ_U64(n_out, (size_t)ND * K);
        EXPECT_MSG(memcmp(want, got, (size_t)ND * K * sizeof *got) == 0,
                   "scheme %d: token array and offsets differ", schemes[si]);
        minlsh_family_free(fam);
    }
    for (t = 0; t < nt; t++) free(toks[t]);
    free(data);
    free(off);
    free(lens);
    free(toks);
    free(want);
    free(got);
}

static void test_token_array_errors(void) {
    minlsh_family *fam = NULL;
    const void *toks[] = {"ab", "c"};
    const void *null_tok[] = {"ab", NULL};
    size_t lens[] = {2, 1}, zero_lens[] = {2, 0};
    size_t docs[] = {0, 2}, bad_docs[] = {0, 3}, down_docs[] = {0, 2, 1};
    uint32_t sig[2 * K], before[2 * K];
    size_t n = 0, i;
    EXPECT_OK(minlsh_family_new(&fam, K, 1, NULL));
    for (i = 0; i < 2 * K; i++) sig[i] = before[i] = (uint32_t)i;
    EXPECT_ERR(minlsh_family_sign_token_array(NULL, NULL, toks, lens, 2, docs, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_token_array(fam, NULL, NULL, lens, 2, docs, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_token_array(fam, NULL, toks, NULL, 2, docs, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_token_array(fam, NULL, toks, lens, 2, NULL, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_token_array(fam, NULL, null_tok, lens, 2, docs, 1, sig, K, NULL),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_token_array(fam, NULL, toks, lens, 2, bad_docs, 1, sig, K, NULL),
               MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_sign_token_array(fam, NULL, toks, lens, 2, down_docs, 2, sig, 2 * K,
                                              NULL),
               MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_sign_token_array(fam, NULL, toks, lens, 2, docs, 1, sig, K - 1, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, K);
    EXPECT(memcmp(sig, before, sizeof sig) == 0);
    /* A NULL token is fine when it is empty, and so are no tokens at all. */
    EXPECT_OK(minlsh_family_sign_token_array(fam, NULL, null_tok, zero_lens, 2, docs, 1, sig, K,
                                             NULL));
    EXPECT_OK(minlsh_family_sign_token_array(fam, NULL, NULL, NULL, 0, docs, 0, NULL, 0, &n));
    EXPECT_EQ_U64(n, 0);
    minlsh_family_free(fam);
}

int main(void) {
    RUN(test_matches_per_token_default_key);
    RUN(test_matches_per_token_other_key_and_offset);
    RUN(test_pinned);
    RUN(test_errors);
    RUN(test_delimited_matches_offsets);
    RUN(test_delimited_errors);
    RUN(test_delimited_any_separator_byte);
    RUN(test_token_array_matches_offsets);
    RUN(test_token_array_errors);
    return TL_SUMMARY("sign_tokens");
}
