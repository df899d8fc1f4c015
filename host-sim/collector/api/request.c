/* SPDX-License-Identifier: Apache-2.0 */
/* Routing and the endpoints (see request.h). */
#include "collector/api/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/api/estimate_json.h"
#include "collector/dap/dap_service.h"
#include "collector/fedauc/fedauc_service.h"
#include "collector/ingest/log.h"
#include "collector/api/metrics.h"
#include "collector/ingest/revoked.h"
#include "dpm/version.h"

#define ALLOW_GET "Allow: GET, HEAD\r\n"
#define ALLOW_POST "Allow: POST\r\n"
#define CHALLENGE "WWW-Authenticate: Bearer realm=\"dpm-collector\"\r\n"
/* Operator endpoints also offer Basic (the token as the password), so that a browser asks for
 * it once and sends it with every request of the console (console.h); Bearer stays last. */
#define CHALLENGE_OPERATOR                                                                         \
    "WWW-Authenticate: Basic realm=\"dpm-collector operator\", charset=\"UTF-8\"\r\n" CHALLENGE

void coll_response_free(coll_response_t *resp)
{
    free(resp->body);
    memset(resp, 0, sizeof(*resp));
}

static void set_body(coll_response_t *resp, int status, const char *ctype, uint8_t *body,
                     size_t len)
{
    resp->status = status;
    resp->content_type = ctype;
    resp->body = body;
    resp->len = len;
}

void coll_text_response(int status, const char *text, int close, coll_response_t *resp)
{
    memset(resp, 0, sizeof(*resp));
    size_t n = strlen(text);
    uint8_t *b = malloc(n + 1);
    if (b != NULL) {
        memcpy(b, text, n + 1);
    }
    set_body(resp, status, "text/plain", b, b ? n : 0);
    resp->close = close || b == NULL;
}

static void method_not_allowed(const char *allow, coll_response_t *resp)
{
    coll_text_response(405, "method not allowed\n", 0, resp);
    resp->extra = allow;
}

static void unauthorized(const coll_app_t *app, int status, const char *text, coll_response_t *resp)
{
    if (app->limits != NULL) {
        coll_limits_count(app->limits, &app->limits->st.unauthorized, 1);
    }
    coll_text_response(status, text, 0, resp);
    resp->extra = status == 401 ? CHALLENGE : NULL;
}

void coll_operator_refuse(const coll_app_t *app, int status, const char *text,
                          coll_response_t *resp)
{
    unauthorized(app, status, text, resp);
    resp->extra = status == 401 ? CHALLENGE_OPERATOR : NULL;
}

#define REVOKED_TEXT "this credential is revoked\n"

/* Who sends this batch: a bearer token with the device or relay role, else a verified device
 * certificate, else nobody (allowed only with allow_anonymous). A token and a certificate
 * together must name one identity (auth.h), and neither may be revoked (revoked.h). 0, or the
 * status to answer. */
static int device_identity(const coll_app_t *app, const coll_peer_t *peer,
                           const http_request_t *req, coll_batch_t *b, const char **text)
{
    size_t tlen = 0;
    const char *token = http_bearer_token(req, &tlen);
    const char *cert = peer != NULL && peer->identity[0] != '\0' ? peer->identity : NULL;
    if (cert != NULL && coll_revoked_is(app->revoked, peer->cert_sha256, cert)) {
        *text = REVOKED_TEXT;
        return 403;
    }
    if (token != NULL) {
        const coll_credential_t *c = coll_auth_find(coll_app_auth(app), token, tlen);
        if (c == NULL) {
            *text = "unknown credential\n";
            return 401;
        }
        if ((c->roles & (COLL_ROLE_DEVICE | COLL_ROLE_RELAY)) == 0) {
            *text = "this credential may not post reports\n";
            return 403;
        }
        if (cert != NULL && strcmp(c->identity, cert) != 0) {
            *text = "the bearer token and the client certificate are two different identities: "
                    "send one of them, or bind the token to the certificate (cert=CN in the "
                    "credentials file)\n";
            return 403;
        }
        if (coll_revoked_is(app->revoked, NULL, c->identity)) {
            *text = REVOKED_TEXT;
            return 403;
        }
        b->device = c->identity;
        b->quota_override = (c->roles & COLL_ROLE_RELAY) ? c->relay_quota : 0;
        return 0;
    }
    if (cert != NULL) {
        b->device = cert;
        return 0;
    }
    if (app->allow_anonymous) {
        return 0;
    }
    *text = "a device credential is required (client certificate or bearer token)\n";
    return 401;
}

int coll_operator_check(const coll_app_t *app, const http_request_t *req, const char **text)
{
    if (app->public_estimates) {
        return 0;
    }
    size_t tlen = 0;
    char basic[HTTP_MAX_AUTH];
    const char *token = http_auth_token(req, basic, sizeof(basic), &tlen);
    const coll_credential_t *c =
        token != NULL ? coll_auth_find(coll_app_auth(app), token, tlen) : NULL;
    if (c == NULL) {
        *text = "an operator credential is required\n";
        return 401;
    }
    if ((c->roles & COLL_ROLE_OPERATOR) == 0) {
        *text = "this credential may not read estimates\n";
        return 403;
    }
    if (coll_revoked_is(app->revoked, NULL, c->identity)) {
        *text = REVOKED_TEXT;
        return 403;
    }
    return 0;
}

/* A DAP route's credential: 0 (none needed, or the role's bearer token, not revoked), or the
 * status to answer (401, 403) and *text. */
static int dap_role_check(const coll_app_t *app, const http_request_t *req, int role,
                          const char **text)
{
    if (role <= 0) {
        return 0;
    }
    size_t tlen = 0;
    const char *token = http_bearer_token(req, &tlen);
    if (token == NULL && req->has_dap_auth_token) { /* the draft's other header, as Janus has */
        token = req->dap_auth_token;
        tlen = strlen(token);
    }
    const coll_credential_t *c =
        token != NULL ? coll_auth_find(coll_app_auth(app), token, tlen) : NULL;
    if (c == NULL) {
        *text = role == (int)COLL_ROLE_AGGREGATOR
                    ? "the DAP leader's bearer token is required (a credential with the "
                      "aggregator role)\n"
                    : "the DAP collector's bearer token is required (a credential with the "
                      "collector role)\n";
        return 401;
    }
    if ((c->roles & (unsigned)role) == 0) {
        *text = "this credential has not the role this DAP resource needs (aggregator or "
                "collector)\n";
        return 403;
    }
    if (coll_revoked_is(app->revoked, NULL, c->identity)) {
        *text = REVOKED_TEXT;
        return 403;
    }
    return 0;
}

int coll_is_relay(const coll_app_t *app, const http_request_t *req)
{
    size_t tlen = 0;
    const char *token = http_bearer_token(req, &tlen);
    const coll_credential_t *c =
        token != NULL ? coll_auth_find(coll_app_auth(app), token, tlen) : NULL;
    return c != NULL && (c->roles & COLL_ROLE_RELAY) != 0 &&
           !coll_revoked_is(app->revoked, NULL, c->identity);
}

/* One rejected request (or FedAUC upload) of campaign_id (0: not attributable). */
static void count_reject(const coll_app_t *app, uint32_t campaign_id, const char *reason)
{
    coll_batch_t b;
    memset(&b, 0, sizeof(b));
    coll_batch_count(&b, campaign_id, reason, 1);
    b.rejects_total = 1; /* a rejected request: nothing to store but the count */
    app->sink.commit(app->sink.ctx, &b);
    coll_counters_reject(app->counters, reason, 1);
    coll_log(COLL_LOG_INFO, "reject", "\"campaign\": %u, \"reason\": %s, \"count\": 1", campaign_id,
             coll_log_str(reason));
    coll_batch_free(&b);
}

void coll_count_request_reject(const coll_app_t *app, const char *reason)
{
    count_reject(app, 0, reason);
}

/* Every reject of a committed batch, by campaign and reason, with the sender. */
static void log_rejects(const coll_batch_t *b)
{
    if (!coll_log_enabled(COLL_LOG_INFO)) {
        return;
    }
    for (size_t i = 0; i < b->ncounts; i++) {
        const coll_reject_count_t *c = &b->counts[i];
        coll_log(COLL_LOG_INFO, "reject",
                 "\"campaign\": %u, \"reason\": %s, \"count\": %llu, \"device\": %s",
                 c->campaign_id, coll_log_str(c->reason), (unsigned long long)c->count,
                 coll_log_str(b->device != NULL && b->device[0] ? b->device : NULL));
    }
}

static void post_reports(const coll_app_t *app, const coll_peer_t *peer, const http_request_t *req,
                         const uint8_t *body, size_t len, coll_response_t *resp)
{
    coll_batch_t b;
    memset(&b, 0, sizeof(b));
    const char *why = "";
    int auth = device_identity(app, peer, req, &b, &why);
    if (auth != 0) {
        unauthorized(app, auth, why, resp);
        return;
    }
    if (!http_content_type_is(req, COLL_CT_PROTOBUF)) {
        coll_count_request_reject(app, "unsupported content type");
        coll_text_response(415, "Content-Type must be " COLL_CT_PROTOBUF "\n", 0, resp);
        return;
    }
    const char *device = b.device;
    uint32_t quota = b.quota_override;
    if (coll_batch_decode(coll_app_campaigns(app), body, len, (int64_t)time(NULL), &b) != 0) {
        coll_batch_free(&b);
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    b.device = device;
    b.quota_override = quota;
    coll_fedauc_claims_t claims; /* FedAUC reports: checked against their upload, token claimed */
    if (coll_fedauc_check_batch(app->fedauc, coll_app_campaigns(app), &b, &claims) != 0) {
        coll_batch_free(&b);
        coll_text_response(500, "storage failure: nothing was stored, retry later\n", 0, resp);
        return;
    }
    /* Rejected batches are committed too: their reject counts are persisted. The store may
     * still reject a batch (device quota), so the status is read after the commit. */
    int before = coll_batch_status(&b);
    int failed = app->sink.commit(app->sink.ctx, &b) != 0;
    coll_fedauc_settle(app->fedauc, &claims, !failed && coll_batch_status(&b) == 200);
    if (failed && before == 200) {
        coll_batch_free(&b);
        coll_text_response(500, "storage failure: nothing was stored, retry later\n", 0, resp);
        return;
    }
    int status = coll_batch_status(&b);
    coll_counters_batch(app->counters, &b);
    coll_fedauc_count_batch(app->fedauc, coll_app_campaigns(app), &b);
    log_rejects(&b);
    uint8_t *out = NULL;
    size_t n = 0;
    if (coll_batch_response(&b, &out, &n) != 0) {
        coll_batch_free(&b);
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    coll_batch_free(&b);
    memset(resp, 0, sizeof(*resp));
    set_body(resp, status, COLL_CT_PROTOBUF, out, n);
}

/* Quotes, backslashes and control characters out: the reason goes into a JSON string. */
static void json_safe(char *s)
{
    for (char *p = s; *p; p++) {
        *p = (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) ? ' ' : *p;
    }
}

static void get_health(const coll_app_t *app, coll_response_t *resp)
{
    coll_totals_t totals;
    char reason[200], text[320];
    int bad = app->sink.health != NULL && app->sink.health(app->sink.ctx, reason, sizeof(reason));
    if (!bad && app->sink.read(app->sink.ctx, -1, 0, 0, NULL, &totals, reason, sizeof(reason))) {
        bad = 1; /* the database cannot be read (PostgreSQL down) */
    }
    if (bad) {
        json_safe(reason);
        snprintf(text, sizeof(text),
                 "{\"status\": \"unhealthy\", \"version\": \"%s\", \"reason\": \"%s\"}\n",
                 dpm_version(), reason);
        coll_text_response(503, text, 0, resp);
    } else {
        snprintf(
            text, sizeof(text),
            "{\"status\": \"ok\", \"version\": \"%s\", \"campaigns\": %zu, \"reports\": %llu}\n",
            dpm_version(), coll_app_campaigns(app)->n, (unsigned long long)totals.reports);
        coll_text_response(200, text, 0, resp);
    }
    resp->content_type = "application/json";
}

static void get_metrics(const coll_app_t *app, coll_response_t *resp)
{
    char *text = NULL;
    size_t n = 0;
    if (coll_metrics_text(app, &text, &n) != 0) {
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    memset(resp, 0, sizeof(*resp));
    set_body(resp, 200, "text/plain; version=0.0.4", (uint8_t *)text, n);
}

int coll_parse_id_path(const char *p, const char *prefix, uint32_t *id, const char **rest)
{
    size_t k = strlen(prefix);
    if (strncmp(p, prefix, k) != 0) {
        return -1;
    }
    p += k;
    uint64_t x = 0;
    size_t n = 0;
    while (p[n] >= '0' && p[n] <= '9') {
        if (n >= 10) {
            return -1;
        }
        x = x * 10u + (uint64_t)(p[n] - '0');
        n++;
    }
    if (n == 0 || (n > 1 && p[0] == '0') || x > UINT32_MAX) {
        return -1;
    }
    *id = (uint32_t)x;
    *rest = p + n;
    return 0;
}

/* "/v1/campaigns/{id}" or ".../estimate". */
static int parse_campaign_path(const char *p, uint32_t *id, int *estimate)
{
    const char *rest = NULL;
    if (coll_parse_id_path(p, "/v1/campaigns/", id, &rest) != 0) {
        return -1;
    }
    if (rest[0] == '\0') {
        *estimate = 0;
    } else if (strcmp(rest, "/estimate") == 0) {
        *estimate = 1;
    } else {
        return -1;
    }
    return 0;
}

int coll_estimate_answer(const coll_app_t *app, int ci, const coll_estimate_query_t *q, char **json,
                         size_t *n, char *why, size_t cap)
{
    /* ~10 KB of sums: on the heap, connection threads have modest stacks */
    coll_campaign_state_t *st = malloc(sizeof(*st));
    coll_totals_t *totals = malloc(sizeof(*totals));
    int rc = st == NULL || totals == NULL                                                   ? -1
             : app->sink.read(app->sink.ctx, ci, q->from, q->to, st, totals, why, cap) != 0 ? -2
                                                                                            : 0;
    if (rc == 0 && st->fa.on && !q->all && q->from == q->to &&
        coll_fedauc_period_info(app->fedauc, coll_app_campaigns(app), ci, q->from,
                                (int64_t)time(NULL), &st->fa_phase) != 0) {
        rc = -2;
        snprintf(why, cap, "fedauc phase unreadable");
    }
    if (rc == 0 && coll_estimate_json(coll_app_campaigns(app), ci, q, st, totals,
                                      (int64_t)time(NULL), json, n) != 0) {
        rc = -1;
    }
    free(st);
    free(totals);
    if (rc == -2) {
        coll_log(COLL_LOG_ERROR, "storage_error", "\"read\": \"estimate\", \"error\": %s",
                 coll_log_str(why));
    }
    return rc;
}

void coll_storage_unavailable(const char *why, coll_response_t *resp)
{
    char text[240];
    snprintf(text, sizeof(text), "database unavailable: %s\n", why);
    coll_text_response(503, text, 0, resp);
    resp->extra = "Retry-After: 1\r\n";
}

static void get_estimate(const coll_app_t *app, int ci, const char *query, coll_response_t *resp)
{
    coll_estimate_query_t q;
    char why[200];
    if (coll_estimate_parse_query(query, &q, why, sizeof(why)) != 0) {
        char text[240];
        snprintf(text, sizeof(text), "bad query: %s\n", why);
        coll_text_response(400, text, 0, resp);
        return;
    }
    char *json = NULL;
    size_t n = 0;
    int rc = coll_estimate_answer(app, ci, &q, &json, &n, why, sizeof(why));
    if (rc == -2) {
        coll_storage_unavailable(why, resp);
        return;
    }
    if (rc != 0) {
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    memset(resp, 0, sizeof(*resp));
    set_body(resp, 200, "application/json", (uint8_t *)json, n);
}

static void get_campaign(const coll_app_t *app, uint32_t id, int estimate, const char *query,
                         coll_response_t *resp)
{
    int ci = coll_campaigns_index(coll_app_campaigns(app), id);
    if (ci < 0) {
        coll_text_response(404, "unknown campaign\n", 0, resp);
        return;
    }
    memset(resp, 0, sizeof(*resp));
    if (estimate) {
        get_estimate(app, ci, query, resp);
        return;
    }
    const coll_campaign_t *c = &coll_app_campaigns(app)->c[ci];
    uint8_t *pb = malloc(c->pb_len + 1);
    if (pb == NULL) {
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    memcpy(pb, c->pb, c->pb_len);
    set_body(resp, 200, COLL_CT_PROTOBUF, pb, c->pb_len);
}

/* The route's path: the target without its query string. */
static void route_path(const http_request_t *req, char path[HTTP_MAX_TARGET])
{
    size_t n = strcspn(req->target, "?#");
    memcpy(path, req->target, n);
    path[n] = '\0';
}

int coll_admit_request(const coll_app_t *app, const coll_peer_t *peer, const http_request_t *req,
                       coll_response_t *resp)
{
    char path[HTTP_MAX_TARGET];
    route_path(req, path);
    int dap_role = dap_service_route(app->dap, req->method == HTTP_POST, path);
    if (dap_role >= 0) { /* a DAP route with a body: its credential before the body is read */
        const char *text = "";
        int st = dap_role_check(app, req, dap_role, &text);
        if (st == 0) {
            return 0;
        }
        unauthorized(app, st, text, resp);
        resp->extra = NULL; /* Bearer only: no Basic challenge for a browser */
        resp->close = 1;
        return 1;
    }
    int takes_body = req->method == HTTP_POST &&
                     (strcmp(path, "/v1/reports") == 0 || strcmp(path, "/v1/fedauc/uploads") == 0);
    if (!takes_body) {
        if (req->has_length && req->content_length > 0) {
            /* Nothing reads it, so nothing is reserved for it and it is never read. */
            coll_text_response(413,
                               "this request takes no body: only POST /v1/reports and POST "
                               "/v1/fedauc/uploads have one (send Content-Length: 0 or none)\n",
                               1, resp);
            return 1;
        }
        return 0;
    }
    coll_batch_t probe;
    memset(&probe, 0, sizeof(probe));
    const char *why = "";
    int st = device_identity(app, peer, req, &probe, &why);
    if (st == 0) {
        return 0;
    }
    unauthorized(app, st, why, resp);
    resp->close = 1; /* its body is not read */
    return 1;
}

static int is_get(const http_request_t *req)
{
    return req->method == HTTP_GET || req->method == HTTP_HEAD;
}

void coll_handle_request(const coll_app_t *app, const coll_peer_t *peer, const http_request_t *req,
                         const uint8_t *body, size_t len, coll_response_t *resp)
{
    char path[HTTP_MAX_TARGET];
    route_path(req, path);

    uint32_t id = 0;
    int estimate = 0;
    const char *why = "";
    int st;
    if (strcmp(path, "/v1/reports") == 0) {
        if (req->method != HTTP_POST) {
            method_not_allowed(ALLOW_POST, resp);
            return;
        }
        post_reports(app, peer, req, body, len, resp);
    } else if (strcmp(path, "/healthz") == 0) {
        if (!is_get(req)) {
            method_not_allowed(ALLOW_GET, resp);
            return;
        }
        get_health(app, resp);
    } else if (strcmp(path, "/metrics") == 0) {
        if (!is_get(req)) {
            method_not_allowed(ALLOW_GET, resp);
        } else if ((st = coll_operator_check(app, req, &why)) != 0) {
            coll_operator_refuse(app, st, why, resp);
        } else {
            get_metrics(app, resp);
        }
    } else if (parse_campaign_path(path, &id, &estimate) == 0) {
        if (!is_get(req)) {
            method_not_allowed(ALLOW_GET, resp);
        } else if (estimate && (st = coll_operator_check(app, req, &why)) != 0) {
            coll_operator_refuse(app, st, why, resp);
        } else {
            const char *q = strchr(req->target, '?');
            get_campaign(app, id, estimate, q != NULL ? q + 1 : NULL, resp);
        }
    } else if (strncmp(path, "/dap/", 5) == 0) {
        int role = dap_service_route(app->dap, req->method == HTTP_POST, path);
        if ((st = dap_role_check(app, req, role, &why)) != 0) {
            unauthorized(app, st, why, resp);
            resp->extra = NULL;
        } else if (req->method != HTTP_POST && !is_get(req)) {
            method_not_allowed(ALLOW_GET, resp);
        } else {
            dap_http_answer_t a;
            dap_service_request(app->dap, req->method == HTTP_POST, path,
                                req->has_content_type ? req->content_type : NULL,
                                req->has_task_digest ? req->task_digest : NULL, body, len,
                                (uint64_t)time(NULL), &a);
            memset(resp, 0, sizeof(*resp));
            set_body(resp, a.status, a.content_type, a.body, a.len);
            resp->extra = a.status == 202 ? "Retry-After: 1\r\n" : NULL;
        }
    } else if (strncmp(path, "/v1/fedauc/", 11) == 0) {
        coll_batch_t probe; /* the FedAUC endpoints take the device credential of reports */
        memset(&probe, 0, sizeof(probe));
        if ((st = device_identity(app, peer, req, &probe, &why)) != 0) {
            unauthorized(app, st, why, resp);
        } else {
            coll_fedauc_answer_t a;
            coll_fedauc_request(app->fedauc, coll_app_campaigns(app), req, path, body, len,
                                (int64_t)time(NULL), probe.device, probe.quota_override, &a);
            if (a.reject != NULL) { /* counted like rejected reports, by campaign and reason */
                count_reject(app, a.reject_campaign, a.reject);
            }
            memset(resp, 0, sizeof(*resp));
            set_body(resp, a.status, a.content_type, a.body, a.len);
            resp->close = a.close;
            resp->extra = a.extra;
        }
    } else {
        coll_text_response(404, "not found\n", 0, resp);
    }
}
