/* SPDX-License-Identifier: Apache-2.0 */
/* The precision-recall curve, average precision and calibration from the same roc_hist sums as
 * the ROC (estimate/roc.h: its input, noise model and notation). Host only: doubles. The
 * collector and dpm-sim share it; nothing here spends privacy (a function of the noised sums).
 *
 * Input: per bin b the noised sums x_b (positives) and u_b (negatives), each cell's noise of
 * variance v = n s² (central DP: k s²), independent across cells. C_j = sum_{b >= j} x_b,
 * D_j = sum_{b >= j} u_b, T_j = C_j + D_j (predict positive when bin >= j), P = C_0, N = D_0,
 * M = P + N. Like the ROC, every estimate is a ratio of the unbiased sums themselves.
 *
 * Precision-recall, thresholds j = 0 .. B-1: recall_j = C_j / P (the TPR of roc.h), precision_j
 * = C_j / T_j, its delta-method sd sqrt(v (B - j) (C_j² + D_j²)) / T_j². precision_lo/hi:
 * pointwise, Fieller's interval for the ratio (C_j and T_j have noise variances (B - j) v and
 * 2 (B - j) v, covariance (B - j) v: {r : (C_j - r T_j)² <= z² Var(C_j - r T_j)}), clipped to
 * [0, 1]. It stays calibrated where few examples pass the threshold and T_j is noisy (the top
 * thresholds), where the delta method's interval would not; when T_j is too noisy for a bounded
 * set (T_j² <= z² 2 (B - j) v) it is [0, 1] with DPM_CI_CLASS_NOISE, and NaN with
 * DPM_CI_SMALL_N when T_j is not positive. With few randomization events (central DP: k draws
 * per cell) the Poisson-aware delta interval replaces it (DPM_CI_FEW_EVENTS, ci_flags.h).
 * Average precision: the step rule scikit-learn's average_precision_score uses, over the bins
 * from the top (ties: one bin is one threshold):
 *     AP = sum_j (recall_j - recall_{j+1}) precision_j = (1 / P) sum_j x_j C_j / T_j.
 * Noiseless counts give exactly the examples' binned AP. Gradient (delta method):
 *     dAP/dx_b = (C_b / T_b + sum_{j <= b} x_j D_j / T_j² - AP) / P,
 *     dAP/du_b = -(sum_{j <= b} x_j C_j / T_j²) / P,
 * var_noise = v sum_b (dAP/dx_b² + dAP/du_b²). Sampling (the examples as M independent draws
 * from the model's (label, bin) distribution; the multinomial delta method; AP's gradient is
 * orthogonal to the counts since AP is scale-free): var_sampling = sum_c g_c² n_c over the 2B
 * cells, n_c clipped at 0. ap_ci covers the examples' binned AP (noise), ap_ci_total the
 * model's (noise + sampling; examples within a device taken as independent, as in roc.h).
 *
 * Calibration (reliability diagram), per bin: the observed positive rate rate_b = x_b / (x_b +
 * u_b) against the bin's score midpoint m_b (the campaign's edges), its interval Fieller's as
 * for precision (variances v and 2 v, covariance v; rate_flags as precision_flags).
 * Expected calibration error (the midpoint version: the devices report bins, not scores):
 *     ECE = sum_b (n_b / M) |rate_b - m_b| = (1 / M) sum_b |a_b|, a_b = (1 - m_b) x_b - m_b u_b.
 * Linear where the signs of the a_b are known: dECE/dx_b = (sign(a_b)(1 - m_b) - ECE) / M,
 * dECE/du_b = (-sign(a_b) m_b - ECE) / M, var_noise = v sum (g²). Where a bin's a_b is within
 * noise of 0 the absolute value biases the estimate up, by E|a_b + e_b| - |a_b| (e_b normal,
 * sd_b² = v ((1 - m_b)² + m_b²)), at most sd_b sqrt(2 / π) at a_b = 0 and falling with |a_b|:
 * ece_bound sums it per bin at the smallest |a_b| the data allow (|estimate| - 3 sd_b, at
 * least 0), so no bin is ever taken as certainly away from 0. The interval is the bias-aware one
 * (ci_flags.h), flagged DPM_CI_ABS_BIAS (coverage at least the level) whenever the bound exceeds
 * 0.1 sd: whether it is large is itself estimated, and intervals picked by a looser rule
 * under-covered (92 %) because the runs whose near-zero bins looked far from 0 were the runs
 * whose estimate was pushed up. ece_ci covers the examples' binned ECE, ece_ci_total the
 * model's: sampling as for AP, and its bound ece_bound_total the same sum with each bin's sd_b
 * grown by a_b's sampling sd ((1 - m_b)² x_b + m_b² u_b, Poisson: at least the multinomial's),
 * since near perfect calibration |.| biases the sampling error up as it does the noise.
 *
 * Fieller's g of AP: z² (B v / P² + sum_j (x_j / P) 2 (B - j) v / T_j²), the relative variances
 * of its denominators weighted by their share of it; a threshold with positives whose T_j is not
 * positive flags AP too (DPM_CI_CLASS_NOISE). ECE's: z² 2 B v / M².
 * Few events (every interval): dpm_ci_halfwidth with the largest |gradient| as the jump.
 * Central DP (params.central_draws > 0: each cell carries that many discrete Laplace draws, not
 * one per report): every noise interval's critical value is the Cornish-Fisher quantile
 * z + kappa (z³ - 3 z) / 24 of the statistic's noise, kappa = 3 sum g⁴ / (draws (sum g²)²) its
 * excess kurtosis; with few cells behind it (a bin's rate: 4 draws) the normal z covered 0.94.
 * tests/unit/test_pr_calibration.c checks the noiseless values against hand counts;
 * tests/stat/test_pr_calibration_coverage.c the coverage on a grid of populations, bins and
 * ε, sparse ones included. */
#ifndef DPM_HOST_ESTIMATE_PR_CALIBRATION_H
#define DPM_HOST_ESTIMATE_PR_CALIBRATION_H

#include "dpm/status.h"
#include "estimate/roc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t bins;
    int valid; /* 0: P <= 0 or N <= 0 (as roc.h); nothing else is set */
    double z;  /* Phi^-1((1 + c) / 2) */
    /* precision-recall, thresholds j = 0 .. bins - 1 */
    double recall[DPM_ROC_MAX_BINS], precision[DPM_ROC_MAX_BINS], precision_sd[DPM_ROC_MAX_BINS];
    double precision_lo[DPM_ROC_MAX_BINS], precision_hi[DPM_ROC_MAX_BINS];
    unsigned precision_flags[DPM_ROC_MAX_BINS]; /* per threshold (ci_flags.h) */
    double ap;                                  /* clipped to [0, 1] */
    double ap_raw;
    double ap_var_noise, ap_var_sampling;
    double ap_ci_lo, ap_ci_hi, ap_ci_total_lo, ap_ci_total_hi;
    unsigned ap_flags, ap_total_flags;
    double ap_fieller_g;
    /* calibration, per bin */
    double midpoint[DPM_ROC_MAX_BINS], rate[DPM_ROC_MAX_BINS], rate_sd[DPM_ROC_MAX_BINS];
    double rate_lo[DPM_ROC_MAX_BINS], rate_hi[DPM_ROC_MAX_BINS];
    unsigned rate_flags[DPM_ROC_MAX_BINS];
    double ece;
    double ece_var_noise, ece_var_sampling, ece_bound, ece_bound_total; /* bound: noise only */
    double ece_ci_lo, ece_ci_hi, ece_ci_total_lo, ece_ci_total_hi;
    unsigned ece_flags, ece_total_flags;
} dpm_prc_estimate_t;

/* The estimate at confidence c in (0, 1) from roc_hist's parameters and sums. DPM_ERR_PARAM on
 * bad arguments, and for sums whose labels the devices flipped (p->label_flip > 0: this
 * estimator has no debias for them); an aggregate whose P or N is not positive gives DPM_OK
 * with est->valid = 0. */
dpm_status_t dpm_prc_estimate(const dpm_roc_params_t *p, const dpm_roc_agg_t *a, double confidence,
                              dpm_prc_estimate_t *est);

/* AP and ECE of any sums pos, neg (doubles: noised, debiased per group, or true counts) and
 * their gradients in pos then neg (grad: 2 bins entries, or NULL), as above; mid: the bins'
 * score midpoints (dpm_prc_midpoints). NaN when P (AP) or M (ECE) is not positive or bins is
 * outside [2, DPM_ROC_MAX_BINS]. The gradients are what a caller with another noise model (the
 * per-group sums of roc_groups.h) needs for its own delta method. */
double dpm_prc_ap_of(const double *pos, const double *neg, uint32_t bins, double *grad);
double dpm_prc_ece_of(const double *pos, const double *neg, const double *mid, uint32_t bins,
                      double *grad);
/* sum_c g_c² n_c - (sum_c g_c n_c)² / M over the 2 bins cells (pos then neg, as grad), counts
 * clipped at 0: the multinomial delta method's variance of a function of the counts with
 * gradient grad (var_sampling above). */
double dpm_prc_sampling_var(const double *grad, const double *pos, const double *neg,
                            uint32_t bins);
/* E|a + e| - |a| for e ~ N(0, sd²): the bias of an absolute value (ece_bound's term). */
double dpm_prc_abs_bias(double a, double sd);
/* ece_bound takes each bin's |a| as small as its estimate minus this many sd allow, and an ECE
 * interval whose bound exceeds DPM_PRC_BOUND_NEGLIGIBLE sd is flagged DPM_CI_ABS_BIAS */
#define DPM_PRC_NEAR_ZERO_SD 3.0
#define DPM_PRC_BOUND_NEGLIGIBLE 0.1
/* The midpoints of bins of these widths (any unit), scaled to [0, 1]. */
void dpm_prc_midpoints(const double *width, uint32_t bins, double *mid);

/* The examples' binned AP and ECE (the truths the estimates target) from true counts, with the
 * bins' widths (params: the campaign's edges). NaN when a class is empty. */
double dpm_prc_ap_exact(const uint64_t *pos, const uint64_t *neg, uint32_t bins);
double dpm_prc_ece_exact(const uint64_t *pos, const uint64_t *neg, const double *width,
                         uint32_t bins);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_PR_CALIBRATION_H */
