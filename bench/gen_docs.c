/*
 * bench/gen_docs.c: short generated documents as JSON Lines, with planted
 * near-duplicates and exact copies, for the dedup benchmarks (make bench,
 * make bench-huge).
 *
 *   gen_docs N [--seed S] [--truth FILE] [--near PCT] [--exact PCT]
 *              [--window W] [--words FILE]
 *
 * writes documents 0 .. N-1 to standard output, one per line:
 *   {"id": 17, "text": "brai tho shou ..."}
 * Each is 30 to 80 words from the vocabulary of bench/corpus.h (built-in,
 * or a word list with --words), drawn with its Zipf-like skew. By default
 * 5% of the documents are a light edit of an earlier one and 1% an exact
 * copy of an earlier one; the earlier one (the source) is chosen among the
 * W documents just before (--window, default 1024), so the generator keeps
 * only those W documents' words: constant memory, any N, streaming.
 *
 * A light edit is one of: a word replaced anywhere, the last word
 * replaced, a word appended (a word deleted if the source has 80), the
 * first word deleted (a word appended if it has 30), or two words replaced.
 * Documents stay within 30 to 80 words even along chains of edits.
 *
 * --truth FILE lists every planted pair, one per line after a '#' header,
 * in document order:
 *   DUP <tab> SOURCE <tab> JACCARD <tab> near|exact
 * JACCARD is the exact Jaccard similarity of the two documents' sets of
 * word 5-shingles (minlsh's default, --shingle word:5), computed here from
 * the words (a 5-shingle is compared through a 64-bit mix of its five word
 * numbers: a false match has probability about 2^-64). Edits in the
 * middle of a 30-word document fall below 0.8, so the file also holds
 * pairs that minlsh dedup at the default threshold must not join; recall
 * is measured on the pairs at or above the threshold (bench/recall.h).
 *
 * Document i is a pure function of (seed, i, options): its random numbers
 * come from a generator seeded with (seed, i), and its source's words are
 * themselves a function of (seed, source). Only libc is needed; the text
 * is ASCII letters and single spaces, so no JSON escaping is ever needed.
 */
#include "corpus.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_WORDS 30
#define MAX_WORDS 80
#define SHINGLE 5

typedef struct doc {
    uint16_t w[MAX_WORDS];
    uint32_t n;
} doc;

static corpus_vocab vocab;

static void usage(void) {
    fprintf(stderr, "usage: gen_docs N [--seed S] [--truth FILE] [--near PCT] [--exact PCT]\n"
                    "                  [--window W] [--words FILE]\n");
    exit(2);
}

static uint64_t parse_u64(const char *s, const char *what) {
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-') {
        fprintf(stderr, "gen_docs: bad %s: %s\n", what, s);
        exit(2);
    }
    return (uint64_t)v;
}

static uint16_t other_word(uint16_t old, uint64_t *s) {
    uint16_t w = (uint16_t)corpus_pick(&vocab, s);
    if (w == old) w = (uint16_t)((w + 1) % vocab.n);
    return w;
}

/* The light edit number `kind` (0..4) of d, in place. */
static void edit(doc *d, uint32_t kind, uint64_t *s) {
    uint32_t at;
    if (kind == 2 && d->n == MAX_WORDS) kind = 3;
    else if (kind == 3 && d->n == MIN_WORDS) kind = 2;
    switch (kind) {
    case 0: /* a word replaced anywhere */
        at = (uint32_t)(corpus_next(s) % d->n);
        d->w[at] = other_word(d->w[at], s);
        break;
    case 1: /* the last word replaced */
        at = d->n - 1;
        d->w[at] = other_word(d->w[at], s);
        break;
    case 2: /* a word appended */
        d->w[d->n] = (uint16_t)corpus_pick(&vocab, s);
        d->n++;
        break;
    case 3: /* the first word deleted */
        memmove(d->w, d->w + 1, (d->n - 1) * sizeof d->w[0]);
        d->n--;
        break;
    default: /* two words replaced */
        at = (uint32_t)(corpus_next(s) % d->n);
        d->w[at] = other_word(d->w[at], s);
        at = (uint32_t)(corpus_next(s) % d->n);
        d->w[at] = other_word(d->w[at], s);
        break;
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The sorted, distinct 5-shingles of d (as 64-bit mixes); returns how many. */
static size_t shingles(const doc *d, uint64_t *out) {
    size_t n = 0, i, j, m = 0;
    for (i = 0; i + SHINGLE <= d->n; i++) {
        uint64_t h = 0;
        for (j = 0; j < SHINGLE; j++) h = corpus_mix(h ^ d->w[i + j]);
        out[n++] = h;
    }
    qsort(out, n, sizeof *out, cmp_u64);
    for (i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i]) out[m++] = out[i];
    return m;
}

/* The exact Jaccard similarity of a's and b's 5-shingle sets. */
static double jaccard(const doc *a, const doc *b) {
    uint64_t x[MAX_WORDS], y[MAX_WORDS];
    size_t nx = shingles(a, x), ny = shingles(b, y), i = 0, j = 0, both = 0;
    while (i < nx && j < ny) {
        if (x[i] == y[j]) both++, i++, j++;
        else if (x[i] < y[j]) i++;
        else j++;
    }
    return nx + ny == both ? 1.0 : (double)both / (double)(nx + ny - both);
}

/* The output buffer: flushed when it has less than a document's room. */
static char obuf[1 << 20];
static size_t olen;

static void flush_out(void) {
    if (olen > 0 && fwrite(obuf, 1, olen, stdout) != olen) {
        perror("gen_docs: write");
        exit(1);
    }
    olen = 0;
}

static void put_doc(uint64_t id, const doc *d) {
    uint32_t k;
    if (sizeof obuf - olen < 64 + (size_t)MAX_WORDS * (CORPUS_WORD_MAX + 1)) flush_out();
    olen += (size_t)sprintf(obuf + olen, "{\"id\": %llu, \"text\": \"", (unsigned long long)id);
    for (k = 0; k < d->n; k++) {
        if (k > 0) obuf[olen++] = ' ';
        memcpy(obuf + olen, vocab.word[d->w[k]], vocab.len[d->w[k]]);
        olen += vocab.len[d->w[k]];
    }
    memcpy(obuf + olen, "\"}\n", 3);
    olen += 3;
}

int main(int argc, char **argv) {
    uint64_t n = 0, seed = 20260101, near = 5, exact = 1, window = 1024, i;
    const char *truth_path = NULL, *words = NULL;
    FILE *truth = NULL;
    doc *ring;
    int a, have_n = 0;
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc) seed = parse_u64(argv[++a], "seed");
        else if (strcmp(argv[a], "--truth") == 0 && a + 1 < argc) truth_path = argv[++a];
        else if (strcmp(argv[a], "--near") == 0 && a + 1 < argc)
            near = parse_u64(argv[++a], "--near");
        else if (strcmp(argv[a], "--exact") == 0 && a + 1 < argc)
            exact = parse_u64(argv[++a], "--exact");
        else if (strcmp(argv[a], "--window") == 0 && a + 1 < argc)
            window = parse_u64(argv[++a], "--window");
        else if (strcmp(argv[a], "--words") == 0 && a + 1 < argc) words = argv[++a];
        else if (argv[a][0] != '-' && !have_n) {
            n = parse_u64(argv[a], "N");
            have_n = 1;
        } else usage();
    }
    if (!have_n || near + exact > 100 || window < 1 || window > ((uint64_t)1 << 24)) usage();
    if (words == NULL || corpus_vocab_file(&vocab, words, 6000) != 0) {
        if (words != NULL) fprintf(stderr, "gen_docs: cannot use %s; built-in words\n", words);
        corpus_vocab_builtin(&vocab, 5000, seed);
    }
    /* window + 1 slots: the sources of document i, i - window .. i - 1,
     * never share a slot with i */
    ring = (doc *)malloc((size_t)(window + 1) * sizeof *ring);
    if (ring == NULL) {
        fprintf(stderr, "gen_docs: out of memory\n");
        return 1;
    }
    if (truth_path != NULL) {
        truth = fopen(truth_path, "w");
        if (truth == NULL) {
            perror(truth_path);
            return 1;
        }
        fprintf(truth,
                "# dup\tsource\tjaccard\tkind (gen_docs %llu --seed %llu --near %llu "
                "--exact %llu --window %llu)\n",
                (unsigned long long)n, (unsigned long long)seed, (unsigned long long)near,
                (unsigned long long)exact, (unsigned long long)window);
    }
    for (i = 0; i < n; i++) {
        uint64_t s = corpus_mix(corpus_mix(seed) ^ i) | 1;
        uint64_t roll = corpus_next(&s) % 100;
        doc *d = &ring[i % (window + 1)];
        if (i > 0 && roll < near + exact) {
            uint64_t back = i < window ? i : window;
            uint64_t src = i - 1 - corpus_next(&s) % back;
            const doc *from = &ring[src % (window + 1)];
            double j = 1.0;
            *d = *from;
            if (roll < near) {
                edit(d, (uint32_t)(corpus_next(&s) % 5), &s);
                j = jaccard(d, from);
            }
            if (truth != NULL)
                fprintf(truth, "%llu\t%llu\t%.6f\t%s\n", (unsigned long long)i,
                        (unsigned long long)src, j, roll < near ? "near" : "exact");
        } else {
            uint32_t k;
            d->n = MIN_WORDS + (uint32_t)(corpus_next(&s) % (MAX_WORDS - MIN_WORDS + 1));
            for (k = 0; k < d->n; k++) d->w[k] = (uint16_t)corpus_pick(&vocab, &s);
        }
        put_doc(i, d);
    }
    flush_out();
    if (fflush(stdout) != 0) {
        perror("gen_docs: write");
        return 1;
    }
    if (truth != NULL && fclose(truth) != 0) {
        perror(truth_path);
        return 1;
    }
    free(ring);
    (void)corpus_base; /* corpus.h's document maker, not used here */
    (void)corpus_doc;
    return 0;
}
