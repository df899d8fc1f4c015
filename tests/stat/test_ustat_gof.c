/* SPDX-License-Identifier: Apache-2.0 */
/* The ustat samplers against their exact distributions: for a fixed example, ustat_bins' value
 * (GRR over the kernel's domain: keep / 2^32 at the true index, other / 2^32 elsewhere) and
 * ustat_tree's (level, row, value) (level uniform in 1 .. depth; GRR levels: the node by GRR;
 * Hadamard levels: row uniform, bit = parity(row & node) kept with keep / 2^32). G-test and
 * Pearson at alpha = 1e-6, fixed seeds. Negative controls: the same samples against the pmf of a
 * neighbouring input must be rejected. */
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
#include "stat_gof.h"
#include "test_figure.h"
#include "test_rng.h"

#define SAMPLES 2000000u
#define ALPHA 1e-6
#define TWO32 4294967296.0
#define ONE (UINT32_C(1) << 31)

static void rand_init(dpm_rand_t *r, test_rng_t *t, dpm_rng_t *g, uint64_t seed)
{
    assert_int_equal(test_rand_init(r, t, g, seed), DPM_OK);
}

/* G and Pearson p-values of observed counts against pmf (n cells, tails pooled at 20). */
static double gof(const uint64_t *counts, const double *pmf, size_t n, double *pearson_p)
{
    uint64_t *o = calloc(n, sizeof(uint64_t));
    double *e = calloc(n, sizeof(double));
    assert_non_null(o);
    assert_non_null(e);
    for (size_t i = 0; i < n; i++) {
        o[i] = counts[i];
        e[i] = pmf[i] * SAMPLES;
    }
    size_t m = stat_pool_tails(o, e, n, 20.0);
    stat_gof_t g = stat_gof_test(o, e, m, STAT_G);
    stat_gof_t p = stat_gof_test(o, e, m, STAT_PEARSON);
    assert_true(fabs(g.total_expected - g.total_observed) < 1e-3);
    free(o);
    free(e);
    *pearson_p = p.p_value;
    return g.p_value;
}

/* ---- ustat_bins ---------------------------------------------------------------------------- */

typedef struct {
    dpm_ustat_kernel_t kernel;
    uint32_t k;
    dpm_eps_t eps;
} bins_cfg_t;

static const bins_cfg_t BINS[] = {
    {DPM_USTAT_AUC, 16, DPM_EPS_ONE},
    {DPM_USTAT_AUC_PRIVATE_LABEL, 8, DPM_EPS_ONE / 2},
    {DPM_USTAT_KENDALL, 6, 2 * DPM_EPS_ONE},
};

static void bins_pmf(const dpm_ustat_bins_t *m, uint32_t x, double *pmf)
{
    for (uint32_t v = 0; v < m->grr.k; v++) {
        pmf[v] = (v == x ? m->grr.keep : m->grr.other) / TWO32;
    }
}

static void test_bins_gof(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(BINS) / sizeof(BINS[0]); c++) {
        dpm_ustat_bins_t m;
        assert_int_equal(dpm_ustat_bins_init(&m, BINS[c].kernel, BINS[c].k, BINS[c].eps), DPM_OK);
        /* score 0.7, label 1 / second score 0.2 */
        const dpm_ustat_example_t ex = {(uint32_t)(0.7 * ONE),
                                        BINS[c].kernel == DPM_USTAT_KENDALL ? 0 : 1,
                                        (uint32_t)(0.2 * ONE)};
        uint32_t bin = 0, bin2 = 0;
        assert_int_equal(dpm_ustat_quantize(ex.score, m.k, &bin), DPM_OK);
        assert_int_equal(dpm_ustat_quantize(ex.score2, m.k, &bin2), DPM_OK);
        uint32_t x = m.kernel == DPM_USTAT_AUC                 ? bin
                     : m.kernel == DPM_USTAT_AUC_PRIVATE_LABEL ? m.k + bin
                                                               : bin * m.k + bin2;
        uint64_t counts[256] = {0};
        test_rng_t t;
        dpm_rng_t g;
        dpm_rand_t r;
        rand_init(&r, &t, &g, 700u + c);
        for (uint32_t i = 0; i < SAMPLES; i++) {
            dpm_ustat_bins_report_t rep;
            assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &ex, &rep), DPM_OK);
            counts[rep.value]++;
        }
        double pmf[256], pp = 0.0;
        bins_pmf(&m, x, pmf);
        double gp = gof(counts, pmf, m.grr.k, &pp);
        /* negative control: the pmf of the neighbouring index */
        bins_pmf(&m, (x + 1u) % m.grr.k, pmf);
        double np = 0.0, ngp = gof(counts, pmf, m.grr.k, &np);
        print_message("# ustat_bins kernel %d, domain %u, eps %u/65536: G p %.3g, Pearson p %.3g; "
                      "neighbour's pmf: G p %.3g\n",
                      (int)m.kernel, m.grr.k, BINS[c].eps, gp, pp, ngp);
        char what[64];
        snprintf(what, sizeof(what), "ustat_bins kernel %d", (int)m.kernel);
        test_figure_of(what, "g_p", gp, "p");
        test_figure_of(what, "pearson_p", pp, "p");
        test_figure_of(what, "neighbour_g_p", ngp, "p");
        assert_true(gp > ALPHA && pp > ALPHA);
        assert_true(ngp < ALPHA && np < ALPHA);
    }
}

/* ---- ustat_tree ---------------------------------------------------------------------------- */

/* Cells: per level l the values of a GRR level (2^l) or (row, bit) of a Hadamard level (2^(l+1)),
 * laid out level after level. */
static size_t tree_cell(const dpm_ustat_tree_t *m, uint32_t level, uint32_t row, uint32_t value)
{
    size_t off = 0;
    for (uint32_t l = 1; l < level; l++) {
        off += l <= m->grr_levels ? (size_t)1 << l : (size_t)2 << l;
    }
    return off + (level <= m->grr_levels ? value : 2u * row + value);
}

static size_t tree_pmf(const dpm_ustat_tree_t *m, uint32_t x, double *pmf)
{
    size_t n = 0;
    for (uint32_t l = 1; l <= m->depth; l++) {
        uint32_t node = x >> (m->depth - l);
        double pl = 1.0 / m->depth;
        if (l <= m->grr_levels) {
            for (uint32_t v = 0; v < (1u << l); v++) {
                pmf[n++] = pl * (v == node ? m->grr[l - 1].keep : m->grr[l - 1].other) / TWO32;
            }
        } else {
            for (uint32_t j = 0; j < (1u << l); j++) {
                uint32_t par = (uint32_t)__builtin_parity(j & node);
                for (uint32_t b = 0; b < 2; b++) {
                    pmf[n++] = pl / (1u << l) * (b == par ? m->rr.keep : m->rr.other) / TWO32;
                }
            }
        }
    }
    return n;
}

static void test_tree_gof(void **state)
{
    (void)state;
    const uint32_t grr_levels[2] = {0, 2};
    for (int c = 0; c < 2; c++) {
        dpm_ustat_tree_t m;
        assert_int_equal(dpm_ustat_tree_init(&m, 4, grr_levels[c], DPM_EPS_ONE), DPM_OK);
        const dpm_ustat_example_t ex = {(uint32_t)(0.7 * ONE), 1, 0}; /* x = 11 = 1011b */
        uint32_t x = (uint32_t)(((uint64_t)ex.score * 16u) >> 31);
        static uint64_t counts[64];
        static double pmf[64];
        memset(counts, 0, sizeof(counts));
        size_t n = tree_pmf(&m, x, pmf);
        test_rng_t t;
        dpm_rng_t g;
        dpm_rand_t r;
        rand_init(&r, &t, &g, 800u + (uint64_t)c);
        for (uint32_t i = 0; i < SAMPLES; i++) {
            dpm_ustat_tree_report_t rep;
            assert_int_equal(dpm_ustat_tree_perturb(&m, &r, &ex, &rep), DPM_OK);
            counts[tree_cell(&m, rep.level, rep.row, rep.value)]++;
        }
        double pp = 0.0, gp = gof(counts, pmf, n, &pp);
        (void)tree_pmf(&m, x ^ 1u, pmf); /* negative control: the neighbouring leaf */
        double np = 0.0, ngp = gof(counts, pmf, n, &np);
        print_message("# ustat_tree depth 4, %u GRR levels, %zu cells: G p %.3g, Pearson p %.3g; "
                      "neighbouring leaf's pmf: G p %.3g\n",
                      grr_levels[c], n, gp, pp, ngp);
        char what[64];
        snprintf(what, sizeof(what), "ustat_tree grr %u", grr_levels[c]);
        test_figure_of(what, "g_p", gp, "p");
        test_figure_of(what, "pearson_p", pp, "p");
        test_figure_of(what, "neighbour_g_p", ngp, "p");
        assert_true(gp > ALPHA && pp > ALPHA);
        assert_true(ngp < ALPHA && np < ALPHA);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bins_gof),
        cmocka_unit_test(test_tree_gof),
    };
    return cmocka_run_group_tests_name("ustat_gof", tests, NULL, NULL);
}
