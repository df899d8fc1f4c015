/* SPDX-License-Identifier: Apache-2.0 */
/* Status strings and the ε constructors (never from a float in the library; DPM_EPS folds a
 * decimal constant in the app's code). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <stdio.h>

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

/* DPM_EPS(x) is floor(x * 2^16) like dpm_eps_from_decimal, for decimals of up to 6 fraction
 * digits: such an x * 65536 is an integer or at least 64 / 10^6 from one (65536 n mod 10^6 is a
 * multiple of gcd(65536, 10^6) = 64), far above the double's rounding error (< 5e-10 below
 * 65536). Checked on every 3-digit decimal up to 64, every 6-digit one below 2, and a stride
 * of 6-digit ones up to 64 (x = n / 10^k is the correctly rounded double of the literal). */
static void test_eps_macro_matches_decimal(void **state)
{
    (void)state;
    assert_int_equal(DPM_EPS(1).q16, 65536);
    assert_int_equal(DPM_EPS(0.5).q16, 32768);
    assert_int_equal(DPM_EPS(2.25).q16, 2 * 65536 + 16384);
    assert_int_equal(DPM_EPS(0.1).q16, 6553); /* rounds down, as the decimal parser */
    assert_int_equal(DPM_EPS(64).q16, 64u << 16);
    assert_int_equal(DPM_EPS(0).q16, 0);
    assert_int_equal(DPM_EPS(-1).q16, 0);
    assert_int_equal(DPM_EPS(1e-9).q16, 0);
    assert_int_equal(DPM_EPS(1e9).q16, 0xFFFFFFFFu); /* clamped, refused later as > EPS_MAX */
    assert_int_equal(DPM_EPS_Q16(65536).q16, DPM_EPS_ONE);
    static const dpm_eps_param_t folded = DPM_EPS(0.25); /* a constant initializer */
    assert_int_equal(folded.q16, 16384);
    const struct {
        uint32_t den, digits, from, to, stride;
    } grids[3] = {
        {1000u, 3, 1, 64000u, 1}, {1000000u, 6, 1, 2000000u, 1}, {1000000u, 6, 1, 64000000u, 997}};
    uint32_t checked = 0;
    for (int g = 0; g < 3; g++) {
        for (uint32_t n = grids[g].from; n <= grids[g].to; n += grids[g].stride) {
            char text[32];
            snprintf(text, sizeof(text), "%u.%0*u", n / grids[g].den, (int)grids[g].digits,
                     n % grids[g].den);
            dpm_eps_t want = 0;
            double x = (double)n / (double)grids[g].den;
            if (dpm_eps_from_decimal(text, &want) != DPM_OK) {
                want = 0; /* rounds to 0: DPM_EPS gives 0 too */
            }
            if (DPM_EPS(x).q16 != want) {
                fail_msg("DPM_EPS(%s) = %u, dpm_eps_from_decimal: %u", text, DPM_EPS(x).q16, want);
            }
            checked++;
        }
    }
    print_message("# DPM_EPS agrees with dpm_eps_from_decimal on %u decimals\n", checked);
    /* negative control: a plain cast of the double (no floor toward 0 for negatives, no
     * clamp) is what the macro replaces; rounding to nearest would disagree on the grid */
    assert_true((dpm_eps_t)(0.1 * 65536.0 + 0.5) != DPM_EPS(0.1).q16);
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
        cmocka_unit_test(test_eps_macro_matches_decimal),
        cmocka_unit_test(test_eps_decimal_exact_values),
        cmocka_unit_test(test_eps_decimal_rounds_down),
        cmocka_unit_test(test_eps_decimal_rejects_bad_input),
        cmocka_unit_test(test_eps_ratio),
        cmocka_unit_test(test_eps_format_rounds_up),
        cmocka_unit_test(test_score_helper_clamps),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
