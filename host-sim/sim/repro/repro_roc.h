/* SPDX-License-Identifier: Apache-2.0 */
/* `dpm-sim repro roc`: roc_hist against the DPAUC baseline side by side in one run (issue 17
 * item 7): the same 10^5 pooled examples (binormal, AUC 0.80, 30 % positives), 15 parties,
 * eps = 1, N = B = 25 and N = B = 100 (roc_hist: B uniform score bins; dpauc: N linspace
 * thresholds), 100 runs (--quick 20). Both in exact mode: a summed cell is its pooled count plus
 * the sum of 15 discrete Laplace draws of the device's scale (roc_hist 2 / eps; dpauc 4N / eps
 * published, 2N / eps tight), the same distribution as 15 reports through the SDK, and the only
 * way past the build's 64 bins and 25 thresholds. Servers: roc_hist's unbinned AUC (within-bin
 * pairs by linear densities: auc_unbinned of estimate/roc.h) and its binned AUC (ties 1/2), both
 * from the unbiased sums and checked equal to dpm_roc_estimate where B <= 64; dpauc A and B
 * (estimate/dpauc.h). Cells (OUT/roc.json, table vs_dpauc): DPAUC RMSE / roc_hist RMSE against
 * the exact pooled AUC, cols A_B25 .. Btight_B100 with roc_hist's unbinned AUC, beside issue
 * 17's targets (5x A, 10x B: a target, not a paper number), and cols A_B25_binned .. with its
 * binned AUC (info); table rmse: each estimator's RMSE against the exact AUC and against its own
 * target (the noiseless value of its estimator on the pooled counts), which says where the
 * error comes from. */
#ifndef DPM_SIM_REPRO_ROC_H
#define DPM_SIM_REPRO_ROC_H

#include <stdint.h>

#include "sim/repro/repro_cells.h"
#include "sim/repro/repro_disparity.h"

int repro_roc(const repro_opts_t *o, repro_t *r, double *seconds);

/* `dpm-sim repro trust`: the two trust models side by side on the question they exist for
 * (issue 31 item 6): at ε = 1, three groups with shares 0.6 / 0.3 / 0.1 (binormal scores of
 * AUC 0.80, 0.78, 0.75; the largest and the smallest group 0.05 apart), 30 examples per device,
 * 10 % positives, 12 uniform score bins; 10^4, 10^5 and 10^6 devices; 200, 100 and 40 runs
 * (--quick a tenth), exact mode, the same scenario for all:
 *   local DP          roc_hist_groups: each device noises its histogram (label-DP, discrete
 *                     Laplace of scale 2 / (ε - group_eps)) and sends its group by GRR at
 *                     group_eps = ε / 2;
 *   two aggregators   roc_hist_2agg: each device's exact histogram as Prio3 shares, each
 *                     aggregator adds discrete Laplace of scale 2 x 30 / ε once per cell
 *                     (estimate/roc_central.h);
 *   hybrid            roc_hist_2agg with local_eps = 1: the same, and each device flips every
 *                     example's label by randomized response at ε0 = 1 before sharding (what
 *                     holds if both aggregators collude: ε0 label-DP per example).
 * Privacy units: local DP protects one example's label and the device's group; the two
 * aggregators protect the device's whole contribution, group included (replacement), which is
 * stronger: the comparison does not favour the two aggregators by a weaker unit.
 *
 * Cells (OUT/trust.json, table trust_models, rows 1e4, 1e5, 1e6): ldp_gap_rmse and
 * twoagg_gap_rmse, the RMSE of the gap between the largest and the smallest group's AUC
 * against the devices' own binned gap (the quantity both estimate without bias), and their
 * ratio (local DP / two aggregators), checked against the targets (a target, not a
 * paper number): twoagg_gap_rmse <= 0.01 at 10^5, ratio >= 50 at every size. Info columns: the
 * same RMSEs against the model's unbinned gap (noise, sampling and binning), each group's AUC
 * RMSE in both models, and hybrid_gap_rmse (the hybrid's, and its intervals' coverage in
 * trust_coverage). */
int repro_trust(const repro_opts_t *o, repro_t *r, double *seconds);

/* roc_hist's AUC from summed (noised) per-bin counts: sum_b u_b (C_{b+1} + x_b / 2) / (P N)
 * (estimate/roc.h), for any number of bins; NaN when P or N is not positive. */
double repro_roc_auc_sums(const double *pos, const double *neg, uint32_t bins);

/* roc_hist's unbinned AUC (auc_unbinned of estimate/roc.h) of summed counts in B uniform bins,
 * bin by bin from the formula (u_b C_{b+1} + x_b u_b / 2 + (w² / 12)(u_b p'_b - x_b q'_b)), for
 * any number of bins: an implementation apart from the estimator's kernel; NaN as above. */
double repro_roc_auc_unbinned_sums(const double *pos, const double *neg, uint32_t bins);

#endif /* DPM_SIM_REPRO_ROC_H */
