/*
 * params.c: minlsh params. Choose (b, r) for a threshold with the library's
 * planner, or take them as given, and show what they do: the false-positive
 * and false-negative areas, the S-curve P(candidate | s) = 1 - (1 - s^r)^b
 * as a table and, with --svg, as a self-contained SVG picture.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char cli_help_params[] =
    "Usage: minlsh params [--threshold T] [--num-perm K] [--mode MODE]\n"
    "                     [--weights FP,FN] [--target-recall R] [--svg FILE]\n"
    "       minlsh params --bands B --rows R [--threshold T] [--svg FILE]\n"
    "       minlsh params --preset NAME [--threshold T] [--svg FILE]\n"
    "       minlsh params --list-presets\n"
    "\n"
    "Choose the LSH banding (b bands of r rows) for a similarity threshold, or\n"
    "show what a given banding does: the probability that a pair of similarity\n"
    "s becomes a candidate, P(s) = 1 - (1 - s^r)^b, for s = 0.1 .. 1.0 and the\n"
    "threshold, and the false-positive and false-negative areas under it.\n"
    "\n"
    "      --threshold T       the similarity threshold (default: 0.8)\n"
    "      --num-perm K        MinHash values per signature (default: 128, or\n"
    "                          b*r when --bands and --rows are both given)\n"
    "      --mode MODE         recall (default, what dedup and index create\n"
    "                          use): the fewest false positives with P(T) >= the\n"
    "                          target recall; balanced: minimise the weighted sum\n"
    "                          of the two areas; rule: (1/b)^(1/r) ~ T\n"
    "      --weights FP,FN     weights of the two areas in balanced mode\n"
    "                          (default: 0.5,0.5)\n"
    "      --target-recall R   recall mode target (default: 0.999)\n"
    "      --bands B, --rows R skip the planner: B bands of R rows (one alone:\n"
    "                          the other is K divided by it)\n"
    "      --preset NAME       the banding, hash values and threshold of a\n"
    "                          published pipeline (options given override them)\n"
    "      --list-presets      list the presets, their figures and sources\n"
    "      --svg FILE          also draw the S-curve into FILE (SVG)\n"
    "  -h, --help              show this help\n";

typedef struct plan_result {
    uint32_t k, bands, rows;
    double threshold, fp_area, fn_area;
    const char *how;
} plan_result;

static int choose(const cli_opts *o, plan_result *pr) {
    minlsh_plan_options po;
    int rc;
    pr->k = o->num_perm;
    pr->threshold = o->threshold;
    if ((o->given & OPT(O_BANDS)) && (o->given & OPT(O_ROWS)) &&
        !(o->given & OPT(O_NUM_PERM)))
        pr->k = o->bands * o->rows;
    if (o->given & (OPT(O_BANDS) | OPT(O_ROWS))) {
        cli_opts tmp = *o;
        tmp.num_perm = pr->k;
        if ((rc = opts_plan(&tmp, "params", 0, &pr->bands, &pr->rows, &pr->how)) != 0)
            return rc;
        if (o->banding_from_preset) pr->how = "preset";
        rc = minlsh_plan_areas(&pr->fp_area, &pr->fn_area, pr->bands, pr->rows,
                               pr->threshold);
        if (rc != 0) return cli_usage_error("params", "%s", minlsh_strerror(rc));
        return 0;
    }
    minlsh_plan_options_init(&po, MINLSH_PLAN_OPTIONS_VERSION);
    po.mode = o->mode;
    po.k = pr->k;
    po.threshold = o->threshold;
    po.weight_fp = o->weight_fp;
    po.weight_fn = o->weight_fn;
    po.target_recall = o->target_recall;
    rc = minlsh_plan_compute(&pr->bands, &pr->rows, &pr->fp_area, &pr->fn_area, &po);
    if (rc != 0)
        return cli_usage_error("params",
                               "no banding of %u hash values fits (%s)%s",
                               (unsigned)pr->k, minlsh_strerror(rc),
                               o->mode == MINLSH_PLAN_RECALL
                                   ? "; lower --target-recall or raise --num-perm"
                                   : "");
    pr->how = o->mode == MINLSH_PLAN_RECALL   ? "recall"
              : o->mode == MINLSH_PLAN_RULE   ? "rule"
                                              : "balanced";
    return 0;
}

static double prob(const plan_result *pr, double s) {
    double p = 0;
    if (minlsh_plan_probability(&p, pr->bands, pr->rows, s) != 0) return 0;
    return p;
}

/* The normalisation of a preset as the options that give it: a Unicode
 * option brings its ASCII twin, so the twin is not named again. */
static void describe_shingling(cli_buf *b, const minlsh_preset *p) {
    uint32_t flags = p->flags;
    if (flags & MINLSH_NORM_UCASEFOLD) flags &= ~(uint32_t)MINLSH_NORM_CASEFOLD;
    if (flags & MINLSH_NORM_UPUNCT) flags &= ~(uint32_t)MINLSH_NORM_PUNCT;
    if (flags & MINLSH_NORM_UWHITESPACE) flags &= ~(uint32_t)MINLSH_NORM_WHITESPACE;
    opts_describe_shingle(b, p->unit, p->shingle_k);
    buf_adds(b, " (");
    if (flags == 0) buf_adds(b, "no normalisation");
    else opts_describe_flags(b, flags);
    if (!(p->flags & MINLSH_NORM_CJK_WORDS) && p->unit == MINLSH_UNIT_WORD)
        buf_adds(b, ", no-cjk-words");
    buf_adds(b, ")");
}

static int list_presets(void) {
    static const double at[] = {0.5, 0.7, 0.8, 0.9};
    uint32_t i, j;
    for (i = 0; i < minlsh_preset_count(); i++) {
        minlsh_preset p = MINLSH_PRESET_INIT;
        cli_buf b = {NULL, 0, 0};
        double mid = 0;
        if (minlsh_preset_get(&p, i) != 0) continue;
        describe_shingling(&b, &p);
        minlsh_plan_threshold(&mid, p.bands, p.rows);
        printf("%s%s: %s\n", i ? "\n" : "", p.name, p.pipeline);
        printf("  shingles      %s\n", b.p);
        printf("  banding       %u hash values, %u bands x %u rows, threshold %g\n",
               (unsigned)p.num_perm, (unsigned)p.bands, (unsigned)p.rows, p.threshold);
        printf("  P(candidate) ");
        for (j = 0; j < sizeof at / sizeof at[0]; j++) {
            double q = 0;
            minlsh_plan_probability(&q, p.bands, p.rows, at[j]);
            printf(" %.1f: %.4f", at[j], q);
        }
        printf("; midpoint %.4f\n", mid);
        printf("  source        %s\n", p.source);
        buf_free(&b);
    }
    return cli_finish_stdout(CLI_OK);
}

static void print_table(const cli_opts *o, const plan_result *pr) {
    double mid = 0;
    int i, t_done = 0;
    minlsh_plan_threshold(&mid, pr->bands, pr->rows);
    if (o->preset_name != NULL) {
        cli_buf b = {NULL, 0, 0};
        describe_shingling(&b, &o->preset);
        printf("preset               %s: %s\n", o->preset.name, o->preset.pipeline);
        printf("shingles             %s\n", b.p);
        printf("source               %s\n", o->preset.source);
        buf_free(&b);
    }
    printf("bands (b)            %u\n", (unsigned)pr->bands);
    printf("rows (r)             %u\n", (unsigned)pr->rows);
    printf("hash values used     %u of %u\n", (unsigned)(pr->bands * pr->rows),
           (unsigned)pr->k);
    printf("threshold (t)        %g\n", pr->threshold);
    if (strcmp(pr->how, "balanced") == 0)
        printf("chosen by            balanced planner (weights %g, %g)\n",
               o->weight_fp, o->weight_fn);
    else if (strcmp(pr->how, "recall") == 0)
        printf("chosen by            recall planner (target %g)\n", o->target_recall);
    else if (strcmp(pr->how, "rule") == 0)
        printf("chosen by            rule of thumb\n");
    else if (strcmp(pr->how, "preset") == 0)
        printf("chosen by            preset %s\n", o->preset.name);
    else
        printf("chosen by            --bands/--rows\n");
    printf("S-curve midpoint     %.4f  ((1/b)^(1/r))\n", mid);
    printf("P(candidate | t)     %.4f\n", prob(pr, pr->threshold));
    printf("false-positive area  %.4f  (integral of P(s) for s < t)\n", pr->fp_area);
    printf("false-negative area  %.4f  (integral of 1 - P(s) for s > t)\n", pr->fn_area);
    printf("\n     s  P(candidate)\n");
    for (i = 1; i <= 10; i++) {
        double s = i / 10.0;
        if (!t_done && pr->threshold < s - 1e-9) {
            printf("%6.4g  %.4f  <- threshold\n", pr->threshold, prob(pr, pr->threshold));
            t_done = 1;
        }
        if (!t_done && fabs(pr->threshold - s) < 1e-9) {
            printf("%6.1f  %.4f  <- threshold\n", s, prob(pr, s));
            t_done = 1;
            continue;
        }
        printf("%6.1f  %.4f\n", s, prob(pr, s));
    }
}

/* ---- SVG ---------------------------------------------------------------- */

#define SVG_W 640
#define SVG_H 440
#define PX0 70.0  /* plot area */
#define PY0 30.0
#define PW 520.0
#define PH 340.0

static double sx(double s) { return PX0 + s * PW; }
static double sy(double p) { return PY0 + (1.0 - p) * PH; }

static void svg_curve_points(cli_buf *b, const plan_result *pr, double from,
                             double to, int steps) {
    int i;
    for (i = 0; i <= steps; i++) {
        double s = from + (to - from) * i / steps;
        buf_printf(b, "%.2f,%.2f ", sx(s), sy(prob(pr, s)));
    }
}

static void svg_grid(cli_buf *b) {
    int i;
    buf_adds(b, "<g stroke=\"#dddddd\" stroke-width=\"1\">\n");
    for (i = 0; i <= 10; i++) {
        double v = i / 10.0;
        buf_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                   sx(v), sy(0), sx(v), sy(1));
        buf_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                   sx(0), sy(v), sx(1), sy(v));
    }
    buf_adds(b, "</g>\n<g fill=\"#333333\">\n");
    for (i = 0; i <= 10; i++) {
        double v = i / 10.0;
        buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%.1f</text>\n",
                   sx(v), sy(0) + 18, v);
        buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%.1f</text>\n",
                   sx(0) - 8, sy(v) + 4, v);
    }
    buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">"
                  "Jaccard similarity s</text>\n", sx(0.5), sy(0) + 40);
    buf_printf(b, "<text x=\"20\" y=\"%.2f\" text-anchor=\"middle\" "
                  "transform=\"rotate(-90 20 %.2f)\">P(candidate | s)</text>\n",
               sy(0.5), sy(0.5));
    buf_adds(b, "</g>\n");
}

static void svg_areas(cli_buf *b, const plan_result *pr) {
    double t = pr->threshold;
    /* False positives: under the curve left of t. */
    buf_adds(b, "<polygon fill=\"#d62728\" fill-opacity=\"0.25\" stroke=\"none\" points=\"");
    svg_curve_points(b, pr, 0.0, t, 100);
    buf_printf(b, "%.2f,%.2f %.2f,%.2f\"/>\n", sx(t), sy(0), sx(0), sy(0));
    /* False negatives: above the curve right of t. */
    buf_adds(b, "<polygon fill=\"#1f77b4\" fill-opacity=\"0.25\" stroke=\"none\" points=\"");
    svg_curve_points(b, pr, t, 1.0, 100);
    buf_printf(b, "%.2f,%.2f %.2f,%.2f\"/>\n", sx(1), sy(1), sx(t), sy(1));
}

static void svg_legend(cli_buf *b, const plan_result *pr) {
    /* Top left, where the curve is near 0, unless the curve rises early:
     * then bottom right, where it is near 1. */
    int low = pr->threshold <= 0.5;
    double x = low ? sx(1) - 262 : sx(0) + 12, y = low ? sy(0) - 94 : sy(1) + 12;
    buf_printf(b, "<g font-size=\"12\">\n<rect x=\"%.2f\" y=\"%.2f\" width=\"250\" "
                  "height=\"82\" fill=\"white\" fill-opacity=\"0.9\" stroke=\"#999999\"/>\n",
               x, y);
    buf_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                  "stroke=\"#1f4e9c\" stroke-width=\"2.5\"/>\n",
               x + 8, y + 16, x + 30, y + 16);
    buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\">b = %u bands, r = %u rows</text>\n",
               x + 38, y + 20, (unsigned)pr->bands, (unsigned)pr->rows);
    buf_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" "
                  "stroke-width=\"1.5\" stroke-dasharray=\"5,4\"/>\n",
               x + 8, y + 34, x + 30, y + 34);
    buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\">threshold t = %g, P(t) = %.4f</text>\n",
               x + 38, y + 38, pr->threshold, prob(pr, pr->threshold));
    buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"22\" height=\"10\" fill=\"#d62728\" "
                  "fill-opacity=\"0.25\"/>\n", x + 8, y + 47);
    buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\">false-positive area %.4f</text>\n",
               x + 38, y + 56, pr->fp_area);
    buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"22\" height=\"10\" fill=\"#1f77b4\" "
                  "fill-opacity=\"0.25\"/>\n", x + 8, y + 65);
    buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\">false-negative area %.4f</text>\n</g>\n",
               x + 38, y + 74, pr->fn_area);
}

static void svg_build(cli_buf *b, const plan_result *pr) {
    double t = pr->threshold;
    buf_adds(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"13\">\n",
               SVG_W, SVG_H, SVG_W, SVG_H);
    buf_printf(b, "<title>LSH S-curve: b = %u, r = %u, threshold %g</title>\n",
               (unsigned)pr->bands, (unsigned)pr->rows, t);
    buf_adds(b, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    svg_grid(b);
    svg_areas(b, pr);
    buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
                  "stroke=\"#333333\"/>\n", PX0, PY0, PW, PH);
    buf_adds(b, "<polyline fill=\"none\" stroke=\"#1f4e9c\" stroke-width=\"2.5\" points=\"");
    svg_curve_points(b, pr, 0.0, 1.0, 200);
    buf_adds(b, "\"/>\n");
    buf_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" "
                  "stroke-width=\"1.5\" stroke-dasharray=\"5,4\"/>\n",
               sx(t), sy(0), sx(t), sy(1));
    buf_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"#d62728\"/>\n", sx(t),
               sy(prob(pr, t)));
    buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\" fill=\"#d62728\">t = %g</text>\n",
               sx(t) + 6, sy(0) - 8, t);
    svg_legend(b, pr);
    buf_adds(b, "</svg>\n");
}

int cmd_params(cli_opts *o) {
    plan_result pr;
    int rc;
    if (o->given & OPT(O_LIST_PRESETS)) return list_presets();
    rc = choose(o, &pr);
    if (rc != 0) return rc;
    print_table(o, &pr);
    if (o->svg != NULL) {
        cli_buf b = {NULL, 0, 0};
        svg_build(&b, &pr);
        errno = 0;
        if ((rc = minlsh_file_save(o->svg, b.p, b.n, NULL)) != 0) {
            if (rc == MINLSH_E_NOMEM) cli_die_lib(o->svg, rc);
            cli_msg("%s: cannot write: %s", o->svg, strerror(errno ? errno : EIO));
            buf_free(&b);
            return cli_finish_stdout(CLI_FAILED);
        }
        buf_free(&b);
    }
    return cli_finish_stdout(CLI_OK);
}
