/* SPDX-License-Identifier: Apache-2.0 */
/* The hardware-CRC build (DPM_CRC32_TABLE=0, issue 32 item 4): dpm_crc32 is the port's
 * dpm_port_crc32, every byte goes through it, and dpm_crc32_ok (which the ledger, the outbox and
 * dpm_device_init ask before they touch storage) accepts a port that computes zlib's CRC-32 and
 * refuses one that does not. This file compiles sdk/src/core/persist.c itself in that
 * configuration, with a port of its own, so the ledger, the outbox and the device that libdpm.a
 * links against it use the port's CRC. Negative controls: three wrong ports (unreflected, no
 * final complement, not continuing from the previous value) are each refused, and with one
 * the device, the ledger and the outbox refuse to open without touching storage. */
#define DPM_CRC32_TABLE 0
#include "core/persist.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/outbox.h"
#include "fake_storage.h"
#include "test_rng.h"

typedef enum { PORT_RIGHT, PORT_UNREFLECTED, PORT_NO_COMPLEMENT, PORT_RESTARTS } port_kind_t;

static port_kind_t kind;
static uint64_t bytes_seen;

/* Bit at a time, from the definition: reflected 0xEDB88320 (or, for a control, unreflected
 * 0x04C11DB7), complemented in and out. */
uint32_t dpm_port_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    bytes_seen += n;
    uint32_t c = kind == PORT_RESTARTS ? 0xFFFFFFFFu : ~crc;
    if (kind == PORT_NO_COMPLEMENT) {
        c = crc;
    }
    for (size_t i = 0; i < n; i++) {
        if (kind == PORT_UNREFLECTED) {
            c ^= (uint32_t)p[i] << 24;
            for (int b = 0; b < 8; b++) {
                c = c & 0x80000000u ? (c << 1) ^ 0x04C11DB7u : c << 1;
            }
        } else {
            c ^= p[i];
            for (int b = 0; b < 8; b++) {
                c = c & 1u ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            }
        }
    }
    return kind == PORT_NO_COMPLEMENT ? c : ~c;
}

/* zlib's values (python3 -c 'import zlib; print(hex(zlib.crc32(b"...")))'). */
static void test_port_crc_is_the_stores_crc(void **state)
{
    (void)state;
    kind = PORT_RIGHT;
    bytes_seen = 0;
    const uint8_t *digits = (const uint8_t *)"123456789";
    assert_int_equal(dpm_crc32(0, digits, 9), 0xCBF43926u);
    assert_int_equal(dpm_crc32(0, digits, 0), 0u);
    assert_int_equal(dpm_crc32(0, (const uint8_t *)"The quick brown fox jumps over the lazy dog", 43),
                     0x414FA339u);
    assert_int_equal(dpm_crc32(dpm_crc32(0, digits, 4), digits + 4, 5), 0xCBF43926u);
    assert_true(bytes_seen == 9u + 43u + 9u); /* every byte went through the port */
    assert_true(dpm_crc32_ok());
}

static void test_wrong_ports_are_refused(void **state)
{
    (void)state;
    const port_kind_t wrong[] = {PORT_UNREFLECTED, PORT_NO_COMPLEMENT, PORT_RESTARTS};
    for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
        kind = wrong[i];
        assert_false(dpm_crc32_ok());
    }
    kind = PORT_RIGHT;
    assert_true(dpm_crc32_ok());
}

#define REGION 9216u

/* A device on fake storage: DPM_OK, or the refusal with *why. */
static dpm_status_t open_device(dpm_device_t *d, fake_storage_t *fs, test_rng_t *t,
                                const char **why)
{
    dpm_device_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.rng = test_rng_port(t);
    cfg.storage = fake_storage_port(fs);
    cfg.region_size = REGION;
    cfg.policy.defaults.max_eps = DPM_EPS(1);
    cfg.policy.defaults.max_budget = DPM_EPS(64);
    cfg.policy.device.max_eps = DPM_EPS(1000);
    dpm_status_t st = dpm_device_init(d, &cfg);
    *why = dpm_device_why(d);
    return st;
}

static void test_stores_refuse_a_wrong_port_untouched(void **state)
{
    (void)state;
    static uint8_t mem[REGION];
    static fake_storage_t fs;
    static dpm_device_t d;
    test_rng_t t;
    test_rng_seed(&t, 5u);
    fake_storage_init(&fs, mem, REGION, 1);
    dpm_storage_t st = fake_storage_port(&fs);
    const char *why = NULL;
    kind = PORT_UNREFLECTED;
    dpm_ledger_t l;
    dpm_outbox_t ob;
    assert_int_equal(dpm_ledger_open(&l, &st, 0, 1024u), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_open(&ob, &st, 1024u, REGION - 1024u), DPM_ERR_PARAM);
    assert_int_equal(open_device(&d, &fs, &t, &why), DPM_ERR_PARAM);
    assert_non_null(strstr(why, "dpm_port_crc32"));
    assert_true(fs.reads == 0 && fs.writes == 0 && fs.erases == 0);
    /* the right port: a device opens, reports, and reopens to find its report and its charge */
    kind = PORT_RIGHT;
    assert_int_equal(open_device(&d, &fs, &t, &why), DPM_OK);
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.mechanism = DPM_MECH_ID_TUPLE_MR;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(64);
    c.period_seconds = 86400u;
    c.groups = 4u;
    c.nmetrics = 1u;
    c.metrics[0] = DPM_METRIC_TPR;
    static dpm_mech_t m;
    assert_int_equal(dpm_device_accept_mech(&d, &c, &m, NULL), DPM_OK);
    const dpm_confusion_t conf = {45, 5, 45, 5};
    bytes_seen = 0;
    assert_int_equal(dpm_device_report_tuple(&d, &m, 0, 1u, &conf, NULL), DPM_OK);
    assert_true(bytes_seen > 0);
    assert_int_equal(open_device(&d, &fs, &t, &why), DPM_OK);
    assert_int_equal(dpm_outbox_pending(&d.outbox), 1u);
    dpm_eps_t spent = 0;
    assert_int_equal(dpm_ledger_spent(&d.ledger, 1u, 0u, &spent), DPM_OK);
    assert_int_equal(spent, m.eps_implemented);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_port_crc_is_the_stores_crc),
        cmocka_unit_test(test_wrong_ports_are_refused),
        cmocka_unit_test(test_stores_refuse_a_wrong_port_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
