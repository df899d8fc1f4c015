/* SPDX-License-Identifier: Apache-2.0 */
/* Server-side analytics of the private (group, performance) tuple mechanisms M_R and M_L
 * (sdk/docs/tuple.md): aggregation of the perturbed tuples, unbiased per-group
 * means, pairwise disparities with variance, Chebyshev and normal error bounds, the closed-form
 * variances (paper Eq. 19/20, generalised to d groups) and a min-ε / min-devices planner.
 *
 * Privacy unit: one device's (group, value) tuple, protected together by one LDP report.
 *
 * What the devices send (sdk/docs/tuple.md §M_R and its true privacy level,
 * sdk/docs/tuple.md §M_L and k, sdk/docs/tuple.md §Thresholds):
 *   group  g' = GRR(g): own group with probability a = keep_g / 2^32, each of the d - 1 other
 *          groups with probability q = other_g / 2^32 (keep_g + (d - 1) other_g = 2^32).
 *          If the group flipped, the device zeroes its value before perturbing it.
 *   M_R    value v' in {-1, +1}: Harmony Bernoulli((1 + v) / 2), then binary RR with keep
 *          probability b = keep_v / 2^32; c = 2b - 1 scales the mean.
 *   M_L    value v' = v + Z on the fixed-point grid Q(F) (one grid unit = 2^-F), Z discrete
 *          Laplace with scale t grid units: Pr[Z = z] ∝ exp(-|z| / t). The device sends the
 *          int64 grid integer.
 * Values v live on [-1, 1]; a metric in [0, 1] maps as v = 2 metric - 1, so a disparity of a
 * [0, 1] metric is half the disparity of the values (paper Table 2 uses that scale).
 *
 * Budget splits (sdk/docs/tuple.md §Budget splits, sdk/docs/tuple.md §Errata):
 *   correct (what the SDK ships):   M_R  eps2 = eps, eps1 = ln((1 + e^eps) / 2)
 *                                   M_L  k = 2, eps2 = eps, eps1 = eps / 2
 *   paper   (REPRODUCTION ONLY: DOES NOT DELIVER THE STATED ε):
 *                                   M_R  eps1 = eps2 = eps  (really up to eps + ln 2, Thm 4.1
 *                                        is wrong)
 *                                   M_L "opt." k = eps (eps >= 2/3) or 2/3, eps1 per Eq. 21
 *                                        (no finite LDP guarantee at all when k != 2)
 *
 * Conventions: every function returns DPM_OK or a negative dpm_status_t and, on error, leaves
 * every output untouched. No mutable globals; nothing allocates. Doubles throughout (host only).
 */
#ifndef DPM_HOST_DISPARITY_H
#define DPM_HOST_DISPARITY_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"
#include "estimate/pairwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest number of groups d a campaign may have (the SDK's compile-time limit). */
#define DPM_DISP_MAX_GROUPS DPM_MAX_GROUPS
/* Largest fixed-point fraction bits F the server accepts for M_L values. */
#define DPM_DISP_MAX_FRAC_BITS 62u
/* The ε interval the planner searches (beyond what a device accepts: the planner also answers
 * the paper's Table 1, whose M_L cells reach ε = 178.9). */
#define DPM_DISP_PLAN_EPS_MIN 1e-6
#define DPM_DISP_PLAN_EPS_MAX 1e4

/* Sentinels for a group's second moment ν² = (1/n) Σ v_i² in the variance functions. */
#define DPM_DISP_NU2_WORST (-1.0)  /* the worst case: 1 for M_L, 0 for M_R */
#define DPM_DISP_NU2_PLUGIN (-2.0) /* estimated from the reports (dpm_disp_estimate only) */

typedef enum {
    DPM_DISP_MR = 1, /* randomized response on the value (Harmony + RR) */
    DPM_DISP_ML = 2  /* discrete Laplace on the value */
} dpm_disp_mech_t;

typedef enum {
    DPM_DISP_SPLIT_CORRECT = 1, /* the SDK's valid splits, quantized like the device does */
    DPM_DISP_SPLIT_PAPER = 2    /* the paper's splits: reproduction only, NOT the stated ε */
} dpm_disp_split_t;

/* Where a parameter set came from. */
typedef enum {
    DPM_DISP_FROM_CAMPAIGN = 1, /* the exact integers a campaign's devices use */
    DPM_DISP_FROM_CORRECT = 2,  /* correct split, device quantization mirrored in doubles */
    DPM_DISP_FROM_PAPER = 3,    /* paper split, unquantized: paper reproduction only */
    DPM_DISP_FROM_SPLIT = 4     /* explicit (eps1, eps2, k), unquantized: the paper's model */
} dpm_disp_source_t;

/* A tuple campaign: everything the estimators need. Build it with a constructor below. */
typedef struct {
    dpm_disp_mech_t mech;
    dpm_disp_source_t source;
    uint32_t d;      /* number of groups, 2 <= d <= DPM_DISP_MAX_GROUPS */
    double a;        /* Pr[report own group] */
    double q;        /* Pr[report one given other group]; a + (d - 1) q = 1 */
    double eps1_eff; /* ln(a / q): the group GRR's implemented ε */
    uint32_t keep_g; /* device thresholds behind a and q (0 if unquantized) */
    uint32_t other_g;
    /* M_R */
    double c;        /* 2b - 1, b = RR keep probability of the value bit */
    double eps2_eff; /* ln(b / (1 - b)) */
    uint32_t keep_v; /* device threshold behind b (0 if unquantized) */
    /* M_L */
    double t_kept;      /* Laplace scale of kept reports, grid units of 2^-F */
    double t_flip;      /* Laplace scale of flipped (value zeroed) reports, grid units */
    uint32_t frac_bits; /* F */
    int on_grid;        /* 1: discrete Laplace on Q(F) (devices); 0: continuous (paper), F = 0 */
    /* the nominal split, for reports; NaN when built from campaign integers */
    double eps;
    double eps1;
    double eps2;
    double k;
} dpm_disp_params_t;

/* ---- parameter sets ------------------------------------------------------------------- */

/* M_R campaign from the devices' exact thresholds.
 *   d        number of groups, 2..DPM_DISP_MAX_GROUPS
 *   keep_g   group GRR keep threshold, other_g the per-other-group threshold:
 *            keep_g + (d - 1) other_g must equal 2^32, other_g >= 1, keep_g > other_g
 *   keep_v   value RR keep threshold, 2^31 < keep_v (so that 2b - 1 > 0)
 * DPM_ERR_PARAM on NULL or any violated bound. */
dpm_status_t dpm_disp_params_campaign_mr(dpm_disp_params_t *p, uint32_t d, uint32_t keep_g,
                                         uint32_t other_g, uint32_t keep_v);

/* M_L campaign from the devices' exact parameters.
 *   keep_g, other_g  as for M_R
 *   t_kept, t_flip   discrete Laplace scales in grid units (finite, > 0); the SDK uses
 *                    t = 2^(F+1) / eps2 for both (k = 2). t_flip != t_kept is accepted for
 *                    analysis but has no finite LDP level (dpm_disp_params_true_ldp: +inf).
 *   frac_bits        F, values are int64 / 2^F, F <= DPM_DISP_MAX_FRAC_BITS
 * DPM_ERR_PARAM on NULL or any violated bound. */
dpm_status_t dpm_disp_params_campaign_ml(dpm_disp_params_t *p, uint32_t d, uint32_t keep_g,
                                         uint32_t other_g, double t_kept, double t_flip,
                                         uint32_t frac_bits);

/* Parameters for a total budget eps (> 0, finite) and a split kind.
 *   DPM_DISP_SPLIT_CORRECT  the SDK's split; thresholds quantized the way the device does
 *                           (dpm_disp_grr_thresholds), M_L on the grid Q(frac_bits) with
 *                           t = 2^(F+1) / eps. Use for planning.
 *   DPM_DISP_SPLIT_PAPER    the paper's split, unquantized, continuous Laplace (frac_bits
 *                           ignored). PAPER REPRODUCTION ONLY: does not deliver the stated ε
 *                           (M_R really spends up to eps + ln 2; M_L "opt." with k != 2 has no
 *                           finite ε).
 * DPM_ERR_PARAM on bad arguments; DPM_ERR_RANGE if eps is so small that 32-bit thresholds
 * cannot express it (keep <= other). */
dpm_status_t dpm_disp_params_from_eps(dpm_disp_params_t *p, dpm_disp_mech_t mech,
                                      dpm_disp_split_t split, uint32_t d, double eps,
                                      uint32_t frac_bits);

/* The paper's unquantized model for an explicit split: a = e^eps1 / (e^eps1 + d - 1),
 * b = e^eps2 / (1 + e^eps2) (M_R), continuous Laplace scales 2 / eps2 and k / eps2 in value
 * units (M_L; k > 0, ignored for M_R). For reproducing closed forms
 * (sdk/docs/tuple.md §Reference values); its privacy is whatever dpm_disp_true_ldp_* says, not
 * max(eps1, eps2). */
dpm_status_t dpm_disp_params_from_split(dpm_disp_params_t *p, dpm_disp_mech_t mech, uint32_t d,
                                        double eps1, double eps2, double k);

/* The budget split (eps1 for the group, eps2 for the value, Laplace flip factor k) of a total
 * eps > 0. For M_R *k is set to NaN. The PAPER split is for reproduction only (see above). */
dpm_status_t dpm_disp_split_eps(dpm_disp_mech_t mech, dpm_disp_split_t split, double eps,
                                double *eps1, double *eps2, double *k);

/* The device's GRR thresholds for ε' > 0 over d categories, mirrored in double precision:
 * other = ceil(2^32 / (e^ε' + d - 1)) (at least 1), keep = 2^32 - (d - 1) other. For the value
 * RR use d = 2. The device computes them with certified integer code; this mirror can differ by
 * one unit in rare ties, which is why aggregation takes the campaign's own integers.
 * DPM_ERR_PARAM on bad arguments; DPM_ERR_RANGE if keep <= other (ε' too small). */
dpm_status_t dpm_disp_grr_thresholds(double eps, uint32_t d, uint32_t *keep, uint32_t *other);

/* ---- true LDP levels ----------------------------------------------------------------------- */
/* sdk/docs/tuple.md §M_R and its true privacy level, sdk/docs/tuple.md §M_L and k. */

/* The ε M_R really guarantees for a split (eps1, eps2 > 0):
 *   max{eps2, eps1 + ln(2 e^eps2 / (1 + e^eps2)), ln((1 + e^eps2) / 2) - eps1}
 * (not the paper's max{eps1, eps2}). Valid for every d. */
dpm_status_t dpm_disp_true_ldp_mr(double eps1, double eps2, double *eps_true);

/* The ε M_L guarantees: max{eps2, eps1 + eps2 / 2} when k == 2 exactly, +inf otherwise (the
 * density ratio of two Laplace scales is unbounded). eps1, eps2, k > 0. */
dpm_status_t dpm_disp_true_ldp_ml(double eps1, double eps2, double k, double *eps_true);

/* The ε a parameter set really implements, from its (quantized) probabilities: M_R
 * ln max{b/(1-b), 2ab/q, q/(2a(1-b))}; M_L max{2^(F+1)/t, ln(a/q) + 2^F/t} if t_kept == t_flip,
 * +inf otherwise. */
dpm_status_t dpm_disp_params_true_ldp(const dpm_disp_params_t *p, double *eps_true);

/* ---- noise ------------------------------------------------------------------------------ */

/* Variance of the value noise of an M_L report in value units squared: kept (flipped == 0)
 * or flipped (flipped != 0). Discrete Laplace on the grid, times 2^-2F; continuous Laplace
 * 2 t^2 for unquantized parameter sets (the paper's 8 / eps2^2 and 2 k^2 / eps2^2).
 * DPM_ERR_PARAM for M_R. */
dpm_status_t dpm_disp_value_noise_variance(const dpm_disp_params_t *p, int flipped, double *var);

/* ---- aggregation ------------------------------------------------------------------------ */

/* Exact signed 128-bit accumulator (portable: no __int128). */
typedef struct {
    uint64_t lo;
    uint64_t hi; /* two's complement high word */
} dpm_disp_acc_t;

/* Per-group counts n'_G and sums S_G of the reported values. */
typedef struct {
    dpm_disp_mech_t mech;
    uint32_t d;
    uint32_t frac_bits;                      /* F of M_L values (0 for M_R) */
    uint64_t total;                          /* K: reports added */
    uint64_t count[DPM_DISP_MAX_GROUPS];     /* n'_G: reports whose group is G */
    dpm_disp_acc_t sum[DPM_DISP_MAX_GROUPS]; /* S_G: ±1 (M_R) or grid integers (M_L), exact */
    double sumsq[DPM_DISP_MAX_GROUPS];       /* Σ v'^2 in grid units^2 (M_L ν² plug-in) */
    double sumsq_comp[DPM_DISP_MAX_GROUPS];  /* its Neumaier compensation */
} dpm_disp_agg_t;

/* Empty aggregate for the campaign p (mechanism, d and F are taken from it). */
dpm_status_t dpm_disp_agg_init(dpm_disp_agg_t *agg, const dpm_disp_params_t *p);

/* Add one report (group, value): group < d; value is -1 or +1 for M_R, the Q(F) grid integer
 * for M_L. DPM_ERR_PARAM on a bad group or value, DPM_ERR_RANGE if a counter would overflow. */
dpm_status_t dpm_disp_agg_add(dpm_disp_agg_t *agg, uint32_t group, int64_t value);

/* dst += src (shards aggregated separately). Same mechanism and d, else DPM_ERR_PARAM. */
dpm_status_t dpm_disp_agg_merge(dpm_disp_agg_t *dst, const dpm_disp_agg_t *src);

/* S_G in value units (M_L: grid sum times 2^-F, exact sum rounded once). */
dpm_status_t dpm_disp_agg_sum(const dpm_disp_agg_t *agg, uint32_t group, double *sum);

/* ---- estimators ------------------------------------------------------------------------- */

/* GRR group-size estimate n̂_G = (n'_G - K q) / (a - q): unbiased, may be <= 0 for a small
 * group. agg must match p (mechanism and d), else DPM_ERR_PARAM. */
dpm_status_t dpm_disp_group_size(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg,
                                 uint32_t group, double *n_hat);

/* Group mean m̂_G = S_G / (a n) (M_L) or S_G / (a (2b - 1) n) (M_R), using the quantized a, b
 * of p. Unbiased when n is the true group size (flipped reports have mean zero). n > 0. */
dpm_status_t dpm_disp_group_mean(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg,
                                 uint32_t group, double n, double *mean);

/* Var[m̂_G] for a known group size n (0 < n <= K) among K reports and second moment
 * nu2 = (1/n) Σ v_i² in [0, 1] (or DPM_DISP_NU2_WORST): paper Eq. 19/20 generalised to d:
 *   M_L ( a(1-a) n ν² + a n (σ² + r) + (K - n) q σ̄² ) / (a n)^2
 *   M_R ( a n - a² c² n ν² + (K - n) q ) / (a c n)^2
 * σ², σ̄²: kept / flipped noise variance (dpm_disp_value_noise_variance); r = 2^-2F / 4 bounds
 * the randomized rounding of v to the grid (0 for unquantized sets). */
dpm_status_t dpm_disp_mean_variance(const dpm_disp_params_t *p, double K, double n, double nu2,
                                    double *var);

/* MSE of the signed gap D̂ = m̂_G - m̂_H with known sizes: Var[m̂_G] + Var[m̂_H] (the
 * covariance is zero: every report lands in one group and flipped values have mean zero).
 * Also an upper bound on the MSE of |D̂|. n_g + n_h <= K. */
dpm_status_t dpm_disp_gap_mse(const dpm_disp_params_t *p, double K, double n_g, double n_h,
                              double nu2_g, double nu2_h, double *mse);

/* The bound of ν² that maximises (worst != 0) or minimises (worst == 0) the variance:
 * M_L worst 1, best 0; M_R worst 0, best 1. */
dpm_status_t dpm_disp_nu2_bound(dpm_disp_mech_t mech, int worst, double *nu2);

/* One group's estimate. */
typedef struct {
    int valid;           /* 0 if the group size used is <= 0 (estimated); mean/var are NaN */
    uint64_t n_reported; /* n'_G */
    double n;            /* the group size used: known, or the GRR estimate */
    double mean;         /* m̂_G, value scale [-1, 1] */
    double nu2;          /* ν² used for the variance */
    int nu2_given;       /* 1 if ν² was given as a number (the true one: the variance is exact),
                          * 0 for the worst case or the plug-in (dpm_disp_plugin_excess) */
    double var;          /* Var[m̂_G] (delta method including n̂'s noise if n was estimated) */
} dpm_disp_group_est_t;

typedef struct {
    dpm_disp_params_t params;
    uint64_t total;      /* K */
    int sizes_estimated; /* 1 if the sizes came from the GRR estimator */
    dpm_disp_group_est_t group[DPM_DISP_MAX_GROUPS];
} dpm_disp_estimate_t;

/* Estimate every group of an aggregate.
 *   n_true  d known group sizes (each 0 < n <= K), or NULL to estimate them from the GRR
 *           (ratio estimator: slightly biased; its variance adds the size noise by the delta
 *           method, with m̂ plugged in).
 *   nu2     d second moments in [0, 1], DPM_DISP_NU2_WORST or DPM_DISP_NU2_PLUGIN per group, or
 *           NULL for the worst case everywhere. Plug-in: M_L from the reports' squares
 *           (unbiased, clipped to [0, 1]); M_R max(0, m̂² - Var[m̂]) clipped to 1, which errs
 *           on the side of a larger variance (M_R reports carry no second moment).
 * DPM_ERR_PARAM on bad arguments or an agg that does not match p; DPM_ERR_UNDEFINED if no
 * report was aggregated. */
dpm_status_t dpm_disp_estimate(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg,
                               const double *n_true, const double *nu2, dpm_disp_estimate_t *est);

/* A pairwise disparity. */
typedef struct {
    uint32_t g, h;
    double diff;       /* signed D̂ = m̂_g - m̂_h: unbiased (known sizes) */
    double abs_diff;   /* |D̂|: biased upward when |D| is small against the noise */
    double var;        /* Var[D̂]; bounds the MSE of |D̂| too */
    double confidence; /* the level the two bounds below hold at */
    double chebyshev;  /* α = sqrt(var / (1 - confidence)): Pr[|D̂ - D| >= α] <= 1 - conf */
    double ci_lo;      /* normal-approximation interval D̂ ± z sqrt(var) */
    double ci_hi;
} dpm_disp_gap_t;

/* Gap between groups g != h at confidence in (0, 1) (e.g. 0.95 or the paper's 0.99). With
 * estimated sizes the covariance of the two means (shared GRR counts) is included.
 * DPM_ERR_UNDEFINED if either group is not valid. */
dpm_status_t dpm_disp_gap(const dpm_disp_estimate_t *est, uint32_t g, uint32_t h, double confidence,
                          dpm_disp_gap_t *gap);

/* Every pair g < h, in order (0,1), (0,2), ..., (d-2,d-1): d(d-1)/2 gaps into out[cap].
 * DPM_ERR_BUFFER if cap is too small; DPM_ERR_UNDEFINED if a group is not valid. */
dpm_status_t dpm_disp_gaps_all(const dpm_disp_estimate_t *est, double confidence,
                               dpm_disp_gap_t *out, size_t cap, size_t *count);

/* The largest move of group g's mean m̂_G by one randomization event, on the value scale: a
 * GRR move of one report in or out of the group (its value at most 1 in size, and n̂_G's share
 * when the sizes are estimated) or, for M_R, one RR flip of a value (S_G by 2). With the
 * variance it gives the effective number of events var / jump² (estimate/ci_flags.h): at large
 * ε a run holds only a handful and the normal interval does not hold. DPM_ERR_PARAM on bad
 * arguments, DPM_ERR_UNDEFINED for a group that is not valid. */
dpm_status_t dpm_disp_event_jump(const dpm_disp_estimate_t *est, uint32_t g, double *jump);

/* How far group g's variance may exceed the truth because of M_R's plug-in ν² (which can only
 * err high: max(0, m̂² - Var) <= ν²) or its worst case ν² = 0: Var at the ν² used over Var at
 * ν² = 1 (1 for M_L, whose reports carry ν², and for a ν² given as a number). Above (z_0.985 /
 * z_0.975)² = 1.226 a bias-free normal interval may cover more than 97 %: the interval is then
 * conservative (estimate/ci_flags.h). */
dpm_status_t dpm_disp_plugin_excess(const dpm_disp_estimate_t *est, uint32_t g, double *ratio);

/* An interval as every tool prints it, on the metric's scale (value v = 2 metric - 1 halved:
 * a group's mean (m̂ + 1) / 2, a gap's difference / 2). */
typedef struct {
    double est, var; /* the estimate and its error variance */
    double half;     /* half-width at the level asked for */
    double half95;   /* half-width at 0.95 */
    double events;   /* effective randomization events (estimate/ci_flags.h); NaN: unknown */
    double jump;     /* one event's largest move of the estimate */
    double excess;   /* the variance may exceed the truth by this factor (>= 1) */
    unsigned flags;  /* the interval's claim (estimate/ci_flags.h), both levels' flags */
} dpm_disp_ci_t;

/* Group g's mean with its interval at confidence in (0, 1): the normal one, the Poisson-aware
 * one where few randomization events move the mean (DPM_CI_FEW_EVENTS), DPM_CI_CONSERVATIVE
 * where M_R's plug-in ν² may make the variance too large (dpm_ci_var_excess), DPM_CI_SMALL_N
 * where the event size or the excess cannot be computed. The collector and dpm-sim both print
 * this one. DPM_ERR_UNDEFINED for a group that is not valid. */
dpm_status_t dpm_disp_mean_ci(const dpm_disp_estimate_t *est, uint32_t g, double confidence,
                              dpm_disp_ci_t *out);

/* Gap g - h likewise (dpm_disp_gap's variance; one event moves it by at most the larger of the
 * two groups' jumps; the excess is the larger of theirs). DPM_ERR_UNDEFINED if a group is not
 * valid. */
dpm_status_t dpm_disp_gap_ci(const dpm_disp_estimate_t *est, uint32_t g, uint32_t h,
                             double confidence, dpm_disp_ci_t *out);

/* Every pair at once (estimate/pairwise.h): simultaneous intervals for all d(d-1)/2 gaps at
 * confidence in (0, 1), which pairs are distinguishable, and the largest |gap| with an interval
 * for it that accounts for its selection; value scale [-1, 1] like dpm_disp_gap (pair k's
 * diff and sd are dpm_disp_gap's). The means' covariance: diagonal with known sizes, with the
 * shared GRR counts' terms when the sizes were estimated. A group that is not valid leaves its
 * pairs without an interval (and the largest undefined). DPM_ERR_PARAM on bad arguments. */
dpm_status_t dpm_disp_pairwise(const dpm_disp_estimate_t *est, double confidence,
                               dpm_pairwise_t *out);

/* Chebyshev half-width α = sqrt(mse / (1 - confidence)), the paper's bound (10 sqrt(MSE) at
 * 0.99). mse >= 0, confidence in (0, 1). */
dpm_status_t dpm_disp_chebyshev_alpha(double mse, double confidence, double *alpha);

/* ---- planner ---------------------------------------------------------------------------- */

typedef enum {
    DPM_DISP_BOUND_CHEBYSHEV = 1, /* the paper's: MSE <= (1 - c) α² */
    DPM_DISP_BOUND_NORMAL = 2     /* normal approximation: MSE <= (α / z_{(1+c)/2})² */
} dpm_disp_bound_t;

/* A campaign to plan: "|D̂ - D| < alpha with probability confidence". */
typedef struct {
    dpm_disp_mech_t mech;
    dpm_disp_split_t split; /* CORRECT (ships) or PAPER (reproduction only) */
    uint32_t d;             /* groups */
    uint32_t frac_bits;     /* M_L grid F for the correct split */
    double share_g;         /* n_G / K of the two compared groups, > 0, sum <= 1 */
    double share_h;
    double nu2_g; /* second moments, or DPM_DISP_NU2_WORST */
    double nu2_h;
    double alpha;      /* target error on the value scale [-1, 1] */
    double confidence; /* in (0, 1) */
    dpm_disp_bound_t bound;
} dpm_disp_plan_t;

/* Defaults: d = 2, balanced shares 1/2, worst-case ν², Chebyshev, F = DPM_FRAC_BITS.
 * alpha > 0, confidence in (0, 1). */
dpm_status_t dpm_disp_plan_init(dpm_disp_plan_t *plan, dpm_disp_mech_t mech, dpm_disp_split_t split,
                                double alpha, double confidence);

/* The parameter set the plan uses at budget eps. */
dpm_status_t dpm_disp_plan_params(const dpm_disp_plan_t *plan, double eps, dpm_disp_params_t *p);

/* MSE of the gap at budget eps with K >= 1 devices (group sizes share * K). */
dpm_status_t dpm_disp_plan_mse(const dpm_disp_plan_t *plan, double K, double eps, double *mse);

/* The MSE the bound allows: (1 - c) α² (Chebyshev) or (α / z)² (normal). */
dpm_status_t dpm_disp_plan_target_mse(const dpm_disp_plan_t *plan, double *target);

/* Smallest eps in [DPM_DISP_PLAN_EPS_MIN, DPM_DISP_PLAN_EPS_MAX] whose gap MSE meets the
 * target, by bisection (the MSE decreases in eps), to 1e-12 relative. *eps = NaN when no eps
 * reaches it: M_R's variance floor (the Harmony coin: sum_G (1 - ν²) / n_G, approached as
 * eps -> inf) is at or above the target, e.g. the paper's "-" cells (K alpha² <= 400 at 0.99).
 * Correct splits use quantized thresholds, so the MSE is a step function of eps (steps ~1e-9
 * relative) and the MSE at the answer can sit that much below the target. */
dpm_status_t dpm_disp_plan_min_eps(const dpm_disp_plan_t *plan, double K, double *eps);

/* Smallest number of devices K (an integer-valued double) whose gap MSE at eps meets the
 * target. DPM_ERR_RANGE if it exceeds 2^53. */
dpm_status_t dpm_disp_plan_min_devices(const dpm_disp_plan_t *plan, double eps, double *K);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_DISPARITY_H */
