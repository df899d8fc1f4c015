/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP/1.1 request heads and responses for the collector: a strict, bounded parser (no
 * allocation, never reads past the bytes it was given) and a response formatter.
 *
 * What is accepted: "METHOD SP target SP HTTP/1.x CRLF", header lines "Name: value CRLF", an
 * empty line. The target is origin-form ("/path?query") or absolute-form
 * ("https://host:port/path", RFC 9112 §3.2.2: a server must accept it; the path is kept and
 * the authority takes the place of Host). The recognized headers are Host, Content-Length,
 * Transfer-Encoding, Connection, Content-Type, Expect and Authorization; the rest are checked
 * for syntax and ignored. An HTTP/1.1 request needs exactly one Host header (RFC 9112 §3.2:
 * 400 otherwise; HTTP/1.0 may omit it). Anything else is an error carrying the status to
 * answer with (the connection is then closed). */
#ifndef DPM_COLLECTOR_HTTP_H
#define DPM_COLLECTOR_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEAD 8192  /* request line + headers + blank line (else 431) */
#define HTTP_MAX_TARGET 256 /* request target (else 414) */
#define HTTP_MAX_HEADERS 64 /* header lines (else 431) */
#define HTTP_MAX_CTYPE 128  /* longer Content-Type values are an error (400) */
#define HTTP_MAX_AUTH 256   /* longer Authorization values are an error (400) */

typedef enum { HTTP_GET = 1, HTTP_POST = 2, HTTP_HEAD = 3, HTTP_OTHER = 4 } http_method_t;

typedef struct {
    http_method_t method;
    char target[HTTP_MAX_TARGET]; /* the path, NUL-terminated; query string kept */
    int minor;                    /* HTTP/1.minor: 0 or 1 */
    int has_length;
    uint64_t content_length;
    int has_transfer_encoding; /* any Transfer-Encoding: not supported (501) */
    int keep_alive;            /* after the protocol default and Connection: */
    int expect_continue;       /* Expect: 100-continue */
    int has_content_type;
    char content_type[HTTP_MAX_CTYPE]; /* as sent, NUL-terminated */
    int has_host;                      /* a Host header, or an absolute-form target */
    int absolute_form;
    int has_authorization;
    char authorization[HTTP_MAX_AUTH];  /* as sent, NUL-terminated */
    int has_dap_auth_token;             /* DAP-Auth-Token (a DAP peer's token) */
    char dap_auth_token[HTTP_MAX_AUTH]; /* as sent, NUL-terminated */
    int has_task_digest;                /* DPM-Task-Digest (aggregator/dap_tasks.h) */
    char task_digest[80];               /* as sent, NUL-terminated (longer: 400) */
} http_request_t;

/* Find the end of a request head in buf[0, len): the offset just past the blank line, or 0
 * if the head is not complete yet. Only CRLF CRLF ends a head. */
size_t http_head_end(const char *buf, size_t len);

/* Parse a complete head buf[0, len) (len as returned by http_head_end, <= HTTP_MAX_HEAD).
 * Returns 0 and fills *req, or the HTTP status to answer with: 400 (malformed, or HTTP/1.1
 * without exactly one Host), 414 (target too long), 431 (too many headers), 501
 * (Transfer-Encoding), 505 (not HTTP/1.0 or 1.1), 417 (an Expect other than 100-continue).
 * *req is zeroed first. */
int http_parse_head(const char *buf, size_t len, http_request_t *req);

/* Does the Content-Type (media type, parameters ignored, case-insensitive) equal `type`? */
int http_content_type_is(const http_request_t *req, const char *type);

/* The token of "Authorization: Bearer <token>" (case-insensitive scheme), or NULL; *len is its
 * length. */
const char *http_bearer_token(const http_request_t *req, size_t *len);

/* The bearer token, or else the password of HTTP Basic ("user:password" in base64; any user
 * name) decoded into buf (cap bytes): how a browser sends the operator token (console.h).
 * NULL if there is neither (or Basic is malformed); else the token and *len its length. */
const char *http_auth_token(const http_request_t *req, char *buf, size_t cap, size_t *len);

/* The reason phrase of a status ("Bad Request"); "Unknown" for codes not used here. */
const char *http_reason(int status);

/* Format a complete response (status line, Content-Type, Content-Length, Connection, the
 * optional extra header lines (each ending CRLF, may be NULL), a blank line, the body) into a
 * new heap buffer *out of *out_len bytes. head_only (an answer to HEAD): Content-Length says
 * len but the body is left out. Returns 0, or -1 if memory ran out. */
int http_format_response(int status, const char *content_type, const uint8_t *body, size_t len,
                         int keep_alive, const char *extra_headers, int head_only, uint8_t **out,
                         size_t *out_len);

#endif /* DPM_COLLECTOR_HTTP_H */
