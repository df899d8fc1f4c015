/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim output files, written into the --out directory:
 *
 *   runs.csv      one row per configuration, run, metric and item:
 *                 devices,campaign,id,mechanism,split,eps,eps_implemented,run,metric,kind,
 *                 g,h,name,truth,estimate,error,ci_lo,ci_hi,covered,sd
 *   summary.csv   one row per configuration, metric and item, across runs:
 *                 devices,campaign,id,mechanism,split,eps,eps_implemented,metric,kind,g,h,name,
 *                 truth,runs,mean_error,rmse,mean_abs_error,paper_abs_error,coverage,mean_sd,
 *                 seconds
 *   results.json  {"tool": "dpm-sim", "scenario", "description", "mode", "seed", "runs",
 *                  "confidence", "sizes", "nu2", "threads", "seconds",
 *                  "configs": [{"devices", "campaign", "id", "mechanism", "split", "eps",
 *                     "eps_implemented", "label", "seconds", "reports",
 *                     "metrics": [{"metric", "items": [{"kind": "group"|"gap", "g", "h",
 *                        "name", "truth", "rmse", "mean_error", "mean_abs_error",
 *                        "paper_abs_error", "coverage", "mean_sd",
 *                        "runs": [[estimate, ci_lo, ci_hi], ...]}]}]}]}
 * kind "group": a group's mean metric (h = -1); "gap": m_g - m_h. Metric scale [0, 1]. CSV
 * and JSON write no NaN: empty CSV fields and JSON null.
 *
 * roc_hist configurations (estimate/roc.h): runs.csv and summary.csv get one row per run /
 * configuration with metric = kind = name = "auc", g = h = -1 (truth: the population's binned
 * AUC; the interval: noise only, at the scenario's confidence); their JSON config has
 * "metrics": [] and "roc": {"bins", "edges", "band", "truth": {"auc", "fpr", "tpr"},
 *    "auc": {"truth", "rmse", "mean_error", "mean_abs_error", "coverage", "coverage_total",
 *            "mean_sd", "runs_valid", "runs": [[estimate, ci_lo, ci_hi], ...]},
 *    "coverage": {"band_pointwise", "band_all_pointwise", "band_simultaneous",
 *                 "pointwise": [per threshold], "tpr_mean": [...], "tpr_rmse": [...]},
 *    "run0": {"auc", "ci", "ci_total", "projected", "fpr", "tpr", "tpr_lo", "tpr_hi",
 *             "tpr_lo_sim", "tpr_hi_sim"}}
 * and a fourth file is written:
 *   roc.csv       one row per roc_hist configuration and threshold j = 0 .. bins (predict
 *                 positive when bin >= j; threshold = score edge j - 1, 0 for j = 0, empty for
 *                 j = bins): devices,campaign,id,mechanism,split,eps,eps_implemented,point,
 *                 threshold,fpr_truth,tpr_truth,fpr,tpr,tpr_lo,tpr_hi,tpr_lo_sim,tpr_hi_sim,
 *                 tpr_mean,tpr_rmse,coverage   (fpr .. tpr_hi_sim: run 0; the rest across runs) */
#ifndef DPM_SIM_OUTPUT_H
#define DPM_SIM_OUTPUT_H

#include "sim/session.h"

/* Write the three files. 0, or -1 with a message in err. */
int sim_output_write(const char *dir, const sim_scenario_t *sc, const sim_run_opts_t *o,
                     const sim_session_t *s, char *err, size_t errcap);

/* mkdir -p. 0 or -1. */
int sim_mkdir_p(const char *path);

/* A JSON string literal of s (quotes, backslash, control characters escaped). */
void sim_json_string(FILE *f, const char *s);
/* A JSON number, or null when not finite. */
void sim_json_number(FILE *f, double x);

#endif /* DPM_SIM_OUTPUT_H */
