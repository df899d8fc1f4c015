/* SPDX-License-Identifier: Apache-2.0 */
/* Reports on the wire: the header, and each body through its mechanism's codec (mech_ops.h). */
#include "dpm_internal.h"

#include <pb_decode.h>
#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/report.h"
#include "mech/mech_ops.h"
#include "report/report_internal.h"

/* The wire enums and the SDK's must agree value for value. */
typedef char mech_ids_match[(dpm_v1_Mechanism_TUPLE_MR == (int)DPM_MECH_ID_TUPLE_MR &&
                             dpm_v1_Mechanism_TUPLE_ML == (int)DPM_MECH_ID_TUPLE_ML &&
                             dpm_v1_Mechanism_ROC_HIST == (int)DPM_MECH_ID_ROC_HIST &&
                             dpm_v1_Mechanism_DPAUC == (int)DPM_MECH_ID_DPAUC &&
                             dpm_v1_Mechanism_USTAT_BINS == (int)DPM_MECH_ID_USTAT_BINS &&
                             dpm_v1_Mechanism_USTAT_TREE == (int)DPM_MECH_ID_USTAT_TREE &&
                             dpm_v1_Metric_PRECISION == (int)DPM_METRIC_PRECISION)
                                ? 1
                                : -1];
/* dpm_report_decode zeroes the header up to the body union, which_body included. */
typedef char body_last[offsetof(dpm_v1_Report, which_body) < offsetof(dpm_v1_Report, body) &&
                               offsetof(dpm_v1_Report, body) + sizeof(((dpm_v1_Report *)0)->body) ==
                                   sizeof(dpm_v1_Report)
                           ? 1
                           : -1];
/* report.h's bound on the FedAUC report: header, 1 tag + 1 length byte, the body at its largest. */
typedef char
    report_fits_fedauc[43u + 2u + dpm_v1_FedaucBody_size == DPM_REPORT_FEDAUC_MAX &&
                               (!DPM_MECH_FEDAUC || DPM_REPORT_FEDAUC_MAX <= DPM_REPORT_MAX_BYTES)
                           ? 1
                           : -1];

/* Encoding writes the Report field by field with nanopb's primitives, exactly as pb_encode
 * writes a whole dpm_v1_Report (proto3: zero scalars omitted, the fixed-length id always, the
 * oneof body always), so that only the one body's wire struct is on the stack: a dpm_v1_Report
 * holds a union of every body (about 2 KB, the dpauc lists) whatever the build. Each body kind
 * has its own entry (report/report_internal.h), so the device's report call of one kind reaches
 * that body's encoder only (make size's call graph charges it nothing else). The golden vectors
 * (tests/vectors) check the bytes. */

/* A proto3 uint32 / enum field: omitted when 0. */
static bool put_varint(pb_ostream_t *s, uint32_t tag, uint32_t v)
{
    return v == 0 || (pb_encode_tag(s, PB_WT_VARINT, tag) && pb_encode_varint(s, v));
}

/* The field numbers written by hand must be those of the generated descriptor. */
typedef char header_tags[(dpm_v1_Report_report_id_tag == 1 && dpm_v1_Report_campaign_id_tag == 2 &&
                          dpm_v1_Report_period_tag == 3 && dpm_v1_Report_mechanism_tag == 4 &&
                          dpm_v1_Report_eps_q16_tag == 5 && dpm_v1_Report_params_hash_tag == 6)
                             ? 1
                             : -1];

/* Fields 1-6 of *r. */
static DPM_NOINLINE bool put_header(pb_ostream_t *s, const dpm_report_t *r)
{
    return pb_encode_tag(s, PB_WT_STRING, dpm_v1_Report_report_id_tag) &&
           pb_encode_string(s, r->report_id, DPM_REPORT_ID_BYTES) &&
           put_varint(s, dpm_v1_Report_campaign_id_tag, r->campaign_id) &&
           put_varint(s, dpm_v1_Report_period_tag, r->period) &&
           put_varint(s, dpm_v1_Report_mechanism_tag, (uint32_t)r->mechanism) &&
           put_varint(s, dpm_v1_Report_eps_q16_tag, r->eps) &&
           (r->params_hash == 0 || (pb_encode_tag(s, PB_WT_32BIT, dpm_v1_Report_params_hash_tag) &&
                                    pb_encode_fixed32(s, &r->params_hash)));
}

/* The arguments every entry needs (the body's own checks come before anything is written). */
static int args_ok(const dpm_report_t *r, const uint8_t *buf, const size_t *len)
{
    return r != NULL && buf != NULL && len != NULL;
}

/* An entry's status once it wrote the header and the body into s (written: both fitted). */
static dpm_status_t finish(const pb_ostream_t *s, bool written, size_t *len)
{
    if (!written) {
        return DPM_ERR_BUFFER;
    }
    *len = s->bytes_written;
    return DPM_OK;
}

/* One entry per body kind, each calling its own body's codec directly (its stack and make
 * size's call graph are its own). */
#define ENCODE_KIND(kind)                                                                          \
    dpm_status_t dpm_report_encode_##kind(const dpm_report_t *r, uint8_t *buf, size_t cap,         \
                                          size_t *len)                                             \
    {                                                                                              \
        if (!args_ok(r, buf, len) || !dpm_##kind##_body_ok(r)) {                                   \
            return DPM_ERR_PARAM;                                                                  \
        }                                                                                          \
        pb_ostream_t s = pb_ostream_from_buffer(buf, cap);                                         \
        return finish(&s, put_header(&s, r) && dpm_##kind##_put_body(&s, r), len);                 \
    }
ENCODE_KIND(tuple)
ENCODE_KIND(roc_hist)
ENCODE_KIND(dpauc)
ENCODE_KIND(ustat)
ENCODE_KIND(fedauc)

dpm_status_t dpm_report_encode(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    if (!args_ok(r, buf, len) || !dpm_mech_body_ok(r)) {
        return DPM_ERR_PARAM; /* not a mechanism of this build, or a bad body: nothing written */
    }
    pb_ostream_t s = pb_ostream_from_buffer(buf, cap);
    return finish(&s, put_header(&s, r) && dpm_mech_put_body(&s, r), len);
}

dpm_status_t dpm_report_decode(const uint8_t *buf, size_t len, dpm_report_t *out)
{
    if (buf == NULL || out == NULL) {
        return DPM_ERR_PARAM;
    }
    /* The header fields start zeroed, which is every proto3 default: NOINIT skips nanopb's
     * second pass over the descriptor to set them (a sixth of a simulated device's cost, dpm-sim
     * bench). The body union (2 KB: the dpauc lists) is not zeroed here: which_body = 0 makes
     * nanopb zero the member it decodes into first (a oneof submessage whose tag differs from
     * which_body), and only that member is read below. Zeroing all of it was a tenth of a
     * simulated device's time. */
    dpm_v1_Report msg;
    memset(&msg, 0, offsetof(dpm_v1_Report, body));
    pb_istream_t in = pb_istream_from_buffer(buf, len);
    if (!pb_decode_ex(&in, dpm_v1_Report_fields, &msg, PB_DECODE_NOINIT) || in.bytes_left != 0) {
        return DPM_ERR_PROTOCOL;
    }
    /* The body must be well formed, the kind its mechanism field names (so the union member that
     * the mechanism selects is the one filled), and one this build can hold. */
    if (!dpm_mech_wire_fits(&msg)) {
        return DPM_ERR_PROTOCOL;
    }
    /* Every check is done: fill *out directly (no second report-sized copy on the stack). */
    memset(out, 0, sizeof(*out));
    memcpy(out->report_id, msg.report_id, DPM_REPORT_ID_BYTES);
    out->campaign_id = msg.campaign_id;
    out->period = msg.period;
    out->mechanism = (dpm_mech_id_t)msg.mechanism;
    out->eps = msg.eps_q16;
    out->params_hash = msg.params_hash;
    dpm_mech_wire_read(&msg, out);
    return DPM_OK;
}
