/* SPDX-License-Identifier: Apache-2.0 */
/* The privacy ledger: how much ε this device has spent, per campaign and period and in total
 * per device period, kept in port storage so that a reboot cannot reset it.
 *
 * Rule: a report of campaign c in period p that costs ε may be produced only after a charge
 * (dpm_ledger_spend, or dpm_ledger_charge without a device cap) returned DPM_OK, and that
 * returns DPM_OK only if
 *   spent(c, p) + ε <= the campaign's budget, AND
 *   spent in the current device period + ε <= the device cap (when the charge names one),
 * AND the new totals are already durable in storage. The caller perturbs and encodes the
 * report after the charge: a crash in between leaves the ε counted for a report that never
 * existed (over-count, the safe direction), never the reverse. Privacy unit: the device.
 *
 * Two limits, because a campaign's budget is the campaign's word and the cap is the device's:
 *  - per campaign and period: the campaign's budget (what its collector promises analysts);
 *  - per device period, across every campaign (and every kind of charge: a two-aggregator
 *    upload charges its participation here too): the app's cap. Campaign ids, period numbers
 *    and period lengths come from the collector, so they cannot be what bounds the device: a
 *    compromised collector can announce new campaigns at will. The cap counts every charge.
 *
 * Time. The ledger keeps its own clock (seconds) in the record: at each capped charge it
 * becomes max(clock + elapsed_s, wall_s), from what the caller passes (dpm_ledger_cap_t): the
 * wall clock if it has one, and the seconds its monotonic clock measured since its previous
 * successful charge (the device: since dpm_device_init after a reboot, so time powered off
 * does not count). It never goes back, so a clock set back (or unset, reading 1970) only makes
 * periods longer. Device periods are [kW, (k+1)W) on that clock, W = cap->period_seconds.
 * WHAT THE CAP BOUNDS: the ε charged while the ledger clock is in one device period is at
 * most cap->max_eps. Device periods are at least W seconds of real time long as long as the
 * clock is never set FORWARD (a wall clock ahead of real time, or a monotonic clock running
 * fast): then any W seconds of real time meet at most two device periods, so at most
 * 2 x max_eps is released in any W seconds, and at most (m + 1) x max_eps in any m x W
 * seconds. Whoever can set the device's wall clock forward by W opens a new period early:
 * take wall time only from a source the device trusts (never from the collector's answers).
 * A ledger that never gets a clock reading (no wall clock, no monotonic clock) stays in one
 * device period for ever: the cap is then a lifetime cap. A change of W (a new app policy)
 * takes effect when the current device period ends: the record keeps that period's end.
 *
 * Campaign periods. Each campaign keeps only its latest period. A charge for a LATER period
 * starts that campaign's spending at 0 (the old period is closed); a charge for an EARLIER
 * period than the stored one is refused with DPM_ERR_PARAM, because its spending is no longer
 * known and the budget could otherwise be spent twice. An entry is FINISHED once the ledger
 * clock is period_seconds (the campaign's period length, from the charge) past its latest
 * charge: the campaign period that held that charge has ended. Finished entries are freed
 * only when a new campaign needs their slot (until then they still refuse re-spending), so
 * DPM_LEDGER_MAX_CAMPAIGNS limits the campaigns whose periods are open AT ONCE, not the
 * campaigns a device ever joins; a full ledger with no finished entry is DPM_ERR_LEDGER_FULL.
 * A charge without a period length (0, or dpm_ledger_charge) never finishes by time. After an
 * entry was freed, a charge for its campaign starts it afresh, whatever period it names (its
 * earlier spending is counted in the device period, not in the forgotten entry).
 *
 * Storage layout. The caller gives a region [offset, offset + size) of a dpm_storage_t. It is
 * split into two slots, A = [offset, offset + size/2) and B = [offset + size/2, offset +
 * 2 * (size/2)). At rest BOTH slots hold the same record (a mirror) at their start, the rest
 * erased (0xFF). Integers are little-endian:
 *
 *   byte 0..3    magic "DPLG" (0x44 0x50 0x4C 0x47)
 *   byte 4       version, 2
 *   byte 5       n, campaigns in use (0 <= n <= DPM_LEDGER_MAX_CAMPAIGNS)
 *   byte 6..7    reserved, 0
 *   byte 8..11   seq: sequence number: 1 for the first record, +1 (mod 2^32) per charge
 *   byte 12..15  clock: the ledger clock, seconds (0: no reading yet)
 *   byte 16..19  period_end: the end of the device period period_spent belongs to (0: not
 *                yet known: the next capped charge sets it without clearing period_spent)
 *   byte 20..23  period_spent: ε charged in that device period, Q16.16 (saturating)
 *   byte 24..    n entries of 16 bytes: campaign_id u32, period u32, spent u32 (ε, Q16.16,
 *                > 0), free_at u32 (the ledger clock at which the entry is finished;
 *                0xFFFFFFFF: never)
 *   then 4 bytes CRC-32 (IEEE, as zlib) of all the bytes before it
 *
 * A record is 28 + 16 n bytes, at most DPM_LEDGER_RECORD_MAX. A later version must keep its
 * CRC at 28 + 16 n or 16 + 12 n, so that this code sees such a record whole and fails closed
 * on it (rule 3 below) instead of taking it for a torn copy. Version 1 (SDK 0.1.0: 12-byte
 * header, 12-byte entries without free_at) is still read, never written: its entries are kept
 * until their campaign charges again (free_at never), and its total counts as spent in the
 * current device period (period_spent = the sum of its entries, period_end 0), the
 * conservative reading of what it does not record. A charge builds the new record (seq + 1)
 * and writes it into both slots, one after the other: for each, it erases the slot, writes
 * the record and reads it back. It starts with the slot that does not hold the newest valid
 * record, and returns DPM_OK only once both copies are durable. open() restores a missing or
 * stale copy the same way. On flash, place the region so that each half is one or more whole
 * erase sectors (erase() is called on exactly one half).
 *
 * The anchor (optional, dpm_ledger_open_anchored): DPM_LEDGER_ANCHOR_BYTES outside the region
 * (another sector, a one-time-programmable area, another file), written once ("DPLG-ANC")
 * when the ledger is created and never erased by the SDK. It is what tells an erased region
 * on a device that has charged before from a new device's region.
 *
 * Why a power loss never loses a completed charge, and damage never allows re-spending:
 *  1. At every instant storage holds a complete copy of a record that counts every charge
 *     that returned DPM_OK: a charge overwrites one copy only while the other is complete,
 *     and it has not returned while the copies differ. A torn write or erase is a CRC
 *     failure, or an erased slot, in the copy being written; the other copy is used.
 *  2. At rest the two copies are equal, so damage to either one (any bits or bytes, or the
 *     whole slot erased) leaves the other, which is just as new: it is used and the damaged
 *     copy is rewritten. A torn write and damage need not be told apart: in both cases the
 *     remaining valid copy counts every completed charge.
 *  3. Two valid copies must be equal or have consecutive sequence numbers (a charge in
 *     flight; the newer one is used); anything else is corruption. A CRC-valid record with
 *     impossible content or a version this code does not know is corruption too: it was
 *     written whole by other code, and is never a reason to use the other slot.
 *  4. Neither copy valid: if A is anything and B is erased, that is a new region or an
 *     initialisation or reset interrupted while writing A (both write A only while B is
 *     erased), and the ledger starts empty, unless the anchor is written: then, as in every
 *     other state without a valid copy, the ledger fails closed (DPM_ERR_CORRUPT).
 * Damage to both copies fails closed. What this cannot catch: damage that turns a copy into
 * another valid record (CRC-32 catches every burst of up to 32 bits, other damage with
 * probability 1 - 2^-32), and, without an anchor, the whole region erased: no content of the
 * region can tell that from a new device, so it starts an empty ledger. The anchor, kept
 * elsewhere, can: devices that cannot rule out such an erase use dpm_ledger_open_anchored.
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

#include "dpm/bits/storage.h"
#include "dpm/device.h"
#include "dpm/port.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bind *l to the region [offset, offset + size) of *storage, read both slots and check them;
 * a copy that is missing, torn or damaged is rewritten from the other (this writes). An
 * entirely erased region (a new device) becomes an empty ledger: both slots are written. THAT
 * IS ALSO WHAT A REGION ERASED BY ACCIDENT BECOMES: use dpm_ledger_open_anchored on devices
 * where that can happen. Returns:
 *   DPM_OK           *l is ready;
 *   DPM_ERR_CORRUPT  the region holds no valid ledger (no valid copy and not a new or
 *                    half-initialised region, bad magic, impossible values, an unknown
 *                    version, non-consecutive sequence numbers). *l IS bound, in the
 *                    failed-closed state: charges return DPM_ERR_CORRUPT until
 *                    dpm_ledger_reset(l) succeeds;
 *   DPM_ERR_PARAM    NULL pointers, a storage without read/write/erase, size <
 *                    DPM_LEDGER_MIN_REGION, or a region outside storage->size;
 *   DPM_ERR_STORAGE  the port failed to read, or to write a new ledger or a repaired copy.
 * On DPM_ERR_PARAM and DPM_ERR_STORAGE *l is untouched. */
dpm_status_t dpm_ledger_open(dpm_ledger_t *l, const dpm_storage_t *storage, uint32_t offset,
                             uint32_t size);

/* dpm_ledger_open with an anchor: DPM_LEDGER_ANCHOR_BYTES at anchor_offset of *anchor (which
 * may be *storage itself, outside the region, or another storage: an OTP area, another
 * sector, another file), erased (0xFF) on a new device. The anchor is written once a ledger
 * exists and never erased by the SDK, so that an erased region on a device that already had a
 * ledger is DPM_ERR_CORRUPT (fail closed) instead of a new, empty ledger. An anchor that is
 * not erased counts as written whatever it holds. Place it where whatever may erase the
 * ledger region cannot reach it (not in the region's erase sectors). Extra DPM_ERR_PARAM:
 * anchor without read/write/erase, outside anchor->size, or overlapping the region. A
 * device that used dpm_ledger_open gains the protection from its first anchored open. */
dpm_status_t dpm_ledger_open_anchored(dpm_ledger_t *l, const dpm_storage_t *storage,
                                      uint32_t offset, uint32_t size, const dpm_storage_t *anchor,
                                      uint32_t anchor_offset);

/* One charge: what it costs and which campaign period it belongs to. */
typedef struct {
    uint32_t campaign_id;
    uint32_t period;         /* the campaign's period index (the report's period) */
    uint32_t period_seconds; /* the campaign's period length: the entry is finished this long
                                (on the ledger clock) after its latest charge; 0: never by time */
    dpm_eps_t eps;           /* this charge, Q16.16, > 0 */
    dpm_eps_t budget;        /* the campaign's budget per period, Q16.16, > 0 (pass it every
                                time) */
} dpm_ledger_charge_t;

/* The device-wide cap a charge is checked against, and the clock readings that place it in a
 * device period (see "Time" above). */
typedef struct {
    dpm_eps_t max_eps;       /* largest total ε per device period, Q16.16, > 0 */
    uint32_t period_seconds; /* W, the device period's length, > 0 */
    uint32_t wall_s;         /* wall clock, seconds since the Unix epoch (0: none) */
    uint32_t elapsed_s;      /* seconds a monotonic clock measured since the caller's previous
                                successful capped charge on this ledger (0: none) */
} dpm_ledger_cap_t;

/* Charge c->eps to campaign c->campaign_id's budget for c->period and, if cap is not NULL, to
 * the current device period under cap (cap NULL: no device cap, the ledger clock unchanged;
 * the charge still counts in the device period's total). Allowed iff the campaign's spending
 * in c->period (0 if the ledger has only an earlier period of it, or none) plus c->eps is
 * within c->budget, and, with a cap, the device period's total plus c->eps is within
 * cap->max_eps. On DPM_OK the new totals are durable in storage (written and read back)
 * before the function returns: only then may the caller produce the report. Returns:
 *   DPM_OK               charged;
 *   DPM_ERR_BUDGET       the campaign's budget for the period, or the device cap for the
 *                        device period, would be exceeded (nothing written; *why says which);
 *   DPM_ERR_PARAM        NULL or unopened l, NULL c, eps == 0, budget == 0, a cap with
 *                        max_eps or period_seconds 0, or a period EARLIER than the one stored
 *                        for this campaign (its budget cannot be re-spent);
 *   DPM_ERR_LEDGER_FULL  a new campaign while DPM_LEDGER_MAX_CAMPAIGNS are tracked and none
 *                        of them is finished (nothing written);
 *   DPM_ERR_CORRUPT      the ledger is (or is now found) corrupt: fail closed, see
 *                        dpm_ledger_reset;
 *   DPM_ERR_STORAGE      the port failed; the charge may or may not have reached storage (if
 *                        it did, it counts), but the caller must NOT produce the report.
 * *why (if not NULL) names the cause of every refusal (a static string). Cost: one read of
 * the record (of both slots when they differ), then for each of the two slots an erase, a
 * record write and its read-back. */
dpm_status_t dpm_ledger_spend(dpm_ledger_t *l, const dpm_ledger_charge_t *c,
                              const dpm_ledger_cap_t *cap, const char **why);

/* The totals a charge leaves (dpm_ledger_spend_totals). */
typedef struct {
    dpm_eps_t campaign_spent; /* the campaign's total in the charged period, this charge included */
    dpm_eps_t device_spent;   /* the device period's total, this charge included */
} dpm_ledger_totals_t;

/* dpm_ledger_spend, and on DPM_OK *totals (if not NULL) from the record it just wrote: what
 * dpm_ledger_spent and dpm_ledger_period_spent would answer next, without reading the ledger
 * again. Unchanged on any other status. */
dpm_status_t dpm_ledger_spend_totals(dpm_ledger_t *l, const dpm_ledger_charge_t *c,
                                     const dpm_ledger_cap_t *cap, const char **why,
                                     dpm_ledger_totals_t *totals);

/* The same checks as dpm_ledger_spend, and the same answer it would give now, without
 * writing anything (DPM_OK: the charge would be allowed). For callers that must know before
 * they commit to a charge (the device checks everything before it charges). */
dpm_status_t dpm_ledger_check(dpm_ledger_t *l, const dpm_ledger_charge_t *c,
                              const dpm_ledger_cap_t *cap, const char **why);

/* dpm_ledger_spend of {campaign_id, period, 0, eps_q16, budget_q16} without a device cap (the
 * 0.1.0 call, for code that keeps its own clock out of the ledger). Same returns. */
dpm_status_t dpm_ledger_charge(dpm_ledger_t *l, uint32_t campaign_id, uint32_t period,
                               dpm_eps_t eps_q16, dpm_eps_t budget_q16);

/* *spent = ε (Q16.16) charged in the device period that the ledger clock would be in after
 * the readings in cap (which is not NULL; its max_eps is not used): the stored total if that
 * is still the stored period, else 0. Writes nothing. Errors as dpm_ledger_spent. */
dpm_status_t dpm_ledger_period_spent(dpm_ledger_t *l, const dpm_ledger_cap_t *cap,
                                     dpm_eps_t *spent);

/* *spent = ε (Q16.16) charged for campaign_id in `period`: the stored total if the ledger's
 * period for the campaign is `period`, 0 if it is earlier or the campaign is unknown.
 * DPM_ERR_PARAM (and *spent untouched) for NULL pointers or an EARLIER period than the stored
 * one (its total is no longer kept); DPM_ERR_CORRUPT / DPM_ERR_STORAGE as dpm_ledger_charge. */
dpm_status_t dpm_ledger_spent(dpm_ledger_t *l, uint32_t campaign_id, uint32_t period,
                              dpm_eps_t *spent);

/* Forget everything and start an empty ledger (the only way out of DPM_ERR_CORRUPT). Erases
 * slot B, then writes an empty record into A and then B (and writes the anchor if there is one
 * and it is erased); a crash part-way leaves either the old ledger or an interrupted reset,
 * which the next open completes (with an anchor: reports DPM_ERR_CORRUPT, reset again).
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

/* The device's ledger (to query spending, or dpm_ledger_reset after DPM_ERR_CORRUPT). */
dpm_ledger_t *dpm_device_ledger(dpm_device_t *d);

#ifdef __cplusplus
}
#endif

#endif /* DPM_BUDGET_H */
