/*
 * Fuzz target: the parameter checks. Every constructor and pure function
 * that takes numbers is called with arbitrary values (and option structs
 * with arbitrary versions and fields, NaNs and infinities included); the
 * status must be exactly what a naive restatement of the documented rules
 * predicts, and successful results must satisfy their documented
 * properties (planner choices feasible and, for small k, optimal by brute
 * force; probabilities and areas in range; sorted-array Jaccard exact).
 */
#include "fuzz.h"
#include "../tests/testalloc.h"

#include <math.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF /* compare objectives with the library's roundings */
#endif

static void shingler_params(fuzz_in *in) {
    minlsh_shingler_options o;
    minlsh_shingler *sh = NULL;
    testalloc ta;
    minlsh_allocator al = ta_allocator(&ta);
    uint8_t sel = fuzz_u8(in), key[16] = {0};
    size_t got;
    int rc, want;
    uint32_t v = fuzz_u32(in);
    rc = minlsh_shingler_options_init(&o, v);
    /* versions 1 and 2: one layout, two sets of defaults */
    FUZZ_CHECK(rc == (v >= 1 && v <= MINLSH_SHINGLER_OPTIONS_VERSION ? 0 : MINLSH_E_VERSION));
    FUZZ_CHECK(rc != 0 || o.flags == (v == 1 ? 0 : MINLSH_NORM_CJK_WORDS));
    FUZZ_OK(minlsh_shingler_options_init(&o, MINLSH_SHINGLER_OPTIONS_VERSION));
    if (sel & 1) o.version = fuzz_u32(in);
    o.unit = (sel & 2) ? fuzz_u32(in) : fuzz_range(in, 0, 5);
    o.k = (sel & 4) ? fuzz_u32(in) : fuzz_range(in, 0, 66);
    o.flags = (sel & 8) ? fuzz_u32(in) : fuzz_u8(in) & 0x1F;
    o.max_document_bytes = fuzz_u64(in);
    if (sel & 16) o.key = key;
    if (sel & 32) {
        o.stopwords = (const char *)fuzz_bytes(in, fuzz_u8(in) % 48, &got);
        o.stopwords_len = got;
    }
    if (sel & 64) {
        al.alloc = (sel & 128) ? NULL : ta_alloc;
        al.free = (sel & 128) ? ta_free : NULL;
    }
    if (o.version < 1 || o.version > MINLSH_SHINGLER_OPTIONS_VERSION) want = MINLSH_E_VERSION;
    else if (o.unit < MINLSH_UNIT_BYTE || o.unit > MINLSH_UNIT_STOPWORD || o.k < 1 ||
             o.k > MINLSH_SHINGLE_K_MAX ||
             (o.flags & ~(MINLSH_NORM_ALL | MINLSH_NORM_UNICODE)) != 0)
        want = MINLSH_E_PARAM;
    else if (al.alloc == NULL || al.free == NULL) want = MINLSH_E_PARAM;
    else want = 0;
    rc = minlsh_shingler_new(&sh, &o, &al);
    if (want == 0 && rc == MINLSH_E_PARAM) {
        FUZZ_CHECK(o.stopwords != NULL); /* a list with no usable word */
    } else {
        FUZZ_CHECK(rc == want);
    }
    FUZZ_CHECK((rc == 0) == (sh != NULL));
    if (sh != NULL) {
        uint64_t id = 0;
        uint32_t flags = o.flags; /* a Unicode flag brings its ASCII counterpart */
        if (flags & MINLSH_NORM_UCASEFOLD) flags |= MINLSH_NORM_CASEFOLD;
        if (flags & MINLSH_NORM_UPUNCT) flags |= MINLSH_NORM_PUNCT;
        if (flags & MINLSH_NORM_UWHITESPACE) flags |= MINLSH_NORM_WHITESPACE;
        /* alone, it would change nothing on bytes and code points */
        if (o.unit <= MINLSH_UNIT_CODEPOINT &&
            (flags & MINLSH_NORM_UNICODE) == MINLSH_NORM_CJK_WORDS)
            flags &= ~(uint32_t)MINLSH_NORM_CJK_WORDS;
        FUZZ_CHECK(minlsh_shingler_unit(sh) == o.unit && minlsh_shingler_k(sh) == o.k &&
                   minlsh_shingler_flags(sh) == flags);
        FUZZ_OK(minlsh_shingler_config_id(&id, sh));
        FUZZ_OK(minlsh_shingler_hash(sh, "x", 1, NULL, NULL)); /* any limit allows 1 byte */
    }
    minlsh_shingler_free(sh);
    FUZZ_CHECK(ta_blocks(&ta) == 0 && ta_bad_frees(&ta) == 0);
}

static void family_index_params(fuzz_in *in) {
    uint32_t k = fuzz_u8(in) & 1 ? fuzz_u32(in) : fuzz_range(in, 0, 1100);
    uint32_t b = fuzz_u8(in) & 1 ? fuzz_u32(in) : fuzz_range(in, 0, 40);
    uint32_t r = fuzz_u8(in) & 1 ? fuzz_u32(in) : fuzz_range(in, 0, 40);
    minlsh_family *fam = NULL;
    minlsh_index *ix = NULL;
    minlsh_sigmatrix *m = NULL;
    int rc = minlsh_family_new(&fam, k, fuzz_u64(in), NULL);
    FUZZ_CHECK(rc == (k >= 1 && k <= MINLSH_FAMILY_K_MAX ? 0 : MINLSH_E_PARAM));
    if (rc != 0) {
        FUZZ_CHECK(fam == NULL);
        return;
    }
    FUZZ_CHECK(minlsh_family_k(fam) == k);
    rc = minlsh_index_new(&ix, fam, 0, b, r, NULL);
    FUZZ_CHECK(rc == (b >= 1 && r >= 1 && (uint64_t)b * r <= k ? 0 : MINLSH_E_PARAM));
    FUZZ_CHECK((rc == 0) == (ix != NULL));
    {
        /* Band keys of an arbitrary signature with arbitrary (b, r, cap). */
        static uint32_t sig[MINLSH_FAMILY_K_MAX];
        uint64_t keys[64];
        size_t cap = fuzz_u8(in) % 65, n = 0;
        int want = (b == 0 || r == 0 || (uint64_t)b * r > k) ? MINLSH_E_PARAM
                   : cap < b                                   ? MINLSH_E_BUFSIZE
                                                               : 0;
        rc = minlsh_band_keys(sig, k, b, r, keys, cap, &n);
        FUZZ_CHECK(rc == want);
        if (rc == 0 || rc == MINLSH_E_BUFSIZE) FUZZ_CHECK(n == b);
    }
    if (ix != NULL) {
        static uint32_t sig[MINLSH_FAMILY_K_MAX + 1];
        size_t ks = fuzz_range(in, 0, MINLSH_FAMILY_K_MAX + 1);
        rc = minlsh_index_insert(ix, 1, sig, ks);
        FUZZ_CHECK(rc == (ks == k ? 0 : MINLSH_E_PARAM));
        FUZZ_CHECK(minlsh_index_count(ix) == (ks == k));
    }
    FUZZ_OK(minlsh_sigmatrix_new(&m, fam, 0, NULL));
    {
        static uint32_t sig[MINLSH_FAMILY_K_MAX + 1];
        size_t ks = fuzz_range(in, 0, MINLSH_FAMILY_K_MAX + 1);
        FUZZ_CHECK(minlsh_sigmatrix_append(m, sig, ks, NULL) == (ks == k ? 0 : MINLSH_E_PARAM));
        /* Metadata over 2^32 - 1 bytes is refused before it is read. */
        if (sizeof(size_t) > 4)
            FUZZ_CHECK(minlsh_sigmatrix_set_metadata(m, sig, (size_t)UINT32_MAX + 1) ==
                       MINLSH_E_TOOBIG);
    }
    minlsh_sigmatrix_free(m);
    minlsh_index_free(ix);
    minlsh_family_free(fam);
}

static int open_unit(double x) { return x > 0.0 && x < 1.0; }

static double pick_double(fuzz_in *in) {
    static const double special[] = {0.0, 1.0, -0.0, 0.5, 0.8, 0.99, 1e-300, 1e308};
    uint8_t s = fuzz_u8(in);
    if (s < 64) return fuzz_double(in);
    if (s < 96) return special[s % 8];
    if (s == 96) return NAN;
    if (s == 97) return INFINITY;
    return (double)(s - 98) / 157.0;
}

static void plan_params(fuzz_in *in) {
    minlsh_plan_options o;
    uint32_t b = 0, r = 0, v;
    double fp = -1, fn = -1, p, t;
    int rc, want;
    v = fuzz_u32(in);
    FUZZ_CHECK(minlsh_plan_options_init(&o, v) ==
               (v == MINLSH_PLAN_OPTIONS_VERSION ? 0 : MINLSH_E_VERSION));
    FUZZ_OK(minlsh_plan_options_init(&o, MINLSH_PLAN_OPTIONS_VERSION));
    if (fuzz_u8(in) == 0) o.version = fuzz_u32(in);
    o.mode = fuzz_range(in, 0, 4);
    o.k = fuzz_u8(in) & 1 ? fuzz_range(in, 0, 1030) : fuzz_range(in, 1, 24);
    o.reserved = fuzz_u8(in) == 0 ? 1 : 0;
    o.threshold = pick_double(in);
    o.weight_fp = pick_double(in);
    o.weight_fn = pick_double(in);
    o.target_recall = pick_double(in);
    if (o.version != MINLSH_PLAN_OPTIONS_VERSION) want = MINLSH_E_VERSION;
    else if (o.mode < 1 || o.mode > 3 || o.k < 1 || o.k > MINLSH_FAMILY_K_MAX ||
             o.reserved != 0 || !open_unit(o.threshold) || !(o.weight_fp >= 0) ||
             !isfinite(o.weight_fp) || !(o.weight_fn >= 0) || !isfinite(o.weight_fn) ||
             (o.weight_fp == 0 && o.weight_fn == 0) || !open_unit(o.target_recall))
        want = MINLSH_E_PARAM;
    else want = 0;
    rc = minlsh_plan_compute(&b, &r, &fp, &fn, &o);
    if (want == 0 && o.mode == MINLSH_PLAN_RECALL && rc == MINLSH_E_PARAM) {
        /* No (b, r) reaches the recall: check that for small k. */
        uint32_t bb, rr;
        if (o.k <= 24)
            for (rr = 1; rr <= o.k; rr++)
                for (bb = 1; bb <= o.k / rr; bb++) {
                    FUZZ_OK(minlsh_plan_probability(&p, bb, rr, o.threshold));
                    FUZZ_CHECK(!(p >= o.target_recall));
                }
        return;
    }
    FUZZ_CHECK(rc == want);
    if (rc != 0) return;
    FUZZ_CHECK(b >= 1 && r >= 1 && (uint64_t)b * r <= o.k);
    FUZZ_CHECK(fp >= 0.0 && fp <= o.threshold + 1e-12);
    FUZZ_CHECK(fn >= 0.0 && fn <= 1.0 - o.threshold + 1e-12);
    {
        uint32_t b2 = 0, r2 = 0;
        FUZZ_OK(minlsh_plan_compute(&b2, &r2, NULL, NULL, &o));
        FUZZ_CHECK(b2 == b && r2 == r); /* deterministic */
    }
    if (o.mode == MINLSH_PLAN_RECALL) {
        FUZZ_OK(minlsh_plan_probability(&p, b, r, o.threshold));
        FUZZ_CHECK(p >= o.target_recall);
    }
    if (o.mode != MINLSH_PLAN_RULE && o.k <= 24) {
        /* Optimal among every feasible (b, r), by brute force. */
        uint32_t bb, rr;
        double best = o.mode == MINLSH_PLAN_BALANCED ? o.weight_fp * fp + o.weight_fn * fn : fp;
        for (rr = 1; rr <= o.k; rr++)
            for (bb = 1; bb <= o.k / rr; bb++) {
                double f1, f2, obj;
                FUZZ_OK(minlsh_plan_areas(&f1, &f2, bb, rr, o.threshold));
                if (o.mode == MINLSH_PLAN_RECALL) {
                    FUZZ_OK(minlsh_plan_probability(&p, bb, rr, o.threshold));
                    if (!(p >= o.target_recall)) continue;
                    obj = f1;
                } else {
                    obj = o.weight_fp * f1 + o.weight_fn * f2;
                }
                FUZZ_CHECK(!(obj < best));
            }
    }
    /* The S-curve at arbitrary points and (b, r). */
    b = fuzz_range(in, 0, 70);
    r = fuzz_range(in, 0, 70);
    t = pick_double(in);
    rc = minlsh_plan_probability(&p, b, r, t);
    want = (b == 0 || r == 0 || b * r > MINLSH_FAMILY_K_MAX) ? MINLSH_E_PARAM
           : !(t >= 0.0 && t <= 1.0)                          ? MINLSH_E_PARAM
                                                              : 0;
    FUZZ_CHECK(rc == want);
    if (rc == 0) {
        double p0, p1;
        FUZZ_CHECK(p >= 0.0 && p <= 1.0);
        FUZZ_OK(minlsh_plan_probability(&p0, b, r, 0.0));
        FUZZ_OK(minlsh_plan_probability(&p1, b, r, 1.0));
        FUZZ_CHECK(p0 == 0.0 && p1 == 1.0 && p0 <= p && p <= p1);
    }
    rc = minlsh_plan_areas(&fp, &fn, b, r, t);
    FUZZ_CHECK(rc == (want == 0 && open_unit(t) ? 0 : MINLSH_E_PARAM));
    if (rc == 0) FUZZ_CHECK(fp >= 0 && fp <= t + 1e-12 && fn >= 0 && fn <= 1 - t + 1e-12);
    rc = minlsh_plan_threshold(&p, b, r);
    FUZZ_CHECK(rc == (b == 0 || r == 0 || b * r > MINLSH_FAMILY_K_MAX ? MINLSH_E_PARAM : 0));
    if (rc == 0) FUZZ_CHECK(p > 0.0 && p <= 1.0);
}

static void misc_params(fuzz_in *in) {
    uint64_t a[16], bv[16];
    size_t na = fuzz_u8(in) % 17, nb = fuzz_u8(in) % 17, i, j, inter = 0;
    int sorted = 1, code = (int)fuzz_u32(in);
    double j1 = -1;
    int rc;
    FUZZ_CHECK(minlsh_strerror(code) != NULL && minlsh_error_name(code) != NULL);
    for (i = 0; i < na; i++) a[i] = fuzz_u8(in) % 24;
    for (i = 0; i < nb; i++) bv[i] = fuzz_u8(in) % 24;
    for (i = 1; i < na; i++) sorted &= a[i - 1] < a[i];
    for (i = 1; i < nb; i++) sorted &= bv[i - 1] < bv[i];
    rc = minlsh_jaccard_sorted(&j1, a, na, bv, nb);
    FUZZ_CHECK(rc == (sorted ? 0 : MINLSH_E_PARAM));
    if (rc == 0) {
        for (i = 0; i < na; i++)
            for (j = 0; j < nb; j++) inter += a[i] == bv[j];
        if (na + nb == 0) FUZZ_CHECK(j1 == 0.0);
        else FUZZ_CHECK(j1 == (double)inter / (double)(na + nb - inter));
    }
    FUZZ_CHECK(minlsh_signature_estimate(&j1, (const uint32_t *)a, (const uint32_t *)bv, 0) ==
               MINLSH_E_PARAM);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    while (in.n > 0) {
        switch (fuzz_u8(&in) % 4) {
        case 0: shingler_params(&in); break;
        case 1: family_index_params(&in); break;
        case 2: plan_params(&in); break;
        default: misc_params(&in); break;
        }
    }
    return 0;
}
