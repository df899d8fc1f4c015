/* SPDX-License-Identifier: Apache-2.0 */
/* One SQL connection for the tables of the FedAUC phases and the DAP roles (sqldb.h): SQLite or
 * libpq behind one small API. */
#include "collector/store/sqldb.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/store/store.h"

#define MAX_COLS 16
#define BYTEA_OID 17

/* SQLite: the statements prepared once and kept (a DAP job runs the same few hundred times):
 * keyed by their text, reset after each use; one in use (a row callback running the same text
 * again) is not shared, a fresh one is prepared for the nested call. */
#define STMT_CACHE 32

typedef struct {
    char *sql;
    sqlite3_stmt *q;
    int busy;
} cached_t;

struct sqldb {
    sqlite3 *db;
    PGconn *pg;
    cached_t cache[STMT_CACHE];
    unsigned next; /* the slot replaced when the cache is full (round robin) */
    char err[256];
};

int sqldb_is_pg(const sqldb_t *d)
{
    return d->pg != NULL;
}

const char *sqldb_error(const sqldb_t *d)
{
    return d->err;
}

int sqldb_open(sqldb_t **out, const char *url, char *err, size_t cap)
{
    const char *target = NULL;
    const char *name = coll_store_backend_name(url, &target);
    sqldb_t *d = calloc(1, sizeof(*d));
    if (d == NULL || name == NULL) {
        snprintf(err, cap, "database: %s",
                 d == NULL ? "out of memory"
                           : "unknown --db (want sqlite:PATH, a file name or postgresql://...)");
        free(d);
        return -1;
    }
    if (strcmp(name, "postgresql") == 0) {
        d->pg = PQconnectdb(target);
        if (d->pg == NULL || PQstatus(d->pg) != CONNECTION_OK) {
            snprintf(err, cap, "database: %s", d->pg ? PQerrorMessage(d->pg) : "out of memory");
            sqldb_close(d);
            return -1;
        }
        PGresult *r = PQexec(d->pg, "SET client_min_messages = warning");
        PQclear(r);
    } else {
        if (sqlite3_open_v2(target, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
            SQLITE_OK) {
            snprintf(err, cap, "database: cannot open %s (its folder must exist and be writable)",
                     target);
            sqldb_close(d);
            return -1;
        }
        sqlite3_busy_timeout(d->db, 10000);
        /* as the store's own connection: a DAP leader reads back each report's pages (about
         * 8 KB) when it claims and verifies it, which the default 2 MiB cache had long evicted */
        if (sqlite3_exec(d->db, SQLDB_SQLITE_TUNING, NULL, NULL, NULL) != SQLITE_OK) {
            snprintf(err, cap, "database: %s: %s", target, sqlite3_errmsg(d->db));
            sqldb_close(d);
            return -1;
        }
    }
    *out = d;
    return 0;
}

void sqldb_close(sqldb_t *d)
{
    if (d == NULL) {
        return;
    }
    if (d->pg != NULL) {
        PQfinish(d->pg);
    }
    for (size_t i = 0; i < STMT_CACHE; i++) {
        sqlite3_finalize(d->cache[i].q);
        free(d->cache[i].sql);
    }
    if (d->db != NULL) {
        sqlite3_close(d->db);
    }
    free(d);
}

/* The statement for sql: a cached one (*slot its entry, marked busy) or, when none is free, a
 * new one (*slot NULL: the caller finalizes it). NULL on a prepare error (d->err). */
static sqlite3_stmt *stmt_get(sqldb_t *d, const char *sql, cached_t **slot)
{
    *slot = NULL;
    cached_t *free_slot = NULL;
    for (size_t i = 0; i < STMT_CACHE; i++) {
        cached_t *c = &d->cache[i];
        if (c->sql == NULL) {
            free_slot = free_slot != NULL ? free_slot : c;
        } else if (strcmp(c->sql, sql) == 0) {
            if (c->busy) {
                break; /* nested use of the same text: a statement of its own */
            }
            c->busy = 1;
            *slot = c;
            return c->q;
        }
    }
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v3(d->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &q, NULL) != SQLITE_OK) {
        snprintf(d->err, sizeof(d->err), "%s", sqlite3_errmsg(d->db));
        sqlite3_finalize(q);
        return NULL;
    }
    if (free_slot == NULL) { /* full: replace one that is not in use */
        for (unsigned k = 0; k < STMT_CACHE && free_slot == NULL; k++) {
            cached_t *c = &d->cache[(d->next + k) % STMT_CACHE];
            free_slot = c->busy ? NULL : c;
        }
        d->next = (d->next + 1u) % STMT_CACHE;
        if (free_slot != NULL) {
            sqlite3_finalize(free_slot->q);
            free(free_slot->sql);
            memset(free_slot, 0, sizeof(*free_slot));
        }
    }
    char *copy = free_slot != NULL ? strdup(sql) : NULL;
    if (copy != NULL) {
        free_slot->sql = copy;
        free_slot->q = q;
        free_slot->busy = 1;
        *slot = free_slot;
    }
    return q;
}

/* After a statement's use: a cached one reset (its locks and bindings let go), another one
 * finalized. */
static void stmt_put(sqlite3_stmt *q, cached_t *slot)
{
    if (slot != NULL) {
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        slot->busy = 0;
    } else {
        sqlite3_finalize(q);
    }
}

static int64_t sqlite_exec(sqldb_t *d, const char *sql, const sqldb_val_t *in, int n,
                           sqldb_row_fn rows, void *ctx)
{
    cached_t *slot = NULL;
    sqlite3_stmt *q = stmt_get(d, sql, &slot);
    if (q == NULL) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (in[i].blob) {
            sqlite3_bind_blob(q, i + 1, in[i].p, (int)in[i].len, SQLITE_TRANSIENT);
        } else {
            sqlite3_bind_int64(q, i + 1, in[i].i);
        }
    }
    int64_t count = 0;
    int st;
    while ((st = sqlite3_step(q)) == SQLITE_ROW) {
        int nc = sqlite3_column_count(q);
        sqldb_val_t cols[MAX_COLS];
        for (int c = 0; c < nc && c < MAX_COLS; c++) {
            memset(&cols[c], 0, sizeof(cols[c]));
            int t = sqlite3_column_type(q, c);
            if (t == SQLITE_BLOB) {
                cols[c].blob = 1;
                cols[c].p = sqlite3_column_blob(q, c);
                cols[c].len = (size_t)sqlite3_column_bytes(q, c);
            } else {
                cols[c].null = t == SQLITE_NULL;
                cols[c].i = sqlite3_column_int64(q, c);
            }
        }
        count++;
        if (rows != NULL) {
            rows(ctx, nc < MAX_COLS ? nc : MAX_COLS, cols);
        }
    }
    if (st != SQLITE_DONE) {
        snprintf(d->err, sizeof(d->err), "%s", sqlite3_errmsg(d->db));
        stmt_put(q, slot);
        return -1;
    }
    if (sqlite3_column_count(q) == 0) {
        count = sqlite3_changes(d->db);
    }
    stmt_put(q, slot);
    return count;
}

static int64_t pg_exec(sqldb_t *d, const char *sql, const sqldb_val_t *in, int n, sqldb_row_fn rows,
                       void *ctx)
{
    char num[MAX_COLS][24];
    const char *vals[MAX_COLS];
    int lens[MAX_COLS], fmts[MAX_COLS];
    if (n > MAX_COLS) {
        snprintf(d->err, sizeof(d->err), "too many parameters");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (in[i].blob) {
            vals[i] = in[i].len > 0 ? in[i].p : "";
            lens[i] = (int)in[i].len;
            fmts[i] = 1;
        } else {
            snprintf(num[i], sizeof(num[i]), "%lld", (long long)in[i].i);
            vals[i] = num[i];
            lens[i] = 0;
            fmts[i] = 0;
        }
    }
    PGresult *r = PQexecParams(d->pg, sql, n, NULL, vals, lens, fmts, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        snprintf(d->err, sizeof(d->err), "%s", PQresultErrorMessage(r));
        PQclear(r);
        return -1;
    }
    int64_t count = 0;
    if (st == PGRES_COMMAND_OK) {
        const char *t = PQcmdTuples(r);
        count = t != NULL && *t ? strtoll(t, NULL, 10) : 0;
    } else {
        int nr = PQntuples(r), nc = PQnfields(r);
        nc = nc < MAX_COLS ? nc : MAX_COLS;
        for (int row = 0; row < nr; row++) {
            sqldb_val_t cols[MAX_COLS];
            unsigned char *un[MAX_COLS];
            for (int c = 0; c < nc; c++) {
                memset(&cols[c], 0, sizeof(cols[c]));
                un[c] = NULL;
                if (PQgetisnull(r, row, c)) {
                    cols[c].null = 1;
                } else if (PQftype(r, c) == BYTEA_OID) {
                    size_t len = 0;
                    un[c] = PQunescapeBytea((const unsigned char *)PQgetvalue(r, row, c), &len);
                    cols[c].blob = 1;
                    cols[c].p = un[c] != NULL ? un[c] : (const void *)"";
                    cols[c].len = un[c] != NULL ? len : 0;
                } else {
                    cols[c].i = strtoll(PQgetvalue(r, row, c), NULL, 10);
                }
            }
            if (rows != NULL) {
                rows(ctx, nc, cols);
            }
            for (int c = 0; c < nc; c++) {
                PQfreemem(un[c]);
            }
        }
        count = nr;
    }
    PQclear(r);
    return count;
}

int64_t sqldb_exec(sqldb_t *d, const char *sql, const sqldb_val_t *in, int n, sqldb_row_fn rows,
                   void *ctx)
{
    return d->pg != NULL ? pg_exec(d, sql, in, n, rows, ctx)
                         : sqlite_exec(d, sql, in, n, rows, ctx);
}

int sqldb_begin(sqldb_t *d)
{
    return sqldb_exec(d, d->pg != NULL ? "BEGIN" : "BEGIN IMMEDIATE", NULL, 0, NULL, NULL) < 0 ? -1
                                                                                               : 0;
}

int sqldb_commit(sqldb_t *d)
{
    return sqldb_exec(d, "COMMIT", NULL, 0, NULL, NULL) < 0 ? -1 : 0;
}

void sqldb_rollback(sqldb_t *d)
{
    (void)sqldb_exec(d, "ROLLBACK", NULL, 0, NULL, NULL);
}
