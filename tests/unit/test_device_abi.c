/* SPDX-License-Identifier: Apache-2.0 */
/* An app compiled with other DPM_* options than its libdpm.a (here DPM_MAX_BINS 16 against the
 * library's 64, as a stray -D or an app-side Kconfig would do) gets DPM_ERR_CONFIG from
 * dpm_device_init and dpm_config_check, and the library writes nothing into its smaller
 * structs but the reason, the first member of dpm_device_t (at offset 0 in every
 * configuration). The negative control is tests/unit/test_device.c: built with the library's
 * options, dpm_config_check() and dpm_device_init pass there. */
#define DPM_MAX_BINS 16

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"

static void test_mismatched_app_is_refused_before_any_write(void **state)
{
    (void)state;
    assert_int_equal(DPM_MAX_BINS, 16);
    dpm_device_t dev;
    memset(&dev, 0x5A, sizeof(dev));
    dpm_device_t keep = dev;
    dpm_device_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(dpm_device_init(&dev, &cfg), DPM_ERR_CONFIG);
    assert_string_equal(dpm_device_why(&dev),
                        "app built with other DPM_* options or headers than libdpm");
    assert_memory_equal((const uint8_t *)&dev + sizeof(dev.why),
                        (const uint8_t *)&keep + sizeof(keep.why), sizeof(dev) - sizeof(dev.why));
    assert_int_equal(dpm_config_check(), DPM_ERR_CONFIG);
    assert_string_equal(dpm_strerror(DPM_ERR_CONFIG),
                        "app and library built with different configurations");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mismatched_app_is_refused_before_any_write),
    };
    return cmocka_run_group_tests_name("device_abi", tests, NULL, NULL);
}
