/*
 * Advisory locks for processes sharing one saved file (minlsh.h,
 * "Sharing an index file between processes").
 *
 * PATH's symbolic links are followed first: a file reached by two names
 * is locked through one companion file, beside the file itself.
 *
 * Why a companion file: saves rename a new file over the old one, so after
 * the first save a lock on PATH itself would be held on an inode nobody
 * opens any more, and the next process would lock the new one: two
 * "exclusive" writers at once. PATH.lock is never renamed or removed, so
 * every process locks the same inode.
 *
 * Why flock(2) and not POSIX fcntl locks: fcntl locks belong to the
 * process (two handles in one process do not exclude each other, and
 * closing any descriptor of the file drops them all, which a library cannot
 * control), while flock locks belong to the open file, and flock(1) lets
 * shell scripts take the same lock. Waiting with a timeout is a poll of the
 * non-blocking form with a short, growing sleep: flock has no timed form,
 * and signals (alarm) are the caller's, not the library's.
 */
#if !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE 1 /* flock on glibc */
#endif
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE 1
#endif
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

struct minlsh_filelock {
    minlsh_allocator alloc;
    int fd;
};

static uint64_t minlsh__now_ms(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void minlsh__sleep_ms(uint32_t ms) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000u);
    ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
    (void)nanosleep(&ts, NULL); /* an early wake-up only means an early retry */
}

/* Open (creating if allowed) path.lock; -1 with errno set on failure. */
static int minlsh__lock_open(const minlsh_allocator *a, const char *link_path,
                             uint32_t mode) {
    size_t n, total;
    char *name, *path;
    int fd, err, rc;
    /* Through links, one file has one lock: the one beside the file. */
    rc = minlsh__path_resolve(a, link_path, &path);
    if (rc != 0) {
        if (rc == MINLSH_E_NOMEM) errno = ENOMEM;
        return rc == MINLSH_E_NOMEM ? -2 : -1;
    }
    n = strlen(path);
    if (minlsh__add_size(&total, n, sizeof ".lock") != 0) {
        minlsh__free(a, path);
        errno = ENAMETOOLONG;
        return -1;
    }
    name = (char *)minlsh__malloc(a, total);
    if (name == NULL) {
        minlsh__free(a, path);
        errno = ENOMEM;
        return -2;
    }
    memcpy(name, path, n);
    memcpy(name + n, ".lock", sizeof ".lock");
    minlsh__free(a, path);
    do fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    while (fd < 0 && errno == EINTR);
    /* A reader in a directory it may not write to can still lock a lock
     * file that exists (flock needs no write access). */
    if (fd < 0 && mode == MINLSH_LOCK_SHARED && (errno == EACCES || errno == EROFS ||
                                                 errno == EPERM)) {
        err = errno;
        do fd = open(name, O_RDONLY | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        if (fd < 0 && errno == ENOENT) errno = err;
    }
    err = errno;
    minlsh__free(a, name);
    errno = err;
    return fd;
}

int minlsh__filelock_open(minlsh_filelock **out, const char *path, uint32_t mode,
                          const minlsh_allocator *alloc) {
    minlsh_allocator al;
    minlsh_filelock *lk;
    int fd, err, rc;
    *out = NULL;
    if ((rc = minlsh__alloc_setup(&al, alloc)) != 0) return rc;
    lk = (minlsh_filelock *)minlsh__malloc(&al, sizeof *lk);
    if (lk == NULL) return MINLSH_E_NOMEM;
    fd = minlsh__lock_open(&al, path, mode);
    if (fd < 0) {
        err = errno;
        minlsh__free(&al, lk);
        errno = err;
        return fd == -2 ? MINLSH_E_NOMEM : MINLSH_E_IO;
    }
    lk->alloc = al;
    lk->fd = fd;
    *out = lk;
    return 0;
}

int minlsh__filelock_acquire(minlsh_filelock *lk, uint32_t mode, uint32_t timeout_ms) {
    uint64_t start = 0;
    uint32_t nap = 1;
    int op = mode == MINLSH_LOCK_SHARED ? LOCK_SH : LOCK_EX, rc;
    if (timeout_ms == MINLSH_LOCK_WAIT_FOREVER) {
        do rc = flock(lk->fd, op);
        while (rc != 0 && errno == EINTR);
    } else {
        for (;;) {
            uint64_t waited;
            rc = flock(lk->fd, op | LOCK_NB);
            if (rc == 0 || (errno != EWOULDBLOCK && errno != EAGAIN && errno != EINTR)) break;
            if (start == 0) start = minlsh__now_ms() + 1; /* +1: 0 means "not started" */
            waited = minlsh__now_ms() + 1 - start;
            if (waited >= timeout_ms) {
                rc = 1; /* timed out */
                break;
            }
            minlsh__sleep_ms((uint64_t)nap < timeout_ms - waited ? nap
                                                                : (uint32_t)(timeout_ms - waited));
            if (nap < 50) nap *= 2;
        }
    }
    if (rc == 0) return 0;
    return rc == 1 ? MINLSH_E_BUSY : MINLSH_E_IO;
}

void minlsh__filelock_release(minlsh_filelock *lk) {
    int rc;
    do rc = flock(lk->fd, LOCK_UN);
    while (rc != 0 && errno == EINTR);
}

int minlsh_filelock_new(minlsh_filelock **out, const char *path, uint32_t mode,
                        uint32_t timeout_ms, const minlsh_allocator *alloc) {
    minlsh_filelock *lk;
    int rc, err;
    if (out == NULL) return MINLSH_E_NULL;
    *out = NULL;
    if (path == NULL) return MINLSH_E_NULL;
    if (mode != MINLSH_LOCK_SHARED && mode != MINLSH_LOCK_EXCLUSIVE) return MINLSH_E_PARAM;
    rc = minlsh__filelock_open(&lk, path, mode, alloc);
    if (rc != 0) return rc;
    rc = minlsh__filelock_acquire(lk, mode, timeout_ms);
    if (rc != 0) {
        err = errno;
        minlsh_filelock_free(lk);
        errno = err;
        return rc;
    }
    *out = lk;
    return 0;
}

void minlsh_filelock_free(minlsh_filelock *lock) {
    minlsh_allocator al;
    if (lock == NULL) return;
    al = lock->alloc;
    /* Closing the only descriptor of the open file releases the lock. */
    (void)close(lock->fd);
    minlsh__free(&al, lock);
}
