/* SPDX-License-Identifier: Apache-2.0 */
/* One DAP aggregator's durable state (issue 31 item 1), on SQLite or PostgreSQL through
 * collector/store/sqldb.h: what makes "exactly once per report ID" hold across retries,
 * restarts and kill -9. Each aggregator has its own database (a leader's may be shared by
 * several leader processes on one PostgreSQL); tasks are told apart by their 32-byte id.
 *
 *   reports      the leader's uploaded reports, each id once (a second upload is a replay);
 *                stored -> in a job -> done
 *   jobs         an aggregation job: its reports (leader) or the digest of its request
 *                (helper), and, once committed, each report's final ReportError, so that a
 *                retried job is answered the same and counted once
 *   aggregated   every report id whose output share was added, once per aggregator: a report
 *                in a second job is rejected as report_replayed
 *   buckets      a batch bucket (a time_precision-aligned interval, named by its start in the
 *                report's time units): the sum of its output shares (the VDAF's aggregate
 *                share, added by the caller's merge function), its report count, its checksum
 *                (XOR of SHA-256 of the report ids) and whether it was collected
 *   rejects      reports counted by ReportError, never aggregated
 *
 *   releases     what each collection released (its noise drawn once), kept under the
 *                request's identity: a retried collection gets the same bytes
 *
 * What it does not do: decode, decrypt or verify (aggregator/job.h does, before commit), draw
 * the central noise (the caller's release function), or delete old reports (no garbage
 * collection yet).
 * Every call is one transaction (a collection with release_outside: two, each whole): either
 * all of it is durable, or none of it. On PostgreSQL, several leaders' uploads and commits of
 * a task run side by side (a bucket's row is locked while its sum is added to); a collection
 * waits for them and they for it, so a collected batch holds every report committed into it
 * and gets none after. Not thread-safe: one connection per thread. */
#ifndef DPM_COLLECTOR_DAP_STORE_H
#define DPM_COLLECTOR_DAP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/dap.h"

/* The draft's AggregationJobID: 16 bytes (base64url in the request's path). */
#define DAP_STORE_JOB_ID_BYTES 16u

typedef struct dap_store dap_store_t;

typedef enum {
    DAP_STORE_OK = 0,
    DAP_STORE_FAIL = -1,     /* the database: dap_store_error(); nothing changed */
    DAP_STORE_REPLAY = 1,    /* put_report: this id is stored already (report_replayed) */
    DAP_STORE_COLLECTED = 2, /* put_report / collect: its bucket was collected already */
    DAP_STORE_ALREADY = 3,   /* commit: this job was committed before: *errors are its own */
    DAP_STORE_CONFLICT = 4,  /* commit: this job id was committed for another request */
    DAP_STORE_TOO_SMALL = 5, /* collect: fewer reports than the minimum batch size */
    DAP_STORE_REFUSED = 6,   /* collect: the caller's release refused the batch */
    DAP_STORE_PENDING = 7    /* collect: reports of the batch still await aggregation */
} dap_store_rc_t;

/* url: a collector --db value (sqlite:PATH, PATH, postgresql://...). Creates the tables if
 * they are not there. 0, or -1 with a message in err. */
int dap_store_open(dap_store_t **out, const char *url, char *err, size_t cap);
void dap_store_close(dap_store_t *s);
const char *dap_store_error(const dap_store_t *s);

/* Leader: keep one uploaded report (the Report's bytes) with its id, time and bucket.
 * DAP_STORE_OK, DAP_STORE_REPLAY (stored before, nothing changed), DAP_STORE_COLLECTED
 * (its bucket was collected: the draft's batch_collected), DAP_STORE_FAIL. */
int dap_store_put_report(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                         const uint8_t id[DPM_DAP_REPORT_ID_BYTES], uint64_t time, uint64_t bucket,
                         const uint8_t *report, size_t len);

/* One report of a job, valid during the callback. */
typedef void (*dap_store_report_fn)(void *ctx, const uint8_t id[DPM_DAP_REPORT_ID_BYTES],
                                    uint64_t bucket, const uint8_t *report, size_t len);

/* Leader: a new job `job` of at most max stored reports, oldest first, claimed at now_s
 * (several leader processes never claim one report twice). Each is passed to fn. The number
 * claimed (0: nothing to do), or -1. */
int64_t dap_store_claim(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                        const uint8_t job[DAP_STORE_JOB_ID_BYTES], uint32_t max, uint64_t now_s,
                        dap_store_report_fn fn, void *ctx);

/* Leader: the id of a job claimed before older_than_s and not committed (its leader died, or
 * its helper did not answer): the driver sends it again, with the same id and reports
 * (dap_store_job_reports), and takes it over at now_s. 1 with *job set, 0 none, -1. */
int dap_store_stale_job(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                        uint64_t older_than_s, uint64_t now_s, uint8_t job[DAP_STORE_JOB_ID_BYTES]);

/* Leader: a job's reports again, in the order claimed. Their count (0: no such job), or -1. */
int64_t dap_store_job_reports(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                              const uint8_t job[DAP_STORE_JOB_ID_BYTES], dap_store_report_fn fn,
                              void *ctx);

/* Adds add[0, bytes) into acc[0, bytes) (the VDAF's aggregate of two encoded aggregate
 * shares). 0, or -1 to abandon the commit. */
typedef int (*dap_store_merge_fn)(void *ctx, uint8_t *acc, const uint8_t *add, size_t bytes);

/* One report's outcome in a job: error 0 with its output share (share_bytes, as the VDAF
 * encodes an aggregate share of one report), or its ReportError. */
typedef struct {
    const uint8_t *id; /* DPM_DAP_REPORT_ID_BYTES */
    uint64_t bucket;
    const uint8_t *out_share;
    uint8_t error;
} dap_store_outcome_t;

/* Either role: commit job `job` (request digest `digest`: the helper's hash of the request,
 * the leader's may be zeros) exactly once. In one transaction each report either adds its
 * output share to its bucket (once per aggregator: an id aggregated in an earlier job becomes
 * report_replayed, a collected bucket batch_collected) or is counted under its error; errors[i]
 * gets each report's final ReportError (0: aggregated). DAP_STORE_OK; DAP_STORE_ALREADY when
 * this job and digest were committed before (nothing changes; errors[] are the first commit's,
 * so the helper answers a retry as it did); DAP_STORE_CONFLICT for the same job id with
 * another digest (nothing changes); DAP_STORE_FAIL (nothing changes). */
int dap_store_commit(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                     const uint8_t job[DAP_STORE_JOB_ID_BYTES], const uint8_t digest[32],
                     const dap_store_outcome_t *o, size_t n, size_t share_bytes,
                     dap_store_merge_fn merge, void *merge_ctx, uint8_t *errors);

typedef struct {
    uint64_t reports;     /* output shares summed */
    uint8_t checksum[32]; /* XOR of SHA-256(report id) */
    uint32_t buckets;     /* buckets in the batch that hold reports */
} dap_store_batch_t;

/* What a collection releases, made once inside its transaction (or after it,
 * release_outside): the caller adds its central noise to agg (the batch's summed output
 * shares, share_bytes) and writes what it sends (the sealed AggregateShare) to out[0, *len)
 * (cap bytes). 0, or -1 to refuse (e.g. the other aggregator's report count or checksum
 * differs: batchMismatch): nothing is marked or kept (release_outside: nothing kept, the batch
 * stays marked with its release pending). */
typedef int (*dap_store_release_fn)(void *ctx, uint8_t *agg, const dap_store_batch_t *batch,
                                    uint8_t *out, size_t cap, size_t *len);

typedef struct {
    uint8_t req[32];      /* the request's identity (SHA-256 of its body): a retry is the same */
    uint64_t start, end;  /* the batch interval [start, end), in the report's time units */
    uint64_t min_batch;   /* the task's minimum batch size */
    int wait_for_pending; /* the leader: refuse while reports of the batch are stored but not
                             yet aggregated (DAP_STORE_PENDING), which would be lost */
    int release_outside;  /* the leader, whose release asks the helper over the network: the
                             batch is marked collected with its release pending in one
                             transaction, c->release runs with none open (the store's lock is
                             not held across the network; the caller may let other threads use
                             the store meanwhile), its release is kept in a second; a refused
                             or failed release stays pending, and the same request again
                             resumes it on the same sum (as Janus's collection job driver) */
    size_t share_bytes;
    dap_store_merge_fn merge;
    void *merge_ctx;
    dap_store_release_fn release;
    void *release_ctx;
} dap_store_collect_t;

/* Collect the buckets of c->start..c->end once: their output shares summed, released by
 * c->release (its noise drawn once), the batch marked collected and the release kept under
 * c->req, all in one transaction (release_outside: two, above). DAP_STORE_OK (out[0, *out_len) is
 * the new release); DAP_STORE_ALREADY (this request was collected before: its kept release, no new
 * noise: a second draw would spend the budget again); DAP_STORE_TOO_SMALL (fewer than min_batch
 * reports: nothing changes, *batch says how many); DAP_STORE_COLLECTED (another request
 * collected one of its buckets: each bucket is collected once, the draft's
 * max_batch_query_count 1); DAP_STORE_PENDING (wait_for_pending, and a report of the batch
 * is uploaded but not yet in a committed job: nothing changes, ask again once the jobs ran);
 * DAP_STORE_REFUSED (release refused); DAP_STORE_FAIL (also an interval past INT64_MAX). */
int dap_store_collect(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                      const dap_store_collect_t *c, uint8_t *out, size_t cap, size_t *out_len,
                      dap_store_batch_t *batch);

/* Reports counted under ReportError `error` for the task, or -1. */
int64_t dap_store_rejected(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                           uint8_t error);

#endif /* DPM_COLLECTOR_DAP_STORE_H */
