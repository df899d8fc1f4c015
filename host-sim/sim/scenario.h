/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim scenario files: a population of devices and the campaigns run over it.
 *
 * Format: UTF-8/ASCII text, one "key = value" per line, grouped in sections "[kind]" or
 * "[kind NAME]"; '#' starts a comment; blank lines are ignored; keys and section kinds are
 * lower case; NAMEs are [A-Za-z0-9_.-]{1,31}. Lists are comma-separated. Numbers are decimals
 * (1e6 is accepted where an integer is expected). Unknown keys, repeated keys and repeated
 * names are errors. Every error names the file and line and dpm-sim exits 2.
 *
 *   [scenario]                    optional, at most once
 *   name = demo                   default: the file name without .scn
 *   description = free text
 *   devices = 1e6                 K, or a list (a sweep): 1e4, 1e5, 1e6   (default 100000)
 *   runs = 20                     default 10
 *   seed = 1                      base seed of the devices' noise (default 1)
 *   confidence = 0.95             CI level (default 0.95)
 *   sizes = known                 known (default) | estimated: group sizes for the estimator
 *   nu2 = true                    true (default) | worst: second moment in the CI variances
 *   mode = inprocess              default mode: inprocess | exact | network
 *
 *   [population]                  optional defaults for every group
 *   seed = 1                      the population's own seed (default 1): the population is
 *                                 realized once and is the same for every run and mode
 *   examples = 40                 binormal: labelled examples per device (default 40)
 *   partition = iid               iid | noniid(concentration=C, auc_sd=S)
 *   beta_levels = 100             beta metrics are quantized to k / L, L = beta_levels
 *
 *   [group NAME]                  one per demographic group, in order (index = order)
 *   share = 0.4                   fraction of the devices: a decimal or a ratio "25/87";
 *                                 the shares must sum to 1 (within 1e-6)
 *   tpr = constant(0.9)           a metric's per-device distribution, for tpr, fpr, accuracy,
 *   fpr = beta(2, 18)             precision: constant(X) (X decimal or a/b) or beta(a, b)
 *   scores = binormal(auc=0.85, base_rate=0.3[, examples=40][, threshold=T])
 *                                 instead of metric lines: the model's scores are N(mu, 1)
 *                                 for positives and N(0, 1) for negatives, mu = sqrt(2)
 *                                 Phi^-1(auc), decision threshold T (default mu / 2); each
 *                                 device holds `examples` examples, positives with
 *                                 probability base_rate; its confusion counts follow, and
 *                                 from them every metric (dpm_metric_ratio). A device whose
 *                                 metric is undefined (TPR with no positive) sends no report.
 *   partition = ...               as in [population], for this group
 *
 *   [campaign NAME]               one per campaign (every device reports once per campaign)
 *   id = 1                        campaign id on the wire (default: index + 1)
 *   mechanism = tuple_mr          tuple_mr | tuple_ml | roc_hist
 *   eps = 1                       ε, or a list (a sweep): 0.1, 0.5, 1, 2
 *   metrics = tpr, fpr            1..4 distinct metrics (tuple mechanisms only)
 *   bins = 10                     roc_hist: B uniform score bins on [0, 1] (edges k / B,
 *                                 k = 1 .. B-1; default 10), 2 .. DPM_MAX_BINS
 *   edges = 0.1, 0.2, 0.5         roc_hist: explicit score edges in (0, 1], strictly increasing
 *                                 (instead of bins; B = edges + 1). Every measured group needs
 *                                 scores = binormal(...): a device's examples are scored
 *                                 s = Phi(x - T) in (0, 1) (x its binormal score, T its group's
 *                                 decision threshold, so the threshold sits at 0.5) and counted
 *                                 per bin and label (host-sim/sim/roc_sim.h)
 *   groups = a, b                 the groups measured (default: all; at least 2, roc_hist 1);
 *                                 others do not report
 *   split = sdk                   sdk (default, what ships) | paper: the paper's budget
 *                                 split, REPRODUCTION ONLY (does NOT deliver the stated ε;
 *                                 one metric only)
 *   paper.mean_abs_gap_err = 0.1241, 0.0082   reference values, one per ε ('-' for none):
 *                                 the paper's mean over runs of ||D-hat| - |D|| of the first
 *                                 pair of groups, metric scale
 *   paper.tolerance = 10          a reference matches when ours is within this factor
 *
 *   [plan NAME]                   planner questions, answered analytically (dpm-sim repro)
 *   mechanism = tuple_mr          tuple_mr | tuple_ml
 *   split = paper                 sdk | paper
 *   devices = 1e5, 1e6            K values (rows)
 *   error = 0.1, 0.01             alpha values (columns), on `scale`
 *   scale = value                 value ([-1, 1], the paper's tables) | metric ([0, 1])
 *   confidence = 0.99
 *   bound = chebyshev             chebyshev | normal
 *   paper.eps = 1.86, -, ...      reference minimum ε, row-major ('-': none exists) */
#ifndef DPM_SIM_SCENARIO_H
#define DPM_SIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/report.h"

#define SIM_NAME_MAX 32
#define SIM_MAX_GROUPS DPM_MAX_GROUPS
#define SIM_MAX_CAMPAIGNS 16
#define SIM_MAX_LIST 16
#define SIM_MAX_PLANS 8
#define SIM_ROC_DEFAULT_BINS 10u
#define SIM_MAX_PLAN_CELLS (SIM_MAX_LIST * SIM_MAX_LIST)
#define SIM_NMETRICS DPM_METRIC_COUNT /* metric id m is index m - 1 */

typedef enum { SIM_MODE_INPROCESS = 1, SIM_MODE_EXACT = 2, SIM_MODE_NETWORK = 3 } sim_mode_t;

typedef enum { SIM_DIST_NONE = 0, SIM_DIST_CONSTANT, SIM_DIST_BETA } sim_dist_kind_t;

/* One metric's per-device distribution. */
typedef struct {
    sim_dist_kind_t kind;
    dpm_ratio_t value; /* constant: exact rational */
    double a, b;       /* beta */
    int line;
} sim_dist_t;

typedef struct {
    int noniid;
    double concentration; /* label skew: device base rate ~ Beta(pi C, (1 - pi) C) */
    double auc_sd;        /* feature shift: device mu = mu + auc_sd * N(0, 1) */
} sim_partition_t;

typedef struct {
    int set;
    double auc, base_rate, threshold;
    int has_threshold;
    uint32_t examples;
    int line;
} sim_binormal_t;

typedef struct {
    char name[SIM_NAME_MAX];
    double share;
    int share_line;
    sim_dist_t metric[SIM_NMETRICS];
    sim_binormal_t scores;
    sim_partition_t partition;
    int has_partition;
    int line;
} sim_group_spec_t;

typedef struct {
    char name[SIM_NAME_MAX];
    uint32_t id;
    dpm_mech_id_t mechanism;
    int split_paper;
    uint32_t neps;
    dpm_eps_t eps[SIM_MAX_LIST];
    char eps_text[SIM_MAX_LIST][24];
    uint32_t nmetrics;
    dpm_metric_t metrics[DPM_CAMPAIGN_MAX_METRICS];
    uint32_t ngroups;
    uint32_t groups[SIM_MAX_GROUPS]; /* population group indices, in the order given */
    uint32_t nedges;                 /* roc_hist: bins - 1 score edges, Q1.31 */
    uint32_t edges[DPM_MAX_BINS - 1];
    int bins_line;
    uint32_t npaper;
    double paper_mean_abs_gap_err[SIM_MAX_LIST]; /* NaN: '-' */
    double paper_tolerance;
    int line, metrics_line, groups_line;
} sim_campaign_spec_t;

typedef struct {
    char name[SIM_NAME_MAX];
    dpm_mech_id_t mechanism;
    int split_paper;
    uint32_t ndevices, nerror, npaper;
    double devices[SIM_MAX_LIST];
    double error[SIM_MAX_LIST];
    int scale_metric;
    double confidence;
    int bound_normal;
    double paper_eps[SIM_MAX_PLAN_CELLS]; /* NaN: '-' */
    int line;
} sim_plan_spec_t;

typedef struct {
    char name[64];
    char description[160];
    uint32_t ndevices;
    uint64_t devices[SIM_MAX_LIST];
    uint32_t runs;
    uint64_t seed;
    uint64_t population_seed;
    double confidence;
    int sizes_estimated;
    int nu2_worst;
    sim_mode_t mode;
    uint32_t examples;
    uint32_t beta_levels;
    sim_partition_t partition;
    uint32_t ngroups;
    sim_group_spec_t group[SIM_MAX_GROUPS];
    uint32_t ncampaigns;
    sim_campaign_spec_t campaign[SIM_MAX_CAMPAIGNS];
    uint32_t nplans;
    sim_plan_spec_t plan[SIM_MAX_PLANS];
} sim_scenario_t;

/* Parse text[0, len). source names it in messages ("demo.scn"). Returns 0, or -1 with
 * "SOURCE:LINE: message" in err. *out is filled either way (partially on error). */
int sim_scenario_parse(const char *text, size_t len, const char *source, sim_scenario_t *out,
                       char *err, size_t errcap);

/* Read and parse a file (at most 1 MiB). Returns 0, or -1 with the message in err. */
int sim_scenario_load(const char *path, sim_scenario_t *out, char *err, size_t errcap);

/* "tpr", "fpr", "accuracy", "precision" (NULL for an invalid id), and back (0 if unknown). */
const char *sim_metric_name(dpm_metric_t m);
dpm_metric_t sim_metric_from_name(const char *s);
/* "tuple_mr" / "tuple_ml" / "roc_hist" / "?". */
const char *sim_mech_name(dpm_mech_id_t m);

#endif /* DPM_SIM_SCENARIO_H */
