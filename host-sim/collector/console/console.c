/* SPDX-License-Identifier: Apache-2.0 */
/* The console's pages and files, and the operator token of a request (see console.h). */
#include "collector/console/console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/ingest/log.h"

/* What every console answer carries: scripts, styles, images and requests from this origin
 * only, no inline script, no framing, no referrer, no sniffing, no caching of operator data. */
#define SECURITY_HEADERS                                                                           \
    "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "           \
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "              \
    "frame-ancestors 'none'\r\n"                                                                   \
    "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"                                 \
    "Referrer-Policy: no-referrer\r\nCross-Origin-Resource-Policy: same-origin\r\n"                \
    "Cache-Control: no-store\r\n"

static const char *const ALLOW_GET = "Allow: GET, HEAD\r\n" SECURITY_HEADERS;

static const coll_console_asset_t *asset(const char *name)
{
    for (size_t i = 0; i < coll_console_nassets; i++) {
        if (strcmp(coll_console_assets[i].name, name) == 0) {
            return &coll_console_assets[i];
        }
    }
    return NULL;
}

static void send_asset(const coll_console_asset_t *a, int status, coll_response_t *resp)
{
    memset(resp, 0, sizeof(*resp));
    uint8_t *b = malloc(a->len + 1);
    if (b == NULL) {
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    memcpy(b, a->data, a->len);
    resp->status = status;
    resp->content_type = a->content_type;
    resp->body = b;
    resp->len = a->len;
    resp->extra = SECURITY_HEADERS;
}

/* text with &, <, >, " escaped into out (cap bytes). */
static void html_escape(const char *text, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = text; *p != '\0' && o + 7 < cap; p++) {
        const char *e = *p == '&'   ? "&amp;"
                        : *p == '<' ? "&lt;"
                        : *p == '>' ? "&gt;"
                        : *p == '"' ? "&quot;"
                                    : NULL;
        if (e != NULL) {
            memcpy(out + o, e, strlen(e));
            o += strlen(e);
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

/* A page that says what went wrong (no script needed to read it). */
static void error_page(int status, const char *title, const char *why, coll_response_t *resp)
{
    char t[256], w[1024], page[2048];
    html_escape(title, t, sizeof(t));
    html_escape(why, w, sizeof(w));
    snprintf(page, sizeof(page),
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<title>%d %s - dpm-collector</title>"
             "<link rel=\"stylesheet\" href=\"/console/assets/console.css\">"
             "<link rel=\"icon\" href=\"data:,\"></head>\n"
             "<body><header class=\"top\"><a href=\"/console/\">dpm-collector console</a></header>"
             "<main class=\"error\" id=\"error\" data-status=\"%d\"><h1>%d: %s</h1><p>%s</p>"
             "<p><a href=\"/console/\">All campaigns</a></p></main></body></html>\n",
             status, t, status, status, t, w);
    coll_text_response(status, page, 0, resp);
    resp->content_type = "text/html; charset=utf-8";
    resp->extra = SECURITY_HEADERS;
}

/* "/console/campaign/{id}" or ".../time". */
static int parse_page(const char *p, uint32_t *id, int *over_time)
{
    const char *rest = NULL;
    if (coll_parse_id_path(p, "/console/campaign/", id, &rest) != 0) {
        return -1;
    }
    *over_time = strcmp(rest, "/time") == 0;
    return rest[0] == '\0' || *over_time ? 0 : -1;
}

static void console_page(const coll_app_t *app, const char *path, const char *query,
                         coll_response_t *resp)
{
    const coll_console_asset_t *index = asset("index.html");
    if (strcmp(path, "/console") == 0) {
        coll_text_response(301, "the console is at /console/\n", 0, resp);
        resp->extra = "Location: /console/\r\n" SECURITY_HEADERS;
        return;
    }
    if (strncmp(path, "/console/assets/", 16) == 0) {
        const coll_console_asset_t *a = asset(path + 16);
        if (a != NULL && strcmp(a->name, "index.html") != 0) {
            send_asset(a, 200, resp);
        } else {
            error_page(404, "no such file", "The console has no file of that name.", resp);
        }
        return;
    }
    if (strcmp(path, "/console/") == 0 || strcmp(path, "/console/ingestion") == 0) {
        if (query != NULL && query[0] != '\0' && strcmp(path, "/console/ingestion") == 0) {
            error_page(400, "bad query", "This page takes no query parameters.", resp);
            return;
        }
        send_asset(index, 200, resp);
        return;
    }
    uint32_t id = 0;
    int over_time = 0;
    if (parse_page(path, &id, &over_time) != 0) {
        error_page(404, "no such page",
                   "The console has: the campaigns (/console/), a campaign "
                   "(/console/campaign/ID), its estimates over time (/console/campaign/ID/time) "
                   "and ingestion (/console/ingestion).",
                   resp);
        return;
    }
    int ci = coll_campaigns_index(coll_app_campaigns(app), id);
    char why[256];
    if (ci < 0) {
        char text[320];
        snprintf(text, sizeof(text), "No campaign has the id %u on this collector.", id);
        error_page(404, "unknown campaign", text, resp);
        return;
    }
    int st = coll_console_check_page(app, ci, query, over_time, why, sizeof(why));
    if (st != 0) {
        error_page(st, st == 404 ? "unknown period" : "bad query", why, resp);
        return;
    }
    send_asset(index, 200, resp);
}

int coll_console_route(const coll_app_t *app, const http_request_t *req, coll_response_t *resp)
{
    char path[HTTP_MAX_TARGET];
    size_t plen = strcspn(req->target, "?#");
    memcpy(path, req->target, plen);
    path[plen] = '\0';
    int page = strcmp(path, "/console") == 0 || strncmp(path, "/console/", 9) == 0;
    const char *q = strchr(req->target, '?');
    q = q != NULL ? q + 1 : NULL;
    if (!page) {
        if (!coll_console_api_owns(path)) {
            return 0; /* not the console's JSON either: request.c answers it */
        }
    }
    const char *why = "";
    int st = 0;
    if (req->method != HTTP_GET && req->method != HTTP_HEAD) {
        coll_text_response(405, "method not allowed: the console only reads (GET)\n", 0, resp);
        resp->extra = ALLOW_GET;
        return 1;
    }
    if ((st = coll_operator_check(app, req, &why)) != 0) {
        coll_operator_refuse(app, st, why, resp);
        return 1;
    }
    if (page) {
        console_page(app, path, q, resp);
        return 1;
    }
    if (!coll_console_api(app, path, q, resp)) {
        coll_text_response(404, "not found\n", 0, resp);
    }
    return 1;
}
