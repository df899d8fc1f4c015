/* SPDX-License-Identifier: Apache-2.0 */
/* The port conformance suite (port_conformance.h): each check names the promise of
 * dpm/port.h it tests. Scratch state is static (this is test code, run one suite at a time). */
#include "port_conformance.h"

#include <stdio.h>
#include <string.h>

#include "dpm/dpm.h"
#include "dpm/ram_storage.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/outbox.h"
#include "test_rng.h"

/* ---- reporting ------------------------------------------------------------------------------ */

static char why[240]; /* the cause of the check being run */

void dpm_port_print_report(void *ctx, const char *check, dpm_port_verdict_t verdict,
                           const char *detail)
{
    (void)ctx;
    static const char *const tag[] = {"pass", "FAIL", "NOT RUN"};
    printf("%-8s %s%s%s\n", tag[verdict], check, *detail ? ": " : "", detail);
}

void dpm_port_log_report(void *log, const char *check, dpm_port_verdict_t verdict,
                         const char *detail)
{
    dpm_port_log_t *l = log;
    if (l->print) {
        dpm_port_print_report(NULL, check, verdict, detail);
    }
    if (l->n < DPM_PORT_LOG_MAX) {
        dpm_port_record_t *r = &l->rec[l->n++];
        r->check = check;
        r->verdict = verdict;
        snprintf(r->detail, sizeof(r->detail), "%s", detail);
    }
}

const dpm_port_record_t *dpm_port_log_find(const dpm_port_log_t *log, const char *check)
{
    for (unsigned i = log->n; i-- > 0;) {
        if (strcmp(log->rec[i].check, check) == 0) {
            return &log->rec[i];
        }
    }
    return NULL;
}

void dpm_port_log_begin(dpm_port_log_t *log, dpm_port_suite_t *suite, int print)
{
    memset(log, 0, sizeof(*log));
    log->print = print;
    dpm_port_suite_init(suite, dpm_port_log_report, log);
}

int dpm_port_log_is(const dpm_port_log_t *log, const char *check, dpm_port_verdict_t verdict,
                    const char *words)
{
    const dpm_port_record_t *r = dpm_port_log_find(log, check);
    if (r == NULL) {
        printf("%s was not reported\n", check);
        return 0;
    }
    if (r->verdict != verdict || (words != NULL && strstr(r->detail, words) == NULL)) {
        printf("%s: verdict %d \"%s\", expected %d saying \"%s\"\n", check, (int)r->verdict,
               r->detail, (int)verdict, words != NULL ? words : "");
        return 0;
    }
    return 1;
}

void dpm_port_suite_init(dpm_port_suite_t *s, dpm_port_report_fn report, void *ctx)
{
    memset(s, 0, sizeof(*s));
    s->report = report != NULL ? report : dpm_port_print_report;
    s->ctx = ctx;
}

static void verdict(dpm_port_suite_t *s, const char *check, dpm_port_verdict_t v)
{
    if (v == DPM_PORT_PASS) {
        s->passed++;
    } else if (v == DPM_PORT_FAIL) {
        s->failed++;
    } else {
        s->not_run++;
    }
    s->report(s->ctx, check, v, v == DPM_PORT_PASS ? "" : why);
    why[0] = '\0';
}

static void result(dpm_port_suite_t *s, const char *check, int ok)
{
    verdict(s, check, ok ? DPM_PORT_PASS : DPM_PORT_FAIL);
}

/* A group's hooks are missing (`missing` says which): its hooks_present check (present, may be
 * NULL) and each of its n checks fail, naming the cause, instead of calling through NULL.
 * Returns 1 then, 0 when nothing is missing (present passes). */
static int group_missing(dpm_port_suite_t *s, const char *present, const char *const *checks,
                         size_t n, const char *missing)
{
    if (missing == NULL) {
        if (present != NULL) {
            verdict(s, present, DPM_PORT_PASS);
        }
        return 0;
    }
    if (present != NULL) {
        snprintf(why, sizeof(why), "%s", missing);
        verdict(s, present, DPM_PORT_FAIL);
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(why, sizeof(why), "cannot run: %s", missing);
        verdict(s, checks[i], DPM_PORT_FAIL);
    }
    return 1;
}

/* THE one place that reads a hook's int status (port.h: 0 success, < 0 failure): nonzero, with
 * the cause in `why`, when the hook `what` failed. (When the port hooks return dpm_status_t,
 * only this function's parameter type changes: DPM_OK is 0 and errors are negative.) */
static int hook_failed(int rc, const char *what)
{
    if (rc == 0) {
        return 0;
    }
    snprintf(why, sizeof(why), "%s returned %d%s", what, rc,
             rc == (int)DPM_ERR_UNSUPPORTED ? " (DPM_ERR_UNSUPPORTED: the hook is not implemented)"
             : rc > 0                       ? " (success is 0, failure < 0: dpm/port.h)"
                                            : "");
    return 1;
}

/* ---- storage -------------------------------------------------------------------------------- */

#define MAX_UNIT 4096u
static uint8_t model[2 * MAX_UNIT]; /* what the area must hold */
static uint8_t got[2 * MAX_UNIT];

static int st_read(const dpm_storage_t *s, uint32_t off, uint8_t *buf, size_t len)
{
    return !hook_failed(s->read(s->ctx, off, buf, len), "read()");
}

static int st_write(const dpm_storage_t *s, uint32_t off, const uint8_t *buf, size_t len)
{
    if (hook_failed(s->write(s->ctx, off, buf, len), "write()")) {
        return 0;
    }
    memcpy(model + off, buf, len);
    return 1;
}

static int st_erase(const dpm_storage_t *s, uint32_t off, size_t len)
{
    if (hook_failed(s->erase(s->ctx, off, len), "erase()")) {
        return 0;
    }
    memset(model + off, 0xFF, len);
    return 1;
}

static void pattern(uint8_t *p, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++) {
        p[i] = (uint8_t)((i * 37u + seed * 101u + 11u) % 251u); /* never 0xFF */
    }
}

/* The area [0, len) reads as the model; else `why` names the first difference. */
static int area_is(const dpm_storage_t *s, size_t len, const char *when)
{
    if (!st_read(s, 0, got, len)) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        if (got[i] != model[i]) {
            snprintf(why, sizeof(why), "%s: byte %u reads 0x%02X, expected 0x%02X", when,
                     (unsigned)i, got[i], model[i]);
            return 0;
        }
    }
    return 1;
}

static const char *const STORAGE_CHECKS[] = {
    "storage.erase_sets_ff",        "storage.read_after_write",    "storage.write_leaves_outside",
    "storage.erase_leaves_outside", "storage.bit_clearing_writes", "storage.ordered_and_durable",
    "storage.torn_write_in_range"};
#define NSTORAGE (sizeof(STORAGE_CHECKS) / sizeof(STORAGE_CHECKS[0]))

static int torn_trial(dpm_storage_t *s, const dpm_port_storage_hooks_t *h, uint32_t u, uint32_t off,
                      size_t len, int erase, uint32_t seed)
{
    static uint8_t data[2 * MAX_UNIT];
    static uint8_t old[2 * MAX_UNIT];
    /* a known state: unit 0 erased, unit 1 holding a pattern */
    if (!st_erase(s, 0, 2 * u)) {
        return 0;
    }
    pattern(data, u, seed);
    if (!st_write(s, u, data, u)) {
        return 0;
    }
    memcpy(old, model, 2 * u);
    pattern(data, len, seed + 7);
    if (hook_failed(h->torn(h->ctx, s, off, erase ? NULL : data, len), "the torn hook")) {
        return 0;
    }
    if (!st_read(s, 0, got, 2 * u)) {
        return 0;
    }
    for (size_t i = 0; i < 2 * u; i++) {
        int inside = i >= off && i < off + len;
        uint8_t now = erase ? 0xFF : data[i - (inside ? off : 0)];
        if (got[i] != old[i] && !(inside && got[i] == now)) {
            int n = snprintf(why, sizeof(why), "a torn %s of [%u, %u) left byte %u = 0x%02X",
                             erase ? "erase" : "write", (unsigned)off, (unsigned)(off + len),
                             (unsigned)i, got[i]);
            if (inside) {
                snprintf(why + n, sizeof(why) - (size_t)n,
                         ", neither the old 0x%02X nor the new "
                         "0x%02X",
                         old[i], now);
            } else {
                snprintf(why + n, sizeof(why) - (size_t)n, " outside the range (was 0x%02X)",
                         old[i]);
            }
            return 0;
        }
    }
    memcpy(model, got, 2 * u); /* what the power loss left is the new truth */
    return 1;
}

void dpm_port_check_storage(dpm_port_suite_t *suite, dpm_storage_t *s,
                            const dpm_port_storage_hooks_t *h)
{
    uint32_t u = DPM_PORT_CHECK_UNIT;
    if (h != NULL && h->erase_unit > u) {
        u = h->erase_unit;
    }
    const char *missing = s == NULL           ? "no storage"
                          : s->read == NULL   ? "read is NULL"
                          : s->write == NULL  ? "write is NULL"
                          : s->erase == NULL  ? "erase is NULL"
                          : h == NULL         ? "no hooks (the suite needs reopen)"
                          : h->reopen == NULL ? "hooks.reopen is NULL (a power cycle)"
                          : u > MAX_UNIT      ? "erase_unit above 4096 bytes"
                          : (h->erase_unit != 0 && DPM_PORT_CHECK_UNIT % h->erase_unit != 0 &&
                             h->erase_unit < DPM_PORT_CHECK_UNIT)
                              ? "erase_unit does not divide 256"
                          : s->size < 2 * u ? "size below the suite's scratch area (2 erase units)"
                                            : NULL;
    if (group_missing(suite, "storage.hooks_present", STORAGE_CHECKS, NSTORAGE, missing)) {
        return;
    }
    static uint8_t a[2 * MAX_UNIT], b[2 * MAX_UNIT];
    uint32_t area = 2 * u;
    memset(model, 0, sizeof(model));

    /* erase() sets its range to 0xFF */
    result(suite, STORAGE_CHECKS[0], st_erase(s, 0, area) && area_is(s, area, "after erase"));

    /* read() returns what the last write() left ... */
    pattern(a, 100, 1);
    int ok = st_erase(s, 0, area) && st_write(s, 5, a, 100) && st_read(s, 5, got, 100);
    if (ok && memcmp(got, a, 100) != 0) {
        snprintf(why, sizeof(why), "write(5, 100 bytes) then read(5, 100) gave other bytes");
        ok = 0;
    }
    result(suite, STORAGE_CHECKS[1], ok);
    /* ... and nothing outside the write changed (a write that crosses the units too) */
    pattern(a, 40, 2);
    if (!ok) {
        snprintf(why, sizeof(why), "cannot run: storage.read_after_write failed");
    }
    result(suite, STORAGE_CHECKS[2],
           ok && st_write(s, u - 20, a, 40) && area_is(s, area, "after two writes"));

    /* erase() touches nothing outside its range: units 0 and 1 written, unit 1 erased; with
     * no erase unit, an unaligned erase in the middle of unit 0 as well */
    pattern(a, u, 3);
    pattern(b, u, 4);
    ok = st_erase(s, 0, area) && st_write(s, 0, a, u) && st_write(s, u, b, u) &&
         st_erase(s, u, u) && area_is(s, area, "after erasing unit 1 only");
    if (ok && h->erase_unit == 0) {
        ok = st_erase(s, 10, 3) && area_is(s, area, "after erase(10, 3)");
    }
    result(suite, STORAGE_CHECKS[3], ok);

    /* the outbox's in-place commits: 1- and 3-byte writes that only clear bits over bytes
     * already written (0xFF -> 0x00, 0xA5 -> 0x24) */
    static const uint8_t head[8] = {0xFF, 0xFF, 0xA5, 0x3C, 0xFF, 0xFF, 0xFF, 0x81};
    static const uint8_t zero3[3] = {0, 0, 0};
    static const uint8_t zero1 = 0x00, clear1 = 0x24;
    ok = st_erase(s, 0, area) && st_write(s, 32, head, 8) && st_write(s, 32, &zero1, 1) &&
         st_write(s, 34, &clear1, 1) && st_write(s, 36, zero3, 3) &&
         area_is(s, area, "after 1- and 3-byte bit-clearing writes");
    result(suite, STORAGE_CHECKS[4], ok);

    /* writes and erases land in order and are durable: a write, an erase over it, a write
     * into part of the erased range (reordered, the last one would be erased), then a power
     * cycle */
    pattern(a, 64, 5);
    pattern(b, 64, 6);
    ok = st_erase(s, 0, area) && st_write(s, 0, a, 64) && st_write(s, u, a, 64) &&
         st_erase(s, u, u) && st_write(s, u + 32, b, 64) && st_write(s, 3, &zero1, 1) &&
         area_is(s, area, "before the power cycle");
    if (ok && hook_failed(h->reopen(h->ctx, s), "the reopen hook")) {
        ok = 0;
    }
    result(suite, STORAGE_CHECKS[5], ok && area_is(s, area, "after the power cycle"));

    /* a torn write or erase leaves only old or new bytes in its range, nothing outside */
    if (h->torn == NULL) {
        snprintf(why, sizeof(why), "the port offers no torn-write hook (fault injection)");
        verdict(suite, STORAGE_CHECKS[6], DPM_PORT_NOT_RUN);
        return;
    }
    ok = 1;
    static const uint32_t lens[] = {1, 3, 100, 200};
    for (uint32_t i = 0; ok && i < 4; i++) {
        ok = torn_trial(s, h, u, 16 + i, lens[i], 0, i);
    }
    for (uint32_t i = 0; ok && i < 3; i++) {
        ok = torn_trial(s, h, u, u, u, 1, 10 + i);
    }
    result(suite, STORAGE_CHECKS[6], ok);
}

/* ---- a device on RAM storage, for the checks of what the SDK does with a failing hook ------- */

#define DEV_REGION 8192u
#define DEV_LEDGER 1024u

typedef struct {
    uint8_t mem[DEV_REGION];
    dpm_ram_storage_t ram;
    dpm_device_t dev;
    dpm_mech_t mech;
} dev_fixture_t;

static dev_fixture_t fx;

/* Open a device on RAM storage with rng and clock (and an upload config when up != NULL) that
 * accepted a one-metric tuple campaign (id 10, ε 1) into fx.mech. DPM_OK or the first error
 * (why says which). The one place the suite opens a device. */
static dpm_status_t dev_open(const dpm_rng_t *rng, const dpm_clock_t *clock,
                             const dpm_upload_config_t *up)
{
    memset(&fx, 0, sizeof(fx));
    dpm_device_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.rng = *rng;
    cfg.clock = *clock;
    cfg.storage = dpm_ram_storage(&fx.ram, fx.mem, DEV_REGION);
    cfg.ledger_offset = 0;
    cfg.ledger_size = DEV_LEDGER;
    cfg.outbox_offset = DEV_LEDGER;
    cfg.outbox_size = DEV_REGION - DEV_LEDGER;
    cfg.policy.defaults.max_eps = DPM_EPS(1);
    cfg.policy.defaults.max_budget = DPM_EPS(8);
    if (up != NULL) {
        cfg.upload = *up;
    }
    dpm_status_t st = dpm_device_init(&fx.dev, &cfg);
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 10;
    c.mechanism = DPM_MECH_ID_TUPLE_MR;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(8);
    c.groups = 4;
    c.nmetrics = 1;
    c.metrics[0] = DPM_METRIC_TPR;
    if (st == DPM_OK) {
        st = dpm_device_accept_mech(&fx.dev, &c, &fx.mech, NULL);
    }
    if (st != DPM_OK) {
        snprintf(why, sizeof(why), "the test device did not open: %s (%s)", dpm_strerror(st),
                 dpm_device_why(&fx.dev));
    }
    return st;
}

static dpm_status_t dev_report(void)
{
    static const dpm_confusion_t conf = {3, 1, 4, 2};
    return dpm_device_report_tuple(&fx.dev, &fx.mech, 0, 1, &conf, NULL);
}

static dpm_eps_t dev_spent(void)
{
    dpm_eps_t e = 0xFFFFFFFFu;
    (void)dpm_ledger_spent(dpm_device_ledger(&fx.dev), 10, 0, &e);
    return e;
}

static uint32_t dev_pending(void)
{
    return dpm_outbox_pending(dpm_device_outbox(&fx.dev));
}

static uint64_t fixed_ms(void *ctx)
{
    (void)ctx;
    return 1000;
}

/* ---- random --------------------------------------------------------------------------------- */

#define RNG_MAX 1500u
#define RNG_GUARD 16u
#define RNG_ROUNDS 8

/* fill(len) into a buffer preset to `sentinel` (plus guard bytes past the end): 1 if it
 * returned 0 and left the guard alone; `written` marks the bytes it changed. */
static int rng_round(const dpm_rng_t *r, size_t len, uint8_t sentinel, uint8_t *written)
{
    static uint8_t buf[RNG_MAX + RNG_GUARD];
    memset(buf, sentinel, len);
    memset(buf + len, 0xC3, RNG_GUARD);
    char what[40];
    snprintf(what, sizeof(what), "fill(%u bytes)", (unsigned)len);
    if (hook_failed(r->fill(r->ctx, buf, len), what)) {
        return 0;
    }
    for (size_t i = 0; i < RNG_GUARD; i++) {
        if (buf[len + i] != 0xC3) {
            snprintf(why, sizeof(why), "fill(%u bytes) wrote past the end (byte %u)", (unsigned)len,
                     (unsigned)(len + i));
            return 0;
        }
    }
    for (size_t i = 0; i < len; i++) {
        written[i] |= buf[i] != sentinel;
    }
    return 1;
}

/* Every byte of a fill is written: over 8 fills into buffers preset alternately to 0x00 and
 * 0xFF, a byte a fill wrote keeps the preset with probability 1/256 each time, so a correct
 * generator leaves some position unchanged in all 8 with probability below len * 2^-64. */
static int rng_fills_every_byte(const dpm_rng_t *r)
{
    static const size_t lens[] = {1, 2, 3, 7, 16, 31, 64, 255, 256, 257, 1000, RNG_MAX};
    static uint8_t written[RNG_MAX];
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        memset(written, 0, lens[k]);
        for (int round = 0; round < RNG_ROUNDS; round++) {
            if (!rng_round(r, lens[k], (round & 1) ? 0xFF : 0x00, written)) {
                return 0;
            }
        }
        for (size_t i = 0; i < lens[k]; i++) {
            if (!written[i]) {
                snprintf(why, sizeof(why),
                         "fill(%u bytes) returned 0 but never wrote byte %u in %d calls: it "
                         "must write exactly len bytes or return < 0",
                         (unsigned)lens[k], (unsigned)i, RNG_ROUNDS);
                return 0;
            }
        }
    }
    return 1;
}

static int rng_not_constant(const dpm_rng_t *r)
{
    uint8_t x[32], y[32];
    if (hook_failed(r->fill(r->ctx, x, sizeof(x)), "fill(32 bytes)") ||
        hook_failed(r->fill(r->ctx, y, sizeof(y)), "fill(32 bytes)")) {
        return 0;
    }
    if (memcmp(x, y, sizeof(x)) == 0) {
        snprintf(why, sizeof(why), "two fills of 32 bytes gave the same bytes");
        return 0;
    }
    return 1;
}

void dpm_port_check_rng(dpm_port_suite_t *suite, const dpm_rng_t *rng,
                        const dpm_port_rng_hooks_t *h)
{
    static const char *const checks[] = {"rng.fills_every_byte", "rng.not_constant"};
    if (!group_missing(suite, "rng.hooks_present", checks, 2,
                       rng == NULL         ? "no rng"
                       : rng->fill == NULL ? "fill is NULL"
                                           : NULL)) {
        result(suite, checks[0], rng_fills_every_byte(rng));
        result(suite, checks[1], rng_not_constant(rng));
    }

    dpm_rng_t broken;
    memset(&broken, 0, sizeof(broken));
    if (h == NULL || h->fail == NULL || hook_failed(h->fail(h->ctx, &broken), "the fail hook") ||
        broken.fill == NULL) {
        snprintf(why, sizeof(why), "the port offers no way to make its random source fail");
        verdict(suite, "rng.failure_reported", DPM_PORT_NOT_RUN);
        snprintf(why, sizeof(why), "the port offers no way to make its random source fail");
        verdict(suite, "rng.failure_refused_by_sdk", DPM_PORT_NOT_RUN);
        return;
    }
    /* A failed source says so (< 0), or the SDK would perturb with predictable bytes. */
    uint8_t buf[32];
    int ok = 1;
    for (int i = 0; ok && i < 3; i++) {
        if (!hook_failed(broken.fill(broken.ctx, buf, sizeof(buf)), "fill()")) {
            snprintf(why, sizeof(why),
                     "fill() of a failed source returned success: it must "
                     "return < 0");
            ok = 0;
        }
    }
    result(suite, "rng.failure_reported", ok);

    /* What the SDK makes of it (dpm/device.h): the report fails with DPM_ERR_RNG and queues
     * nothing; the first failure comes after the charge (its ε counts: the safe direction)
     * and every later report is refused before any charge (nothing more spent). */
    dpm_clock_t clk = {fixed_ms, NULL, NULL};
    ok = dev_open(&broken, &clk, NULL) == DPM_OK;
    if (ok) {
        dpm_status_t st1 = dev_report();
        dpm_eps_t after1 = dev_spent();
        dpm_status_t st2 = dev_report();
        dpm_eps_t after2 = dev_spent();
        if (st1 != DPM_ERR_RNG || st2 != DPM_ERR_RNG) {
            snprintf(why, sizeof(why),
                     "reports through the failed source returned %d, %d "
                     "(%s, %s; expected DPM_ERR_RNG = %d twice)",
                     (int)st1, (int)st2, dpm_strerror(st1), dpm_strerror(st2), (int)DPM_ERR_RNG);
            ok = 0;
        } else if (dev_pending() != 0) {
            snprintf(why, sizeof(why), "a report was queued from a failed random source");
            ok = 0;
        } else if (after1 > fx.mech.eps_implemented || after2 != after1) {
            snprintf(why, sizeof(why), "the ledger spent %u then %u (Q16), more than one report",
                     (unsigned)after1, (unsigned)after2);
            ok = 0;
        }
    }
    result(suite, "rng.failure_refused_by_sdk", ok);
}

/* ---- clock ---------------------------------------------------------------------------------- */

#define CLOCK_CALLS 100000u
#define CLOCK_ADVANCE_CALLS (1u << 22)

void dpm_port_check_clock(dpm_port_suite_t *suite, const dpm_clock_t *c)
{
    static const char *const checks[] = {"clock.monotonic_never_backwards",
                                         "clock.monotonic_advances"};
    if (!group_missing(suite, "clock.hooks_present", checks, 2,
                       c == NULL || c->monotonic_ms == NULL ? "monotonic_ms is NULL (required)"
                                                            : NULL)) {
        uint64_t first = c->monotonic_ms(c->ctx), prev = first;
        int ok = 1;
        for (uint32_t i = 0; ok && i < CLOCK_CALLS; i++) {
            uint64_t now = c->monotonic_ms(c->ctx);
            if (now < prev) {
                snprintf(why, sizeof(why), "call %u went back from %llu to %llu ms", (unsigned)i,
                         (unsigned long long)prev, (unsigned long long)now);
                ok = 0;
            }
            prev = now;
        }
        result(suite, checks[0], ok);
        /* a clock that never moves never ends a deadline: the SDK's uploads would spin */
        uint32_t i = 0;
        while (prev == first && i++ < CLOCK_ADVANCE_CALLS) {
            prev = c->monotonic_ms(c->ctx);
        }
        if (prev == first) {
            snprintf(why, sizeof(why),
                     "monotonic_ms stayed at %llu over %u calls (a stub?): "
                     "upload deadlines and backoff could never end",
                     (unsigned long long)first, CLOCK_ADVANCE_CALLS);
        }
        result(suite, checks[1], prev != first);
    }
    if (c == NULL || c->wall_time_s == NULL) {
        verdict(suite, "clock.wall_time", DPM_PORT_PASS); /* optional: the ledger then uses
                                                              the time since power-on */
        return;
    }
    int64_t t = 0;
    int ok = !hook_failed(c->wall_time_s(c->ctx, &t), "wall_time_s()");
    if (!ok) {
        size_t n = strlen(why);
        snprintf(why + n, sizeof(why) - n, ": leave wall_time_s NULL on a board without one");
    } else if (t < 1577836800) { /* 2020-01-01 */
        snprintf(why, sizeof(why),
                 "wall_time_s gave %lld, before 2020: an unset clock must "
                 "return < 0, not label data with 1970",
                 (long long)t);
        ok = 0;
    }
    result(suite, "clock.wall_time", ok);
}

/* ---- transport ------------------------------------------------------------------------------ */

/* The port's transport behind a guard that ends an upload the SDK's deadline cannot end (a
 * clock that stands still): once GUARD_CALLS send()/recv() calls in a row saw the same
 * monotonic_ms, it fails them. A port that spins (returns 0 at once) on a clock that moves is
 * never stopped by it. */
#define GUARD_CALLS 200000u
typedef struct {
    dpm_transport_t inner;
    const dpm_clock_t *clock; /* NULL: no guard (a direct probe of the port) */
    uint64_t last_ms;
    uint32_t same;     /* calls in a row at last_ms */
    int frozen;        /* the guard stopped the upload */
    int unimplemented; /* a call answered "not implemented" */
} guard_t;

/* 1 when the call should be refused: the clock stood still for GUARD_CALLS calls. */
static int guard_trips(guard_t *g)
{
    uint64_t now = g->clock->monotonic_ms(g->clock->ctx);
    g->same = now == g->last_ms ? g->same + 1 : 0;
    g->last_ms = now;
    g->frozen |= g->same > GUARD_CALLS;
    return g->frozen;
}

/* A transport call's answer: DPM_ERR_UNSUPPORTED is the template's "not implemented", which
 * must not pass for "the connection closed". */
static int32_t tr_seen(guard_t *g, int32_t n)
{
    g->unimplemented |= n == (int32_t)DPM_ERR_UNSUPPORTED;
    return n;
}

static int32_t guard_send(void *ctx, const uint8_t *buf, size_t len)
{
    guard_t *g = ctx;
    return guard_trips(g) ? -1 : tr_seen(g, g->inner.send(g->inner.ctx, buf, len));
}

static int32_t guard_recv(void *ctx, uint8_t *buf, size_t len)
{
    guard_t *g = ctx;
    return guard_trips(g) ? -1 : tr_seen(g, g->inner.recv(g->inner.ctx, buf, len));
}

static int tr_unimplemented(const guard_t *g)
{
    if (g->unimplemented) {
        snprintf(why, sizeof(why),
                 "send() or recv() returned DPM_ERR_UNSUPPORTED (%d): the "
                 "transport is not implemented",
                 (int)DPM_ERR_UNSUPPORTED);
    }
    return g->unimplemented;
}

/* Open a connection with `open` (silent or closed peer) into *t; 1 or 0 (why says). */
static int tr_open(const dpm_port_transport_hooks_t *h, int (*open)(void *, dpm_transport_t *),
                   const char *which, dpm_transport_t *t)
{
    memset(t, 0, sizeof(*t));
    char what[48];
    snprintf(what, sizeof(what), "the %s hook", which);
    if (hook_failed(open(h->ctx, t), what)) {
        return 0;
    }
    if (t->send == NULL || t->recv == NULL) {
        snprintf(why, sizeof(why), "the transport has no %s", t->send == NULL ? "send" : "recv");
        return 0;
    }
    return 1;
}

static void tr_close(const dpm_port_transport_hooks_t *h, dpm_transport_t *t)
{
    if (h->close != NULL) {
        h->close(h->ctx, t);
    }
}

/* recv() into a peer that sends nothing: 0 (try again), twice. */
static int silent_recv_is_zero(const dpm_port_transport_hooks_t *h)
{
    dpm_transport_t t;
    if (!tr_open(h, h->open_silent, "open_silent", &t)) {
        return 0;
    }
    uint8_t buf[64];
    int ok = 1;
    for (int i = 0; ok && i < 2; i++) {
        int32_t n = t.recv(t.ctx, buf, sizeof(buf));
        if (n != 0) {
            snprintf(why, sizeof(why),
                     "recv() with nothing to read returned %ld: return 0 "
                     "(try again later)%s",
                     (long)n,
                     n == (int32_t)DPM_ERR_UNSUPPORTED ? " (DPM_ERR_UNSUPPORTED: not implemented)"
                                                       : "");
            ok = 0;
        }
    }
    tr_close(h, &t);
    return ok;
}

/* recv() on a connection the peer closed: < 0 within 2 s of the port's clock (or 1000
 * calls), after any number of 0s. */
static int closed_recv_is_error(const dpm_port_transport_hooks_t *h, const dpm_clock_t *c)
{
    dpm_transport_t t;
    if (!tr_open(h, h->open_closed, "open_closed", &t)) {
        return 0;
    }
    uint8_t buf[64];
    uint64_t end = c->monotonic_ms(c->ctx) + 2000;
    int32_t n = 0;
    guard_t g;
    memset(&g, 0, sizeof(g));
    for (uint32_t i = 0; n == 0 && i < 1000 && c->monotonic_ms(c->ctx) < end; i++) {
        n = tr_seen(&g, t.recv(t.ctx, buf, sizeof(buf)));
    }
    tr_close(h, &t);
    if (tr_unimplemented(&g)) {
        return 0;
    }
    if (n >= 0) {
        snprintf(why, sizeof(why),
                 "recv() on a connection the peer closed returned %ld, "
                 "not < 0: the SDK would wait for its deadline",
                 (long)n);
        return 0;
    }
    return 1;
}

/* One device upload of one queued report through a connection from `open`: the status the
 * flush returned (expect), within [timeout, timeout + 1 s] of the port's clock for a
 * timeout, and the report still queued. */
static int upload_ends(const dpm_port_transport_hooks_t *h, const dpm_clock_t *c,
                       int (*open)(void *, dpm_transport_t *), const char *which,
                       dpm_status_t expect)
{
    uint32_t timeout = h->timeout_ms != 0 ? h->timeout_ms : 300;
    dpm_upload_config_t up = {"localhost", "/v1/reports", 8, 4096, timeout, 1000, 60000, NULL};
    static test_rng_t tr;
    test_rng_seed(&tr, 5);
    dpm_rng_t rng = test_rng_port(&tr);
    if (dev_open(&rng, c, &up) != DPM_OK) {
        return 0;
    }
    if (dev_report() != DPM_OK) {
        snprintf(why, sizeof(why), "the test report failed: %s", dpm_device_why(&fx.dev));
        return 0;
    }
    guard_t g;
    memset(&g, 0, sizeof(g));
    g.clock = c;
    if (!tr_open(h, open, which, &g.inner)) {
        return 0;
    }
    dpm_transport_t t = {guard_send, guard_recv, &g};
    static uint8_t work[DPM_UPLOAD_MIN_WORK + 512];
    dpm_upload_result_t res;
    uint64_t t0 = c->monotonic_ms(c->ctx);
    dpm_status_t st = dpm_device_flush(&fx.dev, &t, work, sizeof(work), &res);
    uint64_t took = c->monotonic_ms(c->ctx) - t0;
    tr_close(h, &g.inner);
    if (g.frozen) {
        snprintf(why, sizeof(why),
                 "the upload's deadline never came: monotonic_ms stood still over %u transport "
                 "calls (%llu ms elapsed on it)",
                 GUARD_CALLS, (unsigned long long)took);
        return 0;
    }
    if (tr_unimplemented(&g)) {
        return 0;
    }
    if (st != expect) {
        snprintf(why, sizeof(why), "the upload (%s peer) returned %d (%s), expected %d (%s)",
                 which + 5, (int)st, dpm_strerror(st), (int)expect, dpm_strerror(expect));
        return 0;
    }
    if (expect == DPM_ERR_TIMEOUT && (took < timeout || took > timeout + 1000u)) {
        snprintf(why, sizeof(why),
                 "the upload timed out after %llu ms, deadline %u ms: recv() "
                 "must not block much longer than the SDK asks",
                 (unsigned long long)took, (unsigned)timeout);
        return 0;
    }
    if (dev_pending() != 1) {
        snprintf(why, sizeof(why), "the failed upload left %u reports queued, not 1",
                 (unsigned)dev_pending());
        return 0;
    }
    return 1;
}

void dpm_port_check_transport(dpm_port_suite_t *suite, const dpm_clock_t *c,
                              const dpm_port_transport_hooks_t *h)
{
    static const char *const names[] = {
        "transport.silent_recv_is_zero", "transport.closed_recv_is_error",
        "transport.upload_times_out", "transport.upload_closed_is_error"};
    const char *missing = h == NULL                              ? "no hooks"
                          : h->open_silent == NULL               ? "hooks.open_silent is NULL"
                          : h->open_closed == NULL               ? "hooks.open_closed is NULL"
                          : c == NULL || c->monotonic_ms == NULL ? "no monotonic clock"
                                                                 : NULL;
    if (group_missing(suite, "transport.hooks_present", names, 4, missing)) {
        return;
    }
    result(suite, names[0], silent_recv_is_zero(h));
    result(suite, names[1], closed_recv_is_error(h, c));
    result(suite, names[2], upload_ends(h, c, h->open_silent, "open_silent", DPM_ERR_TIMEOUT));
    result(suite, names[3], upload_ends(h, c, h->open_closed, "open_closed", DPM_ERR_TRANSPORT));
}

/* ---- CRC-32 --------------------------------------------------------------------------------- */

void dpm_port_check_crc32(dpm_port_suite_t *suite, dpm_port_crc32_fn crc)
{
    static const uint8_t digits[] = "123456789";
    static const char *const checks[] = {"crc32.check_value", "crc32.continues"};
    if (group_missing(suite, NULL, checks, 2, crc == NULL ? "no CRC function" : NULL)) {
        return;
    }
    uint32_t whole = crc(0, digits, 9);
    if (whole != 0xCBF43926u) {
        snprintf(why, sizeof(why), "crc32(0, \"123456789\") = 0x%08lX, zlib's is 0xCBF43926",
                 (unsigned long)whole);
    }
    result(suite, checks[0], whole == 0xCBF43926u);
    uint32_t split = crc(crc(crc(0, digits, 4), digits + 4, 0), digits + 4, 5);
    if (split != whole) {
        snprintf(why, sizeof(why),
                 "crc32 over \"1234\" then \"56789\" = 0x%08lX, over the whole "
                 "= 0x%08lX: it must continue from the previous value",
                 (unsigned long)split, (unsigned long)whole);
    }
    result(suite, checks[1], split == whole);
}
