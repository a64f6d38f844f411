/* Saved files on disk (docs/robustness.md): the read-only mapping of a saved
 * matrix, validated like a load and unaffected when the file is replaced;
 * saves that fail half-way (file size limit) leave the old file and no
 * temporary. */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "testlib.h"

#include <minlsh.h>

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

static char *path_dup(const char *name) {
    const char *p = tl_tmp_path(name);
    char *s = (char *)malloc(strlen(p) + 1);
    if (s != NULL) strcpy(s, p);
    return s;
}

static int write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) return -1;
    if (len > 0 && fwrite(data, 1, len, f) != len) {
        fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;
    *len = 0;
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (uint8_t *)malloc(n > 0 ? (size_t)n : 1);
    if (buf != NULL && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf != NULL) *len = (size_t)n;
    return buf;
}

static uint8_t *matrix_bytes(const minlsh_sigmatrix *m, size_t *len) {
    uint8_t *buf;
    *len = 0;
    if (minlsh_sigmatrix_save_buffer(m, NULL, 0, len) != MINLSH_E_BUFSIZE) return NULL;
    buf = (uint8_t *)malloc(*len);
    if (buf != NULL && minlsh_sigmatrix_save_buffer(m, buf, *len, len) != 0) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

/* Files in the scratch directory whose name starts with prefix. */
static int count_files(const char *prefix) {
    const char *dir = getenv("MINLSH_TEST_TMP");
    DIR *d = opendir(dir != NULL ? dir : "/tmp");
    struct dirent *e;
    int n = 0;
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    closedir(d);
    return n;
}

/* A matrix of n documents of k values, with some metadata. */
static minlsh_sigmatrix *make_matrix(const minlsh_family *fam, uint64_t config_id,
                                     size_t n, uint64_t seed) {
    minlsh_sigmatrix *m = NULL;
    uint32_t k = minlsh_family_k(fam), *sig = (uint32_t *)malloc(k * sizeof *sig);
    size_t i, v;
    char meta[64];
    if (sig == NULL || minlsh_sigmatrix_new(&m, fam, config_id, NULL) != 0) {
        free(sig);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        for (v = 0; v < k; v++) sig[v] = (uint32_t)tl_rand(&seed);
        if (i == 1)
            for (v = 0; v < k; v++) sig[v] = MINLSH_EMPTY_VALUE;
        minlsh_sigmatrix_append(m, sig, k, NULL);
    }
    snprintf(meta, sizeof meta, "matrix of %zu documents\n", n);
    minlsh_sigmatrix_set_metadata(m, meta, strlen(meta));
    free(sig);
    return m;
}

/* ---- mapping ------------------------------------------------------------ */

static void test_map_roundtrip(void) {
    minlsh_family *fam = NULL;
    minlsh_sigmatrix *m, *mm = NULL;
    char *path = path_dup("map.mx"), *path2 = path_dup("map2.mx");
    uint8_t *want, *got, *again;
    uint32_t sig[32], before[32];
    size_t len, glen, alen, i, n = 0;
    char meta[64];
    EXPECT_OK(minlsh_family_new(&fam, 32, 5, NULL));
    m = make_matrix(fam, 77, 40, 1);
    EXPECT(m != NULL);
    want = matrix_bytes(m, &len);
    EXPECT_OK(minlsh_sigmatrix_save(m, path));
    EXPECT_OK(minlsh_sigmatrix_map(&mm, path, LOAD_OPTS(fam, 77, NULL)));
    EXPECT(mm != NULL);
    if (mm == NULL) goto out;
    EXPECT_EQ_U64(minlsh_sigmatrix_count(mm), 40);
    EXPECT_EQ_U64(minlsh_sigmatrix_k(mm), 32);
    EXPECT_EQ_U64(minlsh_sigmatrix_seed(mm), 5);
    EXPECT_EQ_U64(minlsh_sigmatrix_config_id(mm), 77);
    for (i = 0; i < 40; i++) {
        double e1 = -1, e2 = -2;
        EXPECT_OK(minlsh_sigmatrix_copy_column(mm, i, sig, 32, NULL));
        EXPECT(memcmp(sig, minlsh_sigmatrix_view_column(m, i), sizeof sig) == 0);
        EXPECT(memcmp(minlsh_sigmatrix_view_column(mm, i), sig, sizeof sig) == 0);
        EXPECT_OK(minlsh_sigmatrix_estimate(&e1, mm, i, 39 - i));
        EXPECT_OK(minlsh_sigmatrix_estimate(&e2, m, i, 39 - i));
        EXPECT(e1 == e2);
    }
    EXPECT(minlsh_sigmatrix_view_column(mm, 40) == NULL);
    EXPECT_ERR(minlsh_sigmatrix_copy_column(mm, 40, sig, 32, NULL), MINLSH_E_NOTFOUND);
    EXPECT_OK(minlsh_sigmatrix_copy_metadata(mm, meta, sizeof meta, &n));
    EXPECT(n == strlen("matrix of 40 documents\n") &&
           memcmp(meta, "matrix of 40 documents\n", n) == 0);
    /* Same bytes out, to a buffer and to a file. */
    got = matrix_bytes(mm, &glen);
    EXPECT(got != NULL && glen == len && memcmp(got, want, len) == 0);
    EXPECT_OK(minlsh_sigmatrix_save(mm, path2));
    again = read_file(path2, &alen);
    EXPECT(again != NULL && alen == len && memcmp(again, want, len) == 0);
    /* Read-only: modifications are refused and change nothing. */
    memcpy(before, minlsh_sigmatrix_view_column(mm, 0), sizeof before);
    EXPECT_ERR(minlsh_sigmatrix_append(mm, sig, 32, NULL), MINLSH_E_STATE);
    EXPECT_ERR(minlsh_sigmatrix_set_metadata(mm, "x", 1), MINLSH_E_STATE);
    EXPECT_ERR(minlsh_sigmatrix_set_metadata(mm, NULL, 0), MINLSH_E_STATE);
    EXPECT_ERR(minlsh_sigmatrix_append(mm, sig, 31, NULL), MINLSH_E_PARAM);
    EXPECT_EQ_U64(minlsh_sigmatrix_count(mm), 40);
    EXPECT(memcmp(before, minlsh_sigmatrix_view_column(mm, 0), sizeof before) == 0);
    free(got);
    got = matrix_bytes(mm, &glen);
    EXPECT(got != NULL && glen == len && memcmp(got, want, len) == 0);
    /* A load of the mapped file's bytes gives a writable equal matrix. */
    {
        minlsh_sigmatrix *l = NULL;
        EXPECT_OK(minlsh_sigmatrix_load(&l, path, NULL));
        EXPECT_OK(minlsh_sigmatrix_append(l, sig, 32, NULL));
        minlsh_sigmatrix_free(l);
    }
    free(got);
    free(again);
    minlsh_sigmatrix_free(mm);
out:
    free(want);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(fam);
    free(path);
    free(path2);
}

static void test_map_empty_matrix(void) {
    minlsh_family *fam = NULL;
    minlsh_sigmatrix *m = NULL, *mm = NULL;
    char *path = path_dup("map-empty.mx");
    size_t n = 99;
    EXPECT_OK(minlsh_family_new(&fam, 4, 1, NULL));
    EXPECT_OK(minlsh_sigmatrix_new(&m, fam, 0, NULL));
    EXPECT_OK(minlsh_sigmatrix_save(m, path));
    EXPECT_OK(minlsh_sigmatrix_map(&mm, path, NULL));
    EXPECT_EQ_U64(minlsh_sigmatrix_count(mm), 0);
    EXPECT(minlsh_sigmatrix_view_column(mm, 0) == NULL);
    EXPECT_OK(minlsh_sigmatrix_copy_metadata(mm, NULL, 0, &n));
    EXPECT_EQ_U64(n, 0);
    minlsh_sigmatrix_free(mm);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(fam);
    free(path);
}

/* Every truncation and a sample of bit flips of a saved file: map refuses
 * each with exactly the status load_buffer gives, and never crashes. */
static void test_map_refuses_damage(void) {
    minlsh_family *fam = NULL;
    minlsh_sigmatrix *m, *mm = NULL;
    char *path = path_dup("map-damaged.mx");
    uint8_t *want;
    size_t len, cut, i;
    uint64_t seed = 3;
    int rc1, rc2, mismatches = 0, accepted = 0;
    EXPECT_OK(minlsh_family_new(&fam, 8, 9, NULL));
    m = make_matrix(fam, 1, 12, 2);
    want = matrix_bytes(m, &len);
    EXPECT(want != NULL);
    if (want == NULL) return;
    for (cut = 0; cut < len; cut++) {
        minlsh_sigmatrix *lb = NULL;
        write_file(path, want, cut);
        rc1 = minlsh_sigmatrix_map(&mm, path, LOAD_OPTS(fam, 1, NULL));
        rc2 = minlsh_sigmatrix_load_buffer(&lb, want, cut, LOAD_OPTS(fam, 1, NULL));
        mismatches += rc1 != rc2;
        accepted += rc1 == 0;
        minlsh_sigmatrix_free(mm);
        minlsh_sigmatrix_free(lb);
        mm = NULL;
    }
    for (i = 0; i < 2000; i++) {
        size_t bit = (size_t)(tl_rand(&seed) % (len * 8));
        minlsh_sigmatrix *lb = NULL;
        want[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        write_file(path, want, len);
        rc1 = minlsh_sigmatrix_map(&mm, path, LOAD_OPTS(fam, 1, NULL));
        rc2 = minlsh_sigmatrix_load_buffer(&lb, want, len, LOAD_OPTS(fam, 1, NULL));
        mismatches += rc1 != rc2;
        accepted += rc1 == 0 || (rc1 != MINLSH_E_CORRUPT && rc1 != MINLSH_E_FORMAT);
        minlsh_sigmatrix_free(mm);
        minlsh_sigmatrix_free(lb);
        mm = NULL;
        want[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    EXPECT_EQ_INT(mismatches, 0);
    EXPECT_EQ_INT(accepted, 0);
    /* Intact, it maps; with another family or config id it is refused. */
    write_file(path, want, len);
    EXPECT_OK(minlsh_sigmatrix_map(&mm, path, LOAD_OPTS(fam, 1, NULL)));
    minlsh_sigmatrix_free(mm);
    EXPECT_ERR(minlsh_sigmatrix_map(&mm, path, LOAD_OPTS(fam, 2, NULL)), MINLSH_E_MISMATCH);
    EXPECT(mm == NULL);
    free(want);
    minlsh_sigmatrix_free(m);
    minlsh_family_free(fam);
    free(path);
}

static void test_map_errors(void) {
    minlsh_sigmatrix *mm = (minlsh_sigmatrix *)&mm;
    minlsh_allocator bad = {NULL, NULL, NULL};
    char *path = path_dup("map-missing.mx"), *dir = path_dup("map-dir");
    char *empty = path_dup("map-empty-file.mx"), *text = path_dup("map-text.mx");
    EXPECT_ERR(minlsh_sigmatrix_map(NULL, path, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_sigmatrix_map(&mm, NULL, NULL), MINLSH_E_NULL);
    EXPECT(mm == NULL);
    EXPECT_ERR(minlsh_sigmatrix_map(&mm, path, NULL), MINLSH_E_IO);
    EXPECT_ERR(minlsh_sigmatrix_map(&mm, "", NULL), MINLSH_E_IO);
    mkdir(dir, 0777);
    EXPECT_ERR(minlsh_sigmatrix_map(&mm, dir, NULL), MINLSH_E_IO);
    write_file(empty, "", 0);
    EXPECT_ERR(minlsh_sigmatrix_map(&mm, empty, NULL), MINLSH_E_FORMAT);
    write_file(text, "hello, world: not a matrix file at all.........................."
               "...............", 80);
    EXPECT_ERR(minlsh_sigmatrix_map(&mm, text, NULL), MINLSH_E_FORMAT);
    EXPECT_ERR(minlsh_sigmatrix_map(&mm, text, LOAD_OPTS(NULL, 0, &bad)), MINLSH_E_PARAM);
    EXPECT(mm == NULL);
    free(path);
    free(dir);
    free(empty);
    free(text);
}

/* A save over a mapped file replaces it by rename: the mapping keeps the old
 * content, a new map sees the new one. */
static void test_map_survives_replacement(void) {
    minlsh_family *fam = NULL;
    minlsh_sigmatrix *a, *b, *ma = NULL, *mb = NULL;
    char *path = path_dup("map-replaced.mx");
    uint8_t *wa, *wb, *got;
    size_t la, lb, lg;
    EXPECT_OK(minlsh_family_new(&fam, 16, 1, NULL));
    a = make_matrix(fam, 0, 30, 11);
    b = make_matrix(fam, 0, 50, 12);
    wa = matrix_bytes(a, &la);
    wb = matrix_bytes(b, &lb);
    EXPECT_OK(minlsh_sigmatrix_save(a, path));
    EXPECT_OK(minlsh_sigmatrix_map(&ma, path, LOAD_OPTS(fam, 0, NULL)));
    EXPECT_OK(minlsh_sigmatrix_save(b, path));
    EXPECT_OK(minlsh_sigmatrix_save(ma, path)); /* save from the mapping over itself */
    got = matrix_bytes(ma, &lg);
    EXPECT(got != NULL && lg == la && memcmp(got, wa, la) == 0);
    free(got);
    EXPECT_OK(minlsh_sigmatrix_save(b, path));
    EXPECT_OK(minlsh_sigmatrix_map(&mb, path, LOAD_OPTS(fam, 0, NULL)));
    got = matrix_bytes(mb, &lg);
    EXPECT(got != NULL && lg == lb && memcmp(got, wb, lb) == 0);
    free(got);
    got = matrix_bytes(ma, &lg);
    EXPECT(got != NULL && lg == la && memcmp(got, wa, la) == 0);
    free(got);
    minlsh_sigmatrix_free(ma);
    minlsh_sigmatrix_free(mb);
    minlsh_sigmatrix_free(a);
    minlsh_sigmatrix_free(b);
    free(wa);
    free(wb);
    minlsh_family_free(fam);
    free(path);
}

/* ---- saves that fail half-way ---------------------------------------------- */

/* In a child process limited to max_bytes per file (RLIMIT_FSIZE, SIGXFSZ
 * ignored so write() fails with EFBIG), save m or ix to path; the child's
 * exit status is the save's result code, negated. */
static int save_limited(const minlsh_sigmatrix *m, const minlsh_index *ix, const char *path,
                        rlim_t max_bytes) {
    pid_t pid;
    int status = 0;
    fflush(stdout); /* the child exits through exit(), which flushes */
    pid = fork();
    if (pid == 0) {
        struct rlimit rl;
        int rc;
        signal(SIGXFSZ, SIG_IGN);
        rl.rlim_cur = rl.rlim_max = max_bytes;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(100);
        rc = m != NULL ? minlsh_sigmatrix_save(m, path) : minlsh_index_save(ix, path);
        /* exit, not _exit: a coverage build writes its counters at exit
         * (with the limit lifted, or they could not be written). */
        rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
        setrlimit(RLIMIT_FSIZE, &rl);
        exit(-rc);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 999;
    return -WEXITSTATUS(status);
}

static void test_failed_save_keeps_old_file(void) {
    minlsh_family *fam = NULL;
    minlsh_sigmatrix *small, *big;
    minlsh_index *ix = NULL;
    char *path = path_dup("limited.mx"), *ipath = path_dup("limited.ix");
    uint8_t *want, *got;
    size_t len, glen;
    rlim_t limits[] = {0, 1, 63, 64, 4096, 65536, 65537, 200000};
    size_t i;
    uint32_t sig[64];
    EXPECT_OK(minlsh_family_new(&fam, 64, 3, NULL));
    small = make_matrix(fam, 0, 3, 1);
    big = make_matrix(fam, 0, 2000, 2); /* about 512 KB */
    want = matrix_bytes(small, &len);
    EXPECT_OK(minlsh_sigmatrix_save(small, path));
    for (i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        int rc = save_limited(big, NULL, path, limits[i]);
        EXPECT_MSG(rc == MINLSH_E_IO, "limit %lu: save gave %d", (unsigned long)limits[i], rc);
        got = read_file(path, &glen);
        EXPECT_MSG(got != NULL && glen == len && memcmp(got, want, len) == 0,
                   "limit %lu: the old file changed", (unsigned long)limits[i]);
        free(got);
        EXPECT_EQ_INT(count_files("limited.mx.tmp-"), 0);
    }
    /* Without a limit the same save works. */
    EXPECT_EQ_INT(save_limited(big, NULL, path, RLIM_INFINITY), 0);
    free(want);
    /* The index save, likewise. */
    EXPECT_OK(minlsh_index_new(&ix, fam, 0, 16, 4, NULL));
    for (i = 0; i < 1000; i++) { /* about 264 KB */
        size_t v;
        for (v = 0; v < 64; v++) sig[v] = (uint32_t)(i * 64 + v);
        minlsh_index_insert(ix, i, sig, 64);
    }
    EXPECT_OK(minlsh_sigmatrix_save(small, ipath)); /* any old content */
    want = read_file(ipath, &len);
    for (i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        EXPECT_EQ_INT(save_limited(NULL, ix, ipath, limits[i]), MINLSH_E_IO);
        got = read_file(ipath, &glen);
        EXPECT(got != NULL && glen == len && memcmp(got, want, len) == 0);
        free(got);
        EXPECT_EQ_INT(count_files("limited.ix.tmp-"), 0);
    }
    free(want);
    minlsh_index_free(ix);
    minlsh_sigmatrix_free(small);
    minlsh_sigmatrix_free(big);
    minlsh_family_free(fam);
    free(path);
    free(ipath);
}

int main(void) {
    RUN(test_map_roundtrip);
    RUN(test_map_empty_matrix);
    RUN(test_map_refuses_damage);
    RUN(test_map_errors);
    RUN(test_map_survives_replacement);
    RUN(test_failed_save_keeps_old_file);
    return TL_SUMMARY("files");
}
