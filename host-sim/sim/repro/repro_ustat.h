/* SPDX-License-Identifier: Apache-2.0 */
/* Bell, Bellet, Gascón, Kulkarni (AISTATS 2020), locally private AUC (sdk/docs/ustat.md),
 * run by `dpm-sim repro ustat`. The paper prints no table and the spec holds none of its
 * figures' values, so there is no paper number to match: the cells are the spec's offline
 * targets (sdk/docs/ustat.md §Offline targets: Theorem 3's bound, Figure 3's trends: the tree
 * robust to d, Algorithm 1 blowing up with k) on synthetic data with the paper's smallest class
 * (693), every check a self-check and every error table info. Writes OUT/ustat.json and
 * OUT/ustat.md. */
#ifndef DPM_SIM_REPRO_USTAT_H
#define DPM_SIM_REPRO_USTAT_H

#include "sim/repro/repro_cells.h"
#include "sim/repro/repro_disparity.h"

int repro_ustat(const repro_opts_t *o, repro_t *r, double *seconds);

#endif /* DPM_SIM_REPRO_USTAT_H */
