/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim output files, written into the --out directory, the same for every mechanism (its
 * items, sim/devices/mech.h), plus what a mechanism adds (its ext):
 *
 *   runs.csv      one row per configuration, run and item:
 *                 devices,campaign,id,mechanism,split,eps,eps_implemented,run,metric,kind,
 *                 g,h,name,truth,estimate,error,ci_lo,ci_hi,covered,sd
 *   summary.csv   one row per configuration and item, across runs:
 *                 devices,campaign,id,mechanism,split,eps,eps_implemented,metric,kind,g,h,name,
 *                 truth,runs,mean_error,rmse,mean_abs_error,paper_abs_error,coverage,mean_sd,
 *                 seconds
 *   results.json  {"tool": "dpm-sim", "scenario", "description", "mode", "seed",
 *                  "population_seed", "runs", "confidence", "sizes", "nu2", "threads",
 *                  "seconds",
 *                  "configs": [{"devices", "campaign", "id", "mechanism", "split", "eps",
 *                     "eps_implemented", "label", "seconds", "prepare_seconds", "reports",
 *                     "items": [{"metric", "kind", "g", "h", "name", "truth", "rmse",
 *                        "mean_error", "mean_abs_error", "paper_abs_error", "coverage",
 *                        "mean_sd", "runs": [[estimate, ci_lo, ci_hi], ...]}]
 *                     [, the mechanism's own object, e.g. "roc": {...}]}]}
 *   <ext>.csv     a mechanism's own file (roc_hist: roc.csv, one row per threshold; see
 *                 mech_roc_hist.c), each row starting with the seven configuration columns.
 * Items: tuple mechanisms: kind "group" (a group's mean metric, h = -1) and "gap" (m_g - m_h),
 * metric scale [0, 1]; roc_hist: kind "auc" (against the model's AUC) and "auc_binned" (against
 * the devices' binned AUC), g = h = -1. CSV and JSON write no NaN: empty CSV fields, JSON null. */
#ifndef DPM_SIM_OUTPUT_H
#define DPM_SIM_OUTPUT_H

#include "sim/run/session.h"

/* Write the files. 0, or -1 with a message in err. */
int sim_output_write(const char *dir, const sim_scenario_t *sc, const sim_run_opts_t *o,
                     const sim_session_t *s, char *err, size_t errcap);

/* mkdir -p. 0 or -1. */
int sim_mkdir_p(const char *path);

#endif /* DPM_SIM_OUTPUT_H */
