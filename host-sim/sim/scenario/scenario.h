/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim scenarios in memory: a population of devices and the campaigns run over it. The file
 * format, key by key with a commented example per mechanism, is host-sim/scenarios/README.md;
 * the parser is scenario_parse.h. Mechanism-specific keys (metrics, bins/edges, split) are held
 * here and checked by the campaign's mechanism (its module's `check`, sim/devices/mech.h). */
#ifndef DPM_SIM_SCENARIO_H
#define DPM_SIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/report.h"
#include "mech/base/campaign_keys.h"

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

/* pairs = bivariate_normal(rho=R): one pair of scores per device (Kendall's tau, kendall_sim.h). */
typedef struct {
    int set;
    double rho; /* in (-1, 1) */
    int line;
} sim_pairs_t;

/* population = csv(PATH[, threshold=T]): the population is a file's devices
 * (sim/scenario/pop_csv.h); its groups are the file's group labels, in the order of their first
 * row. */
typedef struct {
    int set;
    char path[512];   /* as opened: relative to the scenario file's directory */
    double threshold; /* predictions without a prediction column: score >= threshold */
    uint64_t devices; /* the file's devices (the default fleet: taken as they are) */
    int line;
} sim_data_spec_t;

typedef struct {
    char name[SIM_NAME_MAX];
    int data; /* a group of the data file: its examples are the file's (scores.examples: the most
               * rows of one of its devices) */
    double share;
    int share_line;
    sim_dist_t metric[SIM_NMETRICS];
    sim_binormal_t scores;
    sim_pairs_t pairs;
    sim_partition_t partition;
    int has_partition;
    int line;
} sim_group_spec_t;

struct sim_mech; /* sim/devices/mech.h */

typedef struct {
    char name[SIM_NAME_MAX];
    uint32_t id;
    const struct sim_mech *mech; /* the mechanism's module (sim/devices/mechs.h; NULL until
                                  * sim_scenario_parse has checked the campaign) */
    const host_campaign_mech_t *campaign_mech; /* its name and keys (campaign_keys.h) */
    dpm_mech_id_t mechanism;                   /* its wire id */
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
    int bins_line, split_line;
    int line, metrics_line, groups_line, eps_line;
    /* The mechanisms' own keys (0: not given; the module fills its defaults). keys_line[k] is
     * the line of key HOST_CK_... k (mech/base/campaign_keys.h; 0: not given): a campaign takes
     * only the keys that table gives its mechanism, the parser refuses the others. */
    uint32_t thresholds;      /* dpauc: N, thresholds i / (N - 1) */
    int calibration_tight;    /* dpauc: 0 published (eps / 4N), 1 tight (eps / 2N) */
    uint32_t ustat_k;         /* ustat_bins: bins per score */
    uint32_t ustat_kernel;    /* ustat_bins: dpm_ustat_kernel_t (auc, auc_private_label, kendall) */
    uint32_t tree_depth;      /* ustat_tree: depth (2^depth score values) */
    uint32_t tree_grr_levels; /* ustat_tree: levels 1 .. this by GRR, deeper by Hadamard RR */
    int tree_grr_set;
    dpm_eps_t group_eps;          /* roc_groups: the group's GRR ε (0: eps / 2) */
    uint32_t fedauc_variant;      /* fedauc_lap: dpm_fedauc_variant_t (0: not given) */
    uint32_t fedauc_p_share;      /* fedauc_lap: share of ε on localP, Q0.16 (0: not given) */
    uint32_t fedauc_score_bits;   /* fedauc: score quantization bits (0: not given) */
    uint32_t max_device_examples; /* roc_hist_2agg: one device's most examples (0: not given) */
    uint32_t noise_gauss;         /* roc_hist_2agg: 1 for noise = gaussian */
    double delta;        /* roc_hist_2agg, noise = gaussian: the (ε, δ)'s δ (0: not given) */
    dpm_eps_t local_eps; /* roc_hist_2agg: the devices' label RR ε0 (0: none, the hybrid off) */
    int keys_line[HOST_CK_SCENARIO];
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
    sim_data_spec_t data;
    uint32_t ngroups;
    sim_group_spec_t group[SIM_MAX_GROUPS];
    uint32_t ncampaigns;
    sim_campaign_spec_t campaign[SIM_MAX_CAMPAIGNS];
    uint32_t nplans;
    sim_plan_spec_t plan[SIM_MAX_PLANS];
} sim_scenario_t;

/* 1 if s is a NAME of a section or a group: [A-Za-z0-9_.-], 1 to SIM_NAME_MAX - 1 of them (a
 * csv population's group labels are held to it too). */
int sim_name_valid(const char *s);

/* A scenario built in code (dpm-sim plan's checks, the repro tables) rather than parsed: all
 * zero but its name, one device count (sc->devices[0], the caller's), runs, seed, confidence and
 * mode, with the population seed a file's default (1). */
void sim_scenario_start(sim_scenario_t *sc, const char *name, uint32_t runs, uint64_t seed,
                        double confidence, sim_mode_t mode);

/* "tpr", "fpr", "accuracy", "precision" (NULL for an invalid id), and back (0 if unknown). */
const char *sim_metric_name(dpm_metric_t m);
dpm_metric_t sim_metric_from_name(const char *s);

#endif /* DPM_SIM_SCENARIO_H */
