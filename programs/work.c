/*
 * work.c: the command's threads come from the library's pool
 * (lib/common/pool.h). Callers write results only into per-item slots (or
 * per-worker scratch), so what comes out does not depend on the number of
 * threads or on timing.
 */
#include "cli.h"

#include <stdlib.h>

minlsh__pool *cli_pool_new(unsigned n) {
    minlsh__pool *p;
    if (minlsh__pool_new(&p, NULL, n) != 0) {
        cli_msg("cannot create the thread pool");
        exit(CLI_FAILED);
    }
    return p;
}
