/* SPDX-License-Identifier: Apache-2.0 */
/* What the simulator's mechanism modules (mech_*.c) share: the SDK's mechanism built from a
 * campaign as a device builds it, the refusal message, the groups a configuration measures,
 * and the AUC family's score model and binned truth. One place, so that every module says the
 * same thing the same way. */
#ifndef DPM_SIM_MECH_COMMON_H
#define DPM_SIM_MECH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/mech.h"
#include "dpm/expert/report.h"
#include "dpm/stats.h"
#include "estimate/roc_groups_prc.h"
#include "sim/devices/mech.h"
#include "sim/pop/roc_sim.h"

/* The campaign period every simulated configuration uses (one day). */
#define SIM_PERIOD_SECONDS 86400u

/* The participates hook of a mechanism whose every device of a measured group reports. */
int sim_mech_every_device(const sim_cfg_t *cfg, const sim_block_t *b);

/* The campaign c (its mechanism fields set by the caller) completed with the configuration's
 * id, ε, budget and period, then cfg->mech = dpm_mech_init(c). 0, or -1 with the SDK's reason
 * (sim_mech_refused). */
int sim_mech_sdk_init(sim_cfg_t *cfg, dpm_campaign_t *c, char *err, size_t errcap);

/* "campaign 'name' eps E: the SDK refuses it: why" into err; returns -1. */
int sim_mech_refused(const sim_cfg_t *cfg, const char *why, char *err, size_t errcap);

/* "campaign 'name': estimator parameters refused" into err; returns -1. */
int sim_mech_params_refused(const sim_cfg_t *cfg, char *err, size_t errcap);

/* A check hook's refusal of metrics, a split, bins or edges (the keys a grid-free mechanism
 * does not take): 0, or -1 with the line at fault and "takes no metrics, split, bins or
 * edges" followed by note (may be ""). */
int sim_mech_takes_no_grid(const sim_campaign_spec_t *c, const char *note, int *line, char *err,
                           size_t errcap);

/* A check hook's test that campaign group g has a score model (`scores = binormal(...)`): 0,
 * or -1 with the groups line. sim_mech_all_scored: every group of the campaign. */
int sim_mech_group_scored(const sim_scenario_t *sc, const sim_campaign_spec_t *c, uint32_t g,
                          int *line, char *err, size_t errcap);
int sim_mech_all_scored(const sim_scenario_t *sc, const sim_campaign_spec_t *c, int *line,
                        char *err, size_t errcap);

/* A prepare hook's n items without groups: metric, kind[i], name[i] and truth[i] (sim_cfg_items).
 * 0, or -1 with "out of memory". */
int sim_mech_items(sim_cfg_t *cfg, const char *metric, uint32_t n, const char *const *kind,
                   const char *const *name, const double *truth, char *err, size_t errcap);

/* include[g] = 1 for the population groups the configuration measures, 0 for the others. */
void sim_mech_measured(const sim_cfg_t *cfg, int include[SIM_MAX_GROUPS]);

/* roc_hist campaigns with groups (both trust models): after the AUC items, each group's AP, then
 * each group's ECE, then Fairlearn's difference (max-min) and ratio (min/max) of AP and of ECE
 * (estimate/roc_groups_prc.h). How many items that is; the items from index first (truths: the
 * groups' binned AP and ECE); and one run's estimates into out[first ...]. */
uint32_t sim_mech_prc_nitems(uint32_t groups);
void sim_mech_prc_items(sim_cfg_t *cfg, uint32_t first, uint32_t groups, const double *ap,
                        const double *ece);
void sim_mech_prc_runs(const dpm_roc_groups_prc_t *f, sim_item_run_t *out);

/* *model = a heap score model of pop for edges[nedges] (sim_roc_model_destroy frees it). 0, or
 * -1 with "campaign 'name': out of memory for the <what> model" (*model NULL). */
int sim_mech_roc_model(const sim_cfg_t *cfg, const sim_pop_t *pop, const uint32_t *edges,
                       uint32_t nedges, const char *what, sim_roc_model_t **model, char *err,
                       size_t errcap);

/* The true binned ROC of the counts pos/neg[bins] (dpm_roc_exact: tpr/fpr[bins + 1], *auc). 0,
 * or -1 with "the population has no positive or no negative example (raise devices)". */
int sim_mech_binned_auc(const sim_cfg_t *cfg, const uint64_t *pos, const uint64_t *neg,
                        uint32_t bins, double *tpr, double *fpr, double *auc, char *err,
                        size_t errcap);

/* The release hook of a module whose state begins with its score model (sim_roc_model_t *,
 * checked by SIM_MECH_MODEL_FIRST): the model freed, the pointer NULL. */
void sim_mech_release_model(sim_cfg_t *cfg);
#define SIM_MECH_MODEL_FIRST(type, tag)                                                            \
    SIM_STATIC_ASSERT(offsetof(type, model) == 0, tag##_model_first)

/* A roc_hist device's report: its score histogram from model (sim_roc_device_hist, the
 * campaign's roc_hist parameters), its receipt for run `run`, unmetered (a simulated device has
 * no ledger), then dpm_mech_report_roc_hist, or with group >= 0 dpm_mech_report_roc_hist_group
 * of that group. DPM_ERR_PARAM without a model. */
dpm_status_t sim_mech_hist_report(const sim_cfg_t *cfg, const sim_roc_model_t *model,
                                  const sim_block_t *b, uint64_t device, uint32_t run,
                                  int64_t group, dpm_rand_t *r, dpm_report_t *rep);

/* Exact mode: sum[i] = count[i] plus the noise of n reports (sim_rng_dlap_sum of scale t),
 * drawn in order i = 0 .. len - 1. */
void sim_mech_noised_sums(sim_rng_t *rng, uint64_t n, double t, const uint64_t *count, uint32_t len,
                          int64_t *sum);

#endif /* DPM_SIM_MECH_COMMON_H */
