/* SPDX-License-Identifier: Apache-2.0 */
/* GRR / RR output distribution: goodness of fit against the exact pmf (keep / 2^32 for the
 * true value, other / 2^32 for each other value), and an empirical privacy check on
 * neighbouring inputs. Fixed seeds, 10^7 samples per configuration, alpha = 1e-6. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "stat_gof.h"
#include "test_rng.h"

#define SAMPLES stat_samples(10000000u, 0u) /* DPM_STAT_DIVISOR may reduce it */
#define ALPHA 1e-6
#define TWO32 4294967296.0
#define MAX_K 256u

typedef struct {
    uint32_t k;
    dpm_eps_t eps;
} grr_cfg_t;

/* k = 2, 4, 64, 256 at ε = 0.1 (Q16.16 6553), 1, 5 */
static const grr_cfg_t CFG[] = {
    {2, 6553},  {2, 65536},  {2, 327680},  {4, 6553},   {4, 65536},   {4, 327680},
    {64, 6553}, {64, 65536}, {64, 327680}, {256, 6553}, {256, 65536}, {256, 327680},
};
#define NCFG (sizeof(CFG) / sizeof(CFG[0]))

/* counts[y] of SAMPLES reports for input x, from a seeded generator. */
static void sample_counts(const dpm_grr_t *g, uint32_t x, uint64_t seed, uint64_t *counts)
{
    test_rng_t t;
    test_rng_seed(&t, seed);
    dpm_rng_t port = test_rng_port(&t);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    memset(counts, 0, g->k * sizeof(*counts));
    for (uint32_t i = 0; i < SAMPLES; i++) {
        uint32_t y;
        if (dpm_grr_perturb(g, &r, x, &y) != DPM_OK || y >= g->k) {
            fail_msg("perturb failed or y out of range");
        }
        counts[y]++;
    }
}

static void expected_counts(const dpm_grr_t *g, uint32_t x, double *expected)
{
    for (uint32_t y = 0; y < g->k; y++) {
        expected[y] = (double)SAMPLES * (y == x ? g->keep : g->other) / TWO32;
    }
}

/* Pearson and G statistics both accept the exact pmf at alpha = 1e-6. The input x = k - 1
 * makes every flipped report wrap around modulo k. */
static void test_grr_gof(void **state)
{
    const grr_cfg_t *c = *state;
    dpm_grr_t g;
    assert_int_equal(dpm_grr_init(&g, c->k, c->eps), DPM_OK);
    uint64_t counts[MAX_K];
    double expected[MAX_K];
    uint32_t x = c->k - 1u;
    sample_counts(&g, x, 1000u + c->k * 7u + c->eps, counts);
    expected_counts(&g, x, expected);
    stat_gof_t p = stat_gof_test(counts, expected, c->k, STAT_PEARSON);
    stat_gof_t gt = stat_gof_test(counts, expected, c->k, STAT_G);
    printf("# k=%u eps=%u: pearson %.2f (dof %.0f, p %.3g), G %.2f (p %.3g), min E %.0f\n", c->k,
           c->eps, p.statistic, p.dof, p.p_value, gt.statistic, gt.p_value, p.min_expected);
    assert_true(p.min_expected >= 20.0);
    assert_true(p.total_observed == (double)SAMPLES);
    assert_true(fabs(p.total_expected - (double)SAMPLES) < 1e-3);
    assert_true(p.p_value > ALPHA);
    assert_true(gt.p_value > ALPHA);
}

/* Neighbouring inputs x = 0, x' = 1. For every output y, Clopper-Pearson bounds (Bonferroni
 * over all cells, both directions and all configurations: total alpha 1e-6) give a lower
 * confidence bound of Pr[y | x] / Pr[y | x'] that must not exceed e^ε; the true ratio at y = x,
 * keep / other, must also lie inside the two-sided interval (so the check has power). */
static void test_grr_privacy_ratio(void **state)
{
    const grr_cfg_t *c = *state;
    dpm_grr_t g;
    assert_int_equal(dpm_grr_init(&g, c->k, c->eps), DPM_OK);
    uint64_t a[MAX_K];
    uint64_t b[MAX_K];
    sample_counts(&g, 0, 5000u + c->k + c->eps, a);
    sample_counts(&g, 1, 9000u + c->k + c->eps, b);
    /* each cell and direction uses two one-sided bounds */
    double alpha = ALPHA / ((double)NCFG * c->k * 2.0 * 2.0);
    double bound = exp((double)c->eps / 65536.0);
    double worst = 0.0;
    for (uint32_t y = 0; y < c->k; y++) {
        double a_lo = stat_binom_lower(a[y], SAMPLES, alpha);
        double a_hi = stat_binom_upper(a[y], SAMPLES, alpha);
        double b_lo = stat_binom_lower(b[y], SAMPLES, alpha);
        double b_hi = stat_binom_upper(b[y], SAMPLES, alpha);
        assert_true(a_lo > 0.0 && b_lo > 0.0);
        double lower_ab = a_lo / b_hi; /* Pr[y | 0] / Pr[y | 1] is at least this */
        double lower_ba = b_lo / a_hi;
        assert_true(lower_ab <= bound);
        assert_true(lower_ba <= bound);
        worst = fmax(worst, fmax(lower_ab, lower_ba));
        if (y == 0) {
            double truth = (double)g.keep / g.other;
            assert_true(lower_ab <= truth && truth <= a_hi / b_lo);
        }
    }
    printf("# k=%u eps=%u: largest lower confidence bound of a ratio %.5f <= e^eps %.5f\n", c->k,
           c->eps, worst, bound);
}

int main(void)
{
    struct CMUnitTest tests[2 * NCFG];
    static char names[2 * NCFG][48];
    for (size_t i = 0; i < NCFG; i++) {
        snprintf(names[2 * i], sizeof(names[0]), "grr_gof_k%u_eps%u", CFG[i].k, CFG[i].eps);
        snprintf(names[2 * i + 1], sizeof(names[0]), "grr_privacy_k%u_eps%u", CFG[i].k, CFG[i].eps);
        struct CMUnitTest gof = {names[2 * i], test_grr_gof, NULL, NULL, (void *)&CFG[i]};
        struct CMUnitTest priv = {names[2 * i + 1], test_grr_privacy_ratio, NULL, NULL,
                                  (void *)&CFG[i]};
        tests[2 * i] = gof;
        tests[2 * i + 1] = priv;
    }
    return cmocka_run_group_tests_name("grr_gof", tests, NULL, NULL);
}
