/*
 * LSH parameter planning: the S-curve P(s) = 1 - (1 - s^r)^b, its
 * false-positive and false-negative areas, and the three ways of choosing
 * (b, r) (docs/lsh.md).
 *
 * The areas are integrated exactly, not sampled. With
 * J_b(x) = integral_0^x (1 - s^r)^b ds, differentiating s (1 - s^r)^b and
 * integrating over [0, x] gives
 *     x (1 - x^r)^b = (1 + br) J_b(x) - br J_{b-1}(x),  J_0(x) = x,
 * so J_b(x) = (x (1 - x^r)^b + br J_{b-1}(x)) / (1 + br): every term is
 * positive and the previous error is multiplied by br / (1 + br) < 1, so the
 * recurrence is stable and accurate to a few units in the last place. Then
 *     FP = integral_0^t P = t - J_b(t),   FN = integral_t^1 (1 - P) = J_b(1) - J_b(t)
 * (FP through an equivalent recurrence of positive terms, see the walk).
 * It costs O(b) per (b, r) and, walking b upwards for a fixed r, O(1) per
 * candidate, so planning k = 1024 takes well under a millisecond. Only +,
 * -, *, / are used (integer powers by repeated multiplication), so the areas
 * and the BALANCED and RECALL choices are bit-identical wherever doubles are
 * IEEE binary64 and not contracted into fused multiply-adds. RULE and
 * plan_threshold need a real root and use libm's pow.
 */
#include "lsh.h"

#include <math.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* (b, r) with b*r above the longest possible signature make no sense and
 * would make the O(b) areas slow for huge b. */
#define MINLSH__PLAN_BR_MAX MINLSH_FAMILY_K_MAX

int minlsh_plan_options_init(minlsh_plan_options *opts, uint32_t version) {
    static const minlsh_plan_options defaults = MINLSH_PLAN_OPTIONS_INIT;
    if (opts == NULL) return MINLSH_E_NULL;
    if (version != MINLSH_PLAN_OPTIONS_VERSION) return MINLSH_E_VERSION;
    *opts = defaults;
    return 0;
}

/* x^n by n multiplications: the same sequence of roundings everywhere, and
 * the same one the incremental loops below perform. */
static double minlsh__plan_ipow(double x, uint32_t n) {
    double p = 1.0;
    uint32_t i;
    for (i = 0; i < n; i++) p *= x;
    return p;
}

static int minlsh__plan_check_br(uint32_t bands, uint32_t rows) {
    if (bands == 0 || rows == 0) return MINLSH_E_PARAM;
    if ((uint64_t)bands * rows > MINLSH__PLAN_BR_MAX) return MINLSH_E_PARAM;
    return 0;
}

/* A walk over b = 0, 1, 2, ... for a fixed (r, t), one step per band: the
 * state every (b, r) is computed from, so plan_compute, plan_areas and
 * plan_probability give a (b, r) the same bits.
 *
 * The false-positive area uses the complement of the recurrence above:
 * with F_b = t - J_b(t) and P_b = 1 - y^b,
 *     F_b = (t P_b + br F_{b-1}) / (1 + br),   P_b = P_{b-1} + y^(b-1) t^r,
 * sums of positive terms, so even tiny areas and probabilities keep their
 * relative precision. The false-negative area is J_b(1) - J_b(t), accurate
 * to about 1e-16 absolute (smaller areas come out as 0 or noise). */
typedef struct minlsh__plan_walk {
    double t, tr, y; /* threshold, t^r, 1 - t^r */
    double yb;       /* y^b */
    double p;        /* P_b(t) = 1 - y^b */
    double fp;       /* F_b = integral_0^t P_b */
    double jt;       /* J_b(t) */
    double j1;       /* J_b(1) */
    uint32_t r, b;
} minlsh__plan_walk;

static void minlsh__plan_walk_init(minlsh__plan_walk *w, uint32_t r, double t) {
    w->t = t;
    w->tr = minlsh__plan_ipow(t, r);
    w->y = 1.0 - w->tr;
    w->yb = 1.0;
    w->p = 0.0;
    w->fp = 0.0;
    w->jt = t;
    w->j1 = 1.0;
    w->r = r;
    w->b = 0;
}

static void minlsh__plan_walk_step(minlsh__plan_walk *w) {
    double br, d;
    w->b++;
    br = (double)w->b * (double)w->r;
    d = 1.0 + br;
    w->p += w->yb * w->tr;
    if (w->p > 1.0) w->p = 1.0; /* rounding; the sum is 1 - y^b <= 1 */
    w->yb *= w->y;
    w->fp = (w->t * w->p + br * w->fp) / d;
    w->jt = (w->t * w->yb + br * w->jt) / d;
    w->j1 = (br * w->j1) / d; /* 1 - 1^r = 0: no boundary term at x = 1 */
}

static double minlsh__plan_walk_fn(const minlsh__plan_walk *w) {
    double fn = w->j1 - w->jt;
    return fn > 0.0 ? fn : 0.0;
}

/* The walk after b steps. */
static void minlsh__plan_walk_to(minlsh__plan_walk *w, uint32_t bands, uint32_t rows,
                                 double t) {
    uint32_t i;
    minlsh__plan_walk_init(w, rows, t);
    for (i = 0; i < bands; i++) minlsh__plan_walk_step(w);
}

static int minlsh__plan_open_unit(double x) { return x > 0.0 && x < 1.0; }

int minlsh_plan_probability(double *out, uint32_t bands, uint32_t rows, double s) {
    minlsh__plan_walk w;
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    rc = minlsh__plan_check_br(bands, rows);
    if (rc != 0) return rc;
    if (!(s >= 0.0 && s <= 1.0)) return MINLSH_E_PARAM; /* NaN too */
    minlsh__plan_walk_to(&w, bands, rows, s);
    *out = w.p;
    return 0;
}

int minlsh_plan_areas(double *fp_area, double *fn_area, uint32_t bands,
                      uint32_t rows, double t) {
    minlsh__plan_walk w;
    int rc;
    if (fp_area == NULL && fn_area == NULL) return MINLSH_E_NULL;
    rc = minlsh__plan_check_br(bands, rows);
    if (rc != 0) return rc;
    if (!minlsh__plan_open_unit(t)) return MINLSH_E_PARAM;
    minlsh__plan_walk_to(&w, bands, rows, t);
    if (fp_area != NULL) *fp_area = w.fp;
    if (fn_area != NULL) *fn_area = minlsh__plan_walk_fn(&w);
    return 0;
}

int minlsh_plan_threshold(double *out, uint32_t bands, uint32_t rows) {
    int rc;
    if (out == NULL) return MINLSH_E_NULL;
    rc = minlsh__plan_check_br(bands, rows);
    if (rc != 0) return rc;
    *out = pow(1.0 / (double)bands, 1.0 / (double)rows);
    return 0;
}

static int minlsh__plan_check_options(const minlsh_plan_options *o) {
    if (o->version != MINLSH_PLAN_OPTIONS_VERSION) return MINLSH_E_VERSION;
    if (o->mode < MINLSH_PLAN_RULE || o->mode > MINLSH_PLAN_RECALL) return MINLSH_E_PARAM;
    if (o->k == 0 || o->k > MINLSH_FAMILY_K_MAX) return MINLSH_E_PARAM;
    if (o->reserved != 0) return MINLSH_E_PARAM;
    if (!minlsh__plan_open_unit(o->threshold)) return MINLSH_E_PARAM;
    /* Every field is checked whatever the mode, so a bad value is reported
     * before a later change of mode would start using it. */
    if (!(o->weight_fp >= 0.0) || !isfinite(o->weight_fp)) return MINLSH_E_PARAM;
    if (!(o->weight_fn >= 0.0) || !isfinite(o->weight_fn)) return MINLSH_E_PARAM;
    if (o->weight_fp == 0.0 && o->weight_fn == 0.0) return MINLSH_E_PARAM;
    if (!minlsh__plan_open_unit(o->target_recall)) return MINLSH_E_PARAM;
    return 0;
}

/* The best so far, under "smaller objective, then smaller b, then smaller
 * r": the first strict minimum of a walk with b ascending, then r
 * ascending, whatever order the candidates are actually visited in. */
typedef struct minlsh__plan_best {
    double obj;
    uint32_t b, r;
} minlsh__plan_best;

static void minlsh__plan_offer(minlsh__plan_best *best, double obj, uint32_t b,
                               uint32_t r) {
    if (best->b == 0 || obj < best->obj ||
        (obj == best->obj && (b < best->b || (b == best->b && r < best->r)))) {
        best->obj = obj;
        best->b = b;
        best->r = r;
    }
}

int minlsh_plan_compute(uint32_t *bands, uint32_t *rows,
                        double *fp_area, double *fn_area, const minlsh_plan_options *opts) {
    minlsh__plan_best best = {0.0, 0, 0};
    uint32_t k, r, b;
    double t;
    int rc;
    if (opts == NULL || bands == NULL || rows == NULL) return MINLSH_E_NULL;
    rc = minlsh__plan_check_options(opts);
    if (rc != 0) return rc;
    k = opts->k;
    t = opts->threshold;
    if (opts->mode == MINLSH_PLAN_RULE) {
        double best_d = 0.0;
        for (r = 1; r <= k; r++) {
            double d;
            b = k / r;
            d = fabs(pow(1.0 / (double)b, 1.0 / (double)r) - t);
            if (best.b == 0 || d < best_d) {
                best_d = d;
                best.b = b;
                best.r = r;
            }
        }
    } else {
        /* r outer, b inner: one recurrence walk per r covers every b. */
        for (r = 1; r <= k; r++) {
            minlsh__plan_walk w;
            minlsh__plan_walk_init(&w, r, t);
            for (b = 1; b <= k / r; b++) {
                minlsh__plan_walk_step(&w);
                if (opts->mode == MINLSH_PLAN_BALANCED)
                    minlsh__plan_offer(&best,
                                       opts->weight_fp * w.fp +
                                           opts->weight_fn * minlsh__plan_walk_fn(&w),
                                       b, r);
                else if (w.p >= opts->target_recall)
                    minlsh__plan_offer(&best, w.fp, b, r);
            }
        }
        if (best.b == 0) return MINLSH_E_PARAM; /* no (b, r) reaches the recall */
    }
    *bands = best.b;
    *rows = best.r;
    return fp_area != NULL || fn_area != NULL
               ? minlsh_plan_areas(fp_area, fn_area, best.b, best.r, t)
               : 0;
}
