/* SPDX-License-Identifier: Apache-2.0 */
/* Status strings and the ε constructors (never from a float). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/types.h"

#define SENTINEL 0xA5A5A5A5u

static void test_strerror_covers_every_status(void **state)
{
    (void)state;
    for (int s = DPM_OK; s >= DPM_ERR_LAST; s--) {
        const char *msg = dpm_strerror((dpm_status_t)s);
        assert_non_null(msg);
        assert_string_not_equal(msg, "unknown status");
    }
    assert_string_equal(dpm_strerror((dpm_status_t)-999), "unknown status");
}

static void test_eps_decimal_exact_values(void **state)
{
    (void)state;
    dpm_eps_t e = 0;
    assert_int_equal(dpm_eps_from_decimal("1", &e), DPM_OK);
    assert_int_equal(e, 65536);
    assert_int_equal(dpm_eps_from_decimal("0.5", &e), DPM_OK);
    assert_int_equal(e, 32768);
    assert_int_equal(dpm_eps_from_decimal("2.25", &e), DPM_OK);
    assert_int_equal(e, 2 * 65536 + 16384);
    assert_int_equal(dpm_eps_from_decimal(".75", &e), DPM_OK);
    assert_int_equal(e, 49152);
    assert_int_equal(dpm_eps_from_decimal("64", &e), DPM_OK);
    assert_int_equal(e, 64u << 16);
}

static void test_eps_decimal_rounds_down(void **state)
{
    (void)state;
    dpm_eps_t e = 0;
    /* 0.1 * 65536 = 6553.6 -> 6553 (less privacy loss) */
    assert_int_equal(dpm_eps_from_decimal("0.1", &e), DPM_OK);
    assert_int_equal(e, 6553);
    /* just below one Q16.16 step above 1: 1 + 1/65536 - 1e-12 */
    assert_int_equal(dpm_eps_from_decimal("1.000015258788", &e), DPM_OK);
    assert_int_equal(e, 65536);
    assert_int_equal(dpm_eps_from_decimal("1.0000152587890625", &e), DPM_OK);
    assert_int_equal(e, 65537);
    /* many digits beyond 18 are ignored, never rounding up */
    assert_int_equal(dpm_eps_from_decimal("0.99999999999999999999999999", &e), DPM_OK);
    assert_int_equal(e, 65535);
}

static void test_eps_decimal_rejects_bad_input(void **state)
{
    (void)state;
    const char *bad[] = {"0", "-1", "abc", "1e9", "", "0.0", "0.000001", "1.", ".", "+1",
                         " 1", "1 ", "1..2", "65", "1000000000", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dpm_eps_t e = SENTINEL;
        assert_int_equal(dpm_eps_from_decimal(bad[i], &e), DPM_ERR_PARAM);
        assert_int_equal(e, SENTINEL); /* untouched */
    }
    dpm_eps_t e = SENTINEL;
    assert_int_equal(dpm_eps_from_decimal(NULL, &e), DPM_ERR_PARAM);
    assert_int_equal(e, SENTINEL);
    assert_int_equal(dpm_eps_from_decimal("1", NULL), DPM_ERR_PARAM);
}

static void test_eps_ratio(void **state)
{
    (void)state;
    dpm_eps_t e = SENTINEL;
    assert_int_equal(dpm_eps_from_ratio(1, 2, &e), DPM_OK);
    assert_int_equal(e, 32768);
    assert_int_equal(dpm_eps_from_ratio(1, 3, &e), DPM_OK);
    assert_int_equal(e, 21845); /* floor(65536/3) */
    e = SENTINEL;
    assert_int_equal(dpm_eps_from_ratio(0, 3, &e), DPM_ERR_PARAM);
    assert_int_equal(dpm_eps_from_ratio(1, 0, &e), DPM_ERR_PARAM);
    assert_int_equal(dpm_eps_from_ratio(65, 1, &e), DPM_ERR_PARAM);
    assert_int_equal(dpm_eps_from_ratio(1, 1000000, &e), DPM_ERR_PARAM); /* rounds to 0 */
    assert_int_equal(e, SENTINEL);
}

static void test_eps_format_rounds_up(void **state)
{
    (void)state;
    char buf[16];
    assert_int_equal(dpm_eps_format(32768, buf, sizeof(buf)), DPM_OK);
    assert_string_equal(buf, "0.500000");
    assert_int_equal(dpm_eps_format(6553, buf, sizeof(buf)), DPM_OK);
    assert_string_equal(buf, "0.099991"); /* 0.0999908... rounded up */
    assert_int_equal(dpm_eps_format(64u << 16, buf, sizeof(buf)), DPM_OK);
    assert_string_equal(buf, "64.000000");
    assert_int_equal(dpm_eps_format(65536, buf, 8), DPM_ERR_BUFFER);
}

static void test_score_helper_clamps(void **state)
{
    (void)state;
    assert_int_equal(dpm_score_from_double(-0.5), 0);
    assert_int_equal(dpm_score_from_double(0.5), DPM_SCORE_ONE / 2);
    assert_int_equal(dpm_score_from_double(1.0), DPM_SCORE_ONE);
    assert_int_equal(dpm_score_from_double(7.0), DPM_SCORE_ONE);
    assert_int_equal(dpm_score_from_double(0.0 / 0.0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror_covers_every_status),
        cmocka_unit_test(test_eps_decimal_exact_values),
        cmocka_unit_test(test_eps_decimal_rounds_down),
        cmocka_unit_test(test_eps_decimal_rejects_bad_input),
        cmocka_unit_test(test_eps_ratio),
        cmocka_unit_test(test_eps_format_rounds_up),
        cmocka_unit_test(test_score_helper_clamps),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
