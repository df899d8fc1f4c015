/* SPDX-License-Identifier: Apache-2.0 */
/* Pieces of the exact samplers (sampler.c) shared with the Laplace mechanism's sampler
 * (laplace.c). Internal to sdk/src/noise. */
#ifndef DPM_NOISE_SAMPLER_INTERNAL_H
#define DPM_NOISE_SAMPLER_INTERNAL_H

#include <stdint.h>

#include "dpm/expert/noise.h"

/* Bernoulli(exp(-1)) reads one byte b first (bexp_one in sampler.c, where the thresholds are
 * derived): dpm_noise_bexp1_class[b] is 1 if b alone decides a success, 0 if it decides a
 * failure, DPM_BEXP1_MORE if more bits are needed (b in {0, 1, 2, 10, 42}). */
#define DPM_BEXP1_MORE 2u
extern const uint8_t dpm_noise_bexp1_class[256];

/* Bernoulli(num / den) for 0 < num < den, by lazy comparison, one bit at a time. */
dpm_status_t dpm_noise_bern_lazy(dpm_rand_t *r, uint64_t num, uint64_t den, int *out);

/* CKS Algorithm 1 for Bernoulli(exp(-num / den)), 0 < num <= den, continued from trial k >= 1
 * (trials 1 .. k - 1 are known to have succeeded): *out = 1 iff the first failing trial has an
 * odd index. */
dpm_status_t dpm_noise_bexp_from(dpm_rand_t *r, uint64_t num, uint64_t den, uint64_t k, int *out);

/* V = v0 + the number of further Bernoulli(exp(-1)) successes before the first failure, each
 * trial's byte from the back of the stream (its rare extra bits from the front).
 * DPM_ERR_RANGE if V would reach 2^64 - 1. */
dpm_status_t dpm_noise_geometric_exp1_back(dpm_rand_t *r, uint64_t v0, uint64_t *v);

/* floor((u + t v) / s), computed exactly; *huge = 1 (and 0 returned) when it is >= 2^64. */
uint64_t dpm_noise_dlap_magnitude(uint64_t u, uint64_t v, uint64_t t, uint64_t s, int *huge);

/* *out = value - mag (negative) or value + mag, exactly: the sum is formed in 64-bit unsigned
 * arithmetic from |Z| and the sign, so any |Z| < 2^64 that lands back in int64 is returned, and
 * DPM_ERR_RANGE (*out untouched) depends on the sum alone (post-processing of the ε-DP output
 * value + Z); also DPM_ERR_RANGE when huge is set (|Z| >= 2^64). */
static inline dpm_status_t dpm_noise_add_magnitude(int64_t value, int negative, uint64_t mag,
                                                   int huge, int64_t *out)
{
    /* masks rather than branches on the sign: it is random, so a branch would mispredict */
    uint64_t neg = 0u - (uint64_t)(negative != 0);
    uint64_t uv = (uint64_t)value;
    /* room to INT64_MAX (or down to INT64_MIN): in [0, 2^64 - 1] for every int64 value */
    uint64_t room = (((uint64_t)INT64_MAX - uv) & ~neg) | ((uv - (uint64_t)INT64_MIN) & neg);
    if (huge || mag > room) {
        return DPM_ERR_RANGE;
    }
    uint64_t sum = uv + ((mag ^ neg) - neg); /* uv - mag or uv + mag, mod 2^64 */
    /* two's complement value of sum, without implementation-defined conversions */
    *out = sum <= (uint64_t)INT64_MAX ? (int64_t)sum : -(int64_t)(UINT64_MAX - sum) - 1;
    return DPM_OK;
}

#endif /* DPM_NOISE_SAMPLER_INTERNAL_H */
