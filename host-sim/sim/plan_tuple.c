/* SPDX-License-Identifier: Apache-2.0 */
/* The tuple planner and its simulation check (see plan_tuple.h). */
#include "sim/plan_tuple.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli.h"
#include "sim/mech_tuple.h"
#include "sim/mechs.h"
#include "sim/progress.h"

/* ---- tuple_mr / tuple_ml ------------------------------------------------------------------ */

int sim_plan_solve(const sim_plan_question_t *q, sim_plan_answer_t *a)
{
    memset(a, 0, sizeof(*a));
    a->eps = q->eps > 0.0 ? q->eps : NAN;
    a->devices = q->devices > 0.0 ? q->devices : NAN;
    /* given ε: plan at the ε a campaign given it carries (rounded down), never at more */
    a->eps_campaign = q->eps > 0.0 ? sim_plan_eps_down(q->eps) : NAN;
    if (dpm_disp_plan_target_mse(&q->plan, &a->target_mse) != DPM_OK ||
        (q->eps > 0.0 && !(a->eps_campaign > 0.0))) {
        return -1;
    }
    dpm_status_t st = q->devices > 0.0
                          ? dpm_disp_plan_min_eps(&q->plan, q->devices, &a->eps)
                          : dpm_disp_plan_min_devices(&q->plan, a->eps_campaign, &a->devices);
    if (st != DPM_OK && !(st == DPM_ERR_RANGE && q->devices <= 0.0)) {
        return -1;
    }
    if (st == DPM_ERR_RANGE) {
        a->devices = NAN; /* more than 2^53 devices */
    }
    if (q->devices > 0.0 && isfinite(a->eps)) {
        a->eps_campaign = sim_plan_eps_up(a->eps); /* the smallest campaign eps that meets it */
    }
    if (isfinite(a->eps_campaign) && isfinite(a->devices)) {
        (void)dpm_disp_plan_mse(&q->plan, a->devices, a->eps_campaign, &a->mse);
    } else {
        a->mse = NAN;
    }
    return 0;
}

/* The planner's worst-case population and the planned campaign, as a scenario. */
static int plan_scenario(const sim_plan_question_t *q, const sim_plan_answer_t *a, uint32_t runs,
                         uint64_t seed, sim_scenario_t *sc, char *err, size_t errcap)
{
    const dpm_disp_plan_t *p = &q->plan;
    sim_plan_scenario_base(sc, "plan-check", a->devices, runs, seed, p->confidence, 40);
    sc->ngroups = p->d;
    double rest = 1.0 - p->share_g - p->share_h;
    if ((p->d == 2 && fabs(rest) > 1e-9) || (p->d > 2 && !(rest > 0.0))) {
        snprintf(err, errcap,
                 "the shares of the two compared groups must sum to 1 with 2 "
                 "groups, and to less than 1 with more");
        return -1;
    }
    for (uint32_t g = 0; g < p->d; g++) {
        sim_group_spec_t *gs = &sc->group[g];
        snprintf(gs->name, sizeof(gs->name), "g%u", g % 100u);
        gs->share = g == 0 ? p->share_g : g == 1 ? p->share_h : rest / (p->d - 2);
        gs->share_line = 1;
        sim_dist_t *tpr = &gs->metric[DPM_METRIC_TPR - 1];
        tpr->kind = SIM_DIST_CONSTANT;
        tpr->value.num = 1; /* metric 1/2: v = 0 (M_R); metric 1: v = 1 (M_L) */
        tpr->value.den = p->mech == DPM_DISP_MR ? 2 : 1;
    }
    sim_campaign_spec_t *c = &sc->campaign[0];
    sc->ncampaigns = 1;
    snprintf(c->name, sizeof(c->name), "plan");
    c->id = 1;
    c->mechanism = p->mech == DPM_DISP_MR ? DPM_MECH_ID_TUPLE_MR : DPM_MECH_ID_TUPLE_ML;
    c->split_paper = p->split == DPM_DISP_SPLIT_PAPER;
    c->neps = 1;
    /* the campaign's eps = line, read as a scenario reads it */
    dpm_eps_t q16 = (dpm_eps_t)llround(a->eps_campaign * 65536.0);
    sim_plan_eps_text(q16, c->eps_text[0], sizeof(c->eps_text[0]));
    if (dpm_eps_from_decimal(c->eps_text[0], &c->eps[0]) != DPM_OK || c->eps[0] != q16) {
        snprintf(err, errcap, "the campaign eps %.17g is no Q16.16 value", a->eps_campaign);
        return -1;
    }
    c->nmetrics = 1;
    c->metrics[0] = DPM_METRIC_TPR;
    c->ngroups = p->d;
    for (uint32_t g = 0; g < p->d; g++) {
        c->groups[g] = g;
    }
    c->mech = sim_mech_by_id(c->mechanism);
    return 0;
}

int sim_plan_check(const sim_plan_question_t *q, sim_plan_answer_t *a, uint32_t runs, uint64_t seed,
                   char *err, size_t errcap)
{
    a->checked = 0;
    a->why = sim_plan_uncheckable(a->eps, a->devices, a->eps_campaign);
    if (a->why != NULL) {
        return 0;
    }
    sim_scenario_t *sc = malloc(sizeof(*sc));
    if (sc == NULL || plan_scenario(q, a, runs, seed, sc, err, errcap) != 0) {
        free(sc);
        return -1;
    }
    sim_cfg_t *probe = malloc(sizeof(*probe));
    char why[256];
    int built = probe != NULL && sim_cfg_init(probe, sc, 0, 0, why, sizeof(why)) == 0;
    free(probe);
    if (!built) {
        a->why = "the mechanism cannot be built at this eps (e.g. the paper's M_L with k = eps "
                 "beyond the value grid)";
        free(sc);
        return 0;
    }
    sim_session_t s;
    double start;
    if (sim_plan_session_run(sc, 1, &s, &start, err, errcap) != 0) {
        free(sc);
        return -1;
    }
    const sim_result_t *r = &s.res[0];
    double x = q->scale_metric ? q->error : q->error / 2.0; /* results are on the metric scale */
    a->runs = runs;
    a->within = 0;
    uint32_t gap = sim_tuple_item(&r->cfg, 0, 0, 1); /* the gap g0 - g1 */
    double truth = r->cfg.items[gap].truth;
    for (uint32_t run = 0; run < runs; run++) {
        a->within += fabs(sim_result_at(r, run, gap)->est - truth) <= x;
    }
    a->pass = sim_plan_verdict(a->within, runs, q->plan.confidence, &a->p_value);
    a->checked = 1;
    a->seconds = sim_now() - start;
    sim_session_free(&s);
    free(sc);
    return 0;
}

/* ---- dpm-sim plan ------------------------------------------------------------------------- */

static const char PLAN_USAGE[] =
    "usage: dpm-sim plan --mechanism tuple_mr|tuple_ml --error X --confidence C\n"
    "       (roc_hist: dpm-sim plan --mechanism roc_hist --help)\n"
    "                    (--devices K | --eps E) [--groups D] [--shares SG,SH]\n"
    "                    [--bound chebyshev|normal] [--scale metric|value] [--split sdk|paper]\n"
    "                    [--runs R] [--seed S] [--no-check]\n"
    "  Answers: the smallest eps (given K devices) or the fewest devices (given eps) such\n"
    "  that the disparity between two groups is estimated within X with probability C,\n"
    "  from the analytic variance (worst-case second moment), then checks it by simulation\n"
    "  (exact mode, R runs, default 200; PASS only when the simulated coverage reaches C).\n"
    "  --scale metric (default): X on the metric's [0, 1] scale; value: on [-1, 1] (the\n"
    "  paper's tables). --groups: d (default 2); --shares: the two groups' fractions of the\n"
    "  devices (default 1/2, 1/2 for d = 2, 1/d each otherwise). --bound chebyshev (default,\n"
    "  the paper's) or normal. --split paper: REPRODUCTION ONLY (not the stated eps).\n";

static int plan_usage(const char *what)
{
    fprintf(stderr, "dpm-sim plan: %s\n%s", what, PLAN_USAGE);
    return SIM_EXIT_USAGE;
}

typedef struct {
    const char *mechanism, *split, *bound, *scale, *shares;
    sim_plan_cli_t c;
    uint64_t groups;
} plan_opts_t;

static int plan_parse(int argc, char **argv, plan_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    sim_plan_cli_init(&o->c);
    o->groups = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--no-check") == 0) {
            o->c.check = 0;
            continue;
        }
        if (v == NULL) {
            return plan_usage("an option is missing its value");
        }
        i++;
        if (sim_plan_cli_option(&o->c, a, v, &bad)) {
            /* shared with roc_hist */
        } else if (strcmp(a, "--mechanism") == 0) {
            o->mechanism = v;
        } else if (strcmp(a, "--split") == 0) {
            o->split = v;
        } else if (strcmp(a, "--bound") == 0) {
            o->bound = v;
        } else if (strcmp(a, "--scale") == 0) {
            o->scale = v;
        } else if (strcmp(a, "--shares") == 0) {
            o->shares = v;
        } else if (strcmp(a, "--groups") == 0) {
            bad =
                sim_cli_u64(v, &o->groups) != 0 || o->groups < 2 || o->groups > DPM_DISP_MAX_GROUPS;
        } else {
            return plan_usage("unknown option");
        }
        if (bad) {
            char msg[256];
            snprintf(msg, sizeof(msg), "bad value for %s%s%s", a, o->c.why[0] ? ": " : "",
                     o->c.why);
            return plan_usage(msg);
        }
    }
    if (o->mechanism == NULL || isnan(o->c.error) || isnan(o->c.confidence)) {
        return plan_usage("--mechanism, --error and --confidence are required");
    }
    if ((o->c.devices > 0.0) == (o->c.eps > 0.0)) {
        return plan_usage("give exactly one of --devices K and --eps E");
    }
    return 0;
}

static int plan_question(const plan_opts_t *o, sim_plan_question_t *q)
{
    memset(q, 0, sizeof(*q));
    int mr = strcmp(o->mechanism, "tuple_mr") == 0, ml = strcmp(o->mechanism, "tuple_ml") == 0;
    int paper = o->split != NULL && strcmp(o->split, "paper") == 0;
    if ((!mr && !ml) || (o->split != NULL && !paper && strcmp(o->split, "sdk") != 0) ||
        (o->bound != NULL && strcmp(o->bound, "chebyshev") != 0 &&
         strcmp(o->bound, "normal") != 0) ||
        (o->scale != NULL && strcmp(o->scale, "metric") != 0 && strcmp(o->scale, "value") != 0)) {
        return plan_usage("bad --mechanism, --split, --bound or --scale");
    }
    q->scale_metric = o->scale == NULL || strcmp(o->scale, "metric") == 0;
    q->error = o->c.error;
    q->devices = o->c.devices;
    q->eps = o->c.eps;
    double alpha = q->scale_metric ? 2.0 * o->c.error : o->c.error;
    if (dpm_disp_plan_init(&q->plan, mr ? DPM_DISP_MR : DPM_DISP_ML,
                           paper ? DPM_DISP_SPLIT_PAPER : DPM_DISP_SPLIT_CORRECT, alpha,
                           o->c.confidence) != DPM_OK) {
        return plan_usage("the planner refuses these values");
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
            return plan_usage("--shares SG,SH");
        }
        *comma = '\0';
        if (sim_cli_double(buf, &q->plan.share_g) != 0 ||
            sim_cli_double(comma + 1, &q->plan.share_h) != 0 || !(q->plan.share_g > 0.0) ||
            !(q->plan.share_h > 0.0) || q->plan.share_g + q->plan.share_h > 1.0 + 1e-12) {
            return plan_usage("--shares: two positive fractions summing to at most 1");
        }
    }
    return 0;
}

static void plan_print(const sim_plan_question_t *q, const sim_plan_answer_t *a,
                       const plan_opts_t *o)
{
    const dpm_disp_plan_t *p = &q->plan;
    printf("planner (analytic): %s, %s split%s, %u groups (compared shares %.4g / %.4g), %s "
           "bound, worst-case nu2\n",
           o->mechanism, p->split == DPM_DISP_SPLIT_PAPER ? "PAPER" : "SDK",
           p->split == DPM_DISP_SPLIT_PAPER ? " (REPRODUCTION ONLY: not the stated eps)" : "", p->d,
           p->share_g, p->share_h, p->bound == DPM_DISP_BOUND_NORMAL ? "normal" : "Chebyshev");
    printf("  question: |disparity error| <= %g on the %s scale (alpha = %g on [-1, 1]) with "
           "probability >= %g\n",
           q->error, q->scale_metric ? "metric [0, 1]" : "value [-1, 1]", p->alpha, p->confidence);
    printf("  error planned for: the estimated gap m_g - m_h against the population's true gap "
           "(the mechanism's noise; every device reports once), any metric values (worst-case "
           "nu2)\n");
    if (q->devices > 0.0 && isnan(a->eps)) {
        printf("  answer: with K = %.0f devices NO eps reaches it (M_R's variance floor from "
               "the Harmony coin; add devices)\n",
               q->devices);
        return;
    }
    if (sim_plan_print_answer(q->devices, q->eps, a->eps, a->eps_campaign, a->devices) != 0) {
        return;
    }
    printf("  predicted gap MSE %.4g (RMSE %.4g on [-1, 1]); the bound allows MSE <= %.4g\n",
           a->mse, sqrt(a->mse), a->target_mse);
}

static void check_print(const sim_plan_question_t *q, const sim_plan_answer_t *a, uint64_t seed)
{
    if (!a->checked) {
        printf("check by simulation: skipped (%s)\n", a->why);
        return;
    }
    printf("check by simulation (exact mode, %u runs, worst-case population, seed %llu, "
           "%.3g s):\n",
           a->runs, (unsigned long long)seed, a->seconds);
    sim_plan_print_coverage("gap", q->error, a->within, a->runs, q->plan.confidence, a->p_value,
                            a->pass);
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
        fprintf(stderr, "dpm-sim plan: the planner refuses this question\n");
        return SIM_EXIT_USAGE;
    }
    plan_print(&q, &a, &o);
    if (!o.c.check) {
        return SIM_EXIT_OK;
    }
    char err[512];
    if (sim_plan_check(&q, &a, (uint32_t)o.c.runs, o.c.seed, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim plan: check failed to run: %s\n", err);
        return SIM_EXIT_USAGE;
    }
    check_print(&q, &a, o.c.seed);
    return a.checked && !a.pass ? SIM_EXIT_CHECK : SIM_EXIT_OK;
}
