/* SPDX-License-Identifier: Apache-2.0 */
/* The SDK's own HTTP/1.1 client: one request writer and a strict, bounded response parser
 * over the port transport. No chunked transfer coding, no redirects, no compression: the
 * collector is ours. The uploader and the campaign fetch (dpm/expert/uploader.h) use it, and
 * the simulator's network mode reuses it so that its bytes are a device's. NOT INSTALLED
 * (`make install` leaves it out): an app posts with dpm_device_flush, the uploader, or its
 * own HTTPS stack reading the outbox. */
#ifndef DPM_EXPERT_HTTP_H
#define DPM_EXPERT_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/bits/upload.h"
#include "dpm/port.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_HTTP_MAX_LINE 256          /* status line or one header line, CRLF excluded */
#define DPM_HTTP_MAX_HEADERS 32        /* header fields per response */
#define DPM_HTTP_MAX_HEADER_BYTES 4096 /* status line + all header lines, CRLFs included */
#define DPM_HTTP_MAX_HOST 255
#define DPM_HTTP_MAX_PATH 255

/* Write the head of a POST request into buf:
 *   POST <path> HTTP/1.1\r\n Host: <host>\r\n Content-Type: application/x-protobuf\r\n
 *   Content-Length: <content_length>\r\n Connection: keep-alive\r\n \r\n
 * host: 1..DPM_HTTP_MAX_HOST characters of letters, digits and "-._:[]" (a name or address,
 * optionally with :port). path: starts with '/', 1..DPM_HTTP_MAX_PATH visible ASCII
 * characters (0x21..0x7E). DPM_ERR_PARAM for NULL or invalid host/path, DPM_ERR_BUFFER if
 * cap is too small (buf and *len untouched on either). *len = bytes written (no NUL). */
dpm_status_t dpm_http_write_request(uint8_t *buf, size_t cap, const char *host, const char *path,
                                    uint32_t content_length, size_t *len);

/* The same for a GET without a body (Accept: application/x-protobuf instead of the
 * Content-* headers). Same checks and errors. */
dpm_status_t dpm_http_write_get(uint8_t *buf, size_t cap, const char *host, const char *path,
                                size_t *len);

/* A response being parsed. Fill with dpm_http_response_init; read the public fields after
 * dpm_http_response_done. */
typedef struct {
    uint32_t status;         /* 100..599 */
    uint32_t content_length; /* body bytes announced */
    uint32_t retry_after_s;  /* Retry-After in seconds (delta-seconds form only; an HTTP date
                                or a malformed value is ignored), 0 if absent; at most 86400 */
    uint8_t close;           /* the server closes the connection after this response */
    uint8_t *body;           /* caller buffer: the body lands here */
    size_t body_cap;
    size_t body_len;
    /* parser state */
    uint32_t state;
    uint8_t have_length;
    uint32_t nheaders;
    uint32_t header_bytes;
    uint32_t line_len;
    char line[DPM_HTTP_MAX_LINE + 1];
} dpm_http_response_t;

/* Start parsing a response whose body may take up to body_cap bytes of body (body may be
 * NULL if body_cap == 0). DPM_ERR_PARAM for NULL r, or body NULL with body_cap > 0. */
dpm_status_t dpm_http_response_init(dpm_http_response_t *r, uint8_t *body, size_t body_cap);

/* Feed received bytes. Consumes bytes until the response is complete; *used = how many (the
 * rest belong to no response of ours). Returns DPM_ERR_PROTOCOL, and stays failed, for:
 * a status line that is not "HTTP/1.x DDD[ reason]" with DDD in 100..599; a line not ended
 * by CRLF; a control character in a line; a line over DPM_HTTP_MAX_LINE, more than
 * DPM_HTTP_MAX_HEADERS headers or DPM_HTTP_MAX_HEADER_BYTES of head; a malformed header
 * (no name, whitespace before ':', obsolete line folding); any Transfer-Encoding (chunked is
 * not supported); a missing, repeated, non-numeric or > 10^9 Content-Length (except for
 * 204 and 304, which have no body); a body longer than body_cap; a 101 response.
 * Interim 1xx responses are skipped. "Connection: close" and HTTP/1.0 set r->close;
 * "Retry-After: N" sets r->retry_after_s. */
dpm_status_t dpm_http_response_feed(dpm_http_response_t *r, const uint8_t *data, size_t len,
                                    size_t *used);

/* 1 once a complete response has been parsed, else 0. */
int dpm_http_response_done(const dpm_http_response_t *r);

/* Send all len bytes through t before deadline_ms (on c's monotonic clock). A send() that
 * returns 0 is retried (the port should block briefly rather than return 0 at once, or
 * this spins until the deadline). DPM_ERR_TRANSPORT if send() fails (< 0) or claims more
 * than asked; DPM_ERR_TIMEOUT at the deadline; DPM_ERR_PARAM for NULL pointers. */
dpm_status_t dpm_http_send_all(const dpm_transport_t *t, const dpm_clock_t *c, uint64_t deadline_ms,
                               const uint8_t *buf, size_t len);

/* Receive and parse one response into *r (initialised by the caller) before deadline_ms.
 * The deadline is checked before every recv(), so a peer that trickles bytes or sends none
 * (slowloris) ends in DPM_ERR_TIMEOUT. DPM_ERR_TRANSPORT if recv() fails or the connection
 * closes before the response is complete; DPM_ERR_PROTOCOL as dpm_http_response_feed, or if
 * the peer sends bytes past the end of the response. */
dpm_status_t dpm_http_read_response(const dpm_transport_t *t, const dpm_clock_t *c,
                                    uint64_t deadline_ms, dpm_http_response_t *r);

#ifdef __cplusplus
}
#endif

#endif /* DPM_EXPERT_HTTP_H */
