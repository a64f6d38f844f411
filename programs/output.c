/*
 * output.c: the writers for pairs and clusters, in three formats.
 *
 *   text   "0.9123  a  b" per pair; "cluster N (M documents)" and the
 *          members indented, a blank line between clusters
 *   tsv    a header line, then one row per pair or per cluster member
 *   jsonl  {"a": ID, "b": ID, "similarity": S[, "estimate": E]}
 *          {"cluster": N, "size": M, "members": [ID, ...]}
 *
 * In text and TSV, names are printed as they are (JSON string ids decoded)
 * with backslash and control characters escaped C-style, so that one record
 * stays on one line; in JSON Lines they are JSON tokens.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static cli_buf line; /* the record being built */

static void escape_text(cli_buf *b, const char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '\\': buf_adds(b, "\\\\"); break;
        case '\n': buf_adds(b, "\\n"); break;
        case '\t': buf_adds(b, "\\t"); break;
        case '\r': buf_adds(b, "\\r"); break;
        default:
            if (c < 0x20 || c == 0x7F) buf_printf(b, "\\x%02x", c);
            else buf_addc(b, (char)c);
        }
    }
}

static int needs_escape(const char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F || c == '\\') return 1;
    }
    return 0;
}

/* No state of its own, so that workers may format records at once: a JSON
 * id is decoded onto the end of b, and escaped from a copy only when it
 * has something to escape. */
void out_name_text(cli_buf *b, cli_name nm) {
    if (nm.json && nm.n > 0 && nm.s[0] == '"') {
        size_t at = b->n, n;
        char *copy;
        json_decode_string(b, nm.s, nm.n);
        n = b->n - at;
        if (!needs_escape(b->p + at, n)) return;
        copy = xmalloc(n);
        memcpy(copy, b->p + at, n);
        b->n = at;
        escape_text(b, copy, n);
        free(copy);
    } else
        escape_text(b, nm.s, nm.n);
}

void out_name_json(cli_buf *b, cli_name nm) {
    if (nm.json) buf_add(b, nm.s, nm.n);
    else json_escape(b, nm.s, nm.n);
}

static void json_number(cli_buf *b, double x) {
    char num[32];
    cli_format_double(num, x);
    buf_adds(b, num);
}

static void flush_line(FILE *f) {
    fwrite(line.p, 1, line.n, f);
    buf_clear(&line);
}

void out_pairs_header(FILE *f, int format, int with_estimate) {
    if (format != FORMAT_TSV) return;
    fputs(with_estimate ? "a\tb\tsimilarity\testimate\n" : "a\tb\tsimilarity\n", f);
}

void out_pair(FILE *f, int format, cli_name a, cli_name b, double similarity,
              double estimate, int with_estimate) {
    buf_clear(&line);
    if (format == FORMAT_JSONL) {
        buf_adds(&line, "{\"a\": ");
        out_name_json(&line, a);
        buf_adds(&line, ", \"b\": ");
        out_name_json(&line, b);
        buf_adds(&line, ", \"similarity\": ");
        json_number(&line, similarity);
        if (with_estimate) {
            buf_adds(&line, ", \"estimate\": ");
            json_number(&line, estimate);
        }
        buf_adds(&line, "}\n");
    } else if (format == FORMAT_TSV) {
        out_name_text(&line, a);
        buf_addc(&line, '\t');
        out_name_text(&line, b);
        buf_printf(&line, "\t%.4f", similarity);
        if (with_estimate) buf_printf(&line, "\t%.4f", estimate);
        buf_addc(&line, '\n');
    } else {
        buf_printf(&line, "%.4f  ", similarity);
        out_name_text(&line, a);
        buf_adds(&line, "  ");
        out_name_text(&line, b);
        buf_addc(&line, '\n');
    }
    flush_line(f);
}

void out_clusters_header(FILE *f, int format) {
    if (format == FORMAT_TSV) fputs("cluster\tsize\tmember\n", f);
}

void out_cluster(FILE *f, int format, size_t number, const cli_name *members,
                 size_t n) {
    size_t i;
    buf_clear(&line);
    if (format == FORMAT_JSONL) {
        buf_printf(&line, "{\"cluster\": %zu, \"size\": %zu, \"members\": [", number, n);
        for (i = 0; i < n; i++) {
            if (i) buf_adds(&line, ", ");
            out_name_json(&line, members[i]);
        }
        buf_adds(&line, "]}\n");
    } else if (format == FORMAT_TSV) {
        for (i = 0; i < n; i++) {
            buf_printf(&line, "%zu\t%zu\t", number, n);
            out_name_text(&line, members[i]);
            buf_addc(&line, '\n');
        }
    } else {
        buf_printf(&line, "%scluster %zu (%zu documents)\n", number > 1 ? "\n" : "",
                   number, n);
        for (i = 0; i < n; i++) {
            buf_adds(&line, "  ");
            out_name_text(&line, members[i]);
            buf_addc(&line, '\n');
        }
    }
    flush_line(f);
}

void out_decisions_header(FILE *f, int format) {
    if (format != FORMAT_TSV) return;
    fputs("id\tcluster\tdecision\trepresentative\tsimilarity\texact\n", f);
}

void out_decision(cli_buf *b, int format, cli_name doc, uint64_t cluster, int kept,
                  cli_name representative, double similarity, int exact) {
    if (format == FORMAT_JSONL) {
        buf_adds(b, "{\"id\": ");
        out_name_json(b, doc);
        buf_printf(b, ", \"cluster\": %llu, \"decision\": \"%s\", \"representative\": ",
                   (unsigned long long)cluster, kept ? "kept" : "dropped");
        out_name_json(b, representative);
        buf_adds(b, ", \"similarity\": ");
        json_number(b, similarity);
        buf_printf(b, ", \"exact\": %s}\n", exact ? "true" : "false");
    } else if (format == FORMAT_TSV) {
        out_name_text(b, doc);
        buf_printf(b, "\t%llu\t%s\t", (unsigned long long)cluster, kept ? "kept" : "dropped");
        out_name_text(b, representative);
        buf_printf(b, "\t%.4f\t%s\n", similarity, exact ? "exact" : "-");
    } else if (kept) {
        buf_adds(b, "kept     ");
        out_name_text(b, doc);
        buf_addc(b, '\n');
    } else {
        buf_adds(b, "dropped  ");
        out_name_text(b, doc);
        buf_printf(b, "  (%s %.4f to ", exact ? "exact copy," : "similarity", similarity);
        out_name_text(b, representative);
        buf_adds(b, ")\n");
    }
}
