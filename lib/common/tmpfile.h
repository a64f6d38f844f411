/*
 * Scratch files, for data that does not fit a memory budget: the dedup
 * engine's runs and sets, held in place inside its handle. Internal: never
 * installed, every name minlsh__tmpfile_*, hidden in the shared library.
 * The public handle minlsh_scratch (minlsh.h) wraps one for front ends.
 * Implemented in file.c.
 */
#ifndef MINLSH_COMMON_TMPFILE_H
#define MINLSH_COMMON_TMPFILE_H

#include <stddef.h>
#include <stdint.h>

#include "minlsh.h"

/* A scratch file for data that does not fit the memory budget: created in
 * dir (NULL: $TMPDIR, else /tmp) and unlinked at once, so nothing is left
 * behind however the process ends (kill -9 included). Appends reserve their
 * range atomically, so threads may append and read concurrently. */
typedef struct minlsh__tmpfile {
    int fd;
    int err;       /* errno of the first failure since open; atomic */
    uint64_t size; /* bytes appended; atomic */
} minlsh__tmpfile;
/* Each call that fails with MINLSH_E_IO also leaves errno saying why
 * (ENOENT, ENOTDIR, EACCES, ENOSPC, EFBIG...), and the first such errno is
 * kept in t->err: a caller may learn it on another thread than the one that
 * failed (see minlsh__tmpfile_errno). */
/* Errors: MINLSH_E_IO (the directory cannot hold a file). */
int minlsh__tmpfile_open(minlsh__tmpfile *t, const char *dir);
/* Append n bytes; *off (may be NULL) receives where they start.
 * Errors: MINLSH_E_IO (a full disk among others). */
int minlsh__tmpfile_append(minlsh__tmpfile *t, const void *p, size_t n, uint64_t *off);
/* Read n bytes at off. Errors: MINLSH_E_IO. */
int minlsh__tmpfile_read(const minlsh__tmpfile *t, uint64_t off, void *p, size_t n);
/* The errno of the first failure since the file was opened (the open
 * included), 0 if none. */
int minlsh__tmpfile_errno(const minlsh__tmpfile *t);
/* init marks t as not open, so that close (which releases the space) is a
 * no-op on a file that was never opened. */
void minlsh__tmpfile_init(minlsh__tmpfile *t);
void minlsh__tmpfile_close(minlsh__tmpfile *t);
uint64_t minlsh__tmpfile_size(const minlsh__tmpfile *t);

#endif /* MINLSH_COMMON_TMPFILE_H */
