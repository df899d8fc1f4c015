/* SPDX-License-Identifier: Apache-2.0 */
/* Campaign sums, transaction deltas and in-memory aggregates (see aggregate.h). */
#include "collector/ingest/aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "mech/host_mech.h"

/* ---- deltas ------------------------------------------------------------------------------- */

int coll_deltas_add(coll_deltas_t *ds, const coll_report_t *r)
{
    if (r->nvalues != 0) { /* a tuple report: its values are in columns */
        return coll_deltas_add_values(ds, r->campaign_id, r->period, r->group, r->nvalues,
                                      r->value);
    }
    /* the body is in raw (a scan of stored reports knows only that it has no values) */
    dpm_report_t rep;
    if (dpm_report_decode(r->raw, r->raw_len, &rep) != DPM_OK) {
        return -1;
    }
    const host_mech_t *hm = host_mech_stored(rep.mechanism, r->group);
    return hm != NULL ? hm->delta_add(ds, &rep, r->group) : -1;
}

/* ---- in-memory aggregates ------------------------------------------------------------------- */

int coll_agg_init(coll_aggregates_t *a, const coll_campaigns_t *cs)
{
    memset(a, 0, sizeof(*a));
    a->campaigns = cs;
    for (size_t i = 0; i < cs->n; i++) {
        if (coll_state_init(&a->state[i], &cs->c[i]) != 0) {
            return -1;
        }
    }
    return pthread_mutex_init(&a->lock, NULL) == 0 ? 0 : -1;
}

void coll_agg_free(coll_aggregates_t *a)
{
    pthread_mutex_destroy(&a->lock);
}

void coll_agg_lock(coll_aggregates_t *a)
{
    pthread_mutex_lock(&a->lock);
}

void coll_agg_unlock(coll_aggregates_t *a)
{
    pthread_mutex_unlock(&a->lock);
}

int coll_agg_add_batch_report_locked(coll_aggregates_t *a, const coll_report_t *r)
{
    int ci = r->campaign_index;
    if (ci < 0 || (size_t)ci >= a->campaigns->n) {
        return -1;
    }
    coll_campaign_state_t *st = &a->state[ci];
    coll_deltas_t one;
    memset(&one, 0, sizeof(one));
    int rc = coll_deltas_add(&one, r);
    if (rc == 0) { /* the one report's sums must fit the campaign's layout, or it adds nothing */
        const coll_delta_t *d = &one.d[0];
        int fits = d->roc == 2   ? st->vec_len != 0
                   : d->roc == 1 ? d->width == st->roc.bins
                                 : d->width == st->nmetrics &&
                                       r->group < a->campaigns->c[ci].mech.campaign.groups;
        rc = fits ? 0 : -1;
    }
    if (rc == 0) {
        coll_state_add_deltas(st, &one, one.d[0].campaign_id); /* its report count too */
        a->totals.reports++;
    }
    coll_deltas_free(&one);
    return rc;
}

void coll_agg_count_lost_locked(coll_aggregates_t *a, uint64_t count)
{
    a->totals.lost_reports += count;
}

void coll_agg_count_reject_locked(coll_aggregates_t *a, uint32_t campaign_id, const char *reason,
                                  uint64_t count)
{
    int ci = campaign_id == 0 ? -1 : coll_campaigns_index(a->campaigns, campaign_id);
    coll_reasons_add(ci < 0 ? &a->totals.unattributed : &a->state[ci].rejects, reason, count);
}

void coll_agg_snapshot(coll_aggregates_t *a, int ci, coll_campaign_state_t *out,
                       coll_totals_t *totals)
{
    pthread_mutex_lock(&a->lock);
    if (out != NULL && ci >= 0 && (size_t)ci < a->campaigns->n) {
        *out = a->state[ci];
    }
    if (totals != NULL) {
        *totals = a->totals;
    }
    pthread_mutex_unlock(&a->lock);
}
