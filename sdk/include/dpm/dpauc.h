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
 * eps for TIGHT; both are exact (the discrete Laplace pmf has no rounding: dpm/noise.h).
 *
 * NOT protected, as for any count-based mechanism: the device's number of examples beyond the
 * noise (TP + FN at every threshold is a noisy count of its positives; averaging the N
 * thresholds estimates it to about 8 sqrt(N) / ε, the FHAUC paper's Table 2 attack).
 *
 * Several reports on the same examples compose: k reports spend k eps_implemented. */
#ifndef DPM_DPAUC_H
#define DPM_DPAUC_H

#include <stdint.h>

#include "dpm/noise.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_DPAUC_MAX_N DPM_DPAUC_MAX_THRESHOLDS

typedef enum {
    DPM_DPAUC_PUBLISHED = 0, /* ε / (4N) per count: spends ε / 2 for one label */
    DPM_DPAUC_TIGHT = 1,     /* ε / (2N) per count: spends ε for one label */
} dpm_dpauc_calibration_t;

/* Largest count one cell may hold (as roc_hist): with the noise bound below, a noised count
 * leaves int32 with probability < 2^-90 per cell. */
#define DPM_DPAUC_MAX_COUNT (UINT32_C(1) << 30)

/* The configured mechanism: public parameters only. */
typedef struct {
    uint32_t n;                           /* thresholds N, in [1, DPM_DPAUC_MAX_N] */
    uint32_t thresholds[DPM_DPAUC_MAX_N]; /* strictly increasing Q1.31, <= 2^31 */
    dpm_dpauc_calibration_t calibration;
    dpm_laplace_t lap;         /* sensitivity 4N (PUBLISHED) or 2N (TIGHT) counts, at eps */
    dpm_eps_t eps;             /* requested */
    dpm_eps_t eps_implemented; /* ε for one example's label, Q16.16 rounded up (see top) */
} dpm_dpauc_t;

/* One device's counts at the N thresholds: tp[i] = positives with score >= t_i, fp[i] =
 * negatives with score >= t_i; pos and neg are the totals (tn[i] = neg - fp[i], fn[i] = pos -
 * tp[i]). */
typedef struct {
    uint32_t n;
    uint32_t tp[DPM_DPAUC_MAX_N];
    uint32_t fp[DPM_DPAUC_MAX_N];
    uint32_t pos, neg;
} dpm_dpauc_counts_t;

/* A perturbed report, ready to encode: each of the 4N counts plus its own noise. Values are in
 * [-INT32_MAX, INT32_MAX]; entries >= n are 0. */
typedef struct {
    uint32_t n;
    int32_t tp[DPM_DPAUC_MAX_N];
    int32_t fp[DPM_DPAUC_MAX_N];
    int32_t tn[DPM_DPAUC_MAX_N];
    int32_t fn[DPM_DPAUC_MAX_N];
} dpm_dpauc_report_t;

/* Configure dpauc. thresholds: n values in Q1.31, strictly increasing, each <= 2^31 (0 is
 * allowed: every example is then predicted positive), 1 <= n <= DPM_DPAUC_MAX_N; eps in
 * (0, DPM_EPS_MAX_Q16]; calibration PUBLISHED or TIGHT. DPM_ERR_PARAM for NULL or any of
 * these; DPM_ERR_RANGE when ε is so small that the noise scale would exceed 2^24 counts (the
 * noised counts must stay inside int32: scale 4N / ε <= 2^24 needs ε >= N 2^-22 for
 * PUBLISHED). *m untouched on error. */
dpm_status_t dpm_dpauc_init(dpm_dpauc_t *m, const uint32_t *thresholds, uint32_t n,
                            dpm_dpauc_calibration_t calibration, dpm_eps_t eps);

/* Empty counts over m's thresholds. DPM_ERR_PARAM for NULL or a corrupted m. */
dpm_status_t dpm_dpauc_counts_init(dpm_dpauc_counts_t *c, const dpm_dpauc_t *m);

/* Count one example: label 0 or 1, score in Q1.31 (<= 2^31). Compares with every threshold
 * (no early exit) and selects the positive or negative counts with a mask, so its run time
 * depends on neither. DPM_ERR_PARAM for NULL, a label other than 0/1, a score above 2^31 or
 * c->n != m->n; DPM_ERR_RANGE if a total would exceed DPM_DPAUC_MAX_COUNT. c unchanged on
 * error. */
dpm_status_t dpm_dpauc_counts_add(dpm_dpauc_counts_t *c, const dpm_dpauc_t *m, uint32_t score_q31,
                                  int label);

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
