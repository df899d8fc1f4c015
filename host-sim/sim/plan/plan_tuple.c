/* SPDX-License-Identifier: Apache-2.0 */
/* The tuple planner and its simulation check (see plan_tuple.h). */
#include "sim/plan/plan_tuple.h"

#include "sim/plan/plan_roc.h"
#include "sim/plan/plan_rocg.h"

#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "sim/run/cli.h"
#include "sim/devices/mech_tuple.h"
#include "sim/devices/mechs.h"
#include "sim/pop/progress.h"

#define K_REF 1e6 /* the gap MSE is exactly proportional to 1 / K: computed here, then scaled */
#define EXACT_INT_MAX 9007199254740992.0

static const dpm_metric_t kDefaultMetrics[DPM_TUPLE_MAX_METRICS] = {
    DPM_METRIC_TPR, DPM_METRIC_FPR, DPM_METRIC_ACCURACY, DPM_METRIC_PRECISION};

static uint32_t nmetrics(const sim_plan_question_t *q)
{
    return q->nmetrics ? q->nmetrics : 1u;
}

static const dpm_metric_t *metrics(const sim_plan_question_t *q)
{
    return q->metrics[0] != 0 ? q->metrics : kDefaultMetrics;
}

static int paper(const sim_plan_question_t *q)
{
    return q->plan.split == DPM_DISP_SPLIT_PAPER;
}

/* z(p) = Phi^-1((1 + p) / 2) */
static double z_of(double p)
{
    return prob_norm_quantile(0.5 + p / 2.0);
}

/* The gap MSE a bound allows at confidence c: (1 - c) alpha^2 (Chebyshev), (alpha / z(c))^2. */
static double bound_target(const dpm_disp_plan_t *p, double c)
{
    double z = z_of(c);
    return p->bound == DPM_DISP_BOUND_CHEBYSHEV ? (1.0 - c) * p->alpha * p->alpha
                                                : (p->alpha / z) * (p->alpha / z);
}

/* The SDK's tuple mechanism at a campaign's Q16.16 ε, in the estimator's terms. */
static int sdk_params(const sim_plan_question_t *q, double eps, dpm_disp_params_t *params,
                      const char **why)
{
    dpm_eps_t q16 = (dpm_eps_t)llround(eps * 65536.0);
    dpm_mech_t mech;
    sim_tuple_noise_t noise;
    if (!(eps > 0.0) || eps > DPM_EPS_MAX || (double)q16 != eps * 65536.0) {
        *why = "the eps is not a campaign's Q16.16 value";
        return -1;
    }
    return sim_tuple_sdk_build(q->plan.mech, q->plan.d, metrics(q), nmetrics(q), q16, 1, &mech,
                               params, &noise, why);
}

int sim_plan_gap_mse(const sim_plan_question_t *q, double devices, double eps, double *mse,
                     const char **why)
{
    const dpm_disp_plan_t *p = &q->plan;
    *why = NULL;
    if (paper(q)) {
        if (dpm_disp_plan_mse(p, devices, eps, mse) != DPM_OK) {
            *why = "the planner refuses these values";
            return -1;
        }
        return 0;
    }
    dpm_disp_params_t params;
    if (sdk_params(q, eps, &params, why) != 0) {
        return -1;
    }
    if (dpm_disp_gap_mse(&params, devices, p->share_g * devices, p->share_h * devices, p->nu2_g,
                         p->nu2_h, mse) != DPM_OK) {
        *why = "the estimator refuses the shares or second moments";
        return -1;
    }
    return 0;
}

typedef struct {
    const sim_plan_question_t *q;
    double devices, target;
} eps_ctx_t;

static double mse_over(dpm_eps_t q16, void *ctx)
{
    const eps_ctx_t *c = ctx;
    double mse;
    const char *why;
    return sim_plan_gap_mse(c->q, c->devices, q16 / 65536.0, &mse, &why) == 0 ? mse - c->target
                                                                              : NAN;
}

/* The fewest devices with k1 / K <= target, or NaN beyond 2^53. */
static double min_devices(double k1, double target)
{
    double k = fmax(2.0, ceil(k1 / target));
    while (k < EXACT_INT_MAX && k1 / k > target) {
        k += 1.0;
    }
    return k < EXACT_INT_MAX ? k : NAN;
}

/* Given K, the paper's split (or the SDK's beyond a campaign's ε): the estimator's mirror. */
static void solve_eps_mirror(const sim_plan_question_t *q, double design, sim_plan_answer_t *a)
{
    dpm_disp_plan_t pl = q->plan;
    if (dpm_disp_plan_min_eps(&pl, q->devices, &a->eps) != DPM_OK || isnan(a->eps)) {
        a->eps = NAN;
        a->none = q->plan.mech == DPM_DISP_MR
                      ? "no eps reaches it at this K (M_R's variance floor from the Harmony "
                        "coin): add devices"
                      : "no eps reaches it at this K: add devices";
        return;
    }
    a->eps_campaign = sim_plan_eps_up(a->eps);
    double eps_d = a->eps;
    pl.bound = DPM_DISP_BOUND_NORMAL;
    pl.confidence = design;
    if (!isnan(design) && dpm_disp_plan_min_eps(&pl, q->devices, &eps_d) == DPM_OK &&
        isfinite(eps_d)) {
        eps_d = fmax(eps_d, a->eps);
    } else {
        eps_d = a->eps;
    }
    a->design_eps = sim_plan_eps_up(eps_d);
}

int sim_plan_solve(const sim_plan_question_t *q, sim_plan_answer_t *a)
{
    const dpm_disp_plan_t *p = &q->plan;
    uint32_t m = nmetrics(q);
    double dummy;
    memset(a, 0, sizeof(*a));
    a->eps = a->devices = a->eps_campaign = a->mse = a->design = NAN;
    a->design_devices = a->design_eps = a->sd_design = NAN;
    if (m > DPM_TUPLE_MAX_METRICS || (paper(q) && m != 1) ||
        dpm_disp_plan_target_mse(p, &dummy) != DPM_OK || (q->devices > 0.0) == (q->eps > 0.0)) {
        return -1;
    }
    double c = p->confidence, scale = q->scale_metric ? 0.5 : 1.0;
    uint32_t items = q->joint ? 1u : m;
    a->item_confidence = q->joint ? 1.0 - (1.0 - c) / m : c;
    a->target_mse = bound_target(p, a->item_confidence);
    a->runs = q->runs ? q->runs : sim_plan_default_runs(c, items);
    a->design = sim_plan_design_coverage(c, a->runs, items);
    double design_item = q->joint ? 1.0 - (1.0 - a->design) / m : a->design;
    double target_design =
        isnan(a->design)
            ? a->target_mse
            : fmin(a->target_mse, (p->alpha / z_of(design_item)) * (p->alpha / z_of(design_item)));
    const char *why = NULL;
    double mse_ref;
    if (q->eps > 0.0) {
        a->eps = q->eps;
        /* a given ε: plan at the ε a campaign given it carries (rounded down), never at more */
        a->eps_campaign = a->design_eps = paper(q) ? q->eps : sim_plan_eps_down(q->eps);
        if (!(a->eps_campaign > 0.0)) {
            a->none = "eps rounds down to 0 in the Q16.16 a campaign carries: no campaign can run "
                      "at it (the smallest is 2^-16)";
            return -1;
        }
        if (sim_plan_gap_mse(q, K_REF, a->eps_campaign, &mse_ref, &why) != 0) {
            a->none = why;
            return -1;
        }
        double k1 = mse_ref * K_REF;
        a->devices = min_devices(k1, a->target_mse);
        a->design_devices = min_devices(k1, target_design);
        if (isnan(a->devices) || isnan(a->design_devices)) {
            a->devices = a->design_devices = NAN;
            a->none = "no number of devices up to 2^53 reaches it";
            return 0;
        }
        a->mse = k1 / a->devices;
        a->sd_design = sqrt(k1 / a->design_devices) * scale;
        return 0;
    }
    a->devices = a->design_devices = q->devices;
    eps_ctx_t ctx = {q, q->devices, a->target_mse};
    dpm_eps_t q16 = paper(q) ? 0 : sim_plan_eps_search(mse_over, &ctx);
    if (q16 == 0 && (paper(q) || m == 1)) {
        solve_eps_mirror(q, a->design, a); /* beyond a campaign's ε: printed, not checkable */
    } else if (q16 == 0) {
        a->none = "no campaign eps (up to DPM_EPS_MAX) reaches it at this K: add devices";
    } else {
        a->eps = a->eps_campaign = q16 / 65536.0;
        ctx.target = target_design;
        dpm_eps_t q16d = sim_plan_eps_search(mse_over, &ctx);
        /* no campaign ε reaches the margin: check at the bound's, the search adds devices */
        a->design_eps = q16d != 0 ? q16d / 65536.0 : a->eps_campaign;
    }
    if (a->none == NULL && sim_plan_gap_mse(q, q->devices, a->eps_campaign, &a->mse, &why) != 0) {
        a->mse = NAN; /* beyond a campaign's ε: the mirror's */
        (void)dpm_disp_plan_mse(p, q->devices, a->eps_campaign, &a->mse);
    }
    if (a->none == NULL && sim_plan_gap_mse(q, q->devices, a->design_eps, &mse_ref, &why) == 0) {
        a->sd_design = sqrt(mse_ref) * scale;
    }
    return 0;
}

/* ---- the check ------------------------------------------------------------------------------ */

/* The planner's worst-case population and the planned campaign, as a scenario. */
static int plan_scenario(const sim_plan_question_t *q, double devices, double eps_campaign,
                         uint32_t runs, uint64_t seed, sim_scenario_t *sc, char *err, size_t errcap)
{
    const dpm_disp_plan_t *p = &q->plan;
    sim_plan_scenario_base(sc, "plan-check", devices, runs, seed, p->confidence, 40);
    sc->ngroups = p->d;
    double rest = 1.0 - p->share_g - p->share_h;
    if ((p->d == 2 && fabs(rest) > 1e-9) || (p->d > 2 && !(rest > 0.0))) {
        snprintf(err, errcap,
                 "the shares of the two compared groups must sum to 1 with 2 "
                 "groups, and to less than 1 with more");
        return -1;
    }
    sim_campaign_spec_t *c = &sc->campaign[0];
    c->nmetrics = nmetrics(q);
    memcpy(c->metrics, metrics(q), c->nmetrics * sizeof(c->metrics[0]));
    for (uint32_t g = 0; g < p->d; g++) {
        sim_group_spec_t *gs = &sc->group[g];
        snprintf(gs->name, sizeof(gs->name), "g%u", g % 100u);
        gs->share = g == 0 ? p->share_g : g == 1 ? p->share_h : rest / (p->d - 2);
        gs->share_line = 1;
        for (uint32_t j = 0; j < c->nmetrics; j++) {
            sim_dist_t *dist = &gs->metric[c->metrics[j] - 1];
            dist->kind = SIM_DIST_CONSTANT;
            dist->value.num = 1; /* metric 1/2: v = 0 (M_R); metric 1: v = 1 (M_L) */
            dist->value.den = p->mech == DPM_DISP_MR ? 2 : 1;
        }
    }
    sc->ncampaigns = 1;
    snprintf(c->name, sizeof(c->name), "plan");
    c->id = 1;
    c->mechanism = p->mech == DPM_DISP_MR ? DPM_MECH_ID_TUPLE_MR : DPM_MECH_ID_TUPLE_ML;
    c->split_paper = paper(q);
    c->neps = 1;
    /* the campaign's eps = line, read as a scenario reads it */
    dpm_eps_t q16 = (dpm_eps_t)llround(eps_campaign * 65536.0);
    sim_plan_eps_text(q16, c->eps_text[0], sizeof(c->eps_text[0]));
    if (dpm_eps_from_decimal(c->eps_text[0], &c->eps[0]) != DPM_OK || c->eps[0] != q16) {
        snprintf(err, errcap, "the campaign eps %.17g is no Q16.16 value", eps_campaign);
        return -1;
    }
    c->ngroups = p->d;
    for (uint32_t g = 0; g < p->d; g++) {
        c->groups[g] = g;
    }
    c->mech = sim_mech_by_id(c->mechanism);
    return 0;
}

typedef struct {
    const sim_plan_question_t *q;
    double eps_campaign;
} check_ctx_t;

/* One check (sim_plan_check_fn): per metric (or all at once) the runs whose gap g0 - g1 is
 * within x of the population's. */
static int check_run(void *ctx, double devices, uint32_t runs, uint64_t seed, uint32_t *within,
                     char *err, size_t errcap)
{
    const check_ctx_t *x = ctx;
    const sim_plan_question_t *q = x->q;
    sim_scenario_t *sc = malloc(sizeof(*sc));
    if (sc == NULL || plan_scenario(q, devices, x->eps_campaign, runs, seed, sc, err, errcap)) {
        free(sc);
        return -1;
    }
    sim_session_t s;
    double start;
    if (sim_plan_session_run(sc, sim_cli_default_threads(), &s, &start, err, errcap) != 0) {
        free(sc);
        return -1;
    }
    const sim_result_t *r = &s.res[0];
    uint32_t m = nmetrics(q);
    double e = q->scale_metric ? q->error : q->error / 2.0; /* results are on the metric scale */
    memset(within, 0, (q->joint ? 1u : m) * sizeof(*within));
    for (uint32_t run = 0; run < runs; run++) {
        int all = 1;
        for (uint32_t j = 0; j < m; j++) {
            uint32_t gap = sim_tuple_item(&r->cfg, j, 0, 1); /* the gap g0 - g1 */
            int in = fabs(sim_result_at(r, run, gap)->est - r->cfg.items[gap].truth) <= e;
            all &= in;
            within[j] += !q->joint && in;
        }
        within[0] += q->joint && all;
    }
    sim_session_free(&s);
    free(sc);
    return 0;
}

int sim_plan_check(const sim_plan_question_t *q, sim_plan_answer_t *a, uint64_t seed, FILE *out,
                   char *err, size_t errcap)
{
    char names[DPM_TUPLE_MAX_METRICS][SIM_PLAN_NAME_MAX];
    const char *item_names[DPM_TUPLE_MAX_METRICS];
    a->checked = 0;
    a->why = a->none != NULL ? "no answer to check"
                             : sim_plan_uncheckable(a->eps, a->design_devices, a->design_eps);
    if (a->why != NULL) {
        return 0;
    }
    uint32_t m = nmetrics(q), items = q->joint ? 1u : m;
    for (uint32_t j = 0; j < items; j++) {
        snprintf(names[j], sizeof(names[j]), "%s gap g0-g1",
                 q->joint ? "every metric's" : sim_metric_name(metrics(q)[j]));
        item_names[j] = names[j];
    }
    /* the paper's M_L with k = eps can exceed the value grid: say so rather than fail */
    sim_scenario_t *sc = malloc(sizeof(*sc));
    sim_cfg_t *probe = malloc(sizeof(*probe));
    char why[256];
    int built = sc != NULL && probe != NULL &&
                plan_scenario(q, a->design_devices, a->design_eps, 1, seed, sc, err, errcap) == 0 &&
                sim_cfg_init(probe, sc, 0, 0, why, sizeof(why)) == 0;
    if (probe != NULL) {
        sim_cfg_release(probe);
    }
    free(probe);
    free(sc);
    if (!built) {
        a->why = "the mechanism cannot be built at this eps (e.g. the paper's M_L with k = eps "
                 "beyond the value grid)";
        return 0;
    }
    check_ctx_t ctx = {q, a->design_eps};
    if (sim_plan_find_devices(check_run, &ctx, item_names, items, q->plan.confidence, a->runs,
                              a->design_devices, seed, out, q->error, &a->search, err,
                              errcap) != 0) {
        return -1;
    }
    a->checked = 1;
    return 0;
}

/* ---- dpm-sim plan ------------------------------------------------------------------------- */

static const char PLAN_USAGE[] =
    "usage: dpm-sim plan --mechanism tuple_mr|tuple_ml --error X --confidence C\n"
    "                    (--devices K | --eps E) [--metrics M|tpr,fpr,...] [--joint]\n"
    "                    [--groups D] [--shares SG,SH] [--bound chebyshev|normal]\n"
    "                    [--scale metric|value] [--split sdk|paper] [--runs R] [--seed S]\n"
    "                    [--no-check] [--json FILE]\n"
    "       (roc_hist: dpm-sim plan --mechanism roc_hist --help; with groups:\n"
    "        dpm-sim plan --mechanism roc_hist_groups --help)\n"
    "  Answers: the smallest eps (given K devices) or the fewest devices (given eps) such\n"
    "  that the disparity between two groups is estimated within X with probability C,\n"
    "  from the analytic variance (worst-case second moment) of the campaign the SDK builds,\n"
    "  then checks it by simulation (exact mode) and searches for the K that is shown to\n"
    "  reach C (the lower end of a 95% interval on the simulated coverage), planning with a\n"
    "  margin so that the first check usually does. Trust model: local DP.\n"
    "  --metrics: metrics per report, a count (1..4) or their names (default 1, tpr): the\n"
    "  SDK splits eps over them. --joint: all metrics' gaps within X at once (default: each).\n"
    "  --scale metric (default): X on the metric's [0, 1] scale; value: on [-1, 1] (the\n"
    "  paper's tables). --groups: d (default 2); --shares: the two groups' fractions of the\n"
    "  devices (default 1/2, 1/2 for d = 2, 1/d each otherwise). --bound chebyshev (default,\n"
    "  the paper's) or normal. --runs: per check (default: enough to show C with a margin,\n"
    "  200 .. 6400). --json FILE (- for stdout): the answer, its trust_model and the check.\n"
    "  --split paper: REPRODUCTION ONLY (not the stated eps; one metric).\n"
    "  Exit status: 0 answered (and verified), 1 the check found no K that reaches C,\n"
    "  2 bad usage.\n";

typedef struct {
    const char *mechanism, *split, *bound, *scale, *shares, *metrics;
    sim_plan_cli_t c;
    uint64_t groups;
    int joint;
} plan_opts_t;

#define TEXT_OPT(name, field)                                                                      \
    {                                                                                              \
        name, offsetof(plan_opts_t, field)                                                         \
    }
static const sim_plan_text_opt_t kTextOpts[] = {
    TEXT_OPT("--mechanism", mechanism), TEXT_OPT("--split", split),
    TEXT_OPT("--bound", bound),         TEXT_OPT("--scale", scale),
    TEXT_OPT("--shares", shares),       TEXT_OPT("--metrics", metrics),
};

static int plan_parse(int argc, char **argv, plan_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    sim_plan_cli_init(&o->c);
    o->groups = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--no-check") == 0 || strcmp(a, "--joint") == 0) {
            o->c.check &= strcmp(a, "--no-check") != 0;
            o->joint |= strcmp(a, "--joint") == 0;
            continue;
        }
        if (v == NULL) {
            return sim_plan_no_value(PLAN_USAGE, a);
        }
        i++;
        if (sim_plan_cli_option(&o->c, a, v, &bad) ||
            sim_plan_text_option(kTextOpts, sizeof(kTextOpts) / sizeof(kTextOpts[0]), o, a, v)) {
            /* shared with roc_hist; kept as text */
        } else if (strcmp(a, "--groups") == 0) {
            bad =
                sim_cli_u64(v, &o->groups) != 0 || o->groups < 2 || o->groups > DPM_DISP_MAX_GROUPS;
        } else {
            return sim_plan_unknown(PLAN_USAGE, a);
        }
        if (bad) {
            return sim_plan_bad_value(&o->c, PLAN_USAGE, a);
        }
    }
    if (o->mechanism == NULL || isnan(o->c.error) || isnan(o->c.confidence)) {
        return sim_plan_usage(PLAN_USAGE, "--mechanism, --error and --confidence are required");
    }
    if ((o->c.devices > 0.0) == (o->c.eps > 0.0)) {
        return sim_plan_usage(PLAN_USAGE, "give exactly one of --devices K and --eps E");
    }
    return 0;
}

/* --metrics: a count 1..4 (tpr, fpr, accuracy, precision in that order) or distinct names. */
static int parse_metrics(const char *v, sim_plan_question_t *q)
{
    uint64_t n = 0;
    if (sim_cli_u64(v, &n) == 0) {
        if (n < 1 || n > DPM_TUPLE_MAX_METRICS) {
            return -1;
        }
        q->nmetrics = (uint32_t)n;
        memcpy(q->metrics, kDefaultMetrics, sizeof(q->metrics));
        return 0;
    }
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", v);
    q->nmetrics = 0;
    for (char *tok = strtok(buf, ", "); tok != NULL; tok = strtok(NULL, ", ")) {
        dpm_metric_t m = sim_metric_from_name(tok);
        for (uint32_t j = 0; j < q->nmetrics; j++) {
            m = q->metrics[j] == m ? (dpm_metric_t)0 : m;
        }
        if (m == 0 || q->nmetrics >= DPM_TUPLE_MAX_METRICS) {
            return -1;
        }
        q->metrics[q->nmetrics++] = m;
    }
    return q->nmetrics > 0 ? 0 : -1;
}

static int plan_question(const plan_opts_t *o, sim_plan_question_t *q)
{
    memset(q, 0, sizeof(*q));
    int mr = strcmp(o->mechanism, "tuple_mr") == 0, ml = strcmp(o->mechanism, "tuple_ml") == 0;
    int is_paper = o->split != NULL && strcmp(o->split, "paper") == 0;
    if ((!mr && !ml) || (o->split != NULL && !is_paper && strcmp(o->split, "sdk") != 0) ||
        (o->bound != NULL && strcmp(o->bound, "chebyshev") != 0 &&
         strcmp(o->bound, "normal") != 0) ||
        (o->scale != NULL && strcmp(o->scale, "metric") != 0 && strcmp(o->scale, "value") != 0)) {
        return sim_plan_usage(PLAN_USAGE, "bad --mechanism, --split, --bound or --scale");
    }
    q->nmetrics = 1;
    memcpy(q->metrics, kDefaultMetrics, sizeof(q->metrics));
    if (o->metrics != NULL && parse_metrics(o->metrics, q) != 0) {
        return sim_plan_usage(PLAN_USAGE,
                              "--metrics: a count 1..4, or distinct names of tpr, fpr, accuracy, "
                              "precision, e.g. tpr,fpr");
    }
    if (is_paper && q->nmetrics != 1) {
        return sim_plan_usage(PLAN_USAGE, "--split paper plans one metric only");
    }
    q->joint = o->joint && q->nmetrics > 1;
    q->scale_metric = o->scale == NULL || strcmp(o->scale, "metric") == 0;
    q->error = o->c.error;
    q->devices = o->c.devices;
    q->eps = o->c.eps;
    q->runs = o->c.runs_given ? (uint32_t)o->c.runs : 0u;
    double alpha = q->scale_metric ? 2.0 * o->c.error : o->c.error;
    if (dpm_disp_plan_init(&q->plan, mr ? DPM_DISP_MR : DPM_DISP_ML,
                           is_paper ? DPM_DISP_SPLIT_PAPER : DPM_DISP_SPLIT_CORRECT, alpha,
                           o->c.confidence) != DPM_OK) {
        return sim_plan_usage(PLAN_USAGE, "the planner refuses these values");
    }
    q->plan.bound = o->bound != NULL && strcmp(o->bound, "normal") == 0 ? DPM_DISP_BOUND_NORMAL
                                                                        : DPM_DISP_BOUND_CHEBYSHEV;
    q->plan.d = (uint32_t)o->groups;
    q->plan.share_g = q->plan.share_h = o->groups == 2 ? 0.5 : 1.0 / (double)o->groups;
    if (o->shares != NULL) {
        char buf[64], *comma;
        snprintf(buf, sizeof(buf), "%s", o->shares);
        comma = strchr(buf, ',');
        if (comma == NULL) {
            return sim_plan_usage(PLAN_USAGE, "--shares SG,SH");
        }
        *comma = '\0';
        if (sim_cli_double(buf, &q->plan.share_g) != 0 ||
            sim_cli_double(comma + 1, &q->plan.share_h) != 0 || !(q->plan.share_g > 0.0) ||
            !(q->plan.share_h > 0.0) || q->plan.share_g + q->plan.share_h > 1.0 + 1e-12) {
            return sim_plan_usage(PLAN_USAGE,
                                  "--shares: two positive fractions summing to at most 1");
        }
    }
    return 0;
}

static void metric_list_text(const sim_plan_question_t *q, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t j = 0; j < nmetrics(q) && n < cap; j++) {
        int w = snprintf(buf + n, cap - n, "%s%s", j ? ", " : "", sim_metric_name(metrics(q)[j]));
        n += w > 0 ? (size_t)w : 0;
    }
}

static void plan_print(const sim_plan_question_t *q, const sim_plan_answer_t *a,
                       const char *mechanism)
{
    const dpm_disp_plan_t *p = &q->plan;
    uint32_t m = nmetrics(q);
    char list[64];
    metric_list_text(q, list, sizeof(list));
    printf("planner (analytic): %s, %s split%s, %u groups (compared shares %.4g / %.4g), %u "
           "metric%s per report (%s), %s bound, worst-case nu2\n",
           mechanism, paper(q) ? "PAPER" : "SDK",
           paper(q) ? " (REPRODUCTION ONLY: not the stated eps)" : "", p->d, p->share_g, p->share_h,
           m, m > 1 ? "s" : "", list, p->bound == DPM_DISP_BOUND_NORMAL ? "normal" : "Chebyshev");
    sim_plan_print_trust(SIM_PLAN_TRUST_LOCAL_TEXT);
    printf("  question: |disparity error| <= %g on the %s scale (alpha = %g on [-1, 1]) with "
           "probability >= %g, %s\n",
           q->error, q->scale_metric ? "metric [0, 1]" : "value [-1, 1]", p->alpha, p->confidence,
           m == 1     ? "for the metric's gap"
           : q->joint ? "for every metric's gap at once (each planned at 1 - (1 - c) / m)"
                      : "for each metric's gap");
    printf("  error planned for: the estimated gap m_g - m_h against the population's true gap "
           "(the mechanism's noise; every device reports once), any metric values (worst-case "
           "nu2)%s\n",
           m > 1 ? "; the SDK splits eps over the report's metrics (eps/m each)" : "");
    if (a->none != NULL) {
        printf("  answer: none: %s\n", a->none);
        return;
    }
    if (sim_plan_print_answer(q->devices, a->eps, a->eps_campaign, a->devices) != 0) {
        return;
    }
    printf("  predicted gap MSE %.4g (RMSE %.4g on [-1, 1]) per metric; the bound allows MSE "
           "<= %.4g\n",
           a->mse, sqrt(a->mse), a->target_mse);
    sim_plan_print_margin(p->confidence, a->design, a->runs, q->joint ? 1u : m, q->devices > 0.0,
                          a->devices, a->design_devices, a->design_eps);
}

static int plan_json(const char *path, const sim_plan_question_t *q, const sim_plan_answer_t *a,
                     const char *mechanism)
{
    jw_t w;
    FILE *f = sim_plan_json_begin(path, &w, mechanism, SIM_PLAN_TRUST_LOCAL,
                                  a->checked ? &a->search : NULL,
                                  q->devices > 0.0 ? q->devices : a->devices);
    if (f == NULL) {
        return -1;
    }
    char list[64];
    metric_list_text(q, list, sizeof(list));
    jw_raw(&w, ",\n  \"question\": {");
    sim_plan_json_text(&w, 0, "split", paper(q) ? "paper" : "sdk");
    sim_plan_json_text(&w, 1, "metrics", list);
    sim_plan_json_text(&w, 1, "scale", q->scale_metric ? "metric" : "value");
    sim_plan_json_text(&w, 1, "bound",
                       q->plan.bound == DPM_DISP_BOUND_NORMAL ? "normal" : "chebyshev");
    static const char *const qk[] = {"groups", "share_g",    "share_h", "joint",
                                     "error",  "confidence", "devices", "eps"};
    double qv[] = {q->plan.d,
                   q->plan.share_g,
                   q->plan.share_h,
                   q->joint,
                   q->error,
                   q->plan.confidence,
                   q->devices > 0.0 ? q->devices : NAN,
                   q->eps > 0.0 ? q->eps : NAN};
    sim_plan_json_nums(&w, 1, qk, qv, sizeof(qv) / sizeof(qv[0]));
    jw_raw(&w, "},\n  \"answer\": {");
    sim_plan_json_text(&w, 0, "none", a->none);
    static const char *const ak[] = {
        "eps",           "eps_campaign",    "devices",        "gap_mse",
        "target_mse",    "design_coverage", "design_devices", "design_eps_campaign",
        "design_gap_sd", "devices_verified"};
    double av[] = {a->eps,
                   a->eps_campaign,
                   a->devices,
                   a->mse,
                   a->target_mse,
                   a->design,
                   a->design_devices,
                   a->design_eps,
                   a->sd_design,
                   a->checked && a->search.found ? a->search.devices : NAN};
    sim_plan_json_nums(&w, 1, ak, av, sizeof(av) / sizeof(av[0]));
    jw_raw(&w, "}");
    return sim_plan_json_end(f, &w, path);
}

int sim_cmd_plan_tuple(int argc, char **argv)
{
    plan_opts_t o;
    sim_plan_question_t q;
    sim_plan_answer_t a;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(PLAN_USAGE, stdout);
        return SIM_EXIT_OK;
    }
    int st = plan_parse(argc, argv, &o);
    if (st == 0) {
        st = plan_question(&o, &q);
    }
    if (st != 0) {
        return st;
    }
    if (sim_plan_solve(&q, &a) != 0) {
        fprintf(stderr, "dpm-sim plan: the planner refuses this question%s%s\n",
                a.none != NULL ? ": " : "", a.none != NULL ? a.none : "");
        return SIM_EXIT_USAGE;
    }
    plan_print(&q, &a, o.mechanism);
    char err[512];
    if (o.c.check && sim_plan_check(&q, &a, o.c.seed, stdout, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim plan: check failed to run: %s\n", err);
        return SIM_EXIT_USAGE;
    }
    if (o.c.check && !a.checked) {
        printf("check by simulation: skipped (%s)\n", a.why);
    } else if (o.c.check) {
        sim_plan_print_verdict(&a.search, q.devices > 0.0 ? q.devices : a.devices, q.devices > 0.0);
    }
    if (o.c.json != NULL && plan_json(o.c.json, &q, &a, o.mechanism) != 0) {
        return SIM_EXIT_USAGE;
    }
    return a.checked && !a.search.found ? SIM_EXIT_CHECK : SIM_EXIT_OK;
}

int sim_cmd_plan(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--mechanism") == 0 && strcmp(argv[i + 1], "roc_hist") == 0) {
            return sim_cmd_plan_roc(argc, argv);
        }
        if (strcmp(argv[i], "--mechanism") == 0 && strcmp(argv[i + 1], "roc_hist_groups") == 0) {
            return sim_cmd_plan_rocg(argc, argv);
        }
    }
    return sim_cmd_plan_tuple(argc, argv);
}
