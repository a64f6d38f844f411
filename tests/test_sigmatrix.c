/* The signature matrix: append/get/estimate, save/load round trips (file and
 * buffer, bit-identical), the byte layout, and refusal of every damaged,
 * foreign or mismatched input; atomic saves; allocation failures. */
#define _POSIX_C_SOURCE 200809L
#include "testalloc.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "minlsh.h"
#include "common/common.h"

/* ---- helpers ---------------------------------------------------------------- */

/* A scratch directory of our own, emptied, so listings are meaningful. */
static const char *scratch_dir(void) {
    static char dir[4096];
    DIR *d;
    struct dirent *e;
    snprintf(dir, sizeof dir, "%s", tl_tmp_path("sigmatrix-test"));
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return dir;
    d = opendir(dir);
    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            char p[8192];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
        }
        closedir(d);
    }
    return dir;
}

/* Names in dir, sorted, joined by ' '. */
static void list_dir(const char *dir, char *out, size_t cap) {
    char names[64][256];
    int n = 0, i, j;
    DIR *d = opendir(dir);
    struct dirent *e;
    out[0] = '\0';
    if (d == NULL) {
        snprintf(out, cap, "<cannot open>");
        return;
    }
    while ((e = readdir(d)) != NULL && n < 64) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char t[256];
            memcpy(t, names[j], 256);
            memcpy(names[j], names[j - 1], 256);
            memcpy(names[j - 1], t, 256);
        }
    for (i = 0; i < n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", i ? " " : "", names[i]);
    }
}

static int write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    size_t w;
    if (f == NULL) return -1;
    w = fwrite(data, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long size;
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (uint8_t *)malloc((size_t)size + 1);
    *len = fread(buf, 1, (size_t)size, f);
    fclose(f);
    return buf;
}

/* A matrix of n signatures of k values made by signing random sets (one of
 * them empty, to carry the empty value through files). */
static minlsh_sigmatrix *make_matrix(const minlsh_family *f, uint64_t config_id,
                                     size_t n, uint64_t seed) {
    minlsh_sigmatrix *m = NULL;
    uint32_t k = minlsh_family_k(f);
    uint32_t *sig = (uint32_t *)malloc(k * sizeof *sig);
    uint64_t h[50];
    size_t d, i;
    if (minlsh_sigmatrix_new(&m, f, config_id, NULL) != 0) return NULL;
    for (d = 0; d < n; d++) {
        size_t nh = d == 1 ? 0 : 1 + (size_t)(tl_rand(&seed) % 50);
        for (i = 0; i < nh; i++) h[i] = tl_rand(&seed);
        minlsh_family_sign(f, h, nh, sig, k, NULL);
        minlsh_sigmatrix_append(m, sig, k, NULL);
    }
    free(sig);
    return m;
}

static int matrices_equal(const minlsh_sigmatrix *a, const minlsh_sigmatrix *b) {
    uint64_t i;
    if (minlsh_sigmatrix_count(a) != minlsh_sigmatrix_count(b) ||
        minlsh_sigmatrix_k(a) != minlsh_sigmatrix_k(b) ||
        minlsh_sigmatrix_seed(a) != minlsh_sigmatrix_seed(b) ||
        minlsh_sigmatrix_config_id(a) != minlsh_sigmatrix_config_id(b))
        return 0;
    for (i = 0; i < minlsh_sigmatrix_count(a); i++)
        if (memcmp(minlsh_sigmatrix_view_column(a, i), minlsh_sigmatrix_view_column(b, i),
                   minlsh_sigmatrix_k(a) * sizeof(uint32_t)) != 0)
            return 0;
    {
        char ma[256], mb[256];
        size_t la = 0, lb = 0;
        if (minlsh_sigmatrix_copy_metadata(a, ma, sizeof ma, &la) != 0 ||
            minlsh_sigmatrix_copy_metadata(b, mb, sizeof mb, &lb) != 0 || la != lb ||
            memcmp(ma, mb, la) != 0)
            return 0;
    }
    return 1;
}

/* Serialise m into a fresh exact-sized malloc block (so ASan sees overreads). */
static uint8_t *to_buffer(const minlsh_sigmatrix *m, size_t *len) {
    uint8_t *buf;
    size_t need = 0;
    if (minlsh_sigmatrix_save_buffer(m, NULL, 0, &need) != MINLSH_E_BUFSIZE) return NULL;
    buf = (uint8_t *)malloc(need);
    if (buf == NULL || minlsh_sigmatrix_save_buffer(m, buf, need, len) != 0 || *len != need) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Load from a copy of exactly len bytes. */
static int load_copy(minlsh_sigmatrix **out, const uint8_t *data, size_t len,
                     const minlsh_family *f, uint64_t config_id) {
    uint8_t *copy = (uint8_t *)malloc(len ? len : 1);
    int rc;
    if (len) memcpy(copy, data, len);
    rc = minlsh_sigmatrix_load_buffer(out, len ? copy : NULL, len, LOAD_OPTS(f, config_id, NULL));
    free(copy);
    return rc;
}

static void reseal_header(uint8_t *b) {
    minlsh__store64le(b + 56, minlsh__sum64(b, 56));
}

/* ---- in memory ----------------------------------------------------------------- */

static void test_append_get_estimate(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m = NULL;
    uint32_t sigs[100][16], got[16];
    uint64_t seed = 1, pos = 99;
    size_t d, i, n_out = 0;
    double est = -1, want = -2;
    EXPECT_OK(minlsh_family_new(&f, 16, 77, NULL));
    EXPECT_OK(minlsh_sigmatrix_new(&m, f, 0xABCDEF, NULL));
    EXPECT_EQ_U64(minlsh_sigmatrix_count(m), 0);
    EXPECT_EQ_INT(minlsh_sigmatrix_k(m), 16);
    EXPECT_EQ_U64(minlsh_sigmatrix_seed(m), 77);
    EXPECT_EQ_U64(minlsh_sigmatrix_config_id(m), 0xABCDEF);
    EXPECT(minlsh_sigmatrix_view_column(m, 0) == NULL);
    for (d = 0; d < 100; d++) {
        uint64_t h[20];
        for (i = 0; i < 20; i++) h[i] = d % 10 == 0 && i < 15 ? i : tl_rand(&seed);
        EXPECT_OK(minlsh_family_sign(f, h, 20, sigs[d], 16, NULL));
        EXPECT_OK(minlsh_sigmatrix_append(m, sigs[d], 16, &pos));
        EXPECT_EQ_U64(pos, d);
    }
    EXPECT_OK(minlsh_sigmatrix_append(m, sigs[0], 16, NULL));
    EXPECT_EQ_U64(minlsh_sigmatrix_count(m), 101);
    for (d = 0; d < 100; d++) {
        EXPECT_OK(minlsh_sigmatrix_copy_column(m, d, got, 16, &n_out));
        EXPECT_EQ_INT(n_out, 16);
        EXPECT(memcmp(got, sigs[d], sizeof got) == 0);
        EXPECT(memcmp(minlsh_sigmatrix_view_column(m, d), sigs[d], sizeof got) == 0);
    }
    /* Each document's values are contiguous, documents in order. */
    EXPECT(minlsh_sigmatrix_view_column(m, 1) == minlsh_sigmatrix_view_column(m, 0) + 16);
    EXPECT_OK(minlsh_sigmatrix_estimate(&est, m, 10, 20));
    EXPECT_OK(minlsh_signature_estimate(&want, sigs[10], sigs[20], 16));
    EXPECT_NEAR(est, want, 0);
    EXPECT(est > 0.3); /* 15 of 20 shingles shared */
    EXPECT_OK(minlsh_sigmatrix_estimate(&est, m, 0, 100));
    EXPECT_NEAR(est, 1.0, 0);
    EXPECT_ERR(minlsh_sigmatrix_estimate(&est, m, 0, 101), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_sigmatrix_estimate(&est, m, 101, 0), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_sigmatrix_copy_column(m, 101, got, 16, NULL), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_sigmatrix_copy_column(m, UINT64_MAX, got, 16, NULL), MINLSH_E_NOTFOUND);
    EXPECT(minlsh_sigmatrix_view_column(m, 101) == NULL);
    n_out = 0;
    EXPECT_ERR(minlsh_sigmatrix_copy_column(m, 3, got, 15, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 16);
    n_out = 0;
    EXPECT_ERR(minlsh_sigmatrix_copy_column(m, 3, NULL, 0, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 16);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(f);
}

static void test_errors(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m = NULL, *m2 = (minlsh_sigmatrix *)&m;
    minlsh_allocator bad = {NULL, NULL, NULL};
    uint32_t sig[8] = {0};
    uint8_t buf[16];
    size_t n_out;
    double est;
    EXPECT_OK(minlsh_family_new(&f, 8, 1, NULL));
    EXPECT_ERR(minlsh_sigmatrix_new(NULL, f, 0, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_new(&m2, NULL, 0, NULL), MINLSH_E_NULL);
    EXPECT(m2 == NULL);
    m2 = (minlsh_sigmatrix *)&m;
    EXPECT_ERR(minlsh_sigmatrix_new(&m2, f, 0, &bad), MINLSH_E_PARAM);
    EXPECT(m2 == NULL);
    EXPECT_OK(minlsh_sigmatrix_new(&m, f, 0, NULL));
    EXPECT_ERR(minlsh_sigmatrix_append(NULL, sig, 8, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_append(m, NULL, 8, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_append(m, sig, 7, NULL), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_sigmatrix_append(m, sig, 9, NULL), MINLSH_E_PARAM);
    EXPECT_EQ_U64(minlsh_sigmatrix_count(m), 0);
    EXPECT_OK(minlsh_sigmatrix_append(m, sig, 8, NULL));
    EXPECT_ERR(minlsh_sigmatrix_copy_column(NULL, 0, sig, 8, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_copy_column(m, 0, NULL, 8, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_estimate(NULL, m, 0, 0), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_estimate(&est, NULL, 0, 0), MINLSH_E_NULL);
    EXPECT(minlsh_sigmatrix_view_column(NULL, 0) == NULL);
    EXPECT_EQ_U64(minlsh_sigmatrix_count(NULL), 0);
    EXPECT_EQ_INT(minlsh_sigmatrix_k(NULL), 0);
    EXPECT_EQ_U64(minlsh_sigmatrix_seed(NULL), 0);
    EXPECT_EQ_U64(minlsh_sigmatrix_config_id(NULL), 0);
    EXPECT_ERR(minlsh_sigmatrix_save(NULL, tl_tmp_path("x")), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_save(m, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_save(m, ""), MINLSH_E_IO);
    EXPECT_ERR(minlsh_sigmatrix_save_buffer(NULL, buf, sizeof buf, &n_out), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_save_buffer(m, NULL, 16, &n_out), MINLSH_E_NULL);
    n_out = 0;
    EXPECT_ERR(minlsh_sigmatrix_save_buffer(m, buf, sizeof buf, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 64 + 32 + 16);
    EXPECT_ERR(minlsh_sigmatrix_save_buffer(m, buf, sizeof buf, NULL), MINLSH_E_BUFSIZE);
    m2 = (minlsh_sigmatrix *)&m;
    EXPECT_ERR(minlsh_sigmatrix_load(NULL, "x", NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_load(&m2, NULL, NULL), MINLSH_E_NULL);
    EXPECT(m2 == NULL);
    m2 = (minlsh_sigmatrix *)&m;
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(NULL, buf, 16, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(&m2, NULL, 16, NULL), MINLSH_E_NULL);
    EXPECT(m2 == NULL);
    EXPECT_ERR(minlsh_sigmatrix_load_buffer(&m2, NULL, 0, NULL), MINLSH_E_FORMAT);
    {
        /* Pointers before options, as for the index: a NULL buffer or path
         * is MINLSH_E_NULL whatever the options say. */
        minlsh_load_options bad_opts = MINLSH_LOAD_OPTIONS_INIT;
        bad_opts.version = 99;
        EXPECT_ERR(minlsh_sigmatrix_load_buffer(&m2, NULL, 16, &bad_opts), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_sigmatrix_load(&m2, NULL, &bad_opts), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_sigmatrix_load_buffer(&m2, buf, 16, &bad_opts), MINLSH_E_VERSION);
        EXPECT(m2 == NULL);
    }
    minlsh_sigmatrix_free(NULL);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(f);
}

/* ---- files ------------------------------------------------------------------------ */

static void test_layout(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m = NULL;
    uint8_t *b;
    size_t len = 0, d, i;
    EXPECT_OK(minlsh_family_new(&f, 5, UINT64_C(0x1122334455667788), NULL));
    m = make_matrix(f, UINT64_C(0x99AABBCCDDEEFF00), 3, 5);
    b = to_buffer(m, &len);
    EXPECT(b != NULL);
    if (b == NULL) return;
    EXPECT_EQ_INT(len, 64 + 3 * 5 * 4 + 8 + 8);
    EXPECT(memcmp(b, "MINLSHMX", 8) == 0);
    EXPECT_EQ_INT(minlsh__load32le(b + 8), 1);
    EXPECT_EQ_INT(minlsh__load32le(b + 12), 64);
    EXPECT_EQ_INT(minlsh__load32le(b + 16), 5);
    EXPECT_EQ_INT(minlsh__load32le(b + 20), 0);
    EXPECT_EQ_INT(minlsh__load32le(b + 24), 0);
    EXPECT_EQ_INT(minlsh__load32le(b + 28), 0);
    EXPECT_EQ_U64(minlsh__load64le(b + 32), UINT64_C(0x1122334455667788));
    EXPECT_EQ_U64(minlsh__load64le(b + 40), UINT64_C(0x99AABBCCDDEEFF00));
    EXPECT_EQ_U64(minlsh__load64le(b + 48), 3);
    EXPECT_EQ_U64(minlsh__load64le(b + 56), minlsh__sum64(b, 56));
    for (d = 0; d < 3; d++)
        for (i = 0; i < 5; i++)
            EXPECT_EQ_U64(minlsh__load32le(b + 64 + 4 * (d * 5 + i)),
                          minlsh_sigmatrix_view_column(m, d)[i]);
    /* Document 1 was the empty set. */
    EXPECT_EQ_U64(minlsh__load32le(b + 64 + 20), 0xFFFFFFFFu);
    EXPECT_EQ_U64(minlsh__load64le(b + 124), 0); /* no metadata */
    EXPECT_EQ_U64(minlsh__load64le(b + len - 8), minlsh__sum64(b + 64, 68));
    free(b);
    /* With metadata: its length, then its bytes, then the trailer over all. */
    EXPECT_OK(minlsh_sigmatrix_set_metadata(m, "hello", 5));
    b = to_buffer(m, &len);
    if (b == NULL) return;
    EXPECT_EQ_INT(len, 64 + 60 + 8 + 5 + 8);
    EXPECT_EQ_U64(minlsh__load64le(b + 124), 5);
    EXPECT(memcmp(b + 132, "hello", 5) == 0);
    EXPECT_EQ_U64(minlsh__load64le(b + len - 8), minlsh__sum64(b + 64, 60 + 8 + 5));
    free(b);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(f);
}

static void test_roundtrip(void) {
    static const uint32_t ks[] = {1, 7, 128, 1024};
    size_t t;
    for (t = 0; t < 4; t++) {
        minlsh_family *f = NULL;
        minlsh_sigmatrix *m, *m2 = NULL, *m3 = NULL, *m4 = NULL;
        uint8_t *b, *b2, *fb;
        size_t len = 0, len2 = 0, flen = 0;
        const char *path = tl_tmp_path("roundtrip.mx");
        EXPECT_OK(minlsh_family_new(&f, ks[t], 1000 + t, NULL));
        m = make_matrix(f, 42 + t, t == 3 ? 300 : 50, t);
        EXPECT(m != NULL);
        b = to_buffer(m, &len);
        EXPECT(b != NULL);
        EXPECT_OK(minlsh_sigmatrix_load_buffer(&m2, b, len, LOAD_OPTS(f, 42 + t, NULL)));
        EXPECT(m2 != NULL && matrices_equal(m, m2));
        b2 = to_buffer(m2, &len2);
        EXPECT(b2 != NULL && len2 == len && memcmp(b, b2, len) == 0);
        /* The file holds exactly the buffer's bytes. */
        EXPECT_OK(minlsh_sigmatrix_save(m, path));
        fb = read_file(path, &flen);
        EXPECT(fb != NULL && flen == len && memcmp(fb, b, len) == 0);
        EXPECT_OK(minlsh_sigmatrix_load(&m3, path, LOAD_OPTS(f, 42 + t, NULL)));
        EXPECT(m3 != NULL && matrices_equal(m, m3));
        /* Without a family anything valid loads, with the file's fingerprint. */
        EXPECT_OK(minlsh_sigmatrix_load(&m4, path, LOAD_OPTS(NULL, 12345, NULL)));
        EXPECT(m4 != NULL && matrices_equal(m, m4));
        EXPECT_EQ_U64(minlsh_sigmatrix_config_id(m4), 42 + t);
        /* A loaded matrix keeps growing. */
        if (m4 != NULL) {
            EXPECT_OK(minlsh_sigmatrix_append(m4, minlsh_sigmatrix_view_column(m, 0), ks[t], NULL));
            EXPECT_EQ_U64(minlsh_sigmatrix_count(m4), minlsh_sigmatrix_count(m) + 1);
        }
        free(b);
        free(b2);
        free(fb);
        minlsh_sigmatrix_free(m);
        minlsh_sigmatrix_free(m2);
        minlsh_sigmatrix_free(m3);
        minlsh_sigmatrix_free(m4);
        minlsh_family_free(f);
        remove(path);
    }
}

static void test_empty_matrix_roundtrip(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m = NULL, *m2 = NULL;
    uint8_t *b;
    size_t len = 0;
    uint32_t sig[3] = {1, 2, 3};
    EXPECT_OK(minlsh_family_new(&f, 3, 9, NULL));
    EXPECT_OK(minlsh_sigmatrix_new(&m, f, 0, NULL));
    b = to_buffer(m, &len);
    EXPECT_EQ_INT(len, 80);
    EXPECT_OK(load_copy(&m2, b, len, f, 0));
    EXPECT(m2 != NULL && matrices_equal(m, m2));
    EXPECT_EQ_U64(minlsh_sigmatrix_count(m2), 0);
    EXPECT_OK(minlsh_sigmatrix_append(m2, sig, 3, NULL));
    EXPECT_EQ_U64(minlsh_sigmatrix_count(m2), 1);
    free(b);
    minlsh_sigmatrix_free(m);
    minlsh_sigmatrix_free(m2);
    minlsh_family_free(f);
}

static void test_refuse_foreign_and_future(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m, *out = (minlsh_sigmatrix *)&f;
    uint8_t *b;
    size_t len = 0;
    EXPECT_OK(minlsh_family_new(&f, 4, 3, NULL));
    m = make_matrix(f, 0, 3, 1);
    b = to_buffer(m, &len);
    if (b == NULL) return;
    /* Another kind of minlsh file, or not minlsh at all. */
    memcpy(b, "MINLSHIX", 8);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_FORMAT);
    EXPECT(out == NULL);
    memcpy(b, "GIF89a..", 8);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_FORMAT);
    memcpy(b, "MINLSHMX", 8);
    reseal_header(b);
    /* A newer format version. */
    minlsh__store32le(b + 8, 2);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_FORMAT);
    minlsh__store32le(b + 8, 1);
    reseal_header(b);
    EXPECT_OK(load_copy(&out, b, len, NULL, 0));
    minlsh_sigmatrix_free(out);
    out = NULL;
    /* Fields a matrix file must not have, with a valid header checksum. */
    minlsh__store32le(b + 20, 1);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_CORRUPT);
    minlsh__store32le(b + 20, 0);
    minlsh__store32le(b + 24, 4);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_CORRUPT);
    minlsh__store32le(b + 24, 0);
    /* flags holds the scheme: 0 classic, 1 OPH (a mismatch, tests/test_oph.c),
     * anything else is damage. */
    minlsh__store32le(b + 28, 2);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_CORRUPT);
    minlsh__store32le(b + 28, 0x80000000u);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_CORRUPT);
    minlsh__store32le(b + 28, 0);
    minlsh__store32le(b + 12, 72);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_CORRUPT);
    minlsh__store32le(b + 12, 64);
    /* k out of range, or inconsistent with the length. */
    minlsh__store32le(b + 16, 0);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_CORRUPT);
    minlsh__store32le(b + 16, MINLSH_FAMILY_K_MAX + 1);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_CORRUPT);
    minlsh__store32le(b + 16, 2);
    reseal_header(b);
    EXPECT_ERR(load_copy(&out, b, len, NULL, 0), MINLSH_E_CORRUPT);
    minlsh__store32le(b + 16, 4);
    reseal_header(b);
    EXPECT_OK(load_copy(&out, b, len, f, 0));
    minlsh_sigmatrix_free(out);
    free(b);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(f);
}

static void test_every_truncation(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m;
    uint8_t *b;
    size_t len = 0, cut;
    long bad = 0;
    EXPECT_OK(minlsh_family_new(&f, 4, 3, NULL));
    m = make_matrix(f, 0, 3, 1);
    EXPECT_OK(minlsh_sigmatrix_set_metadata(m, "xyz", 3));
    b = to_buffer(m, &len);
    if (b == NULL) return;
    EXPECT_EQ_INT(len, 64 + 48 + 8 + 3 + 8);
    for (cut = 0; cut < len; cut++) {
        minlsh_sigmatrix *out = (minlsh_sigmatrix *)&f;
        int rc = load_copy(&out, b, cut, f, 0);
        /* An empty input is "not a matrix file"; every other prefix is a
         * truncated one. */
        int want = cut == 0 ? MINLSH_E_FORMAT : MINLSH_E_CORRUPT;
        if (rc != want || out != NULL) {
            if (bad++ < 5) TL_FAIL("truncated to %zu bytes: rc %d", cut, rc);
        }
    }
    EXPECT_EQ_INT(bad, 0);
    /* The same through a file. */
    {
        minlsh_sigmatrix *out = NULL;
        const char *path = tl_tmp_path("truncated.mx");
        EXPECT_EQ_INT(write_file(path, b, 100), 0);
        EXPECT_ERR(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 0, NULL)), MINLSH_E_CORRUPT);
        EXPECT(out == NULL);
        EXPECT_EQ_INT(write_file(path, b, 0), 0);
        EXPECT_ERR(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 0, NULL)), MINLSH_E_FORMAT);
        /* Trailing garbage is as bad as missing bytes. */
        {
            uint8_t *longer = (uint8_t *)malloc(len + 1);
            memcpy(longer, b, len);
            longer[len] = 0;
            EXPECT_ERR(load_copy(&out, longer, len + 1, f, 0), MINLSH_E_CORRUPT);
            free(longer);
        }
        remove(path);
    }
    free(b);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(f);
}

static void test_every_bit_flip(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m;
    uint8_t *b;
    size_t len = 0, bit;
    long accepted = 0, other = 0, n_format = 0, n_corrupt = 0;
    EXPECT_OK(minlsh_family_new(&f, 4, 3, NULL));
    m = make_matrix(f, 77, 3, 1);
    EXPECT_OK(minlsh_sigmatrix_set_metadata(m, "xyz", 3));
    b = to_buffer(m, &len);
    if (b == NULL) return;
    for (bit = 0; bit < 8 * len; bit++) {
        int pass;
        for (pass = 0; pass < 2; pass++) {
            minlsh_sigmatrix *out = (minlsh_sigmatrix *)&f;
            int rc;
            b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            /* With the family too: damage must be reported as damage, not
             * hidden behind MISMATCH. */
            rc = load_copy(&out, b, len, pass ? f : NULL, 77);
            b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            if (rc == 0) {
                if (accepted++ < 5) TL_FAIL("bit %zu flipped: accepted", bit);
                minlsh_sigmatrix_free(out);
            } else if (rc == MINLSH_E_FORMAT) {
                n_format++;
            } else if (rc == MINLSH_E_CORRUPT) {
                n_corrupt++;
            } else if (other++ < 5) {
                TL_FAIL("bit %zu flipped: rc %d", bit, rc);
            }
            if (rc != 0) EXPECT(out == NULL);
        }
    }
    EXPECT_EQ_INT(accepted, 0);
    EXPECT_EQ_INT(other, 0);
    EXPECT_EQ_INT(n_format, 2 * 64); /* the magic's 64 bits */
    EXPECT_EQ_INT(n_corrupt, 2 * (8 * (long)len - 64));
    free(b);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(f);
}

static void test_inflated_count(void) {
    static const uint64_t counts[] = {4, 1000, UINT64_C(1) << 30, UINT64_C(1) << 40,
                                      UINT64_C(1) << 62, UINT64_MAX / 16, UINT64_MAX};
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m;
    uint8_t *b;
    size_t len = 0, i;
    EXPECT_OK(minlsh_family_new(&f, 4, 3, NULL));
    m = make_matrix(f, 0, 3, 1);
    b = to_buffer(m, &len);
    if (b == NULL) return;
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        testalloc fa;
        minlsh_allocator al = ta_allocator(&fa);
        minlsh_sigmatrix *out = (minlsh_sigmatrix *)&f;
        const char *path = tl_tmp_path("inflated.mx");
        int rc;
        minlsh__store64le(b + 48, counts[i]);
        reseal_header(b);
        rc = minlsh_sigmatrix_load_buffer(&out, b, len, LOAD_OPTS(NULL, 0, &al));
        EXPECT_MSG(rc == MINLSH_E_CORRUPT || rc == MINLSH_E_TOOBIG, "count %" PRIu64 ": rc %d",
                   counts[i], rc);
        EXPECT(out == NULL);
        EXPECT_EQ_INT(ta_calls(&fa), 0); /* refused before allocating anything */
        /* Through a file: only the file itself is ever allocated. */
        EXPECT_EQ_INT(write_file(path, b, len), 0);
        rc = minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 0, &al));
        EXPECT_MSG(rc == MINLSH_E_CORRUPT || rc == MINLSH_E_TOOBIG, "file, count %" PRIu64
                   ": rc %d", counts[i], rc);
        EXPECT(ta_max_size(&fa) <= len);
        EXPECT_EQ_INT(ta_blocks(&fa), 0);
        remove(path);
    }
    /* The metadata length (covered by the payload checksum only) inflated. */
    minlsh__store64le(b + 48, 3);
    reseal_header(b);
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        testalloc fa;
        minlsh_allocator al = ta_allocator(&fa);
        minlsh_sigmatrix *out = (minlsh_sigmatrix *)&f;
        minlsh__store64le(b + 64 + 48, counts[i]);
        EXPECT_ERR(minlsh_sigmatrix_load_buffer(&out, b, len, LOAD_OPTS(NULL, 0, &al)), MINLSH_E_CORRUPT);
        EXPECT(out == NULL);
        EXPECT_EQ_INT(ta_calls(&fa), 0);
    }
    free(b);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(f);
}

static void test_mismatch(void) {
    minlsh_family *f = NULL, *f_k = NULL, *f_seed = NULL;
    minlsh_sigmatrix *m, *out = NULL;
    const char *path = tl_tmp_path("mismatch.mx");
    EXPECT_OK(minlsh_family_new(&f, 16, 5, NULL));
    EXPECT_OK(minlsh_family_new(&f_k, 17, 5, NULL));
    EXPECT_OK(minlsh_family_new(&f_seed, 16, 6, NULL));
    m = make_matrix(f, 1234, 10, 2);
    EXPECT_OK(minlsh_sigmatrix_save(m, path));
    out = (minlsh_sigmatrix *)&f;
    EXPECT_ERR(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f_k, 1234, NULL)), MINLSH_E_MISMATCH);
    EXPECT(out == NULL);
    EXPECT_ERR(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f_seed, 1234, NULL)), MINLSH_E_MISMATCH);
    EXPECT_ERR(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 1235, NULL)), MINLSH_E_MISMATCH);
    EXPECT_ERR(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 0, NULL)), MINLSH_E_MISMATCH);
    EXPECT(out == NULL);
    EXPECT_OK(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 1234, NULL)));
    minlsh_sigmatrix_free(out);
    remove(path);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(f);
    minlsh_family_free(f_k);
    minlsh_family_free(f_seed);
}

static void test_missing_file(void) {
    minlsh_sigmatrix *out = (minlsh_sigmatrix *)&out;
    EXPECT_ERR(minlsh_sigmatrix_load(&out, tl_tmp_path("no-such-file.mx"), NULL),
               MINLSH_E_IO);
    EXPECT(out == NULL);
    /* A directory is not a file. */
    EXPECT_ERR(minlsh_sigmatrix_load(&out, scratch_dir(), NULL), MINLSH_E_IO);
}

static void test_atomic_save(void) {
    const char *dir = scratch_dir();
    char path[4096], listing[4096], bad_path[4096];
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m1, *m2, *out = NULL;
    snprintf(path, sizeof path, "%s/m.mx", dir);
    snprintf(bad_path, sizeof bad_path, "%s/no-such-dir/m.mx", dir);
    EXPECT_OK(minlsh_family_new(&f, 32, 5, NULL));
    m1 = make_matrix(f, 1, 10, 3);
    m2 = make_matrix(f, 1, 25, 4);
    list_dir(dir, listing, sizeof listing);
    EXPECT_MSG(strcmp(listing, "") == 0, "scratch dir not empty: %s", listing);
    EXPECT_OK(minlsh_sigmatrix_save(m1, path));
    EXPECT_OK(minlsh_sigmatrix_save(m2, path));
    list_dir(dir, listing, sizeof listing);
    EXPECT_MSG(strcmp(listing, "m.mx") == 0, "after saving: %s", listing);
    EXPECT_OK(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 1, NULL)));
    EXPECT(out != NULL && matrices_equal(out, m2));
    minlsh_sigmatrix_free(out);
    /* Into a directory that does not exist: IO error, nothing created. */
    EXPECT_ERR(minlsh_sigmatrix_save(m1, bad_path), MINLSH_E_IO);
    list_dir(dir, listing, sizeof listing);
    EXPECT_MSG(strcmp(listing, "m.mx") == 0, "after failed save: %s", listing);
    /* A failed save leaves the old file alone (the target is a directory,
     * so the final rename fails after everything was written). */
    {
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/sub", dir);
        EXPECT_EQ_INT(mkdir(sub, 0777), 0);
        EXPECT_ERR(minlsh_sigmatrix_save(m1, sub), MINLSH_E_IO);
        list_dir(dir, listing, sizeof listing);
        EXPECT_MSG(strcmp(listing, "m.mx sub") == 0, "after failed rename: %s", listing);
        rmdir(sub);
    }
    out = NULL;
    EXPECT_OK(minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 1, NULL)));
    EXPECT(out != NULL && matrices_equal(out, m2));
    minlsh_sigmatrix_free(out);
    remove(path);
    minlsh_sigmatrix_free(m1);
    minlsh_sigmatrix_free(m2);
    minlsh_family_free(f);
}

static void test_metadata(void) {
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m = NULL, *m2 = NULL;
    static const char bin[7] = {'a', 0, 'b', '\n', (char)0xFF, 0, 'z'};
    char buf[64];
    uint8_t *b;
    size_t n_out = 99, len = 0;
    EXPECT_OK(minlsh_family_new(&f, 8, 4, NULL));
    m = make_matrix(f, 5, 4, 6);
    /* Empty by default; (NULL, 0) is a valid query. */
    EXPECT_OK(minlsh_sigmatrix_copy_metadata(m, NULL, 0, &n_out));
    EXPECT_EQ_INT(n_out, 0);
    EXPECT_OK(minlsh_sigmatrix_set_metadata(m, bin, sizeof bin));
    n_out = 0;
    EXPECT_ERR(minlsh_sigmatrix_copy_metadata(m, NULL, 0, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 7);
    EXPECT_ERR(minlsh_sigmatrix_copy_metadata(m, buf, 6, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_OK(minlsh_sigmatrix_copy_metadata(m, buf, sizeof buf, &n_out));
    EXPECT(n_out == 7 && memcmp(buf, bin, 7) == 0);
    EXPECT_ERR(minlsh_sigmatrix_copy_metadata(m, NULL, 7, NULL), MINLSH_E_NULL);
    /* Saved and loaded with the matrix, byte for byte. */
    b = to_buffer(m, &len);
    EXPECT_OK(minlsh_sigmatrix_load_buffer(&m2, b, len, LOAD_OPTS(f, 5, NULL)));
    EXPECT(m2 != NULL && matrices_equal(m, m2));
    free(b);
    /* Replacing and clearing. */
    EXPECT_OK(minlsh_sigmatrix_set_metadata(m, "two", 3));
    EXPECT_OK(minlsh_sigmatrix_copy_metadata(m, buf, sizeof buf, &n_out));
    EXPECT(n_out == 3 && memcmp(buf, "two", 3) == 0);
    EXPECT_OK(minlsh_sigmatrix_set_metadata(m, NULL, 0));
    EXPECT_OK(minlsh_sigmatrix_copy_metadata(m, NULL, 0, &n_out));
    EXPECT_EQ_INT(n_out, 0);
    /* Errors. */
    EXPECT_ERR(minlsh_sigmatrix_set_metadata(NULL, "x", 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_set_metadata(m, NULL, 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_copy_metadata(NULL, buf, sizeof buf, &n_out), MINLSH_E_NULL);
#if SIZE_MAX > 0xFFFFFFFFu
    /* Refused on the length alone: the bytes are never read. */
    EXPECT_ERR(minlsh_sigmatrix_set_metadata(m, "x", (size_t)UINT32_MAX + 1), MINLSH_E_TOOBIG);
#endif
    /* A failed allocation keeps the old metadata. */
    {
        testalloc fa;
        minlsh_allocator al = ta_allocator(&fa);
        minlsh_sigmatrix *m3 = NULL;
        EXPECT_OK(minlsh_sigmatrix_new(&m3, f, 0, &al));
        EXPECT_OK(minlsh_sigmatrix_set_metadata(m3, "old", 3));
        ta_fail_nth(&fa, 1);
        EXPECT_ERR(minlsh_sigmatrix_set_metadata(m3, "newer", 5), MINLSH_E_NOMEM);
        EXPECT_OK(minlsh_sigmatrix_copy_metadata(m3, buf, sizeof buf, &n_out));
        EXPECT(n_out == 3 && memcmp(buf, "old", 3) == 0);
        minlsh_sigmatrix_free(m3);
        EXPECT_EQ_INT(ta_blocks(&fa), 0);
    }
    minlsh_sigmatrix_free(m);
    minlsh_sigmatrix_free(m2);
    minlsh_family_free(f);
}

/* ---- allocation failures ---------------------------------------------------------- */

static void test_failing_allocator_append(void) {
    minlsh_family *f = NULL;
    uint32_t sig[64];
    long n;
    int done = 0;
    EXPECT_OK(minlsh_family_new(&f, 64, 5, NULL));
    for (n = 1; n < 100 && !done; n++) {
        testalloc fa;
        minlsh_allocator al = ta_allocator(&fa);
        minlsh_sigmatrix *m = (minlsh_sigmatrix *)&f;
        int rc;
        size_t d, i;
        ta_fail_nth(&fa, n);
        rc = minlsh_sigmatrix_new(&m, f, 0, &al);
        if (rc != 0) {
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            EXPECT(m == NULL);
            EXPECT_EQ_INT(ta_blocks(&fa), 0);
            continue;
        }
        done = 1;
        for (d = 0; d < 300; d++) {
            for (i = 0; i < 64; i++) sig[i] = (uint32_t)(d * 64 + i);
            rc = minlsh_sigmatrix_append(m, sig, 64, NULL);
            if (rc != 0) {
                uint64_t j;
                done = 0;
                EXPECT_ERR(rc, MINLSH_E_NOMEM);
                /* Unchanged: the same documents, intact. */
                EXPECT_EQ_U64(minlsh_sigmatrix_count(m), d);
                for (j = 0; j < d; j++)
                    EXPECT_EQ_U64(minlsh_sigmatrix_view_column(m, j)[63], j * 64 + 63);
                /* And still usable. */
                EXPECT_OK(minlsh_sigmatrix_append(m, sig, 64, NULL));
                EXPECT_EQ_U64(minlsh_sigmatrix_count(m), d + 1);
                break;
            }
        }
        minlsh_sigmatrix_free(m);
        EXPECT_EQ_INT(ta_blocks(&fa), 0);
    }
    EXPECT(done);
    EXPECT(n > 3); /* several growth steps failed on the way */
    minlsh_family_free(f);
}

static void test_failing_allocator_files(void) {
    const char *dir = scratch_dir();
    char path[4096], listing[4096];
    minlsh_family *f = NULL;
    minlsh_sigmatrix *m, *m_other;
    uint8_t *before, *after;
    size_t blen = 0, alen = 0;
    long n;
    int rc = -1;
    snprintf(path, sizeof path, "%s/f.mx", dir);
    EXPECT_OK(minlsh_family_new(&f, 16, 5, NULL));
    m = make_matrix(f, 0, 20, 8);
    EXPECT_OK(minlsh_sigmatrix_set_metadata(m, "names: a b c", 12));
    m_other = make_matrix(f, 0, 5, 9);
    EXPECT_OK(minlsh_sigmatrix_save(m_other, path));
    before = read_file(path, &blen);
    /* save: the writer allocates with the matrix's allocator, so save a
     * copy loaded with the failing allocator. */
    for (n = 1; n < 50 && rc != 0; n++) {
        testalloc fa;
        minlsh_allocator al = ta_allocator(&fa);
        minlsh_sigmatrix *mm = NULL;
        uint8_t *b;
        size_t len = 0;
        long base;
        b = to_buffer(m, &len);
        EXPECT_OK(minlsh_sigmatrix_load_buffer(&mm, b, len, LOAD_OPTS(f, 0, &al)));
        free(b);
        base = ta_calls(&fa);
        ta_fail_nth(&fa, n);
        rc = minlsh_sigmatrix_save(mm, path);
        list_dir(dir, listing, sizeof listing);
        EXPECT_MSG(strcmp(listing, "f.mx") == 0, "after save with failing alloc %ld: %s", n,
                   listing);
        if (rc != 0) {
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            /* Old content intact, unless only the final directory fsync
             * failed after the rename (then the new one is complete). */
            after = read_file(path, &alen);
            EXPECT(after != NULL && ((alen == blen && memcmp(after, before, blen) == 0) ||
                                     ta_calls(&fa) - base >= 4));
            free(after);
        }
        minlsh_sigmatrix_free(mm);
        EXPECT_EQ_INT(ta_blocks(&fa), 0);
    }
    EXPECT_EQ_INT(rc, 0);
    /* load from a file and from a buffer. */
    rc = -1;
    for (n = 1; n < 50 && rc != 0; n++) {
        testalloc fa;
        minlsh_allocator al = ta_allocator(&fa);
        minlsh_sigmatrix *out = (minlsh_sigmatrix *)&f;
        ta_fail_nth(&fa, n);
        rc = minlsh_sigmatrix_load(&out, path, LOAD_OPTS(f, 0, &al));
        if (rc != 0) {
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            EXPECT(out == NULL);
        } else {
            EXPECT(out != NULL && matrices_equal(out, m));
            minlsh_sigmatrix_free(out);
        }
        EXPECT_EQ_INT(ta_blocks(&fa), 0);
    }
    EXPECT_EQ_INT(rc, 0);
    EXPECT(n >= 4);
    free(before);
    remove(path);
    minlsh_sigmatrix_free(m);
    minlsh_sigmatrix_free(m_other);
    minlsh_family_free(f);
}

int main(void) {
    RUN(test_append_get_estimate);
    RUN(test_errors);
    RUN(test_layout);
    RUN(test_roundtrip);
    RUN(test_empty_matrix_roundtrip);
    RUN(test_refuse_foreign_and_future);
    RUN(test_every_truncation);
    RUN(test_every_bit_flip);
    RUN(test_inflated_count);
    RUN(test_mismatch);
    RUN(test_missing_file);
    RUN(test_atomic_save);
    RUN(test_metadata);
    RUN(test_failing_allocator_append);
    RUN(test_failing_allocator_files);
    return TL_SUMMARY("test_sigmatrix");
}
