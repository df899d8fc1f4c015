/* SPDX-License-Identifier: Apache-2.0 */
/* Empirical privacy of the fixed-point Laplace mechanism. For neighbouring values v and
 * v' = v + sensitivity, 10^7 releases of each estimate Pr[M(v) = y] and Pr[M(v') = y] for
 * every y in a central window (both expected counts >= 1000). With Clopper-Pearson bounds at a
 * total alpha of 1e-6 (Bonferroni over every bound used), the lower confidence bound of each
 * ratio Pr[M(v) = y] / Pr[M(v') = y], either way round, must not exceed e^eps. Outside
 * [v, v'] the true ratio is exactly e^eps, so its upper confidence bound must reach e^eps: the
 * noise is no wider than the promised ε needs. A negative control runs the same check on noise
 * 10% too narrow and must find a violation. */
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
#include "stat_dlap.h"
#include "stat_gof.h"
#include "test_rng.h"

#define N_RELEASES stat_samples(10000000u, 0u) /* DPM_STAT_DIVISOR may reduce it */
#define TOTAL_ALPHA 1e-6
#define MIN_COUNT 1000.0L
#define VALUE 1000

typedef struct {
    uint64_t num; /* noise scale num / den grid units */
    uint64_t den;
    int use_mechanism; /* through dpm_laplace_add (else dpm_dlap_add with num / den) */
    dpm_laplace_t mech;
} source_t;

/* counts[y - lo] for y in [lo, lo + ny) over N_RELEASES releases of `value` */
static void release_histogram(const source_t *src, int64_t value, uint64_t seed, int64_t lo,
                              size_t ny, uint64_t *counts)
{
    test_rng_t rng;
    test_rng_seed(&rng, seed);
    dpm_rng_t port = test_rng_port(&rng);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    memset(counts, 0, ny * sizeof(*counts));
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        int64_t y;
        dpm_status_t st = src->use_mechanism ? dpm_laplace_add(&src->mech, &r, value, &y)
                                             : dpm_dlap_add(&r, src->num, src->den, value, &y);
        assert_int_equal(st, DPM_OK);
        if (y >= lo && (uint64_t)(y - lo) < ny) {
            counts[y - lo]++;
        }
    }
}

typedef struct {
    int violations;     /* y whose ratio lower bound exceeds e^eps */
    int too_wide;       /* y outside [v, v'] whose ratio upper bound stays below e^eps */
    double max_lower;   /* largest lower confidence bound of a ratio */
    double max_point;   /* largest ratio of the counts */
} privacy_check_t;

static privacy_check_t check_ratios(const uint64_t *c1, const uint64_t *c2, int64_t lo,
                                    size_t ny, int64_t v, int64_t v2, double e_eps)
{
    privacy_check_t out = {0, 0, 0.0, 0.0};
    double a = TOTAL_ALPHA / (4.0 * (double)ny); /* 4 bounds per y */
    for (size_t i = 0; i < ny; i++) {
        int64_t y = lo + (int64_t)i;
        double l1 = stat_binom_lower(c1[i], N_RELEASES, a);
        double u1 = stat_binom_upper(c1[i], N_RELEASES, a);
        double l2 = stat_binom_lower(c2[i], N_RELEASES, a);
        double u2 = stat_binom_upper(c2[i], N_RELEASES, a);
        double lower = fmax(l1 / u2, l2 / u1);
        double point = fmax((double)c1[i] / (double)c2[i], (double)c2[i] / (double)c1[i]);
        out.max_lower = fmax(out.max_lower, lower);
        out.max_point = fmax(out.max_point, point);
        out.violations += lower > e_eps;
        /* y <= v: Pr[M(v) = y] / Pr[M(v') = y] = e^eps exactly; y >= v': the other way */
        if ((y <= v && u1 / l2 < e_eps) || (y >= v2 && u2 / l1 < e_eps)) {
            out.too_wide++;
        }
    }
    return out;
}

/* The window where both neighbours expect at least MIN_COUNT releases at scale t. */
static void central_window(long double t, int64_t v, int64_t v2, int64_t *lo, size_t *ny)
{
    int64_t reach = 0;
    while ((long double)N_RELEASES * stat_dlap_pmf(t, reach + 1) >= MIN_COUNT) {
        reach++;
    }
    *lo = v2 - reach;
    assert_true(v + reach >= *lo);
    *ny = (size_t)(v + reach - *lo + 1);
}

static privacy_check_t run_check(const source_t *src, uint64_t sens, dpm_eps_t eps,
                                 uint64_t seed)
{
    long double t = (long double)src->num / (long double)src->den;
    int64_t v = VALUE;
    int64_t v2 = VALUE + (int64_t)sens;
    int64_t lo;
    size_t ny;
    central_window(t, v, v2, &lo, &ny);
    uint64_t *c1 = calloc(ny, sizeof(*c1));
    uint64_t *c2 = calloc(ny, sizeof(*c2));
    assert_non_null(c1);
    assert_non_null(c2);
    release_histogram(src, v, seed, lo, ny, c1);
    release_histogram(src, v2, seed + 1000, lo, ny, c2);
    double e_eps = exp((double)eps / 65536.0);
    privacy_check_t pc = check_ratios(c1, c2, lo, ny, v, v2, e_eps);
    print_message("# sens %llu, eps %u/65536, noise scale %llu/%llu: %zu outputs, e^eps = %.5f, "
                  "max ratio %.5f, max lower bound %.5f, violations %d, too wide %d\n",
                  (unsigned long long)sens, (unsigned)eps, (unsigned long long)src->num,
                  (unsigned long long)src->den, ny, e_eps, pc.max_point, pc.max_lower,
                  pc.violations, pc.too_wide);
    free(c1);
    free(c2);
    return pc;
}

static void check_mechanism(uint64_t sens, dpm_eps_t eps, uint64_t seed)
{
    source_t src;
    memset(&src, 0, sizeof(src));
    assert_int_equal(dpm_laplace_init(&src.mech, sens, eps), DPM_OK);
    src.use_mechanism = 1;
    src.num = src.mech.scale_num;
    src.den = src.mech.scale_den;
    privacy_check_t pc = run_check(&src, sens, eps, seed);
    assert_int_equal(pc.violations, 0);
    assert_int_equal(pc.too_wide, 0);
}

static void test_privacy_sens2_eps1(void **state)
{
    (void)state;
    check_mechanism(2, DPM_EPS_ONE, 11);
}

static void test_privacy_sens2_eps_half(void **state)
{
    (void)state;
    check_mechanism(2, DPM_EPS_ONE / 2, 12);
}

static void test_privacy_sens1_eps_tenth(void **state)
{
    (void)state;
    check_mechanism(1, 6553, 13); /* "0.1": scale 65536/6553, a non-integer */
}

/* Noise at 0.9 times the scale that sensitivity 2, eps 1 needs: ε is really 1/0.9, and the
 * same check must see it. */
static void test_privacy_check_catches_narrow_noise(void **state)
{
    (void)state;
    source_t src;
    memset(&src, 0, sizeof(src));
    src.num = 9; /* 2 * 9/10 */
    src.den = 5;
    privacy_check_t pc = run_check(&src, 2, DPM_EPS_ONE, 14);
    assert_true(pc.violations > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_privacy_sens2_eps1),
        cmocka_unit_test(test_privacy_sens2_eps_half),
        cmocka_unit_test(test_privacy_sens1_eps_tenth),
        cmocka_unit_test(test_privacy_check_catches_narrow_noise),
    };
    return cmocka_run_group_tests_name("laplace_privacy", tests, NULL, NULL);
}
