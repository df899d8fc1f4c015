/* SPDX-License-Identifier: Apache-2.0 */
/* A DAP task's released sums (collector/dap: `dpm-collector dap-collect`): each entry is the
 * exact sum over the batch's reports plus the two aggregators' central noise, one discrete
 * Laplace draw each, Pr[Z = z] ∝ p^|z| with p = exp(-1/t), t = sensitivity x 2^16 / eps_q16 (the
 * SDK's dpm_laplace_init, as aggregator/share.c draws it). The noise of an entry, S = Z1 + Z2,
 * has the exact law
 *
 *   Pr[S = k] = c^2 p^|k| (|k| + 1 + 2 p^2 / (1 - p^2)),   c = (1 - p) / (1 + p),
 *
 * (sum over j of p^(|j| + |k - j|): k + 1 terms of p^|k| between 0 and k, and two geometric
 * tails p^|k| p^2 / (1 - p^2)), variance 4 p / (1 - p)^2. The interval is exact for the noise:
 * the smallest K with Pr[|S| <= K] >= confidence, so [released - K, released + K] holds the
 * exact sum with at least that probability, whatever the batch. It covers the batch's own sum
 * (every report counted), not a population's: a DAP batch has no sampling term.
 *
 * A task with discrete Gaussian noise (dpm_dgauss, variance parameter s = sigma2 each): with
 * j^2 + (k - j)^2 = 2 (j - k/2)^2 + k^2 / 2,
 *
 *   Pr[S = k] = exp(-k^2 / (4 s)) theta_(k mod 2) / Z^2,   Z = sum_j exp(-j^2 / (2 s)),
 *   theta_0 = sum_m exp(-m^2 / s),   theta_1 = sum_m exp(-(m + 1/2)^2 / s),
 *
 * exact but for the sums' truncation at 12 sqrt(s) + 2 terms a side (beyond: below exp(-72)
 * relative); the variance 2 sum_j j^2 exp(-j^2 / (2 s)) / Z, a little below 2 s; the
 * interval the same smallest K, from the pmf summed outward. */
#ifndef DPM_HOST_ESTIMATE_CENTRAL_SUM_H
#define DPM_HOST_ESTIMATE_CENTRAL_SUM_H

#include <stdint.h>

#include "dpm/types.h"

typedef struct {
    double p;     /* Laplace: exp(-1/t) */
    double q;     /* 1 - p, computed without cancellation */
    double scale; /* Laplace: t, in the sums' units; Gaussian: sqrt(sigma2) */
    double var;   /* of S: 4 p / q^2; Gaussian: as above */
    int gauss;    /* 1: discrete Gaussian (the fields below) */
    double sigma2, theta[2], z;
} dpm_csum_noise_t;

/* The noise of a task with this sensitivity (>= 1) and central ε (Q16.16, > 0). DPM_OK, or
 * DPM_ERR_PARAM. */
dpm_status_t dpm_csum_noise_init(dpm_csum_noise_t *n, uint64_t sensitivity, dpm_eps_t eps_q16);

/* The noise of a task with discrete Gaussian noise of sigma2 (1 .. 2^30) at each aggregator.
 * DPM_OK, or DPM_ERR_PARAM. */
dpm_status_t dpm_csum_noise_init_gauss(dpm_csum_noise_t *n, uint64_t sigma2);

/* Pr[S = k]. */
double dpm_csum_pmf(const dpm_csum_noise_t *n, int64_t k);

/* Pr[S > k] for k >= 0 (Laplace: closed form; Gaussian: summed). */
double dpm_csum_tail(const dpm_csum_noise_t *n, uint64_t k);

/* The smallest K with Pr[|S| <= K] >= confidence (in (0, 1); Gaussian: 1 - confidence >=
 * 1e-60, the law being summed out to 17 sd). DPM_OK, or DPM_ERR_PARAM. */
dpm_status_t dpm_csum_halfwidth(const dpm_csum_noise_t *n, double confidence, uint64_t *k);

#endif /* DPM_HOST_ESTIMATE_CENTRAL_SUM_H */
