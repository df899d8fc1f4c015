/* SPDX-License-Identifier: Apache-2.0 */
/* Every pair at once in the estimate JSON (estimate/pairwise.h): the members that tuple metrics
 * (estimate_json.c, "disparities") and roc_hist groups (estimate_rocg.c, "gaps") share. Numbers
 * are the comparison's times `scale` (tuple: 1/2, the value scale [-1, 1] to the metric's [0, 1];
 * AUC: 1). Nothing here is NaN or infinite: such a value is null, with a reason.
 *
 * In each pair's object (after its pointwise "ci"):
 *   "ci_simultaneous": [lo, hi] | null   holds with all other pairs' at once, at "confidence"
 *   "ci_simultaneous_coverage", "ci_simultaneous_flags", "ci_simultaneous_reason": its claim
 *                                        (est_json.h), the family's (see below)
 *   "distinguishable": bool              the simultaneous interval excludes 0
 *   "largest_share": x | null            parametric-bootstrap share of draws in which this pair
 *                                        has the largest |difference| (null: none drawn)
 * After the array of pairs:
 *   "simultaneous": {"confidence", "method", "critical_value" (the half-width in sds),
 *                    "pointwise_critical_value" (z for one pair chosen in advance),
 *                    "pairs_with_interval", "distinguishable" (how many pairs)}
 *   "<key>": {"g", "h" (the pair with the largest |estimate|: a selection), "abs_diff" (its
 *            |estimate|: biased upward by the selection), "ci": [lo, hi] (for the largest
 *            |difference| over all pairs, whichever pair it is: coverage >= confidence) with
 *            "ci_coverage", "ci_flags", "ci_reason", "candidates": [[g, h], ...] (the pairs
 *            that may be the largest), "stability" (the named pair's bootstrap share: how
 *            often a rerun would name it if the truth were the estimates; optimistic where
 *            gaps are close, see estimate/pairwise.h), "max_shift_one_report" (one accepted
 *            report's largest move of abs_diff: the largest of the compared pairs' own, since
 *            |max x - max y| <= max |x - y|), "too_small", "reason"} | null,
 *   "<key>_reason": null | why it is null ("simultaneous" null comes with "simultaneous_reason").
 *
 * Claims. The simultaneous intervals are normal-law intervals for the whole family: "nominal"
 * (tests/stat/test_disparity_selection.c, test_roc_groups_coverage.c: 0.941 .. 0.958 at 0.95)
 * only where every compared pair's pointwise interval is unflagged. A pair flagged conservative
 * (a variance that may err high) makes the family "at_least"; one with no claim makes it none; a
 * pair whose pointwise interval needed widening (few randomization events, an interpolation
 * bound) is outside the normal law the critical value is drawn from: the family has no claim
 * (small_n, the rule of this header). The largest's interval is built from the simultaneous ones
 * and covers at least the level: "at_least" (conservative), or the family's "none". */
#ifndef DPM_COLLECTOR_ESTIMATE_PAIRWISE_H
#define DPM_COLLECTOR_ESTIMATE_PAIRWISE_H

#include "common/json_write.h"
#include "estimate/pairwise.h"

/* What the pairs' own intervals and bounds say about the whole family. */
typedef struct {
    double scale;     /* the numbers' factor (above) */
    unsigned flags;   /* the simultaneous intervals' claim (estimate/ci_flags.h) */
    int too_small;    /* a group the comparison uses is flagged too small */
    double max_shift; /* the largest compared pair's max_shift_one_report (NaN: unbounded) */
} coll_pairwise_family_t;

/* The family of pw's pairs with an interval (pw NULL: none), from each pair's pointwise interval
 * flags and max_shift_one_report (scale already applied), in dpm_pairwise_index order. */
coll_pairwise_family_t coll_pairwise_family(const dpm_pairwise_t *pw, const unsigned *flags,
                                            const double *shift, int too_small, double scale);

/* A pair's members (p NULL or not defined: nulls and false, with the claim "none"; the pair's
 * own "reason" says why). */
void coll_pairwise_pair_json(jw_t *sb, const dpm_pairwise_pair_t *p,
                             const coll_pairwise_family_t *f);

/* "simultaneous" and "<key>" as above. pw NULL: no comparison (why_none says why: written as the
 * reason). */
void coll_pairwise_json(jw_t *sb, const char *key, const dpm_pairwise_t *pw, const char *why_none,
                        const coll_pairwise_family_t *f);

#endif /* DPM_COLLECTOR_ESTIMATE_PAIRWISE_H */
