/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist planner (sim/plan_roc.h): the two questions answer each other (the eps planned
 * for K devices gives back about K devices), the answer's predicted sd sits on the bound, the
 * simulated coverage sits at the target (the strict verdict says PASS exactly when it reaches
 * it), and the check fails for a campaign run at a third of the planned eps (the check can
 * fail). The model error (against the model's AUC) adds the sampling and the binning: a bias
 * that no eps removes, so it needs more devices, and none at all when the bias alone is too
 * large; its check, each run on its own population, covers the model's AUC. Fixed seeds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/plan_roc.h"
#include "common/prob.h"

static void question(sim_roc_plan_t *q)
{
    memset(q, 0, sizeof(*q));
    q->auc = 0.8;
    q->base_rate = 0.25;
    q->examples = 20;
    q->bins = 8;
    q->error = 0.01;
    q->confidence = 0.9;
    q->kind = SIM_ROC_ERROR_NOISE;
}

/* The two-sided exact binomial p-value of k of n at q is not tiny. */
static int coverage_plausible(uint32_t k, uint32_t n, double q)
{
    double lo = prob_binom_cdf(k, n, q), hi = k == 0 ? 1.0 : 1.0 - prob_binom_cdf(k - 1, n, q);
    return 2.0 * fmin(lo, hi) >= 1e-6;
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
    assert_true(b.checked && coverage_plausible(b.within, 300, 0.9)); /* about 90% of 300 */
    assert_int_equal(b.pass, b.within >= 270);
    /* a campaign at a third of the planned eps (same K) misses the target: the check fails */
    b.eps_campaign = ceil(a.eps / 3.0 * 65536.0) / 65536.0;
    assert_int_equal(sim_roc_plan_check(&q, &b, 300, 3, err, sizeof(err)), 0);
    assert_true(b.checked && !b.pass);
}

static void test_model_error(void **state)
{
    (void)state;
    sim_roc_plan_t q;
    sim_roc_plan_answer_t noise, model;
    char err[256];
    question(&q);
    q.eps = 1.0;
    assert_int_equal(sim_roc_plan_solve(&q, &noise), 0);
    q.kind = SIM_ROC_ERROR_MODEL;
    assert_int_equal(sim_roc_plan_solve(&q, &model), 0);
    /* binning with ties 1/2 lowers the AUC of a good model; sampling adds variance */
    assert_true(model.bias < 0.0 && model.bias > -0.01);
    assert_true(model.sampling > 0.0 && model.sd_max < noise.sd_max);
    assert_true(model.devices > noise.devices);
    print_message("# model error: bias %.5f, K %.0f (noise only: %.0f)\n", model.bias,
                  model.devices, noise.devices);
    assert_int_equal(sim_roc_plan_check(&q, &model, 200, 5, err, sizeof(err)), 0);
    assert_true(model.checked && coverage_plausible(model.within, 200, 0.9));
    assert_true(fabs(model.truth - q.auc) < 1e-12); /* against the model's AUC */
    /* 2 bins: the binning bias alone exceeds a 0.01 error: no answer */
    q.bins = 2;
    assert_int_equal(sim_roc_plan_solve(&q, &model), 0);
    assert_non_null(model.none);
    assert_true(isnan(model.devices));
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
        cmocka_unit_test(test_model_error),
        cmocka_unit_test(test_bad_questions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
