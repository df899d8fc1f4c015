/* SPDX-License-Identifier: Apache-2.0 */
#include "aggregator/job.h"

#include <stdlib.h>
#include <string.h>

int agg_role_init(agg_role_t *r, const dpm_dap_task_t *t, uint8_t role,
                  const dpm_dap_hpke_key_t *key,
                  const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES])
{
    if (r == NULL || t == NULL || key == NULL || verify_key == NULL || t->vdaf.ops == NULL ||
        (role != DPM_DAP_ROLE_LEADER && role != DPM_DAP_ROLE_HELPER)) {
        return -1;
    }
    memset(r, 0, sizeof(*r));
    const dpm_prio3_t *v = &t->vdaf;
    r->task = t;
    r->role = role;
    r->key = *key;
    memcpy(r->verify_key, verify_key, DPM_PRIO3_VERIFY_KEY_BYTES);
    dpm_dap_vdaf_ctx(t, r->ctx);
    r->plain_cap = dpm_dap_report_bytes(v);
    r->plain = malloc(r->plain_cap);
    r->state = malloc(v->state_bytes + 1u);
    r->vshares = malloc(2u * v->verifier_share_bytes + 1u);
    r->msg = malloc(v->verifier_message_bytes + 1u);
    r->work = malloc(8u * (size_t)v->verify_work_words + 8u);
    size_t field = v->verifier_share_bytes > v->verifier_message_bytes ? v->verifier_share_bytes
                                                                       : v->verifier_message_bytes;
    r->pp = malloc(5u + field);
    if (r->plain == NULL || r->state == NULL || r->vshares == NULL || r->msg == NULL ||
        r->work == NULL || r->pp == NULL) {
        agg_role_free(r);
        return -1;
    }
    return 0;
}

void agg_role_free(agg_role_t *r)
{
    if (r == NULL) {
        return;
    }
    if (r->plain != NULL) { /* the last opened input share and its state: secret-shared data */
        memset(r->plain, 0, r->plain_cap);
    }
    if (r->state != NULL && r->task != NULL) {
        memset(r->state, 0, r->task->vdaf.state_bytes);
    }
    free(r->plain);
    free(r->state);
    free(r->vshares);
    free(r->msg);
    free(r->work);
    free(r->pp);
    memset(r, 0, sizeof(*r));
}

uint8_t agg_upload_check(const dpm_dap_task_t *t, const dpm_dap_report_view_t *r,
                         uint8_t key_config_id, uint64_t now_s, uint64_t skew_s)
{
    if (r->share[0].config_id != key_config_id) {
        return DAP_REPORT_ERROR_OUTDATED_CONFIG;
    }
    if (t->has_interval &&
        (r->time < t->interval_start || r->time - t->interval_start >= t->interval_duration)) {
        return DAP_REPORT_ERROR_REPORT_DROPPED;
    }
    /* too early: later than (now + skew), both rounded down to the task's precision */
    uint64_t limit = (now_s / t->time_precision) + (skew_s / t->time_precision);
    if (r->time > limit) {
        return DAP_REPORT_ERROR_REPORT_TOO_EARLY;
    }
    if (r->public_extensions.len != 0) {
        return DAP_REPORT_ERROR_INVALID_MESSAGE;
    }
    return 0;
}

/* A ping-pong message with one field: type, then opaque field<0..2^32-1>. */
static size_t pp_write(uint8_t type, const uint8_t *field, size_t len, uint8_t *out)
{
    out[0] = type;
    for (unsigned i = 0; i < 4; i++) {
        out[1 + i] = (uint8_t)(len >> (8u * (3u - i)));
    }
    if (len > 0) {
        memcpy(out + 5, field, len);
    }
    return 5u + len;
}

/* Its field when msg is exactly a ping-pong message of that type with one field of want_len
 * bytes; else NULL. */
static const uint8_t *pp_read(dpm_span_t msg, uint8_t type, size_t want_len)
{
    if (msg.len != 5u + want_len || msg.p[0] != type) {
        return NULL;
    }
    uint64_t len = 0;
    for (unsigned i = 0; i < 4; i++) {
        len = (len << 8) | msg.p[1 + i];
    }
    return len == want_len ? msg.p + 5 : NULL;
}

static dpm_status_t fail(dpm_status_t st, uint8_t *report_error)
{
    if (report_error != NULL) {
        *report_error = dpm_dap_report_error(st);
    }
    return st;
}

/* Open this role's input share of report view rv and run verify_init: state and the verifier
 * share (into r->vshares at this role's slot). */
static dpm_status_t open_and_init(agg_role_t *r, const dpm_dap_report_view_t *rv)
{
    const dpm_prio3_t *v = &r->task->vdaf;
    dpm_span_t ext, share;
    dpm_status_t st = dpm_dap_open_input_share(r->task, r->role, &r->key, 1, rv, r->plain,
                                               r->plain_cap, &ext, &share, NULL);
    if (st == DPM_OK && (ext.len != 0 || rv->public_extensions.len != 0)) {
        st = DPM_ERR_PROTOCOL; /* this task knows no report extension */
    }
    if (st == DPM_OK) {
        uint32_t agg_id = r->role == DPM_DAP_ROLE_LEADER ? 0u : 1u;
        st = dpm_prio3_verify_init(v, r->verify_key, r->ctx, sizeof(r->ctx), agg_id, rv->report_id,
                                   rv->public_share.p, rv->public_share.len, share.p, share.len,
                                   r->state, v->state_bytes,
                                   r->vshares + (size_t)agg_id * v->verifier_share_bytes,
                                   v->verifier_share_bytes, r->work, v->verify_work_words);
    }
    return st;
}

dpm_status_t agg_role_leader_init(agg_role_t *r, const uint8_t *report, size_t len, uint8_t *state,
                                  uint8_t *out, size_t cap, size_t *out_len, uint8_t *report_error)
{
    if (report_error != NULL) {
        *report_error = 0;
    }
    if (r == NULL || r->role != DPM_DAP_ROLE_LEADER || report == NULL || state == NULL ||
        out == NULL || out_len == NULL) {
        return DPM_ERR_PARAM;
    }
    const dpm_prio3_t *v = &r->task->vdaf;
    dpm_dap_report_view_t rv;
    dpm_status_t st = dpm_dap_report_decode(report, len, &rv, NULL);
    if (st == DPM_OK) {
        st = open_and_init(r, &rv);
    }
    if (st != DPM_OK) {
        return fail(st == DPM_ERR_PARAM ? DPM_ERR_PROTOCOL : st, report_error);
    }
    /* the helper's share travels as it came: its ciphertext and tag are one payload */
    dap_verify_init_t vi;
    memset(&vi, 0, sizeof(vi));
    vi.report_share.metadata.report_id = rv.report_id;
    vi.report_share.metadata.time = rv.time;
    vi.report_share.metadata.public_ext.bytes = rv.public_extensions;
    vi.report_share.public_share = rv.public_share;
    vi.report_share.share.config_id = rv.share[1].config_id;
    vi.report_share.share.enc.p = rv.share[1].enc;
    vi.report_share.share.enc.len = DPM_HPKE_NENC;
    vi.report_share.share.payload.p = rv.share[1].ciphertext.p;
    vi.report_share.share.payload.len = rv.share[1].ciphertext.len + DPM_HPKE_NT;
    vi.payload.p = r->pp;
    vi.payload.len = pp_write(AGG_PP_INITIALIZE, r->vshares, v->verifier_share_bytes, r->pp);
    st = dap_msg_verify_init_encode(&vi, out, cap, out_len);
    if (st == DPM_OK) {
        memcpy(state, r->state, v->state_bytes);
    }
    return st;
}

/* The helper's VerifyResp: reject with code, or continue with finish(msg). */
static dpm_status_t helper_resp(const uint8_t *report_id, uint8_t code, const uint8_t *msg,
                                size_t msg_len, uint8_t *pp, uint8_t *out, size_t cap,
                                size_t *out_len)
{
    dap_verify_resp_t vr;
    memset(&vr, 0, sizeof(vr));
    vr.report_id = report_id;
    if (code != 0) {
        vr.type = DAP_VERIFY_REJECT;
        vr.report_error = code;
    } else {
        vr.type = DAP_VERIFY_CONTINUE;
        vr.payload.p = pp;
        vr.payload.len = pp_write(AGG_PP_FINISH, msg, msg_len, pp);
    }
    return dap_msg_verify_resp_encode(&vr, out, cap, out_len);
}

dpm_status_t agg_role_helper_init(agg_role_t *r, const dap_verify_init_t *vi, uint8_t *out_share,
                                  int *finished, uint8_t *out, size_t cap, size_t *out_len)
{
    if (r == NULL || r->role != DPM_DAP_ROLE_HELPER || vi == NULL || out_share == NULL ||
        finished == NULL || out == NULL || out_len == NULL) {
        return DPM_ERR_PARAM;
    }
    *finished = 0;
    const dpm_prio3_t *v = &r->task->vdaf;
    const dap_report_share_t *rs = &vi->report_share;
    /* the report as dpm_dap_open_input_share reads it: InputShareAad's tail is the ReportShare's
     * metadata and public share, back to back in its encoding */
    dpm_dap_report_view_t rv;
    memset(&rv, 0, sizeof(rv));
    rv.report_id = rs->metadata.report_id;
    rv.time = rs->metadata.time;
    rv.public_extensions = rs->metadata.public_ext.bytes;
    rv.public_share = rs->public_share;
    rv.aad_tail.p = rs->metadata.report_id;
    rv.aad_tail.len = (size_t)(rs->public_share.p + rs->public_share.len - rs->metadata.report_id);
    dpm_status_t st = DPM_OK;
    if (rs->share.enc.len != DPM_HPKE_NENC || rs->share.payload.len < DPM_HPKE_NT) {
        st = DPM_ERR_PROTOCOL;
    } else {
        rv.share[1].config_id = rs->share.config_id;
        rv.share[1].enc = rs->share.enc.p;
        rv.share[1].ciphertext.p = rs->share.payload.p;
        rv.share[1].ciphertext.len = rs->share.payload.len - DPM_HPKE_NT;
        rv.share[1].tag = rs->share.payload.p + rv.share[1].ciphertext.len;
        st = open_and_init(r, &rv);
    }
    const uint8_t *leader_share = NULL;
    if (st == DPM_OK) {
        leader_share = pp_read(vi->payload, AGG_PP_INITIALIZE, v->verifier_share_bytes);
        st = leader_share != NULL ? DPM_OK : DPM_ERR_PROTOCOL;
    }
    if (st == DPM_OK) {
        memcpy(r->vshares, leader_share, v->verifier_share_bytes);
        st = dpm_prio3_verifier_shares_to_message(
            v, r->ctx, sizeof(r->ctx), r->vshares, 2u * v->verifier_share_bytes, r->msg,
            v->verifier_message_bytes, r->work, v->verify_work_words);
    }
    if (st == DPM_OK) {
        st = dpm_prio3_verify_next(v, r->state, v->state_bytes, r->msg, v->verifier_message_bytes,
                                   out_share, v->out_share_bytes);
    }
    uint8_t code = st == DPM_OK ? 0u : dpm_dap_report_error(st);
    dpm_status_t wst = helper_resp(rs->metadata.report_id, code, r->msg, v->verifier_message_bytes,
                                   r->pp, out, cap, out_len);
    if (wst != DPM_OK) {
        return wst;
    }
    *finished = code == 0;
    return DPM_OK;
}

dpm_status_t agg_role_leader_finish(agg_role_t *r, uint8_t *state, const dap_verify_resp_t *vr,
                                    uint8_t *out_share, uint8_t *report_error)
{
    if (report_error != NULL) {
        *report_error = 0;
    }
    if (r == NULL || r->role != DPM_DAP_ROLE_LEADER || state == NULL || vr == NULL ||
        out_share == NULL) {
        return DPM_ERR_PARAM;
    }
    const dpm_prio3_t *v = &r->task->vdaf;
    if (vr->type == DAP_VERIFY_REJECT) {
        if (report_error != NULL) {
            *report_error = vr->report_error;
        }
        return DPM_ERR_VERIFY;
    }
    const uint8_t *msg = vr->type == DAP_VERIFY_CONTINUE
                             ? pp_read(vr->payload, AGG_PP_FINISH, v->verifier_message_bytes)
                             : NULL;
    if (msg == NULL) { /* a one-round VDAF's helper answers finish(message), nothing else */
        return fail(DPM_ERR_PROTOCOL, report_error);
    }
    dpm_status_t st = dpm_prio3_verify_next(
        v, state, v->state_bytes, msg, v->verifier_message_bytes, out_share, v->out_share_bytes);
    return st == DPM_OK ? DPM_OK : fail(st, report_error);
}
