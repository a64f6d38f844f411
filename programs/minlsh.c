/*
 * minlsh.c: the minlsh command's entry point: global options, the table of
 * subcommands, help and version.
 *
 *   minlsh [--help | --version]
 *   minlsh help [SUBCOMMAND]
 *   minlsh SUBCOMMAND [OPTIONS] [ARGUMENTS]
 */
#include "cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static const char main_help[] =
    "Usage: minlsh SUBCOMMAND [OPTIONS] [ARGUMENTS]\n"
    "\n"
    "Near-duplicate detection: shingling, MinHash and LSH banding.\n"
    "\n"
    "Subcommands:\n"
    "  dedup PATH...             find near-duplicate files or JSON Lines records\n"
    "  params                    choose LSH bands and rows; show the S-curve\n"
    "  index create INDEX        create an empty index file\n"
    "  index add INDEX PATH...   add documents to an index\n"
    "  index query INDEX PATH... find indexed documents similar to these\n"
    "  index stats INDEX         describe an index\n"
    "  index merge OUT SHARD...  merge index files built separately\n"
    "  index remove INDEX ID...  remove documents from an index\n"
    "  index compact INDEX       fold the index's journal into its file\n"
    "  sig PATH...               print MinHash signatures\n"
    "  help [SUBCOMMAND]         show help\n"
    "\n"
    "Options:\n"
    "  -h, --help                show this help (or a subcommand's: minlsh dedup --help)\n"
    "      --version             show the version\n"
    "\n"
    "Examples:\n"
    "  minlsh dedup /usr/share/common-licenses /usr/share/doc/*/copyright\n"
    "  minlsh dedup --jsonl --output pairs --format jsonl crawl.jsonl\n"
    "  minlsh params --threshold 0.7 --num-perm 128 --svg curve.svg\n"
    "\n"
    "See minlsh(1) for the details.\n";

#define OPTS_DEDUP                                                             \
    (OPTS_COMMON | OPTS_RUN | OPTS_INPUT | OPTS_SHINGLE | OPTS_LSH |           \
     OPT(O_VERIFY) | OPT(O_OUTPUT) | OPT(O_FORMAT) | OPT(O_KEEP) | OPT(O_GROUP) |  \
     OPT(O_MAX_BUCKET) | OPT(O_MEMORY) | OPT(O_TMPDIR) | OPT(O_STATS) | OPT(O_PRESET))
#define OPTS_PARAMS                                                            \
    (OPTS_COMMON | OPT(O_THRESHOLD) | OPT(O_NUM_PERM) | OPT(O_BANDS) |         \
     OPT(O_ROWS) | OPT(O_WEIGHTS) | OPT(O_MODE) | OPT(O_TARGET_RECALL) |       \
     OPT(O_SVG) | OPT(O_PRESET) | OPT(O_LIST_PRESETS))
#define OPTS_SIG                                                               \
    (OPTS_COMMON | OPTS_RUN | OPTS_INPUT | OPTS_SHINGLE | OPT(O_NUM_PERM) |    \
     OPT(O_SEED) | OPT(O_SCHEME) | OPT(O_FORMAT))
#define OPTS_LOCK (OPT(O_LOCK_TIMEOUT) | OPT(O_NO_LOCK))
#define OPTS_CREATE                                                            \
    (OPTS_COMMON | OPTS_SHINGLE | OPTS_LSH | OPT(O_FORCE) | OPT(O_QUIET) | OPTS_LOCK)
#define OPTS_ADD                                                               \
    (OPTS_COMMON | OPTS_RUN | OPTS_INPUT | OPT(O_KEY) | OPT(O_KEY_FILE) | OPTS_LOCK)
#define OPTS_QUERY (OPTS_ADD | OPT(O_FORMAT) | OPT(O_ALL) | OPT(O_THRESHOLD))
#define OPTS_ADD_NOVEL (OPTS_ADD | OPT(O_NOVEL_ONLY) | OPT(O_FORMAT) | OPT(O_THRESHOLD))
#define OPTS_MERGE (OPTS_COMMON | OPT(O_FORCE) | OPT(O_QUIET) | OPTS_LOCK)

static const cli_command commands[] = {
    {"dedup", OPTS_DEDUP, "text|tsv|jsonl", "PATH...", 1, -1, cli_help_dedup,
     cmd_dedup},
    {"params", OPTS_PARAMS, NULL, "", 0, 0, cli_help_params, cmd_params},
    {"sig", OPTS_SIG, "hex|json", "PATH...", 1, -1, cli_help_sig, cmd_sig},
    {"index create", OPTS_CREATE, NULL, "INDEX", 1, 1, cli_help_index_create,
     cmd_index_create},
    {"index add", OPTS_ADD_NOVEL, "text|tsv|jsonl", "INDEX PATH...", 2, -1, cli_help_index_add,
     cmd_index_add},
    {"index query", OPTS_QUERY, "text|tsv|jsonl", "INDEX PATH...", 2, -1,
     cli_help_index_query, cmd_index_query},
    {"index stats", OPTS_COMMON | OPTS_LOCK, NULL, "INDEX", 1, 1, cli_help_index_stats,
     cmd_index_stats},
    {"index merge", OPTS_MERGE, NULL, "OUT SHARD...", 2, -1, cli_help_index_merge,
     cmd_index_merge},
    {"index remove", OPTS_COMMON | OPT(O_QUIET) | OPTS_LOCK, NULL, "INDEX ID...", 2, -1,
     cli_help_index_remove, cmd_index_remove},
    {"index compact", OPTS_COMMON | OPT(O_QUIET) | OPTS_LOCK, NULL, "INDEX", 1, 1,
     cli_help_index_compact, cmd_index_compact},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* The options every command that reads documents shares, after its own
 * help text. */
static const char input_help[] =
    "\n"
    "Reading documents (dedup, sig, index add, index query):\n"
    "      Files, JSON Lines and standard input may be gzip or zstd compressed\n"
    "      (recognised by their first bytes, decompressed as they are read).\n"
    "      --max-doc-size SIZE skip documents (JSON Lines: lines) larger than\n"
    "                          SIZE bytes, with K, M or G for KiB, MiB, GiB;\n"
    "                          0: no limit (default: 64M)\n"
    "      --include GLOB      in directories, read only the files whose name\n"
    "                          matches GLOB (fnmatch; repeatable)\n"
    "      --exclude GLOB      in directories, skip the files whose name matches\n"
    "                          GLOB (repeatable; wins over --include)\n";

static const char key_help[] =
    "\n"
    "The key:\n"
    "      --key-file FILE     read the --key from FILE (32 hex digits), so that\n"
    "                          it does not show in the process list; without\n"
    "                          --key or --key-file, the file named by the\n"
    "                          environment variable MINLSH_KEY_FILE, if set\n";

static void print_help(const cli_command *cmd) {
    fputs(cmd->help, stdout);
    if (cmd->allowed & OPT(O_MAX_DOC_SIZE)) fputs(input_help, stdout);
    if (cmd->allowed & OPT(O_KEY_FILE)) fputs(key_help, stdout);
}

/* The command named by argv[0] (and argv[1] for "index ..."); *used is the
 * number of words it took. NULL if there is none. */
static const cli_command *find_command(int argc, char **argv, int *used) {
    size_t i;
    for (i = 0; i < N_COMMANDS; i++) {
        const char *name = commands[i].name, *space = strchr(name, ' ');
        if (space == NULL) {
            if (strcmp(argv[0], name) == 0) {
                *used = 1;
                return &commands[i];
            }
        } else if (argc >= 2 && strncmp(argv[0], name, (size_t)(space - name)) == 0 &&
                   argv[0][space - name] == '\0' && strcmp(argv[1], space + 1) == 0) {
            *used = 2;
            return &commands[i];
        }
    }
    return NULL;
}

static const char index_help[] =
    "Usage: minlsh index create|add|query|stats|merge|remove|compact INDEX ...\n"
    "\n"
    "A persistent band index, for documents that arrive over time:\n"
    "  minlsh index create INDEX [OPTIONS]       create an empty index\n"
    "  minlsh index add [OPTIONS] INDEX PATH...   add documents\n"
    "  minlsh index query [OPTIONS] INDEX PATH... find similar indexed documents\n"
    "  minlsh index stats INDEX                   describe the index\n"
    "  minlsh index merge OUT SHARD...            merge indexes built separately\n"
    "  minlsh index remove INDEX ID...            remove documents by name\n"
    "  minlsh index compact INDEX                 fold INDEX.journal into INDEX\n"
    "\n"
    "Try 'minlsh index SUBCOMMAND --help' for the options of each.\n";

static int help(int argc, char **argv) {
    const cli_command *cmd;
    int used;
    if (argc == 0) {
        fputs(main_help, stdout);
        return cli_finish_stdout(CLI_OK);
    }
    cmd = find_command(argc, argv, &used);
    if (cmd != NULL && used == argc) {
        print_help(cmd);
        return cli_finish_stdout(CLI_OK);
    }
    if (argc == 1 && strcmp(argv[0], "index") == 0) {
        fputs(index_help, stdout);
        return cli_finish_stdout(CLI_OK);
    }
    return cli_usage_error(NULL, "no help for '%s'", argv[0]);
}

static int run(const cli_command *cmd, int argc, char **argv) {
    cli_opts o;
    int rc;
    opts_defaults(&o);
    rc = opts_parse(&o, cmd, argc, argv);
    if (rc == -1) {
        print_help(cmd);
        rc = cli_finish_stdout(CLI_OK);
    } else if (rc == 0) {
        cli_set_quiet(o.quiet);
        rc = cmd->run(&o);
        cli_messages_end();
    }
    free(o.args);
    free(o.include);
    free(o.exclude);
    return rc;
}

int main(int argc, char **argv) {
    const cli_command *cmd;
    int used = 0;
    /* Past a file size limit (ulimit -f) the default is to die at once,
     * leaving a half-written save behind; ignored, the write fails with
     * EFBIG instead, and the save removes its temporary file and reports
     * the error like a full disk. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2)
        return cli_usage_error(NULL, "a subcommand is needed (dedup, params, index, sig)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return help(0, NULL);
    if (strcmp(argv[1], "help") == 0) return help(argc - 2, argv + 2);
    if (strcmp(argv[1], "--version") == 0) {
        printf("minlsh %s\n", minlsh_version_string());
        return cli_finish_stdout(CLI_OK);
    }
    cmd = find_command(argc - 1, argv + 1, &used);
    if (cmd == NULL) {
        if (strcmp(argv[1], "index") == 0) {
            if (argc == 2) return cli_usage_error(NULL, "index: a subcommand is needed (create, add, query, stats, merge, remove, compact)");
            if (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)
                return help(1, argv + 1);
            return cli_usage_error("index", "unknown subcommand '%s'", argv[2]);
        }
        if (argv[1][0] == '-') return cli_usage_error(NULL, "unknown option '%s'", argv[1]);
        return cli_usage_error(NULL, "unknown subcommand '%s'", argv[1]);
    }
    return run(cmd, argc - 1 - used, argv + 1 + used);
}
