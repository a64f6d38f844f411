/*
 * Fuzz target: the signature-matrix loader on arbitrary bytes.
 *
 * Input: one byte saying whether to repair the checksums (fuzz.h), then the
 * file. Every input is either refused with a documented status (never a crash,
 * never an allocation beyond what the input's length justifies), or loaded;
 * the file format is canonical, so a loaded matrix must save back to exactly
 * the input bytes. The load is repeated with a family (refusing a mismatch
 * or another scheme with MINLSH_E_MISMATCH, and accepting the file's own
 * parameters).
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_family_new_scheme, minlsh_sigmatrix_scheme */
#include "fuzz.h"

static int load_status_ok(int rc) {
    return rc == 0 || rc == MINLSH_E_FORMAT || rc == MINLSH_E_CORRUPT ||
           rc == MINLSH_E_TOOBIG || rc == MINLSH_E_MISMATCH || rc == MINLSH_E_NOMEM;
}

static void load_one(const uint8_t *data, size_t size) {
    minlsh_sigmatrix *m = NULL, *m2 = NULL;
    minlsh_family *fam = NULL;
    uint8_t *out;
    size_t need = 0, got = 0;
    uint64_t i, count;
    int rc = minlsh_sigmatrix_load_buffer(&m, data, size, NULL);
    FUZZ_CHECK(load_status_ok(rc) && rc != MINLSH_E_MISMATCH);
    if (rc != 0) {
        FUZZ_CHECK(m == NULL);
        return;
    }
    count = minlsh_sigmatrix_count(m);
    FUZZ_CHECK(minlsh_sigmatrix_k(m) >= 1 && minlsh_sigmatrix_k(m) <= MINLSH_FAMILY_K_MAX);
    /* Round trip: the exact bytes. */
    FUZZ_CHECK(minlsh_sigmatrix_save_buffer(m, NULL, 0, &need) == MINLSH_E_BUFSIZE);
    FUZZ_CHECK(need == size);
    out = (uint8_t *)malloc(need);
    FUZZ_CHECK(out != NULL);
    FUZZ_OK(minlsh_sigmatrix_save_buffer(m, out, need, &got));
    FUZZ_CHECK(got == size && memcmp(out, data, size) == 0);
    free(out);
    /* Every column readable; estimates in [0, 1]. */
    for (i = 0; i < count && i < 64; i++) {
        double e = -1;
        FUZZ_CHECK(minlsh_sigmatrix_view_column(m, i) != NULL);
        FUZZ_OK(minlsh_sigmatrix_estimate(&e, m, i, count - 1 - i));
        FUZZ_CHECK(e >= 0.0 && e <= 1.0);
    }
    FUZZ_CHECK(minlsh_sigmatrix_view_column(m, count) == NULL);
    /* With the file's own family it loads; with another it is refused. */
    FUZZ_OK(minlsh_family_new_scheme(&fam, minlsh_sigmatrix_k(m), minlsh_sigmatrix_seed(m),
                                     minlsh_sigmatrix_scheme(m), NULL));
    FUZZ_OK(minlsh_sigmatrix_load_buffer(&m2, data, size, LOAD_OPTS(fam, minlsh_sigmatrix_config_id(m), NULL)));
    minlsh_sigmatrix_free(m2);
    m2 = NULL;
    minlsh_family_free(fam);
    fam = NULL;
    /* The same k and seed under the other scheme is a different family. */
    FUZZ_OK(minlsh_family_new_scheme(&fam, minlsh_sigmatrix_k(m), minlsh_sigmatrix_seed(m),
                                     minlsh_sigmatrix_scheme(m) == MINLSH_SCHEME_OPH ? MINLSH_SCHEME_CLASSIC
                                                                                     : MINLSH_SCHEME_OPH,
                                     NULL));
    FUZZ_CHECK(minlsh_sigmatrix_load_buffer(&m2, data, size, LOAD_OPTS(fam, minlsh_sigmatrix_config_id(m), NULL)) ==
               MINLSH_E_MISMATCH);
    FUZZ_CHECK(m2 == NULL);
    FUZZ_CHECK(minlsh_sigmatrix_load_buffer(&m2, data, size, LOAD_OPTS(fam, minlsh_sigmatrix_config_id(m) ^ 1, NULL)) ==
               MINLSH_E_MISMATCH);
    FUZZ_CHECK(m2 == NULL);
    minlsh_family_free(fam);
    minlsh_sigmatrix_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf;
    size_t len;
    fuzz_file_input(data, size, &buf, &len);
    load_one(buf, len);
    free(buf);
    return 0;
}
