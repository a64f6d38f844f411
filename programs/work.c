/*
 * work.c: the command's threads come from the library's pool
 * (minlsh_pool). Callers write results only into per-item slots (or
 * per-worker scratch), so what comes out does not depend on the number of
 * threads or on timing.
 */
#include "cli.h"

#include <stdlib.h>

minlsh_pool *cli_pool_new(unsigned n) {
    minlsh_pool *p;
    if (minlsh_pool_new(&p, n, NULL) != 0) {
        cli_msg("cannot create the thread pool");
        exit(CLI_FAILED);
    }
    return p;
}
