/* SPDX-License-Identifier: Apache-2.0 */
/* Durable storage of accepted reports in SQLite, exactly once, with group commit.
 *
 * One writer thread owns the database connection. Request threads hand it their validated
 * batch and sleep; the writer takes every batch queued so far, inserts them in ONE transaction
 * (WAL, synchronous=FULL: the commit is on disk when COMMIT returns), then updates the
 * in-memory aggregates and wakes the requests, which only then answer 2xx. While it commits,
 * new batches queue up for the next transaction, so one fsync serves many requests.
 *
 * report_id is unique: INSERT OR IGNORE stores a report once; a retried report is
 * acknowledged again and counted as a duplicate. A second collector on the same database is
 * refused (an exclusive flock on the database file).
 *
 * Schema (created if missing):
 *   campaigns(id INTEGER PRIMARY KEY, mechanism, eps_q16, params_hash, campaign BLOB)
 *       the fingerprint every stored report of the campaign was checked against; starting
 *       with a campaigns file that changes a stored campaign's fingerprint is refused
 *   reports(seq INTEGER PRIMARY KEY, report_id BLOB UNIQUE, campaign_id, period, grp,
 *           nvalues, v0, v1, v2, v3, raw BLOB, received_at)
 *       one row per stored report, in arrival order: its decoded fields and the exact bytes
 *       received. Rows are appended (seq) and only the small unique index on the random
 *       report_id takes scattered writes: each commit touches far fewer pages than a table
 *       keyed by report_id would (twice the throughput, measured)
 *   rejects(campaign_id, reason, count, PRIMARY KEY (campaign_id, reason)) WITHOUT ROWID
 *       rejected reports and requests by reason (campaign 0: not attributable) */
#ifndef DPM_COLLECTOR_STORE_H
#define DPM_COLLECTOR_STORE_H

#include <stddef.h>

#include "collector/aggregate.h"
#include "collector/batch.h"
#include "collector/campaigns.h"

typedef struct coll_store coll_store_t;

/* Open or create the database at path, check the campaigns against it, rebuild the
 * aggregates from the stored reports and reject counts, and start the writer.
 * 0, or -1 with a message in err. */
int coll_store_open(coll_store_t **out, const char *path, const coll_campaigns_t *cs,
                    coll_aggregates_t *agg, char *err, size_t errcap);

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
