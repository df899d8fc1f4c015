/* SPDX-License-Identifier: Apache-2.0 */
/* The reproduction of the DPAUC baseline's numbers in the FHAUC paper (Baykara, Ünal, Akgün;
 * sdk/docs/dpauc.md §Table 1, sdk/docs/dpauc.md §Table 3, sdk/docs/dpauc.md §Re-simulation), run by
 * `dpm-sim repro dpauc`. References: host-sim/scenarios/paper-dpauc.ref (Tables 1 and 3 as
 * printed). The paper's data files are not available offline, so the experiment uses synthetic
 * binormal data of each row's size, class balance and AUC; only the standard deviations at the
 * largest size are compared with the paper (they depend on the data only through P, Q and roughly
 * the ROC's shape); every other printed cell is shown beside ours, not counted. Writes
 * OUT/dpauc.json and OUT/dpauc.md. */
#ifndef DPM_SIM_REPRO_DPAUC_H
#define DPM_SIM_REPRO_DPAUC_H

#include "sim/repro/repro_cells.h"
#include "sim/repro/repro_disparity.h"

int repro_dpauc(const repro_opts_t *o, repro_t *r, double *seconds);

#endif /* DPM_SIM_REPRO_DPAUC_H */
