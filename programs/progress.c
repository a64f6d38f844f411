/*
 * progress.c: one status line on standard error, rewritten in place (\r) at
 * most five times a second: documents, megabytes read, speed, elapsed time,
 * and the time left when the total size is known. On when standard error is
 * a terminal or with --progress; never with --quiet.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <string.h>
#include <unistd.h>

#define PROGRESS_INTERVAL 0.2 /* seconds between redraws */

static size_t last_len;

void progress_init(progress *p, const cli_opts *o, const input_list *in,
                   const char *what) {
    memset(p, 0, sizeof *p);
    p->on = !o->quiet && (o->progress || isatty(2));
    p->start = cli_now();
    p->last = p->start - PROGRESS_INTERVAL; /* draw at the first update */
    p->total = in != NULL && in->total_known ? in->total_bytes : 0;
    p->what = what;
}

static void format_duration(char *out, size_t cap, double s) {
    unsigned long t = s > 0 ? (unsigned long)(s + 0.5) : 0;
    if (t >= 3600)
        snprintf(out, cap, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, cap, "%lu:%02lu", t / 60, t % 60);
}

static void draw(progress *p, double now) {
    double elapsed = now - p->start, mb = (double)p->bytes / 1e6;
    double rate = elapsed > 0 ? mb / elapsed : 0;
    char line[256], el[32], eta[32];
    size_t len;
    format_duration(el, sizeof el, elapsed);
    len = (size_t)snprintf(line, sizeof line,
                           "minlsh: %s %llu documents, %.1f MB, %.1f MB/s, %s elapsed",
                           p->what, (unsigned long long)p->docs, mb, rate, el);
    if (p->total > 0 && p->bytes > 0 && p->bytes <= p->total && rate > 0 &&
        len < sizeof line) {
        format_duration(eta, sizeof eta, ((double)(p->total - p->bytes) / 1e6) / rate);
        len += (size_t)snprintf(line + len, sizeof line - len, ", ETA %s (%.0f%%)",
                                eta, 100.0 * (double)p->bytes / (double)p->total);
    }
    if (len >= sizeof line) len = sizeof line - 1;
    fprintf(stderr, "\r%s", line);
    /* Wipe what a longer previous line left behind. */
    if (last_len > len) fprintf(stderr, "%*s", (int)(last_len - len), "");
    fflush(stderr);
    last_len = len;
    p->shown = 1;
}

void progress_update(progress *p, uint64_t docs, uint64_t bytes) {
    double now;
    p->docs = docs;
    p->bytes = bytes;
    if (!p->on) return;
    now = cli_now();
    if (now - p->last < PROGRESS_INTERVAL) return;
    p->last = now;
    draw(p, now);
}

void progress_interrupt(void) {
    if (last_len == 0) return;
    fprintf(stderr, "\r%*s\r", (int)last_len, "");
    last_len = 0;
}

void progress_done(progress *p) {
    if (!p->on || !p->shown) return;
    fprintf(stderr, "\r%*s\r", (int)last_len, "");
    fflush(stderr);
    last_len = 0;
    p->shown = 0;
}
