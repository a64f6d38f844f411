/*
 * Sorted runs of (key, document) records and their k-way merges. A run is
 * kept in memory or appended to a temporary file, packed; a merge reads the
 * records of many runs in (key, document) order, of a key range if asked,
 * through a tournament tree of losers, a block at a time from a file. The
 * band, fingerprint and candidate runs all go through here.
 *
 * Memory: a merge of k runs holds k cursors and tree entries and a block
 * per file run (up to MINLSH__DEDUP_BLOCK records, fewer under a budget).
 * Time: storing a run is linear; a merge makes log2(k) comparisons per
 * record, and a binary search per run to find where a key range starts.
 */
#include "dedup.h"

/* ---- storing runs -------------------------------------------------------------- */

static int minlsh__dedup_run_push(const minlsh_dedup *d, minlsh__dedup_runs *rs,
                                  minlsh__dedup_run r) {
    void *p = rs->r;
    int rc = minlsh__reserve(&d->alloc, &p, &rs->cap, rs->n, rs->n + 1, sizeof *rs->r);
    rs->r = (minlsh__dedup_run *)p;
    if (rc != 0) return rc;
    rs->r[rs->n++] = r;
    return 0;
}

/* In files every record's value is a document number below 2^32: a record
 * takes 12 bytes there instead of 16 (packed in place, front to back, and
 * unpacked back to front). */
#define MINLSH__DEDUP_PACKED 12

static void minlsh__dedup_pack(minlsh__kv *v, size_t n) {
    uint8_t *out = (uint8_t *)v;
    size_t i;
    for (i = 0; i < n; i++) {
        uint64_t key = v[i].key;
        uint32_t val = (uint32_t)v[i].val;
        memcpy(out + i * MINLSH__DEDUP_PACKED, &key, 8);
        memcpy(out + i * MINLSH__DEDUP_PACKED + 8, &val, 4);
    }
}

static void minlsh__dedup_unpack(minlsh__kv *v, size_t n) {
    const uint8_t *in = (const uint8_t *)v;
    size_t i;
    for (i = n; i-- > 0;) {
        uint64_t key;
        uint32_t val;
        memcpy(&key, in + i * MINLSH__DEDUP_PACKED, 8);
        memcpy(&val, in + i * MINLSH__DEDUP_PACKED + 8, 4);
        v[i].key = key;
        v[i].val = val;
    }
}

/* A sorted run: kept in memory (v is taken over) or, with in_file, written
 * to f (v is freed). */
int minlsh__dedup_run_store(minlsh_dedup *d, minlsh__tmpfile *f, int in_file,
                            minlsh__dedup_runs *rs, minlsh__kv *v, size_t n) {
    minlsh__dedup_run r;
    int rc;
    r.v = NULL;
    r.off = 0;
    r.n = n;
    if (n == 0) {
        minlsh__free(&d->alloc, v);
        return 0;
    }
    if (in_file) {
        minlsh__dedup_pack(v, n);
        rc = minlsh__tmpfile_append(f, v, n * MINLSH__DEDUP_PACKED, &r.off);
        minlsh__free(&d->alloc, v);
        if (rc != 0) return rc;
    } else {
        r.v = v;
    }
    rc = minlsh__dedup_run_push(d, rs, r);
    if (rc != 0) minlsh__free(&d->alloc, r.v);
    return rc;
}

void minlsh__dedup_runs_free(minlsh_dedup *d, minlsh__dedup_runs *rs) {
    size_t j;
    for (j = 0; j < rs->n; j++) minlsh__free(&d->alloc, rs->r[j].v);
    minlsh__free(&d->alloc, rs->r);
    rs->r = NULL;
    rs->n = rs->cap = 0;
}

/* ---- merging sorted runs ------------------------------------------------------- */

/* Records a merge by ranges of keys gathers at once, about. */
#define MINLSH__DEDUP_GATHER 4096

/* Records read at once from a file run: at most this many, fewer when a
 * budget shared among many runs says so, at least the minimum. */
#define MINLSH__DEDUP_BLOCK 4096
#define MINLSH__DEDUP_BLOCK_MIN 64

/* Where an exhausted cursor points: above every record (a record's value
 * is a document number below 2^32). */
static const minlsh__kv minlsh__dedup_end = {UINT64_MAX, UINT64_MAX};

/* Load the next block of c; 0 with c->left 0 at the end. */
static int minlsh__dedup_cursor_load(const minlsh__dedup_merge *m, minlsh__dedup_cursor *c) {
    uint64_t n = c->end - c->next;
    int rc;
    if (c->run->v != NULL) { /* in memory: one block */
        c->at = n > 0 ? c->run->v + c->next : &minlsh__dedup_end;
        c->left = (size_t)n;
        c->next = c->end;
        return 0;
    }
    if (n > m->block) n = m->block;
    c->at = n > 0 ? c->block : &minlsh__dedup_end;
    c->left = (size_t)n;
    if (n == 0) return 0;
    c->next += n;
    rc = minlsh__tmpfile_read(m->f, c->run->off + (c->next - n) * MINLSH__DEDUP_PACKED, c->block,
                              (size_t)n * MINLSH__DEDUP_PACKED);
    if (rc == 0) minlsh__dedup_unpack(c->block, (size_t)n);
    return rc;
}

/* The winner of the subtree at node, its matches' losers stored. Equal
 * records are the same bytes, so which run gives one first changes
 * nothing. */
static minlsh__dedup_entry minlsh__dedup_tree_build(minlsh__dedup_merge *m, size_t node) {
    minlsh__dedup_entry x, y;
    if (node >= m->k) {
        x.cursor = node - m->k;
        x.rec = *m->c[x.cursor].at;
        return x;
    }
    x = minlsh__dedup_tree_build(m, 2 * node);
    y = minlsh__dedup_tree_build(m, 2 * node + 1);
    if (minlsh__dedup_kv_less(&y.rec, &x.rec)) {
        m->tree[node] = x;
        return y;
    }
    m->tree[node] = y;
    return x;
}

void minlsh__dedup_merge_free(minlsh__dedup_merge *m, size_t n_runs) {
    size_t i;
    if (m->c != NULL)
        for (i = 0; i < n_runs; i++) minlsh__free(&m->d->alloc, m->c[i].block);
    minlsh__free(&m->d->alloc, m->c);
    minlsh__free(&m->d->alloc, m->tree);
    minlsh__free(&m->d->alloc, m->sorted);
    minlsh__free(&m->d->alloc, m->gathered);
    minlsh__free(&m->d->alloc, m->hist);
}

/* The key of record i of a run. */
static int minlsh__dedup_run_key(const minlsh__tmpfile *f, const minlsh__dedup_run *r, uint64_t i,
                                 uint64_t *key) {
    if (r->v != NULL) {
        *key = r->v[i].key;
        return 0;
    }
    return minlsh__tmpfile_read(f, r->off + i * MINLSH__DEDUP_PACKED, key, sizeof *key);
}

/* The first record of a run whose key is at least key (the run's length
 * if none). */
static int minlsh__dedup_run_seek(const minlsh__tmpfile *f, const minlsh__dedup_run *r,
                                  uint64_t key, uint64_t *at) {
    uint64_t lo = 0, hi = r->n, k;
    int rc;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((rc = minlsh__dedup_run_key(f, r, mid, &k)) != 0) return rc;
        if (k < key) lo = mid + 1;
        else hi = mid;
    }
    *at = lo;
    return 0;
}

/* A merge of the records of the runs whose keys are in [lo, hi), or from
 * lo on when whole_tail is set. */
int minlsh__dedup_merge_init(minlsh__dedup_merge *m, const minlsh_dedup *d,
                             const minlsh__tmpfile *f, const minlsh__dedup_run *runs, size_t n_runs,
                             uint64_t lo, uint64_t hi, int whole_tail, unsigned flags) {
    const minlsh_allocator *a = &d->alloc;
    size_t i, in_file = 0;
    uint64_t records = 0;
    int rc = 0;
    memset(m, 0, sizeof *m);
    m->d = d;
    m->f = f;
    m->k = n_runs;
    /* A worker holds up to two merges at once (candidates, and those
     * verified already): the blocks of one take an eighth of a sixteenth
     * of the budget per worker, down to the minimum per run. */
    for (i = 0; i < n_runs; i++) in_file += runs[i].v == NULL;
    m->block = MINLSH__DEDUP_BLOCK;
    if (d->opts.memory != 0 && in_file > 0) {
        uint64_t most = minlsh__dedup_share(d, 1) / 8 / minlsh__pool_size(d->pool) /
                        (in_file * sizeof(minlsh__kv));
        if (most < m->block)
            m->block = most > MINLSH__DEDUP_BLOCK_MIN ? (size_t)most : MINLSH__DEDUP_BLOCK_MIN;
    }
    m->c = (minlsh__dedup_cursor *)minlsh__calloc(a, n_runs + 1, sizeof *m->c);
    m->tree = (minlsh__dedup_entry *)minlsh__calloc(a, n_runs + 1, sizeof *m->tree);
    if (m->c == NULL || m->tree == NULL) rc = MINLSH_E_NOMEM;
    for (i = 0; i < n_runs && rc == 0; i++) {
        minlsh__dedup_cursor *c = &m->c[i];
        c->run = &runs[i];
        c->end = runs[i].n;
        if (lo != 0) rc = minlsh__dedup_run_seek(f, &runs[i], lo, &c->next);
        if (rc == 0 && !whole_tail) rc = minlsh__dedup_run_seek(f, &runs[i], hi, &c->end);
        if (rc == 0 && runs[i].v == NULL && c->next < c->end) {
            c->block = (minlsh__kv *)minlsh__malloc(a, m->block * sizeof *c->block);
            if (c->block == NULL) rc = MINLSH_E_NOMEM;
        }
        if (rc == 0) rc = minlsh__dedup_cursor_load(m, c);
        records += c->left;
    }
    if (rc == 0 && (flags & MINLSH__DEDUP_MERGE_HASHED) && in_file == 0 && n_runs > 1) {
        /* Ranges of 2^width_bits keys, so that about MINLSH__DEDUP_GATHER
         * records fall in each: the span's bits, less those of the records
         * per range. */
        unsigned span_bits = 64, record_bits = 0;
        uint64_t span = hi - lo;
        if (!whole_tail || lo != 0) {
            if (whole_tail) span = 0 - lo;
            for (span_bits = 0; span_bits < 64 && (span >> span_bits) > 1; span_bits++) {
            }
        }
        while (record_bits < 64 && (records >> record_bits) > MINLSH__DEDUP_GATHER) record_bits++;
        m->ranges = 1;
        m->shared = (flags & MINLSH__DEDUP_MERGE_SHARED) != 0;
        m->width_bits = span_bits > record_bits ? span_bits - record_bits : 0;
        m->lo = lo;
        m->hi = hi;
        m->to_end = whole_tail;
    }
    if (rc == 0 && n_runs > 0 && !m->ranges) m->tree[0] = minlsh__dedup_tree_build(m, 1);
    if (rc != 0) minlsh__dedup_merge_free(m, n_runs);
    return rc;
}

/* Merges split by key into parts that workers take one at a time: part p
 * of n covers keys [p * span, (p + 1) * span), the last one the rest. */
size_t minlsh__dedup_parts(minlsh_dedup *d) {
    unsigned w = minlsh__pool_size(minlsh__dedup_pool(d));
    return w > 1 ? (size_t)w * 8 : 1;
}

int minlsh__dedup_merge_part(minlsh__dedup_merge *m, const minlsh_dedup *d,
                             const minlsh__tmpfile *f, const minlsh__dedup_run *runs, size_t n_runs,
                             uint64_t span, size_t part, size_t parts, unsigned flags) {
    return minlsh__dedup_merge_init(m, d, f, runs, n_runs, span * part, span * (part + 1),
                                    part + 1 == parts, flags);
}

/* The next range of keys with records, gathered from the runs and sorted
 * into m->sorted; 0 when none is left, or a negative error. */
static int minlsh__dedup_merge_range(minlsh__dedup_merge *m) {
    const minlsh_allocator *a = &m->d->alloc;
    while (!m->done) {
        uint64_t lo = m->lo, end = lo + ((uint64_t)1 << (m->width_bits & 63));
        size_t j, n = 0;
        /* The last range: the one that reaches hi, or the end of the keys. */
        int last = m->width_bits == 64 || end <= lo || (!m->to_end && end >= m->hi);
        for (j = 0; j < m->k; j++) {
            const minlsh__dedup_cursor *c = &m->c[j];
            size_t t = c->left;
            if (!last)
                for (t = 0; t < c->left && c->at[t].key < end; t++) {
                }
            n += t;
        }
        if (n > m->cap) {
            minlsh__kv *x = (minlsh__kv *)minlsh__malloc(a, n * sizeof *x);
            minlsh__kv *y = (minlsh__kv *)minlsh__malloc(a, n * sizeof *y);
            if (x == NULL || y == NULL) {
                minlsh__free(a, x);
                minlsh__free(a, y);
                return MINLSH_E_NOMEM;
            }
            minlsh__free(a, m->sorted);
            minlsh__free(a, m->gathered);
            m->sorted = x;
            m->gathered = y;
            m->cap = n;
        }
        if (minlsh__sort_kv_spread_hist(n, m->width_bits) > m->cap_hist) {
            size_t want = minlsh__sort_kv_spread_hist(n, m->width_bits);
            uint32_t *h = (uint32_t *)minlsh__malloc(a, want * sizeof *h);
            if (h == NULL) return MINLSH_E_NOMEM;
            minlsh__free(a, m->hist);
            m->hist = h;
            m->cap_hist = want;
        }
        for (j = 0, n = 0; j < m->k; j++) {
            minlsh__dedup_cursor *c = &m->c[j];
            size_t t = c->left;
            if (!last)
                for (t = 0; t < c->left && c->at[t].key < end; t++) {
                }
            if (t > 0) memcpy(m->gathered + n, c->at, t * sizeof *c->at);
            n += t;
            c->at += t;
            c->left -= t;
        }
        if (last) m->done = 1;
        else m->lo = end;
        if (m->shared)
            n = minlsh__sort_kv_spread_shared(m->sorted, m->gathered, n, m->hist, lo,
                                              m->width_bits);
        else minlsh__sort_kv_spread(m->sorted, m->gathered, n, m->hist, lo, m->width_bits);
        if (n == 0) continue;
        m->n_sorted = n;
        m->at_sorted = 0;
        return 1;
    }
    return 0;
}

/* The least record left into *out; 1 if there was one, 0 at the end, or a
 * negative error. */
int minlsh__dedup_merge_next(minlsh__dedup_merge *m, minlsh__kv *out) {
    minlsh__dedup_cursor *c;
    minlsh__dedup_entry w;
    size_t node;
    int rc;
    if (m->ranges) {
        if (m->at_sorted == m->n_sorted && (rc = minlsh__dedup_merge_range(m)) <= 0) return rc;
        *out = m->sorted[m->at_sorted++];
        return 1;
    }
    if (m->k == 0) return 0;
    w = m->tree[0];
    c = &m->c[w.cursor];
    if (c->at == &minlsh__dedup_end) return 0; /* the least is the end: all are */
    *out = w.rec;
    c->at++;
    if (--c->left == 0 && (rc = minlsh__dedup_cursor_load(m, c)) != 0) return rc;
    w.rec = *c->at;
    for (node = (w.cursor + m->k) / 2; node > 0; node /= 2)
        if (minlsh__dedup_kv_less(&m->tree[node].rec, &w.rec)) {
            minlsh__dedup_entry t = m->tree[node];
            m->tree[node] = w;
            w = t;
        }
    m->tree[0] = w;
    return 1;
}
