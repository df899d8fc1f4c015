/* SPDX-License-Identifier: Apache-2.0 */
/* One HTTP/1.1 connection as a state machine over the bytes received: heads, bodies,
 * keep-alive, pipelining, 100-continue and the connection-level errors. It owns no socket:
 * the server feeds it what TLS decrypted and sends what it emits; the fuzzer feeds it raw
 * input. Timeouts are the caller's job (coll_conn_mid_request tells which one applies).
 *
 * Limits: a head of at most HTTP_MAX_HEAD bytes (else 431), a body of at most app->max_body
 * bytes (else 413 right after the head: the body is never read), Content-Length required for
 * POST (411), Transfer-Encoding refused (501). With app->limits, every request takes a token
 * of its client's rate bucket (else 429). Then coll_admit_request refuses a body where no route
 * reads one (413) and an unauthenticated request to a route that does (401/403), and only then
 * does a request with a body reserve COLL_REQUEST_RESERVE(len) of the memory budget before
 * its body is read (else 503) until its answer is sent. Every connection-level error closes.
 * Answers to HEAD carry no body. */
#ifndef DPM_COLLECTOR_CONN_H
#define DPM_COLLECTOR_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "collector/ingest/http.h"
#include "collector/api/request.h"

/* Send len bytes to the peer; 0, or -1 if the connection broke (it is then closed). */
typedef int (*coll_emit_fn)(void *ctx, const uint8_t *buf, size_t len);

typedef enum { COLL_CONN_HEAD, COLL_CONN_BODY, COLL_CONN_CLOSED } coll_conn_state_t;

typedef struct {
    const coll_app_t *app;
    const coll_peer_t *peer; /* NULL: unknown (the fuzzer) */
    coll_emit_fn emit;
    void *emit_ctx;
    coll_conn_state_t state;
    http_request_t req;
    size_t head_len;
    char head[HTTP_MAX_HEAD];
    uint8_t *body;
    size_t body_cap, body_have;
    uint64_t requests;   /* answered so far */
    size_t reserved;     /* bytes of the memory budget this request holds */
    uint64_t now_ms;     /* the caller's clock, for the rate buckets (coll_conn_set_time) */
    uint64_t started_ms; /* when the current request's head was complete (the request log) */
} coll_conn_t;

void coll_conn_init(coll_conn_t *c, const coll_app_t *app, const coll_peer_t *peer,
                    coll_emit_fn emit, void *emit_ctx);

/* The monotonic time (ms) of the bytes about to be fed. */
void coll_conn_set_time(coll_conn_t *c, uint64_t now_ms);

/* Process data[0, n): answers every request it completes. Returns the bytes consumed: all of
 * them unless the connection closed (state COLL_CONN_CLOSED) part-way. */
size_t coll_conn_feed(coll_conn_t *c, const uint8_t *data, size_t n);

/* 1 if part of a request has arrived but not all of it (the request deadline applies),
 * 0 between requests (the idle deadline applies). */
int coll_conn_mid_request(const coll_conn_t *c);

/* The peer took too long: answer 408 if a request was under way, and close. */
void coll_conn_timeout(coll_conn_t *c);

void coll_conn_free(coll_conn_t *c);

#endif /* DPM_COLLECTOR_CONN_H */
