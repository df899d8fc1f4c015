/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist planner (sim/plan_roc.h): the two questions answer each other (the eps planned
 * for K devices gives back about K devices), the answer's predicted sd sits on the bound, the
 * simulated coverage sits at the target (the strict verdict says PASS exactly when it reaches
 * it), and the check fails for a campaign run at a third of the planned eps (the check can
 * fail). The model error (against the model's AUC) adds the sampling and the binning: a bias
 * that no eps removes, so it needs more devices, and none at all when the bias alone is too
 * large; its check, each run on its own population, covers the model's AUC. The planner plans at
 * the eps a campaign implements: a given eps rounded DOWN to Q16.16 by the SDK's own parser
 * (1e-9 rounds to 0 and is refused; an eps just above a Q16.16 step plans like the step itself),
 * and the eps text it prints for a campaign reads back to the value it planned. Fixed seeds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/plan_roc.h"
#include "common/prob.h"
#include "dpm/types.h"

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

/* Devices planned for a given eps (noise error), or NaN when the planner refuses it. */
static double devices_at(double eps)
{
    sim_roc_plan_t q;
    sim_roc_plan_answer_t a;
    question(&q);
    q.eps = eps;
    return sim_roc_plan_solve(&q, &a) == 0 ? a.devices : NAN;
}

static void test_plans_at_the_campaigns_eps(void **state)
{
    (void)state;
    sim_roc_plan_t q;
    sim_roc_plan_answer_t a;
    dpm_eps_t e = 0;
    char why[200], text[40];
    /* 1e-9: a campaign rounds it down to 0: refused, with the reason (it used to plan at 2^-16) */
    assert_int_equal(sim_plan_eps_parse("1e-9", &e, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "rounds down to 0"));
    assert_int_equal(sim_plan_eps_parse("0.000000001", &e, why, sizeof(why)), -1);
    question(&q);
    q.eps = 1e-9;
    assert_int_equal(sim_roc_plan_solve(&q, &a), -1);
    assert_non_null(a.none);
    assert_true(isnan(devices_at(1e-9)));
    /* just above a step (3 2^-16 + 2^-20): planned at the step, as the campaign runs it; the
     * next step up (the old rounding) needs far fewer devices */
    double step = 3.0 / 65536.0, above = step + 1.0 / 1048576.0;
    question(&q);
    q.eps = above;
    assert_int_equal(sim_roc_plan_solve(&q, &a), 0);
    assert_true(a.eps_campaign == step);
    assert_true(a.devices == devices_at(step));
    assert_true(a.devices > 1.5 * devices_at(4.0 / 65536.0));
    /* ... and the same from text, through the SDK's parser (exponent and plain forms) */
    assert_int_equal(sim_plan_eps_parse("0.0000467300415039", &e, why, sizeof(why)), 0);
    assert_int_equal(e, 3);
    assert_int_equal(sim_plan_eps_parse("4.67300415039e-5", &e, why, sizeof(why)), 0);
    assert_int_equal(e, 3);
    assert_int_equal(sim_plan_eps_parse("1.5e-3", &e, why, sizeof(why)), 0);
    dpm_eps_t plain = 0;
    assert_int_equal(dpm_eps_from_decimal("0.0015", &plain), DPM_OK);
    assert_int_equal(e, plain);
    assert_int_equal(sim_plan_eps_parse("1E1", &e, why, sizeof(why)), 0);
    assert_int_equal(e, 10u << 16);
    assert_int_equal(sim_plan_eps_parse("1e3", &e, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "above"));
    static const char *const bad[] = {"abc", "-1", "1e", "e5", "0", "1e-x", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(sim_plan_eps_parse(bad[i], &e, why, sizeof(why)), -1);
    }
    /* K given: the campaign eps is the smallest Q16.16 at or above the minimum eps, and its
     * printed text reads back to it exactly */
    question(&q);
    q.devices = 20000;
    assert_int_equal(sim_roc_plan_solve(&q, &a), 0);
    assert_true(a.eps_campaign >= a.eps && a.eps_campaign - a.eps < 1.0 / 65536.0);
    assert_true(a.eps_campaign * 65536.0 == floor(a.eps_campaign * 65536.0));
    for (dpm_eps_t v = 1; v < (3u << 16); v += 7) {
        sim_plan_eps_text(v, text, sizeof(text));
        assert_int_equal(dpm_eps_from_decimal(text, &e), DPM_OK);
        assert_int_equal(e, v);
    }
    sim_plan_eps_text(1, text, sizeof(text));
    assert_string_equal(text, "0.0000152587890625");
    sim_plan_eps_text(2u << 16, text, sizeof(text));
    assert_string_equal(text, "2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans_at_the_campaigns_eps),
        cmocka_unit_test(test_round_trip_and_check),
        cmocka_unit_test(test_model_error),
        cmocka_unit_test(test_bad_questions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
