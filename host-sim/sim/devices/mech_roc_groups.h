/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist_groups in the simulator (mech_roc_groups.c: a roc_hist campaign whose reports carry
 * the device's group by GRR). What the planner reaches into. */
#ifndef DPM_SIM_MECH_ROC_GROUPS_H
#define DPM_SIM_MECH_ROC_GROUPS_H

#include <stdint.h>

#include "dpm/dpm.h"
#include "estimate/roc_groups.h"

/* The SDK's mechanism for a roc_hist campaign with `groups` groups (score edges, Q16.16 eps and
 * group_eps, 0: the SDK's default eps / 2) exactly as a device builds it (dpm_mech_init), and
 * the estimator's parameters from its integers. 0, or -1 with the SDK's reason in *why. */
int sim_roc_groups_sdk_build(uint32_t groups, const uint32_t *edges, uint32_t nedges, dpm_eps_t eps,
                             dpm_eps_t group_eps, uint32_t id, dpm_mech_t *m,
                             dpm_roc_groups_params_t *p, const char **why);

/* A configuration's items: group g's AUC at index g (of the campaign's groups), then the gaps
 * AUC_g - AUC_h, g < h, in the order (0,1), (0,2), ..., (1,2), ...; truth: the devices' binned
 * AUCs; their unbinned twins; then each group's AP and ECE and their differences and ratios
 * (sim_mech_prc_items, mech_common.h). The two-aggregator mode's are the same. */

#endif /* DPM_SIM_MECH_ROC_GROUPS_H */
