/* SPDX-License-Identifier: Apache-2.0 */
/* The outbox (put, iterate, remove, compaction, recovery) and the whole device runtime under
 * fault injection: ledger (anchored) + outbox + upload against a fake collector, with every
 * storage write/erase of the scenario failing in turn ("not applied", three kinds of torn
 * write and two pseudo-random mixes of old and new bytes), the device rebooting and carrying
 * on. After every scenario: no report lost, none duplicated, the ledger never under-counts,
 * and no loss is counted (a power loss is not damage). Damage at rest is
 * test_outbox_damage.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/persist.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/outbox.h"
#include "fake_collector.h"
#include "fake_storage.h"
#include "test_rng.h"
#include "tuple_report.h"
#include "test_figure.h"

#define EPS1 ((dpm_eps_t)65536)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static size_t make_report(dpm_rand_t *r, uint32_t campaign, uint32_t period, dpm_eps_t eps,
                          uint8_t *buf, uint8_t *id)
{
    size_t len = tuple_report_make(r, campaign, period, eps, buf, id);
    assert_true(len > 0);
    return len;
}

/* ---- outbox unit tests ------------------------------------------------------------------- */

#define OB_OFF 64u
/* two banks, each just big enough for its header and one largest report (a 64-bin roc_hist
 * report): several tuple reports each */
#define OB_SIZE DPM_OUTBOX_MIN_REGION
#define OB_MEM (OB_OFF + OB_SIZE + 560u)
#define BANK (OB_SIZE / 2u)

typedef struct {
    uint8_t mem[OB_MEM];
    fake_storage_t fs;
    dpm_storage_t st;
    dpm_outbox_t ob;
    test_rng_t trng;
    dpm_rng_t rng;
    dpm_rand_t rand;
} obrig_t;

static void obrig_init(obrig_t *r, int flash, uint64_t seed)
{
    fake_storage_init(&r->fs, r->mem, OB_MEM, flash);
    r->st = fake_storage_port(&r->fs);
    test_rng_seed(&r->trng, seed);
    r->rng = test_rng_port(&r->trng);
    assert_int_equal(dpm_rand_init(&r->rand, &r->rng), DPM_OK);
}

static uint8_t *bank_mem(obrig_t *r, uint32_t b)
{
    return r->mem + OB_OFF + b * BANK;
}

/* The pending ids in order; fails the test on a duplicate id. */
static size_t pending_ids(dpm_outbox_t *ob, uint8_t ids[][DPM_REPORT_ID_BYTES], size_t max)
{
    uint32_t cursor = 0;
    size_t n = 0;
    for (;;) {
        dpm_outbox_entry_t e;
        int found = 0;
        assert_int_equal(dpm_outbox_next(ob, &cursor, &e, &found), DPM_OK);
        if (!found) {
            break;
        }
        for (size_t i = 0; i < n; i++) {
            if (memcmp(ids[i], e.report_id, DPM_REPORT_ID_BYTES) == 0) {
                fail_msg("the outbox holds two records with one report id");
            }
        }
        assert_true(n < max);
        memcpy(ids[n++], e.report_id, DPM_REPORT_ID_BYTES);
    }
    assert_int_equal(n, dpm_outbox_pending(ob));
    return n;
}

static void test_outbox_layout_and_roundtrip(void **state)
{
    (void)state;
    static obrig_t r;
    obrig_init(&r, 1, 1);
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    /* bank A header, twice: "DPOB", version 2, reserved, seq 1, lost 0, CRC */
    const uint8_t hdr[] = {0x44, 0x50, 0x4F, 0x42, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    for (uint32_t c = 0; c < 2; c++) {
        const uint8_t *h = bank_mem(&r, 0) + c * DPM_OUTBOX_HDR_COPY;
        assert_memory_equal(h, hdr, sizeof(hdr));
        assert_int_equal(dpm_get_le32(h + 16), dpm_crc32(0, hdr, 16));
    }
    assert_int_equal(dpm_outbox_pending(&r.ob), 0);

    uint8_t rep[3][DPM_REPORT_MAX_BYTES], id[3][DPM_REPORT_ID_BYTES];
    size_t len[3];
    for (int i = 0; i < 3; i++) {
        len[i] = make_report(&r.rand, 5, (uint32_t)i, EPS1, rep[i], id[i]);
        assert_int_equal(dpm_outbox_put(&r.ob, rep[i], len[i]), DPM_OK);
    }
    /* first record right after the header: mark, committed, pending x3, kind, length, CRC,
     * payload */
    const uint8_t *rec = bank_mem(&r, 0) + DPM_OUTBOX_BANK_HDR;
    const uint8_t head[] = {0xA5, 0x00, 0xFF, 0xFF, 0xFF, 0x01};
    assert_memory_equal(rec, head, sizeof(head));
    assert_int_equal(dpm_get_le16(rec + 6), len[0]);
    assert_int_equal(dpm_get_le32(rec + 8), dpm_crc32(dpm_crc32(0, rec + 5, 3), rec + 12, len[0]));
    assert_memory_equal(rec + 12, rep[0], len[0]);
    /* a put is two writes: the record, then its commit byte */
    uint64_t w0 = r.fs.writes;
    uint8_t extra[DPM_REPORT_MAX_BYTES], extra_id[DPM_REPORT_ID_BYTES];
    size_t extra_len = make_report(&r.rand, 6, 0, EPS1, extra, extra_id);
    dpm_outbox_t probe = r.ob;
    assert_int_equal(dpm_outbox_put(&probe, extra, extra_len), DPM_OK);
    assert_int_equal(r.fs.writes - w0, 2);
    memset(bank_mem(&r, 0) + probe.wpos - DPM_OUTBOX_REC_HDR - extra_len, 0xFF,
           DPM_OUTBOX_REC_HDR + extra_len); /* undo it (RAM fake) */

    /* iterate in order, read back the same bytes */
    uint32_t cursor = 0;
    dpm_outbox_entry_t e[3];
    for (int i = 0; i < 3; i++) {
        int found = 0;
        assert_int_equal(dpm_outbox_next(&r.ob, &cursor, &e[i], &found), DPM_OK);
        assert_true(found);
        assert_memory_equal(e[i].report_id, id[i], DPM_REPORT_ID_BYTES);
        assert_int_equal(e[i].len, len[i]);
        uint8_t back[DPM_REPORT_MAX_BYTES];
        assert_int_equal(dpm_outbox_read(&r.ob, &e[i], back, sizeof(back)), DPM_OK);
        assert_memory_equal(back, rep[i], len[i]);
        assert_int_equal(dpm_outbox_read(&r.ob, &e[i], back, len[i] - 1), DPM_ERR_BUFFER);
    }
    int found = 1;
    dpm_outbox_entry_t none;
    assert_int_equal(dpm_outbox_next(&r.ob, &cursor, &none, &found), DPM_OK);
    assert_false(found);

    /* removing is one 3-byte write that clears the removal bytes */
    uint64_t bytes = r.fs.bytes_written, writes = r.fs.writes;
    assert_int_equal(dpm_outbox_remove(&r.ob, &e[1]), DPM_OK);
    assert_int_equal(r.fs.writes - writes, 1);
    assert_int_equal(r.fs.bytes_written - bytes, 3);
    const uint8_t *rec1 = bank_mem(&r, 0) + e[1].pos;
    assert_int_equal(rec1[2] | rec1[3] | rec1[4], 0);
    assert_int_equal(dpm_outbox_pending(&r.ob), 2);
    assert_int_equal(dpm_outbox_remove(&r.ob, &e[1]), DPM_OK); /* again: no-op */
    assert_int_equal(r.fs.writes - writes, 1);

    /* it all survives a reopen */
    dpm_outbox_t again;
    assert_int_equal(dpm_outbox_open(&again, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    uint8_t ids[8][DPM_REPORT_ID_BYTES];
    assert_int_equal(pending_ids(&again, ids, 8), 2);
    assert_memory_equal(ids[0], id[0], DPM_REPORT_ID_BYTES);
    assert_memory_equal(ids[1], id[2], DPM_REPORT_ID_BYTES);
    /* nothing outside the region was touched */
    for (uint32_t i = 0; i < OB_OFF; i++) {
        assert_int_equal(r.mem[i], 0xFF);
    }
    for (uint32_t i = OB_OFF + OB_SIZE; i < OB_MEM; i++) {
        assert_int_equal(r.mem[i], 0xFF);
    }
}

static void test_outbox_rejects_bad_input(void **state)
{
    (void)state;
    static obrig_t r;
    obrig_init(&r, 1, 2);
    dpm_outbox_t ob;
    memset(&ob, 0x33, sizeof(ob));
    dpm_outbox_t keep = ob;
    assert_int_equal(dpm_outbox_open(NULL, &r.st, OB_OFF, OB_SIZE), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_open(&ob, NULL, OB_OFF, OB_SIZE), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, DPM_OUTBOX_MIN_REGION - 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_MEM - 100, OB_SIZE), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_format(&ob, &r.st, UINT32_MAX, OB_SIZE), DPM_ERR_PARAM);
    r.fs.fail_reads = 1;
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_ERR_STORAGE);
    r.fs.fail_reads = 0;
    assert_memory_equal(&ob, &keep, sizeof(ob));
    assert_int_equal(r.fs.ops, 0);

    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    uint8_t rep[DPM_REPORT_MAX_BYTES], id[DPM_REPORT_ID_BYTES];
    size_t len = make_report(&r.rand, 1, 0, EPS1, rep, id);
    keep = r.ob;
    uint64_t ops = r.fs.ops;
    assert_int_equal(dpm_outbox_put(&r.ob, NULL, len), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_put(&r.ob, rep, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_put(&r.ob, rep, len - 1), DPM_ERR_PARAM); /* truncated */
    uint8_t big[DPM_OUTBOX_MAX_PAYLOAD + 1];
    memset(big, 0, sizeof(big));
    assert_int_equal(dpm_outbox_put(&r.ob, big, sizeof(big)), DPM_ERR_PARAM);
    uint8_t junk[40];
    memset(junk, 0x0A, sizeof(junk));
    junk[1] = 0x10;
    assert_int_equal(dpm_outbox_put(&r.ob, junk, sizeof(junk)), DPM_ERR_PARAM);
    assert_memory_equal(&r.ob, &keep, sizeof(keep));
    assert_int_equal(r.fs.ops, ops);

    /* one record per id: an identical re-put is a no-op, different bytes an error */
    assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_OK);
    ops = r.fs.ops;
    assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_OK);
    assert_int_equal(r.fs.ops, ops);
    rep[len - 1] ^= 0x02; /* same id, another value */
    assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_pending(&r.ob), 1);

    /* entries are checked: forged position, id or length */
    uint32_t cursor = 0;
    dpm_outbox_entry_t e;
    int found = 0;
    assert_int_equal(dpm_outbox_next(&r.ob, &cursor, &e, &found), DPM_OK);
    dpm_outbox_entry_t bad = e;
    bad.report_id[0] ^= 1;
    assert_int_equal(dpm_outbox_remove(&r.ob, &bad), DPM_ERR_PARAM);
    bad = e;
    bad.pos += 1;
    assert_int_equal(dpm_outbox_remove(&r.ob, &bad), DPM_ERR_CORRUPT);
    bad = e;
    bad.pos = 3;
    assert_int_equal(dpm_outbox_remove(&r.ob, &bad), DPM_ERR_PARAM);
    bad = e;
    bad.seq++;
    assert_int_equal(dpm_outbox_remove(&r.ob, &bad), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_pending(&r.ob), 1);
    dpm_outbox_t z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(dpm_outbox_put(&z, rep, len), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_next(&z, &cursor, &e, &found), DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_pending(NULL), 0);
    assert_false(dpm_outbox_room(NULL, 30));
}

static void test_outbox_compaction_and_full(void **state)
{
    (void)state;
    static obrig_t r;
    obrig_init(&r, 1, 3);
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    uint8_t rep[DPM_REPORT_MAX_BYTES], id[64][DPM_REPORT_ID_BYTES];
    size_t n = 0;
    /* fill bank A */
    for (;;) {
        size_t len = make_report(&r.rand, 1, (uint32_t)n, EPS1, rep, id[n]);
        if (!dpm_outbox_room(&r.ob, len)) {
            assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_ERR_BUFFER);
            break;
        }
        assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_OK);
        n++;
    }
    assert_true(n >= 3);
    assert_int_equal(r.ob.seq, 1);
    /* full of pending reports: nothing to reclaim, and nothing was written */
    /* remove the first two, then put more, delivering the oldest whenever the outbox is full,
     * until the stepwise compaction switches to bank B */
    uint32_t cursor = 0, gone = 0;
    for (int k = 0; k < 2; k++, gone++) {
        dpm_outbox_entry_t e;
        int found = 0;
        assert_int_equal(dpm_outbox_next(&r.ob, &cursor, &e, &found), DPM_OK);
        assert_int_equal(dpm_outbox_remove(&r.ob, &e), DPM_OK);
    }
    dpm_outbox_entry_t stale;
    int found = 0;
    cursor = 0;
    assert_int_equal(dpm_outbox_next(&r.ob, &cursor, &stale, &found), DPM_OK);
    while (r.ob.seq == 1) {
        size_t len = make_report(&r.rand, 1, (uint32_t)n, EPS1, rep, id[n]);
        if (!dpm_outbox_room(&r.ob, len)) {
            dpm_outbox_entry_t e;
            cursor = 0;
            assert_int_equal(dpm_outbox_next(&r.ob, &cursor, &e, &found), DPM_OK);
            assert_int_equal(dpm_outbox_remove(&r.ob, &e), DPM_OK); /* mirrored if copied */
            gone++;
            continue;
        }
        assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_OK);
        n++;
        assert_true(n < 64);
    }
    assert_int_equal(r.ob.seq, 2);
    assert_int_equal(r.ob.active, 1);
    /* bank B now has the newer header; A's is still valid (erased by the next compaction) */
    assert_int_equal(dpm_get_le32(bank_mem(&r, 1) + 8), 2);
    assert_int_equal(dpm_get_le32(bank_mem(&r, 0) + 8), 1);
    /* entries from before the compaction are void */
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    assert_int_equal(dpm_outbox_read(&r.ob, &stale, buf, sizeof(buf)), DPM_ERR_PARAM);
    /* order kept, and no delivered report came back: reports gone..n-1 */
    uint8_t ids[64][DPM_REPORT_ID_BYTES];
    size_t got = pending_ids(&r.ob, ids, 64);
    assert_int_equal(got, n - gone);
    for (size_t i = 0; i < got; i++) {
        assert_memory_equal(ids[i], id[i + gone], DPM_REPORT_ID_BYTES);
    }
    /* a reopen picks bank B */
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(r.ob.active, 1);
    assert_int_equal(pending_ids(&r.ob, ids, 64), n - gone);
    /* and many more cycles, removing as we go, keep working (banks alternate) */
    for (int round = 0; round < 160; round++) {
        cursor = 0;
        dpm_outbox_entry_t e;
        assert_int_equal(dpm_outbox_next(&r.ob, &cursor, &e, &found), DPM_OK);
        assert_true(found);
        assert_int_equal(dpm_outbox_remove(&r.ob, &e), DPM_OK);
        size_t len = make_report(&r.rand, 2, (uint32_t)round, EPS1, rep, id[0]);
        assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_OK);
    }
    assert_true(r.ob.seq > 10);
    assert_int_equal(dpm_outbox_pending(&r.ob), n - gone);
}

static void test_outbox_torn_tail_recovery(void **state)
{
    (void)state;
    static obrig_t r;
    obrig_init(&r, 1, 4);
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    uint8_t rep[DPM_REPORT_MAX_BYTES], id[4][DPM_REPORT_ID_BYTES];
    size_t len = 0;
    for (int i = 0; i < 2; i++) {
        len = make_report(&r.rand, 1, 0, EPS1, rep, id[i]);
        assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_OK);
    }
    /* the third put is torn half-way and the device dies */
    len = make_report(&r.rand, 1, 0, EPS1, rep, id[2]);
    fake_storage_arm(&r.fs, r.fs.ops + 1, FAKE_TORN, FAKE_TORN_HALF);
    assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_ERR_STORAGE);
    fake_storage_reboot(&r.fs);
    /* open never writes over the torn bytes: it compacts into bank B at once */
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(r.ob.active, 1);
    assert_false(r.ob.dirty);
    uint8_t ids[8][DPM_REPORT_ID_BYTES];
    assert_int_equal(pending_ids(&r.ob, ids, 8), 2); /* the two stored, not the torn one */
    assert_memory_equal(ids[1], id[1], DPM_REPORT_ID_BYTES);
    /* a torn append is no loss: put never returned DPM_OK for it */
    dpm_outbox_stats_t s;
    assert_int_equal(dpm_outbox_stats(&r.ob, &s), DPM_OK);
    assert_int_equal(s.lost, 0);
    assert_int_equal(s.found_damaged, 0);
    len = make_report(&r.rand, 1, 0, EPS1, rep, id[3]);
    assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_OK);
    assert_int_equal(r.ob.active, 1);
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(pending_ids(&r.ob, ids, 8), 3);
    assert_memory_equal(ids[2], id[3], DPM_REPORT_ID_BYTES);
}

static void test_outbox_transient_storage_errors(void **state)
{
    (void)state;
    static obrig_t r;
    obrig_init(&r, 0, 5);
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    uint8_t rep[DPM_REPORT_MAX_BYTES], id[DPM_REPORT_ID_BYTES];
    size_t len = make_report(&r.rand, 1, 0, EPS1, rep, id);
    r.fs.fail_writes = 1;
    assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_ERR_STORAGE);
    assert_int_equal(dpm_outbox_pending(&r.ob), 0);
    r.fs.fail_writes = 0;
    assert_int_equal(dpm_outbox_put(&r.ob, rep, len), DPM_OK);
    uint32_t cursor = 0;
    dpm_outbox_entry_t e;
    int found = 0;
    assert_int_equal(dpm_outbox_next(&r.ob, &cursor, &e, &found), DPM_OK);
    r.fs.fail_writes = 1;
    assert_int_equal(dpm_outbox_remove(&r.ob, &e), DPM_ERR_STORAGE);
    r.fs.fail_writes = 0;
    assert_int_equal(dpm_outbox_pending(&r.ob), 1); /* still there: it will be sent again */
    assert_int_equal(dpm_outbox_remove(&r.ob, &e), DPM_OK);
    assert_int_equal(dpm_outbox_pending(&r.ob), 0);
}

static void test_outbox_fresh_corrupt_and_format(void **state)
{
    (void)state;
    static obrig_t r;
    obrig_init(&r, 1, 6);
    /* something else lives in the region: not an outbox, not fresh */
    memset(r.mem + OB_OFF, 0x00, OB_SIZE);
    dpm_outbox_t ob;
    memset(&ob, 0x44, sizeof(ob));
    dpm_outbox_t keep = ob;
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_ERR_CORRUPT);
    assert_memory_equal(&ob, &keep, sizeof(ob));
    assert_int_equal(dpm_outbox_format(&ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(dpm_outbox_pending(&ob), 0);
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    /* a first format torn in bank A's first header copy (B erased) is redone by open; torn
     * in the second copy, the first one stands and the outbox is rewritten (bank B) */
    for (uint64_t op = 3; op <= 4; op++) {
        for (int torn = 0; torn < 3; torn++) {
            obrig_init(&r, 1, 7);
            /* a fresh region: op 1 erases B, op 2 erases A, ops 3 and 4 write A's header */
            fake_storage_arm(&r.fs, op, FAKE_TORN, (fake_torn_t)torn);
            assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_ERR_STORAGE);
            fake_storage_reboot(&r.fs);
            assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
            assert_int_equal(ob.seq, op == 3 ? 1u : 2u);
            dpm_outbox_stats_t s;
            assert_int_equal(dpm_outbox_stats(&ob, &s), DPM_OK);
            assert_int_equal(s.found_headers, op == 3 ? 0u : 1u);
        }
    }
    /* a damaged outbox is never formatted silently: records in A, no valid header copy */
    obrig_init(&r, 1, 8);
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    uint8_t rep[DPM_REPORT_MAX_BYTES], id[DPM_REPORT_ID_BYTES];
    size_t len = make_report(&r.rand, 1, 0, EPS1, rep, id);
    assert_int_equal(dpm_outbox_put(&ob, rep, len), DPM_OK);
    bank_mem(&r, 0)[9] ^= 0x01;
    bank_mem(&r, 0)[DPM_OUTBOX_HDR_COPY + 9] ^= 0x01;
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_ERR_CORRUPT);
    /* two valid copies that differ cannot come from the outbox: corrupt too */
    obrig_init(&r, 1, 9);
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    uint8_t *h1 = bank_mem(&r, 0) + DPM_OUTBOX_HDR_COPY;
    dpm_put_le32(h1 + 8, 7);
    dpm_put_le32(h1 + 16, dpm_crc32(0, h1, 16));
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_ERR_CORRUPT);
}

/* The anchor (dpm_outbox_open_anchored): written once the outbox exists; an erased region under
 * it is formatted and counted as one lost report, persistently, until a collector acknowledges
 * it; without the anchor the same erase is silent (the negative control). OB_OFF's first 8
 * bytes hold the anchor, outside the region. */
static void test_outbox_anchor_counts_an_erased_region(void **state)
{
    (void)state;
    static obrig_t r;
    dpm_outbox_t ob;
    memset(&ob, 0x44, sizeof(ob));
    dpm_outbox_t keep = ob;
    obrig_init(&r, 1, 10);
    /* bad anchors: inside the region, past the storage, read-only */
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, OB_OFF + 4),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, OB_OFF - 4),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, OB_MEM - 4),
                     DPM_ERR_PARAM);
    dpm_storage_t ro = r.st;
    ro.write = NULL;
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &ro, 0),
                     DPM_ERR_PARAM);
    assert_memory_equal(&ob, &keep, sizeof(ob));
    assert_int_equal(r.fs.ops, 0);
    /* a new device: formatted, then the anchor written; a healthy reopen writes nothing */
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, 0), DPM_OK);
    assert_memory_equal(r.mem, "DPOB-ANC", DPM_OUTBOX_ANCHOR_BYTES);
    dpm_outbox_stats_t s;
    assert_int_equal(dpm_outbox_stats(&ob, &s), DPM_OK);
    assert_true(s.lost == 0 && s.found_erased == 0);
    uint8_t rep[DPM_REPORT_MAX_BYTES], id[DPM_REPORT_ID_BYTES];
    for (uint32_t i = 0; i < 3; i++) {
        size_t len = make_report(&r.rand, 1, i, EPS1, rep, id);
        assert_int_equal(dpm_outbox_put(&ob, rep, len), DPM_OK);
    }
    uint64_t ops = r.fs.ops;
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, 0), DPM_OK);
    assert_int_equal(r.fs.ops, ops);
    assert_int_equal(dpm_outbox_pending(&ob), 3);
    /* the region erased (a sector erase, a wiped file): counted, not a new device */
    memset(r.mem + OB_OFF, 0xFF, OB_SIZE);
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, 0), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&ob, &s), DPM_OK);
    assert_int_equal(s.pending, 0);
    assert_int_equal(s.found_erased, 1);
    assert_int_equal(s.found_lost, 1);
    assert_int_equal(s.lost, 1);
    /* the count is in the new bank's header: it survives a reboot (found once, kept) */
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, 0), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&ob, &s), DPM_OK);
    assert_true(s.lost == 1 && s.found_erased == 0 && s.found_lost == 0);
    /* and leaves once a collector acknowledged it */
    assert_int_equal(dpm_outbox_ack_lost(&ob, 1), DPM_OK);
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, 0), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&ob, &s), DPM_OK);
    assert_int_equal(s.lost, 0);
    /* erased while the outbox is in use: the recovery after a failed storage call checks the
     * anchor too */
    size_t len = make_report(&r.rand, 1, 9, EPS1, rep, id);
    assert_int_equal(dpm_outbox_put(&ob, rep, len), DPM_OK);
    memset(r.mem + OB_OFF, 0xFF, OB_SIZE);
    r.fs.fail_writes = 1;
    len = make_report(&r.rand, 1, 10, EPS1, rep, id);
    assert_int_equal(dpm_outbox_put(&ob, rep, len), DPM_ERR_STORAGE);
    r.fs.fail_writes = 0;
    assert_int_equal(dpm_outbox_put(&ob, rep, len), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&ob, &s), DPM_OK);
    assert_true(s.found_erased == 1 && s.lost == 1 && s.pending == 1);
    /* an anchor holding anything but 0xFF counts as written: a new-looking region is a loss */
    obrig_init(&r, 1, 11);
    r.mem[5] = 0x00;
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, 0), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&ob, &s), DPM_OK);
    assert_int_equal(s.found_erased, 1);
    assert_int_equal(r.mem[5], 0x00); /* a written anchor is never changed */
    /* an outbox opened without the anchor gains it at its first anchored open */
    obrig_init(&r, 1, 12);
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(r.mem[0], 0xFF);
    assert_int_equal(dpm_outbox_open_anchored(&ob, &r.st, OB_OFF, OB_SIZE, &r.st, 0), DPM_OK);
    assert_memory_equal(r.mem, "DPOB-ANC", DPM_OUTBOX_ANCHOR_BYTES);
    /* Negative control: without the anchor the same erase reads as a new device, silently */
    obrig_init(&r, 1, 13);
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    len = make_report(&r.rand, 1, 0, EPS1, rep, id);
    assert_int_equal(dpm_outbox_put(&ob, rep, len), DPM_OK);
    memset(r.mem + OB_OFF, 0xFF, OB_SIZE);
    assert_int_equal(dpm_outbox_open(&ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&ob, &s), DPM_OK);
    assert_true(s.pending == 0 && s.lost == 0 && s.found_erased == 0);
}

/* ---- the device under fault injection ------------------------------------------------------ */

#define LEDGER_OFF 0u
#define LEDGER_SIZE DPM_LEDGER_MIN_REGION
#define OUT_OFF LEDGER_SIZE
#define OUT_SIZE DPM_OUTBOX_MIN_REGION /* the smallest region: about 9 tuple reports a bank */
#define MEM (OUT_OFF + OUT_SIZE + 32u)
#define NCAMP 3u /* needs DPM_LEDGER_MAX_CAMPAIGNS >= 3: the scenario tests skip otherwise */
#define REJECT_CAMPAIGN 3u /* the collector never accepts this campaign */
#define BUDGET (2 * EPS1 + EPS1 / 2)
#define STEPS 36u
#define PERIOD_STEPS 9u
#define MAX_MADE 64u
#define ANCHOR_OFF (OUT_OFF + OUT_SIZE) /* the ledger's anchor, after both regions */

/* How the armed storage operation fails. */
typedef struct {
    fake_fail_t mode;
    fake_torn_t torn;
    uint32_t seed;
} fault_t;

static void arm(fake_storage_t *fs, uint64_t at, const fault_t *f)
{
    fake_storage_arm(fs, at, f->mode, f->torn);
    fs->seed = f->seed;
}

static dpm_status_t open_ledger(dpm_ledger_t *l, const dpm_storage_t *st)
{
    return dpm_ledger_open_anchored(l, st, LEDGER_OFF, LEDGER_SIZE, st, ANCHOR_OFF);
}

typedef struct {
    uint8_t id[DPM_REPORT_ID_BYTES];
    uint32_t campaign, period;
    dpm_eps_t eps;
    int put_ok;
} made_t;

typedef struct {
    /* the device: storage persists across reboots, the rest is RAM */
    uint8_t mem[MEM];
    fake_storage_t fs;
    dpm_storage_t st;
    dpm_ledger_t ledger;
    dpm_outbox_t ob;
    dpm_upload_t up;
    test_rng_t trng;
    dpm_rng_t rng;
    dpm_rand_t rand;
    fake_clock_t fclk;
    dpm_clock_t clk;
    uint8_t work[1024];
    /* the world */
    fake_collector_t fc;
    dpm_transport_t tr;
    /* the oracle (the test's knowledge, survives reboots) */
    made_t made[MAX_MADE];
    size_t nmade;
    uint32_t reboots, puts_ok, refused_budget, skipped_full, deferred, failures, compactions;
    uint32_t copy_puts;    /* puts that ran a step of the compaction in steps */
    uint32_t copy_removes; /* flushes that removed delivered reports while it ran (mirrored) */
    uint64_t second_after;
    int second_armed;
    fault_t fault;
} world_t;

static const fc_action_t script[] = {
    FC_OK, FC_503,     FC_DROP_AFTER_STORE, FC_OK,      FC_TIMEOUT,   FC_EMPTY_200, FC_DROP_BEFORE,
    FC_OK, FC_BAD_400, FC_CLOSE_OK,         FC_CHUNKED, FC_SHORT_200, FC_OK,        FC_GARBAGE_200,
    FC_503};

static const dpm_upload_config_t upload_cfg = {
    "collector.example:8443", "/v1/reports", 4, 200, 500, 100, 1600, NULL};

static void boot(world_t *w)
{
    dpm_status_t st = open_ledger(&w->ledger, &w->st);
    if (st != DPM_OK) {
        fail_msg("ledger open after reboot %u: %d", w->reboots, st);
    }
    st = dpm_outbox_open(&w->ob, &w->st, OUT_OFF, OUT_SIZE);
    if (st != DPM_OK) {
        fail_msg("outbox open after reboot %u: %d", w->reboots, st);
    }
    assert_int_equal(dpm_upload_init(&w->up, &upload_cfg), DPM_OK);
    assert_int_equal(dpm_rand_init(&w->rand, &w->rng), DPM_OK);
    fake_collector_reconnect(&w->fc); /* a new boot opens a new connection */
}

/* Power comes back; recovery may itself crash (second fault), then boot again. */
static void reboot(world_t *w)
{
    for (;;) {
        fake_storage_reboot(&w->fs);
        w->reboots++;
        if (w->second_after != 0 && !w->second_armed) {
            arm(&w->fs, w->fs.ops + w->second_after, &w->fault);
            w->second_armed = 1;
        }
        if (open_ledger(&w->ledger, &w->st) == DPM_OK &&
            dpm_outbox_open(&w->ob, &w->st, OUT_OFF, OUT_SIZE) == DPM_OK) {
            break;
        }
        if (!w->fs.crashed) {
            boot(w); /* fails the test with the status */
        }
    }
    assert_int_equal(dpm_upload_init(&w->up, &upload_cfg), DPM_OK);
    assert_int_equal(dpm_rand_init(&w->rand, &w->rng), DPM_OK);
    fake_collector_reconnect(&w->fc);
}

static made_t *find_made(world_t *w, const uint8_t *id)
{
    for (size_t i = 0; i < w->nmade; i++) {
        if (memcmp(w->made[i].id, id, DPM_REPORT_ID_BYTES) == 0) {
            return &w->made[i];
        }
    }
    return NULL;
}

static void check_invariants(world_t *w, uint32_t step)
{
    /* the outbox: unique ids, every one a report the app made */
    uint8_t ids[32][DPM_REPORT_ID_BYTES];
    size_t n = pending_ids(&w->ob, ids, 32);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(find_made(w, ids[i]));
    }
    /* the ledger: never under the ε of the reports that exist, never over budget */
    uint32_t period = step / PERIOD_STEPS;
    for (uint32_t c = 1; c <= NCAMP; c++) {
        dpm_eps_t made = 0;
        for (size_t i = 0; i < w->nmade; i++) {
            if (w->made[i].campaign == c && w->made[i].period == period) {
                made += w->made[i].eps;
            }
        }
        assert_true(made <= BUDGET);
        dpm_eps_t spent = 0;
        dpm_status_t st = dpm_ledger_spent(&w->ledger, c, period, &spent);
        if (st != DPM_OK || spent < made) {
            fail_msg("step %u campaign %u: ledger %d/%u < made %u (UNDER-COUNT)", step, c, st,
                     spent, made);
        }
    }
    if (w->fc.fatal) {
        fail_msg("collector: %s", w->fc.why);
    }
}

/* The app measures something and reports it: room check, charge, perturb, put. */
static void app_report(world_t *w, uint32_t campaign, uint32_t period)
{
    uint8_t rep[DPM_REPORT_MAX_BYTES], id[DPM_REPORT_ID_BYTES];
    if (!dpm_outbox_room(&w->ob, 40)) {
        w->skipped_full++;
        return;
    }
    dpm_status_t st = dpm_ledger_charge(&w->ledger, campaign, period, EPS1, BUDGET);
    if (st == DPM_ERR_BUDGET) {
        w->refused_budget++;
        return;
    }
    if (st != DPM_OK) {
        assert_true(w->fs.crashed);
        reboot(w);
        return;
    }
    size_t len = make_report(&w->rand, campaign, period, EPS1, rep, id);
    assert_true(w->nmade < MAX_MADE);
    made_t *m = &w->made[w->nmade++];
    memcpy(m->id, id, DPM_REPORT_ID_BYTES);
    m->campaign = campaign;
    m->period = period;
    m->eps = EPS1;
    m->put_ok = 0;
    uint32_t seq = w->ob.seq;
    int copying = w->ob.copying;
    st = dpm_outbox_put(&w->ob, rep, len);
    if (st == DPM_OK) {
        m->put_ok = 1;
        w->puts_ok++;
        w->compactions += w->ob.seq != seq;
        w->copy_puts += (uint32_t)(copying || w->ob.copying);
    } else {
        assert_true(w->fs.crashed); /* room was checked: only a crash can stop a put */
        reboot(w);
    }
}

static void app_flush(world_t *w)
{
    if (w->fclk.now < dpm_upload_next_attempt_ms(&w->up)) {
        dpm_upload_result_t res;
        assert_int_equal(dpm_upload_flush(&w->up, &w->ob, &w->tr, &w->clk, &w->rand, w->work,
                                          sizeof(w->work), &res),
                         DPM_OK);
        assert_true(res.deferred);
        w->deferred++;
        w->fclk.now = dpm_upload_next_attempt_ms(&w->up); /* the app sleeps until then */
    }
    dpm_upload_result_t res;
    uint32_t pending = w->ob.pending;
    int copying = w->ob.copying;
    dpm_status_t st =
        dpm_upload_flush(&w->up, &w->ob, &w->tr, &w->clk, &w->rand, w->work, sizeof(w->work), &res);
    w->copy_removes += (uint32_t)(copying && w->ob.pending < pending);
    if (w->fs.crashed) {
        reboot(w);
        return;
    }
    if (st != DPM_OK) {
        w->failures++;
        assert_true(st == DPM_ERR_TRANSPORT || st == DPM_ERR_TIMEOUT || st == DPM_ERR_PROTOCOL);
        assert_true(dpm_upload_next_attempt_ms(&w->up) > 0);
    }
    if (res.reconnect) {
        fake_collector_reconnect(&w->fc);
    }
}

static void world_run(world_t *w, uint64_t fail_at, const fault_t *fault, uint64_t second_after)
{
    memset(w, 0, sizeof(*w));
    fake_storage_init(&w->fs, w->mem, MEM, 1);
    w->st = fake_storage_port(&w->fs);
    test_rng_seed(&w->trng, 42);
    w->rng = test_rng_port(&w->trng);
    w->fclk.now = 1000;
    w->fclk.step = 7;
    w->clk = fake_clock_port(&w->fclk);
    fake_collector_init(&w->fc, upload_cfg.host, upload_cfg.path);
    w->fc.script = script;
    w->fc.script_len = ARRAY_LEN(script);
    w->fc.cycle = 1;
    w->fc.reject_campaign = REJECT_CAMPAIGN;
    w->fc.recv_max = 13; /* responses arrive in pieces */
    w->tr = fake_collector_port(&w->fc);
    w->second_after = second_after;
    w->fault = *fault;
    arm(&w->fs, fail_at, fault);

    if (open_ledger(&w->ledger, &w->st) != DPM_OK ||
        dpm_outbox_open(&w->ob, &w->st, OUT_OFF, OUT_SIZE) != DPM_OK) {
        assert_true(w->fs.crashed);
        reboot(w);
    } else {
        assert_int_equal(dpm_upload_init(&w->up, &upload_cfg), DPM_OK);
        assert_int_equal(dpm_rand_init(&w->rand, &w->rng), DPM_OK);
    }
    for (uint32_t step = 0; step < STEPS; step++) {
        app_report(w, 1 + step % NCAMP, step / PERIOD_STEPS);
        check_invariants(w, step);
        if (step % 2 == 1) {
            app_flush(w);
            check_invariants(w, step);
        }
    }
    /* The network heals: flush until the outbox is empty. */
    w->fc.script_len = 0;
    w->fc.cycle = 0;
    w->fc.after = FC_OK;
    for (int i = 0; i < 50 && dpm_outbox_pending(&w->ob) > 0; i++) {
        app_flush(w);
    }
    if (w->fs.crashed) {
        reboot(w);
    }
    check_invariants(w, STEPS - 1);

    /* Nothing lost: every report whose put returned DPM_OK reached the collector (or was
     * rejected by it, for the never-acceptable campaign); nothing left behind. */
    assert_int_equal(dpm_outbox_pending(&w->ob), 0);
    for (size_t i = 0; i < w->nmade; i++) {
        const made_t *m = &w->made[i];
        const fc_report_t *s = fake_collector_find(&w->fc, m->id);
        if (m->campaign == REJECT_CAMPAIGN) {
            assert_null(s);
            if (m->put_ok && !fake_collector_was_rejected(&w->fc, m->id)) {
                fail_msg("a stored report of the rejected campaign never reached the collector");
            }
        } else if (m->put_ok && s == NULL) {
            fail_msg("report %zu: put returned DPM_OK but it was never delivered (LOST)", i);
        }
        if (s != NULL) {
            assert_int_equal(s->campaign, m->campaign);
            assert_int_equal(s->period, m->period);
        }
    }
    /* Nothing invented, nothing stored twice (the collector de-duplicates by id, and checks
     * that every re-sent copy carried the same bytes). */
    for (size_t i = 0; i < w->fc.nstored; i++) {
        assert_non_null(find_made(w, w->fc.stored[i].id));
        for (size_t j = 0; j < i; j++) {
            assert_memory_not_equal(w->fc.stored[i].id, w->fc.stored[j].id, DPM_REPORT_ID_BYTES);
        }
    }
    if (w->fc.fatal) {
        fail_msg("collector: %s", w->fc.why);
    }
    /* A power loss is never a loss: nothing counted, nothing reported. */
    dpm_outbox_stats_t stats;
    assert_int_equal(dpm_outbox_stats(&w->ob, &stats), DPM_OK);
    assert_int_equal(stats.lost, 0);
    assert_int_equal(w->fc.lost_seen, 0);
}

static const fault_t no_fault = {FAKE_NONE, FAKE_TORN_ONE, 0};

static void test_device_without_faults(void **state)
{
    (void)state;
    if (DPM_LEDGER_MAX_CAMPAIGNS < NCAMP) {
        print_message("# not run: needs DPM_LEDGER_MAX_CAMPAIGNS >= %u\n", NCAMP);
        skip(); /* a skip, never a pass */
    }
    static world_t w;
    world_run(&w, 0, &no_fault, 0);
    /* the scenario exercises what it claims to */
    assert_int_equal(w.reboots, 0);
    assert_true(w.puts_ok >= 20);
    assert_true(w.refused_budget > 0); /* the budget bites */
    assert_true(w.compactions > 0);    /* the outbox wraps */
    assert_true(w.copy_puts > 0);      /* in steps */
    assert_true(w.copy_removes > 0);   /* with removals mirrored into the half-copied bank */
    assert_true(w.fc.nrejected > 0);   /* 400 with rejects */
    assert_true(w.fc.duplicates > 0);  /* retries of stored reports */
    assert_true(w.deferred > 0);       /* backoff held the app back */
    assert_true(w.failures >= 8);      /* 503, drops, timeout, chunked, 400, empty/short/bad 200 */
    assert_true(w.fc.nstored >= 10);
    print_message("# fault-free run: %llu storage ops, %u reports stored, %u refused by budget, "
                  "%u compactions (%u puts copying, %u flushes removing meanwhile), %llu "
                  "requests, %llu duplicate arrivals, %zu rejected\n",
                  (unsigned long long)w.fs.ops, w.puts_ok, w.refused_budget, w.compactions,
                  w.copy_puts, w.copy_removes,
                  (unsigned long long)w.fc.requests, (unsigned long long)w.fc.duplicates,
                  w.fc.nrejected);
}

static void test_device_fault_matrix(void **state)
{
    (void)state;
    if (DPM_LEDGER_MAX_CAMPAIGNS < NCAMP) {
        print_message("# not run: needs DPM_LEDGER_MAX_CAMPAIGNS >= %u\n", NCAMP);
        skip(); /* a skip, never a pass */
    }
    static world_t w;
    world_run(&w, 0, &no_fault, 0);
    const uint64_t total = w.fs.ops;
    const fault_t kinds[] = {
        {FAKE_NOT_APPLIED, FAKE_TORN_ONE, 0}, {FAKE_TORN, FAKE_TORN_ONE, 0},
        {FAKE_TORN, FAKE_TORN_HALF, 0},       {FAKE_TORN, FAKE_TORN_ALL_BUT_ONE, 0},
        {FAKE_TORN, FAKE_TORN_MIX, 1},        {FAKE_TORN, FAKE_TORN_MIX, 2}};
    const uint64_t seconds[] = {0, 1, 2, 5};
    uint32_t runs = 0;
    uint64_t reboots = 0, lost_puts = 0;
    for (size_t s = 0; s < ARRAY_LEN(seconds); s++) {
        for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
            for (uint64_t n = 1; n <= total; n++) {
                world_run(&w, n, &kinds[k], seconds[s]);
                runs++;
                reboots += w.reboots;
                lost_puts += w.nmade - w.puts_ok;
                assert_true(w.reboots >= 1);
            }
        }
    }
    print_message("# device fault matrix: %llu storage ops x 6 failure kinds (not applied, torn "
                  "1 byte/half/all but one, 2 mixes of old and new bytes) x {1 crash, 2nd crash "
                  "+1/+2/+5 ops after recovery}: %u runs, %llu reboots, %llu reports whose put "
                  "failed (never acknowledged); none lost, none duplicated, no under-count, no "
                  "loss counted\n",
                  (unsigned long long)total, runs, (unsigned long long)reboots,
                  (unsigned long long)lost_puts);
    test_figure("fault_matrix.operations", (double)total, "operations");
    test_figure("fault_matrix.runs", runs, "runs");
    test_figure("fault_matrix.reboots", (double)reboots, "reboots");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outbox_layout_and_roundtrip),
        cmocka_unit_test(test_outbox_rejects_bad_input),
        cmocka_unit_test(test_outbox_compaction_and_full),
        cmocka_unit_test(test_outbox_torn_tail_recovery),
        cmocka_unit_test(test_outbox_transient_storage_errors),
        cmocka_unit_test(test_outbox_fresh_corrupt_and_format),
        cmocka_unit_test(test_outbox_anchor_counts_an_erased_region),
        cmocka_unit_test(test_device_without_faults),
        cmocka_unit_test(test_device_fault_matrix),
    };
    return cmocka_run_group_tests_name("outbox_faults", tests, NULL, NULL);
}
