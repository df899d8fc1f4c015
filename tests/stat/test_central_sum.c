/* SPDX-License-Identifier: Apache-2.0 */
/* The law of two aggregators' central noise on a released DAP sum and its exact interval
 * (host-sim/estimate/central_sum.h). Checked:
 *   - the closed forms against direct sums: the pmf sums to 1 and has variance 4p/(1-p)^2; the
 *     tail equals the summed pmf; at scales 0.5, 3, 30 and 5,000 grid units;
 *   - the pmf against the real noise: Z1 + Z2 drawn with the SDK's dpm_laplace_add exactly as
 *     aggregator/share.c draws each aggregator's (sensitivity 120, eps 4: t = 30; and
 *     sensitivity 1, eps 2: t = 0.5), 10^6 draws, G-test at alpha = 1e-6 (tails pooled to >= 20
 *     expected); negative control: one draw's law (a single discrete Laplace) is rejected;
 *   - the interval's coverage: the half-width at 0.95 and 0.5 holds the drawn sums at least at
 *     the nominal level (one-sided binomial test at 1e-6) and at the rate the exact law gives
 *     (two-sided, 1e-6), and is the smallest that does (K - 1 covers less than nominal by the
 *     exact law); negative control: the half-width of one
 *     draw's law covers below 0.95, rejected;
 *   - the discrete Gaussian law (two dpm_dgauss draws of sigma2 each): its closed form against a
 *     direct convolution at sigma2 1, 3, 50 and 2,000, mass, variance, tail, the smallest
 *     half-width; 10^6 real draws at sigma2 200 fit it (G-test) and its 0.95 and 0.5 intervals
 *     cover at their levels, with one draw's law and half-width as controls that must fail.
 * Fixed seeds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "estimate/central_sum.h"
#include "stat_dlap.h"
#include "stat_gof.h"
#include "test_rng.h"

#define ALPHA 1e-6
#define N_DRAWS stat_samples(1000000u, 200000u)

static void close_to(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * fabs(want) + 1e-300)) {
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
    }
}

static void closed_forms_match_direct_sums(void **state)
{
    (void)state;
    const uint64_t sens[] = {1, 3, 30, 5000};
    for (size_t i = 0; i < 4; i++) {
        dpm_csum_noise_t n;
        /* t = sens x 2^16 / eps: eps 2 for the first (t = 0.5), eps 1 for the others */
        assert_int_equal(dpm_csum_noise_init(&n, sens[i], i == 0 ? 2u << 16 : 1u << 16), DPM_OK);
        const int64_t range = (int64_t)(n.scale * 80.0) + 40;
        double total = 0, var = 0, tail5 = 0;
        const uint64_t k5 = (uint64_t)(n.scale * 5.0);
        for (int64_t k = -range; k <= range; k++) {
            double pk = dpm_csum_pmf(&n, k);
            total += pk;
            var += (double)k * (double)k * pk;
            tail5 += k > (int64_t)k5 ? pk : 0.0;
        }
        close_to(total, 1.0, 1e-9, "total mass");
        close_to(var, n.var, 1e-7, "variance");
        close_to(dpm_csum_tail(&n, k5), tail5, 1e-7, "tail beyond 5 scales");
        close_to(dpm_csum_tail(&n, 0), (1.0 - dpm_csum_pmf(&n, 0)) / 2.0, 1e-9, "tail beyond 0");
    }
    dpm_csum_noise_t n;
    assert_int_equal(dpm_csum_noise_init(&n, 0, 1u << 16), DPM_ERR_PARAM);
    assert_int_equal(dpm_csum_noise_init(&n, 1, 0), DPM_ERR_PARAM);
    uint64_t k = 0;
    assert_int_equal(dpm_csum_noise_init(&n, 1, 1u << 16), DPM_OK);
    assert_int_equal(dpm_csum_halfwidth(&n, 1.0, &k), DPM_ERR_PARAM);
    assert_int_equal(dpm_csum_halfwidth(&n, 0.0, &k), DPM_ERR_PARAM);
}

/* n two-draw sums of the SDK's noise at (sens, eps) into sums[]. */
static void draw(uint64_t sens, dpm_eps_t eps, uint64_t seed, int64_t *sums, uint32_t n)
{
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &port, seed), DPM_OK);
    dpm_laplace_t lap;
    assert_int_equal(dpm_laplace_init(&lap, sens, eps), DPM_OK);
    for (uint32_t i = 0; i < n; i++) {
        int64_t a = 0, b = 0;
        assert_int_equal(dpm_laplace_add(&lap, &r, 0, &a), DPM_OK); /* the leader's */
        assert_int_equal(dpm_laplace_add(&lap, &r, 0, &b), DPM_OK); /* the helper's */
        sums[i] = a + b;
    }
}

/* G-test of the draws against pmf(k) (two: the two-draw law; one: a single draw's, the
 * control). The p-value. */
static double gof(const dpm_csum_noise_t *n, const int64_t *sums, uint32_t count, int two)
{
    const int64_t range = (int64_t)(n->scale * 40.0) + 20;
    size_t cells = (size_t)(2 * range + 1);
    uint64_t *obs = calloc(cells, sizeof(*obs));
    double *exp_ = calloc(cells, sizeof(*exp_));
    assert_true(obs && exp_);
    for (uint32_t i = 0; i < count; i++) {
        int64_t k = sums[i] < -range ? -range : sums[i] > range ? range : sums[i];
        obs[k + range]++;
    }
    for (int64_t k = -range; k <= range; k++) {
        double pk = two ? dpm_csum_pmf(n, k) : (double)stat_dlap_pmf((long double)n->scale, k);
        exp_[k + range] = pk * count;
    }
    /* fold the outer tails into the end cells */
    long double t = (long double)n->scale;
    double tail =
        two ? dpm_csum_tail(n, (uint64_t)range) : (double)stat_dlap_mass(&t, range + 1, INT64_MAX);
    exp_[0] += tail * count;
    exp_[cells - 1] += tail * count;
    size_t m = stat_pool_tails(obs, exp_, cells, 20.0);
    stat_gof_t g = stat_gof_test(obs, exp_, m, STAT_G);
    free(obs);
    free(exp_);
    return g.p_value;
}

static void the_sdk_noise_has_this_law(void **state)
{
    (void)state;
    const struct {
        uint64_t sens;
        dpm_eps_t eps;
    } cfg[] = {{120, 4u << 16}, {1, 2u << 16}};
    uint32_t n = N_DRAWS;
    int64_t *sums = malloc(sizeof(*sums) * n);
    assert_non_null(sums);
    for (size_t c = 0; c < 2; c++) {
        dpm_csum_noise_t law;
        assert_int_equal(dpm_csum_noise_init(&law, cfg[c].sens, cfg[c].eps), DPM_OK);
        draw(cfg[c].sens, cfg[c].eps, 4100 + c, sums, n);
        double p2 = gof(&law, sums, n, 1), p1 = gof(&law, sums, n, 0);
        printf("# t = %g: two-draw law p = %.3g; one draw's law (control) p = %.3g\n", law.scale,
               p2, p1);
        if (!(p2 >= ALPHA)) {
            fail_msg("the two-draw law is rejected at t = %g: p = %g", law.scale, p2);
        }
        if (!(p1 < ALPHA)) {
            fail_msg("control: one draw's law is not rejected at t = %g: p = %g", law.scale, p1);
        }
    }
    free(sums);
}

static void the_interval_covers_at_its_level(void **state)
{
    (void)state;
    const uint64_t sens = 120;
    const dpm_eps_t eps = 4u << 16;
    dpm_csum_noise_t law;
    assert_int_equal(dpm_csum_noise_init(&law, sens, eps), DPM_OK);
    uint32_t n = N_DRAWS;
    int64_t *sums = malloc(sizeof(*sums) * n);
    assert_non_null(sums);
    draw(sens, eps, 4200, sums, n);
    const double levels[] = {0.95, 0.5};
    for (size_t l = 0; l < 2; l++) {
        uint64_t k = 0;
        assert_int_equal(dpm_csum_halfwidth(&law, levels[l], &k), DPM_OK);
        /* the smallest: K covers at least the level by the exact law, K - 1 does not */
        assert_true(1.0 - 2.0 * dpm_csum_tail(&law, k) >= levels[l]);
        assert_true(k == 0 || 1.0 - 2.0 * dpm_csum_tail(&law, k - 1) < levels[l]);
        uint32_t in = 0;
        for (uint32_t i = 0; i < n; i++) {
            in += (uint32_t)(llabs(sums[i]) <= (long long)k);
        }
        double upper = stat_binom_upper(in, n, ALPHA);
        const double exact = 1.0 - 2.0 * dpm_csum_tail(&law, k);
        const double pv = stat_binom_two_sided(in, n, exact);
        printf("# level %.2f: half-width %llu (%.2f scales), covered %.5f (upper bound %.5f; "
               "the exact law says %.5f, p = %.3g)\n",
               levels[l], (unsigned long long)k, (double)k / law.scale, (double)in / n, upper,
               exact, pv);
        if (!(upper >= levels[l]) || !(pv >= ALPHA)) {
            fail_msg("level %.2f: coverage %.5f (upper bound %.5f, exact %.5f, p %g)", levels[l],
                     (double)in / n, upper, exact, pv);
        }
    }
    /* control: the half-width of ONE draw's law (an aggregator forgetting the other's noise) */
    const double t = law.scale, p = law.p;
    uint64_t k1 = 0; /* smallest K with 1 - 2 p^(K+1) / (1 + p) >= 0.95 */
    while (1.0 - 2.0 * pow(p, (double)k1 + 1.0) / (1.0 + p) < 0.95) {
        k1++;
    }
    uint32_t in = 0;
    for (uint32_t i = 0; i < n; i++) {
        in += (uint32_t)(llabs(sums[i]) <= (long long)k1);
    }
    double upper = stat_binom_upper(in, n, ALPHA);
    printf("# control: one draw's half-width %llu (t = %g) covers %.5f (upper bound %.5f)\n",
           (unsigned long long)k1, t, (double)in / n, upper);
    if (!(upper < 0.95)) {
        fail_msg("control: one draw's half-width is not rejected (upper bound %.5f)", upper);
    }
    free(sums);
}

/* ---- discrete Gaussian noise (central_sum.h's second law) -------------------------------- */

/* One discrete Gaussian's pmf at sigma2 s on [-r, r] (r >= 12 sqrt(s) + 2), into g[0 .. 2r]. */
static void one_gauss(double s, int64_t r, double *g)
{
    double z = 0;
    for (int64_t j = -r; j <= r; j++) {
        g[j + r] = exp(-(double)j * (double)j / (2.0 * s));
        z += g[j + r];
    }
    for (int64_t j = -r; j <= r; j++) {
        g[j + r] /= z;
    }
}

static void gauss_law_matches_direct_convolution(void **state)
{
    (void)state;
    const uint64_t s2[] = {1, 3, 50, 2000};
    for (size_t i = 0; i < 4; i++) {
        dpm_csum_noise_t n;
        assert_int_equal(dpm_csum_noise_init_gauss(&n, s2[i]), DPM_OK);
        const int64_t r = (int64_t)ceil(12.0 * sqrt((double)s2[i])) + 2;
        double *g = calloc((size_t)(2 * r + 1), sizeof(*g));
        assert_non_null(g);
        one_gauss((double)s2[i], r, g);
        double total = 0, var = 0;
        for (int64_t k = -2 * r; k <= 2 * r; k++) {
            double conv = 0; /* sum_j g(j) g(k - j) */
            for (int64_t j = k - r > -r ? k - r : -r; j <= r && j <= k + r; j++) {
                conv += g[j + r] * g[k - j + r];
            }
            if (llabs(k) <= r) { /* beyond, the truncated convolution misses terms */
                close_to(dpm_csum_pmf(&n, k), conv, 1e-9, "pmf against the convolution");
            }
            total += dpm_csum_pmf(&n, k);
            var += (double)k * (double)k * dpm_csum_pmf(&n, k);
        }
        close_to(total, 1.0, 1e-12, "total mass");
        close_to(var, n.var, 1e-9, "variance");
        assert_true(n.var <= 2.0 * (double)s2[i] * (1.0 + 1e-12));
        double tail = 0;
        const uint64_t k3 = (uint64_t)(3.0 * n.scale);
        for (int64_t k = (int64_t)k3 + 1; k <= 2 * r; k++) {
            tail += dpm_csum_pmf(&n, k);
        }
        close_to(dpm_csum_tail(&n, k3), tail, 1e-9, "tail beyond 3 sigma");
        uint64_t k = 0;
        assert_int_equal(dpm_csum_halfwidth(&n, 0.95, &k), DPM_OK);
        assert_true(1.0 - 2.0 * dpm_csum_tail(&n, k) >= 0.95 - 1e-12);
        assert_true(k == 0 || 1.0 - 2.0 * dpm_csum_tail(&n, k - 1) < 0.95);
        free(g);
    }
    dpm_csum_noise_t n; /* the largest: mass and variance still right */
    assert_int_equal(dpm_csum_noise_init_gauss(&n, (uint64_t)1 << 30), DPM_OK);
    close_to(n.var, 2.0 * 1073741824.0, 1e-9, "variance at 2^30");
    /* a confidence of 1 - 1e-15 (where a cumulative sum stalls below 1): still the smallest K,
     * from the tail; below 1e-60 refused */
    assert_int_equal(dpm_csum_noise_init_gauss(&n, (uint64_t)1 << 20), DPM_OK);
    uint64_t k = 0;
    assert_int_equal(dpm_csum_halfwidth(&n, 1.0 - 1e-15, &k), DPM_OK);
    assert_true(2.0 * dpm_csum_tail(&n, k) <= 1e-15 * 1.0000001);
    assert_true(2.0 * dpm_csum_tail(&n, k - 1) > 1e-15 * 0.9999999);
    assert_true(k > 8u * 1024u && k < 13u * 1024u); /* about 8 sd of S, sd 1448 */
    assert_int_equal(dpm_csum_halfwidth(&n, 1.0 - 1e-61, &k), DPM_ERR_PARAM);
    assert_int_equal(dpm_csum_noise_init_gauss(&n, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_csum_noise_init_gauss(&n, ((uint64_t)1 << 30) + 1u), DPM_ERR_PARAM);
    assert_int_equal(dpm_csum_noise_init_gauss(NULL, 1), DPM_ERR_PARAM);
}

/* The real noise (dpm_dgauss twice, as aggregator/share.c draws it) has this law and the
 * interval covers at its level; controls: one draw's law and one draw's half-width fail. */
static void gauss_draws_have_this_law_and_coverage(void **state)
{
    (void)state;
    const uint64_t s2 = 200;
    dpm_csum_noise_t law;
    assert_int_equal(dpm_csum_noise_init_gauss(&law, s2), DPM_OK);
    uint32_t n = N_DRAWS;
    int64_t *sums = malloc(sizeof(*sums) * n);
    assert_non_null(sums);
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &port, 4300), DPM_OK);
    for (uint32_t i = 0; i < n; i++) {
        int64_t a = 0, b = 0;
        assert_int_equal(dpm_dgauss(&r, s2, &a), DPM_OK); /* the leader's */
        assert_int_equal(dpm_dgauss(&r, s2, &b), DPM_OK); /* the helper's */
        sums[i] = a + b;
    }
    const int64_t range = 200; /* 10 sd of S; the end cells take the rest */
    const size_t cells = 2 * range + 1;
    const int64_t r1 = (int64_t)ceil(12.0 * sqrt((double)s2)) + 2;
    double *one = calloc((size_t)(2 * r1 + 1), sizeof(*one));
    assert_non_null(one);
    one_gauss((double)s2, r1, one);
    for (int two = 1; two >= 0; two--) {
        uint64_t *obs = calloc(cells, sizeof(*obs));
        double *e = calloc(cells, sizeof(*e));
        assert_true(obs && e);
        for (uint32_t i = 0; i < n; i++) {
            int64_t k = sums[i] < -range ? -range : sums[i] > range ? range : sums[i];
            obs[k + range]++;
        }
        double inside = 0;
        for (int64_t k = -range + 1; k < range; k++) {
            double pk = two ? dpm_csum_pmf(&law, k) : (llabs(k) <= r1 ? one[k + r1] : 0.0);
            e[k + range] = pk * n;
            inside += pk;
        }
        e[0] = e[cells - 1] = (1.0 - inside) / 2.0 * n;
        size_t m = stat_pool_tails(obs, e, cells, 20.0);
        stat_gof_t g = stat_gof_test(obs, e, m, STAT_G);
        printf("# gaussian sigma2 %llu: %s law p = %.3g\n", (unsigned long long)s2,
               two ? "two-draw" : "one draw's (control)", g.p_value);
        if (two ? !(g.p_value >= ALPHA) : !(g.p_value < ALPHA)) {
            fail_msg("%s law: p = %g", two ? "the two-draw" : "control: one draw's", g.p_value);
        }
        free(obs);
        free(e);
    }
    const double levels[] = {0.95, 0.5};
    for (size_t l = 0; l < 2; l++) {
        uint64_t k = 0;
        assert_int_equal(dpm_csum_halfwidth(&law, levels[l], &k), DPM_OK);
        uint32_t in = 0;
        for (uint32_t i = 0; i < n; i++) {
            in += (uint32_t)(llabs(sums[i]) <= (long long)k);
        }
        const double exact = 1.0 - 2.0 * dpm_csum_tail(&law, k);
        const double upper = stat_binom_upper(in, n, ALPHA);
        const double pv = stat_binom_two_sided(in, n, exact);
        printf("# gaussian level %.2f: half-width %llu, covered %.5f (upper bound %.5f; exact "
               "%.5f, p = %.3g)\n",
               levels[l], (unsigned long long)k, (double)in / n, upper, exact, pv);
        if (!(upper >= levels[l]) || !(pv >= ALPHA)) {
            fail_msg("gaussian level %.2f: coverage %.5f", levels[l], (double)in / n);
        }
    }
    uint64_t k1 = 0; /* control: the smallest K one draw's law covers 0.95 with */
    for (double c = one[r1]; c < 0.95; c += 2.0 * one[r1 + (int64_t)k1]) {
        k1++;
    }
    uint32_t in = 0;
    for (uint32_t i = 0; i < n; i++) {
        in += (uint32_t)(llabs(sums[i]) <= (long long)k1);
    }
    printf("# gaussian control: one draw's half-width %llu covers %.5f\n", (unsigned long long)k1,
           (double)in / n);
    if (!(stat_binom_upper(in, n, ALPHA) < 0.95)) {
        fail_msg("control: one draw's half-width is not rejected");
    }
    free(one);
    free(sums);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_forms_match_direct_sums),
        cmocka_unit_test(the_sdk_noise_has_this_law),
        cmocka_unit_test(the_interval_covers_at_its_level),
        cmocka_unit_test(gauss_law_matches_direct_convolution),
        cmocka_unit_test(gauss_draws_have_this_law_and_coverage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
