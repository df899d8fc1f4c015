/* SPDX-License-Identifier: Apache-2.0 */
/* Every pairwise difference of d estimates (group means of a tuple campaign, group AUCs of a
 * roc_hist campaign with groups), with intervals that hold for all pairs at once, which pairs
 * the data tell apart, and the largest |difference| with an interval that accounts for having
 * been picked as the largest. Host only: doubles. Used by disparity.h (dpm_disp_pairwise) and
 * roc_groups.h (dpm_roc_groups_pairwise); the collector and dpm-sim print what it returns.
 *
 * Why. Reading d(d-1)/2 pointwise 95 % intervals together, or printing the largest estimated
 * gap with its own interval, is a selection: with four groups the pair with the largest |D^|
 * is often not the pair with the largest |D|, its |D^| is biased upward, and its own interval
 * covered its true gap in only 82-84 % of runs on real data (issue 28). Here:
 *
 * Model. The estimates theta^ (d of them) are approximately N(theta, Sigma), Sigma their
 * estimated covariance (the estimators' delta method). Pair k = (g, h), g < h:
 *     D_k = theta_g - theta_h,  D^_k = theta^_g - theta^_h,  sd_k^2 = S_gg + S_hh - 2 S_gh.
 *
 * Simultaneous intervals D^_k -+ c sd_k, c the `confidence` quantile of max_k |T_k|, T_k =
 * (D^_k - D_k) / sd_k, under N(0, Sigma) (the max-|t| method; with equal variances and no
 * correlation it is Tukey's studentized range / sqrt 2). Then Pr[every D_k in its interval] =
 * confidence, to the normal approximation. c is found by Monte Carlo: DPM_PAIRWISE_DRAWS draws
 * of N(0, Sigma) (Cholesky factor, standard normals from a FIXED seed, so the answer is a
 * function of the input alone: two collectors answer byte for byte the same), their max |T| in
 * a histogram of width DPM_PAIRWISE_BIN, c the upper edge of the bin holding the ceil(confidence
 * x draws)-th smallest. Its Monte Carlo error is a level error of sd sqrt(c (1 - c) / draws)
 * (0.0015 at 0.95). c is never above the Bonferroni value z_{1 - (1 - confidence) / (2 m)} over
 * the m pairs with an interval, which holds without any Monte Carlo; Bonferroni alone is used
 * when Sigma is not positive semi-definite (an estimated covariance can fail to be) or when the
 * draws cannot resolve the quantile ((1 - confidence) x draws < DPM_PAIRWISE_MIN_TAIL).
 *
 * Distinguishable: the simultaneous interval excludes 0. With probability >= confidence no pair
 * is called distinguishable wrongly (and each one's sign is right).
 *
 * The largest |difference| theta* = max_k |D_k| over ALL pairs (defined only when every pair has
 * an interval). On the event that every D_k lies in its simultaneous interval [lo_k, hi_k],
 * |D_k| lies in [L_k, U_k] (L_k = 0 if lo_k <= 0 <= hi_k, else min(|lo_k|, |hi_k|); U_k =
 * max(|lo_k|, |hi_k|)), so theta* lies in [max_k L_k, max_k U_k]: coverage >= confidence
 * (conservative: measured 0.946 (all gaps 0: it is then the simultaneous coverage) to 0.996 at
 * 0.95, tests/stat/test_disparity_selection.c and `make repro`, table selection_coverage). The
 * candidates for the largest pair are the k with U_k >= max_j L_j: on that
 * event the truly largest pair is among them; one candidate means the data single it out.
 * Stability: a parametric bootstrap on the same draws, theta^ + N(0, Sigma): per pair, the share
 * of draws in which it has the largest |difference|. The estimated largest pair's share is how
 * often a rerun of the campaign would name the same pair IF the truth were the estimates. The
 * estimates are more spread out than the truth, so where gaps are close it is optimistic: over
 * 3,000 runs (`make repro`, table selection_old) its mean was 0.40 where two independent runs
 * named the same pair 0.23 of the time (four close groups), 0.55 against 0.43 (the demo's groups),
 * 0.39 against 0.16 (eight groups); 0.98 against 0.99 for four well spread AUCs. Read it as an
 * upper bound on how reproducible the ranking is, not as a probability. */
#ifndef DPM_HOST_PAIRWISE_H
#define DPM_HOST_PAIRWISE_H

#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_PAIRWISE_MAX DPM_MAX_GROUPS
#define DPM_PAIRWISE_MAX_PAIRS (DPM_PAIRWISE_MAX * (DPM_PAIRWISE_MAX - 1) / 2)
#define DPM_PAIRWISE_DRAWS 20000u    /* Monte Carlo draws of N(0, Sigma) */
#define DPM_PAIRWISE_BIN (1.0 / 512) /* histogram resolution of max |T| */
#define DPM_PAIRWISE_HIST_MAX 8.0    /* max |T| above this: Bonferroni */
#define DPM_PAIRWISE_MIN_TAIL 50.0   /* draws beyond the quantile needed to resolve it */
#define DPM_PAIRWISE_SEED UINT64_C(0x64706d7061697273) /* "dpmpairs": fixed, see above */

/* What is compared: d estimates, which of them exist, and their covariance. */
typedef struct {
    uint32_t d;                                     /* 2 .. DPM_PAIRWISE_MAX */
    int valid[DPM_PAIRWISE_MAX];                    /* 0: no estimate (its pairs have none) */
    double est[DPM_PAIRWISE_MAX];                   /* theta^ (finite where valid) */
    double cov[DPM_PAIRWISE_MAX][DPM_PAIRWISE_MAX]; /* Sigma, symmetric, finite where valid */
} dpm_pairwise_in_t;

typedef enum {
    DPM_PAIRWISE_NONE = 0,       /* no pair has an interval */
    DPM_PAIRWISE_EXACT = 1,      /* one pair: the normal quantile itself */
    DPM_PAIRWISE_MAX_T = 2,      /* max-|t| by Monte Carlo */
    DPM_PAIRWISE_BONFERRONI = 3, /* Bonferroni (see above for when) */
} dpm_pairwise_method_t;

typedef struct {
    uint32_t g, h;        /* the difference is theta_g - theta_h, g < h */
    int defined;          /* both estimates exist and sd > 0 */
    int distinguishable;  /* the simultaneous interval excludes 0 */
    int candidate;        /* may be the pair with the largest |difference| (largest_defined) */
    double diff, sd;      /* D^ and its sd */
    double lo, hi;        /* simultaneous interval */
    double largest_share; /* bootstrap share of draws where it is the largest (largest_defined;
                           * NaN when Sigma is not PSD: no draws) */
} dpm_pairwise_pair_t;

typedef struct {
    double confidence;
    uint32_t d, npairs; /* npairs = d(d-1)/2, in order (0,1), (0,2), ..., (d-2,d-1) */
    uint32_t defined;   /* pairs with an interval (the family the level holds over) */
    uint32_t distinguishable;
    dpm_pairwise_method_t method;
    const char *method_name; /* one line, for the JSON */
    double crit;             /* the simultaneous half-width in sds */
    double crit_pointwise;   /* z_{(1 + confidence) / 2}: one pair chosen in advance */
    double crit_bonferroni;
    dpm_pairwise_pair_t pair[DPM_PAIRWISE_MAX_PAIRS];
    /* the largest |difference| over all pairs */
    int largest_defined;
    const char *largest_reason;    /* why not ("" when defined) */
    uint32_t largest_pair;         /* index of the pair with the largest |D^| (a selection) */
    double largest_abs;            /* its |D^|: biased upward by the selection */
    double largest_lo, largest_hi; /* interval for max_k |D_k| (coverage >= confidence) */
    uint32_t candidates;           /* pairs that may be the largest */
    double stability;              /* the largest pair's bootstrap share (optimistic: above) */
} dpm_pairwise_t;

/* Compare every pair of in at confidence in (0, 1) into out. DPM_ERR_PARAM (out untouched) for
 * NULL, d outside [2, DPM_PAIRWISE_MAX], a confidence outside (0, 1), or a valid estimate or
 * covariance entry that is not finite, a negative variance, or an asymmetric Sigma. Fewer than
 * two valid estimates is DPM_OK with no pair defined (method NONE). */
dpm_status_t dpm_pairwise_compare(const dpm_pairwise_in_t *in, double confidence,
                                  dpm_pairwise_t *out);

/* The index of pair (g, h), g < h < d, in dpm_pairwise_t.pair. */
uint32_t dpm_pairwise_index(uint32_t d, uint32_t g, uint32_t h);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_PAIRWISE_H */
