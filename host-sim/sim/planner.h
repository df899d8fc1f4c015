/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim plan: "how many devices, or which ε, for |disparity error| <= x at confidence c",
 * answered from the analytic variances (estimate/disparity.h: dpm_disp_plan_*), then checked
 * by simulation in exact mode: the campaign the answer describes (ε rounded UP to the Q16.16 a
 * campaign carries, K devices) runs R times over the planner's worst-case population, and the
 * fraction of runs with |D-hat - D| <= x must not fall below c beyond binomial noise
 * (one-sided exact binomial test, p >= 1e-3).
 *
 * Worst-case population (the planner's nu2 bound): tuple_mr every metric 1/2 (v = 0, nu2 = 0),
 * tuple_ml every metric 1 (v = 1, nu2 = 1). The two compared groups have shares share_g,
 * share_h; other groups (d > 2) share the rest equally. */
#ifndef DPM_SIM_PLANNER_H
#define DPM_SIM_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "estimate/disparity.h"
#include "sim/session.h"

typedef struct {
    dpm_disp_plan_t plan; /* mechanism, split, d, shares, alpha (value scale), confidence */
    double error;         /* x as given */
    int scale_metric;     /* 1: x on the metric scale [0, 1] (alpha = 2x) */
    double devices;       /* given K (0: plan it) */
    double eps;           /* given ε (0: plan it) */
} sim_plan_question_t;

typedef struct {
    double eps, devices; /* the answer (NaN: no ε reaches the target) */
    double eps_campaign; /* ε rounded up to Q16.16 */
    double mse, target_mse;
    int checked; /* 0: not simulated (see why) */
    const char *why;
    uint32_t runs, within; /* runs with |error| <= x */
    double p_value;        /* Pr[Binomial(runs, c) <= within] */
    int pass;
    double seconds;
} sim_plan_answer_t;

/* Analytic answer. 0, or -1 (bad question). */
int sim_plan_solve(const sim_plan_question_t *q, sim_plan_answer_t *a);

/* Simulation check of a solved answer: runs exact-mode runs with seed. 0, or -1 with a
 * message in err (a->checked stays 0 when the campaign cannot run, with a->why). */
int sim_plan_check(const sim_plan_question_t *q, sim_plan_answer_t *a, uint32_t runs, uint64_t seed,
                   char *err, size_t errcap);

/* ---- roc_hist: "how many devices, or which ε, for |AUC error| <= x at confidence c" -----
 *
 * Model: every device holds `examples` examples of one binormal(auc, base_rate) group scored
 * as in roc_sim.h, counted in `bins` uniform score bins. Expected per-device counts pos_b =
 * E pi Pr[bin b | positive], neg_b = E (1 - pi) Pr[bin b | negative] give the AUC's noise
 * variance for K devices (estimate/roc.h, delta method):
 *     var = s²(ε) F / K,  F = dpm_roc_noise_factor(pos, neg),  s²(ε) = 2p / (1 - p)², p = e^(-ε/2).
 * The target is var <= (x / k)² with k = z_{(1+c)/2} (normal bound, default) or 1/sqrt(1 - c)
 * (Chebyshev). Given K: s² <= K (x/k)² / F, solved for p = ((v + 1) - sqrt(2v + 1)) / v,
 * ε = -2 ln p. Given ε (rounded up to Q16.16 as a campaign carries it): K = ceil(s² F k² / x²).
 * The error is against the population's own binned AUC (what the mechanism's noise blurs); the
 * sampling error of the examples themselves is not part of it.
 * Check: exact mode, R runs over a realized population of K devices (two identical groups),
 * the fraction of runs with |AUC-hat - AUC| <= x must not fall below c beyond binomial noise
 * (one-sided, p >= 1e-3). */
typedef struct {
    double auc, base_rate; /* the score model */
    uint32_t examples, bins;
    double error, confidence;
    int bound_chebyshev;
    double devices; /* given K (0: plan it) */
    double eps;     /* given ε (0: plan it) */
} sim_roc_plan_t;

typedef struct {
    double factor;       /* F */
    double k;            /* the bound's multiplier */
    double eps, devices; /* the answer (NaN: none) */
    double eps_campaign; /* ε rounded up to Q16.16 */
    double sd;           /* predicted sd of the AUC at the answer */
    int checked;
    const char *why;
    uint32_t runs, within;
    double p_value;
    int pass;
    double rmse, truth; /* of the check's runs */
    double seconds;
} sim_roc_plan_answer_t;

int sim_roc_plan_solve(const sim_roc_plan_t *q, sim_roc_plan_answer_t *a);
int sim_roc_plan_check(const sim_roc_plan_t *q, sim_roc_plan_answer_t *a, uint32_t runs,
                       uint64_t seed, char *err, size_t errcap);
/* `dpm-sim plan --mechanism roc_hist ...` */
int sim_cmd_plan_roc(int argc, char **argv);

/* ---- shared by both planners (planner.c, planner_roc.c) ---------------------------------- */

#define SIM_PLAN_CHECK_P_MIN                                                                       \
    1e-3 /* the simulated coverage fails below c at this one-sided level                           \
          */
#define SIM_PLAN_DEFAULT_RUNS 200u

/* The options both `dpm-sim plan` forms take (0 / NaN: not given). */
typedef struct {
    double error, confidence, devices, eps;
    uint64_t runs, seed;
    int check;
} sim_plan_cli_t;

/* Defaults: runs 200, seed 1, check on, error and confidence NaN, no devices, no ε. */
void sim_plan_cli_init(sim_plan_cli_t *o);
/* Option a with value v if it is one of --error --confidence --devices --eps --runs --seed:
 * 1 (*bad set when the value is refused), else 0. */
int sim_plan_cli_option(sim_plan_cli_t *o, const char *a, const char *v, int *bad);

/* ε rounded up to the Q16.16 a campaign carries. */
double sim_plan_eps_campaign(double eps);
/* NULL when an answer (ε, K, campaign ε) can be checked by simulation, else why not. */
const char *sim_plan_uncheckable(double eps, double devices, double eps_campaign);
/* The scenario fields both checks share: one device count, exact mode, population seed 1,
 * 100 beta levels. */
void sim_plan_scenario_base(sim_scenario_t *sc, const char *name, double devices, uint32_t runs,
                            uint64_t seed, double confidence, uint32_t examples);
/* Runs sc quietly in exact mode with `threads` threads; *start = sim_now() before the run.
 * 0, or -1 with a message in err (s is freed then). */
int sim_plan_session_run(const sim_scenario_t *sc, uint32_t threads, sim_session_t *s,
                         double *start, char *err, size_t errcap);
/* One-sided exact binomial test of `within` of `runs` against c: *p_value = Pr[Binomial(runs, c)
 * <= within]; returns 1 (pass) when *p_value >= SIM_PLAN_CHECK_P_MIN. */
int sim_plan_binom_test(uint32_t within, uint32_t runs, double confidence, double *p_value);

/* "  answer: ..." for a given K (prints eps, eps_campaign) or a given ε (prints devices);
 * -1 (after saying so) when no number of devices reaches it, else 0. */
int sim_plan_print_answer(double given_devices, double given_eps, double eps, double eps_campaign,
                          double devices);
/* "  |<what> error| <= x in w/R runs ..., one-sided binomial p = ... -> PASS|FAIL". */
void sim_plan_print_coverage(const char *what, double error, uint32_t within, uint32_t runs,
                             double confidence, double p_value, int pass);

#endif /* DPM_SIM_PLANNER_H */
