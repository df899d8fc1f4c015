/* SPDX-License-Identifier: Apache-2.0 */
/* Running per-campaign aggregates and reject counters (see aggregate.h). */
#include "collector/aggregate.h"

#include <string.h>

int coll_agg_init(coll_aggregates_t *a, const coll_campaigns_t *cs)
{
    memset(a, 0, sizeof(*a));
    a->campaigns = cs;
    for (size_t i = 0; i < cs->n; i++) {
        coll_campaign_state_t *s = &a->state[i];
        s->nmetrics = cs->c[i].mech.campaign.nmetrics;
        if (cs->c[i].mech.campaign.mechanism == DPM_MECH_ID_ROC_HIST &&
            dpm_roc_agg_init(&s->roc, cs->c[i].mech.params.roc_hist.bins.count) != DPM_OK) {
            return -1;
        }
        for (uint32_t m = 0; m < s->nmetrics; m++) {
            if (dpm_disp_agg_init(&s->agg[m], &cs->c[i].disp) != DPM_OK) {
                return -1;
            }
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

int coll_agg_add_locked(coll_aggregates_t *a, int ci, uint32_t group, uint32_t nvalues,
                        const int32_t *values)
{
    if (ci < 0 || (size_t)ci >= a->campaigns->n) {
        return -1;
    }
    coll_campaign_state_t *s = &a->state[ci];
    if (nvalues != s->nmetrics || group >= a->campaigns->c[ci].mech.campaign.groups) {
        return -1;
    }
    /* Check every value before adding any, so a bad row changes nothing. */
    for (uint32_t m = 0; m < nvalues; m++) {
        if (s->agg[m].mech == DPM_DISP_MR && values[m] != 1 && values[m] != -1) {
            return -1;
        }
    }
    for (uint32_t m = 0; m < nvalues; m++) {
        if (dpm_disp_agg_add(&s->agg[m], group, values[m]) != DPM_OK) {
            return -1; /* only a 2^64 counter overflow: unreachable in practice */
        }
    }
    s->reports++;
    a->total_reports++;
    return 0;
}

int coll_agg_add_report_locked(coll_aggregates_t *a, int ci, const dpm_report_t *rep)
{
    if (ci < 0 || (size_t)ci >= a->campaigns->n) {
        return -1;
    }
    if (a->campaigns->c[ci].mech.campaign.mechanism != DPM_MECH_ID_ROC_HIST) {
        return coll_agg_add_locked(a, ci, rep->body.tuple.group, rep->body.tuple.nmetrics,
                                   rep->body.tuple.value);
    }
    coll_campaign_state_t *s = &a->state[ci];
    if (dpm_roc_agg_add(&s->roc, rep->body.roc_hist.bins, rep->body.roc_hist.pos,
                        rep->body.roc_hist.neg) != DPM_OK) {
        return -1;
    }
    s->reports++;
    a->total_reports++;
    return 0;
}

int coll_agg_add_batch_report_locked(coll_aggregates_t *a, const coll_report_t *r)
{
    if (r->mechanism != DPM_MECH_ID_ROC_HIST) {
        return coll_agg_add_locked(a, r->campaign_index, r->group, r->nvalues, r->value);
    }
    dpm_report_t rep;
    if (dpm_report_decode(r->raw, r->raw_len, &rep) != DPM_OK) {
        return -1;
    }
    return coll_agg_add_report_locked(a, r->campaign_index, &rep);
}

void coll_agg_count_lost_locked(coll_aggregates_t *a, uint64_t count)
{
    a->lost_reports += count;
}

uint64_t coll_agg_lost_reports(coll_aggregates_t *a)
{
    pthread_mutex_lock(&a->lock);
    uint64_t n = a->lost_reports;
    pthread_mutex_unlock(&a->lock);
    return n;
}

static void count_reason(coll_reasons_t *rs, const char *reason, uint64_t count)
{
    for (size_t i = 0; i < rs->n; i++) {
        if (strcmp(rs->r[i].reason, reason) == 0) {
            rs->r[i].count += count;
            return;
        }
    }
    if (rs->n == COLL_MAX_REASONS) {
        /* the last slot collects everything that does not fit */
        strcpy(rs->r[COLL_MAX_REASONS - 1].reason, "other");
        rs->r[COLL_MAX_REASONS - 1].count += count;
        return;
    }
    coll_reason_t *r = &rs->r[rs->n++];
    strncpy(r->reason, reason, sizeof(r->reason) - 1);
    r->reason[sizeof(r->reason) - 1] = '\0';
    r->count = count;
}

void coll_agg_count_reject_locked(coll_aggregates_t *a, uint32_t campaign_id, const char *reason,
                                  uint64_t count)
{
    int ci = campaign_id == 0 ? -1 : coll_campaigns_index(a->campaigns, campaign_id);
    count_reason(ci < 0 ? &a->unattributed : &a->state[ci].rejects, reason, count);
}

void coll_agg_snapshot(coll_aggregates_t *a, int ci, coll_campaign_state_t *out,
                       coll_reasons_t *unattributed, uint64_t *total_reports)
{
    pthread_mutex_lock(&a->lock);
    if (out != NULL && ci >= 0 && (size_t)ci < a->campaigns->n) {
        *out = a->state[ci];
    }
    if (unattributed != NULL) {
        *unattributed = a->unattributed;
    }
    if (total_reports != NULL) {
        *total_reports = a->total_reports;
    }
    pthread_mutex_unlock(&a->lock);
}
