/* SPDX-License-Identifier: Apache-2.0 */
/* Durable storage of accepted reports in SQLite, exactly once, with group commit.
 *
 * One writer thread owns the database connection. Request threads hand it their validated
 * batch and sleep; the writer takes every batch queued so far, inserts them in ONE transaction
 * (WAL, synchronous=FULL: the commit is on disk when COMMIT returns), then updates the
 * in-memory aggregates and wakes the requests, which only then answer 2xx. While it commits,
 * new batches queue up for the next transaction, so one fsync serves many requests.
 *
 * (campaign_id, report_id) is unique: INSERT OR IGNORE stores a report once; a retried report
 * is acknowledged again and counted as a duplicate (the same id in another campaign is another
 * report). A second collector on the same database is refused (an exclusive flock on the
 * database file).
 *
 * Quotas: a batch sent with a device credential (b->device) may add at most the campaign's
 * device_quota (or the credential's own quota) new reports per (credential, campaign, period);
 * counted in the same transaction as the reports, so concurrent batches cannot both slip
 * under it, and retries (duplicates) cost nothing. A batch that would exceed it stores
 * nothing and gets its over-quota reports rejected ("device quota exceeded").
 *
 * Integrity: at start-up PRAGMA integrity_check (or quick_check) must say "ok", or the store
 * refuses to open. coll_store_health reports a commit that failed in the last
 * COLL_STORE_HEALTH_WINDOW_S seconds, and corruption (SQLITE_CORRUPT, SQLITE_NOTADB) for good.
 *
 * Schema (created if missing):
 *   campaigns(id INTEGER PRIMARY KEY, mechanism, eps_q16, params_hash, campaign BLOB)
 *       the fingerprint every stored report of the campaign was checked against; starting
 *       with a campaigns file that changes a stored campaign's fingerprint is refused
 *   reports(seq INTEGER PRIMARY KEY, report_id BLOB, campaign_id, period, grp, nvalues,
 *           v0, v1, v2, v3, raw BLOB, received_at, device, UNIQUE (campaign_id, report_id))
 *       one row per stored report, in arrival order: its decoded fields, the exact bytes
 *       received and the credential that sent it (NULL: anonymous). Rows are appended (seq)
 *       and only the small unique index takes scattered writes: each commit touches far fewer
 *       pages than a table keyed by report_id would (twice the throughput, measured)
 *   rejects(campaign_id, reason, count, PRIMARY KEY (campaign_id, reason)) WITHOUT ROWID
 *       rejected reports and requests by reason (campaign 0: not attributable)
 *   quota(device, campaign_id, period, count) WITHOUT ROWID    reports stored per credential
 *   lost(device, count) WITHOUT ROWID    Batch.lost_reports per credential ('' anonymous)
 * campaigns also keeps first_seen (Unix seconds): the default start of a campaign's periods.
 * PRAGMA user_version is the schema version (2); a version-0 database (report_id unique on its
 * own) is upgraded in place at start-up. */
#ifndef DPM_COLLECTOR_STORE_H
#define DPM_COLLECTOR_STORE_H

#include <stddef.h>

#include "collector/aggregate.h"
#include "collector/batch.h"
#include "collector/campaigns.h"

typedef struct coll_store coll_store_t;

typedef enum {
    COLL_INTEGRITY_FULL = 0, /* PRAGMA integrity_check: pages, and indexes against tables */
    COLL_INTEGRITY_QUICK,    /* PRAGMA quick_check: pages only (faster) */
    COLL_INTEGRITY_OFF
} coll_integrity_t;

/* Seconds a failed commit keeps /healthz unhealthy. */
#define COLL_STORE_HEALTH_WINDOW_S 60

/* Open or create the database at path, check its integrity, check the campaigns against it
 * (recording when each was first seen, and setting that as the start of every campaign whose
 * file gives none), rebuild the aggregates from the stored reports and counters, and start the
 * writer. 0, or -1 with a message in err. */
int coll_store_open(coll_store_t **out, const char *path, coll_campaigns_t *cs,
                    coll_aggregates_t *agg, coll_integrity_t integrity, char *err, size_t errcap);

/* 0 when healthy; -1 and a sentence in reason when a commit failed recently or the database
 * is corrupt. */
int coll_store_health(coll_store_t *s, char *reason, size_t cap);

/* Durably commit a batch: its reports if it has no rejects (all or nothing), and its reject
 * counts. Blocks until the transaction is on disk and the aggregates include it. Sets
 * b->accepted, b->duplicates and every report's is_new. 0, or -1 on a storage failure
 * (nothing of the batch was committed). */
int coll_store_commit(coll_store_t *s, coll_batch_t *b);

/* Commits since start and the largest number of requests one transaction carried. */
void coll_store_stats(coll_store_t *s, unsigned long long *commits, unsigned long long *max_group);

/* Finish the queued batches, stop the writer and close the database. */
void coll_store_close(coll_store_t *s);

#endif /* DPM_COLLECTOR_STORE_H */
