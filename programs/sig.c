/*
 * sig.c: minlsh sig. The MinHash signature of every document, for debugging
 * and for other programs:
 *   hex   NAME<TAB>v1 v2 ... vk      (8 hex digits per value)
 *   json  {"id": ID, "k": K, "seed": S, "signature": [v1, ..., vk]}
 *         ("scheme": "oph" before "signature" with --scheme oph)
 */
#include "cli.h"

#include <string.h>

const char cli_help_sig[] =
    "Usage: minlsh sig [OPTIONS] PATH...\n"
    "\n"
    "Print the MinHash signature of each document (each file, or each line\n"
    "with --jsonl), in input order.\n"
    "\n"
    "      --format FMT        hex (default): the name, a tab, then k values of\n"
    "                          8 hex digits separated by spaces;\n"
    "                          json: {\"id\": ID, \"k\": K, \"seed\": S,\n"
    "                          \"signature\": [...]} per line\n"
    "      --num-perm K        values per signature (default: 128)\n"
    "      --seed N            MinHash family seed (default: 1)\n"
    "      --scheme S          classic (k hash functions per shingle, the\n"
    "                          default) or oph (one-permutation hashing: one per\n"
    "                          shingle, several times faster to sign; a little\n"
    "                          less accurate on documents of fewer than k\n"
    "                          shingles, and slower below about k/4)\n"
    "      --jsonl, --id-field NAME, --text-field NAME\n"
    "      --shingle UNIT, --lowercase, --strip-punct, --collapse-space,\n"
    "      --nfkc, --casefold, --unicode-punct, --unicode-space, --fold-digits,\n"
    "      --cjk-words (default), --no-cjk-words, --normalize, --html, --key HEX\n"
    "                          as for minlsh dedup\n"
    "      --threads N, --progress, -q/--quiet\n"
    "  -h, --help              show this help\n";

typedef struct sig_ctx {
    const cli_opts *o;
    uint32_t k;
    cli_buf line;
} sig_ctx;

static int sig_on_doc(void *ctx, const doc_view *d) {
    sig_ctx *c = ctx;
    uint32_t i;
    buf_clear(&c->line);
    if (c->o->format == FORMAT_JSON) {
        buf_adds(&c->line, "{\"id\": ");
        out_name_json(&c->line, d->name);
        buf_printf(&c->line, ", \"k\": %u, \"seed\": %llu, ", (unsigned)c->k,
                   (unsigned long long)c->o->seed);
        if (c->o->scheme != MINLSH_SCHEME_CLASSIC)
            buf_printf(&c->line, "\"scheme\": \"%s\", ", opts_scheme_name(c->o->scheme));
        buf_adds(&c->line, "\"signature\": [");
        for (i = 0; i < c->k; i++)
            buf_printf(&c->line, i ? ", %lu" : "%lu", (unsigned long)d->sig[i]);
        buf_adds(&c->line, "]}\n");
    } else {
        out_name_text(&c->line, d->name);
        buf_addc(&c->line, '\t');
        for (i = 0; i < c->k; i++)
            buf_printf(&c->line, i ? " %08lx" : "%08lx", (unsigned long)d->sig[i]);
        buf_addc(&c->line, '\n');
    }
    fwrite(c->line.p, 1, c->line.n, stdout);
    return 0;
}

int cmd_sig(cli_opts *o) {
    pipeline_cfg cfg;
    pipeline_stats st;
    sig_ctx c;
    if (!(o->given & OPT(O_FORMAT))) o->format = FORMAT_HEX;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.k = o->num_perm;
    memset(&cfg, 0, sizeof cfg);
    cfg.o = o;
    cfg.shingler = cli_shingler_new(o->unit, o->shingle_k, o->flags, o->key, NULL);
    cfg.family = cli_family_new(o->num_perm, o->seed, o->scheme);
    cfg.pool = cli_pool_new(o->threads);
    cfg.on_doc = sig_on_doc;
    cfg.ctx = &c;
    pipeline_run_paths(&cfg, o->args, o->n_args, "sig:", &st);
    buf_free(&c.line);
    minlsh_pool_free(cfg.pool);
    minlsh_family_free((minlsh_family *)cfg.family);
    minlsh_shingler_free((minlsh_shingler *)cfg.shingler);
    return cli_finish_stdout(cli_input_failures() ? CLI_FAILED : CLI_OK);
}
