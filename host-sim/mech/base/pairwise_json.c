/* SPDX-License-Identifier: Apache-2.0 */
/* Every pair at once in the estimate JSON (see pairwise_json.h). */
#include "mech/base/pairwise_json.h"

#include <math.h>
#include <stdio.h>

#include "mech/base/bounds.h"
#include "mech/base/est_json.h"
#include "estimate/ci_flags.h"

#define DIGITS 9

coll_pairwise_family_t coll_pairwise_family(const dpm_pairwise_t *pw, const unsigned *flags,
                                            const double *shift, int too_small, double scale)
{
    coll_pairwise_family_t f = {scale, pw != NULL ? 0u : (unsigned)DPM_CI_SMALL_N, too_small,
                                pw != NULL ? 0.0 : NAN};
    unsigned any = 0;
    for (uint32_t k = 0; pw != NULL && k < pw->npairs; k++) {
        if (pw->pair[k].defined) {
            any |= flags[k];
            f.max_shift = isnan(shift[k]) ? NAN : fmax(f.max_shift, shift[k]); /* NaN stays */
        }
    }
    /* what the normal law still covers: a variance that errs high, and the pairs without claim;
     * a pointwise interval widened beyond the normal one is outside the critical value's law */
    f.flags |= any & (DPM_CI_CONSERVATIVE | DPM_CI_NO_CLAIM);
    f.flags |= (any & (DPM_CI_FEW_EVENTS | DPM_CI_BOUND)) ? (unsigned)DPM_CI_SMALL_N : 0u;
    return f;
}

void coll_pairwise_pair_json(jw_t *sb, const dpm_pairwise_pair_t *p,
                             const coll_pairwise_family_t *f)
{
    int ok = p != NULL && p->defined;
    const double scale = f->scale, ci[2] = {ok ? p->lo * scale : NAN, ok ? p->hi * scale : NAN};
    jw_raw(sb, ", \"ci_simultaneous\": ");
    jw_nums(sb, ci, 2, DIGITS);
    coll_ci_json(sb, "ci_simultaneous", ok ? f->flags : f->flags | DPM_CI_SMALL_N);
    jw_raw(sb, ", \"distinguishable\": %s, \"largest_share\": ",
           ok && p->distinguishable ? "true" : "false");
    jw_num(sb, ok ? p->largest_share : NAN, DIGITS);
}

static void simultaneous(jw_t *sb, const dpm_pairwise_t *pw)
{
    jw_raw(sb, ", \"simultaneous\": {\"confidence\": ");
    jw_num(sb, pw->confidence, DIGITS);
    jw_raw(sb, ", \"method\": ");
    jw_str(sb, pw->method_name);
    coll_json_member(sb, "critical_value", pw->crit);
    coll_json_member(sb, "pointwise_critical_value", pw->crit_pointwise);
    jw_raw(sb, ", \"pairs_with_interval\": %u, \"distinguishable\": %u, \"reason\": ", pw->defined,
           pw->distinguishable);
    if (pw->defined == 0) {
        jw_str(sb, "no pair has an interval (groups without an estimate)");
    } else {
        jw_raw(sb, "null");
    }
    jw_raw(sb, "}");
}

/* The largest's "reason": why its stability or its influence bound is null, or null. */
static void largest_reason(jw_t *sb, const dpm_pairwise_t *pw, const coll_pairwise_family_t *f)
{
    const char *no_draws = isfinite(pw->stability)
                               ? NULL
                               : "the covariance estimate is not positive semi-definite: no "
                                 "bootstrap (the intervals use Bonferroni)";
    const char *unbounded = isfinite(f->max_shift) ? NULL : COLL_UNBOUNDED_REASON;
    if (no_draws != NULL && unbounded != NULL) {
        char both[512];
        snprintf(both, sizeof(both), "%s; %s", no_draws, unbounded);
        jw_str(sb, both);
    } else if (no_draws != NULL || unbounded != NULL) {
        jw_str(sb, no_draws != NULL ? no_draws : unbounded);
    } else {
        jw_raw(sb, "null");
    }
}

void coll_pairwise_json(jw_t *sb, const char *key, const dpm_pairwise_t *pw, const char *why_none,
                        const coll_pairwise_family_t *f)
{
    const double scale = f->scale;
    if (pw == NULL) {
        const char *why = why_none != NULL ? why_none : "no comparison";
        jw_raw(sb, ", \"simultaneous\": null, \"simultaneous_reason\": ");
        jw_str(sb, why);
        jw_raw(sb, ", \"%s\": null, \"%s_reason\": ", key, key);
        jw_str(sb, why);
        return;
    }
    simultaneous(sb, pw);
    jw_raw(sb, ", \"%s\": ", key);
    if (!pw->largest_defined) {
        jw_raw(sb, "null, \"%s_reason\": ", key);
        jw_str(sb, pw->largest_reason);
        return;
    }
    const dpm_pairwise_pair_t *c = &pw->pair[pw->largest_pair];
    const double ci[2] = {pw->largest_lo * scale, pw->largest_hi * scale};
    jw_raw(sb, "{\"g\": %u, \"h\": %u, \"abs_diff\": ", c->g, c->h);
    jw_num(sb, pw->largest_abs * scale, DIGITS);
    jw_raw(sb, ", \"ci\": ");
    jw_nums(sb, ci, 2, DIGITS);
    coll_ci_json(sb, "ci", f->flags | DPM_CI_CONSERVATIVE); /* >= confidence: pairwise.h */
    jw_raw(sb, ", \"candidates\": [");
    for (uint32_t k = 0, n = 0; k < pw->npairs; k++) {
        if (pw->pair[k].candidate) {
            jw_raw(sb, "%s[%u, %u]", n++ ? ", " : "", pw->pair[k].g, pw->pair[k].h);
        }
    }
    jw_raw(sb, "], \"stability\": ");
    jw_num(sb, pw->stability, DIGITS);
    /* |max x - max y| <= max |x - y| over the pairs */
    coll_json_member(sb, "max_shift_one_report", f->max_shift);
    jw_raw(sb, ", \"too_small\": %s, \"reason\": ", f->too_small ? "true" : "false");
    largest_reason(sb, pw, f);
    jw_raw(sb, "}, \"%s_reason\": null", key);
}
