/* SPDX-License-Identifier: Apache-2.0 */
/* port/cortex-m on the target: RAM storage keeps the storage contract (bounds, erase to 0xFF,
 * nothing changed on a refused call) and carries a privacy ledger across a "reboot"; the TRNG
 * hook fails closed when the board has none (QEMU's mps2), both for the SDK and for Mbed TLS;
 * the test generator is reproducible (and so only for tests). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/budget.h"
#include "dpm/noise.h"
#include "dpm/port_cortex_m.h"

#define REGION 512u

static void test_ram_storage_contract(void **state)
{
    (void)state;
    static uint8_t mem[REGION];
    memset(mem, 0x5A, sizeof(mem));
    dpm_cm_ram_storage_t s;
    assert_int_equal(dpm_cm_ram_storage_init(&s, NULL, REGION), -1);
    assert_int_equal(dpm_cm_ram_storage_init(&s, mem, 0), -1);
    assert_int_equal(mem[0], 0x5A); /* refused: untouched */
    assert_int_equal(dpm_cm_ram_storage_init(&s, mem, REGION), 0);
    dpm_storage_t st = dpm_cm_ram_storage(&s);
    assert_int_equal(st.size, REGION);
    uint8_t buf[16];
    assert_int_equal(st.read(st.ctx, 0, buf, sizeof(buf)), 0);
    for (size_t i = 0; i < sizeof(buf); i++) {
        assert_int_equal(buf[i], 0xFF); /* a new region reads erased */
    }
    const uint8_t data[4] = {1, 2, 3, 4};
    assert_int_equal(st.write(st.ctx, REGION - 4, data, 4), 0);
    assert_int_equal(st.read(st.ctx, REGION - 4, buf, 4), 0);
    assert_memory_equal(buf, data, 4);
    /* out of range (including the wrap-around of offset + len): refused, nothing changed */
    assert_int_equal(st.write(st.ctx, REGION - 3, data, 4), -1);
    assert_int_equal(st.write(st.ctx, UINT32_MAX, data, 2), -1);
    assert_int_equal(st.read(st.ctx, REGION, buf, 1), -1);
    assert_int_equal(st.erase(st.ctx, 1, REGION), -1);
    assert_int_equal(st.read(st.ctx, REGION, buf, 0), 0); /* empty read at the end is fine */
    assert_int_equal(mem[REGION - 3], 2);
    assert_int_equal(st.erase(st.ctx, REGION - 4, 2), 0);
    assert_int_equal(mem[REGION - 4], 0xFF);
    assert_int_equal(mem[REGION - 3], 0xFF);
    assert_int_equal(mem[REGION - 2], 3);
}

static void test_ledger_survives_reboot_on_ram_storage(void **state)
{
    (void)state;
    static uint8_t mem[REGION];
    dpm_cm_ram_storage_t s;
    assert_int_equal(dpm_cm_ram_storage_init(&s, mem, REGION), 0);
    dpm_storage_t st = dpm_cm_ram_storage(&s);
    dpm_ledger_t l;
    assert_int_equal(dpm_ledger_open(&l, &st, 0, REGION), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&l, 7, 1, DPM_EPS_ONE, 2 * DPM_EPS_ONE), DPM_OK);
    /* reboot: a new ledger over the same bytes still knows what was spent */
    dpm_ledger_t again;
    assert_int_equal(dpm_ledger_open(&again, &st, 0, REGION), DPM_OK);
    dpm_eps_t spent = 0;
    assert_int_equal(dpm_ledger_spent(&again, 7, 1, &spent), DPM_OK);
    assert_int_equal(spent, DPM_EPS_ONE);
    assert_int_equal(dpm_ledger_charge(&again, 7, 1, DPM_EPS_ONE, 2 * DPM_EPS_ONE), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&again, 7, 1, DPM_EPS_ONE, 2 * DPM_EPS_ONE), DPM_ERR_BUDGET);
    /* a damaged region fails closed */
    memset(mem, 0, REGION);
    dpm_ledger_t broken;
    assert_int_equal(dpm_ledger_open(&broken, &st, 0, REGION), DPM_ERR_CORRUPT);
    assert_int_equal(dpm_ledger_charge(&broken, 7, 2, DPM_EPS_ONE, 2 * DPM_EPS_ONE),
                     DPM_ERR_CORRUPT);
}

int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen);

static void test_trng_hook_fails_closed(void **state)
{
    (void)state;
    uint8_t buf[8];
    dpm_rng_t rng = dpm_cm_trng();
    assert_true(rng.fill(rng.ctx, buf, sizeof(buf)) < 0);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &rng), DPM_OK);
    uint64_t u = 77;
    assert_int_equal(dpm_uniform(&r, 10, &u), DPM_ERR_RNG);
    assert_int_equal(u, 77); /* untouched */
    size_t olen = 99;
    assert_int_equal(mbedtls_hardware_poll(NULL, buf, sizeof(buf), &olen), -1);
    assert_int_equal(olen, 0);
}

static void test_test_drbg_is_reproducible(void **state)
{
    (void)state;
    dpm_cm_test_drbg_t a, b, c;
    dpm_cm_test_drbg_seed(&a, 1);
    dpm_cm_test_drbg_seed(&b, 1);
    dpm_cm_test_drbg_seed(&c, 2);
    uint8_t x[13], y[13], z[13];
    dpm_rng_t ra = dpm_cm_test_drbg(&a), rb = dpm_cm_test_drbg(&b), rc = dpm_cm_test_drbg(&c);
    assert_int_equal(ra.fill(ra.ctx, x, sizeof(x)), 0);
    assert_int_equal(rb.fill(rb.ctx, y, sizeof(y)), 0);
    assert_int_equal(rc.fill(rc.ctx, z, sizeof(z)), 0);
    assert_memory_equal(x, y, sizeof(x));
    assert_memory_not_equal(x, z, sizeof(x));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ram_storage_contract),
        cmocka_unit_test(test_ledger_survives_reboot_on_ram_storage),
        cmocka_unit_test(test_trng_hook_fails_closed),
        cmocka_unit_test(test_test_drbg_is_reproducible),
    };
    return cmocka_run_group_tests_name("cm_port", tests, NULL, NULL);
}
