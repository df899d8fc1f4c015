/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group AP and ECE and their comparisons (host-sim/estimate/roc_groups_prc.h) on inputs with
 * known answers: without noise and with a GRR that keeps every group (P = 1 - 2^-31), each
 * group's AP and ECE equal pr_calibration.h's of that group's own counts, the difference is the
 * largest minus the smallest and the ratio the smallest over the largest, and the model's view
 * (ci_total, *_compare_total) carries the sampling term of the group's own counts; no reports
 * leaves everything undefined with a reason; bad arguments are refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "estimate/pr_calibration.h"
#include "estimate/roc_groups_prc.h"

#define G 3u
#define B 4u

/* group g's counts: positives pos[g][b], negatives neg[g][b] */
static const uint64_t kPos[G][B] = {{1, 2, 3, 4}, {2, 2, 2, 2}, {0, 1, 4, 9}};
static const uint64_t kNeg[G][B] = {{4, 3, 2, 1}, {3, 3, 2, 1}, {6, 2, 1, 0}};

static void fill(dpm_roc_groups_agg_t *a)
{
    assert_int_equal(dpm_roc_groups_agg_init(a, G, B), DPM_OK);
    for (uint32_t g = 0; g < G; g++) {
        for (uint32_t b = 0; b < B; b++) { /* one example per report */
            for (int label = 0; label < 2; label++) {
                for (uint64_t i = 0; i < (label ? kPos : kNeg)[g][b]; i++) {
                    int32_t pos[B] = {0}, neg[B] = {0};
                    (label ? pos : neg)[b] = 1;
                    assert_int_equal(dpm_roc_groups_agg_add(a, g, B, pos, neg), DPM_OK);
                }
            }
        }
    }
}

static void params(dpm_roc_groups_params_t *p)
{
    assert_int_equal(dpm_roc_groups_params_init(p, G, B, UINT32_MAX - 1u, 1u, 0.0), DPM_OK);
}

static void test_noiseless_groups_are_exact(void **state)
{
    (void)state;
    dpm_roc_groups_params_t p;
    params(&p);
    dpm_roc_groups_agg_t a;
    fill(&a);
    dpm_roc_groups_prc_t *e = malloc(sizeof(*e));
    assert_non_null(e);
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, 1, e), DPM_OK);
    double w[B] = {0.25, 0.25, 0.25, 0.25}, ap[G], ece[G];
    for (uint32_t g = 0; g < G; g++) {
        ap[g] = dpm_prc_ap_exact(kPos[g], kNeg[g], B);
        ece[g] = dpm_prc_ece_exact(kPos[g], kNeg[g], w, B);
        assert_true(e->ap[g].defined && e->ece[g].defined);
        assert_true(fabs(e->ap[g].est - ap[g]) < 1e-6);
        assert_true(fabs(e->ece[g].est - ece[g]) < 1e-6);
    }
    assert_true(fabs(ap[0] - 0.7) < 1e-12);
    /* the model's (total) view: the sampling term of the group's own counts, as pooled */
    dpm_roc_params_t exact;
    assert_int_equal(dpm_roc_params_init(&exact, B, 0.0), DPM_OK);
    for (uint32_t g = 0; g < G; g++) {
        dpm_roc_agg_t one;
        assert_int_equal(dpm_roc_agg_init(&one, B), DPM_OK);
        for (uint32_t b = 0; b < B; b++) {
            one.pos[b] = (int64_t)kPos[g][b];
            one.neg[b] = (int64_t)kNeg[g][b];
        }
        one.reports = 1;
        dpm_prc_estimate_t x;
        assert_int_equal(dpm_prc_estimate(&exact, &one, 0.95, &x), DPM_OK);
        assert_true(x.ap_var_sampling > 0.0 && x.ece_var_sampling > 0.0);
        assert_true(fabs(e->ap[g].var_sampling / x.ap_var_sampling - 1.0) < 1e-6);
        assert_true(fabs(e->ece[g].var_sampling / x.ece_var_sampling - 1.0) < 1e-6);
        assert_true(fabs(e->ece[g].bound_total - x.ece_bound_total) < 1e-6);
        assert_true(e->ap[g].ci_total_lo <= e->ap[g].est && e->ap[g].est <= e->ap[g].ci_total_hi);
        assert_true(e->ap[g].ci_total_hi - e->ap[g].ci_total_lo >
                    e->ap[g].ci_hi - e->ap[g].ci_lo + 1e-3);
        /* the two-aggregator mode's groups carry the same totals */
        dpm_prc_group_t from;
        dpm_prc_group_of(&x, 1, &from);
        assert_true(from.var_sampling == x.ece_var_sampling &&
                    from.ci_total_lo == x.ece_ci_total_lo && from.bound_total == x.ece_bound_total);
    }
    for (int m = 0; m < 2; m++) { /* defined by the sampling alone, and max - min */
        const dpm_prc_compare_t *t = m ? &e->ece_compare_total : &e->ap_compare_total;
        const double *v = m ? ece : ap;
        double max = fmax(v[0], fmax(v[1], v[2])), min = fmin(v[0], fmin(v[1], v[2]));
        assert_true(t->defined);
        assert_true(fabs(t->difference - (max - min)) < 1e-6);
        assert_true(t->difference_lo <= max - min && max - min <= t->difference_hi);
        assert_true(t->difference_hi - t->difference_lo > 0.01);
    }
    dpm_roc_groups_prc_t *n = malloc(sizeof(*n)); /* without the model's comparisons */
    assert_non_null(n);
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, 0, n), DPM_OK);
    assert_false(n->ap_compare_total.defined || n->ece_compare_total.defined);
    assert_non_null(strstr(n->ap_compare_total.reason, "not computed"));
    assert_true(n->ap_compare.defined == e->ap_compare.defined &&
                n->ap_compare.difference == e->ap_compare.difference);
    assert_true(n->ap[1].ci_total_hi == e->ap[1].ci_total_hi);
    free(n);
    const dpm_prc_compare_t *c = &e->ap_compare;
    if (c->defined) { /* the variances are ~0 without noise: defined or not, never wrong */
        double max = fmax(ap[0], fmax(ap[1], ap[2])), min = fmin(ap[0], fmin(ap[1], ap[2]));
        assert_true(fabs(c->difference - (max - min)) < 1e-6);
        assert_true(!c->ratio_defined || fabs(c->ratio - min / max) < 1e-6);
        assert_int_equal(c->npairs, 3);
    } else {
        assert_true(c->reason[0] != '\0');
    }
    dpm_roc_groups_agg_free(&a);
    free(e);
}

static void test_no_reports(void **state)
{
    (void)state;
    dpm_roc_groups_params_t p;
    params(&p);
    dpm_roc_groups_agg_t a;
    assert_int_equal(dpm_roc_groups_agg_init(&a, G, B), DPM_OK);
    dpm_roc_groups_prc_t *e = malloc(sizeof(*e));
    assert_non_null(e);
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, 1, e), DPM_OK);
    for (uint32_t g = 0; g < G; g++) {
        assert_false(e->ap[g].defined);
        assert_string_equal(e->ece[g].reason, "no reports");
    }
    assert_false(e->ap_compare.defined);
    assert_string_equal(e->ece_compare.reason, "no reports");
    assert_non_null(e->ap_compare.method);
    dpm_roc_groups_agg_free(&a);
    free(e);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    dpm_roc_groups_params_t p;
    params(&p);
    dpm_roc_groups_agg_t a;
    fill(&a);
    dpm_roc_groups_prc_t *e = malloc(sizeof(*e));
    assert_non_null(e);
    assert_int_equal(dpm_roc_groups_prc(NULL, &a, 0.95, 1, e), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.0, 1, e), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, 1, NULL), DPM_ERR_PARAM);
    p.bins = B + 1;
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, 1, e), DPM_ERR_PARAM);
    dpm_roc_groups_agg_free(&a);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_noiseless_groups_are_exact),
        cmocka_unit_test(test_no_reports),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("roc_groups_prc", tests, NULL, NULL);
}
