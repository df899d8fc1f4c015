/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim plan for tuple_mr / tuple_ml: "how many devices, or which ε, for |disparity error| <= x
 * at confidence c", for a campaign whose reports carry m metrics (1 to 4, e.g. TPR and FPR for
 * equalized odds), answered from the analytic variances (estimate/disparity.h), then checked by
 * simulation in exact mode with a find-K search (plan_check.h: the answer is the K shown to
 * reach c, never a coin flip at the planned K). Trust model: local DP (plan_check.h).
 *
 * m metrics per report: the SDK splits ε over them (sdk/src/mech/tuple.c): tuple_mr gives each
 * metric's RR ε/m and the group GRR e^ε1 = ((1 + e^(ε/m)) / 2)^m; tuple_ml each metric's discrete
 * Laplace ε/m and the group GRR ε/2. Every metric's gap then has the variance of a one-metric
 * campaign with those parameters, so the planner builds the campaign's mechanism with the SDK
 * itself (sim_tuple_sdk_build: the thresholds a device uses) at each Q16.16 ε it considers, and
 * the answer's ε is a campaign ε. Planned as m = 1 (as before), a TPR + FPR tuple_mr campaign
 * at ε = 1 gets a gap sd 1.9x the promised one (3.7x the devices), a three-metric tuple_ml at
 * ε = 6 2.9x (tests/unit/test_sim_planner.c).
 *
 * The error planned for: the estimated disparity D-hat = m-hat_g - m-hat_h between two groups,
 * per metric, against the population's true disparity D, i.e. the mechanism's noise (the
 * population is what it is: every device reports once). The variance uses the worst-case second
 * moment nu2 unless the question gives the groups' own (plan.nu2_g / nu2_h), so the plan holds for
 * any metric values. Per metric (default): each metric's gap is within x with probability c;
 * joint: all m gaps at once (each planned at 1 - (1 - c) / m, Bonferroni).
 * Worst-case population (the check's): tuple_mr every metric 1/2 (v = 0, nu2 = 0), tuple_ml every
 * metric 1 (v = 1, nu2 = 1). The two compared groups have shares share_g, share_h; other groups
 * (d > 2) share the rest equally.
 *
 * The paper's split (split PAPER, one metric, REPRODUCTION ONLY) is planned by the estimator's
 * own mirror (dpm_disp_plan_*), which also answers beyond the ε a campaign accepts (the paper's
 * Table 1 reaches ε = 178.9); so is the SDK split with one metric when no campaign ε (at most
 * DPM_EPS_MAX) reaches the target: the answer is then printed but cannot be checked. */
#ifndef DPM_SIM_PLAN_TUPLE_H
#define DPM_SIM_PLAN_TUPLE_H

#include <stdint.h>

#include "dpm/expert/tuple.h"
#include "estimate/disparity.h"
#include "sim/plan/plan_check.h"

typedef struct {
    dpm_disp_plan_t plan; /* mechanism, split, d, shares, nu2, alpha (value scale), confidence,
                           * bound */
    uint32_t nmetrics;    /* metrics per report, 1 .. DPM_TUPLE_MAX_METRICS (0: 1) */
    dpm_metric_t metrics[DPM_TUPLE_MAX_METRICS]; /* which (the check's population); 0: tpr,
                                                  * fpr, accuracy, precision in that order */
    int joint;                                   /* 1: every metric's gap within x at once */
    double error;                                /* x as given */
    int scale_metric;                            /* 1: x on the metric scale [0, 1] (alpha = 2x) */
    double devices;                              /* given K (0: plan it) */
    double eps;                                  /* given ε (0: plan it) */
    uint32_t runs;                               /* runs per check (0: sim_plan_default_runs) */
} sim_plan_question_t;

typedef struct {
    double eps, devices; /* the answer at the bound (NaN: none, see none) */
    double eps_campaign; /* its campaign ε: given ε rounded down, planned ε the smallest Q16.16
                          * that meets it */
    double mse, target_mse; /* per-metric gap MSE at the answer and what the bound allows (value
                             * scale) */
    double item_confidence; /* each gap's: c, or 1 - (1 - c) / m (joint) */
    uint32_t runs;          /* per check */
    double design;          /* the check's design coverage c_d (plan_check.h) */
    double design_devices;  /* K with the margin (given K: that K) */
    double design_eps;      /* campaign ε with the margin (given ε: eps_campaign) */
    double sd_design;       /* predicted sd of a gap there, on the question's scale */
    const char *none;       /* why there is no answer, or NULL */
    /* the check */
    int checked; /* 0: not simulated (see why) */
    const char *why;
    sim_plan_search_t search;
} sim_plan_answer_t;

/* Per-metric gap MSE (value scale [-1, 1]) of the question's campaign at K devices and ε (a
 * Q16.16 value for the SDK split), with plan.d, shares and nu2. 0, or -1 with why (the SDK
 * refuses the campaign at this ε). */
int sim_plan_gap_mse(const sim_plan_question_t *q, double devices, double eps, double *mse,
                     const char **why);

/* Analytic answer, with the margin. 0 (a->none says when nothing reaches it), or -1 (bad
 * question, or a given ε the SDK refuses; a->none says why). */
int sim_plan_solve(const sim_plan_question_t *q, sim_plan_answer_t *a);

/* The find-K check of a solved answer from seed (plan_check.h), each check's line to out (may
 * be NULL). 0, or -1 with a message in err (a->checked stays 0 when the answer cannot run,
 * with a->why). */
int sim_plan_check(const sim_plan_question_t *q, sim_plan_answer_t *a, uint64_t seed, FILE *out,
                   char *err, size_t errcap);

/* `dpm-sim plan --mechanism tuple_mr|tuple_ml ...` */
int sim_cmd_plan_tuple(int argc, char **argv);
/* `dpm-sim plan ARGS`: argv[0] is "plan"; the planner of --mechanism (roc_hist, roc_hist_groups,
 * else the tuple planners) answers. The one dispatch of dpm-sim's main and libdpmsim's. */
int sim_cmd_plan(int argc, char **argv);

#endif /* DPM_SIM_PLAN_TUPLE_H */
