/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist: a device's ROC statistic under label differential privacy. The device sorts its
 * local examples into score bins (fixed, public bin edges from the campaign) and counts, per
 * bin, the examples labelled positive and negative; every one of the 2 * bins counts then gets
 * independent discrete Laplace noise. A server (host-sim/estimate) sums the noised histograms
 * of many devices and post-processes them into a ROC curve and AUC.
 *
 * Privacy unit: ONE example's label (label-DP). Changing the label of one example moves one
 * count from pos[b] to neg[b] (or back) of the same bin b, so the histogram changes by 1 in two
 * cells: L1 sensitivity 2. Each cell gets discrete Laplace noise with scale 2 / ε (dpm_laplace_t
 * with sensitivity 2 integer grid units), Pr[Z = z] ∝ exp(-|z| ε / 2), so for neighbouring
 * histograms h, h' and every output y
 *     Pr[y | h] / Pr[y | h'] = prod_cells exp((|y_c - h'_c| - |y_c - h_c|) ε / 2)
 *                           <= exp(ε / 2 * sum_c |h_c - h'_c|) = exp(ε).
 * This is exact, pure ε-DP with ε = eps_implemented = the requested ε: the discrete Laplace
 * pmf involves no rounding (see dpm_laplace_t in dpm/expert/noise.h), so nothing is lost to
 * quantization and eps_implemented == eps.
 *
 * NOT protected: the scores. Which bins an example falls into, and so the number of examples
 * per bin (pos[b] + neg[b]), are public to this mechanism: the noise blurs them only
 * incidentally, and adding, removing or re-scoring an example is NOT covered by this ε.
 * Campaigns that need example-level DP must bound the examples per device and scale ε (not
 * offered here).
 *
 * Running several reports on the same examples composes: k reports spend k ε (the ledger in
 * dpm/expert/budget.h charges eps_implemented per report).
 *
 * Per-group AUC (a campaign with groups >= 2): the report also carries the device's group
 * (one of `groups`, e.g. a demographic), randomized with GRR like the tuple mechanisms'
 * groups; the server (host-sim/estimate/roc_groups.h) estimates every group's ROC and AUC and
 * every pairwise AUC gap. The campaign's ε is split: the group's GRR gets ε_g (the campaign's
 * group_eps, default ε / 2) and the histogram's Laplace noise ε_h = ε - ε_g (scale 2 / ε_h).
 * Two privacy units, each with its own guarantee:
 *   - one example's label: label-DP at ε_h, exactly as above (the group's GRR does not look at
 *     labels);
 *   - the device's group: local DP at ε_g' = the GRR's implemented ε (<= ε_g): for a fixed
 *     histogram the report's distribution depends on the group only through the GRR, whose
 *     output ratio for any two groups is keep / other <= e^ε_g'.
 * A neighbour that changes both (the group and one label) is covered by basic composition of
 * the two independent draws: ε_g' + ε_h = eps_implemented (<= ε), what the report carries and
 * the ledger charges.
 * Why every report carries its REAL histogram, whatever group the GRR reported: the bin totals
 * (examples per bin) are not protected by the label-DP above (the noise blurs them by only
 * about 2 / ε_h), so a report whose group flipped but whose histogram were empty would be told
 * apart from a kept one by its totals alone: the observer would learn whether the group
 * flipped, hence the true group of every kept report, and the GRR would protect nothing. With
 * the real histogram always sent, a report's histogram has the same distribution whatever the
 * group and whatever the GRR did. The price is mixing: a group's sum also holds the histograms
 * of devices from other groups whose report landed there, E[S_g] = P H_g + Q sum_{g' != g}
 * H_g' (P = keep / 2^32, Q = other / 2^32, H_g the true sum of group g), which the server
 * inverts per cell: H_g = (S_g - Q T) / (P - Q), T = sum_g S_g.
 * Still NOT protected: the scores, hence whatever the score distribution reveals about the
 * group (a group whose scores sit in other bins is recognisable by its bin totals). The group
 * guarantee is for the group attribute alone, as for every attribute-level LDP. */
#ifndef DPM_ROC_HIST_H
#define DPM_ROC_HIST_H

#include <stdint.h>

#include "dpm/campaign.h"
#include "dpm/expert/noise.h"
#include "dpm/stats.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Configure a roc_hist mechanism. edges: n_edges score edges in Q1.31, strictly increasing,
 * each <= 2^31 (DPM_SCORE_ONE), 1 <= n_edges <= DPM_MAX_BINS - 1, giving bins = n_edges + 1.
 * eps in (0, DPM_EPS_MAX_Q16]. DPM_ERR_PARAM (and *m untouched) for NULL or any bad argument.
 * On success m->eps_implemented == eps. */
dpm_status_t dpm_roc_hist_init(dpm_roc_hist_t *m, const uint32_t *edges, uint32_t n_edges,
                               dpm_eps_t eps);

/* Perturb a histogram: out->pos[b] = h->pos[b] + Z, out->neg[b] = h->neg[b] + Z', with a fresh
 * independent discrete Laplace draw (dpm_laplace_add with m->lap: scale 2 / ε) per cell, drawn
 * in the documented order pos[0], ..., pos[bins-1], neg[0], ..., neg[bins-1]. ε-DP for one
 * label change (see the top of this file); spends m->eps_implemented.
 * DPM_ERR_PARAM for NULL pointers, an unbound r, a corrupted *m, a mechanism with groups (use
 * dpm_roc_hist_perturb_group), h->bins != m->bins.count or a count above
 * DPM_SCORE_HIST_MAX_COUNT. DPM_ERR_RANGE when a noised value would leave
 * [-INT32_MAX, INT32_MAX]: decided from the exact noised values (a function of the output
 * alone, so it is post-processing and keeps ε-DP). With counts <= 2^30 this needs |Z| > 2^30 in
 * some cell: probability < 4 DPM_MAX_BINS exp(-2^30 ε / 2) < 2^-11000 for every allowed ε;
 * an app that retries with fresh noise after this error adds at most that as a δ. The sticky
 * DPM_ERR_RNG if the random source failed. *out untouched on every error.
 * Timing: the sampler's run time depends on |Z|, not on the counts (see dpm_laplace_t). */
dpm_status_t dpm_roc_hist_perturb(const dpm_roc_hist_t *m, dpm_rand_t *r, const dpm_score_hist_t *h,
                                  dpm_roc_hist_report_t *out);

/* Configure a per-group roc_hist: as dpm_roc_hist_init, plus 2 <= groups <= DPM_MAX_GROUPS
 * and 0 < group_eps < eps (the group's GRR gets group_eps, the histogram eps - group_eps).
 * eps_implemented = the GRR's implemented ε + (eps - group_eps) <= eps. DPM_ERR_PARAM for NULL
 * or any bad argument; DPM_ERR_RANGE when the GRR refuses group_eps. *m untouched on error. */
dpm_status_t dpm_roc_hist_init_groups(dpm_roc_hist_t *m, const uint32_t *edges, uint32_t n_edges,
                                      dpm_eps_t eps, uint32_t groups, dpm_eps_t group_eps);

/* Perturb a histogram with the device's true group (< m->groups) under a per-group roc_hist:
 * first the group's GRR (32 bits), then the histogram exactly as dpm_roc_hist_perturb does,
 * whatever group the GRR reported (see the top of this file). Spends m->eps_implemented.
 * Errors as dpm_roc_hist_perturb, and DPM_ERR_PARAM for a mechanism without groups or a group
 * out of range. dpm_roc_hist_perturb refuses a mechanism with groups (DPM_ERR_PARAM): its report
 * would carry no group. *out untouched on every error. */
dpm_status_t dpm_roc_hist_perturb_group(const dpm_roc_hist_t *m, dpm_rand_t *r, uint32_t group,
                                        const dpm_score_hist_t *h, dpm_roc_hist_report_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_ROC_HIST_H */
