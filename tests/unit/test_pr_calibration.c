/* SPDX-License-Identifier: Apache-2.0 */
/* Precision-recall, AP and calibration from roc_hist sums (host-sim/estimate/pr_calibration.h)
 * on inputs with known answers: AP and ECE of a small histogram by hand (AP 0.7 is also what
 * scikit-learn's average_precision_score gives for those binned scores, ties as one threshold),
 * the noiseless estimate equal to the exact values, the delta-method noise variances of AP and
 * ECE against numerical derivatives, the sampling variance of AP against a brute-force
 * multinomial simulation, the edges' midpoints, the flags where the sums are too noisy, and
 * argument checks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "estimate/ci_flags.h"
#include "estimate/pr_calibration.h"
#include "sim/pop/sim_rng.h"

static const uint64_t kPos[4] = {1, 2, 3, 4}, kNeg[4] = {4, 3, 2, 1};

static void agg_scaled(dpm_roc_agg_t *a, const uint64_t *pos, const uint64_t *neg, uint32_t bins,
                       int64_t scale, uint64_t reports)
{
    assert_int_equal(dpm_roc_agg_init(a, bins), DPM_OK);
    for (uint32_t b = 0; b < bins; b++) {
        a->pos[b] = (int64_t)pos[b] * scale;
        a->neg[b] = (int64_t)neg[b] * scale;
    }
    a->reports = reports;
}

static void test_by_hand(void **state)
{
    (void)state;
    /* thresholds from the top: precision 4/5, 7/10, 9/15, 10/20 at recall 0.4, 0.7, 0.9, 1 */
    assert_true(fabs(dpm_prc_ap_exact(kPos, kNeg, 4) - 0.7) < 1e-12);
    double w[4] = {0.25, 0.25, 0.25, 0.25};
    /* rates 0.2, 0.4, 0.6, 0.8 against midpoints 1/8, 3/8, 5/8, 7/8, each bin 5 of 20 */
    assert_true(fabs(dpm_prc_ece_exact(kPos, kNeg, w, 4) - 0.05) < 1e-12);
    const uint64_t none[4] = {0, 0, 0, 0};
    assert_true(isnan(dpm_prc_ap_exact(none, kNeg, 4)));
    assert_true(isnan(dpm_prc_ece_exact(kPos, none, w, 4)));
}

static void test_noiseless_is_exact(void **state)
{
    (void)state;
    dpm_roc_params_t p;
    assert_int_equal(dpm_roc_params_init(&p, 4, 0.0), DPM_OK);
    dpm_roc_agg_t a;
    agg_scaled(&a, kPos, kNeg, 4, 1000, 100);
    dpm_prc_estimate_t e;
    assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, &e), DPM_OK);
    assert_true(e.valid);
    assert_true(fabs(e.ap - 0.7) < 1e-12 && e.ap_var_noise == 0.0);
    assert_true(fabs(e.ece - 0.05) < 1e-12 && e.ece_var_noise == 0.0 && e.ece_bound == 0.0);
    const double prec[4] = {0.5, 0.6, 0.7, 0.8}, rec[4] = {1.0, 0.9, 0.7, 0.4};
    for (uint32_t j = 0; j < 4; j++) {
        assert_true(fabs(e.precision[j] - prec[j]) < 1e-12);
        assert_true(fabs(e.recall[j] - rec[j]) < 1e-12);
        assert_true(fabs(e.rate[j] - (0.2 + 0.2 * j)) < 1e-12);
        assert_true(fabs(e.midpoint[j] - (0.125 + 0.25 * j)) < 1e-12);
        assert_true(e.precision_lo[j] == e.precision[j] && e.precision_hi[j] == e.precision[j]);
    }
    /* sampling still widens the interval around the model's AP */
    assert_true(e.ap_var_sampling > 0.0 && e.ap_ci_total_lo < 0.7 && e.ap_ci_total_hi > 0.7);
    assert_int_equal(e.ap_flags, 0);
}

/* AP or ECE of (possibly noised) double sums, through the estimator (central DP params: the
 * variance does not depend on reports) */
static double value_of(const dpm_roc_params_t *p, const int64_t *pos, const int64_t *neg, int ece)
{
    dpm_roc_agg_t a;
    assert_int_equal(dpm_roc_agg_init(&a, p->bins), DPM_OK);
    memcpy(a.pos, pos, p->bins * sizeof(int64_t));
    memcpy(a.neg, neg, p->bins * sizeof(int64_t));
    a.reports = 1;
    dpm_prc_estimate_t e;
    assert_int_equal(dpm_prc_estimate(p, &a, 0.95, &e), DPM_OK);
    return ece ? e.ece : e.ap_raw;
}

static void test_noise_variance_matches_numerical_derivatives(void **state)
{
    (void)state;
    enum { B = 6 };
    const int64_t pos0[B] = {300000, 500000, 900000, 1400000, 2100000, 2600000};
    const int64_t neg0[B] = {3100000, 2400000, 1500000, 900000, 500000, 150000};
    dpm_roc_params_t p;
    assert_int_equal(dpm_roc_params_init_central(&p, B, 2.0, 1), DPM_OK);
    for (int ece = 0; ece < 2; ece++) {
        double g2 = 0.0;
        for (int cls = 0; cls < 2; cls++) {
            for (uint32_t b = 0; b < B; b++) {
                int64_t pos[B], neg[B];
                memcpy(pos, pos0, sizeof(pos));
                memcpy(neg, neg0, sizeof(neg));
                int64_t *cell = cls ? &neg[b] : &pos[b];
                const int64_t h = 1000;
                *cell += h;
                double up = value_of(&p, pos, neg, ece);
                *cell -= 2 * h;
                double down = value_of(&p, pos, neg, ece);
                double g = (up - down) / (2.0 * (double)h);
                g2 += g * g;
            }
        }
        dpm_roc_agg_t a;
        assert_int_equal(dpm_roc_agg_init(&a, B), DPM_OK);
        memcpy(a.pos, pos0, sizeof(pos0));
        memcpy(a.neg, neg0, sizeof(neg0));
        dpm_prc_estimate_t e;
        assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, &e), DPM_OK);
        double var = ece ? e.ece_var_noise : e.ap_var_noise, want = p.noise_var * g2;
        assert_true(fabs(var - want) < 1e-6 * want);
    }
}

/* The multinomial delta method against the spread of AP over many multinomial samples. */
static void test_ap_sampling_variance(void **state)
{
    (void)state;
    enum { B = 5, RUNS = 4000 };
    const double prob[2 * B] = {0.02, 0.04, 0.07, 0.1, 0.17, 0.25, 0.18, 0.1, 0.05, 0.02};
    const uint64_t M = 4000;
    sim_rng_t rng;
    sim_rng_init(&rng, 17);
    double sum = 0.0, sq = 0.0, var_model = 0.0;
    for (int r = 0; r < RUNS; r++) {
        uint64_t pos[B] = {0}, neg[B] = {0};
        for (uint64_t i = 0; i < M; i++) {
            double u = sim_rng_unit(&rng), acc = 0.0;
            for (uint32_t c = 0; c < 2 * B; c++) {
                acc += prob[c];
                if (u < acc || c == 2 * B - 1) {
                    (c < B ? pos : neg)[c % B]++;
                    break;
                }
            }
        }
        double ap = dpm_prc_ap_exact(pos, neg, B);
        sum += ap;
        sq += ap * ap;
        if (r == 0) {
            dpm_roc_params_t p;
            assert_int_equal(dpm_roc_params_init(&p, B, 0.0), DPM_OK);
            dpm_roc_agg_t a;
            agg_scaled(&a, pos, neg, B, 1, 1);
            dpm_prc_estimate_t e;
            assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, &e), DPM_OK);
            var_model = e.ap_var_sampling;
        }
    }
    double mean = sum / RUNS, var = sq / RUNS - mean * mean;
    print_message("# AP sampling variance: delta %.4g, simulated %.4g\n", var_model, var);
    /* the simulated variance of 4000 runs is within 10 % w.p. ~1 - 1e-5; the delta method's
     * from one sample within a few % more */
    assert_true(fabs(var_model / var - 1.0) < 0.15);
}

static void test_too_noisy_is_flagged(void **state)
{
    (void)state;
    dpm_roc_params_t p;
    assert_int_equal(dpm_roc_params_init(&p, 4, 2.0), DPM_OK); /* eps = 1 */
    dpm_roc_agg_t a;
    agg_scaled(&a, kPos, kNeg, 4, 10, 1000); /* 100 examples against noise sd ~ 90 per cell */
    a.pos[3] = -5;
    a.neg[3] = -7; /* the top threshold: nothing predicted positive */
    dpm_prc_estimate_t e;
    assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, &e), DPM_OK);
    assert_true(e.valid);
    assert_true(isnan(e.precision[3]) && (e.precision_flags[3] & DPM_CI_SMALL_N));
    assert_true(e.precision_flags[2] & DPM_CI_CLASS_NOISE);
    assert_true(e.ap_flags & DPM_CI_CLASS_NOISE);
    assert_true(e.ece_flags & (DPM_CI_ABS_BIAS | DPM_CI_CLASS_NOISE));
    assert_true(isnan(e.rate[3]) && e.rate_lo[2] == 0.0 && e.rate_hi[2] == 1.0);
    agg_scaled(&a, kPos, kNeg, 4, 0, 10);
    assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, &e), DPM_OK);
    assert_false(e.valid);
}

static void test_edges_give_midpoints(void **state)
{
    (void)state;
    dpm_roc_params_t p;
    assert_int_equal(dpm_roc_params_init(&p, 3, 0.0), DPM_OK);
    const uint32_t edges[2] = {1u << 30, 3u << 29}; /* 0.5, 0.75 */
    assert_int_equal(dpm_roc_params_set_edges(&p, edges, 2), DPM_OK);
    dpm_roc_agg_t a;
    agg_scaled(&a, kPos, kNeg, 3, 1, 10);
    dpm_prc_estimate_t e;
    assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, &e), DPM_OK);
    assert_true(fabs(e.midpoint[0] - 0.25) < 1e-9 && fabs(e.midpoint[1] - 0.625) < 1e-9 &&
                fabs(e.midpoint[2] - 0.875) < 1e-9);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    dpm_roc_params_t p;
    assert_int_equal(dpm_roc_params_init(&p, 4, 2.0), DPM_OK);
    dpm_roc_agg_t a;
    agg_scaled(&a, kPos, kNeg, 4, 1, 1);
    dpm_prc_estimate_t e;
    assert_int_equal(dpm_prc_estimate(NULL, &a, 0.95, &e), DPM_ERR_PARAM);
    assert_int_equal(dpm_prc_estimate(&p, &a, 1.0, &e), DPM_ERR_PARAM);
    assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, NULL), DPM_ERR_PARAM);
    a.bins = 5;
    assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, &e), DPM_ERR_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_noiseless_is_exact),
        cmocka_unit_test(test_noise_variance_matches_numerical_derivatives),
        cmocka_unit_test(test_ap_sampling_variance),
        cmocka_unit_test(test_too_noisy_is_flagged),
        cmocka_unit_test(test_edges_give_midpoints),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("pr_calibration", tests, NULL, NULL);
}
