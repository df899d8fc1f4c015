/* SPDX-License-Identifier: Apache-2.0 */
/* posix-client: a complete device in one file. It reads a CSV of model events
 * (score,label,group), fetches the campaign from the collector, computes the local metrics,
 * charges the privacy ledger, perturbs and stores the report in the outbox, and posts the
 * outbox over TLS. Copy it as the starting point of an app integration.
 *
 *   posix-client --url https://127.0.0.1:8443 --ca ca.pem --campaign 1 --events events.csv
 *
 * Exit codes: 0 done (report posted, or queued for a later retry: see the message),
 * 1 usage or I/O error, 2 campaign refused, 3 budget exhausted, 4 metric undefined,
 * 5 network or TLS failure (the report stays in the outbox for the next run). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dpm/budget.h"
#include "dpm/port_posix.h"
#include "dpm/port_tls.h"
#include "dpm/report.h"
#include "dpm/upload.h"

#define STATE_BYTES 65536u /* one file: ledger (first 4 KiB) + outbox (the rest) */
#define LEDGER_BYTES 4096u
#define TIMEOUT_MS 10000u

typedef struct {
    const char *url;
    const char *ca_path;
    const char *events_path;
    const char *state_dir;
    const char *server_name;
    const char *cert_path; /* device certificate for a collector that asks for one */
    const char *key_path;
    uint32_t campaign_id;
    uint32_t period;
    uint32_t threshold_q31; /* prediction = score >= threshold */
    int flush_only;
} options_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: posix-client --url https://HOST:PORT --ca FILE --campaign ID [options]\n"
            "\n"
            "  --url URL          collector base URL (https://host:port)\n"
            "  --ca FILE          PEM certificate of the CA that signs the collector's\n"
            "                     certificate (pinned: no other CA is trusted)\n"
            "  --campaign ID      campaign to report for (fetched from the collector)\n"
            "  --events FILE      CSV of this device's events: score,label,group per line;\n"
            "                     score in [0,1], label 0/1, group a number < the campaign's\n"
            "                     groups (one group per device); '#' lines are comments\n"
            "  --threshold X      decision threshold: prediction = score >= X (default 0.5)\n"
            "  --period N         campaign period this report belongs to (default 0)\n"
            "  --state DIR        where the ledger and outbox live (default ./dpm-state)\n"
            "  --server-name NAME expected certificate name (default: the URL's host)\n"
            "  --cert FILE        this device's TLS client certificate (PEM), for a collector\n"
            "                     that authenticates devices (dpm-collector --device-ca)\n"
            "  --key FILE         its private key (PEM, unencrypted); with --cert\n"
            "  --flush-only       post what the outbox holds; make no new report\n"
            "  --help             this text\n");
}

static int parse_threshold(const char *s, uint32_t *out)
{
    char *end = NULL;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || !(x >= 0.0 && x <= 1.0)) {
        return -1;
    }
    *out = dpm_score_from_double(x);
    return 0;
}

static int parse_options(int argc, char **argv, options_t *o)
{
    static const struct option longopts[] = {
        {"url", required_argument, NULL, 'u'},       {"ca", required_argument, NULL, 'c'},
        {"campaign", required_argument, NULL, 'k'},  {"events", required_argument, NULL, 'e'},
        {"threshold", required_argument, NULL, 't'}, {"period", required_argument, NULL, 'p'},
        {"state", required_argument, NULL, 's'},     {"server-name", required_argument, NULL, 'n'},
        {"flush-only", no_argument, NULL, 'f'},      {"help", no_argument, NULL, 'h'},
        {"cert", required_argument, NULL, 'C'},      {"key", required_argument, NULL, 'K'},
        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof(*o));
    o->state_dir = "dpm-state";
    o->threshold_q31 = DPM_SCORE_ONE / 2;
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'u': o->url = optarg; break;
        case 'c': o->ca_path = optarg; break;
        case 'k': o->campaign_id = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'e': o->events_path = optarg; break;
        case 't':
            if (parse_threshold(optarg, &o->threshold_q31) != 0) {
                fprintf(stderr, "posix-client: --threshold must be in [0, 1]\n");
                return -1;
            }
            break;
        case 'p': o->period = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 's': o->state_dir = optarg; break;
        case 'n': o->server_name = optarg; break;
        case 'f': o->flush_only = 1; break;
        case 'C': o->cert_path = optarg; break;
        case 'K': o->key_path = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (o->url == NULL || o->ca_path == NULL || o->campaign_id == 0 ||
        (!o->flush_only && o->events_path == NULL) || (o->cert_path == NULL) != (o->key_path == NULL)) {
        usage(stderr);
        return -1;
    }
    return 0;
}

/* https://host:port -> host, port. */
static int parse_url(const char *url, char *host, size_t cap, uint16_t *port)
{
    const char *p = strncmp(url, "https://", 8) == 0 ? url + 8 : NULL;
    const char *colon = p != NULL ? strrchr(p, ':') : NULL;
    if (colon == NULL || (size_t)(colon - p) >= cap || colon == p) {
        return -1;
    }
    memcpy(host, p, (size_t)(colon - p));
    host[colon - p] = '\0';
    unsigned long n = strtoul(colon + 1, NULL, 10);
    if (n == 0 || n > 65535) {
        return -1;
    }
    *port = (uint16_t)n;
    return 0;
}

static long read_file(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return -1;
    }
    size_t n = fread(buf, 1, cap - 1, f);
    int full = n == cap - 1 && fgetc(f) != EOF;
    fclose(f);
    if (full) {
        return -1;
    }
    buf[n] = '\0';
    return (long)n + 1; /* PEM needs its NUL counted */
}

/* Confusion counts and the device's group from the CSV. */
static int read_events(const char *path, uint32_t threshold, dpm_confusion_t *conf,
                       uint32_t *group)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "posix-client: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[256];
    long lineno = 0, seen = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n' || strncmp(line, "score", 5) == 0) {
            continue;
        }
        double score;
        int label;
        unsigned g;
        if (sscanf(line, "%lf,%d,%u", &score, &label, &g) != 3 || !(score >= 0 && score <= 1) ||
            (seen > 0 && g != *group) ||
            dpm_confusion_add(conf, label, dpm_score_from_double(score) >= threshold) != DPM_OK) {
            fprintf(stderr, "posix-client: %s:%ld: expected score,label,group with score in "
                            "[0,1], label 0/1 and the same group on every line\n",
                    path, lineno);
            rc = -1;
        }
        *group = g;
        seen++;
    }
    fclose(f);
    if (rc == 0 && seen == 0) {
        fprintf(stderr, "posix-client: %s holds no events\n", path);
        rc = -1;
    }
    return rc;
}

typedef struct {
    dpm_posix_tcp_t tcp;
    dpm_tls_t tls;
    dpm_transport_t transport;
} connection_t;

/* The device's TLS client certificate and key (optional), PEM with the NUL counted. */
typedef struct {
    uint8_t cert[8192], key[8192];
    long cert_len, key_len; /* 0: none */
} device_identity_t;

static int load_identity(const options_t *o, device_identity_t *id)
{
    id->cert_len = id->key_len = 0;
    if (o->cert_path == NULL) {
        return 0;
    }
    id->cert_len = read_file(o->cert_path, id->cert, sizeof(id->cert));
    id->key_len = read_file(o->key_path, id->key, sizeof(id->key));
    if (id->cert_len < 0 || id->key_len < 0) {
        fprintf(stderr, "posix-client: cannot read %s or %s\n", o->cert_path, o->key_path);
        return -1;
    }
    return 0;
}

static void use_identity(dpm_tls_config_t *cfg, const device_identity_t *id)
{
    if (id != NULL && id->cert_len > 0) {
        cfg->client_cert = id->cert;
        cfg->client_cert_len = (size_t)id->cert_len;
        cfg->client_key = id->key;
        cfg->client_key_len = (size_t)id->key_len;
    }
}

static void close_tcp(void *ctx)
{
    dpm_posix_tcp_close(ctx);
}

static int connect_collector(connection_t *conn, const char *host, uint16_t port,
                             const char *server_name, const uint8_t *ca, size_t ca_len,
                             const device_identity_t *id, dpm_rng_t rng, dpm_clock_t clock)
{
    memset(conn, 0, sizeof(*conn));
    if (dpm_posix_tcp_connect(&conn->tcp, host, port, TIMEOUT_MS) != 0) {
        fprintf(stderr, "posix-client: cannot connect to %s:%u\n", host, (unsigned)port);
        return -1;
    }
    conn->tcp.timeout_ms = 1000;
    dpm_tls_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ca = ca;
    cfg.ca_len = ca_len;
    cfg.hostname = server_name;
    cfg.raw = dpm_posix_tcp(&conn->tcp);
    cfg.raw_close = close_tcp;
    cfg.rng = rng;
    cfg.clock = clock;
    cfg.handshake_timeout_ms = TIMEOUT_MS;
    use_identity(&cfg, id);
    if (dpm_tls_connect(&conn->tls, &cfg) != DPM_OK) {
        fprintf(stderr, "posix-client: TLS to %s failed: %s\n", server_name,
                dpm_tls_reason(&conn->tls));
        return -1;
    }
    conn->transport = dpm_tls_transport(&conn->tls);
    return 0;
}

/* Measure, perturb, charge and store one report. Returns an exit code. */
static int make_report(const options_t *o, const dpm_mech_t *mech, dpm_rand_t *rand,
                       dpm_ledger_t *ledger, dpm_outbox_t *outbox)
{
    dpm_confusion_t conf = {0, 0, 0, 0};
    uint32_t group = 0;
    if (read_events(o->events_path, o->threshold_q31, &conf, &group) != 0) {
        return 1;
    }
    dpm_ratio_t values[DPM_TUPLE_MAX_METRICS];
    for (uint32_t i = 0; i < mech->campaign.nmetrics; i++) {
        if (dpm_metric_ratio(&conf, mech->campaign.metrics[i], &values[i]) != DPM_OK) {
            fprintf(stderr, "posix-client: metric %d is undefined on this device's events "
                            "(zero denominator): no report\n",
                    (int)mech->campaign.metrics[i]);
            return 4;
        }
    }
    if (!dpm_outbox_room(outbox, DPM_REPORT_MAX_BYTES)) {
        fprintf(stderr, "posix-client: the outbox is full; post it first (--flush-only)\n");
        return 1;
    }
    /* Charge first: a crash after this can only over-count the budget, never under-count. */
    dpm_status_t st = dpm_ledger_charge(ledger, mech->campaign.id, o->period,
                                        mech->eps_implemented, mech->campaign.budget);
    if (st != DPM_OK) {
        fprintf(stderr, "posix-client: privacy ledger refused the report: %s\n",
                dpm_strerror(st));
        return st == DPM_ERR_BUDGET ? 3 : 1;
    }
    dpm_report_t report;
    uint8_t bytes[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    st = dpm_mech_report_tuple(mech, rand, o->period, group, values, &report);
    if (st == DPM_OK) {
        st = dpm_report_encode(&report, bytes, sizeof(bytes), &len);
    }
    if (st == DPM_OK) {
        st = dpm_outbox_put(outbox, bytes, len);
    }
    if (st != DPM_OK) {
        fprintf(stderr, "posix-client: cannot make the report: %s\n", dpm_strerror(st));
        return 1;
    }
    char eps[16];
    dpm_eps_format(mech->eps_implemented, eps, sizeof(eps));
    printf("report stored: campaign %u, period %u, group %u, %u value(s), %zu bytes, "
           "epsilon spent %s\n",
           mech->campaign.id, o->period, group, report.body.tuple.nmetrics, len, eps);
    return 0;
}

int main(int argc, char **argv)
{
    options_t o;
    if (parse_options(argc, argv, &o) != 0) {
        return 1;
    }
    char host[256];
    uint16_t port = 0;
    if (parse_url(o.url, host, sizeof(host), &port) != 0) {
        fprintf(stderr, "posix-client: --url must look like https://host:port\n");
        return 1;
    }
    static uint8_t ca[16384];
    long ca_len = read_file(o.ca_path, ca, sizeof(ca));
    if (ca_len < 0) {
        fprintf(stderr, "posix-client: cannot read the CA certificate %s\n", o.ca_path);
        return 1;
    }
    static device_identity_t identity;
    if (load_identity(&o, &identity) != 0) {
        return 1;
    }
    char state_path[DPM_POSIX_PATH_MAX];
    mkdir(o.state_dir, 0700);
    snprintf(state_path, sizeof(state_path), "%s/state.bin", o.state_dir);
    dpm_posix_storage_t file;
    if (dpm_posix_storage_open(&file, state_path, STATE_BYTES) != 0) {
        fprintf(stderr, "posix-client: cannot open %s\n", state_path);
        return 1;
    }
    dpm_storage_t storage = dpm_posix_storage(&file);
    dpm_ledger_t ledger;
    dpm_outbox_t outbox;
    if (dpm_ledger_open(&ledger, &storage, 0, LEDGER_BYTES) != DPM_OK ||
        dpm_outbox_open(&outbox, &storage, LEDGER_BYTES, STATE_BYTES - LEDGER_BYTES) != DPM_OK) {
        fprintf(stderr, "posix-client: the state in %s is damaged; refusing to report\n",
                state_path);
        return 1;
    }
    dpm_posix_rng_t drbg;
    if (dpm_posix_rng_init(&drbg, (const uint8_t *)"posix-client", 12) != 0) {
        fprintf(stderr, "posix-client: cannot seed the CSPRNG\n");
        return 1;
    }
    dpm_rng_t rng = dpm_posix_rng(&drbg);
    dpm_clock_t clock = dpm_posix_clock();
    dpm_rand_t rand;
    dpm_rand_init(&rand, &rng);

    connection_t conn;
    const char *name = o.server_name != NULL ? o.server_name : host;
    if (connect_collector(&conn, host, port, name, ca, (size_t)ca_len, &identity, rng, clock) !=
        0) {
        return 5;
    }
    int rc = 0;
    static uint8_t work[4096];
    if (!o.flush_only) {
        dpm_mech_t mech;
        const char *why = "";
        dpm_status_t st = dpm_campaign_fetch(&conn.transport, &clock, host, o.campaign_id,
                                             TIMEOUT_MS, work, sizeof(work), &mech, &why);
        if (st != DPM_OK) {
            fprintf(stderr, "posix-client: campaign %u refused: %s (%s)\n", o.campaign_id, why,
                    dpm_strerror(st));
            dpm_tls_close(&conn.tls);
            return st == DPM_ERR_TRANSPORT || st == DPM_ERR_TIMEOUT ? 5 : 2;
        }
        rc = make_report(&o, &mech, &rand, &ledger, &outbox);
    }
    dpm_upload_config_t ucfg = {host, "/v1/reports", DPM_UPLOAD_MAX_BATCH, 2048, TIMEOUT_MS,
                                1000, 600000};
    dpm_upload_t up;
    dpm_upload_result_t res;
    dpm_upload_init(&up, &ucfg);
    dpm_status_t st = dpm_upload_flush(&up, &outbox, &conn.transport, &clock, &rand, work,
                                       sizeof(work), &res);
    printf("upload: %u delivered, %u rejected, %u pending (HTTP %u)\n", res.delivered,
           res.rejected, res.pending, res.http_status);
    if (st != DPM_OK) {
        fprintf(stderr, "posix-client: upload failed (%s); the reports stay in the outbox\n",
                dpm_strerror(st));
        rc = rc != 0 ? rc : 5;
    }
    dpm_tls_close(&conn.tls);
    dpm_posix_rng_free(&drbg);
    return rc;
}
