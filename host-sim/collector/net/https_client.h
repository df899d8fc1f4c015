/* SPDX-License-Identifier: Apache-2.0 */
/* A small blocking HTTPS client: one request per fresh connection, for the DAP leader reaching
 * its helper and for test tools reaching a leader. Mbed TLS 3.6, TLS 1.2 or 1.3 (1.3 preferred),
 * the AEAD suites of tls_server.h; the server's certificate must chain to the CA bundle given
 * to coll_https_init and name the URL's host (DNS name or IP address SAN).
 *
 * Bounds: every wait (resolving a name, connecting, the handshake, each read and write) ends by
 * one deadline, now + timeout_ms; a response head of at most COLL_HTTPS_MAX_HEAD bytes (status
 * line, headers, 1xx interim responses), chunk size lines of at most 1 KiB and trailers of at
 * most COLL_HTTPS_MAX_HEAD bytes, a body of at most the caller's cap. Per request it allocates
 * the exchange's state (about 17 KiB: kept off the caller's stack), Mbed TLS's session and, for
 * a host name, one small record shared with the resolver thread (below); all freed on return
 * but that record, which the resolver thread frees if it outlives the call.
 *
 * Framing: Content-Length, Transfer-Encoding: chunked (decoded), or a body delimited by the
 * connection's close (then the close must be TLS's close_notify: a bare TCP close could be a
 * truncation). Both Content-Length and chunked, two Content-Lengths, a Transfer-Encoding other
 * than chunked, a header folded over lines: refused, with the reason.
 *
 * Names: IPv4 and IPv6 literals are used as they are; any other host goes to getaddrinfo on a
 * detached thread, so that a slow resolver costs the caller at most its deadline (the thread
 * itself ends when the resolver does). */
#ifndef DPM_COLLECTOR_HTTPS_CLIENT_H
#define DPM_COLLECTOR_HTTPS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"

#include "dpm/port_posix.h"

/* The most response head bytes read (as the collector's own request heads, http.h). */
#define COLL_HTTPS_MAX_HEAD 8192u

typedef struct {
    mbedtls_ssl_config conf;
    mbedtls_x509_crt ca;
    dpm_posix_rng_t rng;
} coll_https_t;

/* psa_crypto_init, seed the DRBG, load the CA bundle (PEM or DER) the peer's certificate must
 * chain to. 0, or -1 with a message in err. */
int coll_https_init(coll_https_t *c, const char *ca_path, char *err, size_t cap);
/* Frees c's own state. PSA's global state stays (a server's coll_tls_t in the same process may
 * still use it): mbedtls_psa_crypto_free, if wanted, is the process's last step. */
void coll_https_free(coll_https_t *c);

typedef struct {
    const char *method;       /* "GET", "POST", "PUT" */
    const char *url;          /* https://host[:port]/path[?query]  (port default 443) */
    const char *bearer;       /* NULL, or a token sent as "Authorization: Bearer TOKEN" */
    const char *content_type; /* NULL, or the request's Content-Type */
    const uint8_t *body;
    size_t len;
    uint32_t timeout_ms;       /* the whole exchange: resolve, connect, handshake, write, read */
    const char *extra_headers; /* NULL, or more header lines, each ending "\r\n" */
} coll_https_req_t;

typedef struct {
    int status;             /* the HTTP status */
    char content_type[128]; /* "" when absent */
    char location[256];     /* "" when absent */
    uint32_t retry_after_s; /* 0 when absent */
    size_t len;             /* body bytes written to out */
} coll_https_resp_t;

/* One request on a fresh connection (Connection: close). 0 with *resp filled, whatever the HTTP
 * status; -1 with why: the URL (not https, no host, bad port), unreachable (connect errno), TLS
 * (the handshake's error; for a certificate, Mbed TLS's verify flags in words and the expected
 * host name), timeout (which phase), a malformed response (which line), a body larger than cap
 * (its declared size). Thread-safe: several threads may call it on one c at once.
 *
 * On -1, *resp is zeroed. A Content-Type or Location longer than its field is refused (never cut
 * short); Retry-After is delta-seconds or an IMF-fixdate (seconds from now; a date past: 0). The
 * bearer token is never written to why. */
int coll_https_request(coll_https_t *c, const coll_https_req_t *r, uint8_t *out, size_t cap,
                       coll_https_resp_t *resp, char *why, size_t whycap);

/* The response reader of coll_https_request alone, over the bytes a server sent (decrypted):
 * in[0, len), handed over step bytes per read (0: as many as asked for), then the end of the
 * stream, TLS's close_notify if close_notify, else a bare TCP close. method is the request's
 * (a HEAD's answer has no body). The same results and reasons as coll_https_request, the
 * reasons prefixed "METHOD (response): ". For the fuzzer (tests/fuzz/fuzz_https_response.c)
 * and tests; allocates its state (about 17 KiB) and frees it. */
int coll_https_parse_response(const uint8_t *in, size_t len, size_t step, int close_notify,
                              const char *method, uint8_t *out, size_t cap, coll_https_resp_t *resp,
                              char *why, size_t whycap);

#endif /* DPM_COLLECTOR_HTTPS_CLIENT_H */
