/*
 * The presets of published pipelines (lib/preset): every figure pinned, the
 * S-curves checked against the probabilities the sources print, each preset
 * accepted as it stands by the shingler, the family and the dedup engine,
 * and the lookup's errors.
 */
#define MINLSH_EXPERIMENTAL_API 1
#include "minlsh.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define FOLD (MINLSH_NORM_CASEFOLD | MINLSH_NORM_UCASEFOLD)
#define PUNCT (MINLSH_NORM_PUNCT | MINLSH_NORM_UPUNCT)
#define SPACE (MINLSH_NORM_WHITESPACE | MINLSH_NORM_UWHITESPACE)

/* docs/presets.md, row by row: a change to any figure must change both. */
static const struct {
    const char *name;
    uint32_t unit, k, flags, num_perm, bands, rows;
    double threshold;
} pinned[] = {
    {"fineweb", MINLSH_UNIT_WORD, 5, FOLD | PUNCT | SPACE | MINLSH_NORM_CJK_WORDS, 112, 14, 8, 0.75},
    {"refinedweb", MINLSH_UNIT_WORD, 5, MINLSH_NORM_CJK_WORDS, 9000, 450, 20, 0.8},
    {"lee2022", MINLSH_UNIT_WORD, 5, 0, 9000, 450, 20, 0.8},
    {"lee2022-0.9", MINLSH_UNIT_WORD, 5, 0, 800, 40, 20, 0.9},
    {"nemo-curator", MINLSH_UNIT_CODEPOINT, 24, 0, 260, 20, 13, 0.8},
    {"slimpajama", MINLSH_UNIT_CODEPOINT, 13, FOLD | MINLSH_NORM_PUNCT | SPACE, 128, 9, 13, 0.8},
};
#define N_PINNED (sizeof pinned / sizeof pinned[0])

static void test_table_pinned(void) {
    uint32_t i;
    EXPECT_EQ_INT(minlsh_preset_count(), N_PINNED);
    for (i = 0; i < N_PINNED && i < minlsh_preset_count(); i++) {
        minlsh_preset p;
        memset(&p, 0xAB, sizeof p);
        p.version = MINLSH_PRESET_VERSION;
        EXPECT_OK(minlsh_preset_get(&p, i));
        EXPECT_MSG(p.name != NULL && strcmp(p.name, pinned[i].name) == 0,
                   "preset %u is %s, expected %s", (unsigned)i, p.name ? p.name : "NULL",
                   pinned[i].name);
        EXPECT_EQ_INT(p.version, MINLSH_PRESET_VERSION);
        EXPECT_EQ_INT(p.unit, pinned[i].unit);
        EXPECT_EQ_INT(p.shingle_k, pinned[i].k);
        EXPECT_EQ_INT(p.flags, pinned[i].flags);
        EXPECT_EQ_INT(p.num_perm, pinned[i].num_perm);
        EXPECT_EQ_INT(p.bands, pinned[i].bands);
        EXPECT_EQ_INT(p.rows, pinned[i].rows);
        EXPECT_EQ_INT(p.reserved, 0);
        EXPECT_MSG(p.threshold == pinned[i].threshold, "%s: threshold %.17g, expected %g",
                   pinned[i].name, p.threshold, pinned[i].threshold);
        EXPECT_MSG(p.pipeline != NULL && p.pipeline[0] != '\0', "%s: no pipeline", pinned[i].name);
        EXPECT_MSG(p.source != NULL && p.source[0] != '\0', "%s: no source", pinned[i].name);
    }
}

static double prob(uint32_t b, uint32_t r, double s) {
    double p = -1;
    EXPECT_OK(minlsh_plan_probability(&p, b, r, s));
    return p;
}

/* The probabilities the sources print for their own banding, to the digits
 * they print (half a unit of the last digit). */
static void test_s_curves_match_sources(void) {
    minlsh_preset p = MINLSH_PRESET_INIT;
    /* FineWeb app. E.1: 56%, 77%, 92% and 98.8% at 0.7, 0.75, 0.8, 0.85 */
    EXPECT_OK(minlsh_preset_find(&p, "fineweb"));
    EXPECT_NEAR(prob(p.bands, p.rows, 0.7), 0.56, 0.005);
    EXPECT_NEAR(prob(p.bands, p.rows, 0.75), 0.77, 0.005);
    EXPECT_NEAR(prob(p.bands, p.rows, 0.8), 0.92, 0.005);
    EXPECT_NEAR(prob(p.bands, p.rows, 0.85), 0.988, 0.0005);
    /* Lee et al. app. A: b and r chosen "to make sure a collision at the
     * desired Jaccard index threshold of 0.8 had a high probability"; the
     * swapped reading (20 bands of 450) would give almost none. */
    EXPECT_OK(minlsh_preset_find(&p, "lee2022"));
    EXPECT(prob(p.bands, p.rows, 0.8) > 0.99);
    EXPECT(prob(p.rows, p.bands, 0.9) < 1e-15);
    EXPECT_OK(minlsh_preset_find(&p, "lee2022-0.9"));
    EXPECT(prob(p.bands, p.rows, 0.9) > 0.99);
    /* (1/b)^(1/r), the rule-of-thumb threshold datatrove's source quotes
     * for 14 x 8: "(1/14)^(1/8) ~ 0.72" */
    {
        double mid = 0;
        EXPECT_OK(minlsh_preset_find(&p, "fineweb"));
        EXPECT_OK(minlsh_plan_threshold(&mid, p.bands, p.rows));
        EXPECT_NEAR(mid, 0.719, 0.0005);
    }
    /* SlimPajama's banding is datasketch's choice for 0.8 and 128 values
     * (equal weights on the two areas), which the balanced planner makes */
    {
        minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
        uint32_t b = 0, r = 0;
        EXPECT_OK(minlsh_preset_find(&p, "slimpajama"));
        po.mode = MINLSH_PLAN_BALANCED;
        po.k = p.num_perm;
        po.threshold = p.threshold;
        EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &po));
        EXPECT_EQ_INT(b, p.bands);
        EXPECT_EQ_INT(r, p.rows);
    }
}

/* Each preset builds a shingler with exactly its flags (none dropped or
 * added), a family of its length and an engine with its banding. */
static void test_presets_usable(void) {
    uint32_t i;
    for (i = 0; i < minlsh_preset_count(); i++) {
        minlsh_preset p = MINLSH_PRESET_INIT;
        minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
        minlsh_dedup_options dopt = MINLSH_DEDUP_OPTIONS_INIT;
        minlsh_shingler *sh = NULL;
        minlsh_family *fam = NULL;
        minlsh_dedup *d = NULL;
        minlsh_dedup_stats st;
        EXPECT_OK(minlsh_preset_get(&p, i));
        EXPECT_MSG((uint64_t)p.bands * p.rows <= p.num_perm, "%s: b*r > k", p.name);
        EXPECT_MSG(p.threshold > 0 && p.threshold <= 1, "%s: threshold", p.name);
        so.unit = p.unit;
        so.k = p.shingle_k;
        so.flags = p.flags;
        EXPECT_OK(minlsh_shingler_new(&sh, &so, NULL));
        EXPECT_MSG(minlsh_shingler_flags(sh) == p.flags, "%s: shingler flags 0x%x, preset 0x%x",
                   p.name, (unsigned)minlsh_shingler_flags(sh), (unsigned)p.flags);
        EXPECT_OK(minlsh_family_new(&fam, p.num_perm, 1, NULL));
        dopt.threshold = p.threshold;
        dopt.bands = p.bands;
        dopt.rows = p.rows;
        dopt.threads = 1;
        EXPECT_OK(minlsh_dedup_new(&d, sh, fam, &dopt, NULL));
        EXPECT_OK(minlsh_dedup_run(d));
        EXPECT_OK(minlsh_dedup_copy_stats(&st, d));
        EXPECT_EQ_INT(st.bands, p.bands);
        EXPECT_EQ_INT(st.rows, p.rows);
        minlsh_dedup_free(d);
        minlsh_family_free(fam);
        minlsh_shingler_free(sh);
    }
}

static void test_lookup(void) {
    minlsh_preset p = MINLSH_PRESET_INIT, q = MINLSH_PRESET_INIT;
    uint32_t i;
    /* every name finds its own row; ASCII case does not matter */
    for (i = 0; i < minlsh_preset_count(); i++) {
        EXPECT_OK(minlsh_preset_get(&p, i));
        EXPECT_OK(minlsh_preset_find(&q, p.name));
        EXPECT(q.name == p.name);
    }
    EXPECT_OK(minlsh_preset_find(&q, "FineWeb"));
    EXPECT(strcmp(q.name, "fineweb") == 0);
    EXPECT_OK(minlsh_preset_find(&q, "NEMO-CURATOR"));
    EXPECT(strcmp(q.name, "nemo-curator") == 0);
    /* no prefix or extension matches */
    EXPECT_ERR(minlsh_preset_find(&q, "fine"), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_preset_find(&q, "finewebx"), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_preset_find(&q, ""), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_preset_find(&q, "lee2022-0.8"), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_preset_get(&q, minlsh_preset_count()), MINLSH_E_NOTFOUND);
    EXPECT_ERR(minlsh_preset_get(&q, UINT32_MAX), MINLSH_E_NOTFOUND);
    /* arguments */
    EXPECT_ERR(minlsh_preset_get(NULL, 0), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_preset_find(NULL, "fineweb"), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_preset_find(&q, NULL), MINLSH_E_NULL);
    /* versions: 0 and newer than the library are refused, and nothing is
     * written then */
    memset(&q, 0xAB, sizeof q);
    q.version = 0;
    EXPECT_ERR(minlsh_preset_get(&q, 0), MINLSH_E_VERSION);
    q.version = MINLSH_PRESET_VERSION + 1;
    EXPECT_ERR(minlsh_preset_find(&q, "fineweb"), MINLSH_E_VERSION);
    EXPECT_EQ_INT(q.unit, 0xABABABABu);
    EXPECT_EQ_INT(q.version, MINLSH_PRESET_VERSION + 1);
}

int main(void) {
    RUN(test_table_pinned);
    RUN(test_s_curves_match_sources);
    RUN(test_presets_usable);
    RUN(test_lookup);
    return TL_SUMMARY("test_preset");
}
