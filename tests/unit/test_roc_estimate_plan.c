/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist planner (sim/planner.h): the two questions answer each other (the eps planned
 * for K devices gives back about K devices), the answer's predicted sd sits on the bound, the
 * simulation check passes at the answer, and the check fails for a campaign run at a third of
 * the planned eps (the check can fail). Fixed seeds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/planner.h"

static void question(sim_roc_plan_t *q)
{
    memset(q, 0, sizeof(*q));
    q->auc = 0.8;
    q->base_rate = 0.25;
    q->examples = 20;
    q->bins = 8;
    q->error = 0.01;
    q->confidence = 0.9;
}

static void test_round_trip_and_check(void **state)
{
    (void)state;
    sim_roc_plan_t q;
    sim_roc_plan_answer_t a, b;
    char err[256];
    question(&q);
    q.devices = 20000;
    assert_int_equal(sim_roc_plan_solve(&q, &a), 0);
    assert_true(a.eps > 0.0 && a.eps_campaign >= a.eps && a.factor > 0.0);
    /* the sd at the (unrounded) answer is exactly on the bound */
    assert_true(fabs(a.sd - q.error / a.k) < 1e-3 * q.error / a.k);
    question(&q);
    q.eps = a.eps_campaign;
    assert_int_equal(sim_roc_plan_solve(&q, &b), 0);
    assert_true(b.devices <= 20000.0 && b.devices > 19900.0);
    assert_int_equal(sim_roc_plan_check(&q, &b, 300, 3, err, sizeof(err)), 0);
    assert_true(b.checked && b.pass);
    assert_true(b.within >= 250); /* about 90% of 300 */
    /* a campaign at a third of the planned eps (same K) misses the target: the check fails */
    b.eps_campaign = ceil(a.eps / 3.0 * 65536.0) / 65536.0;
    assert_int_equal(sim_roc_plan_check(&q, &b, 300, 3, err, sizeof(err)), 0);
    assert_true(b.checked && !b.pass);
}

static void test_bad_questions(void **state)
{
    (void)state;
    sim_roc_plan_t q;
    sim_roc_plan_answer_t a;
    question(&q);
    assert_int_equal(sim_roc_plan_solve(&q, &a), -1); /* neither devices nor eps */
    q.devices = 100;
    q.eps = 1;
    assert_int_equal(sim_roc_plan_solve(&q, &a), -1); /* both */
    question(&q);
    q.eps = 1;
    q.bins = 1;
    assert_int_equal(sim_roc_plan_solve(&q, &a), -1);
    /* Chebyshev asks for more devices than the normal bound */
    question(&q);
    q.eps = 1;
    assert_int_equal(sim_roc_plan_solve(&q, &a), 0);
    double normal = a.devices;
    q.bound_chebyshev = 1;
    assert_int_equal(sim_roc_plan_solve(&q, &a), 0);
    assert_true(a.devices > 2.0 * normal);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_and_check),
        cmocka_unit_test(test_bad_questions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
