/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim plan for roc_hist with groups (roc_hist_groups): "how many devices, or which ε, for
 * every group's AUC within x and every pairwise AUC gap within y, each with probability c",
 * given the groups' shares, base rates and model AUCs, the examples per device and the bins.
 * Trust model: local DP (label-DP; the group travels by GRR: plan_check.h).
 *
 * Why it needs a planner most: a device reports its group by GRR, so every group's histogram is
 * an inversion of all groups' reports: a small group's AUC carries the noise of everyone. At
 * ε = 1 with four groups (shares 0.65, 0.2, 0.1, 0.05) 200,000 devices give an AUC sd of 0.006
 * for the 65 % group and 0.07 for the 5 % group.
 *
 * The variances are the estimator's own (estimate/roc_groups.h: delta method, conditional on
 * the devices' examples): the planner builds the campaign's mechanism with the SDK
 * (sim_roc_groups_sdk_build) at each Q16.16 ε it considers, and evaluates the estimator's
 * variance on the EXPECTED aggregate of K_REF devices: per reported group r, the counts
 * n_r = sum_g K pi_g w(r|g), the sums K pi_g w(r|g) mu_g and the second moments
 * K pi_g w(r|g) (E[h h^T] + s² I), w = P on the own group and Q on the others, mu_g the
 * expected histogram of one device of group g (binormal, `examples` examples:
 * sim_roc_plan_model_counts) and E[h h^T] = diag(mu) + (1 - 1/E) mu mu^T (its examples are iid:
 * a multinomial). The variance is exactly proportional to 1 / K, so one evaluation serves every
 * K. The sampling of the examples (error kind model) adds G_g / (K pi_g) per group
 * (dpm_roc_plan_factors), and the binning a bias b_g = A_binned,g - A_g (gaps: b_g - b_h).
 *
 * The delta method is a first-order one: where the noise on a group's estimated positives or
 * negatives is a large fraction of them (count cv > SIM_ROCG_LOW_SNR), the item is flagged.
 * Targets (normal, as the estimator's intervals): item i within x_i with probability c,
 * Pr[|N(b_i, sd_i²)| <= x_i] >= c (sim_roc_plan_largest_sd); the margin at the design coverage
 * of a check of R runs over all items (plan_check.h). Given ε: the fewest K that meets every
 * item. Given K: the smallest campaign ε (group ε the given share of it, default the SDK's
 * eps / 2). Both: the table of every item at (K, ε), which items meet the target and the K each
 * needs alone, and a check of that K. Check: exact mode (O(devices) per run for this mechanism),
 * error kind noise against the devices' binned AUCs of one population, model against the
 * model's AUCs with each run on a population of its own.
 *
 * Two aggregators (two_aggregators = 1, `--trust two_aggregators`, or `--trust both` for the two
 * answers side by side): the campaign is roc_hist_2agg (estimate/roc_central.h) at the same ε,
 * with max_device_examples = the examples per device. Its noise does not grow with K: each
 * group's sums carry two draws of scale 2E / ε per cell whatever the number of devices, so an
 * item's noise variance is v_noise2 / K² (v_noise2 = 2 s² F_g / w_g² per group, F_g the AUC's
 * noise factor of one device's expected histogram, dpm_roc_noise_factor; a gap adds its two
 * groups'), beside the sampling's v_sampling / K; K solves the quadratic. The check runs
 * roc_hist_2agg in exact mode.
 *
 * Discrete Gaussian (delta > 0, `--noise gaussian --delta D`): each aggregator's sigma2 at a
 * campaign ε is the simulator's (dap_gauss_for_eps for squared L2 sensitivity 2 m², as
 * mech_roc_2agg.c: the rho whose zCDP gives (ε, δ), its sigma2, and the ε a device is really
 * charged, at most ε), s² = sigma2 in the above; the check runs
 * the campaign with noise = gaussian and that delta, and refuses to report when the simulator
 * charges another ε than the plan states.
 *
 * The hybrid (`--local-eps E0` with two aggregators): every device also flips each example's
 * label with probability q (randomized response at E0, the SDK's exact thresholds) before
 * sharding, and the estimator debiases per bin (estimate/roc.h's label flip). Per group, the
 * aggregators' noise enters through the debias (dpm_roc_plan_flip_factors' central factor,
 * still / K²) and the flips add a variance that grows with the examples (its RR factor, / K):
 * the item's variance is v_noise / K + v_noise2 / K² + v_sampling / K, with v_noise the flips'.
 * The output states both guarantees: the central ε (one device, one aggregator honest) and the
 * implemented ε0 (one example's label, even if both collude). */
#ifndef DPM_SIM_PLAN_ROCG_H
#define DPM_SIM_PLAN_ROCG_H

#include <stdint.h>

#include "estimate/roc_groups.h"
#include "sim/plan/plan_check.h"
#include "sim/plan/plan_roc.h"

#define SIM_ROCG_MAX_ITEMS (DPM_ROC_GROUPS_MAX + DPM_ROC_GROUPS_MAX_GAPS)
/* Above this count cv (sd / value of a group's estimated positives or negatives) the delta
 * method understates an item's error: the planner flags it "low SNR", and only the simulation
 * check (which then adds devices) is to be trusted there. Measured on four groups (shares 0.65,
 * 0.2, 0.1, 0.05; auc 0.85, base rate 0.3, 40 examples, 10 bins), simulated rms error / planned
 * sd of the 5 % group: 1.10 at cv 0.19 (eps 2, K 30,000), 1.20 at 0.215 (eps 1.5, 60,000),
 * 1.33 at 0.24 (eps 1, 200,000); of the 10 % group 0.98 at 0.097 and 1.03 at 0.109. */
#define SIM_ROCG_LOW_SNR 0.1

typedef struct {
    uint32_t groups;
    double share[DPM_ROC_GROUPS_MAX], auc[DPM_ROC_GROUPS_MAX], base_rate[DPM_ROC_GROUPS_MAX];
    uint32_t examples, bins;
    double error;     /* every group's AUC: |AUC-hat_g - A_g| <= error */
    double gap_error; /* every gap (0: no gap target) */
    double confidence;
    sim_roc_error_t kind;
    double devices, eps; /* given K and / or ε (0: plan it) */
    double group_share;  /* group ε = group_share ε, Q16.16 rounded down (0: the SDK's eps / 2) */
    int two_aggregators; /* 1: plan roc_hist_2agg (central DP) instead of local DP */
    double delta;        /* two aggregators: > 0 each aggregator draws a discrete Gaussian (campaign
                          * noise = gaussian, delta = this), 0 discrete Laplace */
    dpm_eps_t local_eps; /* two aggregators: the hybrid's label RR ε0 on every device (campaign
                          * local_eps; 0: none) */
    uint32_t runs;       /* per check (0: sim_plan_default_runs) */
} sim_rocg_plan_t;

typedef struct {
    char name[SIM_PLAN_NAME_MAX];
    int gap;           /* 0: a group's AUC, 1: a gap */
    uint32_t g, h;     /* the group(s) */
    double x;          /* its target half-width */
    double bias;       /* model error: the binning bias; noise: 0 */
    double v_sampling; /* K Var from the examples' sampling (model error), else 0 */
    double v_noise;    /* K Var from the mechanism at the answer's ε (local DP) */
    double v_noise2;   /* K² Var from the aggregators' noise (two aggregators), else 0 */
    double sd;         /* predicted sd at the answer's (K, ε) */
    double sd_max, sd_design_max;
    double count_cv;       /* sd / value of its group's (groups') estimated positives or
                            * negatives, the larger, at the answer: the delta method's regime */
    double devices_alone;  /* the K this item needs at the answer's ε */
    int meets;             /* sd <= sd_max at the answer */
    uint32_t within, runs; /* evaluate: the check's coverage of this item */
    double lo, hi;         /* and its interval */
} sim_rocg_item_t;

typedef struct {
    uint32_t nitems;
    sim_rocg_item_t item[SIM_ROCG_MAX_ITEMS];
    double eps, devices; /* the answer (NaN: none, see none) */
    double eps_campaign, group_eps_campaign;
    /* two aggregators at eps_campaign: each aggregator's variance (a discrete Gaussian's sigma2;
     * Laplace: 2 t², t its scale) and the ε a device is charged (Laplace: eps_campaign;
     * Gaussian: the (ε, δ)-DP of the rho sigma2 gives, Q16.16 rounded up, <= eps_campaign) */
    double noise_var, eps_charged;
    /* the hybrid: the label RR's implemented ε0 (<= local_eps) and flip probability (NaN: none) */
    double local_eps_implemented, label_flip;
    char sim_label[96];     /* the check's campaign as the simulator built it (its label) */
    double sim_eps_charged; /* and the ε it charges a device ("" / NaN: no check ran) */
    uint32_t runs;
    double design;
    double design_devices, design_eps;
    const char *none;
    int evaluate; /* K and ε both given: the table only */
    int checked;
    const char *why;
    sim_plan_search_t search;
} sim_rocg_plan_answer_t;

/* K times the noise variance of every item (AUC of each group, then each gap (g < h) in the
 * estimator's order) at campaign ε (Q16.16) and group ε (0: eps / 2), into v[]; cv (may be
 * NULL): per group, sqrt(K) times the larger of sd / value of its estimated positives and
 * negatives. 0, or -1 with why (the SDK or the estimator refuses). */
int sim_rocg_plan_noise(const sim_rocg_plan_t *q, dpm_eps_t eps, dpm_eps_t group_eps, double *v,
                        double *cv, const char **why);
/* Analytic answer. 0 (a->none when nothing reaches it), or -1 (a bad question; a->none why). */
int sim_rocg_plan_solve(const sim_rocg_plan_t *q, sim_rocg_plan_answer_t *a);
/* One check at K devices and the answer's campaign: within[i] per item (a->item order).
 * Exposed for the tests: est_sq[i] += squared error over the runs (NULL: not wanted). */
int sim_rocg_plan_check_at(const sim_rocg_plan_t *q, const sim_rocg_plan_answer_t *a,
                           double devices, uint32_t runs, uint64_t seed, uint32_t *within,
                           double *est_sq, char *err, size_t errcap);
/* The find-K check of a solved answer (plan_check.h), each check's line to out (may be NULL);
 * with evaluate, one check at K. */
int sim_rocg_plan_check(const sim_rocg_plan_t *q, sim_rocg_plan_answer_t *a, uint64_t seed,
                        FILE *out, char *err, size_t errcap);
/* `dpm-sim plan --mechanism roc_hist_groups ...` */
int sim_cmd_plan_rocg(int argc, char **argv);

#endif /* DPM_SIM_PLAN_ROCG_H */
