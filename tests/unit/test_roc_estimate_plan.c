/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist planner (sim/plan/plan_roc.h): the two questions answer each other (the eps planned
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
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/plan/plan_roc.h"
#include "sim/plan/plan_rocg.h"
#include "common/prob.h"
#include "dpm/types.h"
#include "stat_gof.h"

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
    /* the margin: a larger eps for the check, with a smaller predicted sd */
    assert_true(a.design_eps > a.eps_campaign && a.sd_design_max < a.sd_max);
    question(&q);
    q.eps = a.eps_campaign;
    assert_int_equal(sim_roc_plan_solve(&q, &b), 0);
    assert_true(b.devices <= 20000.0 && b.devices > 19900.0);
    assert_true(b.design_devices > b.devices);
    assert_int_equal(sim_roc_plan_check(&q, &b, 3, NULL, err, sizeof(err)), 0);
    assert_true(b.checked && b.search.found && b.search.step[0].verified);
    /* at the bound's own K the coverage sits at the target (not shown above it) */
    uint32_t within = 0;
    double truth, sq;
    assert_int_equal(sim_roc_plan_check_at(&q, b.devices, b.eps_campaign, 300, 3, &within, &truth,
                                           &sq, err, sizeof(err)),
                     0);
    assert_true(coverage_plausible(within, 300, 0.9)); /* about 90% of 300 */
    /* a campaign at a third of the planned eps (same K) misses the target: the first check is
     * refuted and the search finds the devices to add */
    b.design_eps = ceil(b.eps_campaign / 3.0 * 65536.0) / 65536.0;
    assert_int_equal(sim_roc_plan_check(&q, &b, 4, NULL, err, sizeof(err)), 0);
    print_message("# roc_hist at a third of the eps: %u checks, %.0f -> %.0f devices\n",
                  b.search.nsteps, b.search.step[0].devices, b.search.devices);
    assert_true(b.checked && b.search.step[0].refuted && b.search.found);
    assert_true(b.search.devices > 3.0 * b.design_devices);
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
    /* the check (each run on a population of its own: 120 runs, 0.015 keep it short) */
    q.error = 0.015;
    q.runs = 120;
    assert_int_equal(sim_roc_plan_solve(&q, &model), 0);
    assert_int_equal(sim_roc_plan_check(&q, &model, 5, NULL, err, sizeof(err)), 0);
    assert_true(model.checked && model.search.found);
    q.error = 0.01;
    assert_true(fabs(model.truth - q.auc) < 1e-12); /* against the model's AUC */
    /* 2 bins: the binning bias alone exceeds a 0.01 error: no answer */
    q.bins = 2;
    assert_int_equal(sim_roc_plan_solve(&q, &model), 0);
    assert_non_null(model.none);
    assert_true(isnan(model.devices));
}

/* The band a root mean square of `runs` errors stays in around the true sd (mean 0 known), at
 * alpha 1e-6 two-sided, widened by tol for what the model leaves out. */
static void rms_band(uint32_t runs, double tol, double *lo, double *hi)
{
    *lo = sqrt(stat_chi2_isf(1.0 - 5e-7, runs) / runs) * (1.0 - tol);
    *hi = sqrt(stat_chi2_isf(5e-7, runs) / runs) * (1.0 + tol);
}

/* The predicted sd against simulation on populations the planner was not tuned for (a weak
 * model with a low base rate and few examples, a strong one with many; small and large eps; a
 * few bins): noise error over one population, model error (sampling and binning in) over a
 * population per run. Tolerance: the chi-square band at alpha 1e-6 and 5 % for the expected
 * population standing in for the realized one. */
static void test_sd_untuned(void **state)
{
    (void)state;
    static const struct {
        double auc, base_rate;
        uint32_t examples, bins;
        double eps, devices;
        sim_roc_error_t kind;
        uint32_t runs;
    } cases[] = {
        {0.7, 0.1, 15, 6, 0.5, 20000, SIM_ROC_ERROR_NOISE, 300},
        {0.93, 0.45, 60, 12, 6.0, 3000, SIM_ROC_ERROR_NOISE, 300},
        {0.7, 0.1, 15, 6, 4.0, 2000, SIM_ROC_ERROR_MODEL, 150},
        {0.93, 0.45, 60, 4, 0.25, 4000, SIM_ROC_ERROR_MODEL, 150},
    };
    char err[256];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_roc_plan_t q;
        sim_roc_plan_answer_t a;
        question(&q);
        q.auc = cases[i].auc;
        q.base_rate = cases[i].base_rate;
        q.examples = cases[i].examples;
        q.bins = cases[i].bins;
        q.kind = cases[i].kind;
        q.error = 0.5; /* any: the sd is what is compared */
        q.eps = cases[i].eps;
        assert_int_equal(sim_roc_plan_solve(&q, &a), 0);
        double eps = sim_plan_eps_down(cases[i].eps);
        double sd = sim_roc_plan_sd(&q, &a, cases[i].devices, eps);
        double pred = sqrt(sd * sd + a.bias * a.bias); /* the rms error, bias in */
        uint32_t within = 0;
        double truth, sq, lo, hi;
        assert_int_equal(sim_roc_plan_check_at(&q, cases[i].devices, eps, cases[i].runs, 40 + i,
                                               &within, &truth, &sq, err, sizeof(err)),
                         0);
        double rms = sqrt(sq / cases[i].runs);
        rms_band(cases[i].runs, 0.05, &lo, &hi);
        print_message("# roc_hist auc %.2f base %.2f E %u B %u eps %g K %.0f %s: rms error %.5f, "
                      "planned %.5f (ratio %.3f, band [%.3f, %.3f])\n",
                      q.auc, q.base_rate, q.examples, q.bins, eps, cases[i].devices,
                      q.kind == SIM_ROC_ERROR_MODEL ? "model" : "noise", rms, pred, rms / pred, lo,
                      hi);
        assert_true(rms / pred >= lo && rms / pred <= hi);
    }
}

/* ---- roc_hist with groups ---------------------------------------------------------------- */

static void groups_question(sim_rocg_plan_t *q, uint32_t groups, const double *share,
                            const double *auc, const double *base)
{
    memset(q, 0, sizeof(*q));
    q->groups = groups;
    memcpy(q->share, share, groups * sizeof(double));
    memcpy(q->auc, auc, groups * sizeof(double));
    memcpy(q->base_rate, base, groups * sizeof(double));
    q->examples = 12;
    q->bins = 6;
    q->error = 0.03;
    q->gap_error = 0.05;
    q->confidence = 0.9;
    q->kind = SIM_ROC_ERROR_NOISE;
}

/* Every group's and gap's predicted sd against simulation, on populations the planner was not
 * tuned for (three groups of unequal shares, models and base rates; two groups with a quarter of
 * eps on the group); tolerance: the chi-square band at alpha 1e-6 and 5 % for the delta method
 * and the expected population. Negative control: planning each group as a roc_hist of its own
 * devices (no GRR: what a reader would do without this planner) promises the small group a sd
 * far too small. */
static void test_groups_sd_untuned(void **state)
{
    (void)state;
    static const double share3[3] = {0.6, 0.3, 0.1}, auc3[3] = {0.9, 0.75, 0.8},
                        base3[3] = {0.2, 0.4, 0.3};
    static const double share2[2] = {0.8, 0.2}, auc2[2] = {0.85, 0.7}, base2[2] = {0.5, 0.15};
    char err[256];
    for (int c = 0; c < 2; c++) {
        sim_rocg_plan_t q;
        sim_rocg_plan_answer_t *a = malloc(sizeof(*a));
        assert_non_null(a);
        if (c == 0) {
            groups_question(&q, 3, share3, auc3, base3);
            q.eps = 3.0;
            q.devices = 20000;
        } else {
            groups_question(&q, 2, share2, auc2, base2);
            q.examples = 30;
            q.bins = 10;
            q.group_share = 0.25;
            q.eps = 8.0;
            q.devices = 4000;
        }
        uint32_t runs = 200, within[SIM_ROCG_MAX_ITEMS];
        double sq[SIM_ROCG_MAX_ITEMS], lo, hi;
        assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
        assert_true(a->evaluate && a->none == NULL);
        assert_int_equal(
            sim_rocg_plan_check_at(&q, a, q.devices, runs, 60 + c, within, sq, err, sizeof(err)),
            0);
        rms_band(runs, 0.05, &lo, &hi);
        for (uint32_t i = 0; i < a->nitems; i++) {
            const sim_rocg_item_t *it = &a->item[i];
            double rms = sqrt(sq[i] / runs);
            print_message("# groups %u, eps %g, K %.0f: %s rms error %.5f, planned sd %.5f "
                          "(ratio %.3f, band [%.3f, %.3f]), count cv %.3f\n",
                          q.groups, q.eps, q.devices, it->name, rms, it->sd, rms / it->sd, lo, hi,
                          it->count_cv);
            assert_true(rms / it->sd >= lo && rms / it->sd <= hi);
            if (!it->gap && q.share[it->g] <= 0.2) { /* negative control, the small group */
                sim_roc_plan_t one;
                sim_roc_plan_answer_t oa;
                question(&one);
                one.auc = q.auc[it->g];
                one.base_rate = q.base_rate[it->g];
                one.examples = q.examples;
                one.bins = q.bins;
                one.eps = a->eps_campaign - a->group_eps_campaign; /* the histogram's */
                assert_int_equal(sim_roc_plan_solve(&one, &oa), 0);
                double naive = sim_roc_plan_sd(&one, &oa, q.devices * q.share[it->g],
                                               a->eps_campaign - a->group_eps_campaign);
                print_message("#   %s planned as its own roc_hist: sd %.5f (ratio %.3f)\n",
                              it->name, naive, rms / naive);
                assert_true(rms / naive > hi);
            }
        }
        free(a);
    }
}

/* The groups planner's answers: given eps the K that is verified, given K the eps; the issue's
 * four groups at eps 1 and 200,000 devices: only the 65 % group's AUC is usable. */
static void test_groups_answers(void **state)
{
    (void)state;
    static const double share[2] = {0.7, 0.3}, auc[2] = {0.8, 0.8}, base[2] = {0.3, 0.3};
    char err[256];
    sim_rocg_plan_t q;
    sim_rocg_plan_answer_t *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_non_null(a);
    assert_non_null(b);
    groups_question(&q, 2, share, auc, base);
    q.eps = 4.0;
    assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
    assert_true(a->none == NULL && a->nitems == 3 && a->design_devices > a->devices);
    /* the smallest group binds: its K alone is the answer's, the big one needs fewer */
    assert_true(a->item[1].devices_alone == a->devices || a->item[2].devices_alone == a->devices);
    assert_true(a->item[0].devices_alone < a->devices);
    assert_int_equal(sim_rocg_plan_check(&q, a, 9, NULL, err, sizeof(err)), 0);
    print_message("# groups 0.7/0.3 eps 4: K %.0f, design %.0f, verified %.0f in %u checks\n",
                  a->devices, a->design_devices, a->search.devices, a->search.nsteps);
    assert_true(a->checked && a->search.found);
    /* given that K: an eps at or below 4 */
    q.eps = 0.0;
    q.devices = a->devices;
    assert_int_equal(sim_rocg_plan_solve(&q, b), 0);
    assert_true(b->none == NULL && b->eps_campaign <= 4.0 && b->eps_campaign > 3.5);
    /* the case (analytic only) */
    static const double s4[4] = {0.65, 0.2, 0.1, 0.05}, a4[4] = {0.85, 0.85, 0.85, 0.85},
                        b4[4] = {0.3, 0.3, 0.3, 0.3};
    groups_question(&q, 4, s4, a4, b4);
    q.examples = 40;
    q.bins = 10;
    q.error = 0.02;
    q.gap_error = 0.0;
    q.eps = 1.0;
    q.devices = 200000;
    assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
    assert_true(a->nitems == 4 && a->item[0].meets);
    /* its 5 % group is in the delta method's low-SNR regime (simulated error 1.33x the planned
     * sd, plan_rocg.h): flagged; the 65 % group is not */
    assert_true(a->item[3].count_cv > SIM_ROCG_LOW_SNR && a->item[0].count_cv < 0.05);
    for (uint32_t g = 1; g < 4; g++) {
        assert_false(a->item[g].meets);
        assert_true(a->item[g].sd > a->item[g - 1].sd);
    }
    /* bad questions */
    q.share[0] = 0.5; /* no longer sums to 1 */
    assert_int_equal(sim_rocg_plan_solve(&q, a), -1);
    free(a);
    free(b);
}

/* The two-aggregator planner (plan_rocg.h: noise v_noise2 / K², sampling v_sampling / K): every
 * item's predicted sd against simulation (roc_hist_2agg in exact mode) on populations it was not
 * tuned for, noise error over one population and model error over a population per run, in the
 * chi-square band at alpha 1e-6 widened 5 %. Negative control: the same prediction with one
 * aggregator's noise (half the noise variance) falls outside the band for the noise error.
 * Answers: at the same eps and target, two aggregators need far fewer devices than local DP,
 * given K a smaller eps, and the find-K check verifies the two-aggregator answer. */
static void test_groups_two_aggregators(void **state)
{
    (void)state;
    static const double share3[3] = {0.55, 0.3, 0.15}, auc3[3] = {0.88, 0.7, 0.78},
                        base3[3] = {0.25, 0.1, 0.4};
    static const double share2[2] = {0.75, 0.25}, auc2[2] = {0.8, 0.72}, base2[2] = {0.2, 0.5};
    char err[256];
    sim_rocg_plan_answer_t *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_true(a != NULL && b != NULL);
    for (int c = 0; c < 2; c++) {
        sim_rocg_plan_t q;
        if (c == 0) {
            groups_question(&q, 3, share3, auc3, base3);
            q.eps = 0.5;
            q.devices = 20000;
        } else {
            groups_question(&q, 2, share2, auc2, base2);
            q.examples = 25;
            q.bins = 10;
            q.eps = 4.0;
            q.devices = 3000;
            q.kind = SIM_ROC_ERROR_MODEL;
        }
        q.two_aggregators = 1;
        uint32_t runs = c == 0 ? 300 : 150, within[SIM_ROCG_MAX_ITEMS];
        double sq[SIM_ROCG_MAX_ITEMS], lo, hi;
        assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
        assert_true(a->evaluate && a->none == NULL && isnan(a->group_eps_campaign));
        assert_int_equal(
            sim_rocg_plan_check_at(&q, a, q.devices, runs, 80 + c, within, sq, err, sizeof(err)),
            0);
        rms_band(runs, 0.05, &lo, &hi);
        for (uint32_t i = 0; i < a->nitems; i++) {
            const sim_rocg_item_t *it = &a->item[i];
            assert_true(it->v_noise == 0.0 && it->v_noise2 > 0.0);
            double rms = sqrt(sq[i] / runs), pred = sqrt(it->sd * it->sd + it->bias * it->bias);
            double one = sqrt(it->v_sampling / q.devices +
                              0.5 * it->v_noise2 / (q.devices * q.devices) + it->bias * it->bias);
            print_message("# two aggregators, groups %u, eps %g, K %.0f, %s: %s rms error %.5f, "
                          "planned %.5f (ratio %.3f, band [%.3f, %.3f]); one aggregator's noise "
                          "%.5f (%.3f)\n",
                          q.groups, q.eps, q.devices, c == 0 ? "noise" : "model", it->name, rms,
                          pred, rms / pred, lo, hi, one, rms / one);
            assert_true(rms / pred >= lo && rms / pred <= hi);
            if (c == 0) {
                assert_true(rms / one > hi); /* the control */
            }
        }
    }
    /* answers beside local DP's: the same question, both trust models */
    sim_rocg_plan_t q;
    groups_question(&q, 3, share3, auc3, base3);
    q.kind = SIM_ROC_ERROR_MODEL;
    q.eps = 1.0;
    q.runs = 200;
    assert_int_equal(sim_rocg_plan_solve(&q, a), 0); /* local DP */
    q.two_aggregators = 1;
    assert_int_equal(sim_rocg_plan_solve(&q, b), 0);
    print_message("# eps 1, 3 groups: local DP K %.0f, two aggregators K %.0f\n", a->devices,
                  b->devices);
    assert_true(a->none == NULL && b->none == NULL && b->devices * 20.0 < a->devices);
    assert_int_equal(sim_rocg_plan_check(&q, b, 11, NULL, err, sizeof(err)), 0);
    print_message("# two aggregators: K %.0f, design %.0f, verified %.0f in %u checks\n",
                  b->devices, b->design_devices, b->search.devices, b->search.nsteps);
    assert_true(b->checked && b->search.found);
    double k = b->devices;
    q.eps = 0.0;
    q.devices = k; /* given that K: eps at or below 1 for two aggregators, far above for local */
    assert_int_equal(sim_rocg_plan_solve(&q, b), 0);
    q.two_aggregators = 0;
    assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
    print_message("# K %.0f: two aggregators eps %g, local DP eps %g\n", k, b->eps_campaign,
                  a->eps_campaign);
    assert_true(b->none == NULL && b->eps_campaign <= 1.0 && b->eps_campaign > 0.8);
    assert_true(a->none != NULL || a->eps_campaign > 4.0 * b->eps_campaign);
    /* a device holding more than a Prio3 entry's 255 examples: refused with the reason */
    q.two_aggregators = 1;
    q.examples = 300;
    assert_int_equal(sim_rocg_plan_solve(&q, b), -1);
    assert_non_null(strstr(b->none, "255"));
    free(a);
    free(b);
}

/* The two aggregators with each aggregator's discrete Gaussian (delta > 0, plan_rocg.h). sigma2
 * computed here independently, as a DAP task's (rho a hair below the (eps, delta) inverse,
 * rounded down to k / 2^32, sigma2 = ceil(l2sq 2^32 / (2 k)), l2sq = 2 m²), and the eps a device
 * is charged (the rho sigma2 gives, its (eps, delta)-DP rounded up to Q16.16). Every item's
 * predicted sd against simulation (the check's own campaign, noise error, one population) in
 * the chi-square band; control: the Laplace plan's sd at the same eps is far below the simulated
 * error (the check simulates the Gaussian, about 10x Laplace's variance here). At eps 1, delta
 * 1e-9 the Gaussian needs MORE devices than Laplace: its sigma2 is about 10.6 times Laplace's
 * 2 t² (one release: zCDP pays off under composition, not here), and K grows as the noise sd
 * where noise dominates, so between 2 and sqrt(10.6) times as many (sampling does not grow).
 * Given that K, the eps search finds an eps at most 1 whose Q16.16 predecessor misses an item.
 * The check names the Gaussian campaign and charges the plan's eps. Refusals: delta for local
 * DP, delta above 1e-5. */
static void test_groups_two_aggregators_gauss(void **state)
{
    (void)state;
    static const double share3[3] = {0.55, 0.3, 0.15}, auc3[3] = {0.88, 0.7, 0.78},
                        base3[3] = {0.25, 0.1, 0.4};
    char err[256];
    sim_rocg_plan_answer_t *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_true(a != NULL && b != NULL);
    sim_rocg_plan_t q;
    groups_question(&q, 3, share3, auc3, base3);
    q.two_aggregators = 1;
    q.delta = 1e-9;
    q.eps = 1.0;
    q.devices = 20000;
    assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
    assert_true(a->evaluate && a->none == NULL);
    const double ln = log(1.0 / q.delta), r = sqrt(q.eps + ln) - sqrt(ln);
    const uint64_t l2sq = 2u * (uint64_t)q.examples * q.examples;
    const uint64_t k = (uint64_t)floor(r * r * (1.0 - 1e-9) * 4294967296.0);
    const uint64_t sigma2 = ((l2sq << 32) + 2u * k - 1u) / (2u * k);
    const double rho = (double)l2sq / (2.0 * (double)sigma2);
    const double charged = ceil((rho + 2.0 * sqrt(rho * ln)) * 65536.0 * (1.0 + 1e-12)) / 65536.0;
    print_message("# gaussian m %u eps 1 delta 1e-9: sigma2 %.0f (independent %llu), charged eps "
                  "%.17g (independent %.17g)\n",
                  q.examples, a->noise_var, (unsigned long long)sigma2, a->eps_charged, charged);
    assert_true(a->noise_var == (double)sigma2 && a->eps_charged == charged && charged <= q.eps);
    q.delta = 0.0; /* the Laplace plan of the same question: the control */
    assert_int_equal(sim_rocg_plan_solve(&q, b), 0);
    q.delta = 1e-9;
    /* the discrete Laplace's variance, 2 t² - 1/6 to a part in 10^6 at t = 2m / eps = 24 */
    const double lap_var = 2.0 * (2.0 * q.examples) * (2.0 * q.examples);
    assert_true(fabs(b->noise_var - lap_var) < 1e-3 * lap_var);
    uint32_t runs = 300, within[SIM_ROCG_MAX_ITEMS];
    double sq[SIM_ROCG_MAX_ITEMS], lo, hi;
    assert_int_equal(
        sim_rocg_plan_check_at(&q, a, q.devices, runs, 90, within, sq, err, sizeof(err)), 0);
    rms_band(runs, 0.05, &lo, &hi);
    for (uint32_t i = 0; i < a->nitems; i++) {
        double rms = sqrt(sq[i] / runs), pred = a->item[i].sd, lap = b->item[i].sd;
        print_message("# gaussian, K %.0f: %s rms error %.5f, planned %.5f (ratio %.3f, band "
                      "[%.3f, %.3f]); planned with Laplace %.5f (%.3f)\n",
                      q.devices, a->item[i].name, rms, pred, rms / pred, lo, hi, lap, rms / lap);
        assert_true(rms / pred >= lo && rms / pred <= hi);
        assert_true(rms / lap > hi); /* the control */
    }
    /* the check names the campaign it simulated: noise = gaussian at this delta, the plan's charge
     */
    q.runs = 200;
    assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
    assert_int_equal(sim_rocg_plan_check(&q, a, 7, NULL, err, sizeof(err)), 0);
    print_message("# the check simulated: %s, charged %.17g\n", a->sim_label, a->sim_eps_charged);
    assert_true(a->checked && strstr(a->sim_label, "delta=1e-09 (gaussian)") != NULL);
    assert_true(a->sim_eps_charged == a->eps_charged);
    /* devices at eps 1: more than Laplace's, by at most the noise sd's ratio */
    q.kind = SIM_ROC_ERROR_MODEL;
    q.devices = 0.0;
    assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
    q.delta = 0.0;
    assert_int_equal(sim_rocg_plan_solve(&q, b), 0);
    q.delta = 1e-9;
    double sd_ratio = sqrt(a->noise_var / b->noise_var);
    print_message("# eps 1, model error: Gaussian K %.0f, Laplace K %.0f (ratio %.3f; noise sd "
                  "ratio %.3f)\n",
                  a->devices, b->devices, a->devices / b->devices, sd_ratio);
    assert_true(a->none == NULL && b->none == NULL);
    assert_true(a->devices > 2.0 * b->devices && a->devices <= sd_ratio * b->devices + 1.0);
    /* given that K: the smallest Q16.16 eps, at most 1; one step less misses an item */
    double kg = a->devices;
    q.eps = 0.0;
    q.devices = kg;
    assert_int_equal(sim_rocg_plan_solve(&q, a), 0);
    print_message("# K %.0f, Gaussian: eps %.17g, charged %.17g\n", kg, a->eps_campaign,
                  a->eps_charged);
    assert_true(a->none == NULL && a->eps_campaign <= 1.0 && a->eps_campaign > 0.9);
    assert_true(a->eps_charged <= a->eps_campaign);
    q.eps = a->eps_campaign - 1.0 / 65536.0;
    assert_int_equal(sim_rocg_plan_solve(&q, b), 0);
    int misses = 0;
    for (uint32_t i = 0; i < b->nitems; i++) {
        misses += !b->item[i].meets;
    }
    assert_true(b->evaluate && misses > 0);
    /* refusals */
    q.two_aggregators = 0;
    assert_int_equal(sim_rocg_plan_solve(&q, a), -1);
    assert_non_null(strstr(a->none, "two aggregators"));
    q.two_aggregators = 1;
    q.delta = 1e-4;
    assert_int_equal(sim_rocg_plan_solve(&q, a), -1);
    free(a);
    free(b);
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
        cmocka_unit_test(test_sd_untuned),
        cmocka_unit_test(test_groups_sd_untuned),
        cmocka_unit_test(test_groups_answers),
        cmocka_unit_test(test_groups_two_aggregators),
        cmocka_unit_test(test_groups_two_aggregators_gauss),
        cmocka_unit_test(test_bad_questions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
