/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group AP and ECE and their comparisons (host-sim/estimate/roc_groups_prc.h) on inputs with
 * known answers: without noise and with a GRR that keeps every group (P = 1 - 2^-31), each
 * group's AP and ECE equal pr_calibration.h's of that group's own counts, the difference is the
 * largest minus the smallest and the ratio the smallest over the largest; no reports leaves
 * everything undefined with a reason; bad arguments are refused. */
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
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, e), DPM_OK);
    double w[B] = {0.25, 0.25, 0.25, 0.25}, ap[G], ece[G];
    for (uint32_t g = 0; g < G; g++) {
        ap[g] = dpm_prc_ap_exact(kPos[g], kNeg[g], B);
        ece[g] = dpm_prc_ece_exact(kPos[g], kNeg[g], w, B);
        assert_true(e->ap[g].defined && e->ece[g].defined);
        assert_true(fabs(e->ap[g].est - ap[g]) < 1e-6);
        assert_true(fabs(e->ece[g].est - ece[g]) < 1e-6);
    }
    assert_true(fabs(ap[0] - 0.7) < 1e-12);
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
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, e), DPM_OK);
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
    assert_int_equal(dpm_roc_groups_prc(NULL, &a, 0.95, e), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.0, e), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, NULL), DPM_ERR_PARAM);
    p.bins = B + 1;
    assert_int_equal(dpm_roc_groups_prc(&p, &a, 0.95, e), DPM_ERR_PARAM);
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
