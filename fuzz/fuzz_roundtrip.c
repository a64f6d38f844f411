/*
 * Fuzz target: save-then-load round trips of matrices and indexes built
 * from the input (shape, seed, config id, signatures over a small alphabet so
 * that bands collide, ids, metadata), and damage to the saved bytes.
 *
 * Checked: load(save(x)) has the same content as x and saves to the same
 * bytes; a loaded index answers queries like the original; one flipped bit
 * anywhere, or any truncation, is refused with MINLSH_E_FORMAT or
 * MINLSH_E_CORRUPT (never accepted, never MINLSH_E_MISMATCH, even when a
 * family is given).
 */
#include "fuzz.h"

#define MAX_DOCS 48

static uint8_t *save_matrix(const minlsh_sigmatrix *m, size_t *len) {
    uint8_t *buf;
    FUZZ_CHECK(minlsh_sigmatrix_save_buffer(m, NULL, 0, len) == MINLSH_E_BUFSIZE);
    buf = (uint8_t *)malloc(*len);
    FUZZ_CHECK(buf != NULL);
    FUZZ_OK(minlsh_sigmatrix_save_buffer(m, buf, *len, NULL));
    return buf;
}

static uint8_t *save_index(const minlsh_index *ix, size_t *len) {
    uint8_t *buf;
    FUZZ_CHECK(minlsh_index_save_buffer(ix, NULL, 0, len) == MINLSH_E_BUFSIZE);
    buf = (uint8_t *)malloc(*len);
    FUZZ_CHECK(buf != NULL);
    FUZZ_OK(minlsh_index_save_buffer(ix, buf, *len, NULL));
    return buf;
}

static int damaged_status(int rc) { return rc == MINLSH_E_FORMAT || rc == MINLSH_E_CORRUPT; }

/* Damage buf (len bytes) as the input says and check both loaders refuse it. */
static void check_damage(fuzz_in *in, const uint8_t *buf, size_t len, int is_index,
                         const minlsh_family *fam, uint64_t config_id) {
    uint8_t *copy = (uint8_t *)malloc(len);
    size_t pos, cut;
    int bit, rc;
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, buf, len);
    pos = (size_t)fuzz_u32(in) % len;
    bit = fuzz_u8(in) & 7;
    copy[pos] ^= (uint8_t)(1u << bit);
    if (is_index) {
        minlsh_index *ix = NULL;
        rc = minlsh_index_load_buffer(&ix, copy, len, LOAD_OPTS(fam, config_id, NULL));
        FUZZ_CHECK(damaged_status(rc) && ix == NULL);
    } else {
        minlsh_sigmatrix *m = NULL;
        rc = minlsh_sigmatrix_load_buffer(&m, copy, len, LOAD_OPTS(fam, config_id, NULL));
        FUZZ_CHECK(damaged_status(rc) && m == NULL);
    }
    /* A truncated copy (exact-size allocation, so ASan sees any overread). */
    copy[pos] ^= (uint8_t)(1u << bit);
    cut = (size_t)fuzz_u32(in) % len;
    {
        uint8_t *t = (uint8_t *)malloc(cut > 0 ? cut : 1);
        FUZZ_CHECK(t != NULL);
        memcpy(t, copy, cut);
        if (is_index) {
            minlsh_index *ix = NULL;
            rc = minlsh_index_load_buffer(&ix, t, cut, LOAD_OPTS(fam, config_id, NULL));
            FUZZ_CHECK(damaged_status(rc) && ix == NULL);
        } else {
            minlsh_sigmatrix *m = NULL;
            rc = minlsh_sigmatrix_load_buffer(&m, t, cut, LOAD_OPTS(fam, config_id, NULL));
            FUZZ_CHECK(damaged_status(rc) && m == NULL);
        }
        free(t);
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    minlsh_family *fam = NULL;
    minlsh_sigmatrix *m = NULL, *m2 = NULL;
    minlsh_index *ix = NULL, *ix2 = NULL;
    uint32_t k, bands, rows, alphabet, d, v;
    uint64_t seed, config_id, ids[MAX_DOCS], pos;
    uint32_t sigs[MAX_DOCS][64];
    const uint8_t *meta;
    size_t meta_len, ndocs, len, len2, i;
    uint8_t *buf, *buf2;
    int rc;

    k = fuzz_range(&in, 1, 64);
    bands = fuzz_range(&in, 1, k);
    rows = fuzz_range(&in, 1, k / bands);
    seed = fuzz_u64(&in);
    config_id = fuzz_u8(&in) & 1 ? fuzz_u64(&in) : 0;
    alphabet = fuzz_u8(&in);
    ndocs = fuzz_range(&in, 0, MAX_DOCS);
    for (d = 0; d < ndocs; d++) {
        uint8_t kind = fuzz_u8(&in);
        ids[d] = (kind & 0x80) ? fuzz_u64(&in) : (uint64_t)fuzz_u8(&in);
        for (v = 0; v < k; v++) {
            if ((kind & 3) == 3) sigs[d][v] = MINLSH_EMPTY_VALUE; /* empty set */
            else if (alphabet < 8) sigs[d][v] = fuzz_u8(&in) % (alphabet + 1);
            else sigs[d][v] = fuzz_u32(&in);
        }
    }
    meta = fuzz_bytes(&in, fuzz_u8(&in), &meta_len);

    FUZZ_OK(minlsh_family_new(&fam, k, seed, NULL));

    /* ---- matrix ---- */
    FUZZ_OK(minlsh_sigmatrix_new(&m, fam, config_id, NULL));
    for (d = 0; d < ndocs; d++) {
        FUZZ_OK(minlsh_sigmatrix_append(m, sigs[d], k, &pos));
        FUZZ_CHECK(pos == d);
    }
    FUZZ_OK(minlsh_sigmatrix_set_metadata(m, meta, meta_len));
    buf = save_matrix(m, &len);
    FUZZ_CHECK(len == 64 + (size_t)ndocs * 4 * k + 8 + meta_len + 8);
    FUZZ_OK(minlsh_sigmatrix_load_buffer(&m2, buf, len, LOAD_OPTS(fam, config_id, NULL)));
    FUZZ_CHECK(minlsh_sigmatrix_count(m2) == ndocs && minlsh_sigmatrix_k(m2) == k &&
               minlsh_sigmatrix_seed(m2) == seed &&
               minlsh_sigmatrix_config_id(m2) == config_id);
    for (d = 0; d < ndocs; d++)
        FUZZ_CHECK(memcmp(minlsh_sigmatrix_view_column(m2, d), sigs[d], 4 * (size_t)k) == 0);
    {
        uint8_t mbuf[256];
        size_t mlen = 0;
        FUZZ_OK(minlsh_sigmatrix_copy_metadata(m2, mbuf, sizeof mbuf, &mlen));
        FUZZ_CHECK(mlen == meta_len && memcmp(mbuf, meta, meta_len) == 0);
    }
    buf2 = save_matrix(m2, &len2);
    FUZZ_CHECK(len2 == len && memcmp(buf, buf2, len) == 0);
    free(buf2);
    check_damage(&in, buf, len, 0, (in.n & 1) ? fam : NULL, config_id);
    free(buf);
    minlsh_sigmatrix_free(m2);
    minlsh_sigmatrix_free(m);

    /* ---- index ---- */
    FUZZ_OK(minlsh_index_new(&ix, fam, config_id, bands, rows, NULL));
    for (d = 0; d < ndocs; d++) {
        rc = minlsh_index_insert(ix, ids[d], sigs[d], k);
        FUZZ_CHECK(rc == 0 || rc == MINLSH_E_EXISTS);
    }
    FUZZ_OK(minlsh_index_set_metadata(ix, meta, meta_len));
    buf = save_index(ix, &len);
    FUZZ_CHECK(len == 64 + (size_t)minlsh_index_count(ix) * (8 + 4 * k) + 8 + meta_len + 8);
    FUZZ_OK(minlsh_index_load_buffer(&ix2, buf, len, LOAD_OPTS(fam, config_id, NULL)));
    FUZZ_CHECK(minlsh_index_count(ix2) == minlsh_index_count(ix) &&
               minlsh_index_bands(ix2) == bands && minlsh_index_rows(ix2) == rows);
    buf2 = save_index(ix2, &len2);
    FUZZ_CHECK(len2 == len && memcmp(buf, buf2, len) == 0);
    free(buf2);
    /* Queries agree between the original and the loaded copy. */
    for (d = 0; d < ndocs && d < 8; d++) {
        uint64_t c1[MAX_DOCS], c2[MAX_DOCS];
        double s1[MAX_DOCS], s2[MAX_DOCS];
        size_t n1 = 0, n2 = 0;
        FUZZ_OK(minlsh_index_query(ix, sigs[d], k, c1, s1, MAX_DOCS, &n1));
        FUZZ_OK(minlsh_index_query(ix2, sigs[d], k, c2, s2, MAX_DOCS, &n2));
        FUZZ_CHECK(n1 == n2);
        for (i = 0; i < n1; i++) FUZZ_CHECK(c1[i] == c2[i] && s1[i] == s2[i]);
    }
    check_damage(&in, buf, len, 1, (in.n & 1) ? fam : NULL, config_id);
    free(buf);
    minlsh_index_free(ix2);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
    return 0;
}
