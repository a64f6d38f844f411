/*
 * bench/unicode.c: the cost per input byte of Unicode normalisation
 * (make bench, make bench-unicode).
 *
 * Generated English, French, Russian and Chinese text (words drawn from a
 * small list per language with a Zipf-like skew, sentences with commas and
 * full stops; Chinese without spaces, with its own punctuation), about
 * 4 MB each, in documents of about 2 KB, shingled as word 5-shingles on
 * the signing path (hashes, no set). The reference is today's ASCII path:
 * English under the ASCII flags (lowercase, strip-punct, collapse-space).
 * Every other row is measured in the same run, interleaved with it, and
 * given as a ratio to it: English, French, Russian and Chinese under every
 * Unicode flag (NFKC, full case folding, P and S classes, White_Space,
 * digits, one word per Han character) and, for comparison, the three other
 * languages under the ASCII flags. Then the default options (CJK_WORDS)
 * against flags 0 on the same English and Chinese text: the price of the
 * default's word splitting; and flags 0 against itself, the noise. CPU
 * time of this thread, best of 7.
 */
#define _POSIX_C_SOURCE 200809L
#include "minlsh.h"

#include "shingle/shingle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const english[] = {
    "the", "of", "and", "to", "in", "is", "that", "it", "was", "for", "on", "are", "with",
    "as", "his", "they", "be", "at", "one", "have", "this", "from", "by", "word", "but",
    "what", "some", "we", "can", "out", "other", "were", "all", "there", "when", "up", "use",
    "your", "how", "said", "each", "she", "which", "their", "time", "will", "way", "about",
    "many", "then", "them", "write", "would", "like", "these", "her", "long", "make",
    "thing", "see", "him", "two", "has", "look", "more", "day", "could", "come", "did",
    "number", "sound", "most", "people", "over", "know", "water", "than", "call", "first",
    "who", "down", "side", "been", "now", "find", "river", "bridge", "morning", "garden"};
static const char *const french[] = {
    "le", "la", "les", "de", "des", "du", "un", "une", "et", "à", "être", "avoir", "il",
    "elle", "nous", "vous", "ils", "que", "qui", "dans", "pour", "pas", "sur", "ce", "plus",
    "par", "avec", "tout", "faire", "son", "autre", "mais", "comme", "où", "été", "très",
    "déjà", "français", "école", "élève", "première", "après", "même", "château", "forêt",
    "garçon", "cœur", "naïve", "Noël", "ça", "voilà", "leur", "année", "société", "église",
    "développement", "rivière", "matin", "jardin", "pont", "lumière", "fenêtre", "hôpital",
    "théâtre", "deuxième", "frère", "mère", "père", "fête", "tête", "bientôt", "peut-être"};
static const char *const russian[] = {
    "и", "в", "не", "на", "я", "быть", "он", "с", "что", "а", "по", "это", "она", "этот",
    "к", "но", "они", "мы", "как", "из", "у", "который", "то", "за", "свой", "весь", "год",
    "от", "так", "о", "для", "ты", "же", "все", "тот", "мочь", "вы", "человек", "такой",
    "его", "сказать", "только", "или", "ещё", "бы", "себя", "один", "какой", "когда",
    "уже", "дело", "время", "жизнь", "день", "рука", "работа", "слово", "место", "вопрос",
    "лицо", "глаз", "страна", "друг", "сторона", "дом", "река", "мост", "утро", "сад"};
/* Common characters, written without spaces. */
static const char chinese[] =
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学"
    "对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头"
    "面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明社";

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n) {
    if (t->len + n > t->cap) {
        t->cap = (t->len + n) * 2;
        t->p = (char *)realloc(t->p, t->cap);
        if (t->p == NULL) exit(1);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
}

static uint64_t rnd(uint64_t *s) {
    uint64_t x = (*s += UINT64_C(0x9E3779B97F4A7C15));
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

/* Zipf-like: the square of a uniform number favours the first entries. */
static size_t pick(uint64_t *s, size_t n) {
    double u = (double)(rnd(s) >> 11) / 9007199254740992.0;
    return (size_t)(u * u * (double)n);
}

/* About total bytes of one language, in documents of about doc bytes
 * (offsets into one buffer). */
static void generate(text *t, size_t **starts, size_t *ndocs, const char *const *words,
                     size_t nw, size_t total, size_t doc, uint64_t seed) {
    size_t cap = total / doc + 2, n = 0;
    uint64_t s = seed;
    *starts = (size_t *)malloc((cap + 1) * sizeof **starts);
    if (*starts == NULL) exit(1);
    while (t->len < total && n < cap) {
        size_t start = t->len, w = 0;
        (*starts)[n++] = start;
        while (t->len - start < doc) {
            if (words != NULL) {
                const char *x = words[pick(&s, nw)];
                if (w == 0 && x[0] >= 'a' && x[0] <= 'z') { /* sentence case */
                    char c = (char)(x[0] - 32);
                    put(t, &c, 1);
                    put(t, x + 1, strlen(x) - 1);
                } else {
                    put(t, x, strlen(x));
                }
                w++;
                if (w > 6 && rnd(&s) % 8 == 0) {
                    put(t, ". ", 2);
                    w = 0;
                } else {
                    put(t, rnd(&s) % 12 == 0 ? ", " : " ", rnd(&s) % 12 == 0 ? 2 : 1);
                }
            } else {
                size_t nc = (sizeof chinese - 1) / 3;
                put(t, chinese + 3 * pick(&s, nc), 3);
                if (++w > 8 && rnd(&s) % 10 == 0) {
                    put(t, rnd(&s) % 3 ? "，" : "。", 3);
                    w = 0;
                }
            }
        }
    }
    (*starts)[n] = t->len;
    *ndocs = n;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int count_emit(void *ctx, const uint64_t *h, size_t n) {
    (void)h;
    *(uint64_t *)ctx += n;
    return 0;
}

typedef struct row {
    const char *name;
    const text *t;
    const size_t *starts;
    size_t ndocs;
    minlsh_shingler *sh;
    double best;
    uint64_t shingles;
} row;

static double run(row *r) {
    double t0 = cpu_now();
    uint64_t n = 0;
    size_t d;
    for (d = 0; d < r->ndocs; d++)
        if (minlsh__shingler_each(r->sh, r->t->p + r->starts[d],
                                  r->starts[d + 1] - r->starts[d], count_emit, &n) != 0) {
            fprintf(stderr, "shingling failed\n");
            exit(1);
        }
    r->shingles = n;
    return cpu_now() - t0;
}

static minlsh_shingler *shingler(uint32_t flags) {
    minlsh_shingler_options o = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_shingler *sh = NULL;
    o.flags = flags;
    if (minlsh_shingler_new(&sh, &o, NULL) != 0) exit(1);
    return sh;
}

int main(int argc, char **argv) {
    const uint32_t ascii = MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE;
    const uint32_t uni = ascii | MINLSH_NORM_UNICODE;
    size_t total = 4000000, i, r, reps = 7;
    text t[4];
    size_t *starts[4], nd[4];
    row rows[13];
    minlsh_shingler *sa = shingler(ascii), *su = shingler(uni);
    /* The default options (words of their own for unspaced scripts) and
     * the old default, no flag at all. */
    minlsh_shingler *sd = shingler(MINLSH_NORM_CJK_WORDS), *s0 = shingler(0);
    /* flags 0 again, as a row of its own: how far two identical rows fall
     * apart on this machine (the noise the ratio above is to be read with) */
    minlsh_shingler *s0b = shingler(0);
    static const char *const names[] = {"English", "French", "Russian", "Chinese"};
    int only = -1; /* --row N: that row alone, for a profiler */
    for (i = 1; i < (size_t)argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            total = 500000;
            reps = 3;
        } else if (strcmp(argv[i], "--row") == 0 && i + 1 < (size_t)argc) {
            only = atoi(argv[++i]);
        }
    }
    memset(t, 0, sizeof t);
    generate(&t[0], &starts[0], &nd[0], english, sizeof english / sizeof *english, total, 2000, 1);
    generate(&t[1], &starts[1], &nd[1], french, sizeof french / sizeof *french, total, 2000, 2);
    generate(&t[2], &starts[2], &nd[2], russian, sizeof russian / sizeof *russian, total, 2000, 3);
    generate(&t[3], &starts[3], &nd[3], NULL, 0, total, 2000, 4);
    for (i = 0; i < 4; i++) {
        rows[i] = (row){names[i], &t[i], starts[i], nd[i], su, 1e30, 0};
        rows[4 + i] = (row){names[i], &t[i], starts[i], nd[i], sa, 1e30, 0};
    }
    rows[8] = (row){names[0], &t[0], starts[0], nd[0], sd, 1e30, 0};
    rows[9] = (row){names[0], &t[0], starts[0], nd[0], s0, 1e30, 0};
    rows[10] = (row){names[3], &t[3], starts[3], nd[3], sd, 1e30, 0};
    rows[11] = (row){names[3], &t[3], starts[3], nd[3], s0, 1e30, 0};
    rows[12] = (row){names[0], &t[0], starts[0], nd[0], s0b, 1e30, 0};
    /* Interleaved: each repetition runs every row once, so a busy moment of
     * the shared machine hits all rows alike. */
    for (r = 0; r < reps; r++)
        for (i = 0; i < 13; i++) {
            double s = only < 0 || (size_t)only == i ? run(&rows[i]) : 1;
            if (s < rows[i].best) rows[i].best = s;
        }
    printf("== Unicode normalisation: word 5-shingles, hashes only, one thread, best of %zu ==\n",
           reps);
    printf("  reference: today's ASCII path = English, ASCII flags (lowercase, strip-punct, "
           "collapse-space)\n");
    printf("  %-8s %-8s %9s %10s %12s %13s\n", "text", "flags", "MB", "ns/byte", "shingles/KB",
           "x reference");
    for (i = 0; i < 13; i++) {
        const row *w = i < 8 ? &rows[(i % 2) ? 4 + i / 2 : i / 2] : &rows[i];
        double nsb = w->best / (double)w->t->len * 1e9;
        double ref = rows[4].best / (double)rows[4].t->len * 1e9;
        printf("  %-8s %-8s %9.2f %10.3f %12.1f %13.2f\n", w->name,
               w->sh == su ? "unicode" : w->sh == sa ? "ascii" : w->sh == sd ? "default" : "0",
               (double)w->t->len / 1e6, nsb,
               (double)w->shingles * 1000.0 / (double)w->t->len, nsb / ref);
    }
    for (i = 0; i < 4; i++)
        printf("unicode_%s_over_ascii_english: %.2f\n", i == 0 ? "english" : i == 1 ? "french" :
                                                        i == 2 ? "russian" : "chinese",
               (rows[i].best / (double)rows[i].t->len) / (rows[4].best / (double)rows[4].t->len));
    /* Same text both sides: the price of the default's word splitting. */
    printf("default_over_flags0_english: %.3f\n", rows[8].best / rows[9].best);
    printf("default_over_flags0_chinese: %.3f\n", rows[10].best / rows[11].best);
    printf("flags0_over_flags0_english: %.3f (noise)\n", rows[12].best / rows[9].best);
    for (i = 0; i < 4; i++) {
        free(t[i].p);
        free(starts[i]);
    }
    minlsh_shingler_free(sa);
    minlsh_shingler_free(su);
    minlsh_shingler_free(sd);
    minlsh_shingler_free(s0);
    minlsh_shingler_free(s0b);
    return 0;
}
