/*
 * PATH.sets (docs/format.md, "Store"): the shingle sets of a store made
 * with MINLSH_STORE_SETS, appended under the store's exclusive lock and
 * never rewritten. A set is u32 count, u32 0, count u64 hashes ascending,
 * then the sum64 of those bytes; a journal record or the file's metadata
 * names it by its offset. A set is synced before the journal record that
 * names it is committed, so a committed document always finds its set; a
 * set whose record never committed is garbage nobody reads, and the next
 * set is written after it.
 */
#include "store.h"

int minlsh__store_sets_open(minlsh_store *s) {
    uint64_t size;
    int rc;
    if (s->sets_fd >= 0) return 0;
    rc = minlsh__file_open_rw(s->sets_path, 1, &s->sets_fd, &size);
    if (rc != 0) return rc;
    s->sets_end = size;
    return 0;
}

int minlsh__store_sets_append(minlsh_store *s, const uint64_t *hashes, size_t n,
                              uint64_t *off) {
    uint8_t buf[4096], sum8[8];
    minlsh__sum sum;
    uint64_t at = s->sets_end;
    size_t i = 0, fill;
    int rc;
    if (n > UINT32_MAX) return MINLSH_E_TOOBIG;
    minlsh__sum_init(&sum);
    minlsh__store32le(buf, (uint32_t)n);
    minlsh__store32le(buf + 4, 0);
    fill = 8;
    for (;;) {
        while (i < n && fill + 8 <= sizeof buf) {
            minlsh__store64le(buf + fill, hashes[i++]);
            fill += 8;
        }
        minlsh__sum_update(&sum, buf, fill);
        if ((rc = minlsh__fd_write_at(s->sets_fd, buf, fill, at)) != 0) return rc;
        at += fill;
        fill = 0;
        if (i == n) break;
    }
    minlsh__store64le(sum8, minlsh__sum_final(&sum));
    if ((rc = minlsh__fd_write_at(s->sets_fd, sum8, 8, at)) != 0) return rc;
    *off = s->sets_end;
    s->sets_end = at + 8;
    s->sets_dirty = 1;
    return 0;
}

int minlsh__store_sets_read(const minlsh_store *s, uint64_t off, uint64_t **buf, size_t *cap,
                            size_t *n) {
    uint8_t head[8], sum8[8];
    minlsh__sum sum;
    size_t count, i, bytes;
    int rc;
    if (off == MINLSH__STORE_NO_SET) return MINLSH_E_CORRUPT;
    if ((rc = minlsh__fd_read_at(s->sets_fd, head, 8, off)) != 0) return rc;
    count = minlsh__load32le(head);
    if (minlsh__load32le(head + 4) != 0) return MINLSH_E_CORRUPT;
    if (count > *cap) {
        uint64_t *nb;
        if (minlsh__mul_size(&bytes, count, 8) != 0) return MINLSH_E_TOOBIG;
        nb = (uint64_t *)minlsh__malloc(&s->alloc, bytes);
        if (nb == NULL) return MINLSH_E_NOMEM;
        minlsh__free(&s->alloc, *buf);
        *buf = nb;
        *cap = count;
    }
    minlsh__sum_init(&sum);
    minlsh__sum_update(&sum, head, 8);
    if (count > 0) {
        if ((rc = minlsh__fd_read_at(s->sets_fd, *buf, count * 8, off + 8)) != 0) return rc;
        minlsh__sum_update(&sum, *buf, count * 8);
        for (i = 0; i < count; i++) (*buf)[i] = minlsh__load64le(&(*buf)[i]);
    }
    if ((rc = minlsh__fd_read_at(s->sets_fd, sum8, 8, off + 8 + 8 * (uint64_t)count)) != 0)
        return rc;
    if (minlsh__load64le(sum8) != minlsh__sum_final(&sum)) return MINLSH_E_CORRUPT;
    for (i = 1; i < count; i++)
        if ((*buf)[i] <= (*buf)[i - 1]) return MINLSH_E_CORRUPT;
    *n = count;
    return 0;
}
