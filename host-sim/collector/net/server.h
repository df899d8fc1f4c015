/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's network side: a listening socket, one thread per connection, and the
 * defences that keep idle, slow and greedy clients from starving the others.
 *
 * Deadlines per connection (each a TOTAL time, so trickling bytes cannot stretch it):
 *   handshake  from accept to a finished TLS handshake
 *   idle       between requests on a keep-alive connection (closed silently when it expires)
 *   request    from a request's first byte to its last (408 and close when it expires); the
 *              same bound applies to writing the response
 * Connection limits:
 *   per address  at most max_conns_per_addr open connections from one client address; more
 *                are closed at once
 *   eviction     at max_conns open connections, each new one evicts a connection without a
 *                request in progress: the longest-waiting silent one (not a byte sent), else
 *                the longest-idle keep-alive one, else the longest-running handshake; only when
 *                every connection is mid-request is the newcomer closed. So held-open
 *                connections cost their holder the slot as soon as anyone else needs it, a real
 *                client's handshake (milliseconds) outlives a flood of silent ones, and a
 *                request in progress is never cut short.
 *   hard cap     max_conns + max_conns / 4 + 16 threads at most (evicted threads take a moment
 *                to exit)
 *   memory       each connection reserves COLL_CONN_RESERVE of the memory budget (limits.h);
 *                refused when the budget is spent
 * A client that speaks plain HTTP to the TLS port gets a plain-text 400 and is closed. A client
 * certificate that does not verify against the device CA closes the connection. */
#ifndef DPM_COLLECTOR_SERVER_H
#define DPM_COLLECTOR_SERVER_H

#include <stdint.h>

#include "collector/api/request.h"
#include "collector/net/tls_server.h"

typedef struct {
    const coll_app_t *app;
    const coll_tls_t *tls;
    int max_conns;
    int max_conns_per_addr;
    uint32_t handshake_ms, idle_ms, request_ms;
} coll_server_config_t;

typedef struct coll_server coll_server_t;

/* Bind and listen on "HOST:PORT" (a numeric IPv4 or IPv6 address; "[::1]:PORT" for IPv6;
 * port 0 picks a free one). 0, or -1 with a message in err. */
int coll_server_listen(coll_server_t **out, const coll_server_config_t *cfg, const char *addr,
                       char *err, size_t errcap);

/* The port actually bound. */
uint16_t coll_server_port(const coll_server_t *s);

/* Accept and serve until coll_server_stop (async-signal-safe) is called; then stop accepting,
 * wake every connection (requests in progress finish and are answered) and wait up to
 * `drain_ms` for them. Returns the number of connections still running at the end. */
int coll_server_run(coll_server_t *s, uint32_t drain_ms);
void coll_server_stop(coll_server_t *s);

void coll_server_free(coll_server_t *s);

/* New connections use tls from now on; a connection keeps the configuration it started with.
 * The server frees tls (coll_tls_free, free) once it has been replaced and its last connection
 * has closed, or at coll_server_free. Thread-safe (SIGHUP: reload.h). */
void coll_server_set_tls(coll_server_t *s, coll_tls_t *tls);

#endif /* DPM_COLLECTOR_SERVER_H */
