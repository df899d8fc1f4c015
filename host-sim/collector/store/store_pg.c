/* SPDX-License-Identifier: Apache-2.0 */
/* The PostgreSQL backend (store_backend.h), over libpq. Any number of collectors share one
 * database: exactly-once comes from the primary key (campaign_id, report_id) and INSERT ...
 * ON CONFLICT DO NOTHING (a second writer of the same report waits for the first one's
 * transaction and then sees the row); the quota is an upsert in the same transaction; the sums
 * are rows keyed by the writer's shard, so collectors never update each other's rows.
 *
 * Round trips per group commit: BEGIN, one statement per batch (its reports, its quota
 * charge: unnest() of arrays, a data-modifying CTE), one for all the sums, COMMIT; plus one
 * per batch with rejects or lost reports. Conflicts between collectors (deadlock 40P01,
 * serialization 40001) and a lost connection are retried by the generic store: inserting a
 * report is idempotent, so a transaction whose COMMIT outcome was lost with the connection
 * finds its reports stored on the retry (duplicates: acknowledged, not summed twice).
 *
 * Schema version 1 (table dpm_schema), created at start-up under an advisory lock (several
 * collectors may start at once):
 *   dpm_schema(version)
 *   campaigns(id PRIMARY KEY, mechanism, eps_q16, params_hash, campaign bytea, first_seen)
 *   reports(campaign_id, report_id bytea, period, grp, nvalues, v0, v1, v2, v3, raw bytea,
 *           received_at, device, PRIMARY KEY (campaign_id, report_id))
 *   quota(device, campaign_id, period, count)      lost(device, count)
 *   rejects(campaign_id, reason, shard, count)
 *   agg_reports(campaign_id, period, shard, reports)
 *   agg_tuple(campaign_id, period, metric, grp, shard, n, s, ss double precision)
 *   agg_roc(campaign_id, period, bin, shard, pos, neg)      agg_lost(shard, count)
 *   agg_vec(campaign_id, period, idx, shard, s)   dpauc / ustat_* sums (made if missing, as
 *                                                  in store_sqlite.c)
 * with the meanings of store_sqlite.c. Reads run on a second connection in a REPEATABLE READ
 * READ ONLY transaction (one snapshot for all of an estimate's queries) without parallel
 * workers, so the float sums are added in one order and every collector answers the same. */
#include <endian.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector/store/store_backend.h"
#include "common/err.h"

#define SCHEMA_VERSION 1
#define ADVISORY_KEY "7020771" /* pg_advisory_xact_lock key of the schema migration */

static const char SCHEMA_V1[] =
    "CREATE TABLE dpm_schema (version integer NOT NULL);"
    "INSERT INTO dpm_schema VALUES (1);"
    "CREATE TABLE campaigns (id bigint PRIMARY KEY, mechanism integer NOT NULL,"
    "  eps_q16 bigint NOT NULL, params_hash bigint NOT NULL, campaign bytea NOT NULL,"
    "  first_seen bigint NOT NULL);"
    "CREATE TABLE reports (campaign_id bigint NOT NULL, report_id bytea NOT NULL,"
    "  period bigint NOT NULL, grp integer NOT NULL, nvalues integer NOT NULL, v0 bigint,"
    "  v1 bigint, v2 bigint, v3 bigint, raw bytea NOT NULL, received_at bigint NOT NULL,"
    "  device text, PRIMARY KEY (campaign_id, report_id));"
    "CREATE TABLE quota (device text NOT NULL, campaign_id bigint NOT NULL,"
    "  period bigint NOT NULL, count bigint NOT NULL,"
    "  PRIMARY KEY (device, campaign_id, period));"
    "CREATE TABLE lost (device text PRIMARY KEY, count bigint NOT NULL);"
    "CREATE TABLE rejects (campaign_id bigint NOT NULL, reason text NOT NULL,"
    "  shard text NOT NULL, count bigint NOT NULL, PRIMARY KEY (campaign_id, reason, shard));"
    "CREATE TABLE agg_reports (campaign_id bigint NOT NULL, period bigint NOT NULL,"
    "  shard text NOT NULL, reports bigint NOT NULL, PRIMARY KEY (campaign_id, period, shard));"
    "CREATE TABLE agg_tuple (campaign_id bigint NOT NULL, period bigint NOT NULL,"
    "  metric integer NOT NULL, grp integer NOT NULL, shard text NOT NULL, n bigint NOT NULL,"
    "  s bigint NOT NULL, ss double precision NOT NULL,"
    "  PRIMARY KEY (campaign_id, period, metric, grp, shard));"
    "CREATE TABLE agg_roc (campaign_id bigint NOT NULL, period bigint NOT NULL,"
    "  bin integer NOT NULL, shard text NOT NULL, pos bigint NOT NULL, neg bigint NOT NULL,"
    "  PRIMARY KEY (campaign_id, period, bin, shard));"
    "CREATE TABLE agg_lost (shard text PRIMARY KEY, count bigint NOT NULL);";

/* One batch's reports; returns the new ones' (campaign, id). */
static const char SQL_INSERT[] =
    "INSERT INTO reports (report_id, campaign_id, period, grp, nvalues, v0, v1, v2, v3, raw,"
    "  received_at, device)"
    " SELECT v.*, $11, $12 FROM unnest($1::bytea[], $2::int8[], $3::int8[], $4::int4[],"
    "    $5::int4[], $6::int8[], $7::int8[], $8::int8[], $9::int8[], $10::bytea[]) AS v"
    " ON CONFLICT (campaign_id, report_id) DO NOTHING"
    " RETURNING campaign_id, report_id";

/* Delete the reports an over-quota batch stored in this transaction. */
static const char SQL_UNDO[] =
    "DELETE FROM reports r USING unnest($1::int8[], $2::bytea[]) AS u(c, id)"
    " WHERE r.campaign_id = u.c AND r.report_id = u.id";

/* Quota counters += delta (distinct keys); their counts after. */
static const char SQL_QUOTA[] =
    "INSERT INTO quota (device, campaign_id, period, count)"
    " SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::int8[])"
    " ON CONFLICT (device, campaign_id, period) DO UPDATE SET count = quota.count + "
    "excluded.count"
    " RETURNING device, campaign_id, period, count";

static const char SQL_REJECTS[] =
    "INSERT INTO rejects (campaign_id, reason, shard, count)"
    " SELECT c, r, $3, n FROM unnest($1::int8[], $2::text[], $4::int8[]) AS u(c, r, n)"
    " ON CONFLICT (campaign_id, reason, shard) DO UPDATE SET count = rejects.count + "
    "excluded.count";

static const char SQL_LOST[] =
    "WITH a AS (INSERT INTO lost (device, count) VALUES ($1, $2)"
    "  ON CONFLICT (device) DO UPDATE SET count = lost.count + excluded.count)"
    " INSERT INTO agg_lost (shard, count) VALUES ($3, $2)"
    " ON CONFLICT (shard) DO UPDATE SET count = agg_lost.count + excluded.count";

static const char SQL_SUMS[] =
    "WITH r AS (INSERT INTO agg_reports (campaign_id, period, shard, reports)"
    "  SELECT c, p, $16, n FROM unnest($1::int8[], $2::int8[], $3::int8[]) AS u(c, p, n)"
    "  ON CONFLICT (campaign_id, period, shard) DO UPDATE"
    "  SET reports = agg_reports.reports + excluded.reports),"
    " t AS (INSERT INTO agg_tuple (campaign_id, period, metric, grp, shard, n, s, ss)"
    "  SELECT c, p, m, g, $16, n, s, ss FROM unnest($4::int8[], $5::int8[], $6::int4[],"
    "    $7::int4[], $8::int8[], $9::int8[], $10::float8[]) AS u(c, p, m, g, n, s, ss)"
    "  ON CONFLICT (campaign_id, period, metric, grp, shard) DO UPDATE"
    "  SET n = agg_tuple.n + excluded.n, s = agg_tuple.s + excluded.s,"
    "    ss = agg_tuple.ss + excluded.ss)"
    " INSERT INTO agg_roc (campaign_id, period, bin, shard, pos, neg)"
    "  SELECT c, p, b, $16, x, y FROM unnest($11::int8[], $12::int8[], $13::int4[],"
    "    $14::int8[], $15::int8[]) AS u(c, p, b, x, y)"
    "  ON CONFLICT (campaign_id, period, bin, shard) DO UPDATE"
    "  SET pos = agg_roc.pos + excluded.pos, neg = agg_roc.neg + excluded.neg";

/* (quietly: an existing table would log a NOTICE into the collector's JSON log) */
static const char AGG_VEC[] =
    "SET LOCAL client_min_messages = warning;"
    "CREATE TABLE IF NOT EXISTS agg_vec (campaign_id bigint NOT NULL, period bigint NOT NULL,"
    "  idx bigint NOT NULL, shard text NOT NULL, s bigint NOT NULL,"
    "  PRIMARY KEY (campaign_id, period, idx, shard))";

static const char SQL_VSUMS[] =
    "INSERT INTO agg_vec (campaign_id, period, idx, shard, s)"
    " SELECT c, p, i, $5, x FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[])"
    "   AS u(c, p, i, x)"
    " ON CONFLICT (campaign_id, period, idx, shard) DO UPDATE SET s = agg_vec.s + excluded.s";

/* A text-format array literal under construction. */
typedef struct {
    char *buf;
    size_t len, cap;
    int n;
    int err;
} arr_t;

#define NARR 16
#define READ_TIMEOUT "10s" /* the reader's statement_timeout */

struct coll_backend {
    PGconn *db; /* writer */
    PGconn *rd; /* reader */
    pthread_mutex_t rd_mu;
    char *conninfo;
    coll_be_mode_t mode;
    char shard[COLL_SHARD_MAX + 1];
    arr_t a[NARR];     /* reused parameter buffers */
    struct rkey *keys; /* reused: the batch's report keys, sorted */
    size_t keys_cap;
    char err_state[6]; /* SQLSTATE of the last failure */
    int err_conn;      /* the connection broke */
    char err_msg[160];
};

/* Keep the first line of a libpq message. */
static void one_line(char *out, size_t cap, const char *msg)
{
    snprintf(out, cap, "%s", msg != NULL ? msg : "");
    out[strcspn(out, "\n")] = '\0';
}

/* Remember a failed result (or connection) for error(); frees res. */
static int db_fail(coll_backend_t *b, PGresult *res)
{
    const char *st = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    snprintf(b->err_state, sizeof(b->err_state), "%s", st != NULL ? st : "");
    b->err_conn = PQstatus(b->db) != CONNECTION_OK;
    one_line(b->err_msg, sizeof(b->err_msg),
             res != NULL && PQresultErrorMessage(res)[0] ? PQresultErrorMessage(res)
                                                         : PQerrorMessage(b->db));
    PQclear(res);
    return -1;
}

/* Run a command that returns no rows on the writer. */
static int cmd(coll_backend_t *b, const char *sql)
{
    PGresult *r = PQexec(b->db, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        return db_fail(b, r);
    }
    PQclear(r);
    return 0;
}

/* ---- array literals ------------------------------------------------------------------------- */

static void arr_put(arr_t *a, const char *s, size_t n)
{
    if (a->err) {
        return;
    }
    if (a->len + n + 2 > a->cap) {
        size_t cap = 2 * a->cap + n + 256;
        char *p = realloc(a->buf, cap);
        if (p == NULL) {
            a->err = 1;
            return;
        }
        a->buf = p;
        a->cap = cap;
    }
    memcpy(a->buf + a->len, s, n);
    a->len += n;
    a->buf[a->len] = '\0';
}

static void arr_begin(arr_t *a)
{
    a->len = 0;
    a->n = 0;
    a->err = 0;
    arr_put(a, "{", 1);
}

static void arr_sep(arr_t *a)
{
    if (a->n++ > 0) {
        arr_put(a, ",", 1);
    }
}

static void arr_int(arr_t *a, int64_t v)
{
    char t[24];
    arr_sep(a);
    arr_put(a, t, (size_t)snprintf(t, sizeof(t), "%lld", (long long)v));
}

static void arr_null(arr_t *a)
{
    arr_sep(a);
    arr_put(a, "NULL", 4);
}

static void arr_double(arr_t *a, double v)
{
    char t[40];
    arr_sep(a);
    arr_put(a, t, (size_t)snprintf(t, sizeof(t), "%.17g", v));
}

/* A bytea element: "\\x<hex>" (the array parser turns \\ into the \ of bytea's hex form). */
static void arr_bytea(arr_t *a, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    char t[256];
    arr_sep(a);
    arr_put(a, "\"\\\\x", 4);
    while (n > 0) {
        size_t k = 0;
        while (n > 0 && k + 2 <= sizeof(t)) {
            t[k++] = hex[*p >> 4];
            t[k++] = hex[*p & 15];
            p++;
            n--;
        }
        arr_put(a, t, k);
    }
    arr_put(a, "\"", 1);
}

static void arr_text(arr_t *a, const char *s)
{
    arr_sep(a);
    arr_put(a, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            arr_put(a, "\\", 1);
        }
        arr_put(a, s, 1);
    }
    arr_put(a, "\"", 1);
}

static int arr_end(arr_t *a)
{
    arr_put(a, "}", 1);
    return a->err ? -1 : 0;
}

/* Start the parameter arrays b->a[0..n-1]. */
static void arrs_begin(coll_backend_t *b, int n)
{
    for (int k = 0; k < n; k++) {
        arr_begin(&b->a[k]);
    }
}

/* End b->a[0..n-1] and point p[0..n-1] at them; -1 ("out of memory") if one could not grow. */
static int arrs_end(coll_backend_t *b, int n, const char **p)
{
    for (int k = 0; k < n; k++) {
        if (arr_end(&b->a[k]) != 0) {
            snprintf(b->err_msg, sizeof(b->err_msg), "out of memory");
            return -1;
        }
        p[k] = b->a[k].buf;
    }
    return 0;
}

/* Run the writer's prepared statement name, which returns no rows, with n text parameters. */
static int exec_prepared(coll_backend_t *b, const char *name, int n, const char *const *p)
{
    PGresult *r = PQexecPrepared(b->db, name, n, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        return db_fail(b, r);
    }
    PQclear(r);
    return 0;
}

/* ---- connections ---------------------------------------------------------------------------- */

static int prepare_writer(coll_backend_t *b)
{
    static const struct {
        const char *name, *sql;
    } S[] = {{"ins", SQL_INSERT}, {"undo", SQL_UNDO}, {"quota", SQL_QUOTA}, {"rej", SQL_REJECTS},
             {"lost", SQL_LOST},  {"sums", SQL_SUMS}, {"vsums", SQL_VSUMS}};
    for (size_t i = 0; i < sizeof(S) / sizeof(S[0]); i++) {
        PGresult *r = PQprepare(b->db, S[i].name, S[i].sql, 0, NULL);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            return db_fail(b, r);
        }
        PQclear(r);
    }
    return 0;
}

/* A new session's settings: a name in pg_stat_activity; no parallel workers (sums in one
 * order, see above); the reader's queries bounded (an estimate waits at most 10 s, then 503). */
static int init_session(PGconn *c, const char *role, const char *shard)
{
    char name[160], sql[320];
    snprintf(name, sizeof(name), "dpm-collector %s %s", role, shard);
    char *lit = PQescapeLiteral(c, name, strlen(name));
    snprintf(sql, sizeof(sql),
             "SET application_name = %s; SET max_parallel_workers_per_gather = 0%s",
             lit != NULL ? lit : "'dpm-collector'",
             strcmp(role, "reader") == 0 ? "; SET statement_timeout = '" READ_TIMEOUT "'" : "");
    PQfreemem(lit);
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok ? 0 : -1;
}

static PGconn *connect_db(const char *conninfo, const char *role, const char *shard, char *err,
                          size_t cap)
{
    /* A server that does not answer must not hold the collector for ever: 5 s to connect
     * (unless PGCONNECT_TIMEOUT says otherwise), and TCP keepalives that notice a vanished
     * server within about a minute. The URL comes last: what it sets wins. */
    const char *keys[] = {"connect_timeout",  "keepalives_idle", "keepalives_interval",
                          "keepalives_count", "dbname",          NULL};
    const char *timeout = getenv("PGCONNECT_TIMEOUT");
    const char *vals[] = {timeout != NULL ? timeout : "5", "30", "10", "3", conninfo, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (c == NULL || PQstatus(c) != CONNECTION_OK) {
        char msg[200];
        one_line(msg, sizeof(msg), c != NULL ? PQerrorMessage(c) : "out of memory");
        host_fail(err, cap, "cannot connect to PostgreSQL: %s", msg);
        PQfinish(c);
        return NULL;
    }
    if (init_session(c, role, shard) != 0) {
        host_fail(err, cap, "PostgreSQL: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    return c;
}

/* The writer's connection, reconnected (and its statements prepared again) if it broke. */
static int ensure_writer(coll_backend_t *b)
{
    if (PQstatus(b->db) == CONNECTION_OK) {
        return 0;
    }
    PQreset(b->db);
    if (PQstatus(b->db) != CONNECTION_OK) {
        return db_fail(b, NULL);
    }
    init_session(b->db, b->mode == COLL_BE_SERVE ? "writer" : "admin", b->shard);
    return prepare_writer(b);
}

/* How many of SCHEMA_V1's tables besides dpm_schema exist (in the search path). */
#define COUNT_TABLES_SQL                                                                           \
    "SELECT count(*) FILTER (WHERE to_regclass(t) IS NOT NULL) FROM unnest(ARRAY['campaigns', "    \
    "'reports', 'quota', 'lost', 'rejects', 'agg_reports', 'agg_tuple', 'agg_roc', "               \
    "'agg_lost']) AS t"
#define SCHEMA_V1_TABLES 9

/* Create the schema (version 1) or check its version, under an advisory lock. A database that
 * should hold a schema but holds part of one (the version table without its row, tables
 * without the version table, the version without every table: emptied, dropped or damaged)
 * is refused: PostgreSQL's counterpart of an empty SQLite file. A database without any of our
 * tables is a new one (nothing can tell it from a replaced one: database_created is logged). */
static int create_or_check(coll_backend_t *b, int *from, char *err, size_t cap)
{
    PGresult *r;
    if (cmd(b, "BEGIN") != 0 || cmd(b, "SELECT pg_advisory_xact_lock(" ADVISORY_KEY ")") != 0) {
        return host_fail(err, cap, "PostgreSQL: %s", b->err_msg);
    }
    r = PQexec(b->db, "SELECT to_regclass('dpm_schema') IS NOT NULL, (" COUNT_TABLES_SQL ")");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        db_fail(b, r);
        cmd(b, "ROLLBACK");
        return host_fail(err, cap, "PostgreSQL: %s", b->err_msg);
    }
    int exists = PQgetvalue(r, 0, 0)[0] == 't';
    int tables = atoi(PQgetvalue(r, 0, 1));
    PQclear(r);
    int version = -1;
    if (exists) {
        r = PQexec(b->db, "SELECT max(version) FROM dpm_schema");
        if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
            db_fail(b, r);
            cmd(b, "ROLLBACK");
            return host_fail(err, cap, "PostgreSQL: %s", b->err_msg);
        }
        version = PQgetisnull(r, 0, 0) ? -2 : atoi(PQgetvalue(r, 0, 0));
        PQclear(r);
    }
    const char *damage = version == -2 ? "the table dpm_schema holds no version"
                         : !exists && tables > 0
                             ? "the collector's tables are there without dpm_schema"
                         // cppcheck-suppress knownConditionTrueFalse ; (false when tables == 0)
                         : exists && tables != SCHEMA_V1_TABLES
                             ? "dpm_schema is there without all of the collector's tables"
                             : NULL;
    if (damage != NULL) {
        cmd(b, "ROLLBACK");
        return host_fail(
            err, cap,
            "the database should hold a dpm-collector schema but holds part of one (%s, "
            "%d of %d tables): it was emptied or damaged. Restore the latest backup "
            "(dpm-collector restore) into a new database; drop the remains only if they "
            "never held reports",
            damage, tables, SCHEMA_V1_TABLES);
    }
    *from = version;
    if (version > SCHEMA_VERSION) {
        cmd(b, "ROLLBACK");
        return host_fail(err, cap,
                         "database schema version %d is newer than this collector's (%d): it was "
                         "written by a newer dpm-collector; run that version (or restore a backup "
                         "made before the upgrade)",
                         version, SCHEMA_VERSION);
    }
    if (version < 0 && cmd(b, SCHEMA_V1) != 0) {
        char msg[200];
        snprintf(msg, sizeof(msg), "%s", b->err_msg);
        cmd(b, "ROLLBACK");
        return host_fail(err, cap, "PostgreSQL: creating the schema: %s", msg);
    }
    /* future versions: migrate version -> SCHEMA_VERSION here, step by step */
    if (cmd(b, AGG_VEC) != 0) {
        char msg[200];
        snprintf(msg, sizeof(msg), "%s", b->err_msg);
        cmd(b, "ROLLBACK");
        return host_fail(err, cap, "PostgreSQL: creating agg_vec: %s", msg);
    }
    if (cmd(b, "COMMIT") != 0) {
        return host_fail(err, cap, "PostgreSQL: %s", b->err_msg);
    }
    return 0;
}

static void be_close(coll_backend_t *b)
{
    if (b == NULL) {
        return;
    }
    PQfinish(b->db);
    PQfinish(b->rd);
    for (int i = 0; i < NARR; i++) {
        free(b->a[i].buf);
    }
    free(b->keys);
    free(b->conninfo);
    pthread_mutex_destroy(&b->rd_mu);
    free(b);
}

static int open_reader(coll_backend_t *b, const char *url, char *err, size_t cap);

static int be_open(coll_backend_t **out, const char *url, coll_be_mode_t mode,
                   const coll_store_options_t *o, int *from, char *err, size_t cap)
{
    coll_backend_t *b = calloc(1, sizeof(*b));
    if (b == NULL || (b->conninfo = strdup(url)) == NULL) {
        free(b);
        return host_fail(err, cap, "out of memory");
    }
    pthread_mutex_init(&b->rd_mu, NULL);
    b->mode = mode;
    snprintf(b->shard, sizeof(b->shard), "%s", coll_shard_of(o));
    char msg[320];
    if (mode == COLL_BE_READ) {
        if (open_reader(b, url, msg, sizeof(msg)) != 0) {
            host_fail(err, cap, "database %s: %s", url, msg);
            be_close(b);
            return -1;
        }
        *out = b;
        return 0;
    }
    if ((b->db = connect_db(url, mode == COLL_BE_SERVE ? "writer" : "admin", b->shard, msg,
                            sizeof(msg))) == NULL ||
        create_or_check(b, from, msg, sizeof(msg)) != 0) {
        host_fail(err, cap, "database %s: %s", url, msg);
        be_close(b);
        return -1;
    }
    if (prepare_writer(b) != 0) {
        host_fail(err, cap, "database %s: %s", url, b->err_msg);
        be_close(b);
        return -1;
    }
    if (mode == COLL_BE_SERVE &&
        (b->rd = connect_db(url, "reader", b->shard, msg, sizeof(msg))) == NULL) {
        host_fail(err, cap, "database %s: %s", url, msg);
        be_close(b);
        return -1;
    }
    *out = b;
    return 0;
}

/* Record new campaigns; refuse changed fingerprints; start = first_seen when the file has
 * none. Under the schema lock, so collectors starting together agree on first_seen. */
static int be_check_campaigns(coll_backend_t *b, coll_campaigns_t *cs, int64_t now, char *err,
                              size_t cap)
{
    if (cmd(b, "BEGIN") != 0 || cmd(b, "SELECT pg_advisory_xact_lock(" ADVISORY_KEY ")") != 0) {
        return host_fail(err, cap, "PostgreSQL: %s", b->err_msg);
    }
    for (size_t i = 0; i < cs->n; i++) {
        coll_campaign_t *c = &cs->c[i];
        const dpm_mech_t *m = &c->mech;
        char id[16], mech[16], eps[24], hash[24], seen[24];
        snprintf(id, sizeof(id), "%u", m->campaign.id);
        snprintf(mech, sizeof(mech), "%d", (int)m->campaign.mechanism);
        snprintf(eps, sizeof(eps), "%lld", (long long)m->eps_implemented);
        snprintf(hash, sizeof(hash), "%lld", (long long)m->params_hash);
        snprintf(seen, sizeof(seen), "%lld", (long long)now);
        const char *p[6] = {id, mech, eps, hash, (const char *)c->pb, seen};
        int len[6] = {0, 0, 0, 0, (int)c->pb_len, 0};
        int fmt[6] = {0, 0, 0, 0, 1, 0};
        PGresult *r = PQexecParams(b->db,
                                   "INSERT INTO campaigns VALUES ($1, $2, $3, $4, $5, $6)"
                                   " ON CONFLICT (id) DO NOTHING",
                                   6, NULL, p, len, fmt, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            db_fail(b, r);
            cmd(b, "ROLLBACK");
            return host_fail(err, cap, "PostgreSQL: %s", b->err_msg);
        }
        PQclear(r);
        r = PQexecParams(b->db,
                         "SELECT mechanism, eps_q16, params_hash, first_seen FROM campaigns"
                         " WHERE id = $1",
                         1, NULL, p, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
            db_fail(b, r);
            cmd(b, "ROLLBACK");
            return host_fail(err, cap, "PostgreSQL: %s", b->err_msg);
        }
        int same = strcmp(PQgetvalue(r, 0, 0), mech) == 0 &&
                   strcmp(PQgetvalue(r, 0, 1), eps) == 0 && strcmp(PQgetvalue(r, 0, 2), hash) == 0;
        int64_t first_seen = strtoll(PQgetvalue(r, 0, 3), NULL, 10);
        PQclear(r);
        if (!same) {
            cmd(b, "ROLLBACK");
            return host_fail(
                err, cap,
                "campaign %u: the database holds reports made with different parameters "
                "(mechanism, eps, groups or metrics changed); use a new campaign id or a "
                "new database",
                m->campaign.id);
        }
        if (!c->opts.has_start) {
            c->opts.start = first_seen;
            c->opts.has_start = 1;
        }
    }
    return cmd(b, "COMMIT") == 0 ? 0 : host_fail(err, cap, "PostgreSQL: %s", b->err_msg);
}

/* ---- the writer -------------------------------------------------------------------------------
 */

static int be_begin(coll_backend_t *b)
{
    b->err_state[0] = '\0';
    b->err_conn = 0;
    return ensure_writer(b) == 0 && cmd(b, "BEGIN") == 0 ? 0 : -1;
}

static int be_commit(coll_backend_t *b)
{
    return cmd(b, "COMMIT");
}

static void be_rollback(coll_backend_t *b)
{
    if (PQstatus(b->db) == CONNECTION_OK) {
        PQclear(PQexec(b->db, "ROLLBACK"));
    }
}

static coll_be_error_t be_error(coll_backend_t *b, char *msg, size_t cap)
{
    snprintf(msg, cap, "%s", b->err_msg);
    if (b->err_conn || strcmp(b->err_state, "40P01") == 0 || strcmp(b->err_state, "40001") == 0) {
        return COLL_BE_RETRY;
    }
    return COLL_BE_FAIL;
}

static int64_t num(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static int64_t get_i8(const PGresult *r, int row, int col)
{
    uint64_t v;
    memcpy(&v, PQgetvalue(r, row, col), 8);
    return (int64_t)be64toh(v);
}

/* Report keys sorted by (campaign, id, position), to find a returned row's report. */
typedef struct rkey {
    uint32_t cid;
    uint32_t idx;
    uint8_t id[DPM_REPORT_ID_BYTES];
} rkey_t;

static int cmp_key(const void *x, const void *y)
{
    const rkey_t *a = x, *c = y;
    int k = coll_report_key_cmp(a->cid, a->id, c->cid, c->id);
    return k != 0 ? k : a->idx < c->idx ? -1 : 1;
}

/* The first report of the batch with this key (by position), or -1. */
static long find_report(const rkey_t *keys, size_t n, uint32_t cid, const uint8_t *id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first key >= (cid, id) */
        size_t mid = (lo + hi) / 2;
        if (coll_report_key_cmp(keys[mid].cid, keys[mid].id, cid, id) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < n && keys[lo].cid == cid && memcmp(keys[lo].id, id, DPM_REPORT_ID_BYTES) == 0
               ? (long)keys[lo].idx
               : -1;
}

/* Delete the batch's new rows (over quota). */
static int be_undo_batch(coll_backend_t *b, const coll_batch_t *batch)
{
    arrs_begin(b, 2);
    for (size_t i = 0; i < batch->nreports; i++) {
        const coll_report_t *r = &batch->reports[i];
        if (r->is_new) {
            arr_int(&b->a[0], r->campaign_id);
            arr_bytea(&b->a[1], r->report_id, DPM_REPORT_ID_BYTES);
        }
    }
    const char *p[2];
    return arrs_end(b, 2, p) == 0 ? exec_prepared(b, "undo", 2, p) : -1;
}

static int be_charge_quotas(coll_backend_t *b, coll_quota_t *qs, size_t n)
{
    arrs_begin(b, 4);
    for (size_t i = 0; i < n; i++) {
        arr_text(&b->a[0], qs[i].device);
        arr_int(&b->a[1], qs[i].campaign_id);
        arr_int(&b->a[2], qs[i].period);
        arr_int(&b->a[3], qs[i].delta);
    }
    const char *p[4];
    if (arrs_end(b, 4, p) != 0) {
        return -1;
    }
    PGresult *r = PQexecPrepared(b->db, "quota", 4, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        return db_fail(b, r);
    }
    int rows = PQntuples(r);
    for (size_t i = 0; i < n; i++) { /* RETURNING's order is not promised: match the keys */
        qs[i].after = INT64_MIN;
        for (int k = 0; k < rows; k++) {
            if (strcmp(PQgetvalue(r, k, 0), qs[i].device) == 0 &&
                num(r, k, 1) == (int64_t)qs[i].campaign_id &&
                num(r, k, 2) == (int64_t)qs[i].period) {
                qs[i].after = num(r, k, 3);
                break;
            }
        }
        if (qs[i].after == INT64_MIN) {
            PQclear(r);
            snprintf(b->err_msg, sizeof(b->err_msg), "a quota counter was not returned");
            return -1;
        }
    }
    PQclear(r);
    return 0;
}

static int be_insert_batch(coll_backend_t *b, coll_batch_t *batch, int64_t now)
{
    size_t n = batch->nreports;
    arrs_begin(b, 10);
    for (size_t i = 0; i < n; i++) {
        const coll_report_t *r = &batch->reports[i];
        arr_bytea(&b->a[0], r->report_id, DPM_REPORT_ID_BYTES);
        arr_int(&b->a[1], r->campaign_id);
        arr_int(&b->a[2], r->period);
        arr_int(&b->a[3], r->group);
        arr_int(&b->a[4], r->nvalues);
        for (uint32_t k = 0; k < DPM_CAMPAIGN_MAX_METRICS; k++) {
            if (k < r->nvalues) {
                arr_int(&b->a[5 + k], r->value[k]);
            } else {
                arr_null(&b->a[5 + k]);
            }
        }
        arr_bytea(&b->a[9], r->raw, r->raw_len);
    }
    const char *p[12];
    if (arrs_end(b, 10, p) != 0) {
        return -1;
    }
    char when[24];
    snprintf(when, sizeof(when), "%lld", (long long)now);
    p[10] = when;
    p[11] = coll_has_device(batch) ? batch->device : NULL;
    PGresult *res = PQexecPrepared(b->db, "ins", 12, p, NULL, NULL, 1);
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        return db_fail(b, res);
    }
    /* which reports are new: the returned ids, each the first of its key in the batch */
    if (n > b->keys_cap) {
        rkey_t *k = realloc(b->keys, n * sizeof(*k));
        if (k == NULL) {
            PQclear(res);
            snprintf(b->err_msg, sizeof(b->err_msg), "out of memory");
            return -1;
        }
        b->keys = k;
        b->keys_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        b->keys[i].cid = batch->reports[i].campaign_id;
        b->keys[i].idx = (uint32_t)i;
        memcpy(b->keys[i].id, batch->reports[i].report_id, DPM_REPORT_ID_BYTES);
    }
    qsort(b->keys, n, sizeof(*b->keys), cmp_key);
    int rows = PQntuples(res);
    for (int i = 0; i < rows; i++) {
        long k = PQgetlength(res, i, 1) == DPM_REPORT_ID_BYTES
                     ? find_report(b->keys, n, (uint32_t)get_i8(res, i, 0),
                                   (const uint8_t *)PQgetvalue(res, i, 1))
                     : -1;
        if (k < 0) {
            PQclear(res);
            snprintf(b->err_msg, sizeof(b->err_msg), "a stored report is not in its batch");
            return -1;
        }
        batch->reports[k].is_new = 1;
    }
    PQclear(res);
    for (size_t i = 0; i < n; i++) {
        if (batch->reports[i].is_new) {
            batch->accepted++;
        } else {
            batch->duplicates++;
        }
    }
    return 0;
}

static int be_count_rejects(coll_backend_t *b, const coll_reject_count_t *counts, size_t n)
{
    arrs_begin(b, 3);
    for (size_t i = 0; i < n; i++) {
        arr_int(&b->a[0], counts[i].campaign_id);
        arr_text(&b->a[1], counts[i].reason);
        arr_int(&b->a[2], (int64_t)counts[i].count);
    }
    const char *a[3];
    if (arrs_end(b, 3, a) != 0) {
        return -1;
    }
    const char *p[4] = {a[0], a[1], b->shard, a[2]};
    return exec_prepared(b, "rej", 4, p);
}

static int be_count_lost(coll_backend_t *b, const char *device, uint64_t n)
{
    char count[24];
    snprintf(count, sizeof(count), "%llu", (unsigned long long)n);
    const char *p[3] = {device, count, b->shard};
    return exec_prepared(b, "lost", 3, p);
}

static int cmp_delta(const void *x, const void *y)
{
    const coll_delta_t *a = *(const coll_delta_t *const *)x, *c = *(const coll_delta_t *const *)y;
    if (a->campaign_id != c->campaign_id) {
        return a->campaign_id < c->campaign_id ? -1 : 1;
    }
    return a->period < c->period ? -1 : a->period > c->period;
}

static int cmp_vsum(const void *x, const void *y)
{
    const coll_vsum_t *a = x, *c = y;
    if (a->campaign_id != c->campaign_id) {
        return a->campaign_id < c->campaign_id ? -1 : 1;
    }
    if (a->period != c->period) {
        return a->period < c->period ? -1 : 1;
    }
    return a->idx < c->idx ? -1 : a->idx > c->idx;
}

/* dpauc / ustat_* vector sums (agg_auc.h), in key order as the other sums. */
static int add_vsums(coll_backend_t *b, const coll_vsums_t *v)
{
    coll_vsum_t *e = malloc(v->n * sizeof(*e));
    if (e == NULL) {
        snprintf(b->err_msg, sizeof(b->err_msg), "out of memory");
        return -1;
    }
    memcpy(e, v->e, v->n * sizeof(*e));
    qsort(e, v->n, sizeof(*e), cmp_vsum);
    arrs_begin(b, 4);
    for (size_t i = 0; i < v->n; i++) {
        arr_int(&b->a[0], e[i].campaign_id);
        arr_int(&b->a[1], e[i].period);
        arr_int(&b->a[2], e[i].idx);
        arr_int(&b->a[3], e[i].sum);
    }
    free(e);
    const char *p[5];
    if (arrs_end(b, 4, p) != 0) {
        return -1;
    }
    p[4] = b->shard;
    return exec_prepared(b, "vsums", 5, p);
}

static int be_add_sums(coll_backend_t *b, const coll_deltas_t *ds)
{
    /* rows in key order, so two writers of one shard (a misconfiguration) cannot deadlock */
    const coll_delta_t **sorted = malloc(ds->n * sizeof(*sorted));
    if (sorted == NULL) {
        snprintf(b->err_msg, sizeof(b->err_msg), "out of memory");
        return -1;
    }
    for (size_t i = 0; i < ds->n; i++) {
        sorted[i] = &ds->d[i];
    }
    qsort(sorted, ds->n, sizeof(*sorted), cmp_delta);
    arrs_begin(b, 15);
    for (size_t i = 0; i < ds->n; i++) {
        const coll_delta_t *d = sorted[i];
        arr_int(&b->a[0], d->campaign_id);
        arr_int(&b->a[1], d->period);
        arr_int(&b->a[2], (int64_t)d->reports);
        for (uint32_t k = 0; d->roc && k < d->width; k++) {
            arr_int(&b->a[10], d->campaign_id);
            arr_int(&b->a[11], d->period);
            arr_int(&b->a[12], k);
            arr_int(&b->a[13], d->pos[k]);
            arr_int(&b->a[14], d->neg[k]);
        }
        for (uint32_t m = 0; !d->roc && m < d->width; m++) {
            for (uint32_t g = 0; g < DPM_MAX_GROUPS; g++) {
                if (d->n[m][g] == 0) {
                    continue;
                }
                arr_int(&b->a[3], d->campaign_id);
                arr_int(&b->a[4], d->period);
                arr_int(&b->a[5], m);
                arr_int(&b->a[6], g);
                arr_int(&b->a[7], (int64_t)d->n[m][g]);
                arr_int(&b->a[8], d->s[m][g]);
                arr_double(&b->a[9], d->ss[m][g]);
            }
        }
    }
    free(sorted);
    const char *p[16];
    if (arrs_end(b, 15, p) != 0) {
        return -1;
    }
    p[15] = b->shard;
    if (exec_prepared(b, "sums", 16, p) != 0) {
        return -1;
    }
    return ds->vec.n > 0 ? add_vsums(b, &ds->vec) : 0;
}

/* ---- reads (the reader connection) ---------------------------------------------------------- */

/* Run a query with text parameters on conn; NULL (and a message) unless it returned rows. */
static PGresult *query(PGconn *conn, const char *sql, int n, const char *const *p, char *err,
                       size_t cap)
{
    PGresult *r = PQexecParams(conn, sql, n, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        char msg[200];
        one_line(msg, sizeof(msg),
                 PQresultErrorMessage(r)[0] ? PQresultErrorMessage(r) : PQerrorMessage(conn));
        host_fail(err, cap, "database read: %s", msg);
        PQclear(r);
        return NULL;
    }
    return r;
}

/* The reader, reconnected if it broke. */
static int reader_ok(coll_backend_t *b, char *err, size_t cap)
{
    if (PQstatus(b->rd) == CONNECTION_OK) {
        return 0;
    }
    PQreset(b->rd);
    if (PQstatus(b->rd) != CONNECTION_OK) {
        char msg[200];
        one_line(msg, sizeof(msg), PQerrorMessage(b->rd));
        return host_fail(err, cap, "database read: %s", msg);
    }
    init_session(b->rd, "reader", b->shard);
    return 0;
}

static int read_begin(coll_backend_t *b, char *err, size_t cap)
{
    if (reader_ok(b, err, cap) != 0) {
        return -1;
    }
    PGresult *r = PQexec(b->rd, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok && reader_ok(b, err, cap) == 0) { /* a connection that broke while idle */
        r = PQexec(b->rd, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
    }
    return ok ? 0 : host_fail(err, cap, "database read: %s", PQerrorMessage(b->rd));
}

static void read_end(coll_backend_t *b)
{
    PQclear(PQexec(b->rd, "COMMIT"));
}

/* One query of a read: its SQL, how many of the read's parameters it takes, what a row adds. */
typedef struct {
    const char *sql;
    int nparams;
    void (*row)(void *ctx, const PGresult *r, int i);
} read_step_t;

/* Run the steps in one snapshot of the reader, each row into ctx. 0, or -1 with err set. */
static int read_steps(coll_backend_t *b, const read_step_t *steps, size_t n, const char *const *p,
                      void *ctx, char *err, size_t cap)
{
    pthread_mutex_lock(&b->rd_mu);
    int rc = read_begin(b, err, cap);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        PGresult *r = query(b->rd, steps[k].sql, steps[k].nparams, p, err, cap);
        if (r == NULL) {
            rc = -1;
            break;
        }
        for (int i = 0; i < PQntuples(r); i++) {
            steps[k].row(ctx, r, i);
        }
        PQclear(r);
    }
    read_end(b);
    pthread_mutex_unlock(&b->rd_mu);
    return rc;
}

/* COLL_BE_READ: the reader connection only, every transaction read-only, no advisory lock and
 * no migration, so an analyst may read a database that collectors serve. The schema must be
 * this collector's and complete. */
static int open_reader(coll_backend_t *b, const char *url, char *err, size_t cap)
{
    if ((b->rd = connect_db(url, "reader", b->shard, err, cap)) == NULL) {
        return -1;
    }
    PGresult *r = PQexec(b->rd, "SET default_transaction_read_only = on");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        return host_fail(err, cap, "PostgreSQL: %s", PQerrorMessage(b->rd));
    }
    r = query(b->rd,
              "SELECT to_regclass('dpm_schema') IS NOT NULL, to_regclass('agg_vec') IS NOT NULL, "
              "(" COUNT_TABLES_SQL ")",
              0, NULL, err, cap);
    if (r == NULL) {
        return -1;
    }
    int schema = PQgetvalue(r, 0, 0)[0] == 't', vec = PQgetvalue(r, 0, 1)[0] == 't';
    int tables = atoi(PQgetvalue(r, 0, 2));
    PQclear(r);
    if (!schema || !vec || tables != SCHEMA_V1_TABLES) {
        return host_fail(err, cap,
                         "no complete dpm-collector schema here (%d of %d tables%s): give the "
                         "--db of a database collectors serve",
                         tables, SCHEMA_V1_TABLES, vec ? "" : ", no agg_vec");
    }
    if ((r = query(b->rd, "SELECT max(version) FROM dpm_schema", 0, NULL, err, cap)) == NULL) {
        return -1;
    }
    int version = PQgetisnull(r, 0, 0) ? -1 : atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    if (version != SCHEMA_VERSION) {
        return host_fail(err, cap,
                         "schema version %d, and this reader reads version %d: read it with the "
                         "dpm-collector that serves it",
                         version, SCHEMA_VERSION);
    }
    return 0;
}

typedef struct {
    int found;
    int64_t fingerprint[3], first_seen;
} campaign_row_t;

static void row_campaign(void *ctx, const PGresult *r, int i)
{
    campaign_row_t *c = ctx;
    c->found = 1;
    for (int k = 0; k < 3; k++) {
        c->fingerprint[k] = strtoll(PQgetvalue(r, i, k), NULL, 10);
    }
    c->first_seen = PQgetisnull(r, i, 3) ? -1 : strtoll(PQgetvalue(r, i, 3), NULL, 10);
}

static int be_read_campaign(coll_backend_t *b, uint32_t campaign_id, int64_t fingerprint[3],
                            int64_t *first_seen, char *err, size_t cap)
{
    char id[16];
    snprintf(id, sizeof(id), "%u", campaign_id);
    const char *p[1] = {id};
    const read_step_t step = {
        "SELECT mechanism, eps_q16, params_hash, first_seen FROM campaigns WHERE id = $1", 1,
        row_campaign};
    campaign_row_t c = {0, {0, 0, 0}, -1};
    if (read_steps(b, &step, 1, p, &c, err, cap) != 0) {
        return -1;
    }
    memcpy(fingerprint, c.fingerprint, sizeof(c.fingerprint));
    *first_seen = c.first_seen;
    return c.found;
}

static void row_reports(void *st, const PGresult *r, int i)
{
    coll_state_add_reports(st, (uint64_t)num(r, i, 0));
}

static void row_tuple(void *st, const PGresult *r, int i)
{
    coll_state_add_tuple(st, (uint32_t)num(r, i, 0), (uint32_t)num(r, i, 1), (uint64_t)num(r, i, 2),
                         num(r, i, 3), strtod(PQgetvalue(r, i, 4), NULL));
}

static void row_roc(void *st, const PGresult *r, int i)
{
    coll_state_add_roc(st, (uint32_t)num(r, i, 0), num(r, i, 1), num(r, i, 2));
}

static void row_vec(void *st, const PGresult *r, int i)
{
    int64_t idx = num(r, i, 0);
    coll_state_add_vec(st, idx >= 0 && idx < UINT32_MAX ? (uint32_t)idx : UINT32_MAX, num(r, i, 1));
}

static void row_rejects(void *st, const PGresult *r, int i)
{
    coll_reasons_add(&((coll_campaign_state_t *)st)->rejects, PQgetvalue(r, i, 0),
                     (uint64_t)num(r, i, 1));
}

static int be_read_sums(coll_backend_t *b, uint32_t campaign_id, uint32_t from, uint32_t to,
                        coll_campaign_state_t *st, char *err, size_t cap)
{
    static const read_step_t STEPS[] = {
        {"SELECT sum(reports) FROM agg_reports WHERE campaign_id = $1 AND "
         "period BETWEEN $2 AND $3",
         3, row_reports},
        {"SELECT metric, grp, sum(n), sum(s), sum(ss) FROM agg_tuple WHERE "
         "campaign_id = $1 AND period BETWEEN $2 AND $3 GROUP BY metric, grp "
         "ORDER BY metric, grp",
         3, row_tuple},
        {"SELECT bin, sum(pos), sum(neg) FROM agg_roc WHERE campaign_id = $1 "
         "AND period BETWEEN $2 AND $3 GROUP BY bin ORDER BY bin",
         3, row_roc},
        {"SELECT idx, sum(s) FROM agg_vec WHERE campaign_id = $1 "
         "AND period BETWEEN $2 AND $3 GROUP BY idx ORDER BY idx",
         3, row_vec},
        {"SELECT reason, sum(count) FROM rejects WHERE campaign_id = $1 "
         "GROUP BY reason ORDER BY reason",
         1, row_rejects},
    };
    char c[16], f[16], t[16];
    snprintf(c, sizeof(c), "%u", campaign_id);
    snprintf(f, sizeof(f), "%u", from);
    snprintf(t, sizeof(t), "%u", to);
    const char *p[3] = {c, f, t};
    return read_steps(b, STEPS, sizeof(STEPS) / sizeof(STEPS[0]), p, st, err, cap);
}

typedef struct {
    const coll_campaigns_t *cs;
    coll_totals_t *t;
} totals_ctx_t;

static void row_totals(void *ctx, const PGresult *r, int i)
{
    coll_totals_t *t = ((totals_ctx_t *)ctx)->t;
    t->reports = (uint64_t)num(r, i, 0);
    t->lost_reports = (uint64_t)num(r, i, 1);
}

/* rejects with no known campaign (id 0, or one the campaigns file does not name) */
static void row_unattributed(void *ctx, const PGresult *r, int i)
{
    const totals_ctx_t *x = ctx;
    int64_t cid = num(r, i, 0);
    if (cid <= 0 || cid > UINT32_MAX || coll_campaigns_index(x->cs, (uint32_t)cid) < 0) {
        coll_reasons_add(&x->t->unattributed, PQgetvalue(r, i, 1), (uint64_t)num(r, i, 2));
    }
}

static int be_read_totals(coll_backend_t *b, const coll_campaigns_t *cs, coll_totals_t *t,
                          char *err, size_t cap)
{
    static const read_step_t STEPS[] = {
        {"SELECT (SELECT sum(reports) FROM agg_reports), (SELECT sum(count) FROM "
         "agg_lost)",
         0, row_totals},
        {"SELECT campaign_id, reason, sum(count) FROM rejects GROUP BY "
         "campaign_id, reason ORDER BY campaign_id, reason",
         0, row_unattributed},
    };
    totals_ctx_t x = {cs, t};
    return read_steps(b, STEPS, sizeof(STEPS) / sizeof(STEPS[0]), NULL, &x, err, cap);
}

/* ---- maintenance --------------------------------------------------------------------------------
 */

static int be_scan_reports(coll_backend_t *b, coll_report_cb cb, void *ctx, char *err, size_t cap)
{
    if (!PQsendQueryParams(b->db,
                           "SELECT campaign_id, period, grp, nvalues, v0, v1, v2, v3, raw"
                           " FROM reports",
                           0, NULL, NULL, NULL, NULL, 1) ||
        !PQsetSingleRowMode(b->db)) {
        return host_fail(err, cap, "database read: %s", PQerrorMessage(b->db));
    }
    int rc = 0;
    PGresult *r;
    while ((r = PQgetResult(b->db)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_SINGLE_TUPLE) {
            coll_report_t rep;
            memset(&rep, 0, sizeof(rep));
            rep.campaign_id = (uint32_t)get_i8(r, 0, 0);
            rep.period = (uint32_t)get_i8(r, 0, 1);
            uint32_t v;
            memcpy(&v, PQgetvalue(r, 0, 2), 4);
            rep.group = be32toh(v);
            memcpy(&v, PQgetvalue(r, 0, 3), 4);
            uint32_t nv = be32toh(v);
            rep.nvalues = (uint8_t)(nv <= DPM_CAMPAIGN_MAX_METRICS ? nv : 0xFF);
            for (int k = 0; k < DPM_CAMPAIGN_MAX_METRICS; k++) {
                rep.value[k] = PQgetisnull(r, 0, 4 + k) ? 0 : (int32_t)get_i8(r, 0, 4 + k);
            }
            rep.raw = (const uint8_t *)PQgetvalue(r, 0, 8);
            rep.raw_len = (uint32_t)PQgetlength(r, 0, 8);
            cb(ctx, &rep);
        } else if (st != PGRES_TUPLES_OK && rc == 0) {
            rc = host_fail(err, cap, "database read: %s", PQresultErrorMessage(r));
        }
        PQclear(r);
    }
    return rc;
}

static int be_scan_sums(coll_backend_t *b, coll_sum_cb cb, void *ctx, char *err, size_t cap)
{
    static const char TUPLE[] = "SELECT campaign_id, period, metric, grp, sum(n), sum(s), sum(ss) "
                                "FROM agg_tuple GROUP BY 1, 2, 3, 4";
    static const char *const SQL[4] = {
        "SELECT campaign_id, period, 0, 0, sum(reports), 0, 0 FROM agg_reports GROUP BY 1, 2",
        TUPLE,
        "SELECT campaign_id, period, bin, 0, sum(neg), sum(pos), 0 FROM agg_roc GROUP BY 1, 2, 3",
        "SELECT campaign_id, period, idx, 0, 0, sum(s), 0 FROM agg_vec GROUP BY 1, 2, 3"};
    for (int kind = 0; kind < 4; kind++) {
        PGresult *r = query(b->db, SQL[kind], 0, NULL, err, cap);
        if (r == NULL) {
            return -1;
        }
        for (int i = 0; i < PQntuples(r); i++) {
            cb(ctx, kind, (uint32_t)num(r, i, 0), (uint32_t)num(r, i, 1), (uint32_t)num(r, i, 2),
               (uint32_t)num(r, i, 3), num(r, i, 4), num(r, i, 5),
               strtod(PQgetvalue(r, i, 6), NULL));
        }
        PQclear(r);
    }
    return 0;
}

/* Runs each "DELETE ... WHERE campaign_id = $1 AND period < $2" with p = {campaign, cutoff};
 * *first = the rows the first one deleted. 0, or -1 (db_fail). */
static int delete_before(coll_backend_t *b, const char *const *sql, size_t n, const char *p[2],
                         uint64_t *first)
{
    for (size_t i = 0; i < n; i++) {
        PGresult *r = PQexecParams(b->db, sql[i], 2, NULL, p, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            return db_fail(b, r);
        }
        if (i == 0) {
            *first = strtoull(PQcmdTuples(r), NULL, 10);
        }
        PQclear(r);
    }
    return 0;
}

static int be_drop_periods(coll_backend_t *b, uint32_t campaign_id, uint32_t cutoff,
                           uint64_t *reports, uint64_t *periods)
{
    /* Collectors' commits wait until this transaction ends: a report they insert into a
     * period being dropped cannot end up half counted. */
    if (cmd(b, "LOCK TABLE reports, agg_reports, agg_tuple, agg_roc, agg_vec, quota"
               " IN SHARE ROW EXCLUSIVE MODE") != 0) {
        return -1;
    }
    char c[16], k[16];
    snprintf(c, sizeof(c), "%u", campaign_id);
    snprintf(k, sizeof(k), "%u", cutoff);
    const char *p[2] = {c, k};
    PGresult *r = PQexecParams(b->db,
                               "SELECT count(DISTINCT period) FROM agg_reports WHERE campaign_id = "
                               "$1 AND period < $2",
                               2, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        return db_fail(b, r);
    }
    *periods = (uint64_t)num(r, 0, 0);
    PQclear(r);
    static const char *const SQL[] = {
        "DELETE FROM reports WHERE campaign_id = $1 AND period < $2",
        "DELETE FROM agg_reports WHERE campaign_id = $1 AND period < $2",
        "DELETE FROM agg_tuple WHERE campaign_id = $1 AND period < $2",
        "DELETE FROM agg_roc WHERE campaign_id = $1 AND period < $2",
        "DELETE FROM agg_vec WHERE campaign_id = $1 AND period < $2",
        "DELETE FROM quota WHERE campaign_id = $1 AND period < $2",
    };
    return delete_before(b, SQL, sizeof(SQL) / sizeof(SQL[0]), p, reports);
}

static int be_drop_fedauc(coll_backend_t *b, uint32_t campaign_id, uint32_t cutoff,
                          uint64_t *uploads)
{
    *uploads = 0;
    PGresult *r = PQexec(b->db, "SELECT to_regclass('fedauc_uploads') IS NOT NULL AND "
                                "to_regclass('fedauc_phases') IS NOT NULL");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        return db_fail(b, r);
    }
    int tables = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    /* no FedAUC tables yet (created by the first collector that serves); else uploads wait
     * until this transaction ends, as the reports' commits do (be_drop_periods) */
    if (!tables ||
        cmd(b, "LOCK TABLE fedauc_uploads, fedauc_phases IN SHARE ROW EXCLUSIVE MODE") != 0) {
        return tables ? -1 : 0;
    }
    char c[16], k[16];
    snprintf(c, sizeof(c), "%u", campaign_id);
    snprintf(k, sizeof(k), "%u", cutoff);
    const char *p[2] = {c, k};
    static const char *const SQL[] = {
        "DELETE FROM fedauc_uploads WHERE campaign_id = $1 AND period < $2",
        "DELETE FROM fedauc_phases WHERE campaign_id = $1 AND period < $2",
    };
    return delete_before(b, SQL, sizeof(SQL) / sizeof(SQL[0]), p, uploads);
}

static int64_t be_first_seen(coll_backend_t *b, uint32_t campaign_id)
{
    char c[16];
    snprintf(c, sizeof(c), "%u", campaign_id);
    const char *p[1] = {c};
    PGresult *r = PQexecParams(b->db, "SELECT first_seen FROM campaigns WHERE id = $1", 1, NULL, p,
                               NULL, NULL, 0);
    int64_t v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? num(r, 0, 0) : -1;
    PQclear(r);
    return v;
}

static int be_backup(const char *url, const char *to, char *err, size_t cap);
static int be_restore(const char *from, const char *url, char *err, size_t cap);

const coll_backend_ops_t coll_pg_backend = {
    .name = "postgresql",
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

/* ---- backup and restore: pg_dump / pg_restore ------------------------------------------------ */

/* Run argv (a PostgreSQL client program found on PATH) and wait. 0 if it exited 0. */
static int run(char *const argv[], char *err, size_t cap)
{
    pid_t pid = fork();
    if (pid < 0) {
        return host_fail(err, cap, "cannot start %s", argv[0]);
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "dpm-collector: cannot run %s (install postgresql-client)\n", argv[0]);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return host_fail(err, cap, "%s failed (exit status %d; its messages are above)", argv[0],
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return 0;
}

static int be_backup(const char *url, const char *to, char *err, size_t cap)
{
    if (access(to, F_OK) == 0) {
        return host_fail(err, cap, "%s exists: give a new file name", to);
    }
    char *argv[] = {"pg_dump",  "--format=custom", "--file", (char *)to,
                    "--dbname", (char *)url,       NULL};
    return run(argv, err, cap);
}

static int be_restore(const char *from, const char *url, char *err, size_t cap)
{
    PGconn *c = connect_db(url, "restore", "restore", err, cap);
    if (c == NULL) {
        return -1;
    }
    PGresult *r = PQexec(c, "SELECT to_regclass('dpm_schema') IS NOT NULL");
    int busy = PQresultStatus(r) != PGRES_TUPLES_OK || PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    PQfinish(c);
    if (busy) {
        return host_fail(err, cap,
                         "%s already holds a collector database: restore into a new, empty "
                         "database (createdb), then point the collectors at it",
                         url);
    }
    char *argv[] = {"pg_restore", "--exit-on-error", "--single-transaction", "--no-owner",
                    "--dbname",   (char *)url,       (char *)from,           NULL};
    return run(argv, err, cap);
}
