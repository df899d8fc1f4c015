/* SPDX-License-Identifier: Apache-2.0 */
/* What one report call costs does not depend on what the outbox holds (issue 32 item 4): the
 * device's one-call tuple path reads and writes the same number of storage bytes, in the same
 * number of calls, at every outbox fill level from empty to full (the call that compacts the
 * bank aside: it copies the pending records, and is counted apart). Storage traffic is the
 * measure: the per-record scan it replaces read every record of the bank at every report.
 * Negative control: dpm_outbox_put, which looks the id up among the pending records (an app's
 * bytes), fails the same check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "fake_storage.h"
#include "test_rng.h"
#include "tuple_report.h"

#define LEDGER_SIZE 1024u
#define OUTBOX_SIZE 8192u /* two 4 KB banks: 70-odd tuple reports */
#define REGION (LEDGER_SIZE + OUTBOX_SIZE)
#define MAX_CALLS 400u

typedef struct {
    uint64_t reads, bytes_read, writes, bytes_written;
} traffic_t;

static traffic_t traffic(const fake_storage_t *fs)
{
    traffic_t t = {fs->reads, fs->bytes_read, fs->writes, fs->bytes_written};
    return t;
}

static traffic_t since(const fake_storage_t *fs, traffic_t before)
{
    traffic_t t = traffic(fs);
    t.reads -= before.reads;
    t.bytes_read -= before.bytes_read;
    t.writes -= before.writes;
    t.bytes_written -= before.bytes_written;
    return t;
}

static int same(traffic_t a, traffic_t b)
{
    return a.reads == b.reads && a.bytes_read == b.bytes_read && a.writes == b.writes &&
           a.bytes_written == b.bytes_written;
}

typedef struct {
    uint8_t mem[REGION];
    fake_storage_t fs;
    test_rng_t t;
    dpm_device_config_t cfg;
    dpm_device_t dev;
    dpm_mech_t mech;
} rig_t;

static void rig_init(rig_t *r)
{
    memset(r, 0, sizeof(*r));
    fake_storage_init(&r->fs, r->mem, REGION, 1);
    test_rng_seed(&r->t, 32u);
    r->cfg.rng = test_rng_port(&r->t);
    r->cfg.storage = fake_storage_port(&r->fs);
    r->cfg.ledger_size = LEDGER_SIZE;
    r->cfg.outbox_offset = LEDGER_SIZE;
    r->cfg.outbox_size = OUTBOX_SIZE;
    r->cfg.policy.defaults.max_eps = DPM_EPS(1);
    r->cfg.policy.defaults.max_budget = DPM_EPS(64);
    r->cfg.policy.device.max_eps = DPM_EPS(1000); /* no clock: over the device's life */
    assert_int_equal(dpm_device_init(&r->dev, &r->cfg), DPM_OK);
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.mechanism = DPM_MECH_ID_TUPLE_MR;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(64);
    c.period_seconds = 86400u;
    c.groups = 4u;
    c.nmetrics = 2u;
    c.metrics[0] = DPM_METRIC_TPR;
    c.metrics[1] = DPM_METRIC_FPR;
    assert_int_equal(dpm_device_accept_mech(&r->dev, &c, &r->mech, NULL), DPM_OK);
}

/* Deliver the oldest pending report, as an app does after a 2xx. */
static void deliver_oldest(dpm_outbox_t *ob)
{
    uint32_t cursor = 0;
    dpm_outbox_entry_t e;
    int found = 0;
    assert_int_equal(dpm_outbox_next(ob, &cursor, &e, &found), DPM_OK);
    assert_true(found);
    assert_int_equal(dpm_outbox_remove(ob, &e), DPM_OK);
}

/* Fill the outbox from empty to full with report calls, then deliver one report before each
 * further call, until two compactions have happened: every call that does not compact moves
 * the same storage traffic as the first one. */
static void test_device_report_traffic_is_flat(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r);
    const dpm_confusion_t conf = {45, 5, 45, 5};
    traffic_t first = {0, 0, 0, 0};
    uint32_t calls = 0, compactions = 0, max_fill = 0, period = 0;
    while (compactions < 2u && calls < MAX_CALLS) {
        if (!dpm_outbox_room(&r.dev.outbox, DPM_REPORT_TUPLE_MAX)) {
            deliver_oldest(&r.dev.outbox);
            continue;
        }
        uint32_t fill = dpm_outbox_pending(&r.dev.outbox), seq = r.dev.outbox.seq;
        traffic_t before = traffic(&r.fs);
        uint32_t held = r.dev.outbox.pending_bytes;
        assert_int_equal(dpm_device_report_tuple(&r.dev, &r.mech, period++, 1u, &conf, NULL),
                         DPM_OK);
        traffic_t t = since(&r.fs, before);
        /* noised values are varints, so reports differ in length: less the record, written
         * and read back once */
        uint32_t record = r.dev.outbox.pending_bytes - held;
        t.bytes_written -= record;
        t.bytes_read -= record;
        max_fill = fill > max_fill ? fill : max_fill;
        if (r.dev.outbox.seq != seq) {
            compactions++; /* copies the pending records: not flat (yet) */
            continue;
        }
        /* the reference: the second call (the first one adds the campaign's ledger entry) */
        if (calls++ <= 1u) {
            first = t;
            continue;
        }
        if (!same(t, first)) {
            fail_msg("fill %u: %llu reads (%llu bytes), %llu writes (%llu bytes), each + the "
                     "record; at fill 1: "
                     "%llu reads (%llu bytes), %llu writes (%llu bytes)",
                     fill, (unsigned long long)t.reads, (unsigned long long)t.bytes_read,
                     (unsigned long long)t.writes, (unsigned long long)t.bytes_written,
                     (unsigned long long)first.reads, (unsigned long long)first.bytes_read,
                     (unsigned long long)first.writes, (unsigned long long)first.bytes_written);
        }
    }
    /* the run covered what it claims: empty to full, and compactions after deliveries */
    assert_int_equal(compactions, 2u);
    assert_true(max_fill >= 60u);
    print_message("# %u report calls at fill levels 1..%u (2 compactions aside): each %llu reads "
                  "(%llu bytes), %llu writes (%llu bytes), each + the record\n",
                  calls, max_fill, (unsigned long long)first.reads,
                  (unsigned long long)first.bytes_read, (unsigned long long)first.writes,
                  (unsigned long long)first.bytes_written);
}

/* Negative control: the measure sees a scan. dpm_outbox_put checks an app's report id against
 * every pending record, so its reads grow with the fill level. */
static void test_put_with_id_lookup_is_not_flat(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r);
    dpm_rand_t rand;
    assert_int_equal(dpm_rand_init(&rand, &r.cfg.rng), DPM_OK);
    uint8_t buf[DPM_REPORT_MAX_BYTES], id[DPM_REPORT_ID_BYTES];
    uint64_t prev = 0;
    uint32_t fill = 0;
    for (; dpm_outbox_room(&r.dev.outbox, DPM_REPORT_MAX_BYTES); fill++) {
        size_t len = tuple_report_make(&rand, 1u, fill, (dpm_eps_t)65536u, buf, id);
        assert_true(len > 0);
        traffic_t before = traffic(&r.fs);
        assert_int_equal(dpm_outbox_put(&r.dev.outbox, buf, len), DPM_OK);
        traffic_t t = since(&r.fs, before);
        if (fill > 0) {
            assert_true(t.bytes_read > prev); /* one more record read at every fill level */
        }
        prev = t.bytes_read;
    }
    assert_true(fill >= 40u);
    print_message("# dpm_outbox_put at fill %u: %llu bytes read (grows with the fill level)\n",
                  fill - 1u, (unsigned long long)prev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_report_traffic_is_flat),
        cmocka_unit_test(test_put_with_id_lookup_is_not_flat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
