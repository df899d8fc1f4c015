/* SPDX-License-Identifier: Apache-2.0 */
/* Server side of per-group roc_hist (a roc_hist campaign with groups >= 2; sdk:
 * dpm/expert/roc_hist.h): every group's ROC and AUC and every pairwise AUC gap, with confidence
 * intervals, from reports that carry a GRR'd group and their device's real noised histogram. Host
 * only, doubles.
 *
 * Model. Device i, true group g_i, histogram h_i (2B cells: pos[0..B-1], neg[0..B-1]) reports
 * group r_i (= g_i with probability P = keep / 2^32, each other group with Q = other / 2^32) and
 * y_i = h_i + Z_i (discrete Laplace, variance s² per cell, independent of everything). With
 * c_{i,g} = ([r_i = g] - Q) / (P - Q) (E c_{i,g} = [g_i = g]), the group's histogram
 *     H_g = sum_i c_{i,g} y_i = (S_g - Q T) / (P - Q),  S_g = sum_{r_i = g} y_i, T = sum_g S_g,
 * is unbiased for the true sum of group g (the per-cell inversion of E S_g = P H_g + Q sum_{g'
 * != g} H_g').
 *
 * AUC of group g: the binned AUC with ties 1/2 (as roc_hist), A_g = num_g / den_g with num_g =
 * pos_g^T K neg_g (K_bc = [b > c] + 1/2 [b = c]) and den_g = (1^T pos_g)(1^T neg_g). Products of
 * one group's pos and neg share each device's GRR draw, so E[c_{i,g}^2] != [g_i = g] would bias
 * the terms i = j; they are corrected (the diagonal correction of a U-statistic): with a1 = (1 -
 * Q) / (P - Q), a0 = -Q / (P - Q) (the two values of c) and q_i = y_i+^T K y_i- (per device:
 * pos and neg noise are independent, so E q_i = h_i+^T K h_i-),
 *     num_g = pos_g^T K neg_g - (a1^2 - a1) sum_{r_i = g} q_i - (a0^2 - a0) sum_{r_i != g} q_i,
 * likewise den_g with q_i = (1^T y_i+)(1^T y_i-). Both are then exactly unbiased (for the
 * devices' own examples, including each device's own positive-negative pairs); the ratio is
 * consistent. ROC points TPR_j = C_j / P_g, FPR_j = D_j / N_g as in roc.h (clipped for display).
 *
 * Intervals (delta method, conditional on the devices' examples: the randomness is the GRR's and
 * the Laplace noise's). A quantity linearized as L = sum_g w_g^T H_g is a sum over devices of
 *     l_i = v_{r_i}^T y_i,  v_g = (w_g - Q W) / (P - Q),  W = sum_g w_g,
 * independent across devices, so Var L = sum_i Var l_i = sum_i E l_i^2 - (E l_i)^2. The first
 * sum is estimated by sum_g v_g^T M_g v_g (M_g = sum_{r_i = g} y_i y_i^T); the second, sum_i
 * (w_{g_i}^T h_i)^2, unbiasedly by sum_g c_{i,g} ((w_g^T y_i)^2 - s² |w_g|^2) summed over i,
 *     = sum_g [w_g^T M_g w_g - Q w_g^T M w_g - s² |w_g|^2 (n_g - Q n)] / (P - Q)
 * (M = sum_g M_g, n_g reports in reported group g, n = sum n_g). So the aggregate keeps, per
 * reported group, n_g, S_g and M_g (a 2B x 2B matrix): all sums, mergeable. AUC_g uses w = the
 * gradient of A_g in H_g; a gap A_g - A_h uses w_g = grad A_g, w_h = -grad A_h. Interval =
 * estimate -+ z sd, z = Phi^-1((1 + c) / 2).
 *
 * Undefined (never NaN or Inf; reason says why): no reports; a group whose estimated positives
 * or negatives (or pair count den_g) are not above 0 (a group with no positives or no negatives,
 * or too few reports for the noise), and every gap involving it. A variance estimate that is not
 * positive leaves the estimate defined but its interval not (ci_valid 0). Small samples are
 * flagged: the AUC's sd above 0.1, or P_g or N_g within 5 of their sds from 0 (small_sample,
 * and DPM_CI_SMALL_N in the ci flags).
 *
 * Unbinned AUC per group (the binning bias is 1-5x the pooled one and moves gaps by up to 0.008):
 * roc.h's unbinned kernel K_u in place of K, with the same diagonal correction (q_i = y+^T K_u
 * y-) and the same delta method; its intervals as roc.h's: the bias-aware interval with the
 * interpolation bound of H_g's counts (plus the bound's own noise sd, through var_linear), and
 * sd² = the noise variance + the within-bin order variance (unbinned_ci: the group's examples'
 * exact AUC) or + the sampling variance (unbinned_ci_total: the group's model AUC). A gap's bound
 * is the sum of its two groups' bounds (conservative: the two errors are usually alike and
 * cancel in part).
 *
 * Flags (estimate/ci_flags.h) on every interval: DPM_CI_CLASS_NOISE by Fieller's g = z² (P_sd² /
 * P² + N_sd² / N²); DPM_CI_FEW_EVENTS below PROB_NORMAL_MIN_EVENTS effective events, the jump
 * of one event being the larger of one Laplace unit in the most influential cell, |v| max, and
 * one GRR move of a report of root-mean-square histogram, sqrt(w^T (M / n) w) / (P - Q) (the
 * Poisson-aware interval then); DPM_CI_BOUND, DPM_CI_NO_BOUND as roc.h. Tests:
 * tests/stat/test_roc_groups_coverage.c (and the unbinned and large-ε cases there). */
#ifndef DPM_HOST_ESTIMATE_ROC_GROUPS_H
#define DPM_HOST_ESTIMATE_ROC_GROUPS_H

#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"
#include "estimate/pairwise.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_ROC_GROUPS_MAX DPM_MAX_GROUPS
#define DPM_ROC_GROUPS_MAX_BINS DPM_MAX_BINS
#define DPM_ROC_GROUPS_MAX_GAPS (DPM_ROC_GROUPS_MAX * (DPM_ROC_GROUPS_MAX - 1) / 2)

typedef struct {
    uint32_t groups, bins;
    double P, Q;      /* group GRR: keep / 2^32, other / 2^32 */
    double scale;     /* the histogram's discrete Laplace scale t, in counts (2 / ε_h) */
    double noise_var; /* s² of one cell of one report */
    double width[DPM_ROC_GROUPS_MAX_BINS]; /* bin widths (the unbinned AUC): 1 / bins unless set */
} dpm_roc_groups_params_t;

/* From the mechanism's integers (dpm_roc_hist_t: groups, group_grr.keep / other, bins.count,
 * lap.scale_num / scale_den). DPM_ERR_PARAM for groups outside [2, DPM_ROC_GROUPS_MAX], bins
 * outside [2, DPM_ROC_GROUPS_MAX_BINS], keep + (groups - 1) other != 2^32, keep <= other, or a
 * negative scale (0: noiseless, for tests). */
dpm_status_t dpm_roc_groups_params_init(dpm_roc_groups_params_t *p, uint32_t groups, uint32_t bins,
                                        uint32_t keep, uint32_t other, double scale);

/* The campaign's edges (as dpm_roc_params_set_edges: nedges = bins - 1, Q1.31, increasing),
 * for the unbinned AUC's bin widths. DPM_ERR_PARAM (p unchanged) otherwise. */
dpm_status_t dpm_roc_groups_params_set_edges(dpm_roc_groups_params_t *p, const uint32_t *edges_q31,
                                             uint32_t nedges);

/* Sums per reported group: reports n[g], S_g (sum[g * 2B + cell]) exactly, and M_g
 * (m2[g * (2B)^2 + row * 2B + col]) in doubles. Heap-allocated. */
typedef struct {
    uint32_t groups, bins;
    uint64_t reports;
    uint64_t n[DPM_ROC_GROUPS_MAX];
    int64_t *sum;
    double *m2;
} dpm_roc_groups_agg_t;

/* DPM_ERR_BUFFER if memory runs out. */
dpm_status_t dpm_roc_groups_agg_init(dpm_roc_groups_agg_t *a, uint32_t groups, uint32_t bins);
void dpm_roc_groups_agg_free(dpm_roc_groups_agg_t *a);
/* One report: its (reported) group < groups and bins values each of pos and neg. */
dpm_status_t dpm_roc_groups_agg_add(dpm_roc_groups_agg_t *a, uint32_t group, uint32_t bins,
                                    const int32_t *pos, const int32_t *neg);
dpm_status_t dpm_roc_groups_agg_merge(dpm_roc_groups_agg_t *dst, const dpm_roc_groups_agg_t *src);

typedef struct {
    int defined;
    const char *reason; /* "" when defined */
    int small_sample;
    int ci_valid; /* 0: the variance estimate was not positive (interval unset) */
    double P, N;  /* estimated positives and negatives of the group (unbiased) */
    double P_sd, N_sd;
    double auc, auc_clipped, sd, half, ci_lo, ci_hi; /* binned (ties 1/2) */
    /* unbinned (roc.h's auc_unbinned on the group's histogram): sd of the noise (GRR and
     * Laplace), the interpolation bound (with its own noise), the within-bin order and the
     * sampling variances; ci around the group's examples' exact AUC, ci_total around its
     * model's AUC */
    double auc_unbinned, auc_unbinned_clipped, unbinned_sd, unbinned_bound;
    double unbinned_within, unbinned_sampling, unbinned_half, unbinned_half_total;
    double unbinned_ci_lo, unbinned_ci_hi, unbinned_ci_total_lo, unbinned_ci_total_hi;
    unsigned ci_flags, unbinned_flags, unbinned_total_flags; /* estimate/ci_flags.h */
    double events, unbinned_events;                          /* effective randomization events */
    double tpr[DPM_ROC_GROUPS_MAX_BINS + 1], fpr[DPM_ROC_GROUPS_MAX_BINS + 1]; /* clipped */
    double tpr_sd[DPM_ROC_GROUPS_MAX_BINS + 1], fpr_sd[DPM_ROC_GROUPS_MAX_BINS + 1];
} dpm_roc_group_estimate_t;

typedef struct {
    uint32_t g, h; /* the gap is AUC_g - AUC_h, g < h */
    int defined;
    const char *reason;
    int small_sample;
    int ci_valid;
    double gap, sd, half, ci_lo, ci_hi;
    double gap_unbinned, unbinned_sd, unbinned_bound, unbinned_half, unbinned_half_total;
    double unbinned_ci_lo, unbinned_ci_hi, unbinned_ci_total_lo, unbinned_ci_total_hi;
    unsigned ci_flags, unbinned_flags, unbinned_total_flags;
    double events, unbinned_events;
} dpm_roc_gap_estimate_t;

typedef struct {
    uint32_t groups, bins;
    uint64_t reports;
    double z;
    dpm_roc_group_estimate_t group[DPM_ROC_GROUPS_MAX];
    uint32_t ngaps; /* groups (groups - 1) / 2, in the order (0,1), (0,2), ..., (1,2), ... */
    dpm_roc_gap_estimate_t gap[DPM_ROC_GROUPS_MAX_GAPS];
} dpm_roc_groups_estimate_t;

/* Every group's ROC and AUC and every pairwise gap at confidence c in (0, 1). DPM_ERR_PARAM on
 * bad arguments or a params / aggregate mismatch; DPM_ERR_BUFFER if memory runs out. Undefined
 * parts are DPM_OK with their defined = 0. */
dpm_status_t dpm_roc_groups_estimate(const dpm_roc_groups_params_t *p,
                                     const dpm_roc_groups_agg_t *a, double confidence,
                                     dpm_roc_groups_estimate_t *est);

/* Every AUC gap at once (estimate/pairwise.h): simultaneous intervals at confidence in (0, 1)
 * for all gaps AUC_g - AUC_h, which are distinguishable, and the largest |gap| with an interval
 * that accounts for its selection. The AUCs' covariance comes from the same variance estimator
 * as the gaps' sds (a quadratic form in the gradients, so Cov(A_g, A_h) = (sd_g^2 + sd_h^2 -
 * sd_gap^2) / 2 exactly); a group without an interval (undefined or ci_valid 0) leaves its gaps
 * without one. DPM_ERR_PARAM on bad arguments. */
dpm_status_t dpm_roc_groups_pairwise(const dpm_roc_groups_estimate_t *est, double confidence,
                                     dpm_pairwise_t *out);

/* Linear statistics of the per-group histograms, for the estimators built on them
 * (roc_groups_prc.h): the debiased H_g, and the variance of L = sum_g w_g^T H_g by the GRR-aware
 * formula above (w: groups x 2B, pos then neg per group; zero rows: groups not used), with the
 * jump of one randomization event (Laplace unit or GRR move) for few-event intervals. Open
 * needs a->reports > 0 (DPM_ERR_PARAM otherwise; DPM_ERR_BUFFER if memory runs out); p and a
 * must outlive the handle. */
typedef struct dpm_roc_groups_lin dpm_roc_groups_lin_t;
dpm_status_t dpm_roc_groups_lin_open(const dpm_roc_groups_params_t *p,
                                     const dpm_roc_groups_agg_t *a, double confidence,
                                     dpm_roc_groups_lin_t **out);
const double *dpm_roc_groups_lin_hist(const dpm_roc_groups_lin_t *l, uint32_t g);
double dpm_roc_groups_lin_var(dpm_roc_groups_lin_t *l, const double *w, double *jump);
void dpm_roc_groups_lin_close(dpm_roc_groups_lin_t *l);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_ROC_GROUPS_H */
