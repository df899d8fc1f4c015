/* SPDX-License-Identifier: Apache-2.0 */
/* The privacy ledger: budget and period rules, persistence, the mirrored A/B slots, the
 * anchor, corruption failing closed, and two kinds of fault injection:
 *  - damage at rest: after each charge of a history, every bit flipped and every byte set to
 *    0x00 and 0xFF, each slot and the whole region erased, then reopen and try to spend again
 *    (never DPM_OK beyond the budget), with a negative control (the old layout, whose other
 *    slot holds the previous record, must be caught re-spending);
 *  - power loss: every write/erase of a scenario fails (not applied, torn at every prefix
 *    length, a mix of old and new bytes, garbage), then the device reboots: no completed
 *    charge is ever lost (no under-count). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/persist.h"
#include "dpm/budget.h"
#include "fake_storage.h"

#define EPS1 ((dpm_eps_t)65536) /* ε = 1 */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* Slots a little larger than a full record, so that a record with one campaign too many
 * still fits (for the impossible-values test); sizes follow DPM_LEDGER_MAX_CAMPAIGNS. */
#define SLOT (DPM_LEDGER_RECORD_MAX + 24u)
#define REG_OFF 16u   /* the region does not start at 0: offsets are honoured */
#define ANCHOR_OFF 0u /* the anchor, before the region in the same storage */
#define REG_SIZE (2u * SLOT)
#define MEM_SIZE (REG_OFF + REG_SIZE + 112u)
/* Tests that track several campaigns at once skip themselves in a smaller configuration. */
#define NEED_CAMPAIGNS(n)                                                                          \
    do {                                                                                           \
        if (DPM_LEDGER_MAX_CAMPAIGNS < (n)) {                                                      \
            print_message("# not run: needs DPM_LEDGER_MAX_CAMPAIGNS >= %d\n", (n));               \
            skip(); /* a skip, never a pass */                                                     \
        }                                                                                          \
    } while (0)

typedef struct {
    uint8_t mem[MEM_SIZE];
    fake_storage_t fs;
    dpm_storage_t st;
    dpm_ledger_t l;
    fake_op_t *log; /* kept across rig_init: the storage logs its operations here */
    size_t log_cap;
} rig_t;

static void rig_init(rig_t *r, int flash)
{
    fake_storage_init(&r->fs, r->mem, MEM_SIZE, flash);
    r->fs.oplog = r->log;
    r->fs.oplog_cap = r->log_cap;
    r->st = fake_storage_port(&r->fs);
}

static uint8_t *slot_mem(rig_t *r, uint32_t slot)
{
    return r->mem + REG_OFF + slot * SLOT;
}

static dpm_eps_t spent(rig_t *r, uint32_t c, uint32_t p)
{
    dpm_eps_t s = 0xDEADBEEF;
    assert_int_equal(dpm_ledger_spent(&r->l, c, p, &s), DPM_OK);
    return s;
}

/* A record encoded by the test itself, following the layout documented in dpm/budget.h. */
typedef struct {
    uint32_t id, period, spent;
} entry_t;

static size_t make_record(uint8_t *buf, uint32_t version, uint32_t seq, const entry_t *e,
                          uint32_t n, uint16_t reserved)
{
    dpm_put_le32(buf, 0x474C5044u);
    buf[4] = (uint8_t)version;
    buf[5] = (uint8_t)n;
    dpm_put_le16(buf + 6, reserved);
    dpm_put_le32(buf + 8, seq);
    for (uint32_t i = 0; i < n; i++) {
        dpm_put_le32(buf + 12 + 12 * i, e[i].id);
        dpm_put_le32(buf + 16 + 12 * i, e[i].period);
        dpm_put_le32(buf + 20 + 12 * i, e[i].spent);
    }
    size_t len = 12 + 12 * (size_t)n;
    dpm_put_le32(buf + len, dpm_crc32(0, buf, len));
    return len + 4;
}

static void put_slot(rig_t *r, uint32_t slot, const uint8_t *rec, size_t len)
{
    memset(slot_mem(r, slot), 0xFF, SLOT);
    memcpy(slot_mem(r, slot), rec, len);
}

/* ---- behaviour ------------------------------------------------------------------------- */

static void test_crc32_reference(void **state)
{
    (void)state;
    assert_int_equal(dpm_crc32(0, (const uint8_t *)"123456789", 9), 0xCBF43926u);
    /* continuing over pieces gives the same result */
    uint32_t c = dpm_crc32(0, (const uint8_t *)"1234", 4);
    assert_int_equal(dpm_crc32(c, (const uint8_t *)"56789", 5), 0xCBF43926u);
}

static void test_fresh_region_becomes_empty_ledger(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    /* both slots now hold an empty record (magic "DPLG", version 1, n = 0, seq 1), the rest of
     * each slot erased */
    const uint8_t magic[] = {0x44, 0x50, 0x4C, 0x47, 1, 0, 0, 0, 1, 0, 0, 0};
    for (uint32_t s = 0; s < 2; s++) {
        assert_memory_equal(slot_mem(&r, s), magic, sizeof(magic));
        assert_int_equal(dpm_get_le32(slot_mem(&r, s) + 12), dpm_crc32(0, slot_mem(&r, s), 12));
        for (uint32_t i = 16; i < SLOT; i++) {
            assert_int_equal(slot_mem(&r, s)[i], 0xFF);
        }
    }
    /* nothing outside the region was touched */
    for (uint32_t i = 0; i < REG_OFF; i++) {
        assert_int_equal(r.mem[i], 0xFF);
    }
    for (uint32_t i = REG_OFF + REG_SIZE; i < MEM_SIZE; i++) {
        assert_int_equal(r.mem[i], 0xFF);
    }
    assert_int_equal(spent(&r, 7, 0), 0);
    /* opening again does not write */
    uint64_t ops = r.fs.ops;
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(r.fs.ops, ops);
}

static void test_budget_and_periods(void **state)
{
    (void)state;
    NEED_CAMPAIGNS(3);
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    const dpm_eps_t budget = 2 * EPS1 + EPS1 / 2; /* 2.5 */
    assert_int_equal(dpm_ledger_charge(&r.l, 7, 3, EPS1, budget), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 7, 3, EPS1, budget), DPM_OK);
    assert_int_equal(spent(&r, 7, 3), 2 * EPS1);
    /* 3.0 > 2.5: refused, nothing written */
    uint64_t ops = r.fs.ops;
    assert_int_equal(dpm_ledger_charge(&r.l, 7, 3, EPS1, budget), DPM_ERR_BUDGET);
    assert_int_equal(r.fs.ops, ops);
    /* exactly to the budget is allowed */
    assert_int_equal(dpm_ledger_charge(&r.l, 7, 3, EPS1 / 2, budget), DPM_OK);
    assert_int_equal(spent(&r, 7, 3), budget);
    assert_int_equal(dpm_ledger_charge(&r.l, 7, 3, 1, budget), DPM_ERR_BUDGET);
    /* one report above the whole budget is never allowed */
    assert_int_equal(dpm_ledger_charge(&r.l, 8, 0, 3 * EPS1, budget), DPM_ERR_BUDGET);
    /* a later period starts again from zero; the next one after that too */
    assert_int_equal(spent(&r, 7, 4), 0);
    assert_int_equal(dpm_ledger_charge(&r.l, 7, 5, EPS1, budget), DPM_OK);
    assert_int_equal(spent(&r, 7, 5), EPS1);
    /* the closed periods are refused: their budget cannot be spent again */
    assert_int_equal(dpm_ledger_charge(&r.l, 7, 3, EPS1, budget), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_charge(&r.l, 7, 4, EPS1, budget), DPM_ERR_PARAM);
    dpm_eps_t s = 123;
    assert_int_equal(dpm_ledger_spent(&r.l, 7, 4, &s), DPM_ERR_PARAM);
    assert_int_equal(s, 123);
    /* campaigns are independent */
    assert_int_equal(dpm_ledger_charge(&r.l, 9, 1, 2 * EPS1, budget), DPM_OK);
    assert_int_equal(spent(&r, 7, 5), EPS1);
    assert_int_equal(spent(&r, 9, 1), 2 * EPS1);
    /* the largest values do not overflow */
    assert_int_equal(dpm_ledger_charge(&r.l, 10, 0, UINT32_MAX - 1, UINT32_MAX), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 10, 0, 2, UINT32_MAX), DPM_ERR_BUDGET);
    assert_int_equal(dpm_ledger_charge(&r.l, 10, 0, 1, UINT32_MAX), DPM_OK);
    assert_int_equal(spent(&r, 10, 0), UINT32_MAX);
}

static void test_persists_mirrored(void **state)
{
    (void)state;
    NEED_CAMPAIGNS(3);
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    for (uint32_t i = 0; i < 9; i++) {
        uint64_t ops = r.fs.ops;
        assert_int_equal(dpm_ledger_charge(&r.l, 1 + i % 3, 0, EPS1, 10 * EPS1), DPM_OK);
        /* two erases and two writes: after every charge both slots hold record seq i + 2 */
        assert_int_equal(r.fs.ops - ops, 4);
        assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 8), i + 2);
        assert_memory_equal(slot_mem(&r, 0), slot_mem(&r, 1), SLOT);
        assert_int_equal(r.l.seq, i + 2);
    }
    dpm_ledger_t again;
    assert_int_equal(dpm_ledger_open(&again, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    r.l = again;
    assert_int_equal(spent(&r, 1, 0), 3 * EPS1);
    assert_int_equal(spent(&r, 2, 0), 3 * EPS1);
    assert_int_equal(spent(&r, 3, 0), 3 * EPS1);
    assert_int_equal(r.l.seq, 10);
}

static void test_campaign_capacity(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 0);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    for (uint32_t c = 0; c < DPM_LEDGER_MAX_CAMPAIGNS; c++) {
        assert_int_equal(dpm_ledger_charge(&r.l, 100 + c, 0, EPS1, 4 * EPS1), DPM_OK);
    }
    assert_int_equal(dpm_ledger_charge(&r.l, 999, 0, EPS1, 4 * EPS1), DPM_ERR_BUFFER);
    assert_int_equal(spent(&r, 999, 0), 0);
    /* the tracked ones go on */
    assert_int_equal(dpm_ledger_charge(&r.l, 100, 1, EPS1, 4 * EPS1), DPM_OK);
    assert_int_equal(spent(&r, 100, 1), EPS1);
}

static void test_bad_arguments_leave_state(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 0);
    dpm_ledger_t l;
    memset(&l, 0x5A, sizeof(l));
    dpm_ledger_t keep = l;
    assert_int_equal(dpm_ledger_open(NULL, &r.st, REG_OFF, REG_SIZE), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_open(&l, NULL, REG_OFF, REG_SIZE), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, DPM_LEDGER_MIN_REGION - 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_open(&l, &r.st, MEM_SIZE - REG_SIZE + 1, REG_SIZE), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_open(&l, &r.st, UINT32_MAX - 10, REG_SIZE), DPM_ERR_PARAM);
    dpm_storage_t no_erase = r.st;
    no_erase.erase = NULL;
    assert_int_equal(dpm_ledger_open(&l, &no_erase, REG_OFF, REG_SIZE), DPM_ERR_PARAM);
    assert_memory_equal(&l, &keep, sizeof(l));
    /* a storage that cannot be read: DPM_ERR_STORAGE, nothing bound */
    r.fs.fail_reads = 1;
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, REG_SIZE), DPM_ERR_STORAGE);
    assert_memory_equal(&l, &keep, sizeof(l));
    r.fs.fail_reads = 0;
    /* an unopened or zeroed ledger is refused, not used */
    dpm_ledger_t z;
    memset(&z, 0, sizeof(z));
    dpm_eps_t s = 0;
    assert_int_equal(dpm_ledger_charge(&z, 1, 0, EPS1, EPS1), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_spent(&z, 1, 0, &s), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_reset(&z), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_charge(NULL, 1, 0, EPS1, EPS1), DPM_ERR_PARAM);
    /* zero ε or zero budget */
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    uint64_t ops = r.fs.ops;
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, 0, EPS1), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_spent(&r.l, 1, 0, NULL), DPM_ERR_PARAM);
    assert_int_equal(r.fs.ops, ops);
}

static void test_storage_failure_is_no_charge(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 3 * EPS1), DPM_OK);
    dpm_ledger_t keep = r.l;
    r.fs.fail_writes = 1; /* writes and erases fail without a crash */
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 3 * EPS1), DPM_ERR_STORAGE);
    assert_memory_equal(&r.l, &keep, sizeof(keep));
    r.fs.fail_writes = 0;
    assert_int_equal(spent(&r, 1, 0), EPS1);
    /* reads failing: the charge fails before anything is written */
    r.fs.fail_reads = 1;
    uint64_t ops = r.fs.ops;
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 3 * EPS1), DPM_ERR_STORAGE);
    assert_int_equal(r.fs.ops, ops);
    r.fs.fail_reads = 0;
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 3 * EPS1), DPM_OK);
    assert_int_equal(spent(&r, 1, 0), 2 * EPS1);
}

static int lying_erase(void *ctx, uint32_t off, size_t len)
{
    (void)ctx;
    (void)off;
    (void)len;
    return 0; /* claims success, erases nothing */
}

static void test_readback_catches_lying_storage(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK);
    dpm_storage_t lying = r.st;
    lying.erase = lying_erase;
    dpm_ledger_t l;
    assert_int_equal(dpm_ledger_open(&l, &lying, REG_OFF, REG_SIZE), DPM_OK);
    /* the first slot is not erased, so the flash write cannot produce the record: read-back
     * says so */
    assert_int_equal(dpm_ledger_charge(&l, 1, 0, EPS1, 9 * EPS1), DPM_ERR_STORAGE);
    /* the honest port still sees the last good total (the garbage is a torn copy) */
    assert_int_equal(spent(&r, 1, 0), 2 * EPS1);
}

static void test_corruption_fails_closed_until_reset(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 0);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK); /* seq 3 twice */
    /* damage to either copy: the other is used, and open rewrites the damaged one */
    for (uint32_t s = 0; s < 2; s++) {
        slot_mem(&r, s)[13] ^= 0x01;
        assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
        assert_int_equal(spent(&r, 1, 0), 2 * EPS1);
        assert_memory_equal(slot_mem(&r, 0), slot_mem(&r, 1), SLOT);
    }
    /* damage found by a charge after open: the charge uses the good copy and rewrites both */
    slot_mem(&r, 0)[20] ^= 0x10;
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK);
    assert_int_equal(spent(&r, 1, 0), 3 * EPS1);
    assert_memory_equal(slot_mem(&r, 0), slot_mem(&r, 1), SLOT);
    /* damage to both: fail closed, at open and for every charge */
    slot_mem(&r, 1)[13] ^= 0x01;
    slot_mem(&r, 0)[13] ^= 0x01;
    dpm_ledger_t l;
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, REG_SIZE), DPM_ERR_CORRUPT);
    uint64_t ops = r.fs.ops;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dpm_ledger_charge(&l, 1, 0, EPS1, 9 * EPS1), DPM_ERR_CORRUPT);
        assert_int_equal(dpm_ledger_charge(&l, 2, 7, EPS1, 9 * EPS1), DPM_ERR_CORRUPT);
    }
    dpm_eps_t s = 0;
    assert_int_equal(dpm_ledger_spent(&l, 1, 0, &s), DPM_ERR_CORRUPT);
    assert_int_equal(r.fs.ops, ops); /* failing closed writes nothing */
    /* the already-open ledger discovers it at its next call, and stays closed even if the
     * bytes come back (sticky until reset) */
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_ERR_CORRUPT);
    slot_mem(&r, 0)[13] ^= 0x01;
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_ERR_CORRUPT);
    slot_mem(&r, 0)[13] ^= 0x01;
    /* reset is the way out, and starts from nothing */
    assert_int_equal(dpm_ledger_reset(&l), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&l, 1, 0, EPS1, 9 * EPS1), DPM_OK);
    r.l = l;
    assert_int_equal(spent(&r, 1, 0), EPS1);
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_memory_equal(slot_mem(&r, 0), slot_mem(&r, 1), SLOT);
}

static void test_garbage_region_is_corrupt_not_fresh(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 0);
    /* some other data in the region: not a ledger, not erased */
    memset(r.mem + REG_OFF, 0x00, REG_SIZE);
    dpm_ledger_t l;
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, REG_SIZE), DPM_ERR_CORRUPT);
    assert_int_equal(dpm_ledger_charge(&l, 1, 0, EPS1, EPS1), DPM_ERR_CORRUPT);
    /* A erased, B garbage: also corrupt (the interrupted-init shape is the other way round) */
    memset(slot_mem(&r, 0), 0xFF, SLOT);
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, REG_SIZE), DPM_ERR_CORRUPT);
    /* A garbage, B erased: an interrupted initialisation, initialised again */
    memset(slot_mem(&r, 0), 0x00, 7);
    memset(slot_mem(&r, 0) + 7, 0xFF, SLOT - 7);
    memset(slot_mem(&r, 1), 0xFF, SLOT);
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    r.l = l;
    assert_int_equal(spent(&r, 1, 0), 0);
}

static void test_impossible_values_fail_closed(void **state)
{
    (void)state;
    static rig_t r;
    uint8_t good[SLOT], bad[SLOT];
    entry_t e[DPM_LEDGER_MAX_CAMPAIGNS + 1];
    for (uint32_t i = 0; i <= DPM_LEDGER_MAX_CAMPAIGNS; i++) {
        e[i].id = 10 + i;
        e[i].period = 1;
        e[i].spent = EPS1;
    }
    size_t glen = make_record(good, 1, 5, e, 1, 0);
    struct {
        const char *what;
        size_t len;
    } cases[8];
    size_t ncases = 0;
    uint8_t recs[8][SLOT];
    /* CRC-valid records with impossible content, each the NEWER slot (seq 6) */
    cases[ncases].what = "more campaigns than DPM_LEDGER_MAX_CAMPAIGNS";
    assert_true(16 + 12 * (DPM_LEDGER_MAX_CAMPAIGNS + 1) <= SLOT);
    cases[ncases].len = make_record(recs[ncases], 1, 6, e, DPM_LEDGER_MAX_CAMPAIGNS + 1, 0);
    ncases++;
    entry_t dup[2] = {{10, 1, EPS1}, {10, 2, EPS1}};
    if (DPM_LEDGER_MAX_CAMPAIGNS >= 2) {
        cases[ncases].what = "a campaign twice";
        cases[ncases].len = make_record(recs[ncases], 1, 6, dup, 2, 0);
        ncases++;
    }
    entry_t zero[1] = {{10, 1, 0}};
    cases[ncases].what = "an entry that spent nothing";
    cases[ncases].len = make_record(recs[ncases], 1, 6, zero, 1, 0);
    ncases++;
    cases[ncases].what = "reserved bytes set";
    cases[ncases].len = make_record(recs[ncases], 1, 6, e, 1, 0x0100);
    ncases++;
    cases[ncases].what = "an unknown version";
    cases[ncases].len = make_record(recs[ncases], 2, 6, e, 1, 0);
    ncases++;
    cases[ncases].what = "non-consecutive sequence numbers";
    cases[ncases].len = make_record(recs[ncases], 1, 9, e, 1, 0);
    ncases++;
    entry_t other[1] = {{10, 1, 2 * EPS1}};
    cases[ncases].what = "equal sequence numbers, different content";
    cases[ncases].len = make_record(recs[ncases], 1, 5, other, 1, 0);
    ncases++;
    for (size_t c = 0; c < ncases; c++) {
        rig_init(&r, 0);
        put_slot(&r, 0, good, glen);
        memcpy(bad, recs[c], cases[c].len);
        put_slot(&r, 1, bad, cases[c].len);
        dpm_ledger_t l;
        dpm_status_t st = dpm_ledger_open(&l, &r.st, REG_OFF, REG_SIZE);
        if (st != DPM_ERR_CORRUPT) {
            fail_msg("%s: open gave %d, not DPM_ERR_CORRUPT", cases[c].what, st);
        }
        assert_int_equal(dpm_ledger_charge(&l, 10, 1, EPS1, 9 * EPS1), DPM_ERR_CORRUPT);
    }
    /* control: the good record alone, with a copy of itself, with a damaged copy (a bad CRC,
     * whatever its version says), and with a valid consecutive partner, opens */
    rig_init(&r, 0);
    put_slot(&r, 0, good, glen);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(spent(&r, 10, 1), EPS1);
    assert_memory_equal(slot_mem(&r, 0), slot_mem(&r, 1), SLOT); /* the copy was restored */
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    size_t blen = make_record(bad, 7, 6, e, 1, 0);
    bad[blen - 1] ^= 0xFF;
    put_slot(&r, 1, bad, blen);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(spent(&r, 10, 1), EPS1);
    entry_t two[1] = {{10, 1, 2 * EPS1}};
    size_t len = make_record(bad, 1, 6, two, 1, 0);
    put_slot(&r, 1, bad, len);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(spent(&r, 10, 1), 2 * EPS1);
}

static void test_sequence_wraps(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 1);
    uint8_t rec[SLOT];
    entry_t e[1] = {{4, 2, EPS1}};
    size_t len = make_record(rec, 1, UINT32_MAX, e, 1, 0);
    put_slot(&r, 0, rec, len);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 4, 2, EPS1, 5 * EPS1), DPM_OK); /* seq 0 */
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 8), 0);
    assert_int_equal(dpm_get_le32(slot_mem(&r, 1) + 8), 0);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(spent(&r, 4, 2), 2 * EPS1);
    /* mid-charge across the wrap: seq 1 in A, seq 0 in B: the newer wins */
    entry_t e3[1] = {{4, 2, 3 * EPS1}};
    len = make_record(rec, 1, 1, e3, 1, 0);
    put_slot(&r, 0, rec, len);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(spent(&r, 4, 2), 3 * EPS1);
    assert_int_equal(dpm_ledger_charge(&r.l, 4, 2, EPS1, 5 * EPS1), DPM_OK); /* seq 2 */
    assert_int_equal(spent(&r, 4, 2), 4 * EPS1);
}

/* ---- the anchor ------------------------------------------------------------------------- */

static dpm_status_t open_anchored(rig_t *r, dpm_ledger_t *l)
{
    return dpm_ledger_open_anchored(l, &r->st, REG_OFF, REG_SIZE, &r->st, ANCHOR_OFF);
}

static void test_anchor(void **state)
{
    (void)state;
    static rig_t r;
    static uint8_t image[MEM_SIZE];
    rig_init(&r, 1);
    dpm_ledger_t l;
    memset(&l, 0x77, sizeof(l));
    dpm_ledger_t keep = l;
    /* an anchor inside the region, straddling its start, past the storage, or unwritable */
    assert_int_equal(dpm_ledger_open_anchored(&l, &r.st, REG_OFF, REG_SIZE, &r.st, REG_OFF + 4),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_open_anchored(&l, &r.st, REG_OFF, REG_SIZE, &r.st, REG_OFF - 4),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_open_anchored(&l, &r.st, REG_OFF, REG_SIZE, &r.st, MEM_SIZE - 4),
                     DPM_ERR_PARAM);
    dpm_storage_t ro = r.st;
    ro.write = NULL;
    assert_int_equal(dpm_ledger_open_anchored(&l, &r.st, REG_OFF, REG_SIZE, &ro, ANCHOR_OFF),
                     DPM_ERR_PARAM);
    assert_memory_equal(&l, &keep, sizeof(l));
    assert_int_equal(r.fs.ops, 0);

    /* a new device: the ledger is created, then the anchor is written */
    assert_int_equal(open_anchored(&r, &r.l), DPM_OK);
    assert_memory_equal(r.mem + ANCHOR_OFF, "DPLG-ANC", DPM_LEDGER_ANCHOR_BYTES);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 4, EPS1, EPS1), DPM_OK);
    uint64_t ops = r.fs.ops;
    assert_int_equal(open_anchored(&r, &r.l), DPM_OK); /* a healthy reopen writes nothing */
    assert_int_equal(r.fs.ops, ops);
    memcpy(image, r.mem, MEM_SIZE);

    /* the whole region erased by accident. Without the anchor it cannot be told from a new
     * device (the documented limit of dpm_ledger_open): the budget could be spent again */
    memset(r.mem + REG_OFF, 0xFF, REG_SIZE);
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&l, 1, 4, EPS1, EPS1), DPM_OK);
    /* with it, the same erase fails closed until the app resets */
    memset(r.mem + REG_OFF, 0xFF, REG_SIZE);
    assert_int_equal(open_anchored(&r, &l), DPM_ERR_CORRUPT);
    assert_int_equal(dpm_ledger_charge(&l, 1, 4, EPS1, EPS1), DPM_ERR_CORRUPT);
    assert_int_equal(open_anchored(&r, &l), DPM_ERR_CORRUPT); /* sticky across reboots */
    assert_int_equal(dpm_ledger_reset(&l), DPM_OK);
    assert_memory_equal(r.mem + ANCHOR_OFF, "DPLG-ANC", DPM_LEDGER_ANCHOR_BYTES);
    assert_int_equal(dpm_ledger_charge(&l, 1, 4, EPS1, EPS1), DPM_OK);
    assert_int_equal(open_anchored(&r, &l), DPM_OK);

    /* a ledger created by dpm_ledger_open gains the anchor at its first anchored open */
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, EPS1), DPM_OK);
    assert_int_equal(r.mem[ANCHOR_OFF], 0xFF);
    assert_int_equal(open_anchored(&r, &r.l), DPM_OK);
    assert_memory_equal(r.mem + ANCHOR_OFF, "DPLG-ANC", DPM_LEDGER_ANCHOR_BYTES);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, EPS1), DPM_ERR_BUDGET);

    /* an anchor holding anything but 0xFF counts as written (damage must not make a device
     * look new): an erased region then fails closed */
    rig_init(&r, 1);
    r.mem[ANCHOR_OFF + 5] = 0xFE;
    assert_int_equal(open_anchored(&r, &l), DPM_ERR_CORRUPT);

    /* the anchor may live in another storage (an OTP area, another file) */
    static rig_t other;
    rig_init(&r, 1);
    rig_init(&other, 0);
    assert_int_equal(
        dpm_ledger_open_anchored(&r.l, &r.st, REG_OFF, REG_SIZE, &other.st, MEM_SIZE - 8), DPM_OK);
    assert_memory_equal(other.mem + MEM_SIZE - 8, "DPLG-ANC", DPM_LEDGER_ANCHOR_BYTES);
    assert_int_equal(r.mem[ANCHOR_OFF], 0xFF);
}

/* ---- damage at rest --------------------------------------------------------------------- */

#define BUDGET (2 * EPS1 + EPS1 / 2)

typedef struct {
    uint32_t c, p;
    dpm_eps_t eps;
} charge_t;

/* Three campaigns; some periods spent to the budget, some closed, one partly spent. */
static const charge_t history[] = {{1, 0, EPS1}, {1, 0, EPS1}, {2, 0, EPS1},     {1, 0, EPS1 / 2},
                                   {3, 1, EPS1}, {2, 0, EPS1}, {2, 0, EPS1 / 2}, {1, 1, EPS1},
                                   {3, 1, EPS1}, {1, 1, EPS1}, {3, 2, EPS1 / 2}, {1, 1, EPS1 / 2}};
#define HLEN ARRAY_LEN(history)

/* What the ledger must know after the first k charges of the history. */
typedef struct {
    int known[4];
    uint32_t period[4];
    dpm_eps_t spent[4];
} truth_t;

static void truth_after(size_t k, truth_t *t)
{
    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < k; i++) {
        const charge_t *h = &history[i];
        if (!t->known[h->c] || h->p > t->period[h->c]) {
            t->spent[h->c] = 0;
        }
        t->known[h->c] = 1;
        t->period[h->c] = h->p;
        t->spent[h->c] += h->eps;
        assert_true(t->spent[h->c] <= BUDGET);
    }
}

/* The storage image after the first k charges (at rest: every charge returned). */
static void image_after(size_t k, uint8_t *image)
{
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(open_anchored(&r, &r.l), DPM_OK);
    for (size_t i = 0; i < k; i++) {
        assert_int_equal(
            dpm_ledger_charge(&r.l, history[i].c, history[i].p, history[i].eps, BUDGET), DPM_OK);
    }
    memcpy(image, r.mem, MEM_SIZE);
}

typedef struct {
    uint32_t cases;         /* damaged images opened */
    uint32_t exact;         /* opened, every total exactly right */
    uint32_t failed_closed; /* DPM_ERR_CORRUPT, and charges refused */
    uint32_t over;          /* opened, counting more than was spent (safe) */
    uint32_t respends;      /* opened and let a charge through beyond the budget (or into a
                               closed period): the failure this test exists to catch */
} verdict_t;

/* Open a damaged image and try to spend again what the history already spent: for every
 * campaign, one unit in each closed period, and budget - spent + 1 in its current period.
 * Any DPM_OK is a re-spend. */
static void attack(rig_t *r, const truth_t *t, int anchored, verdict_t *v)
{
    dpm_ledger_t l;
    dpm_status_t st =
        anchored ? open_anchored(r, &l) : dpm_ledger_open(&l, &r->st, REG_OFF, REG_SIZE);
    v->cases++;
    if (st == DPM_ERR_CORRUPT) {
        assert_int_equal(dpm_ledger_charge(&l, 1, 0, 1, BUDGET), DPM_ERR_CORRUPT);
        v->failed_closed++;
        return;
    }
    if (st != DPM_OK) {
        fail_msg("open of a damaged image gave %d", st);
    }
    int exact = 1, respent = 0;
    for (uint32_t c = 1; c <= 3; c++) {
        if (!t->known[c]) {
            continue;
        }
        dpm_eps_t s = 0;
        if (dpm_ledger_spent(&l, c, t->period[c], &s) != DPM_OK || s != t->spent[c]) {
            exact = 0;
        }
        for (uint32_t q = 0; q < t->period[c]; q++) {
            respent |= dpm_ledger_charge(&l, c, q, 1, BUDGET) == DPM_OK;
        }
        respent |=
            dpm_ledger_charge(&l, c, t->period[c], BUDGET - t->spent[c] + 1, BUDGET) == DPM_OK;
    }
    if (respent) {
        v->respends++;
    } else if (exact) {
        v->exact++;
    } else {
        v->over++;
    }
}

/* Damage number d of an image; 0 when it changes nothing (then it is not a case). Bytes: the
 * anchor's and the region's, each with 8 bit flips, 0x00 and 0xFF; then whole areas. */
#define BYTE_DAMAGES 10u
#define AREA_DAMAGES 6u
#define DAMAGED_BYTES (DPM_LEDGER_ANCHOR_BYTES + REG_SIZE)
#define DAMAGES (DAMAGED_BYTES * BYTE_DAMAGES + AREA_DAMAGES)
#define DAMAGE_WHOLE_ERASE (DAMAGED_BYTES * BYTE_DAMAGES + 2u)

static int damage(uint8_t *mem, uint32_t d)
{
    if (d < DAMAGED_BYTES * BYTE_DAMAGES) {
        uint32_t i = d / BYTE_DAMAGES, kind = d % BYTE_DAMAGES;
        uint8_t *p = mem + (i < DPM_LEDGER_ANCHOR_BYTES ? ANCHOR_OFF + i
                                                        : REG_OFF + i - DPM_LEDGER_ANCHOR_BYTES);
        uint8_t old = *p;
        *p = kind < 8 ? (uint8_t)(old ^ (1u << kind)) : kind == 8 ? 0x00 : 0xFF;
        return *p != old;
    }
    static const struct {
        uint32_t off, len;
        uint8_t v;
    } areas[AREA_DAMAGES] = {{REG_OFF, SLOT, 0xFF},        {REG_OFF + SLOT, SLOT, 0xFF},
                             {REG_OFF, REG_SIZE, 0xFF},    {REG_OFF, SLOT, 0x00},
                             {REG_OFF + SLOT, SLOT, 0x00}, {REG_OFF, REG_SIZE, 0x00}};
    uint32_t a = d - DAMAGED_BYTES * BYTE_DAMAGES;
    memset(mem + areas[a].off, areas[a].v, areas[a].len);
    return 1;
}

static void damage_matrix(const uint8_t *image, const truth_t *t, int anchored, verdict_t *v)
{
    static rig_t r;
    rig_init(&r, 1);
    for (uint32_t d = 0; d < DAMAGES; d++) {
        if (!anchored && d == DAMAGE_WHOLE_ERASE) {
            continue; /* the documented limit of dpm_ledger_open (see test_anchor) */
        }
        memcpy(r.mem, image, MEM_SIZE);
        if (damage(r.mem, d)) {
            attack(&r, t, anchored, v);
        }
    }
}

static void test_damage_never_allows_respending(void **state)
{
    (void)state;
    NEED_CAMPAIGNS(3);
    static uint8_t image[MEM_SIZE];
    verdict_t v[2];
    memset(v, 0, sizeof(v));
    for (size_t k = 1; k <= HLEN; k++) {
        truth_t t;
        truth_after(k, &t);
        image_after(k, image);
        for (int anchored = 0; anchored < 2; anchored++) {
            damage_matrix(image, &t, anchored, &v[anchored]);
        }
    }
    for (int a = 0; a < 2; a++) {
        print_message("# ledger damage at rest (%s open): %u images after 1..%zu charges x "
                      "every bit flipped, every byte set to 0x00 and 0xFF, each slot and the "
                      "region erased or zeroed: %u damaged images, %u recovered exactly, %u "
                      "failed closed, %u over-counted, %u re-spent\n",
                      a ? "anchored" : "plain", (unsigned)HLEN, (size_t)HLEN, v[a].cases,
                      v[a].exact, v[a].failed_closed, v[a].over, v[a].respends);
        assert_int_equal(v[a].respends, 0);
        assert_int_equal(v[a].over, 0);
        /* a single damaged copy is always recovered, exactly */
        assert_true(v[a].exact > v[a].cases * 9 / 10);
        assert_true(v[a].failed_closed >= 2); /* both slots zeroed, the region zeroed */
    }
}

/* Negative control: the same matrix over the OLD layout, where the other slot holds the
 * previous record (the newest exists once). Damage to the newest copy makes the ledger fall
 * back to the older total, and the attack must catch the re-spend. */
static void test_damage_control_old_layout_is_caught(void **state)
{
    (void)state;
    NEED_CAMPAIGNS(3);
    static uint8_t image[MEM_SIZE], before[MEM_SIZE];
    verdict_t v;
    memset(&v, 0, sizeof(v));
    for (size_t k = 2; k <= HLEN; k++) {
        truth_t t;
        truth_after(k, &t);
        image_after(k - 1, before);
        image_after(k, image);
        memcpy(image + REG_OFF, before + REG_OFF, SLOT); /* A: record k - 1, B: record k */
        damage_matrix(image, &t, 1, &v);
    }
    print_message("# negative control (old layout: newest record in one slot only): %u "
                  "damaged images, %u re-spent (must be > 0)\n",
                  v.cases, v.respends);
    assert_true(v.respends > 0);
}

/* ---- power loss ------------------------------------------------------------------------- */

/* campaigns: 3, or fewer in a smaller configuration */
#define NC (DPM_LEDGER_MAX_CAMPAIGNS < 3 ? (uint32_t)DPM_LEDGER_MAX_CAMPAIGNS : 3u)
#define NP 4u /* periods */

typedef struct {
    fake_fail_t mode;
    fake_torn_t torn;
    uint32_t torn_len;
    uint32_t seed;
} fault_t;

static void arm(rig_t *r, uint64_t at, const fault_t *f)
{
    fake_storage_arm(&r->fs, at, f->mode, f->torn);
    r->fs.torn_len = f->torn_len;
    r->fs.seed = f->seed;
}

/* The app: what it believes, which survives reboots (it is the test's oracle). */
typedef struct {
    dpm_eps_t produced[NC + 1][NP]; /* ε of reports produced after a DPM_OK charge */
    uint32_t ok_charges;
    uint32_t reboots;
    uint32_t max_over; /* largest over-count seen (ledger - produced) */
    int anchored;
} oracle_t;

static dpm_status_t open_ledger(rig_t *r, const oracle_t *o)
{
    return o->anchored ? open_anchored(r, &r->l)
                       : dpm_ledger_open(&r->l, &r->st, REG_OFF, REG_SIZE);
}

static void reboot(rig_t *r, oracle_t *o)
{
    fake_storage_reboot(&r->fs);
    o->reboots++;
    dpm_status_t st = open_ledger(r, o);
    if (st != DPM_OK) {
        fail_msg("reopen after a crash gave %d (a single crash must never brick or corrupt)", st);
    }
}

/* Invariants after every step: the ledger never under-counts, and no (campaign, period) ever
 * got more than its budget in reports. */
static void check_invariants(rig_t *r, oracle_t *o, uint32_t step, uint32_t cur_period)
{
    for (uint32_t c = 1; c <= NC; c++) {
        for (uint32_t p = 0; p < NP; p++) {
            assert_true(o->produced[c][p] <= BUDGET);
        }
        dpm_eps_t s = 0;
        dpm_status_t st = dpm_ledger_spent(&r->l, c, cur_period, &s);
        if (st != DPM_OK) {
            fail_msg("step %u: spent() gave %d", step, st);
        }
        if (s < o->produced[c][cur_period]) {
            fail_msg("step %u: campaign %u period %u: ledger %u < produced %u (UNDER-COUNT)", step,
                     c, cur_period, s, o->produced[c][cur_period]);
        }
        if (s - o->produced[c][cur_period] > o->max_over) {
            o->max_over = s - o->produced[c][cur_period];
        }
    }
}

/* Charges for 3 campaigns over 4 periods, 4 attempts per campaign and period (the budget
 * allows 2 at ε = 1 plus one at ε = 1/2), with a look back at a closed period. */
static void scenario(rig_t *r, oracle_t *o, uint64_t fail_at, const fault_t *f,
                     uint64_t second_after, int anchored)
{
    memset(o, 0, sizeof(*o));
    o->anchored = anchored;
    rig_init(r, 1);
    arm(r, fail_at, f);
    int second_armed = 0;
    if (open_ledger(r, o) != DPM_OK) {
        assert_true(r->fs.crashed);
        reboot(r, o);
    }
    uint32_t step = 0;
    for (uint32_t p = 0; p < NP; p++) {
        for (uint32_t k = 0; k < 4; k++) {
            for (uint32_t c = 1; c <= NC; c++, step++) {
                dpm_eps_t eps = k == 3 ? EPS1 / 2 : EPS1;
                dpm_status_t st = dpm_ledger_charge(&r->l, c, p, eps, BUDGET);
                if (st == DPM_OK) {
                    o->produced[c][p] += eps; /* the app now makes the report */
                    o->ok_charges++;
                } else if (r->fs.crashed) {
                    reboot(r, o);
                    if (second_after != 0 && !second_armed) {
                        /* crash again soon after recovery */
                        arm(r, r->fs.ops + second_after, f);
                        second_armed = 1;
                    }
                } else if (st != DPM_ERR_BUDGET) {
                    fail_msg("step %u: charge gave %d", step, st);
                }
                check_invariants(r, o, step, p);
            }
            if (p > 0 && k == 1 && o->produced[1][p] > 0) {
                /* a closed period is never re-opened (and asking writes nothing) */
                uint64_t ops = r->fs.ops;
                assert_int_equal(dpm_ledger_charge(&r->l, 1, p - 1, 1, BUDGET), DPM_ERR_PARAM);
                assert_int_equal(r->fs.ops, ops);
            }
        }
    }
    if (r->fs.crashed) {
        reboot(r, o);
    }
    check_invariants(r, o, step, NP - 1);
}

static void test_fault_matrix(void **state)
{
    (void)state;
    static rig_t r;
    oracle_t o;
    const fault_t none = {FAKE_NONE, FAKE_TORN_ONE, 0, 0};
    /* The fault-free run fixes the number of operations to fail, one by one. */
    scenario(&r, &o, 0, &none, 0, 0);
    const uint64_t total = r.fs.ops;
    assert_true(total > 12 * NC);
    assert_int_equal(o.max_over, 0); /* no crash: exact */
    /* every period: 2 x 1 + 1 x 1/2 per campaign */
    assert_int_equal(o.ok_charges, NC * NP * 3);
    const fault_t kinds[] = {{FAKE_NOT_APPLIED, FAKE_TORN_ONE, 0, 0},
                             {FAKE_TORN, FAKE_TORN_ONE, 0, 0},
                             {FAKE_TORN, FAKE_TORN_HALF, 0, 0},
                             {FAKE_TORN, FAKE_TORN_ALL_BUT_ONE, 0, 0}};
    const uint64_t seconds[] = {0, 1, 2, 3};
    uint32_t runs = 0, crashes = 0, max_over = 0;
    for (size_t s = 0; s < ARRAY_LEN(seconds); s++) {
        for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
            for (uint64_t n = 1; n <= total; n++) {
                scenario(&r, &o, n, &kinds[k], seconds[s], 0);
                runs++;
                crashes += o.reboots;
                assert_true(o.reboots >= 1);
                if (o.max_over > max_over) {
                    max_over = o.max_over;
                }
                /* a crash can cost at most the one charge in flight */
                assert_true(o.max_over <= o.reboots * EPS1);
            }
        }
    }
    print_message("# ledger fault matrix: %u operations x 4 failure kinds x {1 crash, 2 "
                  "crashes at +1/+2/+3 ops}: %u runs, %u reboots, largest over-count %u/65536, "
                  "no under-count\n",
                  (unsigned)total, runs, crashes, max_over);
}

/* Every write and erase of the scenario (anchored: the first open's too) fails in every way:
 * not applied, torn after every prefix length 0..len, a pseudo-random mix of old and new
 * bytes (4 seeds), garbage (4 seeds). After the reboot every completed charge is counted. */
static void test_power_loss_every_prefix(void **state)
{
    (void)state;
    static rig_t r;
    static fake_op_t log[1024];
    oracle_t o;
    const fault_t none = {FAKE_NONE, FAKE_TORN_ONE, 0, 0};
    /* the fault-free run logs each operation (its length sets the prefixes to try) */
    r.log = log;
    r.log_cap = ARRAY_LEN(log);
    scenario(&r, &o, 0, &none, 0, 1);
    r.log = NULL;
    r.log_cap = 0;
    const uint64_t total = r.fs.ops;
    assert_true(total <= ARRAY_LEN(log));
    uint32_t runs = 0, crashes = 0, max_over = 0, erases = 0;
    for (uint64_t n = 1; n <= total; n++) {
        const fake_op_t *op = &log[n - 1];
        erases += op->erase;
        for (uint32_t v = 0; v < op->len + 10u; v++) {
            fault_t f = {FAKE_NOT_APPLIED, FAKE_TORN_ONE, 0, 0};
            if (v <= op->len) {
                f.mode = FAKE_TORN;
                f.torn = FAKE_TORN_LEN;
                f.torn_len = v;
            } else if (v < op->len + 5u) {
                f.mode = FAKE_TORN;
                f.torn = FAKE_TORN_MIX;
                f.seed = v;
            } else if (v < op->len + 9u) {
                f.mode = FAKE_GARBAGE;
                f.seed = v;
            }
            scenario(&r, &o, n, &f, 0, 1);
            runs++;
            crashes += o.reboots;
            assert_int_equal(o.reboots, 1);
            if (o.max_over > max_over) {
                max_over = o.max_over;
            }
            assert_true(o.max_over <= EPS1);
        }
    }
    print_message("# ledger power loss: %u operations (%u erases, %u writes) x {not applied, "
                  "torn after every prefix length, 4 mixes of old and new bytes, 4 garbage}: "
                  "%u runs, largest over-count %u/65536, no under-count, never bricked\n",
                  (unsigned)total, erases, (unsigned)total - erases, runs, max_over);
}

static void test_interrupted_reset(void **state)
{
    (void)state;
    static rig_t r;
    for (uint64_t n = 1; n <= 5; n++) {
        for (int torn = 0; torn < 2; torn++) {
            rig_init(&r, 1);
            assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
            assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK);
            assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK);
            fake_storage_arm(&r.fs, r.fs.ops + n, torn ? FAKE_TORN : FAKE_NOT_APPLIED,
                             FAKE_TORN_HALF);
            assert_int_equal(dpm_ledger_reset(&r.l), DPM_ERR_STORAGE);
            fake_storage_reboot(&r.fs);
            /* either the old ledger or an empty one, never corrupt */
            assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
            dpm_eps_t s = spent(&r, 1, 0);
            assert_true(s == 2 * EPS1 || s == 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_reference),
        cmocka_unit_test(test_fresh_region_becomes_empty_ledger),
        cmocka_unit_test(test_budget_and_periods),
        cmocka_unit_test(test_persists_mirrored),
        cmocka_unit_test(test_campaign_capacity),
        cmocka_unit_test(test_bad_arguments_leave_state),
        cmocka_unit_test(test_storage_failure_is_no_charge),
        cmocka_unit_test(test_readback_catches_lying_storage),
        cmocka_unit_test(test_corruption_fails_closed_until_reset),
        cmocka_unit_test(test_garbage_region_is_corrupt_not_fresh),
        cmocka_unit_test(test_impossible_values_fail_closed),
        cmocka_unit_test(test_sequence_wraps),
        cmocka_unit_test(test_interrupted_reset),
        cmocka_unit_test(test_anchor),
        cmocka_unit_test(test_damage_never_allows_respending),
        cmocka_unit_test(test_damage_control_old_layout_is_caught),
        cmocka_unit_test(test_fault_matrix),
        cmocka_unit_test(test_power_loss_every_prefix),
    };
    return cmocka_run_group_tests_name("ledger", tests, NULL, NULL);
}
