/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP leader's work as functions over bytes (issue 31 item 1): what
 * `dpm-collector --role leader` will do once its HTTP routes and job driver exist. Storage is
 * dap_store.h, the per-report steps aggregator/job.h, the helper is reached through a function
 * the caller gives (HTTPS with the aggregators' bearer token, or a test's direct call).
 *
 *   POST {leader}/tasks/{task-id}/reports            UploadRequest -> UploadErrors (or empty)
 *   an aggregation job                               stored reports -> AggregationJobInitReq,
 *                                                    the helper's AggregationJobResp -> commit
 *   POST {leader}/tasks/{task-id}/collection_jobs    CollectionJobReq -> CollectionJobResp
 *
 * Exactly once across crashes: a job is claimed in the store before its request is built; a
 * job whose leader died (or whose helper did not answer) is stale after stale_s and is driven
 * again with the same reports in the same order, so its request is byte-identical (Prio3's
 * verification is deterministic) and the helper, which names a job by its request's hash,
 * answers it from its first commit. A collection draws the leader's noise once and keeps the
 * whole response for retries (dap_store_collect). Choices where the draft leaves them: an
 * uploaded report id seen before is answered report_replayed (the draft's MAY), also for a
 * client's identical retry; synchronous jobs and collections (no polling). */
#ifndef DPM_COLLECTOR_DAP_LEADER_H
#define DPM_COLLECTOR_DAP_LEADER_H

#include <stddef.h>
#include <stdint.h>

#include "aggregator/job.h"
#include "collector/dap/dap_helper.h"
#include "collector/dap/dap_store.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/noise.h"

/* The leader is a dap_aggregator_t (dap_helper.h) with the leader's role. */
typedef dap_aggregator_t dap_leader_t;

/* The leader's names for dap_aggregator_init and _free (its callers' words; the same functions). */
#define dap_leader_init(l, ...) dap_aggregator_init((l), DPM_DAP_ROLE_LEADER, __VA_ARGS__)
#define dap_leader_free(l) dap_aggregator_free(l)

/* An UploadRequest body[0, len) at now_s: each report checked (config id, task interval,
 * clock) and stored once. 200 with out[0, *out_len) the UploadErrors of the reports not kept
 * (empty when all were), in request order; 400 invalidMessage when the request cannot be
 * framed (nothing kept). */
void dap_leader_upload(dap_leader_t *l, const uint8_t *body, size_t len, uint64_t now_s,
                       uint8_t *out, size_t cap, size_t *out_len, dap_answer_t *a);

/* One aggregation job in flight. */
typedef struct {
    uint8_t id[DAP_STORE_JOB_ID_BYTES]; /* the leader's store's */
    size_t n;                           /* reports in the job */
    uint8_t *req;                       /* the AggregationJobInitReq for the helper, */
    size_t req_len, req_cap;            /* when `sent` > 0 */
    size_t sent;                        /* reports in req */
    uint8_t (*ids)[DPM_DAP_REPORT_ID_BYTES];
    uint64_t *buckets;
    uint8_t *errors; /* per report: the leader's own rejection (0: sent) */
    uint8_t *states; /* per report: its verification state (role's state_bytes) */
    size_t cap;      /* reports room */
    size_t state_bytes;
    int failed; /* building the job failed (out of memory) */
} dap_leader_job_t;

/* Start a job: a stale one of this task (claimed before now_s - stale_s and not committed:
 * the same reports, the same request), else a new one of at most max stored reports. 1 with
 * *j ready (POST j->req to the helper when j->sent > 0, then dap_leader_job_finish), 0 nothing
 * to do, -1 (why says). */
int dap_leader_job_start(dap_leader_t *l, uint32_t max, uint64_t now_s, uint64_t stale_s,
                         dap_leader_job_t *j, char *why, size_t whycap);

/* The helper's AggregationJobResp resp[0, len) (NULL when nothing was sent): each report
 * finished or rejected, and the job committed once. 0; -1 when the response is malformed,
 * names other reports, or continues a report with a message that does not verify here (the
 * draft abandons the job: why says; nothing committed, the job goes stale and is sent again). */
int dap_leader_job_finish(dap_leader_t *l, dap_leader_job_t *j, const uint8_t *resp, size_t len,
                          char *why, size_t whycap);
void dap_leader_job_free(dap_leader_job_t *j);

/* How the leader reaches the helper's aggregate_shares endpoint: the AggregateShareReq
 * req[0, len) -> the helper's AggregateShare in out[0, *out_len). 0, or -1 (why: unreachable,
 * or its problem type and detail). */
typedef int (*dap_leader_helper_fn)(void *ctx, const uint8_t *req, size_t len, uint8_t *out,
                                    size_t cap, size_t *out_len, char *why, size_t whycap);

/* A CollectionJobReq body[0, len) -> the CollectionJobResp in out[0, *out_len): the batch's
 * report count, its interval, the leader's share (its noise added once) and the helper's,
 * each sealed to the collector. 202 while reports of the batch are uploaded but not yet
 * aggregated (collecting then would lose them: send the request again later); 400:
 * invalidMessage, batchInvalid, invalidBatchSize, batchOverlap, invalidAggregationParameter;
 * 502 when the helper did not give its share (nothing marked here; its reason is in the
 * detail). The same request again gets the same bytes.
 * The collection's transaction (dap_store_collect) holds the store's write lock while the
 * helper is asked: the caller's helper function must time out well inside the database's
 * busy timeout (10 s), or uploads and commits wait that long. */
void dap_leader_collection_job(dap_leader_t *l, const uint8_t *body, size_t len,
                               dap_leader_helper_fn helper, void *helper_ctx, uint8_t *out,
                               size_t cap, size_t *out_len, dap_answer_t *a);

#endif /* DPM_COLLECTOR_DAP_LEADER_H */
