/* SPDX-License-Identifier: Apache-2.0 */
#include "aggregator/share.h"

#include <stdlib.h>
#include <string.h>

#include "dpm/port_hpke.h"

static void share_info(uint8_t role, uint8_t info[AGG_SHARE_INFO_BYTES])
{
    static const char label[] = "dap-18 aggregate share"; /* 22 bytes */
    memcpy(info, label, sizeof(label) - 1u);
    info[22] = role;
    info[23] = 0; /* the collector */
}

dpm_status_t agg_share_add_noise(const dpm_dap_task_t *t, uint64_t sensitivity, dpm_rand_t *rand,
                                 uint8_t *agg_share)
{
    if (t == NULL || rand == NULL || agg_share == NULL) {
        return DPM_ERR_PARAM;
    }
    const dpm_prio3_t *v = &t->vdaf;
    const int gauss = t->dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN;
    dpm_laplace_t lap;
    dpm_status_t st = gauss ? DPM_OK : dpm_laplace_init(&lap, sensitivity, t->central_eps);
    int64_t *noise = malloc(sizeof(int64_t) * v->output_len + 1u);
    if (noise == NULL) {
        return DPM_ERR_BUFFER;
    }
    for (uint32_t k = 0; k < v->output_len && st == DPM_OK; k++) {
        st = gauss ? dpm_dgauss(rand, t->central_sigma2, &noise[k])
                   : dpm_laplace_add(&lap, rand, 0, &noise[k]);
    }
    if (st == DPM_OK) {
        st = dpm_prio3_add_noise(v, agg_share, v->out_share_bytes, noise, v->output_len);
    }
    memset(noise, 0, sizeof(int64_t) * v->output_len); /* the noise stays the aggregator's */
    free(noise);
    return st;
}

dpm_status_t agg_share_release(const dpm_dap_task_t *t, uint8_t role,
                               const dpm_hpke_config_t *collector, uint64_t sensitivity,
                               dpm_rand_t *rand, const uint8_t *coll_req, size_t coll_req_len,
                               uint8_t *agg_share, uint8_t *enc_buf, uint8_t *payload_buf,
                               dap_hpke_ct_t *ct)
{
    if (t == NULL || agg_share == NULL) {
        return DPM_ERR_PARAM;
    }
    uint8_t ikm[32];
    dpm_status_t st = agg_share_add_noise(t, sensitivity, rand, agg_share);
    for (size_t k = 0; k < sizeof(ikm) && st == DPM_OK; k += 8) { /* the ephemeral key's seed */
        uint64_t w = 0;
        st = dpm_rand_bits(rand, 64, &w);
        for (size_t b = 0; b < 8; b++) {
            ikm[k + b] = (uint8_t)(w >> (8u * b));
        }
    }
    if (st == DPM_OK) {
        st = agg_share_seal(t, role, collector, coll_req, coll_req_len, agg_share,
                            t->vdaf.out_share_bytes, ikm, sizeof(ikm), enc_buf, payload_buf, ct);
    }
    memset(ikm, 0, sizeof(ikm));
    memset(agg_share, 0, t->vdaf.out_share_bytes);
    return st;
}

dpm_status_t agg_share_seal(const dpm_dap_task_t *t, uint8_t role,
                            const dpm_hpke_config_t *collector, const uint8_t *coll_req,
                            size_t coll_req_len, const uint8_t *agg_share, size_t len,
                            const uint8_t *ikm_e, size_t ikm_len, uint8_t *enc_buf,
                            uint8_t *payload_buf, dap_hpke_ct_t *ct)
{
    if (t == NULL || t->config == NULL || collector == NULL || coll_req == NULL ||
        (agg_share == NULL && len > 0) || ikm_e == NULL || enc_buf == NULL || payload_buf == NULL ||
        ct == NULL || (role != DPM_DAP_ROLE_LEADER && role != DPM_DAP_ROLE_HELPER) ||
        dpm_hpke_config_check(collector, NULL) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    uint8_t info[AGG_SHARE_INFO_BYTES];
    share_info(role, info);
    dpm_hpke_ctx_t ctx;
    dpm_status_t st = dpm_hpke_setup_base_s(collector->aead_id, collector->public_key, ikm_e,
                                            ikm_len, info, sizeof(info), enc_buf, &ctx);
    if (st != DPM_OK) {
        return st;
    }
    const dpm_span_t aad[3] = {
        {t->id, DPM_DAP_TASK_ID_BYTES}, {t->config, t->config_len}, {coll_req, coll_req_len}};
    if (len > 0) {
        memcpy(payload_buf, agg_share, len);
    }
    st = dpm_hpke_ctx_seal(&ctx, aad, 3, payload_buf, len, payload_buf + len);
    dpm_hpke_ctx_wipe(&ctx);
    if (st != DPM_OK) {
        return st;
    }
    ct->config_id = collector->id;
    ct->enc.p = enc_buf;
    ct->enc.len = DPM_HPKE_NENC;
    ct->payload.p = payload_buf;
    ct->payload.len = len + DPM_HPKE_NT;
    return DPM_OK;
}

dpm_status_t agg_share_open(const dpm_dap_task_t *t, uint8_t role,
                            const dpm_dap_hpke_key_t *collector_key, const uint8_t *coll_req,
                            size_t coll_req_len, const dap_hpke_ct_t *ct, uint8_t *agg_share,
                            size_t len)
{
    if (t == NULL || t->config == NULL || collector_key == NULL || coll_req == NULL || ct == NULL ||
        (agg_share == NULL && len > 0) ||
        (role != DPM_DAP_ROLE_LEADER && role != DPM_DAP_ROLE_HELPER)) {
        return DPM_ERR_PARAM;
    }
    if (ct->config_id != collector_key->config_id || ct->enc.len != DPM_HPKE_NENC ||
        ct->payload.len != len + DPM_HPKE_NT) {
        return DPM_ERR_PROTOCOL;
    }
    uint8_t info[AGG_SHARE_INFO_BYTES];
    share_info(role, info);
    dpm_hpke_ctx_t ctx;
    dpm_status_t st = dpm_hpke_setup_base_r(collector_key->aead_id, ct->enc.p, &collector_key->kp,
                                            info, sizeof(info), &ctx);
    if (st != DPM_OK) {
        return st;
    }
    const dpm_span_t aad[3] = {
        {t->id, DPM_DAP_TASK_ID_BYTES}, {t->config, t->config_len}, {coll_req, coll_req_len}};
    if (len > 0) {
        memcpy(agg_share, ct->payload.p, len);
    }
    st = dpm_hpke_ctx_open(&ctx, aad, 3, agg_share, len, ct->payload.p + len);
    dpm_hpke_ctx_wipe(&ctx);
    return st;
}
