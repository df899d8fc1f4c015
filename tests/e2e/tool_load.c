/* SPDX-License-Identifier: Apache-2.0 */
/* tool_load: drives dpm-collector over TLS with reports made by the real SDK.
 *
 *   tool_load reports    --port P --ca CA.pem [--clients 64] [--seconds 5] [--batch 100]
 *                        [--campaign 1] [--ids FILE] [--grace-seconds 15]
 *       N keep-alive clients post batches of fresh reports for T seconds. A batch without an
 *       answer (connection lost, collector restarted) is sent again, same report ids, until it
 *       is answered or the grace period ends: a device's retry. --ids writes the id (hex) of
 *       every report the collector acknowledged with 200, one per line.
 *   tool_load handshakes --port P --ca CA.pem [--clients 16] [--seconds 5]
 *       full handshakes only (ECDHE on P-256, fresh session each time, no resumption).
 *   tool_load population --port P --ca CA.pem --campaigns 1,2 [--devices 200000]
 *                        [--clients 16] [--batch 100] [--seed 1]
 *       simulated devices (population below) each send one report per campaign; prints the
 *       ground truth per campaign, metric and group next to the counts.
 *   tool_load bench      --port P --ca CA.pem [--seconds 10]
 *       collector.reports_per_s (64 clients, batches of 100, keep-alive) and
 *       collector.handshakes_per_s (full ECDHE P-256), as build/bench.json metrics.
 * Several collectors: --ports P1,P2,... instead of --port: client i starts with port i mod n and
 * moves to the next port whenever a connection fails (a load balancer's failover); the
 * campaigns are fetched from the first.
 * Common: [--host 127.0.0.1] [--name localhost] [--tls 1.2|1.3] [--server-pid PID] (adds the
 * collector's CPU seconds) [--token FILE] (a bearer token, first line of FILE, sent with every
 * request: a relay credential for reports, an operator one for estimates). Answers 429 and
 * 5xx are retried like lost answers ("throttled" counts the 429s). Prints one JSON object on
 * stdout; exit status 0 unless nothing could be done or a 200 answer contradicted its batch.
 *
 * Synthetic population (population mode), for d groups (the campaigns' d, all equal):
 *   device i gets (group, tp, fp) from splitmix64 of (seed, i) alone, so the population does
 *   not depend on the number of clients: group g with probability (d - g) / (d (d + 1) / 2)
 *   (4 groups: 40%, 30%, 20%, 10%); 20 positive and 20 negative examples; tp ~ Binomial(20,
 *   0.85 - 0.25 g / (d - 1)), fp ~ Binomial(20, 0.10 + 0.10 g / (d - 1)). Its metrics are the
 *   SDK's dpm_metric_ratio of that confusion matrix (a device whose metric is undefined sends
 *   no report). Truth: the mean metric of the group's reporting devices. The noise comes from
 *   a CTR_DRBG per client (the devices' CSPRNG), so estimates vary from run to run.
 *
 * TLS: a small Mbed TLS client of its own (one configuration per thread, CA verified, host
 * name checked, groups limited to P-256 so every handshake is ECDHE P-256). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mbedtls/net_sockets.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"
#include "psa/crypto.h"

#include "dpm/expert/batch.h"
#include "dpm/port_posix.h"
#include "dpm/expert/report.h"
#include "dpm/expert/simulator.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/stats.h"

#define MAX_CLIENTS 1024
#define MAX_CAMPAIGNS 8
#define MAX_PORTS 8
#define IO_TIMEOUT_S 15
#define RESP_MAX (1u << 20)

typedef enum { MODE_REPORTS, MODE_HANDSHAKES, MODE_POPULATION, MODE_BENCH } mode_t_;

typedef struct {
    mode_t_ mode;
    const char *host, *name, *ca, *ids, *token_file;
    char token[256];
    int port, clients, batch, tls, seconds_set, clients_set;
    int ports[MAX_PORTS], nports;
    double seconds, grace;
    uint32_t campaign_ids[MAX_CAMPAIGNS];
    int ncampaigns;
    unsigned long long devices, seed;
    long server_pid;
} opts_t;

static opts_t O;
static mbedtls_x509_crt CA; /* read-only after main parses it: shared by the clients */
static dpm_mech_t MECH[MAX_CAMPAIGNS];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- a minimal TLS client ------------------------------------------------------------- */

typedef struct {
    mbedtls_ssl_config conf;
    dpm_posix_rng_t rng;
    mbedtls_ssl_context ssl;
    int fd;
    int open;
    int port_index; /* into O.ports: the collector this client talks to */
} tls_client_t;

static int bio_send(void *ctx, const unsigned char *b, size_t n)
{
    ssize_t r = send(*(int *)ctx, b, n, MSG_NOSIGNAL);
    if (r < 0) {
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? MBEDTLS_ERR_SSL_TIMEOUT
                                                         : MBEDTLS_ERR_NET_SEND_FAILED;
    }
    return (int)r;
}

static int bio_recv(void *ctx, unsigned char *b, size_t n)
{
    ssize_t r = recv(*(int *)ctx, b, n, 0);
    if (r < 0) {
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? MBEDTLS_ERR_SSL_TIMEOUT
                                                         : MBEDTLS_ERR_NET_RECV_FAILED;
    }
    return (int)r;
}

static int tls_client_init(tls_client_t *c, int id)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    mbedtls_ssl_config_init(&c->conf);
    uint8_t who[32];
    int n = snprintf((char *)who, sizeof(who), "tool_load %d", id);
    if (dpm_posix_rng_init(&c->rng, who, (size_t)n) != DPM_OK ||
        mbedtls_ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT) != 0) {
        return -1;
    }
    static const uint16_t p256[] = {MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1, 0};
    mbedtls_ssl_conf_groups(&c->conf, p256);
    mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&c->conf, &CA, NULL);
    mbedtls_ssl_conf_rng(&c->conf, dpm_posix_rng_f_rng, &c->rng);
    if (O.tls == 12) {
        mbedtls_ssl_conf_max_tls_version(&c->conf, MBEDTLS_SSL_VERSION_TLS1_2);
    } else if (O.tls == 13) {
        mbedtls_ssl_conf_min_tls_version(&c->conf, MBEDTLS_SSL_VERSION_TLS1_3);
    }
    return 0;
}

static void tls_client_close(tls_client_t *c)
{
    if (c->open) {
        mbedtls_ssl_close_notify(&c->ssl);
        mbedtls_ssl_free(&c->ssl);
        c->open = 0;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

static int tcp_connect(int port_index)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    char port[16];
    snprintf(port, sizeof(port), "%d", O.ports[port_index % O.nports]);
    if (getaddrinfo(O.host, port, &hints, &ai) != 0) {
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct timeval tv = {IO_TIMEOUT_S, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return fd;
}

/* A fresh TCP connection and a full handshake (no session is ever offered for resumption). */
static int tls_client_connect(tls_client_t *c)
{
    tls_client_close(c);
    c->fd = tcp_connect(c->port_index);
    if (c->fd < 0) {
        c->port_index++; /* that collector is down: the next one */
        return -1;
    }
    mbedtls_ssl_init(&c->ssl);
    c->open = 1;
    if (mbedtls_ssl_setup(&c->ssl, &c->conf) != 0 ||
        mbedtls_ssl_set_hostname(&c->ssl, O.name) != 0) {
        tls_client_close(c);
        return -1;
    }
    mbedtls_ssl_set_bio(&c->ssl, &c->fd, bio_send, bio_recv, NULL);
    int ret;
    do {
        ret = mbedtls_ssl_handshake(&c->ssl);
    } while (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE);
    if (ret != 0) {
        tls_client_close(c);
        return -1;
    }
    return 0;
}

static int tls_write_all(tls_client_t *c, const uint8_t *b, size_t n)
{
    while (n > 0) {
        int r = mbedtls_ssl_write(&c->ssl, b, n);
        if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) {
            continue;
        }
        if (r <= 0) {
            return -1;
        }
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

static int tls_read_some(tls_client_t *c, uint8_t *b, size_t cap)
{
    for (;;) {
        int r = mbedtls_ssl_read(&c->ssl, b, cap);
        if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE ||
            r == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
            continue;
        }
        return r > 0 ? r : -1;
    }
}

/* ---- HTTP over it ------------------------------------------------------------------------- */

typedef struct {
    int status;
    int close;
    uint8_t *body;
    size_t len;
} http_resp_t;

static int header_value(const char *head, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
            const char *v = p + 3 + n;
            while (*v == ' ') {
                v++;
            }
            size_t k = strcspn(v, "\r");
            if (k >= cap) {
                k = cap - 1;
            }
            memcpy(out, v, k);
            out[k] = '\0';
            return 0;
        }
    }
    return -1;
}

/* One request, one response (keep-alive). resp->body is a per-call heap buffer. */
static int http_exchange(tls_client_t *c, const char *method, const char *path, const uint8_t *body,
                         size_t len, http_resp_t *resp)
{
    memset(resp, 0, sizeof(*resp));
    char head[768];
    int hn = snprintf(head, sizeof(head),
                      "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-protobuf\r\n"
                      "Content-Length: %zu\r\n%s%s%s\r\n",
                      method, path, O.name, len, O.token[0] ? "Authorization: Bearer " : "",
                      O.token, O.token[0] ? "\r\n" : "");
    uint8_t *req = malloc((size_t)hn + len);
    if (req == NULL) {
        return -1;
    }
    memcpy(req, head, (size_t)hn);
    if (len > 0) {
        memcpy(req + hn, body, len);
    }
    int rc = tls_write_all(c, req, (size_t)hn + len);
    free(req);
    if (rc != 0) {
        return -1;
    }
    char buf[8192 + 1];
    size_t have = 0;
    char *end = NULL;
    while (end == NULL) {
        if (have == sizeof(buf) - 1) {
            return -1;
        }
        int r = tls_read_some(c, (uint8_t *)buf + have, sizeof(buf) - 1 - have);
        if (r <= 0) {
            return -1;
        }
        have += (size_t)r;
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t head_len = (size_t)(end - buf) + 4;
    *end = '\0';
    if (sscanf(buf, "HTTP/1.1 %d", &resp->status) != 1) {
        return -1;
    }
    char v[64];
    size_t clen = 0;
    if (header_value(buf, "Content-Length", v, sizeof(v)) == 0) {
        clen = strtoul(v, NULL, 10);
    }
    resp->close = header_value(buf, "Connection", v, sizeof(v)) == 0 && strcasecmp(v, "close") == 0;
    if (clen > RESP_MAX) {
        return -1;
    }
    resp->body = malloc(clen + 1);
    if (resp->body == NULL) {
        return -1;
    }
    size_t got = have - head_len < clen ? have - head_len : clen;
    memcpy(resp->body, buf + head_len, got);
    while (got < clen) {
        int r = tls_read_some(c, resp->body + got, clen - got);
        if (r <= 0) {
            free(resp->body);
            resp->body = NULL;
            return -1;
        }
        got += (size_t)r;
    }
    resp->len = clen;
    return 0;
}

static const char *count_reject(void *ctx, const uint8_t *id, size_t id_len, const uint8_t *reason,
                                size_t reason_len)
{
    (void)id, (void)id_len, (void)reason, (void)reason_len;
    (*(uint64_t *)ctx)++;
    return NULL;
}

/* BatchResponse fields 1 and 2 and the number of rejects (field 3). */
static int parse_batch_response(const uint8_t *p, size_t n, uint64_t *acc, uint64_t *dup,
                                uint64_t *rej)
{
    uint32_t a = 0, d = 0;
    *rej = 0;
    if (dpm_batch_response_decode(p, n, &a, &d, count_reject, rej, NULL) != DPM_OK) {
        *acc = *dup = *rej = 0;
        return -1;
    }
    *acc = a;
    *dup = d;
    return 0;
}

/* ---- devices ------------------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unit(uint64_t *s)
{
    return (double)(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* The synthetic population's device i (see the header comment). */
static void population_device(uint64_t i, uint32_t d, uint32_t *group, dpm_confusion_t *cm)
{
    uint64_t s = O.seed * 0x100000001B3ull ^ (i + 1) * 0xD6E8FEB86659FD93ull;
    double u = unit(&s) * (double)d * (double)(d + 1) / 2.0;
    uint32_t g = 0;
    double acc = (double)d;
    while (g + 1 < d && u >= acc) {
        g++;
        acc += (double)(d - g);
    }
    double t = d > 1 ? (double)g / (double)(d - 1) : 0.0;
    double p_tpr = 0.85 - 0.25 * t, p_fpr = 0.10 + 0.10 * t;
    uint32_t tp = 0, fp = 0;
    for (int k = 0; k < 20; k++) {
        tp += unit(&s) < p_tpr;
        fp += unit(&s) < p_fpr;
    }
    *group = g;
    cm->tp = tp;
    cm->fn = 20 - tp;
    cm->fp = fp;
    cm->tn = 20 - fp;
}

/* ---- one client thread ---------------------------------------------------------------------- */

typedef struct {
    int id;
    pthread_t th;
    tls_client_t tls;
    dpm_posix_rng_t dev_rng; /* the simulated devices' CSPRNG */
    dpm_rng_t dev_port;
    dpm_rand_t dev_rand;
    double deadline;
    uint64_t first_device, end_device; /* population: devices [first, end) */
    /* results */
    uint64_t handshakes, handshake_failures, batches, reports_sent, acked, accepted, duplicates,
        rejected, status_other, io_errors, retries, bad_answers, unsent, throttled;
    uint8_t *ids;
    size_t nids, ids_cap;
    /* population truth: per campaign, metric, group */
    double truth_sum[MAX_CAMPAIGNS][DPM_CAMPAIGN_MAX_METRICS][DPM_MAX_GROUPS];
    uint64_t truth_n[MAX_CAMPAIGNS][DPM_CAMPAIGN_MAX_METRICS][DPM_MAX_GROUPS];
} client_t;

typedef struct {
    uint8_t *body;
    size_t len, cap;
    uint8_t (*ids)[DPM_REPORT_ID_BYTES];
    size_t n, ids_cap;
} batch_t;

static int batch_add(batch_t *b, const dpm_report_t *rep)
{
    uint8_t enc[DPM_REPORT_MAX_BYTES];
    size_t n = 0;
    if (dpm_report_encode(rep, enc, sizeof(enc), &n) != DPM_OK) {
        return -1;
    }
    if (b->len + dpm_batch_frame_len(n) > b->cap) {
        size_t cap = 2 * b->cap + dpm_batch_frame_len(n) + 1024;
        uint8_t *p = realloc(b->body, cap);
        if (p == NULL) {
            return -1;
        }
        b->body = p;
        b->cap = cap;
    }
    if (b->n == b->ids_cap) {
        size_t cap = b->ids_cap ? 2 * b->ids_cap : 128;
        void *p = realloc(b->ids, cap * DPM_REPORT_ID_BYTES);
        if (p == NULL) {
            return -1;
        }
        b->ids = p;
        b->ids_cap = cap;
    }
    if (dpm_batch_put_report(b->body, b->cap, &b->len, enc, n) != DPM_OK) {
        return -1;
    }
    memcpy(b->ids[b->n++], rep->report_id, DPM_REPORT_ID_BYTES);
    return 0;
}

static int remember_ids(client_t *c, const batch_t *b)
{
    if (O.ids == NULL) {
        return 0;
    }
    if (c->nids + b->n > c->ids_cap) {
        size_t cap = 2 * (c->nids + b->n);
        uint8_t *p = realloc(c->ids, cap * DPM_REPORT_ID_BYTES);
        if (p == NULL) {
            return -1;
        }
        c->ids = p;
        c->ids_cap = cap;
    }
    memcpy(c->ids + c->nids * DPM_REPORT_ID_BYTES, b->ids, b->n * DPM_REPORT_ID_BYTES);
    c->nids += b->n;
    return 0;
}

/* Load mode: batch_size reports of campaign 0 with random groups and metric values. */
/* One tuple report with a receipt from the calling thread's own issuer (TEST_RECEIPT keeps one
 * issuer per file, for single-threaded use). */
static dpm_status_t load_report(const dpm_mech_t *m, dpm_rand_t *r, uint32_t group,
                                const dpm_ratio_t *values, dpm_report_t *rep)
{
    dpm_receipt_issuer_t iss;
    dpm_receipt_t rc;
    memset(&iss, 0, sizeof(iss));
    dpm_status_t st = dpm_receipt_unmetered(&iss, m, 0, &rc);
    return st != DPM_OK ? st : dpm_mech_report_tuple(m, r, &iss, &rc, group, values, rep);
}

static int fill_random_batch(client_t *c, batch_t *b)
{
    const dpm_mech_t *m = &MECH[0];
    for (int k = 0; k < O.batch; k++) {
        uint64_t g = 0, v = 0;
        dpm_ratio_t values[DPM_CAMPAIGN_MAX_METRICS];
        if (dpm_uniform(&c->dev_rand, m->campaign.groups, &g) != DPM_OK) {
            return -1;
        }
        for (uint32_t j = 0; j < m->campaign.nmetrics; j++) {
            if (dpm_uniform(&c->dev_rand, 11, &v) != DPM_OK) {
                return -1;
            }
            values[j].num = v;
            values[j].den = 10;
        }
        dpm_report_t rep;
        if (load_report(m, &c->dev_rand, (uint32_t)g, values, &rep) != DPM_OK ||
            batch_add(b, &rep) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Population mode: the next devices' reports (one per campaign) until the batch is full. */
static int fill_population_batch(client_t *c, batch_t *b, uint64_t *next)
{
    while (b->n + (size_t)O.ncampaigns <= (size_t)O.batch && *next < c->end_device) {
        uint32_t group;
        dpm_confusion_t cm;
        population_device(*next, MECH[0].campaign.groups, &group, &cm);
        (*next)++;
        for (int k = 0; k < O.ncampaigns; k++) {
            const dpm_mech_t *m = &MECH[k];
            dpm_ratio_t values[DPM_CAMPAIGN_MAX_METRICS];
            int defined = 1;
            for (uint32_t j = 0; j < m->campaign.nmetrics && defined; j++) {
                defined = dpm_metric_ratio(&cm, m->campaign.metrics[j], &values[j]) == DPM_OK;
            }
            if (!defined) {
                continue; /* the app sends no report when its metric is undefined */
            }
            dpm_report_t rep;
            if (load_report(m, &c->dev_rand, group, values, &rep) != DPM_OK ||
                batch_add(b, &rep) != 0) {
                return -1;
            }
            for (uint32_t j = 0; j < m->campaign.nmetrics; j++) {
                c->truth_sum[k][j][group] += (double)values[j].num / (double)values[j].den;
                c->truth_n[k][j][group]++;
            }
        }
    }
    return 0;
}

/* Send one batch until it is answered (reconnecting as needed) or time runs out.
 * 1 answered, 0 not answered in time. */
static int deliver(client_t *c, const batch_t *b, double give_up)
{
    int attempt = 0;
    while (now_s() < give_up) {
        if (attempt++ > 0) {
            c->retries++;
            sleep_ms(attempt < 10 ? 20 * attempt : 200);
        }
        if (!c->tls.open) {
            if (tls_client_connect(&c->tls) != 0) {
                c->handshake_failures++;
                continue;
            }
            c->handshakes++;
        }
        http_resp_t r;
        if (http_exchange(&c->tls, "POST", "/v1/reports", b->body, b->len, &r) != 0) {
            c->io_errors++;
            c->tls.port_index++; /* the connection broke: fail over */
            tls_client_close(&c->tls);
            continue;
        }
        if (r.close) {
            tls_client_close(&c->tls);
        }
        if (r.status == 429) {
            c->throttled++;
            free(r.body);
            sleep_ms(200);
            continue; /* rate limited: nothing was read, try again shortly */
        }
        if (r.status >= 500) {
            c->status_other++;
            free(r.body);
            continue; /* nothing was stored: retry */
        }
        uint64_t acc = 0, dup = 0, rej = 0;
        int parsed = parse_batch_response(r.body, r.len, &acc, &dup, &rej);
        free(r.body);
        c->batches++;
        if (r.status == 200) {
            if (parsed != 0 || acc + dup != b->n) {
                c->bad_answers++;
            }
            c->acked += b->n;
            c->accepted += acc;
            c->duplicates += dup;
            if (remember_ids(c, b) != 0) {
                c->bad_answers++;
            }
        } else {
            c->rejected += b->n;
            c->status_other++;
        }
        return 1;
    }
    return 0;
}

static void *client_main(void *arg)
{
    client_t *c = arg;
    batch_t b;
    memset(&b, 0, sizeof(b));
    uint64_t next = c->first_device;
    for (;;) {
        b.len = 0;
        b.n = 0;
        int rc = O.mode == MODE_POPULATION ? fill_population_batch(c, &b, &next)
                                           : fill_random_batch(c, &b);
        if (rc != 0 || b.n == 0) {
            break;
        }
        c->reports_sent += b.n;
        double give_up = O.mode == MODE_POPULATION ? now_s() + O.grace : c->deadline + O.grace;
        if (!deliver(c, &b, give_up)) {
            c->unsent += b.n;
            break;
        }
        if (O.mode != MODE_POPULATION && now_s() >= c->deadline) {
            break;
        }
    }
    tls_client_close(&c->tls);
    free(b.body);
    free(b.ids);
    return NULL;
}

static void *handshake_main(void *arg)
{
    client_t *c = arg;
    while (now_s() < c->deadline) {
        if (tls_client_connect(&c->tls) == 0) {
            c->handshakes++;
        } else {
            c->handshake_failures++;
            sleep_ms(5);
        }
        tls_client_close(&c->tls);
    }
    return NULL;
}

/* ---- main ------------------------------------------------------------------------------------ */

static double server_cpu_s(void)
{
    if (O.server_pid <= 0) {
        return 0.0;
    }
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", O.server_pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0.0;
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) {
        return 0.0;
    }
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static int fetch_campaigns(void)
{
    tls_client_t t;
    if (tls_client_init(&t, -1) != 0 || tls_client_connect(&t) != 0) {
        fprintf(stderr, "tool_load: cannot connect to %s:%d over TLS\n", O.host, O.ports[0]);
        return -1;
    }
    for (int k = 0; k < O.ncampaigns; k++) {
        char path[64];
        snprintf(path, sizeof(path), "/v1/campaigns/%u", O.campaign_ids[k]);
        http_resp_t r;
        dpm_campaign_t camp;
        const char *why = "";
        if (http_exchange(&t, "GET", path, NULL, 0, &r) != 0 || r.status != 200 ||
            dpm_campaign_decode(r.body, r.len, &camp, &why) != DPM_OK ||
            dpm_mech_init(&MECH[k], &camp, &why) != DPM_OK) {
            fprintf(stderr, "tool_load: campaign %u: %s\n", O.campaign_ids[k],
                    r.status != 200 ? "not served" : why);
            free(r.body);
            return -1;
        }
        free(r.body);
        if (MECH[k].campaign.groups != MECH[0].campaign.groups) {
            fprintf(stderr, "tool_load: campaigns must have the same number of groups\n");
            return -1;
        }
    }
    tls_client_close(&t);
    mbedtls_ssl_config_free(&t.conf);
    dpm_posix_rng_free(&t.rng);
    return 0;
}

typedef struct {
    double seconds, cpu_server, cpu_self;
    uint64_t handshakes, handshake_failures, batches, reports_sent, acked, accepted, duplicates,
        rejected, status_other, io_errors, retries, bad_answers, unsent, throttled;
} totals_t;

static int run_clients(client_t *cs, int n, int handshakes_only, totals_t *t)
{
    double cpu0 = server_cpu_s(), self0 = self_cpu_s(), t0 = now_s();
    uint64_t per = O.devices / (uint64_t)n, extra = O.devices % (uint64_t)n, first = 0;
    for (int i = 0; i < n; i++) {
        client_t *c = &cs[i];
        memset(c, 0, sizeof(*c));
        c->id = i;
        c->deadline = t0 + O.seconds;
        c->first_device = first;
        c->end_device = first + per + ((uint64_t)i < extra);
        first = c->end_device;
        uint8_t who[32];
        int wn = snprintf((char *)who, sizeof(who), "device farm %d", i);
        if (tls_client_init(&c->tls, i) != 0 ||
            dpm_posix_rng_init(&c->dev_rng, who, (size_t)wn) != DPM_OK) {
            return -1;
        }
        c->tls.port_index = i; /* spread over the collectors */
        c->dev_port = dpm_posix_rng(&c->dev_rng);
        dpm_rand_init(&c->dev_rand, &c->dev_port);
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&cs[i].th, NULL, handshakes_only ? handshake_main : client_main,
                           &cs[i]) != 0) {
            return -1;
        }
    }
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < n; i++) {
        client_t *c = &cs[i];
        pthread_join(c->th, NULL);
        t->handshakes += c->handshakes;
        t->handshake_failures += c->handshake_failures;
        t->batches += c->batches;
        t->reports_sent += c->reports_sent;
        t->acked += c->acked;
        t->accepted += c->accepted;
        t->duplicates += c->duplicates;
        t->rejected += c->rejected;
        t->status_other += c->status_other;
        t->io_errors += c->io_errors;
        t->retries += c->retries;
        t->bad_answers += c->bad_answers;
        t->unsent += c->unsent;
        t->throttled += c->throttled;
    }
    t->seconds = now_s() - t0;
    t->cpu_server = server_cpu_s() - cpu0;
    t->cpu_self = self_cpu_s() - self0;
    return 0;
}

static void free_clients(client_t *cs, int n)
{
    for (int i = 0; i < n; i++) {
        mbedtls_ssl_config_free(&cs[i].tls.conf);
        dpm_posix_rng_free(&cs[i].tls.rng);
        dpm_posix_rng_free(&cs[i].dev_rng);
        free(cs[i].ids);
    }
}

static void print_totals(const totals_t *t, int clients, const char *mode)
{
    printf("{\"mode\": \"%s\", \"clients\": %d, \"seconds\": %.3f, \"batch\": %d, "
           "\"batches\": %llu, \"reports_sent\": %llu, \"acked\": %llu, \"accepted\": %llu, "
           "\"duplicates\": %llu, \"rejected\": %llu, \"unsent\": %llu, \"other_status\": %llu, "
           "\"io_errors\": %llu, \"retries\": %llu, \"bad_answers\": %llu, \"per_s\": %.1f, "
           "\"handshakes\": %llu, \"handshake_failures\": %llu, \"handshakes_per_s\": %.1f, "
           "\"server_cpu_s\": %.2f, \"client_cpu_s\": %.2f, \"throttled\": %llu",
           mode, clients, t->seconds, O.batch, (unsigned long long)t->batches,
           (unsigned long long)t->reports_sent, (unsigned long long)t->acked,
           (unsigned long long)t->accepted, (unsigned long long)t->duplicates,
           (unsigned long long)t->rejected, (unsigned long long)t->unsent,
           (unsigned long long)t->status_other, (unsigned long long)t->io_errors,
           (unsigned long long)t->retries, (unsigned long long)t->bad_answers,
           (double)t->acked / t->seconds, (unsigned long long)t->handshakes,
           (unsigned long long)t->handshake_failures, (double)t->handshakes / t->seconds,
           t->cpu_server, t->cpu_self, (unsigned long long)t->throttled);
}

static int write_ids(client_t *cs, int n)
{
    if (O.ids == NULL) {
        return 0;
    }
    FILE *f = fopen(O.ids, "w");
    if (f == NULL) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        for (size_t k = 0; k < cs[i].nids; k++) {
            const uint8_t *id = cs[i].ids + k * DPM_REPORT_ID_BYTES;
            for (int j = 0; j < DPM_REPORT_ID_BYTES; j++) {
                fprintf(f, "%02x", id[j]);
            }
            fputc('\n', f);
        }
    }
    return fclose(f);
}

static void print_truth(client_t *cs, int n)
{
    printf(", \"devices\": %llu, \"truth\": [", (unsigned long long)O.devices);
    for (int k = 0; k < O.ncampaigns; k++) {
        const dpm_mech_t *m = &MECH[k];
        printf("%s{\"campaign\": %u, \"metrics\": [", k ? ", " : "", m->campaign.id);
        for (uint32_t j = 0; j < m->campaign.nmetrics; j++) {
            printf("%s{\"metric\": %d, \"groups\": [", j ? ", " : "", (int)m->campaign.metrics[j]);
            for (uint32_t g = 0; g < m->campaign.groups; g++) {
                double sum = 0;
                uint64_t cnt = 0;
                for (int i = 0; i < n; i++) {
                    sum += cs[i].truth_sum[k][j][g];
                    cnt += cs[i].truth_n[k][j][g];
                }
                printf("%s{\"group\": %u, \"devices\": %llu, \"mean\": %.9g}", g ? ", " : "", g,
                       (unsigned long long)cnt, cnt ? sum / (double)cnt : 0.0);
            }
            printf("]}");
        }
        printf("]}");
    }
    printf("]");
}

static void usage(void)
{
    fprintf(stderr, "usage: tool_load reports|handshakes|population|bench --port P --ca FILE "
                    "[options] (see the comment at the top of tests/e2e/tool_load.c)\n");
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    if (argc < 2) {
        usage();
    }
    memset(&O, 0, sizeof(O));
    O.host = "127.0.0.1";
    O.name = "localhost";
    O.clients = 64;
    O.batch = 100;
    O.seconds = 5;
    O.grace = 15;
    O.devices = 200000;
    O.seed = 1;
    O.campaign_ids[0] = 1;
    O.ncampaigns = 1;
    const char *m = argv[1];
    O.mode = strcmp(m, "reports") == 0      ? MODE_REPORTS
             : strcmp(m, "handshakes") == 0 ? MODE_HANDSHAKES
             : strcmp(m, "population") == 0 ? MODE_POPULATION
             : strcmp(m, "bench") == 0      ? MODE_BENCH
                                            : (usage(), MODE_REPORTS);
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--port") == 0) {
            O.port = atoi(v);
            O.ports[0] = O.port;
            O.nports = 1;
        } else if (strcmp(k, "--ports") == 0) {
            O.nports = 0;
            for (char *p = (char *)v; *p && O.nports < MAX_PORTS;) {
                O.ports[O.nports++] = (int)strtol(p, &p, 10);
                if (*p == ',') {
                    p++;
                }
            }
            O.port = O.nports > 0 ? O.ports[0] : 0;
        } else if (strcmp(k, "--host") == 0) {
            O.host = v;
        } else if (strcmp(k, "--name") == 0) {
            O.name = v;
        } else if (strcmp(k, "--ca") == 0) {
            O.ca = v;
        } else if (strcmp(k, "--ids") == 0) {
            O.ids = v;
        } else if (strcmp(k, "--token") == 0) {
            O.token_file = v;
        } else if (strcmp(k, "--clients") == 0) {
            O.clients = atoi(v);
            O.clients_set = 1;
        } else if (strcmp(k, "--batch") == 0) {
            O.batch = atoi(v);
        } else if (strcmp(k, "--seconds") == 0) {
            O.seconds = atof(v);
            O.seconds_set = 1;
        } else if (strcmp(k, "--grace-seconds") == 0) {
            O.grace = atof(v);
        } else if (strcmp(k, "--devices") == 0) {
            O.devices = strtoull(v, NULL, 10);
        } else if (strcmp(k, "--seed") == 0) {
            O.seed = strtoull(v, NULL, 10);
        } else if (strcmp(k, "--tls") == 0) {
            O.tls = strcmp(v, "1.2") == 0 ? 12 : strcmp(v, "1.3") == 0 ? 13 : (usage(), 0);
        } else if (strcmp(k, "--server-pid") == 0) {
            O.server_pid = atol(v);
        } else if (strcmp(k, "--campaign") == 0 || strcmp(k, "--campaigns") == 0) {
            O.ncampaigns = 0;
            for (char *p = (char *)v; *p && O.ncampaigns < MAX_CAMPAIGNS;) {
                O.campaign_ids[O.ncampaigns++] = (uint32_t)strtoul(p, &p, 10);
                if (*p == ',') {
                    p++;
                }
            }
        } else {
            usage();
        }
    }
    if (O.port <= 0 || O.port > 65535 || O.ca == NULL || O.clients < 1 || O.clients > MAX_CLIENTS ||
        O.batch < 1 || O.batch > 100000 || O.seconds <= 0 || O.ncampaigns < 1) {
        usage();
    }
}

/* The bearer token: the first line of the file, without its end of line. */
static int read_token(void)
{
    if (O.token_file == NULL) {
        return 0;
    }
    FILE *f = fopen(O.token_file, "r");
    if (f == NULL || fgets(O.token, sizeof(O.token), f) == NULL) {
        if (f != NULL) {
            fclose(f);
        }
        return -1;
    }
    fclose(f);
    O.token[strcspn(O.token, "\r\n")] = '\0';
    return O.token[0] != '\0' ? 0 : -1;
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    if (read_token() != 0) {
        fprintf(stderr, "tool_load: cannot read a token from %s\n", O.token_file);
        return 1;
    }
    mbedtls_x509_crt_init(&CA);
    if (psa_crypto_init() != PSA_SUCCESS || mbedtls_x509_crt_parse_file(&CA, O.ca) != 0) {
        fprintf(stderr, "tool_load: cannot load CA %s\n", O.ca);
        return 1;
    }
    client_t *cs = calloc(MAX_CLIENTS, sizeof(client_t));
    if (cs == NULL) {
        return 1;
    }
    totals_t t;
    int rc = 0;
    if (O.mode == MODE_HANDSHAKES) {
        int n = O.clients_set ? O.clients : 16;
        if (run_clients(cs, n, 1, &t) != 0) {
            return 1;
        }
        print_totals(&t, n, "handshakes");
        printf("}\n");
        rc = t.handshakes == 0;
        free_clients(cs, n);
    } else if (O.mode == MODE_BENCH) {
        /* the acceptance setting: 64 keep-alive clients, batches of 100; then handshakes */
        if (fetch_campaigns() != 0) {
            return 1;
        }
        O.batch = 100;
        totals_t h;
        if (run_clients(cs, 64, 0, &t) != 0) {
            return 1;
        }
        free_clients(cs, 64);
        int hn = O.clients_set ? O.clients : 16;
        if (run_clients(cs, hn, 1, &h) != 0) {
            return 1;
        }
        free_clients(cs, hn);
        printf("{\"metrics\": [{\"name\": \"collector.reports_per_s\", \"value\": %.1f, \"unit\": "
               "\"reports/s\", \"baseline\": null, \"ratio\": null}, {\"name\": "
               "\"collector.handshakes_per_s\", \"value\": %.1f, \"unit\": \"handshakes/s\", "
               "\"baseline\": null, \"ratio\": null}], \"details\": {\"reports\": {\"clients\": "
               "64, \"batch\": 100, \"seconds\": %.2f, \"acked\": %llu, \"unsent\": %llu, "
               "\"server_cpu_s\": %.2f, \"client_cpu_s\": %.2f, \"server_cpu_us_per_report\": "
               "%.2f}, \"handshakes\": {\"clients\": %d, \"seconds\": %.2f, \"handshakes\": "
               "%llu, \"failures\": %llu, \"server_cpu_s\": %.2f, \"client_cpu_s\": %.2f, "
               "\"server_cpu_ms_per_handshake\": %.3f, \"tls\": \"%s\", \"group\": "
               "\"secp256r1\"}, \"cpus\": %ld}}\n",
               (double)t.acked / t.seconds, (double)h.handshakes / h.seconds, t.seconds,
               (unsigned long long)t.acked, (unsigned long long)t.unsent, t.cpu_server, t.cpu_self,
               t.acked ? 1e6 * t.cpu_server / (double)t.acked : 0.0, hn, h.seconds,
               (unsigned long long)h.handshakes, (unsigned long long)h.handshake_failures,
               h.cpu_server, h.cpu_self,
               h.handshakes ? 1e3 * h.cpu_server / (double)h.handshakes : 0.0,
               O.tls == 12 ? "1.2" : "1.3", sysconf(_SC_NPROCESSORS_ONLN));
        rc = t.acked == 0 || h.handshakes == 0 || t.bad_answers > 0;
    } else {
        if (fetch_campaigns() != 0) {
            return 1;
        }
        int n = O.clients;
        if (O.mode == MODE_POPULATION && !O.clients_set) {
            n = 16;
        }
        if (run_clients(cs, n, 0, &t) != 0) {
            return 1;
        }
        if (write_ids(cs, n) != 0) {
            fprintf(stderr, "tool_load: cannot write %s\n", O.ids);
            rc = 1;
        }
        print_totals(&t, n, O.mode == MODE_POPULATION ? "population" : "reports");
        if (O.mode == MODE_POPULATION) {
            print_truth(cs, n);
        }
        printf("}\n");
        rc |= t.acked == 0 || t.bad_answers > 0;
        free_clients(cs, n);
    }
    free(cs);
    mbedtls_x509_crt_free(&CA);
    return rc;
}
