/* SPDX-License-Identifier: Apache-2.0 */
/* Reports on the wire: the header, and each body through its mechanism's codec (mech_ops.h). */
#include "dpm_internal.h"

#include "core/wire.h"

#include <pb_decode.h>

#include "dpm.pb.h"
#include "dpm/expert/report.h"
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

/* Encoding writes the Report field by field, exactly as pb_encode writes a whole dpm_v1_Report
 * (proto3: zero scalars omitted, the fixed-length id always, the oneof body always), straight
 * into the caller's buffer (core/wire.h): every layout is fixed, so no descriptor walk, no
 * stream and no body struct on the stack (a dpm_v1_Report holds a union of every body, about
 * 2 KB). Each body kind has its own entry (report/report_internal.h), so the device's report
 * call of one kind reaches that body's writer only (make size's call graph charges it nothing
 * else). The golden vectors (tests/vectors) and test_report_encoder, against pb_encode on
 * random reports of every kind, check the bytes. */

/* The field numbers written by hand must be those of the generated descriptor. */
typedef char header_tags[(dpm_v1_Report_report_id_tag == 1 && dpm_v1_Report_campaign_id_tag == 2 &&
                          dpm_v1_Report_period_tag == 3 && dpm_v1_Report_mechanism_tag == 4 &&
                          dpm_v1_Report_eps_q16_tag == 5 && dpm_v1_Report_params_hash_tag == 6)
                             ? 1
                             : -1];

/* Fields 1-6 of *r. */
static void put_header(dpm_wire_t *w, const dpm_report_t *r)
{
    dpm_wire_fixed_bytes_field(w, dpm_v1_Report_report_id_tag, r->report_id, DPM_REPORT_ID_BYTES);
    dpm_wire_uint_field(w, dpm_v1_Report_campaign_id_tag, r->campaign_id);
    dpm_wire_uint_field(w, dpm_v1_Report_period_tag, r->period);
    dpm_wire_uint_field(w, dpm_v1_Report_mechanism_tag, (uint32_t)r->mechanism);
    dpm_wire_uint_field(w, dpm_v1_Report_eps_q16_tag, r->eps);
    dpm_wire_fixed32_field(w, dpm_v1_Report_params_hash_tag, r->params_hash);
}

/* The arguments every entry needs (the body's own checks come before anything is written). */
static int args_ok(const dpm_report_t *r, const uint8_t *buf, const size_t *len)
{
    return r != NULL && buf != NULL && len != NULL;
}

/* An entry's status once it wrote the header and the body into w (from buf). */
static dpm_status_t finish(const dpm_wire_t *w, const uint8_t *buf, size_t *len)
{
    if (!w->ok) {
        return DPM_ERR_BUFFER;
    }
    *len = (size_t)(w->p - buf);
    return DPM_OK;
}

/* One entry per body kind, each calling its own body's writer directly, never through a
 * pointer (its stack and make size's call graph are its own). */
#define ENCODE_KIND(kind)                                                                          \
    dpm_status_t dpm_report_encode_##kind(const dpm_report_t *r, uint8_t *buf, size_t cap,         \
                                          size_t *len)                                             \
    {                                                                                              \
        if (!args_ok(r, buf, len) || !dpm_##kind##_body_ok(r)) {                                   \
            return DPM_ERR_PARAM;                                                                  \
        }                                                                                          \
        dpm_wire_t w = dpm_wire_to(buf, cap);                                                      \
        put_header(&w, r);                                                                         \
        dpm_##kind##_write_body(&w, r);                                                            \
        return finish(&w, buf, len);                                                               \
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
    dpm_wire_t w = dpm_wire_to(buf, cap);
    put_header(&w, r);
    dpm_mech_write_body(&w, r);
    return finish(&w, buf, len);
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
