/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim: simulate campaigns over millions of devices, plan campaigns, reproduce the papers.
 *
 *   dpm-sim --scenario FILE [--devices N[,N..]] [--runs R] [--seed S] [--threads T]
 *           [--out DIR] [--mode inprocess|exact|network] [--no-plot] [--plot-script PATH]
 *           [--dump-reports FILE] [--quiet] [--campaign NAME]
 *           network mode: --collector HOST:PORT --ca CA.pem [--server-name NAME]
 *                         [--clients C] [--batch B] [--token FILE]
 *                         two-aggregator campaigns: --dap-campaigns FILE --dap-collector-key
 *                         FILE [--dap-task ID] [--dap-time UNIX] [--dap-wait S]
 *   dpm-sim replay --scenario FILE --device I [--run R] [--seed S] [--campaign NAME]
 *                  [--eps E] [--devices N]
 *   dpm-sim plan --mechanism tuple_mr|tuple_ml|roc_hist|roc_hist_groups --error X
 *                --confidence C (--devices K | --eps E) [...]   (`dpm-sim plan --help`,
 *                `dpm-sim plan --mechanism roc_hist[_groups] --help`)
 *   dpm-sim bench [--quick] [--threads T]            JSON lines for make bench
 *   dpm-sim repro --out DIR [--quick] FILE...        paper scenarios + DIR/README.md
 *   dpm-sim campaigns --scenario FILE                the collector's campaigns file
 *   dpm-sim population --scenario FILE --out F.csv [--campaign NAME] [--devices N]
 *                                                    a binormal population as a csv file
 *   dpm-sim check --scenario FILE                    parse only
 *
 * Scenario format: host-sim/scenarios/README.md. Mechanisms: mech.h (the interface), mechs.c (the
 * registry). Modes: session.h, farm.h, netmode.h,
 * netmode_dap.h. Outputs: output.h. Exit status: 0, 1 when a check
 * failed (network counts), 2 on usage, scenario or runtime errors (scenario errors name file and
 * line). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/run/cli.h"
#include "sim/devices/mechs.h"
#include "sim/run/netmode.h"
#include "sim/run/output.h"
#include "sim/plan/plan_tuple.h"
#include "sim/pop/roc_sim.h"
#include "sim/run/session.h"
#include "dpm/version.h"
#include "dpm/expert/report.h"

static const char USAGE[] =
    "usage: dpm-sim --scenario FILE [--devices N[,N...]] [--runs R] [--seed S] [--threads T]\n"
    "               [--out DIR] [--mode inprocess|exact|network] [--no-plot]\n"
    "               [--plot-script PATH] [--dump-reports FILE] [--quiet] [--campaign NAME]\n"
    "               (--campaign: run that campaign of the scenario alone)\n"
    "               network: --collector HOST:PORT --ca CA.pem [--server-name NAME]\n"
    "                        [--clients C] [--batch B] [--token FILE] [--run R]\n"
    "                        (--token: a bearer token, first line of FILE: the collector's\n"
    "                        relay credential for the simulated devices, operator for estimates;\n"
    "                        --run R: run R's devices post period R and its estimate is checked)\n"
    "               two-aggregator campaigns (roc_hist_2agg): --collector is the DAP leader's\n"
    "                        address, --token a collector credential of it, and\n"
    "                        --dap-campaigns FILE --dap-collector-key FILE [--dap-task ID]\n"
    "                        [--dap-time UNIX] [--dap-wait S] (the aggregators' campaigns file\n"
    "                        with the [dap_task]; the collector's key from dpm-collector\n"
    "                        dap-keygen; the reports' time, default now: a leader collects\n"
    "                        each time_precision interval once)\n"
    "       dpm-sim replay --scenario FILE --device I [--run R] [--seed S] [--campaign NAME]\n"
    "                      [--eps E] [--devices N]\n"
    "       dpm-sim plan --mechanism tuple_mr|tuple_ml|roc_hist|roc_hist_groups --error X\n"
    "                    --confidence C (--devices K | --eps E) [--metrics M] [...]\n"
    "       dpm-sim bench [--quick] [--threads T]\n"
    "       dpm-sim repro --out DIR [--quick] [--threads T] SCENARIO...\n"
    "       dpm-sim campaigns --scenario FILE\n"
    "       dpm-sim population --scenario FILE --out F.csv [--campaign NAME] [--devices N]\n"
    "       dpm-sim check --scenario FILE\n"
    "       dpm-sim --version\n"
    "\n"
    "Modes: inprocess (every device runs the real SDK: perturb, encode, decode, aggregate),\n"
    "exact (the aggregate drawn directly, distributed as the sum of the device reports),\n"
    "network (devices post to a running dpm-collector, or a DAP leader, over TLS). Scenario\n"
    "format, with an example per mechanism: host-sim/scenarios/README.md. Outputs in --out:\n"
    "results.json, runs.csv, summary.csv (roc_hist campaigns: roc.csv too) and the plots of\n"
    "host-sim/plot/sim.py (and host-sim/plot/roc.py). A progress line with rate and ETA is\n"
    "drawn on stderr when it is a terminal (not with --quiet). dpm-sim plan --mechanism\n"
    "roc_hist --help (roc_hist_groups --help) plans roc_hist campaigns (with groups).\n";

typedef struct {
    const char *scenario, *out, *plot_script, *dump, *campaign, *eps, *collector;
    uint64_t devices_list[SIM_MAX_LIST];
    uint32_t ndevices;
    uint64_t runs, seed, device, run;
    int runs_set, seed_set, device_set, plot, quiet;
    unsigned threads;
    sim_mode_t mode;
    int mode_set;
    sim_net_opts_t net;
} opts_t;

static int usage_error(const char *what)
{
    fprintf(stderr, "dpm-sim: %s\n%s", what, USAGE);
    return SIM_EXIT_USAGE;
}

static int parse_devices(const char *s, opts_t *o)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    o->ndevices = 0;
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (o->ndevices >= SIM_MAX_LIST || sim_cli_u64(tok, &o->devices_list[o->ndevices]) != 0 ||
            o->devices_list[o->ndevices] < 2) {
            return -1;
        }
        o->ndevices++;
    }
    return o->ndevices > 0 ? 0 : -1;
}

static int parse_collector(const char *s, sim_net_opts_t *n)
{
    static char host[64];
    const char *colon = strrchr(s, ':');
    uint64_t port;
    if (colon == NULL || (size_t)(colon - s) >= sizeof(host) || colon == s ||
        sim_cli_u64(colon + 1, &port) != 0 || port == 0 || port > 65535) {
        return -1;
    }
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    n->host = host;
    n->port = (uint16_t)port;
    return 0;
}

/* One option with a value: returns 1 if `a` was it (value in *v), -1 if its value is missing. */
static int opt(const char *a, const char *name, int argc, char **argv, int *i, const char **v)
{
    if (strcmp(a, name) != 0) {
        return 0;
    }
    if (*i + 1 >= argc) {
        return -1;
    }
    *v = argv[++*i];
    return 1;
}

static int parse_opts(int argc, char **argv, int first, opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->plot = 1;
    o->plot_script = SIM_PLOT_SCRIPT;
    o->threads = sim_cli_default_threads();
    o->net.server_name = "localhost";
    o->net.clients = 8;
    o->net.batch = 100;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        uint64_t u;
        int r;
        if (strcmp(a, "--no-plot") == 0) {
            o->plot = 0;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
        } else if ((r = opt(a, "--scenario", argc, argv, &i, &o->scenario)) != 0 ||
                   (r = opt(a, "--out", argc, argv, &i, &o->out)) != 0 ||
                   (r = opt(a, "--plot-script", argc, argv, &i, &o->plot_script)) != 0 ||
                   (r = opt(a, "--dump-reports", argc, argv, &i, &o->dump)) != 0 ||
                   (r = opt(a, "--campaign", argc, argv, &i, &o->campaign)) != 0 ||
                   (r = opt(a, "--eps", argc, argv, &i, &o->eps)) != 0 ||
                   (r = opt(a, "--ca", argc, argv, &i, &o->net.ca_path)) != 0 ||
                   (r = opt(a, "--server-name", argc, argv, &i, &o->net.server_name)) != 0 ||
                   (r = opt(a, "--token", argc, argv, &i, &o->net.token_path)) != 0 ||
                   (r = opt(a, "--dap-campaigns", argc, argv, &i, &o->net.dap_campaigns)) != 0 ||
                   (r = opt(a, "--dap-task", argc, argv, &i, &o->net.dap_task)) != 0 ||
                   (r = opt(a, "--dap-collector-key", argc, argv, &i, &o->net.dap_collector_key)) !=
                       0) {
            if (r < 0) {
                return usage_error("an option is missing its value");
            }
        } else if ((r = opt(a, "--devices", argc, argv, &i, &v)) != 0) {
            if (r < 0 || parse_devices(v, o) != 0) {
                return usage_error("--devices: a list of counts >= 2, e.g. 1e5,1e6");
            }
        } else if ((r = opt(a, "--runs", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &o->runs) != 0 || o->runs < 1 || o->runs > 10000000) {
                return usage_error("--runs: 1 .. 10^7");
            }
            o->runs_set = 1;
        } else if ((r = opt(a, "--seed", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &o->seed) != 0) {
                return usage_error("--seed: a non-negative integer");
            }
            o->seed_set = 1;
        } else if ((r = opt(a, "--device", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &o->device) != 0) {
                return usage_error("--device: a device index");
            }
            o->device_set = 1;
        } else if ((r = opt(a, "--run", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &o->run) != 0 || o->run > UINT32_MAX) {
                return usage_error("--run: a run index");
            }
        } else if ((r = opt(a, "--threads", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &u) != 0 || u < 1 || u > SIM_MAX_THREADS) {
                return usage_error("--threads: 1 .. 16");
            }
            o->threads = (unsigned)u;
        } else if ((r = opt(a, "--mode", argc, argv, &i, &v)) != 0) {
            if (r < 0) {
                return usage_error("--mode: inprocess, exact or network");
            }
            o->mode = strcmp(v, "inprocess") == 0 ? SIM_MODE_INPROCESS
                      : strcmp(v, "exact") == 0   ? SIM_MODE_EXACT
                      : strcmp(v, "network") == 0 ? SIM_MODE_NETWORK
                                                  : (sim_mode_t)0;
            if (o->mode == 0) {
                return usage_error("--mode: inprocess, exact or network");
            }
            o->mode_set = 1;
        } else if ((r = opt(a, "--collector", argc, argv, &i, &v)) != 0) {
            if (r < 0 || parse_collector(v, &o->net) != 0) {
                return usage_error("--collector: HOST:PORT, e.g. 127.0.0.1:8443");
            }
            o->collector = v;
        } else if ((r = opt(a, "--dap-time", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &o->net.dap_time) != 0 || o->net.dap_time == 0 ||
                o->net.dap_time > (uint64_t)INT64_MAX / 2u) {
                return usage_error("--dap-time: Unix seconds (the reports' time)");
            }
        } else if ((r = opt(a, "--dap-wait", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &u) != 0 || u < 1 || u > 86400) {
                return usage_error("--dap-wait: 1 .. 86400 seconds");
            }
            o->net.dap_wait_s = (uint32_t)u;
        } else if ((r = opt(a, "--clients", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &u) != 0 || u < 1 || u > SIM_NET_MAX_CLIENTS) {
                return usage_error("--clients: 1 .. 256");
            }
            o->net.clients = (unsigned)u;
        } else if ((r = opt(a, "--batch", argc, argv, &i, &v)) != 0) {
            if (r < 0 || sim_cli_u64(v, &u) != 0 || u < 1 || u > SIM_NET_MAX_BATCH) {
                return usage_error("--batch: 1 .. 4096");
            }
            o->net.batch = (uint32_t)u;
        } else {
            char msg[128];
            snprintf(msg, sizeof(msg), "unknown argument '%s'", a);
            return usage_error(msg);
        }
    }
    if (o->scenario == NULL) {
        return usage_error("--scenario FILE is required");
    }
    return 0;
}

/* Load the scenario and apply the command-line overrides. NULL after printing the error. */
static sim_scenario_t *load_scenario(const opts_t *o)
{
    sim_scenario_t *sc = malloc(sizeof(*sc));
    char err[512];
    if (sc == NULL) {
        fprintf(stderr, "dpm-sim: out of memory\n");
        return NULL;
    }
    if (sim_scenario_load(o->scenario, sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim: %s\n", err);
        free(sc);
        return NULL;
    }
    if (o->ndevices > 0) {
        sc->ndevices = o->ndevices;
        memcpy(sc->devices, o->devices_list, o->ndevices * sizeof(uint64_t));
    }
    if (o->runs_set) {
        sc->runs = (uint32_t)o->runs;
    }
    if (o->seed_set) {
        sc->seed = o->seed;
    }
    return sc;
}

/* ---- --dump-reports ----------------------------------------------------------------------- */

typedef struct {
    FILE *f;
    pthread_mutex_t lock;
} dump_t;

static void hex(FILE *f, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%02x", b[i]);
    }
}

/* "CAMPAIGN EPS RUN DEVICE HEX", one line per report (any order: threads interleave). */
static void dump_hook(void *ctx, const sim_cfg_t *cfg, uint32_t run, uint64_t device,
                      const uint8_t *buf, size_t len)
{
    dump_t *d = ctx;
    pthread_mutex_lock(&d->lock);
    fprintf(d->f, "%s %s %u %" PRIu64 " ", cfg->spec->name, cfg->spec->eps_text[cfg->eps_index],
            run, device);
    hex(d->f, buf, len);
    fputc('\n', d->f);
    pthread_mutex_unlock(&d->lock);
}

/* ---- run ---------------------------------------------------------------------------------- */

static int check_network(const sim_scenario_t *sc, const opts_t *o)
{
    if (o->collector == NULL || o->net.ca_path == NULL) {
        fprintf(stderr, "dpm-sim: network mode needs --collector HOST:PORT and --ca FILE\n");
        return -1;
    }
    for (uint32_t c = 0; c < sc->ncampaigns; c++) {
        if (sc->campaign[c].neps != 1 || sc->campaign[c].split_paper) {
            fprintf(stderr,
                    "dpm-sim: network mode: campaign '%s' must have one eps and the "
                    "SDK split (the collector checks every report's fingerprint)\n",
                    sc->campaign[c].name);
            return -1;
        }
    }
    return 0;
}

static int cmd_run(const opts_t *o)
{
    sim_scenario_t *sc = load_scenario(o);
    if (sc == NULL) {
        return SIM_EXIT_USAGE;
    }
    if (o->campaign != NULL) { /* --campaign NAME: run that campaign alone */
        uint32_t c = 0;
        while (c < sc->ncampaigns && strcmp(sc->campaign[c].name, o->campaign) != 0) {
            c++;
        }
        if (c == sc->ncampaigns) {
            fprintf(stderr, "dpm-sim: no campaign '%s' in %s\n", o->campaign, o->scenario);
            free(sc);
            return SIM_EXIT_USAGE;
        }
        sc->campaign[0] = sc->campaign[c];
        sc->ncampaigns = 1;
    }
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = o->mode_set ? o->mode : sc->mode;
    ro.threads = o->threads;
    ro.progress = sim_cli_progress(o->quiet);
    ro.quiet = o->quiet;
    sim_net_opts_t net = o->net;
    net.estimate_dir = o->out;
    net.period = (uint32_t)o->run;
    ro.net = &net;
    if (ro.mode == SIM_MODE_NETWORK &&
        (check_network(sc, o) != 0 || (o->out != NULL && sim_mkdir_p(o->out) != 0))) {
        free(sc);
        return SIM_EXIT_USAGE;
    }
    dump_t dump = {NULL, PTHREAD_MUTEX_INITIALIZER};
    if (o->dump != NULL) {
        if (ro.mode != SIM_MODE_INPROCESS || (dump.f = fopen(o->dump, "w")) == NULL) {
            fprintf(stderr, "dpm-sim: --dump-reports needs inprocess mode and a writable file\n");
            free(sc);
            return SIM_EXIT_USAGE;
        }
        ro.hook = dump_hook;
        ro.hook_ctx = &dump;
    }
    static const char *const mode_names[4] = {"", "inprocess", "exact", "network"};
    if (!o->quiet) {
        printf("dpm-sim %s: mode %s, %zu configurations x %u runs, seed %" PRIu64 ", %u threads\n",
               sc->name, mode_names[ro.mode], sim_session_count(sc), sc->runs, sc->seed,
               ro.threads);
        fflush(stdout);
    }
    sim_session_t s;
    char err[512];
    int status = SIM_EXIT_OK;
    if (sim_session_run(sc, &ro, &s, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim: %s\n", err);
        status = SIM_EXIT_USAGE;
    } else if (o->out != NULL && sim_output_write(o->out, sc, &ro, &s, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim: %s\n", err);
        status = SIM_EXIT_USAGE;
    } else {
        if (!o->quiet) {
            printf("done in %.*f %s%s%s%s\n", s.seconds < 1.0 ? 1 : 2,
                   s.seconds < 1.0 ? 1e3 * s.seconds : s.seconds, s.seconds < 1.0 ? "ms" : "s",
                   o->out ? "; wrote " : "", o->out ? o->out : "",
                   o->out ? "/{results.json,runs.csv,summary.csv}" : "");
        }
        if (o->out != NULL && o->plot && sim_cli_plot(o->plot_script, o->out) < 0) {
            status = SIM_EXIT_USAGE;
        }
        if (s.net_mismatch) {
            fprintf(stderr, "dpm-sim: the collector's estimate differs from ours of the reports it "
                            "acknowledged\n");
            status = status == SIM_EXIT_OK ? SIM_EXIT_CHECK : status;
        }
    }
    if (dump.f != NULL && fclose(dump.f) != 0) {
        status = SIM_EXIT_USAGE;
    }
    sim_session_free(&s);
    free(sc);
    return status;
}

/* ---- replay ------------------------------------------------------------------------------- */

static int find_config(const sim_scenario_t *sc, const opts_t *o, uint32_t *c, uint32_t *e)
{
    *c = 0;
    *e = 0;
    if (o->campaign != NULL) {
        for (*c = 0; *c < sc->ncampaigns && strcmp(sc->campaign[*c].name, o->campaign) != 0;) {
            ++*c;
        }
        if (*c == sc->ncampaigns) {
            fprintf(stderr, "dpm-sim: no campaign '%s' in %s\n", o->campaign, o->scenario);
            return -1;
        }
    }
    if (sc->ncampaigns == 0) {
        fprintf(stderr, "dpm-sim: %s has no campaign\n", o->scenario);
        return -1;
    }
    if (o->eps != NULL) {
        const sim_campaign_spec_t *s = &sc->campaign[*c];
        for (*e = 0; *e < s->neps && strcmp(s->eps_text[*e], o->eps) != 0;) {
            ++*e;
        }
        if (*e == s->neps) {
            fprintf(stderr, "dpm-sim: campaign '%s' has no eps '%s'\n", s->name, o->eps);
            return -1;
        }
    }
    return 0;
}

static void print_replay(const sim_cfg_t *cfg, const sim_block_t *b, const opts_t *o,
                         const dpm_report_t *rep, const uint8_t *buf, size_t len)
{
    const sim_scenario_t *sc = cfg->sc;
    printf("campaign %s (id %u) %s, seed %" PRIu64 ", run %" PRIu64 ", device %" PRIu64 "\n",
           cfg->spec->name, cfg->spec->id, cfg->label, sc->seed, o->run, o->device);
    printf("device: group %s", sc->group[b->group].name);
    if (b->has_conf) {
        printf(", confusion tp=%u fp=%u tn=%u fn=%u", b->conf.tp, b->conf.fp, b->conf.tn,
               b->conf.fn);
    }
    printf("\n");
    if (len == 0) {
        printf("no report: the device does not take part in this campaign\n");
        return;
    }
    if (cfg->m->describe != NULL) {
        cfg->m->describe(cfg, b, rep, stdout);
    }
    printf("eps_q16 %u, params_hash 0x%08x, period %u\nreport_id ", rep->eps, rep->params_hash,
           rep->period);
    hex(stdout, rep->report_id, DPM_REPORT_ID_BYTES);
    printf("\nbytes %zu ", len);
    hex(stdout, buf, len);
    printf("\n");
}

static int cmd_replay(const opts_t *o)
{
    if (!o->device_set) {
        return usage_error("replay needs --device I");
    }
    sim_scenario_t *sc = load_scenario(o);
    uint32_t c, e;
    if (sc == NULL || find_config(sc, o, &c, &e) != 0) {
        free(sc);
        return SIM_EXIT_USAGE;
    }
    sim_pop_t pop;
    sim_cfg_t cfg;
    char err[512];
    int status = SIM_EXIT_USAGE;
    if (sim_pop_build(sc, sc->devices[0], &pop, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim: %s\n", err);
    } else {
        memset(&cfg, 0, sizeof(cfg));
        if (sim_cfg_init(&cfg, sc, c, e, err, sizeof(err)) != 0 ||
            sim_cfg_prepare(&cfg, &pop, o->threads, err, sizeof(err)) != 0) {
            fprintf(stderr, "dpm-sim: %s\n", err);
        } else if (o->device >= pop.devices) {
            fprintf(stderr, "dpm-sim: device %" PRIu64 " out of range (%" PRIu64 " devices)\n",
                    o->device, pop.devices);
        } else {
            dpm_report_t rep;
            uint8_t buf[DPM_REPORT_MAX_BYTES];
            size_t len = 0;
            dpm_status_t st =
                sim_farm_replay(&cfg, &pop, (uint32_t)o->run, o->device, &rep, buf, &len);
            if (st != DPM_OK) {
                fprintf(stderr, "dpm-sim: replay failed: %s\n", dpm_strerror(st));
            } else {
                print_replay(&cfg, sim_pop_find(&pop, o->device, NULL), o, &rep, buf, len);
                status = SIM_EXIT_OK;
            }
        }
        sim_cfg_release(&cfg);
        sim_pop_free(&pop);
    }
    free(sc);
    return status;
}

/* ---- population ------------------------------------------------------------------------------ */

/* A binormal population's devices as a csv file (sim_roc_write_csv), binned by the bins of
 * --campaign (default: the first campaign with bins); every group. */
static int cmd_population(const opts_t *o)
{
    if (o->out == NULL) {
        return usage_error("population needs --out F.csv");
    }
    sim_scenario_t *sc = load_scenario(o);
    uint32_t c = 0, e = 0;
    if (sc == NULL || find_config(sc, o, &c, &e) != 0) {
        free(sc);
        return SIM_EXIT_USAGE;
    }
    for (; o->campaign == NULL && c < sc->ncampaigns && sc->campaign[c].nedges == 0; c++) {
    }
    int status = SIM_EXIT_USAGE;
    sim_pop_t pop;
    sim_roc_model_t *m = malloc(sizeof(*m));
    char err[512];
    int include[SIM_MAX_GROUPS];
    for (uint32_t g = 0; g < SIM_MAX_GROUPS; g++) {
        include[g] = g < sc->ngroups && sc->group[g].scores.set;
    }
    if (sc->data.set || c == sc->ncampaigns || sc->campaign[c].nedges == 0 || m == NULL) {
        fprintf(stderr, "dpm-sim: population: %s\n",
                sc->data.set ? "the population is already a csv file"
                : m == NULL  ? "out of memory"
                             : "no campaign with bins (roc_hist, roc_hist_groups) to bin by");
    } else if (sim_pop_build(sc, sc->devices[0], &pop, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim: %s\n", err);
    } else {
        FILE *f = NULL;
        if (sim_roc_model_init(m, sc, &pop, sc->campaign[c].edges, sc->campaign[c].nedges) != 0) {
            fprintf(stderr, "dpm-sim: population: out of memory\n");
        } else if ((f = fopen(o->out, "w")) == NULL ||
                   sim_roc_write_csv(m, sc, &pop, include, f) != 0) {
            fprintf(stderr, "dpm-sim: population: cannot write %s\n", o->out);
        } else {
            status = SIM_EXIT_OK;
        }
        if (f != NULL && fclose(f) != 0 && status == SIM_EXIT_OK) {
            fprintf(stderr, "dpm-sim: population: cannot write %s\n", o->out);
            status = SIM_EXIT_USAGE;
        }
        sim_roc_model_free(m);
        sim_pop_free(&pop);
    }
    free(m);
    free(sc);
    return status;
}

/* ---- campaigns, check ---------------------------------------------------------------------- */

/* A two-aggregator campaign (roc_hist_2agg) is no collector campaign but a task of the leader
 * and the helper: what its [dap_task] block must say (aggregator/dap_tasks.h), commented out
 * (the collector refuses [dap_task] blocks without --role); dpm-sim's network mode checks the
 * deployed task against it. */
static void dap_task_template(const sim_campaign_spec_t *s)
{
    const uint32_t bins = s->nedges + 1u, length = s->ngroups * 2u * bins;
    const unsigned m = s->max_device_examples;
    printf("\n# campaign '%s' (%s): two aggregators, not a dpm-collector campaign. Its task, in\n"
           "# the campaigns file of `dpm-collector --role leader` and `--role helper` (keys from\n"
           "# dpm-collector dap-keygen; host-sim/aggregator/dap_tasks.h lists every key):\n"
           "# [dap_task]\n# id = <32 random bytes, base64url>\n# vdaf = sumvec\n"
           "# length = %u   (groups %u x 2 x bins %u)\n# max = %u\n# eps = %s\n"
           "# sensitivity = %u   (2 x max_device_examples)\n# min_batch_size = 100\n"
           "# leader = https://LEADER/dap\n# helper = https://HELPER/dap\n"
           "# leader_hpke_config = ...\n# helper_hpke_config = ...\n"
           "# collector_hpke_config = ...\n# verify_key = <file of 64 hex digits>\n",
           s->name, s->mech->name, length, s->ngroups, bins, m, s->eps_text[0], 2u * m);
}

static int cmd_campaigns(const opts_t *o)
{
    sim_scenario_t *sc = load_scenario(o);
    if (sc == NULL) {
        return SIM_EXIT_USAGE;
    }
    printf("# dpm-collector campaigns for scenario %s (dpm-sim campaigns)\n", sc->name);
    int status = SIM_EXIT_OK;
    for (uint32_t c = 0; c < sc->ncampaigns; c++) {
        const sim_campaign_spec_t *s = &sc->campaign[c];
        if (s->neps != 1 || s->split_paper) {
            fprintf(stderr,
                    "dpm-sim: campaign '%s': a collector campaign has one eps and the "
                    "SDK split\n",
                    s->name);
            status = SIM_EXIT_USAGE;
            continue;
        }
        if (s->campaign_mech->sim_only) { /* the two-aggregator mode: not a collector campaign */
            dap_task_template(s);
            continue;
        }
        /* the wire's mechanism: roc_hist_groups is a roc_hist campaign with groups */
        printf("\n[campaign]   # %s\nid = %u\nmechanism = %s\neps = %s\n", s->name, s->id,
               sim_mech_by_id(s->mech->id)->name, s->eps_text[0]);
        if (s->mech->campaign_keys != NULL) {
            s->mech->campaign_keys(sc, s, stdout);
        }
        /* the names the collector shows (campaign_names.h): the scenario's */
        printf("name = %s\n", s->name);
        int wire_groups = strcmp(s->mech->name, "tuple_mr") == 0 ||
                          strcmp(s->mech->name, "tuple_ml") == 0 ||
                          strcmp(s->mech->name, "roc_hist_groups") == 0;
        if (wire_groups && s->ngroups >= 2) {
            printf("group_names = ");
            for (uint32_t j = 0; j < s->ngroups; j++) {
                printf("%s%s", j ? ", " : "", sc->group[s->groups[j]].name);
            }
            printf("\n");
        }
    }
    free(sc);
    return status;
}

static int cmd_check(const opts_t *o)
{
    sim_scenario_t *sc = load_scenario(o);
    if (sc == NULL) {
        return SIM_EXIT_USAGE;
    }
    printf("%s: ok: %u groups, %u campaigns, %u plans, %zu configurations\n", o->scenario,
           sc->ngroups, sc->ncampaigns, sc->nplans, sim_session_count(sc));
    free(sc);
    return SIM_EXIT_OK;
}

int main(int argc, char **argv)
{
    opts_t o;
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(USAGE, stdout);
        printf("\nMechanisms (registered in host-sim/sim/devices/mechs.c):\n");
        for (size_t i = 0; i < sim_mech_count(); i++) {
            printf("  %-9s %s\n", sim_mech_at(i)->name, sim_mech_at(i)->what);
        }
        return SIM_EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("dpm-sim %s\n", dpm_version());
        return SIM_EXIT_OK;
    }
    const char *cmd = argc >= 2 && argv[1][0] != '-' ? argv[1] : "run";
    if (strcmp(cmd, "plan") == 0) {
        return sim_cmd_plan(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "bench") == 0) {
        return sim_cmd_bench(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "repro") == 0) {
        return sim_cmd_repro(argc - 1, argv + 1);
    }
    int first = strcmp(cmd, "run") == 0 && (argc < 2 || argv[1][0] == '-') ? 1 : 2;
    int st = parse_opts(argc, argv, first, &o);
    if (st != 0) {
        return st;
    }
    if (strcmp(cmd, "run") == 0) {
        return cmd_run(&o);
    }
    if (strcmp(cmd, "replay") == 0) {
        return cmd_replay(&o);
    }
    if (strcmp(cmd, "campaigns") == 0) {
        return cmd_campaigns(&o);
    }
    if (strcmp(cmd, "check") == 0) {
        return cmd_check(&o);
    }
    if (strcmp(cmd, "population") == 0) {
        return cmd_population(&o);
    }
    return usage_error("unknown subcommand");
}
