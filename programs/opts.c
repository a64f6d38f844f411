/*
 * opts.c: the command line. Long options only ("--name VALUE" or
 * "--name=VALUE"), plus -h and -q; "--" ends the options; "-" alone is a
 * path (standard input). Each subcommand lists the options it accepts.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct opt_spec {
    const char *name;
    int id;
    int takes_value;
} opt_spec;

static const opt_spec specs[] = {
    {"help", O_HELP, 0},
    {"quiet", O_QUIET, 0},
    {"progress", O_PROGRESS, 0},
    {"stats", O_STATS, 0},
    {"jsonl", O_JSONL, 0},
    {"id-field", O_ID_FIELD, 1},
    {"text-field", O_TEXT_FIELD, 1},
    {"threshold", O_THRESHOLD, 1},
    {"num-perm", O_NUM_PERM, 1},
    {"bands", O_BANDS, 1},
    {"rows", O_ROWS, 1},
    {"shingle", O_SHINGLE, 1},
    {"lowercase", O_LOWERCASE, 0},
    {"strip-punct", O_STRIP_PUNCT, 0},
    {"collapse-space", O_COLLAPSE_SPACE, 0},
    {"normalize", O_NORMALIZE, 0},
    {"html", O_HTML, 0},
    {"seed", O_SEED, 1},
    {"key", O_KEY, 1},
    {"threads", O_THREADS, 1},
    {"verify", O_VERIFY, 1},
    {"output", O_OUTPUT, 1},
    {"format", O_FORMAT, 1},
    {"weights", O_WEIGHTS, 1},
    {"mode", O_MODE, 1},
    {"target-recall", O_TARGET_RECALL, 1},
    {"svg", O_SVG, 1},
    {"force", O_FORCE, 0},
    {"all", O_ALL, 0},
    {"keep", O_KEEP, 1},
    {"group", O_GROUP, 1},
    {"max-bucket", O_MAX_BUCKET, 1},
    {"max-doc-size", O_MAX_DOC_SIZE, 1},
    {"memory", O_MEMORY, 1},
    {"tmpdir", O_TMPDIR, 1},
    {"key-file", O_KEY_FILE, 1},
    {"include", O_INCLUDE, 1},
    {"exclude", O_EXCLUDE, 1},
    {"novel-only", O_NOVEL_ONLY, 0},
    {"lock-timeout", O_LOCK_TIMEOUT, 1},
    {"no-lock", O_NO_LOCK, 0},
    {"scheme", O_SCHEME, 1},
    {"nfkc", O_NFKC, 0},
    {"casefold", O_CASEFOLD, 0},
    {"unicode-punct", O_UNICODE_PUNCT, 0},
    {"unicode-space", O_UNICODE_SPACE, 0},
    {"fold-digits", O_FOLD_DIGITS, 0},
    {"cjk-words", O_CJK_WORDS, 0},
    {"no-cjk-words", O_NO_CJK_WORDS, 0},
    {"preset", O_PRESET, 1},
    {"list-presets", O_LIST_PRESETS, 0},
};

/* The --max-doc-size that cli_shingler_new gives its shinglers. */
static uint64_t shingler_max_bytes = CLI_MAX_DOC_SIZE;

void opts_defaults(cli_opts *o) {
    memset(o, 0, sizeof *o);
    o->id_field = "id";
    o->text_field = "text";
    o->threshold = 0.8;
    o->num_perm = 128;
    o->unit = MINLSH_UNIT_WORD;
    o->shingle_k = 5;
    /* The library's defaults (options version 2): CJK and Thai characters
     * are words of their own. --no-cjk-words is 0.1's default. */
    o->flags = MINLSH_NORM_CJK_WORDS;
    o->seed = 1;
    o->keep = MINLSH_KEEP_FIRST;
    o->group = MINLSH_GROUP_COMPONENTS;
    memcpy(o->key, minlsh_default_key(), MINLSH_KEY_BYTES);
    o->verify = VERIFY_EXACT;
    o->output = OUTPUT_CLUSTERS;
    o->format = FORMAT_TEXT;
    o->weight_fp = 0.5;
    o->weight_fn = 0.5;
    o->target_recall = CLI_PLAN_TARGET;
    o->lock_timeout_ms = MINLSH_LOCK_WAIT_FOREVER;
    o->mode = MINLSH_PLAN_RECALL;
    o->max_doc_size = CLI_MAX_DOC_SIZE;
}

/* ---- value parsers: 0 on success, -1 on a bad value --------------------- */

static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    unsigned long long v;
    if (*s == '\0' || *s == '-' || *s == '+' || *s == ' ') return -1;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0') return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_u32_range(const char *s, uint32_t lo, uint32_t hi,
                           uint32_t *out) {
    uint64_t v;
    if (parse_u64(s, &v) != 0 || v < lo || v > hi) return -1;
    *out = (uint32_t)v;
    return 0;
}

/* A size: decimal digits and an optional K, M or G (powers of 1024). */
static int parse_size(const char *s, uint64_t *out) {
    uint64_t v = 0, unit = 1;
    const char *p = s;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    switch (*p) {
    case '\0': break;
    case 'K': case 'k': unit = UINT64_C(1) << 10; p++; break;
    case 'M': case 'm': unit = UINT64_C(1) << 20; p++; break;
    case 'G': case 'g': unit = UINT64_C(1) << 30; p++; break;
    default: return -1;
    }
    if (*p != '\0' || (v != 0 && v > UINT64_MAX / unit)) return -1;
    *out = v * unit;
    return 0;
}

void opts_describe_size(char out[32], uint64_t bytes) {
    static const char units[] = "GMK";
    int i;
    for (i = 0; i < 3; i++) {
        uint64_t u = UINT64_C(1) << (10 * (3 - i));
        if (bytes != 0 && bytes % u == 0) {
            snprintf(out, 32, "%llu%c", (unsigned long long)(bytes / u), units[i]);
            return;
        }
    }
    snprintf(out, 32, "%llu", (unsigned long long)bytes);
}

static int parse_double(const char *s, double *out) {
    char *end;
    double v;
    if (*s == '\0' || *s == ' ') return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int parse_key(const char *s, uint8_t key[MINLSH_KEY_BYTES]) {
    size_t i;
    if (strlen(s) != 2 * MINLSH_KEY_BYTES) return -1;
    for (i = 0; i < MINLSH_KEY_BYTES; i++) {
        int hi = hexval((unsigned char)s[2 * i]);
        int lo = hexval((unsigned char)s[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        key[i] = (uint8_t)(hi * 16 + lo);
    }
    return 0;
}

/* The key from a file: 32 hex digits, white space around them allowed.
 * Returns 0, or CLI_USAGE with a message naming the file (never its
 * content). The copy read is wiped. */
static int read_key_file(cli_opts *o, const cli_command *cmd, const char *how,
                         const char *path) {
    char buf[128];
    volatile char *wipe = buf;
    size_t n = 0, b = 0, e, i;
    FILE *f = fopen(path, "rb");
    int rc = 0;
    if (f == NULL)
        return cli_usage_error(cmd->name, "%s %s: cannot open: %s", how, path,
                               strerror(errno));
    n = fread(buf, 1, sizeof buf - 1, f);
    if (ferror(f)) rc = cli_usage_error(cmd->name, "%s %s: read error", how, path);
    fclose(f);
    buf[n] = '\0';
    if (rc == 0) {
        e = n;
        while (b < e && strchr(" \t\r\n", buf[b]) != NULL) b++;
        while (e > b && strchr(" \t\r\n", buf[e - 1]) != NULL) e--;
        buf[e] = '\0';
        if (n == sizeof buf - 1 || parse_key(buf + b, o->key) != 0)
            rc = cli_usage_error(cmd->name,
                                 "%s %s: expected 32 hexadecimal digits (16 bytes) "
                                 "and nothing else", how, path);
        else
            o->custom_key = memcmp(o->key, minlsh_default_key(), MINLSH_KEY_BYTES) != 0;
    }
    for (i = 0; i < sizeof buf; i++) wipe[i] = 0;
    return rc;
}

static void add_pattern(const char ***v, size_t *n, size_t *cap, const char *p) {
    void *x = (void *)*v;
    xgrow(&x, cap, *n + 1, sizeof **v);
    *v = x;
    (*v)[(*n)++] = p;
}

int opts_parse_shingle(const char *s, uint32_t *unit, uint32_t *k) {
    static const struct {
        const char *name;
        uint32_t unit;
    } units[] = {{"word", MINLSH_UNIT_WORD},
                 {"char", MINLSH_UNIT_BYTE},
                 {"byte", MINLSH_UNIT_BYTE},
                 {"codepoint", MINLSH_UNIT_CODEPOINT},
                 {"stopword", MINLSH_UNIT_STOPWORD}};
    const char *colon = strchr(s, ':');
    size_t len = colon ? (size_t)(colon - s) : strlen(s);
    size_t i;
    for (i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strlen(units[i].name) != len || strncmp(s, units[i].name, len) != 0)
            continue;
        *unit = units[i].unit;
        if (colon == NULL) {
            /* Only stopword has a default length. */
            if (units[i].unit != MINLSH_UNIT_STOPWORD) return -1;
            *k = 3;
            return 0;
        }
        return parse_u32_range(colon + 1, 1, MINLSH_SHINGLE_K_MAX, k);
    }
    return -1;
}

/* The names are the library's: the command's older index files hold them
 * too. */
int opts_parse_flags(const char *s, uint32_t *flags) {
    return minlsh_norm_flags_parse(flags, s, strlen(s)) == 0 ? 0 : -1;
}

void opts_describe_shingle(cli_buf *b, uint32_t unit, uint32_t k) {
    const char *name = unit == MINLSH_UNIT_BYTE        ? "char"
                       : unit == MINLSH_UNIT_CODEPOINT ? "codepoint"
                       : unit == MINLSH_UNIT_STOPWORD  ? "stopword"
                                                       : "word";
    buf_printf(b, "%s:%u", name, (unsigned)k);
}

void opts_describe_flags(cli_buf *b, uint32_t flags) {
    size_t n = 0;
    (void)minlsh_norm_flags_format(flags, NULL, 0, &n); /* asks the length */
    buf_reserve(b, n);
    if (minlsh_norm_flags_format(flags, b->p + b->n, n, NULL) != 0) return;
    b->n += n;
    b->p[b->n] = '\0';
}

/* ---- the parser --------------------------------------------------------- */

/* A number macro's digits, for messages that quote a limit. */
#define OPTS_STR_(x) #x
#define OPTS_STR(x) OPTS_STR_(x)

static int bad_value(const cli_command *cmd, const char *name, const char *v,
                     const char *expected) {
    return cli_usage_error(cmd->name, "invalid value '%s' for --%s: expected %s",
                           v, name, expected);
}

static int set_format(cli_opts *o, const cli_command *cmd, const char *v) {
    static const char *const names[] = {"text", "tsv", "jsonl", "hex", "json"};
    size_t i, len = strlen(v);
    const char *f = cmd->formats;
    /* The value must be one of the |-separated words of cmd->formats. */
    while (f != NULL && *f) {
        size_t wl = strcspn(f, "|");
        if (wl == len && strncmp(f, v, len) == 0) {
            for (i = 0; i < sizeof names / sizeof names[0]; i++)
                if (strcmp(names[i], v) == 0) o->format = (int)i;
            return 0;
        }
        f += wl;
        if (*f == '|') f++;
    }
    return bad_value(cmd, "format", v, cmd->formats ? cmd->formats : "nothing");
}

static int set_weights(cli_opts *o, const cli_command *cmd, const char *v) {
    const char *comma = strchr(v, ',');
    char first[64];
    size_t len = comma ? (size_t)(comma - v) : 0;
    if (comma == NULL || len >= sizeof first) goto bad;
    memcpy(first, v, len);
    first[len] = '\0';
    if (parse_double(first, &o->weight_fp) != 0 ||
        parse_double(comma + 1, &o->weight_fn) != 0 || o->weight_fp < 0 ||
        o->weight_fn < 0 || (o->weight_fp == 0 && o->weight_fn == 0))
        goto bad;
    return 0;
bad:
    return bad_value(cmd, "weights", v,
                     "FP,FN: two non-negative numbers, not both 0");
}

/* fnmatch never reports a bad pattern: it matches an unclosed '[' as
 * itself and a trailing backslash or an unknown class as nothing, so a typo
 * would quietly select no file. The pattern is read as fnmatch reads it
 * (flags 0: backslash escapes, also inside brackets). */
static const char *bracket_problem(const char **pp) {
    static const char unmatched[] = "unmatched '[' (\\[ matches a literal '[')";
    static const char *const classes[] = {"alnum", "alpha", "blank", "cntrl",
                                          "digit", "graph", "lower", "print",
                                          "punct", "space", "upper", "xdigit"};
    const char *p = *pp + 1;
    if (*p == '!' || *p == '^') p++;
    if (*p == ']') p++; /* first: a member, not the end */
    for (;;) {
        if (*p == '\0') return unmatched;
        if (*p == ']') break;
        if (*p == '\\') {
            if (p[1] == '\0') return unmatched;
            p += 2;
        } else if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
            char end = p[1];
            const char *name = p + 2, *close = name;
            while (*close != '\0' && !(close[0] == end && close[1] == ']')) close++;
            if (*close == '\0') return unmatched;
            if (end == ':') {
                size_t i, n = (size_t)(close - name);
                for (i = 0; i < sizeof classes / sizeof classes[0]; i++)
                    if (strlen(classes[i]) == n && memcmp(classes[i], name, n) == 0) break;
                if (i == sizeof classes / sizeof classes[0])
                    return "unknown character class (alnum, alpha, blank, cntrl, digit, graph, "
                           "lower, print, punct, space, upper, xdigit)";
            }
            p = close + 2;
        } else {
            p++;
        }
    }
    *pp = p;
    return NULL;
}

/* Why an --include or --exclude pattern could never match what it seems
 * to mean, or NULL when fnmatch reads it as written. */
static const char *pattern_problem(const char *pattern) {
    const char *p = pattern;
    if (*p == '\0') return "an empty pattern matches no file";
    for (; *p != '\0'; p++) {
        if (*p == '\\') {
            if (p[1] == '\0') return "a lone '\\' at the end (\\\\ matches a backslash)";
            p++;
        } else if (*p == '[') {
            const char *why = bracket_problem(&p);
            if (why != NULL) return why;
        }
    }
    return NULL;
}

/* Checked now, not when the first temporary file is needed: that may be
 * an hour into the run. ("" is refused: the library would read it as the
 * default.) */
static int set_tmpdir(cli_opts *o, const cli_command *cmd, const char *v) {
    struct stat st;
    if (*v == '\0') return bad_value(cmd, "tmpdir", v, "a directory");
    if (stat(v, &st) != 0)
        return cli_usage_error(cmd->name, "--tmpdir %s: %s", v, cli_dir_write_error(errno));
    if (!S_ISDIR(st.st_mode))
        return cli_usage_error(cmd->name, "--tmpdir %s: %s", v, cli_dir_write_error(ENOTDIR));
    if (access(v, W_OK | X_OK) != 0)
        return cli_usage_error(cmd->name, "--tmpdir %s: %s", v, cli_dir_write_error(errno));
    o->tmpdir = v;
    return 0;
}

/* Store the value of option id. Returns 0 or CLI_USAGE. */
static int set_value(cli_opts *o, const cli_command *cmd, int id,
                     const char *name, const char *v) {
    switch (id) {
    case O_ID_FIELD: o->id_field = v; return 0;
    case O_TEXT_FIELD: o->text_field = v; return 0;
    case O_SVG: o->svg = v; return 0;
    case O_PRESET: o->preset_name = v; return 0;
    case O_THRESHOLD:
        /* dedup takes 1 (only identical sets); the planner of the other
         * commands needs a threshold below it. */
        if (parse_double(v, &o->threshold) != 0 || !(o->threshold > 0) ||
            !(o->threshold < 1 || (o->threshold == 1 && strcmp(cmd->name, "dedup") == 0)))
            return bad_value(cmd, name, v,
                             strcmp(cmd->name, "dedup") == 0 ? "a number in (0, 1]"
                                                             : "a number between 0 and 1");
        return 0;
    case O_TARGET_RECALL:
        if (parse_double(v, &o->target_recall) != 0 ||
            !(o->target_recall > 0) || !(o->target_recall < 1))
            return bad_value(cmd, name, v, "a number between 0 and 1");
        return 0;
    case O_NUM_PERM:
        if (parse_u32_range(v, 1, MINLSH_FAMILY_K_MAX, &o->num_perm) != 0)
            return bad_value(cmd, name, v,
                             "an integer from 1 to " OPTS_STR(MINLSH_FAMILY_K_MAX));
        return 0;
    case O_BANDS:
    case O_ROWS:
        if (parse_u32_range(v, 1, MINLSH_FAMILY_K_MAX,
                            id == O_BANDS ? &o->bands : &o->rows) != 0)
            return bad_value(cmd, name, v,
                             "an integer from 1 to " OPTS_STR(MINLSH_FAMILY_K_MAX));
        return 0;
    case O_SHINGLE:
        if (opts_parse_shingle(v, &o->unit, &o->shingle_k) != 0)
            return bad_value(cmd, name, v,
                             "word:N, char:N, codepoint:N or stopword[:N], N 1..64");
        return 0;
    case O_SEED:
        if (parse_u64(v, &o->seed) != 0)
            return bad_value(cmd, name, v, "an unsigned 64-bit integer");
        return 0;
    case O_SCHEME:
        if (opts_parse_scheme(v, &o->scheme) != 0)
            return bad_value(cmd, name, v, "classic or oph");
        return 0;
    case O_KEY:
        if (parse_key(v, o->key) != 0)
            return bad_value(cmd, name, v, "32 hexadecimal digits (16 bytes)");
        o->custom_key = memcmp(o->key, minlsh_default_key(), MINLSH_KEY_BYTES) != 0;
        return 0;
    case O_THREADS: {
        uint32_t t;
        if (parse_u32_range(v, 0, 1024, &t) != 0)
            return bad_value(cmd, name, v, "an integer from 0 (automatic) to 1024");
        o->threads = t;
        return 0;
    }
    case O_VERIFY:
        if (strcmp(v, "exact") == 0) o->verify = VERIFY_EXACT;
        else if (strcmp(v, "signature") == 0) o->verify = VERIFY_SIGNATURE;
        else return bad_value(cmd, name, v, "exact or signature");
        return 0;
    case O_OUTPUT:
        if (strcmp(v, "clusters") == 0) o->output = OUTPUT_CLUSTERS;
        else if (strcmp(v, "pairs") == 0) o->output = OUTPUT_PAIRS;
        else if (strcmp(v, "decisions") == 0) o->output = OUTPUT_DECISIONS;
        else if (strcmp(v, "kept") == 0) o->output = OUTPUT_KEPT;
        else if (strcmp(v, "dropped") == 0) o->output = OUTPUT_DROPPED;
        else return bad_value(cmd, name, v, "clusters, pairs, decisions, kept or dropped");
        return 0;
    case O_KEEP:
        if (strcmp(v, "first") == 0) o->keep = MINLSH_KEEP_FIRST;
        else if (strcmp(v, "longest") == 0) o->keep = MINLSH_KEEP_LONGEST;
        else return bad_value(cmd, name, v, "first or longest");
        return 0;
    case O_GROUP:
        if (strcmp(v, "components") == 0) o->group = MINLSH_GROUP_COMPONENTS;
        else if (strcmp(v, "strict") == 0) o->group = MINLSH_GROUP_STRICT;
        else return bad_value(cmd, name, v, "components or strict");
        return 0;
    case O_MAX_BUCKET:
        if (parse_u64(v, &o->max_bucket) != 0 || o->max_bucket == 1)
            return bad_value(cmd, name, v, "0 (no cap) or an integer of at least 2");
        return 0;
    case O_MODE:
        if (strcmp(v, "balanced") == 0) o->mode = MINLSH_PLAN_BALANCED;
        else if (strcmp(v, "recall") == 0) o->mode = MINLSH_PLAN_RECALL;
        else if (strcmp(v, "rule") == 0) o->mode = MINLSH_PLAN_RULE;
        else return bad_value(cmd, name, v, "balanced, recall or rule");
        return 0;
    case O_MEMORY:
        if (strcmp(v, "none") == 0) o->memory = MINLSH_DEDUP_MEMORY_UNLIMITED;
        else if (parse_size(v, &o->memory) != 0)
            return bad_value(cmd, name, v,
                             "a size such as 512M or 4G (0: the default; none: no limit)");
        return 0;
    case O_TMPDIR: return set_tmpdir(o, cmd, v);
    case O_LOCK_TIMEOUT: {
        double s;
        /* Below the "wait forever" value, in whole milliseconds. */
        if (parse_double(v, &s) != 0 || !(s >= 0) || !(s < 4294967.0))
            return bad_value(cmd, name, v, "seconds, from 0 (do not wait) to 4294967");
        o->lock_timeout_ms = (uint32_t)(s * 1000.0 + 0.5);
        return 0;
    }
    case O_MAX_DOC_SIZE:
        if (parse_size(v, &o->max_doc_size) != 0)
            return bad_value(cmd, name, v,
                             "a size in bytes, with K, M or G for KiB, MiB, GiB "
                             "(0: no limit)");
        return 0;
    case O_KEY_FILE: return read_key_file(o, cmd, "--key-file", v);
    case O_INCLUDE:
    case O_EXCLUDE: {
        const char *why = pattern_problem(v);
        if (why != NULL)
            return cli_usage_error(cmd->name, "invalid value '%s' for --%s: %s", v, name, why);
        if (id == O_INCLUDE) add_pattern(&o->include, &o->n_include, &o->cap_include, v);
        else add_pattern(&o->exclude, &o->n_exclude, &o->cap_exclude, v);
        return 0;
    }
    case O_FORMAT: return set_format(o, cmd, v);
    case O_WEIGHTS: return set_weights(o, cmd, v);
    default: return 0;
    }
}

static void set_flag(cli_opts *o, int id) {
    /* The normalisation bits this option turns on are collected apart, so
     * that a preset's flags can take them in whatever the order. */
    uint32_t before = o->flags;
    o->flags = 0;
    switch (id) {
    case O_QUIET: o->quiet = 1; break;
    case O_PROGRESS: o->progress = 1; break;
    case O_STATS: o->stats = 1; break;
    case O_JSONL: o->jsonl = 1; break;
    case O_FORCE: o->force = 1; break;
    case O_ALL: o->all = 1; break;
    case O_NOVEL_ONLY: o->novel_only = 1; break;
    case O_NO_LOCK: o->no_lock = 1; break;
    case O_LOWERCASE: o->flags |= MINLSH_NORM_CASEFOLD; break;
    case O_STRIP_PUNCT: o->flags |= MINLSH_NORM_PUNCT; break;
    case O_COLLAPSE_SPACE: o->flags |= MINLSH_NORM_WHITESPACE; break;
    case O_HTML: o->flags |= MINLSH_NORM_HTML; break;
    case O_NFKC: o->flags |= MINLSH_NORM_NFKC; break;
    /* Each brings its ASCII flag, as the library does, so that the flags
     * an index stores are the shingler's. */
    case O_CASEFOLD: o->flags |= MINLSH_NORM_UCASEFOLD | MINLSH_NORM_CASEFOLD; break;
    case O_UNICODE_PUNCT: o->flags |= MINLSH_NORM_UPUNCT | MINLSH_NORM_PUNCT; break;
    case O_UNICODE_SPACE: o->flags |= MINLSH_NORM_UWHITESPACE | MINLSH_NORM_WHITESPACE; break;
    case O_FOLD_DIGITS: o->flags |= MINLSH_NORM_DIGITS; break;
    case O_CJK_WORDS: o->flags |= MINLSH_NORM_CJK_WORDS; break;
    case O_NORMALIZE: /* every normalisation but --html */
        o->flags |= MINLSH_NORM_CASEFOLD | MINLSH_NORM_PUNCT | MINLSH_NORM_WHITESPACE |
                    MINLSH_NORM_UNICODE;
        break;
    default: break;
    }
    o->flags_added |= o->flags;
    o->flags |= before;
}

void opts_describe_presets(cli_buf *b) {
    uint32_t i, n = minlsh_preset_count();
    for (i = 0; i < n; i++) {
        minlsh_preset p = MINLSH_PRESET_INIT;
        if (minlsh_preset_get(&p, i) != 0) continue;
        if (i > 0) buf_adds(b, ", ");
        buf_adds(b, p.name);
    }
}

/* Fill the options not given from the preset named by --preset. */
static int apply_preset(cli_opts *o, const cli_command *cmd) {
    const uint64_t given = o->given;
    const minlsh_preset *p = &o->preset;
    int rc;
    o->preset.version = MINLSH_PRESET_VERSION;
    rc = minlsh_preset_find(&o->preset, o->preset_name);
    if (rc == MINLSH_E_NOTFOUND) {
        cli_buf names = {NULL, 0, 0};
        buf_adds(&names, "one of ");
        opts_describe_presets(&names);
        buf_adds(&names, " (minlsh params --list-presets)");
        rc = bad_value(cmd, "preset", o->preset_name, names.p);
        buf_free(&names);
        return rc;
    }
    if (rc != 0) cli_die_lib("preset", rc);
    if (!(given & OPT(O_SHINGLE))) {
        o->unit = p->unit;
        o->shingle_k = p->shingle_k;
    }
    o->flags = p->flags | o->flags_added;
    if (!(given & OPT(O_THRESHOLD))) o->threshold = p->threshold;
    if (!(given & OPT(O_NUM_PERM))) {
        o->num_perm = p->num_perm;
        /* A banding given in part keeps the preset's other half; with
         * --num-perm the preset's banding no longer fits and is left out. */
        if (!(given & OPT(O_BANDS))) o->bands = p->bands;
        if (!(given & OPT(O_ROWS))) o->rows = p->rows;
        o->banding_from_preset = !(given & (OPT(O_BANDS) | OPT(O_ROWS)));
        o->given |= OPT(O_BANDS) | OPT(O_ROWS);
    }
    o->given |= OPT(O_SHINGLE) | OPT(O_THRESHOLD) | OPT(O_NUM_PERM);
    return 0;
}

static const opt_spec *find_spec(const char *name, size_t len) {
    size_t i;
    for (i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (strlen(specs[i].name) == len && strncmp(specs[i].name, name, len) == 0)
            return &specs[i];
    return NULL;
}

/* One option argument at argv[*i]. Returns 0, CLI_USAGE, or -1 for --help. */
static int parse_option(cli_opts *o, const cli_command *cmd, int argc,
                        char **argv, int *i) {
    const char *arg = argv[*i], *name, *eq, *value = NULL;
    const opt_spec *spec;
    size_t len;
    if (strcmp(arg, "-h") == 0) arg = "--help";
    else if (strcmp(arg, "-q") == 0) arg = "--quiet";
    if (arg[1] != '-') return cli_usage_error(cmd->name, "unknown option '%s'", arg);
    name = arg + 2;
    eq = strchr(name, '=');
    len = eq ? (size_t)(eq - name) : strlen(name);
    spec = find_spec(name, len);
    if (spec == NULL || !(cmd->allowed & OPT(spec->id)))
        return cli_usage_error(cmd->name, "unknown option '--%.*s'", (int)len, name);
    if (spec->id == O_HELP) return -1;
    o->given |= OPT(spec->id);
    if (!spec->takes_value) {
        if (eq) return cli_usage_error(cmd->name, "option '--%s' takes no value", spec->name);
        set_flag(o, spec->id);
        return 0;
    }
    if (eq) value = eq + 1;
    else if (*i + 1 < argc) value = argv[++*i];
    else return cli_usage_error(cmd->name, "option '--%s' needs a value", spec->name);
    return set_value(o, cmd, spec->id, spec->name, value);
}

int opts_parse(cli_opts *o, const cli_command *cmd, int argc, char **argv) {
    int i, rc, only_args = 0;
    o->args = xcalloc((size_t)argc + 1, sizeof *o->args);
    o->n_args = 0;
    for (i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (only_args || arg[0] != '-' || arg[1] == '\0') {
            o->args[o->n_args++] = argv[i];
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_args = 1;
            continue;
        }
        if ((rc = parse_option(o, cmd, argc, argv, &i)) != 0) return rc;
    }
    if (o->n_args < cmd->min_args)
        return cli_usage_error(cmd->name, "missing arguments: expected %s",
                               cmd->args);
    if (cmd->max_args >= 0 && o->n_args > cmd->max_args)
        return cli_usage_error(cmd->name, "unexpected argument '%s'",
                               o->args[cmd->max_args]);
    if ((o->given & OPT(O_KEY)) && (o->given & OPT(O_KEY_FILE)))
        return cli_usage_error(cmd->name, "--key and --key-file exclude each other");
    if ((o->given & OPT(O_CJK_WORDS)) && (o->given & OPT(O_NO_CJK_WORDS)))
        return cli_usage_error(cmd->name, "--cjk-words and --no-cjk-words exclude each other");
    if ((o->given & OPT(O_PRESET)) && (rc = apply_preset(o, cmd)) != 0) return rc;
    /* after every flag, so that it wins over --normalize too */
    if (o->given & OPT(O_NO_CJK_WORDS)) o->flags &= ~(uint32_t)MINLSH_NORM_CJK_WORDS;
    if ((cmd->allowed & OPT(O_KEY_FILE)) && !(o->given & (OPT(O_KEY) | OPT(O_KEY_FILE)))) {
        const char *env = getenv("MINLSH_KEY_FILE");
        if (env != NULL && *env != '\0' &&
            (rc = read_key_file(o, cmd, "MINLSH_KEY_FILE", env)) != 0)
            return rc;
    }
    shingler_max_bytes = o->max_doc_size;
    return 0;
}

minlsh_shingler *cli_shingler_new(uint32_t unit, uint32_t k, uint32_t flags,
                                  const uint8_t *key, uint64_t *config_id) {
    minlsh_shingler_options so;
    minlsh_shingler *sh = NULL;
    int rc;
    minlsh_shingler_options_init(&so, MINLSH_SHINGLER_OPTIONS_VERSION);
    so.unit = unit;
    so.k = k;
    so.flags = flags;
    so.key = key;
    so.max_document_bytes = shingler_max_bytes;
    if ((rc = minlsh_shingler_new(&sh, &so, NULL)) != 0) cli_die_lib("shingler", rc);
    if (config_id != NULL && (rc = minlsh_shingler_config_id(config_id, sh)) != 0)
        cli_die_lib("shingler", rc);
    return sh;
}

const char *opts_scheme_name(uint32_t scheme) {
    return scheme == MINLSH_SCHEME_OPH ? "oph" : "classic";
}

int opts_parse_scheme(const char *s, uint32_t *scheme) {
    if (strcmp(s, "classic") == 0) *scheme = MINLSH_SCHEME_CLASSIC;
    else if (strcmp(s, "oph") == 0) *scheme = MINLSH_SCHEME_OPH;
    else return -1;
    return 0;
}

minlsh_family *cli_family_new(uint32_t k, uint64_t seed, uint32_t scheme) {
    minlsh_family *family = NULL;
    int rc = minlsh_family_new_scheme(&family, k, seed, scheme, NULL);
    if (rc != 0) cli_die_lib("MinHash family", rc);
    return family;
}

int opts_plan(const cli_opts *o, const char *cmd, int recall, uint32_t *bands,
              uint32_t *rows, const char **plan) {
    minlsh_plan_options po;
    uint32_t k = o->num_perm;
    int rc;
    (void)recall; /* every plan is a recall plan */
    if (o->given & (OPT(O_BANDS) | OPT(O_ROWS))) {
        uint32_t b = o->bands, r = o->rows;
        if (!(o->given & OPT(O_BANDS))) b = k / r;
        if (!(o->given & OPT(O_ROWS))) r = k / b;
        if (b == 0 || r == 0)
            return cli_usage_error(cmd, "--%s %u is more than --num-perm %u",
                                   b == 0 ? "rows" : "bands",
                                   (unsigned)(b == 0 ? r : b), (unsigned)k);
        if ((uint64_t)b * r > k)
            return cli_usage_error(cmd,
                                   "%u bands of %u rows need %llu hash values, "
                                   "more than --num-perm %u",
                                   (unsigned)b, (unsigned)r,
                                   (unsigned long long)b * r, (unsigned)k);
        *bands = b;
        *rows = r;
        *plan = o->banding_from_preset ? "preset" : "manual";
        if (strcmp(cmd, "params") != 0 && !o->banding_from_preset) {
            /* params prints the probability anyway, and a preset's banding
             * is the published one, whatever its S-curve. */
            double p = 0;
            if (minlsh_plan_probability(&p, b, r, o->threshold) == 0 &&
                p < CLI_PLAN_WARN)
                cli_msg("%s: warning: with %u bands of %u rows a pair at the threshold "
                        "%g becomes a candidate with probability %.4f only (below %g)",
                        cmd, (unsigned)b, (unsigned)r, o->threshold, p, CLI_PLAN_WARN);
        }
        return 0;
    }
    minlsh_plan_options_init(&po, MINLSH_PLAN_OPTIONS_VERSION);
    po.mode = MINLSH_PLAN_RECALL;
    po.k = k;
    po.threshold = o->threshold;
    po.target_recall = CLI_PLAN_TARGET;
    rc = minlsh_plan_compute(bands, rows, NULL, NULL, &po);
    if (rc != 0)
        return cli_usage_error(cmd,
                               "no banding of %u hash values reaches recall %g "
                               "at threshold %g (%s); use a larger --num-perm or "
                               "give --bands and --rows",
                               (unsigned)k, CLI_PLAN_TARGET, o->threshold,
                               minlsh_strerror(rc));
    *plan = "recall";
    return 0;
}
