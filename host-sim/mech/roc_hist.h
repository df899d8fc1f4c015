/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist's pieces that roc_hist_groups shares (roc_hist.c, roc_groups.c). */
#ifndef DPM_MECH_ROC_HIST_H
#define DPM_MECH_ROC_HIST_H

#include "common/json_write.h"
#include "estimate/roc.h"
#include "mech/host_mech.h"

/* `, "roc": {...}`: the curve and AUC of the summed histograms agg (estimate JSON, README);
 * then , "pr": {...}, "calibration": {...}: precision-recall, AP, reliability and ECE of the
 * same sums (estimate/pr_calibration.h). */
void host_roc_json(jw_t *sb, const coll_campaign_t *c, const dpm_roc_agg_t *agg, double confidence);

/* c->roc from the mechanism's bins, noise scale and edges (the pooled curve's estimator). */
dpm_status_t host_roc_params_init(coll_campaign_t *c);

/* roc_hist's compare paths (host_mech.h), which roc_hist_groups' extend. */
extern const char *const host_roc_compare[];

/* "report_bounds"' members of a roc_hist campaign: examples, cell and class-sum ranges. */
void host_roc_bounds_json(jw_t *sb, const coll_campaign_t *c);

#endif /* DPM_MECH_ROC_HIST_H */
