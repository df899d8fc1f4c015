/* SPDX-License-Identifier: Apache-2.0 */
/* Every pair at once in the estimate JSON (estimate/pairwise.h): the members that tuple metrics
 * (estimate_json.c, "disparities") and roc_hist groups (estimate_rocg.c, "gaps") share. Numbers
 * are the comparison's times `scale` (tuple: 1/2, the value scale [-1, 1] to the metric's [0, 1];
 * AUC: 1). Nothing here is NaN or infinite: such a value is null, with a reason.
 *
 * In each pair's object (after its pointwise "ci"):
 *   "ci_simultaneous": [lo, hi] | null   holds with all other pairs' at once, at "confidence"
 *   "distinguishable": bool              the simultaneous interval excludes 0
 *   "largest_share": x | null            parametric-bootstrap share of draws in which this pair
 *                                        has the largest |difference| (null: none drawn)
 * After the array of pairs:
 *   "simultaneous": {"confidence", "method", "critical_value" (the half-width in sds),
 *                    "pointwise_critical_value" (z for one pair chosen in advance),
 *                    "pairs_with_interval", "distinguishable" (how many pairs)}
 *   "<key>": {"g", "h" (the pair with the largest |estimate|: a selection), "abs_diff" (its
 *            |estimate|: biased upward by the selection), "ci": [lo, hi] (for the largest
 *            |difference| over all pairs, whichever pair it is: coverage >= confidence),
 * "candidates":
 *            [[g, h], ...] (the pairs that may be the largest), "stability" (the named pair's
 *            bootstrap share: how often a rerun would name it if the truth were the estimates;
 *            optimistic where gaps are close, see estimate/pairwise.h), "too_small",
 *            "reason"} | null,
 *   "<key>_reason": null | why it is null ("simultaneous" null comes with "simultaneous_reason").
 */
#ifndef DPM_COLLECTOR_ESTIMATE_PAIRWISE_H
#define DPM_COLLECTOR_ESTIMATE_PAIRWISE_H

#include "common/json_write.h"
#include "estimate/pairwise.h"

/* A pair's members (p NULL or not defined: nulls and false; the pair's own "reason" says why). */
void coll_pairwise_pair_json(jw_t *sb, const dpm_pairwise_pair_t *p, double scale);

/* "simultaneous" and "<key>" as above. pw NULL: no comparison (why_none says why: written as the
 * reason); too_small: a group the comparison uses is flagged too small. */
void coll_pairwise_json(jw_t *sb, const char *key, const dpm_pairwise_t *pw, const char *why_none,
                        int too_small, double scale);

#endif /* DPM_COLLECTOR_ESTIMATE_PAIRWISE_H */
