/*
 * util.c: checked allocation, growable buffers, messages, the guard of
 * mapped files, clocks and number formatting for the minlsh command.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t input_failures;

/* The kinds of per-input messages seen so far, with their counts. */
typedef struct msg_kind {
    char *name;
    int error;
    uint64_t count;
} msg_kind;
static msg_kind *kinds;
static size_t n_kinds, cap_kinds;
static uint64_t warnings[CLI_W_COUNT];
static int quiet_warnings;

/* ---- allocation --------------------------------------------------------- */

void cli_die_nomem(void) {
    fputs("minlsh: out of memory\n", stderr);
    exit(CLI_FAILED);
}

void *xmalloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (p == NULL) cli_die_nomem();
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) cli_die_nomem();
    return p;
}

void *xrealloc(void *p, size_t size) {
    void *q = realloc(p, size ? size : 1);
    if (q == NULL) cli_die_nomem();
    return q;
}

void *xreallocarray(void *p, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size) cli_die_nomem();
    return xrealloc(p, n * size);
}

char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

void xgrow(void **p, size_t *cap, size_t need, size_t size) {
    size_t c = *cap;
    if (need <= c) return;
    if (c < 16) c = 16;
    while (c < need) {
        if (c > SIZE_MAX / 2) cli_die_nomem();
        c *= 2;
    }
    *p = xreallocarray(*p, c, size);
    *cap = c;
}

/* ---- buffers ------------------------------------------------------------ */

void buf_reserve(cli_buf *b, size_t extra) {
    void *p = b->p;
    if (extra > SIZE_MAX - b->n - 1) cli_die_nomem();
    xgrow(&p, &b->cap, b->n + extra + 1, 1);
    b->p = p;
}

void buf_add(cli_buf *b, const void *data, size_t n) {
    buf_reserve(b, n);
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void buf_addc(cli_buf *b, char c) {
    buf_reserve(b, 1);
    b->p[b->n++] = c;
    b->p[b->n] = '\0';
}

void buf_adds(cli_buf *b, const char *s) { buf_add(b, s, strlen(s)); }

/* Formats straight into the buffer's free room and formats again only when
 * that was too short (no separate measuring pass into a null buffer). */
void buf_printf(cli_buf *b, const char *fmt, ...) {
    va_list ap;
    size_t room;
    int len;
    buf_reserve(b, 64);
    room = b->cap - b->n;
    va_start(ap, fmt);
    len = vsnprintf(b->p + b->n, room, fmt, ap);
    va_end(ap);
    if (len < 0) {
        b->p[b->n] = '\0';
        return;
    }
    if ((size_t)len >= room) {
        buf_reserve(b, (size_t)len);
        va_start(ap, fmt);
        vsnprintf(b->p + b->n, (size_t)len + 1, fmt, ap);
        va_end(ap);
    }
    b->n += (size_t)len;
}

void buf_clear(cli_buf *b) {
    b->n = 0;
    if (b->p) b->p[0] = '\0';
}

void buf_free(cli_buf *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* ---- messages ----------------------------------------------------------- */

static void vmsg(const char *where, uint64_t line, const char *fmt, va_list ap) {
    /* Flush our own output first so that the order of stdout and stderr
     * makes sense when both go to a terminal. */
    fflush(stdout);
    progress_interrupt();
    fputs("minlsh: ", stderr);
    if (where != NULL) {
        if (line > 0) fprintf(stderr, "%s:%llu: ", where, (unsigned long long)line);
        else fprintf(stderr, "%s: ", where);
    }
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_msg(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmsg(NULL, 0, fmt, ap);
    va_end(ap);
}

/* Count one more message of this kind; 1 if it is to be printed. */
static int count_kind(const char *name, int error) {
    size_t i;
    void *v;
    for (i = 0; i < n_kinds; i++)
        if (kinds[i].error == error && strcmp(kinds[i].name, name) == 0)
            return ++kinds[i].count <= CLI_MSG_CAP;
    v = kinds;
    xgrow(&v, &cap_kinds, n_kinds + 1, sizeof *kinds);
    kinds = v;
    kinds[n_kinds].name = xstrdup(name);
    kinds[n_kinds].error = error;
    kinds[n_kinds].count = 1;
    n_kinds++;
    return 1;
}

void cli_input_error(const char *where, uint64_t line, const char *fmt, ...) {
    va_list ap;
    input_failures++;
    if (!count_kind(fmt, 1)) return;
    va_start(ap, fmt);
    vmsg(where, line, fmt, ap);
    va_end(ap);
}

void cli_input_error_as(const char *kind, const char *where, uint64_t line,
                        const char *fmt, ...) {
    va_list ap;
    input_failures++;
    if (!count_kind(kind, 1)) return;
    va_start(ap, fmt);
    vmsg(where, line, fmt, ap);
    va_end(ap);
}

static const struct {
    const char *kind;   /* for "... and N more such warnings (KIND)" */
    const char *tally1; /* for the count at the end: one, several */
    const char *tallyn;
} warning_names[CLI_W_COUNT] = {
    {"empty document", "1 empty document", "%llu empty documents"},
    {"larger than --max-doc-size", "1 document larger than --max-doc-size skipped",
     "%llu documents larger than --max-doc-size skipped"},
    {"invalid UTF-8", "1 document with invalid UTF-8 read as bytes",
     "%llu documents with invalid UTF-8 read as bytes"},
};

void cli_doc_warning(int kind, const char *where, uint64_t line, const char *fmt,
                     ...) {
    va_list ap;
    warnings[kind]++;
    if (quiet_warnings || warnings[kind] > CLI_MSG_CAP) return;
    va_start(ap, fmt);
    vmsg(where, line, fmt, ap);
    va_end(ap);
}

uint64_t cli_doc_warnings(int kind) { return warnings[kind]; }

void cli_set_quiet(int quiet) { quiet_warnings = quiet; }

void cli_messages_end(void) {
    cli_buf b = {NULL, 0, 0};
    size_t i;
    int k;
    for (i = 0; i < n_kinds; i++) {
        if (kinds[i].count > CLI_MSG_CAP)
            cli_msg("... and %llu more such errors (%s)",
                    (unsigned long long)(kinds[i].count - CLI_MSG_CAP), kinds[i].name);
        free(kinds[i].name);
    }
    free(kinds);
    kinds = NULL;
    n_kinds = cap_kinds = 0;
    for (k = 0; k < CLI_W_COUNT; k++) {
        if (!quiet_warnings && warnings[k] > CLI_MSG_CAP)
            cli_msg("... and %llu more such warnings (%s)",
                    (unsigned long long)(warnings[k] - CLI_MSG_CAP),
                    warning_names[k].kind);
    }
    for (k = 0; k < CLI_W_COUNT; k++) {
        if (warnings[k] == 0) continue;
        buf_adds(&b, b.n ? "; " : "");
        if (warnings[k] == 1) buf_adds(&b, warning_names[k].tally1);
        else buf_printf(&b, warning_names[k].tallyn, (unsigned long long)warnings[k]);
    }
    if (b.n > 0) cli_msg("%s", b.p);
    buf_free(&b);
}

uint64_t cli_input_failures(void) { return input_failures; }

void cli_die_lib(const char *what, int rc) {
    if (rc == MINLSH_E_NOMEM) cli_die_nomem();
    cli_msg("%s: %s (%s)", what, minlsh_strerror(rc), minlsh_error_name(rc));
    exit(CLI_FAILED);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fputs("minlsh: ", stderr);
    if (cmd != NULL) fprintf(stderr, "%s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fprintf(stderr, "Try 'minlsh %s%s--help' for more information.\n",
            cmd ? cmd : "", cmd ? " " : "");
    return CLI_USAGE;
}

int cli_finish_stdout(int status) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_msg("error writing the output: %s", strerror(errno));
        return CLI_FAILED;
    }
    return status;
}

/* ---- time, files, numbers ----------------------------------------------- */

const char *cli_plural(uint64_t n) { return n == 1 ? "" : "s"; }

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- mapped files --------------------------------------------------------- */

/* Formatted beforehand: a signal handler may only write it. */
static char mapped_msg[4352];
static size_t mapped_msg_len;

static void mapped_file_changed(int sig) {
    ssize_t n;
    (void)sig;
    n = write(2, mapped_msg, mapped_msg_len);
    (void)n;
    _exit(CLI_FAILED);
}

void cli_guard_mapped(const char *path) {
    struct sigaction sa;
    int n = snprintf(mapped_msg, sizeof mapped_msg,
                     "minlsh: %s: damaged index: the file changed while this process had it "
                     "mapped (another program truncated or rewrote it in place; minlsh's own "
                     "saves replace it by renaming, which a mapping survives)\n",
                     path);
    if (n < 0) return;
    mapped_msg_len = (size_t)n < sizeof mapped_msg ? (size_t)n : sizeof mapped_msg - 1;
    mapped_msg[mapped_msg_len - 1] = '\n';
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = mapped_file_changed;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGBUS, &sa, NULL);
}

void cli_format_bytes(char out[32], uint64_t bytes) {
    static const char *const units[] = {"GiB", "MiB", "KiB"};
    int i;
    for (i = 0; i < 3; i++) {
        uint64_t u = UINT64_C(1) << (10 * (3 - i));
        if (bytes < u) continue;
        if (bytes % u == 0)
            snprintf(out, 32, "%llu %s", (unsigned long long)(bytes / u), units[i]);
        else
            snprintf(out, 32, "%.1f %s", (double)bytes / (double)u, units[i]);
        return;
    }
    snprintf(out, 32, "%llu byte%s", (unsigned long long)bytes, cli_plural(bytes));
}

const char *cli_dir_write_error(int err) {
    static const char *const not_writable = "not writable (permission denied)";
    switch (err) {
    case ENOENT: return "no such directory";
    case ENOTDIR: return "not a directory";
    case EACCES:
    case EPERM: return not_writable;
    case EROFS: return "not writable (a read-only file system)";
    case ENOSPC: return "the disk is full";
#if defined(EDQUOT)
    case EDQUOT: return "the disk quota is used up";
#endif
    case EFBIG: return "past the file size limit (ulimit -f)";
    default: return strerror(err);
    }
}

void cli_format_double(char out[32], double x) {
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(out, 32, "%.*g", prec, x);
        if (strtod(out, NULL) == x) break;
    }
    if (strpbrk(out, ".eEn") == NULL) strcat(out, ".0");
}
