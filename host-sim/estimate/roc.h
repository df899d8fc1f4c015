/* SPDX-License-Identifier: Apache-2.0 */
/* Server-side estimator of the roc_hist mechanism (sdk: dpm/expert/roc_hist.h): from the sum of
 * many devices' noised per-score-bin label histograms to a ROC curve, its AUC, variances and
 * confidence intervals. Host only: doubles throughout. The collector and dpm-sim share it.
 *
 * Input. Every report holds, per bin b = 0 .. B-1 (bin b: edges[b-1] <= score < edges[b]),
 * y_b = pos_b + Z and v_b = neg_b + Z', every Z an independent discrete Laplace of scale t
 * (t = 2 / ε counts: Pr[Z = z] ∝ p^|z|, p = exp(-1/t)), one variance per cell and report
 *     s² = 2 p / (1 - p)².
 * The aggregate (dpm_roc_agg_t) keeps the exact integer sums Y_b, V_b over n reports; their
 * noise has variance n s² per cell, independent across cells. Central DP (two aggregators,
 * dpm_roc_params_init_central): the reports are exact and each aggregator adds one draw of
 * its own scale to every cell, so the noise variance is k s² per cell, whatever n; every
 * formula below holds with n s² read as that.
 *
 * Flipped labels (the hybrid, label_flip = q in (0, 1/2); roc_central.h's ε0): each device
 * flipped each example's label independently with probability q before sending exact counts,
 * then the aggregators noised the sums. Per bin, with true counts pos_b, neg_b, n_b = their sum:
 *     Y_b = Bin(pos_b, 1 - q) + Bin(neg_b, q) + Z,  V_b = n_b - (Y_b - Z) + Z'.
 * The estimator first undoes the flips (the inverse of [[1-q, q], [q, 1-q]], linear, unbiased):
 *     x_b = ((1 - q) Y_b - q V_b) / (1 - 2q),  u_b = ((1 - q) V_b - q Y_b) / (1 - 2q),
 * and every estimate below is taken on x, u instead of the sums (x_b + u_b = Y_b + V_b). Their
 * noise, given the examples: independent across bins, with covariance per bin
 *     Sigma_b = q (1 - q) / (1 - 2q)² n_b [[1, -1], [-1, 1]]            (the flips: Bin's
 *             + ns2 / (1 - 2q)² [[(1-q)² + q², -2q(1-q)], [-2q(1-q), (1-q)² + q²]]  variance)
 * (ns2 = the summed cell's noise variance; n_b estimated by Y_b + V_b, unbiased, clipped at
 * 0). Every variance below is then sum_b g_b^T Sigma_b g_b, g_b the estimate's gradient in
 * (x_b, u_b), in place of ns2 sum_b |g_b|² (the TPR band: Var C_j, Var P from the diagonal;
 * Fieller's g from Var P and Var N); a randomization event (the jump below) is a unit of central
 * noise, moving (x_b, u_b) by ((1-q), -q) / (1-2q) or (-q, (1-q)) / (1-2q), or one flip,
 * moving it by (1, -1) / (1-2q), whichever moves the estimate most. The intervals then cover
 * as stated below with "noise" meaning the aggregators' noise AND the flips: `ci` the devices'
 * own binned AUC, `ci_total` the model's. q = 0 computes exactly what the estimator computed
 * without flips (tests/unit/test_roc_label_flip.c, bit for bit).
 *
 * Estimates come from the noised sums themselves, which can be negative: every quantity below
 * is a ratio of polynomials in them whose numerator is unbiased (the noise is independent
 * across cells and classes), so the AUC and the TPR/FPR points are not pulled down where bins
 * are sparse. (An earlier version projected first; the projection removes mass from the dense
 * top bins and evaluated the variance at the projected counts, smallest exactly where the error
 * was largest: 64 bins, 2,000 devices, ε = 0.5 covered 84 % instead of 95 %.)
 *
 * Display only (no privacy cost: a function of the noised sums): each class's vector is also
 * projected onto {x >= 0, sum x = sum y} (Euclidean projection onto the scaled simplex:
 * x_b = max(y_b - tau, 0), tau chosen so the total is kept), which gives a monotone ROC curve
 * in [0, 1] to draw (tpr_curve, fpr_curve). When every noised sum is >= 0 the projection is the
 * identity and the curve equals the estimates.
 *
 * ROC points at the bin edges: threshold j = 0 .. B (predict positive when bin >= j):
 *     TPR_j = C_j / P, FPR_j = D_j / N, C_j = sum_{b >= j} x_b, D_j = sum_{b >= j} u_b,
 * (x, u: the positive and negative sums, P = C_0, N = D_0), so point 0 is (1, 1) and point B
 * is (0, 0); threshold j >= 1 is the score edges[j - 1]. Reported clipped to [0, 1].
 *
 * AUC: the trapezoid rule through those points, equal to the Mann-Whitney statistic of the
 * binned scores with ties (same bin) counted 1/2:
 *     A = sum_b u_b (C_{b+1} + x_b / 2) / (P N).
 * Noiseless input gives exactly the binned AUC of the examples.
 *
 * Variances (delta method, evaluated at the noised sums). With placement values
 *     V10_b = (D'_b + u_b / 2) / N  (a positive in bin b: the share of negatives below it,
 *                                    D'_b = sum_{c < b} u_c, ties 1/2),
 *     V01_b = (C_{b+1} + x_b / 2) / P (a negative in bin b: the share of positives above it),
 * dA/dY_b = (V10_b - A) / P and dA/dV_b = (V01_b - A) / N, so
 *     var_noise(A) = n s² [ sum_b (V10_b - A)² / P² + sum_b (V01_b - A)² / N² ].
 * This is the variance around the AUC of the devices' own examples (the population truth
 * dpm-sim measures); `ci` uses it alone.
 * Sampling variance (DeLong from the binned counts: the examples as a sample of the model's
 * score distribution, examples independent):
 *     var_samp(A) = S10 / P + S01 / N, S10 = sum_b x_b (V10_b - A)² / (P - 1),
 *                                      S01 = sum_b u_b (V01_b - A)² / (N - 1)
 * (weights x_b, u_b clipped at 0).
 * `ci_total` uses var_noise + var_samp: an interval for the binned AUC of the score
 * distribution the examples were drawn from (examples within a device are treated as
 * independent: with per-device effects this is optimistic).
 *
 * The TPR band (pointwise, per threshold j): var_noise(TPR_j) by the delta method on C_j / P,
 * with Var C_j = (B - j) n s², Var P = B n s², Cov = Var C_j:
 *     var(TPR_j) = n s² [ (B - j)(1 - 2 TPR_j) + B TPR_j² ] / P²,
 * likewise FPR_j. tpr_lo/hi: TPR_j -+ z sd, z = Phi^-1((1 + c) / 2), clipped to [0, 1]:
 * POINTWISE coverage c at each threshold. tpr_lo_sim/hi_sim use z for level 1 - (1 - c) / m
 * (Bonferroni over the m = B - 1 interior thresholds): SIMULTANEOUS coverage >= c over all
 * interior thresholds. Both bands are vertical (in TPR) at the threshold; the FPR at that
 * threshold is estimated too (fpr, fpr_sd).
 *
 * Unbinned AUC (auc_unbinned). A targets the BINNED AUC: its within-bin pairs count 1/2, so it
 * differs from the examples' exact AUC by a quantization error that does not shrink with n
 * (1e5 binormal examples, 25 bins: about -0.0008, as large as the noise with 15 parties).
 * auc_unbinned resolves the within-bin pairs by taking each class's score density linear
 * within a bin. Bin b: width w_b, midpoint m_b (params: the campaign's edges; scores span
 * [0, 1]); at score m_b + r w_b, r in [-1/2, 1/2], positive density (x_b / w_b)(1 + a_b r),
 * negative (u_b / w_b)(1 + c_b r). With ∫∫_{r>s} 1 = 1/2, ∫∫_{r>s} r = 1/12, ∫∫_{r>s} s =
 * -1/12, ∫∫_{r>s} rs = 0 (over the unit square), the bin's pairs with positive > negative
 * number x_b u_b (1/2 + (a_b - c_b) / 12). The slope a_b = w_b² p'_b / x_b, p'_b the positive
 * density's slope: the central difference of the densities p_k = x_k / w_k,
 * (p_{b+1} - p_{b-1}) / (m_{b+1} - m_{b-1}), one-sided at the first and last bin
 * ((p_1 - p_0) / (m_1 - m_0), likewise at the top; B = 2: both bins use it); likewise q'_b for
 * the negatives. The bin's term is thus
 *     x_b u_b / 2 + (w_b² / 12) (u_b p'_b - x_b q'_b),
 * and, p' and q' being linear in the counts, the numerator stays a bilinear form x^T K u:
 * K(i, j) = 1 (i > j), 1/2 (i = j), plus the slope terms, which touch only |i - j| = 1 (the
 * edge bins' own-bin terms x_b u_b cancel, so the diagonal stays 1/2; uniform widths, interior:
 * K(i, i-1) = 13/12, K(i-1, i) = -1/12). As for A: the numerator is unbiased; noiseless, it is
 * exact when each density is linear over every bin and the neighbours its slope uses (e.g.
 * linear on [0, 1]: the unit test); var_noise is the same formula with the placement values
 * V10_i = (K u)_i / N, V01_j = (x^T K)_j / P (dA/dx_i = (V10_i - A) / P, dA/du_j =
 * (V01_j - A) / N).
 *
 * The unbinned AUC's errors, and its intervals. Against the examples' exact AUC it errs by
 *   (1) the noise (unbinned_var_noise, above);
 *   (2) the examples' order within their bins, which the counts do not tell: given the counts,
 *       a bin's positive-over-negative pairs vary as a Mann-Whitney count of x_b against u_b,
 *       variance x_b u_b (x_b + u_b + 1) / 12 (unbinned_var_within, summed over bins / (P N)²);
 *   (3) the interpolation error: the densities are not linear within a bin. It does not shrink
 *       with n: at 10-12 uniform bins on the README's binormal model it is about -4e-4 (-6.3e-4
 *       at 10 bins, mostly the two end bins, where a logistic or probit score's density
 *       diverges), 26-31 noise standard deviations at eps 4-8 with 10^5-10^6 examples.
 * A bound on (3), by Richardson's principle: the same linear rule is applied on the grid of
 * paired bins (adjacent bins paired alternately from both ends inwards; an odd count leaves
 * the middle bin alone), where each merged bin's within-bin first moment is ALSO known from the
 * fine bins (their counts at their midpoints plus the fine rule's moments); per class, the
 * difference of the two moves the AUC numerator by (other class's count) x (difference) /
 * (merged width). If halving the bins at least halves the rule's error (the rule is third
 * order for smooth densities and about second order where a density diverges at 0 or 1), the
 * fine rule's error is at most the coarse one's minus its own: the sum of those moves. Summed
 * per class and per half of the score range, in absolute value (errors of opposite sign in
 * different places cannot hide each other):
 *     unbinned_bound_raw = sum over class, half |sum of the moves| / (P N).
 * Measured on 30 density and edge combinations (probit- and logit-binormal scores of AUC 0.65
 * to 0.99 with mass piled at 0 or 1, betas including U-shaped ones, uniform and end-dense
 * edges, 6 to 64 bins): 1.6 to 100 times the actual error, never below it. The bound is
 * computed from the noised sums; its own noise sd (delta method, the signs held) is added:
 * unbinned_bound = raw + sd.
 * unbinned_ci (around the examples' exact AUC): the bias-aware interval (common/prob.h) with
 * sd² = unbinned_var_noise + unbinned_var_within and the bound; flagged DPM_CI_BOUND when the
 * bound dominates (ci_flags.h: coverage at least the level, not calibrated: use more bins).
 * unbinned_ci_total (around the model's AUC: the score distribution the examples were drawn
 * from): the same with sd² = unbinned_var_noise + unbinned_var_sampling (DeLong with the
 * unbinned placements; the examples independent).
 *
 * Few randomization events and noisy class totals (every interval; ci_flags.h): the effective
 * number of Laplace unit events is var / jump², jump = the largest |dA/dcell| (one unit of
 * noise in the most influential cell, or one flip); below PROB_NORMAL_MIN_EVENTS the interval is
 * the Poisson-aware one (flag DPM_CI_FEW_EVENTS). P and N carry noise of variance n B s² each (with
 * flips: Var P, Var N as above); Fieller's g = z² (n B s² / P² + n B s² / N²) above
 * DPM_CI_FIELLER_G_MAX flags DPM_CI_CLASS_NOISE (the TPR band: P's term alone).
 * tests/stat/test_roc_unbinned.c and tests/stat/test_few_events.c check the claims. */
#ifndef DPM_HOST_ESTIMATE_ROC_H
#define DPM_HOST_ESTIMATE_ROC_H

#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_ROC_MAX_BINS DPM_MAX_BINS

/* Sums of reports: exact integers (|sum| < 2^63 for any realistic number of reports). */
typedef struct {
    uint32_t bins;
    uint64_t reports;
    int64_t pos[DPM_ROC_MAX_BINS];
    int64_t neg[DPM_ROC_MAX_BINS];
} dpm_roc_agg_t;

/* The server's view of the mechanism: the devices' own discrete Laplace scale, or (central
 * DP, two aggregators) the aggregators' scale and how many of them noised each cell. */
typedef struct {
    uint32_t bins;
    double scale;     /* t, in counts (2 / ε) */
    double noise_var; /* s² = 2 p / (1 - p)², p = exp(-1 / t): one draw, one cell */
    /* 0: each report carries its own draw per cell (local DP: Var = n s² per cell). k >= 1:
     * the sums carry exactly k draws per cell whatever the number of reports (central DP:
     * each of k aggregators noised its aggregate share once; Var = k s²). */
    uint32_t central_draws;
    double width[DPM_ROC_MAX_BINS]; /* bin widths on [0, 1] (auc_unbinned): 1 / bins unless set */
    double label_flip; /* q in [0, 1/2): each example's label flipped with prob q on the device
                        * (hybrid: the flips above); 0: none */
} dpm_roc_params_t;

/* bins in [2, DPM_ROC_MAX_BINS], scale t > 0 (0 allowed: noiseless, for tests). Uniform bins. */
dpm_status_t dpm_roc_params_init(dpm_roc_params_t *p, uint32_t bins, double scale);
/* The same for sums noised centrally: `draws` discrete Laplace draws of scale t per cell
 * (two aggregators: draws = 2), none from the reports. draws >= 1. */
dpm_status_t dpm_roc_params_init_central(dpm_roc_params_t *p, uint32_t bins, double scale,
                                         uint32_t draws);
/* The same with `draws` discrete Gaussian draws of variance sigma2 > 0 per cell (zCDP tasks):
 * noise_var = sigma2, scale 0 (no Laplace scale). The estimator reads noise_var alone. */
dpm_status_t dpm_roc_params_init_central_gauss(dpm_roc_params_t *p, uint32_t bins, double sigma2,
                                               uint32_t draws);
/* The campaign's edges (Q1.31, 2^31 = score 1.0; bin b: edges[b-1] <= score < edges[b]):
 * nedges = bins - 1, strictly increasing, each <= 2^31 (as the SDK takes them). Scores span
 * [0, 2^31]; a bin of zero width (first edge 0, or last edge 2^31: it holds the score 1.0 only)
 * counts one grid step. DPM_ERR_PARAM (p unchanged) otherwise. */
dpm_status_t dpm_roc_params_set_edges(dpm_roc_params_t *p, const uint32_t *edges_q31,
                                      uint32_t nedges);
/* The devices' label flip probability q (the hybrid above; for the SDK's dpm_rr_init(ε0):
 * q = other / 2^32, roc_central.h). DPM_ERR_PARAM (p unchanged) outside [0, 1/2). */
dpm_status_t dpm_roc_params_set_label_flip(dpm_roc_params_t *p, double q);

dpm_status_t dpm_roc_agg_init(dpm_roc_agg_t *a, uint32_t bins);
/* Add one report's cells (bins values each). DPM_ERR_PARAM on a bins mismatch. */
dpm_status_t dpm_roc_agg_add(dpm_roc_agg_t *a, uint32_t bins, const int32_t *pos,
                             const int32_t *neg);
dpm_status_t dpm_roc_agg_merge(dpm_roc_agg_t *dst, const dpm_roc_agg_t *src);

typedef struct {
    uint32_t bins;
    uint64_t reports;
    double pos[DPM_ROC_MAX_BINS], neg[DPM_ROC_MAX_BINS]; /* projected counts (display) */
    double P, N;                                         /* totals (kept by the projection) */
    int projected;                                       /* 1 if the projection moved a count */
    /* ROC points, threshold j = 0 .. bins */
    double tpr[DPM_ROC_MAX_BINS + 1], fpr[DPM_ROC_MAX_BINS + 1]; /* estimates, clipped */
    double tpr_curve[DPM_ROC_MAX_BINS + 1], fpr_curve[DPM_ROC_MAX_BINS + 1]; /* monotone, to draw */
    double tpr_sd[DPM_ROC_MAX_BINS + 1], fpr_sd[DPM_ROC_MAX_BINS + 1];
    double tpr_lo[DPM_ROC_MAX_BINS + 1], tpr_hi[DPM_ROC_MAX_BINS + 1];         /* pointwise */
    double tpr_lo_sim[DPM_ROC_MAX_BINS + 1], tpr_hi_sim[DPM_ROC_MAX_BINS + 1]; /* simultaneous */
    double auc;     /* clipped to [0, 1] */
    double auc_raw; /* the unbiased value, which can leave [0, 1] at tiny n or ε */
    double var_noise, var_sampling;
    double ci_lo, ci_hi;             /* noise only: covers the examples' binned AUC */
    double ci_total_lo, ci_total_hi; /* noise + sampling */
    double z, z_sim;
    /* unbinned AUC (within-bin pairs resolved by linear densities; see above) */
    double auc_unbinned;     /* clipped to [0, 1] */
    double auc_unbinned_raw; /* unbiased for the bilinear form; can leave [0, 1] */
    double unbinned_var_noise, unbinned_sd;
    double unbinned_var_within;   /* the examples' order within their bins, unknown */
    double unbinned_var_sampling; /* DeLong with the unbinned placements */
    double unbinned_bound;        /* the interpolation-error bound used: raw + its noise sd */
    double unbinned_bound_raw, unbinned_bound_sd;
    double unbinned_ci_lo, unbinned_ci_hi;             /* covers the examples' exact AUC */
    double unbinned_ci_total_lo, unbinned_ci_total_hi; /* covers the model's AUC */
    /* How far each interval can be trusted (estimate/ci_flags.h): 0 = the calibrated claim. */
    unsigned ci_flags, ci_total_flags, unbinned_flags, unbinned_total_flags, tpr_flags;
    double events, unbinned_events; /* effective randomization events (var / largest jump²) */
    double tpr_events_min;          /* the fewest over the interior thresholds */
    double fieller_g;               /* z² (Var P / P² + Var N / N²) */
    double cell_noise_var;          /* the noise variance of one summed cell (n s²) */
    double label_flip;              /* q (params): 0 unless the labels were flipped */
    double var_P, var_N;            /* the class totals' noise variances (flips included) */
    double count_move; /* the most one randomization event moves a class's (debiased) count:
                        * 1 without flips (0 without noise), 1 / (1 - 2q) with them */
    int valid; /* 0: P <= 0 or N <= 0 (too few reports for this ε): only counts are set, every
                * flag is DPM_CI_SMALL_N */
} dpm_roc_estimate_t;

/* One class's rate at one threshold of a valid estimate (TPR_j, or FPR_j with fpr = 1): the
 * value and its noise variance (tpr/fpr, tpr_sd/fpr_sd), the most one randomization event
 * moves it (max(1 - r, r) count_move / class total: dpm_ci_halfwidth's jump, 0 without noise)
 * and the class-noise flag of its ratio at z (the class total's relative variance, ci_flags.h).
 * What the TPR band is made of, for a caller that builds other intervals from the rates (a gap). */
typedef struct {
    double value, var, jump;
    unsigned flags;
} dpm_roc_rate_t;
void dpm_roc_rate_at(const dpm_roc_estimate_t *est, int fpr, uint32_t j, double z,
                     dpm_roc_rate_t *out);

/* The estimate at confidence c in (0, 1). DPM_ERR_PARAM on bad arguments (a label_flip outside
 * [0, 1/2) included); an aggregate whose (debiased) P or N is not positive gives DPM_OK with
 * est->valid = 0. */
dpm_status_t dpm_roc_estimate(const dpm_roc_params_t *p, const dpm_roc_agg_t *a, double confidence,
                              dpm_roc_estimate_t *est);

/* Exact (noiseless) ROC of true counts: points tpr/fpr[0 .. bins] and the binned AUC (ties
 * 1/2). DPM_ERR_PARAM when a class is empty. */
dpm_status_t dpm_roc_exact(const uint64_t *pos, const uint64_t *neg, uint32_t bins, double *tpr,
                           double *fpr, double *auc);

/* The unbinned AUC of counts pos, neg (noiseless, or any sums) in bins of widths width[0 ..
 * bins) (any unit): x^T K u / (P N) as above. NAN when a class total is not positive or bins
 * is out of range. */
double dpm_roc_auc_unbinned(const double *pos, const double *neg, const double *width,
                            uint32_t bins);

/* The unbinned kernel as a matrix: K[i * bins + j], numerator = sum_ij pos_i K_ij neg_j (above;
 * widths any unit). DPM_ERR_PARAM on NULL or bins outside [2, DPM_ROC_MAX_BINS]. */
dpm_status_t dpm_roc_unbinned_kernel(const double *width, uint32_t bins, double *K);

/* The interpolation-error bound of the unbinned AUC of counts pos, neg (unbinned_bound_raw
 * above; P, N their sums), and (grad optional, 2 bins entries) its gradient in pos then neg,
 * for the caller's variance. NaN for bins outside [3, DPM_ROC_MAX_BINS] or NULL. */
double dpm_roc_unbinned_bound(const double *pos, const double *neg, const double *width,
                              uint32_t bins, double *grad);

/* The sampling variance of the unbinned AUC of counts pos, neg (unbinned_var_sampling above:
 * DeLong with the unbinned placements, weights clipped at 0). NaN for an empty class. */
double dpm_roc_unbinned_sampling_var(const double *pos, const double *neg, const double *width,
                                     uint32_t bins);

/* The within-bin order variance of the unbinned AUC (unbinned_var_within above; counts clipped
 * at 0). NaN when a class total is not positive. */
double dpm_roc_unbinned_within(const double *pos, const double *neg, uint32_t bins);

/* Projection of y[0 .. n) onto {x >= 0, sum x = sum y} (sum y > 0), into x. Returns 1 if
 * anything moved. If sum y <= 0, x = 0. */
int dpm_roc_project(const double *y, uint32_t n, double *x);

/* Planner helper: the per-report noise variance factor of the AUC for a population whose
 * expected per-device counts are pos[b], neg[b] (any scale): var_noise(A) = s² F / K for K
 * devices, F = sum_b (V10_b - A)² / p² + sum_b (V01_b - A)² / q², p = sum pos, q = sum neg. */
double dpm_roc_noise_factor(const double *pos, const double *neg, uint32_t bins);

/* Planner helper for flipped labels (label_flip q above), for expected per-device counts
 * pos[b], neg[b]: with K devices the AUC's noise variance is s² central_factor / K² + flip_factor
 * / K for sums noised by s² per cell whatever K (two aggregators), central_factor the debiased
 * cells' noise (q = 0: dpm_roc_noise_factor) and flip_factor the flips' (0 at q = 0).
 * DPM_ERR_PARAM on bad arguments, q outside [0, 1/2) or an empty class. */
dpm_status_t dpm_roc_plan_flip_factors(const double *pos, const double *neg, uint32_t bins,
                                       double q, double *central_factor, double *flip_factor);

/* Planner helper, for expected per-device counts pos[b], neg[b] of a model: the binned AUC of
 * those counts (ties 1/2), and the factors of the AUC's variances for K devices:
 * var_noise = s² noise_factor / K (as dpm_roc_noise_factor) and var_sampling = sampling_factor /
 * K (DeLong with the examples independent: V10, V01 placement variances over P, N).
 * DPM_ERR_PARAM on bad arguments or an empty class. */
dpm_status_t dpm_roc_plan_factors(const double *pos, const double *neg, uint32_t bins, double *auc,
                                  double *noise_factor, double *sampling_factor);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_ROC_H */
