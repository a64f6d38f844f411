/*
 * Stop words: the built-in English list and the normalised lookup table used
 * by the STOPWORD unit (and hashed into config_id).
 */
#include "shingle.h"

/* Common English function words, our own selection: articles and
 * determiners, pronouns, prepositions, auxiliaries and modals, conjunctions,
 * and a few frequent adverbs. Order does not matter (the list is sorted when
 * loaded); docs/shingling.md reproduces it. */
const char minlsh__stopwords_en[] =
    /* articles, determiners, quantifiers */
    "a an the this that these those each every either neither some any no "
    "all both few many much more most other another such same own "
    /* personal, possessive, reflexive, relative, interrogative pronouns */
    "i me my mine myself we us our ours ourselves you your yours yourself "
    "yourselves he him his himself she her hers herself it its itself they "
    "them their theirs themselves what which who whom whose "
    /* prepositions */
    "about above across after against along among around at before behind "
    "below beneath beside besides between beyond by down during except for "
    "from in inside into like near of off on onto out outside over past "
    "since through throughout till to toward towards under underneath until "
    "up upon via with within without "
    /* auxiliaries and modals */
    "am is are was were be been being have has had having do does did doing "
    "will would shall should can could may might must ought "
    /* conjunctions */
    "and but or nor so yet if then else than because as while although "
    "though whether unless once when whenever where wherever why how "
    /* frequent adverbs and particles */
    "not there here very too also just only even still again ever never "
    "now";
const size_t minlsh__stopwords_en_len = sizeof minlsh__stopwords_en - 1;

MINLSH__INLINE uint8_t lower(uint8_t c) {
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

MINLSH__INLINE int is_word_byte(uint8_t c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c >= 0x80;
}

MINLSH__INLINE int is_space(uint8_t c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* FNV-1a over the lower-cased bytes: internal to the table, never stored. */
static size_t stop_hash(const uint8_t *w, size_t n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= lower(w[i]);
        h *= UINT64_C(0x100000001b3);
    }
    return (size_t)(h ^ (h >> 32));
}

typedef struct {
    const uint8_t *p;
    size_t n;
} stop_entry;

/* Bytewise order, a proper prefix first. */
static int entry_cmp(const stop_entry *a, const stop_entry *b) {
    size_t m = a->n < b->n ? a->n : b->n;
    int c = m ? memcmp(a->p, b->p, m) : 0;
    if (c != 0) return c;
    return (a->n > b->n) - (a->n < b->n);
}

static void sift_down(stop_entry *e, size_t root, size_t n) {
    for (;;) {
        size_t child = 2 * root + 1;
        stop_entry t;
        if (child >= n) return;
        if (child + 1 < n && entry_cmp(&e[child], &e[child + 1]) < 0) child++;
        if (entry_cmp(&e[root], &e[child]) >= 0) return;
        t = e[root];
        e[root] = e[child];
        e[child] = t;
        root = child;
    }
}

/* Heapsort: O(n log n) worst case and no extra memory; the list is sorted
 * once per shingler. */
static void sort_entries(stop_entry *e, size_t n) {
    size_t i;
    if (n < 2) return;
    for (i = n / 2; i-- > 0;) sift_down(e, i, n);
    for (i = n - 1; i > 0; i--) {
        stop_entry t = e[0];
        e[0] = e[i];
        e[i] = t;
        sift_down(e, 0, i);
    }
}

static void table_insert(minlsh__stoplist *st, size_t off, size_t n) {
    size_t i = stop_hash(st->blob + off, n) & st->mask;
    while (st->slots[i] != 0) i = (i + 1) & st->mask;
    st->slots[i] = off + 1;
}

int minlsh__stoplist_build(minlsh__stoplist *st, const minlsh_allocator *a,
                           const char *text, size_t len) {
    const uint8_t *t = (const uint8_t *)text;
    uint8_t *low = NULL;
    stop_entry *e = NULL;
    size_t i, n = 0, m, blob_len = 0, nslots, bytes, off;
    int rc = MINLSH_E_NOMEM;

    memset(st, 0, sizeof *st);
    /* Count the usable entries: runs of non-space bytes made only of word
     * bytes (anything else could never equal a word of the text). */
    for (i = 0; i < len;) {
        size_t j = i;
        int ok = 1;
        if (is_space(t[i])) {
            i++;
            continue;
        }
        while (j < len && !is_space(t[j])) ok &= is_word_byte(t[j++]);
        n += (size_t)ok;
        i = j;
    }
    if (n == 0) return MINLSH_E_PARAM;

    low = (uint8_t *)minlsh__malloc(a, len);
    e = (stop_entry *)minlsh__calloc(a, n, sizeof *e);
    if (low == NULL || e == NULL) goto done;
    for (i = 0; i < len; i++) low[i] = lower(t[i]);
    for (i = 0, m = 0; i < len;) {
        size_t j = i;
        int ok = 1;
        if (is_space(t[i])) {
            i++;
            continue;
        }
        while (j < len && !is_space(t[j])) ok &= is_word_byte(t[j++]);
        if (ok) {
            e[m].p = low + i;
            e[m].n = j - i;
            m++;
        }
        i = j;
    }
    sort_entries(e, n);
    for (i = 0, m = 0; i < n; i++) { /* dedup in place */
        if (m > 0 && entry_cmp(&e[m - 1], &e[i]) == 0) continue;
        e[m++] = e[i];
    }
    n = m;
    for (i = 0; i < n; i++) {
        blob_len += e[i].n + 1; /* <= 2 * len: no overflow */
        if (e[i].n > st->max_len) st->max_len = e[i].n;
    }
    /* At most half full keeps probes short. */
    for (nslots = 16; nslots < 2 * n; nslots *= 2) {
        if (nslots > SIZE_MAX / 4) {
            rc = MINLSH_E_TOOBIG;
            goto done;
        }
    }
    if ((rc = minlsh__mul_size(&bytes, nslots, sizeof(size_t))) != 0) goto done;
    rc = MINLSH_E_NOMEM;
    st->blob = (uint8_t *)minlsh__malloc(a, blob_len);
    st->slots = (size_t *)minlsh__calloc(a, nslots, sizeof(size_t));
    if (st->blob == NULL || st->slots == NULL) goto done;
    st->blob_len = blob_len;
    st->count = n;
    st->mask = nslots - 1;
    for (i = 0, off = 0; i < n; i++) {
        memcpy(st->blob + off, e[i].p, e[i].n);
        st->blob[off + e[i].n] = 0;
        table_insert(st, off, e[i].n);
        off += e[i].n + 1;
    }
    rc = 0;
done:
    minlsh__free(a, low);
    minlsh__free(a, e);
    if (rc != 0) minlsh__stoplist_free(st, a);
    return rc;
}

int minlsh__stoplist_copy(minlsh__stoplist *dst, const minlsh__stoplist *src,
                          const minlsh_allocator *a) {
    *dst = *src;
    dst->blob = NULL;
    dst->slots = NULL;
    if (src->count == 0) return 0;
    dst->blob = (uint8_t *)minlsh__malloc(a, src->blob_len);
    dst->slots = (size_t *)minlsh__malloc(a, (src->mask + 1) * sizeof(size_t));
    if (dst->blob == NULL || dst->slots == NULL) {
        minlsh__stoplist_free(dst, a);
        return MINLSH_E_NOMEM;
    }
    memcpy(dst->blob, src->blob, src->blob_len);
    memcpy(dst->slots, src->slots, (src->mask + 1) * sizeof(size_t));
    return 0;
}

void minlsh__stoplist_free(minlsh__stoplist *st, const minlsh_allocator *a) {
    minlsh__free(a, st->blob);
    minlsh__free(a, st->slots);
    memset(st, 0, sizeof *st);
}

int minlsh__stoplist_has(const minlsh__stoplist *st, const uint8_t *w,
                         size_t n) {
    size_t i, j;
    if (n == 0 || n > st->max_len || st->count == 0) return 0;
    for (i = stop_hash(w, n) & st->mask; st->slots[i] != 0;
         i = (i + 1) & st->mask) {
        const uint8_t *s = st->blob + (st->slots[i] - 1);
        for (j = 0; j < n && s[j] == lower(w[j]); j++) {
        }
        /* Blob words hold no 0x00, so s[n] == 0 means equal lengths. */
        if (j == n && s[n] == 0) return 1;
    }
    return 0;
}
