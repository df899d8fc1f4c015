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

/* `dpm-sim repro fhauc` (issue 31 item 6): the FHAUC paper's claim, the exact pooled AUC with no
 * party's counts seen, through two aggregators: the 15 parties of each table row (the same
 * synthetic data) send their TP and FP at N thresholds as Prio3 SumVec reports made by the SDK's
 * device calls; the leader and the helper (host-sim/aggregator) verify and aggregate. Table
 * exact: the sums their shares add up to equal the plaintext sums (max difference 0) and so does
 * Eq. 2's AUC (difference 0), self-checks. Table central_eps1 (info): the AUC's RMSE with central
 * discrete Laplace at eps = 1 (scale 2N / eps per aggregator, unit one example) beside DPAUC's at
 * the published calibration. Writes OUT/fhauc.json and OUT/fhauc.md. */
int repro_fhauc(const repro_opts_t *o, repro_t *r, double *seconds);

#endif /* DPM_SIM_REPRO_DPAUC_H */
