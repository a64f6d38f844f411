/*
 * The names of the normalisation flags (MINLSH_NORM_*), as the command's
 * options spell them and as the command's older index files wrote them
 * ("html,lowercase" or "none"): one table for every reader and writer of
 * those words. Internal: never installed, every name minlsh__norm_*, hidden
 * in the shared library. Self-contained (needs only minlsh.h), like
 * common/pool.h, so that the command can include it by its path.
 */
#ifndef MINLSH_SHINGLE_FLAGNAMES_H
#define MINLSH_SHINGLE_FLAGNAMES_H

#include <stddef.h>
#include <stdint.h>

#include "minlsh.h"

/* Room for the longest text minlsh__norm_flags_format writes, NUL included. */
#define MINLSH__NORM_FLAGS_TEXT_MAX 128

/* The flags named by the n bytes at s: names separated by commas (a comma
 * at the end is allowed), "none", or nothing at all for 0.
 * Errors: MINLSH_E_NULL, MINLSH_E_PARAM (an unknown or empty name). */
int minlsh__norm_flags_parse(const char *s, size_t n, uint32_t *flags);

/* The names of the named bits of flags, comma-separated in a fixed order,
 * or "none", NUL-terminated into buf; bits without a name are left out.
 * *n_out (may be NULL): the length without the NUL.
 * Errors: MINLSH_E_NULL, MINLSH_E_BUFSIZE (*n_out: the length needed). */
int minlsh__norm_flags_format(uint32_t flags, char *buf, size_t cap, size_t *n_out);

#endif /* MINLSH_SHINGLE_FLAGNAMES_H */
