/* SPDX-License-Identifier: Apache-2.0 */
/* The /metrics text (see metrics.h). */
#include "collector/metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *buf;
    size_t len, cap;
    int err;
} text_t;

static void put(text_t *t, const char *fmt, ...)
{
    for (int tries = 0; tries < 2 && !t->err; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->err = 1;
        } else if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        } else {
            size_t cap = 2 * t->cap + (size_t)n + 1;
            char *p = realloc(t->buf, cap);
            if (p == NULL) {
                t->err = 1;
            } else {
                t->buf = p;
                t->cap = cap;
            }
        }
    }
}

/* A label value: reasons are static English text; quote-safe by construction, but escape
 * anyway. */
static void put_reasons(text_t *t, unsigned id, const coll_reasons_t *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        char r[COLL_REASON_MAX];
        size_t k = 0;
        for (const char *p = rs->r[i].reason; *p && k + 1 < sizeof(r); p++) {
            r[k++] = (*p == '"' || *p == '\\' || *p == '\n') ? '_' : *p;
        }
        r[k] = '\0';
        put(t, "dpm_rejects_total{campaign=\"%u\",reason=\"%s\"} %llu\n", id, r,
            (unsigned long long)rs->r[i].count);
    }
}

int coll_metrics_text(const coll_app_t *app, char **out, size_t *len)
{
    text_t t = {malloc(4096), 0, 4096, 0};
    coll_campaign_state_t *st = malloc(sizeof(*st));
    coll_reasons_t *un = malloc(sizeof(*un));
    if (t.buf == NULL || st == NULL || un == NULL) {
        free(t.buf);
        free(st);
        free(un);
        return -1;
    }
    uint64_t total = 0;
    coll_agg_snapshot(app->agg, -1, NULL, un, &total);
    put(&t, "# TYPE dpm_reports_stored_total counter\ndpm_reports_stored_total %llu\n",
        (unsigned long long)total);
    put(&t, "# TYPE dpm_lost_reports_total counter\ndpm_lost_reports_total %llu\n",
        (unsigned long long)coll_agg_lost_reports(app->agg));
    put(&t, "# TYPE dpm_rejects_total counter\n");
    put_reasons(&t, 0, un);
    for (size_t i = 0; i < app->campaigns->n; i++) {
        coll_agg_snapshot(app->agg, (int)i, st, NULL, NULL);
        put_reasons(&t, app->campaigns->c[i].mech.campaign.id, &st->rejects);
    }
    char reason[200];
    int healthy =
        app->sink.health == NULL || app->sink.health(app->sink.ctx, reason, sizeof(reason)) == 0;
    put(&t, "# TYPE dpm_storage_healthy gauge\ndpm_storage_healthy %d\n", healthy);
    if (app->limits != NULL) {
        coll_limit_stats_t l;
        coll_limits_stats(app->limits, &l);
        put(&t,
            "dpm_connections_active %llu\n"
            "dpm_connections_accepted_total %llu\n"
            "dpm_connections_refused_total{reason=\"per_address\"} %llu\n"
            "dpm_connections_refused_total{reason=\"full\"} %llu\n"
            "dpm_connections_refused_total{reason=\"memory\"} %llu\n"
            "dpm_connections_evicted_total %llu\n"
            "dpm_requests_rate_limited_total %llu\n"
            "dpm_requests_over_memory_total %llu\n"
            "dpm_requests_unauthorized_total %llu\n"
            "dpm_memory_reserved_bytes %zu\n"
            "dpm_memory_reserved_peak_bytes %zu\n"
            "dpm_memory_budget_bytes %zu\n",
            (unsigned long long)l.conns_active, (unsigned long long)l.conns_accepted,
            (unsigned long long)l.conns_refused_addr, (unsigned long long)l.conns_refused_full,
            (unsigned long long)l.conns_refused_memory, (unsigned long long)l.conns_evicted,
            (unsigned long long)l.rate_limited, (unsigned long long)l.memory_refused,
            (unsigned long long)l.unauthorized, l.memory_reserved, l.memory_peak,
            app->limits->memory_budget);
    }
    free(st);
    free(un);
    if (t.err) {
        free(t.buf);
        return -1;
    }
    *out = t.buf;
    *len = t.len;
    return 0;
}
