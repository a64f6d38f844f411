/*
 * bench/corpus.h: documents generated from a seed, for the benchmarks.
 *
 * A vocabulary of a few thousand pronounceable made-up words is built from
 * syllables (or read from a word list, one word per line, when asked for);
 * words are drawn with a Zipf-like skew, so frequent words repeat as in real
 * text. Document i is a pure function of (seed, i): any thread can make any
 * document, in any order, and the corpus is the same every run. Every
 * tenth document is a planted near-duplicate: a copy of an earlier one with
 * a few words replaced, so deduplication has something to find.
 */
#ifndef MINLSH_BENCH_CORPUS_H
#define MINLSH_BENCH_CORPUS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS_MAX_WORDS 8192
#define CORPUS_WORD_MAX 24

typedef struct corpus_vocab {
    char word[CORPUS_MAX_WORDS][CORPUS_WORD_MAX];
    uint8_t len[CORPUS_MAX_WORDS];
    uint32_t n;
    /* cumulative Zipf weights, scaled to 2^32 */
    uint32_t cdf[CORPUS_MAX_WORDS];
    /* the word for each value of the top 16 bits of a random number: the
     * cdf quantised, so a pick is one table lookup */
    uint16_t pick[65536];
    const char *source; /* "built-in" or the file */
} corpus_vocab;

static inline uint64_t corpus_mix(uint64_t x) {
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

/* xorshift64*: fast, good enough for choosing words. */
static inline uint64_t corpus_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

static void corpus_finish_vocab(corpus_vocab *v) {
    double total = 0.0, acc = 0.0;
    uint32_t i;
    for (i = 0; i < v->n; i++) total += 1.0 / (double)(i + 8);
    for (i = 0; i < v->n; i++) {
        acc += 1.0 / (double)(i + 8);
        v->cdf[i] = (uint32_t)(acc / total * 4294967295.0);
    }
    v->cdf[v->n - 1] = UINT32_MAX;
    {
        uint32_t x, w = 0;
        for (x = 0; x < 65536; x++) {
            uint32_t at = (x << 16) | 0x8000u;
            while (w + 1 < v->n && v->cdf[w] < at) w++;
            v->pick[x] = (uint16_t)w;
        }
    }
}

/* The built-in vocabulary: n words of 1-4 syllables, all distinct. */
static void corpus_vocab_builtin(corpus_vocab *v, uint32_t n, uint64_t seed) {
    static const char *const on[] = {"b", "c", "d", "f", "g", "h", "j", "k", "l", "m",
                                     "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch",
                                     "cl", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr"};
    static const char *const nu[] = {"a", "e", "i", "o", "u", "ai", "ea", "ou", "ie", "oo"};
    static const char *const co[] = {"", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng"};
    uint64_t s = corpus_mix(seed) | 1;
    uint32_t tries = 0;
    v->n = 0;
    v->source = "built-in";
    if (n > CORPUS_MAX_WORDS) n = CORPUS_MAX_WORDS;
    while (v->n < n && tries++ < 100 * n) {
        char w[CORPUS_WORD_MAX];
        size_t len = 0, k;
        uint32_t syl = 1 + (uint32_t)(corpus_next(&s) % 3), i, j;
        int dup = 0;
        for (i = 0; i < syl; i++) {
            const char *parts[3];
            parts[0] = on[corpus_next(&s) % (sizeof on / sizeof on[0])];
            parts[1] = nu[corpus_next(&s) % (sizeof nu / sizeof nu[0])];
            parts[2] = co[corpus_next(&s) % (sizeof co / sizeof co[0])];
            for (j = 0; j < 3; j++) {
                k = strlen(parts[j]);
                if (len + k >= CORPUS_WORD_MAX) break;
                memcpy(w + len, parts[j], k);
                len += k;
            }
        }
        for (j = 0; j < v->n && !dup; j++)
            dup = v->len[j] == len && memcmp(v->word[j], w, len) == 0;
        if (dup) continue;
        memcpy(v->word[v->n], w, len);
        v->len[v->n++] = (uint8_t)len;
    }
    /* Shortest first: the frequent words are the short ones, as in real
     * text (insertion sort by length, stable, once). */
    {
        uint32_t i, j;
        for (i = 1; i < v->n; i++) {
            char w[CORPUS_WORD_MAX];
            uint8_t l = v->len[i];
            memcpy(w, v->word[i], CORPUS_WORD_MAX);
            for (j = i; j > 0 && v->len[j - 1] > l; j--) {
                memcpy(v->word[j], v->word[j - 1], CORPUS_WORD_MAX);
                v->len[j] = v->len[j - 1];
            }
            memcpy(v->word[j], w, CORPUS_WORD_MAX);
            v->len[j] = l;
        }
    }
    corpus_finish_vocab(v);
}

/* Words from a file (one per line, ASCII letters only kept), at most n. */
static int corpus_vocab_file(corpus_vocab *v, const char *path, uint32_t n) {
    FILE *f = fopen(path, "r");
    char line[256];
    if (f == NULL) return -1;
    v->n = 0;
    v->source = path;
    if (n > CORPUS_MAX_WORDS) n = CORPUS_MAX_WORDS;
    while (v->n < n && fgets(line, sizeof line, f) != NULL) {
        size_t len = 0, i;
        int ok = 1;
        for (i = 0; line[i] != '\0' && line[i] != '\n'; i++) {
            char c = line[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) ok = 0;
            len++;
        }
        if (!ok || len == 0 || len >= CORPUS_WORD_MAX) continue;
        memcpy(v->word[v->n], line, len);
        v->len[v->n++] = (uint8_t)len;
    }
    fclose(f);
    if (v->n < 100) return -1;
    corpus_finish_vocab(v);
    return 0;
}

static inline uint32_t corpus_pick(const corpus_vocab *v, uint64_t *s) {
    return v->pick[corpus_next(s) >> 48];
}

/* Write about `bytes` bytes of words for the base text of `key` into out
 * (room for bytes + CORPUS_WORD_MAX + 1); returns the length. */
static size_t corpus_base(const corpus_vocab *v, uint64_t key, size_t bytes, char *out) {
    uint64_t s = corpus_mix(key) | 1;
    size_t n = 0, words = 0;
    while (n < bytes) {
        uint32_t w = corpus_pick(v, &s);
        memcpy(out + n, v->word[w], v->len[w]);
        n += v->len[w];
        words++;
        /* sentences: a full stop now and then, else a space */
        out[n++] = (words % 17 == 0) ? '.' : ' ';
    }
    return n;
}

/* Document i of the corpus (seed): about `bytes` bytes. Every tenth
 * document (i % 10 == 9, i >= 10) is a near-duplicate of document
 * i - 1 - (i / 10) % 5 with about 1% of its words replaced (Jaccard of the
 * word 5-shingles about 0.9). */
static size_t corpus_doc(const corpus_vocab *v, uint64_t seed, uint64_t i, size_t bytes,
                         char *out) {
    uint64_t src = i;
    size_t n, p;
    if (i % 10 == 9 && i >= 10) src = i - 1 - (i / 10) % 5;
    n = corpus_base(v, seed * UINT64_C(0x100000001B3) + src, bytes, out);
    if (src != i) {
        uint64_t s = corpus_mix(seed ^ (i * 31 + 7)) | 1;
        /* Replace about one word in 100: overwrite letters from a random
         * word at word starts (the length stays the same). */
        for (p = 0; p < n; p++) {
            if (p > 0 && out[p - 1] != ' ') continue;
            if (corpus_next(&s) % 100 == 0) {
                uint32_t w = corpus_pick(v, &s);
                size_t q = 0;
                while (p + q < n && out[p + q] != ' ' && out[p + q] != '.' && q < v->len[w]) {
                    out[p + q] = v->word[w][q];
                    q++;
                }
            }
        }
    }
    return n;
}

/* i's source document if i is a planted near-duplicate, else i. */
static inline uint64_t corpus_source(uint64_t i) {
    return (i % 10 == 9 && i >= 10) ? i - 1 - (i / 10) % 5 : i;
}

#endif /* MINLSH_BENCH_CORPUS_H */
