/* SPDX-License-Identifier: Apache-2.0 */
/* A network-mode client's TLS connection (tls_conn.h). */
#include "sim/run/tls_conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONNECT_TIMEOUT_MS 5000u
#define IO_WAIT_MS 1000u
#define REQUEST_TIMEOUT_MS 30000u
#define CA_MAX 65536u
#define ATTEMPTS 5        /* tries of one request (the same bytes) before giving up */
#define THROTTLED_MAX 120 /* 429 / 503 answers (rate or memory limits) waited out per request */

static void close_tcp(void *ctx)
{
    dpm_posix_tcp_close(ctx);
}

void sim_conn_close(sim_conn_t *c)
{
    if (c->open) {
        (void)dpm_tls_close(&c->tls);
        c->open = 0;
    }
}

int sim_conn_open(sim_conn_t *c, const sim_conn_target_t *tg, char *err, size_t cap)
{
    sim_conn_close(c);
    memset(&c->tcp, 0, sizeof(c->tcp));
    dpm_status_t st = dpm_posix_tcp_connect(&c->tcp, tg->host, tg->port, CONNECT_TIMEOUT_MS);
    if (st != DPM_OK) {
        snprintf(err, cap, "cannot connect to %s:%u: %s", tg->host, (unsigned)tg->port,
                 dpm_strerror(st));
        return -1;
    }
    c->tcp.timeout_ms = IO_WAIT_MS;
    dpm_tls_config_t tc;
    memset(&tc, 0, sizeof(tc));
    tc.ca = tg->ca;
    tc.ca_len = tg->ca_len;
    tc.hostname = tg->server_name;
    tc.raw = dpm_posix_tcp(&c->tcp);
    tc.raw_close = close_tcp;
    tc.rng = dpm_posix_rng(tg->drbg);
    tc.clock = dpm_posix_clock();
    tc.handshake_timeout_ms = CONNECT_TIMEOUT_MS;
    if (dpm_tls_connect(&c->tls, &tc) != DPM_OK) {
        snprintf(err, cap, "TLS to %s failed: %s", tg->server_name, dpm_tls_reason(&c->tls));
        return -1;
    }
    c->t = dpm_tls_transport(&c->tls);
    c->open = 1;
    return 0;
}

dpm_status_t sim_conn_exchange(sim_conn_t *c, const uint8_t *head, size_t hlen, const uint8_t *body,
                               size_t blen, dpm_http_response_t *resp)
{
    dpm_clock_t clock = dpm_posix_clock();
    uint64_t deadline = clock.monotonic_ms(clock.ctx) + REQUEST_TIMEOUT_MS;
    dpm_status_t st = dpm_http_send_all(&c->t, &clock, deadline, head, hlen);
    if (st == DPM_OK && blen > 0) {
        st = dpm_http_send_all(&c->t, &clock, deadline, body, blen);
    }
    if (st == DPM_OK) {
        st = dpm_http_read_response(&c->t, &clock, deadline, resp);
    }
    return st;
}

int sim_conn_request(sim_conn_t *c, const sim_conn_target_t *tg, const char *what,
                     const uint8_t *head, size_t hlen, const uint8_t *body, size_t blen,
                     uint8_t *rbody, size_t rcap, unsigned also_wait, dpm_http_response_t *resp,
                     char *err, size_t cap)
{
    int waited = 0;
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        if (!c->open && sim_conn_open(c, tg, err, cap) != 0) {
            continue;
        }
        dpm_http_response_init(resp, rbody, rcap);
        dpm_status_t st = sim_conn_exchange(c, head, hlen, body, blen, resp);
        if (st != DPM_OK) { /* no answer: the same bytes again on a fresh connection */
            sim_conn_close(c);
            snprintf(err, cap, "%s: %s", what, dpm_strerror(st));
            continue;
        }
        if (resp->close) {
            sim_conn_close(c);
        }
        if ((resp->status == 429 || resp->status == 503 ||
             (also_wait != 0 && resp->status == also_wait)) &&
            waited++ < THROTTLED_MAX) {
            struct timespec pause = {1, 0}; /* Retry-After: 1 */
            nanosleep(&pause, NULL);
            attempt--; /* the server asked us to wait: not a failed attempt */
            continue;
        }
        return 0;
    }
    return -1;
}

int sim_conn_add_token(const char *token, uint8_t *head, size_t cap, size_t *hlen)
{
    size_t tl = strlen(token);
    if (tl == 0) {
        return 0;
    }
    size_t extra = 24 + tl;
    if (*hlen < 2 || *hlen + extra > cap) {
        return -1;
    }
    int n = snprintf((char *)head + *hlen - 2, cap - *hlen + 2, "Authorization: Bearer %s\r\n\r\n",
                     token);
    *hlen += (size_t)n - 2;
    return 0;
}

int sim_read_token(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    if (path == NULL) {
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (f == NULL || fgets(out, (int)cap, f) == NULL) {
        if (f != NULL) {
            fclose(f);
        }
        return -1;
    }
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    return out[0] != '\0' ? 0 : -1;
}

int sim_read_ca(const char *path, uint8_t **ca, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc(CA_MAX);
    size_t n = f != NULL && buf != NULL ? fread(buf, 1, CA_MAX - 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    if (n == 0 || n >= CA_MAX - 1) {
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *ca = buf;
    *len = n + 1; /* PEM: Mbed TLS wants the NUL counted */
    return 0;
}
