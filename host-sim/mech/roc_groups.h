/* SPDX-License-Identifier: Apache-2.0 */
/* The estimate JSON of a per-group roc_hist campaign (groups >= 2; sums: agg_rocg.h), beside
 * its pooled "roc" member (estimate_json.h: the same keys as an ungrouped roc_hist, from the
 * groups' summed cells):
 *
 *   "roc_groups": {"groups": G, "bins": B, "noise_scale", "group_keep", "group_other" (the
 *       group GRR's P and Q), "n", "reported": [n_0, ...] (reports per reported group),
 *       "confidence", "z",
 *       "by_group": [{"group": g, "defined", "reason", "small_sample", "positives",
 *                     "positives_sd", "negatives", "negatives_sd", "auc" (unbiased),
 *                     "auc_clipped", "sd", "ci": [lo, hi] | null, "events",
 *                     "auc_unbinned", "auc_unbinned_clipped", "auc_unbinned_sd",
 *                     "auc_unbinned_bound", "auc_unbinned_events",
 *                     "auc_unbinned_ci" (the group's examples' exact AUC),
 *                     "auc_unbinned_ci_total" (the group's model AUC), "fpr", "tpr", "fpr_sd",
 *                     "tpr_sd" (thresholds 0 .. B, clipped)}, ...],
 *       "gaps": [{"g", "h", "defined", "reason", "small_sample", "gap" (AUC_g - AUC_h), "sd",
 *                 "ci": [lo, hi] | null (pointwise: one gap chosen in advance), "events",
 *                 "max_shift_one_report", "gap_unbinned", "gap_unbinned_sd",
 *                 "gap_unbinned_bound", "gap_unbinned_ci", "gap_unbinned_ci_total",
 *                 "ci_simultaneous", "distinguishable", "largest_share"}, ...] (order (0,1),
 *                 (0,2), ..., (1,2), ...),
 *       "simultaneous": {...}, "largest_gap": {...} | null, "largest_gap_reason"
 *       (every gap at once and the largest |gap|: pairwise_json.h)}
 * Every interval has its "_coverage", "_flags" and "_reason" (est_json.h).
 *
 * Computed by host-sim/estimate/roc_groups.h, the code dpm-sim's roc_hist_groups uses. An
 * undefined estimate (no reports, a group whose estimated positives or negatives are not above
 * 0, a gap with such a group) has "defined": false, its numbers null and "reason" saying why;
 * "ci" is null with a reason when the variance estimate is not positive. No NaN or infinity. */
#ifndef DPM_MECH_ROC_GROUPS_H
#define DPM_MECH_ROC_GROUPS_H

#include "mech/host_mech.h"

/* The module: host_mech_roc_hist_groups (host_mech.h). */

#endif /* DPM_MECH_ROC_GROUPS_H */
