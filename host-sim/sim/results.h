/* SPDX-License-Identifier: Apache-2.0 */
/* Per-run estimates of one configuration and their summary across runs.
 *
 * Items, per metric: the d campaign groups (mean metric), then every pair g < h in the order
 * (0,1), (0,2), ..., (d-2,d-1) (the disparity m_g - m_h). Everything is on the metric's own
 * scale [0, 1] (the devices send v = 2 metric - 1; means and gaps are halved back).
 * Estimates use the server code (dpm_disp_estimate / dpm_disp_gap) with the group sizes known or
 * estimated from the GRR counts (scenario `sizes`) and the population's true or the worst-case
 * second moment (scenario `nu2`); intervals are normal at the scenario's confidence. */
#ifndef DPM_SIM_RESULTS_H
#define DPM_SIM_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim_cfg.h"

#define SIM_MAX_ITEMS (SIM_MAX_GROUPS + SIM_MAX_GROUPS * (SIM_MAX_GROUPS - 1) / 2)

typedef struct {
    double est, lo, hi, sd; /* NaN when the estimator refused (e.g. estimated size <= 0) */
} sim_item_run_t;

typedef struct {
    double truth;
    uint32_t runs;     /* runs with an estimate */
    double mean_error; /* mean of est - truth */
    double rmse;
    double mean_abs_error;
    double paper_abs_error; /* gaps: mean of ||est| - |truth||, the paper's Table 2 statistic */
    double coverage;        /* fraction of runs whose interval holds the truth */
    double mean_sd;         /* mean predicted standard deviation */
} sim_item_summary_t;

/* roc_hist, per run: the AUC estimate and its two intervals (noise only; noise + sampling). */
typedef struct {
    double est, lo, hi, sd, lo_total, hi_total, sd_total;
} sim_roc_auc_run_t;

/* roc_hist across runs. auc: as an item (truth = the population's binned AUC, coverage of the
 * noise-only interval); the band over the interior thresholds j = 1 .. bins - 1. */
typedef struct {
    sim_item_summary_t auc;
    double coverage_total;     /* runs whose noise + sampling interval holds the truth */
    double band_pointwise;     /* mean over thresholds of the pointwise coverage */
    double band_all_pointwise; /* runs whose pointwise band holds every true TPR */
    double band_simultaneous;  /* runs whose simultaneous band holds every true TPR */
} sim_roc_summary_t;

typedef struct {
    uint64_t devices;
    sim_cfg_t cfg;
    sim_truth_t truth;
    uint32_t nitems;     /* per metric */
    uint32_t runs;       /* runs stored */
    sim_item_run_t *run; /* [run][metric][item] */
    double seconds;
    uint64_t reports;   /* device reports made (inprocess, network) */
    uint64_t rng_bytes; /* randomness drawn: device port bytes, or 8 x exact-mode words */
    /* roc_hist (cfg.roc) */
    sim_roc_auc_run_t *roc_auc;           /* [runs] */
    dpm_roc_estimate_t *roc_run0;         /* run 0's whole estimate (curve and bands) */
    uint32_t roc_valid;                   /* runs with an estimate */
    uint32_t roc_cover[DPM_MAX_BINS + 1]; /* per threshold: runs whose pointwise band holds it */
    double roc_tpr_sum[DPM_MAX_BINS + 1], roc_tpr_sq_err[DPM_MAX_BINS + 1];
    uint32_t roc_all_pointwise, roc_simultaneous;
} sim_result_t;

/* Storage for `runs` runs. 0, or -1 when memory runs out. */
int sim_result_init(sim_result_t *res, const sim_cfg_t *cfg, const sim_truth_t *truth,
                    uint64_t devices, uint32_t runs);
void sim_result_free(sim_result_t *res);

/* Estimate run `run` from its aggregate. */
void sim_result_add_run(sim_result_t *res, uint32_t run, const sim_agg_t *agg);

/* Item i of metric j: its name ("a" or "a-b"), groups (h = -1 for a group) and truth. */
void sim_result_item(const sim_result_t *res, uint32_t j, uint32_t i, int *g, int *h,
                     double *truth);
const sim_item_run_t *sim_result_at(const sim_result_t *res, uint32_t run, uint32_t j, uint32_t i);
void sim_result_summary(const sim_result_t *res, uint32_t j, uint32_t i, sim_item_summary_t *s);
void sim_result_roc_summary(const sim_result_t *res, sim_roc_summary_t *s);

#endif /* DPM_SIM_RESULTS_H */
