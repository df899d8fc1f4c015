/* SPDX-License-Identifier: Apache-2.0 */
/* One DAP aggregator's durable state (dap_store.h): five tables, one transaction per call. */
#include "collector/dap/dap_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/dap_msg.h"
#include "collector/store/sqldb.h"
#include "mbedtls/sha256.h"

struct dap_store {
    sqldb_t *db;
    char err[256];
};

/* The tables, with the backend's names for a blob and a 64-bit integer. A collected batch is
 * an interval [lo, hi) of bucket starts: a bucket inside one takes no more reports. A report's
 * bytes (several KB) are a row of dap_report_bodies, apart from its dap_reports row: a job's
 * claim sets dap_reports.job on its reports, and SQLite rewrites a changed row whole, its
 * overflow pages included (with the bytes inside, a claim of 200 reports of the bench's shape
 * wrote 1.6 MB to the WAL). */
static const char *const SCHEMA[] = {
    "CREATE TABLE IF NOT EXISTS dap_reports (task %1$s NOT NULL, id %1$s NOT NULL, time %2$s NOT "
    "NULL, bucket %2$s NOT NULL, job %1$s, PRIMARY KEY (task, id))",
    "CREATE TABLE IF NOT EXISTS dap_report_bodies (task %1$s NOT NULL, id %1$s NOT NULL, report "
    "%1$s NOT NULL, PRIMARY KEY (task, id))",
    /* the claim's order, whole: on (task, time) alone, reports of one time (DAP rounds it to
     * the task's precision, so all of an hour's) were sorted by id at every claim */
    "DROP INDEX IF EXISTS dap_reports_free",
    "CREATE INDEX IF NOT EXISTS dap_reports_queue ON dap_reports (task, time, id) WHERE job IS "
    "NULL",
    /* and a job's reports in that order, read from the index, not sorted with their bytes */
    "DROP INDEX IF EXISTS dap_reports_job",
    "CREATE INDEX IF NOT EXISTS dap_reports_jobs ON dap_reports (task, job, time, id)",
    "CREATE TABLE IF NOT EXISTS dap_jobs (task %1$s NOT NULL, job %1$s NOT NULL, claimed %2$s NOT "
    "NULL, digest %1$s, errors %1$s, PRIMARY KEY (task, job))",
    "CREATE TABLE IF NOT EXISTS dap_aggregated (task %1$s NOT NULL, id %1$s NOT NULL, PRIMARY KEY "
    "(task, id))",
    "CREATE TABLE IF NOT EXISTS dap_buckets (task %1$s NOT NULL, bucket %2$s NOT NULL, agg %1$s "
    "NOT NULL, reports %2$s NOT NULL, checksum %1$s NOT NULL, PRIMARY KEY (task, bucket))",
    "CREATE TABLE IF NOT EXISTS dap_collected (task %1$s NOT NULL, lo %2$s NOT NULL, hi %2$s NOT "
    "NULL, PRIMARY KEY (task, lo))",
    "CREATE TABLE IF NOT EXISTS dap_rejects (task %1$s NOT NULL, error %2$s NOT NULL, n %2$s NOT "
    "NULL, PRIMARY KEY (task, error))",
    "CREATE TABLE IF NOT EXISTS dap_tasks (task %1$s PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS dap_releases (task %1$s NOT NULL, req %1$s NOT NULL, reports %2$s "
    "NOT NULL, checksum %1$s NOT NULL, buckets %2$s NOT NULL, body %1$s NOT NULL, PRIMARY KEY "
    "(task, req))",
};

static int fail(dap_store_t *s, const char *what)
{
    snprintf(s->err, sizeof(s->err), "%s: %s", what, sqldb_error(s->db));
    return DAP_STORE_FAIL;
}

/* Rolls back, and returns rc (a refusal) or the failure of `what`. */
static int undo(dap_store_t *s, int rc, const char *what)
{
    if (rc == DAP_STORE_FAIL) {
        (void)fail(s, what);
    }
    sqldb_rollback(s->db);
    return rc;
}

/* A store made before dap_report_bodies kept each report's bytes in dap_reports.report: they
 * move to dap_report_bodies, and the column goes, in one transaction. 0, or -1 (s->err). */
static int move_report_bodies(dap_store_t *s)
{
    const char *has_column =
        sqldb_is_pg(s->db)
            ? "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND "
              "table_name = 'dap_reports' AND column_name = 'report'"
            : "SELECT 1 FROM pragma_table_info('dap_reports') WHERE name = 'report'";
    int64_t old = sqldb_exec(s->db, has_column, NULL, 0, NULL, NULL);
    if (old <= 0) {
        return old < 0 ? fail(s, "dap store: reading dap_reports' columns") : 0;
    }
    if (sqldb_begin(s->db) != 0) {
        return fail(s, "dap store: moving report bytes to dap_report_bodies: begin");
    }
    if (sqldb_exec(s->db,
                   "INSERT INTO dap_report_bodies (task, id, report) SELECT task, id, report FROM "
                   "dap_reports",
                   NULL, 0, NULL, NULL) < 0 ||
        sqldb_exec(s->db, "ALTER TABLE dap_reports DROP COLUMN report", NULL, 0, NULL, NULL) < 0) {
        return undo(s, DAP_STORE_FAIL, "dap store: moving report bytes to dap_report_bodies");
    }
    return sqldb_commit(s->db) == 0
               ? 0
               : undo(s, DAP_STORE_FAIL, "dap store: moving report bytes: commit");
}

int dap_store_open(dap_store_t **out, const char *url, char *err, size_t cap)
{
    dap_store_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, cap, "dap store: out of memory");
        return -1;
    }
    if (sqldb_open(&s->db, url, err, cap) != 0) {
        free(s);
        return -1;
    }
    const int pg = sqldb_is_pg(s->db);
    for (size_t i = 0; i < sizeof(SCHEMA) / sizeof(SCHEMA[0]); i++) {
        char sql[512];
        snprintf(sql, sizeof(sql), SCHEMA[i], pg ? "BYTEA" : "BLOB", pg ? "BIGINT" : "INTEGER");
        if (sqldb_exec(s->db, sql, NULL, 0, NULL, NULL) < 0) {
            snprintf(err, cap, "dap store: creating its tables: %s", sqldb_error(s->db));
            dap_store_close(s);
            return -1;
        }
    }
    if (move_report_bodies(s) != 0) {
        snprintf(err, cap, "%s", s->err);
        dap_store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void dap_store_close(dap_store_t *s)
{
    if (s != NULL) {
        sqldb_close(s->db);
        free(s);
    }
}

const char *dap_store_error(const dap_store_t *s)
{
    return s->err;
}

/* 1 when the bucket lies in a collected batch, 0 if not, -1. */
static int collected(dap_store_t *s, const uint8_t *task, uint64_t bucket)
{
    sqldb_val_t in[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES), sqldb_int((int64_t)bucket),
                        sqldb_int((int64_t)bucket)};
    int64_t n =
        sqldb_exec(s->db, "SELECT 1 FROM dap_collected WHERE task = $1 AND lo <= $2 AND $3 < hi",
                   in, 3, NULL, NULL);
    return n < 0 ? -1 : n > 0;
}

/* PostgreSQL, where several leaders write at once (SQLite's BEGIN IMMEDIATE serializes every
 * writer already): the task's row, locked FOR SHARE by uploads and commits and FOR UPDATE by a
 * collection, so that a collection never runs beside an upload or a commit of its task. What
 * it reads is then every report committed into its batch, and nothing is added after it. */
static int lock_task(dap_store_t *s, const uint8_t *task, int collection)
{
    if (!sqldb_is_pg(s->db)) {
        return 0;
    }
    sqldb_val_t in[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES)};
    if (sqldb_exec(s->db, "INSERT INTO dap_tasks (task) VALUES ($1) ON CONFLICT DO NOTHING", in, 1,
                   NULL, NULL) < 0 ||
        sqldb_exec(s->db,
                   collection ? "SELECT 1 FROM dap_tasks WHERE task = $1 FOR UPDATE"
                              : "SELECT 1 FROM dap_tasks WHERE task = $1 FOR SHARE",
                   in, 1, NULL, NULL) != 1) {
        return -1;
    }
    return 0;
}

int dap_store_put_report(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                         const uint8_t id[DPM_DAP_REPORT_ID_BYTES], uint64_t time, uint64_t bucket,
                         const uint8_t *report, size_t len)
{
    if (sqldb_begin(s->db) != 0) {
        return fail(s, "put report: begin");
    }
    if (lock_task(s, task, 0) != 0) {
        return undo(s, DAP_STORE_FAIL, "put report: locking the task");
    }
    int c = collected(s, task, bucket);
    if (c != 0) {
        return undo(s, c < 0 ? DAP_STORE_FAIL : DAP_STORE_COLLECTED, "put report");
    }
    sqldb_val_t in[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                        sqldb_blob(id, DPM_DAP_REPORT_ID_BYTES), sqldb_int((int64_t)time),
                        sqldb_int((int64_t)bucket)};
    int64_t n = sqldb_exec(s->db,
                           "INSERT INTO dap_reports (task, id, time, bucket) VALUES ($1, $2, $3, "
                           "$4) ON CONFLICT DO NOTHING",
                           in, 4, NULL, NULL);
    if (n <= 0) {
        return undo(s, n < 0 ? DAP_STORE_FAIL : DAP_STORE_REPLAY, "put report");
    }
    sqldb_val_t body[] = {in[0], in[1], sqldb_blob(report, len)};
    if (sqldb_exec(s->db, "INSERT INTO dap_report_bodies (task, id, report) VALUES ($1, $2, $3)",
                   body, 3, NULL, NULL) != 1) {
        return undo(s, DAP_STORE_FAIL, "put report: its bytes");
    }
    return sqldb_commit(s->db) == 0 ? DAP_STORE_OK : undo(s, DAP_STORE_FAIL, "put report: commit");
}

typedef struct {
    dap_store_report_fn fn;
    void *ctx;
} rows_t;

static void report_row(void *ctx, int ncols, const sqldb_val_t *c)
{
    rows_t *r = ctx;
    if (ncols == 3 && c[0].blob && c[0].len == DPM_DAP_REPORT_ID_BYTES && c[2].blob) {
        r->fn(r->ctx, c[0].p, (uint64_t)c[1].i, c[2].p, c[2].len);
    }
}

int64_t dap_store_job_reports(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                              const uint8_t job[DAP_STORE_JOB_ID_BYTES], dap_store_report_fn fn,
                              void *ctx)
{
    rows_t r = {fn, ctx};
    sqldb_val_t in[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                        sqldb_blob(job, DAP_STORE_JOB_ID_BYTES)};
    int64_t n =
        sqldb_exec(s->db,
                   "SELECT r.id, r.bucket, b.report FROM dap_reports r JOIN dap_report_bodies "
                   "b ON b.task = r.task AND b.id = r.id WHERE r.task = $1 AND r.job = $2 "
                   "ORDER BY r.time, r.id",
                   in, 2, fn != NULL ? report_row : NULL, &r);
    return n < 0 ? fail(s, "job reports") : n;
}

int64_t dap_store_claim(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                        const uint8_t job[DAP_STORE_JOB_ID_BYTES], uint32_t max, uint64_t now_s,
                        dap_store_report_fn fn, void *ctx)
{
    if (sqldb_begin(s->db) != 0) {
        return fail(s, "claim: begin");
    }
    sqldb_val_t j[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                       sqldb_blob(job, DAP_STORE_JOB_ID_BYTES), sqldb_int((int64_t)now_s)};
    if (sqldb_exec(s->db, "INSERT INTO dap_jobs (task, job, claimed) VALUES ($1, $2, $3)", j, 3,
                   NULL, NULL) != 1) {
        return undo(s, DAP_STORE_FAIL, "claim: a new job (is its id new?)");
    }
    /* PostgreSQL: SKIP LOCKED lets several leaders claim at once, each other rows; SQLite's
     * BEGIN IMMEDIATE already serializes the writers. */
    sqldb_val_t u[] = {sqldb_blob(job, DAP_STORE_JOB_ID_BYTES),
                       sqldb_blob(task, DPM_DAP_TASK_ID_BYTES), sqldb_int((int64_t)max)};
    int64_t n = sqldb_exec(
        s->db,
        sqldb_is_pg(s->db)
            ? "UPDATE dap_reports SET job = $1 WHERE (task, id) IN (SELECT task, id FROM "
              "dap_reports "
              "WHERE task = $2 AND job IS NULL ORDER BY time, id LIMIT $3 FOR UPDATE SKIP LOCKED)"
            : "UPDATE dap_reports SET job = $1 WHERE rowid IN (SELECT rowid FROM dap_reports WHERE "
              "task = $2 AND job IS NULL ORDER BY time, id LIMIT $3)",
        u, 3, NULL, NULL);
    if (n <= 0) {
        return undo(s, n < 0 ? DAP_STORE_FAIL : 0, "claim");
    }
    if (sqldb_commit(s->db) != 0) {
        return undo(s, DAP_STORE_FAIL, "claim: commit");
    }
    return fn != NULL ? dap_store_job_reports(s, task, job, fn, ctx) : n;
}

static void first_blob(void *ctx, int ncols, const sqldb_val_t *c)
{
    if (ncols >= 1 && c[0].blob && c[0].len == DAP_STORE_JOB_ID_BYTES) {
        memcpy(ctx, c[0].p, DAP_STORE_JOB_ID_BYTES);
    }
}

int dap_store_stale_job(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                        uint64_t older_than_s, uint64_t now_s, uint8_t job[DAP_STORE_JOB_ID_BYTES])
{
    if (sqldb_begin(s->db) != 0) {
        return fail(s, "stale job: begin");
    }
    sqldb_val_t q[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES), sqldb_int((int64_t)older_than_s)};
    int64_t n = sqldb_exec(s->db,
                           sqldb_is_pg(s->db)
                               ? "SELECT job FROM dap_jobs WHERE task = $1 AND errors IS NULL AND "
                                 "claimed < $2 ORDER BY claimed LIMIT 1 FOR UPDATE SKIP LOCKED"
                               : "SELECT job FROM dap_jobs WHERE task = $1 AND errors IS NULL AND "
                                 "claimed < $2 ORDER BY claimed LIMIT 1",
                           q, 2, first_blob, job);
    if (n <= 0) {
        return undo(s, n < 0 ? DAP_STORE_FAIL : 0, "stale job");
    }
    sqldb_val_t u[] = {sqldb_int((int64_t)now_s), sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                       sqldb_blob(job, DAP_STORE_JOB_ID_BYTES)};
    if (sqldb_exec(s->db, "UPDATE dap_jobs SET claimed = $1 WHERE task = $2 AND job = $3", u, 3,
                   NULL, NULL) != 1) {
        return undo(s, DAP_STORE_FAIL, "stale job: take over");
    }
    return sqldb_commit(s->db) == 0 ? 1 : undo(s, DAP_STORE_FAIL, "stale job: commit");
}

/* A bucket's running sum in one commit or collection. */
typedef struct {
    uint64_t bucket, reports;
    uint8_t checksum[32];
    uint8_t *agg;
} sum_t;

typedef struct {
    dap_store_merge_fn merge;
    void *merge_ctx;
    size_t bytes;
    sum_t *sum; /* where a stored bucket row is added */
    int bad;    /* a row of the wrong size, or merge failed */
} add_t;

static void xor32(uint8_t *acc, const uint8_t *x)
{
    for (int i = 0; i < 32; i++) {
        acc[i] ^= x[i];
    }
}

/* One stored bucket row (agg, reports, checksum) added into a->sum. */
static void add_row(void *ctx, int ncols, const sqldb_val_t *c)
{
    add_t *a = ctx;
    if (ncols != 3 || !c[0].blob || c[0].len != a->bytes || !c[2].blob || c[2].len != 32 ||
        a->merge(a->merge_ctx, a->sum->agg, c[0].p, a->bytes) != 0) {
        a->bad = 1;
        return;
    }
    a->sum->reports += (uint64_t)c[1].i;
    xor32(a->sum->checksum, c[2].p);
}

/* The job's row, if any: committed (errors set), and then whether its digest is this request's
 * (its errors copied out) or another's. */
typedef struct {
    const uint8_t *digest;
    uint8_t *errors;
    size_t n;
    int found, committed, same;
} job_row_t;

static void job_row(void *ctx, int ncols, const sqldb_val_t *c)
{
    job_row_t *j = ctx;
    j->found = 1;
    if (ncols == 2 && c[1].blob) {
        j->committed = 1;
        j->same =
            c[0].blob && c[0].len == 32 && memcmp(c[0].p, j->digest, 32) == 0 && c[1].len == j->n;
        if (j->same) {
            memcpy(j->errors, c[1].p, j->n);
        }
    }
}

static sum_t *bucket_sum(sum_t **sums, size_t *n, uint64_t bucket, size_t bytes)
{
    for (size_t i = 0; i < *n; i++) {
        if ((*sums)[i].bucket == bucket) {
            return &(*sums)[i];
        }
    }
    sum_t *grown = realloc(*sums, (*n + 1) * sizeof(**sums));
    if (grown == NULL) {
        return NULL;
    }
    *sums = grown;
    sum_t *b = &grown[*n];
    memset(b, 0, sizeof(*b));
    b->bucket = bucket;
    b->agg = calloc(1, bytes ? bytes : 1);
    if (b->agg == NULL) {
        return NULL;
    }
    (*n)++;
    return b;
}

static void free_sums(sum_t *sums, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(sums[i].agg);
    }
    free(sums);
}

static int by_bucket(const void *a, const void *b)
{
    uint64_t x = ((const sum_t *)a)->bucket, y = ((const sum_t *)b)->bucket;
    return (x > y) - (x < y);
}

/* The commit's writes after the job row was read, the transaction still open: DAP_STORE_OK, or
 * DAP_STORE_FAIL with s->err set. */
static int commit_reports(dap_store_t *s, const uint8_t *task, const dap_store_outcome_t *o,
                          size_t n, size_t share_bytes, dap_store_merge_fn merge, void *merge_ctx,
                          uint8_t *errors)
{
    sum_t *sums = NULL;
    size_t nsums = 0;
    uint64_t rejects[DAP_REPORT_ERROR_MAX + 1] = {0};
    int rc = DAP_STORE_OK;
    /* a job's reports come in time order, so runs share a bucket: one query per run, not per
     * report (the task is locked: the answer cannot change inside the transaction) */
    uint64_t known_bucket = 0;
    int known = -1;
    for (size_t i = 0; i < n && rc == DAP_STORE_OK; i++) {
        uint8_t e = o[i].error;
        if (e == 0) {
            if (known < 0 || o[i].bucket != known_bucket) {
                known = collected(s, task, o[i].bucket);
                known_bucket = o[i].bucket;
            }
            rc = known < 0 ? fail(s, "commit: collected batches") : rc;
            e = known > 0 ? DAP_REPORT_ERROR_BATCH_COLLECTED : 0;
        }
        if (e == 0 && rc == DAP_STORE_OK) {
            sqldb_val_t in[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                                sqldb_blob(o[i].id, DPM_DAP_REPORT_ID_BYTES)};
            int64_t k = sqldb_exec(s->db,
                                   "INSERT INTO dap_aggregated (task, id) VALUES ($1, $2) ON "
                                   "CONFLICT DO NOTHING",
                                   in, 2, NULL, NULL);
            rc = k < 0 ? fail(s, "commit: an aggregated id") : rc;
            e = k == 0 ? DAP_REPORT_ERROR_REPORT_REPLAYED : 0;
        }
        if (e == 0 && rc == DAP_STORE_OK) {
            sum_t *b = bucket_sum(&sums, &nsums, o[i].bucket, share_bytes);
            uint8_t h[32];
            if (b == NULL || merge(merge_ctx, b->agg, o[i].out_share, share_bytes) != 0 ||
                mbedtls_sha256(o[i].id, DPM_DAP_REPORT_ID_BYTES, h, 0) != 0) {
                snprintf(s->err, sizeof(s->err), "commit: adding an output share failed");
                rc = DAP_STORE_FAIL;
                break;
            }
            b->reports++;
            xor32(b->checksum, h);
        }
        errors[i] = e;
        rejects[e <= DAP_REPORT_ERROR_MAX ? e : DAP_REPORT_ERROR_INVALID_MESSAGE] += e != 0;
    }
    /* each bucket, in bucket order (two commits lock their common buckets in one order): its
     * row made if new, locked (PostgreSQL: another leader's commit waits), its stored sum added
     * in, written back */
    if (nsums > 1) {
        qsort(sums, nsums, sizeof(*sums), by_bucket);
    }
    uint8_t *zero = calloc(1, share_bytes);
    if (zero == NULL && nsums > 0) {
        snprintf(s->err, sizeof(s->err), "commit: out of memory");
        rc = DAP_STORE_FAIL;
    }
    for (size_t i = 0; i < nsums && rc == DAP_STORE_OK; i++) {
        add_t a = {merge, merge_ctx, share_bytes, &sums[i], 0};
        static const uint8_t none[32] = {0};
        sqldb_val_t mk[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                            sqldb_int((int64_t)sums[i].bucket), sqldb_blob(zero, share_bytes),
                            sqldb_blob(none, 32)};
        sqldb_val_t q[] = {mk[0], mk[1]};
        if (sqldb_exec(s->db,
                       "INSERT INTO dap_buckets (task, bucket, agg, reports, checksum) VALUES ($1, "
                       "$2, $3, 0, $4) ON CONFLICT DO NOTHING",
                       mk, 4, NULL, NULL) < 0 ||
            sqldb_exec(s->db,
                       sqldb_is_pg(s->db) ? "SELECT agg, reports, checksum FROM dap_buckets WHERE "
                                            "task = $1 AND bucket = $2 FOR UPDATE"
                                          : "SELECT agg, reports, checksum FROM dap_buckets WHERE "
                                            "task = $1 AND bucket = $2",
                       q, 2, add_row, &a) != 1) {
            rc = fail(s, "commit: a bucket");
            break;
        }
        if (a.bad) {
            snprintf(s->err, sizeof(s->err), "commit: bucket %llu's stored sum has the wrong size",
                     (unsigned long long)sums[i].bucket);
            rc = DAP_STORE_FAIL;
            break;
        }
        sqldb_val_t w[] = {sqldb_blob(sums[i].agg, share_bytes),
                           sqldb_int((int64_t)sums[i].reports), sqldb_blob(sums[i].checksum, 32),
                           mk[0], mk[1]};
        if (sqldb_exec(s->db,
                       "UPDATE dap_buckets SET agg = $1, reports = $2, checksum = $3 WHERE task = "
                       "$4 AND bucket = $5",
                       w, 5, NULL, NULL) != 1) {
            rc = fail(s, "commit: writing a bucket");
        }
    }
    free(zero);
    for (uint8_t e = 1; e <= DAP_REPORT_ERROR_MAX && rc == DAP_STORE_OK; e++) {
        if (rejects[e] == 0) {
            continue;
        }
        sqldb_val_t w[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES), sqldb_int(e),
                           sqldb_int((int64_t)rejects[e])};
        if (sqldb_exec(s->db,
                       "INSERT INTO dap_rejects (task, error, n) VALUES ($1, $2, $3) ON CONFLICT "
                       "(task, error) DO UPDATE SET n = dap_rejects.n + excluded.n",
                       w, 3, NULL, NULL) != 1) {
            rc = fail(s, "commit: counting rejected reports");
        }
    }
    free_sums(sums, nsums);
    return rc;
}

int dap_store_commit(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                     const uint8_t job[DAP_STORE_JOB_ID_BYTES], const uint8_t digest[32],
                     const dap_store_outcome_t *o, size_t n, size_t share_bytes,
                     dap_store_merge_fn merge, void *merge_ctx, uint8_t *errors)
{
    if (n == 0 || o == NULL || errors == NULL || merge == NULL || share_bytes == 0) {
        snprintf(s->err, sizeof(s->err), "commit: no reports, or no merge function or share size");
        return DAP_STORE_FAIL;
    }
    if (sqldb_begin(s->db) != 0) {
        return fail(s, "commit: begin");
    }
    if (lock_task(s, task, 0) != 0) {
        return undo(s, DAP_STORE_FAIL, "commit: locking the task");
    }
    sqldb_val_t key[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                         sqldb_blob(job, DAP_STORE_JOB_ID_BYTES)};
    job_row_t j = {digest, errors, n, 0, 0, 0};
    /* PostgreSQL: the job's row locked, so that a second leader finishing the same job (it
     * took it over as stale) waits, then sees it committed */
    if (sqldb_exec(
            s->db,
            sqldb_is_pg(s->db)
                ? "SELECT digest, errors FROM dap_jobs WHERE task = $1 AND job = $2 FOR UPDATE"
                : "SELECT digest, errors FROM dap_jobs WHERE task = $1 AND job = $2",
            key, 2, job_row, &j) < 0) {
        return undo(s, DAP_STORE_FAIL, "commit: reading the job");
    }
    if (j.committed) {
        /* a retry: answered from the first commit, or refused when it is another request */
        return undo(s, j.same ? DAP_STORE_ALREADY : DAP_STORE_CONFLICT, "commit");
    }
    if (commit_reports(s, task, o, n, share_bytes, merge, merge_ctx, errors) != DAP_STORE_OK) {
        sqldb_rollback(s->db);
        return DAP_STORE_FAIL;
    }
    /* parameters in the order they appear (sqldb.h): the update names the key last */
    sqldb_val_t ins[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                         sqldb_blob(job, DAP_STORE_JOB_ID_BYTES), sqldb_blob(digest, 32),
                         sqldb_blob(errors, n)};
    sqldb_val_t upd[] = {ins[2], ins[3], ins[0], ins[1]};
    if (sqldb_exec(s->db,
                   j.found
                       ? "UPDATE dap_jobs SET digest = $1, errors = $2 WHERE task = $3 AND job = $4"
                       : "INSERT INTO dap_jobs (task, job, claimed, digest, errors) VALUES ($1, "
                         "$2, 0, $3, $4)",
                   j.found ? upd : ins, 4, NULL, NULL) != 1) {
        return undo(s, DAP_STORE_FAIL, "commit: the job");
    }
    return sqldb_commit(s->db) == 0 ? DAP_STORE_OK : undo(s, DAP_STORE_FAIL, "commit: commit");
}

/* A kept release: (reports, checksum, buckets, body); an empty body is a release still pending
 * (dap_store_collect_t.release_outside). */
typedef struct {
    dap_store_batch_t *batch;
    uint8_t *out;
    size_t cap, *len;
    int found, fits, pending;
} release_row_t;

static void release_row(void *ctx, int ncols, const sqldb_val_t *c)
{
    release_row_t *r = ctx;
    if (ncols != 4 || !c[1].blob || c[1].len != 32 || !c[3].blob) {
        return;
    }
    r->found = 1;
    r->pending = c[3].len == 0;
    r->batch->reports = (uint64_t)c[0].i;
    memcpy(r->batch->checksum, c[1].p, 32);
    r->batch->buckets = (uint32_t)c[2].i;
    r->fits = c[3].len <= r->cap;
    if (r->fits && !r->pending) {
        memcpy(r->out, c[3].p, c[3].len);
        *r->len = c[3].len;
    }
}

/* The request's kept release into r: -1 on a database error. */
static int64_t kept_release(dap_store_t *s, const sqldb_val_t key[2], release_row_t *r)
{
    return sqldb_exec(s->db,
                      "SELECT reports, checksum, buckets, body FROM dap_releases WHERE task = $1 "
                      "AND req = $2",
                      key, 2, release_row, r);
}

/* The batch's buckets summed into agg and batch: DAP_STORE_OK or DAP_STORE_FAIL. */
static int sum_batch(dap_store_t *s, const uint8_t *task, const dap_store_collect_t *c,
                     uint8_t *agg, dap_store_batch_t *batch)
{
    sum_t sum;
    memset(&sum, 0, sizeof(sum));
    sum.agg = agg;
    add_t a = {c->merge, c->merge_ctx, c->share_bytes, &sum, 0};
    sqldb_val_t q[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES), sqldb_int((int64_t)c->start),
                       sqldb_int((int64_t)c->end)};
    int64_t nb = sqldb_exec(s->db,
                            "SELECT agg, reports, checksum FROM dap_buckets WHERE task = $1 AND "
                            "bucket >= $2 AND bucket < $3",
                            q, 3, add_row, &a);
    if (nb < 0) {
        return fail(s, "collect: its buckets");
    }
    if (a.bad) {
        snprintf(s->err, sizeof(s->err), "collect: a stored sum has the wrong size");
        return DAP_STORE_FAIL;
    }
    batch->reports = sum.reports;
    batch->buckets = (uint32_t)nb;
    memcpy(batch->checksum, sum.checksum, 32);
    return DAP_STORE_OK;
}

/* The batch marked collected (its buckets take nothing more) and its release kept: body, or
 * an empty body for a release still pending. */
static int mark_collected(dap_store_t *s, const uint8_t *task, const dap_store_collect_t *c,
                          const dap_store_batch_t *batch, const uint8_t *body, size_t len)
{
    sqldb_val_t q[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES), sqldb_int((int64_t)c->start),
                       sqldb_int((int64_t)c->end)};
    sqldb_val_t keep[] = {q[0],
                          sqldb_blob(c->req, 32),
                          sqldb_int((int64_t)batch->reports),
                          sqldb_blob(batch->checksum, 32),
                          sqldb_int(batch->buckets),
                          sqldb_blob(body, len)};
    if (sqldb_exec(s->db, "INSERT INTO dap_collected (task, lo, hi) VALUES ($1, $2, $3)", q, 3,
                   NULL, NULL) != 1 ||
        sqldb_exec(s->db,
                   "INSERT INTO dap_releases (task, req, reports, checksum, buckets, body) VALUES "
                   "($1, $2, $3, $4, $5, $6)",
                   keep, 6, NULL, NULL) != 1) {
        return fail(s, "collect: marking the batch");
    }
    return DAP_STORE_OK;
}

/* Inside the collection's transaction, the task locked: the batch checked and summed into agg
 * and batch (DAP_STORE_OK, and *resumed when this request's release was left pending), or its
 * kept release in out (DAP_STORE_ALREADY), or the refusal; s->err set on DAP_STORE_FAIL. */
static int collect_prepare(dap_store_t *s, const uint8_t *task, const dap_store_collect_t *c,
                           uint8_t *agg, uint8_t *out, size_t cap, size_t *out_len,
                           dap_store_batch_t *batch, int *resumed)
{
    sqldb_val_t key[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES), sqldb_blob(c->req, 32)};
    release_row_t r = {batch, out, cap, out_len, 0, 0, 0};
    if (kept_release(s, key, &r) < 0) {
        return fail(s, "collect: its earlier release");
    }
    *resumed = r.found && r.pending;
    if (r.found && !r.pending) {
        if (!r.fits) {
            snprintf(s->err, sizeof(s->err), "collect: the kept release is larger than %zu bytes",
                     cap);
            return DAP_STORE_FAIL;
        }
        return DAP_STORE_ALREADY;
    }
    if (*resumed) {
        /* marked collected before, its buckets have taken nothing since: the same sum */
        dap_store_batch_t was = *batch;
        int rc = sum_batch(s, task, c, agg, batch);
        if (rc == DAP_STORE_OK &&
            (batch->reports != was.reports || memcmp(batch->checksum, was.checksum, 32) != 0)) {
            snprintf(s->err, sizeof(s->err),
                     "collect: the batch changed after it was marked collected (the store was "
                     "altered): nothing released");
            return DAP_STORE_FAIL;
        }
        return rc;
    }
    sqldb_val_t over[] = {key[0], sqldb_int((int64_t)c->end), sqldb_int((int64_t)c->start)};
    int64_t k =
        sqldb_exec(s->db, "SELECT 1 FROM dap_collected WHERE task = $1 AND lo < $2 AND hi > $3",
                   over, 3, NULL, NULL);
    if (k != 0) {
        return k < 0 ? fail(s, "collect: collected batches") : DAP_STORE_COLLECTED;
    }
    if (c->wait_for_pending) {
        /* a report of the batch not yet aggregated, or in a job not yet committed: collecting
         * now would leave it out for good (its bucket then takes nothing more) */
        sqldb_val_t p[] = {key[0], sqldb_int((int64_t)c->start), sqldb_int((int64_t)c->end),
                           key[0]};
        int64_t pending = sqldb_exec(
            s->db,
            "SELECT 1 FROM dap_reports WHERE task = $1 AND bucket >= $2 AND bucket < $3 AND (job "
            "IS "
            "NULL OR job IN (SELECT job FROM dap_jobs WHERE task = $4 AND errors IS NULL)) LIMIT 1",
            p, 4, NULL, NULL);
        if (pending != 0) {
            return pending < 0 ? fail(s, "collect: pending reports") : DAP_STORE_PENDING;
        }
    }
    int rc = sum_batch(s, task, c, agg, batch);
    if (rc == DAP_STORE_OK && batch->reports < c->min_batch) {
        return DAP_STORE_TOO_SMALL;
    }
    return rc;
}

/* One transaction, the task locked: collect_prepare, then (the helper) the release made and
 * kept, or (release_outside) the batch marked with its release pending. */
static int collect_begin(dap_store_t *s, const uint8_t *task, const dap_store_collect_t *c,
                         uint8_t *agg, uint8_t *out, size_t cap, size_t *out_len,
                         dap_store_batch_t *batch)
{
    if (sqldb_begin(s->db) != 0) {
        return fail(s, "collect: begin");
    }
    if (lock_task(s, task, 1) != 0) {
        return undo(s, DAP_STORE_FAIL, "collect: locking the task");
    }
    int resumed = 0;
    int rc = collect_prepare(s, task, c, agg, out, cap, out_len, batch, &resumed);
    if (rc == DAP_STORE_OK && !c->release_outside) {
        rc = c->release(c->release_ctx, agg, batch, out, cap, out_len) != 0
                 ? DAP_STORE_REFUSED
                 : mark_collected(s, task, c, batch, out, *out_len);
    } else if (rc == DAP_STORE_OK && !resumed) {
        rc = mark_collected(s, task, c, batch, out, 0);
    }
    if (rc == DAP_STORE_OK && sqldb_commit(s->db) != 0) {
        rc = fail(s, "collect: commit");
    }
    if (rc != DAP_STORE_OK) {
        sqldb_rollback(s->db); /* nothing marked, nothing kept (a release is only sent once it
                                  is kept or, release_outside, marked pending) */
    }
    return rc;
}

/* release_outside, the batch marked: its release made with no transaction open, then kept in
 * a second one unless a concurrent call of the same request kept its own first (that one is
 * then the answer: only one release of a request ever leaves). */
static int collect_release(dap_store_t *s, const uint8_t *task, const dap_store_collect_t *c,
                           uint8_t *agg, uint8_t *out, size_t cap, size_t *out_len,
                           dap_store_batch_t *batch)
{
    if (c->release(c->release_ctx, agg, batch, out, cap, out_len) != 0) {
        return DAP_STORE_REFUSED; /* still pending: the same request again resumes it */
    }
    sqldb_val_t keep[] = {sqldb_blob(out, *out_len), sqldb_blob(task, DPM_DAP_TASK_ID_BYTES),
                          sqldb_blob(c->req, 32)};
    if (sqldb_begin(s->db) != 0) {
        return fail(s, "collect: begin keeping the release");
    }
    int64_t n = sqldb_exec(s->db,
                           "UPDATE dap_releases SET body = $1 WHERE task = $2 AND req = $3 AND "
                           "length(body) = 0",
                           keep, 3, NULL, NULL);
    if (n < 0) {
        return undo(s, DAP_STORE_FAIL, "collect: keeping the release");
    }
    int rc = DAP_STORE_OK;
    if (n == 0) {
        release_row_t r = {batch, out, cap, out_len, 0, 0, 0};
        if (kept_release(s, keep + 1, &r) < 0) {
            return undo(s, DAP_STORE_FAIL, "collect: the release kept meanwhile");
        }
        if (!r.found || r.pending || !r.fits) {
            sqldb_rollback(s->db);
            snprintf(s->err, sizeof(s->err),
                     "collect: the pending release is gone or too large (the store was altered)");
            return DAP_STORE_FAIL;
        }
        rc = DAP_STORE_ALREADY;
    }
    return sqldb_commit(s->db) == 0 ? rc : undo(s, DAP_STORE_FAIL, "collect: commit");
}

int dap_store_collect(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES],
                      const dap_store_collect_t *c, uint8_t *out, size_t cap, size_t *out_len,
                      dap_store_batch_t *batch)
{
    if (c == NULL || c->start >= c->end || c->end > (uint64_t)INT64_MAX || out == NULL ||
        out_len == NULL || batch == NULL || c->merge == NULL || c->release == NULL ||
        c->share_bytes == 0) {
        snprintf(s->err, sizeof(s->err),
                 "collect: an empty interval, or no merge, release or output");
        return DAP_STORE_FAIL;
    }
    memset(batch, 0, sizeof(*batch));
    *out_len = 0;
    uint8_t *agg = calloc(1, c->share_bytes);
    if (agg == NULL) {
        snprintf(s->err, sizeof(s->err), "collect: out of memory");
        return DAP_STORE_FAIL;
    }
    int rc = collect_begin(s, task, c, agg, out, cap, out_len, batch);
    if (rc == DAP_STORE_OK && c->release_outside) {
        rc = collect_release(s, task, c, agg, out, cap, out_len, batch);
    }
    if (rc != DAP_STORE_OK && rc != DAP_STORE_ALREADY) {
        *out_len = 0;
    }
    memset(agg, 0, c->share_bytes); /* the batch's un-noised sum never outlives the call */
    free(agg);
    return rc;
}

static void count_row(void *ctx, int ncols, const sqldb_val_t *c)
{
    if (ncols == 1) {
        *(int64_t *)ctx = c[0].i;
    }
}

int64_t dap_store_rejected(dap_store_t *s, const uint8_t task[DPM_DAP_TASK_ID_BYTES], uint8_t error)
{
    int64_t n = 0;
    sqldb_val_t q[] = {sqldb_blob(task, DPM_DAP_TASK_ID_BYTES), sqldb_int(error)};
    if (sqldb_exec(s->db, "SELECT n FROM dap_rejects WHERE task = $1 AND error = $2", q, 2,
                   count_row, &n) < 0) {
        return fail(s, "rejected");
    }
    return n;
}
