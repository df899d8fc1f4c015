/* SPDX-License-Identifier: Apache-2.0 */
/* The reproduction of Sun et al.'s FedAUC tables (sdk/docs/fedauc.md §The paper's tables,
 * sdk/docs/fedauc.md §Acceptance), run by `dpm-sim repro fedauc`. References:
 * host-sim/scenarios/paper-fedauc.ref (Tables 5, 1, 7 and 2 as printed). The Criteo data and the
 * paper's model are not available offline, so the experiment uses the recipe of
 * sdk/docs/fedauc.md §Delta method: synthetic binormal scores with the small Criteo evaluation
 * set's sizes (M = 458,407, P = 117,317) and the paper's AUCs; the standard deviations depend only
 * on M, P, the AUC, the partition and eps, and those are compared with the paper (within +-20%).
 * Each run's aggregate is drawn with the law of the devices' reports (exact mode: dpm-sim's fedauc
 * modules check it against the SDK, tests/e2e/test_sim_fedauc.py) and estimated by
 * host-sim/estimate/fedauc. Every cell also runs with the paper's mechanism (continuous Laplace, RR
 * with the paper's rho) into <table>_paper_mech, never counted, and each cell outside +-20% gets
 * its analytic account (repro_fedauc_explain.h). Writes OUT/fedauc.json and OUT/fedauc.md. */
#ifndef DPM_SIM_REPRO_FEDAUC_H
#define DPM_SIM_REPRO_FEDAUC_H

#include "dpm/expert/fedauc.h"
#include "sim/devices/mech_fedauc.h"
#include "sim/repro/repro_cells.h"
#include "sim/repro/repro_disparity.h"
#include "sim/pop/sim_rng.h"

int repro_fedauc(const repro_opts_t *o, repro_t *r, double *seconds);

/* A client's statistics (doubled ranks R), as a simulated device's; its fedauc_lap body:
 * sim_fa_lap_body (also used by repro_auc_compare). */
typedef sim_fa_stats_t repro_fa_client_t;

#endif /* DPM_SIM_REPRO_FEDAUC_H */
