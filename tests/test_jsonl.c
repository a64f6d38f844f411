/*
 * The library's JSON Lines reader (lib/jsonl/): a block read at once gives,
 * record for record, what minlsh_jsonl_parse_line gives line by line
 * (texts, id tokens, statuses), with the command's line rules (blank lines
 * skipped, a carriage return before the newline left out, a byte-order mark
 * left out only at the input's start); short buffers, bad flags and NULLs
 * are refused; a streamed line's callbacks stop the parse with their code.
 * The parser's JSON rules themselves are tested through the command's
 * wrappers in test_json.c (and fuzz_json).
 */
#include <string.h>

#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testalloc.h"
#include "testlib.h"

#define CAP 32

typedef struct parsed {
    size_t n;
    char texts[1024];
    uint64_t text_offsets[CAP + 1], id_offsets[CAP], id_lengths[CAP], line_offsets[CAP];
    int32_t status[CAP];
} parsed;

static int parse(parsed *p, const char *block, size_t len, uint32_t flags) {
    return minlsh_jsonl_parse_block(block, len, flags, "id", "text", p->texts, sizeof p->texts,
                                    p->text_offsets, p->id_offsets, p->id_lengths,
                                    p->line_offsets, p->status, CAP, &p->n);
}

/* Record i of p against minlsh_jsonl_parse_line on its line (which ends at
 * the next newline, its carriage return left out). */
static void check_record(const parsed *p, const char *block, size_t len, size_t i) {
    const char *line = block + p->line_offsets[i];
    const char *nl = memchr(line, '\n', len - (size_t)p->line_offsets[i]);
    size_t l = nl != NULL ? (size_t)(nl - line) : len - (size_t)p->line_offsets[i];
    char text[1024], msg[128];
    size_t tl = 9, io = 9, il = 9;
    int rc;
    if (l > 0 && line[l - 1] == '\r') l--;
    if (i == 0 && l >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
        line += 3; /* the mark left out (the test's blocks have it only there) */
        l -= 3;
    }
    rc = minlsh_jsonl_parse_line(line, l, "id", "text", text, sizeof text, &tl, &io, &il, msg,
                                 sizeof msg);
    EXPECT_EQ_INT(p->status[i], rc);
    if (rc == MINLSH_OK) {
        EXPECT_EQ_U64(p->text_offsets[i + 1] - p->text_offsets[i], tl);
        EXPECT(memcmp(p->texts + p->text_offsets[i], text, tl) == 0);
        EXPECT_EQ_U64(p->id_lengths[i], il);
        EXPECT(memcmp(block + p->id_offsets[i], line + io, il) == 0);
        EXPECT(msg[0] == '\0');
    } else {
        EXPECT_EQ_INT(rc, MINLSH_E_FORMAT);
        EXPECT_EQ_U64(p->text_offsets[i + 1], p->text_offsets[i]);
        EXPECT_EQ_U64(p->id_lengths[i], 0);
        EXPECT(msg[0] != '\0');
    }
}

static const char BLOCK[] =
    "{\"id\": 1, \"text\": \"one two\"}\n"
    "\n"
    "  \t \r\n"
    "{\"id\": \"b\\u00e9\", \"text\": \"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\"\"}\r\n"
    "{\"id\": 3, \"text\": \"x\", \"text\": \"later\"}\n"
    "not json\n"
    "{\"id\": true, \"text\": \"t\"}\n"
    "{\"id\": 5}\n"
    "{\"id\": 6, \"text\": \"\"}\n"
    "{\"id\": -7.5e2, \"text\": \"bad \xC3\"}\n"
    "{\"id\": 8, \"text\": \"last, no newline\"}";

static void test_block_matches_lines(void) {
    static const int32_t want[] = {0, 0, 0, MINLSH_E_FORMAT, MINLSH_E_FORMAT, MINLSH_E_FORMAT,
                                   0, MINLSH_E_FORMAT, 0};
    parsed p;
    size_t len = sizeof BLOCK - 1, i;
    EXPECT_OK(parse(&p, BLOCK, len, 0));
    EXPECT_EQ_U64(p.n, sizeof want / sizeof want[0]);
    for (i = 0; i < p.n && i < sizeof want / sizeof want[0]; i++) {
        EXPECT_EQ_INT(p.status[i], want[i]);
        check_record(&p, BLOCK, len, i);
    }
    /* Decoded texts, one after the other. */
    EXPECT(memcmp(p.texts + p.text_offsets[1], "caf\xC3\xA9 \xF0\x9F\x98\x80 \"q\"", 13) == 0);
    EXPECT(memcmp(p.texts + p.text_offsets[2], "later", 5) == 0);
    EXPECT_EQ_U64(p.text_offsets[6], p.text_offsets[5]); /* "" */
    EXPECT_EQ_U64(p.line_offsets[1], strstr(BLOCK, "{\"id\": \"b") - BLOCK);
    EXPECT(memcmp(BLOCK + p.id_offsets[1], "\"b\\u00e9\"", 9) == 0);
    EXPECT(memcmp(BLOCK + p.id_offsets[0], "1", 1) == 0 && p.id_lengths[0] == 1);
}

static void test_byte_order_mark(void) {
    static const char bom[] = "\xEF\xBB\xBF{\"id\": 1, \"text\": \"a\"}\n{\"id\": 2, \"text\": \"b\"}\n";
    parsed p;
    EXPECT_OK(parse(&p, bom, sizeof bom - 1, MINLSH_JSONL_INPUT_START));
    EXPECT_EQ_U64(p.n, 2);
    EXPECT_EQ_INT(p.status[0], MINLSH_OK);
    EXPECT_EQ_U64(p.line_offsets[0], 3);
    check_record(&p, bom, sizeof bom - 1, 0);
    /* In the middle of an input the mark is not white space: not a record. */
    EXPECT_OK(parse(&p, bom, sizeof bom - 1, 0));
    EXPECT_EQ_U64(p.n, 2);
    EXPECT_EQ_INT(p.status[0], MINLSH_E_FORMAT);
    EXPECT_EQ_INT(p.status[1], MINLSH_OK);
}

static void test_short_buffers_and_arguments(void) {
    parsed p;
    uint64_t offs[3], ids[2], lens[2];
    int32_t st[2];
    char texts[8];
    size_t n = 99, len = sizeof BLOCK - 1;
    /* Too few records: the number needed. */
    EXPECT_ERR(minlsh_jsonl_parse_block(BLOCK, len, 0, "id", "text", p.texts, sizeof p.texts,
                                        offs, ids, lens, NULL, st, 2, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_EQ_U64(n, 9);
    /* Too little room for the texts. */
    EXPECT_ERR(minlsh_jsonl_parse_block(BLOCK, len, 0, "id", "text", texts, sizeof texts,
                                        p.text_offsets, p.id_offsets, p.id_lengths, NULL,
                                        p.status, CAP, &n),
               MINLSH_E_BUFSIZE);
    EXPECT_ERR(parse(&p, BLOCK, len, 2), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_jsonl_parse_block(BLOCK, len, 0, NULL, "text", p.texts, sizeof p.texts,
                                        p.text_offsets, p.id_offsets, p.id_lengths, NULL,
                                        p.status, CAP, &n),
               MINLSH_E_NULL);
    EXPECT_ERR(minlsh_jsonl_parse_block(BLOCK, len, 0, "id", "text", p.texts, sizeof p.texts,
                                        p.text_offsets, p.id_offsets, p.id_lengths, NULL,
                                        p.status, CAP, NULL),
               MINLSH_E_NULL);
    /* An empty block: no records, one offset. */
    EXPECT_OK(minlsh_jsonl_parse_block(NULL, 0, 0, "id", "text", NULL, 0, offs, NULL, NULL, NULL,
                                       NULL, 0, &n));
    EXPECT_EQ_U64(n, 0);
    EXPECT_EQ_U64(offs[0], 0);
}

static void test_line(void) {
    char text[64], msg[96];
    size_t tl, io, il;
    const char *rec = "{\"text\": \"a\\tb\", \"id\": \"x\"}";
    EXPECT_OK(minlsh_jsonl_parse_line(rec, strlen(rec), "id", "text", text, sizeof text, &tl, &io,
                                      &il, msg, sizeof msg));
    EXPECT(tl == 3 && memcmp(text, "a\tb", 3) == 0);
    EXPECT(il == 3 && memcmp(rec + io, "\"x\"", 3) == 0);
    EXPECT_EQ_INT(minlsh_jsonl_parse_line(" \t", 2, "id", "text", text, sizeof text, &tl, &io,
                                          &il, msg, sizeof msg),
                  MINLSH_JSONL_BLANK);
    EXPECT_ERR(minlsh_jsonl_parse_line("{\"id\": 1, \"text\": 2}", 20, "id", "text", text,
                                       sizeof text, &tl, &io, &il, msg, sizeof msg),
               MINLSH_E_FORMAT);
    EXPECT(strcmp(msg, "field \"text\" is not a string") == 0);
    EXPECT_ERR(minlsh_jsonl_parse_line("{\"id\": 1,}", 10, "id", "text", text, sizeof text, &tl,
                                       &io, &il, msg, sizeof msg),
               MINLSH_E_FORMAT);
    EXPECT(strstr(msg, "column 10") != NULL);
    /* No room for the message: still the code. */
    EXPECT_ERR(minlsh_jsonl_parse_line("[]", 2, "id", "text", text, sizeof text, &tl, &io, &il,
                                       NULL, 0),
               MINLSH_E_FORMAT);
    EXPECT_ERR(minlsh_jsonl_parse_line(rec, strlen(rec), "id", "text", text, 2, &tl, &io, &il,
                                       msg, sizeof msg),
               MINLSH_E_BUFSIZE);
    EXPECT_ERR(minlsh_jsonl_parse_line(rec, strlen(rec), "id", "text", text, sizeof text, NULL,
                                       &io, &il, msg, sizeof msg),
               MINLSH_E_NULL);
}

static void test_string_decode(void) {
    char out[16];
    size_t n = 9;
    EXPECT_OK(minlsh_json_string_decode("\"a\\u00e9\\/\"", 11, out, sizeof out, &n));
    EXPECT(n == 4 && memcmp(out, "a\xC3\xA9/", 4) == 0);
    EXPECT_ERR(minlsh_json_string_decode("\"a\" ", 4, out, sizeof out, &n), MINLSH_E_FORMAT);
    EXPECT_ERR(minlsh_json_string_decode("12", 2, out, sizeof out, &n), MINLSH_E_FORMAT);
    EXPECT_ERR(minlsh_json_string_decode("\"\\ud800\"", 8, out, sizeof out, &n),
               MINLSH_E_FORMAT);
    EXPECT_ERR(minlsh_json_string_decode("\"abcdef\"", 8, out, 3, &n), MINLSH_E_BUFSIZE);
    EXPECT_ERR(minlsh_json_string_decode("\"a\"", 3, out, sizeof out, NULL), MINLSH_E_NULL);
}

/* A streamed line whose callbacks stop the parse. */
typedef struct pieces {
    const char *line;
    size_t len, at;
    int stop_next, stop_text, ids;
} pieces;

static int next_piece(void *ctx, const unsigned char **piece, size_t *n) {
    pieces *s = ctx;
    if (s->at >= s->len) return 0;
    if (s->stop_next && s->at > 0) return s->stop_next;
    *piece = (const unsigned char *)s->line + s->at;
    *n = s->len - s->at < 3 ? s->len - s->at : 3;
    s->at += *n;
    return 1;
}

static int take_text(void *ctx, const char *p, size_t n) {
    pieces *s = ctx;
    (void)p;
    (void)n;
    return s->stop_text;
}

static int take_id(void *ctx, const char *p, size_t n) {
    pieces *s = ctx;
    s->ids += n == 1 && p[0] == '4';
    return 0;
}

static void test_stream_stops(void) {
    const char *line = "{\"id\": 4, \"text\": \"some text\"}";
    pieces s = {line, strlen(line), 0, 0, 0, 0};
    minlsh_jsonl_source src = {next_piece, take_text, NULL, take_id, &s};
    char msg[64];
    EXPECT_OK(minlsh_jsonl_parse_stream(&src, "id", "text", msg, sizeof msg, NULL));
    EXPECT_EQ_INT(s.ids, 1);
    s.at = 0;
    s.stop_next = MINLSH_E_IO;
    EXPECT_ERR(minlsh_jsonl_parse_stream(&src, "id", "text", msg, sizeof msg, NULL), MINLSH_E_IO);
    EXPECT(msg[0] == '\0');
    s.at = 0;
    s.stop_next = 0;
    s.stop_text = MINLSH_E_TOOBIG;
    EXPECT_ERR(minlsh_jsonl_parse_stream(&src, "id", "text", msg, sizeof msg, NULL), MINLSH_E_TOOBIG);
    EXPECT_EQ_INT(s.ids, 1); /* the id of a stopped record is not given */
    src.id = NULL;
    EXPECT_ERR(minlsh_jsonl_parse_stream(&src, "id", "text", msg, sizeof msg, NULL), MINLSH_E_NULL);
}

/* Every allocation of a streamed line failing in turn: MINLSH_E_NOMEM,
 * nothing left allocated; then the same line parses. The held-line calls
 * take no allocator: they allocate nothing. */
static void test_stream_nomem(void) {
    char line[300];
    pieces s = {line, 0, 0, 0, 0, 0};
    minlsh_jsonl_source src = {next_piece, take_text, NULL, take_id, &s};
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    int nth, rc, failures = 0;
    /* A long id makes the id buffer grow after the window's allocation. */
    snprintf(line, sizeof line, "{\"id\": \"%0200d\", \"text\": \"t\", \"id\": 4}", 0);
    s.len = strlen(line);
    for (nth = 1; nth < 20; nth++) {
        s.at = 0;
        ta_fail_nth(&ta, nth);
        rc = minlsh_jsonl_parse_stream(&src, "id", "text", NULL, 0, &al);
        EXPECT_EQ_INT(ta_blocks(&ta), 0);
        if (rc == MINLSH_OK) break;
        EXPECT_EQ_INT(rc, MINLSH_E_NOMEM);
        failures++;
    }
    ta_fail_nth(&ta, 0);
    EXPECT(failures >= 2);
    EXPECT(nth < 20);
    s.at = 0;
    al.alloc = NULL;
    EXPECT_ERR(minlsh_jsonl_parse_stream(&src, "id", "text", NULL, 0, &al), MINLSH_E_PARAM);
}

int main(void) {
    RUN(test_block_matches_lines);
    RUN(test_byte_order_mark);
    RUN(test_short_buffers_and_arguments);
    RUN(test_line);
    RUN(test_string_decode);
    RUN(test_stream_stops);
    RUN(test_stream_nomem);
    return TL_SUMMARY("jsonl");
}
