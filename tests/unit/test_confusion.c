/* SPDX-License-Identifier: Apache-2.0 */
/* Confusion counts and the metrics derived from them (dpm/stats.h): each example lands in its
 * one cell, every metric is the exact rational of its definition, and each refusal (bad
 * arguments, a count that would overflow, an undefined metric) leaves the caller's state as it
 * was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/stats.h"
#include "dpm/expert/stats.h"

static void add(dpm_confusion_t *c, int label, int prediction, int times)
{
    for (int i = 0; i < times; i++) {
        assert_int_equal(dpm_confusion_add(c, label, prediction), DPM_OK);
    }
}

static void test_each_example_lands_in_its_cell(void **state)
{
    (void)state;
    dpm_confusion_t c = {0, 0, 0, 0};
    add(&c, 1, 1, 5); /* tp */
    add(&c, 0, 1, 3); /* fp */
    add(&c, 0, 0, 7); /* tn */
    add(&c, 1, 0, 2); /* fn */
    assert_int_equal(c.tp, 5);
    assert_int_equal(c.fp, 3);
    assert_int_equal(c.tn, 7);
    assert_int_equal(c.fn, 2);
}

static void expect_ratio(const dpm_confusion_t *c, dpm_metric_t m, uint64_t num, uint64_t den)
{
    dpm_ratio_t r = {0, 0};
    assert_int_equal(dpm_metric_ratio(c, m, &r), DPM_OK);
    assert_int_equal(r.num, num);
    assert_int_equal(r.den, den);
}

static void test_metrics_are_their_definitions(void **state)
{
    (void)state;
    const dpm_confusion_t c = {5, 3, 7, 2}; /* tp fp tn fn */
    expect_ratio(&c, DPM_METRIC_ACCURACY, 12, 17);
    expect_ratio(&c, DPM_METRIC_TPR, 5, 7);
    expect_ratio(&c, DPM_METRIC_FPR, 3, 10);
    expect_ratio(&c, DPM_METRIC_PRECISION, 5, 8);
    /* Counts near 2^32: the sums are taken in 64 bits. */
    const dpm_confusion_t big = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    expect_ratio(&big, DPM_METRIC_ACCURACY, 2ull * UINT32_MAX, 4ull * UINT32_MAX);
    expect_ratio(&big, DPM_METRIC_FPR, UINT32_MAX, 2ull * UINT32_MAX);
}

static void test_undefined_metric_leaves_out_untouched(void **state)
{
    (void)state;
    const dpm_confusion_t no_pos = {0, 4, 6, 0};
    const dpm_confusion_t no_neg = {3, 0, 0, 1};
    const dpm_confusion_t no_pred_pos = {0, 0, 6, 2};
    const dpm_confusion_t empty = {0, 0, 0, 0};
    dpm_ratio_t r = {77, 99};
    assert_int_equal(dpm_metric_ratio(&no_pos, DPM_METRIC_TPR, &r), DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_metric_ratio(&no_neg, DPM_METRIC_FPR, &r), DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_metric_ratio(&no_pred_pos, DPM_METRIC_PRECISION, &r),
                     DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_metric_ratio(&empty, DPM_METRIC_ACCURACY, &r), DPM_ERR_UNDEFINED);
    assert_int_equal(r.num, 77);
    assert_int_equal(r.den, 99);
    /* The defined ones of the same counts still answer. */
    expect_ratio(&no_pos, DPM_METRIC_FPR, 4, 10);
    expect_ratio(&no_neg, DPM_METRIC_TPR, 3, 4);
}

static void test_bad_arguments_change_nothing(void **state)
{
    (void)state;
    dpm_confusion_t c = {1, 2, 3, 4};
    const dpm_confusion_t before = c;
    assert_int_equal(dpm_confusion_add(NULL, 1, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_confusion_add(&c, 2, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_confusion_add(&c, -1, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_confusion_add(&c, 1, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_confusion_add(&c, 0, -1), DPM_ERR_PARAM);
    assert_memory_equal(&c, &before, sizeof(c));
    dpm_ratio_t r = {77, 99};
    assert_int_equal(dpm_metric_ratio(NULL, DPM_METRIC_TPR, &r), DPM_ERR_PARAM);
    assert_int_equal(dpm_metric_ratio(&c, DPM_METRIC_TPR, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_metric_ratio(&c, (dpm_metric_t)0, &r), DPM_ERR_PARAM);
    assert_int_equal(dpm_metric_ratio(&c, (dpm_metric_t)(DPM_METRIC_COUNT + 1), &r),
                     DPM_ERR_PARAM);
    assert_int_equal(r.num, 77);
    assert_int_equal(r.den, 99);
}

static void test_overflow_is_refused_and_changes_nothing(void **state)
{
    (void)state;
    /* A full cell. */
    dpm_confusion_t c = {UINT32_MAX, 0, 0, 0};
    dpm_confusion_t before = c;
    assert_int_equal(dpm_confusion_add(&c, 1, 1), DPM_ERR_RANGE);
    assert_memory_equal(&c, &before, sizeof(c));
    /* Room in the cell, but the total would pass 2^32 - 1 (accuracy's denominator). */
    dpm_confusion_t t = {UINT32_MAX - 10u, 10u, 0, 0};
    before = t;
    assert_int_equal(dpm_confusion_add(&t, 0, 0), DPM_ERR_RANGE);
    assert_memory_equal(&t, &before, sizeof(t));
    /* One below the limit still counts. */
    dpm_confusion_t last = {UINT32_MAX - 11u, 10u, 0, 0};
    assert_int_equal(dpm_confusion_add(&last, 0, 0), DPM_OK);
    assert_int_equal(last.tn, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_example_lands_in_its_cell),
        cmocka_unit_test(test_metrics_are_their_definitions),
        cmocka_unit_test(test_undefined_metric_leaves_out_untouched),
        cmocka_unit_test(test_bad_arguments_change_nothing),
        cmocka_unit_test(test_overflow_is_refused_and_changes_nothing),
    };
    return cmocka_run_group_tests_name("confusion", tests, NULL, NULL);
}
