/*
 * Ordered open-addressing tables (lsh.h): linear probing with a monotone
 * home, home(tag) = tag * cap / 2^32, and the entries kept sorted by tag.
 *
 * Invariants: entries appear in nondecreasing tag order; each sits at or
 * after its home with no empty entry in between; the entry at len - 1 is
 * empty (so an insert always finds an empty entry to shift into, without
 * wrapping around).
 *
 * Why sorted: rehashing to any new size is then one sequential pass (each
 * entry goes to max(its new home, previous position + 1), which keeps both
 * invariants), so the table can grow by 5/4 instead of doubling and its
 * load stays within 4/5 of its maximum: at the default maximum of 7/8 the
 * memory per entry stays between 9.1 and 11.5 bytes instead of 9.1 to
 * 18.3. Lookups also stop at the first larger tag, so an absent key costs
 * about as much as a present one.
 */
#include "lsh.h"

#define MINLSH__TAB_MIN 16
#define MINLSH__TAB_MAX UINT64_C(0x100000000) /* homes come from 32-bit tags */

static size_t minlsh__tab_tail(size_t cap, size_t extra) {
    return cap / 64 + 16 + extra;
}

/* Move t's entries into n (all empty, n->len entries): each goes to
 * max(its home, previous position + 1). Returns 0, or -1 if the last entry
 * would land past n->len - 1 - extra (the caller retries with more tail). */
static int minlsh__tab_move(const minlsh__lsh_table *t, minlsh__lsh_table *n, size_t extra) {
    const minlsh__lsh_entry *e = t->e, *end;
    size_t next = 0, limit = n->len - 1 - extra;
    uint64_t cap = n->cap;
    if (e == NULL) return 0; /* a table never used */
    end = e + t->len;
    for (; e < end; e++) {
        size_t h;
        if (e->val == MINLSH__LSH_NIL) continue;
        h = (size_t)(((uint64_t)e->tag * cap) >> 32);
        if (h < next) h = next;
        if (h >= limit) return -1;
        n->e[h] = *e;
        next = h + 1;
    }
    return 0;
}

/* Rebuild t with cap home positions and room for `extra` empty entries at
 * the end: one sequential pass (two if the tail was too short). */
static int minlsh__tab_rebuild(const minlsh_allocator *a, minlsh__lsh_table *t,
                               size_t cap, size_t extra) {
    minlsh__lsh_table n;
    size_t bytes, tail = minlsh__tab_tail(cap, extra);
    for (;;) {
        n.cap = cap;
        n.used = t->used;
        n.max_load = t->max_load;
        if (minlsh__add_size(&n.len, cap, tail) != 0 ||
            minlsh__mul_size(&bytes, n.len, sizeof *n.e) != 0)
            return MINLSH_E_TOOBIG;
        n.e = (minlsh__lsh_entry *)minlsh__malloc(a, bytes);
        if (n.e == NULL) return MINLSH_E_NOMEM;
        /* NIL is all ones: empty entries by memset. */
        memset(n.e, 0xFF, bytes);
        if (minlsh__tab_move(t, &n, extra) == 0) break;
        minlsh__free(a, n.e);
        if (tail > SIZE_MAX / 4) return MINLSH_E_TOOBIG;
        tail = tail * 2 + t->used; /* always enough: used entries past cap at most */
    }
    minlsh__free(a, t->e);
    *t = n;
    return 0;
}

int minlsh__tab_reserve(const minlsh_allocator *a, minlsh__lsh_table *t, size_t extra) {
    size_t need, cap;
    if (minlsh__add_size(&need, t->used, extra) != 0) return MINLSH_E_TOOBIG;
    /* The last entry must be empty before each insert (the caller reserves
     * once per insert; a bulk reserve only sets the size). */
    if (t->cap != 0 && t->e[t->len - 1].val == MINLSH__LSH_NIL) {
        if (minlsh__tab_fits(t, t->cap, need)) return 0;
        if ((uint64_t)t->cap >= MINLSH__TAB_MAX && need < t->cap) return 0;
    }
    cap = t->cap;
    if (!minlsh__tab_fits(t, cap, need)) {
        if (cap < MINLSH__TAB_MIN) cap = MINLSH__TAB_MIN;
        while (!minlsh__tab_fits(t, cap, need) && (uint64_t)cap < MINLSH__TAB_MAX) {
            size_t grown = cap + cap / 4;
            if ((uint64_t)grown > MINLSH__TAB_MAX) grown = (size_t)MINLSH__TAB_MAX;
            cap = grown;
        }
        if (!minlsh__tab_fits(t, cap, need) && need >= cap) return MINLSH_E_TOOBIG;
    }
    return minlsh__tab_rebuild(a, t, cap, 1);
}

void minlsh__tab_insert_at(minlsh__lsh_table *t, size_t p, minlsh__lsh_entry x) {
    minlsh__lsh_entry *e = t->e + p, *end = e;
    while (end->val != MINLSH__LSH_NIL) end++;
    /* Runs are short at these loads: an inline shift beats a memmove call. */
    if (end - e > 16) {
        memmove(e + 1, e, (size_t)(end - e) * sizeof *e);
    } else {
        for (; end > e; end--) end[0] = end[-1];
    }
    *e = x;
    t->used++;
}

void minlsh__tab_delete_at(minlsh__lsh_table *t, size_t p) {
    size_t i = p;
    /* Pull the rest of the run back while its entries are past their home. */
    while (t->e[i + 1].val != MINLSH__LSH_NIL && minlsh__tab_home(t, t->e[i + 1].tag) <= i) {
        t->e[i] = t->e[i + 1];
        i++;
    }
    t->e[i].val = MINLSH__LSH_NIL;
    t->used--;
}

void minlsh__tab_free(const minlsh_allocator *a, minlsh__lsh_table *t) {
    minlsh__free(a, t->e);
    t->e = NULL;
    t->cap = t->len = t->used = 0;
}

size_t minlsh__tab_bytes(const minlsh__lsh_table *t) {
    return t->len * sizeof *t->e;
}
