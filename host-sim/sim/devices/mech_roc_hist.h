/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist in the simulator (sim/devices/mech.h).
 *
 * Device input: its examples' score bins and labels (roc_sim.h: drawn consistently with the
 * labels and confusion counts the population gave it), counted by dpm_score_hist_add. Report:
 * dpm_mech_report_roc_hist. Aggregate: the estimator's dpm_roc_agg_t (exact per-bin sums).
 * Exact mode: every cell's sum is its true count plus a sum of n discrete Laplace variables
 * (n = reporting devices), drawn in the devices' order: pos[0 .. B), then neg[0 .. B).
 *
 * Truth: the population's true histogram, realized device by device (the counts inprocess
 * devices hold), or, in an exact-mode-only session beyond 2^24 examples, drawn from its law in
 * O(blocks x bins) (roc_sim.h, sim_roc_truth_sample; other modes first say how long realizing
 * will take).
 * Items (estimate/roc.h computes the estimates):
 *   0 "auc" (kind auc)        against the model's AUC (roc_sim.h, sim_roc_model_auc: what a
 *                             reader takes "the AUC" to be); the interval is the estimator's
 *                             noise + sampling interval (auc_ci_total), so the error is noise +
 *                             sampling + binning, and the binning shows as a bias
 *   1 "auc" (kind auc_binned) against the reporting devices' own binned AUC (the population's
 *                             true histogram): the noise-only error, with the noise-only
 *                             interval (auc_ci)
 *   2 "auc" (kind auc_unbinned) the unbinned AUC against the model's AUC, with its interval for
 *                             it (unbinned_ci_total: noise + sampling + the interpolation bound,
 *                             bias-aware; estimate/roc.h)
 *   3 "ap" (kind ap_binned)   average precision (estimate/pr_calibration.h) against the devices'
 *                             own binned AP, with ap_ci (noise only)
 *   4 "ece" (kind ece_binned) the expected calibration error at the bins' midpoints against the
 *                             devices' own, with ece_ci (noise only, widened by its bias bound)
 * Every run's interval carries its flags (estimate/ci_flags.h; runs.csv ci_flags, summary
 * flagged / no_claim). results.json's run0 holds every interval and its flags (as numbers).
 * Beyond the items (ext): run 0's curve with its pointwise and simultaneous TPR bands, and
 * across runs the bands' coverage of the true binned ROC (results.json "roc", roc.csv). */
#ifndef DPM_SIM_MECH_ROC_HIST_H
#define DPM_SIM_MECH_ROC_HIST_H

#include <stdint.h>

#include "estimate/roc.h"
#include "sim/devices/mech.h"
#include "sim/pop/roc_sim.h"

#define SIM_ROC_ITEM_MODEL 0u    /* item index: AUC against the model's AUC */
#define SIM_ROC_ITEM_BINNED 1u   /* item index: AUC against the devices' binned AUC */
#define SIM_ROC_ITEM_UNBINNED 2u /* item index: the unbinned AUC against the model's AUC */
#define SIM_ROC_ITEM_AP 3u       /* item index: average precision against the devices' binned AP */
#define SIM_ROC_ITEM_ECE 4u      /* item index: calibration error against the devices' binned one */

typedef struct {
    sim_roc_model_t *model;  /* prepare: the population's examples (heap); first: release */
    dpm_roc_params_t params; /* the estimator's view: the devices' own Laplace scale */
    double scale;            /* t = scale_num / scale_den, counts */
    uint32_t bins;
    uint64_t pos[DPM_MAX_BINS], neg[DPM_MAX_BINS]; /* true counts */
    double auc_binned, auc_model;
    double ap_binned, ece_binned;                        /* the devices' own binned AP and ECE */
    double tpr[DPM_MAX_BINS + 1], fpr[DPM_MAX_BINS + 1]; /* the true binned ROC */
} sim_roc_state_t;

/* Across runs: the band's coverage of the true binned ROC, and run 0's whole estimate. */
typedef struct {
    dpm_roc_estimate_t run0;
    int have_run0;
    uint32_t valid;                   /* runs with an estimate */
    uint32_t cover[DPM_MAX_BINS + 1]; /* per threshold: runs whose pointwise band holds it */
    double tpr_sum[DPM_MAX_BINS + 1], tpr_sq_err[DPM_MAX_BINS + 1];
    uint32_t all_pointwise, simultaneous; /* runs whose band holds every interior true TPR */
} sim_roc_ext_t;

sim_roc_state_t *sim_roc_state(sim_cfg_t *cfg);
const sim_roc_state_t *sim_roc_state_c(const sim_cfg_t *cfg);
dpm_roc_agg_t *sim_roc_agg(sim_agg_t *agg);
const dpm_roc_agg_t *sim_roc_agg_c(const sim_agg_t *agg);

/* The band coverages of a result's ext: mean pointwise over the interior thresholds, runs with
 * every interior threshold inside the pointwise band, inside the simultaneous band. */
void sim_roc_band_coverage(const sim_roc_ext_t *x, uint32_t bins, double *pointwise,
                           double *all_pointwise, double *simultaneous);

#endif /* DPM_SIM_MECH_ROC_HIST_H */
