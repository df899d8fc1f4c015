/* SPDX-License-Identifier: Apache-2.0 */
/* Campaign-file keys of the AUC-family mechanisms beyond roc_hist (issue 17): dpauc, ustat_bins
 * and ustat_tree. Same spelling as dpm-sim's scenarios and the golden campaigns of
 * tests/vectors/wire/:
 *
 *   mechanism = dpauc
 *   thresholds = 25           N: the linspace grid i / (N - 1), 2 <= N <= DPM_DPAUC_MAX_THRESHOLDS
 *   thresholds = 0.1, 0.5     or explicit thresholds in [0, 1], strictly increasing (Q1.31,
 *                             nearest, as roc_hist's edges); required
 *   calibration = published   or tight (dpm/expert/dpauc.h; default published)
 *   max_examples = 100        most examples per device (report bounds, as roc_hist)
 *
 *   mechanism = ustat_bins
 *   k = 16                    bins per score, required
 *   kernel = auc              or auc_private_label, kendall (default auc)
 *
 *   mechanism = ustat_tree
 *   depth = 8                 1 .. COLL_TREE_MAX_DEPTH, required (the values each key takes:
 *                             campaign_keys.c)
 *   grr_levels = 4            levels answered by GRR (default 0: every level Hadamard)
 *
 * None of them takes groups or metrics; the keys of one are refused for the others. */
#ifndef DPM_COLLECTOR_CAMPAIGNS_AUC_H
#define DPM_COLLECTOR_CAMPAIGNS_AUC_H

#include <stddef.h>

#include "dpm/expert/mech.h"
#include "mech/base/campaign_keys.h"

/* Is m one of the mechanisms of this file? */
int coll_auc_mech(dpm_mech_id_t m);

/* The campaigns file's thresholds = v: an explicit list ("0.1, 0.5": in [0, 1], strictly
 * increasing, Q1.31 nearest, as roc_hist's edges) rather than N (campaign_keys.h)? */
int coll_thresholds_is_list(const char *v);

/* The explicit list v into c->thresholds. 0, or -1 if v is not such a list. */
int coll_thresholds_list(const char *v, dpm_campaign_t *c);

/* The block is complete: mechanism-specific required keys present, no key of another
 * mechanism (cm: the block's mechanism in campaign_keys.h, NULL if none; given: the mechanisms' own
 * keys given, NULL-terminated). 0, or -1 with the problem in why. */
int coll_auc_finish(const dpm_campaign_t *c, const host_campaign_mech_t *cm,
                    const char *const *given, int have_groups, int have_metrics, char *why,
                    size_t cap);

#endif /* DPM_COLLECTOR_CAMPAIGNS_AUC_H */
