/* SPDX-License-Identifier: Apache-2.0 */
/* dpauc end to end through the SDK, the FHAUC setting: 15 parties holding a fixed population of
 * 10^5 binormal examples (AUC about 0.745, balanced classes), N = 25 linspace thresholds, ε = 1,
 * both calibrations; every run re-noises every party's counts. Over R runs:
 *   - every summed count is unbiased: its z-score against the truth, with the known noise
 *     variance (15 R s²), stays inside the two-sided 1e-6 Bonferroni bound over the 4N counts;
 *   - server B's AUC (unclamped rates): |mean - truth| <= 5 se at this size (the class totals are
 *     about 50 noise sds from 0), truth = the Eq. 2 AUC of the noiseless counts;
 *   - the tight calibration's spread is about half the published one's (noise scale 2N/ε vs 4N/ε).
 * Negative control: server A (Sun et al.'s clamp and sort) at small n (10^3 examples) is biased
 * towards 1/2 and the same check rejects it. Printed: the means, sds and biases of A and B. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/dpauc.h"
#include "estimate/dpauc.h"
#include "estimate/roc.h"
#include "test_figure.h"
#include "test_rng.h"

#define PARTIES 15u
#define N 25u
#define RUNS 1000u

static double uniform01(test_rng_t *t)
{
    return (double)(test_rng_next(t) >> 11) / 9007199254740992.0;
}

static double normal(test_rng_t *t)
{
    double u = uniform01(t), v = uniform01(t);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

/* Parties' counts of n examples (half positive, binormal with separation 0.934: AUC ~ 0.745). */
static void parties(const dpm_dpauc_t *m, uint32_t n, dpm_dpauc_counts_t *c, dpm_dpauc_agg_t *truth)
{
    test_rng_t t;
    test_rng_seed(&t, 99);
    for (uint32_t p = 0; p < PARTIES; p++) {
        assert_int_equal(dpm_dpauc_counts_init(&c[p], m), DPM_OK);
    }
    for (uint32_t i = 0; i < n; i++) {
        int label = i % 2 == 0;
        double z = normal(&t) + (label ? 0.934 : 0.0);
        uint32_t q = dpm_score_from_double(1.0 / (1.0 + exp(-z)));
        uint32_t p = (uint32_t)(test_rng_next(&t) % PARTIES); /* uniform assignment */
        assert_int_equal(dpm_dpauc_counts_add(&c[p], m, q, label), DPM_OK);
    }
    assert_int_equal(dpm_dpauc_agg_init(truth, N), DPM_OK);
    for (uint32_t p = 0; p < PARTIES; p++) {
        int32_t tp[N], fp[N], tn[N], fn[N];
        for (uint32_t i = 0; i < N; i++) {
            tp[i] = (int32_t)c[p].tp[i];
            fp[i] = (int32_t)c[p].fp[i];
            tn[i] = (int32_t)(c[p].neg - c[p].fp[i]);
            fn[i] = (int32_t)(c[p].pos - c[p].tp[i]);
        }
        assert_int_equal(dpm_dpauc_agg_add(truth, N, tp, fp, tn, fn), DPM_OK);
    }
}

typedef struct {
    double sum, sum2;
    uint32_t n;
} acc_t;

/* Also printed as figures NAME.truth, .mean, .bias_se and .sd (test_figure.h). */
static int bias_check(const acc_t *a, double truth, const char *what, const char *name)
{
    double mean = a->sum / a->n, var = a->sum2 / a->n - mean * mean, se = sqrt(var / a->n);
    int bad = fabs(mean - truth) > 5.0 * se;
    test_figure_of(name, "truth", truth, "auc");
    test_figure_of(name, "mean", mean, "auc");
    test_figure_of(name, "bias_se", (mean - truth) / se, "se");
    test_figure_of(name, "sd", sqrt(var), "auc");
    print_message("# %-36s truth %.4f mean %.4f (bias %+.4f = %+.1f se), sd %.4f: %s\n", what,
                  truth, mean, mean - truth, (mean - truth) / se, sqrt(var),
                  bad ? "biased: rejected" : "ok");
    return bad;
}

/* R runs of the parties' reports; accumulates the summed counts and both servers' AUCs. */
static void runs(dpm_dpauc_calibration_t cal, uint32_t n, uint32_t nruns, double *z_max,
                 acc_t *a_acc, acc_t *b_acc, double *truth_auc)
{
    const dpm_eps_t eps = DPM_EPS_ONE;
    uint32_t thr[N];
    assert_int_equal(dpm_dpauc_linspace(N, thr), DPM_OK);
    dpm_dpauc_t m;
    assert_int_equal(dpm_dpauc_init(&m, thr, N, cal, eps), DPM_OK);
    static dpm_dpauc_counts_t c[PARTIES];
    static dpm_dpauc_agg_t truth, agg;
    parties(&m, n, c, &truth);
    dpm_dpauc_params_t p0, p;
    assert_int_equal(dpm_dpauc_params_init(&p0, N, 0.0), DPM_OK);
    assert_int_equal(dpm_dpauc_params_init(&p, N, (double)m.lap.scale_num / m.lap.scale_den),
                     DPM_OK);
    dpm_dpauc_estimate_t e;
    assert_int_equal(dpm_dpauc_estimate(&p0, &truth, DPM_DPAUC_SERVER_B, &e), DPM_OK);
    *truth_auc = e.auc;
    static double sum[4 * N];
    memset(sum, 0, sizeof(sum));
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 500u + cal + n), DPM_OK);
    for (uint32_t run = 0; run < nruns; run++) {
        assert_int_equal(dpm_dpauc_agg_init(&agg, N), DPM_OK);
        for (uint32_t q = 0; q < PARTIES; q++) {
            dpm_dpauc_report_t rep;
            assert_int_equal(dpm_dpauc_perturb(&m, &r, &c[q], &rep), DPM_OK);
            assert_int_equal(dpm_dpauc_agg_add(&agg, N, rep.tp, rep.fp, rep.tn, rep.fn), DPM_OK);
        }
        for (uint32_t i = 0; i < N; i++) {
            sum[i] += (double)(agg.tp[i] - truth.tp[i]);
            sum[N + i] += (double)(agg.fp[i] - truth.fp[i]);
            sum[2 * N + i] += (double)(agg.tn[i] - truth.tn[i]);
            sum[3 * N + i] += (double)(agg.fn[i] - truth.fn[i]);
        }
        assert_int_equal(dpm_dpauc_estimate(&p, &agg, DPM_DPAUC_SERVER_A, &e), DPM_OK);
        a_acc->sum += e.auc, a_acc->sum2 += e.auc * e.auc, a_acc->n++;
        assert_int_equal(dpm_dpauc_estimate(&p, &agg, DPM_DPAUC_SERVER_B, &e), DPM_OK);
        if (e.defined) {
            b_acc->sum += e.auc, b_acc->sum2 += e.auc * e.auc, b_acc->n++;
        }
    }
    double sd_sum = sqrt((double)PARTIES * nruns * p.noise_var);
    *z_max = 0.0;
    for (uint32_t i = 0; i < 4 * N; i++) {
        *z_max = fmax(*z_max, fabs(sum[i]) / sd_sum);
    }
}

static void test_counts_and_server_b_unbiased(void **state)
{
    (void)state;
    /* two-sided 1e-6 over 4N = 100 counts: z = Phi^-1(1 - 5e-9) = 5.73 */
    const double z_bound = 5.73;
    acc_t a_pub = {0}, b_pub = {0}, a_tight = {0}, b_tight = {0}, a_small = {0}, b_small = {0};
    double z_pub = 0.0, z_tight = 0.0, z_small = 0.0, truth = 0.0, truth_small = 0.0;
    runs(DPM_DPAUC_PUBLISHED, 100000, RUNS, &z_pub, &a_pub, &b_pub, &truth);
    runs(DPM_DPAUC_TIGHT, 100000, RUNS, &z_tight, &a_tight, &b_tight, &truth);
    runs(DPM_DPAUC_PUBLISHED, 1000, RUNS, &z_small, &a_small, &b_small, &truth_small);
    print_message("# summed counts, largest |z| over 4N = %u: published %.2f, tight %.2f, "
                  "n = 10^3 %.2f (bound %.2f)\n",
                  4 * N, z_pub, z_tight, z_small, z_bound);
    test_figure("runs", RUNS, "runs");
    test_figure("z_max.published", z_pub, "z");
    test_figure("z_max.tight", z_tight, "z");
    test_figure("z_max.small", z_small, "z");
    assert_true(z_pub < z_bound && z_tight < z_bound && z_small < z_bound);
    int bad = bias_check(&b_pub, truth, "n 10^5, published, server B", "b_published");
    bad += bias_check(&b_tight, truth, "n 10^5, tight, server B", "b_tight");
    bias_check(&a_pub, truth, "n 10^5, published, server A", "a_published");
    bias_check(&a_tight, truth, "n 10^5, tight, server A", "a_tight");
    bias_check(&b_small, truth_small, "n 10^3, published, server B", "b_small");
    int control =
        bias_check(&a_small, truth_small, "negative control: n 10^3, server A", "a_small");
    assert_int_equal(bad, 0);
    assert_int_equal(control, 1);
    double sd_pub = sqrt(b_pub.sum2 / b_pub.n - pow(b_pub.sum / b_pub.n, 2));
    double sd_tight = sqrt(b_tight.sum2 / b_tight.n - pow(b_tight.sum / b_tight.n, 2));
    print_message("# server B sd: published %.4f, tight %.4f (ratio %.2f; noise scale ratio 2)\n",
                  sd_pub, sd_tight, sd_pub / sd_tight);
    assert_true(sd_pub / sd_tight > 1.6 && sd_pub / sd_tight < 2.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_server_b_unbiased),
    };
    return cmocka_run_group_tests_name("dpauc_unbiased", tests, NULL, NULL);
}
