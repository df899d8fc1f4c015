/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist_2agg in the simulator (sim/devices/mech.h): roc_hist's per-group label histograms in
 * the two-aggregator mode (DAP with Prio3, central DP; server: estimate/roc_central.h). Each
 * device sends its own group's exact histogram as a Prio3 SumVec of groups x 2 x bins 8-bit
 * counts, split between the leader and the helper; each aggregator adds discrete Laplace of
 * scale 2 max_device_examples / ε to every cell of its aggregate share; the collector reads
 * the sum.
 *
 * Campaign keys: `bins` / `edges` as roc_hist, `groups` (1 or more; 1: the AUC alone),
 * `max_device_examples` (required: the most examples one device's report holds, the noise's
 * sensitivity; a population whose devices hold more is refused, a device never truncates),
 * `noise = gaussian` with `delta`: each aggregator adds a discrete Gaussian instead, its sigma2
 * from the rho whose zCDP gives each eps at delta (dap_gauss_for_eps), for squared L2 sensitivity
 * 2 max_device_examples^2. `local_eps = E0`: the hybrid: every device also flips each example's
 * label by randomized response at E0 before sharding (the task's label-RR extension: ε0
 * label-DP per example even if both aggregators collude), the collector debiases
 * (estimate/roc_central.h); exact mode draws each cell's randomized counts exactly,
 * Bin(pos, 1 - q) + Bin(neg, q) positives of the bin's pos + neg examples.
 *
 * Modes:
 *   inprocess  every device through the SDK's public device API: its examples into its score
 *              histogram (dpm_score_hist_add), a device (dpm_device_init on RAM storage, the
 *              app's two-aggregator policy) that accepts the task (dpm_device_dap_accept_task)
 *              and reports (dpm_device_dap_report_sumvec: validate, charge its ledger, shard
 *              with the Prio3 proof, seal each share with HPKE); the leader and the helper in
 *              this process (aggregator/pair.h) open, verify and aggregate every report, each
 *              adds its noise (the SDK's sampler on its own stream) before release, and the
 *              collector unshards the signed sums. One thread; about 0.7 ms a device, both
 *              sides (3 groups x 3,000 devices x 3 runs in 5.9 s at 0b96230).
 *   exact      a run's aggregate is the population's true per-group counts plus, per cell,
 *              the two aggregators' draws (two discrete Laplace variables of the same scale,
 *              sim_rng_dlap_sum): distributed exactly as the released sum, whatever the number
 *              of devices (O(groups x bins) a run).
 *   network    every device as in inprocess, its report for the deployed task (the
 *              aggregators' campaigns file's [dap_task]) posted to a running leader, the batch
 *              collected from it and opened with the collector's key (sim/run/netmode_dap.h).
 * The simulated task (aggregator/task.h): keys from the scenario's seed (SIMULATION ONLY), a
 * minimum batch size of SIM_2AGG_MIN_BATCH reports (fewer devices: the run is refused, as a
 * leader refuses the collection), time precision one hour.
 *
 * Items: as roc_hist_groups (the same kinds and names, so the two trust models compare item by
 * item): each group's AUC (auc_group) and each gap (auc_gap) against the devices' binned AUCs,
 * with the noise-only intervals; the unbinned twins (auc_group_unb, auc_gap_unb) against the
 * groups' model AUCs with noise, sampling and the interpolation bound. Every gap at once:
 * results.json "selection" (sim/devices/selection.h). With `metrics = tpr` and/or `fpr` (the
 * tuple statistics in this mode): each group's TPR and FPR at score 0.5 (the populations'
 * decision threshold, which must be a bin edge), pooled over the group's examples (metric
 * "tpr"/"fpr", kinds "group" and "gap", truth the devices' own pooled rate), with their counts
 * (metric "positives"/"negatives", kind "count": the group's examples of each label), every
 * interval the noise's alone (the devices' own quantity, as auc_group's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/stats.h"
#include "aggregator/dap_tasks.h"
#include "aggregator/device.h"
#include "aggregator/pair.h"
#include "aggregator/task.h"
#include "common/edges.h"
#include "common/prob.h"
#include "common/stream.h"
#include "estimate/ci_flags.h"
#include "estimate/roc_central.h"
#include "sim/devices/mech_common.h"
#include "sim/devices/results.h"
#include "sim/devices/selection.h"
#include "sim/devices/sim_cfg.h"
#include "sim/pop/roc_sim.h"

#define DEFAULT_BINS 10u
/* Beyond this many examples an exact-mode session draws the true counts from their law
 * (sim_roc_truth_sample) instead of realizing every device, as mech_roc_hist.c does. */
#define REALIZE_MAX_EXAMPLES (UINT64_C(1) << 24)
/* The simulated task's minimum batch size (DAP: no collection from fewer reports). */
#define SIM_2AGG_MIN_BATCH 100u
/* The aggregators' random streams (sim_cfg_device_key's device slot; no device has these). */
#define LEADER_STREAM (UINT64_MAX - 10u)
#define HELPER_STREAM (UINT64_MAX - 11u)
typedef struct {
    sim_roc_model_t *model; /* first: sim_mech_release_model */
    dpm_roc_central_params_t params;
    uint64_t pos[DPM_ROC_CENTRAL_MAX_GROUPS][DPM_MAX_BINS]; /* the true counts, per group */
    uint64_t neg[DPM_ROC_CENTRAL_MAX_GROUPS][DPM_MAX_BINS];
    double auc[DPM_ROC_CENTRAL_MAX_GROUPS];       /* each group's binned AUC */
    double auc_model[DPM_ROC_CENTRAL_MAX_GROUPS]; /* each group's model AUC */
    double ap[DPM_ROC_CENTRAL_MAX_GROUPS], ece[DPM_ROC_CENTRAL_MAX_GROUPS]; /* binned, per group */
    dpm_score_bins_t bins; /* the devices' binning (the SDK's) */
    agg_task_t task;       /* the simulated DAP task, its keys (a plain value) */
    /* metrics = tpr, fpr: threshold j (bins >= j predicted positive), their first item */
    uint32_t nrates, threshold, rates_at;
    dpm_metric_t rate[2];
    double rho, delta; /* noise = gaussian: the zCDP rho the noise gives, the campaign's delta */
} twoagg_state_t;

typedef struct {
    dpm_roc_agg_t group[DPM_ROC_CENTRAL_MAX_GROUPS];
} twoagg_agg_t;

SIM_MECH_STATE(twoagg_state_t, roc_2agg)
SIM_MECH_MODEL_FIRST(twoagg_state_t, roc_2agg);
SIM_MECH_AGG(twoagg_agg_t, roc_2agg)

/* The threshold j whose edge is score 0.5 (Q1.31: 2^30), bins >= j predicted positive; 0 when
 * no edge is there. */
static uint32_t threshold_bin(const sim_campaign_spec_t *c)
{
    for (uint32_t e = 0; e < c->nedges; e++) {
        if (c->edges[e] == (UINT32_C(1) << 30)) {
            return e + 1u;
        }
    }
    return 0;
}

static int twoagg_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                        size_t errcap)
{
    if (c->split_paper) {
        *line = c->split_line;
        snprintf(err, errcap, "takes no split");
        return -1;
    }
    for (uint32_t m = 0; m < c->nmetrics; m++) {
        if (c->metrics[m] != DPM_METRIC_TPR && c->metrics[m] != DPM_METRIC_FPR) {
            *line = c->metrics_line;
            snprintf(err, errcap, "takes metrics tpr and fpr only (at score 0.5), not '%s'",
                     sim_metric_name(c->metrics[m]));
            return -1;
        }
    }
    if (c->max_device_examples == 0) {
        snprintf(err, errcap,
                 "needs max_device_examples = M (1 .. 255): the most examples one device's "
                 "report holds; the aggregators' noise is calibrated to it");
        return -1;
    }
    if (c->noise_gauss && c->keys_line[HOST_CK_DELTA] == 0) {
        *line = c->keys_line[HOST_CK_NOISE];
        snprintf(err, errcap,
                 "noise = gaussian needs delta (at most 1e-5): each eps of the campaign is then "
                 "the (eps, delta)-DP its zCDP gives");
        return -1;
    }
    if (!c->noise_gauss && c->keys_line[HOST_CK_DELTA] != 0) {
        *line = c->keys_line[HOST_CK_DELTA];
        snprintf(err, errcap, "delta is for noise = gaussian (discrete Laplace is eps-DP)");
        return -1;
    }
    if (c->ngroups > DPM_ROC_CENTRAL_MAX_GROUPS) {
        *line = c->groups_line;
        snprintf(err, errcap, "takes at most %u groups", DPM_ROC_CENTRAL_MAX_GROUPS);
        return -1;
    }
    if (c->nedges == 0) {
        c->nedges = DEFAULT_BINS - 1u;
        edges_uniform(DEFAULT_BINS, c->edges);
    }
    if (c->nmetrics != 0 && threshold_bin(c) == 0) {
        *line = c->metrics_line;
        snprintf(err, errcap,
                 "metrics tpr/fpr are read at score 0.5, the populations' decision threshold: "
                 "give an edge at 0.5 (an even number of uniform bins)");
        return -1;
    }
    return sim_mech_all_scored(sc, c, line, err, errcap);
}

static int twoagg_init(sim_cfg_t *cfg, char *err, size_t errcap)
{
    const sim_campaign_spec_t *sp = cfg->spec;
    twoagg_state_t *s = st_of(cfg);
    memset(s, 0, sizeof(*s));
    char local[24] = ""; /* " local_eps=" and at most 12 of %.6g */
    if (sp->local_eps != 0) {
        snprintf(local, sizeof(local), " local_eps=%.6g", (double)sp->local_eps / 65536.0);
    }
    snprintf(cfg->label, sizeof(cfg->label), "roc_hist_2agg eps=%s%s bins=%u groups=%u",
             sp->eps_text[cfg->eps_index], local, sp->nedges + 1u, cfg->d);
    const char *why = "?";
    dpm_eps_t charged = cfg->eps;
    uint64_t sigma2 = 0;
    if (sp->noise_gauss &&
        dap_gauss_for_eps(cfg->eps, sp->delta, dpm_roc_central_l2sq(sp->max_device_examples),
                          &sigma2, &charged, &why) != 0) {
        return sim_mech_refused(cfg, why, err, errcap);
    }
    if ((sigma2 == 0 ? dpm_roc_central_params_init(&s->params, cfg->d, sp->nedges + 1u, sp->edges,
                                                   sp->max_device_examples, charged, &why)
                     : dpm_roc_central_params_init_gauss(&s->params, cfg->d, sp->nedges + 1u,
                                                         sp->edges, sp->max_device_examples,
                                                         charged, sigma2, &why)) != DPM_OK) {
        return sim_mech_refused(cfg, why, err, errcap);
    }
    if (sigma2 != 0) {
        snprintf(cfg->label, sizeof(cfg->label),
                 "roc_hist_2agg eps=%s delta=%g (gaussian)%s bins=%u groups=%u",
                 sp->eps_text[cfg->eps_index], sp->delta, local, sp->nedges + 1u, cfg->d);
        s->delta = sp->delta;
        s->rho = (double)dpm_roc_central_l2sq(sp->max_device_examples) / (2.0 * (double)sigma2);
    }
    /* the device's measurement as the SDK shards it, and the task: refused here if the SDK
     * cannot (bits: those of max_device_examples; chunk near sqrt(length x bits), the draft's
     * advice) */
    dpm_prio3_t v;
    uint32_t length = cfg->d * 2u * (sp->nedges + 1u), bits = 0;
    while (bits < 8u && (sp->max_device_examples >> bits) != 0) {
        bits++;
    }
    uint32_t chunk = (uint32_t)ceil(sqrt((double)length * bits));
    if (dpm_prio3_sumvec_init(&v, 2, length, sp->max_device_examples, chunk) != DPM_OK) {
        return sim_mech_refused(cfg, "the SDK's Prio3 SumVec refuses groups x 2 x bins entries",
                                err, errcap);
    }
    const uint64_t task_seed = cfg->seed ^ 0x32616767u;
    if ((sigma2 == 0 ? agg_task_make(&s->task, &v, charged, SIM_2AGG_MIN_BATCH, task_seed, &why)
                     : agg_task_make_gauss(&s->task, &v, charged, sigma2, SIM_2AGG_MIN_BATCH,
                                           task_seed, &why)) != 0 ||
        dpm_score_bins_init(&s->bins, sp->edges, sp->nedges) != DPM_OK) {
        return sim_mech_refused(cfg, why, err, errcap);
    }
    if (sp->local_eps != 0 && /* the hybrid: the task tells devices, the estimator debiases */
        (agg_task_set_local(&s->task, sp->local_eps, sp->nedges + 1u, &why) != 0 ||
         dpm_roc_central_params_set_local(&s->params, sp->local_eps, &why) != DPM_OK)) {
        return sim_mech_refused(cfg, why, err, errcap);
    }
    s->nrates = sp->nmetrics;
    memcpy(s->rate, sp->metrics, s->nrates * sizeof(s->rate[0]));
    s->threshold = threshold_bin(sp);
    cfg->checked = 0; /* no dpm_report_t: DAP reports (inprocess_run) */
    cfg->eps_implemented = (double)charged / 65536.0;
    return 0;
}

/* The most examples a device of a measured group holds. */
static uint32_t most_examples(const sim_cfg_t *cfg, const sim_pop_t *pop)
{
    uint32_t most = 0;
    for (size_t k = 0; k < pop->nblocks; k++) {
        const sim_block_t *b = &pop->block[k];
        uint32_t e = b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn;
        if (cfg->group_map[b->group] >= 0 && b->count > 0 && e > most) {
            most = e;
        }
    }
    return most;
}

static uint64_t group_examples(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t g)
{
    uint64_t n = 0;
    for (size_t k = 0; k < pop->nblocks; k++) {
        const sim_block_t *b = &pop->block[k];
        if (cfg->group_map[b->group] == (int32_t)g) {
            n += b->count * (uint64_t)(b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn);
        }
    }
    return n;
}

static void set_item(sim_item_t *it, const char *kind, const char *name, int g, int h, double truth)
{
    snprintf(it->metric, sizeof(it->metric), "auc");
    snprintf(it->kind, sizeof(it->kind), "%s", kind);
    snprintf(it->name, sizeof(it->name), "%s", name);
    it->g = g;
    it->h = h;
    it->truth = truth;
}

/* The devices' pooled rate of group g at the threshold: TPR = C_j / P, FPR = D_j / N. */
static double true_rate(const twoagg_state_t *s, uint32_t g, dpm_metric_t m)
{
    const uint64_t *c = m == DPM_METRIC_TPR ? s->pos[g] : s->neg[g];
    uint64_t above = 0, all = 0;
    for (uint32_t b = 0; b < s->params.bins; b++) {
        above += b >= s->threshold ? c[b] : 0u;
        all += c[b];
    }
    return (double)above / (double)all; /* all > 0: prepare checked each group has both */
}

static uint64_t true_count(const twoagg_state_t *s, uint32_t g, int negatives)
{
    uint64_t n = 0;
    for (uint32_t b = 0; b < s->params.bins; b++) {
        n += negatives ? s->neg[g][b] : s->pos[g][b];
    }
    return n;
}

/* The items of metrics = tpr, fpr from s->rates_at: per metric the groups then the gaps (the
 * estimator's pair order), then each group's positives and negatives. */
static void rate_items(sim_cfg_t *cfg, const twoagg_state_t *s)
{
    const uint32_t G = s->params.groups;
    uint32_t k = s->rates_at;
    for (uint32_t m = 0; m < s->nrates; m++) {
        const char *metric = sim_metric_name(s->rate[m]);
        for (uint32_t g = 0; g < G; g++, k++) {
            set_item(&cfg->items[k], "group", sim_cfg_group_name(cfg, g), (int)g, -1,
                     true_rate(s, g, s->rate[m]));
            snprintf(cfg->items[k].metric, sizeof(cfg->items[k].metric), "%s", metric);
        }
        for (uint32_t g = 0; g < G; g++) {
            for (uint32_t h = g + 1; h < G; h++, k++) {
                char name[2 * 32 + 2];
                snprintf(name, sizeof(name), "%s-%s", sim_cfg_group_name(cfg, g),
                         sim_cfg_group_name(cfg, h));
                set_item(&cfg->items[k], "gap", name, (int)g, (int)h,
                         true_rate(s, g, s->rate[m]) - true_rate(s, h, s->rate[m]));
                snprintf(cfg->items[k].metric, sizeof(cfg->items[k].metric), "%s", metric);
            }
        }
    }
    for (uint32_t g = 0; s->nrates > 0 && g < G; g++) {
        for (int neg = 0; neg < 2; neg++, k++) {
            set_item(&cfg->items[k], "count", sim_cfg_group_name(cfg, g), (int)g, -1,
                     (double)true_count(s, g, neg));
            snprintf(cfg->items[k].metric, sizeof(cfg->items[k].metric), "%s",
                     neg ? "negatives" : "positives");
        }
    }
}

static int twoagg_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                          size_t errcap)
{
    twoagg_state_t *s = st_of(cfg);
    uint32_t most = most_examples(cfg, pop);
    if (most > s->params.max_examples) {
        snprintf(err, errcap,
                 "campaign '%s': devices hold up to %u examples, max_device_examples is %u "
                 "(raise it to %u: the noise grows with it; a device never drops examples)",
                 cfg->spec->name, most, s->params.max_examples, most);
        return -1;
    }
    if (sim_mech_roc_model(cfg, pop, cfg->spec->edges, cfg->spec->nedges, "roc_hist_2agg",
                           &s->model, err, errcap) != 0) {
        return -1;
    }
    uint32_t G = s->params.groups, B = s->params.bins;
    cfg->reporting = 0;
    for (uint32_t g = 0; g < G; g++) {
        int include[SIM_MAX_GROUPS] = {0};
        uint64_t devices = 0;
        double tpr[DPM_MAX_BINS + 1], fpr[DPM_MAX_BINS + 1];
        include[cfg->pop_group[g]] = 1;
        if (group_examples(cfg, pop, g) > REALIZE_MAX_EXAMPLES) {
            sim_roc_truth_sample(s->model, pop, include, s->model->base_key, s->pos[g], s->neg[g],
                                 &devices);
        } else {
            sim_roc_truth_counts(s->model, pop, include, threads, NULL, s->pos[g], s->neg[g],
                                 &devices);
        }
        cfg->reporting += devices;
        s->auc_model[g] = sim_roc_model_auc(cfg->sc, pop, include);
        s->ap[g] = dpm_prc_ap_exact(s->pos[g], s->neg[g], B);
        s->ece[g] = dpm_prc_ece_exact(s->pos[g], s->neg[g], s->params.roc.width, B);
        if (dpm_roc_exact(s->pos[g], s->neg[g], B, tpr, fpr, &s->auc[g]) != DPM_OK) {
            snprintf(err, errcap,
                     "campaign '%s': group '%s' has no positive or no negative example (raise "
                     "devices)",
                     cfg->spec->name, sim_cfg_group_name(cfg, g));
            return -1;
        }
    }
    uint32_t half = G + G * (G - 1) / 2, k = G;
    /* AP and ECE (estimate/pr_calibration.h) have no debias for flipped labels: the hybrid
     * leaves them out */
    const int prc = G >= 2 && s->params.label_flip == 0.0;
    s->rates_at = 2 * half + (prc ? sim_mech_prc_nitems(G) : 0);
    if (sim_cfg_items(cfg, s->rates_at + s->nrates * half + (s->nrates ? 2 * G : 0)) != 0) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    for (uint32_t g = 0; g < G; g++) {
        set_item(&cfg->items[g], "auc_group", sim_cfg_group_name(cfg, g), (int)g, -1, s->auc[g]);
        set_item(&cfg->items[half + g], "auc_group_unb", sim_cfg_group_name(cfg, g), (int)g, -1,
                 s->auc_model[g]);
    }
    for (uint32_t g = 0; g < G; g++) { /* the estimator's order: (0,1), (0,2), ..., (1,2), ... */
        for (uint32_t h = g + 1; h < G; h++, k++) {
            char name[2 * 32 + 2];
            snprintf(name, sizeof(name), "%s-%s", sim_cfg_group_name(cfg, g),
                     sim_cfg_group_name(cfg, h));
            set_item(&cfg->items[k], "auc_gap", name, (int)g, (int)h, s->auc[g] - s->auc[h]);
            set_item(&cfg->items[half + k], "auc_gap_unb", name, (int)g, (int)h,
                     s->auc_model[g] - s->auc_model[h]);
        }
    }
    if (prc) { /* AP and ECE per group and compared, as local DP's roc_hist_groups */
        sim_mech_prc_items(cfg, 2 * half, G, s->ap, s->ece);
    }
    rate_items(cfg, s);
    return 0;
}

static dpm_status_t twoagg_report(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                                  uint32_t run, dpm_rand_t *r, dpm_report_t *rep)
{
    (void)cfg, (void)b, (void)device, (void)run, (void)r, (void)rep;
    return DPM_ERR_UNSUPPORTED; /* prepare refuses every mode but exact */
}

static void twoagg_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    const twoagg_state_t *s = st_of(cfg);
    for (uint32_t g = 0; g < s->params.groups; g++) {
        (void)dpm_roc_agg_init(&agg_of(agg)->group[g], s->params.bins);
    }
}

static dpm_status_t twoagg_agg_add(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    (void)cfg, (void)agg, (void)rep;
    return DPM_ERR_PROTOCOL; /* no dpm.v1 report carries this mode */
}

static dpm_status_t twoagg_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    const twoagg_state_t *s = st_of(cfg);
    for (uint32_t g = 0; g < s->params.groups; g++) {
        dpm_status_t st = dpm_roc_agg_merge(&agg_of(dst)->group[g], &agg_c(src)->group[g]);
        if (st != DPM_OK) {
            return st;
        }
    }
    return DPM_OK;
}

/* One cell's noise in the released sum: one draw from each aggregator. */
static int64_t noise(const twoagg_state_t *s, sim_rng_t *rng)
{
    if (s->params.sigma2 == 0) {
        return sim_rng_dlap_sum(rng, DPM_ROC_CENTRAL_AGGREGATORS, s->params.roc.scale);
    }
    int64_t z = 0;
    for (uint32_t i = 0; i < DPM_ROC_CENTRAL_AGGREGATORS; i++) {
        z += sim_rng_dgauss(rng, (double)s->params.sigma2);
    }
    return z;
}

/* The released sums: the true counts (with label RR: the bin's randomized ones, each positive
 * kept with probability 1 - q and each negative flipped with q, independently), and per cell
 * one draw from each aggregator. */
static int twoagg_exact(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg)
{
    (void)pop;
    const twoagg_state_t *s = st_of(cfg);
    const double q = s->params.label_flip;
    for (uint32_t g = 0; g < s->params.groups; g++) {
        dpm_roc_agg_t *a = &agg_of(agg)->group[g];
        for (uint32_t b = 0; b < s->params.bins; b++) {
            uint64_t pos = s->pos[g][b], n = pos + s->neg[g][b];
            if (q > 0.0) {
                pos = sim_rng_binomial(rng, pos, 1.0 - q) + sim_rng_binomial(rng, n - pos, q);
            }
            a->pos[b] = (int64_t)pos + noise(s, rng);
            a->neg[b] = (int64_t)(n - pos) + noise(s, rng);
        }
    }
    agg->reports = cfg->reporting; /* the reports verified and summed (each group's own) */
    return 0;
}

/* ---- inprocess: every device through the SDK, the two aggregators in this process ------------ */

/* A stream port that counts the bytes it gives (the run's randomness). */
typedef struct {
    sim_stream_t s;
    uint64_t bytes;
} counted_t;

static int counted_fill(void *ctx, uint8_t *out, size_t len)
{
    counted_t *c = ctx;
    dpm_rng_t port = sim_stream_port(&c->s);
    c->bytes += len;
    return port.fill(port.ctx, out, len);
}

/* Device `device` of block b (campaign group g) in run `run`: its histogram (the SDK's binning
 * of its examples), then its report (aggregator/device.h) on its own stream. */
static dpm_status_t device_report(const sim_cfg_t *cfg, const agg_task_t *k, agg_device_t *d,
                                  uint64_t *meas, const sim_block_t *b, uint32_t g, uint64_t device,
                                  uint32_t run, uint64_t *rng_bytes, const char **why)
{
    const twoagg_state_t *s = st_of(cfg);
    uint32_t B = s->params.bins, n = s->params.groups * 2u * B;
    dpm_roc_hist_t rh;
    dpm_score_hist_t h;
    memset(&rh, 0, sizeof(rh));
    rh.bins = s->bins;
    dpm_status_t st = sim_roc_device_hist(s->model, &rh, b, device, &h);
    if (st != DPM_OK) {
        *why = "the device's histogram";
        return st;
    }
    memset(meas, 0, n * sizeof(meas[0]));
    for (uint32_t j = 0; j < B; j++) { /* its own group's cells; the others' stay 0 */
        meas[g * 2u * B + j] = h.pos[j];
        meas[g * 2u * B + B + j] = h.neg[j];
    }
    counted_t rng = {{0}, 0};
    sim_stream_init(&rng.s, sim_cfg_device_key(cfg, run, device));
    dpm_rng_t port = {counted_fill, &rng};
    st = agg_device_sumvec(d, k, port, meas, n, why);
    *rng_bytes += rng.bytes;
    return st;
}

/* The collector's signed sums (groups x (pos bins, neg bins)) into each group's histograms. */
static void twoagg_dap_collected(const sim_cfg_t *cfg, const int64_t *sums, sim_agg_t *agg)
{
    const twoagg_state_t *s = st_of(cfg);
    uint32_t B = s->params.bins;
    for (uint32_t g = 0; g < s->params.groups; g++) {
        dpm_roc_agg_t *a = &agg_of(agg)->group[g];
        for (uint32_t k = 0; k < B; k++) {
            a->pos[k] = sums[g * 2u * B + k];
            a->neg[k] = sums[g * 2u * B + B + k];
        }
    }
}

static int twoagg_inprocess_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run,
                                sim_agg_t *agg, uint64_t *reports, uint64_t *rng_bytes, char *err,
                                size_t errcap)
{
    const twoagg_state_t *s = st_of(cfg);
    dpm_dap_task_t t;
    agg_pair_t pair;
    if (agg_task_decode(&s->task, &t) != DPM_OK ||
        agg_pair_init(&pair, &t, &s->task.key[0], &s->task.key[1], s->task.verify_key) != 0) {
        snprintf(err, errcap, "%s: the task, or out of memory for the aggregators", cfg->label);
        return -1;
    }
    agg_device_t *d = agg_device_new(&s->task, &t);
    uint64_t *meas = calloc(t.vdaf.length + 1u, sizeof(uint64_t));
    int64_t *sums = calloc(t.vdaf.output_len + 1u, sizeof(int64_t));
    int st = -1;
    const char *why = NULL;
    if (d == NULL || meas == NULL || sums == NULL) {
        snprintf(err, errcap, "%s: out of memory", cfg->label);
        goto done;
    }
    for (size_t k = 0; k < pop->nblocks; k++) {
        const sim_block_t *b = &pop->block[k];
        int32_t g = cfg->group_map[b->group];
        for (uint64_t i = pop->first[k]; g >= 0 && i < pop->first[k] + b->count; i++) {
            dpm_status_t ds =
                device_report(cfg, &s->task, d, meas, b, (uint32_t)g, i, run, rng_bytes, &why);
            uint8_t code = 0;
            if (ds == DPM_OK) {
                ds = agg_pair_add(&pair, d->report, d->report_len, &code);
                why = ds == DPM_OK ? NULL : "the aggregators rejected an honest report";
            }
            if (ds != DPM_OK) {
                snprintf(err, errcap, "%s: device %llu: %s: %s (ReportError %u)", cfg->label,
                         (unsigned long long)i, why != NULL ? why : "the SDK refused",
                         dpm_strerror(ds), code);
                goto done;
            }
            (*reports)++;
        }
    }
    /* each aggregator's noise on its own stream, then the collector's signed sums */
    sim_stream_t ls, hs;
    sim_stream_init(&ls, sim_cfg_device_key(cfg, run, LEADER_STREAM));
    sim_stream_init(&hs, sim_cfg_device_key(cfg, run, HELPER_STREAM));
    dpm_rng_t lp = sim_stream_port(&ls), hp = sim_stream_port(&hs);
    dpm_rand_t lr, hr;
    dpm_status_t ps = dpm_rand_init(&lr, &lp);
    if (ps == DPM_OK) {
        ps = dpm_rand_init(&hr, &hp);
    }
    if (ps == DPM_OK) {
        ps = agg_pair_release(&pair, s->params.sensitivity, &lr, &hr);
    }
    if (ps == DPM_OK) {
        ps = agg_pair_collect(&pair, sums, t.vdaf.output_len);
    }
    if (ps == DPM_ERR_POLICY) {
        snprintf(err, errcap,
                 "%s: %llu reports, below the task's minimum batch size of %u: the leader refuses "
                 "the collection (raise devices)",
                 cfg->label, (unsigned long long)pair.aggregated, SIM_2AGG_MIN_BATCH);
        goto done;
    }
    if (ps != DPM_OK) {
        snprintf(err, errcap, "%s: the aggregators' release failed (%llu reports): %s", cfg->label,
                 (unsigned long long)pair.aggregated, dpm_strerror(ps));
        goto done;
    }
    twoagg_dap_collected(cfg, sums, agg);
    st = 0;
done:
    agg_pair_free(&pair);
    agg_device_free(d);
    free(meas);
    free(sums);
    return st;
}

/* ---- network: a deployed leader and helper (sim/run/netmode_dap.c) -------------------------- */

/* A deployed task measures this configuration when the devices' histograms fit its SumVec
 * (groups x 2 x bins entries, each at most max_device_examples) and its noise is the one the
 * estimate's intervals assume: the same ε and sensitivity (2 max_device_examples). */
static int twoagg_dap_fits(const sim_cfg_t *cfg, const dpm_dap_task_t *t, uint64_t sensitivity,
                           char *err, size_t errcap)
{
    const twoagg_state_t *s = st_of(cfg);
    uint32_t length = s->params.groups * 2u * s->params.bins;
    if (t->vdaf.kind != DPM_PRIO3_SUMVEC || t->vdaf.length != length ||
        t->vdaf.max_measurement < cfg->spec->max_device_examples) {
        snprintf(err, errcap,
                 "%s: the task is not a sumvec of length %u (groups x 2 x bins) with max >= %u "
                 "(max_device_examples)",
                 cfg->label, length, cfg->spec->max_device_examples);
        return -1;
    }
    if (s->params.sigma2 != 0) { /* noise = gaussian: the same sigma2, so the same intervals */
        if (t->dp_mechanism != DPM_DAP_DP_DISCRETE_GAUSSIAN ||
            t->central_sigma2 != s->params.sigma2) {
            snprintf(err, errcap,
                     "%s: the task's central noise is not a discrete Gaussian of sigma2 %llu "
                     "(this campaign's at its eps and delta, for l2_sensitivity_sq %llu): deploy "
                     "the task with noise = gaussian and that sigma2, or simulate its own rho",
                     cfg->label, (unsigned long long)s->params.sigma2,
                     (unsigned long long)dpm_roc_central_l2sq(cfg->spec->max_device_examples));
            return -1;
        }
        return 0;
    }
    if (t->dp_mechanism != DPM_DAP_DP_DISCRETE_LAPLACE) {
        snprintf(err, errcap,
                 "%s: the task's central noise is discrete Gaussian (noise = gaussian) and the "
                 "campaign's discrete Laplace: deploy the task with noise = laplace, eps and "
                 "sensitivity, or give the campaign noise = gaussian and delta",
                 cfg->label);
        return -1;
    }
    if (t->local_eps != s->params.local_eps ||
        (t->local_eps != 0 && t->local_bins != s->params.bins)) {
        snprintf(err, errcap,
                 "%s: the task's label RR is local_eps %.6f over %u bins and the campaign's "
                 "%.6f over %u (0: none): deploy the task with the campaign's local_eps and "
                 "bins, or simulate the task's",
                 cfg->label, (double)t->local_eps / 65536.0, t->local_bins,
                 (double)s->params.local_eps / 65536.0, s->params.bins);
        return -1;
    }
    if (t->central_eps != cfg->eps || sensitivity != s->params.sensitivity) {
        snprintf(err, errcap,
                 "%s: the task's central eps %.6f and sensitivity %llu are not the campaign's "
                 "%.6f and %llu (2 x max_device_examples): the intervals would not hold",
                 cfg->label, (double)t->central_eps / 65536.0, (unsigned long long)sensitivity,
                 (double)cfg->eps / 65536.0, (unsigned long long)s->params.sensitivity);
        return -1;
    }
    return 0;
}

static dpm_status_t twoagg_dap_report(const sim_cfg_t *cfg, const agg_task_t *k, agg_device_t *d,
                                      const sim_block_t *b, uint64_t device, uint32_t run,
                                      uint64_t *rng_bytes, const char **why)
{
    /* groups <= DPM_ROC_CENTRAL_MAX_GROUPS and bins <= DPM_MAX_BINS (twoagg_check, the params) */
    uint64_t meas[DPM_ROC_CENTRAL_MAX_GROUPS * 2u * DPM_MAX_BINS];
    int32_t g = cfg->group_map[b->group];
    if (g < 0) {
        return DPM_ERR_RANGE; /* a group the campaign does not measure: no report */
    }
    return device_report(cfg, k, d, meas, b, (uint32_t)g, device, run, rng_bytes, why);
}

/* The selection record (2 groups or more; an empty one otherwise, never written). */
static void *twoagg_ext_new(const sim_cfg_t *cfg, uint32_t runs)
{
    (void)cfg, (void)runs;
    const char *name = "auc";
    return sim_selection_ext_new(1, &name, 1.0);
}

/* results.json "two_aggregators": the trust model, the privacy unit and the noise. */
static void twoagg_ext_json(const sim_cfg_t *cfg, const void *ext, jw_t *w)
{
    const twoagg_state_t *s = st_of(cfg);
    jw_raw(w, ",\n   ");
    jw_key(w, "two_aggregators");
    jw_raw(w, "{");
    jw_key(w, "trust_model");
    jw_str(w, "two_aggregators");
    jw_raw(w, ", ");
    jw_key(w, "privacy_unit");
    jw_str(w, s->params.sigma2 == 0
                  ? "one device's whole contribution in one period, its group included "
                    "(replacement; sensitivity 2 x max_device_examples)"
                  : "one device's whole contribution in one period, its group included "
                    "(replacement; squared L2 sensitivity 2 x max_device_examples^2)");
    jw_member_num(w, "max_device_examples", s->params.max_examples, 10);
    jw_member_num(w, "sensitivity", (double)s->params.sensitivity, 10);
    jw_member_num(w, "central_eps", (double)s->params.eps / 65536.0, 10);
    jw_member_num(w, "aggregators", DPM_ROC_CENTRAL_AGGREGATORS, 10);
    if (s->params.local_eps != 0) { /* the hybrid's second guarantee */
        jw_raw(w, ", ");
        jw_key(w, "local");
        jw_raw(w, "{");
        jw_key(w, "trust_model");
        jw_str(w, "local (holds even if both aggregators collude)");
        jw_raw(w, ", ");
        jw_key(w, "privacy_unit");
        jw_str(w, "one example's label (label-DP by randomized response); the scores, the bins' "
                  "example counts and the group are not covered");
        jw_member_num(w, "local_eps", (double)s->params.local_eps / 65536.0, 10);
        jw_member_num(w, "label_flip", s->params.label_flip, 10);
        jw_raw(w, "}");
    }
    jw_raw(w, ", ");
    jw_key(w, "noise");
    if (s->params.sigma2 == 0) {
        jw_str(w, "discrete_laplace");
        jw_member_num(w, "scale_per_aggregator", s->params.roc.scale, 10);
    } else { /* central_eps: the (eps, delta)-DP its zCDP gives, what a device charges */
        jw_str(w, "discrete_gaussian");
        jw_member_num(w, "sigma2_per_aggregator", (double)s->params.sigma2, 10);
        jw_member_num(w, "l2_sensitivity_sq",
                      (double)2.0 * s->params.max_examples * s->params.max_examples, 10);
        jw_member_num(w, "rho", s->rho, 10);
        jw_member_num(w, "delta", s->delta, 10);
    }
    jw_raw(w, "}");
    if (s->params.groups >= 2) {
        sim_selection_ext_json(cfg, ext, w);
    }
}

/* The rate items' runs (rate_items' order). Each interval is dpm_ci_halfwidth's for the
 * noise's variance (few-events aware), clipped to [0, 1] for a rate; a gap's variance is the
 * sum of its groups' (their own devices, their own noise). */
static void rate_runs(const twoagg_state_t *s, const dpm_roc_central_estimate_t *e, double c,
                      sim_item_run_t *out)
{
    const uint32_t G = s->params.groups;
    const double z = prob_norm_quantile(0.5 + c / 2.0);
    uint32_t k = 0;
    for (uint32_t m = 0; m < s->nrates; m++) {
        dpm_roc_rate_t r[DPM_ROC_CENTRAL_MAX_GROUPS]; /* each group's, from its estimate */
        for (uint32_t g = 0; g < G; g++, k++) {
            if (!e->group[g].valid) {
                r[g].flags = DPM_CI_SMALL_N;
                continue;
            }
            dpm_roc_rate_at(&e->group[g], s->rate[m] == DPM_METRIC_FPR, s->threshold, z, &r[g]);
            unsigned f = r[g].flags;
            double hw = dpm_ci_halfwidth(r[g].var, r[g].jump, 0.0, c, NULL, &f);
            out[k] = (sim_item_run_t){r[g].value, fmax(r[g].value - hw, 0.0),
                                      fmin(r[g].value + hw, 1.0), sqrt(r[g].var), f};
        }
        for (uint32_t g = 0; g < G; g++) {
            for (uint32_t h = g + 1; h < G; h++, k++) {
                if (!e->group[g].valid || !e->group[h].valid) {
                    continue;
                }
                unsigned f = r[g].flags | r[h].flags;
                double var = r[g].var + r[h].var;
                double hw = dpm_ci_halfwidth(var, fmax(r[g].jump, r[h].jump), 0.0, c, NULL, &f);
                double d = r[g].value - r[h].value;
                out[k] = (sim_item_run_t){d, d - hw, d + hw, sqrt(var), f};
            }
        }
    }
    /* the counts: a class total is the sum of B cells, each with the two draws' variance (and
     * with flipped labels, each example's flip through the debias: the estimator's var_P) */
    for (uint32_t g = 0; s->nrates > 0 && g < G; g++) {
        for (int neg = 0; neg < 2; neg++, k++) {
            const dpm_roc_estimate_t *x = &e->group[g];
            const double n = neg ? x->N : x->P, var = neg ? x->var_N : x->var_P;
            if (!(var >= 0.0)) { /* no estimate of this group */
                continue;
            }
            unsigned f = 0;
            double hw = dpm_ci_halfwidth(var, var > 0.0 ? x->count_move : 0.0, 0.0, c, NULL, &f);
            out[k] = (sim_item_run_t){n, n - hw, n + hw, sqrt(var), f};
        }
    }
}

static void twoagg_estimate(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run,
                            sim_item_run_t *out, void *ext)
{
    (void)run;
    const twoagg_state_t *s = st_of(cfg);
    dpm_roc_central_estimate_t *e = malloc(sizeof(*e)); /* ~100 KB: not on the stack */
    if (e == NULL ||
        dpm_roc_central_estimate(&s->params, agg_c(agg)->group, cfg->sc->confidence, e) != DPM_OK) {
        free(e);
        return;
    }
    uint32_t G = s->params.groups, half = G + e->ngaps;
    for (uint32_t g = 0; g < G; g++) {
        const dpm_roc_estimate_t *x = &e->group[g];
        if (x->valid) {
            sim_item_run_t *o = &out[g], *u = &out[half + g];
            o->est = x->auc;
            o->sd = sqrt(x->var_noise);
            o->lo = x->ci_lo;
            o->hi = x->ci_hi;
            o->flags = x->ci_flags;
            u->est = x->auc_unbinned;
            u->sd = sqrt(x->unbinned_var_noise +
                         (isfinite(x->unbinned_var_sampling) ? x->unbinned_var_sampling : 0.0));
            u->lo = x->unbinned_ci_total_lo;
            u->hi = x->unbinned_ci_total_hi;
            u->flags = x->unbinned_total_flags;
        }
    }
    for (uint32_t k = 0; k < e->ngaps; k++) {
        const dpm_roc_central_gap_t *x = &e->gap[k];
        if (x->defined) {
            sim_item_run_t *o = &out[G + k], *u = &out[half + G + k];
            o->est = x->gap;
            o->sd = x->sd;
            o->lo = x->lo;
            o->hi = x->hi;
            o->flags = x->flags;
            u->est = x->gap_unbinned;
            u->sd = x->unbinned_sd;
            u->lo = x->unbinned_lo;
            u->hi = x->unbinned_hi;
            u->flags = x->unbinned_flags;
        }
    }
    rate_runs(s, e, cfg->sc->confidence, out + s->rates_at);
    dpm_roc_groups_prc_t *f = G >= 2 && s->params.label_flip == 0.0 ? calloc(1, sizeof(*f)) : NULL;
    if (f != NULL) { /* each group's sums are noised apart: independent groups */
        dpm_prc_estimate_t x;
        f->groups = G;
        f->bins = s->params.roc.bins;
        for (uint32_t g = 0; g < G; g++) {
            if (dpm_prc_estimate(&s->params.roc, &agg_c(agg)->group[g], cfg->sc->confidence, &x) !=
                DPM_OK) {
                x.valid = 0;
            }
            dpm_prc_group_of(&x, 0, &f->ap[g]);
            dpm_prc_group_of(&x, 1, &f->ece[g]);
        }
        dpm_prc_compare_groups(f->ap, G, NULL, cfg->sc->confidence, &f->ap_compare);
        dpm_prc_compare_groups(f->ece, G, NULL, cfg->sc->confidence, &f->ece_compare);
        sim_mech_prc_runs(f, out + 2 * half);
        free(f);
    }
    if (ext != NULL && G >= 2) {
        dpm_pairwise_t *pw = malloc(sizeof(*pw));
        double truth[DPM_PAIRWISE_MAX_PAIRS];
        for (uint32_t k = 0; k < e->ngaps; k++) {
            truth[k] = cfg->items[G + k].truth;
        }
        if (pw != NULL && dpm_roc_central_pairwise(e, cfg->sc->confidence, pw) == DPM_OK) {
            sim_selection_add(&((sim_selection_ext_t *)ext)->family[0], pw, truth);
        }
        free(pw);
    }
    free(e);
}

/* The console: the largest true gap (or the AUC of a single group). */
static void twoagg_summary(const sim_result_t *res, char *buf, size_t cap)
{
    const twoagg_state_t *s = st_of(&res->cfg);
    uint32_t G = s->params.groups, best = 0;
    double gap = -1.0;
    for (uint32_t k = G; k < G + G * (G - 1) / 2; k++) {
        if (fabs(res->cfg.items[k].truth) > gap) {
            gap = fabs(res->cfg.items[k].truth);
            best = k;
        }
    }
    sim_item_summary_t m;
    sim_result_summary(res, best, &m);
    char noise[48];
    if (s->params.sigma2 == 0) {
        snprintf(noise, sizeof(noise), "t = %.4g", s->params.roc.scale);
    } else {
        snprintf(noise, sizeof(noise), "sigma2 = %llu", (unsigned long long)s->params.sigma2);
    }
    snprintf(buf, cap, "%s %s %+.4f: rmse %.3g, cover %.0f%% (two aggregators, %s each)",
             best < G ? "AUC" : "gap", res->cfg.items[best].name, m.truth, m.rmse,
             100.0 * m.coverage, noise);
}

const sim_mech_t sim_mech_roc_hist_2agg = {
    .name = "roc_hist_2agg",
    .id = DPM_MECH_NONE,
    .what = "its group's exact label histogram as Prio3 shares; two aggregators add the noise",
    .check = twoagg_check,
    .init = twoagg_init,
    .prepare = twoagg_prepare,
    .release = sim_mech_release_model,
    .participates = sim_mech_every_device,
    .report = twoagg_report,
    .agg_init = twoagg_agg_init,
    .agg_add = twoagg_agg_add,
    .agg_merge = twoagg_agg_merge,
    .exact = twoagg_exact,
    .estimate = twoagg_estimate,
    .ext_new = twoagg_ext_new,
    .ext_free = free,
    .ext_json = twoagg_ext_json,
    .summary = twoagg_summary,
    .inprocess_run = twoagg_inprocess_run,
    .dap_fits = twoagg_dap_fits,
    .dap_report = twoagg_dap_report,
    .dap_collected = twoagg_dap_collected,
};
