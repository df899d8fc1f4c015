/* SPDX-License-Identifier: Apache-2.0 */
/* libdpmsim.so's calls (dpmsim.h): dpm-sim's run and plan, reached without its command line. */
#include "sim/lib/dpmsim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/version.h"
#include "sim/devices/mechs.h"
#include "sim/plan/plan_tuple.h"
#include "sim/run/cli.h"
#include "sim/run/output.h"
#include "sim/run/session.h"

#if DPMSIM_MAX_DEVICES != SIM_MAX_LIST
#error "dpmsim_run_opts_t's devices sweep must hold what a scenario's does (SIM_MAX_LIST)"
#endif

int dpmsim_api_version(void)
{
    return DPMSIM_API_VERSION;
}

const char *dpmsim_version(void)
{
    return dpm_version();
}

/* The overrides dpm-sim's command line would accept, with its messages. */
static int check_opts(const dpmsim_run_opts_t *o, char *err, size_t errcap)
{
    if (o->mode < 0 || o->mode > SIM_MODE_EXACT) {
        snprintf(err, errcap,
                 "mode %d: 1 inprocess or 2 exact (network mode runs from the "
                 "dpm-sim command: it needs a collector)",
                 o->mode);
        return -1;
    }
    if (o->threads > SIM_MAX_THREADS) {
        snprintf(err, errcap, "threads: 1 .. %u", (unsigned)SIM_MAX_THREADS);
        return -1;
    }
    if (o->runs > 10000000u) {
        snprintf(err, errcap, "runs: 1 .. 10^7");
        return -1;
    }
    if (o->ndevices > DPMSIM_MAX_DEVICES) {
        snprintf(err, errcap, "devices: at most %d sizes in a sweep", DPMSIM_MAX_DEVICES);
        return -1;
    }
    for (uint32_t i = 0; i < o->ndevices; i++) {
        if (o->devices[i] < 2) {
            snprintf(err, errcap, "devices: %llu; a campaign needs at least 2 devices",
                     (unsigned long long)o->devices[i]);
            return -1;
        }
    }
    return 0;
}

int dpmsim_run(const char *scenario, const char *out_dir, const dpmsim_run_opts_t *opts, char *err,
               size_t errcap)
{
    dpmsim_run_opts_t none;
    memset(&none, 0, sizeof(none));
    const dpmsim_run_opts_t *o = opts != NULL ? opts : &none;
    if (err == NULL || errcap == 0) {
        return DPMSIM_USAGE;
    }
    err[0] = '\0';
    if (scenario == NULL || out_dir == NULL) {
        snprintf(err, errcap, "a scenario path and an output directory are needed");
        return DPMSIM_USAGE;
    }
    if (check_opts(o, err, errcap) != 0) {
        return DPMSIM_USAGE;
    }
    sim_scenario_t *sc = malloc(sizeof(*sc));
    if (sc == NULL) {
        snprintf(err, errcap, "out of memory");
        return DPMSIM_USAGE;
    }
    if (sim_scenario_load(scenario, sc, err, errcap) != 0) {
        free(sc);
        return DPMSIM_USAGE;
    }
    if (o->ndevices > 0) {
        sc->ndevices = o->ndevices;
        memcpy(sc->devices, o->devices, o->ndevices * sizeof(uint64_t));
    }
    if (o->runs > 0) {
        sc->runs = o->runs;
    }
    if (o->seed_set) {
        sc->seed = o->seed;
    }
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = o->mode != 0 ? (sim_mode_t)o->mode : sc->mode;
    ro.threads = o->threads != 0 ? o->threads : sim_cli_default_threads();
    ro.quiet = 1;
    if (ro.mode == SIM_MODE_NETWORK) {
        snprintf(err, errcap,
                 "%s asks for network mode, which runs from the dpm-sim command (it "
                 "needs a collector): pass mode inprocess or exact",
                 scenario);
        free(sc);
        return DPMSIM_USAGE;
    }
    sim_session_t s;
    int status = DPMSIM_OK;
    if (sim_session_run(sc, &ro, &s, err, errcap) != 0 ||
        sim_output_write(out_dir, sc, &ro, &s, err, errcap) != 0) {
        status = DPMSIM_USAGE;
    }
    sim_session_free(&s);
    free(sc);
    return status;
}

int dpmsim_plan(int argc, const char *const *argv)
{
    /* The planners read argv as dpm-sim's main hands it to them: "plan" first. */
    char *args[64];
    if (argc < 0 || argc > 62 || (argc > 0 && argv == NULL)) {
        fprintf(stderr, "dpm-sim plan: at most 62 arguments\n");
        return DPMSIM_USAGE;
    }
    args[0] = (char *)"plan";
    for (int i = 0; i < argc; i++) {
        if (argv[i] == NULL) {
            fprintf(stderr, "dpm-sim plan: argument %d is missing\n", i + 1);
            return DPMSIM_USAGE;
        }
        args[i + 1] = (char *)argv[i];
    }
    args[argc + 1] = NULL;
    return sim_cmd_plan(argc + 1, args);
}
