/*
 * The Unicode stage of normalisation: raw bytes (after HTML) to normalised
 * UTF-8, before the ASCII stages and the units. docs/shingling.md, 3.5, is
 * its specification.
 *
 * Per code point, in order: UTF-8 decoding (each byte of an ill-formed
 * sequence is U+FFFD), NFKC, full case folding, digit folding, deletion of
 * punctuation and symbols, White_Space to ' ', and, for word units, a space
 * on either side of each character of a script written without spaces.
 * Everything but NFKC maps one code point at a time. NFKC holds the
 * decomposed code points since the last one that cannot interact with what
 * follows (a starter that never composes with a preceding character): only
 * then are they reordered, composed and passed on, so the output does not
 * depend on where the input was cut.
 *
 * ASCII is the fast path: every ASCII byte is such a starter and each
 * Unicode flag treats it exactly as its ASCII counterpart does (the
 * shingler turns that one on too), so a run of ASCII bytes skips this stage
 * and goes to the ASCII tables as it is; with NFKC only its last byte is
 * held, in case a combining mark follows.
 */
#include "unicode.h"

#include "minlsh.h"

#define S_BASE 0xAC00u
#define L_BASE 0x1100u
#define V_BASE 0x1161u
#define T_BASE 0x11A7u
#define L_COUNT 19u
#define V_COUNT 21u
#define T_COUNT 28u
#define N_COUNT (V_COUNT * T_COUNT)
#define S_COUNT (L_COUNT * N_COUNT)

uint32_t minlsh_unicode_version(void) { return MINLSH__UNICODE_VERSION; }

uint32_t minlsh__ucd_compose(uint32_t a, uint32_t b) {
    uint64_t key;
    size_t lo = 0, hi = minlsh__ucd_pairs;
    if (a - L_BASE < L_COUNT && b - V_BASE < V_COUNT)
        return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
    if (a - S_BASE < S_COUNT && (a - S_BASE) % T_COUNT == 0 && b - T_BASE - 1 < T_COUNT - 1)
        return a + (b - T_BASE);
    key = (uint64_t)a << 21 | b;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (minlsh__ucd_pair_key[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < minlsh__ucd_pairs && minlsh__ucd_pair_key[lo] == key ? minlsh__ucd_pair_val[lo]
                                                                       : 0;
}

void minlsh__unorm_init(minlsh__unorm *u, uint32_t flags, int split,
                        minlsh__unorm_emit emit, void *ctx) {
    u->flags = flags;
    u->split = split;
    u->fold = (flags & MINLSH_NORM_UCASEFOLD) != 0;
    u->nfkc = (flags & MINLSH_NORM_NFKC) != 0;
    u->mask = ((flags & MINLSH_NORM_DIGITS) ? MINLSH__U_DIGIT : 0) |
              ((flags & MINLSH_NORM_UPUNCT) ? MINLSH__U_DEL : 0) |
              ((flags & MINLSH_NORM_UWHITESPACE) ? MINLSH__U_WS : 0) |
              (split ? MINLSH__U_SPLIT | MINLSH__U_MARK : 0);
    u->pass_mask = u->mask | (u->nfkc ? MINLSH__U_COMP2 | MINLSH__U_NFKC_NO : 0);
    u->emit = emit;
    u->ctx = ctx;
    minlsh__unorm_reset(u);
}

void minlsh__unorm_reset(minlsh__unorm *u) {
    u->u8n = 0;
    u->segn = 0;
    u->raw = 0;
    u->open = 0;
    u->outn = 0;
}

static int out_flush(minlsh__unorm *u) {
    size_t n = u->outn;
    if (n == 0) return 0;
    u->outn = 0;
    return u->emit(u->ctx, u->out, n);
}

/* One code point after NFKC: folding, then the per-code-point rules. */
static int put_one(minlsh__unorm *u, uint32_t cp, const minlsh__ucd_record *r) {
    uint32_t f = u->flags;
    unsigned bits = r->bits;
    int rc;
    if (MINLSH__UNLIKELY(u->outn + 8 > MINLSH__UOUT) && (rc = out_flush(u)) != 0) return rc;
    if ((bits & u->mask) == 0 && !u->open) {
        u->outn += minlsh__utf8_put(cp, u->out + u->outn);
        return 0;
    }
    if ((f & MINLSH_NORM_DIGITS) && (bits & MINLSH__U_DIGIT)) {
        cp = '0' + (uint32_t)r->digit;
        bits = 0;
    } else if ((f & MINLSH_NORM_UPUNCT) && (bits & MINLSH__U_DEL) && cp != 0xFFFD) {
        return 0; /* U+FFFD stands for invalid input, which must not vanish */
    } else if ((f & MINLSH_NORM_UWHITESPACE) && (bits & MINLSH__U_WS)) {
        cp = ' ';
        bits = 0;
    }
    if (u->split) {
        if (bits & MINLSH__U_SPLIT) {
            u->out[u->outn++] = ' ';
            u->outn += minlsh__utf8_put(cp, u->out + u->outn);
            u->open = 1;
            return 0;
        }
        if (u->open && !(bits & MINLSH__U_MARK)) {
            u->out[u->outn++] = ' ';
            u->open = 0;
        }
    }
    u->outn += minlsh__utf8_put(cp, u->out + u->outn);
    return 0;
}

MINLSH__INLINE int put_cp(minlsh__unorm *u, uint32_t cp, const minlsh__ucd_record *r) {
    if (MINLSH__LIKELY((r->bits & u->mask) == 0 && !u->open && (!u->fold || r->fold == 0) &&
                       u->outn + 4 <= MINLSH__UOUT)) {
        u->outn += minlsh__utf8_put(cp, u->out + u->outn);
        return 0;
    }
    if (u->fold && r->fold != 0) {
        const uint32_t *s = minlsh__ucd_seq + r->fold;
        uint32_t i, n = s[0];
        int rc;
        for (i = 1; i <= n; i++)
            if ((rc = put_one(u, s[i], minlsh__ucd_get(s[i]))) != 0) return rc;
        return 0;
    }
    return put_one(u, cp, r);
}

/* The held code points: canonical order, canonical composition, output. */
static int seg_flush(minlsh__unorm *u) {
    uint32_t *s = u->seg;
    uint8_t *c = u->segc;
    unsigned n = u->segn, i, m, last;
    int starter, rc;
    u->segn = 0;
    /* Canonical ordering: a stable sort of each run of non-starters by
     * class (an insertion sort never moves a mark past a starter). */
    for (i = 1; i < n; i++) {
        unsigned j = i;
        while (j > 0 && c[j] != 0 && c[j - 1] > c[j]) {
            uint32_t t = s[j];
            uint8_t tc = c[j];
            s[j] = s[j - 1];
            c[j] = c[j - 1];
            s[j - 1] = t;
            c[j - 1] = tc;
            j--;
        }
    }
    /* Canonical composition (UAX #15): each character joins the last
     * starter unless blocked by a character in between of class 0 or of a
     * class not below its own. */
    starter = c[0] == 0 ? 0 : -1;
    last = c[0] == 0 ? 0 : 256;
    for (i = 1, m = 1; i < n; i++) {
        if (starter >= 0 && (last < c[i] || last == 0)) {
            uint32_t comp = minlsh__ucd_compose(s[starter], s[i]);
            if (comp != 0) {
                s[starter] = comp;
                continue;
            }
        }
        if (c[i] == 0) starter = (int)m;
        last = c[i];
        s[m] = s[i];
        c[m] = c[i];
        m++;
    }
    for (i = 0; i < m; i++)
        if ((rc = put_cp(u, s[i], minlsh__ucd_get(s[i]))) != 0) return rc;
    return 0;
}

static int decompose(minlsh__unorm *u, uint32_t cp, const minlsh__ucd_record *r);

/* One decomposed code point into the NFKC window. A window of one code
 * point (the usual case: a starter followed by another) needs no
 * reordering or composition. */
MINLSH__INLINE int seg_add(minlsh__unorm *u, uint32_t cp, const minlsh__ucd_record *r) {
    int rc;
    if (u->segn > 0) {
        if ((r->ccc == 0 && !(r->bits & MINLSH__U_COMP2)) || u->segn == MINLSH__USEG_MAX) {
            rc = u->segn == 1 ? put_cp(u, u->seg[0], u->held) : seg_flush(u);
            u->segn = 0;
            if (rc != 0) return rc;
        } else if (u->raw) {
            /* cp may interact with the held code point: decompose it */
            u->raw = 0;
            u->segn = 0;
            if ((rc = decompose(u, u->seg[0], u->held)) != 0) return rc;
        }
    }
    if (u->segn == 0) {
        u->held = r;
        u->raw = 0;
    }
    u->seg[u->segn] = cp;
    u->segc[u->segn++] = r->ccc;
    return 0;
}

/* Its full NFKC decomposition into the window. */
static int decompose(minlsh__unorm *u, uint32_t cp, const minlsh__ucd_record *r) {
    int rc;
    if (cp - S_BASE < S_COUNT) {
        uint32_t s = cp - S_BASE;
        if ((rc = seg_add(u, L_BASE + s / N_COUNT, minlsh__ucd_get(L_BASE))) != 0) return rc;
        if ((rc = seg_add(u, V_BASE + s % N_COUNT / T_COUNT, minlsh__ucd_get(V_BASE))) != 0)
            return rc;
        if (s % T_COUNT != 0)
            rc = seg_add(u, T_BASE + s % T_COUNT, minlsh__ucd_get(T_BASE + 1));
        return rc;
    }
    if (r->dec != 0) {
        const uint32_t *d = minlsh__ucd_seq + r->dec;
        uint32_t i, n = d[0];
        for (i = 1; i <= n; i++)
            if ((rc = seg_add(u, d[i], minlsh__ucd_get(d[i]))) != 0) return rc;
        return 0;
    }
    return seg_add(u, cp, r);
}

/* One decoded code point. */
MINLSH__INLINE int code_point_r(minlsh__unorm *u, uint32_t cp, const minlsh__ucd_record *r) {
    if (!u->nfkc) return put_cp(u, cp, r);
    if (r->dec == 0 && cp - S_BASE >= S_COUNT) return seg_add(u, cp, r);
    return decompose(u, cp, r);
}

MINLSH__INLINE int code_point(minlsh__unorm *u, uint32_t cp) {
    return code_point_r(u, cp, minlsh__ucd_get(cp));
}

/* Whether the stage leaves code point r as it is and it is final as soon
 * as the next one is such a code point too: nothing the flags act on, no
 * folding, and under NFKC a starter that is NFKC_QC Yes (NFKC keeps it,
 * composed characters and Hangul syllables included) and composes with
 * nothing before it. Such a code point held last in the window is
 * decomposed only if what follows may interact with it (seg_add). */
MINLSH__INLINE int passes(const minlsh__unorm *u, const minlsh__ucd_record *r) {
    return (r->bits & u->pass_mask) == 0 && (!u->fold || r->fold == 0) &&
           (!u->nfkc || r->ccc == 0);
}

/* What is held goes out before a code point that passes: the window, the
 * space that ends a one-character word, the output buffer. */
static int release_held(minlsh__unorm *u) {
    int rc;
    if (u->segn > 0) {
        rc = u->segn == 1 ? put_cp(u, u->seg[0], u->held) : seg_flush(u);
        u->segn = 0;
        if (rc != 0) return rc;
    }
    if (u->open) {
        if (u->outn == MINLSH__UOUT && (rc = out_flush(u)) != 0) return rc;
        u->out[u->outn++] = ' ';
        u->open = 0;
    }
    return 0;
}

/* A run of code points that pass (the state has no pending UTF-8 bytes):
 * the bytes before the last one go out as they are, straight from the
 * input; under NFKC the last (cp, record r) is held, since a combining mark
 * may follow. ASCII always passes: the byte tables do what the Unicode
 * flags do to it. */
static int pass_run(minlsh__unorm *u, const uint8_t *p, size_t before, size_t lastlen,
                    uint32_t cp, const minlsh__ucd_record *r) {
    size_t n = before + lastlen;
    int rc;
    if ((rc = release_held(u)) != 0) return rc;
    if (u->nfkc) {
        n = before;
        u->seg[0] = cp;
        u->segc[0] = 0;
        u->segn = 1;
        u->held = r;
        u->raw = 1;
    }
    if (n == 0) return 0;
    if ((rc = out_flush(u)) != 0) return rc;
    return u->emit(u->ctx, p, n);
}

/* Each byte of a prefix that cannot be completed is one U+FFFD. */
static int u8_abandon(minlsh__unorm *u) {
    unsigned i, n = u->u8n;
    int rc;
    u->u8n = 0;
    for (i = 0; i < n; i++)
        if ((rc = code_point(u, 0xFFFD)) != 0) return rc;
    return 0;
}

/* The value of a well-formed sequence of n (2..4) bytes. */
MINLSH__INLINE uint32_t u8_value(const uint8_t *b, unsigned n) {
    uint32_t v = b[0] & (0x7Fu >> n);
    unsigned i;
    for (i = 1; i < n; i++) v = v << 6 | (b[i] & 0x3F);
    return v;
}

int minlsh__unorm_feed(minlsh__unorm *u, const uint8_t *p, size_t n) {
    size_t i = 0;
    int rc;
    while (i < n) {
        uint8_t c = p[i];
        if (u->u8n == 0) {
            /* the longest run of code points that pass */
            size_t j = i, last = i;
            uint32_t cp = 0, stop = 0;
            const minlsh__ucd_record *r = NULL, *stop_r = NULL;
            unsigned stop_len = 0; /* a whole code point that does not pass ends the run */
            while (j < n) {
                uint8_t lo, hi, b = p[j];
                unsigned need;
                if (n - j >= 8 && (minlsh__load64le(p + j) & UINT64_C(0x8080808080808080)) == 0) {
                    j += 8; /* eight ASCII bytes */
                    last = j - 1;
                    cp = p[last];
                    r = NULL;
                    continue;
                }
                if (b < 0x80) {
                    last = j++;
                    cp = b;
                    r = NULL;
                    continue;
                }
                need = minlsh__utf8_lead(b, &lo, &hi);
                if (need == 0 || n - j < need || p[j + 1] < lo || p[j + 1] > hi ||
                    (need > 2 && (p[j + 2] & 0xC0) != 0x80) ||
                    (need > 3 && (p[j + 3] & 0xC0) != 0x80))
                    break;
                {
                    uint32_t v = u8_value(p + j, need);
                    const minlsh__ucd_record *rv = minlsh__ucd_get(v);
                    if (!passes(u, rv)) {
                        stop = v;
                        stop_r = rv;
                        stop_len = need;
                        break;
                    }
                    cp = v;
                    r = rv;
                }
                last = j;
                j += need;
            }
            if (j > i) {
                if (r == NULL) r = minlsh__ucd_get(cp);
                if ((rc = pass_run(u, p + i, last - i, j - last, cp, r)) != 0) return rc;
            }
            if (stop_len != 0) { /* decoded already: the slow path at once */
                if ((rc = code_point_r(u, stop, stop_r)) != 0) return rc;
                j += stop_len;
            }
            if (j > i) {
                i = j;
                continue;
            }
            u->u8need = minlsh__utf8_lead(c, &u->u8lo, &u->u8hi);
            if (MINLSH__LIKELY(u->u8need != 0 && n - i >= u->u8need)) {
                /* the whole sequence is here: decode it at once if valid */
                unsigned need = u->u8need;
                if (p[i + 1] >= u->u8lo && p[i + 1] <= u->u8hi &&
                    (need < 3 || (p[i + 2] & 0xC0) == 0x80) &&
                    (need < 4 || (p[i + 3] & 0xC0) == 0x80)) {
                    cp = u8_value(p + i, need);
                    i += need;
                    if ((rc = code_point(u, cp)) != 0) return rc;
                    continue;
                }
            }
            i++;
            if (u->u8need == 0) {
                if ((rc = code_point(u, 0xFFFD)) != 0) return rc;
                continue;
            }
            u->u8[0] = c;
            u->u8n = 1;
            continue;
        }
        if (c < u->u8lo || c > u->u8hi) {
            /* c starts afresh: it is looked at again */
            if ((rc = u8_abandon(u)) != 0) return rc;
            continue;
        }
        i++;
        u->u8[u->u8n++] = c;
        u->u8lo = 0x80;
        u->u8hi = 0xBF;
        if (u->u8n == u->u8need) {
            uint32_t cp = u8_value(u->u8, u->u8n);
            u->u8n = 0;
            if ((rc = code_point(u, cp)) != 0) return rc;
        }
    }
    return 0;
}

int minlsh__unorm_release(minlsh__unorm *u) {
    int rc;
    /* An ASCII byte never continues a UTF-8 sequence. */
    if ((rc = u8_abandon(u)) != 0) return rc;
    if ((rc = release_held(u)) != 0) return rc;
    return out_flush(u);
}

int minlsh__unorm_finish(minlsh__unorm *u) {
    int rc;
    if ((rc = u8_abandon(u)) != 0) return rc;
    if (u->segn > 0) {
        rc = u->segn == 1 ? put_cp(u, u->seg[0], u->held) : seg_flush(u);
        u->segn = 0;
        if (rc != 0) return rc;
    }
    rc = out_flush(u);
    minlsh__unorm_reset(u);
    return rc;
}

/* A held code point counts as 4 bytes of input: it came from at most that
 * many, and folding makes at most 3 of it. */
size_t minlsh__unorm_bound(const minlsh__unorm *u, size_t n) {
    return (n + u->u8n + 4 * (size_t)u->segn) * MINLSH__UNICODE_GROW + u->outn + 1;
}

size_t minlsh__unorm_bound_cps(const minlsh__unorm *u, size_t n) {
    return (n + u->u8n + 4 * (size_t)u->segn) * MINLSH__UNICODE_GROW_CPS + u->outn + 1;
}

#ifdef MINLSH_TESTING
typedef struct collect {
    uint8_t *out;
    size_t cap, n;
} collect;

static int collect_emit(void *ctx, const uint8_t *p, size_t n) {
    collect *c = (collect *)ctx;
    if (c->cap - c->n < n) return MINLSH_E_BUFSIZE;
    memcpy(c->out + c->n, p, n);
    c->n += n;
    return 0;
}

int minlsh__unicode_normalize(uint32_t flags, int split, const uint8_t *in, size_t n,
                              uint8_t *out, size_t cap, size_t *n_out) {
    minlsh__unorm u;
    collect c;
    int rc;
    c.out = out;
    c.cap = cap;
    c.n = 0;
    minlsh__unorm_init(&u, flags, split, collect_emit, &c);
    rc = minlsh__unorm_feed(&u, in, n);
    if (rc == 0) rc = minlsh__unorm_finish(&u);
    *n_out = c.n;
    return rc;
}
#endif
