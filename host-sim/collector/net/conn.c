/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP connection state machine (see conn.h). */
#include "collector/net/conn.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/console/console.h"
#include "collector/ingest/log.h"

/* Keep at most this much body buffer between requests: idle connections stay small. */
#define BODY_KEEP_BYTES (64u * 1024u)

void coll_conn_init(coll_conn_t *c, const coll_app_t *app, const coll_peer_t *peer,
                    coll_emit_fn emit, void *emit_ctx)
{
    memset(c, 0, sizeof(*c));
    c->app = app;
    c->peer = peer;
    c->emit = emit;
    c->emit_ctx = emit_ctx;
    c->state = COLL_CONN_HEAD;
}

void coll_conn_set_time(coll_conn_t *c, uint64_t now_ms)
{
    c->now_ms = now_ms;
}

static void release(coll_conn_t *c)
{
    if (c->reserved > 0 && c->app->limits != NULL) {
        coll_limits_release(c->app->limits, c->reserved);
    }
    c->reserved = 0;
}

static void free_body(coll_conn_t *c)
{
    free(c->body);
    c->body = NULL;
    c->body_cap = 0;
}

void coll_conn_free(coll_conn_t *c)
{
    free_body(c);
    release(c);
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The per-request summary (debug level). */
static void log_request(const coll_conn_t *c, const coll_response_t *resp)
{
    static const char *const METHOD[] = {"-", "GET", "POST", "HEAD", "OTHER"};
    char addr[INET6_ADDRSTRLEN] = "-";
    if (c->peer != NULL) {
        const uint8_t *a = c->peer->addr;
        static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
        if (memcmp(a, v4, 12) == 0) {
            inet_ntop(AF_INET, a + 12, addr, sizeof(addr));
        } else {
            inet_ntop(AF_INET6, a, addr, sizeof(addr));
        }
    }
    int m = c->req.method >= HTTP_GET && c->req.method <= HTTP_OTHER ? (int)c->req.method : 0;
    coll_log(COLL_LOG_DEBUG, "request",
             "\"method\": \"%s\", \"target\": %s, \"status\": %d, \"bytes_in\": %zu, "
             "\"bytes_out\": %zu, \"ms\": %llu, \"peer\": \"%s\", \"identity\": %s",
             METHOD[m], coll_log_str(c->req.target[0] ? c->req.target : "-"), resp->status,
             c->body_have, resp->len, (unsigned long long)(mono_ms() - c->started_ms), addr,
             coll_log_str(c->peer != NULL && c->peer->identity[0] ? c->peer->identity : NULL));
}

static void send_response(coll_conn_t *c, coll_response_t *resp)
{
    coll_counters_status(c->app->counters, resp->status);
    if (coll_log_enabled(COLL_LOG_DEBUG)) {
        log_request(c, resp);
    }
    int keep = resp->close ? 0 : c->req.keep_alive;
    uint8_t *out = NULL;
    size_t n = 0;
    if (http_format_response(resp->status, resp->content_type, resp->body, resp->len, keep,
                             resp->extra, c->req.method == HTTP_HEAD, &out, &n) != 0 ||
        c->emit(c->emit_ctx, out, n) != 0) {
        keep = 0; /* not formatted, or not sent */
    }
    free(out);
    coll_response_free(resp);
    c->requests++;
    c->state = keep ? COLL_CONN_HEAD : COLL_CONN_CLOSED;
    c->head_len = 0;
    c->body_have = 0;
}

/* A connection-level error: answer and close. */
static void fail(coll_conn_t *c, int status, const char *text)
{
    coll_response_t resp;
    coll_text_response(status, text, 1, &resp);
    send_response(c, &resp);
}

static void finish_request(coll_conn_t *c)
{
    coll_response_t resp;
    if (!coll_console_route(c->app, &c->req, &resp)) { /* the console first (console.h) */
        coll_handle_request(c->app, c->peer, &c->req, c->body, c->body_have, &resp);
    }
    send_response(c, &resp);
    if (c->body_cap > BODY_KEEP_BYTES) {
        free_body(c);
    }
    release(c);
}

/* A connection-level refusal with an extra header (Retry-After). */
static void refuse(coll_conn_t *c, int status, const char *text, const char *extra)
{
    coll_response_t resp;
    coll_text_response(status, text, 1, &resp);
    resp.extra = extra;
    send_response(c, &resp);
}

/* A complete head is in c->head: decide what to do with the body. */
static void on_head(coll_conn_t *c)
{
    c->started_ms = mono_ms();
    int st = http_parse_head(c->head, c->head_len, &c->req);
    if (st != 0) {
        fail(c, st, "malformed request\n");
        return;
    }
    if (c->req.method == HTTP_POST && !c->req.has_length) {
        fail(c, 411, "Content-Length required\n");
        return;
    }
    coll_limits_t *lim = c->app->limits;
    /* a relay (a gateway posting for many devices from one address) is not held to the rate
     * meant for one device's address: its credential's quota bounds what it stores */
    if (lim != NULL && c->peer != NULL && !coll_is_relay(c->app, &c->req) &&
        coll_limits_take(lim, c->peer->addr, c->now_ms) != 0) {
        refuse(c, 429, "too many requests from this address\n", "Retry-After: 1\r\n");
        return;
    }
    coll_response_t early;
    if (coll_admit_request(c->app, c->peer, &c->req, &early) != 0) {
        send_response(c, &early);
        return;
    }
    uint64_t len = c->req.has_length ? c->req.content_length : 0;
    if (len > c->app->max_body) {
        if (c->req.method == HTTP_POST) {
            coll_count_request_reject(c->app, "body too large");
        }
        fail(c, 413, "request body too large\n");
        return;
    }
    if (len == 0) {
        finish_request(c);
        return;
    }
    if (lim != NULL) {
        size_t want = COLL_REQUEST_RESERVE(len);
        if (coll_limits_reserve(lim, want) != 0) {
            coll_limits_count(lim, &lim->st.memory_refused, 1);
            refuse(c, 503, "server busy: over its memory budget, retry later\n",
                   "Retry-After: 1\r\n");
            return;
        }
        c->reserved = want;
    }
    if (len > c->body_cap) {
        uint8_t *b = realloc(c->body, (size_t)len);
        if (b == NULL) {
            fail(c, 503, "out of memory\n");
            return;
        }
        c->body = b;
        c->body_cap = (size_t)len;
    }
    if (c->req.expect_continue) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (c->emit(c->emit_ctx, (const uint8_t *)cont, sizeof(cont) - 1) != 0) {
            c->state = COLL_CONN_CLOSED;
            return;
        }
    }
    c->body_have = 0;
    c->state = COLL_CONN_BODY;
}

size_t coll_conn_feed(coll_conn_t *c, const uint8_t *data, size_t n)
{
    size_t used = 0;
    while (used < n && c->state != COLL_CONN_CLOSED) {
        if (c->state == COLL_CONN_HEAD) {
            size_t old = c->head_len;
            size_t take = n - used;
            if (take > HTTP_MAX_HEAD - old) {
                take = HTTP_MAX_HEAD - old;
            }
            memcpy(c->head + old, data + used, take);
            c->head_len = old + take;
            /* the terminator may straddle the previous chunk: look back 3 bytes */
            size_t from = old >= 3 ? old - 3 : 0;
            size_t end = http_head_end(c->head + from, c->head_len - from);
            if (end == 0) {
                used += take;
                if (c->head_len == HTTP_MAX_HEAD) {
                    fail(c, 431, "request head too large\n");
                }
                continue;
            }
            end += from;
            used += end - old; /* bytes past the head belong to the body or the next request */
            c->head_len = end;
            on_head(c);
        } else {
            size_t want = (size_t)c->req.content_length - c->body_have;
            size_t take = n - used < want ? n - used : want;
            memcpy(c->body + c->body_have, data + used, take);
            c->body_have += take;
            used += take;
            if (c->body_have == c->req.content_length) {
                finish_request(c);
            }
        }
    }
    return used;
}

int coll_conn_mid_request(const coll_conn_t *c)
{
    return c->state == COLL_CONN_BODY || (c->state == COLL_CONN_HEAD && c->head_len > 0);
}

void coll_conn_timeout(coll_conn_t *c)
{
    if (coll_conn_mid_request(c)) {
        c->req.keep_alive = 0;
        fail(c, 408, "request timeout\n");
    }
    c->state = COLL_CONN_CLOSED;
}
