/* SPDX-License-Identifier: Apache-2.0 */
/* Probability functions in double precision, for the host side only (estimators, simulator,
 * planners, reproductions; tests link them too): the normal law, the regularized incomplete
 * beta function, Student's t, and log probability mass functions computed without cancellation
 * (C. Loader, "Fast and accurate computation of binomial probabilities", 2000). One copy of
 * each: nothing else under host-sim/ or tests/ computes these. */
#ifndef DPM_HOST_PROB_H
#define DPM_HOST_PROB_H

#include <stdint.h>

/* Standard normal cdf Φ(x) and its complement 1 - Φ(x), each accurate in its own tail. */
double prob_norm_cdf(double x);
double prob_norm_sf(double x);

/* Φ^-1(p) for 0 < p < 1, by bisection of prob_norm_cdf to 1e-15 (NaN outside (0, 1)). */
double prob_norm_quantile(double p);

/* Variance of the discrete Laplace law Pr[z] proportional to exp(-|z| / t), z integer, the
 * noise of every local mechanism of the SDK: 2p / (1 - p)^2 with p = e^(-1/t), 1 - p computed
 * without cancellation (-> 2t^2 - 1/6 as t grows); 0 for t <= 0 (no noise). */
double prob_dlap_var(double t);

/* Regularized incomplete beta I_x(a, b) for a, b > 0, 0 <= x <= 1 (continued fraction, modified
 * Lentz, relative precision ~1e-15). NaN for arguments out of range. */
double prob_beta_inc(double a, double b, double x);

/* I_x(a, b) and 1 - I_x(a, b), the smaller one computed directly so that tails keep their
 * precision (binomial tails, Clopper-Pearson bounds). Same domain as prob_beta_inc. */
void prob_beta_inc_pair(double a, double b, double x, double *i, double *ic);

/* Pr[T >= t] for Student's t with dof > 0 degrees of freedom (dof need not be an integer). */
double prob_t_sf(double t, double dof);

/* Pr[Binomial(n, p) <= k], summed from the pmf (n up to a few 10^6). */
double prob_binom_cdf(uint64_t k, uint64_t n, double p);

/* stirlerr(n) = ln n! - ln(sqrt(2 pi n) (n/e)^n) for n >= 1. */
double prob_stirlerr(double n);

/* bd0(x, m) = x ln(x/m) + m - x, the deviance term, without cancellation near x = m. x >= 0,
 * m > 0. */
double prob_bd0(double x, double m);

/* ln Pr[Poisson(lambda) = k], lambda > 0, k >= 0: accurate even for lambda near 2^50, where
 * -lambda + k ln lambda - ln k! would lose every digit to cancellation. */
double prob_log_dpois(double k, double lambda);

/* ln Pr[Binomial(n, p) = k], 0 <= k <= n, 0 <= p <= 1 (-inf for impossible k). */
double prob_log_dbinom(double k, double n, double p);

/* ln Pr[BetaBinomial(n, alpha, beta) = k], alpha, beta > 0. */
double prob_log_dbetabinom(double k, double n, double alpha, double beta);

/* ---- intervals that the normal approximation does not give --------------------------------- */

/* Pr[Poisson(lambda) <= k], lambda >= 0 (summed from the pmf; lambda up to ~1e6). */
double prob_pois_cdf(uint64_t k, double lambda);

/* The smallest k with Pr[Poisson(lambda) <= k] >= p, 0 <= p < 1, lambda >= 0. */
uint64_t prob_pois_quantile(double lambda, double p);

/* Below this many effective randomization events the normal interval is not claimed.
 * Derivation: an error made of lambda unit events of one size (a Poisson(lambda) count, or the
 * symmetric Skellam(lambda/2, lambda/2) difference of two, the lattice extremes of a sum of
 * rare jumps) lies within its own +-1.96 sd with probability outside [93 %, 97 %] for some
 * lambda up to 9.372 (Skellam at lambda 9.35: 92.88 %; Poisson at 2.14: 97.8 %), and inside it
 * for every lambda >= 9.372 (checked on a 0.2 % grid to 400: tests/unit/test_prob_intervals.c).
 * Weights that differ between events smooth the lattice, so this is the worst case. */
#define PROB_NORMAL_MIN_EVENTS 10.0

/* The smallest integer q with Pr[|X| <= q] >= c for X = Skellam(lambda / 2, lambda / 2) (the
 * difference of two independent Poisson(lambda / 2) counts), lambda < 1000, 0 < c < 1. */
uint64_t prob_skellam_abs_quantile(double lambda, double c);

/* Half-width of a level-c interval for an error that is a sum of independent randomization
 * events (an RR flip, a GRR move, one unit of a discrete Laplace draw), each moving the estimate
 * by at most `jump`, with total variance var (other smooth error terms may be included in var).
 * *events (optional) = var / jump^2, the effective number of events. When it is at least
 * PROB_NORMAL_MIN_EVENTS (or jump is 0): the normal half-width z sqrt(var). Below: the
 * Poisson-aware half-width, jump times the larger of the two lattice extremes' exact quantiles
 * at that many events, a Poisson count of one-signed jumps, centred (Q - events, Q its (1 + c)
 * / 2 quantile), and a symmetric Skellam difference (prob_skellam_abs_quantile); never less
 * than z sqrt(var); and never less than one whole jump, capped at Chebyshev's sqrt(var / (1 -
 * c)) (which holds for any law). The last term matters when the jumps differ in size: var /
 * jump² then counts fewer events than happen (most move the estimate less than the largest
 * one), and with under 0.05 counted events the lattices put more than 97.5 % on "no event"
 * while a real run holds a few smaller ones (ustat_bins' AUC at eps 11: 0.93 without it).
 * Conservative by the lattice's step: coverage at least c for both lattices
 * (tests/unit/test_prob_intervals.c) and for each mechanism's own mix of jumps (measured in
 * tests/stat/test_few_events.c). */
double prob_events_halfwidth(double var, double jump, double c, double *events);

/* Half-width h of the shortest interval est -+ h that covers with probability c whenever the
 * estimate is normal with standard deviation sd and a bias of at most `bound` in absolute value:
 * Phi((h - bound) / sd) - Phi((-h - bound) / sd) = c (Armstrong and Kolesar's bias-aware
 * interval; = z sd for bound 0, -> bound + Phi^-1(c) sd as bound / sd grows). sd > 0 or bound
 * > 0; NaN otherwise. */
double prob_bias_aware_halfwidth(double sd, double bound, double c);

#endif /* DPM_HOST_PROB_H */
