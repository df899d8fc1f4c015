/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist in the simulator (see mech_roc_hist.h). */
#include "sim/devices/mech_roc_hist.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/edges.h"
#include "common/prob.h"
#include "estimate/ci_flags.h"
#include "estimate/pr_calibration.h"
#include "sim/devices/mech_common.h"
#include "sim/devices/results.h"
#include "sim/devices/sim_cfg.h"

#define Q16 65536.0
#define TWO31 2147483648.0
#define DEFAULT_BINS 10u
/* Realizing every device's examples for the truth costs about 0.05 us per example (0.3 us to
 * 2 us per device of 40): beyond this many examples an exact-mode-only session draws the
 * per-bin counts from their law instead (roc_sim.h, sim_roc_truth_sample: O(blocks x bins)),
 * and the other modes, which realize every device anyway, say how long it will take. */
#define REALIZE_MAX_EXAMPLES (UINT64_C(1) << 24)
#define CALIBRATION_DEVICES 512u

SIM_MECH_STATE(sim_roc_state_t, roc)
SIM_MECH_MODEL_FIRST(sim_roc_state_t, roc);
SIM_MECH_AGG(dpm_roc_agg_t, roc)

extern const sim_mech_t sim_mech_roc_hist;

sim_roc_state_t *sim_roc_state(sim_cfg_t *cfg)
{
    return cfg->m == &sim_mech_roc_hist ? st_of(cfg) : NULL;
}

const sim_roc_state_t *sim_roc_state_c(const sim_cfg_t *cfg)
{
    return cfg->m == &sim_mech_roc_hist ? st_of(cfg) : NULL;
}

dpm_roc_agg_t *sim_roc_agg(sim_agg_t *agg)
{
    return agg_of(agg);
}

const dpm_roc_agg_t *sim_roc_agg_c(const sim_agg_t *agg)
{
    return agg_c(agg);
}

/* ---- scenario ------------------------------------------------------------------------------ */

/* Default bins, no metrics, no paper split, every measured group with binormal scores. */
static int roc_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                     size_t errcap)
{
    if (c->nmetrics != 0) {
        *line = c->metrics_line;
        snprintf(err, errcap, "takes no metrics (it measures the ROC of the scores)");
        return -1;
    }
    if (c->split_paper) {
        *line = c->split_line;
        snprintf(err, errcap, "has no paper split");
        return -1;
    }
    if (c->nedges == 0) {
        c->nedges = DEFAULT_BINS - 1u;
        edges_uniform(DEFAULT_BINS, c->edges);
    }
    return sim_mech_all_scored(sc, c, line, err, errcap);
}

/* ---- configuration ------------------------------------------------------------------------- */

static int roc_init(sim_cfg_t *cfg, char *err, size_t errcap)
{
    const sim_campaign_spec_t *sp = cfg->spec;
    sim_roc_state_t *s = st_of(cfg);
    memset(s, 0, sizeof(*s));
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.nbins = sp->nedges;
    memcpy(c.bin_edges, sp->edges, sp->nedges * sizeof(sp->edges[0]));
    snprintf(cfg->label, sizeof(cfg->label), "roc_hist eps=%s bins=%u",
             sp->eps_text[cfg->eps_index], sp->nedges + 1u);
    if (sim_mech_sdk_init(cfg, &c, err, errcap) != 0) {
        return -1;
    }
    const dpm_roc_hist_t *rh = &cfg->mech.params.roc_hist;
    cfg->checked = 1;
    cfg->eps_implemented = rh->eps_implemented / Q16;
    s->bins = rh->bins.count;
    s->scale = (double)rh->lap.scale_num / (double)rh->lap.scale_den;
    if (dpm_roc_params_init(&s->params, s->bins, s->scale) != DPM_OK ||
        dpm_roc_params_set_edges(&s->params, sp->edges, sp->nedges) != DPM_OK) {
        return sim_mech_params_refused(cfg, err, errcap);
    }
    return 0;
}

/* "12 s", "35 min", "5.2 h", "15 days" */
static void fmt_duration(double t, char *buf, size_t cap)
{
    if (t < 120.0) {
        snprintf(buf, cap, "%.0f s", t);
    } else if (t < 7200.0) {
        snprintf(buf, cap, "%.0f min", t / 60.0);
    } else if (t < 172800.0) {
        snprintf(buf, cap, "%.1f h", t / 3600.0);
    } else {
        snprintf(buf, cap, "%.0f days", t / 86400.0);
    }
}

/* Examples the included devices hold. */
static uint64_t realized_examples(const sim_pop_t *pop, const int *include)
{
    uint64_t n = 0;
    for (size_t i = 0; i < pop->nblocks; i++) {
        const sim_block_t *b = &pop->block[i];
        if (include[b->group]) {
            n += b->count * (uint64_t)(b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn);
        }
    }
    return n;
}

/* Seconds per example of sim_roc_device_bins, timed on devices spread over the population. */
static double seconds_per_example(const sim_roc_model_t *m, const sim_pop_t *pop,
                                  const int *include)
{
    uint16_t bin[10000];
    uint64_t examples = 0;
    double start = sim_now();
    for (uint32_t k = 0; k < CALIBRATION_DEVICES; k++) {
        uint64_t device = pop->devices / CALIBRATION_DEVICES * k;
        const sim_block_t *b = sim_pop_find(pop, device, NULL);
        uint32_t e = b == NULL ? 0 : b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn;
        if (b != NULL && include[b->group] && m->group[b->group].set && e <= 10000) {
            sim_roc_device_bins(m, b, device, bin);
            examples += e;
        }
    }
    return examples > 0 ? (sim_now() - start) / (double)examples : 0.0;
}

/* The truth's per-bin counts: drawn from their law (exact mode, many examples) or realized
 * device by device (saying how long that will take when it is long). */
static void truth_counts(sim_cfg_t *cfg, const sim_pop_t *pop, const int *include, unsigned threads)
{
    sim_roc_state_t *s = st_of(cfg);
    uint64_t examples = realized_examples(pop, include);
    if (cfg->exact_only && examples > REALIZE_MAX_EXAMPLES) {
        sim_roc_truth_sample(s->model, pop, include, s->model->base_key, s->pos, s->neg,
                             &cfg->reporting);
        return;
    }
    sim_progress_t prog;
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "%s: the truth", cfg->label);
    sim_progress_init(&prog, cfg->progress, pop->devices, "devices", prefix);
    if (examples > REALIZE_MAX_EXAMPLES) {
        unsigned n = threads < 1 ? 1 : threads;
        double per = seconds_per_example(s->model, pop, include);
        char eta[32];
        fmt_duration(per * (double)examples / n, eta, sizeof(eta));
        fprintf(stderr,
                "dpm-sim: %s: realizing the examples of %" PRIu64 " devices (%.3g examples) "
                "for the true histogram: about %s with %u threads (%.3g us per example "
                "measured); exact mode draws it from its law in O(bins)\n",
                cfg->label, pop->devices, (double)examples, eta, n, 1e6 * per);
    }
    sim_roc_truth_counts(s->model, pop, include, threads, &prog, s->pos, s->neg, &cfg->reporting);
    sim_progress_done(&prog);
}

/* The example model, the population's true histogram, its binned ROC, the model's AUC. */
static int roc_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                       size_t errcap)
{
    sim_roc_state_t *s = st_of(cfg);
    if (sim_mech_roc_model(cfg, pop, cfg->spec->edges, cfg->spec->nedges, "roc_hist", &s->model,
                           err, errcap) != 0) {
        return -1;
    }
    int include[SIM_MAX_GROUPS];
    sim_mech_measured(cfg, include);
    truth_counts(cfg, pop, include, threads);
    if (sim_mech_binned_auc(cfg, s->pos, s->neg, s->bins, s->tpr, s->fpr, &s->auc_binned, err,
                            errcap) != 0) {
        return -1;
    }
    s->auc_model = sim_roc_model_auc(cfg->sc, pop, include);
    s->ap_binned = dpm_prc_ap_exact(s->pos, s->neg, s->bins);
    s->ece_binned = dpm_prc_ece_exact(s->pos, s->neg, s->params.width, s->bins);
    static const char *const kind[5] = {"auc", "auc_binned", "auc_unbinned", "ap_binned",
                                        "ece_binned"};
    static const char *const name[5] = {"model", "binned", "unbinned", "binned", "binned"};
    const double truth[5] = {s->auc_model, s->auc_binned, s->auc_model, s->ap_binned,
                             s->ece_binned};
    if (sim_mech_items(cfg, "auc", 5, kind, name, truth, err, errcap) != 0) {
        return -1;
    }
    /* the precision-recall and calibration summaries of the same sums */
    snprintf(cfg->items[SIM_ROC_ITEM_AP].metric, sizeof(cfg->items[0].metric), "ap");
    snprintf(cfg->items[SIM_ROC_ITEM_ECE].metric, sizeof(cfg->items[0].metric), "ece");
    return 0;
}

/* The device's score histogram (its examples through dpm_score_hist_add), then the report. */
static dpm_status_t roc_report(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                               uint32_t run, dpm_rand_t *r, dpm_report_t *rep)
{
    return sim_mech_hist_report(cfg, st_of(cfg)->model, b, device, run, -1, r, rep);
}

/* ---- aggregates, exact mode ------------------------------------------------------------------ */

static void roc_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    (void)dpm_roc_agg_init(sim_roc_agg(agg), st_of(cfg)->bins);
}

static dpm_status_t roc_agg_add(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    (void)cfg;
    const dpm_roc_hist_report_t *h = &rep->body.roc_hist;
    return dpm_roc_agg_add(sim_roc_agg(agg), h->bins, h->pos, h->neg);
}

static dpm_status_t roc_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    (void)cfg;
    return dpm_roc_agg_merge(sim_roc_agg(dst), sim_roc_agg_c(src));
}

static int roc_exact(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg)
{
    (void)pop;
    const sim_roc_state_t *s = st_of(cfg);
    dpm_roc_agg_t *a = sim_roc_agg(agg);
    sim_mech_noised_sums(rng, cfg->reporting, s->scale, s->pos, s->bins, a->pos);
    sim_mech_noised_sums(rng, cfg->reporting, s->scale, s->neg, s->bins, a->neg);
    a->reports = cfg->reporting;
    return 0;
}

/* ---- estimates ----------------------------------------------------------------------------- */

static void *roc_ext_new(const sim_cfg_t *cfg, uint32_t runs)
{
    (void)cfg;
    (void)runs;
    return calloc(1, sizeof(sim_roc_ext_t));
}

static void roc_ext_free(void *ext)
{
    free(ext);
}

/* The model's AUC from the binned estimate. The binned AUC counts a positive and a negative in
 * one bin as 1/2; the model's AUC orders them by score. So the two differ by at most half the
 * share of pairs that tie in a bin, T / 2 with T = sum_b pos_b neg_b / (P N), here from the
 * estimate's projected counts. The interval for the model's AUC is the binned one (noise +
 * sampling) widened by that bound on each side: at least the level whenever the binned interval
 * covers the binned AUC; flagged DPM_CI_BOUND (ci_flags.h) when the bound makes it wider than a
 * bias-free interval covering 2 points above the level would be. Without it, at 10^5 devices
 * and eps 4 on own-data.scn this interval covered the model's AUC in 16 % of runs. */
static void model_interval(const dpm_roc_estimate_t *e, double confidence, sim_item_run_t *m)
{
    double tie = 0.0;
    if (e->P > 0.0 && e->N > 0.0) {
        for (uint32_t b = 0; b < e->bins; b++) {
            tie += fmax(e->pos[b], 0.0) * fmax(e->neg[b], 0.0);
        }
        tie /= e->P * e->N;
    }
    double bound = 0.5 * fmin(tie, 1.0);
    double half = 0.5 * (e->ci_total_hi - e->ci_total_lo);
    m->lo = e->ci_total_lo - bound;
    m->hi = e->ci_total_hi + bound;
    m->flags = e->ci_total_flags;
    double sd = e->z > 0.0 ? half / e->z : 0.0;
    double z_plus = prob_norm_quantile(1.0 - 0.5 * (1.0 - fmin(confidence + 0.02, 0.999)));
    if (bound > 0.0 && half + bound > z_plus * sd) {
        m->flags |= DPM_CI_BOUND;
    }
}

static void roc_estimate(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run,
                         sim_item_run_t *out, void *ext)
{
    const sim_roc_state_t *s = st_of(cfg);
    sim_roc_ext_t *x = ext;
    dpm_roc_estimate_t est;
    if (dpm_roc_estimate(&s->params, sim_roc_agg_c(agg), cfg->sc->confidence, &est) != DPM_OK ||
        !est.valid) {
        return;
    }
    sim_item_run_t *m = &out[SIM_ROC_ITEM_MODEL], *b = &out[SIM_ROC_ITEM_BINNED];
    sim_item_run_t *u = &out[SIM_ROC_ITEM_UNBINNED];
    m->est = b->est = est.auc;
    m->sd = sqrt(est.var_noise + est.var_sampling);
    model_interval(&est, cfg->sc->confidence, m);
    b->sd = sqrt(est.var_noise);
    b->lo = est.ci_lo;
    b->hi = est.ci_hi;
    b->flags = est.ci_flags;
    u->est = est.auc_unbinned;
    u->sd = sqrt(est.unbinned_var_noise +
                 (isfinite(est.unbinned_var_sampling) ? est.unbinned_var_sampling : 0.0));
    u->lo = est.unbinned_ci_total_lo;
    u->hi = est.unbinned_ci_total_hi;
    u->flags = est.unbinned_total_flags;
    dpm_prc_estimate_t prc;
    if (dpm_prc_estimate(&s->params, sim_roc_agg_c(agg), cfg->sc->confidence, &prc) == DPM_OK &&
        prc.valid) {
        sim_item_run_t *ap = &out[SIM_ROC_ITEM_AP], *ece = &out[SIM_ROC_ITEM_ECE];
        ap->est = prc.ap;
        ap->sd = sqrt(prc.ap_var_noise);
        ap->lo = prc.ap_ci_lo;
        ap->hi = prc.ap_ci_hi;
        ap->flags = prc.ap_flags;
        ece->est = prc.ece;
        ece->sd = sqrt(prc.ece_var_noise);
        ece->lo = prc.ece_ci_lo;
        ece->hi = prc.ece_ci_hi;
        ece->flags = prc.ece_flags;
    }
    if (run == 0) {
        x->run0 = est;
        x->have_run0 = 1;
    }
    int all_pw = 1, all_sim = 1;
    for (uint32_t j = 0; j <= s->bins; j++) {
        double t = s->tpr[j];
        int pw = est.tpr_lo[j] <= t && t <= est.tpr_hi[j];
        int sim = est.tpr_lo_sim[j] <= t && t <= est.tpr_hi_sim[j];
        x->cover[j] += (uint32_t)pw;
        x->tpr_sum[j] += est.tpr[j];
        x->tpr_sq_err[j] += (est.tpr[j] - t) * (est.tpr[j] - t);
        if (j >= 1 && j < s->bins) {
            all_pw &= pw;
            all_sim &= sim;
        }
    }
    x->all_pointwise += (uint32_t)all_pw;
    x->simultaneous += (uint32_t)all_sim;
    x->valid++;
}

void sim_roc_band_coverage(const sim_roc_ext_t *x, uint32_t bins, double *pointwise,
                           double *all_pointwise, double *simultaneous)
{
    double pw = 0.0, v = x->valid;
    for (uint32_t j = 1; j < bins; j++) {
        pw += v > 0 ? x->cover[j] / v : NAN;
    }
    *pointwise = bins > 1 ? pw / (bins - 1) : NAN;
    *all_pointwise = v > 0 ? x->all_pointwise / v : NAN;
    *simultaneous = v > 0 ? x->simultaneous / v : NAN;
}

/* results.json "roc": bins, edges, truth, the band's coverage, run 0's curve and bands. */
static void roc_ext_json(const sim_cfg_t *cfg, const void *ext, jw_t *w)
{
    const sim_roc_state_t *s = st_of(cfg);
    const sim_roc_ext_t *x = ext;
    uint32_t B = s->bins, n = B + 1;
    double edges[DPM_MAX_BINS], cover[DPM_MAX_BINS + 1], mean[DPM_MAX_BINS + 1],
        rmse[DPM_MAX_BINS + 1], pw, all_pw, simul, v = x->valid;
    for (uint32_t b = 0; b + 1 < B; b++) {
        edges[b] = cfg->spec->edges[b] / TWO31;
    }
    for (uint32_t j = 0; j < n; j++) {
        cover[j] = v > 0 ? x->cover[j] / v : NAN;
        mean[j] = v > 0 ? x->tpr_sum[j] / v : NAN;
        rmse[j] = v > 0 ? sqrt(x->tpr_sq_err[j] / v) : NAN;
    }
    sim_roc_band_coverage(x, B, &pw, &all_pw, &simul);
    jw_raw(w, ",\n   \"roc\": {\"bins\": %u, \"edges\": ", B);
    jw_nums(w, edges, B - 1, 10);
    jw_raw(w,
           ", \"band\": \"pointwise per threshold (simultaneous: Bonferroni over the %u interior "
           "thresholds)\"",
           B - 1);
    jw_raw(w, ",\n    \"truth\": {\"auc\": ");
    jw_num(w, s->auc_binned, 10);
    jw_member_num(w, "auc_model", s->auc_model, 10);
    jw_member_nums(w, "fpr", s->fpr, n, 10);
    jw_member_nums(w, "tpr", s->tpr, n, 10);
    jw_raw(w, "},\n    \"coverage\": {\"runs_valid\": %u", x->valid);
    jw_member_num(w, "band_pointwise", pw, 10);
    jw_member_num(w, "band_all_pointwise", all_pw, 10);
    jw_member_num(w, "band_simultaneous", simul, 10);
    jw_member_nums(w, "pointwise", cover, n, 10);
    jw_member_nums(w, "tpr_mean", mean, n, 10);
    jw_member_nums(w, "tpr_rmse", rmse, n, 10);
    jw_raw(w, "}");
    const dpm_roc_estimate_t *e = &x->run0;
    if (x->have_run0) {
        const double ci[2] = {e->ci_lo, e->ci_hi}, ci_total[2] = {e->ci_total_lo, e->ci_total_hi};
        jw_raw(w, ",\n    \"run0\": {\"auc\": ");
        jw_num(w, e->auc, 10);
        jw_member_nums(w, "ci", ci, 2, 10);
        jw_member_nums(w, "ci_total", ci_total, 2, 10);
        const double uci[2] = {e->unbinned_ci_lo, e->unbinned_ci_hi};
        const double uct[2] = {e->unbinned_ci_total_lo, e->unbinned_ci_total_hi};
        jw_member_num(w, "auc_unbinned", e->auc_unbinned, 10);
        jw_member_nums(w, "unbinned_ci", uci, 2, 10);
        jw_member_nums(w, "unbinned_ci_total", uct, 2, 10);
        jw_member_num(w, "unbinned_bound", e->unbinned_bound, 10);
        jw_raw(w,
               ", \"ci_flags\": %u, \"ci_total_flags\": %u, \"unbinned_flags\": %u, "
               "\"unbinned_total_flags\": %u, \"tpr_flags\": %u",
               e->ci_flags, e->ci_total_flags, e->unbinned_flags, e->unbinned_total_flags,
               e->tpr_flags);
        jw_raw(w, ", \"projected\": %s", e->projected ? "true" : "false");
        static const char *const keys[6] = {"fpr",    "tpr",        "tpr_lo",
                                            "tpr_hi", "tpr_lo_sim", "tpr_hi_sim"};
        const double *vals[6] = {e->fpr,    e->tpr,        e->tpr_lo,
                                 e->tpr_hi, e->tpr_lo_sim, e->tpr_hi_sim};
        for (int k = 0; k < 6; k++) {
            jw_member_nums(w, keys[k], vals[k], n, 10);
        }
        jw_raw(w, "}");
    }
    jw_raw(w, "}");
}

static void csv_num(FILE *f, double x)
{
    if (isfinite(x)) {
        fprintf(f, "%.10g", x);
    }
}

/* roc.csv: one row per threshold j = 0 .. bins (predict positive when bin >= j). */
static void roc_ext_csv(const sim_cfg_t *cfg, const void *ext, FILE *f, const char *prefix)
{
    const sim_roc_state_t *s = st_of(cfg);
    const sim_roc_ext_t *x = ext;
    const dpm_roc_estimate_t *e = &x->run0;
    uint32_t B = s->bins;
    double v = x->valid;
    for (uint32_t j = 0; j <= B; j++) {
        double thr = j == 0 ? 0.0 : (j == B ? NAN : cfg->spec->edges[j - 1] / TWO31);
        int ok = x->have_run0;
        const double vals[12] = {thr,
                                 s->fpr[j],
                                 s->tpr[j],
                                 ok ? e->fpr[j] : NAN,
                                 ok ? e->tpr[j] : NAN,
                                 ok ? e->tpr_lo[j] : NAN,
                                 ok ? e->tpr_hi[j] : NAN,
                                 ok ? e->tpr_lo_sim[j] : NAN,
                                 ok ? e->tpr_hi_sim[j] : NAN,
                                 v > 0 ? x->tpr_sum[j] / v : NAN,
                                 v > 0 ? sqrt(x->tpr_sq_err[j] / v) : NAN,
                                 v > 0 ? x->cover[j] / v : NAN};
        fprintf(f, "%s,%u,", prefix, j);
        for (int k = 0; k < 12; k++) {
            csv_num(f, vals[k]);
            fputc(k < 11 ? ',' : '\n', f);
        }
    }
}

static void roc_summary(const sim_result_t *res, char *buf, size_t cap)
{
    sim_item_summary_t m, b;
    double pw, all_pw, simul;
    sim_result_summary(res, SIM_ROC_ITEM_MODEL, &m);
    sim_result_summary(res, SIM_ROC_ITEM_BINNED, &b);
    sim_roc_band_coverage(res->ext, st_of(&res->cfg)->bins, &pw, &all_pw, &simul);
    snprintf(buf, cap,
             "AUC vs model %.4f: rmse %.3g, mean err %+.2g, cover %.0f%% | vs binned %.4f: rmse "
             "%.3g, cover %.0f%% | TPR band %.0f%%",
             m.truth, m.rmse, m.mean_error, 100.0 * m.coverage, b.truth, b.rmse, 100.0 * b.coverage,
             100.0 * pw);
}

/* ---- network mode, replay, collector file -----------------------------------------------------
 */

static void roc_describe(const sim_cfg_t *cfg, const sim_block_t *b, const dpm_report_t *rep,
                         FILE *f)
{
    (void)cfg;
    fprintf(f, "statistics: %u examples, %u positive\nreport: roc_hist %u bins, pos",
            b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn, b->conf.tp + b->conf.fn,
            rep->body.roc_hist.bins);
    for (uint32_t i = 0; i < rep->body.roc_hist.bins; i++) {
        fprintf(f, " %d", rep->body.roc_hist.pos[i]);
    }
    fprintf(f, ", neg");
    for (uint32_t i = 0; i < rep->body.roc_hist.bins; i++) {
        fprintf(f, " %d", rep->body.roc_hist.neg[i]);
    }
    fprintf(f, "\n");
}

static void roc_campaign_keys(const sim_scenario_t *sc, const sim_campaign_spec_t *c, FILE *f)
{
    (void)sc;
    edges_print(f, c->edges, c->nedges);
}

const sim_mech_t sim_mech_roc_hist = {
    .name = "roc_hist",
    .id = DPM_MECH_ID_ROC_HIST,
    .what = "per score bin, the positive and negative counts, each with discrete Laplace noise",
    .check = roc_check,
    .init = roc_init,
    .prepare = roc_prepare,
    .release = sim_mech_release_model,
    .participates = sim_mech_every_device, /* each holds examples */
    .report = roc_report,
    .agg_init = roc_agg_init,
    .agg_add = roc_agg_add,
    .agg_merge = roc_agg_merge,
    .exact = roc_exact,
    .estimate = roc_estimate,
    .ext_new = roc_ext_new,
    .ext_free = roc_ext_free,
    .ext_json = roc_ext_json,
    .ext_csv_name = "roc.csv",
    .ext_csv_header = "point,threshold,fpr_truth,tpr_truth,fpr,tpr,tpr_lo,tpr_hi,tpr_lo_sim,"
                      "tpr_hi_sim,tpr_mean,tpr_rmse,coverage",
    .ext_csv = roc_ext_csv,
    .summary = roc_summary,
    .describe = roc_describe,
    .campaign_keys = roc_campaign_keys,
};
