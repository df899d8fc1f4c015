/* SPDX-License-Identifier: Apache-2.0 */
/* The pieces every mechanism's estimate JSON is written with (host_mech.h: estimate_json):
 * numbers (null when not finite: JSON has no NaN), intervals, the too-small rule and the
 * interval claims.
 *
 * Every interval says what it claims (host-sim/estimate/ci_flags.h): beside an interval "K",
 * `, "K_coverage": "nominal" | "at_least" | "none", "K_flags": [names], "K_reason": null |
 * "..."`. "nominal" is the tested 93-97 % at 95 %, "at_least" a conservative interval (few
 * randomization events, an interpolation bound that dominates, Chebyshev, a variance that may
 * err high), "none" no claim (a noisy class total, small n, no bound). */
#ifndef DPM_MECH_EST_JSON_H
#define DPM_MECH_EST_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/json_write.h"

#define COLL_JSON_DIGITS 9 /* significant digits of every number */

/* The confidence of an estimate's intervals when the query names none. */
#define COLL_DEFAULT_CONFIDENCE 0.95

/* The too-small rule: an estimate from fewer reports, or whose group size (positives,
 * negatives) has a larger relative standard error, is flagged too_small. */
#define COLL_EST_MIN_REPORTS 30
#define COLL_EST_MAX_SIZE_CV 0.2

/* `, "K_coverage": ..., "K_flags": [...], "K_reason": ...` for an interval with these flags. */
void coll_ci_json(jw_t *sb, const char *key, unsigned flags);

/* A number (null when not finite); `, "key": number`; `[lo, hi]`; `, "key": [v0, ...]`. */
void coll_json_num(jw_t *sb, double x);
void coll_json_member(jw_t *sb, const char *key, double x);
void coll_json_interval(jw_t *sb, double lo, double hi);
void coll_json_array(jw_t *sb, const char *key, const double *v, uint32_t n);

/* `, "reason": why`, or, when a number of this object (written since offset start) came out
 * null without a reason of its own, a generic one; null when neither. */
void coll_json_reason(jw_t *sb, const char *why, size_t start);

/* `, "metrics": []`: the estimate of a mechanism without tuple metrics. */
void host_no_metrics_json(jw_t *sb);

/* x clipped to [lo, hi]. */
double coll_clip(double x, double lo, double hi);

#endif /* DPM_MECH_EST_JSON_H */
