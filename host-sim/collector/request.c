/* SPDX-License-Identifier: Apache-2.0 */
/* Routing and the endpoints (see request.h). */
#include "collector/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/estimate_json.h"
#include "dpm/version.h"

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
    resp->allow = allow;
}

void coll_count_request_reject(const coll_app_t *app, const char *reason)
{
    coll_batch_t b;
    memset(&b, 0, sizeof(b));
    coll_batch_count(&b, 0, reason, 1);
    b.rejects_total = 1; /* a rejected request: nothing to store but the count */
    app->sink.commit(app->sink.ctx, &b);
    coll_batch_free(&b);
}

static void post_reports(const coll_app_t *app, const http_request_t *req, const uint8_t *body,
                         size_t len, coll_response_t *resp)
{
    if (!http_content_type_is(req, COLL_CT_PROTOBUF)) {
        coll_count_request_reject(app, "unsupported content type");
        coll_text_response(415, "Content-Type must be " COLL_CT_PROTOBUF "\n", 0, resp);
        return;
    }
    coll_batch_t b;
    memset(&b, 0, sizeof(b));
    if (coll_batch_decode(app->campaigns, body, len, &b) != 0) {
        coll_batch_free(&b);
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    int status = coll_batch_status(&b);
    /* Rejected batches are committed too: their reject counts are persisted. */
    if (app->sink.commit(app->sink.ctx, &b) != 0 && status == 200) {
        coll_batch_free(&b);
        coll_text_response(500, "storage failure: nothing was stored, retry later\n", 0, resp);
        return;
    }
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

static void get_health(const coll_app_t *app, coll_response_t *resp)
{
    uint64_t total = 0;
    coll_agg_snapshot(app->agg, -1, NULL, NULL, &total);
    char text[160];
    snprintf(text, sizeof(text),
             "{\"status\": \"ok\", \"version\": \"%s\", \"campaigns\": %zu, \"reports\": %llu}\n",
             dpm_version(), app->campaigns->n, (unsigned long long)total);
    coll_text_response(200, text, 0, resp);
    resp->content_type = "application/json";
}

/* "/v1/campaigns/{id}" or ".../estimate": a decimal id without leading zeros or sign. */
static int parse_campaign_path(const char *p, uint32_t *id, int *estimate)
{
    static const char prefix[] = "/v1/campaigns/";
    if (strncmp(p, prefix, sizeof(prefix) - 1) != 0) {
        return -1;
    }
    p += sizeof(prefix) - 1;
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
    if (p[n] == '\0') {
        *estimate = 0;
    } else if (strcmp(p + n, "/estimate") == 0) {
        *estimate = 1;
    } else {
        return -1;
    }
    *id = (uint32_t)x;
    return 0;
}

static void get_campaign(const coll_app_t *app, uint32_t id, int estimate, coll_response_t *resp)
{
    int ci = coll_campaigns_index(app->campaigns, id);
    if (ci < 0) {
        coll_text_response(404, "unknown campaign\n", 0, resp);
        return;
    }
    memset(resp, 0, sizeof(*resp));
    if (estimate) {
        char *json = NULL;
        size_t n = 0;
        if (coll_estimate_json(app->campaigns, app->agg, ci, &json, &n) != 0) {
            coll_text_response(500, "out of memory\n", 1, resp);
            return;
        }
        set_body(resp, 200, "application/json", (uint8_t *)json, n);
        return;
    }
    const coll_campaign_t *c = &app->campaigns->c[ci];
    uint8_t *pb = malloc(c->pb_len + 1);
    if (pb == NULL) {
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    memcpy(pb, c->pb, c->pb_len);
    set_body(resp, 200, COLL_CT_PROTOBUF, pb, c->pb_len);
}

void coll_handle_request(const coll_app_t *app, const http_request_t *req, const uint8_t *body,
                         size_t len, coll_response_t *resp)
{
    /* route on the path without its query string */
    char path[HTTP_MAX_TARGET];
    size_t n = strcspn(req->target, "?#");
    memcpy(path, req->target, n);
    path[n] = '\0';

    uint32_t id = 0;
    int estimate = 0;
    if (strcmp(path, "/v1/reports") == 0) {
        if (req->method != HTTP_POST) {
            method_not_allowed("POST", resp);
            return;
        }
        post_reports(app, req, body, len, resp);
    } else if (strcmp(path, "/healthz") == 0) {
        if (req->method != HTTP_GET) {
            method_not_allowed("GET", resp);
            return;
        }
        get_health(app, resp);
    } else if (parse_campaign_path(path, &id, &estimate) == 0) {
        if (req->method != HTTP_GET) {
            method_not_allowed("GET", resp);
            return;
        }
        get_campaign(app, id, estimate, resp);
    } else {
        coll_text_response(404, "not found\n", 0, resp);
    }
}
