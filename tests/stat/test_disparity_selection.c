/* SPDX-License-Identifier: Apache-2.0 */
/* Selection-aware disparities of the tuple mechanisms (estimate/pairwise.h through
 * dpm_disp_pairwise), over many simulated campaigns (dpm-sim's exact mode: each run's aggregate
 * drawn as the sum of the devices' reports) of populations never used to build the method:
 *   close   tuple_mr, ε = 1, 50,000 devices, four groups (shares 0.4 / 0.3 / 0.2 / 0.1) whose
 *           TPRs vary per device around 0.80, 0.81, 0.80, 0.83; sizes estimated from the GRR
 *           counts as the collector does
 *   equal   tuple_ml, ε = 8, 20,000 devices, three equal groups, every device's TPR 0.75: every
 *           true gap is 0 (the largest |gap| too); sizes known
 * Over RUNS runs (binomial tests against 0.95, α = 1e-6):
 *   - each group's and each pair's own (pointwise) interval holds its truth in 95 % of the runs
 *     (two-sided, item by item: what "ci" claims, for one pair chosen in advance);
 *   - the simultaneous intervals hold every true gap at once in 95 % of the runs (two-sided);
 *   - the interval for the largest |gap| holds the true largest at least 95 % (one-sided: it is
 *     conservative by construction);
 *   - a pair called distinguishable has the right sign (at most 5 % of runs call one wrongly).
 * Negative controls (the old output must fail the same test): reading the pointwise intervals
 * together, and the old max_disparity (the pair with the largest estimate, with its own
 * pointwise interval against its own true gap), both fall significantly below 95 %. The share of
 * runs naming the right pair and the mean overstatement of the largest are printed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/devices/results.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */
#include "sim/devices/selection.h"
#include "sim/run/session.h"
#include "stat_gof.h"

#define RUNS 3000u
#define ALPHA 1e-6

static const char kClose[] =
    "[scenario]\nseed = 28\nruns = 3000\ndevices = 50000\nconfidence = 0.95\nmode = exact\n"
    "sizes = estimated\nnu2 = true\n"
    "[group a]\nshare = 0.4\ntpr = beta(16, 4)\n"
    "[group b]\nshare = 0.3\ntpr = beta(16.2, 3.8)\n"
    "[group c]\nshare = 0.2\ntpr = beta(8, 2)\n"
    "[group d]\nshare = 0.1\ntpr = beta(16.6, 3.4)\n"
    "[campaign close]\nmechanism = tuple_mr\neps = 1\nmetrics = tpr\n";

static const char kEqual[] =
    "[scenario]\nseed = 29\nruns = 3000\ndevices = 20000\nconfidence = 0.95\nmode = exact\n"
    "sizes = known\nnu2 = true\n"
    "[group a]\nshare = 1/3\ntpr = constant(0.75)\n"
    "[group b]\nshare = 1/3\ntpr = constant(0.75)\n"
    "[group c]\nshare = 1/3\ntpr = constant(0.75)\n"
    "[campaign equal]\nmechanism = tuple_ml\neps = 8\nmetrics = tpr\n";

static void check(const char *name, const char *text, size_t len)
{
    sim_scenario_t *sc = malloc(sizeof(*sc));
    char err[256];
    assert_non_null(sc);
    assert_int_equal(sim_scenario_parse(text, len, name, sc, err, sizeof(err)), 0);
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = SIM_MODE_EXACT;
    ro.threads = 2;
    ro.quiet = 1;
    sim_session_t s;
    assert_int_equal(sim_session_run(sc, &ro, &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 1);
    const sim_selection_t *x = sim_selection_of(&s.res[0], 0);
    assert_non_null(x);
    sim_selection_summary_t m;
    sim_selection_summarize(x, &m);
    assert_int_equal(m.runs, RUNS);
    double p_sim = stat_binom_two_sided(x->simultaneous, RUNS, 0.95);
    double p_largest = stat_binom_cdf(x->largest, RUNS, 0.95);
    double p_calls = 1.0 - stat_binom_cdf(x->false_call > 0 ? x->false_call - 1u : 0u, RUNS, 0.05);
    double p_old_all = stat_binom_cdf(x->pointwise_all, RUNS, 0.95);
    double p_old_max = stat_binom_cdf(x->chosen_pointwise, RUNS, 0.95);
    print_message("# %s: largest true gap %.4f; simultaneous %.4f (p %.3g), largest %.4f (p %.3g, "
                  "mean width %.4f), wrong sign called %.4f; right pair %.3f, overstated by "
                  "%.4f, stability %.3f, candidates hold the largest %.4f\n",
                  name, m.truth_largest, m.simultaneous, p_sim, m.largest, p_largest, m.width,
                  m.false_call, m.right_pair, m.overstatement, m.stability, m.in_candidates);
    print_message("# %s: negative controls: pointwise intervals read together %.4f (p %.3g), the "
                  "old max_disparity's interval %.4f (p %.3g)\n",
                  name, m.pointwise_all, p_old_all, m.chosen_pointwise, p_old_max);
    for (uint32_t i = 0; i < s.res[0].cfg.nitems; i++) { /* each group and pair alone */
        sim_item_summary_t it;
        sim_result_summary(&s.res[0], i, &it);
        uint32_t covered = (uint32_t)lround(it.coverage * it.runs);
        double p = stat_binom_two_sided(covered, it.runs, 0.95);
        if (p < ALPHA) {
            print_message("# %s: %s alone covered %u of %u (p %.3g)\n", name,
                          s.res[0].cfg.items[i].name, covered, it.runs, p);
        }
        assert_true(it.runs == RUNS && p >= ALPHA);
    }
    assert_true(p_sim >= ALPHA);
    assert_true(p_largest >= ALPHA);
    assert_true(x->false_call == 0 || p_calls >= ALPHA);
    /* every gap inside its interval implies both of these: */
    assert_true(x->in_candidates >= x->simultaneous && x->largest >= x->simultaneous);
    assert_true(p_old_all < ALPHA);
    assert_true(p_old_max < ALPHA);
    sim_session_free(&s);
    free(sc);
}

static void test_close_groups(void **state)
{
    (void)state;
    check("close", kClose, sizeof(kClose) - 1);
}

static void test_equal_groups(void **state)
{
    (void)state;
    check("equal", kEqual, sizeof(kEqual) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_groups),
        cmocka_unit_test(test_equal_groups),
    };
    return cmocka_run_group_tests_name("disparity_selection", tests, NULL, NULL);
}
