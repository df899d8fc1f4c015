/* SPDX-License-Identifier: Apache-2.0 */
/* The layout of the privacy ledger and the outbox, and their storage formats (dpm_device_t
 * holds one of each, in the region the app gives). Not an API: the fields are the SDK's; an app
 * allocates these structs (inside dpm_device_t, dpm_mech_t, its report inputs) and never reads
 * them. The functions that use them are in dpm/expert/budget.h and dpm/expert/outbox.h. */
#ifndef DPM_BITS_STORAGE_H
#define DPM_BITS_STORAGE_H

#include <stdint.h>

#include "dpm/bits/sizes.h"
#include "dpm/port.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the largest ledger record, and the smallest region dpm_ledger_open accepts. */
#define DPM_LEDGER_RECORD_MAX (28u + 16u * (uint32_t)DPM_LEDGER_MAX_CAMPAIGNS)
#define DPM_LEDGER_MIN_REGION (2u * DPM_LEDGER_RECORD_MAX)
/* Bytes of the anchor (see dpm_ledger_open_anchored). */
#define DPM_LEDGER_ANCHOR_BYTES 8u

/* A ledger bound to its storage region. Fill it with dpm_ledger_open; treat as opaque. */
typedef struct {
    const dpm_storage_t *storage; /* not owned; must outlive the ledger */
    uint32_t offset;              /* region start in the storage */
    uint32_t slot_size;           /* bytes per slot: half the region */
    const dpm_storage_t *anchor;  /* NULL, or the anchor's storage (not owned) */
    uint32_t anchor_offset;       /* the anchor's offset in it */
    uint32_t seq;                 /* sequence number of the newest record, as last read */
    dpm_status_t state;           /* DPM_OK, or DPM_ERR_CORRUPT (sticky until reset) */
    uint32_t opened;              /* DPM_LEDGER_OPENED once bound */
} dpm_ledger_t;

#define DPM_LEDGER_OPENED 0x4C504D44u

/* ==== outbox ================================================================================
 *
 * Storage layout. The caller gives a region [offset, offset + size) of a dpm_storage_t. It is
 * split into two banks, A = [offset, offset + size/2) and B = the next size/2 bytes; one of
 * them is active. A bank is a header, written twice, and then a log of records (integers
 * little-endian):
 *
 *   bank header  2 copies of 20 bytes (bytes 0..19 and 20..39), identical:
 *                byte 0..3   magic "DPOB" (0x44 0x50 0x4F 0x42)
 *                byte 4      version, 2
 *                byte 5..7   reserved, 0
 *                byte 8..11  seq: +1 (mod 2^32) at each compaction; the newer valid bank is
 *                            the active one
 *                byte 12..15 lost: reports lost to damage that no collector has acknowledged
 *                byte 16..19 CRC-32 of bytes 0..15
 *   record       byte 0      mark 0xA5 (where recovery looks for the next record)
 *                byte 1      commit: 0xFF as appended; put clears it to 0x00 (a 1-byte
 *                            write) once the record is written and read back
 *                byte 2..4   removed: 0xFF 0xFF 0xFF pending; removal clears all three (one
 *                            3-byte write); removed when at least two are not 0xFF
 *                byte 5      kind, 1 = a report
 *                byte 6..7   n, payload length, 18 <= n <= DPM_OUTBOX_MAX_PAYLOAD
 *                byte 8..11  CRC-32 of bytes 5..7 and the payload
 *                byte 12..   payload: one encoded dpm.v1.Report (starts 0x0A 0x10 + 16-byte id)
 *
 * The CRC covers what never changes; the mark, commit and removal bytes are not covered,
 * because they change in place (commit and removal only clear bits, flash-friendly) or are
 * a hint. A record is valid when its CRC is: damage to its mark or commit byte, or to one of
 * its removal bytes, changes nothing (majority of three).
 *
 * Records are appended back to back after the header: one write of 12 + n bytes (read back),
 * then the commit byte.
 *
 * Compaction moves the pending records into the other bank and makes it active: it erases that
 * bank, copies the pending records into it (committed; removed ones stay behind), and writes
 * its header copies LAST, first copy first. It runs in steps so that no call pays for the
 * whole bank: once the active bank's free end gets short, each put first copies records worth
 * at least DPM_OUTBOX_COPY_RATIO (dpm/config.h) times its own record's bytes (a removed record
 * skipped counts a quarter), so the copy overtakes the log's end before the free end runs out,
 * and the step that reaches the end writes the new bank's header. A removal of a record already
 * copied clears its copy too. The copy's progress lives in RAM only: until the header is
 * written the other bank is not valid, so a crash or a failed storage call leaves the active
 * bank as it was, and the copy starts again. The steps check no CRC (each copy keeps its own,
 * so damage travels with it and is found as anywhere else); the switch happens only if the
 * copy holds exactly the pending bytes, so a length damaged at rest cannot make them skip
 * records: recovery (below) handles that case. The price is room: the pending records may fill
 * (4m - 1) / (4m + 7) of a bank's log, m = DPM_OUTBOX_COPY_RATIO - 1 (58 % for the default 4),
 * less two records of slack (dpm_outbox_room); a bank too small for that keeps the whole log
 * and compacts it in one call. Recovery's repairs (below) compact in one call too.
 *
 * Recovery (open, and the next use after a failed storage call) picks the newest bank with a
 * valid header copy and walks its log. A record that fails its CRC is skipped: the walk
 * resynchronises at the next offset holding a mark and a valid record, so one damaged record
 * loses that record only. The damaged stretch is a LOSS when it held a pending report: its
 * header still says so (mark, not removed; at the end of the log also committed: an
 * uncommitted tail is an append that never returned, not a loss). Then, if anything was not
 * as a healthy outbox leaves it (a header copy damaged or missing, a damaged record, a torn
 * tail, an uncommitted record), it compacts at once: the damaged bytes stay behind, the count
 * of losses moves into the new bank's header, both header copies are fresh.
 *
 * Loss counting: lost = the bank header's count + the pending reports in damaged stretches of
 * the active log - those acknowledged (dpm_outbox_ack_lost). It survives reboots (a
 * recovery that finds the same damage again counts it once: the count only moves into the
 * header together with the compaction that leaves the damage behind) and is reported to the
 * app (dpm_outbox_stats) and to the collector (Batch.lost_reports, see dpm_upload_flush)
 * until a collector acknowledges it.
 *
 * Crash safety:
 *  - put returns DPM_OK only after the whole record and its commit byte are written and read
 *    back: a report the app was told is stored is durable. A torn append leaves an
 *    uncommitted tail (or a complete record without its commit byte, which is kept and
 *    committed by the next recovery); recovery compacts it away.
 *  - Removal clears three bytes with one write; torn, it leaves one cleared byte (still
 *    pending: the report is sent again and the collector de-duplicates it by id) or more
 *    (removed).
 *  - Compaction relies on no atomic multi-byte write at all, only on write() and erase()
 *    being durable, in program order, when they return, on the banks being disjoint, and on
 *    CRC-32 telling a torn header copy from a complete one. Until the first header copy of
 *    the new bank is complete, the old bank is the only valid one and is untouched; from
 *    then on the new bank has the higher seq and holds every pending record (each copy was
 *    read back first). A crash between the two copies leaves one: recovery rewrites both.
 *  - The region starts as both banks erased and becomes bank A's header: a region without
 *    a valid header copy whose banks hold no record (B erased, A's log erased) is a new or
 *    half-formatted region and is formatted; any other region without one is DPM_ERR_CORRUPT
 *    (dpm_outbox_format discards it), never formatted silently.
 *  - The anchor (optional, dpm_outbox_open_anchored), as the ledger's: DPM_OUTBOX_ANCHOR_BYTES
 *    outside the region, written once ("DPOB-ANC") when the outbox exists and never erased by
 *    the SDK. A region that looks new (as above) under a written anchor is an outbox that was
 *    ERASED (a sector erase, a wiped file, a factory tool): the reports it held are gone. It is
 *    formatted so the device goes on, and the loss is counted and reported like any other
 *    (dpm_outbox_stats: lost, found_lost, found_erased; Batch.lost_reports). How many reports
 *    it held is gone with it, so the erase counts as ONE lost report: a lower bound when it
 *    held any, an over-count of one when it was empty (the collector still learns that a
 *    device's outbox was wiped). Without an anchor such an erase reads as a new device and
 *    loses its reports silently: devices whose storage can be erased behind the SDK's back
 *    use the anchor. A format interrupted after its erases (dpm_outbox_format under a written
 *    anchor) reads the same way, an over-count of one.
 * Guarantees under damage at rest (storage that changes bytes after they were read back):
 * one damaged byte anywhere loses at most the one report whose record it hit, and that loss
 * is counted; a damaged bank header copy is restored from the other. Wider damage is
 * recovered as far as records can be found again; a damaged stretch whose record headers
 * cannot be walked counts as one lost report (a lower bound). CRC-32 misses a damaged record
 * with probability 2^-32 (never for bursts of up to 32 bits).
 *
 * On flash, place each bank on whole erase sectors; commit and removal need storage that can
 * clear bits of 1 and 3 bytes in place (NOR flash without ECC words, FRAM, files). */

#define DPM_OUTBOX_MAX_PAYLOAD DPM_REPORT_MAX_BYTES
#define DPM_OUTBOX_HDR_COPY 20u
#define DPM_OUTBOX_BANK_HDR (2u * DPM_OUTBOX_HDR_COPY)
#define DPM_OUTBOX_REC_HDR 12u
#define DPM_OUTBOX_RECORD_MAX (DPM_OUTBOX_REC_HDR + DPM_OUTBOX_MAX_PAYLOAD)
/* Smallest region: each bank holds its header and one largest record. */
#define DPM_OUTBOX_MIN_REGION (2u * (DPM_OUTBOX_BANK_HDR + DPM_OUTBOX_RECORD_MAX))
/* Bytes of the outbox's anchor (see dpm_outbox_open_anchored). */
#define DPM_OUTBOX_ANCHOR_BYTES 8u

/* An outbox bound to its storage region. Fill it with dpm_outbox_open; treat as opaque (all
 * zero: not open; every call refuses it). (Laid out to the byte: an app holds one in its
 * dpm_device_t, within the SDK's RAM budget.) */
typedef struct {
    const dpm_storage_t *storage; /* not owned; must outlive the outbox */
    const dpm_storage_t *anchor;  /* NULL, or the anchor's storage (not owned) */
    uint32_t offset;              /* region start in the storage */
    uint32_t bank_size;           /* half the region */
    uint32_t anchor_offset;       /* the anchor's offset in its storage */
    uint32_t seq;                 /* sequence number of the active bank */
    uint32_t wpos;                /* offset of the next record from the bank start */
    uint32_t pending;             /* records waiting for delivery */
    uint32_t pending_bytes;       /* their size, record headers included */
    uint32_t lost_base;           /* losses carried in the active bank's header (a recovery that
                                     finds damage compacts at once, moving them here) */
    uint32_t lost_acked;          /* acknowledged, not yet written to a header */
    uint32_t copy_from;           /* while copying: the next record to copy (active bank) */
    uint32_t copy_to;             /* while copying: where it goes in the other bank */
    uint32_t copy_bytes;          /* while copying: pending bytes in the other bank (the switch
                                     needs them to equal pending_bytes) */
    uint16_t found_lost;          /* since open (saturating): see dpm_outbox_stats_t */
    uint16_t found_damaged;
    uint16_t found_headers;
    uint8_t found_erased;
    uint8_t active : 1;  /* 0 = bank A, 1 = bank B */
    uint8_t dirty : 1;   /* the log ends in a torn record: compact before appending */
    uint8_t stale : 1;   /* a storage call failed: re-read storage before next use */
    uint8_t copying : 1; /* a compaction in steps is under way (RAM only, see "Compaction") */
} dpm_outbox_t;

/* What the outbox holds, and what its recoveries found (dpm_outbox_stats). */
typedef struct {
    uint32_t pending;       /* reports waiting for delivery */
    uint32_t lost;          /* reports lost to storage damage (their ε was spent, they will
                               never arrive) that no collector has acknowledged yet: persists
                               across reboots, sent as Batch.lost_reports. 0 when healthy */
    uint32_t found_lost;    /* of the losses, how many recoveries found since open (the rest
                               were found before an earlier reboot); the found_* counts
                               saturate at 65535 (found_erased at 255) */
    uint32_t found_damaged; /* damaged records recoveries skipped since open (lost or not: a
                               damaged record that was already removed loses nothing) */
    uint32_t found_headers; /* damaged or missing bank header copies restored since open */
    uint32_t found_erased;  /* times since open the whole region was found erased under a
                               written anchor (each counted as one lost report, see
                               dpm_outbox_open_anchored) */
} dpm_outbox_stats_t;

/* One pending record, as returned by dpm_outbox_next. */
typedef struct {
    uint32_t pos; /* record offset in the active bank */
    uint32_t seq; /* the bank's seq when read: an entry is void after a compaction */
    uint32_t len; /* payload bytes */
    uint8_t report_id[DPM_REPORT_ID_BYTES];
} dpm_outbox_entry_t;

#ifdef __cplusplus
}
#endif

#endif /* DPM_BITS_STORAGE_H */
