/*
 * Shared by the fuzz targets in fuzz/: the libFuzzer entry point's
 * prototype, a check that aborts (libFuzzer and fuzz/replay.c both report
 * an abort as a failure, with the input that caused it), and a reader that
 * turns the fuzzer's bytes into parameters. Running out of input is not an
 * error: every read then returns zeros, so any byte string is a valid input.
 */
#ifndef MINLSH_FUZZ_H
#define MINLSH_FUZZ_H

#include <minlsh.h>

/* Load options as one argument: the family to check against (NULL: any
 * file), its config id, and an allocator (NULL: malloc/free). */
#define LOAD_OPTS(family, config_id, alloc)                                    \
    (&(minlsh_load_options){MINLSH_LOAD_OPTIONS_VERSION, 0, (family), (config_id), (alloc)})

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* A library call that must succeed (anything but MINLSH_E_NOMEM, which a
 * fuzzer's memory limit may legitimately cause, is a bug). */
#define FUZZ_OK(call)                                                          \
    do {                                                                       \
        int fuzz_rc_ = (call);                                                 \
        if (fuzz_rc_ != 0) {                                                   \
            fprintf(stderr, "%s:%d: %s returned %s\n", __FILE__, __LINE__,     \
                    #call, minlsh_error_name(fuzz_rc_));                       \
            abort();                                                           \
        }                                                                      \
    } while (0)

typedef struct fuzz_in {
    const uint8_t *p;
    size_t n;
} fuzz_in;

static inline uint8_t fuzz_u8(fuzz_in *in) {
    uint8_t v = 0;
    if (in->n > 0) {
        v = in->p[0];
        in->p++;
        in->n--;
    }
    return v;
}

static inline uint32_t fuzz_u32(fuzz_in *in) {
    uint32_t v = 0;
    int i;
    for (i = 0; i < 4; i++) v |= (uint32_t)fuzz_u8(in) << (8 * i);
    return v;
}

static inline uint64_t fuzz_u64(fuzz_in *in) {
    uint64_t lo = fuzz_u32(in);
    return lo | ((uint64_t)fuzz_u32(in) << 32);
}

static inline double fuzz_double(fuzz_in *in) {
    uint64_t bits = fuzz_u64(in);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Up to n bytes (fewer at the end of the input); *got says how many. */
static inline const uint8_t *fuzz_bytes(fuzz_in *in, size_t n, size_t *got) {
    const uint8_t *p = in->p;
    if (n > in->n) n = in->n;
    in->p += n;
    in->n -= n;
    *got = n;
    return p;
}

/* A value in [lo, hi] from one byte (or two when the range is wider). */
static inline uint32_t fuzz_range(fuzz_in *in, uint32_t lo, uint32_t hi) {
    uint32_t span = hi - lo + 1, v;
    if (span == 0) return fuzz_u32(in);
    v = span <= 256 ? fuzz_u8(in) : (uint32_t)fuzz_u8(in) | ((uint32_t)fuzz_u8(in) << 8);
    return lo + v % span;
}

/* The loaders check two checksums before anything else, which random
 * mutations almost never get right. For a loader target, the first input
 * byte chooses: odd, the rest is loaded as it is; even, the header checksum
 * (bytes 56..63) and the trailer (the last 8 bytes) are first recomputed
 * over the rest, so that the fuzzer explores the checks behind them.
 * Returns the (possibly repaired) copy in *out, malloc'ed, exact size. */
uint64_t minlsh__sum64(const void *data, size_t len); /* lib/common (internal) */

static inline void fuzz_file_input(const uint8_t *data, size_t size, uint8_t **out,
                                   size_t *len) {
    int repair = size > 0 && (data[0] & 1) == 0;
    uint8_t *b;
    size_t i;
    if (size > 0) {
        data++;
        size--;
    }
    b = (uint8_t *)malloc(size > 0 ? size : 1);
    FUZZ_CHECK(b != NULL);
    if (size > 0) memcpy(b, data, size);
    if (repair && size >= 64) {
        uint64_t h = minlsh__sum64(b, 56);
        for (i = 0; i < 8; i++) b[56 + i] = (uint8_t)(h >> (8 * i));
        if (size >= 72) {
            h = minlsh__sum64(b + 64, size - 72);
            for (i = 0; i < 8; i++) b[size - 8 + i] = (uint8_t)(h >> (8 * i));
        }
    }
    *out = b;
    *len = size;
}

#endif /* MINLSH_FUZZ_H */
