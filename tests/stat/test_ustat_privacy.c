/* SPDX-License-Identifier: Apache-2.0 */
/* Empirical local DP of ustat_bins and ustat_tree at their implemented ε: for neighbouring
 * inputs (two scores in different bins; the same score with the other label under the
 * private-label kernel; two scores whose tree nodes differ on every level), 2 million releases
 * each, every output cell's probability ratio is bounded by e^eps_implemented (Clopper-Pearson
 * at a total alpha of 1e-6) and reaches it where the exact pmfs say it does. Negative control:
 * a mechanism built for 2ε, checked at ε, is caught. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/ustat.h"
#include "stat_ratio.h"
#include "test_rng.h"

#define N_RELEASES 2000000u
#define TOTAL_ALPHA 1e-6
#define MIN_COUNT 1000.0
#define TWO32 4294967296.0
#define ONE (UINT32_C(1) << 31)

static double eps_real(dpm_eps_t e)
{
    return (double)e / 65536.0;
}

/* counts over the GRR domain of m for example ex */
static void bins_release(const dpm_ustat_bins_t *m, const dpm_ustat_example_t *ex, uint64_t seed,
                         uint64_t *counts)
{
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, seed), DPM_OK);
    memset(counts, 0, m->grr.k * sizeof(uint64_t));
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        dpm_ustat_bins_report_t rep;
        assert_int_equal(dpm_ustat_bins_perturb(m, &r, ex, &rep), DPM_OK);
        counts[rep.value]++;
    }
}

/* Neighbours x1, x2 of a bins mechanism built at eps_built, checked at eps_claimed. */
static stat_ratio_check_t bins_check(dpm_ustat_kernel_t kernel, dpm_eps_t eps_built,
                                     dpm_eps_t eps_claimed, const dpm_ustat_example_t *x1,
                                     const dpm_ustat_example_t *x2, uint64_t seed)
{
    dpm_ustat_bins_t m;
    assert_int_equal(dpm_ustat_bins_init(&m, kernel, 8, eps_built), DPM_OK);
    uint64_t c1[256], c2[256];
    bins_release(&m, x1, seed, c1);
    bins_release(&m, x2, seed + 1000, c2);
    /* exact pmfs from the mechanism's own integers */
    double p1[256], p2[256];
    uint32_t v1 = 0, v2 = 0;
    dpm_ustat_bins_report_t probe;
    dpm_ustat_bins_t sure = m; /* the index each example maps to: keep = 2^32 - (k-1) */
    sure.grr.other = 1;
    sure.grr.keep = (uint32_t)((UINT64_C(1) << 32) - (sure.grr.k - 1u));
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 1), DPM_OK);
    assert_int_equal(dpm_ustat_bins_perturb(&sure, &r, x1, &probe), DPM_OK);
    v1 = probe.value;
    assert_int_equal(dpm_ustat_bins_perturb(&sure, &r, x2, &probe), DPM_OK);
    v2 = probe.value;
    assert_int_not_equal(v1, v2);
    for (uint32_t v = 0; v < m.grr.k; v++) {
        p1[v] = (v == v1 ? m.grr.keep : m.grr.other) / TWO32;
        p2[v] = (v == v2 ? m.grr.keep : m.grr.other) / TWO32;
    }
    dpm_ustat_bins_t claimed;
    assert_int_equal(dpm_ustat_bins_init(&claimed, kernel, 8, eps_claimed), DPM_OK);
    double e_eps = exp(eps_real(claimed.eps_implemented));
    stat_ratio_check_t rc =
        stat_ratio_check(c1, c2, p1, p2, m.grr.k, N_RELEASES, e_eps,
                         (double)m.grr.keep / m.grr.other, MIN_COUNT, TOTAL_ALPHA);
    print_message("# ustat_bins kernel %d built %u, claimed %u (implemented %u): %d cells, "
                  "%d corners, e^eps %.4f, max ratio %.4f, max lower %.4f, violations %d, "
                  "too wide %d\n",
                  (int)kernel, eps_built, eps_claimed, claimed.eps_implemented, rc.cells,
                  rc.corners, e_eps, rc.max_point, rc.max_lower, rc.violations, rc.too_wide);
    return rc;
}

static void test_bins_score_and_label(void **state)
{
    (void)state;
    const dpm_ustat_example_t a = {ONE / 8 * 2, 1, 0}, b = {ONE / 8 * 5, 1, 0};
    stat_ratio_check_t rc = bins_check(DPM_USTAT_AUC, DPM_EPS_ONE, DPM_EPS_ONE, &a, &b, 51);
    assert_true(rc.corners == 2 && rc.violations == 0 && rc.too_wide == 0);
    /* private label: the same score, the other label */
    const dpm_ustat_example_t pos = {ONE / 8 * 3, 1, 0}, neg = {ONE / 8 * 3, 0, 0};
    rc = bins_check(DPM_USTAT_AUC_PRIVATE_LABEL, DPM_EPS_ONE / 2, DPM_EPS_ONE / 2, &pos, &neg, 52);
    assert_true(rc.corners == 2 && rc.violations == 0 && rc.too_wide == 0);
    /* negative control: built for 2ε, claimed ε */
    rc = bins_check(DPM_USTAT_AUC, 2 * DPM_EPS_ONE, DPM_EPS_ONE, &a, &b, 53);
    assert_true(rc.violations > 0);
}

/* ustat_tree, Hadamard levels (and one GRR level): scores x = 1 (001) and x = 6 (110) at depth 3
 * differ in their node on every level. Cells (level, row, value). */
static void tree_counts(const dpm_ustat_tree_t *m, const dpm_ustat_example_t *ex, uint64_t seed,
                        uint64_t *counts)
{
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, seed), DPM_OK);
    memset(counts, 0, 64 * sizeof(uint64_t));
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        dpm_ustat_tree_report_t rep;
        assert_int_equal(dpm_ustat_tree_perturb(m, &r, ex, &rep), DPM_OK);
        counts[(rep.level - 1u) * 16u + rep.row * 2u + rep.value]++;
    }
}

static void tree_pmf(const dpm_ustat_tree_t *m, uint32_t x, double *p)
{
    memset(p, 0, 64 * sizeof(double));
    for (uint32_t l = 1; l <= m->depth; l++) {
        uint32_t node = x >> (m->depth - l);
        for (uint32_t j = 0; j < (1u << l); j++) {
            for (uint32_t v = 0; v < 2; v++) {
                double pr;
                if (l <= m->grr_levels) { /* level 1 GRR over 2 nodes: row 0, value the node */
                    if (j != 0) {
                        continue;
                    }
                    pr = (v == node ? m->grr[l - 1].keep : m->grr[l - 1].other) / TWO32;
                } else {
                    uint32_t par = (uint32_t)__builtin_parity(j & node);
                    pr = (v == par ? m->rr.keep : m->rr.other) / TWO32 / (1u << l);
                }
                p[(l - 1u) * 16u + j * 2u + v] = pr / m->depth;
            }
        }
    }
}

static stat_ratio_check_t tree_check(uint32_t grr_levels, dpm_eps_t built, dpm_eps_t claimed,
                                     uint64_t seed)
{
    dpm_ustat_tree_t m, c;
    assert_int_equal(dpm_ustat_tree_init(&m, 3, grr_levels, built), DPM_OK);
    assert_int_equal(dpm_ustat_tree_init(&c, 3, grr_levels, claimed), DPM_OK);
    const dpm_ustat_example_t a = {ONE / 8 * 1 + 7, 1, 0}, b = {ONE / 8 * 6 + 7, 1, 0};
    static uint64_t c1[64], c2[64];
    static double p1[64], p2[64];
    tree_counts(&m, &a, seed, c1);
    tree_counts(&m, &b, seed + 1000, c2);
    tree_pmf(&m, 1, p1);
    tree_pmf(&m, 6, p2);
    for (int i = 0; i < 64; i++) { /* cells no release can reach: equal, never checked */
        if (p1[i] == 0.0) {
            p1[i] = p2[i] = 1e-300;
        }
    }
    double corner = (double)m.rr.keep / m.rr.other;
    double e_eps = exp(eps_real(c.eps_implemented));
    stat_ratio_check_t rc =
        stat_ratio_check(c1, c2, p1, p2, 64, N_RELEASES, e_eps, corner, MIN_COUNT, TOTAL_ALPHA);
    print_message("# ustat_tree depth 3, %u GRR levels, built %u, claimed %u: %d cells, "
                  "%d corners, e^eps %.4f, max ratio %.4f, max lower %.4f, violations %d, "
                  "too wide %d\n",
                  grr_levels, built, claimed, rc.cells, rc.corners, e_eps, rc.max_point,
                  rc.max_lower, rc.violations, rc.too_wide);
    return rc;
}

static void test_tree_score(void **state)
{
    (void)state;
    stat_ratio_check_t rc = tree_check(0, DPM_EPS_ONE, DPM_EPS_ONE, 61);
    assert_true(rc.corners > 0 && rc.violations == 0 && rc.too_wide == 0);
    rc = tree_check(1, DPM_EPS_ONE, DPM_EPS_ONE, 62); /* level 1 by GRR over 2 */
    assert_true(rc.corners > 0 && rc.violations == 0 && rc.too_wide == 0);
    rc = tree_check(0, 2 * DPM_EPS_ONE, DPM_EPS_ONE, 63); /* negative control */
    assert_true(rc.violations > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bins_score_and_label),
        cmocka_unit_test(test_tree_score),
    };
    return cmocka_run_group_tests_name("ustat_privacy", tests, NULL, NULL);
}
