/* SPDX-License-Identifier: Apache-2.0 */
/* GET /metrics: Prometheus text format (version 0.0.4), for operators (it shows reject
 * counts, so it sits behind the operator credential).
 *
 * This process (counters.h; they start at 0 with the process; with several collectors, sum
 * them across instances):
 *   dpm_http_requests_total{code}              answers by HTTP status
 *   dpm_reports_accepted_total, dpm_reports_duplicate_total
 *   dpm_reports_rejected_total{reason}         rejected reports and requests by reason
 *   dpm_tls_handshakes_total, dpm_tls_handshake_failures_total
 *   dpm_commit_duration_seconds (histogram)    group commits: BEGIN to COMMIT, retries included
 *   dpm_commits_failed_total
 *   dpm_connections_active (gauge), dpm_connections_accepted_total,
 *   dpm_connections_refused_total{reason="per_address|full|memory"},
 *   dpm_connections_evicted_total             idle connections closed to make room
 *   dpm_requests_rate_limited_total, dpm_requests_over_memory_total,
 *   dpm_requests_unauthorized_total           401 and 403 answers
 *   dpm_memory_reserved_bytes, dpm_memory_reserved_peak_bytes, dpm_memory_budget_bytes
 *   dpm_storage_healthy                        1, or 0 while /healthz says unhealthy
 *   dpm_fedauc_uploads_{accepted,duplicate,rejected,late}_total, dpm_fedauc_rank_replies_total,
 *   dpm_fedauc_reports_{accepted,rejected}_total   FedAUC (fedauc_service.h: coll_fedauc_stats)
 *   dpm_revoked_entries (gauge), dpm_revoked_reloads_total   the deny list in force (--revoked,
 *                                              revoked.h) and how often it was read again
 * The database (every collector sharing it shows the same values: do not sum them):
 *   dpm_reports_stored_total                   reports stored (each once)
 *   dpm_lost_reports_total                     Batch.lost_reports summed: reports devices made
 *                                              (and spent ε on) but lost before delivery
 *   dpm_rejects_total{campaign, reason}        rejects by reason (campaign "0": not
 *                                              attributable)
 *   dpm_fedauc_dropouts_total{campaign}        uploads never reported, their period closed */
#ifndef DPM_COLLECTOR_METRICS_H
#define DPM_COLLECTOR_METRICS_H

#include <stddef.h>

#include "collector/ingest/app.h"

/* The text into a new heap buffer (NUL-terminated, *len without it). 0, or -1 (out of memory). */
int coll_metrics_text(const coll_app_t *app, char **out, size_t *len);

#endif /* DPM_COLLECTOR_METRICS_H */
