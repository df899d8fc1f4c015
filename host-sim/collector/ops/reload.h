/* SPDX-License-Identifier: Apache-2.0 */
/* SIGHUP: reload the credentials, the certificates, the campaigns' names and new campaigns
 * without a restart and without dropping a connection.
 *
 * On SIGHUP a reload thread reads the credentials file, the server certificate, its key and the
 * device CA, and the campaigns file again. Only if every one of them is valid is anything
 * applied, all at once; else the error is logged ("reload_failed", FILE:LINE) and everything in
 * force stays. Applied:
 *   - credentials: new tokens work, removed ones stop working, from the next request on;
 *   - certificates: new connections get the new certificate (and device CA); a connection
 *     already open keeps the configuration it started with until it closes;
 *   - campaigns: names and group names (campaign_names.h), and campaigns appended after the
 *     ones in force: registered in the database (coll_store_set_campaigns, the last step, so
 *     nothing fails after it) and then served. Anything else that changed (a campaign removed,
 *     reordered, or another key) refuses the whole reload: stored reports were made with the
 *     campaigns in force, so those need a restart (the log says which campaign).
 * The deny list (revoked.h) reloads itself whenever its file changes. Requests in progress
 * finish with what they started with: a replaced version is freed once no connection can hold
 * it (TLS: when its last connection closes; credentials and campaigns: at a later reload, a
 * minute after they were replaced; requests are bounded well below that by the request
 * timeout). /metrics: dpm_reloads_total{result="ok"|"failed"} (counters.h). */
#ifndef DPM_COLLECTOR_RELOAD_H
#define DPM_COLLECTOR_RELOAD_H

#include <stdint.h>

#include "collector/ingest/app.h"
#include "collector/net/server.h"

typedef struct coll_reload coll_reload_t;

typedef struct {
    const char *campaigns, *credentials, *cert, *key, *device_ca; /* paths (NULL: not used) */
} coll_reload_files_t;

/* Start the reload thread for app (whose campaigns and auth it replaces) and srv (whose TLS
 * configuration it replaces). 0 or -1. */
int coll_reload_start(coll_reload_t **out, const coll_reload_files_t *files, coll_app_t *app,
                      coll_server_t *srv);

/* Ask for a reload: async-signal-safe (the SIGHUP handler calls it). */
void coll_reload_request(coll_reload_t *r);

/* Stop the thread and free every replaced version (after the server has stopped). */
void coll_reload_stop(coll_reload_t *r);

#endif /* DPM_COLLECTOR_RELOAD_H */
