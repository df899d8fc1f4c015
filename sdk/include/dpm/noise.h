/* Exact, integer-only noise: the only source of randomness in every private number the SDK
 * emits.
 *
 * Every sampler draws from a dpm_rand_t, a caller-owned buffer in front of the port RNG (the
 * port RNG is called in bulk, DPM_RAND_BUF_BYTES at a time, and bits are consumed one by one,
 * so no randomness is wasted). Samplers return DPM_OK or an error; on error the outputs are
 * untouched. A failure of the port RNG is sticky: every later draw from that dpm_rand_t
 * returns DPM_ERR_RNG until dpm_rand_init() is called again.
 *
 * Privacy units are stated by the mechanisms that use these samplers (sdk/mech); here each
 * randomizer states the ε it guarantees for the two inputs it distinguishes. */
#ifndef DPM_NOISE_H
#define DPM_NOISE_H

#include <stdint.h>

#include "dpm/port.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- random bits ------------------------------------------------------------------------ */

typedef struct {
    const dpm_rng_t *rng;
    uint8_t buf[DPM_RAND_BUF_BYTES];
    uint32_t pos;         /* next unread byte of buf */
    uint64_t bits;        /* reservoir of unused bits, low bits first */
    uint32_t nbits;       /* how many bits the reservoir holds */
    uint64_t bits_used;   /* bits handed to samplers since init (for tests and benchmarks) */
    uint64_t rng_calls;   /* port rng fill() calls since init */
    dpm_status_t error;   /* sticky port RNG failure */
} dpm_rand_t;

/* Bind a random source to a port RNG. The buffer starts empty. DPM_ERR_PARAM on NULL. */
dpm_status_t dpm_rand_init(dpm_rand_t *r, const dpm_rng_t *rng);

/* n uniform bits, 1 <= n <= 64, as the low bits of *out. */
dpm_status_t dpm_rand_bits(dpm_rand_t *r, uint32_t n, uint64_t *out);

/* ---- exact samplers (Canonne, Kamath, Steinke 2020) ------------------------------------ */

/* Uniform integer in [0, n), n >= 1, by rejection on the smallest covering power of two (no
 * modulo bias; expected draws < 2). */
dpm_status_t dpm_uniform(dpm_rand_t *r, uint64_t n, uint64_t *out);

/* Bernoulli(num / den), exact, for 0 <= num <= den, den >= 1. *out is 0 or 1. */
dpm_status_t dpm_bernoulli(dpm_rand_t *r, uint64_t num, uint64_t den, int *out);

/* Bernoulli(exp(-num / den)), exact, for den >= 1 and num / den <= DPM_BEXP_MAX_GAMMA (the
 * loop over the integer part draws one Bernoulli(exp(-1)) per unit). Only rational
 * comparisons on 64-bit integers: every intermediate stays below 2^64 for den < 2^63. */
#define DPM_BEXP_MAX_GAMMA 4096u
dpm_status_t dpm_bernoulli_exp(dpm_rand_t *r, uint64_t num, uint64_t den, int *out);

/* Discrete Laplace with scale t = num / den: Pr[Z = z] ∝ exp(-|z| / t), z ∈ Z, exact.
 * Requires 1 <= num < 2^62 and 1 <= den < 2^62 (DPM_ERR_PARAM otherwise). Expected cost is
 * constant in t. Run time depends on |z|: see dpm_dlap_fixed for a bounded-time variant. */
#define DPM_DLAP_MAX_PART ((uint64_t)1 << 62)
dpm_status_t dpm_dlap(dpm_rand_t *r, uint64_t num, uint64_t den, int64_t *out);

/* ---- fixed-point Laplace mechanism ------------------------------------------------------ */

/* Adds discrete Laplace noise to a value on the fixed-point grid Q(F) (one grid unit =
 * 2^-F). For a statistic whose L1 sensitivity is `sensitivity` grid units, the noise has
 * Pr[z] ∝ exp(-|z| ε / sensitivity), so for neighbouring values v, v' (|v - v'| <=
 * sensitivity) and every output y: Pr[v + Z = y] / Pr[v' + Z = y] = exp((|y - v'| - |y - v|)
 * ε / sensitivity) <= exp(ε). This is exactly ε-DP: no rounding enters the pmf, because ε is
 * the rational eps / 2^16 and the scale t = sensitivity * 2^16 / eps is a rational too. */
typedef struct {
    uint64_t scale_num; /* t = scale_num / scale_den grid units, reduced by their gcd */
    uint64_t scale_den;
    uint64_t sensitivity;
    dpm_eps_t eps;
} dpm_laplace_t;

/* sensitivity in grid units, 1 <= sensitivity <= 2^40; eps in (0, DPM_EPS_MAX]. */
dpm_status_t dpm_laplace_init(dpm_laplace_t *m, uint64_t sensitivity, dpm_eps_t eps);

/* *out = value + Z. DPM_ERR_RANGE (and *out untouched) if the sum leaves int64. */
dpm_status_t dpm_laplace_add(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value, int64_t *out);

/* Variance of the noise in grid units squared as a rational 2p/(1-p)^2 with p = exp(-1/t)
 * is irrational; hosts compute it in floating point (host-sim/estimate). */

/* ---- bounded-time (fixed-draw) discrete Laplace ------------------------------------------ */

/* Z = G1 - G2 with G1, G2 geometric, each built from its binary digits: bit j of a geometric
 * with ratio p = exp(-1/t) is an independent Bernoulli(1 / (1 + exp(2^j / t))). This variant
 * draws exactly `nbits` bits of 64-bit thresholds per geometric, the same for every sample,
 * and selects with masks, not branches, so its run time and randomness are independent of the
 * value and of the noise. The price: digits above nbits are dropped and thresholds are 64-bit
 * roundings, so the output is within total variation distance delta_tv of the exact discrete
 * Laplace, and the mechanism is (ε, δ)-DP with δ = (1 + e^ε) delta_tv. The bound is computed
 * at init and returned as delta_num / 2^64.
 * Prefer it when an observer can time the device (the exact sampler's run time grows with
 * |noise|, and noise plus output reveals the input); it costs about 2 * nbits * 8 random bytes
 * per sample against about 10-20 for the exact sampler. */
#define DPM_DLAP_FIXED_MAX_BITS 48
typedef struct {
    uint64_t threshold[DPM_DLAP_FIXED_MAX_BITS]; /* bit j is 1 iff u < threshold[j] */
    uint32_t nbits;
    uint64_t delta_tv_num; /* total variation bound, as a fraction of 2^64 (rounded up) */
    uint64_t delta_num;    /* δ = (1 + e^ε) delta_tv, as a fraction of 2^64 (rounded up) */
    uint64_t sensitivity;
    dpm_eps_t eps;
} dpm_laplace_fixed_t;

/* Same parameters as dpm_laplace_init. nbits is chosen as the smallest that gives
 * delta_tv <= 2^-48, or DPM_ERR_RANGE if DPM_DLAP_FIXED_MAX_BITS are not enough. */
dpm_status_t dpm_laplace_fixed_init(dpm_laplace_fixed_t *m, uint64_t sensitivity, dpm_eps_t eps);
dpm_status_t dpm_laplace_fixed_add(const dpm_laplace_fixed_t *m, dpm_rand_t *r, int64_t value,
                                   int64_t *out);

/* ---- randomized response ---------------------------------------------------------------- */

/* k-ary generalized randomized response (GRR) with integer thresholds. One 32-bit uniform U
 * decides everything: U < keep reports the true value; otherwise the report is
 * (x + 1 + (U - keep) / other) mod k, i.e. each of the k - 1 other values has probability
 * exactly other / 2^32, with keep + (k - 1) * other = 2^32. `other` is rounded UP from
 * 2^32 / (e^ε + k - 1) (computed with a certified lower bound of e^ε), so the implemented ε,
 * ln(keep / other), never exceeds the requested one. Thresholds are computed by integer code
 * and are bit-identical on every platform.
 * Privacy unit: the one value x; any two inputs x, x' give output ratios <= keep / other. */
typedef struct {
    uint32_t k;
    uint32_t keep;    /* Pr[y = x] = keep / 2^32 */
    uint32_t other;   /* Pr[y = v] = other / 2^32 for each v != x */
    uint64_t recip;   /* ceil(2^64 / other): exact division of 32-bit numbers by `other` */
    dpm_eps_t eps_implemented; /* ln(keep / other) in Q16.16, rounded up */
} dpm_grr_t;

/* 2 <= k <= DPM_MAX_GRR_K, eps in (0, DPM_EPS_MAX]. DPM_ERR_RANGE if ε is so large that
 * `other` would fall below 2 (no 32-bit GRR implements it faithfully). */
dpm_status_t dpm_grr_init(dpm_grr_t *g, uint32_t k, dpm_eps_t eps);

/* Report y for the true value x < k. Draws exactly 32 bits, whatever x, with no branch on x
 * or on the kept/flipped outcome. */
dpm_status_t dpm_grr_perturb(const dpm_grr_t *g, dpm_rand_t *r, uint32_t x, uint32_t *y);

/* Binary randomized response is GRR with k = 2. */
dpm_status_t dpm_rr_init(dpm_grr_t *g, dpm_eps_t eps);
dpm_status_t dpm_rr_perturb(const dpm_grr_t *g, dpm_rand_t *r, int bit, int *out);

/* The ε (Q16.16, rounded up) that a GRR with these integer thresholds implements:
 * the smallest e with exp(e / 2^16) >= keep / other. DPM_ERR_PARAM if other == 0, k < 2 or
 * keep + (k - 1) * other != 2^32. */
dpm_status_t dpm_grr_epsilon(uint32_t k, uint32_t keep, uint32_t other, dpm_eps_t *eps);

#ifdef __cplusplus
}
#endif

#endif /* DPM_NOISE_H */
