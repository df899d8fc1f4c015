/* SPDX-License-Identifier: Apache-2.0 */
/* port/cortex-m passes the port conformance suite (tests/support/port_conformance.h) on the
 * target, under QEMU: its storage (the SDK's dpm_ram_storage over the board's RAM: a power
 * cycle is modelled as RAM that keeps its bytes, and it does not tear, so the torn-write check
 * is NOT RUN here; the fault-injecting storage's is run in test_port_conformance, which this
 * image set also runs), its test generator, and the board's TRNG hook as the failed source
 * (QEMU's mps2 has no TRNG: the weak default fails closed) with the SDK refusing its reports.
 * port/cortex-m has no clock and no transport (a board brings its timer and network stack):
 * their checks run on the host ports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/port_cortex_m.h"
#include "dpm/ram_storage.h"
#include "port_conformance.h"

static dpm_port_log_t logbook;
static dpm_port_suite_t suite;

static int ram_reopen(void *ctx, dpm_storage_t *s)
{
    (void)ctx;
    (void)s;
    return 0;
}

static void test_cm_storage_conforms(void **state)
{
    (void)state;
    static uint8_t ram[2048];
    static dpm_ram_storage_t r;
    dpm_storage_t s = dpm_ram_storage(&r, ram, sizeof(ram));
    dpm_port_storage_hooks_t h = {ram_reopen, NULL, NULL, 0};
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_storage(&suite, &s, &h);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.passed, 7);
    assert_int_equal(suite.not_run, 1); /* storage.torn_write_in_range: RAM does not tear */
}

static int trng_fails(void *ctx, dpm_rng_t *broken)
{
    (void)ctx;
    *broken = dpm_cm_trng();
    return 0;
}

static void test_cm_rng_conforms(void **state)
{
    (void)state;
    static dpm_cm_test_drbg_t d;
    dpm_cm_test_drbg_seed(&d, 11);
    dpm_rng_t rng = dpm_cm_test_drbg(&d);
    dpm_port_rng_hooks_t h = {trng_fails, NULL};
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_rng(&suite, &rng, &h);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.not_run, 0);
    assert_int_equal(suite.passed, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cm_storage_conforms),
        cmocka_unit_test(test_cm_rng_conforms),
    };
    return cmocka_run_group_tests_name("cm_port_conformance", tests, NULL, NULL);
}
