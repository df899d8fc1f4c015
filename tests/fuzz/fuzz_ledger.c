/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the privacy ledger recovering from arbitrary storage contents
 * (dpm_ledger_open, or dpm_ledger_open_anchored with arbitrary anchor bytes), then charging
 * and answering over it. Whatever storage holds (damage, other firmware, an attacker with
 * flash access), the ledger must not crash, and it must never let a device spend past a
 * budget.
 * Input: byte 0 flags (bit 0 NOR-flash semantics, bit 1 a larger region, bit 2 a storage
 * fault at the operation byte 1 names (its low 4 bits), bit 3 the fault tears, bits 4-5 how it
 * tears, bit 6 anchored, bit 7 capped: charges go through dpm_ledger_spend with the device
 * cap and a wall clock), byte 1's high 4 bits the clock's step per operation (x 300 s),
 * bytes 2..9 eight operations (low 2 bits: charge, charge, query, reopen; then campaign 1..4,
 * period 1..4, ε 1/4..1); anchored, the next 8 bytes are the anchor's initial bytes (its own
 * storage, no fault); the rest the region's initial bytes (0xFF beyond the input).
 * Checked beyond the sanitizers (per campaign and period, budget 1.0):
 *   - a charge returns DPM_OK only if the spending it started from plus ε is within the
 *     budget, and the ledger then answers exactly that total;
 *   - DPM_ERR_BUDGET only if it is not within the budget;
 *   - once corrupt, every charge fails closed until a reset;
 *   - no total that a DPM_OK charge made durable is ever answered lower later, after a
 *     reopen (a reboot) included, except when the storage fault interrupted a charge of a
 *     later period of the same campaign (the old period is then legitimately closed), or,
 *     capped, once the campaign's period may be over on the clock (its entry may be freed);
 * capped (cap 1.5, device periods of W = 1000 s, campaign c's periods c x 700 s):
 *   - a charge returns DPM_OK only if the device period's total it started from plus ε is
 *     within the cap, and the ledger then answers exactly that total; DPM_ERR_BUDGET only if
 *     the campaign's budget or the cap would be exceeded;
 *   - DPM_ERR_LEDGER_FULL only for a campaign the ledger does not track;
 *   - the device period's total the latest DPM_OK charge made durable is answered again at
 *     its clock reading after a reopen (a reboot), unless a charge failed in storage since;
 * and, anchored:
 *   - a region with no ledger in it (all erased) under a written anchor opens as
 *     DPM_ERR_CORRUPT, never as a new, empty ledger (that would re-spend the budget);
 *   - every DPM_OK open leaves the anchor written; the SDK writes an erased anchor once
 *     ("DPLG-ANC") and never changes a written one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/budget.h"
#include "fake_storage.h"
#include "fuzz_fixtures.h"

#define BUDGET 65536u
#define CAP 98304u /* 1.5 */
#define W 1000u
#define NC 4
#define NP 5

static uint8_t mem[2 * DPM_LEDGER_MIN_REGION + 64];
static uint8_t anchor_mem[DPM_LEDGER_ANCHOR_BYTES];
static const uint8_t ANCHOR_MARK[DPM_LEDGER_ANCHOR_BYTES] = {'D', 'P', 'L', 'G',
                                                             '-', 'A', 'N', 'C'};

/* The smallest total each (campaign, period) may show: what DPM_OK charges made durable. */
static uint32_t floor_of[NC + 1][NP];
static int newer_attempt[NC + 1][NP]; /* a charge of a later period of it was attempted */
static uint32_t last_ok_t[NC + 1];    /* capped: the clock of its latest DPM_OK charge */
static uint32_t now_t;                /* capped: the clock of the current operation */
static int capped;

/* The device period's total a DPM_OK charge made durable, at the clock it was made. */
static uint32_t dev_floor, dev_floor_t;

static dpm_ledger_cap_t cap_at(uint32_t t)
{
    dpm_ledger_cap_t k = {CAP, W, t, 0};
    return k;
}

static void check_dev_floor(dpm_ledger_t *l)
{
    dpm_ledger_cap_t k = cap_at(dev_floor_t);
    dpm_eps_t s = 0;
    if (dev_floor > 0 && dpm_ledger_period_spent(l, &k, &s) == DPM_OK && s < dev_floor) {
        abort(); /* a durable charge was forgotten by the device period */
    }
}

static void check_floor(dpm_ledger_t *l, uint32_t c, uint32_t p)
{
    if (capped && now_t >= last_ok_t[c] + 700u * c) {
        return; /* its campaign period may be over: the entry may have been freed */
    }
    dpm_eps_t s = 0;
    dpm_status_t st = dpm_ledger_spent(l, c, p, &s);
    if (st == DPM_OK && s < floor_of[c][p]) {
        abort(); /* a durable charge was forgotten */
    }
    if (st == DPM_ERR_PARAM && floor_of[c][p] > 0 && !newer_attempt[c][p]) {
        abort(); /* the period of a durable charge looks closed, yet nothing later was charged */
    }
}

/* The anchor either stays as the input left it, or goes from erased to the SDK's mark. */
static void check_anchor(const uint8_t *initial)
{
    fuzz_check_anchor(anchor_mem, initial, ANCHOR_MARK, sizeof(anchor_mem));
}

typedef struct {
    dpm_ledger_t *l;
    const dpm_storage_t *st, *anchor; /* anchor NULL: dpm_ledger_open */
    uint32_t region;
} opener_t;

static dpm_status_t reopen(const opener_t *o)
{
    dpm_status_t s = o->anchor == NULL
                         ? dpm_ledger_open(o->l, o->st, 0, o->region)
                         : dpm_ledger_open_anchored(o->l, o->st, 0, o->region, o->anchor, 0);
    if (o->anchor != NULL && s == DPM_OK && fuzz_all_erased(anchor_mem, sizeof(anchor_mem))) {
        abort(); /* a ledger exists, yet the anchor does not say so */
    }
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10) {
        return 0;
    }
    uint8_t flags = data[0];
    uint32_t region = flags & 2u ? (uint32_t)sizeof(mem) : DPM_LEDGER_MIN_REGION;
    capped = (flags & 0x80u) != 0;
    uint32_t step = 300u * (uint32_t)(data[1] >> 4);
    int anchored = (flags & 0x40u) != 0;
    size_t skip = anchored ? 10u + DPM_LEDGER_ANCHOR_BYTES : 10u;
    if (size < skip) {
        return 0;
    }
    fake_storage_t fs, afs;
    fake_storage_init(&fs, mem, sizeof(mem), flags & 1u);
    fake_storage_init(&afs, anchor_mem, sizeof(anchor_mem), flags & 1u);
    uint8_t anchor0[DPM_LEDGER_ANCHOR_BYTES];
    if (anchored) {
        memcpy(anchor_mem, data + 10, sizeof(anchor_mem));
    }
    memcpy(anchor0, anchor_mem, sizeof(anchor0));
    size_t n = size - skip < sizeof(mem) ? size - skip : sizeof(mem);
    memcpy(mem, data + skip, n);
    if (flags & 4u) {
        fake_storage_arm(&fs, 1u + (data[1] & 15u), flags & 8u ? FAKE_TORN : FAKE_NOT_APPLIED,
                         (fake_torn_t)((flags >> 4) % 3u));
    }
    dpm_storage_t st = fake_storage_port(&fs);
    dpm_storage_t ast = fake_storage_port(&afs);
    memset(floor_of, 0, sizeof(floor_of));
    memset(newer_attempt, 0, sizeof(newer_attempt));
    memset(last_ok_t, 0, sizeof(last_ok_t));
    dev_floor = dev_floor_t = 0;
    now_t = 1000u;

    dpm_ledger_t l;
    opener_t o = {&l, &st, anchored ? &ast : NULL, region};
    int fresh_region = fuzz_all_erased(mem, region);
    dpm_status_t open = reopen(&o);
    if (anchored && fresh_region && !fuzz_all_erased(anchor0, sizeof(anchor0)) &&
        open != DPM_ERR_CORRUPT) {
        abort(); /* an erased region under a written anchor must not start a new ledger */
    }
    for (int i = 0; i < 8; i++) {
        uint8_t op = data[2 + i];
        uint32_t c = 1u + ((op >> 2) & 3u);
        uint32_t p = 1u + ((op >> 4) & 3u);
        dpm_eps_t eps = (1u + (op >> 6)) * (BUDGET / 4u);
        now_t += step;
        if (fs.crashed) {
            fake_storage_reboot(&fs); /* power comes back */
            open = reopen(&o);
        }
        if (open != DPM_OK && open != DPM_ERR_CORRUPT) {
            if (open != DPM_ERR_STORAGE || !fs.crashed) {
                abort(); /* RAM storage fails only at the armed fault */
            }
            continue;
        }
        if ((op & 3u) == 3u) {
            open = reopen(&o); /* a reboot without a crash */
            if (open == DPM_OK) {
                check_dev_floor(&l);
            }
            continue;
        }
        if ((op & 3u) == 2u) {
            check_floor(&l, c, p);
            continue;
        }
        dpm_eps_t before = 0, dev_before = 0;
        dpm_status_t q = dpm_ledger_spent(&l, c, p, &before);
        dpm_ledger_cap_t k = cap_at(now_t);
        dpm_status_t qd = dpm_ledger_period_spent(&l, &k, &dev_before);
        dpm_ledger_charge_t one = {c, p, 700u * c, eps, BUDGET};
        dpm_status_t ch = capped ? dpm_ledger_spend(&l, &one, &k, NULL)
                                 : dpm_ledger_charge(&l, c, p, eps, BUDGET);
        if (ch == DPM_ERR_STORAGE || ch == DPM_ERR_CORRUPT) {
            dev_floor = 0; /* it may have reached storage (or a reset may forget) */
        }
        if (ch == DPM_OK) {
            dpm_eps_t after = 0;
            if (q != DPM_OK || (uint64_t)before + eps > BUDGET) {
                abort(); /* charged past the budget, or from an unknown state */
            }
            if (capped && (qd != DPM_OK || (uint64_t)dev_before + eps > CAP)) {
                abort(); /* charged past the device cap */
            }
            if (!fs.crashed && (dpm_ledger_spent(&l, c, p, &after) != DPM_OK ||
                                after != before + eps)) {
                abort();
            }
            if (capped && !fs.crashed) {
                if (dpm_ledger_period_spent(&l, &k, &after) != DPM_OK ||
                    after != dev_before + eps) {
                    abort();
                }
                dev_floor = after;
                dev_floor_t = now_t;
            }
            last_ok_t[c] = now_t;
            floor_of[c][p] = before + eps;
            for (uint32_t old = 1; old < p; old++) {
                floor_of[c][old] = 0; /* closed by this charge */
            }
        } else if (ch == DPM_ERR_STORAGE) {
            for (uint32_t old = 1; old < p; old++) {
                newer_attempt[c][old] = 1; /* it may have reached storage, closing them */
            }
        } else if (ch == DPM_ERR_BUDGET) {
            if (q == DPM_OK && (uint64_t)before + eps <= BUDGET &&
                !(capped && qd == DPM_OK && (uint64_t)dev_before + eps > CAP)) {
                abort();
            }
        } else if (ch == DPM_ERR_LEDGER_FULL) {
            if (q == DPM_OK && before > 0) {
                abort(); /* a tracked campaign never finds the ledger full */
            }
        } else if (ch == DPM_ERR_CORRUPT) {
            if (dpm_ledger_charge(&l, c, p, eps, BUDGET) != DPM_ERR_CORRUPT) {
                abort(); /* fail closed */
            }
            if (data[2 + i] & 0x80u) {
                (void)dpm_ledger_reset(&l); /* forgets, by contract, even if interrupted */
                memset(floor_of, 0, sizeof(floor_of));
            }
        } else if (ch != DPM_ERR_PARAM) {
            abort();
        }
    }
    /* A reboot: everything charged must still be counted. */
    fake_storage_reboot(&fs);
    check_anchor(anchor0);
    if (reopen(&o) == DPM_OK) {
        for (uint32_t c = 1; c <= NC; c++) {
            for (uint32_t p = 1; p < NP; p++) {
                check_floor(&l, c, p);
            }
        }
        check_dev_floor(&l);
    }
    check_anchor(anchor0);
    return 0;
}
