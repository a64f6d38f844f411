/*
 * Sign documents that arrive already tokenized (lists of byte strings), many
 * at once: the tokens described by offsets (minlsh_family_sign_tokens) or
 * split at a separator byte (minlsh_family_sign_delimited). This is the
 * batch path of the bindings: a foreign call costs far more than hashing a
 * short token, so a binding joins every token of every document into one
 * buffer and crosses into C once. Each token is hashed with SipHash-2-4
 * exactly as minlsh_siphash24 does (so a signature built token by token
 * with minlsh_siphash24 + minlsh_family_update has the same bits), through
 * the SIMD lane kernels of the shingle layer, and folded in with the MinHash
 * kernel in chunks, as minlsh_family_sign_text does for shingles.
 */
#include "minhash.h"

#include "shingle/shingle.h"

/* Tokens hashed per chunk: the stack holds this many pointers, lengths and
 * hashes (6 KiB), and the MinHash kernel gets batches as long as the ones
 * the shingler gives it. */
#define MINLSH__TOKEN_CHUNK 256

/* Every check before the first write, so that on error sigs is untouched. */
static int minlsh__sign_tokens_check(const void *data, const size_t *offsets, size_t n_tokens,
                                     const size_t *doc_offsets, size_t n_docs) {
    size_t i;
    if (offsets == NULL || doc_offsets == NULL) return MINLSH_E_NULL;
    for (i = 0; i < n_tokens; i++)
        if (offsets[i + 1] < offsets[i]) return MINLSH_E_PARAM;
    if (data == NULL && offsets[n_tokens] != offsets[0]) return MINLSH_E_NULL;
    for (i = 0; i < n_docs; i++)
        if (doc_offsets[i + 1] < doc_offsets[i]) return MINLSH_E_PARAM;
    if (doc_offsets[n_docs] > n_tokens) return MINLSH_E_PARAM;
    return 0;
}

int minlsh_family_sign_tokens(const minlsh_family *family, const uint8_t *key, const void *data,
                              const size_t *offsets, size_t n_tokens, const size_t *doc_offsets,
                              size_t n_docs, uint32_t *sigs, size_t cap, size_t *n_out) {
    const uint8_t *bytes = (const uint8_t *)data;
    const uint8_t *msg[MINLSH__TOKEN_CHUNK];
    size_t len[MINLSH__TOKEN_CHUNK];
    uint64_t hashes[MINLSH__TOKEN_CHUNK];
    uint32_t stack[MINLSH__FAMILY_WORK_STACK], *work;
    const minlsh__siphash_many_kernel *kernel;
    uint64_t k0, k1;
    size_t k, need, d, t, c, j, end;
    uint32_t *sig;
    int rc;
    if (family == NULL) return MINLSH_E_NULL;
    k = minlsh_family_k(family);
    if (n_docs > SIZE_MAX / k) return MINLSH_E_TOOBIG;
    need = n_docs * k;
    if (n_out != NULL) *n_out = need;
    rc = minlsh__sign_tokens_check(data, offsets, n_tokens, doc_offsets, n_docs);
    if (rc != 0) return rc;
    /* (NULL, 0) is a size query, as for every caller buffer. */
    if (cap < need) return MINLSH_E_BUFSIZE;
    if (sigs == NULL && need > 0) return MINLSH_E_NULL;
    work = minlsh__family_work_get(family, stack);
    if (work == NULL) return MINLSH_E_NOMEM;
    if (key == NULL) key = minlsh_default_key();
    k0 = minlsh__load64le(key);
    k1 = minlsh__load64le(key + 8);
    kernel = minlsh__siphash_many_active();
    for (d = 0; d < n_docs; d++) {
        sig = sigs + d * k;
        for (t = 0; t < k; t++) sig[t] = MINLSH_EMPTY_VALUE;
        end = doc_offsets[d + 1];
        for (t = doc_offsets[d]; t < end; t += c) {
            c = end - t < MINLSH__TOKEN_CHUNK ? end - t : MINLSH__TOKEN_CHUNK;
            for (j = 0; j < c; j++) {
                len[j] = offsets[t + j + 1] - offsets[t + j];
                /* No arithmetic on a NULL buffer (all tokens empty then). */
                msg[j] = bytes == NULL ? NULL : bytes + offsets[t + j];
            }
            kernel->hash(k0, k1, msg, len, c, hashes);
            minlsh__family_update_raw(family, sig, hashes, c);
        }
        minlsh__family_finish_raw(family, sig, work);
    }
    minlsh__family_work_put(family, stack, work);
    return 0;
}

/* Separators are found a 64-byte block at a time: a bit mask of the
 * block's separators, from which each token's end is the lowest set bit
 * (tokens are short, a few words: a memchr call per token cost as much as
 * hashing it, and a search per token re-read the bytes). SSE2, part of the
 * x86-64 baseline, makes a block's mask in four compares; elsewhere (and
 * with -DMINLSH_NO_SSE2) eight word-at-a-time compares do. Counting, the
 * check before anything is written, adds the compares up without masks.
 * Nothing is loaded past the end: a short last block goes byte by byte. */
#if defined(__SSE2__) && (defined(__x86_64__) || defined(_M_X64)) && !defined(MINLSH_NO_SSE2)
#include <emmintrin.h>
#define MINLSH__SPLIT_SSE2 1
#else
#define MINLSH__SPLIT_SSE2 0
#endif

#if !MINLSH__SPLIT_SSE2
#define MINLSH__ONES UINT64_C(0x0101010101010101)
#define MINLSH__LOW7 UINT64_C(0x7F7F7F7F7F7F7F7F)

/* The high bit of every byte of w equal to the byte repeated in pattern,
 * and no other bit: exact, as no carry crosses a byte. */
MINLSH__INLINE uint64_t minlsh__eq_bytes(uint64_t w, uint64_t pattern) {
    uint64_t x = w ^ pattern;
    return ~(((x & MINLSH__LOW7) + MINLSH__LOW7) | x | MINLSH__LOW7);
}
#endif

MINLSH__INLINE unsigned minlsh__lowest_bit(uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(m);
#else
    unsigned i = 0;
    while (!(m & 1u)) {
        m >>= 1;
        i++;
    }
    return i;
#endif
}

/* Bit i set when p[i] == sep, for the min(64, end - p) bytes at p. */
static uint64_t minlsh__sep_mask(const uint8_t *p, const uint8_t *end, uint8_t sep) {
    uint64_t m = 0;
    size_t i;
    if (end - p >= 64) {
#if MINLSH__SPLIT_SSE2
        const __m128i s = _mm_set1_epi8((char)sep);
        for (i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
            m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, s)) << (16 * i);
        }
#else
        /* (e >> 7) holds 0 or 1 in each byte; the multiplication gathers
         * byte j's bit into bit 56 + j, with no carry between them. */
        const uint64_t pattern = MINLSH__ONES * sep;
        for (i = 0; i < 8; i++) {
            uint64_t e = minlsh__eq_bytes(minlsh__load64le(p + 8 * i), pattern) >> 7;
            m |= ((e * UINT64_C(0x0102040810204080)) >> 56) << (8 * i);
        }
#endif
        return m;
    }
    for (i = 0; p + i < end; i++) m |= (uint64_t)(p[i] == sep) << i;
    return m;
}

static size_t minlsh__count_byte(const uint8_t *p, const uint8_t *end, uint8_t sep) {
    size_t n = 0;
#if MINLSH__SPLIT_SSE2
    const __m128i s = _mm_set1_epi8((char)sep), zero = _mm_setzero_si128();
    __m128i total = zero;
    /* Each compare subtracts 0 or -1 from a byte counter; 255 rounds at
     * most before the counters are summed into 64-bit lanes. */
    while (end - p >= 16) {
        __m128i acc = zero;
        size_t blocks = (size_t)(end - p) / 16, i;
        if (blocks > 255) blocks = 255;
        for (i = 0; i < blocks; i++, p += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), s));
        total = _mm_add_epi64(total, _mm_sad_epu8(acc, zero));
    }
    n = (size_t)_mm_cvtsi128_si64(total) + (size_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(total, total));
#else
    const uint64_t pattern = MINLSH__ONES * sep;
    /* (m >> 7) holds 0 or 1 in each byte; the multiplication adds the
     * eight bytes into the top one (at most 8: no carry). */
    for (; end - p >= 8; p += 8)
        n += (size_t)(((minlsh__eq_bytes(minlsh__load64le(p), pattern) >> 7) * MINLSH__ONES) >> 56);
#endif
    for (; p < end; p++) n += *p == sep;
    return n;
}

/* The tokens of a buffer split at sep: every piece, the empty ones
 * included. mask holds the separators of the block at base not yet used. */
typedef struct minlsh__split {
    const uint8_t *p, *base, *end;
    uint64_t mask;
    uint8_t sep;
} minlsh__split;

static void minlsh__split_init(minlsh__split *sp, const uint8_t *bytes, size_t len, uint8_t sep) {
    sp->p = sp->base = bytes;
    sp->end = bytes == NULL ? NULL : bytes + len;
    sp->sep = sep;
    sp->mask = len > 0 ? minlsh__sep_mask(bytes, sp->end, sep) : 0;
}

MINLSH__INLINE void minlsh__split_next(minlsh__split *sp, const uint8_t **msg, size_t *len) {
    const uint8_t *q;
    for (;;) {
        if (sp->mask != 0) {
            q = sp->base + minlsh__lowest_bit(sp->mask);
            sp->mask &= sp->mask - 1;
            break;
        }
        if (sp->end - sp->base <= 64) { /* no separator left: the last piece */
            q = sp->end;
            break;
        }
        sp->base += 64;
        sp->mask = minlsh__sep_mask(sp->base, sp->end, sp->sep);
    }
    *msg = sp->p;
    *len = (size_t)(q - sp->p);
    sp->p = q < sp->end ? q + 1 : q;
}

int minlsh_family_sign_delimited(const minlsh_family *family, const uint8_t *key, const void *data,
                                 size_t len, uint32_t sep, const size_t *doc_offsets, size_t n_docs,
                                 uint32_t *sigs, size_t cap, size_t *n_out) {
    const uint8_t *bytes = (const uint8_t *)data;
    const uint8_t *msg[MINLSH__TOKEN_CHUNK];
    size_t lens[MINLSH__TOKEN_CHUNK];
    uint64_t hashes[MINLSH__TOKEN_CHUNK];
    uint32_t stack[MINLSH__FAMILY_WORK_STACK], *work;
    const minlsh__siphash_many_kernel *kernel;
    minlsh__split sp;
    uint64_t k0, k1;
    size_t k, need, d, t, c, j, n_tokens, seps = 0;
    uint32_t *sig;
    if (family == NULL || doc_offsets == NULL) return MINLSH_E_NULL;
    if (data == NULL && len > 0) return MINLSH_E_NULL;
    k = minlsh_family_k(family);
    if (n_docs > SIZE_MAX / k) return MINLSH_E_TOOBIG;
    need = n_docs * k;
    if (n_out != NULL) *n_out = need;
    if (sep > 255) return MINLSH_E_PARAM;
    for (d = 0; d < n_docs; d++)
        if (doc_offsets[d + 1] < doc_offsets[d]) return MINLSH_E_PARAM;
    n_tokens = doc_offsets[n_docs];
    /* n tokens are n - 1 separators, and no token is no byte: the count
     * tells an empty token from no token. */
    if (len > 0) seps = minlsh__count_byte(bytes, bytes + len, (uint8_t)sep);
    if (n_tokens == 0 ? len != 0 : seps != n_tokens - 1) return MINLSH_E_PARAM;
    if (cap < need) return MINLSH_E_BUFSIZE;
    if (sigs == NULL && need > 0) return MINLSH_E_NULL;
    work = minlsh__family_work_get(family, stack);
    if (work == NULL) return MINLSH_E_NOMEM;
    if (key == NULL) key = minlsh_default_key();
    k0 = minlsh__load64le(key);
    k1 = minlsh__load64le(key + 8);
    kernel = minlsh__siphash_many_active();
    minlsh__split_init(&sp, bytes, len, (uint8_t)sep);
    /* Tokens before doc_offsets[0] belong to no document: skip them. */
    for (t = 0; t < doc_offsets[0]; t++) minlsh__split_next(&sp, &msg[0], &lens[0]);
    for (d = 0; d < n_docs; d++) {
        sig = sigs + d * k;
        for (t = 0; t < k; t++) sig[t] = MINLSH_EMPTY_VALUE;
        for (t = doc_offsets[d]; t < doc_offsets[d + 1]; t += c) {
            c = doc_offsets[d + 1] - t;
            if (c > MINLSH__TOKEN_CHUNK) c = MINLSH__TOKEN_CHUNK;
            for (j = 0; j < c; j++) minlsh__split_next(&sp, &msg[j], &lens[j]);
            kernel->hash(k0, k1, msg, lens, c, hashes);
            minlsh__family_update_raw(family, sig, hashes, c);
        }
        minlsh__family_finish_raw(family, sig, work);
    }
    minlsh__family_work_put(family, stack, work);
    return 0;
}

int minlsh_family_sign_token_array(const minlsh_family *family, const uint8_t *key,
                                   const void *const *tokens, const size_t *lengths,
                                   size_t n_tokens, const size_t *doc_offsets, size_t n_docs,
                                   uint32_t *sigs, size_t cap, size_t *n_out) {
    uint64_t hashes[MINLSH__TOKEN_CHUNK];
    uint32_t stack[MINLSH__FAMILY_WORK_STACK], *work;
    const minlsh__siphash_many_kernel *kernel;
    uint64_t k0, k1;
    size_t k, need, d, t, c, end;
    uint32_t *sig;
    if (family == NULL || doc_offsets == NULL) return MINLSH_E_NULL;
    if (n_tokens > 0 && (tokens == NULL || lengths == NULL)) return MINLSH_E_NULL;
    k = minlsh_family_k(family);
    if (n_docs > SIZE_MAX / k) return MINLSH_E_TOOBIG;
    need = n_docs * k;
    if (n_out != NULL) *n_out = need;
    for (t = 0; t < n_tokens; t++)
        if (tokens[t] == NULL && lengths[t] > 0) return MINLSH_E_NULL;
    for (d = 0; d < n_docs; d++)
        if (doc_offsets[d + 1] < doc_offsets[d]) return MINLSH_E_PARAM;
    if (doc_offsets[n_docs] > n_tokens) return MINLSH_E_PARAM;
    if (cap < need) return MINLSH_E_BUFSIZE;
    if (sigs == NULL && need > 0) return MINLSH_E_NULL;
    work = minlsh__family_work_get(family, stack);
    if (work == NULL) return MINLSH_E_NOMEM;
    if (key == NULL) key = minlsh_default_key();
    k0 = minlsh__load64le(key);
    k1 = minlsh__load64le(key + 8);
    kernel = minlsh__siphash_many_active();
    for (d = 0; d < n_docs; d++) {
        sig = sigs + d * k;
        for (t = 0; t < k; t++) sig[t] = MINLSH_EMPTY_VALUE;
        end = doc_offsets[d + 1];
        /* The caller's arrays are the kernel's: no copy per token. */
        for (t = doc_offsets[d]; t < end; t += c) {
            c = end - t < MINLSH__TOKEN_CHUNK ? end - t : MINLSH__TOKEN_CHUNK;
            kernel->hash(k0, k1, (const uint8_t *const *)tokens + t, lengths + t, c, hashes);
            minlsh__family_update_raw(family, sig, hashes, c);
        }
        minlsh__family_finish_raw(family, sig, work);
    }
    minlsh__family_work_put(family, stack, work);
    return 0;
}
