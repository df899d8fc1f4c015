/* SPDX-License-Identifier: Apache-2.0 */
/* The sums the estimators need, in three forms:
 *
 *   coll_campaign_state_t  one campaign's sums over a range of periods, as the estimate reads
 *                          them: per metric and group the report count, value sum and sum of
 *                          squares (dpm_disp_agg_t), for roc_hist the per-bin histogram sums
 *                          (dpm_roc_agg_t), the report count and the rejects by reason. The
 *                          store fills it from its stored sums (coll_state_add_*).
 *   coll_deltas_t          what one transaction adds to the stored sums, per (campaign,
 *                          period): built from the reports it stores (coll_deltas_add) and
 *                          written by the store in the same transaction, so the stored sums
 *                          are always exactly the sums of the stored reports.
 *   coll_aggregates_t      running in-memory sums of whole campaigns (no periods): the fuzzer's
 *                          and the unit tests' stand-in for a store. Thread-safe: one mutex.
 *
 * Sums are exact integers except the tuple sums of squares, which are doubles as in
 * dpm_disp_agg_t (they only enter the plug-in second moment of the variance). */
#ifndef DPM_COLLECTOR_AGGREGATE_H
#define DPM_COLLECTOR_AGGREGATE_H

#include <pthread.h>
#include <stdint.h>

#include "mech/agg_auc.h"
#include "collector/ingest/batch.h"
#include "collector/ingest/campaigns.h"
#include "estimate/disparity.h"

#define COLL_REASON_MAX 48  /* bytes of a reason, NUL included (dpm.proto Reject.reason) */
#define COLL_MAX_REASONS 32 /* distinct reasons kept per campaign; the rest count as "other" */

typedef struct {
    char reason[COLL_REASON_MAX];
    uint64_t count;
} coll_reason_t;

typedef struct {
    size_t n;
    coll_reason_t r[COLL_MAX_REASONS];
} coll_reasons_t;

/* One campaign's sums over a range of periods (what an estimate is computed from). */
typedef struct {
    uint64_t reports; /* stored reports */
    uint32_t nmetrics;
    dpm_disp_agg_t agg[DPM_CAMPAIGN_MAX_METRICS];
    dpm_roc_agg_t roc;         /* roc_hist campaigns: the summed histograms */
    uint32_t vec_len;          /* dpauc, ustat_*: COLL_VEC_LEN, else 0 */
    int64_t vec[COLL_VEC_LEN]; /* their sums (layout: agg_auc.h) */
    coll_reasons_t rejects;
    uint64_t rows_skipped;  /* stored sums that do not fit the campaign (never, unless edited) */
    uint64_t sums_overflow; /* sums that left int64 when added up (checked: left as they were;
                             * the estimate is withheld with the reason) */
    /* fedauc_rr / fedauc_lap: the sums (fedauc_sums.h) and the phase of the period asked for
     * (filled by request.c) */
    coll_fedauc_sums_t fa;
    coll_fedauc_period_t fa_phase;
} coll_campaign_state_t;

/* Counts over every campaign. */
typedef struct {
    uint64_t reports;            /* stored reports */
    uint64_t lost_reports;       /* Batch.lost_reports summed over the committed batches */
    coll_reasons_t unattributed; /* rejects with no known campaign: malformed, unknown id */
} coll_totals_t;

/* Empty sums for campaign c. 0, or -1 if its estimator does not initialize. */
int coll_state_init(coll_campaign_state_t *st, const coll_campaign_t *c);

/* Add stored sums: the report count; a tuple row (metric m, group g: n reports, value sum s in
 * grid units, sum of squares ss); a roc_hist bin. A row outside the campaign's metrics, groups
 * or bins is counted in rows_skipped and otherwise ignored. */
void coll_state_add_reports(coll_campaign_state_t *st, uint64_t n);
void coll_state_add_tuple(coll_campaign_state_t *st, uint32_t m, uint32_t g, uint64_t n, int64_t s,
                          double ss);
void coll_state_add_roc(coll_campaign_state_t *st, uint32_t bin, int64_t pos, int64_t neg);
void coll_state_add_vec(coll_campaign_state_t *st, uint32_t idx, int64_t s);

/* Count `count` of `reason` into rs (the last slot collects "other" when full). */
void coll_reasons_add(coll_reasons_t *rs, const char *reason, uint64_t count);

/* ---- what a transaction adds ----------------------------------------------------------- */

typedef struct {
    uint32_t campaign_id, period;
    uint8_t roc;    /* 1: roc_hist bins, 0: tuple metrics, 2: vector sums (in ds->vec) */
    uint32_t width; /* tuple: metrics; roc_hist: bins */
    uint64_t reports;
    uint64_t n[DPM_CAMPAIGN_MAX_METRICS][DPM_MAX_GROUPS];
    int64_t s[DPM_CAMPAIGN_MAX_METRICS][DPM_MAX_GROUPS];
    double ss[DPM_CAMPAIGN_MAX_METRICS][DPM_MAX_GROUPS];
    int64_t pos[DPM_MAX_BINS], neg[DPM_MAX_BINS];
} coll_delta_t;

typedef struct {
    coll_delta_t *d;
    size_t n, cap;
    size_t last;      /* the entry hit last (reports come in runs of one campaign and period) */
    coll_vsums_t vec; /* dpauc, ustat_*: their vector sums (agg_auc.h) */
} coll_deltas_t;

/* Add one stored report (a tuple report's values, or a roc_hist body decoded from r->raw; the
 * kind is r->mechanism). Needs no campaigns file: a database's reports can be summed whatever
 * campaigns the collector runs. 0, or -1 (memory, a roc_hist body that does not decode, or a
 * sum that would leave int64: checked, the report then adds nothing). */
int coll_deltas_add(coll_deltas_t *ds, const coll_report_t *r);
void coll_deltas_clear(coll_deltas_t *ds);
void coll_deltas_free(coll_deltas_t *ds);

/* ---- in-memory sums (the fuzzer's store) ------------------------------------------------- */

typedef struct {
    pthread_mutex_t lock;
    const coll_campaigns_t *campaigns;
    coll_campaign_state_t state[COLL_MAX_CAMPAIGNS];
    coll_totals_t totals;
} coll_aggregates_t;

/* Empty aggregates for every campaign. 0, or -1 if a campaign's estimator does not initialize. */
int coll_agg_init(coll_aggregates_t *a, const coll_campaigns_t *cs);
void coll_agg_free(coll_aggregates_t *a);

/* With the lock held (coll_agg_lock): add a validated report of a committed batch; count
 * rejects of a reason for a campaign id (0 or unknown: unattributed); count lost reports. */
int coll_agg_add_batch_report_locked(coll_aggregates_t *a, const coll_report_t *r);
void coll_agg_count_reject_locked(coll_aggregates_t *a, uint32_t campaign_id, const char *reason,
                                  uint64_t count);
void coll_agg_count_lost_locked(coll_aggregates_t *a, uint64_t count);

void coll_agg_lock(coll_aggregates_t *a);
void coll_agg_unlock(coll_aggregates_t *a);

/* Consistent copies: campaign index ci's state (out may be NULL) and the totals (may be NULL). */
void coll_agg_snapshot(coll_aggregates_t *a, int ci, coll_campaign_state_t *out,
                       coll_totals_t *totals);

#endif /* DPM_COLLECTOR_AGGREGATE_H */
