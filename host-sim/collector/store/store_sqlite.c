/* SPDX-License-Identifier: Apache-2.0 */
/* The SQLite backend (store_backend.h): one file, WAL, synchronous=FULL, one collector per
 * file (an exclusive flock; maintenance commands do without it and rely on SQLite's locks).
 *
 * Schema version 3 (PRAGMA user_version):
 *   campaigns(id INTEGER PRIMARY KEY, mechanism, eps_q16, params_hash, campaign BLOB,
 *             first_seen)   the fingerprint every stored report was checked against; a
 *             campaigns file that changes a stored campaign's fingerprint is refused
 *   reports(seq INTEGER PRIMARY KEY, report_id BLOB, campaign_id, period, grp, nvalues,
 *           v0, v1, v2, v3, raw BLOB, received_at, device, UNIQUE (campaign_id, report_id))
 *       one row per stored report, in arrival order: its decoded tuple fields (roc_hist:
 *       grp 0, nvalues 0, the histogram only in raw), the exact bytes received and the
 *       credential that sent it (NULL: anonymous). Appended rows and one small unique index:
 *       each commit touches few pages (twice the throughput of a table keyed by report_id)
 *   quota(device, campaign_id, period, count) WITHOUT ROWID    reports stored per credential
 *   lost(device, count) WITHOUT ROWID    Batch.lost_reports per credential ('' anonymous)
 *   rejects(campaign_id, reason, shard, count) WITHOUT ROWID    by reason (campaign 0: not
 *       attributable), per writer
 *   agg_reports(campaign_id, period, shard, reports)            \  the sums the estimates
 *   agg_tuple(campaign_id, period, metric, grp, shard, n, s, ss)  | read, per campaign,
 *   agg_roc(campaign_id, period, bin, shard, pos, neg)           /  period and writer
 *   agg_lost(shard, count)                                       lost reports per writer
 *   agg_vec(campaign_id, period, idx, shard, s)    dpauc / ustat_* vector sums (agg_auc.h);
 *       made at open if missing (no version change: an older database holds no report of
 *       those mechanisms, so its empty table is exact)
 * Version 2 (dpm-collector 0.1.0) had no agg_* tables and rejects without shard; version 0
 * had report_id unique on its own and no first_seen. Rows that migrations create carry the
 * shard ''. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/store/sqldb.h"
#include "collector/store/store_backend.h"
#include "common/err.h"

#define SCHEMA_VERSION 3

struct coll_backend {
    sqlite3 *db; /* writer */
    sqlite3 *rd; /* reader (serve mode) */
    pthread_mutex_t rd_mu;
    int lock_fd;
    coll_be_mode_t mode;
    char shard[COLL_SHARD_MAX + 1];
    sqlite3_stmt *insert_report, *undo_report, *count_reject, *charge_quota, *count_lost,
        *lost_total, *sum_reports, *sum_tuple, *sum_roc, *sum_vec;
    int err_code; /* of the last failure */
    char err_msg[160];
};

static const char REPORTS_COLUMNS[] =
    "(seq INTEGER PRIMARY KEY, report_id BLOB NOT NULL, campaign_id INTEGER NOT NULL,"
    " period INTEGER NOT NULL, grp INTEGER NOT NULL, nvalues INTEGER NOT NULL,"
    " v0 INTEGER, v1 INTEGER, v2 INTEGER, v3 INTEGER, raw BLOB NOT NULL,"
    " received_at INTEGER NOT NULL, device TEXT, UNIQUE (campaign_id, report_id))";

/* The tables version 2 has besides reports (created if missing when upgrading from 0). */
static const char SCHEMA_V2[] =
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

/* Version 0 (report_id unique on its own, no first_seen) to 2. %s: REPORTS_COLUMNS. */
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

/* The sums (version 3). */
static const char SCHEMA_V3_SUMS[] =
    "CREATE TABLE agg_reports (campaign_id INTEGER NOT NULL, period INTEGER NOT NULL,"
    "  shard TEXT NOT NULL, reports INTEGER NOT NULL,"
    "  PRIMARY KEY (campaign_id, period, shard)) WITHOUT ROWID;"
    "CREATE TABLE agg_tuple (campaign_id INTEGER NOT NULL, period INTEGER NOT NULL,"
    "  metric INTEGER NOT NULL, grp INTEGER NOT NULL, shard TEXT NOT NULL,"
    "  n INTEGER NOT NULL, s INTEGER NOT NULL, ss REAL NOT NULL,"
    "  PRIMARY KEY (campaign_id, period, metric, grp, shard)) WITHOUT ROWID;"
    "CREATE TABLE agg_roc (campaign_id INTEGER NOT NULL, period INTEGER NOT NULL,"
    "  bin INTEGER NOT NULL, shard TEXT NOT NULL, pos INTEGER NOT NULL, neg INTEGER NOT NULL,"
    "  PRIMARY KEY (campaign_id, period, bin, shard)) WITHOUT ROWID;"
    "CREATE TABLE agg_lost (shard TEXT NOT NULL PRIMARY KEY, count INTEGER NOT NULL)"
    "  WITHOUT ROWID;";

/* Version 2 to 3: rejects per writer, the sums (back-filled by migrate_2_to_3 in C). */
static const char MIGRATE_2_TO_3[] =
    "CREATE TABLE rejects_v3 (campaign_id INTEGER NOT NULL, reason TEXT NOT NULL,"
    "  shard TEXT NOT NULL, count INTEGER NOT NULL,"
    "  PRIMARY KEY (campaign_id, reason, shard)) WITHOUT ROWID;"
    "INSERT INTO rejects_v3 SELECT campaign_id, reason, '', count FROM rejects;"
    "DROP TABLE rejects;"
    "ALTER TABLE rejects_v3 RENAME TO rejects;"
    "INSERT INTO agg_lost SELECT '', SUM(count) FROM lost HAVING SUM(count) > 0;";

/* Remember the writer connection's last error for error(). */
static int db_fail(coll_backend_t *b)
{
    b->err_code = sqlite3_extended_errcode(b->db);
    snprintf(b->err_msg, sizeof(b->err_msg), "%s", sqlite3_errmsg(b->db));
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

/* ---- start-up ------------------------------------------------------------------------------ */

/* PRAGMA integrity_check (or quick_check): every b-tree page, and (full) every index entry
 * against its table row. A damaged report_id index would otherwise fail commits at random. */
static int check_integrity(sqlite3 *db, coll_integrity_t mode, char *err, size_t cap)
{
    if (mode == COLL_INTEGRITY_OFF) {
        return 0;
    }
    const char *sql =
        mode == COLL_INTEGRITY_FULL ? "PRAGMA integrity_check(8)" : "PRAGMA quick_check(8)";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        return host_fail(err, cap, "integrity check failed: %s", sqlite3_errmsg(db));
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
        return host_fail(err, cap, "integrity check failed: %s", sqlite3_errmsg(db));
    }
    if (rows != 1 || strcmp(first, "ok") != 0) {
        return host_fail(err, cap,
                         "integrity check failed (%s): %s; refusing to start. Restore the "
                         "database from a backup, or run sqlite3 .recover on a copy (README)",
                         mode == COLL_INTEGRITY_FULL ? "integrity_check" : "quick_check", first);
    }
    return 0;
}

static int write_sums(coll_backend_t *b, const coll_deltas_t *d, const char *shard);
static int write_vec(coll_backend_t *b, const coll_vsums_t *v, const char *shard);

/* Back-fill the sums from every stored report (once, in the migration's transaction). */
typedef struct {
    coll_deltas_t d;
    int bad;
} backfill_t;

static int scan_reports_db(sqlite3 *db, coll_report_cb cb, void *ctx, char *err, size_t cap);

static void backfill_one(void *ctx, const coll_report_t *r)
{
    backfill_t *bf = ctx;
    if (coll_deltas_add(&bf->d, r) != 0) {
        bf->bad++;
    }
}

static int prepare(coll_backend_t *b);

static int migrate_2_to_3(coll_backend_t *b, char *err, size_t cap)
{
    if (exec(b->db, SCHEMA_V3_SUMS) != 0 || exec(b->db, MIGRATE_2_TO_3) != 0 || prepare(b) != 0) {
        return host_fail(err, cap, "%s", sqlite3_errmsg(b->db));
    }
    backfill_t bf;
    memset(&bf, 0, sizeof(bf));
    int rc = scan_reports_db(b->db, backfill_one, &bf, err, cap);
    if (rc == 0 && bf.bad > 0) {
        rc = host_fail(err, cap, "%d stored reports cannot be summed (damaged rows)", bf.bad);
    }
    if (rc == 0 && (write_sums(b, &bf.d, "") != 0 || write_vec(b, &bf.d.vec, "") != 0)) {
        rc = host_fail(err, cap, "%s", sqlite3_errmsg(b->db));
    }
    coll_deltas_free(&bf.d);
    return rc;
}

/* 1 if the database holds a collector's schema (its reports table), 0 if not, -1 on error. */
#define HAS_REPORTS "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'reports'"

/* Create the schema, or bring an older database to SCHEMA_VERSION in one transaction. */
static int create_or_migrate(coll_backend_t *b, int *from, char *err, size_t cap)
{
    sqlite3_int64 version = query_int(b->db, "PRAGMA user_version");
    sqlite3_int64 has_reports = query_int(b->db, HAS_REPORTS);
    char sql[2048];
    if (version < 0 || has_reports < 0) {
        return host_fail(err, cap, "database: %s", sqlite3_errmsg(b->db));
    }
    *from = has_reports ? (int)version : -1;
    if (version > SCHEMA_VERSION) {
        return host_fail(err, cap,
                         "database schema version %lld is newer than this collector's (%d): it was "
                         "written by a newer dpm-collector; run that version (or restore a backup "
                         "made before the upgrade)",
                         (long long)version, SCHEMA_VERSION);
    }
    if (version == SCHEMA_VERSION) {
        return 0;
    }
    if (has_reports && version != 0 && version != 2) {
        return host_fail(err, cap, "database schema version %lld: no migration from it is known",
                         (long long)version);
    }
    if (exec(b->db, "BEGIN IMMEDIATE") != 0) {
        return host_fail(err, cap, "database: %s", sqlite3_errmsg(b->db));
    }
    /* A new database is made as version 2 and migrated like any other: one way to the
     * current schema. */
    int rc = 0;
    if (!has_reports) {
        snprintf(sql, sizeof(sql), "CREATE TABLE reports %s;", REPORTS_COLUMNS);
        if (exec(b->db, sql) != 0 || exec(b->db, SCHEMA_V2) != 0) {
            rc = host_fail(err, cap, "%s", sqlite3_errmsg(b->db));
        }
    } else if (version == 0) {
        snprintf(sql, sizeof(sql), MIGRATE_0_TO_2, REPORTS_COLUMNS);
        if (exec(b->db, sql) != 0 || exec(b->db, SCHEMA_V2) != 0) {
            rc = host_fail(err, cap, "%s", sqlite3_errmsg(b->db));
        }
    }
    if (rc == 0) {
        rc = migrate_2_to_3(b, err, cap);
    }
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", SCHEMA_VERSION);
    if (rc == 0 && (exec(b->db, sql) != 0 || exec(b->db, "COMMIT") != 0)) {
        rc = host_fail(err, cap, "%s", sqlite3_errmsg(b->db));
    }
    if (rc != 0) {
        char why[512];
        snprintf(why, sizeof(why), "%s", err);
        host_fail(err, cap, "database schema %lld -> %d: %s", (long long)version, SCHEMA_VERSION,
                  why);
        exec(b->db, "ROLLBACK");
        return -1;
    }
    return 0;
}

static const char AGG_VEC[] =
    "CREATE TABLE IF NOT EXISTS agg_vec (campaign_id INTEGER NOT NULL, period INTEGER NOT NULL,"
    "  idx INTEGER NOT NULL, shard TEXT NOT NULL, s INTEGER NOT NULL,"
    "  PRIMARY KEY (campaign_id, period, idx, shard)) WITHOUT ROWID;";

/* The writer's statements (prepare). */
static const char SQL_SUM_VEC[] = "INSERT INTO agg_vec(campaign_id, period, idx, shard, s)"
                                  " VALUES (?, ?, ?, ?, ?) ON CONFLICT(campaign_id, period, "
                                  "idx, shard) DO UPDATE SET s = s + excluded.s";

static const char SQL_INSERT_REPORT[] =
    "INSERT OR IGNORE INTO reports(report_id, campaign_id, period, grp,"
    " nvalues, v0, v1, v2, v3, raw, received_at, device)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

static const char SQL_COUNT_REJECT[] =
    "INSERT INTO rejects(campaign_id, reason, shard, count)"
    " VALUES (?, ?, ?, ?) ON CONFLICT(campaign_id, reason, shard)"
    " DO UPDATE SET count = count + excluded.count";

static const char SQL_CHARGE_QUOTA[] =
    "INSERT INTO quota(device, campaign_id, period, count) VALUES (?, ?, ?, ?)"
    " ON CONFLICT(device, campaign_id, period) DO UPDATE"
    " SET count = count + excluded.count RETURNING count";

static const char SQL_UNDO_REPORT[] = "DELETE FROM reports WHERE campaign_id = ? AND report_id = ?";

static const char SQL_COUNT_LOST[] = "INSERT INTO lost(device, count) VALUES (?, ?)"
                                     " ON CONFLICT(device) DO UPDATE SET count = count + "
                                     "excluded.count";

static const char SQL_LOST_TOTAL[] = "INSERT INTO agg_lost(shard, count) VALUES (?, ?)"
                                     " ON CONFLICT(shard) DO UPDATE SET count = count + "
                                     "excluded.count";

static const char SQL_SUM_REPORTS[] = "INSERT INTO agg_reports(campaign_id, period, shard, reports)"
                                      " VALUES (?, ?, ?, ?) ON CONFLICT(campaign_id, period, shard)"
                                      " DO UPDATE SET reports = reports + excluded.reports";

static const char SQL_SUM_TUPLE[] =
    "INSERT INTO agg_tuple(campaign_id, period, metric, grp, shard, n, s, ss)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT(campaign_id, period, metric, grp, shard) DO UPDATE"
    " SET n = n + excluded.n, s = s + excluded.s, ss = ss + excluded.ss";

static const char SQL_SUM_ROC[] = "INSERT INTO agg_roc(campaign_id, period, bin, shard, pos, "
                                  "neg) VALUES (?, ?, ?, ?, ?, ?)"
                                  " ON CONFLICT(campaign_id, period, bin, shard) DO UPDATE"
                                  " SET pos = pos + excluded.pos, neg = neg + excluded.neg";

static int prepare(coll_backend_t *b)
{
    if (b->insert_report != NULL) {
        return 0; /* prepared already (during a migration) */
    }
    const struct {
        sqlite3_stmt **q;
        const char *sql;
    } S[] = {{&b->sum_vec, SQL_SUM_VEC},           {&b->insert_report, SQL_INSERT_REPORT},
             {&b->count_reject, SQL_COUNT_REJECT}, {&b->charge_quota, SQL_CHARGE_QUOTA},
             {&b->undo_report, SQL_UNDO_REPORT},   {&b->count_lost, SQL_COUNT_LOST},
             {&b->lost_total, SQL_LOST_TOTAL},     {&b->sum_reports, SQL_SUM_REPORTS},
             {&b->sum_tuple, SQL_SUM_TUPLE},       {&b->sum_roc, SQL_SUM_ROC}};
    if (exec(b->db, AGG_VEC) != 0) {
        return -1;
    }
    for (size_t i = 0; i < sizeof(S) / sizeof(S[0]); i++) {
        if (sqlite3_prepare_v2(b->db, S[i].sql, -1, S[i].q, NULL) != SQLITE_OK) {
            return -1;
        }
    }
    return 0;
}

static void be_close(coll_backend_t *b)
{
    if (b == NULL) {
        return;
    }
    sqlite3_finalize(b->insert_report);
    sqlite3_finalize(b->undo_report);
    sqlite3_finalize(b->count_reject);
    sqlite3_finalize(b->charge_quota);
    sqlite3_finalize(b->count_lost);
    sqlite3_finalize(b->lost_total);
    sqlite3_finalize(b->sum_reports);
    sqlite3_finalize(b->sum_tuple);
    sqlite3_finalize(b->sum_roc);
    sqlite3_finalize(b->sum_vec);
    if (b->rd != NULL) {
        sqlite3_close(b->rd);
    }
    if (b->db != NULL) {
        sqlite3_close(b->db);
    }
    if (b->lock_fd >= 0) {
        close(b->lock_fd);
    }
    pthread_mutex_destroy(&b->rd_mu);
    free(b);
}

/* COLL_BE_READ: a read-only connection to a file a collector serves or served. It takes no
 * lock and changes nothing (no WAL switch, no migration, no agg_vec table), so an analyst may
 * read a live collector's database or a backup. The schema must be this collector's: an older
 * one is migrated by `dpm-collector migrate` (a write), a newer one needs a newer reader. */
static int rd_fail(sqlite3 *db, char *err, size_t cap);

static int open_reader(coll_backend_t *b, const char *path, char *err, size_t cap)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        return host_fail(err, cap, "no database file at %s: give the --db of a collector", path);
    }
    if (sqlite3_open_v2(path, &b->rd, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        return host_fail(err, cap, "cannot open database %s: %s", path,
                         b->rd ? sqlite3_errmsg(b->rd) : "out of memory");
    }
    sqlite3_busy_timeout(b->rd, 5000);
    sqlite3_int64 v = query_int(b->rd, "PRAGMA user_version");
    sqlite3_int64 vec =
        query_int(b->rd, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'agg_vec'");
    if (v < 0 || vec < 0) {
        return host_fail(err, cap, "database %s cannot be read (%s): is it a collector's database?",
                         path, sqlite3_errmsg(b->rd));
    }
    if (v != SCHEMA_VERSION) {
        return host_fail(
            err, cap, "database %s has schema version %lld and this reader reads version %d: %s",
            path, (long long)v, SCHEMA_VERSION,
            v < SCHEMA_VERSION ? "bring it up to date first (dpm-collector migrate --db, on a copy "
                                 "if it must stay as it is)"
                               : "read it with the dpm-collector that wrote it");
    }
    if (vec != 1) {
        return host_fail(err, cap,
                         "database %s was never served by a collector of this version (it lacks "
                         "the agg_vec table): start one on it once, or read a copy migrated "
                         "with dpm-collector migrate",
                         path);
    }
    return 0;
}

static int be_read_campaign(coll_backend_t *b, uint32_t campaign_id, int64_t fingerprint[3],
                            int64_t *first_seen, char *err, size_t cap)
{
    sqlite3_stmt *q = NULL;
    pthread_mutex_lock(&b->rd_mu);
    int rc = -1;
    if (sqlite3_prepare_v2(b->rd,
                           "SELECT mechanism, eps_q16, params_hash, first_seen FROM campaigns"
                           " WHERE id = ?",
                           -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, campaign_id);
        int st = sqlite3_step(q);
        if (st == SQLITE_ROW) {
            for (int i = 0; i < 3; i++) {
                fingerprint[i] = sqlite3_column_int64(q, i);
            }
            *first_seen =
                sqlite3_column_type(q, 3) != SQLITE_NULL ? sqlite3_column_int64(q, 3) : -1;
            rc = 1;
        } else if (st == SQLITE_DONE) {
            rc = 0;
        }
    }
    if (rc < 0) {
        rd_fail(b->rd, err, cap);
    }
    sqlite3_finalize(q);
    pthread_mutex_unlock(&b->rd_mu);
    return rc;
}

static int be_open(coll_backend_t **out, const char *path, coll_be_mode_t mode,
                   const coll_store_options_t *o, int *from, char *err, size_t cap)
{
    coll_backend_t *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return host_fail(err, cap, "out of memory");
    }
    b->lock_fd = -1;
    b->mode = mode;
    pthread_mutex_init(&b->rd_mu, NULL);
    snprintf(b->shard, sizeof(b->shard), "%s", coll_shard_of(o));
    char msg[384];
    /* A database that is missing is created. One that exists but is empty is not: a collector's
     * file holds its schema from its first start on (switching to WAL writes the header), so
     * an empty one was truncated or replaced, and starting it afresh would hide the loss of
     * every report and restart periods and quotas of campaigns without a start. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
        host_fail(
            err, cap,
            "database %s is an empty (0-byte) file, so it was truncated or replaced: move it "
            "away and restore the latest backup (dpm-collector restore --from BACKUP --db %s); "
            "delete it only if it never held reports (an interrupted first start)",
            path, path);
        goto bad;
    }
    if (mode == COLL_BE_READ) {
        if (open_reader(b, path, err, cap) != 0) {
            goto bad;
        }
        *out = b;
        return 0;
    }
    if (mode == COLL_BE_SERVE) {
        /* One collector per file: its writer is the only one, so group commit never waits for
         * another process. The flock is independent of SQLite's own fcntl locks, and this
         * descriptor stays open until after sqlite3_close. */
        b->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (b->lock_fd < 0) {
            host_fail(err, cap, "cannot open database %s: %s", path, strerror(errno));
            goto bad;
        }
        if (flock(b->lock_fd, LOCK_EX | LOCK_NB) != 0) {
            host_fail(err, cap, "database %s is in use by another collector", path);
            goto bad;
        }
    }
    if (sqlite3_open_v2(path, &b->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        host_fail(err, cap, "cannot open database %s: %s", path,
                  b->db ? sqlite3_errmsg(b->db) : "out of memory");
        goto bad;
    }
    sqlite3_busy_timeout(b->db, 5000);
    sqlite3_stmt *q = NULL;
    int wal = 0;
    if (sqlite3_prepare_v2(b->db, "PRAGMA journal_mode=WAL", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
        const unsigned char *m = sqlite3_column_text(q, 0);
        wal = m != NULL && strcmp((const char *)m, "wal") == 0;
    }
    sqlite3_finalize(q);
    if (!wal) {
        host_fail(err, cap, "database %s: cannot switch to WAL mode: %s", path,
                  sqlite3_errmsg(b->db));
        goto bad;
    }
    if (check_integrity(b->db, o != NULL ? o->integrity : COLL_INTEGRITY_OFF, msg, sizeof(msg)) !=
        0) {
        host_fail(err, cap, "database %s: %s", path, msg);
        goto bad;
    }
    /* synchronous=FULL: every COMMIT fsyncs the WAL, so a 2xx survives power loss; then the
     * cache and checkpoint tuning every connection of the database shares (sqldb.h). */
    if (exec(b->db, "PRAGMA synchronous=FULL") != 0 || exec(b->db, SQLDB_SQLITE_TUNING) != 0) {
        host_fail(err, cap, "database %s: %s", path, sqlite3_errmsg(b->db));
        goto bad;
    }
    if (create_or_migrate(b, from, msg, sizeof(msg)) != 0) {
        host_fail(err, cap, "database %s: %s", path, msg);
        goto bad;
    }
    if (prepare(b) != 0) {
        host_fail(err, cap, "database %s: %s", path, sqlite3_errmsg(b->db));
        goto bad;
    }
    if (mode == COLL_BE_SERVE) {
        if (sqlite3_open_v2(path, &b->rd, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
            host_fail(err, cap, "database %s: cannot open a reader: %s", path,
                      b->rd ? sqlite3_errmsg(b->rd) : "out of memory");
            goto bad;
        }
        sqlite3_busy_timeout(b->rd, 5000);
    }
    *out = b;
    return 0;
bad:
    be_close(b);
    return -1;
}

/* Record new campaigns (with the time they were first seen); refuse a stored campaign whose
 * fingerprint the file changed (its stored reports were validated against the old one and
 * would be mixed into the estimate). A campaign without a start in the file starts when it
 * was first seen. */
static int be_check_campaigns(coll_backend_t *b, coll_campaigns_t *cs, int64_t now, char *err,
                              size_t cap)
{
    sqlite3_stmt *get = NULL, *put = NULL, *seen = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(b->db,
                           "SELECT mechanism, eps_q16, params_hash, first_seen FROM campaigns"
                           " WHERE id = ?",
                           -1, &get, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(b->db,
                           "INSERT INTO campaigns(id, mechanism, eps_q16, params_hash, campaign,"
                           " first_seen) VALUES (?, ?, ?, ?, ?, ?)",
                           -1, &put, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(b->db, "UPDATE campaigns SET first_seen = ? WHERE id = ?", -1, &seen,
                           NULL) != SQLITE_OK) {
        host_fail(err, cap, "database: %s", sqlite3_errmsg(b->db));
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
                host_fail(err, cap,
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
                    host_fail(err, cap, "database: %s", sqlite3_errmsg(b->db));
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
                host_fail(err, cap, "database: %s", sqlite3_errmsg(b->db));
                goto out;
            }
        } else {
            host_fail(err, cap, "database: %s", sqlite3_errmsg(b->db));
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

/* ---- the writer ------------------------------------------------------------------------------ */

static int be_begin(coll_backend_t *b)
{
    return exec(b->db, "BEGIN IMMEDIATE") == 0 ? 0 : db_fail(b);
}

static int be_commit(coll_backend_t *b)
{
    return exec(b->db, "COMMIT") == 0 ? 0 : db_fail(b);
}

static void be_rollback(coll_backend_t *b)
{
    exec(b->db, "ROLLBACK");
}

static coll_be_error_t be_error(coll_backend_t *b, char *msg, size_t cap)
{
    snprintf(msg, cap, "%s", b->err_msg[0] ? b->err_msg : sqlite3_errmsg(b->db));
    int primary = b->err_code & 0xFF;
    return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ? COLL_BE_CORRUPT : COLL_BE_FAIL;
}

static int be_insert_batch(coll_backend_t *b, coll_batch_t *batch, int64_t now)
{
    sqlite3_stmt *q = b->insert_report;
    int dev = coll_has_device(batch);
    for (size_t i = 0; i < batch->nreports; i++) {
        coll_report_t *r = &batch->reports[i];
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
        if (dev) {
            sqlite3_bind_text(q, 12, batch->device, -1, SQLITE_STATIC);
        } else {
            sqlite3_bind_null(q, 12);
        }
        if (sqlite3_step(q) != SQLITE_DONE) {
            return db_fail(b); /* the whole group rolls back */
        }
        r->is_new = sqlite3_changes(b->db) == 1;
        if (r->is_new) {
            batch->accepted++;
        } else {
            batch->duplicates++;
        }
    }
    return 0;
}

static int be_undo_batch(coll_backend_t *b, const coll_batch_t *batch)
{
    sqlite3_stmt *q = b->undo_report;
    for (size_t i = 0; i < batch->nreports; i++) {
        const coll_report_t *r = &batch->reports[i];
        if (!r->is_new) {
            continue;
        }
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, r->campaign_id);
        sqlite3_bind_blob(q, 2, r->report_id, DPM_REPORT_ID_BYTES, SQLITE_STATIC);
        if (sqlite3_step(q) != SQLITE_DONE) {
            return db_fail(b);
        }
    }
    return 0;
}

static int be_charge_quotas(coll_backend_t *b, coll_quota_t *qs, size_t n)
{
    sqlite3_stmt *q = b->charge_quota;
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(q);
        sqlite3_bind_text(q, 1, qs[i].device, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, qs[i].campaign_id);
        sqlite3_bind_int64(q, 3, qs[i].period);
        sqlite3_bind_int64(q, 4, qs[i].delta);
        if (sqlite3_step(q) != SQLITE_ROW) {
            return db_fail(b);
        }
        qs[i].after = sqlite3_column_int64(q, 0);
        sqlite3_reset(q);
    }
    return 0;
}

static int be_count_rejects(coll_backend_t *b, const coll_reject_count_t *counts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sqlite3_stmt *q = b->count_reject;
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, counts[i].campaign_id);
        sqlite3_bind_text(q, 2, counts[i].reason, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, b->shard, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 4, (sqlite3_int64)counts[i].count);
        if (sqlite3_step(q) != SQLITE_DONE) {
            return db_fail(b);
        }
    }
    return 0;
}

static int be_count_lost(coll_backend_t *b, const char *device, uint64_t n)
{
    sqlite3_stmt *q = b->count_lost;
    sqlite3_reset(q);
    sqlite3_bind_text(q, 1, device, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, (sqlite3_int64)n);
    if (sqlite3_step(q) != SQLITE_DONE) {
        return db_fail(b);
    }
    q = b->lost_total;
    sqlite3_reset(q);
    sqlite3_bind_text(q, 1, b->shard, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, (sqlite3_int64)n);
    return sqlite3_step(q) == SQLITE_DONE ? 0 : db_fail(b);
}

static int step_done(coll_backend_t *b, sqlite3_stmt *q)
{
    return sqlite3_step(q) == SQLITE_DONE ? 0 : db_fail(b);
}

static int write_sums(coll_backend_t *b, const coll_deltas_t *ds, const char *shard)
{
    for (size_t i = 0; i < ds->n; i++) {
        const coll_delta_t *d = &ds->d[i];
        sqlite3_stmt *q = b->sum_reports;
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, d->campaign_id);
        sqlite3_bind_int64(q, 2, d->period);
        sqlite3_bind_text(q, 3, shard, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 4, (sqlite3_int64)d->reports);
        if (step_done(b, q) != 0) {
            return -1;
        }
        if (d->roc) {
            for (uint32_t k = 0; k < d->width; k++) {
                q = b->sum_roc;
                sqlite3_reset(q);
                sqlite3_bind_int64(q, 1, d->campaign_id);
                sqlite3_bind_int64(q, 2, d->period);
                sqlite3_bind_int64(q, 3, k);
                sqlite3_bind_text(q, 4, shard, -1, SQLITE_STATIC);
                sqlite3_bind_int64(q, 5, d->pos[k]);
                sqlite3_bind_int64(q, 6, d->neg[k]);
                if (step_done(b, q) != 0) {
                    return -1;
                }
            }
            continue;
        }
        for (uint32_t m = 0; m < d->width; m++) {
            for (uint32_t g = 0; g < DPM_MAX_GROUPS; g++) {
                if (d->n[m][g] == 0) {
                    continue;
                }
                q = b->sum_tuple;
                sqlite3_reset(q);
                sqlite3_bind_int64(q, 1, d->campaign_id);
                sqlite3_bind_int64(q, 2, d->period);
                sqlite3_bind_int64(q, 3, m);
                sqlite3_bind_int64(q, 4, g);
                sqlite3_bind_text(q, 5, shard, -1, SQLITE_STATIC);
                sqlite3_bind_int64(q, 6, (sqlite3_int64)d->n[m][g]);
                sqlite3_bind_int64(q, 7, d->s[m][g]);
                sqlite3_bind_double(q, 8, d->ss[m][g]);
                if (step_done(b, q) != 0) {
                    return -1;
                }
            }
        }
    }
    return 0;
}

static int write_vec(coll_backend_t *b, const coll_vsums_t *v, const char *shard)
{
    for (size_t i = 0; i < v->n; i++) {
        sqlite3_stmt *q = b->sum_vec;
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, v->e[i].campaign_id);
        sqlite3_bind_int64(q, 2, v->e[i].period);
        sqlite3_bind_int64(q, 3, v->e[i].idx);
        sqlite3_bind_text(q, 4, shard, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 5, v->e[i].sum);
        if (step_done(b, q) != 0) {
            return -1;
        }
    }
    return 0;
}

static int be_add_sums(coll_backend_t *b, const coll_deltas_t *d)
{
    return write_sums(b, d, b->shard) != 0 ? -1 : write_vec(b, &d->vec, b->shard);
}

/* ---- reads (the reader connection) --------------------------------------------------------- */

static int rd_fail(sqlite3 *db, char *err, size_t cap)
{
    return host_fail(err, cap, "database read: %s", sqlite3_errmsg(db));
}

/* Run sql with (campaign, from, to) bound (those that appear) and hand each row to fn. */
typedef void (*row_fn)(void *ctx, sqlite3_stmt *q);

static int each_row(sqlite3 *db, const char *sql, int nbind, const sqlite3_int64 *bind, row_fn fn,
                    void *ctx)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        return -1;
    }
    for (int i = 0; i < nbind; i++) {
        sqlite3_bind_int64(q, i + 1, bind[i]);
    }
    int st;
    while ((st = sqlite3_step(q)) == SQLITE_ROW) {
        fn(ctx, q);
    }
    sqlite3_finalize(q);
    return st == SQLITE_DONE ? 0 : -1;
}

static void row_reports(void *ctx, sqlite3_stmt *q)
{
    coll_state_add_reports(ctx, (uint64_t)sqlite3_column_int64(q, 0));
}

static void row_tuple(void *ctx, sqlite3_stmt *q)
{
    coll_state_add_tuple(ctx, (uint32_t)sqlite3_column_int64(q, 0),
                         (uint32_t)sqlite3_column_int64(q, 1), (uint64_t)sqlite3_column_int64(q, 2),
                         sqlite3_column_int64(q, 3), sqlite3_column_double(q, 4));
}

static void row_roc(void *ctx, sqlite3_stmt *q)
{
    coll_state_add_roc(ctx, (uint32_t)sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
                       sqlite3_column_int64(q, 2));
}

static void row_vec(void *ctx, sqlite3_stmt *q)
{
    sqlite3_int64 idx = sqlite3_column_int64(q, 0);
    coll_state_add_vec(ctx, idx >= 0 && idx < UINT32_MAX ? (uint32_t)idx : UINT32_MAX,
                       sqlite3_column_int64(q, 1));
}

static void row_reason(void *ctx, sqlite3_stmt *q)
{
    const unsigned char *r = sqlite3_column_text(q, 0);
    sqlite3_int64 n = sqlite3_column_int64(q, 1);
    if (r != NULL && n > 0) {
        coll_reasons_add(ctx, (const char *)r, (uint64_t)n);
    }
}

static int be_read_sums(coll_backend_t *b, uint32_t campaign_id, uint32_t from, uint32_t to,
                        coll_campaign_state_t *st, char *err, size_t cap)
{
    sqlite3_int64 k[3] = {campaign_id, from, to};
    pthread_mutex_lock(&b->rd_mu);
    /* one read transaction: the four queries see the same commit */
    int rc = exec(b->rd, "BEGIN") != 0 ||
                     each_row(b->rd,
                              "SELECT COALESCE(SUM(reports), 0) FROM agg_reports WHERE campaign_id "
                              "= ? AND period BETWEEN ? AND ?",
                              3, k, row_reports, st) != 0 ||
                     each_row(b->rd,
                              "SELECT metric, grp, SUM(n), SUM(s), SUM(ss) FROM agg_tuple WHERE "
                              "campaign_id = ? AND period BETWEEN ? AND ? GROUP BY metric, grp "
                              "ORDER BY metric, grp",
                              3, k, row_tuple, st) != 0 ||
                     each_row(b->rd,
                              "SELECT bin, SUM(pos), SUM(neg) FROM agg_roc WHERE campaign_id = ? "
                              "AND period BETWEEN ? AND ? GROUP BY bin ORDER BY bin",
                              3, k, row_roc, st) != 0 ||
                     each_row(b->rd,
                              "SELECT idx, SUM(s) FROM agg_vec WHERE campaign_id = ? AND period "
                              "BETWEEN ? AND ? GROUP BY idx ORDER BY idx",
                              3, k, row_vec, st) != 0 ||
                     each_row(b->rd,
                              "SELECT reason, SUM(count) FROM rejects WHERE campaign_id = ? GROUP "
                              "BY reason ORDER BY reason",
                              1, k, row_reason, &st->rejects) != 0
                 ? rd_fail(b->rd, err, cap)
                 : 0;
    exec(b->rd, "COMMIT");
    pthread_mutex_unlock(&b->rd_mu);
    return rc;
}

typedef struct {
    const coll_campaigns_t *cs;
    coll_totals_t *t;
} totals_ctx_t;

static void row_total_reports(void *ctx, sqlite3_stmt *q)
{
    ((totals_ctx_t *)ctx)->t->reports = (uint64_t)sqlite3_column_int64(q, 0);
}

static void row_total_lost(void *ctx, sqlite3_stmt *q)
{
    ((totals_ctx_t *)ctx)->t->lost_reports = (uint64_t)sqlite3_column_int64(q, 0);
}

static void row_unattributed(void *ctx, sqlite3_stmt *q)
{
    totals_ctx_t *tc = ctx;
    sqlite3_int64 cid = sqlite3_column_int64(q, 0);
    const unsigned char *r = sqlite3_column_text(q, 1);
    sqlite3_int64 n = sqlite3_column_int64(q, 2);
    if (r != NULL && n > 0 &&
        (cid <= 0 || cid > UINT32_MAX || coll_campaigns_index(tc->cs, (uint32_t)cid) < 0)) {
        coll_reasons_add(&tc->t->unattributed, (const char *)r, (uint64_t)n);
    }
}

static int be_read_totals(coll_backend_t *b, const coll_campaigns_t *cs, coll_totals_t *t,
                          char *err, size_t cap)
{
    totals_ctx_t tc = {cs, t};
    pthread_mutex_lock(&b->rd_mu);
    int rc = exec(b->rd, "BEGIN") != 0 ||
                     each_row(b->rd, "SELECT COALESCE(SUM(reports), 0) FROM agg_reports", 0, NULL,
                              row_total_reports, &tc) != 0 ||
                     each_row(b->rd, "SELECT COALESCE(SUM(count), 0) FROM agg_lost", 0, NULL,
                              row_total_lost, &tc) != 0 ||
                     each_row(b->rd,
                              "SELECT campaign_id, reason, SUM(count) FROM rejects GROUP BY "
                              "campaign_id, reason ORDER BY campaign_id, reason",
                              0, NULL, row_unattributed, &tc) != 0
                 ? rd_fail(b->rd, err, cap)
                 : 0;
    exec(b->rd, "COMMIT");
    pthread_mutex_unlock(&b->rd_mu);
    return rc;
}

/* ---- maintenance ----------------------------------------------------------------------------- */

static int scan_reports_db(sqlite3 *db, coll_report_cb cb, void *ctx, char *err, size_t cap)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT campaign_id, period, grp, nvalues, v0, v1, v2, v3, raw"
                           " FROM reports ORDER BY seq",
                           -1, &q, NULL) != SQLITE_OK) {
        return rd_fail(db, err, cap);
    }
    int st;
    while ((st = sqlite3_step(q)) == SQLITE_ROW) {
        coll_report_t r;
        memset(&r, 0, sizeof(r));
        r.campaign_id = (uint32_t)sqlite3_column_int64(q, 0);
        r.period = (uint32_t)sqlite3_column_int64(q, 1);
        r.group = (uint32_t)sqlite3_column_int64(q, 2);
        sqlite3_int64 nv = sqlite3_column_int64(q, 3);
        r.nvalues = (uint8_t)(nv >= 0 && nv <= DPM_CAMPAIGN_MAX_METRICS ? nv : 0xFF);
        for (int k = 0; k < DPM_CAMPAIGN_MAX_METRICS; k++) {
            r.value[k] = (int32_t)sqlite3_column_int64(q, 4 + k);
        }
        r.raw = sqlite3_column_blob(q, 8);
        r.raw_len = (uint32_t)sqlite3_column_bytes(q, 8);
        cb(ctx, &r);
    }
    sqlite3_finalize(q);
    return st == SQLITE_DONE ? 0 : rd_fail(db, err, cap);
}

static int be_scan_reports(coll_backend_t *b, coll_report_cb cb, void *ctx, char *err, size_t cap)
{
    return scan_reports_db(b->db, cb, ctx, err, cap);
}

typedef struct {
    coll_sum_cb cb;
    void *ctx;
    int kind;
} sums_ctx_t;

static void row_sum(void *ctx, sqlite3_stmt *q)
{
    sums_ctx_t *sc = ctx;
    uint32_t cid = (uint32_t)sqlite3_column_int64(q, 0);
    uint32_t period = (uint32_t)sqlite3_column_int64(q, 1);
    if (sc->kind == 0) {
        sc->cb(sc->ctx, 0, cid, period, 0, 0, sqlite3_column_int64(q, 2), 0, 0.0);
    } else if (sc->kind == 1) {
        sc->cb(sc->ctx, 1, cid, period, (uint32_t)sqlite3_column_int64(q, 2),
               (uint32_t)sqlite3_column_int64(q, 3), sqlite3_column_int64(q, 4),
               sqlite3_column_int64(q, 5), sqlite3_column_double(q, 6));
    } else if (sc->kind == 2) {
        sc->cb(sc->ctx, 2, cid, period, (uint32_t)sqlite3_column_int64(q, 2), 0,
               sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 3), 0.0);
    } else {
        sc->cb(sc->ctx, 3, cid, period, (uint32_t)sqlite3_column_int64(q, 2), 0, 0,
               sqlite3_column_int64(q, 3), 0.0);
    }
}

static int be_scan_sums(coll_backend_t *b, coll_sum_cb cb, void *ctx, char *err, size_t cap)
{
    static const char *const SQL[4] = {
        /* by kind (row_sum) */
        "SELECT campaign_id, period, SUM(reports) FROM agg_reports GROUP BY 1, 2",
        ("SELECT campaign_id, period, metric, grp, SUM(n), SUM(s), SUM(ss) FROM agg_tuple"
         " GROUP BY 1, 2, 3, 4"),
        "SELECT campaign_id, period, bin, SUM(pos), SUM(neg) FROM agg_roc GROUP BY 1, 2, 3",
        "SELECT campaign_id, period, idx, SUM(s) FROM agg_vec GROUP BY 1, 2, 3"};
    for (int kind = 0; kind < 4; kind++) {
        sums_ctx_t sc = {cb, ctx, kind};
        if (each_row(b->db, SQL[kind], 0, NULL, row_sum, &sc) != 0) {
            return rd_fail(b->db, err, cap);
        }
    }
    return 0;
}

/* Runs each "DELETE ... WHERE campaign_id = ? AND period < ?" on the writer; *first = the rows
 * the first one deleted. 0, or -1 (db_fail). */
static int delete_before(coll_backend_t *b, const char *const *sql, size_t n, uint32_t campaign_id,
                         uint32_t cutoff, uint64_t *first)
{
    for (size_t i = 0; i < n; i++) {
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(b->db, sql[i], -1, &q, NULL) != SQLITE_OK) {
            return db_fail(b);
        }
        sqlite3_bind_int64(q, 1, campaign_id);
        sqlite3_bind_int64(q, 2, cutoff);
        int st = sqlite3_step(q);
        sqlite3_finalize(q);
        if (st != SQLITE_DONE) {
            return db_fail(b);
        }
        if (i == 0) {
            *first = (uint64_t)sqlite3_changes(b->db);
        }
    }
    return 0;
}

static int be_drop_periods(coll_backend_t *b, uint32_t campaign_id, uint32_t cutoff,
                           uint64_t *reports, uint64_t *periods)
{
    static const char *const SQL[] = {
        "DELETE FROM reports WHERE campaign_id = ? AND period < ?",
        "DELETE FROM agg_reports WHERE campaign_id = ? AND period < ?",
        "DELETE FROM agg_tuple WHERE campaign_id = ? AND period < ?",
        "DELETE FROM agg_roc WHERE campaign_id = ? AND period < ?",
        "DELETE FROM agg_vec WHERE campaign_id = ? AND period < ?",
        "DELETE FROM quota WHERE campaign_id = ? AND period < ?",
    };
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(b->db,
                           "SELECT COUNT(DISTINCT period) FROM agg_reports WHERE campaign_id = ? "
                           "AND period < ?",
                           -1, &q, NULL) != SQLITE_OK) {
        return db_fail(b);
    }
    sqlite3_bind_int64(q, 1, campaign_id);
    sqlite3_bind_int64(q, 2, cutoff);
    *periods = sqlite3_step(q) == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(q, 0) : 0;
    sqlite3_finalize(q);
    return delete_before(b, SQL, sizeof(SQL) / sizeof(SQL[0]), campaign_id, cutoff, reports);
}

static int be_drop_fedauc(coll_backend_t *b, uint32_t campaign_id, uint32_t cutoff,
                          uint64_t *uploads)
{
    static const char *const SQL[] = {
        "DELETE FROM fedauc_uploads WHERE campaign_id = ? AND period < ?",
        "DELETE FROM fedauc_phases WHERE campaign_id = ? AND period < ?",
    };
    *uploads = 0;
    sqlite3_int64 tables =
        query_int(b->db, "SELECT COUNT(*) FROM sqlite_master WHERE type = "
                         "'table' AND name IN ('fedauc_uploads', 'fedauc_phases')");
    if (tables < 0) {
        return db_fail(b);
    }
    if (tables != 2) {
        return 0; /* no FedAUC tables yet (created by the first collector that serves) */
    }
    return delete_before(b, SQL, sizeof(SQL) / sizeof(SQL[0]), campaign_id, cutoff, uploads);
}

static int64_t be_first_seen(coll_backend_t *b, uint32_t campaign_id)
{
    sqlite3_stmt *q = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(b->db, "SELECT first_seen FROM campaigns WHERE id = ?", -1, &q, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(q, 1, campaign_id);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
            v = sqlite3_column_int64(q, 0);
        }
    }
    sqlite3_finalize(q);
    return v;
}

static int be_backup(const char *path, const char *to, char *err, size_t cap);
static int be_restore(const char *from, const char *path, char *err, size_t cap);

const coll_backend_ops_t coll_sqlite_backend = {
    .name = "sqlite",
    .open = be_open,
    .schema_version = SCHEMA_VERSION,
    .check_campaigns = be_check_campaigns,
    .begin = be_begin,
    .insert_batch = be_insert_batch,
    .undo_batch = be_undo_batch,
    .charge_quotas = be_charge_quotas,
    .count_rejects = be_count_rejects,
    .count_lost = be_count_lost,
    .add_sums = be_add_sums,
    .commit = be_commit,
    .rollback = be_rollback,
    .error = be_error,
    .read_sums = be_read_sums,
    .read_totals = be_read_totals,
    .read_campaign = be_read_campaign,
    .scan_reports = be_scan_reports,
    .scan_sums = be_scan_sums,
    .drop_periods = be_drop_periods,
    .drop_fedauc = be_drop_fedauc,
    .first_seen = be_first_seen,
    .close = be_close,
    .backup = be_backup,
    .restore = be_restore,
};

/* ---- backup and restore -------------------------------------------------------------------- */

/* Open the database file at path with flags; NULL with "cannot <verb> <path>: why" in err. */
static sqlite3 *open_file(const char *path, int flags, const char *verb, char *err, size_t cap)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        host_fail(err, cap, "cannot %s %s: %s", verb, path,
                  db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* Copy database src into a new file at to, with the online backup API: one step over every
 * page inside one read transaction, so writers in WAL mode go on and the copy is consistent. */
static int copy_db(sqlite3 *src, const char *to, char *err, size_t cap)
{
    if (access(to, F_OK) == 0) {
        return host_fail(err, cap, "%s exists: give a new file name", to);
    }
    sqlite3 *dst = open_file(to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "create", err, cap);
    if (dst == NULL) {
        return -1;
    }
    sqlite3_backup *bk = sqlite3_backup_init(dst, "main", src, "main");
    int rc = -1;
    if (bk == NULL) {
        host_fail(err, cap, "backup: %s", sqlite3_errmsg(dst));
    } else {
        int st = sqlite3_backup_step(bk, -1);
        sqlite3_backup_finish(bk);
        if (st != SQLITE_DONE) {
            host_fail(err, cap, "backup: %s", sqlite3_errstr(st));
        } else {
            rc = 0;
        }
    }
    if (sqlite3_close(dst) != SQLITE_OK && rc == 0) {
        rc = host_fail(err, cap, "backup: cannot close %s", to);
    }
    if (rc != 0) {
        unlink(to);
    }
    return rc;
}

static int be_backup(const char *path, const char *to, char *err, size_t cap)
{
    sqlite3 *src = open_file(path, SQLITE_OPEN_READONLY, "open", err, cap);
    if (src == NULL) {
        return -1;
    }
    sqlite3_busy_timeout(src, 5000);
    sqlite3_int64 has = query_int(src, HAS_REPORTS);
    int rc = query_int(src, "PRAGMA user_version") < 0 || has < 0
                 ? host_fail(err, cap, "%s is not a database: %s", path, sqlite3_errmsg(src))
             : has == 0 ? host_fail(err, cap,
                                    "%s holds no collector database (an empty file?): "
                                    "nothing to back up",
                                    path)
                        : copy_db(src, to, err, cap);
    sqlite3_close(src);
    return rc;
}

static int be_restore(const char *from, const char *path, char *err, size_t cap)
{
    if (access(path, F_OK) == 0) {
        return host_fail(err, cap,
                         "%s exists: restore into a new file (stop the collector, move the damaged "
                         "database away, restore, start)",
                         path);
    }
    sqlite3 *src = open_file(from, SQLITE_OPEN_READONLY, "open", err, cap);
    if (src == NULL) {
        return -1;
    }
    char msg[384];
    sqlite3_int64 v = query_int(src, "PRAGMA user_version");
    int rc =
        v < 0 || query_int(src, HAS_REPORTS) != 1
            ? host_fail(err, cap, "%s is not a collector database (no reports table)", from)
        : v > SCHEMA_VERSION
            ? host_fail(err, cap, "%s has schema version %lld, newer than this collector's (%d)",
                        from, (long long)v, SCHEMA_VERSION)
        : check_integrity(src, COLL_INTEGRITY_FULL, msg, sizeof(msg)) != 0
            ? host_fail(err, cap, "%s: %s", from, msg)
            : copy_db(src, path, err, cap);
    sqlite3_close(src);
    return rc;
}
