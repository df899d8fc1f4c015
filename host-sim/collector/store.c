/* SPDX-License-Identifier: Apache-2.0 */
/* SQLite store with a group-committing writer thread (see store.h). */
#include "collector/store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

typedef struct job {
    coll_batch_t *batch;
    int done;
    int rc;
    struct job *next;
} job_t;

struct coll_store {
    sqlite3 *db;
    sqlite3_stmt *insert_report;
    sqlite3_stmt *count_reject;
    sqlite3_stmt *charge_quota;
    sqlite3_stmt *count_lost;
    int lock_fd;
    const coll_campaigns_t *campaigns;
    coll_aggregates_t *agg;
    pthread_t writer;
    pthread_mutex_t mu;
    pthread_cond_t work; /* the writer waits for jobs */
    pthread_cond_t done; /* requests wait for their job */
    job_t *head, *tail;
    int stopping;
    unsigned long long commits, max_group, failures;
    /* health: the last failed commit (monotonic seconds) and why; corruption is sticky */
    int64_t last_failure_s;
    int corrupt;
    char last_error[160];
};

/* Schema version 2 (PRAGMA user_version): reports are unique per (campaign, report_id), each
 * row names the credential that sent it, and quota and lost-report counters exist. */
#define SCHEMA_VERSION 2
static const char REPORTS_COLUMNS[] =
    "(seq INTEGER PRIMARY KEY, report_id BLOB NOT NULL, campaign_id INTEGER NOT NULL,"
    " period INTEGER NOT NULL, grp INTEGER NOT NULL, nvalues INTEGER NOT NULL,"
    " v0 INTEGER, v1 INTEGER, v2 INTEGER, v3 INTEGER, raw BLOB NOT NULL,"
    " received_at INTEGER NOT NULL, device TEXT, UNIQUE (campaign_id, report_id))";

static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS campaigns ("
    "  id INTEGER PRIMARY KEY, mechanism INTEGER NOT NULL, eps_q16 INTEGER NOT NULL,"
    "  params_hash INTEGER NOT NULL, campaign BLOB NOT NULL, first_seen INTEGER);"
    "CREATE TABLE IF NOT EXISTS rejects ("
    "  campaign_id INTEGER NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL,"
    "  PRIMARY KEY (campaign_id, reason)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS quota ("
    "  device TEXT NOT NULL, campaign_id INTEGER NOT NULL, period INTEGER NOT NULL,"
    "  count INTEGER NOT NULL, PRIMARY KEY (device, campaign_id, period)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS lost ("
    "  device TEXT NOT NULL PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;";

/* Version 0 (report_id unique on its own, no first_seen) to 2; the caller wraps it in a
 * transaction. %s: REPORTS_COLUMNS. */
static const char MIGRATE_0_TO_2[] =
    "ALTER TABLE campaigns ADD COLUMN first_seen INTEGER;"
    "CREATE TABLE reports_v2 %s;"
    "INSERT INTO reports_v2(seq, report_id, campaign_id, period, grp, nvalues, v0, v1, v2, v3,"
    "  raw, received_at)"
    "  SELECT seq, report_id, campaign_id, period, grp, nvalues, v0, v1, v2, v3, raw, received_at"
    "  FROM reports;"
    "DROP TABLE reports;"
    "ALTER TABLE reports_v2 RENAME TO reports;"
    "UPDATE campaigns SET first_seen = (SELECT MIN(received_at) FROM reports"
    "  WHERE campaign_id = campaigns.id);";

static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

static int exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* One integer from a one-row query (PRAGMA user_version, COUNT(*)), or -1. */
static sqlite3_int64 query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    sqlite3_int64 v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
        v = sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    return v;
}

/* ---- start-up -------------------------------------------------------------------------- */

/* PRAGMA integrity_check (or quick_check): every b-tree page, and (full) every index entry
 * against its table row. A damaged report_id index would otherwise fail commits at random. */
static int check_integrity(coll_store_t *s, coll_integrity_t mode, char *err, size_t cap)
{
    if (mode == COLL_INTEGRITY_OFF) {
        return 0;
    }
    const char *sql =
        mode == COLL_INTEGRITY_FULL ? "PRAGMA integrity_check(8)" : "PRAGMA quick_check(8)";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK) {
        return fail(err, cap, "integrity check failed: %s", sqlite3_errmsg(s->db));
    }
    char first[256] = "";
    int rows = 0, st;
    while ((st = sqlite3_step(q)) == SQLITE_ROW) {
        const unsigned char *msg = sqlite3_column_text(q, 0);
        if (rows++ == 0 && msg != NULL) {
            snprintf(first, sizeof(first), "%s", (const char *)msg);
        }
    }
    sqlite3_finalize(q);
    if (st != SQLITE_DONE) {
        return fail(err, cap, "integrity check failed: %s", sqlite3_errmsg(s->db));
    }
    if (rows != 1 || strcmp(first, "ok") != 0) {
        return fail(err, cap,
                    "integrity check failed (%s): %s; refusing to start. Restore the "
                    "database from a backup, or run sqlite3 .recover on a copy (README)",
                    mode == COLL_INTEGRITY_FULL ? "integrity_check" : "quick_check", first);
    }
    return 0;
}

/* Create the schema, or bring an older database to SCHEMA_VERSION. */
static int create_or_migrate(coll_store_t *s, char *err, size_t cap)
{
    sqlite3_int64 version = query_int(s->db, "PRAGMA user_version");
    sqlite3_int64 has_reports =
        query_int(s->db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = "
                         "'reports'");
    char sql[2048];
    if (version < 0 || has_reports < 0) {
        return fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
    }
    if (version > SCHEMA_VERSION) {
        return fail(err, cap, "database schema version %lld is newer than this collector's (%d)",
                    (long long)version, SCHEMA_VERSION);
    }
    if (version == SCHEMA_VERSION) {
        return 0;
    }
    if (exec(s->db, "BEGIN IMMEDIATE") != 0) {
        return fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
    }
    int rc = 0;
    if (version == 0 && has_reports) {
        snprintf(sql, sizeof(sql), MIGRATE_0_TO_2, REPORTS_COLUMNS);
        rc = exec(s->db, sql);
    } else {
        snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS reports %s;", REPORTS_COLUMNS);
        rc = exec(s->db, sql);
    }
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", SCHEMA_VERSION);
    if (rc != 0 || exec(s->db, SCHEMA) != 0 || exec(s->db, sql) != 0 ||
        exec(s->db, "COMMIT") != 0) {
        fail(err, cap, "database schema %lld -> %d: %s", (long long)version, SCHEMA_VERSION,
             sqlite3_errmsg(s->db));
        exec(s->db, "ROLLBACK");
        return -1;
    }
    if (version == 0 && has_reports) {
        fprintf(stderr,
                "dpm-collector: database upgraded to schema %d (reports unique per "
                "campaign and report_id)\n",
                SCHEMA_VERSION);
    }
    return 0;
}

/* Record new campaigns (with the time they were first seen); refuse a stored campaign whose
 * fingerprint the file changed (its stored reports were validated against the old one and
 * would be mixed into the estimate). A campaign without a start in the file starts when it
 * was first seen. */
static int check_campaigns(coll_store_t *s, coll_campaigns_t *cs, char *err, size_t cap)
{
    sqlite3_stmt *get = NULL, *put = NULL, *seen = NULL;
    int rc = -1;
    sqlite3_int64 now = (sqlite3_int64)time(NULL);
    if (sqlite3_prepare_v2(s->db,
                           "SELECT mechanism, eps_q16, params_hash, first_seen FROM campaigns"
                           " WHERE id = ?",
                           -1, &get, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db,
                           "INSERT INTO campaigns(id, mechanism, eps_q16, params_hash, campaign,"
                           " first_seen) VALUES (?, ?, ?, ?, ?, ?)",
                           -1, &put, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "UPDATE campaigns SET first_seen = ? WHERE id = ?", -1, &seen,
                           NULL) != SQLITE_OK) {
        fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
        goto out;
    }
    for (size_t i = 0; i < cs->n; i++) {
        coll_campaign_t *c = &cs->c[i];
        const dpm_mech_t *m = &c->mech;
        sqlite3_int64 first_seen = now;
        sqlite3_reset(get);
        sqlite3_bind_int64(get, 1, m->campaign.id);
        int st = sqlite3_step(get);
        if (st == SQLITE_ROW) {
            if (sqlite3_column_int64(get, 0) != (sqlite3_int64)m->campaign.mechanism ||
                sqlite3_column_int64(get, 1) != (sqlite3_int64)m->eps_implemented ||
                sqlite3_column_int64(get, 2) != (sqlite3_int64)m->params_hash) {
                fail(err, cap,
                     "campaign %u: the database holds reports made with different parameters "
                     "(mechanism, eps, groups or metrics changed); use a new campaign id or a "
                     "new database",
                     m->campaign.id);
                goto out;
            }
            if (sqlite3_column_type(get, 3) != SQLITE_NULL) {
                first_seen = sqlite3_column_int64(get, 3);
            } else { /* upgraded from schema 0 without reports */
                sqlite3_reset(seen);
                sqlite3_bind_int64(seen, 1, now);
                sqlite3_bind_int64(seen, 2, m->campaign.id);
                if (sqlite3_step(seen) != SQLITE_DONE) {
                    fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
                    goto out;
                }
            }
        } else if (st == SQLITE_DONE) {
            sqlite3_reset(put);
            sqlite3_bind_int64(put, 1, m->campaign.id);
            sqlite3_bind_int64(put, 2, m->campaign.mechanism);
            sqlite3_bind_int64(put, 3, m->eps_implemented);
            sqlite3_bind_int64(put, 4, m->params_hash);
            sqlite3_bind_blob(put, 5, c->pb, (int)c->pb_len, SQLITE_STATIC);
            sqlite3_bind_int64(put, 6, now);
            if (sqlite3_step(put) != SQLITE_DONE) {
                fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
                goto out;
            }
        } else {
            fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
            goto out;
        }
        if (!c->opts.has_start) {
            c->opts.start = first_seen;
            c->opts.has_start = 1;
        }
    }
    rc = 0;
out:
    sqlite3_finalize(get);
    sqlite3_finalize(put);
    sqlite3_finalize(seen);
    return rc;
}

/* Rebuild the aggregates from every stored report, the reject and lost-report counters. */
static int load_state(coll_store_t *s, char *err, size_t cap)
{
    sqlite3_stmt *q = NULL;
    unsigned long long skipped = 0;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT campaign_id, grp, nvalues, v0, v1, v2, v3, raw FROM reports", -1,
                           &q, NULL) != SQLITE_OK) {
        return fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
    }
    coll_agg_lock(s->agg);
    int st;
    while ((st = sqlite3_step(q)) == SQLITE_ROW) {
        sqlite3_int64 cid = sqlite3_column_int64(q, 0);
        sqlite3_int64 grp = sqlite3_column_int64(q, 1);
        sqlite3_int64 nv = sqlite3_column_int64(q, 2);
        int ri =
            cid > 0 && cid <= UINT32_MAX ? coll_campaigns_index(s->campaigns, (uint32_t)cid) : -1;
        if (ri >= 0 && s->campaigns->c[ri].mech.campaign.mechanism == DPM_MECH_ID_ROC_HIST) {
            /* roc_hist: the histogram is in the stored report bytes */
            const void *raw = sqlite3_column_blob(q, 7);
            int rlen = sqlite3_column_bytes(q, 7);
            dpm_report_t rep;
            const char *why = NULL;
            if (raw == NULL || rlen <= 0 || dpm_report_decode(raw, (size_t)rlen, &rep) != DPM_OK ||
                dpm_mech_check_report(&s->campaigns->c[ri].mech, &rep, &why) != DPM_OK ||
                coll_agg_add_report_locked(s->agg, ri, &rep) != 0) {
                skipped++;
            }
            continue;
        }
        int32_t v[DPM_CAMPAIGN_MAX_METRICS] = {0};
        int ok = cid > 0 && cid <= UINT32_MAX && grp >= 0 && grp <= UINT32_MAX && nv >= 1 &&
                 nv <= DPM_CAMPAIGN_MAX_METRICS;
        for (int k = 0; ok && k < nv; k++) {
            sqlite3_int64 x = sqlite3_column_int64(q, 3 + k);
            ok = x >= INT32_MIN && x <= INT32_MAX;
            v[k] = (int32_t)x;
        }
        int ci = ok ? coll_campaigns_index(s->campaigns, (uint32_t)cid) : -1;
        if (ci < 0 || coll_agg_add_locked(s->agg, ci, (uint32_t)grp, (uint32_t)nv, v) != 0) {
            skipped++;
        }
    }
    sqlite3_finalize(q);
    if (st != SQLITE_DONE) {
        coll_agg_unlock(s->agg);
        return fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
    }
    if (sqlite3_prepare_v2(s->db, "SELECT campaign_id, reason, count FROM rejects", -1, &q, NULL) !=
        SQLITE_OK) {
        coll_agg_unlock(s->agg);
        return fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
    }
    while ((st = sqlite3_step(q)) == SQLITE_ROW) {
        const unsigned char *reason = sqlite3_column_text(q, 1);
        sqlite3_int64 cid = sqlite3_column_int64(q, 0);
        sqlite3_int64 n = sqlite3_column_int64(q, 2);
        if (reason != NULL && n > 0 && cid >= 0 && cid <= UINT32_MAX) {
            coll_agg_count_reject_locked(s->agg, (uint32_t)cid, (const char *)reason, (uint64_t)n);
        }
    }
    sqlite3_finalize(q);
    sqlite3_int64 lost = query_int(s->db, "SELECT COALESCE(SUM(count), 0) FROM lost");
    if (lost > 0) {
        coll_agg_count_lost_locked(s->agg, (uint64_t)lost);
    }
    coll_agg_unlock(s->agg);
    if (st != SQLITE_DONE || lost < 0) {
        return fail(err, cap, "database: %s", sqlite3_errmsg(s->db));
    }
    if (skipped > 0) {
        fprintf(stderr,
                "dpm-collector: %llu stored reports belong to campaigns not in the "
                "campaigns file; they are kept but not estimated\n",
                skipped);
    }
    return 0;
}

static int open_db(coll_store_t *s, const char *path, coll_integrity_t integrity, char *err,
                   size_t cap)
{
    /* One collector per database: the aggregates assume this process is the only writer. The
     * flock is independent of SQLite's own fcntl locks, and this descriptor stays open until
     * after sqlite3_close, so closing it cannot drop SQLite's locks. */
    s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->lock_fd < 0) {
        return fail(err, cap, "cannot open database %s: %s", path, strerror(errno));
    }
    if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        return fail(err, cap, "database %s is in use by another collector", path);
    }
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        return fail(err, cap, "cannot open database %s: %s", path,
                    s->db ? sqlite3_errmsg(s->db) : "out of memory");
    }
    sqlite3_busy_timeout(s->db, 5000);
    sqlite3_stmt *q = NULL;
    int wal = 0;
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
        const unsigned char *mode = sqlite3_column_text(q, 0);
        wal = mode != NULL && strcmp((const char *)mode, "wal") == 0;
    }
    sqlite3_finalize(q);
    if (!wal) {
        return fail(err, cap, "database %s: cannot switch to WAL mode: %s", path,
                    sqlite3_errmsg(s->db));
    }
    char msg[384];
    if (check_integrity(s, integrity, msg, sizeof(msg)) != 0) {
        return fail(err, cap, "database %s: %s", path, msg);
    }
    /* synchronous=FULL: every COMMIT fsyncs the WAL, so a 2xx survives power loss. A 64 MiB
     * page cache and checkpoints every 16384 pages (64 MiB of WAL) keep the index's random
     * pages in memory and the checkpoint fsyncs rare; neither weakens durability. */
    if (exec(s->db, "PRAGMA synchronous=FULL") != 0 ||
        exec(s->db, "PRAGMA cache_size=-65536") != 0 ||
        exec(s->db, "PRAGMA wal_autocheckpoint=16384") != 0) {
        return fail(err, cap, "database %s: %s", path, sqlite3_errmsg(s->db));
    }
    if (create_or_migrate(s, msg, sizeof(msg)) != 0) {
        return fail(err, cap, "database %s: %s", path, msg);
    }
    if (sqlite3_prepare_v2(s->db,
                           "INSERT OR IGNORE INTO reports(report_id, campaign_id, period, grp,"
                           " nvalues, v0, v1, v2, v3, raw, received_at, device)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &s->insert_report, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db,
                           "INSERT INTO rejects(campaign_id, reason, count) VALUES (?, ?, ?)"
                           " ON CONFLICT(campaign_id, reason) DO UPDATE"
                           " SET count = count + excluded.count",
                           -1, &s->count_reject, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(
            s->db,
            "INSERT INTO quota(device, campaign_id, period, count) VALUES (?, ?, ?, 1)"
            " ON CONFLICT(device, campaign_id, period) DO UPDATE"
            " SET count = count + 1 RETURNING count",
            -1, &s->charge_quota, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db,
                           "INSERT INTO lost(device, count) VALUES (?, ?)"
                           " ON CONFLICT(device) DO UPDATE SET count = count + excluded.count",
                           -1, &s->count_lost, NULL) != SQLITE_OK) {
        return fail(err, cap, "database %s: %s", path, sqlite3_errmsg(s->db));
    }
    return 0;
}

/* ---- the writer -------------------------------------------------------------------------- */

static int has_device(const coll_batch_t *b)
{
    return b->device != NULL && b->device[0] != '\0';
}

/* Count report r against its credential's quota for (campaign, period): 1 within it, 0 over,
 * -1 on a database error. */
static int charge_quota(coll_store_t *s, const coll_batch_t *b, const coll_report_t *r)
{
    sqlite3_stmt *q = s->charge_quota;
    sqlite3_reset(q);
    sqlite3_bind_text(q, 1, b->device, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, r->campaign_id);
    sqlite3_bind_int64(q, 3, r->period);
    if (sqlite3_step(q) != SQLITE_ROW) {
        return -1;
    }
    sqlite3_int64 count = sqlite3_column_int64(q, 0);
    sqlite3_reset(q);
    uint32_t limit = b->quota_override != 0 ? b->quota_override
                                            : s->campaigns->c[r->campaign_index].opts.device_quota;
    return count <= (sqlite3_int64)limit ? 1 : 0;
}

static int insert_reports(coll_store_t *s, coll_batch_t *b, sqlite3_int64 now, size_t *over,
                          size_t nover_cap, size_t *nover)
{
    sqlite3_stmt *q = s->insert_report;
    for (size_t i = 0; i < b->nreports; i++) {
        coll_report_t *r = &b->reports[i];
        sqlite3_reset(q);
        sqlite3_bind_blob(q, 1, r->report_id, DPM_REPORT_ID_BYTES, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, r->campaign_id);
        sqlite3_bind_int64(q, 3, r->period);
        /* The tuple columns hold a tuple report's body; a histogram body lives only in the raw
         * bytes. */
        sqlite3_bind_int64(q, 4, r->group);
        sqlite3_bind_int64(q, 5, r->nvalues);
        for (uint32_t k = 0; k < DPM_CAMPAIGN_MAX_METRICS; k++) {
            if (k < r->nvalues) {
                sqlite3_bind_int64(q, 6 + (int)k, r->value[k]);
            } else {
                sqlite3_bind_null(q, 6 + (int)k);
            }
        }
        sqlite3_bind_blob(q, 10, r->raw, (int)r->raw_len, SQLITE_STATIC);
        sqlite3_bind_int64(q, 11, now);
        if (has_device(b)) {
            sqlite3_bind_text(q, 12, b->device, -1, SQLITE_STATIC);
        } else {
            sqlite3_bind_null(q, 12);
        }
        if (sqlite3_step(q) != SQLITE_DONE) {
            return -1;
        }
        r->is_new = sqlite3_changes(s->db) == 1;
        if (r->is_new) {
            b->accepted++;
        } else {
            b->duplicates++;
        }
        if (r->is_new && has_device(b)) {
            int within = charge_quota(s, b, r);
            if (within < 0) {
                return -1;
            }
            if (!within && *nover < nover_cap) {
                over[(*nover)++] = i;
            } else if (!within) {
                (*nover)++;
            }
        }
    }
    return 0;
}

#define OVER_LISTED 64 /* over-quota reports named one by one; the rest are counted */

/* One job inside the group's transaction: its reports (all or nothing, within its quotas), its
 * reject counts, its lost-report count. */
static int insert_batch(coll_store_t *s, coll_batch_t *b, sqlite3_int64 now)
{
    b->accepted = 0;
    b->duplicates = 0;
    if (b->rejects_total == 0 && b->nreports > 0) {
        size_t over[OVER_LISTED], nover = 0;
        if (exec(s->db, "SAVEPOINT job") != 0) {
            return -1;
        }
        if (insert_reports(s, b, now, over, OVER_LISTED, &nover) != 0) {
            return -1; /* the whole group rolls back */
        }
        if (nover > 0) {
            /* over quota: none of this batch is stored; the device learns which reports */
            if (exec(s->db, "ROLLBACK TO job") != 0) {
                return -1;
            }
            b->accepted = b->duplicates = 0;
            for (size_t i = 0; i < b->nreports; i++) {
                b->reports[i].is_new = 0;
            }
            for (size_t i = 0; i < nover && i < OVER_LISTED; i++) {
                coll_batch_reject_report(b, over[i], "device quota exceeded");
            }
            if (nover > OVER_LISTED) {
                coll_batch_count(b, b->reports[0].campaign_id, "device quota exceeded",
                                 nover - OVER_LISTED);
                b->rejects_total += nover - OVER_LISTED;
            }
        }
        if (exec(s->db, "RELEASE job") != 0) {
            return -1;
        }
    }
    for (size_t i = 0; i < b->ncounts; i++) {
        sqlite3_stmt *q = s->count_reject;
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, b->counts[i].campaign_id);
        sqlite3_bind_text(q, 2, b->counts[i].reason, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 3, (sqlite3_int64)b->counts[i].count);
        if (sqlite3_step(q) != SQLITE_DONE) {
            return -1;
        }
    }
    if (b->lost_reports > 0 && b->rejects_total == 0) {
        sqlite3_stmt *q = s->count_lost;
        sqlite3_reset(q);
        sqlite3_bind_text(q, 1, has_device(b) ? b->device : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, b->lost_reports);
        if (sqlite3_step(q) != SQLITE_DONE) {
            return -1;
        }
    }
    return 0;
}

static int64_t mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec;
}

/* Remember a failed commit for /healthz (the caller holds no lock). */
static void note_failure(coll_store_t *s, int code)
{
    pthread_mutex_lock(&s->mu);
    s->failures++;
    s->last_failure_s = mono_s();
    int primary = code & 0xFF;
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
        s->corrupt = 1;
    }
    snprintf(s->last_error, sizeof(s->last_error), "%s", sqlite3_errstr(code));
    pthread_mutex_unlock(&s->mu);
}

/* One transaction for a group of jobs: all of them or none. */
static int commit_group(coll_store_t *s, job_t *jobs)
{
    sqlite3_int64 now = (sqlite3_int64)time(NULL);
    int rc = exec(s->db, "BEGIN IMMEDIATE");
    for (job_t *j = jobs; rc == 0 && j != NULL; j = j->next) {
        rc = insert_batch(s, j->batch, now);
    }
    if (rc == 0) {
        rc = exec(s->db, "COMMIT");
    }
    if (rc != 0) {
        int code = sqlite3_extended_errcode(s->db);
        fprintf(stderr, "dpm-collector: storage failure: %s\n", sqlite3_errmsg(s->db));
        exec(s->db, "ROLLBACK");
        note_failure(s, code);
        for (job_t *j = jobs; j != NULL; j = j->next) {
            coll_batch_t *b = j->batch;
            b->accepted = b->duplicates = 0;
            for (size_t i = 0; i < b->nreports; i++) {
                b->reports[i].is_new = 0;
            }
        }
        return -1;
    }
    /* Durable now: publish to the aggregates before anyone is told 2xx. */
    coll_agg_lock(s->agg);
    for (job_t *j = jobs; j != NULL; j = j->next) {
        coll_batch_t *b = j->batch;
        for (size_t i = 0; i < b->nreports; i++) {
            const coll_report_t *r = &b->reports[i];
            if (r->is_new) {
                coll_agg_add_batch_report_locked(s->agg, r);
            }
        }
        for (size_t i = 0; i < b->ncounts; i++) {
            coll_agg_count_reject_locked(s->agg, b->counts[i].campaign_id, b->counts[i].reason,
                                         b->counts[i].count);
        }
        if (b->lost_reports > 0 && b->rejects_total == 0) {
            coll_agg_count_lost_locked(s->agg, b->lost_reports);
        }
    }
    coll_agg_unlock(s->agg);
    return 0;
}

static void *writer_main(void *arg)
{
    coll_store_t *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->head == NULL && !s->stopping) {
            pthread_cond_wait(&s->work, &s->mu);
        }
        if (s->head == NULL) {
            break; /* stopping and nothing left */
        }
        job_t *jobs = s->head;
        s->head = s->tail = NULL;
        pthread_mutex_unlock(&s->mu);

        int rc = commit_group(s, jobs);
        unsigned long long n = 0;
        pthread_mutex_lock(&s->mu);
        for (job_t *j = jobs; j != NULL;) {
            job_t *next = j->next; /* j lives on the waiter's stack: read next first */
            j->rc = rc;
            j->done = 1;
            j = next;
            n++;
        }
        s->commits++;
        if (n > s->max_group) {
            s->max_group = n;
        }
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int coll_store_commit(coll_store_t *s, coll_batch_t *b)
{
    job_t job = {b, 0, 0, NULL};
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    if (s->tail != NULL) {
        s->tail->next = &job;
    } else {
        s->head = &job;
    }
    s->tail = &job;
    pthread_cond_signal(&s->work);
    while (!job.done) {
        pthread_cond_wait(&s->done, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return job.rc;
}

void coll_store_stats(coll_store_t *s, unsigned long long *commits, unsigned long long *max_group)
{
    pthread_mutex_lock(&s->mu);
    *commits = s->commits;
    *max_group = s->max_group;
    pthread_mutex_unlock(&s->mu);
}

int coll_store_health(coll_store_t *s, char *reason, size_t cap)
{
    pthread_mutex_lock(&s->mu);
    int64_t ago = mono_s() - s->last_failure_s;
    int bad = s->corrupt || (s->failures > 0 && ago < COLL_STORE_HEALTH_WINDOW_S);
    if (bad) {
        snprintf(reason, cap, "%s: a commit failed %lld s ago (%s)",
                 s->corrupt ? "database corrupt" : "storage failure", (long long)ago,
                 s->last_error);
    }
    pthread_mutex_unlock(&s->mu);
    return bad ? -1 : 0;
}

static void close_db(coll_store_t *s)
{
    sqlite3_finalize(s->insert_report);
    sqlite3_finalize(s->count_reject);
    sqlite3_finalize(s->charge_quota);
    sqlite3_finalize(s->count_lost);
    if (s->db != NULL) {
        sqlite3_close(s->db);
    }
    if (s->lock_fd >= 0) {
        close(s->lock_fd);
    }
}

int coll_store_open(coll_store_t **out, const char *path, coll_campaigns_t *cs,
                    coll_aggregates_t *agg, coll_integrity_t integrity, char *err, size_t errcap)
{
    coll_store_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return fail(err, errcap, "out of memory");
    }
    s->lock_fd = -1;
    s->campaigns = cs;
    s->agg = agg;
    if (open_db(s, path, integrity, err, errcap) != 0 || check_campaigns(s, cs, err, errcap) != 0 ||
        load_state(s, err, errcap) != 0) {
        close_db(s);
        free(s);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    if (pthread_create(&s->writer, NULL, writer_main, s) != 0) {
        close_db(s);
        free(s);
        return fail(err, errcap, "cannot start the writer thread");
    }
    *out = s;
    return 0;
}

void coll_store_close(coll_store_t *s)
{
    if (s == NULL) {
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->writer, NULL);
    close_db(s);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
