/* SPDX-License-Identifier: Apache-2.0 */
/* The privacy ledger: how much ε this device has spent, per campaign and period, kept in port
 * storage so that a reboot cannot reset it.
 *
 * Rule: a report of campaign c in period p that costs ε may be produced only after
 * dpm_ledger_charge(c, p, ε, budget) returned DPM_OK, and that call returns DPM_OK only if
 * spent(c, p) + ε <= budget AND the new total is already durable in storage. The caller
 * perturbs and encodes the report after the charge: a crash in between leaves the ε counted
 * for a report that never existed (over-count, the safe direction), never the reverse.
 * Privacy unit: the device. The ledger bounds the total ε that one device releases per
 * (campaign, period); sequential composition makes that total the device's ε for the period.
 *
 * Periods: each campaign keeps only its latest period. A charge for a LATER period starts
 * that campaign's spending at 0 (the old period is closed); a charge for an EARLIER period
 * than the stored one is refused with DPM_ERR_PARAM, because its spending is no longer known
 * and the budget could otherwise be spent twice.
 *
 * Storage layout. The caller gives a region [offset, offset + size) of a dpm_storage_t. It is
 * split into two slots, A = [offset, offset + size/2) and B = [offset + size/2, offset +
 * 2 * (size/2)). Each slot holds at most one record at its start, the rest erased (0xFF).
 * Integers are little-endian:
 *
 *   byte 0..3    magic "DPLG" (0x44 0x50 0x4C 0x47)
 *   byte 4       version, 1
 *   byte 5       n, campaigns in use (0 <= n <= DPM_LEDGER_MAX_CAMPAIGNS)
 *   byte 6..7    reserved, 0
 *   byte 8..11   seq: sequence number: 1 for the first record, +1 (mod 2^32) per record
 *   byte 12..    n entries of 12 bytes: campaign_id u32, period u32, spent u32 (ε, Q16.16, > 0)
 *   then 4 bytes CRC-32 (IEEE, as zlib) of all the bytes before it
 *
 * A record is 16 + 12 n bytes, at most DPM_LEDGER_RECORD_MAX. Every charge writes a complete
 * new record (seq + 1) into the slot that does NOT hold the newest valid record: it erases
 * that slot, writes the record, and reads it back. On flash, place the region so that each
 * half is one or more whole erase sectors (erase() is called on exactly one half).
 *
 * Crash safety (why a crash, a torn write or a torn erase never makes the ledger under-count):
 *  1. The newest record that a DPM_OK charge wrote is never touched by the next charge: that
 *     one writes the other slot. The slot holding it is erased only by the charge after next,
 *     which runs only once the next charge has completed a newer valid record. So at every
 *     instant storage holds a valid record that includes every charge that returned DPM_OK.
 *  2. A torn write leaves a prefix of the new record followed by erased bytes (or garbage):
 *     its CRC-32 fails and the slot is ignored, so recovery finds the previous record. That
 *     record lacks only the interrupted charge, which never returned DPM_OK, so the caller
 *     never produced its report: nothing that exists goes uncounted. If the whole record did
 *     land before the crash, it is used, and counts a report that does not exist (safe).
 *  3. Two valid records always have consecutive sequence numbers (the newer one is used);
 *     anything else is corruption. A CRC-valid record with impossible content, or with a
 *     version this code does not know, is corruption too, never a reason to fall back to the
 *     older slot (that fall-back would be an under-count).
 *  4. The region is initialised by writing slot A while B is erased. A region where A is not
 *     valid and B is entirely erased can therefore only be an interrupted initialisation (or
 *     an interrupted dpm_ledger_reset, which erases B first), and is initialised again; any
 *     other state without a valid record is corruption.
 * Outside this fault model: storage that silently changes a record after it was written and
 * read back. If that hits both slots, or produces impossible values, the ledger fails closed
 * (DPM_ERR_CORRUPT). If it destroys only the newest slot, the older slot is used, which can
 * forget the one charge made in between; it cannot be told apart from a torn write (use
 * storage with ECC where that matters).
 *
 * Corruption fails closed: once the ledger is found corrupt (at open or at any later call),
 * every charge returns DPM_ERR_CORRUPT, and so no report is produced, until the app calls
 * dpm_ledger_reset.
 *
 * Concurrency: one dpm_ledger_t per region; calls on it must not overlap (use the port lock).
 * The struct caches nothing that matters for safety: every call re-reads the records. */
#ifndef DPM_BUDGET_H
#define DPM_BUDGET_H

#include <stdint.h>

#include "dpm/port.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the largest ledger record, and the smallest region dpm_ledger_open accepts. */
#define DPM_LEDGER_RECORD_MAX (16u + 12u * (uint32_t)DPM_LEDGER_MAX_CAMPAIGNS)
#define DPM_LEDGER_MIN_REGION (2u * DPM_LEDGER_RECORD_MAX)

/* A ledger bound to its storage region. Fill it with dpm_ledger_open; treat as opaque. */
typedef struct {
    const dpm_storage_t *storage; /* not owned; must outlive the ledger */
    uint32_t offset;              /* region start in the storage */
    uint32_t slot_size;           /* bytes per slot: half the region */
    uint32_t seq;                 /* sequence number of the newest record, as last read */
    dpm_status_t state;           /* DPM_OK, or DPM_ERR_CORRUPT (sticky until reset) */
    uint32_t opened;              /* DPM_LEDGER_OPENED once bound */
} dpm_ledger_t;

#define DPM_LEDGER_OPENED 0x4C504D44u

/* Bind *l to the region [offset, offset + size) of *storage, read both slots and check them.
 * An entirely erased region (a new device) becomes an empty ledger: slot A is written.
 * Returns:
 *   DPM_OK           *l is ready;
 *   DPM_ERR_CORRUPT  the region holds no valid ledger (bad CRC in both slots, bad magic,
 *                    impossible values, an unknown version, non-consecutive sequence
 *                    numbers). *l IS bound, in the failed-closed state: charges return
 *                    DPM_ERR_CORRUPT until dpm_ledger_reset(l) succeeds;
 *   DPM_ERR_PARAM    NULL pointers, a storage without read/write/erase, size <
 *                    DPM_LEDGER_MIN_REGION, or a region outside storage->size;
 *   DPM_ERR_STORAGE  the port failed to read, or to write a new ledger.
 * On DPM_ERR_PARAM and DPM_ERR_STORAGE *l is untouched. */
dpm_status_t dpm_ledger_open(dpm_ledger_t *l, const dpm_storage_t *storage, uint32_t offset,
                             uint32_t size);

/* Spend eps_q16 (ε of one report, Q16.16, > 0) of campaign_id's budget for `period`, whose
 * total per period is budget_q16 (Q16.16, > 0; pass the campaign's budget every time).
 * Allowed iff spent + eps_q16 <= budget_q16, where spent is this campaign's spending in
 * `period` (0 if the ledger has only an earlier period of it, or none). On DPM_OK the new total
 * is durable in storage (written and read back) before the function returns: only then may
 * the caller produce the report. Returns:
 *   DPM_OK           charged;
 *   DPM_ERR_BUDGET   the report would exceed the budget (nothing written);
 *   DPM_ERR_PARAM    NULL or unopened l, eps_q16 == 0, budget_q16 == 0, or a period EARLIER
 *                    than the one stored for this campaign (its budget cannot be re-spent);
 *   DPM_ERR_BUFFER   a new campaign while DPM_LEDGER_MAX_CAMPAIGNS are already tracked;
 *   DPM_ERR_CORRUPT  the ledger is (or is now found) corrupt: fail closed, see
 *                    dpm_ledger_reset;
 *   DPM_ERR_STORAGE  the port failed; the charge may or may not have reached storage (if it
 *                    did, it counts), but the caller must NOT produce the report.
 * Cost: two slot reads, one slot erase, one record write and its read-back. */
dpm_status_t dpm_ledger_charge(dpm_ledger_t *l, uint32_t campaign_id, uint32_t period,
                               dpm_eps_t eps_q16, dpm_eps_t budget_q16);

/* *spent = ε (Q16.16) charged for campaign_id in `period`: the stored total if the ledger's
 * period for the campaign is `period`, 0 if it is earlier or the campaign is unknown.
 * DPM_ERR_PARAM (and *spent untouched) for NULL pointers or an EARLIER period than the stored
 * one (its total is no longer kept); DPM_ERR_CORRUPT / DPM_ERR_STORAGE as dpm_ledger_charge. */
dpm_status_t dpm_ledger_spent(dpm_ledger_t *l, uint32_t campaign_id, uint32_t period,
                              dpm_eps_t *spent);

/* Forget everything and start an empty ledger (the only way out of DPM_ERR_CORRUPT). Erases
 * slot B, then slot A, then writes an empty record into A; a crash part-way leaves either the
 * old ledger or an interrupted reset that the next open completes.
 *
 * THIS FORFEITS THE PROTECTION: after a reset the device may spend again, in the current
 * periods, budget that it has already spent, so the reports of those periods can together
 * exceed each campaign's ε. An app may reset only when it can vouch that this cannot happen:
 *   - the device has never released a report under these campaigns (e.g. first provisioning,
 *     or a factory reset that also erased the outbox and stopped all uploads); or
 *   - it will not report again under any campaign until each campaign's current period has
 *     ended (the safe recovery from DPM_ERR_CORRUPT: reset, then skip the current period);
 *   - or its users and the campaign owner accept the extra ε for the current periods.
 * Returns DPM_OK (l is ready and no longer failed-closed), DPM_ERR_PARAM for NULL or an
 * unopened l, DPM_ERR_STORAGE if the port failed (l keeps its previous state). */
dpm_status_t dpm_ledger_reset(dpm_ledger_t *l);

#ifdef __cplusplus
}
#endif

#endif /* DPM_BUDGET_H */
