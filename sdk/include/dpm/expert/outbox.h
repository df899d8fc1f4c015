/* SPDX-License-Identifier: Apache-2.0 */
/* The outbox: reports kept in port storage until a collector accounts for them. The device
 * (dpm/device.h) owns one and queues every report into it; an app with its own HTTPS stack (a
 * phone) posts the stored bytes itself: dpm_outbox_next / dpm_outbox_read to get them,
 * dpm_outbox_remove once its own POST got a 2xx (dpm_device_outbox gives the device's outbox).
 * Firmware lets the SDK post them (dpm/expert/uploader.h, or dpm_device_flush).
 *
 * Delivery guarantee: a report whose dpm_outbox_put returned DPM_OK is durable and stays in
 * the outbox until a collector's BatchResponse accounted for it (a 2xx counting every report
 * of the batch as accepted or duplicate), or rejected it by id. Retries send the very same
 * stored bytes, so the report id is unchanged and the collector's de-duplication makes the
 * delivery count exactly once. Storage damage can still destroy a stored report: then it is
 * counted, never lost silently (dpm_outbox_stats, Batch.lost_reports).
 *
 * The storage format, recovery and compaction: dpm/bits/storage.h, beside dpm_outbox_t. */
#ifndef DPM_EXPERT_OUTBOX_H
#define DPM_EXPERT_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/bits/storage.h"
#include "dpm/device.h"
#include "dpm/port.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bind *ob to [offset, offset + size) of *storage and recover (see "Recovery" above): choose
 * the newest bank with a valid header copy, walk its log past damaged records, keep every
 * complete pending record, count the losses, and compact at once if anything needed repair
 * (this writes). A fresh region (all 0xFF), or one whose very first format was interrupted,
 * is formatted. Returns DPM_OK when the outbox is usable: CHECK dpm_outbox_stats, whose `lost`
 * says whether reports were lost to damage (found now or before) and `found_*` what this
 * open repaired. DPM_ERR_CORRUPT if no bank has a valid header copy and the region is not
 * fresh, or a bank's two copies contradict each other (*ob untouched; dpm_outbox_format
 * discards the region, and with it the reports: the app knows they are lost, not how
 * many); DPM_ERR_PARAM for NULL pointers, a storage without read/write/erase, size <
 * DPM_OUTBOX_MIN_REGION or a region outside storage->size (*ob untouched); DPM_ERR_STORAGE
 * if the port failed, repairs included (*ob untouched). */
dpm_status_t dpm_outbox_open(dpm_outbox_t *ob, const dpm_storage_t *storage, uint32_t offset,
                             uint32_t size);

/* dpm_outbox_open with an anchor: DPM_OUTBOX_ANCHOR_BYTES at anchor_offset of *anchor (which
 * may be *storage itself, outside the region, or another storage: another sector, another
 * file, an OTP area), erased (0xFF) on a new device. Written once the outbox exists and never
 * erased by the SDK; an anchor that is not erased counts as written whatever it holds. A
 * region that reads as new under a written anchor was erased: it is formatted and counted as
 * one lost report (see "The anchor" above), and the open returns DPM_OK: CHECK
 * dpm_outbox_stats (found_erased, lost). Every later recovery of this outbox (after a failed
 * storage call) checks the anchor too. Extra DPM_ERR_PARAM: an anchor without
 * read/write/erase, outside anchor->size, or overlapping the region. A device that used
 * dpm_outbox_open gains the protection from its first anchored open. */
dpm_status_t dpm_outbox_open_anchored(dpm_outbox_t *ob, const dpm_storage_t *storage,
                                      uint32_t offset, uint32_t size, const dpm_storage_t *anchor,
                                      uint32_t anchor_offset);

/* Erase the region and start an empty outbox (no loss count either): every stored report is
 * lost. For a region that dpm_outbox_open called corrupt, or to discard the outbox
 * deliberately. Same parameters and errors as dpm_outbox_open (no DPM_ERR_CORRUPT). The
 * outbox it binds has no anchor: the next dpm_outbox_open_anchored checks (and writes) it. */
dpm_status_t dpm_outbox_format(dpm_outbox_t *ob, const dpm_storage_t *storage, uint32_t offset,
                               uint32_t size);

/* Store one encoded report (dpm_report_encode output: it must decode with dpm_report_decode
 * and start with its 16-byte report id, 18 <= len <= DPM_OUTBOX_MAX_PAYLOAD). On DPM_OK the
 * record is durable. Putting a report whose id is already pending is idempotent: DPM_OK and
 * nothing written if the bytes are identical, DPM_ERR_PARAM if they differ (the outbox never
 * holds two records with one id); the look-up reads every pending record, so this call's cost
 * grows with the outbox (the device's report calls, whose ids are fresh, skip it). Runs a step
 * of the compaction first when one is due or under way (see "Compaction"). Returns
 * DPM_ERR_BUFFER when the pending reports leave no room (see dpm_outbox_room: check it
 * BEFORE charging the ledger), DPM_ERR_PARAM for bad arguments or bytes that are not a
 * report, DPM_ERR_STORAGE if the port failed (the report is not acknowledged as stored; the
 * outbox re-reads storage on its next use). */
dpm_status_t dpm_outbox_put(dpm_outbox_t *ob, const uint8_t *report, size_t len);

/* 1 if a report of len payload bytes can be put now (possibly after a compaction), else 0
 * (also for NULL or an unopened outbox). The pending records may fill the share of a bank that
 * "Compaction" above names: a larger len asks for more slack. */
int dpm_outbox_room(const dpm_outbox_t *ob, size_t len);

/* Number of pending records (0 for NULL). */
uint32_t dpm_outbox_pending(const dpm_outbox_t *ob);

/* Fill *s (see dpm_outbox_stats_t). DPM_ERR_PARAM for NULL pointers or an unopened outbox. */
dpm_status_t dpm_outbox_stats(const dpm_outbox_t *ob, dpm_outbox_stats_t *s);

/* A collector acknowledged n lost reports (a valid 2xx to a Batch whose lost_reports was n):
 * subtract them from the loss count, durably (one compaction). dpm_upload_flush calls it; an
 * app with its own HTTPS stack sends dpm_outbox_stats' lost in Batch.lost_reports and calls
 * it after an acknowledged batch. DPM_ERR_PARAM for an unopened outbox or n above the current
 * count (nothing changed); DPM_ERR_STORAGE if the compaction failed (the acknowledgement is
 * kept in RAM and written by the next compaction; a reboot before that reports the losses
 * again, an over-count the collector may see twice). */
dpm_status_t dpm_outbox_ack_lost(dpm_outbox_t *ob, uint32_t n);

/* Iterate pending records in the order they were put. Start with *cursor = 0; each call
 * finds the next pending record at or after *cursor, fills *e, advances *cursor past it and
 * sets *found = 1, or sets *found = 0 at the end. Each record is re-checked (CRC) on the way;
 * a record that fails ends the iteration and the outbox recovers (counting the loss) on its
 * next use.
 * DPM_ERR_PARAM for NULL pointers or an unopened outbox; DPM_ERR_STORAGE if the port failed.
 * *e and *found are written only on DPM_OK. */
dpm_status_t dpm_outbox_next(dpm_outbox_t *ob, uint32_t *cursor, dpm_outbox_entry_t *e, int *found);

/* Copy the payload of entry *e (e->len bytes) into buf. DPM_ERR_BUFFER if cap < e->len;
 * DPM_ERR_PARAM if *e is not a current entry of this outbox (e.g. from before a compaction);
 * DPM_ERR_CORRUPT if the stored bytes no longer match their CRC; DPM_ERR_STORAGE. */
dpm_status_t dpm_outbox_read(dpm_outbox_t *ob, const dpm_outbox_entry_t *e, uint8_t *buf,
                             size_t cap);

/* Remove entry *e for good (delivered with a 2xx, or rejected by id): one 3-byte write.
 * Removing an already removed record is DPM_OK. DPM_ERR_PARAM if *e is not a current
 * entry of this outbox (seq, length or report id differ; DPM_ERR_CORRUPT if e->pos is not
 * even a record, which cannot be told apart from a damaged record); DPM_ERR_STORAGE if the
 * port failed (the record may stay pending and be sent again: harmless, ids
 * de-duplicate). */
dpm_status_t dpm_outbox_remove(dpm_outbox_t *ob, const dpm_outbox_entry_t *e);

/* The device's outbox, for apps that post the stored bytes with their own HTTPS stack
 * (dpm_outbox_next / dpm_outbox_read / dpm_outbox_remove). NULL for NULL or an unopened device. */
dpm_outbox_t *dpm_device_outbox(dpm_device_t *d);

#ifdef __cplusplus
}
#endif

#endif /* DPM_EXPERT_OUTBOX_H */
