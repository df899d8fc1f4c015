/* Reports: nanopb encode/decode, the mechanism fingerprint, and the collector-side check. */
#include "dpm_internal.h"

#include <pb_decode.h>
#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/report.h"

/* The wire enums and the SDK's must agree value for value. */
typedef char mech_ids_match[(dpm_v1_Mechanism_TUPLE_MR == (int)DPM_MECH_ID_TUPLE_MR &&
                             dpm_v1_Mechanism_TUPLE_ML == (int)DPM_MECH_ID_TUPLE_ML &&
                             dpm_v1_Metric_PRECISION == (int)DPM_METRIC_PRECISION)
                                ? 1
                                : -1];
typedef char
    values_fit[DPM_ARRAY_LEN(((dpm_v1_TupleBody *)0)->values) >= DPM_TUPLE_MAX_METRICS ? 1 : -1];
typedef char report_fits[dpm_v1_Report_size <= DPM_REPORT_MAX_BYTES ? 1 : -1];

dpm_status_t dpm_report_encode(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    if (r == NULL || buf == NULL || len == NULL || r->tuple.nmetrics > DPM_TUPLE_MAX_METRICS) {
        return DPM_ERR_PARAM;
    }
    dpm_v1_Report msg = dpm_v1_Report_init_zero;
    memcpy(msg.report_id, r->report_id, DPM_REPORT_ID_BYTES);
    msg.campaign_id = r->campaign_id;
    msg.period = r->period;
    msg.mechanism = (dpm_v1_Mechanism)r->mechanism;
    msg.eps_q16 = r->eps;
    msg.params_hash = r->params_hash;
    msg.which_body = dpm_v1_Report_tuple_tag;
    msg.body.tuple.group = r->tuple.group;
    msg.body.tuple.values_count = (pb_size_t)r->tuple.nmetrics;
    for (uint32_t i = 0; i < r->tuple.nmetrics; i++) {
        msg.body.tuple.values[i] = r->tuple.value[i];
    }
    pb_ostream_t out = pb_ostream_from_buffer(buf, cap);
    if (!pb_encode(&out, dpm_v1_Report_fields, &msg)) {
        return DPM_ERR_BUFFER;
    }
    *len = out.bytes_written;
    return DPM_OK;
}

dpm_status_t dpm_report_decode(const uint8_t *buf, size_t len, dpm_report_t *out)
{
    if (buf == NULL || out == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_v1_Report msg = dpm_v1_Report_init_zero;
    pb_istream_t in = pb_istream_from_buffer(buf, len);
    if (!pb_decode(&in, dpm_v1_Report_fields, &msg) || in.bytes_left != 0 ||
        msg.which_body != dpm_v1_Report_tuple_tag) {
        return DPM_ERR_PROTOCOL;
    }
    dpm_report_t r;
    memset(&r, 0, sizeof(r));
    memcpy(r.report_id, msg.report_id, DPM_REPORT_ID_BYTES);
    r.campaign_id = msg.campaign_id;
    r.period = msg.period;
    r.mechanism = (dpm_mech_id_t)msg.mechanism;
    r.eps = msg.eps_q16;
    r.params_hash = msg.params_hash;
    r.tuple.group = msg.body.tuple.group;
    r.tuple.nmetrics = msg.body.tuple.values_count;
    for (uint32_t i = 0; i < r.tuple.nmetrics; i++) {
        r.tuple.value[i] = msg.body.tuple.values[i];
    }
    *out = r;
    return DPM_OK;
}

dpm_status_t dpm_mech_report_tuple(const dpm_mech_t *m, dpm_rand_t *r, uint32_t period,
                                   uint32_t group, const dpm_ratio_t *values, dpm_report_t *out)
{
    if (m == NULL || r == NULL || out == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_report_t rep;
    memset(&rep, 0, sizeof(rep));
    dpm_status_t st = dpm_tuple_perturb(&m->tuple, r, group, values, &rep.tuple);
    for (int half = 0; half < 2 && st == DPM_OK; half++) {
        uint64_t w = 0;
        st = dpm_rand_bits(r, 64, &w);
        for (int i = 0; i < 8; i++) {
            rep.report_id[half * 8 + i] = (uint8_t)(w >> (8 * i));
        }
    }
    if (st != DPM_OK) {
        return st;
    }
    rep.campaign_id = m->campaign.id;
    rep.period = period;
    rep.mechanism = m->campaign.mechanism;
    rep.eps = m->eps_implemented;
    rep.params_hash = m->params_hash;
    *out = rep;
    return DPM_OK;
}

static dpm_status_t reject(const char **reason, const char *why)
{
    if (reason != NULL) {
        *reason = why;
    }
    return DPM_ERR_PROTOCOL;
}

dpm_status_t dpm_mech_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason)
{
    if (m == NULL || r == NULL) {
        return DPM_ERR_PARAM;
    }
    if (r->campaign_id != m->campaign.id) {
        return reject(reason, "campaign mismatch");
    }
    if (r->mechanism != m->campaign.mechanism) {
        return reject(reason, "mechanism mismatch");
    }
    if (r->eps != m->eps_implemented) {
        return reject(reason, "epsilon mismatch");
    }
    if (r->params_hash != m->params_hash) {
        return reject(reason, "parameter fingerprint mismatch");
    }
    if (r->tuple.nmetrics != m->tuple.nmetrics) {
        return reject(reason, "wrong number of values");
    }
    if (r->tuple.group >= m->tuple.groups) {
        return reject(reason, "group out of range");
    }
    for (uint32_t i = 0; i < r->tuple.nmetrics; i++) {
        int32_t v = r->tuple.value[i];
        if (m->tuple.kind == DPM_TUPLE_MR && v != 1 && v != -1) {
            return reject(reason, "value out of range");
        }
        if (m->tuple.kind == DPM_TUPLE_ML && v == INT32_MIN) {
            return reject(reason, "value out of range");
        }
    }
    return DPM_OK;
}
