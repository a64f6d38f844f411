/* The MinHash family: exact arithmetic and coefficients against an
 * independent Python reference (tests/ref_minhash.py), golden signatures,
 * every kernel against the definition, estimator accuracy, algebra of
 * merge/update, and every error path. */
#define _POSIX_C_SOURCE 200809L
#include "testalloc.h"
#include "testlib.h"

#include <time.h>
#include <unistd.h>

#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "minhash/kernel.h"
#include "minhash/minhash.h"

#define P MINLSH_PRIME

/* ---- helpers ---------------------------------------------------------------- */

static const char *python(void) {
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* Run tests/ref_minhash.py with the given arguments; NULL on failure. */
static FILE *ref_open(const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s '%s' %s", python(), tl_data_path("ref_minhash.py"), args);
    return popen(cmd, "r");
}

/* Parse up to max hex numbers from a line. */
static int parse_hex(const char *line, uint64_t *v, int max) {
    int n = 0;
    char *end;
    while (n < max) {
        while (*line == ' ') line++;
        if (*line == '\0' || *line == '\n') break;
        v[n] = strtoull(line, &end, 16);
        if (end == line) return -1;
        line = end;
        n++;
    }
    return n;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The definition, written as plainly as possible: value i is the top 32 bits
 * of the minimum of h_i over the set. */
static void naive_sign(const uint64_t *a, const uint64_t *b, uint32_t k,
                       const uint64_t *h, size_t n, uint32_t *sig) {
    uint32_t i;
    size_t j;
    for (i = 0; i < k; i++) {
        uint64_t m = UINT64_MAX;
        for (j = 0; j < n; j++) {
            uint64_t v = minlsh__minhash_apply_limb(a[i], b[i], h[j]);
            if (v < m) m = v;
        }
        sig[i] = n == 0 ? MINLSH_EMPTY_VALUE : (uint32_t)(m >> 29);
    }
}

/* ---- exact arithmetic ----------------------------------------------------------- */

static void test_mulmod_vs_python(void) {
    const long n_random = 1000000;
    char args[64], line[256];
    long lines = 0, bad_wide = 0, bad_limb = 0, bad_parse = 0;
    FILE *f;
    double t0 = now_seconds();
    snprintf(args, sizeof args, "mulmod 20260101 %ld", n_random);
    f = ref_open(args);
    EXPECT(f != NULL);
    if (f == NULL) return;
    while (fgets(line, sizeof line, f) != NULL) {
        uint64_t v[4];
        if (parse_hex(line, v, 4) != 4) {
            bad_parse++;
            continue;
        }
        lines++;
        if (minlsh__minhash_apply_wide(v[0], v[2], v[1]) != v[3]) {
            if (bad_wide++ < 5)
                TL_FAIL("wide: a=%" PRIx64 " x=%" PRIx64 " b=%" PRIx64 " got %" PRIx64
                        " want %" PRIx64, v[0], v[1], v[2],
                        minlsh__minhash_apply_wide(v[0], v[2], v[1]), v[3]);
        }
        if (minlsh__minhash_apply_limb(v[0], v[2], v[1]) != v[3]) {
            if (bad_limb++ < 5)
                TL_FAIL("limb: a=%" PRIx64 " x=%" PRIx64 " b=%" PRIx64 " got %" PRIx64
                        " want %" PRIx64, v[0], v[1], v[2],
                        minlsh__minhash_apply_limb(v[0], v[2], v[1]), v[3]);
        }
    }
    EXPECT_EQ_INT(pclose(f), 0);
    EXPECT_EQ_INT(bad_parse, 0);
    EXPECT_EQ_INT(bad_wide, 0);
    EXPECT_EQ_INT(bad_limb, 0);
    /* 8 a x 19 x x 4 b edge cases, then the random triples. */
    EXPECT_EQ_INT(lines, 8 * 19 * 4 + n_random);
    printf("  %ld products checked against Python (wide path uses __int128: %s) in %.2f s\n",
           lines, minlsh__minhash_has_int128() ? "yes" : "no", now_seconds() - t0);
}

static void test_reduce(void) {
    EXPECT_EQ_U64(minlsh__minhash_reduce(0), 0);
    EXPECT_EQ_U64(minlsh__minhash_reduce(P - 1), P - 1);
    EXPECT_EQ_U64(minlsh__minhash_reduce(P), 0);
    EXPECT_EQ_U64(minlsh__minhash_reduce(P + 1), 1);
    EXPECT_EQ_U64(minlsh__minhash_reduce(2 * P), 0);
    EXPECT_EQ_U64(minlsh__minhash_reduce(UINT64_MAX), UINT64_MAX % P);
    EXPECT_EQ_U64(minlsh__minhash_reduce(UINT64_MAX - 7), (UINT64_MAX - 7) % P);
    EXPECT_EQ_U64(minlsh__minhash_reduce(8 * P - 1), (8 * P - 1) % P);
}

/* ---- coefficients ---------------------------------------------------------------- */

static int ref_coefficients(uint64_t seed, uint32_t k, uint64_t *a, uint64_t *b) {
    char args[64], line[128];
    uint32_t n = 0;
    FILE *f;
    snprintf(args, sizeof args, "coefficients 0x%" PRIx64 " %u", seed, (unsigned)k);
    f = ref_open(args);
    if (f == NULL) return -1;
    while (fgets(line, sizeof line, f) != NULL) {
        uint64_t v[2];
        if (parse_hex(line, v, 2) != 2 || n >= k) {
            pclose(f);
            return -1;
        }
        a[n] = v[0];
        b[n] = v[1];
        n++;
    }
    if (pclose(f) != 0 || n != k) return -1;
    return 0;
}

/* Seeds whose SplitMix64 stream hits each rejection rule
 * (python3 tests/ref_minhash.py redraw-seeds). */
static const struct {
    const char *name;
    uint64_t seed;
    int draw;          /* which raw draw is rejected */
    uint64_t rejected; /* its value >> 3 */
} redraw[] = {
    {"a0_zero", UINT64_C(0x83c953d1d0ee9fb1), 0, 0},
    {"a0_p", UINT64_C(0xf42e16f082800efd), 0, P},
    {"b0_p", UINT64_C(0x932b113cfbd6b596), 1, P},
    {"a5_zero", UINT64_C(0x339dc50787ccab19), 10, 0},
    {"b7_p", UINT64_C(0x1f77d2dc4f79de74), 15, P},
};

static void check_family_against(uint64_t seed) {
    static uint64_t ra[1024], rb[1024], a[1024], b[1024];
    static const uint32_t ks[] = {1, 2, 5, 128, 1023, 1024};
    size_t t, i, n_out = 0;
    if (ref_coefficients(seed, 1024, ra, rb) != 0) {
        TL_FAIL("ref_minhash.py coefficients failed for seed %" PRIx64, seed);
        return;
    }
    for (t = 0; t < sizeof ks / sizeof ks[0]; t++) {
        minlsh_family *f = NULL;
        size_t bad = 0;
        EXPECT_OK(minlsh_family_new(&f, ks[t], seed, NULL));
        if (f == NULL) continue;
        EXPECT_EQ_INT(minlsh_family_k(f), ks[t]);
        EXPECT_EQ_U64(minlsh_family_seed(f), seed);
        EXPECT_OK(minlsh_family_copy_coefficients(f, a, b, 1024, &n_out));
        EXPECT_EQ_INT(n_out, ks[t]);
        /* Equal to the reference's first k: which is also the prefix
         * property, since the reference drew 1024. */
        for (i = 0; i < ks[t]; i++) bad += a[i] != ra[i] || b[i] != rb[i];
        EXPECT_MSG(bad == 0, "seed %" PRIx64 " k %u: %zu coefficients differ", seed,
                   (unsigned)ks[t], bad);
        for (i = 0; i < ks[t]; i++) {
            EXPECT(a[i] >= 1 && a[i] < P);
            EXPECT(b[i] < P);
        }
        minlsh_family_free(f);
    }
}

static void test_coefficients_vs_python(void) {
    static const uint64_t seeds[] = {0, 1, 42, UINT64_MAX, UINT64_C(0x0123456789ABCDEF)};
    size_t i;
    for (i = 0; i < sizeof seeds / sizeof seeds[0]; i++) check_family_against(seeds[i]);
}

static void test_coefficients_rejection(void) {
    size_t i;
    for (i = 0; i < sizeof redraw / sizeof redraw[0]; i++) {
        uint64_t st = redraw[i].seed, v = 0;
        int d;
        /* The test would prove nothing if the seed did not hit the rule. */
        for (d = 0; d <= redraw[i].draw; d++) v = tl_rand(&st) >> 3;
        EXPECT_MSG(v == redraw[i].rejected, "%s: draw %d is %" PRIx64, redraw[i].name,
                   redraw[i].draw, v);
        check_family_against(redraw[i].seed);
    }
    /* And independently of Python: a0_zero's a_0 is the second draw. */
    {
        minlsh_family *f = NULL;
        uint64_t a[2], b[2], st = redraw[0].seed, d0, d1, d2;
        d0 = tl_rand(&st) >> 3;
        d1 = tl_rand(&st) >> 3;
        d2 = tl_rand(&st) >> 3;
        EXPECT_EQ_U64(d0, 0);
        EXPECT_OK(minlsh_family_new(&f, 2, redraw[0].seed, NULL));
        EXPECT_OK(minlsh_family_copy_coefficients(f, a, b, 2, NULL));
        EXPECT_EQ_U64(a[0], d1);
        EXPECT_EQ_U64(b[0], d2);
        minlsh_family_free(f);
    }
}

/* The check table printed in docs/minhash.md. */
static void test_seed1_table(void) {
    static const uint64_t want_a[4] = {
        UINT64_C(0x122145bd91204b98), UINT64_C(0x1f12745ddf664aab),
        UINT64_C(0x0e376a9b1a2036b7), UINT64_C(0x1c133d8d9ae6c794)};
    static const uint64_t want_b[4] = {
        UINT64_C(0x17dd71b42cb1dd8c), UINT64_C(0x0e3830d21dc85921),
        UINT64_C(0x1869a17ff202a050), UINT64_C(0x10bcf761e244f0ae)};
    uint64_t a[4], b[4];
    minlsh_family *f = NULL;
    int i;
    EXPECT_OK(minlsh_family_new(&f, 4, 1, NULL));
    EXPECT_OK(minlsh_family_copy_coefficients(f, a, b, 4, NULL));
    for (i = 0; i < 4; i++) {
        EXPECT_EQ_U64(a[i], want_a[i]);
        EXPECT_EQ_U64(b[i], want_b[i]);
    }
    /* The worked example of docs/minhash.md. */
    {
        static const uint32_t want_sig[4] = {0xc6dfdfc7u, 0x253f653cu, 0xcaae536cu, 0xcad447efu};
        uint64_t h = UINT64_C(0x0123456789abcdef);
        uint32_t sig[4];
        EXPECT_EQ_U64(minlsh__minhash_apply_wide(a[0], b[0], h), UINT64_C(0x18dbfbf8f841ea49));
        EXPECT_OK(minlsh_family_sign(f, &h, 1, sig, 4, NULL));
        for (i = 0; i < 4; i++) EXPECT_EQ_U64(sig[i], want_sig[i]);
    }
    minlsh_family_free(f);
}

static void test_coefficients_partial_outputs(void) {
    minlsh_family *f = NULL;
    uint64_t a[8], b[8], a2[8];
    size_t n_out = 0;
    EXPECT_OK(minlsh_family_new(&f, 8, 99, NULL));
    EXPECT_OK(minlsh_family_copy_coefficients(f, a, b, 8, &n_out));
    EXPECT_OK(minlsh_family_copy_coefficients(f, a2, NULL, 8, NULL));
    EXPECT(memcmp(a, a2, sizeof a) == 0);
    memset(a2, 0, sizeof a2);
    EXPECT_OK(minlsh_family_copy_coefficients(f, NULL, a2, 8, NULL));
    EXPECT(memcmp(b, a2, sizeof b) == 0);
    n_out = 0;
    EXPECT_OK(minlsh_family_copy_coefficients(f, NULL, NULL, 8, &n_out));
    EXPECT_EQ_INT(n_out, 8);
    n_out = 0;
    EXPECT_ERR(minlsh_family_copy_coefficients(f, NULL, NULL, 0, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 8);
    minlsh_family_free(f);
}

/* ---- golden signatures ----------------------------------------------------------- */

typedef struct tokens {
    char *buf;
    char *p;
} tokens;

/* Next whitespace-separated token, skipping '#' comments; NULL at the end. */
static const char *tok_next(tokens *t) {
    char *start;
    for (;;) {
        while (*t->p == ' ' || *t->p == '\n' || *t->p == '\t' || *t->p == '\r') t->p++;
        if (*t->p == '#') {
            while (*t->p != '\0' && *t->p != '\n') t->p++;
            continue;
        }
        break;
    }
    if (*t->p == '\0') return NULL;
    start = t->p;
    while (*t->p != '\0' && *t->p != ' ' && *t->p != '\n' && *t->p != '\t' && *t->p != '\r')
        t->p++;
    if (*t->p != '\0') *t->p++ = '\0';
    return start;
}

static int tok_expect(tokens *t, const char *word) {
    const char *s = tok_next(t);
    return s != NULL && strcmp(s, word) == 0;
}

static int tok_num(tokens *t, uint64_t *v, int base) {
    const char *s = tok_next(t);
    char *end;
    if (s == NULL) return -1;
    *v = strtoull(s, &end, base);
    return *end == '\0' ? 0 : -1;
}

static char *read_text_file(const char *path) {
    FILE *f = fopen(path, "rb");
    char *buf;
    long size;
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char *)malloc((size_t)size + 1);
    if (buf != NULL && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    if (buf != NULL) buf[size] = '\0';
    fclose(f);
    return buf;
}

/* The cases of a golden file (ref_minhash.py golden or golden-oph) through
 * minlsh_family_sign with a family of the scheme; classic ones also through
 * every kernel and streamed updates, OPH ones also through the binning in
 * uneven pieces. */
static void golden_file(const char *file, uint32_t scheme, int want_cases) {
    const minlsh__minhash_kernel *kernels[8];
    size_t n_kernels = minlsh__minhash_kernels(kernels, 8), kx;
    tokens t;
    int cases = 0;
    const char *s;
    t.buf = read_text_file(tl_data_path(file));
    EXPECT(t.buf != NULL);
    if (t.buf == NULL) return;
    t.p = t.buf;
    while ((s = tok_next(&t)) != NULL) {
        uint64_t seed, k, n, v, a[1024], b[1024];
        uint64_t *hashes;
        uint32_t want[1024], got[1024];
        const char *name;
        minlsh_family *f = NULL;
        size_t i, n_out = 0, bad;
        EXPECT(strcmp(s, "case") == 0);
        name = tok_next(&t);
        if (name == NULL || !tok_expect(&t, "seed") || tok_num(&t, &seed, 16) != 0 ||
            !tok_expect(&t, "k") || tok_num(&t, &k, 10) != 0 || !tok_expect(&t, "n") ||
            tok_num(&t, &n, 10) != 0 || k < 1 || k > 1024 || n > 100000 ||
            !tok_expect(&t, "hashes")) {
            TL_FAIL("malformed golden case header after %d cases", cases);
            break;
        }
        hashes = (uint64_t *)malloc((size_t)(n + 1) * sizeof *hashes);
        for (i = 0; i < n; i++)
            if (tok_num(&t, &hashes[i], 16) != 0) break;
        EXPECT_MSG(i == n && tok_expect(&t, "sig"), "%s: bad hash list", name);
        for (i = 0; i < k; i++) {
            if (tok_num(&t, &v, 16) != 0 || v > UINT32_MAX) break;
            want[i] = (uint32_t)v;
        }
        EXPECT_MSG(i == k && tok_expect(&t, "end"), "%s: bad signature", name);

        EXPECT_OK(minlsh_family_new_scheme(&f, (uint32_t)k, seed, scheme, NULL));
        EXPECT_OK(minlsh_family_sign(f, hashes, (size_t)n, got, 1024, &n_out));
        EXPECT_EQ_INT(n_out, k);
        for (i = 0, bad = 0; i < k; i++) bad += got[i] != want[i];
        EXPECT_MSG(bad == 0, "golden %s: %zu of %u values differ (first: got %08x want %08x)",
                   name, bad, (unsigned)k, got[0], want[0]);
        if (scheme == MINLSH_SCHEME_OPH) {
            /* Binning is exact however the hashes are split. */
            uint32_t bins[1024], work[2 * 1024];
            EXPECT_OK(minlsh_family_copy_coefficients(f, a, b, 1024, NULL));
            for (i = 0; i < k; i++) bins[i] = MINLSH_EMPTY_VALUE;
            for (i = 0; i < n;) {
                size_t piece = 1 + (i * 7 + 3) % 97;
                if (piece > n - i) piece = (size_t)n - i;
                minlsh__oph_update(a[0], b[0], (uint32_t)k, hashes + i, piece, bins);
                i += piece;
            }
            minlsh__family_finish_raw(f, bins, work);
            for (i = 0, bad = 0; i < k; i++) bad += bins[i] != want[i];
            EXPECT_MSG(bad == 0, "golden %s in pieces: %zu values differ", name, bad);
            EXPECT_EQ_INT(minlsh_family_update(f, hashes, (size_t)n, got, (size_t)k),
                          MINLSH_E_UNSUPPORTED);
            minlsh_family_free(f);
            free(hashes);
            cases++;
            continue;
        }
        /* Every kernel directly, not only the one the dispatcher picks. */
        EXPECT_OK(minlsh_family_copy_coefficients(f, a, b, 1024, NULL));
        for (kx = 0; kx < n_kernels && kx < 8; kx++) {
            for (i = 0; i < k; i++) got[i] = MINLSH_EMPTY_VALUE;
            kernels[kx]->update(a, b, (uint32_t)k, hashes, (size_t)n, got);
            for (i = 0, bad = 0; i < k; i++) bad += got[i] != want[i];
            EXPECT_MSG(bad == 0, "golden %s, kernel %s: %zu values differ", name,
                       kernels[kx]->name, bad);
        }
        /* Streaming in uneven pieces gives the same bits. */
        for (i = 0; i < k; i++) got[i] = MINLSH_EMPTY_VALUE;
        for (i = 0; i < n;) {
            size_t piece = 1 + (i * 7 + 3) % 97;
            if (piece > n - i) piece = (size_t)n - i;
            EXPECT_OK(minlsh_family_update(f, hashes + i, piece, got, (size_t)k));
            i += piece;
        }
        for (i = 0, bad = 0; i < k; i++) bad += got[i] != want[i];
        EXPECT_MSG(bad == 0, "golden %s streamed: %zu values differ", name, bad);
        minlsh_family_free(f);
        free(hashes);
        cases++;
    }
    EXPECT_EQ_INT(cases, want_cases);
    free(t.buf);
}

static void test_golden_signatures(void) {
    golden_file("golden/signatures.txt", MINLSH_SCHEME_CLASSIC, 11);
}

static void test_golden_oph_signatures(void) {
    golden_file("golden/oph_signatures.txt", MINLSH_SCHEME_OPH, 12);
}

/* ---- kernels against the definition ---------------------------------------------- */

/* OPH binning against its definition (docs/minhash.md section 7.1), with
 * v from the 32-bit-limb product (the other path than the one the library
 * uses where __int128 exists) and t = v k as a 128-bit number where the
 * compiler has one (else the library's own 64-bit split, which the golden
 * file then checks alone): k = 1..1024 including non-powers of two. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 test_u128;
#endif
static void test_oph_binning_matches_definition(void) {
    static const uint32_t ks[] = {1, 2, 3, 5, 64, 100, 127, 128, 129, 1000, 1023, 1024};
    uint64_t s = 77, a[2], b[2];
    size_t ki, j;
    for (ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        uint32_t k = ks[ki], got[1024], want[1024];
        uint64_t h[600];
        minlsh__family_derive(ki + 1, 2, a, b);
        for (j = 0; j < 600; j++) h[j] = tl_rand(&s);
        h[0] = 0;
        h[1] = P - 1;
        h[2] = P;
        h[3] = UINT64_MAX;
        for (j = 0; j < k; j++) got[j] = want[j] = MINLSH_EMPTY_VALUE;
        minlsh__oph_update(a[0], b[0], k, h, 600, got);
        for (j = 0; j < 600; j++) {
            uint64_t v = minlsh__minhash_apply_limb(a[0], b[0], h[j]);
#if defined(__SIZEOF_INT128__)
            test_u128 t = (test_u128)v * k;
            uint32_t bin = (uint32_t)(t >> 61), val = (uint32_t)(((uint64_t)t & P) >> 29);
#else
            uint64_t lo = (v & 0xFFFFFFFFu) * k, hi = (v >> 32) * k + (lo >> 32);
            uint64_t low61 = ((hi & 0x1FFFFFFFu) << 32) | (lo & 0xFFFFFFFFu);
            uint32_t bin = (uint32_t)(hi >> 29), val = (uint32_t)(low61 >> 29);
#endif
            EXPECT(bin < k);
            if (val < want[bin]) want[bin] = val;
        }
        EXPECT_MSG(memcmp(got, want, (size_t)k * 4) == 0, "k = %u", (unsigned)k);
    }
}

static void test_kernels_match_definition(void) {
    const minlsh__minhash_kernel *kernels[8];
    size_t n_kernels = minlsh__minhash_kernels(kernels, 8), kx, ti;
    static const uint32_t ks[] = {1, 3, 4, 7, 64, 129, 1024};
    static const size_t ns[] = {1, 2, 255, 256, 257, 1000};
    static uint64_t hashes[1000], a[1024], b[1024];
    static uint32_t want[1024], got[1024];
    uint64_t st = 7;
    size_t i;
    EXPECT(n_kernels >= 2);
    /* The dispatcher's choice is one of the kernels checked here
     * (tests/test_kernels.c checks which one). */
    for (kx = 0; kx < n_kernels && kx < 8; kx++)
        if (kernels[kx] == minlsh__minhash_kernel_active()) break;
    EXPECT(kx < n_kernels && kx < 8);
    for (i = 0; i < 1000; i++) hashes[i] = tl_rand(&st);
    for (ti = 0; ti < sizeof ks / sizeof ks[0]; ti++) {
        minlsh_family *f = NULL;
        size_t ni;
        EXPECT_OK(minlsh_family_new(&f, ks[ti], ti * 1000 + 5, NULL));
        EXPECT_OK(minlsh_family_copy_coefficients(f, a, b, 1024, NULL));
        for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            naive_sign(a, b, ks[ti], hashes, ns[ni], want);
            for (kx = 0; kx < n_kernels && kx < 8; kx++) {
                size_t bad = 0;
                /* Start from a non-empty signature: update takes minima. */
                for (i = 0; i < ks[ti]; i++) got[i] = i % 3 == 0 ? 0x40000000u : MINLSH_EMPTY_VALUE;
                kernels[kx]->update(a, b, ks[ti], hashes, ns[ni], got);
                for (i = 0; i < ks[ti]; i++) {
                    uint32_t w = i % 3 == 0 && want[i] > 0x40000000u ? 0x40000000u : want[i];
                    bad += got[i] != w;
                }
                EXPECT_MSG(bad == 0, "kernel %s k=%u n=%zu: %zu values differ",
                           kernels[kx]->name, (unsigned)ks[ti], ns[ni], bad);
            }
        }
        /* n = 0 leaves sig alone. */
        for (kx = 0; kx < n_kernels && kx < 8; kx++) {
            for (i = 0; i < ks[ti]; i++) got[i] = (uint32_t)i;
            kernels[kx]->update(a, b, ks[ti], NULL, 0, got);
            for (i = 0; i < ks[ti]; i++) EXPECT_EQ_INT(got[i], i);
        }
        minlsh_family_free(f);
    }
}

/* ---- algebra ---------------------------------------------------------------------- */

static void random_hashes(uint64_t *h, size_t n, uint64_t seed) {
    size_t i;
    for (i = 0; i < n; i++) h[i] = tl_rand(&seed);
}

static void test_merge_is_union(void) {
    static uint64_t h[700];
    uint32_t sa[200], sb[200], su[200];
    minlsh_family *f = NULL;
    random_hashes(h, 700, 3);
    EXPECT_OK(minlsh_family_new(&f, 200, 11, NULL));
    /* A = h[0..400), B = h[300..700): overlapping. */
    EXPECT_OK(minlsh_family_sign(f, h, 400, sa, 200, NULL));
    EXPECT_OK(minlsh_family_sign(f, h + 300, 400, sb, 200, NULL));
    EXPECT_OK(minlsh_family_sign(f, h, 700, su, 200, NULL));
    EXPECT_OK(minlsh_signature_merge(sa, sb, 200));
    EXPECT(memcmp(sa, su, sizeof su) == 0);
    /* The empty signature is the identity of merge. */
    EXPECT_OK(minlsh_family_sign(f, NULL, 0, sb, 200, NULL));
    EXPECT_OK(minlsh_signature_merge(sa, sb, 200));
    EXPECT(memcmp(sa, su, sizeof su) == 0);
    EXPECT_OK(minlsh_signature_merge(sb, su, 200));
    EXPECT(memcmp(sb, su, sizeof su) == 0);
    minlsh_family_free(f);
}

static void test_update_is_concatenation(void) {
    static uint64_t h[1000];
    uint32_t s1[128], s2[128];
    minlsh_family *f = NULL;
    size_t cut;
    random_hashes(h, 1000, 4);
    EXPECT_OK(minlsh_family_new(&f, 128, 12, NULL));
    EXPECT_OK(minlsh_family_sign(f, h, 1000, s2, 128, NULL));
    for (cut = 0; cut <= 1000; cut += 111) {
        EXPECT_OK(minlsh_family_sign(f, h, cut, s1, 128, NULL));
        EXPECT_OK(minlsh_family_update(f, h + cut, 1000 - cut, s1, 128));
        EXPECT(memcmp(s1, s2, sizeof s2) == 0);
    }
    /* Updating with nothing changes nothing. */
    EXPECT_OK(minlsh_family_update(f, NULL, 0, s1, 128));
    EXPECT(memcmp(s1, s2, sizeof s2) == 0);
    minlsh_family_free(f);
}

static void test_duplicates_and_order(void) {
    static uint64_t h[300], h2[900];
    uint32_t s1[64], s2[64];
    minlsh_family *f = NULL;
    size_t i;
    uint64_t st = 99;
    random_hashes(h, 300, 5);
    /* Each hash three times, shuffled; plus hashes congruent mod p (h and
     * h + p are the same x, hence the same shingle as far as MinHash is
     * concerned: documented). */
    for (i = 0; i < 900; i++) h2[i] = h[i % 300];
    for (i = 899; i > 0; i--) {
        size_t j = (size_t)(tl_rand(&st) % (i + 1));
        uint64_t tmp = h2[i];
        h2[i] = h2[j];
        h2[j] = tmp;
    }
    EXPECT_OK(minlsh_family_new(&f, 64, 13, NULL));
    EXPECT_OK(minlsh_family_sign(f, h, 300, s1, 64, NULL));
    EXPECT_OK(minlsh_family_sign(f, h2, 900, s2, 64, NULL));
    EXPECT(memcmp(s1, s2, sizeof s2) == 0);
    minlsh_family_free(f);
}

static void test_empty_signature(void) {
    uint32_t e[32], e2[32], s[32];
    uint64_t h = 12345;
    double est = -1;
    minlsh_family *f = NULL;
    size_t i;
    EXPECT_OK(minlsh_family_new(&f, 32, 1, NULL));
    EXPECT_OK(minlsh_family_sign(f, NULL, 0, e, 32, NULL));
    for (i = 0; i < 32; i++) EXPECT_EQ_U64(e[i], MINLSH_EMPTY_VALUE);
    EXPECT_EQ_INT(minlsh_signature_is_empty(e, 32), 1);
    EXPECT_OK(minlsh_family_sign(f, &h, 1, s, 32, NULL));
    EXPECT_EQ_INT(minlsh_signature_is_empty(s, 32), 0);
    EXPECT_OK(minlsh_family_sign(f, &h, 0, e2, 32, NULL));
    EXPECT(memcmp(e, e2, sizeof e) == 0);
    /* 0 with anything, itself included. */
    EXPECT_OK(minlsh_signature_estimate(&est, e, e2, 32));
    EXPECT_EQ_INT(est == 0.0, 1);
    est = -1;
    EXPECT_OK(minlsh_signature_estimate(&est, e, s, 32));
    EXPECT_EQ_INT(est == 0.0, 1);
    est = -1;
    EXPECT_OK(minlsh_signature_estimate(&est, s, e, 32));
    EXPECT_EQ_INT(est == 0.0, 1);
    EXPECT_OK(minlsh_signature_estimate(&est, s, s, 32));
    EXPECT_EQ_INT(est == 1.0, 1);
    /* One value away from empty is not empty. */
    e2[31] = 0xFFFFFFFEu;
    EXPECT_EQ_INT(minlsh_signature_is_empty(e2, 32), 0);
    EXPECT_EQ_INT(minlsh_empty_value(), MINLSH_EMPTY_VALUE);
    minlsh_family_free(f);
}

static void test_estimate_counts_positions(void) {
    uint32_t a[10], b[10];
    double est = -1;
    size_t i;
    for (i = 0; i < 10; i++) a[i] = b[i] = (uint32_t)i;
    b[2] = 100;
    b[7] = 100;
    b[9] = MINLSH_EMPTY_VALUE;
    EXPECT_OK(minlsh_signature_estimate(&est, a, b, 10));
    EXPECT_NEAR(est, 0.7, 1e-12);
    EXPECT_OK(minlsh_signature_merge(a, b, 10));
    EXPECT_EQ_INT(a[2], 2);
    EXPECT_EQ_INT(a[9], 9);
}

/* ---- estimator accuracy ----------------------------------------------------------- */

static void test_estimator_accuracy(void) {
    enum { PAIRS = 3000, K = 128 };
    static uint64_t elems[400], setb[400];
    uint64_t st = 20260202;
    double sum_err = 0, sum_sq = 0, sum_var = 0, max_abs = 0;
    int pair, bins[5] = {0, 0, 0, 0, 0};
    for (pair = 0; pair < PAIRS; pair++) {
        size_t u = 200 + (size_t)(tl_rand(&st) % 201);
        size_t inter = (size_t)(tl_rand(&st) % (u + 1));
        size_t rest = u - inter, a_only = (size_t)(tl_rand(&st) % (rest + 1)), i;
        uint32_t sa[K], sb[K];
        minlsh_family *f = NULL;
        double j, est = -1, err;
        for (i = 0; i < u; i++) elems[i] = tl_rand(&st);
        /* A = shared + a_only, B = shared + the rest. */
        for (i = 0; i < inter; i++) setb[i] = elems[i];
        for (i = inter + a_only; i < u; i++) setb[i - a_only] = elems[i];
        j = (double)inter / (double)u;
        EXPECT_OK(minlsh_family_new(&f, K, (uint64_t)pair * 7919 + 1, NULL));
        EXPECT_OK(minlsh_family_sign(f, elems, inter + a_only, sa, K, NULL));
        EXPECT_OK(minlsh_family_sign(f, setb, u - a_only, sb, K, NULL));
        EXPECT_OK(minlsh_signature_estimate(&est, sa, sb, K));
        minlsh_family_free(f);
        err = est - j;
        sum_err += err;
        sum_sq += err * err;
        sum_var += j * (1 - j) / K;
        if (fabs(err) > max_abs) max_abs = fabs(err);
        bins[j >= 1.0 ? 4 : (int)(j * 5)]++;
    }
    {
        double bias = sum_err / PAIRS, rmse = sqrt(sum_sq / PAIRS);
        double theory = sqrt(sum_var / PAIRS);
        printf("  k=%d, %d pairs, J spread [0,0.2)..[0.8,1]: %d %d %d %d %d\n", K, PAIRS,
               bins[0], bins[1], bins[2], bins[3], bins[4]);
        printf("  mean(est - J) = %+.5f, RMSE = %.5f, theory sqrt(mean(J(1-J)/k)) = %.5f "
               "(ratio %.3f), max |err| = %.4f\n",
               bias, rmse, theory, rmse / theory, max_abs);
        EXPECT_MSG(fabs(bias) < 0.005, "bias %.5f", bias);
        EXPECT_MSG(fabs(rmse / theory - 1) < 0.15, "RMSE %.5f vs theory %.5f", rmse, theory);
        EXPECT(bins[0] > PAIRS / 10 && bins[4] > PAIRS / 10);
    }
}

/* ---- errors ----------------------------------------------------------------------- */

static void test_errors(void) {
    minlsh_family *f = (minlsh_family *)&f, *g = NULL;
    minlsh_allocator bad = {NULL, NULL, NULL};
    uint32_t sig[8], sig2[8];
    uint64_t h[2] = {1, 2}, a[8];
    size_t n_out = 0, i;
    double est;

    EXPECT_ERR(minlsh_family_new(NULL, 8, 1, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_new(&f, 0, 1, NULL), MINLSH_E_PARAM);
    EXPECT(f == NULL);
    f = (minlsh_family *)&f;
    EXPECT_ERR(minlsh_family_new(&f, MINLSH_FAMILY_K_MAX + 1, 1, NULL), MINLSH_E_PARAM);
    EXPECT(f == NULL);
    EXPECT_ERR(minlsh_family_new(&f, 8, 1, &bad), MINLSH_E_PARAM);
    EXPECT(f == NULL);
    EXPECT_OK(minlsh_family_new(&g, 1024, 1, NULL));
    minlsh_family_free(g);
    g = NULL;
    EXPECT_OK(minlsh_family_new(&g, 8, 1, NULL));
    minlsh_family_free(NULL);
    EXPECT_EQ_INT(minlsh_family_k(NULL), 0);
    EXPECT_EQ_U64(minlsh_family_seed(NULL), 0);
    EXPECT_EQ_INT(minlsh_family_k_max(), 16384);
    EXPECT_EQ_U64(minlsh_prime(), P);

    EXPECT_ERR(minlsh_family_copy_coefficients(NULL, a, NULL, 8, &n_out), MINLSH_E_NULL);
    n_out = 0;
    EXPECT_ERR(minlsh_family_copy_coefficients(g, a, NULL, 7, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 8);

    EXPECT_ERR(minlsh_family_sign(NULL, h, 2, sig, 8, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign(g, NULL, 2, sig, 8, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign(g, h, 2, NULL, 8, NULL), MINLSH_E_NULL);
    for (i = 0; i < 8; i++) sig[i] = 7;
    n_out = 0;
    EXPECT_ERR(minlsh_family_sign(g, h, 2, sig, 7, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 8);
    EXPECT_EQ_INT(sig[0], 7); /* untouched */
    EXPECT_ERR(minlsh_family_sign(g, h, 2, sig, 7, NULL), MINLSH_E_BUFSIZE);
    n_out = 0;
    EXPECT_ERR(minlsh_family_sign(g, h, 2, NULL, 0, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 8);
    EXPECT_OK(minlsh_family_sign(g, NULL, 0, sig, 8, NULL));

    EXPECT_ERR(minlsh_family_update(NULL, h, 2, sig, 8), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_update(g, h, 2, NULL, 8), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_update(g, NULL, 2, sig, 8), MINLSH_E_NULL);
    memcpy(sig2, sig, sizeof sig);
    EXPECT_ERR(minlsh_family_update(g, h, 2, sig, 7), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_family_update(g, h, 2, sig, 9), MINLSH_E_PARAM);
    EXPECT(memcmp(sig, sig2, sizeof sig) == 0);
    EXPECT_OK(minlsh_family_update(g, NULL, 0, sig, 8));

    EXPECT_ERR(minlsh_signature_merge(NULL, sig, 8), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_signature_merge(sig, NULL, 8), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_signature_merge(sig, sig2, 0), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_signature_estimate(NULL, sig, sig2, 8), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_signature_estimate(&est, NULL, sig2, 8), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_signature_estimate(&est, sig, NULL, 8), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_signature_estimate(&est, sig, sig2, 0), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_signature_is_empty(NULL, 8), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_signature_is_empty(sig, 0), MINLSH_E_PARAM);
    minlsh_family_free(g);
}

static void test_failing_allocator(void) {
    testalloc fa;
    minlsh_allocator al = ta_allocator(&fa);
    long n;
    int rc = MINLSH_E_NOMEM;
    for (n = 1; n < 20 && rc != 0; n++) {
        minlsh_family *f = (minlsh_family *)&fa;
        ta_fail_nth(&fa, n);
        rc = minlsh_family_new(&f, 300, 5, &al);
        ta_fail_nth(&fa, 0);
        if (rc != 0) {
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            EXPECT(f == NULL);
            EXPECT_EQ_INT(ta_blocks(&fa), 0);
        } else {
            uint32_t sig[300];
            uint64_t h = 5;
            EXPECT(f != NULL);
            EXPECT_OK(minlsh_family_sign(f, &h, 1, sig, 300, NULL));
            minlsh_family_free(f);
            EXPECT_EQ_INT(ta_blocks(&fa), 0);
        }
    }
    EXPECT_EQ_INT(rc, 0);
    EXPECT(n >= 2); /* at least one failure was exercised */
}

/* A prefix is the whole signature's first m values, bit for bit, for every
 * m, classic (k not a multiple of the kernels' widths included) and
 * one-permutation; an empty set's is empty; the bounds are checked and an
 * OPH family's heap work can fail cleanly. */
static void test_sign_prefix(void) {
    static const uint32_t ks[] = {1, 7, 33, 128, 130};
    static uint64_t h[500];
    static uint32_t whole[2048], part[2048];
    testalloc fa;
    minlsh_allocator al = ta_allocator(&fa);
    minlsh_family *f = NULL;
    size_t i, m;
    random_hashes(h, 500, 21);
    for (i = 0; i < sizeof ks / sizeof ks[0] * 2; i++) {
        uint32_t k = ks[i / 2];
        int oph = (int)(i % 2);
        if (oph && k < 2) continue;
        EXPECT_OK(minlsh_family_new_scheme(&f, k, 3 + k, oph ? MINLSH_SCHEME_OPH
                                                             : MINLSH_SCHEME_CLASSIC, NULL));
        EXPECT_OK(minlsh_family_sign(f, h, 500, whole, k, NULL));
        for (m = 1; m <= k; m += m < 9 ? 1 : 13) {
            memset(part, 0xA5, sizeof part);
            EXPECT_OK(minlsh_family_sign_prefix(f, h, 500, part, m));
            EXPECT_MSG(memcmp(part, whole, m * sizeof *part) == 0, "k %u m %zu oph %d", k, m,
                       oph);
            EXPECT_EQ_U64(part[m], 0xA5A5A5A5u); /* nothing past m */
            EXPECT_OK(minlsh_family_sign_prefix(f, NULL, 0, part, m));
            EXPECT_EQ_INT(minlsh_signature_is_empty(part, m), 1);
        }
        EXPECT_OK(minlsh_family_sign_prefix(f, h, 500, part, k));
        EXPECT(memcmp(part, whole, k * sizeof *part) == 0);
        EXPECT_ERR(minlsh_family_sign_prefix(f, h, 500, part, 0), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_family_sign_prefix(f, h, 500, part, (size_t)k + 1), MINLSH_E_PARAM);
        EXPECT_ERR(minlsh_family_sign_prefix(f, h, 500, NULL, 1), MINLSH_E_NULL);
        EXPECT_ERR(minlsh_family_sign_prefix(f, NULL, 3, part, 1), MINLSH_E_NULL);
        minlsh_family_free(f);
    }
    EXPECT_ERR(minlsh_family_sign_prefix(NULL, h, 1, part, 1), MINLSH_E_NULL);
    /* k above the stack's 1024: the whole signature goes on the heap */
    EXPECT_OK(minlsh_family_new_scheme(&f, 2048, 5, MINLSH_SCHEME_OPH, &al));
    ta_fail_nth(&fa, 1);
    EXPECT_ERR(minlsh_family_sign_prefix(f, h, 500, part, 100), MINLSH_E_NOMEM);
    ta_fail_nth(&fa, 0);
    EXPECT_OK(minlsh_family_sign_prefix(f, h, 500, part, 100));
    EXPECT_OK(minlsh_family_sign(f, h, 500, whole, 2048, NULL));
    EXPECT(memcmp(part, whole, 100 * sizeof *part) == 0);
    minlsh_family_free(f);
    EXPECT_EQ_INT(ta_blocks(&fa), 0);
}

/* ---- sign_text --------------------------------------------------------------------- */

static char *make_document(size_t words, uint64_t seed) {
    static const char *vocab[] = {"the", "quick", "brown", "fox", "jumps", "over", "lazy",
                                  "dog", "and", "then", "sleeps", "under", "a", "tree",
                                  "while", "birds", "sing", "Loudly,", "<b>bold</b>", "end."};
    char *doc = (char *)malloc(words * 16 + 1);
    size_t i, len = 0;
    for (i = 0; i < words; i++) {
        const char *w = vocab[tl_rand(&seed) % 20];
        size_t l = strlen(w);
        memcpy(doc + len, w, l);
        len += l;
        doc[len++] = i % 13 == 12 ? '\n' : ' ';
    }
    doc[len] = '\0';
    return doc;
}

static void test_sign_text_equals_sign_of_set(void) {
    static const uint32_t units[] = {MINLSH_UNIT_WORD, MINLSH_UNIT_BYTE, MINLSH_UNIT_CODEPOINT,
                                     MINLSH_UNIT_STOPWORD};
    static const size_t sizes[] = {0, 1, 3, 40, 5000};
    size_t ui, si;
    minlsh_family *f = NULL;
    EXPECT_OK(minlsh_family_new(&f, 100, 21, NULL));
    for (ui = 0; ui < 4; ui++) {
        minlsh_shingler_options o;
        minlsh_shingler *sh = NULL;
        minlsh_shingleset *set = NULL;
        EXPECT_OK(minlsh_shingler_options_init(&o, MINLSH_SHINGLER_OPTIONS_VERSION));
        o.unit = units[ui];
        o.k = ui == 1 ? 6 : 3;
        o.flags = ui % 2 ? MINLSH_NORM_ALL : 0;
        EXPECT_OK(minlsh_shingler_new(&sh, &o, NULL));
        EXPECT_OK(minlsh_shingleset_new(&set, NULL));
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            char *doc = make_document(sizes[si], ui * 10 + si);
            uint32_t want[100], got[100];
            size_t n_out = 0, len = strlen(doc);
            EXPECT_OK(minlsh_shingler_hash(sh, doc, len, set, NULL));
            EXPECT_OK(minlsh_family_sign(f, minlsh_shingleset_view_hashes(set),
                                         minlsh_shingleset_count(set), want, 100, NULL));
            memset(got, 0, sizeof got);
            EXPECT_OK(minlsh_family_sign_text(f, sh, doc, len, got, 100, &n_out));
            EXPECT_EQ_INT(n_out, 100);
            EXPECT_MSG(memcmp(got, want, sizeof got) == 0, "unit %u, %zu words: differs",
                       (unsigned)units[ui], sizes[si]);
            EXPECT_EQ_INT(minlsh_signature_is_empty(got, 100), len == 0);
            if (sizes[si] == 5000) EXPECT(minlsh_shingleset_count(set) > 256);
            free(doc);
        }
        minlsh_shingleset_free(set);
        minlsh_shingler_free(sh);
    }
    minlsh_family_free(f);
}

static void test_sign_text_errors(void) {
    minlsh_family *f = NULL;
    minlsh_shingler *sh = NULL, *small = NULL;
    minlsh_shingler_options o;
    uint32_t sig[16];
    size_t n_out = 0, i;
    const char *text = "a b c d e f g h i j k l m n o p";
    EXPECT_OK(minlsh_family_new(&f, 16, 1, NULL));
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, NULL));
    EXPECT_ERR(minlsh_family_sign_text(NULL, sh, text, 5, sig, 16, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_text(f, NULL, text, 5, sig, 16, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_text(f, sh, NULL, 5, sig, 16, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_text(f, sh, text, 5, NULL, 16, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_family_sign_text(f, sh, text, 5, sig, 15, &n_out), MINLSH_E_BUFSIZE);
    EXPECT_EQ_INT(n_out, 16);
    EXPECT_OK(minlsh_family_sign_text(f, sh, NULL, 0, sig, 16, NULL));
    EXPECT_EQ_INT(minlsh_signature_is_empty(sig, 16), 1);
    /* Over the size limit: TOOBIG and the buffer untouched. */
    EXPECT_OK(minlsh_shingler_options_init(&o, MINLSH_SHINGLER_OPTIONS_VERSION));
    o.max_document_bytes = 10;
    EXPECT_OK(minlsh_shingler_new(&small, &o, NULL));
    for (i = 0; i < 16; i++) sig[i] = 5;
    EXPECT_ERR(minlsh_family_sign_text(f, small, text, strlen(text), sig, 16, NULL),
               MINLSH_E_TOOBIG);
    for (i = 0; i < 16; i++) EXPECT_EQ_INT(sig[i], 5);
    EXPECT_OK(minlsh_family_sign_text(f, small, text, 10, sig, 16, NULL));
    minlsh_shingler_free(small);
    minlsh_shingler_free(sh);
    minlsh_family_free(f);
}

static void test_sign_text_failing_allocator(void) {
    testalloc fa;
    minlsh_allocator al = ta_allocator(&fa);
    minlsh_family *f = NULL;
    minlsh_shingler *sh = NULL;
    char *doc = make_document(3000, 5);
    uint32_t want[64], sig[64];
    long n;
    int rc = MINLSH_E_NOMEM, failures = 0;
    size_t i;
    EXPECT_OK(minlsh_family_new(&f, 64, 2, NULL));
    EXPECT_OK(minlsh_shingler_new(&sh, NULL, &al));
    EXPECT_OK(minlsh_family_sign_text(f, sh, doc, strlen(doc), want, 64, NULL));
    for (n = 1; n < 100 && rc != 0; n++) {
        long live = ta_blocks(&fa);
        ta_fail_nth(&fa, n);
        for (i = 0; i < 64; i++) sig[i] = 9;
        rc = minlsh_family_sign_text(f, sh, doc, strlen(doc), sig, 64, NULL);
        EXPECT_EQ_INT(ta_blocks(&fa), live);
        if (rc != 0) {
            failures++;
            EXPECT_ERR(rc, MINLSH_E_NOMEM);
            for (i = 0; i < 64; i++) EXPECT_EQ_INT(sig[i], 9);
        } else {
            EXPECT(memcmp(sig, want, sizeof sig) == 0);
        }
    }
    EXPECT_EQ_INT(rc, 0);
    printf("  sign_text: %d allocation failures exercised\n", failures);
    ta_fail_nth(&fa, 0);
    minlsh_shingler_free(sh);
    EXPECT_EQ_INT(ta_blocks(&fa), 0);
    minlsh_family_free(f);
    free(doc);
}

int main(void) {
    RUN(test_reduce);
    RUN(test_mulmod_vs_python);
    RUN(test_coefficients_vs_python);
    RUN(test_coefficients_rejection);
    RUN(test_seed1_table);
    RUN(test_coefficients_partial_outputs);
    RUN(test_golden_signatures);
    RUN(test_golden_oph_signatures);
    RUN(test_kernels_match_definition);
    RUN(test_oph_binning_matches_definition);
    RUN(test_merge_is_union);
    RUN(test_update_is_concatenation);
    RUN(test_duplicates_and_order);
    RUN(test_empty_signature);
    RUN(test_estimate_counts_positions);
    RUN(test_estimator_accuracy);
    RUN(test_errors);
    RUN(test_failing_allocator);
    RUN(test_sign_prefix);
    RUN(test_sign_text_equals_sign_of_set);
    RUN(test_sign_text_errors);
    RUN(test_sign_text_failing_allocator);
    return TL_SUMMARY("test_minhash");
}
