/* SPDX-License-Identifier: Apache-2.0 */
/* Durable storage of accepted reports and of the sums the estimates read, exactly once, with
 * group commit, over one of two backends (store_backend.h):
 *
 *   sqlite:PATH (or a plain PATH)   SQLite in WAL mode, synchronous=FULL: one machine, one
 *                                   collector per file (an exclusive flock)
 *   postgresql://... (postgres://)  PostgreSQL through libpq: any number of collectors share
 *                                   one database and serve the same campaigns
 *
 * One writer thread owns the write connection. Request threads hand it their validated batch
 * and sleep; the writer takes every batch queued so far and stores them in ONE transaction:
 * each batch's reports (all or nothing), its reject counts and lost-report count, and the
 * per-campaign, per-period sums of the new reports (aggregate.h). Only when COMMIT has
 * returned (the data is on disk) are the requests woken, and only then do they answer 2xx.
 * While it commits, new batches queue up for the next transaction, so one fsync serves many
 * requests. A transaction the database aborts for a conflict (PostgreSQL: deadlock or
 * serialization failure between collectors) is retried from the start, up to 3 times.
 *
 * Exactly once: (campaign_id, report_id) is unique: a report is stored once; a retried report
 * is acknowledged again and counted as a duplicate; the same id in another campaign is another
 * report. The sums are updated in the same transaction as the reports, so they always equal
 * the sums of the stored reports (coll_store_verify recomputes and compares them).
 *
 * Sharding: the sums (and reject and lost counters) are kept per writer, in rows keyed by
 * shard = the collector's instance id, and summed when read, so concurrent collectors never
 * update the same row. Reading an estimate or starting up costs O(groups x metrics x bins x
 * shards x periods read), never O(reports).
 *
 * Quotas: a batch sent with a device credential (b->device) may add at most the campaign's
 * device_quota (or the credential's own quota) new reports per (credential, campaign, period);
 * counted in the same transaction as the reports, so concurrent batches (on any collector)
 * cannot both slip under it, and retries (duplicates) cost nothing. A batch that would exceed
 * it stores nothing and gets its over-quota reports rejected ("device quota exceeded").
 *
 * Lost reports: Batch.lost_reports adds at most coll_lost_cap per credential and UTC day (all
 * anonymous senders together count as one credential); the excess is counted as the reject
 * COLL_LOST_OVER_REASON of campaign 0 instead, and the batch is still accepted.
 *
 * Health: coll_store_health reports a commit that failed in the last
 * COLL_STORE_HEALTH_WINDOW_S seconds, and corruption (SQLite) for good. SQLite's integrity is
 * checked at start-up (coll_integrity_t).
 *
 * Schema versions (SQLite: PRAGMA user_version; PostgreSQL: table dpm_schema): a database of
 * an older released schema is migrated at start-up, in one transaction (SQLite 0 -> 2 -> 3:
 * version 2 is dpm-collector 0.1.0's; version 3 adds the stored sums, back-filled once from the
 * stored reports). A database of a newer schema than the collector's is refused. The tables
 * are described in store_sqlite.c and store_pg.c. */
#ifndef DPM_COLLECTOR_STORE_H
#define DPM_COLLECTOR_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "collector/ingest/aggregate.h"
#include "collector/ingest/batch.h"
#include "collector/ingest/campaigns.h"
#include "collector/ingest/counters.h"
#include "collector/store/store_options.h"

typedef struct coll_store coll_store_t;

/* The lost reports one credential may add per UTC day: what it may store in a day, the sum over
 * campaigns of its quota per period (quota_override, else the campaign's device_quota) times
 * the campaign's periods that a day touches (ceil(86400 / period_seconds)). */
uint64_t coll_lost_cap(const coll_campaigns_t *cs, uint32_t quota_override);
#define COLL_LOST_OVER_REASON "lost reports over the daily cap"

/* Seconds a failed commit keeps /healthz unhealthy. */
#define COLL_STORE_HEALTH_WINDOW_S 60

/* "sqlite", "postgresql", or NULL for a --db value no backend takes; *target is the part the
 * backend opens (the path, or the whole URL). */
const char *coll_store_backend_name(const char *url, const char **target);

/* Open or create the database at url, check it (SQLite: integrity), migrate an older schema,
 * check the campaigns against it (recording when each was first seen, and setting that as the
 * start of every campaign whose file gives none), and start the writer. 0, or -1 with a
 * message in err. */
int coll_store_open(coll_store_t **out, const char *url, coll_campaigns_t *cs,
                    const coll_store_options_t *opts, char *err, size_t errcap);

/* A reload's campaign table (reload.h): cs holds every campaign the store serves, in the same
 * order, and the last `added` of them are new. Registers the new ones in the database (checking
 * the others against it, as coll_store_open does, on a connection of its own) and from then on
 * serves cs; the caller keeps the old table alive until no request can hold it. 0, or -1 with a
 * message in err and nothing changed. */
int coll_store_set_campaigns(coll_store_t *s, coll_campaigns_t *cs, size_t added, char *err,
                             size_t cap);

/* 0 when healthy; -1 and a sentence in reason when a commit failed recently or the database
 * is corrupt. */
int coll_store_health(coll_store_t *s, char *reason, size_t cap);

/* Durably commit a batch: its reports if it has no rejects (all or nothing), and its reject
 * counts. Blocks until the transaction is committed. Sets b->accepted, b->duplicates and every
 * report's is_new; over-quota reports become rejects. 0, or -1 on a storage failure (nothing
 * of the batch was committed). */
int coll_store_commit(coll_store_t *s, coll_batch_t *b);

/* Open the database at url to read its sums only (an analyst's reader: `dpm-collector
 * estimate`): read-only, no lock, no migration, no writer; collectors may serve it meanwhile.
 * Checks cs against the stored campaigns (a changed fingerprint is refused) and sets the start
 * of each stored campaign whose file gives none. Only coll_store_read and coll_store_close
 * may be called on it. 0, or -1 with a message in err. */
int coll_store_open_reader(coll_store_t **out, const char *url, coll_campaigns_t *cs, char *err,
                           size_t errcap);

/* The stored sums of campaign index ci over periods [from, to] (every shard), and the totals
 * over every campaign (either may be NULL). 0, or -1 on a storage failure (reason in err). */
int coll_store_read(coll_store_t *s, int ci, uint32_t from, uint32_t to, coll_campaign_state_t *out,
                    coll_totals_t *totals, char *err, size_t cap);

/* Commits since start and the largest number of requests one transaction carried. */
void coll_store_stats(coll_store_t *s, unsigned long long *commits, unsigned long long *max_group);

/* Finish the queued batches, stop the writer and close the database. */
void coll_store_close(coll_store_t *s);

/* ---- maintenance (dpm-collector backup | restore | retention | verify | migrate) ---------- */

/* Online backup to a new file: SQLite's backup API (a consistent copy while collectors keep
 * writing); PostgreSQL: pg_dump --format=custom. 0, or -1 with a message in err. */
int coll_store_backup(const char *url, const char *to, char *err, size_t cap);

/* SQLite: copy the backup file `from` into a new database at url (which must not exist),
 * after checking its integrity and schema. PostgreSQL: pg_restore into the (empty) database.
 * 0, or -1 with a message. */
int coll_store_restore(const char *from, const char *url, char *err, size_t cap);

/* Drop every period of each campaign in cs older than the newest `keep` periods at Unix time
 * now: its reports, sums and quota counters, and for a FedAUC campaign its score uploads (scores
 * and tokens, reported or not) and phases, in one transaction (the sums stay the sums of the
 * stored reports). *reports_dropped, *periods_dropped and *uploads_dropped say how much went.
 * 0 or -1. */
int coll_store_retention(const char *url, coll_campaigns_t *cs, uint32_t keep, int64_t now,
                         uint64_t *reports_dropped, uint64_t *periods_dropped,
                         uint64_t *uploads_dropped, char *err, size_t cap);

/* Recompute every campaign's and period's sums from the stored reports (O(reports)) and compare
 * them with the stored sums. 0 if they agree (*reports counted), 1 if not (the first
 * difference in err), -1 on a failure. */
int coll_store_verify(const char *url, uint64_t *reports, char *err, size_t cap);

/* Open, migrate to this collector's schema, close (no campaigns needed). 0 or -1. */
int coll_store_migrate(const char *url, int *from_version, int *to_version, char *err, size_t cap);

#endif /* DPM_COLLECTOR_STORE_H */
