/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON the console reads: campaigns, estimates period by period, ingestion (console.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/console/console.h"
#include "collector/api/estimate_json.h"
#include "mech/host_mech.h"
#include "mech/base/fedauc_phase.h"
#include "collector/ingest/counters.h"
#include "common/json_write.h"

static void campaign_json(jw_t *w, const coll_campaign_t *c, int64_t now)
{
    const dpm_campaign_t *cp = &c->mech.campaign;
    jw_raw(w, "{\"id\": %u, \"kind\": \"campaign\"", cp->id);
    coll_names_json(w, &c->opts.names);
    jw_raw(w, ", \"mechanism\": \"%s\", \"eps\": ", coll_mechanism_name(cp->mechanism));
    jw_num(w, cp->eps.q16 / 65536.0, 9);
    jw_raw(w, ", \"eps_implemented\": ");
    jw_num(w, c->mech.eps_implemented / 65536.0, 9);
    jw_raw(w, ", \"budget\": ");
    jw_num(w, cp->budget.q16 / 65536.0, 9);
    jw_raw(w, ", \"privacy_unit\": ");
    jw_str(w, host_privacy_unit(cp));
    jw_raw(w, ", \"trust_model\": ");
    jw_str(w, host_mech_of(cp)->trust_model);
    jw_raw(w, ", \"period_seconds\": %u, \"start\": ", cp->period_seconds);
    if (c->opts.has_start) {
        jw_raw(w, "%lld", (long long)c->opts.start);
    } else {
        jw_raw(w, "null");
    }
    jw_raw(w, ", \"period_now\": %u, \"groups\": %u, \"metrics\": [", coll_period_now(c, now),
           cp->groups);
    for (uint32_t m = 0; m < cp->nmetrics; m++) {
        jw_raw(w, "%s\"%s\"", m ? ", " : "", host_metric_name(cp->metrics[m]));
    }
    jw_raw(w, "], \"bins\": ");
    if (host_mech_of(cp)->flags & HOST_MECH_BINS) {
        jw_raw(w, "%u", cp->nbins + 1u);
    } else {
        jw_raw(w, "null");
    }
    jw_raw(w,
           ", \"device_quota\": %u, \"late_seconds\": %u, \"fingerprint\": \"%08x\", "
           "\"estimate\": \"/v1/campaigns/%u/estimate\"}",
           c->opts.device_quota, c->opts.late_seconds, c->mech.params_hash, cp->id);
}

static void json_response(jw_t *w, coll_response_t *resp)
{
    size_t n = 0;
    char *json = jw_take(w, &n);
    memset(resp, 0, sizeof(*resp));
    if (json == NULL) {
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    resp->body = (uint8_t *)json;
    resp->len = n;
}

static void bad_query(int status, const char *why, coll_response_t *resp)
{
    char text[320];
    snprintf(text, sizeof(text), "%s%s\n", status == 400 ? "bad query: " : "", why);
    coll_text_response(status, text, 0, resp);
}

/* Is key=... a parameter of query? */
static int has_key(const char *query, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = query; p != NULL && *p != '\0';) {
        if (strncmp(p, key, k) == 0 && p[k] == '=') {
            return 1;
        }
        p = strchr(p, '&');
        p = p != NULL ? p + 1 : NULL;
    }
    return 0;
}

/* 404 (and why) if q names a period after the current one, now; else 0. */
static int future_period(const coll_campaign_t *c, const coll_estimate_query_t *q, int from_given,
                         int to_given, uint32_t now, char *why, size_t cap)
{
    uint32_t asked = from_given ? q->from : 0; /* the latest period named */
    if (to_given && q->to > asked) {
        asked = q->to;
    }
    if (asked > now) {
        snprintf(why, cap,
                 "period %u of campaign %u has not begun: the current period is %u (periods "
                 "are %u s long)",
                 asked, c->mech.campaign.id, now, c->mech.campaign.period_seconds);
        return 404;
    }
    return 0;
}

/* The periods a console request is about: q parsed from query (400 and why if it is bad),
 * checked against the campaign's current period (404 for a period that has not begun). With
 * range (the over-time view and .../periods) it is resolved to at most
 * COLL_CONSOLE_PAGE_PERIODS periods ending at period_now by default (400 if more are asked). */
static int periods_of(const coll_campaign_t *c, const char *query, int range,
                      coll_estimate_query_t *q, char *why, size_t cap)
{
    if (coll_estimate_parse_query(query, q, why, cap) != 0) {
        return 400;
    }
    uint32_t now = coll_period_now(c, (int64_t)time(NULL));
    int from_given = has_key(query, "from") || has_key(query, "period");
    int to_given = has_key(query, "to") || has_key(query, "period");
    if (!range) {
        return future_period(c, q, from_given, to_given, now, why, cap);
    }
    uint32_t span = COLL_CONSOLE_PAGE_PERIODS - 1u;
    if (!to_given && from_given && q->from > now) {
        return future_period(c, q, from_given, to_given, now, why, cap);
    }
    if (!to_given) {
        uint64_t end = (uint64_t)q->from + span;
        q->to = !from_given || end > now ? now : (uint32_t)end;
    }
    if (!from_given) {
        q->from = q->to >= span ? q->to - span : 0;
    }
    q->all = 0;
    if (q->to - q->from >= COLL_CONSOLE_PAGE_PERIODS) {
        snprintf(why, cap,
                 "at most %d periods a request (asked for %llu): page through them with from "
                 "and to",
                 COLL_CONSOLE_PAGE_PERIODS, (unsigned long long)q->to - q->from + 1u);
        return 400;
    }
    return future_period(c, q, from_given, to_given, now, why, cap);
}

int coll_console_check_page(const coll_app_t *app, int ci, const char *query, int over_time,
                            char *why, size_t cap)
{
    coll_estimate_query_t q;
    return periods_of(&coll_app_campaigns(app)->c[ci], query, over_time, &q, why, cap);
}

/* "/v1/campaigns/{id}/info" or ".../periods": the id and which (1 periods, 0 info). */
static int parse_api_path(const char *p, uint32_t *id, int *periods)
{
    const char *rest = NULL;
    if (coll_parse_id_path(p, "/v1/campaigns/", id, &rest) != 0) {
        return -1;
    }
    *periods = strcmp(rest, "/periods") == 0;
    return *periods || strcmp(rest, "/info") == 0 ? 0 : -1;
}

int coll_console_api_owns(const char *path)
{
    uint32_t id;
    int over_periods;
    return strcmp(path, "/v1/campaigns") == 0 || strcmp(path, "/v1/ingestion") == 0 ||
           parse_api_path(path, &id, &over_periods) == 0;
}

static void list_campaigns(const coll_app_t *app, const char *query, coll_response_t *resp)
{
    const coll_campaigns_t *cs = coll_app_campaigns(app);
    size_t per = COLL_CONSOLE_PAGE_CAMPAIGNS;
    size_t pages = cs->n == 0 ? 1 : (cs->n + per - 1) / per;
    uint64_t page = 0;
    if (query != NULL && query[0] != '\0') {
        const char *v = strncmp(query, "page=", 5) == 0 ? query + 5 : NULL;
        size_t n = v != NULL ? strlen(v) : 0;
        int ok = v != NULL && n >= 1 && n <= 6 && strspn(v, "0123456789") == n;
        page = ok ? strtoull(v, NULL, 10) : 0;
        if (!ok || page >= pages) {
            char why[160];
            snprintf(why, sizeof(why), "the only parameter is page, a number 0 .. %zu", pages - 1);
            bad_query(400, why, resp);
            return;
        }
    }
    int64_t now = (int64_t)time(NULL);
    jw_t w;
    jw_buffer(&w);
    jw_raw(&w,
           "{\"page\": %llu, \"page_size\": %zu, \"pages\": %zu, \"total\": %zu, "
           "\"campaigns\": [",
           (unsigned long long)page, per, pages, cs->n);
    for (size_t i = (size_t)page * per; i < cs->n && i < (size_t)(page + 1) * per; i++) {
        jw_raw(&w, "%s", i > (size_t)page * per ? ", " : "");
        campaign_json(&w, &cs->c[i], now);
    }
    jw_raw(&w, "]}\n");
    json_response(&w, resp);
}

static void one_campaign(const coll_app_t *app, int ci, const char *query, coll_response_t *resp)
{
    if (query != NULL && query[0] != '\0') {
        bad_query(400, "this endpoint takes no query parameters", resp);
        return;
    }
    jw_t w;
    jw_buffer(&w);
    campaign_json(&w, &coll_app_campaigns(app)->c[ci], (int64_t)time(NULL));
    jw_raw(&w, "\n");
    json_response(&w, resp);
}

static void periods(const coll_app_t *app, int ci, const char *query, coll_response_t *resp)
{
    const coll_campaign_t *c = &coll_app_campaigns(app)->c[ci];
    coll_estimate_query_t q;
    char why[256];
    int st = periods_of(c, query, 1, &q, why, sizeof(why));
    if (st != 0) {
        bad_query(st, why, resp);
        return;
    }
    jw_t w;
    jw_buffer(&w);
    jw_raw(&w,
           "{\"campaign\": %u, \"period_now\": %u, \"from\": %u, \"to\": %u, \"max_periods\": %d, "
           "\"periods\": [",
           c->mech.campaign.id, coll_period_now(c, (int64_t)time(NULL)), q.from, q.to,
           COLL_CONSOLE_PAGE_PERIODS);
    for (uint32_t p = q.from;; p++) {
        coll_estimate_query_t one = q;
        one.from = one.to = p;
        char *json = NULL;
        size_t n = 0;
        int rc = coll_estimate_answer(app, ci, &one, &json, &n, why, sizeof(why));
        if (rc != 0) {
            free(jw_take(&w, &n));
            if (rc == -2) {
                coll_storage_unavailable(why, resp);
            } else {
                coll_text_response(500, "out of memory\n", 1, resp);
            }
            return;
        }
        while (n > 0 && json[n - 1] == '\n') {
            json[--n] = '\0';
        }
        jw_raw(&w, "%s%s", p > q.from ? ",\n" : "", json);
        free(json);
        if (p == q.to) {
            break;
        }
    }
    jw_raw(&w, "]}\n");
    json_response(&w, resp);
}

int coll_console_api(const coll_app_t *app, const char *path, const char *query,
                     coll_response_t *resp)
{
    uint32_t id = 0;
    int per_period = 0;
    if (strcmp(path, "/v1/campaigns") == 0) {
        list_campaigns(app, query, resp);
        return 1;
    }
    if (strcmp(path, "/v1/ingestion") == 0) {
        if (query != NULL && query[0] != '\0') {
            bad_query(400, "this endpoint takes no query parameters", resp);
            return 1;
        }
        char *json = NULL;
        size_t n = 0;
        if (coll_counters_series_json(app->counters, (int64_t)time(NULL), &json, &n) != 0) {
            coll_text_response(500, "out of memory\n", 1, resp);
            return 1;
        }
        memset(resp, 0, sizeof(*resp));
        resp->status = 200;
        resp->content_type = "application/json";
        resp->body = (uint8_t *)json;
        resp->len = n;
        return 1;
    }
    if (parse_api_path(path, &id, &per_period) != 0) {
        return 0;
    }
    int ci = coll_campaigns_index(coll_app_campaigns(app), id);
    if (ci < 0) {
        coll_text_response(404, "unknown campaign\n", 0, resp);
    } else if (per_period) {
        periods(app, ci, query, resp);
    } else {
        one_campaign(app, ci, query, resp);
    }
    return 1;
}
