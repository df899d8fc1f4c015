/* SPDX-License-Identifier: Apache-2.0 */
/* GET /v1/campaigns/{id}/estimate: the campaign's estimates as JSON.
 *
 *   {"campaign": 1, "mechanism": "tuple_mr", "eps": 1, "eps_implemented": 0.99998,
 *    "groups": 4, "confidence": 0.95, "scale": "metric",
 *    "reports": 123456,                                  stored reports (each counted once)
 *    "rejects": {"parameter fingerprint mismatch": 3},   this campaign's rejects by reason
 *    "rejects_unattributed": {"malformed batch": 1},     rejects no campaign can be named for
 *    "lost_reports": 0,            reports devices lost before delivery (all campaigns)
 *    "report_bounds": {"honest_reject_log2": -40.2, "value_max": ...}   bounds.h
 *    "metrics": [{"metric": "tpr",
 *      "groups": [{"group": 0, "reports": n', "size": n̂, "mean": m, "var": v,
 *                  "ci95": [lo, hi], "max_shift_one_report": s}, ...],
 *      "disparities": [{"g": 0, "h": 1, "diff": m0 - m1, "var": v, "ci95": [lo, hi]}, ...],
 *      "max_disparity": {"g": 0, "h": 3, "diff": ..., "abs_diff": ..., "ci95": [lo, hi]}}]}
 *
 * Everything is on the metric's own scale [0, 1] (the devices send v = 2 metric - 1; means,
 * variances and intervals are mapped back). Group sizes are not known to the server: "size" is
 * the GRR estimate, and the variances include its noise (dpm_disp_estimate, plug-in ν²).
 * "ci95" is the normal-approximation interval mean ± 1.96 sqrt(var). A group whose estimated
 * size is not positive has null estimates, and so have its disparities. No NaN or infinity is
 * ever written: those become null.
 *
 * roc_hist campaigns: "groups": 0, "metrics": [] and
 *   "roc": {"bins", "edges", "noise_scale", "pos_sum", "neg_sum" (the exact summed noised
 *           counts), "valid", and when valid "projected", "positives", "negatives", "auc",
 *           "auc_var_noise", "auc_var_sampling", "auc_ci" (noise only: the reporting devices'
 *           own binned AUC), "auc_ci_total" (noise + sampling), "max_auc_shift_one_report"
 *           (bounds.h: how far one more accepted report can move the AUC), "fpr", "tpr" (threshold
 *           j = 0 .. bins), "tpr_lo"/"tpr_hi" (pointwise 95% band), "tpr_lo_simultaneous"/
 *           "tpr_hi_simultaneous" (Bonferroni over the interior thresholds)}
 * computed by host-sim/estimate/roc.h, the code dpm-sim uses. */
#ifndef DPM_COLLECTOR_ESTIMATE_JSON_H
#define DPM_COLLECTOR_ESTIMATE_JSON_H

#include <stddef.h>

#include "collector/aggregate.h"
#include "collector/campaigns.h"

/* The JSON for campaign index ci into a new heap buffer (NUL-terminated, *len without the
 * NUL). 0, or -1 if memory ran out. */
int coll_estimate_json(const coll_campaigns_t *cs, coll_aggregates_t *agg, int ci, char **out,
                       size_t *len);

#endif /* DPM_COLLECTOR_ESTIMATE_JSON_H */
