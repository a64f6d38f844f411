/*
 * The shingling engine: one resumable state machine that turns raw bytes,
 * fed in chunks of any size, into shingle hashes and the fingerprint. The
 * stream API, the one-shot call and minlsh__shingler_each all drive it, so
 * they cannot disagree. docs/shingling.md is its specification.
 *
 * Pipeline per byte: HTML (tags, comments, script/style, entities) ->
 * the Unicode stage if a Unicode flag is on (unicode.c: code points in,
 * normalised UTF-8 out) -> case folding and punctuation deletion (one table
 * lookup) -> whitespace collapsing -> units (bytes, UTF-8 code points or
 * words) -> shingles.
 *
 * Every unit is appended, in its message form, to one buffer: bytes as they
 * are, code points re-encoded, words joined by single spaces. That buffer is
 * exactly the fingerprint's input, and the last k units are always
 * contiguous in it, so each shingle is hashed in one call with no copying.
 * The buffer is compacted (bytes before the oldest unit still needed are
 * dropped, after being fed to the fingerprint) or grown geometrically.
 *
 * Shingles are not hashed one by one: each takes its slot in the output and
 * is queued as (pointer, length) into the buffer, and a full queue (or the
 * end of the document, a full output batch, or any compaction or growth of
 * the buffer, which would move the bytes) is hashed at once by the SipHash
 * lanes kernel (siphash_many.c: AVX-512, AVX2 or the scalar loop, same
 * bits). Outputs, their order and the memory they take are as if each
 * shingle were hashed when found. When only the fingerprint is wanted
 * (SINK_COUNT) shingles are counted, not hashed.
 */
#include "shingle.h"
#include "unicode.h"

/* ASCII letters and digits, the bytes of most words, are found and copied
 * 16 at a time with SSE2 (part of the x86-64 baseline), and runs of such
 * words one space apart 64 bytes at a time; elsewhere, and with
 * -DMINLSH_NO_SSE2, byte by byte through the table. Same bytes either way. */
#if defined(__SSE2__) && (defined(__x86_64__) || defined(_M_X64)) && !defined(MINLSH_NO_SSE2)
#include <emmintrin.h>
#define MINLSH__WORDS_SSE2 1
#else
#define MINLSH__WORDS_SSE2 0
#endif

/* Input is processed in blocks of at most this many bytes, so the buffer
 * reservation per block is bounded whatever the chunk size. */
#define BLOCK 16384
/* Longest entity body (the bytes between '&' and ';'). */
#define ENT_MAX 32
/* Units remembered: a power of two >= MINLSH_SHINGLE_K_MAX. */
#define RING 64
/* What the end-of-document flush may add, reserved before it starts so
 * that finish cannot fail half-way: a literal entity (1 + ENT_MAX bytes),
 * up to 3 pending UTF-8 bytes as U+FFFD, one pending space. */
#define FLUSH_BYTES (4 * (ENT_MAX + 2) + 32)
#define FLUSH_HASHES (ENT_MAX + 16)

enum { SINK_COLLECT, SINK_CALLBACK, SINK_COUNT };

enum {
    H_TEXT,    /* ordinary text */
    H_LT,      /* after '<' */
    H_NAME,    /* in a start tag's name */
    H_TAG,     /* in a tag, after its name */
    H_QUOTE,   /* in a quoted attribute value */
    H_BANG,    /* after "<!" */
    H_BANG1,   /* after "<!-" */
    H_COMMENT, /* after "<!--" */
    H_RAW,     /* in the content of <script> or <style> */
    H_ENT      /* after '&' */
};

typedef struct engine {
    const minlsh_shingler *cfg;
    uint32_t unit, k;
    /* output */
    int sink;
    uint64_t *hv; /* hashes not yet handed over */
    size_t hn, hcap;
    size_t hkept; /* SINK_COLLECT: distinct hashes the last compaction left */
    int (*emit)(void *ctx, const uint64_t *hashes, size_t n);
    void *ctx;
    uint64_t nshingles; /* emitted in this document */
    uint64_t local[MINLSH__SHINGLE_BATCH];
    /* shingles found but not hashed yet: hv[hn - qn .. hn) is theirs, their
     * bytes are in buf (in order) */
    const minlsh__siphash_many_kernel *sip;
    const uint8_t *qmsg[MINLSH__SHINGLE_BATCH];
    size_t qlen[MINLSH__SHINGLE_BATCH];
    size_t qn;
    /* fingerprint, and the hash of the whole unit stream (the one shingle
     * of a document too short for any other) */
    int want_fp;
    minlsh__siphash fp, whole;
    size_t synced; /* buf[0..synced) has gone into fp and whole */
    /* the unit stream */
    uint8_t *buf;
    size_t len, cap;
    size_t ustart[RING]; /* buffer offset of unit i at [i % RING] */
    uint8_t ustop[RING]; /* STOPWORD: unit i is a stop word */
    uint64_t nunits;
    size_t cur; /* start of the word being built */
    int in_word;
    /* whitespace collapsing */
    int ws_pending, any_out;
    /* UTF-8 decoding: a valid prefix of a sequence */
    uint8_t u8[4];
    unsigned u8n, u8need;
    uint8_t u8lo, u8hi; /* range of the next continuation byte */
    /* HTML */
    int hs;
    int eq;        /* H_TAG: last non-space byte was '=' */
    int raw;       /* 1 script, 2 style: the tag opens raw text */
    uint8_t quote; /* H_QUOTE: the closing quote */
    unsigned dash; /* H_COMMENT: dashes just seen (saturates at 2) */
    unsigned match; /* H_RAW: bytes of "</script" or "</style" matched */
    uint8_t name[8];
    unsigned name_len; /* 7 means "7 or more" */
    uint8_t ent[ENT_MAX];
    unsigned ent_len;
    /* the Unicode stage, between HTML and the byte tables */
    int uni;
    int ascii_direct; /* word units, a Unicode flag, no NFKC: see push_text */
    minlsh__unorm un;
} engine;

MINLSH__INLINE uint8_t lower(uint8_t c) {
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}
MINLSH__INLINE int is_space(uint8_t c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}
MINLSH__INLINE int is_alpha(uint8_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
MINLSH__INLINE int is_alnum(uint8_t c) {
    return is_alpha(c) || (c >= '0' && c <= '9');
}

/* ---- lifecycle ------------------------------------------------------------ */

/* Start a new document; buffers are kept for reuse. */
static void engine_restart(engine *e) {
    minlsh__siphash_init(&e->fp, e->cfg->k0, e->cfg->k1, 1);
    minlsh__siphash_init(&e->whole, e->cfg->k0, e->cfg->k1, 0);
    e->hn = 0;
    e->hkept = 0;
    e->qn = 0;
    e->nshingles = 0;
    e->synced = 0;
    e->len = 0;
    e->nunits = 0;
    e->cur = 0;
    e->in_word = 0;
    e->ws_pending = 0;
    e->any_out = 0;
    e->u8n = 0;
    e->hs = H_TEXT;
    e->eq = 0;
    e->raw = 0;
    e->dash = 0;
    e->match = 0;
    e->name_len = 0;
    e->ent_len = 0;
    minlsh__unorm_reset(&e->un);
}

static int units_emit(void *ctx, const uint8_t *p, size_t n);

static void engine_init(engine *e, const minlsh_shingler *cfg, int sink,
                        int want_fp, const minlsh__siphash_many_kernel *sip) {
    /* The Unicode stage's buffers (the tail) need no zeroing: its init
     * sets what it reads. */
    memset(e, 0, offsetof(engine, un));
    e->cfg = cfg;
    e->sip = sip;
    e->unit = cfg->unit;
    e->k = cfg->k;
    e->sink = sink;
    e->want_fp = want_fp;
    if (sink != SINK_COLLECT) {
        e->hv = e->local;
        e->hcap = MINLSH__SHINGLE_BATCH;
    }
    e->uni = (cfg->flags & MINLSH_NORM_UNICODE) != 0;
    e->ascii_direct = e->uni && !(cfg->flags & MINLSH_NORM_NFKC) &&
                      cfg->unit >= MINLSH_UNIT_WORD;
    minlsh__unorm_init(&e->un, cfg->flags,
                       (cfg->flags & MINLSH_NORM_CJK_WORDS) && cfg->unit >= MINLSH_UNIT_WORD,
                       units_emit, e);
    engine_restart(e);
}

static void engine_release(engine *e) {
    const minlsh_allocator *a = &e->cfg->alloc;
    minlsh__free(a, e->buf);
    if (e->sink == SINK_COLLECT) minlsh__free(a, e->hv);
    e->buf = NULL;
    e->hv = NULL;
    /* Hash states are invertible given the input: they would reveal the key. */
    minlsh__secure_zero(&e->fp, sizeof e->fp);
    minlsh__secure_zero(&e->whole, sizeof e->whole);
}

/* ---- output --------------------------------------------------------------- */

static void flush_queue(engine *e);

/* Collected hashes this many and more are sorted and deduplicated in place
 * each time they double past what the last such pass left: a long document
 * of few distinct shingles (a word list repeated) then holds memory for its
 * distinct shingles, not for every shingle. Below it nothing changes; the
 * finished set is the same either way (it is sorted and deduplicated). */
#define COMPACT_FLOOR ((size_t)1 << 20)

static void compact_collected(engine *e) {
    uint64_t *tmp;
    if (e->hn < COMPACT_FLOOR || e->hn / 2 < e->hkept) return;
    /* Scratch for the sort; without it the hashes just grow. */
    tmp = (uint64_t *)minlsh__malloc(&e->cfg->alloc, e->hn * sizeof *tmp);
    if (tmp == NULL) return;
    flush_queue(e);
    e->hn = minlsh__sort_unique_u64(e->hv, e->hv, tmp, e->hn);
    e->hkept = e->hn;
    minlsh__free(&e->cfg->alloc, tmp);
}

static int sink_full(engine *e) {
    int rc;
    switch (e->sink) {
    case SINK_COLLECT:
        compact_collected(e);
        if (e->hn < e->hcap) return 0;
        return minlsh__reserve(&e->cfg->alloc, (void **)&e->hv, &e->hcap, e->hn,
                               e->hn + 1, sizeof *e->hv);
    case SINK_CALLBACK:
        rc = e->emit(e->ctx, e->hv, e->hn);
        e->hn = 0;
        return rc;
    default:
        e->hn = 0;
        return 0;
    }
}

/* The queued shingles are the last qn entries of hv: their slots are taken
 * when they are found (so the sink's memory is claimed exactly as if each
 * were hashed at once, and hashing the queue never fails), their values
 * written here, all at once. */
static void flush_queue(engine *e) {
    if (e->qn == 0) return;
    e->sip->hash(e->cfg->k0, e->cfg->k1, e->qmsg, e->qlen, e->qn, e->hv + (e->hn - e->qn));
    e->qn = 0;
}

MINLSH__INLINE int put_hash(engine *e, const uint8_t *msg, size_t n) {
    e->nshingles++;
    if (e->sink == SINK_COUNT) return 0; /* the hash would be dropped */
    if (MINLSH__UNLIKELY(e->hn == e->hcap)) {
        int rc;
        flush_queue(e); /* before the callback sees the batch */
        if ((rc = sink_full(e)) != 0) return rc;
    }
    e->qmsg[e->qn] = msg;
    e->qlen[e->qn] = n;
    e->hn++;
    if (MINLSH__UNLIKELY(++e->qn == MINLSH__SHINGLE_BATCH)) flush_queue(e);
    return 0;
}

/* ---- the unit buffer ------------------------------------------------------ */

static void sync_hashers(engine *e) {
    size_t n = e->len - e->synced;
    if (n == 0) return;
    if (e->want_fp) minlsh__siphash_update(&e->fp, e->buf + e->synced, n);
    /* Once a shingle exists the whole-stream hash can never be used. */
    if (e->nshingles == 0) minlsh__siphash_update(&e->whole, e->buf + e->synced, n);
    e->synced = e->len;
}

/* Offset of the first byte a future shingle may still need: the start of
 * the oldest of the last k - 1 complete units, or of the unit being built. */
static size_t keep_from(const engine *e) {
    uint64_t first;
    if (e->nunits + 1 < e->k) return 0;
    if (e->unit == MINLSH_UNIT_BYTE) return e->len - (e->k - 1);
    first = e->nunits + 1 - e->k;
    if (first < e->nunits) return e->ustart[first % RING];
    return e->in_word ? e->cur : e->len;
}

/* Make room for need more bytes. Only compaction or growth happens here, so
 * a failure leaves the document state as it was. */
static int reserve_buf(engine *e, size_t need) {
    size_t kf, live, ncap;
    uint64_t u;
    uint8_t *nb = NULL;
    if (MINLSH__LIKELY(e->cap - e->len >= need)) return 0;
    flush_queue(e); /* the queued shingles point into buf, about to move */
    sync_hashers(e);
    kf = keep_from(e);
    live = e->len - kf;
    if (live + need > e->cap / 2) {
        /* Too little would be reclaimed: grow, to more than twice what is
         * needed now, so that the next time compaction is possible and
         * stays amortised O(1) per byte. */
        if (minlsh__add_size(&ncap, live, need) != 0 ||
            minlsh__mul_size(&ncap, ncap, 2) != 0 ||
            minlsh__add_size(&ncap, ncap, 256) != 0)
            return MINLSH_E_TOOBIG;
        if (ncap < 2 * e->cap && e->cap <= SIZE_MAX / 2) ncap = 2 * e->cap;
        nb = (uint8_t *)minlsh__malloc(&e->cfg->alloc, ncap);
        if (nb == NULL) return MINLSH_E_NOMEM;
        if (live > 0) memcpy(nb, e->buf + kf, live);
        minlsh__free(&e->cfg->alloc, e->buf);
        e->buf = nb;
        e->cap = ncap;
    } else if (kf > 0) {
        memmove(e->buf, e->buf + kf, live);
    }
    if (kf == 0) return 0;
    e->len -= kf;
    e->synced -= kf;
    if (e->in_word) e->cur -= kf;
    if (e->unit != MINLSH_UNIT_BYTE) {
        /* Only the units at or after kf are ever read again. */
        u = e->nunits + 1 >= e->k ? e->nunits + 1 - e->k : 0;
        for (; u < e->nunits; u++) e->ustart[u % RING] -= kf;
    }
    return 0;
}

/* ---- units ----------------------------------------------------------------- */

/* One normalised byte in BYTE mode. */
MINLSH__INLINE int byte_unit(engine *e, uint8_t c) {
    e->buf[e->len++] = c;
    if (++e->nunits >= e->k) return put_hash(e, e->buf + e->len - e->k, e->k);
    return 0;
}

/* One code point (its UTF-8 bytes) in CODEPOINT mode. */
MINLSH__INLINE int cp_unit(engine *e, const uint8_t *p, size_t n) {
    size_t s;
    e->ustart[e->nunits % RING] = e->len;
    memcpy(e->buf + e->len, p, n);
    e->len += n;
    if (++e->nunits < e->k) return 0;
    s = e->ustart[(e->nunits - e->k) % RING];
    return put_hash(e, e->buf + s, e->len - s);
}

static const uint8_t fffd[3] = {0xEF, 0xBF, 0xBD};

/* Each byte of a prefix that cannot be completed is one U+FFFD: the lead
 * byte starts no valid sequence, the rest are lone continuation bytes. */
static int flush_u8(engine *e) {
    unsigned i, n = e->u8n;
    int rc;
    e->u8n = 0;
    for (i = 0; i < n; i++)
        if ((rc = cp_unit(e, fffd, 3)) != 0) return rc;
    return 0;
}

/* One normalised byte into the UTF-8 decoder (Unicode Table 3-7: shortest
 * form, no surrogates, at most U+10FFFF). */
static int u8_byte(engine *e, uint8_t c) {
    int rc;
    if (e->u8n > 0) {
        if (c >= e->u8lo && c <= e->u8hi) {
            e->u8[e->u8n++] = c;
            e->u8lo = 0x80;
            e->u8hi = 0xBF;
            if (e->u8n < e->u8need) return 0;
            e->u8n = 0;
            return cp_unit(e, e->u8, e->u8need);
        }
        if ((rc = flush_u8(e)) != 0) return rc;
    }
    if (c < 0x80) return cp_unit(e, &c, 1);
    e->u8need = minlsh__utf8_lead(c, &e->u8lo, &e->u8hi);
    if (e->u8need == 0) return cp_unit(e, fffd, 3); /* 80..C1, F5..FF start nothing */
    e->u8[0] = c;
    e->u8n = 1;
    return 0;
}

/* BYTE and CODEPOINT modes: punctuation, whitespace, case, then units.
 * cp is a constant at each call site, so each mode gets its own loop. */
MINLSH__INLINE int run_bytewise(engine *e, const uint8_t *p, size_t n, int cp) {
    const uint8_t *bact = e->cfg->bact, *bmap = e->cfg->bmap;
    size_t i;
    int rc;
    for (i = 0; i < n; i++) {
        uint8_t c = p[i];
        switch (bact[c]) {
        case MINLSH__B_DEL:
            continue;
        case MINLSH__B_WS:
            e->ws_pending = e->any_out;
            continue;
        default:
            break;
        }
        if (e->ws_pending) {
            e->ws_pending = 0;
            rc = cp ? u8_byte(e, ' ') : byte_unit(e, ' ');
            if (rc != 0) return rc;
        }
        e->any_out = 1;
        c = bmap[c];
        if (cp) {
            if (c < 0x80 && e->u8n == 0)
                rc = cp_unit(e, &c, 1);
            else
                rc = u8_byte(e, c);
        } else {
            rc = byte_unit(e, c);
        }
        if (rc != 0) return rc;
    }
    return 0;
}

/* A word just ended at e->len. */
MINLSH__INLINE int end_word(engine *e) {
    uint64_t u = e->nunits;
    size_t s;
    e->in_word = 0;
    e->ustart[u % RING] = e->cur;
    e->nunits = u + 1;
    if (e->unit == MINLSH_UNIT_STOPWORD)
        e->ustop[u % RING] = (uint8_t)minlsh__stoplist_has(
            &e->cfg->stop, e->buf + e->cur, e->len - e->cur);
    if (u + 1 < e->k) return 0;
    u = u + 1 - e->k; /* the window's first unit */
    if (e->unit == MINLSH_UNIT_STOPWORD && !e->ustop[u % RING]) return 0;
    s = e->ustart[u % RING];
    return put_hash(e, e->buf + s, e->len - s);
}

#if MINLSH__WORDS_SSE2
/* The 16 bytes v: a mask of those that are ASCII letters or digits (word
 * bytes in both tables and every configuration, mapped to themselves or,
 * with CASEFOLD, A-Z to a-z), and in *mapped their mapped bytes. Bytes 0x80
 * and up are negative as signed bytes, so no range below takes them. */
MINLSH__INLINE unsigned alnum16(__m128i v, __m128i fold, __m128i *mapped) {
    const __m128i lo_d = _mm_set1_epi8(0x2F), hi_d = _mm_set1_epi8(0x3A);
    const __m128i lo_u = _mm_set1_epi8(0x40), hi_u = _mm_set1_epi8(0x5B);
    const __m128i lo_l = _mm_set1_epi8(0x60), hi_l = _mm_set1_epi8(0x7B);
    __m128i d = _mm_and_si128(_mm_cmpgt_epi8(v, lo_d), _mm_cmplt_epi8(v, hi_d));
    __m128i u = _mm_and_si128(_mm_cmpgt_epi8(v, lo_u), _mm_cmplt_epi8(v, hi_u));
    __m128i l = _mm_and_si128(_mm_cmpgt_epi8(v, lo_l), _mm_cmplt_epi8(v, hi_l));
    *mapped = _mm_add_epi8(v, _mm_and_si128(u, fold));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(d, u), l));
}

/* How many of the n bytes at p, from the first, are ASCII letters or
 * digits; their mapped bytes go to out, which has room for every byte of p
 * and 16 more (16 are stored at a time). The table loop takes the rest. */
static size_t alnum_run(const uint8_t *p, size_t n, uint8_t *out, uint32_t casefold) {
    const __m128i fold = _mm_set1_epi8(casefold ? 0x20 : 0);
    size_t i = 0;
    while (n - i >= 16) {
        __m128i mapped;
        unsigned stop = ~alnum16(_mm_loadu_si128((const __m128i *)(const void *)(p + i)), fold,
                                 &mapped) & 0xFFFFu;
        _mm_storeu_si128((__m128i *)(void *)(out + i), mapped);
        if (stop != 0) return i + (size_t)__builtin_ctz(stop);
        i += 16;
    }
    return i;
}

/* Words of ASCII letters and digits separated by single spaces, the bulk
 * of most text, 64 bytes at a time: each window's bytes are classified and
 * mapped at once and copied to the buffer whole (a single space is what
 * the buffer holds between words anyway), and only its spaces are visited,
 * each ending one word and starting the next. The per-word loop then has
 * no table load and no branch on the word's length. Entered inside a word
 * (e->len its end so far); stops before the first other byte (any other
 * separator, a second space in a row, punctuation, non-ASCII) or at the
 * last 64 bytes, leaving the state as run_words would. p has n bytes, and
 * the buffer room for all of them and 16 more. Returns how many it took in
 * *done. */
static int ascii_words(engine *e, const uint8_t *p, size_t n, size_t *done) {
    const __m128i fold = _mm_set1_epi8(e->cfg->flags & MINLSH_NORM_CASEFOLD ? 0x20 : 0);
    const __m128i space = _mm_set1_epi8(' ');
    size_t i = 0;
    int rc = 0;
    *done = 0;
    while (n - i >= 64) {
        uint8_t *out = e->buf + e->len;
        uint64_t word = 0, sp = 0, bad, spaces;
        size_t len = e->len, good;
        int q;
        for (q = 0; q < 4; q++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 16 * q)), mapped;
            word |= (uint64_t)alnum16(v, fold, &mapped) << (16 * q);
            sp |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, space)) << (16 * q);
            _mm_storeu_si128((__m128i *)(void *)(out + 16 * q), mapped);
        }
        bad = ~(word | sp) | (sp & (sp << 1));
        good = bad == 0 ? 64 : (size_t)__builtin_ctzll(bad);
        spaces = good == 64 ? sp : sp & (((uint64_t)1 << good) - 1);
        while (spaces != 0) {
            size_t j = (size_t)__builtin_ctzll(spaces);
            spaces &= spaces - 1;
            e->len = len + j;
            if ((rc = end_word(e)) != 0) {
                *done = i + j + 1;
                return rc;
            }
            if (j + 1 == good) { /* the space ends the run: no word started */
                *done = i + good;
                return 0;
            }
            e->cur = len + j + 1;
            e->in_word = 1;
        }
        e->len = len + good;
        i += good;
        if (good < 64) break;
    }
    *done = i;
    return 0;
}
#endif

/* WORD and STOPWORD modes: maximal runs of word bytes; bytes deleted by
 * PUNCT are skipped without ending a word. wc is the shingler's wclass, or
 * its wclass_ascii for text the Unicode stage has not seen: then the loop
 * stops before the first byte that is not ASCII (the stage would pass the
 * ASCII ones on unchanged). Both tables take the same loop, so the default
 * flags cost ASCII text nothing. Returns how many bytes it took in *done. */
static int run_words(engine *e, const uint8_t *wc, const uint8_t *p, size_t n, size_t *done) {
    size_t i = 0;
    uint8_t c = 0;
    int rc = 0;
    while (i < n) {
        uint8_t *b;
        size_t len;
        if (!e->in_word) {
            while (i < n && ((c = wc[p[i]]) | MINLSH__W_DEL) == MINLSH__W_DEL) i++;
            if (i == n || c == MINLSH__W_ESC) break;
            if (e->nunits > 0) e->buf[e->len++] = ' ';
            e->cur = e->len;
            e->in_word = 1;
        }
        b = e->buf;
        len = e->len;
#if MINLSH__WORDS_SSE2
        {
            size_t run = alnum_run(p + i, n - i, b + len, e->cfg->flags & MINLSH_NORM_CASEFOLD);
            i += run;
            len += run;
        }
#endif
        while (i < n && (c = wc[p[i]]) > MINLSH__W_ESC) {
            b[len] = c;               /* room was reserved for all of p */
            len += c != MINLSH__W_DEL; /* a deleted byte is overwritten */
            i++;
        }
        e->len = len;
        if (i == n || c == MINLSH__W_ESC) break;
#if MINLSH__WORDS_SSE2
        if (p[i] == ' ' && n - i >= 64) { /* the only separator it takes */
            size_t took;
            rc = ascii_words(e, p + i, n - i, &took);
            i += took;
            if (rc != 0) break;
            if (took > 0) continue;
        }
#endif
        i++; /* the separator */
        if ((rc = end_word(e)) != 0) break;
    }
    *done = i;
    return rc;
}

/* Text for the byte tables and the units. With ascii (word units only),
 * the text is the Unicode stage's input: its leading ASCII bytes go to the
 * units as the stage would have passed them on, and *done says how many. */
static int units_text_mode(engine *e, const uint8_t *p, size_t n, int ascii, size_t *done) {
    size_t n0 = n;
    int rc;
    while (n > 0) {
        size_t m = n < BLOCK ? n : BLOCK, used = m;
        const uint8_t *wc = ascii ? e->cfg->wclass_ascii : e->cfg->wclass;
        /* Worst case output per input byte: 3 (an invalid byte becomes
         * EF BF BD), plus a pending space and pending UTF-8 bytes. */
        size_t need = (e->unit == MINLSH_UNIT_CODEPOINT ? 3 * m : m) + 16;
        if ((rc = reserve_buf(e, need)) != 0) return rc;
        switch (e->unit) {
        case MINLSH_UNIT_BYTE:
            rc = run_bytewise(e, p, m, 0);
            break;
        case MINLSH_UNIT_CODEPOINT:
            rc = run_bytewise(e, p, m, 1);
            break;
        default:
            rc = run_words(e, wc, p, m, &used);
            break;
        }
        if (rc != 0) return rc;
        p += used;
        n -= used;
        if (used < m) break;
    }
    if (ascii) *done = n0 - n;
    return 0;
}

static int units_text(engine *e, const uint8_t *p, size_t n) {
    return units_text_mode(e, p, n, 0, NULL);
}

static int units_emit(void *ctx, const uint8_t *p, size_t n) {
    return units_text((engine *)ctx, p, n);
}

/* Text that HTML processing (if any) let through. Without NFKC the
 * Unicode stage passes ASCII on as it is (the byte tables do what its
 * flags do to ASCII) and holds nothing back before it, so for word units
 * text that starts with ASCII goes straight to the units up to its first
 * other byte, read once: the default flags (CJK_WORDS) cost nothing on
 * ASCII text. The rest of the text goes through the stage. */
static int push_text(engine *e, const uint8_t *p, size_t n) {
    if (!e->uni) return units_text(e, p, n);
    if (e->ascii_direct && n > 0 && p[0] < 0x80) {
        size_t done;
        int rc;
        if ((rc = minlsh__unorm_release(&e->un)) != 0 ||
            (rc = units_text_mode(e, p, n, 1, &done)) != 0)
            return rc;
        p += done;
        n -= done;
        if (n == 0) return 0;
    }
    return minlsh__unorm_feed(&e->un, p, n);
}

/* ---- HTML ------------------------------------------------------------------ */

/* The replacement of entity body b (between '&' and ';'), or 0 bytes if it
 * is not an entity we decode. */
static size_t entity_decode(const uint8_t *b, size_t n, uint8_t out[4]) {
    static const struct {
        const char *name;
        uint8_t len, ch;
    } named[] = {{"amp", 3, '&'},  {"lt", 2, '<'},   {"gt", 2, '>'},
                 {"quot", 4, '"'}, {"apos", 4, '\''}, {"nbsp", 4, ' '}};
    size_t i;
    if (n >= 2 && b[0] == '#') {
        uint32_t v = 0, base = 10, d;
        i = 1;
        if (b[1] == 'x' || b[1] == 'X') {
            base = 16;
            i = 2;
        }
        if (i == n) return 0; /* no digits */
        for (; i < n; i++) {
            uint8_t c = b[i];
            if (c >= '0' && c <= '9') d = (uint32_t)(c - '0');
            else if (base == 16 && c >= 'a' && c <= 'f') d = (uint32_t)(c - 'a' + 10);
            else if (base == 16 && c >= 'A' && c <= 'F') d = (uint32_t)(c - 'A' + 10);
            else return 0;
            v = v * base + d; /* v <= 0x110000 before, so no overflow */
            if (v > 0x10FFFF) v = 0x110000;
        }
        if (v == 0 || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) v = 0xFFFD;
        return minlsh__utf8_put(v, out);
    }
    for (i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (n == named[i].len && memcmp(b, named[i].name, n) == 0) {
            out[0] = named[i].ch;
            return 1;
        }
    }
    return 0;
}

/* End of an entity: decoded if known and terminated, else the literal. */
static int entity_end(engine *e, int semicolon) {
    uint8_t lit[ENT_MAX + 2], dec[4];
    size_t n = 0;
    e->hs = H_TEXT;
    if (semicolon && (n = entity_decode(e->ent, e->ent_len, dec)) > 0)
        return push_text(e, dec, n);
    lit[0] = '&';
    memcpy(lit + 1, e->ent, e->ent_len);
    n = 1 + e->ent_len;
    if (semicolon) lit[n++] = ';';
    return push_text(e, lit, n);
}

static const uint8_t space_byte = ' ';

static int html_feed(engine *e, const uint8_t *p, size_t n) {
    size_t i = 0;
    int rc = 0;
    while (i < n) {
        uint8_t c;
        if (e->hs == H_TEXT) {
            size_t j = i;
            while (j < n && p[j] != '<' && p[j] != '&') j++;
            if (j > i && (rc = push_text(e, p + i, j - i)) != 0) return rc;
            if (j == n) return 0;
            e->hs = p[j] == '<' ? H_LT : H_ENT;
            e->ent_len = 0;
            i = j + 1;
            continue;
        }
        c = p[i];
        switch (e->hs) {
        case H_LT:
            if (is_alpha(c) || c == '/' || c == '!' || c == '?') {
                /* Markup: one space stands for all of it. */
                if ((rc = push_text(e, &space_byte, 1)) != 0) return rc;
                e->eq = 0;
                e->raw = 0;
                if (is_alpha(c)) {
                    e->name[0] = lower(c);
                    e->name_len = 1;
                    e->hs = H_NAME;
                } else {
                    e->hs = c == '!' ? H_BANG : H_TAG;
                }
                i++;
            } else {
                /* A lone '<' is text; c is looked at again as text. */
                e->hs = H_TEXT;
                if ((rc = push_text(e, (const uint8_t *)"<", 1)) != 0) return rc;
            }
            break;
        case H_NAME:
            if (c == '>' || c == '/' || is_space(c)) {
                if (e->name_len == 6 && memcmp(e->name, "script", 6) == 0) e->raw = 1;
                else if (e->name_len == 5 && memcmp(e->name, "style", 5) == 0) e->raw = 2;
                e->hs = H_TAG; /* c is looked at again there */
            } else {
                if (e->name_len < 7) e->name[e->name_len++] = lower(c);
                i++;
            }
            break;
        case H_TAG:
            while (i < n) {
                c = p[i++];
                if (c == '>') {
                    e->hs = e->raw ? H_RAW : H_TEXT;
                    e->match = 0;
                    break;
                }
                if (c == '=') {
                    e->eq = 1;
                } else if ((c == '"' || c == '\'') && e->eq) {
                    e->quote = c;
                    e->hs = H_QUOTE;
                    break;
                } else if (!is_space(c)) {
                    e->eq = 0;
                }
            }
            break;
        case H_QUOTE:
            while (i < n && p[i] != e->quote) i++;
            if (i < n) {
                i++;
                e->hs = H_TAG;
                e->eq = 0;
            }
            break;
        case H_BANG:
        case H_BANG1:
            if (c == '-') {
                i++;
                if (e->hs == H_BANG) {
                    e->hs = H_BANG1;
                } else {
                    e->hs = H_COMMENT;
                    e->dash = 2; /* "<!-->" and "<!--->" are complete, as in HTML */
                }
            } else {
                e->hs = H_TAG; /* a declaration such as <!DOCTYPE ...> */
            }
            break;
        case H_COMMENT:
            while (i < n) {
                c = p[i++];
                if (c == '-') {
                    if (e->dash < 2) e->dash++;
                } else if (c == '>' && e->dash >= 2) {
                    e->hs = H_TEXT;
                    break;
                } else {
                    e->dash = 0;
                }
            }
            break;
        case H_RAW: {
            const char *pat = e->raw == 1 ? "</script" : "</style";
            unsigned plen = e->raw == 1 ? 8 : 7;
            if (e->match == plen) {
                if (c == '>' || c == '/' || is_space(c)) {
                    /* The end tag: a space, then the rest of the tag. */
                    if ((rc = push_text(e, &space_byte, 1)) != 0) return rc;
                    e->hs = H_TAG;
                    e->raw = 0;
                    e->eq = 0;
                    break; /* c is looked at again in H_TAG */
                }
                e->match = 0;
            }
            if (e->match == 0) {
                while (i < n && p[i] != '<') i++;
                if (i == n) break;
                c = p[i];
            }
            /* '<' occurs in the pattern only at its start. */
            if (lower(c) == (uint8_t)pat[e->match]) e->match++;
            else e->match = c == '<';
            i++;
            break;
        }
        case H_ENT:
            if (c == ';') {
                i++;
                if ((rc = entity_end(e, 1)) != 0) return rc;
            } else if ((is_alnum(c) || c == '#') && e->ent_len < ENT_MAX) {
                e->ent[e->ent_len++] = c;
                i++;
            } else {
                /* Unterminated: literal; c is looked at again as text. */
                if ((rc = entity_end(e, 0)) != 0) return rc;
            }
            break;
        default:
            return MINLSH_E_STATE; /* unreachable */
        }
    }
    return 0;
}

static int engine_feed(engine *e, const uint8_t *p, size_t n) {
    if (e->cfg->flags & MINLSH_NORM_HTML) return html_feed(e, p, n);
    return push_text(e, p, n);
}

/* End of input: everything still pending becomes units; the short-document
 * rule applies. Can fail only through the sink (allocation or callback). */
static int engine_flush(engine *e) {
    int rc = 0;
    if (e->hs == H_LT) rc = push_text(e, (const uint8_t *)"<", 1);
    else if (e->hs == H_ENT) rc = entity_end(e, 0);
    /* Markup left open runs to the end of the document: nothing more. */
    e->hs = H_TEXT;
    if (rc == 0 && e->uni) rc = minlsh__unorm_finish(&e->un);
    if (rc != 0) return rc;
    e->ws_pending = 0; /* trailing whitespace is trimmed */
    if (e->unit == MINLSH_UNIT_CODEPOINT && (rc = flush_u8(e)) != 0) return rc;
    if (e->in_word && (rc = end_word(e)) != 0) return rc;
    flush_queue(e);
    sync_hashers(e);
    if (e->nunits > 0 && e->nshingles == 0) {
        /* Fewer units than a shingle needs: one shingle of all of them. */
        uint64_t h = minlsh__siphash_final64(&e->whole);
        if (e->hn == e->hcap && (rc = sink_full(e)) != 0) return rc;
        e->hv[e->hn++] = h;
        e->nshingles++;
    }
    return 0;
}

/* Finish the document into set (may be NULL) and fp (may be NULL), then
 * restart. Everything that can fail for want of memory happens before the
 * state changes, so on MINLSH_E_NOMEM the document is intact. */
static int engine_finish(engine *e, minlsh_shingleset *set, uint8_t *fp) {
    size_t most, bytes = FLUSH_BYTES;
    int rc;
    /* The Unicode stage releases what it holds, and may grow the literal
     * of an entity. */
    if (e->uni) bytes = minlsh__unorm_bound(&e->un, ENT_MAX + 2) + FLUSH_BYTES;
    if ((rc = reserve_buf(e, bytes)) != 0) return rc;
    if (e->sink == SINK_COLLECT) {
        if ((rc = minlsh__add_size(&most, e->hn, e->uni ? bytes : FLUSH_HASHES)) != 0)
            return rc;
        if ((rc = minlsh__reserve(&e->cfg->alloc, (void **)&e->hv, &e->hcap,
                                  e->hn, most, sizeof *e->hv)) != 0)
            return rc;
        if (set != NULL &&
            (rc = minlsh__reserve(&set->alloc, (void **)&set->v, &set->cap,
                                  set->n, most, sizeof *set->v)) != 0)
            return rc;
    }
    if ((rc = engine_flush(e)) != 0) return rc;
    if (e->sink == SINK_CALLBACK && e->hn > 0) {
        rc = e->emit(e->ctx, e->hv, e->hn);
        e->hn = 0;
        if (rc != 0) return rc;
    }
    if (fp != NULL) minlsh__siphash_final128(&e->fp, fp);
    if (set != NULL && e->sink == SINK_COLLECT)
        set->n = minlsh__sort_unique_u64(set->v, e->hv, set->v, e->hn);
    engine_restart(e);
    return 0;
}

/* ---- public entry points ---------------------------------------------------- */

int minlsh_shingler_hash(const minlsh_shingler *s, const void *text, size_t len,
                         minlsh_shingleset *set,
                         uint8_t fp[MINLSH_FINGERPRINT_BYTES]) {
    engine e;
    int rc;
    if (s == NULL || (text == NULL && len > 0)) return MINLSH_E_NULL;
    if (s->max_bytes != 0 && (uint64_t)len > s->max_bytes) return MINLSH_E_TOOBIG;
    engine_init(&e, s, set != NULL ? SINK_COLLECT : SINK_COUNT, fp != NULL,
                minlsh__siphash_many_active());
    rc = engine_feed(&e, (const uint8_t *)text, len);
    if (rc == 0) rc = engine_finish(&e, set, fp);
    engine_release(&e);
    return rc;
}

int minlsh__shingler_each(const minlsh_shingler *s, const void *text, size_t len,
                          int (*emit)(void *ctx, const uint64_t *hashes, size_t n),
                          void *ctx) {
    return minlsh__shingler_each_kernel(s, text, len, emit, ctx,
                                        minlsh__siphash_many_active());
}

int minlsh__shingler_each_kernel(const minlsh_shingler *s, const void *text, size_t len,
                                 int (*emit)(void *ctx, const uint64_t *hashes, size_t n),
                                 void *ctx, const minlsh__siphash_many_kernel *kernel) {
    engine e;
    int rc;
    if (s == NULL || emit == NULL || kernel == NULL || (text == NULL && len > 0))
        return MINLSH_E_NULL;
    if (s->max_bytes != 0 && (uint64_t)len > s->max_bytes) return MINLSH_E_TOOBIG;
    engine_init(&e, s, SINK_CALLBACK, 0, kernel);
    e.emit = emit;
    e.ctx = ctx;
    rc = engine_feed(&e, (const uint8_t *)text, len);
    if (rc == 0) rc = engine_finish(&e, NULL, NULL);
    engine_release(&e);
    return rc;
}

struct minlsh_shinglestream {
    minlsh_shingler *cfg; /* a private copy */
    engine e;
    uint64_t fed;
    int refusing; /* 0, or the error that stopped the document */
};

int minlsh_shinglestream_new(minlsh_shinglestream **out,
                             const minlsh_shingler *shingler,
                             const minlsh_allocator *alloc) {
    minlsh_shinglestream *st;
    minlsh_shingler *cfg;
    minlsh_allocator al;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (shingler == NULL) return MINLSH_E_NULL;
    rc = minlsh__alloc_setup(&al, alloc);
    if (rc != 0) return rc;
    if (minlsh__shingler_clone(&cfg, shingler, &al) != 0) return MINLSH_E_NOMEM;
    st = (minlsh_shinglestream *)minlsh__malloc(&cfg->alloc, sizeof *st);
    if (st == NULL) {
        minlsh_shingler_free(cfg);
        return MINLSH_E_NOMEM;
    }
    st->cfg = cfg;
    st->fed = 0;
    st->refusing = 0;
    engine_init(&st->e, cfg, SINK_COLLECT, 1, minlsh__siphash_many_active());
    *out = st;
    return 0;
}

void minlsh_shinglestream_free(minlsh_shinglestream *st) {
    minlsh_shingler *cfg;
    if (st == NULL) return;
    cfg = st->cfg;
    engine_release(&st->e);
    minlsh__free(&cfg->alloc, st);
    minlsh_shingler_free(cfg);
}

/* Room for everything a chunk of n <= BLOCK bytes can add, reserved before
 * the engine sees a byte of it, so that feeding it cannot run out of memory
 * half-way (docs/robustness.md): per input byte at most 3 buffer bytes (an
 * invalid byte becomes EF BF BD) and one shingle, plus what bytes pending
 * from earlier chunks can release (an unterminated entity, a partial UTF-8
 * sequence, a space): the same allowances engine_finish makes. Growth and
 * compaction only, so a failure leaves the document as it was. */
static int engine_reserve_chunk(engine *e, size_t n) {
    size_t bytes = (e->unit == MINLSH_UNIT_CODEPOINT ? 3 * n : n) + 2 * FLUSH_BYTES;
    size_t hashes = n + FLUSH_HASHES;
    int rc;
    if (e->uni) {
        /* The Unicode stage's output is well-formed UTF-8, at most
         * MINLSH__UNICODE_GROW bytes per input byte; a unit is a byte at least. */
        bytes = minlsh__unorm_bound(&e->un, n + ENT_MAX + 2) + 2 * FLUSH_BYTES;
        /* a unit is a byte, or a code point, or a word of one at least */
        hashes = e->unit == MINLSH_UNIT_BYTE ? bytes
                                             : minlsh__unorm_bound_cps(&e->un, n + ENT_MAX + 2) +
                                                   FLUSH_HASHES;
    }
    /* Before the buffer may move: the queued shingles point into it. */
    if (e->sink == SINK_COLLECT && e->hcap - e->hn < hashes) compact_collected(e);
    rc = reserve_buf(e, bytes);
    if (rc == 0 && e->sink == SINK_COLLECT)
        rc = minlsh__reserve(&e->cfg->alloc, (void **)&e->hv, &e->hcap, e->hn,
                             e->hn + hashes, sizeof *e->hv);
    return rc;
}

int minlsh_shinglestream_feed(minlsh_shinglestream *st, const void *data,
                               size_t len) {
    uint64_t max;
    int rc;
    if (st == NULL || (data == NULL && len > 0)) return MINLSH_E_NULL;
    if (st->refusing != 0) return st->refusing;
    max = st->cfg->max_bytes;
    if (max != 0 && ((uint64_t)len > max || st->fed > max - (uint64_t)len)) {
        st->refusing = MINLSH_E_TOOBIG;
        return MINLSH_E_TOOBIG;
    }
    /* A chunk of at most BLOCK bytes is all or nothing: on MINLSH_E_NOMEM
     * here nothing was consumed and the caller may retry. */
    if (len > 0 && len <= BLOCK && (rc = engine_reserve_chunk(&st->e, len)) != 0) return rc;
    rc = engine_feed(&st->e, (const uint8_t *)data, len);
    if (rc != 0) {
        st->refusing = rc; /* the chunk is half consumed: unusable until reset */
        return rc;
    }
    st->fed += (uint64_t)len;
    return 0;
}

int minlsh_shinglestream_reset(minlsh_shinglestream *st) {
    if (st == NULL) return MINLSH_E_NULL;
    engine_restart(&st->e);
    st->fed = 0;
    st->refusing = 0;
    return 0;
}

int minlsh_shinglestream_finish(minlsh_shinglestream *st, minlsh_shingleset *set,
                                 uint8_t fp[MINLSH_FINGERPRINT_BYTES]) {
    int rc;
    if (st == NULL) return MINLSH_E_NULL;
    if (st->refusing != 0) {
        rc = st->refusing == MINLSH_E_TOOBIG ? MINLSH_E_TOOBIG : MINLSH_E_STATE;
        minlsh_shinglestream_reset(st);
        return rc;
    }
    if ((rc = engine_finish(&st->e, set, fp)) != 0) return rc;
    st->fed = 0;
    return 0;
}

uint64_t minlsh_shinglestream_bytes(const minlsh_shinglestream *st) {
    return st != NULL ? st->fed : 0;
}
