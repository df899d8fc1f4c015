/* SPDX-License-Identifier: Apache-2.0 */
/* Device side of the tuple mechanisms: metrics as rationals, splits, implemented ε, the
 * flipped-group rule, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/tuple.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/stats.h"
#include "test_rng.h"

static const dpm_metric_t tpr_only[] = {DPM_METRIC_TPR};
static const dpm_metric_t all4[] = {DPM_METRIC_ACCURACY, DPM_METRIC_TPR, DPM_METRIC_FPR,
                                    DPM_METRIC_PRECISION};

static void test_confusion_and_metrics(void **state)
{
    (void)state;
    dpm_confusion_t c = {0, 0, 0, 0};
    const int labels[] = {1, 1, 1, 0, 0, 0, 0, 1};
    const int preds[] = {1, 1, 0, 0, 0, 1, 0, 1};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(dpm_confusion_add(&c, labels[i], preds[i]), DPM_OK);
    }
    assert_int_equal(c.tp, 3);
    assert_int_equal(c.fn, 1);
    assert_int_equal(c.fp, 1);
    assert_int_equal(c.tn, 3);
    dpm_ratio_t r;
    assert_int_equal(dpm_metric_ratio(&c, DPM_METRIC_ACCURACY, &r), DPM_OK);
    assert_true(r.num == 6 && r.den == 8);
    assert_int_equal(dpm_metric_ratio(&c, DPM_METRIC_TPR, &r), DPM_OK);
    assert_true(r.num == 3 && r.den == 4);
    assert_int_equal(dpm_metric_ratio(&c, DPM_METRIC_FPR, &r), DPM_OK);
    assert_true(r.num == 1 && r.den == 4);
    assert_int_equal(dpm_metric_ratio(&c, DPM_METRIC_PRECISION, &r), DPM_OK);
    assert_true(r.num == 3 && r.den == 4);
    assert_int_equal(dpm_confusion_add(&c, 2, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_confusion_add(&c, 1, -1), DPM_ERR_PARAM);
    assert_int_equal(c.tp + c.fp + c.tn + c.fn, 8); /* unchanged */
}

static void test_undefined_metric_is_an_error(void **state)
{
    (void)state;
    dpm_confusion_t no_pos = {0, 0, 5, 0}; /* no positive label or prediction: TPR, precision undefined */
    dpm_ratio_t r = {77, 88};
    assert_int_equal(dpm_metric_ratio(&no_pos, DPM_METRIC_TPR, &r), DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_metric_ratio(&no_pos, DPM_METRIC_PRECISION, &r), DPM_ERR_UNDEFINED);
    assert_true(r.num == 77 && r.den == 88);
    assert_int_equal(dpm_metric_ratio(&no_pos, (dpm_metric_t)9, &r), DPM_ERR_PARAM);
    dpm_confusion_t full = {UINT32_MAX, 0, 0, 0};
    assert_int_equal(dpm_confusion_add(&full, 1, 1), DPM_ERR_RANGE);
    assert_int_equal(full.tp, UINT32_MAX);
}

static void test_splits_implement_at_most_the_requested_eps(void **state)
{
    (void)state;
    const char *eps_text[] = {"0.01", "0.1", "0.5", "1", "2", "5", "10"};
    for (size_t e = 0; e < sizeof(eps_text) / sizeof(eps_text[0]); e++) {
        dpm_eps_t eps;
        assert_int_equal(dpm_eps_from_decimal(eps_text[e], &eps), DPM_OK);
        for (uint32_t d = 2; d <= 8; d *= 2) {
            for (uint32_t m = 1; m <= 4; m++) {
                for (int kind = DPM_TUPLE_MR; kind <= DPM_TUPLE_ML; kind++) {
                    dpm_tuple_t t;
                    dpm_status_t st = dpm_tuple_init(&t, (dpm_tuple_kind_t)kind, d, all4, m, eps);
                    if (kind == DPM_TUPLE_ML && eps < 6553 * m) {
                        /* tiny per-metric ε may not fit the Q16 grid in int32 */
                        if (st == DPM_ERR_RANGE) {
                            continue;
                        }
                    }
                    assert_int_equal(st, DPM_OK);
                    assert_true(t.eps_implemented <= eps);
                    /* and not wastefully below it: within 0.2% + 4 ulps */
                    assert_true(t.eps_implemented + eps / 500 + 4 >= eps);
                }
            }
        }
    }
}

static void test_mr_matches_the_corrected_split(void **state)
{
    (void)state;
    /* m = 1, d = 2, ε = 1: ε2 = 1 and e^ε1 = (1 + e) / 2 = 1.859140914..., so the group
     * keep probability is a = e^ε1 / (e^ε1 + 1) = 0.6502446...; the value RR keeps with
     * b = e / (1 + e) = 0.731058578... (sdk/docs/tuple.md §Thresholds: T = 3139872686 at ε = 1). */
    dpm_tuple_t t;
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 2, tpr_only, 1, 65536), DPM_OK);
    assert_int_equal(t.value.rr.keep, 3139872686u);
    double a = (double)t.group_grr.keep / 4294967296.0;
    assert_true(a > 0.6502440 && a < 0.6502446); /* quantized down by < 2^-32 */
}

static void test_perturb_shapes_and_flipped_rule(void **state)
{
    (void)state;
    test_rng_t tr;
    test_rng_seed(&tr, 42);
    dpm_rng_t rng = test_rng_port(&tr);
    dpm_rand_t r;
    dpm_rand_init(&r, &rng);
    dpm_tuple_t mr, ml;
    assert_int_equal(dpm_tuple_init(&mr, DPM_TUPLE_MR, 3, all4, 4, 2 * 65536), DPM_OK);
    assert_int_equal(dpm_tuple_init(&ml, DPM_TUPLE_ML, 3, tpr_only, 1, 65536), DPM_OK);
    const dpm_ratio_t v[4] = {{1, 1}, {0, 5}, {2, 3}, {7, 7}};
    /* tuple_ml with value 1 (v = +1): mean of kept reports is 2^16, flipped ones 0 */
    double sum_kept = 0, sum_flip = 0;
    long n_kept = 0, n_flip = 0;
    for (int i = 0; i < 200000; i++) {
        dpm_tuple_report_t rep;
        assert_int_equal(dpm_tuple_perturb(&mr, &r, 1, v, &rep), DPM_OK);
        assert_true(rep.group < 3 && rep.nmetrics == 4);
        for (int j = 0; j < 4; j++) {
            assert_true(rep.value[j] == 1 || rep.value[j] == -1);
        }
        assert_int_equal(dpm_tuple_perturb(&ml, &r, 2, v, &rep), DPM_OK);
        if (rep.group == 2) {
            sum_kept += rep.value[0];
            n_kept++;
        } else {
            sum_flip += rep.value[0];
            n_flip++;
        }
    }
    /* noise sd per report = sqrt(2) * 2 * 2^16 ~ 185000; 6-sigma bounds on the means */
    double sd = 185364.0;
    assert_true(n_flip > 0 && n_kept > 0);
    assert_true(fabs(sum_kept / n_kept - 65536.0) < 6 * sd / sqrt((double)n_kept));
    assert_true(fabs(sum_flip / n_flip) < 6 * sd / sqrt((double)n_flip));
}

static void test_bad_input_changes_nothing(void **state)
{
    (void)state;
    dpm_tuple_t t, keep;
    memset(&t, 0x5A, sizeof(t));
    keep = t;
    const dpm_metric_t dup[] = {DPM_METRIC_TPR, DPM_METRIC_TPR};
    const dpm_metric_t bad_metric[] = {(dpm_metric_t)0};
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 1, tpr_only, 1, 65536), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, DPM_MAX_GROUPS + 1, tpr_only, 1, 65536),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 2, dup, 2, 65536), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 2, bad_metric, 1, 65536), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 2, tpr_only, 0, 65536), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 2, tpr_only, 1, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, (dpm_tuple_kind_t)7, 2, tpr_only, 1, 65536),
                     DPM_ERR_PARAM);
    /* ε too small for the Q(F) grid: 0.001 with F = 16 */
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_ML, 2, tpr_only, 1, 65), DPM_ERR_RANGE);
    assert_memory_equal(&t, &keep, sizeof(t));

    test_rng_t tr;
    test_rng_seed(&tr, 1);
    dpm_rng_t rng = test_rng_port(&tr);
    dpm_rand_t r;
    dpm_rand_init(&r, &rng);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_ML, 2, tpr_only, 1, 65536), DPM_OK);
    dpm_tuple_report_t rep, rep_keep;
    memset(&rep, 0x33, sizeof(rep));
    rep_keep = rep;
    const dpm_ratio_t ok = {1, 2}, undefined = {0, 0}, above_one = {3, 2};
    assert_int_equal(dpm_tuple_perturb(&t, &r, 2, &ok, &rep), DPM_ERR_PARAM); /* group >= d */
    assert_int_equal(dpm_tuple_perturb(&t, &r, 0, &undefined, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_perturb(&t, &r, 0, &above_one, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_perturb(&t, NULL, 0, &ok, &rep), DPM_ERR_PARAM);
    assert_memory_equal(&rep, &rep_keep, sizeof(rep));
    /* a failing RNG surfaces as DPM_ERR_RNG with nothing emitted */
    failing_rng_t fr;
    dpm_rng_t bad;
    assert_int_equal(failing_rand_init(&r, &fr, &bad, 3, 0), DPM_OK);
    assert_int_equal(dpm_tuple_perturb(&t, &r, 0, &ok, &rep), DPM_ERR_RNG);
    assert_memory_equal(&rep, &rep_keep, sizeof(rep));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_confusion_and_metrics),
        cmocka_unit_test(test_undefined_metric_is_an_error),
        cmocka_unit_test(test_splits_implement_at_most_the_requested_eps),
        cmocka_unit_test(test_mr_matches_the_corrected_split),
        cmocka_unit_test(test_perturb_shapes_and_flipped_rule),
        cmocka_unit_test(test_bad_input_changes_nothing),
    };
    return cmocka_run_group_tests_name("tuple", tests, NULL, NULL);
}
