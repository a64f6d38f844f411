/*
 * input.c: turning the PATH arguments into a list of files.
 *
 * A PATH given on the command line is followed wherever it points (a
 * symbolic link to a directory given by name is walked). Inside a directory,
 * entries are visited in byte order of their names, so the document order
 * (and with it every output) does not depend on the file system; symbolic
 * links to files are followed, symbolic links to directories are not (no
 * loops, no surprises), and other special files are skipped. --include and
 * --exclude choose among the files of a walk by their base names.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void add_file(input_list *in, const char *path, const struct stat *st,
                     int is_stdin) {
    void *v = in->v;
    input_file *f;
    xgrow(&v, &in->cap, in->n + 1, sizeof *in->v);
    in->v = v;
    f = &in->v[in->n++];
    f->path = xstrdup(path);
    f->is_stdin = is_stdin;
    f->size = 0;
    if (st != NULL && S_ISREG(st->st_mode)) {
        f->size = (uint64_t)st->st_size;
        in->total_bytes += f->size;
    } else
        in->total_known = 0;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir (without . and ..), sorted; NULL on error (reported). */
static char **list_dir(const char *path, size_t *n_out) {
    DIR *d = opendir(path);
    struct dirent *e;
    char **names = NULL;
    void *v;
    size_t n = 0, cap = 0;
    if (d == NULL) {
        cli_input_error(path, 0, "cannot open directory: %s", strerror(errno));
        return NULL;
    }
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        v = names;
        xgrow(&v, &cap, n + 1, sizeof *names);
        names = v;
        names[n++] = xstrdup(e->d_name);
        errno = 0;
    }
    if (errno != 0)
        cli_input_error(path, 0, "cannot read directory: %s", strerror(errno));
    closedir(d);
    if (n > 1) qsort(names, n, sizeof *names, cmp_names);
    *n_out = n;
    return names;
}

/* A file met in a directory walk: kept by --include and --exclude? */
static int selected(const cli_opts *o, const char *name) {
    size_t i;
    int in = o->n_include == 0;
    for (i = 0; i < o->n_include && !in; i++)
        in = fnmatch(o->include[i], name, 0) == 0;
    for (i = 0; i < o->n_exclude && in; i++)
        in = fnmatch(o->exclude[i], name, 0) != 0;
    return in;
}

static void walk_dir(input_list *in, const char *dir, const cli_opts *o) {
    size_t n = 0, i, dl = strlen(dir), base;
    char **names = list_dir(dir, &n);
    cli_buf path = {NULL, 0, 0};
    if (names == NULL) return;
    for (i = 0; i < n; i++) {
        struct stat st;
        buf_clear(&path);
        buf_adds(&path, dir);
        if (dl == 0 || dir[dl - 1] != '/') buf_addc(&path, '/');
        base = path.n;
        buf_adds(&path, names[i]);
        free(names[i]);
        if (lstat(path.p, &st) != 0) {
            cli_input_error_as("unreadable input", path.p, 0, "%s", strerror(errno));
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            /* Follow links to files; skip links to directories and dangling
             * links (a dangling link is reported: it names a missing file). */
            if (stat(path.p, &st) != 0) {
                cli_input_error_as("unreadable input", path.p, 0, "%s", strerror(errno));
                continue;
            }
            if (S_ISREG(st.st_mode) && selected(o, path.p + base))
                add_file(in, path.p, &st, 0);
            continue;
        }
        if (S_ISDIR(st.st_mode)) walk_dir(in, path.p, o);
        else if (S_ISREG(st.st_mode) && selected(o, path.p + base))
            add_file(in, path.p, &st, 0);
    }
    free(names);
    buf_free(&path);
}

void input_walk(input_list *out, char **paths, int n, const cli_opts *o) {
    int i;
    memset(out, 0, sizeof *out);
    out->total_known = 1;
    for (i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") == 0) {
            if (fstat(0, &st) == 0) add_file(out, "-", &st, 1);
            else add_file(out, "-", NULL, 1);
            continue;
        }
        if (stat(paths[i], &st) != 0) {
            cli_input_error_as("unreadable input", paths[i], 0, "%s", strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode)) walk_dir(out, paths[i], o);
        else add_file(out, paths[i], &st, 0);
    }
}

void input_free(input_list *in) {
    size_t i;
    for (i = 0; i < in->n; i++) free(in->v[i].path);
    free(in->v);
    memset(in, 0, sizeof *in);
}

const char *input_where(const input_file *f) {
    return f->is_stdin ? "standard input" : f->path;
}
