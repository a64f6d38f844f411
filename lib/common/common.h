/*
 * lib/common: the bottom layer. Errors, allocation with overflow-checked
 * sizes, CPU detection and the SIMD choice, little-endian load/store, secure
 * zeroing, the file checksum, the atomic file writer, whole-file reads and
 * read-only mappings, the shared file header, and what every saved handle
 * shares (load options, loaders, savers, metadata).
 * Internal: nothing here is installed; every name is minlsh__*.
 *
 * MINLSH_TESTING: what only tests and benches call (the lists of every
 * kernel usable here, memory accounting, single-step arithmetic) is
 * declared and defined inside #ifdef MINLSH_TESTING, throughout lib/. The
 * build compiles it into a separate testing archive,
 * $(BUILD)/testing/libminlsh.a; the release libminlsh.a and .so never
 * contain it (tests/symbols.sh checks).
 */
#ifndef MINLSH_COMMON_H
#define MINLSH_COMMON_H

/* The library defines its experimental functions too. */
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define MINLSH__INLINE static inline __attribute__((always_inline))
#define MINLSH__LIKELY(x) __builtin_expect(!!(x), 1)
#define MINLSH__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define MINLSH__INLINE static inline
#define MINLSH__LIKELY(x) (x)
#define MINLSH__UNLIKELY(x) (x)
#endif

#if defined(__GNUC__)
/* Locality 1 (PREFETCHT2 on x86): to the outer caches, not L1. Callers
 * fetch a few items ahead, so there is time to move the line inward on
 * use; and a prefetch into L1 holds one of the core's few L1 miss buffers
 * until the line arrives, which caps the misses in flight. */
#define MINLSH__PREFETCH(p) __builtin_prefetch((p), 0, 1)
#define MINLSH__PREFETCH_W(p) __builtin_prefetch((p), 1, 1)
#else
#define MINLSH__PREFETCH(p) ((void)(p))
#define MINLSH__PREFETCH_W(p) ((void)(p))
#endif

/* ---- allocation --------------------------------------------------------- */

/* Copy src (or malloc/free when src is NULL) into dst.
 * MINLSH_E_PARAM when src has a NULL function. */
int minlsh__alloc_setup(minlsh_allocator *dst, const minlsh_allocator *src);
/* NULL for size 0 or failure. */
void *minlsh__malloc(const minlsh_allocator *a, size_t size);
/* minlsh__malloc, but never offered to the kernel as huge pages: for large
 * blocks written once in order and read back little (the dedup engine's
 * records), where huge pages save few TLB misses and their faults can cost
 * more than the small pages' (docs/dedup.md has the figures). Freed with
 * minlsh__free. */
void *minlsh__malloc_plain(const minlsh_allocator *a, size_t size);
/* Fault in the pages of the n bytes at p, which the caller is about to
 * write whole, at once (the content is left undefined): fresh memory's
 * pages are then made in one system call instead of a trap each, or by
 * minlsh__touch_pages where the kernel cannot. */
void minlsh__prefault(void *p, size_t n);
/* One write per 4 KiB of the n bytes at p, all inside them. */
void minlsh__touch_pages(void *p, size_t n);
/* Zeroed count*size bytes; NULL on overflow or failure. */
void *minlsh__calloc(const minlsh_allocator *a, size_t count, size_t size);
/* NULL-safe. */
void minlsh__free(const minlsh_allocator *a, void *ptr);
/* Grow *ptr (holding *cap elements of elem bytes, of which used are live) so
 * it holds at least need elements; geometric growth. On failure *ptr and
 * *cap are unchanged. Returns 0, MINLSH_E_NOMEM or MINLSH_E_TOOBIG. */
int minlsh__reserve(const minlsh_allocator *a, void **ptr, size_t *cap,
                    size_t used, size_t need, size_t elem);

/* Per-signature scratch (a signature's values, its band keys or positions):
 * up to MINLSH__K_STACK elements live in the caller's stack array, longer
 * ones (k up to MINLSH_FAMILY_K_MAX) in a heap block, so that no call needs
 * more than a few KiB of stack whatever k is: threads of musl, of Go's cgo
 * calls or of a Python thread_stack_size may have 128 KiB or less. */
#define MINLSH__K_STACK 1024
/* stack (room for stack_n elements of size bytes) when n elements fit
 * there, else n * size bytes from a; NULL when that fails. */
void *minlsh__kbuf_get(const minlsh_allocator *a, void *stack, size_t stack_n, size_t n,
                       size_t size);
/* Releases what minlsh__kbuf_get returned (nothing when it was stack). */
void minlsh__kbuf_put(const minlsh_allocator *a, const void *stack, void *p);

/* Overflow-checked arithmetic: 0 on success, MINLSH_E_TOOBIG on overflow. */
MINLSH__INLINE int minlsh__mul_size(size_t *out, size_t a, size_t b) {
    if (b != 0 && a > SIZE_MAX / b) return MINLSH_E_TOOBIG;
    *out = a * b;
    return 0;
}
MINLSH__INLINE int minlsh__add_size(size_t *out, size_t a, size_t b) {
    if (a > SIZE_MAX - b) return MINLSH_E_TOOBIG;
    *out = a + b;
    return 0;
}

/* Wipe memory in a way the compiler may not elide (keys on free). */
void minlsh__secure_zero(void *p, size_t n);

/* ---- CPU features and the SIMD choice (cpu.c) --------------------------- */

/* SIMD code is x86-64 only (GCC and clang): each kernel file is compiled
 * with its own -m flags (mk/simd.mk) and reached only through run-time
 * dispatch. -DMINLSH_NO_AVX512 / -DMINLSH_NO_AVX2 compile a kernel family
 * out (make check-kernels); everywhere else everything is portable. */
#if (defined(__x86_64__) || defined(__amd64__)) && defined(__GNUC__)
#define MINLSH__X86_64 1
#else
#define MINLSH__X86_64 0
#endif
#if MINLSH__X86_64 && !defined(MINLSH_NO_AVX2)
#define MINLSH__WITH_AVX2 1
#else
#define MINLSH__WITH_AVX2 0
#endif
#if MINLSH__X86_64 && !defined(MINLSH_NO_AVX512)
#define MINLSH__WITH_AVX512 1
#else
#define MINLSH__WITH_AVX512 0
#endif

/* SIMD levels, narrowest first; every level's kernels give the same bits. */
#define MINLSH__SIMD_PORTABLE 0
#define MINLSH__SIMD_AVX2 1   /* AVX2, OS saves YMM state */
#define MINLSH__SIMD_AVX512 2 /* AVX-512 F+DQ+BW+VL, OS saves ZMM and opmask state */
#define MINLSH__SIMD_LEVELS 3

/* What the CPU and OS support (CPUID leaves 1 and 7, then XGETBV), ignoring
 * the build and the environment: MINLSH__SIMD_PORTABLE off x86-64.
 * Computed afresh at each call (the choice below and tests use it). */
int minlsh__cpu_simd_level(void);
/* 1 if this build has the kernels of level (not removed by MINLSH_NO_*). */
int minlsh__simd_level_compiled(int level);
/* The widest level both the CPU supports and this build has: what
 * minlsh__simd_level gives when MINLSH_KERNEL is not set. */
#ifdef MINLSH_TESTING
int minlsh__simd_best_level(void);
#endif
/* The level every dispatcher uses: min(CPU, build), lowered by the
 * environment variable MINLSH_KERNEL ("portable", "avx2", "avx512"; a wider
 * or unknown name is ignored). Chosen on the first call, published with a
 * C11 atomic; the only global mutable state of the library. Thread-safe. */
int minlsh__simd_level(void);
/* "portable", "avx2", "avx512" for a level; "?" otherwise. */
const char *minlsh__simd_level_name(int level);
/* 1 if level is compiled in and the CPU supports it: its kernels may run. */
int minlsh__simd_level_usable(int level);

/* ---- kernel tables: the one shape of every dispatched mechanism ---------- */

/* A mechanism with SIMD kernels declares a struct of its kernels (a name
 * first, then function pointers), one const table of that type per level
 * (portable always; avx2 and avx512 under MINLSH__WITH_*), and an array
 * indexed by level:
 *     static const T *const levels[MINLSH__SIMD_LEVELS] =
 *         MINLSH__KERNEL_LEVELS(&t_portable, &t_avx2, &t_avx512);
 * (a level this build lacks is NULL; its table need not exist). Then
 * MINLSH__KERNEL_DISPATCH(T, prefix, levels) defines, for prototypes the
 * mechanism's header declares:
 *     const T *prefix_active(void)  the table of minlsh__simd_level(): the
 *         level chosen once (CPU, build, MINLSH_KERNEL) and published
 *         atomically in cpu.c. Never NULL, no state of its own, thread-safe.
 * and, in the testing build (MINLSH_TESTING) only:
 *     const T *prefix_for_level(int level)  the table of a level, or NULL
 *         if the level is unknown, not compiled in or not supported by
 *         the CPU
 *     size_t prefix_usable(const T **out, size_t cap)  every usable table,
 *         narrowest first, whatever MINLSH_KERNEL says: writes up to cap
 *         pointers (out may be NULL) and returns how many there are. */
#if MINLSH__WITH_AVX2
#define MINLSH__KERNEL_IF_AVX2(x) (x)
#else
#define MINLSH__KERNEL_IF_AVX2(x) NULL
#endif
#if MINLSH__WITH_AVX512
#define MINLSH__KERNEL_IF_AVX512(x) (x)
#else
#define MINLSH__KERNEL_IF_AVX512(x) NULL
#endif
#define MINLSH__KERNEL_LEVELS(portable, avx2, avx512)                          \
    { (portable), MINLSH__KERNEL_IF_AVX2(avx2), MINLSH__KERNEL_IF_AVX512(avx512) }

#ifdef MINLSH_TESTING
#define MINLSH__KERNEL_DISPATCH_TESTING(T, prefix, levels)                     \
    const T *prefix##_for_level(int level) {                                   \
        return minlsh__simd_level_usable(level) ? (levels)[level] : NULL;      \
    }                                                                          \
    size_t prefix##_usable(const T **out, size_t cap) {                        \
        size_t n = 0;                                                          \
        int level;                                                             \
        for (level = MINLSH__SIMD_PORTABLE; level < MINLSH__SIMD_LEVELS; level++) { \
            if (!minlsh__simd_level_usable(level)) continue;                   \
            if (out != NULL && n < cap) out[n] = (levels)[level];              \
            n++;                                                               \
        }                                                                      \
        return n;                                                              \
    }
#else
#define MINLSH__KERNEL_DISPATCH_TESTING(T, prefix, levels)
#endif
#define MINLSH__KERNEL_DISPATCH(T, prefix, levels)                             \
    const T *prefix##_active(void) { return (levels)[minlsh__simd_level()]; }  \
    MINLSH__KERNEL_DISPATCH_TESTING(T, prefix, levels)

/* ---- little-endian load/store ------------------------------------------ */

MINLSH__INLINE uint32_t minlsh__load32le(const void *p) {
    const uint8_t *b = (const uint8_t *)p;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}
MINLSH__INLINE uint64_t minlsh__load64le(const void *p) {
    const uint8_t *b = (const uint8_t *)p;
    return (uint64_t)minlsh__load32le(b) | ((uint64_t)minlsh__load32le(b + 4) << 32);
}
MINLSH__INLINE void minlsh__store32le(void *p, uint32_t v) {
    uint8_t *b = (uint8_t *)p;
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}
MINLSH__INLINE void minlsh__store64le(void *p, uint64_t v) {
    minlsh__store32le(p, (uint32_t)v);
    minlsh__store32le((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

/* ---- checksum ----------------------------------------------------------- */

/* "sum64" (docs/format.md): four independent lanes over 32-byte stripes,
 * each step a bijection, so any change confined to one 8-byte word is always
 * detected; the length is mixed in at the end. Incremental. */
typedef struct minlsh__sum {
    uint64_t lane[4];
    uint64_t total;
    uint8_t tail[32];
    size_t tail_len;
} minlsh__sum;

void minlsh__sum_init(minlsh__sum *s);
void minlsh__sum_update(minlsh__sum *s, const void *data, size_t len);
uint64_t minlsh__sum_final(const minlsh__sum *s);
uint64_t minlsh__sum64(const void *data, size_t len);
/* The bijective 64-bit mixer used by sum64; also handy for hash tables. */
MINLSH__INLINE uint64_t minlsh__mix64(uint64_t x) {
    x ^= x >> 32;
    x *= UINT64_C(0xD6E8FEB86659FD93);
    x ^= x >> 32;
    x *= UINT64_C(0xD6E8FEB86659FD93);
    x ^= x >> 32;
    return x;
}

/* ---- writer: to a caller buffer or atomically to a file ----------------- */

typedef struct minlsh__writer {
    const minlsh_allocator *alloc;
    int to_file;
    int err;          /* sticky: first error */
    uint64_t total;   /* bytes written so far (also past cap in buffer mode) */
    /* buffer mode */
    uint8_t *dst;
    size_t cap;
    /* file mode */
    int fd;
    int through; /* written in place (a device, a FIFO): no temporary */
    char *path;  /* symbolic links followed */
    char *tmp;
    char *dir; /* the directory to fsync after the rename (allocated up front:
                  nothing may fail for want of memory after the rename) */
    uint8_t *buf;
    size_t buf_len;
    /* running checksum of everything written since minlsh__writer_sum_begin */
    minlsh__sum sum;
} minlsh__writer;

/* Buffer mode: bytes beyond cap are counted but not written; finish then
 * returns MINLSH_E_BUFSIZE. dst may be NULL when cap is 0. */
void minlsh__writer_init_buffer(minlsh__writer *w, void *dst, size_t cap);
/* File mode: creates "<path>.tmp-<16 hex digits>" beside the file path
 * names, its symbolic links followed (the file is replaced, the links
 * stay), with the mode and group of the file it will replace, or of like
 * (may be NULL) when there is none. A path that names a device or a FIFO is
 * written in place, never replaced by a regular file; a directory is
 * refused (errno EISDIR).
 * Errors: MINLSH_E_NULL, MINLSH_E_NOMEM, MINLSH_E_IO (errno as the failing
 * call left it). */
int minlsh__writer_init_file(minlsh__writer *w, const minlsh_allocator *a,
                             const char *path, const char *like);
/* path with the symbolic links of its last component followed (a relative
 * target taken from the link's folder; a dangling link gives its target),
 * in a new string (*out, freed with a), so that one file reached through
 * links has one lock, one journal and one place for its temporaries.
 * Errors: MINLSH_E_NULL, MINLSH_E_NOMEM, MINLSH_E_IO (a loop: ELOOP). */
int minlsh__path_resolve(const minlsh_allocator *a, const char *path, char **out);
void minlsh__writer_put(minlsh__writer *w, const void *p, size_t n);
void minlsh__writer_put64(minlsh__writer *w, uint64_t v);
void minlsh__writer_sum_begin(minlsh__writer *w);
uint64_t minlsh__writer_sum_end(const minlsh__writer *w);
/* Buffer mode: 0 or MINLSH_E_BUFSIZE (size in *n_out, may be NULL).
 * File mode: flush, fsync, rename over path, fsync the directory; on any
 * failure the temporary is removed and the old file left as it was.
 * Always releases the writer's resources. */
int minlsh__writer_finish(minlsh__writer *w, size_t *n_out);
/* Drop everything (file mode: remove the temporary). */
void minlsh__writer_abort(minlsh__writer *w);

/* Read a whole file. Errors: MINLSH_E_NULL, MINLSH_E_IO, MINLSH_E_NOMEM,
 * MINLSH_E_TOOBIG. *data is owned by the caller (minlsh__free with a). */
int minlsh__file_read(const minlsh_allocator *a, const char *path,
                      uint8_t **data, size_t *len);
/* Map a whole regular file read-only (private mapping); an empty file gives
 * *data NULL and *len 0. Errors: MINLSH_E_NULL, MINLSH_E_IO,
 * MINLSH_E_TOOBIG. Release with minlsh__file_unmap(*data, *len). */
int minlsh__file_map(const char *path, const uint8_t **data, size_t *len);
/* NULL-safe. */
void minlsh__file_unmap(const void *data, size_t len);

/* The lock of minlsh_filelock_new in two steps, for a handle that takes it
 * again and again: open PATH.lock once (mode says whether a read-only open
 * will do), then acquire and release it with no path lookup each time.
 * Released, the file stays open; minlsh_filelock_free closes it. acquire's
 * errors: MINLSH_E_BUSY (timeout_ms passed), MINLSH_E_IO. */
int minlsh__filelock_open(minlsh_filelock **out, const char *path, uint32_t mode,
                          const minlsh_allocator *alloc);
int minlsh__filelock_acquire(minlsh_filelock *lk, uint32_t mode, uint32_t timeout_ms);
void minlsh__filelock_release(minlsh_filelock *lk);

/* Files appended to in place (journals): whether path exists (1, 0, or
 * MINLSH_E_IO); open it for writing with everything past keep cut off
 * (and synced); write at an offset; fdatasync; truncate; close. The last 8
 * bytes of a file and its size (a saved file's checksum names it). */
int minlsh__file_exists(const char *path);
/* The device, inode and size of the file at path (links followed).
 * Errors: MINLSH_E_NOTFOUND (no file), MINLSH_E_IO. */
int minlsh__file_stat(const char *path, uint64_t *dev, uint64_t *ino, uint64_t *size);
/* The bytes of a regular file from offset from to its end (none if it is
 * shorter), as minlsh__file_read. */
int minlsh__file_read_from(const minlsh_allocator *a, const char *path, uint64_t from,
                           uint8_t **data, size_t *len);
int minlsh__file_open_at(const char *path, uint64_t keep, int *fd);
int minlsh__fd_write_at(int fd, const void *p, size_t n, uint64_t off);
int minlsh__fd_sync(int fd);
int minlsh__fd_truncate(int fd, uint64_t len);
void minlsh__fd_close(int fd);
int minlsh__file_tail64(const char *path, uint64_t *tail, uint64_t *size);
/* Open a regular file for reading and writing, created (mode 0666 less
 * the umask) if missing, or (writable 0) for reading only; its size in
 * *size. Errors: MINLSH_E_IO. */
int minlsh__file_open_rw(const char *path, int writable, int *fd, uint64_t *size);
/* Read exactly n bytes at off: MINLSH_E_CORRUPT if the file ends first. */
int minlsh__fd_read_at(int fd, void *p, size_t n, uint64_t off);
int minlsh__fd_size(int fd, uint64_t *size);
/* rename(from, to), then fsync to's folder so that the rename survives a
 * power cut. Errors: MINLSH_E_NOMEM, MINLSH_E_IO. */
int minlsh__file_rename(const minlsh_allocator *a, const char *from, const char *to);
/* Remove the files beside path whose names are path's last component
 * followed by one of the suffixes and a temporary file's tail: 16 lowercase
 * hexadecimal digits, "compact", or "compact.tmp-" and 16 such digits (the
 * leftovers of writes a kill cut short); *removed (may be NULL) counts them.
 * Errors: MINLSH_E_NOMEM, MINLSH_E_IO (the folder cannot be read). */
int minlsh__file_remove_temps(const minlsh_allocator *a, const char *path,
                              const char *const *suffixes, size_t n_suffixes,
                              uint64_t *removed);

#include "common/tmpfile.h"

/* ---- the header every minlsh file starts with (docs/format.md) ---------- */

#define MINLSH__HEADER_BYTES 64
#define MINLSH__FORMAT_VERSION 1
#define MINLSH__MAGIC_MATRIX "MINLSHMX"
#define MINLSH__MAGIC_INDEX "MINLSHIX"

/* The largest MINLSH_SCHEME_* value; a file's flags field holds its
 * family's scheme (0, classic, in every file older than the field). */
#define MINLSH__SCHEME_MAX 1u

typedef struct minlsh__header {
    char magic[8];
    uint32_t version;
    uint32_t k;
    uint32_t bands;
    uint32_t rows;
    uint32_t flags;
    uint64_t seed;
    uint64_t config_id;
    uint64_t count;
} minlsh__header;

/* Steps 1-4 of the validation (magic, header checksum, a version from 1 to
 * max_version, field sanity) on the first 64 bytes of buf. */
int minlsh__header_parse(const void *buf, size_t len, const char magic[8],
                         uint32_t max_version, minlsh__header *h);
/* Write the 64-byte header (with its own checksum) and start the payload
 * checksum. */
void minlsh__header_write(minlsh__writer *w, const minlsh__header *h);
/* End the payload: append its checksum. */
void minlsh__trailer_write(minlsh__writer *w);

/* The metadata section that ends every payload: LE64 length, then the bytes.
 * (Call before minlsh__trailer_write.) */
void minlsh__metadata_write(minlsh__writer *w, const void *data, size_t len);
/* Parse and validate a file (docs/format.md, "Validation on load", steps
 * 1-6): magic (MINLSH_E_FORMAT), header checksum and fields
 * (MINLSH_E_CORRUPT), version (MINLSH_E_FORMAT), then that count items of
 * item_fixed + item_per_k * k bytes (k from the validated header), the
 * metadata section and the 8-byte trailer exactly fill the buffer
 * (MINLSH_E_CORRUPT; sizes overflow-checked), and the payload checksum. On
 * success *payload points at the items inside buf, *meta and *meta_len at
 * the metadata bytes. */
int minlsh__header_read_meta(const void *buf, size_t len, const char magic[8],
                             size_t item_fixed, size_t item_per_k, minlsh__header *h,
                             const uint8_t **payload, const uint8_t **meta,
                             size_t *meta_len);
#define MINLSH__METADATA_MAX UINT64_C(0xFFFFFFFF)

/* ---- what every saved handle shares (saved.c) ----------------------------- */

/* The load options every loader takes, checked (version, reserved field,
 * allocator) and with the defaults filled in; family is compared with the
 * file by the layer that knows families. */
typedef struct minlsh__load {
    minlsh_allocator alloc;
    const minlsh_family *family;
    uint64_t config_id;
} minlsh__load;
int minlsh__load_setup(minlsh__load *dst, const minlsh_load_options *opts);

/* A handle's parser: validate the whole file in buf and make a new handle
 * in *(T **)out (the caller's **out, already NULL) with ld's allocator. */
typedef int (*minlsh__parse_fn)(void *out, const void *buf, size_t len,
                                const minlsh__load *ld);
/* The body of every _load_buffer: buf NULL with len > 0 (MINLSH_E_NULL),
 * then the options, then parse. */
int minlsh__load_buffer(void *out, const void *buf, size_t len,
                        const minlsh_load_options *opts, minlsh__parse_fn parse);
/* The body of every _load: path NULL (MINLSH_E_NULL), then the options,
 * then the whole file read with the options' allocator, parsed and freed. */
int minlsh__load_path(void *out, const char *path, const minlsh_load_options *opts,
                      minlsh__parse_fn parse);

/* A handle's writer: the whole file (header to trailer) for handle ctx. */
typedef void (*minlsh__write_fn)(const void *ctx, minlsh__writer *w);
/* The body of every _save: path NULL (MINLSH_E_NULL), then the atomic
 * writer (minlsh__writer_init_file with like, minlsh__writer_finish). */
int minlsh__save_path(const minlsh_allocator *a, const char *path, const char *like,
                      minlsh__write_fn write, const void *ctx);
/* The body of every _save_buffer: buf NULL with cap > 0 (MINLSH_E_NULL),
 * then the bytes, MINLSH_E_BUFSIZE with the size in *n_out if short. */
int minlsh__save_buffer(void *buf, size_t cap, size_t *n_out, minlsh__write_fn write,
                        const void *ctx);

/* A handle's application metadata (minlsh_*_set_metadata): len bytes at
 * data, which is owned (the allocation is `owned`) or borrowed from a
 * mapped file (owned NULL). All zero: no metadata. */
typedef struct minlsh__metadata {
    const uint8_t *data; /* NULL when len is 0 */
    uint8_t *owned;
    size_t len;
} minlsh__metadata;
/* Replace it with a copy of data (which may point into the old metadata).
 * On error it is unchanged. Errors: MINLSH_E_NULL (data NULL, len > 0),
 * MINLSH_E_TOOBIG (over MINLSH__METADATA_MAX), MINLSH_E_NOMEM. */
int minlsh__metadata_set(minlsh__metadata *m, const minlsh_allocator *a, const void *data,
                         size_t len);
/* Point it at len bytes that outlive it (a mapping); frees what it owned. */
void minlsh__metadata_borrow(minlsh__metadata *m, const minlsh_allocator *a, const void *data,
                             size_t len);
/* Copy it into (buf, cap, *n_out). Errors: MINLSH_E_BUFSIZE, MINLSH_E_NULL
 * (buf NULL while there are bytes to copy). */
int minlsh__metadata_copy(const minlsh__metadata *m, void *buf, size_t cap, size_t *n_out);
void minlsh__metadata_free(minlsh__metadata *m, const minlsh_allocator *a);

#endif /* MINLSH_COMMON_H */
