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

#include "mech/base/agg_auc.h"
#include "mech/base/sums.h"
#include "collector/ingest/batch.h"
#include "collector/ingest/campaigns.h"
#include "estimate/disparity.h"

/* Counts over every campaign. */
typedef struct {
    uint64_t reports;            /* stored reports */
    uint64_t lost_reports;       /* Batch.lost_reports summed over the committed batches */
    coll_reasons_t unattributed; /* rejects with no known campaign: malformed, unknown id */
} coll_totals_t;

/* ---- what a transaction adds ----------------------------------------------------------- */

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
