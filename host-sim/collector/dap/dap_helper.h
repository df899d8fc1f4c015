/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP helper's two endpoints as functions over bytes (issue 31 item 1): what
 * `dpm-collector --role helper` will answer once its HTTP routes exist. Each takes the
 * request's body and writes the response's, with the HTTP status, the draft's problem type
 * and the created resource's id; storage is dap_store.h, the per-report steps
 * aggregator/job.h.
 *
 *   POST {helper}/tasks/{task-id}/aggregation_jobs    AggregationJobInitReq -> AggregationJobResp
 *   POST {helper}/tasks/{task-id}/aggregate_shares    AggregateShareReq -> AggregateShare
 *
 * Resource creation is idempotent as the draft asks ("Resource Creation"): a resource's id is
 * the first 16 bytes of SHA-256 of its request, so a retried request names the same job or
 * share. A retried aggregation job is answered as the first time (each report's outcome kept
 * by its commit, the verifier messages recomputed: Prio3 is deterministic) and counts nothing
 * twice; a retried aggregate-share request gets the kept release, its noise drawn once.
 * Choices where the draft leaves them (Janus's were not available to compare here): one
 * verification key per task, id 0 (another id is invalidMessage); the jobs are handled
 * synchronously (no Retry-After polling); time-interval tasks only. */
#ifndef DPM_COLLECTOR_DAP_HELPER_H
#define DPM_COLLECTOR_DAP_HELPER_H

#include <stddef.h>
#include <stdint.h>

#include "aggregator/job.h"
#include "collector/dap/dap_store.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/noise.h"

/* One aggregator of a task, the helper or the leader: the two roles hold the same things (only
 * role.role differs), so they are one type and one init; dap_leader_t is this type too. */
typedef struct {
    const dpm_dap_task_t *task;  /* decoded, with its VDAF; not owned */
    agg_role_t role;             /* this role's HPKE key and the verification key */
    dap_store_t *store;          /* not owned */
    dpm_hpke_config_t collector; /* whom the aggregate shares are sealed to */
    uint64_t sensitivity;        /* L1 sensitivity of one privacy unit (the mechanism's) */
    dpm_rand_t *rand;            /* this role's CSPRNG: noise, HPKE ephemeral keys, job ids */
    uint64_t skew_s;             /* a report up to this far in the future is not too early */
    /* When other threads share the store and rand (dap_service.c: its job drivers and request
     * threads), lock(lock_ctx, 1) and lock(lock_ctx, 0) bracket every store call of an
     * aggregation job (leader and helper), so that its per-report work (HPKE, the proof) runs
     * outside the lock, in parallel, each job with an agg_role_t of its own. NULL: one thread. */
    void (*lock)(void *lock_ctx, int on);
    void *lock_ctx;
} dap_aggregator_t;

typedef dap_aggregator_t dap_helper_t;

/* The clock skew both roles allow by default: a few minutes, as the draft suggests. */
#define DAP_DEFAULT_SKEW_S 300u

/* What an endpoint answers besides its body. */
typedef struct {
    int status;          /* HTTP: 200, 400 (the request), 500 (this server) */
    const char *problem; /* on 400: the draft's error type ("invalidMessage", ...) */
    char detail[192];    /* what went wrong, for the problem document and the log */
    uint8_t id[16];      /* on 200: the created resource's id (its Location) */
} dap_answer_t;

/* Set an answer: status, problem type (or NULL) and a printf-style detail. Both roles'. */
void dap_answer_set(dap_answer_t *a, int status, const char *problem, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A created resource's identity: SHA-256 of its request body into digest, its first 16
 * bytes into a->id (the draft's idempotent resource creation). 0, or -1 with a 500 set. */
int dap_answer_id(dap_answer_t *a, const uint8_t *body, size_t len, uint8_t digest[32]);

/* Adds one encoded aggregate share into another (ctx: the task's dpm_prio3_t): the store's
 * merge function for a Prio3 task. */
int dap_vdaf_merge(void *ctx, uint8_t *acc, const uint8_t *add, size_t bytes);

/* role: DPM_DAP_ROLE_LEADER or DPM_DAP_ROLE_HELPER. 0, or -1 (out of memory, a task without a
 * VDAF, a collector configuration the SDK refuses). */
int dap_aggregator_init(dap_aggregator_t *a, uint8_t role, const dpm_dap_task_t *t,
                        const dpm_dap_hpke_key_t *key,
                        const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES], dap_store_t *store,
                        const dpm_hpke_config_t *collector, uint64_t sensitivity, dpm_rand_t *rand);
void dap_aggregator_free(dap_aggregator_t *a);
/* a->lock(a->lock_ctx, on) when a->lock is set: take (on = 1) or give back (0) the store. */
void dap_aggregator_lock(const dap_aggregator_t *a, int on);

/* fn(ctx, lo, hi) over [0, n) cut into consecutive chunks, one per online CPU (at most
 * DAP_MAX_WORKERS, each of at least DAP_MIN_CHUNK items), run on threads at once (the first on
 * the caller's; one whose thread cannot start runs on the caller's too): an aggregation job's
 * reports verified on every core. fn must write only its chunk's items. 0 or the first non-zero
 * return of fn. */
#define DAP_MAX_WORKERS 8u
#define DAP_MIN_CHUNK 8u
int dap_aggregator_parallel(size_t n, int (*fn)(void *ctx, size_t lo, size_t hi), void *ctx);

/* The collection of the batch iv of a's task, its buckets merged by the task's VDAF and the
 * batch released by release(release_ctx): c zeroed, then what both roles ask
 * dap_store_collect for (the caller adds c->req and its own options). */
void dap_aggregator_collect_init(const dap_aggregator_t *a, const dap_interval_t *iv,
                                 dap_store_release_fn release, void *release_ctx,
                                 dap_store_collect_t *c);

/* The helper's names for the two (its callers' words; the same functions). */
#define dap_helper_init(h, ...) dap_aggregator_init((h), DPM_DAP_ROLE_HELPER, __VA_ARGS__)
#define dap_helper_free(h) dap_aggregator_free(h)

/* An AggregationJobInitReq body[0, len) at now_s -> its AggregationJobResp in out[0, *out_len)
 * (cap bytes). Every report's output share is committed to its bucket once, or the report is
 * rejected with its ReportError (its own failure, report_replayed, batch_collected,
 * report_too_early, task_not_started, task_expired); 400 invalidMessage for a malformed request
 * or one that carries a report id twice,
 * invalidAggregationParameter for a non-empty one, unsupportedExtension for any extension. */
void dap_helper_aggregation_job(dap_helper_t *h, const uint8_t *body, size_t len, uint64_t now_s,
                                uint8_t *out, size_t cap, size_t *out_len, dap_answer_t *a);

/* An AggregateShareReq body[0, len) -> the AggregateShare in out[0, *out_len): this helper's
 * sum over the batch, its central noise added (once), sealed to the collector for that
 * collection request. 400: invalidMessage (batch modes not the task's), batchInvalid (not a
 * time interval of the task inside the collector's query), unsupportedExtension,
 * invalidBatchSize (below the task's minimum), batchOverlap (another request collected part
 * of it), batchMismatch (the leader's report count or checksum is not this helper's). */
void dap_helper_aggregate_share(dap_helper_t *h, const uint8_t *body, size_t len, uint8_t *out,
                                size_t cap, size_t *out_len, dap_answer_t *a);

#endif /* DPM_COLLECTOR_DAP_HELPER_H */
