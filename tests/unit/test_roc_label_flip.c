/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist estimator with labels flipped on the device (host-sim/estimate/roc.h: the
 * hybrid): label_flip = 0 computes exactly what the estimator computed before label flips (a
 * frozen copy of it, roc_before_label_flip.inc, on 4,000 random aggregates: noise-free, local,
 * central Laplace and Gaussian, uniform and random edges; bit for bit); the debias is exact on
 * the expected released counts; the variances equal the model's covariance of the released
 * sums through numerical gradients (an independent route: derivatives of the estimates in the
 * released sums, not the debiased ones); the parameter checks; and roc_central's ε0 -> q. */
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
#include "dpm/expert/noise.h"
#include "estimate/ci_flags.h"
#include "estimate/pr_calibration.h"
#include "estimate/roc.h"
#include "estimate/roc_central.h"
#include "test_rng.h"

#include "roc_before_label_flip.inc"

static uint32_t below(test_rng_t *t, uint32_t n)
{
    return (uint32_t)(test_rng_next(t) % n);
}

/* Random parameters of one of five kinds (noise-free, local Laplace, central Laplace, central
 * Gaussian, local with few reports) and random uniform or increasing edges. */
static void random_params(test_rng_t *t, uint32_t bins, dpm_roc_params_t *p)
{
    double scale = 0.5 + 40.0 * test_rng_unit(t);
    switch (below(t, 5)) {
    case 0: assert_int_equal(dpm_roc_params_init(p, bins, 0.0), DPM_OK); break;
    case 1:
    case 4: assert_int_equal(dpm_roc_params_init(p, bins, scale), DPM_OK); break;
    case 2: assert_int_equal(dpm_roc_params_init_central(p, bins, scale, 2), DPM_OK); break;
    default:
        assert_int_equal(dpm_roc_params_init_central_gauss(p, bins, 1.0 + 1e4 * test_rng_unit(t),
                                                           1 + below(t, 3)),
                         DPM_OK);
        break;
    }
    if (below(t, 2) == 0) {
        uint32_t edges[DPM_ROC_MAX_BINS], e = 0;
        for (uint32_t j = 0; j + 1 < bins; j++) {
            e += 1u + below(t, (UINT32_C(1) << 31) / bins - 1u);
            edges[j] = e;
        }
        assert_int_equal(dpm_roc_params_set_edges(p, edges, bins - 1u), DPM_OK);
    }
}

/* A random aggregate: counts of any size (a few to 10^6 per cell), noise of any size (cells
 * negative included), 1 .. 10^4 reports. */
static void random_agg(test_rng_t *t, uint32_t bins, dpm_roc_agg_t *a)
{
    assert_int_equal(dpm_roc_agg_init(a, bins), DPM_OK);
    double size = pow(10.0, 6.0 * test_rng_unit(t)), noise = pow(10.0, 4.0 * test_rng_unit(t));
    int noisy = below(t, 4) != 0;
    for (uint32_t b = 0; b < bins; b++) {
        a->pos[b] = (int64_t)(size * test_rng_unit(t) * (double)(b + 1) / bins);
        a->neg[b] = (int64_t)(size * test_rng_unit(t) * (double)(bins - b) / bins);
        if (noisy) {
            a->pos[b] += (int64_t)(noise * test_rng_normal(t));
            a->neg[b] += (int64_t)(noise * test_rng_normal(t));
        }
    }
    a->reports = 1 + below(t, 10000);
}

/* Every field bit for bit, except the ones label flips added (compared by value). */
static int same_estimate(const dpm_roc_estimate_t *now, const dpm_roc_estimate_t *before)
{
    dpm_roc_estimate_t b = *before;
    b.label_flip = now->label_flip;
    b.var_P = now->var_P;
    b.var_N = now->var_N;
    b.count_move = now->count_move;
    if (now->label_flip != 0.0) {
        return 0;
    }
    if (now->valid && (now->var_P != (double)now->bins * now->cell_noise_var ||
                       now->count_move != (now->cell_noise_var > 0.0 ? 1.0 : 0.0))) {
        return 0;
    }
    if (memcmp(now, &b, sizeof(b)) != 0) {
        const unsigned char *x = (const unsigned char *)now, *y = (const unsigned char *)&b;
        size_t i = 0;
        while (x[i] == y[i]) {
            i++;
        }
        print_error("first difference at byte %zu of the estimate\n", i);
        return 0;
    }
    return 1;
}

static void flip_zero_is_the_estimator_before_flips_bit_for_bit(void **state)
{
    (void)state;
    test_rng_t t;
    test_rng_seed(&t, 20240611);
    dpm_roc_estimate_t *now = malloc(sizeof(*now)), *before = malloc(sizeof(*before));
    assert_true(now != NULL && before != NULL);
    uint32_t valid = 0, noisy = 0, flagged = 0, negative = 0;
    for (uint32_t i = 0; i < 4000; i++) {
        uint32_t bins = 2 + below(&t, DPM_ROC_MAX_BINS - 1u);
        dpm_roc_params_t p;
        dpm_roc_agg_t a;
        random_params(&t, bins, &p);
        random_agg(&t, bins, &a);
        double c = 0.5 + 0.499 * test_rng_unit(&t);
        memset(now, 0xa5, sizeof(*now));
        memset(before, 0x5a, sizeof(*before));
        assert_int_equal(dpm_roc_estimate(&p, &a, c, now), DPM_OK);
        assert_int_equal(ref_roc_estimate(&p, &a, c, before), DPM_OK);
        if (!same_estimate(now, before)) {
            fail_msg("aggregate %u (bins %u, confidence %.4f) differs", i, bins, c);
        }
        for (uint32_t j = 0; now->valid && j <= bins; j++) {
            for (int fpr = 0; fpr < 2; fpr++) {
                dpm_roc_rate_t x, y;
                dpm_roc_rate_at(now, fpr, j, now->z, &x);
                ref_rate_at(before, fpr, j, before->z, &y);
                assert_memory_equal(&x, &y, sizeof(x));
            }
        }
        valid += (uint32_t)now->valid;
        noisy += now->valid && now->var_noise > 0.0;
        flagged += now->valid && (now->ci_flags | now->tpr_flags | now->unbinned_flags) != 0;
        negative += now->valid && now->projected;
    }
    print_message("# 4000 aggregates: %u valid, %u noisy, %u with a flag, %u with a negative "
                  "cell: all bit for bit\n",
                  valid, noisy, flagged, negative);
    /* the comparison reached every branch it guards */
    assert_true(valid > 3000 && noisy > 1500 && flagged > 100 && negative > 100);
    free(now);
    free(before);
}

/* The comparison can fail: a flip probability of 2^-40 changes the estimate. */
static void the_comparison_sees_a_tiny_flip(void **state)
{
    (void)state;
    test_rng_t t;
    test_rng_seed(&t, 7);
    dpm_roc_params_t p;
    dpm_roc_agg_t a;
    dpm_roc_estimate_t *now = malloc(sizeof(*now)), *before = malloc(sizeof(*before));
    assert_true(now != NULL && before != NULL);
    assert_int_equal(dpm_roc_params_init_central(&p, 12, 20.0, 2), DPM_OK);
    random_agg(&t, 12, &a);
    assert_int_equal(ref_roc_estimate(&p, &a, 0.95, before), DPM_OK);
    assert_int_equal(dpm_roc_params_set_label_flip(&p, ldexp(1.0, -40)), DPM_OK);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, now), DPM_OK);
    assert_true(before->valid && now->valid);
    assert_false(same_estimate(now, before));
    free(now);
    free(before);
}

static void set_label_flip_checks_its_argument(void **state)
{
    (void)state;
    dpm_roc_params_t p, keep;
    assert_int_equal(dpm_roc_params_init(&p, 8, 2.0), DPM_OK);
    assert_true(p.label_flip == 0.0);
    keep = p;
    static const double kBad[] = {-1e-300, 0.5, 0.75, 1.0, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); i++) {
        assert_int_equal(dpm_roc_params_set_label_flip(&p, kBad[i]), DPM_ERR_PARAM);
        assert_memory_equal(&p, &keep, sizeof(p));
    }
    assert_int_equal(dpm_roc_params_set_label_flip(&p, NAN), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_params_set_label_flip(NULL, 0.1), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_params_set_label_flip(&p, 0.499), DPM_OK);
    assert_true(p.label_flip == 0.499);
    assert_int_equal(dpm_roc_params_set_label_flip(&p, 0.0), DPM_OK);
    assert_memory_equal(&p, &keep, sizeof(p));
    /* a flip probability set by hand outside [0, 1/2) is refused by the estimator */
    dpm_roc_agg_t a;
    dpm_roc_estimate_t e;
    assert_int_equal(dpm_roc_agg_init(&a, 8), DPM_OK);
    p.label_flip = 0.5;
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &e), DPM_ERR_PARAM);
    /* the PR / calibration estimator has no debias: it refuses flipped sums */
    dpm_prc_estimate_t *pe = malloc(sizeof(*pe));
    assert_non_null(pe);
    p.label_flip = 0.1;
    assert_int_equal(dpm_prc_estimate(&p, &a, 0.95, pe), DPM_ERR_PARAM);
    free(pe);
}

/* The released counts' expectation, fed as the sums, gives back the true counts: every
 * estimate equals the exact one of the true counts. q = 1/4 and 1/8 on counts that are
 * multiples of 8, so the expected sums are integers and the debias exact in binary. */
static void the_debias_inverts_the_expected_release(void **state)
{
    (void)state;
    enum { B = 9 };
    static const uint64_t pos[B] = {8, 16, 40, 64, 200, 320, 800, 1600, 2400};
    static const uint64_t neg[B] = {4000, 3200, 2400, 1600, 800, 400, 160, 80, 0};
    double tpr[B + 1], fpr[B + 1], auc;
    assert_int_equal(dpm_roc_exact(pos, neg, B, tpr, fpr, &auc), DPM_OK);
    static const double kQ[] = {0.25, 0.125};
    for (size_t i = 0; i < 2; i++) {
        double q = kQ[i];
        dpm_roc_params_t p;
        dpm_roc_agg_t a;
        dpm_roc_estimate_t e, e0;
        assert_int_equal(dpm_roc_params_init_central(&p, B, 5.0, 2), DPM_OK);
        assert_int_equal(dpm_roc_agg_init(&a, B), DPM_OK);
        for (uint32_t b = 0; b < B; b++) {
            a.pos[b] = (int64_t)((1.0 - q) * (double)pos[b] + q * (double)neg[b]);
            a.neg[b] = (int64_t)(q * (double)pos[b] + (1.0 - q) * (double)neg[b]);
        }
        assert_int_equal(dpm_roc_params_set_label_flip(&p, q), DPM_OK);
        assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &e), DPM_OK);
        assert_true(e.valid);
        assert_true(fabs(e.auc_raw - auc) < 1e-15);
        double P = 0.0, N = 0.0;
        for (uint32_t b = 0; b < B; b++) {
            P += (double)pos[b];
            N += (double)neg[b];
        }
        assert_true(e.P == P && e.N == N);
        for (uint32_t j = 0; j <= B; j++) {
            assert_true(fabs(e.tpr[j] - tpr[j]) < 1e-15 && fabs(e.fpr[j] - fpr[j]) < 1e-15);
        }
        /* without the debias the flips pull the AUC toward 1/2 */
        p.label_flip = 0.0;
        assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &e0), DPM_OK);
        assert_true(fabs(e0.auc_raw - 0.5) < fabs(auc - 0.5) - 0.05);
        /* the flips' variance: more than the central noise's alone */
        assert_true(e.var_noise > e0.var_noise);
        assert_true(e.count_move == 1.0 / (1.0 - 2.0 * q));
    }
}

/* The released sums' covariance in bin b (roc.h): n_b q (1 - q) [[1, -1], [-1, 1]] + ns2 I. */
static double released_form(const double *hy, const double *hv, const double *n, uint32_t bins,
                            double q, double ns2)
{
    double v = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        double d = hy[b] - hv[b];
        v += n[b] * q * (1.0 - q) * d * d + ns2 * (hy[b] * hy[b] + hv[b] * hv[b]);
    }
    return v;
}

enum { STATS = 5 }; /* auc_raw, auc_unbinned_raw, tpr[J], fpr[J], unbinned_bound_raw */
#define J 4u

static void stats_of(const dpm_roc_params_t *p, const dpm_roc_agg_t *a, double *out)
{
    dpm_roc_estimate_t e;
    assert_int_equal(dpm_roc_estimate(p, a, 0.95, &e), DPM_OK);
    assert_true(e.valid);
    out[0] = e.auc_raw;
    out[1] = e.auc_unbinned_raw;
    out[2] = e.tpr[J];
    out[3] = e.fpr[J];
    out[4] = e.unbinned_bound_raw;
}

/* Each variance against central differences of its estimate in the released sums y_b, v_b,
 * taken through the released sums' covariance: a route that never forms the debiased
 * covariance. Large counts (10^7 per cell), steps of 2^8: the rounding and the curvature stay
 * below 1e-6 relative. */
static void variances_match_numerical_gradients(void **state)
{
    (void)state;
    enum { B = 10 };
    static const double kEps0[] = {0.5, 2.0, 8.0};
    for (size_t k = 0; k < 3; k++) {
        dpm_grr_t g;
        assert_int_equal(dpm_rr_init(&g, (dpm_eps_t)(kEps0[k] * 65536.0)), DPM_OK);
        double q = (double)g.other / 4294967296.0;
        dpm_roc_params_t p;
        assert_int_equal(dpm_roc_params_init_central(&p, B, 300.0, 2), DPM_OK);
        assert_int_equal(dpm_roc_params_set_label_flip(&p, q), DPM_OK);
        dpm_roc_agg_t a;
        assert_int_equal(dpm_roc_agg_init(&a, B), DPM_OK);
        double n[B];
        for (uint32_t b = 0; b < B; b++) {
            double pb = 1e6 * (1.0 + b * b), nb = 2e6 * (double)(B - b) * (B - b) / 4.0;
            a.pos[b] = (int64_t)((1.0 - q) * pb + q * nb);
            a.neg[b] = (int64_t)(q * pb + (1.0 - q) * nb);
            n[b] = (double)a.pos[b] + (double)a.neg[b];
        }
        dpm_roc_estimate_t e;
        assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &e), DPM_OK);
        double ns2 = e.cell_noise_var, hy[STATS][B], hv[STATS][B];
        const double h = 256.0;
        for (uint32_t b = 0; b < B; b++) {
            double up[STATS], dn[STATS];
            for (int cls = 0; cls < 2; cls++) {
                int64_t *cell = cls == 0 ? &a.pos[b] : &a.neg[b];
                *cell += (int64_t)h;
                stats_of(&p, &a, up);
                *cell -= 2 * (int64_t)h;
                stats_of(&p, &a, dn);
                *cell += (int64_t)h;
                for (int s = 0; s < STATS; s++) {
                    (cls == 0 ? hy : hv)[s][b] = (up[s] - dn[s]) / (2.0 * h);
                }
            }
        }
        double want[STATS],
            got[STATS] = {e.var_noise, e.unbinned_var_noise, e.tpr_sd[J] * e.tpr_sd[J],
                          e.fpr_sd[J] * e.fpr_sd[J], e.unbinned_bound_sd * e.unbinned_bound_sd};
        for (int s = 0; s < STATS; s++) {
            want[s] = released_form(hy[s], hv[s], n, B, q, ns2);
            print_message("# eps0 %g (q %.6f) statistic %d: variance %.6e, numerical %.6e\n",
                          kEps0[k], q, s, got[s], want[s]);
            assert_true(fabs(got[s] / want[s] - 1.0) < 1e-5);
        }
        /* P's variance: its gradient is ((1 - q), -q) / (1 - 2q) in every bin */
        double gy[B], gv[B];
        for (uint32_t b = 0; b < B; b++) {
            gy[b] = (1.0 - q) / (1.0 - 2.0 * q);
            gv[b] = -q / (1.0 - 2.0 * q);
        }
        double vp = released_form(gy, gv, n, B, q, ns2);
        assert_true(fabs(e.var_P / vp - 1.0) < 1e-12 && fabs(e.var_N / vp - 1.0) < 1e-12);
        /* the flips dominate at eps0 0.5: the RR part is most of the AUC's variance */
        double rr_only = released_form(hy[0], hv[0], n, B, q, 0.0);
        print_message("# eps0 %g: the flips' share of the AUC's noise variance %.3f\n", kEps0[k],
                      rr_only / want[0]);
        assert_true(k != 0 || rr_only / want[0] > 0.9);
    }
}

/* roc_central's ε0: q is the SDK's other / 2^32, exactly; 0 resets; bad values are refused
 * with a reason and leave the parameters as they were. */
static void central_local_eps_gives_the_sdks_q(void **state)
{
    (void)state;
    dpm_roc_central_params_t p, keep;
    const char *why = NULL;
    assert_int_equal(dpm_roc_central_params_init(&p, 2, 10, NULL, 8, DPM_EPS_ONE, NULL), DPM_OK);
    assert_true(p.local_eps == 0 && p.label_flip == 0.0 && p.roc.label_flip == 0.0);
    static const dpm_eps_t kEps0[] = {DPM_EPS_ONE / 2u, DPM_EPS_ONE, 8u * DPM_EPS_ONE, 1u};
    for (size_t i = 0; i < sizeof(kEps0) / sizeof(kEps0[0]); i++) {
        dpm_grr_t g;
        assert_int_equal(dpm_rr_init(&g, kEps0[i]), DPM_OK);
        assert_int_equal(dpm_roc_central_params_set_local(&p, kEps0[i], &why), DPM_OK);
        assert_true(p.local_eps == kEps0[i]);
        assert_true(p.label_flip == ldexp((double)g.other, -32));
        assert_true(p.roc.label_flip == p.label_flip);
        assert_true(p.label_flip > 0.0 && p.label_flip < 0.5);
    }
    keep = p;
    why = NULL;
    assert_int_equal(dpm_roc_central_params_set_local(&p, DPM_EPS_MAX_Q16 + 1u, &why),
                     DPM_ERR_PARAM);
    assert_non_null(why);
    assert_memory_equal(&p, &keep, sizeof(p));
    assert_int_equal(dpm_roc_central_params_set_local(NULL, DPM_EPS_ONE, &why), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_central_params_set_local(&p, 0, &why), DPM_OK);
    assert_true(p.local_eps == 0 && p.label_flip == 0.0 && p.roc.label_flip == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flip_zero_is_the_estimator_before_flips_bit_for_bit),
        cmocka_unit_test(the_comparison_sees_a_tiny_flip),
        cmocka_unit_test(set_label_flip_checks_its_argument),
        cmocka_unit_test(the_debias_inverts_the_expected_release),
        cmocka_unit_test(variances_match_numerical_gradients),
        cmocka_unit_test(central_local_eps_gives_the_sdks_q),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
