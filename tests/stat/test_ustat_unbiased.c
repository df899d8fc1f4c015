/* SPDX-License-Identifier: Apache-2.0 */
/* ustat_bins and ustat_tree, end to end through the SDK: a fixed population of examples (binormal
 * scores; correlated pairs for Kendall), every run re-randomizing every report, the server
 * estimators on the sums. The target is the U-statistic of the population's quantized examples
 * (binned AUC with ties 1/2, tau_a). Over R runs:
 *   - unbiased: |mean - truth| <= 5 se (se = sd / sqrt(R));
 *   - ustat_bins' sd is calibrated: mean predicted variance / empirical variance in [0.8, 1.2],
 *     and (public-label AUC) its 95% intervals cover in [93%, 97%];
 *   - ustat_tree with the threshold rule: the empirical MSE is below Theorem 3's bound.
 * Negative controls: the public-label AUC of the raw (not de-biased) report histograms, and the
 * tree's threshold rule with a = 10^9 (every node discarded: 1/2 whatever the data), are
 * rejected by the same bias check. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/ustat.h"
#include "estimate/ustat.h"
#include "test_figure.h"
#include "test_rng.h"

#define ONE (UINT32_C(1) << 31)
#define NPOS 1500u
#define NNEG 3000u
#define NEX (NPOS + NNEG)

static double uniform01(test_rng_t *t)
{
    return (double)(test_rng_next(t) >> 11) / 9007199254740992.0;
}

static double normal(test_rng_t *t)
{
    double u = uniform01(t), v = uniform01(t);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static uint32_t sigmoid_q31(double z)
{
    return (uint32_t)(1.0 / (1.0 + exp(-z)) * 2147483648.0 * (1.0 - 1e-12));
}

/* The examples: NPOS positives then NNEG negatives (score2: a correlated second score). */
static void population(dpm_ustat_example_t *ex, uint64_t seed)
{
    test_rng_t t;
    test_rng_seed(&t, seed);
    for (uint32_t i = 0; i < NEX; i++) {
        double z = normal(&t);
        ex[i].label = i < NPOS;
        ex[i].score = sigmoid_q31(z + (i < NPOS ? 1.2 : 0.0));
        ex[i].score2 = sigmoid_q31(0.7 * z + 0.7 * normal(&t));
    }
}

typedef struct {
    double sum, sum2, var_pred;
    uint32_t covered, n;
} acc_t;

static void acc_add(acc_t *a, double v, double sd, double lo, double hi, double truth)
{
    a->sum += v;
    a->sum2 += v * v;
    a->var_pred += sd * sd;
    a->covered += lo <= truth && truth <= hi;
    a->n++;
}

/* check bits: 1 bias, 2 variance ratio, 4 coverage. 0 if all asked pass. */
static int acc_check(const acc_t *a, double truth, const char *what, int checks)
{
    double mean = a->sum / a->n, var = a->sum2 / a->n - mean * mean;
    double se = sqrt(var / a->n), cov = (double)a->covered / a->n, ratio = a->var_pred / a->n / var;
    int bad = ((checks & 1) && fabs(mean - truth) > 5.0 * se) ||
              ((checks & 2) && !(ratio >= 0.8 && ratio <= 1.2)) ||
              ((checks & 4) && !(cov >= 0.93 && cov <= 0.97));
    char extra[96] = "";
    if (checks & 2) {
        snprintf(extra, sizeof(extra), ", predicted/empirical var %.3f, coverage %.1f%%", ratio,
                 100.0 * cov);
    }
    print_message("# %-34s truth %+.4f mean %+.4f (bias %+.1f se), sd %.4f%s: %s\n", what, truth,
                  mean, (mean - truth) / se, sqrt(var), extra, bad ? "biased: rejected" : "ok");
    test_figure_of(what, "runs", a->n, "runs");
    test_figure_of(what, "truth", truth, "1");
    test_figure_of(what, "mean", mean, "1");
    test_figure_of(what, "bias_se", (mean - truth) / se, "se");
    test_figure_of(what, "sd", sqrt(var), "1");
    if (checks & 2) {
        test_figure_of(what, "var_ratio", ratio, "1");
        test_figure_of(what, "cover", cov, "share");
    }
    return bad;
}

static void bins_run(dpm_ustat_kernel_t kernel, uint32_t k, dpm_eps_t eps, uint32_t runs,
                     const dpm_ustat_example_t *ex, acc_t *acc, acc_t *raw, double *truth)
{
    dpm_ustat_bins_t m;
    assert_int_equal(dpm_ustat_bins_init(&m, kernel, k, eps), DPM_OK);
    dpm_ustat_bins_params_t p;
    assert_int_equal(dpm_ustat_bins_params_init(&p, kernel, k, m.grr.keep, m.grr.other), DPM_OK);
    /* the truth from the quantized examples */
    static uint64_t hist[2][256];
    memset(hist, 0, sizeof(hist));
    for (uint32_t i = 0; i < NEX; i++) {
        uint32_t b = 0, b2 = 0;
        assert_int_equal(dpm_ustat_quantize(ex[i].score, k, &b), DPM_OK);
        assert_int_equal(dpm_ustat_quantize(ex[i].score2, k, &b2), DPM_OK);
        if (kernel == DPM_USTAT_KENDALL) {
            hist[0][b * k + b2]++;
        } else {
            hist[ex[i].label][b]++;
        }
    }
    assert_int_equal(dpm_ustat_bins_exact(&p, hist[0], hist[1], 0.5, truth), DPM_OK);
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 100u + kernel), DPM_OK);
    static dpm_ustat_bins_agg_t a;
    for (uint32_t run = 0; run < runs; run++) {
        assert_int_equal(dpm_ustat_bins_agg_init(&a, p.domain), DPM_OK);
        for (uint32_t i = 0; i < NEX; i++) {
            dpm_ustat_example_t e = ex[i];
            if (kernel == DPM_USTAT_KENDALL) {
                e.label = 0;
            }
            dpm_ustat_bins_report_t rep;
            assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &e, &rep), DPM_OK);
            assert_int_equal(dpm_ustat_bins_agg_add(&a, &p, rep.value, rep.label), DPM_OK);
        }
        dpm_ustat_estimate_t est;
        assert_int_equal(dpm_ustat_bins_estimate(&p, &a, 0.5, 0.95, &est), DPM_OK);
        assert_true(est.defined);
        acc_add(acc, est.value, est.sd, est.ci_lo, est.ci_hi, *truth);
        if (raw != NULL) { /* the raw histograms' AUC: no de-biasing */
            double v = 0.0;
            assert_int_equal(dpm_ustat_bins_exact(&p, a.count[0], a.count[1], 0.5, &v), DPM_OK);
            acc_add(raw, v, 0.0, 0.0, 0.0, *truth);
        }
    }
}

static void test_bins_unbiased(void **state)
{
    (void)state;
    dpm_ustat_example_t *ex = calloc(NEX, sizeof(*ex));
    assert_non_null(ex);
    population(ex, 4242);
    acc_t auc = {0}, raw = {0}, priv = {0}, tau = {0};
    double t_auc = 0.0, t_priv = 0.0, t_tau = 0.0;
    test_figure("positives", NPOS, "examples");
    test_figure("negatives", NNEG, "examples");
    bins_run(DPM_USTAT_AUC, 16, DPM_EPS_ONE, 2000, ex, &auc, &raw, &t_auc);
    bins_run(DPM_USTAT_AUC_PRIVATE_LABEL, 8, 2 * DPM_EPS_ONE, 1000, ex, &priv, NULL, &t_priv);
    bins_run(DPM_USTAT_KENDALL, 6, 2 * DPM_EPS_ONE, 1000, ex, &tau, NULL, &t_tau);
    int bad = 0;
    bad += acc_check(&auc, t_auc, "AUC, public label, k 16, eps 1", 1 | 2 | 4);
    bad += acc_check(&priv, t_priv, "AUC, private label, k 8, eps 2", 1 | 2);
    bad += acc_check(&tau, t_tau, "Kendall tau_a, k 6, eps 2", 1 | 2);
    int control = acc_check(&raw, t_auc, "negative control: raw histograms", 1);
    assert_int_equal(bad, 0);
    assert_int_equal(control, 1);
    free(ex);
}

static void tree_run(uint32_t grr_levels, dpm_ustat_tree_mode_t mode, double a_given, uint32_t runs,
                     const dpm_ustat_example_t *ex, acc_t *acc, double *mse, double *bound)
{
    dpm_ustat_tree_t m;
    assert_int_equal(dpm_ustat_tree_init(&m, 6, grr_levels, DPM_EPS_ONE), DPM_OK);
    dpm_ustat_tree_params_t p;
    assert_int_equal(dpm_ustat_tree_params_init(&p, &m), DPM_OK);
    uint64_t hp[64] = {0}, hn[64] = {0};
    for (uint32_t i = 0; i < NEX; i++) {
        uint32_t x = 0;
        assert_int_equal(dpm_ustat_quantize(ex[i].score, 64, &x), DPM_OK);
        (ex[i].label ? hp : hn)[x]++;
    }
    double truth = 0.0;
    assert_int_equal(dpm_ustat_tree_exact(6, hn, hp, 0.5, &truth), DPM_OK);
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 300u + grr_levels + 10u * mode), DPM_OK);
    dpm_ustat_tree_opts_t opts = {mode, a_given, 0.5};
    *mse = *bound = 0.0;
    for (uint32_t run = 0; run < runs; run++) {
        dpm_ustat_tree_agg_t a;
        assert_int_equal(dpm_ustat_tree_agg_init(&a, &p), DPM_OK);
        for (uint32_t rep_i = 0; rep_i < 4; rep_i++) { /* each example reports 4 times */
            for (uint32_t i = 0; i < NEX; i++) {
                dpm_ustat_tree_report_t rep;
                assert_int_equal(dpm_ustat_tree_perturb(&m, &r, &ex[i], &rep), DPM_OK);
                assert_int_equal(
                    dpm_ustat_tree_agg_add(&a, rep.label, rep.level, rep.row, rep.value), DPM_OK);
            }
        }
        dpm_ustat_tree_estimate_t e;
        assert_int_equal(dpm_ustat_tree_estimate(&p, &a, &opts, &e), DPM_OK);
        assert_true(e.est.defined);
        acc_add(acc, e.est.value, 0.0, 0.0, 0.0, truth);
        *mse += (e.est.value - truth) * (e.est.value - truth) / runs;
        *bound += e.mse_bound / runs;
        dpm_ustat_tree_agg_free(&a);
    }
}

/* The tree's truth: each example reports 4 times, so the population is 4 copies of it (the
 * binned AUC is the same). */
static void test_tree_unbiased_and_theorem3(void **state)
{
    (void)state;
    dpm_ustat_example_t *ex = calloc(NEX, sizeof(*ex));
    assert_non_null(ex);
    population(ex, 4343);
    uint64_t hp[64] = {0}, hn[64] = {0};
    for (uint32_t i = 0; i < NEX; i++) {
        uint32_t x = 0;
        assert_int_equal(dpm_ustat_quantize(ex[i].score, 64, &x), DPM_OK);
        (ex[i].label ? hp : hn)[x]++;
    }
    double truth = 0.0;
    assert_int_equal(dpm_ustat_tree_exact(6, hn, hp, 0.5, &truth), DPM_OK);
    acc_t hrr = {0}, hyb = {0}, rule = {0}, all = {0};
    double mse = 0.0, bound = 0.0, unused = 0.0;
    tree_run(0, DPM_USTAT_TREE_FULL, 0.0, 300, ex, &hrr, &mse, &bound);
    tree_run(2, DPM_USTAT_TREE_FULL, 0.0, 300, ex, &hyb, &mse, &bound);
    tree_run(0, DPM_USTAT_TREE_GIVEN_A, 1e9, 100, ex, &all, &unused, &unused);
    tree_run(0, DPM_USTAT_TREE_CHOOSE_A, 0.0, 300, ex, &rule, &mse, &bound);
    int bad = 0;
    bad += acc_check(&hrr, truth, "tree depth 6, Hadamard, full", 1);
    bad += acc_check(&hyb, truth, "tree depth 6, 2 GRR levels, full", 1);
    acc_check(&rule, truth, "tree depth 6, threshold rule", 0);
    print_message("# threshold rule: empirical MSE %.3g <= Theorem 3 bound %.3g (sqrt: %.4f <= "
                  "%.4f)\n",
                  mse, bound, sqrt(mse), sqrt(bound));
    test_figure("threshold_rule.mse", mse, "1");
    test_figure("threshold_rule.bound", bound, "1");
    int control = acc_check(&all, truth, "negative control: a = 10^9", 1);
    assert_int_equal(bad, 0);
    assert_true(mse <= bound);
    assert_int_equal(control, 1);
    free(ex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bins_unbiased),
        cmocka_unit_test(test_tree_unbiased_and_theorem3),
    };
    return cmocka_run_group_tests_name("ustat_unbiased", tests, NULL, NULL);
}
