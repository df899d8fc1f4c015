/* SPDX-License-Identifier: Apache-2.0 */
/* Estimate JSON (format in estimate_json.h), from a campaign's stored sums. */
#include "collector/api/estimate_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/api/estimate_auc.h"
#include "mech/estimate_ci.h"
#include "collector/api/estimate_pairwise.h"
#include "collector/api/estimate_rocg.h"
#include "mech/fedauc_sums.h"
#include "common/json_write.h"
#include "estimate/ci_flags.h"

#define DIGITS 9 /* significant digits of every number */

/* A number, or null when it is not finite (JSON has no NaN). */
static void sb_num(jw_t *sb, double x)
{
    jw_num(sb, x, DIGITS);
}

static void sb_reasons(jw_t *sb, const coll_reasons_t *rs)
{
    jw_raw(sb, "{");
    for (size_t i = 0; i < rs->n; i++) {
        jw_raw(sb, "%s", i ? ", " : "");
        jw_str(sb, rs->r[i].reason);
        jw_raw(sb, ": %llu", (unsigned long long)rs->r[i].count);
    }
    jw_raw(sb, "}");
}

static void sb_interval(jw_t *sb, double lo, double hi)
{
    jw_raw(sb, "[");
    sb_num(sb, lo);
    jw_raw(sb, ", ");
    sb_num(sb, hi);
    jw_raw(sb, "]");
}

static double clip(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Does the key of the value at offset i (`"key": value`) say the value may be null without a
 * reason of its own: an interval's "..._reason" (null: nothing to flag), an effective number
 * of events (null: infinite, no randomization event can matter) or an interpolation bound
 * (null: too few bins, which the interval's flags say)? */
static int null_is_expected(const jw_t *sb, size_t start, size_t i)
{
    static const char *const kOk[3] = {"_reason", "events", "_bound"};
    if (i < start + 4 || memcmp(sb->buf + i - 3, "\": ", 3) != 0) {
        return 0;
    }
    size_t end = i - 3, k = end; /* the key is buf[k + 1 .. end) */
    while (k > start && sb->buf[k - 1] != '"') {
        k--;
    }
    for (int j = 0; j < 3; j++) { /* a key that ends so */
        size_t n = strlen(kOk[j]);
        if (end - k >= n && memcmp(sb->buf + end - n, kOk[j], n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Was a null written since offset start (the estimate is written to a buffer)? */
static int null_since(const jw_t *sb, size_t start)
{
    for (size_t i = start; sb->buf != NULL && i + 4 <= sb->len; i++) {
        if (memcmp(sb->buf + i, "null", 4) == 0 && !null_is_expected(sb, start, i)) {
            return 1;
        }
    }
    return 0;
}

/* "reason": why or, when a number of this object (written since offset start) came out null
 * without one, a generic one. */
static void sb_reason(jw_t *sb, const char *why, size_t start)
{
    jw_raw(sb, ", \"reason\": ");
    if (why == NULL && null_since(sb, start)) {
        why = "a value is not finite (too few reports for this noise)";
    }
    if (why != NULL) {
        jw_str(sb, why);
    } else {
        jw_raw(sb, "null");
    }
}

/* The standard deviation of the GRR group-size estimate n̂ = (n' - K q) / (a - q): n' is a sum
 * of Bernoulli draws, a for the group's n members and q for the K - n others, so
 * Var n̂ = (n a (1 - a) + (K - n) q (1 - q)) / (a - q)^2, with n = n̂ clipped to [0, K]. */
static double size_sd(const dpm_disp_params_t *p, double n_hat, double K)
{
    double n = clip(n_hat, 0.0, K);
    return sqrt(n * p->a * (1.0 - p->a) + (K - n) * p->q * (1.0 - p->q)) / (p->a - p->q);
}

/* Why a group's estimate is too small to mean much, or NULL. */
static const char *group_too_small(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg,
                                   uint32_t g, double n_hat)
{
    if (agg->count[g] < COLL_EST_MIN_REPORTS) {
        return "fewer than 30 reports in the group";
    }
    if (!(n_hat > 0.0) || size_sd(p, n_hat, (double)agg->total) > COLL_EST_MAX_SIZE_CV * n_hat) {
        return "the estimated group size's relative standard error exceeds 0.2";
    }
    return NULL;
}

static void sb_interval_clipped(jw_t *sb, double lo, double hi, double min, double max)
{
    sb_interval(sb, isfinite(lo) ? clip(lo, min, max) : lo, isfinite(hi) ? clip(hi, min, max) : hi);
}

/* A disparity's pointwise intervals (estimate/disparity.h: dpm_disp_gap_ci), flagged small_n
 * where a group is too small for the collector (group_too_small). */
typedef struct {
    int ok; /* both groups have an estimate */
    dpm_disp_ci_t ci;
} pair_ci_t;

static void pair_ci(const dpm_disp_estimate_t *est, int have, uint32_t g, uint32_t h,
                    const char *tiny, double confidence, pair_ci_t *x)
{
    x->ok = have && dpm_disp_gap_ci(est, g, h, confidence, &x->ci) == DPM_OK;
    if (!x->ok) {
        x->ci.events = NAN;
        x->ci.flags = DPM_CI_SMALL_N;
    }
    x->ci.flags |= tiny != NULL ? DPM_CI_SMALL_N : 0u;
}

/* Every pair of one metric: the pointwise intervals, one report's bound, the comparison. */
typedef struct {
    dpm_pairwise_t pw;
    pair_ci_t ci[DPM_PAIRWISE_MAX_PAIRS];
    unsigned flags[DPM_PAIRWISE_MAX_PAIRS];
    double shift[DPM_PAIRWISE_MAX_PAIRS];
} tuple_pairs_t;

/* One metric: per-group means and every pairwise disparity, on the metric scale. */
static void sb_metric(jw_t *sb, const coll_campaign_t *c, const dpm_disp_agg_t *agg,
                      dpm_metric_t metric, double confidence)
{
    uint32_t d = c->mech.campaign.groups;
    dpm_disp_estimate_t est;
    double nu2[DPM_DISP_MAX_GROUPS];
    for (uint32_t g = 0; g < d; g++) {
        nu2[g] = DPM_DISP_NU2_PLUGIN;
    }
    double K = (double)agg->total;
    int have = agg->total > 0 && dpm_disp_estimate(&c->disp, agg, NULL, nu2, &est) == DPM_OK;
    const char *small[DPM_DISP_MAX_GROUPS];
    /* one report's largest move of each group's mean: landing in it, or elsewhere (bounds.h) */
    double in_g[DPM_DISP_MAX_GROUPS], else_g[DPM_DISP_MAX_GROUPS];
    jw_raw(sb, "{\"metric\": \"%s\", \"groups\": [", coll_metric_name(metric));
    for (uint32_t g = 0; g < d; g++) {
        size_t nulls = sb->len;
        int valid = have && est.group[g].valid;
        double n_hat = have ? est.group[g].n : NAN;
        small[g] = !have ? "no reports" : group_too_small(&c->disp, agg, g, n_hat);
        /* value scale v = 2 metric - 1 back to the metric: mean (m + 1) / 2, variance / 4 */
        dpm_disp_ci_t ci; /* the interval and its claim (ci_flags.h) */
        if (!valid || dpm_disp_mean_ci(&est, g, confidence, &ci) != DPM_OK) {
            ci.est = ci.var = ci.half = ci.half95 = ci.events = NAN;
            ci.flags = DPM_CI_SMALL_N;
        }
        double mean = ci.est, var = ci.var, half = ci.half, half95 = ci.half95;
        double events = ci.events;
        unsigned flags = ci.flags | (small[g] != NULL ? DPM_CI_SMALL_N : 0u);
        jw_raw(sb, "%s{\"group\": %u, \"reports\": %llu, \"n\": %llu, \"size\": ", g ? ", " : "", g,
               (unsigned long long)agg->count[g], (unsigned long long)agg->count[g]);
        sb_num(sb, n_hat);
        jw_raw(sb, ", \"size_clipped\": ");
        sb_num(sb, have ? clip(n_hat, 0.0, K) : NAN);
        jw_raw(sb, ", \"size_sd\": ");
        sb_num(sb, have ? size_sd(&c->disp, n_hat, K) : NAN);
        jw_raw(sb, ", \"mean\": ");
        sb_num(sb, mean);
        jw_raw(sb, ", \"mean_clipped\": ");
        sb_num(sb, isfinite(mean) ? clip(mean, 0.0, 1.0) : NAN);
        jw_raw(sb, ", \"var\": ");
        sb_num(sb, var);
        jw_raw(sb, ", \"ci\": ");
        sb_interval(sb, mean - half, mean + half);
        jw_raw(sb, ", \"ci_clipped\": ");
        sb_interval_clipped(sb, mean - half, mean + half, 0.0, 1.0);
        jw_raw(sb, ", \"ci95\": ");
        sb_interval(sb, mean - half95, mean + half95);
        in_g[g] = valid ? coll_bounds_mean_shift(&c->bounds, &c->disp, est.group[g].n, mean) : NAN;
        else_g[g] = valid ? coll_bounds_mean_shift_other(&c->disp, est.group[g].n, mean) : NAN;
        jw_raw(sb, ", \"max_shift_one_report\": ");
        sb_num(sb, fmax(in_g[g], else_g[g]));
        jw_raw(sb, ", \"too_small\": %s, \"events\": ", small[g] != NULL ? "true" : "false");
        sb_num(sb, events);
        coll_ci_json(sb, "ci", flags);
        sb_reason(sb,
                  !have    ? "no reports"
                  : !valid ? "the estimated group size is not positive: too few reports"
                           : small[g],
                  nulls);
        jw_raw(sb, "}");
    }
    jw_raw(sb, "], \"disparities\": [");
    tuple_pairs_t *t = calloc(1, sizeof(*t)); /* every pair at once (estimate/pairwise.h) */
    int have_pw = have && t != NULL && dpm_disp_pairwise(&est, confidence, &t->pw) == DPM_OK;
    if (t == NULL) {
        sb->err = 1; /* reported by jw_take */
        return;
    }
    int any_small = 0;
    for (uint32_t g = 0, k = 0; g < d; g++) {
        any_small |= small[g] != NULL;
        for (uint32_t h = g + 1; h < d; h++, k++) {
            pair_ci(&est, have, g, h, small[g] != NULL ? small[g] : small[h], confidence,
                    &t->ci[k]);
            t->flags[k] = t->ci[k].ci.flags;
            t->shift[k] = fmax(in_g[g] + else_g[h], else_g[g] + in_g[h]);
        }
    }
    const coll_pairwise_family_t fam =
        coll_pairwise_family(have_pw ? &t->pw : NULL, t->flags, t->shift, any_small, 0.5);
    for (uint32_t g = 0, k = 0; g < d; g++) {
        for (uint32_t h = g + 1; h < d; h++, k++) {
            size_t nulls = sb->len;
            const pair_ci_t *x = &t->ci[k];
            int ok = x->ok;
            const char *why = !have ? "no reports"
                              : !ok ? "a group's estimated size is not positive: too few reports"
                                    : NULL;
            const char *tiny = small[g] != NULL ? small[g] : small[h];
            jw_raw(sb, "%s{\"g\": %u, \"h\": %u, \"n\": %llu, \"diff\": ", k ? ", " : "", g, h,
                   (unsigned long long)agg->count[g] + (unsigned long long)agg->count[h]);
            sb_num(sb, ok ? x->ci.est : NAN);
            jw_raw(sb, ", \"diff_clipped\": ");
            sb_num(sb, ok ? clip(x->ci.est, -1.0, 1.0) : NAN);
            jw_raw(sb, ", \"var\": ");
            sb_num(sb, ok ? x->ci.var : NAN);
            jw_raw(sb, ", \"ci\": ");
            sb_interval(sb, ok ? x->ci.est - x->ci.half : NAN, ok ? x->ci.est + x->ci.half : NAN);
            jw_raw(sb, ", \"ci_clipped\": ");
            sb_interval_clipped(sb, ok ? x->ci.est - x->ci.half : NAN,
                                ok ? x->ci.est + x->ci.half : NAN, -1.0, 1.0);
            jw_raw(sb, ", \"ci95\": ");
            sb_interval(sb, ok ? x->ci.est - x->ci.half95 : NAN,
                        ok ? x->ci.est + x->ci.half95 : NAN);
            jw_raw(sb, ", \"max_shift_one_report\": ");
            sb_num(sb, ok ? t->shift[k] : NAN);
            jw_raw(sb, ", \"too_small\": %s, \"events\": ", tiny != NULL || !ok ? "true" : "false");
            sb_num(sb, x->ci.events);
            coll_ci_json(sb, "ci", x->ci.flags);
            coll_pairwise_pair_json(sb, have_pw ? &t->pw.pair[k] : NULL, &fam);
            sb_reason(sb, why != NULL ? why : tiny, nulls);
            jw_raw(sb, "}");
        }
    }
    jw_raw(sb, "]");
    coll_pairwise_json(sb, "largest_disparity", have_pw ? &t->pw : NULL,
                       have ? "the comparison failed" : "no reports", &fam);
    free(t);
    jw_raw(sb, "}");
}

static void sb_array(jw_t *sb, const char *key, const double *v, uint32_t n)
{
    jw_raw(sb, ", ");
    jw_key(sb, key);
    jw_nums(sb, v, n, DIGITS);
}

/* "report_bounds": what an accepted report can hold (bounds.h), and for tuple campaigns the
 * estimator constants of the influence formulas (a, q, gain). */
static void sb_bounds(jw_t *sb, const coll_campaign_t *c)
{
    const coll_bounds_t *b = &c->bounds;
    jw_raw(sb, ", \"report_bounds\": {\"honest_reject_log2\": ");
    sb_num(sb, b->fail_log2);
    if (!isfinite(b->fail_log2)) {
        jw_raw(sb, ", \"reason\": \"no check can reject an honest report of this "
                   "mechanism\"");
    }
    if (b->mech == DPM_MECH_ID_TUPLE_MR || b->mech == DPM_MECH_ID_TUPLE_ML) {
        jw_raw(sb, ", \"a\": %.17g, \"q\": %.17g, \"gain\": %.17g", c->disp.a, c->disp.q,
               c->disp.mech == DPM_DISP_MR ? c->disp.c : 1.0);
    }
    if (b->mech == DPM_MECH_ID_TUPLE_ML) {
        jw_raw(sb, ", \"value_max\": %lld", (long long)b->value_max);
    } else if (b->mech == DPM_MECH_ID_ROC_HIST) {
        jw_raw(sb,
               ", \"max_examples\": %u, \"cell\": [%lld, %lld], \"class_sum\": [%lld, %lld], "
               "\"total_sum\": [%lld, %lld], \"class_l1_max\": %lld",
               b->max_examples, (long long)b->cell_lo, (long long)b->cell_hi,
               (long long)b->class_lo, (long long)b->class_hi, (long long)b->total_lo,
               (long long)b->total_hi, (long long)b->class_l1_max);
    } else if (b->mech == DPM_MECH_ID_DPAUC) {
        jw_raw(sb, ", \"max_examples\": %u, \"count\": [%lld, %lld]", b->max_examples,
               (long long)b->cell_lo, (long long)b->cell_hi);
    } else if (b->mech == DPM_MECH_ID_FEDAUC_RR || b->mech == DPM_MECH_ID_FEDAUC_LAP) {
        /* the ranges depend on each upload's ranks (bounds.h): the rule, not numbers */
        jw_raw(sb, ", \"max_examples\": %u, \"ranges\": ", b->max_examples);
        jw_str(sb, b->mech == DPM_MECH_ID_FEDAUC_RR
                       ? "localP in [0, n], localSum2 between the sums of the localP smallest "
                         "and largest ranks sent"
                       : "localP in [-k_P, n + k_P], localSum2 in [-k_S, S + k_S] or T in "
                         "[-A - k_S, A + k_S], k for delta 2^-41 at the report's own scales");
    }
    /* exact sums: the largest amount one report adds to a stored sum, and how many reports of
     * one period the int64 sums hold (bounds.h) */
    jw_raw(sb, ", \"row_max\": %lld, \"sum_capacity_reports\": %llu}", (long long)b->row_max,
           (unsigned long long)b->sum_capacity);
}

/* roc_hist: "roc": the summed histograms and the estimate of host-sim/estimate/roc.h. */
static void sb_roc(jw_t *sb, const coll_campaign_t *c, const dpm_roc_agg_t *agg, double confidence)
{
    dpm_roc_estimate_t *e = malloc(sizeof(*e));
    uint32_t B = agg->bins;
    if (e == NULL || dpm_roc_estimate(&c->roc, agg, confidence, e) != DPM_OK) {
        free(e);
        sb->err = 1; /* reported by jw_take */
        return;
    }
    size_t nulls = sb->len;
    double edges[DPM_MAX_BINS];
    for (uint32_t b = 0; b < B; b++) {
        if (b + 1 < B) {
            edges[b] = c->mech.campaign.bin_edges[b] / 2147483648.0;
        }
    }
    jw_raw(sb, ", \"roc\": {\"bins\": %u", B);
    sb_array(sb, "edges", edges, B - 1);
    jw_raw(sb, ", \"noise_scale\": ");
    sb_num(sb, c->roc.scale);
    for (int k = 0; k < 2; k++) { /* exact integers (%.9g would round sums >= 1e9) */
        const int64_t *v = k ? agg->neg : agg->pos;
        jw_raw(sb, ", \"%s\": [", k ? "neg_sum" : "pos_sum");
        for (uint32_t b = 0; b < B; b++) {
            jw_raw(sb, "%s%lld", b ? ", " : "", (long long)v[b]);
        }
        jw_raw(sb, "]");
    }
    /* P and N are sums of B cells per report, each with noise variance s²: Var = n B s². */
    double sd_total = sqrt((double)agg->reports * (double)B * c->roc.noise_var);
    const char *small =
        agg->reports < COLL_EST_MIN_REPORTS ? "fewer than 30 reports"
        : !e->valid                         ? NULL
        : sd_total > COLL_EST_MAX_SIZE_CV * e->P || sd_total > COLL_EST_MAX_SIZE_CV * e->N
            ? "the estimated positives' or negatives' relative standard error "
              "exceeds 0.2"
            : NULL;
    jw_raw(sb, ", \"n\": %llu, \"too_small\": %s", (unsigned long long)agg->reports,
           small != NULL || !e->valid ? "true" : "false");
    jw_raw(sb, ", \"valid\": %s", e->valid ? "true" : "false");
    if (e->valid) {
        jw_raw(sb, ", \"projected\": %s, \"positives\": ", e->projected ? "true" : "false");
        sb_num(sb, e->P);
        jw_raw(sb, ", \"negatives\": ");
        sb_num(sb, e->N);
        jw_raw(sb, ", \"auc\": ");
        sb_num(sb, e->auc);
        jw_raw(sb, ", \"auc_unbiased\": ");
        sb_num(sb, e->auc_raw);
        jw_raw(sb, ", \"auc_clipped\": ");
        sb_num(sb, e->auc);
        jw_raw(sb, ", \"auc_var_noise\": ");
        sb_num(sb, e->var_noise);
        jw_raw(sb, ", \"auc_var_sampling\": ");
        sb_num(sb, e->var_sampling);
        jw_raw(sb, ", \"auc_ci\": ");
        sb_interval(sb, e->ci_lo, e->ci_hi);
        coll_ci_json(sb, "auc_ci", e->ci_flags);
        jw_raw(sb, ", \"auc_ci_total\": ");
        sb_interval(sb, e->ci_total_lo, e->ci_total_hi);
        coll_ci_json(sb, "auc_ci_total", e->ci_total_flags);
        jw_raw(sb, ", \"events\": ");
        sb_num(sb, e->events);
        jw_raw(sb, ", \"fieller_g\": ");
        sb_num(sb, e->fieller_g);
        jw_raw(sb, ", \"auc_unbinned\": "); /* within-bin pairs by linear densities (roc.h) */
        sb_num(sb, e->auc_unbinned);
        jw_raw(sb, ", \"auc_unbinned_raw\": ");
        sb_num(sb, e->auc_unbinned_raw);
        jw_raw(sb, ", \"auc_unbinned_var_noise\": ");
        sb_num(sb, e->unbinned_var_noise);
        jw_raw(sb, ", \"auc_unbinned_sd\": ");
        sb_num(sb, e->unbinned_sd);
        jw_raw(sb, ", \"auc_unbinned_var_within\": ");
        sb_num(sb, e->unbinned_var_within);
        jw_raw(sb, ", \"auc_unbinned_var_sampling\": ");
        sb_num(sb, e->unbinned_var_sampling);
        jw_raw(sb, ", \"auc_unbinned_bound\": ");
        sb_num(sb, e->unbinned_bound);
        jw_raw(sb, ", \"auc_unbinned_events\": ");
        sb_num(sb, e->unbinned_events);
        jw_raw(sb, ", \"auc_unbinned_ci\": ");
        sb_interval(sb, e->unbinned_ci_lo, e->unbinned_ci_hi);
        coll_ci_json(sb, "auc_unbinned_ci", e->unbinned_flags);
        jw_raw(sb, ", \"auc_unbinned_ci_total\": ");
        sb_interval(sb, e->unbinned_ci_total_lo, e->unbinned_ci_total_hi);
        coll_ci_json(sb, "auc_unbinned_ci_total", e->unbinned_total_flags);
        jw_raw(sb, ", \"max_auc_shift_one_report\": ");
        sb_num(sb, coll_bounds_auc_shift(&c->bounds, e->P, e->N));
        sb_array(sb, "fpr", e->fpr, B + 1);
        sb_array(sb, "tpr", e->tpr, B + 1);
        sb_array(sb, "tpr_lo", e->tpr_lo, B + 1);
        sb_array(sb, "tpr_hi", e->tpr_hi, B + 1);
        sb_array(sb, "tpr_lo_simultaneous", e->tpr_lo_sim, B + 1);
        sb_array(sb, "tpr_hi_simultaneous", e->tpr_hi_sim, B + 1);
        jw_raw(sb, ", \"tpr_band_events\": ");
        sb_num(sb, e->tpr_events_min);
        coll_ci_json(sb, "tpr_band", e->tpr_flags);
    }
    sb_reason(sb,
              agg->reports == 0 ? "no reports"
              : !e->valid       ? "the estimated positives or negatives are not positive: too "
                                  "few reports"
                                : small,
              nulls);
    jw_raw(sb, "}");
    free(e);
}

/* The period open at Unix time now (0 before the campaign's start or without one). */
uint32_t coll_period_now(const coll_campaign_t *c, int64_t now)
{
    int64_t len = (int64_t)c->mech.campaign.period_seconds;
    if (!c->opts.has_start || now < c->opts.start || len <= 0) {
        return 0;
    }
    int64_t p = (now - c->opts.start) / len;
    return p > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

int coll_estimate_json(const coll_campaigns_t *cs, int ci, const coll_estimate_query_t *q,
                       const coll_campaign_state_t *st, const coll_totals_t *totals, int64_t now,
                       char **out, size_t *len)
{
    if (ci < 0 || (size_t)ci >= cs->n) {
        return -1;
    }
    jw_t sb;
    jw_buffer(&sb);
    const coll_campaign_t *c = &cs->c[ci];
    const dpm_campaign_t *cp = &c->mech.campaign;
    jw_raw(&sb, "{\"campaign\": %u", cp->id);
    coll_names_json(&sb, &c->opts.names); /* "name", "group_names" (campaign_names.h) */
    jw_raw(&sb, ", \"mechanism\": \"%s\", \"eps\": ", coll_mechanism_name(cp->mechanism));
    sb_num(&sb, cp->eps.q16 / 65536.0);
    jw_raw(&sb, ", \"eps_implemented\": ");
    sb_num(&sb, c->mech.eps_implemented / 65536.0);
    jw_raw(&sb, ", \"groups\": %u, \"confidence\": %.9g, \"scale\": \"metric\", ",
           c->mech.campaign.groups, q->confidence);
    if (q->all) {
        jw_raw(&sb, "\"period_from\": null, \"period_to\": null");
    } else {
        jw_raw(&sb, "\"period_from\": %u, \"period_to\": %u", q->from, q->to);
    }
    jw_raw(&sb,
           ", \"period_now\": %u, \"period_seconds\": %u, \"reports\": %llu, \"n\": "
           "%llu, \"too_small_rule\": {\"min_reports\": %d, \"max_size_cv\": %.9g}, "
           "\"rejects\": ",
           coll_period_now(c, now), cp->period_seconds, (unsigned long long)st->reports,
           (unsigned long long)st->reports, COLL_EST_MIN_REPORTS, COLL_EST_MAX_SIZE_CV);
    sb_reasons(&sb, &st->rejects);
    jw_raw(&sb, ", \"rejects_unattributed\": ");
    sb_reasons(&sb, &totals->unattributed);
    jw_raw(&sb, ", \"lost_reports\": %llu", (unsigned long long)totals->lost_reports);
    sb_bounds(&sb, c);
    jw_raw(&sb, ", \"sums_overflow\": %s", st->sums_overflow ? "true" : "false");
    if (st->sums_overflow) { /* never within a campaign's capacity; no estimate from them */
        jw_raw(&sb, ", \"reason\": \"the stored sums of these periods leave 64-bit integers: ask "
                    "fewer periods\", \"metrics\": []}\n");
        *out = jw_take(&sb, len);
        return *out != NULL ? 0 : -1;
    }
    jw_raw(&sb, ", \"metrics\": [");
    for (uint32_t m = 0; m < st->nmetrics; m++) {
        jw_raw(&sb, "%s", m ? ", " : "");
        sb_metric(&sb, c, &st->agg[m], c->mech.campaign.metrics[m], q->confidence);
    }
    jw_raw(&sb, "]");
    if (coll_rocg_campaign(c)) { /* per-group roc_hist: pooled "roc", then "roc_groups" */
        dpm_roc_agg_t pooled;
        coll_rocg_pooled(c, st, &pooled);
        sb_roc(&sb, c, &pooled, q->confidence);
        coll_estimate_rocg_json(&sb, c, st, q->confidence);
    } else if (cp->mechanism == DPM_MECH_ID_ROC_HIST) {
        sb_roc(&sb, c, &st->roc, q->confidence);
    }
    coll_estimate_auc_json(&sb, c, st, q->confidence); /* dpauc, ustat_* (estimate_auc.h) */
    if (st->fa.on) {
        coll_fedauc_json(&sb, c, &st->fa, st->reports, &st->fa_phase, !q->all && q->from == q->to,
                         q->from, q->confidence);
    }
    jw_raw(&sb, "}\n");
    *out = jw_take(&sb, len);
    return *out != NULL ? 0 : -1;
}
