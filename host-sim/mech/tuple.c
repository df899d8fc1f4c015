/* SPDX-License-Identifier: Apache-2.0 */
/* tuple_mr and tuple_ml on the host (host_mech.h): per metric the disparity sums
 * (dpm_disp_agg_t), the estimate of every group's mean and every pair's disparity
 * (estimate/disparity.h, estimate/pairwise.h), and the estimator constants of the influence
 * bounds. Their reports are stored with their values in columns (HOST_MECH_TUPLE_VALUES). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/ci_flags.h"
#include "estimate/disparity.h"
#include "mech/base/est_json.h"
#include "mech/host_mech.h"
#include "mech/base/pairwise_json.h"

/* The standard deviation of the GRR group-size estimate n̂ = (n' - K q) / (a - q): n' is a sum
 * of Bernoulli draws, a for the group's n members and q for the K - n others, so
 * Var n̂ = (n a (1 - a) + (K - n) q (1 - q)) / (a - q)^2, with n = n̂ clipped to [0, K]. */
static double size_sd(const dpm_disp_params_t *p, double n_hat, double K)
{
    double n = coll_clip(n_hat, 0.0, K);
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

static void interval_clipped(jw_t *sb, double lo, double hi, double min, double max)
{
    coll_json_interval(sb, isfinite(lo) ? coll_clip(lo, min, max) : lo,
                       isfinite(hi) ? coll_clip(hi, min, max) : hi);
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
    jw_raw(sb, "{\"metric\": \"%s\", \"groups\": [", host_metric_name(metric));
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
        coll_json_num(sb, n_hat);
        jw_raw(sb, ", \"size_clipped\": ");
        coll_json_num(sb, have ? coll_clip(n_hat, 0.0, K) : NAN);
        jw_raw(sb, ", \"size_sd\": ");
        coll_json_num(sb, have ? size_sd(&c->disp, n_hat, K) : NAN);
        jw_raw(sb, ", \"mean\": ");
        coll_json_num(sb, mean);
        jw_raw(sb, ", \"mean_clipped\": ");
        coll_json_num(sb, isfinite(mean) ? coll_clip(mean, 0.0, 1.0) : NAN);
        jw_raw(sb, ", \"var\": ");
        coll_json_num(sb, var);
        jw_raw(sb, ", \"ci\": ");
        coll_json_interval(sb, mean - half, mean + half);
        jw_raw(sb, ", \"ci_clipped\": ");
        interval_clipped(sb, mean - half, mean + half, 0.0, 1.0);
        jw_raw(sb, ", \"ci95\": ");
        coll_json_interval(sb, mean - half95, mean + half95);
        in_g[g] = valid ? coll_bounds_mean_shift(&c->bounds, &c->disp, est.group[g].n, mean) : NAN;
        else_g[g] = valid ? coll_bounds_mean_shift_other(&c->disp, est.group[g].n, mean) : NAN;
        jw_raw(sb, ", \"max_shift_one_report\": ");
        coll_json_num(sb, fmax(in_g[g], else_g[g]));
        jw_raw(sb, ", \"too_small\": %s, \"events\": ", small[g] != NULL ? "true" : "false");
        coll_json_num(sb, events);
        coll_ci_json(sb, "ci", flags);
        coll_json_reason(sb,
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
            coll_json_num(sb, ok ? x->ci.est : NAN);
            jw_raw(sb, ", \"diff_clipped\": ");
            coll_json_num(sb, ok ? coll_clip(x->ci.est, -1.0, 1.0) : NAN);
            jw_raw(sb, ", \"var\": ");
            coll_json_num(sb, ok ? x->ci.var : NAN);
            jw_raw(sb, ", \"ci\": ");
            coll_json_interval(sb, ok ? x->ci.est - x->ci.half : NAN,
                               ok ? x->ci.est + x->ci.half : NAN);
            jw_raw(sb, ", \"ci_clipped\": ");
            interval_clipped(sb, ok ? x->ci.est - x->ci.half : NAN,
                             ok ? x->ci.est + x->ci.half : NAN, -1.0, 1.0);
            jw_raw(sb, ", \"ci95\": ");
            coll_json_interval(sb, ok ? x->ci.est - x->ci.half95 : NAN,
                               ok ? x->ci.est + x->ci.half95 : NAN);
            jw_raw(sb, ", \"max_shift_one_report\": ");
            coll_json_num(sb, ok ? t->shift[k] : NAN);
            jw_raw(sb, ", \"too_small\": %s, \"events\": ", tiny != NULL || !ok ? "true" : "false");
            coll_json_num(sb, x->ci.events);
            coll_ci_json(sb, "ci", x->ci.flags);
            coll_pairwise_pair_json(sb, have_pw ? &t->pw.pair[k] : NULL, &fam);
            coll_json_reason(sb, why != NULL ? why : tiny, nulls);
            jw_raw(sb, "}");
        }
    }
    jw_raw(sb, "]");
    coll_pairwise_json(sb, "largest_disparity", have_pw ? &t->pw : NULL,
                       have ? "the comparison failed" : "no reports", &fam);
    free(t);
    jw_raw(sb, "}");
}

static dpm_status_t params_init(coll_campaign_t *c)
{
    const dpm_tuple_t *t = &c->mech.params.tuple;
    if (t->kind == DPM_TUPLE_MR) {
        return dpm_disp_params_campaign_mr(&c->disp, t->groups, t->group_grr.keep,
                                           t->group_grr.other, t->value.rr.keep);
    }
    double scale = (double)t->value.lap.scale_num / (double)t->value.lap.scale_den;
    return dpm_disp_params_campaign_ml(&c->disp, t->groups, t->group_grr.keep, t->group_grr.other,
                                       scale, scale, t->frac_bits);
}

static int state_init(coll_campaign_state_t *st, const coll_campaign_t *c)
{
    st->nmetrics = c->mech.campaign.nmetrics;
    for (uint32_t m = 0; m < st->nmetrics; m++) {
        if (dpm_disp_agg_init(&st->agg[m], &c->disp) != DPM_OK) {
            return -1;
        }
    }
    return 0;
}

static uint32_t stored_group(const coll_campaign_t *c, const dpm_report_t *r)
{
    (void)c;
    return r->body.tuple.group;
}

/* A tuple report read back without its value columns: its values from the body. */
static int delta_add(coll_deltas_t *ds, const dpm_report_t *rep, uint32_t stored_group)
{
    (void)stored_group;
    const dpm_tuple_report_t *t = &rep->body.tuple;
    return coll_deltas_add_values(ds, rep->campaign_id, rep->period, t->group, t->nmetrics,
                                  t->value);
}

/* The estimator constants of the influence formulas (a, q, gain); tuple_ml's value range. */
static void bounds_json(jw_t *sb, const coll_campaign_t *c)
{
    jw_raw(sb, ", \"a\": %.17g, \"q\": %.17g, \"gain\": %.17g", c->disp.a, c->disp.q,
           c->disp.mech == DPM_DISP_MR ? c->disp.c : 1.0);
    if (c->mech.campaign.mechanism == DPM_MECH_ID_TUPLE_ML) {
        jw_raw(sb, ", \"value_max\": %lld", (long long)c->bounds.value_max);
    }
}

static void estimate_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                          const host_json_ctx_t *q)
{
    jw_raw(sb, ", \"metrics\": [");
    for (uint32_t m = 0; m < st->nmetrics; m++) {
        jw_raw(sb, "%s", m ? ", " : "");
        sb_metric(sb, c, &st->agg[m], c->mech.campaign.metrics[m], q->confidence);
    }
    jw_raw(sb, "]");
}

static const char *const kCompare[] = {"metrics.*.metric",
                                       "metrics.*.groups.*.reports",
                                       "metrics.*.groups.*.size",
                                       "metrics.*.groups.*.mean",
                                       "metrics.*.groups.*.var",
                                       "metrics.*.disparities.*.diff",
                                       NULL};

#define TUPLE_MODULE(NAME, ID, FRAC_BITS)                                                          \
    {                                                                                              \
        .name = (NAME), .id = (ID), .flags = HOST_MECH_TUPLE_VALUES,                               \
        .default_frac_bits = (FRAC_BITS), .trust_model = HOST_TRUST_LOCAL_DP,                      \
        .privacy_unit = "one device's whole (group, value) tuple (local DP)",                      \
        .params_init = params_init, .state_init = state_init, .stored_group = stored_group,        \
        .delta_add = delta_add, .bounds_json = bounds_json, .estimate_json = estimate_json,        \
        .compare = kCompare,                                                                       \
    }

const host_mech_t host_mech_tuple_mr = TUPLE_MODULE("tuple_mr", DPM_MECH_ID_TUPLE_MR, 0u);
/* tuple_ml's value grid F: DPM_FRAC_BITS, the only one */
const host_mech_t host_mech_tuple_ml =
    TUPLE_MODULE("tuple_ml", DPM_MECH_ID_TUPLE_ML, DPM_FRAC_BITS);
