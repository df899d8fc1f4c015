/* SPDX-License-Identifier: Apache-2.0 */
/* Estimate JSON (format in estimate_json.h), from a campaign's stored sums. */
#include "collector/api/estimate_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mech/base/est_json.h"
#include "mech/host_mech.h"
#include "common/json_write.h"
#include "estimate/ci_flags.h"

static void sb_reasons(jw_t *sb, const coll_reasons_t *rs)
{
    jw_raw(sb, "{");
    for (size_t i = 0; i < rs->n; i++) {
        jw_raw(sb, "%s", i ? ", " : "");
        jw_str(sb, rs->r[i].reason);
        jw_raw(sb, ": %llu", (unsigned long long)rs->r[i].count);
    }
    jw_raw(sb, "}");
}

/* "report_bounds": what an accepted report can hold (bounds.h), with the mechanism's own
 * members (tuple campaigns: the estimator constants of the influence formulas). */
static void sb_bounds(jw_t *sb, const coll_campaign_t *c)
{
    const coll_bounds_t *b = &c->bounds;
    jw_raw(sb, ", \"report_bounds\": {\"honest_reject_log2\": ");
    coll_json_num(sb, b->fail_log2);
    if (!isfinite(b->fail_log2)) {
        jw_raw(sb, ", \"reason\": \"no check can reject an honest report of this "
                   "mechanism\"");
    }
    const host_mech_t *hm = host_mech_of(&c->mech.campaign);
    if (hm->bounds_json != NULL) { /* the mechanism's own members */
        hm->bounds_json(sb, c);
    }
    /* exact sums: the largest amount one report adds to a stored sum, and how many reports of
     * one period the int64 sums hold (bounds.h) */
    jw_raw(sb, ", \"row_max\": %lld, \"sum_capacity_reports\": %llu}", (long long)b->row_max,
           (unsigned long long)b->sum_capacity);
}

/* The period open at Unix time now (0 before the campaign's start or without one). */
uint32_t coll_period_now(const coll_campaign_t *c, int64_t now)
{
    int64_t len = (int64_t)c->mech.campaign.period_seconds;
    if (!c->opts.has_start || now < c->opts.start || len <= 0) {
        return 0;
    }
    int64_t p = (now - c->opts.start) / len;
    return p > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

int coll_estimate_json(const coll_campaigns_t *cs, int ci, const coll_estimate_query_t *q,
                       const coll_campaign_state_t *st, const coll_totals_t *totals, int64_t now,
                       char **out, size_t *len)
{
    if (ci < 0 || (size_t)ci >= cs->n) {
        return -1;
    }
    jw_t sb;
    jw_buffer(&sb);
    const coll_campaign_t *c = &cs->c[ci];
    const dpm_campaign_t *cp = &c->mech.campaign;
    jw_raw(&sb, "{\"campaign\": %u", cp->id);
    coll_names_json(&sb, &c->opts.names); /* "name", "group_names" (campaign_names.h) */
    jw_raw(&sb, ", \"mechanism\": \"%s\", \"eps\": ", coll_mechanism_name(cp->mechanism));
    coll_json_num(&sb, cp->eps.q16 / 65536.0);
    jw_raw(&sb, ", \"eps_implemented\": ");
    coll_json_num(&sb, c->mech.eps_implemented / 65536.0);
    /* what the eps protects and whom it trusts (the console's campaign card says the same) */
    jw_raw(&sb, ", \"privacy_unit\": ");
    jw_str(&sb, host_privacy_unit(cp));
    jw_raw(&sb, ", \"trust_model\": ");
    jw_str(&sb, host_mech_of(cp)->trust_model);
    jw_raw(&sb, ", \"groups\": %u, \"confidence\": %.9g, \"scale\": \"metric\", ",
           c->mech.campaign.groups, q->confidence);
    if (q->all) {
        jw_raw(&sb, "\"period_from\": null, \"period_to\": null");
    } else {
        jw_raw(&sb, "\"period_from\": %u, \"period_to\": %u", q->from, q->to);
    }
    jw_raw(&sb,
           ", \"period_now\": %u, \"period_seconds\": %u, \"reports\": %llu, \"n\": "
           "%llu, \"too_small_rule\": {\"min_reports\": %d, \"max_size_cv\": %.9g}, "
           "\"rejects\": ",
           coll_period_now(c, now), cp->period_seconds, (unsigned long long)st->reports,
           (unsigned long long)st->reports, COLL_EST_MIN_REPORTS, COLL_EST_MAX_SIZE_CV);
    sb_reasons(&sb, &st->rejects);
    jw_raw(&sb, ", \"rejects_unattributed\": ");
    sb_reasons(&sb, &totals->unattributed);
    jw_raw(&sb, ", \"lost_reports\": %llu", (unsigned long long)totals->lost_reports);
    sb_bounds(&sb, c);
    jw_raw(&sb, ", \"sums_overflow\": %s", st->sums_overflow ? "true" : "false");
    if (st->sums_overflow) { /* never within a campaign's capacity; no estimate from them */
        jw_raw(&sb, ", \"reason\": \"the stored sums of these periods leave 64-bit integers: ask "
                    "fewer periods\", \"metrics\": []}\n");
        *out = jw_take(&sb, len);
        return *out != NULL ? 0 : -1;
    }
    const host_json_ctx_t ctx = {q->confidence, !q->all && q->from == q->to, q->from};
    host_mech_of(cp)->estimate_json(&sb, c, st, &ctx);
    jw_raw(&sb, "}\n");
    *out = jw_take(&sb, len);
    return *out != NULL ? 0 : -1;
}
