/*
 * minlsh: near-duplicate detection with shingling, MinHash and LSH.
 * Copyright (c) 2026 the minlsh authors. MIT licence, see LICENSE.
 *
 * The pipeline, one opaque handle per stage:
 *
 *   text --shingler--> set of 64-bit shingle hashes (keyed SipHash-2-4)
 *        --family----> signature: k 32-bit MinHash values
 *        --sigmatrix-> many signatures, one column per document, saved to disk
 *        --index-----> b x r band index: candidate pairs, verified pairs, clusters
 *
 * and two workflows built on them: the store (a crawler's index at a path,
 * shared by processes, check-and-insert, durable per commit) and, in the
 * experimental part, the dedup engine (a whole batch: exact copies,
 * candidates, verification, keep/drop decisions).
 *
 * Conventions (docs/api.md has the long form). Every function follows them;
 * the comments below state only what a function adds.
 *  - Names: minlsh_<noun>_<verb>[_<part>]. The nouns of the stable part are
 *    shingler, shingleset, shinglestream, family, signature, sigmatrix,
 *    plan, index, pairs, clusters and store; the experimental part adds
 *    dedup, journal, filelock, file, preset, buckets, sets, pool, norm
 *    (flags) and scratch. A result built from a source is
 *    minlsh_<result>_from_<source>. Copying out of a handle into caller
 *    memory is _copy_<part>; a borrowed pointer into a handle is
 *    _view_<part>, valid until the handle is next modified or freed.
 *  - Errors: fallible functions return int: 0 (MINLSH_OK) on success, a
 *    negative MINLSH_E_* code otherwise; minlsh_strerror() turns it into
 *    text. There is no hidden "last error" state. On error, outputs are
 *    unspecified unless stated and the handles passed in are unchanged.
 *  - Parameter order, by the size of what comes out: (1) outputs of a fixed
 *    size: the new handle (**out), scalars (double *out, uint64_t *id), one
 *    struct (a result, statistics); (2) the handle acted on; (3) the inputs;
 *    (4) outputs whose size the inputs decide: a buffer as (ptr, cap,
 *    size_t *n_out), an array of one entry per input, or a handle to fill;
 *    (5) by-products (status arrays, counters; optional ones may be NULL);
 *    (6) an allocator. So a _copy_ of one value or struct puts it first
 *    (minlsh_pairs_copy_pair, minlsh_index_copy_stats) and a _copy_ into a
 *    buffer puts the buffer after the handle (minlsh_index_copy_ids).
 *  - Handles: minlsh_<noun>_new(&out, ...), _load, _map, _open and
 *    _from_<source> set *out to NULL on failure and leak nothing.
 *    minlsh_<noun>_free(NULL) is a no-op. Accessors returning a plain value
 *    return 0 for NULL.
 *  - Buffers: a short buffer gives MINLSH_E_BUFSIZE with the size needed in
 *    *n_out. The pointer may be NULL when cap is 0: that is how to ask for
 *    the size. n_out may always be NULL. The library never returns memory the
 *    caller must free().
 *  - Pairs: every function that produces pairs takes max_pairs (0: no
 *    limit); past it nothing is built and MINLSH_E_TOOBIG is returned.
 *  - Allocators: a function that makes a handle takes an optional allocator
 *    last (loaders and minlsh_store_open take it in their options); NULL
 *    means malloc/free. The allocator is copied into the handle and used for
 *    everything it allocates; an allocator with a NULL function gives
 *    MINLSH_E_PARAM. A call that makes no handle of its own allocates with
 *    the allocator of the handle it works for: a stream, pairs and clusters
 *    of an index use the shingler's or index's, a journal its index's,
 *    minlsh_family_sign_batch the shingler's. Calls over flat arrays take
 *    one last (NULL: the shingler's where they have one, else malloc/free).
 *    No other pointer the caller passes is kept after the call returns.
 *  - Options structs start with a version field (set it to the
 *    MINLSH_*_OPTIONS_VERSION you compiled against) and are initialised from
 *    their MINLSH_*_OPTIONS_INIT macro or _options_init() function; a newer
 *    library accepts every older version. A NULL options pointer means the
 *    _INIT macro's values, with one exception kept for 0.1 programs:
 *    minlsh_shingler_new(out, NULL, alloc) means the defaults of options
 *    version 1 (flags 0), not MINLSH_SHINGLER_OPTIONS_INIT (flags
 *    MINLSH_NORM_CJK_WORDS); a shingler pointer NULL inside
 *    minlsh_store_options means MINLSH_SHINGLER_OPTIONS_INIT.
 *  - Threads: any number of threads may call functions that take a handle
 *    as const on the same handle at once; a function that takes a handle
 *    non-const needs exclusive access to it, which the caller provides.
 *    Functions without a handle are thread-safe. The library keeps no global
 *    state (except the SIMD choice, made once and published atomically).
 *    It takes no locks but file locks (flock of PATH.lock): those a store
 *    takes for its own changes, and minlsh_filelock's. It creates threads
 *    only in minlsh_family_sign_batch (joined before it returns) and for a
 *    dedup engine (its threads option: they wait between the engine's calls
 *    and are joined by minlsh_dedup_free), and in a minlsh_pool (joined by
 *    minlsh_pool_free).
 *  - Stability: everything declared here is part of the ABI from the
 *    release that added it on (version nodes MINLSH_0.1, and MINLSH_0.2
 *    for the store and the signing schemes). Functions declared under
 *    MINLSH_EXPERIMENTAL_API (at the end of this file) may change or go in
 *    any release; they are exported in their own version node,
 *    MINLSH_EXPERIMENTAL.
 *  - For equal keys, seeds and parameters, every number this library produces
 *    (shingle hashes, coefficients, signatures, band keys, files) is
 *    bit-identical on every platform and compiler.
 */
#ifndef MINLSH_H
#define MINLSH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* On Windows the library's own DLL build defines MINLSH_BUILDING_DLL
 * (exports); a static build of the library, and every program linking it
 * statically, defines MINLSH_STATIC; anything else imports from the DLL.
 * Elsewhere the public functions have default visibility and everything
 * else in the library is hidden (-fvisibility=hidden). */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(MINLSH_BUILDING_DLL)
#define MINLSH_API __declspec(dllexport)
#elif defined(MINLSH_STATIC)
#define MINLSH_API
#else
#define MINLSH_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#define MINLSH_API __attribute__((visibility("default")))
#else
#define MINLSH_API
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

#define MINLSH_VERSION_MAJOR 0
#define MINLSH_VERSION_MINOR 2
#define MINLSH_VERSION_PATCH 0
#define MINLSH_VERSION_NUMBER                                                  \
    (MINLSH_VERSION_MAJOR * 10000 + MINLSH_VERSION_MINOR * 100 +               \
     MINLSH_VERSION_PATCH)
#define MINLSH_VERSION_STRING "0.2.0"

/* The version of the library actually linked (compare with the macros to
 * detect a header/library mismatch). */
MINLSH_API uint32_t minlsh_version_number(void);
MINLSH_API const char *minlsh_version_string(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* Values are part of the ABI and are never renumbered. */
#define MINLSH_OK 0
#define MINLSH_E_NULL (-1)        /* a required pointer argument is NULL */
#define MINLSH_E_PARAM (-2)       /* a parameter is out of range (k = 0, b*r > k...) */
#define MINLSH_E_NOMEM (-3)       /* an allocation failed */
#define MINLSH_E_BUFSIZE (-4)     /* output buffer too small; size needed in *n_out */
#define MINLSH_E_IO (-5)          /* a system call on a file failed */
#define MINLSH_E_FORMAT (-6)      /* not a minlsh file, or an unsupported format version */
#define MINLSH_E_CORRUPT (-7)     /* truncated file, bad checksum or inconsistent content */
#define MINLSH_E_MISMATCH (-8)    /* data made with another family, seed, k, key or shape */
#define MINLSH_E_TOOBIG (-9)      /* input over a configured or representable limit */
#define MINLSH_E_EXISTS (-10)     /* the id is already in the index */
#define MINLSH_E_NOTFOUND (-11)   /* no such id or position */
#define MINLSH_E_VERSION (-12)    /* options struct version not supported */
#define MINLSH_E_STATE (-13)      /* call not valid in the handle's current state */
#define MINLSH_E_UNSUPPORTED (-14) /* feature not available in this build or on this CPU */
#define MINLSH_E_BUSY (-15)       /* a lock is held elsewhere and the wait for it timed out */

/* A static, human-readable description. Never NULL (unknown codes get a
 * generic text). */
MINLSH_API const char *minlsh_strerror(int code);
/* The symbolic name of a code ("MINLSH_E_PARAM"), or "MINLSH_E_UNKNOWN".
 * Never NULL. */
MINLSH_API const char *minlsh_error_name(int code);

/* ------------------------------------------------------------------------ */
/* Allocator                                                                */
/* ------------------------------------------------------------------------ */

/* A custom allocator. This layout is frozen: it never changes.
 * alloc(opaque, size) returns memory suitably aligned for any type, or NULL.
 * free(opaque, ptr) releases it (never called with NULL).
 * Both functions must be set; they are called from whatever thread uses the
 * handle. Pass NULL wherever an allocator is accepted to use malloc/free. */
typedef struct minlsh_allocator {
    void *(*alloc)(void *opaque, size_t size);
    void (*free)(void *opaque, void *ptr);
    void *opaque;
} minlsh_allocator;

/* ------------------------------------------------------------------------ */
/* Constants and their function twins (for FFI users)                       */
/* ------------------------------------------------------------------------ */

#define MINLSH_KEY_BYTES 16          /* SipHash key */
#define MINLSH_FINGERPRINT_BYTES 16  /* document fingerprint */
#define MINLSH_SHINGLE_K_MAX 64      /* units per shingle */
#define MINLSH_FAMILY_K_MAX 16384    /* hash functions per family */
#define MINLSH_PRIME UINT64_C(0x1FFFFFFFFFFFFFFF) /* 2^61 - 1 */
#define MINLSH_EMPTY_VALUE UINT32_C(0xFFFFFFFF)   /* every value of an empty-set signature */

MINLSH_API size_t minlsh_key_bytes(void);
MINLSH_API size_t minlsh_fingerprint_bytes(void);
MINLSH_API uint32_t minlsh_shingle_k_max(void);
MINLSH_API uint32_t minlsh_family_k_max(void);
MINLSH_API uint64_t minlsh_prime(void);
MINLSH_API uint32_t minlsh_empty_value(void);

/* ------------------------------------------------------------------------ */
/* SIMD kernels                                                             */
/* ------------------------------------------------------------------------ */

/* The name of the MinHash kernel chosen for this CPU ("portable", "avx2",
 * "avx512"). The choice is made once, on first use, from CPUID and XGETBV,
 * and published atomically; every kernel gives bit-identical results. The
 * environment variable MINLSH_KERNEL, read at that moment, may name a
 * narrower kernel to use instead (for tests and benchmarks); a wider,
 * unavailable or unknown name is ignored. Never NULL (a static string). */
MINLSH_API const char *minlsh_simd_kernel_name(void);

/* ------------------------------------------------------------------------ */
/* Hashing primitives                                                       */
/* ------------------------------------------------------------------------ */

/* SipHash-2-4 with a 64-bit tag. *out is the tag as an integer (the published
 * test vectors are its little-endian bytes). msg may be NULL when len is 0.
 * Errors: MINLSH_E_NULL. */
MINLSH_API int minlsh_siphash24(uint64_t *out, const uint8_t key[16],
                                const void *msg, size_t len);

/* SipHash-2-4 with a 128-bit tag, written as 16 bytes in output order.
 * Errors: MINLSH_E_NULL. */
MINLSH_API int minlsh_siphash24_128(uint8_t out[16], const uint8_t key[16],
                                    const void *msg, size_t len);

/* ------------------------------------------------------------------------ */
/* Shingler: text to a set of 64-bit shingle hashes                         */
/* ------------------------------------------------------------------------ */

/* Units (values are ABI). */
#define MINLSH_UNIT_BYTE 1      /* k consecutive bytes */
#define MINLSH_UNIT_CODEPOINT 2 /* k consecutive UTF-8 code points */
#define MINLSH_UNIT_WORD 3      /* k consecutive words */
#define MINLSH_UNIT_STOPWORD 4  /* a stop word and the k-1 words after it */

/* Normalisation flags (values are ABI), applied in this order:
 * HTML, then case folding, punctuation removal, whitespace collapsing. These
 * four act on ASCII bytes only. */
#define MINLSH_NORM_CASEFOLD 0x1u   /* ASCII A-Z to a-z */
#define MINLSH_NORM_WHITESPACE 0x2u /* runs of ASCII whitespace to one ' ', trimmed */
#define MINLSH_NORM_PUNCT 0x4u      /* delete ASCII punctuation */
#define MINLSH_NORM_HTML 0x8u       /* skip tags, comments, script/style; decode entities */
#define MINLSH_NORM_ALL 0xFu

/* Unicode normalisation (opt-in, but for CJK_WORDS, which the default
 * options of version 2 have; docs/shingling.md section 3.5). A stage
 * between HTML and the ASCII stages, on code points of the pinned Unicode
 * version (minlsh_unicode_version), in this order: NFKC, full case
 * folding, digit folding, punctuation and symbol removal, white space,
 * word splitting. Each Unicode flag supersedes its ASCII counterpart, which
 * minlsh_shingler_new turns on with it (minlsh_shingler_flags shows it). */
#define MINLSH_NORM_NFKC 0x10u        /* Unicode NFKC */
#define MINLSH_NORM_UCASEFOLD 0x20u   /* full case folding (C+F): ß to ss; + CASEFOLD */
#define MINLSH_NORM_UPUNCT 0x40u      /* delete P* and S* but U+FFFD; + PUNCT */
#define MINLSH_NORM_UWHITESPACE 0x80u /* White_Space is whitespace; + WHITESPACE */
#define MINLSH_NORM_DIGITS 0x100u     /* Nd digits to ASCII 0-9 */
#define MINLSH_NORM_CJK_WORDS 0x200u  /* word units: each Han, Hiragana, Katakana,
                                         Thai, Lao, Khmer, Myanmar character is a word;
                                         alone, dropped for byte and code-point units */
#define MINLSH_NORM_UNICODE 0x3F0u    /* every Unicode flag */

/* The Unicode version of the tables, as major * 10000 + minor * 100 +
 * patch (150000 is Unicode 15.0.0); minlsh_unicode_version() is its twin. */
#define MINLSH_UNICODE_VERSION 150000

/* Options versions 1 and 2 have the same layout; the version names the
 * defaults the caller started from. Version 1: flags 0. Version 2: flags
 * MINLSH_NORM_CJK_WORDS, so that word shingles work on Chinese, Japanese
 * and Thai. A program built against version 1 keeps its configuration (and
 * its hashes and configuration ids). */
#define MINLSH_SHINGLER_OPTIONS_VERSION 2

/* Shingler options. Start from MINLSH_SHINGLER_OPTIONS_INIT or
 * minlsh_shingler_options_init(); set version to the version you compiled
 * against. Everything pointed to is copied by minlsh_shingler_new. */
typedef struct minlsh_shingler_options {
    uint32_t version;            /* MINLSH_SHINGLER_OPTIONS_VERSION */
    uint32_t unit;               /* MINLSH_UNIT_*; default WORD */
    uint32_t k;                  /* units per shingle, 1..64; default 5 */
    uint32_t flags;              /* MINLSH_NORM_*; default CJK_WORDS (version 1: 0) */
    const uint8_t *key;          /* 16-byte SipHash key; NULL: the default key */
    const char *stopwords;       /* STOPWORD unit: words separated by ASCII
                                    whitespace; NULL: the built-in English list */
    size_t stopwords_len;        /* bytes in stopwords */
    uint64_t max_document_bytes; /* 0: no limit; else feed beyond it is MINLSH_E_TOOBIG */
} minlsh_shingler_options;

#define MINLSH_SHINGLER_OPTIONS_INIT                                           \
    { MINLSH_SHINGLER_OPTIONS_VERSION, MINLSH_UNIT_WORD, 5, MINLSH_NORM_CJK_WORDS,  \
      NULL, NULL, 0, 0 }

/* Fill opts with the defaults of the given options version (1 or 2, see
 * MINLSH_SHINGLER_OPTIONS_VERSION); opts->version is set to it.
 * Errors: MINLSH_E_NULL, MINLSH_E_VERSION. */
MINLSH_API int minlsh_shingler_options_init(minlsh_shingler_options *opts,
                                            uint32_t version);

/* The 16-byte default key: the ASCII bytes of "minlsh:shingles!". Returns a
 * pointer to static storage. */
MINLSH_API const uint8_t *minlsh_default_key(void);

typedef struct minlsh_shingler minlsh_shingler;

/* Create a shingler. opts->version may be 1 or 2: it only says which
 * defaults the caller started from, every field is read either way. opts
 * NULL means the defaults of version 1 (flags 0), which programs that pass
 * NULL have always had; pass MINLSH_SHINGLER_OPTIONS_INIT for today's.
 * Errors: MINLSH_E_NULL (out), MINLSH_E_VERSION, MINLSH_E_PARAM (unit, k,
 * unknown flags, empty stop-word list), MINLSH_E_NOMEM. */
MINLSH_API int minlsh_shingler_new(minlsh_shingler **out,
                                   const minlsh_shingler_options *opts,
                                   const minlsh_allocator *alloc);
/* The key is wiped before the memory is released. NULL is a no-op. */
MINLSH_API void minlsh_shingler_free(minlsh_shingler *shingler);

/* Read back the configuration. Return 0 for a NULL shingler. */
MINLSH_API uint32_t minlsh_shingler_unit(const minlsh_shingler *shingler);
MINLSH_API uint32_t minlsh_shingler_k(const minlsh_shingler *shingler);
MINLSH_API uint32_t minlsh_shingler_flags(const minlsh_shingler *shingler);

/* A 64-bit value that identifies the key and the whole configuration (unit,
 * k, flags, stop words) without revealing the key. Store it beside signatures
 * so that data shingled differently is refused instead of compared.
 * Errors: MINLSH_E_NULL. */
MINLSH_API int minlsh_shingler_config_id(uint64_t *out,
                                         const minlsh_shingler *shingler);

/* A set of shingle hashes: sorted ascending, no duplicates. */
typedef struct minlsh_shingleset minlsh_shingleset;

/* Errors: MINLSH_E_NULL, MINLSH_E_NOMEM. */
MINLSH_API int minlsh_shingleset_new(minlsh_shingleset **out,
                                     const minlsh_allocator *alloc);
MINLSH_API void minlsh_shingleset_free(minlsh_shingleset *set);
/* Number of hashes; 0 for NULL. */
MINLSH_API size_t minlsh_shingleset_count(const minlsh_shingleset *set);
/* The sorted hashes, borrowed. May be NULL when the count is 0. */
MINLSH_API const uint64_t *minlsh_shingleset_view_hashes(const minlsh_shingleset *set);
/* Copy the sorted hashes out. Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE. */
MINLSH_API int minlsh_shingleset_copy_hashes(const minlsh_shingleset *set,
                                             uint64_t *hashes, size_t cap,
                                             size_t *n_out);
/* Replace the content with n arbitrary hashes (sorted and deduplicated here).
 * On error the set is unchanged. Errors: MINLSH_E_NULL, MINLSH_E_NOMEM. */
MINLSH_API int minlsh_shingleset_assign(minlsh_shingleset *set,
                                        const uint64_t *hashes, size_t n);
/* Exact Jaccard |A & B| / |A | B|; two empty sets give 0.
 * Errors: MINLSH_E_NULL. */
MINLSH_API int minlsh_shingleset_jaccard(double *out,
                                         const minlsh_shingleset *a,
                                         const minlsh_shingleset *b);

/* Exact Jaccard of two strictly increasing arrays (sorted merge). Two empty
 * arrays give 0. Errors: MINLSH_E_NULL, MINLSH_E_PARAM (not strictly
 * increasing). */
MINLSH_API int minlsh_jaccard_sorted(double *out, const uint64_t *a, size_t na,
                                     const uint64_t *b, size_t nb);

/* One-shot: shingle a whole document into set (replacing its content) and
 * optionally compute the document fingerprint (fp may be NULL; set may be
 * NULL when only fp is wanted; with both NULL it only validates). Identical to a stream fed the same bytes.
 * On error set is unchanged.
 * Errors: MINLSH_E_NULL, MINLSH_E_NOMEM, MINLSH_E_TOOBIG.
 * */
MINLSH_API int minlsh_shingler_hash(const minlsh_shingler *shingler,
                                    const void *text, size_t len,
                                    minlsh_shingleset *set,
                                    uint8_t fp[MINLSH_FINGERPRINT_BYTES]);

/* Streaming: feed a document in chunks of any size (including 0), then
 * finish. The result is exactly what minlsh_shingler_hash gives on the
 * concatenation. The stream copies the shingler's configuration, so the
 * shingler may be freed while the stream lives. */
typedef struct minlsh_shinglestream minlsh_shinglestream;

/* Errors: MINLSH_E_NULL, MINLSH_E_PARAM (allocator), MINLSH_E_NOMEM. */
MINLSH_API int minlsh_shinglestream_new(minlsh_shinglestream **out,
                                        const minlsh_shingler *shingler,
                                        const minlsh_allocator *alloc);
MINLSH_API void minlsh_shinglestream_free(minlsh_shinglestream *stream);
/* Errors: MINLSH_E_NULL (data NULL with len > 0), MINLSH_E_NOMEM,
 * MINLSH_E_TOOBIG (the document passed max_document_bytes: the stream keeps
 * refusing until reset; nothing else is affected). A chunk of at most
 * 16 KiB is all or nothing: after MINLSH_E_NOMEM the stream is unchanged and
 * the feed may be retried. A longer chunk may run out of memory part-way;
 * then the stream is unusable until reset: feed keeps returning
 * MINLSH_E_NOMEM and finish returns MINLSH_E_STATE and resets it. */
MINLSH_API int minlsh_shinglestream_feed(minlsh_shinglestream *stream,
                                         const void *data, size_t len);
/* End the document: write its set (replacing set's content; set may be NULL)
 * and fingerprint (fp may be NULL), then reset the stream for the next
 * document. Errors: MINLSH_E_NULL, MINLSH_E_NOMEM (the stream keeps its
 * state; finish may be retried), MINLSH_E_TOOBIG/MINLSH_E_STATE (the stream
 * was refusing input; it is reset). */
MINLSH_API int minlsh_shinglestream_finish(minlsh_shinglestream *stream,
                                           minlsh_shingleset *set,
                                           uint8_t fp[MINLSH_FINGERPRINT_BYTES]);
/* Drop the current document. Errors: MINLSH_E_NULL. */
MINLSH_API int minlsh_shinglestream_reset(minlsh_shinglestream *stream);
/* Bytes fed since the last reset/finish (0 for NULL). */
MINLSH_API uint64_t minlsh_shinglestream_bytes(const minlsh_shinglestream *stream);

/* ------------------------------------------------------------------------ */
/* MinHash family                                                           */
/* ------------------------------------------------------------------------ */

/* k functions h_i(x) = (a_i * x + b_i) mod p, p = 2^61 - 1, with x the
 * shingle hash reduced mod p and (a_i, b_i) derived from the seed as
 * docs/minhash.md specifies. A signature is k uint32_t values: value i is
 * (min over the set of h_i(x)) >> 29, the top 32 of the 61 bits, so that
 * merging (element-wise minimum) is exact. The empty set's signature has
 * every value MINLSH_EMPTY_VALUE. */
typedef struct minlsh_family minlsh_family;

/* Errors: MINLSH_E_NULL, MINLSH_E_PARAM (k outside 1..MINLSH_FAMILY_K_MAX), MINLSH_E_NOMEM. */
MINLSH_API int minlsh_family_new(minlsh_family **out, uint32_t k, uint64_t seed,
                                 const minlsh_allocator *alloc);
MINLSH_API void minlsh_family_free(minlsh_family *family);
/* 0 for NULL. */
MINLSH_API uint32_t minlsh_family_k(const minlsh_family *family);
MINLSH_API uint64_t minlsh_family_seed(const minlsh_family *family);

/* Copy out the coefficients (for other implementations and tests).
 * a and b each need k entries (either may be NULL).
 * Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE (*n_out = k). */
MINLSH_API int minlsh_family_copy_coefficients(const minlsh_family *family,
                                               uint64_t *a, uint64_t *b,
                                               size_t cap, size_t *n_out);

/* Sign n shingle hashes (duplicates allowed; order irrelevant) into sig,
 * which needs k entries. n = 0 gives the empty signature.
 * Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE (*n_out = k; n_out may be NULL),
 * MINLSH_E_NOMEM (an OPH family of k above 1024 only: its work is on the
 * heap). */
MINLSH_API int minlsh_family_sign(const minlsh_family *family,
                                  const uint64_t *hashes, size_t n,
                                  uint32_t *sig, size_t cap, size_t *n_out);

/* Streaming update: sig (k values, e.g. from an earlier sign) becomes the
 * signature of its set plus the n hashes. Errors: MINLSH_E_NULL,
 * MINLSH_E_PARAM (k_sig != k), MINLSH_E_UNSUPPORTED (a family of a scheme
 * whose signatures cannot be extended: MINLSH_SCHEME_OPH). */
MINLSH_API int minlsh_family_update(const minlsh_family *family,
                                    const uint64_t *hashes, size_t n,
                                    uint32_t *sig, size_t k_sig);

/* Shingle a document and sign it, without building the sorted set.
 * Errors: as minlsh_shingler_hash and minlsh_family_sign. */
MINLSH_API int minlsh_family_sign_text(const minlsh_family *family,
                                       const minlsh_shingler *shingler,
                                       const void *text, size_t len,
                                       uint32_t *sig, size_t cap, size_t *n_out);

/* Sign n documents with a pool of threads: document i is texts[i] (lens[i]
 * bytes; texts[i] may be NULL when lens[i] is 0) and its k values go to
 * sigs[i*k .. i*k+k-1]; sigs needs n*k entries (*n_out = n*k). threads = 0
 * means one per online processor; 1 signs on the calling thread. Results are
 * identical whatever the thread count. The threads are joined before it
 * returns. Everything it allocates comes from the shingler's allocator. A document that fails (e.g.
 * MINLSH_E_TOOBIG) gets the empty signature and its code in status[i]
 * (status may be NULL); the others are still signed, and the function
 * returns the error of the lowest-numbered failed document, or 0.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM, MINLSH_E_BUFSIZE, MINLSH_E_NOMEM,
 * MINLSH_E_UNSUPPORTED (threads > 1 in a build without threads), and the
 * per-document errors of minlsh_family_sign_text. */
MINLSH_API int minlsh_family_sign_batch(const minlsh_family *family,
                                        const minlsh_shingler *shingler,
                                        const void *const *texts,
                                        const size_t *lens, size_t n,
                                        uint32_t threads, uint32_t *sigs,
                                        size_t cap, size_t *n_out,
                                        int32_t *status);

/* Signatures need no handle: they are arrays of k uint32_t. */

/* dst[i] = min(dst[i], src[i]): the signature of the union (of classic
 * signatures; not of MINLSH_SCHEME_OPH ones).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (k = 0). */
MINLSH_API int minlsh_signature_merge(uint32_t *dst, const uint32_t *src,
                                      size_t k);
/* Estimated Jaccard: the fraction of equal positions. Defined as 0 when
 * either signature is the empty-set signature (empty documents are never
 * near-duplicates). Errors: MINLSH_E_NULL, MINLSH_E_PARAM (k = 0). */
MINLSH_API int minlsh_signature_estimate(double *out, const uint32_t *a,
                                         const uint32_t *b, size_t k);
/* 1 if every value is MINLSH_EMPTY_VALUE, 0 if not, or a negative error
 * (MINLSH_E_NULL, MINLSH_E_PARAM for k = 0). */
MINLSH_API int minlsh_signature_is_empty(const uint32_t *sig, size_t k);

/* ------------------------------------------------------------------------ */
/* Loading saved files                                                      */
/* ------------------------------------------------------------------------ */

#define MINLSH_LOAD_OPTIONS_VERSION 1

/* How a saved matrix or index is loaded (every _load, _load_buffer and _map
 * takes one; NULL means MINLSH_LOAD_OPTIONS_INIT). If family is non-NULL the
 * file must have its k and seed and the given config_id, else
 * MINLSH_E_MISMATCH; with family NULL any valid file is accepted and
 * config_id is ignored. Nothing pointed to is kept except the allocator,
 * which is copied into the handle. */
typedef struct minlsh_load_options {
    uint32_t version;               /* MINLSH_LOAD_OPTIONS_VERSION */
    uint32_t reserved;              /* must be 0 */
    const minlsh_family *family;    /* NULL: accept any k and seed */
    uint64_t config_id;             /* checked when family is non-NULL */
    const minlsh_allocator *alloc;  /* NULL: malloc/free */
} minlsh_load_options;

#define MINLSH_LOAD_OPTIONS_INIT { MINLSH_LOAD_OPTIONS_VERSION, 0, NULL, 0, NULL }

/* Fill opts with the defaults of the given options version.
 * Errors: MINLSH_E_NULL, MINLSH_E_VERSION. */
MINLSH_API int minlsh_load_options_init(minlsh_load_options *opts,
                                        uint32_t version);

/* ------------------------------------------------------------------------ */
/* Signature matrix                                                         */
/* ------------------------------------------------------------------------ */

/* n documents by k values, one column per document, appended in order and
 * addressed by position 0..n-1. Records the family's k and seed and a
 * caller-chosen config id (normally minlsh_shingler_config_id; 0 if unused);
 * saved files carry them and loading refuses a mismatch. */
typedef struct minlsh_sigmatrix minlsh_sigmatrix;

/* Errors: MINLSH_E_NULL, MINLSH_E_NOMEM. */
MINLSH_API int minlsh_sigmatrix_new(minlsh_sigmatrix **out,
                                    const minlsh_family *family,
                                    uint64_t config_id,
                                    const minlsh_allocator *alloc);
MINLSH_API void minlsh_sigmatrix_free(minlsh_sigmatrix *matrix);

/* 0 for NULL. */
MINLSH_API uint64_t minlsh_sigmatrix_count(const minlsh_sigmatrix *matrix);
MINLSH_API uint32_t minlsh_sigmatrix_k(const minlsh_sigmatrix *matrix);
MINLSH_API uint64_t minlsh_sigmatrix_seed(const minlsh_sigmatrix *matrix);
MINLSH_API uint64_t minlsh_sigmatrix_config_id(const minlsh_sigmatrix *matrix);

/* Append one signature (k values); its position is written to *pos_out
 * (may be NULL). On error the matrix is unchanged.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (k_sig != k), MINLSH_E_NOMEM,
 * MINLSH_E_TOOBIG, MINLSH_E_STATE (a mapped matrix is read-only). */
MINLSH_API int minlsh_sigmatrix_append(minlsh_sigmatrix *matrix,
                                       const uint32_t *sig, size_t k_sig,
                                       uint64_t *pos_out);
/* Copy column pos into sig (k entries).
 * Errors: MINLSH_E_NULL, MINLSH_E_NOTFOUND, MINLSH_E_BUFSIZE. */
MINLSH_API int minlsh_sigmatrix_copy_column(const minlsh_sigmatrix *matrix,
                                            uint64_t pos, uint32_t *sig,
                                            size_t cap, size_t *n_out);
/* Column pos (k values), borrowed; NULL if matrix is NULL or pos is out of
 * range. */
MINLSH_API const uint32_t *minlsh_sigmatrix_view_column(const minlsh_sigmatrix *matrix,
                                                        uint64_t pos);
/* Estimated Jaccard of columns i and j.
 * Errors: MINLSH_E_NULL, MINLSH_E_NOTFOUND. */
MINLSH_API int minlsh_sigmatrix_estimate(double *out,
                                         const minlsh_sigmatrix *matrix,
                                         uint64_t i, uint64_t j);

/* Application metadata: an opaque byte string (at most 2^32 - 1 bytes; 0 bytes
 * by default) kept with the matrix and saved and loaded with it, e.g. the
 * names of the documents or how they were shingled. set copies it.
 * Errors: MINLSH_E_NULL (data NULL with len > 0), MINLSH_E_TOOBIG,
 * MINLSH_E_NOMEM (the old metadata is kept), MINLSH_E_STATE (mapped). */
MINLSH_API int minlsh_sigmatrix_set_metadata(minlsh_sigmatrix *matrix,
                                             const void *data, size_t len);
/* Copy the metadata out. Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE. */
MINLSH_API int minlsh_sigmatrix_copy_metadata(const minlsh_sigmatrix *matrix,
                                              void *buf, size_t cap,
                                              size_t *n_out);

/* Save atomically (temporary file in the same directory, fsync, rename,
 * fsync of the directory). On failure before the rename an existing file is
 * untouched and the temporary removed; if only the final fsync of the
 * directory fails, the new file is in place (but may not survive a power
 * cut) and the call returns MINLSH_E_IO.
 * Errors: MINLSH_E_NULL, MINLSH_E_IO, MINLSH_E_NOMEM. */
MINLSH_API int minlsh_sigmatrix_save(const minlsh_sigmatrix *matrix,
                                     const char *path);
/* Serialise into a caller buffer (same bytes as the file).
 * Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE (*n_out = size needed). */
MINLSH_API int minlsh_sigmatrix_save_buffer(const minlsh_sigmatrix *matrix,
                                            void *buf, size_t cap,
                                            size_t *n_out);
/* Load and validate (opts as minlsh_load_options describes; NULL: accept
 * any valid file, malloc/free).
 * Errors: MINLSH_E_NULL, MINLSH_E_VERSION, MINLSH_E_PARAM (options),
 * MINLSH_E_IO, MINLSH_E_FORMAT, MINLSH_E_CORRUPT, MINLSH_E_MISMATCH,
 * MINLSH_E_NOMEM, MINLSH_E_TOOBIG. */
MINLSH_API int minlsh_sigmatrix_load(minlsh_sigmatrix **out, const char *path,
                                     const minlsh_load_options *opts);
MINLSH_API int minlsh_sigmatrix_load_buffer(minlsh_sigmatrix **out,
                                            const void *buf, size_t len,
                                            const minlsh_load_options *opts);
/* Open a saved matrix as a read-only memory mapping instead of reading it
 * into memory: the signatures stay in the file's pages (shared with the page
 * cache and other processes). Validated exactly like minlsh_sigmatrix_load,
 * checksums included (so the file is read once). The matrix is read-only:
 * append and set_metadata return MINLSH_E_STATE; everything else works as
 * usual, and free unmaps. The file must not be truncated or rewritten in
 * place while mapped; minlsh's own saves replace a file by rename, which is
 * safe (the mapping keeps the old content). The allocator is used for the
 * handle only. Errors: as minlsh_sigmatrix_load. */
MINLSH_API int minlsh_sigmatrix_map(minlsh_sigmatrix **out, const char *path,
                                    const minlsh_load_options *opts);

/* ------------------------------------------------------------------------ */
/* LSH parameter planning                                                   */
/* ------------------------------------------------------------------------ */

/* P(candidate | s) = 1 - (1 - s^r)^b for b bands of r rows. */

#define MINLSH_PLAN_RULE 1     /* b = floor(k/r), r minimising |(1/b)^(1/r) - t| */
#define MINLSH_PLAN_BALANCED 2 /* minimise w_fp * FP area + w_fn * FN area over b*r <= k */
#define MINLSH_PLAN_RECALL 3   /* least FP area with P(candidate | t) >= target_recall */

#define MINLSH_PLAN_OPTIONS_VERSION 1

typedef struct minlsh_plan_options {
    uint32_t version;     /* MINLSH_PLAN_OPTIONS_VERSION */
    uint32_t mode;        /* MINLSH_PLAN_*; default BALANCED */
    uint32_t k;           /* signature length, 1..MINLSH_FAMILY_K_MAX; default 128 */
    uint32_t reserved;    /* must be 0 */
    double threshold;     /* t in (0, 1); default 0.8 */
    double weight_fp;     /* >= 0, default 0.5 */
    double weight_fn;     /* >= 0, default 0.5; not both 0 */
    double target_recall; /* RECALL mode, in (0, 1); default 0.99 */
} minlsh_plan_options;

#define MINLSH_PLAN_OPTIONS_INIT                                               \
    { MINLSH_PLAN_OPTIONS_VERSION, MINLSH_PLAN_BALANCED, 128, 0, 0.8, 0.5, 0.5, 0.99 }

/* Errors: MINLSH_E_NULL, MINLSH_E_VERSION. */
MINLSH_API int minlsh_plan_options_init(minlsh_plan_options *opts,
                                        uint32_t version);
/* Choose (b, r). fp_area = integral_0^t P(s) ds and fn_area =
 * integral_t^1 (1 - P(s)) ds for the choice (either pointer may be NULL).
 * Deterministic quadrature: the same inputs give the same answer.
 * Errors: MINLSH_E_NULL, MINLSH_E_VERSION, MINLSH_E_PARAM (no (b, r)
 * reaches the target recall, t or weights out of range). */
MINLSH_API int minlsh_plan_compute(uint32_t *bands, uint32_t *rows,
                                   double *fp_area, double *fn_area,
                                   const minlsh_plan_options *opts);
/* P(candidate | s) for b bands of r rows, s in [0, 1]. Here and in the two
 * functions below b and r must be >= 1 with b*r <= MINLSH_FAMILY_K_MAX.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM. */
MINLSH_API int minlsh_plan_probability(double *out, uint32_t bands,
                                       uint32_t rows, double s);
/* The FP and FN areas of (b, r) at threshold t in (0, 1).
 * Errors: MINLSH_E_NULL (both NULL), MINLSH_E_PARAM. */
MINLSH_API int minlsh_plan_areas(double *fp_area, double *fn_area,
                                 uint32_t bands, uint32_t rows, double t);
/* The rule-of-thumb threshold (1/b)^(1/r).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM. */
MINLSH_API int minlsh_plan_threshold(double *out, uint32_t bands,
                                     uint32_t rows);

/* ------------------------------------------------------------------------ */
/* Band keys                                                                */
/* ------------------------------------------------------------------------ */

/* The b 64-bit band keys of a signature: key j = SipHash-2-4 with key
 * LE64(j) || LE64(0x646e616268736c6d), i.e. the ASCII bytes "mlshband", over the
 * r values sig[j*r .. j*r+r-1] as little-endian 32-bit words (docs/format.md,
 * "Band keys", has the bytes and worked examples).
 * Two documents are LSH candidates iff they share (j, key j) for some j.
 * keys needs b entries.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (b or r 0, b*r > k),
 * MINLSH_E_BUFSIZE (*n_out = b). */
MINLSH_API int minlsh_band_keys(const uint32_t *sig, size_t k, uint32_t bands,
                                uint32_t rows, uint64_t *keys, size_t cap,
                                size_t *n_out);

/* ------------------------------------------------------------------------ */
/* Band index                                                               */
/* ------------------------------------------------------------------------ */

/* Documents are identified by caller-chosen 64-bit ids. The index keeps a copy
 * of each signature (to estimate similarities). Empty-set signatures are
 * stored but never become candidates. Every result is sorted and independent
 * of insertion order and of hash-table layout. */
typedef struct minlsh_index minlsh_index;

/* Errors: MINLSH_E_NULL, MINLSH_E_PARAM (bands or rows 0, b*r > k),
 * MINLSH_E_NOMEM. */
MINLSH_API int minlsh_index_new(minlsh_index **out, const minlsh_family *family,
                                uint64_t config_id, uint32_t bands,
                                uint32_t rows, const minlsh_allocator *alloc);
MINLSH_API void minlsh_index_free(minlsh_index *index);

/* 0 for NULL. */
MINLSH_API uint64_t minlsh_index_count(const minlsh_index *index);
MINLSH_API uint32_t minlsh_index_bands(const minlsh_index *index);
MINLSH_API uint32_t minlsh_index_rows(const minlsh_index *index);
MINLSH_API uint32_t minlsh_index_k(const minlsh_index *index);
MINLSH_API uint64_t minlsh_index_seed(const minlsh_index *index);
MINLSH_API uint64_t minlsh_index_config_id(const minlsh_index *index);

/* Insert a document. On error the index is unchanged.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (k_sig != k), MINLSH_E_EXISTS,
 * MINLSH_E_NOMEM, MINLSH_E_TOOBIG (more than 2^32 - 2 documents, or more
 * than 2^31 - 1 distinct signatures). */
MINLSH_API int minlsh_index_insert(minlsh_index *index, uint64_t id,
                                   const uint32_t *sig, size_t k_sig);
/* Insert n documents: ids[i] with the k values sigs[i*k .. i*k+k-1]. The
 * same as n calls of minlsh_index_insert in order, but faster on large
 * indexes: the band keys and table lookups of the next few documents are
 * started while one is inserted, so their cache misses overlap. Stops at the
 * first document that fails, which is not inserted (those before it are);
 * *n_done (may be NULL) receives how many were inserted.
 * Errors: as minlsh_index_insert (MINLSH_E_EXISTS also for an id repeated
 * within the batch). */
MINLSH_API int minlsh_index_insert_many(minlsh_index *index, const uint64_t *ids,
                                        const uint32_t *sigs, size_t n,
                                        size_t k_sig, size_t *n_done);
/* Errors: MINLSH_E_NULL, MINLSH_E_NOTFOUND. */
MINLSH_API int minlsh_index_remove(minlsh_index *index, uint64_t id);
/* 1 if present, 0 if not, MINLSH_E_NULL. */
MINLSH_API int minlsh_index_contains(const minlsh_index *index, uint64_t id);
/* Copy every id in the index out, ascending (count entries).
 * Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE (*n_out = count). */
MINLSH_API int minlsh_index_copy_ids(const minlsh_index *index, uint64_t *ids,
                                     size_t cap, size_t *n_out);
/* Copy the stored signature of id out. Errors: MINLSH_E_NULL,
 * MINLSH_E_NOTFOUND, MINLSH_E_BUFSIZE. */
MINLSH_API int minlsh_index_copy_signature(const minlsh_index *index,
                                           uint64_t id, uint32_t *sig,
                                           size_t cap, size_t *n_out);

/* Candidates for a signature: the ids sharing at least one band with it,
 * ascending. similarity (may be NULL) receives each candidate's estimated
 * Jaccard. A document does not exclude itself: query with a stored
 * document's signature and its own id is among the results.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM, MINLSH_E_NOMEM,
 * MINLSH_E_BUFSIZE (*n_out = number of candidates). */
MINLSH_API int minlsh_index_query(const minlsh_index *index, const uint32_t *sig,
                                  size_t k_sig, uint64_t *ids,
                                  double *similarity, size_t cap,
                                  size_t *n_out);

/* Query n signatures at once (sigs[i*k .. i*k+k-1]); the results are
 * those of n calls of minlsh_index_query, pipelined as in
 * minlsh_index_insert_many. Query i's candidates are ids[offsets[i] ..
 * offsets[i+1]) (with their estimates at the same places of similarity, which
 * may be NULL); offsets needs n + 1 entries and is always filled; *n_out is
 * the total. If cap is short: MINLSH_E_BUFSIZE with the total needed in
 * *n_out (ids and similarity then unspecified).
 * Errors: MINLSH_E_NULL (index, offsets, sigs with n > 0, ids with cap > 0),
 * MINLSH_E_PARAM, MINLSH_E_NOMEM, MINLSH_E_BUFSIZE. */
MINLSH_API int minlsh_index_query_many(const minlsh_index *index,
                                       const uint32_t *sigs, size_t n,
                                       size_t k_sig, size_t *offsets,
                                       uint64_t *ids, double *similarity,
                                       size_t cap, size_t *n_out);

/* Application metadata, as for the matrix (saved and loaded with the index).
 * Errors: as minlsh_sigmatrix_set_metadata / minlsh_sigmatrix_copy_metadata. */
MINLSH_API int minlsh_index_set_metadata(minlsh_index *index, const void *data,
                                         size_t len);
MINLSH_API int minlsh_index_copy_metadata(const minlsh_index *index,
                                          void *buf, size_t cap,
                                          size_t *n_out);

/* Merge a shard: every document of src is inserted into dst with its id
 * plus id_offset, so shards built independently (in parallel, on other
 * machines) can be combined into one index that answers exactly like an
 * index built in one piece. All or nothing: on any error dst is unchanged.
 * Errors: MINLSH_E_NULL, MINLSH_E_MISMATCH (k, seed, config id, bands or
 * rows differ), MINLSH_E_EXISTS (an id, after the offset, is already in
 * dst), MINLSH_E_TOOBIG (an id + id_offset overflows 64 bits, or too many
 * documents), MINLSH_E_NOMEM, MINLSH_E_PARAM (dst and src are the same
 * handle). src is only read. dst's metadata is kept; src's is not merged.
 * Checks come first (parameters, then every shifted id, ascending), so
 * MINLSH_E_NOMEM is the only error that can arise once inserting began, and
 * then what was inserted is removed again. Needs exclusive access to dst;
 * src may be read concurrently by others. */
MINLSH_API int minlsh_index_merge(minlsh_index *dst, const minlsh_index *src,
                                  uint64_t id_offset);

/* Save and load as for the matrix (atomic save; load validated as
 * minlsh_load_options describes). b and r come from the file: they describe
 * the index and do not affect whether signatures are comparable.
 * Errors: as minlsh_sigmatrix_save / _load; minlsh_index_save_buffer can
 * also return MINLSH_E_NOMEM (it sorts the ids). */
MINLSH_API int minlsh_index_save(const minlsh_index *index, const char *path);
MINLSH_API int minlsh_index_save_buffer(const minlsh_index *index, void *buf,
                                        size_t cap, size_t *n_out);
MINLSH_API int minlsh_index_load(minlsh_index **out, const char *path,
                                 const minlsh_load_options *opts);
MINLSH_API int minlsh_index_load_buffer(minlsh_index **out, const void *buf,
                                        size_t len,
                                        const minlsh_load_options *opts);

/* ------------------------------------------------------------------------ */
/* Pairs                                                                    */
/* ------------------------------------------------------------------------ */

/* A list of id pairs (a < b) with their estimated similarity, sorted by
 * (a, b). */
typedef struct minlsh_pairs minlsh_pairs;

/* Every pair of indexed documents sharing a band, each exactly once, whose
 * estimated Jaccard is >= min_similarity (0: all candidates; t: the pairs
 * verified against the signatures).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (min_similarity outside [0, 1],
 * allocator), MINLSH_E_NOMEM, MINLSH_E_TOOBIG (more than max_pairs pairs). */
MINLSH_API int minlsh_pairs_from_index(minlsh_pairs **out,
                                       const minlsh_index *index,
                                       double min_similarity,
                                       uint64_t max_pairs,
                                       const minlsh_allocator *alloc);
/* Batch deduplication without an index: the pairs of columns of a matrix
 * (ids are positions 0..n-1) that share a band of b bands of r rows, with
 * estimated Jaccard >= min_similarity. Exactly the pairs minlsh_pairs_from_index
 * gives for an index holding column i under id i, found by sorting instead
 * (identical signatures are grouped first, then per band the (band key,
 * group) list is radix-sorted and runs of equal keys give the pairs):
 * O(n log n) memory traffic in sequential passes, however hot a bucket.
 * The output itself is not bounded by the input: n identical documents have
 * n(n-1)/2 pairs, hence max_pairs (minlsh_clusters_from_matrix is linear
 * for such data).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (bands or rows 0, b*r > k,
 * min_similarity outside [0, 1], allocator), MINLSH_E_NOMEM,
 * MINLSH_E_TOOBIG (more than max_pairs pairs, or more than 2^32 - 2
 * columns). */
MINLSH_API int minlsh_pairs_from_matrix(minlsh_pairs **out,
                                        const minlsh_sigmatrix *matrix,
                                        uint32_t bands, uint32_t rows,
                                        double min_similarity, uint64_t max_pairs,
                                        const minlsh_allocator *alloc);
MINLSH_API void minlsh_pairs_free(minlsh_pairs *pairs);
/* 0 for NULL. */
MINLSH_API size_t minlsh_pairs_count(const minlsh_pairs *pairs);
/* Copy pair i out (a < b). Any output pointer may be NULL.
 * Errors: MINLSH_E_NULL, MINLSH_E_NOTFOUND (i >= count). */
MINLSH_API int minlsh_pairs_copy_pair(uint64_t *a, uint64_t *b,
                                      double *similarity,
                                      const minlsh_pairs *pairs, size_t i);

/* ------------------------------------------------------------------------ */
/* Clusters                                                                 */
/* ------------------------------------------------------------------------ */

/* Groups of near-duplicates: connected components (union-find) of a pair
 * graph. Only groups of two or more are listed; members ascending; groups
 * ordered by their smallest member. */
typedef struct minlsh_clusters minlsh_clusters;

/* Clusters of the pairs minlsh_pairs_from_index gives for min_similarity,
 * without listing them (so without max_pairs).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM, MINLSH_E_NOMEM. */
MINLSH_API int minlsh_clusters_from_index(minlsh_clusters **out,
                                          const minlsh_index *index,
                                          double min_similarity,
                                          const minlsh_allocator *alloc);
/* Clusters of an arbitrary list of n edges (a[i], b[i]), for pairs verified
 * elsewhere (e.g. by exact Jaccard). Self-edges are ignored.
 * Errors: MINLSH_E_NULL, MINLSH_E_NOMEM, MINLSH_E_TOOBIG (more than 2^32 - 2
 * distinct ids). */
MINLSH_API int minlsh_clusters_from_edges(minlsh_clusters **out,
                                          const uint64_t *a, const uint64_t *b,
                                          size_t n,
                                          const minlsh_allocator *alloc);
/* Clusters of the pairs minlsh_pairs_from_matrix(matrix, bands, rows,
 * min_similarity) gives (ids are positions), without listing them:
 * identical signatures are one node of the union-find, and each run of
 * equal band keys is joined in a chain (min_similarity 0) or compared pair
 * by pair only until it is one component. Linear in n for identical or
 * near-identical documents, however many.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (as minlsh_pairs_from_matrix),
 * MINLSH_E_NOMEM, MINLSH_E_TOOBIG (more than 2^32 - 2 columns). */
MINLSH_API int minlsh_clusters_from_matrix(minlsh_clusters **out,
                                           const minlsh_sigmatrix *matrix,
                                           uint32_t bands, uint32_t rows,
                                           double min_similarity,
                                           const minlsh_allocator *alloc);
MINLSH_API void minlsh_clusters_free(minlsh_clusters *clusters);
/* Number of groups; 0 for NULL. */
MINLSH_API size_t minlsh_clusters_count(const minlsh_clusters *clusters);
/* Copy the members of group i out, ascending. Errors: MINLSH_E_NULL,
 * MINLSH_E_NOTFOUND, MINLSH_E_BUFSIZE (*n_out = size of the group). */
MINLSH_API int minlsh_clusters_copy_members(const minlsh_clusters *clusters,
                                            size_t i, uint64_t *ids,
                                            size_t cap, size_t *n_out);

/* ------------------------------------------------------------------------ */
/* Signing schemes                                                          */
/* ------------------------------------------------------------------------ */

/* Part of the ABI from 0.2.0, since a store may be of either scheme and a
 * caller signing for it (minlsh_store_add_signature) needs its family.
 * Signing schemes (values are ABI; a saved file's header flags hold the
 * scheme, docs/format.md). CLASSIC: k functions, value i the minimum of
 * h_i over the set (what minlsh_family_new makes). OPH: one-permutation
 * hashing with optimal densification: h_0 sends each shingle to one of k
 * bins, each bin keeps its minimum, and empty bins borrow from non-empty
 * ones chosen by the seed (docs/minhash.md section 7). One product per
 * shingle instead of k, at the price of a few percent more variance on sets
 * with fewer shingles than k (and a little less on larger ones); below
 * about k/4 shingles densification makes it the slower scheme. OPH
 * signatures are k 32-bit values like classic ones and work unchanged with estimate, the index, the planner and the
 * engine, but they are not mergeable: minlsh_signature_merge of two OPH
 * signatures is not the union's, and minlsh_family_update refuses an OPH
 * family. Families, matrices and indexes of different schemes never
 * compare: loading refuses a file of the other scheme (MINLSH_E_MISMATCH)
 * and minlsh_index_merge refuses to mix them. */
#define MINLSH_SCHEME_CLASSIC 0
#define MINLSH_SCHEME_OPH 1

/* minlsh_family_new with a scheme; minlsh_family_new(out, k, seed, alloc)
 * is minlsh_family_new_scheme(out, k, seed, MINLSH_SCHEME_CLASSIC, alloc).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (k outside 1..MINLSH_FAMILY_K_MAX, unknown
 * scheme), MINLSH_E_NOMEM. */
MINLSH_API int minlsh_family_new_scheme(minlsh_family **out, uint32_t k,
                                        uint64_t seed, uint32_t scheme,
                                        const minlsh_allocator *alloc);
/* The scheme of a family, matrix or index (MINLSH_SCHEME_*; 0 for NULL).
 * A matrix or index takes its family's, or its file's. */
MINLSH_API uint32_t minlsh_family_scheme(const minlsh_family *family);
MINLSH_API uint32_t minlsh_sigmatrix_scheme(const minlsh_sigmatrix *matrix);
MINLSH_API uint32_t minlsh_index_scheme(const minlsh_index *index);

/* ------------------------------------------------------------------------ */
/* Store: a crawler's index in one handle                                   */
/* ------------------------------------------------------------------------ */

/* Part of the ABI from 0.2.0 (version node MINLSH_0.2): the command's
 * index subcommands and the Python and Go bindings run on it.
 *
 * A store is a near-duplicate index kept at a path and shared by any number
 * of processes: "have I seen this page, or nearly?" and "remember it" in
 * one call that is durable once committed. Its configuration (how to
 * shingle, the key check, k, seed, scheme, threshold, banding) and every
 * document's name live in the file, so a worker opens a store with its
 * path alone (and the key, if it is not the default). Documents get ids
 * 0, 1, 2, ... in the order they are added, across all processes; an id is
 * never given twice. A name is caller bytes (a URL, a JSON token); names of
 * one or more bytes are unique in a store, an empty name is no name.
 *
 * Files: PATH (a mapped index file whose metadata holds the configuration
 * and the names, docs/format.md "Store"), PATH.journal (every change since
 * PATH was written), PATH.lock and PATH.compact.lock (the locks),
 * PATH.sets (with MINLSH_STORE_SETS: the shingle sets, append-only). PATH's
 * symbolic links are followed: one store, one lock, one journal.
 *
 * Locking: a writer changes the store between minlsh_store_begin, which
 * takes PATH.lock exclusively and catches up with what other processes
 * committed (reading only the journal's new bytes), and
 * minlsh_store_commit, which syncs every change since begin with one
 * fdatasync (group commit) and releases the lock. add and remove called
 * outside begin/commit take the lock, commit and release it themselves,
 * shingling and signing before the lock is taken. A handle opened
 * MINLSH_STORE_READONLY takes PATH.lock shared at open and in
 * minlsh_store_refresh only. Durability: from the return of a commit (or
 * of an add or remove outside begin/commit) the change survives kill -9
 * and power loss; a change not committed is never half there. A journal
 * damaged before committed records fails with MINLSH_E_CORRUPT and is left
 * as it is. The store maps PATH: a program that truncates it underneath
 * raises SIGBUS in the reader (docs/api.md, "SIGBUS").
 *
 * Threads: one handle is used by one thread at a time, except that
 * minlsh_store_query, _query_set, _find_name, _copy_name, _count,
 * _threshold and _view_shingler (const) may run concurrently with each
 * other. Give each thread its own handle to write: handles exclude each
 * other through the lock, in one process as across processes. */
typedef struct minlsh_store minlsh_store;

#define MINLSH_STORE_CREATE 0x1u   /* create the store if PATH does not exist */
#define MINLSH_STORE_READONLY 0x2u /* open for queries only */
#define MINLSH_STORE_SETS 0x4u     /* creation: keep each document's shingle set
                                      (PATH.sets), so that decisions use the
                                      exact Jaccard, not the estimate */
#define MINLSH_STORE_EXCL 0x8u      /* with CREATE: MINLSH_E_EXISTS if PATH exists */
#define MINLSH_STORE_TRUNCATE 0x10u /* with CREATE: an existing PATH is replaced
                                       by a new, empty store (journal and sets
                                       removed), under the lock */
#define MINLSH_STORE_ANY_KEY 0x20u  /* not with CREATE: open a store made with
                                       another key (configuration, names and
                                       index are read, signatures added and
                                       queried; text and sets: MINLSH_E_MISMATCH) */
#define MINLSH_STORE_NO_LOCK 0x40u  /* take no PATH.lock: the caller holds it
                                       (flock) for as long as the handle is used */

#define MINLSH_STORE_OPTIONS_VERSION 1

/* How to open a store. Fields marked "creation" configure a new store and
 * are otherwise checked against the file: 0 (or NULL) means "the default"
 * when creating and "whatever the file says" when opening; a value that
 * disagrees with the file is MINLSH_E_MISMATCH. Nothing pointed to is kept
 * after the call but the allocator, which is copied. */
typedef struct minlsh_store_options {
    uint32_t version;  /* MINLSH_STORE_OPTIONS_VERSION */
    uint32_t flags;    /* MINLSH_STORE_CREATE, _READONLY, _SETS... */
    const minlsh_shingler_options *shingler; /* creation: NULL means
                          MINLSH_SHINGLER_OPTIONS_INIT; its key must be NULL
                          (the key is below) and its max_document_bytes is
                          not stored (see max_document_bytes) */
    uint32_t num_perm; /* creation: k, 1..MINLSH_FAMILY_K_MAX; 0: 128 */
    uint32_t scheme;   /* creation: 0 classic MinHash, 1 one-permutation
                          hashing (MINLSH_SCHEME_OPH) */
    uint64_t seed;     /* creation: MinHash seed; 0: 1 */
    double threshold;  /* creation: near-duplicate threshold in (0, 1]; 0: 0.8 */
    uint32_t bands;    /* creation: b and r; 0 and 0: planned for recall */
    uint32_t rows;     /*   0.999 at the threshold (minlsh_plan_compute) */
    const uint8_t *key; /* 16-byte SipHash key; NULL: the default key. Never
                          stored: the file keeps the shingler's config id,
                          which a wrong key does not match */
    uint32_t lock_timeout_ms; /* wait for PATH.lock at most this long; 0:
                          no limit */
    uint32_t reserved; /* must be 0 */
    uint64_t max_document_bytes; /* this handle refuses longer texts
                          (MINLSH_E_TOOBIG); 0: no limit */
    const minlsh_allocator *alloc; /* NULL: malloc/free */
} minlsh_store_options;

#define MINLSH_STORE_OPTIONS_INIT                                              \
    { MINLSH_STORE_OPTIONS_VERSION, 0, NULL, 0, 0, 0, 0.0, 0, 0, NULL, 0, 0, 0, NULL }

/* Errors: MINLSH_E_NULL, MINLSH_E_VERSION. */
MINLSH_API int minlsh_store_options_init(minlsh_store_options *opts,
                                         uint32_t version);

/* Open the store at path (opts NULL: MINLSH_STORE_OPTIONS_INIT), creating
 * it when it is missing and opts->flags has MINLSH_STORE_CREATE. Under
 * PATH.lock (exclusive; shared for READONLY): create PATH atomically if
 * needed, map it, replay PATH.journal, and remove the temporaries of
 * writes a kill cut short (when no compaction is running). The lock is
 * released before the call returns.
 * Errors: MINLSH_E_NULL, MINLSH_E_VERSION, MINLSH_E_PARAM (an option out of
 * range, reserved not 0, READONLY with CREATE, allocator), MINLSH_E_NOMEM,
 * MINLSH_E_IO (errno EISDIR for a folder), MINLSH_E_NOTFOUND (no store and
 * no CREATE), MINLSH_E_FORMAT (not a store), MINLSH_E_CORRUPT (a damaged
 * file or journal), MINLSH_E_MISMATCH (a creation option or the key
 * disagrees with the file), MINLSH_E_BUSY (lock_timeout_ms passed). */
MINLSH_API int minlsh_store_open(minlsh_store **out, const char *path,
                                 const minlsh_store_options *opts);
/* Close. Changes not committed are dropped; a lock held is released.
 * NULL is a no-op. */
MINLSH_API void minlsh_store_free(minlsh_store *store);

/* Take PATH.lock exclusively (waiting at most the lock timeout) and catch
 * up with the changes other handles committed since this one last did.
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (READONLY, or begun already),
 * MINLSH_E_BUSY, MINLSH_E_IO, MINLSH_E_NOMEM, MINLSH_E_CORRUPT; on error
 * the lock is not held. */
MINLSH_API int minlsh_store_begin(minlsh_store *store);
/* Make every change since begin durable (one fdatasync of PATH.journal,
 * after one of PATH.sets if sets were written) and release the lock. On
 * error nothing since begin was committed: the handle drops those changes
 * (it reloads from the files at its next call) and releases the lock.
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (not begun), MINLSH_E_IO,
 * MINLSH_E_NOMEM. */
MINLSH_API int minlsh_store_commit(minlsh_store *store);
/* Make the changes since begin durable, like commit, but keep the lock.
 * Outside begin/commit there is nothing to sync: 0.
 * Errors: as minlsh_store_commit (on error the lock is released). */
MINLSH_API int minlsh_store_sync(minlsh_store *store);
/* Drop every change since begin, commit nothing, reload the view from the
 * files (under the lock, so queries see the committed state at once) and
 * release the lock. The changes are dropped even when the reload fails
 * (the handle then reloads at its next begin, add or remove).
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (not begun), MINLSH_E_NOMEM,
 * MINLSH_E_IO, MINLSH_E_CORRUPT. */
MINLSH_API int minlsh_store_rollback(minlsh_store *store);
/* Catch up with what other handles committed, without keeping a lock
 * (shared while it reads). Inside begin/commit: 0, nothing to do.
 * Errors: MINLSH_E_NULL, MINLSH_E_BUSY, MINLSH_E_IO, MINLSH_E_NOMEM,
 * MINLSH_E_CORRUPT. */
MINLSH_API int minlsh_store_refresh(minlsh_store *store);

/* minlsh_store_add flags. */
#define MINLSH_STORE_ADD_ALWAYS 0x1u /* insert even a near-duplicate */

/* What a store decided about a document. */
typedef struct minlsh_store_result {
    uint64_t id;         /* the id the document was given (if inserted) */
    uint64_t match;      /* the near-duplicate found (if novel is 0), or
                            the most similar candidate checked (if
                            has_match); 0 otherwise */
    double similarity;   /* match's similarity: exact Jaccard if exact,
                            else the signature estimate; 0 without match */
    uint32_t novel;      /* 1: no stored document reaches the threshold */
    uint32_t inserted;   /* 1: the document was added (novel, or ALWAYS) */
    uint32_t has_match;  /* 1: match names a document */
    uint32_t exact;      /* 1: similarity is the exact Jaccard */
    uint64_t candidates; /* LSH candidates looked at */
} minlsh_store_result;

/* Check-and-insert: shingle text with the store's shingler, sign it, find
 * the stored documents sharing a band with it, verify them (the exact
 * Jaccard of the stored sets in a store with MINLSH_STORE_SETS, checked in
 * decreasing order of estimate from the threshold minus 0.15 up; the
 * signature estimate otherwise) and, if none reaches the threshold (or
 * flags has MINLSH_STORE_ADD_ALWAYS), insert it under the next id with
 * name (name_len bytes, at most 1 MiB; may be NULL when 0) into the index
 * and the journal together. Outside begin/commit the call commits itself.
 * result may be NULL (with MINLSH_STORE_ADD_ALWAYS no decision is made
 * then). On error the store is unchanged.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (flags), MINLSH_E_STATE
 * (READONLY), MINLSH_E_EXISTS (the name is in the store),
 * MINLSH_E_TOOBIG (text over max_document_bytes, name over 1 MiB),
 * MINLSH_E_NOMEM, MINLSH_E_IO, MINLSH_E_CORRUPT, MINLSH_E_BUSY, and those
 * of minlsh_store_commit when the call commits itself. */
MINLSH_API int minlsh_store_add(minlsh_store_result *result, minlsh_store *store,
                                const void *text, size_t len, const void *name,
                                size_t name_len, uint32_t flags);
/* minlsh_store_add of a document shingled by the caller with the store's
 * shingler (minlsh_store_view_shingler; a shinglestream, say).
 * Errors: as minlsh_store_add. */
MINLSH_API int minlsh_store_add_set(minlsh_store_result *result, minlsh_store *store,
                                    const minlsh_shingleset *set, const void *name,
                                    size_t name_len, uint32_t flags);
/* The decision minlsh_store_add would make, without inserting (inserted
 * and id are 0), from this handle's view of the store (refresh first to
 * see other handles' commits).
 * Errors: MINLSH_E_NULL, MINLSH_E_TOOBIG, MINLSH_E_NOMEM, MINLSH_E_IO,
 * MINLSH_E_CORRUPT. */
MINLSH_API int minlsh_store_query(minlsh_store_result *result,
                                  const minlsh_store *store, const void *text,
                                  size_t len);
MINLSH_API int minlsh_store_query_set(minlsh_store_result *result,
                                      const minlsh_store *store,
                                      const minlsh_shingleset *set);
/* Remove a document by id, or by name. Outside begin/commit the call
 * commits itself. Errors: MINLSH_E_NULL, MINLSH_E_STATE (READONLY),
 * MINLSH_E_NOTFOUND, MINLSH_E_NOMEM, MINLSH_E_IO, MINLSH_E_BUSY, and those
 * of minlsh_store_commit. */
MINLSH_API int minlsh_store_remove(minlsh_store *store, uint64_t id);
MINLSH_API int minlsh_store_remove_name(minlsh_store *store, const void *name,
                                        size_t name_len);
/* The id of the document named name. Errors: MINLSH_E_NULL,
 * MINLSH_E_NOTFOUND (no such name; an empty name is never found). */
MINLSH_API int minlsh_store_find_name(uint64_t *id, const minlsh_store *store,
                                      const void *name, size_t name_len);
/* Copy the name of document id. Errors: MINLSH_E_NULL, MINLSH_E_NOTFOUND,
 * MINLSH_E_BUFSIZE (*n_out = its length). */
MINLSH_API int minlsh_store_copy_name(const minlsh_store *store, uint64_t id,
                                      void *buf, size_t cap, size_t *n_out);
/* Documents in the store, in this handle's view; 0 for NULL. */
MINLSH_API uint64_t minlsh_store_count(const minlsh_store *store);
/* The threshold the store decides at; 0 for NULL. */
MINLSH_API double minlsh_store_threshold(const minlsh_store *store);
/* The store's shingler, borrowed for the handle's life (NULL for NULL). */
MINLSH_API const minlsh_shingler *minlsh_store_view_shingler(const minlsh_store *store);

/* minlsh_store_add of a document the caller signed with the store's
 * family (k, seed and scheme of minlsh_store_view_index; its shingler
 * minlsh_store_view_shingler), so that signing can run on other threads.
 * Errors: as minlsh_store_add; MINLSH_E_PARAM (k is not the store's),
 * MINLSH_E_STATE also for a store with MINLSH_STORE_SETS (exact decisions
 * need the set: minlsh_store_add_set). */
MINLSH_API int minlsh_store_add_signature(minlsh_store_result *result, minlsh_store *store,
                                          const uint32_t *sig, uint32_t k, const void *name,
                                          size_t name_len, uint32_t flags);
/* minlsh_store_query of a signed document. Errors: as
 * minlsh_store_add_signature. */
MINLSH_API int minlsh_store_query_signature(minlsh_store_result *result,
                                            const minlsh_store *store, const uint32_t *sig,
                                            uint32_t k);
/* Every live document sharing a band with sig, ascending by id, with its
 * estimated similarity (removed documents skipped): ids[i], sims[i] for i
 * < *n_out. Errors: MINLSH_E_NULL, MINLSH_E_PARAM, MINLSH_E_STATE, MINLSH_E_NOMEM,
 * MINLSH_E_BUFSIZE (cap too small: *n_out = the number needed). */
MINLSH_API int minlsh_store_candidates(const minlsh_store *store, const uint32_t *sig,
                                       uint32_t k, uint64_t *ids, double *sims, size_t cap,
                                       size_t *n_out);
/* The store's band index (k, seed, scheme, bands, rows, config id, stats),
 * borrowed until the next call that is not const on the handle; NULL for
 * NULL. It still holds removed documents until a compaction. */
MINLSH_API const minlsh_index *minlsh_store_view_index(const minlsh_store *store);
/* Write this handle's view as a new store at path (flags MINLSH_STORE_EXCL:
 * MINLSH_E_EXISTS if path exists; MINLSH_STORE_TRUNCATE: replace it, its
 * journal removed), without removed documents, under path's lock. Not for a
 * store with MINLSH_STORE_SETS (MINLSH_E_STATE). Errors: MINLSH_E_NULL,
 * MINLSH_E_PARAM, MINLSH_E_STATE, MINLSH_E_EXISTS, MINLSH_E_BUSY,
 * MINLSH_E_NOMEM, MINLSH_E_IO. */
MINLSH_API int minlsh_store_copy_to(const minlsh_store *store, const char *path,
                                    uint32_t flags);
/* The lock timeout of later calls (as lock_timeout_ms). Errors: MINLSH_E_NULL. */
MINLSH_API int minlsh_store_set_lock_timeout(minlsh_store *store, uint32_t ms);
/* 1 when the handle's key gives the store's config id (always, but for a
 * handle opened with MINLSH_STORE_ANY_KEY); 0 if not; MINLSH_E_NULL. */
MINLSH_API int minlsh_store_key_matches(const minlsh_store *store);

/* 1 when the journal has grown past max(1 MiB, 1/32 of PATH), the point
 * where compacting pays; 0 if not; MINLSH_E_NULL. */
MINLSH_API int minlsh_store_compact_due(const minlsh_store *store);
/* Fold the journal into a new PATH without stalling other writers: the new
 * file is written from this handle's view as of a point P of the journal
 * with PATH.lock released, then, under the lock, renamed over PATH and
 * the journal's records past P carried into a new journal. The new file
 * records that it holds the old journal up to P, so a kill between the two
 * renames loses nothing and applies nothing twice. Removed documents leave
 * the index here. Not inside begin/commit.
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (READONLY, inside begin/commit),
 * MINLSH_E_BUSY (another compaction is running, or the lock timeout),
 * MINLSH_E_NOMEM, MINLSH_E_IO, MINLSH_E_CORRUPT. */
MINLSH_API int minlsh_store_compact(minlsh_store *store);

#ifdef __cplusplus
}
#endif

#endif /* MINLSH_H */

/* ------------------------------------------------------------------------ */
/* Experimental: not yet part of the stable ABI                             */
/* ------------------------------------------------------------------------ */

/* Declared only when MINLSH_EXPERIMENTAL_API is defined before this header
 * is included. These functions may change or go in any release, so use them
 * only with the library version you built against (they are exported in the
 * version node MINLSH_EXPERIMENTAL). A function graduates to the stable part
 * above in a release, unchanged or not. */
#if defined(MINLSH_EXPERIMENTAL_API) && !defined(MINLSH_H_EXPERIMENTAL)
#define MINLSH_H_EXPERIMENTAL

#ifdef __cplusplus
extern "C" {
#endif

/* MINLSH_UNICODE_VERSION: the version of the Unicode tables the MINLSH_NORM_
 * Unicode flags use (part of the config id of a shingler that has one).
 * Thread-safe. */
MINLSH_API uint32_t minlsh_unicode_version(void);

/* minlsh_index_query with a bound on the work, for indexes with hot
 * buckets (many distinct documents sharing a band). Bands are searched in
 * order 0, 1, ...; the search stops before the first band whose bucket
 * would bring the number of bucket members collected so far (a document
 * found in several bands counts in each) above max_members, and leaves that
 * band out whole. The result is then exactly the candidates that share one of
 * the bands searched, ascending, and still independent of insertion order.
 * *bands_searched (required, so a cut is never silent) receives how many
 * bands that was: the index's b when the answer is complete, fewer when the
 * limit cut it short (0: even band 0 alone was over the limit). max_members
 * 0 means no limit: the same result as minlsh_index_query.
 * Errors: as minlsh_index_query; MINLSH_E_NULL also for bands_searched.
 * */
MINLSH_API int minlsh_index_query_limited(const minlsh_index *index,
                                          const uint32_t *sig, size_t k_sig,
                                          uint64_t max_members, uint64_t *ids,
                                          double *similarity, size_t cap,
                                          size_t *n_out,
                                          uint32_t *bands_searched);

/* The first m values (1..k) of the signature minlsh_family_sign gives for
 * the same hashes, the same bits, for a caller that reads only those: the
 * dedup engine's band keys read bands x rows of them
 * (minlsh_dedup_signature_values). A classic family computes only those m
 * functions (m/k of the time); a one-permutation family, whose values each
 * depend on all the bins, the whole signature. sig needs m entries.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (m 0 or above k), MINLSH_E_NOMEM
 * (as minlsh_family_sign). Threads: any. */
MINLSH_API int minlsh_family_sign_prefix(const minlsh_family *family,
                                         const uint64_t *hashes, size_t n,
                                         uint32_t *sig, size_t m);

/* Sign n_docs pre-tokenized documents in one call (the batch path of the
 * bindings: one foreign call for a whole batch instead of one per token).
 * Token t is the bytes data[offsets[t] .. offsets[t+1]) (offsets needs
 * n_tokens + 1 non-decreasing entries; offsets[0] need not be 0), hashed
 * to 64 bits exactly as minlsh_siphash24 does under key (16 bytes; NULL:
 * minlsh_default_key()). Document d is the tokens doc_offsets[d] ..
 * doc_offsets[d+1] - 1 (doc_offsets needs n_docs + 1 non-decreasing
 * entries, the last at most n_tokens); its k values go to
 * sigs[d*k .. d*k+k-1], the same bits as minlsh_family_sign of those
 * hashes (no token: the empty signature). sigs needs
 * n_docs*k entries (*n_out = n_docs*k). data may be NULL when every token
 * is empty. On error sigs is unchanged. Runs on the calling thread.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (offsets decreasing, or a document
 * past the last token), MINLSH_E_BUFSIZE, MINLSH_E_TOOBIG (n_docs*k does
 * not fit in size_t), MINLSH_E_NOMEM (as minlsh_family_sign). */
MINLSH_API int minlsh_family_sign_tokens(const minlsh_family *family,
                                         const uint8_t *key, const void *data,
                                         const size_t *offsets, size_t n_tokens,
                                         const size_t *doc_offsets,
                                         size_t n_docs, uint32_t *sigs,
                                         size_t cap, size_t *n_out);
/* minlsh_family_sign_tokens for tokens joined with a separator byte sep
 * (0..255) that no token contains: the n_tokens = doc_offsets[n_docs]
 * tokens are the pieces of data (len bytes) between separators, empty ones
 * included, so data holds exactly n_tokens - 1 separators (and no byte when
 * n_tokens is 0). Spares the caller a per-token offset: a binding joins its
 * tokens in one call. Tokens before doc_offsets[0] belong to no document.
 * Same signatures as minlsh_family_sign_tokens on the same tokens.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (sep > 255, doc_offsets
 * decreasing, another number of separators), MINLSH_E_BUFSIZE,
 * MINLSH_E_TOOBIG, MINLSH_E_NOMEM (as minlsh_family_sign). */
MINLSH_API int minlsh_family_sign_delimited(const minlsh_family *family,
                                            const uint8_t *key,
                                            const void *data, size_t len,
                                            uint32_t sep,
                                            const size_t *doc_offsets,
                                            size_t n_docs, uint32_t *sigs,
                                            size_t cap, size_t *n_out);

/* minlsh_family_sign_tokens for tokens that lie anywhere in memory: token t
 * is the lengths[t] bytes at tokens[t] (NULL only when lengths[t] is 0).
 * Spares a binding the copy of every token into one buffer: it passes the
 * addresses of the bytes its token objects already hold. Document d is the
 * tokens doc_offsets[d] .. doc_offsets[d+1] - 1 as in
 * minlsh_family_sign_tokens, with the same signatures on the same bytes.
 * The pointers are read during the call only.
 * Errors: MINLSH_E_NULL (also a NULL token of nonzero length),
 * MINLSH_E_PARAM (doc_offsets decreasing or past n_tokens),
 * MINLSH_E_BUFSIZE, MINLSH_E_TOOBIG, MINLSH_E_NOMEM (as minlsh_family_sign). */
MINLSH_API int minlsh_family_sign_token_array(const minlsh_family *family,
                                              const uint8_t *key,
                                              const void *const *tokens,
                                              const size_t *lengths, size_t n_tokens,
                                              const size_t *doc_offsets,
                                              size_t n_docs, uint32_t *sigs,
                                              size_t cap, size_t *n_out);

/* ------------------------------------------------------------------------ */
/* Dedup stages: the engine's steps over whole partitions                   */
/* ------------------------------------------------------------------------ */

/* For pipelines that spread the dedup engine's stages (docs/dedup.md) over
 * many machines, e.g. minlsh.dask: each call handles a whole partition of
 * documents, records or pairs given as flat arrays, so a foreign-function
 * caller makes one call per partition instead of one per document. They
 * run on the calling thread, keep nothing, and are thread-safe. */

/* Shingle, fingerprint and sign n texts: text i (lens[i] bytes; NULL only
 * when lens[i] is 0) gives its k values in sigs[i*k ..] (sigs needs n*k
 * entries, *n_out = n*k), its fingerprint in fps[16*i ..] and its number of
 * distinct shingles (0: an empty document) in counts[i]; fps, counts and
 * status may be NULL. The same values as minlsh_shingler_hash and
 * minlsh_family_sign one text at a time. A text that fails alone
 * (MINLSH_E_TOOBIG past the shingler's max_document_bytes) gets the empty
 * signature, a zero fingerprint, count 0 and its code in status[i]; the
 * others are still signed and the first failure's code is returned. On
 * MINLSH_E_NOMEM the texts from the failed one on have that status. alloc
 * (NULL: the shingler's, as minlsh_family_sign_batch) holds the temporaries.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (allocator), MINLSH_E_BUFSIZE,
 * MINLSH_E_NOMEM, MINLSH_E_TOOBIG. */
MINLSH_API int minlsh_family_sign_texts(const minlsh_family *family,
                                        const minlsh_shingler *shingler,
                                        const void *const *texts, const size_t *lens,
                                        size_t n, uint32_t *sigs, size_t cap,
                                        size_t *n_out, uint8_t *fps, uint64_t *counts,
                                        int32_t *status, const minlsh_allocator *alloc);

/* The band keys of n signatures of k values each (row i at sigs[i*k]):
 * keys[i*bands + j] is band j of signature i, as minlsh_band_keys gives it.
 * keys needs n*bands entries (*n_out = n*bands).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (bands or rows 0, bands*rows > k),
 * MINLSH_E_BUFSIZE, MINLSH_E_TOOBIG. */
MINLSH_API int minlsh_signatures_band_keys(const uint32_t *sigs, size_t n, size_t k,
                                           uint32_t bands, uint32_t rows,
                                           uint64_t *keys, size_t cap, size_t *n_out);

/* The shingle sets of n texts in one CSR buffer: set i is
 * hashes[offsets[i] .. offsets[i+1]), strictly increasing, as
 * minlsh_shingler_hash gives it; offsets needs n+1 entries and is always
 * filled. hashes needs offsets[n] entries (*n_out = offsets[n]): a short
 * buffer gives MINLSH_E_BUFSIZE after one pass, with the size needed. A
 * text that fails alone (MINLSH_E_TOOBIG) gets the empty set and its code
 * in status[i] (status may be NULL), and the first such code is returned.
 * alloc: as for minlsh_family_sign_texts.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (allocator), MINLSH_E_BUFSIZE,
 * MINLSH_E_NOMEM, MINLSH_E_TOOBIG. */
MINLSH_API int minlsh_shingler_hash_texts(const minlsh_shingler *shingler,
                                          const void *const *texts, const size_t *lens,
                                          size_t n, uint64_t *offsets, uint64_t *hashes,
                                          size_t cap, size_t *n_out, int32_t *status,
                                          const minlsh_allocator *alloc);

/* Exact Jaccard of n_pairs pairs of sets of a CSR buffer (n_sets sets, set
 * i at hashes[offsets[i] .. offsets[i+1]), each strictly increasing):
 * similarity[i] is the Jaccard of sets a[i] and b[i], the very double
 * minlsh_jaccard_sorted gives (two empty sets: 0).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (offsets decreasing, a set not
 * strictly increasing), MINLSH_E_NOTFOUND (a set number >= n_sets). */
MINLSH_API int minlsh_sets_jaccard(const uint64_t *offsets, const uint64_t *hashes,
                                   size_t n_sets, const uint64_t *a, const uint64_t *b,
                                   size_t n_pairs, double *similarity);

/* The candidate pairs of a partition of n band records (bands[i], keys[i],
 * docs[i]), in any order, that holds every record of each of its buckets
 * (e.g. a partition of a shuffle by key): a bucket is a run of equal (band,
 * key); its members are its distinct documents, which should be distinct
 * texts (one record per exact group, as the engine has it). A bucket of
 * more than max_bucket members (0: no cap) gives no pair: it goes to
 * capped as three values (band, key, members), ordered by (key, band);
 * every other pair of a bucket's members is a candidate. The pairs go to
 * a[i] < b[i], ascending by (a, b), each once however many buckets it
 * shares (*n_out of them); *n_capped buckets were left out (n_capped may
 * be NULL when capped_cap is large enough). Either buffer short:
 * MINLSH_E_BUFSIZE with both sizes needed.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (allocator), MINLSH_E_BUFSIZE,
 * MINLSH_E_NOMEM, MINLSH_E_TOOBIG. */
MINLSH_API int minlsh_buckets_pair(const uint32_t *bands, const uint64_t *keys,
                                   const uint64_t *docs, size_t n, uint64_t max_bucket,
                                   uint64_t *a, uint64_t *b, size_t cap, size_t *n_out,
                                   uint64_t *capped, size_t capped_cap, size_t *n_capped,
                                   const minlsh_allocator *alloc);

/* ------------------------------------------------------------------------ */
/* Insert if novel                                                          */
/* ------------------------------------------------------------------------ */

/* An exact check of a candidate, supplied by the caller: write the
 * similarity in [0, 1] of the document being inserted to the indexed
 * document `id` (whose signature estimate is `estimate`) to *similarity and
 * return 0, or return a negative MINLSH_E_* code (or any negative value) to
 * abandon the insert, which then returns that value with the index
 * unchanged. It is called on the thread of minlsh_index_insert_novel, while
 * the index is unchanged: it may read the index (const calls) but not
 * change it. */
typedef int (*minlsh_verify_fn)(void *opaque, uint64_t id, double estimate,
                                double *similarity);

#define MINLSH_NOVEL_OPTIONS_VERSION 1

typedef struct minlsh_novel_options {
    uint32_t version;        /* MINLSH_NOVEL_OPTIONS_VERSION */
    uint32_t reserved;       /* must be 0 */
    double threshold;        /* a near-duplicate has similarity >= threshold,
                                in (0, 1]; default 0.8. Give the threshold
                                the index's banding was planned for. */
    double min_estimate;     /* with verify: candidates whose estimate is
                                below this are not checked, in [0, 1];
                                default 0 (check every candidate) */
    minlsh_verify_fn verify; /* NULL (default): the signature estimate is
                                the similarity */
    void *opaque;            /* passed to verify; never kept */
} minlsh_novel_options;

#define MINLSH_NOVEL_OPTIONS_INIT                                              \
    { MINLSH_NOVEL_OPTIONS_VERSION, 0, 0.8, 0.0, NULL, NULL }

/* Errors: MINLSH_E_NULL, MINLSH_E_VERSION. */
MINLSH_API int minlsh_novel_options_init(minlsh_novel_options *opts,
                                         uint32_t version);

/* What minlsh_index_insert_novel decided. */
typedef struct minlsh_novel_result {
    uint64_t match;      /* the best match: the candidate of highest
                            similarity (ties: the smallest id); with verify,
                            the first one checked that reached the threshold,
                            else the highest checked; 0 if has_match is 0 */
    double similarity;   /* its similarity (verified, or the estimate); 0 if
                            has_match is 0 */
    uint32_t novel;      /* 1: no near-duplicate, the document was inserted;
                            0: a near-duplicate of match, nothing inserted */
    uint32_t has_match;  /* 1 if match names a candidate (a novel document
                            may have one below the threshold) */
    uint64_t candidates; /* LSH candidates found */
    uint64_t verified;   /* calls of verify made */
} minlsh_novel_result;

/* "Have I seen this, or nearly?" and "remember it" as one call: query the
 * band index with sig, verify the candidates at opts->threshold (the
 * signature estimate, or opts->verify in decreasing order of estimate, ties
 * by increasing id, stopping at the first that reaches the threshold) and,
 * if none reaches it, insert the document under id. opts NULL: the
 * defaults. The empty signature has no candidates, so it is always novel
 * (and inserted, as by minlsh_index_insert). The decision goes to *result.
 * On any error the index is unchanged and *result is unspecified. A caller
 * that needs the decision and the insert to be atomic across threads or
 * processes holds its exclusive access (a mutex; minlsh_filelock for a
 * shared file) from the query to the save.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (k_sig != k, threshold or
 * min_estimate out of range, a similarity from verify outside [0, 1],
 * reserved not 0), MINLSH_E_VERSION, MINLSH_E_EXISTS (id is already in the
 * index; checked first, nothing is queried), MINLSH_E_NOMEM,
 * MINLSH_E_TOOBIG, or what verify returned. */
MINLSH_API int minlsh_index_insert_novel(minlsh_novel_result *result,
                                         minlsh_index *index, uint64_t id,
                                         const uint32_t *sig, size_t k_sig,
                                         const minlsh_novel_options *opts);

/* ------------------------------------------------------------------------ */
/* Index statistics                                                         */
/* ------------------------------------------------------------------------ */

#define MINLSH_INDEX_HIST_CLASSES 40

/* What an index holds, read from its own tables (no band key is
 * recomputed). A bucket is one band's set of documents sharing that band's
 * key; its size counts documents (copies of one signature each count). */
typedef struct minlsh_index_stats {
    uint64_t documents;      /* minlsh_index_count */
    uint64_t signatures;     /* distinct signatures (identical ones are one) */
    uint64_t empty;          /* documents with the empty signature (never banded) */
    uint64_t buckets;        /* over all bands */
    uint64_t shared_buckets; /* buckets of two or more distinct signatures */
    uint64_t largest_bucket; /* documents in the largest bucket (0: none) */
    uint64_t hist[MINLSH_INDEX_HIST_CLASSES]; /* buckets by size: class 0 holds
                                1 document, class c > 0 from 2^(c-1) + 1 to 2^c
                                (the last class: everything larger) */
    uint64_t bytes;          /* memory the index holds, all of it */
    uint64_t signature_bytes; /* of which the stored signatures */
    uint64_t band_bytes;     /* of which the bucket tables and chains */
    uint32_t bands, rows;
} minlsh_index_stats;

/* Fill *stats. Linear in the size of the band tables; allocates nothing
 * (a mapped handle, minlsh_index_map: works on a loaded copy).
 * Errors: MINLSH_E_NULL; for a mapped handle, those of a load. Threads: read. */
MINLSH_API int minlsh_index_copy_stats(minlsh_index_stats *stats,
                                       const minlsh_index *index);

/* ------------------------------------------------------------------------ */
/* Mapped index files                                                       */
/* ------------------------------------------------------------------------ */

/* Save index to path (atomically, as minlsh_index_save) in format version
 * 2 (docs/format.md, "Mapped index file"): the documents as in version 1,
 * then every band's entries sorted by band key, the metadata, and a sum64
 * per 64 KiB block, so that minlsh_index_map can answer queries from the
 * file in place. The same documents and metadata always give the same
 * bytes. The file is about 8 * b bytes per document larger than version 1;
 * minlsh_index_load reads both versions. Allocates about 16 bytes per
 * document while it writes.
 * Errors: as minlsh_index_save; MINLSH_E_CORRUPT (index is mapped and a
 * block of its file is damaged). Threads: read. */
MINLSH_API int minlsh_index_save_mapped(const minlsh_index *index, const char *path);

/* Open the index file at path read-only in place (a private read-only
 * mapping; processes that map one file share its pages). A version 2 file
 * (minlsh_index_save_mapped) is not loaded: opening checks the header, the
 * directory, that the sizes fill the file exactly, the block checksum
 * table and the metadata's blocks; each other 64 KiB block is checked
 * against its checksum the first time a call reads from it, so a damaged
 * block makes that call return MINLSH_E_CORRUPT (and every later call that
 * reads it). A version 1 file is loaded whole, as minlsh_index_load would.
 * opts as for minlsh_index_load (the family check is made at open).
 * On a mapped handle: count, parameters, query, query_limited, query_many,
 * contains, copy_signature, copy_ids and copy_metadata read the file in
 * place (a query: its band searches, one or two blocks per band, and its
 * candidates' records). insert, insert_many and insert_novel go into an
 * in-memory delta that every query merges with the file's answers, so the
 * handle answers as the loaded index with the same inserts (query_limited
 * counts the members of the file's and the delta's buckets band by band,
 * in place); remove works on the delta and returns MINLSH_E_STATE for a
 * document of the file (load the file to remove it); set_metadata replaces
 * the handle's copy. save, save_buffer, save_mapped, copy_stats, the pairs
 * and clusters of an index and merge as a source first load a copy into
 * memory. The file must not be truncated while it is mapped
 * (minlsh's own saves replace it by renaming, which a mapping survives): a
 * read past a cut raises SIGBUS (docs/api.md says how to guard against it).
 * Errors: as minlsh_index_load, MINLSH_E_NOMEM (one byte per block is
 * allocated). Threads: the handle may be read by any number of threads. */
MINLSH_API int minlsh_index_map(minlsh_index **out, const char *path,
                                const minlsh_load_options *opts);

/* ------------------------------------------------------------------------ */
/* Index journals: durable changes in time proportional to the changes      */
/* ------------------------------------------------------------------------ */

/* A journal is an append-only file beside a saved index (docs/format.md,
 * "Index journal"): checksummed records of inserts and removals, each with
 * the caller's bytes (a document's name, say), that extend the saved file
 * named in its header. The protocol for a writer (holding the exclusive
 * minlsh_filelock of the index): open the index (minlsh_index_map is the
 * cheap way; minlsh_index_load works too), open its journal with
 * MINLSH_JOURNAL_WRITE (the records are replayed into the index), change
 * the index and append a record for each change, then minlsh_journal_sync:
 * from its return the changes survive a crash or kill -9. When
 * minlsh_journal_compact_due says so, minlsh_journal_compact saves the
 * index over its file and starts an empty journal. A reader opens the index
 * and its journal with MINLSH_JOURNAL_READ (under a shared lock).
 *
 * Crash safety: a record cut short or damaged with no commit record after
 * it is the torn tail of a sync that never returned: it is dropped
 * (MINLSH_JOURNAL_WRITE cuts it off the file). A damaged record with a
 * commit record after it is damage to synced records: the open fails with
 * MINLSH_E_CORRUPT and nothing is cut. A sync that returned 0 is never
 * lost. The journal
 * names its file by the file's trailer checksum, so a journal left beside
 * a file saved since (a compaction killed after the save, or a save by
 * another means) is stale: skipped on read, replaced on write, never
 * applied twice. Saving the index by other means makes the journal stale,
 * so replay it before. */
typedef struct minlsh_journal minlsh_journal;

#define MINLSH_JOURNAL_READ 0
#define MINLSH_JOURNAL_WRITE 1
#define MINLSH_JOURNAL_INSERT 1
#define MINLSH_JOURNAL_REMOVE 2

/* Called for each replayed record, after it was applied to the index: op
 * (MINLSH_JOURNAL_INSERT or _REMOVE), the id, and the record's bytes (valid
 * for the call only). A nonzero return stops the open, which returns it. */
typedef int (*minlsh_journal_record_fn)(void *opaque, uint32_t op, uint64_t id,
                                        const void *data, size_t len);

/* Open the journal at path (its symbolic links followed) for index (loaded
 * or mapped, as it came from its file: the journal must name that file;
 * an index that came from no file is refused) and replay its records into
 * index in order (insert or remove), calling on_record (may be NULL) for
 * each. No allocator: a journal belongs to its index and allocates with
 * the index's, as pairs and clusters of an index do.
 * No file at path: nothing to replay (MINLSH_JOURNAL_WRITE creates it). A
 * stale journal is not replayed (_WRITE replaces it by an empty one).
 * mode MINLSH_JOURNAL_READ never writes; _WRITE cuts a damaged tail and
 * keeps the file open for appending.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (mode), MINLSH_E_STATE (index came
 * from no file: save it first), MINLSH_E_FORMAT (not a journal),
 * MINLSH_E_CORRUPT (damaged header; a damaged record before committed
 * ones; a record the index refuses, such as an insert of an id it has), MINLSH_E_MISMATCH (k, seed, config
 * id, b or r differ from the index's), MINLSH_E_IO, MINLSH_E_NOMEM, what
 * on_record returned, and the index's insert errors. On error index may
 * hold part of the journal: free it. Threads: index is written. */
MINLSH_API int minlsh_journal_open(minlsh_journal **out, minlsh_index *index,
                                   const char *path, uint32_t mode,
                                   minlsh_journal_record_fn on_record, void *opaque);
/* Append a record (buffered; minlsh_journal_sync writes it): an insert of
 * id with its k_sig values, or a removal of id (sig NULL, k_sig 0), with
 * len bytes of data (at most 1 MiB). The journal records; it does not
 * change the index (the caller does both).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (op, k_sig), MINLSH_E_TOOBIG,
 * MINLSH_E_STATE (opened for reading), MINLSH_E_NOMEM. */
MINLSH_API int minlsh_journal_append(minlsh_journal *journal, uint32_t op, uint64_t id,
                                     const uint32_t *sig, size_t k_sig,
                                     const void *data, size_t len);
/* Write the appended records and a commit record, and fdatasync: 0 means
 * they are durable. A sync is all or nothing: replay applies records only
 * up to the last commit record, so a sync cut short by a crash adds none
 * of its records. On error nothing of them counts and they stay buffered.
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE, MINLSH_E_IO, MINLSH_E_NOMEM. */
MINLSH_API int minlsh_journal_sync(minlsh_journal *journal);
/* Catch up with the records other processes synced to the journal since
 * this handle last read or wrote it: a writer that keeps its mapped index
 * and journal open between lock acquisitions calls this after taking the
 * lock, instead of mapping the index again and replaying the whole journal.
 * Reads only the new bytes (nothing new: one stat), applies their committed
 * records to index in order and calls on_record (may be NULL) for each, as
 * an open would; a writer's handle then appends after them (a torn tail
 * left by a dead writer is cut off first).
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (records appended here and not
 * synced: sync first; or the journal was replaced or created since, by a
 * compaction: free the journal, map the index again and reopen it),
 * MINLSH_E_CORRUPT (as for open; the file is left as it is), MINLSH_E_IO,
 * MINLSH_E_NOMEM, what on_record returned, the index's insert errors; on
 * an error other than the first MINLSH_E_STATE, index may hold part of the
 * new records: free both and start over. Threads: index is written. */
MINLSH_API int minlsh_journal_refresh(minlsh_journal *journal, minlsh_index *index,
                                      minlsh_journal_record_fn on_record, void *opaque);
/* Bytes of the journal (header, records on disk and buffered) and records
 * (replayed and appended since the last compaction). */
MINLSH_API uint64_t minlsh_journal_bytes(const minlsh_journal *journal);
MINLSH_API uint64_t minlsh_journal_records(const minlsh_journal *journal);
/* 1 when the journal's records pass max(1 MiB, 1/32 of the index file's
 * size), the bound at which compacting keeps both the journal's replay
 * and the rewrite's share of each change small; else 0. MINLSH_E_NULL. */
MINLSH_API int minlsh_journal_compact_due(const minlsh_journal *journal,
                                          const minlsh_index *index);
/* Sync, save index over index_path (minlsh_index_save_mapped: atomic) and
 * replace the journal by an empty one naming the new file. Killed at any
 * point, the pair on disk holds every synced record exactly once.
 * Errors: as minlsh_journal_sync and minlsh_index_save_mapped. */
MINLSH_API int minlsh_journal_compact(minlsh_journal *journal, minlsh_index *index,
                                      const char *index_path);
/* Close; records appended since the last sync are dropped. NULL-safe. */
MINLSH_API void minlsh_journal_free(minlsh_journal *journal);

/* ------------------------------------------------------------------------ */
/* Sharing an index file between processes                                  */
/* ------------------------------------------------------------------------ */

/* An advisory lock for processes that share one saved file (an index, a
 * matrix). A save replaces the file by renaming a new one over it, so a
 * lock on the file itself would lock the old inode, which later processes
 * no longer see: the lock is taken on a companion file, PATH.lock (PATH,
 * its symbolic links followed, with ".lock" appended), created empty (mode 0666 less the umask) if it
 * does not exist and never removed (removing it would let two processes
 * lock two different files). The lock is flock(2)'s: it belongs to the
 * handle (two handles exclude each other even in one process), is
 * released by minlsh_filelock_free or when the process ends however it
 * ends, and interoperates with flock(1) on PATH.lock from shell scripts.
 *
 * The protocol for long-running processes sharing PATH: a writer takes an
 * exclusive lock, loads PATH, changes the index, saves it to PATH and only
 * then frees the lock (so no two writers work on the same version and
 * nothing saved is lost); a reader takes a shared lock while it loads. A
 * writer that keeps its index in memory between batches must reload it
 * after taking the lock, since others may have saved since. Locks are
 * advisory: they bind only processes that take them. On file systems
 * without flock support (some network file systems) the call fails with
 * MINLSH_E_IO. */
typedef struct minlsh_filelock minlsh_filelock;

#define MINLSH_LOCK_SHARED 1          /* many readers at once */
#define MINLSH_LOCK_EXCLUSIVE 2       /* one writer, no readers */
#define MINLSH_LOCK_WAIT_FOREVER UINT32_C(0xFFFFFFFF)

/* Take the lock of `path` (the saved file's path; the lock is on
 * path.lock) in mode MINLSH_LOCK_SHARED or _EXCLUSIVE, waiting at most
 * timeout_ms milliseconds (0: do not wait; MINLSH_LOCK_WAIT_FOREVER: no
 * limit). A shared lock on a read-only directory works if path.lock exists.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (mode, allocator), MINLSH_E_NOMEM,
 * MINLSH_E_IO (path.lock cannot be opened or created, or locking failed;
 * errno is left as the failing call set it), MINLSH_E_BUSY (another handle
 * holds a conflicting lock and timeout_ms passed). */
MINLSH_API int minlsh_filelock_new(minlsh_filelock **out, const char *path,
                                   uint32_t mode, uint32_t timeout_ms,
                                   const minlsh_allocator *alloc);
/* Release the lock. NULL is a no-op. */
MINLSH_API void minlsh_filelock_free(minlsh_filelock *lock);

/* Write len bytes of data to path as every minlsh save writes its files:
 * atomically (a temporary beside it, fsynced, renamed over it, the folder
 * fsynced), the new file keeping the mode and group of the one it replaces
 * (a group that cannot be kept takes its permissions with it), symbolic
 * links followed (the file they name is replaced), a device or FIFO written
 * in place, never replaced. For front ends' own files (the command's SVG).
 * alloc: NULL for malloc, or the allocator of its few small buffers.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (allocator), MINLSH_E_NOMEM,
 * MINLSH_E_IO (a folder: errno EISDIR; else errno as the failing call left
 * it). Threads: any. */
MINLSH_API int minlsh_file_save(const char *path, const void *data, size_t len,
                                const minlsh_allocator *alloc);

/* ------------------------------------------------------------------------ */
/* Store metadata for an index built elsewhere                              */
/* ------------------------------------------------------------------------ */

/* The metadata that makes a saved index a store (docs/format.md, "Store"),
 * for a front end that keeps its own index and names (Python's
 * MinHashLSH): set it on the index (minlsh_index_set_metadata) and any
 * save of it (minlsh_index_save_mapped, minlsh_journal_compact,
 * minlsh_index_save) writes a file that minlsh_store_open, the command's
 * index subcommands and every binding read. name i, names[name_offsets[i]
 * .. name_offsets[i+1]) (name_offsets: count + 1 entries, at most 1 MiB
 * each; empty: no name), is the name of the index's i-th document in
 * ascending id order. threshold is the store's, in (0, 1]; next_id, above
 * every id, the id the next document gets. journal (may be NULL): the
 * journal the save will fold in, synced; a journal left behind by a kill
 * between the save and its reset is then replayed from where the file
 * holds it. The shingling recorded is MINLSH_SHINGLER_OPTIONS_INIT's with
 * the index's config id, so a store opened on the file takes texts only if
 * the two agree under its key; otherwise open it with MINLSH_STORE_ANY_KEY
 * (names, signatures and queries by signature).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (threshold, an id not below
 * next_id, offsets decreasing, a name given twice), MINLSH_E_TOOBIG (a
 * name over 1 MiB), MINLSH_E_STATE (journal has records not synced),
 * MINLSH_E_NOMEM, MINLSH_E_BUFSIZE (*n_out: the bytes needed).
 * Threads: reads index and journal. */
MINLSH_API int minlsh_store_encode_metadata(const minlsh_index *index,
                                            const minlsh_journal *journal,
                                            double threshold, uint64_t next_id,
                                            const void *names,
                                            const uint64_t *name_offsets, void *buf,
                                            size_t cap, size_t *n_out);
/* Read it back from an index loaded or mapped from a store's file (or from
 * a file of the command's older index format), as it came from the file:
 * the store's threshold, next id and flags (MINLSH_STORE_SETS; any of the
 * three may be NULL), and the names of the index's documents in ascending
 * id order, as minlsh_store_encode_metadata takes them (name_offsets:
 * count + 1 entries, always filled; names: cap bytes, *n_out the total).
 * Errors: MINLSH_E_NULL, MINLSH_E_FORMAT (the metadata is not a store's),
 * MINLSH_E_CORRUPT (damaged, or its documents are not the index's, e.g.
 * after an insert), MINLSH_E_NOMEM, MINLSH_E_BUFSIZE. Threads: reads index. */
MINLSH_API int minlsh_store_decode_metadata(double *threshold, uint64_t *next_id,
                                            uint32_t *flags, const minlsh_index *index,
                                            uint64_t *name_offsets, void *names,
                                            size_t cap, size_t *n_out);

/* ------------------------------------------------------------------------ */
/* Presets: the dedup settings of published pipelines                       */
/* ------------------------------------------------------------------------ */

/* The shingling, MinHash length, banding and threshold that a published
 * pipeline used, as minlsh's nearest equivalents (docs/presets.md gives each
 * one's sources and what minlsh cannot reproduce: the pipelines' own hash
 * functions, tokenizers and extra checks). The table is part of the library
 * so that the command and every binding offer the same presets.
 *
 * The caller sets version to the MINLSH_PRESET_VERSION it compiled against;
 * the library fills only the fields that version has. The strings are
 * static and live as long as the library. */
#define MINLSH_PRESET_VERSION 1

typedef struct minlsh_preset {
    uint32_t version;      /* MINLSH_PRESET_VERSION, set by the caller */
    uint32_t unit;         /* MINLSH_UNIT_* */
    uint32_t shingle_k;    /* units per shingle */
    uint32_t flags;        /* MINLSH_NORM_* (a Unicode flag with its ASCII twin) */
    uint32_t num_perm;     /* MinHash values per signature */
    uint32_t bands, rows;  /* the banding; bands * rows <= num_perm */
    uint32_t reserved;     /* 0 */
    double threshold;      /* the Jaccard threshold, stated or implied */
    const char *name;      /* what --preset and preset= take: lower case */
    const char *pipeline;  /* who used it, in words */
    const char *source;    /* where the figures come from: paper section, file */
} minlsh_preset;

#define MINLSH_PRESET_INIT \
    { MINLSH_PRESET_VERSION, 0, 0, 0, 0, 0, 0, 0, 0.0, NULL, NULL, NULL }

/* The number of presets. Thread-safe. */
MINLSH_API uint32_t minlsh_preset_count(void);
/* Preset number index (0 .. count - 1, in a fixed order) into *out.
 * Errors: MINLSH_E_NULL, MINLSH_E_VERSION (out->version not 1..
 * MINLSH_PRESET_VERSION), MINLSH_E_NOTFOUND (index >= count). Thread-safe. */
MINLSH_API int minlsh_preset_get(minlsh_preset *out, uint32_t index);
/* The preset called name (ASCII case ignored) into *out.
 * Errors: MINLSH_E_NULL, MINLSH_E_VERSION, MINLSH_E_NOTFOUND. Thread-safe. */
MINLSH_API int minlsh_preset_find(minlsh_preset *out, const char *name);

/* ------------------------------------------------------------------------ */
/* Thread pool                                                              */
/* ------------------------------------------------------------------------ */

/* The threads minlsh works on, as a handle, so that a front end and the
 * dedup engine share one pool (minlsh_dedup_options.pool) instead of each
 * holding its own. A pool of n workers is the calling thread (worker 0) and
 * n - 1 threads that wait between runs. A run hands items [0, n) out in
 * chunks of consecutive items; every worker, the caller included, takes
 * chunks until none is left. Results written only into per-item slots or
 * per-worker scratch (indexed by the worker number) never depend on the
 * number of threads or on timing. If a thread cannot be created the pool
 * goes on with those it has (at worst the caller alone): that changes the
 * speed, never a result. One run at a time per pool: the caller provides
 * the exclusion, and an engine given the pool runs on it only inside its
 * own calls. */
typedef struct minlsh_pool minlsh_pool;

/* Process items [begin, end) as worker number worker (0 .. threads - 1).
 * A non-zero return stops the run (no new chunk is handed out) and is what
 * the run returns. */
typedef int (*minlsh_pool_fn)(void *ctx, uint32_t worker, size_t begin, size_t end);

/* A pool of threads workers (0: one per online processor; more than 256:
 * 256). Errors: MINLSH_E_NULL, MINLSH_E_PARAM (allocator), MINLSH_E_NOMEM
 * (then *out is NULL). */
MINLSH_API int minlsh_pool_new(minlsh_pool **out, uint32_t threads,
                               const minlsh_allocator *alloc);
/* Stops and joins the threads. NULL-safe; not during a run. */
MINLSH_API void minlsh_pool_free(minlsh_pool *pool);
/* Workers, the caller included (1 for NULL). Threads: any. */
MINLSH_API uint32_t minlsh_pool_threads(const minlsh_pool *pool);
/* Run fn over n items in chunks of chunk (0 means 1) on every worker and
 * return when all are done: 0, or the first non-zero return of fn. A NULL
 * pool runs every chunk on the calling thread as worker 0. */
MINLSH_API int minlsh_pool_run(minlsh_pool *pool, size_t n, size_t chunk,
                               minlsh_pool_fn fn, void *ctx);
/* minlsh_pool_run in two halves, so that the caller can do other work
 * while the threads start on the items: start hands them out (a pool of
 * one worker does nothing yet), wait makes the caller a worker for
 * whatever is left and returns what run would. Every start needs its wait
 * before anything else runs on the pool.
 * Errors (start): MINLSH_E_NULL (pool or fn), MINLSH_E_STATE (a run is
 * under way). */
MINLSH_API int minlsh_pool_start(minlsh_pool *pool, size_t n, size_t chunk,
                                 minlsh_pool_fn fn, void *ctx);
MINLSH_API int minlsh_pool_wait(minlsh_pool *pool);

/* ------------------------------------------------------------------------ */
/* Normalisation flag names                                                 */
/* ------------------------------------------------------------------------ */

/* The MINLSH_NORM_* flags as words, one table for every front end: html,
 * lowercase, strip-punct, collapse-space, nfkc, casefold, unicode-punct,
 * unicode-space, fold-digits, cjk-words (MINLSH_NORM_HTML, _CASEFOLD,
 * _PUNCT, _WHITESPACE, _NFKC, _UCASEFOLD, _UPUNCT, _UWHITESPACE, _DIGITS,
 * _CJK_WORDS), as the minlsh command's options spell them and its older
 * index files hold them. A word names its own bit only: casefold is
 * MINLSH_NORM_UCASEFOLD without the ASCII twin a shingler adds. */

/* The flags named by the len bytes at text: names separated by commas (one
 * comma at the end is allowed), "none", or no bytes at all for 0. text may
 * be NULL when len is 0. On error *flags is 0.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (an unknown or empty name).
 * Threads: any. */
MINLSH_API int minlsh_norm_flags_parse(uint32_t *flags, const char *text, size_t len);
/* The names of the named bits of flags, comma-separated in the order above,
 * or "none" when no named bit is set (bits without a name are left out), as
 * *n_out bytes in buf, without a NUL. minlsh_norm_flags_parse reads them
 * back. Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE (*n_out: the length
 * needed). Threads: any. */
MINLSH_API int minlsh_norm_flags_format(uint32_t flags, char *buf, size_t cap,
                                        size_t *n_out);

/* ------------------------------------------------------------------------ */
/* Scratch files                                                            */
/* ------------------------------------------------------------------------ */

/* A temporary file for data that does not fit a memory budget: the dedup
 * engine keeps its spilled runs in such files, the minlsh command the input
 * records it writes back (--output kept). The file is unlinked as soon as it
 * is created (O_TMPFILE where the system has it), so none survives the
 * process, however it ends. Each append reserves its range of bytes
 * atomically, so any number of threads may append and read on one handle at
 * once and every append lands in a range of its own. A call that fails with
 * MINLSH_E_IO leaves errno saying why (ENOENT, ENOTDIR, EACCES, ENOSPC,
 * EFBIG...), and the handle keeps the first such errno for any thread to
 * read (minlsh_scratch_errno). */
typedef struct minlsh_scratch minlsh_scratch;

/* A new, empty scratch file in the folder dir (NULL or "": $TMPDIR, else
 * /tmp). Errors: MINLSH_E_NULL, MINLSH_E_PARAM (allocator), MINLSH_E_NOMEM,
 * MINLSH_E_IO (errno: ENOENT for a missing folder, ENOTDIR for not a folder,
 * EACCES for one not writable, among others). */
MINLSH_API int minlsh_scratch_open(minlsh_scratch **out, const char *dir,
                                   const minlsh_allocator *alloc);
/* Close the file, which gives its space back. NULL-safe; not while another
 * thread uses the handle. */
MINLSH_API void minlsh_scratch_free(minlsh_scratch *scratch);
/* Append len bytes (data may be NULL when len is 0); *off (may be NULL)
 * receives the offset they start at. A failed append still takes its range:
 * the size counts it and its bytes are unspecified.
 * Errors: MINLSH_E_NULL, MINLSH_E_IO (a full disk, a file size limit).
 * Threads: any, on the same handle too (appends and reads). */
MINLSH_API int minlsh_scratch_append(uint64_t *off, minlsh_scratch *scratch,
                                     const void *data, size_t len);
/* Read the len bytes at off (buf may be NULL when len is 0).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (the range ends past
 * minlsh_scratch_size), MINLSH_E_IO. Threads: any. */
MINLSH_API int minlsh_scratch_read(const minlsh_scratch *scratch, uint64_t off,
                                   void *buf, size_t len);
/* The bytes appended so far: where the next append starts. Threads: any. */
MINLSH_API uint64_t minlsh_scratch_size(const minlsh_scratch *scratch);
/* The errno of the first failure on the handle (0: none), whichever thread
 * met it. Threads: any. */
MINLSH_API int minlsh_scratch_errno(const minlsh_scratch *scratch);

/* ------------------------------------------------------------------------ */
/* Dedup engine                                                             */
/* ------------------------------------------------------------------------ */

/* The whole near-duplicate policy over a batch of documents, fed in order
 * and numbered 0, 1, ... as they are added: exact duplicates by
 * fingerprint, signatures, band keys, candidates, verification, clusters,
 * and a keep or drop decision for every document. Every result is the same
 * whatever the thread count. docs/dedup.md describes the policy. */
typedef struct minlsh_dedup minlsh_dedup;

#define MINLSH_KEEP_FIRST 1        /* keep the first document, in input order */
#define MINLSH_KEEP_LONGEST 2      /* keep the longest (ties: the first) */
#define MINLSH_GROUP_COMPONENTS 1  /* one kept document per connected component */
#define MINLSH_GROUP_STRICT 2      /* drop a document only for a kept near-duplicate */
#define MINLSH_VERIFY_EXACT 1      /* exact Jaccard of the shingle sets */
#define MINLSH_VERIFY_SIGNATURE 2  /* the signature estimate (no sets kept) */

/* Version 2 added pool; version 1 callers are still accepted (their
 * struct ends at tmpdir, and pool is NULL for them). */
#define MINLSH_DEDUP_OPTIONS_VERSION 2

typedef struct minlsh_dedup_options {
    uint32_t version;    /* MINLSH_DEDUP_OPTIONS_VERSION */
    uint32_t keep;       /* MINLSH_KEEP_*; default FIRST */
    uint32_t group;      /* MINLSH_GROUP_*; default COMPONENTS */
    uint32_t verify;     /* MINLSH_VERIFY_*; default EXACT */
    double threshold;    /* Jaccard threshold in (0, 1]; default 0.8 */
    uint32_t bands;      /* b and r; both 0 (default): planned so that */
    uint32_t rows;       /* P(candidate | threshold) >= 0.999 */
    uint32_t threads;    /* 0 (default): one per online processor */
    uint32_t all_pairs;  /* 1: verify every candidate pair, for
                            minlsh_pairs_from_dedup; 0 (default): with
                            GROUP_COMPONENTS, a pair already inside one
                            component is not verified (the decisions are
                            the same) and minlsh_pairs_from_dedup refuses */
    uint64_t max_bucket; /* a band bucket of more distinct documents is left
                            out (counted in the stats); 0 (default): no cap */
    uint64_t memory;     /* bytes the engine's growing data may take in memory
                            before it goes to temporary files (records,
                            runs, candidates, decisions); 0 (default):
                            minlsh_dedup_default_memory();
                            MINLSH_DEDUP_MEMORY_UNLIMITED: no limit. Results
                            do not depend on it. */
    const char *tmpdir;  /* where those files go (NULL: $TMPDIR, else /tmp);
                            copied. They are made when first needed and
                            unlinked at once, so none survives the process,
                            however it ends. When one fails, the call
                            returns MINLSH_E_IO with errno set on the
                            caller's thread to why (ENOENT, ENOTDIR, EACCES,
                            ENOSPC, EFBIG...), even when it failed on one of
                            the engine's threads. */
    minlsh_pool *pool;   /* version 2: the pool to run on, shared with the
                            caller (threads is then ignored), which must
                            outlive the engine and run nothing else during
                            the engine's calls; NULL (default): the engine
                            makes its own of threads workers */
} minlsh_dedup_options;

#define MINLSH_DEDUP_OPTIONS_INIT                                              \
    { MINLSH_DEDUP_OPTIONS_VERSION, MINLSH_KEEP_FIRST, MINLSH_GROUP_COMPONENTS, \
      MINLSH_VERIFY_EXACT, 0.8, 0, 0, 0, 0, 0, 0, NULL, NULL }

/* The defaults of version 1 or 2 (only the fields that version has are
 * written). Errors: MINLSH_E_NULL, MINLSH_E_VERSION. */
MINLSH_API int minlsh_dedup_options_init(minlsh_dedup_options *opts,
                                         uint32_t version);

/* The memory option's value for no limit at all. */
#define MINLSH_DEDUP_MEMORY_UNLIMITED UINT64_MAX

/* The budget that memory 0 stands for: half the physical memory (4 GiB if
 * it is unknown), so that a corpus larger than the machine spills and
 * completes while anything smaller stays in memory. Threads: any. */
MINLSH_API uint64_t minlsh_dedup_default_memory(void);

/* The banding the engine uses for opts and k values per signature: bands
 * and rows as given (both or neither, b*r <= k), else the fewest false
 * positives with P(candidate | t) >= 0.999, t the threshold or 0.99 if it
 * is higher (P grows with similarity, so the recall holds at t). Where no
 * banding of k values reaches that recall, MINLSH_E_PARAM: the engine
 * refuses rather than plan a lower recall. Front ends call it to name the
 * banding before a run, or to explain a refusal.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM. Threads: any. */
MINLSH_API int minlsh_dedup_plan(uint32_t *bands, uint32_t *rows,
                                 const minlsh_dedup_options *opts, uint32_t k);

/* The canonical form of a document id given as JSON text (id, n bytes;
 * surrounding whitespace ignored): two ids are the same id when their
 * canonical forms are equal bytes. A string is decoded and written back
 * with only the escapes JSON requires ("\u0041" and "A" are one id); a
 * number by its exact decimal value (1, 1.0, 1e0 and 10E-1 are one id,
 * printed 1; -0 is 0), as an integer up to 21 digits, a decimal fraction
 * down to 1e-6, else d.ddde+N; any other kind (true, false, null, objects,
 * arrays) or invalid JSON is refused. The canonical form is never longer
 * than n + 32 bytes.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (not a JSON string or number, or
 * an exponent past 10^8), MINLSH_E_BUFSIZE (*n_out: the size needed).
 * Threads: any. */
MINLSH_API int minlsh_dedup_canonical_id(const void *id, size_t n, char *out,
                                         size_t cap, size_t *n_out);

/* An engine shingling with a copy of shingler and signing with a family of
 * the same k and seed as family (opts NULL: the defaults).
 * Errors: MINLSH_E_NULL, MINLSH_E_VERSION, MINLSH_E_PARAM (an option out of
 * range, b*r > k, no banding reaching minlsh_dedup_plan's recall,
 * allocator), MINLSH_E_NOMEM. */
MINLSH_API int minlsh_dedup_new(minlsh_dedup **out,
                                const minlsh_shingler *shingler,
                                const minlsh_family *family,
                                const minlsh_dedup_options *opts,
                                const minlsh_allocator *alloc);
MINLSH_API void minlsh_dedup_free(minlsh_dedup *dedup);

/* Documents added so far; 0 for NULL. */
MINLSH_API uint64_t minlsh_dedup_count(const minlsh_dedup *dedup);

/* How many leading values of a document's signature the engine reads: with
 * exact verification only its band keys do, bands x rows values (90 of 128
 * at the default plan); with signature verification all k. A front end that
 * signs for the engine needs only these (minlsh_family_sign_prefix), and
 * k_sig may be this number instead of k: the results are the same. 0 for
 * NULL. Threads: any. */
MINLSH_API uint32_t minlsh_dedup_signature_values(const minlsh_dedup *dedup);

/* Shingle, fingerprint and sign n texts on the engine's threads and add
 * them in order. A text that fails (MINLSH_E_TOOBIG past the shingler's
 * max_document_bytes) is not added: its code goes to status[i] (status may
 * be NULL), the others are added all the same, and the first failure's code
 * is returned. On MINLSH_E_NOMEM the texts before the one that failed are
 * added (status 0) and the others not (status MINLSH_E_NOMEM).
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (after run), MINLSH_E_NOMEM,
 * MINLSH_E_TOOBIG, MINLSH_E_IO (a temporary file, with a memory budget). */
MINLSH_API int minlsh_dedup_add_texts(minlsh_dedup *dedup,
                                      const void *const *texts,
                                      const size_t *lens, size_t n,
                                      int32_t *status);

/* Add one document shingled elsewhere: its set (n strictly increasing
 * hashes), its signature (k values, or NULL to sign the set here), its
 * fingerprint (what makes exact duplicates) and its length (what "longest"
 * compares, e.g. its bytes). sig may also hold just the
 * minlsh_dedup_signature_values leading values (k_sig that number). With
 * signature verification hashes may be NULL when sig is given; exact
 * verification needs the set.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (hashes not increasing, k_sig
 * neither k nor minlsh_dedup_signature_values when sig is given),
 * MINLSH_E_STATE (after run), MINLSH_E_NOMEM, MINLSH_E_TOOBIG,
 * MINLSH_E_IO (a temporary file). */
MINLSH_API int minlsh_dedup_add_set(minlsh_dedup *dedup, const uint64_t *hashes,
                                    size_t n, const uint32_t *sig, size_t k_sig,
                                    const uint8_t fp[MINLSH_FINGERPRINT_BYTES],
                                    uint64_t length);

/* One document for minlsh_dedup_add_docs: what minlsh_dedup_add_set takes,
 * and an optional id. */
typedef struct minlsh_dedup_doc {
    const uint64_t *hashes; /* its set: n strictly increasing hashes (NULL
                               when n is 0) */
    size_t n;
    const uint32_t *sig;    /* k_sig values, or NULL to sign the set here */
    const uint8_t *fp;      /* MINLSH_FINGERPRINT_BYTES: exact duplicates */
    uint64_t length;        /* what MINLSH_KEEP_LONGEST compares */
    const void *id;         /* id_n bytes (ignored with MINLSH_DEDUP_ID_NONE) */
    size_t id_n;
    uint32_t id_kind;       /* MINLSH_DEDUP_ID_* */
    uint32_t k_sig;         /* values in sig: the engine's k, or
                               minlsh_dedup_signature_values */
} minlsh_dedup_doc;

#define MINLSH_DEDUP_ID_NONE 0  /* no id: never a repeat */
#define MINLSH_DEDUP_ID_BYTES 1 /* raw bytes (a path): equal bytes, one id */
#define MINLSH_DEDUP_ID_JSON 2  /* a JSON string or number, compared by its
                                   minlsh_dedup_canonical_id form; never
                                   equal to a BYTES id */
/* status of a document skipped because an earlier one (this call or
 * before) had its id; not an error. */
#define MINLSH_DEDUP_REPEATED_ID 1

/* Add n documents, numbered in input order, on the engine's pool: ids
 * checked, records stored and signatures pended in parallel, with the same
 * results as minlsh_dedup_add_set of each in order. A document whose id an
 * earlier one had is skipped (status MINLSH_DEDUP_REPEATED_ID, counted in
 * the stats), whatever the number of threads. Every document gets a status
 * (status may be NULL): 0 (added), MINLSH_DEDUP_REPEATED_ID, or the error
 * minlsh_dedup_add_set would return for it (MINLSH_E_PARAM also for a JSON
 * id minlsh_dedup_canonical_id refuses, or an unknown id_kind); a failed
 * document is not added and the others are. Returns 0, or the first
 * document's error. On MINLSH_E_NOMEM or MINLSH_E_IO the documents before
 * the one that failed are added and the others have that status. Ids take
 * memory outside the budget (docs/dedup.md). Threads: runs on the pool;
 * the caller provides exclusion as for every add.
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (after run), MINLSH_E_TOOBIG (past
 * 2^32 - 2 documents), MINLSH_E_NOMEM, MINLSH_E_IO, and those of the
 * documents. */
MINLSH_API int minlsh_dedup_add_docs(minlsh_dedup *dedup,
                                     const minlsh_dedup_doc *docs, size_t n,
                                     int32_t *status);

/* Copy document doc's id (JSON ids in canonical form) into out (cap bytes;
 * *n_out: its length) and its kind into *kind (MINLSH_DEDUP_ID_*; NONE and
 * length 0 for a document added without one). kind may be NULL. Threads:
 * any number at once, none adding.
 * Errors: MINLSH_E_NULL, MINLSH_E_NOTFOUND (doc >= count),
 * MINLSH_E_BUFSIZE (*n_out: the size needed). */
MINLSH_API int minlsh_dedup_copy_id(const minlsh_dedup *dedup, uint64_t doc,
                                    void *out, size_t cap, size_t *n_out,
                                    uint32_t *kind);

/* Find and verify the near-duplicates and decide, once, after the last add.
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (run already), MINLSH_E_NOMEM or
 * MINLSH_E_IO (a temporary file; either way the engine may be run again). */
MINLSH_API int minlsh_dedup_run(minlsh_dedup *dedup);

/* What happens to one document. */
typedef struct minlsh_dedup_decision {
    uint64_t cluster;        /* its cluster's number: clusters of two or
                                more documents (COMPONENTS: a connected
                                component; STRICT: a kept document and those
                                attributed to it) numbered from 1 in the
                                order of their first document; 0 alone */
    uint64_t representative; /* the kept document it is attributed to (itself
                                when kept) */
    double similarity;       /* verified similarity to the representative
                                (1 for itself and for exact copies) */
    uint32_t kept;           /* 1 kept, 0 dropped */
    uint32_t exact;          /* 1 if dropped as an exact copy of it */
} minlsh_dedup_decision;

/* Copy the decisions of documents first, first+1, ... into decisions
 * (at most cap; *n_out = how many were copied). Errors: MINLSH_E_NULL,
 * MINLSH_E_STATE (not run), MINLSH_E_NOTFOUND (first > count). */
MINLSH_API int minlsh_dedup_copy_decisions(const minlsh_dedup *dedup,
                                           uint64_t first,
                                           minlsh_dedup_decision *decisions,
                                           size_t cap, size_t *n_out);

/* The signature estimate of documents a and b.
 * Errors: MINLSH_E_NULL, MINLSH_E_NOTFOUND. */
MINLSH_API int minlsh_dedup_estimate(double *out, const minlsh_dedup *dedup,
                                     uint64_t a, uint64_t b);

typedef struct minlsh_dedup_stats {
    uint64_t documents;      /* added */
    uint64_t empty;          /* with no shingle: never near-duplicates */
    uint64_t exact_groups;   /* groups of two or more exact copies */
    uint64_t candidates;     /* distinct candidate pairs of distinct texts
                                verified (GROUP_COMPONENTS without
                                all_pairs: not those already joined) */
    uint64_t verified;       /* candidates that passed the threshold */
    uint64_t capped_buckets; /* buckets left out by max_bucket */
    uint64_t kept;
    uint64_t dropped;
    uint64_t bytes;          /* memory the engine holds now */
    uint64_t temp_bytes;     /* written to temporary files */
    uint32_t bands, rows;    /* the banding used */
    uint64_t repeated_ids;   /* documents skipped by minlsh_dedup_add_docs
                                for an id an earlier one had */
} minlsh_dedup_stats;

/* Errors: MINLSH_E_NULL. Counts of the run are 0 before it. */
MINLSH_API int minlsh_dedup_copy_stats(minlsh_dedup_stats *stats,
                                       const minlsh_dedup *dedup);

/* Every verified pair of documents (exact copies included, similarity 1),
 * document numbers as ids; max_pairs as everywhere.
 * Errors: MINLSH_E_NULL, MINLSH_E_STATE (not run, or GROUP_COMPONENTS
 * without all_pairs: pairs inside a component were not verified),
 * MINLSH_E_PARAM (allocator), MINLSH_E_NOMEM, MINLSH_E_TOOBIG. */
MINLSH_API int minlsh_pairs_from_dedup(minlsh_pairs **out,
                                       const minlsh_dedup *dedup,
                                       uint64_t max_pairs,
                                       const minlsh_allocator *alloc);
/* The clusters of the decisions: each kept document with the documents
 * attributed to it (COMPONENTS: the connected components of the verified
 * pairs). Errors: MINLSH_E_NULL, MINLSH_E_STATE, MINLSH_E_PARAM,
 * MINLSH_E_NOMEM. */
MINLSH_API int minlsh_clusters_from_dedup(minlsh_clusters **out,
                                          const minlsh_dedup *dedup,
                                          const minlsh_allocator *alloc);

/* A verified pair of documents a < b, each the first document of its exact
 * group, and their similarity: what minlsh_dedup_decide decides from. */
typedef struct minlsh_dedup_edge {
    uint64_t a, b;
    double similarity;
} minlsh_dedup_edge;

/* The engine's keep/drop policy on pairs found and verified elsewhere (a
 * distributed pipeline, say): a decision for each of n_docs documents into
 * decisions (n_docs of them). exact_of[i] is the first document with i's
 * fingerprint (i itself if none; NULL: no exact copies); lengths are what
 * MINLSH_KEEP_LONGEST compares (NULL: all equal); repeated edges count
 * once. similarity is 1 for kept documents and exact copies, the edge's for
 * a document with a verified edge to its representative, and NaN otherwise
 * (COMPONENTS: measure it yourself).
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (keep, group, an edge not a < b <
 * n_docs between group firsts or with a similarity outside [0, 1], exact_of
 * not pointing at or before i to a group first, allocator), MINLSH_E_TOOBIG
 * (n_docs past 2^32 - 2), MINLSH_E_NOMEM. */
MINLSH_API int minlsh_dedup_decide(const minlsh_dedup_edge *edges, size_t n_edges,
                                   uint64_t n_docs, const uint64_t *exact_of,
                                   const uint64_t *lengths, uint32_t keep,
                                   uint32_t group, minlsh_dedup_decision *decisions,
                                   const minlsh_allocator *alloc);


/* ------------------------------------------------------------------------ */
/* JSON Lines records                                                        */
/* ------------------------------------------------------------------------ */

/* The reader of `minlsh dedup --jsonl`, for front ends that read the same
 * records (docs/cli.md, "Input"): a line is one JSON object
 * (RFC 8259, checked in full: strings valid UTF-8 without unpaired
 * surrogates, nesting to 256 levels). The id field must be a string or a
 * number and is given as its raw token (quotes included for a string); the
 * text field must be a string and is given decoded to UTF-8; a \udc80 to
 * \udcff escape stands for the byte 0x80 to 0xff (the command's JSON
 * output writes a byte that is not UTF-8 so). A later occurrence of a field
 * replaces an earlier one; other fields are checked and skipped. Messages
 * count columns in bytes from 1 and are cut to msgcap (NULL or 0: none).
 * Decoding never lengthens a string: room for as many bytes as the line
 * has always holds its text. */

/* Returned for a line of white space only: no record, not an error. */
#define MINLSH_JSONL_BLANK 1

/* One line, line[0..len) without its line end. On MINLSH_OK the text is
 * text[0 .. *text_len) (cap bytes of room; len always suffice) and the id
 * token line[*id_offset .. + *id_len). Returns MINLSH_OK,
 * MINLSH_JSONL_BLANK, or MINLSH_E_FORMAT with the reason in msg (not an
 * object, invalid JSON with its column, a missing field, a field of the
 * wrong kind). Allocates nothing. Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE
 * (cap too small for the text). */
MINLSH_API int minlsh_jsonl_parse_line(const void *line, size_t len, const char *id_field,
                                       const char *text_field, void *text, size_t cap,
                                       size_t *text_len, size_t *id_offset, size_t *id_len,
                                       char *msg, size_t msgcap);

/* For minlsh_jsonl_parse_block: the block starts its input, so a UTF-8
 * byte-order mark before its first line is left out. */
#define MINLSH_JSONL_INPUT_START 1u

/* The records of a block of whole lines, block[0..len) (the last line's
 * newline optional), for callers that read a partition at a time: every
 * line that is not blank (only spaces, tabs and carriage returns) is one
 * record, in order, its carriage return before the newline left out, as
 * `minlsh dedup --jsonl` reads a file. Record i's text is
 * texts[text_offsets[i] .. text_offsets[i+1]) (text_offsets has cap + 1
 * entries; texts needs at most len bytes), its id token
 * block[id_offsets[i] .. + id_lengths[i]), the offset of its line in
 * line_offsets[i] (may be NULL) and its status in status[i]: MINLSH_OK, or
 * MINLSH_E_FORMAT with an empty text and id (minlsh_jsonl_parse_line on
 * that line gives the message). *n_out is the number of records; with more
 * than cap, MINLSH_E_BUFSIZE and *n_out the number needed. flags: 0 or
 * MINLSH_JSONL_INPUT_START. One pass, nothing allocated.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (flags), MINLSH_E_BUFSIZE. */
MINLSH_API int minlsh_jsonl_parse_block(const void *block, size_t len, uint32_t flags,
                                        const char *id_field, const char *text_field,
                                        void *texts, size_t texts_cap,
                                        uint64_t *text_offsets, uint64_t *id_offsets,
                                        uint64_t *id_lengths, uint64_t *line_offsets,
                                        int32_t *status, size_t cap, size_t *n_out);

/* A line too long to hold, given in pieces. next gives the next piece
 * (returns 1 with *piece and *n set, the piece valid until the next call;
 * 0 at the end of the line; a negative value stops the parse, which returns
 * it). text receives the text field decoded, in order, a piece at a time
 * (returns 0, or a negative value that stops the parse and is returned);
 * restart (may be NULL) says that a later text field replaces what text got
 * so far. id receives the id token once, at the end, if the record is
 * valid (its return value as text's). */
typedef struct minlsh_jsonl_source {
    int (*next)(void *ctx, const unsigned char **piece, size_t *n);
    int (*text)(void *ctx, const char *p, size_t n);
    void (*restart)(void *ctx);
    int (*id)(void *ctx, const char *p, size_t n);
    void *ctx;
} minlsh_jsonl_source;

/* minlsh_jsonl_parse_line on the line src gives: the same checks, fields,
 * messages and return values (or a callback's stop code). Memory, from
 * alloc (NULL: malloc and free): a window of 64 KiB (more only while a key
 * or the id is longer), up to 64 KiB of decoded text not yet handed on, and
 * the id, all freed before it returns.
 * Errors: MINLSH_E_NULL (src, a callback but restart, a field name),
 * MINLSH_E_PARAM (allocator), MINLSH_E_NOMEM. */
MINLSH_API int minlsh_jsonl_parse_stream(const minlsh_jsonl_source *src, const char *id_field,
                                         const char *text_field, char *msg, size_t msgcap,
                                         const minlsh_allocator *alloc);

/* The JSON string token[0..len) (quotes included) decoded into out (cap
 * bytes; len always suffice): *n_out bytes. MINLSH_E_FORMAT if the token
 * is not exactly one valid JSON string. Errors: MINLSH_E_NULL,
 * MINLSH_E_BUFSIZE. */
MINLSH_API int minlsh_json_string_decode(const void *token, size_t len, void *out, size_t cap,
                                         size_t *n_out);


#ifdef __cplusplus
}
#endif

#endif /* MINLSH_EXPERIMENTAL_API */
