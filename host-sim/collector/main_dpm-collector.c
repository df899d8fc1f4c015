/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-collector: the TLS report collector. Parses options, loads the campaigns, opens the
 * store, and serves until SIGINT/SIGTERM (then finishes the requests in progress, commits,
 * and exits 0). Exit status 2: bad usage or configuration (campaigns file, certificate, key,
 * database); 1: a runtime failure. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/aggregate.h"
#include "collector/auth.h"
#include "collector/campaigns.h"
#include "collector/limits.h"
#include "collector/request.h"
#include "collector/server.h"
#include "collector/store.h"
#include "collector/tls_server.h"
#include "dpm/version.h"

static const char USAGE[] =
    "usage: dpm-collector --listen HOST:PORT --cert FILE --key FILE --campaigns FILE --db FILE\n"
    "                     [--credentials FILE] [--device-ca FILE] [options]\n"
    "       dpm-collector --check-campaigns FILE\n"
    "       dpm-collector --version\n"
    "\n"
    "  --listen      numeric address and port, e.g. 127.0.0.1:8443 ([::1]:8443; port 0: any)\n"
    "  --cert/--key  server certificate chain and private key (PEM or DER)\n"
    "  --campaigns   campaigns file (below); each campaign is validated like a device does\n"
    "  --db          SQLite database (created if missing; WAL, synchronous=FULL)\n"
    "Who may do what (devices must authenticate unless --allow-anonymous-devices):\n"
    "  --credentials FILE   bearer tokens, stored as SHA-256: lines 'NAME ROLES SHA256HEX',\n"
    "                ROLES a comma list of device, relay=N (posts for N devices), operator\n"
    "  --device-ca FILE     CA of device client certificates (device identity: the CN)\n"
    "  --allow-anonymous-devices  accept reports without a credential (UNSAFE: no quotas)\n"
    "  --public-estimates   estimates and /metrics without the operator credential (UNSAFE)\n"
    "Limits:\n"
    "  --max-conns N         open connections before idle ones are evicted (default 1024)\n"
    "  --max-conns-per-addr N  per client address (default 64; 0: no limit)\n"
    "  --rate-limit N        requests per second per client address (default 100; 0: off)\n"
    "  --rate-burst N        bucket size of that limit (default 200)\n"
    "  --memory-limit BYTES  the process's memory cap (default 536870912); connections and\n"
    "                request bodies beyond it are refused (503)\n"
    "  --max-body    largest request body in bytes (default 1048576; larger: 413)\n"
    "  --*-timeout-ms  TLS handshake (default 10000), idle keep-alive (15000), reading one\n"
    "                request or writing its answer (10000); each a total time\n"
    "  --integrity-check full|quick|off   at start-up (default full: PRAGMA integrity_check)\n"
    "  --ready-file  write the bound port there once listening (for scripts using port 0)\n"
    "\n"
    "Endpoints: POST /v1/reports (dpm.v1.Batch, application/x-protobuf; device credential),\n"
    "GET /v1/campaigns/ID (dpm.v1.Campaign), GET /v1/campaigns/ID/estimate (JSON; operator),\n"
    "GET /metrics (operator), GET /healthz (503 when storage fails).\n"
    "\n"
    "Campaigns file: '#' comments; one block per campaign:\n"
    "  [campaign]\n"
    "  id = 1                  # required, unique, >= 1\n"
    "  mechanism = tuple_mr    # required: tuple_mr | tuple_ml\n"
    "  eps = 1                 # required: decimal ε of one report\n"
    "  budget = 1              # ε per device and period (default: eps)\n"
    "  period_seconds = 86400  # default 86400\n"
    "  groups = 4              # required: 2 .. 16\n"
    "  metrics = tpr           # required: comma-separated tpr, fpr, accuracy, precision\n"
    "  frac_bits = 16          # tuple_ml value grid (default 16, the build's)\n"
    "  bins = 10               # roc_hist: score bins (or edges = 0.2, 0.5, ...)\n"
    "  max_examples = 100      # roc_hist: most examples per device (default 100)\n"
    "  device_quota = 1        # reports per device credential and period (default 1)\n"
    "  start = 2025-12-01T00:00:00Z  # period 0 begins (default: first seen by this database)\n"
    "  clock_slack_seconds = 300     # window widened both ways (default 300)\n"
    "  late_seconds = 86400    # accepted this long after the period ends (default: a period)\n";

static coll_server_t *g_server; /* for the signal handler only */

static void on_signal(int sig)
{
    (void)sig;
    if (g_server != NULL) {
        coll_server_stop(g_server);
    }
}

static int parse_size(const char *s, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out)
{
    char *end = NULL;
    if (s == NULL || *s < '0' || *s > '9') {
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

/* The part of --memory-limit that is not budgeted to connections and requests: SQLite's page
 * cache (64 MiB), the aggregates, the binary and libraries. */
#define BASELINE_BYTES ((size_t)96 << 20)

typedef struct {
    const char *listen, *cert, *key, *campaigns, *db, *ready_file, *check, *credentials, *device_ca,
        *integrity;
    unsigned long long threads, per_addr, rate, burst, memory, max_body, handshake_ms, idle_ms,
        request_ms;
    int allow_anonymous, public_estimates;
} options_t;

static int parse_args(int argc, char **argv, options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->threads = 1024;
    o->per_addr = 64;
    o->rate = 100;
    o->burst = 200;
    o->memory = 512ull << 20;
    o->max_body = 1u << 20;
    o->handshake_ms = 10000;
    o->idle_ms = 15000;
    o->request_ms = 10000;
    o->integrity = "full";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **str = NULL;
        unsigned long long *num = NULL, lo = 1, hi = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(USAGE, stdout);
            exit(0);
        } else if (strcmp(a, "--allow-anonymous-devices") == 0) {
            o->allow_anonymous = 1;
            continue;
        } else if (strcmp(a, "--public-estimates") == 0) {
            o->public_estimates = 1;
            continue;
        } else if (strcmp(a, "--credentials") == 0) {
            str = &o->credentials;
        } else if (strcmp(a, "--device-ca") == 0) {
            str = &o->device_ca;
        } else if (strcmp(a, "--integrity-check") == 0) {
            str = &o->integrity;
        } else if (strcmp(a, "--max-conns-per-addr") == 0) {
            num = &o->per_addr, lo = 0, hi = 100000;
        } else if (strcmp(a, "--rate-limit") == 0) {
            num = &o->rate, lo = 0, hi = 1000000;
        } else if (strcmp(a, "--rate-burst") == 0) {
            num = &o->burst, hi = 1000000;
        } else if (strcmp(a, "--memory-limit") == 0) {
            num = &o->memory, lo = 128ull << 20, hi = 1ull << 40;
        } else if (strcmp(a, "--listen") == 0) {
            str = &o->listen;
        } else if (strcmp(a, "--cert") == 0) {
            str = &o->cert;
        } else if (strcmp(a, "--key") == 0) {
            str = &o->key;
        } else if (strcmp(a, "--campaigns") == 0) {
            str = &o->campaigns;
        } else if (strcmp(a, "--db") == 0) {
            str = &o->db;
        } else if (strcmp(a, "--ready-file") == 0) {
            str = &o->ready_file;
        } else if (strcmp(a, "--check-campaigns") == 0) {
            str = &o->check;
        } else if (strcmp(a, "--threads") == 0 || strcmp(a, "--max-conns") == 0) {
            num = &o->threads, hi = 16384;
        } else if (strcmp(a, "--max-body") == 0) {
            num = &o->max_body, hi = 1ull << 30;
        } else if (strcmp(a, "--handshake-timeout-ms") == 0) {
            num = &o->handshake_ms, lo = 10, hi = 3600000;
        } else if (strcmp(a, "--idle-timeout-ms") == 0) {
            num = &o->idle_ms, lo = 10, hi = 3600000;
        } else if (strcmp(a, "--request-timeout-ms") == 0) {
            num = &o->request_ms, lo = 10, hi = 3600000;
        } else {
            fprintf(stderr, "dpm-collector: unknown option '%s'\n%s", a, USAGE);
            return -1;
        }
        if (v == NULL) {
            fprintf(stderr, "dpm-collector: %s needs a value\n", a);
            return -1;
        }
        if (str != NULL) {
            *str = v;
        } else if (parse_size(v, lo, hi, num) != 0) {
            fprintf(stderr, "dpm-collector: %s wants an integer in [%llu, %llu], got '%s'\n", a, lo,
                    hi, v);
            return -1;
        }
        i++;
    }
    if (o->check != NULL) {
        return 0;
    }
    if (!o->listen || !o->cert || !o->key || !o->campaigns || !o->db) {
        fprintf(stderr,
                "dpm-collector: --listen, --cert, --key, --campaigns and --db are "
                "required\n%s",
                USAGE);
        return -1;
    }
    if (strcmp(o->integrity, "full") != 0 && strcmp(o->integrity, "quick") != 0 &&
        strcmp(o->integrity, "off") != 0) {
        fprintf(stderr, "dpm-collector: --integrity-check wants full, quick or off\n");
        return -1;
    }
    if (!o->credentials && !o->device_ca && !o->allow_anonymous) {
        fprintf(stderr, "dpm-collector: devices must authenticate: give --credentials (bearer "
                        "tokens) and/or --device-ca (client certificates), or accept anyone "
                        "with --allow-anonymous-devices (unsafe: no per-device quotas)\n");
        return -1;
    }
    return 0;
}

static coll_integrity_t integrity_mode(const char *s)
{
    return strcmp(s, "quick") == 0 ? COLL_INTEGRITY_QUICK
           : strcmp(s, "off") == 0 ? COLL_INTEGRITY_OFF
                                   : COLL_INTEGRITY_FULL;
}

static int has_operator(const coll_auth_t *a)
{
    for (size_t i = 0; i < a->n; i++) {
        if (a->c[i].roles & COLL_ROLE_OPERATOR) {
            return 1;
        }
    }
    return 0;
}

static int check_campaigns(const char *path, coll_campaigns_t *cs)
{
    char err[512];
    if (coll_campaigns_load(path, cs, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector: %s\n", err);
        return 2;
    }
    for (size_t i = 0; i < cs->n; i++) {
        const dpm_mech_t *m = &cs->c[i].mech;
        printf("campaign %u: %s, %u groups, %u metric(s), eps %.6f (implemented %.6f), "
               "fingerprint %08x\n",
               m->campaign.id, coll_mechanism_name(m->campaign.mechanism), m->campaign.groups,
               m->campaign.nmetrics, m->campaign.eps / 65536.0, m->eps_implemented / 65536.0,
               m->params_hash);
    }
    return 0;
}

static int store_commit(void *ctx, coll_batch_t *b)
{
    return coll_store_commit(ctx, b);
}

static int store_health(void *ctx, char *reason, size_t cap)
{
    return coll_store_health(ctx, reason, cap);
}

int main(int argc, char **argv)
{
    options_t o;
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("dpm-collector %s\n", dpm_version());
        return 0;
    }
    if (parse_args(argc, argv, &o) != 0) {
        return 2;
    }
    int rc = 2;
    char err[512];
    coll_campaigns_t *cs = calloc(1, sizeof(*cs));
    coll_aggregates_t *agg = calloc(1, sizeof(*agg));
    coll_tls_t *tls = calloc(1, sizeof(*tls));
    coll_limits_t *limits = calloc(1, sizeof(*limits));
    coll_auth_t auth = {0, NULL};
    coll_store_t *store = NULL;
    coll_server_t *srv = NULL;
    int agg_ready = 0, tls_ready = 0, limits_ready = 0;
    if (cs == NULL || agg == NULL || tls == NULL || limits == NULL) {
        fprintf(stderr, "dpm-collector: out of memory\n");
        rc = 1;
        goto out;
    }
    if (o.check != NULL) {
        rc = check_campaigns(o.check, cs);
        goto out;
    }
    if (coll_campaigns_load(o.campaigns, cs, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector: %s\n", err);
        goto out;
    }
    if (coll_agg_init(agg, cs) != 0) {
        fprintf(stderr, "dpm-collector: cannot set up the estimators\n");
        goto out;
    }
    agg_ready = 1;
    tls_ready = 1; /* coll_tls_free is safe after a failed init */
    if ((o.credentials != NULL && coll_auth_load(&auth, o.credentials, err, sizeof(err)) != 0) ||
        coll_tls_init(tls, o.cert, o.key, o.device_ca, err, sizeof(err)) != 0 ||
        coll_store_open(&store, o.db, cs, agg, integrity_mode(o.integrity), err, sizeof(err)) !=
            0) {
        fprintf(stderr, "dpm-collector: %s\n", err);
        goto out;
    }
    if (coll_limits_init(limits, (uint32_t)o.rate, (uint32_t)o.burst,
                         (size_t)o.memory - BASELINE_BYTES) != 0) {
        fprintf(stderr, "dpm-collector: cannot set up the limits\n");
        rc = 1;
        goto out;
    }
    limits_ready = 1;
    if (!o.public_estimates && !has_operator(&auth)) {
        fprintf(stderr, "dpm-collector: note: no credential has the operator role, so nobody "
                        "can read the estimates (give one in --credentials)\n");
    }
    signal(SIGXFSZ, SIG_IGN); /* a full file system fails a commit (500), not the process */
    coll_app_t app = {cs,
                      agg,
                      {store_commit, store_health, store},
                      (size_t)o.max_body,
                      &auth,
                      o.allow_anonymous,
                      o.public_estimates,
                      limits};
    coll_server_config_t cfg = {&app,
                                tls,
                                (int)o.threads,
                                (int)o.per_addr,
                                (uint32_t)o.handshake_ms,
                                (uint32_t)o.idle_ms,
                                (uint32_t)o.request_ms};
    if (coll_server_listen(&srv, &cfg, o.listen, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector: %s\n", err);
        rc = 1;
        goto out;
    }
    signal(SIGPIPE, SIG_IGN);
    g_server = srv;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    uint64_t reports = 0;
    coll_agg_snapshot(agg, -1, NULL, NULL, &reports);
    fprintf(stderr,
            "dpm-collector: listening on %s (port %u), %zu campaign(s), %llu stored "
            "report(s), database %s\n",
            o.listen, coll_server_port(srv), cs->n, (unsigned long long)reports, o.db);
    if (o.ready_file != NULL) {
        FILE *f = fopen(o.ready_file, "w");
        if (f == NULL || fprintf(f, "%u\n", coll_server_port(srv)) < 0 || fclose(f) != 0) {
            fprintf(stderr, "dpm-collector: cannot write %s\n", o.ready_file);
            rc = 1;
            goto out;
        }
    }
    int left = coll_server_run(srv, 5000);
    unsigned long long commits = 0, max_group = 0;
    coll_store_stats(store, &commits, &max_group);
    coll_agg_snapshot(agg, -1, NULL, NULL, &reports);
    fprintf(stderr,
            "dpm-collector: stopped; %llu stored report(s), %llu commits (largest group "
            "%llu requests)%s\n",
            (unsigned long long)reports, commits, max_group,
            left ? ", some connections did not finish" : "");
    if (left > 0) {
        /* Threads still hold the store: exit without tearing it down. Every answered report
         * is already durable; SQLite recovers an interrupted transaction from the WAL. */
        _Exit(0);
    }
    rc = 0;
out:
    coll_store_close(store);
    coll_server_free(srv);
    if (tls_ready) {
        coll_tls_free(tls);
    }
    if (agg_ready) {
        coll_agg_free(agg);
    }
    if (limits_ready) {
        coll_limits_free(limits);
    }
    coll_auth_free(&auth);
    free(limits);
    free(tls);
    free(agg);
    free(cs);
    return rc;
}
