/* SPDX-License-Identifier: Apache-2.0 */
/* The Batch / BatchResponse codec (dpm/batch.h): the project's one hand-written protobuf
 * framing. It is not nanopb's generated code on purpose: the reports inside a Batch stay
 * encoded (no 2 KB dpm_v1_Report per entry, no max_count), the uploader streams them from the
 * outbox into its work buffer, and the collector walks bodies of any size with the bounds it
 * has always had (10-byte varints, 32-bit tags). */
#include "dpm_internal.h"

#include "dpm/batch.h"

#define BATCH_REPORTS_KEY 0x0Au /* field 1, length-delimited */
#define BATCH_LOST_KEY 0x10u    /* field 2, varint */
#define RESP_ACCEPTED_KEY 0x08u /* BatchResponse field 1, varint */
#define RESP_DUPS_KEY 0x10u     /* field 2, varint */
#define RESP_REJECT_KEY 0x1Au   /* field 3, length-delimited */
#define REJECT_ID_KEY 0x0Au     /* Reject field 1, length-delimited */
#define REJECT_REASON_KEY 0x12u /* Reject field 2, length-delimited */

/* ---- varints ------------------------------------------------------------------------------ */

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80u) {
        v >>= 7;
        n++;
    }
    return n;
}

/* v at p (p != NULL): returns the bytes written. */
static size_t varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80u) {
        p[n++] = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* At most 10 bytes; the 10th may only carry bit 63. */
static int varint_get(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out, const char **why)
{
    uint64_t x = 0;
    size_t p = *pos;
    for (unsigned i = 0; i < 10u; i++) {
        if (p >= len) {
            *why = "truncated varint";
            return 0;
        }
        uint8_t b = buf[p++];
        if (i == 9u && b > 1u) {
            *why = "varint longer than 64 bits";
            return 0;
        }
        x |= (uint64_t)(b & 0x7Fu) << (7u * i);
        if ((b & 0x80u) == 0) {
            *out = x;
            *pos = p;
            return 1;
        }
    }
    *why = "varint longer than 64 bits";
    return 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* key, then a varint value or a length and its bytes (bytes == NULL: the caller writes them,
 * or buf is NULL). Checks the room for the whole field. */
static dpm_status_t put_field(uint8_t *buf, size_t cap, size_t *pos, uint8_t key, uint64_t v,
                              const uint8_t *bytes)
{
    if (pos == NULL) {
        return DPM_ERR_PARAM;
    }
    int is_len = (key & 7u) == DPM_WIRE_LEN;
    size_t n = 1u + varint_len(v);
    if (is_len && v > SIZE_MAX - n) {
        return DPM_ERR_BUFFER;
    }
    size_t total = n + (is_len ? (size_t)v : 0u);
    if (buf != NULL && (*pos > cap || total > cap - *pos)) {
        return DPM_ERR_BUFFER;
    }
    if (buf == NULL && total > SIZE_MAX - *pos) {
        return DPM_ERR_BUFFER;
    }
    if (buf != NULL) {
        buf[*pos] = key;
        (void)varint_put(buf + *pos + 1u, v);
        if (is_len && bytes != NULL && v > 0) {
            memcpy(buf + *pos + n, bytes, (size_t)v);
        }
    }
    *pos += is_len && bytes == NULL ? n : total; /* a head only: the caller adds the bytes */
    return DPM_OK;
}

size_t dpm_batch_frame_len(size_t report_len)
{
    return 1u + varint_len(report_len) + report_len;
}

size_t dpm_batch_lost_len(uint32_t lost)
{
    return lost == 0 ? 0u : 1u + varint_len(lost);
}

dpm_status_t dpm_batch_put_report_head(uint8_t *buf, size_t cap, size_t *pos, size_t report_len)
{
    return put_field(buf, cap, pos, BATCH_REPORTS_KEY, report_len, NULL);
}

dpm_status_t dpm_batch_put_report(uint8_t *buf, size_t cap, size_t *pos, const uint8_t *rep,
                                  size_t report_len)
{
    if (buf != NULL && rep == NULL && report_len > 0) {
        return DPM_ERR_PARAM;
    }
    if (buf == NULL) { /* sizing: the whole field */
        if (pos == NULL) {
            return DPM_ERR_PARAM;
        }
        size_t n = dpm_batch_frame_len(report_len);
        if (n < report_len || n > SIZE_MAX - *pos) {
            return DPM_ERR_BUFFER;
        }
        *pos += n;
        return DPM_OK;
    }
    static const uint8_t none[1] = {0};
    return put_field(buf, cap, pos, BATCH_REPORTS_KEY, report_len, report_len > 0 ? rep : none);
}

dpm_status_t dpm_batch_put_lost(uint8_t *buf, size_t cap, size_t *pos, uint32_t lost)
{
    if (pos == NULL) {
        return DPM_ERR_PARAM;
    }
    return lost == 0 ? DPM_OK : put_field(buf, cap, pos, BATCH_LOST_KEY, lost, NULL);
}

dpm_status_t dpm_batch_response_put_counts(uint8_t *buf, size_t cap, size_t *pos, uint32_t accepted,
                                           uint32_t duplicates)
{
    if (pos == NULL) {
        return DPM_ERR_PARAM;
    }
    size_t at = *pos;
    dpm_status_t st =
        accepted == 0 ? DPM_OK : put_field(buf, cap, pos, RESP_ACCEPTED_KEY, accepted, NULL);
    if (st == DPM_OK && duplicates != 0) {
        st = put_field(buf, cap, pos, RESP_DUPS_KEY, duplicates, NULL);
    }
    if (st != DPM_OK) {
        *pos = at;
    }
    return st;
}

/* The Reject message's own bytes (fields 1 and 2). */
static size_t reject_len(size_t id_len, size_t reason_len)
{
    return (id_len > 0 ? 1u + varint_len(id_len) + id_len : 0u) + 1u + varint_len(reason_len) +
           reason_len;
}

dpm_status_t dpm_batch_response_put_reject(uint8_t *buf, size_t cap, size_t *pos, const uint8_t *id,
                                           size_t id_len, const char *reason, size_t reason_len)
{
    if (pos == NULL || (id == NULL && id_len > 0) || (reason == NULL && reason_len > 0) ||
        id_len > (SIZE_MAX >> 2) || reason_len > (SIZE_MAX >> 2)) {
        return DPM_ERR_PARAM;
    }
    size_t body = reject_len(id_len, reason_len);
    size_t at = *pos;
    dpm_status_t st = put_field(buf, cap, pos, RESP_REJECT_KEY, body, NULL);
    if (st == DPM_OK && buf != NULL && body > cap - *pos) {
        st = DPM_ERR_BUFFER;
    }
    if (st != DPM_OK) {
        *pos = at;
        return st;
    }
    if (buf == NULL) {
        *pos += body;
        return DPM_OK;
    }
    /* room for body bytes checked above: these cannot fail */
    static const uint8_t none[1] = {0};
    if (id_len > 0) {
        (void)put_field(buf, cap, pos, REJECT_ID_KEY, id_len, id);
    }
    (void)put_field(buf, cap, pos, REJECT_REASON_KEY, reason_len,
                    reason_len > 0 ? (const uint8_t *)reason : none);
    return DPM_OK;
}

/* ---- reading ------------------------------------------------------------------------------ */

dpm_status_t dpm_wire_next_field(const uint8_t *buf, size_t len, size_t *pos, dpm_wire_field_t *f,
                                 const char **why)
{
    const char *unused = NULL;
    const char **w = why != NULL ? why : &unused;
    if (buf == NULL || pos == NULL || f == NULL || *pos >= len) {
        return DPM_ERR_PARAM;
    }
    size_t p = *pos;
    uint64_t tag = 0, v = 0;
    if (!varint_get(buf, len, &p, &tag, w)) {
        return DPM_ERR_PROTOCOL;
    }
    if (tag > UINT32_MAX) {
        *w = "tag beyond 32 bits";
        return DPM_ERR_PROTOCOL;
    }
    if ((tag >> 3) == 0) {
        *w = "field number 0";
        return DPM_ERR_PROTOCOL;
    }
    memset(f, 0, sizeof(*f));
    f->field = (uint32_t)(tag >> 3);
    switch (tag & 7u) {
    case DPM_WIRE_VARINT:
        if (!varint_get(buf, len, &p, &v, w)) {
            return DPM_ERR_PROTOCOL;
        }
        f->type = DPM_WIRE_VARINT;
        f->value = v;
        break;
    case DPM_WIRE_I64:
    case DPM_WIRE_I32: {
        size_t n = (tag & 7u) == DPM_WIRE_I64 ? 8u : 4u;
        if (len - p < n) {
            *w = "truncated fixed-width field";
            return DPM_ERR_PROTOCOL;
        }
        f->type = (dpm_wire_type_t)(tag & 7u);
        p += n;
        break;
    }
    case DPM_WIRE_LEN:
        if (!varint_get(buf, len, &p, &v, w)) {
            return DPM_ERR_PROTOCOL;
        }
        if (v > len - p) {
            *w = "length past the end";
            return DPM_ERR_PROTOCOL;
        }
        f->type = DPM_WIRE_LEN;
        f->bytes = buf + p;
        f->len = (size_t)v;
        p += (size_t)v;
        break;
    default: *w = "group or undefined wire type"; return DPM_ERR_PROTOCOL;
    }
    *pos = p;
    return DPM_OK;
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

/* A varint field of BatchResponse that is a uint32. */
static int get_count(const dpm_wire_field_t *f, uint32_t *out, const char *wrong_type,
                     const char *too_large, const char **why)
{
    if (f->type != DPM_WIRE_VARINT) {
        *why = wrong_type;
        return 0;
    }
    if (f->value > UINT32_MAX) {
        *why = too_large;
        return 0;
    }
    *out = (uint32_t)f->value;
    return 1;
}

/* One Reject message: its last report_id and reason (both empty when absent). */
static dpm_status_t read_reject(const uint8_t *buf, size_t len, const uint8_t **id, size_t *id_len,
                                const uint8_t **reason, size_t *reason_len, const char **why)
{
    size_t p = 0;
    *id = buf;
    *id_len = 0;
    *reason = buf;
    *reason_len = 0;
    while (p < len) {
        dpm_wire_field_t f;
        dpm_status_t st = dpm_wire_next_field(buf, len, &p, &f, why);
        if (st != DPM_OK) {
            return st;
        }
        if (f.field == 1u || f.field == 2u) {
            if (f.type != DPM_WIRE_LEN) {
                *why = f.field == 1u ? "Reject.report_id has the wrong wire type"
                                     : "Reject.reason has the wrong wire type";
                return DPM_ERR_PROTOCOL;
            }
            *(f.field == 1u ? id : reason) = f.bytes;
            *(f.field == 1u ? id_len : reason_len) = f.len;
        }
    }
    return DPM_OK;
}

dpm_status_t dpm_batch_response_decode(const uint8_t *buf, size_t len, uint32_t *accepted,
                                       uint32_t *duplicates, dpm_batch_reject_fn on_reject,
                                       void *ctx, const char **why)
{
    const char *unused = NULL;
    const char **w = why != NULL ? why : &unused;
    if ((buf == NULL && len > 0) || accepted == NULL || duplicates == NULL) {
        return DPM_ERR_PARAM;
    }
    *accepted = 0;
    *duplicates = 0;
    size_t p = 0;
    while (p < len) {
        dpm_wire_field_t f;
        dpm_status_t st = dpm_wire_next_field(buf, len, &p, &f, w);
        if (st != DPM_OK) {
            return st;
        }
        if (f.field == 1u &&
            !get_count(&f, accepted, "BatchResponse.accepted has the wrong wire type",
                       "BatchResponse.accepted is too large", w)) {
            return DPM_ERR_PROTOCOL;
        }
        if (f.field == 2u &&
            !get_count(&f, duplicates, "BatchResponse.duplicates has the wrong wire type",
                       "BatchResponse.duplicates is too large", w)) {
            return DPM_ERR_PROTOCOL;
        }
        if (f.field == 3u) {
            if (f.type != DPM_WIRE_LEN) {
                *w = "BatchResponse.rejects has the wrong wire type";
                return DPM_ERR_PROTOCOL;
            }
            const uint8_t *id, *reason;
            size_t id_len, reason_len;
            st = read_reject(f.bytes, f.len, &id, &id_len, &reason, &reason_len, w);
            if (st != DPM_OK) {
                return st;
            }
            const char *refused =
                on_reject != NULL ? on_reject(ctx, id, id_len, reason, reason_len) : NULL;
            if (refused != NULL) {
                *w = refused;
                return DPM_ERR_PROTOCOL;
            }
        }
    }
    return DPM_OK;
}
