/*
 * similarity: how alike are two files?
 *
 *   similarity FILE1 FILE2
 *
 * Prints the exact Jaccard similarity of the two files' word 5-shingle sets
 * and the MinHash estimate from 128-value signatures. The estimate's standard
 * error is sqrt(J(1-J)/128), at most about 0.044.
 *
 * Build against an installed minlsh:
 *   cc similarity.c -o similarity $(pkg-config --cflags --libs minlsh)
 */
#include <minlsh.h>

#include <stdio.h>
#include <stdlib.h>

#define NUM_PERM 128

/* Read a whole file into a malloc'd buffer. */
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
    if (ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf != NULL ? buf : malloc(1);
}

static int fail(const char *what, int rc) {
    fprintf(stderr, "similarity: %s: %s\n", what, minlsh_strerror(rc));
    return 1;
}

int main(int argc, char **argv) {
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *shingler = NULL;
    minlsh_shingleset *sets[2] = {NULL, NULL};
    minlsh_family *family = NULL;
    uint32_t sigs[2][NUM_PERM];
    double exact, estimate;
    int i, rc, status = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: similarity FILE1 FILE2\n");
        return 2;
    }
    /* Defaults: word 5-shingles, each CJK or Thai character a word, the
     * default key. (NULL options would be minlsh 0.1's: no flag at all.) */
    if ((rc = minlsh_shingler_new(&shingler, &so, NULL)) != 0) return fail("shingler", rc);
    if ((rc = minlsh_family_new(&family, NUM_PERM, 1, NULL)) != 0) {
        status = fail("family", rc);
        goto done;
    }
    for (i = 0; i < 2; i++) {
        size_t len;
        char *text = read_file(argv[1 + i], &len);
        if (text == NULL) {
            perror(argv[1 + i]);
            goto done;
        }
        rc = minlsh_shingleset_new(&sets[i], NULL);
        if (rc == 0) rc = minlsh_shingler_hash(shingler, text, len, sets[i], NULL);
        free(text);
        if (rc != 0) {
            status = fail(argv[1 + i], rc);
            goto done;
        }
        rc = minlsh_family_sign(family, minlsh_shingleset_view_hashes(sets[i]),
                                minlsh_shingleset_count(sets[i]), sigs[i], NUM_PERM, NULL);
        if (rc != 0) {
            status = fail("sign", rc);
            goto done;
        }
    }
    if ((rc = minlsh_shingleset_jaccard(&exact, sets[0], sets[1])) != 0 ||
        (rc = minlsh_signature_estimate(&estimate, sigs[0], sigs[1], NUM_PERM)) != 0) {
        status = fail("jaccard", rc);
        goto done;
    }
    printf("shingles: %zu and %zu\n", minlsh_shingleset_count(sets[0]),
           minlsh_shingleset_count(sets[1]));
    printf("exact: %.4f\n", exact);
    printf("estimate: %.4f (k = %d)\n", estimate, NUM_PERM);
    status = 0;
done:
    minlsh_shingleset_free(sets[0]);
    minlsh_shingleset_free(sets[1]);
    minlsh_family_free(family);
    minlsh_shingler_free(shingler);
    return status;
}
