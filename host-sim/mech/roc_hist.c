/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist on the host (host_mech.h): the summed label histograms (dpm_roc_agg_t), the ROC
 * curve and AUC with their intervals (estimate/roc.h), the bounds on a report's cells. With
 * groups >= 2 a campaign is roc_hist_groups (roc_groups.c), which writes its pooled curve with
 * host_roc_json. */
#include "mech/roc_hist.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/ci_flags.h"
#include "estimate/pr_calibration.h"
#include "mech/base/est_json.h"

/* , "key": [lo, hi] and the interval's flags (coll_ci_json). */
static void interval_json(jw_t *sb, const char *key, double lo, double hi, unsigned flags)
{
    jw_raw(sb, ", \"%s\": ", key);
    coll_json_interval(sb, lo, hi);
    coll_ci_json(sb, key, flags);
}

/* A run of "key": number members of an estimate, in this order. */
typedef struct {
    const char *key;
    size_t at; /* offsetof a double of the estimate (dpm_roc_estimate_t, dpm_prc_estimate_t) */
} roc_member_t;

#define EST_MEMBER(type, key, field)                                                               \
    {                                                                                              \
        key, offsetof(type, field)                                                                 \
    }
#define ROC_MEMBER(key, field) EST_MEMBER(dpm_roc_estimate_t, key, field)
#define PRC_MEMBER(key, field) EST_MEMBER(dpm_prc_estimate_t, key, field)
#define NMEMBERS(m) (sizeof(m) / sizeof((m)[0]))
static const roc_member_t kAucMembers[] = {
    ROC_MEMBER("negatives", N),
    ROC_MEMBER("auc", auc),
    ROC_MEMBER("auc_unbiased", auc_raw),
    ROC_MEMBER("auc_clipped", auc),
    ROC_MEMBER("auc_var_noise", var_noise),
    ROC_MEMBER("auc_var_sampling", var_sampling),
};
/* within-bin pairs by linear densities (roc.h) */
static const roc_member_t kUnbinnedMembers[] = {
    ROC_MEMBER("events", events),
    ROC_MEMBER("fieller_g", fieller_g),
    ROC_MEMBER("auc_unbinned", auc_unbinned),
    ROC_MEMBER("auc_unbinned_raw", auc_unbinned_raw),
    ROC_MEMBER("auc_unbinned_var_noise", unbinned_var_noise),
    ROC_MEMBER("auc_unbinned_sd", unbinned_sd),
    ROC_MEMBER("auc_unbinned_var_within", unbinned_var_within),
    ROC_MEMBER("auc_unbinned_var_sampling", unbinned_var_sampling),
    ROC_MEMBER("auc_unbinned_bound", unbinned_bound),
    ROC_MEMBER("auc_unbinned_events", unbinned_events),
};

/* the precision-recall curve's summaries, then the calibration's */
static const roc_member_t kApMembers[] = {
    PRC_MEMBER("ap", ap),
    PRC_MEMBER("ap_unbiased", ap_raw),
    PRC_MEMBER("ap_var_noise", ap_var_noise),
    PRC_MEMBER("ap_var_sampling", ap_var_sampling),
    PRC_MEMBER("ap_fieller_g", ap_fieller_g),
};
static const roc_member_t kEceMembers[] = {
    PRC_MEMBER("ece", ece),
    PRC_MEMBER("ece_var_noise", ece_var_noise),
    PRC_MEMBER("ece_var_sampling", ece_var_sampling),
    PRC_MEMBER("ece_bound", ece_bound),
    PRC_MEMBER("ece_bound_total", ece_bound_total),
};

static void members_json(jw_t *sb, const void *e, const roc_member_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x;
        memcpy(&x, (const char *)e + m[i].at, sizeof(x));
        coll_json_member(sb, m[i].key, x);
    }
}

/* roc_hist: "roc": the summed histograms and the estimate e of host-sim/estimate/roc.h. */
static void roc_json(jw_t *sb, const coll_campaign_t *c, const dpm_roc_agg_t *agg,
                     const dpm_roc_estimate_t *e)
{
    uint32_t B = agg->bins;
    size_t nulls = sb->len;
    double edges[DPM_MAX_BINS];
    for (uint32_t b = 0; b < B; b++) {
        if (b + 1 < B) {
            edges[b] = c->mech.campaign.bin_edges[b] / 2147483648.0;
        }
    }
    jw_raw(sb, ", \"roc\": {\"bins\": %u", B);
    coll_json_array(sb, "edges", edges, B - 1);
    coll_json_member(sb, "noise_scale", c->roc.scale);
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
        coll_json_num(sb, e->P);
        members_json(sb, e, kAucMembers, NMEMBERS(kAucMembers));
        interval_json(sb, "auc_ci", e->ci_lo, e->ci_hi, e->ci_flags);
        interval_json(sb, "auc_ci_total", e->ci_total_lo, e->ci_total_hi, e->ci_total_flags);
        members_json(sb, e, kUnbinnedMembers, NMEMBERS(kUnbinnedMembers));
        interval_json(sb, "auc_unbinned_ci", e->unbinned_ci_lo, e->unbinned_ci_hi,
                      e->unbinned_flags);
        interval_json(sb, "auc_unbinned_ci_total", e->unbinned_ci_total_lo, e->unbinned_ci_total_hi,
                      e->unbinned_total_flags);
        coll_json_member(sb, "max_auc_shift_one_report",
                         coll_bounds_auc_shift(&c->bounds, e->P, e->N));
        coll_json_array(sb, "fpr", e->fpr, B + 1);
        coll_json_array(sb, "tpr", e->tpr, B + 1);
        coll_json_array(sb, "tpr_lo", e->tpr_lo, B + 1);
        coll_json_array(sb, "tpr_hi", e->tpr_hi, B + 1);
        coll_json_array(sb, "tpr_lo_simultaneous", e->tpr_lo_sim, B + 1);
        coll_json_array(sb, "tpr_hi_simultaneous", e->tpr_hi_sim, B + 1);
        coll_json_member(sb, "tpr_band_events", e->tpr_events_min);
        coll_ci_json(sb, "tpr_band", e->tpr_flags);
    }
    coll_json_reason(sb,
                     agg->reports == 0 ? "no reports"
                     : !e->valid ? "the estimated positives or negatives are not positive: too "
                                   "few reports"
                                 : small,
                     nulls);
    jw_raw(sb, "}");
}

/* , "key": ["nominal", "none", ...]: the coverage claim of each of n pointwise intervals */
static void coverage_array(jw_t *sb, const char *key, const unsigned *flags, uint32_t n)
{
    jw_raw(sb, ", \"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) {
        jw_raw(sb, "%s\"%s\"", i ? ", " : "", dpm_ci_coverage(flags[i]));
    }
    jw_raw(sb, "]");
}

/* , "x": [...], "y": [...], "y_lo", "y_hi" (its pointwise intervals) and "y_coverage" */
static void curve_json(jw_t *sb, const char *x, const double *xv, const char *y, const double *yv,
                       const double *lo, const double *hi, const unsigned *flags, uint32_t n)
{
    char key[64];
    coll_json_array(sb, x, xv, n);
    coll_json_array(sb, y, yv, n);
    snprintf(key, sizeof(key), "%s_lo", y);
    coll_json_array(sb, key, lo, n);
    snprintf(key, sizeof(key), "%s_hi", y);
    coll_json_array(sb, key, hi, n);
    snprintf(key, sizeof(key), "%s_coverage", y);
    coverage_array(sb, key, flags, n);
}

/* "pr" and "calibration": the precision-recall curve, AP, the reliability diagram and ECE of
 * the same sums (e: estimate/pr_calibration.h). */
static void prc_json(jw_t *sb, const dpm_roc_agg_t *agg, const dpm_prc_estimate_t *e)
{
    uint32_t B = agg->bins;
    const char *invalid = agg->reports == 0 ? "no reports"
                          : !e->valid       ? "the estimated positives or negatives are not "
                                              "positive: too few reports"
                                            : NULL;
    size_t nulls = sb->len;
    jw_raw(sb, ", \"pr\": {\"thresholds\": %u", B);
    if (e->valid) {
        curve_json(sb, "recall", e->recall, "precision", e->precision, e->precision_lo,
                   e->precision_hi, e->precision_flags, B);
        members_json(sb, e, kApMembers, NMEMBERS(kApMembers));
        interval_json(sb, "ap_ci", e->ap_ci_lo, e->ap_ci_hi, e->ap_flags);
        interval_json(sb, "ap_ci_total", e->ap_ci_total_lo, e->ap_ci_total_hi, e->ap_total_flags);
    }
    coll_json_reason(sb,
                     invalid != NULL ? invalid
                     : isnan(e->precision[B - 1])
                         ? "precision is null where the noised count of examples at or above "
                           "the threshold is not positive (too few examples score that high)"
                         : NULL,
                     nulls);
    nulls = sb->len;
    jw_raw(sb, "}, \"calibration\": {\"bins\": %u", B);
    if (e->valid) {
        curve_json(sb, "midpoint", e->midpoint, "rate", e->rate, e->rate_lo, e->rate_hi,
                   e->rate_flags, B);
        members_json(sb, e, kEceMembers, NMEMBERS(kEceMembers));
        interval_json(sb, "ece_ci", e->ece_ci_lo, e->ece_ci_hi, e->ece_flags);
        interval_json(sb, "ece_ci_total", e->ece_ci_total_lo, e->ece_ci_total_hi,
                      e->ece_total_flags);
    }
    int empty_bin = 0;
    for (uint32_t b = 0; e->valid && b < B; b++) {
        empty_bin |= isnan(e->rate[b]);
    }
    coll_json_reason(sb,
                     invalid != NULL ? invalid
                     : empty_bin     ? "a bin's rate is null where its noised count of examples "
                                       "is not positive"
                                     : NULL,
                     nulls);
    jw_raw(sb, "}");
}

void host_roc_json(jw_t *sb, const coll_campaign_t *c, const dpm_roc_agg_t *agg, double confidence)
{
    struct {
        dpm_roc_estimate_t roc;
        dpm_prc_estimate_t prc;
    } *e = malloc(sizeof(*e));
    if (e == NULL || dpm_roc_estimate(&c->roc, agg, confidence, &e->roc) != DPM_OK ||
        dpm_prc_estimate(&c->roc, agg, confidence, &e->prc) != DPM_OK) {
        free(e);
        sb->err = 1; /* reported by jw_take */
        return;
    }
    roc_json(sb, c, agg, &e->roc);
    prc_json(sb, agg, &e->prc);
    free(e);
}

dpm_status_t host_roc_params_init(coll_campaign_t *c)
{
    const dpm_laplace_t *lap = &c->mech.params.roc_hist.lap;
    dpm_status_t st = dpm_roc_params_init(&c->roc, c->mech.params.roc_hist.bins.count,
                                          (double)lap->scale_num / (double)lap->scale_den);
    if (st == DPM_OK) { /* the bin widths of auc_unbinned */
        st = dpm_roc_params_set_edges(&c->roc, c->mech.campaign.bin_edges, c->mech.campaign.nbins);
    }
    return st;
}

static int state_init(coll_campaign_state_t *st, const coll_campaign_t *c)
{
    return dpm_roc_agg_init(&st->roc, c->mech.params.roc_hist.bins.count) == DPM_OK ? 0 : -1;
}

static int delta_add(coll_deltas_t *ds, const dpm_report_t *rep, uint32_t stored_group)
{
    (void)stored_group;
    uint32_t bins = rep->body.roc_hist.bins;
    coll_delta_t *d =
        bins <= DPM_MAX_BINS ? coll_delta_for(ds, rep->campaign_id, rep->period, 1, bins) : NULL;
    if (d == NULL) {
        return -1;
    }
    int64_t pos[DPM_MAX_BINS], neg[DPM_MAX_BINS]; /* all of the report or nothing */
    memcpy(pos, d->pos, bins * sizeof(int64_t));
    memcpy(neg, d->neg, bins * sizeof(int64_t));
    for (uint32_t b = 0; b < bins; b++) {
        if (coll_add_i64(&pos[b], rep->body.roc_hist.pos[b]) != 0 ||
            coll_add_i64(&neg[b], rep->body.roc_hist.neg[b]) != 0) {
            return -1;
        }
    }
    memcpy(d->pos, pos, bins * sizeof(int64_t));
    memcpy(d->neg, neg, bins * sizeof(int64_t));
    d->reports++;
    return 0;
}

void host_roc_bounds_json(jw_t *sb, const coll_campaign_t *c)
{
    const coll_bounds_t *b = &c->bounds;
    jw_raw(sb,
           ", \"max_examples\": %u, \"cell\": [%lld, %lld], \"class_sum\": [%lld, %lld], "
           "\"total_sum\": [%lld, %lld], \"class_l1_max\": %lld",
           b->max_examples, (long long)b->cell_lo, (long long)b->cell_hi, (long long)b->class_lo,
           (long long)b->class_hi, (long long)b->total_lo, (long long)b->total_hi,
           (long long)b->class_l1_max);
}

static void estimate_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                          const host_json_ctx_t *q)
{
    host_no_metrics_json(sb);
    host_roc_json(sb, c, &st->roc, q->confidence);
}

const char *const host_roc_compare[] = {"roc.n",   "roc.pos_sum",      "roc.neg_sum", "roc.auc",
                                        "roc.tpr", "roc.auc_unbinned", NULL};

const host_mech_t host_mech_roc_hist = {
    .name = "roc_hist",
    .id = DPM_MECH_ID_ROC_HIST,
    .flags = HOST_MECH_BINS | HOST_MECH_MAX_EXAMPLES,
    .trust_model = HOST_TRUST_LOCAL_DP,
    .privacy_unit = "one example's label (label-DP)",
    .params_init = host_roc_params_init,
    .state_init = state_init,
    .delta_add = delta_add,
    .bounds_json = host_roc_bounds_json,
    .estimate_json = estimate_json,
    .compare = host_roc_compare,
};
