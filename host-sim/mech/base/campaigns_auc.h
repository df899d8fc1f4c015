/* SPDX-License-Identifier: Apache-2.0 */
/* Campaign-file keys of the AUC-family mechanisms beyond roc_hist (issue 17): dpauc, ustat_bins
 * and ustat_tree. Same spelling as dpm-sim's scenarios and the golden campaigns of
 * tests/vectors/wire/:
 *
 *   mechanism = dpauc
 *   thresholds = 25           N: the linspace grid i / (N - 1), 2 <= N <= DPM_DPAUC_MAX_THRESHOLDS
 *   thresholds = 0.1, 0.5     or explicit thresholds in [0, 1], strictly increasing (Q1.31,
 *                             nearest, as roc_hist's edges); required
 *   calibration = published   or tight (dpm/dpauc.h; default published)
 *   max_examples = 100        most examples per device (report bounds, as roc_hist)
 *
 *   mechanism = ustat_bins
 *   k = 16                    bins per score, required
 *   kernel = auc              or auc_private_label, kendall (default auc)
 *
 *   mechanism = ustat_tree
 *   depth = 8                 1 .. COLL_TREE_MAX_DEPTH, required
 *   grr_levels = 4            levels answered by GRR (default 0: every level Hadamard)
 *
 * None of them takes groups or metrics; the keys of one are refused for the others. */
#ifndef DPM_COLLECTOR_CAMPAIGNS_AUC_H
#define DPM_COLLECTOR_CAMPAIGNS_AUC_H

#include <stddef.h>

#include "dpm/mech.h"

/* The collector keeps ustat_tree sums in a fixed vector (agg_auc.h): depth up to this. */
#define COLL_TREE_MAX_DEPTH 10

/* Is m one of the mechanisms of this file? */
int coll_auc_mech(dpm_mech_id_t m);

/* Key `key` = v of this file into c. Returns 1 if key is not one of this file's keys, 0 if
 * parsed (bit k of *seen set, key index k), -1 for a bad value (*expect: what it should be) or
 * a repeated key (*expect NULL). */
int coll_auc_key(dpm_campaign_t *c, unsigned *seen, const char *key, const char *v,
                 const char **expect);

/* The block is complete: mechanism-specific required keys present, no key of another
 * mechanism, tree depth within the collector's. 0, or -1 with the problem in why. */
int coll_auc_finish(const dpm_campaign_t *c, unsigned seen, int have_groups, int have_metrics,
                    const char **why);

#endif /* DPM_COLLECTOR_CAMPAIGNS_AUC_H */
