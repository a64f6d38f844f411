/*
 * Fuzz target: signing pre-tokenized documents, the batch path of the
 * bindings (minlsh_family_sign_tokens and minlsh_family_sign_delimited).
 *
 * Input: a separator byte, k (1..64), a byte per document boundary rule,
 * then the bytes, split at the separator into tokens and the tokens into
 * up to 8 documents. Checked:
 *  - sign_delimited over the bytes equals sign_tokens over the same tokens
 *    packed with offsets (the word-at-a-time separator search never misses,
 *    adds or misplaces a separator, whatever the neighbouring bytes), and
 *    both equal minlsh_siphash24 + minlsh_family_update token by token;
 *  - a document without tokens has the empty signature;
 *  - claiming one token more or fewer than the separators allow is
 *    MINLSH_E_PARAM, and leaves the output untouched.
 */
#define MINLSH_EXPERIMENTAL_API
#include "fuzz.h"

#define MAXDOCS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t sep = fuzz_u8(&in);
    uint32_t k = 1 + fuzz_u8(&in) % 64;
    uint8_t rule = fuzz_u8(&in);
    const uint8_t *text = in.p;
    size_t len = in.n, n_tok = 1, i, t, d, pos, n_docs;
    size_t docs[MAXDOCS + 1], bad[MAXDOCS + 1];
    size_t *off;
    uint8_t *packed;
    uint32_t *a, *b, *ref;
    minlsh_family *fam = NULL;

    for (i = 0; i < len; i++) n_tok += text[i] == sep;
    if (len == 0) n_tok = rule & 1; /* no byte: no token, or one empty token */
    off = (size_t *)malloc((n_tok + 1) * sizeof *off);
    packed = (uint8_t *)malloc(len + 1);
    a = (uint32_t *)malloc((size_t)MAXDOCS * k * sizeof *a);
    b = (uint32_t *)malloc((size_t)MAXDOCS * k * sizeof *b);
    ref = (uint32_t *)malloc((size_t)k * sizeof *ref);
    FUZZ_CHECK(off && packed && a && b && ref);
    /* The tokens, packed without separators, with their offsets. */
    off[0] = 0;
    for (i = 0, t = 0, pos = 0; i < len; i++) {
        if (text[i] == sep) {
            off[++t] = pos;
        } else {
            packed[pos++] = text[i];
        }
    }
    if (n_tok > 0) off[n_tok] = pos;
    /* Up to 8 documents; the rule byte cuts the tokens into runs. */
    n_docs = 1 + rule % MAXDOCS;
    docs[0] = 0;
    for (d = 1; d <= n_docs; d++)
        docs[d] = d == n_docs ? n_tok : docs[d - 1] + (n_tok - docs[d - 1]) * (rule >> 4) / 16;

    FUZZ_OK(minlsh_family_new(&fam, k, rule, NULL));
    FUZZ_OK(minlsh_family_sign_tokens(fam, NULL, packed, off, n_tok, docs, n_docs, a,
                                      (size_t)n_docs * k, NULL));
    FUZZ_OK(minlsh_family_sign_delimited(fam, NULL, len ? text : NULL, len, sep, docs, n_docs,
                                         b, (size_t)n_docs * k, NULL));
    FUZZ_CHECK(memcmp(a, b, (size_t)n_docs * k * sizeof *a) == 0);
    for (d = 0; d < n_docs; d++) {
        for (i = 0; i < k; i++) ref[i] = MINLSH_EMPTY_VALUE;
        for (t = docs[d]; t < docs[d + 1]; t++) {
            uint64_t h;
            FUZZ_OK(minlsh_siphash24(&h, minlsh_default_key(), packed + off[t],
                                     off[t + 1] - off[t]));
            FUZZ_OK(minlsh_family_update(fam, &h, 1, ref, k));
        }
        FUZZ_CHECK(memcmp(ref, a + d * k, (size_t)k * sizeof *ref) == 0);
        if (docs[d] == docs[d + 1]) FUZZ_CHECK(minlsh_signature_is_empty(a + d * k, k) == 1);
    }
    /* One token more, and (when there is one) one fewer: refused. With no
     * byte at all, 0 tokens and 1 empty token are both right: skip. */
    memcpy(bad, docs, sizeof docs);
    memcpy(b, a, (size_t)n_docs * k * sizeof *a);
    if (len > 0) {
        bad[n_docs] = n_tok + 1;
        FUZZ_CHECK(minlsh_family_sign_delimited(fam, NULL, text, len, sep, bad, n_docs, b,
                                                (size_t)n_docs * k, NULL) == MINLSH_E_PARAM);
        if (bad[n_docs - 1] <= n_tok - 1) {
            bad[n_docs] = n_tok - 1;
            FUZZ_CHECK(minlsh_family_sign_delimited(fam, NULL, text, len, sep, bad, n_docs, b,
                                                    (size_t)n_docs * k,
                                                    NULL) == MINLSH_E_PARAM);
        }
    }
    FUZZ_CHECK(memcmp(a, b, (size_t)n_docs * k * sizeof *a) == 0);

    minlsh_family_free(fam);
    free(off);
    free(packed);
    free(a);
    free(b);
    free(ref);
    return 0;
}
