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

#endif /* DPM_HOST_PROB_H */
