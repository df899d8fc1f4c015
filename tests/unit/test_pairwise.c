/* SPDX-License-Identifier: Apache-2.0 */
/* Simultaneous pairwise comparisons (host-sim/estimate/pairwise.h): the critical value against
 * known answers (one pair: the normal quantile; independent equal variances: Tukey's studentized
 * range / sqrt 2, table values), never above Bonferroni and above the pointwise z; the largest
 * |difference|, its interval and candidates on a worked example; the bootstrap shares; the
 * fallbacks (not positive semi-definite, a level the draws cannot resolve); groups without an
 * estimate; determinism; the tuple and roc_groups glue against their own gaps; bad input
 * (output untouched). Coverage on simulated campaigns: tests/stat/test_disparity_selection.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/prob.h"
#include "estimate/disparity.h"
#include "estimate/pairwise.h"
#include "estimate/roc_groups.h"

#define assert_near(x, want, tol)                                                                  \
    do {                                                                                           \
        double x_ = (x), w_ = (want);                                                              \
        if (!(fabs(x_ - w_) <= (tol))) {                                                           \
            fail_msg("%s = %.12g, want %.12g (tol %g)", #x, x_, w_, (double)(tol));                \
        }                                                                                          \
    } while (0)

static dpm_pairwise_t out; /* large: not on the stack */

/* d independent estimates est[] with variances var[]. */
static dpm_pairwise_in_t independent(uint32_t d, const double *est, const double *var)
{
    dpm_pairwise_in_t in;
    memset(&in, 0, sizeof(in));
    in.d = d;
    for (uint32_t g = 0; g < d; g++) {
        in.valid[g] = 1;
        in.est[g] = est[g];
        in.cov[g][g] = var[g];
    }
    return in;
}

static void test_one_pair_is_the_normal_quantile(void **state)
{
    (void)state;
    const double est[2] = {0.3, 0.1}, var[2] = {0.01, 0.03};
    dpm_pairwise_in_t in = independent(2, est, var);
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    assert_int_equal(out.method, DPM_PAIRWISE_EXACT);
    assert_int_equal(out.npairs, 1);
    assert_int_equal(out.defined, 1);
    assert_near(out.crit, prob_norm_quantile(0.975), 1e-12);
    assert_near(out.pair[0].diff, 0.2, 1e-15);
    assert_near(out.pair[0].sd, 0.2, 1e-15);
    assert_near(out.pair[0].lo, 0.2 - out.crit * 0.2, 1e-15);
    assert_int_equal(out.pair[0].distinguishable, 0); /* 0.2 / 0.2 = 1 sd */
    assert_true(out.largest_defined && out.candidates == 1 && out.stability == 1.0);
    /* one pair: |D| lies in [max(0, lo), max(|lo|, |hi|)] */
    assert_near(out.largest_lo, 0.0, 0.0);
    assert_near(out.largest_hi, 0.2 + out.crit * 0.2, 1e-15);
}

/* Tukey's studentized range quantiles q_{0.95}(k, inf) (standard tables): 3.314 (k = 3), 3.633
 * (4), 4.286 (8); the pairwise max-|t| critical value is q / sqrt 2. The Monte Carlo level error
 * (sd 0.0015 at 20,000 draws) moves c by sd ~0.012 (the density of max |T| near c is ~0.13); the
 * histogram rounds up by at most 1/512: tolerance 0.04 (3.3 sd). Measured: +0.008, +0.007,
 * +0.012. */
static void test_independent_equal_is_tukey(void **state)
{
    (void)state;
    const uint32_t ds[3] = {3, 4, 8};
    const double q[3] = {3.314, 3.633, 4.286};
    double est[8] = {0}, var[8];
    for (int i = 0; i < 8; i++) {
        var[i] = 0.25;
    }
    for (int i = 0; i < 3; i++) {
        dpm_pairwise_in_t in = independent(ds[i], est, var);
        assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
        print_message("# d = %u: c = %.4f (Tukey %.4f), pointwise %.4f, Bonferroni %.4f\n", ds[i],
                      out.crit, q[i] / sqrt(2.0), out.crit_pointwise, out.crit_bonferroni);
        assert_int_equal(out.method, DPM_PAIRWISE_MAX_T);
        assert_near(out.crit, q[i] / sqrt(2.0), 0.04);
        assert_true(out.crit > out.crit_pointwise && out.crit < out.crit_bonferroni);
        /* the negative control: the pointwise z is far from the simultaneous value */
        assert_true(out.crit - out.crit_pointwise > 0.3);
    }
}

/* Three groups: A and B close, C far from both. The largest pair is (A, C) or (B, C); the data
 * cannot say which (both candidates), and the interval for the largest holds both. */
static void test_largest_and_candidates(void **state)
{
    (void)state;
    const double est[3] = {0.50, 0.51, 0.80}, var[3] = {1e-4, 1e-4, 1e-4};
    dpm_pairwise_in_t in = independent(3, est, var);
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    const dpm_pairwise_pair_t *ab = &out.pair[dpm_pairwise_index(3, 0, 1)];
    const dpm_pairwise_pair_t *ac = &out.pair[dpm_pairwise_index(3, 0, 2)];
    const dpm_pairwise_pair_t *bc = &out.pair[dpm_pairwise_index(3, 1, 2)];
    assert_true(ab->g == 0 && ab->h == 1 && ac->h == 2 && bc->g == 1);
    assert_true(!ab->distinguishable && ac->distinguishable && bc->distinguishable);
    assert_int_equal(out.distinguishable, 2);
    assert_int_equal(out.largest_pair, dpm_pairwise_index(3, 0, 2));
    assert_near(out.largest_abs, 0.30, 1e-12);
    double sd = sqrt(2e-4);
    /* max L_k = |D^_AC| - c sd; max U_k = |D^_AC| + c sd */
    assert_near(out.largest_lo, 0.30 - out.crit * sd, 1e-12);
    assert_near(out.largest_hi, 0.30 + out.crit * sd, 1e-12);
    assert_true(ac->candidate && bc->candidate && !ab->candidate && out.candidates == 2);
    /* bootstrap: (A, C) leads (its gap is larger by 0.01 = 0.7 sd), (B, C) sometimes */
    double sum = ab->largest_share + ac->largest_share + bc->largest_share;
    assert_near(sum, 1.0, 1e-12);
    assert_true(ac->largest_share > 0.5 && bc->largest_share > 0.1 && ab->largest_share == 0.0);
    assert_near(out.stability, ac->largest_share, 0.0);
    /* the same input gives the same bytes (fixed seed): collectors agree */
    static dpm_pairwise_t again;
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &again), DPM_OK);
    assert_memory_equal(&out, &again, sizeof(out));
}

/* Correlated estimates (shared noise): the max-|t| value uses the correlation. Four estimates
 * sharing one common term with most of the variance: every gap cancels it, and the gaps are as
 * if independent with the remaining variance -- the same c as Tukey d = 4. */
static void test_correlation_is_used(void **state)
{
    (void)state;
    dpm_pairwise_in_t in;
    memset(&in, 0, sizeof(in));
    in.d = 4;
    for (uint32_t g = 0; g < 4; g++) {
        in.valid[g] = 1;
        for (uint32_t h = 0; h < 4; h++) {
            in.cov[g][h] = 0.9 + (g == h ? 0.1 : 0.0);
        }
    }
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    assert_int_equal(out.method, DPM_PAIRWISE_MAX_T);
    assert_near(out.pair[0].sd, sqrt(0.2), 1e-12);
    assert_near(out.crit, 3.633 / sqrt(2.0), 0.04);
}

static void test_fallbacks(void **state)
{
    (void)state;
    /* not positive semi-definite (a correlation above 1): Bonferroni, no bootstrap */
    dpm_pairwise_in_t in;
    memset(&in, 0, sizeof(in));
    in.d = 3;
    for (uint32_t g = 0; g < 3; g++) {
        in.valid[g] = 1;
        in.est[g] = 0.1 * g;
        in.cov[g][g] = 1.0;
    }
    in.cov[0][1] = in.cov[1][0] = 0.2;
    in.cov[0][2] = in.cov[2][0] = 0.9;
    in.cov[1][2] = in.cov[2][1] = -0.9;
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    assert_int_equal(out.method, DPM_PAIRWISE_BONFERRONI);
    assert_near(out.crit, prob_norm_quantile(1.0 - 0.05 / 6.0), 1e-12);
    assert_true(out.largest_defined && isnan(out.stability));
    /* semi-definite (estimate 2 is estimate 0 again): still max-|t|; its pair with 0 has no
     * interval. Negative control: no variance left but covariance left is not PSD. */
    memset(&in, 0, sizeof(in));
    in.d = 3;
    for (uint32_t g = 0; g < 3; g++) {
        in.valid[g] = 1;
        in.est[g] = 0.1 * g;
    }
    in.cov[0][0] = in.cov[2][2] = in.cov[0][2] = in.cov[2][0] = 1.0;
    in.cov[1][1] = 2.0;
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    assert_int_equal(out.method, DPM_PAIRWISE_MAX_T);
    assert_true(out.defined == 2 && !out.pair[dpm_pairwise_index(3, 0, 2)].defined);
    in.cov[0][0] = 0.0; /* the first pivot is skipped, its covariance with 2 is not zero */
    in.cov[0][2] = in.cov[2][0] = 0.5;
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    assert_int_equal(out.method, DPM_PAIRWISE_BONFERRONI);
    /* a level the draws cannot resolve: (1 - 0.999) x 20000 = 20 draws beyond it */
    const double est[4] = {0}, var[4] = {1, 1, 1, 1};
    in = independent(4, est, var);
    assert_int_equal(dpm_pairwise_compare(&in, 0.999, &out), DPM_OK);
    assert_int_equal(out.method, DPM_PAIRWISE_BONFERRONI);
    assert_near(out.crit, prob_norm_quantile(1.0 - 0.001 / 12.0), 1e-12);
    assert_true(out.stability > 0.0); /* the bootstrap does not need the tail */
}

/* A group without an estimate: its pairs have no interval, the family is the others, and the
 * largest over all pairs is undefined (with a reason). */
static void test_missing_group(void **state)
{
    (void)state;
    const double est[4] = {0.1, 0.2, 0.3, 0.4}, var[4] = {0.01, 0.01, 0.01, 0.01};
    dpm_pairwise_in_t in = independent(4, est, var);
    in.valid[1] = 0;
    in.est[1] = NAN; /* not read */
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    assert_int_equal(out.npairs, 6);
    assert_int_equal(out.defined, 3);
    for (uint32_t k = 0; k < 6; k++) {
        const dpm_pairwise_pair_t *p = &out.pair[k];
        assert_int_equal(p->defined, p->g != 1 && p->h != 1);
        assert_true(p->defined || (isnan(p->lo) && isnan(p->diff)));
    }
    assert_near(out.crit, 2.343, 0.04); /* Tukey d = 3 over the three left */
    assert_false(out.largest_defined);
    assert_true(strstr(out.largest_reason, "cannot be bounded") != NULL);
    /* a zero variance: that pair has no interval either */
    in = independent(4, est, var);
    in.cov[2][2] = in.cov[3][3] = 0.0;
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    assert_int_equal(out.defined, 5);
    assert_false(out.pair[dpm_pairwise_index(4, 2, 3)].defined);
    /* fewer than two estimates: nothing to compare, still DPM_OK */
    in.valid[0] = in.valid[1] = in.valid[2] = 0;
    assert_int_equal(dpm_pairwise_compare(&in, 0.95, &out), DPM_OK);
    assert_true(out.defined == 0 && out.method == DPM_PAIRWISE_NONE && !out.largest_defined);
}

/* The tuple glue: pair k's diff and sd are dpm_disp_gap's, with the estimated sizes'
 * covariance included. */
static void test_tuple_glue(void **state)
{
    (void)state;
    dpm_disp_params_t p;
    dpm_disp_agg_t agg;
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 4, 1.0, 16),
                     DPM_OK);
    assert_int_equal(dpm_disp_agg_init(&agg, &p), DPM_OK);
    for (uint32_t i = 0; i < 40000; i++) { /* a deterministic spread of reports */
        uint32_t g = (i * 7u + i / 13u) % 4u;
        assert_int_equal(dpm_disp_agg_add(&agg, g, (i * 2654435761u >> 7) % (3u + g) ? 1 : -1),
                         DPM_OK);
    }
    static dpm_disp_estimate_t est;
    assert_int_equal(dpm_disp_estimate(&p, &agg, NULL, NULL, &est), DPM_OK);
    assert_int_equal(dpm_disp_pairwise(&est, 0.9, &out), DPM_OK);
    assert_int_equal(out.method, DPM_PAIRWISE_MAX_T);
    for (uint32_t g = 0; g < 4; g++) {
        for (uint32_t h = g + 1; h < 4; h++) {
            dpm_disp_gap_t gap;
            assert_int_equal(dpm_disp_gap(&est, g, h, 0.9, &gap), DPM_OK);
            const dpm_pairwise_pair_t *q = &out.pair[dpm_pairwise_index(4, g, h)];
            assert_near(q->diff, gap.diff, 1e-15);
            assert_near(q->sd, sqrt(gap.var), 1e-12 * sqrt(gap.var));
            /* simultaneous is wider than the pointwise interval at the same level */
            assert_true(q->lo < gap.ci_lo && q->hi > gap.ci_hi);
        }
    }
    assert_int_equal(dpm_disp_pairwise(NULL, 0.9, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_pairwise(&est, 1.0, &out), DPM_ERR_PARAM);
}

/* The roc_groups glue: the covariance by polarization gives back the gaps' own sds. */
static void test_roc_groups_glue(void **state)
{
    (void)state;
    static dpm_roc_groups_estimate_t est;
    memset(&est, 0, sizeof(est));
    est.groups = 3;
    est.ngaps = 3;
    const double auc[3] = {0.8, 0.75, 0.7}, sd[3] = {0.01, 0.02, 0.015};
    const double gap_sd[3] = {0.021, 0.017, 0.026}; /* (0,1), (0,2), (1,2) */
    for (uint32_t g = 0; g < 3; g++) {
        est.group[g].defined = est.group[g].ci_valid = 1;
        est.group[g].auc = auc[g];
        est.group[g].sd = sd[g];
    }
    for (uint32_t k = 0, g = 0; g < 3; g++) {
        for (uint32_t h = g + 1; h < 3; h++, k++) {
            est.gap[k].g = g;
            est.gap[k].h = h;
            est.gap[k].defined = est.gap[k].ci_valid = 1;
            est.gap[k].gap = auc[g] - auc[h];
            est.gap[k].sd = gap_sd[k];
        }
    }
    assert_int_equal(dpm_roc_groups_pairwise(&est, 0.95, &out), DPM_OK);
    for (uint32_t k = 0; k < 3; k++) {
        assert_near(out.pair[k].sd, gap_sd[k], 1e-15);
        assert_near(out.pair[k].diff, est.gap[k].gap, 1e-15);
    }
    /* a gap without a variance: that pair has no interval */
    est.gap[2].ci_valid = 0;
    assert_int_equal(dpm_roc_groups_pairwise(&est, 0.95, &out), DPM_OK);
    assert_false(out.pair[2].defined);
    assert_false(out.largest_defined);
    est.groups = 1;
    assert_int_equal(dpm_roc_groups_pairwise(&est, 0.95, &out), DPM_ERR_PARAM);
}

/* Bad input: DPM_ERR_PARAM and the output untouched. */
static void test_bad_input(void **state)
{
    (void)state;
    const double est[3] = {0.1, 0.2, 0.3}, var[3] = {0.01, 0.01, 0.01};
    static dpm_pairwise_t before;
    memset(&before, 0xA5, sizeof(before));
    dpm_pairwise_in_t good = independent(3, est, var), bad;
    const double conf[4] = {0.0, 1.0, -0.5, NAN};
    for (int i = 0; i < 4; i++) {
        memcpy(&out, &before, sizeof(out));
        assert_int_equal(dpm_pairwise_compare(&good, conf[i], &out), DPM_ERR_PARAM);
        assert_memory_equal(&out, &before, sizeof(out));
    }
    for (int c = 0; c < 7; c++) {
        bad = good;
        switch (c) {
        case 0: bad.d = 1; break;
        case 1: bad.d = DPM_PAIRWISE_MAX + 1; break;
        case 2: bad.est[1] = NAN; break;
        case 3: bad.cov[2][2] = -1e-3; break;
        case 4: bad.cov[0][1] = 0.001; break; /* asymmetric */
        case 5: bad.cov[0][2] = bad.cov[2][0] = INFINITY; break;
        default: bad.cov[1][1] = NAN; break;
        }
        memcpy(&out, &before, sizeof(out));
        assert_int_equal(dpm_pairwise_compare(&bad, 0.95, &out), DPM_ERR_PARAM);
        assert_memory_equal(&out, &before, sizeof(out));
    }
    assert_int_equal(dpm_pairwise_compare(NULL, 0.95, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_pairwise_compare(&good, 0.95, NULL), DPM_ERR_PARAM);
    /* an invalid group's numbers are not read */
    bad = good;
    bad.valid[2] = 0;
    bad.est[2] = NAN;
    bad.cov[2][2] = -1.0;
    assert_int_equal(dpm_pairwise_compare(&bad, 0.95, &out), DPM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_pair_is_the_normal_quantile),
        cmocka_unit_test(test_independent_equal_is_tukey),
        cmocka_unit_test(test_largest_and_candidates),
        cmocka_unit_test(test_correlation_is_used),
        cmocka_unit_test(test_fallbacks),
        cmocka_unit_test(test_missing_group),
        cmocka_unit_test(test_tuple_glue),
        cmocka_unit_test(test_roc_groups_glue),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests_name("pairwise", tests, NULL, NULL);
}
