/*
 * The test allocator: one minlsh_allocator for every test and fuzz target
 * that needs to count, meter or refuse allocations.
 *
 *   testalloc ta;
 *   minlsh_allocator al = ta_allocator(&ta);  // zeroes ta
 *   ta_fail_nth(&ta, 3);    // the 3rd allocation from now fails, only it
 *   ta_fail_from(&ta, 3);   // the 3rd from now and every later one fail
 *   ta_fail_nth(&ta, 0);    // stop failing (either kind)
 *   ta_blocks(&ta), ta_bytes(&ta), ta_peak(&ta)   // live blocks, bytes, peak
 *
 * A request over ta_refuse_over(&ta, limit) bytes fails too (not counted as
 * an injected failure: it is a policy, not a fault). Counters are atomic, so
 * one allocator may be shared by the library's worker threads; arm and read
 * it between calls. Each block carries its size in front of it, so live and
 * peak bytes are exact; the block itself still ends where the caller's
 * request ends (ASan and valgrind see overruns).
 *
 * Self-contained (no testlib.h), and every function is static inline, so a
 * file that uses only part of it compiles without warnings; the fuzz targets
 * include it as "../tests/testalloc.h".
 */
#ifndef MINLSH_TESTALLOC_H
#define MINLSH_TESTALLOC_H

#include <minlsh.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct testalloc {
    atomic_long calls;       /* allocations attempted */
    atomic_long frees;       /* frees (NULL included) */
    atomic_long bad_frees;   /* frees of NULL: the contract says never */
    atomic_long fail_at;     /* this call fails (0: none) */
    atomic_long fail_from;   /* this call and every later one fail (0: none) */
    atomic_long failed;      /* failures injected since the last arming */
    atomic_long blocks;      /* live blocks */
    atomic_size_t bytes;     /* live bytes (as requested) */
    atomic_size_t peak;      /* most live bytes since the last ta_reset_peak */
    atomic_size_t max_size;  /* largest single request */
    atomic_size_t refuse_over; /* requests over this many bytes fail (0: none) */
} testalloc;

/* Room in front of each block for its size, keeping max_align_t alignment. */
#define TA_HEADER sizeof(max_align_t)

static inline void *ta_alloc(void *opaque, size_t size) {
    testalloc *t = (testalloc *)opaque;
    long c = atomic_fetch_add(&t->calls, 1) + 1;
    long at = atomic_load(&t->fail_at), from = atomic_load(&t->fail_from);
    size_t limit = atomic_load(&t->refuse_over), old, now;
    unsigned char *p;
    old = atomic_load(&t->max_size);
    while (size > old && !atomic_compare_exchange_weak(&t->max_size, &old, size)) {
    }
    if ((at > 0 && c == at) || (from > 0 && c >= from)) {
        atomic_fetch_add(&t->failed, 1);
        return NULL;
    }
    if ((limit > 0 && size > limit) || size > SIZE_MAX - TA_HEADER) return NULL;
    p = (unsigned char *)malloc(size + TA_HEADER);
    if (p == NULL) return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&t->blocks, 1);
    now = atomic_fetch_add(&t->bytes, size) + size;
    old = atomic_load(&t->peak);
    while (now > old && !atomic_compare_exchange_weak(&t->peak, &old, now)) {
    }
    return p + TA_HEADER;
}

static inline void ta_free(void *opaque, void *ptr) {
    testalloc *t = (testalloc *)opaque;
    unsigned char *p;
    size_t size;
    atomic_fetch_add(&t->frees, 1);
    if (ptr == NULL) {
        atomic_fetch_add(&t->bad_frees, 1);
        return;
    }
    p = (unsigned char *)ptr - TA_HEADER;
    memcpy(&size, p, sizeof size);
    atomic_fetch_sub(&t->blocks, 1);
    atomic_fetch_sub(&t->bytes, size);
    free(p);
}

/* Zeroes *t (no failures armed) and returns the allocator that uses it. */
static inline minlsh_allocator ta_allocator(testalloc *t) {
    minlsh_allocator al;
    atomic_init(&t->calls, 0);
    atomic_init(&t->frees, 0);
    atomic_init(&t->bad_frees, 0);
    atomic_init(&t->fail_at, 0);
    atomic_init(&t->fail_from, 0);
    atomic_init(&t->failed, 0);
    atomic_init(&t->blocks, 0);
    atomic_init(&t->bytes, 0);
    atomic_init(&t->peak, 0);
    atomic_init(&t->max_size, 0);
    atomic_init(&t->refuse_over, 0);
    al.alloc = ta_alloc;
    al.free = ta_free;
    al.opaque = t;
    return al;
}

/* The nth allocation from now fails, and only it; n = 0 stops all failing.
 * Arming (n > 0) restarts the count of injected failures. */
static inline void ta_fail_nth(testalloc *t, long n) {
    if (n > 0) atomic_store(&t->failed, 0);
    atomic_store(&t->fail_from, 0);
    atomic_store(&t->fail_at, n > 0 ? atomic_load(&t->calls) + n : 0);
}

/* The nth allocation from now and every later one fail; n = 0 stops all
 * failing. Arming (n > 0) restarts the count of injected failures. */
static inline void ta_fail_from(testalloc *t, long n) {
    if (n > 0) atomic_store(&t->failed, 0);
    atomic_store(&t->fail_at, 0);
    atomic_store(&t->fail_from, n > 0 ? atomic_load(&t->calls) + n : 0);
}

/* Requests over limit bytes fail (0: no limit). */
static inline void ta_refuse_over(testalloc *t, size_t limit) {
    atomic_store(&t->refuse_over, limit);
}

static inline long ta_calls(testalloc *t) { return atomic_load(&t->calls); }
static inline long ta_frees(testalloc *t) { return atomic_load(&t->frees); }
static inline long ta_bad_frees(testalloc *t) { return atomic_load(&t->bad_frees); }
static inline long ta_failed(testalloc *t) { return atomic_load(&t->failed); }
static inline long ta_blocks(testalloc *t) { return atomic_load(&t->blocks); }
static inline size_t ta_bytes(testalloc *t) { return atomic_load(&t->bytes); }
static inline size_t ta_peak(testalloc *t) { return atomic_load(&t->peak); }
static inline size_t ta_max_size(testalloc *t) { return atomic_load(&t->max_size); }

/* Peak bytes are measured from now on (starting at the live bytes). */
static inline void ta_reset_peak(testalloc *t) {
    atomic_store(&t->peak, atomic_load(&t->bytes));
}

#endif
