/* SPDX-License-Identifier: Apache-2.0 */
/* Getting reports to the collector: a persistent outbox in port storage, a minimal HTTP/1.1
 * client over the port transport, and a flush that posts batches with retry, backoff and
 * idempotent report ids.
 *
 * The pieces are separable (Memfault's packetizer / HTTP split): an app with its own HTTPS
 * stack (a phone) uses only the outbox (dpm_outbox_next / dpm_outbox_read to get the stored
 * bytes, dpm_outbox_remove once its own POST got a 2xx); firmware uses dpm_upload_flush.
 *
 * Delivery guarantee: a report whose dpm_outbox_put returned DPM_OK is durable and stays in
 * the outbox until a collector's BatchResponse accounted for it (a 2xx counting every report
 * of the batch as accepted or duplicate), or rejected it by id. Retries send the very same
 * stored bytes, so the report id is unchanged and the collector's de-duplication makes the
 * delivery count exactly once. Storage damage can still destroy a stored report: then it is
 * counted, never lost silently (dpm_outbox_stats, Batch.lost_reports). */
#ifndef DPM_UPLOAD_H
#define DPM_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/noise.h"
#include "dpm/port.h"
#include "dpm/report.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* ==== HTTP/1.1 ============================================================================
 * Our own minimal client: one request writer and a strict, bounded response parser. No
 * chunked transfer coding, no redirects, no compression: the collector is ours. */

#define DPM_HTTP_MAX_LINE 256          /* status line or one header line, CRLF excluded */
#define DPM_HTTP_MAX_HEADERS 32        /* header fields per response */
#define DPM_HTTP_MAX_HEADER_BYTES 4096 /* status line + all header lines, CRLFs included */
#define DPM_HTTP_MAX_HOST 255
#define DPM_HTTP_MAX_PATH 255
/* Longest bearer token (dpm-collector reads Authorization values of up to 255 bytes, and
 * "Bearer " takes 7 of them). */
#define DPM_HTTP_MAX_TOKEN 248

/* Write the head of a POST request into buf:
 *   POST <path> HTTP/1.1\r\n Host: <host>\r\n Content-Type: application/x-protobuf\r\n
 *   Content-Length: <content_length>\r\n Connection: keep-alive\r\n \r\n
 * host: 1..DPM_HTTP_MAX_HOST characters of letters, digits and "-._:[]" (a name or address,
 * optionally with :port). path: starts with '/', 1..DPM_HTTP_MAX_PATH visible ASCII
 * characters (0x21..0x7E). DPM_ERR_PARAM for NULL or invalid host/path, DPM_ERR_BUFFER if
 * cap is too small (buf and *len untouched on either). *len = bytes written (no NUL). */
dpm_status_t dpm_http_write_request(uint8_t *buf, size_t cap, const char *host, const char *path,
                                    uint32_t content_length, size_t *len);

/* The same for a GET without a body (Accept: application/x-protobuf instead of the
 * Content-* headers). Same checks and errors. */
dpm_status_t dpm_http_write_get(uint8_t *buf, size_t cap, const char *host, const char *path,
                                size_t *len);

/* GET /v1/campaigns/<id> from the collector over the connected transport t within timeout_ms:
 * on DPM_OK the campaign's bytes (a dpm.v1.Campaign that decodes and whose id is `id`, not yet
 * checked against the policy) are work[0 .. *len), for an app that keeps a copy so it can
 * report while the collector is unreachable (check them with dpm_device_accept_campaign).
 * work needs DPM_CAMPAIGN_MAX_BYTES + 512 bytes. A non-200 answer, with *reason:
 * DPM_ERR_TRANSPORT for 408, 429 and 5xx (try later: the kept copy serves meanwhile),
 * DPM_ERR_AUTH for 401/403, DPM_ERR_PROTOCOL for the others (404: "unknown campaign");
 * DPM_ERR_PROTOCOL also for bytes that are not a campaign, or a campaign with ANOTHER id than
 * the one requested (a collector answering with other campaigns could otherwise make the
 * device spend again under new ids; the device cap, dpm_policy_cap_t, bounds that too).
 * Transport errors as
 * dpm_http_read_response, DPM_ERR_PARAM for NULL or a small work. */
dpm_status_t dpm_campaign_get(const dpm_transport_t *t, const dpm_clock_t *c, const char *host,
                              uint32_t id, uint32_t timeout_ms, uint8_t *work, size_t work_cap,
                              size_t *len, const char **reason);

/* Fetch campaign `id` from the collector (GET /v1/campaigns/<id>) over the connected
 * transport t within timeout_ms, then decode and validate it into a ready mechanism *m
 * (dpm_campaign_decode + dpm_mech_init). work (>= DPM_CAMPAIGN_MAX_BYTES + 512 bytes) holds the
 * request and the response body. The statuses of dpm_campaign_get for a non-200 answer,
 * DPM_ERR_PROTOCOL for bytes that are not a campaign or a campaign with another id than `id`,
 * the dpm_mech_init errors for a campaign that must not run (with *reason), transport errors
 * as dpm_http_read_response. *m is untouched on any error. */
dpm_status_t dpm_campaign_fetch(const dpm_transport_t *t, const dpm_clock_t *c, const char *host,
                                uint32_t id, uint32_t timeout_ms, uint8_t *work, size_t work_cap,
                                dpm_mech_t *m, const char **reason);

/* A response being parsed. Fill with dpm_http_response_init; read the public fields after
 * dpm_http_response_done. */
typedef struct {
    uint32_t status;         /* 100..599 */
    uint32_t content_length; /* body bytes announced */
    uint32_t retry_after_s;  /* Retry-After in seconds (delta-seconds form only; an HTTP date
                                or a malformed value is ignored), 0 if absent; at most 86400 */
    uint8_t close;           /* the server closes the connection after this response */
    uint8_t *body;           /* caller buffer: the body lands here */
    size_t body_cap;
    size_t body_len;
    /* parser state */
    uint32_t state;
    uint8_t have_length;
    uint32_t nheaders;
    uint32_t header_bytes;
    uint32_t line_len;
    char line[DPM_HTTP_MAX_LINE + 1];
} dpm_http_response_t;

/* Start parsing a response whose body may take up to body_cap bytes of body (body may be
 * NULL if body_cap == 0). DPM_ERR_PARAM for NULL r, or body NULL with body_cap > 0. */
dpm_status_t dpm_http_response_init(dpm_http_response_t *r, uint8_t *body, size_t body_cap);

/* Feed received bytes. Consumes bytes until the response is complete; *used = how many (the
 * rest belong to no response of ours). Returns DPM_ERR_PROTOCOL, and stays failed, for:
 * a status line that is not "HTTP/1.x DDD[ reason]" with DDD in 100..599; a line not ended
 * by CRLF; a control character in a line; a line over DPM_HTTP_MAX_LINE, more than
 * DPM_HTTP_MAX_HEADERS headers or DPM_HTTP_MAX_HEADER_BYTES of head; a malformed header
 * (no name, whitespace before ':', obsolete line folding); any Transfer-Encoding (chunked is
 * not supported); a missing, repeated, non-numeric or > 10^9 Content-Length (except for
 * 204 and 304, which have no body); a body longer than body_cap; a 101 response.
 * Interim 1xx responses are skipped. "Connection: close" and HTTP/1.0 set r->close;
 * "Retry-After: N" sets r->retry_after_s. */
dpm_status_t dpm_http_response_feed(dpm_http_response_t *r, const uint8_t *data, size_t len,
                                    size_t *used);

/* 1 once a complete response has been parsed, else 0. */
int dpm_http_response_done(const dpm_http_response_t *r);

/* Send all len bytes through t before deadline_ms (on c's monotonic clock). A send() that
 * returns 0 is retried (the port should block briefly rather than return 0 at once, or
 * this spins until the deadline). DPM_ERR_TRANSPORT if send() fails (< 0) or claims more
 * than asked; DPM_ERR_TIMEOUT at the deadline; DPM_ERR_PARAM for NULL pointers. */
dpm_status_t dpm_http_send_all(const dpm_transport_t *t, const dpm_clock_t *c, uint64_t deadline_ms,
                               const uint8_t *buf, size_t len);

/* Receive and parse one response into *r (initialised by the caller) before deadline_ms.
 * The deadline is checked before every recv(), so a peer that trickles bytes or sends none
 * (slowloris) ends in DPM_ERR_TIMEOUT. DPM_ERR_TRANSPORT if recv() fails or the connection
 * closes before the response is complete; DPM_ERR_PROTOCOL as dpm_http_response_feed, or if
 * the peer sends bytes past the end of the response. */
dpm_status_t dpm_http_read_response(const dpm_transport_t *t, const dpm_clock_t *c,
                                    uint64_t deadline_ms, dpm_http_response_t *r);

/* ==== upload ============================================================================ */

/* Largest batch: dpm.options bounds Batch.reports (and BatchResponse.rejects) to 8. */
#define DPM_UPLOAD_MAX_BATCH 8u
/* Smallest work buffer dpm_upload_flush accepts; it also refuses a buffer whose room after
 * the longest request head (it depends on host, path and token) cannot hold one largest report
 * and the loss count (3 + DPM_REPORT_MAX_BYTES + 6). DPM_UPLOAD_MIN_WORK + 256 bytes (plus the
 * token's length) is a good size: the head, several reports and a BatchResponse with 8
 * rejects fit. */
#define DPM_UPLOAD_MIN_WORK (256u + 3u + DPM_REPORT_MAX_BYTES + 6u)
#define DPM_UPLOAD_OPENED 0x55504D44u
/* The rejects one dpm_upload_flush call returns (every one: see dpm_upload_result_t.more). */
#define DPM_UPLOAD_MAX_REJECTS DPM_UPLOAD_MAX_BATCH
/* A reject's reason, NUL included (dpm.options: Reject.reason max_size 48). */
#define DPM_UPLOAD_REASON_BYTES 48u

typedef struct {
    const char *host;         /* Host header (see dpm_http_write_request); not copied */
    const char *path;         /* request path, e.g. "/v1/reports"; not copied */
    uint32_t max_reports;     /* reports per request, 1..DPM_UPLOAD_MAX_BATCH */
    uint32_t max_bytes;       /* body bytes per request, >= 1 (a single larger report is
                                 still sent, alone) */
    uint32_t timeout_ms;      /* deadline of one request/response exchange, >= 1 */
    uint32_t backoff_base_ms; /* first retry delay, >= 1 */
    uint32_t backoff_cap_ms;  /* largest nominal delay, >= backoff_base_ms */
    /* Optional device credential (NULL: none): a bearer token, sent as "Authorization: Bearer
     * <token>" with every POST (never with dpm_campaign_get, which needs none). 1 ..
     * DPM_HTTP_MAX_TOKEN characters of RFC 6750's b64token: letters, digits, "-._~+/", then
     * optionally "=" padding; NUL-terminated. NOT copied: the uploader keeps this pointer, so
     * the token stays in the app's memory (which must outlive the uploader; the app may
     * rewrite it in place to renew it, checked again at every request). The SDK never logs
     * it, and wipes the request head that carried it from the work buffer once it is sent (the
     * TLS layer's own buffers are the port's: port/tls). Beside it, or instead, a TLS client
     * certificate (dpm_tls_config_t.client_cert); a device holding both gets a token bound to
     * its certificate's identity from the collector (README: credentials). */
    const char *token;
} dpm_upload_config_t;

/* Upload state (retry schedule). Fill with dpm_upload_init. */
typedef struct {
    dpm_upload_config_t cfg;  /* the app's config; max_bytes is lowered after a 413 */
    uint64_t next_attempt_ms; /* monotonic time before which flush does nothing; 0 = now */
    uint32_t failures;        /* consecutive failed attempts */
    uint32_t opened;
} dpm_upload_t;

/* A report the collector rejected: removed from the outbox for good (its ε was spent; it can
 * never be accepted). What to do depends on the reason (dpm-collector's reasons; README
 * "Rejected reports"):
 *   "device quota exceeded"         this credential already stored the campaign's quota of
 *                                   reports in that period (another install or device with
 *                                   the same credential?): report no more in that period
 *   "period closed"                 sent too late (the device was offline longer than the
 *                                   campaign's late window): flush sooner; nothing to resend
 *   "period not open yet"           the device's clock is ahead of the collector's: fix the
 *                                   clock before reporting again
 *   "unknown campaign"              the campaign is gone: stop reporting for it
 *   "parameter fingerprint mismatch", "mechanism mismatch", "wrong number of ...", "... out
 *   of range", "malformed report"   the device's copy of the campaign differs from the
 *                                   collector's, or the two versions do not agree: fetch the
 *                                   campaign again (dpm_campaign_get) before the next report
 * Any other reason: log it with the ids; do not retry (the report is gone). */
typedef struct {
    uint8_t report_id[DPM_REPORT_ID_BYTES]; /* as dpm_report_info_t.report_id gave it */
    uint32_t campaign_id;                   /* read back from the stored report */
    uint32_t period;
    char reason[DPM_UPLOAD_REASON_BYTES]; /* the collector's reason, NUL-terminated; bytes
                                             outside printable ASCII replaced by '?' */
} dpm_upload_reject_t;

/* What one dpm_upload_flush call did. */
typedef struct {
    uint32_t requests;      /* HTTP requests sent */
    uint32_t delivered;     /* reports removed after a 2xx */
    uint32_t rejected;      /* reports removed because the collector rejected their id: each
                               one is rejects[0 .. rejected) */
    uint32_t lost_reported; /* lost reports (Batch.lost_reports) a collector acknowledged */
    uint32_t pending;       /* reports left in the outbox */
    uint32_t http_status;   /* status of the last exchange's response, 0 if it got none */
    uint8_t deferred;       /* 1: called before dpm_upload_next_attempt_ms, nothing done */
    uint8_t reconnect;      /* 1: close and reopen the transport before the next call */
    uint8_t more;           /* 1: stopped early with reports pending so that every reject
                               fits rejects[] (or after a 413 halved the batches): call
                               again (after a reconnect if reconnect is set) */
    dpm_upload_reject_t rejects[DPM_UPLOAD_MAX_REJECTS];
} dpm_upload_result_t;

/* Check *cfg and reset the retry schedule. DPM_ERR_PARAM for NULL or any value outside the
 * ranges in dpm_upload_config_t (*up untouched). */
dpm_status_t dpm_upload_init(dpm_upload_t *up, const dpm_upload_config_t *cfg);

/* Post the outbox's pending reports in batches over the connected transport t, until the
 * outbox is empty or an attempt fails. Each batch is one POST (with the config's bearer
 * token, if any) whose body is a dpm.v1.Batch made of the stored bytes (field 1, tag 0x0A,
 * varint length, report), so retries resend byte-identical reports, and, when the outbox
 * counts lost reports (dpm_outbox_stats), Batch.lost_reports (field 2) with that count. The
 * body of every 2xx and rejecting 4xx answer is decoded as a dpm.v1.BatchResponse (nanopb,
 * within dpm.options' bounds). Per response, and what it returns (dpm_upload_advice says it
 * in words):
 *   2xx       if accepted + duplicates equals the number of reports sent and nothing is
 *             rejected, every report of the batch is removed and its loss count
 *             acknowledged (dpm_outbox_ack_lost). Any other 2xx, an empty or malformed body
 *             included (a misconfigured proxy), removes nothing and is a failure
 *             (DPM_ERR_PROTOCOL);
 *   400, 404  exactly the reports whose ids the BatchResponse rejects are removed (they can
 *   and other never be accepted) and returned in res->rejects with the collector's reason;
 *   4xx not   the others stay pending and are sent again (the collector stores nothing of a
 *   below     batch with rejects, losses included). Without any matching reject, or with a
 *             body that is not a BatchResponse (a wrong path, a 411/415/431 from a server that
 *             is not a collector of this version), it is a failure (DPM_ERR_PROTOCOL);
 *   401, 403  the collector refused the device's credential: DPM_ERR_AUTH, nothing removed;
 *   413       the batch is larger than the collector takes: nothing removed; the uploader
 *             lowers its byte budget (up->cfg.max_bytes, until dpm_upload_init) to half the
 *             refused body and goes on with smaller batches (res->more, res->reconnect if
 *             the collector closed).
 *             A 413 to a batch of ONE report is DPM_ERR_PROTOCOL: the collector's body limit
 *             is below one report (raise it: dpm-collector --max-body);
 *   408, 429, the collector asks to retry later: DPM_ERR_TRANSPORT, nothing removed; the
 *   5xx       backoff below lasts at least its Retry-After, up to backoff_cap_ms;
 *   other     (1xx/3xx, no or a malformed response, transport error, deadline) a failure:
 *             nothing is removed (DPM_ERR_PROTOCOL, DPM_ERR_TRANSPORT, DPM_ERR_TIMEOUT).
 * No answer ever removes a report it does not account for or name: nothing queued is lost.
 * Every reject is returned: when a batch had rejects and the next one might not fit in the
 * rest of res->rejects, flush stops with res->more set.
 * The loss count rides only on batches with reports: only an answer that accounts for
 * reports proves that a collector read the batch, so an outbox with losses but nothing
 * pending sends nothing (the app still sees the losses in dpm_outbox_stats).
 * A failure schedules the next attempt after an exponential backoff: nominal delay
 * min(cap, base * 2^(failures - 1)), times a uniform factor in [0.5, 1.5] drawn from rand
 * (no jitter if rand is NULL or fails), on c's monotonic clock; see
 * dpm_upload_next_attempt_ms. Any progress (a 2xx, or a 4xx that removed reports) resets the
 * schedule. Called before the scheduled time, flush does nothing and sets res->deferred.
 * work (work_cap >= DPM_UPLOAD_MIN_WORK bytes) holds one request and then its response
 * body; a batch is cut to fit it, and a response body larger than it is a failure.
 * Returns DPM_OK (no failure; res->pending may still be > 0: see res->more and
 * res->reconnect), DPM_ERR_AUTH, DPM_ERR_TRANSPORT (send/recv failed or closed, or the
 * collector answered 5xx, 408 or 429: try later), DPM_ERR_TIMEOUT, DPM_ERR_PROTOCOL (a
 * malformed response, an unexpected status, or an answer that does not account for the
 * batch), DPM_ERR_STORAGE / DPM_ERR_CORRUPT from the outbox, DPM_ERR_PARAM for NULL pointers,
 * an unopened up/ob, a token that is no longer valid or a small work buffer (nothing sent).
 * *res is always filled unless DPM_ERR_PARAM. After a failure without a complete response
 * the connection state is unknown: res->reconnect is set. */
dpm_status_t dpm_upload_flush(dpm_upload_t *up, dpm_outbox_t *ob, const dpm_transport_t *t,
                              const dpm_clock_t *c, dpm_rand_t *rand, uint8_t *work,
                              size_t work_cap, dpm_upload_result_t *res);

/* What the app should do after a flush that returned st with *res (res may be NULL: then
 * without the HTTP status): one English sentence (never NULL, static), e.g. for DPM_ERR_AUTH
 * with HTTP 401 "the collector does not know this device's credential (HTTP 401): give the
 * device a valid bearer token or client certificate; the reports stay queued". For statuses
 * a flush does not return, dpm_strerror(st). */
const char *dpm_upload_advice(dpm_status_t st, const dpm_upload_result_t *res);

/* Monotonic time (ms) from which the next flush will try again: 0 when no backoff is in
 * force (call whenever there is something to send). 0 for NULL. */
uint64_t dpm_upload_next_attempt_ms(const dpm_upload_t *up);

/* The retry delay after `failures` (>= 1) consecutive failures: nominal d = min(cap, base *
 * 2^(failures - 1)); *delay_ms = d / 2 + a uniform draw from [0, d] taken from rand, i.e.
 * within [d/2, 3d/2] (±50% jitter; it may exceed the cap by half). With rand NULL, or if it
 * fails, *delay_ms = d. DPM_ERR_PARAM for NULL cfg/delay_ms, failures == 0 or an invalid
 * cfg. */
dpm_status_t dpm_upload_backoff_ms(const dpm_upload_config_t *cfg, uint32_t failures,
                                   dpm_rand_t *rand, uint32_t *delay_ms);

#ifdef __cplusplus
}
#endif

#endif /* DPM_UPLOAD_H */
