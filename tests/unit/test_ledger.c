/* SPDX-License-Identifier: Apache-2.0 */
/* The privacy ledger: budget and period rules, persistence, A/B slots, corruption failing
 * closed, and a fault-injection matrix (every write/erase of a scenario fails, both as "not
 * applied" and as a torn write, then the device reboots) asserting it never under-counts. */
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
#define REG_OFF 16u /* the region does not start at 0: offsets are honoured */
#define REG_SIZE (2u * SLOT)
#define MEM_SIZE (REG_OFF + REG_SIZE + 112u)
/* Tests that track several campaigns at once skip themselves in a smaller configuration. */
#define NEED_CAMPAIGNS(n)                                                                      \
    do {                                                                                       \
        if (DPM_LEDGER_MAX_CAMPAIGNS < (n)) {                                                  \
            print_message("# not run: needs DPM_LEDGER_MAX_CAMPAIGNS >= %d\n", (n));            \
            return;                                                                            \
        }                                                                                      \
    } while (0)

typedef struct {
    uint8_t mem[MEM_SIZE];
    fake_storage_t fs;
    dpm_storage_t st;
    dpm_ledger_t l;
} rig_t;

static void rig_init(rig_t *r, int flash)
{
    fake_storage_init(&r->fs, r->mem, MEM_SIZE, flash);
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
    /* slot A now holds an empty record (magic "DPLG", version 1, n = 0, seq 1), B erased */
    const uint8_t magic[] = {0x44, 0x50, 0x4C, 0x47, 1, 0, 0, 0, 1, 0, 0, 0};
    assert_memory_equal(slot_mem(&r, 0), magic, sizeof(magic));
    assert_int_equal(dpm_get_le32(slot_mem(&r, 0) + 12), dpm_crc32(0, slot_mem(&r, 0), 12));
    for (uint32_t i = 0; i < SLOT; i++) {
        assert_int_equal(slot_mem(&r, 1)[i], 0xFF);
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

static void test_persists_and_alternates_slots(void **state)
{
    (void)state;
    NEED_CAMPAIGNS(3);
    static rig_t r;
    rig_init(&r, 1);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    for (uint32_t i = 0; i < 9; i++) {
        assert_int_equal(dpm_ledger_charge(&r.l, 1 + i % 3, 0, EPS1, 10 * EPS1), DPM_OK);
        /* seq i + 2 went to slot B for even i, A for odd i; the other slot keeps seq i + 1 */
        uint32_t newer = (i % 2 == 0) ? 1u : 0u;
        assert_int_equal(dpm_get_le32(slot_mem(&r, newer) + 8), i + 2);
        assert_int_equal(dpm_get_le32(slot_mem(&r, 1 - newer) + 8), i + 1);
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
    assert_int_equal(dpm_ledger_open(&l, &r.st, REG_OFF, DPM_LEDGER_MIN_REGION - 1),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_ledger_open(&l, &r.st, MEM_SIZE - REG_SIZE + 1, REG_SIZE),
                     DPM_ERR_PARAM);
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
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK); /* -> B */
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK); /* -> A */
    dpm_storage_t lying = r.st;
    lying.erase = lying_erase;
    dpm_ledger_t l;
    assert_int_equal(dpm_ledger_open(&l, &lying, REG_OFF, REG_SIZE), DPM_OK);
    /* B is not erased, so the flash write cannot produce the record: read-back says so */
    assert_int_equal(dpm_ledger_charge(&l, 1, 0, EPS1, 9 * EPS1), DPM_ERR_STORAGE);
    /* the honest port still sees the last good total (the garbage in B is a torn slot) */
    assert_int_equal(spent(&r, 1, 0), 2 * EPS1);
}

static void test_corruption_fails_closed_until_reset(void **state)
{
    (void)state;
    static rig_t r;
    rig_init(&r, 0);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK); /* B seq 2 */
    assert_int_equal(dpm_ledger_charge(&r.l, 1, 0, EPS1, 9 * EPS1), DPM_OK); /* A seq 3 */
    /* damage to the OLDER slot only: the newest record is still used */
    slot_mem(&r, 1)[13] ^= 0x01;
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(spent(&r, 1, 0), 2 * EPS1);
    /* damage to both: fail closed, at open and for every charge */
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
    cases[ncases].what = "an unknown version with a bad CRC";
    cases[ncases].len = make_record(recs[ncases], 7, 6, e, 1, 0);
    recs[ncases][cases[ncases].len - 1] ^= 0xFF;
    ncases++;
    cases[ncases].what = "non-consecutive sequence numbers";
    cases[ncases].len = make_record(recs[ncases], 1, 9, e, 1, 0);
    ncases++;
    cases[ncases].what = "equal sequence numbers";
    cases[ncases].len = make_record(recs[ncases], 1, 5, e, 1, 0);
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
    /* control: the good record alone, and with a valid consecutive partner, opens */
    rig_init(&r, 0);
    put_slot(&r, 0, good, glen);
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
    assert_int_equal(dpm_ledger_charge(&r.l, 4, 2, EPS1, 5 * EPS1), DPM_OK); /* B, seq 0 */
    assert_int_equal(dpm_get_le32(slot_mem(&r, 1) + 8), 0);
    assert_int_equal(dpm_ledger_open(&r.l, &r.st, REG_OFF, REG_SIZE), DPM_OK);
    assert_int_equal(spent(&r, 4, 2), 2 * EPS1);
    assert_int_equal(dpm_ledger_charge(&r.l, 4, 2, EPS1, 5 * EPS1), DPM_OK); /* A, seq 1 */
    assert_int_equal(spent(&r, 4, 2), 3 * EPS1);
}

/* ---- fault injection -------------------------------------------------------------------- */

/* campaigns: 3, or fewer in a smaller configuration */
#define NC (DPM_LEDGER_MAX_CAMPAIGNS < 3 ? (uint32_t)DPM_LEDGER_MAX_CAMPAIGNS : 3u)
#define NP 4u  /* periods */
#define BUDGET (2 * EPS1 + EPS1 / 2)

/* The app: what it believes, which survives reboots (it is the test's oracle). */
typedef struct {
    dpm_eps_t produced[NC + 1][NP]; /* ε of reports produced after a DPM_OK charge */
    uint32_t ok_charges;
    uint32_t reboots;
    uint32_t max_over; /* largest over-count seen (ledger - produced) */
} oracle_t;

static void reboot(rig_t *r, oracle_t *o)
{
    fake_storage_reboot(&r->fs);
    o->reboots++;
    dpm_status_t st = dpm_ledger_open(&r->l, &r->st, REG_OFF, REG_SIZE);
    if (st != DPM_OK) {
        fail_msg("reopen after a crash gave %d (a single crash must never brick or corrupt)",
                 st);
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
            fail_msg("step %u: campaign %u period %u: ledger %u < produced %u (UNDER-COUNT)",
                     step, c, cur_period, s, o->produced[c][cur_period]);
        }
        if (s - o->produced[c][cur_period] > o->max_over) {
            o->max_over = s - o->produced[c][cur_period];
        }
    }
}

/* Charges for 3 campaigns over 4 periods, 4 attempts per campaign and period (the budget
 * allows 2 at ε = 1 plus one at ε = 1/2), with a look back at a closed period. */
static void scenario(rig_t *r, oracle_t *o, uint64_t fail_at, fake_fail_t mode, fake_torn_t torn,
                     uint64_t second_after)
{
    memset(o, 0, sizeof(*o));
    rig_init(r, 1);
    fake_storage_arm(&r->fs, fail_at, mode, torn);
    int second_armed = 0;
    if (dpm_ledger_open(&r->l, &r->st, REG_OFF, REG_SIZE) != DPM_OK) {
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
                        fake_storage_arm(&r->fs, r->fs.ops + second_after, mode, torn);
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
    /* The fault-free run fixes the number of operations to fail, one by one. */
    scenario(&r, &o, 0, FAKE_NONE, FAKE_TORN_ONE, 0);
    const uint64_t total = r.fs.ops;
    assert_true(total > 12 * NC);
    assert_int_equal(o.max_over, 0); /* no crash: exact */
    /* every period: 2 x 1 + 1 x 1/2 per campaign */
    assert_int_equal(o.ok_charges, NC * NP * 3);
    const struct {
        fake_fail_t mode;
        fake_torn_t torn;
    } kinds[] = {{FAKE_NOT_APPLIED, FAKE_TORN_ONE},
                 {FAKE_TORN, FAKE_TORN_ONE},
                 {FAKE_TORN, FAKE_TORN_HALF},
                 {FAKE_TORN, FAKE_TORN_ALL_BUT_ONE}};
    const uint64_t seconds[] = {0, 1, 2, 3};
    uint32_t runs = 0, crashes = 0, max_over = 0;
    for (size_t s = 0; s < ARRAY_LEN(seconds); s++) {
        for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
            for (uint64_t n = 1; n <= total; n++) {
                scenario(&r, &o, n, kinds[k].mode, kinds[k].torn, seconds[s]);
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

static void test_interrupted_reset(void **state)
{
    (void)state;
    static rig_t r;
    for (uint64_t n = 1; n <= 3; n++) {
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
        cmocka_unit_test(test_persists_and_alternates_slots),
        cmocka_unit_test(test_campaign_capacity),
        cmocka_unit_test(test_bad_arguments_leave_state),
        cmocka_unit_test(test_storage_failure_is_no_charge),
        cmocka_unit_test(test_readback_catches_lying_storage),
        cmocka_unit_test(test_corruption_fails_closed_until_reset),
        cmocka_unit_test(test_garbage_region_is_corrupt_not_fresh),
        cmocka_unit_test(test_impossible_values_fail_closed),
        cmocka_unit_test(test_sequence_wraps),
        cmocka_unit_test(test_interrupted_reset),
        cmocka_unit_test(test_fault_matrix),
    };
    return cmocka_run_group_tests_name("ledger", tests, NULL, NULL);
}
