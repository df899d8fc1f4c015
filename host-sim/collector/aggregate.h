/* SPDX-License-Identifier: Apache-2.0 */
/* In-memory running aggregates of the stored reports, one per campaign and metric, plus the
 * reject counters by reason. The store adds to them after each commit (and rebuilds them from
 * the database at start-up), so the estimate endpoint never touches SQLite and always sees
 * exactly the committed reports, each once. Thread-safe: one mutex. */
#ifndef DPM_COLLECTOR_AGGREGATE_H
#define DPM_COLLECTOR_AGGREGATE_H

#include <pthread.h>
#include <stdint.h>

#include "collector/batch.h"
#include "collector/campaigns.h"
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

/* One campaign's state (a consistent copy of it is what the estimate is computed from). */
typedef struct {
    uint64_t reports; /* stored reports */
    uint32_t nmetrics;
    dpm_disp_agg_t agg[DPM_CAMPAIGN_MAX_METRICS];
    dpm_roc_agg_t roc; /* roc_hist campaigns: the summed histograms */
    coll_reasons_t rejects;
} coll_campaign_state_t;

typedef struct {
    pthread_mutex_t lock;
    const coll_campaigns_t *campaigns;
    coll_campaign_state_t state[COLL_MAX_CAMPAIGNS];
    coll_reasons_t unattributed; /* rejects with no known campaign: malformed, unknown id */
    uint64_t total_reports;
    uint64_t lost_reports; /* Batch.lost_reports summed over the committed batches */
} coll_aggregates_t;

/* Empty aggregates for every campaign. 0, or -1 if a campaign's estimator does not initialize. */
int coll_agg_init(coll_aggregates_t *a, const coll_campaigns_t *cs);
void coll_agg_free(coll_aggregates_t *a);

/* Add one stored report of campaign index ci (group < d, nvalues values). The caller holds
 * the lock (coll_agg_lock) so that a whole commit appears at once. -1 if the report does not
 * fit the campaign (a damaged database row): it is then not counted. */
int coll_agg_add_locked(coll_aggregates_t *a, int ci, uint32_t group, uint32_t nvalues,
                        const int32_t *values);

/* Count `count` rejects of `reason` for campaign id (0 or an unknown id: unattributed). */
/* Add one accepted, decoded report (checked against its campaign): the tuple path above, or
 * for roc_hist its histogram (dpm_roc_agg_add). 0 or -1. */
int coll_agg_add_report_locked(coll_aggregates_t *a, int ci, const dpm_report_t *rep);

/* The same for a report of a committed batch (a roc_hist body is decoded from its raw bytes). */
int coll_agg_add_batch_report_locked(coll_aggregates_t *a, const coll_report_t *r);

void coll_agg_count_reject_locked(coll_aggregates_t *a, uint32_t campaign_id, const char *reason,
                                  uint64_t count);

/* Reports devices said they lost (Batch.lost_reports). */
void coll_agg_count_lost_locked(coll_aggregates_t *a, uint64_t count);
uint64_t coll_agg_lost_reports(coll_aggregates_t *a);

void coll_agg_lock(coll_aggregates_t *a);
void coll_agg_unlock(coll_aggregates_t *a);

/* A consistent copy of campaign index ci's state and of the unattributed rejects. */
void coll_agg_snapshot(coll_aggregates_t *a, int ci, coll_campaign_state_t *out,
                       coll_reasons_t *unattributed, uint64_t *total_reports);

#endif /* DPM_COLLECTOR_AGGREGATE_H */
