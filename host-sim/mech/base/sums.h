/* SPDX-License-Identifier: Apache-2.0 */
/* One campaign's sums over a range of periods, as an estimate reads them (coll_campaign_state_t):
 * per metric and group the report count, value sum and sum of squares (dpm_disp_agg_t), for
 * roc_hist the per-bin histogram sums (dpm_roc_agg_t), for the AUC family and per-group roc_hist
 * their vector sums (agg_auc.h), for FedAUC its rows (fedauc_sums.h); the report count and the
 * rejects by reason. The store fills it from its stored sums (coll_state_add_*); each mechanism
 * module sets up its part (host_mech.h: state_init).
 *
 * Sums are exact integers except the tuple sums of squares, which are doubles as in
 * dpm_disp_agg_t (they only enter the plug-in second moment of the variance). */
#ifndef DPM_MECH_SUMS_H
#define DPM_MECH_SUMS_H

#include <stdint.h>

#include "estimate/disparity.h"
#include "estimate/roc.h"
#include "mech/base/agg_auc.h"
#include "mech/base/campaign.h"
#include "mech/base/fedauc_phase.h"

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

/* The state_init of the mechanisms whose sums are vector sums (agg_auc.h, agg_rocg.h). */
int coll_state_init_vec(coll_campaign_state_t *st, const coll_campaign_t *c);

/* ---- what a transaction adds ------------------------------------------------------------
 * coll_deltas_t: what one transaction adds to the stored sums, per (campaign, period): built
 * from the reports it stores (collector/ingest/aggregate.h: coll_deltas_add, each module's
 * delta_add) and written by the store in the same transaction, so the stored sums are always
 * exactly the sums of the stored reports. */

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

/* The entry of (campaign_id, period), made if new; NULL if memory runs out or the entry holds
 * another layout (roc: 0 tuple rows, 1 roc_hist bins, 2 vector sums; width: rows or bins). */
coll_delta_t *coll_delta_for(coll_deltas_t *ds, uint32_t campaign_id, uint32_t period, int roc,
                             uint32_t width);

/* A report stored with its values in columns (tuple): rows (m, group) += (1, v_m, v_m^2).
 * 0, or -1 (memory, a shape outside the layout, a sum that would leave int64: checked, the
 * report then adds nothing). */
int coll_deltas_add_values(coll_deltas_t *ds, uint32_t campaign_id, uint32_t period, uint32_t group,
                           uint32_t nvalues, const int32_t *value);

void coll_deltas_clear(coll_deltas_t *ds);
void coll_deltas_free(coll_deltas_t *ds);

/* Add what ds holds for campaign_id (every period) to st, as the store adds its stored sums:
 * the reports, tuple rows, roc_hist bins and vector sums (rows outside st count in
 * rows_skipped). dpm-sim's network mode sums the reports it sent so. */
void coll_state_add_deltas(coll_campaign_state_t *st, const coll_deltas_t *ds,
                           uint32_t campaign_id);

/* *acc += x, or -1 (and *acc unchanged) if the sum leaves int64: checked, never wrapped. */
int coll_add_i64(int64_t *acc, int64_t x);

#endif /* DPM_MECH_SUMS_H */
