/* SPDX-License-Identifier: Apache-2.0 */
/* What the planners share (see plan_check.h). */
#include "sim/plan_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/prob.h"
#include "sim/cli.h"
#include "sim/progress.h"

void sim_plan_cli_init(sim_plan_cli_t *o)
{
    memset(o, 0, sizeof(*o));
    o->runs = SIM_PLAN_DEFAULT_RUNS;
    o->seed = 1;
    o->check = 1;
    o->error = o->confidence = NAN;
}

int sim_plan_cli_option(sim_plan_cli_t *o, const char *a, const char *v, int *bad)
{
    if (strcmp(a, "--error") == 0) {
        *bad = sim_cli_double(v, &o->error) != 0 || !(o->error > 0.0);
    } else if (strcmp(a, "--confidence") == 0) {
        *bad = sim_cli_double(v, &o->confidence) != 0 || !(o->confidence > 0.0) ||
               !(o->confidence < 1.0);
    } else if (strcmp(a, "--devices") == 0) {
        *bad = sim_cli_double(v, &o->devices) != 0 || !(o->devices >= 2.0) ||
               o->devices != floor(o->devices);
    } else if (strcmp(a, "--eps") == 0) {
        *bad = sim_cli_double(v, &o->eps) != 0 || !(o->eps > 0.0);
    } else if (strcmp(a, "--runs") == 0) {
        *bad = sim_cli_u64(v, &o->runs) != 0 || o->runs < 1 || o->runs > 100000;
    } else if (strcmp(a, "--seed") == 0) {
        *bad = sim_cli_u64(v, &o->seed) != 0;
    } else {
        return 0;
    }
    return 1;
}

double sim_plan_eps_campaign(double eps)
{
    return ceil(eps * 65536.0) / 65536.0;
}

const char *sim_plan_uncheckable(double eps, double devices, double eps_campaign)
{
    if (!isfinite(eps) || !isfinite(devices)) {
        return "no answer to check";
    }
    if (eps_campaign > DPM_EPS_MAX || eps_campaign * 65536.0 < 1.0) {
        return "the answer's eps is outside what a campaign accepts";
    }
    return NULL;
}

void sim_plan_scenario_base(sim_scenario_t *sc, const char *name, double devices, uint32_t runs,
                            uint64_t seed, double confidence, uint32_t examples)
{
    memset(sc, 0, sizeof(*sc));
    snprintf(sc->name, sizeof(sc->name), "%s", name);
    sc->ndevices = 1;
    sc->devices[0] = (uint64_t)devices;
    sc->runs = runs;
    sc->seed = seed;
    sc->population_seed = 1;
    sc->confidence = confidence;
    sc->mode = SIM_MODE_EXACT;
    sc->examples = examples;
    sc->beta_levels = 100;
}

int sim_plan_session_run(const sim_scenario_t *sc, uint32_t threads, sim_session_t *s,
                         double *start, char *err, size_t errcap)
{
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = SIM_MODE_EXACT;
    ro.threads = threads;
    ro.quiet = 1;
    *start = sim_now();
    if (sim_session_run(sc, &ro, s, err, errcap) != 0) {
        sim_session_free(s);
        return -1;
    }
    return 0;
}

int sim_plan_verdict(uint32_t within, uint32_t runs, double confidence, double *p_value)
{
    *p_value = prob_binom_cdf(within, runs, confidence);
    return runs > 0 && (double)within >= confidence * (double)runs;
}

int sim_plan_print_answer(double given_devices, double given_eps, double eps, double eps_campaign,
                          double devices)
{
    if (given_devices > 0.0) {
        printf("  answer: K = %.0f devices -> minimum eps = %.6f (campaign eps %.6f, Q16.16 "
               "rounded up)\n",
               given_devices, eps, eps_campaign);
    } else if (isnan(devices)) {
        printf("  answer: at eps = %g no number of devices up to 2^53 reaches it\n", given_eps);
        return -1;
    } else {
        printf("  answer: eps = %g -> minimum devices K = %.0f\n", given_eps, devices);
    }
    return 0;
}

void sim_plan_print_coverage(const char *what, double error, uint32_t within, uint32_t runs,
                             double confidence, double p_value, int pass)
{
    printf("  |%s error| <= %g in %u/%u runs (%.1f%%), target >= %.1f%%: %s (one-sided binomial "
           "p = %.3g of a shortfall this large at a true %.1f%%) -> %s\n",
           what, error, within, runs, 100.0 * within / runs, 100.0 * confidence,
           pass ? "met" : "NOT met", p_value, 100.0 * confidence, pass ? "PASS" : "FAIL");
}
