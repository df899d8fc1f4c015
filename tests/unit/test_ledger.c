/* SPDX-License-Identifier: Apache-2.0 */
/* The privacy ledger: budget and period rules, the device cap per device period and the
 * ledger clock, finished entries freed for new campaigns, version 1 records read
 * conservatively, persistence, the mirrored A/B slots, the anchor, corruption failing closed,
 * and two kinds of fault injection:
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
#include "dpm/expert/budget.h"
#include "fake_storage.h"
#include "test_figure.h"

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

/* A record encoded by the test itself, following the layout documented in dpm/expert/budget.h:
 * version 1 (SDK 0.1.0, still read) by make_record, version 2 by make_record2. */
typedef struct {
    uint32_t id, period, spent;
} entry_t;

typedef struct {
    uint32_t id, period, spent, free_at;
} entry2_t;

static size_t make_record2(uint8_t *buf, uint32_t seq, uint32_t clock, uint32_t period_end,
                           uint32_t period_spent, const entry2_t *e, uint32_t n)
{
    dpm_put_le32(buf, 0x474C5044u);
    buf[4] = 2;
    buf[5] = (uint8_t)n;
    dpm_put_le16(buf + 6, 0);
    dpm_put_le32(buf + 8, seq);
    dpm_put_le32(buf + 12, clock);
    dpm_put_le32(buf + 16, period_end);
    dpm_put_le32(buf + 20, period_spent);
    for (uint32_t i = 0; i < n; i++) {
        dpm_put_le32(buf + 24 + 16 * i, e[i].id);
        dpm_put_le32(buf + 28 + 16 * i, e[i].period);
        dpm_put_le32(buf + 32 + 16 * i, e[i].spent);
        dpm_put_le32(buf + 36 + 16 * i, e[i].free_at);
    }
    size_t len = 24 + 16 * (size_t)n;
    dpm_put_le32(buf + len, dpm_crc32(0, buf, len));
    return len + 4;
}

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
    /* both slots now hold an empty record (magic "DPLG", version 2, n = 0, seq 1, clock,
     * period end and period total 0), the rest of each slot erased */
    const uint8_t magic[] = {0x44, 0x50, 0x4C, 0x47, 2, 0, 0, 0, 1, 0, 0, 0,
                             0,    0,    0,    0,    0, 0, 0, 0, 0, 0, 0, 0};
    for (uint32_t s = 0; s < 2; s++) {
        assert_memory_equal(slot_mem(&r, s), magic, sizeof(magic));
        assert_int_equal(dpm_get_le32(slot_mem(&r, s) + 24), dpm_crc32(0, slot_mem(&r, s), 24));
        for (uint32_t i = 28; i < SLOT; i++) {
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
    /* full, and none of them finishes by time (dpm_ledger_charge gives no period length): a
     * new campaign is refused with its own status, nothing written */
    uint64_t ops = r.fs.ops;
    assert_int_equal(dpm_ledger_charge(&r.l, 999, 0, EPS1, 4 * EPS1), DPM_ERR_LEDGER_FULL);
    assert_int_equal(r.fs.ops, ops);
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
    cases[ncases].len = make_record(recs[ncases], 3, 6, e, 1, 0);
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
    /* the copy was restored, in version 2 (never written in version 1): the same record */
    assert_int_equal(slot_mem(&r, 1)[4], 2);
    assert_int_equal(dpm_get_le32(slot_mem(&r, 1) + 8), 5);
    uint64_t ops = r.fs.ops;
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(r.fs.ops, ops); /* a mirror across the versions needs no repair */
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

/* ---- the device cap, the ledger clock, finished entries --------------------------------- */

#define DAY 86400u

static dpm_ledger_charge_t chg(uint32_t c, uint32_t p, uint32_t period_seconds, dpm_eps_t eps,
                               dpm_eps_t budget)
{
    dpm_ledger_charge_t x = {c, p, period_seconds, eps, budget};
    return x;
}

static dpm_ledger_cap_t cap_at(dpm_eps_t max_eps, uint32_t wall, uint32_t elapsed)
{
    dpm_ledger_cap_t x = {max_eps, DAY, wall, elapsed};
    return x;
}

static dpm_eps_t period_total(rig_t *r, uint32_t wall, uint32_t elapsed)
{
    dpm_ledger_cap_t k = cap_at(EPS1, wall, elapsed);
    dpm_eps_t s = 0xDEADBEEF;
    assert_int_equal(dpm_ledger_period_spent(&r->l, &k, &s), DPM_OK);
    return s;
}

/* The attack of issue 27: one collector answers with campaigns 777, 778, 779 besides the
 * campaign asked for, each within the policy, each with its own budget. The cap counts them
 * together, per device period of the ledger clock, whatever the campaign periods say. */
static void test_device_cap_counts_every_campaign(void **state)
{
    (void)state;
    NEED_CAMPAIGNS(4);
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    const uint32_t t0 = 1800000000u; /* a wall clock in 2027, 10:00 UTC into its day */
    const uint32_t ids[4] = {1, 777, 778, 779};
    dpm_ledger_cap_t k = cap_at(EPS1, t0, 0);
    const char *why = NULL;
    dpm_ledger_charge_t c = chg(ids[0], 5, DAY, EPS1, EPS1);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, &why), DPM_OK);
    assert_null(why);
    for (uint32_t i = 1; i < 4; i++) {
        uint64_t ops = r.fs.ops;
        c = chg(ids[i], 5 + i, 60u * i, EPS1 / 4, EPS1); /* any period, length, size */
        assert_int_equal(dpm_ledger_check(&r.l, &c, &k, &why), DPM_ERR_BUDGET);
        assert_string_equal(why, "the device's cap for this period is spent");
        assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, &why), DPM_ERR_BUDGET);
        assert_int_equal(r.fs.ops, ops); /* refused before anything is written */
    }
    assert_int_equal(period_total(&r, t0, 0), EPS1);
    /* within the same device period, later readings change nothing */
    k = cap_at(EPS1, t0 + 3600u, 0);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
    /* the next device period (UTC day) opens the cap again */
    uint32_t next_day = t0 - t0 % DAY + DAY;
    k = cap_at(EPS1, next_day, 0);
    assert_int_equal(period_total(&r, next_day, 0), 0);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    assert_int_equal(period_total(&r, next_day, 0), EPS1 / 4);
    /* a wall clock set BACK (or unset: 1970) cannot reopen the day it left */
    k = cap_at(EPS1, t0, 0);
    c = chg(ids[2], 9, 60u, EPS1, EPS1);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
    k = cap_at(EPS1, 0, 0);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
    c = chg(ids[2], 9, 60u, EPS1 - EPS1 / 4, EPS1);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK); /* exactly to the cap */
    assert_int_equal(period_total(&r, 0, 0), EPS1);

    /* Negative control: the same attack without the cap (the 0.1.0 call) spends once per
     * campaign id in one period: 4 budgets. */
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(dpm_ledger_charge(&r.l, ids[i], 5, EPS1, EPS1), DPM_OK);
    }
    /* ... and the uncapped charges still count in the device period's total */
    assert_int_equal(period_total(&r, 0, 0), 4 * EPS1);
    k = cap_at(4 * EPS1, t0, 0);
    c = chg(1, 6, DAY, 1, EPS1);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
}

/* Without a wall clock the ledger clock moves by the elapsed seconds the caller measured; with
 * neither it never moves (a lifetime cap). A period_end at the end of time never ends. */
static void test_ledger_clock(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    dpm_ledger_charge_t c = chg(3, 0, 0, EPS1, 100 * EPS1);
    dpm_ledger_cap_t k = cap_at(EPS1, 0, 0);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    for (int i = 0; i < 3; i++) { /* no clock at all: a lifetime cap */
        assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
    }
    k = cap_at(EPS1, 0, DAY - 1); /* powered on for a day less one second */
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
    k = cap_at(EPS1, 0, DAY); /* a whole day: the next period */
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 12), DAY);     /* the clock */
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 16), 2 * DAY); /* its period's end */
    /* elapsed adds up across charges: half a day, twice */
    k = cap_at(EPS1, 0, DAY / 2);
    c = chg(3, 0, 0, 1, 100 * EPS1);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET); /* 1.5 days */
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 12), DAY); /* a refusal moves nothing */
    /* the wall clock wins when it is ahead of the elapsed count, and not otherwise */
    k = cap_at(EPS1, 5 * DAY, 10);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 12), 5 * DAY);
    k = cap_at(EPS1, DAY, 10);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 12), 5 * DAY + 10);
    /* a longer device period (a new policy) takes effect when the current one ends */
    dpm_ledger_cap_t week = {EPS1, 7 * DAY, 6 * DAY - 1, 0};
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &week, NULL), DPM_OK);
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 16), 6 * DAY);
    week.wall_s = 6 * DAY;
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &week, NULL), DPM_OK);
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 16), 7 * DAY); /* aligned to weeks */
    /* the end of time: a clock saturated at 2^32 - 1 stays in its period */
    k = cap_at(EPS1, 0xFFFFFFFFu, 0);
    c = chg(3, 0, 0, EPS1, 100 * EPS1);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 16), 0xFFFFFFFFu);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
    k = cap_at(EPS1, 0xFFFFFFFFu, 0xFFFFFFFFu);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
    /* bad caps are refused */
    dpm_ledger_cap_t bad = {0, DAY, 0, 0};
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &bad, NULL), DPM_ERR_PARAM);
    bad.max_eps = EPS1;
    bad.period_seconds = 0;
    assert_int_equal(dpm_ledger_check(&r.l, &c, &bad, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_period_spent(&r.l, &bad, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_spend(&r.l, NULL, &k, NULL), DPM_ERR_PARAM);
}

/* A finished entry (its campaign period over on the ledger clock) is freed when a new
 * campaign needs its slot, so the slots limit the campaigns open at once; until then it still
 * refuses re-spending its period. */
static void test_finished_entries_are_freed(void **state)
{
    (void)state;
    NEED_CAMPAIGNS(2);
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    const uint32_t n = DPM_LEDGER_MAX_CAMPAIGNS, t0 = 1000000u;
    dpm_ledger_cap_t k = cap_at(100 * EPS1, t0, 0);
    for (uint32_t i = 0; i < n; i++) { /* campaign 10 + i: periods of (i + 1) hours */
        dpm_ledger_charge_t c = chg(10 + i, 1, 3600u * (i + 1), EPS1, EPS1);
        assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    }
    /* full, nothing finished yet */
    const char *why = NULL;
    dpm_ledger_charge_t fresh = chg(99, 0, 3600u, EPS1, EPS1);
    k = cap_at(100 * EPS1, t0 + 3599u, 0);
    assert_int_equal(dpm_ledger_check(&r.l, &fresh, &k, &why), DPM_ERR_LEDGER_FULL);
    assert_string_equal(why, "ledger full: every campaign in it has an open period");
    assert_int_equal(dpm_ledger_spend(&r.l, &fresh, &k, NULL), DPM_ERR_LEDGER_FULL);
    /* an hour on, campaign 10's period is over: it still refuses its period's re-spend ... */
    k = cap_at(100 * EPS1, t0 + 3600u, 0);
    dpm_ledger_charge_t again = chg(10, 1, 3600u, EPS1, EPS1);
    assert_int_equal(dpm_ledger_spend(&r.l, &again, &k, NULL), DPM_ERR_BUDGET);
    /* ... until a new campaign takes its slot; the others are kept */
    assert_int_equal(dpm_ledger_spend(&r.l, &fresh, &k, NULL), DPM_OK);
    assert_int_equal(spent(&r, 99, 0), EPS1);
    assert_int_equal(spent(&r, 10, 1), 0); /* forgotten: its spending is in the period total */
    for (uint32_t i = 1; i < n; i++) {
        assert_int_equal(spent(&r, 10 + i, 1), EPS1);
    }
    assert_int_equal(period_total(&r, t0 + 3600u, 0), (n + 1) * EPS1);
    /* a charge in the same period never finishes sooner: campaign 11 charged again at
     * t0 + 3600 finishes 2 hours after that, not after its first charge */
    if (n >= 3) {
        k = cap_at(100 * EPS1, t0 + 3600u, 0);
        dpm_ledger_charge_t c11 = chg(11, 1, 7200u, 1, EPS1 + 1);
        assert_int_equal(dpm_ledger_spend(&r.l, &c11, &k, NULL), DPM_OK);
        k = cap_at(100 * EPS1, t0 + 7200u, 0); /* 11's first charge + 2 h: not finished */
        dpm_ledger_charge_t other = chg(98, 0, 3600u, EPS1, EPS1);
        assert_int_equal(dpm_ledger_spend(&r.l, &other, &k, NULL), DPM_OK); /* 12 goes */
        assert_int_equal(spent(&r, 11, 1), EPS1 + 1);
    }
    /* charges without a period length never finish: a ledger of them stays full */
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    for (uint32_t i = 0; i < n; i++) {
        dpm_ledger_charge_t c = chg(10 + i, 1, 0, EPS1, EPS1);
        k = cap_at(100 * EPS1, t0, 0);
        assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    }
    k = cap_at(100 * EPS1, 0xFFFFFFF0u, 0);
    assert_int_equal(dpm_ledger_spend(&r.l, &fresh, &k, NULL), DPM_ERR_LEDGER_FULL);
}

/* A version 1 record (SDK 0.1.0) is read as what it says, and conservatively for what it
 * does not: its entries never finish by time, its total counts in the current device period,
 * and the next charge writes version 2. */
static void test_version1_record_is_read_conservatively(void **state)
{
    (void)state;
    NEED_CAMPAIGNS(2);
    static rig_t r;
    rig_init(&r, 1);
    uint8_t rec[SLOT];
    entry_t e[2] = {{4, 2, EPS1}, {5, 7, EPS1 / 2}};
    size_t len = make_record(rec, 1, 9, e, 2, 0);
    put_slot(&r, 0, rec, len);
    put_slot(&r, 1, rec, len);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(slot_mem(&r, 0)[4], 1); /* a healthy version 1 mirror is left as it is */
    assert_int_equal(spent(&r, 4, 2), EPS1);
    assert_int_equal(spent(&r, 5, 7), EPS1 / 2);
    assert_int_equal(period_total(&r, 1800000000u, 0), EPS1 + EPS1 / 2);
    /* the closed-period rule holds across the upgrade */
    assert_int_equal(dpm_ledger_charge(&r.l, 4, 1, 1, 9 * EPS1), DPM_ERR_PARAM);
    /* the first capped charge places the old total in its device period: the cap sees it */
    dpm_ledger_cap_t k = cap_at(2 * EPS1, 1800000000u, 0);
    dpm_ledger_charge_t c = chg(4, 2, DAY, EPS1, 9 * EPS1);
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_BUDGET);
    c.eps = EPS1 / 2;
    assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_OK);
    for (uint32_t s = 0; s < 2; s++) {
        assert_int_equal(slot_mem(&r, s)[4], 2);
        assert_int_equal(dpm_get_le32(slot_mem(&r, s) + 8), 10);
    }
    assert_int_equal(spent(&r, 4, 2), EPS1 + EPS1 / 2);
    assert_int_equal(period_total(&r, 1800000000u, 0), 2 * EPS1);
    /* campaign 5's entry came without a period length: it never finishes by time */
    if (DPM_LEDGER_MAX_CAMPAIGNS == 2) {
        k = cap_at(100 * EPS1, 0xFFFFFFF0u, 0);
        c = chg(6, 0, DAY, EPS1, EPS1);
        assert_int_equal(dpm_ledger_spend(&r.l, &c, &k, NULL), DPM_ERR_LEDGER_FULL);
    }
    /* mid-upgrade: a version 2 record one newer than the version 1 copy wins, either slot */
    rig_init(&r, 1);
    entry2_t e2[1] = {{4, 2, 2 * EPS1, 5000u}};
    uint8_t rec2[SLOT];
    size_t len2 = make_record2(rec2, 10, 1000u, DAY, 2 * EPS1, e2, 1);
    put_slot(&r, 0, rec, len);
    put_slot(&r, 1, rec2, len2);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(spent(&r, 4, 2), 2 * EPS1);
    assert_int_equal(spent(&r, 5, 7), 0);
    assert_memory_equal(slot_mem(&r, 0), slot_mem(&r, 1), SLOT);
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
#define CAP (6 * EPS1) /* the device cap of the history, per device period of W seconds */
#define W 1000u
#define LONG 100000u /* a campaign period that does not end during the history */

typedef struct {
    uint32_t c, p;
    dpm_eps_t eps;
    uint32_t t, len; /* the wall clock of the charge, the campaign's period length */
} charge_t;

/* Five campaigns over two device periods; some campaign periods spent to the budget, some
 * closed, one partly spent; the second device period ends with campaign 4's short period
 * over, so that campaign 5 takes its slot when the ledger is full (DPM_LEDGER_MAX_CAMPAIGNS
 * 4, the default). The device total stays within CAP in each device period. */
static const charge_t history[] = {
    {1, 0, EPS1, 1000, LONG},     {1, 0, EPS1, 1001, LONG},     {2, 0, EPS1, 1002, LONG},
    {1, 0, EPS1 / 2, 1003, LONG}, {3, 1, EPS1, 1004, LONG},     {2, 0, EPS1, 1005, LONG},
    {2, 0, EPS1 / 2, 2100, LONG}, {1, 1, EPS1, 2101, LONG},     {3, 1, EPS1, 2102, LONG},
    {1, 1, EPS1, 2103, LONG},     {3, 2, EPS1 / 2, 2104, LONG}, {1, 1, EPS1 / 2, 2105, LONG},
    {4, 0, EPS1 / 4, 2200, 50},   {5, 3, EPS1 / 4, 2300, LONG}};
#define HLEN ARRAY_LEN(history)
#define NCAMP 5u

/* What the ledger must know after the first k charges of the history: an independent model
 * of dpm/expert/budget.h's rules (campaign periods, the device period, freeing when full). */
typedef struct {
    int known[NCAMP + 1];
    uint32_t period[NCAMP + 1];
    dpm_eps_t spent[NCAMP + 1];
    uint32_t free_at[NCAMP + 1];
    uint32_t count, clock, dev_end;
    dpm_eps_t dev_spent;
} truth_t;

static void truth_after(size_t k, truth_t *t)
{
    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < k; i++) {
        const charge_t *h = &history[i];
        t->clock = h->t; /* increasing */
        if (t->dev_end == 0 || t->clock >= t->dev_end) {
            t->dev_end = t->clock - t->clock % W + W;
            t->dev_spent = 0;
        }
        if (!t->known[h->c] && t->count == DPM_LEDGER_MAX_CAMPAIGNS) {
            for (uint32_t c = 1; c <= NCAMP; c++) {
                if (t->known[c] && t->clock >= t->free_at[c]) {
                    t->known[c] = 0;
                    t->count--;
                }
            }
            assert_true(t->count < DPM_LEDGER_MAX_CAMPAIGNS);
        }
        if (!t->known[h->c] || h->p > t->period[h->c]) {
            t->spent[h->c] = 0;
        }
        t->count += !t->known[h->c];
        t->known[h->c] = 1;
        t->period[h->c] = h->p;
        t->spent[h->c] += h->eps;
        t->free_at[h->c] = h->t + h->len;
        t->dev_spent += h->eps;
        assert_true(t->spent[h->c] <= BUDGET && t->dev_spent <= CAP);
    }
}

static dpm_ledger_cap_t history_cap(uint32_t t)
{
    dpm_ledger_cap_t k = {CAP, W, t, 0};
    return k;
}

/* The storage image after the first k charges (at rest: every charge returned). */
static void image_after(size_t k, uint8_t *image)
{
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(open_anchored(&r, &r.l), DPM_OK);
    for (size_t i = 0; i < k; i++) {
        const charge_t *h = &history[i];
        dpm_ledger_charge_t c = {h->c, h->p, h->len, h->eps, BUDGET};
        dpm_ledger_cap_t cap = history_cap(h->t);
        assert_int_equal(dpm_ledger_spend(&r.l, &c, &cap, NULL), DPM_OK);
    }
    memcpy(image, r.mem, MEM_SIZE);
}

typedef struct {
    uint32_t cases;         /* damaged images opened */
    uint32_t exact;         /* opened, every total exactly right */
    uint32_t failed_closed; /* DPM_ERR_CORRUPT, and charges refused */
    uint32_t over;          /* opened, counting more than was spent (safe) */
    uint32_t respends;      /* opened and let a charge through beyond the budget (or into a
                               closed period, or beyond the device cap): the failure this test
                               exists to catch */
    uint32_t cap_respends;  /* of them, those the device cap let through */
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
    int exact = 1, respent = 0, cap_respent = 0;
    dpm_ledger_cap_t cap = history_cap(t->clock);
    dpm_eps_t dev = 0;
    if (dpm_ledger_period_spent(&l, &cap, &dev) != DPM_OK || dev != t->dev_spent) {
        exact = 0;
    }
    for (uint32_t c = 1; c <= NCAMP; c++) {
        if (!t->known[c]) {
            continue;
        }
        /* the device cap: what is left of it, and one more, in a period the campaign has room
         * in (its budget made no limit) */
        dpm_ledger_charge_t over = {c, t->period[c], 0, CAP - t->dev_spent + 1, UINT32_MAX};
        cap_respent |= dpm_ledger_check(&l, &over, &cap, NULL) == DPM_OK;
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
    v->cap_respends += (uint32_t)cap_respent;
    if (respent || cap_respent) {
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
    NEED_CAMPAIGNS(4);
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
        const char *what = a ? "damage anchored" : "damage plain";
        test_figure_of(what, "charges", (double)HLEN, "charges");
        test_figure_of(what, "cases", v[a].cases, "cases");
        test_figure_of(what, "exact", v[a].exact, "cases");
        test_figure_of(what, "failed_closed", v[a].failed_closed, "cases");
        test_figure_of(what, "respends", v[a].respends, "cases");
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
    NEED_CAMPAIGNS(4);
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
                  "damaged images, %u re-spent (must be > 0), %u of them past the device cap "
                  "(must be > 0)\n",
                  v.cases, v.respends, v.cap_respends);
    test_figure("damage_old_layout.cases", v.cases, "cases");
    test_figure("damage_old_layout.respends", v.respends, "cases");
    test_figure("damage_old_layout.cap_respends", v.cap_respends, "cases");
    assert_true(v.respends > 0);
    assert_true(v.cap_respends > 0);
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

/* The scenario's device cap: above what its campaigns spend in one period (NC x 2.5), below
 * what they spend in two, so that it holds only if every device period starts afresh. Campaign
 * period p is device period p: [1000 + p W, 1000 + (p + 1) W) of the wall clock. */
#define SCENARIO_CAP (8 * EPS1)

static dpm_ledger_cap_t scenario_cap(uint32_t p)
{
    dpm_ledger_cap_t k = {SCENARIO_CAP, W, 1000u + p * W, 0};
    return k;
}

/* Invariants after every step: the ledger never under-counts, and no (campaign, period) ever
 * got more than its budget in reports, no device period more than the cap. */
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
    /* the device period (one per campaign period here) never under-counts either */
    dpm_eps_t dev = 0, made = 0;
    dpm_ledger_cap_t cap = scenario_cap(cur_period);
    assert_int_equal(dpm_ledger_period_spent(&r->l, &cap, &dev), DPM_OK);
    for (uint32_t c = 1; c <= NC; c++) {
        made += o->produced[c][cur_period];
    }
    if (dev < made || made > SCENARIO_CAP) {
        fail_msg("step %u: device period %u: ledger %u, produced %u (cap %u)", step, cur_period,
                 dev, made, SCENARIO_CAP);
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
                dpm_ledger_charge_t ch = {c, p, W, eps, BUDGET};
                dpm_ledger_cap_t cap = scenario_cap(p);
                dpm_status_t st = dpm_ledger_spend(&r->l, &ch, &cap, NULL);
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
    test_figure("fault_matrix.operations", (double)total, "operations");
    test_figure("fault_matrix.runs", runs, "runs");
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
    test_figure("power_loss.operations", (double)total, "operations");
    test_figure("power_loss.runs", runs, "runs");
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
        cmocka_unit_test(test_device_cap_counts_every_campaign),
        cmocka_unit_test(test_ledger_clock),
        cmocka_unit_test(test_finished_entries_are_freed),
        cmocka_unit_test(test_version1_record_is_read_conservatively),
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
