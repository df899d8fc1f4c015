/* SPDX-License-Identifier: Apache-2.0 */
/* A small SQL connection on the collector's own database, SQLite or PostgreSQL, for the tables
 * that are not the store's reports and sums (the FedAUC phases, the DAP roles): one SQL text for
 * both (parameters $1, $2 ... in order, each once: SQLite numbers "$N" parameters by first
 * appearance), values 64-bit integers or blobs. Not thread-safe: the caller serializes. */
#ifndef DPM_COLLECTOR_STORE_SQLDB_H
#define DPM_COLLECTOR_STORE_SQLDB_H

#include <stddef.h>
#include <stdint.h>

typedef struct sqldb sqldb_t;

typedef struct {
    int blob; /* 1: p[0, len) bytes; 0: the integer i (NULL reads as i = 0, null = 1) */
    int null;
    int64_t i;
    const void *p;
    size_t len;
} sqldb_val_t;

/* Every SQLite connection of the collector's database (the store's and these): a 64 MiB page
 * cache and a WAL checkpoint every 16384 pages, not 1000 (random index and report pages stay in
 * memory, checkpoints that rewrite them are rare); durability is each COMMIT's, neither weakens
 * it. */
#define SQLDB_SQLITE_TUNING "PRAGMA cache_size=-65536; PRAGMA wal_autocheckpoint=16384"

/* One result row: ncols values, valid during the call. */
typedef void (*sqldb_row_fn)(void *ctx, int ncols, const sqldb_val_t *cols);

/* Connect to url (a collector --db value: sqlite:PATH, PATH or postgresql://...). 0 or -1. */
int sqldb_open(sqldb_t **out, const char *url, char *err, size_t cap);
void sqldb_close(sqldb_t *d);
int sqldb_is_pg(const sqldb_t *d);

/* Run one statement with n parameters; rows (may be NULL) get each result row. Returns the
 * number of rows changed (INSERT/UPDATE/DELETE) or returned, or -1 (message: sqldb_error). */
int64_t sqldb_exec(sqldb_t *d, const char *sql, const sqldb_val_t *in, int n, sqldb_row_fn rows,
                   void *ctx);

/* BEGIN (SQLite: IMMEDIATE, so the transaction holds the write lock), COMMIT, ROLLBACK. */
int sqldb_begin(sqldb_t *d);
int sqldb_commit(sqldb_t *d);
void sqldb_rollback(sqldb_t *d);

const char *sqldb_error(const sqldb_t *d);

static inline sqldb_val_t sqldb_int(int64_t i)
{
    sqldb_val_t v = {0, 0, i, NULL, 0};
    return v;
}

static inline sqldb_val_t sqldb_blob(const void *p, size_t len)
{
    sqldb_val_t v = {1, 0, 0, p, len};
    return v;
}

#endif /* DPM_COLLECTOR_STORE_SQLDB_H */
