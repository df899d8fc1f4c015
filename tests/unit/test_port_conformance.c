/* SPDX-License-Identifier: Apache-2.0 */
/* The port conformance suite (tests/support/port_conformance.h) on the RAM port: the SDK's
 * dpm_ram_storage, the tests' fault-injecting RAM storage (fake_storage: torn writes), the
 * tests' random source and clock, and the fake collector as the transport, all pass every
 * check. Negative controls: for each check a port broken in exactly that promise (erase to
 * 0x00, a write that spills a byte, a lost write cache, an ECC flash, garbage in a torn write,
 * a short or constant RNG, a source that fails silently, a clock that goes back or stands
 * still, a recv that errs when idle or idles when closed, a CRC that restarts) fails the check
 * by name. Runs on the host and in the Cortex-M images (plain C). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "dpm/ram_storage.h"
#include "fake_collector.h"
#include "fake_storage.h"
#include "port_conformance.h"
#include "test_rng.h"

#define REGION 1024u

static dpm_port_log_t logbook;
static dpm_port_suite_t suite;

/* ---- storage: RAM, and RAM with fault injection --------------------------------------------- */

static int ram_reopen(void *ctx, dpm_storage_t *s)
{
    (void)ctx;
    (void)s; /* RAM keeps its bytes across the "reboot", as the SDK's ledger tests assume */
    return 0;
}

/* The fake storage's fault injection as the torn hook: the next operation tears (mode and
 * shape from the hook context), then the device reboots. */
typedef struct {
    fake_storage_t fs;
    fake_fail_t mode;
    fake_torn_t torn;
    int spill; /* broken: the tear also clears the byte after the range */
} fake_hooks_t;

static int fake_torn(void *ctx, dpm_storage_t *s, uint32_t off, const uint8_t *buf, size_t len)
{
    fake_hooks_t *h = ctx;
    fake_storage_arm(&h->fs, h->fs.ops + 1, h->mode, h->torn);
    h->fs.seed++;
    int rc = buf != NULL ? s->write(s->ctx, off, buf, len) : s->erase(s->ctx, off, len);
    fake_storage_reboot(&h->fs);
    if (h->spill && off + len < h->fs.size) {
        h->fs.mem[off + len] = 0x00;
    }
    return rc < 0 ? 0 : -1; /* the write must have been interrupted */
}

static void test_ram_storage_passes(void **state)
{
    (void)state;
    static uint8_t mem[REGION];
    dpm_ram_storage_t r;
    dpm_storage_t s = dpm_ram_storage(&r, mem, REGION);
    dpm_port_storage_hooks_t h = {ram_reopen, NULL, NULL, 0};
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_storage(&suite, &s, &h);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.passed, 7);
    assert_true(dpm_port_log_is(&logbook, "storage.torn_write_in_range", DPM_PORT_NOT_RUN,
                                NULL)); /* it does not tear: no hook */
}

static void test_fault_injecting_storage_passes(void **state)
{
    (void)state;
    static uint8_t mem[REGION];
    static fake_hooks_t fh;
    static const fake_torn_t shapes[] = {FAKE_TORN_MIX, FAKE_TORN_HALF, FAKE_TORN_ONE,
                                         FAKE_TORN_ALL_BUT_ONE};
    for (int flash = 0; flash <= 1; flash++) {
        for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
            memset(&fh, 0, sizeof(fh));
            fake_storage_init(&fh.fs, mem, REGION, flash);
            fh.mode = FAKE_TORN;
            fh.torn = shapes[k];
            dpm_storage_t s = fake_storage_port(&fh.fs);
            dpm_port_storage_hooks_t h = {ram_reopen, fake_torn, &fh, 0};
            dpm_port_log_begin(&logbook, &suite, flash == 0 && k == 0);
            dpm_port_check_storage(&suite, &s, &h);
            assert_int_equal(suite.failed, 0);
            assert_int_equal(suite.not_run, 0);
            assert_int_equal(suite.passed, 8);
        }
    }
}

/* Broken storages: a RAM storage with one defect each. */
typedef enum {
    B_NONE,
    B_ERASE_ZERO,  /* erase writes 0x00 */
    B_WRITE_SHORT, /* write drops its last byte */
    B_WRITE_SPILL, /* write also writes the byte after its range */
    B_ERASE_SPILL, /* erase also erases the byte before its range */
    B_ECC,         /* bytes written since their erase cannot be written again (ECC flash) */
    B_CACHE,       /* the last write sits in a cache that a power cycle loses */
} broken_kind_t;

typedef struct {
    broken_kind_t kind;
    uint8_t mem[REGION];
    uint8_t programmed[REGION];
    uint32_t c_off;
    uint8_t c_buf[REGION];
    size_t c_len;
} broken_t;

static void cache_flush(broken_t *b)
{
    memcpy(b->mem + b->c_off, b->c_buf, b->c_len);
    b->c_len = 0;
}

static int br_read(void *ctx, uint32_t off, uint8_t *buf, size_t len)
{
    broken_t *b = ctx;
    memcpy(buf, b->mem + off, len);
    if (b->kind == B_CACHE && b->c_len > 0) { /* reads see the cache */
        for (size_t i = 0; i < b->c_len; i++) {
            if (b->c_off + i >= off && b->c_off + i < off + len) {
                buf[b->c_off + i - off] = b->c_buf[i];
            }
        }
    }
    return 0;
}

static int br_write(void *ctx, uint32_t off, const uint8_t *buf, size_t len)
{
    broken_t *b = ctx;
    if (b->kind == B_CACHE) {
        cache_flush(b);
        b->c_off = off;
        memcpy(b->c_buf, buf, len);
        b->c_len = len;
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        if (b->kind == B_ECC && b->programmed[off + i]) {
            return -1;
        }
    }
    memcpy(b->mem + off, buf, b->kind == B_WRITE_SHORT ? len - 1 : len);
    memset(b->programmed + off, 1, len);
    if (b->kind == B_WRITE_SPILL && off + len < REGION) {
        b->mem[off + len] = 0x00;
    }
    return 0;
}

static int br_erase(void *ctx, uint32_t off, size_t len)
{
    broken_t *b = ctx;
    if (b->kind == B_CACHE) {
        cache_flush(b);
    }
    if (b->kind == B_ERASE_SPILL && off > 0) {
        off--;
        len++;
    }
    memset(b->mem + off, b->kind == B_ERASE_ZERO ? 0x00 : 0xFF, len);
    memset(b->programmed + off, 0, len);
    return 0;
}

static int br_reopen(void *ctx, dpm_storage_t *s)
{
    (void)s;
    ((broken_t *)ctx)->c_len = 0; /* the cache is lost */
    return 0;
}

static void run_broken_storage(broken_kind_t kind)
{
    static broken_t b;
    memset(&b, 0, sizeof(b));
    b.kind = kind;
    dpm_storage_t s = {br_read, br_write, br_erase, REGION, &b};
    dpm_port_storage_hooks_t h = {br_reopen, NULL, &b, 0};
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_storage(&suite, &s, &h);
}

static void test_broken_storages_fail_their_check(void **state)
{
    (void)state;
    run_broken_storage(B_NONE); /* the control's control: the same code unbroken passes */
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.passed, 7);

    run_broken_storage(B_ERASE_ZERO);
    assert_true(dpm_port_log_is(&logbook, "storage.erase_sets_ff", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.erase_sets_ff", DPM_PORT_FAIL,
                                "byte 0 reads 0x00, expected 0xFF"));

    run_broken_storage(B_WRITE_SHORT);
    assert_true(dpm_port_log_is(&logbook, "storage.read_after_write", DPM_PORT_FAIL, NULL));

    run_broken_storage(B_WRITE_SPILL);
    assert_true(dpm_port_log_is(&logbook, "storage.read_after_write", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.write_leaves_outside", DPM_PORT_FAIL, NULL));

    run_broken_storage(B_ERASE_SPILL);
    assert_true(dpm_port_log_is(&logbook, "storage.erase_sets_ff", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.erase_leaves_outside", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.erase_leaves_outside", DPM_PORT_FAIL,
                                "after erasing unit 1 only: byte 255"));

    run_broken_storage(B_ECC);
    assert_true(dpm_port_log_is(&logbook, "storage.read_after_write", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.bit_clearing_writes", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.bit_clearing_writes", DPM_PORT_FAIL,
                                "write() returned -1"));

    run_broken_storage(B_CACHE);
    assert_true(dpm_port_log_is(&logbook, "storage.read_after_write", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.ordered_and_durable", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.ordered_and_durable", DPM_PORT_FAIL,
                                "after the power cycle"));

    /* a missing hook fails every check by name, no crash */
    static broken_t b;
    dpm_storage_t s = {NULL, br_write, br_erase, REGION, &b};
    dpm_port_storage_hooks_t h = {br_reopen, NULL, &b, 0};
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_storage(&suite, &s, &h);
    assert_int_equal(suite.passed, 0);
    assert_int_equal(suite.failed, 8);
    assert_true(dpm_port_log_is(&logbook, "storage.ordered_and_durable", DPM_PORT_FAIL,
                                "cannot run: read is NULL"));
}

static void test_bad_torn_writes_fail(void **state)
{
    (void)state;
    static uint8_t mem[REGION];
    static fake_hooks_t fh;
    /* garbage in the range: neither the old nor the new bytes */
    memset(&fh, 0, sizeof(fh));
    fake_storage_init(&fh.fs, mem, REGION, 0);
    fh.mode = FAKE_GARBAGE;
    dpm_storage_t s = fake_storage_port(&fh.fs);
    dpm_port_storage_hooks_t h = {ram_reopen, fake_torn, &fh, 0};
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_storage(&suite, &s, &h);
    assert_true(dpm_port_log_is(&logbook, "storage.ordered_and_durable", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.torn_write_in_range", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.torn_write_in_range", DPM_PORT_FAIL,
                                "a torn write of [16, 17) left byte 16"));
    assert_true(dpm_port_log_is(&logbook, "storage.torn_write_in_range", DPM_PORT_FAIL,
                                "neither the old 0xFF nor the new"));
    /* a tear that reaches outside its range */
    memset(&fh, 0, sizeof(fh));
    fake_storage_init(&fh.fs, mem, REGION, 0);
    fh.mode = FAKE_TORN;
    fh.torn = FAKE_TORN_HALF;
    fh.spill = 1;
    s = fake_storage_port(&fh.fs);
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_storage(&suite, &s, &h);
    assert_true(dpm_port_log_is(&logbook, "storage.torn_write_in_range", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "storage.torn_write_in_range", DPM_PORT_FAIL,
                                "outside the range"));
}

/* ---- random --------------------------------------------------------------------------------- */

static failing_rng_t failing;

static int tests_rng_fail(void *ctx, dpm_rng_t *broken)
{
    (void)ctx;
    memset(&failing, 0, sizeof(failing));
    test_rng_seed(&failing.inner, 9);
    failing.fail_at_call = 0;
    *broken = failing_rng_port(&failing);
    return 0;
}

typedef enum { R_SHORT, R_CONSTANT, R_SILENT_FAIL } bad_rng_t;

static int bad_fill(void *ctx, uint8_t *out, size_t len)
{
    bad_rng_t kind = *(const bad_rng_t *)ctx;
    test_rng_t t;
    test_rng_seed(&t, 1); /* the same bytes at every call */
    dpm_rng_t r = test_rng_port(&t);
    if (kind == R_SILENT_FAIL) {
        memset(out, 0, len); /* a dead source that says nothing */
        return 0;
    }
    return r.fill(r.ctx, out, kind == R_SHORT ? len - 1 : len);
}

static bad_rng_t silent_kind = R_SILENT_FAIL;

static int silent_fail(void *ctx, dpm_rng_t *broken)
{
    (void)ctx;
    broken->fill = bad_fill;
    broken->ctx = &silent_kind;
    return 0;
}

static void test_rng_checks(void **state)
{
    (void)state;
    static test_rng_t t;
    test_rng_seed(&t, 4);
    dpm_rng_t rng = test_rng_port(&t);
    dpm_port_rng_hooks_t h = {tests_rng_fail, NULL};
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_rng(&suite, &rng, &h);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.not_run, 0);
    assert_int_equal(suite.passed, 5);

    bad_rng_t kind = R_SHORT;
    dpm_rng_t bad = {bad_fill, &kind};
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_rng(&suite, &bad, NULL);
    assert_true(dpm_port_log_is(&logbook, "rng.fills_every_byte", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "rng.fills_every_byte", DPM_PORT_FAIL,
                                "fill(1 bytes) returned 0 but never wrote byte 0"));
    assert_true(dpm_port_log_is(&logbook, "rng.failure_reported", DPM_PORT_NOT_RUN, NULL));

    kind = R_CONSTANT;
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_rng(&suite, &bad, NULL);
    assert_true(dpm_port_log_is(&logbook, "rng.fills_every_byte", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "rng.not_constant", DPM_PORT_FAIL, NULL));

    dpm_port_rng_hooks_t silent = {silent_fail, NULL};
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_rng(&suite, &rng, &silent);
    assert_true(dpm_port_log_is(&logbook, "rng.fills_every_byte", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "rng.failure_reported", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "rng.failure_refused_by_sdk", DPM_PORT_FAIL,
                                NULL)); /* the SDK queued a report */
    assert_true(dpm_port_log_is(&logbook, "rng.failure_refused_by_sdk", DPM_PORT_FAIL,
                                "expected DPM_ERR_RNG"));
}

/* ---- clock ---------------------------------------------------------------------------------- */

typedef struct {
    uint64_t now;
    uint64_t calls;
    int kind; /* 0 healthy, 1 goes back once, 2 stands still */
} test_clock_t;

static uint64_t tc_mono(void *ctx)
{
    test_clock_t *c = ctx;
    c->calls++;
    if (c->kind == 1 && c->calls == 5000) {
        return c->now - 1;
    }
    if (c->kind != 2 && c->calls % 16 == 0) {
        c->now++;
    }
    return c->now;
}

static int tc_wall(void *ctx, int64_t *out)
{
    *out = ((test_clock_t *)ctx)->kind == 3 ? 0 : 1700000000;
    return 0;
}

static void test_clock_checks(void **state)
{
    (void)state;
    test_clock_t tc = {100, 0, 0};
    dpm_clock_t c = {tc_mono, tc_wall, &tc};
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_clock(&suite, &c);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.passed, 4);

    tc.kind = 1;
    tc.calls = 0;
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_clock(&suite, &c);
    assert_true(dpm_port_log_is(&logbook, "clock.monotonic_never_backwards", DPM_PORT_FAIL, NULL));
    assert_true(
        dpm_port_log_is(&logbook, "clock.monotonic_never_backwards", DPM_PORT_FAIL, "went back"));

    tc.kind = 2;
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_clock(&suite, &c);
    assert_true(dpm_port_log_is(&logbook, "clock.monotonic_never_backwards", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "clock.monotonic_advances", DPM_PORT_FAIL, NULL));

    tc.kind = 3;
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_clock(&suite, &c);
    assert_true(dpm_port_log_is(&logbook, "clock.wall_time", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "clock.wall_time", DPM_PORT_FAIL, "before 2020"));

    dpm_clock_t none = {NULL, NULL, NULL};
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_clock(&suite, &none);
    assert_true(dpm_port_log_is(&logbook, "clock.hooks_present", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "clock.wall_time", DPM_PORT_PASS, NULL)); /* optional */
}

/* ---- transport: the fake collector ---------------------------------------------------------- */

typedef struct {
    fake_collector_t fc;
    fake_clock_t *clk;
    int silent_errs;   /* broken: recv on an idle connection fails */
    int closed_idles;  /* broken: a closed connection reads as idle */
    uint64_t block_ms; /* broken: each recv blocks this long */
} fake_peer_t;

static int32_t blocking_recv(void *ctx, uint8_t *buf, size_t len)
{
    fake_peer_t *p = ctx;
    p->clk->now += p->block_ms;
    dpm_transport_t inner = fake_collector_port(&p->fc);
    return inner.recv(inner.ctx, buf, len);
}

static int32_t peer_send(void *ctx, const uint8_t *buf, size_t len)
{
    fake_peer_t *p = ctx;
    dpm_transport_t inner = fake_collector_port(&p->fc);
    return inner.send(inner.ctx, buf, len);
}

static int peer_open(fake_peer_t *p, dpm_transport_t *t, int closed)
{
    fake_collector_init(&p->fc, "localhost", "/v1/reports");
    p->fc.after = FC_TIMEOUT; /* a peer that never answers */
    if (closed ? !p->closed_idles : p->silent_errs) {
        p->fc.dead = 1;
    }
    *t = fake_collector_port(&p->fc);
    if (p->block_ms != 0) {
        *t = (dpm_transport_t){peer_send, blocking_recv, p};
    }
    return 0;
}

static int open_silent(void *ctx, dpm_transport_t *t)
{
    return peer_open(ctx, t, 0);
}

static int open_closed(void *ctx, dpm_transport_t *t)
{
    return peer_open(ctx, t, 1);
}

static void run_transport(fake_peer_t *p, fake_clock_t *clk)
{
    p->clk = clk;
    dpm_clock_t c = fake_clock_port(clk);
    dpm_port_transport_hooks_t h = {open_silent, open_closed, NULL, p, 300};
    dpm_port_log_begin(&logbook, &suite,
                       !p->silent_errs && !p->closed_idles && p->block_ms == 0 && clk->step != 0);
    dpm_port_check_transport(&suite, &c, &h);
}

static void test_transport_checks(void **state)
{
    (void)state;
    static fake_peer_t p;
    fake_clock_t clk = {1000, 1, 0};
    memset(&p, 0, sizeof(p));
    run_transport(&p, &clk);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.passed, 5);

    memset(&p, 0, sizeof(p));
    p.silent_errs = 1;
    run_transport(&p, &clk);
    assert_true(dpm_port_log_is(&logbook, "transport.silent_recv_is_zero", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "transport.upload_times_out", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "transport.upload_times_out", DPM_PORT_FAIL,
                                "returned -7 (transport failed)"));

    memset(&p, 0, sizeof(p));
    p.closed_idles = 1;
    run_transport(&p, &clk);
    assert_true(dpm_port_log_is(&logbook, "transport.silent_recv_is_zero", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "transport.closed_recv_is_error", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "transport.upload_closed_is_error", DPM_PORT_FAIL, NULL));

    memset(&p, 0, sizeof(p));
    p.block_ms = 5000; /* a recv that blocks past the SDK's deadline */
    run_transport(&p, &clk);
    assert_true(dpm_port_log_is(&logbook, "transport.upload_times_out", DPM_PORT_FAIL, NULL));
    assert_true(
        dpm_port_log_is(&logbook, "transport.upload_times_out", DPM_PORT_FAIL, "must not block"));

    fake_clock_t frozen = {1000, 0, 0}; /* the deadline never comes: the guard ends it */
    memset(&p, 0, sizeof(p));
    run_transport(&p, &frozen);
    assert_true(dpm_port_log_is(&logbook, "transport.upload_times_out", DPM_PORT_FAIL, NULL));
    assert_true(dpm_port_log_is(&logbook, "transport.upload_times_out", DPM_PORT_FAIL,
                                "deadline never came"));
}

/* ---- CRC-32 --------------------------------------------------------------------------------- */

static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n-- > 0) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

static uint32_t crc_restarts(uint32_t crc, const uint8_t *p, size_t n)
{
    (void)crc;
    return crc_bitwise(0, p, n);
}

static uint32_t crc_no_complement(uint32_t crc, const uint8_t *p, size_t n)
{
    return ~crc_bitwise(crc, p, n);
}

static void test_crc32_checks(void **state)
{
    (void)state;
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_crc32(&suite, crc_bitwise);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.passed, 2);
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_crc32(&suite, crc_restarts);
    assert_true(dpm_port_log_is(&logbook, "crc32.check_value", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "crc32.continues", DPM_PORT_FAIL, NULL));
    dpm_port_log_begin(&logbook, &suite, 0);
    dpm_port_check_crc32(&suite, crc_no_complement);
    assert_true(dpm_port_log_is(&logbook, "crc32.check_value", DPM_PORT_FAIL, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ram_storage_passes),
        cmocka_unit_test(test_fault_injecting_storage_passes),
        cmocka_unit_test(test_broken_storages_fail_their_check),
        cmocka_unit_test(test_bad_torn_writes_fail),
        cmocka_unit_test(test_rng_checks),
        cmocka_unit_test(test_clock_checks),
        cmocka_unit_test(test_transport_checks),
        cmocka_unit_test(test_crc32_checks),
    };
    return cmocka_run_group_tests_name("port_conformance", tests, NULL, NULL);
}
