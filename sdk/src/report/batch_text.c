/* SPDX-License-Identifier: Apache-2.0 */
/* The Batch / BatchResponse codec (dpm/expert/batch.h), the collector's half and the reason
 * strings: the Batch reader and the BatchResponse writer (dpm-collector, the simulator's network
 * mode, the test collectors) and the public readers' text over batch_wire.c's reason codes. Its own
 * file so that a device image, which calls batch_wire.c's half only, links none of it
 * (string literals are one section per object file). */
#include "dpm_internal.h"

#include "report/batch_internal.h"

#define RESP_ACCEPTED_KEY 0x08u /* BatchResponse field 1, varint */
#define RESP_DUPS_KEY 0x10u     /* field 2, varint */
#define RESP_REJECT_KEY 0x1Au   /* field 3, length-delimited */
#define REJECT_ID_KEY 0x0Au     /* Reject field 1, length-delimited */
#define REJECT_REASON_KEY 0x12u /* Reject field 2, length-delimited */
#define BATCH_REPORTS_KEY 0x0Au /* Batch field 1, length-delimited */

static const char *const why_text[DPM_WHY_COUNT] = {
    [DPM_WHY_VARINT_TRUNCATED] = "truncated varint",
    [DPM_WHY_VARINT_LONG] = "varint longer than 64 bits",
    [DPM_WHY_TAG_LONG] = "tag beyond 32 bits",
    [DPM_WHY_FIELD_ZERO] = "field number 0",
    [DPM_WHY_WIRE_TYPE] = "group or undefined wire type",
    [DPM_WHY_FIXED_TRUNCATED] = "truncated fixed-width field",
    [DPM_WHY_LEN_PAST_END] = "length past the end",
    [DPM_WHY_ACCEPTED_TYPE] = "BatchResponse.accepted has the wrong wire type",
    [DPM_WHY_DUPLICATES_TYPE] = "BatchResponse.duplicates has the wrong wire type",
    [DPM_WHY_ACCEPTED_LARGE] = "BatchResponse.accepted is too large",
    [DPM_WHY_DUPLICATES_LARGE] = "BatchResponse.duplicates is too large",
    [DPM_WHY_REJECTS_TYPE] = "BatchResponse.rejects has the wrong wire type",
    [DPM_WHY_REJECT_ID_TYPE] = "Reject.report_id has the wrong wire type",
    [DPM_WHY_REJECT_REASON_TYPE] = "Reject.reason has the wrong wire type",
};

/* DPM_ERR_PROTOCOL with the text of reason code why (when out != NULL). */
static dpm_status_t refuse(int why, const char *refused, const char **out)
{
    if (out != NULL) {
        *out = why == DPM_WHY_REFUSED ? refused : why_text[why];
    }
    return DPM_ERR_PROTOCOL;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* A length-delimited field: head, then bytes[0, n) (bytes may be NULL when n is 0 or buf is
 * NULL). */
static dpm_status_t put_bytes(uint8_t *buf, size_t cap, size_t *pos, uint8_t key,
                              const uint8_t *bytes, size_t n)
{
    dpm_status_t st = dpm_wire_put_head(buf, cap, pos, key, n);
    if (st == DPM_OK) {
        if (buf != NULL && n > 0) {
            memcpy(buf + *pos, bytes, n);
        }
        *pos += n;
    }
    return st;
}

dpm_status_t dpm_batch_put_report(uint8_t *buf, size_t cap, size_t *pos, const uint8_t *rep,
                                  size_t report_len)
{
    if (buf != NULL && rep == NULL && report_len > 0) {
        return DPM_ERR_PARAM;
    }
    return put_bytes(buf, cap, pos, BATCH_REPORTS_KEY, rep, report_len);
}

dpm_status_t dpm_batch_response_put_counts(uint8_t *buf, size_t cap, size_t *pos, uint32_t accepted,
                                           uint32_t duplicates)
{
    if (pos == NULL) {
        return DPM_ERR_PARAM;
    }
    size_t at = *pos;
    dpm_status_t st =
        accepted == 0 ? DPM_OK : dpm_wire_put_head(buf, cap, pos, RESP_ACCEPTED_KEY, accepted);
    if (st == DPM_OK && duplicates != 0) {
        st = dpm_wire_put_head(buf, cap, pos, RESP_DUPS_KEY, duplicates);
    }
    if (st != DPM_OK) {
        *pos = at;
    }
    return st;
}

/* The Reject message's own bytes (fields 1 and 2). */
static size_t reject_len(size_t id_len, size_t reason_len)
{
    return (id_len > 0 ? dpm_batch_frame_len(id_len) : 0u) + dpm_batch_frame_len(reason_len);
}

dpm_status_t dpm_batch_response_put_reject(uint8_t *buf, size_t cap, size_t *pos, const uint8_t *id,
                                           size_t id_len, const char *reason, size_t reason_len)
{
    if (pos == NULL || (id == NULL && id_len > 0) || (reason == NULL && reason_len > 0) ||
        id_len > (SIZE_MAX >> 2) || reason_len > (SIZE_MAX >> 2)) {
        return DPM_ERR_PARAM;
    }
    size_t body = reject_len(id_len, reason_len);
    dpm_status_t st = dpm_wire_put_head(buf, cap, pos, RESP_REJECT_KEY, body);
    if (st != DPM_OK || buf == NULL) {
        *pos += st == DPM_OK ? body : 0u;
        return st;
    }
    /* the room for the body was checked with the head: these cannot fail */
    if (id_len > 0) {
        (void)put_bytes(buf, cap, pos, REJECT_ID_KEY, id, id_len);
    }
    (void)put_bytes(buf, cap, pos, REJECT_REASON_KEY, (const uint8_t *)reason, reason_len);
    return DPM_OK;
}

/* ---- reading ------------------------------------------------------------------------------ */

dpm_status_t dpm_wire_next_field(const uint8_t *buf, size_t len, size_t *pos, dpm_wire_field_t *f,
                                 const char **why)
{
    if (buf == NULL || pos == NULL || f == NULL || *pos >= len) {
        return DPM_ERR_PARAM;
    }
    int code = dpm_wire_field_read(buf, len, pos, f);
    return code == 0 ? DPM_OK : refuse(code, NULL, why);
}

dpm_status_t dpm_batch_next(const uint8_t *body, size_t len, size_t *pos, dpm_batch_item_t *it,
                            const char **why)
{
    const char *unused = NULL;
    const char **w = why != NULL ? why : &unused;
    if ((body == NULL && len > 0) || pos == NULL || it == NULL || *pos > len) {
        return DPM_ERR_PARAM;
    }
    memset(it, 0, sizeof(*it));
    size_t p = *pos;
    while (p < len) {
        dpm_wire_field_t f;
        dpm_status_t st = dpm_wire_next_field(body, len, &p, &f, w);
        if (st != DPM_OK) {
            return st;
        }
        if (f.field == DPM_BATCH_FIELD_REPORT) {
            if (f.type != DPM_WIRE_LEN) {
                *w = "Batch.reports has the wrong wire type";
                return DPM_ERR_PROTOCOL;
            }
            it->field = DPM_BATCH_FIELD_REPORT;
            it->report = f.bytes;
            it->report_len = f.len;
            break;
        }
        if (f.field == DPM_BATCH_FIELD_LOST) {
            if (f.type != DPM_WIRE_VARINT) {
                *w = "Batch.lost_reports has the wrong wire type";
                return DPM_ERR_PROTOCOL;
            }
            it->field = DPM_BATCH_FIELD_LOST;
            it->lost = f.value;
            break;
        }
        /* an unknown field: skipped */
    }
    *pos = p;
    return DPM_OK;
}

dpm_status_t dpm_batch_response_decode(const uint8_t *buf, size_t len, uint32_t *accepted,
                                       uint32_t *duplicates, dpm_batch_reject_fn on_reject,
                                       void *ctx, const char **why)
{
    if ((buf == NULL && len > 0) || accepted == NULL || duplicates == NULL) {
        return DPM_ERR_PARAM;
    }
    const char *refused = NULL;
    int code = dpm_batch_response_read(buf, len, accepted, duplicates, on_reject, ctx, &refused);
    return code == 0 ? DPM_OK : refuse(code, refused, why);
}
