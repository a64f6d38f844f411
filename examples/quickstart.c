/*
 * quickstart: the README's example, kept compiling and running by the tests.
 *
 *   cc quickstart.c -o quickstart $(pkg-config --cflags --libs minlsh)
 */
#include <minlsh.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    const char *a = "the quick brown fox jumps over the lazy dog near the river bank today";
    const char *b = "the quick brown fox jumps over the lazy dog near the river bank again";
    minlsh_shingler *sh;          /* word 5-shingles, default key */
    minlsh_family *family;        /* 128 hash functions, seed 1 */
    uint32_t sa[128], sb[128];
    double estimate;

    if (minlsh_shingler_new(&sh, NULL, NULL) != 0) return 1;
    if (minlsh_family_new(&family, 128, 1, NULL) != 0) return 1;
    minlsh_family_sign_text(family, sh, a, strlen(a), sa, 128, NULL);
    minlsh_family_sign_text(family, sh, b, strlen(b), sb, 128, NULL);
    minlsh_signature_estimate(&estimate, sa, sb, 128);
    printf("estimated Jaccard: %.2f\n", estimate); /* the exact value is 9/11 = 0.82 */
    minlsh_family_free(family);
    minlsh_shingler_free(sh);
    return 0;
}
