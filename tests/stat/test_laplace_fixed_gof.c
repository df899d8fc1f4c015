/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded-time discrete Laplace against the exact discrete Laplace pmf (its distance to it is
 * certified below 2^-48, far below what 10^7 samples can see). Fixed seeds, alpha = 1e-6. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "stat_dlap.h"
#include "stat_gof.h"
#include "stat_hist.h"
#include "test_rng.h"

#define SAMPLES stat_samples(10000000u, 0u) /* DPM_STAT_DIVISOR may reduce it */
#define ALPHA 1e-6

typedef struct {
    uint64_t sensitivity;
    dpm_eps_t eps;
    int64_t value;  /* the noised value: the test looks at out - value */
    uint64_t width; /* histogram cell width, in grid units */
    uint64_t seed;
} lap_cfg_t;

/* t = sensitivity / ε grid units: 1, 10 and 1000 / 3 (ε = 3 with sensitivity 1000). */
static const lap_cfg_t CFG[] = {
    {1, 65536, 0, 1, 11},
    {10, 65536, -123456, 1, 12},
    {1000, 196608, INT64_C(1) << 40, 4, 13},
};
#define NCFG (sizeof(CFG) / sizeof(CFG[0]))

static void test_laplace_fixed_gof(void **state)
{
    const lap_cfg_t *c = *state;
    dpm_laplace_fixed_t m;
    assert_int_equal(dpm_laplace_fixed_init(&m, c->sensitivity, c->eps), DPM_OK);
    long double t = (long double)c->sensitivity * 65536.0L / (long double)c->eps;
    /* cells cover +-12 t (expected counts beyond are pooled into the tails) */
    int64_t half = (int64_t)ceill(12.0L * t / (long double)c->width) * (int64_t)c->width;
    stat_hist_t h;
    assert_int_equal(stat_hist_init(&h, -half, c->width, (size_t)(2 * half) / c->width + 1), 0);

    test_rng_t tr;
    test_rng_seed(&tr, c->seed);
    dpm_rng_t port = test_rng_port(&tr);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    for (uint32_t i = 0; i < SAMPLES; i++) {
        int64_t out;
        if (dpm_laplace_fixed_add(&m, &r, c->value, &out) != DPM_OK) {
            fail_msg("sample %u failed", i);
        }
        stat_hist_add(&h, out - c->value);
    }
    assert_int_equal(dpm_rand_bits_used(&r), (uint64_t)SAMPLES * 2u * m.nbits * 64u);
    stat_hist_expect(&h, stat_dlap_mass, &t);
    stat_gof_t p = stat_hist_gof(&h, 20.0, STAT_PEARSON);
    stat_gof_t g = stat_hist_gof(&h, 20.0, STAT_G);
    printf("# t=%.3Lf nbits=%u: %zu cells, pearson %.1f (dof %.0f, p %.3g), G %.1f (p %.3g)\n", t,
           m.nbits, p.cells, p.statistic, p.dof, p.p_value, g.statistic, g.p_value);
    stat_hist_free(&h);
    assert_true(p.cells >= 10);
    assert_true(p.min_expected >= 20.0);
    assert_true(fabs(p.total_expected - (double)SAMPLES) < 1.0);
    assert_true(p.p_value > ALPHA);
    assert_true(g.p_value > ALPHA);
}

int main(void)
{
    struct CMUnitTest tests[NCFG];
    static char names[NCFG][48];
    for (size_t i = 0; i < NCFG; i++) {
        snprintf(names[i], sizeof(names[0]), "laplace_fixed_gof_sens%llu_eps%u",
                 (unsigned long long)CFG[i].sensitivity, CFG[i].eps);
        struct CMUnitTest one = {names[i], test_laplace_fixed_gof, NULL, NULL, (void *)&CFG[i]};
        tests[i] = one;
    }
    return cmocka_run_group_tests_name("laplace_fixed_gof", tests, NULL, NULL);
}
