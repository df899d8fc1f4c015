/* SPDX-License-Identifier: Apache-2.0 */
/* Pieces of the tuple mechanisms that host-sim reuses (its paper-reproduction devices). */
#ifndef DPM_MECH_TUPLE_INTERNAL_H
#define DPM_MECH_TUPLE_INTERNAL_H

#include "dpm/expert/tuple.h"

/* Unbiased randomized rounding of v = 2 num / den - 1 to the Q(F) grid: floor(v 2^F) plus
 * Bernoulli(fractional part), so E[*out] = v 2^F exactly. Requires den <= 2^32, num <= den. */
dpm_status_t dpm_tuple_round_to_grid(dpm_rand_t *r, const dpm_ratio_t *x, uint32_t frac_bits,
                                     int64_t *out);

#endif /* DPM_MECH_TUPLE_INTERNAL_H */
