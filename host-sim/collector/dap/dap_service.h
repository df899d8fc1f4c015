/* SPDX-License-Identifier: Apache-2.0 */
/* `dpm-collector --role leader|helper`: the DAP aggregator at run time. Its tasks are the
 * campaigns file's [dap_task] blocks (dap_tasks.h), its storage dap_store.h on the collector's
 * --db (SQLite, or PostgreSQL shared by several leaders), its per-task work dap_leader.h or
 * dap_helper.h. It answers the draft's routes under /dap (so a task's aggregator URL is
 * https://HOST:PORT/dap):
 *
 *   GET  /dap/hpke_config                          both roles: this aggregator's HpkeConfigList
 *   POST /dap/tasks/{task-id}/reports              leader: UploadRequest (no credential: DAP
 *                                                  clients are anonymous)
 *   POST /dap/tasks/{task-id}/collection_jobs      leader: CollectionJobReq (collector role)
 *   POST /dap/tasks/{task-id}/aggregation_jobs     helper: AggregationJobInitReq (aggregator role)
 *   POST /dap/tasks/{task-id}/aggregate_shares     helper: AggregateShareReq (aggregator role)
 *
 * A leader also runs the job drivers (`drivers` threads, each claiming its own jobs): each takes
 * the stored reports of each task in jobs of job_size, posts each to the helper over HTTPS with
 * the aggregators' bearer token, and commits the answer; a helper that is down, answers an error or
 * garbage leaves the job uncommitted, and it is sent again, byte for byte, once stale (stale_s),
 * with the wait between failed rounds doubling up to 30 s. Collections ask the helper the same way.
 *
 * Subset of the draft (also in the collector's README): time-interval tasks, Prio3 count, sum,
 * sumvec and histogram; answers are synchronous (200 with the message; a collection whose
 * reports are not yet aggregated is 202: send it again), so no resource is polled and no
 * Location is given; one verification key and one HPKE key per aggregator; tasks come from
 * the campaigns file (no taskprov). Thread-safe: one mutex around the store, released while
 * the helper answers (the job driver's calls, and a collection's, made between its two
 * transactions: dap_store.h release_outside), so uploads never wait on the helper. A
 * collection the helper fails is 502 with its batch held for that request (reports into it
 * are batch_collected): the same request again completes it, as Janus's collection jobs do. */
#ifndef DPM_COLLECTOR_DAP_SERVICE_H
#define DPM_COLLECTOR_DAP_SERVICE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { DAP_ROLE_NONE = 0, DAP_ROLE_LEADER = 1, DAP_ROLE_HELPER = 2 } dap_role_t;

/* How the leader reaches the helper (ops/dap_peer.h: HTTPS with the aggregators' bearer
 * token; a test's direct call): POST body[0, len) of content_type to url with the header
 * "DPM-Task-Digest: task_digest" (dap_tasks.h); 0 with the HTTP *status and the answer in
 * out[0, *out_len) (cap bytes), or -1 with why (unreachable, TLS, timeout, an answer too
 * large). */
typedef int (*dap_peer_post_fn)(void *ctx, const char *url, const char *content_type,
                                const char *task_digest, const uint8_t *body, size_t len,
                                uint8_t *out, size_t cap, size_t *out_len, int *status, char *why,
                                size_t whycap);

typedef struct {
    dap_role_t role;
    const char *db_url;    /* the collector's --db */
    const char *campaigns; /* the campaigns file: its [dap_task] blocks */
    const char *hpke_key;  /* --dap-hpke-key: this aggregator's key file (dap_tasks.h) */
    dap_peer_post_fn post; /* leader: how to reach the helper (required) */
    void *post_ctx;
    uint32_t job_size;   /* reports per aggregation job (default 100) */
    uint32_t poll_ms;    /* the job driver's pause when there is no work (default 200) */
    uint32_t stale_s;    /* an unanswered job is sent again after this (default 60) */
    uint32_t timeout_ms; /* each request to the helper (default 5000) */
    uint32_t drivers;    /* leader: job driver threads (default DAP_DEFAULT_DRIVERS, at most
                          * DAP_MAX_DRIVERS) */
} dap_service_options_t;

#define DAP_DEFAULT_DRIVERS 2u
#define DAP_MAX_DRIVERS 16u

typedef struct dap_service dap_service_t;

/* Load the tasks and the key, open the store, and set up each task's role. Refuses: a file
 * without [dap_task], a task whose HpkeConfig for this role is not this key's, a leader
 * without a way to reach the helper. 0, or -1 with a message in err. */
int dap_service_open(dap_service_t **out, const dap_service_options_t *o, char *err, size_t cap);

/* Start the leader's job driver (a helper has none: 0). 0, or -1 with err. */
int dap_service_start(dap_service_t *s, char *err, size_t cap);

/* Stop the job driver (it finishes the job in hand) and free everything. NULL is fine. */
void dap_service_close(dap_service_t *s);

/* The number of tasks served (for the start log). */
size_t dap_service_tasks(const dap_service_t *s);

/* The credential role (auth.h: COLL_ROLE_AGGREGATOR or COLL_ROLE_COLLECTOR) a request to this
 * path with this method needs, 0 for none (hpke_config, uploads), -1 for a path that is not a
 * DAP route taking a body (the caller refuses a body there). s may be NULL (not an aggregator:
 * -1). */
int dap_service_route(const dap_service_t *s, int post, const char *path);

/* An answer (the caller frees body). */
typedef struct {
    int status;
    const char *content_type;
    uint8_t *body;
    size_t len;
} dap_http_answer_t;

/* Answer a request on a /dap/ path whose credential the caller has checked against
 * dap_service_route. task_digest: the request's DPM-Task-Digest (NULL: none sent); a helper
 * refuses a job or share request whose digest is not its own (400, naming both). now_s: the
 * wall clock. Errors are the draft's problem documents
 * (application/problem+json, type urn:ietf:params:ppm:dap:error:NAME, with a detail that says
 * what to fix). s NULL: 404 (this collector is no aggregator). */
void dap_service_request(dap_service_t *s, int post, const char *path, const char *content_type,
                         const char *task_digest, const uint8_t *body, size_t len, uint64_t now_s,
                         dap_http_answer_t *a);

#endif /* DPM_COLLECTOR_DAP_SERVICE_H */
