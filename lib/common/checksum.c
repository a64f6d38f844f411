/* sum64: the file checksum (docs/format.md has the exact definition).
 * Not a cryptographic MAC: it detects truncation, bit rot and torn writes. */
#include "common.h"

static const uint64_t minlsh__sum_iv[4] = {
    UINT64_C(0x6D696E6C73682D30), /* "minlsh-0" big-endian: just distinct */
    UINT64_C(0x6D696E6C73682D31),
    UINT64_C(0x6D696E6C73682D32),
    UINT64_C(0x6D696E6C73682D33),
};

static void minlsh__sum_stripe(uint64_t lane[4], const uint8_t *p) {
    lane[0] = minlsh__mix64(lane[0] ^ minlsh__load64le(p));
    lane[1] = minlsh__mix64(lane[1] ^ minlsh__load64le(p + 8));
    lane[2] = minlsh__mix64(lane[2] ^ minlsh__load64le(p + 16));
    lane[3] = minlsh__mix64(lane[3] ^ minlsh__load64le(p + 24));
}

void minlsh__sum_init(minlsh__sum *s) {
    memcpy(s->lane, minlsh__sum_iv, sizeof s->lane);
    s->total = 0;
    s->tail_len = 0;
}

void minlsh__sum_update(minlsh__sum *s, const void *data, size_t len) {
    const uint8_t *p = (const uint8_t *)data;
    s->total += len;
    if (s->tail_len > 0) {
        size_t take = 32 - s->tail_len;
        if (take > len) take = len;
        memcpy(s->tail + s->tail_len, p, take);
        s->tail_len += take;
        p += take;
        len -= take;
        if (s->tail_len < 32) return;
        minlsh__sum_stripe(s->lane, s->tail);
        s->tail_len = 0;
    }
    while (len >= 32) {
        minlsh__sum_stripe(s->lane, p);
        p += 32;
        len -= 32;
    }
    if (len > 0) {
        memcpy(s->tail, p, len);
        s->tail_len = len;
    }
}

uint64_t minlsh__sum_final(const minlsh__sum *s) {
    uint64_t lane[4];
    uint64_t h;
    memcpy(lane, s->lane, sizeof lane);
    if (s->tail_len > 0) {
        /* The last partial stripe is zero-padded; the length below tells
         * padding from real zeros. */
        uint8_t last[32] = {0};
        memcpy(last, s->tail, s->tail_len);
        minlsh__sum_stripe(lane, last);
    }
    h = minlsh__mix64(s->total ^ UINT64_C(0x9E3779B97F4A7C15));
    h = minlsh__mix64(h ^ lane[0]);
    h = minlsh__mix64(h ^ lane[1]);
    h = minlsh__mix64(h ^ lane[2]);
    h = minlsh__mix64(h ^ lane[3]);
    return h;
}

uint64_t minlsh__sum64(const void *data, size_t len) {
    minlsh__sum s;
    minlsh__sum_init(&s);
    minlsh__sum_update(&s, data, len);
    return minlsh__sum_final(&s);
}
