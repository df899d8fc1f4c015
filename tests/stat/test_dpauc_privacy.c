/* SPDX-License-Identifier: Apache-2.0 */
/* Empirical privacy of dpauc for one example's label, and the claim that the FHAUC paper's
 * published calibration spends only ε / 2. One threshold (N = 1): the changed example is
 * predicted positive there, so h has (TP, FP) = (C + 1, D) and h' has (C, D + 1); TN and FN are
 * equal (the same true counts, independent noise), so the privacy loss of the whole report is
 * that of the (TP, FP) pair. 2 million releases of each neighbour through dpm_dpauc_perturb;
 * with Clopper-Pearson bounds (total alpha 1e-6) no cell's ratio may exceed e^eps_implemented,
 * and in the corners the ratio must reach it:
 *   PUBLISHED (scale 4N / ε): eps_implemented = ε / 2, and the ratio reaches e^(ε/2) — so the
 *     report spends exactly ε / 2, not the ε the paper states;
 *   TIGHT (scale 2N / ε): eps_implemented = ε, reached.
 * With N = 2 (both thresholds below the example's score) each threshold's pair carries half
 * the loss: its ratio is bounded by and reaches e^(eps_implemented / 2), so the whole report's
 * (the product over the independent thresholds) is e^eps_implemented: the 2N of the
 * sensitivity. Negative controls: PUBLISHED checked at ε / 4 is caught (it is not better than
 * ε / 2), and TIGHT checked at ε / 2 is caught. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/dpauc.h"
#include "stat_dlap.h"
#include "stat_gof.h"
#include "stat_ratio.h"
#include "test_rng.h"

/* half under make cross (DPM_STAT_DIVISOR; min: >= 50 cells expecting >= MIN_COUNT) */
#define N_RELEASES stat_samples(2000000u, 1000000u)
#define TOTAL_ALPHA 1e-6
#define MIN_COUNT 1000.0
#define ONE (UINT32_C(1) << 31)
#define C 5
#define D 3
#define BOX 100 /* outputs counted in [BOX_LO, BOX_LO + BOX)^2 per threshold */
#define BOX_LO (-45)

/* The counts: n thresholds all below the changed example (score 0.9); label 1 in h. */
static void make_counts(const dpm_dpauc_t *m, int label, dpm_dpauc_counts_t *c)
{
    assert_int_equal(dpm_dpauc_counts_init(c, m), DPM_OK);
    for (int i = 0; i < C; i++) {
        assert_int_equal(dpm_dpauc_counts_add(c, m, ONE / 10 * 9, 1), DPM_OK);
    }
    for (int i = 0; i < D; i++) {
        assert_int_equal(dpm_dpauc_counts_add(c, m, ONE / 10 * 9, 0), DPM_OK);
    }
    for (int i = 0; i < 4; i++) { /* some examples below every threshold (TN, FN) */
        assert_int_equal(dpm_dpauc_counts_add(c, m, ONE / 100, i & 1), DPM_OK);
    }
    assert_int_equal(dpm_dpauc_counts_add(c, m, ONE / 10 * 9, label), DPM_OK);
}

/* counts[t][a * BOX + b]: (TP_t, FP_t) of the releases at threshold t */
static void release(const dpm_dpauc_t *m, int label, uint64_t seed, uint64_t *counts)
{
    dpm_dpauc_counts_t c;
    make_counts(m, label, &c);
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, seed), DPM_OK);
    memset(counts, 0, (size_t)m->n * BOX * BOX * sizeof(uint64_t));
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        dpm_dpauc_report_t rep;
        assert_int_equal(dpm_dpauc_perturb(m, &r, &c, &rep), DPM_OK);
        for (uint32_t th = 0; th < m->n; th++) {
            int64_t a = (int64_t)rep.tp[th] - BOX_LO, b = (int64_t)rep.fp[th] - BOX_LO;
            if (a >= 0 && a < BOX && b >= 0 && b < BOX) {
                counts[(size_t)th * BOX * BOX + (size_t)(a * BOX + b)]++;
            }
        }
    }
}

/* Releases of a mechanism with n thresholds, calibration cal, built at ε; each threshold's pair
 * checked against e^(eps_check / n). Returns the worst over thresholds (violations summed). */
static stat_ratio_check_t run(uint32_t n, dpm_dpauc_calibration_t cal, dpm_eps_t eps,
                              double eps_check, uint64_t seed)
{
    const uint32_t thr[2] = {ONE / 4, ONE / 2};
    dpm_dpauc_t m;
    assert_int_equal(dpm_dpauc_init(&m, thr, n, cal, eps), DPM_OK);
    uint64_t *c1 = calloc((size_t)n * BOX * BOX, sizeof(uint64_t));
    uint64_t *c2 = calloc((size_t)n * BOX * BOX, sizeof(uint64_t));
    double *p1 = calloc(BOX * BOX, sizeof(double)), *p2 = calloc(BOX * BOX, sizeof(double));
    assert_true(c1 && c2 && p1 && p2);
    release(&m, 1, seed, c1);
    release(&m, 0, seed + 1000, c2);
    long double t = (long double)m.lap.scale_num / (long double)m.lap.scale_den;
    double per = exp(eps_check / n), corner = exp(2.0L / t); /* the pair's exact largest ratio */
    stat_ratio_check_t total;
    memset(&total, 0, sizeof(total));
    for (int a = 0; a < BOX; a++) {
        for (int b = 0; b < BOX; b++) {
            int64_t tp = a + BOX_LO, fp = b + BOX_LO;
            p1[a * BOX + b] = (double)(stat_dlap_pmf(t, tp - (C + 1)) * stat_dlap_pmf(t, fp - D));
            p2[a * BOX + b] = (double)(stat_dlap_pmf(t, tp - C) * stat_dlap_pmf(t, fp - (D + 1)));
        }
    }
    for (uint32_t th = 0; th < n; th++) {
        stat_ratio_check_t rc =
            stat_ratio_check(c1 + (size_t)th * BOX * BOX, c2 + (size_t)th * BOX * BOX, p1, p2,
                             BOX * BOX, N_RELEASES, per, corner, MIN_COUNT, TOTAL_ALPHA / n);
        print_message("# N = %u %s eps %.3f (implemented %.3f), threshold %u checked at "
                      "e^(%.3f / %u) = %.4f: %d cells, %d corners, max ratio %.4f, max lower "
                      "%.4f, violations %d, too wide %d\n",
                      n, cal == DPM_DPAUC_PUBLISHED ? "published" : "tight", eps / 65536.0,
                      m.eps_implemented / 65536.0, th, eps_check, n, per, rc.cells, rc.corners,
                      rc.max_point, rc.max_lower, rc.violations, rc.too_wide);
        assert_true(rc.cells >= 50);
        total.cells += rc.cells;
        total.corners += rc.corners;
        total.violations += rc.violations;
        total.too_wide += rc.too_wide;
    }
    free(c1), free(c2), free(p1), free(p2);
    return total;
}

static void test_published_spends_half(void **state)
{
    (void)state;
    /* ε = 4: the published calibration's noise (scale 4N / ε = 1 count) */
    stat_ratio_check_t rc = run(1, DPM_DPAUC_PUBLISHED, 4 * DPM_EPS_ONE, 2.0, 71);
    assert_true(rc.corners > 0 && rc.violations == 0 && rc.too_wide == 0);
    rc = run(2, DPM_DPAUC_PUBLISHED, 4 * DPM_EPS_ONE, 2.0, 72);
    assert_true(rc.corners > 0 && rc.violations == 0 && rc.too_wide == 0);
    /* negative control: it is not better than ε / 2 */
    rc = run(1, DPM_DPAUC_PUBLISHED, 4 * DPM_EPS_ONE, 1.0, 73);
    assert_true(rc.violations > 0);
}

static void test_tight_spends_eps(void **state)
{
    (void)state;
    stat_ratio_check_t rc = run(1, DPM_DPAUC_TIGHT, 2 * DPM_EPS_ONE, 2.0, 81);
    assert_true(rc.corners > 0 && rc.violations == 0 && rc.too_wide == 0);
    rc = run(2, DPM_DPAUC_TIGHT, 2 * DPM_EPS_ONE, 2.0, 82);
    assert_true(rc.corners > 0 && rc.violations == 0 && rc.too_wide == 0);
    rc = run(1, DPM_DPAUC_TIGHT, 2 * DPM_EPS_ONE, 1.0, 83); /* negative control */
    assert_true(rc.violations > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_spends_half),
        cmocka_unit_test(test_tight_spends_eps),
    };
    return cmocka_run_group_tests_name("dpauc_privacy", tests, NULL, NULL);
}
