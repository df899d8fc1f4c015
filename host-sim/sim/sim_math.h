/* SPDX-License-Identifier: Apache-2.0 */
/* Special functions the simulator needs in double precision (host only): the normal cdf, the
 * regularized incomplete beta function, log probability mass functions of the binomial,
 * beta-binomial and Poisson laws computed without cancellation (Loader's saddle-point form),
 * and a log-binomial coefficient. */
#ifndef DPM_SIM_MATH_H
#define DPM_SIM_MATH_H

#include <stdint.h>

/* Standard normal cdf Φ(x) and its complement 1 - Φ(x), each accurate in its own tail. */
double sim_norm_cdf(double x);
double sim_norm_sf(double x);

/* Regularized incomplete beta I_x(a, b) for a, b > 0, 0 <= x <= 1 (continued fraction). NaN
 * for arguments out of range. */
double sim_beta_inc(double a, double b, double x);

/* stirlerr(n) = ln n! - ln(sqrt(2 pi n) (n/e)^n) for n >= 1. */
double sim_stirlerr(double n);

/* bd0(x, m) = x ln(x/m) + m - x, the deviance term, without cancellation near x = m. x >= 0,
 * m > 0. */
double sim_bd0(double x, double m);

/* ln Pr[Poisson(lambda) = k], lambda > 0, k >= 0: accurate even for lambda near 2^50, where
 * -lambda + k ln lambda - ln k! would lose every digit to cancellation. */
double sim_log_dpois(double k, double lambda);

/* ln Pr[Binomial(n, p) = k], 0 <= k <= n, 0 <= p <= 1 (-inf for impossible k). */
double sim_log_dbinom(double k, double n, double p);

/* ln Pr[BetaBinomial(n, alpha, beta) = k], alpha, beta > 0. */
double sim_log_dbetabinom(double k, double n, double alpha, double beta);

#endif /* DPM_SIM_MATH_H */
