/* SPDX-License-Identifier: Apache-2.0 */
/* What every Prometheus target carries beside its own metrics (see metrics_ops.h): build_info,
 * the process_* family of the Prometheus client libraries, and a # HELP line for every family. */
#include "collector/api/metrics_ops.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dpm/version.h"

/* One line of help per metric family the collector exports (metrics.c and below). A family
 * without one here gets no HELP line, which tests/e2e/test_collector_operator.py catches. */
static const struct {
    const char *name, *help;
} HELP[] = {
    {"dpm_reports_stored_total", "Reports stored in the database (every collector sharing it)."},
    {"dpm_lost_reports_total", "Reports the devices said they lost (Batch.lost_reports), stored."},
    {"dpm_rejects_total", "Rejected reports and requests in the database, by campaign and reason."},
    {"dpm_fedauc_uploads_accepted_total", "FedAUC score uploads accepted by this process."},
    {"dpm_fedauc_uploads_duplicate_total", "FedAUC score uploads that were retries."},
    {"dpm_fedauc_uploads_rejected_total", "FedAUC score uploads rejected."},
    {"dpm_fedauc_uploads_late_total", "FedAUC score uploads after the upload phase."},
    {"dpm_fedauc_rank_replies_total", "FedAUC rank replies sent."},
    {"dpm_fedauc_reports_accepted_total", "FedAUC reports accepted."},
    {"dpm_fedauc_reports_rejected_total", "FedAUC reports rejected."},
    {"dpm_fedauc_dropouts_total", "FedAUC devices that uploaded scores but never reported."},
    {"dpm_storage_healthy", "1 if the database is readable and no commit failed recently."},
    {"dpm_http_requests_total", "HTTP answers of this process, by status code."},
    {"dpm_reports_accepted_total", "Reports this process stored (new, not retries)."},
    {"dpm_reports_duplicate_total", "Reports this process acknowledged again (already stored)."},
    {"dpm_reports_rejected_total", "Reports and requests this process rejected, by reason."},
    {"dpm_tls_handshakes_total", "TLS handshakes completed."},
    {"dpm_tls_handshake_failures_total", "TLS handshakes that failed or timed out."},
    {"dpm_commit_duration_seconds", "Time to commit one group of batches durably."},
    {"dpm_commits_failed_total", "Commits that failed (nothing of those batches was stored)."},
    {"dpm_connections_active", "Open client connections."},
    {"dpm_connections_accepted_total", "Client connections accepted."},
    {"dpm_connections_refused_total", "Client connections refused, by reason."},
    {"dpm_connections_evicted_total", "Idle connections closed to make room for new ones."},
    {"dpm_requests_rate_limited_total", "Requests answered 429 by the per-address rate limit."},
    {"dpm_requests_over_memory_total", "Requests refused (503) for the memory budget."},
    {"dpm_requests_unauthorized_total", "Requests refused for their credential (401/403)."},
    {"dpm_memory_reserved_bytes", "Memory reserved for connections and request bodies now."},
    {"dpm_memory_reserved_peak_bytes", "The most memory ever reserved at once."},
    {"dpm_memory_budget_bytes", "The memory budget (--memory-limit less the baseline)."},
    {"dpm_revoked_entries", "Entries of the revocation list in force."},
    {"dpm_revoked_reloads_total", "Times the revocation list was reloaded."},
    {"dpm_reloads_total", "SIGHUP reloads, by outcome (ok: applied, failed: the old state stays)."},
    {"dpm_collector_build_info", "The collector's version (the value is always 1)."},
    {"process_cpu_seconds_total", "User and system CPU time of the process."},
    {"process_resident_memory_bytes", "Resident memory of the process."},
    {"process_virtual_memory_bytes", "Virtual memory of the process."},
    {"process_open_fds", "Open file descriptors."},
    {"process_max_fds", "The file descriptor limit."},
    {"process_start_time_seconds", "Start time of the process, Unix seconds."},
    {"process_threads", "Threads of the process."},
};

void coll_metrics_add_help(const coll_text_t *in, coll_text_t *out)
{
    for (size_t pos = 0; pos < in->len && !out->err;) {
        const char *line = in->buf + pos;
        const char *nl = memchr(line, '\n', in->len - pos);
        size_t n = nl != NULL ? (size_t)(nl - line) + 1 : in->len - pos;
        if (n > 7 && strncmp(line, "# TYPE ", 7) == 0) {
            size_t k = strcspn(line + 7, " \n");
            const char *help = coll_metrics_help(line + 7, k);
            if (help != NULL) {
                jw_raw(out, "# HELP %.*s %s\n", (int)k, line + 7, help);
            }
        }
        jw_raw(out, "%.*s", (int)n, line);
        pos += n;
    }
}

void coll_metrics_process(coll_text_t *t)
{
    jw_raw(t,
           "# TYPE dpm_collector_build_info gauge\n"
           "dpm_collector_build_info{version=\"%s\"} 1\n",
           dpm_version());
    /* /proc/self/stat: utime stime (14, 15), num_threads (20), starttime (22), vsize (23),
     * rss pages (24); the command (2) may hold spaces, so fields are counted after its ')',
     * from field 4 on (after the state letter) */
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n = f != NULL ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long long v[24] = {0};
    int got = 0;
    char *s = p != NULL ? strchr(p + 2, ' ') : NULL;
    for (s = s != NULL ? s + 1 : NULL; s != NULL && *s != '\0' && got < 24; got++) {
        v[got] = strtoull(s, &s, 10); /* v[k]: field k + 4 */
        s = *s == ' ' ? s + 1 : NULL;
    }
    long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    double boot = 0.0;
    FILE *st = fopen("/proc/stat", "r");
    char line[256];
    while (st != NULL && fgets(line, sizeof(line), st) != NULL) {
        if (strncmp(line, "btime ", 6) == 0) {
            boot = strtod(line + 6, NULL);
        }
    }
    if (st != NULL) {
        fclose(st);
    }
    if (got >= 21 && hz > 0) {
        jw_raw(t,
               "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.2f\n"
               "# TYPE process_threads gauge\nprocess_threads %llu\n"
               "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.2f\n"
               "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %llu\n"
               "# TYPE process_resident_memory_bytes gauge\n"
               "process_resident_memory_bytes %llu\n",
               (double)(v[10] + v[11]) / (double)hz, v[16], boot + (double)v[18] / (double)hz,
               v[19], v[20] * (unsigned long long)page);
    }
    unsigned long long fds = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        fds += e->d_name[0] != '.';
    }
    if (d != NULL) {
        closedir(d);
        jw_raw(t, "# TYPE process_open_fds gauge\nprocess_open_fds %llu\n", fds - 1u);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        jw_raw(t, "# TYPE process_max_fds gauge\nprocess_max_fds %llu\n",
               (unsigned long long)rl.rlim_cur);
    }
}

const char *coll_metrics_help(const char *family, size_t len)
{
    for (size_t i = 0; i < sizeof(HELP) / sizeof(HELP[0]); i++) {
        if (strlen(HELP[i].name) == len && memcmp(HELP[i].name, family, len) == 0) {
            return HELP[i].help;
        }
    }
    return NULL;
}
