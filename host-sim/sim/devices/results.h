/* SPDX-License-Identifier: Apache-2.0 */
/* Per-run estimates of one configuration and their summary across runs, generic over the
 * mechanism: a configuration estimates its items (sim/devices/mech.h: group means, gaps, the AUC,
 * ...), each run gives every item an estimate, an interval and a predicted sd, and the summary
 * compares them with the item's truth. Whatever else a mechanism keeps per run (roc_hist: the
 * curve and its bands) is its `ext`. */
#ifndef DPM_SIM_RESULTS_H
#define DPM_SIM_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/devices/sim_cfg.h"

typedef struct {
    double truth;
    uint32_t runs;     /* runs with an estimate */
    double mean_error; /* mean of est - truth */
    double rmse;
    double mean_abs_error;
    double paper_abs_error; /* mean of ||est| - |truth||: Juarez & Korolova's Table 2 statistic */
    double coverage;        /* fraction of runs whose interval holds the truth */
    double mean_sd;         /* mean predicted standard deviation */
    double sd_abs_error;    /* sample sd (n - 1) of ||est| - |truth|| over the runs */
    double flagged;         /* share of runs whose interval has a flag (estimate/ci_flags.h) */
    double no_claim;        /* share of runs whose interval claims no coverage */
} sim_item_summary_t;

typedef struct sim_result {
    uint64_t devices;
    sim_cfg_t cfg;       /* a copy: its items are the result's own; module heap memory is not
                          * for the result (released with the configuration) */
    uint32_t runs;       /* runs stored */
    sim_item_run_t *run; /* [run][item] */
    void *ext;           /* the mechanism's per-configuration extras (ext_new), or NULL */
    double seconds;      /* the runs' wall time */
    double prepare_seconds;
    uint64_t reports;   /* device reports made (inprocess, network) */
    uint64_t rng_bytes; /* randomness drawn: device port bytes, or 8 x exact-mode words */
} sim_result_t;

/* Storage for `runs` runs of a prepared configuration. 0, or -1 when memory runs out. */
int sim_result_init(sim_result_t *res, const sim_cfg_t *cfg, uint64_t devices, uint32_t runs);
void sim_result_free(sim_result_t *res);

/* Estimate run `run` from its aggregate (the mechanism's estimate hook). */
void sim_result_add_run(sim_result_t *res, uint32_t run, const sim_agg_t *agg);

const sim_item_run_t *sim_result_at(const sim_result_t *res, uint32_t run, uint32_t item);
void sim_result_summary(const sim_result_t *res, uint32_t item, sim_item_summary_t *s);

#endif /* DPM_SIM_RESULTS_H */
