/* SPDX-License-Identifier: Apache-2.0 */
/* What the simulator's mechanism modules share (see mech_common.h). */
#include "dpm/expert/simulator.h"
#include "sim/devices/mech_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "estimate/ci_flags.h"
#include "estimate/roc.h"
#include "sim/devices/sim_cfg.h"

int sim_mech_every_device(const sim_cfg_t *cfg, const sim_block_t *b)
{
    (void)cfg;
    (void)b;
    return 1;
}

int sim_mech_refused(const sim_cfg_t *cfg, const char *why, char *err, size_t errcap)
{
    snprintf(err, errcap, "campaign '%s' eps %s: the SDK refuses it: %s", cfg->spec->name,
             cfg->spec->eps_text[cfg->eps_index], why);
    return -1;
}

int sim_mech_params_refused(const sim_cfg_t *cfg, char *err, size_t errcap)
{
    snprintf(err, errcap, "campaign '%s': estimator parameters refused", cfg->spec->name);
    return -1;
}

int sim_mech_sdk_init(sim_cfg_t *cfg, dpm_campaign_t *c, char *err, size_t errcap)
{
    c->id = cfg->spec->id;
    c->eps = DPM_EPS_Q16(cfg->eps);
    c->budget = DPM_EPS_Q16(cfg->eps);
    c->period_seconds = SIM_PERIOD_SECONDS;
    const char *why = "?";
    if (dpm_mech_init(&cfg->mech, c, &why) != DPM_OK) {
        return sim_mech_refused(cfg, why, err, errcap);
    }
    return 0;
}

int sim_mech_takes_no_grid(const sim_campaign_spec_t *c, const char *note, int *line, char *err,
                           size_t errcap)
{
    if (c->nmetrics != 0 || c->split_paper || c->bins_line != 0) {
        *line = c->nmetrics != 0 ? c->metrics_line : c->split_paper ? c->split_line : c->bins_line;
        snprintf(err, errcap, "takes no metrics, split, bins or edges%s", note);
        return -1;
    }
    return 0;
}

int sim_mech_group_scored(const sim_scenario_t *sc, const sim_campaign_spec_t *c, uint32_t g,
                          int *line, char *err, size_t errcap)
{
    const sim_group_spec_t *gs = &sc->group[c->groups[g]];
    if (!gs->scores.set && !gs->data) {
        *line = c->groups_line;
        snprintf(err, errcap, "group '%s' has no scores = binormal(...)", gs->name);
        return -1;
    }
    return 0;
}

int sim_mech_all_scored(const sim_scenario_t *sc, const sim_campaign_spec_t *c, int *line,
                        char *err, size_t errcap)
{
    for (uint32_t g = 0; g < c->ngroups; g++) {
        if (sim_mech_group_scored(sc, c, g, line, err, errcap) != 0) {
            return -1;
        }
    }
    return 0;
}

int sim_mech_items(sim_cfg_t *cfg, const char *metric, uint32_t n, const char *const *kind,
                   const char *const *name, const double *truth, char *err, size_t errcap)
{
    if (sim_cfg_items(cfg, n) != 0) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        sim_item_t *it = &cfg->items[i];
        snprintf(it->metric, sizeof(it->metric), "%s", metric);
        snprintf(it->kind, sizeof(it->kind), "%s", kind[i]);
        snprintf(it->name, sizeof(it->name), "%s", name[i]);
        it->truth = truth[i];
    }
    return 0;
}

void sim_mech_measured(const sim_cfg_t *cfg, int include[SIM_MAX_GROUPS])
{
    for (uint32_t g = 0; g < SIM_MAX_GROUPS; g++) {
        include[g] = cfg->group_map[g] >= 0;
    }
}

int sim_mech_roc_model(const sim_cfg_t *cfg, const sim_pop_t *pop, const uint32_t *edges,
                       uint32_t nedges, const char *what, sim_roc_model_t **model, char *err,
                       size_t errcap)
{
    *model = malloc(sizeof(**model));
    if (*model == NULL || sim_roc_model_init(*model, cfg->sc, pop, edges, nedges) != 0) {
        free(*model);
        *model = NULL;
        snprintf(err, errcap, "campaign '%s': out of memory for the %s model", cfg->spec->name,
                 what);
        return -1;
    }
    return 0;
}

int sim_mech_binned_auc(const sim_cfg_t *cfg, const uint64_t *pos, const uint64_t *neg,
                        uint32_t bins, double *tpr, double *fpr, double *auc, char *err,
                        size_t errcap)
{
    if (dpm_roc_exact(pos, neg, bins, tpr, fpr, auc) != DPM_OK) {
        snprintf(err, errcap,
                 "campaign '%s': the population has no positive or no negative example (raise "
                 "devices)",
                 cfg->spec->name);
        return -1;
    }
    return 0;
}

void sim_mech_release_model(sim_cfg_t *cfg)
{
    sim_roc_model_destroy((sim_roc_model_t **)(void *)cfg->state.bytes);
}

dpm_status_t sim_mech_hist_report(const sim_cfg_t *cfg, const sim_roc_model_t *model,
                                  const sim_block_t *b, uint64_t device, uint32_t run,
                                  int64_t group, dpm_rand_t *r, dpm_report_t *rep)
{
    if (model == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_score_hist_t h;
    dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
    dpm_receipt_t rc;
    dpm_status_t st = sim_roc_device_hist(model, &cfg->mech.params.roc_hist, b, device, &h);
    if (st == DPM_OK) {
        st = dpm_receipt_unmetered(&iss, &cfg->mech, run, &rc);
    }
    if (st == DPM_OK) {
        st = group < 0 ? dpm_mech_report_roc_hist(&cfg->mech, r, &iss, &rc, &h, rep)
                       : dpm_mech_report_roc_hist_group(&cfg->mech, r, &iss, &rc, (uint32_t)group,
                                                        &h, rep);
    }
    return st;
}

void sim_mech_noised_sums(sim_rng_t *rng, uint64_t n, double t, const uint64_t *count, uint32_t len,
                          int64_t *sum)
{
    for (uint32_t i = 0; i < len; i++) {
        sum[i] = (int64_t)count[i] + sim_rng_dlap_sum(rng, n, t);
    }
}

uint32_t sim_mech_prc_nitems(uint32_t groups)
{
    return 2u * groups + 4u;
}

void sim_mech_prc_items(sim_cfg_t *cfg, uint32_t first, uint32_t groups, const double *ap,
                        const double *ece)
{
    static const char *const metric[2] = {"ap", "ece"};
    for (uint32_t m = 0; m < 2; m++) {
        const double *v = m ? ece : ap;
        double max = v[0], min = v[0];
        for (uint32_t g = 0; g < groups; g++) {
            sim_item_t *it = &cfg->items[first + m * groups + g];
            snprintf(it->metric, sizeof(it->metric), "%s", metric[m]);
            snprintf(it->kind, sizeof(it->kind), "%s_group", metric[m]);
            snprintf(it->name, sizeof(it->name), "%s", sim_cfg_group_name(cfg, g));
            it->g = (int)g;
            it->h = -1;
            it->truth = v[g];
            max = fmax(max, v[g]);
            min = fmin(min, v[g]);
        }
        for (uint32_t r = 0; r < 2; r++) {
            sim_item_t *it = &cfg->items[first + 2 * groups + 2 * m + r];
            snprintf(it->metric, sizeof(it->metric), "%s", metric[m]);
            snprintf(it->kind, sizeof(it->kind), "%s_%s", metric[m], r ? "ratio" : "difference");
            snprintf(it->name, sizeof(it->name), "%s", r ? "min/max" : "max-min");
            it->g = it->h = -1;
            it->truth = r ? (max > 0.0 ? min / max : NAN) : max - min;
        }
    }
}

/* An item's run from a group's estimate (nothing when it is undefined: the run stays NaN). */
static void prc_run(const dpm_prc_group_t *e, sim_item_run_t *o)
{
    if (e->defined) {
        o->est = e->est;
        o->sd = e->sd;
        o->lo = e->ci_lo;
        o->hi = e->ci_hi;
        o->flags = e->flags;
    }
}

/* The interval of one side of a comparison (the difference or the ratio): its bounds with the
 * comparison's flags when that side is defined, else no claim (the bounds stay NaN). */
static void compare_interval(int defined, double lo, double hi, unsigned flags, sim_item_run_t *o)
{
    if (defined) {
        o->lo = lo;
        o->hi = hi;
        o->flags = flags;
    } else {
        o->flags = DPM_CI_SMALL_N;
    }
}

void sim_mech_prc_runs(const dpm_roc_groups_prc_t *f, sim_item_run_t *out)
{
    uint32_t G = f->groups;
    for (uint32_t m = 0; m < 2; m++) {
        const dpm_prc_group_t *e = m ? f->ece : f->ap;
        const dpm_prc_compare_t *c = m ? &f->ece_compare : &f->ap_compare;
        double max = -INFINITY, min = INFINITY;
        int all = 1;
        for (uint32_t g = 0; g < G; g++) {
            prc_run(&e[g], &out[m * G + g]);
            all &= e[g].defined;
            max = fmax(max, e[g].est);
            min = fmin(min, e[g].est);
        }
        sim_item_run_t *d = &out[2 * G + 2 * m], *r = d + 1;
        /* the estimates even without an interval (a group with no claim): NaN bounds */
        d->est = c->defined ? c->difference : all ? max - min : NAN;
        r->est = c->ratio_defined ? c->ratio : all && max > 0.0 ? min / max : NAN;
        compare_interval(c->defined, c->difference_lo, c->difference_hi, c->flags, d);
        compare_interval(c->ratio_defined, c->ratio_lo, c->ratio_hi, c->flags, r);
    }
}
