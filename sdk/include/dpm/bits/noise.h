/* SPDX-License-Identifier: Apache-2.0 */
/* The layout of the random source and the samplers' parameters (dpm_device_t holds a
 * dpm_rand_t; a mechanism's parameters hold Laplace and GRR samplers). Not an API: the fields are
 * the SDK's; an app allocates these structs (inside dpm_device_t, dpm_mech_t, its report inputs)
 * and never reads them. The functions that use them are in dpm/expert/noise.h. */
#ifndef DPM_BITS_NOISE_H
#define DPM_BITS_NOISE_H

#include <stdint.h>

#include "dpm/port.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- random bits ------------------------------------------------------------------------ */

/* The stream: buf read as one little-endian bit string, the low bit of each byte first; a draw
 * of n bits is the next n of them, the first as bit 0 (the same stream as reading buf in 64-bit
 * little-endian words, low bit first). Bits [cur, end) are unread; the Laplace mechanism also
 * takes whole bytes from the back (just below end). When a draw needs more than is unread,
 * the unread bits move into the DPM_RAND_CARRY_BYTES before the port's bytes and the port
 * refills those, so the stream runs on across fills; samplers read it through
 * sdk/src/noise/rand_internal.h. */
#define DPM_RAND_CARRY_BYTES 24
typedef struct {
    const dpm_rng_t *rng;
    /* the carry, DPM_RAND_BUF_BYTES from the port, then 8 bytes that unaligned 64-bit reads
     * may touch but whose bits are never used */
    uint8_t buf[DPM_RAND_CARRY_BYTES + DPM_RAND_BUF_BYTES + 8];
    uint32_t cur; /* bit index in buf of the next unread bit */
    uint32_t end; /* one past the last unread bit (== cur: nothing left) */
    /* bits handed out since init = bits_base + cur - end (mod 2^64): a refill moves cur and
     * end and bits_base with them, so a draw only moves a cursor (dpm_rand_bits_used) */
    uint64_t bits_base;
    uint32_t rng_calls; /* port rng fill() calls since init (mod 2^32: a statistic) */
    dpm_status_t error; /* sticky port RNG failure */
} dpm_rand_t;

/* Adds discrete Laplace noise to a value on the fixed-point grid Q(F) (one grid unit =
 * 2^-F). For a statistic whose L1 sensitivity is `sensitivity` grid units, the noise has
 * Pr[z] ∝ exp(-|z| ε / sensitivity), so for neighbouring values v, v' (|v - v'| <=
 * sensitivity) and every output y: Pr[v + Z = y] / Pr[v' + Z = y] = exp((|y - v'| - |y - v|)
 * ε / sensitivity) <= exp(ε). This is exactly ε-DP: no rounding enters the pmf, because ε is
 * the rational eps / 2^16 and the scale t = sensitivity * 2^16 / eps is a rational too, which
 * the sampler uses as the exact pair (num, den). The one other outcome, DPM_ERR_RANGE when
 * value + Z leaves int64, is decided from the exact sum (see dpm_dlap_add), so it is a
 * post-processing of v + Z and keeps the bound.
 *
 * The sampler is the exact CKS construction of dpm_dlap, reorganised around tables that
 * dpm_laplace_init computes once from exact rationals (256-bit integers): the uniform of
 * Algorithm 2 is split into low bits L, accepted by one byte ~97% of the time, and 4 high bits
 * A, whose Bernoulli(exp(-A sigma)) test runs all the trials of Algorithm 1 on one shared
 * uniform and is decided by its first byte against the tabled thresholds ~98.6% of the time;
 * the rest goes on exactly, bit by bit. The definition, the proof of exactness and the fast
 * path are in sdk/src/noise/laplace.c. Same distribution as dpm_dlap with (scale_num,
 * scale_den), not the same random bits (about 54 bits a draw at t = 2^17, the V bytes from the
 * back of r's buffer); about 3x faster (sdk/docs/noise.md: its timing, CTR_DRBG included,
 * and how it was measured). Its run time, like dpm_dlap's, depends on the noise: see
 * dpm_laplace_fixed_add for a bounded-time variant. */
#define DPM_LAPLACE_A_BITS 4
#define DPM_LAPLACE_A_COUNT (1u << DPM_LAPLACE_A_BITS)
typedef struct {
    uint64_t scale_num; /* t = scale_num / scale_den grid units, reduced by their gcd */
    uint64_t scale_den;
    uint64_t sensitivity;
    dpm_eps_t eps;
    /* the sampler's tables (sdk/src/noise/laplace.c): U = L + 2^low_bits A, A < a_count */
    uint8_t low_bits;
    uint8_t a_bits;
    uint8_t a_count;                     /* ceil(scale_num / 2^low_bits) <= 2^a_bits */
    uint8_t fixed16;                     /* scale_num = 2^(low_bits + 4): constant tables */
    uint8_t lu_bits;                     /* bits of L and of its test byte u (0 if no L) */
    uint64_t low_mask;                   /* 2^low_bits - 1 */
    uint64_t den_recip;                  /* floor((2^64 - 1) / scale_den) */
    uint64_t lanes[DPM_LAPLACE_A_COUNT]; /* per A: floor(256 T_k), k = 1..4, and flags */
    uint64_t thr16[DPM_LAPLACE_A_COUNT]; /* per A: floor(2^16 T_k), k = 1..4 */
} dpm_laplace_t;

/* k-ary generalized randomized response (GRR) with integer thresholds. One 32-bit uniform U
 * decides everything: U < keep reports the true value; otherwise the report is
 * (x + 1 + (U - keep) / other) mod k, i.e. each of the k - 1 other values has probability
 * exactly other / 2^32, with keep + (k - 1) * other = 2^32.
 * Rounding: other = ceil(2^32 / (L + k - 1)) where L <= e^ε is a certified lower bound of e^ε
 * (integer-only, bit-identical on every platform) and the denominator is itself rounded down.
 * So other * (e^ε + k - 1) >= 2^32, i.e. keep = 2^32 - (k - 1) other <= e^ε other: the
 * implemented ratio keep / other never exceeds e^ε (for k = 2, keep = floor(2^32 e^ε /
 * (1 + e^ε)) up to that certified rounding). eps_implemented, ln(keep / other) rounded up to
 * Q16.16 with the same lower bound of exp, is therefore <= the requested ε, and never below
 * the true ln(keep / other). It falls short of ε by about (1 + (k - 1) / keep) / other: under
 * 2^-16 for moderate ε, more when other gets small (large ε).
 * Privacy unit: the one value x; any two inputs x, x' give output ratios <= keep / other
 * (ε-LDP with ε = eps_implemented). */
typedef struct {
    uint32_t k;
    uint32_t keep;             /* Pr[y = x] = keep / 2^32 */
    uint32_t other;            /* Pr[y = v] = other / 2^32 for each v != x */
    uint64_t recip;            /* ceil(2^64 / other): exact division of 32-bit numbers by `other` */
    dpm_eps_t eps_implemented; /* ln(keep / other) in Q16.16, rounded up, <= requested ε */
} dpm_grr_t;

#ifdef __cplusplus
}
#endif

#endif /* DPM_BITS_NOISE_H */
