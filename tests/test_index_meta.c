/*
 * The command's metadata in an index file (programs/index_meta.c): what is
 * written, that it reads back, and the exact message for each way a damaged
 * blob is refused (a last name without its newline, a name that is not one
 * JSON token, duplicates, missing or bad header keys, NUL bytes). Linked
 * with the command sources it needs (mk/cli.mk).
 */
#include "testlib.h"

#include "../programs/cli.h"

#define HEAD                                                                   \
    "minlsh-cli-index 1\nshingle=word:5\nnormalize=html,lowercase\nkey=default\n" \
    "threshold=0.85\nnum-perm=128\nseed=1\nverify=signature\nplan=recall\n"

static void expect_parse(int line, const char *data, size_t n, int want_rc,
                         const char *want_err) {
    index_meta m;
    char err[200];
    int rc = index_meta_parse(&m, data, n, err, sizeof err);
    EXPECT_MSG(rc == want_rc && strcmp(err, want_err) == 0,
               "line %d: got %d '%s', expected %d '%s'", line, rc, err, want_rc, want_err);
    EXPECT_MSG(rc == 0 || m.names.n == 0, "line %d: names kept after a failure", line);
    index_meta_free(&m);
}
#define PARSE(s, rc, msg) expect_parse(__LINE__, s, strlen(s), rc, msg)

static void test_roundtrip(void) {
    index_meta m, back;
    cli_buf b = {NULL, 0, 0};
    char err[200];
    static const char want[] = HEAD "documents=3\n\n\"day1/a.html\"\n42\n\"x\\u00e9\"\n";
    memset(&m, 0, sizeof m);
    m.unit = MINLSH_UNIT_WORD;
    m.shingle_k = 5;
    m.flags = MINLSH_NORM_HTML | MINLSH_NORM_CASEFOLD;
    m.threshold = 0.85;
    snprintf(m.plan, sizeof m.plan, "recall");
    EXPECT(names_add(&m.names, "\"day1/a.html\"", 13, 1, NULL));
    EXPECT(names_add(&m.names, "42", 2, 1, NULL));
    EXPECT(names_add(&m.names, "\"x\\u00e9\"", 9, 1, NULL));
    index_meta_build(&b, &m, 128, 1);
    EXPECT_MSG(b.n == strlen(want) && memcmp(b.p, want, b.n) == 0, "got:\n%s", b.p);
    EXPECT_OK(index_meta_parse(&back, b.p, b.n, err, sizeof err));
    EXPECT(back.unit == m.unit && back.shingle_k == 5 && back.flags == m.flags &&
           back.custom_key == 0 && back.threshold == 0.85 && strcmp(back.plan, "recall") == 0);
    EXPECT(back.names.n == 3);
    if (back.names.n == 3) {
        cli_name nm = names_get(&back.names, 2);
        EXPECT(nm.n == 9 && memcmp(nm.s, "\"x\\u00e9\"", 9) == 0 && nm.json);
    }
    index_meta_free(&back);
    index_meta_free(&m);
    buf_free(&b);
    /* No documents; unknown keys are ignored. */
    PARSE(HEAD "later=1\ndocuments=0\n\n", 0, "");
}

static void test_not_ours(void) {
    PARSE("", 1, "");
    PARSE("something else\n", 1, "");
    PARSE("minlsh-cli-index 2\n", 1, "");
    PARSE("minlsh-cli-index 1", 1, "");
}

static void test_names_strict(void) {
    PARSE(HEAD "documents=2\n\n\"a\"\n\"b\"", -1,
          "name 1 (line 13) is not terminated by a newline");
    PARSE(HEAD "documents=1\n\n\"a\n", -1,
          "name 0 (line 12) is not a JSON string or number: '\"a'");
    PARSE(HEAD "documents=1\n\n\"a\\\"\n", -1,
          "name 0 (line 12) is not a JSON string or number: '\"a\\\"'");
    PARSE(HEAD "documents=1\n\nplain\n", -1,
          "name 0 (line 12) is not a JSON string or number: 'plain'");
    PARSE(HEAD "documents=1\n\n\"a\" \n", -1,
          "name 0 (line 12) is not a JSON string or number: '\"a\" '");
    PARSE(HEAD "documents=1\n\n01\n", -1,
          "name 0 (line 12) is not a JSON string or number: '01'");
    PARSE(HEAD "documents=1\n\n\"\\ud800\"\n", -1,
          "name 0 (line 12) is not a JSON string or number: '\"\\ud800\"'");
    PARSE(HEAD "documents=2\n\n\"a\"\n\n", -1,
          "name 1 (line 13) is not a JSON string or number: ''");
    PARSE(HEAD "documents=2\n\n\"a\"\n\"a\"\n", -1, "name 1 (line 13) is a duplicate: \"a\"");
    PARSE(HEAD "documents=3\n\n\"a\"\n\"b\"\n", -1, "2 names for documents=3");
    PARSE(HEAD "documents=1\n\n\"a\"\n\"b\"\n", -1, "2 names for documents=1");
    expect_parse(__LINE__, HEAD "documents=1\n\n\"a\0\"\n", sizeof HEAD + 18, -1,
                 "a NUL byte at byte 150");
}

static void test_header_strict(void) {
    PARSE("minlsh-cli-index 1\nshingle=word:5\n", -1, "the header does not end (no empty line)");
    PARSE("minlsh-cli-index 1\nshingle\n\n", -1, "header line 'shingle' is not key=value");
    PARSE("minlsh-cli-index 1\nshingle=word:5\nnormalize=none\nkey=default\n"
          "threshold=0.8\n\n",
          -1, "no documents= in the header");
    PARSE("minlsh-cli-index 1\nnormalize=none\n\n", -1, "no shingle= in the header");
    PARSE("minlsh-cli-index 1\nshingle=word\n\n", -1, "bad value 'word' for shingle");
    PARSE("minlsh-cli-index 1\nnormalize=upper\n\n", -1, "bad value 'upper' for normalize");
    PARSE("minlsh-cli-index 1\nkey=mine\n\n", -1, "bad value 'mine' for key");
    PARSE("minlsh-cli-index 1\nthreshold=1.5\n\n", -1, "bad value '1.5' for threshold");
    PARSE("minlsh-cli-index 1\nthreshold=\n\n", -1, "bad value '' for threshold");
    PARSE("minlsh-cli-index 1\ndocuments=-1\n\n", -1, "bad value '-1' for documents");
    PARSE("minlsh-cli-index 1\ndocuments=2x\n\n", -1, "bad value '2x' for documents");
}

int main(void) {
    RUN(test_roundtrip);
    RUN(test_not_ours);
    RUN(test_names_strict);
    RUN(test_header_strict);
    return TL_SUMMARY("test_index_meta");
}
