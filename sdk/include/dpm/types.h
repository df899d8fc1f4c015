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
 * Build it from a decimal string or a rational, never from a float. This integer is what the
 * SDK computes with and reports (implemented ε, what a report spent); the ε an app or a
 * campaign SETS is a dpm_eps_param_t (below), so that a plain number cannot pass for one. */
typedef uint32_t dpm_eps_t;
#define DPM_EPS_FRAC_BITS 16
#define DPM_EPS_ONE ((dpm_eps_t)1 << DPM_EPS_FRAC_BITS)
#define DPM_EPS_MAX_Q16 ((dpm_eps_t)DPM_EPS_MAX << DPM_EPS_FRAC_BITS)

/* An ε that a campaign or the app's policy sets (dpm_campaign_t.eps / .budget / .group_eps,
 * dpm_policy_limit_t, dpm_policy_cap_t). A struct, so that `.eps = 1` meant as 1.0 (which as
 * Q16.16 is 1/65536) or `.eps = 0.5` (which C truncates to 0) cannot slip through:
 *   - assigning or passing a plain integer or float is a compile error
 *     (`c.eps = 1;`: "incompatible types");
 *   - in a brace initializer C lets `{.eps = 1}` fill the struct's one member, so there it is a
 *     -Wmissing-braces warning (in -Wall, GCC and Clang; an error with -Werror), and a float
 *     is also -Wfloat-conversion (-Wconversion) or Clang's default -Wliteral-conversion;
 *   - and at run time dpm_device_init and campaign acceptance refuse any ε below
 *     DPM_EPS_FLOOR_Q16 (2^-8), which catches every integer below 256 whatever the flags.
 * Write ε as DPM_EPS(1), DPM_EPS(0.5), DPM_EPS(2.25) (a decimal constant), or DPM_EPS_Q16(q)
 * from a Q16.16 integer (dpm_eps_from_decimal's output); read it as `.q16`. Same size,
 * alignment and representation as dpm_eps_t: the ABI and the wire (eps_q16) are unchanged. */
typedef struct {
    dpm_eps_t q16;
} dpm_eps_param_t;

/* floor(x * 2^16) of a decimal constant x, clamped to [0, 2^32 - 1] (x <= 0 or NaN: 0), so it
 * rounds toward less privacy loss like dpm_eps_from_decimal, and equals it for every literal
 * with at most 6 fraction digits below 65536 (why, and the check on 2 million decimals:
 * tests/unit/test_core.c). An arithmetic constant expression: it folds at compile time and
 * puts no floating point in the binary for a constant x. x is evaluated more than once. */
#define DPM_EPS_Q16_OF_(x)                                                                         \
    ((x) > 0 ? ((x) < 65536.0 ? (dpm_eps_t)((x)*65536.0) : (dpm_eps_t)0xFFFFFFFFu) : (dpm_eps_t)0)
#ifdef __cplusplus
#define DPM_EPS(x) (dpm_eps_param_t{DPM_EPS_Q16_OF_(x)})
#define DPM_EPS_Q16(q) (dpm_eps_param_t{(dpm_eps_t)(q)})
#else
#define DPM_EPS(x) ((dpm_eps_param_t){DPM_EPS_Q16_OF_(x)})
#define DPM_EPS_Q16(q) ((dpm_eps_param_t){(dpm_eps_t)(q)})
#endif

/* The smallest ε a policy or a campaign may set: 2^-8 (about 0.0039) in Q16.16. Below it a
 * report is noise for any population a device will meet, so such a value is taken for a
 * mistake (an integer meant as whole ε) and refused with its reason, never spent. */
#define DPM_EPS_FLOOR_Q16 ((dpm_eps_t)256u)

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
