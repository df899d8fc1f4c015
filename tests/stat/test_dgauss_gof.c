/* SPDX-License-Identifier: Apache-2.0 */
/* The discrete Gaussian sampler (dpm_dgauss, CKS Algorithm 3) against its exact pmf,
 * exp(-z^2 / (2 sigma2)) normalized by direct summation: sigma2 = 1, 3, 100,
 * 10^4 and 2^30, the largest (cells of one integer where the counts allow, and cells a quarter
 * sigma wide).
 * Fixed seeds, 10^7 samples per configuration, G-test at alpha = 1e-6 with tails pooled until
 * every expected count is >= 20; the sample variance within 6 standard errors of the exact
 * variance. Also the refusals, the sticky RNG error and value + Z at the ends of int64. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "stat_gof.h"
#include "stat_hist.h"
#include "test_rng.h"

#define N_SAMPLES stat_samples(10000000u, 250000u) /* cross (divisor 20): 500,000 */
#define ALPHA 1e-6
#define MIN_EXPECTED 20.0

/* The exact pmf on [-k, k], k = 12 sigma + 2 (the mass beyond is below exp(-72), nothing in
 * double precision), in double: exp() is fast on every target, and a cell's mass as a
 * difference of cumulative sums is still good to 1e-10 relative at the smallest expected
 * count (20 of 10^7). */
typedef struct {
    int64_t k;
    double *cum; /* cum[i] = Pr[Z <= i - k - 1], i in [0, 2k + 1] */
    double var;
} dg_law_t;

static void law_init(dg_law_t *l, uint64_t s)
{
    l->k = (int64_t)ceil(12.0 * sqrt((double)s)) + 2;
    size_t n = (size_t)(2 * l->k + 1);
    l->cum = calloc(n + 1u, sizeof(double));
    assert_non_null(l->cum);
    double z = 0.0, m2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double x = (double)((int64_t)i - l->k);
        double p = exp(-x * x / (2.0 * (double)s));
        l->cum[i + 1] = l->cum[i] + p;
        m2 += x * x * p;
    }
    z = l->cum[n];
    for (size_t i = 0; i <= n; i++) {
        l->cum[i] /= z;
    }
    l->var = m2 / z;
}

static long double law_mass(const void *ctx, int64_t a, int64_t b)
{
    const dg_law_t *l = ctx;
    if (a < -l->k) {
        a = -l->k;
    }
    if (b > l->k) {
        b = l->k;
    }
    if (a > b) {
        return 0.0L;
    }
    return (long double)(l->cum[b + l->k + 1] - l->cum[a + l->k]);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void assert_fits(const char *what, stat_gof_t g)
{
    print_message("# %-34s G = %10.1f  dof %5.0f  p = %.3g  (min expected %.0f)\n", what,
                  g.statistic, g.dof, g.p_value, g.min_expected);
    assert_true(g.min_expected >= MIN_EXPECTED);
    assert_true(g.p_value > ALPHA);
    assert_true(g.statistic < stat_chi2_isf(ALPHA, g.dof));
}

static void gof(uint64_t s, uint64_t seed)
{
    dg_law_t law;
    law_init(&law, s);
    const double sigma = sqrt((double)s);
    /* unit cells while the centre expects enough; cells of sigma / 4 for the shape */
    const int unit = (double)N_SAMPLES / (2.5066 * sigma) > 4.0 * MIN_EXPECTED;
    const uint64_t width = (uint64_t)ceil(sigma / 4.0);
    const int64_t w = unit ? (int64_t)ceil(7.0 * sigma) : 1;
    const int64_t m = (int64_t)ceil(7.0 * sigma / (double)width);
    stat_hist_t fine, wide;
    assert_int_equal(stat_hist_init(&fine, -w, 1, (size_t)(2 * w + 1)), 0);
    assert_int_equal(
        stat_hist_init(&wide, -m * (int64_t)width - (int64_t)width / 2, width, (size_t)(2 * m + 1)),
        0);
    test_rng_t rng;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &rng, &port, seed), DPM_OK);
    long double sum2 = 0.0L, sum4 = 0.0L;
    double start = seconds();
    for (uint32_t i = 0; i < N_SAMPLES; i++) {
        int64_t z;
        assert_int_equal(dpm_dgauss(&r, s, &z), DPM_OK);
        stat_hist_add(&fine, z);
        stat_hist_add(&wide, z);
        long double z2 = (long double)z * (long double)z;
        sum2 += z2;
        sum4 += z2 * z2;
    }
    double elapsed = seconds() - start;
    print_message("# dgauss sigma2 %llu: %.1f ns/sample (with histograms), %.2f bits/sample\n",
                  (unsigned long long)s, 1e9 * elapsed / N_SAMPLES,
                  (double)dpm_rand_bits_used(&r) / N_SAMPLES);
    char what[64];
    if (unit) {
        stat_hist_expect(&fine, law_mass, &law);
        snprintf(what, sizeof(what), "dgauss %llu, unit cells", (unsigned long long)s);
        assert_fits(what, stat_hist_gof(&fine, MIN_EXPECTED, STAT_G));
    }
    if (width > 1) {
        stat_hist_expect(&wide, law_mass, &law);
        snprintf(what, sizeof(what), "dgauss %llu, cells of %llu", (unsigned long long)s,
                 (unsigned long long)width);
        assert_fits(what, stat_hist_gof(&wide, MIN_EXPECTED, STAT_G));
    }
    /* the variance the estimators use: mean of Z^2 (E Z = 0 by symmetry) */
    long double n = (long double)N_SAMPLES, v = sum2 / n;
    long double se = sqrtl((sum4 / n - v * v) / n);
    print_message("# dgauss %llu: variance %.6Lg, exact %.6g, %.2Lf se\n", (unsigned long long)s, v,
                  law.var, (v - (long double)law.var) / se);
    assert_true(fabsl(v - (long double)law.var) < 6.0L * se);
    assert_true(law.var <= (double)s * (1.0 + 1e-12)); /* below sigma2 but for rounding */
    stat_hist_free(&fine);
    stat_hist_free(&wide);
    free(law.cum);
}

static void test_dgauss_sigma2_one(void **state)
{
    (void)state;
    gof(1, 201);
}

static void test_dgauss_sigma2_three(void **state)
{
    (void)state;
    gof(3, 202);
}

static void test_dgauss_sigma2_hundred(void **state)
{
    (void)state;
    gof(100, 203);
}

static void test_dgauss_sigma2_ten_thousand(void **state)
{
    (void)state;
    gof(10000, 204);
}

static void test_dgauss_sigma2_largest(void **state)
{
    (void)state;
    gof(DPM_DGAUSS_MAX_SIGMA2, 205);
}

/* Refusals leave *out untouched; a failed source is sticky; value + Z is exact at the ends. */
static void test_dgauss_errors(void **state)
{
    (void)state;
    test_rng_t rng;
    dpm_rng_t port;
    dpm_rand_t r, unbound;
    memset(&unbound, 0, sizeof(unbound));
    assert_int_equal(test_rand_init(&r, &rng, &port, 7), DPM_OK);
    int64_t z = 12345;
    assert_int_equal(dpm_dgauss(NULL, 1, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dgauss(&unbound, 1, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dgauss(&r, 0, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dgauss(&r, DPM_DGAUSS_MAX_SIGMA2 + 1u, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dgauss(&r, 1, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_dgauss_add(&r, 0, 5, &z), DPM_ERR_PARAM);
    assert_int_equal(z, 12345);
    assert_int_equal(dpm_rand_bits_used(&r), 0);
    /* at INT64_MAX: DPM_ERR_RANGE exactly when Z > 0, never a wrapped value */
    int range = 0, ok = 0;
    for (int i = 0; i < 200; i++) {
        int64_t out = 7;
        dpm_status_t st = dpm_dgauss_add(&r, 4, INT64_MAX, &out);
        assert_true(st == DPM_OK || st == DPM_ERR_RANGE);
        if (st == DPM_OK) {
            assert_true(out <= INT64_MAX && out > INT64_MAX - 100);
            ok++;
        } else {
            assert_int_equal(out, 7);
            range++;
        }
    }
    assert_true(range > 0 && ok > 0);
    failing_rng_t f;
    dpm_rng_t fport;
    dpm_rand_t fr;
    assert_int_equal(failing_rand_init(&fr, &f, &fport, 9, 0), DPM_OK);
    z = 99;
    assert_int_equal(dpm_dgauss(&fr, 100, &z), DPM_ERR_RNG);
    assert_int_equal(dpm_dgauss(&fr, 100, &z), DPM_ERR_RNG); /* sticky */
    assert_int_equal(z, 99);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dgauss_errors),
        cmocka_unit_test(test_dgauss_sigma2_one),
        cmocka_unit_test(test_dgauss_sigma2_three),
        cmocka_unit_test(test_dgauss_sigma2_hundred),
        cmocka_unit_test(test_dgauss_sigma2_ten_thousand),
        cmocka_unit_test(test_dgauss_sigma2_largest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
