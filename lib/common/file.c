/* Files: the atomic writer, whole-file reads, read-only mappings, the
 * header shared by every minlsh file, and scratch files (minlsh__tmpfile
 * and the public minlsh_scratch around one). POSIX. */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <dirent.h>
#include <time.h>
#include <stdatomic.h>
#include <unistd.h>

#define MINLSH__WRITE_BUF (1u << 16)

/* ---- writer ------------------------------------------------------------- */

void minlsh__writer_init_buffer(minlsh__writer *w, void *dst, size_t cap) {
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->dst = (uint8_t *)dst;
    w->cap = dst != NULL ? cap : 0;
    minlsh__sum_init(&w->sum);
}

static char *minlsh__strdup_cat(const minlsh_allocator *a, const char *s,
                                const char *suffix) {
    size_t n1 = strlen(s), n2 = strlen(suffix), total;
    char *out;
    if (minlsh__add_size(&total, n1, n2 + 1) != 0) return NULL;
    out = (char *)minlsh__malloc(a, total);
    if (out == NULL) return NULL;
    memcpy(out, s, n1);
    memcpy(out + n1, suffix, n2 + 1);
    return out;
}

/* The directory part of path ("." for a bare name, "/" for "/name"). */
static char *minlsh__dir_of(const minlsh_allocator *a, const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir;
    size_t n;
    if (slash == NULL) return minlsh__strdup_cat(a, ".", "");
    n = (size_t)(slash - path);
    if (n == 0) n = 1; /* "/file" */
    dir = (char *)minlsh__malloc(a, n + 1);
    if (dir != NULL) {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    return dir;
}

/* Readlink into a fresh string; NULL with errno set on failure. */
static char *minlsh__readlink_dup(const minlsh_allocator *a, const char *path, size_t hint) {
    size_t cap = hint > 0 && hint < ((size_t)1 << 20) ? hint + 1 : 256;
    for (;;) {
        char *t = (char *)minlsh__malloc(a, cap);
        ssize_t n;
        if (t == NULL) {
            errno = ENOMEM;
            return NULL;
        }
        n = readlink(path, t, cap);
        if (n < 0) {
            int err = errno;
            minlsh__free(a, t);
            errno = err;
            return NULL;
        }
        if ((size_t)n < cap) {
            t[n] = '\0';
            return t;
        }
        minlsh__free(a, t);
        if (cap > ((size_t)1 << 24)) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        cap *= 2;
    }
}

/* Symbolic links are followed as the kernel would, at most this many. */
#define MINLSH__SYMLINK_HOPS 40

int minlsh__path_resolve(const minlsh_allocator *a, const char *path, char **out) {
    char *cur;
    int hops;
    *out = NULL;
    if (path == NULL) return MINLSH_E_NULL;
    cur = minlsh__strdup_cat(a, path, "");
    if (cur == NULL) return MINLSH_E_NOMEM;
    for (hops = 0; hops <= MINLSH__SYMLINK_HOPS; hops++) {
        struct stat st;
        const char *slash;
        char *target, *next;
        /* Not there, or not readable: the path as it is (the open that
         * follows reports what is wrong). */
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            *out = cur;
            return 0;
        }
        target = minlsh__readlink_dup(a, cur, (size_t)st.st_size);
        if (target == NULL) {
            int err = errno;
            minlsh__free(a, cur);
            errno = err;
            return err == ENOMEM ? MINLSH_E_NOMEM : MINLSH_E_IO;
        }
        slash = strrchr(cur, '/');
        if (target[0] == '/' || slash == NULL) {
            next = target;
        } else {
            /* A relative target is relative to the link's directory. */
            size_t dn = (size_t)(slash - cur) + 1, tn = strlen(target), total;
            next = NULL;
            if (minlsh__add_size(&total, dn, tn + 1) == 0)
                next = (char *)minlsh__malloc(a, total);
            if (next != NULL) {
                memcpy(next, cur, dn);
                memcpy(next + dn, target, tn + 1);
            }
            minlsh__free(a, target);
            if (next == NULL) {
                minlsh__free(a, cur);
                return MINLSH_E_NOMEM;
            }
        }
        minlsh__free(a, cur);
        cur = next;
    }
    minlsh__free(a, cur);
    errno = ELOOP;
    return MINLSH_E_IO;
}

/* Open a file that is written in place rather than replaced (a device, a
 * FIFO: replacing it by a regular file would break whatever it was for). */
static int minlsh__writer_open_through(minlsh__writer *w) {
    do w->fd = open(w->path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    while (w->fd < 0 && errno == EINTR);
    if (w->fd < 0) {
        int err = errno;
        minlsh__writer_abort(w);
        errno = err;
        return MINLSH_E_IO;
    }
    w->through = 1;
    return 0;
}

/* Give the new file fd the mode and group of the file it replaces (or of
 * like). A group that cannot be kept takes the group's permissions with it,
 * so a replacement never reaches more people than the file did. */
static int minlsh__writer_keep_mode(int fd, const struct stat *old) {
    mode_t mode = old->st_mode & 07777;
    struct stat now;
    if (fstat(fd, &now) != 0) return MINLSH_E_IO;
    if (now.st_gid != old->st_gid && fchown(fd, (uid_t)-1, old->st_gid) != 0)
        mode &= (mode_t)~07070; /* group bits and set-group-id */
    return fchmod(fd, mode) == 0 ? 0 : MINLSH_E_IO;
}

int minlsh__writer_init_file(minlsh__writer *w, const minlsh_allocator *a,
                             const char *path, const char *like) {
    struct stat old;
    int have_old = 0, rc;
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->to_file = 1;
    w->alloc = a;
    minlsh__sum_init(&w->sum);
    if (path == NULL) return MINLSH_E_NULL;
    if (path[0] == '\0') {
        errno = ENOENT;
        return MINLSH_E_IO; /* as open("") would say */
    }
    /* The file a link names is replaced; the link stays a link. */
    if ((rc = minlsh__path_resolve(a, path, &w->path)) != 0) return rc;
    w->buf = (uint8_t *)minlsh__malloc(a, MINLSH__WRITE_BUF);
    if (w->buf == NULL) {
        minlsh__writer_abort(w);
        return MINLSH_E_NOMEM;
    }
    if (stat(w->path, &old) == 0) {
        if (S_ISDIR(old.st_mode)) {
            minlsh__writer_abort(w);
            errno = EISDIR;
            return MINLSH_E_IO;
        }
        if (!S_ISREG(old.st_mode)) return minlsh__writer_open_through(w);
        have_old = 1;
    } else if (like != NULL && stat(like, &old) == 0 && S_ISREG(old.st_mode)) {
        have_old = 1;
    }
    w->tmp = minlsh__strdup_cat(a, w->path, ".tmp-0000000000000000");
    w->dir = minlsh__dir_of(a, w->path);
    if (w->tmp == NULL || w->dir == NULL) {
        minlsh__writer_abort(w);
        return MINLSH_E_NOMEM;
    }
    /* Not mkstemp: it creates 0600 files, and fixing the mode would mean
     * touching the process-wide umask, a race in a threaded program. With
     * O_EXCL and mode 0666 the umask applies as for any file the user makes.
     * The suffix only has to be unlikely to collide; O_EXCL makes it safe. */
    {
        size_t base = strlen(w->tmp) - 16;
        struct timespec ts;
        uint64_t x;
        int attempt;
        clock_gettime(CLOCK_REALTIME, &ts);
        x = (uint64_t)getpid() ^ ((uint64_t)(uintptr_t)w << 16) ^
            ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec;
        for (attempt = 0; attempt < 100 && w->fd < 0; attempt++) {
            static const char hex[] = "0123456789abcdef";
            int i;
            x = minlsh__mix64(x + UINT64_C(0x9E3779B97F4A7C15));
            for (i = 0; i < 16; i++) w->tmp[base + (size_t)i] = hex[(x >> (4 * i)) & 15];
            w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (w->fd < 0 && errno != EEXIST) break;
        }
    }
    if (w->fd < 0) {
        int err = errno;
        minlsh__free(a, w->tmp);
        w->tmp = NULL; /* nothing to unlink */
        minlsh__writer_abort(w);
        errno = err;
        return MINLSH_E_IO;
    }
    if (have_old && minlsh__writer_keep_mode(w->fd, &old) != 0) {
        int err = errno;
        minlsh__writer_abort(w);
        errno = err;
        return MINLSH_E_IO;
    }
    return 0;
}

static void minlsh__writer_flush(minlsh__writer *w) {
    size_t off = 0;
    while (w->err == 0 && off < w->buf_len) {
        ssize_t n = write(w->fd, w->buf + off, w->buf_len - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            w->err = MINLSH_E_IO;
            break;
        }
        off += (size_t)n;
    }
    w->buf_len = 0;
}

void minlsh__writer_put(minlsh__writer *w, const void *p, size_t n) {
    const uint8_t *src = (const uint8_t *)p;
    if (w->err != 0 || n == 0) return;
    minlsh__sum_update(&w->sum, src, n);
    if (!w->to_file) {
        if (w->total < w->cap) {
            size_t room = w->cap - (size_t)w->total;
            memcpy(w->dst + w->total, src, n < room ? n : room);
        }
        w->total += n;
        return;
    }
    w->total += n;
    while (n > 0 && w->err == 0) {
        size_t room = MINLSH__WRITE_BUF - w->buf_len;
        size_t take = n < room ? n : room;
        memcpy(w->buf + w->buf_len, src, take);
        w->buf_len += take;
        src += take;
        n -= take;
        if (w->buf_len == MINLSH__WRITE_BUF) minlsh__writer_flush(w);
    }
}

void minlsh__writer_put64(minlsh__writer *w, uint64_t v) {
    uint8_t b[8];
    minlsh__store64le(b, v);
    minlsh__writer_put(w, b, 8);
}

void minlsh__writer_sum_begin(minlsh__writer *w) { minlsh__sum_init(&w->sum); }

uint64_t minlsh__writer_sum_end(const minlsh__writer *w) {
    return minlsh__sum_final(&w->sum);
}

static void minlsh__writer_release(minlsh__writer *w) {
    if (w->to_file) {
        minlsh__free(w->alloc, w->buf);
        minlsh__free(w->alloc, w->tmp);
        minlsh__free(w->alloc, w->path);
        minlsh__free(w->alloc, w->dir);
        w->buf = NULL;
        w->tmp = NULL;
        w->path = NULL;
        w->dir = NULL;
    }
}

void minlsh__writer_abort(minlsh__writer *w) {
    if (w->to_file) {
        if (w->fd >= 0) close(w->fd);
        w->fd = -1;
        if (w->tmp != NULL) (void)unlink(w->tmp);
    }
    minlsh__writer_release(w);
}

/* fsync the directory dir so the rename itself is durable. */
static int minlsh__fsync_dir(const char *dir) {
    int fd, rc = 0;
    fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = MINLSH_E_IO;
    } else {
        if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) rc = MINLSH_E_IO;
        close(fd);
    }
    return rc;
}

int minlsh__writer_finish(minlsh__writer *w, size_t *n_out) {
    int rc;
    if (!w->to_file) {
        if (w->total > SIZE_MAX) return MINLSH_E_TOOBIG;
        if (n_out != NULL) *n_out = (size_t)w->total;
        if (w->err != 0) return w->err;
        return w->total > w->cap ? MINLSH_E_BUFSIZE : 0;
    }
    minlsh__writer_flush(w);
    rc = w->err;
    if (w->through) {
        /* Devices and FIFOs may not sync; there is nothing to rename. */
        if (rc == 0 && fsync(w->fd) != 0 && errno != EINVAL && errno != EROFS &&
            errno != ENOTSUP)
            rc = MINLSH_E_IO;
        if (close(w->fd) != 0 && rc == 0) rc = MINLSH_E_IO;
        w->fd = -1;
        if (n_out != NULL && rc == 0) *n_out = (size_t)w->total;
        minlsh__writer_release(w);
        return rc;
    }
    if (rc == 0 && fsync(w->fd) != 0) rc = MINLSH_E_IO;
    if (close(w->fd) != 0 && rc == 0) rc = MINLSH_E_IO;
    w->fd = -1;
    if (rc == 0 && rename(w->tmp, w->path) != 0) rc = MINLSH_E_IO;
    if (rc != 0) {
        int err = errno; /* the failing call's, for the caller's message */
        minlsh__writer_abort(w);
        errno = err;
        return rc;
    }
    /* The data is in place; a failed directory fsync only weakens
     * durability after a power cut, but the caller asked for durability.
     * (Nothing is allocated from here on: a MINLSH_E_NOMEM must mean that
     * the old file is untouched.) */
    rc = minlsh__fsync_dir(w->dir);
    if (n_out != NULL) *n_out = (size_t)w->total;
    minlsh__writer_release(w);
    return rc;
}

/* ---- whole-file read and read-only mapping ------------------------------ */

/* Open path for reading: a regular file whose size fits a size_t. Returns 0
 * with *fd open and *size set (the caller closes), or MINLSH_E_IO /
 * MINLSH_E_TOOBIG with nothing open. */
static int minlsh__open_regular(const char *path, int *fd, size_t *size) {
    struct stat st;
    int rc = 0, err = 0;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
     * below); on a regular file the flag changes nothing. */
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (*fd < 0) return MINLSH_E_IO;
    if (fstat(*fd, &st) != 0 || st.st_size < 0) {
        err = errno;
        rc = MINLSH_E_IO;
    } else if (!S_ISREG(st.st_mode)) {
        err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        rc = MINLSH_E_IO;
    } else if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        rc = MINLSH_E_TOOBIG;
    }
    if (rc != 0) {
        close(*fd);
        *fd = -1;
        errno = err;
        return rc;
    }
    *size = (size_t)st.st_size;
    return 0;
}

int minlsh__file_read(const minlsh_allocator *a, const char *path,
                      uint8_t **data, size_t *len) {
    uint8_t *buf;
    size_t size, off = 0;
    int fd, rc;
    *data = NULL;
    *len = 0;
    if (path == NULL) return MINLSH_E_NULL;
    if ((rc = minlsh__open_regular(path, &fd, &size)) != 0) return rc;
    if (size == 0) {
        close(fd);
        return 0; /* an empty file: the parser reports it */
    }
    buf = (uint8_t *)minlsh__malloc(a, size);
    if (buf == NULL) {
        close(fd);
        return MINLSH_E_NOMEM;
    }
    while (off < size) {
        ssize_t n = read(fd, buf + off, size - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            close(fd);
            minlsh__free(a, buf);
            return MINLSH_E_IO;
        }
        if (n == 0) break; /* shrank under us: the parser sees a short file */
        off += (size_t)n;
    }
    close(fd);
    *data = buf;
    *len = off;
    return 0;
}

int minlsh__file_map(const char *path, const uint8_t **data, size_t *len) {
    void *p;
    size_t size;
    int fd, rc;
    *data = NULL;
    *len = 0;
    if (path == NULL) return MINLSH_E_NULL;
    if ((rc = minlsh__open_regular(path, &fd, &size)) != 0) return rc;
    if (size == 0) {
        close(fd);
        return 0; /* nothing to map: the parser reports an empty file */
    }
    p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd); /* the mapping keeps the file open */
    if (p == MAP_FAILED) return MINLSH_E_IO;
    *data = (const uint8_t *)p;
    *len = size;
    return 0;
}

void minlsh__file_unmap(const void *data, size_t len) {
    /* munmap takes a non-const pointer; the pages were never written. */
    if (data != NULL) (void)munmap((void *)(uintptr_t)data, len);
}

/* ---- files appended to in place (journals) ------------------------------- */

int minlsh__file_exists(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0) return 1;
    return errno == ENOENT ? 0 : MINLSH_E_IO;
}

int minlsh__file_stat(const char *path, uint64_t *dev, uint64_t *ino, uint64_t *size) {
    struct stat st;
    if (stat(path, &st) != 0) return errno == ENOENT ? MINLSH_E_NOTFOUND : MINLSH_E_IO;
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    *size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    return 0;
}

int minlsh__file_read_from(const minlsh_allocator *a, const char *path, uint64_t from,
                           uint8_t **data, size_t *len) {
    uint8_t *buf;
    size_t size, n, off = 0;
    int fd, rc;
    *data = NULL;
    *len = 0;
    if ((rc = minlsh__open_regular(path, &fd, &size)) != 0) return rc;
    if ((uint64_t)size <= from) {
        close(fd);
        return 0;
    }
    n = size - (size_t)from;
    buf = (uint8_t *)minlsh__malloc(a, n);
    if (buf == NULL) {
        close(fd);
        return MINLSH_E_NOMEM;
    }
    while (off < n) {
        ssize_t r = pread(fd, buf + off, n - off, (off_t)(from + off));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            close(fd);
            minlsh__free(a, buf);
            return MINLSH_E_IO;
        }
        if (r == 0) break; /* shrank under us: fewer bytes */
        off += (size_t)r;
    }
    close(fd);
    *data = buf;
    *len = off;
    return 0;
}

int minlsh__file_open_at(const char *path, uint64_t keep, int *fd) {
    struct stat st;
    *fd = open(path, O_WRONLY | O_CLOEXEC);
    if (*fd < 0) return MINLSH_E_IO;
    if (fstat(*fd, &st) != 0 ||
        ((uint64_t)st.st_size > keep &&
         (ftruncate(*fd, (off_t)keep) != 0 || fsync(*fd) != 0))) {
        close(*fd);
        *fd = -1;
        return MINLSH_E_IO;
    }
    return 0;
}

int minlsh__fd_write_at(int fd, const void *p, size_t n, uint64_t off) {
    const uint8_t *b = (const uint8_t *)p;
    while (n > 0) {
        ssize_t w = pwrite(fd, b, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return MINLSH_E_IO;
        b += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

int minlsh__fd_sync(int fd) {
    return fdatasync(fd) == 0 ? 0 : MINLSH_E_IO;
}

int minlsh__fd_truncate(int fd, uint64_t len) {
    return ftruncate(fd, (off_t)len) == 0 ? 0 : MINLSH_E_IO;
}

void minlsh__fd_close(int fd) {
    if (fd >= 0) (void)close(fd);
}

int minlsh__file_tail64(const char *path, uint64_t *tail, uint64_t *size) {
    uint8_t b[8];
    size_t len;
    int fd, rc = minlsh__open_regular(path, &fd, &len);
    if (rc != 0) return rc;
    if (len < 8 || pread(fd, b, 8, (off_t)(len - 8)) != 8) rc = MINLSH_E_IO;
    close(fd);
    if (rc != 0) return rc;
    *tail = minlsh__load64le(b);
    *size = len;
    return 0;
}

int minlsh__file_open_rw(const char *path, int writable, int *fd, uint64_t *size) {
    struct stat st;
    do *fd = writable ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666) : open(path, O_RDONLY | O_CLOEXEC);
    while (*fd < 0 && errno == EINTR);
    if (*fd < 0) return MINLSH_E_IO;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return MINLSH_E_IO;
    }
    *size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    return 0;
}

int minlsh__fd_read_at(int fd, void *p, size_t n, uint64_t off) {
    uint8_t *b = (uint8_t *)p;
    while (n > 0) {
        ssize_t r = pread(fd, b, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return MINLSH_E_IO;
        if (r == 0) return MINLSH_E_CORRUPT; /* the file ends before the bytes it should hold */
        b += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

int minlsh__fd_size(int fd, uint64_t *size) {
    struct stat st;
    if (fstat(fd, &st) != 0) return MINLSH_E_IO;
    *size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    return 0;
}

int minlsh__file_rename(const minlsh_allocator *a, const char *from, const char *to) {
    char *dir = minlsh__dir_of(a, to);
    int rc;
    if (dir == NULL) return MINLSH_E_NOMEM;
    rc = rename(from, to) == 0 ? minlsh__fsync_dir(dir) : MINLSH_E_IO;
    minlsh__free(a, dir);
    return rc;
}

/* 1 if name is exactly 16 lowercase hexadecimal digits: the part a
 * temporary file's name gets from minlsh__writer_init_file. */
static int minlsh__is_hex16(const char *name) {
    size_t i;
    for (i = 0; i < 16; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return 0;
    return name[16] == '\0';
}

int minlsh__file_remove_temps(const minlsh_allocator *a, const char *path,
                              const char *const *suffixes, size_t n_suffixes,
                              uint64_t *removed) {
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    size_t bn = strlen(base), i;
    char *dir = minlsh__dir_of(a, path), *full;
    struct dirent *e;
    DIR *d;
    int rc = 0;
    if (dir == NULL) return MINLSH_E_NOMEM;
    d = opendir(dir);
    if (d == NULL) {
        minlsh__free(a, dir);
        return MINLSH_E_IO;
    }
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, base, bn) != 0) continue;
        for (i = 0; i < n_suffixes; i++) {
            const char *rest = e->d_name + bn + strlen(suffixes[i]);
            if (strncmp(e->d_name + bn, suffixes[i], strlen(suffixes[i])) != 0) continue;
            /* what a write names its temporary file, and nothing else:
             * another program's PATH.tmp-notes is left alone */
            if (minlsh__is_hex16(rest) || strcmp(rest, "compact") == 0 ||
                (strncmp(rest, "compact.tmp-", 12) == 0 && minlsh__is_hex16(rest + 12)))
                break;
        }
        if (i == n_suffixes) continue;
        full = slash != NULL ? minlsh__strdup_cat(a, dir, "/") : minlsh__strdup_cat(a, "", "");
        if (full != NULL) {
            char *f2 = minlsh__strdup_cat(a, full, e->d_name);
            minlsh__free(a, full);
            full = f2;
        }
        if (full == NULL) {
            rc = MINLSH_E_NOMEM;
            break;
        }
        if (unlink(full) == 0 && removed != NULL) (*removed)++;
        minlsh__free(a, full);
    }
    closedir(d);
    minlsh__free(a, dir);
    return rc;
}

/* ---- header ------------------------------------------------------------- */

static void minlsh__header_encode(uint8_t out[MINLSH__HEADER_BYTES],
                                  const minlsh__header *h) {
    memset(out, 0, MINLSH__HEADER_BYTES);
    memcpy(out, h->magic, 8);
    minlsh__store32le(out + 8, h->version);
    minlsh__store32le(out + 12, MINLSH__HEADER_BYTES);
    minlsh__store32le(out + 16, h->k);
    minlsh__store32le(out + 20, h->bands);
    minlsh__store32le(out + 24, h->rows);
    minlsh__store32le(out + 28, h->flags);
    minlsh__store64le(out + 32, h->seed);
    minlsh__store64le(out + 40, h->config_id);
    minlsh__store64le(out + 48, h->count);
    minlsh__store64le(out + 56, minlsh__sum64(out, 56));
}

void minlsh__header_write(minlsh__writer *w, const minlsh__header *h) {
    uint8_t b[MINLSH__HEADER_BYTES];
    minlsh__header_encode(b, h);
    minlsh__writer_put(w, b, sizeof b);
    minlsh__writer_sum_begin(w);
}

void minlsh__trailer_write(minlsh__writer *w) {
    minlsh__writer_put64(w, minlsh__writer_sum_end(w));
}

/* Magic, header checksum, version and field sanity: steps 1-4 of the
 * validation order in docs/format.md. */
int minlsh__header_parse(const void *buf, size_t len, const char magic[8],
                         uint32_t max_version, minlsh__header *h) {
    const uint8_t *b = (const uint8_t *)buf;
    if (b == NULL && len > 0) return MINLSH_E_NULL;
    if (len < 8 || memcmp(b, magic, 8) != 0) {
        /* A short prefix of the right magic is a truncated file, not a
         * foreign one. */
        if (len < 8 && len > 0 && memcmp(b, magic, len) == 0) return MINLSH_E_CORRUPT;
        return MINLSH_E_FORMAT;
    }
    if (len < MINLSH__HEADER_BYTES) return MINLSH_E_CORRUPT;
    if (minlsh__load64le(b + 56) != minlsh__sum64(b, 56)) return MINLSH_E_CORRUPT;
    memcpy(h->magic, b, 8);
    h->version = minlsh__load32le(b + 8);
    if (h->version < MINLSH__FORMAT_VERSION || h->version > max_version) return MINLSH_E_FORMAT;
    if (minlsh__load32le(b + 12) != MINLSH__HEADER_BYTES) return MINLSH_E_CORRUPT;
    h->k = minlsh__load32le(b + 16);
    h->bands = minlsh__load32le(b + 20);
    h->rows = minlsh__load32le(b + 24);
    h->flags = minlsh__load32le(b + 28);
    h->seed = minlsh__load64le(b + 32);
    h->config_id = minlsh__load64le(b + 40);
    h->count = minlsh__load64le(b + 48);
    if (h->k == 0 || h->k > MINLSH_FAMILY_K_MAX || h->flags > MINLSH__SCHEME_MAX) return MINLSH_E_CORRUPT;
    return 0;
}

void minlsh__metadata_write(minlsh__writer *w, const void *data, size_t len) {
    minlsh__writer_put64(w, (uint64_t)len);
    minlsh__writer_put(w, data, len);
}

int minlsh__header_read_meta(const void *buf, size_t len, const char magic[8],
                             size_t item_fixed, size_t item_per_k, minlsh__header *h,
                             const uint8_t **payload, const uint8_t **meta,
                             size_t *meta_len) {
    const uint8_t *b = (const uint8_t *)buf;
    size_t items_len, fixed, body_len;
    uint64_t m;
    int rc = minlsh__header_parse(b, len, magic, MINLSH__FORMAT_VERSION, h);
    if (rc != 0) return rc;
    if (h->count > (uint64_t)SIZE_MAX) return MINLSH_E_TOOBIG;
    /* k is 1..1024 here: the item size cannot overflow. */
    if (minlsh__mul_size(&items_len, (size_t)h->count, item_fixed + item_per_k * h->k) != 0)
        return MINLSH_E_CORRUPT;
    /* header + items + metadata length + trailer, before the metadata bytes */
    if (minlsh__add_size(&fixed, items_len, MINLSH__HEADER_BYTES + 16) != 0 || fixed > len)
        return MINLSH_E_CORRUPT;
    m = minlsh__load64le(b + MINLSH__HEADER_BYTES + items_len);
    if (m > MINLSH__METADATA_MAX || m != (uint64_t)(len - fixed)) return MINLSH_E_CORRUPT;
    body_len = items_len + 8 + (size_t)m;
    if (minlsh__load64le(b + MINLSH__HEADER_BYTES + body_len) !=
        minlsh__sum64(b + MINLSH__HEADER_BYTES, body_len))
        return MINLSH_E_CORRUPT;
    *payload = b + MINLSH__HEADER_BYTES;
    *meta = b + MINLSH__HEADER_BYTES + items_len + 8;
    *meta_len = (size_t)m;
    return 0;
}

/* ---- scratch files ---------------------------------------------------------- */

void minlsh__tmpfile_init(minlsh__tmpfile *t) {
    t->fd = -1;
    t->err = 0;
    t->size = 0;
}

/* Keep the first errno (EIO for a 0, which no failing call should leave)
 * and leave it in errno on this thread too. Readers see the file as const:
 * err is the one field a failed read changes. */
static int minlsh__tmpfile_fail(const minlsh__tmpfile *t, int err) {
    int expected = 0;
    if (err == 0) err = EIO;
    (void)atomic_compare_exchange_strong((_Atomic int *)&t->err, &expected, err);
    errno = err;
    return MINLSH_E_IO;
}

int minlsh__tmpfile_errno(const minlsh__tmpfile *t) {
    return atomic_load((_Atomic int *)&t->err);
}

int minlsh__tmpfile_open(minlsh__tmpfile *t, const char *dir) {
    char path[4096];
    int fd, n;
    minlsh__tmpfile_init(t);
    if (dir == NULL || dir[0] == 0) dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == 0) dir = "/tmp";
#if defined(O_TMPFILE)
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
        t->fd = fd;
        return 0;
    }
#endif
    n = snprintf(path, sizeof path, "%s/minlsh-XXXXXX", dir);
    if (n < 0 || (size_t)n >= sizeof path) return minlsh__tmpfile_fail(t, ENAMETOOLONG);
    fd = mkstemp(path);
    if (fd < 0) return minlsh__tmpfile_fail(t, errno);
    (void)unlink(path);
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    t->fd = fd;
    return 0;
}

int minlsh__tmpfile_append(minlsh__tmpfile *t, const void *p, size_t n, uint64_t *off) {
    const uint8_t *b = (const uint8_t *)p;
    uint64_t at = atomic_fetch_add((_Atomic uint64_t *)&t->size, (uint64_t)n);
    if (off != NULL) *off = at;
    while (n > 0) {
        ssize_t w = pwrite(t->fd, b, n, (off_t)at);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return minlsh__tmpfile_fail(t, errno);
        if (w == 0) return minlsh__tmpfile_fail(t, EIO); /* no progress, no errno */
        b += w;
        n -= (size_t)w;
        at += (uint64_t)w;
    }
    return 0;
}

int minlsh__tmpfile_read(const minlsh__tmpfile *t, uint64_t off, void *p, size_t n) {
    uint8_t *b = (uint8_t *)p;
    while (n > 0) {
        ssize_t r = pread(t->fd, b, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return minlsh__tmpfile_fail(t, errno);
        if (r == 0) return minlsh__tmpfile_fail(t, EIO); /* shorter than written */
        b += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

uint64_t minlsh__tmpfile_size(const minlsh__tmpfile *t) {
    return atomic_load((_Atomic uint64_t *)&t->size);
}

void minlsh__tmpfile_close(minlsh__tmpfile *t) {
    if (t->fd >= 0) (void)close(t->fd);
    t->fd = -1;
    t->size = 0;
}

/* The public handle: the same file, with the allocator that made it. */
struct minlsh_scratch {
    minlsh__tmpfile file;
    minlsh_allocator alloc;
};

int minlsh_scratch_open(minlsh_scratch **out, const char *dir, const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_scratch *s;
    int rc, err;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if ((rc = minlsh__alloc_setup(&al, alloc)) != 0) return rc;
    s = (minlsh_scratch *)minlsh__malloc(&al, sizeof *s);
    if (s == NULL) return MINLSH_E_NOMEM;
    s->alloc = al;
    if ((rc = minlsh__tmpfile_open(&s->file, dir)) != 0) {
        err = errno; /* a caller's free function may change it */
        minlsh__free(&al, s);
        errno = err;
        return rc;
    }
    *out = s;
    return 0;
}

void minlsh_scratch_free(minlsh_scratch *scratch) {
    minlsh_allocator al;
    if (scratch == NULL) return;
    minlsh__tmpfile_close(&scratch->file);
    al = scratch->alloc;
    minlsh__free(&al, scratch);
}

int minlsh_scratch_append(uint64_t *off, minlsh_scratch *scratch, const void *data, size_t len) {
    if (scratch == NULL || (data == NULL && len > 0)) return MINLSH_E_NULL;
    return minlsh__tmpfile_append(&scratch->file, data, len, off);
}

int minlsh_scratch_read(const minlsh_scratch *scratch, uint64_t off, void *buf, size_t len) {
    uint64_t size;
    if (scratch == NULL || (buf == NULL && len > 0)) return MINLSH_E_NULL;
    size = minlsh__tmpfile_size(&scratch->file);
    if (off > size || (uint64_t)len > size - off) return MINLSH_E_PARAM;
    return minlsh__tmpfile_read(&scratch->file, off, buf, len);
}

uint64_t minlsh_scratch_size(const minlsh_scratch *scratch) {
    return scratch != NULL ? minlsh__tmpfile_size(&scratch->file) : 0;
}

int minlsh_scratch_errno(const minlsh_scratch *scratch) {
    return scratch != NULL ? minlsh__tmpfile_errno(&scratch->file) : 0;
}
