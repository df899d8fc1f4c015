/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group average precision and calibration error of a roc_hist campaign with groups, and the
 * comparisons Fairlearn's MetricFrame offers (by_group, difference, ratio), privately and with
 * intervals that account for the DP noise, the group GRR and the selection of the extreme
 * groups. Host only: doubles. The collector and dpm-sim share it.
 *
 * By group. Each group's AP and ECE are those of pr_calibration.h on the group's debiased
 * histogram H_g (roc_groups.h), their variances the GRR-aware variance of their linearization
 * (dpm_roc_groups_lin_var with the gradients of dpm_prc_ap_of / dpm_prc_ece_of), so the noise of
 * the GRR mixing groups is in them. Flags as pr_calibration.h's: DPM_CI_CLASS_NOISE from the
 * relative variances of the group's totals (AP: P_g and the T_j weighted by their share; ECE:
 * M_g), few events from the largest jump (a Laplace unit or a GRR move), and ECE's bias bound
 * (DPM_CI_ABS_BIAS) with each bin's sd from the same variance. ci covers the group's own
 * examples' binned AP and ECE (noise); ci_total the model's on the group (noise + the sampling of
 * the group's examples: pr_calibration.h's multinomial term on H_g, and ECE's bound with each
 * bin's sd grown by its sampling sd).
 *
 * difference: every pair's difference at once (estimate/pairwise.h: simultaneous intervals from
 * the estimates' joint covariance, Cov(g, h) = (Var_g + Var_h - Var(g - h)) / 2 with Var(g - h)
 * from the same linearization, nonzero because the GRR mixes groups), and the largest
 * |difference| over all pairs (Fairlearn's difference(): max - min over groups) with an interval
 * that accounts for its selection (coverage >= the level: DPM_CI_CONSERVATIVE).
 * ratio: the same on the logarithms (Cov(log a, log b) = Cov(a, b) / (a b)); Fairlearn's ratio()
 * = min / max over groups = exp(-largest |log ratio|), its interval [exp(-hi), exp(-lo)].
 * Both need the joint normal law: a group whose interval is widened (few events; ECE's bias
 * bound, which the pairwise module's normal law does not hold) makes the comparison fall back on
 * "bonferroni": each group's own interval at level 1 - (1 - c) / G (so all hold at once with
 * probability >= c), the pairs' differences between their ends, the difference in [max_g lo_g -
 * min_h hi_h, max_g hi_g - min_h lo_h], the ratio in [min_g lo_g / max_h hi_h, min_g hi_g /
 * max_h lo_h] (coverage >= c: DPM_CI_CONSERVATIVE). A group with no claim or no interval leaves
 * the comparison undefined. ap_compare and ece_compare compare the groups' examples (the ci);
 * *_compare_total the model on the groups (the ci_total views, dpm_prc_group_total, with each
 * group's sampling variance added to the covariance's diagonal: the groups' examples are drawn
 * apart, on other devices). tests/stat/test_roc_groups_prc_coverage.c checks the coverage. */
#ifndef DPM_HOST_ESTIMATE_ROC_GROUPS_PRC_H
#define DPM_HOST_ESTIMATE_ROC_GROUPS_PRC_H

#include "estimate/pairwise.h"
#include "estimate/pr_calibration.h"
#include "estimate/roc_groups.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One group's AP or ECE. */
typedef struct {
    int defined;             /* 0: a total not positive (reason) */
    const char *reason;      /* "" when defined */
    double est;              /* unclipped */
    double sd, ci_lo, ci_hi; /* ci clipped to [0, 1]; NaN when the variance is not positive */
    double bound;            /* ECE: the bias bound of |.| (pr_calibration.h); AP: 0 */
    double events;           /* effective randomization events: var / jump² */
    double jump;             /* one event's largest move of the estimate (0: none matters) */
    unsigned flags;
    /* the model's: noise + the sampling of the group's examples */
    double var_sampling;
    double sd_total, ci_total_lo, ci_total_hi, bound_total;
    unsigned total_flags;
} dpm_prc_group_t;

/* One pair's difference est_g - est_h with an interval that holds with all others at once. */
typedef struct {
    uint32_t g, h;
    double diff, lo, hi;
    int distinguishable; /* the interval excludes 0 */
} dpm_prc_pair_t;

/* The comparisons of one metric over the groups (Fairlearn's difference() and ratio()). */
typedef struct {
    int defined;        /* 0: reason says why */
    const char *reason; /* "" when defined */
    const char *method; /* "max_t" (the joint normal law) or "bonferroni" (bounds, see above) */
    unsigned flags;     /* the claim of every interval here (DPM_CI_CONSERVATIVE: at least) */
    uint32_t npairs;
    dpm_prc_pair_t pair[DPM_PAIRWISE_MAX_PAIRS];     /* (0,1), (0,2), ..., simultaneous */
    double difference, difference_lo, difference_hi; /* max - min over groups */
    uint32_t difference_g, difference_h;             /* the pair that gives it (a selection) */
    int ratio_defined;
    const char *ratio_reason;
    double ratio, ratio_lo, ratio_hi; /* min / max over groups */
    uint32_t ratio_g, ratio_h;
} dpm_prc_compare_t;

typedef struct {
    uint32_t groups, bins;
    dpm_prc_group_t ap[DPM_ROC_GROUPS_MAX], ece[DPM_ROC_GROUPS_MAX];
    dpm_prc_compare_t ap_compare, ece_compare;             /* the groups' examples */
    dpm_prc_compare_t ap_compare_total, ece_compare_total; /* the model on the groups */
} dpm_roc_groups_prc_t;

/* Every group's AP and ECE and their comparisons at confidence c in (0, 1); the model's
 * comparisons (*_compare_total) only with totals = 1 (each comparison costs a Monte Carlo
 * critical value; 0 leaves them undefined with a reason, for dpm-sim whose items are the
 * examples'). DPM_ERR_PARAM on bad arguments, DPM_ERR_BUFFER if memory runs out; no reports is
 * DPM_OK with nothing defined. */
dpm_status_t dpm_roc_groups_prc(const dpm_roc_groups_params_t *p, const dpm_roc_groups_agg_t *a,
                                double confidence, int totals, dpm_roc_groups_prc_t *out);

/* The comparisons of per-group estimates e[0 .. groups) whatever produced them: cov their
 * covariance (groups x groups, row-major), or NULL for independent groups (the two-aggregator
 * mode: each group's sums are noised apart). Undefined with a reason when a group has no
 * interval with a claim; max_t or bonferroni as above. */
void dpm_prc_compare_groups(const dpm_prc_group_t *e, uint32_t groups, const double *cov,
                            double confidence, dpm_prc_compare_t *out);

/* The model's view of a group's estimate: its sd, interval, bound and flags the total ones (what
 * dpm_prc_compare_groups compares for *_compare_total). */
void dpm_prc_group_total(const dpm_prc_group_t *e, dpm_prc_group_t *out);

/* A group's AP (ece 0) or ECE (ece 1) from pr_calibration.h's estimate of its own sums (the
 * two-aggregator mode's groups). */
void dpm_prc_group_of(const dpm_prc_estimate_t *x, int ece, dpm_prc_group_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_ROC_GROUPS_PRC_H */
