/* SPDX-License-Identifier: Apache-2.0 */
/* The one codec of dpm.v1.Batch (device -> collector) and dpm.v1.BatchResponse (the answer),
 * sdk/proto/dpm.proto. Every side uses it: dpm_upload_flush on the device, dpm-collector, the
 * simulator's network mode and the test collectors. An app with its own HTTPS stack can frame
 * its outbox's reports with it too.
 *
 * Reports stay encoded (the bytes dpm_report_encode wrote and the outbox stored), so a Batch
 * has no count limit of its own and nothing is decoded twice: a writer puts each report's
 * field head and bytes at a position in a caller's buffer; a reader walks the body and hands
 * out each report as a span inside it. No heap, no static state.
 *
 * Writers: every dpm_*_put_* call writes at buf[*pos] and advances *pos; with buf == NULL it
 * writes nothing and only advances *pos (sizing: run the same calls twice). DPM_ERR_BUFFER if
 * the bytes do not fit in cap (nothing written, *pos unchanged); DPM_ERR_PARAM for NULL
 * arguments. The bytes are protobuf's canonical encoding, field by field in the order called.
 *
 * Readers: every length is checked against what remains before it is used. On bad bytes they
 * return DPM_ERR_PROTOCOL and set *why (when why != NULL) to a static string naming the
 * cause: "truncated varint", "varint longer than 64 bits", "tag beyond 32 bits",
 * "field number 0", "group or undefined wire type", "truncated fixed-width field",
 * "length past the end", or "<message>.<field> has the wrong wire type". Unknown fields of
 * a valid wire type are skipped, as protobuf requires. */
#ifndef DPM_BATCH_H
#define DPM_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== any protobuf message: one field at a time ============================================ */

typedef enum {
    DPM_WIRE_VARINT = 0,
    DPM_WIRE_I64 = 1,
    DPM_WIRE_LEN = 2,
    DPM_WIRE_I32 = 5
} dpm_wire_type_t;

typedef struct {
    uint32_t field;       /* field number, >= 1 */
    dpm_wire_type_t type; /* wire type */
    uint64_t value;       /* DPM_WIRE_VARINT: the value; the others: 0 */
    const uint8_t *bytes; /* DPM_WIRE_LEN: the payload inside buf; the others: NULL */
    size_t len;           /* DPM_WIRE_LEN: payload length */
} dpm_wire_field_t;

/* The field at buf[*pos, len) (*pos < len): its tag and its value, which is then skipped.
 * Varints are at most 10 bytes and 64 bits; tags at most 32 bits; groups (wire types 3, 4)
 * and undefined wire types are refused. DPM_OK and *pos past the field, or DPM_ERR_PROTOCOL
 * (*pos unchanged). */
dpm_status_t dpm_wire_next_field(const uint8_t *buf, size_t len, size_t *pos, dpm_wire_field_t *f,
                                 const char **why);

/* ==== dpm.v1.Batch ==========================================================================
 *
 *   field 1  reports       repeated, length-delimited: one encoded dpm.v1.Report each
 *   field 2  lost_reports  varint: reports the device lost before delivery (absent when 0)
 *
 * The device writes the reports first and lost_reports last (dpm_upload_flush). */

#define DPM_BATCH_FIELD_REPORT 1u
#define DPM_BATCH_FIELD_LOST 2u

/* Bytes one report of report_len bytes takes inside a Batch: tag, length, report. */
size_t dpm_batch_frame_len(size_t report_len);

/* Bytes the lost_reports field takes: 0 when lost is 0 (not written), else tag and varint. */
size_t dpm_batch_lost_len(uint32_t lost);

/* The head of one report's field (tag and length, dpm_batch_frame_len - report_len bytes);
 * the caller then writes the report's report_len bytes at buf + *pos and advances *pos by
 * report_len (the uploader reads them straight from the outbox: no second copy). The room
 * for those bytes is checked too. */
dpm_status_t dpm_batch_put_report_head(uint8_t *buf, size_t cap, size_t *pos, size_t report_len);

/* One report's field: head and bytes (rep may be NULL when buf is NULL). */
dpm_status_t dpm_batch_put_report(uint8_t *buf, size_t cap, size_t *pos, const uint8_t *rep,
                                  size_t report_len);

/* The lost_reports field; writes nothing when lost is 0. */
dpm_status_t dpm_batch_put_lost(uint8_t *buf, size_t cap, size_t *pos, uint32_t lost);

typedef struct {
    uint32_t field;        /* DPM_BATCH_FIELD_REPORT, DPM_BATCH_FIELD_LOST, or 0: body ended */
    const uint8_t *report; /* field 1: the encoded report inside the body */
    size_t report_len;
    uint64_t lost; /* field 2 as sent: a uint32 field, so a value above UINT32_MAX is the
                    * reader's to clamp or refuse */
} dpm_batch_item_t;

/* The next report or lost_reports count of the Batch body[0, len), from *pos (start at 0),
 * skipping unknown fields. DPM_OK and it->field 0 once the body is used up. DPM_ERR_PROTOCOL
 * for framing errors (see above) and for a field 1 that is not length-delimited or a field 2
 * that is not a varint ("Batch.reports has the wrong wire type", "Batch.lost_reports has the
 * wrong wire type"). A report's own bytes are not looked at: dpm_report_decode does that. */
dpm_status_t dpm_batch_next(const uint8_t *body, size_t len, size_t *pos, dpm_batch_item_t *it,
                            const char **why);

/* ==== dpm.v1.BatchResponse ==================================================================
 *
 *   field 1  accepted    varint (absent when 0)
 *   field 2  duplicates  varint (absent when 0)
 *   field 3  rejects     repeated Reject { bytes report_id = 1; string reason = 2; }
 *
 * A Reject's report_id is written only when the id is not empty; its reason always, even
 * when empty. Write the counts first, then the rejects. */

/* Fields 1 and 2. */
dpm_status_t dpm_batch_response_put_counts(uint8_t *buf, size_t cap, size_t *pos, uint32_t accepted,
                                           uint32_t duplicates);

/* One field 3: a Reject of report id[0, id_len) (id may be NULL when id_len is 0) and
 * reason[0, reason_len). */
dpm_status_t dpm_batch_response_put_reject(uint8_t *buf, size_t cap, size_t *pos, const uint8_t *id,
                                           size_t id_len, const char *reason, size_t reason_len);

/* Called once per Reject, in order, with spans inside the response (the reason is not
 * NUL-terminated and may hold any bytes: sanitize before showing it). NULL to go on, or a
 * static string saying why the caller refuses the response (dpm_batch_response_decode then
 * returns DPM_ERR_PROTOCOL with that reason). */
typedef const char *(*dpm_batch_reject_fn)(void *ctx, const uint8_t *id, size_t id_len,
                                           const uint8_t *reason, size_t reason_len);

/* Decode the BatchResponse buf[0, len): *accepted and *duplicates (0 when absent; the last
 * occurrence wins), each Reject to on_reject (may be NULL). DPM_ERR_PROTOCOL for framing
 * errors, a wrong wire type of a known field ("BatchResponse.accepted has the wrong wire
 * type", ...), a count above UINT32_MAX ("BatchResponse.accepted is too large", ...), or
 * on_reject's refusal; the outputs are then unspecified. */
dpm_status_t dpm_batch_response_decode(const uint8_t *buf, size_t len, uint32_t *accepted,
                                       uint32_t *duplicates, dpm_batch_reject_fn on_reject,
                                       void *ctx, const char **why);

#ifdef __cplusplus
}
#endif

#endif /* DPM_BATCH_H */
