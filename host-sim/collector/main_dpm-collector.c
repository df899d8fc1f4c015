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
#include "collector/campaigns.h"
#include "collector/request.h"
#include "collector/server.h"
#include "collector/store.h"
#include "collector/tls_server.h"
#include "dpm/version.h"

static const char USAGE[] =
    "usage: dpm-collector --listen HOST:PORT --cert FILE --key FILE --campaigns FILE --db FILE\n"
    "                     [--threads N] [--max-body BYTES] [--handshake-timeout-ms MS]\n"
    "                     [--idle-timeout-ms MS] [--request-timeout-ms MS] [--ready-file FILE]\n"
    "       dpm-collector --check-campaigns FILE\n"
    "       dpm-collector --version\n"
    "\n"
    "  --listen      numeric address and port, e.g. 127.0.0.1:8443 ([::1]:8443; port 0: any)\n"
    "  --cert/--key  server certificate chain and private key (PEM or DER)\n"
    "  --campaigns   campaigns file (below); each campaign is validated like a device does\n"
    "  --db          SQLite database (created if missing; WAL, synchronous=FULL)\n"
    "  --threads     most connections served at once, one thread each (default 256)\n"
    "  --max-body    largest request body in bytes (default 1048576; larger: 413)\n"
    "  --*-timeout-ms  TLS handshake (default 10000), idle keep-alive (30000), reading one\n"
    "                request or writing its answer (10000)\n"
    "  --ready-file  write the bound port there once listening (for scripts using port 0)\n"
    "\n"
    "Endpoints: POST /v1/reports (dpm.v1.Batch, application/x-protobuf), GET /v1/campaigns/ID\n"
    "(dpm.v1.Campaign), GET /v1/campaigns/ID/estimate (JSON), GET /healthz.\n"
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
    "  frac_bits = 16          # tuple_ml value grid (default 16, the build's)\n";

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

typedef struct {
    const char *listen, *cert, *key, *campaigns, *db, *ready_file, *check;
    unsigned long long threads, max_body, handshake_ms, idle_ms, request_ms;
} options_t;

static int parse_args(int argc, char **argv, options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->threads = 256;
    o->max_body = 1u << 20;
    o->handshake_ms = 10000;
    o->idle_ms = 30000;
    o->request_ms = 10000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **str = NULL;
        unsigned long long *num = NULL, lo = 1, hi = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(USAGE, stdout);
            exit(0);
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
        } else if (strcmp(a, "--threads") == 0) {
            num = &o->threads, hi = 4096;
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
    coll_store_t *store = NULL;
    coll_server_t *srv = NULL;
    int agg_ready = 0, tls_ready = 0;
    if (cs == NULL || agg == NULL || tls == NULL) {
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
    if (coll_tls_init(tls, o.cert, o.key, err, sizeof(err)) != 0 ||
        coll_store_open(&store, o.db, cs, agg, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector: %s\n", err);
        goto out;
    }
    coll_app_t app = {cs, agg, {store_commit, store}, (size_t)o.max_body};
    coll_server_config_t cfg = {&app,
                                tls,
                                (int)o.threads,
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
    free(tls);
    free(agg);
    free(cs);
    return rc;
}
