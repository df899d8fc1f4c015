/* SPDX-License-Identifier: Apache-2.0 */
/* GRR entry points for the mechanism layer (internal to sdk/src). */
#ifndef DPM_NOISE_GRR_INTERNAL_H
#define DPM_NOISE_GRR_INTERNAL_H

#include <stdint.h>

#include "dpm/expert/noise.h"
#include "noise/xexp.h"

/* A GRR over k values whose ratio keep / other is at most *ratio_lower, a certified LOWER
 * bound of the target e^ε' (build it with the `down` operations of xexp.h, e.g. M_R's
 * e^ε1 = (1 + e^ε) / 2 as half(add_down(xexp_q16_down(ε), 1)), or M_L's ε1 = ε / 2 as
 * xexp_down(ε >> 17, (ε mod 2^17) << 47)). Then other = ceil(2^32 / (L + k - 1)) computed
 * with a lower bound of the denominator, so keep / other <= L <= e^ε' exactly.
 * eps_implemented is ln(keep / other) rounded up to Q16.16 (it may exceed ε' by < 2^-16
 * when ε' itself is not a Q16.16 value). Errors as dpm_grr_init: DPM_ERR_PARAM for NULL or
 * k outside [2, DPM_MAX_GRR_K]; DPM_ERR_RANGE when other < 2 or keep <= other (L too close
 * to 1 for 32-bit thresholds). *g is untouched on error. */
dpm_status_t dpm_grr_init_ratio(dpm_grr_t *g, uint32_t k, const dpm_xf_t *ratio_lower);

#endif /* DPM_NOISE_GRR_INTERNAL_H */
