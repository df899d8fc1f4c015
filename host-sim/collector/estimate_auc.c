/* SPDX-License-Identifier: Apache-2.0 */
/* Estimates of dpauc, ustat_bins and ustat_tree campaigns (JSON in estimate_json.h), from the
 * stored vector sums (agg_auc.h) through the estimators dpm-sim uses (host-sim/estimate/dpauc.h,
 * ustat.h), with the same choices as dpm-sim: ties count 1/2, the tree's threshold a chosen to
 * minimize Theorem 3's bound. */
#include "collector/estimate_auc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collector/estimate_ci.h"
#include "estimate/ci_flags.h"
#include "estimate/dpauc.h"
#include "estimate/ustat.h"

#define DIGITS 9
#define TIE_WEIGHT 0.5

static void num(jw_t *sb, const char *key, double x)
{
    jw_raw(sb, ", \"%s\": ", key);
    jw_num(sb, x, DIGITS); /* null when not finite */
}

static void reason(jw_t *sb, int defined, const char *why)
{
    jw_raw(sb, ", \"defined\": %s, \"reason\": ", defined ? "true" : "false");
    if (defined || why == NULL || why[0] == '\0') {
        jw_raw(sb, defined ? "null" : "\"undefined\"");
    } else {
        jw_str(sb, why);
    }
}

static void dpauc_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st)
{
    const dpm_dpauc_t *m = &c->mech.params.dpauc;
    double scale = (double)m->lap.scale_num / (double)m->lap.scale_den;
    jw_raw(sb, ", \"dpauc\": {\"thresholds\": %u, \"calibration\": \"%s\"", m->n,
           m->calibration == DPM_DPAUC_TIGHT ? "tight" : "published");
    num(sb, "noise_scale", scale);
    jw_raw(sb, ", \"n\": %llu", (unsigned long long)st->reports);
    dpm_dpauc_params_t p;
    dpm_dpauc_agg_t *a = calloc(1, sizeof(*a));
    dpm_dpauc_estimate_t *e = calloc(1, sizeof(*e));
    int ok = a != NULL && e != NULL && dpm_dpauc_params_init(&p, m->n, scale) == DPM_OK &&
             dpm_dpauc_agg_init(a, m->n) == DPM_OK;
    if (ok) {
        a->reports = st->reports;
        for (uint32_t i = 0; i < m->n; i++) {
            a->tp[i] = st->vec[i];
            a->fp[i] = st->vec[COLL_VEC_DPAUC_N + i];
            a->tn[i] = st->vec[2 * COLL_VEC_DPAUC_N + i];
            a->fn[i] = st->vec[3 * COLL_VEC_DPAUC_N + i];
        }
        jw_raw(sb, ", \"sums\": {\"tp\": [");
        for (uint32_t k = 0; k < 4; k++) {
            static const char *const NAME[4] = {"tp", "fp", "tn", "fn"};
            if (k > 0) {
                jw_raw(sb, "], \"%s\": [", NAME[k]);
            }
            for (uint32_t i = 0; i < m->n; i++) {
                jw_raw(sb, "%s%lld", i ? ", " : "", (long long)st->vec[k * COLL_VEC_DPAUC_N + i]);
            }
        }
        jw_raw(sb, "]}");
    }
    jw_raw(sb, ", \"variants\": {");
    for (int v = 0; v < 2; v++) {
        jw_raw(sb, "%s\"%s\": {", v ? ", " : "", v ? "B" : "A");
        int defined =
            ok &&
            dpm_dpauc_estimate(&p, a, v ? DPM_DPAUC_SERVER_B : DPM_DPAUC_SERVER_A, e) == DPM_OK &&
            e->defined && isfinite(e->auc);
        jw_raw(sb, "\"auc\": ");
        jw_num(sb, defined ? e->auc : NAN, DIGITS);
        jw_raw(sb, ", \"small_sample\": %s", ok && e->small_sample ? "true" : "false");
        if (defined) {
            jw_raw(sb, ", \"fpr\": ");
            jw_nums(sb, e->fpr, e->points, DIGITS);
            jw_raw(sb, ", \"tpr\": ");
            jw_nums(sb, e->tpr, e->points, DIGITS);
        }
        reason(sb, defined, !ok ? "out of memory" : st->reports == 0 ? "no reports" : e->reason);
        jw_raw(sb, "}");
    }
    jw_raw(sb, "}, \"ci\": null, \"reason\": \"no interval: the DPAUC baseline has no variance "
               "estimate (dpm-sim measures its error over runs)\"}");
    free(a);
    free(e);
}

static void ustat_est_json(jw_t *sb, const dpm_ustat_estimate_t *e, const char *what, int interval,
                           unsigned flags)
{
    num(sb, what, e->defined ? e->value : NAN);
    num(sb, "value_clipped", e->defined ? e->value_clipped : NAN);
    num(sb, "sd", e->defined ? e->sd : NAN);
    jw_raw(sb, ", \"ci\": ");
    if (e->defined && interval && isfinite(e->ci_lo) && isfinite(e->ci_hi)) {
        jw_raw(sb, "[");
        jw_num(sb, e->ci_lo, DIGITS);
        jw_raw(sb, ", ");
        jw_num(sb, e->ci_hi, DIGITS);
        jw_raw(sb, "]");
    } else {
        jw_raw(sb, "null");
    }
    coll_ci_json(sb, "ci", e->defined ? flags : DPM_CI_SMALL_N);
    num(sb, "n_pos", e->defined ? e->n_pos : NAN);
    num(sb, "n_neg", e->defined ? e->n_neg : NAN);
    jw_raw(sb, ", \"small_sample\": %s", e->small_sample ? "true" : "false");
}

static void bins_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                      double confidence)
{
    static const char *const KERNEL[] = {"auc", "auc_private_label", "kendall"};
    const dpm_ustat_bins_t *m = &c->mech.params.ustat_bins;
    jw_raw(sb, ", \"ustat_bins\": {\"kernel\": \"%s\", \"k\": %u, \"n\": %llu",
           KERNEL[m->kernel <= DPM_USTAT_KENDALL ? m->kernel : 0], m->k,
           (unsigned long long)st->reports);
    dpm_ustat_bins_params_t p;
    dpm_ustat_bins_agg_t *a = calloc(1, sizeof(*a));
    dpm_ustat_estimate_t e;
    memset(&e, 0, sizeof(e));
    const char *why = "out of memory";
    if (a != NULL &&
        dpm_ustat_bins_params_init(&p, m->kernel, m->k, m->grr.keep, m->grr.other) == DPM_OK &&
        dpm_ustat_bins_agg_init(a, p.domain) == DPM_OK) {
        for (uint32_t l = 0; l < 2; l++) {
            for (uint32_t v = 0; v < p.domain; v++) {
                int64_t x = st->vec[l * DPM_MAX_GRR_K + v];
                a->count[l][v] = x > 0 ? (uint64_t)x : 0;
                a->reports += a->count[l][v];
            }
        }
        why = dpm_ustat_bins_estimate(&p, a, TIE_WEIGHT, confidence, &e) == DPM_OK
                  ? e.reason
                  : "the estimator refused these sums";
    }
    const char *what = m->kernel == DPM_USTAT_KENDALL ? "tau" : "auc";
    jw_raw(sb, ", \"estimate\": \"%s\"", m->kernel == DPM_USTAT_KENDALL ? "kendall_tau_a" : "auc");
    ustat_est_json(sb, &e, what, 1, e.ci_flags);
    num(sb, "events", e.defined ? e.events : NAN);
    reason(sb, e.defined && isfinite(e.value), st->reports == 0 ? "no reports" : why);
    jw_raw(sb, "}");
    free(a);
}

static void tree_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                      double confidence)
{
    const dpm_ustat_tree_t *m = &c->mech.params.ustat_tree;
    jw_raw(sb, ", \"ustat_tree\": {\"depth\": %u, \"grr_levels\": %u, \"n\": %llu", m->depth,
           m->grr_levels, (unsigned long long)st->reports);
    dpm_ustat_tree_params_t p;
    dpm_ustat_tree_agg_t a;
    memset(&a, 0, sizeof(a));
    dpm_ustat_tree_estimate_t e;
    memset(&e, 0, sizeof(e));
    const char *why = "the collector's tree is smaller than this campaign's";
    if (m->depth <= COLL_TREE_MAX_DEPTH && dpm_ustat_tree_params_init(&p, m) == DPM_OK &&
        dpm_ustat_tree_agg_init(&a, &p) == DPM_OK) {
        for (uint32_t cls = 0; cls < 2; cls++) {
            for (uint32_t l = 1; l <= m->depth; l++) {
                int64_t r = st->vec[cls * COLL_VEC_TREE_LEVELS + l];
                a.level_reports[cls][l] = r > 0 ? (uint64_t)r : 0;
                a.reports[cls] += a.level_reports[cls][l];
                uint32_t base = (l <= m->grr_levels ? COLL_VEC_TREE_GRR : COLL_VEC_TREE_HAD) +
                                cls * COLL_VEC_TREE_NODES;
                for (uint32_t u = 0; u < (1u << l); u++) {
                    a.sums[cls][(1u << l) + u] = st->vec[base + (1u << l) + u];
                }
            }
        }
        dpm_ustat_tree_opts_t o = {DPM_USTAT_TREE_CHOOSE_A, 0.0, TIE_WEIGHT};
        why = dpm_ustat_tree_estimate(&p, &a, &o, &e) == DPM_OK
                  ? e.est.reason
                  : "the estimator refused these sums";
    }
    dpm_ustat_tree_agg_free(&a);
    /* Theorem 3 bounds the mean squared error: Chebyshev (Markov on the squared error) gives an
     * interval of at least `confidence`, value -+ sqrt(bound / (1 - confidence)). */
    int defined = e.est.defined && isfinite(e.est.value);
    double half = sqrt(e.mse_bound / (1.0 - confidence));
    e.est.ci_lo = e.est.value - half;
    e.est.ci_hi = e.est.value + half;
    jw_raw(sb, ", \"estimate\": \"auc\", \"ci_kind\": \"chebyshev_theorem3\"");
    ustat_est_json(sb, &e.est, "auc", e.mse_bound > 0.0,
                   DPM_CI_CONSERVATIVE | (e.est.small_sample ? DPM_CI_SMALL_N : 0u));
    num(sb, "a", defined ? e.a : NAN);
    num(sb, "mse_bound", defined ? e.mse_bound : NAN);
    reason(sb, defined, st->reports == 0 ? "no reports" : why);
    jw_raw(sb, "}");
}

void coll_estimate_auc_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                            double confidence)
{
    if (st->vec_len != COLL_VEC_LEN) {
        return;
    }
    switch (c->mech.campaign.mechanism) {
    case DPM_MECH_ID_DPAUC: dpauc_json(sb, c, st); break;
    case DPM_MECH_ID_USTAT_BINS: bins_json(sb, c, st, confidence); break;
    case DPM_MECH_ID_USTAT_TREE: tree_json(sb, c, st, confidence); break;
    default: break;
    }
}
