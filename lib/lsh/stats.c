/*
 * Index statistics from the index's own tables: every bucket is an entry of
 * a band table, its groups are its chain, and a group's member count is
 * its documents, so the histogram costs one pass over the tables and no
 * band key. (The command used to recompute b band keys for every stored
 * signature through the public API and sort them per band.)
 */
#include "lsh.h"

int minlsh_index_copy_stats(minlsh_index_stats *stats, const minlsh_index *index) {
    minlsh__lsh_memory mem;
    minlsh_index *tmp;
    uint32_t j;
    size_t p;
    int rc;
    if (stats == NULL || index == NULL) return MINLSH_E_NULL;
    if (minlsh__lsh_is_mapped(index)) {
        /* The figures are those of the index in memory: load a copy. */
        if ((rc = minlsh__lsh_unmapped(index, &tmp)) != 0) return rc;
        rc = minlsh_index_copy_stats(stats, tmp);
        minlsh_index_free(tmp);
        return rc;
    }
    memset(stats, 0, sizeof *stats);
    stats->documents = index->count;
    stats->bands = index->bands;
    stats->rows = index->rows;
    if (index->empty_group != MINLSH__LSH_NIL)
        stats->empty = minlsh__lsh_group_at(index, index->empty_group)->count;
    stats->signatures = index->live_groups;
    for (j = 0; j < index->bands; j++) {
        const minlsh__lsh_table *t = &index->band[j];
        for (p = 0; p < t->len; p++) {
            uint32_t it = t->e[p].val, g, c = 0;
            uint64_t docs = 0, groups = 0;
            if (it == MINLSH__LSH_NIL) continue;
            while ((g = minlsh__lsh_bucket_next(index, &it)) != MINLSH__LSH_NIL) {
                docs += minlsh__lsh_group_at(index, g)->count;
                groups++;
            }
            while (c + 1 < MINLSH_INDEX_HIST_CLASSES && (UINT64_C(1) << c) < docs) c++;
            stats->hist[c]++;
            stats->buckets++;
            if (groups > 1) stats->shared_buckets++;
            if (docs > stats->largest_bucket) stats->largest_bucket = docs;
        }
    }
    minlsh__lsh_index_bytes(index, &mem);
    stats->signature_bytes = mem.signatures;
    stats->band_bytes = (uint64_t)mem.band_tables + mem.band_links;
    stats->bytes = (uint64_t)mem.signatures + mem.band_tables + mem.band_links + mem.other;
    return 0;
}
