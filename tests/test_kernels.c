/*
 * The SIMD kernels against the portable ones, directly (not only through
 * the dispatcher), and the dispatch itself (docs/minhash.md section 3):
 *  - CPU detection agrees with the compiler's own CPUID/XGETBV view;
 *  - the chosen level (and minlsh_simd_kernel_name) is the best available
 *    one unless MINLSH_KERNEL narrows it; wider, unknown or unavailable
 *    names are ignored (checked in child processes of this program);
 *  - every MinHash kernel equals the portable one on random inputs and on
 *    the edges (n = 0, 1, W-1, W, W+1 around the lane width W and the block
 *    size; k = 1, 7, W-1, W, W+1, 128, 1023, 1024; hashes 0, p-1, p,
 *    2^64-1, hashes whose h_i lands on 0..7 or p-1..p-8, existing
 *    signature values to merge with, the empty signature) and never touches
 *    memory outside its arguments;
 *  - every SipHash lanes kernel equals the scalar SipHash on batches of all
 *    lengths 0..300, mixed lengths, batch sizes around the lane widths, and
 *    messages that end exactly at the end of their allocation;
 *  - the shingle engine gives the same hashes in the same order with every
 *    SipHash lanes kernel, for every unit and option;
 *  - every band-index kernel (band keys, whole-signature hash, the
 *    estimate's equal-position count) equals the portable one.
 * Kernels the CPU lacks are reported as "skip", not failed. Their speeds
 * are measured by `make bench` (build/bench/bench kernels).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */
#include "testlib.h"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "minlsh.h"
#include "common/common.h"
#include "minhash/kernel.h"
#include "minhash/minhash.h"
#include "shingle/shingle.h"
#include "lsh/lsh.h"

#define P MINLSH_PRIME

static const char *self_path = "";

/* ---- detection and dispatch ------------------------------------------------ */

static void test_cpu_detection(void) {
    int level = minlsh__cpu_simd_level();
    EXPECT(level >= MINLSH__SIMD_PORTABLE && level < MINLSH__SIMD_LEVELS);
#if MINLSH__X86_64
    {
        /* The compiler runtime reads CPUID and XGETBV too: same answer. */
        int want = MINLSH__SIMD_PORTABLE;
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) want = MINLSH__SIMD_AVX2;
        if (want == MINLSH__SIMD_AVX2 && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl"))
            want = MINLSH__SIMD_AVX512;
        EXPECT_EQ_INT(level, want);
    }
#else
    EXPECT_EQ_INT(level, MINLSH__SIMD_PORTABLE);
#endif
    printf("  CPU level: %s; compiled in: portable%s%s; chosen: %s (MINLSH_KERNEL=%s)\n",
           minlsh__simd_level_name(level), MINLSH__WITH_AVX2 ? " avx2" : "",
           MINLSH__WITH_AVX512 ? " avx512" : "", minlsh_simd_kernel_name(),
           getenv("MINLSH_KERNEL") ? getenv("MINLSH_KERNEL") : "(unset)");
}

/* What the choice must be for a given MINLSH_KERNEL value (NULL: unset) in a
 * process whose best level is best. */
static int expected_level_from(int best, const char *env) {
    int level = best, i;
    if (env != NULL)
        for (i = 0; i < MINLSH__SIMD_LEVELS; i++)
            if (strcmp(env, minlsh__simd_level_name(i)) == 0 && i < level) level = i;
    while (!minlsh__simd_level_compiled(level)) level--;
    return level;
}

static int expected_level(const char *env) {
    return expected_level_from(minlsh__simd_best_level(), env);
}

static int level_by_name(const char *name) {
    int i;
    for (i = 0; i < MINLSH__SIMD_LEVELS; i++)
        if (strcmp(name, minlsh__simd_level_name(i)) == 0) return i;
    return -1;
}

/* Run this program as "--print-kernel" with MINLSH_KERNEL set to env (NULL:
 * unset); it prints its choice and its best level. The child computes its
 * own CPU view: under valgrind the parent sees valgrind's CPU, the child
 * (not traced) the real one. Returns 1 if the child chose as it must. */
static int child_choice_ok(const char *env) {
    char cmd[4200], out[128] = "", chosen[64] = "", best[64] = "";
    FILE *f;
    size_t n;
    int want;
    if (env != NULL) setenv("MINLSH_KERNEL", env, 1);
    else unsetenv("MINLSH_KERNEL");
    snprintf(cmd, sizeof cmd, "'%s' --print-kernel", self_path);
    f = popen(cmd, "r");
    if (f == NULL) return 0;
    n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    if (pclose(f) != 0 || sscanf(out, "%63s %63s", chosen, best) != 2) return 0;
    want = expected_level_from(level_by_name(best), env);
    EXPECT_MSG(strcmp(chosen, minlsh__simd_level_name(want)) == 0,
               "MINLSH_KERNEL=%s%s%s: child chose '%s' (its best: %s), expected '%s'",
               env ? "'" : "(unset)", env ? env : "", env ? "'" : "", chosen, best,
               minlsh__simd_level_name(want));
    return level_by_name(best) >= 0;
}

static void test_dispatch_choice(void) {
    int level = minlsh__simd_level(), best = minlsh__simd_best_level(), l;
    EXPECT_EQ_INT(level, expected_level(getenv("MINLSH_KERNEL")));
    EXPECT(best <= minlsh__cpu_simd_level());
    EXPECT(minlsh__simd_level_compiled(best));
    for (l = best + 1; l <= minlsh__cpu_simd_level(); l++) EXPECT(!minlsh__simd_level_compiled(l));
    EXPECT(strcmp(minlsh_simd_kernel_name(), minlsh__simd_level_name(level)) == 0);
    EXPECT(minlsh__minhash_kernel_active() == minlsh__minhash_kernel_for_level(level));
    EXPECT(minlsh__siphash_many_active() == minlsh__siphash_many_for_level(level));
    EXPECT(strcmp(minlsh__minhash_kernel_active()->name, minlsh_simd_kernel_name()) == 0);
    EXPECT(strcmp(minlsh__siphash_many_active()->name, minlsh_simd_kernel_name()) == 0);
    /* Chosen once: the same answer every time. */
    for (l = 0; l < 100; l++) EXPECT_EQ_INT(minlsh__simd_level(), level);
    /* Every level's tables agree with what is compiled in and usable. */
    for (l = 0; l < MINLSH__SIMD_LEVELS; l++) {
        int usable = minlsh__simd_level_compiled(l) && l <= minlsh__cpu_simd_level();
        EXPECT_EQ_INT(minlsh__simd_level_usable(l), usable);
        EXPECT_EQ_INT(minlsh__minhash_kernel_for_level(l) != NULL, usable);
        EXPECT_EQ_INT(minlsh__siphash_many_for_level(l) != NULL, usable);
        EXPECT_EQ_INT(minlsh__lsh_kernels_for_level(l) != NULL, usable);
    }
    EXPECT(strcmp(minlsh__lsh_kernels_active()->name, minlsh_simd_kernel_name()) == 0);
    EXPECT(minlsh__minhash_kernel_for_level(-1) == NULL);
    EXPECT(minlsh__minhash_kernel_for_level(MINLSH__SIMD_LEVELS) == NULL);
    EXPECT(strcmp(minlsh__simd_level_name(99), "?") == 0);
}

/* The environment variable in a fresh process (the choice is made once per
 * process, so only a child can show another one): a narrower name is
 * obeyed; a wider, unknown, differently spelt or empty one is ignored. */
static void test_env_override(void) {
    static const char *values[] = {"portable", "avx2", "avx512", "AVX2", "sse", "", "avx2 ", "avx"};
    size_t i;
    const char *old = getenv("MINLSH_KERNEL");
    char saved[64] = "";
    if (old != NULL) snprintf(saved, sizeof saved, "%s", old);
    for (i = 0; i < sizeof values / sizeof values[0]; i++) EXPECT(child_choice_ok(values[i]));
    EXPECT(child_choice_ok(NULL));
    if (old != NULL) setenv("MINLSH_KERNEL", saved, 1);
    else unsetenv("MINLSH_KERNEL");
}

/* ---- MinHash kernels ---------------------------------------------------------- */

/* a x mod p, and a^-1 mod p by Fermat (p is prime). */
static uint64_t mulmod(uint64_t a, uint64_t x) { return minlsh__minhash_apply_wide(a, 0, x); }
static uint64_t invmod(uint64_t a) {
    uint64_t r = 1, e = P - 2;
    while (e > 0) {
        if (e & 1) r = mulmod(r, a);
        a = mulmod(a, a);
        e >>= 1;
    }
    return r;
}

/* Hashes h (64-bit, any representation of x = h mod p) with h_i(x) = target. */
static uint64_t hash_for(uint64_t a, uint64_t b, uint64_t target, int rep) {
    uint64_t x = mulmod((target + P - b) % P, invmod(a));
    /* x, x + p, x + 2p, ... are the same element; the kernels must agree. */
    uint64_t h = x;
    int r;
    for (r = 0; r < rep && h <= UINT64_MAX - P; r++) h += P;
    return h;
}

/* The kernels other than the portable one, with a "skip" line for every SIMD
 * kernel this build has but the CPU lacks. */
static size_t simd_minhash_kernels(const minlsh__minhash_kernel **out) {
    const minlsh__minhash_kernel *all[8];
    size_t n = minlsh__minhash_kernels(all, 8), i, m = 0;
    int l;
    for (i = 0; i < n && i < 8; i++)
        if (all[i] != &minlsh__minhash_kernel_portable) out[m++] = all[i];
    for (l = MINLSH__SIMD_PORTABLE + 1; l < MINLSH__SIMD_LEVELS; l++)
        if (minlsh__simd_level_compiled(l) && l > minlsh__cpu_simd_level())
            printf("skip minhash kernel %s: this CPU lacks it\n", minlsh__simd_level_name(l));
    return m;
}

/* Run kernel and portable on the same input from the same start; compare.
 * Arrays are allocated to their exact sizes, so ASan and valgrind see any
 * access outside them; sig has a guard word after k values. */
static size_t compare_update(const minlsh__minhash_kernel *kern, const uint64_t *a0,
                             const uint64_t *b0, uint32_t k, const uint64_t *h0, size_t n,
                             const uint32_t *start) {
    uint64_t *a = (uint64_t *)malloc(k * sizeof *a), *b = (uint64_t *)malloc(k * sizeof *b);
    uint64_t *h = n > 0 ? (uint64_t *)malloc(n * sizeof *h) : NULL;
    uint32_t *want = (uint32_t *)malloc((k + 1) * sizeof *want);
    uint32_t *got = (uint32_t *)malloc((k + 1) * sizeof *got);
    size_t bad = 0, i;
    memcpy(a, a0, k * sizeof *a);
    memcpy(b, b0, k * sizeof *b);
    if (n > 0) memcpy(h, h0, n * sizeof *h);
    memcpy(want, start, k * sizeof *want);
    memcpy(got, start, k * sizeof *got);
    want[k] = got[k] = 0xA5A5A5A5u;
    minlsh__minhash_kernel_portable.update(a, b, k, h, n, want);
    kern->update(a, b, k, h, n, got);
    for (i = 0; i <= k; i++) bad += got[i] != want[i];
    free(a);
    free(b);
    free(h);
    free(want);
    free(got);
    return bad;
}

static void test_minhash_kernels_edges(void) {
    const minlsh__minhash_kernel *kern[8];
    size_t nk = simd_minhash_kernels(kern), kx;
    static const uint32_t ks[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 25, 31, 32, 33, 40, 90, 127, 128, 129, 1023, 1024};
    static const size_t ns[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 255, 256, 257, 511, 513, 1000};
    static uint64_t a[1024], b[1024], h[1000];
    static uint32_t start[1024];
    uint64_t st = 42;
    size_t i, ki, ni, checks = 0;
    minlsh__family_derive(99, 1024, a, b);
    for (kx = 0; kx < nk; kx++) {
        for (ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                uint32_t k = ks[ki];
                size_t n = ns[ni], bad;
                int mode;
                for (i = 0; i < n; i++) {
                    uint64_t r = tl_rand(&st);
                    switch (r % 8) {
                    case 0: h[i] = r % 16; break;                      /* 0, 1, ... */
                    case 1: h[i] = P - 1 + (r >> 61) % 3; break;        /* p-1, p, p+1 */
                    case 2: h[i] = UINT64_MAX - (r >> 60); break;      /* near 2^64 */
                    case 3: h[i] = P * (1 + (r >> 62)) + (r >> 63); break; /* 0 mod p */
                    default: h[i] = r; break;
                    }
                }
                for (mode = 0; mode < 3; mode++) {
                    /* the empty signature, random values, and values just
                     * around the result (so the merge decides) */
                    for (i = 0; i < k; i++) start[i] = MINLSH_EMPTY_VALUE;
                    if (mode == 1)
                        for (i = 0; i < k; i++) start[i] = (uint32_t)tl_rand(&st);
                    if (mode == 2 && n > 0) {
                        minlsh__minhash_kernel_portable.update(a, b, k, h, n, start);
                        for (i = 0; i < k; i++) start[i] += (uint32_t)(tl_rand(&st) % 3) - 1;
                    }
                    bad = compare_update(kern[kx], a, b, k, h, n, start);
                    EXPECT_MSG(bad == 0, "kernel %s k=%u n=%zu start %d: %zu values differ",
                               kern[kx]->name, (unsigned)k, n, mode, bad);
                    checks++;
                }
            }
        }
        /* a and b at their extremes */
        {
            static const uint64_t ea[] = {1, 2, P - 1, P - 2, UINT64_C(1) << 60, (UINT64_C(1) << 30) - 1,
                                          UINT64_C(1) << 30, (UINT64_C(1) << 31) + 1, 0x1555555555555555};
            static const uint64_t eb[] = {0, P - 1, 1, P - 2, UINT64_C(1) << 60, 12345, 0, P - 1, 7};
            uint64_t hh[64];
            for (i = 0; i < 64; i++) hh[i] = i < 8 ? (uint64_t[]){0, 1, P - 1, P, P + 1, UINT64_MAX, UINT64_C(1) << 61, UINT64_C(1) << 63}[i] : tl_rand(&st);
            for (i = 0; i < 9; i++) start[i] = MINLSH_EMPTY_VALUE;
            for (i = 1; i <= 64; i++) {
                size_t bad = compare_update(kern[kx], ea, eb, 9, hh, i, start);
                EXPECT_MSG(bad == 0, "kernel %s extreme coefficients n=%zu: %zu differ",
                           kern[kx]->name, i, bad);
            }
        }
    }
    if (nk > 0) printf("  %zu comparisons with portable (%zu other kernels)\n", checks, nk);
}

/* Hashes that put h_i on the values where the folds and the final
 * correction of the SIMD kernels are at their limits: 0..7 (a fold landing
 * at p..p+7), p-1..p-8, and 2^29 multiples (the >> 29 boundaries). */
static void test_minhash_kernels_fold_edges(void) {
    const minlsh__minhash_kernel *kern[8];
    size_t nk = simd_minhash_kernels(kern), kx, i, j;
    static uint64_t a[1024], b[1024], h[4096];
    static uint32_t start[1024];
    static const uint64_t targets[] = {0, 1, 2, 3, 4, 5, 6, 7, P - 1, P - 2, P - 3, P - 8,
                                       (UINT64_C(1) << 29) - 1, UINT64_C(1) << 29,
                                       (UINT64_C(1) << 29) + 1, UINT64_C(3) << 29};
    uint64_t st = 7;
    size_t nt = sizeof targets / sizeof targets[0];
    minlsh__family_derive(2026, 1024, a, b);
    for (i = 0; i < 1024; i++) start[i] = MINLSH_EMPTY_VALUE;
    for (kx = 0; kx < nk; kx++) {
        size_t bad_total = 0;
        /* Function i gets its own edge hashes; every other function sees
         * them as ordinary values. In blocks of 4096 hashes. */
        for (i = 0; i < 1024; i += 4096 / (nt * 4)) {
            size_t n = 0, f;
            for (f = i; f < 1024 && f < i + 4096 / (nt * 4); f++)
                for (j = 0; j < nt; j++) {
                    int rep;
                    for (rep = 0; rep < 4; rep++) h[n++] = hash_for(a[f], b[f], targets[j], rep);
                }
            for (j = 0; j < n; j++) {
                size_t t = (size_t)(tl_rand(&st) % n);
                uint64_t tmp = h[j];
                h[j] = h[t];
                h[t] = tmp;
            }
            /* Each edge value alone (so it is the minimum), then all. */
            for (j = 0; j < n; j += 97) bad_total += compare_update(kern[kx], a, b, 1024, h + j, 1, start);
            bad_total += compare_update(kern[kx], a, b, 1024, h, n, start);
            bad_total += compare_update(kern[kx], a, b, 1000, h, n, start);
        }
        EXPECT_MSG(bad_total == 0, "kernel %s: %zu values differ on fold edges", kern[kx]->name,
                   bad_total);
    }
    /* And the construction itself hits its targets. */
    EXPECT_EQ_U64(minlsh__minhash_apply_wide(a[5], b[5], hash_for(a[5], b[5], 3, 2)), 3);
    EXPECT_EQ_U64(minlsh__minhash_apply_wide(a[9], b[9], hash_for(a[9], b[9], P - 1, 0)), P - 1);
}

static void test_minhash_kernels_random(void) {
    const minlsh__minhash_kernel *kern[8];
    size_t nk = simd_minhash_kernels(kern), kx;
    static uint64_t a[1024], b[1024], h[3000];
    static uint32_t start[1024];
    uint64_t st = 1234;
    int round;
    for (round = 0; round < 40; round++) {
        uint32_t k = 1 + (uint32_t)(tl_rand(&st) % 1024);
        size_t n = (size_t)(tl_rand(&st) % 3000), i;
        minlsh__family_derive(tl_rand(&st), k, a, b);
        for (i = 0; i < n; i++) h[i] = tl_rand(&st);
        for (i = 0; i < k; i++) start[i] = round % 2 ? (uint32_t)tl_rand(&st) : MINLSH_EMPTY_VALUE;
        for (kx = 0; kx < nk; kx++) {
            size_t bad = compare_update(kern[kx], a, b, k, h, n, start);
            EXPECT_MSG(bad == 0, "kernel %s random k=%u n=%zu: %zu differ", kern[kx]->name,
                       (unsigned)k, n, bad);
        }
    }
}

/* Each kernel's one-permutation binning against the portable one, from the
 * same bins: random and edge hashes (as above), values v = h(x) at the
 * ends of [0, p) and on both sides of bin boundaries (v k near a multiple
 * of 2^61), k of every residue mod 8 and n around the vector and block
 * sizes. Arrays of exact size with a guard bin, so ASan sees any stray
 * access. */
static size_t compare_oph(const minlsh__minhash_kernel *kern, uint64_t a, uint64_t b, uint32_t k,
                          const uint64_t *h0, size_t n, const uint32_t *start) {
    uint64_t *h = n > 0 ? (uint64_t *)malloc(n * sizeof *h) : NULL;
    uint32_t *want = (uint32_t *)malloc((k + 1) * sizeof *want);
    uint32_t *got = (uint32_t *)malloc((k + 1) * sizeof *got);
    size_t bad = 0, i;
    if (n > 0) memcpy(h, h0, n * sizeof *h);
    memcpy(want, start, k * sizeof *want);
    memcpy(got, start, k * sizeof *got);
    want[k] = got[k] = 0xA5A5A5A5u;
    minlsh__minhash_kernel_portable.oph(a, b, k, h, n, want);
    kern->oph(a, b, k, h, n, got);
    for (i = 0; i <= k; i++) bad += got[i] != want[i];
    free(h);
    free(want);
    free(got);
    return bad;
}

static void test_oph_kernels(void) {
    const minlsh__minhash_kernel *kern[8];
    size_t nk = simd_minhash_kernels(kern), kx, i, ki, ni, checks = 0;
    static const uint32_t ks[] = {1, 2, 3, 5, 7, 8, 9, 64, 100, 127, 128, 129, 1000, 1023, 1024};
    static const size_t ns[] = {0, 1, 3, 4, 5, 7, 8, 9, 17, 255, 256, 257, 513, 2000};
    static uint64_t a[4], b[4], h[2000];
    static uint32_t start[1024];
    uint64_t st = 77;
    minlsh__family_derive(5, 4, a, b);
    /* a and b at their extremes too */
    a[2] = P - 1, b[2] = P - 1;
    a[3] = (UINT64_C(1) << 30) + 1, b[3] = 0;
    for (kx = 0; kx < nk; kx++) {
        for (ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                uint32_t k = ks[ki];
                size_t n = ns[ni], bad, c = (size_t)(ki + ni) % 4;
                for (i = 0; i < n; i++) {
                    uint64_t r = tl_rand(&st), v;
                    switch (r % 8) {
                    case 0: h[i] = r % 16; break;
                    case 1: h[i] = P - 1 + (r >> 61) % 3; break;
                    case 2: h[i] = UINT64_MAX - (r >> 60); break;
                    case 3: /* v at an end of [0, p) */
                        v = (r >> 8) % 2 ? (r >> 9) % 4 : P - 1 - (r >> 9) % 4;
                        h[i] = hash_for(a[c], b[c], v, (int)((r >> 12) % 3));
                        break;
                    case 4: /* v k just around a bin boundary j 2^61 */
                        v = (((r >> 8) % k) << 61) / k + ((r >> 40) % 5) - 2;
                        h[i] = hash_for(a[c], b[c], v % P, (int)((r >> 12) % 3));
                        break;
                    default: h[i] = r; break;
                    }
                }
                for (i = 0; i < k; i++)
                    start[i] = ni % 2 ? (uint32_t)tl_rand(&st) : MINLSH_EMPTY_VALUE;
                bad = compare_oph(kern[kx], a[c], b[c], k, h, n, start);
                EXPECT_MSG(bad == 0, "kernel %s oph k=%u n=%zu a=%llu: %zu bins differ",
                           kern[kx]->name, (unsigned)k, n, (unsigned long long)a[c], bad);
                checks++;
            }
        }
    }
    if (nk > 0) printf("  %zu binning comparisons with portable (%zu other kernels)\n", checks, nk);
}

/* The public calls give the same bits whichever kernel the process uses:
 * the signature of a fixed input, computed here with the portable kernel. */
static void test_sign_uses_a_correct_kernel(void) {
    minlsh_family *f = NULL;
    uint64_t h[777], a[200], b[200];
    uint32_t got[200], want[200];
    size_t i;
    uint64_t st = 5;
    for (i = 0; i < 777; i++) h[i] = tl_rand(&st);
    EXPECT_OK(minlsh_family_new(&f, 200, 77, NULL));
    EXPECT_OK(minlsh_family_copy_coefficients(f, a, b, 200, NULL));
    EXPECT_OK(minlsh_family_sign(f, h, 777, got, 200, NULL));
    for (i = 0; i < 200; i++) want[i] = MINLSH_EMPTY_VALUE;
    minlsh__minhash_kernel_portable.update(a, b, 200, h, 777, want);
    EXPECT(memcmp(got, want, sizeof got) == 0);
    minlsh_family_free(f);
}

/* ---- SipHash lanes ---------------------------------------------------------------- */

static size_t simd_sip_kernels(const minlsh__siphash_many_kernel **out) {
    const minlsh__siphash_many_kernel *all[8];
    size_t n = minlsh__siphash_many_usable(all, 8), i, m = 0;
    int l;
    EXPECT(n >= 1 && all[0] == &minlsh__siphash_many_portable);
    for (i = 0; i < n && i < 8; i++) out[m++] = all[i]; /* portable too: it is a loop */
    for (l = MINLSH__SIMD_PORTABLE + 1; l < MINLSH__SIMD_LEVELS; l++)
        if (minlsh__simd_level_compiled(l) && l > minlsh__cpu_simd_level())
            printf("skip siphash kernel %s: this CPU lacks it\n", minlsh__simd_level_name(l));
    return m;
}

/* Hash a batch with the kernel and compare with the scalar SipHash. */
static size_t check_batch(const minlsh__siphash_many_kernel *kern, uint64_t k0, uint64_t k1,
                          const uint8_t *const *msg, const size_t *len, size_t n) {
    uint64_t *out = (uint64_t *)malloc((n + 1) * sizeof *out);
    size_t bad = 0, i;
    out[n] = 0x5A5A5A5A5A5A5A5Au;
    kern->hash(k0, k1, msg, len, n, out);
    for (i = 0; i < n; i++) bad += out[i] != minlsh__siphash24_u64(k0, k1, msg[i], len[i]);
    bad += out[n] != 0x5A5A5A5A5A5A5A5Au;
    free(out);
    return bad;
}

static void test_siphash_lanes(void) {
    const minlsh__siphash_many_kernel *kern[8];
    size_t nk = simd_sip_kernels(kern), kx, i, j;
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25,
                                   31, 32, 33, 63, 64, 65, 255, 256, 257, 301};
    uint8_t *pool = (uint8_t *)malloc(4096);
    const uint8_t *msg[301];
    size_t len[301];
    uint8_t *own[301];
    uint64_t st = 99, k0 = 0x0706050403020100u, k1 = 0x0F0E0D0C0B0A0908u;
    for (i = 0; i < 4096; i++) pool[i] = (uint8_t)tl_rand(&st);
    for (kx = 0; kx < nk; kx++) {
        size_t bad = 0, si;
        /* The official-vector key, every length 0..300, in order, then shuffled. */
        for (i = 0; i < 301; i++) {
            msg[i] = pool + (i * 13) % 512;
            len[i] = i;
        }
        bad += check_batch(kern[kx], k0, k1, msg, len, 301);
        for (i = 0; i < 301; i++) {
            size_t t = (size_t)(tl_rand(&st) % 301);
            const uint8_t *pm = msg[i];
            size_t pl = len[i];
            msg[i] = msg[t], len[i] = len[t];
            msg[t] = pm, len[t] = pl;
        }
        bad += check_batch(kern[kx], k0, k1, msg, len, 301);
        /* Batch sizes around the lane widths: mixed lengths, equal
         * lengths (byte k-grams: overlapping windows), one long message
         * among short ones, and NULL for empty messages. */
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si] > 301 ? 301 : sizes[si];
            for (i = 0; i < n; i++) {
                msg[i] = pool + tl_rand(&st) % 3000;
                len[i] = (size_t)(tl_rand(&st) % 60);
            }
            bad += check_batch(kern[kx], k0, k1, msg, len, n);
            for (j = 1; j <= 70; j += j < 10 ? 1 : 7) {
                for (i = 0; i < n; i++) {
                    msg[i] = pool + 100 + i;
                    len[i] = j;
                }
                bad += check_batch(kern[kx], k1, k0, msg, len, n);
            }
            for (i = 0; i < n; i++) {
                msg[i] = i % 3 == 0 ? NULL : pool + i;
                len[i] = i % 3 == 0 ? 0 : (i == n / 2 ? 900 : 1 + i % 30);
            }
            bad += check_batch(kern[kx], k0 ^ i, k1, msg, len, n);
        }
        /* Each message in an allocation of exactly its length: a read
         * past the end (or before the start) is an ASan/valgrind error. */
        for (i = 0; i < 301; i++) {
            own[i] = (uint8_t *)malloc(i > 0 ? i : 1);
            memcpy(own[i], pool + i, i);
            msg[i] = own[i];
            len[i] = i;
        }
        bad += check_batch(kern[kx], k0, k1, msg, len, 301);
        for (i = 0; i < 301; i++) free(own[i]);
        EXPECT_MSG(bad == 0, "siphash kernel %s: %zu hashes differ", kern[kx]->name, bad);
    }
    free(pool);
}

/* ---- the shingle engine with each SipHash lanes kernel ------------------------ */

typedef struct collect {
    uint64_t *v;
    size_t n, cap, calls, bad_batch;
} collect;

static int collect_emit(void *ctx, const uint64_t *hashes, size_t n) {
    collect *c = (collect *)ctx;
    if (n == 0 || n > MINLSH__SHINGLE_BATCH) c->bad_batch++;
    if (c->n + n > c->cap) {
        c->cap = (c->n + n) * 2;
        c->v = (uint64_t *)realloc(c->v, c->cap * sizeof *c->v);
    }
    memcpy(c->v + c->n, hashes, n * sizeof *hashes);
    c->n += n;
    c->calls++;
    return 0;
}

/* Some English-like text, made here (no files outside tests/). */
static const char *const words[] = {
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "I", "this", "are", "or", "his", "from", "at", "which", "but",
    "have", "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
    "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "documents",
    "near-duplicate", "detection", "similarity", "shingles", "signature", "minimum", "hash",
    "function", "family", "probability", "Jaccard", "estimate", "collection", "crawler",
    "website", "mirror", "search", "engine", "article", "paragraph", "sentence", "word",
    "language", "English", "corpus", "random", "permutation", "universal", "prime", "modulus",
    "coefficient", "threshold", "band", "bucket", "candidate", "pair", "cluster", "index",
    "memory", "speed", "vector", "register", "instruction", "processor", "café", "naïve",
    "Zürich", "résumé", "über", "extraordinarily-long-hyphenated-compound-words-appear-sometimes",
    "12345", "3.14159", "e-mail", "don't", "U.S.A.", "<b>bold</b>", "&amp;", "&#233;"};

static size_t make_text(char *buf, size_t cap, uint64_t seed) {
    size_t n = 0, nw = sizeof words / sizeof words[0];
    int in_sentence = 0;
    while (n + 80 < cap) {
        uint64_t r = tl_rand(&seed);
        const char *w = words[(r % 97) < 60 ? r % 50 : r % nw];
        size_t l = strlen(w);
        memcpy(buf + n, w, l);
        n += l;
        if (++in_sentence > 6 && (r >> 32) % 9 == 0) {
            buf[n++] = (r >> 40) % 3 ? '.' : ',';
            in_sentence = 0;
        }
        buf[n++] = (r >> 48) % 23 == 0 ? '\n' : ' ';
    }
    buf[n] = '\0';
    return n;
}

static void test_engine_each_kernel(void) {
    const minlsh__siphash_many_kernel *kern[8];
    size_t nk = simd_sip_kernels(kern), kx, ci;
    static const struct {
        uint32_t unit, k, flags;
    } cfgs[] = {
        {MINLSH_UNIT_BYTE, 1, 0}, {MINLSH_UNIT_BYTE, 4, 0}, {MINLSH_UNIT_BYTE, 5, 0},
        {MINLSH_UNIT_BYTE, 8, 0}, {MINLSH_UNIT_BYTE, 9, MINLSH_NORM_CASEFOLD},
        {MINLSH_UNIT_BYTE, 64, 0}, {MINLSH_UNIT_CODEPOINT, 3, 0},
        {MINLSH_UNIT_CODEPOINT, 7, MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT},
        {MINLSH_UNIT_WORD, 1, 0}, {MINLSH_UNIT_WORD, 3, 0}, {MINLSH_UNIT_WORD, 5, 0},
        {MINLSH_UNIT_WORD, 5, MINLSH_NORM_HTML | MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT},
        {MINLSH_UNIT_WORD, 9, MINLSH_NORM_WHITESPACE}, {MINLSH_UNIT_WORD, 64, 0},
        {MINLSH_UNIT_STOPWORD, 3, 0}, {MINLSH_UNIT_STOPWORD, 5, MINLSH_NORM_CASEFOLD}};
    static char text[60000];
    size_t tl = make_text(text, sizeof text, 11), sizes[4];
    char *longword = (char *)malloc(40000);
    size_t si;
    memset(longword, 'x', 39999);
    longword[39999] = '\0';
    longword[100] = ' ';
    longword[20000] = ' ';
    sizes[0] = 0, sizes[1] = 37, sizes[2] = 4000, sizes[3] = tl; /* tl > the 16 KiB block */
    for (ci = 0; ci < sizeof cfgs / sizeof cfgs[0]; ci++) {
        minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
        minlsh_shingler *sh = NULL;
        o.unit = cfgs[ci].unit;
        o.k = cfgs[ci].k;
        o.flags = cfgs[ci].flags;
        EXPECT_OK(minlsh_shingler_new(&sh, &o, NULL));
        if (sh == NULL) continue;
        for (si = 0; si < 5; si++) {
            const char *doc = si < 4 ? text : longword;
            size_t dl = si < 4 ? sizes[si] : 39999;
            collect want = {NULL, 0, 0, 0, 0};
            EXPECT_OK(minlsh__shingler_each_kernel(sh, doc, dl, collect_emit, &want,
                                                   &minlsh__siphash_many_portable));
            for (kx = 0; kx < nk; kx++) {
                collect got = {NULL, 0, 0, 0, 0};
                EXPECT_OK(minlsh__shingler_each_kernel(sh, doc, dl, collect_emit, &got, kern[kx]));
                EXPECT_MSG(got.n == want.n && got.calls == want.calls && got.bad_batch == 0 &&
                               (want.n == 0 || memcmp(got.v, want.v, want.n * sizeof *got.v) == 0),
                           "engine with %s, config %zu, doc %zu: %zu hashes in %zu calls, "
                           "expected %zu in %zu",
                           kern[kx]->name, ci, si, got.n, got.calls, want.n, want.calls);
                free(got.v);
            }
            /* The portable kernel is the scalar SipHash of each shingle:
             * the set is minlsh_shingler_hash's (the documented bytes). */
            if (si == 2) {
                minlsh_shingleset *set = NULL;
                size_t i, found = 0;
                const uint64_t *sv;
                size_t sn;
                EXPECT_OK(minlsh_shingleset_new(&set, NULL));
                EXPECT_OK(minlsh_shingler_hash(sh, doc, dl, set, NULL));
                sv = minlsh_shingleset_view_hashes(set);
                sn = minlsh_shingleset_count(set);
                for (i = 0; i < want.n; i++) {
                    size_t lo = 0, hi = sn; /* the set is sorted */
                    while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (sv[mid] < want.v[i]) lo = mid + 1;
                        else hi = mid;
                    }
                    found += lo < sn && sv[lo] == want.v[i];
                }
                EXPECT_EQ_INT(found, want.n);
                minlsh_shingleset_free(set);
            }
            free(want.v);
        }
        minlsh_shingler_free(sh);
    }
    free(longword);
}

/* ---- band-index kernels ------------------------------------------------------ */

/* The end of 64 writable dwords followed by a page that cannot be read
 * (*map, *map_bytes: to unmap); where that cannot be made, of a heap
 * block of 64 dwords (*map NULL), where ASan still sees a read past it. */
static uint32_t *guarded_end(void **map, size_t *map_bytes, uint32_t *heap) {
    long page = sysconf(_SC_PAGESIZE);
    *map = NULL;
    *map_bytes = 0;
    if (page > 0 && (size_t)page >= 64 * sizeof(uint32_t)) {
        uint8_t *p = (uint8_t *)mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED && mprotect(p + page, (size_t)page, PROT_NONE) == 0) {
            *map = p;
            *map_bytes = 2 * (size_t)page;
            return (uint32_t *)(void *)(p + page);
        }
        if (p != MAP_FAILED) munmap(p, 2 * (size_t)page);
    }
    return heap + 64;
}

/* Every band-key implementation this CPU and build have gives the bits of
 * the scalar specification, for every (b, r) shape of k = 64 and a few
 * long ones. */
static void test_band_key_kernels(void) {
    uint32_t sig[1024];
    uint64_t want[1024], got[1024], st = 5;
    size_t i, map_bytes;
    int level, tried = 0;
    void *map;
    uint32_t *heap = (uint32_t *)malloc(64 * sizeof *heap), *guard_end;
    EXPECT(heap != NULL);
    if (heap == NULL) return;
    guard_end = guarded_end(&map, &map_bytes, heap);
    for (i = 0; i < 1024; i++) sig[i] = (uint32_t)tl_rand(&st);
    for (level = MINLSH__SIMD_PORTABLE; level < MINLSH__SIMD_LEVELS; level++) {
        const minlsh__lsh_kernels *kn = minlsh__lsh_kernels_for_level(level);
        minlsh__lsh_band_keys_fn fn;
        uint32_t b, r;
        if (kn == NULL) continue;
        fn = kn->band_keys;
        tried++;
        for (r = 1; r <= 64; r++)
            for (b = 1; b * r <= 64; b++) {
                /* The signature exactly b r long, ending where an
                 * unreadable page starts (a read past it faults, gathers
                 * included), then inside a longer array. */
                uint32_t *exact = guard_end - (size_t)b * r;
                memcpy(exact, sig, (size_t)b * r * sizeof *exact);
                minlsh__lsh_band_keys_portable(sig, b, r, want);
                memset(got, 0, sizeof got);
                fn(exact, b, r, got);
                EXPECT_MSG(memcmp(got, want, b * sizeof *got) == 0, "level %d b=%u r=%u", level,
                           (unsigned)b, (unsigned)r);
                EXPECT_EQ_U64(got[b], 0); /* nothing written past b */
                fn(sig, b, r, got);
                EXPECT(memcmp(got, want, b * sizeof *got) == 0);
            }
        {
            static const uint32_t shapes[][2] = {{9, 13}, {20, 5},   {18, 5},  {25, 5},
                                                 {33, 3}, {1024, 1}, {17, 60}, {3, 341}};
            size_t si;
            for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                minlsh__lsh_band_keys_portable(sig, shapes[si][0], shapes[si][1], want);
                fn(sig, shapes[si][0], shapes[si][1], got);
                EXPECT(memcmp(got, want, shapes[si][0] * sizeof *got) == 0);
            }
        }
    }
    if (map != NULL) munmap(map, map_bytes);
    free(heap);
    EXPECT(tried >= 1);
    printf("  band-key kernels checked: %d (CPU level %s)\n", tried,
           minlsh__simd_level_name(minlsh__cpu_simd_level()));
}

/* Every signature-hash implementation gives the portable bits, at every k
 * from 1 to 300 (tails of every length, odd k) and the maximum, on random
 * values and on the extremes 0 and 0xFFFFFFFF. */
static void test_sig_hash_kernels(void) {
    static uint32_t sig[MINLSH_FAMILY_K_MAX];
    uint64_t st = 11;
    int level, tried = 0, fill;
    for (fill = 0; fill < 3; fill++) {
        size_t i;
        for (i = 0; i < MINLSH_FAMILY_K_MAX; i++)
            sig[i] = fill == 0 ? (uint32_t)tl_rand(&st) : fill == 1 ? 0 : UINT32_C(0xFFFFFFFF);
        for (level = MINLSH__SIMD_PORTABLE; level < MINLSH__SIMD_LEVELS; level++) {
            const minlsh__lsh_kernels *kn = minlsh__lsh_kernels_for_level(level);
            uint32_t k;
            if (kn == NULL) continue;
            if (fill == 0) tried++;
            for (k = 1; k <= MINLSH_FAMILY_K_MAX; k = k < 300 ? k + 1 : k * 2)
                EXPECT_MSG(kn->sig_hash(sig, k) == minlsh__lsh_sig_hash_portable(sig, k),
                           "level %d k=%u fill %d", level, (unsigned)k, fill);
        }
    }
    /* Position matters: swapping two values changes the hash. */
    {
        uint32_t t, v;
        uint64_t h0;
        for (v = 0; v < 128; v++) sig[v] = (uint32_t)tl_rand(&st);
        h0 = minlsh__lsh_sig_hash(sig, 128);
        t = sig[3];
        sig[3] = sig[4];
        sig[4] = t;
        EXPECT(minlsh__lsh_sig_hash(sig, 128) != h0);
    }
    EXPECT(tried >= 1);
}

/* Every equal-count implementation (the estimate's numerator) agrees with
 * the portable one at every k from 1 to 300 and the maximum, for pairs
 * agreeing nowhere, everywhere, and at random places (including the tail
 * past the last whole vector). */
static void test_equal_count_kernels(void) {
    static uint32_t a[MINLSH_FAMILY_K_MAX], b[MINLSH_FAMILY_K_MAX];
    uint64_t st = 12;
    int level, tried = 0, mode;
    for (mode = 0; mode < 3; mode++) {
        size_t i;
        for (i = 0; i < MINLSH_FAMILY_K_MAX; i++) {
            a[i] = (uint32_t)tl_rand(&st);
            b[i] = mode == 0 ? ~a[i] : mode == 1 ? a[i] : (tl_rand(&st) & 1 ? a[i] : a[i] ^ 1u);
        }
        for (level = MINLSH__SIMD_PORTABLE; level < MINLSH__SIMD_LEVELS; level++) {
            const minlsh__lsh_kernels *kn = minlsh__lsh_kernels_for_level(level);
            uint32_t k;
            if (kn == NULL) continue;
            if (mode == 0) tried++;
            for (k = 1; k <= MINLSH_FAMILY_K_MAX; k = k < 300 ? k + 1 : k * 2) {
                uint32_t want = minlsh__lsh_equal_count_portable(a, b, k);
                EXPECT_MSG(kn->equal_count(a, b, k) == want, "level %d k=%u mode %d", level,
                           (unsigned)k, mode);
                if (mode == 0) EXPECT_EQ_INT(want, 0);
                if (mode == 1) EXPECT_EQ_INT(want, k);
            }
        }
    }
    EXPECT(tried >= 1);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--print-kernel") == 0) {
        printf("%s %s\n", minlsh_simd_kernel_name(),
               minlsh__simd_level_name(minlsh__simd_best_level()));
        return 0;
    }
    self_path = argv[0];
    RUN(test_cpu_detection);
    RUN(test_dispatch_choice);
    RUN(test_env_override);
    RUN(test_minhash_kernels_edges);
    RUN(test_minhash_kernels_fold_edges);
    RUN(test_minhash_kernels_random);
    RUN(test_oph_kernels);
    RUN(test_sign_uses_a_correct_kernel);
    RUN(test_siphash_lanes);
    RUN(test_engine_each_kernel);
    RUN(test_band_key_kernels);
    RUN(test_sig_hash_kernels);
    RUN(test_equal_count_kernels);
    return TL_SUMMARY("test_kernels");
}
