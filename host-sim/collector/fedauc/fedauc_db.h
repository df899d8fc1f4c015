/* SPDX-License-Identifier: Apache-2.0 */
/* A small SQL connection for the FedAUC phase tables (fedauc_service.c) on the collector's own
 * database, SQLite or PostgreSQL: one SQL text for both (parameters $1, $2 ... in order, each
 * once: SQLite numbers "$N" parameters by first appearance), values 64-bit integers or blobs.
 * Not thread-safe: the caller serializes. */
#ifndef DPM_COLLECTOR_FEDAUC_DB_H
#define DPM_COLLECTOR_FEDAUC_DB_H

#include <stddef.h>
#include <stdint.h>

typedef struct fdb fdb_t;

typedef struct {
    int blob; /* 1: p[0, len) bytes; 0: the integer i (NULL reads as i = 0, null = 1) */
    int null;
    int64_t i;
    const void *p;
    size_t len;
} fdb_val_t;

/* One result row: ncols values, valid during the call. */
typedef void (*fdb_row_fn)(void *ctx, int ncols, const fdb_val_t *cols);

/* Connect to url (a collector --db value: sqlite:PATH, PATH or postgresql://...). 0 or -1. */
int fdb_open(fdb_t **out, const char *url, char *err, size_t cap);
void fdb_close(fdb_t *d);
int fdb_is_pg(const fdb_t *d);

/* Run one statement with n parameters; rows (may be NULL) get each result row. Returns the
 * number of rows changed (INSERT/UPDATE/DELETE) or returned, or -1 (message: fdb_error). */
int64_t fdb_exec(fdb_t *d, const char *sql, const fdb_val_t *in, int n, fdb_row_fn rows, void *ctx);

/* BEGIN (SQLite: IMMEDIATE, so the transaction holds the write lock), COMMIT, ROLLBACK. */
int fdb_begin(fdb_t *d);
int fdb_commit(fdb_t *d);
void fdb_rollback(fdb_t *d);

const char *fdb_error(const fdb_t *d);

static inline fdb_val_t fdb_int(int64_t i)
{
    fdb_val_t v = {0, 0, i, NULL, 0};
    return v;
}

static inline fdb_val_t fdb_blob(const void *p, size_t len)
{
    fdb_val_t v = {1, 0, 0, p, len};
    return v;
}

#endif /* DPM_COLLECTOR_FEDAUC_DB_H */
