/* SPDX-License-Identifier: Apache-2.0 */
/* Goodness of fit of the exact samplers against their exact pmfs: discrete Laplace at scales
 * 0.5, 1, 10, 22/7, 1000 and 2^40/3 grid units; the Laplace mechanism's own sampler
 * (dpm_laplace_add) at 0.5, 1, 10, 1000, 65536/6553 and 2^17 grid units; Bernoulli(exp(-gamma)),
 * Bernoulli(num/den) and uniform. Fixed seeds, 10^7 samples per configuration, G-test at alpha = 1e-6 with tails
 * pooled until every expected count is >= 20. The first test checks the statistics helpers
 * themselves against high-precision reference values (mpmath, 40 digits). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "stat_dlap.h"
#include "stat_gof.h"
#include "stat_hist.h"
#include "test_rng.h"

#define N_SAMPLES stat_samples(10000000u, 2500000u) /* min: Bernoulli(1e-5) expects >= 20 */
#define ALPHA 1e-6
#define MIN_EXPECTED 20.0

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void assert_close(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want))) {
        fail_msg("got %.17g, want %.17g (relative tolerance %g)", got, want, rel);
    }
}

/* ---- the helpers themselves ---------------------------------------------------------------- */

static void test_stat_helpers_match_reference(void **state)
{
    (void)state;
    /* chi-square critical values at 1e-6 */
    const double dof[] = {1, 2, 10, 100, 1000, 10000};
    const double isf[] = {23.9281269769348,  27.6310211159285, 46.8630468467844,
                          182.126777119548,  1227.15242118758, 10686.6898298669};
    for (size_t i = 0; i < sizeof(dof) / sizeof(dof[0]); i++) {
        assert_close(stat_chi2_isf(1e-6, dof[i]), isf[i], 1e-9);
        assert_close(stat_chi2_sf(isf[i], dof[i]), 1e-6, 1e-7);
    }
    /* regularized upper incomplete gamma, both branches (series and continued fraction) */
    assert_close(stat_gamma_q(0.5, 0.1), 0.65472084601857702, 1e-12);
    assert_close(stat_gamma_q(5, 3), 0.81526324452377207, 1e-12);
    assert_close(stat_gamma_q(50, 70), 0.0051405024585058939, 1e-10);
    assert_close(stat_gamma_q(5000, 5200), 0.0025848134953538087, 1e-8);
    assert_close(stat_gamma_q(2.5, 40), 8.3918251148316101e-16, 1e-10);
    assert_close(stat_gamma_p(5, 3), 1.0 - 0.81526324452377207, 1e-12);
    /* Clopper-Pearson bounds */
    assert_close(stat_binom_lower(5, 20, 0.025), 0.086571469101434541, 1e-9);
    assert_close(stat_binom_upper(5, 20, 0.025), 0.49104587170795754, 1e-9);
    assert_close(stat_binom_upper(0, 10, 0.05), 0.25886555089305222, 1e-9);
    assert_true(stat_binom_lower(0, 10, 0.05) == 0.0);
    assert_close(stat_binom_lower(1000, 10000000, 1e-8), 8.3257996893451698e-5, 1e-7);
    assert_close(stat_binom_upper(1000, 10000000, 1e-8), 0.00011888262432434757, 1e-7);
    assert_close(stat_binom_lower(245000, 1000000, 1e-8), 0.2425913072377392, 1e-8);
    assert_close(stat_binom_upper(245000, 1000000, 1e-8), 0.24741957412501846, 1e-8);
    /* pooling keeps totals and leaves no cell below the threshold */
    uint64_t o[] = {1, 2, 50, 60, 3, 40, 1, 1};
    double e[] = {1.5, 2.5, 45, 62, 4, 41, 2, 0.5};
    size_t n = stat_pool_tails(o, e, 8, 20.0);
    assert_int_equal(n, 3); /* ends merged inward, then the interior 4 into its left neighbour */
    assert_int_equal(o[0], 53);
    assert_int_equal(o[1], 63);
    assert_int_equal(o[2], 42);
    assert_close(e[1], 66.0, 1e-15);
    stat_gof_t g = stat_gof_test(o, e, n, STAT_PEARSON);
    assert_true(g.min_expected >= 20.0);
    assert_close(g.total_expected, 158.5, 1e-15);
    assert_close(g.total_observed, 158, 1e-15);
}

/* ---- discrete Laplace ------------------------------------------------------------------------ */

static void report(const char *what, stat_gof_t g)
{
    print_message("# %-34s G = %10.1f  dof %5.0f  p = %.3g  (min expected %.0f)\n", what,
                  g.statistic, g.dof, g.p_value, g.min_expected);
}

static void assert_fits(const char *what, stat_gof_t g)
{
    report(what, g);
    assert_true(g.min_expected >= MIN_EXPECTED);
    assert_true(fabs(g.total_expected - g.total_observed) < 1e-6 * g.total_observed);
    assert_true(g.p_value > ALPHA);
    assert_true(g.statistic < stat_chi2_isf(ALPHA, g.dof));
}

/* Half-width of a window of cells of `width` integers whose central cell expects about
 * N width / (2 t): beyond it cells expect fewer than MIN_EXPECTED and get pooled. */
static int64_t window_cells(long double t, uint64_t width)
{
    long double central = (long double)N_SAMPLES * (long double)width / (2.0L * t);
    long double reach = t * logl(central / MIN_EXPECTED) / (long double)width;
    return (int64_t)ceill(reach > 0.0L ? reach : 0.0L) + 2;
}

/* 10^7 draws of dpm_dlap(num / den) (mech == NULL) or of dpm_laplace_add(mech, 0), tested
 * twice: one cell per integer (where the counts allow), and cells a quarter scale wide, which
 * have the power against smooth errors in the shape (a wrong scale). */
static void gof_run(const dpm_laplace_t *mech, uint64_t num, uint64_t den, uint64_t seed)
{
    long double t = (long double)num / (long double)den;
    int unit_cells = (long double)N_SAMPLES * stat_dlap_pmf(t, 0) > 4.0L * MIN_EXPECTED;
    uint64_t coarse = (uint64_t)ceill(t / 4.0L);
    int64_t w = unit_cells ? window_cells(t, 1) : 1;
    int64_t m = window_cells(t, coarse);
    stat_hist_t fine;
    stat_hist_t wide;
    assert_int_equal(stat_hist_init(&fine, -w, 1, (size_t)(2 * w + 1)), 0);
    assert_int_equal(stat_hist_init(&wide, -m * (int64_t)coarse - (int64_t)coarse / 2, coarse,
                                     (size_t)(2 * m + 1)),
                     0);
    test_rng_t rng;
    test_rng_seed(&rng, seed);
    dpm_rng_t port = test_rng_port(&rng);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    double start = seconds();
    const char *name = mech != NULL ? "laplace" : "dlap";
    for (uint32_t i = 0; i < N_SAMPLES; i++) {
        int64_t z;
        assert_int_equal(mech != NULL ? dpm_laplace_add(mech, &r, 0, &z) : dpm_dlap(&r, num, den, &z),
                         DPM_OK);
        stat_hist_add(&fine, z);
        stat_hist_add(&wide, z);
    }
    double elapsed = seconds() - start;
    print_message("# %s scale %llu/%llu: %.1f ns/sample (with histograms), %.2f bits/sample\n",
                  name, (unsigned long long)num, (unsigned long long)den,
                  1e9 * elapsed / N_SAMPLES, (double)dpm_rand_bits_used(&r) / N_SAMPLES);
    char what[64];
    if (unit_cells) {
        stat_hist_expect(&fine, stat_dlap_mass, &t);
        snprintf(what, sizeof(what), "%s %llu/%llu, unit cells", name, (unsigned long long)num,
                 (unsigned long long)den);
        assert_fits(what, stat_hist_gof(&fine, MIN_EXPECTED, STAT_G));
    }
    if (coarse > 2) {
        stat_hist_expect(&wide, stat_dlap_mass, &t);
        snprintf(what, sizeof(what), "%s %llu/%llu, cells of %llu", name,
                 (unsigned long long)num, (unsigned long long)den, (unsigned long long)coarse);
        assert_fits(what, stat_hist_gof(&wide, MIN_EXPECTED, STAT_G));
    }
    stat_hist_free(&fine);
    stat_hist_free(&wide);
}

static void dlap_gof(uint64_t num, uint64_t den, uint64_t seed)
{
    gof_run(NULL, num, den, seed);
}

/* The mechanism for sensitivity sens and eps, at its scale sens 2^16 / eps. */
static void laplace_gof(uint64_t sens, dpm_eps_t eps, uint64_t seed)
{
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, sens, eps), DPM_OK);
    gof_run(&m, m.scale_num, m.scale_den, seed);
}

static void test_laplace_mechanism_gof(void **state)
{
    (void)state;
    laplace_gof(1, 131072, 111);              /* t = 1/2: num 1, den 2 */
    laplace_gof(1, 65536, 112);               /* t = 1: no A */
    laplace_gof(10, 65536, 113);              /* t = 10: lanes, K = 0, A up to 9 */
    laplace_gof(1000, 65536, 114);            /* t = 1000: lanes, K = 6 */
    laplace_gof(1, 6553, 115);                /* t = 65536/6553: table, den > 1 */
    laplace_gof(UINT64_C(1) << 17, 65536, 116); /* t = 2^17: table, the benchmark */
}

static void test_dlap_scale_half(void **state)
{
    (void)state;
    dlap_gof(1, 2, 101);
}

static void test_dlap_scale_one(void **state)
{
    (void)state;
    dlap_gof(1, 1, 102);
}

static void test_dlap_scale_ten(void **state)
{
    (void)state;
    dlap_gof(10, 1, 103);
}

static void test_dlap_scale_22_7(void **state)
{
    (void)state;
    dlap_gof(22, 7, 104); /* floor(X / 7): the division path */
}

static void test_dlap_scale_thousand(void **state)
{
    (void)state;
    dlap_gof(1000, 1, 105);
}

static void test_dlap_scale_huge(void **state)
{
    (void)state;
    dlap_gof(UINT64_C(1) << 40, 3, 106); /* 40-bit uniform draws */
}

/* ---- two-cell tests ---------------------------------------------------------------------- */

typedef dpm_status_t (*coin_fn)(dpm_rand_t *r, uint64_t num, uint64_t den, int *out);

static void coin_gof(const char *name, coin_fn fn, uint64_t num, uint64_t den, long double p1,
                     uint64_t seed)
{
    test_rng_t rng;
    test_rng_seed(&rng, seed);
    dpm_rng_t port = test_rng_port(&rng);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    uint64_t counts[2] = {0, 0};
    for (uint32_t i = 0; i < N_SAMPLES; i++) {
        int b = -1;
        assert_int_equal(fn(&r, num, den, &b), DPM_OK);
        assert_true(b == 0 || b == 1);
        counts[b]++;
    }
    double expected[2] = {(double)((1.0L - p1) * N_SAMPLES), (double)(p1 * N_SAMPLES)};
    char what[96];
    snprintf(what, sizeof(what), "%s %llu/%llu (%.2f bits)", name, (unsigned long long)num,
             (unsigned long long)den, (double)dpm_rand_bits_used(&r) / N_SAMPLES);
    assert_fits(what, stat_gof_test(counts, expected, 2, STAT_G));
}

static void test_bernoulli_exp_gof(void **state)
{
    (void)state;
    const struct {
        uint64_t num, den;
    } g[] = {{1, 10}, {1, 1}, {5, 2}, {UINT64_C(1) << 63, UINT64_MAX}, {4095, 1000}};
    for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
        long double p1 = expl(-(long double)g[i].num / (long double)g[i].den);
        coin_gof("bexp", dpm_bernoulli_exp, g[i].num, g[i].den, p1, 200 + i);
    }
}

static void test_bernoulli_gof(void **state)
{
    (void)state;
    coin_gof("bernoulli", dpm_bernoulli, 1, 3, 1.0L / 3.0L, 301);
    coin_gof("bernoulli", dpm_bernoulli, (UINT64_C(1) << 63) + 1, UINT64_MAX,
             ((long double)(UINT64_C(1) << 63) + 1.0L) / (long double)UINT64_MAX, 302);
    coin_gof("bernoulli", dpm_bernoulli, 99999, 100000, 0.99999L, 303);
}

/* ---- uniform ------------------------------------------------------------------------------- */

/* cells of 2^shift consecutive values; the last cell may be partial */
static void uniform_gof(uint64_t n, uint32_t shift, uint64_t seed)
{
    size_t cells = (size_t)(((n - 1) >> shift) + 1);
    uint64_t counts[1024];
    double expected[1024];
    assert_true(cells <= 1024);
    memset(counts, 0, sizeof(counts));
    test_rng_t rng;
    test_rng_seed(&rng, seed);
    dpm_rng_t port = test_rng_port(&rng);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    for (uint32_t i = 0; i < N_SAMPLES; i++) {
        uint64_t v;
        assert_int_equal(dpm_uniform(&r, n, &v), DPM_OK);
        assert_true(v < n);
        counts[v >> shift]++;
    }
    for (size_t c = 0; c < cells; c++) {
        uint64_t first = (uint64_t)c << shift;
        uint64_t size = n - first < (UINT64_C(1) << shift) ? n - first : UINT64_C(1) << shift;
        expected[c] = (double)((long double)N_SAMPLES * (long double)size / (long double)n);
    }
    size_t m = stat_pool_tails(counts, expected, cells, MIN_EXPECTED);
    char what[64];
    snprintf(what, sizeof(what), "uniform n=%llu (%.2f bits)", (unsigned long long)n,
             (double)dpm_rand_bits_used(&r) / N_SAMPLES);
    assert_fits(what, stat_gof_test(counts, expected, m, STAT_G));
}

static void test_uniform_gof(void **state)
{
    (void)state;
    uniform_gof(6, 0, 401);
    uniform_gof(1000, 0, 402);
    uniform_gof(3 * (UINT64_C(1) << 40) + 1, 36, 403); /* 48 full cells and one single value */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stat_helpers_match_reference),
        cmocka_unit_test(test_dlap_scale_half),
        cmocka_unit_test(test_dlap_scale_one),
        cmocka_unit_test(test_dlap_scale_ten),
        cmocka_unit_test(test_dlap_scale_22_7),
        cmocka_unit_test(test_dlap_scale_thousand),
        cmocka_unit_test(test_dlap_scale_huge),
        cmocka_unit_test(test_laplace_mechanism_gof),
        cmocka_unit_test(test_bernoulli_exp_gof),
        cmocka_unit_test(test_bernoulli_gof),
        cmocka_unit_test(test_uniform_gof),
    };
    return cmocka_run_group_tests_name("dlap_gof", tests, NULL, NULL);
}
