/* SPDX-License-Identifier: Apache-2.0 */
/* The intervals the normal approximation does not give (common/prob.h) and the interval flags
 * (estimate/ci_flags.h), computed exactly on lattice errors:
 *   - PROB_NORMAL_MIN_EVENTS: the normal interval's coverage of lambda unit events (a Poisson
 *     count, centred, or a symmetric Skellam difference) leaves [93 %, 97 %] at some lambda up
 *     to 9.372 (the figures prob.h quotes) and never from 9.372 to 400 (0.2 % grid);
 *   - the Poisson-aware half-width covers both lattices at least at the level for every lambda
 *     on a grid below the threshold, where the normal one drops to 88 % (the negative control);
 *   - the bias-aware half-width covers exactly the level at the largest bias, z sd at none;
 *   - dpm_ci_halfwidth's flags, the reasons and the coverage words. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/prob.h"
#include "estimate/ci_flags.h"

#define Z95 1.959963984540054
#define KMAX 2000

/* Pr[|X| <= h] for X = Poisson(lambda) - lambda (skellam 0) or Skellam(lambda/2, lambda/2). */
static double lattice_cover(double lambda, double h, int skellam)
{
    static double a[KMAX];
    double l = skellam ? lambda / 2.0 : lambda, sum = 0.0;
    int n = (int)(l + 40.0 * sqrt(l) + 60.0);
    n = n < KMAX ? n : KMAX;
    for (int k = 0; k < n; k++) {
        a[k] = exp(prob_log_dpois(k, l));
    }
    if (!skellam) {
        for (int k = 0; k < n; k++) {
            sum += fabs(k - lambda) <= h ? a[k] : 0.0;
        }
        return sum;
    }
    for (int d = 0; d <= (int)h; d++) { /* Pr[X = d] = Pr[X = -d] = sum_i a_i a_{i+d} */
        double pd = 0.0;
        for (int i = 0; i + d < n; i++) {
            pd += a[i] * a[i + d];
        }
        sum += d == 0 ? pd : 2.0 * pd;
    }
    return sum;
}

static void test_poisson_functions(void **state)
{
    (void)state;
    assert_true(fabs(prob_pois_cdf(0, 2.0) - exp(-2.0)) < 1e-15);
    assert_true(fabs(prob_pois_cdf(2, 2.0) - 5.0 * exp(-2.0)) < 1e-15);
    assert_true(prob_pois_cdf(5, 0.0) == 1.0);
    assert_int_equal(prob_pois_quantile(1.0, 0.975), 3); /* 0.9810 >= 0.975 > 0.9197 */
    assert_int_equal(prob_pois_quantile(4.0, 0.975), 8);
    assert_int_equal(prob_pois_quantile(0.0, 0.975), 0);
    for (double l = 0.05; l < 50.0; l *= 1.7) {
        uint64_t k = prob_pois_quantile(l, 0.975);
        assert_true(prob_pois_cdf(k, l) >= 0.975);
        assert_true(k == 0 || prob_pois_cdf(k - 1, l) < 0.975);
    }
}

static void test_min_events_threshold(void **state)
{
    (void)state;
    /* the figures of prob.h */
    assert_true(fabs(lattice_cover(9.35, Z95 * sqrt(9.35), 1) - 0.92876) < 1e-5);
    assert_true(lattice_cover(2.14, Z95 * sqrt(2.14), 0) > 0.977);
    int last_bad_below = 0;
    for (double l = 0.25; l < 9.372; l *= 1.002) {
        double s = lattice_cover(l, Z95 * sqrt(l), 1), p = lattice_cover(l, Z95 * sqrt(l), 0);
        last_bad_below |= l > 9.3 && !(s >= 0.93 && s <= 0.97 && p >= 0.93 && p <= 0.97);
    }
    assert_true(last_bad_below); /* the threshold is needed up to 9.372 */
    uint32_t checked = 0;
    for (double l = 9.372; l <= 400.0; l *= 1.002, checked++) {
        double s = lattice_cover(l, Z95 * sqrt(l), 1), p = lattice_cover(l, Z95 * sqrt(l), 0);
        if (!(s >= 0.93 && s <= 0.97 && p >= 0.93 && p <= 0.97)) {
            print_message("lambda %.4f: skellam %.5f poisson %.5f\n", l, s, p);
        }
        assert_true(s >= 0.93 && s <= 0.97 && p >= 0.93 && p <= 0.97);
    }
    assert_true(checked > 1000);
    assert_true(PROB_NORMAL_MIN_EVENTS >= 9.372);
}

static void test_poisson_aware_covers(void **state)
{
    (void)state;
    double worst_normal = 1.0;
    for (double l = 0.05; l < PROB_NORMAL_MIN_EVENTS; l *= 1.05) {
        double events = 0.0, h = prob_events_halfwidth(l, 1.0, 0.95, &events);
        assert_true(fabs(events - l) < 1e-12 * l);
        assert_true(h >= Z95 * sqrt(l) - 1e-12);
        assert_true(lattice_cover(l, h + 1e-9, 0) >= 0.95);
        assert_true(lattice_cover(l, h + 1e-9, 1) >= 0.95);
        worst_normal = fmin(worst_normal, lattice_cover(l, Z95 * sqrt(l), 1));
    }
    /* negative control: the normal interval undercovers the same lattices */
    assert_true(worst_normal < 0.89);
    /* many events, or no jump: the normal interval */
    assert_true(fabs(prob_events_halfwidth(100.0, 1.0, 0.95, NULL) - Z95 * 10.0) < 1e-9);
    assert_true(fabs(prob_events_halfwidth(4.0, 0.0, 0.95, NULL) - Z95 * 2.0) < 1e-9);
}

static void test_bias_aware(void **state)
{
    (void)state;
    assert_true(fabs(prob_bias_aware_halfwidth(1.0, 0.0, 0.95) - Z95) < 1e-9);
    for (double b = 0.1; b < 20.0; b *= 1.5) {
        double h = prob_bias_aware_halfwidth(2.0, b, 0.95);
        double cov = prob_norm_cdf((h - b) / 2.0) - prob_norm_cdf((-h - b) / 2.0);
        assert_true(fabs(cov - 0.95) < 1e-9);
        assert_true(h > Z95 * 2.0 && h < b + Z95 * 2.0);
    }
    assert_true(prob_bias_aware_halfwidth(0.0, 0.3, 0.95) == 0.3);
    assert_true(isnan(prob_bias_aware_halfwidth(0.0, 0.0, 0.95)));
}

static void test_ci_halfwidth_flags(void **state)
{
    (void)state;
    unsigned f = 0;
    double ev = 0.0;
    double h = dpm_ci_halfwidth(1.0, 0.01, 0.0, 0.95, &ev, &f); /* 10^4 events */
    assert_true(f == 0 && fabs(h - Z95) < 1e-9 && fabs(ev - 1e4) < 1e-6);
    f = 0;
    (void)dpm_ci_halfwidth(1.0, 0.5, 0.0, 0.95, &ev, &f); /* 4 events */
    assert_true(f == DPM_CI_FEW_EVENTS);
    f = 0;
    h = dpm_ci_halfwidth(1.0, 0.0, 0.05, 0.95, NULL, &f); /* a small bound: not dominant */
    assert_true(f == 0 && h > Z95 && h < Z95 + 0.01);
    f = 0;
    h = dpm_ci_halfwidth(1.0, 0.0, 2.0, 0.95, NULL, &f); /* a large one */
    assert_true(f == DPM_CI_BOUND && h > 3.6);
    assert_true(isnan(dpm_ci_halfwidth(-1.0, 0.0, 0.0, 0.95, NULL, &f)));
    assert_string_equal(dpm_ci_coverage(0), "nominal");
    assert_string_equal(dpm_ci_coverage(DPM_CI_FEW_EVENTS | DPM_CI_BOUND), "at_least");
    assert_string_equal(dpm_ci_coverage(DPM_CI_FEW_EVENTS | DPM_CI_CLASS_NOISE), "none");
    assert_string_equal(dpm_ci_reason(0), "");
    assert_non_null(strstr(dpm_ci_reason(DPM_CI_FEW_EVENTS), "Poisson-aware"));
    assert_non_null(strstr(dpm_ci_reason(DPM_CI_FEW_EVENTS | DPM_CI_CLASS_NOISE), "class total"));
    assert_non_null(strstr(dpm_ci_reason(DPM_CI_FEW_EVENTS | DPM_CI_CLASS_NOISE), "more flags"));
    for (unsigned i = 0; i < DPM_CI_FLAG_COUNT; i++) {
        assert_non_null(dpm_ci_flag_name(i));
        assert_true(dpm_ci_reason(1u << i)[0] != '\0');
    }
    assert_null(dpm_ci_flag_name(DPM_CI_FLAG_COUNT));
    double rel[2] = {0.012, 0.002}, g = 0.0;
    assert_int_equal(dpm_ci_class_noise(rel, 2, Z95, &g), DPM_CI_CLASS_NOISE); /* g 0.054 */
    assert_true(fabs(g - Z95 * Z95 * 0.014) < 1e-12);
    rel[0] = 0.0001;
    assert_int_equal(dpm_ci_class_noise(rel, 2, Z95, NULL), 0);
    rel[1] = -1.0; /* a total that is not positive */
    assert_int_equal(dpm_ci_class_noise(rel, 2, Z95, NULL), DPM_CI_CLASS_NOISE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poisson_functions),    cmocka_unit_test(test_min_events_threshold),
        cmocka_unit_test(test_poisson_aware_covers), cmocka_unit_test(test_bias_aware),
        cmocka_unit_test(test_ci_halfwidth_flags),
    };
    return cmocka_run_group_tests_name("prob_intervals", tests, NULL, NULL);
}
