/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's endpoints, as a pure function from a parsed request and its body to a
 * response: no sockets, so the fuzzer and the tests drive exactly the code the server runs.
 *
 *   GET  /healthz                      200 {"status": "ok", "version": "X.Y.Z", "campaigns": n,
 *                                      "reports": n}
 *   GET  /v1/campaigns/{id}            200 dpm.v1.Campaign (application/x-protobuf) | 404
 *   GET  /v1/campaigns/{id}/estimate   200 JSON (estimate_json.h) | 404
 *   POST /v1/reports                   body dpm.v1.Batch, Content-Type application/x-protobuf
 *        200 BatchResponse{accepted, duplicates}       every report valid, all durably stored
 *        400 BatchResponse{rejects}                    a report (or the batch) is invalid;
 *                                                      nothing stored
 *        404 BatchResponse{rejects}                    a report names an unknown campaign;
 *                                                      nothing stored
 *        415 wrong Content-Type     500 storage failure (nothing stored: retry)
 *   any other method on these paths    405 with Allow;   any other path   404
 * Connection-level answers (conn.h): 400 malformed HTTP, 408 request too slow, 411 POST without
 * Content-Length, 413 body above the limit (not read), 414, 417, 431, 501 Transfer-Encoding,
 * 505; each of them closes the connection. */
#ifndef DPM_COLLECTOR_REQUEST_H
#define DPM_COLLECTOR_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "collector/aggregate.h"
#include "collector/batch.h"
#include "collector/campaigns.h"
#include "collector/http.h"

#define COLL_CT_PROTOBUF "application/x-protobuf"

/* Where validated batches go: coll_store_commit in the server, a stub in the fuzzer. Returns
 * 0 when the batch (its reports if it has no rejects, and its reject counts) is durable. */
typedef struct {
    int (*commit)(void *ctx, coll_batch_t *b);
    void *ctx;
} coll_sink_t;

typedef struct {
    const coll_campaigns_t *campaigns;
    coll_aggregates_t *agg;
    coll_sink_t sink;
    size_t max_body; /* largest request body read, bytes */
} coll_app_t;

typedef struct {
    int status;
    const char *content_type;
    uint8_t *body; /* heap, may be NULL when len == 0 */
    size_t len;
    int close;         /* close the connection after this response */
    const char *allow; /* Allow header value for 405 */
} coll_response_t;

/* Answer one request whose complete body is body[0, len). Never fails: when memory runs out
 * the response is a 500 that closes the connection. Free with coll_response_free. */
void coll_handle_request(const coll_app_t *app, const http_request_t *req, const uint8_t *body,
                         size_t len, coll_response_t *resp);

/* A short text/plain response. */
void coll_text_response(int status, const char *text, int close, coll_response_t *resp);

/* Count a request-level reject (e.g. "body too large") through the sink (best effort). */
void coll_count_request_reject(const coll_app_t *app, const char *reason);

void coll_response_free(coll_response_t *resp);

#endif /* DPM_COLLECTOR_REQUEST_H */
