/* SPDX-License-Identifier: Apache-2.0 */
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

#include "dpm/bits/noise.h"
#include "dpm/port.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bind a random source to a port RNG. The buffer starts empty. DPM_ERR_PARAM on NULL. */
dpm_status_t dpm_rand_init(dpm_rand_t *r, const dpm_rng_t *rng);

/* Bits handed to samplers since init (for tests and benchmarks). */
uint64_t dpm_rand_bits_used(const dpm_rand_t *r);

/* n uniform bits, 1 <= n <= 64, as the low bits of *out. */
dpm_status_t dpm_rand_bits(dpm_rand_t *r, uint32_t n, uint64_t *out);

/* ---- exact samplers (Canonne, Kamath, Steinke 2020) ------------------------------------ */

/* All samplers below: DPM_ERR_PARAM for a NULL pointer, an unbound dpm_rand_t or a parameter
 * out of range; the sticky DPM_ERR_RNG of r, even for a call that needs no random bits. On
 * any error *out is untouched. Their run time and randomness use depend on the outcome: they
 * are for public parameters and for noise, not for branching on a secret. */

/* Uniform integer in [0, n), n >= 1, by rejection on the smallest covering power of two (no
 * modulo bias; expected draws < 2). n == 1 draws nothing. */
dpm_status_t dpm_uniform(dpm_rand_t *r, uint64_t n, uint64_t *out);

/* Bernoulli(num / den), exact, for 0 <= num <= den, den >= 1 (any 64-bit values). *out is 0
 * or 1. Compares random bits with the binary expansion of num / den: 2 bits expected, none
 * for num == 0 or num == den. */
dpm_status_t dpm_bernoulli(dpm_rand_t *r, uint64_t num, uint64_t den, int *out);

/* Bernoulli(exp(-num / den)), exact, for den >= 1 and num / den <= DPM_BEXP_MAX_GAMMA (the
 * loop over the integer part draws one Bernoulli(exp(-1)) per unit, stopping at the first
 * failure). Only Bernoulli(a / b) draws with a <= b on the caller's own 64-bit integers (the
 * 1/K of CKS Algorithm 1 is a separate Bernoulli(1 / K), never den * K), so nothing can
 * overflow for any 64-bit num and den. */
#define DPM_BEXP_MAX_GAMMA 4096u
dpm_status_t dpm_bernoulli_exp(dpm_rand_t *r, uint64_t num, uint64_t den, int *out);

/* Discrete Laplace with scale t = num / den: Pr[Z = z] ∝ exp(-|z| / t), z ∈ Z, exact (CKS
 * Algorithm 2). num and den are first reduced by their gcd; then 1 <= num <= DPM_DLAP_MAX_NUM
 * (so t <= 2^56) and den >= 1, else DPM_ERR_PARAM. Expected cost is constant in t apart from
 * the log2(num) bits of the uniform draws: about 20 random bits at t = 1, 36 at t = 1000 (each
 * Bernoulli(exp(-1)) trial of the geometric takes one byte: fewer hard-to-predict branches).
 * Run time depends on |z|: see dpm_laplace_fixed_add for a bounded-time variant.
 * Overflow: CKS forms X = U + num * V (V geometric); while V < 256, X < num * 2^8 <= 2^64 in
 * 64-bit arithmetic, and beyond that (probability exp(-256)) X and floor(X / den) are computed
 * exactly in 128 bits, so no sample is ever truncated or redrawn. DPM_ERR_RANGE only if Z does
 * not fit int64: probability < 2 exp(-2^63 / 2^56) < 2^-183 at the largest scale. (V itself is
 * a 64-bit counter; reaching 2^64 would take 2^64 loop iterations, and returns DPM_ERR_RANGE.) */
#define DPM_DLAP_MAX_NUM ((uint64_t)1 << 56)
dpm_status_t dpm_dlap(dpm_rand_t *r, uint64_t num, uint64_t den, int64_t *out);

/* *out = value + Z, Z as in dpm_dlap with scale num / den, computed exactly: |Z| and its sign
 * are combined in unsigned arithmetic, so DPM_ERR_RANGE (*out untouched) means exactly that
 * value + Z leaves int64, a function of the output alone (post-processing keeps ε-DP).
 * num / den is used as given, not reduced (pass it reduced, as dpm_laplace_init does: the same
 * distribution costs more bits otherwise): 1 <= num <= DPM_DLAP_MAX_NUM, den >= 1. */
dpm_status_t dpm_dlap_add(dpm_rand_t *r, uint64_t num, uint64_t den, int64_t value, int64_t *out);

/* Discrete Gaussian with variance parameter sigma2 (an integer): Pr[Z = z] ∝ exp(-z^2 /
 * (2 sigma2)), z ∈ Z (CKS Algorithm 3: a discrete Laplace of scale t = floor(sqrt(sigma2)) + 1
 * accepted with probability exp(-(|Y| - sigma2/t)^2 / (2 sigma2)), that exponent a ratio of
 * integers split into its whole part and a fraction, as dpm_bernoulli_exp does; the ratio's
 * numerator is formed in 128 bits). 1 <= sigma2 <= DPM_DGAUSS_MAX_SIGMA2 (2^30, sigma up to
 * 32768: every product stays below 2^64), else DPM_ERR_PARAM. Its variance is below sigma2:
 * by 2.1e-7 relative at sigma2 = 1, 1.1e-15 at 2, less above. Random bits per sample: about 33
 * at sigma2 = 3, 48 at 10^4, 96 at 2^30 (tests/stat/test_dgauss_gof.c prints them).
 * Exact but for two cases that never occur: a Laplace draw with |Y| t >= 2^64 (probability
 * below exp(-2^33)) is rejected rather than tested, and one whose test's exponent reaches 2^64
 * is rejected at its first failing trial; each moves the distribution by less than its
 * probability. tests/vectors/noise.json holds its first outputs (reference.py).
 * Used for the two-aggregator mode's central noise under zCDP (host-sim/aggregator); a
 * mechanism with L2 sensitivity D and this noise is (D^2 / (2 sigma2))-zCDP (CKS Theorem 14). */
#define DPM_DGAUSS_MAX_SIGMA2 ((uint64_t)1 << 30)
dpm_status_t dpm_dgauss(dpm_rand_t *r, uint64_t sigma2, int64_t *out);

/* *out = value + Z, Z as in dpm_dgauss; DPM_ERR_RANGE (*out untouched) iff the exact sum leaves
 * int64. */
dpm_status_t dpm_dgauss_add(dpm_rand_t *r, uint64_t sigma2, int64_t value, int64_t *out);

/* ---- fixed-point Laplace mechanism ------------------------------------------------------ */

/* sensitivity in grid units, 1 <= sensitivity <= DPM_LAPLACE_MAX_SENSITIVITY (2^40, so
 * scale_num = sensitivity * 2^16 / gcd <= 2^56 = DPM_DLAP_MAX_NUM); eps in (0, DPM_EPS_MAX_Q16].
 * DPM_ERR_PARAM (and *m untouched) otherwise. */
#define DPM_LAPLACE_MAX_SENSITIVITY ((uint64_t)1 << 40)
dpm_status_t dpm_laplace_init(dpm_laplace_t *m, uint64_t sensitivity, dpm_eps_t eps);

/* *out = value + Z. DPM_ERR_RANGE (and *out untouched) if the exact sum leaves int64;
 * DPM_ERR_PARAM for NULL pointers, an unbound dpm_rand_t or a corrupted *m; the sticky
 * DPM_ERR_RNG if the random source failed. */
dpm_status_t dpm_laplace_add(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value, int64_t *out);

/* Variance of the noise in grid units squared as a rational 2p/(1-p)^2 with p = exp(-1/t)
 * is irrational; hosts compute it in floating point (host-sim/estimate). */

/* ---- bounded-time (fixed-draw) discrete Laplace ------------------------------------------ */

/* Z = G1 - G2 with G1, G2 independent geometrics of ratio p = exp(-1/t), t = sensitivity *
 * 2^16 / eps grid units, so Pr[Z = z] ∝ p^|z| exactly as dpm_laplace_add. Each geometric is
 * built from its binary digits: digit j of a geometric is an independent Bernoulli(q_j),
 * q_j = 1 / (1 + exp(2^j / t)). This variant draws exactly `nbits` digits per geometric, each
 * as one 64-bit uniform u compared with threshold[j] (digit = u < threshold[j]), and combines
 * them with shifts and ORs: every sample costs 2 * nbits * 64 random bits and the same
 * instructions, whatever the value and the noise.
 *
 * The price is a certified distance to the exact mechanism M. For each digit, init brackets
 * 2^64 q_j in [a_j, b_j] with integer-only lower/upper bounds of exp (sdk/src/noise/xexp.h),
 * takes threshold[j] = the midpoint, and err_j = ceil((b_j - a_j) / 2) >= |threshold[j] -
 * 2^64 q_j|. The dropped digits j >= nbits are 0 instead of Bernoulli(q_j); their total is
 * bounded by sum_{j >= n} q_j <= sum_i y^(2^i) <= y / (1 - y) <= 2y with y = exp(-2^n / t).
 * A product of independent Bernoullis is within the sum of the per-digit distances, and Z is a
 * function of the digits, so for every input x
 *     TV(M'(x), M(x)) <= delta_tv = 2 (sum_{j < nbits} |q'_j - q_j| + sum_{j >= nbits} q_j),
 * computed in units of 2^-64 and rounded up (delta_tv_num).
 * Why this gives (ε, (1 + e^ε) delta_tv)-DP: M is ε-DP (see dpm_laplace_t), so for neighbours
 * x, x' and every set S of outputs,
 *     Pr[M'(x) ∈ S] <= Pr[M(x) ∈ S] + δ_tv <= e^ε Pr[M(x') ∈ S] + δ_tv
 *                   <= e^ε (Pr[M'(x') ∈ S] + δ_tv) + δ_tv = e^ε Pr[M'(x') ∈ S] + (1 + e^ε) δ_tv.
 * delta_num is that δ in units of 2^-64, computed with an upper bound of e^ε and rounded up
 * (saturating at UINT64_MAX, i.e. δ ~ 1, for very large ε: the 64-bit threshold roundings
 * alone contribute about 2^-64 each, times e^ε). Mechanisms must record δ, not only ε.
 * Privacy unit: as dpm_laplace_t, two values at most `sensitivity` grid units apart.
 * Prefer this variant when an observer can time the device: the exact sampler's run time
 * grows with |noise|, and noise plus output reveals the input. It is slower (2 * nbits * 8
 * random bytes per sample, e.g. 96 bytes at t = 1, 256 bytes at t = 1000). */
#define DPM_LAPLACE_FIXED_MAX_BITS 48
typedef struct {
    uint64_t threshold[DPM_LAPLACE_FIXED_MAX_BITS]; /* digit j is 1 iff u < threshold[j] */
    uint32_t nbits;
    uint64_t delta_tv_num; /* total variation bound, as a fraction of 2^64 (rounded up) */
    uint64_t delta_num;    /* δ = (1 + e^ε) delta_tv, as a fraction of 2^64 (rounded up) */
    uint64_t sensitivity;
    dpm_eps_t eps;
} dpm_laplace_fixed_t;

/* Same parameters as dpm_laplace_init (1 <= sensitivity <= DPM_LAPLACE_MAX_SENSITIVITY, eps
 * in (0, DPM_EPS_MAX_Q16], else DPM_ERR_PARAM). nbits is the smallest n >= 1 that gives
 * delta_tv <= 2^-48 (about log2(t) + 6); DPM_ERR_RANGE if DPM_LAPLACE_FIXED_MAX_BITS digits are
 * not enough (t above about 2^42). *m is untouched on error. */
dpm_status_t dpm_laplace_fixed_init(dpm_laplace_fixed_t *m, uint64_t sensitivity, dpm_eps_t eps);

/* *out = value + Z, |Z| < 2^nbits. Always draws 2 * nbits * 64 bits. DPM_ERR_RANGE (*out
 * untouched) iff value + Z leaves int64, decided from the exact sum after drawing: a function
 * of the output alone, so it keeps the (ε, δ) bound. DPM_ERR_PARAM for NULL pointers or a
 * corrupted *m; DPM_ERR_RNG if the random source failed. */
dpm_status_t dpm_laplace_fixed_add(const dpm_laplace_fixed_t *m, dpm_rand_t *r, int64_t value,
                                   int64_t *out);

/* ---- randomized response ---------------------------------------------------------------- */

/* 2 <= k <= DPM_MAX_GRR_K and eps in (0, DPM_EPS_MAX_Q16], else DPM_ERR_PARAM.
 * DPM_ERR_RANGE if ε is so large that `other` would fall below 2 (e^ε + k - 1 >= 2^32, i.e.
 * ε >= about 22.18: no 32-bit GRR implements it faithfully), or so small for this k that
 * rounding would leave keep <= other (only ε of a few 2^-16 with k in the hundreds).
 * *g is untouched on error. */
dpm_status_t dpm_grr_init(dpm_grr_t *g, uint32_t k, dpm_eps_t eps);

/* Report y for the true value x < k (DPM_ERR_PARAM otherwise, or for NULL). Draws exactly 32
 * bits, whatever x, with no branch on x or on the kept/flipped outcome: masks select the
 * report, the division by `other` is a multiply by recip (exact for 32-bit operands, Lemire),
 * and mod k is one masked subtraction. DPM_ERR_RNG if the random source failed. */
dpm_status_t dpm_grr_perturb(const dpm_grr_t *g, dpm_rand_t *r, uint32_t x, uint32_t *y);

/* Binary randomized response is GRR with k = 2: Pr[report = bit] = keep / 2^32 = floor(2^32
 * e^ε / (1 + e^ε)) / 2^32 (to within the certified rounding), the spec's threshold T.
 * dpm_rr_perturb takes bit in {0, 1} and g from dpm_rr_init (k == 2), else DPM_ERR_PARAM. */
dpm_status_t dpm_rr_init(dpm_grr_t *g, dpm_eps_t eps);
dpm_status_t dpm_rr_perturb(const dpm_grr_t *g, dpm_rand_t *r, int bit, int *out);

/* The ε (Q16.16) that a GRR with these integer thresholds implements, |ln(keep / other)|
 * rounded up: the smallest e with exp_lower(e / 2^16) >= max(keep, other) / min(keep, other)
 * for a certified lower bound exp_lower <= exp, so it is never understated (at most 1 ulp
 * high). 0 if keep == other (the report does not depend on the input).
 * DPM_ERR_PARAM if eps is NULL, other == 0, k < 2 or keep + (k - 1) * other != 2^32;
 * DPM_ERR_RANGE if keep == 0 (no finite ε). */
dpm_status_t dpm_grr_epsilon(uint32_t k, uint32_t keep, uint32_t other, dpm_eps_t *eps);

#ifdef __cplusplus
}
#endif

#endif /* DPM_NOISE_H */
