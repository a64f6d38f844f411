/*
 * A tiny test harness. Each test is a function; EXPECT records a failure
 * with file and line and the test goes on; a test passes when nothing
 * failed. main() ends with TL_SUMMARY(), which prints
 *   "<program>: N passed, M failed"
 * and returns non-zero if anything failed. tests/run.sh adds them up.
 *
 *   static void test_thing(void) { EXPECT(1 + 1 == 2); EXPECT_EQ_U64(x, 3); }
 *   int main(void) { RUN(test_thing); return TL_SUMMARY("thing"); }
 */
#ifndef MINLSH_TESTLIB_H
#define MINLSH_TESTLIB_H

/* Load options for a family check (family NULL: any file) and an allocator,
 * as one argument (include minlsh.h before using it). */
#define LOAD_OPTS(family, config_id, alloc)                                    \
    (&(minlsh_load_options){MINLSH_LOAD_OPTIONS_VERSION, 0, (family), (config_id), (alloc)})

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tl_passed, tl_failed, tl_current_failed;
static const char *tl_current = "";

#define TL_FAIL(...)                                                           \
    do {                                                                       \
        if (!tl_current_failed) printf("FAIL %s\n", tl_current);               \
        tl_current_failed++;                                                   \
        printf("  %s:%d: ", __FILE__, __LINE__);                               \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
    } while (0)

#define EXPECT(cond)                                                           \
    do {                                                                       \
        if (!(cond)) TL_FAIL("expected %s", #cond);                            \
    } while (0)

#define EXPECT_MSG(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) TL_FAIL(__VA_ARGS__);                                     \
    } while (0)

#define EXPECT_EQ_INT(got, want)                                               \
    do {                                                                       \
        long long tl_g = (long long)(got), tl_w = (long long)(want);           \
        if (tl_g != tl_w)                                                      \
            TL_FAIL("%s == %lld, expected %lld", #got, tl_g, tl_w);            \
    } while (0)

#define EXPECT_EQ_U64(got, want)                                               \
    do {                                                                       \
        uint64_t tl_g = (uint64_t)(got), tl_w = (uint64_t)(want);              \
        if (tl_g != tl_w)                                                      \
            TL_FAIL("%s == 0x%016" PRIx64 ", expected 0x%016" PRIx64, #got,    \
                    tl_g, tl_w);                                               \
    } while (0)

#define EXPECT_NEAR(got, want, tol)                                            \
    do {                                                                       \
        double tl_g = (double)(got), tl_w = (double)(want);                    \
        if (!(fabs(tl_g - tl_w) <= (double)(tol)))                             \
            TL_FAIL("%s == %.6g, expected %.6g +- %.3g", #got, tl_g, tl_w,     \
                    (double)(tol));                                            \
    } while (0)

/* Status-returning calls: EXPECT_OK(f(...)) and EXPECT_ERR(f(...), CODE). */
#define EXPECT_OK(call) EXPECT_EQ_INT((call), 0)
#define EXPECT_ERR(call, code) EXPECT_EQ_INT((call), (code))

#define RUN(fn)                                                                \
    do {                                                                       \
        tl_current = #fn;                                                      \
        tl_current_failed = 0;                                                 \
        fn();                                                                  \
        if (tl_current_failed) {                                               \
            tl_failed++;                                                       \
        } else {                                                               \
            tl_passed++;                                                       \
            printf("ok   %s\n", #fn);                                          \
        }                                                                      \
        fflush(stdout);                                                        \
    } while (0)

#define TL_SUMMARY(name)                                                       \
    (printf("%s: %d passed, %d failed\n", (name), tl_passed, tl_failed),       \
     tl_failed != 0)

/* A deterministic generator for test data (SplitMix64). */
static inline uint64_t tl_rand(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
/* Uniform double in [0, 1). */
static inline double tl_rand_unit(uint64_t *state) {
    return (double)(tl_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Path of a data file under tests/ (the runner sets MINLSH_TEST_DIR). */
static inline const char *tl_data_path(const char *name) {
    static char buf[4096];
    const char *dir = getenv("MINLSH_TEST_DIR");
    snprintf(buf, sizeof buf, "%s/%s", dir ? dir : "tests", name);
    return buf;
}

/* Scratch directory for files (the runner sets MINLSH_TEST_TMP). */
static inline const char *tl_tmp_path(const char *name) {
    static char buf[4096];
    const char *dir = getenv("MINLSH_TEST_TMP");
    snprintf(buf, sizeof buf, "%s/%s", dir ? dir : "/tmp", name);
    return buf;
}

/* A whole file in a malloc'd buffer (one byte spare), its length in *len;
 * NULL if it cannot be read. */
static inline unsigned char *tl_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    unsigned char *p;
    long n;
    *len = 0;
    if (f == NULL) return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    p = (unsigned char *)malloc((size_t)n + 1);
    if (p != NULL && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p != NULL) *len = (size_t)n;
    return p;
}

/* Replace a file with len bytes; a short write fails the test. */
static inline void tl_write_file(const char *path, const void *p, size_t len) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        TL_FAIL("cannot write %s", path);
        return;
    }
    if (fwrite(p, 1, len, f) != len) TL_FAIL("short write to %s", path);
    fclose(f);
}

/* Remove a store at path and every file it keeps beside it. */
static inline void tl_remove_store(const char *path) {
    static const char *const sfx[] = {"", ".journal", ".lock", ".sets", ".compact.lock"};
    char f[4300];
    size_t i;
    for (i = 0; i < sizeof sfx / sizeof *sfx; i++) {
        snprintf(f, sizeof f, "%s%s", path, sfx[i]);
        remove(f);
    }
}

#endif
