/* SPDX-License-Identifier: Apache-2.0 */
/* dpauc: the DP baseline the FHAUC paper (Baykara, Ünal, Akgün 2024) compares against, Sun et
 * al.'s DPAUC_Lap (2022), built so it can be compared with roc_hist at equal ε, data and
 * thresholds. It is a baseline, not a recommendation: roc_hist measures the same ROC with far
 * less noise (README "dpauc").
 *
 * The device counts, at each of the campaign's N thresholds t_0 < ... < t_{N-1} (Q1.31; an
 * example is predicted positive at t_i when score >= t_i, the rule of roc_hist's bin edges),
 * its true positives, false positives, true negatives and false negatives, and adds an
 * independent discrete Laplace draw to each of the 4N counts.
 *
 * Calibration (the campaign says which; ε = the campaign's eps):
 *   PUBLISHED  ε' = ε / (4N) per count, scale 4N / ε, as the FHAUC paper publishes it
 *              (ε = N (ε_TP + ε_FP + ε_TN + ε_FN)).
 *   TIGHT      ε' = ε / (2N) per count, scale 2N / ε.
 *
 * Privacy unit: ONE example of the device (label-DP, and more). Changing one example's label
 * moves it, at every threshold, between TP and FP (score >= t) or between FN and TN (score < t):
 * exactly 2 of the 4N counts change by 1 per threshold, an L1 change of 2N, not 4N. With
 * discrete Laplace of scale s per count, Pr[y | h] / Pr[y | h'] <= exp(2N / s), so
 *   PUBLISHED  spends 2N ε / (4N) = ε / 2 for one label change: the published calibration
 *              adds twice the noise its ε needs (the paper's ε is not the ε it spends);
 *   TIGHT      spends 2N ε / (2N) = ε exactly.
 * The same bound holds for replacing one example by another (score and label: still at most 2
 * counts per threshold, one up and one down); adding or removing one example changes N counts
 * (ε / 4 and ε / 2). eps_implemented, what the report carries and the ledger charges, is that
 * real ε for the label (and replace-one-example) unit: ceil(eps / 2) in Q16.16 for PUBLISHED,
 * eps for TIGHT; both are exact (the discrete Laplace pmf has no rounding: dpm/expert/noise.h).
 *
 * NOT protected, as for any count-based mechanism: the device's number of examples beyond the
 * noise (TP + FN at every threshold is a noisy count of its positives; averaging the N
 * thresholds estimates it to about 8 sqrt(N) / ε, the FHAUC paper's Table 2 attack).
 *
 * Several reports on the same examples compose: k reports spend k eps_implemented. */
#ifndef DPM_DPAUC_H
#define DPM_DPAUC_H

#include <stdint.h>

#include "dpm/campaign.h"
#include "dpm/expert/noise.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Configure dpauc. thresholds: n values in Q1.31, strictly increasing, each <= 2^31 (0 is
 * allowed: every example is then predicted positive), 1 <= n <= DPM_DPAUC_MAX_N; eps in
 * (0, DPM_EPS_MAX_Q16]; calibration PUBLISHED or TIGHT. DPM_ERR_PARAM for NULL or any of
 * these; DPM_ERR_RANGE when ε is so small that the noise scale would exceed 2^24 counts (the
 * noised counts must stay inside int32: scale 4N / ε <= 2^24 needs ε >= N 2^-22 for
 * PUBLISHED). *m untouched on error. */
dpm_status_t dpm_dpauc_init(dpm_dpauc_t *m, const uint32_t *thresholds, uint32_t n,
                            dpm_dpauc_calibration_t calibration, dpm_eps_t eps);

/* Perturb: out->tp[i] = tp[i] + Z, out->fp[i] = fp[i] + Z, out->tn[i] = neg - fp[i] + Z,
 * out->fn[i] = pos - tp[i] + Z, every Z a fresh discrete Laplace draw of m->lap's scale, drawn
 * in the order tp[0..n-1], fp[0..n-1], tn[0..n-1], fn[0..n-1]. Spends m->eps_implemented (one
 * example's label). DPM_ERR_PARAM for NULL, an unbound r, a corrupted m, c->n != m->n, a total
 * above DPM_DPAUC_MAX_COUNT or counts that no examples can give (tp[i] > pos, fp[i] > neg, or not
 * non-increasing in i). DPM_ERR_RANGE when a noised value would leave [-INT32_MAX, INT32_MAX]
 * (decided from the output: post-processing; probability < 2^-90 per cell). The sticky
 * DPM_ERR_RNG if the random source failed. *out untouched on every error. */
dpm_status_t dpm_dpauc_perturb(const dpm_dpauc_t *m, dpm_rand_t *r, const dpm_dpauc_counts_t *c,
                               dpm_dpauc_report_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_DPAUC_H */
