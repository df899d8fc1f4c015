/* SPDX-License-Identifier: Apache-2.0 */
/* What the two planners share (plan_tuple.h, plan_roc.h): their common options, the campaign ε
 * an answer becomes, the exact-mode simulation that checks an answer, and the verdict.
 *
 * The verdict is strict: a check PASSES only when the simulated coverage meets the target, i.e.
 * the fraction of runs with |error| <= x is >= the confidence c. It is not a test that the
 * coverage is "not significantly below" c: 185/200 = 92.5% against 95% FAILS. With it the
 * planners print the one-sided binomial p-value of the shortfall, Pr[Binomial(R, c) <= within],
 * so a reader can tell a plan that sits right on its target (a normal bound does: about half of
 * such checks fall just short) from one that misses it (p tiny). */
#ifndef DPM_SIM_PLAN_CHECK_H
#define DPM_SIM_PLAN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/types.h"
#include "sim/session.h"

#define SIM_PLAN_DEFAULT_RUNS 200u

/* The options both `dpm-sim plan` forms take (0 / NaN: not given). */
typedef struct {
    double error, confidence, devices;
    double eps; /* --eps as a campaign carries it (sim_plan_eps_parse): an exact Q16.16 value */
    uint64_t runs, seed;
    int check;
    char why[160]; /* why a value was refused, or "" */
} sim_plan_cli_t;

/* Defaults: runs 200, seed 1, check on, error and confidence NaN, no devices, no ε. */
void sim_plan_cli_init(sim_plan_cli_t *o);
/* Option a with value v if it is one of --error --confidence --devices --eps --runs --seed:
 * 1 (*bad set when the value is refused, o->why saying why when there is more to say), else 0. */
int sim_plan_cli_option(sim_plan_cli_t *o, const char *a, const char *v, int *bad);

/* The ε a campaign implements. A campaign carries ε as Q16.16 and its `eps =` text goes through
 * the SDK's parser, dpm_eps_from_decimal, which rounds DOWN (less privacy loss); roc_hist
 * implements exactly that value, so a planner must plan at it, not at the ε typed.
 *
 * sim_plan_eps_parse: the Q16.16 ε of the text a user gives (--eps), by dpm_eps_from_decimal
 * itself, after rewriting an exponent ("1e-9") into the plain decimal it stands for, digit for
 * digit. 0, or -1 with why (not a positive number; rounds down to 0, e.g. 1e-9: no campaign can
 * run at it; above DPM_EPS_MAX). */
int sim_plan_eps_parse(const char *text, dpm_eps_t *q16, char *why, size_t whycap);
/* floor(eps 2^16) / 2^16: the same rounding applied to a double's exact value (callers holding
 * ε as a double); 0 when ε rounds to 0 (no campaign: refuse it). */
double sim_plan_eps_down(double eps);
/* ceil(eps 2^16) / 2^16: the smallest campaign ε at or above a planned minimum ε (the answer
 * to "which ε for K devices"); may exceed DPM_EPS_MAX (sim_plan_uncheckable says so). */
double sim_plan_eps_up(double eps);
/* The exact decimal of a Q16.16 ε (at most 16 fraction digits, "0.0000152587890625"), which
 * dpm_eps_from_decimal reads back to the same value: the text to put in a campaign.
 * cap >= 32. */
void sim_plan_eps_text(dpm_eps_t q16, char *buf, size_t cap);
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

/* The verdict: 1 (PASS) when within / runs >= confidence; *p_value = Pr[Binomial(runs, c) <=
 * within], the chance of a coverage this low or lower if the true coverage were exactly c. */
int sim_plan_verdict(uint32_t within, uint32_t runs, double confidence, double *p_value);

/* "  answer: ..." for a given K (prints eps, eps_campaign) or a given ε (prints the campaign's
 * ε and devices);
 * -1 (after saying so) when no number of devices reaches it, else 0. */
int sim_plan_print_answer(double given_devices, double given_eps, double eps, double eps_campaign,
                          double devices);
/* "  |<what> error| <= x in w/R runs (..%), target >= c%: met -> PASS" or "NOT met ... -> FAIL". */
void sim_plan_print_coverage(const char *what, double error, uint32_t within, uint32_t runs,
                             double confidence, double p_value, int pass);

#endif /* DPM_SIM_PLAN_CHECK_H */
