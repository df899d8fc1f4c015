/* SPDX-License-Identifier: Apache-2.0 */
/* What the planners share (plan_tuple.h, plan_roc.h, plan_rocg.h): their common options, the
 * campaign ε an answer becomes, the trust model they plan for, and the check of an answer by
 * simulation, which finds the number of devices that is shown to reach the target.
 *
 * Trust model. Every planner plans a LOCAL DP campaign: each device perturbs its own report
 * and nobody is trusted with a raw value (SIM_PLAN_TRUST_LOCAL, "local_dp" in the JSON's
 * trust_model). roc_hist_groups' planner also plans the two-aggregator mode (central noise over
 * secret-shared sums, SIM_PLAN_TRUST_TWOAGG), alone or beside local DP (--trust); the field
 * exists so a reader never has to guess which one a figure is for.
 *
 * The check is never a coin flip. An answer planned exactly at the target coverage c (a normal
 * bound) reaches c in about half of any simulation of it, so a PASS/FAIL at the planned count
 * says nothing. Instead:
 *   - the check's coverage comes with its Clopper-Pearson interval at level SIM_PLAN_CI_LEVEL
 *     (two-sided 95 %): an item is VERIFIED when the interval's lower end is >= c, REFUTED
 *     when its upper end is < c (the analytic plan over-promised), else undecided;
 *   - the answer is planned with a stated margin: at the design coverage c_d > c at which a check
 *     of R runs verifies every item with probability >= SIM_PLAN_POWER (0.9; per item 1 - 0.1 / m
 *     for m items) (sim_plan_design_coverage). R defaults to the smallest of 200, 400, ..., 6400
 *     whose margin c_d - c takes at most half of the misses the target allows, 1 - c;
 *   - find K: the check runs at the design K; while an item is not verified it steps K up (at
 *     least 10 %, at most 4x per step), aiming the worst item's observed coverage at c_d through
 *     the normal law (K_next = K (z(c_d) / z(observed))^2, z(p) = Phi^-1((1 + p) / 2): the error
 *     of an unbiased estimate shrinks as 1/sqrt(K)), each step on fresh seeds, at most
 *     SIM_PLAN_MAX_STEPS checks. The answer is the first K at which every item is verified, with
 *     how many devices that adds to the analytic count. PASS (exit 0) when one is found, FAIL
 *     (exit 1) when none is, saying the largest K tried and that more are needed. */
#ifndef DPM_SIM_PLAN_CHECK_H
#define DPM_SIM_PLAN_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/json_write.h"
#include "dpm/types.h"
#include "sim/run/session.h"

#define SIM_PLAN_DEFAULT_RUNS 200u /* the smallest default (sim_plan_default_runs) */
#define SIM_PLAN_MAX_RUNS 6400u    /* the largest default */
#define SIM_PLAN_CI_LEVEL 0.95     /* the check's coverage interval (two-sided) */
#define SIM_PLAN_POWER 0.9         /* chance that a check at the design coverage verifies */
#define SIM_PLAN_MAX_STEPS 6u      /* checks of the find-K search */
#define SIM_PLAN_MAX_ITEMS 160u    /* items one check verifies (groups and gaps) */
#define SIM_PLAN_NAME_MAX 48
#define SIM_PLAN_TRUST_LOCAL "local_dp"
#define SIM_PLAN_TRUST_LOCAL_TEXT                                                                  \
    "local DP (each device perturbs its own report before it leaves; no collector or "             \
    "aggregator is trusted with a raw value)"
#define SIM_PLAN_TRUST_TWOAGG "two_aggregators"
#define SIM_PLAN_TRUST_TWOAGG_TEXT                                                                 \
    "two aggregators (central DP: each device's exact statistic as Prio3 shares, each "            \
    "aggregator's noise alone eps-DP for the device's whole contribution; nothing holds if both "  \
    "collude)"
#define SIM_PLAN_TRUST_TWOAGG_GAUSS_TEXT                                                           \
    "two aggregators (central DP: each device's exact statistic as Prio3 shares, each "            \
    "aggregator's discrete Gaussian alone (eps, delta)-DP for the device's whole contribution; "   \
    "nothing holds if both collude)"

/* The options all `dpm-sim plan` forms take (0 / NaN / NULL: not given). */
typedef struct {
    double error, confidence, devices;
    double eps; /* --eps as a campaign carries it (sim_plan_eps_parse): an exact Q16.16 value */
    uint64_t runs, seed;
    int runs_given;
    int check;
    const char *json; /* --json FILE: the answer as JSON ("-": stdout) */
    char why[160];    /* why a value was refused, or "" */
} sim_plan_cli_t;

/* Defaults: runs chosen later (sim_plan_default_runs), seed 1, check on, error and confidence
 * NaN, no devices, no ε, no JSON. */
void sim_plan_cli_init(sim_plan_cli_t *o);
/* Option a with value v if it is one of --error --confidence --devices --eps --runs --seed
 * --json: 1 (*bad set when the value is refused, o->why saying why when there is more to say),
 * else 0. */
int sim_plan_cli_option(sim_plan_cli_t *o, const char *a, const char *v, int *bad);

/* A planner's options whose value is kept as text (parsed once everything is known): the name and
 * where its const char * lives in the planner's own options struct. */
typedef struct {
    const char *name;
    size_t at; /* offsetof the const char * */
} sim_plan_text_opt_t;

/* If a is one of opts[0 .. n): its value v stored in the struct at base, and 1; else 0. */
int sim_plan_text_option(const sim_plan_text_opt_t *opts, size_t n, void *base, const char *a,
                         const char *v);

/* "dpm-sim plan: what" and the planner's usage text on stderr: SIM_EXIT_USAGE. */
int sim_plan_usage(const char *usage, const char *what);
/* "bad value for A" (": o->why" when it says more) as a usage error: SIM_EXIT_USAGE. */
int sim_plan_bad_value(const sim_plan_cli_t *o, const char *usage, const char *a);
/* "unknown option 'A'" / "A is missing its value", then the usage: SIM_EXIT_USAGE. */
int sim_plan_unknown(const char *usage, const char *a);
int sim_plan_no_value(const char *usage, const char *a);

#define SIM_PLAN_HELP 100 /* sim_plan_cli_parse: --help printed */
/* A roc planner's options argv[1 .. argc): --help / -h (usage on stdout: SIM_PLAN_HELP),
 * --no-check (o->check = 0), then options with a value: those of sim_plan_cli_option, else
 * mine(ctx, a, v, &bad), which returns 0 for an option it does not know. 0, SIM_PLAN_HELP, or a
 * usage error (a missing value, an unknown option, a bad value: SIM_EXIT_USAGE). */
int sim_plan_cli_parse(sim_plan_cli_t *o, int argc, char **argv, const char *usage,
                       int (*mine)(void *ctx, const char *a, const char *v, int *bad), void *ctx);

/* The ε a campaign implements. A campaign carries ε as Q16.16 and its `eps =` text goes through
 * the SDK's parser, dpm_eps_from_decimal, which rounds DOWN (less privacy loss); the mechanisms
 * implement that value (or less), so a planner must plan at it, not at the ε typed.
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
/* The smallest Q16.16 ε in [1, DPM_EPS_MAX_Q16] with f(q16, ctx) <= 0, by bisection, for an f
 * that decreases in ε (an MSE minus its target). f returns NaN where the mechanism cannot be
 * built: at the small end that counts as > 0; at the large end the search starts from the
 * largest ε it can be built at. 0 when no ε reaches it. */
dpm_eps_t sim_plan_eps_search(double (*f)(dpm_eps_t q16, void *ctx), void *ctx);
/* NULL when an answer (ε, K, campaign ε) can be checked by simulation, else why not. */
const char *sim_plan_uncheckable(double eps, double devices, double eps_campaign);
/* The scenario fields the checks share: one device count, exact mode, population seed 1,
 * 100 beta levels. */
void sim_plan_scenario_base(sim_scenario_t *sc, const char *name, double devices, uint32_t runs,
                            uint64_t seed, double confidence, uint32_t examples);
/* Runs sc quietly in exact mode with `threads` threads; *start = sim_now() before the run.
 * 0, or -1 with a message in err (s is freed then). */
int sim_plan_session_run(const sim_scenario_t *sc, uint32_t threads, sim_session_t *s,
                         double *start, char *err, size_t errcap);

/* ---- coverage, margin and the find-K search ------------------------------------------------ */

/* Clopper-Pearson interval of a coverage `within` of `runs` at two-sided level `level`. */
void sim_plan_coverage_ci(uint32_t within, uint32_t runs, double level, double *lo, double *hi);
/* The design coverage c_d for a check of `runs` runs over `items` items at target c (see the top
 * of this file); NaN when even runs / runs cannot verify c (too few runs). */
double sim_plan_design_coverage(double c, uint32_t runs, uint32_t items);
/* The default number of runs for target c and `items` items (see the top of this file). */
uint32_t sim_plan_default_runs(double c, uint32_t items);

/* One check: at `devices` devices, `runs` runs from `seed`, within[i] = runs whose item i error
 * is within the target (item_names[i] names it). 0, or -1 with a message in err. */
typedef int (*sim_plan_check_fn)(void *ctx, double devices, uint32_t runs, uint64_t seed,
                                 uint32_t *within, char *err, size_t errcap);

typedef struct {
    double devices;
    uint32_t runs, within; /* the worst item's (the smallest lower end) */
    uint32_t worst;        /* its index */
    double lo, hi;         /* its coverage interval */
    int verified;          /* every item's lower end >= c */
    int refuted;           /* some item's upper end < c */
    double seconds;
} sim_plan_step_t;

typedef struct {
    double confidence, design; /* c and c_d */
    uint32_t runs, items;
    uint32_t nsteps;
    sim_plan_step_t step[SIM_PLAN_MAX_STEPS];
    int found;         /* a step verified every item */
    double devices;    /* the verified K (found), else the last K tried */
    int model_refuted; /* the first step refuted an item: the analytic model over-promised */
    char names[SIM_PLAN_MAX_ITEMS][SIM_PLAN_NAME_MAX]; /* the items' names */
} sim_plan_search_t;

/* The find-K search from `devices` (see the top of this file); out (may be NULL) gets its
 * header (the target |error| <= `error`, NaN: each item's own) and each check's line as it
 * completes (a check can take minutes). 0, or -1 with a message in err. */
int sim_plan_find_devices(sim_plan_check_fn check, void *ctx, const char *const *names,
                          uint32_t items, double confidence, uint32_t runs, double devices,
                          uint64_t seed, FILE *out, double error, sim_plan_search_t *s, char *err,
                          size_t errcap);

/* ---- output -------------------------------------------------------------------------------- */

/* "  trust model: TEXT" (SIM_PLAN_TRUST_LOCAL_TEXT, SIM_PLAN_TRUST_TWOAGG_TEXT) */
void sim_plan_print_trust(const char *text);
/* "  answer: ..." for a given K (prints eps, eps_campaign) or a given ε (prints the campaign's
 * ε and devices); -1 (after saying so) when no number of devices reaches it, else 0. */
int sim_plan_print_answer(double given_devices, double eps, double eps_campaign, double devices);
/* "  margin: ..." the design coverage and what it adds: given K (devices_given), the campaign ε
 * the check runs at; else the K it adds to the bound's. */
void sim_plan_print_margin(double confidence, double design, uint32_t runs, uint32_t items,
                           int devices_given, double devices_bound, double devices_design,
                           double design_eps);
/* The search's verdict: "-> PASS" with the devices to add to `devices_analytic` (the bound's
 * count, or the K the user gave), or "-> FAIL"; a warning first when the model was refuted. */
void sim_plan_print_verdict(const sim_plan_search_t *s, double devices_analytic, int devices_given);
/* --json: open path ("-": stdout) and write {"planner": planner, "trust_model": trust,
 * "check": the search (null when s is NULL or did not run), with its devices to add against
 * devices_analytic. NULL after printing why. The planner then writes its own objects, each
 * opened with jw_raw (",\n  \"question\": {") and filled by the two helpers below. */
FILE *sim_plan_json_begin(const char *path, jw_t *w, const char *planner, const char *trust,
                          const sim_plan_search_t *s, double devices_analytic);
/* "key": value for each of n (null when not finite; 15 significant digits, 17 when 15 do not
 * read back to the value), separated by ", "; `more` 1: a ", " first. */
void sim_plan_json_nums(jw_t *w, int more, const char *const *keys, const double *vals, size_t n);
/* "key": "text" (null when text is NULL); `more` as above. */
void sim_plan_json_text(jw_t *w, int more, const char *key, const char *text);
/* Close the top object and the file (not stdout); -1 after printing why a write failed. */
int sim_plan_json_end(FILE *f, jw_t *w, const char *path);

#endif /* DPM_SIM_PLAN_CHECK_H */
