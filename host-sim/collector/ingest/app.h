/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's application context: what every request handler (request.c) and report
 * (metrics.c) reads. Its own header so that those two do not include each other. */
#ifndef DPM_COLLECTOR_APP_H
#define DPM_COLLECTOR_APP_H

#include <stddef.h>
#include <stdint.h>

#include "collector/ingest/aggregate.h"
#include "collector/ingest/auth.h"
#include "collector/ingest/batch.h"
#include "collector/ingest/campaigns.h"
#include "collector/ingest/counters.h"
#include "collector/ingest/limits.h"

/* Where validated batches go and where the sums come from: the store in the server, an
 * in-memory stand-in in the fuzzer. commit returns 0 when the batch (its reports if it has no
 * rejects, and its reject counts) is durable; health (may be NULL) 0 when storage is healthy,
 * else -1 and a reason; read fills the sums of campaign index ci over periods [from, to] (out
 * may be NULL) and the totals over every campaign (may be NULL): 0, or -1 and a reason. */
typedef struct {
    int (*commit)(void *ctx, coll_batch_t *b);
    int (*health)(void *ctx, char *reason, size_t cap);
    int (*read)(void *ctx, int ci, uint32_t from, uint32_t to, coll_campaign_state_t *out,
                coll_totals_t *totals, char *err, size_t cap);
    void *ctx;
    /* a reload's campaign table (the same campaigns in the same order, the last `added` new):
     * the new ones registered, then the table served; 0, or -1 and a reason with nothing
     * changed (NULL: a reload keeps the table the sink started with and cannot add) */
    int (*set_campaigns)(void *ctx, coll_campaigns_t *cs, size_t added, char *err, size_t cap);
} coll_sink_t;

typedef struct {
    const coll_campaigns_t *campaigns;
    coll_sink_t sink;
    size_t max_body;           /* largest request body read, bytes */
    const coll_auth_t *auth;   /* bearer tokens (NULL: none) */
    int allow_anonymous;       /* POST /v1/reports without a credential (unsafe) */
    int public_estimates;      /* estimates and /metrics without the operator role (unsafe) */
    coll_limits_t *limits;     /* rate limits, memory budget, counters (NULL: none) */
    coll_counters_t *counters; /* this process's counters for /metrics (NULL: none) */
    /* FedAUC phases (fedauc_service.h; NULL: none) */
    struct coll_fedauc *fedauc;
    struct coll_revoked *revoked; /* revoked certificates and identities (NULL: none) */
    struct dap_service *dap;      /* --role leader|helper (dap_service.h; NULL: neither) */
} coll_app_t;

/* campaigns and auth as in force now: SIGHUP may replace them (reload.h), so they are read
 * through these. */
static inline const coll_campaigns_t *coll_app_campaigns(const coll_app_t *app)
{
    return __atomic_load_n(&app->campaigns, __ATOMIC_ACQUIRE);
}
static inline const coll_auth_t *coll_app_auth(const coll_app_t *app)
{
    return __atomic_load_n(&app->auth, __ATOMIC_ACQUIRE);
}

#endif /* DPM_COLLECTOR_APP_H */
