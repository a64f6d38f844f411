/*
 * The minlsh command: declarations shared by its source files.
 * Internal to programs/; the command uses only the public API (minlsh.h).
 *
 *   minlsh.c      main, dispatch, --help, --version
 *   util.c        checked allocation, growable buffers, messages, atomic file
 *                 writes, clocks, number formatting
 *   opts.c        option parsing into one cli_opts, shingler, family and plan
 *                 setup
 *   utf8.c        the UTF-8 decoder; validity checks, whole and streamed
 *   json.c        JSON Lines input through the library's reader, JSON escaping
 *   jsonstream.c  a JSON Lines line too long to hold, parsed as it is read
 *   input.c       walking PATHs into the list of input files
 *   stream.c      reading an input as bytes: plain, gzip or zstd (by the
 *                 first bytes), decompressed as it is read
 *   pipeline.c    reading (files, standard input, JSON Lines lines), shingling
 *                 and signing documents in parallel, for dedup, index and sig
 *   work.c        the thread pool
 *   names.c       document names (paths or JSON ids) with duplicate detection
 *   output.c      text, TSV and JSON Lines writers for pairs and clusters
 *   progress.c    the progress line on standard error
 *   dedup.c       minlsh dedup
 *   params.c      minlsh params
 *   index.c       minlsh index create, add, query, stats, merge, compact, remove
 *                 (I/O around minlsh_store)
 *   sig.c         minlsh sig
 */
#ifndef MINLSH_CLI_H
#define MINLSH_CLI_H

/* The command is built with the library it ships with, so it may use the
 * experimental calls (the dedup engine). */
#define MINLSH_EXPERIMENTAL_API 1
#include <minlsh.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit statuses. */
#define CLI_OK 0     /* everything went well */
#define CLI_FAILED 1 /* some inputs failed, or the run could not complete */
#define CLI_USAGE 2  /* bad command line */

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define CLI_NORETURN __attribute__((noreturn))
#else
#define CLI_PRINTF(f, a)
#define CLI_NORETURN
#endif

/* ---- util.c ------------------------------------------------------------- */

/* Allocation that never returns NULL: on failure "out of memory" is printed
 * and the process exits with status 1 (nothing is ever saved half-way, so
 * that is safe). Sizes are overflow-checked. */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
/* Grow *p (an array of *cap elements of size bytes) to hold at least need. */
void xgrow(void **p, size_t *cap, size_t need, size_t size);

/* A growable byte string; always NUL-terminated once anything was added. */
typedef struct cli_buf {
    char *p;
    size_t n, cap;
} cli_buf;

void buf_reserve(cli_buf *b, size_t extra);
void buf_add(cli_buf *b, const void *data, size_t n);
void buf_addc(cli_buf *b, char c);
void buf_adds(cli_buf *b, const char *s);
void buf_printf(cli_buf *b, const char *fmt, ...) CLI_PRINTF(2, 3);
void buf_clear(cli_buf *b);
void buf_free(cli_buf *b);

/* "minlsh: message" on standard error. */
void cli_msg(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Messages about single inputs, "minlsh: WHERE[:LINE]: message" (line 0:
 * the whole file). Each kind prints its first CLI_MSG_CAP messages; the
 * rest are counted, and cli_messages_end says how many there were.
 *
 * An input failed (it could not be read, or is not valid): the run will
 * exit with status 1. The kind is the format string. */
#define CLI_MSG_CAP 10
void cli_input_error(const char *where, uint64_t line, const char *fmt, ...)
    CLI_PRINTF(3, 4);
/* The same with a kind of its own, for a format that carries several kinds
 * of message ("%s"). */
void cli_input_error_as(const char *kind, const char *where, uint64_t line,
                        const char *fmt, ...) CLI_PRINTF(4, 5);
/* A document was skipped or read in a degraded way, by design: the exit
 * status does not change, --quiet silences the message, and the end of the
 * run gives the count of each kind. */
enum { CLI_W_EMPTY, CLI_W_TOOBIG, CLI_W_UTF8, CLI_W_COUNT };
void cli_doc_warning(int kind, const char *where, uint64_t line, const char *fmt,
                     ...) CLI_PRINTF(4, 5);
/* The number of warnings of a kind so far. */
uint64_t cli_doc_warnings(int kind);
/* With quiet set, cli_doc_warning only counts. */
void cli_set_quiet(int quiet);
/* At the end of the run: "... and N more such errors|warnings (KIND)" for
 * every kind past the cap, then one line counting the warnings, e.g.
 * "minlsh: skipped 2 empty documents; 1 document with invalid UTF-8 read as
 * bytes" (also with quiet). */
void cli_messages_end(void);
/* The number of cli_input_error calls so far. */
uint64_t cli_input_failures(void);
/* A library call failed in a way the run cannot survive (out of memory...):
 * "minlsh: WHAT: message (MINLSH_E_...)" and exit 1. */
CLI_NORETURN void cli_die_lib(const char *what, int rc);
/* Print an allocation failure and exit 1. */
CLI_NORETURN void cli_die_nomem(void);
/* A usage error: message plus a hint to --help for cmd; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* "s" unless n is 1, for messages ("%llu document%s"). */
const char *cli_plural(uint64_t n);
/* Seconds on a monotonic clock. */
double cli_now(void);
/* A file of path is about to be mapped: if another program truncates it
 * meanwhile, a read of the mapping raises SIGBUS, which from here on prints
 * "minlsh: PATH: damaged index: ..." and exits with status 1 instead of
 * killing the process without a word. */
void cli_guard_mapped(const char *path);
/* Format x as a JSON number that reads back as the same double (shortest
 * round trip), always with a '.' or exponent ("1.0", not "1"). */
void cli_format_double(char out[32], double x);
/* Flush standard output; a write error is reported and gives status 1. */
int cli_finish_stdout(int status);
/* bytes in the largest binary unit it reaches ("1 byte", "100 KiB",
 * "11.8 GiB"): never "0" for a size that is not 0. */
void cli_format_bytes(char out[32], uint64_t bytes);
/* Why a file could not be made or written in a directory, from errno:
 * "no such directory", "not a directory", "not writable (...)", "the disk
 * is full", "past the file size limit (ulimit -f)", else strerror(err). */
const char *cli_dir_write_error(int err);

/* ---- opts.c ------------------------------------------------------------- */

enum {
    O_HELP, O_QUIET, O_PROGRESS, O_JSONL, O_ID_FIELD, O_TEXT_FIELD,
    O_THRESHOLD, O_NUM_PERM, O_BANDS, O_ROWS, O_SHINGLE, O_LOWERCASE,
    O_STRIP_PUNCT, O_COLLAPSE_SPACE, O_NORMALIZE, O_HTML, O_SEED, O_KEY,
    O_THREADS, O_VERIFY, O_OUTPUT, O_FORMAT, O_WEIGHTS, O_MODE,
    O_TARGET_RECALL, O_SVG, O_FORCE, O_ALL, O_KEEP, O_GROUP, O_MAX_BUCKET,
    O_MAX_DOC_SIZE, O_KEY_FILE, O_INCLUDE, O_EXCLUDE, O_MEMORY, O_TMPDIR,
    O_NOVEL_ONLY, O_LOCK_TIMEOUT, O_NO_LOCK, O_SCHEME, O_NFKC, O_CASEFOLD,
    O_UNICODE_PUNCT, O_UNICODE_SPACE, O_FOLD_DIGITS, O_CJK_WORDS, O_NO_CJK_WORDS,
    O_STATS, O_PRESET, O_LIST_PRESETS, O_COUNT
};
#define OPT(x) (UINT64_C(1) << (x))
/* Option groups. */
#define OPTS_COMMON (OPT(O_HELP))
#define OPTS_RUN (OPT(O_QUIET) | OPT(O_PROGRESS) | OPT(O_THREADS))
#define OPTS_INPUT                                                             \
    (OPT(O_JSONL) | OPT(O_ID_FIELD) | OPT(O_TEXT_FIELD) | OPT(O_MAX_DOC_SIZE) | \
     OPT(O_INCLUDE) | OPT(O_EXCLUDE))
#define OPTS_SHINGLE                                                           \
    (OPT(O_SHINGLE) | OPT(O_LOWERCASE) | OPT(O_STRIP_PUNCT) |                  \
     OPT(O_COLLAPSE_SPACE) | OPT(O_NORMALIZE) | OPT(O_HTML) | OPT(O_KEY) |      \
     OPT(O_KEY_FILE) | OPT(O_NFKC) | OPT(O_CASEFOLD) | OPT(O_UNICODE_PUNCT) |   \
     OPT(O_UNICODE_SPACE) | OPT(O_FOLD_DIGITS) | OPT(O_CJK_WORDS) | OPT(O_NO_CJK_WORDS))
#define OPTS_LSH                                                               \
    (OPT(O_THRESHOLD) | OPT(O_NUM_PERM) | OPT(O_BANDS) | OPT(O_ROWS) |         \
     OPT(O_SEED) | OPT(O_SCHEME))

#define VERIFY_EXACT 0
#define VERIFY_SIGNATURE 1
#define OUTPUT_CLUSTERS 0
#define OUTPUT_PAIRS 1
#define OUTPUT_DECISIONS 2
#define OUTPUT_KEPT 3
#define OUTPUT_DROPPED 4
#define FORMAT_TEXT 0
#define FORMAT_TSV 1
#define FORMAT_JSONL 2
#define FORMAT_HEX 3
#define FORMAT_JSON 4

typedef struct cli_opts {
    uint64_t given; /* OPT(x) for every option on the command line, and for
                       each field --preset filled in (see opts_parse) */
    int quiet, progress, jsonl, force, all;
    int stats; /* --stats: where the time went, stage by stage */
    const char *id_field, *text_field;
    double threshold;
    uint32_t num_perm, bands, rows;
    uint32_t unit, shingle_k, flags;
    uint32_t flags_added; /* the flags the normalisation options turned on */
    const char *preset_name; /* --preset NAME */
    minlsh_preset preset;    /* its figures, when preset_name is set */
    int banding_from_preset; /* bands and rows are the preset's, both */
    uint64_t seed;
    uint32_t scheme; /* MINLSH_SCHEME_* (--scheme) */
    uint8_t key[MINLSH_KEY_BYTES];
    int custom_key;
    unsigned threads;
    int verify, output, format;
    uint32_t keep, group; /* MINLSH_KEEP_*, MINLSH_GROUP_* */
    uint64_t max_bucket;  /* 0: no cap */
    uint64_t memory;      /* dedup's memory option (minlsh_dedup_options) */
    const char *tmpdir;   /* where dedup spills (NULL: $TMPDIR, /tmp) */
    int novel_only;       /* index add: only documents with no near-duplicate */
    uint32_t lock_timeout_ms; /* index: wait for INDEX.lock (default: forever) */
    int no_lock;          /* index: the caller holds INDEX.lock */
    double weight_fp, weight_fn, target_recall;
    uint32_t mode; /* MINLSH_PLAN_* */
    const char *svg;
    uint64_t max_doc_size; /* bytes; 0: no limit */
    const char **include, **exclude; /* --include, --exclude patterns */
    size_t n_include, n_exclude, cap_include, cap_exclude;
    char **args; /* positional arguments */
    int n_args;
} cli_opts;

/* A subcommand: its name ("dedup", "index add"), the options it accepts, the
 * --format values it accepts ("text|tsv|jsonl" or NULL), its positional
 * arguments ("INDEX PATH...") and their count bounds (max -1: any), its help
 * text and its entry point. */
typedef struct cli_command {
    const char *name;
    uint64_t allowed;
    const char *formats;
    const char *args;
    int min_args, max_args;
    const char *help;
    int (*run)(cli_opts *o);
} cli_command;

/* The default --max-doc-size. */
#define CLI_MAX_DOC_SIZE (UINT64_C(64) << 20)

/* Defaults for every option. */
void opts_defaults(cli_opts *o);
/* Parse argv[0..argc) (the arguments after the subcommand name) into o.
 * With --preset NAME the preset's fields fill every option not given,
 * wherever --preset stands: its shingling, normalisation (options such as
 * --casefold add to it, --no-cjk-words takes from it), --num-perm,
 * --threshold, and --bands and --rows unless --num-perm is given (then the
 * banding is planned, or the one of them given divides it). Returns 0,
 * CLI_USAGE (message printed), or -1 when --help was asked for (the caller
 * prints the help). */
int opts_parse(cli_opts *o, const cli_command *cmd, int argc, char **argv);
/* A shingler with these settings (its config id in *config_id if not
 * NULL), and a MinHash family; failures are fatal (cli_die_lib). The
 * shingler refuses documents past the --max-doc-size of the options that
 * opts_parse read last (the process runs one subcommand); that limit is not
 * part of the config id. */
minlsh_shingler *cli_shingler_new(uint32_t unit, uint32_t k, uint32_t flags,
                                  const uint8_t *key, uint64_t *config_id);
minlsh_family *cli_family_new(uint32_t k, uint64_t seed, uint32_t scheme);
/* The --scheme word of a MINLSH_SCHEME_* value ("classic", "oph"), and back
 * (0, or -1 for an unknown word). */
const char *opts_scheme_name(uint32_t scheme);
int opts_parse_scheme(const char *s, uint32_t *scheme);
/* A byte count as --max-doc-size takes it: "64M", "1536K", "100". */
void opts_describe_size(char out[32], uint64_t bytes);
/* The preset names, ", "-separated, for messages. */
void opts_describe_presets(cli_buf *b);
/* "word:5" etc. for the unit and k; "lowercase,strip-punct" or "none". */
void opts_describe_shingle(cli_buf *b, uint32_t unit, uint32_t k);
void opts_describe_flags(cli_buf *b, uint32_t flags);
/* Parse the same two back (index metadata). 0 or -1. */
int opts_parse_shingle(const char *s, uint32_t *unit, uint32_t *k);
int opts_parse_flags(const char *s, uint32_t *flags);
/* The recall every planned banding reaches at the threshold, and the level
 * below which a manual banding gets a warning. */
#define CLI_PLAN_TARGET 0.999
#define CLI_PLAN_WARN 0.99
/* Choose (b, r): --bands/--rows if given (with a warning on standard error,
 * except for params, when a pair at the threshold becomes a candidate with
 * probability below CLI_PLAN_WARN), else the planner in recall mode with
 * target CLI_PLAN_TARGET, whatever the verification (the third argument is
 * no longer used). Returns 0 or CLI_USAGE with a message. *plan names the
 * choice ("recall", "manual", or "preset" for the banding of --preset). */
int opts_plan(const cli_opts *o, const char *cmd, int recall, uint32_t *bands,
              uint32_t *rows, const char **plan);

/* ---- json.c ------------------------------------------------------------- */

/* The fields of one JSON Lines record. id points into the line (the raw
 * token, quotes included for a string); the text is decoded into a buffer. */
typedef struct json_record {
    const char *id;
    size_t id_len;
} json_record;

/* Parse one line as a JSON object and extract id_field (a string or number,
 * kept raw) and text_field (a string, decoded to UTF-8 into text; text->p is
 * not NULL on success, even for ""). Returns 0, or -1 with a message (column
 * numbers count bytes from 1) in err. */
int json_extract(const char *line, size_t len, const char *id_field,
                 const char *text_field, json_record *rec, cli_buf *text,
                 char *err, size_t errcap);
/* A line too long to hold, for json_extract_stream: the caller gives it in
 * pieces and takes the decoded text in pieces. Zero-initialise, set the
 * callbacks, and json_stream_free at the end. */
typedef struct json_stream {
    /* The next piece of the line: 1 with *piece and *n set (the piece stays
     * valid until the next call), 0 at the end of the line, -1 to stop. */
    int (*next)(void *ctx, const unsigned char **piece, size_t *n);
    /* The text field, decoded, in order; non-zero stops the parse. */
    int (*text)(void *ctx, const char *p, size_t n);
    /* The text field again: a later one replaces what text got so far. */
    void (*restart)(void *ctx);
    void *ctx;
    cli_buf id;      /* out: the id token as written */
    int stopped;     /* out: next said stop, or text failed */
    int text_rc;     /* out: what text returned when it failed (else 0) */
} json_stream;
#define JSON_BLANK 1   /* the line has only white space */
#define JSON_STOPPED 2 /* stopped (s->stopped): by next, or text_rc */
/* json_extract on the line that s->next gives: the same checks, fields and
 * messages, the id in s->id and the text through s->text. Returns 0, -1
 * (message in err), JSON_BLANK or JSON_STOPPED. Memory: about 128 KiB
 * besides the id. */
int json_extract_stream(json_stream *s, const char *id_field, const char *text_field,
                        char *err, size_t errcap);
void json_stream_free(json_stream *s);
/* Decode a JSON string token (with its quotes) into out (appended). The
 * token must be valid (as json_extract checked it). */
void json_decode_string(cli_buf *out, const char *tok, size_t len);
/* Append s as a JSON string token (quotes included); bytes that are not
 * valid UTF-8 become U+FFFD. s may be NULL if n is 0. */
void json_escape(cli_buf *out, const char *s, size_t n);

/* ---- utf8.c ------------------------------------------------------------- */

/* The one UTF-8 decoder. The sequence at s[0..n): returns its length (1..4)
 * and its code point in *cp (if not NULL) when it is valid UTF-8 (RFC 3629:
 * no overlongs, surrogates or values above U+10FFFF); 0 when it is not;
 * UTF8_SHORT when the n bytes are a valid beginning of a longer sequence. */
#define UTF8_SHORT (-1)
int utf8_decode(const void *s, size_t n, uint32_t *cp);
/* Encode a code point (at most U+10FFFF, not a surrogate) into out;
 * returns the length, 1..4. */
size_t utf8_encode(uint32_t cp, char out[4]);
/* 1 if s[0..n) is valid UTF-8. */
int utf8_valid(const char *s, size_t n);

/* Incremental UTF-8 check over a stream of chunks: after utf8_check_end,
 * bad says whether the stream was valid, and bad_at where the first invalid
 * (or unfinished) sequence began, counting bytes from 0. */
typedef struct utf8_check {
    uint8_t pend[4]; /* a sequence cut by the end of a chunk */
    uint8_t npend;
    int bad;
    uint64_t pos, start, bad_at; /* start: where the current sequence began */
} utf8_check;
void utf8_check_init(utf8_check *u);
void utf8_check_feed(utf8_check *u, const void *data, size_t n);
void utf8_check_end(utf8_check *u);

/* ---- input.c ------------------------------------------------------------ */

typedef struct input_file {
    char *path;    /* as given, or joined below a directory as given */
    uint64_t size; /* 0 if unknown */
    int is_stdin;
} input_file;

typedef struct input_list {
    input_file *v;
    size_t n, cap;
    uint64_t total_bytes;
    int total_known; /* 0 when some size is unknown (standard input...) */
} input_list;

/* Expand PATHs into files: directories recursed in byte order of names,
 * symbolic links to files followed, links to directories inside a tree not
 * followed; "-" is standard input. Problems are reported as input errors.
 * Files found inside directories are kept if their base name matches one of
 * o->include (when there are any) and none of o->exclude (fnmatch); paths
 * named on the command line are always kept. */
void input_walk(input_list *out, char **paths, int n, const cli_opts *o);
void input_free(input_list *in);
/* The name used for a file in messages ("standard input" for "-"). */
const char *input_where(const input_file *f);

/* ---- stream.c ----------------------------------------------------------- */

/* An input read as bytes: plain, or gzip or zstd decompressed on the fly,
 * as its first bytes say. Reusable: open, read to the end, close, open the
 * next one. Zero-initialise before the first open. */
typedef struct cli_stream {
    int fd, own_fd;
    int kind;
    unsigned char *in; /* raw input */
    size_t in_pos, in_len;
    int eof, failed, ended, pending;
    uint64_t raw_bytes; /* bytes read from the file so far */
    void *gz;           /* z_stream */
    void *zd;           /* ZSTD_DCtx */
    size_t zret;        /* the last ZSTD_decompressStream result */
    char err[160];      /* what went wrong, after a failure */
} cli_stream;

/* Open path (or standard input) and look at its first bytes. Returns 0, or
 * -1 with the reason in s->err ("cannot open: ..."). Close it either way. */
int stream_open(cli_stream *s, const char *path, int is_stdin);
/* Up to n bytes of the (decompressed) content: the number read, 0 at the
 * end, or -1 with the reason in s->err (read error, truncated or corrupt
 * compressed data); after -1 the stream keeps failing until reopened. */
ssize_t stream_read(cli_stream *s, void *buf, size_t n);
/* "plain", "gzip" or "zstd". */
const char *stream_kind_name(const cli_stream *s);
void stream_close(cli_stream *s);
/* Close and release the buffers and decoder states. */
void stream_free(cli_stream *s);

/* ---- jsonstream.c ------------------------------------------------------- */

/* JSON Lines lines too long to hold, each parsed as it is read: the text
 * field goes into a shinglestream, the record (with keep_records) into a
 * temporary file. One line at a time. */
typedef struct jsonl_streamer {
    const cli_opts *o;
    const minlsh_shingler *shingler;
    int keep_records;
    /* The last line's text, shingled and not finished: whoever takes the
     * document finishes it (and may leave an empty stream in its place). */
    minlsh_shinglestream *stream;
    uint64_t text_bytes;
    minlsh_scratch *record; /* the records, each where its line said; NULL
                               until the first long line with keep_records */
    json_stream js;
} jsonl_streamer;

enum {
    JSONL_LINE_OK,         /* a record: id in ls->js.id, text in ls->stream */
    JSONL_LINE_BLANK,      /* white space only */
    JSONL_LINE_INVALID,    /* refused: msg says why */
    JSONL_LINE_TOOBIG,     /* past --max-doc-size: skipped unread */
    JSONL_LINE_UNREADABLE  /* the input failed: stream's err says why */
};

/* What one line gave. */
typedef struct jsonl_long_line {
    int status;
    uint64_t bytes;      /* the line's, its newline included */
    uint64_t text_bytes; /* its text field's, decoded */
    uint64_t record_at, record_n; /* OK with keep_records: the record as read
                                     (no byte-order mark, no line end) */
    char msg[200];
} jsonl_long_line;

void jsonl_streamer_init(jsonl_streamer *ls, const cli_opts *o, const minlsh_shingler *sh,
                         int keep_records);
/* Read the line whose first head_n bytes (no newline among them) were read
 * already and whose rest comes from s, read into chunk (chunk_cap bytes).
 * On return [*rest, *rest_end) in chunk is what follows the line's newline
 * (empty at the end of the input). A temporary file that fails ends the
 * process with a message. */
void jsonl_read_long_line(jsonl_streamer *ls, jsonl_long_line *out, const char *head,
                          size_t head_n, int first_line, cli_stream *s,
                          unsigned char *chunk, size_t chunk_cap,
                          const unsigned char **rest, const unsigned char **rest_end);
/* The records read so far are no longer needed: the disk they held is freed. */
void jsonl_streamer_records_done(jsonl_streamer *ls);
void jsonl_streamer_free(jsonl_streamer *ls);

/* ---- the thread pool ------------------------------------------------------------- */

/* The thread pool is the library's (minlsh_pool), shared with the dedup
 * engine. cli_pool_new is minlsh_pool_new with n = 0 meaning every online
 * processor, ending the command if there is no memory. */
minlsh_pool *cli_pool_new(unsigned n);

/* ---- progress.c --------------------------------------------------------- */

typedef struct progress {
    int on, shown;
    double start, last;
    uint64_t total; /* bytes, 0 if unknown */
    uint64_t docs, bytes;
    const char *what;
} progress;

void progress_init(progress *p, const cli_opts *o, const input_list *in,
                   const char *what);
void progress_update(progress *p, uint64_t docs, uint64_t bytes);
/* Clear the line (the summary follows). */
void progress_done(progress *p);
/* Clear the line before a message; the next update draws it again. */
void progress_interrupt(void);

/* ---- names.c ------------------------------------------------------------ */

/* A document name: a path (raw bytes) or a JSON token (json = 1). */
typedef struct cli_name {
    const char *s;
    size_t n;
    int json;
} cli_name;

/* Names numbered 0..n-1 in insertion order, unique. Each is stored once, in
 * chunks that never move, behind a varint of its length and JSON flag, and
 * every NAMES_GROUP-th name's position is kept (the others are found by
 * skipping from it): per name about half a byte of position and 5 to 10 of
 * hash slot besides its bytes, so that 10^8 short ids take about 2 GB. */
typedef struct name_table {
    char **chunks;
    size_t n_chunks, cap_chunks;
    size_t used, size; /* bytes used and held by the last chunk */
    uint64_t *pos;     /* per group of names: chunk << 40 | offset of the first */
    size_t n, cap;     /* names; room in pos (groups) */
    uint32_t *slots;   /* open addressing: name number + 1, 0 = free */
    uint8_t *tags;     /* 8 bits of each slot's hash: most probes end here */
    size_t mask;
} name_table;

/* Add a name; returns 1 if added (number n - 1), 0 if already there (its
 * number in *dup_of if not NULL). */
int names_add(name_table *t, const char *s, size_t n, int json, size_t *dup_of);
/* The same with the name's hash given: names_hash(s, n, json), which
 * threads can compute ahead of the calling one. */
int names_add_hashed(name_table *t, const char *s, size_t n, int json, uint64_t h,
                     size_t *dup_of);
uint64_t names_hash(const char *s, size_t n, int json);
cli_name names_get(const name_table *t, size_t i);
/* Names in order without a search each: names_at gives where name i is,
 * names_step the name there, moving *at to the next one. */
uint64_t names_at(const name_table *t, size_t i);
cli_name names_step(const name_table *t, uint64_t *at);
/* Start fetching the hash slot a name of hash h would be looked up in. */
void names_prefetch(const name_table *t, uint64_t h);
/* Room for n names in all without growing the table again. */
void names_reserve(name_table *t, size_t n);
/* Add a name without looking for it (no hash, no duplicate check): for a
 * reader that only gets names by number; a later names_add hashes them all,
 * names_find on such a table looks at each name. */
void names_append(name_table *t, const char *s, size_t n, int json);
/* 1 if the name is there (its number in *i if not NULL), else 0. */
int names_find(const name_table *t, const char *s, size_t n, int json, size_t *i);
void names_free(name_table *t);

/* ---- output.c ----------------------------------------------------------- */

/* Append a name for text/TSV output: JSON strings decoded, JSON numbers as
 * written; backslash and control characters escaped C-style. */
void out_name_text(cli_buf *b, cli_name nm);
/* Append a name as a JSON token: JSON ids as written, paths escaped. */
void out_name_json(cli_buf *b, cli_name nm);

void out_pairs_header(FILE *f, int format, int with_estimate);
void out_pair(FILE *f, int format, cli_name a, cli_name b, double similarity,
              double estimate, int with_estimate);
void out_clusters_header(FILE *f, int format);
/* One document's decision (dedup --output decisions): its name, cluster
 * number (0: none), kept or dropped, its representative's name and the
 * similarity to it, appended to b. Safe to call from several threads at
 * once, each with its own b. */
void out_decisions_header(FILE *f, int format);
void out_decision(cli_buf *b, int format, cli_name doc, uint64_t cluster, int kept,
                  cli_name representative, double similarity, int exact);
void out_cluster(FILE *f, int format, size_t number, const cli_name *members,
                 size_t n);

/* ---- pipeline.c --------------------------------------------------------- */

/* One document as the pipeline hands it over, in input order. Everything
 * pointed to is valid only during the callback. */
typedef struct doc_view {
    cli_name name;
    const char *where; /* file name for messages */
    uint64_t line;     /* JSON Lines line number; 0 for whole files */
    const uint64_t *set; /* shingle hashes, ascending (never empty) */
    size_t set_n;
    const uint8_t *fp;   /* 16-byte fingerprint */
    const uint32_t *sig; /* k values (in on_doc, when signing), or NULL */
    uint64_t bytes;      /* input bytes it stands for */
    uint64_t length;     /* its text's bytes (JSON: the decoded text field):
                            what --keep longest compares */
    uint64_t name_hash;  /* names_hash of name, computed by a worker */
    const char *record; /* JSON Lines: the record as read (no line end, no
                           byte-order mark); NULL for whole files, and for
                           a line too long to hold: */
    size_t record_n;
    const minlsh_scratch *record_file; /* that line's record, record_n bytes */
    uint64_t record_at;                /* at record_at in this file */
} doc_view;

/* Append d's record, which is in d->record_file, to `to` a piece at a
 * time; *at: where it starts. Errors: MINLSH_E_IO (jsonstream.c). */
int doc_record_copy(minlsh_scratch *to, const doc_view *d, uint64_t *at);

typedef struct pipeline_cfg {
    const cli_opts *o;
    const minlsh_shingler *shingler;
    const minlsh_family *family; /* non-NULL: sign the selected documents */
    uint32_t sign_values;         /* with family: the signatures' first values
                                     only (0: all k) */
    minlsh_pool *pool;
    progress *progress;
    /* Called for every good document, in input order, on the calling thread,
     * before signing (d->sig is NULL): 1 to select it, 0 to drop it, a
     * negative value to stop the run. NULL selects every document. */
    int (*select)(void *ctx, const doc_view *d);
    /* NULL, or called a few documents ahead of select with the name's hash
     * (names_hash): a hint to fetch what select will look at. */
    void (*will_select)(void *ctx, uint64_t name_hash);
    /* Called for every selected document, in input order, on the calling
     * thread, with its signature if family is set; non-zero stops the run. */
    int (*on_doc)(void *ctx, const doc_view *d);
    /* NULL, or called once, after the first batch, with how many documents
     * the input should hold in all, estimated from its size and the first
     * batch's bytes per document (only when every input's size is known):
     * room made at once instead of by doubling on the way. */
    void (*expect)(void *ctx, uint64_t docs);
    /* Offer empty documents (no set) to select and on_doc like the others;
     * otherwise they are only counted and reported as skipped. */
    int offer_empty;
    int canonical_ids; /* JSON ids by minlsh_dedup_canonical_id: names are
                          their canonical forms, other kinds are refused */
    int keep_records; /* select copies d->record: a JSON Lines line too long
                         to hold is copied to a temporary file as it is read */
    /* on_doc of a batch may come after select of the next one (it runs
     * while the pool signs that one): for subcommands whose select does not
     * depend on what on_doc did. */
    int overlap;
    /* Instead of select and on_doc: every good document (and every empty
     * one with offer_empty) is signed and described on a worker (slot:
     * its place among the batch's good documents, worker: the pool's
     * worker number), then the batch of n goes to on_batch at once on the
     * calling thread, which points *status at n statuses (NULL: all 0);
     * for each non-zero one report is called, in input order with the
     * other messages. */
    void (*reserve)(void *ctx, size_t n); /* room for n slots, called first */
    void (*describe)(void *ctx, uint32_t worker, size_t slot, const doc_view *d);
    int (*on_batch)(void *ctx, size_t n, const int32_t **status);
    void (*report)(void *ctx, const doc_view *d, int32_t status);
    void *ctx;
} pipeline_cfg;

typedef struct pipeline_stats {
    uint64_t docs, bytes;
    uint64_t empty, too_large; /* documents skipped (warned about) */
    double seconds;
    /* Where the time went (wall seconds on the calling thread, CPU seconds
     * summed over the workers): */
    double shingle_wall, shingle_cpu; /* reading files, parsing, shingling */
    double sign_busy, sign_cpu;       /* signing (the pool's busy time) */
    double select_wall, deliver_wall; /* the caller's select and on_doc
                                         (on_batch) */
    double serial;                    /* the caller working, the pool idle */
} pipeline_stats;

/* Read, shingle (and sign) every document of the files in `in`. Bad inputs
 * are reported and skipped. Returns 0 or the value that stopped the run. */
int pipeline_run(const pipeline_cfg *cfg, const input_list *in,
                 pipeline_stats *st);
/* The same on PATH arguments (walked with input_walk), with a progress line
 * labelled `what` (cfg->progress is set here). */
int pipeline_run_paths(pipeline_cfg *cfg, char **paths, int n, const char *what,
                       pipeline_stats *st);

/* ---- subcommands -------------------------------------------------------- */

int cmd_dedup(cli_opts *o);
int cmd_params(cli_opts *o);
int cmd_sig(cli_opts *o);
int cmd_index_create(cli_opts *o);
int cmd_index_add(cli_opts *o);
int cmd_index_query(cli_opts *o);
int cmd_index_stats(cli_opts *o);
int cmd_index_merge(cli_opts *o);
int cmd_index_remove(cli_opts *o);
int cmd_index_compact(cli_opts *o);

extern const char cli_help_dedup[];
extern const char cli_help_params[];
extern const char cli_help_sig[];
extern const char cli_help_index_create[];
extern const char cli_help_index_add[];
extern const char cli_help_index_query[];
extern const char cli_help_index_stats[];
extern const char cli_help_index_merge[];
extern const char cli_help_index_remove[];
extern const char cli_help_index_compact[];

#endif /* MINLSH_CLI_H */
