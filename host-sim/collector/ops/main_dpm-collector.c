/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-collector: the TLS report collector. Parses options (command line, --config file),
 * loads the campaigns, opens the store, and serves until SIGINT/SIGTERM (then finishes the
 * requests in progress, commits, and exits 0); or runs a maintenance command (admin.h).
 * Exit status 2: bad usage or configuration (campaigns file, certificate, key, database);
 * 1: a runtime failure. Logs: JSON lines on stderr (log.h). */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/ops/admin.h"
#include "collector/ingest/auth.h"
#include "collector/ingest/campaigns.h"
#include "collector/ops/check_campaigns.h"
#include "collector/ops/config.h"
#include "collector/ingest/counters.h"
#include "collector/dap/dap_service.h"
#include "aggregator/dap_tasks.h"
#include "collector/fedauc/fedauc_service.h"
#include "collector/ops/dap_collect.h"
#include "collector/ops/dap_peer.h"
#include "collector/ingest/limits.h"
#include "collector/ingest/log.h"
#include "collector/ops/reload.h"
#include "collector/api/request.h"
#include "collector/ingest/revoked.h"
#include "collector/net/server.h"
#include "collector/store/store.h"
#include "collector/net/tls_server.h"
#include "dpm/version.h"

static const char USAGE[] =
    "usage: dpm-collector --listen HOST:PORT --cert FILE --key FILE --campaigns FILE --db URL\n"
    "                     [--credentials FILE] [--device-ca FILE] [options]\n"
    "       dpm-collector --config FILE [options]   (options from a file, README)\n"
    "       dpm-collector backup|restore|retention|verify|migrate ...  (maintenance)\n"
    "       dpm-collector --check-campaigns FILE   (each campaign and task, its unit and trust\n"
    "                                           model, and one device's composed eps in all)\n"
    "       dpm-collector --version\n"
    "\n"
    "  --listen      numeric address and port, e.g. 127.0.0.1:8443 ([::1]:8443; port 0: any)\n"
    "  --cert/--key  server certificate chain and private key (PEM or DER)\n"
    "  --campaigns   campaigns file (below); each campaign is validated like a device does\n"
    "  --db          sqlite:PATH or PATH: SQLite (created if missing; WAL, synchronous=FULL;\n"
    "                one collector per file); postgresql://[user@]host[:port]/dbname[?...]:\n"
    "                PostgreSQL shared by any number of collectors (libpq URL)\n"
    "  --instance ID this collector's name among those sharing a database: its rows of the\n"
    "                stored sums (default HOSTNAME:PORT)\n"
    "  --log-level   debug|info|warn|error (default info; debug logs every request)\n"
    "Who may do what (devices must authenticate unless --allow-anonymous-devices):\n"
    "  --credentials FILE   bearer tokens, stored as SHA-256: lines 'NAME ROLES SHA256HEX',\n"
    "                ROLES a comma list of device, relay=N (posts for N devices), operator\n"
    "                (and cert=CN: the token is that certificate's device, one identity)\n"
    "  --device-ca FILE     CA of device client certificates (device identity: the CN)\n"
    "  --revoked FILE       deny list, reread when it changes: certificate SHA-256\n"
    "                fingerprints (openssl x509 -fingerprint -sha256) and identities\n"
    "                cert:CN / token:NAME, one a line (403 'revoked')\n"
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
    "  --integrity-check full|quick|off   SQLite at start-up (default full: integrity_check)\n"
    "  --ready-file  write the bound port there once listening (for scripts using port 0)\n"
    "  --series-seconds N  the console's ingestion chart: one point per N seconds (default\n"
    "                60, 1 .. 3600; the newest 1440 points kept)\n"
    "\n"
    "SIGHUP rereads the credentials, certificates and campaigns (names, new ones; README).\n"
    "Endpoints: POST /v1/reports (dpm.v1.Batch, application/x-protobuf; device credential),\n"
    "GET /v1/campaigns/ID (dpm.v1.Campaign), GET /v1/campaigns/ID/estimate[?period=P |\n"
    "?from=A&to=B][&confidence=C] (JSON; operator), GET /metrics (Prometheus; operator),\n"
    "GET /healthz (503 when storage fails). The web console: https://HOST:PORT/console/\n"
    "(operator; the token as the password of the browser's sign-in, any user name), and the\n"
    "JSON it reads: GET /v1/campaigns, /v1/campaigns/ID/info, /v1/campaigns/ID/periods,\n"
    "/v1/ingestion (README, \"The console\").\n"
    "\n"
    "Campaigns file: '#' comments; one block per campaign:\n"
    "  [campaign]\n"
    "  id = 1                  # required, unique, >= 1\n"
    "  name = checkout model   # optional label (estimates, console); group_names = a, b, ...\n"
    "                          #   one per group (campaign_names.h)\n"
    "  mechanism = tuple_mr    # required: tuple_mr | tuple_ml | roc_hist | dpauc |\n"
    "                          #   ustat_bins | ustat_tree (these take no groups, metrics)\n"
    "  eps = 1                 # required: decimal ε of one report\n"
    "  budget = 1              # ε per device and period (default: eps)\n"
    "  period_seconds = 86400  # default 86400\n"
    "  groups = 4              # required: 2 .. 16\n"
    "  metrics = tpr           # required: comma-separated tpr, fpr, accuracy, precision\n"
    "  frac_bits = 16          # tuple_ml value grid (default 16, the build's)\n"
    "  bins = 10               # roc_hist: score bins (or edges = 0.2, 0.5, ...)\n"
    "  groups = 4              # roc_hist (optional): per-group AUC; group_eps = ε of the\n"
    "                          #   group's GRR (default eps / 2); groups x (bins + 1) x\n"
    "                          #   (2 bins + 1) <= 8224\n"
    "  max_examples = 100      # roc_hist, dpauc: most examples per device (default 100)\n"
    "  thresholds = 25         # dpauc: N linspace thresholds (or 0.1, 0.5, 0.9, ...)\n"
    "  calibration = published # dpauc: published | tight\n"
    "  k = 16                  # ustat_bins: bins; kernel = auc | auc_private_label | kendall\n"
    "  depth = 8               # ustat_tree: 1 .. 10; grr_levels = 0 .. depth (default 0)\n"
    "  device_quota = 1        # reports per device credential and period (default 1)\n"
    "  start = 2025-12-01T00:00:00Z  # period 0 begins (default: first seen by this database)\n"
    "  clock_slack_seconds = 300     # window widened both ways (default 300)\n"
    "  late_seconds = 86400    # accepted this long after the period ends (default: a period)\n"
    "  FedAUC (mechanism = fedauc_rr | fedauc_lap; no groups or metrics): score_bits = 16,\n"
    "  variant = local | global | orthogonal | adaptive, p_share = 0.5 (fedauc_lap), and the\n"
    "  upload phase: upload_seconds = N (default half the period), upload_count = N,\n"
    "  min_uploaders = 10 (ranks withheld below it), max_examples = 100 (scores per upload).\n"
    "  POST /v1/fedauc/uploads (dpm.v1.FedaucUpload), GET /v1/fedauc/ID/ranks/TOKEN [device].\n"
    "\n"
    "Two aggregators (DAP, central DP; the collector's README, \"Two aggregators\"):\n"
    "  --role leader|helper   serve the campaigns file's [dap_task] blocks under /dap\n"
    "                (aggregator/dap_tasks.h lists their keys)\n"
    "  --dap-hpke-key FILE    this aggregator's HPKE key (dpm-collector dap-keygen --out FILE)\n"
    "  --dap-helper-token FILE, --dap-helper-ca FILE   leader: the bearer token it presents to\n"
    "                the helper, and the CA of the helper's certificate\n"
    "  --dap-job-size N       reports per aggregation job (default 100)\n"
    "  --dap-stale-seconds N  an unanswered job is sent again after N s (default 60)\n"
    "  --dap-drivers N        leader: job driver threads, 1..16 (default 2: the leader prepares\n"
    "                one job while the helper verifies another)\n"
    "  credentials: role aggregator (the helper's list: the leader's token), collector (the\n"
    "  leader's list: who may collect)\n"
    "       dpm-collector dap-keygen --out FILE [--config-id N] [--aead A]   a new HPKE key\n"
    "       dpm-collector dap-collect --campaigns FILE --collector-key FILE --token-file FILE\n"
    "           --ca FILE --start UNIX --duration S   a batch's sums and their intervals\n";

static coll_server_t *g_server; /* for the signal handler only */
static coll_reload_t *g_reload; /* for the SIGHUP handler only */

static void on_signal(int sig)
{
    if (sig == SIGHUP) {
        coll_reload_request(g_reload);
    } else if (g_server != NULL) {
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

/* Each request of a DAP leader to its helper: well inside the store's 10 s busy timeout, which
 * a collection holds while it asks (dap_leader.h). */
#define DAP_PEER_TIMEOUT_MS 5000u

/* The part of --memory-limit that is not budgeted to connections and requests: SQLite's page
 * cache (64 MiB), the binary and libraries. */
#define BASELINE_BYTES ((size_t)96 << 20)

typedef struct {
    const char *listen, *cert, *key, *campaigns, *db, *ready_file, *check, *credentials, *device_ca,
        *revoked, *integrity, *instance, *log_level, *role, *dap_key, *dap_token, *dap_ca;
    unsigned long long threads, per_addr, rate, burst, memory, max_body, handshake_ms, idle_ms,
        request_ms, series_seconds, dap_job_size, dap_stale_s, dap_drivers;
    int allow_anonymous, public_estimates;
} options_t;

/* Every option, named once: for the command line (--NAME) and the configuration file (NAME). A
 * flag sets an int of options_t, a string option a pointer, a number one in [lo, hi]. */
typedef enum { OPT_FLAG, OPT_STR, OPT_NUM } opt_kind_t;
typedef struct {
    const char *name;
    opt_kind_t kind;
    size_t at; /* offsetof the field in options_t */
    unsigned long long lo, hi;
} option_t;

static const option_t OPTS[] = {
    {"allow-anonymous-devices", OPT_FLAG, offsetof(options_t, allow_anonymous), 0, 0},
    {"public-estimates", OPT_FLAG, offsetof(options_t, public_estimates), 0, 0},
    {"credentials", OPT_STR, offsetof(options_t, credentials), 0, 0},
    {"device-ca", OPT_STR, offsetof(options_t, device_ca), 0, 0},
    {"revoked", OPT_STR, offsetof(options_t, revoked), 0, 0},
    {"integrity-check", OPT_STR, offsetof(options_t, integrity), 0, 0},
    {"instance", OPT_STR, offsetof(options_t, instance), 0, 0},
    {"log-level", OPT_STR, offsetof(options_t, log_level), 0, 0},
    {"max-conns-per-addr", OPT_NUM, offsetof(options_t, per_addr), 0, 100000},
    {"rate-limit", OPT_NUM, offsetof(options_t, rate), 0, 1000000},
    {"rate-burst", OPT_NUM, offsetof(options_t, burst), 1, 1000000},
    {"memory-limit", OPT_NUM, offsetof(options_t, memory), 128ull << 20, 1ull << 40},
    {"listen", OPT_STR, offsetof(options_t, listen), 0, 0},
    {"cert", OPT_STR, offsetof(options_t, cert), 0, 0},
    {"key", OPT_STR, offsetof(options_t, key), 0, 0},
    {"campaigns", OPT_STR, offsetof(options_t, campaigns), 0, 0},
    {"db", OPT_STR, offsetof(options_t, db), 0, 0},
    {"ready-file", OPT_STR, offsetof(options_t, ready_file), 0, 0},
    {"check-campaigns", OPT_STR, offsetof(options_t, check), 0, 0},
    {"threads", OPT_NUM, offsetof(options_t, threads), 1, 16384},
    {"max-conns", OPT_NUM, offsetof(options_t, threads), 1, 16384},
    {"max-body", OPT_NUM, offsetof(options_t, max_body), 1, 1ull << 30},
    {"handshake-timeout-ms", OPT_NUM, offsetof(options_t, handshake_ms), 10, 3600000},
    {"idle-timeout-ms", OPT_NUM, offsetof(options_t, idle_ms), 10, 3600000},
    {"series-seconds", OPT_NUM, offsetof(options_t, series_seconds), 1, 3600},
    {"request-timeout-ms", OPT_NUM, offsetof(options_t, request_ms), 10, 3600000},
    {"role", OPT_STR, offsetof(options_t, role), 0, 0},
    {"dap-hpke-key", OPT_STR, offsetof(options_t, dap_key), 0, 0},
    {"dap-helper-token", OPT_STR, offsetof(options_t, dap_token), 0, 0},
    {"dap-helper-ca", OPT_STR, offsetof(options_t, dap_ca), 0, 0},
    {"dap-job-size", OPT_NUM, offsetof(options_t, dap_job_size), 1, 100000},
    {"dap-stale-seconds", OPT_NUM, offsetof(options_t, dap_stale_s), 1, 86400},
    {"dap-drivers", OPT_NUM, offsetof(options_t, dap_drivers), 1, DAP_MAX_DRIVERS},
};
#define NOPTS (sizeof(OPTS) / sizeof(OPTS[0]))

static const option_t *find_option(const char *a)
{
    for (size_t i = 0; strncmp(a, "--", 2) == 0 && i < NOPTS; i++) {
        if (strcmp(a + 2, OPTS[i].name) == 0) {
            return &OPTS[i];
        }
    }
    return NULL;
}

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
    o->series_seconds = COLL_SERIES_DEFAULT_SECONDS;
    o->integrity = "full";
    o->log_level = "info";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(USAGE, stdout);
            exit(0);
        }
        const option_t *opt = find_option(a);
        if (opt == NULL) {
            fprintf(stderr, "dpm-collector: unknown option '%s'\n%s", a, USAGE);
            return -1;
        }
        char *field = (char *)o + opt->at;
        if (opt->kind == OPT_FLAG) {
            *(int *)(void *)field = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "dpm-collector: %s needs a value\n", a);
            return -1;
        }
        if (opt->kind == OPT_STR) {
            *(const char **)(void *)field = v;
        } else if (parse_size(v, opt->lo, opt->hi, (unsigned long long *)(void *)field) != 0) {
            fprintf(stderr, "dpm-collector: %s wants an integer in [%llu, %llu], got '%s'\n", a,
                    opt->lo, opt->hi, v);
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
    coll_log_level_t level;
    if (coll_log_parse_level(o->log_level, &level) != 0) {
        fprintf(stderr, "dpm-collector: --log-level wants debug, info, warn or error\n");
        return -1;
    }
    const char *target = NULL;
    if (coll_store_backend_name(o->db, &target) == NULL) {
        fprintf(stderr,
                "dpm-collector: --db wants sqlite:PATH, a file name, or "
                "postgresql://[user@]host/dbname (got '%s')\n",
                o->db);
        return -1;
    }
    if (o->instance != NULL && (o->instance[0] == '\0' || strlen(o->instance) > COLL_SHARD_MAX)) {
        fprintf(stderr, "dpm-collector: --instance wants 1 to %d characters\n", COLL_SHARD_MAX);
        return -1;
    }
    if (strcmp(o->integrity, "full") != 0 && strcmp(o->integrity, "quick") != 0 &&
        strcmp(o->integrity, "off") != 0) {
        fprintf(stderr, "dpm-collector: --integrity-check wants full, quick or off\n");
        return -1;
    }
    if (o->role != NULL && strcmp(o->role, "leader") != 0 && strcmp(o->role, "helper") != 0) {
        fprintf(stderr, "dpm-collector: --role wants leader or helper (DAP, two aggregators), "
                        "or no --role for the single collector\n");
        return -1;
    }
    if (o->role == NULL && (o->dap_key || o->dap_token || o->dap_ca)) {
        fprintf(stderr, "dpm-collector: the --dap-* options need --role leader or helper\n");
        return -1;
    }
    if (o->role != NULL && strcmp(o->role, "leader") == 0 && (!o->dap_token || !o->dap_ca)) {
        fprintf(stderr, "dpm-collector: --role leader needs --dap-helper-token FILE (the bearer "
                        "token it presents to the helper) and --dap-helper-ca FILE (the CA of "
                        "the helper's certificate)\n");
        return -1;
    }
    if (o->role != NULL && !o->credentials) {
        fprintf(stderr,
                "dpm-collector: --role %s needs --credentials: the %s's token (role %s) "
                "is checked there\n",
                o->role, strcmp(o->role, "leader") == 0 ? "collector" : "leader",
                strcmp(o->role, "leader") == 0 ? "collector" : "aggregator");
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

static int store_commit(void *ctx, coll_batch_t *b)
{
    return coll_store_commit(ctx, b);
}

static int store_health(void *ctx, char *reason, size_t cap)
{
    return coll_store_health(ctx, reason, cap);
}

static int store_read(void *ctx, int ci, uint32_t from, uint32_t to, coll_campaign_state_t *out,
                      coll_totals_t *totals, char *err, size_t cap)
{
    return coll_store_read(ctx, ci, from, to, out, totals, err, cap);
}

static int store_set_campaigns(void *ctx, coll_campaigns_t *cs, size_t added, char *err, size_t cap)
{
    return coll_store_set_campaigns(ctx, cs, added, err, cap);
}

/* The --db value for the log: a PostgreSQL URL without its password. */
static void redact(const char *url, char *out, size_t cap)
{
    snprintf(out, cap, "%s", url);
    char *scheme = strstr(out, "://");
    char *at = scheme != NULL ? strchr(scheme + 3, '@') : NULL;
    char *colon = scheme != NULL ? strchr(scheme + 3, ':') : NULL;
    if (at != NULL && colon != NULL && colon < at) {
        memmove(colon + 4, at, strlen(at) + 1);
        memcpy(colon, ":***", 4);
    }
    char *pw = strstr(out, "password=");
    if (pw != NULL) {
        char *end = pw + 9 + strcspn(pw + 9, "& ");
        memmove(pw + 12, end, strlen(end) + 1);
        memcpy(pw + 9, "***", 3);
    }
}

/* Default instance id: HOSTNAME:PORT (the port actually bound). */
static void default_instance(char *out, size_t cap, unsigned port)
{
    char host[64] = "localhost";
    if (gethostname(host, sizeof(host)) != 0) {
        snprintf(host, sizeof(host), "localhost");
    }
    host[sizeof(host) - 1] = '\0';
    snprintf(out, cap, "%s:%u", host, port);
}

static void log_campaigns(const coll_campaigns_t *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        const coll_campaign_t *c = &cs->c[i];
        const dpm_campaign_t *cp = &c->mech.campaign;
        coll_log(COLL_LOG_INFO, "campaign",
                 "\"id\": %u, \"mechanism\": \"%s\", \"eps\": %.6f, \"eps_implemented\": %.6f, "
                 "\"groups\": %u, \"metrics\": %u, \"period_seconds\": %u, \"start\": %lld, "
                 "\"device_quota\": %u, \"fingerprint\": \"%08x\"",
                 cp->id, coll_mechanism_name(cp->mechanism), cp->eps.q16 / 65536.0,
                 c->mech.eps_implemented / 65536.0, cp->groups, cp->nmetrics, cp->period_seconds,
                 (long long)c->opts.start, c->opts.device_quota, c->mech.params_hash);
    }
}

int main(int argc, char **argv)
{
    options_t o;
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("dpm-collector %s\n", dpm_version());
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "dap-keygen") == 0) {
        return dap_keygen_main(argc, argv);
    }
    if (argc >= 2 && strcmp(argv[1], "dap-collect") == 0) {
        return coll_dap_collect_main(argc, argv);
    }
    if (coll_admin_is_command(argc, argv)) {
        return coll_admin_main(argc, argv);
    }
    /* --config FILE: its options first, the command line's after (they override) */
    int cargc = 0;
    char **cargv = NULL;
    const char *flags[NOPTS + 1], *values[NOPTS + 1];
    size_t nflags = 0, nvalues = 0;
    for (size_t i = 0; i < NOPTS; i++) {
        if (OPTS[i].kind == OPT_FLAG) {
            flags[nflags++] = OPTS[i].name;
        } else {
            values[nvalues++] = OPTS[i].name;
        }
    }
    flags[nflags] = values[nvalues] = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--config") == 0) {
            char err[512];
            if (coll_config_argv(argv[i + 1], argc, argv, flags, values, &cargc, &cargv, err,
                                 sizeof(err)) != 0) {
                fprintf(stderr, "dpm-collector: %s\n", err);
                return 2;
            }
            argc = cargc;
            argv = cargv;
            break;
        }
    }
    if (parse_args(argc, argv, &o) != 0) {
        return 2;
    }
    if (o.check == NULL) {
        coll_log_level_t level = COLL_LOG_INFO;
        coll_log_parse_level(o.log_level, &level);
        coll_log_init(level, stderr);
    }
    int rc = 2;
    char err[512], dbname[512], instance[COLL_SHARD_MAX + 1];
    coll_campaigns_t *cs = calloc(1, sizeof(*cs));
    coll_tls_t *tls = calloc(1, sizeof(*tls));
    coll_limits_t *limits = calloc(1, sizeof(*limits));
    coll_counters_t *counters = calloc(1, sizeof(*counters));
    coll_auth_t auth = {0, NULL};
    coll_store_t *store = NULL;
    coll_fedauc_t *fedauc = NULL;
    dap_service_t *dap = NULL;
    coll_dap_peer_t peer;
    int peer_ready = 0;
    coll_revoked_t *revoked = NULL;
    coll_server_t *srv = NULL;
    int tls_ready = 0, limits_ready = 0, counters_ready = 0;
    if (cs == NULL || tls == NULL || limits == NULL || counters == NULL) {
        fprintf(stderr, "dpm-collector: out of memory\n");
        rc = 1;
        goto out;
    }
    if (o.check != NULL) {
        rc = coll_check_campaigns(o.check, cs);
        goto out;
    }
    redact(o.db, dbname, sizeof(dbname));
    if (coll_counters_init(counters) != 0) {
        rc = 1;
        goto out;
    }
    counters_ready = 1;
    if (coll_series_init(&counters->series, (uint32_t)o.series_seconds, (int64_t)time(NULL)) != 0) {
        rc = 1;
        goto out;
    }
    if (coll_campaigns_load(o.campaigns, cs, err, sizeof(err)) != 0) {
        coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": %s", coll_log_str(err));
        goto out;
    }
    tls_ready = 1; /* coll_tls_free is safe after a failed init */
    if ((o.credentials != NULL && coll_auth_load(&auth, o.credentials, err, sizeof(err)) != 0) ||
        (o.revoked != NULL && coll_revoked_open(&revoked, o.revoked, err, sizeof(err)) != 0) ||
        coll_tls_init(tls, o.cert, o.key, o.device_ca, err, sizeof(err)) != 0) {
        coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": %s", coll_log_str(err));
        goto out;
    }
    if (coll_limits_init(limits, (uint32_t)o.rate, (uint32_t)o.burst,
                         (size_t)o.memory - BASELINE_BYTES) != 0) {
        coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": \"cannot set up the limits\"");
        rc = 1;
        goto out;
    }
    limits_ready = 1;
    if (!o.public_estimates && !has_operator(&auth)) {
        coll_log(COLL_LOG_WARN, "no_operator",
                 "\"note\": \"no credential has the operator role, so nobody can read the "
                 "estimates (give one in --credentials)\"");
    }
    signal(SIGXFSZ, SIG_IGN); /* a full file system fails a commit (500), not the process */
    coll_app_t app = {cs,
                      {store_commit, store_health, store_read, NULL, store_set_campaigns},
                      (size_t)o.max_body,
                      &auth,
                      o.allow_anonymous,
                      o.public_estimates,
                      limits,
                      counters,
                      NULL,
                      revoked,
                      NULL};
    coll_server_config_t cfg = {&app,
                                tls,
                                (int)o.threads,
                                (int)o.per_addr,
                                (uint32_t)o.handshake_ms,
                                (uint32_t)o.idle_ms,
                                (uint32_t)o.request_ms};
    /* Listen first (nothing is accepted until the server runs): the default instance id
     * names the port actually bound. */
    if (coll_server_listen(&srv, &cfg, o.listen, err, sizeof(err)) != 0) {
        coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": %s", coll_log_str(err));
        rc = 1;
        goto out;
    }
    if (o.instance != NULL) {
        snprintf(instance, sizeof(instance), "%s", o.instance);
    } else {
        default_instance(instance, sizeof(instance), coll_server_port(srv));
    }
    coll_store_options_t so = {integrity_mode(o.integrity), instance, counters};
    if (coll_store_open(&store, o.db, cs, &so, err, sizeof(err)) != 0) {
        coll_log(COLL_LOG_ERROR, "start_failed", "\"db\": %s, \"error\": %s", coll_log_str(dbname),
                 coll_log_str(err));
        goto out;
    }
    app.sink.ctx = store;
    if (coll_fedauc_open(&fedauc, o.db, cs, err, sizeof(err)) != 0) {
        coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": %s", coll_log_str(err));
        goto out;
    }
    coll_fedauc_set_limits(fedauc, limits); /* rankings count against the memory budget */
    app.fedauc = fedauc;
    if (o.role != NULL) {
        const int leader = strcmp(o.role, "leader") == 0;
        if (leader && coll_dap_peer_init(&peer, o.dap_token, o.dap_ca, DAP_PEER_TIMEOUT_MS, err,
                                         sizeof(err)) != 0) {
            coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": %s", coll_log_str(err));
            goto out;
        }
        peer_ready = leader;
        dap_service_options_t dso = {leader ? DAP_ROLE_LEADER : DAP_ROLE_HELPER,
                                     o.db,
                                     o.campaigns,
                                     o.dap_key,
                                     leader ? coll_dap_peer_post : NULL,
                                     &peer,
                                     (uint32_t)o.dap_job_size,
                                     0,
                                     (uint32_t)o.dap_stale_s,
                                     DAP_PEER_TIMEOUT_MS,
                                     (uint32_t)o.dap_drivers};
        if (dap_service_open(&dap, &dso, err, sizeof(err)) != 0 ||
            dap_service_start(dap, err, sizeof(err)) != 0) {
            coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": %s", coll_log_str(err));
            goto out;
        }
        app.dap = dap;
        coll_log(COLL_LOG_INFO, "dap", "\"role\": %s, \"tasks\": %zu", coll_log_str(o.role),
                 dap_service_tasks(dap));
    } else if (cs->dap_tasks > 0) {
        coll_log(COLL_LOG_WARN, "dap_tasks_ignored",
                 "\"tasks\": %zu, \"note\": \"the campaigns file has [dap_task] blocks: "
                 "start a leader and a helper with --role to serve them\"",
                 cs->dap_tasks);
    }
    if (cs->n == 0 && o.role == NULL) {
        coll_log(COLL_LOG_ERROR, "start_failed",
                 "\"error\": \"the campaigns file has no [campaign] block, only [dap_task]: "
                 "start with --role leader or --role helper\"");
        goto out;
    }
    log_campaigns(cs);
    signal(SIGPIPE, SIG_IGN);
    g_server = srv;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    coll_reload_files_t rf = {o.campaigns, o.credentials, o.cert, o.key, o.device_ca};
    if (coll_reload_start(&g_reload, &rf, &app, srv) != 0) {
        coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": \"cannot start the reload thread\"");
        rc = 1;
        goto out;
    }
    sigaction(SIGHUP, &sa, NULL); /* reload.h: credentials, certificates, campaigns */

    coll_totals_t totals;
    memset(&totals, 0, sizeof(totals));
    coll_store_read(store, -1, 0, 0, NULL, &totals, err, sizeof(err));
    const char *target = NULL;
    coll_log(COLL_LOG_INFO, "start",
             "\"version\": \"%s\", \"listen\": %s, \"port\": %u, \"campaigns\": %zu, "
             "\"reports\": %llu, \"backend\": \"%s\", \"db\": %s, \"instance\": %s, "
             "\"pid\": %ld",
             dpm_version(), coll_log_str(o.listen), coll_server_port(srv), cs->n,
             (unsigned long long)totals.reports, coll_store_backend_name(o.db, &target),
             coll_log_str(dbname), coll_log_str(instance), (long)getpid());
    if (o.ready_file != NULL) {
        FILE *f = fopen(o.ready_file, "w");
        if (f == NULL || fprintf(f, "%u\n", coll_server_port(srv)) < 0 || fclose(f) != 0) {
            coll_log(COLL_LOG_ERROR, "start_failed", "\"error\": \"cannot write %s\"",
                     o.ready_file);
            rc = 1;
            goto out;
        }
    }
    int left = coll_server_run(srv, 5000);
    unsigned long long commits = 0, max_group = 0;
    coll_store_stats(store, &commits, &max_group);
    coll_counters_t snap;
    coll_counters_snapshot(counters, &snap);
    coll_log(COLL_LOG_INFO, "stop",
             "\"accepted\": %llu, \"duplicates\": %llu, \"commits\": %llu, \"largest_group\": "
             "%llu, \"unfinished_connections\": %d",
             (unsigned long long)snap.reports_accepted, (unsigned long long)snap.reports_duplicate,
             commits, max_group, left);
    if (left > 0) {
        /* Threads still hold the store: exit without tearing it down. Every answered report
         * is already durable; the database recovers an interrupted transaction. */
        _Exit(0);
    }
    rc = 0;
out:
    coll_reload_stop(g_reload); /* before what it replaced is freed */
    g_reload = NULL;
    dap_service_close(dap); /* its job driver first: it uses the peer */
    if (peer_ready) {
        coll_dap_peer_free(&peer);
    }
    coll_fedauc_close(fedauc);
    coll_store_close(store);
    coll_server_free(srv);
    if (tls_ready) {
        coll_tls_free(tls);
    }
    if (limits_ready) {
        coll_limits_free(limits);
    }
    if (counters_ready) {
        coll_counters_free(counters);
    }
    coll_auth_free(&auth);
    coll_revoked_free(revoked);
    free(counters);
    free(limits);
    free(tls);
    free(cs);
    if (cargv != NULL) {
        coll_config_free(cargc, cargv);
    }
    return rc;
}
