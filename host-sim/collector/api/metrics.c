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

/* One sample: its name with its labels, if any ("name{label=\"v\"}"), and its value. */
typedef struct {
    const char *name;
    unsigned long long v;
} metric_t;

/* The samples, each family's "# TYPE" line before its first: a counter when its name ends in
 * "_total", a gauge otherwise. */
static void put_metrics(text_t *t, const metric_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t fam = strcspn(m[i].name, "{");
        if (i == 0 || strncmp(m[i].name, m[i - 1].name, fam) != 0 ||
            strcspn(m[i - 1].name, "{") != fam) {
            int counter = fam >= 6 && memcmp(m[i].name + fam - 6, "_total", 6) == 0;
            put(t, "# TYPE %.*s %s\n", (int)fam, m[i].name, counter ? "counter" : "gauge");
        }
        put(t, "%s %llu\n", m[i].name, m[i].v);
    }
}

#define PUT_METRICS(t, m) put_metrics(t, m, sizeof(m) / sizeof((m)[0]))

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
    const metric_t reports[] = {
        {"dpm_reports_accepted_total", c->reports_accepted},
        {"dpm_reports_duplicate_total", c->reports_duplicate},
    };
    PUT_METRICS(t, reports);
    put(t, "# TYPE dpm_reports_rejected_total counter\n");
    for (size_t i = 0; i < c->rejected.n; i++) {
        char r[COLL_REASON_MAX];
        label(r, c->rejected.r[i].reason);
        put(t, "dpm_reports_rejected_total{reason=\"%s\"} %llu\n", r,
            (unsigned long long)c->rejected.r[i].count);
    }
    const metric_t tls[] = {
        {"dpm_tls_handshakes_total", c->tls_handshakes},
        {"dpm_tls_handshake_failures_total", c->tls_handshake_failures},
    };
    PUT_METRICS(t, tls);
    put(t, "# TYPE dpm_commit_duration_seconds histogram\n");
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
    const metric_t m[] = {
        {"dpm_fedauc_uploads_accepted_total", s.uploads_accepted},
        {"dpm_fedauc_uploads_duplicate_total", s.uploads_duplicate},
        {"dpm_fedauc_uploads_rejected_total", s.uploads_rejected},
        {"dpm_fedauc_uploads_late_total", s.uploads_late},
        {"dpm_fedauc_rank_replies_total", s.rank_replies},
        {"dpm_fedauc_reports_accepted_total", s.reports_accepted},
        {"dpm_fedauc_reports_rejected_total", s.reports_rejected},
    };
    PUT_METRICS(t, m);
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
        const metric_t stored[] = {
            {"dpm_reports_stored_total", tot->reports},
            {"dpm_lost_reports_total", tot->lost_reports},
        };
        PUT_METRICS(&t, stored);
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
        const metric_t reloads[] = {
            {"dpm_reloads_total{result=\"ok\"}", cnt->reloads_ok},
            {"dpm_reloads_total{result=\"failed\"}", cnt->reloads_failed},
        };
        PUT_METRICS(&t, reloads);
    }
    if (app->limits != NULL) {
        coll_limit_stats_t l;
        coll_limits_stats(app->limits, &l);
        const metric_t m[] = {
            {"dpm_connections_active", l.conns_active},
            {"dpm_connections_accepted_total", l.conns_accepted},
            {"dpm_connections_refused_total{reason=\"per_address\"}", l.conns_refused_addr},
            {"dpm_connections_refused_total{reason=\"full\"}", l.conns_refused_full},
            {"dpm_connections_refused_total{reason=\"memory\"}", l.conns_refused_memory},
            {"dpm_connections_evicted_total", l.conns_evicted},
            {"dpm_requests_rate_limited_total", l.rate_limited},
            {"dpm_requests_over_memory_total", l.memory_refused},
            {"dpm_requests_unauthorized_total", l.unauthorized},
            {"dpm_memory_reserved_bytes", l.memory_reserved},
            {"dpm_memory_reserved_peak_bytes", l.memory_peak},
            {"dpm_memory_budget_bytes", app->limits->memory_budget},
        };
        PUT_METRICS(&t, m);
    }
    if (app->revoked != NULL) {
        size_t entries = 0;
        uint64_t reloads = 0;
        coll_revoked_stats(app->revoked, &entries, &reloads);
        const metric_t m[] = {
            {"dpm_revoked_entries", entries},
            {"dpm_revoked_reloads_total", reloads},
        };
        PUT_METRICS(&t, m);
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
