/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the privacy ledger recovering from arbitrary storage contents
 * (dpm_ledger_open), then charging and answering over it. Whatever storage holds (damage,
 * other firmware, an attacker with flash access), the ledger must not crash, and it must
 * never let a device spend past a budget.
 * Input: byte 0 flags (bit 0 NOR-flash semantics, bit 1 a larger region, bit 2 a storage
 * fault at the operation byte 1 names, bit 3 the fault tears), bytes 2..9 eight operations
 * (low 2 bits: charge, charge, query, reopen; then campaign 1..4, period 1..4, ε 1/4..1),
 * the rest the region's initial bytes (0xFF beyond the input).
 * Checked beyond the sanitizers (per campaign and period, budget 1.0):
 *   - a charge returns DPM_OK only if the spending it started from plus ε is within the
 *     budget, and the ledger then answers exactly that total;
 *   - DPM_ERR_BUDGET only if it is not within the budget;
 *   - once corrupt, every charge fails closed until a reset;
 *   - no total that a DPM_OK charge made durable is ever answered lower later, after a
 *     reopen (a reboot) included, except when the storage fault interrupted a charge of a
 *     later period of the same campaign (the old period is then legitimately closed). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/budget.h"
#include "fake_storage.h"

#define BUDGET 65536u
#define NC 4
#define NP 5

static uint8_t mem[2 * DPM_LEDGER_MIN_REGION + 64];

/* The smallest total each (campaign, period) may show: what DPM_OK charges made durable. */
static uint32_t floor_of[NC + 1][NP];
static int newer_attempt[NC + 1][NP]; /* a charge of a later period of it was attempted */

static void check_floor(dpm_ledger_t *l, uint32_t c, uint32_t p)
{
    dpm_eps_t s = 0;
    dpm_status_t st = dpm_ledger_spent(l, c, p, &s);
    if (st == DPM_OK && s < floor_of[c][p]) {
        abort(); /* a durable charge was forgotten */
    }
    if (st == DPM_ERR_PARAM && floor_of[c][p] > 0 && !newer_attempt[c][p]) {
        abort(); /* the period of a durable charge looks closed, yet nothing later was charged */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10) {
        return 0;
    }
    uint8_t flags = data[0];
    uint32_t region = flags & 2u ? (uint32_t)sizeof(mem) : DPM_LEDGER_MIN_REGION;
    fake_storage_t fs;
    fake_storage_init(&fs, mem, sizeof(mem), flags & 1u);
    size_t n = size - 10 < sizeof(mem) ? size - 10 : sizeof(mem);
    memcpy(mem, data + 10, n);
    if (flags & 4u) {
        fake_storage_arm(&fs, 1u + data[1] % 16u, flags & 8u ? FAKE_TORN : FAKE_NOT_APPLIED,
                         (fake_torn_t)((flags >> 4) % 3u));
    }
    dpm_storage_t st = fake_storage_port(&fs);
    memset(floor_of, 0, sizeof(floor_of));
    memset(newer_attempt, 0, sizeof(newer_attempt));

    dpm_ledger_t l;
    dpm_status_t open = dpm_ledger_open(&l, &st, 0, region);
    for (int i = 0; i < 8; i++) {
        uint8_t op = data[2 + i];
        uint32_t c = 1u + ((op >> 2) & 3u);
        uint32_t p = 1u + ((op >> 4) & 3u);
        dpm_eps_t eps = (1u + (op >> 6)) * (BUDGET / 4u);
        if (fs.crashed) {
            fake_storage_reboot(&fs); /* power comes back */
            open = dpm_ledger_open(&l, &st, 0, region);
        }
        if (open != DPM_OK && open != DPM_ERR_CORRUPT) {
            if (open != DPM_ERR_STORAGE || !fs.crashed) {
                abort(); /* RAM storage fails only at the armed fault */
            }
            continue;
        }
        if ((op & 3u) == 3u) {
            open = dpm_ledger_open(&l, &st, 0, region); /* a reboot without a crash */
            continue;
        }
        if ((op & 3u) == 2u) {
            check_floor(&l, c, p);
            continue;
        }
        dpm_eps_t before = 0;
        dpm_status_t q = dpm_ledger_spent(&l, c, p, &before);
        dpm_status_t ch = dpm_ledger_charge(&l, c, p, eps, BUDGET);
        if (ch == DPM_OK) {
            dpm_eps_t after = 0;
            if (q != DPM_OK || (uint64_t)before + eps > BUDGET) {
                abort(); /* charged past the budget, or from an unknown state */
            }
            if (!fs.crashed && (dpm_ledger_spent(&l, c, p, &after) != DPM_OK ||
                                after != before + eps)) {
                abort();
            }
            floor_of[c][p] = before + eps;
            for (uint32_t old = 1; old < p; old++) {
                floor_of[c][old] = 0; /* closed by this charge */
            }
        } else if (ch == DPM_ERR_STORAGE) {
            for (uint32_t old = 1; old < p; old++) {
                newer_attempt[c][old] = 1; /* it may have reached storage, closing them */
            }
        } else if (ch == DPM_ERR_BUDGET) {
            if (q == DPM_OK && (uint64_t)before + eps <= BUDGET) {
                abort();
            }
        } else if (ch == DPM_ERR_CORRUPT) {
            if (dpm_ledger_charge(&l, c, p, eps, BUDGET) != DPM_ERR_CORRUPT) {
                abort(); /* fail closed */
            }
            if (data[2 + i] & 0x80u) {
                (void)dpm_ledger_reset(&l); /* forgets, by contract, even if interrupted */
                memset(floor_of, 0, sizeof(floor_of));
            }
        } else if (ch != DPM_ERR_PARAM && ch != DPM_ERR_BUFFER) {
            abort();
        }
    }
    /* A reboot: everything charged must still be counted. */
    fake_storage_reboot(&fs);
    if (dpm_ledger_open(&l, &st, 0, region) == DPM_OK) {
        for (uint32_t c = 1; c <= NC; c++) {
            for (uint32_t p = 1; p < NP; p++) {
                check_floor(&l, c, p);
            }
        }
    }
    return 0;
}
