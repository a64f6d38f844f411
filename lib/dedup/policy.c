/*
 * The rules every dedup front end shares (docs/dedup.md, "Policy"): the
 * banding planned from the threshold, the memory budget when none is
 * given, and the canonical form of a document id. The engine uses the
 * first two itself; the command and the bindings call all three, so that
 * the same input gives the same decisions whichever front end reads it.
 */
#include "dedup.h"

#include <unistd.h>

/* Planning at a threshold t needs t < 1; above this, P(candidate | s) only
 * grows with s, so a plan for it keeps the recall for any higher t. */
#define MINLSH__DEDUP_PLAN_CEILING 0.99
#define MINLSH__DEDUP_RECALL 0.999

int minlsh_dedup_plan(uint32_t *bands, uint32_t *rows, const minlsh_dedup_options *opts,
                      uint32_t k) {
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    if (bands == NULL || rows == NULL || opts == NULL) return MINLSH_E_NULL;
    *bands = *rows = 0;
    if (k == 0 || !(opts->threshold > 0.0 && opts->threshold <= 1.0)) return MINLSH_E_PARAM;
    if ((opts->bands == 0) != (opts->rows == 0)) return MINLSH_E_PARAM;
    if (opts->bands != 0) {
        if ((uint64_t)opts->bands * opts->rows > k) return MINLSH_E_PARAM;
        *bands = opts->bands;
        *rows = opts->rows;
        return 0;
    }
    po.k = k;
    po.mode = MINLSH_PLAN_RECALL;
    po.target_recall = MINLSH__DEDUP_RECALL;
    po.threshold = opts->threshold < MINLSH__DEDUP_PLAN_CEILING ? opts->threshold
                                                                : MINLSH__DEDUP_PLAN_CEILING;
    /* No fallback to a plan of lower recall: a refusal the caller can
     * explain beats near-duplicates silently missed. */
    return minlsh_plan_compute(bands, rows, NULL, NULL, &po);
}

int minlsh__dedup_plan(minlsh_dedup *d) {
    return minlsh_dedup_plan(&d->bands, &d->rows, &d->opts, d->k);
}

uint64_t minlsh_dedup_default_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0) return (uint64_t)4 << 30;
    return (uint64_t)pages * (uint64_t)size / 2;
}

uint64_t minlsh__dedup_budget(uint64_t memory) {
    if (memory == MINLSH_DEDUP_MEMORY_UNLIMITED) return 0;
    return memory == 0 ? minlsh_dedup_default_memory() : memory;
}

/* ---- canonical ids ---------------------------------------------------- */

typedef struct minlsh__id_out {
    char *p;
    size_t cap, n;
} minlsh__id_out;

static void minlsh__id_put(minlsh__id_out *o, char c) {
    if (o->n < o->cap) o->p[o->n] = c;
    o->n++;
}

static int minlsh__is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int minlsh__hex(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Four hex digits at s (n bytes left), or -1. */
static long minlsh__hex4(const unsigned char *s, size_t n) {
    long v = 0;
    size_t i;
    if (n < 4) return -1;
    for (i = 0; i < 4; i++) {
        int h = minlsh__hex(s[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static void minlsh__id_utf8(minlsh__id_out *o, unsigned long cp) {
    if (cp < 0x80) {
        minlsh__id_put(o, (char)cp);
    } else if (cp < 0x800) {
        minlsh__id_put(o, (char)(0xc0 | (cp >> 6)));
        minlsh__id_put(o, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        minlsh__id_put(o, (char)(0xe0 | (cp >> 12)));
        minlsh__id_put(o, (char)(0x80 | ((cp >> 6) & 0x3f)));
        minlsh__id_put(o, (char)(0x80 | (cp & 0x3f)));
    } else {
        minlsh__id_put(o, (char)(0xf0 | (cp >> 18)));
        minlsh__id_put(o, (char)(0x80 | ((cp >> 12) & 0x3f)));
        minlsh__id_put(o, (char)(0x80 | ((cp >> 6) & 0x3f)));
        minlsh__id_put(o, (char)(0x80 | (cp & 0x3f)));
    }
}

/* A character that must stay escaped: quote, backslash, controls, and a
 * surrogate without its pair (it has no UTF-8 form). */
static void minlsh__id_escape(minlsh__id_out *o, unsigned long c) {
    static const char digits[] = "0123456789abcdef";
    const char *named = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b"
                      : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                      : c == '\t' ? "\\t" : NULL;
    if (named != NULL) {
        minlsh__id_put(o, named[0]);
        minlsh__id_put(o, named[1]);
        return;
    }
    minlsh__id_put(o, '\\');
    minlsh__id_put(o, 'u');
    minlsh__id_put(o, digits[(c >> 12) & 15]);
    minlsh__id_put(o, digits[(c >> 8) & 15]);
    minlsh__id_put(o, digits[(c >> 4) & 15]);
    minlsh__id_put(o, digits[c & 15]);
}

/* A JSON string: every escape decoded, then written back with only the
 * escapes JSON requires, so that "\u0041" and "A" are one id. */
static int minlsh__id_string(minlsh__id_out *o, const unsigned char *s, size_t n) {
    size_t i = 1;
    if (n < 2 || s[n - 1] != '"') return MINLSH_E_PARAM;
    n--;
    minlsh__id_put(o, '"');
    while (i < n) {
        unsigned char c = s[i];
        long cp, lo;
        if (c < 0x20 || c == '"') return MINLSH_E_PARAM;
        if (c != '\\') {
            minlsh__id_put(o, (char)c);
            i++;
            continue;
        }
        if (++i >= n) return MINLSH_E_PARAM;
        c = s[i++];
        switch (c) {
        case '"': minlsh__id_escape(o, '"'); continue;
        case '\\': minlsh__id_escape(o, '\\'); continue;
        case '/': minlsh__id_put(o, '/'); continue;
        case 'b': minlsh__id_escape(o, '\b'); continue;
        case 'f': minlsh__id_escape(o, '\f'); continue;
        case 'n': minlsh__id_escape(o, '\n'); continue;
        case 'r': minlsh__id_escape(o, '\r'); continue;
        case 't': minlsh__id_escape(o, '\t'); continue;
        case 'u': break;
        default: return MINLSH_E_PARAM;
        }
        if ((cp = minlsh__hex4(s + i, n - i)) < 0) return MINLSH_E_PARAM;
        i += 4;
        if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u' &&
            (lo = minlsh__hex4(s + i + 2, n - i - 2)) >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            i += 6;
        }
        if (cp < 0x20 || cp == '"' || cp == '\\' || (cp >= 0xd800 && cp < 0xe000))
            minlsh__id_escape(o, (unsigned long)cp);
        else
            minlsh__id_utf8(o, (unsigned long)cp);
    }
    minlsh__id_put(o, '"');
    return 0;
}

/* Exponents past this are refused: no id needs them, and the canonical
 * form stays short. */
#define MINLSH__ID_EXP_MAX 100000000L

/* A JSON number by its exact decimal value: digits without leading or
 * trailing zeros and a power of ten, written as an integer, a decimal
 * fraction or d.ddde±N, whichever is the usual way to write it (as
 * ECMAScript prints numbers), so 1, 1.0, 1e0 and 10E-1 are one id. */
static int minlsh__id_number(minlsh__id_out *o, const unsigned char *s, size_t n) {
    size_t i = 0, first = 0, last = 0, n_digits = 0, j;
    long exp = 0, exp10 = 0, point;
    int neg = 0, exp_neg = 0, any = 0;
    const unsigned char *frac_at = NULL;
    if (i < n && s[i] == '-') {
        neg = 1;
        i++;
    }
    if (i >= n || !minlsh__is_digit(s[i])) return MINLSH_E_PARAM;
    if (s[i] == '0' && i + 1 < n && minlsh__is_digit(s[i + 1])) return MINLSH_E_PARAM;
    first = i;
    while (i < n && minlsh__is_digit(s[i])) i++;
    last = i; /* integer digits: first .. last */
    if (i < n && s[i] == '.') {
        frac_at = s + ++i;
        if (i >= n || !minlsh__is_digit(s[i])) return MINLSH_E_PARAM;
        while (i < n && minlsh__is_digit(s[i])) i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        if (++i < n && (s[i] == '+' || s[i] == '-')) exp_neg = s[i++] == '-';
        if (i >= n || !minlsh__is_digit(s[i])) return MINLSH_E_PARAM;
        while (i < n && minlsh__is_digit(s[i])) {
            exp = exp * 10 + (s[i++] - '0');
            if (exp > MINLSH__ID_EXP_MAX) return MINLSH_E_PARAM;
        }
        if (exp_neg) exp = -exp;
    }
    if (i != n) return MINLSH_E_PARAM;
    {
        /* The significant digits, integer part then fraction, in one walk. */
        size_t frac_n = frac_at != NULL ? (size_t)(s + n - frac_at) : 0;
        const unsigned char *end_frac = frac_at;
        size_t lead = 0, total, k, sig_first, sig_last;
        if (frac_at != NULL) {
            end_frac = frac_at;
            while (end_frac < s + n && minlsh__is_digit(*end_frac)) end_frac++;
            frac_n = (size_t)(end_frac - frac_at);
        }
        total = (last - first) + frac_n;
#define MINLSH__ID_DIGIT(k) ((k) < last - first ? s[first + (k)] : frac_at[(k) - (last - first)])
        while (lead < total && MINLSH__ID_DIGIT(lead) == '0') lead++;
        if (lead == total) { /* zero, of either sign */
            minlsh__id_put(o, '0');
            return 0;
        }
        sig_first = lead;
        sig_last = total;
        while (MINLSH__ID_DIGIT(sig_last - 1) == '0') sig_last--;
        n_digits = sig_last - sig_first;
        /* value = 0.d1d2...dn * 10^point, point counted from the first
         * significant digit */
        point = (long)(last - first) - (long)sig_first + exp;
        exp10 = point - 1; /* scientific exponent */
        if (neg) minlsh__id_put(o, '-');
        if (point >= (long)n_digits && point <= 21) {
            for (k = sig_first; k < sig_last; k++) minlsh__id_put(o, (char)MINLSH__ID_DIGIT(k));
            for (j = n_digits; j < (size_t)point; j++) minlsh__id_put(o, '0');
        } else if (point > 0 && point <= 21) {
            for (k = 0; k < n_digits; k++) {
                if (k == (size_t)point) minlsh__id_put(o, '.');
                minlsh__id_put(o, (char)MINLSH__ID_DIGIT(sig_first + k));
            }
        } else if (point <= 0 && point > -6) {
            minlsh__id_put(o, '0');
            minlsh__id_put(o, '.');
            for (j = 0; j < (size_t)(-point); j++) minlsh__id_put(o, '0');
            for (k = sig_first; k < sig_last; k++) minlsh__id_put(o, (char)MINLSH__ID_DIGIT(k));
        } else {
            char e[24];
            int m = 0;
            unsigned long ae = (unsigned long)(exp10 < 0 ? -exp10 : exp10);
            minlsh__id_put(o, (char)MINLSH__ID_DIGIT(sig_first));
            if (n_digits > 1) minlsh__id_put(o, '.');
            for (k = sig_first + 1; k < sig_last; k++) minlsh__id_put(o, (char)MINLSH__ID_DIGIT(k));
            minlsh__id_put(o, 'e');
            minlsh__id_put(o, exp10 < 0 ? '-' : '+');
            do {
                e[m++] = (char)('0' + ae % 10);
                ae /= 10;
            } while (ae > 0);
            while (m > 0) minlsh__id_put(o, e[--m]);
        }
#undef MINLSH__ID_DIGIT
        any = 1;
    }
    return any ? 0 : MINLSH_E_PARAM;
}

int minlsh_dedup_canonical_id(const void *id, size_t n, char *out, size_t cap, size_t *n_out) {
    const unsigned char *s = (const unsigned char *)id;
    minlsh__id_out o;
    int rc;
    if ((id == NULL && n > 0) || (out == NULL && cap > 0)) return MINLSH_E_NULL;
    if (n_out != NULL) *n_out = 0;
    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
                     s[n - 1] == '\r'))
        n--;
    if (n == 0) return MINLSH_E_PARAM;
    o.p = out;
    o.cap = cap;
    o.n = 0;
    if (s[0] == '"') rc = minlsh__id_string(&o, s, n);
    else if (s[0] == '-' || minlsh__is_digit(s[0])) rc = minlsh__id_number(&o, s, n);
    else rc = MINLSH_E_PARAM; /* true, false, null, objects, arrays */
    if (rc != 0) return rc;
    if (n_out != NULL) *n_out = o.n;
    return o.n > cap ? MINLSH_E_BUFSIZE : 0;
}

int minlsh__dedup_id_is_canonical(const void *id, size_t n) {
    const unsigned char *s = (const unsigned char *)id;
    size_t i;
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        /* No escape and nothing that needs one: written back unchanged. */
        for (i = 1; i < n - 1; i++)
            if (s[i] < 0x20 || s[i] == '"' || s[i] == '\\') return 0;
        return 1;
    }
    /* An integer without leading zeros ("-0" is "0"), and short enough to
     * be written out in full rather than with an exponent. */
    i = n > 0 && s[0] == '-';
    if (i >= n || s[i] < '1' || s[i] > '9' || n - i > 21) return n == 1 && s[0] == '0';
    for (; i < n; i++)
        if (!minlsh__is_digit(s[i])) return 0;
    return 1;
}

int minlsh__dedup_increasing(const uint64_t *v, size_t n) {
    size_t i;
    unsigned bad = 0;
    /* No early exit: a loop the compiler can do many at a time, as sets
     * are nearly always valid. */
    for (i = 1; i < n; i++) bad |= v[i] <= v[i - 1];
    return !bad;
}
