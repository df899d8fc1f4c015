/* SPDX-License-Identifier: Apache-2.0 */
/* Server side of dpauc (sdk: dpm/expert/dpauc.h), the FHAUC paper's DPAUC baseline: from the sum of
 * many devices' noised TP/FP/TN/FN at N thresholds to an AUC, by either server variant the
 * literature leaves open (the choice changes the error 3-5x,
 * sdk/docs/dpauc.md §The benchmarked variant, sdk/docs/dpauc.md §Re-simulation):
 *
 *   A (Sun et al.'s published code): every summed count clamped at 0; per threshold
 *     fpr = FP / (FP + TN), tpr = TP / (TP + FN), the point (0, 0) where a denominator is 0;
 *     points sorted by fpr ascending (ties by tpr); trapezoid through them, no end points
 *     added (sklearn.metrics.auc). Always in [0, 1]; biased (the clamp; it collapses towards
 *     0.5 when the noise dominates).
 *   B (what FHAUC's tables match): unclamped per-threshold rates with their own noisy
 *     denominators, in threshold order (highest threshold first), trapezoid
 *     sum_j (fpr_j - fpr_{j-1}) (tpr_j + tpr_{j-1}) / 2. Heavy-tailed when a class total is not
 *     far above the noise (the paper's 112.9 +- 1006).
 *
 * Both equal the FHAUC paper's Eq. 2 on noiseless counts of a grid whose lowest threshold admits
 * every example and whose highest none (the Appendix Z rows are unit tests of this).
 *
 * Undefined (never NaN or Inf): no reports; B when a noisy class total TP + FN or FP + TN is
 * exactly 0 at some threshold (`reason` says which). Small samples are flagged (both variants)
 * when a noisy class total is within 10 noise standard deviations of 0 at some threshold: B's
 * ratios are then heavy-tailed and A's clamps bite. The noise of one summed count has variance
 * reports * s², s² = the discrete Laplace variance of the devices' scale (prob_dlap_var). */
#ifndef DPM_HOST_ESTIMATE_DPAUC_H
#define DPM_HOST_ESTIMATE_DPAUC_H

#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_DPAUC_EST_MAX_N 128 /* the wire's largest N (sdk/proto/dpm.options) */

/* Sums of reports: exact integers. Threshold i as on the device (increasing thresholds). */
typedef struct {
    uint32_t n;
    uint64_t reports;
    int64_t tp[DPM_DPAUC_EST_MAX_N], fp[DPM_DPAUC_EST_MAX_N];
    int64_t tn[DPM_DPAUC_EST_MAX_N], fn[DPM_DPAUC_EST_MAX_N];
} dpm_dpauc_agg_t;

/* n in [1, DPM_DPAUC_EST_MAX_N]. */
dpm_status_t dpm_dpauc_agg_init(dpm_dpauc_agg_t *a, uint32_t n);
/* Add one report's 4n values (n must match). */
dpm_status_t dpm_dpauc_agg_add(dpm_dpauc_agg_t *a, uint32_t n, const int32_t *tp, const int32_t *fp,
                               const int32_t *tn, const int32_t *fn);
dpm_status_t dpm_dpauc_agg_merge(dpm_dpauc_agg_t *dst, const dpm_dpauc_agg_t *src);

/* The devices' noise: scale in counts (4N / ε published, 2N / ε tight; from the mechanism's
 * dpm_laplace_t as scale_num / scale_den). 0: noiseless (tests). */
typedef struct {
    uint32_t n;
    double scale;
    double noise_var; /* s² of one count of one report */
} dpm_dpauc_params_t;

dpm_status_t dpm_dpauc_params_init(dpm_dpauc_params_t *p, uint32_t n, double scale);

/* Variant A's order of the ROC points (fpr, tpr) it integrates: by fpr, then by tpr; < 0, 0 or
 * > 0 as qsort wants (mech/auc.c sorts its bound's points the same way). */
int dpm_dpauc_point_order(double fpr_a, double tpr_a, double fpr_b, double tpr_b);

typedef enum {
    DPM_DPAUC_SERVER_A = 0, /* Sun et al.'s code: clamp, sort by fpr, trapezoid */
    DPM_DPAUC_SERVER_B = 1, /* unclamped per-threshold rates, threshold order */
} dpm_dpauc_server_t;

typedef struct {
    int defined;        /* 0: auc and the points are 0; reason says why */
    const char *reason; /* static English, "" when defined */
    int small_sample;   /* see the top of this file */
    double auc;
    uint32_t points;                                           /* = n */
    double fpr[DPM_DPAUC_EST_MAX_N], tpr[DPM_DPAUC_EST_MAX_N]; /* in the order integrated */
    double min_class_total; /* smallest noisy TP + FN or FP + TN over the thresholds */
    double class_total_sd;  /* the noise sd of such a total: sqrt(2 reports s²) */
} dpm_dpauc_estimate_t;

/* The AUC by server variant v. DPM_ERR_PARAM for NULL, a params / aggregate mismatch or an
 * unknown variant; an undefined estimate is DPM_OK with est->defined = 0. */
dpm_status_t dpm_dpauc_estimate(const dpm_dpauc_params_t *p, const dpm_dpauc_agg_t *a,
                                dpm_dpauc_server_t v, dpm_dpauc_estimate_t *est);

/* The FHAUC paper's Eq. 2 on exact counts at thresholds in DEScending order (tp[0] = fp[0] = 0 on
 * the highest, tp[n-1] = P, fp[n-1] = Q on the lowest): sum_j (TP_j + TP_{j-1}) (FP_j -
 * FP_{j-1}) / (2 TP_{n-1} FP_{n-1}). DPM_ERR_UNDEFINED when TP_{n-1} or FP_{n-1} is 0. */
dpm_status_t dpm_dpauc_eq2(const uint64_t *tp_desc, const uint64_t *fp_desc, uint32_t n,
                           double *auc);

/* The exact AUC of scores with labels 0/1 (Mann-Whitney, ties 1/2: scikit-learn's
 * roc_auc_score). O(n^2); for tests and ground truth. DPM_ERR_UNDEFINED when a class is
 * empty. */
dpm_status_t dpm_auc_mann_whitney(const double *score, const int *label, uint32_t n, double *auc);

/* Thresholds i / (N - 1), i = 0 .. N - 1, in Q1.31 rounded down (0 and 2^31 included): the
 * FHAUC paper's linspace grid, increasing, as a campaign's `thresholds = N`. N in [2, 128]. */
dpm_status_t dpm_dpauc_linspace(uint32_t n, uint32_t *thresholds);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_DPAUC_H */
