/*
 * The store's name table (lib/store/names.c), built at the first lookup of
 * a name rather than at open: a handle that opens a store and queries it
 * never allocates it; once built it gives the answers a scan would, through
 * removals, names given again, and records replayed from other handles,
 * whether it was built before or after the replay; a file whose names
 * repeat opens and answers queries, and the first call that must tell names
 * apart reports it damaged. (test_tsan.c builds it from 8 threads at once.)
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#include <stdio.h>
#include <unistd.h>

#define DOCS 3000 /* in the file, after a compaction */
#define MORE 200  /* in the journal */

static size_t page_text(char *buf, size_t cap, uint64_t i) {
    uint64_t st = i * 7919 + 17;
    size_t n = 0;
    int w;
    for (w = 0; w < 60; w++)
        n += (size_t)snprintf(buf + n, cap - n, "w%llu ", (unsigned long long)(tl_rand(&st) % 20000));
    return n;
}

static size_t page_name(char *buf, size_t cap, uint64_t i) {
    return (size_t)snprintf(buf, cap, "https://example.org/%llu", (unsigned long long)i);
}

/* Pages first .. first + n - 1, named, always inserted; ids[i] gets page
 * i's id. */
static void add_pages(minlsh_store *s, uint64_t first, uint64_t n, uint64_t *ids) {
    char text[1000], name[64];
    uint64_t i;
    EXPECT_OK(minlsh_store_begin(s));
    for (i = first; i < first + n; i++) {
        minlsh_store_result r;
        size_t len = page_text(text, sizeof text, i), nl = page_name(name, sizeof name, i);
        int rc = minlsh_store_add(&r, s, text, len, name, nl, MINLSH_STORE_ADD_ALWAYS);
        EXPECT_MSG(rc == 0, "page %llu: %s", (unsigned long long)i, minlsh_error_name(rc));
        ids[i] = rc == 0 ? r.id : UINT64_MAX;
    }
    EXPECT_OK(minlsh_store_commit(s));
}

/* Pages whose names s must find, with their ids (UINT64_MAX: none). */
static int names_agree(const minlsh_store *s, const uint64_t *ids, uint64_t n) {
    char name[64];
    uint64_t i, id;
    int bad = 0;
    for (i = 0; i < n; i++) {
        size_t nl = page_name(name, sizeof name, i);
        int rc = minlsh_store_find_name(&id, s, name, nl);
        if (ids[i] == UINT64_MAX ? rc != MINLSH_E_NOTFOUND : (rc != 0 || id != ids[i])) bad++;
    }
    return bad;
}

static void test_built_at_first_lookup(void) {
    const char *p = tl_tmp_path("names_lazy.st");
    static uint64_t ids[DOCS + MORE];
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *s = NULL;
    minlsh_store_result r;
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    char text[1000];
    size_t len, opened, table;
    uint64_t id;
    tl_remove_store(p);
    o.flags = MINLSH_STORE_CREATE;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    if (s == NULL) return;
    add_pages(s, 0, DOCS, ids);
    EXPECT_OK(minlsh_store_compact(s));
    add_pages(s, DOCS, MORE, ids);
    minlsh_store_free(s);
    s = NULL;
    /* Open and query: no table. */
    o.flags = MINLSH_STORE_READONLY;
    o.alloc = &al;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    if (s == NULL) return;
    opened = ta_bytes(&ta);
    len = page_text(text, sizeof text, 77);
    EXPECT_OK(minlsh_store_query(&r, s, text, len));
    EXPECT(r.has_match && r.match == ids[77] && !r.novel);
    EXPECT_EQ_U64(ta_bytes(&ta), opened);
    /* The first lookup builds it: under half full, 8 bytes a slot. */
    EXPECT_ERR(minlsh_store_find_name(&id, s, "nobody", 6), MINLSH_E_NOTFOUND);
    table = ta_bytes(&ta) - opened;
    EXPECT_MSG(table >= 16 * (size_t)(DOCS + MORE) && table <= 64 * (size_t)(DOCS + MORE),
               "%s: the first lookup took %zu bytes for %d names", p, table, DOCS + MORE);
    EXPECT_EQ_INT(names_agree(s, ids, DOCS + MORE), 0);
    EXPECT_EQ_U64(ta_bytes(&ta), opened + table); /* built once */
    minlsh_store_free(s);
    EXPECT_EQ_INT(ta_blocks(&ta), 0);
    tl_remove_store(p);
}

/* A writer changes the names; a reader that built its table before the
 * change and one that did not catch up, and all three agree. */
static void test_changes_replayed(void) {
    const char *p = tl_tmp_path("names_changes.st");
    static uint64_t ids[DOCS + MORE + 50];
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *w = NULL, *early = NULL, *late = NULL;
    char name[64], text[1000];
    uint64_t i, id;
    tl_remove_store(p);
    o.flags = MINLSH_STORE_CREATE;
    EXPECT_OK(minlsh_store_open(&w, p, &o));
    if (w == NULL) return;
    add_pages(w, 0, DOCS, ids);
    EXPECT_OK(minlsh_store_compact(w));
    o.flags = MINLSH_STORE_READONLY;
    EXPECT_OK(minlsh_store_open(&early, p, &o));
    EXPECT_OK(minlsh_store_open(&late, p, &o));
    if (early == NULL || late == NULL) {
        minlsh_store_free(early);
        minlsh_store_free(w);
        return;
    }
    EXPECT_EQ_INT(names_agree(early, ids, DOCS), 0); /* early's table is built */
    /* Removals (runs in the table shift back), new names, and removed
     * names given to new documents. */
    EXPECT_OK(minlsh_store_begin(w));
    for (i = 0; i < DOCS; i += 3) {
        size_t nl = page_name(name, sizeof name, i);
        EXPECT_OK(minlsh_store_remove_name(w, name, nl));
        ids[i] = UINT64_MAX;
    }
    EXPECT_OK(minlsh_store_commit(w));
    add_pages(w, DOCS, MORE, ids);
    EXPECT_OK(minlsh_store_begin(w));
    for (i = 0; i < 150; i += 3) {
        minlsh_store_result r;
        size_t len = page_text(text, sizeof text, i + 1), nl = page_name(name, sizeof name, i);
        EXPECT_OK(minlsh_store_add(&r, w, text, len, name, nl, MINLSH_STORE_ADD_ALWAYS));
        ids[i] = r.id;
    }
    EXPECT_OK(minlsh_store_commit(w));
    EXPECT_OK(minlsh_store_refresh(early));
    EXPECT_OK(minlsh_store_refresh(late));
    EXPECT_EQ_INT(names_agree(w, ids, DOCS + MORE), 0);
    EXPECT_EQ_INT(names_agree(early, ids, DOCS + MORE), 0);
    EXPECT_EQ_INT(names_agree(late, ids, DOCS + MORE), 0);
    EXPECT_EQ_U64(minlsh_store_count(late), minlsh_store_count(w));
    /* A name in the store is refused a second time, in a handle whose table
     * came from a replay as in the writer's. */
    page_name(name, sizeof name, 1);
    EXPECT_ERR(minlsh_store_add(NULL, w, "x y z", 5, name, strlen(name), 0), MINLSH_E_EXISTS);
    EXPECT_OK(minlsh_store_find_name(&id, late, name, strlen(name)));
    EXPECT_EQ_U64(id, ids[1]);
    minlsh_store_free(early);
    minlsh_store_free(late);
    minlsh_store_free(w);
    tl_remove_store(p);
}

/* PATH's metadata names two documents alike (written here through the
 * index calls; the store never writes such a file). */
static void test_repeated_names(void) {
    const char *p = tl_tmp_path("names_repeated.st");
    char jp[4200];
    minlsh_store_options o = MINLSH_STORE_OPTIONS_INIT;
    minlsh_store *s = NULL;
    minlsh_index *ix = NULL;
    minlsh_store_result r;
    uint8_t meta[4096];
    size_t n = 0, i, found = 0;
    uint64_t id = 0;
    char text[1000];
    size_t len;
    tl_remove_store(p);
    snprintf(jp, sizeof jp, "%s.journal", p);
    o.flags = MINLSH_STORE_CREATE;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    if (s == NULL) return;
    len = page_text(text, sizeof text, 1);
    EXPECT_OK(minlsh_store_add(NULL, s, text, len, "page-one", 8, 0));
    len = page_text(text, sizeof text, 2);
    EXPECT_OK(minlsh_store_add(NULL, s, text, len, "page-two", 8, 0));
    EXPECT_OK(minlsh_store_compact(s));
    minlsh_store_free(s);
    s = NULL;
    EXPECT_OK(minlsh_index_load(&ix, p, NULL));
    if (ix == NULL) return;
    EXPECT_OK(minlsh_index_copy_metadata(ix, meta, sizeof meta, &n));
    for (i = 0; i + 8 <= n; i++)
        if (memcmp(meta + i, "page-two", 8) == 0) {
            memcpy(meta + i, "page-one", 8);
            found++;
        }
    EXPECT_MSG(found == 1, "%s: \"page-two\" %zu times in the metadata", p, found);
    EXPECT_OK(minlsh_index_set_metadata(ix, meta, n));
    EXPECT_OK(minlsh_index_save_mapped(ix, p));
    minlsh_index_free(ix);
    unlink(jp); /* it named the file replaced here */
    o.flags = 0;
    EXPECT_OK(minlsh_store_open(&s, p, &o));
    if (s == NULL) return;
    /* Queries need no names; a lookup that cannot build the table scans. */
    len = page_text(text, sizeof text, 2);
    EXPECT_OK(minlsh_store_query(&r, s, text, len));
    EXPECT(r.has_match && r.match == 1 && !r.novel);
    EXPECT_OK(minlsh_store_find_name(&id, s, "page-one", 8));
    EXPECT_EQ_U64(id, 0);
    EXPECT_ERR(minlsh_store_find_name(&id, s, "page-two", 8), MINLSH_E_NOTFOUND);
    /* Telling names apart finds the damage. */
    len = page_text(text, sizeof text, 3);
    EXPECT_ERR(minlsh_store_add(NULL, s, text, len, "page-three", 10, 0), MINLSH_E_CORRUPT);
    EXPECT_ERR(minlsh_store_remove_name(s, "page-one", 8), MINLSH_E_CORRUPT);
    EXPECT_EQ_U64(minlsh_store_count(s), 2);
    minlsh_store_free(s);
    tl_remove_store(p);
}

int main(void) {
    RUN(test_built_at_first_lookup);
    RUN(test_changes_replayed);
    RUN(test_repeated_names);
    return TL_SUMMARY("store_names");
}
