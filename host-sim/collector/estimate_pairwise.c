/* SPDX-License-Identifier: Apache-2.0 */
/* Every pair at once in the estimate JSON (see estimate_pairwise.h). */
#include "collector/estimate_pairwise.h"

#include <math.h>

#define DIGITS 9

void coll_pairwise_pair_json(jw_t *sb, const dpm_pairwise_pair_t *p, double scale)
{
    int ok = p != NULL && p->defined;
    const double ci[2] = {ok ? p->lo * scale : NAN, ok ? p->hi * scale : NAN};
    jw_raw(sb, ", \"ci_simultaneous\": ");
    jw_nums(sb, ci, 2, DIGITS);
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
    jw_raw(sb, ", \"critical_value\": ");
    jw_num(sb, pw->crit, DIGITS);
    jw_raw(sb, ", \"pointwise_critical_value\": ");
    jw_num(sb, pw->crit_pointwise, DIGITS);
    jw_raw(sb, ", \"pairs_with_interval\": %u, \"distinguishable\": %u, \"reason\": ", pw->defined,
           pw->distinguishable);
    if (pw->defined == 0) {
        jw_str(sb, "no pair has an interval (groups without an estimate)");
    } else {
        jw_raw(sb, "null");
    }
    jw_raw(sb, "}");
}

void coll_pairwise_json(jw_t *sb, const char *key, const dpm_pairwise_t *pw, const char *why_none,
                        int too_small, double scale)
{
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
    jw_raw(sb, ", \"candidates\": [");
    for (uint32_t k = 0, n = 0; k < pw->npairs; k++) {
        if (pw->pair[k].candidate) {
            jw_raw(sb, "%s[%u, %u]", n++ ? ", " : "", pw->pair[k].g, pw->pair[k].h);
        }
    }
    jw_raw(sb, "], \"stability\": ");
    jw_num(sb, pw->stability, DIGITS);
    jw_raw(sb, ", \"too_small\": %s, \"reason\": ", too_small ? "true" : "false");
    if (isfinite(pw->stability)) {
        jw_raw(sb, "null");
    } else {
        jw_str(sb, "the covariance estimate is not positive semi-definite: no bootstrap "
                   "(the intervals use Bonferroni)");
    }
    jw_raw(sb, "}, \"%s_reason\": null", key);
}
