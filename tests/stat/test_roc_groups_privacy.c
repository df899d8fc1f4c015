/* SPDX-License-Identifier: Apache-2.0 */
/* Empirical privacy of per-group roc_hist (3 groups, ε = 2: the group's GRR at ε_g = 1, the
 * histogram's Laplace at ε_h = 1), for its two privacy units:
 *   - the device's group: the same histogram reported with true group 0 or 1; over the joint
 *     cells (reported group, the first bin's noised positive count) every ratio is bounded by
 *     e^(the GRR's implemented ε) and reaches it (the histogram's distribution does not depend
 *     on the group: the real histogram is sent whatever the GRR did);
 *   - one example's label: with the group fixed, the pair (pos[0], neg[0]) of neighbouring
 *     histograms (one example's label changed) is bounded by e^ε_h and reaches it.
 * 2 million releases per input, Clopper-Pearson at a total alpha of 1e-6. Negative controls:
 * the design not taken — an EMPTY histogram whenever the group flipped — is caught by the same
 * group check (its bin totals tell a flipped report from a kept one), and a histogram with half
 * the noise is caught by the label check. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/roc_hist.h"
#include "stat_dlap.h"
#include "stat_gof.h"
#include "stat_ratio.h"
#include "test_rng.h"

/* a quarter under make cross (DPM_STAT_DIVISOR): the same checks and controls pass there */
#define N_RELEASES stat_samples(2000000u, 500000u)
#define TOTAL_ALPHA 1e-6
#define MIN_COUNT 1000.0
#define TWO32 4294967296.0
#define ONE (UINT32_C(1) << 31)
#define GROUPS 3u
#define COUNT 12 /* positives in bin 0 */
#define BOX 60   /* noised values in [BOX_LO, BOX_LO + BOX) */
#define BOX_LO (-20)

static void make_mech(dpm_mech_t *m)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 9;
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.eps = DPM_EPS(2);
    c.budget = c.eps;
    c.nbins = 1;
    c.bin_edges[0] = ONE / 2;
    c.groups = GROUPS;
    c.group_eps = DPM_EPS(1);
    assert_int_equal(dpm_mech_init(m, &c, NULL), DPM_OK);
}

/* counts[r * BOX + v]: reported group r, noised pos[0] = v + BOX_LO. empty_if_flipped: the
 * negative control's histogram (all zero) for reports whose group flipped. */
static void release_groups(const dpm_roc_hist_t *m, uint32_t group, int empty_if_flipped,
                           uint64_t seed, uint64_t *counts)
{
    dpm_score_hist_t h, empty;
    assert_int_equal(dpm_score_hist_init(&h, &m->bins), DPM_OK);
    empty = h;
    for (int i = 0; i < COUNT; i++) {
        assert_int_equal(dpm_score_hist_add(&h, &m->bins, ONE / 4, 1), DPM_OK);
    }
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, seed), DPM_OK);
    dpm_roc_hist_t plain = *m; /* the same histogram noise without the group */
    plain.groups = 0;
    memset(counts, 0, GROUPS * BOX * sizeof(uint64_t));
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        dpm_roc_hist_report_t rep;
        assert_int_equal(dpm_roc_hist_perturb_group(m, &r, group, &h, &rep), DPM_OK);
        if (empty_if_flipped && rep.group != group) {
            uint32_t reported = rep.group;
            assert_int_equal(dpm_roc_hist_perturb(&plain, &r, &empty, &rep), DPM_OK);
            rep.group = reported;
        }
        int64_t v = (int64_t)rep.pos[0] - BOX_LO;
        if (v >= 0 && v < BOX) {
            counts[rep.group * BOX + (uint32_t)v]++;
        }
    }
}

static stat_ratio_check_t group_check(int empty_if_flipped, uint64_t seed)
{
    dpm_mech_t mech;
    make_mech(&mech);
    const dpm_roc_hist_t *m = &mech.params.roc_hist;
    static uint64_t c1[GROUPS * BOX], c2[GROUPS * BOX];
    static double p1[GROUPS * BOX], p2[GROUPS * BOX];
    release_groups(m, 0, empty_if_flipped, seed, c1);
    release_groups(m, 1, empty_if_flipped, seed + 1000, c2);
    long double t = (long double)m->lap.scale_num / (long double)m->lap.scale_den;
    for (uint32_t rg = 0; rg < GROUPS; rg++) {
        for (int v = 0; v < BOX; v++) { /* the real mechanism's pmfs */
            double noise = (double)stat_dlap_pmf(t, v + BOX_LO - COUNT);
            p1[rg * BOX + v] = (rg == 0 ? m->group_grr.keep : m->group_grr.other) / TWO32 * noise;
            p2[rg * BOX + v] = (rg == 1 ? m->group_grr.keep : m->group_grr.other) / TWO32 * noise;
        }
    }
    double e_eps = exp(m->group_grr.eps_implemented / 65536.0);
    stat_ratio_check_t rc =
        stat_ratio_check(c1, c2, p1, p2, GROUPS * BOX, N_RELEASES, e_eps,
                         (double)m->group_grr.keep / m->group_grr.other, MIN_COUNT, TOTAL_ALPHA);
    print_message("# group unit (%s): e^eps_g %.4f, %d cells, %d corners, max ratio %.4f, max "
                  "lower %.4f, violations %d, too wide %d\n",
                  empty_if_flipped ? "negative control: empty histogram when flipped"
                                   : "the real histogram always",
                  e_eps, rc.cells, rc.corners, rc.max_point, rc.max_lower, rc.violations,
                  rc.too_wide);
    return rc;
}

static void test_group_unit(void **state)
{
    (void)state;
    stat_ratio_check_t rc = group_check(0, 91);
    assert_true(rc.corners > 0 && rc.violations == 0 && rc.too_wide == 0);
    rc = group_check(1, 92);
    assert_true(rc.violations > 0);
}

/* Label unit: pos[0], neg[0] = (COUNT + 1, 3) vs (COUNT, 4), group 2 fixed. */
static stat_ratio_check_t label_check(int half_noise, uint64_t seed)
{
    dpm_mech_t mech;
    make_mech(&mech);
    dpm_roc_hist_t m = mech.params.roc_hist;
    if (half_noise) { /* the histogram's noise of ε_h = 2 */
        assert_int_equal(dpm_laplace_init(&m.lap, DPM_ROC_HIST_SENSITIVITY, 2 * DPM_EPS_ONE),
                         DPM_OK);
    }
    static uint64_t c[2][BOX * BOX];
    static double p[2][BOX * BOX];
    long double t = 2.0L; /* the claimed ε_h = 1: scale 2 */
    for (int which = 0; which < 2; which++) {
        dpm_score_hist_t h;
        assert_int_equal(dpm_score_hist_init(&h, &m.bins), DPM_OK);
        for (int i = 0; i < COUNT + (which == 0); i++) {
            assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE / 4, 1), DPM_OK);
        }
        for (int i = 0; i < 3 + (which == 1); i++) {
            assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE / 4, 0), DPM_OK);
        }
        test_rng_t tr;
        dpm_rng_t g;
        dpm_rand_t r;
        assert_int_equal(test_rand_init(&r, &tr, &g, seed + (uint64_t)which * 1000u), DPM_OK);
        memset(c[which], 0, sizeof(c[which]));
        for (uint32_t i = 0; i < N_RELEASES; i++) {
            dpm_roc_hist_report_t rep;
            assert_int_equal(dpm_roc_hist_perturb_group(&m, &r, 2, &h, &rep), DPM_OK);
            int64_t a = (int64_t)rep.pos[0] - BOX_LO, b = (int64_t)rep.neg[0] - BOX_LO;
            if (a >= 0 && a < BOX && b >= 0 && b < BOX) {
                c[which][a * BOX + b]++;
            }
        }
        for (int a = 0; a < BOX; a++) {
            for (int b = 0; b < BOX; b++) {
                p[which][a * BOX + b] =
                    (double)(stat_dlap_pmf(t, a + BOX_LO - (COUNT + (which == 0))) *
                             stat_dlap_pmf(t, b + BOX_LO - (3 + (which == 1))));
            }
        }
    }
    double e_eps = exp(1.0);
    stat_ratio_check_t rc = stat_ratio_check(c[0], c[1], p[0], p[1], BOX * BOX, N_RELEASES, e_eps,
                                             exp(2.0 / (double)t), MIN_COUNT, TOTAL_ALPHA);
    print_message("# label unit (%s): e^eps_h %.4f, %d cells, %d corners, max ratio %.4f, max "
                  "lower %.4f, violations %d, too wide %d\n",
                  half_noise ? "negative control: half the noise" : "as built", e_eps, rc.cells,
                  rc.corners, rc.max_point, rc.max_lower, rc.violations, rc.too_wide);
    return rc;
}

static void test_label_unit(void **state)
{
    (void)state;
    stat_ratio_check_t rc = label_check(0, 95);
    assert_true(rc.corners > 0 && rc.violations == 0 && rc.too_wide == 0);
    rc = label_check(1, 96);
    assert_true(rc.violations > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_unit),
        cmocka_unit_test(test_label_unit),
    };
    return cmocka_run_group_tests_name("roc_groups_privacy", tests, NULL, NULL);
}
