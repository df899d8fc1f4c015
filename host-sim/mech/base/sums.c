/* SPDX-License-Identifier: Apache-2.0 */
/* A campaign's sums over a range of periods (see sums.h). */
#include "mech/base/sums.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "mech/base/fedauc_sums.h"

/* *acc += x, or -1 (and *acc unchanged) if the sum leaves int64: checked, never wrapped. The
 * bounds make it impossible within a campaign's capacity (bounds.h); a read of many periods
 * could still reach it, and says so (sums_overflow). */
int coll_add_i64(int64_t *acc, int64_t x)
{
    int64_t r;
    if (__builtin_add_overflow(*acc, x, &r)) {
        return -1;
    }
    *acc = r;
    return 0;
}

int coll_state_init_vec(coll_campaign_state_t *st, const coll_campaign_t *c)
{
    (void)c;
    st->vec_len = COLL_VEC_LEN;
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
    if (coll_add_i64(&p, pos) != 0 || coll_add_i64(&q, neg) != 0) {
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
    st->sums_overflow += coll_add_i64(&st->vec[idx], s) != 0;
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

coll_delta_t *coll_delta_for(coll_deltas_t *ds, uint32_t campaign_id, uint32_t period, int roc,
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
    if (HOST_GROW(ds->d, ds->n, ds->cap, 4) != 0) {
        return NULL;
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

int coll_deltas_add_values(coll_deltas_t *ds, uint32_t campaign_id, uint32_t period, uint32_t group,
                           uint32_t nvalues, const int32_t *value)
{
    if (nvalues < 1 || nvalues > DPM_CAMPAIGN_MAX_METRICS || group >= DPM_MAX_GROUPS) {
        return -1;
    }
    coll_delta_t *d = coll_delta_for(ds, campaign_id, period, 0, nvalues);
    if (d == NULL) {
        return -1;
    }
    int64_t sum[DPM_CAMPAIGN_MAX_METRICS];
    for (uint32_t m = 0; m < nvalues; m++) {
        sum[m] = d->s[m][group];
        if (coll_add_i64(&sum[m], value[m]) != 0) {
            return -1;
        }
    }
    for (uint32_t m = 0; m < nvalues; m++) {
        int64_t v = value[m];
        d->n[m][group]++;
        d->s[m][group] = sum[m];
        d->ss[m][group] += (double)v * (double)v;
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

void coll_state_add_deltas(coll_campaign_state_t *st, const coll_deltas_t *ds, uint32_t campaign_id)
{
    for (size_t i = 0; i < ds->n; i++) {
        const coll_delta_t *d = &ds->d[i];
        if (d->campaign_id != campaign_id) {
            continue;
        }
        coll_state_add_reports(st, d->reports);
        for (uint32_t k = 0; d->roc == 1 && k < d->width; k++) {
            coll_state_add_roc(st, k, d->pos[k], d->neg[k]);
        }
        for (uint32_t m = 0; d->roc == 0 && m < d->width; m++) {
            for (uint32_t g = 0; g < DPM_MAX_GROUPS; g++) {
                if (d->n[m][g] != 0 || d->s[m][g] != 0 || d->ss[m][g] != 0.0) {
                    coll_state_add_tuple(st, m, g, d->n[m][g], d->s[m][g], d->ss[m][g]);
                }
            }
        }
    }
    for (size_t k = 0; k < ds->vec.n; k++) {
        if (ds->vec.e[k].campaign_id == campaign_id) {
            coll_state_add_vec(st, ds->vec.e[k].idx, ds->vec.e[k].sum);
        }
    }
}
