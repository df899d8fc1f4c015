/* SPDX-License-Identifier: Apache-2.0 */
/* dpm_ram_storage (dpm/ram_storage.h) keeps the port contract: a new region reads erased,
 * writes and erases are bounds-checked (offset + len wrap-around included) and refused without
 * a change, and a ledger on it survives a "reboot" (a new ledger over the same bytes). Runs on
 * the host and on Cortex-M (make cross), where it is the RAM storage of the firmware example. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/budget.h"
#include "dpm/ram_storage.h"

#define REGION 512u

static void test_ram_storage_contract(void **state)
{
    (void)state;
    static uint8_t mem[REGION];
    memset(mem, 0x5A, sizeof(mem));
    dpm_ram_storage_t r;
    dpm_storage_t none = dpm_ram_storage(&r, NULL, REGION);
    uint8_t buf[16];
    assert_int_equal(none.size, 0);
    assert_int_equal(none.read(none.ctx, 0, buf, 1), -1); /* an unbound storage fails */
    none = dpm_ram_storage(NULL, mem, REGION);
    assert_int_equal(none.size, 0);
    assert_int_equal(none.write(none.ctx, 0, buf, 1), -1);
    assert_int_equal(mem[0], 0x5A); /* refused: untouched */
    dpm_storage_t st = dpm_ram_storage(&r, mem, REGION);
    assert_int_equal(st.size, REGION);
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
    static dpm_ram_storage_t r;
    dpm_storage_t st = dpm_ram_storage(&r, mem, REGION);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ram_storage_contract),
        cmocka_unit_test(test_ledger_survives_reboot_on_ram_storage),
    };
    return cmocka_run_group_tests_name("ram_storage", tests, NULL, NULL);
}
