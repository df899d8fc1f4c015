/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist_groups in the simulator (sim/devices/mech.h): a roc_hist campaign whose reports carry
 * the device's group by GRR, and every group's AUC and pairwise AUC gap (sdk:
 * dpm/expert/roc_hist.h, server: estimate/roc_groups.h). On the wire it is roc_hist (groups >= 2).
 *
 * Campaign keys: `bins` / `edges` as roc_hist, `group_eps` (the group's GRR ε, default eps / 2;
 * the histogram gets the rest), `groups` (at least 2: the device's campaign group is what it
 * reports).
 *
 * Device input: its score histogram exactly as roc_hist (roc_sim.h), its campaign group; report
 * dpm_mech_report_roc_hist_group. Aggregate: per reported group the count, the summed histogram
 * and the sum of y y^T (the estimator's second moments), inline: groups x (2B + (2B)^2) numbers
 * must fit SIM_AGG_BYTES (2 groups up to 20 bins, 4 groups up to 12).
 * Exact mode draws every device with the host's generator (its group's GRR, then discrete
 * Laplace per cell on its true histogram, each a difference of two geometrics by inversion):
 * the second moments need each report, so exact mode costs O(devices) here, as inprocess does,
 * without the SDK.
 *
 * Items: each group's AUC (kind auc_group) and each gap AUC_g - AUC_h, g < h (kind auc_gap),
 * against the devices' binned AUCs (ties 1/2), with the estimator's intervals; then the same
 * again for the unbinned AUC (kinds auc_group_unb, auc_gap_unb) against the groups' model AUCs,
 * with the intervals meant for them (unbinned_ci_total: noise, sampling and the interpolation
 * bound). Every interval carries its flags (estimate/ci_flags.h). Every gap at once
 * (dpm_roc_groups_pairwise) against the true binned gaps: results.json "selection"
 * (sim/devices/selection.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/edges.h"
#include "estimate/roc.h"
#include "estimate/roc_groups.h"
#include "sim/devices/mech_common.h"
#include "sim/devices/mech_roc_groups.h"
#include "sim/devices/results.h"
#include "sim/pop/roc_sim.h"
#include "sim/devices/selection.h"
#include "sim/devices/sim_cfg.h"
#include "estimate/pr_calibration.h"

#define Q16 65536.0
#define TWO32 4294967296.0
#define DEFAULT_BINS 10u

typedef struct {
    sim_roc_model_t *model; /* first: sim_mech_release_model */
    dpm_roc_groups_params_t params;
    uint32_t groups, bins;
    double auc[SIM_MAX_GROUPS];       /* each group's binned AUC */
    double auc_model[SIM_MAX_GROUPS]; /* each group's model AUC (the unbinned items' truth) */
    double ap[SIM_MAX_GROUPS], ece[SIM_MAX_GROUPS]; /* each group's binned AP and ECE */
} groups_state_t;

/* The aggregate's header; the sums follow it in the same bytes. */
typedef struct {
    uint64_t n[DPM_ROC_GROUPS_MAX];
    uint64_t reports;
} groups_head_t;

SIM_MECH_STATE(groups_state_t, roc_groups)
SIM_MECH_MODEL_FIRST(groups_state_t, roc_groups);

static size_t agg_bytes(uint32_t groups, uint32_t bins)
{
    size_t c = 2u * (size_t)bins;
    return sizeof(groups_head_t) + groups * c * sizeof(int64_t) + groups * c * c * sizeof(double);
}

/* The estimator's view of the inline sums (pointers into agg; no copy). */
static void view(const groups_state_t *s, const sim_agg_t *agg, dpm_roc_groups_agg_t *a)
{
    const groups_head_t *h = (const groups_head_t *)agg->data.bytes;
    size_t c = 2u * (size_t)s->bins;
    unsigned char *base = (unsigned char *)agg->data.bytes + sizeof(groups_head_t);
    memset(a, 0, sizeof(*a));
    a->groups = s->groups;
    a->bins = s->bins;
    a->reports = h->reports;
    memcpy(a->n, h->n, sizeof(a->n));
    a->sum = (int64_t *)base;
    a->m2 = (double *)(base + s->groups * c * sizeof(int64_t));
}

/* One report (reported group g, values y[2B]) into the inline sums. */
static void add(const groups_state_t *s, sim_agg_t *agg, uint32_t g, const double *y)
{
    groups_head_t *h = (groups_head_t *)agg->data.bytes;
    dpm_roc_groups_agg_t a;
    view(s, agg, &a);
    size_t c = 2u * (size_t)s->bins;
    for (size_t i = 0; i < c; i++) {
        a.sum[g * c + i] += (int64_t)y[i];
    }
    double *m = a.m2 + g * c * c;
    for (size_t i = 0; i < c; i++) { /* the upper triangle, as dpm_roc_groups_agg_add */
        for (size_t j = i; j < c; j++) {
            m[i * c + j] += y[i] * y[j];
        }
    }
    h->n[g]++;
    h->reports++;
}

/* ---- scenario and configuration ------------------------------------------------------------ */

static int groups_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                        size_t errcap)
{
    if (c->nmetrics != 0 || c->split_paper) {
        *line = c->nmetrics != 0 ? c->metrics_line : c->split_line;
        snprintf(err, errcap, "takes no metrics or split");
        return -1;
    }
    if (c->nedges == 0) {
        c->nedges = DEFAULT_BINS - 1u;
        edges_uniform(DEFAULT_BINS, c->edges);
    }
    if (c->ngroups < 2) {
        *line = c->groups_line;
        snprintf(err, errcap, "needs at least 2 groups");
        return -1;
    }
    if (agg_bytes(c->ngroups, c->nedges + 1) > SIM_AGG_BYTES) {
        *line = c->bins_line != 0 ? c->bins_line : c->groups_line;
        snprintf(err, errcap,
                 "%u groups x %u bins do not fit the simulator's aggregate (groups x (2B + "
                 "(2B)^2) x 8 bytes <= %u: e.g. 2 groups up to 20 bins, 4 up to 12)",
                 c->ngroups, c->nedges + 1, SIM_AGG_BYTES);
        return -1;
    }
    return sim_mech_all_scored(sc, c, line, err, errcap);
}

int sim_roc_groups_sdk_build(uint32_t groups, const uint32_t *edges, uint32_t nedges, dpm_eps_t eps,
                             dpm_eps_t group_eps, uint32_t id, dpm_mech_t *m,
                             dpm_roc_groups_params_t *p, const char **why)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = id;
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.eps = DPM_EPS_Q16(eps);
    c.budget = DPM_EPS_Q16(eps);
    c.period_seconds = SIM_PERIOD_SECONDS;
    c.nbins = nedges;
    memcpy(c.bin_edges, edges, nedges * sizeof(edges[0]));
    c.groups = groups;
    c.group_eps = DPM_EPS_Q16(group_eps);
    *why = "?";
    if (dpm_mech_init(m, &c, why) != DPM_OK) {
        return -1;
    }
    const dpm_roc_hist_t *rh = &m->params.roc_hist;
    if (dpm_roc_groups_params_init(
            p, groups, rh->bins.count, rh->group_grr.keep, rh->group_grr.other,
            (double)rh->lap.scale_num / (double)rh->lap.scale_den) != DPM_OK ||
        dpm_roc_groups_params_set_edges(p, edges, nedges) != DPM_OK) {
        *why = "the estimator refuses the mechanism's parameters";
        return -1;
    }
    return 0;
}

static int groups_init(sim_cfg_t *cfg, char *err, size_t errcap)
{
    const sim_campaign_spec_t *sp = cfg->spec;
    groups_state_t *s = st_of(cfg);
    memset(s, 0, sizeof(*s));
    snprintf(cfg->label, sizeof(cfg->label), "roc_hist_groups eps=%s bins=%u groups=%u",
             sp->eps_text[cfg->eps_index], sp->nedges + 1u, cfg->d);
    const char *why = "?";
    if (sim_roc_groups_sdk_build(cfg->d, sp->edges, sp->nedges, cfg->eps, sp->group_eps, sp->id,
                                 &cfg->mech, &s->params, &why) != 0) {
        return sim_mech_refused(cfg, why, err, errcap);
    }
    const dpm_roc_hist_t *rh = &cfg->mech.params.roc_hist;
    cfg->checked = 1;
    cfg->eps_implemented = rh->eps_implemented / Q16;
    s->groups = cfg->d;
    s->bins = rh->bins.count;
    return 0;
}

static int groups_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                          size_t errcap)
{
    groups_state_t *s = st_of(cfg);
    if (sim_mech_roc_model(cfg, pop, cfg->spec->edges, cfg->spec->nedges, "roc_hist", &s->model,
                           err, errcap) != 0) {
        return -1;
    }
    cfg->reporting = 0;
    for (uint32_t g = 0; g < s->groups; g++) {
        int include[SIM_MAX_GROUPS] = {0};
        uint64_t devices = 0, pos[DPM_MAX_BINS], neg[DPM_MAX_BINS];
        double tpr[DPM_MAX_BINS + 1], fpr[DPM_MAX_BINS + 1];
        include[cfg->pop_group[g]] = 1;
        sim_roc_truth_counts(s->model, pop, include, threads, NULL, pos, neg, &devices);
        cfg->reporting += devices;
        s->auc_model[g] = sim_roc_model_auc(cfg->sc, pop, include);
        s->ap[g] = dpm_prc_ap_exact(pos, neg, s->bins);
        s->ece[g] = dpm_prc_ece_exact(pos, neg, s->params.width, s->bins);
        if (dpm_roc_exact(pos, neg, s->bins, tpr, fpr, &s->auc[g]) != DPM_OK) {
            snprintf(err, errcap,
                     "campaign '%s': group '%s' has no positive or no negative "
                     "example (raise devices)",
                     cfg->spec->name, sim_cfg_group_name(cfg, g));
            return -1;
        }
    }
    uint32_t G = s->groups, half = G + G * (G - 1) / 2, k = G;
    if (sim_cfg_items(cfg, 2 * half + sim_mech_prc_nitems(G)) != 0) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    for (uint32_t g = 0; g < G; g++) {
        sim_item_t *it = &cfg->items[g];
        snprintf(it->metric, sizeof(it->metric), "auc");
        snprintf(it->kind, sizeof(it->kind), "auc_group");
        snprintf(it->name, sizeof(it->name), "%s", sim_cfg_group_name(cfg, g));
        it->g = (int)g;
        it->truth = s->auc[g];
    }
    for (uint32_t g = 0; g < G; g++) { /* the estimator's order: (0,1), (0,2), ..., (1,2), ... */
        for (uint32_t h = g + 1; h < G; h++, k++) {
            sim_item_t *it = &cfg->items[k];
            snprintf(it->metric, sizeof(it->metric), "auc");
            snprintf(it->kind, sizeof(it->kind), "auc_gap");
            snprintf(it->name, sizeof(it->name), "%s-%s", sim_cfg_group_name(cfg, g),
                     sim_cfg_group_name(cfg, h));
            it->g = (int)g;
            it->h = (int)h;
            it->truth = s->auc[g] - s->auc[h];
        }
    }
    for (uint32_t i = 0; i < half; i++) { /* the unbinned twins, against the model's AUCs */
        sim_item_t *it = &cfg->items[half + i];
        *it = cfg->items[i];
        snprintf(it->kind, sizeof(it->kind), "%s", i < G ? "auc_group_unb" : "auc_gap_unb");
        it->truth = i < G ? s->auc_model[it->g] : s->auc_model[it->g] - s->auc_model[it->h];
    }
    sim_mech_prc_items(cfg, 2 * half, G, s->ap, s->ece); /* AP and ECE, per group and compared */
    return 0;
}

static dpm_status_t groups_report(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                                  uint32_t run, dpm_rand_t *r, dpm_report_t *rep)
{
    return sim_mech_hist_report(cfg, st_of(cfg)->model, b, device, run,
                                (uint32_t)cfg->group_map[b->group], r, rep);
}

/* ---- aggregates, exact mode ------------------------------------------------------------------ */

static void groups_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    const groups_state_t *s = st_of(cfg);
    memset(agg->data.bytes, 0, agg_bytes(s->groups, s->bins));
}

static dpm_status_t groups_agg_add(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    const groups_state_t *s = st_of(cfg);
    const dpm_roc_hist_report_t *r = &rep->body.roc_hist;
    double y[2 * DPM_MAX_BINS];
    if (r->bins != s->bins || r->group >= s->groups) {
        return DPM_ERR_PROTOCOL;
    }
    for (uint32_t b = 0; b < s->bins; b++) {
        y[b] = r->pos[b];
        y[s->bins + b] = r->neg[b];
    }
    add(s, agg, r->group, y);
    return DPM_OK;
}

static dpm_status_t groups_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    const groups_state_t *s = st_of(cfg);
    dpm_roc_groups_agg_t d, o;
    view(s, dst, &d);
    view(s, src, &o);
    groups_head_t *h = (groups_head_t *)dst->data.bytes;
    const groups_head_t *hs = (const groups_head_t *)src->data.bytes;
    size_t c = 2u * (size_t)s->bins;
    for (size_t i = 0; i < s->groups * c; i++) {
        d.sum[i] += o.sum[i];
    }
    for (size_t i = 0; i < s->groups * c * c; i++) {
        d.m2[i] += o.m2[i];
    }
    for (uint32_t g = 0; g < s->groups; g++) {
        h->n[g] += hs->n[g];
    }
    h->reports += hs->reports;
    return DPM_OK;
}

/* One discrete Laplace variable of scale t: G1 - G2, geometrics of ratio rho = e^(-1/t) by
 * inversion (log_rho = ln rho). */
static double dlap1(sim_rng_t *rng, double log_rho)
{
    return floor(log(sim_rng_unit(rng)) / log_rho) - floor(log(sim_rng_unit(rng)) / log_rho);
}

static int groups_exact(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg)
{
    const groups_state_t *s = st_of(cfg);
    double P = s->params.P, log_rho = -1.0 / s->params.scale;
    uint16_t bin[10000];
    for (size_t k = 0; k < pop->nblocks; k++) {
        const sim_block_t *b = &pop->block[k];
        int32_t g = cfg->group_map[b->group];
        uint32_t npos = b->conf.tp + b->conf.fn, e = npos + b->conf.fp + b->conf.tn;
        if (g < 0 || e > sizeof(bin) / sizeof(bin[0])) {
            continue;
        }
        for (uint64_t i = pop->first[k]; i < pop->first[k] + b->count; i++) {
            double y[2 * DPM_MAX_BINS] = {0};
            sim_roc_device_bins(s->model, b, i, bin);
            for (uint32_t x = 0; x < e; x++) {
                y[(x < npos ? 0 : s->bins) + bin[x]] += 1.0;
            }
            for (uint32_t c = 0; c < 2 * s->bins; c++) {
                y[c] += dlap1(rng, log_rho);
            }
            uint32_t r = (uint32_t)g;
            if (sim_rng_unit(rng) >= P) { /* moved: uniform over the other groups */
                uint32_t o = (uint32_t)(sim_rng_unit(rng) * (s->groups - 1));
                o = o < s->groups - 1 ? o : s->groups - 2;
                r = o < (uint32_t)g ? o : o + 1;
            }
            add(s, agg, r, y);
        }
    }
    return 0;
}

/* ---- estimates ----------------------------------------------------------------------------- */

static void *groups_ext_new(const sim_cfg_t *cfg, uint32_t runs)
{
    (void)cfg;
    (void)runs;
    const char *name = "auc";
    return sim_selection_ext_new(1, &name, 1.0);
}

/* Every gap at once against the true gaps (the items' order is the pairs'). */
static void add_selection(const sim_cfg_t *cfg, const dpm_roc_groups_estimate_t *e,
                          sim_selection_ext_t *x)
{
    const groups_state_t *s = st_of(cfg);
    dpm_pairwise_t *pw = malloc(sizeof(*pw));
    double truth[DPM_PAIRWISE_MAX_PAIRS];
    for (uint32_t k = 0; k < e->ngaps; k++) {
        truth[k] = cfg->items[s->groups + k].truth;
    }
    if (pw != NULL && dpm_roc_groups_pairwise(e, cfg->sc->confidence, pw) == DPM_OK) {
        sim_selection_add(&x->family[0], pw, truth);
    }
    free(pw);
}

static void groups_estimate(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run,
                            sim_item_run_t *out, void *ext)
{
    (void)run;
    const groups_state_t *s = st_of(cfg);
    dpm_roc_groups_agg_t a;
    view(s, agg, &a);
    dpm_roc_groups_estimate_t *ep = malloc(sizeof(*ep)); /* tens of KB: not on the stack */
    if (ep == NULL || dpm_roc_groups_estimate(&s->params, &a, cfg->sc->confidence, ep) != DPM_OK) {
        free(ep);
        return;
    }
    const dpm_roc_groups_estimate_t *e = ep;
    uint32_t half = s->groups + e->ngaps; /* the unbinned twins follow */
    for (uint32_t g = 0; g < s->groups; g++) {
        const dpm_roc_group_estimate_t *x = &e->group[g];
        if (x->defined) {
            sim_item_run_t *u = &out[half + g];
            out[g].est = x->auc;
            out[g].sd = x->sd;
            out[g].lo = x->ci_valid ? x->ci_lo : NAN;
            out[g].hi = x->ci_valid ? x->ci_hi : NAN;
            out[g].flags = x->ci_flags;
            u->est = x->auc_unbinned;
            u->sd = sqrt(x->unbinned_sd * x->unbinned_sd +
                         (isfinite(x->unbinned_sampling) ? x->unbinned_sampling : 0.0));
            u->lo = x->ci_valid ? x->unbinned_ci_total_lo : NAN;
            u->hi = x->ci_valid ? x->unbinned_ci_total_hi : NAN;
            u->flags = x->unbinned_total_flags;
        }
    }
    for (uint32_t k = 0; k < e->ngaps; k++) {
        const dpm_roc_gap_estimate_t *x = &e->gap[k];
        if (x->defined) {
            sim_item_run_t *o = &out[s->groups + k], *u = &out[half + s->groups + k];
            o->est = x->gap;
            o->sd = x->sd;
            o->lo = x->ci_valid ? x->ci_lo : NAN;
            o->hi = x->ci_valid ? x->ci_hi : NAN;
            o->flags = x->ci_flags;
            u->est = x->gap_unbinned;
            u->sd = x->unbinned_sd;
            u->lo = x->ci_valid ? x->unbinned_ci_total_lo : NAN;
            u->hi = x->ci_valid ? x->unbinned_ci_total_hi : NAN;
            u->flags = x->unbinned_total_flags;
        }
    }
    if (ext != NULL) {
        add_selection(cfg, e, ext);
    }
    dpm_roc_groups_prc_t *f = malloc(sizeof(*f)); /* AP and ECE, per group and compared */
    if (f != NULL && dpm_roc_groups_prc(&s->params, &a, cfg->sc->confidence, 0, f) == DPM_OK) {
        sim_mech_prc_runs(f, out + 2 * half);
    }
    free(f);
    free(ep);
}

/* The console: the largest true gap first. */
static void groups_summary(const sim_result_t *res, char *buf, size_t cap)
{
    const groups_state_t *s = st_of(&res->cfg);
    uint32_t best = s->groups;
    double gap = -1.0;
    uint32_t gaps_end = s->groups + s->groups * (s->groups - 1) / 2; /* the binned gaps */
    for (uint32_t k = s->groups; k < gaps_end; k++) {
        if (fabs(res->cfg.items[k].truth) > gap) {
            gap = fabs(res->cfg.items[k].truth);
            best = k;
        }
    }
    sim_item_summary_t m, g0;
    sim_result_summary(res, best, &m);
    sim_result_summary(res, 0, &g0);
    char sel[160] = "";
    if (sim_selection_of(res, 0) != NULL) {
        sim_selection_line(sim_selection_of(res, 0), sel, sizeof(sel));
    }
    snprintf(buf, cap,
             "gap %s %+.4f: rmse %.3g, cover %.0f%% | AUC %s %.4f: rmse %.3g, cover %.0f%% | %s",
             res->cfg.items[best].name, m.truth, m.rmse, 100.0 * m.coverage, res->cfg.items[0].name,
             g0.truth, g0.rmse, 100.0 * g0.coverage, sel);
}

static void groups_describe(const sim_cfg_t *cfg, const sim_block_t *b, const dpm_report_t *rep,
                            FILE *f)
{
    fprintf(f,
            "statistics: group %d, %u examples, %u positive\nreport: roc_hist %u bins, group %u\n",
            cfg->group_map[b->group], b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn,
            b->conf.tp + b->conf.fn, rep->body.roc_hist.bins, rep->body.roc_hist.group);
}

/* The collector's keys of a roc_hist campaign with groups (the golden campaigns' proposal). */
static void groups_campaign_keys(const sim_scenario_t *sc, const sim_campaign_spec_t *c, FILE *f)
{
    (void)sc;
    edges_print(f, c->edges, c->nedges);
    fprintf(f, "groups = %u\n", c->ngroups);
    if (c->group_eps != 0) {
        /* exactly: k / 2^16 has at most 16 decimals, and the collector rounds down, so a
         * rounded %.6f (1.500015 for 98305 / 2^16) would come back one step lower and change
         * the fingerprint */
        char v[40];
        snprintf(v, sizeof(v), "%.16f", c->group_eps / Q16);
        size_t n = strlen(v);
        while (n > 1 && v[n - 1] == '0' && v[n - 2] != '.') {
            v[--n] = '\0';
        }
        fprintf(f, "group_eps = %s\n", v);
    }
}

const sim_mech_t sim_mech_roc_hist_groups = {
    .name = "roc_hist_groups",
    .id = DPM_MECH_ID_ROC_HIST,
    .what = "roc_hist's noised histogram and the device's group by GRR (per-group AUC, gaps)",
    .check = groups_check,
    .init = groups_init,
    .prepare = groups_prepare,
    .release = sim_mech_release_model,
    .participates = sim_mech_every_device,
    .report = groups_report,
    .agg_init = groups_agg_init,
    .agg_add = groups_agg_add,
    .agg_merge = groups_agg_merge,
    .exact = groups_exact,
    .estimate = groups_estimate,
    .ext_new = groups_ext_new,
    .ext_free = free,
    .ext_json = sim_selection_ext_json,
    .summary = groups_summary,
    .describe = groups_describe,
    .campaign_keys = groups_campaign_keys,
};
