/* SPDX-License-Identifier: Apache-2.0 */
/* `dpm-sim repro auc_compare`: every AUC mechanism (roc_hist, roc_hist_groups, dpauc with
 * servers A and B, ustat_bins, ustat_tree) at equal eps = 1 on the same 10^5 synthetic examples,
 * in two device shapes: many devices with few examples each (10^4 x 10) and few parties with
 * many (15, the FHAUC paper's setting). Every report through the SDK on its own stream, the
 * host estimators. Per mechanism: RMSE of the AUC against the examples' exact AUC; RMSE, bias
 * and interval coverage against its own target (its quantized AUC of the same examples);
 * encoded bytes per device, reports per device, rounds, host ns per report. Writes
 * OUT/auc_compare.json and OUT/auc_compare.md and prints the table; its cells are info (no
 * paper runs this comparison). 100 runs (--quick 20, --long 1000). */
#ifndef DPM_SIM_REPRO_AUC_COMPARE_H
#define DPM_SIM_REPRO_AUC_COMPARE_H

#include "sim/repro/repro_cells.h"
#include "sim/repro/repro_disparity.h"

int repro_auc_compare(const repro_opts_t *o, repro_t *r, double *seconds);

#endif /* DPM_SIM_REPRO_AUC_COMPARE_H */
