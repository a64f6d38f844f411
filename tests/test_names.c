/*
 * The command's name table (programs/names.c): every name comes back as
 * it was added, whatever its length (empty, longer than a chunk) and
 * wherever it falls (groups of names across chunk ends); repeats are found
 * with their first number; a path and a JSON id with the same bytes are
 * different names; room reserved ahead keeps the table from growing.
 */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "../programs/cli.h"

#define N 300000

/* Name i: its length varies (0 to 40 bytes, and every 50,000th is 3 MiB,
 * longer than a chunk), its bytes depend on i. */
static size_t name_of(size_t i, char *buf, size_t cap) {
    size_t n = i % 50000 == 7 ? (size_t)3 << 20 : (i * 7919) % 41, k;
    if (n > cap) n = cap;
    for (k = 0; k < n; k++) buf[k] = (char)('a' + (i * 31 + k * 17) % 26);
    if (n >= 8) memcpy(buf, &i, sizeof i); /* distinct */
    return n;
}

static void test_round_trip(void) {
    static name_table t;
    char *buf = malloc((size_t)3 << 20), *again = malloc((size_t)3 << 20);
    size_t i, added = 0, dup = 0, bad = 0;
    memset(&t, 0, sizeof t);
    for (i = 0; i < N; i++) {
        size_t n = name_of(i, buf, (size_t)3 << 20);
        int json = (int)(i % 3 == 0);
        size_t d = 0;
        int fresh = names_add(&t, buf, n, json, &d);
        if (fresh) added++;
        else if (i < 8 * 41 * 3) dup++; /* short names repeat: fine */
        if (!fresh) {
            cli_name nm = names_get(&t, d);
            if (nm.n != n || nm.json != json || memcmp(nm.s, buf, n) != 0) bad++;
        }
    }
    EXPECT_EQ_U64(t.n, added);
    EXPECT_EQ_U64(bad, 0);
    /* every stored name reads back; the numbers are insertion order */
    for (i = 0, bad = 0; i < N; i++) {
        size_t n = name_of(i, again, (size_t)3 << 20), d = 0;
        int json = (int)(i % 3 == 0);
        EXPECT(names_add(&t, again, n, json, &d) == 0);
        {
            cli_name nm = names_get(&t, d);
            if (nm.n != n || nm.json != json || memcmp(nm.s, again, n) != 0) bad++;
        }
    }
    EXPECT_EQ_U64(bad, 0);
    EXPECT(t.n_chunks > 3);
    /* a path and a JSON id with the same bytes are two names */
    EXPECT(names_add(&t, "zz-not-there", 12, 0, NULL) == 1);
    EXPECT(names_add(&t, "zz-not-there", 12, 1, NULL) == 1);
    EXPECT(names_add(&t, "zz-not-there", 12, 1, NULL) == 0);
    names_free(&t);
    free(buf);
    free(again);
}

/* names_append: numbers as names_add gives them, found by names_find
 * without hash slots, and a names_add afterwards hashes them all (a
 * duplicate of an appended name is refused). */
static void test_append(void) {
    name_table t;
    char nm[32];
    size_t i, at = 0;
    int bad = 0;
    memset(&t, 0, sizeof t);
    for (i = 0; i < 1000; i++) {
        int n = snprintf(nm, sizeof nm, "\"doc-%zu\"", i);
        names_append(&t, nm, (size_t)n, 1);
    }
    EXPECT_EQ_U64(t.n, 1000);
    for (i = 0; i < 1000; i += 37) {
        int n = snprintf(nm, sizeof nm, "\"doc-%zu\"", i);
        cli_name got = names_get(&t, i);
        if (got.n != (size_t)n || memcmp(got.s, nm, (size_t)n) != 0 || !got.json) bad++;
        if (!names_find(&t, nm, (size_t)n, 1, &at) || at != i) bad++;
    }
    EXPECT_EQ_INT(bad, 0);
    EXPECT(!names_find(&t, "\"doc-1000\"", 10, 1, NULL));
    EXPECT(!names_add(&t, "\"doc-500\"", 9, 1, &at));
    EXPECT_EQ_U64(at, 500);
    EXPECT(names_add(&t, "\"doc-1000\"", 10, 1, NULL));
    EXPECT(names_find(&t, "\"doc-999\"", 9, 1, &at) && at == 999);
    names_free(&t);
}

/* names_reserve: room made once, before or after names were added, keeps
 * every name findable under its number and the table from growing again;
 * a reservation smaller than the table changes nothing; on a table of
 * appended names (no slots yet) it waits for names_add. */
static void test_reserve(void) {
    name_table t;
    char nm[32];
    size_t i, at = 0, slots;
    int bad = 0;
    memset(&t, 0, sizeof t);
    for (i = 0; i < 500; i++) {
        int n = snprintf(nm, sizeof nm, "id-%zu", i);
        EXPECT(names_add(&t, nm, (size_t)n, 1, NULL) == 1);
    }
    names_reserve(&t, 100000);
    slots = t.mask + 1;
    EXPECT(slots * 3 >= (size_t)100000 * 4);
    EXPECT(slots <= (size_t)100000 * 4 / 3 * 2);
    for (i = 500; i < 100000; i++) {
        int n = snprintf(nm, sizeof nm, "id-%zu", i);
        if (names_add(&t, nm, (size_t)n, 1, NULL) != 1) bad++;
    }
    EXPECT_EQ_INT(bad, 0);
    EXPECT_EQ_U64(t.mask + 1, slots); /* no growth on the way */
    for (i = 0; i < 100000; i += 97) {
        int n = snprintf(nm, sizeof nm, "id-%zu", i);
        if (names_add(&t, nm, (size_t)n, 1, &at) != 0 || at != i) bad++;
    }
    EXPECT_EQ_INT(bad, 0);
    names_reserve(&t, 10);
    EXPECT_EQ_U64(t.mask + 1, slots);
    names_free(&t);

    memset(&t, 0, sizeof t);
    names_append(&t, "a", 1, 0);
    names_reserve(&t, 1000);
    EXPECT_EQ_U64(t.mask, 0);
    EXPECT(names_add(&t, "a", 1, 0, &at) == 0 && at == 0);
    names_free(&t);
}

int main(void) {
    RUN(test_round_trip);
    RUN(test_append);
    RUN(test_reserve);
    return TL_SUMMARY("names");
}
