/* SPDX-License-Identifier: Apache-2.0 */
/* posix-client: a complete device in one file, on the one-call device API (dpm/device.h). It
 * reads a CSV of this device's model events, fetches the campaign from the collector (keeping a
 * copy, so it can still report while the collector is unreachable), checks it against the app's
 * privacy policy, makes one report (validate -> charge -> perturb -> encode -> queue, inside
 * dpm_device_report_*), and posts the outbox over TLS, authenticated by a client certificate
 * and/or a bearer token. Copy it as the starting point of an app.
 *
 *   posix-client --url https://127.0.0.1:8443 --ca ca.pem --campaign 1 --events events.csv
 *
 * Exit codes: 0 done (report posted, or queued for a later retry: see the message),
 * 1 usage, I/O or bad events, 2 campaign refused (unknown, invalid, beyond the policy, or a
 * collector answering with another campaign), 3 budget exhausted (the campaign's for this
 * period, or the device's cap for today), or the ledger full of campaigns whose periods are
 * still open, 4 metric undefined, 5 network or TLS failure, or the collector asked to retry
 * later (a report made this run stays in the outbox for the next run), 6 damaged state (ledger
 * or outbox; also when this run found reports lost to damage or to an erased outbox: they are
 * counted and reported), 7 the collector rejected a report (its reason is printed; the report
 * is gone and its epsilon spent), 8 the collector refused the device's credential (fix --token
 * or --cert; the reports stay queued). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dpm/dpm.h"
#include "dpm/port_posix.h"
#include "dpm/port_tls.h"
#include "dpm/expert/outbox.h"
#include "dpm/expert/uploader.h"

#define STATE_BYTES 65536u /* one file: the SDK lays out its ledger and outbox in it */
#define TIMEOUT_MS 10000u

enum {
    EXIT_OK,
    EXIT_USAGE,
    EXIT_CAMPAIGN,
    EXIT_BUDGET,
    EXIT_UNDEFINED,
    EXIT_NETWORK,
    EXIT_STATE,
    EXIT_REJECTED,
    EXIT_AUTH
};
#define FLUSH_ROUNDS 8 /* flushes per run: each goes on after rejects or a reconnect */

typedef struct {
    const char *url;
    const char *ca_path;
    const char *events_path;
    const char *state_dir;
    const char *server_name;
    const char *cert_path; /* optional device credential: TLS client certificate + key */
    const char *key_path;
    const char *token_path; /* optional device credential: a file holding a bearer token */
    uint32_t campaign_id;
    uint32_t period;
    uint32_t threshold_q31; /* prediction = score >= threshold */
    dpm_eps_t max_eps;      /* the app's privacy policy */
    dpm_eps_t max_budget;
    dpm_eps_t device_cap; /* 0: the policy's default (max_budget per day) */
    int flush_only;
} options_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: posix-client --url https://HOST:PORT --ca FILE --campaign ID [options]\n"
               "\n"
               "  --url URL          collector base URL (https://host:port)\n"
               "  --ca FILE          PEM certificate of the CA that signs the collector's\n"
               "                     certificate (pinned: no other CA is trusted)\n"
               "  --campaign ID      campaign to report for (fetched from the collector; a copy\n"
               "                     is kept in --state and used when the collector is down)\n"
               "  --events FILE      CSV of this device's events; '#' lines are comments.\n"
               "                     tuple campaigns and roc_hist campaigns with groups:\n"
               "                     score,label,group (one group per device, below the\n"
               "                     campaign's groups); roc_hist campaigns without groups:\n"
               "                     score,label (a third column is ignored). score in [0,1],\n"
               "                     label 0 or 1\n"
               "  --threshold X      tuple campaigns: prediction = score >= X (default 0.5)\n"
               "  --period N         campaign period this report belongs to (default 0)\n"
               "  --max-eps X        privacy policy: refuse campaigns whose epsilon per report\n"
               "                     is above X (default 1)\n"
               "  --max-budget X     privacy policy: refuse campaigns whose budget per period\n"
               "                     is above X (default 1: one report per period at eps 1)\n"
               "  --device-cap X     privacy policy: spend at most X epsilon per day across all\n"
               "                     campaigns, whatever the collector announces (default:\n"
               "                     --max-budget)\n"
               "  --state DIR        where the ledger, outbox and campaign copies live\n"
               "                     (default ./dpm-state)\n"
               "  --server-name NAME expected certificate name (default: the URL's host)\n"
               "  --cert FILE        this device's TLS client certificate (PEM), for a collector\n"
               "                     that authenticates devices (dpm-collector --device-ca)\n"
               "  --key FILE         its private key (PEM, unencrypted); with --cert\n"
               "  --token FILE       a file holding this device's bearer token (from the\n"
               "                     collector's operator: dpm-collector --credentials); sent\n"
               "                     with every upload, never printed\n"
               "  --flush-only       post what the outbox holds; make no new report\n"
               "  --help             this text\n");
}

static int parse_unit(const char *s, uint32_t *out)
{
    char *end = NULL;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || !(x >= 0.0 && x <= 1.0)) {
        return -1;
    }
    *out = dpm_score_from_double(x);
    return 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
    char *end = NULL;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || *end != '\0' || v > UINT32_MAX) {
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int parse_options(int argc, char **argv, options_t *o)
{
    static const struct option longopts[] = {
        {"url", required_argument, NULL, 'u'},        {"ca", required_argument, NULL, 'c'},
        {"campaign", required_argument, NULL, 'k'},   {"events", required_argument, NULL, 'e'},
        {"threshold", required_argument, NULL, 't'},  {"period", required_argument, NULL, 'p'},
        {"max-eps", required_argument, NULL, 'x'},    {"max-budget", required_argument, NULL, 'b'},
        {"state", required_argument, NULL, 's'},      {"server-name", required_argument, NULL, 'n'},
        {"flush-only", no_argument, NULL, 'f'},       {"help", no_argument, NULL, 'h'},
        {"cert", required_argument, NULL, 'C'},       {"key", required_argument, NULL, 'K'},
        {"device-cap", required_argument, NULL, 'D'}, {"token", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof(*o));
    o->state_dir = "dpm-state";
    o->threshold_q31 = DPM_SCORE_ONE / 2;
    o->max_eps = DPM_EPS_ONE;
    o->max_budget = DPM_EPS_ONE;
    int ch, bad = 0;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'u': o->url = optarg; break;
        case 'c': o->ca_path = optarg; break;
        case 'k': bad |= parse_u32(optarg, &o->campaign_id); break;
        case 'e': o->events_path = optarg; break;
        case 't': bad |= parse_unit(optarg, &o->threshold_q31); break;
        case 'p': bad |= parse_u32(optarg, &o->period); break;
        case 'x': bad |= dpm_eps_from_decimal(optarg, &o->max_eps) != DPM_OK; break;
        case 'b': bad |= dpm_eps_from_decimal(optarg, &o->max_budget) != DPM_OK; break;
        case 'D': bad |= dpm_eps_from_decimal(optarg, &o->device_cap) != DPM_OK; break;
        case 's': o->state_dir = optarg; break;
        case 'n': o->server_name = optarg; break;
        case 'f': o->flush_only = 1; break;
        case 'C': o->cert_path = optarg; break;
        case 'K': o->key_path = optarg; break;
        case 'T': o->token_path = optarg; break;
        case 'h': usage(stdout); exit(EXIT_OK);
        default: bad = 1;
        }
    }
    if (bad || o->url == NULL || o->ca_path == NULL || o->campaign_id == 0 ||
        (!o->flush_only && o->events_path == NULL) ||
        (o->cert_path == NULL) != (o->key_path == NULL)) {
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
    uint32_t n = 0;
    if (parse_u32(colon + 1, &n) != 0 || n == 0 || n > 65535) {
        return -1;
    }
    *port = (uint16_t)n;
    return 0;
}

/* The whole file into buf; returns its length, -1 on error or if it does not fit. */
static long read_file(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return -1;
    }
    size_t n = fread(buf, 1, cap, f);
    int full = n == cap && fgetc(f) != EOF;
    fclose(f);
    return full ? -1 : (long)n;
}

/* A PEM file into buf with its terminating NUL counted (Mbed TLS requires it); -1 on error. */
static long read_pem(const char *path, uint8_t *buf, size_t cap)
{
    long n = read_file(path, buf, cap - 1);
    if (n >= 0) {
        buf[n++] = '\0';
    }
    return n;
}

static int write_file(const char *path, const uint8_t *buf, size_t len)
{
    char tmp[DPM_POSIX_PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) {
        return -1;
    }
    int ok = fwrite(buf, 1, len, f) == len;
    ok &= fclose(f) == 0;
    return ok && rename(tmp, path) == 0 ? 0 : -1;
}

/* ---- events --------------------------------------------------------------------------------- */

/* One local statistic, as the campaign's mechanism needs it. */
typedef struct {
    dpm_confusion_t conf; /* tuple campaigns */
    uint32_t group;
    dpm_score_hist_t hist; /* roc_hist campaigns */
} events_t;                /* group: tuple campaigns and roc_hist campaigns with groups */

static int read_events(const options_t *o, const dpm_mech_t *mech, events_t *ev)
{
    const dpm_score_bins_t *bins = dpm_mech_score_bins(mech);
    int grouped = bins == NULL || mech->campaign.groups != 0; /* tuple, or roc_hist with groups */
    memset(ev, 0, sizeof(*ev));
    if (bins != NULL && dpm_score_hist_init(&ev->hist, bins) != DPM_OK) {
        return -1;
    }
    FILE *f = fopen(o->events_path, "r");
    if (f == NULL) {
        fprintf(stderr, "posix-client: cannot open %s: %s\n", o->events_path, strerror(errno));
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
        unsigned g = 0;
        int fields = sscanf(line, "%lf,%d,%u", &score, &label, &g);
        int ok = fields >= 2 && score >= 0.0 && score <= 1.0 && (label == 0 || label == 1);
        /* one device, one group: every line names the same one */
        if (ok && grouped) {
            ok = fields == 3 && (seen == 0 || g == ev->group);
            ev->group = g;
        }
        if (ok && bins != NULL) {
            ok = dpm_score_hist_add(&ev->hist, bins, dpm_score_from_double(score), label) == DPM_OK;
        } else if (ok) {
            ok = dpm_confusion_add(&ev->conf, label,
                                   dpm_score_from_double(score) >= o->threshold_q31) == DPM_OK;
        }
        if (!ok) {
            fprintf(stderr, "posix-client: %s:%ld: expected %s with score in [0,1] and label 0/1\n",
                    o->events_path, lineno,
                    grouped ? "score,label,group (the same group on every line)" : "score,label");
            rc = -1;
        }
        seen++;
    }
    fclose(f);
    if (rc == 0 && seen == 0) {
        fprintf(stderr, "posix-client: %s holds no events\n", o->events_path);
        rc = -1;
    }
    return rc;
}

/* ---- the collector ----------------------------------------------------------------------------
 */

typedef struct {
    dpm_posix_tcp_t tcp;
    dpm_tls_t tls;
    dpm_transport_t transport;
    int up;
} connection_t;

/* What the client trusts and, optionally, who it is: PEM bytes with their NUL counted, and a
 * bearer token (the uploader keeps a pointer to it: it must live as long as the device). */
typedef struct {
    uint8_t ca[16384], cert[8192], key[8192];
    long ca_len, cert_len, key_len;     /* cert_len 0: no client certificate */
    char token[DPM_HTTP_MAX_TOKEN + 3]; /* "" if none; room to see that a file is too long */
} credentials_t;

/* The token file's first line (a trailing CR LF or LF dropped). Its bytes are never printed:
 * a bad token is named by its file only. */
static int load_token(const char *path, credentials_t *c)
{
    long n = read_file(path, (uint8_t *)c->token, sizeof(c->token) - 1);
    if (n < 0) {
        fprintf(stderr,
                "posix-client: cannot read the token file %s (or it is longer than a "
                "token: %u characters at most)\n",
                path, (unsigned)DPM_HTTP_MAX_TOKEN);
        return -1;
    }
    c->token[n] = '\0';
    c->token[strcspn(c->token, "\r\n")] = '\0';
    /* The SDK's own check (dpm_upload_init) decides what a token may hold. */
    dpm_upload_config_t probe = {.host = "localhost",
                                 .path = "/",
                                 .max_reports = 1,
                                 .max_bytes = 1,
                                 .timeout_ms = 1,
                                 .backoff_base_ms = 1,
                                 .backoff_cap_ms = 1,
                                 .token = c->token};
    dpm_upload_t up;
    if (dpm_upload_init(&up, &probe) != DPM_OK) {
        fprintf(stderr,
                "posix-client: %s does not hold a bearer token (1 to %u of A-Z a-z 0-9 "
                "-._~+/ then optional '=', on its first line)\n",
                path, (unsigned)DPM_HTTP_MAX_TOKEN);
        return -1;
    }
    return 0;
}

static int load_credentials(const options_t *o, credentials_t *c)
{
    c->ca_len = read_pem(o->ca_path, c->ca, sizeof(c->ca));
    if (c->ca_len < 0) {
        fprintf(stderr, "posix-client: cannot read the CA certificate %s\n", o->ca_path);
        return -1;
    }
    c->cert_len = c->key_len = 0;
    if (o->cert_path != NULL) {
        c->cert_len = read_pem(o->cert_path, c->cert, sizeof(c->cert));
        c->key_len = read_pem(o->key_path, c->key, sizeof(c->key));
        if (c->cert_len < 0 || c->key_len < 0) {
            fprintf(stderr, "posix-client: cannot read %s or %s\n", o->cert_path, o->key_path);
            return -1;
        }
    }
    c->token[0] = '\0';
    return o->token_path != NULL ? load_token(o->token_path, c) : 0;
}

static void close_tcp(void *ctx)
{
    dpm_posix_tcp_close(ctx);
}

static int connect_collector(connection_t *conn, const char *host, uint16_t port,
                             const char *server_name, const credentials_t *cred, dpm_rng_t rng,
                             dpm_clock_t clock)
{
    memset(conn, 0, sizeof(*conn));
    dpm_status_t st = dpm_posix_tcp_connect(&conn->tcp, host, port, TIMEOUT_MS);
    if (st != DPM_OK) {
        fprintf(stderr, "posix-client: cannot connect to %s:%u: %s\n", host, (unsigned)port,
                dpm_strerror(st));
        return -1;
    }
    conn->tcp.timeout_ms = 1000;
    dpm_tls_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ca = cred->ca;
    cfg.ca_len = (size_t)cred->ca_len;
    if (cred->cert_len > 0) {
        cfg.client_cert = cred->cert;
        cfg.client_cert_len = (size_t)cred->cert_len;
        cfg.client_key = cred->key;
        cfg.client_key_len = (size_t)cred->key_len;
    }
    cfg.hostname = server_name;
    cfg.raw = dpm_posix_tcp(&conn->tcp);
    cfg.raw_close = close_tcp;
    cfg.rng = rng;
    cfg.clock = clock;
    cfg.handshake_timeout_ms = TIMEOUT_MS;
    if (dpm_tls_connect(&conn->tls, &cfg) != DPM_OK) {
        fprintf(stderr, "posix-client: TLS to %s failed: %s\n", server_name,
                dpm_tls_reason(&conn->tls));
        return -1;
    }
    conn->transport = dpm_tls_transport(&conn->tls);
    conn->up = 1;
    return 0;
}

/* The campaign: fetched (and its copy refreshed), or the kept copy when the collector cannot be
 * reached. Returns an exit code. */
static int get_campaign(const options_t *o, dpm_device_t *dev, connection_t *conn, const char *host,
                        dpm_mech_t *mech)
{
    static uint8_t bytes[DPM_CAMPAIGN_MAX_BYTES + 512];
    char path[DPM_POSIX_PATH_MAX];
    snprintf(path, sizeof(path), "%s/campaign-%u.pb", o->state_dir, o->campaign_id);
    const char *why = "";
    size_t len = 0;
    dpm_clock_t clock = dpm_posix_clock();
    dpm_status_t st = DPM_ERR_TRANSPORT;
    if (conn->up) {
        st = dpm_campaign_get(&conn->transport, &clock, host, o->campaign_id, TIMEOUT_MS, bytes,
                              sizeof(bytes), &len, &why);
    }
    if (st == DPM_OK) {
        st = dpm_device_accept_campaign(dev, bytes, len, mech, &why);
        if (st == DPM_OK && write_file(path, bytes, len) != 0) {
            fprintf(stderr, "posix-client: warning: cannot keep a copy of the campaign in %s\n",
                    path);
        }
    } else if (st == DPM_ERR_TRANSPORT || st == DPM_ERR_TIMEOUT) {
        long n = read_file(path, bytes, sizeof(bytes));
        if (n < 0) {
            fprintf(stderr, "posix-client: collector unreachable and no kept copy of campaign %u\n",
                    o->campaign_id);
            return EXIT_NETWORK;
        }
        printf("collector unreachable or busy: using the kept copy of campaign %u\n",
               o->campaign_id);
        st = dpm_device_accept_campaign(dev, bytes, (size_t)n, mech, &why);
    }
    if (st == DPM_ERR_AUTH) {
        fprintf(stderr, "posix-client: campaign %u not fetched: %s\n", o->campaign_id, why);
        return EXIT_AUTH;
    }
    if (st != DPM_OK) {
        fprintf(stderr, "posix-client: campaign %u refused: %s (%s)\n", o->campaign_id, why,
                dpm_strerror(st));
        return EXIT_CAMPAIGN;
    }
    return EXIT_OK;
}

/* ---- one report ---------------------------------------------------------------------------------
 */

static void hex_id(const uint8_t *id, char out[2 * DPM_REPORT_ID_BYTES + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < DPM_REPORT_ID_BYTES; i++) {
        out[2 * i] = digits[id[i] >> 4];
        out[2 * i + 1] = digits[id[i] & 15u];
    }
    out[2 * DPM_REPORT_ID_BYTES] = '\0';
}

static int exit_code_for(dpm_status_t st)
{
    switch (st) {
    case DPM_ERR_BUDGET:
    case DPM_ERR_LEDGER_FULL: return EXIT_BUDGET;
    case DPM_ERR_UNDEFINED: return EXIT_UNDEFINED;
    case DPM_ERR_POLICY: return EXIT_CAMPAIGN;
    case DPM_ERR_CORRUPT: return EXIT_STATE;
    default: return EXIT_USAGE;
    }
}

static int make_report(const options_t *o, dpm_device_t *dev, const dpm_mech_t *mech)
{
    static events_t ev;
    if (read_events(o, mech, &ev) != 0) {
        return EXIT_USAGE;
    }
    dpm_report_info_t info;
    dpm_status_t st;
    int roc = dpm_mech_score_bins(mech) != NULL;
    if ((!roc || mech->campaign.groups != 0) && ev.group >= mech->campaign.groups) {
        fprintf(stderr, "posix-client: group %u is out of range: campaign %u has %u groups\n",
                ev.group, mech->campaign.id, mech->campaign.groups);
        return EXIT_USAGE;
    }
    if (roc && mech->campaign.groups != 0) {
        st = dpm_device_report_roc_hist_group(dev, mech, o->period, ev.group, &ev.hist, &info);
    } else if (roc) {
        st = dpm_device_report_roc_hist(dev, mech, o->period, &ev.hist, &info);
    } else {
        st = dpm_device_report_tuple(dev, mech, o->period, ev.group, &ev.conf, &info);
    }
    if (st != DPM_OK) {
        /* the device says why: which limit, which argument, what to do */
        fprintf(stderr, "posix-client: no report: %s (%s)%s\n", dpm_device_why(dev),
                dpm_strerror(st), st == DPM_ERR_BUFFER ? "; post it first (--flush-only)" : "");
        return exit_code_for(st);
    }
    char eps[16], total[16];
    dpm_eps_format(info.eps_spent, eps, sizeof(eps));
    dpm_eps_format(info.spent_in_period, total, sizeof(total));
    char device[16];
    dpm_eps_format(info.device_spent, device, sizeof(device));
    char id[2 * DPM_REPORT_ID_BYTES + 1];
    hex_id(info.report_id, id);
    printf("report stored: campaign %u, period %u, %u bytes, epsilon spent %s (period total %s, "
           "device today %s), id %s\n",
           mech->campaign.id, o->period, info.bytes, eps, total, device, id);
    return EXIT_OK;
}

/* ---- the upload ---------------------------------------------------------------------------- */

/* Post the outbox: flush again while the uploader says so (every reject comes back to the app,
 * a batch the collector found too large goes again in smaller pieces), reconnecting when the
 * collector closed the connection. Prints every rejected report with the collector's reason.
 * Returns an exit code. */
static int upload(dpm_device_t *dev, connection_t *conn, const char *host, uint16_t port,
                  const char *name, const credentials_t *cred, const dpm_device_config_t *cfg)
{
    static uint8_t work[4096];
    dpm_upload_result_t res;
    memset(&res, 0, sizeof(res));
    uint32_t delivered = 0, rejected = 0;
    dpm_status_t st = DPM_OK;
    for (int round = 0; round < FLUSH_ROUNDS; round++) {
        if (round > 0 && res.reconnect) {
            dpm_tls_close(&conn->tls);
            if (connect_collector(conn, host, port, name, cred, cfg->rng, cfg->clock) != 0) {
                st = DPM_ERR_TRANSPORT;
                res.http_status = 0;
                break;
            }
        }
        st = dpm_device_flush(dev, &conn->transport, work, sizeof(work), &res);
        delivered += res.delivered;
        rejected += res.rejected;
        for (uint32_t i = 0; i < res.rejected; i++) {
            const dpm_upload_reject_t *rj = &res.rejects[i];
            char id[2 * DPM_REPORT_ID_BYTES + 1];
            hex_id(rj->report_id, id);
            fprintf(stderr,
                    "posix-client: the collector rejected report %s (campaign %u, period %u): "
                    "%s\n",
                    id, rj->campaign_id, rj->period, rj->reason);
        }
        if (st != DPM_OK || !res.more) {
            break;
        }
    }
    printf("upload: %u delivered, %u rejected, %u pending (HTTP %u)\n", delivered, rejected,
           dpm_outbox_pending(dpm_device_outbox(dev)), res.http_status);
    dpm_outbox_stats_t stats;
    if (dpm_outbox_stats(dpm_device_outbox(dev), &stats) == DPM_OK && stats.lost > 0) {
        fprintf(stderr,
                "posix-client: %u report(s) were lost to damaged storage (their epsilon "
                "was spent); the collector is told with the next batch\n",
                stats.lost);
    }
    if (rejected > 0) {
        fprintf(stderr,
                "posix-client: %u report(s) rejected for good: their epsilon was spent and "
                "they are not sent again (the reasons above say what to change)\n",
                rejected);
    }
    if (st != DPM_OK) {
        fprintf(stderr, "posix-client: upload failed: %s\n", dpm_upload_advice(st, &res));
    }
    return rejected > 0                                     ? EXIT_REJECTED
           : st == DPM_ERR_AUTH                             ? EXIT_AUTH
           : st == DPM_ERR_STORAGE || st == DPM_ERR_CORRUPT ? EXIT_STATE
           : st != DPM_OK                                   ? EXIT_NETWORK
                                                            : EXIT_OK;
}

int main(int argc, char **argv)
{
    options_t o;
    if (parse_options(argc, argv, &o) != 0) {
        return EXIT_USAGE;
    }
    char host[256];
    uint16_t port = 0;
    if (parse_url(o.url, host, sizeof(host), &port) != 0) {
        fprintf(stderr, "posix-client: --url must look like https://host:port\n");
        return EXIT_USAGE;
    }
    static credentials_t cred;
    if (load_credentials(&o, &cred) != 0) {
        return EXIT_USAGE;
    }

    char state_path[DPM_POSIX_PATH_MAX];
    mkdir(o.state_dir, 0700);
    snprintf(state_path, sizeof(state_path), "%s/state.bin", o.state_dir);
    /* The ledger's anchor lives in a second file: if state.bin is ever wiped, the anchor says
     * this device has charged before, and the ledger refuses instead of starting over. */
    char anchor_path[DPM_POSIX_PATH_MAX], outbox_anchor_path[DPM_POSIX_PATH_MAX];
    snprintf(anchor_path, sizeof(anchor_path), "%s/ledger-anchor.bin", o.state_dir);
    /* The outbox's anchor, likewise: an outbox wiped in state.bin is counted as a loss and
     * reported to the collector, never taken for a new device's empty outbox. */
    snprintf(outbox_anchor_path, sizeof(outbox_anchor_path), "%s/outbox-anchor.bin", o.state_dir);
    static dpm_posix_storage_t file, anchor_file, outbox_anchor_file;
    static dpm_posix_rng_t drbg;
    dpm_status_t st = dpm_posix_storage_open(&file, state_path, STATE_BYTES);
    if (st == DPM_OK) {
        st = dpm_posix_storage_open(&anchor_file, anchor_path, DPM_LEDGER_ANCHOR_BYTES);
    }
    if (st == DPM_OK) {
        st = dpm_posix_storage_open(&outbox_anchor_file, outbox_anchor_path,
                                    DPM_OUTBOX_ANCHOR_BYTES);
    }
    if (st != DPM_OK) {
        fprintf(stderr, "posix-client: cannot open %s or its anchors in %s: %s (%s)\n", state_path,
                o.state_dir, dpm_strerror(st),
                st == DPM_ERR_STORAGE ? strerror(errno) : "path too long");
        return EXIT_USAGE;
    }
    st = dpm_posix_rng_init(&drbg, (const uint8_t *)"posix-client", 12);
    if (st != DPM_OK) {
        fprintf(stderr, "posix-client: cannot seed the CSPRNG: %s\n", dpm_strerror(st));
        return EXIT_USAGE;
    }

    dpm_device_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.rng = dpm_posix_rng(&drbg);
    cfg.clock = dpm_posix_clock();
    cfg.storage = dpm_posix_storage(&file);
    /* the whole file: the SDK lays out its ledger and outbox in it and keeps a record of the
     * layout, so a later run with another STATE_BYTES is refused, not misread */
    cfg.ledger_anchor = dpm_posix_storage(&anchor_file);
    cfg.ledger_anchor_offset = 0;
    static dpm_storage_t outbox_anchor; /* the device points to it: it lives as long */
    outbox_anchor = dpm_posix_storage(&outbox_anchor_file);
    cfg.outbox_anchor = &outbox_anchor;
    cfg.outbox_anchor_offset = 0;
    cfg.policy.defaults.max_eps = DPM_EPS_Q16(o.max_eps);
    cfg.policy.defaults.max_budget = DPM_EPS_Q16(o.max_budget);
    cfg.policy.device.max_eps = DPM_EPS_Q16(o.device_cap); /* per day (the default period) */
    cfg.upload = (dpm_upload_config_t){.host = host,
                                       .path = "/v1/reports",
                                       .max_reports = DPM_UPLOAD_MAX_BATCH,
                                       .max_bytes = 2048,
                                       .timeout_ms = TIMEOUT_MS,
                                       .backoff_base_ms = 1000,
                                       .backoff_cap_ms = 600000,
                                       .token = cred.token[0] != '\0' ? cred.token : NULL};
    static dpm_device_t dev;
    st = dpm_device_init(&dev, &cfg);
    if (st != DPM_OK) {
        fprintf(stderr,
                "posix-client: cannot open the device state in %s: %s (%s); refusing to "
                "report\n",
                state_path, dpm_device_why(&dev), dpm_strerror(st));
        return st == DPM_ERR_CORRUPT ? EXIT_STATE : EXIT_USAGE;
    }
    dpm_outbox_stats_t found;
    int found_lost =
        dpm_outbox_stats(dpm_device_outbox(&dev), &found) == DPM_OK && found.found_lost > 0;
    if (found_lost) {
        fprintf(stderr,
                "posix-client: the outbox in %s was %s: %u report(s) lost (their epsilon was "
                "spent); the collector is told with the next batch\n",
                state_path, found.found_erased > 0 ? "erased" : "damaged", found.found_lost);
    }

    static connection_t conn;
    const char *name = o.server_name != NULL ? o.server_name : host;
    int connected = connect_collector(&conn, host, port, name, &cred, cfg.rng, cfg.clock) == 0;
    int rc = EXIT_OK;
    if (!o.flush_only) {
        static dpm_mech_t mech;
        rc = get_campaign(&o, &dev, &conn, host, &mech);
        if (rc == EXIT_OK) {
            rc = make_report(&o, &dev, &mech);
        }
    }
    if (rc == EXIT_OK && found_lost) {
        rc = EXIT_STATE; /* the losses are reported; the run still makes and posts its report */
    }
    if (!connected) {
        fprintf(stderr, "posix-client: not posted; %u report(s) wait in the outbox\n",
                dpm_outbox_pending(dpm_device_outbox(&dev)));
        dpm_posix_rng_free(&drbg);
        return rc != EXIT_OK ? rc : EXIT_NETWORK;
    }
    int up = upload(&dev, &conn, host, port, name, &cred, &cfg);
    rc = rc != EXIT_OK ? rc : up;
    dpm_tls_close(&conn.tls);
    dpm_posix_rng_free(&drbg);
    return rc;
}
