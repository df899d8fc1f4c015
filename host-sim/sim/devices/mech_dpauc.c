/* SPDX-License-Identifier: Apache-2.0 */
/* dpauc in the simulator (sim/devices/mech.h): the FHAUC paper's DPAUC baseline (sdk:
 * dpm/expert/dpauc.h, server: estimate/dpauc.h).
 *
 * Campaign keys: `thresholds = N` (the linspace grid i / (N - 1), 3 <= N <= the build's
 * DPM_DPAUC_MAX_THRESHOLDS; default 25) and `calibration = published | tight` (eps / 4N or
 * eps / 2N per count; default published, which spends eps / 2 for one label: dpm/expert/dpauc.h).
 *
 * Device input: its examples as roc_sim.h draws them with the grid's interior thresholds as bin
 * edges (the same examples roc_hist sees with those edges); an example of bin b gets the score
 * t_b, so it counts at thresholds t_0 .. t_b, exactly its bin's place on the grid. The device
 * counts them with dpm_dpauc_counts_add and reports with dpm_mech_report_dpauc.
 * Exact mode: each of the 4N sums is its true count plus a sum of n discrete Laplace variables
 * (n = reporting devices), drawn in the order tp, fp, tn, fn as the devices draw.
 *
 * Items (no interval: the baseline publishes none, so coverage is not defined):
 *   0 server A (Sun et al.'s code: clamp, sort, trapezoid) against the model's AUC
 *   1 server A against the devices' binned AUC (the grid's AUC, ties 1/2: Eq. 2's target)
 *   2 server B (unclamped per-threshold rates) against the model's AUC
 *   3 server B against the binned AUC
 * A run whose server B estimate is undefined (a noisy class total exactly 0) has none. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/simulator.h"
#include "estimate/dpauc.h"
#include "estimate/roc.h"
#include "sim/devices/mech_common.h"
#include "sim/devices/results.h"
#include "sim/pop/roc_sim.h"
#include "sim/devices/sim_cfg.h"

#define Q16 65536.0
#define DEFAULT_THRESHOLDS 25u
#define NITEMS 4u

typedef struct {
    sim_roc_model_t *model; /* first: sim_mech_release_model */
    dpm_dpauc_params_t params;
    double scale;
    uint32_t n; /* thresholds */
    uint32_t thresholds[DPM_DPAUC_EST_MAX_N];
    uint64_t pos[DPM_MAX_BINS], neg[DPM_MAX_BINS]; /* true counts per grid bin */
    uint64_t tp[DPM_DPAUC_EST_MAX_N], fp[DPM_DPAUC_EST_MAX_N], P, Q;
    double auc_binned, auc_model;
} dpauc_state_t;

SIM_MECH_STATE(dpauc_state_t, dpauc)
SIM_MECH_MODEL_FIRST(dpauc_state_t, dpauc);
SIM_MECH_AGG(dpm_dpauc_agg_t, dpauc)

static int dpauc_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                       size_t errcap)
{
    if (sim_mech_takes_no_grid(c, " (its grid: thresholds = N)", line, err, errcap) != 0) {
        return -1;
    }
    if (c->thresholds == 0) {
        c->thresholds = DEFAULT_THRESHOLDS;
    }
    if (c->thresholds < 3 || c->thresholds > DPM_DPAUC_MAX_THRESHOLDS) {
        *line = c->keys_line[HOST_CK_THRESHOLDS];
        snprintf(err, errcap, "thresholds must be in 3..%d (this build's DPM_DPAUC_MAX_THRESHOLDS)",
                 DPM_DPAUC_MAX_THRESHOLDS);
        return -1;
    }
    return sim_mech_all_scored(sc, c, line, err, errcap);
}

static int dpauc_init(sim_cfg_t *cfg, char *err, size_t errcap)
{
    const sim_campaign_spec_t *sp = cfg->spec;
    dpauc_state_t *s = st_of(cfg);
    memset(s, 0, sizeof(*s));
    s->n = sp->thresholds;
    if (dpm_dpauc_linspace(s->n, s->thresholds) != DPM_OK) {
        snprintf(err, errcap, "campaign '%s': no linspace grid of %u thresholds", sp->name, s->n);
        return -1;
    }
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.mechanism = DPM_MECH_ID_DPAUC;
    c.nthresholds = s->n;
    memcpy(c.thresholds, s->thresholds, s->n * sizeof(s->thresholds[0]));
    c.calibration = sp->calibration_tight ? DPM_DPAUC_TIGHT : DPM_DPAUC_PUBLISHED;
    snprintf(cfg->label, sizeof(cfg->label), "dpauc eps=%s N=%u %s", sp->eps_text[cfg->eps_index],
             s->n, sp->calibration_tight ? "tight" : "published");
    if (sim_mech_sdk_init(cfg, &c, err, errcap) != 0) {
        return -1;
    }
    const dpm_dpauc_t *m = &cfg->mech.params.dpauc;
    cfg->checked = 1;
    cfg->eps_implemented = m->eps_implemented / Q16;
    s->scale = (double)m->lap.scale_num / (double)m->lap.scale_den;
    if (dpm_dpauc_params_init(&s->params, s->n, s->scale) != DPM_OK) {
        return sim_mech_params_refused(cfg, err, errcap);
    }
    return 0;
}

/* The grid's bins as roc_sim bins: edges t_1 .. t_{N-2}, bin b = [t_b, t_{b+1}). */
static int dpauc_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                         size_t errcap)
{
    dpauc_state_t *s = st_of(cfg);
    uint32_t bins = s->n - 1;
    if (sim_mech_roc_model(cfg, pop, &s->thresholds[1], s->n - 2, "dpauc", &s->model, err,
                           errcap) != 0) {
        return -1;
    }
    int include[SIM_MAX_GROUPS];
    sim_mech_measured(cfg, include);
    sim_roc_truth_counts(s->model, pop, include, threads, NULL, s->pos, s->neg, &cfg->reporting);
    double tpr[DPM_MAX_BINS + 1], fpr[DPM_MAX_BINS + 1];
    if (sim_mech_binned_auc(cfg, s->pos, s->neg, bins, tpr, fpr, &s->auc_binned, err, errcap) !=
        0) {
        return -1;
    }
    /* counts at threshold i: the examples of bins >= i (none at the last, 2^31) */
    uint64_t tp = 0, fp = 0;
    s->tp[s->n - 1] = s->fp[s->n - 1] = 0;
    for (uint32_t i = bins; i-- > 0;) {
        tp += s->pos[i];
        fp += s->neg[i];
        s->tp[i] = tp;
        s->fp[i] = fp;
    }
    s->P = tp;
    s->Q = fp;
    s->auc_model = sim_roc_model_auc(cfg->sc, pop, include);
    static const char *const kind[NITEMS] = {"auc", "auc_binned", "auc", "auc_binned"};
    static const char *const name[NITEMS] = {"server_A", "server_A", "server_B", "server_B"};
    const double truth[NITEMS] = {s->auc_model, s->auc_binned, s->auc_model, s->auc_binned};
    return sim_mech_items(cfg, "auc", NITEMS, kind, name, truth, err, errcap);
}

/* The device's counts at the grid (its examples through dpm_dpauc_counts_add), then the
 * report. */
static dpm_status_t dpauc_report(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                                 uint32_t run, dpm_rand_t *r, dpm_report_t *rep)
{
    const dpauc_state_t *s = st_of(cfg);
    uint16_t bin[10000];
    uint32_t npos = b->conf.tp + b->conf.fn, e = npos + b->conf.fp + b->conf.tn;
    const dpm_dpauc_t *m = dpm_mech_dpauc(&cfg->mech);
    if (s->model == NULL || m == NULL || e > sizeof(bin) / sizeof(bin[0])) {
        return DPM_ERR_PARAM;
    }
    sim_roc_device_bins(s->model, b, device, bin);
    dpm_dpauc_counts_t c;
    dpm_status_t st = dpm_dpauc_counts_init(&c, m);
    for (uint32_t i = 0; i < e && st == DPM_OK; i++) {
        st = dpm_dpauc_counts_add(&c, m, s->thresholds[bin[i]], i < npos ? 1 : 0);
    }
    dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
    dpm_receipt_t rc; /* a simulated device has no ledger: the receipt is unmetered */
    if (st == DPM_OK) {
        st = dpm_receipt_unmetered(&iss, &cfg->mech, run, &rc);
    }
    if (st == DPM_OK) {
        st = dpm_mech_report_dpauc(&cfg->mech, r, &iss, &rc, &c, rep);
    }
    return st;
}

static void dpauc_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    (void)dpm_dpauc_agg_init(agg_of(agg), st_of(cfg)->n);
}

static dpm_status_t dpauc_agg_add(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    (void)cfg;
    const dpm_dpauc_report_t *d = &rep->body.dpauc;
    return dpm_dpauc_agg_add(agg_of(agg), d->n, d->tp, d->fp, d->tn, d->fn);
}

static dpm_status_t dpauc_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    (void)cfg;
    return dpm_dpauc_agg_merge(agg_of(dst), agg_c(src));
}

static int dpauc_exact(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg)
{
    (void)pop;
    const dpauc_state_t *s = st_of(cfg);
    dpm_dpauc_agg_t *a = agg_of(agg);
    uint64_t n = cfg->reporting, tn[DPM_DPAUC_EST_MAX_N], fn[DPM_DPAUC_EST_MAX_N];
    for (uint32_t i = 0; i < s->n; i++) {
        tn[i] = s->Q - s->fp[i];
        fn[i] = s->P - s->tp[i];
    }
    sim_mech_noised_sums(rng, n, s->scale, s->tp, s->n, a->tp);
    sim_mech_noised_sums(rng, n, s->scale, s->fp, s->n, a->fp);
    sim_mech_noised_sums(rng, n, s->scale, tn, s->n, a->tn);
    sim_mech_noised_sums(rng, n, s->scale, fn, s->n, a->fn);
    a->reports = n;
    return 0;
}

static void dpauc_estimate(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run,
                           sim_item_run_t *out, void *ext)
{
    (void)run;
    (void)ext;
    const dpauc_state_t *s = st_of(cfg);
    for (uint32_t v = 0; v < 2; v++) {
        dpm_dpauc_estimate_t e;
        if (dpm_dpauc_estimate(&s->params, agg_c(agg),
                               v == 0 ? DPM_DPAUC_SERVER_A : DPM_DPAUC_SERVER_B, &e) != DPM_OK ||
            !e.defined) {
            continue;
        }
        for (uint32_t k = 0; k < 2; k++) {
            sim_item_run_t *o = &out[2 * v + k];
            o->est = e.auc;
            o->lo = o->hi = o->sd = NAN;
        }
    }
}

static void dpauc_summary(const sim_result_t *res, char *buf, size_t cap)
{
    sim_item_summary_t a, b;
    sim_result_summary(res, 1, &a);
    sim_result_summary(res, 3, &b);
    snprintf(buf, cap,
             "AUC vs binned %.4f: server A rmse %.3g (mean err %+.2g), server B rmse %.3g (mean "
             "err %+.2g, %u runs defined); no interval",
             a.truth, a.rmse, a.mean_error, b.rmse, b.mean_error, b.runs);
}

static void dpauc_describe(const sim_cfg_t *cfg, const sim_block_t *b, const dpm_report_t *rep,
                           FILE *f)
{
    (void)cfg;
    const dpm_dpauc_report_t *d = &rep->body.dpauc;
    fprintf(f, "statistics: %u examples, %u positive\nreport: dpauc N=%u, tp",
            b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn, b->conf.tp + b->conf.fn, d->n);
    for (uint32_t i = 0; i < d->n; i++) {
        fprintf(f, " %d", d->tp[i]);
    }
    fprintf(f, ", fp");
    for (uint32_t i = 0; i < d->n; i++) {
        fprintf(f, " %d", d->fp[i]);
    }
    fprintf(f, " (and tn, fn)\n");
}

static void dpauc_campaign_keys(const sim_scenario_t *sc, const sim_campaign_spec_t *c, FILE *f)
{
    (void)sc;
    fprintf(f, "thresholds = %u\ncalibration = %s\n", c->thresholds,
            c->calibration_tight ? "tight" : "published");
}

const sim_mech_t sim_mech_dpauc = {
    .name = "dpauc",
    .id = DPM_MECH_ID_DPAUC,
    .what = "TP, FP, TN, FN at N thresholds, each with discrete Laplace noise (the DPAUC baseline)",
    .check = dpauc_check,
    .init = dpauc_init,
    .prepare = dpauc_prepare,
    .release = sim_mech_release_model,
    .participates = sim_mech_every_device,
    .report = dpauc_report,
    .agg_init = dpauc_agg_init,
    .agg_add = dpauc_agg_add,
    .agg_merge = dpauc_agg_merge,
    .exact = dpauc_exact,
    .estimate = dpauc_estimate,
    .summary = dpauc_summary,
    .describe = dpauc_describe,
    .campaign_keys = dpauc_campaign_keys,
};
