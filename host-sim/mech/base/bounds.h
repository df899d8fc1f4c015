/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded influence: the range of values an HONEST device can send, per mechanism, so that the
 * collector rejects everything outside it and one report can move an estimate only so far.
 *
 * Local DP cannot stop a device from lying WITHIN this range (any value it could honestly
 * send); these checks stop the lies outside it, which are the ones that wreck an estimate
 * (issue 12: one tuple_ml report of INT32_MAX moved a TPR from 0.525 to 10.8).
 *
 * Failure budget. Every check below is set so that an honest report fails it with probability
 * at most 2^-40 / (number of checks of that report): by the union bound an honest report is
 * rejected with probability below 2^-40 (COLL_BOUNDS_FAIL_LOG2).
 *
 * The noise (sdk: dpm/expert/noise.h, dpm_laplace_add, sampled exactly). Discrete Laplace of scale
 * t (a rational, in grid units), p = exp(-1/t): Pr[Z = z] = (1 - p) / (1 + p) * p^|z|,   z in Z
 * (the sum over z is 1) Pr[Z > k] = (1 - p) / (1 + p) * sum_{z > k} p^z = p^(k+1) / (1 + p)
 * (integer k >= 0) Pr[|Z| > k] = 2 p^(k+1) / (1 + p). So the smallest k with Pr[|Z| > k] <= delta
 * is k(t, delta) = ceil(t * ln(2 / (delta (1 + p)))) - 1, computed in double and then checked
 * against the exact tail in log space (one grid unit is added if rounding left it short).
 *
 * Sums of n independent cells (roc_hist): a Chernoff bound with the exact moment generating
 * function E[exp(lambda Z)] = (1 - p)^2 / ((1 - p e^lambda)(1 - p e^-lambda)), |lambda| < 1/t:
 *     Pr[|Z_1 + ... + Z_n| >= T] <= 2 min_lambda exp(n ln E[exp(lambda Z)] - lambda T).
 * Any lambda gives a valid bound; a golden-section search finds a good one, and T is the
 * smallest integer whose bound is <= delta.
 *
 * Per mechanism (v: what the device computes, Z: its noise):
 *   tuple_mr  values in {-1, +1}; no noise bound is needed (checked by the SDK's
 *             dpm_mech_check_report).
 *   tuple_ml  v = 2 metric - 1 on the grid Q(F), so v in [-2^F, 2^F] (rounding to the grid
 *             stays inside: the endpoints are grid points); each of the m values is v + Z with
 *             t = scale of the campaign's Laplace, delta = 2^-40 / m:
 *                 |value| <= 2^F + k(t, 2^-40 / m).
 *   roc_hist  each cell is a count c in [0, M] plus Z (t = 2 / eps counts), M = the campaign's
 *             max_examples; every example sits in exactly one cell, so the counts of one class
 *             sum to at most M and all 2B cells together too. With delta = 2^-40 / (2B + 3):
 *                 every cell in [-k, M + k],                    k = k(t, delta)
 *                 each class's sum in [-T_B, M + T_B],          T_B = Chernoff(n = B)
 *                 the sum of all 2B cells in [-T_2B, M + T_2B], T_2B = Chernoff(n = 2B).
 *
 *   dpauc     each of the 4N counts (TP, FP, TN, FN at N thresholds) is a count c in [0, M]
 *             plus Z (t = the campaign's scale, 4N / eps or 2N / eps), M = max_examples; with
 *             delta = 2^-40 / (4N): every count in [-k, M + k], k = k(t, delta) ("count out of
 *             range"). One accepted report moves each summed count by at most M + k.
 *   ustat_bins, ustat_tree  one categorical value (and a public label, level, row) whose
 *             domain dpm_mech_check_report enforces: no noise bound. One accepted report adds
 *             1 to one cell of one report histogram (a Hadamard row sum moves by 1): the AUC
 *             estimate moves by O(1 / ((p - q) n+ n-)) times the other class's mass, as for
 *             any honest report; the only lie available is a value inside the domain.
 *   fedauc_rr exact statistics of flipped labels: localP in [0, n], localSum2 between the sums
 *             of the localP smallest and largest ranks sent (fedauc_reports.c, no noise).
 *   fedauc_lap the report's own ranks (n, S = sum R_i, the sensitivity and eps_p, all checked
 *             against the ranks the collector sent) give each noised value's range, with
 *             delta = 2^-40 / 2 (two noised values per report), eps_s = eps - eps_p:
 *                 localP             in [-k_P, n + k_P],          t_P = 2^16 / eps_p
 *                 LOCAL/GLOBAL localSum2 in [-k_S, S + k_S],      t_S = sensitivity 2^16 / eps_s
 *                 ORTHOGONAL/ADAPTIVE T in [-A - k_S, A + k_S],   A = sum_i max(0, n R_i - S)
 *             (the true localSum2 = sum R_i y_i lies in [0, S]; the true T = sum (n R_i - S) y_i
 *             in [-A, A], since sum_i (n R_i - S) = 0); a sum whose sensitivity is 0 is sent
 *             without noise (k = 0). The scales are the SDK's exactly (sdk/src/mech/fedauc.c:
 *             DLap(sensitivity 2^16 / eps_part)), so a report's own fields fix its bounds.
 *             The campaign's max_examples bounds n (checked at upload, fedauc_endpoints.c).
 *
 * Exact sums. Every stored sum is an int64 (SQLite INTEGER, PostgreSQL bigint) per campaign,
 * period and writer, and the reads add them up in int64 too. row_max is the largest |amount|
 * one accepted report adds to any of those sums (its value, cell, product of cells, count or
 * FedAUC statistic within the bounds above), so sum_capacity = floor((2^63 - 1) / row_max)
 * reports of one (campaign, period) can never overflow one. A campaign is refused when its
 * capacity is below COLL_SUM_MIN_CAPACITY reports (2^31; FedAUC: below the most reports one
 * period can have, COLL_FEDAUC_MAX_SCORES, one per upload), with the reason. FedAUC's row_max
 * is amortized over a period's reports, since one ranking's ranks sum to M (M - 1) whatever
 * the uploads: max(M_max, 1 + k_P, 2 M_max + k_S) with M_max = COLL_FEDAUC_MAX_SCORES and k_S at
 * the largest sensitivity (bounds.c), independent of max_examples.
 *
 * Influence of one report that passes (the documented bounds; estimate_json exposes them):
 *   tuple means (host-sim/estimate/disparity.h): m_g = S_g / (a gain n_g), n_g = (n'_g - K q) /
 *   (a - q), gain = 1 (M_L) or c = 2b - 1 (M_R). One more report with value V in group g moves
 *   S_g by V and n_g by delta_n = (1 - q) / (a - q), and exactly
 *       m'_g - m_g = V / (a gain n''_g) - m_g delta_n / n''_g,   n''_g = n_g + delta_n,
 *   so on the metric scale (half the value scale)
 *       |shift| <= (V_max / (a gain) + |m_g| delta_n) / (2 n''_g),
 *   V_max = value_max / 2^F (M_L) or 1 (M_R). Every other group h moves by m_h q / ((a - q)
 *   n''_h) (its size estimate drops): at most q / (a - q) / (2 n''_h).
 *   FedAUC AUC = (S - P (P - 1) / 2) / (P N) (rank units; fedauc_rr: the de-biased S, P):
 *   a report cannot be left out (the rank sums need it), so its influence is how far any
 *   other accepted report for the same upload moves the estimate. With dS, dP the changes of
 *   S and P and c = P - 1/2 + AUC (N - P) (the estimator's), exactly
 *       AUC' - AUC = (dS - c dP + (AUC - 1/2) dP^2) / ((P + dP) (N - dP)),
 *   so with |dP| <= dp and dS = dS0 + rbar dP, |dS0| <= ds (ORTHOGONAL/ADAPTIVE rebuild
 *   localSum2 = (T + S_k localP) / n_k: rbar = S_k / 2 n_k; 0 for the others)
 *       |AUC' - AUC| <= (ds + max |rbar - c| dp + |AUC - 1/2| dp^2) / min((P - dp) (N + dp),
 *                                                                     (P + dp) (N - dp)),
 *   dp, ds, rbar over every upload of the ranking from the ranges above (coll_fa_influence_t;
 *   fedauc_rr in de-biased units: dp = n / (1 - 2 rho), ds = S_k / (2 (1 - 2 rho))). Infinite
 *   (JSON null) when the denominator can reach 0: one report could make the estimate
 *   undefined.
 *   roc_hist AUC: for non-negative class histograms with totals P, N (the estimator's
 *   projection is then the identity), the AUC is linear in each normalised histogram with
 *   coefficients in [0, 1], and adding a vector Delta to a histogram of total P moves its
 *   normalised form by at most ||Delta||_1 / max(P, P') in total variation, so
 *       |AUC' - AUC| <= L / max(P, P') + L / max(N, N') <= L (1 / P + 1 / N),
 *   L = the largest L1 norm of one class's vector within the checks above (class_l1_max).
 *
 * Forged devices: k reports with the extreme value V in group g move m_g to
 *   (S_g + k V) / (a gain (n_g + k delta_n)); the k needed for a shift D (value scale) is
 *       k = a gain D n_g / (V - a gain (m_g + D) delta_n)           (README, "Threat model").
 */
#ifndef DPM_COLLECTOR_BOUNDS_H
#define DPM_COLLECTOR_BOUNDS_H

#include <stdint.h>

#include "dpm/expert/report.h"
#include "dpm/expert/fedauc.h"
#include "estimate/disparity.h"

/* The reason an estimate gives when its max_shift_one_report is null (JSON has no infinity). */
#define COLL_UNBOUNDED_REASON                                                                      \
    "no bound on one report's influence: a report within the checks could make this estimate "     \
    "undefined (lower max_examples, or wait for more reports)"

/* Largest number of scores one period of a FedAUC campaign ranks (fedauc_phase.h). */
#define COLL_FEDAUC_MAX_SCORES (1u << 24)

/* An honest report fails the checks with probability below 2^-COLL_BOUNDS_FAIL_LOG2. */
#define COLL_BOUNDS_FAIL_LOG2 40
/* roc_hist: default largest number of examples one device may report (campaign max_examples). */
#define COLL_DEFAULT_MAX_EXAMPLES 100u
#define COLL_MAX_EXAMPLES_LIMIT (1u << 24)

typedef struct {
    dpm_mech_id_t mech;
    uint32_t checks;  /* checks per report (the failure budget is split between them) */
    double fail_log2; /* log2 of the union bound of an honest rejection (< -40) */
    /* tuple_ml: |value| <= value_max grid units, value_max = 2^F + noise_max */
    int64_t value_max;
    int64_t noise_max; /* k(t, delta) in grid units (tuple_ml) or counts (roc_hist) */
    /* roc_hist (dpauc: bins = thresholds N; max_examples, cell_lo/hi as roc_hist) */
    uint32_t bins;
    uint32_t max_examples;      /* M */
    int64_t cell_lo, cell_hi;   /* [-k, M + k] */
    int64_t class_lo, class_hi; /* [-T_B, M + T_B] */
    int64_t total_lo, total_hi; /* [-T_2B, M + T_2B] */
    int64_t class_l1_max;       /* L: largest L1 norm of one class's cells */
    /* fedauc: the campaign's ε and eps_p (Q16.16), variant and RR flip probability */
    uint32_t fa_eps, fa_eps_p, fa_variant;
    double fa_rho;
    /* exact sums (above): the largest |amount| one report adds to a stored int64 sum, and the
     * reports of one (campaign, period) that can never overflow one */
    int64_t row_max;
    uint64_t sum_capacity;
} coll_bounds_t;

/* Reports of one (campaign, period) a campaign's sums must hold without overflow. */
#define COLL_SUM_MIN_CAPACITY ((uint64_t)1 << 31)

/* The bounds of a built mechanism (max_examples: roc_hist, dpauc and fedauc, 1 ..
 * COLL_MAX_EXAMPLES_LIMIT; fedauc at most DPM_FEDAUC_MAX_EXAMPLES). 0, or -1 if the mechanism
 * is not one the collector runs or its reports cannot be bounded; the caller then checks
 * sum_capacity (coll_bounds_capacity_why). */
int coll_bounds_init(coll_bounds_t *b, const dpm_mech_t *m, uint32_t max_examples);

/* NULL if the campaign's sums hold enough reports (above), else why not (static text). */
const char *coll_bounds_capacity_why(const coll_bounds_t *b);

/* 0 if the (already fingerprint-checked) report is inside the bounds; else -1 and *why names
 * the check ("value out of range", "histogram cell out of range", "histogram sum out of
 * range"). */
int coll_bounds_check(const coll_bounds_t *b, const dpm_report_t *r, const char **why);

/* The documented bound on how far one more accepted report moves the mean (metric scale
 * [0, 1]) of the group it lands in, for a group whose estimated size is n_hat and estimated
 * mean (metric scale) is mean: (V_max / (a gain) + |2 mean - 1| delta_n) / (2 (n_hat +
 * delta_n)). NaN if n_hat + delta_n <= 0. */
double coll_bounds_mean_shift(const coll_bounds_t *b, const dpm_disp_params_t *p, double n_hat,
                              double mean);

/* How far one more accepted report reported in ANOTHER group moves this group's mean (metric
 * scale): only its size estimate drops, by d = q / (a - q), so exactly |2 mean - 1| d / (2
 * (n_hat - d)). NaN if n_hat - d <= 0. A gap m_g - m_h moves by at most the larger of
 * shift_g + other_h and other_g + shift_h (the report lands in g, in h or elsewhere). */
double coll_bounds_mean_shift_other(const dpm_disp_params_t *p, double n_hat, double mean);

/* The documented bound on how far one more accepted roc_hist report moves the AUC of sums with
 * positive totals P, N: class_l1_max (1 / P + 1 / N). NaN unless P, N > 0. */
double coll_bounds_auc_shift(const coll_bounds_t *b, double P, double N);

/* ---- FedAUC (fedauc_lap ranges; influence) -------------------------------------------------- */

/* The accepted range of a fedauc report's noised values (fedauc_lap; fedauc_rr: its exact
 * statistics' widest range, [0, n] and [0, S]). s is localSum2 (LOCAL/GLOBAL, fedauc_rr) or T
 * (ORTHOGONAL/ADAPTIVE). */
typedef struct {
    int64_t p_lo, p_hi;
    int64_t s_lo, s_hi;
    int t_form; /* 1: s is T */
} coll_fa_range_t;

/* The range of report body r of the campaign whose bounds are b (its n, S, sensitivity and
 * eps_p already checked against the collector's ranks), tpos = sum_i max(0, n R_i - S) of its
 * ranks. 0, or -1 (not a FedAUC campaign, or a noise bound beyond 2^62: then no value fits). */
int coll_bounds_fa_range(const coll_bounds_t *b, const dpm_fedauc_report_t *r, uint64_t tpos,
                         coll_fa_range_t *out);

/* 0 if the report's noised values are inside coll_bounds_fa_range, else -1 and *why:
 * "localP out of range", "localSum2 out of range" or "T out of range". */
int coll_bounds_fa_check(const coll_bounds_t *b, const dpm_fedauc_report_t *r, uint64_t tpos,
                         const char **why);

/* What one FedAUC report can change, over every upload of a ranking (see the influence above),
 * in the estimator's units: dp on P, ds on S (rank units), and rbar = S_k / 2 n_k (t_form
 * only). Uploads are kept in COLL_FA_RBAR_BUCKETS buckets of rbar (their largest dp and ds, the
 * rbar range), so the bound pairs each upload's dp with its own rbar (within a bucket's width):
 * the maximum over buckets of the numerator above, over the denominator at the largest dp.
 * Start with coll_fa_influence_init, add each upload. */
#define COLL_FA_RBAR_BUCKETS 32
typedef struct {
    double dp, ds; /* the largest over all uploads */
    double width;  /* of an rbar bucket (t_form: M / COLL_FA_RBAR_BUCKETS; else everything in 0) */
    double b_dp[COLL_FA_RBAR_BUCKETS], b_ds[COLL_FA_RBAR_BUCKETS];
    double b_lo[COLL_FA_RBAR_BUCKETS], b_hi[COLL_FA_RBAR_BUCKETS];
    uint32_t b_n[COLL_FA_RBAR_BUCKETS];
    int t_form;
    uint64_t uploads;
} coll_fa_influence_t;

void coll_fa_influence_init(coll_fa_influence_t *f, const coll_bounds_t *b);
/* One upload: n examples, S = sum R_i, its largest R, D = max |n R_i - S|, tpos (above), M the
 * ranking's size. -1 if no report of it can pass the checks' arithmetic (then nothing added). */
int coll_fa_influence_add(coll_fa_influence_t *f, const coll_bounds_t *b, uint32_t n, uint64_t S,
                          uint32_t max_rank2, uint64_t D, uint64_t tpos, uint32_t M);

/* The bound for an estimate with AUC auc, positives P, negatives N, c = P - 1/2 + auc (N - P)
 * and scale (fedauc_rr: 1 / (1 - 2 rho); else 1) on dp and ds; extra_ds: more room on S per
 * unit of P (the dropouts' correction, rank units). INFINITY if one report can reach a zero
 * denominator; NaN without uploads. */
double coll_bounds_fa_shift(const coll_fa_influence_t *f, double scale, double extra_ds, double auc,
                            double P, double N, double c);

/* k(t, delta): the smallest k >= 0 with Pr[|Z| > k] <= 2^delta_log2 for discrete Laplace of
 * scale t > 0. -1 if t is not finite and positive or the bound does not fit 2^62. */
int64_t coll_dlap_tail_bound(double t, double delta_log2);

/* The smallest T with the Chernoff bound Pr[|Z_1 + ... + Z_n| >= T + 1] <= 2^delta_log2 for n
 * independent discrete Laplace cells of scale t. -1 on bad arguments. */
int64_t coll_dlap_sum_bound(double t, uint32_t n, double delta_log2);

/* log2 Pr[|Z| > k] for discrete Laplace of scale t, exactly (in double). */
double coll_dlap_tail_log2(double t, int64_t k);

#endif /* DPM_COLLECTOR_BOUNDS_H */
