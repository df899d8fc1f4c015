/* SPDX-License-Identifier: Apache-2.0 */
/* Numeric types shared by every layer. Fixed point only: the noise path never sees a float. */
#ifndef DPM_TYPES_H
#define DPM_TYPES_H

#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Privacy parameter ε as unsigned Q16.16: eps = value / 65536. Valid range (0, DPM_EPS_MAX].
 * Build it from a decimal string or a rational, never from a float. */
typedef uint32_t dpm_eps_t;
#define DPM_EPS_FRAC_BITS 16
#define DPM_EPS_ONE ((dpm_eps_t)1 << DPM_EPS_FRAC_BITS)
#define DPM_EPS_MAX_Q16 ((dpm_eps_t)DPM_EPS_MAX << DPM_EPS_FRAC_BITS)

/* Parse a plain decimal ("1", "0.5", "2.25"): digits with at most one '.', no sign, exponent
 * or spaces. Digits beyond Q16.16 precision round down (a smaller ε spends less privacy).
 * Returns DPM_ERR_PARAM, leaving *out untouched, for NULL, malformed text, a value that rounds
 * to 0, or a value above DPM_EPS_MAX. */
dpm_status_t dpm_eps_from_decimal(const char *text, dpm_eps_t *out);

/* ε = num / den, rounded down to Q16.16. Same errors as dpm_eps_from_decimal (den == 0 too). */
dpm_status_t dpm_eps_from_ratio(uint32_t num, uint32_t den, dpm_eps_t *out);

/* Write ε as a decimal with 6 fraction digits, rounded up (what a report really spends),
 * e.g. "0.500000". buf needs 16 bytes. Returns DPM_ERR_BUFFER if cap is too small. */
dpm_status_t dpm_eps_format(dpm_eps_t eps, char *buf, uint32_t cap);

/* A model score in [0, 1] as unsigned Q1.31: score = value / 2^31, so 1.0 is representable. */
typedef uint32_t dpm_score_t;
#define DPM_SCORE_FRAC_BITS 31
#define DPM_SCORE_ONE ((dpm_score_t)1 << DPM_SCORE_FRAC_BITS)

/* Convenience for apps holding a float score. It lives at the API edge, inline in the app's
 * translation unit, so libdpm itself contains no floating point. Clamps to [0, 1]; NaN -> 0. */
static inline dpm_score_t dpm_score_from_double(double score)
{
    if (!(score > 0.0)) {
        return 0;
    }
    if (score >= 1.0) {
        return DPM_SCORE_ONE;
    }
    return (dpm_score_t)(score * (double)DPM_SCORE_ONE);
}

#ifdef __cplusplus
}
#endif

#endif /* DPM_TYPES_H */
