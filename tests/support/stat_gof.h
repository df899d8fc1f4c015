/* SPDX-License-Identifier: Apache-2.0 */
/* Statistics for the sampler tests (tests only; double precision is fine here, never in sdk/).
 *
 * Goodness of fit: Pearson chi-square and the G-test against expected counts, with p-values
 * from the regularized incomplete gamma function (no normal or Wilson-Hilferty approximation:
 * the tests run at alpha ~ 1e-6, where those are too crude). Binomial proportions:
 * Clopper-Pearson bounds from the regularized incomplete beta function.
 *
 * Typical use, for a sampler with a known pmf:
 *     counts[i] observed, expected[i] = N * pmf[i] with the tail mass folded into the end cells;
 *     n = stat_pool_tails(counts, expected, n, 20.0);
 *     stat_gof_t g = stat_gof_test(counts, expected, n, STAT_G);
 *     assert g.p_value > 1e-6 (or g.statistic < stat_chi2_isf(1e-6, g.dof)). */
#ifndef STAT_GOF_H
#define STAT_GOF_H

#include <stddef.h>
#include <stdint.h>

/* Regularized incomplete gamma functions, a > 0, x >= 0: P(a, x) = γ(a, x) / Γ(a) and
 * Q(a, x) = 1 - P(a, x), each computed directly (no 1 - tiny cancellation). */
double stat_gamma_p(double a, double x);
double stat_gamma_q(double a, double x);

/* Chi-square with dof degrees of freedom: survival function Pr[X >= x], and its inverse: the
 * critical value x with Pr[X >= x] = alpha (0 < alpha < 1), by bisection on stat_chi2_sf. */
double stat_chi2_sf(double x, double dof);
double stat_chi2_isf(double alpha, double dof);

/* Regularized incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1 (continued fraction). */
double stat_beta_i(double a, double b, double x);

/* Exact binomial tails for k successes in n trials at probability q: Pr[X <= k], and the
 * two-sided p-value 2 min(Pr[X <= k], Pr[X >= k]) (capped at 1). Sums of the pmf: O(n). */
double stat_binom_cdf(uint32_t k, uint32_t n, double q);
double stat_binom_two_sided(uint32_t k, uint32_t n, double q);

/* Clopper-Pearson one-sided bounds for a binomial proportion from k successes in n trials:
 * Pr[p < lower] <= alpha and Pr[p > upper] <= alpha (each exact-conservative). For a
 * two-sided interval at level 1 - a use alpha = a / 2 for both. lower(0) = 0, upper(n) = 1. */
double stat_binom_lower(uint64_t k, uint64_t n, double alpha);
double stat_binom_upper(uint64_t k, uint64_t n, double alpha);

typedef enum {
    STAT_PEARSON, /* sum (O - E)^2 / E */
    STAT_G        /* 2 sum O ln(O / E) */
} stat_gof_kind_t;

typedef struct {
    double statistic;
    double dof;          /* cells - 1 (no parameter is fitted) */
    double p_value;      /* Pr[chi2(dof) >= statistic] */
    double min_expected; /* smallest expected count (check it is >= 5, better >= 20) */
    double total_observed;
    double total_expected; /* should equal total_observed: fold every tail into a cell */
    size_t cells;
} stat_gof_t;

/* Goodness of fit of observed counts to expected counts over n >= 2 cells. */
stat_gof_t stat_gof_test(const uint64_t *observed, const double *expected, size_t n,
                         stat_gof_kind_t kind);

/* Merge cells in place from each end inward until each end cell expects >= min_expected,
 * then merge any interior cell still below it into its left neighbour. Returns the new
 * number of cells (the arrays are compacted). For unimodal pmfs only the tails move. */
size_t stat_pool_tails(uint64_t *observed, double *expected, size_t n, double min_expected);

/* The sample count of a statistical test: `full`, or full / D but never below `min` when the
 * environment variable DPM_STAT_DIVISOR holds an integer D > 1 (make cross sets it: emulated
 * targets run ~10-25x slower). min is the smallest count the test's design needs (e.g. every
 * pooled cell expecting >= 20). The level stays alpha ~ 1e-6, so a reduced run is no likelier
 * to fail by chance; it only has less power (it detects larger deviations). */
uint32_t stat_samples(uint32_t full, uint32_t min);

#endif
