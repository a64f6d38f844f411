/*
 * bench/recall.c: recall of gen_docs's planted pairs (bench/recall.h).
 *
 *   minlsh dedup --jsonl -q --output decisions --format tsv DOCS |
 *       recall TRUTH [--threshold T]
 *
 * reads the decisions on standard input as they come (constant memory, so
 * it can sit at the end of a pipeline of any length) and prints
 *   recall: 0.999800 (4732 of 4733 planted pairs with Jaccard >= 0.80)
 *   below_threshold_joined: 2 of 1232
 *   exact_copies_found: 1000 of 1000
 *   documents: 100000
 * Exit status 1 if the inputs do not match (a decision missing or out of
 * order, a bad line).
 */
#include "recall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    recall_check rc;
    char line[4096];
    double t = 0.8;
    const char *truth = NULL;
    int a;
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--threshold") == 0 && a + 1 < argc) t = atof(argv[++a]);
        else if (argv[a][0] != '-' && truth == NULL) truth = argv[a];
        else truth = NULL, a = argc;
    }
    if (truth == NULL) {
        fprintf(stderr, "usage: recall TRUTH [--threshold T] < decisions.tsv\n");
        return 2;
    }
    if (recall_open(&rc, truth, t) != 0) {
        fprintf(stderr, "recall: %s\n", rc.error);
        return 1;
    }
    while (fgets(line, sizeof line, stdin) != NULL) {
        if (recall_line(&rc, line) != 0) break;
    }
    if (rc.error[0] != '\0' || recall_finish(&rc) != 0) {
        fprintf(stderr, "recall: %s\n", rc.error);
        recall_close(&rc);
        return 1;
    }
    printf("recall: %.6f (%llu of %llu planted pairs with Jaccard >= %.2f)\n", recall_value(&rc),
           (unsigned long long)rc.at_found, (unsigned long long)rc.at, t);
    printf("below_threshold_joined: %llu of %llu\n", (unsigned long long)rc.below_found,
           (unsigned long long)rc.below);
    printf("exact_copies_found: %llu of %llu\n", (unsigned long long)rc.exact_found,
           (unsigned long long)rc.exact_n);
    printf("documents: %llu\n", (unsigned long long)rc.docs);
    recall_close(&rc);
    return 0;
}
