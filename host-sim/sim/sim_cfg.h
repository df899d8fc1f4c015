/* SPDX-License-Identifier: Apache-2.0 */
/* One simulated configuration: a scenario campaign at one ε over one population. It holds the
 * device mechanism (built exactly as a device builds it, dpm_mech_init), the server's estimator
 * parameters, the integers exact mode needs, and the device itself: sim_device_report turns one
 * device's tuple into its encoded report with the real SDK.
 *
 * Mechanisms plug in here: today tuple_mr / tuple_ml (SDK splits, and the paper's splits for
 * reproduction through tuple_sim). A new mechanism adds its device function, its aggregate
 * (sim_agg_t) and its exact sampler; the runners do not change.
 *
 * Seeds: the configuration's base seed is tuple_sim_device_key(seed, campaign, eps index);
 * device i of run r then draws from the stream tuple_sim_device_key(base, r, i), the same
 * derivation as tuple_sim (replayable device by device, independent of the thread count). */
#ifndef DPM_SIM_CFG_H
#define DPM_SIM_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/report.h"
#include "dpm/roc_hist.h"
#include "estimate/disparity.h"
#include "estimate/roc.h"
#include "sim/population.h"
#include "sim/roc_sim.h"
#include "sim/scenario.h"
#include "sim/tuple_sim.h"

/* What exact mode needs: the devices' integers, as the aggregate sees them. */
typedef struct {
    int ml;                   /* 0: tuple_mr, 1: tuple_ml */
    uint32_t d;               /* groups */
    uint32_t keep_g, other_g; /* group GRR: keep + (d - 1) other = 2^32 */
    uint32_t keep_v, other_v; /* value RR (tuple_mr) */
    uint32_t frac_bits;       /* F (tuple_ml) */
    double t_kept, t_flip;    /* discrete Laplace scales, grid units (tuple_ml) */
} sim_noise_t;

typedef struct {
    const sim_scenario_t *sc;
    const sim_campaign_spec_t *spec;
    uint32_t campaign_index, eps_index;
    dpm_eps_t eps;
    int paper;       /* 1: paper split, REPRODUCTION ONLY */
    dpm_mech_t mech; /* SDK split: the device mechanism */
    tuple_sim_mech_t paper_mech;
    dpm_disp_params_t params; /* the estimator's view, from the devices' own integers */
    sim_noise_t noise;
    uint32_t d, nmetrics;
    dpm_metric_t metrics[DPM_CAMPAIGN_MAX_METRICS];
    int32_t group_map[SIM_MAX_GROUPS];  /* population group -> campaign group, -1: not measured */
    uint32_t pop_group[SIM_MAX_GROUPS]; /* campaign group -> population group */
    uint64_t seed;
    double eps_implemented; /* what one report spends (+inf: no finite ε, paper M_L) */
    char label[96];
    /* roc_hist (roc = 1; d = groups measured, nmetrics = 0) */
    int roc;
    dpm_roc_hist_t roc_mech;     /* the device mechanism (dpm_roc_hist_init) */
    dpm_roc_params_t roc_params; /* the estimator's view: the devices' own Laplace scale */
    double roc_scale;            /* t = scale_num / scale_den, counts */
    sim_roc_model_t *roc_model;  /* sim_cfg_prepare: the population's examples and truth */
    uint64_t roc_pos[DPM_MAX_BINS], roc_neg[DPM_MAX_BINS]; /* true counts (prepare) */
    uint64_t roc_devices;                                  /* devices that report */
} sim_cfg_t;

/* Build configuration (campaign c, ε index e). 0, or -1 with a message in err (a campaign the
 * SDK refuses, e.g. an ε too small for the tuple_ml grid). */
int sim_cfg_init(sim_cfg_t *cfg, const sim_scenario_t *sc, uint32_t c, uint32_t e, char *err,
                 size_t errcap);

/* After sim_cfg_init, before running over pop: roc_hist builds its example model and counts
 * the population's true histogram (threads split the devices). Nothing for tuple campaigns.
 * 0, or -1 with a message. sim_cfg_release frees what it allocated (safe to call twice, and on
 * copies of cfg only once). */
int sim_cfg_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                    size_t errcap);
void sim_cfg_release(sim_cfg_t *cfg);

/* 1 if the devices of block b report in this configuration: their group is measured and every
 * campaign metric is defined for them. */
int sim_cfg_participates(const sim_cfg_t *cfg, const sim_block_t *b);

/* The key of device `device`'s stream in run `run`. */
uint64_t sim_cfg_device_key(const sim_cfg_t *cfg, uint32_t run, uint64_t device);

/* One device: its statistics (dpm_metric_ratio of its confusion counts, or its metric values),
 * dpm_mech_report_tuple on its own seeded stream (period = run), dpm_report_encode into
 * buf[DPM_REPORT_MAX_BYTES]. *rep gets the report before encoding; *rng_bytes (may be NULL)
 * the port RNG bytes the device drew. The block must participate. DPM_ERR_RANGE: the rare
 * tuple_ml overflow (< 2^-45 per report; the device sends nothing). */
dpm_status_t sim_device_report(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                               uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len,
                               uint64_t *rng_bytes);

/* roc_hist: one device's perturbed histogram (its score histogram through the SDK, then
 * dpm_roc_hist_perturb on its own stream). */
dpm_status_t sim_roc_device_report(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                                   uint64_t device, dpm_roc_hist_report_t *out,
                                   uint64_t *rng_bytes);

/* ---- aggregates -------------------------------------------------------------------------- */

typedef struct {
    uint32_t nmetrics;
    dpm_disp_agg_t m[DPM_CAMPAIGN_MAX_METRICS];
    dpm_roc_agg_t roc; /* roc_hist (bins 0 otherwise) */
    uint64_t dropped;  /* devices that sent nothing (DPM_ERR_RANGE) */
} sim_agg_t;

int sim_agg_init(sim_agg_t *agg, const sim_cfg_t *cfg);
/* Add a decoded report, after checking it against the campaign as the collector does (SDK
 * split: dpm_mech_check_report). DPM_ERR_PROTOCOL for a report the collector would reject. */
dpm_status_t sim_agg_add_report(sim_agg_t *agg, const sim_cfg_t *cfg, const dpm_report_t *rep);
dpm_status_t sim_agg_merge(sim_agg_t *dst, const sim_agg_t *src);
/* roc_hist: add one perturbed histogram. */
dpm_status_t sim_agg_add_roc(sim_agg_t *agg, const dpm_roc_hist_report_t *rep);
/* Add a signed 64-bit amount to a group's exact sum (exact mode). */
void sim_acc_add(dpm_disp_acc_t *acc, int64_t v);

/* ---- truth ---------------------------------------------------------------------------------- */

typedef struct {
    uint64_t reporting;                                    /* devices that take part */
    double n[SIM_MAX_GROUPS];                              /* campaign group sizes */
    double mean[DPM_CAMPAIGN_MAX_METRICS][SIM_MAX_GROUPS]; /* of v = 2 metric - 1 */
    double nu2[DPM_CAMPAIGN_MAX_METRICS][SIM_MAX_GROUPS];
    /* roc_hist: the population's binned ROC (threshold j = 0 .. bins) and AUC */
    uint32_t roc_bins;
    double roc_auc;
    double roc_tpr[DPM_MAX_BINS + 1], roc_fpr[DPM_MAX_BINS + 1];
} sim_truth_t;

/* The population's truth for this configuration. -1 with a message if a measured group has no
 * reporting device. */
int sim_truth_compute(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_truth_t *t, char *err,
                      size_t errcap);

#endif /* DPM_SIM_CFG_H */
