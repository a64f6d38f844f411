/*
 * Fuzz target: the shingler on arbitrary bytes, in every unit and every
 * combination of normalisation flags (HTML and stop words included), with
 * custom stop-word lists, keys and document-size limits.
 *
 * Input: a few bytes of configuration, then the document. Checked:
 *  - the one-shot call succeeds (or says MINLSH_E_TOOBIG exactly when the
 *    document is over the limit) and gives a strictly increasing set;
 *  - a stream fed the same bytes in arbitrary chunks (sizes 0 included)
 *    gives the same set and fingerprint, and is reusable after finish;
 *  - the fingerprint alone, and a second run, give the same answers;
 *  - minlsh_family_sign_text and minlsh_family_sign_batch equal
 *    minlsh_family_sign over the set;
 *  - case folding and whitespace collapsing are idempotent: with those flags
 *    (and no HTML, where entity names are case-sensitive), lower-casing the
 *    input or collapsing its whitespace first changes nothing;
 *  - with an allocator that fails one allocation (chosen by the input), a
 *    stream fed the document in chunks (all under 16 KiB) gives
 *    MINLSH_E_NOMEM from at most one call, which when repeated succeeds,
 *    and the document's set and fingerprint come out the same.
 */
#include "fuzz.h"
#include "../tests/testalloc.h"

static int fz_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

typedef struct result {
    int rc;
    minlsh_shingleset *set;
    uint8_t fp[MINLSH_FINGERPRINT_BYTES];
} result;

static void one_shot(const minlsh_shingler *sh, const uint8_t *text, size_t len,
                     result *r) {
    FUZZ_OK(minlsh_shingleset_new(&r->set, NULL));
    memset(r->fp, 0, sizeof r->fp);
    r->rc = minlsh_shingler_hash(sh, text, len, r->set, r->fp);
}

static int same_set(const minlsh_shingleset *a, const minlsh_shingleset *b) {
    size_t n = minlsh_shingleset_count(a);
    if (n != minlsh_shingleset_count(b)) return 0;
    return n == 0 || memcmp(minlsh_shingleset_view_hashes(a), minlsh_shingleset_view_hashes(b),
                            n * sizeof(uint64_t)) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    minlsh_shingler_options o;
    minlsh_shingler *sh = NULL;
    minlsh_shinglestream *st = NULL;
    minlsh_family *fam = NULL;
    result base, other;
    uint8_t key[16], opt_bits, fp2[MINLSH_FINGERPRINT_BYTES];
    uint64_t split_state, cfg1, cfg2;
    const uint8_t *text, *words = NULL;
    size_t len, words_len = 0, got, off, i, n;
    int rc, over;

    FUZZ_OK(minlsh_shingler_options_init(&o, MINLSH_SHINGLER_OPTIONS_VERSION));
    o.unit = fuzz_range(&in, MINLSH_UNIT_BYTE, MINLSH_UNIT_STOPWORD);
    {
        uint8_t kb = fuzz_u8(&in);
        o.k = (kb & 0x80) ? (uint32_t)(kb % 64) + 1 : (uint32_t)(kb % 6) + 1;
    }
    {
        /* the low bits are the ASCII flags, the high ones the Unicode flags */
        uint8_t fb = fuzz_u8(&in);
        o.flags = fb & MINLSH_NORM_ALL;
        if (fb & 0x10) o.flags |= MINLSH_NORM_NFKC;
        if (fb & 0x20) o.flags |= MINLSH_NORM_UCASEFOLD;
        if (fb & 0x40) o.flags |= MINLSH_NORM_UPUNCT | MINLSH_NORM_UWHITESPACE;
        if (fb & 0x80) o.flags |= MINLSH_NORM_DIGITS | MINLSH_NORM_CJK_WORDS;
    }
    opt_bits = fuzz_u8(&in);
    if (opt_bits & 1) {
        words = fuzz_bytes(&in, fuzz_u8(&in) % 64, &words_len);
        o.stopwords = (const char *)words;
        o.stopwords_len = words_len;
    }
    if (opt_bits & 2) o.max_document_bytes = (uint64_t)fuzz_range(&in, 0, 4096);
    if (opt_bits & 4) {
        const uint8_t *kp = fuzz_bytes(&in, 16, &got);
        memset(key, 0, sizeof key);
        memcpy(key, kp, got);
        o.key = key;
    }
    split_state = fuzz_u64(&in);
    text = fuzz_bytes(&in, in.n, &len);

    rc = minlsh_shingler_new(&sh, &o, NULL);
    if (rc == MINLSH_E_PARAM) {
        /* Only a stop-word list without a usable word is refused. */
        FUZZ_CHECK(o.stopwords != NULL && sh == NULL);
        return 0;
    }
    FUZZ_OK(rc);
    FUZZ_CHECK(minlsh_shingler_unit(sh) == o.unit && minlsh_shingler_k(sh) == o.k &&
               (minlsh_shingler_flags(sh) & ~(uint32_t)MINLSH_NORM_ALL) ==
                   (o.flags & ~(uint32_t)MINLSH_NORM_ALL) &&
               (minlsh_shingler_flags(sh) & o.flags) == o.flags);
    FUZZ_OK(minlsh_shingler_config_id(&cfg1, sh));

    over = o.max_document_bytes != 0 && len > o.max_document_bytes;
    one_shot(sh, text, len, &base);
    if (over) {
        FUZZ_CHECK(base.rc == MINLSH_E_TOOBIG);
        FUZZ_CHECK(minlsh_shingleset_count(base.set) == 0); /* set unchanged */
    } else {
        FUZZ_OK(base.rc);
        n = minlsh_shingleset_count(base.set);
        for (i = 1; i < n; i++)
            FUZZ_CHECK(minlsh_shingleset_view_hashes(base.set)[i - 1] <
                       minlsh_shingleset_view_hashes(base.set)[i]);
        if (len == 0) FUZZ_CHECK(n == 0);
    }

    /* The same document through a stream, in pseudo-random chunks. */
    FUZZ_OK(minlsh_shinglestream_new(&st, sh, NULL));
    FUZZ_OK(minlsh_shingleset_new(&other.set, NULL));
    rc = 0;
    for (off = 0; off < len && rc == 0;) {
        size_t chunk;
        split_state = split_state * UINT64_C(6364136223846793005) + 1442695040888963407u;
        chunk = (size_t)(split_state >> 33) % 67; /* 0 included */
        if (chunk > len - off) chunk = len - off;
        rc = minlsh_shinglestream_feed(st, text + off, chunk);
        if (rc == 0) off += chunk;
    }
    if (over) {
        FUZZ_CHECK(rc == MINLSH_E_TOOBIG);
        FUZZ_CHECK(minlsh_shinglestream_feed(st, "x", 1) == MINLSH_E_TOOBIG);
        FUZZ_CHECK(minlsh_shinglestream_finish(st, other.set, other.fp) ==
                   MINLSH_E_TOOBIG);
    } else {
        FUZZ_OK(rc);
        FUZZ_CHECK(minlsh_shinglestream_bytes(st) == len);
        FUZZ_OK(minlsh_shinglestream_finish(st, other.set, other.fp));
        FUZZ_CHECK(same_set(base.set, other.set));
        FUZZ_CHECK(memcmp(base.fp, other.fp, sizeof base.fp) == 0);
        /* Reused after finish, in one chunk. */
        FUZZ_OK(minlsh_shinglestream_feed(st, text, len));
        FUZZ_OK(minlsh_shinglestream_finish(st, other.set, fp2));
        FUZZ_CHECK(same_set(base.set, other.set));
        FUZZ_CHECK(memcmp(base.fp, fp2, sizeof fp2) == 0);
        /* The fingerprint alone, and validation alone. */
        memset(fp2, 0, sizeof fp2);
        FUZZ_OK(minlsh_shingler_hash(sh, text, len, NULL, fp2));
        FUZZ_CHECK(memcmp(base.fp, fp2, sizeof fp2) == 0);
        FUZZ_OK(minlsh_shingler_hash(sh, text, len, NULL, NULL));
    }
    minlsh_shinglestream_free(st);
    minlsh_shingleset_free(other.set);

    /* Signing straight from the text equals signing the set. */
    FUZZ_OK(minlsh_family_new(&fam, 16, split_state, NULL));
    {
        uint32_t s1[16], s2[16];
        size_t k_out = 0;
        rc = minlsh_family_sign_text(fam, sh, text, len, s1, 16, &k_out);
        if (over) {
            FUZZ_CHECK(rc == MINLSH_E_TOOBIG);
        } else {
            FUZZ_OK(rc);
            FUZZ_CHECK(k_out == 16);
            FUZZ_OK(minlsh_family_sign(fam, minlsh_shingleset_view_hashes(base.set),
                                       minlsh_shingleset_count(base.set), s2, 16, NULL));
            FUZZ_CHECK(memcmp(s1, s2, sizeof s1) == 0);
            FUZZ_CHECK(minlsh_signature_is_empty(s1, 16) ==
                       (minlsh_shingleset_count(base.set) == 0));
            {
                /* The batch signer gives the same signature. */
                const void *texts[1];
                int32_t status = 99;
                texts[0] = text;
                memset(s2, 0, sizeof s2);
                FUZZ_OK(minlsh_family_sign_batch(fam, sh, texts, &len, 1, 1, s2, 16, NULL, &status));
                FUZZ_CHECK(status == 0 && memcmp(s1, s2, sizeof s1) == 0);
            }
        }
    }
    minlsh_family_free(fam);

    /* Idempotence of the ASCII normalisations outside HTML. */
    if (!over && len > 0 && !(o.flags & MINLSH_NORM_HTML) &&
        (o.flags & (MINLSH_NORM_CASEFOLD | MINLSH_NORM_WHITESPACE))) {
        uint8_t *t2 = (uint8_t *)malloc(len);
        size_t m = 0;
        FUZZ_CHECK(t2 != NULL);
        for (i = 0; i < len; i++) {
            uint8_t c = text[i];
            if ((o.flags & MINLSH_NORM_CASEFOLD) && c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
            if ((o.flags & MINLSH_NORM_WHITESPACE) && fz_space(c)) {
                if (m > 0 && t2[m - 1] == ' ') continue; /* a run: one space */
                c = ' ';
            }
            t2[m++] = c;
        }
        one_shot(sh, t2, m, &other);
        FUZZ_OK(other.rc);
        FUZZ_CHECK(same_set(base.set, other.set));
        FUZZ_CHECK(memcmp(base.fp, other.fp, sizeof fp2) == 0);
        minlsh_shingleset_free(other.set);
        free(t2);
    }

    /* One allocation fails somewhere in a streamed run. */
    if (!over && (split_state & 0x100)) {
        testalloc ta;
        minlsh_allocator al = ta_allocator(&ta);
        minlsh_shingler *fs = NULL;
        minlsh_shinglestream *fst = NULL;
        int failures = 0;
        FUZZ_OK(minlsh_shingler_new(&fs, &o, &al));
        FUZZ_OK(minlsh_shingleset_new(&other.set, &al));
        FUZZ_OK(minlsh_shinglestream_new(&fst, fs, NULL));
        ta_fail_nth(&ta, 1 + (long)((split_state >> 12) % 24));
        for (off = 0; off < len;) {
            size_t chunk;
            split_state = split_state * UINT64_C(6364136223846793005) + 1442695040888963407u;
            chunk = (size_t)(split_state >> 33) % 300 + 1;
            if (chunk > len - off) chunk = len - off;
            rc = minlsh_shinglestream_feed(fst, text + off, chunk);
            if (rc == MINLSH_E_NOMEM) {
                failures++;
                rc = minlsh_shinglestream_feed(fst, text + off, chunk); /* unchanged: retry */
            }
            FUZZ_OK(rc);
            off += chunk;
        }
        rc = minlsh_shinglestream_finish(fst, other.set, other.fp);
        if (rc == MINLSH_E_NOMEM) {
            failures++;
            rc = minlsh_shinglestream_finish(fst, other.set, other.fp);
        }
        FUZZ_OK(rc);
        FUZZ_CHECK(failures <= 1);
        FUZZ_CHECK(same_set(base.set, other.set));
        FUZZ_CHECK(memcmp(base.fp, other.fp, sizeof base.fp) == 0);
        /* The one-shot call: NOMEM, or the same answer. */
        ta_fail_nth(&ta, 1 + (long)((split_state >> 20) % 8));
        rc = minlsh_shingler_hash(fs, text, len, other.set, other.fp);
        ta_fail_nth(&ta, 0);
        if (rc == 0) FUZZ_CHECK(same_set(base.set, other.set));
        else FUZZ_CHECK(rc == MINLSH_E_NOMEM && same_set(base.set, other.set)); /* unchanged */
        minlsh_shinglestream_free(fst);
        minlsh_shingleset_free(other.set);
        minlsh_shingler_free(fs);
        FUZZ_CHECK(ta_blocks(&ta) == 0 && ta_bad_frees(&ta) == 0);
    }

    /* A second shingler with the same options is the same shingler. */
    {
        minlsh_shingler *sh2 = NULL;
        FUZZ_OK(minlsh_shingler_new(&sh2, &o, NULL));
        FUZZ_OK(minlsh_shingler_config_id(&cfg2, sh2));
        FUZZ_CHECK(cfg1 == cfg2);
        one_shot(sh2, text, len, &other);
        FUZZ_CHECK(other.rc == base.rc && same_set(base.set, other.set));
        minlsh_shingleset_free(other.set);
        minlsh_shingler_free(sh2);
    }
    minlsh_shingleset_free(base.set);
    minlsh_shingler_free(sh);
    return 0;
}
