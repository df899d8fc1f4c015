/* SPDX-License-Identifier: Apache-2.0 */
/* One keep-alive TLS connection of a network-mode client (netmode.h, netmode_dap.h): TCP from
 * the posix port, TLS from port/tls (the server's CA pinned, its host name checked), requests
 * written by the caller and answers read with the SDK's HTTP/1.1 client. Not thread-safe: one
 * per client thread. */
#ifndef DPM_SIM_TLS_CONN_H
#define DPM_SIM_TLS_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/http.h"
#include "dpm/port_posix.h"
#include "dpm/port_tls.h"

typedef struct {
    dpm_posix_tcp_t tcp;
    dpm_tls_t tls; /* must not move while open */
    dpm_transport_t t;
    int open;
} sim_conn_t;

/* Whom a connection reaches: host:port (a numeric address), server_name checked against ca[0,
 * ca_len) (a PEM with its NUL counted); drbg gives TLS its randomness. */
typedef struct {
    const char *host;
    uint16_t port;
    const char *server_name;
    const uint8_t *ca;
    size_t ca_len;
    dpm_posix_rng_t *drbg;
} sim_conn_target_t;

/* Connect and handshake. 0, or -1 with err. */
int sim_conn_open(sim_conn_t *c, const sim_conn_target_t *tg, char *err, size_t cap);
void sim_conn_close(sim_conn_t *c);

/* One request (head, then body) and its answer into *resp, within 30 s. DPM_OK or the
 * transport's or the HTTP client's error (the connection should then be closed). */
dpm_status_t sim_conn_exchange(sim_conn_t *c, const uint8_t *head, size_t hlen, const uint8_t *body,
                               size_t blen, dpm_http_response_t *resp);

/* One request until the server answers it with a status other than 429 or 503 (nor also_wait,
 * when not 0), which are waited out, 1 s each, up to 120 times; a request without an answer is
 * sent again, the same bytes on a new connection, 5 times at most. 0 with *resp (its body in
 * rbody[0, rcap)), or -1 with err ("what: why", or why the connection failed). */
int sim_conn_request(sim_conn_t *c, const sim_conn_target_t *tg, const char *what,
                     const uint8_t *head, size_t hlen, const uint8_t *body, size_t blen,
                     uint8_t *rbody, size_t rcap, unsigned also_wait, dpm_http_response_t *resp,
                     char *err, size_t cap);

/* "Authorization: Bearer TOKEN" added to a request head (before its blank line); nothing when
 * token is "". 0, or -1 when the head has no room. */
int sim_conn_add_token(const char *token, uint8_t *head, size_t cap, size_t *hlen);

/* The first line of path, without its end of line, into out ("" when path is NULL). 0, or -1
 * (unreadable, or an empty line). */
int sim_read_token(const char *path, char *out, size_t cap);

/* A PEM file into *ca (heap; NUL added and counted in *len, as Mbed TLS wants). 0 or -1. */
int sim_read_ca(const char *path, uint8_t **ca, size_t *len);

#endif /* DPM_SIM_TLS_CONN_H */
