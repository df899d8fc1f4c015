/* SPDX-License-Identifier: Apache-2.0 */
/* Seeded random variates for the simulator's aggregate-level (exact) mode and its population
 * generator. Host only: doubles throughout; never used by a simulated device, whose noise comes
 * from the SDK's own integer samplers.
 *
 * Source: a seeded stream (counter-based splitmix64, stream.h), 64-bit words. A uniform
 * double takes the top 53 bits of one word, (w >> 11 + 0.5) 2^-53, so it is never 0 or 1.
 *
 * Algorithms (what is exact and what is floating point):
 *   binomial   inversion when min(p, 1-p) n < 30, else BTPE (Kachitvichyanukul & Schmeiser
 *              1988) with its final acceptance test written with log1p, so that the terms
 *              multiplied by n keep their precision up to n ~ 2^53. Exact in distribution up
 *              to the double rounding of p and of the acceptance tests (relative ~1e-15 per
 *              pmf value).
 *   Poisson    inversion for lambda < 10, else PTRS (Hoermann 1993) whose acceptance test
 *              uses Loader's saddle-point log pmf (prob_log_dpois): no cancellation even for
 *              lambda ~ 2^44. Larger lambda are split into independent parts of at most 2^44.
 *   gamma      Marsaglia & Tsang (2000) for shape >= 1 (the test uses log1p of v - 1);
 *              shape < 1 by the boost Gamma(shape + 1) U^(1/shape).
 *   negative binomial / sums of geometrics: the sum of n iid geometrics (failures before a
 *              success, ratio rho) is NB(n, 1 - rho), drawn as Poisson(Gamma(n, rho/(1-rho))).
 *   discrete Laplace sums: a discrete Laplace of scale t is G1 - G2 with G1, G2 iid geometric
 *              of ratio exp(-1/t), so a sum of n of them is NB - NB'.
 *   multinomial: sequential conditional binomials on suffix sums of the probabilities. */
#ifndef DPM_SIM_RNG_H
#define DPM_SIM_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "common/stream.h"

typedef struct {
    sim_stream_t s;
} sim_rng_t;

void sim_rng_init(sim_rng_t *r, uint64_t key);
uint64_t sim_rng_u64(sim_rng_t *r);
/* 64-bit words drawn so far (8 bytes each: the raw randomness a run consumed). */
uint64_t sim_rng_words(const sim_rng_t *r);

double sim_rng_unit(sim_rng_t *r); /* uniform in (0, 1) */
double sim_rng_normal(sim_rng_t *r);
/* Gamma with shape > 0 and scale > 0. */
double sim_rng_gamma(sim_rng_t *r, double shape, double scale);
/* Beta(a, b), a, b > 0, via two gammas. */
double sim_rng_beta(sim_rng_t *r, double a, double b);
/* Poisson(lambda), 0 <= lambda <= 2^62. */
uint64_t sim_rng_poisson(sim_rng_t *r, double lambda);
/* Binomial(n, p), n <= 2^53, p in [0, 1] (clamped). */
uint64_t sim_rng_binomial(sim_rng_t *r, uint64_t n, double p);
/* Sum of n iid geometrics Pr[G = k] = (1 - rho) rho^k, given odds = rho / (1 - rho) > 0. */
uint64_t sim_rng_geometric_sum(sim_rng_t *r, uint64_t n, double odds);
/* Sum of n iid discrete Laplace variables Pr[z] ∝ exp(-|z| / t), t > 0. */
int64_t sim_rng_dlap_sum(sim_rng_t *r, uint64_t n, double t);
/* One discrete Gaussian draw, P(k) proportional to exp(-k^2 / (2 sigma2)), sigma2 > 0: Canonne,
 * Kamath and Steinke's rejection from a discrete Laplace of scale floor(sigma) + 1 (their
 * Algorithm 3, in doubles: the simulator's exact mode, not a device's noise). */
int64_t sim_rng_dgauss(sim_rng_t *r, double sigma2);
/* Counts of n draws over k cells with weights p[0..k) (>= 0, not all 0; need not sum to 1)
 * into out[0..k). tmp holds k doubles of scratch. */
void sim_rng_multinomial(sim_rng_t *r, uint64_t n, const double *p, size_t k, double *tmp,
                         uint64_t *out);

#endif /* DPM_SIM_RNG_H */
