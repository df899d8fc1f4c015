/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist in the two-aggregator mode (central DP): per-group AUCs and their gaps from per-group
 * label histograms that the devices sent exactly, as Prio3 shares, and that each of the two
 * aggregators noised once before release. Host only, doubles; the simulator uses it today and
 * the leader will (issue 31: the DAP roles).
 *
 * What a device sends: its own group's histogram, positives and negatives per score bin (a
 * Prio3 SumVec of length groups x 2 x bins: the other groups' entries are 0), at most
 * max_examples examples in all. Nothing is noised on the device.
 *
 * The noise: each aggregator adds to every entry of its aggregate share an independent
 * discrete Laplace of scale t = sensitivity / ε (the SDK's exact sampler, dpm_laplace_init with
 * that sensitivity and the task's Q16.16 ε: no rounding enters the pmf), so each cell of the
 * released sum carries 2 draws (estimate/roc.h with central_draws = 2).
 *
 * Privacy unit: one device's whole contribution in one period, its group included. Sensitivity:
 * two devices' vectors, each with at most m = max_examples examples, differ in L1 by at most
 * 2m (all of one's examples leave their cells, all of the other's arrive, possibly in another
 * group), so sensitivity = 2m gives ε-DP against replacing a device by any other, and so
 * against adding or removing one (L1 <= m). This is at least as strong as the local-DP
 * roc_hist unit (one example's label, and the group by GRR). Trust model: ε-DP for the released
 * sums as long as ONE aggregator is honest (its noise alone suffices); if both collude they see
 * every device's exact histogram.
 *
 * The hybrid (dpm_roc_central_params_set_local): before sending, the device also flips each
 * example's label by binary randomized response at ε0 (independently per example, probability
 * q = other / 2^32 of the SDK's dpm_rr_init). Two guarantees, two units, two trust models:
 *   central ε: one DEVICE (everything above), while one aggregator is honest; the flips only
 *     post-process what it protects;
 *   ε0: one EXAMPLE's LABEL, ε0-LDP, even if both aggregators collude (they then see the
 *     device's histogram of flipped labels). Not covered by ε0: the example's score bin, the
 *     device's count per bin (so the bin totals n_b) and its group: those only the central ε
 *     protects.
 * The estimator undoes the flips per bin and adds their binomial variance (roc.h).
 *
 * Estimates and intervals. Each group's AUC is dpm_roc_estimate on its own sums (the group is
 * exact: no GRR to undo), with the central noise variance 2 s² per cell (and, in the hybrid, the
 * flips undone and their variance added): `ci` (noise only: the aggregators' and the flips')
 * covers the devices' own binned AUC, `ci_total` adds DeLong's sampling variance (the group's
 * examples as independent draws of its score distribution), the unbinned twins cover the
 * model's AUC. Groups are independent (their own devices, their own noise), so a gap's variance
 * is the sum of the two groups'; its interval is dpm_ci_halfwidth's (few-events aware; the
 * unbinned gap's with the two interpolation bounds added). Every gap at once, with the largest
 * gap's selection-aware interval: dpm_roc_central_pairwise (estimate/pairwise.h, Sigma
 * diagonal). Each group's TPR and FPR at a threshold are its estimate's tpr[j] and fpr[j] with
 * their noise sd (dpm-sim's roc_hist_2agg `metrics`). */
#ifndef DPM_HOST_ESTIMATE_ROC_CENTRAL_H
#define DPM_HOST_ESTIMATE_ROC_CENTRAL_H

#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"
#include "dpm/types.h"
#include "estimate/pairwise.h"
#include "estimate/roc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_ROC_CENTRAL_MAX_GROUPS 8u
#define DPM_ROC_CENTRAL_MAX_GAPS                                                                   \
    (DPM_ROC_CENTRAL_MAX_GROUPS * (DPM_ROC_CENTRAL_MAX_GROUPS - 1u) / 2u)
#define DPM_ROC_CENTRAL_AGGREGATORS 2u
/* max_examples: the Prio3 SumVec's entries are 8-bit counts (a device's count in one cell). */
#define DPM_ROC_CENTRAL_MAX_EXAMPLES 255u

/* The squared L2 sensitivity of one device's report of at most m examples (all of them moved
 * from one cell to another: m^2 + m^2), what a discrete Gaussian of this mechanism is calibrated
 * to (the simulator's campaigns and the planner), the unit the Laplace noise's L1 sensitivity 2m
 * protects. */
static inline uint64_t dpm_roc_central_l2sq(uint32_t m)
{
    return 2u * (uint64_t)m * m;
}

typedef struct {
    uint32_t groups, bins;
    uint32_t max_examples; /* m: the most examples one device's report holds */
    uint64_t sensitivity;  /* 2m */
    dpm_eps_t eps;         /* the task's central ε, Q16.16 */
    uint64_t scale_num;    /* t = scale_num / scale_den = sensitivity 2^16 / eps, reduced */
    uint64_t scale_den;
    /* 0: discrete Laplace of scale t. >= 1: discrete Gaussian of this variance per aggregator
     * instead (zCDP; scale_num / scale_den unused), for squared L2 sensitivity 2 m^2 */
    uint64_t sigma2;
    /* The hybrid (dpm_roc_central_params_set_local): each device flipped each example's label
     * by binary randomized response at ε0 before sending. 0: no flips. */
    dpm_eps_t local_eps;  /* ε0, Q16.16 */
    double label_flip;    /* q = other / 2^32 of the SDK's dpm_rr_init(ε0), exactly */
    dpm_roc_params_t roc; /* per group: bins, edges, the noise variance, 2 draws per cell, q */
} dpm_roc_central_params_t;

/* groups in [1, DPM_ROC_CENTRAL_MAX_GROUPS], bins in [2, DPM_MAX_BINS], max_examples in
 * [1, DPM_ROC_CENTRAL_MAX_EXAMPLES], eps in (0, DPM_EPS_MAX_Q16] (the SDK's dpm_laplace_init
 * checks the pair), edges as dpm_roc_params_set_edges (nedges = bins - 1; NULL: uniform).
 * DPM_ERR_PARAM (p untouched) otherwise; *why (if not NULL) names the cause. */
dpm_status_t dpm_roc_central_params_init(dpm_roc_central_params_t *p, uint32_t groups,
                                         uint32_t bins, const uint32_t *edges_q31,
                                         uint32_t max_examples, dpm_eps_t eps, const char **why);
/* The same with each aggregator's discrete Gaussian of variance sigma2 in [1, 2^30] (the SDK's
 * dpm_dgauss) instead of Laplace; eps: the (ε, δ)-DP ε a device is charged for it. */
dpm_status_t dpm_roc_central_params_init_gauss(dpm_roc_central_params_t *p, uint32_t groups,
                                               uint32_t bins, const uint32_t *edges_q31,
                                               uint32_t max_examples, dpm_eps_t eps,
                                               uint64_t sigma2, const char **why);
/* The hybrid: the devices flip each example's label by the SDK's binary randomized response
 * (dpm_rr_init(eps0): kept with probability keep / 2^32, flipped with q = other / 2^32) before
 * sending. Stores eps0 and q and sets p->roc's label flip (roc.h: the debias and the flips'
 * variance). eps0 = 0 resets to no flips. DPM_ERR_PARAM (p untouched, *why names the cause)
 * when dpm_rr_init refuses eps0. */
dpm_status_t dpm_roc_central_params_set_local(dpm_roc_central_params_t *p, dpm_eps_t eps0,
                                              const char **why);

typedef struct {
    uint32_t g, h;
    int defined;    /* both groups' estimates valid */
    double gap, sd; /* AUC_g - AUC_h (binned), noise only: around the devices' binned gap */
    double lo, hi;
    unsigned flags;
    double gap_total_sd; /* noise + sampling: around the groups' score distributions' gap */
    double total_lo, total_hi;
    unsigned total_flags;
    double gap_unbinned, unbinned_sd; /* the unbinned twins, around the model AUCs' gap */
    double unbinned_lo, unbinned_hi;
    unsigned unbinned_flags;
} dpm_roc_central_gap_t;

typedef struct {
    uint32_t groups, ngaps;
    dpm_roc_estimate_t group[DPM_ROC_CENTRAL_MAX_GROUPS];
    dpm_roc_central_gap_t gap[DPM_ROC_CENTRAL_MAX_GAPS]; /* (0,1), (0,2), ..., (G-2,G-1) */
} dpm_roc_central_estimate_t;

/* The estimate of per-group sums agg[groups] (each already noised by both aggregators) at
 * confidence c in (0, 1). DPM_ERR_PARAM on NULL, a confidence outside (0, 1) or an aggregate
 * whose bins differ from p's. A group without positives or negatives gives valid = 0 there
 * and undefined gaps. */
dpm_status_t dpm_roc_central_estimate(const dpm_roc_central_params_t *p, const dpm_roc_agg_t *agg,
                                      double confidence, dpm_roc_central_estimate_t *est);

/* Every gap at once (binned, noise only) with simultaneous intervals and the largest gap's
 * selection-aware interval (dpm_pairwise_compare, groups independent). groups >= 2. */
dpm_status_t dpm_roc_central_pairwise(const dpm_roc_central_estimate_t *est, double confidence,
                                      dpm_pairwise_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_ROC_CENTRAL_H */
