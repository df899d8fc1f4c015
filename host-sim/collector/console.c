/* SPDX-License-Identifier: Apache-2.0 */
/* The console's pages and files, and the operator token of a request (see console.h). */
#include "collector/console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/log.h"

/* What every console answer carries: scripts, styles, images and requests from this origin
 * only, no inline script, no framing, no referrer, no sniffing, no caching of operator data. */
#define SECURITY_HEADERS                                                                           \
    "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "         \
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "            \
    "frame-ancestors 'none'\r\n"                                                                   \
    "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"                                 \
    "Referrer-Policy: no-referrer\r\nCross-Origin-Resource-Policy: same-origin\r\n"                \
    "Cache-Control: no-store\r\n"

static const char *const ALLOW_GET = "Allow: GET, HEAD\r\n" SECURITY_HEADERS;

static int b64val(unsigned char ch)
{
    return ch >= 'A' && ch <= 'Z'   ? ch - 'A'
           : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
           : ch >= '0' && ch <= '9' ? ch - '0' + 52
           : ch == '+'              ? 62
           : ch == '/'              ? 63
                                    : -1;
}

/* Standard base64 (padding optional) of s into out (cap bytes, NUL-terminated): its length,
 * or -1 if s is not base64 or does not fit. */
static long b64decode(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s), o = 0;
    while (n > 0 && s[n - 1] == '=') {
        n--;
    }
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val((unsigned char)s[i]);
        if (v < 0) {
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o + 1 >= cap) {
                return -1;
            }
            out[o++] = (char)((acc >> bits) & 0xFF);
        }
    }
    out[o] = '\0';
    return (long)o;
}

const char *coll_console_token(const http_request_t *req, char *buf, size_t cap, size_t *len)
{
    const char *bearer = http_bearer_token(req, len);
    if (bearer != NULL || !req->has_authorization) {
        return bearer;
    }
    const char *a = req->authorization;
    if (strncasecmp(a, "basic ", 6) != 0) {
        return NULL;
    }
    a += 6;
    while (*a == ' ') {
        a++;
    }
    long n = b64decode(a, buf, cap);
    char *colon = n > 0 ? memchr(buf, ':', (size_t)n) : NULL;
    if (colon == NULL || memchr(buf, '\0', (size_t)n) != NULL) {
        return NULL; /* user:password, no NUL inside */
    }
    *len = (size_t)(buf + n - (colon + 1));
    return *len > 0 ? colon + 1 : NULL;
}

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
        const char *e = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;"
                        : *p == '"' ? "&quot;" : NULL;
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

/* "/console/campaign/{id}" or ".../time": the campaign id (a decimal without leading zeros). */
static int parse_page(const char *p, uint32_t *id, int *over_time)
{
    static const char prefix[] = "/console/campaign/";
    if (strncmp(p, prefix, sizeof(prefix) - 1) != 0) {
        return -1;
    }
    p += sizeof(prefix) - 1;
    uint64_t x = 0;
    size_t n = 0;
    while (p[n] >= '0' && p[n] <= '9' && n < 11) {
        x = x * 10u + (uint64_t)(p[n] - '0');
        n++;
    }
    if (n == 0 || n > 10 || (n > 1 && p[0] == '0') || x > UINT32_MAX) {
        return -1;
    }
    *over_time = strcmp(p + n, "/time") == 0;
    if (p[n] != '\0' && !*over_time) {
        return -1;
    }
    *id = (uint32_t)x;
    return 0;
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
    char why[256], text[320];
    if (ci < 0) {
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

int coll_console_route(const coll_app_t *app, const http_request_t *req, const char *path,
                       coll_response_t *resp)
{
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
