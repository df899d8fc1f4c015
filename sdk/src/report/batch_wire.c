/* SPDX-License-Identifier: Apache-2.0 */
/* The Batch / BatchResponse codec (dpm/expert/batch.h), the device's half: the Batch writer
 * dpm_upload_flush frames its reports with, and the BatchResponse and field readers it reads
 * the answer with, as reason codes (batch_internal.h). The reason strings, the Batch reader and
 * the BatchResponse writer (the collector's half) are in batch_text.c, which a device image
 * does not link. Not nanopb's generated code on purpose: the reports inside a Batch stay
 * encoded (no 2 KB dpm_v1_Report per entry, no max_count), the uploader streams them from the
 * outbox into its work buffer, and bodies of any size are walked with the bounds the collector
 * has always had (10-byte varints, 32-bit tags). nanopb's varint reader (linked anyway) reads
 * the varints: it has those bounds. */
#include "dpm_internal.h"

#include <pb_decode.h>

#include "report/batch_internal.h"

#define BATCH_REPORTS_KEY 0x0Au /* field 1, length-delimited */
#define BATCH_LOST_KEY 0x10u    /* field 2, varint */

/* ---- varints ------------------------------------------------------------------------------ */

static size_t varint_len(size_t v)
{
    size_t n = 1;
    while (v >= 0x80u) {
        v >>= 7;
        n++;
    }
    return n;
}

/* A varint of at most 10 bytes whose 10th may only carry bit 63 (pb_decode_varint's bounds):
 * 0 or a reason. nanopb fails an overlong varint at its 10th byte, a truncated one before. */
static int varint_get(pb_istream_t *s, uint64_t *out)
{
    size_t left = s->bytes_left;
    if (pb_decode_varint(s, out)) {
        return 0;
    }
    return left - s->bytes_left == 10u ? DPM_WHY_VARINT_LONG : DPM_WHY_VARINT_TRUNCATED;
}

/* ---- writing ------------------------------------------------------------------------------ */

dpm_status_t dpm_wire_put_head(uint8_t *buf, size_t cap, size_t *pos, uint8_t key, size_t v)
{
    if (pos == NULL) {
        return DPM_ERR_PARAM;
    }
    size_t n = 1u + varint_len(v);
    size_t body = (key & 7u) == DPM_WIRE_LEN ? v : 0u;
    if (buf != NULL && *pos > cap) {
        return DPM_ERR_BUFFER;
    }
    size_t room = (buf != NULL ? cap : SIZE_MAX) - *pos; /* sizing: *pos may not overflow */
    if (body > room || n > room - body) {
        return DPM_ERR_BUFFER; /* room for the whole field */
    }
    if (buf != NULL) {
        uint8_t *p = buf + *pos;
        *p++ = key;
        for (; v >= 0x80u; v >>= 7) {
            *p++ = (uint8_t)(v | 0x80u);
        }
        *p = (uint8_t)v;
    }
    *pos += n;
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
    return dpm_wire_put_head(buf, cap, pos, BATCH_REPORTS_KEY, report_len);
}

dpm_status_t dpm_batch_put_lost(uint8_t *buf, size_t cap, size_t *pos, uint32_t lost)
{
    if (lost == 0 && pos != NULL) {
        return DPM_OK;
    }
    return dpm_wire_put_head(buf, cap, pos, BATCH_LOST_KEY, lost); /* pos == NULL: PARAM */
}

/* ---- reading ------------------------------------------------------------------------------ */

int dpm_wire_field_read(const uint8_t *buf, size_t len, size_t *pos, dpm_wire_field_t *f)
{
    pb_istream_t s = pb_istream_from_buffer(buf + *pos, len - *pos);
    uint64_t tag, v;
    int why = varint_get(&s, &tag);
    if (why != 0) {
        return why;
    }
    if (tag > UINT32_MAX) {
        return DPM_WHY_TAG_LONG;
    }
    uint32_t key = (uint32_t)tag;
    unsigned type = key & 7u;
    if (key < 8u) {
        return DPM_WHY_FIELD_ZERO;
    }
    if (((0x27u >> type) & 1u) == 0) { /* only 0, 1, 2 and 5: no groups, nothing undefined */
        return DPM_WHY_WIRE_TYPE;
    }
    f->field = key >> 3;
    f->type = (dpm_wire_type_t)type;
    f->value = 0;
    f->bytes = NULL;
    f->len = 0;
    if (type == DPM_WIRE_I64 || type == DPM_WIRE_I32) {
        v = type == DPM_WIRE_I64 ? 8u : 4u;
        if (v > s.bytes_left) {
            return DPM_WHY_FIXED_TRUNCATED;
        }
    } else {
        why = varint_get(&s, &v);
        if (why != 0) {
            return why;
        }
        if (type == DPM_WIRE_VARINT) {
            f->value = v;
            v = 0;
        } else if (v > s.bytes_left) {
            return DPM_WHY_LEN_PAST_END;
        } else {
            f->bytes = buf + len - s.bytes_left;
            f->len = (size_t)v;
        }
    }
    *pos = len - s.bytes_left + (size_t)v;
    return 0;
}

int dpm_batch_response_read(const uint8_t *buf, size_t len, uint32_t *accepted,
                            uint32_t *duplicates, dpm_batch_reject_fn on_reject, void *ctx,
                            const char **refused)
{
    size_t p = 0;
    *accepted = 0;
    *duplicates = 0;
    while (p < len) {
        dpm_wire_field_t f;
        int why = dpm_wire_field_read(buf, len, &p, &f);
        if (why != 0) {
            return why;
        }
        if (f.field == 1u || f.field == 2u) { /* accepted, duplicates: uint32 varints */
            if (f.type != DPM_WIRE_VARINT) {
                return DPM_WHY_ACCEPTED_TYPE + (int)f.field - 1;
            }
            if (f.value > UINT32_MAX) {
                return DPM_WHY_ACCEPTED_LARGE + (int)f.field - 1;
            }
            *(f.field == 1u ? accepted : duplicates) = (uint32_t)f.value;
        }
        if (f.field == 3u) { /* a Reject: its last report_id and reason (empty when absent) */
            if (f.type != DPM_WIRE_LEN) {
                return DPM_WHY_REJECTS_TYPE;
            }
            const uint8_t *part[2] = {f.bytes, f.bytes}; /* report_id, reason */
            size_t part_len[2] = {0, 0};
            size_t q = 0;
            while (q < f.len) {
                dpm_wire_field_t g;
                why = dpm_wire_field_read(f.bytes, f.len, &q, &g);
                if (why != 0) {
                    return why;
                }
                if (g.field == 1u || g.field == 2u) {
                    if (g.type != DPM_WIRE_LEN) {
                        return DPM_WHY_REJECT_ID_TYPE + (int)g.field - 1;
                    }
                    part[g.field - 1u] = g.bytes;
                    part_len[g.field - 1u] = g.len;
                }
            }
            const char *no = on_reject != NULL
                                 ? on_reject(ctx, part[0], part_len[0], part[1], part_len[1])
                                 : NULL;
            if (no != NULL) {
                *refused = no;
                return DPM_WHY_REFUSED;
            }
        }
    }
    return 0;
}
