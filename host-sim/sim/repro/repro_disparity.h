/* SPDX-License-Identifier: Apache-2.0 */
/* The reproduction of Juarez & Korolova (2022) (sdk/docs/tuple.md), run by
 * `dpm-sim repro`. References: host-sim/scenarios/paper-disparity.ref; experiments:
 * paper-disparity-table1.scn (the planner's Table 1, each answer checked by simulation),
 * paper-disparity-table2.scn (Table 2's empirical errors), and three experiments the scenario
 * format cannot express, built here: Figure 4's variance validation (20 devices with their own
 * values, 10^6 runs), per-group estimates with CIs (4 groups of 5 value blocks, one run) and the
 * farm's self-checks (every device replayed alone adds up to the run; the thread count does not
 * matter). Everything simulated goes through the one device farm (inprocess) or exact mode.
 * Then the selection-aware disparities of this project (repro_selection.h: every gap at once and
 * the largest gap, over populations of its own), into the same files.
 *
 * Writes OUT/disparity.json (repro_cells.h), OUT/disparity.md, the CSVs of
 * host-sim/plot/disparity.py and its PNGs, and OUT/paper-disparity-table2/ (dpm-sim's own
 * outputs of the Table 2 scenario). */
#ifndef DPM_SIM_REPRO_DISPARITY_H
#define DPM_SIM_REPRO_DISPARITY_H

#include "sim/repro/repro_cells.h"

typedef struct {
    const char *out_dir;  /* where the files go */
    const char *data_dir; /* the scenarios and reference files (host-sim/scenarios) */
    int quick;            /* smaller simulations: seconds, for tests; not the reproduction */
    int long_runs;        /* --long: more runs where a reproduction offers them (auc_compare) */
    int plot;             /* run the plotting scripts */
    int inprocess;        /* Table 2 through the device farm instead of exact mode */
    int progress;         /* progress line on stderr */
    unsigned threads;
} repro_opts_t;

/* Run it into r (zeroed). 0 (cells written, mismatches or not), -1 on an error (said on
 * stderr). *seconds gets the wall time. */
int repro_disparity(const repro_opts_t *o, repro_t *r, double *seconds);

#endif /* DPM_SIM_REPRO_DISPARITY_H */
