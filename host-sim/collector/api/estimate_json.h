/* SPDX-License-Identifier: Apache-2.0 */
/* GET /v1/campaigns/{id}/estimate[?period=P | ?from=A&to=B][&confidence=C]: a campaign's
 * estimates as JSON, computed from the stored sums of the periods asked for (all of them by
 * default). The README ("Estimates") documents every member; in short:
 *
 *   {"campaign": 1, "name": "...", "group_names": [...] (only when the campaigns file names
 *    them: campaign_names.h), "mechanism": "tuple_mr", "eps": 1, "eps_implemented": 0.99998,
 *    "groups": 4, "confidence": 0.95, "scale": "metric",
 *    "period_from": null | A, "period_to": null | B, "period_now": P (the period open now),
 *    "reports": 123456, "n": 123456,                     stored reports in those periods
 *    "too_small_rule": {"min_reports": 30, "max_size_cv": 0.2},
 *    "rejects": {...}, "rejects_unattributed": {...}, "lost_reports": 0,   (all periods)
 *    "report_bounds": {...},                                               bounds.h
 *    "metrics": [{"metric": "tpr",
 *      "groups": [{"group": 0, "reports": n', "n": n', "size": n̂, "size_clipped": ...,
 *                  "size_sd": ..., "mean": m, "mean_clipped": ..., "var": v,
 *                  "ci": [lo, hi], "ci_clipped": [..], "ci95": [..],
 *                  "too_small": false, "reason": null, "max_shift_one_report": s,
 *                  "events", "ci_coverage", "ci_flags", "ci_reason"}, ...],
 *      "disparities": [{"g": 0, "h": 1, "n": ..., "diff": m0 - m1, "diff_clipped": ...,
 *                       "var": v, "ci": [..], "ci_clipped": [..], "ci95": [..],
 *                       "max_shift_one_report": s, "too_small": false, "events",
 *                       "ci_coverage", "ci_flags", "ci_reason",
 *                       "ci_simultaneous": [..], "ci_simultaneous_coverage",
 *                       "ci_simultaneous_flags", "ci_simultaneous_reason",
 *                       "distinguishable": false, "largest_share": s, "reason": null}, ...],
 *      "simultaneous": {"confidence", "method", "critical_value", ...},
 *      "largest_disparity": {"g", "h", "abs_diff", "ci", "ci_coverage", "ci_flags",
 *                            "ci_reason", "candidates", "stability",
 *                            "max_shift_one_report", "too_small", "reason"} | null,
 *      "largest_disparity_reason": null | "..."}]}
 *
 * Everything is on the metric's own scale [0, 1] (the devices send v = 2 metric - 1; means,
 * variances and intervals are mapped back). "mean", "size" and "diff" are the unbiased
 * estimates (they can leave the valid range when the noise is large against the data);
 * "*_clipped" are the same clipped to it ([0, 1], [0, reports], [-1, 1]). "ci" is the normal
 * interval at "confidence" (mean ± z sqrt(var)), "ci95" the same at 0.95 (as in 0.1.0): each
 * holds for ONE group or pair chosen before looking. Looking at several pairs, or at the largest,
 * is a selection: "ci_simultaneous" holds for every pair at once and "largest_disparity" is the
 * largest |diff| with an interval for the largest true |gap| (pairwise_json.h). A
 * group is "too_small" when fewer than 30 reports landed in it or its estimated size's
 * relative standard error sd(n̂)/n̂ exceeds 0.2 (COLL_EST_*); a disparity when either group
 * is. No NaN or infinity is ever written: such a value is null, and the object's "reason"
 * says why.
 *
 * roc_hist campaigns: "groups": 0, "metrics": [] and
 *   "roc": {"bins", "edges", "noise_scale", "pos_sum", "neg_sum" (the exact summed noised
 *           counts), "n", "too_small", "reason", "valid", and when valid "projected",
 *           "positives", "negatives", "auc" (clipped to [0, 1], as in 0.1.0), "auc_unbiased",
 *           "auc_clipped", "auc_var_noise", "auc_var_sampling", "auc_ci" (noise only),
 *           "auc_ci_total" (noise + sampling), "auc_unbinned" (clipped: the examples' exact
 *           AUC, within-bin pairs resolved by linear densities on the campaign's edges),
 *           "auc_unbinned_raw", "auc_unbinned_var_noise", "auc_unbinned_sd",
 *           "auc_unbinned_var_within", "auc_unbinned_var_sampling", "auc_unbinned_bound"
 *           (the interpolation-error bound, its noise included), "auc_unbinned_ci" (the
 *           examples' exact AUC), "auc_unbinned_ci_total" (the model's AUC), "events",
 *           "auc_unbinned_events" (effective randomization events), "fieller_g",
 *           "max_auc_shift_one_report", "fpr", "tpr", "tpr_lo"/"tpr_hi" (pointwise band),
 *           "tpr_lo_simultaneous"/"tpr_hi_simultaneous", "tpr_band_events" (the fewest
 *           events over the interior thresholds); every interval with
 *           its "_coverage", "_flags", "_reason" (est_json.h; the band's as "tpr_band_...")}
 *   too_small: fewer than 30 reports, or the estimated positives' or negatives' relative
 *   standard error above 0.2; intervals at "confidence". Computed by
 *   host-sim/estimate/roc.h, the code dpm-sim uses.
 * roc_hist campaigns with groups: "groups": G, "roc" of the pooled histogram of all groups, and
 *   "roc_groups" (roc_groups.h). */
#ifndef DPM_COLLECTOR_ESTIMATE_JSON_H
#define DPM_COLLECTOR_ESTIMATE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "collector/ingest/aggregate.h"
#include "collector/ingest/campaigns.h"
#include "mech/base/est_json.h" /* COLL_EST_MIN_REPORTS, COLL_EST_MAX_SIZE_CV */

/* What an estimate request asks for. */
typedef struct coll_estimate_query {
    int all;           /* no period given: every period */
    uint32_t from, to; /* else periods from .. to, inclusive */
    double confidence; /* of the intervals, in (0, 1) */
} coll_estimate_query_t;

/* Parse the query string after '?' (NULL or "": the defaults: every period, 0.95). Accepts
 * period=P, from=A, to=B (either may be left out), confidence=C (a decimal in (0, 1)), each at
 * most once. 0, or -1 with the reason in why. */
int coll_estimate_parse_query(const char *query, coll_estimate_query_t *q, char *why, size_t cap);

/* The JSON of campaign index ci from its sums st (over the periods q asks for) and the
 * totals, into a new heap buffer (NUL-terminated, *len without the NUL); now: Unix time (for
 * period_now). 0, or -1 if memory ran out. */
int coll_estimate_json(const coll_campaigns_t *cs, int ci, const coll_estimate_query_t *q,
                       const coll_campaign_state_t *st, const coll_totals_t *totals, int64_t now,
                       char **out, size_t *len);

/* The period of campaign c open at Unix time now (0 before its start or without one). */
uint32_t coll_period_now(const coll_campaign_t *c, int64_t now);

#endif /* DPM_COLLECTOR_ESTIMATE_JSON_H */
