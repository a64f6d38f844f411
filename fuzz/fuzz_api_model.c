/*
 * Fuzz target: a random sequence of API operations on one band index and one
 * signature matrix, each checked against a naive reference model (arrays
 * and quadratic loops, nothing clever):
 *
 *   index: insert, remove, contains, get, query (with short buffers too),
 *          query_limited, ids, pairs, clusters, metadata, and save + load in
 *          mid-sequence;
 *   matrix: append, get, estimate, save + load, and its pairs and clusters
 *          (minlsh_pairs_from_matrix, minlsh_clusters_from_matrix) against
 *          the same model as an index's;
 *   clusters_from_edges on random edges, against a naive union-find.
 *
 * Signatures use a tiny alphabet and short k so that bands collide often;
 * ids come from a small range so that EXISTS and NOTFOUND are exercised.
 * Similarities are the library's own minlsh_signature_estimate (the
 * specification of an estimate); thresholds are chosen away from any j/k.
 */
#define MINLSH_EXPERIMENTAL_API 1 /* minlsh_index_query_limited */
#include "fuzz.h"

#define MK 12       /* largest k */
#define MDOCS 64    /* model capacity */
#define MOPS 256    /* operations per input */

typedef struct doc {
    uint64_t id;
    uint32_t sig[MK];
} doc;

typedef struct model {
    uint32_t k, bands, rows;
    doc d[MDOCS];
    size_t n;
    uint8_t meta[32];
    size_t meta_len;
} model;

static const double thresholds[] = {0.0, 0.05, 0.55, 0.95, 1.0};

static int find(const model *m, uint64_t id) {
    size_t i;
    for (i = 0; i < m->n; i++)
        if (m->d[i].id == id) return (int)i;
    return -1;
}

static int is_empty(const model *m, const uint32_t *s) {
    uint32_t v;
    for (v = 0; v < m->k; v++)
        if (s[v] != MINLSH_EMPTY_VALUE) return 0;
    return 1;
}

static int share_band(const model *m, const uint32_t *a, const uint32_t *b) {
    uint32_t j;
    if (is_empty(m, a) || is_empty(m, b)) return 0;
    for (j = 0; j < m->bands; j++)
        if (memcmp(a + j * m->rows, b + j * m->rows, 4 * (size_t)m->rows) == 0) return 1;
    return 0;
}

static double est(const model *m, const uint32_t *a, const uint32_t *b) {
    double e = -1;
    FUZZ_OK(minlsh_signature_estimate(&e, a, b, m->k));
    return e;
}

static void sorted_ids(const model *m, uint64_t *out) {
    size_t i, j;
    for (i = 0; i < m->n; i++) out[i] = m->d[i].id;
    for (i = 1; i < m->n; i++)
        for (j = i; j > 0 && out[j - 1] > out[j]; j--) {
            uint64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
}

typedef struct pair_sim {
    uint64_t a, b;
    double s;
} pair_sim;

static int cmp_pair(const void *x, const void *y) {
    const pair_sim *p = (const pair_sim *)x, *q = (const pair_sim *)y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return 0;
}

/* Pairs as (a, b) with a < b, sorted; returns the count. */
static size_t model_pairs(const model *m, double min_sim, uint64_t (*out)[2], double *sim) {
    size_t i, j, n = 0, x, y;
    for (i = 0; i < m->n; i++)
        for (j = i + 1; j < m->n; j++) {
            const doc *a = &m->d[i], *b = &m->d[j];
            double e;
            if (!share_band(m, a->sig, b->sig)) continue;
            e = est(m, a->sig, b->sig);
            if (e < min_sim) continue;
            out[n][0] = a->id < b->id ? a->id : b->id;
            out[n][1] = a->id < b->id ? b->id : a->id;
            sim[n++] = e;
        }
    {
        /* Sort the (a, b, similarity) triples by (a, b). */
        static pair_sim tmp[MDOCS * MDOCS / 2];
        for (x = 0; x < n; x++) {
            tmp[x].a = out[x][0];
            tmp[x].b = out[x][1];
            tmp[x].s = sim[x];
        }
        qsort(tmp, n, sizeof tmp[0], cmp_pair);
        for (y = 0; y < n; y++) {
            out[y][0] = tmp[y].a;
            out[y][1] = tmp[y].b;
            sim[y] = tmp[y].s;
        }
    }
    return n;
}

/* Naive components of an edge list over arbitrary ids: label[i] for node
 * ids[i]. Checks a clusters handle against them: same groups of >= 2,
 * members ascending, groups ordered by smallest member. */
static void check_clusters(const minlsh_clusters *cl, const uint64_t (*edges)[2], size_t ne) {
    /* At most MDOCS distinct ids appear in index pairs, 48 in edge lists. */
    uint64_t nodes[2 * MDOCS];
    size_t label[2 * MDOCS];
    static size_t ea[MDOCS * MDOCS / 2], eb[MDOCS * MDOCS / 2];
    size_t nn = 0, i, j, changed, g, ng = 0, prev_min_set = 0;
    uint64_t members[2 * MDOCS], prev_min = 0;
    for (i = 0; i < ne; i++) {
        for (j = 0; j < 2; j++) {
            size_t t;
            for (t = 0; t < nn && nodes[t] != edges[i][j]; t++) continue;
            if (t == nn) {
                nodes[nn] = edges[i][j];
                label[nn] = nn;
                nn++;
            }
            if (j == 0) ea[i] = t;
            else eb[i] = t;
        }
    }
    /* Relax labels to the smallest reachable index (naive fixed point). */
    do {
        changed = 0;
        for (i = 0; i < ne; i++) {
            size_t a = ea[i], b = eb[i], lo;
            if (a == b) continue;
            lo = label[a] < label[b] ? label[a] : label[b];
            if (label[a] != lo || label[b] != lo) {
                label[a] = label[b] = lo;
                changed = 1;
            }
        }
    } while (changed);
    for (i = 0; i < nn; i++) {
        size_t size = 0;
        for (j = 0; j < nn; j++) size += label[j] == label[i];
        if (label[i] == i && size >= 2) ng++;
    }
    FUZZ_CHECK(minlsh_clusters_count(cl) == ng);
    for (g = 0; g < ng; g++) {
        size_t cnt = 0, want = 0, lab = 0;
        FUZZ_CHECK(minlsh_clusters_copy_members(cl, g, NULL, 0, &cnt) == MINLSH_E_BUFSIZE);
        FUZZ_OK(minlsh_clusters_copy_members(cl, g, members, cnt, &cnt));
        FUZZ_CHECK(cnt >= 2);
        for (i = 1; i < cnt; i++) FUZZ_CHECK(members[i - 1] < members[i]);
        if (prev_min_set) FUZZ_CHECK(prev_min < members[0]);
        prev_min = members[0];
        prev_min_set = 1;
        for (i = 0; i < nn && nodes[i] != members[0]; i++) continue;
        FUZZ_CHECK(i < nn);
        lab = label[i];
        for (i = 0; i < nn; i++) want += label[i] == lab;
        FUZZ_CHECK(want == cnt);
        for (i = 0; i < cnt; i++) {
            for (j = 0; j < nn && nodes[j] != members[i]; j++) continue;
            FUZZ_CHECK(j < nn && label[j] == lab);
        }
    }
    FUZZ_CHECK(minlsh_clusters_copy_members(cl, ng, members, 1, NULL) == MINLSH_E_NOTFOUND);
}

static void make_sig(fuzz_in *in, const model *m, uint32_t alphabet, uint32_t *sig) {
    uint32_t v;
    uint8_t kind = fuzz_u8(in);
    for (v = 0; v < m->k; v++)
        sig[v] = (kind & 7) == 7 ? MINLSH_EMPTY_VALUE : fuzz_u8(in) % alphabet;
}

static uint64_t make_id(fuzz_in *in) {
    uint8_t b = fuzz_u8(in);
    return (b & 0xC0) == 0xC0 ? UINT64_MAX - (b & 3) : (uint64_t)(b & 31);
}

static void check_query(const minlsh_index *ix, const model *m, const uint32_t *sig,
                        size_t cap) {
    uint64_t got[MDOCS], want[MDOCS];
    double sim[MDOCS];
    size_t n = 0, nw = 0, i, j;
    int rc;
    uint64_t all[MDOCS];
    sorted_ids(m, all);
    for (i = 0; i < m->n; i++) {
        j = (size_t)find(m, all[i]);
        if (share_band(m, sig, m->d[j].sig)) want[nw++] = all[i];
    }
    rc = minlsh_index_query(ix, sig, m->k, got, sim, cap, &n);
    if (cap < nw) {
        FUZZ_CHECK(rc == MINLSH_E_BUFSIZE && n == nw);
        return;
    }
    FUZZ_OK(rc);
    FUZZ_CHECK(n == nw);
    for (i = 0; i < n; i++) {
        FUZZ_CHECK(got[i] == want[i]);
        FUZZ_CHECK(sim[i] == est(m, sig, m->d[find(m, got[i])].sig));
    }
}

/* query_limited: bands are taken in order while the bucket members
 * collected (a document counted once per band it shares) stay within max;
 * the result is the candidates of the bands taken. */
static void check_query_limited(const minlsh_index *ix, const model *m, const uint32_t *sig,
                                uint64_t max) {
    uint64_t got[MDOCS], all[MDOCS], want[MDOCS];
    double sim[MDOCS];
    size_t n = 0, nw = 0, i, total = 0;
    uint32_t j, taken = 0, searched = 12345;
    int in[MDOCS] = {0};
    sorted_ids(m, all);
    FUZZ_OK(minlsh_index_query_limited(ix, sig, m->k, max, got, sim, MDOCS, &n, &searched));
    if (is_empty(m, sig)) {
        FUZZ_CHECK(n == 0 && searched == m->bands);
        return;
    }
    for (j = 0; j < m->bands; j++) {
        size_t size = 0;
        for (i = 0; i < m->n; i++) {
            const uint32_t *d = m->d[find(m, all[i])].sig;
            size += !is_empty(m, d) &&
                    memcmp(d + j * m->rows, sig + j * m->rows, 4 * (size_t)m->rows) == 0;
        }
        if (max != 0 && total + size > max) break;
        total += size;
        for (i = 0; i < m->n; i++) {
            const uint32_t *d = m->d[find(m, all[i])].sig;
            if (!is_empty(m, d) &&
                memcmp(d + j * m->rows, sig + j * m->rows, 4 * (size_t)m->rows) == 0)
                in[i] = 1;
        }
        taken = j + 1;
    }
    for (i = 0; i < m->n; i++)
        if (in[i]) want[nw++] = all[i];
    FUZZ_CHECK(searched == taken);
    FUZZ_CHECK(n == nw);
    for (i = 0; i < n; i++) {
        FUZZ_CHECK(got[i] == want[i]);
        FUZZ_CHECK(sim[i] == est(m, sig, m->d[find(m, got[i])].sig));
    }
}

static void check_index(const minlsh_index *ix, const model *m) {
    uint64_t ids[MDOCS], want[MDOCS];
    size_t n = 0;
    FUZZ_CHECK(minlsh_index_count(ix) == m->n);
    FUZZ_CHECK(minlsh_index_k(ix) == m->k && minlsh_index_bands(ix) == m->bands &&
               minlsh_index_rows(ix) == m->rows);
    FUZZ_OK(minlsh_index_copy_ids(ix, ids, MDOCS, &n));
    FUZZ_CHECK(n == m->n);
    sorted_ids(m, want);
    FUZZ_CHECK(n == 0 || memcmp(ids, want, n * sizeof *ids) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static model m; /* large: off the stack */
    static uint64_t pairs_buf[MDOCS * MDOCS / 2][2];
    static double sims[MDOCS * MDOCS / 2];
    fuzz_in in = {data, size};
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    minlsh_sigmatrix *mx = NULL;
    uint32_t mxsig[MDOCS][MK];
    size_t mxn = 0, op;
    uint32_t alphabet, sig[MK];
    uint64_t seed, config_id;
    int rc;

    memset(&m, 0, sizeof m);
    m.k = fuzz_range(&in, 1, MK);
    m.bands = fuzz_range(&in, 1, m.k);
    m.rows = fuzz_range(&in, 1, m.k / m.bands);
    alphabet = fuzz_range(&in, 1, 4);
    seed = fuzz_u8(&in);
    config_id = fuzz_u8(&in);
    FUZZ_OK(minlsh_family_new(&fam, m.k, seed, NULL));
    FUZZ_OK(minlsh_index_new(&ix, fam, config_id, m.bands, m.rows, NULL));
    FUZZ_OK(minlsh_sigmatrix_new(&mx, fam, config_id, NULL));

    for (op = 0; op < MOPS && in.n > 0; op++) {
        uint8_t what = fuzz_u8(&in) % 15;
        uint64_t id;
        int at;
        switch (what) {
        case 0:
        case 1: /* insert (twice as likely) */
            id = make_id(&in);
            make_sig(&in, &m, alphabet, sig);
            at = find(&m, id);
            rc = minlsh_index_insert(ix, id, sig, m.k);
            if (at >= 0 || m.n == MDOCS) {
                if (at >= 0) FUZZ_CHECK(rc == MINLSH_E_EXISTS);
                else if (rc == 0) FUZZ_OK(minlsh_index_remove(ix, id)); /* model full */
            } else {
                FUZZ_OK(rc);
                m.d[m.n].id = id;
                memcpy(m.d[m.n].sig, sig, sizeof sig);
                m.n++;
            }
            /* A wrong length is refused and changes nothing. */
            if (m.k > 1) FUZZ_CHECK(minlsh_index_insert(ix, 99, sig, m.k - 1) == MINLSH_E_PARAM);
            break;
        case 2: /* remove */
            id = make_id(&in);
            at = find(&m, id);
            rc = minlsh_index_remove(ix, id);
            if (at < 0) {
                FUZZ_CHECK(rc == MINLSH_E_NOTFOUND);
            } else {
                FUZZ_OK(rc);
                m.d[at] = m.d[m.n - 1];
                m.n--;
            }
            break;
        case 3: { /* contains and get */
            uint32_t got[MK];
            size_t kn = 0;
            id = make_id(&in);
            at = find(&m, id);
            FUZZ_CHECK(minlsh_index_contains(ix, id) == (at >= 0));
            rc = minlsh_index_copy_signature(ix, id, got, MK, &kn);
            if (at < 0) {
                FUZZ_CHECK(rc == MINLSH_E_NOTFOUND);
            } else {
                FUZZ_OK(rc);
                FUZZ_CHECK(kn == m.k && memcmp(got, m.d[at].sig, 4 * (size_t)m.k) == 0);
            }
            break;
        }
        case 4: /* query with a fresh or a stored signature */
            if ((fuzz_u8(&in) & 1) && m.n > 0)
                memcpy(sig, m.d[fuzz_u8(&in) % m.n].sig, sizeof sig);
            else
                make_sig(&in, &m, alphabet, sig);
            check_query(ix, &m, sig, (fuzz_u8(&in) & 3) == 0 ? fuzz_u8(&in) % 4 : MDOCS);
            break;
        case 5:
            check_index(ix, &m);
            break;
        case 6: { /* pairs */
            minlsh_pairs *p = NULL;
            double t = thresholds[fuzz_u8(&in) % 5];
            size_t np = model_pairs(&m, t, pairs_buf, sims), i;
            FUZZ_OK(minlsh_pairs_from_index(&p, ix, t, 0, NULL));
            FUZZ_CHECK(minlsh_pairs_count(p) == np);
            for (i = 0; i < np; i++) {
                uint64_t a, b;
                double s;
                FUZZ_OK(minlsh_pairs_copy_pair(&a, &b, &s, p, i));
                FUZZ_CHECK(a == pairs_buf[i][0] && b == pairs_buf[i][1] && s == sims[i]);
            }
            FUZZ_CHECK(minlsh_pairs_copy_pair(NULL, NULL, NULL, p, np) == MINLSH_E_NOTFOUND);
            minlsh_pairs_free(p);
            break;
        }
        case 7: { /* clusters of the pairs */
            minlsh_clusters *cl = NULL;
            double t = thresholds[fuzz_u8(&in) % 5];
            size_t np = model_pairs(&m, t, pairs_buf, sims);
            FUZZ_OK(minlsh_clusters_from_index(&cl, ix, t, NULL));
            check_clusters(cl, (const uint64_t(*)[2])pairs_buf, np);
            minlsh_clusters_free(cl);
            break;
        }
        case 8: { /* save and load the index in mid-sequence */
            minlsh_index *ix2 = NULL;
            size_t len = 0;
            uint8_t *buf;
            FUZZ_CHECK(minlsh_index_save_buffer(ix, NULL, 0, &len) == MINLSH_E_BUFSIZE);
            buf = (uint8_t *)malloc(len);
            FUZZ_CHECK(buf != NULL);
            FUZZ_OK(minlsh_index_save_buffer(ix, buf, len, NULL));
            FUZZ_OK(minlsh_index_load_buffer(&ix2, buf, len, LOAD_OPTS(fam, config_id, NULL)));
            free(buf);
            minlsh_index_free(ix);
            ix = ix2;
            check_index(ix, &m);
            break;
        }
        case 9: { /* metadata */
            uint8_t got[32];
            size_t n = 0, len = fuzz_u8(&in) % 33, i;
            for (i = 0; i < len; i++) m.meta[i] = fuzz_u8(&in);
            FUZZ_OK(minlsh_index_set_metadata(ix, m.meta, len));
            m.meta_len = len;
            FUZZ_OK(minlsh_index_copy_metadata(ix, got, sizeof got, &n));
            FUZZ_CHECK(n == len && memcmp(got, m.meta, len) == 0);
            break;
        }
        case 10: /* matrix append and read back */
            if (mxn == MDOCS) break;
            make_sig(&in, &m, alphabet, mxsig[mxn]);
            {
                uint64_t pos = 0;
                FUZZ_OK(minlsh_sigmatrix_append(mx, mxsig[mxn], m.k, &pos));
                FUZZ_CHECK(pos == mxn);
            }
            mxn++;
            break;
        case 11: { /* matrix reads, save and load */
            uint32_t got[MK];
            size_t i, len = 0;
            uint8_t *buf;
            minlsh_sigmatrix *mx2 = NULL;
            FUZZ_CHECK(minlsh_sigmatrix_count(mx) == mxn);
            for (i = 0; i < mxn; i++) {
                double e = -1;
                FUZZ_OK(minlsh_sigmatrix_copy_column(mx, i, got, MK, NULL));
                FUZZ_CHECK(memcmp(got, mxsig[i], 4 * (size_t)m.k) == 0);
                FUZZ_OK(minlsh_sigmatrix_estimate(&e, mx, i, mxn - 1 - i));
                FUZZ_CHECK(e == est(&m, mxsig[i], mxsig[mxn - 1 - i]));
            }
            FUZZ_CHECK(minlsh_sigmatrix_copy_column(mx, mxn, got, MK, NULL) == MINLSH_E_NOTFOUND);
            {
                /* Its pairs and clusters, as an index of column i under id i. */
                static model mm;
                minlsh_pairs *p = NULL;
                minlsh_clusters *cl = NULL;
                double t = thresholds[fuzz_u8(&in) % 5];
                size_t np, j;
                memset(&mm, 0, sizeof mm);
                mm.k = m.k;
                mm.bands = m.bands;
                mm.rows = m.rows;
                for (j = 0; j < mxn; j++) {
                    mm.d[j].id = j;
                    memcpy(mm.d[j].sig, mxsig[j], sizeof mxsig[j]);
                }
                mm.n = mxn;
                np = model_pairs(&mm, t, pairs_buf, sims);
                FUZZ_OK(minlsh_pairs_from_matrix(&p, mx, m.bands, m.rows, t, 0, NULL));
                FUZZ_CHECK(minlsh_pairs_count(p) == np);
                for (j = 0; j < np; j++) {
                    uint64_t a, b;
                    double sv;
                    FUZZ_OK(minlsh_pairs_copy_pair(&a, &b, &sv, p, j));
                    FUZZ_CHECK(a == pairs_buf[j][0] && b == pairs_buf[j][1] && sv == sims[j]);
                }
                minlsh_pairs_free(p);
                p = NULL;
                if (np > 1) /* max_pairs 0 means no limit */
                    FUZZ_CHECK(minlsh_pairs_from_matrix(&p, mx, m.bands, m.rows, t, np - 1,
                                                        NULL) == MINLSH_E_TOOBIG && p == NULL);
                FUZZ_OK(minlsh_clusters_from_matrix(&cl, mx, m.bands, m.rows, t, NULL));
                check_clusters(cl, (const uint64_t(*)[2])pairs_buf, np);
                minlsh_clusters_free(cl);
            }
            FUZZ_CHECK(minlsh_sigmatrix_save_buffer(mx, NULL, 0, &len) == MINLSH_E_BUFSIZE);
            buf = (uint8_t *)malloc(len);
            FUZZ_CHECK(buf != NULL);
            FUZZ_OK(minlsh_sigmatrix_save_buffer(mx, buf, len, NULL));
            FUZZ_OK(minlsh_sigmatrix_load_buffer(&mx2, buf, len, LOAD_OPTS(fam, config_id, NULL)));
            free(buf);
            minlsh_sigmatrix_free(mx);
            mx = mx2;
            break;
        }
        case 12: { /* clusters of arbitrary edges */
            uint64_t a[24], b[24];
            static uint64_t edges[24][2];
            size_t ne = fuzz_u8(&in) % 25, i;
            minlsh_clusters *cl = NULL;
            for (i = 0; i < ne; i++) {
                edges[i][0] = a[i] = make_id(&in);
                edges[i][1] = b[i] = make_id(&in);
            }
            FUZZ_OK(minlsh_clusters_from_edges(&cl, a, b, ne, NULL));
            check_clusters(cl, (const uint64_t(*)[2])edges, ne);
            minlsh_clusters_free(cl);
            break;
        }
        case 13: /* query with a bound on the work */
            if ((fuzz_u8(&in) & 1) && m.n > 0)
                memcpy(sig, m.d[fuzz_u8(&in) % m.n].sig, sizeof sig);
            else
                make_sig(&in, &m, alphabet, sig);
            check_query_limited(ix, &m, sig, fuzz_u8(&in) % 10);
            break;
        default: /* query every stored signature */
            {
                size_t i;
                for (i = 0; i < m.n && i < 8; i++) check_query(ix, &m, m.d[i].sig, MDOCS);
            }
            break;
        }
    }
    check_index(ix, &m);
    minlsh_sigmatrix_free(mx);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
    return 0;
}
