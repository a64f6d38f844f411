/*
 * Bulk intake: minlsh_dedup_add_docs, on the lower files (records.c
 * stores the records, ids.c the ids, banding.c bands the full batches). A
 * batch goes through four steps, all but the third on the pool:
 *  1. each document is checked, signed if it came without a signature, its
 *     JSON id put in canonical form (unless it is already) and hashed;
 *  2. the batch is put in shard order once; each id shard, owned by one
 *     worker, walks its ids in input order and finds the repeated ones (a
 *     new id goes in the table at once, numbered provisionally base + its
 *     place in the batch, so that a repeat later in the batch finds it);
 *  3. the calling thread numbers the documents that stay and gives each its
 *     place: a record address (a chunk, or an offset of the data file),
 *     a row of the pending arrays and a place for its id. Sums of sizes,
 *     nothing is copied;
 *  4. each document's bytes are copied to those places, and its slot takes
 *     its final number.
 * Step 3 gives every document the place minlsh_dedup_add_set would have,
 * so the records, the batches banded and every result are the same bytes.
 * Steps 3 and 4 go segment by segment: a segment ends where the pending
 * documents fill a batch, which is banded (minlsh__dedup_flush) before the
 * next one.
 */
#include "dedup.h"

#define MINLSH__DEDUP_NOWHERE SIZE_MAX
/* A document without an id, or that failed, is in no shard. */
#define MINLSH__DEDUP_NO_SHARD 0xff
/* Ids a shard's walk looks ahead of the one it looks up: their slots are
 * fetched while it probes. */
#define MINLSH__DEDUP_ID_AHEAD 8

/* ---- a batch ----------------------------------------------------------------------- */

typedef struct minlsh__dedup_intake {
    minlsh_dedup *d;
    const minlsh_dedup_doc *docs;
    size_t n;
    int32_t *status;
    uint64_t base; /* n_docs when the batch began */
    /* per document, steps 1 and 2 */
    uint8_t *canon;         /* canonical JSON ids, at canon_off */
    size_t *canon_off;
    const uint8_t **id;     /* the id as stored and compared */
    size_t *id_n;
    uint64_t *hash;
    uint8_t *shard;
    uint32_t *order; /* the batch by shard, in input order within one */
    size_t shard_at[MINLSH__DEDUP_ID_SHARDS + 1]; /* shard s: order[shard_at[s]..] */
    uint8_t *empty;
    size_t *slot;           /* where its id went in its shard, or NOWHERE */
    uint32_t *sigs;         /* made here (k each), for documents without one */
    /* per document, step 3 */
    uint64_t *num;          /* its number, or NONE (not added) */
    uint64_t *rec_at;       /* its record's address */
    uint8_t **rec_to;       /* where its record's bytes go */
    uint8_t **id_to;        /* where its id entry goes (ids on) */
    size_t *pend_at;        /* its pending row, or NOWHERE (empty) */
    size_t *file_off;       /* a record for the file: its offset in the segment's */
    uint8_t *file_buf;      /* the segment's bytes for the data file */
    size_t seg_begin;       /* the segment step 4 works on */
} minlsh__dedup_intake;

static const uint32_t *minlsh__dedup_intake_sig(const minlsh__dedup_intake *b, size_t i) {
    return b->docs[i].sig != NULL ? b->docs[i].sig : b->sigs + i * b->d->sig_values;
}

/* Step 1 for documents [begin, end). */
static int minlsh__dedup_intake_check(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_intake *b = (minlsh__dedup_intake *)ctx;
    const minlsh_dedup *d = b->d;
    int exact = d->opts.verify == MINLSH_VERIFY_EXACT;
    size_t i;
    (void)worker;
    for (i = begin; i < end; i++) {
        const minlsh_dedup_doc *x = &b->docs[i];
        const uint32_t *sig = x->sig;
        int rc = 0;
        b->slot[i] = MINLSH__DEDUP_NOWHERE;
        b->num[i] = MINLSH__DEDUP_NONE;
        if (x->fp == NULL || (x->hashes == NULL && x->n > 0)) rc = MINLSH_E_NULL;
        else if (sig != NULL && x->k_sig != d->k && x->k_sig != d->sig_values)
            rc = MINLSH_E_PARAM;
        else if (exact && x->hashes == NULL && sig != NULL &&
                 minlsh_signature_is_empty(sig, x->k_sig) != 1)
            rc = MINLSH_E_NULL; /* exact verification compares sets */
        else if (x->id_kind > MINLSH_DEDUP_ID_JSON) rc = MINLSH_E_PARAM;
        else if (x->id_kind != MINLSH_DEDUP_ID_NONE && x->id == NULL && x->id_n > 0)
            rc = MINLSH_E_NULL;
        if (rc == 0 && !minlsh__dedup_increasing(x->hashes, x->n)) rc = MINLSH_E_PARAM;
        if (rc == 0 && sig == NULL) {
            uint32_t *own = b->sigs + i * d->sig_values;
            rc = minlsh_family_sign_prefix(d->family, x->hashes, x->n, own, d->sig_values);
            sig = own;
        }
        if (rc == 0 && x->id_kind == MINLSH_DEDUP_ID_JSON &&
            minlsh__dedup_id_is_canonical(x->id, x->id_n)) {
            b->id[i] = (const uint8_t *)x->id;
            b->id_n[i] = x->id_n;
        } else if (rc == 0 && x->id_kind == MINLSH_DEDUP_ID_JSON) {
            uint8_t *out = b->canon + b->canon_off[i];
            if (minlsh_dedup_canonical_id(x->id, x->id_n, (char *)out, x->id_n + 32,
                                          &b->id_n[i]) != 0)
                rc = MINLSH_E_PARAM;
            b->id[i] = out;
        } else if (rc == 0) {
            b->id[i] = (const uint8_t *)x->id;
            b->id_n[i] = x->id_kind == MINLSH_DEDUP_ID_NONE ? 0 : x->id_n;
        }
        b->shard[i] = MINLSH__DEDUP_NO_SHARD;
        if (rc == 0 && x->id_kind != MINLSH_DEDUP_ID_NONE) {
            b->hash[i] = minlsh__dedup_id_hash(&d->ids, b->id[i], b->id_n[i], x->id_kind);
            b->shard[i] = (uint8_t)MINLSH__DEDUP_ID_SHARD(b->hash[i]);
        }
        if (rc == 0)
            b->empty[i] =
                (uint8_t)(x->n == 0 && minlsh_signature_is_empty(sig, d->sig_values) == 1);
        b->status[i] = rc;
        /* Out of memory stops the batch: nothing of it is added. */
        if (rc == MINLSH_E_NOMEM) return rc;
    }
    return 0;
}

/* Does document i of the batch have the id in slot value v (a document
 * number + 1, or a provisional one for this batch)? */
static int minlsh__dedup_intake_same(const minlsh__dedup_intake *b, size_t i, uint32_t v) {
    uint64_t other = (uint64_t)v - 1;
    uint32_t kind;
    const uint8_t *s;
    size_t n;
    if (other >= b->base) {
        size_t j = (size_t)(other - b->base);
        kind = b->docs[j].id_kind;
        s = b->id[j];
        n = b->id_n[j];
    } else {
        minlsh__dedup_id_get(&b->d->ids, other, &kind, &s, &n);
    }
    return kind == b->docs[i].id_kind && n == b->id_n[i] && (n == 0 || memcmp(s, b->id[i], n) == 0);
}

/* The batch's documents in order of their shards (input order within
 * one), for step 2. */
static void minlsh__dedup_intake_by_shard(minlsh__dedup_intake *b) {
    size_t at[MINLSH__DEDUP_ID_SHARDS], i, s, sum = 0;
    memset(at, 0, sizeof at);
    for (i = 0; i < b->n; i++)
        if (b->shard[i] != MINLSH__DEDUP_NO_SHARD) at[b->shard[i]]++;
    for (s = 0; s < MINLSH__DEDUP_ID_SHARDS; s++) {
        size_t count = at[s];
        b->shard_at[s] = at[s] = sum;
        sum += count;
    }
    b->shard_at[MINLSH__DEDUP_ID_SHARDS] = sum;
    for (i = 0; i < b->n; i++)
        if (b->shard[i] != MINLSH__DEDUP_NO_SHARD) b->order[at[b->shard[i]]++] = (uint32_t)i;
}

/* The slot where document i's id probe starts. */
static minlsh__dedup_id_slot *minlsh__dedup_intake_home(const minlsh__dedup_intake *b, size_t i) {
    const minlsh__dedup_id_shard *sh = &b->d->ids.shard[b->shard[i]];
    return &sh->slots[(uint32_t)b->hash[i] & sh->mask];
}

/* Step 2 for shards [begin, end): their tables grown for the batch, then
 * their ids in order (input order within a shard), the slots of those a
 * few places ahead fetched while one is looked up. */
static int minlsh__dedup_intake_ids(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_intake *b = (minlsh__dedup_intake *)ctx;
    size_t s, t, lo = b->shard_at[begin], hi = b->shard_at[end];
    int rc;
    (void)worker;
    for (s = begin; s < end; s++) {
        minlsh__dedup_id_shard *sh = &b->d->ids.shard[s];
        size_t count = b->shard_at[s + 1] - b->shard_at[s];
        if (count > 0 && (sh->mask == 0 || sh->n + count > (sh->mask + 1) / 4 * 3) &&
            (rc = minlsh__dedup_id_grow(b->d, sh, (uint64_t)sh->n + count)) != 0)
            return rc;
    }
    for (t = lo; t < hi && t < lo + MINLSH__DEDUP_ID_AHEAD; t++)
        MINLSH__PREFETCH_W(minlsh__dedup_intake_home(b, b->order[t]));
    for (t = lo; t < hi; t++) {
        size_t i = b->order[t], at, mask;
        minlsh__dedup_id_shard *sh = &b->d->ids.shard[b->shard[i]];
        minlsh__dedup_id_slot *slots = sh->slots;
        uint32_t h = (uint32_t)b->hash[i];
        if (t + MINLSH__DEDUP_ID_AHEAD < hi)
            MINLSH__PREFETCH_W(minlsh__dedup_intake_home(b, b->order[t + MINLSH__DEDUP_ID_AHEAD]));
        mask = sh->mask;
        for (at = h & mask; slots[at].doc != 0; at = (at + 1) & mask)
            if (slots[at].hash == h && minlsh__dedup_intake_same(b, i, slots[at].doc)) break;
        if (slots[at].doc != 0) {
            b->status[i] = MINLSH_DEDUP_REPEATED_ID;
            continue;
        }
        slots[at].doc = (uint32_t)(b->base + i + 1);
        slots[at].hash = h;
        sh->n++;
        b->slot[i] = at;
    }
    return 0;
}

/* Take the ids of documents from..n - 1 out of the tables (they will not
 * be added). They went in last, so no other id's probe passes them. */
static void minlsh__dedup_intake_unslot(minlsh__dedup_intake *b, size_t from) {
    size_t i;
    for (i = from; i < b->n; i++) {
        if (b->slot[i] == MINLSH__DEDUP_NOWHERE) continue;
        b->d->ids.shard[b->shard[i]].slots[b->slot[i]].doc = 0;
        b->d->ids.shard[b->shard[i]].n--;
        b->slot[i] = MINLSH__DEDUP_NOWHERE;
    }
}

/* Step 4 for documents seg_begin + [begin, end). */
static int minlsh__dedup_intake_copy(void *ctx, unsigned worker, size_t begin, size_t end) {
    minlsh__dedup_intake *b = (minlsh__dedup_intake *)ctx;
    minlsh_dedup *d = b->d;
    int exact = d->opts.verify == MINLSH_VERIFY_EXACT;
    size_t i;
    (void)worker;
    for (i = b->seg_begin + begin; i < b->seg_begin + end; i++) {
        const minlsh_dedup_doc *x = &b->docs[i];
        const uint32_t *sig = minlsh__dedup_intake_sig(b, i);
        uint64_t num = b->num[i];
        if (num == MINLSH__DEDUP_NONE) continue;
        if (b->rec_to[i] != NULL || b->file_buf != NULL) {
            uint8_t *to = b->rec_to[i] != NULL ? b->rec_to[i] : b->file_buf + b->file_off[i];
            minlsh__dedup_rec head;
            memcpy(head.fp, x->fp, sizeof head.fp);
            head.n = exact ? x->n : 0;
            memcpy(to, &head, sizeof head);
            if (exact && x->n > 0) memcpy(to + sizeof head, x->hashes, x->n * sizeof *x->hashes);
            if (!exact) memcpy(to + sizeof head, sig, (size_t)d->k * sizeof *sig);
        }
        d->rec[num] = b->rec_at[i];
        if (d->lengths != NULL) d->lengths[num] = x->length;
        if (b->pend_at[i] != MINLSH__DEDUP_NOWHERE) {
            size_t p = b->pend_at[i];
            d->pend_docs[p] = (uint32_t)num;
            memcpy(d->pend_sigs + p * d->sig_values, sig, (size_t)d->sig_values * sizeof *sig);
            d->pend_fps[p].key = minlsh__load64le(x->fp);
            d->pend_fps[p].val = num;
        }
        if (b->id_to[i] != NULL) {
            uint8_t *e = b->id_to[i];
            e += minlsh__dedup_varint(e, ((uint64_t)b->id_n[i] << 2 | x->id_kind) + 1);
            if (b->id_n[i] > 0) memcpy(e, b->id[i], b->id_n[i]);
        }
        if (b->slot[i] != MINLSH__DEDUP_NOWHERE)
            d->ids.shard[b->shard[i]].slots[b->slot[i]].doc = (uint32_t)(num + 1);
    }
    return 0;
}

/* Write document i's record into buf (a record too large for the write
 * buffer goes to the data file on its own). */
static void minlsh__dedup_intake_record(const minlsh__dedup_intake *b, size_t i, uint8_t *buf) {
    const minlsh_dedup_doc *x = &b->docs[i];
    minlsh__dedup_rec head;
    int exact = b->d->opts.verify == MINLSH_VERIFY_EXACT;
    memcpy(head.fp, x->fp, sizeof head.fp);
    head.n = exact ? x->n : 0;
    memcpy(buf, &head, sizeof head);
    if (exact && x->n > 0) memcpy(buf + sizeof head, x->hashes, x->n * sizeof *x->hashes);
    if (!exact)
        memcpy(buf + sizeof head, minlsh__dedup_intake_sig(b, i),
               (size_t)b->d->k * sizeof(uint32_t));
}

/* Steps 3 and 4 for the documents from *at on, up to where the pending
 * documents fill a batch or the data file's write buffer is full. The
 * documents [*at, end) are added and *at moves to end; a failure stops it
 * at the document that failed (the space taken for those after is left
 * unused, as minlsh_dedup_add_set leaves it). */
static int minlsh__dedup_intake_segment(minlsh__dedup_intake *b, size_t *at) {
    minlsh_dedup *d = b->d;
    int exact = d->opts.verify == MINLSH_VERIFY_EXACT, rc = 0, big = 0;
    size_t i, j, begin = *at, end, pend, file_bytes = 0, want, empty = 0;
    uint64_t next = d->n_docs, file_start = 0;
    uint8_t *temp = NULL;
    if (d->pend_n == d->pend_cap && (rc = minlsh__dedup_flush(d, 1)) != 0) return rc;
    pend = d->pend_n;
    /* Room for the pending documents this segment may bring. */
    for (i = begin, want = d->pend_n; i < b->n && want < d->pend_cap; i++)
        want += b->status[i] == 0 && !b->empty[i];
    while (d->pend_held < want)
        if ((rc = minlsh__dedup_pend_grow(d)) != 0) return rc;
    b->file_buf = NULL;
    /* Step 3: the records' and the pending rows' places. */
    for (i = begin; i < b->n; i++) {
        const minlsh_dedup_doc *x = &b->docs[i];
        size_t body, bytes;
        b->rec_to[i] = NULL;
        b->id_to[i] = NULL;
        b->pend_at[i] = MINLSH__DEDUP_NOWHERE;
        if (b->status[i] != 0) continue;
        if (!b->empty[i] && pend == d->pend_cap) break; /* the next segment's */
        if (exact && minlsh__mul_size(&body, x->n, sizeof *x->hashes) != 0) {
            rc = MINLSH_E_TOOBIG;
            break;
        }
        if (!exact) body = (size_t)d->k * sizeof(uint32_t);
        bytes = sizeof(minlsh__dedup_rec) + body;
        if (!minlsh__dedup_to_file(d, bytes)) {
            if ((rc = minlsh__dedup_chunk_take(d, bytes, &b->rec_to[i])) != 0) break;
            b->rec_at[i] = (uint64_t)(uintptr_t)b->rec_to[i];
        } else {
            if (big) break;
            if ((rc = minlsh__dedup_data_start(d)) != 0) break;
            if (file_bytes == 0) {
                if (d->wlen + bytes > d->wcap && (rc = minlsh__dedup_wflush(d)) != 0) break;
                file_start = d->wbase + d->wlen;
                big = bytes > d->wcap;
            } else if (d->wlen + file_bytes + bytes > d->wcap) {
                break;
            }
            b->file_off[i] = file_bytes;
            b->rec_at[i] = (file_start + file_bytes) | MINLSH__DEDUP_IN_FILE;
            file_bytes += bytes;
        }
        if (!b->empty[i]) b->pend_at[i] = pend++;
        b->num[i] = next++;
    }
    end = i;
    if (big) {
        /* Alone in its segment, straight to the file. */
        for (j = begin; b->num[j] == MINLSH__DEDUP_NONE || b->rec_to[j] != NULL; j++) {
        }
        temp = (uint8_t *)minlsh__malloc(&d->alloc, file_bytes);
        if (temp == NULL) rc = MINLSH_E_NOMEM;
        else minlsh__dedup_intake_record(b, j, temp);
        if (rc == 0) rc = minlsh__tmpfile_append(&d->data, temp, file_bytes, NULL);
        minlsh__free(&d->alloc, temp);
        if (rc != 0) {
            b->num[j] = MINLSH__DEDUP_NONE;
            return rc;
        }
        d->wbase += file_bytes;
    } else if (file_bytes > 0) {
        b->file_buf = d->wbuf + d->wlen;
    }
    /* The places of the ids (a failure stops the segment there). */
    for (j = begin; j < end && d->ids.on; j++) {
        uint64_t v;
        int r;
        if (b->num[j] == MINLSH__DEDUP_NONE) continue;
        v = ((uint64_t)b->id_n[j] << 2 | b->docs[j].id_kind) + 1;
        r = minlsh__dedup_id_place(d, minlsh__dedup_varint_size(v) + b->id_n[j], &b->id_to[j]);
        if (r != 0) {
            size_t k;
            for (k = j; k < end; k++) b->num[k] = MINLSH__DEDUP_NONE;
            rc = r;
            end = j;
        }
    }
    /* What the documents of the segment that stay take. */
    next = d->n_docs;
    pend = d->pend_n;
    file_bytes = 0;
    for (j = begin; j < end; j++) {
        if (b->num[j] == MINLSH__DEDUP_NONE) continue;
        next = b->num[j] + 1;
        if (b->pend_at[j] != MINLSH__DEDUP_NOWHERE) pend = b->pend_at[j] + 1;
        else empty++;
    }
    /* Step 4. */
    b->seg_begin = begin;
    if (big) b->file_buf = NULL; /* written already */
    {
        int r = minlsh__pool_run(minlsh__dedup_pool(d), end - begin, 16, minlsh__dedup_intake_copy,
                                 b);
        if (r != 0 && rc == 0) rc = r;
    }
    if (!big && b->file_buf != NULL) {
        /* The records of the file that stay: a prefix of the segment's. */
        size_t used = 0;
        for (j = begin; j < end; j++)
            if (b->num[j] != MINLSH__DEDUP_NONE && b->rec_to[j] == NULL)
                used = b->file_off[j] + (sizeof(minlsh__dedup_rec) +
                                         (exact ? b->docs[j].n * sizeof(uint64_t)
                                                : (size_t)d->k * sizeof(uint32_t)));
        d->wlen += used;
    }
    d->n_docs = next;
    d->pend_n = pend;
    d->empty += empty;
    *at = end;
    return rc;
}

/* The per-document scratch of a batch of n, in one allocation kept from
 * call to call (fresh memory each batch would cost its page faults). */
static void *minlsh__dedup_intake_scratch(minlsh__dedup_intake *b, size_t n, size_t canon,
                                          size_t sig_words) {
    minlsh_dedup *d = b->d;
    size_t sizes[17], total = 0, i = 0, at = 0;
    uint8_t *p;
    sizes[i++] = n * sizeof *b->canon_off;
    sizes[i++] = n * sizeof *b->id;
    sizes[i++] = n * sizeof *b->id_n;
    sizes[i++] = n * sizeof *b->hash;
    sizes[i++] = n * sizeof *b->slot;
    sizes[i++] = n * sizeof *b->num;
    sizes[i++] = n * sizeof *b->rec_at;
    sizes[i++] = n * sizeof *b->rec_to;
    sizes[i++] = n * sizeof *b->id_to;
    sizes[i++] = n * sizeof *b->pend_at;
    sizes[i++] = n * sizeof *b->file_off;
    sizes[i++] = n * sizeof *b->status;
    sizes[i++] = n * sizeof *b->order;
    sizes[i++] = sig_words * sizeof *b->sigs;
    sizes[i++] = n; /* shard */
    sizes[i++] = n; /* empty */
    sizes[i++] = canon;
    for (i = 0; i < 17; i++) {
        size_t s = (sizes[i] + 7) & ~(size_t)7;
        if (s < sizes[i] || total + s < total) return NULL;
        total += s;
        sizes[i] = s;
    }
    if (total > d->intake_bytes) {
        minlsh__free(&d->alloc, d->intake_scratch);
        d->intake_bytes = 0;
        d->intake_scratch = minlsh__malloc(&d->alloc, total);
        if (d->intake_scratch == NULL) return NULL;
        d->intake_bytes = total;
    }
    p = (uint8_t *)d->intake_scratch;
    i = 0;
#define MINLSH__TAKE(field) (b->field = (void *)(p + at), at += sizes[i++])
    MINLSH__TAKE(canon_off);
    MINLSH__TAKE(id);
    MINLSH__TAKE(id_n);
    MINLSH__TAKE(hash);
    MINLSH__TAKE(slot);
    MINLSH__TAKE(num);
    MINLSH__TAKE(rec_at);
    MINLSH__TAKE(rec_to);
    MINLSH__TAKE(id_to);
    MINLSH__TAKE(pend_at);
    MINLSH__TAKE(file_off);
    MINLSH__TAKE(status);
    MINLSH__TAKE(order);
    MINLSH__TAKE(sigs);
    MINLSH__TAKE(shard);
    MINLSH__TAKE(empty);
    MINLSH__TAKE(canon);
#undef MINLSH__TAKE
    return p;
}

/* A call that adds nothing: every status says why. */
static int minlsh__dedup_intake_none(int32_t *status, size_t n, int rc) {
    size_t i;
    for (i = 0; status != NULL && i < n; i++) status[i] = rc;
    return rc;
}

int minlsh_dedup_add_docs(minlsh_dedup *d, const minlsh_dedup_doc *docs, size_t n,
                          int32_t *status) {
    minlsh__dedup_intake b;
    size_t i, canon = 0, unsigned_docs = 0, at = 0, sig_words;
    int any_id = 0, rc = 0, first = 0, checked = 0, looked_up = 0;
    void *scratch;
    if (d == NULL || (docs == NULL && n > 0))
        return minlsh__dedup_intake_none(status, n, MINLSH_E_NULL);
    if (d->ran) return minlsh__dedup_intake_none(status, n, MINLSH_E_STATE);
    if (n == 0) return 0;
    if (n > MINLSH__DEDUP_MAX_DOCS - d->n_docs)
        return minlsh__dedup_intake_none(status, n, MINLSH_E_TOOBIG);
    /* The sizes of the scratch: a prefix sum, nothing per document else. */
    for (i = 0; i < n; i++) {
        any_id |= docs[i].id_kind != MINLSH_DEDUP_ID_NONE;
        unsigned_docs += docs[i].sig == NULL;
        if (docs[i].id_kind == MINLSH_DEDUP_ID_JSON) {
            if (docs[i].id_n > SIZE_MAX / 2 - canon)
                return minlsh__dedup_intake_none(status, n, MINLSH_E_TOOBIG);
            canon += docs[i].id_n + 32;
        }
    }
    if (minlsh__mul_size(&sig_words, unsigned_docs ? n : 0, d->sig_values) != 0)
        return minlsh__dedup_intake_none(status, n, MINLSH_E_TOOBIG);
    memset(&b, 0, sizeof b);
    b.d = d;
    b.docs = docs;
    b.n = n;
    b.base = d->n_docs;
    scratch = minlsh__dedup_intake_scratch(&b, n, canon, sig_words);
    if (scratch == NULL) return minlsh__dedup_intake_none(status, n, MINLSH_E_NOMEM);
    for (i = 0, canon = 0; i < n; i++) {
        b.canon_off[i] = canon;
        if (docs[i].id_kind == MINLSH_DEDUP_ID_JSON) canon += docs[i].id_n + 32;
    }
    if (any_id && !d->ids.on) {
        /* From now on every document has an entry: those before get none. */
        const uint8_t *key = minlsh_default_key();
        d->ids.k0 = minlsh__load64le(key);
        d->ids.k1 = minlsh__load64le(key + 8);
        d->ids.on = 1;
    }
    if (d->ids.on) rc = minlsh__dedup_ids_fill(d, d->n_docs);
    if (rc == 0) rc = minlsh__dedup_docs_reserve(d, n);
    if (rc == 0)
        rc = minlsh__pool_run(minlsh__dedup_pool(d), n, 16, minlsh__dedup_intake_check, &b);
    checked = rc == 0; /* step 1 went through every document */
    if (rc == 0 && any_id) {
        looked_up = 1;
        minlsh__dedup_intake_by_shard(&b);
        /* Whole shards to a worker, a few each time, so that one walk
         * fetches ahead across them: all 64 in one walk on one thread. */
        unsigned workers = minlsh__pool_size(minlsh__dedup_pool(d));
        size_t chunk =
            workers < 2 ? MINLSH__DEDUP_ID_SHARDS : MINLSH__DEDUP_ID_SHARDS / 4 / workers;
        rc = minlsh__pool_run(minlsh__dedup_pool(d), MINLSH__DEDUP_ID_SHARDS, chunk,
                              minlsh__dedup_intake_ids, &b);
    }
    while (rc == 0 && at < n) rc = minlsh__dedup_intake_segment(&b, &at);
    if (rc != 0) {
        /* Nothing from the document that failed on is added. */
        if (looked_up) minlsh__dedup_intake_unslot(&b, at);
        for (i = at; i < n; i++)
            if (!checked || b.status[i] >= 0) b.status[i] = rc;
    }
    for (i = 0; i < n; i++) {
        if (b.status[i] == MINLSH_DEDUP_REPEATED_ID) d->ids.repeated++;
        if (b.status[i] < 0 && first == 0) first = b.status[i];
        if (status != NULL) status[i] = b.status[i];
    }
    return minlsh__dedup_io_result(d, first);
}
