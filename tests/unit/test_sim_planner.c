/* SPDX-License-Identifier: Apache-2.0 */
/* The planner round trip: the analytic answer (minimum eps for K devices, or minimum devices
 * for eps) is consistent both ways and survives the simulation check; with the normal bound the
 * simulated coverage sits at the requested confidence and the strict verdict says PASS exactly
 * when the observed coverage reaches it (92.5% against 95% is a FAIL), and a campaign run with
 * too small an eps fails the check (the check can fail). A given eps is planned at the Q16.16 a
 * campaign carries (rounded down by the SDK's parser): 1e-9 is refused, an eps just above a step
 * plans like the step. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/plan_tuple.h"

static void question(sim_plan_question_t *q, dpm_disp_mech_t mech, dpm_disp_split_t split,
                     double error_metric, double confidence, dpm_disp_bound_t bound)
{
    memset(q, 0, sizeof(*q));
    assert_int_equal(dpm_disp_plan_init(&q->plan, mech, split, 2.0 * error_metric, confidence),
                     DPM_OK);
    q->plan.bound = bound;
    q->error = error_metric;
    q->scale_metric = 1;
}

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
    /* the other direction: at the campaign eps of that answer (the smallest Q16.16 at or above
     * it), K devices (or a few fewer) suffice */
    sim_plan_question_t q2 = q;
    q2.devices = 0.0;
    q2.eps = a.eps_campaign;
    assert_int_equal(sim_plan_solve(&q2, &back), 0);
    assert_true(back.devices <= 1e6 && back.devices > 0.99e6);
    assert_int_equal(sim_plan_check(&q, &a, 200, 11, err, sizeof(err)), 0);
    print_message("# tuple_mr K=1e6: eps %.6f, %u/%u within, p = %.3g\n", a.eps, a.within, a.runs,
                  a.p_value);
    assert_true(a.checked && a.pass);
}

static void test_devices_for_eps(void **state)
{
    (void)state;
    sim_plan_question_t q;
    sim_plan_answer_t a;
    char err[256];
    question(&q, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 0.01, 0.9, DPM_DISP_BOUND_CHEBYSHEV);
    q.eps = 1.0;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    assert_true(isfinite(a.devices) && a.devices > 1e5);
    a.eps_campaign = 1.0;
    assert_int_equal(sim_plan_check(&q, &a, 200, 12, err, sizeof(err)), 0);
    assert_true(a.checked && a.pass);
}

/* The normal bound is tight: coverage near c; with 0.6 of the planned eps it falls far below. */
static void test_normal_bound_calibrated_and_check_can_fail(void **state)
{
    (void)state;
    sim_plan_question_t q;
    sim_plan_answer_t a;
    char err[256];
    question(&q, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.02, 0.9, DPM_DISP_BOUND_NORMAL);
    q.devices = 200000;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    assert_int_equal(sim_plan_check(&q, &a, 1000, 13, err, sizeof(err)), 0);
    double cov = (double)a.within / a.runs, se = sqrt(0.9 * 0.1 / a.runs);
    print_message("# normal bound: coverage %.3f (target 0.9), %s\n", cov,
                  a.pass ? "PASS" : "FAIL");
    assert_true(fabs(cov - 0.9) < 5.0 * se);
    assert_int_equal(a.pass, a.within >= 900); /* strict: met or not */
    /* the verdict itself: 185/200 against 95% fails, 190/200 passes */
    double p = 0.0;
    assert_false(sim_plan_verdict(185, 200, 0.95, &p));
    assert_true(p > 0.01 && p < 0.2); /* a shortfall that small is plausible by chance */
    assert_true(sim_plan_verdict(190, 200, 0.95, &p));
    assert_false(sim_plan_verdict(0, 0, 0.95, &p));
    a.eps_campaign = floor(0.6 * a.eps * 65536.0) / 65536.0;
    assert_int_equal(sim_plan_check(&q, &a, 1000, 14, err, sizeof(err)), 0);
    print_message("# at 0.6 eps: coverage %.3f, p = %.3g\n", (double)a.within / a.runs, a.p_value);
    assert_true(a.checked && !a.pass);
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
    assert_true(isnan(a.eps));
    assert_int_equal(sim_plan_check(&q, &a, 50, 1, err, sizeof(err)), 0);
    assert_false(a.checked);
    /* Table 1, M_L opt., K = 1e7, alpha = 0.1 (value scale): 0.21 */
    question(&q, DPM_DISP_ML, DPM_DISP_SPLIT_PAPER, 0.05, 0.99, DPM_DISP_BOUND_CHEBYSHEV);
    q.devices = 1e7;
    assert_int_equal(sim_plan_solve(&q, &a), 0);
    assert_true(fabs(a.eps - 0.213885) < 5e-6);
    assert_int_equal(sim_plan_check(&q, &a, 100, 2, err, sizeof(err)), 0);
    assert_true(a.checked && a.pass);
}

static double tuple_devices_at(double eps, double *eps_campaign)
{
    sim_plan_question_t q;
    sim_plan_answer_t a;
    question(&q, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 0.01, 0.9, DPM_DISP_BOUND_CHEBYSHEV);
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
    print_message("# tuple_ml: K %.0f at 100 2^-16 (+ 2^-20 given), %.0f at 101 2^-16\n", k_step,
                  k_next);
    assert_true(k_next < k_step);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans_at_the_campaigns_eps),
        cmocka_unit_test(test_eps_for_devices_round_trip),
        cmocka_unit_test(test_devices_for_eps),
        cmocka_unit_test(test_normal_bound_calibrated_and_check_can_fail),
        cmocka_unit_test(test_no_answer_and_paper_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
