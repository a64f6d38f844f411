/*
 * dedup.c: minlsh dedup. The whole pipeline on a batch of documents:
 *
 *  1. read and shingle every document (in parallel);
 *  2. group documents with equal 128-bit fingerprints: exact duplicates,
 *     similarity 1.0, never banded; the first of each group represents it
 *     and only its shingle set is kept, in one arena;
 *  3. sign the representatives (in parallel, batch by batch, as they are
 *     read) into a signature matrix (row = representative number);
 *  4. find the candidate pairs with the library's sort-based path over that
 *     matrix (minlsh_pairs_from_matrix: the pairs a band index would give,
 *     without building one), and verify each: exact Jaccard of the shingle
 *     sets (or the signature estimate with --verify signature) against the
 *     threshold;
 *  5. expand: a verified pair of representatives stands for every pair of
 *     members of their groups; clusters are the connected components of
 *     the verified pairs plus the exact-duplicate groups.
 * Documents are numbered in input order, and every output is sorted by those
 * numbers, so the output is the same for any number of threads.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

const char cli_help_dedup[] =
    "Usage: minlsh dedup [OPTIONS] PATH...\n"
    "\n"
    "Find near-duplicate documents. Each file under PATH (directories are\n"
    "walked; '-' is standard input) is one document, or with --jsonl each line\n"
    "of it is. Exact duplicates are found by fingerprint; the others through\n"
    "MinHash and LSH banding, every candidate confirmed with its exact Jaccard\n"
    "similarity. Prints the groups of near-duplicates (or the pairs).\n"
    "\n"
    "Input:\n"
    "      --jsonl             read each file as JSON Lines, one document per line\n"
    "      --id-field NAME     the id field of a JSON Lines record (default: id)\n"
    "      --text-field NAME   the text field of a JSON Lines record (default: text)\n"
    "Shingling:\n"
    "      --shingle UNIT      word:N, char:N, codepoint:N or stopword[:N]\n"
    "                          (default: word:5)\n"
    "      --lowercase         fold ASCII upper case to lower case\n"
    "      --strip-punct       delete ASCII punctuation\n"
    "      --collapse-space    collapse runs of spaces\n"
    "      --normalize         all three of the above\n"
    "      --html              ignore markup, comments, scripts and styles;\n"
    "                          decode entities\n"
    "      --key HEX           SipHash key: 32 hex digits (default: the library's)\n"
    "Similarity:\n"
    "      --threshold T       Jaccard similarity threshold (default: 0.8)\n"
    "      --num-perm K        MinHash values per signature (default: 128)\n"
    "      --bands B           LSH bands; --rows R rows per band\n"
    "                          (default: planned for recall 0.99 at T)\n"
    "      --seed N            MinHash family seed (default: 1)\n"
    "      --verify MODE       exact: confirm candidates with the exact Jaccard of\n"
    "                          their shingle sets (default); signature: with the\n"
    "                          MinHash estimate (less memory, approximate)\n"
    "Output:\n"
    "      --output WHAT       clusters (default) or pairs\n"
    "      --format FMT        text (default), tsv or jsonl\n"
    "Run:\n"
    "      --threads N         worker threads (default: the number of CPUs)\n"
    "      --progress          show progress even if stderr is not a terminal\n"
    "  -q, --quiet             no progress line and no summary\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 if all went well, 1 if some input failed, 2 for usage errors.\n";

typedef struct dedup_doc {
    size_t group;          /* index of the exact-duplicate group (= rep number) */
    size_t set_off, set_n; /* in the arena; representatives only */
} dedup_doc;

typedef struct fp_slot {
    uint8_t fp[MINLSH_FINGERPRINT_BYTES];
    size_t group_plus1; /* 0: free */
} fp_slot;

typedef struct dedup {
    const cli_opts *o;
    name_table names;
    dedup_doc *docs;
    size_t n_docs, cap_docs;
    uint64_t *arena;
    size_t arena_n, arena_cap;
    fp_slot *fps;
    size_t fp_mask;
    size_t *reps; /* group -> its first document */
    size_t n_reps, cap_reps;
    size_t n_signed; /* representatives handed over with their signature */
    uint32_t k;
    minlsh_sigmatrix *sigs; /* column g: the signature of group g */
    size_t *members, *member_off; /* group g: members[member_off[g] ..] */
} dedup;

/* A candidate pair of representatives (document numbers). */
typedef struct candidate {
    uint64_t a, b;
    double similarity, estimate;
    int verified;
} candidate;

/* A reported pair of documents. */
typedef struct doc_pair {
    size_t a, b;
    double similarity, estimate;
} doc_pair;

/* ---- step 1 and 2: collecting documents --------------------------------- */

static uint64_t fp_hash(const uint8_t *fp) {
    uint64_t h = 0;
    int i;
    for (i = 0; i < 8; i++) h |= (uint64_t)fp[i] << (8 * i);
    return h;
}

static void fp_grow(dedup *D) {
    size_t size = D->fp_mask ? (D->fp_mask + 1) * 2 : 1024, i;
    fp_slot *old = D->fps;
    size_t old_size = D->fp_mask ? D->fp_mask + 1 : 0;
    D->fps = xcalloc(size, sizeof *D->fps);
    D->fp_mask = size - 1;
    for (i = 0; i < old_size; i++) {
        size_t s;
        if (old[i].group_plus1 == 0) continue;
        s = (size_t)fp_hash(old[i].fp) & D->fp_mask;
        while (D->fps[s].group_plus1 != 0) s = (s + 1) & D->fp_mask;
        D->fps[s] = old[i];
    }
    free(old);
}

/* The group of fp, or a new group (number n_reps) if it is new. */
static size_t fp_group(dedup *D, const uint8_t *fp) {
    size_t s;
    if (D->fp_mask == 0 || (D->n_reps + 1) * 2 > D->fp_mask + 1) fp_grow(D);
    s = (size_t)fp_hash(fp) & D->fp_mask;
    while (D->fps[s].group_plus1 != 0) {
        if (memcmp(D->fps[s].fp, fp, MINLSH_FINGERPRINT_BYTES) == 0)
            return D->fps[s].group_plus1 - 1;
        s = (s + 1) & D->fp_mask;
    }
    memcpy(D->fps[s].fp, fp, MINLSH_FINGERPRINT_BYTES);
    D->fps[s].group_plus1 = D->n_reps + 1;
    return D->n_reps;
}

static void report_duplicate_name(const doc_view *d) {
    if (d->name.json)
        cli_input_error(d->where, d->line, "duplicate id %.*s, skipped",
                        (int)(d->name.n > 200 ? 200 : d->name.n), d->name.s);
    else
        cli_input_error(d->where, 0, "listed more than once, skipped");
}

/* Number the document and find its group; select it (for signing) if it
 * starts a new group. */
static int dedup_select(void *ctx, const doc_view *d) {
    dedup *D = ctx;
    size_t num, group;
    void *v;
    if (!names_add(&D->names, d->name.s, d->name.n, d->name.json, NULL)) {
        report_duplicate_name(d);
        return 0;
    }
    num = D->names.n - 1;
    v = D->docs;
    xgrow(&v, &D->cap_docs, num + 1, sizeof *D->docs);
    D->docs = v;
    D->n_docs = num + 1;
    group = fp_group(D, d->fp);
    D->docs[num].group = group;
    D->docs[num].set_off = D->docs[num].set_n = 0;
    if (group < D->n_reps) return 0; /* an exact duplicate */
    v = D->reps;
    xgrow(&v, &D->cap_reps, D->n_reps + 1, sizeof *D->reps);
    D->reps = v;
    D->reps[D->n_reps++] = num;
    return 1;
}

/* A representative, in the order dedup_select chose them: keep its
 * signature, and its set if exact verification needs it. */
static int dedup_on_doc(void *ctx, const doc_view *d) {
    dedup *D = ctx;
    size_t g = D->n_signed++;
    dedup_doc *doc = &D->docs[D->reps[g]];
    void *v;
    int rc;
    if (D->o->verify == VERIFY_EXACT) {
        v = D->arena;
        xgrow(&v, &D->arena_cap, D->arena_n + d->set_n, sizeof *D->arena);
        D->arena = v;
        memcpy(D->arena + D->arena_n, d->set, d->set_n * sizeof *d->set);
        doc->set_off = D->arena_n;
        doc->set_n = d->set_n;
        D->arena_n += d->set_n;
    }
    if ((rc = minlsh_sigmatrix_append(D->sigs, d->sig, D->k, NULL)) != 0)
        cli_die_lib("signatures", rc);
    return 0;
}

/* The members of every group, in document order (counting sort). */
static void build_groups(dedup *D) {
    size_t g, i;
    D->member_off = xcalloc(D->n_reps + 1, sizeof *D->member_off);
    D->members = xcalloc(D->n_docs, sizeof *D->members);
    for (i = 0; i < D->n_docs; i++) D->member_off[D->docs[i].group + 1]++;
    for (g = 0; g < D->n_reps; g++) D->member_off[g + 1] += D->member_off[g];
    {
        size_t *fill = xcalloc(D->n_reps + 1, sizeof *fill);
        for (i = 0; i < D->n_docs; i++) {
            g = D->docs[i].group;
            D->members[D->member_off[g] + fill[g]++] = i;
        }
        free(fill);
    }
}

static size_t group_size(const dedup *D, size_t g) {
    return D->member_off[g + 1] - D->member_off[g];
}

/* ---- step 3 and 4: banding, verifying ------------------------------------ */

typedef struct verify_ctx {
    const dedup *D;
    const minlsh_pairs *pairs;
    candidate *cand;
    int exact;
    double threshold;
} verify_ctx;

static int verify_range(void *ctx, unsigned worker, size_t begin, size_t end) {
    verify_ctx *c = ctx;
    size_t i;
    (void)worker;
    for (i = begin; i < end; i++) {
        candidate *cd = &c->cand[i];
        int rc = minlsh_pairs_copy_pair(&cd->a, &cd->b, &cd->estimate, c->pairs, i);
        if (rc != 0) return rc;
        /* Matrix positions to document numbers. */
        cd->a = c->D->reps[cd->a];
        cd->b = c->D->reps[cd->b];
        cd->similarity = cd->estimate;
        if (c->exact) {
            const dedup_doc *x = &c->D->docs[cd->a], *y = &c->D->docs[cd->b];
            rc = minlsh_jaccard_sorted(&cd->similarity, c->D->arena + x->set_off,
                                       x->set_n, c->D->arena + y->set_off, y->set_n);
            if (rc != 0) return rc;
        }
        cd->verified = cd->similarity >= c->threshold;
    }
    return 0;
}

/* Band the representatives and verify the candidates. Returns the candidate
 * array (count in *n_cand). The candidates come from the sort-based path
 * over the matrix of representatives (the same pairs as a band index would
 * give, in sequential passes); its positions are mapped back to document
 * numbers, which keeps the order since reps[] ascends. */
static candidate *find_candidates(dedup *D, uint32_t bands, uint32_t rows, minlsh__pool *pool,
                                  size_t *n_cand) {
    verify_ctx vc;
    minlsh_pairs *pairs = NULL;
    candidate *cand;
    size_t n;
    int rc;
    if ((rc = minlsh_pairs_from_matrix(&pairs, D->sigs, bands, rows, 0.0, 0, NULL)) != 0)
        cli_die_lib("candidate pairs", rc);
    n = minlsh_pairs_count(pairs);
    cand = xcalloc(n ? n : 1, sizeof *cand);
    vc.D = D;
    vc.pairs = pairs;
    vc.cand = cand;
    vc.exact = D->o->verify == VERIFY_EXACT;
    vc.threshold = D->o->threshold;
    if ((rc = minlsh__pool_run(pool, n, 256, verify_range, &vc)) != 0)
        cli_die_lib("verification", rc);
    minlsh_pairs_free(pairs);
    *n_cand = n;
    return cand;
}

/* ---- step 5: output ----------------------------------------------------- */

static int cmp_doc_pair(const void *x, const void *y) {
    const doc_pair *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    return 0;
}

static void push_pair(doc_pair **v, size_t *n, size_t *cap, size_t a, size_t b,
                      double sim, double est) {
    void *p = *v;
    xgrow(&p, cap, *n + 1, sizeof **v);
    *v = p;
    (*v)[*n].a = a < b ? a : b;
    (*v)[*n].b = a < b ? b : a;
    (*v)[*n].similarity = sim;
    (*v)[*n].estimate = est;
    (*n)++;
}

/* Every reported document pair, sorted. */
static doc_pair *expand_pairs(const dedup *D, const candidate *cand, size_t n_cand,
                              size_t *n_out) {
    doc_pair *v = NULL;
    size_t n = 0, cap = 0, g, i, x, y;
    for (g = 0; g < D->n_reps; g++) {
        const size_t *m = D->members + D->member_off[g];
        size_t s = group_size(D, g);
        for (x = 0; x < s; x++)
            for (y = x + 1; y < s; y++) push_pair(&v, &n, &cap, m[x], m[y], 1.0, 1.0);
    }
    for (i = 0; i < n_cand; i++) {
        size_t ga, gb;
        if (!cand[i].verified) continue;
        ga = D->docs[cand[i].a].group;
        gb = D->docs[cand[i].b].group;
        for (x = D->member_off[ga]; x < D->member_off[ga + 1]; x++)
            for (y = D->member_off[gb]; y < D->member_off[gb + 1]; y++)
                push_pair(&v, &n, &cap, D->members[x], D->members[y],
                          cand[i].similarity, cand[i].estimate);
    }
    if (n > 1) qsort(v, n, sizeof *v, cmp_doc_pair);
    *n_out = n;
    return v;
}

static void print_pairs(const dedup *D, const doc_pair *v, size_t n) {
    const cli_opts *o = D->o;
    int with_est = o->verify == VERIFY_EXACT;
    size_t i;
    out_pairs_header(stdout, o->format, with_est);
    for (i = 0; i < n; i++)
        out_pair(stdout, o->format, names_get(&D->names, v[i].a),
                 names_get(&D->names, v[i].b), v[i].similarity, v[i].estimate,
                 with_est);
}

/* Clusters: components of the verified edges plus each group's members
 * joined to the group's first document. Returns the number of clusters. */
static size_t print_clusters(const dedup *D, const candidate *cand, size_t n_cand) {
    uint64_t *ea = xcalloc(n_cand + D->n_docs + 1, sizeof *ea);
    uint64_t *eb = xcalloc(n_cand + D->n_docs + 1, sizeof *eb);
    uint64_t *ids = NULL;
    cli_name *names = NULL;
    minlsh_clusters *cl = NULL;
    size_t n = 0, i, c, count, cap = 0, got;
    int rc;
    for (i = 0; i < n_cand; i++)
        if (cand[i].verified) {
            ea[n] = cand[i].a;
            eb[n++] = cand[i].b;
        }
    for (i = 0; i < D->n_docs; i++)
        if (D->reps[D->docs[i].group] != i) {
            ea[n] = i;
            eb[n++] = D->reps[D->docs[i].group];
        }
    if ((rc = minlsh_clusters_from_edges(&cl, ea, eb, n, NULL)) != 0)
        cli_die_lib("clusters", rc);
    free(ea);
    free(eb);
    count = minlsh_clusters_count(cl);
    out_clusters_header(stdout, D->o->format);
    for (c = 0; c < count; c++) {
        rc = minlsh_clusters_copy_members(cl, c, ids, cap, &got);
        if (rc == MINLSH_E_BUFSIZE) {
            void *v = ids;
            xgrow(&v, &cap, got, sizeof *ids);
            ids = v;
            names = xreallocarray(names, cap, sizeof *names);
            rc = minlsh_clusters_copy_members(cl, c, ids, cap, &got);
        }
        if (rc != 0) cli_die_lib("clusters", rc);
        for (i = 0; i < got; i++) names[i] = names_get(&D->names, (size_t)ids[i]);
        out_cluster(stdout, D->o->format, c + 1, names, got);
    }
    free(ids);
    free(names);
    minlsh_clusters_free(cl);
    return count;
}

/* ---- the command -------------------------------------------------------- */

typedef struct run_info {
    uint32_t k, bands, rows;
    const char *plan;
    pipeline_stats st;
    double start;
} run_info;

static void summary(const dedup *D, const run_info *ri, size_t n_cand,
                    size_t n_verified, size_t n_out, const char *what) {
    double secs = cli_now() - ri->start, mb = (double)ri->st.bytes / 1e6;
    size_t g, groups = 0;
    for (g = 0; g < D->n_reps; g++) groups += group_size(D, g) > 1;
    cli_msg("%zu document%s, %.1f MB in %.2f s (%.1f MB/s); k=%u, b=%u, r=%u (%s), "
            "threshold %g, verify %s",
            D->n_docs, cli_plural(D->n_docs), mb, secs, secs > 0 ? mb / secs : 0.0,
            (unsigned)ri->k, (unsigned)ri->bands, (unsigned)ri->rows, ri->plan,
            D->o->threshold, D->o->verify == VERIFY_EXACT ? "exact" : "signature");
    cli_msg("%zu exact-duplicate group%s; %zu candidate pair%s, %zu verified; %zu %s%s",
            groups, cli_plural(groups), n_cand, cli_plural(n_cand), n_verified, n_out,
            what, cli_plural(n_out));
}

/* Print the pairs or the clusters, then the summary. */
static void report(const dedup *D, const run_info *ri, const candidate *cand,
                   size_t n_cand) {
    size_t i, n_verified = 0, n_out;
    for (i = 0; i < n_cand; i++) n_verified += cand[i].verified != 0;
    if (D->o->output == OUTPUT_PAIRS) {
        doc_pair *pairs = expand_pairs(D, cand, n_cand, &n_out);
        print_pairs(D, pairs, n_out);
        free(pairs);
    } else
        n_out = print_clusters(D, cand, n_cand);
    if (D->o->quiet) return;
    fflush(stdout);
    summary(D, ri, n_cand, n_verified, n_out,
            D->o->output == OUTPUT_PAIRS ? "pair" : "cluster");
}

static void dedup_free(dedup *D) {
    names_free(&D->names);
    free(D->docs);
    free(D->arena);
    free(D->fps);
    free(D->reps);
    minlsh_sigmatrix_free(D->sigs);
    free(D->members);
    free(D->member_off);
}

int cmd_dedup(cli_opts *o) {
    minlsh_shingler *sh;
    minlsh_family *family;
    uint64_t config_id = 0;
    pipeline_cfg cfg;
    dedup D;
    run_info ri;
    candidate *cand;
    size_t n_cand;
    int rc;
    memset(&D, 0, sizeof D);
    D.o = o;
    D.k = ri.k = o->num_perm;
    ri.start = cli_now();
    if ((rc = opts_plan(o, "dedup", o->verify == VERIFY_EXACT, &ri.bands, &ri.rows,
                        &ri.plan)) != 0)
        return rc;
    sh = cli_shingler_new(o->unit, o->shingle_k, o->flags, o->key, &config_id);
    family = cli_family_new(o->num_perm, o->seed);
    if ((rc = minlsh_sigmatrix_new(&D.sigs, family, config_id, NULL)) != 0)
        cli_die_lib("signatures", rc);
    memset(&cfg, 0, sizeof cfg);
    cfg.o = o;
    cfg.shingler = sh;
    cfg.family = family;
    cfg.pool = cli_pool_new(o->threads);
    cfg.select = dedup_select;
    cfg.on_doc = dedup_on_doc;
    cfg.ctx = &D;
    pipeline_run_paths(&cfg, o->args, o->n_args, "dedup:", &ri.st);
    build_groups(&D);
    cand = find_candidates(&D, ri.bands, ri.rows, cfg.pool, &n_cand);
    report(&D, &ri, cand, n_cand);
    free(cand);
    dedup_free(&D);
    minlsh__pool_free(cfg.pool);
    minlsh_family_free(family);
    minlsh_shingler_free(sh);
    return cli_finish_stdout(cli_input_failures() ? CLI_FAILED : CLI_OK);
}
