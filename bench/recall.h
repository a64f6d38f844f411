/*
 * bench/recall.h: recall of gen_docs's planted pairs, from the decisions of
 * minlsh dedup, streaming, in constant memory.
 *
 * Input: the truth file of bench/gen_docs (DUP, SOURCE, JACCARD, KIND per
 * line, in order of DUP) and the output of
 *   minlsh dedup --jsonl --output decisions --format tsv
 * on the same documents (one row per document, in input order; the ids
 * gen_docs writes are the input positions 0, 1, 2, ...). A planted pair
 * counts as found when both documents are in one cluster: the same
 * cluster number, not 0 (0 is "in no cluster"). With the default
 * --group components that is also "the dropped one points to its
 * source's cluster's kept document".
 *
 * A source is at most gen_docs's --window documents before its duplicate,
 * so the cluster numbers of the last RECALL_RING documents are all that is
 * kept (a source farther back is reported as an error, not skipped).
 * Pairs are counted separately at or above the threshold (those minlsh
 * must find: recall) and below it (found only through others), and
 * exact copies on their own.
 */
#ifndef MINLSH_BENCH_RECALL_H
#define MINLSH_BENCH_RECALL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECALL_RING ((uint64_t)1 << 16)

typedef struct recall_check {
    FILE *truth;
    double threshold;
    uint64_t *cluster; /* RECALL_RING slots, by id */
    uint64_t next_id;  /* the id the next decision must have */
    int have_pair;     /* the pair below has been read and not used */
    uint64_t dup, src;
    double jac;
    int exact;
    /* counts */
    uint64_t at, at_found, below, below_found, exact_n, exact_found, docs;
    char error[160];
} recall_check;

/* Reads the next planted pair into rc (have_pair = 0 at the end). */
static int recall__next_pair(recall_check *rc) {
    char line[256];
    rc->have_pair = 0;
    while (fgets(line, sizeof line, rc->truth) != NULL) {
        unsigned long long d, s;
        double j;
        char kind[16];
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "%llu %llu %lf %15s", &d, &s, &j, kind) != 4 || s >= d) {
            snprintf(rc->error, sizeof rc->error, "bad truth line: %.60s", line);
            return -1;
        }
        if (d < rc->dup) {
            snprintf(rc->error, sizeof rc->error, "truth not in document order at %llu", d);
            return -1;
        }
        if (d - s >= RECALL_RING) {
            snprintf(rc->error, sizeof rc->error, "source %llu of %llu is beyond the window", s, d);
            return -1;
        }
        rc->dup = d;
        rc->src = s;
        rc->jac = j;
        rc->exact = strcmp(kind, "exact") == 0;
        rc->have_pair = 1;
        return 0;
    }
    return 0;
}

/* 0, or -1 with rc->error set (and nothing to free). */
static int recall_open(recall_check *rc, const char *truth_path, double threshold) {
    memset(rc, 0, sizeof *rc);
    rc->threshold = threshold;
    rc->truth = fopen(truth_path, "r");
    if (rc->truth == NULL) {
        snprintf(rc->error, sizeof rc->error, "cannot open %.120s", truth_path);
        return -1;
    }
    rc->cluster = (uint64_t *)calloc(RECALL_RING, sizeof *rc->cluster);
    if (rc->cluster == NULL) {
        fclose(rc->truth);
        snprintf(rc->error, sizeof rc->error, "out of memory");
        return -1;
    }
    if (recall__next_pair(rc) != 0) {
        fclose(rc->truth);
        free(rc->cluster);
        return -1;
    }
    return 0;
}

/* One line of `--output decisions --format tsv` (the header is skipped). */
static int recall_line(recall_check *rc, const char *line) {
    unsigned long long id, cl;
    if (strncmp(line, "id\t", 3) == 0) return 0;
    if (sscanf(line, "%llu %llu", &id, &cl) != 2) {
        snprintf(rc->error, sizeof rc->error, "bad decisions line: %.60s", line);
        return -1;
    }
    if (id != rc->next_id) {
        snprintf(rc->error, sizeof rc->error, "decision for %llu where %llu was expected", id,
                 (unsigned long long)rc->next_id);
        return -1;
    }
    rc->cluster[id % RECALL_RING] = cl;
    rc->next_id++;
    rc->docs++;
    while (rc->have_pair && rc->dup == id) {
        uint64_t c = rc->cluster[rc->src % RECALL_RING];
        int found = cl != 0 && c == cl;
        if (rc->exact) {
            rc->exact_n++;
            rc->exact_found += (uint64_t)found;
        }
        if (rc->jac >= rc->threshold) {
            rc->at++;
            rc->at_found += (uint64_t)found;
        } else {
            rc->below++;
            rc->below_found += (uint64_t)found;
        }
        if (recall__next_pair(rc) != 0) return -1;
    }
    return 0;
}

/* After the last line: every planted pair must have had its decisions. */
static int recall_finish(recall_check *rc) {
    if (rc->have_pair) {
        snprintf(rc->error, sizeof rc->error,
                 "no decision for document %llu (a planted duplicate); %llu decisions read",
                 (unsigned long long)rc->dup, (unsigned long long)rc->docs);
        return -1;
    }
    return 0;
}

static void recall_close(recall_check *rc) {
    if (rc->truth != NULL) fclose(rc->truth);
    free(rc->cluster);
    rc->truth = NULL;
    rc->cluster = NULL;
}

/* Found over planted, at or above the threshold (1 when there are none). */
static double recall_value(const recall_check *rc) {
    return rc->at ? (double)rc->at_found / (double)rc->at : 1.0;
}

#endif /* MINLSH_BENCH_RECALL_H */
