/*
 * The LSH planner: the S-curve, the FP/FN areas (against closed forms and an
 * independent Simpson integration done here with libm's pow), the three
 * modes (against brute force written from their definitions), the rule
 * threshold, every error path, and the speed at k = 1024.
 */
#include "minlsh.h"
#include "testlib.h"

#include <float.h>

/* P(s) with libm, independent of the library's integer powers. */
static double ref_p(uint32_t b, uint32_t r, double s) {
    return 1.0 - pow(1.0 - pow(s, (double)r), (double)b);
}

/* Composite Simpson over [lo, hi] with n (even) panels of f = P or 1 - P. */
static double simpson(uint32_t b, uint32_t r, double lo, double hi, int one_minus,
                      long n) {
    double h = (hi - lo) / (double)n, sum = 0.0;
    long i;
    for (i = 0; i <= n; i++) {
        double x = lo + (double)i * h;
        double f = ref_p(b, r, x);
        double w = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
        if (one_minus) f = 1.0 - f;
        sum += w * f;
    }
    return sum * h / 3.0;
}

static void test_options_init(void) {
    minlsh_plan_options o, def = MINLSH_PLAN_OPTIONS_INIT;
    memset(&o, 0xAB, sizeof o);
    EXPECT_OK(minlsh_plan_options_init(&o, MINLSH_PLAN_OPTIONS_VERSION));
    EXPECT_EQ_INT(o.version, 1);
    EXPECT_EQ_INT(o.mode, MINLSH_PLAN_BALANCED);
    EXPECT_EQ_INT(o.k, 128);
    EXPECT_EQ_INT(o.reserved, 0);
    EXPECT(o.threshold == 0.8 && o.weight_fp == 0.5 && o.weight_fn == 0.5 &&
           o.target_recall == 0.99);
    EXPECT(memcmp(&o, &def, sizeof o) == 0);
    EXPECT_ERR(minlsh_plan_options_init(NULL, 1), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_plan_options_init(&o, 0), MINLSH_E_VERSION);
    EXPECT_ERR(minlsh_plan_options_init(&o, 2), MINLSH_E_VERSION);
}

static void test_probability_table(void) {
    /* The classic b = 20, r = 5 table, to its printed precision. */
    static const double want[7] = {0.006, 0.047, 0.186, 0.470, 0.802, 0.975, 0.9996};
    double p;
    int i;
    for (i = 0; i < 7; i++) {
        double s = 0.2 + 0.1 * i;
        EXPECT_OK(minlsh_plan_probability(&p, 20, 5, s));
        EXPECT_NEAR(p, want[i], i == 6 ? 0.00005 : 0.0005);
        EXPECT_NEAR(p, ref_p(20, 5, s), 1e-13);
    }
    EXPECT_OK(minlsh_plan_probability(&p, 20, 5, 0.0));
    EXPECT(p == 0.0);
    EXPECT_OK(minlsh_plan_probability(&p, 20, 5, 1.0));
    EXPECT(p == 1.0);
    EXPECT_OK(minlsh_plan_probability(&p, 1, 1, 0.37));
    EXPECT_NEAR(p, 0.37, 1e-15);
    EXPECT_OK(minlsh_plan_probability(&p, 1024, 1, 0.001));
    EXPECT_NEAR(p, ref_p(1024, 1, 0.001), 1e-12);
}

static void test_balanced_lead_values(void) {
    minlsh_plan_options o = MINLSH_PLAN_OPTIONS_INIT;
    uint32_t b = 0, r = 0;
    double fp, fn, fp2, fn2;
    /* t = 0.8, k = 128, equal weights: (9, 13), error 0.0292970. */
    EXPECT_OK(minlsh_plan_compute(&b, &r, &fp, &fn, &o));
    EXPECT_EQ_INT(b, 9);
    EXPECT_EQ_INT(r, 13);
    EXPECT_NEAR(0.5 * fp + 0.5 * fn, 0.0292970, 1e-6);
    EXPECT_NEAR(fp, simpson(9, 13, 0.0, 0.8, 0, 20000), 1e-9);
    EXPECT_NEAR(fn, simpson(9, 13, 0.8, 1.0, 1, 20000), 1e-9);
    EXPECT_OK(minlsh_plan_areas(&fp2, &fn2, 9, 13, 0.8));
    EXPECT(fp == fp2 && fn == fn2); /* one computation, the same bits */
    /* t = 0.5: (25, 5), error 0.0437371. */
    o.threshold = 0.5;
    EXPECT_OK(minlsh_plan_compute(&b, &r, &fp, &fn, &o));
    EXPECT_EQ_INT(b, 25);
    EXPECT_EQ_INT(r, 5);
    EXPECT_NEAR(0.5 * fp + 0.5 * fn, 0.0437371, 1e-6);
    EXPECT_NEAR(fp, simpson(25, 5, 0.0, 0.5, 0, 20000), 1e-9);
    EXPECT_NEAR(fn, simpson(25, 5, 0.5, 1.0, 1, 20000), 1e-9);
    /* NULL area pointers are allowed. */
    EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &o));
    EXPECT_EQ_INT(b, 25);
}

/* Brute force of BALANCED from its definition, through plan_areas. */
static void brute_balanced(uint32_t k, double t, double wfp, double wfn,
                           uint32_t *bb, uint32_t *rr) {
    double best = 0.0;
    uint32_t b, r;
    *bb = 0;
    for (b = 1; b <= k; b++)
        for (r = 1; b * r <= k; r++) {
            double fp, fn, e;
            if (minlsh_plan_areas(&fp, &fn, b, r, t) != 0) continue;
            e = wfp * fp + wfn * fn;
            if (*bb == 0 || e < best) {
                best = e;
                *bb = b;
                *rr = r;
            }
        }
}

static void test_balanced_brute(void) {
    static const double ts[] = {0.3, 0.5, 0.7, 0.85, 0.95};
    static const uint32_t ks[] = {1, 7, 64, 200};
    minlsh_plan_options o = MINLSH_PLAN_OPTIONS_INIT;
    size_t i, j;
    /* Weights (0, 1) make exact ties: FN areas below ~1e-17 come out as 0
     * for many (b, r), and the first of them in (b, r) order must win. */
    static const double ws[][2] = {{0.3, 0.7}, {0.5, 0.5}, {0.0, 1.0}};
    size_t w;
    for (w = 0; w < sizeof ws / sizeof ws[0]; w++)
        for (i = 0; i < sizeof ts / sizeof ts[0]; i++)
            for (j = 0; j < sizeof ks / sizeof ks[0]; j++) {
                uint32_t b, r, wb = 0, wr = 0;
                o.threshold = ts[i];
                o.k = ks[j];
                o.weight_fp = ws[w][0];
                o.weight_fn = ws[w][1];
                EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &o));
                brute_balanced(ks[j], ts[i], ws[w][0], ws[w][1], &wb, &wr);
                EXPECT_MSG(b == wb && r == wr, "w=%g t=%g k=%u: (%u,%u) want (%u,%u)",
                           ws[w][0], ts[i], ks[j], b, r, wb, wr);
                EXPECT(b * r <= ks[j]);
            }
    /* Only false positives count: one band of all rows, even though the
     * areas are tiny (t^(k+1)/(k+1) = 3.4e-41 here): the FP area keeps its
     * relative precision. */
    o.threshold = 0.5;
    o.k = 128;
    o.weight_fp = 1.0;
    o.weight_fn = 0.0;
    {
        uint32_t b, r;
        double fp;
        EXPECT_OK(minlsh_plan_compute(&b, &r, &fp, NULL, &o));
        EXPECT_EQ_INT(b, 1);
        EXPECT_EQ_INT(r, 128);
        EXPECT_NEAR(fp / (pow(0.5, 129) / 129), 1.0, 1e-12);
    }
    /* Only false negatives count: the most bands of one row (k small
     * enough that the FN areas, 1e-10 and up, are resolved). */
    o.threshold = 0.9;
    o.k = 8;
    o.weight_fp = 0.0;
    o.weight_fn = 1.0;
    {
        uint32_t b, r;
        EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &o));
        EXPECT_EQ_INT(b, 8);
        EXPECT_EQ_INT(r, 1);
    }
}

static void test_areas_closed_form(void) {
    static const uint32_t rs[] = {1, 2, 5, 13, 64, 1024};
    static const double ts[] = {0.1, 0.5, 0.8, 0.99};
    size_t i, j;
    double fp, fn;
    for (i = 0; i < sizeof rs / sizeof rs[0]; i++)
        for (j = 0; j < sizeof ts / sizeof ts[0]; j++) {
            /* b = 1: P(s) = s^r. */
            double t = ts[j], r = (double)rs[i];
            double want_fp = pow(t, r + 1) / (r + 1);
            double want_fn = (1.0 - t) - (1.0 - pow(t, r + 1)) / (r + 1);
            EXPECT_OK(minlsh_plan_areas(&fp, &fn, 1, rs[i], t));
            EXPECT_NEAR(fp, want_fp, 1e-13);
            EXPECT_NEAR(fn, want_fn, 1e-13);
            /* r = 1: P(s) = 1 - (1-s)^b, the integral of (1-s)^b is
             * (1 - (1-t)^(b+1)) / (b+1) on [0, t]. */
            {
                double b = (double)rs[i];
                double j0t = (1.0 - pow(1.0 - t, b + 1)) / (b + 1);
                double j01 = 1.0 / (b + 1);
                EXPECT_OK(minlsh_plan_areas(&fp, &fn, rs[i], 1, t));
                EXPECT_NEAR(fp, t - j0t, 1e-13);
                EXPECT_NEAR(fn, j01 - j0t, 1e-13);
            }
        }
    /* Either output may be NULL. */
    EXPECT_OK(minlsh_plan_areas(&fp, NULL, 20, 5, 0.5));
    EXPECT_OK(minlsh_plan_areas(NULL, &fn, 20, 5, 0.5));
}

static void test_areas_simpson(void) {
    /* Steep curves included: degree b*r up to 1024. */
    static const uint32_t br[][2] = {{20, 5}, {9, 13}, {32, 32}, {4, 256},
                                     {1024, 1}, {1, 1024}, {3, 7}, {128, 8}};
    static const double ts[] = {0.2, 0.5, 0.9};
    size_t i, j;
    for (i = 0; i < sizeof br / sizeof br[0]; i++)
        for (j = 0; j < sizeof ts / sizeof ts[0]; j++) {
            double fp, fn, t = ts[j];
            EXPECT_OK(minlsh_plan_areas(&fp, &fn, br[i][0], br[i][1], t));
            EXPECT_NEAR(fp, simpson(br[i][0], br[i][1], 0.0, t, 0, 200000), 1e-9);
            EXPECT_NEAR(fn, simpson(br[i][0], br[i][1], t, 1.0, 1, 200000), 1e-9);
            EXPECT(fp >= 0.0 && fn >= 0.0 && fp <= t && fn <= 1.0 - t);
        }
}

static void test_rule(void) {
    static const double ts[] = {0.2, 0.5, 0.8, 0.9};
    static const uint32_t ks[] = {1, 16, 128, 1024};
    minlsh_plan_options o = MINLSH_PLAN_OPTIONS_INIT;
    size_t i, j;
    o.mode = MINLSH_PLAN_RULE;
    for (i = 0; i < sizeof ts / sizeof ts[0]; i++)
        for (j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            uint32_t b, r, rr, wb = 0, wr = 0;
            double best = 0.0, fp, fn, fp2, fn2;
            o.threshold = ts[i];
            o.k = ks[j];
            for (rr = 1; rr <= ks[j]; rr++) {
                uint32_t bb = ks[j] / rr;
                double d = fabs(pow(1.0 / bb, 1.0 / rr) - ts[i]);
                if (wb == 0 || d < best) {
                    best = d;
                    wb = bb;
                    wr = rr;
                }
            }
            EXPECT_OK(minlsh_plan_compute(&b, &r, &fp, &fn, &o));
            EXPECT_MSG(b == wb && r == wr, "rule t=%g k=%u: (%u,%u) want (%u,%u)", ts[i],
                       ks[j], b, r, wb, wr);
            EXPECT_OK(minlsh_plan_areas(&fp2, &fn2, b, r, ts[i]));
            EXPECT(fp == fp2 && fn == fn2);
        }
    /* k = 128, t = 0.55: r = 5, b = 25 gives (1/25)^(1/5) = 0.525, nearer
     * than r = 6 (b = 21, 0.602) or r = 4 (b = 32, 0.420). */
    o.k = 128;
    o.threshold = 0.55;
    {
        uint32_t b, r;
        EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &o));
        EXPECT_EQ_INT(r, 5);
        EXPECT_EQ_INT(b, 25);
    }
}

static void test_threshold(void) {
    double t;
    EXPECT_OK(minlsh_plan_threshold(&t, 20, 5));
    EXPECT_NEAR(t, pow(1.0 / 20.0, 0.2), 1e-15);
    EXPECT_NEAR(t, 0.5493, 0.0001);
    EXPECT_OK(minlsh_plan_threshold(&t, 1, 7));
    EXPECT(t == 1.0);
    EXPECT_OK(minlsh_plan_threshold(&t, 9, 13));
    EXPECT_NEAR(t, pow(1.0 / 9.0, 1.0 / 13.0), 1e-15);
    EXPECT_ERR(minlsh_plan_threshold(NULL, 20, 5), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_plan_threshold(&t, 0, 5), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_threshold(&t, 5, 0), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_threshold(&t, MINLSH_FAMILY_K_MAX + 1, 1), MINLSH_E_PARAM);
}

/* Brute force of RECALL from its definition, through the public helpers. */
static int brute_recall(uint32_t k, double t, double target, uint32_t *bb, uint32_t *rr) {
    double best = 0.0;
    uint32_t b, r;
    *bb = 0;
    for (b = 1; b <= k; b++)
        for (r = 1; b * r <= k; r++) {
            double p, fp;
            if (minlsh_plan_probability(&p, b, r, t) != 0 || p < target) continue;
            if (minlsh_plan_areas(&fp, NULL, b, r, t) != 0) continue;
            if (*bb == 0 || fp < best) {
                best = fp;
                *bb = b;
                *rr = r;
            }
        }
    return *bb != 0;
}

static void test_recall(void) {
    static const struct {
        uint32_t k;
        double t, target;
    } cases[] = {{128, 0.8, 0.99}, {128, 0.5, 0.95}, {256, 0.9, 0.999}, {64, 0.7, 0.9},
                 {1024, 0.8, 0.99}};
    minlsh_plan_options o = MINLSH_PLAN_OPTIONS_INIT;
    size_t i;
    o.mode = MINLSH_PLAN_RECALL;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t b, r, wb = 0, wr = 0;
        double p, fp;
        o.k = cases[i].k;
        o.threshold = cases[i].t;
        o.target_recall = cases[i].target;
        EXPECT_OK(minlsh_plan_compute(&b, &r, &fp, NULL, &o));
        EXPECT(brute_recall(cases[i].k, cases[i].t, cases[i].target, &wb, &wr));
        EXPECT_MSG(b == wb && r == wr, "recall case %zu: (%u,%u) want (%u,%u)", i, b, r,
                   wb, wr);
        EXPECT_OK(minlsh_plan_probability(&p, b, r, cases[i].t));
        EXPECT(p >= cases[i].target);
        EXPECT(b * r <= cases[i].k);
    }
    /* The brief's example: t = 0.8, k = 128, 99%: r = 6 and the fewest
     * bands that reach 0.99, b = 16 (P = 0.99229; b = 15 gives 0.98955). */
    o.k = 128;
    o.threshold = 0.8;
    o.target_recall = 0.99;
    {
        uint32_t b, r;
        double p;
        EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &o));
        EXPECT_EQ_INT(b, 16);
        EXPECT_EQ_INT(r, 6);
        EXPECT_OK(minlsh_plan_probability(&p, 16, 6, 0.8));
        EXPECT_NEAR(p, 0.99229, 0.00001);
        EXPECT_OK(minlsh_plan_probability(&p, 15, 6, 0.8));
        EXPECT(p < 0.99);
    }
    /* Unreachable: one row of one band cannot give 99% at t = 0.01. */
    o.k = 1;
    o.threshold = 0.01;
    {
        uint32_t b = 77, r = 77;
        EXPECT_ERR(minlsh_plan_compute(&b, &r, NULL, NULL, &o), MINLSH_E_PARAM);
    }
}

static void test_errors(void) {
    minlsh_plan_options o = MINLSH_PLAN_OPTIONS_INIT, bad;
    uint32_t b, r;
    double x, y, nan = NAN;
    EXPECT_ERR(minlsh_plan_compute(&b, &r, NULL, NULL, NULL), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_plan_compute(NULL, &r, NULL, NULL, &o), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_plan_compute(&b, NULL, NULL, NULL, &o), MINLSH_E_NULL);
#define BAD(field, value, code)                                                \
    do {                                                                       \
        bad = o;                                                               \
        bad.field = value;                                                     \
        EXPECT_ERR(minlsh_plan_compute(&b, &r, NULL, NULL, &bad), code);       \
    } while (0)
    BAD(version, 0, MINLSH_E_VERSION);
    BAD(version, 2, MINLSH_E_VERSION);
    BAD(mode, 0, MINLSH_E_PARAM);
    BAD(mode, 4, MINLSH_E_PARAM);
    BAD(k, 0, MINLSH_E_PARAM);
    BAD(k, MINLSH_FAMILY_K_MAX + 1, MINLSH_E_PARAM);
    BAD(reserved, 1, MINLSH_E_PARAM);
    BAD(threshold, 0.0, MINLSH_E_PARAM);
    BAD(threshold, 1.0, MINLSH_E_PARAM);
    BAD(threshold, -0.5, MINLSH_E_PARAM);
    BAD(threshold, nan, MINLSH_E_PARAM);
    BAD(weight_fp, -0.1, MINLSH_E_PARAM);
    BAD(weight_fn, -1e-300, MINLSH_E_PARAM);
    BAD(weight_fp, nan, MINLSH_E_PARAM);
    BAD(weight_fn, INFINITY, MINLSH_E_PARAM);
    BAD(target_recall, 0.0, MINLSH_E_PARAM);
    BAD(target_recall, 1.0, MINLSH_E_PARAM);
    BAD(target_recall, nan, MINLSH_E_PARAM);
    bad = o;
    bad.weight_fp = 0.0;
    bad.weight_fn = 0.0;
    EXPECT_ERR(minlsh_plan_compute(&b, &r, NULL, NULL, &bad), MINLSH_E_PARAM);
#undef BAD
    /* The extremes are accepted. */
    bad = o;
    bad.k = 1;
    EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &bad));
    EXPECT(b == 1 && r == 1);
    bad.k = MINLSH_FAMILY_K_MAX;
    bad.threshold = DBL_MIN;
    EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &bad));

    EXPECT_ERR(minlsh_plan_probability(NULL, 20, 5, 0.5), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_plan_probability(&x, 0, 5, 0.5), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_probability(&x, 20, 0, 0.5), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_probability(&x, MINLSH_FAMILY_K_MAX + 1, 1, 0.5), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_probability(&x, 129, 128, 0.5), MINLSH_E_PARAM);
    EXPECT_OK(minlsh_plan_probability(&x, 32, 32, 0.5));
    EXPECT_ERR(minlsh_plan_probability(&x, 20, 5, -0.001), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_probability(&x, 20, 5, 1.001), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_probability(&x, 20, 5, nan), MINLSH_E_PARAM);

    EXPECT_ERR(minlsh_plan_areas(NULL, NULL, 20, 5, 0.5), MINLSH_E_NULL);
    EXPECT_ERR(minlsh_plan_areas(&x, &y, 0, 5, 0.5), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_areas(&x, &y, 20, 0, 0.5), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_areas(&x, &y, MINLSH_FAMILY_K_MAX, 2, 0.5), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_areas(&x, &y, 20, 5, 0.0), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_areas(&x, &y, 20, 5, 1.0), MINLSH_E_PARAM);
    EXPECT_ERR(minlsh_plan_areas(&x, &y, 20, 5, nan), MINLSH_E_PARAM);
}

/* The largest k in every mode: a valid plan (bench/bench.c times it). */
static void test_k1024(void) {
    minlsh_plan_options o = MINLSH_PLAN_OPTIONS_INIT;
    uint32_t mode, b, r;
    o.k = 1024;
    for (mode = MINLSH_PLAN_RULE; mode <= MINLSH_PLAN_RECALL; mode++) {
        o.mode = mode;
        b = r = 0;
        EXPECT_OK(minlsh_plan_compute(&b, &r, NULL, NULL, &o));
        EXPECT(b >= 1 && r >= 1 && b * r <= 1024);
    }
}

int main(void) {
    RUN(test_options_init);
    RUN(test_probability_table);
    RUN(test_balanced_lead_values);
    RUN(test_balanced_brute);
    RUN(test_areas_closed_form);
    RUN(test_areas_simpson);
    RUN(test_rule);
    RUN(test_threshold);
    RUN(test_recall);
    RUN(test_errors);
    RUN(test_k1024);
    return TL_SUMMARY("test_plan");
}
