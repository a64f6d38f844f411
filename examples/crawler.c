/*
 * crawler: the dedup step of a web crawler, with a persistent index.
 *
 *   crawler INDEX PAGE...
 *
 * Each page is read in 4 KiB chunks, as it would arrive from the network,
 * and streamed through the shingler; no page is ever held whole. One call,
 * minlsh_index_insert_novel, looks its signature up in the band index and
 * inserts it unless an indexed page's estimated similarity reaches the
 * threshold: a near-duplicate ("dup", with the match), or new ("new"). The
 * index is loaded from INDEX at start (if it exists; a corrupt file is an
 * error, not a reason to start over) and saved atomically at exit, so a
 * crash never leaves a half-written index; INDEX.lock is held from the load
 * to the save, so several crawlers can share INDEX. A crawler that runs for
 * long, or in several processes at once, wants examples/crawler_store.c:
 * the store journals each page instead of saving the whole index.
 *
 *   cc crawler.c -o crawler $(pkg-config --cflags --libs minlsh)
 */
#define MINLSH_EXPERIMENTAL_API /* minlsh_index_insert_novel, minlsh_filelock */
#include <minlsh.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define NUM_PERM 128
#define SEED 1
#define THRESHOLD 0.8
#define CHUNK 4096

/* Stream one page through the shingler and sign it. The page's id is the
 * first 8 bytes of its fingerprint: the same content always gets the same
 * id. */
static int sign_page(const char *path, minlsh_shinglestream *stream,
                     minlsh_shingleset *set, const minlsh_family *family,
                     uint32_t sig[NUM_PERM], uint64_t *id) {
    unsigned char chunk[CHUNK], fp[MINLSH_FINGERPRINT_BYTES];
    FILE *f = fopen(path, "rb");
    size_t n;
    int rc = 0, i;
    if (f == NULL) return MINLSH_E_IO;
    while (rc == 0 && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        rc = minlsh_shinglestream_feed(stream, chunk, n);
    if (rc == 0 && ferror(f)) rc = MINLSH_E_IO;
    fclose(f);
    if (rc != 0) {
        minlsh_shinglestream_reset(stream);
        return rc;
    }
    if ((rc = minlsh_shinglestream_finish(stream, set, fp)) != 0) return rc;
    *id = 0;
    for (i = 7; i >= 0; i--) *id = (*id << 8) | fp[i];
    return minlsh_family_sign(family, minlsh_shingleset_view_hashes(set),
                              minlsh_shingleset_count(set), sig, NUM_PERM, NULL);
}

int main(int argc, char **argv) {
    /* The current defaults (Unicode-aware words); NULL would mean 0.1's. */
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    minlsh_novel_options novel = MINLSH_NOVEL_OPTIONS_INIT;
    minlsh_filelock *lock = NULL;
    minlsh_shingler *sh = NULL;
    minlsh_shinglestream *stream = NULL;
    minlsh_shingleset *set = NULL;
    minlsh_family *family = NULL;
    minlsh_index *index = NULL;
    uint64_t config_id = 0;
    uint32_t bands, rows;
    int i, rc, status = 1;

    if (argc < 3) {
        fprintf(stderr, "usage: crawler INDEX PAGE...\n");
        return 2;
    }
    po.k = NUM_PERM;
    po.threshold = THRESHOLD;
    if ((rc = minlsh_shingler_new(&sh, &so, NULL)) != 0 ||
        (rc = minlsh_shingler_config_id(&config_id, sh)) != 0 ||
        (rc = minlsh_shinglestream_new(&stream, sh, NULL)) != 0 ||
        (rc = minlsh_shingleset_new(&set, NULL)) != 0 ||
        (rc = minlsh_family_new(&family, NUM_PERM, SEED, NULL)) != 0 ||
        (rc = minlsh_plan_compute(&bands, &rows, NULL, NULL, &po)) != 0)
        goto done;

    /* Other crawlers may share INDEX: hold its lock (INDEX.lock) from the
     * load to the save, so that no page another one saved is lost. */
    if ((rc = minlsh_filelock_new(&lock, argv[1], MINLSH_LOCK_EXCLUSIVE,
                                  MINLSH_LOCK_WAIT_FOREVER, NULL)) != 0) {
        fprintf(stderr, "crawler: %s.lock: %s\n", argv[1], minlsh_strerror(rc));
        rc = 0;
        goto done;
    }
    /* The family and config id make the load refuse an index built with
     * other parameters or another shingling key. */
    {
        FILE *probe = fopen(argv[1], "rb");
        if (probe == NULL && errno == ENOENT) {
            rc = minlsh_index_new(&index, family, config_id, bands, rows, NULL);
        } else {
            if (probe != NULL) fclose(probe);
            minlsh_load_options opts = MINLSH_LOAD_OPTIONS_INIT;
            opts.family = family;
            opts.config_id = config_id;
            rc = minlsh_index_load(&index, argv[1], &opts);
        }
    }
    if (rc == 0 && minlsh_index_count(index) > 0) {
        fprintf(stderr, "crawler: %s: %" PRIu64 " pages known\n", argv[1],
                minlsh_index_count(index));
    }
    if (rc != 0) {
        fprintf(stderr, "crawler: %s: %s\n", argv[1], minlsh_strerror(rc));
        rc = 0; /* reported, with the file name */
        goto done;
    }

    novel.threshold = THRESHOLD;
    for (i = 2; i < argc; i++) {
        uint32_t sig[NUM_PERM];
        uint64_t id;
        minlsh_novel_result res;
        rc = sign_page(argv[i], stream, set, family, sig, &id);
        if (rc != 0) {
            fprintf(stderr, "crawler: %s: %s\n", argv[i], minlsh_strerror(rc));
            continue; /* one bad page does not stop the crawl */
        }
        /* Same content, same id: an exact copy is known by its id alone. */
        if (minlsh_index_contains(index, id) == 1) {
            printf("dup %s = %016" PRIx64 "\n", argv[i], id);
            continue;
        }
        /* Query, verify at the threshold and insert when novel, in one
         * call: the decision and the best match come back. */
        rc = minlsh_index_insert_novel(&res, index, id, sig, NUM_PERM, &novel);
        if (rc != 0) goto done;
        if (res.novel)
            printf("new %s %016" PRIx64 "\n", argv[i], id);
        else
            printf("dup %s ~ %016" PRIx64 " (%.2f)\n", argv[i], res.match, res.similarity);
    }
    if ((rc = minlsh_index_save(index, argv[1])) != 0) {
        fprintf(stderr, "crawler: saving %s: %s\n", argv[1], minlsh_strerror(rc));
        goto done;
    }
    status = 0;
done:
    if (status != 0 && rc != 0) fprintf(stderr, "crawler: %s\n", minlsh_strerror(rc));
    minlsh_filelock_free(lock); /* after the save */
    minlsh_index_free(index);
    minlsh_family_free(family);
    minlsh_shingleset_free(set);
    minlsh_shinglestream_free(stream);
    minlsh_shingler_free(sh);
    return status;
}
