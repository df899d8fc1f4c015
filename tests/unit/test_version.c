/* SPDX-License-Identifier: Apache-2.0 */
/* The version macros and the library agree: DPM_VERSION_STRING and dpm_version() spell the three
 * numbers, DPM_VERSION_NUMBER and dpm_version_number() encode them, and dpm/dpm.h brings them.
 * (tests/e2e/test_version.py checks the tools, /healthz, the Makefile and CHANGES.md.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"

#if !defined(DPM_VERSION_NUMBER) || DPM_VERSION_NUMBER < 0x000100
#error "dpm/dpm.h must bring DPM_VERSION_NUMBER, usable in #if"
#endif

/* 1 if s is exactly "major.minor.patch" in decimal. */
static int spells(const char *s, int major, int minor, int patch)
{
    char want[40];
    snprintf(want, sizeof(want), "%d.%d.%d", major, minor, patch);
    return strcmp(s, want) == 0;
}

static void test_string_spells_the_numbers(void **state)
{
    (void)state;
    assert_true(spells(DPM_VERSION_STRING, DPM_VERSION_MAJOR, DPM_VERSION_MINOR, DPM_VERSION_PATCH));
    assert_string_equal(dpm_version(), DPM_VERSION_STRING);
    /* negative control: another patch number is told apart */
    assert_false(spells(DPM_VERSION_STRING, DPM_VERSION_MAJOR, DPM_VERSION_MINOR,
                        DPM_VERSION_PATCH + 1));
    print_message("# version %s (wire v%d)\n", dpm_version(), DPM_WIRE_VERSION);
}

static void test_number_encodes_the_numbers(void **state)
{
    (void)state;
    assert_true(DPM_VERSION_MINOR < 256 && DPM_VERSION_PATCH < 256);
    assert_int_equal(DPM_VERSION_NUMBER,
                     DPM_VERSION_MAJOR * 65536 + DPM_VERSION_MINOR * 256 + DPM_VERSION_PATCH);
    assert_int_equal(dpm_version_number(), DPM_VERSION_NUMBER);
    assert_true(DPM_WIRE_VERSION >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_spells_the_numbers),
        cmocka_unit_test(test_number_encodes_the_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
