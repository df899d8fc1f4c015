/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim plan for tuple_mr / tuple_ml: "how many devices, or which ε, for |disparity error| <= x
 * at confidence c", answered from the analytic variances (estimate/disparity.h:
 * dpm_disp_plan_*), then checked by simulation in exact mode: the campaign the answer describes
 * (its Q16.16 ε, K devices: see plan_check.h) runs R times over the planner's
 * worst-case population, and the fraction of runs with |D-hat - D| <= x must reach c
 * (plan_check.h: PASS only when it does).
 *
 * The error planned for: the estimated disparity D-hat = m-hat_g - m-hat_h between two groups
 * against the population's true disparity D, i.e. the mechanism's noise (the population is what
 * it is: every device reports once). The variance uses the worst-case second moment nu2, so the
 * plan holds for any metric values.
 * Worst-case population (the planner's nu2 bound): tuple_mr every metric 1/2 (v = 0, nu2 = 0),
 * tuple_ml every metric 1 (v = 1, nu2 = 1). The two compared groups have shares share_g,
 * share_h; other groups (d > 2) share the rest equally. */
#ifndef DPM_SIM_PLAN_TUPLE_H
#define DPM_SIM_PLAN_TUPLE_H

#include <stdint.h>

#include "estimate/disparity.h"
#include "sim/plan_check.h"

typedef struct {
    dpm_disp_plan_t plan; /* mechanism, split, d, shares, alpha (value scale), confidence */
    double error;         /* x as given */
    int scale_metric;     /* 1: x on the metric scale [0, 1] (alpha = 2x) */
    double devices;       /* given K (0: plan it) */
    double eps;           /* given ε (0: plan it) */
} sim_plan_question_t;

typedef struct {
    double eps, devices; /* the answer (NaN: no ε reaches the target) */
    double eps_campaign; /* the campaign's Q16.16 ε: given ε rounded down (the SDK's
                          * parser; K is planned at it), planned ε rounded up */
    double mse, target_mse;
    int checked; /* 0: not simulated (see why) */
    const char *why;
    uint32_t runs, within; /* runs with |error| <= x */
    double p_value;        /* Pr[Binomial(runs, c) <= within] (plan_check.h) */
    int pass;
    double seconds;
} sim_plan_answer_t;

/* Analytic answer. 0, or -1 (bad question, or a given ε that rounds down to 0). */
int sim_plan_solve(const sim_plan_question_t *q, sim_plan_answer_t *a);

/* Simulation check of a solved answer: runs exact-mode runs with seed. 0, or -1 with a
 * message in err (a->checked stays 0 when the campaign cannot run, with a->why). */
int sim_plan_check(const sim_plan_question_t *q, sim_plan_answer_t *a, uint32_t runs, uint64_t seed,
                   char *err, size_t errcap);

/* `dpm-sim plan --mechanism tuple_mr|tuple_ml ...` */
int sim_cmd_plan_tuple(int argc, char **argv);

#endif /* DPM_SIM_PLAN_TUPLE_H */
