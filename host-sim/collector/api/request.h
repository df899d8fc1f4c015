/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's endpoints, as a pure function from a parsed request and its body to a
 * response: no sockets, so the fuzzer and the tests drive exactly the code the server runs.
 *
 *   GET  /healthz                      200 {"status": "ok", "version": "X.Y.Z", "campaigns": n,
 *                                      "reports": n} | 503 {"status": "unhealthy", "version":
 *                                      "X.Y.Z", "reason": "..."} when a commit failed recently,
 *                                      the database is corrupt or cannot be read
 *   GET  /v1/campaigns/{id}            200 dpm.v1.Campaign (application/x-protobuf) | 404
 *   GET  /v1/campaigns/{id}/estimate   200 JSON (estimate_json.h) | 400 a bad query (the
 *                                      reason in the body) | 404 | 503 database unreadable
 *                                      [operator]; ?period=P, ?from=A&to=B, ?confidence=C
 *   GET  /metrics                      200 Prometheus text (metrics.h)          [operator]
 *   POST /v1/reports                   body dpm.v1.Batch, Content-Type application/x-protobuf
 *                                      [device]
 *        200 BatchResponse{accepted, duplicates}       every report valid, all durably stored
 *        400 BatchResponse{rejects}                    a report (or the batch) is invalid or
 *                                                      over its device quota; nothing stored
 *        404 BatchResponse{rejects}                    a report names an unknown campaign;
 *                                                      nothing stored
 *        415 wrong Content-Type     500 storage failure (nothing stored: retry)
 *   POST /v1/fedauc/uploads, GET /v1/fedauc/{id}/ranks/{token}   FedAUC's upload phase and rank
 *                                      replies [device] (fedauc_phase.h)
 *   HEAD is answered like GET, without the body. Any other method on these paths: 405 with
 *   Allow; any other path: 404.
 * [device]: a bearer token with the device or relay role, or a verified device certificate;
 * both at once only when the token is bound to that certificate (auth.h: one identity);
 * [operator]: a bearer token with the operator role (auth.h). Without it: 401 (no or unknown
 * credential, with WWW-Authenticate) or 403 (a credential without the role, a token and a
 * certificate of two identities, or a revoked certificate or identity: revoked.h), unless the
 * server runs with allow_anonymous / public_estimates.
 * Connection-level answers (conn.h): 400 malformed HTTP, 408 request too slow, 411 POST without
 * Content-Length, 413 body above the limit or on a request that takes none (not read), 414,
 * 417, 429 rate limited, 431, 501
 * Transfer-Encoding, 503 over the memory budget, 505; each of them closes the connection. */
#ifndef DPM_COLLECTOR_REQUEST_H
#define DPM_COLLECTOR_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "collector/ingest/app.h"
#include "collector/ingest/http.h"

#define COLL_CT_PROTOBUF "application/x-protobuf"

/* What the connection knows about its peer. */
typedef struct {
    uint8_t addr[16];                 /* the client address (IPv4 as ::ffff:a.b.c.d) */
    char identity[COLL_IDENTITY_MAX]; /* "cert:CN" of a verified device certificate, or "" */
    uint8_t cert_sha256[32];          /* that certificate's fingerprint (revoked.h) */
} coll_peer_t;

typedef struct {
    int status;
    const char *content_type;
    uint8_t *body; /* heap, may be NULL when len == 0 */
    size_t len;
    int close;         /* close the connection after this response */
    const char *extra; /* static extra header lines, each ending CRLF (Allow, Retry-After) */
} coll_response_t;

/* Answer one request whose complete body is body[0, len); peer may be NULL (no address, no
 * certificate). Never fails: when memory runs out the response is a 500 that closes the
 * connection. Free with coll_response_free. */
void coll_handle_request(const coll_app_t *app, const coll_peer_t *peer, const http_request_t *req,
                         const uint8_t *body, size_t len, coll_response_t *resp);

/* Before a request's body is read and before anything is reserved for it: 0 to go on, or 1 and
 * *resp (close it after sending) when the request is refused whatever its body says: a body
 * on any request but POST /v1/reports and POST /v1/fedauc/uploads (413: no route reads one),
 * or one of those two without a valid device credential (401/403). So only an authenticated
 * device (or anyone, with allow_anonymous) ever makes the collector buffer a body. */
int coll_admit_request(const coll_app_t *app, const coll_peer_t *peer, const http_request_t *req,
                       coll_response_t *resp);

/* The operator role (estimates, /metrics, the console): a bearer token, or the same token as
 * the password of HTTP Basic (console.h). 0, or the status to answer (401, 403) and *text. */
int coll_operator_check(const coll_app_t *app, const http_request_t *req, const char **text);

/* The 401/403 answer of coll_operator_check (401 offers Basic and Bearer). */
void coll_operator_refuse(const coll_app_t *app, int status, const char *text,
                          coll_response_t *resp);

struct coll_estimate_query;
/* The estimate JSON of campaign index ci for query q into a new heap buffer: 0; -1 out of
 * memory; -2 the database cannot be read (why). */
int coll_estimate_answer(const coll_app_t *app, int ci, const struct coll_estimate_query *q,
                         char **json, size_t *n, char *why, size_t cap);

/* 503 "database unavailable: why" with Retry-After. */
void coll_storage_unavailable(const char *why, coll_response_t *resp);

/* 1 if the request carries the bearer token of a relay credential (auth.h) that is not
 * revoked: the per-address rate limit (limits.h) does not apply to it. Else 0. */
int coll_is_relay(const coll_app_t *app, const http_request_t *req);

/* A path prefix followed by a decimal id (1 to 10 digits, no sign, no leading zero, at most
 * 4294967295): 0, *id and *rest (what follows the id); else -1. */
int coll_parse_id_path(const char *p, const char *prefix, uint32_t *id, const char **rest);

/* A short text/plain response. */
void coll_text_response(int status, const char *text, int close, coll_response_t *resp);

/* Count a request-level reject (e.g. "body too large") through the sink (best effort). */
void coll_count_request_reject(const coll_app_t *app, const char *reason);

void coll_response_free(coll_response_t *resp);

#endif /* DPM_COLLECTOR_REQUEST_H */
