/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist planner and its simulation check (see plan_roc.h). */
#include "sim/plan/plan_roc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/edges.h"
#include "common/prob.h"
#include "estimate/roc.h"
#include "sim/run/cli.h"
#include "sim/devices/mech_roc_hist.h"
#include "sim/devices/mechs.h"
#include "sim/pop/progress.h"

void sim_roc_plan_model_counts(double auc, double base_rate, uint32_t examples, uint32_t bins,
                               double *pos, double *neg)
{
    double mu = sqrt(2.0) * prob_norm_quantile(auc), t = mu / 2.0, prev_p = 0.0, prev_n = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        double cp = 1.0, cn = 1.0;
        if (b + 1 < bins) {
            double e = prob_norm_quantile((double)(b + 1) / bins);
            cp = prob_norm_cdf(t + e - mu);
            cn = prob_norm_cdf(t + e);
        }
        pos[b] = examples * base_rate * (cp - prev_p);
        neg[b] = examples * (1.0 - base_rate) * (cn - prev_n);
        prev_p = cp;
        prev_n = cn;
    }
}

/* Pr[|N(b, sd²)| <= x]. */
static double within_prob(double b, double sd, double x)
{
    return prob_norm_cdf((x - b) / sd) - prob_norm_cdf((-x - b) / sd);
}

double sim_roc_plan_largest_sd(double b, double x, double c, int chebyshev)
{
    if (chebyshev) {
        double v = (1.0 - c) * x * x - b * b;
        return v > 0.0 ? sqrt(v) : NAN;
    }
    if (!(fabs(b) < x) || !(within_prob(b, 1e-300, x) >= c)) {
        return NAN;
    }
    double lo = 0.0, hi = 2.0 * x; /* within_prob decreases in sd */
    while (within_prob(b, hi, x) >= c) {
        hi *= 2.0;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid > 0.0 && within_prob(b, mid, x) >= c) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo > 0.0 ? lo : NAN;
}

double sim_roc_plan_sd(const sim_roc_plan_t *q, const sim_roc_plan_answer_t *a, double devices,
                       double eps_campaign)
{
    double g = q->kind == SIM_ROC_ERROR_MODEL ? a->sampling : 0.0;
    return sqrt((prob_dlap_var(2.0 / eps_campaign) * a->factor + g) / devices);
}

/* The smallest ε whose sd at K devices is at most sd_max: NaN when the sampling alone exceeds
 * it (v <= 0). */
static double eps_for(const sim_roc_plan_answer_t *a, double g, double devices, double sd_max)
{
    double v = (devices * sd_max * sd_max - g) / a->factor; /* the largest s² allowed */
    if (!(v > 0.0)) {
        return NAN;
    }
    double p = ((v + 1.0) - sqrt(2.0 * v + 1.0)) / v;
    return -2.0 * log(p);
}

/* The fewest devices (>= 2) whose sd at s² is at most sd_max, NaN beyond 2^53. */
static double devices_for(const sim_roc_plan_answer_t *a, double g, double s2, double sd_max)
{
    double k = fmax(2.0, ceil((s2 * a->factor + g) / (sd_max * sd_max)));
    return k < 9007199254740992.0 ? k : NAN;
}

int sim_roc_plan_solve(const sim_roc_plan_t *q, sim_roc_plan_answer_t *a)
{
    double pos[DPM_MAX_BINS], neg[DPM_MAX_BINS];
    memset(a, 0, sizeof(*a));
    a->eps = a->devices = a->eps_campaign = a->sd = a->sd_max = a->design = NAN;
    a->sd_design_max = a->design_devices = a->design_eps = NAN;
    if (!(q->auc > 0.0 && q->auc < 1.0) || !(q->base_rate > 0.0 && q->base_rate < 1.0) ||
        q->examples < 1 || q->bins < 2 || q->bins > DPM_MAX_BINS || !(q->error > 0.0) ||
        !(q->confidence > 0.0 && q->confidence < 1.0) || (q->devices > 0.0) == (q->eps > 0.0)) {
        return -1;
    }
    sim_roc_plan_model_counts(q->auc, q->base_rate, q->examples, q->bins, pos, neg);
    if (dpm_roc_plan_factors(pos, neg, q->bins, &a->auc_binned, &a->factor, &a->sampling) !=
            DPM_OK ||
        !(a->factor > 0.0)) {
        return -1;
    }
    int model = q->kind == SIM_ROC_ERROR_MODEL;
    double g = model ? a->sampling : 0.0;
    a->bias = model ? a->auc_binned - q->auc : 0.0;
    a->k = q->bound_chebyshev ? 1.0 / sqrt(1.0 - q->confidence)
                              : prob_norm_quantile(0.5 + q->confidence / 2.0);
    a->sd_max = sim_roc_plan_largest_sd(a->bias, q->error, q->confidence, q->bound_chebyshev);
    a->runs = q->runs ? q->runs : sim_plan_default_runs(q->confidence, 1);
    a->design = sim_plan_design_coverage(q->confidence, a->runs, 1);
    a->sd_design_max = fmin(a->sd_max, sim_roc_plan_largest_sd(a->bias, q->error, a->design, 0));
    if (isnan(a->sd_design_max)) {
        a->sd_design_max = a->sd_max; /* no margin reachable: the search adds devices */
    }
    if (isnan(a->sd_max)) {
        a->none = "the binning alone (bias of the binned AUC) uses up the target: no eps or "
                  "number of devices reaches it; use more bins or a larger --error";
        return 0;
    }
    if (q->devices > 0.0) {
        a->devices = a->design_devices = q->devices;
        a->eps = eps_for(a, g, q->devices, a->sd_max);
        if (isnan(a->eps)) {
            a->none = "the sampling of the examples alone exceeds the target at this K: add "
                      "devices";
            return 0;
        }
        a->eps_campaign = sim_plan_eps_up(a->eps); /* the smallest campaign eps that meets it */
        double eps_d = eps_for(a, g, q->devices, a->sd_design_max);
        a->design_eps = isnan(eps_d) ? a->eps_campaign : sim_plan_eps_up(fmax(eps_d, a->eps));
        a->sd = sim_roc_plan_sd(q, a, a->devices, a->eps_campaign);
        return 0;
    }
    a->eps = q->eps;
    a->eps_campaign = a->design_eps = sim_plan_eps_down(q->eps); /* what a campaign implements */
    if (!(a->eps_campaign > 0.0)) {
        a->none = "eps rounds down to 0 in the Q16.16 a campaign carries: no campaign can run at "
                  "it (the smallest is 2^-16)";
        return -1;
    }
    double s2 = prob_dlap_var(2.0 / a->eps_campaign);
    a->devices = devices_for(a, g, s2, a->sd_max);
    a->design_devices = devices_for(a, g, s2, a->sd_design_max);
    if (isnan(a->devices) || isnan(a->design_devices)) {
        a->devices = a->design_devices = NAN;
        a->none = "no number of devices up to 2^53 reaches it";
        return 0;
    }
    a->sd = sim_roc_plan_sd(q, a, a->devices, a->eps_campaign);
    return 0;
}

static int plan_scenario(const sim_roc_plan_t *q, double devices, double eps_campaign,
                         uint32_t runs, uint64_t seed, sim_scenario_t *sc)
{
    sim_plan_scenario_base(sc, "plan-check-roc", devices, runs, seed, q->confidence, q->examples);
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
    c->mech = sim_mech_by_id(c->mechanism);
    c->neps = 1;
    /* the campaign's eps = line, read as a scenario reads it */
    dpm_eps_t q16 = (dpm_eps_t)llround(eps_campaign * 65536.0);
    sim_plan_eps_text(q16, c->eps_text[0], sizeof(c->eps_text[0]));
    c->ngroups = 2;
    c->groups[0] = 0;
    c->groups[1] = 1;
    c->nedges = q->bins - 1u;
    edges_uniform(q->bins, c->edges);
    return dpm_eps_from_decimal(c->eps_text[0], &c->eps[0]) == DPM_OK && c->eps[0] == q16 ? 0 : -1;
}

/* Runs sc (exact mode) and adds its runs' errors against item `item`'s truth. */
static int check_runs(const sim_scenario_t *sc, uint32_t item, double x, uint32_t *within,
                      double *sq, double *truth, char *err, size_t errcap)
{
    sim_session_t s;
    double start;
    if (sim_plan_session_run(sc, sim_cli_default_threads(), &s, &start, err, errcap) != 0) {
        return -1;
    }
    const sim_result_t *r = &s.res[0];
    *truth = r->cfg.items[item].truth;
    for (uint32_t run = 0; run < r->runs; run++) {
        double e = sim_result_at(r, run, item)->est - *truth;
        *within += fabs(e) <= x; /* a run without an estimate (NaN) counts as a miss */
        *sq += isnan(e) ? INFINITY : e * e;
    }
    sim_session_free(&s);
    return 0;
}

int sim_roc_plan_check_at(const sim_roc_plan_t *q, double devices, double eps_campaign,
                          uint32_t runs, uint64_t seed, uint32_t *within, double *truth,
                          double *sum_sq, char *err, size_t errcap)
{
    sim_scenario_t *sc = malloc(sizeof(*sc));
    if (sc == NULL) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    int st = 0;
    err[0] = '\0';
    *within = 0;
    *sum_sq = 0.0;
    if (q->kind == SIM_ROC_ERROR_NOISE) { /* one population, its binned AUC */
        st = plan_scenario(q, devices, eps_campaign, runs, seed, sc);
        st = st != 0 ? st
                     : check_runs(sc, SIM_ROC_ITEM_BINNED, q->error, within, sum_sq, truth, err,
                                  errcap);
    } else { /* each run on a population of its own: the examples' sampling is in the error */
        for (uint32_t r = 0; r < runs && st == 0; r++) {
            st = plan_scenario(q, devices, eps_campaign, 1, seed + r, sc);
            sc->population_seed = seed * 1000003u + r;
            st = st != 0 ? st
                         : check_runs(sc, SIM_ROC_ITEM_MODEL, q->error, within, sum_sq, truth, err,
                                      errcap);
        }
    }
    free(sc);
    if (st != 0 && err[0] == '\0') {
        snprintf(err, errcap, "the campaign eps %.17g is no Q16.16 value", eps_campaign);
    }
    return st;
}

typedef struct {
    const sim_roc_plan_t *q;
    sim_roc_plan_answer_t *a;
} check_ctx_t;

static int check_fn(void *ctx, double devices, uint32_t runs, uint64_t seed, uint32_t *within,
                    char *err, size_t errcap)
{
    check_ctx_t *x = ctx;
    double sq;
    return sim_roc_plan_check_at(x->q, devices, x->a->design_eps, runs, seed, within, &x->a->truth,
                                 &sq, err, errcap);
}

int sim_roc_plan_check(const sim_roc_plan_t *q, sim_roc_plan_answer_t *a, uint64_t seed, FILE *out,
                       char *err, size_t errcap)
{
    static const char *const names[1] = {"AUC"};
    a->checked = 0;
    if (errcap > 0) {
        err[0] = '\0';
    }
    a->why = a->none != NULL ? "no answer to check"
                             : sim_plan_uncheckable(a->eps, a->design_devices, a->design_eps);
    if (a->why != NULL) {
        return 0;
    }
    check_ctx_t ctx = {q, a};
    if (sim_plan_find_devices(check_fn, &ctx, names, 1, q->confidence, a->runs, a->design_devices,
                              seed, out, q->error, &a->search, err, errcap) != 0) {
        return -1;
    }
    a->checked = 1;
    return 0;
}

/* ---- dpm-sim plan --mechanism roc_hist ---------------------------------------------------- */

static const char ROC_USAGE[] =
    "usage: dpm-sim plan --mechanism roc_hist --error X --confidence C (--devices K | --eps E)\n"
    "                    [--error-kind model|noise] [--auc A] [--base-rate P] [--examples E]\n"
    "                    [--bins B] [--bound normal|chebyshev] [--runs R] [--seed S]\n"
    "                    [--no-check] [--json FILE]\n"
    "       (with groups: dpm-sim plan --mechanism roc_hist_groups --help)\n"
    "  Answers: the smallest eps (given K devices) or the fewest devices (given eps) such that\n"
    "  the AUC is estimated within X with probability C, for a binormal score model (default\n"
    "  auc 0.85, base rate 0.3, 40 examples per device, 10 uniform bins), planned with a\n"
    "  margin, then checks it by simulation (exact mode) and searches for the K that is shown\n"
    "  to reach C (the lower end of a 95% interval on the simulated coverage). Trust model:\n"
    "  local DP (label-DP).\n"
    "  --error-kind model (default): the error against the model's AUC, i.e. noise + the\n"
    "  sampling of the examples + binning (a bias no eps removes). noise: against the devices'\n"
    "  own binned AUC, the mechanism's noise only.\n"
    "  --bound normal (default) or chebyshev. --runs: per check (default: enough to show C\n"
    "  with a margin, 200 .. 6400). --json FILE (- for stdout): the answer, its trust_model\n"
    "  and the check. Exit status: 0 answered (and verified), 1 the check found no K that\n"
    "  reaches C, 2 bad usage.\n";

/* roc_hist's own options (sim_plan_cli_parse). */
static int roc_option(void *ctx, const char *a, const char *v, int *bad)
{
    sim_roc_plan_t *q = ctx;
    uint64_t u;
    if (strcmp(a, "--mechanism") == 0) {
        *bad = strcmp(v, "roc_hist") != 0;
    } else if (strcmp(a, "--error-kind") == 0) {
        *bad = strcmp(v, "model") != 0 && strcmp(v, "noise") != 0;
        q->kind = strcmp(v, "noise") == 0 ? SIM_ROC_ERROR_NOISE : SIM_ROC_ERROR_MODEL;
    } else if (strcmp(a, "--auc") == 0) {
        *bad = sim_cli_double(v, &q->auc) != 0 || !(q->auc > 0.5 && q->auc < 1.0);
    } else if (strcmp(a, "--base-rate") == 0) {
        *bad = sim_cli_double(v, &q->base_rate) != 0 || !(q->base_rate > 0.0 && q->base_rate < 1.0);
    } else if (strcmp(a, "--examples") == 0) {
        *bad = sim_cli_u64(v, &u) != 0 || u < 1 || u > 10000;
        q->examples = (uint32_t)u;
    } else if (strcmp(a, "--bins") == 0) {
        *bad = sim_cli_u64(v, &u) != 0 || u < 2 || u > DPM_MAX_BINS;
        q->bins = (uint32_t)u;
    } else if (strcmp(a, "--bound") == 0) {
        *bad = strcmp(v, "normal") != 0 && strcmp(v, "chebyshev") != 0;
        q->bound_chebyshev = strcmp(v, "chebyshev") == 0;
    } else {
        return 0;
    }
    return 1;
}

static int roc_parse(int argc, char **argv, sim_roc_plan_t *q, sim_plan_cli_t *o)
{
    int st = sim_plan_cli_parse(o, argc, argv, ROC_USAGE, roc_option, q);
    if (st != 0) {
        return st;
    }
    q->error = o->error;
    q->confidence = o->confidence;
    q->devices = o->devices;
    q->eps = o->eps;
    if (isnan(q->error) || isnan(q->confidence)) {
        return sim_plan_usage(ROC_USAGE, "--error and --confidence are required");
    }
    if ((q->devices > 0.0) == (q->eps > 0.0)) {
        return sim_plan_usage(ROC_USAGE, "give exactly one of --devices K and --eps E");
    }
    return 0;
}

static void print_question(const sim_roc_plan_t *q, const sim_roc_plan_answer_t *a)
{
    printf("planner (analytic): roc_hist, binormal(auc=%g, base_rate=%g), %u examples per "
           "device, %u uniform bins, %s bound\n",
           q->auc, q->base_rate, q->examples, q->bins, q->bound_chebyshev ? "Chebyshev" : "normal");
    sim_plan_print_trust(SIM_PLAN_TRUST_LOCAL_TEXT);
    printf("  question: |AUC error| <= %g with probability >= %g\n", q->error, q->confidence);
    if (q->kind == SIM_ROC_ERROR_MODEL) {
        printf("  error planned for: AUC-hat against the model's AUC %g (noise + sampling of the "
               "examples + binning; --error-kind noise: the mechanism's noise only)\n",
               q->auc);
        printf("  binning: the binned AUC of the model is %.5f, a bias of %+.5f that no eps "
               "removes\n",
               a->auc_binned, a->bias);
    } else {
        printf("  error planned for: AUC-hat against the reporting devices' own binned AUC (the "
               "mechanism's noise only; --error-kind model: against the model's AUC)\n");
    }
}

static int roc_json(const char *path, const sim_roc_plan_t *q, const sim_roc_plan_answer_t *a)
{
    jw_t w;
    FILE *f = sim_plan_json_begin(path, &w, "roc_hist", SIM_PLAN_TRUST_LOCAL,
                                  a->checked ? &a->search : NULL,
                                  q->devices > 0.0 ? q->devices : a->devices);
    if (f == NULL) {
        return -1;
    }
    jw_raw(&w, ",\n  \"question\": {");
    sim_plan_json_text(&w, 0, "error_kind", q->kind == SIM_ROC_ERROR_MODEL ? "model" : "noise");
    sim_plan_json_text(&w, 1, "bound", q->bound_chebyshev ? "chebyshev" : "normal");
    static const char *const qk[] = {"auc",   "base_rate",  "examples", "bins",
                                     "error", "confidence", "devices",  "eps"};
    double qv[] = {q->auc,
                   q->base_rate,
                   q->examples,
                   q->bins,
                   q->error,
                   q->confidence,
                   q->devices > 0.0 ? q->devices : NAN,
                   q->eps > 0.0 ? q->eps : NAN};
    sim_plan_json_nums(&w, 1, qk, qv, sizeof(qv) / sizeof(qv[0]));
    jw_raw(&w, "},\n  \"answer\": {");
    sim_plan_json_text(&w, 0, "none", a->none);
    static const char *const ak[] = {"eps",
                                     "eps_campaign",
                                     "devices",
                                     "auc_sd",
                                     "sd_max",
                                     "binning_bias",
                                     "design_coverage",
                                     "design_devices",
                                     "design_eps_campaign",
                                     "devices_verified"};
    double av[] = {a->eps,        a->eps_campaign,
                   a->devices,    a->sd,
                   a->sd_max,     a->bias,
                   a->design,     a->design_devices,
                   a->design_eps, a->checked && a->search.found ? a->search.devices : NAN};
    sim_plan_json_nums(&w, 1, ak, av, sizeof(av) / sizeof(av[0]));
    jw_raw(&w, "}");
    return sim_plan_json_end(f, &w, path);
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
    int st = roc_parse(argc, argv, &q, &o);
    if (st != 0) {
        return st == SIM_PLAN_HELP ? SIM_EXIT_OK : st;
    }
    q.runs = o.runs_given ? (uint32_t)o.runs : 0u;
    sim_roc_plan_answer_t a;
    if (sim_roc_plan_solve(&q, &a) != 0) {
        fprintf(stderr, "dpm-sim plan: the planner refuses this question%s%s\n",
                a.none != NULL ? ": " : "", a.none != NULL ? a.none : "");
        return SIM_EXIT_USAGE;
    }
    print_question(&q, &a);
    printf("  variance factors: noise F = %.6g, sampling G = %.6g (var = (s²(eps) F%s) / K)\n",
           a.factor, a.sampling, q.kind == SIM_ROC_ERROR_MODEL ? " + G" : "");
    if (a.none != NULL) {
        printf("  answer: none: %s\n", a.none);
    } else if (sim_plan_print_answer(q.devices, a.eps, a.eps_campaign, a.devices) == 0) {
        printf("  predicted sd of the AUC %.4g; the target allows sd <= %.4g\n", a.sd, a.sd_max);
        sim_plan_print_margin(q.confidence, a.design, a.runs, 1, q.devices > 0.0, a.devices,
                              a.design_devices, a.design_eps);
    }
    char err[512];
    if (o.check && a.none == NULL && q.kind == SIM_ROC_ERROR_MODEL) {
        printf("the check's truth: the model's AUC %g (seed %llu; each run on a population of "
               "its own)\n",
               q.auc, (unsigned long long)o.seed);
    } else if (o.check && a.none == NULL) {
        printf("the check's truth: the devices' binned AUC of each check's population (seed "
               "%llu)\n",
               (unsigned long long)o.seed);
    }
    if (o.check && sim_roc_plan_check(&q, &a, o.seed, stdout, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim plan: check failed to run: %s\n", err);
        return SIM_EXIT_USAGE;
    }
    if (o.check && !a.checked) {
        printf("check by simulation: skipped (%s)\n", a.why);
    } else if (o.check) {
        sim_plan_print_verdict(&a.search, q.devices > 0.0 ? q.devices : a.devices, q.devices > 0.0);
    }
    if (o.json != NULL && roc_json(o.json, &q, &a) != 0) {
        return SIM_EXIT_USAGE;
    }
    return a.checked && !a.search.found ? SIM_EXIT_CHECK : SIM_EXIT_OK;
}
