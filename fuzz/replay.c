/*
 * Replays fuzz inputs without libFuzzer: linked with one fuzz target, it
 * feeds it every file named on the command line and every file in every
 * directory named there (not recursive), in name order, so a failure is
 * reproducible. A failing input aborts the program (the target's checks
 * abort) after its name was printed; otherwise the last line is
 *   "<target>: N passed, 0 failed"
 * in the format tests/run.sh adds up. `make check` runs it over the
 * committed corpora, `make check-sanitize` under ASan and UBSan.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fuzz.h"

#include <dirent.h>
#include <sys/stat.h>

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL, *exact;
    size_t len = 0, cap = 0, n;
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    for (;;) {
        if (len == cap) {
            uint8_t *nb;
            cap = cap ? 2 * cap : 4096;
            nb = (uint8_t *)realloc(buf, cap);
            if (nb == NULL) {
                fclose(f);
                free(buf);
                fprintf(stderr, "replay: out of memory\n");
                return 1;
            }
            buf = nb;
        }
        n = fread(buf + len, 1, cap - len, f);
        if (n == 0) break;
        len += n;
    }
    fclose(f);
    /* An exact-size copy, so that ASan sees a read one past the input. */
    exact = (uint8_t *)malloc(len > 0 ? len : 1);
    if (exact == NULL) {
        free(buf);
        return 1;
    }
    if (len > 0) memcpy(exact, buf, len);
    free(buf);
    printf("input %s (%zu bytes)\n", path, len);
    fflush(stdout);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, long *count) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    int bad = 0;
    if (d == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        return 1;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len;
        char *p;
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            char **nn;
            cap = cap ? 2 * cap : 64;
            nn = (char **)realloc(names, cap * sizeof *names);
            if (nn == NULL) {
                bad = 1;
                break;
            }
            names = nn;
        }
        len = strlen(dir) + strlen(e->d_name) + 2;
        p = (char *)malloc(len);
        if (p == NULL) {
            bad = 1;
            break;
        }
        snprintf(p, len, "%s/%s", dir, e->d_name);
        names[n++] = p;
    }
    closedir(d);
    if (n > 0) qsort(names, n, sizeof *names, by_name);
    for (i = 0; i < n; i++) {
        struct stat st;
        if (!bad && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            bad |= replay_file(names[i]);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return bad;
}

int main(int argc, char **argv) {
    const char *name = argc > 0 ? strrchr(argv[0], '/') : NULL;
    long count = 0;
    int i, bad = 0;
    name = name != NULL ? name + 1 : (argc > 0 ? argv[0] : "replay");
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", name);
        return 2;
    }
    for (i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: cannot open %s\n", argv[i]);
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            bad |= replay_dir(argv[i], &count);
        } else {
            bad |= replay_file(argv[i]);
            count++;
        }
    }
    if (count == 0) {
        fprintf(stderr, "replay: no inputs\n");
        bad = 1;
    }
    printf("%s: %ld passed, %d failed\n", name, count - (bad ? 1 : 0), bad);
    return bad;
}
