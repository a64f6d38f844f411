/*
 * crawler_store.c: the dedup step of a crawler on a store. Run as many
 * copies at once as you like on one store: each page is streamed through
 * the store's shingler (HTML stripped), checked against every page any
 * worker committed, and remembered if it is new. Pages are committed 16 at
 * a time (one fdatasync each time); a worker killed at any moment loses
 * only its uncommitted pages, which were never reported as seen.
 *
 *   cc -std=c11 crawler_store.c -o crawler_store $(pkg-config --cflags --libs minlsh)
 *   ./crawler_store seen.store page1.html page2.html ...
 *
 * Prints one line per page: "new ID NAME", or "dup NAME of MATCH (SIMILARITY)".
 */
#define MINLSH_EXPERIMENTAL_API /* the store: experimental until 0.2.0 */
#include <minlsh.h>

#include <stdio.h>
#include <string.h>

#define BATCH 16

/* Stream a file through the store's shingler into set. */
static int shingle_file(minlsh_shinglestream *st, const char *path, minlsh_shingleset *set) {
    char buf[16384];
    size_t n;
    int rc = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return MINLSH_E_IO;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, f)) > 0) rc = minlsh_shinglestream_feed(st, buf, n);
    if (ferror(f) && rc == 0) rc = MINLSH_E_IO;
    fclose(f);
    if (rc == 0) rc = minlsh_shinglestream_finish(st, set, NULL);
    else (void)minlsh_shinglestream_reset(st);
    return rc;
}

int main(int argc, char **argv) {
    minlsh_store_options opts = MINLSH_STORE_OPTIONS_INIT;
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_store *store = NULL;
    minlsh_shinglestream *st = NULL;
    minlsh_shingleset *set = NULL;
    int i, rc, in_batch = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s STORE [PAGE...]\n", argv[0]);
        return 2;
    }
    /* Used only if the store does not exist yet; a worker that opens an
     * existing one gets all of this from the file. */
    so.flags |= MINLSH_NORM_HTML | MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE;
    opts.flags = MINLSH_STORE_CREATE | MINLSH_STORE_SETS; /* exact decisions */
    opts.shingler = &so;
    opts.threshold = 0.8;
    rc = minlsh_store_open(&store, argv[1], &opts);
    if (rc == 0) rc = minlsh_shinglestream_new(&st, minlsh_store_view_shingler(store), NULL);
    if (rc == 0) rc = minlsh_shingleset_new(&set, NULL);
    for (i = 2; rc == 0 && i < argc; i++) {
        minlsh_store_result r;
        char match[4096];
        size_t n;
        if ((rc = shingle_file(st, argv[i], set)) != 0) { /* outside the lock */
            fprintf(stderr, "%s: %s\n", argv[i], minlsh_strerror(rc));
            rc = 0;
            continue;
        }
        if (!in_batch && (rc = minlsh_store_begin(store)) != 0) break;
        in_batch++;
        rc = minlsh_store_add_set(&r, store, set, argv[i], strlen(argv[i]), 0);
        if (rc == MINLSH_E_EXISTS) { /* crawled before, under this name */
            printf("seen %s\n", argv[i]);
            rc = 0;
        } else if (rc == 0 && r.inserted) {
            printf("new %llu %s\n", (unsigned long long)r.id, argv[i]);
        } else if (rc == 0) {
            if (minlsh_store_copy_name(store, r.match, match, sizeof match - 1, &n) != 0) n = 0;
            match[n] = '\0';
            printf("dup %s of %s (%.3f%s)\n", argv[i], match, r.similarity, r.exact ? "" : ", estimated");
        }
        if (rc == 0 && (in_batch == BATCH || i + 1 == argc)) {
            rc = minlsh_store_commit(store); /* from here the batch survives kill -9 */
            in_batch = 0;
            if (rc == 0 && minlsh_store_compact_due(store) == 1) {
                rc = minlsh_store_compact(store); /* other workers keep adding meanwhile */
                if (rc == MINLSH_E_BUSY) rc = 0;   /* another worker is compacting */
            }
        }
    }
    if (rc == 0 && in_batch > 0) rc = minlsh_store_commit(store);
    if (rc != 0) fprintf(stderr, "%s: %s\n", argv[1], minlsh_strerror(rc));
    minlsh_shingleset_free(set);
    minlsh_shinglestream_free(st);
    minlsh_store_free(store); /* an open batch is dropped: it was never committed */
    return rc == 0 ? 0 : 1;
}
