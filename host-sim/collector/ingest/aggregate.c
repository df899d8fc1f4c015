/* SPDX-License-Identifier: Apache-2.0 */
/* Campaign sums, transaction deltas and in-memory aggregates (see aggregate.h). */
#include "collector/ingest/aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "mech/agg_rocg.h"
#include "mech/fedauc_sums.h"

/* *acc += x, or -1 (and *acc unchanged) if the sum leaves int64: checked, never wrapped. The
 * bounds make it impossible within a campaign's capacity (bounds.h); a read of many periods
 * could still reach it, and says so (sums_overflow). */
static int add_i64(int64_t *acc, int64_t x)
{
    int64_t r;
    if (__builtin_add_overflow(*acc, x, &r)) {
        return -1;
    }
    *acc = r;
    return 0;
}

int coll_state_init(coll_campaign_state_t *st, const coll_campaign_t *c)
{
    memset(st, 0, sizeof(*st));
    const dpm_campaign_t *cp = &c->mech.campaign;
    st->fa.on = coll_fedauc_is((uint32_t)cp->mechanism);
    if (st->fa.on) {
        return 0;
    }
    if (coll_auc_mech(cp->mechanism) ||
        (cp->mechanism == DPM_MECH_ID_ROC_HIST && c->mech.params.roc_hist.groups >= 2)) {
        st->vec_len = COLL_VEC_LEN; /* per-group roc_hist: agg_rocg.h */
        return 0;
    }
    if (cp->mechanism == DPM_MECH_ID_ROC_HIST) {
        return dpm_roc_agg_init(&st->roc, c->mech.params.roc_hist.bins.count) == DPM_OK ? 0 : -1;
    }
    st->nmetrics = cp->nmetrics;
    for (uint32_t m = 0; m < st->nmetrics; m++) {
        if (dpm_disp_agg_init(&st->agg[m], &c->disp) != DPM_OK) {
            return -1;
        }
    }
    return 0;
}

void coll_state_add_reports(coll_campaign_state_t *st, uint64_t n)
{
    st->reports += n;
    st->roc.reports += st->roc.bins > 0 ? n : 0;
}

void coll_state_add_tuple(coll_campaign_state_t *st, uint32_t m, uint32_t g, uint64_t n, int64_t s,
                          double ss)
{
    if (st->fa.on) {
        if (n > (uint64_t)INT64_MAX ||
            coll_fedauc_sums_add(&st->fa, m, g, (int64_t)n, s, ss) != 0) {
            st->rows_skipped++;
            st->sums_overflow += st->fa.overflow != 0;
        }
        return;
    }
    if (m >= st->nmetrics || g >= st->agg[m].d) {
        st->rows_skipped++;
        return;
    }
    /* dpm_disp_agg_t's fields are public: K, n'_G, the exact 128-bit sum S_G (two's
     * complement: the high word is the sign extension of an int64) and Σ v'^2. */
    dpm_disp_agg_t *a = &st->agg[m];
    dpm_disp_agg_t one = *a;
    memset(one.count, 0, sizeof(one.count));
    memset(one.sum, 0, sizeof(one.sum));
    memset(one.sumsq, 0, sizeof(one.sumsq));
    memset(one.sumsq_comp, 0, sizeof(one.sumsq_comp));
    one.total = n;
    one.count[g] = n;
    one.sum[g].lo = (uint64_t)s;
    one.sum[g].hi = s < 0 ? UINT64_MAX : 0;
    one.sumsq[g] = ss;
    if (dpm_disp_agg_merge(a, &one) != DPM_OK) {
        st->rows_skipped++;
    }
}

void coll_state_add_roc(coll_campaign_state_t *st, uint32_t bin, int64_t pos, int64_t neg)
{
    if (bin >= st->roc.bins) {
        st->rows_skipped++;
        return;
    }
    int64_t p = st->roc.pos[bin], q = st->roc.neg[bin];
    if (add_i64(&p, pos) != 0 || add_i64(&q, neg) != 0) {
        st->sums_overflow++;
        return;
    }
    st->roc.pos[bin] = p;
    st->roc.neg[bin] = q;
}

void coll_state_add_vec(coll_campaign_state_t *st, uint32_t idx, int64_t s)
{
    if (idx >= st->vec_len) {
        st->rows_skipped++;
        return;
    }
    st->sums_overflow += add_i64(&st->vec[idx], s) != 0;
}

void coll_reasons_add(coll_reasons_t *rs, const char *reason, uint64_t count)
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

/* ---- deltas ------------------------------------------------------------------------------- */

static coll_delta_t *delta_for(coll_deltas_t *ds, uint32_t campaign_id, uint32_t period, int roc,
                               uint32_t width)
{
    if (ds->last < ds->n) {
        coll_delta_t *d = &ds->d[ds->last];
        if (d->campaign_id == campaign_id && d->period == period) {
            return d->roc == roc && d->width == width ? d : NULL;
        }
    }
    for (size_t i = 0; i < ds->n; i++) {
        coll_delta_t *d = &ds->d[i];
        if (d->campaign_id == campaign_id && d->period == period) {
            ds->last = i;
            return d->roc == roc && d->width == width ? d : NULL;
        }
    }
    if (ds->n == ds->cap) {
        size_t cap = ds->cap ? 2 * ds->cap : 4;
        coll_delta_t *p = realloc(ds->d, cap * sizeof(*p));
        if (p == NULL) {
            return NULL;
        }
        ds->d = p;
        ds->cap = cap;
    }
    coll_delta_t *d = &ds->d[ds->n];
    memset(d, 0, sizeof(*d));
    d->campaign_id = campaign_id;
    d->period = period;
    d->roc = (uint8_t)roc;
    d->width = width;
    ds->last = ds->n++;
    return d;
}

/* dpauc, ustat_*: the vector sums of a decoded report. */
static int deltas_add_vec(coll_deltas_t *ds, const dpm_report_t *rep)
{
    coll_delta_t *d = delta_for(ds, rep->campaign_id, rep->period, 2, 0);
    if (d == NULL || coll_vec_add_report(&ds->vec, rep) != 0) {
        return -1;
    }
    d->reports++;
    return 0;
}

/* A FedAUC report: its rows of the tuple sums (fedauc_sums.h). */
static int add_fedauc(coll_deltas_t *ds, const dpm_report_t *rep)
{
    int64_t n[COLL_FEDAUC_ROWS][2], s[COLL_FEDAUC_ROWS][2];
    double ss[COLL_FEDAUC_ROWS][2];
    coll_delta_t *d = NULL;
    if (coll_fedauc_report_rows(rep, n, s, ss) != 0 ||
        (d = delta_for(ds, rep->campaign_id, rep->period, 0, COLL_FEDAUC_ROWS)) == NULL) {
        return -1;
    }
    coll_delta_t next = *d; /* all of the report or nothing */
    for (uint32_t m = 0; m < COLL_FEDAUC_ROWS; m++) {
        for (uint32_t g = 0; g < 2; g++) {
            int64_t dn = (int64_t)next.n[m][g];
            if (add_i64(&dn, n[m][g]) != 0 || dn < 0 || add_i64(&next.s[m][g], s[m][g]) != 0) {
                return -1;
            }
            next.n[m][g] = (uint64_t)dn;
            next.ss[m][g] += ss[m][g];
        }
    }
    next.reports++;
    *d = next;
    return 0;
}

int coll_deltas_add(coll_deltas_t *ds, const coll_report_t *r)
{
    if (r->mechanism != DPM_MECH_ID_TUPLE_MR && r->mechanism != DPM_MECH_ID_TUPLE_ML) {
        /* the body is in raw (a scan of stored reports knows only that it is not a tuple) */
        dpm_report_t rep;
        if (dpm_report_decode(r->raw, r->raw_len, &rep) != DPM_OK) {
            return -1;
        }
        if (coll_auc_mech(rep.mechanism)) {
            return deltas_add_vec(ds, &rep);
        }
        if (coll_fedauc_is((uint32_t)rep.mechanism)) {
            return add_fedauc(ds, &rep);
        }
        if (rep.mechanism != DPM_MECH_ID_ROC_HIST || rep.body.roc_hist.bins > DPM_MAX_BINS) {
            return -1;
        }
        if (r->group >= 2) { /* a per-group campaign's report (agg_rocg.h) */
            coll_delta_t *d = delta_for(ds, r->campaign_id, r->period, 2, 0);
            if (d == NULL || coll_rocg_add_report(&ds->vec, &rep, r->group) != 0) {
                return -1;
            }
            d->reports++;
            return 0;
        }
        uint32_t bins = rep.body.roc_hist.bins;
        coll_delta_t *d = delta_for(ds, r->campaign_id, r->period, 1, bins);
        if (d == NULL) {
            return -1;
        }
        int64_t pos[DPM_MAX_BINS], neg[DPM_MAX_BINS];
        memcpy(pos, d->pos, bins * sizeof(int64_t));
        memcpy(neg, d->neg, bins * sizeof(int64_t));
        for (uint32_t b = 0; b < bins; b++) {
            if (add_i64(&pos[b], rep.body.roc_hist.pos[b]) != 0 ||
                add_i64(&neg[b], rep.body.roc_hist.neg[b]) != 0) {
                return -1;
            }
        }
        memcpy(d->pos, pos, bins * sizeof(int64_t));
        memcpy(d->neg, neg, bins * sizeof(int64_t));
        d->reports++;
        return 0;
    }
    if (r->nvalues < 1 || r->nvalues > DPM_CAMPAIGN_MAX_METRICS || r->group >= DPM_MAX_GROUPS) {
        return -1;
    }
    coll_delta_t *d = delta_for(ds, r->campaign_id, r->period, 0, r->nvalues);
    if (d == NULL) {
        return -1;
    }
    int64_t sum[DPM_CAMPAIGN_MAX_METRICS];
    for (uint32_t m = 0; m < r->nvalues; m++) {
        sum[m] = d->s[m][r->group];
        if (add_i64(&sum[m], r->value[m]) != 0) {
            return -1;
        }
    }
    for (uint32_t m = 0; m < r->nvalues; m++) {
        int64_t v = r->value[m];
        d->n[m][r->group]++;
        d->s[m][r->group] = sum[m];
        d->ss[m][r->group] += (double)v * (double)v;
    }
    d->reports++;
    return 0;
}

void coll_deltas_clear(coll_deltas_t *ds)
{
    ds->n = 0;
    ds->last = 0;
    coll_vsums_clear(&ds->vec);
}

void coll_deltas_free(coll_deltas_t *ds)
{
    free(ds->d);
    coll_vsums_free(&ds->vec);
    memset(ds, 0, sizeof(*ds));
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
    if (rc == 0) {
        const coll_delta_t *d = &one.d[0];
        if (d->roc == 2) {
            if (st->vec_len == 0) {
                rc = -1;
            }
            for (size_t k = 0; rc == 0 && k < one.vec.n; k++) {
                coll_state_add_vec(st, one.vec.e[k].idx, one.vec.e[k].sum);
            }
        } else if (d->roc) {
            if (d->width != st->roc.bins) {
                rc = -1;
            }
            for (uint32_t b = 0; rc == 0 && b < d->width; b++) {
                coll_state_add_roc(st, b, d->pos[b], d->neg[b]);
            }
        } else {
            if (d->width != st->nmetrics || r->group >= a->campaigns->c[ci].mech.campaign.groups) {
                rc = -1;
            }
            for (uint32_t m = 0; rc == 0 && m < d->width; m++) {
                coll_state_add_tuple(st, m, r->group, 1, d->s[m][r->group], d->ss[m][r->group]);
            }
        }
    }
    coll_deltas_free(&one);
    if (rc == 0) {
        coll_state_add_reports(st, 1);
        a->totals.reports++;
    }
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
