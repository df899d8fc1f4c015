/* SPDX-License-Identifier: Apache-2.0 */
/* The /metrics text (see metrics.h). */
#include "collector/api/metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/fedauc/fedauc_service.h"
#include "collector/api/metrics_ops.h"
#include "collector/ingest/revoked.h"

typedef coll_text_t text_t;
#define put jw_raw

/* A label value: reasons are static English text; quote-safe by construction, but escape
 * anyway. */
static void label(char r[COLL_REASON_MAX], const char *reason)
{
    size_t k = 0;
    for (const char *p = reason; *p && k + 1 < COLL_REASON_MAX; p++) {
        r[k++] = (*p == '"' || *p == '\\' || *p == '\n') ? '_' : *p;
    }
    r[k] = '\0';
}

static void put_reasons(text_t *t, unsigned id, const coll_reasons_t *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        char r[COLL_REASON_MAX];
        label(r, rs->r[i].reason);
        put(t, "dpm_rejects_total{campaign=\"%u\",reason=\"%s\"} %llu\n", id, r,
            (unsigned long long)rs->r[i].count);
    }
}

static void put_counters(text_t *t, const coll_counters_t *c)
{
    put(t, "# TYPE dpm_http_requests_total counter\n");
    for (int code = 100; code < 600; code++) {
        if (c->status[code] > 0) {
            put(t, "dpm_http_requests_total{code=\"%d\"} %llu\n", code,
                (unsigned long long)c->status[code]);
        }
    }
    put(t,
        "# TYPE dpm_reports_accepted_total counter\ndpm_reports_accepted_total %llu\n"
        "# TYPE dpm_reports_duplicate_total counter\ndpm_reports_duplicate_total %llu\n"
        "# TYPE dpm_reports_rejected_total counter\n",
        (unsigned long long)c->reports_accepted, (unsigned long long)c->reports_duplicate);
    for (size_t i = 0; i < c->rejected.n; i++) {
        char r[COLL_REASON_MAX];
        label(r, c->rejected.r[i].reason);
        put(t, "dpm_reports_rejected_total{reason=\"%s\"} %llu\n", r,
            (unsigned long long)c->rejected.r[i].count);
    }
    put(t,
        "# TYPE dpm_tls_handshakes_total counter\ndpm_tls_handshakes_total %llu\n"
        "# TYPE dpm_tls_handshake_failures_total counter\ndpm_tls_handshake_failures_total %llu\n"
        "# TYPE dpm_commit_duration_seconds histogram\n",
        (unsigned long long)c->tls_handshakes, (unsigned long long)c->tls_handshake_failures);
    uint64_t cum = 0;
    for (int b = 0; b <= COLL_COMMIT_BUCKETS; b++) {
        cum += c->commit_bucket[b];
        if (b < COLL_COMMIT_BUCKETS) {
            put(t, "dpm_commit_duration_seconds_bucket{le=\"%g\"} %llu\n", coll_commit_bucket_le[b],
                (unsigned long long)cum);
        } else {
            put(t, "dpm_commit_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                (unsigned long long)cum);
        }
    }
    put(t,
        "dpm_commit_duration_seconds_sum %.9g\ndpm_commit_duration_seconds_count %llu\n"
        "# TYPE dpm_commits_failed_total counter\ndpm_commits_failed_total %llu\n",
        c->commit_seconds, (unsigned long long)c->commits, (unsigned long long)c->commits_failed);
}

/* FedAUC: this process's counters, and the dropouts of every FedAUC campaign from the database
 * (0: it could not be read, and the lines are left out). */
static int put_fedauc(text_t *t, const coll_app_t *app)
{
    const coll_campaigns_t *cs = coll_app_campaigns(app);
    coll_fedauc_stats_t s;
    coll_fedauc_stats(app->fedauc, &s);
    put(t,
        "# TYPE dpm_fedauc_uploads_accepted_total counter\n"
        "dpm_fedauc_uploads_accepted_total %llu\n"
        "# TYPE dpm_fedauc_uploads_duplicate_total counter\n"
        "dpm_fedauc_uploads_duplicate_total %llu\n"
        "# TYPE dpm_fedauc_uploads_rejected_total counter\n"
        "dpm_fedauc_uploads_rejected_total %llu\n"
        "# TYPE dpm_fedauc_uploads_late_total counter\n"
        "dpm_fedauc_uploads_late_total %llu\n"
        "# TYPE dpm_fedauc_rank_replies_total counter\n"
        "dpm_fedauc_rank_replies_total %llu\n"
        "# TYPE dpm_fedauc_reports_accepted_total counter\n"
        "dpm_fedauc_reports_accepted_total %llu\n"
        "# TYPE dpm_fedauc_reports_rejected_total counter\n"
        "dpm_fedauc_reports_rejected_total %llu\n",
        (unsigned long long)s.uploads_accepted, (unsigned long long)s.uploads_duplicate,
        (unsigned long long)s.uploads_rejected, (unsigned long long)s.uploads_late,
        (unsigned long long)s.rank_replies, (unsigned long long)s.reports_accepted,
        (unsigned long long)s.reports_rejected);
    uint64_t *drop = calloc(cs->n + 1u, sizeof(*drop));
    if (drop == NULL || coll_fedauc_dropouts(app->fedauc, cs, (int64_t)time(NULL), drop) != 0) {
        free(drop);
        return 0;
    }
    put(t, "# TYPE dpm_fedauc_dropouts_total counter\n");
    for (size_t i = 0; i < cs->n; i++) {
        if (coll_fedauc_is((uint32_t)cs->c[i].mech.campaign.mechanism)) {
            put(t, "dpm_fedauc_dropouts_total{campaign=\"%u\"} %llu\n", cs->c[i].mech.campaign.id,
                (unsigned long long)drop[i]);
        }
    }
    free(drop);
    return 1;
}

int coll_metrics_text(const coll_app_t *app, char **out, size_t *len)
{
    text_t t;
    jw_buffer(&t);
    coll_campaign_state_t *st = malloc(sizeof(*st));
    coll_totals_t *tot = malloc(sizeof(*tot));
    coll_counters_t *cnt = malloc(sizeof(*cnt));
    if (st == NULL || tot == NULL || cnt == NULL) {
        free(st);
        free(tot);
        free(cnt);
        return -1;
    }
    char reason[200];
    int healthy =
        app->sink.health == NULL || app->sink.health(app->sink.ctx, reason, sizeof(reason)) == 0;
    /* the database's counts; when it cannot be read they are left out (and storage is
     * reported unhealthy) */
    int db = app->sink.read(app->sink.ctx, -1, 0, 0, NULL, tot, reason, sizeof(reason)) == 0;
    if (db) {
        put(&t, "# TYPE dpm_reports_stored_total counter\ndpm_reports_stored_total %llu\n",
            (unsigned long long)tot->reports);
        put(&t, "# TYPE dpm_lost_reports_total counter\ndpm_lost_reports_total %llu\n",
            (unsigned long long)tot->lost_reports);
        put(&t, "# TYPE dpm_rejects_total counter\n");
        put_reasons(&t, 0, &tot->unattributed);
        for (size_t i = 0; db && i < coll_app_campaigns(app)->n; i++) {
            if (app->sink.read(app->sink.ctx, (int)i, 0, 0, st, NULL, reason, sizeof(reason)) !=
                0) {
                db = 0;
                break;
            }
            put_reasons(&t, coll_app_campaigns(app)->c[i].mech.campaign.id, &st->rejects);
        }
    }
    db = put_fedauc(&t, app) && db;
    put(&t, "# TYPE dpm_storage_healthy gauge\ndpm_storage_healthy %d\n", healthy && db);
    if (app->counters != NULL) {
        coll_counters_snapshot(app->counters, cnt);
        put_counters(&t, cnt);
        put(&t,
            "# TYPE dpm_reloads_total counter\ndpm_reloads_total{result=\"ok\"} %llu\n"
            "dpm_reloads_total{result=\"failed\"} %llu\n",
            (unsigned long long)cnt->reloads_ok, (unsigned long long)cnt->reloads_failed);
    }
    if (app->limits != NULL) {
        coll_limit_stats_t l;
        coll_limits_stats(app->limits, &l);
        put(&t,
            "# TYPE dpm_connections_active gauge\n"
            "dpm_connections_active %llu\n"
            "# TYPE dpm_connections_accepted_total counter\n"
            "dpm_connections_accepted_total %llu\n"
            "# TYPE dpm_connections_refused_total counter\n"
            "dpm_connections_refused_total{reason=\"per_address\"} %llu\n"
            "dpm_connections_refused_total{reason=\"full\"} %llu\n"
            "dpm_connections_refused_total{reason=\"memory\"} %llu\n"
            "# TYPE dpm_connections_evicted_total counter\n"
            "dpm_connections_evicted_total %llu\n"
            "# TYPE dpm_requests_rate_limited_total counter\n"
            "dpm_requests_rate_limited_total %llu\n"
            "# TYPE dpm_requests_over_memory_total counter\n"
            "dpm_requests_over_memory_total %llu\n"
            "# TYPE dpm_requests_unauthorized_total counter\n"
            "dpm_requests_unauthorized_total %llu\n"
            "# TYPE dpm_memory_reserved_bytes gauge\n"
            "dpm_memory_reserved_bytes %zu\n"
            "# TYPE dpm_memory_reserved_peak_bytes gauge\n"
            "dpm_memory_reserved_peak_bytes %zu\n"
            "# TYPE dpm_memory_budget_bytes gauge\n"
            "dpm_memory_budget_bytes %zu\n",
            (unsigned long long)l.conns_active, (unsigned long long)l.conns_accepted,
            (unsigned long long)l.conns_refused_addr, (unsigned long long)l.conns_refused_full,
            (unsigned long long)l.conns_refused_memory, (unsigned long long)l.conns_evicted,
            (unsigned long long)l.rate_limited, (unsigned long long)l.memory_refused,
            (unsigned long long)l.unauthorized, l.memory_reserved, l.memory_peak,
            app->limits->memory_budget);
    }
    if (app->revoked != NULL) {
        size_t entries = 0;
        uint64_t reloads = 0;
        coll_revoked_stats(app->revoked, &entries, &reloads);
        put(&t,
            "# TYPE dpm_revoked_entries gauge\ndpm_revoked_entries %zu\n"
            "# TYPE dpm_revoked_reloads_total counter\ndpm_revoked_reloads_total %llu\n",
            entries, (unsigned long long)reloads);
    }
    coll_metrics_process(&t);
    free(st);
    free(tot);
    free(cnt);
    coll_text_t full;
    jw_buffer(&full);
    full.err = t.err;
    coll_metrics_add_help(&t, &full);
    free(t.buf);
    if (full.err) {
        free(full.buf);
        return -1;
    }
    *out = full.buf;
    *len = full.len;
    return 0;
}
