/* SPDX-License-Identifier: Apache-2.0 */
/* port/template compiles (with the port's warnings: the Makefile builds it as port code) and,
 * run through the conformance suite as it ships, every hook still to fill in is named by the
 * checks that fail, with "not implemented" where the hook can say so; nothing crashes or
 * hangs. Plain C: it runs on the host and in the Cortex-M images. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../port/template/port_template.h"
#include "dpm/status.h"
#include "port_conformance.h"

static dpm_port_log_t logbook;
static dpm_port_suite_t suite;
static template_port_t port;

static int reopen_nothing(void *ctx, dpm_storage_t *s)
{
    (void)ctx;
    (void)s;
    return 0;
}

static int open_template(void *ctx, dpm_transport_t *t)
{
    *t = template_transport(ctx);
    return 0;
}

#define NOT_IMPLEMENTED "DPM_ERR_UNSUPPORTED: the hook is not implemented"

static void test_template_names_every_missing_hook(void **state)
{
    (void)state;
    dpm_port_log_begin(&logbook, &suite, 0);
    assert_int_equal(template_port_init(&port), 0);

    dpm_storage_t s = template_storage(&port);
    dpm_port_storage_hooks_t sh = {reopen_nothing, NULL, NULL, 0};
    dpm_port_check_storage(&suite, &s, &sh);
    assert_true(dpm_port_log_is(&logbook, "storage.erase_sets_ff", DPM_PORT_FAIL,
                                "erase() returned -13 (" NOT_IMPLEMENTED));
    assert_true(dpm_port_log_is(&logbook, "storage.read_after_write", DPM_PORT_FAIL,
                                "erase() returned -13"));
    assert_true(
        dpm_port_log_is(&logbook, "storage.ordered_and_durable", DPM_PORT_FAIL, NOT_IMPLEMENTED));

    dpm_rng_t rng = template_rng(&port);
    dpm_port_check_rng(&suite, &rng, NULL);
    assert_true(dpm_port_log_is(&logbook, "rng.fills_every_byte", DPM_PORT_FAIL,
                                "fill(1 bytes) returned -13 (" NOT_IMPLEMENTED));
    assert_true(dpm_port_log_is(&logbook, "rng.not_constant", DPM_PORT_FAIL, NOT_IMPLEMENTED));

    dpm_clock_t c = template_clock(&port);
    dpm_port_check_clock(&suite, &c);
    assert_true(dpm_port_log_is(&logbook, "clock.monotonic_advances", DPM_PORT_FAIL,
                                "monotonic_ms stayed at 0"));
    assert_true(dpm_port_log_is(&logbook, "clock.wall_time", DPM_PORT_FAIL,
                                "wall_time_s() returned -13 (" NOT_IMPLEMENTED));

    dpm_port_transport_hooks_t th = {open_template, open_template, NULL, &port, 0};
    dpm_port_check_transport(&suite, &c, &th);
    assert_true(dpm_port_log_is(&logbook, "transport.silent_recv_is_zero", DPM_PORT_FAIL,
                                "not implemented"));
    /* a stub's error is not "the connection closed" */
    assert_true(dpm_port_log_is(&logbook, "transport.closed_recv_is_error", DPM_PORT_FAIL,
                                "the transport is not implemented"));
    assert_true(dpm_port_log_is(&logbook, "transport.upload_times_out", DPM_PORT_FAIL,
                                "the transport is not implemented"));
    assert_true(dpm_port_log_is(&logbook, "transport.upload_closed_is_error", DPM_PORT_FAIL,
                                "the transport is not implemented"));

    dpm_port_check_crc32(&suite, dpm_port_crc32);
    assert_true(dpm_port_log_is(&logbook, "crc32.check_value", DPM_PORT_FAIL, "0x00000000"));

    /* what passes is only what a stub cannot get wrong, or what the port does not offer */
    for (unsigned i = 0; i < logbook.n; i++) {
        const dpm_port_record_t *r = &logbook.rec[i];
        int may_pass = strstr(r->check, "hooks_present") != NULL ||
                       strcmp(r->check, "clock.monotonic_never_backwards") == 0 ||
                       strcmp(r->check, "crc32.continues") == 0;
        if (r->verdict == DPM_PORT_PASS && !may_pass) {
            fail_msg("%s passed on the empty template", r->check);
        }
    }
    assert_int_equal(suite.not_run, 3); /* torn writes, the two RNG failure checks */
    assert_int_equal(suite.failed, 15);
    assert_int_equal(suite.passed, 6);
}

/* Each hook, called directly, answers "not implemented" (the suite stops a group at its first
 * failure, so not every hook is reached through it). */
static void test_every_hook_answers_not_implemented(void **state)
{
    (void)state;
    uint8_t b[4] = {0};
    int64_t t = 0;
    dpm_rng_t r = template_rng(&port);
    dpm_clock_t c = template_clock(&port);
    dpm_storage_t s = template_storage(&port);
    dpm_transport_t x = template_transport(&port);
    assert_int_equal(r.fill(r.ctx, b, 4), DPM_ERR_UNSUPPORTED);
    assert_int_equal(c.wall_time_s(c.ctx, &t), DPM_ERR_UNSUPPORTED);
    assert_int_equal(s.read(s.ctx, 0, b, 4), DPM_ERR_UNSUPPORTED);
    assert_int_equal(s.write(s.ctx, 0, b, 4), DPM_ERR_UNSUPPORTED);
    assert_int_equal(s.erase(s.ctx, 0, 4), DPM_ERR_UNSUPPORTED);
    assert_int_equal(s.size, TEMPLATE_STORAGE_SIZE);
    assert_int_equal(x.send(x.ctx, b, 4), DPM_ERR_UNSUPPORTED);
    assert_int_equal(x.recv(x.ctx, b, 4), DPM_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template_names_every_missing_hook),
        cmocka_unit_test(test_every_hook_answers_not_implemented),
    };
    return cmocka_run_group_tests_name("port_template", tests, NULL, NULL);
}
