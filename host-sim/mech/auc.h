/* SPDX-License-Identifier: Apache-2.0 */
/* The estimate JSON member of dpauc, ustat_bins and ustat_tree campaigns (beside "metrics": []),
 * written by their modules (auc.c):
 *
 *   "dpauc": {"thresholds": N, "calibration", "noise_scale", "n", "sums": {"tp", "fp", "tn",
 *             "fn"} (the exact summed noised counts, threshold order),
 *             "variants": {"A": {...}, "B": {...}}, "ci": null, "reason" (why no interval)}
 *       each variant (host-sim/estimate/dpauc.h: A = Sun et al.'s code, B = unclamped rates):
 *       {"auc", "small_sample", "fpr", "tpr" (when defined), "defined", "reason"}
 *   "ustat_bins": {"kernel", "k", "n", "estimate": "auc" | "kendall_tau_a", "auc" | "tau",
 *             "value_clipped", "sd", "ci" (normal at the query's confidence, Poisson-aware
 *             with few GRR moves), "ci_coverage", "ci_flags", "ci_reason" (est_json.h),
 *             "n_pos", "n_neg", "small_sample", "events", "defined", "reason"}
 *   "ustat_tree": {"depth", "grr_levels", "n", "estimate": "auc", "ci_kind", "auc",
 *             "value_clipped", "sd" (sqrt of Theorem 3's bound), "ci" (value -+ sqrt(bound /
 *             (1 - confidence)): Chebyshev on the bound, conservative: "ci_coverage"
 *             "at_least"), "n_pos", "n_neg",
 *             "small_sample", "a", "mse_bound", "defined", "reason"}
 *
 * An undefined estimate has "defined": false, its numbers null and "reason" saying why (no
 * reports, an empty class, ...); no NaN or infinity is ever written. */
#ifndef DPM_MECH_AUC_H
#define DPM_MECH_AUC_H

#include "mech/host_mech.h"

/* The modules: host_mech_dpauc, host_mech_ustat_bins, host_mech_ustat_tree (host_mech.h). */

#endif /* DPM_MECH_AUC_H */
