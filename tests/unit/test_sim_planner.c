/* SPDX-License-Identifier: Apache-2.0 */
/* The tuple planner (sim/plan/plan_tuple.h):
 *  - m metrics per report: the predicted gap sd of every metric matches exact-mode simulation
 *    (alpha 1e-6 chi-square band, 3 % model tolerance) on populations the planner was never
 *    tuned for (three groups of unequal shares, beta-distributed metrics, tuple_mr and tuple_ml,
 *    eps 0.3 .. 6, 2 and 3 metrics), with the groups' own second moments; negative control: the
 *    one-metric plan of the same campaign (what the planner did before) is outside the band;
 *  - the check's search: from too few devices, or at 0.6 of the planned eps, it finds the K that
 *    is verified and says how many devices that adds (that a check is no coin flip, over many
 *    seeds: tests/stat/test_sim_plan_check.c);
 *  - the analytic answers are consistent both ways, planned at the campaign's Q16.16 eps, and the
 *    paper split's answers and "no answer" cells stay what they were. Fixed seeds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/devices/mech_tuple.h"
#include "sim/plan/plan_tuple.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */
#include "sim/run/session.h"
#include "sim_fixture.h"
#include "stat_gof.h"

#define ALPHA 1e-6
#define MODEL_TOL 0.03 /* the variance formula is exact for known sizes: rounding only */

/* the planner's question, or the test fails */
static void question(sim_plan_question_t *q, dpm_disp_mech_t mech, dpm_disp_split_t split,
                     double error_metric, double confidence, dpm_disp_bound_t bound)
{
    assert_int_equal(sim_fixture_question(q, mech, split, error_metric, confidence, bound), 0);
}

/* The band a sample sd of `runs` draws stays in around the true sd, at ALPHA two-sided. */
static void sd_band(uint32_t runs, double *lo, double *hi)
{
    double k = runs - 1.0;
    *lo = sqrt(stat_chi2_isf(1.0 - ALPHA / 2.0, k) / k) * (1.0 - MODEL_TOL);
    *hi = sqrt(stat_chi2_isf(ALPHA / 2.0, k) / k) * (1.0 + MODEL_TOL);
}

/* ---- m metrics per report: predicted sd against simulation --------------------------------- */

static const char kPopulation[] = "[scenario]\n"
                                  "mode = exact\n"
                                  "seed = 77\n"
                                  "[population]\n"
                                  "beta_levels = 20\n"
                                  "[group a]\n"
                                  "share = 0.5\n"
                                  "tpr = beta(6, 2)\n"
                                  "fpr = beta(1, 9)\n"
                                  "accuracy = constant(0.9)\n"
                                  "[group b]\n"
                                  "share = 0.3\n"
                                  "tpr = beta(3, 3)\n"
                                  "fpr = beta(2, 5)\n"
                                  "accuracy = beta(8, 2)\n"
                                  "[group c]\n"
                                  "share = 0.2\n"
                                  "tpr = constant(0.4)\n"
                                  "fpr = constant(0.2)\n"
                                  "accuracy = constant(0.7)\n"
                                  "[campaign t]\n";

/* Run the population with campaign lines `campaign` in exact mode; for every metric j, the sample
 * sd of the gap a - b's error, against the planner's prediction with m metrics and with one. */
static void check_sd(const char *campaign, dpm_disp_mech_t mech, uint32_t nmetrics,
                     uint64_t devices, uint32_t runs)
{
    static char text[2048];
    snprintf(text, sizeof(text), "%s%s", kPopulation, campaign);
    sim_scenario_t *sc = malloc(sizeof(*sc));
    char err[512];
    assert_non_null(sc);
    if (sim_scenario_parse(text, strlen(text), "t.scn", sc, err, sizeof(err)) != 0) {
        print_error("%s\n", err);
        fail();
    }
    sc->devices[0] = devices;
    sc->runs = runs;
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = SIM_MODE_EXACT;
    ro.threads = 2;
    ro.quiet = 1;
    sim_session_t s;
    if (sim_session_run(sc, &ro, &s, err, sizeof(err)) != 0) {
        print_error("%s\n", err);
        fail();
    }
    const sim_result_t *r = &s.res[0];
    const sim_tuple_state_t *st = sim_tuple_state_c(&r->cfg);
    assert_non_null(st);
    double lo, hi, eps = sc->campaign[0].eps[0] / 65536.0; /* as the campaign carries it */
    sd_band(runs, &lo, &hi);
    for (uint32_t j = 0; j < nmetrics; j++) {
        uint32_t gap = sim_tuple_item(&r->cfg, j, 0, 1);
        double sum = 0.0, sq = 0.0;
        for (uint32_t run = 0; run < runs; run++) {
            double e = sim_result_at(r, run, gap)->est - r->cfg.items[gap].truth;
            sum += e;
            sq += e * e;
        }
        double sim_sd = sqrt((sq - sum * sum / runs) / (runs - 1.0));
        /* the planner's question for this population: its shares and second moments */
        sim_plan_question_t q;
        question(&q, mech, DPM_DISP_SPLIT_CORRECT, 0.01, 0.9, DPM_DISP_BOUND_NORMAL);
        q.plan.d = 3;
        q.plan.share_g = st->n[0] / (double)devices;
        q.plan.share_h = st->n[1] / (double)devices;
        q.plan.nu2_g = st->nu2[j][0];
        q.plan.nu2_h = st->nu2[j][1];
        q.nmetrics = nmetrics;
        memcpy(q.metrics, sc->campaign[0].metrics, sizeof(q.metrics));
        double mse = 0.0, mse1 = 0.0;
        const char *why = NULL;
        assert_int_equal(sim_plan_gap_mse(&q, (double)devices, eps, &mse, &why), 0);
        q.nmetrics = 1; /* negative control: the planner of before, one metric per report */
        assert_int_equal(sim_plan_gap_mse(&q, (double)devices, eps, &mse1, &why), 0);
        double sd = sqrt(mse) / 2.0, sd1 = sqrt(mse1) / 2.0; /* metric scale */
        print_message("# %s eps %g, %u metrics, %s gap: simulated sd %.5f, planned %.5f "
                      "(ratio %.3f, band [%.3f, %.3f]); one-metric plan %.5f (ratio %.3f)\n",
                      mech == DPM_DISP_MR ? "tuple_mr" : "tuple_ml", eps, nmetrics,
                      sim_metric_name(sc->campaign[0].metrics[j]), sim_sd, sd, sim_sd / sd, lo, hi,
                      sd1, sim_sd / sd1);
        assert_true(sim_sd / sd >= lo && sim_sd / sd <= hi);
        assert_true(sim_sd / sd1 > hi); /* the old plan promised a sd far too small */
    }
    sim_session_free(&s);
    free(sc);
}

static void test_metrics_per_report_sd(void **state)
{
    (void)state;
    check_sd("mechanism = tuple_mr\neps = 1\nmetrics = tpr, fpr\n", DPM_DISP_MR, 2, 200000, 400);
    check_sd("mechanism = tuple_mr\neps = 6\nmetrics = tpr, fpr, accuracy\n", DPM_DISP_MR, 3,
             100000, 400);
    check_sd("mechanism = tuple_ml\neps = 0.3\nmetrics = fpr, tpr\n", DPM_DISP_ML, 2, 1000000, 400);
    check_sd("mechanism = tuple_ml\neps = 6\nmetrics = tpr, accuracy, fpr\n", DPM_DISP_ML, 3,
             100000, 400);
}

/* The planner's answers for m metrics: more devices than one metric, joint more than each. */
static void test_metrics_answers(void **state)
{
    (void)state;
    sim_plan_question_t q;
    sim_plan_answer_t a1, a2, aj;
    char err[256];
    question(&q, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.02, 0.9, DPM_DISP_BOUND_NORMAL);
    q.eps = 1.0;
    assert_int_equal(sim_plan_solve(&q, &a1), 0);
    q.nmetrics = 2;
    assert_int_equal(sim_plan_solve(&q, &a2), 0);
    q.joint = 1;
    assert_int_equal(sim_plan_solve(&q, &aj), 0);
    print_message("# tuple_mr eps 1, normal 0.9, x 0.02: K %.0f (1 metric), %.0f (2), %.0f (2, "
                  "joint)\n",
                  a1.devices, a2.devices, aj.devices);
    assert_true(a2.devices > 3.0 * a1.devices && aj.devices > a2.devices);
    /* the joint check counts the runs with both gaps within x, and verifies */
    assert_int_equal(sim_plan_check(&q, &aj, 5, NULL, err, sizeof(err)), 0);
    assert_true(aj.checked && aj.search.found && aj.search.items == 1);
    /* given K: the eps for two metrics is larger than for one */
    question(&q, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 0.02, 0.9, DPM_DISP_BOUND_CHEBYSHEV);
    q.devices = 1e6;
    assert_int_equal(sim_plan_solve(&q, &a1), 0);
    q.nmetrics = 2;
    assert_int_equal(sim_plan_solve(&q, &a2), 0);
    print_message("# tuple_ml K 1e6, Chebyshev 0.9, x 0.02: eps %.4f (1 metric), %.4f (2)\n",
                  a1.eps, a2.eps);
    assert_true(a2.eps > 1.5 * a1.eps);
    assert_true(a2.eps_campaign * 65536.0 == floor(a2.eps_campaign * 65536.0));
    q.nmetrics = 5; /* more than a report holds */
    assert_int_equal(sim_plan_solve(&q, &a2), -1);
}

/* ---- the check: its search (never a coin flip: tests/stat/test_sim_plan_check.c) ----------- */

static void test_search_adds_devices(void **state)
{
    (void)state;
    sim_plan_question_t q;
    sim_plan_answer_t a;
    char err[256];
    question(&q, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 0.01, 0.95, DPM_DISP_BOUND_NORMAL);
    q.nmetrics = 2;
    q.eps = 2.0;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    double k = a.design_devices;
    a.design_devices = floor(k / 3.0); /* far too few: the first check is refuted */
    assert_int_equal(sim_plan_check(&q, &a, 7, NULL, err, sizeof(err)), 0);
    print_message("# from K/3 = %.0f: %u checks, verified at %.0f (planned %.0f)\n",
                  a.search.step[0].devices, a.search.nsteps, a.search.devices, k);
    assert_true(a.checked && a.search.model_refuted && a.search.step[0].refuted);
    assert_true(a.search.found && a.search.nsteps >= 2 && a.search.devices > k / 3.0);
    assert_true(a.search.devices < 2.0 * k);
    /* a campaign at 0.6 of the planned eps (same K): refuted, the search adds devices */
    question(&q, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.02, 0.9, DPM_DISP_BOUND_NORMAL);
    q.devices = 200000;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    a.design_eps = floor(0.6 * a.eps * 65536.0) / 65536.0;
    assert_int_equal(sim_plan_check(&q, &a, 14, NULL, err, sizeof(err)), 0);
    assert_true(a.search.step[0].refuted && a.search.found && a.search.devices > 200000.0);
    /* the coverage interval: Clopper-Pearson, as the test statistics compute it */
    double lo, hi;
    sim_plan_coverage_ci(185, 200, 0.95, &lo, &hi);
    assert_true(fabs(lo - stat_binom_lower(185, 200, 0.025)) < 1e-9);
    assert_true(fabs(hi - stat_binom_upper(185, 200, 0.025)) < 1e-9);
    sim_plan_coverage_ci(200, 200, 0.95, &lo, &hi);
    assert_true(hi == 1.0 && lo < 0.99);
    /* runs that cannot show the target: 0.99 needs more than 200 */
    assert_true(isnan(sim_plan_design_coverage(0.99, 200, 1)));
    assert_true(sim_plan_default_runs(0.99, 1) > 200u);
}

/* ---- analytic consistency, paper split ------------------------------------------------------ */

static void test_eps_for_devices_round_trip(void **state)
{
    (void)state;
    sim_plan_question_t q;
    sim_plan_answer_t a, back;
    char err[256];
    question(&q, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.01, 0.95, DPM_DISP_BOUND_CHEBYSHEV);
    q.devices = 1e6;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    assert_true(isfinite(a.eps) && a.eps > 0.5 && a.eps < 5.0);
    assert_true(a.mse <= a.target_mse * (1.0 + 1e-6));
    /* the other direction: at the campaign eps of that answer, K devices (or a few fewer) do */
    sim_plan_question_t q2 = q;
    q2.devices = 0.0;
    q2.eps = a.eps_campaign;
    assert_int_equal(sim_plan_solve(&q2, &back), 0);
    assert_true(back.devices <= 1e6 && back.devices > 0.99e6);
    assert_int_equal(sim_plan_check(&q, &a, 11, NULL, err, sizeof(err)), 0);
    print_message("# tuple_mr K=1e6: eps %.6f, %u/%u within\n", a.eps, a.search.step[0].within,
                  a.search.step[0].runs);
    assert_true(a.checked && a.search.found && a.search.nsteps == 1);
    assert_true(a.search.devices == 1e6); /* Chebyshev: the given K is verified as it is */
}

static void test_no_answer_and_paper_split(void **state)
{
    (void)state;
    sim_plan_question_t q;
    sim_plan_answer_t a;
    char err[256];
    /* Table 1's '-': K alpha^2 <= 400 at 0.99 leaves M_R no eps */
    question(&q, DPM_DISP_MR, DPM_DISP_SPLIT_PAPER, 0.0005, 0.99, DPM_DISP_BOUND_CHEBYSHEV);
    q.devices = 1e5;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    assert_true(isnan(a.eps) && a.none != NULL);
    assert_int_equal(sim_plan_check(&q, &a, 1, NULL, err, sizeof(err)), 0);
    assert_false(a.checked);
    /* Table 1, M_L opt., K = 1e7, alpha = 0.1 (value scale): 0.21 */
    question(&q, DPM_DISP_ML, DPM_DISP_SPLIT_PAPER, 0.05, 0.99, DPM_DISP_BOUND_CHEBYSHEV);
    q.devices = 1e7;
    q.runs = 400;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    assert_true(fabs(a.eps - 0.213885) < 5e-6);
    assert_int_equal(sim_plan_check(&q, &a, 2, NULL, err, sizeof(err)), 0);
    assert_true(a.checked && a.search.found);
    /* the SDK split beyond a campaign's eps (Table 1 under the correct split: 178.89): the
     * estimator's mirror answers, the check says it cannot run it */
    question(&q, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 0.0005, 0.99, DPM_DISP_BOUND_CHEBYSHEV);
    q.devices = 1e5;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    assert_true(fabs(a.eps - 178.89) < 0.01);
    assert_int_equal(sim_plan_check(&q, &a, 3, NULL, err, sizeof(err)), 0);
    assert_false(a.checked);
    /* two metrics have no such mirror: no campaign eps, said so */
    q.nmetrics = 2;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    assert_non_null(a.none);
}

static double tuple_devices_at(double eps, double *eps_campaign)
{
    sim_plan_question_t q;
    sim_plan_answer_t a;
    question(&q, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.01, 0.9, DPM_DISP_BOUND_CHEBYSHEV);
    q.eps = eps;
    if (sim_plan_solve(&q, &a) != 0) {
        return NAN;
    }
    *eps_campaign = a.eps_campaign;
    return a.devices;
}

static void test_plans_at_the_campaigns_eps(void **state)
{
    (void)state;
    double ec = 0.0, step = 100.0 / 65536.0, above = step + 1.0 / 1048576.0;
    assert_true(isnan(tuple_devices_at(1e-9, &ec))); /* rounds to 0: refused, not planned */
    double k_above = tuple_devices_at(above, &ec);
    assert_true(ec == step);
    double k_step = tuple_devices_at(step, &ec);
    assert_true(k_above == k_step);
    /* planned at the unrounded eps it would promise too few devices */
    double k_next = tuple_devices_at(101.0 / 65536.0, &ec);
    print_message("# tuple_mr: K %.0f at 100 2^-16 (+ 2^-20 given), %.0f at 101 2^-16\n", k_step,
                  k_next);
    assert_true(k_next < k_step);
    /* a campaign the SDK refuses is not planned: tuple_ml at 100 2^-16 has no Laplace scale
     * within its int32 headroom (it used to be planned all the same) */
    sim_plan_question_t q;
    sim_plan_answer_t a;
    question(&q, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 0.01, 0.9, DPM_DISP_BOUND_CHEBYSHEV);
    q.eps = step;
    assert_int_equal(sim_plan_solve(&q, &a), -1);
    assert_non_null(a.none);
    assert_non_null(strstr(a.none, "too small"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans_at_the_campaigns_eps),
        cmocka_unit_test(test_eps_for_devices_round_trip),
        cmocka_unit_test(test_metrics_per_report_sd),
        cmocka_unit_test(test_metrics_answers),
        cmocka_unit_test(test_search_adds_devices),
        cmocka_unit_test(test_no_answer_and_paper_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
