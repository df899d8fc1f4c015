/* SPDX-License-Identifier: Apache-2.0 */
/* This collector process's own counters for /metrics (metrics.h): requests by status,
 * reports accepted / duplicate / rejected by reason, TLS handshakes and their failures, and
 * the commit latency histogram. They start at zero with the process (Prometheus counters: a
 * restart is a counter reset); with several collectors each exposes its own. Thread-safe (one
 * mutex); every function accepts NULL and then does nothing. */
#ifndef DPM_COLLECTOR_COUNTERS_H
#define DPM_COLLECTOR_COUNTERS_H

#include <pthread.h>
#include <stdint.h>

#include "collector/ingest/aggregate.h"
#include "collector/ingest/batch.h"
#include "collector/ingest/ingest_series.h"

/* Upper bounds (seconds) of the commit latency histogram's buckets; +Inf is implicit. */
#define COLL_COMMIT_BUCKETS 12
extern const double coll_commit_bucket_le[COLL_COMMIT_BUCKETS];

typedef struct {
    pthread_mutex_t mu;
    uint64_t status[600]; /* answers by HTTP status (100 .. 599) */
    uint64_t reports_accepted, reports_duplicate;
    coll_reasons_t rejected; /* rejected reports and requests by reason */
    uint64_t tls_handshakes, tls_handshake_failures;
    uint64_t commit_bucket[COLL_COMMIT_BUCKETS + 1]; /* per bucket (not cumulative); last: +Inf */
    uint64_t commits, commits_failed;
    double commit_seconds; /* sum */
    coll_series_t series;  /* reports over time, for the console (ingest_series.h; off: zero) */
    uint64_t reloads_ok, reloads_failed; /* SIGHUP reloads (reload.h) */
} coll_counters_t;

int coll_counters_init(coll_counters_t *c);
void coll_counters_free(coll_counters_t *c);

void coll_counters_status(coll_counters_t *c, int status);
/* A committed batch: its accepted, duplicate and rejected reports (by reason). */
void coll_counters_batch(coll_counters_t *c, const coll_batch_t *b);
void coll_counters_reject(coll_counters_t *c, const char *reason, uint64_t n);
void coll_counters_handshake(coll_counters_t *c, int ok);
void coll_counters_commit(coll_counters_t *c, double seconds, int ok);
/* A SIGHUP reload applied (ok) or refused. */
void coll_counters_reload(coll_counters_t *c, int ok);

/* The JSON of GET /v1/ingestion (ingest_series.h) at Unix time now into a new heap buffer:
 * 0, or -1 when memory runs out. */
int coll_counters_series_json(coll_counters_t *c, int64_t now, char **out, size_t *len);

/* A consistent copy (its mutex is not copied: do not use it on the copy). */
void coll_counters_snapshot(coll_counters_t *c, coll_counters_t *out);

#endif /* DPM_COLLECTOR_COUNTERS_H */
