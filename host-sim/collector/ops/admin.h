/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-collector's maintenance and reading commands (they work while collectors run):
 *
 *   dpm-collector backup    --db URL --to FILE      online backup (SQLite backup API; pg_dump)
 *   dpm-collector restore   --from FILE --db URL    into a new database (SQLite file; empty
 *                                                   PostgreSQL database: pg_restore)
 *   dpm-collector retention --db URL --campaigns FILE --keep-periods N [--now UNIX]
 *                                                   drop each campaign's periods older than
 *                                                   its newest N (reports, sums, quotas)
 *   dpm-collector verify    --db URL                the stored sums against the stored reports
 *   dpm-collector migrate   --db URL                bring the schema to this collector's
 *   dpm-collector estimate  --db URL --campaigns FILE [--campaign ID] [--period P | --from A
 *                           --to B] [--confidence C] [--now UNIX]
 *                                                   the estimates the endpoint answers, from
 *                                                   the store, read-only (store.h
 *                                                   coll_store_open_reader)
 *
 * Exit status 0 on success, 1 on a failure (or verify finding a difference), 2 on bad usage. */
#ifndef DPM_COLLECTOR_ADMIN_H
#define DPM_COLLECTOR_ADMIN_H

/* 1 if argv[1] names a maintenance command. */
int coll_admin_is_command(int argc, char **argv);

/* Run it; returns the exit status. */
int coll_admin_main(int argc, char **argv);

#endif /* DPM_COLLECTOR_ADMIN_H */
