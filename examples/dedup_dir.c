/*
 * dedup_dir: groups of near-duplicate files in a directory tree.
 *
 *   dedup_dir [-t THRESHOLD] PATH...
 *
 * PATHs are files or directories (walked recursively; links not followed).
 * The whole pipeline in one page: shingle every file (word 5-shingles, case
 * folded), sign it (128 MinHash values), insert it into a band index whose
 * (b, r) the planner chose for high recall at the threshold (default 0.8),
 * confirm each candidate pair with the exact Jaccard of the shingle sets, and
 * print the connected groups.
 *
 *   cc dedup_dir.c -o dedup_dir $(pkg-config --cflags --libs minlsh)
 */
#define _POSIX_C_SOURCE 200809L
#include <minlsh.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NUM_PERM 128

typedef struct {
    char **paths;
    minlsh_shingleset **sets;
    size_t n, cap;
} corpus;

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (f == NULL) return NULL;
    for (;;) {
        if (n == cap) {
            char *bigger;
            cap = cap ? cap * 2 : 65536;
            bigger = realloc(buf, cap);
            if (bigger == NULL) break;
            buf = bigger;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    *len = n;
    return buf != NULL ? buf : malloc(1);
}

/* Shingle one file and remember it. Unreadable files are reported and
 * skipped. */
static int add_file(corpus *c, const minlsh_shingler *sh, const char *path) {
    size_t len;
    char *text;
    int rc;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        char **p = realloc(c->paths, cap * sizeof *p);
        minlsh_shingleset **s;
        if (p == NULL) return -1;
        c->paths = p;
        s = realloc(c->sets, cap * sizeof *s);
        if (s == NULL) return -1;
        c->sets = s;
        c->cap = cap;
    }
    text = read_file(path, &len);
    if (text == NULL) {
        perror(path);
        return 0;
    }
    c->sets[c->n] = NULL;
    rc = minlsh_shingleset_new(&c->sets[c->n], NULL);
    if (rc == 0) rc = minlsh_shingler_hash(sh, text, len, c->sets[c->n], NULL);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "dedup_dir: %s: %s\n", path, minlsh_strerror(rc));
        minlsh_shingleset_free(c->sets[c->n]);
        return 0;
    }
    c->paths[c->n] = strdup(path);
    if (c->paths[c->n] == NULL) {
        minlsh_shingleset_free(c->sets[c->n]);
        return -1;
    }
    c->n++;
    return 0;
}

static int walk(corpus *c, const minlsh_shingler *sh, const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = 0;
    if (d == NULL) {
        perror(dir);
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
        if (lstat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) rc = walk(c, sh, path);
        else if (S_ISREG(st.st_mode)) rc = add_file(c, sh, path);
        if (rc != 0) break;
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv) {
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    minlsh_family *family = NULL;
    minlsh_index *index = NULL;
    minlsh_pairs *pairs = NULL;
    minlsh_clusters *groups = NULL;
    corpus c = {NULL, NULL, 0, 0};
    uint64_t *ea = NULL, *eb = NULL;
    uint32_t bands, rows, sig[NUM_PERM];
    size_t i, n_edges = 0;
    int rc = 0, status = 1;

    int arg = 1;
    po.mode = MINLSH_PLAN_RECALL; /* candidates are verified exactly below */
    po.k = NUM_PERM;
    po.threshold = 0.8;
    if (argc > 2 && strcmp(argv[1], "-t") == 0) {
        po.threshold = atof(argv[2]);
        arg = 3;
    }
    if (arg >= argc) {
        fprintf(stderr, "usage: dedup_dir [-t THRESHOLD] PATH...\n");
        return 2;
    }
    so.flags = MINLSH_NORM_CASEFOLD;

    if ((rc = minlsh_plan_compute(&bands, &rows, NULL, NULL, &po)) != 0 ||
        (rc = minlsh_shingler_new(&sh, &so, NULL)) != 0 ||
        (rc = minlsh_family_new(&family, NUM_PERM, 1, NULL)) != 0 ||
        (rc = minlsh_index_new(&index, family, 0, bands, rows, NULL)) != 0)
        goto done;

    for (; arg < argc; arg++) {
        struct stat st;
        if (stat(argv[arg], &st) != 0) {
            perror(argv[arg]);
        } else if (S_ISDIR(st.st_mode) ? walk(&c, sh, argv[arg]) != 0
                                       : add_file(&c, sh, argv[arg]) != 0) {
            rc = MINLSH_E_NOMEM;
            goto done;
        }
    }
    for (i = 0; i < c.n; i++) {
        rc = minlsh_family_sign(family, minlsh_shingleset_view_hashes(c.sets[i]),
                                minlsh_shingleset_count(c.sets[i]), sig, NUM_PERM, NULL);
        if (rc == 0) rc = minlsh_index_insert(index, i, sig, NUM_PERM);
        if (rc != 0) goto done;
    }

    /* Every candidate pair, confirmed with the exact Jaccard. */
    if ((rc = minlsh_pairs_from_index(&pairs, index, 0.0, 0, NULL)) != 0) goto done;
    ea = malloc((minlsh_pairs_count(pairs) + 1) * sizeof *ea);
    eb = malloc((minlsh_pairs_count(pairs) + 1) * sizeof *eb);
    if (ea == NULL || eb == NULL) goto done;
    for (i = 0; i < minlsh_pairs_count(pairs); i++) {
        uint64_t a, b;
        double j;
        minlsh_pairs_copy_pair(&a, &b, NULL, pairs, i);
        if (minlsh_shingleset_jaccard(&j, c.sets[a], c.sets[b]) == 0 && j >= po.threshold) {
            ea[n_edges] = a;
            eb[n_edges] = b;
            n_edges++;
        }
    }
    if ((rc = minlsh_clusters_from_edges(&groups, ea, eb, n_edges, NULL)) != 0) goto done;

    printf("%zu files, b = %u bands of r = %u rows, %zu candidate pairs, %zu confirmed\n",
           c.n, (unsigned)bands, (unsigned)rows, minlsh_pairs_count(pairs), n_edges);
    for (i = 0; i < minlsh_clusters_count(groups); i++) {
        uint64_t *members;
        size_t m, n_members = 0;
        /* Ask for the size first: a zero-capacity call reports it. */
        rc = minlsh_clusters_copy_members(groups, i, NULL, 0, &n_members);
        if (rc != MINLSH_E_BUFSIZE) goto done;
        members = malloc(n_members * sizeof *members);
        if (members == NULL) goto done;
        rc = minlsh_clusters_copy_members(groups, i, members, n_members, &n_members);
        if (rc != 0) {
            free(members);
            goto done;
        }
        printf("group %zu:\n", i + 1);
        for (m = 0; m < n_members; m++) printf("  %s\n", c.paths[members[m]]);
        free(members);
    }
    status = 0;
done:
    if (rc != 0) fprintf(stderr, "dedup_dir: %s\n", minlsh_strerror(rc));
    for (i = 0; i < c.n; i++) {
        free(c.paths[i]);
        minlsh_shingleset_free(c.sets[i]);
    }
    free(c.paths);
    free(c.sets);
    free(ea);
    free(eb);
    minlsh_clusters_free(groups);
    minlsh_pairs_free(pairs);
    minlsh_index_free(index);
    minlsh_family_free(family);
    minlsh_shingler_free(sh);
    return status;
}
