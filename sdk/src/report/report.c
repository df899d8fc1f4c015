/* SPDX-License-Identifier: Apache-2.0 */
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
typedef char roc_ids_match[dpm_v1_Mechanism_ROC_HIST == (int)DPM_MECH_ID_ROC_HIST ? 1 : -1];
/* The wire arrays hold at least DPM_MAX_BINS values (dpm.options bounds them to 64). */
typedef char roc_pos_fit[DPM_ARRAY_LEN(((dpm_v1_RocHistBody *)0)->pos) >= DPM_MAX_BINS ? 1 : -1];
typedef char roc_neg_fit[DPM_ARRAY_LEN(((dpm_v1_RocHistBody *)0)->neg) >= DPM_MAX_BINS ? 1 : -1];
/* report.h's bound covers the tuple body too: header, 1 tag + 1 length byte, the body. */
typedef char report_fits_tuple[43u + 2u + dpm_v1_TupleBody_size <= DPM_REPORT_MAX_BYTES ? 1 : -1];

dpm_status_t dpm_report_encode(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len)
{
    if (r == NULL || buf == NULL || len == NULL || r->tuple.nmetrics > DPM_TUPLE_MAX_METRICS) {
        return DPM_ERR_PARAM;
    }
    int roc = r->mechanism == DPM_MECH_ID_ROC_HIST;
    if (roc && (r->roc_hist.bins < 2 || r->roc_hist.bins > DPM_MAX_BINS)) {
        return DPM_ERR_PARAM;
    }
    dpm_v1_Report msg = dpm_v1_Report_init_zero;
    memcpy(msg.report_id, r->report_id, DPM_REPORT_ID_BYTES);
    msg.campaign_id = r->campaign_id;
    msg.period = r->period;
    msg.mechanism = (dpm_v1_Mechanism)r->mechanism;
    msg.eps_q16 = r->eps;
    msg.params_hash = r->params_hash;
    if (roc) {
        msg.which_body = dpm_v1_Report_roc_hist_tag;
        msg.body.roc_hist.pos_count = (pb_size_t)r->roc_hist.bins;
        msg.body.roc_hist.neg_count = (pb_size_t)r->roc_hist.bins;
        memcpy(msg.body.roc_hist.pos, r->roc_hist.pos, r->roc_hist.bins * sizeof(int32_t));
        memcpy(msg.body.roc_hist.neg, r->roc_hist.neg, r->roc_hist.bins * sizeof(int32_t));
    } else {
        msg.which_body = dpm_v1_Report_tuple_tag;
        msg.body.tuple.group = r->tuple.group;
        msg.body.tuple.values_count = (pb_size_t)r->tuple.nmetrics;
        for (uint32_t i = 0; i < r->tuple.nmetrics; i++) {
            msg.body.tuple.values[i] = r->tuple.value[i];
        }
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
        (msg.which_body != dpm_v1_Report_tuple_tag &&
         msg.which_body != dpm_v1_Report_roc_hist_tag)) {
        return DPM_ERR_PROTOCOL;
    }
    if (msg.which_body == dpm_v1_Report_roc_hist_tag &&
        (msg.body.roc_hist.pos_count != msg.body.roc_hist.neg_count ||
         msg.body.roc_hist.pos_count < 2 || msg.body.roc_hist.pos_count > DPM_MAX_BINS)) {
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
    if (msg.which_body == dpm_v1_Report_roc_hist_tag) {
        out->roc_hist.bins = msg.body.roc_hist.pos_count;
        memcpy(out->roc_hist.pos, msg.body.roc_hist.pos, out->roc_hist.bins * sizeof(int32_t));
        memcpy(out->roc_hist.neg, msg.body.roc_hist.neg, out->roc_hist.bins * sizeof(int32_t));
    } else {
        out->tuple.group = msg.body.tuple.group;
        out->tuple.nmetrics = msg.body.tuple.values_count;
        for (uint32_t i = 0; i < out->tuple.nmetrics; i++) {
            out->tuple.value[i] = msg.body.tuple.values[i];
        }
    }
    return DPM_OK;
}

/* The part every report shares, after the body: st is the body's status (nothing more is drawn
 * when it failed), then the 16-byte report id (two 64-bit draws, so the order of random draws is
 * body first, then id) and the header from the mechanism; *out is written only on success. */
static dpm_status_t report_finish(const dpm_mech_t *m, dpm_rand_t *r, uint32_t period,
                                  dpm_status_t st, dpm_report_t *rep, dpm_report_t *out)
{
    for (int half = 0; half < 2 && st == DPM_OK; half++) {
        uint64_t w = 0;
        st = dpm_rand_bits(r, 64, &w);
        for (int i = 0; i < 8; i++) {
            rep->report_id[half * 8 + i] = (uint8_t)(w >> (8 * i));
        }
    }
    if (st != DPM_OK) {
        return st;
    }
    rep->campaign_id = m->campaign.id;
    rep->period = period;
    rep->mechanism = m->campaign.mechanism;
    rep->eps = m->eps_implemented;
    rep->params_hash = m->params_hash;
    *out = *rep;
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
    return report_finish(m, r, period, st, &rep, out);
}

dpm_status_t dpm_mech_report_roc_hist(const dpm_mech_t *m, dpm_rand_t *r, uint32_t period,
                                      const dpm_score_hist_t *h, dpm_report_t *out)
{
    if (m == NULL || r == NULL || h == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_ROC_HIST) {
        return DPM_ERR_PARAM;
    }
    dpm_report_t rep;
    memset(&rep, 0, sizeof(rep));
    dpm_status_t st = dpm_roc_hist_perturb(&m->roc_hist, r, h, &rep.roc_hist);
    return report_finish(m, r, period, st, &rep, out);
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
    if (m->campaign.mechanism == DPM_MECH_ID_ROC_HIST) {
        if (r->roc_hist.bins != m->roc_hist.bins) {
            return reject(reason, "wrong number of bins");
        }
        for (uint32_t b = 0; b < r->roc_hist.bins; b++) {
            if (r->roc_hist.pos[b] == INT32_MIN || r->roc_hist.neg[b] == INT32_MIN) {
                return reject(reason, "value out of range");
            }
        }
        return DPM_OK;
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
