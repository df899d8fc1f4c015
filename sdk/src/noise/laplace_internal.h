/* SPDX-License-Identifier: Apache-2.0 */
/* The Laplace mechanism's sampler, internals for tests (internal to sdk/src). */
#ifndef DPM_NOISE_LAPLACE_INTERNAL_H
#define DPM_NOISE_LAPLACE_INTERNAL_H

#include <stdint.h>

#include "dpm/expert/noise.h"

/* As dpm_laplace_add, but always through the sequential definition of the sampler (no
 * windows, no tables beyond the mechanism's own): the same outputs and the same bits consumed,
 * more slowly. */
dpm_status_t dpm_laplace_add_reference(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value,
                                       int64_t *out);

/* The byte stage of step A when gamma = A / 16 (scale_num a power of two above 16), two bits
 * an outcome: bits 2A and 2A + 1 of word w are 1 if the W byte w alone places W so that K = 1
 * or 3 (accept), 0 if K = 2 or 4 (reject), 2 if it does not decide (a tie with a threshold, or
 * W < T_4); never 3. */
extern const uint32_t dpm_laplace_pow2_outcome[256];

#endif /* DPM_NOISE_LAPLACE_INTERNAL_H */
