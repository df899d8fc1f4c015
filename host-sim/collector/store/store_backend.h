/* SPDX-License-Identifier: Apache-2.0 */
/* The interface between the store's generic part (store.c: writer thread, group commit,
 * retries, health, the sums of each transaction) and a database (store_sqlite.c,
 * store_pg.c). Internal to the collector.
 *
 * A backend keeps two connections: the writer's (every call but the read_* and scan_* ones,
 * only ever from one thread at a time) and a reader's for the estimates (read_*: the backend
 * serializes them itself). Every call returns 0 or -1; after -1, error() classifies the
 * failure and describes it. */
#ifndef DPM_COLLECTOR_STORE_BACKEND_H
#define DPM_COLLECTOR_STORE_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "collector/ingest/aggregate.h"
#include "collector/ingest/batch.h"
#include "collector/ingest/campaigns.h"
#include "collector/ingest/counters.h"
#include "collector/store/store_options.h"

typedef enum {
    COLL_BE_FAIL = 0, /* the transaction failed: nothing of it is stored */
    COLL_BE_RETRY,    /* aborted for a conflict with another writer: run it again */
    COLL_BE_CORRUPT   /* the database is damaged */
} coll_be_error_t;

/* How a backend is opened. */
typedef enum {
    COLL_BE_SERVE = 0, /* a collector: migrate, then writer + reader */
    COLL_BE_ADMIN,     /* a maintenance command: migrate, writer only, no exclusive lock */
    COLL_BE_READ       /* a reader of a live or saved store (coll_store_open_reader): the reader
                        * connection only, read-only, no lock, no migration: the schema must be
                        * this collector's */
} coll_be_mode_t;

/* Over-quota reports of one batch (found by the generic store). */
#define COLL_OVER_LISTED 64 /* over-quota reports named one by one; the rest are counted */
typedef struct {
    size_t idx[COLL_OVER_LISTED];
    size_t n; /* may exceed COLL_OVER_LISTED */
} coll_over_t;

/* One quota counter to change: (device, campaign, period) += delta; the backend sets after. */
typedef struct {
    const char *device;
    uint32_t campaign_id, period;
    int64_t delta;
    int64_t after;
} coll_quota_t;

/* A stored report as scan_reports hands it over (raw and values valid during the call). */
typedef void (*coll_report_cb)(void *ctx, const coll_report_t *r);
/* A stored sum row (summed over shards) as scan_sums hands it over: kind 0 reports (n),
 * 1 tuple (a = metric, b = group, n, s, ss), 2 roc_hist (a = bin, s = pos, n = neg), 3 vector
 * sums of dpauc / ustat_* (a = idx, s; agg_auc.h). */
typedef void (*coll_sum_cb)(void *ctx, int kind, uint32_t campaign_id, uint32_t period, uint32_t a,
                            uint32_t b, int64_t n, int64_t s, double ss);

typedef struct coll_backend coll_backend_t;

typedef struct {
    const char *name;
    /* open / create / migrate; *from_version is what the database had (-1: new). */
    int (*open)(coll_backend_t **out, const char *target, coll_be_mode_t mode,
                const coll_store_options_t *o, int *from_version, char *err, size_t cap);
    int schema_version;
    /* record new campaigns, refuse changed fingerprints, set starts from first_seen */
    int (*check_campaigns)(coll_backend_t *b, coll_campaigns_t *cs, int64_t now, char *err,
                           size_t cap);
    int (*begin)(coll_backend_t *b);
    /* the reports of a batch without rejects: store the new ones (received at now, sent by
     * batch->device), set every report's is_new and the batch's accepted and duplicates */
    int (*insert_batch)(coll_backend_t *b, coll_batch_t *batch, int64_t now);
    /* delete the reports a batch stored in this transaction (its is_new ones: over quota) */
    int (*undo_batch)(coll_backend_t *b, const coll_batch_t *batch);
    /* add q[i].delta to each quota counter (distinct keys, sorted by device, campaign,
     * period: two writers then lock them in one order) and set q[i].after */
    int (*charge_quotas)(coll_backend_t *b, coll_quota_t *q, size_t n);
    int (*count_rejects)(coll_backend_t *b, const coll_reject_count_t *counts, size_t n);
    int (*count_lost)(coll_backend_t *b, const char *device, uint64_t n);
    int (*add_sums)(coll_backend_t *b, const coll_deltas_t *d);
    int (*commit)(coll_backend_t *b);
    void (*rollback)(coll_backend_t *b);
    coll_be_error_t (*error)(coll_backend_t *b, char *msg, size_t cap);
    /* reader connection */
    int (*read_sums)(coll_backend_t *b, uint32_t campaign_id, uint32_t from, uint32_t to,
                     coll_campaign_state_t *st, char *err, size_t cap);
    int (*read_totals)(coll_backend_t *b, const coll_campaigns_t *cs, coll_totals_t *t, char *err,
                       size_t cap);
    /* the stored fingerprint of a campaign: 1 and its mechanism, eps_q16, params_hash and
     * first_seen (-1 if none), 0 if the database never saw it, -1 on a failure */
    int (*read_campaign)(coll_backend_t *b, uint32_t campaign_id, int64_t fingerprint[3],
                         int64_t *first_seen, char *err, size_t cap);
    /* maintenance (writer connection, ADMIN mode) */
    int (*scan_reports)(coll_backend_t *b, coll_report_cb cb, void *ctx, char *err, size_t cap);
    int (*scan_sums)(coll_backend_t *b, coll_sum_cb cb, void *ctx, char *err, size_t cap);
    /* drop periods < cutoff of a campaign (inside begin/commit); *reports dropped */
    int (*drop_periods)(coll_backend_t *b, uint32_t campaign_id, uint32_t cutoff, uint64_t *reports,
                        uint64_t *periods);
    /* drop the FedAUC uploads and phases (fedauc_service.c's tables, if they exist) of periods
     * < cutoff of a campaign (inside begin/commit); *uploads dropped */
    int (*drop_fedauc)(coll_backend_t *b, uint32_t campaign_id, uint32_t cutoff, uint64_t *uploads);
    /* first_seen of a stored campaign, or -1 if none */
    int64_t (*first_seen)(coll_backend_t *b, uint32_t campaign_id);
    void (*close)(coll_backend_t *b);
    /* backup into a new file `to`, restore from a backup file (store.h); target as for open */
    int (*backup)(const char *target, const char *to, char *err, size_t cap);
    int (*restore)(const char *from, const char *target, char *err, size_t cap);
} coll_backend_ops_t;

extern const coll_backend_ops_t coll_sqlite_backend;
extern const coll_backend_ops_t coll_pg_backend;

/* The quota a batch's report counts against: the credential's own (relay) or the campaign's. */
static inline uint32_t coll_quota_limit(const coll_campaigns_t *cs, const coll_batch_t *b,
                                        const coll_report_t *r)
{
    return b->quota_override != 0 ? b->quota_override : cs->c[r->campaign_index].opts.device_quota;
}

static inline int coll_has_device(const coll_batch_t *b)
{
    return b->device != NULL && b->device[0] != '\0';
}

/* The order of report keys: by campaign, then by report id (memcmp). */
static inline int coll_report_key_cmp(uint32_t campaign_a, const uint8_t *id_a, uint32_t campaign_b,
                                      const uint8_t *id_b)
{
    if (campaign_a != campaign_b) {
        return campaign_a < campaign_b ? -1 : 1;
    }
    return memcmp(id_a, id_b, DPM_REPORT_ID_BYTES);
}

/* The shard of the options ("default" when none is given). */
static inline const char *coll_shard_of(const coll_store_options_t *o)
{
    return o != NULL && o->shard != NULL && o->shard[0] != '\0' ? o->shard : "default";
}

#endif /* DPM_COLLECTOR_STORE_BACKEND_H */
