/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist campaign planner and its simulation check (see planner.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/disparity.h"
#include "estimate/roc.h"
#include "sim/cli.h"
#include "sim/planner.h"
#include "sim/progress.h"
#include "sim/session.h"
#include "sim/sim_math.h"

/* Expected per-device counts of the planner's model (uniform edges b / B, scores as roc_sim). */
static int model_counts(const sim_roc_plan_t *q, double *pos, double *neg)
{
    double z = 0.0;
    if (dpm_disp_normal_quantile(q->auc, &z) != DPM_OK) {
        return -1;
    }
    double mu = sqrt(2.0) * z, t = mu / 2.0, prev_p = 0.0, prev_n = 0.0;
    for (uint32_t b = 0; b < q->bins; b++) {
        double cp = 1.0, cn = 1.0;
        if (b + 1 < q->bins) {
            double e = 0.0;
            (void)dpm_disp_normal_quantile((double)(b + 1) / q->bins, &e);
            cp = sim_norm_cdf(t + e - mu);
            cn = sim_norm_cdf(t + e);
        }
        pos[b] = q->examples * q->base_rate * (cp - prev_p);
        neg[b] = q->examples * (1.0 - q->base_rate) * (cn - prev_n);
        prev_p = cp;
        prev_n = cn;
    }
    return 0;
}

int sim_roc_plan_solve(const sim_roc_plan_t *q, sim_roc_plan_answer_t *a)
{
    double pos[DPM_MAX_BINS], neg[DPM_MAX_BINS];
    memset(a, 0, sizeof(*a));
    a->eps = a->devices = a->eps_campaign = a->sd = NAN;
    if (!(q->auc > 0.0 && q->auc < 1.0) || !(q->base_rate > 0.0 && q->base_rate < 1.0) ||
        q->examples < 1 || q->bins < 2 || q->bins > DPM_MAX_BINS || !(q->error > 0.0) ||
        !(q->confidence > 0.0 && q->confidence < 1.0) || (q->devices > 0.0) == (q->eps > 0.0) ||
        model_counts(q, pos, neg) != 0) {
        return -1;
    }
    a->factor = dpm_roc_noise_factor(pos, neg, q->bins);
    double k = 1.0 / sqrt(1.0 - q->confidence);
    if (!q->bound_chebyshev) {
        (void)dpm_disp_normal_quantile(0.5 + q->confidence / 2.0, &k);
    }
    a->k = k;
    double target = (q->error / k) * (q->error / k);
    if (!(a->factor > 0.0)) {
        return -1;
    }
    if (q->devices > 0.0) {
        double v = q->devices * target / a->factor; /* the largest s² allowed */
        double p = ((v + 1.0) - sqrt(2.0 * v + 1.0)) / v;
        a->devices = q->devices;
        a->eps = -2.0 * log(p);
        a->eps_campaign = sim_plan_eps_campaign(a->eps);
        a->sd = sqrt(dpm_roc_dlap_var(2.0 / a->eps_campaign) * a->factor / a->devices);
        return 0;
    }
    a->eps = q->eps;
    a->eps_campaign = sim_plan_eps_campaign(q->eps);
    double s2 = dpm_roc_dlap_var(2.0 / a->eps_campaign);
    a->devices = fmax(2.0, ceil(s2 * a->factor / target));
    if (!(a->devices < 9007199254740992.0)) {
        a->devices = NAN;
        return 0;
    }
    a->sd = sqrt(s2 * a->factor / a->devices);
    return 0;
}

static void plan_scenario(const sim_roc_plan_t *q, const sim_roc_plan_answer_t *a, uint32_t runs,
                          uint64_t seed, sim_scenario_t *sc)
{
    sim_plan_scenario_base(sc, "plan-check-roc", a->devices, runs, seed, q->confidence,
                           q->examples);
    sc->ngroups = 2;
    for (uint32_t g = 0; g < 2; g++) {
        sim_group_spec_t *gs = &sc->group[g];
        snprintf(gs->name, sizeof(gs->name), "g%u", g);
        gs->share = 0.5;
        gs->share_line = 1;
        gs->scores.set = 1;
        gs->scores.auc = q->auc;
        gs->scores.base_rate = q->base_rate;
        gs->scores.examples = q->examples;
        gs->scores.line = 1;
    }
    sim_campaign_spec_t *c = &sc->campaign[0];
    sc->ncampaigns = 1;
    snprintf(c->name, sizeof(c->name), "plan");
    c->id = 1;
    c->mechanism = DPM_MECH_ID_ROC_HIST;
    c->neps = 1;
    c->eps[0] = (dpm_eps_t)llround(a->eps_campaign * 65536.0);
    snprintf(c->eps_text[0], sizeof(c->eps_text[0]), "%.10g", a->eps_campaign);
    c->ngroups = 2;
    c->groups[0] = 0;
    c->groups[1] = 1;
    c->nedges = q->bins - 1u;
    for (uint32_t i = 0; i < c->nedges; i++) {
        c->edges[i] = (uint32_t)(((uint64_t)(i + 1u) << 31) / q->bins);
    }
    c->paper_tolerance = 10.0;
}

int sim_roc_plan_check(const sim_roc_plan_t *q, sim_roc_plan_answer_t *a, uint32_t runs,
                       uint64_t seed, char *err, size_t errcap)
{
    a->checked = 0;
    a->why = sim_plan_uncheckable(a->eps, a->devices, a->eps_campaign);
    if (a->why != NULL) {
        return 0;
    }
    if (a->devices > 2e7) {
        a->why = "more than 2e7 devices: the check realizes every device's examples";
        return 0;
    }
    sim_scenario_t *sc = malloc(sizeof(*sc));
    if (sc == NULL) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    plan_scenario(q, a, runs, seed, sc);
    sim_session_t s;
    double start;
    if (sim_plan_session_run(sc, sim_cli_default_threads(), &s, &start, err, errcap) != 0) {
        free(sc);
        return -1;
    }
    const sim_result_t *r = &s.res[0];
    sim_roc_summary_t sm;
    sim_result_roc_summary(r, &sm);
    a->runs = runs;
    a->within = 0;
    for (uint32_t run = 0; run < runs; run++) {
        a->within += fabs(r->roc_auc[run].est - r->truth.roc_auc) <= q->error;
    }
    a->truth = r->truth.roc_auc;
    a->rmse = sm.auc.rmse;
    a->pass = sim_plan_binom_test(a->within, runs, q->confidence, &a->p_value);
    a->checked = 1;
    a->seconds = sim_now() - start;
    sim_session_free(&s);
    free(sc);
    return 0;
}

/* ---- dpm-sim plan --mechanism roc_hist ---------------------------------------------------- */

static const char ROC_USAGE[] =
    "usage: dpm-sim plan --mechanism roc_hist --error X --confidence C (--devices K | --eps E)\n"
    "                    [--auc A] [--base-rate P] [--examples E] [--bins B]\n"
    "                    [--bound normal|chebyshev] [--runs R] [--seed S] [--no-check]\n"
    "  Answers: the smallest eps (given K devices) or the fewest devices (given eps) such that\n"
    "  the AUC is estimated within X of the devices' binned AUC with probability C, from the\n"
    "  analytic noise variance of the roc_hist estimator (host-sim/estimate/roc.h) for a\n"
    "  binormal score model (default auc 0.85, base rate 0.3, 40 examples per device, 10\n"
    "  uniform bins), then checks it by simulation (exact mode, R runs, default 200).\n"
    "  --bound normal (default) or chebyshev.\n";

static int roc_usage(const char *what)
{
    fprintf(stderr, "dpm-sim plan: %s\n%s", what, ROC_USAGE);
    return SIM_EXIT_USAGE;
}

int sim_cmd_plan_roc(int argc, char **argv)
{
    sim_roc_plan_t q;
    memset(&q, 0, sizeof(q));
    q.auc = 0.85;
    q.base_rate = 0.3;
    q.examples = 40;
    q.bins = 10;
    sim_plan_cli_t o;
    sim_plan_cli_init(&o);
    uint64_t u;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(ROC_USAGE, stdout);
            return SIM_EXIT_OK;
        }
        if (strcmp(a, "--no-check") == 0) {
            o.check = 0;
            continue;
        }
        if (v == NULL) {
            return roc_usage("an option is missing its value");
        }
        i++;
        if (sim_plan_cli_option(&o, a, v, &bad)) {
            /* shared with tuple_mr / tuple_ml */
        } else if (strcmp(a, "--mechanism") == 0) {
            bad = strcmp(v, "roc_hist") != 0;
        } else if (strcmp(a, "--auc") == 0) {
            bad = sim_cli_double(v, &q.auc) != 0 || !(q.auc > 0.5 && q.auc < 1.0);
        } else if (strcmp(a, "--base-rate") == 0) {
            bad = sim_cli_double(v, &q.base_rate) != 0 || !(q.base_rate > 0.0 && q.base_rate < 1.0);
        } else if (strcmp(a, "--examples") == 0) {
            bad = sim_cli_u64(v, &u) != 0 || u < 1 || u > 10000;
            q.examples = (uint32_t)u;
        } else if (strcmp(a, "--bins") == 0) {
            bad = sim_cli_u64(v, &u) != 0 || u < 2 || u > DPM_MAX_BINS;
            q.bins = (uint32_t)u;
        } else if (strcmp(a, "--bound") == 0) {
            bad = strcmp(v, "normal") != 0 && strcmp(v, "chebyshev") != 0;
            q.bound_chebyshev = strcmp(v, "chebyshev") == 0;
        } else {
            return roc_usage("unknown option");
        }
        if (bad) {
            char msg[96];
            snprintf(msg, sizeof(msg), "bad value for %s", a);
            return roc_usage(msg);
        }
    }
    q.error = o.error;
    q.confidence = o.confidence;
    q.devices = o.devices;
    q.eps = o.eps;
    if (isnan(q.error) || isnan(q.confidence)) {
        return roc_usage("--error and --confidence are required");
    }
    if ((q.devices > 0.0) == (q.eps > 0.0)) {
        return roc_usage("give exactly one of --devices K and --eps E");
    }
    sim_roc_plan_answer_t a;
    if (sim_roc_plan_solve(&q, &a) != 0) {
        fprintf(stderr, "dpm-sim plan: the planner refuses this question\n");
        return SIM_EXIT_USAGE;
    }
    printf("planner (analytic): roc_hist, binormal(auc=%g, base_rate=%g), %u examples per "
           "device, %u uniform bins, %s bound (k = %.4g), noise factor F = %.6g\n",
           q.auc, q.base_rate, q.examples, q.bins, q.bound_chebyshev ? "Chebyshev" : "normal", a.k,
           a.factor);
    printf("  question: |AUC error| <= %g (against the devices' binned AUC) with probability "
           ">= %g\n",
           q.error, q.confidence);
    if (sim_plan_print_answer(q.devices, q.eps, a.eps, a.eps_campaign, a.devices) != 0) {
        return SIM_EXIT_OK;
    }
    printf("  predicted sd of the AUC %.4g; the bound allows sd <= %.4g\n", a.sd, q.error / a.k);
    if (!o.check) {
        return SIM_EXIT_OK;
    }
    char err[512];
    if (sim_roc_plan_check(&q, &a, (uint32_t)o.runs, o.seed, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim plan: check failed to run: %s\n", err);
        return SIM_EXIT_USAGE;
    }
    if (!a.checked) {
        printf("check by simulation: skipped (%s)\n", a.why);
        return SIM_EXIT_OK;
    }
    printf("check by simulation (exact mode, %u runs, seed %llu, %.2f s): AUC truth %.5f, RMSE "
           "%.4g\n",
           a.runs, (unsigned long long)o.seed, a.seconds, a.truth, a.rmse);
    sim_plan_print_coverage("AUC", q.error, a.within, a.runs, q.confidence, a.p_value, a.pass);
    return a.pass ? SIM_EXIT_OK : SIM_EXIT_CHECK;
}
