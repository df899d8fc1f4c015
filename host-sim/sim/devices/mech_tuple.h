/* SPDX-License-Identifier: Apache-2.0 */
/* The tuple mechanisms in the simulator (sim/devices/mech.h): tuple_mr and tuple_ml.
 *
 * Device input: its group (the campaign's index of its population group) and, per campaign
 * metric, the metric as an exact rational (dpm_metric_ratio of its confusion counts, or the
 * block's metric value). Report: dpm_mech_report_tuple (SDK split), or with `split = paper` the
 * paper-split device of tuple_paper.h (REPRODUCTION ONLY, not the stated ε).
 * Aggregate: per metric the estimator's dpm_disp_agg_t (per-group counts and exact sums).
 * Truth: per metric and measured group the population's mean and second moment of
 * v = 2 metric - 1 (Neumaier sums over the blocks), group sizes = the devices that report.
 * Items, per metric: the d campaign groups (mean metric), then every pair g < h in the order
 * (0,1), (0,2), ..., (d-2,d-1) (the gap m_g - m_h), all on the metric's [0, 1] scale. Estimates
 * use the server code (dpm_disp_estimate / dpm_disp_gap) with the group sizes known or estimated
 * from the GRR counts (scenario `sizes`) and the population's true or the worst-case second
 * moment (scenario `nu2`); intervals are normal at the scenario's confidence.
 * Exact mode: see the comment of tuple_exact in mech_tuple.c.
 *
 * What tests and the reproduction reach into: */
#ifndef DPM_SIM_MECH_TUPLE_H
#define DPM_SIM_MECH_TUPLE_H

#include <stdint.h>

#include "estimate/disparity.h"
#include "sim/devices/mech.h"
#include "sim/devices/tuple_paper.h"

/* What exact mode needs: the devices' integers, as the aggregate sees them. */
typedef struct {
    int ml;                   /* 0: tuple_mr, 1: tuple_ml */
    uint32_t keep_g, other_g; /* group GRR: keep + (d - 1) other = 2^32 */
    uint32_t keep_v, other_v; /* value RR (tuple_mr) */
    uint32_t frac_bits;       /* F (tuple_ml) */
    double t_kept, t_flip;    /* discrete Laplace scales, grid units (tuple_ml) */
} sim_tuple_noise_t;

typedef struct {
    uint32_t nmetrics;
    dpm_metric_t metrics[DPM_CAMPAIGN_MAX_METRICS];
    dpm_disp_params_t params; /* the estimator's view, from the devices' own integers */
    sim_tuple_noise_t noise;
    tuple_paper_t paper; /* cfg->paper: the paper-split device */
    /* prepare: the truth */
    double n[SIM_MAX_GROUPS];
    double mean[DPM_CAMPAIGN_MAX_METRICS][SIM_MAX_GROUPS]; /* of v = 2 metric - 1 */
    double nu2[DPM_CAMPAIGN_MAX_METRICS][SIM_MAX_GROUPS];
} sim_tuple_state_t;

typedef struct {
    uint32_t nmetrics;
    dpm_disp_agg_t m[DPM_CAMPAIGN_MAX_METRICS];
} sim_tuple_agg_t;

/* The module's state and aggregate inside a tuple configuration (NULL for another mechanism). */
sim_tuple_state_t *sim_tuple_state(sim_cfg_t *cfg);
const sim_tuple_state_t *sim_tuple_state_c(const sim_cfg_t *cfg);
sim_tuple_agg_t *sim_tuple_agg(sim_agg_t *agg);
const sim_tuple_agg_t *sim_tuple_agg_c(const sim_agg_t *agg);

/* The SDK's tuple mechanism for a campaign (mech, d groups, metrics, Q16.16 eps, id) exactly as
 * a device builds it (dpm_mech_init), and what the estimator and exact mode take from it. 0, or
 * -1 with the SDK's reason in *why (e.g. an eps too small for the quantized split). The planner
 * builds its campaigns with it too: the m metrics of a report split eps m ways. */
int sim_tuple_sdk_build(dpm_disp_mech_t mech, uint32_t d, const dpm_metric_t *metrics,
                        uint32_t nmetrics, dpm_eps_t eps, uint32_t id, dpm_mech_t *m,
                        dpm_disp_params_t *params, sim_tuple_noise_t *noise, const char **why);

/* Index of the item of metric j (campaign order): group g (h < 0), or the gap g - h (g < h). */
uint32_t sim_tuple_item(const sim_cfg_t *cfg, uint32_t j, int g, int h);

#endif /* DPM_SIM_MECH_TUPLE_H */
