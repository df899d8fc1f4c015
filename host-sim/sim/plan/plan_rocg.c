/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist-with-groups planner and its simulation check (see plan_rocg.h). */
#include "sim/plan/plan_rocg.h"

#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/dap_tasks.h"
#include "common/edges.h"
#include "common/prob.h"
#include "dpm/expert/noise.h"
#include "estimate/roc.h"
#include "estimate/roc_central.h"
#include "mech/base/campaign_keys.h"
#include "sim/run/cli.h"
#include "sim/devices/mech_roc_groups.h"
#include "sim/devices/mechs.h"
#include "sim/pop/progress.h"

#define K_REF 1e6 /* the expected aggregate's devices: the variance scales as 1 / K */
#define EXACT_INT_MAX 9007199254740992.0

static uint32_t nitems(const sim_rocg_plan_t *q)
{
    uint32_t G = q->groups;
    return G + (q->gap_error > 0.0 ? G * (G - 1u) / 2u : 0u);
}

/* The group ε a campaign at eps gives the group's GRR: 0 (the SDK's eps / 2), or the share. */
static dpm_eps_t group_eps_of(const sim_rocg_plan_t *q, dpm_eps_t eps)
{
    return q->group_share > 0.0 ? (dpm_eps_t)floor(q->group_share * (double)eps) : 0u;
}

int sim_rocg_plan_noise(const sim_rocg_plan_t *q, dpm_eps_t eps, dpm_eps_t group_eps, double *v,
                        double *cv, const char **why)
{
    uint32_t G = q->groups, B = q->bins;
    size_t c = 2u * (size_t)B;
    uint32_t edges[DPM_MAX_BINS];
    dpm_mech_t mech;
    dpm_roc_groups_params_t p;
    edges_uniform(B, edges);
    if (sim_roc_groups_sdk_build(G, edges, B - 1u, eps, group_eps, 1, &mech, &p, why) != 0) {
        return -1;
    }
    *why = NULL;
    dpm_roc_groups_agg_t agg;
    double *mu = malloc(G * c * sizeof(double));
    dpm_roc_groups_estimate_t *est = malloc(sizeof(*est));
    if (mu == NULL || est == NULL || dpm_roc_groups_agg_init(&agg, G, B) != DPM_OK) {
        free(mu);
        free(est);
        *why = "out of memory";
        return -1;
    }
    for (uint32_t g = 0; g < G; g++) { /* one device's expected histogram */
        sim_roc_plan_model_counts(q->auc[g], q->base_rate[g], q->examples, B, mu + g * c,
                                  mu + g * c + B);
    }
    double E = q->examples;
    for (uint32_t r = 0; r < G; r++) { /* the reports in reported group r */
        double n = 0.0;
        double *m = agg.m2 + r * c * c;
        for (uint32_t g = 0; g < G; g++) {
            double k = K_REF * q->share[g] * (g == r ? p.P : p.Q); /* devices of g reporting r */
            const double *u = mu + g * c;
            n += k;
            for (size_t i = 0; i < c; i++) {
                agg.sum[r * c + i] += (int64_t)llround(k * u[i]);
                for (size_t j = i; j < c; j++) { /* E[h h^T] + s² I, the upper triangle */
                    m[i * c + j] +=
                        k * ((1.0 - 1.0 / E) * u[i] * u[j] + (i == j ? u[i] + p.noise_var : 0.0));
                }
            }
        }
        agg.n[r] = (uint64_t)llround(n);
        agg.reports += agg.n[r];
    }
    int st = dpm_roc_groups_estimate(&p, &agg, 0.95, est) == DPM_OK ? 0 : -1;
    for (uint32_t g = 0; st == 0 && cv != NULL && g < G; g++) { /* scaled to one device */
        const dpm_roc_group_estimate_t *e = &est->group[g];
        cv[g] = fmax(e->P_sd / e->P, e->N_sd / e->N) * sqrt(K_REF);
    }
    for (uint32_t i = 0; st == 0 && i < nitems(q); i++) {
        double sd = i < G ? est->group[i].sd : est->gap[i - G].sd;
        int ok = i < G ? est->group[i].ci_valid : est->gap[i - G].ci_valid;
        if (!ok) {
            *why = "the estimator has no variance for a group at these values (too few "
                   "positives or negatives expected)";
            st = -1;
        }
        v[i] = sd * sd * K_REF;
    }
    if (st != 0 && *why == NULL) {
        *why = "the estimator refuses the expected aggregate";
    }
    dpm_roc_groups_agg_free(&agg);
    free(mu);
    free(est);
    return st;
}

/* The estimator's parameters of the roc_hist_2agg campaign at eps, as the simulator builds them
 * (mech_roc_2agg.c): discrete Laplace at eps, or (delta > 0) each aggregator's discrete Gaussian
 * for (eps, delta) at squared L2 sensitivity 2 m² and p->eps the ε a device is charged for it,
 * both from dap_gauss_for_eps as the simulator takes them. 0, or -1 with why. */
static int central_params(const sim_rocg_plan_t *q, dpm_eps_t eps, dpm_roc_central_params_t *p,
                          const char **why)
{
    uint32_t G = q->groups <= DPM_ROC_CENTRAL_MAX_GROUPS ? q->groups : 0;
    if (!(q->delta > 0.0)) {
        return dpm_roc_central_params_init(p, G, q->bins, NULL, q->examples, eps, why) == DPM_OK
                   ? 0
                   : -1;
    }
    uint64_t sigma2 = 0;
    dpm_eps_t charged = 0;
    if (dap_gauss_for_eps(eps, q->delta, dpm_roc_central_l2sq(q->examples), &sigma2, &charged,
                          why) != 0) {
        return -1;
    }
    return dpm_roc_central_params_init_gauss(p, G, q->bins, NULL, q->examples, charged, sigma2,
                                             why) == DPM_OK
               ? 0
               : -1;
}

/* Per group, the items' values in order: each group's, then each gap's (the sum of its two
 * groups': their own devices, their own noise). */
static void per_item(const sim_rocg_plan_t *q, const double *per_group, double *out)
{
    uint32_t n = 0;
    for (uint32_t g = 0; g < q->groups; g++) {
        out[n++] = per_group[g];
    }
    for (uint32_t g = 0; q->gap_error > 0.0 && g < q->groups; g++) {
        for (uint32_t h = g + 1; h < q->groups; h++) {
            out[n++] = per_group[g] + per_group[h];
        }
    }
}

/* Two aggregators: K² times the aggregators' noise variance of every item (v2, items as above)
 * at campaign eps and K times the hybrid's label flips' (v; 0 without local_eps); per group K
 * times the larger count cv of the aggregators' noise (it falls as 1 / K) and sqrt(K) times the
 * flips' (cvr); the campaign's parameters into *cp (may be NULL). 0, or -1 with why. */
static int plan_noise_2agg(const sim_rocg_plan_t *q, dpm_eps_t eps, double *v, double *v2,
                           double *cv, double *cvr, dpm_roc_central_params_t *cp, const char **why)
{
    uint32_t G = q->groups, B = q->bins;
    dpm_roc_central_params_t p;
    if (q->examples > DPM_ROC_CENTRAL_MAX_EXAMPLES) {
        *why = "two aggregators: more than 255 examples per device (a Prio3 entry holds 8 bits)";
        return -1;
    }
    if (central_params(q, eps, &p, why) != 0 ||
        (q->local_eps != 0 && dpm_roc_central_params_set_local(&p, q->local_eps, why) != DPM_OK)) {
        return -1;
    }
    if (cp != NULL) {
        *cp = p;
    }
    const double s2 = (double)p.roc.central_draws * p.roc.noise_var, f = p.label_flip;
    const double d = 1.0 - 2.0 * f, c1 = ((1.0 - f) * (1.0 - f) + f * f) / (d * d);
    double g1[DPM_ROC_GROUPS_MAX], g2[DPM_ROC_GROUPS_MAX];
    for (uint32_t g = 0; g < G; g++) {
        double pos[DPM_MAX_BINS], neg[DPM_MAX_BINS], P = 0.0, N = 0.0, fc = NAN, fr = NAN;
        sim_roc_plan_model_counts(q->auc[g], q->base_rate[g], q->examples, B, pos, neg);
        for (uint32_t b = 0; b < B; b++) {
            P += pos[b];
            N += neg[b];
        }
        if (dpm_roc_plan_flip_factors(pos, neg, B, f, &fc, &fr) != DPM_OK || !(P > 0.0) ||
            !(N > 0.0)) {
            *why = "a group's model has no positive or no negative example";
            return -1;
        }
        const double w = q->share[g];
        g2[g] = s2 * fc / (w * w);
        g1[g] = fr / w;
        if (cv != NULL) { /* a class total's debiased sum: B cells of the aggregators' noise, and
                           * the flips of every example of the group (q (1 - q) / d² each) */
            cv[g] = sqrt(s2 * c1 * B) / (w * fmin(P, N));
            cvr[g] = sqrt(f * (1.0 - f) / (d * d) * (P + N) / w) / fmin(P, N);
        }
    }
    per_item(q, g2, v2);
    per_item(q, g1, v);
    *why = NULL;
    return 0;
}

/* The planned trust model's noise at eps: v (K Var) and v2 (K² Var); cp (may be NULL): the
 * two-aggregator campaign's parameters; cv, cvr (may be NULL): the count cv's parts, / K and
 * / sqrt(K) (local DP: cvr 0). */
static int plan_noise(const sim_rocg_plan_t *q, dpm_eps_t eps, double *v, double *v2, double *cv,
                      double *cvr, dpm_roc_central_params_t *cp, const char **why)
{
    uint32_t n = nitems(q);
    if (q->two_aggregators) {
        return plan_noise_2agg(q, eps, v, v2, cv, cvr, cp, why);
    }
    memset(v2, 0, n * sizeof(*v2));
    if (cvr != NULL) {
        memset(cvr, 0, q->groups * sizeof(*cvr));
    }
    return sim_rocg_plan_noise(q, eps, group_eps_of(q, eps), v, cv, why);
}

/* An item's variance at K devices, and the fewest K at which its sd is at most sd. */
static double var_at(const sim_rocg_item_t *it, double k)
{
    return (it->v_noise + it->v_sampling) / k + it->v_noise2 / (k * k);
}

static double k_for(double v1, double v2, double sd)
{
    double s2 = sd * sd; /* v1 / K + v2 / K² <= s2: K >= (v1 + sqrt(v1² + 4 v2 s2)) / (2 s2) */
    return ceil((v1 + sqrt(v1 * v1 + 4.0 * v2 * s2)) / (2.0 * s2));
}

/* The items, their targets, biases and sampling variances. 0, or -1 (a->none says why). */
static int items_init(const sim_rocg_plan_t *q, sim_rocg_plan_answer_t *a)
{
    uint32_t G = q->groups, n = 0;
    double bias[DPM_ROC_GROUPS_MAX], samp[DPM_ROC_GROUPS_MAX];
    for (uint32_t g = 0; g < G; g++) {
        double pos[DPM_MAX_BINS], neg[DPM_MAX_BINS], ab, f, gs;
        sim_roc_plan_model_counts(q->auc[g], q->base_rate[g], q->examples, q->bins, pos, neg);
        if (dpm_roc_plan_factors(pos, neg, q->bins, &ab, &f, &gs) != DPM_OK) {
            a->none = "a group's model has no positive or no negative example";
            return -1;
        }
        int model = q->kind == SIM_ROC_ERROR_MODEL;
        bias[g] = model ? ab - q->auc[g] : 0.0;
        samp[g] = model ? gs / q->share[g] : 0.0;
    }
    for (uint32_t g = 0; g < G; g++, n++) {
        sim_rocg_item_t *it = &a->item[n];
        snprintf(it->name, sizeof(it->name), "AUC g%u", g);
        it->g = it->h = g;
        it->x = q->error;
        it->bias = bias[g];
        it->v_sampling = samp[g];
    }
    for (uint32_t g = 0; q->gap_error > 0.0 && g < G; g++) {
        for (uint32_t h = g + 1; h < G; h++, n++) {
            sim_rocg_item_t *it = &a->item[n];
            snprintf(it->name, sizeof(it->name), "gap g%u-g%u", g, h);
            it->gap = 1;
            it->g = g;
            it->h = h;
            it->x = q->gap_error;
            it->bias = bias[g] - bias[h];
            it->v_sampling = samp[g] + samp[h];
        }
    }
    a->nitems = n;
    for (uint32_t i = 0; i < n; i++) {
        sim_rocg_item_t *it = &a->item[i];
        it->sd_max = sim_roc_plan_largest_sd(it->bias, it->x, q->confidence, 0);
        it->sd_design_max =
            fmin(it->sd_max, sim_roc_plan_largest_sd(it->bias, it->x, a->design, 0));
        if (isnan(it->sd_design_max)) {
            it->sd_design_max = it->sd_max;
        }
        if (isnan(it->sd_max)) {
            a->none = "the binning alone (a group's binned-AUC bias) uses up the target: no eps or "
                      "number of devices reaches it; use more bins or a larger error";
            return -1;
        }
    }
    return 0;
}

/* The fewest K meeting every item at sd limits `design` (0: sd_max, 1: sd_design_max). */
static double devices_needed(const sim_rocg_plan_answer_t *a, int design)
{
    double k = 2.0;
    for (uint32_t i = 0; i < a->nitems; i++) {
        const sim_rocg_item_t *it = &a->item[i];
        double sd = design ? it->sd_design_max : it->sd_max;
        k = fmax(k, k_for(it->v_noise + it->v_sampling, it->v_noise2, sd));
    }
    return k < EXACT_INT_MAX ? k : NAN;
}

typedef struct {
    const sim_rocg_plan_t *q;
    const sim_rocg_plan_answer_t *a;
    double devices;
    int design;
} eps_ctx_t;

/* max over items of Var(K) - sd_max²: <= 0 when every item meets its target at this ε. */
static double worst_excess(dpm_eps_t eps, void *ctx)
{
    const eps_ctx_t *x = ctx;
    double v[SIM_ROCG_MAX_ITEMS], v2[SIM_ROCG_MAX_ITEMS], worst = -INFINITY;
    const char *why = NULL;
    if (plan_noise(x->q, eps, v, v2, NULL, NULL, NULL, &why) != 0) {
        return NAN;
    }
    for (uint32_t i = 0; i < x->a->nitems; i++) {
        const sim_rocg_item_t *it = &x->a->item[i];
        double sd = x->design ? it->sd_design_max : it->sd_max, k = x->devices;
        worst = fmax(worst, (v[i] + it->v_sampling) / k + v2[i] / (k * k) - sd * sd);
    }
    return worst;
}

/* Every item's noise variance, sd and what it needs alone, at the answer's (K, ε). */
static int items_at_answer(const sim_rocg_plan_t *q, sim_rocg_plan_answer_t *a)
{
    double v[SIM_ROCG_MAX_ITEMS] = {0.0}, v2[SIM_ROCG_MAX_ITEMS] = {0.0};
    double cv[DPM_ROC_GROUPS_MAX] = {0.0};
    double cvr[DPM_ROC_GROUPS_MAX] = {0.0};
    const char *why = NULL;
    dpm_eps_t e = (dpm_eps_t)llround(a->eps_campaign * 65536.0);
    dpm_roc_central_params_t cp;
    if (plan_noise(q, e, v, v2, cv, cvr, &cp, &why) != 0) {
        a->none = why;
        return -1;
    }
    if (q->two_aggregators) {
        a->noise_var = cp.roc.noise_var;
        a->eps_charged = cp.eps / 65536.0;
        dpm_grr_t rr; /* the devices' RR as the SDK builds it: its ε0 is what holds */
        if (q->local_eps != 0 && dpm_rr_init(&rr, q->local_eps) == DPM_OK) {
            a->local_eps_implemented = rr.eps_implemented / 65536.0;
            a->label_flip = cp.label_flip;
        }
    }
    a->group_eps_campaign =
        q->two_aggregators ? NAN : (group_eps_of(q, e) ? group_eps_of(q, e) : e / 2u) / 65536.0;
    for (uint32_t i = 0; i < a->nitems; i++) {
        sim_rocg_item_t *it = &a->item[i];
        it->v_noise = v[i];
        it->v_noise2 = v2[i];
        it->sd = sqrt(var_at(it, a->devices));
        it->meets = it->sd <= it->sd_max;
        /* the count cv falls as 1 / sqrt(K) under local DP, as 1 / K with two aggregators (the
         * hybrid's flips: 1 / sqrt(K)) */
        const double k = a->devices, c = fmax(cv[it->g], cv[it->h]);
        const double r = fmax(cvr[it->g], cvr[it->h]);
        it->count_cv = q->two_aggregators ? sqrt(c * c / (k * k) + r * r / k) : c / sqrt(k);
        it->devices_alone = fmax(2.0, k_for(v[i] + it->v_sampling, v2[i], it->sd_max));
    }
    return 0;
}

int sim_rocg_plan_solve(const sim_rocg_plan_t *q, sim_rocg_plan_answer_t *a)
{
    memset(a, 0, sizeof(*a));
    a->eps = a->devices = a->eps_campaign = a->design = a->design_devices = a->design_eps = NAN;
    a->noise_var = a->eps_charged = a->sim_eps_charged = NAN;
    a->local_eps_implemented = a->label_flip = NAN;
    double total = 0.0;
    for (uint32_t g = 0; g < q->groups && g < DPM_ROC_GROUPS_MAX; g++) {
        if (!(q->share[g] > 0.0) || !(q->auc[g] > 0.0 && q->auc[g] < 1.0) ||
            !(q->base_rate[g] > 0.0 && q->base_rate[g] < 1.0)) {
            return -1;
        }
        total += q->share[g];
    }
    if (q->groups < 2 || q->groups > DPM_ROC_GROUPS_MAX || fabs(total - 1.0) > 1e-6 ||
        q->examples < 1 || q->bins < 2 || q->bins > DPM_ROC_GROUPS_MAX_BINS || !(q->error > 0.0) ||
        !(q->gap_error >= 0.0) || !(q->confidence > 0.0 && q->confidence < 1.0) ||
        !(q->group_share >= 0.0) || !(q->group_share < 1.0) ||
        !(q->devices > 0.0 || q->eps > 0.0) || !(q->delta >= 0.0 && q->delta <= 1e-5)) {
        return -1;
    }
    if (q->delta > 0.0 && !q->two_aggregators) {
        a->none = "noise gaussian is the two aggregators' (local DP's mechanisms draw their own)";
        return -1;
    }
    if (q->local_eps != 0 && !q->two_aggregators) {
        a->none = "local_eps is the two aggregators' hybrid (local DP's roc_hist has its own eps)";
        return -1;
    }
    if (q->two_aggregators &&
        (q->examples > DPM_ROC_CENTRAL_MAX_EXAMPLES || q->groups > DPM_ROC_CENTRAL_MAX_GROUPS)) {
        a->none = q->examples > DPM_ROC_CENTRAL_MAX_EXAMPLES
                      ? "two aggregators: more than 255 examples per device (a Prio3 entry holds 8 "
                        "bits)"
                      : "two aggregators: at most 8 groups";
        return -1;
    }
    a->runs = q->runs ? q->runs : sim_plan_default_runs(q->confidence, nitems(q));
    a->design = sim_plan_design_coverage(q->confidence, a->runs, nitems(q));
    if (items_init(q, a) != 0) {
        return 0;
    }
    a->evaluate = q->devices > 0.0 && q->eps > 0.0;
    if (q->eps > 0.0) {
        a->eps = q->eps;
        a->eps_campaign = a->design_eps = sim_plan_eps_down(q->eps);
        if (!(a->eps_campaign > 0.0)) {
            a->none = "eps rounds down to 0 in the Q16.16 a campaign carries: no campaign can run "
                      "at it (the smallest is 2^-16)";
            return -1;
        }
        a->devices = 1.0; /* items_at_answer's sd at K = 1: v */
        if (items_at_answer(q, a) != 0) {
            return -1;
        }
        if (a->evaluate) {
            a->devices = a->design_devices = q->devices;
            return items_at_answer(q, a) == 0 ? 0 : -1;
        }
        a->devices = devices_needed(a, 0);
        a->design_devices = devices_needed(a, 1);
        if (isnan(a->devices) || isnan(a->design_devices)) {
            a->devices = a->design_devices = NAN;
            a->none = "no number of devices up to 2^53 reaches it";
            return 0;
        }
        return items_at_answer(q, a) == 0 ? 0 : -1;
    }
    a->devices = a->design_devices = q->devices;
    eps_ctx_t ctx = {q, a, q->devices, 0};
    dpm_eps_t e = sim_plan_eps_search(worst_excess, &ctx);
    if (e == 0) {
        a->none = "no campaign eps (up to DPM_EPS_MAX) gives every item its target at this K: add "
                  "devices, or drop the smallest group's target";
        return 0;
    }
    a->eps = a->eps_campaign = e / 65536.0;
    ctx.design = 1;
    dpm_eps_t ed = sim_plan_eps_search(worst_excess, &ctx);
    a->design_eps = ed != 0 ? ed / 65536.0 : a->eps_campaign;
    return items_at_answer(q, a) == 0 ? 0 : -1;
}

/* ---- the check ------------------------------------------------------------------------------ */

static int plan_scenario(const sim_rocg_plan_t *q, double devices, double eps_campaign,
                         uint32_t runs, uint64_t seed, sim_scenario_t *sc)
{
    sim_plan_scenario_base(sc, "plan-check-rocg", devices, runs, seed, q->confidence, q->examples);
    sc->ngroups = q->groups;
    sim_campaign_spec_t *c = &sc->campaign[0];
    for (uint32_t g = 0; g < q->groups; g++) {
        sim_group_spec_t *gs = &sc->group[g];
        snprintf(gs->name, sizeof(gs->name), "g%u", g);
        gs->share = q->share[g];
        gs->share_line = 1;
        gs->scores.set = 1;
        gs->scores.auc = q->auc[g];
        gs->scores.base_rate = q->base_rate[g];
        gs->scores.examples = q->examples;
        gs->scores.line = 1;
        c->groups[g] = g;
    }
    sc->ncampaigns = 1;
    snprintf(c->name, sizeof(c->name), "plan");
    c->id = 1;
    c->mechanism = q->two_aggregators ? DPM_MECH_NONE : DPM_MECH_ID_ROC_HIST;
    c->mech = sim_mech_find(q->two_aggregators ? "roc_hist_2agg" : "roc_hist_groups");
    c->max_device_examples = q->two_aggregators ? q->examples : 0u;
    if (q->delta > 0.0) { /* as a scenario's `noise = gaussian` and `delta = D` lines */
        c->noise_gauss = 1;
        c->delta = q->delta;
        c->keys_line[HOST_CK_NOISE] = c->keys_line[HOST_CK_DELTA] = 1;
    }
    if (q->local_eps != 0) { /* as a scenario's `local_eps = E0` line */
        c->local_eps = q->local_eps;
        c->keys_line[HOST_CK_LOCAL_EPS] = 1;
    }
    c->neps = 1;
    dpm_eps_t q16 = (dpm_eps_t)llround(eps_campaign * 65536.0);
    sim_plan_eps_text(q16, c->eps_text[0], sizeof(c->eps_text[0]));
    c->group_eps = q->two_aggregators ? 0u : group_eps_of(q, q16);
    c->ngroups = q->groups;
    c->nedges = q->bins - 1u;
    edges_uniform(q->bins, c->edges);
    return c->mech != NULL && dpm_eps_from_decimal(c->eps_text[0], &c->eps[0]) == DPM_OK &&
                   c->eps[0] == q16
               ? 0
               : -1;
}

/* The truth of item i in a run: the devices' binned AUCs (noise), the model's AUCs (model). */
static double truth_of(const sim_rocg_plan_t *q, const sim_rocg_item_t *it, const sim_result_t *r,
                       uint32_t i)
{
    if (q->kind == SIM_ROC_ERROR_NOISE) {
        return r->cfg.items[i].truth;
    }
    return it->gap ? q->auc[it->g] - q->auc[it->h] : q->auc[it->g];
}

/* sim_rocg_plan_check_at, and the simulated campaign's label and charged ε into rec's sim_label
 * and sim_eps_charged (rec may be NULL). */
static int check_run(const sim_rocg_plan_t *q, const sim_rocg_plan_answer_t *a, double devices,
                     uint32_t runs, uint64_t seed, uint32_t *within, double *est_sq,
                     sim_rocg_plan_answer_t *rec, char *err, size_t errcap)
{
    sim_scenario_t *sc = malloc(sizeof(*sc));
    if (sc == NULL) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    memset(within, 0, a->nitems * sizeof(*within));
    if (est_sq != NULL) {
        memset(est_sq, 0, a->nitems * sizeof(*est_sq));
    }
    int model = q->kind == SIM_ROC_ERROR_MODEL, st = 0;
    /* noise: one population, all runs; model: each run on a population of its own */
    for (uint32_t r = 0; r < (model ? runs : 1u) && st == 0; r++) {
        if (plan_scenario(q, devices, a->design_eps, model ? 1u : runs, seed + r, sc) != 0) {
            snprintf(err, errcap, "the campaign eps %.17g is no Q16.16 value", a->design_eps);
            st = -1;
            break;
        }
        sc->population_seed = model ? seed * 1000003u + r : 1u;
        sim_session_t s;
        double start;
        if (sim_plan_session_run(sc, sim_cli_default_threads(), &s, &start, err, errcap) != 0) {
            st = -1;
            break;
        }
        const sim_result_t *res = &s.res[0];
        if (rec != NULL) {
            snprintf(rec->sim_label, sizeof(rec->sim_label), "%s", res->cfg.label);
            rec->sim_eps_charged = res->cfg.eps_implemented;
        }
        for (uint32_t run = 0; run < res->runs; run++) {
            for (uint32_t i = 0; i < a->nitems; i++) {
                double e = sim_result_at(res, run, i)->est - truth_of(q, &a->item[i], res, i);
                within[i] += fabs(e) <= a->item[i].x; /* no estimate (NaN): a miss */
                if (est_sq != NULL) {
                    est_sq[i] += isnan(e) ? INFINITY : e * e;
                }
            }
        }
        sim_session_free(&s);
    }
    free(sc);
    return st;
}

int sim_rocg_plan_check_at(const sim_rocg_plan_t *q, const sim_rocg_plan_answer_t *a,
                           double devices, uint32_t runs, uint64_t seed, uint32_t *within,
                           double *est_sq, char *err, size_t errcap)
{
    return check_run(q, a, devices, runs, seed, within, est_sq, NULL, err, errcap);
}

typedef struct {
    const sim_rocg_plan_t *q;
    sim_rocg_plan_answer_t *a;
} check_ctx_t;

/* Two aggregators: the check ran the campaign the plan assumes, its charged ε the plan's at the
 * campaign ε the check runs (the simulator derives a Gaussian's sigma2 and charge itself,
 * mech_roc_2agg.c). 0, or -1 with err. */
static int same_charge(const sim_rocg_plan_t *q, const sim_rocg_plan_answer_t *a, char *err,
                       size_t errcap)
{
    dpm_roc_central_params_t p = {0};
    const char *why = NULL;
    if (!q->two_aggregators) {
        return 0;
    }
    if (central_params(q, (dpm_eps_t)llround(a->design_eps * 65536.0), &p, &why) == 0 &&
        a->sim_eps_charged == p.eps / 65536.0) {
        return 0;
    }
    snprintf(err, errcap, "the simulated campaign (%s) charges eps %.17g, the plan %.17g",
             a->sim_label, a->sim_eps_charged, why == NULL ? p.eps / 65536.0 : NAN);
    return -1;
}

static int check_fn(void *ctx, double devices, uint32_t runs, uint64_t seed, uint32_t *within,
                    char *err, size_t errcap)
{
    check_ctx_t *x = ctx;
    return check_run(x->q, x->a, devices, runs, seed, within, NULL, x->a, err, errcap) != 0
               ? -1
               : same_charge(x->q, x->a, err, errcap);
}

int sim_rocg_plan_check(const sim_rocg_plan_t *q, sim_rocg_plan_answer_t *a, uint64_t seed,
                        FILE *out, char *err, size_t errcap)
{
    a->checked = 0;
    a->why = a->none != NULL ? "no answer to check"
                             : sim_plan_uncheckable(a->eps, a->design_devices, a->design_eps);
    if (a->why != NULL) {
        return 0;
    }
    /* the simulator's aggregate bounds groups x bins (mech_roc_groups.c): say so, not fail */
    sim_scenario_t *sc = malloc(sizeof(*sc));
    int line = 0;
    char why[256];
    int ok = sc != NULL && plan_scenario(q, a->design_devices, a->design_eps, 1, seed, sc) == 0 &&
             sc->campaign[0].mech->check(sc, &sc->campaign[0], &line, why, sizeof(why)) == 0;
    free(sc);
    if (!ok) {
        a->why = q->two_aggregators ? "the simulator's two-aggregator module refuses the campaign "
                                      "(at most 8 groups)"
                                    : "the simulator's aggregate cannot hold these groups x bins "
                                      "(2 groups up to 20 bins, 4 up to 12)";
        return 0;
    }
    if (a->evaluate) {
        uint32_t within[SIM_ROCG_MAX_ITEMS];
        if (out != NULL) {
            fprintf(out,
                    "check by simulation (exact mode, %u runs of %.0f devices, %g%% "
                    "Clopper-Pearson interval on each coverage):\n",
                    a->runs, a->devices, 100.0 * SIM_PLAN_CI_LEVEL);
            fflush(out);
        }
        if (check_run(q, a, a->devices, a->runs, seed, within, NULL, a, err, errcap) != 0 ||
            same_charge(q, a, err, errcap) != 0) {
            return -1;
        }
        for (uint32_t i = 0; i < a->nitems; i++) {
            sim_rocg_item_t *it = &a->item[i];
            it->within = within[i];
            it->runs = a->runs;
            sim_plan_coverage_ci(within[i], a->runs, SIM_PLAN_CI_LEVEL, &it->lo, &it->hi);
        }
        a->checked = 1;
        return 0;
    }
    const char *names[SIM_ROCG_MAX_ITEMS];
    for (uint32_t i = 0; i < a->nitems; i++) {
        names[i] = a->item[i].name;
    }
    check_ctx_t ctx = {q, a};
    if (sim_plan_find_devices(check_fn, &ctx, names, a->nitems, q->confidence, a->runs,
                              a->design_devices, seed, out,
                              q->gap_error > 0.0 && q->gap_error != q->error ? NAN : q->error,
                              &a->search, err, errcap) != 0) {
        return -1;
    }
    a->checked = 1;
    return 0;
}

/* ---- dpm-sim plan --mechanism roc_hist_groups ---------------------------------------------- */

static const char ROCG_USAGE[] =
    "usage: dpm-sim plan --mechanism roc_hist_groups --shares S1,S2[,...] --error X\n"
    "                    --confidence C (--devices K | --eps E | both)\n"
    "                    [--gap-error Y|none] [--auc A|A1,A2,...] [--base-rate P|P1,P2,...]\n"
    "                    [--examples E] [--bins B] [--group-share F] [--error-kind model|noise]\n"
    "                    [--trust local|two_aggregators|both] [--noise laplace|gaussian]\n"
    "                    [--delta D] [--local-eps E0]\n"
    "                    [--runs R] [--seed S] [--no-check] [--json FILE]\n"
    "  roc_hist with groups: every device reports its group by GRR beside its noised\n"
    "  histogram. Answers: the smallest eps (given K devices) or the fewest devices (given\n"
    "  eps) such that every group's AUC is within X and every pairwise AUC gap within Y\n"
    "  (default X) with probability C each; with both K and eps: the table of every group and\n"
    "  gap at that K and eps (what is usable). Planned with a margin from the estimator's own\n"
    "  variance, then checked by simulation (exact mode: O(K) per run for this mechanism) with\n"
    "  a search for the K shown to reach C. Trust model (--trust): local DP (default; label-DP,\n"
    "  GRR on the group), two_aggregators (central DP at the same eps: the device's whole\n"
    "  contribution, max_device_examples = --examples; checked with roc_hist_2agg), or both,\n"
    "  side by side (--json takes one of them).\n"
    "  --noise: the two aggregators' noise, laplace (default: eps-DP) or gaussian (a discrete\n"
    "  Gaussian, the campaign's noise = gaussian; needs --delta D, in (0, 1e-5]: the eps\n"
    "  planned is the (eps, delta)-DP of its zCDP, sigma2 as the simulator derives it, and\n"
    "  the output states the eps a device is really charged); not for --trust local.\n"
    "  --local-eps E0: the two aggregators' hybrid: every device also flips each example's\n"
    "  label by randomized response at E0 before sharding, so each label keeps E0 label-DP\n"
    "  even if both aggregators collude (the campaign's local_eps); the output shows both\n"
    "  eps; not for --trust local.\n"
    "  --shares: the groups' fractions of the devices (2 .. 16 groups, summing to 1);\n"
    "  --auc, --base-rate: one value for every group or one per group (default 0.85, 0.3);\n"
    "  --examples per device (default 40); --bins uniform score bins (default 10);\n"
    "  --group-share: the fraction of eps spent on the group's GRR (default: the SDK's 1/2);\n"
    "  --error-kind model (default): against the model's AUCs (noise + sampling + binning);\n"
    "  noise: against the devices' own binned AUCs. Normal bound (the estimator's intervals).\n"
    "  Exit status: 0 answered (and verified), 1 the check found no K that reaches C,\n"
    "  2 bad usage.\n";

/* "v" or "v1,v2,...": one value for every group or one per group (n of them, or *n set by the
 * first list when 0), each in (lo, hi). 0 or -1. */
static int parse_list(const char *v, double lo, double hi, double *out, uint32_t *n)
{
    char buf[512];
    uint32_t k = 0;
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (k >= DPM_ROC_GROUPS_MAX || sim_cli_double(tok, &out[k]) != 0 || !(out[k] > lo) ||
            !(out[k] < hi)) {
            return -1;
        }
        k++;
    }
    if (k == 1 && *n > 1) {
        for (uint32_t g = 1; g < *n; g++) {
            out[g] = out[0];
        }
        return 0;
    }
    if (k == 0 || (*n != 0 && k != *n)) {
        return -1;
    }
    *n = k;
    return 0;
}

/* What rocg_option reads: the question, and the lists parsed once the groups are known. */
typedef struct {
    sim_rocg_plan_t *q;
    const char *shares, *auc, *base, *gap, *noise, *delta, *local_eps;
    int both; /* --trust both */
} rocg_args_t;

#define TEXT_OPT(name, field)                                                                      \
    {                                                                                              \
        name, offsetof(rocg_args_t, field)                                                         \
    }
static const sim_plan_text_opt_t kTextOpts[] = {
    TEXT_OPT("--shares", shares),       TEXT_OPT("--auc", auc),     TEXT_OPT("--base-rate", base),
    TEXT_OPT("--gap-error", gap),       TEXT_OPT("--noise", noise), TEXT_OPT("--delta", delta),
    TEXT_OPT("--local-eps", local_eps),
};

/* roc_hist_groups' own options (sim_plan_cli_parse). */
static int rocg_option(void *ctx, const char *a, const char *v, int *bad)
{
    rocg_args_t *x = ctx;
    sim_rocg_plan_t *q = x->q;
    uint64_t u;
    if (sim_plan_text_option(kTextOpts, sizeof(kTextOpts) / sizeof(kTextOpts[0]), x, a, v)) {
        /* kept as text: parsed once the groups are known */
    } else if (strcmp(a, "--mechanism") == 0) {
        *bad = strcmp(v, "roc_hist_groups") != 0;
    } else if (strcmp(a, "--error-kind") == 0) {
        *bad = strcmp(v, "model") != 0 && strcmp(v, "noise") != 0;
        q->kind = strcmp(v, "noise") == 0 ? SIM_ROC_ERROR_NOISE : SIM_ROC_ERROR_MODEL;
    } else if (strcmp(a, "--trust") == 0) {
        *bad =
            strcmp(v, "local") != 0 && strcmp(v, "two_aggregators") != 0 && strcmp(v, "both") != 0;
        q->two_aggregators = strcmp(v, "two_aggregators") == 0;
        x->both = strcmp(v, "both") == 0;
    } else if (strcmp(a, "--examples") == 0) {
        *bad = sim_cli_u64(v, &u) != 0 || u < 1 || u > 10000;
        q->examples = (uint32_t)u;
    } else if (strcmp(a, "--bins") == 0) {
        *bad = sim_cli_u64(v, &u) != 0 || u < 2 || u > DPM_ROC_GROUPS_MAX_BINS;
        q->bins = (uint32_t)u;
    } else if (strcmp(a, "--group-share") == 0) {
        *bad = sim_cli_double(v, &q->group_share) != 0 || !(q->group_share > 0.0) ||
               !(q->group_share < 1.0);
    } else {
        return 0;
    }
    return 1;
}

/* --noise and --delta into q->delta, read as a scenario's noise and delta keys are: 0, or a
 * usage error (printed) naming what to do. */
static int noise_parse(const rocg_args_t *x)
{
    uint32_t gauss = 0, unused = 0;
    if (x->noise != NULL &&
        host_campaign_key_value(host_campaign_key_at(HOST_CK_NOISE), x->noise, 0, &gauss) != 0) {
        return sim_plan_usage(ROCG_USAGE, "--noise: laplace or gaussian");
    }
    if (x->delta != NULL &&
        host_campaign_key_value(host_campaign_key_at(HOST_CK_DELTA), x->delta, 0, &unused) != 0) {
        return sim_plan_usage(ROCG_USAGE, "--delta: a decimal in (0, 1e-5], e.g. 1e-9");
    }
    if ((gauss || x->delta != NULL) && !x->q->two_aggregators && !x->both) {
        return sim_plan_usage(ROCG_USAGE,
                              "--noise gaussian and --delta are the two aggregators' (local DP's "
                              "mechanisms draw their own noise): add --trust two_aggregators, or "
                              "drop them");
    }
    if (gauss && x->delta == NULL) {
        return sim_plan_usage(ROCG_USAGE,
                              "--noise gaussian needs --delta D (in (0, 1e-5], e.g. 1e-9): the "
                              "campaign's eps is then the (eps, delta)-DP its zCDP gives");
    }
    if (!gauss && x->delta != NULL) {
        return sim_plan_usage(ROCG_USAGE, "--delta is for --noise gaussian (discrete Laplace is "
                                          "eps-DP): add --noise gaussian, or drop --delta");
    }
    x->q->delta = gauss ? strtod(x->delta, NULL) : 0.0; /* as the scenario reads it */
    uint32_t e0 = 0;
    if (x->local_eps != NULL && host_campaign_key_value(host_campaign_key_at(HOST_CK_LOCAL_EPS),
                                                        x->local_eps, 0, &e0) != 0) {
        return sim_plan_usage(ROCG_USAGE, "--local-eps: a plain decimal in (0, DPM_EPS_MAX], "
                                          "e.g. 2");
    }
    if (x->local_eps != NULL && !x->q->two_aggregators && !x->both) {
        return sim_plan_usage(ROCG_USAGE,
                              "--local-eps is the two aggregators' hybrid (local DP's roc_hist "
                              "has its own eps): add --trust two_aggregators or both, or drop it");
    }
    x->q->local_eps = e0;
    return 0;
}

static int rocg_parse(int argc, char **argv, sim_rocg_plan_t *q, sim_plan_cli_t *o, int *both)
{
    rocg_args_t x = {q, NULL, "0.85", "0.3", NULL, NULL, NULL, NULL, 0};
    int st = sim_plan_cli_parse(o, argc, argv, ROCG_USAGE, rocg_option, &x);
    if (st != 0) {
        return st;
    }
    *both = x.both;
    if (x.both && o->json != NULL) {
        return sim_plan_usage(ROCG_USAGE, "--json takes one trust model: --trust local or "
                                          "--trust two_aggregators");
    }
    if (noise_parse(&x) != 0) {
        return SIM_EXIT_USAGE;
    }
    const char *shares = x.shares, *auc = x.auc, *base = x.base, *gap = x.gap;
    q->groups = 0;
    if (shares == NULL || parse_list(shares, 0.0, 1.0, q->share, &q->groups) != 0 ||
        q->groups < 2) {
        return sim_plan_usage(ROCG_USAGE,
                              "--shares: 2 to 16 fractions of the devices, e.g. 0.65,0.2,0.1,0.05");
    }
    double total = 0.0;
    for (uint32_t g = 0; g < q->groups; g++) {
        total += q->share[g];
    }
    if (fabs(total - 1.0) > 1e-6) {
        return sim_plan_usage(ROCG_USAGE, "--shares must sum to 1");
    }
    if (parse_list(auc, 0.5, 1.0, q->auc, &q->groups) != 0 ||
        parse_list(base, 0.0, 1.0, q->base_rate, &q->groups) != 0) {
        return sim_plan_usage(
            ROCG_USAGE, "--auc in (0.5, 1), --base-rate in (0, 1): one value or one per group");
    }
    q->error = o->error;
    q->gap_error = gap == NULL ? o->error : strcmp(gap, "none") == 0 ? 0.0 : NAN;
    if (gap != NULL && strcmp(gap, "none") != 0 &&
        (sim_cli_double(gap, &q->gap_error) != 0 || !(q->gap_error > 0.0))) {
        return sim_plan_usage(ROCG_USAGE, "--gap-error: a positive number, or none");
    }
    q->confidence = o->confidence;
    q->devices = o->devices;
    q->eps = o->eps;
    q->runs = o->runs_given ? (uint32_t)o->runs : 0u;
    if (isnan(q->error) || isnan(q->confidence)) {
        return sim_plan_usage(ROCG_USAGE, "--error and --confidence are required");
    }
    if (!(q->devices > 0.0) && !(q->eps > 0.0)) {
        return sim_plan_usage(ROCG_USAGE, "give --devices K, --eps E, or both");
    }
    return 0;
}

static void rocg_print(const sim_rocg_plan_t *q, const sim_rocg_plan_answer_t *a)
{
    printf("planner (analytic): roc_hist with %u groups (shares", q->groups);
    for (uint32_t g = 0; g < q->groups; g++) {
        printf("%s%g", g ? ", " : " ", q->share[g]);
    }
    printf("), %u examples per device, %u uniform bins, normal bound\n", q->examples, q->bins);
    sim_plan_print_trust(!q->two_aggregators ? SIM_PLAN_TRUST_LOCAL_TEXT
                         : q->delta > 0.0    ? SIM_PLAN_TRUST_TWOAGG_GAUSS_TEXT
                                             : SIM_PLAN_TRUST_TWOAGG_TEXT);
    printf("  question: every group's |AUC error| <= %g", q->error);
    if (q->gap_error > 0.0) {
        printf(" and every gap's <= %g", q->gap_error);
    }
    printf(", each with probability >= %g\n", q->confidence);
    printf("  error planned for: %s\n",
           q->kind == SIM_ROC_ERROR_MODEL
               ? "AUC-hat against the model's AUCs (noise + sampling of the examples + binning; "
                 "--error-kind noise: the mechanism's noise only)"
               : "AUC-hat against the devices' own binned AUCs (the mechanism's noise)");
    if (a->none != NULL) {
        printf("  answer: none: %s\n", a->none);
        return;
    }
    char text[40], gtext[40] = "none: the group is in the shares";
    sim_plan_eps_text((dpm_eps_t)llround(a->eps_campaign * 65536.0), text, sizeof(text));
    if (q->delta > 0.0) {
        char ctext[40];
        sim_plan_eps_text((dpm_eps_t)llround(a->eps_charged * 65536.0), ctext, sizeof(ctext));
        printf(
            "  noise: a discrete Gaussian from each aggregator (campaign noise = gaussian, delta "
            "= %g): at campaign eps = %s its sigma2 = %.0f, and a device is charged eps = %s "
            "(the (eps, delta)-DP of the zCDP that sigma2 gives, Q16.16 rounded up)\n",
            q->delta, text, a->noise_var, ctext);
    }
    if (q->two_aggregators && q->local_eps != 0) {
        char ltext[40];
        sim_plan_eps_text((dpm_eps_t)llround(a->local_eps_implemented * 65536.0), ltext,
                          sizeof(ltext));
        printf("  hybrid: each device also flips every example's label with probability %.4g "
               "(randomized response at local eps0 = %s, as implemented) before sharding. Two "
               "guarantees: the campaign eps for one device's whole contribution while one "
               "aggregator is honest, and eps0 label-DP for each example even if both collude "
               "(its score, the bins' example counts and its group are not covered)\n",
               a->label_flip, ltext);
    }
    if (!q->two_aggregators) {
        sim_plan_eps_text((dpm_eps_t)llround(a->group_eps_campaign * 65536.0), gtext,
                          sizeof(gtext));
    }
    if (a->evaluate) {
        printf("  at K = %.0f devices and campaign eps = %s (group_eps %s):\n", a->devices, text,
               gtext);
    } else if (q->devices > 0.0) {
        printf("  answer: K = %.0f devices -> campaign eps = %s (group_eps %s), the smallest "
               "Q16.16 that meets every item\n",
               a->devices, text, gtext);
    } else {
        printf("  answer: campaign eps = %s (group_eps %s; the Q16.16 the SDK rounds the eps "
               "given down to) -> minimum devices K = %.0f\n",
               text, gtext, a->devices);
    }
    printf("    %-12s %9s %9s %9s %11s %9s %14s\n", "item", "model", "bias", "sd", "sd allowed",
           "count cv", "K needed alone");
    int low = 0;
    for (uint32_t i = 0; i < a->nitems; i++) {
        const sim_rocg_item_t *it = &a->item[i];
        double model = it->gap ? q->auc[it->g] - q->auc[it->h] : q->auc[it->g];
        printf("    %-12s %9.4f %+9.5f %9.4g %11.4g %9.3f %14.0f%s%s\n", it->name, model, it->bias,
               it->sd, it->sd_max, it->count_cv, it->devices_alone,
               it->meets ? "" : "  <- misses its target",
               it->count_cv > SIM_ROCG_LOW_SNR ? " (low SNR)" : "");
        low |= it->count_cv > SIM_ROCG_LOW_SNR;
    }
    if (low) {
        printf("  low SNR: the noise on a group's estimated positives or negatives (count cv) is "
               "above %g of them; there the delta method understates the error (measured: "
               "1.10x at 0.19, 1.33x at 0.24): trust the simulation check\n",
               SIM_ROCG_LOW_SNR);
    }
    if (!a->evaluate) {
        sim_plan_print_margin(q->confidence, a->design, a->runs, a->nitems, q->devices > 0.0,
                              a->devices, a->design_devices, a->design_eps);
    }
}

static void evaluate_print(const sim_rocg_plan_answer_t *a, double confidence)
{
    for (uint32_t i = 0; i < a->nitems; i++) {
        const sim_rocg_item_t *it = &a->item[i];
        printf("    %-12s %u/%u = %.1f%% [%.1f, %.1f]: %s\n", it->name, it->within, it->runs,
               100.0 * it->within / it->runs, 100.0 * it->lo, 100.0 * it->hi,
               it->lo >= confidence  ? "shown to reach the target"
               : it->hi < confidence ? "shown BELOW the target"
                                     : "undecided at this number of runs");
    }
}

static int rocg_json(const char *path, const sim_rocg_plan_t *q, const sim_rocg_plan_answer_t *a)
{
    jw_t w;
    FILE *f = sim_plan_json_begin(path, &w, "roc_hist_groups",
                                  q->two_aggregators ? SIM_PLAN_TRUST_TWOAGG : SIM_PLAN_TRUST_LOCAL,
                                  a->checked && !a->evaluate ? &a->search : NULL,
                                  q->devices > 0.0 ? q->devices : a->devices);
    if (f == NULL) {
        return -1;
    }
    jw_raw(&w, ",\n  \"question\": {\"shares\": ");
    jw_nums(&w, q->share, q->groups, 9);
    jw_raw(&w, ", \"auc\": ");
    jw_nums(&w, q->auc, q->groups, 9);
    jw_raw(&w, ", \"base_rate\": ");
    jw_nums(&w, q->base_rate, q->groups, 9);
    sim_plan_json_text(&w, 1, "error_kind", q->kind == SIM_ROC_ERROR_MODEL ? "model" : "noise");
    static const char *const qk[] = {"examples",   "bins",    "error", "gap_error",
                                     "confidence", "devices", "eps",   "group_share"};
    double qv[] = {q->examples,
                   q->bins,
                   q->error,
                   q->gap_error > 0.0 ? q->gap_error : NAN,
                   q->confidence,
                   q->devices > 0.0 ? q->devices : NAN,
                   q->eps > 0.0 ? q->eps : NAN,
                   q->group_share > 0.0 ? q->group_share : 0.5};
    sim_plan_json_nums(&w, 1, qk, qv, sizeof(qv) / sizeof(qv[0]));
    if (q->two_aggregators) {
        static const char *const dk[] = {"delta"};
        double dv[] = {q->delta > 0.0 ? q->delta : NAN};
        sim_plan_json_text(&w, 1, "noise", q->delta > 0.0 ? "gaussian" : "laplace");
        sim_plan_json_nums(&w, 1, dk, dv, 1);
        static const char *const lk[] = {"local_eps"};
        double lv[] = {q->local_eps != 0 ? q->local_eps / 65536.0 : NAN};
        sim_plan_json_nums(&w, 1, lk, lv, 1);
    }
    jw_raw(&w, "},\n  \"answer\": {");
    sim_plan_json_text(&w, 0, "none", a->none);
    static const char *const ak[] = {"eps_campaign",    "group_eps_campaign", "devices",
                                     "design_coverage", "design_devices",     "design_eps_campaign",
                                     "devices_verified"};
    double av[] = {a->eps_campaign,
                   a->group_eps_campaign,
                   a->devices,
                   a->design,
                   a->design_devices,
                   a->design_eps,
                   a->checked && !a->evaluate && a->search.found ? a->search.devices : NAN};
    sim_plan_json_nums(&w, 1, ak, av, sizeof(av) / sizeof(av[0]));
    if (q->two_aggregators) { /* per aggregator and cell; the ε a device's ledger is charged */
        static const char *const nk[] = {"noise_var", "eps_charged", "eps_charged_simulated",
                                         "local_eps_implemented", "label_flip"};
        double nv[] = {a->noise_var, a->eps_charged, a->checked ? a->sim_eps_charged : NAN,
                       a->local_eps_implemented, a->label_flip};
        sim_plan_json_nums(&w, 1, nk, nv, sizeof(nv) / sizeof(nv[0]));
        sim_plan_json_text(&w, 1, "simulated_campaign", a->checked ? a->sim_label : NULL);
    }
    jw_raw(&w, ",\n    \"items\": [");
    for (uint32_t i = 0; a->none == NULL && i < a->nitems; i++) {
        const sim_rocg_item_t *it = &a->item[i];
        jw_raw(&w, "%s\n      {", i ? "," : "");
        sim_plan_json_text(&w, 0, "item", it->name);
        sim_plan_json_text(&w, 1, "kind", it->gap ? "auc_gap" : "auc_group");
        static const char *const ik[] = {"target",     "bias",     "sd",
                                         "sd_allowed", "count_cv", "devices_alone"};
        double iv[] = {it->x, it->bias, it->sd, it->sd_max, it->count_cv, it->devices_alone};
        sim_plan_json_nums(&w, 1, ik, iv, sizeof(iv) / sizeof(iv[0]));
        jw_raw(&w, ", \"meets\": %s, \"low_snr\": %s", it->meets ? "true" : "false",
               it->count_cv > SIM_ROCG_LOW_SNR ? "true" : "false");
        if (a->evaluate && a->checked) {
            double ci[2] = {it->lo, it->hi};
            jw_raw(&w, ", \"within\": %u, \"runs\": %u, \"coverage_ci\": ", it->within, it->runs);
            jw_nums(&w, ci, 2, 6);
        }
        jw_raw(&w, "}");
    }
    jw_raw(&w, "]}");
    return sim_plan_json_end(f, &w, path);
}

/* Solve, print, check one trust model's answer: the exit status (SIM_EXIT_*), *devices the
 * answer's K (the verified one when the check found it; NaN: none). */
static int plan_one(const sim_rocg_plan_t *q, const sim_plan_cli_t *o, double *devices)
{
    sim_rocg_plan_answer_t *a = malloc(sizeof(*a));
    *devices = NAN;
    if (a == NULL) {
        fprintf(stderr, "dpm-sim plan: out of memory\n");
        return SIM_EXIT_USAGE;
    }
    if (sim_rocg_plan_solve(q, a) != 0) {
        fprintf(stderr, "dpm-sim plan: the planner refuses this question%s%s\n",
                a->none != NULL ? ": " : "", a->none != NULL ? a->none : "");
        free(a);
        return SIM_EXIT_USAGE;
    }
    rocg_print(q, a);
    char err[512];
    if (o->check && sim_rocg_plan_check(q, a, o->seed, stdout, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim plan: check failed to run: %s\n", err);
        free(a);
        return SIM_EXIT_USAGE;
    }
    if (o->check && !a->checked) {
        printf("check by simulation: skipped (%s)\n", a->why);
    } else if (o->check && a->evaluate) {
        evaluate_print(a, q->confidence);
    } else if (o->check) {
        sim_plan_print_verdict(&a->search, q->devices > 0.0 ? q->devices : a->devices,
                               q->devices > 0.0);
    }
    if (o->check && a->checked && q->delta > 0.0) {
        char ctext[40];
        sim_plan_eps_text((dpm_eps_t)llround(a->sim_eps_charged * 65536.0), ctext, sizeof(ctext));
        printf("  the check simulated: %s (a device charged eps = %s)\n", a->sim_label, ctext);
    }
    *devices = a->none != NULL                                 ? NAN
               : a->checked && !a->evaluate && a->search.found ? a->search.devices
                                                               : a->devices;
    int st = o->json != NULL && rocg_json(o->json, q, a) != 0 ? SIM_EXIT_USAGE
             : a->checked && !a->evaluate && !a->search.found ? SIM_EXIT_CHECK
                                                              : SIM_EXIT_OK;
    free(a);
    return st;
}

int sim_cmd_plan_rocg(int argc, char **argv)
{
    sim_rocg_plan_t q;
    memset(&q, 0, sizeof(q));
    q.examples = 40;
    q.bins = 10;
    sim_plan_cli_t o;
    sim_plan_cli_init(&o);
    int both = 0;
    int st = rocg_parse(argc, argv, &q, &o, &both);
    if (st != 0) {
        return st == SIM_PLAN_HELP ? SIM_EXIT_OK : st;
    }
    double k_local = NAN, k_two = NAN;
    if (!both) {
        return plan_one(&q, &o, q.two_aggregators ? &k_two : &k_local);
    }
    const double delta = q.delta; /* the two aggregators' noise; local DP draws its own */
    const dpm_eps_t local_eps = q.local_eps; /* and their hybrid's label RR */
    q.two_aggregators = 0;
    q.delta = 0.0;
    q.local_eps = 0;
    int st_local = plan_one(&q, &o, &k_local);
    printf("\n");
    q.two_aggregators = 1;
    q.delta = delta;
    q.local_eps = local_eps;
    int st_two = plan_one(&q, &o, &k_two);
    if (!(q.devices > 0.0)) { /* the question was "how many devices": both answers at once */
        char noise[64] = "";
        if (delta > 0.0) {
            snprintf(noise, sizeof(noise), " (discrete Gaussian, delta %g)", delta);
        }
        printf("\nside by side (eps as given, the K %s): local DP %.0f devices, two aggregators%s "
               "%.0f devices",
               o.check ? "each check verified (else the analytic one)" : "planned", k_local, noise,
               k_two);
        if (k_local > 0.0 && k_two > 0.0) {
            printf(" (%.3g times fewer)", k_local / k_two);
        }
        printf("\n");
    }
    return st_local == SIM_EXIT_USAGE || st_two == SIM_EXIT_USAGE ? SIM_EXIT_USAGE
           : st_local != SIM_EXIT_OK                              ? st_local
                                                                  : st_two;
}
