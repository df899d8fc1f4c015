/* SPDX-License-Identifier: Apache-2.0 */
/* The simulator's seeded variates (host-sim/sim/pop/sim_rng.c) against their exact pmfs: G-test
 * on 10^6 draws per case at alpha = 1e-6, fixed seeds, one case per algorithm branch (binomial
 * inversion and BTPE up to n = 10^9, Poisson inversion and PTRS up to lambda = 10^12, sums of
 * geometrics through gamma-Poisson, discrete Laplace sums, the discrete Gaussian). Plus spot
 * values of the special functions and negative controls (a binomial with p off by 1%, a
 * discrete Gaussian with its variance off by 2%, are rejected). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/prob.h"
#include "sim/pop/sim_rng.h"
#include "stat_gof.h"

#define DRAWS 1000000u
#define ALPHA 1e-6
#define CELLS 401
#define MIN_EXPECTED 20.0

typedef double (*log_pmf_fn)(double k, const double *par);
typedef double (*draw_fn)(sim_rng_t *r, const double *par);

/* Probability of the cell [a, a + w): the pmf summed, or for wide cells (where the pmf is
 * smooth on the cell's scale) Simpson's rule over its integer points. */
static double cell_mass(log_pmf_fn lpmf, const double *par, double a, double w)
{
    if (w <= 64) {
        double m = 0.0;
        for (double k = a; k < a + w; k += 1.0) {
            m += exp(lpmf(k, par));
        }
        return m;
    }
    double h = (w - 1.0) / 4.0, m = 0.0;
    for (int i = 0; i <= 4; i++) {
        static const double simpson[5] = {1, 4, 2, 4, 1};
        m += simpson[i] * exp(lpmf(floor(a + i * h + 0.5), par));
    }
    return m * h / 3.0 * (w / (w - 1.0));
}

/* G-test of DRAWS draws against the pmf on CELLS cells of width w from lo, the mass outside
 * folded into the end cells. Returns the p-value. */
static double gof(draw_fn draw, log_pmf_fn lpmf, const double *par, double lo, double w,
                  uint64_t seed)
{
    static uint64_t obs[CELLS];
    static double expd[CELLS];
    sim_rng_t r;
    sim_rng_init(&r, seed);
    memset(obs, 0, sizeof(obs));
    double mass = 0.0;
    for (int i = 0; i < CELLS; i++) {
        expd[i] = cell_mass(lpmf, par, lo + i * w, w);
        mass += expd[i];
    }
    double left = 0.0; /* the left tail, summed until it vanishes */
    for (double k = lo - 1; k >= lo - 200000; k -= 1.0) {
        double p = exp(lpmf(k, par));
        left += p;
        if (p < 1e-300 && k < lo - 10) {
            break;
        }
    }
    expd[0] += left;
    expd[CELLS - 1] += fmax(1.0 - mass - left, 0.0);
    for (int i = 0; i < CELLS; i++) {
        expd[i] *= DRAWS;
    }
    for (uint32_t i = 0; i < DRAWS; i++) {
        double x = floor((draw(&r, par) - lo) / w);
        int cell = x <= 0 ? 0 : x >= CELLS - 1 ? CELLS - 1 : (int)x;
        obs[cell]++;
    }
    size_t n = stat_pool_tails(obs, expd, CELLS, MIN_EXPECTED);
    stat_gof_t g = stat_gof_test(obs, expd, n, STAT_G);
    print_message("#   cells %zu, G = %.1f, p = %.3g\n", n, g.statistic, g.p_value);
    return g.p_value;
}

/* Cells covering mean +- 8 sd. */
static double width_for(double sd)
{
    return fmax(1.0, ceil(16.0 * sd / 400.0));
}

static double draw_binom(sim_rng_t *r, const double *p)
{
    return (double)sim_rng_binomial(r, (uint64_t)p[0], p[1]);
}

static double lpmf_binom(double k, const double *p)
{
    return prob_log_dbinom(k, p[0], p[2]); /* p[2]: the pmf's p (p[1] for the sampler) */
}

static double draw_pois(sim_rng_t *r, const double *p)
{
    return (double)sim_rng_poisson(r, p[0]);
}

static double lpmf_pois(double k, const double *p)
{
    return k < 0 ? -INFINITY : prob_log_dpois(k, p[0]);
}

/* Sum of n geometrics with ratio rho = odds / (1 + odds): negative binomial. */
static double draw_geosum(sim_rng_t *r, const double *p)
{
    return (double)sim_rng_geometric_sum(r, (uint64_t)p[0], p[1]);
}

static double lpmf_nb(double k, const double *p)
{
    double n = p[0], rho = p[1] / (1.0 + p[1]);
    if (k < 0) {
        return -INFINITY;
    }
    return lgamma(k + n) - lgamma(n) - lgamma(k + 1.0) + n * log1p(-rho) + k * log(rho);
}

static double draw_dlap(sim_rng_t *r, const double *p)
{
    return (double)sim_rng_dlap_sum(r, 1, p[0]);
}

static double lpmf_dlap(double k, const double *p)
{
    double rho = exp(-1.0 / p[0]);
    return log((1.0 - rho) / (1.0 + rho)) - fabs(k) / p[0];
}

/* Discrete Gaussian: p[0] the sampler's sigma2, p[1] the pmf's; log Z in p[2] (set below). */
static double draw_dgauss(sim_rng_t *r, const double *p)
{
    return (double)sim_rng_dgauss(r, p[0]);
}

static double lpmf_dgauss(double k, const double *p)
{
    return -k * k / (2.0 * p[1]) - p[2];
}

static double dgauss_log_z(double sigma2)
{
    double z = 0.0, span = ceil(40.0 * sqrt(sigma2)) + 10.0;
    for (double k = -span; k <= span; k += 1.0) {
        z += exp(-k * k / (2.0 * sigma2));
    }
    return log(z);
}

static void test_dgauss(void **state)
{
    (void)state;
    static const double s2[] = {0.5, 3.0, 100.0, 1e4, 1048576.0};
    for (size_t i = 0; i < sizeof(s2) / sizeof(s2[0]); i++) {
        double p[3] = {s2[i], s2[i], dgauss_log_z(s2[i])}, sd = sqrt(s2[i]);
        double w = width_for(sd);
        print_message("# discrete Gaussian sigma2 = %g\n", s2[i]);
        assert_true(gof(draw_dgauss, lpmf_dgauss, p, -200.0 * w, w, 600 + i) > ALPHA);
    }
    /* negative control: a sampler at 1.02 sigma2 against the pmf at sigma2 */
    double bad[3] = {102.0, 100.0, dgauss_log_z(100.0)};
    print_message("# control: sampler at sigma2 102, pmf at 100\n");
    assert_true(gof(draw_dgauss, lpmf_dgauss, bad, -200.0, 1.0, 700) < ALPHA);
}

static void test_binomial(void **state)
{
    (void)state;
    static const double cases[][3] = {{50, 0.3, 0.3},    {1000, 0.4, 0.4},  {1000, 0.93, 0.93},
                                      {1e9, 0.37, 0.37}, {1e6, 2e-5, 2e-5}, {3e7, 0.5, 0.5}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const double *c = cases[i];
        double mean = c[0] * c[1], sd = sqrt(mean * (1 - c[1]));
        double lo = fmax(0.0, floor(mean - 8 * sd - 1));
        print_message("# binomial(%g, %g)\n", c[0], c[1]);
        assert_true(gof(draw_binom, lpmf_binom, c, lo, width_for(sd), 100 + i) > ALPHA);
    }
    /* negative control: draws with p = 0.404 tested against 0.4 */
    static const double off[3] = {1000, 0.404, 0.4};
    print_message("# negative control: binomial p off by 1%%\n");
    assert_true(gof(draw_binom, lpmf_binom, off, 250, 1, 7) < ALPHA);
}

static void test_poisson(void **state)
{
    (void)state;
    static const double cases[][1] = {{3.5}, {250}, {1e5}, {1e12}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double lam = cases[i][0], lo = fmax(0.0, floor(lam - 8 * sqrt(lam) - 1));
        print_message("# poisson(%g)\n", lam);
        assert_true(gof(draw_pois, lpmf_pois, cases[i], lo, width_for(sqrt(lam)), 200 + i) > ALPHA);
    }
}

static void test_geometric_sums(void **state)
{
    (void)state;
    static const double cases[][2] = {{1, 3.0}, {5, 3.0}, {40, 0.7}, {2000, 0.05}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double n = cases[i][0], odds = cases[i][1];
        double mean = n * odds, sd = sqrt(n * odds * (1 + odds));
        print_message("# sum of %g geometrics, odds %g\n", n, odds);
        assert_true(gof(draw_geosum, lpmf_nb, cases[i], fmax(0, floor(mean - 8 * sd)),
                        width_for(sd), 300 + i) > ALPHA);
    }
    static const double lap[1] = {2.5};
    print_message("# discrete Laplace t = 2.5\n");
    assert_true(gof(draw_dlap, lpmf_dlap, lap, -60, 1, 400) > ALPHA);
}

/* Sums of many discrete Laplace variables: mean 0 and variance n 2 rho / (1 - rho)^2. */
static void test_dlap_sum_moments(void **state)
{
    (void)state;
    sim_rng_t r;
    sim_rng_init(&r, 500);
    const double t = 131072.0, n = 1e9, reps = 20000;
    double rho = exp(-1.0 / t), var1 = 2.0 * rho / ((1 - rho) * (1 - rho)), s = 0, ss = 0;
    for (int i = 0; i < reps; i++) {
        double x = (double)sim_rng_dlap_sum(&r, (uint64_t)n, t) / sqrt(n * var1);
        s += x;
        ss += x * x;
    }
    double mean = s / reps, var = ss / reps - mean * mean;
    print_message("# dlap sum n=1e9 t=2^17: standardized mean %.4f, variance %.4f\n", mean, var);
    assert_true(fabs(mean) < 5.0 / sqrt(reps));            /* ~5 standard errors */
    assert_true(fabs(var - 1.0) < 5.0 * sqrt(2.0 / reps)); /* normal-ish: Var of s^2 ~ 2 */
}

static void test_special_functions(void **state)
{
    (void)state;
    assert_true(fabs(prob_beta_inc(2, 3, 0.5) - 0.6875) < 1e-14);
    assert_true(fabs(prob_beta_inc(0.5, 0.5, 0.25) - 1.0 / 3.0) < 1e-12); /* arcsine law */
    assert_true(fabs(prob_norm_cdf(1.959963984540054) - 0.975) < 1e-15);
    assert_true(fabs(prob_norm_sf(10.0) / 7.61985302416047e-24 - 1.0) < 1e-12); /* no 1 - cdf */
    /* Loader's forms against the direct formula where the latter is still accurate */
    for (double k = 0; k <= 60; k += 1) {
        double direct = -25.0 + k * log(25.0) - lgamma(k + 1.0);
        assert_true(fabs(prob_log_dpois(k, 25.0) - direct) < 1e-11);
        double b = lgamma(61) - lgamma(k + 1) - lgamma(61 - k) + k * log(0.3) + (60 - k) * log(0.7);
        assert_true(fabs(prob_log_dbinom(k, 60, 0.3) - b) < 1e-10);
    }
    /* the multinomial keeps every draw and follows its weights */
    sim_rng_t r;
    sim_rng_init(&r, 9);
    double p[4] = {0.5, 0.0, 0.25, 0.25}, tmp[4];
    uint64_t out[4];
    sim_rng_multinomial(&r, 1000000, p, 4, tmp, out);
    assert_true(out[0] + out[1] + out[2] + out[3] == 1000000 && out[1] == 0);
    assert_true(fabs((double)out[0] - 5e5) < 5 * 500.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binomial),          cmocka_unit_test(test_poisson),
        cmocka_unit_test(test_geometric_sums),    cmocka_unit_test(test_dlap_sum_moments),
        cmocka_unit_test(test_special_functions), cmocka_unit_test(test_dgauss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
