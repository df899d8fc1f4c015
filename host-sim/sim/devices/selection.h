/* SPDX-License-Identifier: Apache-2.0 */
/* What the selection-aware pairwise comparisons (estimate/pairwise.h) did against the truth,
 * accumulated over a configuration's runs: one family per tuple metric, one for roc_hist_groups'
 * AUCs. dpm-sim writes it to results.json ("selection") and its console line; the reproduction
 * (`make repro`, repro_selection.h) and tests/stat/test_disparity_selection.c read it.
 *
 * Per run with every pair defined (the truth: each pair's true gap on the estimates' scale):
 *   simultaneous     every true gap inside its simultaneous interval (the claim: >= confidence)
 *   pointwise_all    every true gap inside its pointwise interval: reading the table of
 *                    pointwise intervals together (the old reading; falls short of confidence)
 *   largest          the true largest |gap| inside the largest's interval (claim: >= confidence)
 *   chosen_pointwise the pair with the largest |estimate|: its pointwise interval holds its own
 *                    true gap (the old max_disparity; falls short)
 *   right_pair       the pair with the largest |estimate| has the largest true |gap| (ties count)
 *   in_candidates    a pair with the largest true |gap| is among the candidates
 *   false_call       a pair called distinguishable whose true gap is 0 or of the other sign
 *   overstatement    |estimate| of the chosen pair - the true largest |gap| (mean, reported scale)
 * plus the mean stability, the mean width of the largest's interval and the mean number of
 * pairs called distinguishable; and, to check the stability against what reruns do, how often
 * two independent runs name the same largest pair: sum over pairs of (share of runs naming it)^2.
 */
#ifndef DPM_SIM_SELECTION_H
#define DPM_SIM_SELECTION_H

#include <stdint.h>

#include "common/json_write.h"
#include "estimate/pairwise.h"
#include "sim/devices/results.h"

typedef struct {
    double scale; /* reported numbers = the estimates' scale x this (tuple: 1/2, the metric) */
    uint32_t runs, undefined;
    uint32_t simultaneous, pointwise_all, largest, chosen_pointwise, right_pair, in_candidates,
        false_call;
    double overstatement, stability, width, distinguishable; /* sums */
    double truth_largest;                                    /* reported scale */
    uint32_t named[DPM_PAIRWISE_MAX_PAIRS]; /* runs whose largest estimate is pair k */
} sim_selection_t;

void sim_selection_init(sim_selection_t *s, double scale);

/* One run: pw at the scenario's confidence, truth[k] the true gap of pw's pair k. */
void sim_selection_add(sim_selection_t *s, const dpm_pairwise_t *pw, const double *truth);

/* Shares of the runs (NaN when none): what the fields above count. */
typedef struct {
    uint32_t runs, undefined;
    double simultaneous, pointwise_all, largest, chosen_pointwise, right_pair, in_candidates,
        false_call;
    double overstatement, stability, width, distinguishable, truth_largest;
    double rerun_same_pair; /* two runs name the same largest pair (what stability estimates) */
} sim_selection_summary_t;

void sim_selection_summarize(const sim_selection_t *s, sim_selection_summary_t *out);

/* `{"runs": ..., "simultaneous_coverage": ..., ...}` (results.json). */
void sim_selection_json(const sim_selection_t *s, jw_t *w);

/* The console's few words: "simultaneous 95%, largest: cover 99%, right pair 40%". */
void sim_selection_line(const sim_selection_t *s, char *buf, size_t cap);

/* A mechanism's ext (sim/devices/mech.h) holding one record per compared family (tuple: per metric;
 * roc_hist_groups: its AUCs). */
#define SIM_SELECTION_FAMILIES DPM_CAMPAIGN_MAX_METRICS /* a tuple campaign's metrics */
typedef struct {
    uint32_t n;
    char name[SIM_SELECTION_FAMILIES][16];
    sim_selection_t family[SIM_SELECTION_FAMILIES];
} sim_selection_ext_t;

/* For a mechanism's ext_new: n (1 .. SIM_SELECTION_FAMILIES) families named names[i], reported
 * at scale. NULL if out of memory. ext_free: free; ext_json: the function below. */
sim_selection_ext_t *sim_selection_ext_new(uint32_t n, const char *const *names, double scale);
/* results.json ",\n   "selection": [{"metric": name, "all": {...}}, ...]". */
void sim_selection_ext_json(const sim_cfg_t *cfg, const void *ext, jw_t *w);

/* Family i of a configuration's result whose mechanism keeps these records, or NULL. */
const sim_selection_t *sim_selection_of(const sim_result_t *res, uint32_t family);

#endif /* DPM_SIM_SELECTION_H */
