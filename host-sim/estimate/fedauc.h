/* SPDX-License-Identifier: Apache-2.0 */
/* Server side of FedAUC (sdk: dpm/expert/fedauc.h; sdk/docs/fedauc.md): ranking the uploaded
 * scores, the AUC from the devices' summed rank statistics, the de-biasing of fedauc_rr, the
 * analytic standard deviation (sdk/docs/fedauc.md §Delta method) and a normal confidence interval.
 * Host only (doubles, malloc); the collector's two-phase campaign and dpm-sim build on it.
 *
 * Ranking. All M uploaded scores are sorted (stable LSD radix sort on the 32-bit score, O(M));
 * a group of tied scores at sorted positions a..b gets the doubled mid-rank R = a + b (0 = the
 * lowest), so ties stay integers; every upload is answered with its scores' R in upload order.
 *
 * AUC from the sums (rank units, localSum = localSum2 / 2):
 *     AUC = (S - P (P - 1) / 2) / (P N),  S = sum localSum,  P = sum localP,  N = M - P,
 * the tie-aware Mann-Whitney AUC (ties count 1/2, as sklearn) when the statistics are exact.
 * fedauc_lap: S and P are the noised sums (ORTHOGONAL/ADAPTIVE: localSum2' = (t + S_k p) / n
 * per device), unbiased, and the AUC needs no de-biasing. fedauc_rr: S and P are exact sums of
 * labels flipped with probability ρ = (2^32 - keep) / 2^32 (the device's implemented RR, not
 * 1 / (1 + e^ε)); two equivalent de-biasings:
 *   Menon et al. (spec Alg. 3, with the paper's typo fixed: π' in α's denominator):
 *     P' = (P (1 - ρ) - N ρ) / (1 - 2ρ), π' = P' / M, α = (1 - π') ρ / (π' (1 - ρ) + (1 - π') ρ),
 *     β = π' ρ / (π' ρ + (1 - π') (1 - ρ)), AUC = (AUC_noisy - (α + β) / 2) / (1 - α - β);
 *   the unbiased sums (sdk/docs/fedauc.md §FedAUC_RR):
 *     S~ = (S - ρ sum r) / (1 - 2ρ), P~ = (P - ρ M) / (1 - 2ρ),
 *     AUC = (S~ - P~ (P~ - 1) / 2) / (P~ (M - P~)).
 *   They agree to rounding (tests/unit/test_fedauc_estimate.c); dpm_fa_estimate uses the second.
 *
 * Standard deviation (delta method around the AUC of the devices' own examples, i.e. the noise
 * alone; sdk/docs/fedauc.md §Delta method, which corrects the paper's Eq. 7). With c = P - 1/2 +
 * AUC (N - P), an error e_S in S and e_P in P moves the AUC by (e_S - c e_P) / (P N). Evaluated at
 * the estimates:
 *   fedauc_rr: Var = ρ (1 - ρ) / (1 - 2ρ)^2 sum_i (r_i - c)^2 / (P N)^2 over all M ranks
 *     (sum (r - c)^2 = sum r^2 - 2 c sum r + M c^2 from the ranking's moments, ties included);
 *   LOCAL/GLOBAL: Var = sum_k [v(t_S,k) / 4 + c^2 v(t_P,k)] / (P N)^2;
 *   ORTHOGONAL/ADAPTIVE: Var = sum_k [v(t_T,k) / (4 n_k^2) + (r̄_k - c)^2 v(t_P,k)] / (P N)^2,
 *     r̄_k = S_k / 2 n_k (the noise on localP enters both sums and partly cancels);
 * v(t) = 2 p / (1 - p)^2, p = e^(-1/t), the variance of the devices' discrete Laplace of scale
 * t: t_P = 1 / ε_p, t_S = Δ / (ε - ε_p) in doubled-rank units (Δ, ε_p from each report).
 * CI: AUC ± z sd, z = Φ^-1((1 + level) / 2). tests/stat/test_fedauc_coverage.c checks its
 * coverage by simulation through the real device code.
 * Flags (estimate/ci_flags.h). Few randomization events: at large ε an RR flip or a non-zero
 * draw of localP's Laplace is rare, and a run of a few thousand examples holds 1-3 of them
 * (the normal interval then held 0.88-0.93). One RR flip moves the AUC by at most far / ((1 -
 * 2ρ) P N), one unit of localP's noise by at most c / (P N) (LOCAL, GLOBAL) or far / (P N)
 * (ORTHOGONAL, ADAPTIVE: |r̄_k - c|), far = max(|c|, M - 1 - c); below PROB_NORMAL_MIN_EVENTS
 * effective events (sd² / jump²) the interval is the Poisson-aware one (DPM_CI_FEW_EVENTS).
 * Noisy class totals: Var(P) = M ρ (1 - ρ) / (1 - 2ρ)² (RR) or the sum of localP's noise
 * variances (Laplace), and Fieller's g = z² Var(P) (1 / P² + 1 / N²) above 0.05 flags
 * DPM_CI_CLASS_NOISE (the AUC is then biased by up to 8 of the coverage test's standard errors
 * at a few hundred examples of one class). tests/stat/test_few_events.c.
 *
 * Dropouts: the formula needs every ranked example's statistics (sum n_k = M); dpm_fa_estimate
 * refuses an aggregate that covers fewer (the collector decides what a campaign does with
 * devices that uploaded but never reported). */
#ifndef DPM_HOST_ESTIMATE_FEDAUC_H
#define DPM_HOST_ESTIMATE_FEDAUC_H

#include <stdint.h>

#include "dpm/expert/report.h"
#include "dpm/expert/fedauc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ranking ----------------------------------------------------------------------------------
 */

/* Moments of the 0-based (mid-)ranks r = R / 2 of a ranking. */
typedef struct {
    uint64_t m;          /* M */
    long double sum_r;   /* = M (M - 1) / 2 */
    long double sum_r2;  /* <= (M - 1) M (2M - 1) / 6, lower with ties */
    uint64_t tie_groups; /* groups of equal scores (M if no ties) */
} dpm_fa_ranking_t;

/* rank2[i] = the doubled mid-rank of scores[i] among scores[0, m), 1 <= m <= 2^31.
 * mom (optional) gets the moments. Returns DPM_OK, DPM_ERR_PARAM (NULL, m out of range),
 * DPM_ERR_BUFFER (out of memory). */
dpm_status_t dpm_fa_rank2(const uint32_t *scores, uint64_t m, uint32_t *rank2,
                          dpm_fa_ranking_t *mom);

/* Ground truth: the tie-aware Mann-Whitney AUC of labelled scores, by sorting and counting the
 * negatives below (and half the negatives tied with) each positive: an independent route, not
 * the rank sum. NaN if a class is empty or on out of memory. */
double dpm_fa_auc_exact(const uint32_t *scores, const uint8_t *labels, uint64_t m);

/* ---- the AUC from summed statistics -----------------------------------------------------------
 */

/* (sum_r - P (P - 1) / 2) / (P (M - P)), all in rank units. */
double dpm_fa_auc_from_sums(double sum_r, double p, double m);

/* Menon et al.'s de-biasing (Alg. 3): the clean AUC from the AUC of flipped labels, their count
 * P (positives after flipping) and N = M - P, with flip probability ρ < 1/2. */
double dpm_fa_menon_debias(double auc_noisy, double p, double n, double rho);

/* The unbiased-sums form: S~, P~ from the flipped sums (rank units) and sum r of all M ranks. */
double dpm_fa_rr_debias(double sum_r_flipped, double p_flipped, double m, double sum_r_all,
                        double rho);

/* The RR standard deviation of sdk/docs/fedauc.md §Delta method for M examples, P positives, the
 * AUC and ρ, with the no-ties sum of (r - c)^2 (the planning form; dpm_fa_estimate uses the
 * ranking's moments). */
double dpm_fa_sd_rr(double m, double p, double auc, double rho);

/* THE PAPER'S Eq. 7 (sdk/docs/fedauc.md §The paper's RR variance), kept only as the negative
 * control of the coverage test: it omits the 1 / (1 - 2ρ) gain of the de-biasing and the
 * correlation with P; WRONG. */
double dpm_fa_sd_rr_paper_eq7(double m, double p, double n, double eps);

/* ---- aggregation and the estimate -------------------------------------------------------------
 */

/* The server's view of a FedAUC campaign. */
typedef struct {
    uint32_t mechanism; /* DPM_MECH_ID_FEDAUC_RR / _LAP */
    uint32_t variant;   /* dpm_fedauc_variant_t */
    dpm_eps_t eps;      /* the reports' implemented ε, Q16.16; 0 = noiseless (ε = ∞: exact
                         * statistics, for sanity runs) */
    double rho;         /* fedauc_rr: (2^32 - keep) / 2^32; 0 when noiseless */
} dpm_fa_params_t;

/* From a fedauc mechanism (the campaign as devices build it). DPM_ERR_PARAM otherwise. */
dpm_status_t dpm_fa_params_from_mech(dpm_fa_params_t *p, const dpm_mech_t *m);

/* Noiseless parameters: exact statistics (dpm_fedauc_stats), for the ε = ∞ check. */
dpm_status_t dpm_fa_params_exact(dpm_fa_params_t *p, uint32_t mechanism, uint32_t variant);

typedef struct {
    uint64_t reports;
    uint64_t examples;     /* sum n */
    uint32_t total;        /* M named by the reports (all must agree) */
    __int128 sum2_int;     /* exact sum of local_sum2 (RR, LOCAL, GLOBAL), doubled units */
    long double sum2_frac; /* sum of (t + S p) / n (ORTHOGONAL, ADAPTIVE), doubled units */
    __int128 p;            /* sum local_p */
    /* noise variance: Var(e_S - c e_P) = a0 - 2 c a2 + c^2 a3 (rank units) */
    long double a0, a2, a3;
} dpm_fa_agg_t;

void dpm_fa_agg_init(dpm_fa_agg_t *a);

/* Add one report body (checked by dpm_mech_check_report). DPM_ERR_PARAM for a total that
 * differs from the earlier reports', n == 0 or an eps_p that the parameters cannot have;
 * DPM_ERR_RANGE (nothing added) for |localP|, |localSum2|, |t| or S above 2^62 or counts that
 * would wrap. Exact sums: each added term is below 2^125 in magnitude (S localP < 2^124), so
 * the 128-bit sums hold 2^64 reports without overflow. */
dpm_status_t dpm_fa_agg_add(dpm_fa_agg_t *a, const dpm_fa_params_t *p,
                            const dpm_fedauc_report_t *b);

/* Add exact statistics as a noiseless report of the variant would carry them (ε = ∞ runs):
 * ORTHOGONAL/ADAPTIVE through t, the others through sum2. */
dpm_status_t dpm_fa_agg_add_exact(dpm_fa_agg_t *a, const dpm_fa_params_t *p,
                                  const dpm_fedauc_stats_t *st, const dpm_fedauc_ranks_t *rk);

typedef struct {
    double auc;       /* clipped to [0, 1] */
    double auc_raw;   /* unclipped */
    double auc_noisy; /* fedauc_rr: the AUC of the flipped labels (no de-biasing); else = raw */
    double m, p, n;   /* M, estimated positives and negatives */
    double c;         /* P - 1/2 + AUC (N - P) */
    double sd;        /* analytic standard deviation (noise) */
    double z, ci_lo, ci_hi;
    unsigned ci_flags; /* estimate/ci_flags.h: 0 = the calibrated claim */
    double events;     /* effective randomization events, sd² / jump² */
    double fieller_g;  /* z² Var(P) (1 / P² + 1 / N²) */
    int valid;         /* 0: P or N estimated <= 0, or ρ >= 1/2 */
} dpm_fa_estimate_t;

/* The estimate at confidence level in (0, 1). rk: the ranking's moments (fedauc_rr's variance;
 * NULL: the no-ties sums). DPM_ERR_PARAM for NULL or a bad level; DPM_ERR_UNDEFINED if the
 * reports do not cover all M ranked examples (dropouts) or there are none; otherwise DPM_OK
 * with out->valid saying whether the numbers mean anything. */
dpm_status_t dpm_fa_estimate(const dpm_fa_params_t *p, const dpm_fa_agg_t *a,
                             const dpm_fa_ranking_t *rk, double level, dpm_fa_estimate_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_FEDAUC_H */
