/*
 * lib/shingle: SipHash-2-4, normalisation, tokenising and the shingler.
 * Internal header (never installed). The first part is for the layers above
 * (minhash, lsh); the part marked "layer-private" is for lib/shingle only.
 * docs/shingling.md is the specification of every byte this layer hashes.
 */
#ifndef MINLSH_SHINGLE_H
#define MINLSH_SHINGLE_H

#include "common/common.h"
#include "common/sort.h"

/* ---- SipHash-2-4 ----------------------------------------------------------- */

/* The scalar SipHash and its round live in lib/common (the band keys use
 * them too). */
#include "common/siphash.h"

/* ---- SipHash lanes: many messages, one key -------------------------------- */

/* out[i] = minlsh__siphash24_u64(k0, k1, msg[i], len[i]) for i < n: the same
 * bits, computed several messages at a time in SIMD lanes (siphash_avx2.c:
 * 4 lanes, siphash_avx512.c: 8 lanes, each compiled with its own flags).
 * Messages may have any lengths and may overlap; msg[i] may be NULL only
 * when len[i] is 0. Never reads outside a message. Pure and thread-safe. */
typedef struct minlsh__siphash_many_kernel {
    const char *name;
    void (*hash)(uint64_t k0, uint64_t k1, const uint8_t *const *msg,
                 const size_t *len, size_t n, uint64_t *out);
} minlsh__siphash_many_kernel;

/* One message at a time (the specification's loop). */
extern const minlsh__siphash_many_kernel minlsh__siphash_many_portable;
#if MINLSH__WITH_AVX2
extern const minlsh__siphash_many_kernel minlsh__siphash_many_avx2;
#endif
#if MINLSH__WITH_AVX512
extern const minlsh__siphash_many_kernel minlsh__siphash_many_avx512;
#endif
/* The kernel table (MINLSH__KERNEL_DISPATCH, lib/common/common.h): the
 * kernel of a level (NULL if not compiled in or not supported by the CPU),
 * the one of minlsh__simd_level() (the level the MinHash kernel follows too;
 * never NULL, thread-safe), and every usable one, portable first (tests and
 * benches). */
const minlsh__siphash_many_kernel *minlsh__siphash_many_active(void);
#ifdef MINLSH_TESTING
const minlsh__siphash_many_kernel *minlsh__siphash_many_for_level(int level);
size_t minlsh__siphash_many_usable(const minlsh__siphash_many_kernel **out, size_t cap);
#endif

/* ---- shingler services for the layers above ------------------------------ */

/* Every shingle hash of the whole document, repeats allowed, in batches of at
 * most MINLSH__SHINGLE_BATCH, passed to emit. The multiset's set is exactly
 * what minlsh_shingler_hash gives (short-document rule included; the empty
 * document emits nothing). A non-zero return from emit stops the work and is
 * returned as is. Returns 0, MINLSH_E_NULL (s or emit NULL, text NULL with
 * len > 0), MINLSH_E_NOMEM, MINLSH_E_TOOBIG (len > max_document_bytes).
 * Thread-safe for a shared shingler. */
#define MINLSH__SHINGLE_BATCH 256
int minlsh__shingler_each(const minlsh_shingler *s, const void *text, size_t len,
                          int (*emit)(void *ctx, const uint64_t *hashes, size_t n),
                          void *ctx);
/* The same with the given SipHash lanes kernel instead of the dispatcher's
 * (tests run the whole engine with each kernel; MINLSH_E_NULL if NULL). */
int minlsh__shingler_each_kernel(const minlsh_shingler *s, const void *text, size_t len,
                                 int (*emit)(void *ctx, const uint64_t *hashes, size_t n),
                                 void *ctx, const minlsh__siphash_many_kernel *kernel);

/* The shingler's allocator (never NULL for a valid shingler). */
const minlsh_allocator *minlsh__shingler_allocator(const minlsh_shingler *s);

/* ---- layer-private: lib/shingle only -------------------------------------- */

/* The stop-word list, normalised: ASCII-lower-cased, sorted bytewise,
 * deduplicated, each word followed by one 0x00 in blob (these are exactly the
 * bytes config_id hashes). slots is an open-addressing table of
 * (offset into blob + 1), 0 for empty, power-of-two sized. */
typedef struct minlsh__stoplist {
    uint8_t *blob;
    size_t blob_len;
    size_t count;
    size_t *slots;
    size_t mask;    /* number of slots - 1 */
    size_t max_len; /* longest word, to reject long words at once */
} minlsh__stoplist;

/* Byte classes for word units (table wclass): */
#define MINLSH__W_SEP 0 /* ends a word */
#define MINLSH__W_ESC 1 /* table wclass_ascii: not ASCII, for the Unicode stage */
#define MINLSH__W_DEL 2 /* deleted by PUNCT: ignored, does not end a word */
/* any other value (0x30 and up): a word byte, already case-folded as the
 * flags say. So "> W_ESC" is one test for "inside a word" in both tables,
 * and "(c | W_DEL) == W_DEL" one for "between words". */

/* Byte actions for byte and code-point units (table bact): */
#define MINLSH__B_KEEP 0 /* emit bmap[b] */
#define MINLSH__B_DEL 1  /* deleted by PUNCT */
#define MINLSH__B_WS 2   /* whitespace under NORM_WHITESPACE */

struct minlsh_shingler {
    minlsh_allocator alloc;
    uint8_t key[16];
    uint64_t k0, k1; /* the key as SipHash words */
    uint32_t unit, k, flags;
    uint64_t max_bytes; /* 0: no limit */
    uint64_t config_id;
    uint8_t wclass[256]; /* word units: MINLSH__W_* or the folded byte */
    uint8_t wclass_ascii[256]; /* wclass, but MINLSH__W_ESC for 0x80..0xFF */
    uint8_t bact[256];   /* byte/code-point units: MINLSH__B_* */
    uint8_t bmap[256];   /* byte/code-point units: the folded byte */
    minlsh__stoplist stop; /* empty unless unit is STOPWORD */
};

/* Parse a whitespace-separated list into st (entries made only of word
 * bytes; others are ignored, see docs/shingling.md). MINLSH_E_PARAM if no
 * usable entry is left, MINLSH_E_NOMEM, MINLSH_E_TOOBIG. */
int minlsh__stoplist_build(minlsh__stoplist *st, const minlsh_allocator *a,
                           const char *text, size_t len);
int minlsh__stoplist_copy(minlsh__stoplist *dst, const minlsh__stoplist *src,
                          const minlsh_allocator *a);
void minlsh__stoplist_free(minlsh__stoplist *st, const minlsh_allocator *a);
/* 1 if the word (compared ASCII-case-insensitively) is in the list. */
int minlsh__stoplist_has(const minlsh__stoplist *st, const uint8_t *w,
                         size_t n);
/* The built-in English list, whitespace-separated. */
extern const char minlsh__stopwords_en[];
extern const size_t minlsh__stopwords_en_len;

struct minlsh_shingleset {
    minlsh_allocator alloc;
    uint64_t *v; /* ascending, distinct */
    size_t n, cap;
};

/* A deep copy (the stream keeps one so the shingler may be freed first). */
/* A copy of src whose memory, and whatever it allocates later, comes from a
 * (already set up). */
int minlsh__shingler_clone(minlsh_shingler **out, const minlsh_shingler *src,
                           const minlsh_allocator *a);

#endif /* MINLSH_SHINGLE_H */
